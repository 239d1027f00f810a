/* The inline f64 math functions on C values: the tables, the entry points
 * of the algorithms of math_algorithms.c, and the C of erf, pow, sin, cos
 * and tan that the code generators still transcribe, kept
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

double mathref_exp(double x) { return math_values_run_f64(math_program_exp, x); }

double mathref_expm1(double x) { return math_values_run_f64(math_program_expm1, x); }

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

double mathref_log(double x) { return math_values_run_f64(math_program_log, x); }

double mathref_log1p(double x) { return math_values_run_f64(math_program_log1p, x); }

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

/* ---- erf ---- */

/* Below 1: erf x = x (2/sqrt(pi)) (1 + z S(z)), z = x^2,
 * S = sum (-1)^n z^(n-1) / (n! (2n+1)), n = 1..19 (the first term left
 * out is below 2^-62). */
const double mathref_erf_small_f64_table[MATHREF_ERF_SMALL_F64_COUNT] = {
    -0x1.5555555555555p-2, 0x1.999999999999ap-4, -0x1.8618618618618p-6, 0x1.2f684bda12f68p-8, -0x1.8d3018d3018d3p-11, 0x1.c01c01c01c01cp-14, -0x1.bbd779334ef0bp-17, 0x1.87a00187a0018p-20, -0x1.3777c55568ccdp-23, 0x1.c2e3054870b38p-27, -0x1.2b67310aa9f3ap-30, 0x1.6f448e13e85e1p-34, -0x1.a289ee7e40f74p-38, 0x1.bd577e658d020p-42, -0x1.bc6250fb14231p-46, 0x1.a173a167fba4dp-50, -0x1.7271cbe5863ecp-54, 0x1.377c2110f2083p-58, -0x1.f1b4073b34a68p-63,
};

/* From 1 to 6: erfc as its Taylor polynomial around 1.25 + k/2 (row k),
 * coefficients of h^0..h^19, |h| <= 1/4; what they leave out is below
 * 2^-70 absolute, where erf = 1 - erfc needs 2^-55. */
