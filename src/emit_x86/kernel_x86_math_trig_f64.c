/* sin, cos and tan on f64 in the kernel compiler's scalar code (Cody-Waite
 * below 2^20, Payne-Hanek from there), transcribed operation for operation
 * from mathref_sin, mathref_cos and mathref_tan in
 * src/ir/kernel/math_reference_f64.c with the math builder. */
#include "emit_x86/kernel_x86_math_builder.h"

#include <math.h>

#include "kernel/math_reference.h"

static MathValue two_sum(MathBuilder *b, MathValue a, MathValue c, MathValue *e) {
  MathValue s = math_add_f64(b, a, c);
  MathValue back = math_sub_f64(b, s, a);
  *e = math_add_f64(b, math_sub_f64(b, a, math_sub_f64(b, s, back)), math_sub_f64(b, c, back));
  return s;
}

static MathValue trig_reduce_small(MathBuilder *b, MathValue x, MathValue *n, MathValue *lo) {
  MathValue shifter = math_constant_f64(b, MATHREF_ROUND_SHIFTER_F64);
  *n = math_sub_f64(b, math_fma_f64(b, x, math_constant_f64(b, MATHREF_TWO_OVER_PI_F64), shifter), shifter);
  MathValue r1 = math_fma_f64(b, *n, math_constant_f64(b, -MATHREF_PIO2_1_F64), x);
  MathValue w = math_mul_f64(b, *n, math_constant_f64(b, MATHREF_PIO2_2_F64));
  MathValue e2, se;
  MathValue r2 = two_sum(b, r1, math_negate_f64(b, w), &e2);
  MathValue pio2_3 = math_constant_f64(b, MATHREF_PIO2_3_F64);
  MathValue p3 = math_mul_f64(b, *n, pio2_3);
  MathValue p3e = math_fma_f64(b, *n, pio2_3, math_negate_f64(b, p3));
  MathValue s = two_sum(b, r2, math_negate_f64(b, p3), &se);
  MathValue low = math_add_f64(b, math_sub_f64(b, e2, p3e), se);
  MathValue hi = math_add_f64(b, s, low);
  *lo = math_sub_f64(b, low, math_sub_f64(b, hi, s));
  return hi;
}

/* The three 64-bit words of mathref_two_over_pi_words from bit g on, from
 * a copy of the table placed in the code (jumped over): word j = g >> 6
 * shifted left by s = g & 63, or'ed with word j + 1 shifted right by
 * 64 - s in two steps (1, then 63 - s = s ^ 63), so that s = 0 works. */
static void two_over_pi_window(MathBuilder *b, MathValue g, MathValue w[3]) {
  X86Buffer *cb = b->x->cb;
  X86Label table = x86_label_new(cb), over = x86_label_new(cb);
  x86_emit(cb, X86_JMP, x86_rel(over));
  x86_label_bind(cb, table);
  x86_emit_bytes(cb, mathref_two_over_pi_words, sizeof mathref_two_over_pi_words);
  x86_label_bind(cb, over);
  for (int k = 0; k < 3; k++) {
    w[k] = math_value_new(b);
    x86_emit(cb, X86_MOV, x86_reg(X86_EAX), math_slot_operand(b, g, 4)); /* g > 0: zero-extended */
    x86_emit(cb, X86_ADD, x86_reg(X86_EAX), x86_imm(64 * k));
    x86_emit(cb, X86_MOV, x86_reg(X86_ECX), x86_reg(X86_EAX));
    x86_emit(cb, X86_AND, x86_reg(X86_ECX), x86_imm(63));
    x86_emit(cb, X86_SHR, x86_reg(X86_EAX), x86_imm(6));
    x86_emit(cb, X86_LEA, x86_reg(X86_RDX), x86_mem_label(8, table));
    x86_emit(cb, X86_MOV, x86_reg(KX_SCRATCH_ADDRESS), x86_mem_index(8, X86_RDX, X86_RAX, 8, 0));
    x86_emit(cb, X86_MOV, x86_reg(X86_RDX), x86_mem_index(8, X86_RDX, X86_RAX, 8, 8));
    x86_emit(cb, X86_SHL, x86_reg(KX_SCRATCH_ADDRESS), x86_reg(X86_CL));
    x86_emit(cb, X86_XOR, x86_reg(X86_ECX), x86_imm(63));
    x86_emit(cb, X86_SHR, x86_reg(X86_RDX), x86_imm(1));
    x86_emit(cb, X86_SHR, x86_reg(X86_RDX), x86_reg(X86_CL));
    x86_emit(cb, X86_OR, x86_reg(KX_SCRATCH_ADDRESS), x86_reg(X86_RDX));
    x86_emit(cb, X86_MOV, math_slot_operand(b, w[k], 8), x86_reg(KX_SCRATCH_ADDRESS));
  }
}

