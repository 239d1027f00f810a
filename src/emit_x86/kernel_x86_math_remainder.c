/* HLO's remainder on f32 and f64 (C's fmod: x - n y with n = trunc(x / y),
 * the sign of x) in the kernel compiler's scalar code. The result is
 * always exact, so there is nothing to approximate: it is long division on
 * the integer mantissas, (mx 2^(ex - ey)) mod my, taken 63 bits of the
 * exponent difference at a time with the 128-by-64-bit div (whose
 * quotient stays below 2^63 because the running remainder is below my).
 * The remainder, times y's power of two, converts back exactly.
 *
 * Special cases as fmod: x infinite, y zero or either NaN give NaN
 * ((x y) / (x y)); |x| < |y| gives x; |x| = |y| gives 0 with x's sign. */
#include "emit_x86/kernel_x86_math_builder.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }

/* The float layout the division needs. */
typedef struct FloatLayout {
  int mantissa_bits, bias;
  uint64_t infinity_bits, sign_bit;
} FloatLayout;

static const FloatLayout layout_f32 = {23, 127, 0x7f800000u, 0x80000000u};
static const FloatLayout layout_f64 = {52, 1023, UINT64_C(0x7ff0000000000000), UINT64_C(0x8000000000000000)};

/* From magnitude bits in `bits`: the mantissa with its implicit bit (none
 * for a subnormal) into `mantissa`, the exponent (1 for a subnormal) into
 * the slot `exponent`. Uses rcx. */
static void float_split(KernelX86 *x, const FloatLayout *f, X86Reg bits, X86Reg mantissa, X86Operand exponent) {
  X86Label normal = x86_label_new(x->cb), done = x86_label_new(x->cb);
  EMIT(X86_MOV, reg(mantissa), reg(bits));
  EMIT(X86_MOV, reg(X86_RCX), x86_imm((int64_t)((UINT64_C(1) << f->mantissa_bits) - 1)));
  EMIT(X86_AND, reg(mantissa), reg(X86_RCX));
  EMIT(X86_SHR, reg(bits), x86_imm(f->mantissa_bits));
  EMIT(X86_TEST, reg(bits), reg(bits));
  EMIT(X86_JNE, x86_rel(normal));
  EMIT(X86_MOV, reg(bits), x86_imm(1));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, normal);
  EMIT(X86_MOV, reg(X86_RCX), x86_imm((int64_t)(UINT64_C(1) << f->mantissa_bits)));
  EMIT(X86_OR, reg(mantissa), reg(X86_RCX));
  x86_label_bind(x->cb, done);
  EMIT(X86_MOV, exponent, reg(bits));
}

/* rdx = (rdx 2^d) mod r11 for d in the slot `difference` (consumed),
 * rdx < r11 on entry: at most 63 doublings per div. */
static void remainder_shift_loop(KernelX86 *x, X86Operand difference) {
  X86Label loop = x86_label_new(x->cb), done = x86_label_new(x->cb), chunk = x86_label_new(x->cb);
  x86_label_bind(x->cb, loop);
  EMIT(X86_MOV, reg(X86_RCX), difference);
  EMIT(X86_TEST, reg(X86_RCX), reg(X86_RCX));
  EMIT(X86_JE, x86_rel(done));
  EMIT(X86_CMP, reg(X86_RCX), x86_imm(63));
  EMIT(X86_JBE, x86_rel(chunk));
  EMIT(X86_MOV, reg(X86_ECX), x86_imm(63));
  x86_label_bind(x->cb, chunk);
  EMIT(X86_SUB, difference, reg(X86_RCX));
  /* rdx:rax = r << k: rax = r << k, rdx = r >> (64 - k), 1 <= k <= 63 */
  EMIT(X86_MOV, reg(X86_RAX), reg(X86_RDX));
  EMIT(X86_SHL, reg(X86_RAX), reg(X86_CL));
  EMIT(X86_NEG, reg(X86_ECX));
  EMIT(X86_ADD, reg(X86_ECX), x86_imm(64));
  EMIT(X86_SHR, reg(X86_RDX), reg(X86_CL));
  EMIT(X86_DIV, reg(KX_SCRATCH_ADDRESS));
  EMIT(X86_JMP, x86_rel(loop));
  x86_label_bind(x->cb, done);
}

/* xmm13 = the nonzero remainder rdx times 2^(ey - bias - mantissa_bits),
 * in two exact steps (the first keeps it normal, the second is y's
 * power of two), with x's sign. */
static void remainder_scale(KernelX86 *x, const FloatLayout *f, bool f64, X86Operand ey, X86Operand x_slot) {
  const X86Reg r = KX_XMM_SCRATCH2, t = KX_XMM_SCRATCH1;
  EMIT(X86_XORPS, reg(r), reg(r));
  EMIT(X86_CVTSI2SD, reg(r), reg(X86_RDX));
  int64_t inverse = (int64_t)(1023 - f->mantissa_bits) << 52;
  EMIT(X86_MOV, reg(X86_RAX), x86_imm(inverse));
  EMIT(X86_MOVQ, reg(t), reg(X86_RAX));
  EMIT(X86_MULSD, reg(r), reg(t));
  EMIT(X86_MOV, reg(X86_RAX), ey);
  EMIT(X86_ADD, reg(X86_RAX), x86_imm(1023 - f->bias));
  EMIT(X86_SHL, reg(X86_RAX), x86_imm(52));
  EMIT(X86_MOVQ, reg(t), reg(X86_RAX));
  EMIT(X86_MULSD, reg(r), reg(t));
  if (!f64) EMIT(X86_CVTSD2SS, reg(r), reg(r));
  EMIT(X86_MOV, reg(f64 ? X86_RAX : X86_EAX), x_slot);
  EMIT(X86_MOV, reg(X86_RCX), x86_imm((int64_t)f->sign_bit));
  EMIT(X86_AND, reg(X86_RAX), reg(X86_RCX));
  EMIT(X86_MOVQ, reg(t), reg(X86_RAX));
  EMIT(X86_ORPS, reg(r), reg(t));
}

