/* The inline f32 math functions on C values (see math_reference.h): the
 * coefficient tables, the entry points of the algorithms written once in
 * math_algorithms.c, and the C of erf, pow, sin, cos and tan, which the
 * code generators still transcribe.
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
 * Only pow leaves f32: it works in f64 lanes (vcvtps2pd; .f64 in PTX),
 * because y * log2(x) needs about 40 correct bits before 2^z is taken.
 *
 * The coefficient tables were fitted by tests/gen/math_coefficients.py
 * (discrete minimax by Lawson's algorithm, coefficients rounded to f32 one
 * at a time, lowest order first, refitting the rest); rerunning it prints
 * them again. Each comment gives the approximated function and its
 * interval. The tables and constants are declared in the header, so that
 * an emitter loads these very numbers. */
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
static double select_f64(int mask, double a, double b) { return mask ? a : b; }
static int select_i32(int mask, int a, int b) { return mask ? a : b; }
static float min_f32(float a, float b) { return a < b ? a : b; }
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

static double polynomial_f64(const double *c, int count, double v) {
  double p = c[count - 1];
  for (int k = count - 2; k >= 0; k--) p = fma(p, v, c[k]);
  return p;
}

/* ---- exp, expm1 ---- */

/* (e^r - 1 - r) / r^2 on |r| <= ln2/2, minimax relative to e^r
 * (weighted error 2^-28.2). */
const float mathref_exp_table[MATHREF_EXP_COUNT] = {
    0.49999994f, 0.166665211f, 0.0416682884f, 0.0083687054f, 0.00138189492f,
};

/* The same function, minimax relative to e^r - 1 (weighted error 2^-31.1):
 * expm1 returns r + r^2 P(r) itself near 0, so it needs relative accuracy
 * there. */
const float mathref_expm1_table[MATHREF_EXPM1_COUNT] = {
    0.5f, 0.166666657f, 0.0416664928f, 0.00833354332f, 0.00139323669f, 0.000197643501f,
};

float mathref_expf(float x) { return math_values_run_f32(math_program_exp, x); }

float mathref_expm1f(float x) { return math_values_run_f32(math_program_expm1, x); }

/* ---- log, log1p ---- */

/* (log(1+f) - f) / f^2 on f in [sqrt(1/2) - 1, sqrt(2) - 1], minimax
 * relative to log(1+f) (weighted error 2^-27.8). log1p uses it too. */
const float mathref_log_table[MATHREF_LOG_COUNT] = {
    -0.499999881f, 0.333333224f, -0.250016034f, 0.200022057f, -0.1660887f,
    0.141774371f,  -0.132400155f, 0.129298031f, -0.0765954629f,
};

/* A positive normal x = 2^e m with m in [sqrt(1/2), sqrt(2)): returns
 * f = m - 1 (exact) and e, by integer arithmetic on the bits. */
static float log_split(float x, int *e) {
  uint32_t shifted = bits_from_f32(x) - MATHREF_SQRT_HALF_BITS;
  *e = (int32_t)shifted >> 23;
  float m = f32_from_bits((shifted & 0x7fffffu) + MATHREF_SQRT_HALF_BITS);
  return m - 1.0f;
}

float mathref_logf(float x) { return math_values_run_f32(math_program_log, x); }

float mathref_log1pf(float x) { return math_values_run_f32(math_program_log1p, x); }

/* ---- tanh, logistic ---- */

/* (tanh(x) - x) / x^3 as a polynomial in z = x^2 on |x| < 0.5625, minimax
 * relative to tanh (weighted error 2^-33.0). */
const float mathref_tanh_table[MATHREF_TANH_COUNT] = {
    -0.333333313f, 0.133332282f, -0.0539496243f, 0.0217162166f, -0.00821394753f, 0.00217314181f,
};

float mathref_tanhf(float x) { return math_values_run_f32(math_program_tanh, x); }

float mathref_logisticf(float x) { return math_values_run_f32(math_program_logistic, x); }

/* ---- erf ---- */

/* Rows 0..6: (erf(x) - x) / x as a polynomial in z = x^2 on |x| < 1,
 * minimax relative to erf (weighted error 2^-29.4).
 * Rows 7..18: log(erfc(t)) as a polynomial in t - 1 on 1 <= t <= 4,
 * minimax weighted by erfc(t), i.e. for the absolute error of
 * erf = 1 - erfc (weighted error 2^-26.9). Expanded around t = 1, where
 * erfc matters most, so that Horner's sum does not cancel there. */
