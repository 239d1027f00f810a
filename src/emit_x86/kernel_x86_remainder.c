/* Float remainder (HLO remainder on f32, f64 and the narrow floats, which
 * compute it in f32): C's fmod, which the evaluator calls. It is exact, so
 * it is integer work, not an approximation: with x = mx * 2^ex and
 * y = my * 2^ey (integer significands, ex >= ey), the remainder of
 * mx * 2^(ex - ey) by my comes from shift-and-subtract, one step per
 * exponent between them (at most 253 for f32, 2045 for f64), and the
 * result is that remainder times 2^ey with x's sign.
 *
 * The cases C's fmod leaves to NaN are (x * y) / (x * y), as glibc
 * computes them: a NaN operand comes back quiet (x's first), an infinite x
 * or a zero y gives the machine's default NaN. An infinite y leaves a
 * finite x as it is, since |x| < |y|. */
#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }

typedef struct FloatLayout {
  bool f64;
  int mantissa_bits;      /* 23 or 52 */
  int64_t infinity;       /* the bits of +inf */
} FloatLayout;

static void move_to_gpr(KernelX86 *x, const FloatLayout *f, X86Reg gpr64, X86Reg xmm) {
  if (f->f64) EMIT(X86_MOVQ, reg(gpr64), reg(xmm));
  else EMIT(X86_MOVD, reg(x86_gpr(X86_KIND_GPR32, x86_reg_number(gpr64))), reg(xmm));
}

/* r (its magnitude's bits) to the integer significand in r, its top bit
 * at the implicit bit (which the scratch slot holds for f64), and the
 * exponent in e: a subnormal is shifted up to it, its exponent going below
 * 1, so that shift-and-subtract starts from r < 2 my. */
static void emit_split(KernelX86 *x, const FloatLayout *f, X86Reg r, X86Reg e) {
  X86Label subnormal = x86_label_new(x->cb), done = x86_label_new(x->cb), normalize = x86_label_new(x->cb);
  EMIT(X86_MOV, reg(e), reg(r));
  EMIT(X86_SHR, reg(e), x86_imm(f->mantissa_bits));
  EMIT(X86_SHL, reg(r), x86_imm(64 - f->mantissa_bits));
  EMIT(X86_SHR, reg(r), x86_imm(64 - f->mantissa_bits));
  EMIT(X86_TEST, reg(e), reg(e));
  EMIT(X86_JE, x86_rel(subnormal));
  if (f->f64) EMIT(X86_OR, reg(r), kernel_x86_slot(x->scratch_slot, 8));
  else EMIT(X86_OR, reg(r), x86_imm(1 << 23));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, subnormal);
  EMIT(X86_MOV, reg(e), x86_imm(1));
  x86_label_bind(x->cb, normalize); /* r is not 0: |x| > |y| > 0 */
  EMIT(X86_SHL, reg(r), x86_imm(1));
  EMIT(X86_DEC, reg(e));
  if (f->f64) EMIT(X86_TEST, kernel_x86_slot(x->scratch_slot, 8), reg(r));
  else EMIT(X86_TEST, reg(r), x86_imm(1 << 23));
  EMIT(X86_JE, x86_rel(normalize));
  x86_label_bind(x->cb, done);
}

/* scratch0 = rax * 2^(r11 - bias - mantissa bits), exactly: in f64, in
 * one multiply by a normal power of two, or for f64's lowest exponents
 * (r11 down to -51) two, by 2^(r11 - 1075 + 128) and 2^-128 (the product
 * is a multiple of the smallest subnormal, so exact). */
static void emit_scale(KernelX86 *x, const FloatLayout *f) {
  X86Label one_step = x86_label_new(x->cb), done = x86_label_new(x->cb);
  EMIT(X86_CVTSI2SD, reg(KX_XMM_SCRATCH0), reg(X86_RAX));
  if (!f->f64) { /* 2^(ey - 150) as an f64: exponent field ey - 150 + 1023 */
    EMIT(X86_ADD, reg(KX_SCRATCH_ADDRESS), x86_imm(1023 - 150));
    EMIT(X86_SHL, reg(KX_SCRATCH_ADDRESS), x86_imm(52));
    EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH1), reg(KX_SCRATCH_ADDRESS));
    EMIT(X86_MULSD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
    EMIT(X86_CVTSD2SS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
    return;
  }
  EMIT(X86_CMP, reg(KX_SCRATCH_ADDRESS), x86_imm(128));
  EMIT(X86_JG, x86_rel(one_step));
  EMIT(X86_ADD, reg(KX_SCRATCH_ADDRESS), x86_imm(128));
  EMIT(X86_MOV, reg(X86_RAX), x86_imm((int64_t)(1023 - 128) << 52));
  EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH2), reg(X86_RAX));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, one_step);
  EMIT(X86_MOV, reg(X86_RAX), x86_imm((int64_t)1023 << 52)); /* times 1 */
  EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH2), reg(X86_RAX));
  x86_label_bind(x->cb, done);
  EMIT(X86_SUB, reg(KX_SCRATCH_ADDRESS), x86_imm(52)); /* ey - 1075 + 1023 */
  EMIT(X86_SHL, reg(KX_SCRATCH_ADDRESS), x86_imm(52));
  EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH1), reg(KX_SCRATCH_ADDRESS));
  EMIT(X86_MULSD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_MULSD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH2));
}

