/* The inline math functions (f32 here and in math_reference.c, f64 in
 * math_reference_f64.c) as C functions on values: the reference that the
 * generated code (emit_x86 in SIMD lanes, emit_ptx in PTX) must match bit
 * for bit; generated code never calls libm. Each runs its algorithm of
 * math_algorithms*.c (written once over math_program.h's primitives) on C
 * values; the emitters run the same algorithms on their own primitives.
 * The tables below are defined in math_tables.c.
 *
 * Each function is branch-free: every lane runs the same sequence of IEEE
 * operations (fmaf is the hardware FMA), and where a scalar program would
 * branch, this code computes both sides and selects. A range reduction, a
 * polynomial from one coefficient table per function (fitted by
 * tests/gen/math_coefficients.py) and a few selects for the special cases
 * (±0, ±inf, NaN, subnormals, overflow, underflow) make each function.
 *
 * The accuracy of each, in ulps against the C library's double function
 * rounded to f32, is measured by tests/unit/test_math_ulp.c and listed in
 * docs/math.md; the bounds there are what the test enforces. */
#ifndef AXLE_MATH_REFERENCE_H
#define AXLE_MATH_REFERENCE_H

#include <stdint.h>

/* ---- The tables and constants, for the emitters to load ----
 * Coefficients c[0], c[1], ... of c[0] + c[1] v + ...; what each
 * approximates is said above its definition in math_tables.c. */
#define MATHREF_EXP_COUNT 5
#define MATHREF_EXPM1_COUNT 6
#define MATHREF_LOG_COUNT 9 /* log1p uses it too */
#define MATHREF_TANH_COUNT 6
#define MATHREF_ERF_COUNT 19
#define MATHREF_ERF_SMALL_COUNT 7 /* rows 0..6 for |x| < 1, the rest beyond */
#define MATHREF_SIN_COUNT 4
#define MATHREF_COS_COUNT 5
#define MATHREF_TAN_COUNT 7
#define MATHREF_ATAN_COUNT 6
#define MATHREF_CBRT_COUNT 7
#define MATHREF_CBRT_GUESS_COUNT 5 /* then cbrt(2), cbrt(4) */
#define MATHREF_POW_COUNT 16
#define MATHREF_POW_LOG_COUNT 6 /* rows 0..5 for log, the rest for 2^r */

extern const float mathref_exp_table[MATHREF_EXP_COUNT];
extern const float mathref_expm1_table[MATHREF_EXPM1_COUNT];
extern const float mathref_log_table[MATHREF_LOG_COUNT];
extern const float mathref_tanh_table[MATHREF_TANH_COUNT];
extern const float mathref_erf_table[MATHREF_ERF_COUNT];
extern const float mathref_sin_table[MATHREF_SIN_COUNT];
extern const float mathref_cos_table[MATHREF_COS_COUNT];
extern const float mathref_tan_table[MATHREF_TAN_COUNT];
extern const float mathref_atan_table[MATHREF_ATAN_COUNT];
extern const float mathref_cbrt_table[MATHREF_CBRT_COUNT];
extern const double mathref_pow_table[MATHREF_POW_COUNT];
/* Row E + 1 (x = M 2^E, M the 24-bit mantissa): the 96 bits of 2/pi that
 * sin/cos/tan's Payne-Hanek reduction multiplies M by, for E = -1..104. */
extern const uint32_t mathref_two_over_pi_windows[106][3];

/* Added and subtracted, rounds a float of magnitude below 2^22 (a double
 * below 2^51) to an integer, ties to even: the sum's ulp is 1. */
#define MATHREF_ROUND_SHIFTER_F32 0x1.8p23f
#define MATHREF_ROUND_SHIFTER_F64 0x1.8p52

/* ln 2 in two parts. Inside an FMA, x - n LN2_HI is exact for the x that
 * exp lets through: the difference is below 0.35 and has no bits below
 * 2^-25, so it fits a float, and x - n ln2 loses nothing to
 * cancellation. */
#define MATHREF_LN2_HI 0x1.62e43p-1f
#define MATHREF_LN2_LO -0x1.05c61p-29f
#define MATHREF_LOG2E 0x1.715476p+0f
#define MATHREF_LOG2E_F64 0x1.71547652b82fep+0

/* The bits of sqrt(1/2): a float minus these bits splits into an exponent
 * and a mantissa in [sqrt(1/2), sqrt(2)). */
#define MATHREF_SQRT_HALF_BITS 0x3f3504f3u

/* pi/2 in three f32 parts, whose sum misses pi/2 by 2^-76; pi/4 in two. */
#define MATHREF_PIO2_1 0x1.921fb6p+0f
#define MATHREF_PIO2_2 -0x1.777a5cp-25f
#define MATHREF_PIO2_3 -0x1.ee59dap-50f
#define MATHREF_PIO4_HI 0x1.921fb6p-1f
#define MATHREF_PIO4_LO -0x1.777a5cp-26f
#define MATHREF_TWO_OVER_PI 0x1.45f306p-1f
#define MATHREF_TAN_PI_8 0x1.a8279ap-2f

/* Below this magnitude sin/cos/tan reduce by Cody-Waite (the quotient
 * x 2/pi still fits the rounding trick), from it on by Payne-Hanek. */
#define MATHREF_TRIG_SMALL_LIMIT 0x1p22f

