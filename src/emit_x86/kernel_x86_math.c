/* The inline f32 math functions in the kernel compiler's scalar code: each
 * a transcription of its mathref_* definition (src/ir/kernel/
 * math_reference.c), the same IEEE operations in the same order on the
 * same constants, so the compiled kernel computes mathref's bits.
 *
 * Only the scratch registers (xmm13..15, rax, rcx) are used. Where the C
 * selects between two computed values, the scalar code may branch: the
 * bits are the same. fmaf is vfmadd*ss, so the functions need the FMA
 * extension; without it (the sse4 level) they are refused rather than
 * computed with two roundings. */
#include "emit_x86/kernel_x86_internal.h"

#include <string.h>

#include "kernel/math_reference.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }

/* The 8-byte scratch slot as two f32/s32 halves (0 and 1): values that
 * outlive the three scratch registers within one op. */
static X86Operand scratch_half(const KernelX86 *x, int half) {
  return x86_mem(4, X86_RSP, 8 * x->scratch_slot + 4 * half);
}

/* xmm `into` = the float with these bits (through eax). */
static void bits_load(KernelX86 *x, X86Reg into, uint32_t bits) {
  EMIT(X86_MOV, reg(X86_EAX), x86_imm(bits));
  EMIT(X86_MOVD, reg(into), reg(X86_EAX));
}

static void constant_load(KernelX86 *x, X86Reg into, float c) {
  uint32_t bits;
  memcpy(&bits, &c, sizeof bits);
  bits_load(x, into, bits);
}

/* xmm `into` = 2^n for n in ecx/eax (n + 127 in the exponent field). */
static void pow2_load(KernelX86 *x, X86Reg into, X86Reg n32) {
  EMIT(X86_ADD, reg(n32), x86_imm(127));
  EMIT(X86_SHL, reg(n32), x86_imm(23));
  EMIT(X86_MOVD, reg(into), reg(n32));
}

/* mathref_expf of xmm15 (destroyed), the result in xmm13; uses the
 * whole scratch slot (the argument waits in half 1 for the NaN case). */
/* exp_reduce of min_f32(max_f32(xmm15, lo), hi): r in xmm15, n in
 * xmm14, and n as an integer in half 0 of the scratch slot. */
static void emit_exp_reduce(KernelX86 *x, float lo, float hi) {
  const X86Reg r = KX_XMM_SCRATCH0, t = KX_XMM_SCRATCH1, u = KX_XMM_SCRATCH2;
  /* maxss/minss keep the C's NaN rule */
  constant_load(x, u, lo);
  EMIT(X86_MAXSS, reg(r), reg(u));
  constant_load(x, u, hi);
  EMIT(X86_MINSS, reg(r), reg(u));
  /* n = fmaf(xc, LOG2E, SHIFTER) - SHIFTER in t */
  constant_load(x, t, MATHREF_LOG2E);
  constant_load(x, u, MATHREF_ROUND_SHIFTER_F32);
  EMIT(X86_VFMADD213SS, reg(t), reg(r), reg(u));
  EMIT(X86_SUBSS, reg(t), reg(u));
  /* r = fmaf(n, -LN2_HI, xc); r = fmaf(n, -LN2_LO, r) */
  constant_load(x, u, -MATHREF_LN2_HI);
  EMIT(X86_VFMADD231SS, reg(r), reg(t), reg(u));
  constant_load(x, u, -MATHREF_LN2_LO);
  EMIT(X86_VFMADD231SS, reg(r), reg(t), reg(u));
  /* ni (n is a whole number), kept in the scratch slot: eax carries constants */
  EMIT(X86_CVTTSS2SI, reg(X86_EAX), reg(t));
  EMIT(X86_MOV, scratch_half(x, 0), reg(X86_EAX));
}

