/* The exponential and logarithmic math functions (exp, expm1, log, log1p,
 * tanh, logistic, erf, pow, cbrt, rsqrt) in the kernel compiler's scalar
 * code, transcribed operation for operation from their mathref_*
 * definitions in src/ir/kernel/math_reference.c with the math builder:
 * read each beside its C. Where the C writes select_f32, the builder
 * computes both sides too and selects (a cmov), so every input runs the
 * same code. */
#include "emit_x86/kernel_x86_math_builder.h"

#include <math.h>

#include "kernel/math_reference.h"

static MathValue quiet_nan(MathBuilder *b) { return constant_i32(b, 0x7fc00000); }

/* 2^n for -126 <= n <= 127, built in the exponent field. */
static MathValue pow2_f32(MathBuilder *b, MathValue n) {
  return shift_left_i32(b, add_i32(b, n, constant_i32(b, 127)), 23);
}

/* NaN gives x + x, as the C's last select. */
static MathValue nan_passed(MathBuilder *b, MathValue x, MathValue y) {
  return select_value(b, is_nan_f32(b, x), add_f32(b, x, x), y);
}

/* ---- exp, expm1 ---- */

static MathValue exp_reduce(MathBuilder *b, MathValue x, MathValue *n) {
  MathValue shifter = constant_f32(b, MATHREF_ROUND_SHIFTER_F32);
  *n = sub_f32(b, fma_f32(b, x, constant_f32(b, MATHREF_LOG2E), shifter), shifter);
  MathValue r = fma_f32(b, *n, constant_f32(b, -MATHREF_LN2_HI), x);
  return fma_f32(b, *n, constant_f32(b, -MATHREF_LN2_LO), r);
}

static MathValue clamp_f32(MathBuilder *b, MathValue x, float lo, float hi) {
  return min_f32(b, max_f32(b, x, constant_f32(b, lo)), constant_f32(b, hi));
}

MathValue math_exp_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue n;
  MathValue r = exp_reduce(b, clamp_f32(b, x, -104.0f, 89.0f), &n);
  MathValue poly = polynomial_f32(b, mathref_exp_table, MATHREF_EXP_COUNT, r);
  MathValue p = add_f32(b, constant_f32(b, 1.0f), fma_f32(b, mul_f32(b, r, r), poly, r));
  MathValue ni = i32_from_f32(b, n);
  MathValue n1 = shift_right_i32(b, ni, 1);
  MathValue y = mul_f32(b, mul_f32(b, p, pow2_f32(b, n1)), pow2_f32(b, sub_i32(b, ni, n1)));
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

MathValue math_expm1_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue n;
  MathValue r = exp_reduce(b, clamp_f32(b, x, -20.0f, 89.0f), &n);
  MathValue poly = polynomial_f32(b, mathref_expm1_table, MATHREF_EXPM1_COUNT, r);
  MathValue q = fma_f32(b, mul_f32(b, r, r), poly, r);
  MathValue half = pow2_f32(b, sub_i32(b, i32_from_f32(b, n), constant_i32(b, 1)));
  MathValue y = fma_f32(b, half, q, sub_f32(b, half, constant_f32(b, 0.5f)));
  y = mul_f32(b, constant_f32(b, 2.0f), y);
  y = select_value(b, equal_f32(b, n, constant_f32(b, 0.0f)), q, y);
  y = select_value(b, less_f32(b, abs_f32(b, x), constant_f32(b, 0x1p-25f)), x, y);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

/* ---- log, log1p ---- */

static MathValue log_split(MathBuilder *b, MathValue x, MathValue *e) {
  MathValue shifted = sub_i32(b, x, constant_i32(b, (int32_t)MATHREF_SQRT_HALF_BITS));
  *e = shift_right_i32(b, shifted, 23);
  MathValue m = add_i32(b, and_i32(b, shifted, constant_i32(b, 0x7fffff)),
                        constant_i32(b, (int32_t)MATHREF_SQRT_HALF_BITS));
  return sub_f32(b, m, constant_f32(b, 1.0f));
}

