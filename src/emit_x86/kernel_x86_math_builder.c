/* The math builder (kernel_x86_math_builder.h): one C operation of a
 * mathref_* function becomes the few instructions that load its operands
 * from their slots into scratch registers, compute, and store the result
 * in a fresh slot. Slow-ish scalar code, but a transcription that is easy
 * to hold against its C, and the same at every ISA level. The values'
 * slots and register homes are kernel_x86_math_values.c's; in vector mode
 * each operation hands its work to kernel_x86_math_lanes.c. */
#include "emit_x86/kernel_x86_math_builder.h"

#include <math.h>
#include <string.h>

#define EMIT(...) x86_emit(b->x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }

MathValue math_scope_end(MathBuilder *b, int scope, MathValue result) {
  if (b->width) return math_lanes_scope_end(b, scope, result);
  if (result != scope) {
    EMIT(X86_MOV, reg(X86_RAX), math_slot_operand(b, result, 8));
    EMIT(X86_MOV, math_slot_operand(b, scope, 8), reg(X86_RAX));
  }
  b->next_slot = scope + 1;
  return scope;
}

static X86Operand slot32(const MathBuilder *b, MathValue v) { return math_slot_operand(b, v, 4); }
static X86Operand slot64(const MathBuilder *b, MathValue v) { return math_slot_operand(b, v, 8); }

MathValue math_input(MathBuilder *b, X86Operand input, bool f64) {
  if (b->width) return f64 ? math_lanes_unsupported(b, "an f64 input") : math_lanes_input(b, input);
  MathValue v = math_value_new(b);
  EMIT(f64 ? X86_MOVSD : X86_MOVSS, reg(KX_XMM_SCRATCH0), input);
  EMIT(f64 ? X86_MOVSD : X86_MOVSS, f64 ? slot64(b, v) : slot32(b, v), reg(KX_XMM_SCRATCH0));
  return v;
}

void math_output(MathBuilder *b, MathValue v, X86Reg into, bool f64) {
  if (b->width) {
    math_lanes_output(b, v, x86_reg_number(into));
    return;
  }
  EMIT(f64 ? X86_MOVSD : X86_MOVSS, reg(into), f64 ? slot64(b, v) : slot32(b, v));
}

/* ---- constants ---- */

MathValue math_constant_i32(MathBuilder *b, int32_t c) {
  if (b->width) return math_lanes_constant(b, (uint32_t)c);
  MathValue v = math_value_new(b);
  EMIT(X86_MOV, reg(X86_EAX), x86_imm(c));
  EMIT(X86_MOV, slot32(b, v), reg(X86_EAX));
  return v;
}

MathValue math_constant_u64(MathBuilder *b, uint64_t c) {
  if (b->width) return math_lanes_unsupported(b, "a u64 or f64 constant");
  MathValue v = math_value_new(b);
  EMIT(X86_MOV, reg(X86_RAX), x86_imm((int64_t)c));
  EMIT(X86_MOV, slot64(b, v), reg(X86_RAX));
  return v;
}

MathValue math_constant_f32(MathBuilder *b, float c) {
  uint32_t bits;
  memcpy(&bits, &c, sizeof bits);
  return math_constant_i32(b, (int32_t)bits);
}

MathValue math_constant_f64(MathBuilder *b, double c) {
  uint64_t bits;
  memcpy(&bits, &c, sizeof bits);
  return math_constant_u64(b, bits);
}

/* ---- floating point ---- */

/* xmm15 = a; xmm15 op= c; a fresh slot = xmm15. */
static X86Mnemonic packed_of(X86Mnemonic m) {
  switch (m) {
  case X86_ADDSS: return X86_VADDPS;
  case X86_SUBSS: return X86_VSUBPS;
  case X86_MULSS: return X86_VMULPS;
  case X86_DIVSS: return X86_VDIVPS;
  case X86_MINSS: return X86_VMINPS;
  default: return X86_VMAXPS;
  }
}

static MathValue float_binary(MathBuilder *b, X86Mnemonic m, bool f64, MathValue a, MathValue c) {
  if (b->width)
    return f64 ? math_lanes_unsupported(b, "f64 arithmetic") : math_lanes_binary(b, packed_of(m), a, c);
  MathValue v = math_value_new(b);
  int size = f64 ? 8 : 4;
  X86Mnemonic move = f64 ? X86_MOVSD : X86_MOVSS;
  EMIT(move, reg(KX_XMM_SCRATCH0), math_slot_operand(b, a, size));
  EMIT(m, reg(KX_XMM_SCRATCH0), math_slot_operand(b, c, size));
  EMIT(move, math_slot_operand(b, v, size), reg(KX_XMM_SCRATCH0));
  return v;
}

