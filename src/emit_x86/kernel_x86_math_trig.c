/* The trigonometric math functions (sin, cos, tan with both range
 * reductions, atan2) and the compositions built on the math functions
 * (atan, asin, acos, sinh, cosh, asinh, acosh, atanh, round half away from
 * zero) in the kernel compiler's scalar code, transcribed operation for
 * operation from their mathref_* definitions in
 * src/ir/kernel/math_reference.c with the math builder. */
#include "emit_x86/kernel_x86_math_builder.h"

#include <math.h>

#include "kernel/math_reference.h"

static MathValue quiet_nan(MathBuilder *b) { return math_constant_i32(b, 0x7fc00000); }

/* ---- the range reductions ---- */

static MathValue trig_reduce_small(MathBuilder *b, MathValue x, MathValue *n, MathValue *lo) {
  MathValue shifter = math_constant_f32(b, MATHREF_ROUND_SHIFTER_F32);
  MathValue one = math_constant_f32(b, 1.0f), zero = math_constant_f32(b, 0.0f);
  MathValue pio2_2 = math_constant_f32(b, MATHREF_PIO2_2);
  MathValue minus_pio2_1 = math_constant_f32(b, -MATHREF_PIO2_1),
            minus_pio2_2 = math_constant_f32(b, -MATHREF_PIO2_2);
  MathValue q =
      math_sub_f32(b, math_fma_f32(b, x, math_constant_f32(b, MATHREF_TWO_OVER_PI), shifter), shifter);
  MathValue rough = math_fma_f32(b, q, minus_pio2_2, math_fma_f32(b, q, minus_pio2_1, x));
  q = math_add_f32(
      b, q, math_select_value(b, math_less_f32(b, math_constant_f32(b, MATHREF_PIO4_HI), rough), one, zero));
  q = math_sub_f32(
      b, q, math_select_value(b, math_less_f32(b, rough, math_constant_f32(b, -MATHREF_PIO4_HI)), one, zero));
  MathValue r1 = math_fma_f32(b, q, minus_pio2_1, x);
  MathValue p = math_mul_f32(b, q, pio2_2);
  MathValue pe = math_fma_f32(b, q, pio2_2, math_negate_f32(b, p));
  MathValue s = math_sub_f32(b, r1, p);
  MathValue back = math_sub_f32(b, s, r1);
  MathValue se = math_add_f32(b, math_sub_f32(b, r1, math_sub_f32(b, s, back)),
                              math_sub_f32(b, math_negate_f32(b, p), back));
  MathValue low =
      math_fma_f32(b, math_negate_f32(b, q), math_constant_f32(b, MATHREF_PIO2_3), math_sub_f32(b, se, pe));
  MathValue hi = math_add_f32(b, s, low);
  *lo = math_sub_f32(b, low, math_sub_f32(b, hi, s));
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
  MathValue row = math_sub_i32(b, math_and_i32(b, math_shift_right_u32(b, x, 23), math_constant_i32(b, 0xff)), math_constant_i32(b, 149));
  MathValue last = math_constant_i32(b, 105), first = math_constant_i32(b, 0);
  row = math_select_value(b, math_less_i32(b, row, first), first,
                          math_select_value(b, math_less_i32(b, last, row), last, row));
  MathValue w[3];
  two_over_pi_window_load(b, row, w);
  MathValue m =
      math_or_i32(b, math_and_i32(b, x, math_constant_i32(b, 0x7fffff)), math_constant_i32(b, 0x800000));
  MathValue p2 = math_multiply_wide_u32(b, m, w[2]);
  MathValue p1 = math_multiply_wide_u32(b, m, w[1]);
  MathValue mid = math_add_u64(b, math_shift_right_u64(b, p2, 32),
                               math_and_u64(b, p1, math_constant_u64(b, 0xffffffffu)));
  MathValue top = math_add_i32(b, math_mul_i32(b, m, w[0]), math_shift_right_u64(b, p1, 32));
  top = math_add_i32(b, top, math_shift_right_u64(b, mid, 32));
  MathValue t =
      math_or_u64(b, math_shift_left_u64(b, math_u64_from_u32(b, top), 32), math_u64_from_u32(b, mid));
  t = math_add_u64(b, t, math_constant_u64(b, UINT64_C(1) << 61));
  *quadrant = math_shift_right_u64(b, t, 62);
  return math_and_u64(b, t, math_constant_u64(b, (UINT64_C(1) << 62) - 1));
}