static MathValue log_combine(MathBuilder *b, MathValue e, MathValue f, MathValue extra) {
  MathValue ef = f32_from_i32(b, e);
  MathValue p = polynomial_f32(b, mathref_log_table, MATHREF_LOG_COUNT, f);
  MathValue tail = fma_f32(b, mul_f32(b, f, f), p, fma_f32(b, ef, constant_f32(b, MATHREF_LN2_LO), extra));
  return fma_f32(b, ef, constant_f32(b, MATHREF_LN2_HI), add_f32(b, f, tail));
}

/* log_split of a positive x, subnormals scaled by 2^23 first (and e
 * lowered by 23): f, and e in *e. */
static MathValue log_split_any(MathBuilder *b, MathValue x, MathValue *e) {
  MathValue subnormal = less_f32(b, x, constant_f32(b, 0x1p-126f));
  MathValue scaled = select_value(b, subnormal, mul_f32(b, x, constant_f32(b, 0x1p23f)), x);
  MathValue f = log_split(b, scaled, e);
  *e = sub_i32(b, *e, select_value(b, subnormal, constant_i32(b, 23), constant_i32(b, 0)));
  return f;
}

MathValue math_log_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue e;
  MathValue f = log_split_any(b, x, &e);
  MathValue y = log_combine(b, e, f, constant_f32(b, 0.0f));
  MathValue zero = constant_f32(b, 0.0f);
  y = select_value(b, equal_f32(b, x, constant_f32(b, INFINITY)), x, y);
  y = select_value(b, equal_f32(b, x, zero), constant_f32(b, -INFINITY), y);
  y = select_value(b, less_f32(b, x, zero), quiet_nan(b), y);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

MathValue math_log1p_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue one = constant_f32(b, 1.0f);
  MathValue u = add_f32(b, one, x);
  MathValue c = div_f32(b, sub_f32(b, x, sub_f32(b, u, one)), u);
  MathValue e;
  MathValue f = log_split(b, u, &e);
  MathValue y = log_combine(b, e, f, c);
  MathValue minus_one = constant_f32(b, -1.0f);
  y = select_value(b, less_f32(b, abs_f32(b, x), constant_f32(b, 0x1p-24f)), x, y);
  y = select_value(b, equal_f32(b, x, constant_f32(b, INFINITY)), x, y);
  y = select_value(b, equal_f32(b, x, minus_one), constant_f32(b, -INFINITY), y);
  y = select_value(b, less_f32(b, x, minus_one), quiet_nan(b), y);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

/* ---- tanh, logistic, erf ---- */

MathValue math_tanh_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f32(b, x);
  MathValue z = mul_f32(b, x, x);
  MathValue poly = polynomial_f32(b, mathref_tanh_table, MATHREF_TANH_COUNT, z);
  MathValue small = fma_f32(b, x, mul_f32(b, z, poly), x);
  MathValue e = math_exp_f32(b, mul_f32(b, constant_f32(b, 2.0f), min_f32(b, ax, constant_f32(b, 9.5f))));
  MathValue one = constant_f32(b, 1.0f);
  MathValue quotient = div_f32(b, constant_f32(b, 2.0f), add_f32(b, e, one));
  MathValue large = copysign_f32(b, sub_f32(b, one, quotient), x);
  MathValue y = select_value(b, less_f32(b, ax, constant_f32(b, 0.5625f)), small, large);
  y = select_value(b, equal_f32(b, x, constant_f32(b, 0.0f)), x, y);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

MathValue math_logistic_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue e = math_exp_f32(b, negate_f32(b, abs_f32(b, x)));
  MathValue one = constant_f32(b, 1.0f);
  MathValue numerator = select_value(b, less_f32(b, x, constant_f32(b, 0.0f)), e, one);
  MathValue sum = add_f32(b, one, e);
  MathValue sum_lost = add_f32(b, sub_f32(b, one, sum), e);
  MathValue y = div_f32(b, numerator, sum);
  MathValue residual = sub_f32(b, fma_f32(b, negate_f32(b, y), sum, numerator), mul_f32(b, y, sum_lost));
  return math_scope_end(b, scope, add_f32(b, y, div_f32(b, residual, sum)));
}

