/* The f64 math functions in the kernel compiler's scalar code (exp,
 * expm1, log, log1p, atan2, cbrt, rsqrt and their compositions),
 * transcribed operation for operation from their mathref_* definitions in
 * src/ir/kernel/math_reference_f64.c with the math builder. */
#include "emit_x86/kernel_x86_math_builder.h"

#include <math.h>

#include "kernel/math_reference.h"

static MathValue quiet_nan(MathBuilder *b) { return constant_u64(b, UINT64_C(0x7ff8000000000000)); }

static MathValue nan_passed(MathBuilder *b, MathValue x, MathValue y) {
  return select_value(b, is_nan_f64(b, x), add_f64(b, x, x), y);
}

static MathValue pow2(MathBuilder *b, MathValue n) {
  return shift_left_u64(b, add_u64(b, n, constant_u64(b, 1023)), 52);
}

static MathValue clamp(MathBuilder *b, MathValue x, double lo, double hi) {
  return min_f64(b, max_f64(b, x, constant_f64(b, lo)), constant_f64(b, hi));
}

/* ---- exp, expm1 ---- */

static MathValue exp_reduce(MathBuilder *b, MathValue x, MathValue *n) {
  MathValue shifter = constant_f64(b, MATHREF_ROUND_SHIFTER_F64);
  *n = sub_f64(b, fma_f64(b, x, constant_f64(b, MATHREF_LOG2E_F64), shifter), shifter);
  MathValue r = fma_f64(b, *n, constant_f64(b, -MATHREF_LN2_HI_F64), x);
  return fma_f64(b, *n, constant_f64(b, -MATHREF_LN2_LO_F64), r);
}

MathValue math_exp_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue n;
  MathValue r = exp_reduce(b, clamp(b, x, -746.0, 710.0), &n);
  MathValue poly = polynomial_f64(b, mathref_exp_f64_table, MATHREF_EXP_F64_COUNT, r);
  MathValue p = add_f64(b, constant_f64(b, 1.0), fma_f64(b, mul_f64(b, r, r), poly, r));
  MathValue ni = i64_from_f64(b, n);
  MathValue n1 = shift_right_i64(b, ni, 1);
  MathValue y = mul_f64(b, mul_f64(b, p, pow2(b, n1)), pow2(b, sub_u64(b, ni, n1)));
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

MathValue math_expm1_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue xc = clamp(b, x, -40.0, 710.0);
  MathValue shifter = constant_f64(b, MATHREF_ROUND_SHIFTER_F64);
  MathValue n = sub_f64(b, fma_f64(b, xc, constant_f64(b, MATHREF_LOG2E_F64), shifter), shifter);
  MathValue r_exact = fma_f64(b, n, constant_f64(b, -MATHREF_LN2_HI_F64), xc);
  MathValue lo = mul_f64(b, n, constant_f64(b, -MATHREF_LN2_LO_F64));
  MathValue r = add_f64(b, r_exact, lo);
  MathValue r_lost = add_f64(b, sub_f64(b, r_exact, r), lo);
  MathValue poly = polynomial_f64(b, mathref_exp_f64_table, MATHREF_EXP_F64_COUNT, r);
  MathValue q = add_f64(b, r, fma_f64(b, mul_f64(b, r, r), poly, fma_f64(b, r_lost, r, r_lost)));
  MathValue half = pow2(b, sub_u64(b, i64_from_f64(b, n), constant_u64(b, 1)));
  MathValue y = fma_f64(b, half, q, sub_f64(b, half, constant_f64(b, 0.5)));
  y = mul_f64(b, constant_f64(b, 2.0), y);
  y = select_value(b, equal_f64(b, n, constant_f64(b, 0.0)), q, y);
  y = select_value(b, less_f64(b, abs_f64(b, x), constant_f64(b, 0x1p-54)), x, y);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

/* ---- log, log1p ---- */

static MathValue log_split(MathBuilder *b, MathValue x, MathValue *e) {
  MathValue sqrt_half = constant_u64(b, MATHREF_SQRT_HALF_BITS_F64);
  MathValue shifted = sub_u64(b, x, sqrt_half);
  *e = shift_right_i64(b, shifted, 52);
  MathValue m = add_u64(b, and_u64(b, shifted, constant_u64(b, (UINT64_C(1) << 52) - 1)), sqrt_half);
  return sub_f64(b, m, constant_f64(b, 1.0));
}