/* The cases that need no division: NaN, x itself, signed zero. */
static void remainder_special_ends(KernelX86 *x, bool f64, X86Label invalid, X86Label itself, X86Label zero,
                                   X86Label done, X86Operand x_slot, X86Operand y_slot) {
  const X86Reg r = KX_XMM_SCRATCH2, t = KX_XMM_SCRATCH1;
  X86Mnemonic move = f64 ? X86_MOVSD : X86_MOVSS;
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, invalid);
  EMIT(move, reg(r), x_slot);
  EMIT(f64 ? X86_MULSD : X86_MULSS, reg(r), y_slot);
  EMIT(X86_MOVAPS, reg(t), reg(r));
  EMIT(f64 ? X86_DIVSD : X86_DIVSS, reg(r), reg(t));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, itself);
  EMIT(move, reg(r), x_slot);
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, zero);
  EMIT(move, reg(r), x_slot);
  EMIT(X86_MOV, reg(X86_RAX), x86_imm(f64 ? INT64_MIN : 0x80000000ll));
  EMIT(X86_MOVQ, reg(t), reg(X86_RAX));
  EMIT(X86_ANDPS, reg(r), reg(t));
  x86_label_bind(x->cb, done);
}

/* The magnitude bits of the float in `slot` into rax; uses rcx. */
static void magnitude_load(KernelX86 *x, const FloatLayout *f, bool f64, X86Operand slot) {
  EMIT(X86_MOV, reg(f64 ? X86_RAX : X86_EAX), slot); /* a 32-bit mov zero-extends */
  EMIT(X86_MOV, reg(X86_RCX), x86_imm((int64_t)(f->sign_bit - 1)));
  EMIT(X86_AND, reg(X86_RAX), reg(X86_RCX));
}

bool kernel_x86_emit_remainder(KernelX86 *x, bool f64, X86Operand left, X86Operand right, X86Reg *result) {
  const FloatLayout *f = f64 ? &layout_f64 : &layout_f32;
  MathBuilder b;
  math_builder_begin(&b, x);
  int size = f64 ? 8 : 4;
  MathValue vx = math_input(&b, left, f64), vy = math_input(&b, right, f64);
  X86Operand x_slot = math_slot_operand(&b, vx, size), y_slot = math_slot_operand(&b, vy, size);
  X86Operand ay = math_slot_operand(&b, math_value_new(&b), 8), mx = math_slot_operand(&b, math_value_new(&b), 8);
  X86Operand ex = math_slot_operand(&b, math_value_new(&b), 8), ey = math_slot_operand(&b, math_value_new(&b), 8);
  X86Label invalid = x86_label_new(x->cb), itself = x86_label_new(x->cb), zero = x86_label_new(x->cb);
  X86Label done = x86_label_new(x->cb);
  magnitude_load(x, f, f64, y_slot);
  EMIT(X86_MOV, ay, reg(X86_RAX));
  EMIT(X86_MOV, reg(X86_RDX), reg(X86_RAX));
  magnitude_load(x, f, f64, x_slot);
  EMIT(X86_MOV, reg(X86_RCX), x86_imm((int64_t)f->infinity_bits));
  EMIT(X86_CMP, reg(X86_RAX), reg(X86_RCX));
  EMIT(X86_JAE, x86_rel(invalid)); /* x infinite or NaN */
  EMIT(X86_CMP, reg(X86_RDX), reg(X86_RCX));
  EMIT(X86_JA, x86_rel(invalid)); /* y NaN */
  EMIT(X86_TEST, reg(X86_RDX), reg(X86_RDX));
  EMIT(X86_JE, x86_rel(invalid)); /* y zero */
  EMIT(X86_CMP, reg(X86_RAX), reg(X86_RDX));
  EMIT(X86_JB, x86_rel(itself));
  EMIT(X86_JE, x86_rel(zero));
  float_split(x, f, X86_RAX, KX_SCRATCH_ADDRESS, ex);
  EMIT(X86_MOV, mx, reg(KX_SCRATCH_ADDRESS));
  EMIT(X86_MOV, reg(X86_RAX), ay);
  float_split(x, f, X86_RAX, KX_SCRATCH_ADDRESS, ey); /* my stays in r11, the divisor */
  EMIT(X86_MOV, reg(X86_RCX), ex);
  EMIT(X86_SUB, reg(X86_RCX), ey);
  EMIT(X86_MOV, ex, reg(X86_RCX)); /* ex - ey >= 0, as |x| > |y| */
  EMIT(X86_MOV, reg(X86_RAX), mx);
  EMIT(X86_XOR, reg(X86_EDX), reg(X86_EDX));
  EMIT(X86_DIV, reg(KX_SCRATCH_ADDRESS));
  remainder_shift_loop(x, ex);
  EMIT(X86_TEST, reg(X86_RDX), reg(X86_RDX));
  EMIT(X86_JE, x86_rel(zero));
  remainder_scale(x, f, f64, ey, x_slot);
  remainder_special_ends(x, f64, invalid, itself, zero, done, x_slot, y_slot);
  *result = KX_XMM_SCRATCH2;
  return math_builder_end(&b);
}