static void emit_exp_body(KernelX86 *x) {
  const X86Reg r = KX_XMM_SCRATCH0, t = KX_XMM_SCRATCH1, u = KX_XMM_SCRATCH2;
  EMIT(X86_MOVSS, scratch_half(x, 1), reg(r));
  emit_exp_reduce(x, -104.0f, 89.0f);
  /* P(r) by Horner's rule in t, one FMA per coefficient */
  constant_load(x, t, mathref_exp_table[MATHREF_EXP_COUNT - 1]);
  for (int k = MATHREF_EXP_COUNT - 2; k >= 0; k--) {
    constant_load(x, u, mathref_exp_table[k]);
    EMIT(X86_VFMADD213SS, reg(t), reg(r), reg(u));
  }
  /* p = 1 + fmaf(r * r, P, r) in u */
  EMIT(X86_MOVAPS, reg(u), reg(r));
  EMIT(X86_MULSS, reg(u), reg(r));
  EMIT(X86_VFMADD213SS, reg(u), reg(t), reg(r));
  constant_load(x, t, 1.0f);
  EMIT(X86_ADDSS, reg(u), reg(t));
  /* (p * 2^n1) * 2^(ni - n1), n1 = ni >> 1 */
  EMIT(X86_MOV, reg(X86_ECX), scratch_half(x, 0));
  EMIT(X86_MOV, reg(X86_EAX), reg(X86_ECX));
  EMIT(X86_SAR, reg(X86_ECX), x86_imm(1));
  EMIT(X86_SUB, reg(X86_EAX), reg(X86_ECX));
  pow2_load(x, t, X86_ECX);
  EMIT(X86_MULSS, reg(u), reg(t));
  pow2_load(x, t, X86_EAX);
  EMIT(X86_MULSS, reg(u), reg(t));
  /* NaN: x + x */
  X86Label done = x86_label_new(x->cb);
  EMIT(X86_MOVSS, reg(r), scratch_half(x, 1));
  EMIT(X86_UCOMISS, reg(r), reg(r));
  EMIT(X86_JNP, x86_rel(done));
  EMIT(X86_ADDSS, reg(r), reg(r));
  EMIT(X86_MOVAPS, reg(u), reg(r));
  x86_label_bind(x->cb, done);
}

/* mathref_logisticf of `input`, the result in xmm13: y = numerator / sum
 * corrected by the residual of the division and the rounding of 1 + e. */
static void emit_logistic(KernelX86 *x, X86Operand input) {
  const X86Reg r = KX_XMM_SCRATCH0, t = KX_XMM_SCRATCH1, u = KX_XMM_SCRATCH2;
  /* e = exp(-|x|) in u */
  EMIT(X86_MOVSS, reg(r), input);
  bits_load(x, t, 0x80000000u);
  EMIT(X86_ORPS, reg(r), reg(t));
  emit_exp_body(x);
  /* numerator = x < 0 ? e : 1 in t (0 > x: false for NaN) */
  X86Label positive = x86_label_new(x->cb);
  EMIT(X86_MOVSS, reg(r), input);
  EMIT(X86_XORPS, reg(t), reg(t));
  EMIT(X86_UCOMISS, reg(t), reg(r));
  constant_load(x, t, 1.0f); /* mov and movd leave the flags */
  EMIT(X86_JBE, x86_rel(positive));
  EMIT(X86_MOVAPS, reg(t), reg(u));
  x86_label_bind(x->cb, positive);
  EMIT(X86_MOVSS, scratch_half(x, 1), reg(t));
  /* sum = 1 + e in r; sum_lost = (1 - sum) + e in t, then to half 0 */
  constant_load(x, r, 1.0f);
  EMIT(X86_ADDSS, reg(r), reg(u));
  constant_load(x, t, 1.0f);
  EMIT(X86_SUBSS, reg(t), reg(r));
  EMIT(X86_ADDSS, reg(t), reg(u));
  /* y = numerator / sum in u; y * sum_lost to half 0 */
  EMIT(X86_MOVSS, reg(u), scratch_half(x, 1));
  EMIT(X86_DIVSS, reg(u), reg(r));
  EMIT(X86_MULSS, reg(t), reg(u));
  EMIT(X86_MOVSS, scratch_half(x, 0), reg(t));
  /* residual = fmaf(-y, sum, numerator) - y sum_lost; y + residual / sum */
  bits_load(x, t, 0x80000000u);
  EMIT(X86_XORPS, reg(t), reg(u));
  EMIT(X86_VFMADD213SS, reg(t), reg(r), scratch_half(x, 1));
  EMIT(X86_SUBSS, reg(t), scratch_half(x, 0));
  EMIT(X86_DIVSS, reg(t), reg(r));
  EMIT(X86_ADDSS, reg(u), reg(t));
}

/* tanh's large side, 1 - 2 / (exp(2 min(|x|, 9.5)) + 1) with x's sign, in
 * xmm13 from |x| in xmm14. */
