/* The inline f64 math functions: the one definition of each algorithm
 * that the x86 kernel compiler transcribes (kernel_x86_math_f64.c), kept
 * by the same rules as the f32 ones in math_reference.c (no branches on
 * data, fma one fused rounding, integers in 64-bit lanes, no libm).
 *
 * The polynomials are truncated Taylor series with exact rational
 * coefficients rounded once to f64 (printed by
 * tests/gen/math_coefficients.py, print_f64_series): each is long enough
 * that the first term left out is below 2^-56 of the result on its
 * interval, so nothing is fitted. The accuracy of each, in ulps against
 * the C library's function, is measured by tests/unit/test_math_ulp.c and
 * listed in docs/math.md. */
#include "kernel/math_reference.h"

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
static double min_f64(double a, double b) { return a < b ? a : b; }
static double max_f64(double a, double b) { return a > b ? a : b; }
static double abs_f64(double x) { return f64_from_bits(bits_from_f64(x) & ~(UINT64_C(1) << 63)); }
static int is_nan_f64(double x) { return x != x; }

static double copysign_f64(double x, double s) {
  return f64_from_bits((bits_from_f64(x) & ~(UINT64_C(1) << 63)) | (bits_from_f64(s) & (UINT64_C(1) << 63)));
}

static double quiet_nan_f64(void) { return f64_from_bits(UINT64_C(0x7ff8000000000000)); }

/* 2^n for -1022 <= n <= 1023, built in the exponent field. */
static double pow2_f64(int64_t n) { return f64_from_bits((uint64_t)(n + 1023) << 52); }

static double polynomial_f64(const double *c, int count, double v) {
  double p = c[count - 1];
  for (int k = count - 2; k >= 0; k--) p = fma(p, v, c[k]);
  return p;
}

/* ---- exp, expm1 ---- */

/* (e^r - 1 - r) / r^2 = sum r^k / (k+2)!, k = 0..11, |r| <= ln2/2. */
const double mathref_exp_f64_table[MATHREF_EXP_F64_COUNT] = {
    0x1.0000000000000p-1,  0x1.5555555555555p-3,  0x1.5555555555555p-5,  0x1.1111111111111p-7,
    0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19,
    0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
};

/* x = n ln2 + r, |r| <= ln2/2: n * LN2_HI is exact (42 + 11 bits) and
 * so is x - n LN2_HI (both are multiples of x's ulp and the difference is
 * below 1/2). */
static double exp_reduce_f64(double x, double *n) {
  *n = fma(x, MATHREF_LOG2E_F64, MATHREF_ROUND_SHIFTER_F64) - MATHREF_ROUND_SHIFTER_F64;
  double r = fma(*n, -MATHREF_LN2_HI_F64, x);
  return fma(*n, -MATHREF_LN2_LO_F64, r);
}

/* As mathref_expf: 1 + r + r^2 P(r), times 2^n in two normal halves so a
 * subnormal result is rounded once. x is clamped to [-746, 710] first. */
double mathref_exp(double x) {
  double n;
  double r = exp_reduce_f64(min_f64(max_f64(x, -746.0), 710.0), &n);
  double p = 1.0 + fma(r * r, polynomial_f64(mathref_exp_f64_table, MATHREF_EXP_F64_COUNT, r), r);
  int64_t ni = (int64_t)n;
  int64_t n1 = ni >> 1;
  double y = (p * pow2_f64(n1)) * pow2_f64(ni - n1);
  return select_f64(is_nan_f64(x), x + x, y);
}

/* As mathref_expm1f: q = e^r - 1, then 2 (2^(n-1) q + (2^(n-1) - 1/2)),
 * q itself for n = 0, x itself below 2^-54. x clamped to [-40, 710].
 * Unlike exp, r keeps the part r_lost that its rounding lost (r's own
 * relative error would be a whole ulp of q): q = r + (r^2 P(r) +
 * r_lost (1 + r)), the small terms first. */