const float mathref_erf_table[MATHREF_ERF_COUNT] = {
    0.128379166f,  -0.37612626f,    0.112835787f,    -0.0268533472f,
    0.0051871622f, -0.00079978531f, 7.80690389e-05f,
    -1.84960556f,  -2.63895798f,    -0.843390882f,   -0.0384268388f,
    -0.00695002358f, 0.0495128967f, -0.0933454633f,  0.105303407f,
    -0.0735041723f, 0.0308199823f,  -0.007077788f,   0.000681281788f,
};

/* |x| < 1: x + x E(x^2). 1 <= |x|: 1 - e^B(t), t = min(|x|, 4) (past 3.92
 * erf rounds to 1, and so does 1 - erfc(4)), sign restored. */
float mathref_erff(float x) {
  float ax = abs_f32(x);
  float small = fmaf(x, polynomial_f32(mathref_erf_table, MATHREF_ERF_SMALL_COUNT, x * x), x);
  float t = min_f32(ax, 4.0f);
  float b = polynomial_f32(mathref_erf_table + MATHREF_ERF_SMALL_COUNT,
                           MATHREF_ERF_COUNT - MATHREF_ERF_SMALL_COUNT, t - 1.0f);
  float large = copysign_f32(1.0f - mathref_expf(b), x);
  float y = select_f32(ax < 1.0f, small, large);
  return select_f32(is_nan_f32(x), x + x, y);
}

/* ---- sin, cos, tan ---- */

/* The three tables below are fitted on |r| <= 1.015 pi/4, a margin for
 * an r that rounding leaves a hair past pi/4. */

/* (sin(r) - r) / r^3 as a polynomial in z = r^2, minimax relative to sin
 * (weighted error 2^-32.4). */
const float mathref_sin_table[MATHREF_SIN_COUNT] = {
    -0.166666672f, 0.00833337847f, -0.000198525056f, 2.82521728e-06f,
};

/* (cos(r) - 1) / r^2 in z = r^2, relative to cos (weighted error
 * 2^-36.9). */
const float mathref_cos_table[MATHREF_COS_COUNT] = {
    -0.5f, 0.0416666679f, -0.00138889765f, 2.48204542e-05f, -2.87125118e-07f,
};

/* (tan(r) - r) / r^3 in z = r^2, relative to tan (weighted error
 * 2^-29.1). */
const float mathref_tan_table[MATHREF_TAN_COUNT] = {
    0.333333552f, 0.133324727f, 0.0540818684f, 0.0211672075f,
    0.011137587f, -0.000297188497f, 0.00456883525f,
};

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

/* For x = M 2^E (M the 24-bit integer mantissa, E = biased exponent -
 * 150), row E + 1 holds floor(2/pi 2^(E+94)) mod 2^96 in three words,
 * most significant first: the only bits of 2/pi that matter to
 * x 2/pi mod 4 (higher ones add multiples of 4, lower ones less than
 * 2^-70). Printed by tests/gen/math_coefficients.py from exact integer
 * arithmetic on 110 digits of pi. Rows for E = -1..104, i.e. biased
 * exponents 149 (2^22) to 254. */