/* scratch0 = x's sign on scratch0's magnitude (which is +, or +0). */
static void emit_copy_sign_of_x(KernelX86 *x, const FloatLayout *f, int v) {
  kernel_x86_xmm_fetch(x, KX_XMM_SCRATCH1, v);
  move_to_gpr(x, f, X86_RAX, KX_XMM_SCRATCH1);
  EMIT(X86_SHR, reg(X86_RAX), x86_imm(f->f64 ? 63 : 31));
  EMIT(X86_SHL, reg(X86_RAX), x86_imm(f->f64 ? 63 : 31));
  EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH1), reg(X86_RAX));
  EMIT(X86_ORPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
}

void kernel_x86_emit_float_remainder(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  FloatLayout f = {.f64 = op->type == TYPE_F64, .mantissa_bits = op->type == TYPE_F64 ? 52 : 23,
                   .infinity = op->type == TYPE_F64 ? 0x7ff0000000000000ll : 0x7f800000ll};
  X86Label special = x86_label_new(x->cb), keep_x = x86_label_new(x->cb), zero = x86_label_new(x->cb),
           loop = x86_label_new(x->cb), no_subtract = x86_label_new(x->cb), last = x86_label_new(x->cb),
           below = x86_label_new(x->cb), done = x86_label_new(x->cb);
  if (f.f64) { /* the implicit bit, for emit_split */
    EMIT(X86_MOV, reg(X86_RAX), x86_imm(1ll << 52));
    EMIT(X86_MOV, kernel_x86_slot(x->scratch_slot, 8), reg(X86_RAX));
  }
  kernel_x86_xmm_fetch(x, KX_XMM_SCRATCH0, op->args[0]);
  kernel_x86_xmm_fetch(x, KX_XMM_SCRATCH1, op->args[1]);
  move_to_gpr(x, &f, X86_RAX, KX_XMM_SCRATCH0);
  move_to_gpr(x, &f, X86_RDX, KX_XMM_SCRATCH1);
  /* magnitudes: the sign bit shifted out and back */
  EMIT(X86_SHL, reg(X86_RAX), x86_imm(f.f64 ? 1 : 33));
  EMIT(X86_SHR, reg(X86_RAX), x86_imm(f.f64 ? 1 : 33));
  EMIT(X86_SHL, reg(X86_RDX), x86_imm(f.f64 ? 1 : 33));
  EMIT(X86_SHR, reg(X86_RDX), x86_imm(f.f64 ? 1 : 33));
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(f.infinity));
  EMIT(X86_CMP, reg(X86_RAX), reg(X86_RCX));
  EMIT(X86_JAE, x86_rel(special)); /* x infinite or NaN */
  EMIT(X86_CMP, reg(X86_RDX), reg(X86_RCX));
  EMIT(X86_JA, x86_rel(special)); /* y NaN */
  EMIT(X86_TEST, reg(X86_RDX), reg(X86_RDX));
  EMIT(X86_JE, x86_rel(special)); /* y zero */
  EMIT(X86_CMP, reg(X86_RAX), reg(X86_RDX));
  EMIT(X86_JB, x86_rel(keep_x));
  EMIT(X86_JE, x86_rel(zero));
  emit_split(x, &f, X86_RDX, KX_SCRATCH_ADDRESS); /* my, ey */
  emit_split(x, &f, X86_RAX, X86_RCX);            /* mx, ex */
  EMIT(X86_SUB, reg(X86_RCX), reg(KX_SCRATCH_ADDRESS));
  EMIT(X86_JE, x86_rel(last));
  x86_label_bind(x->cb, loop); /* r = (2r or 2(r - my)), ex - ey times */
  EMIT(X86_CMP, reg(X86_RAX), reg(X86_RDX));
  EMIT(X86_JB, x86_rel(no_subtract));
  EMIT(X86_SUB, reg(X86_RAX), reg(X86_RDX));
  x86_label_bind(x->cb, no_subtract);
  EMIT(X86_SHL, reg(X86_RAX), x86_imm(1));
  EMIT(X86_DEC, reg(X86_RCX));
  EMIT(X86_JNE, x86_rel(loop));
  x86_label_bind(x->cb, last);
  EMIT(X86_CMP, reg(X86_RAX), reg(X86_RDX));
  EMIT(X86_JB, x86_rel(below));
  EMIT(X86_SUB, reg(X86_RAX), reg(X86_RDX));
  x86_label_bind(x->cb, below);
  emit_scale(x, &f);
  emit_copy_sign_of_x(x, &f, op->args[0]);
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, zero); /* |x| = |y|: zero with x's sign */
  EMIT(X86_XORPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
  emit_copy_sign_of_x(x, &f, op->args[0]);
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, special);
  EMIT(f.f64 ? X86_MULSD : X86_MULSS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_MOVAPS, reg(KX_XMM_SCRATCH1), reg(KX_XMM_SCRATCH0));
  EMIT(f.f64 ? X86_DIVSD : X86_DIVSS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  x86_label_bind(x->cb, keep_x); /* |x| < |y|: x itself, still in scratch0 */
  x86_label_bind(x->cb, done);
  kernel_x86_xmm_define(x, i, KX_XMM_SCRATCH0);
}
