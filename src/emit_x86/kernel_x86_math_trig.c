/* The trigonometric math functions (sin, cos, tan with both range
 * reductions, atan2) and the compositions built on the math functions
 * (atan, asin, acos, sinh, cosh, asinh, acosh, atanh, round half away from
 * zero) in the kernel compiler's scalar code, transcribed operation for
 * operation from their mathref_* definitions in
 * src/ir/kernel/math_reference.c with the math builder. */
#include "emit_x86/kernel_x86_math_builder.h"

#include <math.h>

#include "kernel/math_reference.h"

static MathValue quiet_nan(MathBuilder *b) { return constant_i32(b, 0x7fc00000); }

static MathValue nan_passed(MathBuilder *b, MathValue x, MathValue y) {
  return select_value(b, is_nan_f32(b, x), add_f32(b, x, x), y);
}

/* ---- the range reductions ---- */

static MathValue trig_reduce_small(MathBuilder *b, MathValue x, MathValue *n, MathValue *lo) {
  MathValue shifter = constant_f32(b, MATHREF_ROUND_SHIFTER_F32);
  MathValue one = constant_f32(b, 1.0f), zero = constant_f32(b, 0.0f);
  MathValue pio2_2 = constant_f32(b, MATHREF_PIO2_2);
  MathValue minus_pio2_1 = constant_f32(b, -MATHREF_PIO2_1), minus_pio2_2 = constant_f32(b, -MATHREF_PIO2_2);
  MathValue q = sub_f32(b, fma_f32(b, x, constant_f32(b, MATHREF_TWO_OVER_PI), shifter), shifter);
  MathValue rough = fma_f32(b, q, minus_pio2_2, fma_f32(b, q, minus_pio2_1, x));
  q = add_f32(b, q, select_value(b, less_f32(b, constant_f32(b, MATHREF_PIO4_HI), rough), one, zero));
  q = sub_f32(b, q, select_value(b, less_f32(b, rough, constant_f32(b, -MATHREF_PIO4_HI)), one, zero));
  MathValue r1 = fma_f32(b, q, minus_pio2_1, x);
  MathValue p = mul_f32(b, q, pio2_2);
  MathValue pe = fma_f32(b, q, pio2_2, negate_f32(b, p));
  MathValue s = sub_f32(b, r1, p);
  MathValue back = sub_f32(b, s, r1);
  MathValue se = add_f32(b, sub_f32(b, r1, sub_f32(b, s, back)), sub_f32(b, negate_f32(b, p), back));
  MathValue low = fma_f32(b, negate_f32(b, q), constant_f32(b, MATHREF_PIO2_3), sub_f32(b, se, pe));
  MathValue hi = add_f32(b, s, low);
  *lo = sub_f32(b, low, sub_f32(b, hi, s));
  *n = q;
  return hi;
}

/* The three words of mathref_two_over_pi_windows[row], from a copy of the
 * table placed in the code (jumped over), read at rip + row * 12. */
static void two_over_pi_window_load(MathBuilder *b, MathValue row, MathValue w[3]) {
  X86Buffer *cb = b->x->cb;
  X86Label table = x86_label_new(cb), over = x86_label_new(cb);
  x86_emit(cb, X86_JMP, x86_rel(over));
  x86_label_bind(cb, table);
  x86_emit_bytes(cb, mathref_two_over_pi_windows, sizeof mathref_two_over_pi_windows);
  x86_label_bind(cb, over);
  x86_emit(cb, X86_LEA, x86_reg(X86_RDX), x86_mem_label(8, table));
  x86_emit(cb, X86_IMUL, x86_reg(X86_EAX), math_slot_operand(b, row, 4), x86_imm(12));
  for (int k = 0; k < 3; k++) {
    w[k] = math_value_new(b);
    x86_emit(cb, X86_MOV, x86_reg(X86_ECX), x86_mem_index(4, X86_RDX, X86_RAX, 1, 4 * k));
    x86_emit(cb, X86_MOV, math_slot_operand(b, w[k], 4), x86_reg(X86_ECX));
  }
}

/* M times its window of 2/pi mod 2^96, rounded: f + 2^61 in units of
 * 2^-62 (*biased) and the quadrant. */
