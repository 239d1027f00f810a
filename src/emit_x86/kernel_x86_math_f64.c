/* The f64 math functions in the kernel compiler's scalar code (exp,
 * expm1, log, log1p, atan2, cbrt, rsqrt and their compositions),
 * transcribed operation for operation from their mathref_* definitions in
 * src/ir/kernel/math_reference_f64.c with the math builder. */
#include "emit_x86/kernel_x86_math_builder.h"

#include <math.h>

#include "kernel/math_reference.h"

static MathValue quiet_nan(MathBuilder *b) { return math_constant_u64(b, UINT64_C(0x7ff8000000000000)); }

static MathValue nan_passed(MathBuilder *b, MathValue x, MathValue y) {
  return math_select_value(b, math_is_nan_f64(b, x), math_add_f64(b, x, x), y);
}

static MathValue pow2(MathBuilder *b, MathValue n) {
  return math_shift_left_u64(b, math_add_u64(b, n, math_constant_u64(b, 1023)), 52);
}

/* ---- exp, expm1 ---- */

/* ---- log, log1p ---- */

static MathValue log_split(MathBuilder *b, MathValue x, MathValue *e) {
  MathValue sqrt_half = math_constant_u64(b, MATHREF_SQRT_HALF_BITS_F64);
  MathValue shifted = math_sub_u64(b, x, sqrt_half);
  *e = math_shift_right_i64(b, shifted, 52);
  MathValue m =
      math_add_u64(b, math_and_u64(b, shifted, math_constant_u64(b, (UINT64_C(1) << 52) - 1)), sqrt_half);
  return math_sub_f64(b, m, math_constant_f64(b, 1.0));
}

/* ---- atan2 ---- */

/* ---- cbrt, rsqrt ---- */

/* ---- compositions ---- */


/* ---- erf ---- */

/* The `count` doubles of row `row` (an i32 slot) of a table placed in the
 * code (jumped over), read rip-relative: the scalar form of a gather. */
static void table_row_load(MathBuilder *b, const double *table, size_t bytes, MathValue row, int count,
                           MathValue *out) {
  X86Buffer *cb = b->x->cb;
  X86Label data = x86_label_new(cb), over = x86_label_new(cb);
  x86_emit(cb, X86_JMP, x86_rel(over));
  x86_label_bind(cb, data);
  x86_emit_bytes(cb, table, bytes);
  x86_label_bind(cb, over);
  x86_emit(cb, X86_LEA, x86_reg(X86_RDX), x86_mem_label(8, data));
  x86_emit(cb, X86_IMUL, x86_reg(X86_EAX), math_slot_operand(b, row, 4), x86_imm(8 * count));
  for (int k = 0; k < count; k++) {
    out[k] = math_value_new(b);
    x86_emit(cb, X86_MOV, x86_reg(X86_RCX), x86_mem_index(8, X86_RDX, X86_RAX, 1, 8 * k));
    x86_emit(cb, X86_MOV, math_slot_operand(b, out[k], 8), x86_reg(X86_RCX));
  }
}

MathValue math_erf_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = math_abs_f64(b, x), one = math_constant_f64(b, 1.0);
  MathValue z = math_mul_f64(b, x, x);
  MathValue w =
      math_mul_f64(b, z, math_polynomial_f64(b, mathref_erf_small_f64_table, MATHREF_ERF_SMALL_F64_COUNT, z));
  MathValue c_hi = math_constant_f64(b, MATHREF_TWO_OVER_SQRT_PI_HI_F64);
  MathValue tiny = math_less_f64(b, ax, math_constant_f64(b, 0x1p-900));
  MathValue xs = math_select_value(b, tiny, math_mul_f64(b, x, math_constant_f64(b, 0x1p64)), x);
  MathValue inner =
      math_mul_f64(b, xs, math_fma_f64(b, c_hi, w, math_constant_f64(b, MATHREF_TWO_OVER_SQRT_PI_LO_F64)));
  MathValue small = math_fma_f64(b, xs, c_hi, inner);
  small = math_select_value(b, tiny, math_mul_f64(b, small, math_constant_f64(b, 0x1p-64)), small);
  MathValue t = math_min_f64(b, math_max_f64(b, ax, one), math_constant_f64(b, 6.0));
  MathValue k =
      math_i32_from_f64_truncated(b, math_mul_f64(b, math_sub_f64(b, t, one), math_constant_f64(b, 2.0)));
  MathValue last = math_constant_i32(b, 9);
  k = math_select_value(b, math_less_i32(b, last, k), last, k);
  MathValue center = math_add_f64(b, math_constant_f64(b, 1.25),
                                  math_mul_f64(b, math_constant_f64(b, 0.5), math_f64_from_i32(b, k)));
  MathValue h = math_sub_f64(b, t, center);
  MathValue row[MATHREF_ERFC_F64_COUNT];
  table_row_load(b, &mathref_erfc_f64_rows[0][0], sizeof mathref_erfc_f64_rows, k, MATHREF_ERFC_F64_COUNT, row);
  MathValue erfc = row[MATHREF_ERFC_F64_COUNT - 1];
  for (int j = MATHREF_ERFC_F64_COUNT - 2; j >= 0; j--) erfc = math_fma_f64(b, erfc, h, row[j]);
  MathValue large = math_copysign_f64(b, math_sub_f64(b, one, erfc), x);
  MathValue y = math_select_value(b, math_less_f64(b, ax, one), small, large);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