double mathref_expm1(double x) {
  double xc = min_f64(max_f64(x, -40.0), 710.0);
  double n = fma(xc, MATHREF_LOG2E_F64, MATHREF_ROUND_SHIFTER_F64) - MATHREF_ROUND_SHIFTER_F64;
  double r_exact = fma(n, -MATHREF_LN2_HI_F64, xc);
  double lo = n * -MATHREF_LN2_LO_F64;
  double r = r_exact + lo;
  double r_lost = (r_exact - r) + lo;
  double p = polynomial_f64(mathref_exp_f64_table, MATHREF_EXP_F64_COUNT, r);
  double q = r + fma(r * r, p, fma(r_lost, r, r_lost));
  double half = pow2_f64((int64_t)n - 1);
  double y = 2.0 * fma(half, q, half - 0.5);
  y = select_f64(n == 0.0, q, y);
  y = select_f64(abs_f64(x) < 0x1p-54, x, y);
  return select_f64(is_nan_f64(x), x + x, y);
}

/* ---- log, log1p ---- */

/* R(z) / z = sum 2 z^(k-1) / (2k+1), k = 1..10, z = s^2 <= 0.0295. */
const double mathref_log_f64_table[MATHREF_LOG_F64_COUNT] = {
    0x1.5555555555555p-1, 0x1.999999999999ap-2, 0x1.2492492492492p-2, 0x1.c71c71c71c71cp-3, 0x1.745d1745d1746p-3,
    0x1.3b13b13b13b14p-3, 0x1.1111111111111p-3, 0x1.e1e1e1e1e1e1ep-4, 0x1.af286bca1af28p-4, 0x1.8618618618618p-4,
};

/* A positive normal x = 2^e m, m in [sqrt(1/2), sqrt(2)): f = m - 1. */
static double log_split_f64(double x, int64_t *e) {
  uint64_t shifted = bits_from_f64(x) - MATHREF_SQRT_HALF_BITS_F64;
  *e = (int64_t)shifted >> 52;
  double m = f64_from_bits((shifted & ((UINT64_C(1) << 52) - 1)) + MATHREF_SQRT_HALF_BITS_F64);
  return m - 1.0;
}

/* e ln2 + log(1 + f) + extra. log(1 + f) = 2 atanh(s), s = f / (2 + f),
 * written f - (f^2/2 - s (f^2/2 + R)) with R = 2 atanh(s)/s - 2 the
 * series in z = s^2, so that s's rounding only touches the small part. */
static double log_combine_f64(int64_t e, double f, double extra) {
  double ef = (double)e;
  double s = f / (2.0 + f);
  double z = s * s;
  double r = z * polynomial_f64(mathref_log_f64_table, MATHREF_LOG_F64_COUNT, z);
  double hfsq = 0.5 * f * f;
  double small = fma(s, hfsq + r, fma(ef, MATHREF_LN2_LO_F64, extra));
  return fma(ef, MATHREF_LN2_HI_F64, f - (hfsq - small));
}

/* A subnormal x is first scaled by 2^54. */
double mathref_log(double x) {
  int subnormal = x < 0x1p-1022;
  int64_t e;
  double f = log_split_f64(select_f64(subnormal, x * 0x1p54, x), &e);
  e -= select_i64(subnormal, 54, 0);
  double y = log_combine_f64(e, f, 0.0);
  y = select_f64(x == INFINITY, x, y);
  y = select_f64(x == 0.0, -INFINITY, y);
  y = select_f64(x < 0.0, quiet_nan_f64(), y);
  return select_f64(is_nan_f64(x), x + x, y);
}

/* As mathref_log1pf: u = 1 + x rounded, c = (x - (u - 1)) / u the part of
 * x the rounding lost, log(u) + c. */