static MathValue payne_hanek_product(MathBuilder *b, MathValue x, MathValue *quadrant) {
  MathValue row = sub_i32(b, and_i32(b, shift_right_u32(b, x, 23), constant_i32(b, 0xff)), constant_i32(b, 149));
  MathValue last = constant_i32(b, 105), first = constant_i32(b, 0);
  row = select_value(b, less_i32(b, row, first), first, select_value(b, less_i32(b, last, row), last, row));
  MathValue w[3];
  two_over_pi_window_load(b, row, w);
  MathValue m = or_i32(b, and_i32(b, x, constant_i32(b, 0x7fffff)), constant_i32(b, 0x800000));
  MathValue p2 = multiply_wide_u32(b, m, w[2]);
  MathValue p1 = multiply_wide_u32(b, m, w[1]);
  MathValue mid = add_u64(b, shift_right_u64(b, p2, 32), and_u64(b, p1, constant_u64(b, 0xffffffffu)));
  MathValue top = add_i32(b, mul_i32(b, m, w[0]), shift_right_u64(b, p1, 32));
  top = add_i32(b, top, shift_right_u64(b, mid, 32));
  MathValue t = or_u64(b, shift_left_u64(b, u64_from_u32(b, top), 32), u64_from_u32(b, mid));
  t = add_u64(b, t, constant_u64(b, UINT64_C(1) << 61));
  *quadrant = shift_right_u64(b, t, 62);
  return and_u64(b, t, constant_u64(b, (UINT64_C(1) << 62) - 1));
}

static MathValue trig_reduce_large(MathBuilder *b, MathValue x, MathValue *n, MathValue *lo) {
  MathValue quadrant;
  MathValue biased = payne_hanek_product(b, x, &quadrant);
  MathValue half = constant_u64(b, UINT64_C(1) << 61);
  MathValue f_negative = equal_i32(b, and_i32(b, shift_right_u64(b, biased, 61), constant_i32(b, 1)),
                                   constant_i32(b, 0));
  MathValue fa = select_value(b, f_negative, sub_u64(b, half, biased), sub_u64(b, biased, half));
  MathValue piece = constant_i32(b, 0x1fffff);
  MathValue v2 = mul_f32(b, f32_from_i32(b, shift_right_u64(b, fa, 42)), constant_f32(b, 0x1p-20f));
  MathValue v1 = mul_f32(b, f32_from_i32(b, and_i32(b, shift_right_u64(b, fa, 21), piece)), constant_f32(b, 0x1p-41f));
  MathValue v0 = mul_f32(b, f32_from_i32(b, and_i32(b, fa, piece)), constant_f32(b, 0x1p-62f));
  MathValue fh = add_f32(b, v2, v1);
  MathValue fl = add_f32(b, add_f32(b, sub_f32(b, v2, fh), v1), v0);
  MathValue pio2_1 = constant_f32(b, MATHREF_PIO2_1);
  MathValue rh = mul_f32(b, fh, pio2_1);
  MathValue rl = add_f32(b, fma_f32(b, fh, pio2_1, negate_f32(b, rh)),
                         fma_f32(b, fh, constant_f32(b, MATHREF_PIO2_2), mul_f32(b, fl, pio2_1)));
  MathValue hi = add_f32(b, rh, rl);
  MathValue low = sub_f32(b, rl, sub_f32(b, hi, rh));
  MathValue x_negative = shift_right_u32(b, x, 31);
  MathValue flip = xor_i32(b, f_negative, x_negative);
  *lo = select_value(b, flip, negate_f32(b, low), low);
  MathValue mirrored = and_i32(b, sub_i32(b, constant_i32(b, 4), quadrant), constant_i32(b, 3));
  *n = f32_from_i32(b, select_value(b, x_negative, mirrored, quadrant));
  return select_value(b, flip, negate_f32(b, hi), hi);
}

/* Vector mode: Payne-Hanek lane by lane, the scalar transcription run by
 * a nested builder on each lane's element in a loop over the lanes (its
 * counter in the nested builder's first slot). Only where some lane is
 * past the Cody-Waite range (math_skip_if jumps over it otherwise). */