const double mathref_erfc_f64_rows[MATHREF_ERFC_F64_ROWS][MATHREF_ERFC_F64_COUNT] = {
    {0x1.3bcd133aa0ffcp-4, -0x1.e4652fadcb6b2p-3, 0x1.2ebf3dcc9f22fp-2, -0x1.571d01c5c56bep-3, 0x1.93a9a7bb7ed94p-8, 0x1.8281ce0b34fa4p-5, -0x1.5d0003af70568p-6, -0x1.db43c97264485p-9, 0x1.75672cebadac5p-8, -0x1.cc22555d6cd4ep-11, -0x1.a0074f860d925p-11, 0x1.53b177f074426p-12, 0x1.ba66102895704p-15, -0x1.d4520093cdd9ep-15, 0x1.94a53c645ccdbp-19, 0x1.ae23c1a269f29p-18, -0x1.6b412b613178bp-20, -0x1.10b20781c7674p-21, 0x1.c7658e8701944p-23, 0x1.842847778c28bp-26},
    {0x1.b4be201caa4b4p-7, -0x1.b055303221015p-5, 0x1.7a4a8a2bdce13p-4, -0x1.7148c3d57c312p-4, 0x1.8a0da54306154p-5, -0x1.b22257dd01249p-8, -0x1.25b378c92a6c0p-7, 0x1.8d10fb6b8006fp-8, -0x1.7ec1d1d8d3387p-11, -0x1.d4cf0ad2e6ca3p-11, 0x1.d041eea2258aep-12, 0x1.6d70cffe71229p-18, -0x1.2007a6d7935c6p-14, 0x1.294d49e1a631dp-16, 0x1.3668d56f09b00p-18, -0x1.b75406fd5ffd6p-19, 0x1.7ac9620b78991p-23, 0x1.5ca65a3135758p-22, -0x1.5e653add60eb8p-24, -0x1.2864313064732p-26},
    {0x1.7f713f9cc9784p-10, -0x1.d4143a9dfe965p-8, 0x1.074b60f8df349p-6, -0x1.63ef61e824425p-6, 0x1.38a98327890e6p-6, -0x1.5d3b17bbe0f22p-7, 0x1.7cae0d45b1a6ap-9, 0x1.5f8313b6fdd59p-11, -0x1.0602e33b9ef4ap-10, 0x1.8352cd05696b8p-12, 0x1.80c1330a27b22p-17, -0x1.11321ce0dc8f3p-14, 0x1.7ca5429a38511p-16, 0x1.65937983af9a4p-20, -0x1.cb0718bc6dc96p-19, 0x1.ce4a65fe7584cp-21, 0x1.50c6594c2253ap-23, -0x1.251917755b0cfp-23, 0x1.3073257725eebp-26, 0x1.420056ef84d97p-27},
    {0x1.a609f7584d32bp-14, -0x1.3360ccd23db3ap-11, 0x1.a6a519a114d70p-10, -0x1.69cf466ccdf62p-9, 0x1.ab0c273ac263ep-9, -0x1.6935960664d74p-9, 0x1.b2755bfd73556p-10, -0x1.52b6263f0c0e7p-11, 0x1.7557726380065p-14, 0x1.2abb3cb37d67fp-14, -0x1.cd592454e7d28p-15, 0x1.09d09f8254931p-16, 0x1.1f87c15445595p-20, -0x1.68b7ad440ba03p-19, 0x1.eb027532f1e9dp-21, -0x1.6553f2333fb0bp-29, -0x1.c66fe8aad4da0p-24, 0x1.2882c1472066ep-25, 0x1.1c7d9c488cbe6p-31, -0x1.ec3b221d4fb0bp-29},
    {0x1.20c1303550f0ep-18, -0x1.e9b5e8d00ce77p-16, 0x1.8de3cd290a7c0p-14, -0x1.9aa489e3cad21p-13, 0x1.2c7d5ef053eb0p-12, -0x1.490a4d230eab9p-12, 0x1.145464ea2872bp-12, -0x1.647f721c135ebp-13, 0x1.567479c97cce7p-14, -0x1.b2c3201a66dd9p-16, 0x1.38933c0f0c9fap-19, 0x1.8070948011d1bp-19, -0x1.ff3236f426a50p-20, 0x1.26552b63b3912p-21, -0x1.d56060892daf5p-29, -0x1.1d2c62f6d64e1p-24, 0x1.d640778ed81c9p-26, -0x1.afec4ca81925ep-29, -0x1.dae1d5486d301p-30, 0x1.f0ada171682b7p-31},
    {0x1.e87470e4f4246p-24, -0x1.d9371e2ff7c35p-21, 0x1.bba3ac4cf8472p-19, -0x1.0b6a7b0f1b586p-17, 0x1.d06f586093ea7p-17, -0x1.3436bc9fc46f6p-16, 0x1.4357b5546e9f3p-16, -0x1.110de49c0acd0p-16, 0x1.7566beee1bb2fp-17, -0x1.99f5c54c5ea75p-18, 0x1.5d6903bb02d10p-19, -0x1.a0431133a7b2dp-21, 0x1.833324e429526p-24, 0x1.ec7d23a1cdfffp-25, -0x1.6df3b136b9415p-25, 0x1.e8012ea5d94a8p-27, -0x1.cfcbfb76f6f4dp-30, -0x1.c3f3bfbbb49c7p-31, 0x1.1d510fc6e20b0p-31, -0x1.0ec6bc32c044ep-33},
    {0x1.fcae93fb7323cp-30, -0x1.155a09065d4f7p-26, 0x1.26afa996c3246p-24, -0x1.95ea6fdffb3afp-23, 0x1.96ba7366c000ep-22, -0x1.3b468019bd292p-21, 0x1.8868e1d27f2d6p-21, -0x1.916e92305502ap-21, 0x1.566f01cad15b6p-21, -0x1.eab4e6fa86d63p-22, 0x1.2758b2a0beedcp-22, -0x1.27d982a66f4e9p-23, 0x1.e03eb4cee755cp-25, -0x1.263bc8a1901e0p-26, 0x1.9fdec7298d93dp-29, 0x1.be2c0dfaad6fap-32, -0x1.389654ec1c67bp-31, 0x1.076088161c198p-32, -0x1.d7f5528c3aa07p-35, 0x1.ab749472a9c18p-43},
    {0x1.453141082302ap-36, -0x1.8a61745ec7d1dp-33, 0x1.d453ba308d493p-31, -0x1.6a8aeba4765aep-29, 0x1.9b017abbf1539p-28, -0x1.6b43c95302c89p-27, 0x1.042f2a66410c6p-26, -0x1.35dc831945a9bp-26, 0x1.3834e4e13dedcp-26, -0x1.0d4cf48c6599fp-26, 0x1.90aa132c72227p-27, -0x1.01e4c086668e5p-27, 0x1.1eeb043bb237dp-28, -0x1.11dd029bd7bfbp-29, 0x1.b8a9191ee1fd3p-31, -0x1.1eea380dfa8a3p-32, 0x1.0e23c748a4602p-34, -0x1.8615e29f4daa4p-38, -0x1.ec3d7da8a2ba5p-39, 0x1.43ae532fe00ecp-39},
    {0x1.fd5f08ad2b29ap-44, -0x1.5422ef5d8949dp-40, 0x1.be6dda2ac430ep-38, -0x1.7f8a0f3e23794p-36, 0x1.e4cb4aea710d1p-35, -0x1.e044b3eb1a717p-34, 0x1.83ea4ba25a448p-33, -0x1.065958aed15d7p-32, 0x1.2ec54e940db0fp-32, -0x1.2e385fc3a026fp-32, 0x1.07815c45933cap-32, -0x1.9425acbdd20eap-33, 0x1.11c7574f11f87p-33, -0x1.484483b3371dap-34, 0x1.5bfd9fefc661bp-35, -0x1.449dca92f8003p-36, 0x1.07a9cf3dcd308p-37, -0x1.6cfa2f26110e4p-39, 0x1.9a7395c43d3b4p-41, -0x1.46c3e39f28db0p-43},
    {0x1.e7eea02e4ed88p-52, -0x1.63daf8b4b1e0cp-48, 0x1.ff8ac583bfb31p-46, -0x1.e2d06d6fd401ap-44, 0x1.505d9535a1b81p-42, -0x1.70b70116486d4p-41, 0x1.4aed68293ee4fp-40, -0x1.f3c5929c895efp-40, 0x1.43c123ee60917p-39, -0x1.6d18ea5326ed0p-39, 0x1.6a4e3a492865bp-39, -0x1.3f07e3641ce1cp-39, 0x1.f5afa7fd1b99ap-40, -0x1.61d0f54a3aefap-40, 0x1.c0f4eae434f91p-41, -0x1.0096a81b5bd8fp-41, 0x1.0816e36103676p-42, -0x1.e831789403765p-44, 0x1.92dd6c941fb1bp-45, -0x1.258b149c60df7p-46},
};