double mathref_log1p(double x) {
  double u = 1.0 + x;
  double c = (x - (u - 1.0)) / u;
  int64_t e;
  double f = log_split_f64(u, &e);
  double y = log_combine_f64(e, f, c);
  y = select_f64(abs_f64(x) < 0x1p-54, x, y);
  y = select_f64(x == INFINITY, x, y);
  y = select_f64(x == -1.0, -INFINITY, y);
  y = select_f64(x < -1.0, quiet_nan_f64(), y);
  return select_f64(is_nan_f64(x), x + x, y);
}

/* ---- atan2 ---- */

/* (atan t - t) / t^3 = sum (-1)^k z^(k-1) / (2k+1), k = 1..21, z = t^2 on
 * |t| <= tan(pi/8). */
const double mathref_atan_f64_table[MATHREF_ATAN_F64_COUNT] = {
    -0x1.5555555555555p-2, 0x1.999999999999ap-3,  -0x1.2492492492492p-3, 0x1.c71c71c71c71cp-4,
    -0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4,  -0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5,
    -0x1.af286bca1af28p-5, 0x1.8618618618618p-5,  -0x1.642c8590b2164p-5, 0x1.47ae147ae147bp-5,
    -0x1.2f684bda12f68p-5, 0x1.1a7b9611a7b96p-5,  -0x1.0842108421084p-5, 0x1.f07c1f07c1f08p-6,
    -0x1.d41d41d41d41dp-6, 0x1.bacf914c1bad0p-6,  -0x1.a41a41a41a41ap-6, 0x1.8f9c18f9c18fap-6,
    -0x1.7d05f417d05f4p-6,
};

/* As atan_argument in math_reference.c, in f64; both operands are first
 * scaled by 2^600 when big is below 2^-900 (exact, and little <= big
 * cannot overflow), so that the division's remainder stays above the
 * subnormals (an FMA without hardware FMA needs that). */
static double atan_argument_f64(double little, double big, int *fold, double *t_lo) {
  double scale = select_f64(big < 0x1p-900, 0x1p600, 1.0);
  little *= scale;
  big *= scale;
  double u = little / big;
  double u_lo = fma(-u, big, little) / big;
  u = select_f64(big == 0.0, 0.0, u);
  u = select_f64(little == INFINITY, 1.0, u);
  u_lo = select_f64((big == 0.0) | (big == INFINITY), 0.0, u_lo);
  *fold = u > MATHREF_TAN_PI_8_F64;
  double num = u - 1.0, num_lo = (u - (num + 1.0)) + u_lo;
  double den = u + 1.0, den_lo = (u - (den - 1.0)) + u_lo;
  double q = num / den;
  double q_lo = (fma(-q, den, num) + num_lo - q * den_lo) / den;
  *t_lo = select_f64(*fold, q_lo, u_lo);
  return select_f64(*fold, q, u);
}

/* As mathref_atan2f, in f64. */
double mathref_atan2(double y, double x) {
  double ax = abs_f64(x), ay = abs_f64(y);
  int fold;
  double t_lo;
  double t = atan_argument_f64(min_f64(ax, ay), max_f64(ax, ay), &fold, &t_lo);
  double z = t * t;
  double p = polynomial_f64(mathref_atan_f64_table, MATHREF_ATAN_F64_COUNT, z);
  double w = fma(t, z * p, fma(-t_lo, z, t_lo));
  int64_t m = select_i64(fold, 1, 0);
  double s = 1.0;
  int swap = ay > ax;
  m = select_i64(swap, 2 - m, m);
  s = select_f64(swap, -s, s);
  int negative_x = (bits_from_f64(x) >> 63) != 0;
  m = select_i64(negative_x, 4 - m, m);
  s = select_f64(negative_x, -s, s);
  double mf = (double)m;
  double angle = fma(mf, MATHREF_PIO4_HI_F64, fma(s, t, fma(mf, MATHREF_PIO4_LO_F64, s * w)));
  double result = copysign_f64(angle, y);
  return select_f64(is_nan_f64(x) | is_nan_f64(y), x + y, result);
}

/* ---- cbrt, rsqrt ---- */