MathValue math_erf_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f32(b, x);
  MathValue one = constant_f32(b, 1.0f);
  MathValue poly_small = polynomial_f32(b, mathref_erf_table, MATHREF_ERF_SMALL_COUNT, mul_f32(b, x, x));
  MathValue small = fma_f32(b, x, poly_small, x);
  MathValue t = min_f32(b, ax, constant_f32(b, 4.0f));
  MathValue exponent = polynomial_f32(b, mathref_erf_table + MATHREF_ERF_SMALL_COUNT,
                                      MATHREF_ERF_COUNT - MATHREF_ERF_SMALL_COUNT, sub_f32(b, t, one));
  MathValue large = copysign_f32(b, sub_f32(b, one, math_exp_f32(b, exponent)), x);
  MathValue y = select_value(b, less_f32(b, ax, one), small, large);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

/* ---- pow ---- */

static MathValue pow_log2(MathBuilder *b, MathValue ax) {
  MathValue e;
  MathValue f = f64_from_f32(b, log_split_any(b, ax, &e));
  MathValue two = constant_f64(b, 2.0);
  MathValue s = div_f64(b, f, add_f64(b, two, f));
  MathValue s2 = mul_f64(b, s, s);
  MathValue poly = polynomial_f64(b, mathref_pow_table, MATHREF_POW_LOG_COUNT, s2);
  MathValue log1p_f = add_f64(b, mul_f64(b, two, s), mul_f64(b, mul_f64(b, s, s2), poly));
  return add_f64(b, f64_from_i32(b, e), mul_f64(b, log1p_f, constant_f64(b, MATHREF_LOG2E_F64)));
}

static MathValue pow_exp2(MathBuilder *b, MathValue z) {
  MathValue lo = constant_f64(b, -160.0), hi = constant_f64(b, 130.0);
  MathValue zc = select_value(b, less_f64(b, hi, z), hi, z);
  zc = select_value(b, less_f64(b, z, lo), lo, zc);
  zc = select_value(b, is_nan_f64(b, z), constant_f64(b, 0.0), zc);
  MathValue shifter = constant_f64(b, MATHREF_ROUND_SHIFTER_F64);
  MathValue n = sub_f64(b, add_f64(b, zc, shifter), shifter);
  MathValue r = sub_f64(b, zc, n);
  MathValue p = polynomial_f64(b, mathref_pow_table + MATHREF_POW_LOG_COUNT,
                               MATHREF_POW_COUNT - MATHREF_POW_LOG_COUNT, r);
  MathValue scale = shift_left_u64(b, add_u64(b, i64_from_f64(b, n), constant_u64(b, 1023)), 52);
  return f32_from_f64(b, mul_f64(b, p, scale));
}

/* pow's special cases, as the C's selects after 2^(y log2|x|). */
static MathValue pow_special_cases(MathBuilder *b, MathValue x, MathValue y, MathValue result) {
  MathValue ax = abs_f32(b, x), ay = abs_f32(b, y);
  MathValue two23 = constant_f32(b, 0x1p23f), zero = constant_f32(b, 0.0f), one = constant_f32(b, 1.0f);
  MathValue inf = constant_f32(b, INFINITY);
  MathValue ay_rounded = select_value(b, less_f32(b, ay, two23), sub_f32(b, add_f32(b, ay, two23), two23), ay);
  MathValue y_integer = equal_f32(b, ay_rounded, ay);
  MathValue below_2_24 = select_value(b, less_f32(b, ay, constant_f32(b, 0x1p24f)), ay_rounded, zero);
  MathValue y_odd = and_i32(b, y_integer, and_i32(b, i32_from_f32(b, below_2_24), constant_i32(b, 1)));
  MathValue negative_x = shift_right_u32(b, x, 31);
  result = select_value(b, and_i32(b, negative_x, y_odd), negate_f32(b, result), result);
  MathValue finite_negative = and_i32(b, less_f32(b, x, zero), less_f32(b, negate_f32(b, inf), x));
  MathValue invalid = and_i32(b, finite_negative, not_mask(b, y_integer));
  invalid = or_i32(b, or_i32(b, invalid, is_nan_f32(b, x)), is_nan_f32(b, y));
  result = select_value(b, invalid, quiet_nan(b), result);
  MathValue is_one = or_i32(b, equal_f32(b, y, zero), equal_f32(b, x, one));
  is_one = or_i32(b, is_one, and_i32(b, equal_f32(b, ax, one), equal_f32(b, ay, inf)));
  return select_value(b, is_one, one, result);
}

