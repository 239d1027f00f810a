/* The math functions' algorithms, each written once over the primitives
 * of math_program.h; the targets (C values, x86, PTX) give them meaning.
 * docs/math.md states each algorithm and its accuracy. erf and pow are in
 * math_algorithms_erf_pow.c, sin, cos and tan in math_algorithms_trig.c;
 * the helpers they share (mp_*) are here, declared in math_program.h.
 *
 * Rules this file keeps, so that every target computes the same bits:
 *   - no branches on data: both sides are computed and a select picks one;
 *   - every float operation is one primitive (one rounding; fma one fused
 *     rounding; min and max as the primitives define them);
 *   - no call has two arguments that emit operations: C leaves the order
 *     of their evaluation open, and the emitted text (x86 code, PTX) must
 *     not depend on the C compiler; such values are named first, in order.
 * f32 and f64 share an algorithm where its shape is the same; a
 * MathFormat gives the width's types, exponent field, constants and
 * tables. */
#include "kernel/math_program.h"

#include <math.h>
#include <string.h>

#include "kernel/math_reference.h"

const MathFormat math_format_f32 = {
    .real = MATH_F32,
    .integer = MATH_I32,
    .mantissa_bits = 23,
    .exponent_bias = 127,
    .round_shifter = MATHREF_ROUND_SHIFTER_F32,
    .log2e = MATHREF_LOG2E,
    .ln2_hi = MATHREF_LN2_HI,
    .ln2_lo = MATHREF_LN2_LO,
    .exp_low = -104.0,
    .exp_high = 89.0,
    .exp_table = {.f32 = mathref_exp_table, .count = MATHREF_EXP_COUNT},
    .expm1_low = -20.0,
    .expm1_tiny = 0x1p-25,
    .expm1_table = {.f32 = mathref_expm1_table, .count = MATHREF_EXPM1_COUNT},
    .expm1_keeps_lost = false,
    .subnormal_limit = 0x1p-126,
    .log1p_tiny = 0x1p-24,
    .subnormal_shift = 23,
    .sqrt_half_bits = MATHREF_SQRT_HALF_BITS,
    .log_table = {.f32 = mathref_log_table, .count = MATHREF_LOG_COUNT},
    .log_atanh_form = false,
    .hyperbolic_limit = 88.0,
    .inverse_hyperbolic_limit = 0x1p12,
    .ln2 = 0x1.62e430p-1,
    .tan_pi_8 = MATHREF_TAN_PI_8,
    .pio4_hi = MATHREF_PIO4_HI,
    .pio4_lo = MATHREF_PIO4_LO,
    .atan_table = {.f32 = mathref_atan_table, .count = MATHREF_ATAN_COUNT},
    .atan2_scales = false,
    .cbrt_subnormal_shift = 24,
    .cbrt_offset = 100,
    .cbrt_newton_steps = 1,
};

const MathFormat math_format_f64 = {
    .real = MATH_F64,
    .integer = MATH_I64,
    .mantissa_bits = 52,
    .exponent_bias = 1023,
    .round_shifter = MATHREF_ROUND_SHIFTER_F64,
    .log2e = MATHREF_LOG2E_F64,
    .ln2_hi = MATHREF_LN2_HI_F64,
    .ln2_lo = MATHREF_LN2_LO_F64,
    .exp_low = -746.0,
    .exp_high = 710.0,
    .exp_table = {.f64 = mathref_exp_f64_table, .count = MATHREF_EXP_F64_COUNT},
    .expm1_low = -40.0,
    .expm1_tiny = 0x1p-54,
    .expm1_table = {.f64 = mathref_exp_f64_table, .count = MATHREF_EXP_F64_COUNT},
    .expm1_keeps_lost = true,
    .subnormal_limit = 0x1p-1022,
    .log1p_tiny = 0x1p-54,
    .subnormal_shift = 54,
    .sqrt_half_bits = MATHREF_SQRT_HALF_BITS_F64,
    .log_table = {.f64 = mathref_log_f64_table, .count = MATHREF_LOG_F64_COUNT},
    .log_atanh_form = true,
    .hyperbolic_limit = 709.0,
    .inverse_hyperbolic_limit = 0x1p28,
    .ln2 = MATHREF_LN2_F64,
    .tan_pi_8 = MATHREF_TAN_PI_8_F64,
    .pio4_hi = MATHREF_PIO4_HI_F64,
    .pio4_lo = MATHREF_PIO4_LO_F64,
    .atan_table = {.f64 = mathref_atan_f64_table, .count = MATHREF_ATAN_F64_COUNT},
    .atan2_scales = true,
    .cbrt_subnormal_shift = 54,
    .cbrt_offset = 1000,
    .cbrt_newton_steps = 2,
};

MathVal mp_real(MathTarget *t, MathType real, double c) {
  if (real == MATH_F32) {
    float single = (float)c;
    uint32_t bits;
    memcpy(&bits, &single, sizeof bits);
    return t->constant(t, MATH_F32, bits);
  }
  uint64_t bits;
  memcpy(&bits, &c, sizeof bits);
  return t->constant(t, MATH_F64, bits);
}

MathVal mp_int(MathTarget *t, MathType integer, int64_t c) {
  uint64_t bits = (uint64_t)c;
  if (integer == MATH_I32) bits &= 0xffffffffu;
  return t->constant(t, integer, bits);
}

int mp_scope_begin(MathTarget *t) { return t->scope_begin ? t->scope_begin(t) : 0; }

MathVal mp_scope_end(MathTarget *t, int scope, MathVal result) {
  return t->scope_end ? t->scope_end(t, scope, result) : result;
}

/* ---- helpers shared by the algorithms ---- */

static double table_entry(const MathTable *table, int k) { return table->f32 ? table->f32[k] : table->f64[k]; }

/* Horner's rule, one fma per coefficient: c[0] + c[1] v + ... */
MathVal mp_polynomial(MathTarget *t, MathType real, const MathTable *table, MathVal v) {
  MathVal p = mp_real(t, real, table_entry(table, table->count - 1));
  for (int k = table->count - 2; k >= 0; k--) {
    MathVal ck = mp_real(t, real, table_entry(table, k));
    p = mp_op(t, MATH_FMA, real, p, v, ck);
  }
  return p;
}