MathValue math_add_f32(MathBuilder *b, MathValue a, MathValue c) { return float_binary(b, X86_ADDSS, false, a, c); }
MathValue math_sub_f32(MathBuilder *b, MathValue a, MathValue c) { return float_binary(b, X86_SUBSS, false, a, c); }
MathValue math_mul_f32(MathBuilder *b, MathValue a, MathValue c) { return float_binary(b, X86_MULSS, false, a, c); }
MathValue math_div_f32(MathBuilder *b, MathValue a, MathValue c) { return float_binary(b, X86_DIVSS, false, a, c); }
/* minss/maxss return the second operand unless the first compares less
 * (greater): the C's "a < c ? a : c", NaN rule included. */
MathValue math_min_f32(MathBuilder *b, MathValue a, MathValue c) { return float_binary(b, X86_MINSS, false, a, c); }
MathValue math_max_f32(MathBuilder *b, MathValue a, MathValue c) { return float_binary(b, X86_MAXSS, false, a, c); }
MathValue math_add_f64(MathBuilder *b, MathValue a, MathValue c) {
  return float_binary(b, X86_ADDSD, true, a, c);
}
MathValue math_sub_f64(MathBuilder *b, MathValue a, MathValue c) {
  return float_binary(b, X86_SUBSD, true, a, c);
}
MathValue math_mul_f64(MathBuilder *b, MathValue a, MathValue c) {
  return float_binary(b, X86_MULSD, true, a, c);
}
MathValue math_div_f64(MathBuilder *b, MathValue a, MathValue c) {
  return float_binary(b, X86_DIVSD, true, a, c);
}
MathValue math_min_f64(MathBuilder *b, MathValue a, MathValue c) {
  return float_binary(b, X86_MINSD, true, a, c);
}
MathValue math_max_f64(MathBuilder *b, MathValue a, MathValue c) {
  return float_binary(b, X86_MAXSD, true, a, c);
}

MathValue math_sqrt_f32(MathBuilder *b, MathValue a) {
  if (b->width) return math_lanes_unary(b, X86_VSQRTPS, a);
  MathValue v = math_value_new(b);
  EMIT(X86_SQRTSS, reg(KX_XMM_SCRATCH0), slot32(b, a));
  EMIT(X86_MOVSS, slot32(b, v), reg(KX_XMM_SCRATCH0));
  return v;
}

MathValue math_sqrt_f64(MathBuilder *b, MathValue a) {
  if (b->width) return math_lanes_unsupported(b, "math_sqrt_f64");
  MathValue v = math_value_new(b);
  EMIT(X86_SQRTSD, reg(KX_XMM_SCRATCH0), slot64(b, a));
  EMIT(X86_MOVSD, slot64(b, v), reg(KX_XMM_SCRATCH0));
  return v;
}

MathValue math_round_f32(MathBuilder *b, MathValue a, int mode) {
  if (b->width) return math_lanes_round(b, a, mode);
  MathValue v = math_value_new(b);
  EMIT(X86_ROUNDSS, reg(KX_XMM_SCRATCH0), slot32(b, a), x86_imm(mode));
  EMIT(X86_MOVSS, slot32(b, v), reg(KX_XMM_SCRATCH0));
  return v;
}

MathValue math_round_f64(MathBuilder *b, MathValue a, int mode) {
  if (b->width) return math_lanes_unsupported(b, "math_round_f64");
  MathValue v = math_value_new(b);
  EMIT(X86_ROUNDSD, reg(KX_XMM_SCRATCH0), slot64(b, a), x86_imm(mode));
  EMIT(X86_MOVSD, slot64(b, v), reg(KX_XMM_SCRATCH0));
  return v;
}