static MathValue log_combine(MathBuilder *b, MathValue e, MathValue f, MathValue extra) {
  MathValue ef = f64_from_i64(b, e);
  MathValue s = div_f64(b, f, add_f64(b, constant_f64(b, 2.0), f));
  MathValue z = mul_f64(b, s, s);
  MathValue r = mul_f64(b, z, polynomial_f64(b, mathref_log_f64_table, MATHREF_LOG_F64_COUNT, z));
  MathValue hfsq = mul_f64(b, mul_f64(b, constant_f64(b, 0.5), f), f);
  MathValue small = fma_f64(b, s, add_f64(b, hfsq, r), fma_f64(b, ef, constant_f64(b, MATHREF_LN2_LO_F64), extra));
  return fma_f64(b, ef, constant_f64(b, MATHREF_LN2_HI_F64), sub_f64(b, f, sub_f64(b, hfsq, small)));
}

MathValue math_log_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue subnormal = less_f64(b, x, constant_f64(b, 0x1p-1022));
  MathValue e;
  MathValue f = log_split(b, select_value(b, subnormal, mul_f64(b, x, constant_f64(b, 0x1p54)), x), &e);
  e = sub_u64(b, e, select_value(b, subnormal, constant_u64(b, 54), constant_u64(b, 0)));
  MathValue zero = constant_f64(b, 0.0);
  MathValue y = log_combine(b, e, f, zero);
  y = select_value(b, equal_f64(b, x, constant_f64(b, INFINITY)), x, y);
  y = select_value(b, equal_f64(b, x, zero), constant_f64(b, -INFINITY), y);
  y = select_value(b, less_f64(b, x, zero), quiet_nan(b), y);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

MathValue math_log1p_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue one = constant_f64(b, 1.0), minus_one = constant_f64(b, -1.0);
  MathValue u = add_f64(b, one, x);
  MathValue c = div_f64(b, sub_f64(b, x, sub_f64(b, u, one)), u);
  MathValue e;
  MathValue f = log_split(b, u, &e);
  MathValue y = log_combine(b, e, f, c);
  y = select_value(b, less_f64(b, abs_f64(b, x), constant_f64(b, 0x1p-54)), x, y);
  y = select_value(b, equal_f64(b, x, constant_f64(b, INFINITY)), x, y);
  y = select_value(b, equal_f64(b, x, minus_one), constant_f64(b, -INFINITY), y);
  y = select_value(b, less_f64(b, x, minus_one), quiet_nan(b), y);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

/* ---- atan2 ---- */

static MathValue atan_argument(MathBuilder *b, MathValue little, MathValue big, MathValue *fold, MathValue *t_lo) {
  MathValue zero = constant_f64(b, 0.0), one = constant_f64(b, 1.0), inf = constant_f64(b, INFINITY);
  MathValue scale = select_value(b, less_f64(b, big, constant_f64(b, 0x1p-900)), constant_f64(b, 0x1p600), one);
  little = mul_f64(b, little, scale);
  big = mul_f64(b, big, scale);
  MathValue u = div_f64(b, little, big);
  MathValue u_lo = div_f64(b, fma_f64(b, negate_f64(b, u), big, little), big);
  MathValue big_zero = equal_f64(b, big, zero);
  u = select_value(b, big_zero, zero, u);
  u = select_value(b, equal_f64(b, little, inf), one, u);
  u_lo = select_value(b, or_i32(b, big_zero, equal_f64(b, big, inf)), zero, u_lo);
  *fold = less_f64(b, constant_f64(b, MATHREF_TAN_PI_8_F64), u);
  MathValue num = sub_f64(b, u, one);
  MathValue num_lo = add_f64(b, sub_f64(b, u, add_f64(b, num, one)), u_lo);
  MathValue den = add_f64(b, u, one);
  MathValue den_lo = add_f64(b, sub_f64(b, u, sub_f64(b, den, one)), u_lo);
  MathValue q = div_f64(b, num, den);
  MathValue q_residual = add_f64(b, fma_f64(b, negate_f64(b, q), den, num), num_lo);
  MathValue q_lo = div_f64(b, sub_f64(b, q_residual, mul_f64(b, q, den_lo)), den);
  *t_lo = select_value(b, *fold, q_lo, u_lo);
  return select_value(b, *fold, q, u);
}