/* min(max(x, low), high) */
static MathVal clamp(MathTarget *t, MathType real, MathVal x, double low, double high) {
  MathVal rlow = mp_real(t, real, low);
  MathVal above = mp_binary(t, MATH_MAX, real, x, rlow);
  MathVal rhigh = mp_real(t, real, high);
  return mp_binary(t, MATH_MIN, real, above, rhigh);
}

/* 2^n for an integer n of the normal exponents, built in the exponent
 * field. */
MathVal mp_power_of_two(MathTarget *t, const MathFormat *f, MathVal n) {
  MathVal bias = mp_int(t, f->integer, f->exponent_bias);
  MathVal biased = mp_binary(t, MATH_ADD, f->integer, n, bias);
  MathVal bits = mp_shift(t, MATH_SHIFT_LEFT, f->integer, biased, f->mantissa_bits);
  return mp_unary(t, MATH_FROM_BITS, f->integer, bits);
}

/* a + b = s + *e exactly (Knuth's two-sum). */
MathVal mp_two_sum(MathTarget *t, MathType real, MathVal a, MathVal b, MathVal *e) {
  MathVal s = mp_binary(t, MATH_ADD, real, a, b);
  MathVal back = mp_binary(t, MATH_SUB, real, s, a);
  MathVal a_part = mp_binary(t, MATH_SUB, real, a, mp_binary(t, MATH_SUB, real, s, back));
  *e = mp_binary(t, MATH_ADD, real, a_part, mp_binary(t, MATH_SUB, real, b, back));
  return s;
}

/* a b - p exactly, p = a b rounded: one fma. */
MathVal mp_product_error(MathTarget *t, MathType real, MathVal a, MathVal b, MathVal p) {
  return mp_op(t, MATH_FMA, real, a, b, mp_unary(t, MATH_NEGATE, real, p));
}

/* The last step of every function: a NaN x returns x + x (quieted). */
MathVal mp_nan_passed(MathTarget *t, MathType real, MathVal x, MathVal y) {
  MathVal nan = mp_unary(t, MATH_IS_NAN, real, x);
  MathVal quieted = mp_binary(t, MATH_ADD, real, x, x);
  return mp_select(t, real, nan, quieted, y);
}

/* ---- exp ---- */

/* n = round(x log2 e), from one fma with the rounding constant: a float
 * holding an integer. */
static MathVal exp_quotient(MathTarget *t, const MathFormat *f, MathVal x) {
  MathType real = f->real;
  MathVal log2e = mp_real(t, real, f->log2e);
  MathVal shifter = mp_real(t, real, f->round_shifter);
  MathVal shifted = mp_op(t, MATH_FMA, real, x, log2e, shifter);
  return mp_binary(t, MATH_SUB, real, shifted, shifter);
}

/* x = n ln2 + r with |r| <= ln2/2, ln2 in two parts (x - n LN2_HI is
 * exact inside the fma, see MATHREF_LN2_HI). Returns r, and n. */
static MathVal exp_reduce(MathTarget *t, const MathFormat *f, MathVal x, MathVal *n) {
  MathType real = f->real;
  *n = exp_quotient(t, f, x);
  MathVal minus_ln2_hi = mp_real(t, real, -f->ln2_hi);
  MathVal r = mp_op(t, MATH_FMA, real, *n, minus_ln2_hi, x);
  MathVal minus_ln2_lo = mp_real(t, real, -f->ln2_lo);
  return mp_op(t, MATH_FMA, real, *n, minus_ln2_lo, r);
}

/* exp(x) = 2^n e^r, e^r = 1 + r + r^2 P(r). x is first clamped to where
 * the result is neither 0 nor inf anyway. 2^n is applied in two halves,
 * each a normal power of two, the first product exact; or by the
 * target's scale (MathTarget.scale), which gives the same bits. A
 * subnormal result is rounded twice, p to the format and then onto the
 * subnormal grid (at most 0.75 ulp; docs/math.md says why it stays). */
MathVal math_program_exp(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real, integer = f->integer;
  MathVal n;
  MathVal r = exp_reduce(t, f, clamp(t, real, x, f->exp_low, f->exp_high), &n);
  MathVal poly = mp_polynomial(t, real, &f->exp_table, r);
  MathVal r2 = mp_binary(t, MATH_MUL, real, r, r);
  MathVal one = mp_real(t, real, 1.0);
  MathVal p = mp_binary(t, MATH_ADD, real, one, mp_op(t, MATH_FMA, real, r2, poly, r));
  MathVal y;
  if (!t->scale || !t->scale(t, real, p, n, &y)) {
    MathVal ni = mp_unary(t, MATH_TO_INT, real, n);
    MathVal n1 = mp_shift(t, MATH_SHIFT_RIGHT, integer, ni, 1);
    MathVal n2 = mp_binary(t, MATH_SUB, integer, ni, n1);
    MathVal scale1 = mp_power_of_two(t, f, n1);
    MathVal scale2 = mp_power_of_two(t, f, n2);
    y = mp_binary(t, MATH_MUL, real, mp_binary(t, MATH_MUL, real, p, scale1), scale2);
  }
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, y));
}

/* ---- expm1 ---- */

/* q = e^r - 1 for the reduced r of x: r + r^2 P(r) (f32); at f64 r also
 * keeps what its rounding lost (r_lost), since r's own relative error
 * would be a whole ulp of q: q = r + (r^2 P(r) + r_lost (1 + r)), the
 * small terms first. */