/* 2/sqrt(pi) applied in two parts (a one-part constant would add half an
 * ulp everywhere); from 1 on 1 - erfc (row k = floor(2 (t - 1)), h the
 * distance to its center, exact); from 6 on erf rounds to 1. */
double mathref_erf(double x) {
  double ax = abs_f64(x);
  double z = x * x;
  double w = z * polynomial_f64(mathref_erf_small_f64_table, MATHREF_ERF_SMALL_F64_COUNT, z);
  /* below 2^-900, x is scaled by 2^64 around the FMA, so that its
   * product stays clear of the subnormals (see docs/math.md, "Without
   * FMA"); the scaling back rounds a subnormal result once more */
  int tiny = ax < 0x1p-900;
  double xs = select_f64(tiny, x * 0x1p64, x);
  double small = fma(xs, MATHREF_TWO_OVER_SQRT_PI_HI_F64, xs * fma(MATHREF_TWO_OVER_SQRT_PI_HI_F64, w,
                                                                       MATHREF_TWO_OVER_SQRT_PI_LO_F64));
  small = select_f64(tiny, small * 0x1p-64, small);
  double t = min_f64(max_f64(ax, 1.0), 6.0);
  int64_t k = (int64_t)((t - 1.0) * 2.0);
  k = select_i64(k > 9, 9, k);
  double h = t - (1.25 + 0.5 * (double)k);
  double erfc = polynomial_f64(mathref_erfc_f64_rows[k], MATHREF_ERFC_F64_COUNT, h);
  double large = copysign_f64(1.0 - erfc, x);
  double y = select_f64(ax < 1.0, small, large);
  return select_f64(is_nan_f64(x), x + x, y);
}

/* ---- pow ---- */

/* 2/(2k+1), k = 2..14: pow's log series past 2s + 2s^3/3, long enough
 * for 2^-72 of the result (log's own table stops at 2^-56). */
const double mathref_pow_log_f64_table[MATHREF_POW_LOG_F64_COUNT] = {
    0x1.999999999999ap-2, 0x1.2492492492492p-2, 0x1.c71c71c71c71cp-3, 0x1.745d1745d1746p-3, 0x1.3b13b13b13b14p-3, 0x1.1111111111111p-3, 0x1.e1e1e1e1e1e1ep-4, 0x1.af286bca1af28p-4, 0x1.8618618618618p-4, 0x1.642c8590b2164p-4, 0x1.47ae147ae147bp-4, 0x1.2f684bda12f68p-4, 0x1.1a7b9611a7b96p-4,
};

/* x = 2^e m as log's split; log(m) = 2 atanh(s), s = f / (2 + f), carried
 * in two doubles to about 2^-100: s = s_h + s_l (2 + f split exactly, the
 * division's remainder by an FMA); 2s + 2s^3/3 with s^3 and 2/3 in two
 * parts; s^5 (2/5 + 2/7 s^2 + ...) in one, as it is below 2^-12 of the
 * sum. Then times log2(e) (two parts) plus e: log2|x| = *low + return,
 * right to about 2^-70 relative, which y log2|x| needs (|y log2|x|| up to
 * 1100, to 2^-55 absolute). */