/* ---- pow ---- */

static MathValue two_sum(MathBuilder *b, MathValue a, MathValue c, MathValue *e) {
  MathValue s = math_add_f64(b, a, c);
  MathValue back = math_sub_f64(b, s, a);
  *e = math_add_f64(b, math_sub_f64(b, a, math_sub_f64(b, s, back)), math_sub_f64(b, c, back));
  return s;
}

/* log(m) = 2 atanh(s) in two doubles: see pow_log2_f64 in the C. */
static MathValue pow_log_m(MathBuilder *b, MathValue f, MathValue *low) {
  MathValue two = math_constant_f64(b, 2.0);
  MathValue den = math_add_f64(b, two, f);
  MathValue den_l = math_add_f64(b, math_sub_f64(b, two, den), f);
  MathValue s = math_div_f64(b, f, den);
  MathValue s_l = math_div_f64(
      b, math_sub_f64(b, math_fma_f64(b, math_negate_f64(b, s), den, f), math_mul_f64(b, s, den_l)), den);
  MathValue s2 = math_mul_f64(b, s, s);
  MathValue s2_l = math_fma_f64(b, s, s, math_negate_f64(b, s2));
  MathValue s3 = math_mul_f64(b, s2, s);
  MathValue cross = math_add_f64(b, math_mul_f64(b, s2_l, s),
                                 math_mul_f64(b, math_mul_f64(b, math_constant_f64(b, 3.0), s2), s_l));
  MathValue s3_l = math_add_f64(b, math_fma_f64(b, s2, s, math_negate_f64(b, s3)), cross);
  MathValue c_hi = math_constant_f64(b, MATHREF_TWO_THIRDS_HI_F64);
  MathValue t = math_mul_f64(b, s3, c_hi);
  MathValue t_parts = math_add_f64(b, math_mul_f64(b, s3, math_constant_f64(b, MATHREF_TWO_THIRDS_LO_F64)), math_mul_f64(b, s3_l, c_hi));
  MathValue t_l = math_add_f64(b, math_fma_f64(b, s3, c_hi, math_negate_f64(b, t)), t_parts);
  MathValue series = math_polynomial_f64(b, mathref_pow_log_f64_table, MATHREF_POW_LOG_F64_COUNT, s2);
  MathValue rest = math_mul_f64(b, math_mul_f64(b, s3, s2), series);
  MathValue twice = math_mul_f64(b, two, s);
  MathValue h = math_add_f64(b, twice, t);
  MathValue small = math_add_f64(b, math_mul_f64(b, two, s_l), math_add_f64(b, t_l, rest));
  *low = math_add_f64(b, math_sub_f64(b, t, math_sub_f64(b, h, twice)), small);
  return h;
}

static MathValue pow_log2(MathBuilder *b, MathValue ax, MathValue *low) {
  MathValue subnormal = math_less_f64(b, ax, math_constant_f64(b, 0x1p-1022));
  MathValue e;
  MathValue f = log_split(
      b, math_select_value(b, subnormal, math_mul_f64(b, ax, math_constant_f64(b, 0x1p54)), ax), &e);
  e = math_sub_u64(b, e, math_select_value(b, subnormal, math_constant_u64(b, 54), math_constant_u64(b, 0)));
  MathValue l;
  MathValue h = pow_log_m(b, f, &l);
  MathValue log2e = math_constant_f64(b, MATHREF_LOG2E_F64);
  MathValue p = math_mul_f64(b, h, log2e);
  MathValue p_parts = math_add_f64(b, math_mul_f64(b, h, math_constant_f64(b, MATHREF_LOG2E_LO_F64)),
                                   math_mul_f64(b, l, log2e));
  MathValue p_l = math_add_f64(b, math_fma_f64(b, h, log2e, math_negate_f64(b, p)), p_parts);
  MathValue sum_l;
  MathValue sum = two_sum(b, math_f64_from_i64(b, e), p, &sum_l);
  MathValue tail = math_add_f64(b, sum_l, p_l);
  MathValue result = math_add_f64(b, sum, tail);
  *low = math_add_f64(b, math_sub_f64(b, sum, result), tail);
  return result;
}

