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

static MathValue quiet_nan(MathBuilder *b) { return math_constant_i32(b, 0x7fc00000); }

/* NaN gives x + x, as the C's last select. */
static MathValue nan_passed(MathBuilder *b, MathValue x, MathValue y) {
  return math_select_value(b, math_is_nan_f32(b, x), math_add_f32(b, x, x), y);
}

/* ---- exp, expm1 ---- */

/* ---- log, log1p ---- */

static MathValue log_split(MathBuilder *b, MathValue x, MathValue *e) {
  MathValue shifted = math_sub_i32(b, x, math_constant_i32(b, (int32_t)MATHREF_SQRT_HALF_BITS));
  *e = math_shift_right_i32(b, shifted, 23);
  MathValue m = math_add_i32(b, math_and_i32(b, shifted, math_constant_i32(b, 0x7fffff)),
                        math_constant_i32(b, (int32_t)MATHREF_SQRT_HALF_BITS));
  return math_sub_f32(b, m, math_constant_f32(b, 1.0f));
}

/* log_split of a positive x, subnormals scaled by 2^23 first (and e
 * lowered by 23): f, and e in *e. */
static MathValue log_split_any(MathBuilder *b, MathValue x, MathValue *e) {
  MathValue subnormal = math_less_f32(b, x, math_constant_f32(b, 0x1p-126f));
  MathValue scaled = math_select_value(b, subnormal, math_mul_f32(b, x, math_constant_f32(b, 0x1p23f)), x);
  MathValue f = log_split(b, scaled, e);
  *e =
      math_sub_i32(b, *e, math_select_value(b, subnormal, math_constant_i32(b, 23), math_constant_i32(b, 0)));
  return f;
}

/* ---- tanh, logistic, erf ---- */

MathValue math_erf_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = math_abs_f32(b, x);
  MathValue one = math_constant_f32(b, 1.0f);
  MathValue poly_small =
      math_polynomial_f32(b, mathref_erf_table, MATHREF_ERF_SMALL_COUNT, math_mul_f32(b, x, x));
  MathValue small = math_fma_f32(b, x, poly_small, x);
  MathValue t = math_min_f32(b, ax, math_constant_f32(b, 4.0f));
  MathValue exponent = math_polynomial_f32(b, mathref_erf_table + MATHREF_ERF_SMALL_COUNT,
                                      MATHREF_ERF_COUNT - MATHREF_ERF_SMALL_COUNT, math_sub_f32(b, t, one));
  MathValue large = math_copysign_f32(b, math_sub_f32(b, one, math_exp_f32(b, exponent)), x);
  MathValue y = math_select_value(b, math_less_f32(b, ax, one), small, large);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

/* ---- pow ---- */

static MathValue pow_log2(MathBuilder *b, MathValue ax) {
  MathValue e;
  MathValue f = math_f64_from_f32(b, log_split_any(b, ax, &e));
  MathValue two = math_constant_f64(b, 2.0);
  MathValue s = math_div_f64(b, f, math_add_f64(b, two, f));
  MathValue s2 = math_mul_f64(b, s, s);
  MathValue poly = math_polynomial_f64(b, mathref_pow_table, MATHREF_POW_LOG_COUNT, s2);
  MathValue log1p_f = math_add_f64(b, math_mul_f64(b, two, s), math_mul_f64(b, math_mul_f64(b, s, s2), poly));
  return math_add_f64(b, math_f64_from_i32(b, e),
                      math_mul_f64(b, log1p_f, math_constant_f64(b, MATHREF_LOG2E_F64)));
}

static MathValue pow_exp2(MathBuilder *b, MathValue z) {
  MathValue lo = math_constant_f64(b, -160.0), hi = math_constant_f64(b, 130.0);
  MathValue zc = math_select_value(b, math_less_f64(b, hi, z), hi, z);
  zc = math_select_value(b, math_less_f64(b, z, lo), lo, zc);
  zc = math_select_value(b, math_is_nan_f64(b, z), math_constant_f64(b, 0.0), zc);
  MathValue shifter = math_constant_f64(b, MATHREF_ROUND_SHIFTER_F64);
  MathValue n = math_sub_f64(b, math_add_f64(b, zc, shifter), shifter);
  MathValue r = math_sub_f64(b, zc, n);
  MathValue p = math_polynomial_f64(b, mathref_pow_table + MATHREF_POW_LOG_COUNT,
                               MATHREF_POW_COUNT - MATHREF_POW_LOG_COUNT, r);
  MathValue scale =
      math_shift_left_u64(b, math_add_u64(b, math_i64_from_f64(b, n), math_constant_u64(b, 1023)), 52);
  return math_f32_from_f64(b, math_mul_f64(b, p, scale));
}

/* pow's special cases, as the C's selects after 2^(y log2|x|). */
static MathValue pow_special_cases(MathBuilder *b, MathValue x, MathValue y, MathValue result) {
  MathValue ax = math_abs_f32(b, x), ay = math_abs_f32(b, y);
  MathValue two23 = math_constant_f32(b, 0x1p23f), zero = math_constant_f32(b, 0.0f),
            one = math_constant_f32(b, 1.0f);
  MathValue inf = math_constant_f32(b, INFINITY);
  MathValue ay_rounded = math_select_value(b, math_less_f32(b, ay, two23), math_sub_f32(b, math_add_f32(b, ay, two23), two23), ay);
  MathValue y_integer = math_equal_f32(b, ay_rounded, ay);
  MathValue below_2_24 =
      math_select_value(b, math_less_f32(b, ay, math_constant_f32(b, 0x1p24f)), ay_rounded, zero);
  MathValue y_odd =
      math_and_i32(b, y_integer, math_and_i32(b, math_i32_from_f32(b, below_2_24), math_constant_i32(b, 1)));
  MathValue negative_x = math_shift_right_u32(b, x, 31);
  result = math_select_value(b, math_and_i32(b, negative_x, y_odd), math_negate_f32(b, result), result);
  MathValue finite_negative =
      math_and_i32(b, math_less_f32(b, x, zero), math_less_f32(b, math_negate_f32(b, inf), x));
  MathValue invalid = math_and_i32(b, finite_negative, math_not_mask(b, y_integer));
  invalid = math_or_i32(b, math_or_i32(b, invalid, math_is_nan_f32(b, x)), math_is_nan_f32(b, y));
  result = math_select_value(b, invalid, quiet_nan(b), result);
  MathValue is_one = math_or_i32(b, math_equal_f32(b, y, zero), math_equal_f32(b, x, one));
  is_one = math_or_i32(b, is_one, math_and_i32(b, math_equal_f32(b, ax, one), math_equal_f32(b, ay, inf)));
  return math_select_value(b, is_one, one, result);
}

MathValue math_pow_f32(MathBuilder *b, MathValue x, MathValue y) {
  int scope = math_scope_begin(b);
  MathValue ax = math_abs_f32(b, x);
  MathValue l2 = pow_log2(b, ax);
  l2 = math_select_value(b, math_equal_f32(b, ax, math_constant_f32(b, 0.0f)),
                         math_constant_f64(b, -INFINITY), l2);
  l2 = math_select_value(b, math_equal_f32(b, ax, math_constant_f32(b, INFINITY)),
                         math_constant_f64(b, INFINITY), l2);
  MathValue result = pow_exp2(b, math_mul_f64(b, math_f64_from_f32(b, y), l2));
  return math_scope_end(b, scope, pow_special_cases(b, x, y, result));
}

/* ---- cbrt, rsqrt ---- */
