/* The inline f64 math functions on C values, as the f32 ones in
 * math_reference.c. The accuracy of each, in ulps against the C library's
 * function, is measured by tests/unit/test_math_ulp.c and listed in
 * docs/math.md. */
#include "kernel/math_reference.h"
#include "kernel/math_values.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- lane operations ---- */

static uint64_t bits_from_f64(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static double f64_from_bits(uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}

static double select_f64(int mask, double a, double b) { return mask ? a : b; }
static double abs_f64(double x) { return f64_from_bits(bits_from_f64(x) & ~(UINT64_C(1) << 63)); }

static double copysign_f64(double x, double s) {
  return f64_from_bits((bits_from_f64(x) & ~(UINT64_C(1) << 63)) | (bits_from_f64(s) & (UINT64_C(1) << 63)));
}

/* ---- exp, expm1 ---- */

double mathref_exp(double x) { return math_values_run_f64(math_program_exp, x); }

double mathref_expm1(double x) { return math_values_run_f64(math_program_expm1, x); }

/* ---- log, log1p ---- */

double mathref_log(double x) { return math_values_run_f64(math_program_log, x); }

double mathref_log1p(double x) { return math_values_run_f64(math_program_log1p, x); }

/* ---- atan2 ---- */

/* atan2: math_program_atan2 (math_algorithms.c), run on C values. */
double mathref_atan2(double y, double x) {
  MathTarget t = math_values_target();
  return math_value_as_f64(math_program_atan2(&t, &math_format_f64, math_value_f64(y), math_value_f64(x)));
}

/* ---- cbrt, rsqrt ---- */

double mathref_cbrt(double x) { return math_values_run_f64(math_program_cbrt, x); }

double mathref_rsqrt(double x) { return math_values_run_f64(math_program_rsqrt, x); }

/* ---- compositions, as the f32 ones ---- */

double mathref_atan(double x) { return math_values_run_f64(math_program_atan, x); }
double mathref_asin(double x) { return math_values_run_f64(math_program_asin, x); }
double mathref_acos(double x) { return math_values_run_f64(math_program_acos, x); }

double mathref_sinh(double x) { return math_values_run_f64(math_program_sinh, x); }

double mathref_cosh(double x) { return math_values_run_f64(math_program_cosh, x); }

double mathref_tanh(double x) { return math_values_run_f64(math_program_tanh, x); }

double mathref_logistic(double x) { return math_values_run_f64(math_program_logistic, x); }

double mathref_asinh(double x) { return math_values_run_f64(math_program_asinh, x); }

double mathref_acosh(double x) { return math_values_run_f64(math_program_acosh, x); }

double mathref_atanh(double x) { return math_values_run_f64(math_program_atanh, x); }

/* As mathref_round_afzf. */
double mathref_round_afz(double x) {
  double t = trunc(x); /* roundsd with mode 11 */
  double away = t + copysign_f64(1.0, x);
  return select_f64(abs_f64(x - t) >= 0.5, away, t);
}

/* ---- sin, cos, tan: math_algorithms_trig.c, run on C values ---- */

double mathref_sin(double x) { return math_values_run_f64(math_program_sin, x); }

double mathref_cos(double x) { return math_values_run_f64(math_program_cos, x); }

double mathref_tan(double x) { return math_values_run_f64(math_program_tan, x); }

/* ---- erf ---- */

double mathref_erf(double x) { return math_values_run_f64(math_program_erf, x); }

/* ---- pow ---- */

double mathref_pow(double x, double y) {
  MathTarget t = math_values_target();
  return math_value_as_f64(math_program_pow(&t, &math_format_f64, math_value_f64(x), math_value_f64(y)));
}
