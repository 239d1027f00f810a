/* The inline f32 math functions on C values (see math_reference.h): the
 * entry points of the algorithms written once in math_algorithms.c, and
 * the C of sin, cos and tan, which the code generators still transcribe.
 *
 * Rules this file keeps, so that a transcription into SIMD lanes or PTX
 * threads computes the same bits:
 *   - no branches on data: both sides are computed, select_* picks one
 *     (a blend or a predicated move);
 *   - min_f32(a, b) is "a < b ? a : b", which is what minps does, so a NaN
 *     in a gives b; NaN inputs are fixed by a final select;
 *   - fmaf is one fused multiply-add (vfmadd / fma.rn.f32);
 *   - integers are 32-bit lanes ("int", uint32_t; ">>" of a negative int
 *     is the arithmetic shift, vpsrad / shr.s32), except the 64-bit
 *     products and sums of sin/cos/tan's Payne-Hanek reduction;
 *   - sqrtf is the hardware square root (sqrtps / sqrt.rn.f32), not libm;
 *   - round to nearest, subnormals kept: no FTZ/DAZ, no .ftz or .approx.
 *
 * The coefficient tables are in math_tables.c, declared in the header,
 * so that an emitter loads these very numbers. */
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
static int select_i32(int mask, int a, int b) { return mask ? a : b; }
static float abs_f32(float x) { return f32_from_bits(bits_from_f32(x) & 0x7fffffffu); }
static int is_nan_f32(float x) { return x != x; }

/* x with the sign bit of s (an and, an and, an or). */
static float copysign_f32(float x, float s) {
  return f32_from_bits((bits_from_f32(x) & 0x7fffffffu) | (bits_from_f32(s) & 0x80000000u));
}

static float quiet_nan_f32(void) { return f32_from_bits(0x7fc00000u); }