static void emit_tanh_large(KernelX86 *x, X86Operand input) {
  const X86Reg r = KX_XMM_SCRATCH0, t = KX_XMM_SCRATCH1, u = KX_XMM_SCRATCH2;
  EMIT(X86_MOVAPS, reg(r), reg(t));
  constant_load(x, u, 9.5f);
  EMIT(X86_MINSS, reg(r), reg(u));
  constant_load(x, u, 2.0f);
  EMIT(X86_MULSS, reg(r), reg(u));
  emit_exp_body(x);
  constant_load(x, r, 1.0f);
  EMIT(X86_ADDSS, reg(u), reg(r));
  constant_load(x, t, 2.0f);
  EMIT(X86_DIVSS, reg(t), reg(u));
  constant_load(x, u, 1.0f);
  EMIT(X86_SUBSS, reg(u), reg(t));
  bits_load(x, r, 0x7fffffffu);
  EMIT(X86_ANDPS, reg(u), reg(r));
  EMIT(X86_MOVSS, reg(t), input);
  bits_load(x, r, 0x80000000u);
  EMIT(X86_ANDPS, reg(t), reg(r));
  EMIT(X86_ORPS, reg(u), reg(t));
}

/* tanh's small side, fmaf(x, z P(z), x) with z = x x, in xmm13. */
static void emit_tanh_small(KernelX86 *x, X86Operand input) {
  const X86Reg r = KX_XMM_SCRATCH0, t = KX_XMM_SCRATCH1, u = KX_XMM_SCRATCH2;
  EMIT(X86_MOVSS, reg(t), input);
  EMIT(X86_MULSS, reg(t), reg(t));
  constant_load(x, u, mathref_tanh_table[MATHREF_TANH_COUNT - 1]);
  for (int k = MATHREF_TANH_COUNT - 2; k >= 0; k--) {
    constant_load(x, r, mathref_tanh_table[k]);
    EMIT(X86_VFMADD213SS, reg(u), reg(t), reg(r));
  }
  EMIT(X86_MULSS, reg(u), reg(t));
  EMIT(X86_MOVSS, reg(r), input);
  EMIT(X86_VFMADD213SS, reg(u), reg(r), reg(r));
}

/* mathref_tanhf of `input` in xmm13. Its selects become branches: NaN
 * gives x + x, ±0 itself, |x| < 0.5625 the small side, else the large. */
static void emit_tanh(KernelX86 *x, X86Operand input) {
  const X86Reg r = KX_XMM_SCRATCH0, t = KX_XMM_SCRATCH1, u = KX_XMM_SCRATCH2;
  X86Label special = x86_label_new(x->cb), small = x86_label_new(x->cb), done = x86_label_new(x->cb);
  EMIT(X86_MOVSS, reg(r), input);
  EMIT(X86_XORPS, reg(t), reg(t));
  EMIT(X86_UCOMISS, reg(r), reg(t));
  EMIT(X86_JE, x86_rel(special)); /* ±0, or NaN (unordered sets ZF too) */
  bits_load(x, t, 0x7fffffffu);
  EMIT(X86_ANDPS, reg(t), reg(r));
  constant_load(x, u, 0.5625f);
  EMIT(X86_UCOMISS, reg(u), reg(t));
  EMIT(X86_JA, x86_rel(small));
  emit_tanh_large(x, input);
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, small);
  emit_tanh_small(x, input);
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, special);
  EMIT(X86_MOVAPS, reg(u), reg(r));
  EMIT(X86_UCOMISS, reg(r), reg(r));
  EMIT(X86_JNP, x86_rel(done));
  EMIT(X86_ADDSS, reg(u), reg(u));
  x86_label_bind(x->cb, done);
}

/* log of a positive normal-or-subnormal finite x in xmm15, the result in
 * xmm13: log_split's integer steps, then log_combine's sums in its order
 * (the small terms first). log1p's extra term waits in xmm13 (has_extra),
 * else it is 0. */