/* Sign-bit operations are integer operations on the bits. */
static MathValue bits_with_mask(MathBuilder *b, MathValue a, bool wide, X86Mnemonic m, int64_t mask) {
  if (b->width && wide) return math_lanes_unsupported(b, "an f64 sign operation");
  if (b->width)
    return math_lanes_bitwise(b, m == X86_AND ? '&' : '^', a, math_lanes_constant(b, (uint32_t)mask));
  MathValue v = math_value_new(b);
  X86Reg ax = wide ? X86_RAX : X86_EAX, cx = wide ? X86_RCX : X86_ECX;
  EMIT(X86_MOV, reg(ax), math_slot_operand(b, a, wide ? 8 : 4));
  EMIT(X86_MOV, reg(cx), x86_imm(mask));
  EMIT(m, reg(ax), reg(cx));
  EMIT(X86_MOV, math_slot_operand(b, v, wide ? 8 : 4), reg(ax));
  return v;
}

MathValue math_abs_f32(MathBuilder *b, MathValue a) {
  return bits_with_mask(b, a, false, X86_AND, 0x7fffffff);
}
MathValue math_negate_f32(MathBuilder *b, MathValue a) { return bits_with_mask(b, a, false, X86_XOR, 0x80000000ll); }
MathValue math_abs_f64(MathBuilder *b, MathValue a) { return bits_with_mask(b, a, true, X86_AND, INT64_MAX); }
MathValue math_negate_f64(MathBuilder *b, MathValue a) {
  return bits_with_mask(b, a, true, X86_XOR, INT64_MIN);
}

static MathValue copysign_bits(MathBuilder *b, MathValue a, MathValue sign, bool wide) {
  MathValue magnitude = bits_with_mask(b, a, wide, X86_AND, wide ? INT64_MAX : 0x7fffffff);
  MathValue sign_bit = bits_with_mask(b, sign, wide, X86_AND, wide ? INT64_MIN : 0x80000000ll);
  return wide ? math_or_u64(b, magnitude, sign_bit) : math_or_i32(b, magnitude, sign_bit);
}

MathValue math_copysign_f32(MathBuilder *b, MathValue a, MathValue sign) { return copysign_bits(b, a, sign, false); }
MathValue math_copysign_f64(MathBuilder *b, MathValue a, MathValue sign) { return copysign_bits(b, a, sign, true); }

/* ---- comparisons ---- */

/* ucomis(s|d) left, right, then the condition into a 0/1 slot. With
 * left = c and right = a, "above" is a < c and "above or equal" a <= c,
 * both false when unordered (CF = ZF = 1). */
static MathValue float_compare(MathBuilder *b, bool f64, MathValue left, MathValue right, X86Cond cc) {
  if (b->width) return math_lanes_unsupported(b, "an f64 compare");
  MathValue v = math_value_new(b);
  int size = f64 ? 8 : 4;
  EMIT(f64 ? X86_MOVSD : X86_MOVSS, reg(KX_XMM_SCRATCH0), math_slot_operand(b, left, size));
  EMIT(f64 ? X86_UCOMISD : X86_UCOMISS, reg(KX_XMM_SCRATCH0), math_slot_operand(b, right, size));
  EMIT(x86_setcc(cc), reg(X86_AL));
  if (cc == X86_CC_E) { /* equal and ordered */
    EMIT(X86_SETNP, reg(X86_CL));
    EMIT(X86_AND, reg(X86_AL), reg(X86_CL));
  }
  EMIT(X86_MOVZX, reg(X86_EAX), reg(X86_AL));
  EMIT(X86_MOV, slot32(b, v), reg(X86_EAX));
  return v;
}

/* In vector mode, vcmpps's predicates 1 (lt), 2 (le), 0 (eq), 3 (unord). */
MathValue math_less_f32(MathBuilder *b, MathValue a, MathValue c) {
  return b->width ? math_lanes_compare(b, a, c, 1) : float_compare(b, false, c, a, X86_CC_A);
}
MathValue math_less_equal_f32(MathBuilder *b, MathValue a, MathValue c) {
  return b->width ? math_lanes_compare(b, a, c, 2) : float_compare(b, false, c, a, X86_CC_AE);
}
MathValue math_equal_f32(MathBuilder *b, MathValue a, MathValue c) {
  return b->width ? math_lanes_compare(b, a, c, 0) : float_compare(b, false, a, c, X86_CC_E);
}
MathValue math_is_nan_f32(MathBuilder *b, MathValue a) {
  return b->width ? math_lanes_compare(b, a, a, 3) : float_compare(b, false, a, a, X86_CC_P);
}
MathValue math_less_f64(MathBuilder *b, MathValue a, MathValue c) { return float_compare(b, true, c, a, X86_CC_A); }
MathValue math_less_equal_f64(MathBuilder *b, MathValue a, MathValue c) { return float_compare(b, true, c, a, X86_CC_AE); }
MathValue math_equal_f64(MathBuilder *b, MathValue a, MathValue c) { return float_compare(b, true, a, c, X86_CC_E); }
MathValue math_is_nan_f64(MathBuilder *b, MathValue a) { return float_compare(b, true, a, a, X86_CC_P); }