/* |x| = 2^(3q + k) m as in mathref_cbrtf (floor(e/3) by a multiply and a
 * shift, exact for the e + 3000 of every double); the f32 cbrt of
 * a = 2^k m (rounded to f32) is a guess right to 2^-23, and two Newton
 * steps with the residual g^3 - a held exactly (g^2 split by an FMA)
 * make it right to far below an ulp. A subnormal x is scaled by 2^54. */
static double cbrt_newton_f64(double g, double a) {
  double h = g * g;
  double l = fma(g, g, -h);
  double residual = fma(h, g, -a) + l * g;
  return g - residual / (3.0 * h);
}

double mathref_cbrt(double x) {
  double ax = abs_f64(x);
  int subnormal = ax < 0x1p-1022;
  uint64_t b = bits_from_f64(select_f64(subnormal, ax * 0x1p54, ax));
  int64_t e = (int64_t)(b >> 52) - 1023 - select_i64(subnormal, 54, 0);
  double m = f64_from_bits((b & ((UINT64_C(1) << 52) - 1)) | UINT64_C(0x3ff0000000000000));
  int64_t q = (((e + 3000) * 21846) >> 16) - 1000;
  int64_t k = e - 3 * q;
  double a = m * pow2_f64(k);
  double g = (double)mathref_cbrtf((float)a);
  g = cbrt_newton_f64(cbrt_newton_f64(g, a), a);
  double y = copysign_f64(g * pow2_f64(q), x);
  return select_f64((ax == 0.0) | (ax == INFINITY) | is_nan_f64(x), x + x, y);
}

double mathref_rsqrt(double x) { return 1.0 / sqrt(x); }

/* ---- compositions, as the f32 ones ---- */

double mathref_atan(double x) { return mathref_atan2(x, 1.0); }
double mathref_asin(double x) { return mathref_atan2(x, sqrt(fma(-x, x, 1.0))); }
double mathref_acos(double x) { return mathref_atan2(sqrt(fma(-x, x, 1.0)), x); }

/* The switch is at 709, where e^|x| is still finite. */
double mathref_sinh(double x) {
  double ax = abs_f64(x);
  double t = mathref_expm1(min_f64(ax, 709.0));
  double small = 0.5 * (t + t / (t + 1.0));
  double h = mathref_exp(0.5 * ax);
  double y = select_f64(ax < 709.0, small, (0.5 * h) * h);
  return select_f64(is_nan_f64(x), x + x, copysign_f64(y, x));
}

double mathref_cosh(double x) {
  double ax = abs_f64(x);
  double e = mathref_exp(min_f64(ax, 709.0));
  double small = 0.5 * e + 0.5 / e;
  double h = mathref_exp(0.5 * ax);
  double y = select_f64(ax < 709.0, small, (0.5 * h) * h);
  return select_f64(is_nan_f64(x), x + x, y);
}

/* |x| < 1: -t / (t + 2) with t = e^(-2|x|) - 1; else 1 - 2 / (t + 2) with
 * t = e^(2|x|) - 1 (|x| clamped to 22, past which tanh rounds to 1). */
double mathref_tanh(double x) {
  double ax = abs_f64(x);
  double t_small = mathref_expm1(-2.0 * ax);
  double t_large = mathref_expm1(2.0 * min_f64(ax, 22.0));
  double y = select_f64(ax < 1.0, -t_small / (t_small + 2.0), 1.0 - 2.0 / (t_large + 2.0));
  y = select_f64(x == 0.0, x, copysign_f64(y, x));
  return select_f64(is_nan_f64(x), x + x, y);
}

/* As mathref_logisticf. */
double mathref_logistic(double x) {
  double e = mathref_exp(-abs_f64(x));
  double numerator = select_f64(x < 0.0, e, 1.0);
  double sum = 1.0 + e;
  double sum_lost = (1.0 - sum) + e;
  double y = numerator / sum;
  double residual = fma(-y, sum, numerator) - y * sum_lost;
  return y + residual / sum;
}