MathValue math_atan2_f64(MathBuilder *b, MathValue y, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f64(b, x), ay = abs_f64(b, y);
  MathValue fold, t_lo;
  MathValue t = atan_argument(b, min_f64(b, ax, ay), max_f64(b, ax, ay), &fold, &t_lo);
  MathValue z = mul_f64(b, t, t);
  MathValue p = polynomial_f64(b, mathref_atan_f64_table, MATHREF_ATAN_F64_COUNT, z);
  MathValue w = fma_f64(b, t, mul_f64(b, z, p), fma_f64(b, negate_f64(b, t_lo), z, t_lo));
  MathValue m = select_value(b, fold, constant_u64(b, 1), constant_u64(b, 0));
  MathValue s = constant_f64(b, 1.0);
  MathValue swap = less_f64(b, ax, ay);
  m = select_value(b, swap, sub_u64(b, constant_u64(b, 2), m), m);
  s = select_value(b, swap, negate_f64(b, s), s);
  MathValue negative_x = shift_right_u64(b, x, 63);
  m = select_value(b, negative_x, sub_u64(b, constant_u64(b, 4), m), m);
  s = select_value(b, negative_x, negate_f64(b, s), s);
  MathValue mf = f64_from_i64(b, m);
  MathValue inner = fma_f64(b, mf, constant_f64(b, MATHREF_PIO4_LO_F64), mul_f64(b, s, w));
  MathValue angle = fma_f64(b, mf, constant_f64(b, MATHREF_PIO4_HI_F64), fma_f64(b, s, t, inner));
  MathValue result = copysign_f64(b, angle, y);
  MathValue invalid = or_i32(b, is_nan_f64(b, x), is_nan_f64(b, y));
  return math_scope_end(b, scope, select_value(b, invalid, add_f64(b, x, y), result));
}

/* ---- cbrt, rsqrt ---- */

static MathValue cbrt_newton(MathBuilder *b, MathValue g, MathValue a) {
  MathValue h = mul_f64(b, g, g);
  MathValue l = fma_f64(b, g, g, negate_f64(b, h));
  MathValue residual = add_f64(b, fma_f64(b, h, g, negate_f64(b, a)), mul_f64(b, l, g));
  return sub_f64(b, g, div_f64(b, residual, mul_f64(b, constant_f64(b, 3.0), h)));
}

MathValue math_cbrt_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f64(b, x);
  MathValue subnormal = less_f64(b, ax, constant_f64(b, 0x1p-1022));
  MathValue bits = select_value(b, subnormal, mul_f64(b, ax, constant_f64(b, 0x1p54)), ax);
  MathValue e = sub_u64(b, shift_right_u64(b, bits, 52), constant_u64(b, 1023));
  e = sub_u64(b, e, select_value(b, subnormal, constant_u64(b, 54), constant_u64(b, 0)));
  MathValue m = or_u64(b, and_u64(b, bits, constant_u64(b, (UINT64_C(1) << 52) - 1)),
                       constant_u64(b, UINT64_C(0x3ff0000000000000)));
  /* e + 3000 and q fit 32 bits: the i32 operations */
  MathValue q = mul_i32(b, add_i32(b, e, constant_i32(b, 3000)), constant_i32(b, 21846));
  q = sub_i32(b, shift_right_i32(b, q, 16), constant_i32(b, 1000));
  MathValue k = sub_i32(b, e, mul_i32(b, constant_i32(b, 3), q));
  MathValue a = mul_f64(b, m, pow2(b, u64_sign_extended(b, k)));
  MathValue g = f64_from_f32(b, math_cbrt_f32(b, f32_from_f64(b, a)));
  g = cbrt_newton(b, cbrt_newton(b, g, a), a);
  MathValue y = copysign_f64(b, mul_f64(b, g, pow2(b, u64_sign_extended(b, q))), x);
  MathValue special = or_i32(b, equal_f64(b, ax, constant_f64(b, 0.0)), equal_f64(b, ax, constant_f64(b, INFINITY)));
  special = or_i32(b, special, is_nan_f64(b, x));
  return math_scope_end(b, scope, select_value(b, special, add_f64(b, x, x), y));
}