static MathValue trig_reduce_large(MathBuilder *b, MathValue x, MathValue *n, MathValue *lo) {
  MathValue quadrant;
  MathValue biased = payne_hanek_product(b, x, &quadrant);
  MathValue half = math_constant_u64(b, UINT64_C(1) << 61);
  MathValue f_negative =
      math_equal_i32(b, math_and_i32(b, math_shift_right_u64(b, biased, 61), math_constant_i32(b, 1)),
                     math_constant_i32(b, 0));
  MathValue fa =
      math_select_value(b, f_negative, math_sub_u64(b, half, biased), math_sub_u64(b, biased, half));
  MathValue piece = math_constant_i32(b, 0x1fffff);
  MathValue v2 =
      math_mul_f32(b, math_f32_from_i32(b, math_shift_right_u64(b, fa, 42)), math_constant_f32(b, 0x1p-20f));
  MathValue v1 = math_mul_f32(b, math_f32_from_i32(b, math_and_i32(b, math_shift_right_u64(b, fa, 21), piece)), math_constant_f32(b, 0x1p-41f));
  MathValue v0 =
      math_mul_f32(b, math_f32_from_i32(b, math_and_i32(b, fa, piece)), math_constant_f32(b, 0x1p-62f));
  MathValue fh = math_add_f32(b, v2, v1);
  MathValue fl = math_add_f32(b, math_add_f32(b, math_sub_f32(b, v2, fh), v1), v0);
  MathValue pio2_1 = math_constant_f32(b, MATHREF_PIO2_1);
  MathValue rh = math_mul_f32(b, fh, pio2_1);
  MathValue rl =
      math_add_f32(b, math_fma_f32(b, fh, pio2_1, math_negate_f32(b, rh)),
                   math_fma_f32(b, fh, math_constant_f32(b, MATHREF_PIO2_2), math_mul_f32(b, fl, pio2_1)));
  MathValue hi = math_add_f32(b, rh, rl);
  MathValue low = math_sub_f32(b, rl, math_sub_f32(b, hi, rh));
  MathValue x_negative = math_shift_right_u32(b, x, 31);
  MathValue flip = math_xor_i32(b, f_negative, x_negative);
  *lo = math_select_value(b, flip, math_negate_f32(b, low), low);
  MathValue mirrored =
      math_and_i32(b, math_sub_i32(b, math_constant_i32(b, 4), quadrant), math_constant_i32(b, 3));
  *n = math_f32_from_i32(b, math_select_value(b, x_negative, mirrored, quadrant));
  return math_select_value(b, flip, math_negate_f32(b, hi), hi);
}

/* Vector mode: Payne-Hanek lane by lane, the scalar transcription run by
 * a nested builder on each lane's element in a loop over the lanes (its
 * counter in the nested builder's first slot). Only where some lane is
 * past the Cody-Waite range (math_skip_if jumps over it otherwise). */
static MathValue trig_reduce_large_lanes(MathBuilder *b, MathValue x, MathValue *n, MathValue *lo) {
  MathValue hi = math_lanes_value_new(b);
  *n = math_lanes_value_new(b);
  *lo = math_lanes_value_new(b);
  MathBuilder lane;
  math_builder_begin_nested(&lane, b);
  X86Buffer *cb = b->x->cb;
  X86Operand counter = math_slot_operand(&lane, math_value_new(&lane), 8);
  x86_emit(cb, X86_MOV, counter, x86_imm(0));
  X86Label head = x86_label_new(cb);
  x86_label_bind(cb, head);
  x86_emit(cb, X86_MOV, x86_reg(X86_RAX), counter);
  MathValue out[3], in = math_input(&lane, math_lanes_element(b, x, X86_RAX), false);
  out[0] = trig_reduce_large(&lane, in, &out[1], &out[2]);
  MathValue to[3] = {hi, *n, *lo};
  x86_emit(cb, X86_MOV, x86_reg(X86_RAX), counter);
  for (int k = 0; k < 3; k++) {
    x86_emit(cb, X86_MOV, x86_reg(X86_ECX), math_slot_operand(&lane, out[k], 4));
    x86_emit(cb, X86_MOV, math_lanes_element(b, to[k], X86_RAX), x86_reg(X86_ECX));
  }
  x86_emit(cb, X86_INC, counter);
  x86_emit(cb, X86_CMP, counter, x86_imm(b->width / 4));
  x86_emit(cb, X86_JL, x86_rel(head));
  math_builder_end(&lane);
  return hi;
}