static void emit_log_finite(KernelX86 *x, bool has_extra) {
  const X86Reg r = KX_XMM_SCRATCH0, t = KX_XMM_SCRATCH1, u = KX_XMM_SCRATCH2;
  /* a subnormal x is scaled by 2^23 first, and e lowered by 23 (in ecx) */
  X86Label normal = x86_label_new(x->cb);
  constant_load(x, t, 0x1p-126f);
  EMIT(X86_MOV, reg(X86_ECX), x86_imm(0));
  EMIT(X86_UCOMISS, reg(r), reg(t));
  EMIT(X86_JAE, x86_rel(normal));
  constant_load(x, t, 0x1p23f);
  EMIT(X86_MULSS, reg(r), reg(t));
  EMIT(X86_MOV, reg(X86_ECX), x86_imm(-23));
  x86_label_bind(x->cb, normal);
  /* shifted = bits - SQRT_HALF_BITS; e = shifted >> 23 (in edx); f = m - 1 in r */
  EMIT(X86_MOVD, reg(X86_EAX), reg(r));
  EMIT(X86_SUB, reg(X86_EAX), x86_imm(MATHREF_SQRT_HALF_BITS));
  EMIT(X86_MOV, reg(X86_EDX), reg(X86_EAX));
  EMIT(X86_SAR, reg(X86_EDX), x86_imm(23));
  EMIT(X86_ADD, reg(X86_EDX), reg(X86_ECX));
  EMIT(X86_AND, reg(X86_EAX), x86_imm(0x7fffff));
  EMIT(X86_ADD, reg(X86_EAX), x86_imm(MATHREF_SQRT_HALF_BITS));
  EMIT(X86_MOVD, reg(r), reg(X86_EAX));
  constant_load(x, t, 1.0f);
  EMIT(X86_SUBSS, reg(r), reg(t));
  /* ef = (float)e to half 0; fmaf(ef, LN2_LO, 0) to half 1 */
  EMIT(X86_CVTSI2SS, reg(t), reg(X86_EDX));
  EMIT(X86_MOVSS, scratch_half(x, 0), reg(t));
  float ln2_lo = MATHREF_LN2_LO;
  uint32_t ln2_lo_bits;
  memcpy(&ln2_lo_bits, &ln2_lo, sizeof ln2_lo_bits);
  EMIT(X86_MOV, reg(X86_EAX), x86_imm(ln2_lo_bits));
  EMIT(X86_MOV, scratch_half(x, 1), reg(X86_EAX));
  if (!has_extra) EMIT(X86_XORPS, reg(u), reg(u));
  EMIT(X86_VFMADD231SS, reg(u), reg(t), scratch_half(x, 1));
  EMIT(X86_MOVSS, scratch_half(x, 1), reg(u));
  /* P(f) in u */
  constant_load(x, u, mathref_log_table[MATHREF_LOG_COUNT - 1]);
  for (int k = MATHREF_LOG_COUNT - 2; k >= 0; k--) {
    constant_load(x, t, mathref_log_table[k]);
    EMIT(X86_VFMADD213SS, reg(u), reg(r), reg(t));
  }
  /* tail = fmaf(f f, P, that); fmaf(ef, LN2_HI, f + tail) */
  EMIT(X86_MOVAPS, reg(t), reg(r));
  EMIT(X86_MULSS, reg(t), reg(r));
  EMIT(X86_VFMADD213SS, reg(t), reg(u), scratch_half(x, 1));
  EMIT(X86_ADDSS, reg(t), reg(r));
  constant_load(x, u, MATHREF_LN2_HI);
  EMIT(X86_MOVSS, reg(r), scratch_half(x, 0));
  EMIT(X86_VFMADD213SS, reg(u), reg(r), reg(t));
}

/* The ends log and log1p share, after the finite path: NaN gives x + x,
 * `itself` returns x (the input, in SCRATCH0), below the domain the quiet
 * NaN, at the pole -inf; each leaves the result where the finite path
 * does (SCRATCH2, xmm13) and meets it at done. */
static void emit_log_special_ends(KernelX86 *x, X86Label nan, X86Label itself, X86Label below, X86Label pole,
                                  X86Label done) {
  const X86Reg r = KX_XMM_SCRATCH0, u = KX_XMM_SCRATCH2;
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, nan);
  EMIT(X86_ADDSS, reg(r), reg(r));
  x86_label_bind(x->cb, itself);
  EMIT(X86_MOVAPS, reg(u), reg(r));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, below);
  bits_load(x, u, 0x7fc00000u);
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, pole);
  bits_load(x, u, 0xff800000u);
  x86_label_bind(x->cb, done);
}

/* mathref_logf of `input` in xmm13; its selects become branches: NaN gives
 * x + x, x < 0 the quiet NaN, ±0 -inf, +inf itself. */