const uint32_t mathref_two_over_pi_windows[106][3] = {
    {0x145f306du, 0xc9c882a5u, 0x3f84eafau},
    {0x28be60dbu, 0x9391054au, 0x7f09d5f4u},
    {0x517cc1b7u, 0x27220a94u, 0xfe13abe8u},
    {0xa2f9836eu, 0x4e441529u, 0xfc2757d1u},
    {0x45f306dcu, 0x9c882a53u, 0xf84eafa3u},
    {0x8be60db9u, 0x391054a7u, 0xf09d5f47u},
    {0x17cc1b72u, 0x7220a94fu, 0xe13abe8fu},
    {0x2f9836e4u, 0xe441529fu, 0xc2757d1fu},
    {0x5f306dc9u, 0xc882a53fu, 0x84eafa3eu},
    {0xbe60db93u, 0x91054a7fu, 0x09d5f47du},
    {0x7cc1b727u, 0x220a94feu, 0x13abe8fau},
    {0xf9836e4eu, 0x441529fcu, 0x2757d1f5u},
    {0xf306dc9cu, 0x882a53f8u, 0x4eafa3eau},
    {0xe60db939u, 0x1054a7f0u, 0x9d5f47d4u},
    {0xcc1b7272u, 0x20a94fe1u, 0x3abe8fa9u},
    {0x9836e4e4u, 0x41529fc2u, 0x757d1f53u},
    {0x306dc9c8u, 0x82a53f84u, 0xeafa3ea6u},
    {0x60db9391u, 0x054a7f09u, 0xd5f47d4du},
    {0xc1b72722u, 0x0a94fe13u, 0xabe8fa9au},
    {0x836e4e44u, 0x1529fc27u, 0x57d1f534u},
    {0x06dc9c88u, 0x2a53f84eu, 0xafa3ea69u},
    {0x0db93910u, 0x54a7f09du, 0x5f47d4d3u},
    {0x1b727220u, 0xa94fe13au, 0xbe8fa9a6u},
    {0x36e4e441u, 0x529fc275u, 0x7d1f534du},
    {0x6dc9c882u, 0xa53f84eau, 0xfa3ea69bu},
    {0xdb939105u, 0x4a7f09d5u, 0xf47d4d37u},
    {0xb727220au, 0x94fe13abu, 0xe8fa9a6eu},
    {0x6e4e4415u, 0x29fc2757u, 0xd1f534ddu},
    {0xdc9c882au, 0x53f84eafu, 0xa3ea69bbu},
    {0xb9391054u, 0xa7f09d5fu, 0x47d4d377u},
    {0x727220a9u, 0x4fe13abeu, 0x8fa9a6eeu},
    {0xe4e44152u, 0x9fc2757du, 0x1f534ddcu},
    {0xc9c882a5u, 0x3f84eafau, 0x3ea69bb8u},
    {0x9391054au, 0x7f09d5f4u, 0x7d4d3770u},
    {0x27220a94u, 0xfe13abe8u, 0xfa9a6ee0u},
    {0x4e441529u, 0xfc2757d1u, 0xf534ddc0u},
    {0x9c882a53u, 0xf84eafa3u, 0xea69bb81u},
    {0x391054a7u, 0xf09d5f47u, 0xd4d37703u},
    {0x7220a94fu, 0xe13abe8fu, 0xa9a6ee06u},
    {0xe441529fu, 0xc2757d1fu, 0x534ddc0du},
    {0xc882a53fu, 0x84eafa3eu, 0xa69bb81bu},
    {0x91054a7fu, 0x09d5f47du, 0x4d377036u},
    {0x220a94feu, 0x13abe8fau, 0x9a6ee06du},
    {0x441529fcu, 0x2757d1f5u, 0x34ddc0dbu},
    {0x882a53f8u, 0x4eafa3eau, 0x69bb81b6u},
    {0x1054a7f0u, 0x9d5f47d4u, 0xd377036du},
    {0x20a94fe1u, 0x3abe8fa9u, 0xa6ee06dbu},
    {0x41529fc2u, 0x757d1f53u, 0x4ddc0db6u},
    {0x82a53f84u, 0xeafa3ea6u, 0x9bb81b6cu},
    {0x054a7f09u, 0xd5f47d4du, 0x377036d8u},
    {0x0a94fe13u, 0xabe8fa9au, 0x6ee06db1u},
    {0x1529fc27u, 0x57d1f534u, 0xddc0db62u},
    {0x2a53f84eu, 0xafa3ea69u, 0xbb81b6c5u},
    {0x54a7f09du, 0x5f47d4d3u, 0x77036d8au},
    {0xa94fe13au, 0xbe8fa9a6u, 0xee06db14u},
    {0x529fc275u, 0x7d1f534du, 0xdc0db629u},
    {0xa53f84eau, 0xfa3ea69bu, 0xb81b6c52u},
    {0x4a7f09d5u, 0xf47d4d37u, 0x7036d8a5u},
    {0x94fe13abu, 0xe8fa9a6eu, 0xe06db14au},
    {0x29fc2757u, 0xd1f534ddu, 0xc0db6295u},
    {0x53f84eafu, 0xa3ea69bbu, 0x81b6c52bu},
    {0xa7f09d5fu, 0x47d4d377u, 0x036d8a56u},
    {0x4fe13abeu, 0x8fa9a6eeu, 0x06db14acu},
    {0x9fc2757du, 0x1f534ddcu, 0x0db62959u},
    {0x3f84eafau, 0x3ea69bb8u, 0x1b6c52b3u},
    {0x7f09d5f4u, 0x7d4d3770u, 0x36d8a566u},
    {0xfe13abe8u, 0xfa9a6ee0u, 0x6db14accu},
    {0xfc2757d1u, 0xf534ddc0u, 0xdb629599u},
    {0xf84eafa3u, 0xea69bb81u, 0xb6c52b32u},
    {0xf09d5f47u, 0xd4d37703u, 0x6d8a5664u},
    {0xe13abe8fu, 0xa9a6ee06u, 0xdb14acc9u},
    {0xc2757d1fu, 0x534ddc0du, 0xb6295993u},
    {0x84eafa3eu, 0xa69bb81bu, 0x6c52b327u},
    {0x09d5f47du, 0x4d377036u, 0xd8a5664fu},
    {0x13abe8fau, 0x9a6ee06du, 0xb14acc9eu},
    {0x2757d1f5u, 0x34ddc0dbu, 0x6295993cu},
    {0x4eafa3eau, 0x69bb81b6u, 0xc52b3278u},
    {0x9d5f47d4u, 0xd377036du, 0x8a5664f1u},
    {0x3abe8fa9u, 0xa6ee06dbu, 0x14acc9e2u},
    {0x757d1f53u, 0x4ddc0db6u, 0x295993c4u},
    {0xeafa3ea6u, 0x9bb81b6cu, 0x52b32788u},
    {0xd5f47d4du, 0x377036d8u, 0xa5664f10u},
    {0xabe8fa9au, 0x6ee06db1u, 0x4acc9e21u},
    {0x57d1f534u, 0xddc0db62u, 0x95993c43u},
    {0xafa3ea69u, 0xbb81b6c5u, 0x2b327887u},
    {0x5f47d4d3u, 0x77036d8au, 0x5664f10eu},
    {0xbe8fa9a6u, 0xee06db14u, 0xacc9e21cu},
    {0x7d1f534du, 0xdc0db629u, 0x5993c439u},
    {0xfa3ea69bu, 0xb81b6c52u, 0xb3278872u},
    {0xf47d4d37u, 0x7036d8a5u, 0x664f10e4u},
    {0xe8fa9a6eu, 0xe06db14au, 0xcc9e21c8u},
    {0xd1f534ddu, 0xc0db6295u, 0x993c4390u},
    {0xa3ea69bbu, 0x81b6c52bu, 0x32788720u},
    {0x47d4d377u, 0x036d8a56u, 0x64f10e41u},
    {0x8fa9a6eeu, 0x06db14acu, 0xc9e21c82u},
    {0x1f534ddcu, 0x0db62959u, 0x93c43904u},
    {0x3ea69bb8u, 0x1b6c52b3u, 0x27887208u},
    {0x7d4d3770u, 0x36d8a566u, 0x4f10e410u},
    {0xfa9a6ee0u, 0x6db14accu, 0x9e21c820u},
    {0xf534ddc0u, 0xdb629599u, 0x3c439041u},
    {0xea69bb81u, 0xb6c52b32u, 0x78872083u},
    {0xd4d37703u, 0x6d8a5664u, 0xf10e4107u},
    {0xa9a6ee06u, 0xdb14acc9u, 0xe21c820fu},
    {0x534ddc0du, 0xb6295993u, 0xc439041fu},
    {0xa69bb81bu, 0x6c52b327u, 0x8872083fu},
    {0x4d377036u, 0xd8a5664fu, 0x10e4107fu},
};

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