MathValue math_rsqrt_f64(MathBuilder *b, MathValue x) {
  return div_f64(b, constant_f64(b, 1.0), sqrt_f64(b, x));
}

/* ---- compositions ---- */

MathValue math_atan_f64(MathBuilder *b, MathValue x) { return math_atan2_f64(b, x, constant_f64(b, 1.0)); }

static MathValue cosine_of_asin(MathBuilder *b, MathValue x) {
  return sqrt_f64(b, fma_f64(b, negate_f64(b, x), x, constant_f64(b, 1.0)));
}

MathValue math_asin_f64(MathBuilder *b, MathValue x) { return math_atan2_f64(b, x, cosine_of_asin(b, x)); }
MathValue math_acos_f64(MathBuilder *b, MathValue x) { return math_atan2_f64(b, cosine_of_asin(b, x), x); }

static MathValue half_exp_squared(MathBuilder *b, MathValue ax) {
  MathValue half = constant_f64(b, 0.5);
  MathValue h = math_exp_f64(b, mul_f64(b, half, ax));
  return mul_f64(b, mul_f64(b, half, h), h);
}

MathValue math_sinh_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f64(b, x);
  MathValue limit = constant_f64(b, 709.0);
  MathValue t = math_expm1_f64(b, min_f64(b, ax, limit));
  MathValue sum = add_f64(b, t, div_f64(b, t, add_f64(b, t, constant_f64(b, 1.0))));
  MathValue small = mul_f64(b, constant_f64(b, 0.5), sum);
  MathValue y = select_value(b, less_f64(b, ax, limit), small, half_exp_squared(b, ax));
  return math_scope_end(b, scope, nan_passed(b, x, copysign_f64(b, y, x)));
}

MathValue math_cosh_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f64(b, x);
  MathValue limit = constant_f64(b, 709.0), half = constant_f64(b, 0.5);
  MathValue e = math_exp_f64(b, min_f64(b, ax, limit));
  MathValue small = add_f64(b, mul_f64(b, half, e), div_f64(b, half, e));
  MathValue y = select_value(b, less_f64(b, ax, limit), small, half_exp_squared(b, ax));
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

MathValue math_tanh_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f64(b, x);
  MathValue two = constant_f64(b, 2.0), minus_two = constant_f64(b, -2.0), one = constant_f64(b, 1.0);
  MathValue t_small = math_expm1_f64(b, mul_f64(b, minus_two, ax));
  MathValue t_large = math_expm1_f64(b, mul_f64(b, two, min_f64(b, ax, constant_f64(b, 22.0))));
  MathValue small = div_f64(b, negate_f64(b, t_small), add_f64(b, t_small, two));
  MathValue large = sub_f64(b, one, div_f64(b, two, add_f64(b, t_large, two)));
  MathValue y = select_value(b, less_f64(b, ax, one), small, large);
  y = select_value(b, equal_f64(b, x, constant_f64(b, 0.0)), x, copysign_f64(b, y, x));
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

MathValue math_logistic_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue e = math_exp_f64(b, negate_f64(b, abs_f64(b, x)));
  MathValue one = constant_f64(b, 1.0);
  MathValue numerator = select_value(b, less_f64(b, x, constant_f64(b, 0.0)), e, one);
  MathValue sum = add_f64(b, one, e);
  MathValue sum_lost = add_f64(b, sub_f64(b, one, sum), e);
  MathValue y = div_f64(b, numerator, sum);
  MathValue residual = sub_f64(b, fma_f64(b, negate_f64(b, y), sum, numerator), mul_f64(b, y, sum_lost));
  return math_scope_end(b, scope, add_f64(b, y, div_f64(b, residual, sum)));
}

static MathValue log_twice(MathBuilder *b, MathValue x) {
  return add_f64(b, math_log_f64(b, x), constant_f64(b, MATHREF_LN2_F64));
}