static void emit_log(KernelX86 *x, X86Operand input) {
  const X86Reg r = KX_XMM_SCRATCH0, t = KX_XMM_SCRATCH1;
  X86Label nan = x86_label_new(x->cb), negative = x86_label_new(x->cb), zero = x86_label_new(x->cb);
  X86Label itself = x86_label_new(x->cb), done = x86_label_new(x->cb);
  EMIT(X86_MOVSS, reg(r), input);
  EMIT(X86_UCOMISS, reg(r), reg(r));
  EMIT(X86_JP, x86_rel(nan));
  EMIT(X86_XORPS, reg(t), reg(t));
  EMIT(X86_UCOMISS, reg(r), reg(t));
  EMIT(X86_JB, x86_rel(negative));
  EMIT(X86_JE, x86_rel(zero));
  bits_load(x, t, 0x7f800000u);
  EMIT(X86_UCOMISS, reg(r), reg(t));
  EMIT(X86_JE, x86_rel(itself));
  emit_log_finite(x, false);
  emit_log_special_ends(x, nan, itself, negative, zero, done);
}

/* mathref_log1pf of `input` in xmm13: log(u) + c with u = 1 + x and c
 * the part of x its rounding lost. Its selects become branches: NaN gives
 * x + x, x < -1 the quiet NaN, -1 -inf, +inf and |x| < 2^-24 x itself. */
static void emit_log1p(KernelX86 *x, X86Operand input) {
  const X86Reg r = KX_XMM_SCRATCH0, t = KX_XMM_SCRATCH1, u = KX_XMM_SCRATCH2;
  X86Label nan = x86_label_new(x->cb), negative = x86_label_new(x->cb), minus_one = x86_label_new(x->cb);
  X86Label itself = x86_label_new(x->cb), done = x86_label_new(x->cb);
  EMIT(X86_MOVSS, reg(r), input);
  EMIT(X86_UCOMISS, reg(r), reg(r));
  EMIT(X86_JP, x86_rel(nan));
  constant_load(x, t, -1.0f);
  EMIT(X86_UCOMISS, reg(r), reg(t));
  EMIT(X86_JB, x86_rel(negative));
  EMIT(X86_JE, x86_rel(minus_one));
  bits_load(x, t, 0x7f800000u);
  EMIT(X86_UCOMISS, reg(r), reg(t));
  EMIT(X86_JE, x86_rel(itself));
  bits_load(x, t, 0x7fffffffu);
  EMIT(X86_ANDPS, reg(t), reg(r));
  constant_load(x, u, 0x1p-24f);
  EMIT(X86_UCOMISS, reg(t), reg(u));
  EMIT(X86_JB, x86_rel(itself));
  /* u = 1 + x in t; c = (x - (u - 1)) / u in u (1 waits in half 0) */
  constant_load(x, t, 1.0f);
  EMIT(X86_MOVSS, scratch_half(x, 0), reg(t));
  EMIT(X86_ADDSS, reg(t), reg(r));
  EMIT(X86_MOVAPS, reg(u), reg(t));
  EMIT(X86_SUBSS, reg(u), scratch_half(x, 0));
  EMIT(X86_SUBSS, reg(r), reg(u));
  EMIT(X86_DIVSS, reg(r), reg(t));
  EMIT(X86_MOVAPS, reg(u), reg(r));
  EMIT(X86_MOVAPS, reg(r), reg(t));
  emit_log_finite(x, true);
  emit_log_special_ends(x, nan, itself, negative, minus_one, done);
}

/* mathref_expm1f of `input` in xmm13: 2 fmaf(h, q, h - 1/2) with
 * h = 2^(n-1) and q = e^r - 1; q itself for n = 0. Its selects become
 * branches: NaN gives x + x, |x| < 2^-25 x itself. */