static MathVal expm1_reduced(MathTarget *t, const MathFormat *f, MathVal x, MathVal *n) {
  MathType real = f->real;
  if (!f->expm1_keeps_lost) {
    MathVal r = exp_reduce(t, f, x, n);
    MathVal poly = mp_polynomial(t, real, &f->expm1_table, r);
    MathVal r2 = mp_binary(t, MATH_MUL, real, r, r);
    return mp_op(t, MATH_FMA, real, r2, poly, r);
  }
  *n = exp_quotient(t, f, x);
  MathVal minus_ln2_hi = mp_real(t, real, -f->ln2_hi);
  MathVal r_exact = mp_op(t, MATH_FMA, real, *n, minus_ln2_hi, x);
  MathVal minus_ln2_lo = mp_real(t, real, -f->ln2_lo);
  MathVal lo = mp_binary(t, MATH_MUL, real, *n, minus_ln2_lo);
  MathVal r = mp_binary(t, MATH_ADD, real, r_exact, lo);
  MathVal r_lost = mp_binary(t, MATH_ADD, real, mp_binary(t, MATH_SUB, real, r_exact, r), lo);
  MathVal poly = mp_polynomial(t, real, &f->expm1_table, r);
  MathVal r2 = mp_binary(t, MATH_MUL, real, r, r);
  MathVal lost_part = mp_op(t, MATH_FMA, real, r_lost, r, r_lost);
  return mp_binary(t, MATH_ADD, real, r, mp_op(t, MATH_FMA, real, r2, poly, lost_part));
}

/* expm1(x) = 2^n (1 + q) - 1, computed as 2 (2^(n-1) q + (2^(n-1) - 1/2)):
 * the halves keep 2^(n-1) finite up to the largest n, and 2^(n-1) - 1/2
 * is exact for the n where cancellation could hurt. n = 0 returns q
 * itself; tiny |x| returns x (keeps -0). */
MathVal math_program_expm1(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real, integer = f->integer;
  MathVal n;
  MathVal q = expm1_reduced(t, f, clamp(t, real, x, f->expm1_low, f->exp_high), &n);
  MathVal one = mp_int(t, integer, 1);
  MathVal half = mp_power_of_two(t, f, mp_binary(t, MATH_SUB, integer, mp_unary(t, MATH_TO_INT, real, n), one));
  MathVal one_half = mp_real(t, real, 0.5);
  MathVal half_less = mp_binary(t, MATH_SUB, real, half, one_half);
  MathVal two = mp_real(t, real, 2.0);
  MathVal y = mp_binary(t, MATH_MUL, real, two, mp_op(t, MATH_FMA, real, half, q, half_less));
  MathVal zero = mp_real(t, real, 0.0);
  y = mp_select(t, real, mp_binary(t, MATH_EQUAL, real, n, zero), q, y);
  MathVal tiny = mp_real(t, real, f->expm1_tiny);
  y = mp_select(t, real, mp_binary(t, MATH_LESS, real, mp_unary(t, MATH_ABS, real, x), tiny), x, y);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, y));
}

/* ---- log, log1p ---- */

/* A positive normal x = 2^e m with m in [sqrt(1/2), sqrt(2)): returns
 * f = m - 1 (exact) and e, by integer arithmetic on the bits. */
MathVal mp_log_split(MathTarget *t, const MathFormat *f, MathVal x, MathVal *e) {
  MathType real = f->real, integer = f->integer;
  MathVal sqrt_half = mp_int(t, integer, (int64_t)f->sqrt_half_bits);
  MathVal shifted = mp_binary(t, MATH_SUB, integer, mp_unary(t, MATH_BITS, real, x), sqrt_half);
  *e = mp_shift(t, MATH_SHIFT_RIGHT, integer, shifted, f->mantissa_bits);
  MathVal mantissa_mask = mp_int(t, integer, (int64_t)((UINT64_C(1) << f->mantissa_bits) - 1));
  MathVal mantissa = mp_binary(t, MATH_AND, integer, shifted, mantissa_mask);
  MathVal m = mp_unary(t, MATH_FROM_BITS, integer, mp_binary(t, MATH_ADD, integer, mantissa, sqrt_half));
  MathVal one = mp_real(t, real, 1.0);
  return mp_binary(t, MATH_SUB, real, m, one);
}

/* e ln2 + log(1 + f) + extra, the small terms summed first. f32:
 * log(1 + f) = f + f^2 P(f). f64: log(1 + f) = 2 atanh(s), s = f/(2 + f),
 * written f - (f^2/2 - s (f^2/2 + R)) with R = 2 atanh(s)/s - 2 the series
 * in z = s^2, so that s's rounding only touches the small part. */
static MathVal log_combine(MathTarget *t, const MathFormat *f, MathVal e, MathVal m1, MathVal extra) {
  MathType real = f->real;
  MathVal ef = mp_unary(t, MATH_TO_FLOAT, f->integer, e);
  if (!f->log_atanh_form) {
    MathVal p = mp_polynomial(t, real, &f->log_table, m1);
    MathVal ln2_lo = mp_real(t, real, f->ln2_lo);
    MathVal low = mp_op(t, MATH_FMA, real, ef, ln2_lo, extra);
    MathVal m1_squared = mp_binary(t, MATH_MUL, real, m1, m1);
    MathVal tail = mp_op(t, MATH_FMA, real, m1_squared, p, low);
    MathVal ln2_hi = mp_real(t, real, f->ln2_hi);
    return mp_op(t, MATH_FMA, real, ef, ln2_hi, mp_binary(t, MATH_ADD, real, m1, tail));
  }
  MathVal two = mp_real(t, real, 2.0);
  MathVal s = mp_binary(t, MATH_DIV, real, m1, mp_binary(t, MATH_ADD, real, two, m1));
  MathVal z = mp_binary(t, MATH_MUL, real, s, s);
  MathVal r = mp_binary(t, MATH_MUL, real, z, mp_polynomial(t, real, &f->log_table, z));
  MathVal half = mp_real(t, real, 0.5);
  MathVal hfsq = mp_binary(t, MATH_MUL, real, mp_binary(t, MATH_MUL, real, half, m1), m1);
  MathVal ln2_lo = mp_real(t, real, f->ln2_lo);
  MathVal low = mp_op(t, MATH_FMA, real, ef, ln2_lo, extra);
  MathVal small = mp_op(t, MATH_FMA, real, s, mp_binary(t, MATH_ADD, real, hfsq, r), low);
  MathVal body = mp_binary(t, MATH_SUB, real, m1, mp_binary(t, MATH_SUB, real, hfsq, small));
  MathVal ln2_hi = mp_real(t, real, f->ln2_hi);
  return mp_op(t, MATH_FMA, real, ef, ln2_hi, body);
}