static MathValue pow_exp2(MathBuilder *b, MathValue z, MathValue z_l) {
  MathValue zero = math_constant_f64(b, 0.0), limit = math_constant_f64(b, 1100.0);
  MathValue out = math_not_mask(b, math_less_equal_f64(b, math_abs_f64(b, z), limit));
  MathValue z_nan = math_is_nan_f64(b, z);
  MathValue signed_limit =
      math_select_value(b, math_less_f64(b, zero, z), limit, math_constant_f64(b, -1100.0));
  MathValue zc = math_select_value(b, z_nan, zero, math_select_value(b, out, signed_limit, z));
  MathValue zl = math_select_value(b, math_or_i32(b, out, z_nan), zero, z_l);
  MathValue shifter = math_constant_f64(b, MATHREF_ROUND_SHIFTER_F64);
  MathValue n = math_sub_f64(b, math_add_f64(b, zc, shifter), shifter);
  MathValue head = math_sub_f64(b, zc, n);
  MathValue r = math_add_f64(b, head, zl);
  MathValue r_l = math_add_f64(b, math_sub_f64(b, head, r), zl);
  MathValue ln2 = math_constant_f64(b, MATHREF_LN2_F64);
  MathValue t = math_mul_f64(b, r, ln2);
  MathValue t_parts = math_add_f64(b, math_mul_f64(b, r, math_constant_f64(b, MATHREF_LN2_LO_EXACT_F64)), math_mul_f64(b, r_l, ln2));
  MathValue t_l = math_add_f64(b, math_fma_f64(b, r, ln2, math_negate_f64(b, t)), t_parts);
  MathValue p = math_polynomial_f64(b, mathref_exp_f64_table, MATHREF_EXP_F64_COUNT, t);
  MathValue inner = math_fma_f64(b, math_mul_f64(b, t, t), p, math_fma_f64(b, t_l, t, t_l));
  MathValue y = math_add_f64(b, math_constant_f64(b, 1.0), math_add_f64(b, t, inner));
  MathValue ni = math_i64_from_f64(b, n);
  MathValue n1 = math_shift_right_i64(b, ni, 1);
  return math_mul_f64(b, math_mul_f64(b, y, pow2(b, n1)), pow2(b, math_sub_u64(b, ni, n1)));
}

static MathValue pow_special_cases(MathBuilder *b, MathValue x, MathValue y, MathValue result) {
  MathValue ax = math_abs_f64(b, x), ay = math_abs_f64(b, y);
  MathValue two52 = math_constant_f64(b, 0x1p52), zero = math_constant_f64(b, 0.0),
            one = math_constant_f64(b, 1.0);
  MathValue inf = math_constant_f64(b, INFINITY);
  MathValue ay_rounded = math_select_value(b, math_less_f64(b, ay, two52), math_sub_f64(b, math_add_f64(b, ay, two52), two52), ay);
  MathValue y_integer = math_equal_f64(b, ay_rounded, ay);
  MathValue below_2_53 =
      math_select_value(b, math_less_f64(b, ay, math_constant_f64(b, 0x1p53)), ay_rounded, zero);
  MathValue y_odd =
      math_and_i32(b, y_integer, math_and_i32(b, math_i64_from_f64(b, below_2_53), math_constant_i32(b, 1)));
  MathValue negative_x = math_shift_right_u64(b, x, 63);
  result = math_select_value(b, math_and_i32(b, negative_x, y_odd), math_negate_f64(b, result), result);
  MathValue finite_negative =
      math_and_i32(b, math_less_f64(b, x, zero), math_less_f64(b, math_negate_f64(b, inf), x));
  MathValue invalid = math_and_i32(b, finite_negative, math_not_mask(b, y_integer));
  invalid = math_or_i32(b, math_or_i32(b, invalid, math_is_nan_f64(b, x)), math_is_nan_f64(b, y));
  result = math_select_value(b, invalid, quiet_nan(b), result);
  MathValue is_one = math_or_i32(b, math_equal_f64(b, y, zero), math_equal_f64(b, x, one));
  is_one = math_or_i32(b, is_one, math_and_i32(b, math_equal_f64(b, ax, one), math_equal_f64(b, ay, inf)));
  return math_select_value(b, is_one, one, result);
}

MathValue math_pow_f64(MathBuilder *b, MathValue x, MathValue y) {
  int scope = math_scope_begin(b);
  MathValue ax = math_abs_f64(b, x);
  MathValue l_low;
  MathValue l = pow_log2(b, ax, &l_low);
  MathValue zero = math_constant_f64(b, 0.0), inf = math_constant_f64(b, INFINITY);
  MathValue ax_zero = math_equal_f64(b, ax, zero), ax_inf = math_equal_f64(b, ax, inf);
  MathValue edge = math_or_i32(b, ax_zero, ax_inf);
  l = math_select_value(b, ax_zero, math_constant_f64(b, -INFINITY), math_select_value(b, ax_inf, inf, l));
  l_low = math_select_value(b, edge, zero, l_low);
  MathValue z = math_mul_f64(b, y, l);
  MathValue z_l = math_add_f64(b, math_fma_f64(b, y, l, math_negate_f64(b, z)), math_mul_f64(b, y, l_low));
  MathValue result = pow_exp2(b, z, math_select_value(b, edge, zero, z_l));
  return math_scope_end(b, scope, pow_special_cases(b, x, y, result));
}