static void emit_expm1(KernelX86 *x, X86Operand input) {
  const X86Reg r = KX_XMM_SCRATCH0, t = KX_XMM_SCRATCH1, u = KX_XMM_SCRATCH2;
  X86Label nan = x86_label_new(x->cb), itself = x86_label_new(x->cb), done = x86_label_new(x->cb);
  EMIT(X86_MOVSS, reg(r), input);
  EMIT(X86_UCOMISS, reg(r), reg(r));
  EMIT(X86_JP, x86_rel(nan));
  bits_load(x, t, 0x7fffffffu);
  EMIT(X86_ANDPS, reg(t), reg(r));
  constant_load(x, u, 0x1p-25f);
  EMIT(X86_UCOMISS, reg(t), reg(u));
  EMIT(X86_JB, x86_rel(itself));
  emit_exp_reduce(x, -20.0f, 89.0f);
  /* q = fmaf(r r, P(r), r) in u */
  constant_load(x, t, mathref_expm1_table[MATHREF_EXPM1_COUNT - 1]);
  for (int k = MATHREF_EXPM1_COUNT - 2; k >= 0; k--) {
    constant_load(x, u, mathref_expm1_table[k]);
    EMIT(X86_VFMADD213SS, reg(t), reg(r), reg(u));
  }
  EMIT(X86_MOVAPS, reg(u), reg(r));
  EMIT(X86_MULSS, reg(u), reg(r));
  EMIT(X86_VFMADD213SS, reg(u), reg(t), reg(r));
  EMIT(X86_CMP, scratch_half(x, 0), x86_imm(0));
  EMIT(X86_JE, x86_rel(done));
  /* h = 2^(n-1) in t; h - 1/2 in r (1/2 waits in half 1) */
  EMIT(X86_MOV, reg(X86_ECX), scratch_half(x, 0));
  EMIT(X86_SUB, reg(X86_ECX), x86_imm(1));
  pow2_load(x, t, X86_ECX);
  EMIT(X86_MOV, reg(X86_EAX), x86_imm(0x3f000000));
  EMIT(X86_MOV, scratch_half(x, 1), reg(X86_EAX));
  EMIT(X86_MOVAPS, reg(r), reg(t));
  EMIT(X86_SUBSS, reg(r), scratch_half(x, 1));
  EMIT(X86_VFMADD213SS, reg(u), reg(t), reg(r));
  constant_load(x, r, 2.0f);
  EMIT(X86_MULSS, reg(u), reg(r));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, nan);
  EMIT(X86_ADDSS, reg(r), reg(r));
  x86_label_bind(x->cb, itself);
  EMIT(X86_MOVAPS, reg(u), reg(r));
  x86_label_bind(x->cb, done);
}

bool kernel_x86_emit_math(KernelX86 *x, int i, X86Operand input, X86Reg *result) {
  const KernelOp *op = &x->k->ops[i];
  if (op->type != TYPE_F32 || (op->op != OP_EXPONENTIAL && op->op != OP_LOGISTIC && op->op != OP_TANH &&
                                  op->op != OP_LOG && op->op != OP_LOG_PLUS_ONE && op->op != OP_RSQRT &&
                                  op->op != OP_EXPONENTIAL_MINUS_ONE))
    return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: %s on %s (op %%%d) has no x86 code yet", x->k->name,
                        opcode_name(op->op), type_name(op->type), i);
  if (op->op == OP_RSQRT) {
    /* 1 / sqrtf(x): both correctly rounded, no FMA needed */
    constant_load(x, KX_XMM_SCRATCH2, 1.0f);
    EMIT(X86_SQRTSS, reg(KX_XMM_SCRATCH0), input);
    EMIT(X86_DIVSS, reg(KX_XMM_SCRATCH2), reg(KX_XMM_SCRATCH0));
    *result = KX_XMM_SCRATCH2;
    return true;
  }
  if (!x->cpu->fma)
    return status_error(x->st, STATUS_UNSUPPORTED,
                        "kernel %s: %s (op %%%d) needs FMA (vfmadd) to compute math_reference's bits; this ISA level "
                        "has none",
                        x->k->name, opcode_name(op->op), i);
  switch (op->op) {
  case OP_EXPONENTIAL:
    EMIT(X86_MOVSS, reg(KX_XMM_SCRATCH0), input);
    emit_exp_body(x);
    *result = KX_XMM_SCRATCH2;
    return true;
  case OP_LOGISTIC:
    emit_logistic(x, input);
    *result = KX_XMM_SCRATCH2;
    return true;
  case OP_TANH:
    emit_tanh(x, input);
    *result = KX_XMM_SCRATCH2;
    return true;
  case OP_LOG:
    emit_log(x, input);
    *result = KX_XMM_SCRATCH2;
    return true;
  case OP_LOG_PLUS_ONE:
    emit_log1p(x, input);
    *result = KX_XMM_SCRATCH2;
    return true;
  case OP_EXPONENTIAL_MINUS_ONE:
    emit_expm1(x, input);
    *result = KX_XMM_SCRATCH2;
    return true;
  default: return false; /* refused above */
  }
}