/* mask ? c : y, c a constant */
MathVal mp_select_constant(MathTarget *t, MathType type, MathVal mask, double c, MathVal y) {
  MathVal constant = mp_real(t, type, c);
  return mp_select(t, type, mask, constant, y);
}

MathVal mp_quiet_nan(MathTarget *t, const MathFormat *f) {
  int64_t bits = f->real == MATH_F32 ? 0x7fc00000 : (int64_t)UINT64_C(0x7ff8000000000000);
  return mp_unary(t, MATH_FROM_BITS, f->integer, mp_int(t, f->integer, bits));
}

/* log(x) = e ln2 + log(m); a subnormal x is first scaled up to a normal. */
MathVal math_program_log(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real, integer = f->integer;
  MathVal limit = mp_real(t, real, f->subnormal_limit);
  MathVal subnormal = mp_binary(t, MATH_LESS, real, x, limit);
  MathVal scale = mp_real(t, real, (double)(UINT64_C(1) << f->subnormal_shift));
  MathVal scaled = mp_select(t, real, subnormal, mp_binary(t, MATH_MUL, real, x, scale), x);
  MathVal e;
  MathVal m1 = mp_log_split(t, f, scaled, &e);
  MathVal shift = mp_int(t, integer, f->subnormal_shift), no_shift = mp_int(t, integer, 0);
  e = mp_binary(t, MATH_SUB, integer, e, mp_select(t, integer, subnormal, shift, no_shift));
  MathVal zero = mp_real(t, real, 0.0);
  MathVal y = log_combine(t, f, e, m1, zero);
  MathVal infinity = mp_real(t, real, (double)INFINITY);
  y = mp_select(t, real, mp_binary(t, MATH_EQUAL, real, x, infinity), x, y);
  y = mp_select_constant(t, real, mp_binary(t, MATH_EQUAL, real, x, zero), -(double)INFINITY, y);
  MathVal nan = mp_quiet_nan(t, f);
  y = mp_select(t, real, mp_binary(t, MATH_LESS, real, x, zero), nan, y);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, y));
}

/* log1p(x) = log(u) + log(1 + c) with u = 1 + x rounded and
 * c = (x - (u - 1)) / u the part of x that the rounding lost; log(1 + c)
 * is c to the precision needed. Tiny |x| returns x. */
MathVal math_program_log1p(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real;
  MathVal one = mp_real(t, real, 1.0);
  MathVal u = mp_binary(t, MATH_ADD, real, one, x);
  MathVal u_less_one = mp_binary(t, MATH_SUB, real, u, one);
  MathVal c = mp_binary(t, MATH_DIV, real, mp_binary(t, MATH_SUB, real, x, u_less_one), u);
  MathVal e;
  MathVal m1 = mp_log_split(t, f, u, &e);
  MathVal y = log_combine(t, f, e, m1, c);
  MathVal tiny = mp_real(t, real, f->log1p_tiny);
  y = mp_select(t, real, mp_binary(t, MATH_LESS, real, mp_unary(t, MATH_ABS, real, x), tiny), x, y);
  MathVal infinity = mp_real(t, real, (double)INFINITY);
  y = mp_select(t, real, mp_binary(t, MATH_EQUAL, real, x, infinity), x, y);
  MathVal minus_one = mp_real(t, real, -1.0);
  y = mp_select_constant(t, real, mp_binary(t, MATH_EQUAL, real, x, minus_one), -(double)INFINITY, y);
  MathVal nan = mp_quiet_nan(t, f);
  y = mp_select(t, real, mp_binary(t, MATH_LESS, real, x, minus_one), nan, y);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, y));
}

/* ---- logistic, tanh ---- */

/* logistic(x) = 1 / (1 + e^-x), written with e = e^-|x| in (0, 1] so that
 * nothing overflows: 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0
 * (which keeps the tiny results of very negative x). The quotient gets
 * one correction step against 1 + e held exactly in two floats: without
 * it the rounding of 1 + e and of the division add up to 2 ulp. */
MathVal math_program_logistic(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real;
  MathVal e = math_program_exp(t, f, mp_unary(t, MATH_NEGATE, real, mp_unary(t, MATH_ABS, real, x)));
  MathVal zero = mp_real(t, real, 0.0), one = mp_real(t, real, 1.0);
  MathVal numerator = mp_select(t, real, mp_binary(t, MATH_LESS, real, x, zero), e, one);
  MathVal sum = mp_binary(t, MATH_ADD, real, one, e);
  MathVal sum_lost = mp_binary(t, MATH_ADD, real, mp_binary(t, MATH_SUB, real, one, sum), e); /* exact */
  MathVal y = mp_binary(t, MATH_DIV, real, numerator, sum);
  MathVal minus_y = mp_unary(t, MATH_NEGATE, real, y);
  MathVal product_error = mp_op(t, MATH_FMA, real, minus_y, sum, numerator);
  MathVal residual = mp_binary(t, MATH_SUB, real, product_error, mp_binary(t, MATH_MUL, real, y, sum_lost));
  MathVal correction = mp_binary(t, MATH_DIV, real, residual, sum);
  return mp_scope_end(t, scope, mp_binary(t, MATH_ADD, real, y, correction));
}

/* f32: near 0, x + x^3 T(x^2). Elsewhere 1 - 2 / (e^(2|x|) + 1), whose
 * subtraction cannot cancel because the result is at least 1/2 there;
 * |x| is clamped to 9.5, past which tanh rounds to 1. */