MathValue math_pow_f32(MathBuilder *b, MathValue x, MathValue y) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f32(b, x);
  MathValue l2 = pow_log2(b, ax);
  l2 = select_value(b, equal_f32(b, ax, constant_f32(b, 0.0f)), constant_f64(b, -INFINITY), l2);
  l2 = select_value(b, equal_f32(b, ax, constant_f32(b, INFINITY)), constant_f64(b, INFINITY), l2);
  MathValue result = pow_exp2(b, mul_f64(b, f64_from_f32(b, y), l2));
  return math_scope_end(b, scope, pow_special_cases(b, x, y, result));
}

/* ---- cbrt, rsqrt ---- */

MathValue math_cbrt_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f32(b, x);
  MathValue subnormal = less_f32(b, ax, constant_f32(b, 0x1p-126f));
  MathValue bits = select_value(b, subnormal, mul_f32(b, ax, constant_f32(b, 0x1p24f)), ax);
  MathValue e = sub_i32(b, shift_right_u32(b, bits, 23), constant_i32(b, 127));
  e = sub_i32(b, e, select_value(b, subnormal, constant_i32(b, 24), constant_i32(b, 0)));
  MathValue m = or_i32(b, and_i32(b, bits, constant_i32(b, 0x7fffff)), constant_i32(b, 0x3f800000));
  MathValue q = mul_i32(b, add_i32(b, e, constant_i32(b, 300)), constant_i32(b, 21846));
  q = sub_i32(b, shift_right_i32(b, q, 16), constant_i32(b, 100));
  MathValue k = sub_i32(b, e, mul_i32(b, constant_i32(b, 3), q));
  MathValue k_is_1 = equal_i32(b, k, constant_i32(b, 1)), k_is_2 = equal_i32(b, k, constant_i32(b, 2));
  MathValue one = constant_f32(b, 1.0f);
  /* (float)(1 << k) */
  MathValue two_k = select_value(b, k_is_1, constant_f32(b, 2.0f), select_value(b, k_is_2, constant_f32(b, 4.0f), one));
  MathValue a = mul_f32(b, m, two_k);
  MathValue g = polynomial_f32(b, mathref_cbrt_table, MATHREF_CBRT_GUESS_COUNT, m);
  MathValue cbrt_2k = select_value(b, k_is_1, constant_f32(b, mathref_cbrt_table[5]),
                                   select_value(b, k_is_2, constant_f32(b, mathref_cbrt_table[6]), one));
  g = mul_f32(b, g, cbrt_2k);
  MathValue h = mul_f32(b, g, g);
  MathValue l = fma_f32(b, g, g, negate_f32(b, h));
  MathValue residual = add_f32(b, fma_f32(b, h, g, negate_f32(b, a)), mul_f32(b, l, g));
  MathValue y = sub_f32(b, g, div_f32(b, residual, mul_f32(b, constant_f32(b, 3.0f), h)));
  y = copysign_f32(b, mul_f32(b, y, pow2_f32(b, q)), x);
  MathValue special = or_i32(b, equal_f32(b, ax, constant_f32(b, 0.0f)), equal_f32(b, ax, constant_f32(b, INFINITY)));
  special = or_i32(b, special, is_nan_f32(b, x));
  return math_scope_end(b, scope, select_value(b, special, add_f32(b, x, x), y));
}

MathValue math_rsqrt_f32(MathBuilder *b, MathValue x) {
  return div_f32(b, constant_f32(b, 1.0f), sqrt_f32(b, x));
}