static MathValue trig_reduce_large_lanes(MathBuilder *b, MathValue x, MathValue *n, MathValue *lo) {
  MathValue hi = lanes_value_new(b);
  *n = lanes_value_new(b);
  *lo = lanes_value_new(b);
  MathBuilder lane;
  math_builder_begin_nested(&lane, b);
  X86Buffer *cb = b->x->cb;
  X86Operand counter = math_slot_operand(&lane, math_value_new(&lane), 8);
  x86_emit(cb, X86_MOV, counter, x86_imm(0));
  X86Label head = x86_label_new(cb);
  x86_label_bind(cb, head);
  x86_emit(cb, X86_MOV, x86_reg(X86_RAX), counter);
  MathValue out[3], in = math_input(&lane, lanes_element(b, x, X86_RAX), false);
  out[0] = trig_reduce_large(&lane, in, &out[1], &out[2]);
  MathValue to[3] = {hi, *n, *lo};
  x86_emit(cb, X86_MOV, x86_reg(X86_RAX), counter);
  for (int k = 0; k < 3; k++) {
    x86_emit(cb, X86_MOV, x86_reg(X86_ECX), math_slot_operand(&lane, out[k], 4));
    x86_emit(cb, X86_MOV, lanes_element(b, to[k], X86_RAX), x86_reg(X86_ECX));
  }
  x86_emit(cb, X86_INC, counter);
  x86_emit(cb, X86_CMP, counter, x86_imm(b->width / 4));
  x86_emit(cb, X86_JL, x86_rel(head));
  math_builder_end(&lane);
  return hi;
}

static MathValue trig_reduce(MathBuilder *b, MathValue x, MathValue *quadrant, MathValue *lo) {
  MathValue small = less_f32(b, abs_f32(b, x), constant_f32(b, MATHREF_TRIG_SMALL_LIMIT));
  MathValue n_small, lo_small, n_large, lo_large;
  MathValue hi_small = trig_reduce_small(b, select_value(b, small, x, constant_f32(b, 0.0f)), &n_small, &lo_small);
  /* Payne-Hanek only where the argument needs it */
  X86Label skip = math_skip_if(b, small);
  MathValue hi_large = b->width ? trig_reduce_large_lanes(b, x, &n_large, &lo_large)
                                : trig_reduce_large(b, x, &n_large, &lo_large);
  math_skip_end(b, skip);
  *quadrant = and_i32(b, i32_from_f32(b, select_value(b, small, n_small, n_large)), constant_i32(b, 3));
  *lo = select_value(b, small, lo_small, lo_large);
  return select_value(b, small, hi_small, hi_large);
}

/* ---- sin, cos, tan ---- */

static MathValue sin_kernel(MathBuilder *b, MathValue r, MathValue lo) {
  MathValue z = mul_f32(b, r, r);
  MathValue poly = polynomial_f32(b, mathref_sin_table, MATHREF_SIN_COUNT, z);
  return add_f32(b, r, fma_f32(b, r, mul_f32(b, z, poly), lo));
}

static MathValue cos_kernel(MathBuilder *b, MathValue r) {
  MathValue z = mul_f32(b, r, r);
  return fma_f32(b, z, polynomial_f32(b, mathref_cos_table, MATHREF_COS_COUNT, z), constant_f32(b, 1.0f));
}

static MathValue trig_is_invalid(MathBuilder *b, MathValue x) {
  return or_i32(b, is_nan_f32(b, x), equal_f32(b, abs_f32(b, x), constant_f32(b, INFINITY)));
}

static MathValue quadrant_bit(MathBuilder *b, MathValue quadrant, int bit) {
  return and_i32(b, quadrant, constant_i32(b, bit));
}

MathValue math_sin_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue quadrant, lo;
  MathValue r = trig_reduce(b, x, &quadrant, &lo);
  MathValue y = select_value(b, quadrant_bit(b, quadrant, 1), cos_kernel(b, r), sin_kernel(b, r, lo));
  y = select_value(b, quadrant_bit(b, quadrant, 2), negate_f32(b, y), y);
  y = select_value(b, less_f32(b, abs_f32(b, x), constant_f32(b, 0x1p-12f)), x, y);
  return math_scope_end(b, scope, select_value(b, trig_is_invalid(b, x), quiet_nan(b), y));
}

MathValue math_cos_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue quadrant, lo;
  MathValue r = trig_reduce(b, x, &quadrant, &lo);
  MathValue y = select_value(b, quadrant_bit(b, quadrant, 1), sin_kernel(b, r, lo), cos_kernel(b, r));
  MathValue next = add_i32(b, quadrant, constant_i32(b, 1));
  y = select_value(b, quadrant_bit(b, next, 2), negate_f32(b, y), y);
  return math_scope_end(b, scope, select_value(b, trig_is_invalid(b, x), quiet_nan(b), y));
}