static MathVal tanh_f32(MathTarget *t, MathVal x) {
  int scope = mp_scope_begin(t);
  const MathType real = MATH_F32;
  static const MathTable tanh_table = {.f32 = mathref_tanh_table, .count = MATHREF_TANH_COUNT};
  MathVal ax = mp_unary(t, MATH_ABS, real, x);
  MathVal z = mp_binary(t, MATH_MUL, real, x, x);
  MathVal poly = mp_polynomial(t, real, &tanh_table, z);
  MathVal small = mp_op(t, MATH_FMA, real, x, mp_binary(t, MATH_MUL, real, z, poly), x);
  MathVal two = mp_real(t, real, 2.0), limit = mp_real(t, real, 9.5);
  MathVal doubled = mp_binary(t, MATH_MUL, real, two, mp_binary(t, MATH_MIN, real, ax, limit));
  MathVal e = math_program_exp(t, &math_format_f32, doubled);
  MathVal one = mp_real(t, real, 1.0);
  MathVal quotient = mp_binary(t, MATH_DIV, real, two, mp_binary(t, MATH_ADD, real, e, one));
  MathVal large = mp_binary(t, MATH_COPYSIGN, real, mp_binary(t, MATH_SUB, real, one, quotient), x);
  MathVal switch_point = mp_real(t, real, 0.5625);
  MathVal y = mp_select(t, real, mp_binary(t, MATH_LESS, real, ax, switch_point), small, large);
  MathVal zero = mp_real(t, real, 0.0);
  y = mp_select(t, real, mp_binary(t, MATH_EQUAL, real, x, zero), x, y);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, y));
}

/* f64: -t / (t + 2) with t = e^(-2|x|) - 1 below 1, 1 - 2 / (t + 2) with
 * t = e^(2|x|) - 1 above (|x| clamped to 22, past which tanh rounds to 1). */
static MathVal tanh_f64(MathTarget *t, MathVal x) {
  int scope = mp_scope_begin(t);
  const MathType real = MATH_F64;
  MathVal ax = mp_unary(t, MATH_ABS, real, x);
  MathVal minus_two = mp_real(t, real, -2.0), two = mp_real(t, real, 2.0);
  MathVal t_small = math_program_expm1(t, &math_format_f64, mp_binary(t, MATH_MUL, real, minus_two, ax));
  MathVal limit = mp_real(t, real, 22.0);
  MathVal doubled = mp_binary(t, MATH_MUL, real, two, mp_binary(t, MATH_MIN, real, ax, limit));
  MathVal t_large = math_program_expm1(t, &math_format_f64, doubled);
  MathVal minus_t_small = mp_unary(t, MATH_NEGATE, real, t_small);
  MathVal small = mp_binary(t, MATH_DIV, real, minus_t_small, mp_binary(t, MATH_ADD, real, t_small, two));
  MathVal one = mp_real(t, real, 1.0);
  MathVal quotient = mp_binary(t, MATH_DIV, real, two, mp_binary(t, MATH_ADD, real, t_large, two));
  MathVal large = mp_binary(t, MATH_SUB, real, one, quotient);
  MathVal y = mp_select(t, real, mp_binary(t, MATH_LESS, real, ax, one), small, large);
  MathVal zero = mp_real(t, real, 0.0);
  MathVal signed_y = mp_binary(t, MATH_COPYSIGN, real, y, x);
  y = mp_select(t, real, mp_binary(t, MATH_EQUAL, real, x, zero), x, signed_y);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, y));
}

/* ---- compositions: the other float unary ops of HLO ---- */

/* 1 / sqrt(x): a correctly rounded square root, then a correctly rounded
 * division (no estimate instruction: its bits differ between ISAs). */
MathVal math_program_rsqrt(MathTarget *t, const MathFormat *f, MathVal x) {
  MathVal one = mp_real(t, f->real, 1.0);
  return mp_binary(t, MATH_DIV, f->real, one, mp_unary(t, MATH_SQRT, f->real, x));
}

/* (h / 2) h with h = e^(|x|/2): sinh and cosh past hyperbolic_limit,
 * finite as long as the result is. */
static MathVal half_square_of_exp_half(MathTarget *t, const MathFormat *f, MathVal ax) {
  MathVal half = mp_real(t, f->real, 0.5);
  MathVal h = math_program_exp(t, f, mp_binary(t, MATH_MUL, f->real, half, ax));
  return mp_binary(t, MATH_MUL, f->real, mp_binary(t, MATH_MUL, f->real, half, h), h);
}

/* Below the limit, sinh from t = expm1|x|: (t + t / (t + 1)) / 2, which
 * keeps the digits of small x. Sign restored. */
MathVal math_program_sinh(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real;
  MathVal ax = mp_unary(t, MATH_ABS, real, x);
  MathVal limit = mp_real(t, real, f->hyperbolic_limit);
  MathVal e = math_program_expm1(t, f, mp_binary(t, MATH_MIN, real, ax, limit));
  MathVal one = mp_real(t, real, 1.0), half = mp_real(t, real, 0.5);
  MathVal quotient = mp_binary(t, MATH_DIV, real, e, mp_binary(t, MATH_ADD, real, e, one));
  MathVal small = mp_binary(t, MATH_MUL, real, half, mp_binary(t, MATH_ADD, real, e, quotient));
  MathVal large = half_square_of_exp_half(t, f, ax);
  MathVal y = mp_select(t, real, mp_binary(t, MATH_LESS, real, ax, limit), small, large);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, mp_binary(t, MATH_COPYSIGN, real, y, x)));
}

/* Below the limit, cosh from e = e^|x|: e/2 + 1/(2e). */
MathVal math_program_cosh(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real;
  MathVal ax = mp_unary(t, MATH_ABS, real, x);
  MathVal limit = mp_real(t, real, f->hyperbolic_limit);
  MathVal e = math_program_exp(t, f, mp_binary(t, MATH_MIN, real, ax, limit));
  MathVal half = mp_real(t, real, 0.5);
  MathVal half_e = mp_binary(t, MATH_MUL, real, half, e);
  MathVal small = mp_binary(t, MATH_ADD, real, half_e, mp_binary(t, MATH_DIV, real, half, e));
  MathVal large = half_square_of_exp_half(t, f, ax);
  MathVal y = mp_select(t, real, mp_binary(t, MATH_LESS, real, ax, limit), small, large);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, y));
}

/* log x + ln 2: asinh and acosh past the limit. */
static MathVal log_twice(MathTarget *t, const MathFormat *f, MathVal x) {
  MathVal ln2 = mp_real(t, f->real, f->ln2);
  return mp_binary(t, MATH_ADD, f->real, math_program_log(t, f, x), ln2);
}