static double pow_log2_f64(double ax, double *low) {
  int subnormal = ax < 0x1p-1022;
  int64_t e;
  double f = log_split_f64(select_f64(subnormal, ax * 0x1p54, ax), &e);
  e -= select_i64(subnormal, 54, 0);
  double den = 2.0 + f;
  double den_l = (2.0 - den) + f;
  double s = f / den;
  double s_l = (fma(-s, den, f) - s * den_l) / den;
  double s2 = s * s;
  double s2_l = fma(s, s, -s2);
  double s3 = s2 * s;
  double s3_l = fma(s2, s, -s3) + (s2_l * s + 3.0 * s2 * s_l);
  double t = s3 * MATHREF_TWO_THIRDS_HI_F64;
  double t_l = fma(s3, MATHREF_TWO_THIRDS_HI_F64, -t) + (s3 * MATHREF_TWO_THIRDS_LO_F64 + s3_l * MATHREF_TWO_THIRDS_HI_F64);
  double rest = s3 * s2 * polynomial_f64(mathref_pow_log_f64_table, MATHREF_POW_LOG_F64_COUNT, s2);
  double h = 2.0 * s + t; /* 2s >= 8 t: Fast2Sum */
  double l = (t - (h - 2.0 * s)) + (2.0 * s_l + (t_l + rest));
  double p = h * MATHREF_LOG2E_F64;
  double p_l = fma(h, MATHREF_LOG2E_F64, -p) + (h * MATHREF_LOG2E_LO_F64 + l * MATHREF_LOG2E_F64);
  double ef = (double)e;
  double sum_l;
  double sum = two_sum_f64(ef, p, &sum_l);
  double result = sum + (sum_l + p_l);
  *low = (sum - result) + (sum_l + p_l);
  return result;
}

/* 2^(z + z_l): n = round(z), r = (z - n) + z_l (z - n exact) with what
 * that sum lost; e^(r ln2) with r ln2 = t + t_l (ln 2 in two parts),
 * 1 + t + t^2 P(t) + t_l (1 + t), P exp's table; 2^n in two halves.
 * z is clamped to [-1100, 1100] (0 and inf beyond), a NaN z to 0 (the
 * caller's select returns NaN). */
static double pow_exp2_f64(double z, double z_l) {
  int out = !(abs_f64(z) <= 1100.0);
  double zc = select_f64(out, select_f64(z > 0.0, 1100.0, -1100.0), z);
  zc = select_f64(is_nan_f64(z), 0.0, zc);
  double zl = select_f64(out | is_nan_f64(z), 0.0, z_l);
  double n = (zc + MATHREF_ROUND_SHIFTER_F64) - MATHREF_ROUND_SHIFTER_F64;
  double head = zc - n;
  double r = head + zl;
  double r_l = (head - r) + zl;
  double t = r * MATHREF_LN2_F64;
  double t_l = fma(r, MATHREF_LN2_F64, -t) + (r * MATHREF_LN2_LO_EXACT_F64 + r_l * MATHREF_LN2_F64);
  double p = polynomial_f64(mathref_exp_f64_table, MATHREF_EXP_F64_COUNT, t);
  double y = 1.0 + (t + fma(t * t, p, fma(t_l, t, t_l)));
  int64_t ni = (int64_t)n;
  int64_t n1 = ni >> 1;
  return (y * pow2_f64(n1)) * pow2_f64(ni - n1);
}

/* As mathref_powf: 2^(y log2|x|), then the sign and C99 Annex F's
 * special cases. */
double mathref_pow(double x, double y) {
  double ax = abs_f64(x), ay = abs_f64(y);
  double l_low;
  double l = pow_log2_f64(ax, &l_low);
  int edge = (ax == 0.0) | (ax == INFINITY);
  l = select_f64(ax == 0.0, -INFINITY, select_f64(ax == INFINITY, INFINITY, l));
  l_low = select_f64(edge, 0.0, l_low);
  double z = y * l;
  double z_l = fma(y, l, -z) + y * l_low;
  double result = pow_exp2_f64(z, select_f64(edge, 0.0, z_l));
  double ay_rounded = select_f64(ay < 0x1p52, (ay + 0x1p52) - 0x1p52, ay);
  int y_integer = ay_rounded == ay;
  int y_odd = y_integer & (int)((int64_t)select_f64(ay < 0x1p53, ay_rounded, 0.0) & 1);
  int negative_x = (bits_from_f64(x) >> 63) != 0;
  result = select_f64(negative_x & y_odd, -result, result);
  int invalid = (x < 0.0) & (x > -INFINITY) & !y_integer;
  result = select_f64(invalid | is_nan_f64(x) | is_nan_f64(y), quiet_nan_f64(), result);
  int one = (y == 0.0) | (x == 1.0) | ((ax == 1.0) & (ay == INFINITY));
  return select_f64(one, 1.0, result);
}