/* ---- conversions ---- */

static MathValue convert(MathBuilder *b, X86Mnemonic m, X86Reg into, int from_size, int to_size, MathValue a) {
  if (b->width) return math_lanes_unsupported(b, "a conversion through f64 or i64");
  MathValue v = math_value_new(b);
  EMIT(m, reg(into), math_slot_operand(b, a, from_size));
  if (x86_reg_kind(into) == X86_KIND_XMM)
    EMIT(to_size == 8 ? X86_MOVSD : X86_MOVSS, math_slot_operand(b, v, to_size), reg(into));
  else
    EMIT(X86_MOV, math_slot_operand(b, v, to_size), reg(into));
  return v;
}

/* cvtsi2s* only writes the low lane: clear the register first so that
 * the conversion does not wait on its old value. */
static MathValue convert_from_integer(MathBuilder *b, X86Mnemonic m, int from_size, int to_size, MathValue a) {
  EMIT(X86_XORPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
  return convert(b, m, KX_XMM_SCRATCH0, from_size, to_size, a);
}

MathValue math_f32_from_i32(MathBuilder *b, MathValue a) {
  return b->width ? math_lanes_unary(b, X86_VCVTDQ2PS, a) : convert_from_integer(b, X86_CVTSI2SS, 4, 4, a);
}
MathValue math_f64_from_i32(MathBuilder *b, MathValue a) {
  return convert_from_integer(b, X86_CVTSI2SD, 4, 8, a);
}
MathValue math_f64_from_i64(MathBuilder *b, MathValue a) {
  return convert_from_integer(b, X86_CVTSI2SD, 8, 8, a);
}
MathValue math_i32_from_f32(MathBuilder *b, MathValue a) {
  return b->width ? math_lanes_unary(b, X86_VCVTTPS2DQ, a) : convert(b, X86_CVTTSS2SI, X86_EAX, 4, 4, a);
}
MathValue math_i64_from_f64(MathBuilder *b, MathValue a) {
  return convert(b, X86_CVTTSD2SI, X86_RAX, 8, 8, a);
}
MathValue math_i32_from_f64_truncated(MathBuilder *b, MathValue a) { return convert(b, X86_CVTTSD2SI, X86_EAX, 8, 4, a); }
MathValue math_f64_from_f32(MathBuilder *b, MathValue a) {
  EMIT(X86_XORPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
  return convert(b, X86_CVTSS2SD, KX_XMM_SCRATCH0, 4, 8, a);
}
MathValue math_f32_from_f64(MathBuilder *b, MathValue a) {
  EMIT(X86_XORPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
  return convert(b, X86_CVTSD2SS, KX_XMM_SCRATCH0, 8, 4, a);
}

/* A 32-bit mov zero-extends into the 64-bit register. */
MathValue math_u64_from_u32(MathBuilder *b, MathValue a) {
  if (b->width) return math_lanes_unsupported(b, "math_u64_from_u32");
  MathValue v = math_value_new(b);
  EMIT(X86_MOV, reg(X86_EAX), slot32(b, a));
  EMIT(X86_MOV, slot64(b, v), reg(X86_RAX));
  return v;
}

MathValue math_u64_sign_extended(MathBuilder *b, MathValue a) {
  if (b->width) return math_lanes_unsupported(b, "math_u64_sign_extended");
  MathValue v = math_value_new(b);
  EMIT(X86_MOVSXD, reg(X86_RAX), slot32(b, a));
  EMIT(X86_MOV, slot64(b, v), reg(X86_RAX));
  return v;
}

/* ---- integers ---- */

static MathValue integer_binary(MathBuilder *b, X86Mnemonic m, bool wide, MathValue a, MathValue c) {
  if (b->width && wide) return math_lanes_unsupported(b, "u64 arithmetic");
  if (b->width && (m == X86_AND || m == X86_OR || m == X86_XOR))
    return math_lanes_bitwise(b, m == X86_AND ? '&' : m == X86_OR ? '|' : '^', a, c);
  if (b->width) return math_lanes_binary(b, m == X86_ADD ? X86_VPADDD : m == X86_SUB ? X86_VPSUBD : X86_VPMULLD, a, c);
  MathValue v = math_value_new(b);
  X86Reg ax = wide ? X86_RAX : X86_EAX;
  int size = wide ? 8 : 4;
  EMIT(X86_MOV, reg(ax), math_slot_operand(b, a, size));
  EMIT(m, reg(ax), math_slot_operand(b, c, size));
  EMIT(X86_MOV, math_slot_operand(b, v, size), reg(ax));
  return v;
}

MathValue math_add_i32(MathBuilder *b, MathValue a, MathValue c) { return integer_binary(b, X86_ADD, false, a, c); }
MathValue math_sub_i32(MathBuilder *b, MathValue a, MathValue c) { return integer_binary(b, X86_SUB, false, a, c); }
MathValue math_mul_i32(MathBuilder *b, MathValue a, MathValue c) { return integer_binary(b, X86_IMUL, false, a, c); }
MathValue math_and_i32(MathBuilder *b, MathValue a, MathValue c) { return integer_binary(b, X86_AND, false, a, c); }
MathValue math_or_i32(MathBuilder *b, MathValue a, MathValue c) {
  return integer_binary(b, X86_OR, false, a, c);
}
MathValue math_xor_i32(MathBuilder *b, MathValue a, MathValue c) { return integer_binary(b, X86_XOR, false, a, c); }
MathValue math_add_u64(MathBuilder *b, MathValue a, MathValue c) {
  return integer_binary(b, X86_ADD, true, a, c);
}
MathValue math_sub_u64(MathBuilder *b, MathValue a, MathValue c) {
  return integer_binary(b, X86_SUB, true, a, c);
}
MathValue math_and_u64(MathBuilder *b, MathValue a, MathValue c) {
  return integer_binary(b, X86_AND, true, a, c);
}
MathValue math_or_u64(MathBuilder *b, MathValue a, MathValue c) {
  return integer_binary(b, X86_OR, true, a, c);
}

/* Both factors zero-extended: the 64-bit imul's low half is the whole
 * product of two 32-bit unsigned numbers. */
MathValue math_multiply_wide_u32(MathBuilder *b, MathValue a, MathValue c) {
  if (b->width) return math_lanes_unsupported(b, "math_multiply_wide_u32");
  MathValue v = math_value_new(b);
  EMIT(X86_MOV, reg(X86_EAX), slot32(b, a));
  EMIT(X86_MOV, reg(X86_ECX), slot32(b, c));
  EMIT(X86_IMUL, reg(X86_RAX), reg(X86_RCX));
  EMIT(X86_MOV, slot64(b, v), reg(X86_RAX));
  return v;
}

MathValue math_multiply_high_u64(MathBuilder *b, MathValue a, MathValue c, MathValue *low) {
  if (b->width) return *low = math_lanes_unsupported(b, "math_multiply_high_u64");
  MathValue v = math_value_new(b);
  *low = math_value_new(b);
  EMIT(X86_MOV, reg(X86_RAX), slot64(b, a));
  EMIT(X86_MUL, slot64(b, c)); /* rdx:rax = rax * c */
  EMIT(X86_MOV, slot64(b, *low), reg(X86_RAX));
  EMIT(X86_MOV, slot64(b, v), reg(X86_RDX));
  return v;
}

MathValue math_mul_u64(MathBuilder *b, MathValue a, MathValue c) { return integer_binary(b, X86_IMUL, true, a, c); }

/* A 64-bit comparison, scalar code only: the i32 mask of condition cc. */
static MathValue compare_u64(MathBuilder *b, MathValue a, MathValue c, X86Cond cc) {
  if (b->width) return math_lanes_unsupported(b, "a u64 comparison");
  MathValue v = math_value_new(b);
  EMIT(X86_MOV, reg(X86_RAX), slot64(b, a));
  EMIT(X86_CMP, reg(X86_RAX), slot64(b, c));
  EMIT(x86_setcc(cc), reg(X86_AL));
  EMIT(X86_MOVZX, reg(X86_EAX), reg(X86_AL));
  EMIT(X86_MOV, slot32(b, v), reg(X86_EAX));
  return v;
}

MathValue math_less_u64(MathBuilder *b, MathValue a, MathValue c) { return compare_u64(b, a, c, X86_CC_B); }
MathValue math_less_i64(MathBuilder *b, MathValue a, MathValue c) { return compare_u64(b, a, c, X86_CC_L); }
MathValue math_equal_u64(MathBuilder *b, MathValue a, MathValue c) { return compare_u64(b, a, c, X86_CC_E); }

static MathValue integer_shift(MathBuilder *b, X86Mnemonic m, bool wide, MathValue a, int count) {
  if (b->width && wide) return math_lanes_unsupported(b, "a u64 shift");
  if (b->width) return math_lanes_shift(b, m == X86_SHL ? X86_VPSLLD : m == X86_SHR ? X86_VPSRLD : X86_VPSRAD, a, count);
  MathValue v = math_value_new(b);
  X86Reg ax = wide ? X86_RAX : X86_EAX;
  EMIT(X86_MOV, reg(ax), math_slot_operand(b, a, wide ? 8 : 4));
  if (count) EMIT(m, reg(ax), x86_imm(count));
  EMIT(X86_MOV, math_slot_operand(b, v, wide ? 8 : 4), reg(ax));
  return v;
}

MathValue math_shift_left_i32(MathBuilder *b, MathValue a, int count) { return integer_shift(b, X86_SHL, false, a, count); }
MathValue math_shift_right_u32(MathBuilder *b, MathValue a, int count) { return integer_shift(b, X86_SHR, false, a, count); }
MathValue math_shift_right_i32(MathBuilder *b, MathValue a, int count) { return integer_shift(b, X86_SAR, false, a, count); }
MathValue math_shift_left_u64(MathBuilder *b, MathValue a, int count) { return integer_shift(b, X86_SHL, true, a, count); }
MathValue math_shift_right_u64(MathBuilder *b, MathValue a, int count) { return integer_shift(b, X86_SHR, true, a, count); }
MathValue math_shift_right_i64(MathBuilder *b, MathValue a, int count) { return integer_shift(b, X86_SAR, true, a, count); }

static MathValue integer_compare(MathBuilder *b, MathValue a, MathValue c, X86Cond cc) {
  if (b->width && cc == X86_CC_L) return math_lanes_integer_compare(b, X86_VPCMPGTD, c, a);
  if (b->width) return math_lanes_integer_compare(b, X86_VPCMPEQD, a, c);
  MathValue v = math_value_new(b);
  EMIT(X86_MOV, reg(X86_EAX), slot32(b, a));
  EMIT(X86_CMP, reg(X86_EAX), slot32(b, c));
  EMIT(x86_setcc(cc), reg(X86_AL));
  EMIT(X86_MOVZX, reg(X86_EAX), reg(X86_AL));
  EMIT(X86_MOV, slot32(b, v), reg(X86_EAX));
  return v;
}

MathValue math_less_i32(MathBuilder *b, MathValue a, MathValue c) {
  return integer_compare(b, a, c, X86_CC_L);
}
MathValue math_equal_i32(MathBuilder *b, MathValue a, MathValue c) {
  return integer_compare(b, a, c, X86_CC_E);
}

MathValue math_select_value(MathBuilder *b, MathValue mask, MathValue a, MathValue c) {
  if (b->width) return math_lanes_select(b, mask, a, c);
  MathValue v = math_value_new(b);
  EMIT(X86_MOV, reg(X86_RAX), slot64(b, c));
  EMIT(X86_MOV, reg(X86_RCX), slot64(b, a));
  EMIT(X86_CMP, slot32(b, mask), x86_imm(0));
  EMIT(X86_CMOVNE, reg(X86_RAX), reg(X86_RCX));
  EMIT(X86_MOV, slot64(b, v), reg(X86_RAX));
  return v;
}

X86Label math_skip_if(MathBuilder *b, MathValue mask) {
  X86Label skip = x86_label_new(b->x->cb);
  if (b->width) {
    math_lanes_skip_if_all(b, mask, skip);
    return skip;
  }
  EMIT(X86_CMP, slot32(b, mask), x86_imm(0));
  EMIT(X86_JNE, x86_rel(skip));
  return skip;
}

void math_skip_end(MathBuilder *b, X86Label skip) {
  x86_label_bind(b->x->cb, skip);
  b->k1_mask = -1; /* the code jumped over may have written k1 */
  b->compare_mask = -1;
}

/* Vector masks are all ones: "is zero" negates them and 0/1 ones alike. */
MathValue math_not_mask(MathBuilder *b, MathValue mask) {
  if (b->width) return math_equal_i32(b, mask, math_constant_i32(b, 0));
  return math_xor_i32(b, mask, math_constant_i32(b, 1));
}

/* ---- fused multiply-add ---- */

/* Round to odd of the f64 sum p + c (Boldo and Melquiond): the rounded
 * sum s, and if it was inexact (the two-sum error e is nonzero) and s's
 * last bit is even, s moved one unit toward p + c, which makes it odd.
 * One rounding to a format with at most 51 - 2 bits less then rounds
 * p + c correctly. e is compared both ways so that a NaN (from infinite
 * operands) moves nothing. */
static MathValue sum_round_to_odd_f64(MathBuilder *b, MathValue p, MathValue c) {
  MathValue s = math_add_f64(b, p, c);
  MathValue back = math_sub_f64(b, s, p);
  MathValue e = math_add_f64(b, math_sub_f64(b, p, math_sub_f64(b, s, back)), math_sub_f64(b, c, back));
  MathValue zero = math_constant_f64(b, 0.0);
  MathValue e_positive = math_less_f64(b, zero, e), e_negative = math_less_f64(b, e, zero);
  MathValue s_negative = math_shift_right_u32(b, math_shift_right_u64(b, s, 32), 31);
  MathValue even = math_equal_i32(b, math_and_i32(b, s, math_constant_i32(b, 1)), math_constant_i32(b, 0));
  MathValue inexact = math_or_i32(b, e_positive, e_negative);
  /* toward p + c: away from zero when e has s's sign (+1 on the bits) */
  MathValue away = math_equal_i32(b, e_negative, s_negative);
  MathValue step = math_select_value(b, away, math_constant_u64(b, 1), math_constant_u64(b, UINT64_MAX));
  step = math_select_value(b, math_and_i32(b, inexact, even), step, math_constant_u64(b, 0));
  return math_add_u64(b, s, step);
}

/* Without FMA: the product of two floats is exact in f64, and the sum
 * rounded to odd in f64 then to f32 is the one rounding of fmaf. */
static MathValue fma_f32_emulated(MathBuilder *b, MathValue a, MathValue c, MathValue d) {
  int scope = math_scope_begin(b);
  MathValue p = math_mul_f64(b, math_f64_from_f32(b, a), math_f64_from_f32(b, c));
  return math_scope_end(b, scope, math_f32_from_f64(b, sum_round_to_odd_f64(b, p, math_f64_from_f32(b, d))));
}

/* Veltkamp's split of a double into two 26-bit halves, a = high + low;
 * exact for |a| below 2^995 (beyond, a * (2^27 + 1) overflows). */
static MathValue split_f64(MathBuilder *b, MathValue a, MathValue *low) {
  MathValue t = math_mul_f64(b, a, math_constant_f64(b, 134217729.0)); /* 2^27 + 1 */
  MathValue high = math_sub_f64(b, t, math_sub_f64(b, t, a));
  *low = math_sub_f64(b, a, high);
  return high;
}

/* A factor from 2^995 up is scaled by 2^-54 first (exact), and the
 * product's two parts scaled back by 2^54 (exact: the product of such a
 * factor is far from the subnormals). */
static MathValue factor_scaled(MathBuilder *b, MathValue a, MathValue *scale) {
  MathValue big = math_less_f64(b, math_constant_f64(b, 0x1p995), math_abs_f64(b, a));
  *scale = math_select_value(b, big, math_constant_f64(b, 0x1p54), math_constant_f64(b, 1.0));
  return math_select_value(b, big, math_mul_f64(b, a, math_constant_f64(b, 0x1p-54)), a);
}

/* Dekker's exact product of doubles, a c = high + low; exact while
 * nothing overflows and the product is above 2^-969 (below, low loses
 * bits under the subnormal floor). */
static MathValue product_exact_f64(MathBuilder *b, MathValue a, MathValue c, MathValue *low) {
  MathValue scale_a, scale_c;
  a = factor_scaled(b, a, &scale_a);
  c = factor_scaled(b, c, &scale_c);
  MathValue a_low, c_low;
  MathValue a_high = split_f64(b, a, &a_low), c_high = split_f64(b, c, &c_low);
  MathValue high = math_mul_f64(b, a, c);
  MathValue error = math_sub_f64(b, math_mul_f64(b, a_high, c_high), high);
  error = math_add_f64(b, error, math_mul_f64(b, a_high, c_low));
  error = math_add_f64(b, error, math_mul_f64(b, a_low, c_high));
  error = math_add_f64(b, error, math_mul_f64(b, a_low, c_low));
  MathValue scale = math_mul_f64(b, scale_a, scale_c);
  *low = math_mul_f64(b, error, scale);
  return math_mul_f64(b, high, scale);
}

/* Boldo and Melquiond's emulated FMA: a c = uh + ul exactly;
 * d + uh = th + tl exactly (two-sum); the result is th + RO(tl + ul),
 * rounded once. */
static MathValue fma_f64_emulated(MathBuilder *b, MathValue a, MathValue c, MathValue d) {
  int scope = math_scope_begin(b);
  MathValue ul;
  MathValue uh = product_exact_f64(b, a, c, &ul);
  MathValue th = math_add_f64(b, d, uh);
  MathValue back = math_sub_f64(b, th, d);
  MathValue tl = math_add_f64(b, math_sub_f64(b, d, math_sub_f64(b, th, back)), math_sub_f64(b, uh, back));
  MathValue v = sum_round_to_odd_f64(b, tl, ul);
  MathValue result = math_add_f64(b, th, v);
  /* An infinite or NaN operand, or an overflow on the way, leaves no
   * finite result: then the plain product and sum say what it is. So
   * does a zero result, whose sign the two-sums lose (a c + d is then
   * exact, and its zero signed as the fma's). */
  MathValue plain = math_add_f64(b, math_mul_f64(b, a, c), d);
  MathValue magnitude = math_abs_f64(b, result);
  MathValue usable = math_and_i32(b, math_less_f64(b, magnitude, math_constant_f64(b, INFINITY)),
                             math_less_f64(b, math_constant_f64(b, 0.0), magnitude));
  return math_scope_end(b, scope, math_select_value(b, usable, result, plain));
}

static MathValue fma_hardware(MathBuilder *b, bool f64, MathValue a, MathValue c, MathValue d) {
  MathValue v = math_value_new(b);
  int size = f64 ? 8 : 4;
  X86Mnemonic move = f64 ? X86_MOVSD : X86_MOVSS;
  EMIT(move, reg(KX_XMM_SCRATCH0), math_slot_operand(b, a, size));
  EMIT(move, reg(KX_XMM_SCRATCH1), math_slot_operand(b, c, size));
  EMIT(f64 ? X86_VFMADD213SD : X86_VFMADD213SS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1),
       math_slot_operand(b, d, size));
  EMIT(move, math_slot_operand(b, v, size), reg(KX_XMM_SCRATCH0));
  return v;
}

MathValue math_fma_f32(MathBuilder *b, MathValue a, MathValue c, MathValue d) {
  if (b->width) return math_lanes_fma(b, a, c, d); /* emulated in f64 lanes at sse4 */
  return b->x->cpu->fma ? fma_hardware(b, false, a, c, d) : fma_f32_emulated(b, a, c, d);
}

MathValue math_fma_f64(MathBuilder *b, MathValue a, MathValue c, MathValue d) {
  if (b->width) return math_lanes_unsupported(b, "math_fma_f64");
  return b->x->cpu->fma ? fma_hardware(b, true, a, c, d) : fma_f64_emulated(b, a, c, d);
}

MathValue math_polynomial_f32(MathBuilder *b, const float *c, int count, MathValue v) {
  MathValue p = math_constant_f32(b, c[count - 1]);
  for (int k = count - 2; k >= 0; k--) p = math_fma_f32(b, p, v, math_constant_f32(b, c[k]));
  return p;
}

MathValue math_polynomial_f64(MathBuilder *b, const double *c, int count, MathValue v) {
  MathValue p = math_constant_f64(b, c[count - 1]);
  for (int k = count - 2; k >= 0; k--) p = math_fma_f64(b, p, v, math_constant_f64(b, c[k]));
  return p;
}