/* ---- f64 (math_reference_f64.c) ---- */
#define MATHREF_EXP_F64_COUNT 12
#define MATHREF_LOG_F64_COUNT 10
#define MATHREF_ATAN_F64_COUNT 21
extern const double mathref_exp_f64_table[MATHREF_EXP_F64_COUNT];
extern const double mathref_log_f64_table[MATHREF_LOG_F64_COUNT];
extern const double mathref_atan_f64_table[MATHREF_ATAN_F64_COUNT];
/* ln 2 = LN2_HI (42 bits, so n LN2_HI is exact for |n| < 2^11) + LN2_LO */
#define MATHREF_LN2_HI_F64 0x1.62e42fefa3800p-1
#define MATHREF_LN2_LO_F64 0x1.ef35793c76730p-45
#define MATHREF_LN2_F64 0x1.62e42fefa39efp-1
#define MATHREF_PIO4_HI_F64 0x1.921fb54442d18p-1
#define MATHREF_PIO4_LO_F64 0x1.1a62633145c07p-55
#define MATHREF_TAN_PI_8_F64 0x1.a827999fcef32p-2
#define MATHREF_SQRT_HALF_BITS_F64 UINT64_C(0x3fe6a09e667f3bcd)
#define MATHREF_SIN_F64_COUNT 8
#define MATHREF_COS_F64_COUNT 7
#define MATHREF_TWO_OVER_PI_WORDS 20
extern const double mathref_sin_f64_table[MATHREF_SIN_F64_COUNT];
extern const double mathref_cos_f64_table[MATHREF_COS_F64_COUNT];
extern const uint64_t mathref_two_over_pi_words[MATHREF_TWO_OVER_PI_WORDS];
/* pi/2 in three parts (33 + 33 + 53 bits) and in two; 2/pi */
#define MATHREF_PIO2_1_F64 0x1.921fb54400000p+0
#define MATHREF_PIO2_2_F64 0x1.0b4611a600000p-34
#define MATHREF_PIO2_3_F64 0x1.3198a2e037073p-69
#define MATHREF_PIO2_HI_F64 0x1.921fb54442d18p+0
#define MATHREF_PIO2_LO_F64 0x1.1a62633145c07p-54
#define MATHREF_TWO_OVER_PI_F64 0x1.45f306dc9c883p-1
#define MATHREF_POW_LOG_F64_COUNT 13
extern const double mathref_pow_log_f64_table[MATHREF_POW_LOG_F64_COUNT];
/* pow's two-part constants: log2(e), 2/3 and ln 2 (MATHREF_LN2_F64 + this) */
#define MATHREF_LOG2E_LO_F64 0x1.777d0ffda0d24p-56
#define MATHREF_TWO_THIRDS_HI_F64 0x1.5555555555555p-1
#define MATHREF_TWO_THIRDS_LO_F64 0x1.5555555555555p-55
#define MATHREF_LN2_LO_EXACT_F64 0x1.abc9e3b39803fp-56
#define MATHREF_ERF_SMALL_F64_COUNT 19
#define MATHREF_ERFC_F64_ROWS 10
#define MATHREF_ERFC_F64_COUNT 20
extern const double mathref_erf_small_f64_table[MATHREF_ERF_SMALL_F64_COUNT];
extern const double mathref_erfc_f64_rows[MATHREF_ERFC_F64_ROWS][MATHREF_ERFC_F64_COUNT];
#define MATHREF_TWO_OVER_SQRT_PI_HI_F64 0x1.20dd750429b6dp+0
#define MATHREF_TWO_OVER_SQRT_PI_LO_F64 0x1.1ae3a914fed80p-56

/* ---- The functions ---- */

float mathref_expf(float x);
float mathref_expm1f(float x);
float mathref_logf(float x);
float mathref_log1pf(float x);
float mathref_tanhf(float x);
float mathref_logisticf(float x);
float mathref_erff(float x);
float mathref_sinf(float x);
float mathref_cosf(float x);
float mathref_tanf(float x);
float mathref_atan2f(float y, float x);
float mathref_powf(float x, float y);
float mathref_cbrtf(float x);
float mathref_sqrtf(float x);
float mathref_rsqrtf(float x);
/* compositions of the above */
float mathref_atanf(float x);
float mathref_asinf(float x);
float mathref_acosf(float x);
float mathref_sinhf(float x);
float mathref_coshf(float x);
float mathref_asinhf(float x);
float mathref_acoshf(float x);
float mathref_atanhf(float x);
float mathref_round_afzf(float x);

/* f64: the same algorithms where they carry over, longer polynomials */
double mathref_exp(double x);
double mathref_expm1(double x);
double mathref_log(double x);
double mathref_log1p(double x);
double mathref_atan2(double y, double x);
double mathref_cbrt(double x);
double mathref_rsqrt(double x);
double mathref_atan(double x);
double mathref_asin(double x);
double mathref_acos(double x);
double mathref_sinh(double x);
double mathref_cosh(double x);
double mathref_tanh(double x);
double mathref_logistic(double x);
double mathref_asinh(double x);
double mathref_acosh(double x);
double mathref_atanh(double x);
double mathref_round_afz(double x);
double mathref_sin(double x);
double mathref_cos(double x);
double mathref_tan(double x);
double mathref_erf(double x);
double mathref_pow(double x, double y);

#endif