/* From 2^28 on, sqrt(1 + x^2) is |x| to f64's precision. */
double mathref_asinh(double x) {
  double ax = abs_f64(x);
  double a = min_f64(ax, 0x1p28);
  double z = a * a;
  double small = mathref_log1p(a + z / (1.0 + sqrt(1.0 + z)));
  double large = mathref_log(ax) + MATHREF_LN2_F64;
  double y = select_f64(ax < 0x1p28, small, large);
  return select_f64(is_nan_f64(x), x + x, copysign_f64(y, x));
}

double mathref_acosh(double x) {
  double t = min_f64(x, 0x1p28) - 1.0;
  double small = mathref_log1p(t + sqrt(t * (t + 2.0)));
  double large = mathref_log(x) + MATHREF_LN2_F64;
  double y = select_f64(x < 0x1p28, small, large);
  y = select_f64(x < 1.0, quiet_nan_f64(), y);
  return select_f64(is_nan_f64(x), x + x, y);
}

double mathref_atanh(double x) {
  double ax = abs_f64(x);
  double twice = ax + ax;
  double d = 1.0 - ax;
  double u = select_f64(ax < 0.5, fma(twice, ax / d, twice), twice / d);
  double y = 0.5 * mathref_log1p(u);
  return select_f64(is_nan_f64(x), x + x, copysign_f64(y, x));
}

/* As mathref_round_afzf. */
double mathref_round_afz(double x) {
  double t = trunc(x); /* roundsd with mode 11 */
  double away = t + copysign_f64(1.0, x);
  return select_f64(abs_f64(x - t) >= 0.5, away, t);
}

/* ---- sin, cos, tan ---- */

/* (sin r - r) / r^3 = sum (-1)^k z^(k-1) / (2k+1)!, k = 1..8, z = r^2. */
const double mathref_sin_f64_table[MATHREF_SIN_F64_COUNT] = {
    -0x1.5555555555555p-3, 0x1.1111111111111p-7,  -0x1.a01a01a01a01ap-13, 0x1.71de3a556c734p-19,
    -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33, -0x1.ae7f3e733b81fp-41, 0x1.952c77030ad4ap-49,
};

/* (cos r - 1 + r^2/2) / r^4 = sum (-1)^k z^(k-2) / (2k)!, k = 2..8. */
const double mathref_cos_f64_table[MATHREF_COS_F64_COUNT] = {
    0x1.5555555555555p-5,  -0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-16, -0x1.27e4fb7789f5cp-22,
    0x1.1eed8eff8d898p-29, -0x1.93974a8c07c9dp-37, 0x1.ae7f3e733b81fp-45,
};

/* Word j: floor(2/pi 2^(64 j)) mod 2^64, so bit g of the table (most
 * significant first) is bit g - 63 after 2/pi's binary point. */
const uint64_t mathref_two_over_pi_words[MATHREF_TWO_OVER_PI_WORDS] = {
    UINT64_C(0x0000000000000000), UINT64_C(0xa2f9836e4e441529), UINT64_C(0xfc2757d1f534ddc0),
    UINT64_C(0xdb6295993c439041), UINT64_C(0xfe5163abdebbc561), UINT64_C(0xb7246e3a424dd2e0),
    UINT64_C(0x06492eea09d1921c), UINT64_C(0xfe1deb1cb129a73e), UINT64_C(0xe88235f52ebb4484),
    UINT64_C(0xe99c7026b45f7e41), UINT64_C(0x3991d639835339f4), UINT64_C(0x9c845f8bbdf9283b),
    UINT64_C(0x1ff897ffde05980f), UINT64_C(0xef2f118b5a0a6d1f), UINT64_C(0x6d367ecf27cb09b7),
    UINT64_C(0x4f463f669e5fea2d), UINT64_C(0x7527bac7ebe5f17b), UINT64_C(0x3d0739f78a5292ea),
    UINT64_C(0x6bfb5fb11f8d5d08), UINT64_C(0x56033046fc7b6bab),
};

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