/* asinh |x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), the form without
 * cancellation; sign restored. */
MathVal math_program_asinh(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real;
  MathVal ax = mp_unary(t, MATH_ABS, real, x);
  MathVal limit = mp_real(t, real, f->inverse_hyperbolic_limit);
  MathVal a = mp_binary(t, MATH_MIN, real, ax, limit);
  MathVal z = mp_binary(t, MATH_MUL, real, a, a);
  MathVal one = mp_real(t, real, 1.0);
  MathVal root = mp_unary(t, MATH_SQRT, real, mp_binary(t, MATH_ADD, real, one, z));
  MathVal denominator = mp_binary(t, MATH_ADD, real, one, root);
  MathVal argument = mp_binary(t, MATH_ADD, real, a, mp_binary(t, MATH_DIV, real, z, denominator));
  MathVal small = math_program_log1p(t, f, argument);
  MathVal large = log_twice(t, f, ax);
  MathVal y = mp_select(t, real, mp_binary(t, MATH_LESS, real, ax, limit), small, large);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, mp_binary(t, MATH_COPYSIGN, real, y, x)));
}

/* acosh x = log1p(t + sqrt(t (t + 2))) with t = x - 1 (exact for x >= 1).
 * Below 1: NaN. */
MathVal math_program_acosh(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real;
  MathVal limit = mp_real(t, real, f->inverse_hyperbolic_limit);
  MathVal one = mp_real(t, real, 1.0), two = mp_real(t, real, 2.0);
  MathVal x_less_one = mp_binary(t, MATH_SUB, real, mp_binary(t, MATH_MIN, real, x, limit), one);
  MathVal product = mp_binary(t, MATH_MUL, real, x_less_one, mp_binary(t, MATH_ADD, real, x_less_one, two));
  MathVal argument = mp_binary(t, MATH_ADD, real, x_less_one, mp_unary(t, MATH_SQRT, real, product));
  MathVal small = math_program_log1p(t, f, argument);
  MathVal large = log_twice(t, f, x);
  MathVal y = mp_select(t, real, mp_binary(t, MATH_LESS, real, x, limit), small, large);
  MathVal nan = mp_quiet_nan(t, f);
  y = mp_select(t, real, mp_binary(t, MATH_LESS, real, x, one), nan, y);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, y));
}

/* atanh |x| = log1p(2|x| / (1 - |x|)) / 2; for |x| < 1/2 written
 * log1p(2|x| + 2|x| |x| / (1 - |x|)) / 2 so that the quotient's rounding
 * touches only the smaller part. ±1 gives ±inf, |x| > 1 NaN. */
MathVal math_program_atanh(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real;
  MathVal ax = mp_unary(t, MATH_ABS, real, x);
  MathVal twice = mp_binary(t, MATH_ADD, real, ax, ax);
  MathVal one = mp_real(t, real, 1.0);
  MathVal d = mp_binary(t, MATH_SUB, real, one, ax);
  MathVal small = mp_op(t, MATH_FMA, real, twice, mp_binary(t, MATH_DIV, real, ax, d), twice);
  MathVal large = mp_binary(t, MATH_DIV, real, twice, d);
  MathVal half = mp_real(t, real, 0.5);
  MathVal u = mp_select(t, real, mp_binary(t, MATH_LESS, real, ax, half), small, large);
  MathVal y = mp_binary(t, MATH_MUL, real, half, math_program_log1p(t, f, u));
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, mp_binary(t, MATH_COPYSIGN, real, y, x)));
}

/* ---- atan2, atan, asin, acos ---- */

/* u = little / big in [0, 1] with the division's remainder u_lo; folded
 * to t = (u - 1) / (u + 1) past tan(pi/8) (fold set), where atan u =
 * pi/4 + atan t; t_lo is t's rounding error, from exact splits. 0/0 and
 * inf/inf become u = 0 and u = 1, which yields every IEEE special case. */
static MathVal atan_argument(MathTarget *t, const MathFormat *f, MathVal little, MathVal big, MathVal *fold,
                             MathVal *t_lo) {
  MathType real = f->real;
  MathVal zero = mp_real(t, real, 0.0), one = mp_real(t, real, 1.0);
  MathVal infinity = mp_real(t, real, (double)INFINITY);
  if (f->atan2_scales) {
    MathVal tiny = mp_real(t, real, 0x1p-900);
    MathVal up = mp_real(t, real, 0x1p600);
    MathVal scale = mp_select(t, real, mp_binary(t, MATH_LESS, real, big, tiny), up, one);
    little = mp_binary(t, MATH_MUL, real, little, scale);
    big = mp_binary(t, MATH_MUL, real, big, scale);
  }
  MathVal u = mp_binary(t, MATH_DIV, real, little, big);
  MathVal minus_u = mp_unary(t, MATH_NEGATE, real, u);
  MathVal u_lo = mp_binary(t, MATH_DIV, real, mp_op(t, MATH_FMA, real, minus_u, big, little), big);
  MathVal big_zero = mp_binary(t, MATH_EQUAL, real, big, zero);
  u = mp_select(t, real, big_zero, zero, u);
  u = mp_select(t, real, mp_binary(t, MATH_EQUAL, real, little, infinity), one, u);
  MathVal big_infinite = mp_binary(t, MATH_EQUAL, real, big, infinity);
  u_lo = mp_select(t, real, mp_binary(t, MATH_OR, MATH_MASK, big_zero, big_infinite), zero, u_lo);
  MathVal tan_pi_8 = mp_real(t, real, f->tan_pi_8);
  *fold = mp_binary(t, MATH_LESS, real, tan_pi_8, u);
  MathVal num = mp_binary(t, MATH_SUB, real, u, one);
  MathVal num_back = mp_binary(t, MATH_SUB, real, u, mp_binary(t, MATH_ADD, real, num, one));
  MathVal num_lo = mp_binary(t, MATH_ADD, real, num_back, u_lo);
  MathVal den = mp_binary(t, MATH_ADD, real, u, one);
  MathVal den_back = mp_binary(t, MATH_SUB, real, u, mp_binary(t, MATH_SUB, real, den, one));
  MathVal den_lo = mp_binary(t, MATH_ADD, real, den_back, u_lo);
  MathVal q = mp_binary(t, MATH_DIV, real, num, den);
  MathVal minus_q = mp_unary(t, MATH_NEGATE, real, q);
  MathVal remainder = mp_binary(t, MATH_ADD, real, mp_op(t, MATH_FMA, real, minus_q, den, num), num_lo);
  MathVal q_den_lo = mp_binary(t, MATH_MUL, real, q, den_lo);
  MathVal q_lo = mp_binary(t, MATH_DIV, real, mp_binary(t, MATH_SUB, real, remainder, q_den_lo), den);
  *t_lo = mp_select(t, real, *fold, q_lo, u_lo);
  return mp_select(t, real, *fold, q, u);
}