MathValue math_tan_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue quadrant, lo;
  MathValue r = trig_reduce(b, x, &quadrant, &lo);
  MathValue one = constant_f32(b, 1.0f);
  MathValue z = mul_f32(b, r, r);
  MathValue p = polynomial_f32(b, mathref_tan_table, MATHREF_TAN_COUNT, z);
  MathValue w = fma_f32(b, r, mul_f32(b, z, p), mul_f32(b, lo, fma_f32(b, r, r, one)));
  MathValue t = add_f32(b, r, w);
  MathValue t_lo = sub_f32(b, w, sub_f32(b, t, r));
  MathValue q = div_f32(b, constant_f32(b, -1.0f), t);
  MathValue residual = add_f32(b, fma_f32(b, q, t, one), mul_f32(b, q, t_lo));
  MathValue y = select_value(b, quadrant_bit(b, quadrant, 1), fma_f32(b, q, residual, q), t);
  y = select_value(b, less_f32(b, abs_f32(b, x), constant_f32(b, 0x1p-12f)), x, y);
  return math_scope_end(b, scope, select_value(b, trig_is_invalid(b, x), quiet_nan(b), y));
}

/* ---- atan2 ---- */

static MathValue atan_argument(MathBuilder *b, MathValue little, MathValue big, MathValue *fold, MathValue *t_lo) {
  MathValue zero = constant_f32(b, 0.0f), one = constant_f32(b, 1.0f), inf = constant_f32(b, INFINITY);
  MathValue u = div_f32(b, little, big);
  MathValue u_lo = div_f32(b, fma_f32(b, negate_f32(b, u), big, little), big);
  MathValue big_zero = equal_f32(b, big, zero);
  u = select_value(b, big_zero, zero, u);
  u = select_value(b, equal_f32(b, little, inf), one, u);
  u_lo = select_value(b, or_i32(b, big_zero, equal_f32(b, big, inf)), zero, u_lo);
  *fold = less_f32(b, constant_f32(b, MATHREF_TAN_PI_8), u);
  MathValue num = sub_f32(b, u, one);
  MathValue num_lo = add_f32(b, sub_f32(b, u, add_f32(b, num, one)), u_lo);
  MathValue den = add_f32(b, u, one);
  MathValue den_lo = add_f32(b, sub_f32(b, u, sub_f32(b, den, one)), u_lo);
  MathValue q = div_f32(b, num, den);
  MathValue q_residual = add_f32(b, fma_f32(b, negate_f32(b, q), den, num), num_lo);
  MathValue q_lo = div_f32(b, sub_f32(b, q_residual, mul_f32(b, q, den_lo)), den);
  *t_lo = select_value(b, *fold, q_lo, u_lo);
  return select_value(b, *fold, q, u);
}

MathValue math_atan2_f32(MathBuilder *b, MathValue y, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f32(b, x), ay = abs_f32(b, y);
  MathValue fold, t_lo;
  MathValue t = atan_argument(b, min_f32(b, ax, ay), max_f32(b, ax, ay), &fold, &t_lo);
  MathValue z = mul_f32(b, t, t);
  MathValue p = polynomial_f32(b, mathref_atan_table, MATHREF_ATAN_COUNT, z);
  MathValue w = fma_f32(b, t, mul_f32(b, z, p), fma_f32(b, negate_f32(b, t_lo), z, t_lo));
  MathValue m = select_value(b, fold, constant_i32(b, 1), constant_i32(b, 0));
  MathValue s = constant_f32(b, 1.0f);
  MathValue swap = less_f32(b, ax, ay);
  m = select_value(b, swap, sub_i32(b, constant_i32(b, 2), m), m);
  s = select_value(b, swap, negate_f32(b, s), s);
  MathValue negative_x = shift_right_u32(b, x, 31);
  m = select_value(b, negative_x, sub_i32(b, constant_i32(b, 4), m), m);
  s = select_value(b, negative_x, negate_f32(b, s), s);
  MathValue mf = f32_from_i32(b, m);
  MathValue inner = fma_f32(b, mf, constant_f32(b, MATHREF_PIO4_LO), mul_f32(b, s, w));
  MathValue angle = fma_f32(b, mf, constant_f32(b, MATHREF_PIO4_HI), fma_f32(b, s, t, inner));
  MathValue result = copysign_f32(b, angle, y);
  return math_scope_end(b, scope, select_value(b, or_i32(b, is_nan_f32(b, x), is_nan_f32(b, y)), add_f32(b, x, y), result));
}