MathValue math_asinh_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f64(b, x);
  MathValue limit = constant_f64(b, 0x1p28), one = constant_f64(b, 1.0);
  MathValue a = min_f64(b, ax, limit);
  MathValue z = mul_f64(b, a, a);
  MathValue root = add_f64(b, one, sqrt_f64(b, add_f64(b, one, z)));
  MathValue small = math_log1p_f64(b, add_f64(b, a, div_f64(b, z, root)));
  MathValue y = select_value(b, less_f64(b, ax, limit), small, log_twice(b, ax));
  return math_scope_end(b, scope, nan_passed(b, x, copysign_f64(b, y, x)));
}

MathValue math_acosh_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue limit = constant_f64(b, 0x1p28), one = constant_f64(b, 1.0);
  MathValue t = sub_f64(b, min_f64(b, x, limit), one);
  MathValue product = mul_f64(b, t, add_f64(b, t, constant_f64(b, 2.0)));
  MathValue small = math_log1p_f64(b, add_f64(b, t, sqrt_f64(b, product)));
  MathValue y = select_value(b, less_f64(b, x, limit), small, log_twice(b, x));
  y = select_value(b, less_f64(b, x, one), quiet_nan(b), y);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

MathValue math_atanh_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f64(b, x);
  MathValue twice = add_f64(b, ax, ax);
  MathValue d = sub_f64(b, constant_f64(b, 1.0), ax);
  MathValue u_small = fma_f64(b, twice, div_f64(b, ax, d), twice);
  MathValue u = select_value(b, less_f64(b, ax, constant_f64(b, 0.5)), u_small, div_f64(b, twice, d));
  MathValue y = mul_f64(b, constant_f64(b, 0.5), math_log1p_f64(b, u));
  return math_scope_end(b, scope, nan_passed(b, x, copysign_f64(b, y, x)));
}

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
  MathValue ax = abs_f64(b, x), one = constant_f64(b, 1.0);
  MathValue z = mul_f64(b, x, x);
  MathValue w = mul_f64(b, z, polynomial_f64(b, mathref_erf_small_f64_table, MATHREF_ERF_SMALL_F64_COUNT, z));
  MathValue c_hi = constant_f64(b, MATHREF_TWO_OVER_SQRT_PI_HI_F64);
  MathValue tiny = less_f64(b, ax, constant_f64(b, 0x1p-900));
  MathValue xs = select_value(b, tiny, mul_f64(b, x, constant_f64(b, 0x1p64)), x);
  MathValue inner = mul_f64(b, xs, fma_f64(b, c_hi, w, constant_f64(b, MATHREF_TWO_OVER_SQRT_PI_LO_F64)));
  MathValue small = fma_f64(b, xs, c_hi, inner);
  small = select_value(b, tiny, mul_f64(b, small, constant_f64(b, 0x1p-64)), small);
  MathValue t = min_f64(b, max_f64(b, ax, one), constant_f64(b, 6.0));
  MathValue k = i32_from_f64_truncated(b, mul_f64(b, sub_f64(b, t, one), constant_f64(b, 2.0)));
  MathValue last = constant_i32(b, 9);
  k = select_value(b, less_i32(b, last, k), last, k);
  MathValue center = add_f64(b, constant_f64(b, 1.25), mul_f64(b, constant_f64(b, 0.5), f64_from_i32(b, k)));
  MathValue h = sub_f64(b, t, center);
  MathValue row[MATHREF_ERFC_F64_COUNT];
  table_row_load(b, &mathref_erfc_f64_rows[0][0], sizeof mathref_erfc_f64_rows, k, MATHREF_ERFC_F64_COUNT, row);
  MathValue erfc = row[MATHREF_ERFC_F64_COUNT - 1];
  for (int j = MATHREF_ERFC_F64_COUNT - 2; j >= 0; j--) erfc = fma_f64(b, erfc, h, row[j]);
  MathValue large = copysign_f64(b, sub_f64(b, one, erfc), x);
  MathValue y = select_value(b, less_f64(b, ax, one), small, large);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

/* ---- pow ---- */