/* Horner's rule, one FMA per coefficient: c[0] + c[1] v + ... */
static float polynomial_f32(const float *c, int count, float v) {
  float p = c[count - 1];
  for (int k = count - 2; k >= 0; k--) p = fmaf(p, v, c[k]);
  return p;
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

/* ---- sin, cos, tan ---- */

/* The three tables below are fitted on |r| <= 1.015 pi/4, a margin for
 * an r that rounding leaves a hair past pi/4. */

/* Cody-Waite, for |x| < MATHREF_TRIG_SMALL_LIMIT. n: the FMA rounds
 * x (2/pi rounded to f32) to an integer, which can land on the wrong side
 * of a half (2/pi in f32 is off by 2^-25 relative); a rough r from two
 * parts of pi/2 shows it, and n moves by one. Then r = x - n pi/2 as
 * hi + lo: r1 = x - n PIO2_1 is exact inside the FMA; r1 - n PIO2_2 is
 * formed exactly from n PIO2_2 = p + pe (an FMA) and r1 - p = s + se
 * (Knuth's two-sum); the rest joins -n PIO2_3 in lo. n times the 2^-76
 * that the three parts miss stays far below r up to the limit. The two
 * floats matter where r is tiny: its relative error becomes the error of
 * sin, and of tan's huge -1/tan(r). */
static float trig_reduce_small(float x, float *n, float *lo) {
  float q = fmaf(x, MATHREF_TWO_OVER_PI, MATHREF_ROUND_SHIFTER_F32) - MATHREF_ROUND_SHIFTER_F32;
  float rough = fmaf(q, -MATHREF_PIO2_2, fmaf(q, -MATHREF_PIO2_1, x));
  q += select_f32(rough > MATHREF_PIO4_HI, 1.0f, 0.0f);
  q -= select_f32(rough < -MATHREF_PIO4_HI, 1.0f, 0.0f);
  float r1 = fmaf(q, -MATHREF_PIO2_1, x);
  float p = q * MATHREF_PIO2_2;
  float pe = fmaf(q, MATHREF_PIO2_2, -p);
  float s = r1 - p;
  float back = s - r1;
  float se = (r1 - (s - back)) + (-p - back);
  float low = fmaf(-q, MATHREF_PIO2_3, se - pe);
  float hi = s + low;
  *lo = low - (hi - s);
  *n = q;
  return hi;
}

/* Payne-Hanek, for any finite |x| >= MATHREF_TRIG_SMALL_LIMIT: M times
 * its window of 2/pi, kept mod 2^96 (32x32->64-bit multiplies: vpmuludq,
 * mul.wide.u32), is x 2/pi mod 4 in units of 2^-94. Its top 64 bits,
 * rounded to the nearest unit, give n mod 4 (the top two bits) and the
 * fraction |f| <= 1/2 as an integer in units of 2^-62; |f| is cut into
 * three 21-bit pieces that convert to floats exactly and sum to hi + lo,
 * and times pi/2 gives r. The row is a per-lane table load (a gather); a
 * NaN or an infinity reads the last row and is fixed by the caller's
 * select. */
static float trig_reduce_large(float x, float *n, float *lo) {
  uint32_t b = bits_from_f32(x);
  int row = (int)((b >> 23) & 0xffu) - 149;
  row = select_i32(row < 0, 0, select_i32(row > 105, 105, row));
  const uint32_t *w = mathref_two_over_pi_windows[row];
  uint32_t m = (b & 0x7fffffu) | 0x800000u;
  uint64_t p2 = (uint64_t)m * w[2];
  uint64_t p1 = (uint64_t)m * w[1];
  uint64_t mid = (p2 >> 32) + (p1 & 0xffffffffu);
  uint32_t top = m * w[0] + (uint32_t)(p1 >> 32) + (uint32_t)(mid >> 32);
  uint64_t t = ((uint64_t)top << 32 | (uint32_t)mid) + (UINT64_C(1) << 61);
  uint32_t quadrant = (uint32_t)(t >> 62);
  uint64_t biased = t & ((UINT64_C(1) << 62) - 1); /* f + 2^61 */
  int f_negative = !((biased >> 61) & 1);
  uint64_t fa = f_negative ? (UINT64_C(1) << 61) - biased : biased - (UINT64_C(1) << 61);
  float v2 = (float)(int32_t)(fa >> 42) * 0x1p-20f;
  float v1 = (float)(int32_t)((fa >> 21) & 0x1fffffu) * 0x1p-41f;
  float v0 = (float)(int32_t)(fa & 0x1fffffu) * 0x1p-62f;
  float fh = v2 + v1;
  float fl = ((v2 - fh) + v1) + v0;
  float rh = fh * MATHREF_PIO2_1;
  float rl = fmaf(fh, MATHREF_PIO2_1, -rh) + fmaf(fh, MATHREF_PIO2_2, fl * MATHREF_PIO2_1);
  float hi = rh + rl;
  float low = rl - (hi - rh);
  /* x < 0 reduces as -|x|: r and n change sign. */
  int x_negative = (b >> 31) != 0;
  int negate = f_negative ^ x_negative;
  *lo = select_f32(negate, -low, low);
  *n = (float)select_i32(x_negative, (int)((4u - quadrant) & 3u), (int)quadrant);
  return select_f32(negate, -hi, hi);
}

/* x = n pi/2 + hi + lo with |hi + lo| <= pi/4, for every finite x;
 * returns hi and the quadrant n mod 4. */
static float trig_reduce(float x, int *quadrant, float *lo) {
  int small = abs_f32(x) < MATHREF_TRIG_SMALL_LIMIT;
  float n_small, lo_small, n_large, lo_large;
  float hi_small = trig_reduce_small(select_f32(small, x, 0.0f), &n_small, &lo_small);
  float hi_large = trig_reduce_large(x, &n_large, &lo_large);
  *quadrant = (int)select_f32(small, n_small, n_large) & 3;
  *lo = select_f32(small, lo_small, lo_large);
  return select_f32(small, hi_small, hi_large);
}

/* sin(hi + lo) = hi + (hi^3 S(hi^2) + lo), rounded once at the end. */
static float sin_kernel(float r, float lo) {
  float z = r * r;
  return r + fmaf(r, z * polynomial_f32(mathref_sin_table, MATHREF_SIN_COUNT, z), lo);
}

/* cos(hi + lo) = 1 + hi^2 C(hi^2); lo would change it by hi lo, which is
 * below a quarter ulp of a result of at least 0.7. */
static float cos_kernel(float r) {
  float z = r * r;
  return fmaf(z, polynomial_f32(mathref_cos_table, MATHREF_COS_COUNT, z), 1.0f);
}

static int trig_is_invalid(float x) { return is_nan_f32(x) | (abs_f32(x) == F32_INFINITY); }

/* By quadrant: sin, cos, -sin, -cos. |x| < 2^-12 returns x (keeps -0). */
float mathref_sinf(float x) {
  int quadrant;
  float lo;
  float r = trig_reduce(x, &quadrant, &lo);
  float y = select_f32(quadrant & 1, cos_kernel(r), sin_kernel(r, lo));
  y = select_f32(quadrant & 2, -y, y);
  y = select_f32(abs_f32(x) < 0x1p-12f, x, y);
  return select_f32(trig_is_invalid(x), quiet_nan_f32(), y);
}

/* By quadrant: cos, -sin, -cos, sin. */
float mathref_cosf(float x) {
  int quadrant;
  float lo;
  float r = trig_reduce(x, &quadrant, &lo);
  float y = select_f32(quadrant & 1, sin_kernel(r, lo), cos_kernel(r));
  y = select_f32((quadrant + 1) & 2, -y, y);
  return select_f32(trig_is_invalid(x), quiet_nan_f32(), y);
}

/* tan(x) = t in even quadrants and -1/t in odd ones, with
 * t = tan(hi + lo) = hi + w, w = hi^3 T(hi^2) + lo (1 + hi^2). t is kept
 * as t + t_lo (Fast2Sum, as |hi| >= |w|), and -1/t gets one correction
 * step against it: q + q (1 + q t) with q = -1/t, the residual 1 + q t
 * exact in an FMA. Without the step the reciprocal's rounding adds a
 * whole ulp to t's. */
float mathref_tanf(float x) {
  int quadrant;
  float lo;
  float r = trig_reduce(x, &quadrant, &lo);
  float z = r * r;
  float p = polynomial_f32(mathref_tan_table, MATHREF_TAN_COUNT, z);
  float w = fmaf(r, z * p, lo * fmaf(r, r, 1.0f));
  float t = r + w;
  float t_lo = w - (t - r);
  float q = -1.0f / t;
  float residual = fmaf(q, t, 1.0f) + q * t_lo;
  float y = select_f32(quadrant & 1, fmaf(q, residual, q), t);
  y = select_f32(abs_f32(x) < 0x1p-12f, x, y);
  return select_f32(trig_is_invalid(x), quiet_nan_f32(), y);
}

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