static MathValue trig_reduce(MathBuilder *b, MathValue x, MathValue *quadrant, MathValue *lo) {
  MathValue small = math_less_f32(b, math_abs_f32(b, x), math_constant_f32(b, MATHREF_TRIG_SMALL_LIMIT));
  MathValue n_small, lo_small, n_large, lo_large;
  MathValue hi_small = trig_reduce_small(b, math_select_value(b, small, x, math_constant_f32(b, 0.0f)), &n_small, &lo_small);
  /* Payne-Hanek only where the argument needs it */
  X86Label skip = math_skip_if(b, small);
  MathValue hi_large = b->width ? trig_reduce_large_lanes(b, x, &n_large, &lo_large)
                                : trig_reduce_large(b, x, &n_large, &lo_large);
  math_skip_end(b, skip);
  *quadrant = math_and_i32(b, math_i32_from_f32(b, math_select_value(b, small, n_small, n_large)),
                           math_constant_i32(b, 3));
  *lo = math_select_value(b, small, lo_small, lo_large);
  return math_select_value(b, small, hi_small, hi_large);
}

/* ---- sin, cos, tan ---- */

static MathValue sin_kernel(MathBuilder *b, MathValue r, MathValue lo) {
  MathValue z = math_mul_f32(b, r, r);
  MathValue poly = math_polynomial_f32(b, mathref_sin_table, MATHREF_SIN_COUNT, z);
  return math_add_f32(b, r, math_fma_f32(b, r, math_mul_f32(b, z, poly), lo));
}

static MathValue cos_kernel(MathBuilder *b, MathValue r) {
  MathValue z = math_mul_f32(b, r, r);
  return math_fma_f32(b, z, math_polynomial_f32(b, mathref_cos_table, MATHREF_COS_COUNT, z),
                      math_constant_f32(b, 1.0f));
}

static MathValue trig_is_invalid(MathBuilder *b, MathValue x) {
  return math_or_i32(b, math_is_nan_f32(b, x),
                     math_equal_f32(b, math_abs_f32(b, x), math_constant_f32(b, INFINITY)));
}

static MathValue quadrant_bit(MathBuilder *b, MathValue quadrant, int bit) {
  return math_and_i32(b, quadrant, math_constant_i32(b, bit));
}

MathValue math_sin_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue quadrant, lo;
  MathValue r = trig_reduce(b, x, &quadrant, &lo);
  MathValue y = math_select_value(b, quadrant_bit(b, quadrant, 1), cos_kernel(b, r), sin_kernel(b, r, lo));
  y = math_select_value(b, quadrant_bit(b, quadrant, 2), math_negate_f32(b, y), y);
  y = math_select_value(b, math_less_f32(b, math_abs_f32(b, x), math_constant_f32(b, 0x1p-12f)), x, y);
  return math_scope_end(b, scope, math_select_value(b, trig_is_invalid(b, x), quiet_nan(b), y));
}

MathValue math_cos_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue quadrant, lo;
  MathValue r = trig_reduce(b, x, &quadrant, &lo);
  MathValue y = math_select_value(b, quadrant_bit(b, quadrant, 1), sin_kernel(b, r, lo), cos_kernel(b, r));
  MathValue next = math_add_i32(b, quadrant, math_constant_i32(b, 1));
  y = math_select_value(b, quadrant_bit(b, next, 2), math_negate_f32(b, y), y);
  return math_scope_end(b, scope, math_select_value(b, trig_is_invalid(b, x), quiet_nan(b), y));
}

MathValue math_tan_f32(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue quadrant, lo;
  MathValue r = trig_reduce(b, x, &quadrant, &lo);
  MathValue one = math_constant_f32(b, 1.0f);
  MathValue z = math_mul_f32(b, r, r);
  MathValue p = math_polynomial_f32(b, mathref_tan_table, MATHREF_TAN_COUNT, z);
  MathValue w = math_fma_f32(b, r, math_mul_f32(b, z, p), math_mul_f32(b, lo, math_fma_f32(b, r, r, one)));
  MathValue t = math_add_f32(b, r, w);
  MathValue t_lo = math_sub_f32(b, w, math_sub_f32(b, t, r));
  MathValue q = math_div_f32(b, math_constant_f32(b, -1.0f), t);
  MathValue residual = math_add_f32(b, math_fma_f32(b, q, t, one), math_mul_f32(b, q, t_lo));
  MathValue y = math_select_value(b, quadrant_bit(b, quadrant, 1), math_fma_f32(b, q, residual, q), t);
  y = math_select_value(b, math_less_f32(b, math_abs_f32(b, x), math_constant_f32(b, 0x1p-12f)), x, y);
  return math_scope_end(b, scope, math_select_value(b, trig_is_invalid(b, x), quiet_nan(b), y));
}

/* ---- atan2 ---- */

/* ---- compositions ---- */