static MathValue two_sum(MathBuilder *b, MathValue a, MathValue c, MathValue *e) {
  MathValue s = add_f64(b, a, c);
  MathValue back = sub_f64(b, s, a);
  *e = add_f64(b, sub_f64(b, a, sub_f64(b, s, back)), sub_f64(b, c, back));
  return s;
}

/* log(m) = 2 atanh(s) in two doubles: see pow_log2_f64 in the C. */
static MathValue pow_log_m(MathBuilder *b, MathValue f, MathValue *low) {
  MathValue two = constant_f64(b, 2.0);
  MathValue den = add_f64(b, two, f);
  MathValue den_l = add_f64(b, sub_f64(b, two, den), f);
  MathValue s = div_f64(b, f, den);
  MathValue s_l = div_f64(b, sub_f64(b, fma_f64(b, negate_f64(b, s), den, f), mul_f64(b, s, den_l)), den);
  MathValue s2 = mul_f64(b, s, s);
  MathValue s2_l = fma_f64(b, s, s, negate_f64(b, s2));
  MathValue s3 = mul_f64(b, s2, s);
  MathValue cross = add_f64(b, mul_f64(b, s2_l, s), mul_f64(b, mul_f64(b, constant_f64(b, 3.0), s2), s_l));
  MathValue s3_l = add_f64(b, fma_f64(b, s2, s, negate_f64(b, s3)), cross);
  MathValue c_hi = constant_f64(b, MATHREF_TWO_THIRDS_HI_F64);
  MathValue t = mul_f64(b, s3, c_hi);
  MathValue t_parts = add_f64(b, mul_f64(b, s3, constant_f64(b, MATHREF_TWO_THIRDS_LO_F64)), mul_f64(b, s3_l, c_hi));
  MathValue t_l = add_f64(b, fma_f64(b, s3, c_hi, negate_f64(b, t)), t_parts);
  MathValue series = polynomial_f64(b, mathref_pow_log_f64_table, MATHREF_POW_LOG_F64_COUNT, s2);
  MathValue rest = mul_f64(b, mul_f64(b, s3, s2), series);
  MathValue twice = mul_f64(b, two, s);
  MathValue h = add_f64(b, twice, t);
  MathValue small = add_f64(b, mul_f64(b, two, s_l), add_f64(b, t_l, rest));
  *low = add_f64(b, sub_f64(b, t, sub_f64(b, h, twice)), small);
  return h;
}

static MathValue pow_log2(MathBuilder *b, MathValue ax, MathValue *low) {
  MathValue subnormal = less_f64(b, ax, constant_f64(b, 0x1p-1022));
  MathValue e;
  MathValue f = log_split(b, select_value(b, subnormal, mul_f64(b, ax, constant_f64(b, 0x1p54)), ax), &e);
  e = sub_u64(b, e, select_value(b, subnormal, constant_u64(b, 54), constant_u64(b, 0)));
  MathValue l;
  MathValue h = pow_log_m(b, f, &l);
  MathValue log2e = constant_f64(b, MATHREF_LOG2E_F64);
  MathValue p = mul_f64(b, h, log2e);
  MathValue p_parts = add_f64(b, mul_f64(b, h, constant_f64(b, MATHREF_LOG2E_LO_F64)), mul_f64(b, l, log2e));
  MathValue p_l = add_f64(b, fma_f64(b, h, log2e, negate_f64(b, p)), p_parts);
  MathValue sum_l;
  MathValue sum = two_sum(b, f64_from_i64(b, e), p, &sum_l);
  MathValue tail = add_f64(b, sum_l, p_l);
  MathValue result = add_f64(b, sum, tail);
  *low = add_f64(b, sub_f64(b, sum, result), tail);
  return result;
}