/* ---- compositions ---- */

MathValue math_atan_f32(MathBuilder *b, MathValue x) { return math_atan2_f32(b, x, constant_f32(b, 1.0f)); }

/* sqrt(1 - x^2) with one rounding inside */
static MathValue cosine_of_asin(MathBuilder *b, MathValue x) {
  return sqrt_f32(b, fma_f32(b, negate_f32(b, x), x, constant_f32(b, 1.0f)));
}

MathValue math_asin_f32(MathBuilder *b, MathValue x) { return math_atan2_f32(b, x, cosine_of_asin(b, x)); }
MathValue math_acos_f32(MathBuilder *b, MathValue x) { return math_atan2_f32(b, cosine_of_asin(b, x), x); }

/* From 88 on: (h / 2) h with h = e^(|x|/2). */
static MathValue half_exp_squared(MathBuilder *b, MathValue ax) {
  MathValue half = constant_f32(b, 0.5f);
  MathValue h = math_exp_f32(b, mul_f32(b, half, ax));
  return mul_f32(b, mul_f32(b, half, h), h);
}

MathValue math_sinh_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f32(b, x);
  MathValue limit = constant_f32(b, 88.0f);
  MathValue t = math_expm1_f32(b, min_f32(b, ax, limit));
  MathValue sum = add_f32(b, t, div_f32(b, t, add_f32(b, t, constant_f32(b, 1.0f))));
  MathValue small = mul_f32(b, constant_f32(b, 0.5f), sum);
  MathValue y = select_value(b, less_f32(b, ax, limit), small, half_exp_squared(b, ax));
  return math_scope_end(b, scope, nan_passed(b, x, copysign_f32(b, y, x)));
}

MathValue math_cosh_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f32(b, x);
  MathValue limit = constant_f32(b, 88.0f), half = constant_f32(b, 0.5f);
  MathValue e = math_exp_f32(b, min_f32(b, ax, limit));
  MathValue small = add_f32(b, mul_f32(b, half, e), div_f32(b, half, e));
  MathValue y = select_value(b, less_f32(b, ax, limit), small, half_exp_squared(b, ax));
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

/* log x + ln 2, the large side of asinh and acosh */
static MathValue log_twice(MathBuilder *b, MathValue x) {
  return add_f32(b, math_log_f32(b, x), constant_f32(b, 0x1.62e430p-1f));
}

MathValue math_asinh_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f32(b, x);
  MathValue limit = constant_f32(b, 0x1p12f), one = constant_f32(b, 1.0f);
  MathValue a = min_f32(b, ax, limit);
  MathValue z = mul_f32(b, a, a);
  MathValue root = add_f32(b, one, sqrt_f32(b, add_f32(b, one, z)));
  MathValue small = math_log1p_f32(b, add_f32(b, a, div_f32(b, z, root)));
  MathValue y = select_value(b, less_f32(b, ax, limit), small, log_twice(b, ax));
  return math_scope_end(b, scope, nan_passed(b, x, copysign_f32(b, y, x)));
}

MathValue math_acosh_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue limit = constant_f32(b, 0x1p12f), one = constant_f32(b, 1.0f);
  MathValue t = sub_f32(b, min_f32(b, x, limit), one);
  MathValue product = mul_f32(b, t, add_f32(b, t, constant_f32(b, 2.0f)));
  MathValue small = math_log1p_f32(b, add_f32(b, t, sqrt_f32(b, product)));
  MathValue y = select_value(b, less_f32(b, x, limit), small, log_twice(b, x));
  y = select_value(b, less_f32(b, x, one), quiet_nan(b), y);
  return math_scope_end(b, scope, nan_passed(b, x, y));
}

MathValue math_atanh_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue ax = abs_f32(b, x);
  MathValue twice = add_f32(b, ax, ax);
  MathValue d = sub_f32(b, constant_f32(b, 1.0f), ax);
  MathValue u_small = fma_f32(b, twice, div_f32(b, ax, d), twice);
  MathValue u = select_value(b, less_f32(b, ax, constant_f32(b, 0.5f)), u_small, div_f32(b, twice, d));
  MathValue y = mul_f32(b, constant_f32(b, 0.5f), math_log1p_f32(b, u));
  return math_scope_end(b, scope, nan_passed(b, x, copysign_f32(b, y, x)));
}