/* The low 192 bits of M W, rounded at the top: the quadrant in *quadrant,
 * the signed fraction as *f (62 bits) and r1 (the next 64); lo2 in *r0. */
static MathValue payne_hanek_product(MathBuilder *b, MathValue x, MathValue *quadrant, MathValue *r1,
                                     MathValue *r0) {
  MathValue e = math_sub_i32(b, math_and_i32(b, math_shift_right_u64(b, x, 52), math_constant_i32(b, 0x7ff)), math_constant_i32(b, 1075));
  MathValue lowest = math_constant_i32(b, -32);
  e = math_select_value(b, math_less_i32(b, e, lowest), lowest, e);
  MathValue m = math_or_u64(b, math_and_u64(b, x, math_constant_u64(b, (UINT64_C(1) << 52) - 1)), math_constant_u64(b, UINT64_C(1) << 52));
  MathValue w[3];
  two_over_pi_window(b, math_add_i32(b, e, math_constant_i32(b, 62)), w);
  MathValue lo1;
  MathValue hi2 = math_multiply_high_u64(b, m, w[2], r0);
  MathValue hi1 = math_multiply_high_u64(b, m, w[1], &lo1);
  *r1 = math_add_u64(b, hi2, lo1);
  MathValue carry = math_u64_from_u32(b, math_less_u64(b, *r1, hi2));
  MathValue r2 = math_add_u64(b, math_add_u64(b, hi1, math_mul_u64(b, m, w[0])), carry);
  MathValue t = math_add_u64(b, r2, math_constant_u64(b, UINT64_C(1) << 61));
  *quadrant = math_shift_right_u64(b, t, 62);
  MathValue biased = math_and_u64(b, t, math_constant_u64(b, (UINT64_C(1) << 62) - 1));
  return math_sub_u64(b, biased, math_constant_u64(b, UINT64_C(1) << 61));
}

static MathValue trig_reduce_large(MathBuilder *b, MathValue x, MathValue *quadrant, MathValue *lo) {
  MathValue q, r1, r0;
  MathValue f = payne_hanek_product(b, x, &q, &r1, &r0);
  MathValue pa =
      math_mul_f64(b, math_f64_from_i64(b, math_shift_right_i64(b, f, 21)), math_constant_f64(b, 0x1p-41));
  MathValue pb = math_mul_f64(b, math_f64_from_i64(b, math_and_u64(b, f, math_constant_u64(b, 0x1fffff))), math_constant_f64(b, 0x1p-62));
  MathValue pc =
      math_mul_f64(b, math_f64_from_i64(b, math_shift_right_u64(b, r1, 11)), math_constant_f64(b, 0x1p-115));
  MathValue low_bits = math_or_u64(b, math_shift_left_u64(b, math_and_u64(b, r1, math_constant_u64(b, 2047)), 42), math_shift_right_u64(b, r0, 22));
  MathValue pd = math_mul_f64(b, math_f64_from_i64(b, low_bits), math_constant_f64(b, 0x1p-168));
  MathValue e1, e2, e3;
  MathValue s1 = two_sum(b, pa, pb, &e1);
  MathValue s2 = two_sum(b, s1, pc, &e2);
  MathValue s3 = two_sum(b, s2, pd, &e3);
  MathValue l = math_add_f64(b, math_add_f64(b, e1, e2), e3);
  MathValue vh = math_add_f64(b, s3, l);
  MathValue vl = math_sub_f64(b, l, math_sub_f64(b, vh, s3));
  MathValue pio2_hi = math_constant_f64(b, MATHREF_PIO2_HI_F64);
  MathValue rh = math_mul_f64(b, vh, pio2_hi);
  MathValue rl = math_add_f64(
      b, math_fma_f64(b, vh, pio2_hi, math_negate_f64(b, rh)),
      math_fma_f64(b, vh, math_constant_f64(b, MATHREF_PIO2_LO_F64), math_mul_f64(b, vl, pio2_hi)));
  MathValue hi = math_add_f64(b, rh, rl);
  MathValue low = math_sub_f64(b, rl, math_sub_f64(b, hi, rh));
  MathValue negative = math_shift_right_u64(b, x, 63);
  MathValue mirrored = math_and_u64(b, math_sub_u64(b, math_constant_u64(b, 4), q), math_constant_u64(b, 3));
  *quadrant = math_select_value(b, negative, mirrored, q);
  *lo = math_select_value(b, negative, math_negate_f64(b, low), low);
  return math_select_value(b, negative, math_negate_f64(b, hi), hi);
}