static MathValue pow_exp2(MathBuilder *b, MathValue z, MathValue z_l) {
  MathValue zero = constant_f64(b, 0.0), limit = constant_f64(b, 1100.0);
  MathValue out = not_mask(b, less_equal_f64(b, abs_f64(b, z), limit));
  MathValue z_nan = is_nan_f64(b, z);
  MathValue signed_limit = select_value(b, less_f64(b, zero, z), limit, constant_f64(b, -1100.0));
  MathValue zc = select_value(b, z_nan, zero, select_value(b, out, signed_limit, z));
  MathValue zl = select_value(b, or_i32(b, out, z_nan), zero, z_l);
  MathValue shifter = constant_f64(b, MATHREF_ROUND_SHIFTER_F64);
  MathValue n = sub_f64(b, add_f64(b, zc, shifter), shifter);
  MathValue head = sub_f64(b, zc, n);
  MathValue r = add_f64(b, head, zl);
  MathValue r_l = add_f64(b, sub_f64(b, head, r), zl);
  MathValue ln2 = constant_f64(b, MATHREF_LN2_F64);
  MathValue t = mul_f64(b, r, ln2);
  MathValue t_parts = add_f64(b, mul_f64(b, r, constant_f64(b, MATHREF_LN2_LO_EXACT_F64)), mul_f64(b, r_l, ln2));
  MathValue t_l = add_f64(b, fma_f64(b, r, ln2, negate_f64(b, t)), t_parts);
  MathValue p = polynomial_f64(b, mathref_exp_f64_table, MATHREF_EXP_F64_COUNT, t);
  MathValue inner = fma_f64(b, mul_f64(b, t, t), p, fma_f64(b, t_l, t, t_l));
  MathValue y = add_f64(b, constant_f64(b, 1.0), add_f64(b, t, inner));
  MathValue ni = i64_from_f64(b, n);
  MathValue n1 = shift_right_i64(b, ni, 1);
  return mul_f64(b, mul_f64(b, y, pow2(b, n1)), pow2(b, sub_u64(b, ni, n1)));
}

static MathValue pow_special_cases(MathBuilder *b, MathValue x, MathValue y, MathValue result) {
  MathValue ax = abs_f64(b, x), ay = abs_f64(b, y);
  MathValue two52 = constant_f64(b, 0x1p52), zero = constant_f64(b, 0.0), one = constant_f64(b, 1.0);
  MathValue inf = constant_f64(b, INFINITY);
  MathValue ay_rounded = select_value(b, less_f64(b, ay, two52), sub_f64(b, add_f64(b, ay, two52), two52), ay);
  MathValue y_integer = equal_f64(b, ay_rounded, ay);
  MathValue below_2_53 = select_value(b, less_f64(b, ay, constant_f64(b, 0x1p53)), ay_rounded, zero);
  MathValue y_odd = and_i32(b, y_integer, and_i32(b, i64_from_f64(b, below_2_53), constant_i32(b, 1)));
  MathValue negative_x = shift_right_u64(b, x, 63);
  result = select_value(b, and_i32(b, negative_x, y_odd), negate_f64(b, result), result);
  MathValue finite_negative = and_i32(b, less_f64(b, x, zero), less_f64(b, negate_f64(b, inf), x));
  MathValue invalid = and_i32(b, finite_negative, not_mask(b, y_integer));
  invalid = or_i32(b, or_i32(b, invalid, is_nan_f64(b, x)), is_nan_f64(b, y));
  result = select_value(b, invalid, quiet_nan(b), result);
  MathValue is_one = or_i32(b, equal_f64(b, y, zero), equal_f64(b, x, one));
  is_one = or_i32(b, is_one, and_i32(b, equal_f64(b, ax, one), equal_f64(b, ay, inf)));
  return select_value(b, is_one, one, result);
}

MathValue math_pow_f64(MathBuilder *b, MathValue x, MathValue y) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f64(b, x);
  MathValue l_low;
  MathValue l = pow_log2(b, ax, &l_low);
  MathValue zero = constant_f64(b, 0.0), inf = constant_f64(b, INFINITY);
  MathValue ax_zero = equal_f64(b, ax, zero), ax_inf = equal_f64(b, ax, inf);
  MathValue edge = or_i32(b, ax_zero, ax_inf);
  l = select_value(b, ax_zero, constant_f64(b, -INFINITY), select_value(b, ax_inf, inf, l));
  l_low = select_value(b, edge, zero, l_low);
  MathValue z = mul_f64(b, y, l);
  MathValue z_l = add_f64(b, fma_f64(b, y, l, negate_f64(b, z)), mul_f64(b, y, l_low));
  MathValue result = pow_exp2(b, z, select_value(b, edge, zero, z_l));
  return math_scope_end(b, scope, pow_special_cases(b, x, y, result));
}
