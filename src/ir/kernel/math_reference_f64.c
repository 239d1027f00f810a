/* The inline f64 math functions on C values: the entry points
 * of the algorithms of math_algorithms.c, and the C of sin, cos and tan
 * that the code generators still transcribe, kept
 * by the same rules as the f32 ones in math_reference.c (no branches on
 * data, fma one fused rounding, integers in 64-bit lanes, no libm).
 *
 * The tables are in math_tables.c. The accuracy of each, in ulps against
 * the C library's function, is measured by tests/unit/test_math_ulp.c and
 * listed in docs/math.md. */
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
static int64_t select_i64(int mask, int64_t a, int64_t b) { return mask ? a : b; }
static double abs_f64(double x) { return f64_from_bits(bits_from_f64(x) & ~(UINT64_C(1) << 63)); }
static int is_nan_f64(double x) { return x != x; }

static double copysign_f64(double x, double s) {
  return f64_from_bits((bits_from_f64(x) & ~(UINT64_C(1) << 63)) | (bits_from_f64(s) & (UINT64_C(1) << 63)));
}

static double quiet_nan_f64(void) { return f64_from_bits(UINT64_C(0x7ff8000000000000)); }

static double polynomial_f64(const double *c, int count, double v) {
  double p = c[count - 1];
  for (int k = count - 2; k >= 0; k--) p = fma(p, v, c[k]);
  return p;
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

/* ---- sin, cos, tan ---- */

/* a + b = s + *e exactly (Knuth's two-sum). */
static double two_sum_f64(double a, double b, double *e) {
  double s = a + b;
  double back = s - a;
  *e = (a - (s - back)) + (b - back);
  return s;
}

/* Cody-Waite for |x| < 2^20: n = round(x 2/pi) (possibly one off at a
 * half, which leaves |r| a hair past pi/4, inside the series' reach);
 * x - n P1 and n P2 are exact (33-bit parts, n < 2^20), n P3 is split by
 * an FMA, and two-sums keep every lost bit in lo. pi/2 is known to 2^-119
 * this way, which fdlibm's analysis shows is enough below 2^20. */
static double trig_reduce_small_f64(double x, double *n, double *lo) {
  *n = fma(x, MATHREF_TWO_OVER_PI_F64, MATHREF_ROUND_SHIFTER_F64) - MATHREF_ROUND_SHIFTER_F64;
  double r1 = fma(*n, -MATHREF_PIO2_1_F64, x);
  double w = *n * MATHREF_PIO2_2_F64;
  double e2;
  double r2 = two_sum_f64(r1, -w, &e2);
  double p3 = *n * MATHREF_PIO2_3_F64;
  double p3e = fma(*n, MATHREF_PIO2_3_F64, -p3);
  double se;
  double s = two_sum_f64(r2, -p3, &se);
  double low = (e2 - p3e) + se;
  double hi = s + low;
  *lo = low - (hi - s);
  return hi;
}

/* 64 bits of the table from bit g on. */
static uint64_t two_over_pi_bits(int64_t g) {
  int64_t j = g >> 6, s = g & 63;
  return (mathref_two_over_pi_words[j] << s) | ((mathref_two_over_pi_words[j + 1] >> 1) >> (63 - s));
}

/* The high and low 64 bits of a b. */
static uint64_t multiply_high_u64(uint64_t a, uint64_t b, uint64_t *low) {
  uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t middle = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  *low = a * b;
  return p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
}

/* Payne-Hanek for |x| >= 2^20: |x| = M 2^E (M the 53-bit mantissa);
 * x 2/pi mod 4 needs the bits of 2/pi from the 2^(1-E) place on, and 192
 * of them (W) leave an error below 2^-135 of a quarter turn. The low 192
 * bits of M W, in units of 2^-190 quarter turns, rounded at the top:
 * the quadrant (two bits) and a fraction in [-1/2, 1/2) as a signed 62-bit
 * word and two more, cut into four pieces that convert to doubles
 * exactly and sum (two-sums) to vh + vl; times pi/2 (in two parts) is
 * hi + lo. x < 0 reduces as -|x|. */
static double trig_reduce_large_f64(double x, int64_t *quadrant, double *lo) {
  uint64_t b = bits_from_f64(x);
  int64_t e = (int64_t)((b >> 52) & 0x7ff) - 1075;
  e = e < -32 ? -32 : e; /* NaN, inf and the small x read some row; the caller selects */
  uint64_t m = (b & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
  int64_t g = e + 62;
  uint64_t w0 = two_over_pi_bits(g), w1 = two_over_pi_bits(g + 64), w2 = two_over_pi_bits(g + 128);
  uint64_t lo2, lo1;
  uint64_t hi2 = multiply_high_u64(m, w2, &lo2);
  uint64_t hi1 = multiply_high_u64(m, w1, &lo1);
  uint64_t r1 = hi2 + lo1;
  uint64_t carry = r1 < hi2;
  uint64_t r2 = hi1 + m * w0 + carry;
  uint64_t t = r2 + (UINT64_C(1) << 61);
  int64_t q = (int64_t)(t >> 62);
  int64_t f = (int64_t)(t & ((UINT64_C(1) << 62) - 1)) - ((int64_t)1 << 61);
  double pa = (double)(f >> 21) * 0x1p-41;
  double pb = (double)(f & 0x1fffff) * 0x1p-62;
  double pc = (double)(int64_t)(r1 >> 11) * 0x1p-115;
  double pd = (double)(int64_t)(((r1 & 2047) << 42) | (lo2 >> 22)) * 0x1p-168;
  double e1, e2, e3;
  double s1 = two_sum_f64(pa, pb, &e1);
  double s2 = two_sum_f64(s1, pc, &e2);
  double s3 = two_sum_f64(s2, pd, &e3);
  double l = (e1 + e2) + e3;
  double vh = s3 + l;
  double vl = l - (vh - s3);
  double rh = vh * MATHREF_PIO2_HI_F64;
  double rl = fma(vh, MATHREF_PIO2_HI_F64, -rh) + fma(vh, MATHREF_PIO2_LO_F64, vl * MATHREF_PIO2_HI_F64);
  double hi = rh + rl;
  double low = rl - (hi - rh);
  int negative = (b >> 63) != 0;
  *quadrant = select_i64(negative, (4 - q) & 3, q);
  *lo = select_f64(negative, -low, low);
  return select_f64(negative, -hi, hi);
}

static double trig_reduce_f64(double x, int64_t *quadrant, double *lo) {
  int small = abs_f64(x) < 0x1p20;
  double n, lo_small, lo_large;
  int64_t q_large;
  double hi_small = trig_reduce_small_f64(select_f64(small, x, 0.0), &n, &lo_small);
  double hi_large = trig_reduce_large_f64(x, &q_large, &lo_large);
  *quadrant = select_i64(small, (int64_t)n & 3, q_large);
  *lo = select_f64(small, lo_small, lo_large);
  return select_f64(small, hi_small, hi_large);
}

/* sin(hi + lo) = hi + (hi^3 S(z) + lo (1 - z/2)), z = hi^2. */
static double sin_kernel_f64(double hi, double lo) {
  double z = hi * hi;
  double p = polynomial_f64(mathref_sin_f64_table, MATHREF_SIN_F64_COUNT, z);
  return hi + fma(hi, z * p, lo * fma(z, -0.5, 1.0));
}

/* cos(hi + lo) = w + tail with w = 1 - z/2 rounded, tail what w lost
 * plus z^2 C(z) - hi lo - (z's own rounding error)/2. */
static double cos_kernel_f64(double hi, double lo) {
  double z = hi * hi;
  double z_lost = fma(hi, hi, -z);
  double hz = 0.5 * z;
  double w = 1.0 - hz;
  double p = polynomial_f64(mathref_cos_f64_table, MATHREF_COS_F64_COUNT, z);
  double tail = ((1.0 - w) - hz) + (z * z * p - fma(hi, lo, 0.5 * z_lost));
  return w + tail;
}

static int trig_is_invalid_f64(double x) { return is_nan_f64(x) | (abs_f64(x) == INFINITY); }

double mathref_sin(double x) {
  int64_t quadrant;
  double lo;
  double hi = trig_reduce_f64(x, &quadrant, &lo);
  double y = select_f64(quadrant & 1, cos_kernel_f64(hi, lo), sin_kernel_f64(hi, lo));
  y = select_f64(quadrant & 2, -y, y);
  y = select_f64(abs_f64(x) < 0x1p-26, x, y);
  return select_f64(trig_is_invalid_f64(x), quiet_nan_f64(), y);
}

double mathref_cos(double x) {
  int64_t quadrant;
  double lo;
  double hi = trig_reduce_f64(x, &quadrant, &lo);
  double y = select_f64(quadrant & 1, sin_kernel_f64(hi, lo), cos_kernel_f64(hi, lo));
  y = select_f64((quadrant + 1) & 2, -y, y);
  return select_f64(trig_is_invalid_f64(x), quiet_nan_f64(), y);
}

/* tan = sin / cos of the reduced argument (-cos / sin in odd quadrants),
 * the quotient corrected once by its remainder. */
double mathref_tan(double x) {
  int64_t quadrant;
  double lo;
  double hi = trig_reduce_f64(x, &quadrant, &lo);
  double s = sin_kernel_f64(hi, lo), c = cos_kernel_f64(hi, lo);
  int odd = (int)(quadrant & 1);
  double num = select_f64(odd, -c, s), den = select_f64(odd, s, c);
  double q = num / den;
  double y = q + fma(-q, den, num) / den;
  y = select_f64(abs_f64(x) < 0x1p-27, x, y);
  return select_f64(trig_is_invalid_f64(x), quiet_nan_f64(), y);
}

/* ---- erf ---- */

double mathref_erf(double x) { return math_values_run_f64(math_program_erf, x); }

/* ---- pow ---- */

double mathref_pow(double x, double y) {
  MathTarget t = math_values_target();
  return math_value_as_f64(math_program_pow(&t, &math_format_f64, math_value_f64(x), math_value_f64(y)));
}