static MathValue trig_reduce(MathBuilder *b, MathValue x, MathValue *quadrant, MathValue *lo) {
  MathValue small = math_less_f64(b, math_abs_f64(b, x), math_constant_f64(b, 0x1p20));
  MathValue n, lo_small, lo_large, q_large;
  MathValue hi_small =
      trig_reduce_small(b, math_select_value(b, small, x, math_constant_f64(b, 0.0)), &n, &lo_small);
  /* Payne-Hanek only where the argument needs it */
  X86Label skip = math_skip_if(b, small);
  MathValue hi_large = trig_reduce_large(b, x, &q_large, &lo_large);
  math_skip_end(b, skip);
  MathValue q_small = math_and_u64(b, math_i64_from_f64(b, n), math_constant_u64(b, 3));
  *quadrant = math_select_value(b, small, q_small, q_large);
  *lo = math_select_value(b, small, lo_small, lo_large);
  return math_select_value(b, small, hi_small, hi_large);
}

static MathValue sin_kernel(MathBuilder *b, MathValue hi, MathValue lo) {
  MathValue z = math_mul_f64(b, hi, hi);
  MathValue p = math_polynomial_f64(b, mathref_sin_f64_table, MATHREF_SIN_F64_COUNT, z);
  MathValue correction =
      math_mul_f64(b, lo, math_fma_f64(b, z, math_constant_f64(b, -0.5), math_constant_f64(b, 1.0)));
  return math_add_f64(b, hi, math_fma_f64(b, hi, math_mul_f64(b, z, p), correction));
}

static MathValue cos_kernel(MathBuilder *b, MathValue hi, MathValue lo) {
  MathValue half = math_constant_f64(b, 0.5), one = math_constant_f64(b, 1.0);
  MathValue z = math_mul_f64(b, hi, hi);
  MathValue z_lost = math_fma_f64(b, hi, hi, math_negate_f64(b, z));
  MathValue hz = math_mul_f64(b, half, z);
  MathValue w = math_sub_f64(b, one, hz);
  MathValue p = math_polynomial_f64(b, mathref_cos_f64_table, MATHREF_COS_F64_COUNT, z);
  MathValue small = math_sub_f64(b, math_mul_f64(b, math_mul_f64(b, z, z), p),
                                 math_fma_f64(b, hi, lo, math_mul_f64(b, half, z_lost)));
  MathValue tail = math_add_f64(b, math_sub_f64(b, math_sub_f64(b, one, w), hz), small);
  return math_add_f64(b, w, tail);
}

static MathValue trig_is_invalid(MathBuilder *b, MathValue x) {
  return math_or_i32(b, math_is_nan_f64(b, x),
                     math_equal_f64(b, math_abs_f64(b, x), math_constant_f64(b, INFINITY)));
}

static MathValue quiet_nan(MathBuilder *b) { return math_constant_u64(b, UINT64_C(0x7ff8000000000000)); }

static MathValue quadrant_bit(MathBuilder *b, MathValue quadrant, int bit) {
  return math_and_i32(b, quadrant, math_constant_i32(b, bit));
}

MathValue math_sin_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue quadrant, lo;
  MathValue hi = trig_reduce(b, x, &quadrant, &lo);
  MathValue y =
      math_select_value(b, quadrant_bit(b, quadrant, 1), cos_kernel(b, hi, lo), sin_kernel(b, hi, lo));
  y = math_select_value(b, quadrant_bit(b, quadrant, 2), math_negate_f64(b, y), y);
  y = math_select_value(b, math_less_f64(b, math_abs_f64(b, x), math_constant_f64(b, 0x1p-26)), x, y);
  return math_scope_end(b, scope, math_select_value(b, trig_is_invalid(b, x), quiet_nan(b), y));
}

MathValue math_cos_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue quadrant, lo;
  MathValue hi = trig_reduce(b, x, &quadrant, &lo);
  MathValue y =
      math_select_value(b, quadrant_bit(b, quadrant, 1), sin_kernel(b, hi, lo), cos_kernel(b, hi, lo));
  MathValue next = math_add_i32(b, quadrant, math_constant_i32(b, 1));
  y = math_select_value(b, quadrant_bit(b, next, 2), math_negate_f64(b, y), y);
  return math_scope_end(b, scope, math_select_value(b, trig_is_invalid(b, x), quiet_nan(b), y));
}

MathValue math_tan_f64(MathBuilder *b, MathValue x) {
  int scope = math_scope_begin(b);
  MathValue quadrant, lo;
  MathValue hi = trig_reduce(b, x, &quadrant, &lo);
  MathValue s = sin_kernel(b, hi, lo), c = cos_kernel(b, hi, lo);
  MathValue odd = quadrant_bit(b, quadrant, 1);
  MathValue num = math_select_value(b, odd, math_negate_f64(b, c), s), den = math_select_value(b, odd, s, c);
  MathValue q = math_div_f64(b, num, den);
  MathValue y = math_add_f64(b, q, math_div_f64(b, math_fma_f64(b, math_negate_f64(b, q), den, num), den));
  y = math_select_value(b, math_less_f64(b, math_abs_f64(b, x), math_constant_f64(b, 0x1p-27)), x, y);
  return math_scope_end(b, scope, math_select_value(b, trig_is_invalid(b, x), quiet_nan(b), y));
}