/* (atan(t) - t) / t^3 in z = t^2 on |t| <= tan(pi/8), minimax relative to
 * atan (weighted error 2^-33.9). */
const float mathref_atan_table[MATHREF_ATAN_COUNT] = {
    -0.333333313f, 0.199998021f, -0.142791316f, 0.110095896f, -0.0828325972f, 0.0435149595f,
};

/* atan2: math_program_atan2 (math_algorithms.c), run on C values. */
float mathref_atan2f(float y, float x) {
  MathTarget t = math_values_target();
  return math_value_as_f32(math_program_atan2(&t, &math_format_f32, math_value_f32(y), math_value_f32(x)));
}

/* ---- pow ---- */

/* In f64. Rows 0..5: (log(1+f) - 2s) / s^3 as a polynomial in s^2,
 * s = f / (2 + f), on f in [sqrt(1/2) - 1, sqrt(2) - 1], relative to
 * log(1+f) (weighted error 2^-51). Rows 6..15: 2^r on |r| <= 1/2,
 * relative (error 2^-46). */
const double mathref_pow_table[MATHREF_POW_COUNT] = {
    0.66666666666595398,  0.40000000050591267,   0.28571417147195344,
    0.22223380520689606,  0.18123176865870574,   0.16826593167730239,
    1.0000000000000127,   0.69314718055987545,   0.24022650695651859,
    0.055504108668529277, 0.0096181291915458447, 0.0013333557641165073,
    0.00015403435335019516, 1.525297129191657e-05, 1.3259320728290339e-06,
    1.015291062392348e-07,
};