/* atan2(y, x) = s (m pi/4 + (t + t^3 P(t^2) + t_lo (1 - t^2))), rounded
 * once, then given y's sign: u = min/max of |x|, |y|, folded to t as
 * atan_argument says (m = 1); pi/2 - a when |y| > |x| (m = 2 - m, s = -s);
 * pi - a when x is negative (m = 4 - m, s = -s). */
MathVal math_program_atan2(MathTarget *t, const MathFormat *f, MathVal y, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real, integer = f->integer;
  MathVal ax = mp_unary(t, MATH_ABS, real, x), ay = mp_unary(t, MATH_ABS, real, y);
  MathVal little = mp_binary(t, MATH_MIN, real, ax, ay);
  MathVal big = mp_binary(t, MATH_MAX, real, ax, ay);
  MathVal fold, t_lo;
  MathVal a = atan_argument(t, f, little, big, &fold, &t_lo);
  MathVal z = mp_binary(t, MATH_MUL, real, a, a);
  MathVal p = mp_polynomial(t, real, &f->atan_table, z);
  MathVal minus_t_lo = mp_unary(t, MATH_NEGATE, real, t_lo);
  MathVal lo_part = mp_op(t, MATH_FMA, real, minus_t_lo, z, t_lo);
  MathVal w = mp_op(t, MATH_FMA, real, a, mp_binary(t, MATH_MUL, real, z, p), lo_part);
  MathVal one_int = mp_int(t, integer, 1), zero_int = mp_int(t, integer, 0);
  MathVal m = mp_select(t, integer, fold, one_int, zero_int);
  MathVal s = mp_real(t, real, 1.0);
  MathVal swap = mp_binary(t, MATH_LESS, real, ax, ay);
  MathVal two_int = mp_int(t, integer, 2);
  m = mp_select(t, integer, swap, mp_binary(t, MATH_SUB, integer, two_int, m), m);
  s = mp_select(t, real, swap, mp_unary(t, MATH_NEGATE, real, s), s);
  /* x's sign bit, NaN and -0 included: the sign 1 takes from it */
  MathVal zero = mp_real(t, real, 0.0);
  MathVal sign_of_x = mp_binary(t, MATH_COPYSIGN, real, mp_real(t, real, 1.0), x);
  MathVal negative_x = mp_binary(t, MATH_LESS, real, sign_of_x, zero);
  MathVal four_int = mp_int(t, integer, 4);
  m = mp_select(t, integer, negative_x, mp_binary(t, MATH_SUB, integer, four_int, m), m);
  s = mp_select(t, real, negative_x, mp_unary(t, MATH_NEGATE, real, s), s);
  MathVal mf = mp_unary(t, MATH_TO_FLOAT, integer, m);
  MathVal pio4_lo = mp_real(t, real, f->pio4_lo);
  MathVal inner = mp_op(t, MATH_FMA, real, mf, pio4_lo, mp_binary(t, MATH_MUL, real, s, w));
  MathVal middle = mp_op(t, MATH_FMA, real, s, a, inner);
  MathVal pio4_hi = mp_real(t, real, f->pio4_hi);
  MathVal angle = mp_op(t, MATH_FMA, real, mf, pio4_hi, middle);
  MathVal result = mp_binary(t, MATH_COPYSIGN, real, angle, y);
  MathVal x_nan = mp_unary(t, MATH_IS_NAN, real, x);
  MathVal any_nan = mp_binary(t, MATH_OR, MATH_MASK, x_nan, mp_unary(t, MATH_IS_NAN, real, y));
  MathVal sum = mp_binary(t, MATH_ADD, real, x, y);
  return mp_scope_end(t, scope, mp_select(t, real, any_nan, sum, result));
}

/* atan x = atan2(x, 1). */
MathVal math_program_atan(MathTarget *t, const MathFormat *f, MathVal x) {
  MathVal one = mp_real(t, f->real, 1.0);
  return math_program_atan2(t, f, x, one);
}

/* sqrt(1 - x^2), 1 - x^2 one fma: one rounding even where it cancels (x
 * near ±1, where asin and acos are most sensitive to it); NaN past 1. */
static MathVal one_minus_square_root(MathTarget *t, const MathFormat *f, MathVal x) {
  MathVal minus_x = mp_unary(t, MATH_NEGATE, f->real, x);
  MathVal one = mp_real(t, f->real, 1.0);
  return mp_unary(t, MATH_SQRT, f->real, mp_op(t, MATH_FMA, f->real, minus_x, x, one));
}

/* asin x = atan2(x, sqrt(1 - x^2)), acos x = atan2(sqrt(1 - x^2), x). */
MathVal math_program_asin(MathTarget *t, const MathFormat *f, MathVal x) {
  return math_program_atan2(t, f, x, one_minus_square_root(t, f, x));
}

MathVal math_program_acos(MathTarget *t, const MathFormat *f, MathVal x) {
  return math_program_atan2(t, f, one_minus_square_root(t, f, x), x);
}

/* ---- cbrt ---- */

/* One Newton step for g^3 = a, the residual g^3 - a held exactly (g^2
 * split by an fma): g - (g^3 - a) / (3 g^2). */
