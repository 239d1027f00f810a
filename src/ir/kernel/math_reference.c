/* The inline f32 math functions on C values (see math_reference.h): each
 * runs its algorithm (math_algorithms.c, math_algorithms_trig.c) on the C
 * values target (math_values.c), the reference the generated code must
 * match bit for bit; round half away from zero is plain C. The tables are
 * in math_tables.c. */
#include "kernel/math_reference.h"
#include "kernel/math_values.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define F32_INFINITY ((float)INFINITY)

/* ---- lane operations ---- */

static uint32_t bits_from_f32(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static float f32_from_bits(uint32_t b) {
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}

static float select_f32(int mask, float a, float b) { return mask ? a : b; }
static float abs_f32(float x) { return f32_from_bits(bits_from_f32(x) & 0x7fffffffu); }

/* x with the sign bit of s (an and, an and, an or). */
static float copysign_f32(float x, float s) {
  return f32_from_bits((bits_from_f32(x) & 0x7fffffffu) | (bits_from_f32(s) & 0x80000000u));
}

/* ---- exp, expm1 ---- */

float mathref_expf(float x) { return math_values_run_f32(math_program_exp, x); }

float mathref_expm1f(float x) { return math_values_run_f32(math_program_expm1, x); }

/* ---- log, log1p ---- */

float mathref_logf(float x) { return math_values_run_f32(math_program_log, x); }

float mathref_log1pf(float x) { return math_values_run_f32(math_program_log1p, x); }

/* ---- tanh, logistic ---- */

float mathref_tanhf(float x) { return math_values_run_f32(math_program_tanh, x); }

float mathref_logisticf(float x) { return math_values_run_f32(math_program_logistic, x); }

/* ---- erf ---- */

/* erf: math_program_erf (math_algorithms.c), run on C values. */
float mathref_erff(float x) { return math_values_run_f32(math_program_erf, x); }

/* ---- sin, cos, tan: math_algorithms_trig.c, run on C values ---- */

float mathref_sinf(float x) { return math_values_run_f32(math_program_sin, x); }

float mathref_cosf(float x) { return math_values_run_f32(math_program_cos, x); }

float mathref_tanf(float x) { return math_values_run_f32(math_program_tan, x); }

/* ---- atan2 ---- */

/* atan2: math_program_atan2 (math_algorithms.c), run on C values. */
float mathref_atan2f(float y, float x) {
  MathTarget t = math_values_target();
  return math_value_as_f32(math_program_atan2(&t, &math_format_f32, math_value_f32(y), math_value_f32(x)));
}

/* ---- pow ---- */

/* pow: math_program_pow (math_algorithms.c), run on C values. */
float mathref_powf(float x, float y) {
  MathTarget t = math_values_target();
  return math_value_as_f32(math_program_pow(&t, &math_format_f32, math_value_f32(x), math_value_f32(y)));
}

/* ---- cbrt ---- */

float mathref_cbrtf(float x) { return math_values_run_f32(math_program_cbrt, x); }

/* ---- sqrt, rsqrt ---- */

/* The hardware square root, correctly rounded: sqrtps / vsqrtps on x86,
 * sqrt.rn.f32 in PTX. */
float mathref_sqrtf(float x) { return sqrtf(x); }

/* A correctly rounded square root and a correctly rounded division
 * (vsqrtps then vdivps; sqrt.rn.f32 then div.rn.f32 in PTX), so at most
 * about one ulp. Not rsqrtps: its 12-bit estimate with one Newton step
 * would be faster but near 2 ulp, and AVX-512's rsqrt14 estimate differs
 * from SSE's, so the bits would depend on the ISA. */
float mathref_rsqrtf(float x) { return math_values_run_f32(math_program_rsqrt, x); }

/* ---- compositions: the other float unary ops of HLO ----
 * Each is written once here from the functions above; docs/math.md lists
 * the bound test_math_ulp.c measures for each. */

/* atan x = atan2(x, 1). */
float mathref_atanf(float x) { return math_values_run_f32(math_program_atan, x); }

/* asin x = atan2(x, sqrt(1 - x^2)) and acos x = atan2(sqrt(1 - x^2), x);
 * 1 - x^2 is one FMA, so it has one rounding even where it cancels (x
 * near ±1, where the result is most sensitive to it). |x| > 1 makes the
 * square root NaN, and so the result. */
float mathref_asinf(float x) { return math_values_run_f32(math_program_asin, x); }
float mathref_acosf(float x) { return math_values_run_f32(math_program_acos, x); }

float mathref_sinhf(float x) { return math_values_run_f32(math_program_sinh, x); }

float mathref_coshf(float x) { return math_values_run_f32(math_program_cosh, x); }

float mathref_asinhf(float x) { return math_values_run_f32(math_program_asinh, x); }

float mathref_acoshf(float x) { return math_values_run_f32(math_program_acosh, x); }

float mathref_atanhf(float x) { return math_values_run_f32(math_program_atanh, x); }

/* round half away from zero: the truncation, plus one away from zero
 * where the part cut off is at least 1/2. Exact; -0.3 gives -0. */
float mathref_round_afzf(float x) {
  float t = truncf(x); /* roundss with mode 11 / cvt.rzi.f32.f32 */
  float away = t + copysign_f32(1.0f, x);
  return select_f32(abs_f32(x - t) >= 0.5f, away, t);
}