/* log2|x| in f64 for |x| > 0 finite: e + log(1+f) log2(e). */
static double pow_log2(float ax) {
  int subnormal = ax < 0x1p-126f;
  int e;
  double f = (double)log_split(select_f32(subnormal, ax * 0x1p23f, ax), &e);
  e -= select_i32(subnormal, 23, 0);
  double s = f / (2.0 + f);
  double s2 = s * s;
  double log1p_f = 2.0 * s + s * s2 * polynomial_f64(mathref_pow_table, MATHREF_POW_LOG_COUNT, s2);
  return (double)e + log1p_f * MATHREF_LOG2E_F64;
}

/* 2^z in f64, rounded once to f32 at the end. z is clamped to
 * [-160, 130], which already gives 0 and inf in f32; 2^n is a normal
 * double there, so the only rounding of a subnormal result is the final
 * conversion. A NaN z becomes 0 here (the caller's select returns NaN),
 * so that no NaN is converted to an integer. */
static float pow_exp2(double z) {
  double zc = select_f64(z != z, 0.0, z < -160.0 ? -160.0 : z > 130.0 ? 130.0 : z);
  double n = (zc + MATHREF_ROUND_SHIFTER_F64) - MATHREF_ROUND_SHIFTER_F64;
  double r = zc - n;
  double p = polynomial_f64(mathref_pow_table + MATHREF_POW_LOG_COUNT,
                            MATHREF_POW_COUNT - MATHREF_POW_LOG_COUNT, r);
  uint64_t scale_bits = (uint64_t)((int64_t)n + 1023) << 52;
  double scale;
  memcpy(&scale, &scale_bits, sizeof scale);
  return (float)(p * scale);
}

/* pow(x, y) = 2^(y log2|x|), then the sign and the special cases of
 * C99 Annex F: y = 0 or x = 1 give 1 (even with NaN), as does |x| = 1
 * with infinite y; a negative finite x with a non-integer finite y gives
 * NaN; a negative x (or -0, -inf) with an odd integer y gives the negative
 * result. log2|x| is -inf for 0 and +inf for inf, so y log2|x| is ±inf
 * or NaN there and 2^z does the rest. */
float mathref_powf(float x, float y) {
  float ax = abs_f32(x), ay = abs_f32(y);
  double l2 = pow_log2(ax);
  l2 = select_f64(ax == 0.0f, -INFINITY, l2);
  l2 = select_f64(ax == F32_INFINITY, INFINITY, l2);
  float result = pow_exp2((double)y * l2);
  /* |y| below 2^23 rounds to an integer by adding and subtracting 2^23;
   * from 2^23 up every float is an integer, and from 2^24 up an even one. */
  float ay_rounded = select_f32(ay < 0x1p23f, (ay + 0x1p23f) - 0x1p23f, ay);
  int y_integer = ay_rounded == ay;
  int y_odd = y_integer & ((int)select_f32(ay < 0x1p24f, ay_rounded, 0.0f) & 1);
  int negative_x = (bits_from_f32(x) >> 31) != 0;
  result = select_f32(negative_x & y_odd, -result, result);
  int invalid = (x < 0.0f) & (x > -F32_INFINITY) & !y_integer;
  result = select_f32(invalid | is_nan_f32(x) | is_nan_f32(y), quiet_nan_f32(), result);
  int one = (y == 0.0f) | (x == 1.0f) | ((ax == 1.0f) & (ay == F32_INFINITY));
  return select_f32(one, 1.0f, result);
}

/* ---- cbrt ---- */

/* A first guess of cbrt(m) on [1, 2), minimax relative (error 2^-16.7);
 * one Newton step then makes it exact to about 2^-33. Rows 5 and 6 are
 * cbrt(2) and cbrt(4), rounded to f32. */
const float mathref_cbrt_table[MATHREF_CBRT_COUNT] = {
    0.506979406f, 0.718153834f, -0.300611436f, 0.0860912874f, -0.0106038861f,
    0x1.428a30p+0f, 0x1.965feap+0f,
};

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