static MathVal cbrt_newton(MathTarget *t, MathType real, MathVal g, MathVal a) {
  MathVal h = mp_binary(t, MATH_MUL, real, g, g);
  MathVal minus_h = mp_unary(t, MATH_NEGATE, real, h);
  MathVal l = mp_op(t, MATH_FMA, real, g, g, minus_h);
  MathVal minus_a = mp_unary(t, MATH_NEGATE, real, a);
  MathVal cube_error = mp_op(t, MATH_FMA, real, h, g, minus_a);
  MathVal residual = mp_binary(t, MATH_ADD, real, cube_error, mp_binary(t, MATH_MUL, real, l, g));
  MathVal three = mp_real(t, real, 3.0);
  MathVal step = mp_binary(t, MATH_DIV, real, residual, mp_binary(t, MATH_MUL, real, three, h));
  return mp_binary(t, MATH_SUB, real, g, step);
}

/* f32's first guess of cbrt a, a = 2^k m in [1, 8): a degree-4 fit of
 * cbrt m times cbrt(2^k) from the table. */
static MathVal cbrt_guess_f32(MathTarget *t, MathVal m, MathVal k) {
  static const MathTable guess_table = {.f32 = mathref_cbrt_table, .count = MATHREF_CBRT_GUESS_COUNT};
  MathVal g = mp_polynomial(t, MATH_F32, &guess_table, m);
  MathVal one = mp_real(t, MATH_F32, 1.0);
  MathVal k_is_2 = mp_binary(t, MATH_EQUAL, MATH_I32, k, mp_int(t, MATH_I32, 2));
  MathVal scale = mp_select_constant(t, MATH_F32, k_is_2, mathref_cbrt_table[6], one);
  MathVal k_is_1 = mp_binary(t, MATH_EQUAL, MATH_I32, k, mp_int(t, MATH_I32, 1));
  scale = mp_select_constant(t, MATH_F32, k_is_1, mathref_cbrt_table[5], scale);
  return mp_binary(t, MATH_MUL, MATH_F32, g, scale);
}

/* |x| = 2^(3q + k) m with m in [1, 2) and k in {0, 1, 2}, q = floor(e/3)
 * by a multiply and a shift; cbrt |x| = 2^q cbrt(2^k m): a guess, then
 * Newton steps; sign restored; 0, inf and NaN return x + x. */
MathVal math_program_cbrt(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = f->real, integer = f->integer;
  MathVal ax = mp_unary(t, MATH_ABS, real, x);
  MathVal limit = mp_real(t, real, f->subnormal_limit);
  MathVal subnormal = mp_binary(t, MATH_LESS, real, ax, limit);
  MathVal scale = mp_real(t, real, (double)(UINT64_C(1) << f->cbrt_subnormal_shift));
  MathVal scaled = mp_select(t, real, subnormal, mp_binary(t, MATH_MUL, real, ax, scale), ax);
  MathVal bits = mp_unary(t, MATH_BITS, real, scaled);
  MathVal exponent_field = mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, integer, bits, f->mantissa_bits);
  MathVal bias = mp_int(t, integer, f->exponent_bias);
  MathVal shift = mp_int(t, integer, f->cbrt_subnormal_shift), no_shift = mp_int(t, integer, 0);
  MathVal unbiased = mp_binary(t, MATH_SUB, integer, exponent_field, bias);
  MathVal e = mp_binary(t, MATH_SUB, integer, unbiased, mp_select(t, integer, subnormal, shift, no_shift));
  MathVal mantissa_mask = mp_int(t, integer, (int64_t)((UINT64_C(1) << f->mantissa_bits) - 1));
  MathVal one_bits = mp_int(t, integer, (int64_t)f->exponent_bias << f->mantissa_bits);
  MathVal mantissa = mp_binary(t, MATH_AND, integer, bits, mantissa_mask);
  MathVal m = mp_unary(t, MATH_FROM_BITS, integer, mp_binary(t, MATH_OR, integer, mantissa, one_bits));
  MathVal offset = mp_int(t, integer, 3 * f->cbrt_offset), thirds = mp_int(t, integer, 21846);
  MathVal product = mp_binary(t, MATH_MUL, integer, mp_binary(t, MATH_ADD, integer, e, offset), thirds);
  MathVal back = mp_int(t, integer, f->cbrt_offset);
  MathVal q = mp_binary(t, MATH_SUB, integer, mp_shift(t, MATH_SHIFT_RIGHT, integer, product, 16), back);
  MathVal three = mp_int(t, integer, 3);
  MathVal k = mp_binary(t, MATH_SUB, integer, e, mp_binary(t, MATH_MUL, integer, three, q));
  MathVal a = mp_binary(t, MATH_MUL, real, m, mp_power_of_two(t, f, k));
  MathVal g;
  if (real == MATH_F32) {
    g = cbrt_guess_f32(t, m, k);
  } else {
    MathVal a_f32 = mp_unary(t, MATH_NARROW, MATH_F64, a);
    g = mp_unary(t, MATH_WIDEN, MATH_F32, math_program_cbrt(t, &math_format_f32, a_f32));
  }
  for (int step = 0; step < f->cbrt_newton_steps; step++) g = cbrt_newton(t, real, g, a);
  MathVal y = mp_binary(t, MATH_COPYSIGN, real, mp_binary(t, MATH_MUL, real, g, mp_power_of_two(t, f, q)), x);
  MathVal zero = mp_real(t, real, 0.0), infinity = mp_real(t, real, (double)INFINITY);
  MathVal ax_zero = mp_binary(t, MATH_EQUAL, real, ax, zero);
  MathVal special = mp_binary(t, MATH_OR, MATH_MASK, ax_zero, mp_binary(t, MATH_EQUAL, real, ax, infinity));
  special = mp_binary(t, MATH_OR, MATH_MASK, special, mp_unary(t, MATH_IS_NAN, real, x));
  MathVal doubled = mp_binary(t, MATH_ADD, real, x, x);
  return mp_scope_end(t, scope, mp_select(t, real, special, doubled, y));
}

/* tanh's algorithms differ by width: f32 has its own polynomial near 0,
 * f64 works from expm1 on both sides. */
MathVal math_program_tanh(MathTarget *t, const MathFormat *f, MathVal x) {
  return f->real == MATH_F32 ? tanh_f32(t, x) : tanh_f64(t, x);
}
