/* The integer ops beyond plain arithmetic: the three shifts, mulhi, power,
 * popcnt and count-leading-zeros, in scalar registers.
 *
 * Values arrive in the canonical form of kernel_x86_ops.c (sign-extended
 * for signed types, zero-extended for unsigned ones); each op first puts
 * its operands in the form its instruction needs (the bits of the element
 * width zero-extended, or sign-extended), computes in 64 bits, and leaves
 * the result canonical again. The rules restated here are the evaluator's
 * (src/ir/eval/eval_elementwise.c). */
#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }
static X86Reg gpr32(X86Reg r64) { return x86_gpr(X86_KIND_GPR32, x86_reg_number(r64)); }
static X86Reg gpr16(X86Reg r64) { return x86_gpr(X86_KIND_GPR16, x86_reg_number(r64)); }
static X86Reg gpr8(X86Reg r64) { return x86_gpr(X86_KIND_GPR8, x86_reg_number(r64)); }

bool kernel_x86_integer_handles(Opcode op) {
  switch (op) {
  case OP_SHIFT_LEFT: case OP_SHIFT_RIGHT_LOGICAL: case OP_SHIFT_RIGHT_ARITHMETIC:
  case OP_MULHI: case OP_POWER: case OP_POPCNT: case OP_CLZ:
    return true;
  default:
    return false;
  }
}

/* r's low `bits` bits, zero-extended to 64. */
static void zero_extend(KernelX86 *x, X86Reg r, int bits) {
  if (bits == 8) EMIT(X86_MOVZX, reg(gpr32(r)), reg(gpr8(r)));
  else if (bits == 16) EMIT(X86_MOVZX, reg(gpr32(r)), reg(gpr16(r)));
  else if (bits == 32) EMIT(X86_MOV, reg(gpr32(r)), reg(gpr32(r)));
  else if (bits < 8) EMIT(X86_AND, reg(r), x86_imm((1 << bits) - 1));
}

/* r's low `bits` bits, sign-extended to 64. */
static void sign_extend(KernelX86 *x, X86Reg r, int bits) {
  if (bits == 8) EMIT(X86_MOVSX, reg(r), reg(gpr8(r)));
  else if (bits == 16) EMIT(X86_MOVSX, reg(r), reg(gpr16(r)));
  else if (bits == 32) EMIT(X86_MOVSXD, reg(r), reg(gpr32(r)));
  else if (bits < 8) {
    EMIT(X86_SHL, reg(r), x86_imm(64 - bits));
    EMIT(X86_SAR, reg(r), x86_imm(64 - bits));
  }
}

/* The count is read as unsigned at the element width, so a negative one is
 * huge; a count at or past the width shifts every bit out: 0 for the left
 * and logical shifts, the sign fill for the arithmetic one, which reads
 * its left operand as signed even for unsigned types. x86 would take the
 * count modulo 64 instead. */
static void emit_shift(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  int bits = type_bit_width(op->type);
  kernel_x86_gpr_fetch(x, X86_RAX, op->args[0]);
  kernel_x86_gpr_fetch(x, X86_RCX, op->args[1]);
  zero_extend(x, X86_RCX, bits);
  if (op->op == OP_SHIFT_RIGHT_ARITHMETIC) {
    sign_extend(x, X86_RAX, bits);
    EMIT(X86_MOV, reg(X86_EDX), x86_imm(63));
    EMIT(X86_CMP, reg(X86_RCX), x86_imm(bits));
    EMIT(X86_CMOVAE, reg(X86_RCX), reg(X86_RDX));
    EMIT(X86_SAR, reg(X86_RAX), reg(X86_CL));
  } else {
    if (op->op == OP_SHIFT_RIGHT_LOGICAL) zero_extend(x, X86_RAX, bits);
    EMIT(op->op == OP_SHIFT_LEFT ? X86_SHL : X86_SHR, reg(X86_RAX), reg(X86_CL));
    /* after the shift: a shift by 0 leaves the flags, one by more sets them */
    EMIT(X86_XOR, reg(X86_EDX), reg(X86_EDX));
    EMIT(X86_CMP, reg(X86_RCX), x86_imm(bits));
    EMIT(X86_CMOVAE, reg(X86_RAX), reg(X86_RDX));
  }
  kernel_x86_canonicalize(x, X86_RAX, op->type);
  kernel_x86_gpr_define(x, i, X86_RAX);
}

/* The high half of the double-width product. Below 64 bits the canonical
 * operands' product is exact in 64 bits (signed or unsigned as the type);
 * at 64 bits mul/imul leave the high half in rdx. */
static void emit_mulhi(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  int bits = type_bit_width(op->type);
  bool is_signed = type_kind(op->type) == TYPE_KIND_SINT;
  kernel_x86_gpr_fetch(x, X86_RAX, op->args[0]);
  kernel_x86_gpr_fetch(x, X86_RCX, op->args[1]);
  if (bits == 64) {
    EMIT(is_signed ? X86_IMUL : X86_MUL, reg(X86_RCX));
    EMIT(X86_MOV, reg(X86_RAX), reg(X86_RDX));
  } else {
    EMIT(X86_IMUL, reg(X86_RAX), reg(X86_RCX));
    EMIT(is_signed ? X86_SAR : X86_SHR, reg(X86_RAX), x86_imm(bits));
  }
  kernel_x86_canonicalize(x, X86_RAX, op->type);
  kernel_x86_gpr_define(x, i, X86_RAX);
}

/* Exponentiation by squaring, wrapping at the width: 1^y = x^0 = 1, and a
 * negative exponent gives 0 for every other base (XLA's rule). */
static void emit_power(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool is_signed = type_kind(op->type) == TYPE_KIND_SINT;
  X86Label loop = x86_label_new(x->cb), skip = x86_label_new(x->cb), done = x86_label_new(x->cb);
  kernel_x86_gpr_fetch(x, X86_RAX, op->args[0]);
  kernel_x86_gpr_fetch(x, X86_RCX, op->args[1]);
  EMIT(X86_MOV, reg(X86_EDX), x86_imm(1));
  EMIT(X86_CMP, reg(X86_RAX), x86_imm(1));
  EMIT(X86_JE, x86_rel(done));
  EMIT(X86_TEST, reg(X86_RCX), reg(X86_RCX));
  EMIT(X86_JE, x86_rel(done));
  if (is_signed) {
    EMIT(X86_XOR, reg(X86_EDX), reg(X86_EDX));
    EMIT(X86_TEST, reg(X86_RCX), reg(X86_RCX));
    EMIT(X86_JS, x86_rel(done));
    EMIT(X86_MOV, reg(X86_EDX), x86_imm(1));
  }
  x86_label_bind(x->cb, loop);
  EMIT(X86_TEST, reg(X86_CL), x86_imm(1));
  EMIT(X86_JE, x86_rel(skip));
  EMIT(X86_IMUL, reg(X86_RDX), reg(X86_RAX));
  x86_label_bind(x->cb, skip);
  EMIT(X86_IMUL, reg(X86_RAX), reg(X86_RAX));
  EMIT(X86_SHR, reg(X86_RCX), x86_imm(1));
  EMIT(X86_JNE, x86_rel(loop));
  x86_label_bind(x->cb, done);
  kernel_x86_canonicalize(x, X86_RDX, op->type);
  kernel_x86_gpr_define(x, i, X86_RDX);
}

/* rax = the number of set bits of rax. popcnt is x86-64-v2, so the sse4
 * level (which promises only SSE4.1) sums bit fields in parallel:
 * pairs, nibbles, bytes, then one multiply adds the bytes into the top one. */
static void emit_popcount_rax(KernelX86 *x) {
  if (x->cpu->level >= CPU_LEVEL_AVX2) {
    EMIT(X86_POPCNT, reg(X86_RAX), reg(X86_RAX));
    return;
  }
  static const int64_t masks[] = {0x5555555555555555ll, 0x3333333333333333ll, 0x0f0f0f0f0f0f0f0fll};
  /* v -= (v >> 1) & 0x55..; */
  EMIT(X86_MOV, reg(X86_RCX), reg(X86_RAX));
  EMIT(X86_SHR, reg(X86_RCX), x86_imm(1));
  EMIT(X86_MOV, reg(X86_RDX), x86_imm(masks[0]));
  EMIT(X86_AND, reg(X86_RCX), reg(X86_RDX));
  EMIT(X86_SUB, reg(X86_RAX), reg(X86_RCX));
  /* v = (v & 0x33..) + ((v >> 2) & 0x33..); */
  EMIT(X86_MOV, reg(X86_RDX), x86_imm(masks[1]));
  EMIT(X86_MOV, reg(X86_RCX), reg(X86_RAX));
  EMIT(X86_SHR, reg(X86_RCX), x86_imm(2));
  EMIT(X86_AND, reg(X86_RAX), reg(X86_RDX));
  EMIT(X86_AND, reg(X86_RCX), reg(X86_RDX));
  EMIT(X86_ADD, reg(X86_RAX), reg(X86_RCX));
  /* v = (v + (v >> 4)) & 0x0f..; */
  EMIT(X86_MOV, reg(X86_RCX), reg(X86_RAX));
  EMIT(X86_SHR, reg(X86_RCX), x86_imm(4));
  EMIT(X86_ADD, reg(X86_RAX), reg(X86_RCX));
  EMIT(X86_MOV, reg(X86_RDX), x86_imm(masks[2]));
  EMIT(X86_AND, reg(X86_RAX), reg(X86_RDX));
  /* the byte sums add up in the top byte of v * 0x0101..01 */
  EMIT(X86_MOV, reg(X86_RDX), x86_imm(0x0101010101010101ll));
  EMIT(X86_IMUL, reg(X86_RAX), reg(X86_RDX));
  EMIT(X86_SHR, reg(X86_RAX), x86_imm(56));
}

/* popcnt counts the element's own bits; clz counts from the top of the
 * element width, and gives the width for 0. Without lzcnt, the bits below
 * the highest set one are smeared to ones, and the zeros left above it
 * within the width are counted. */
static void emit_bit_count(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  int bits = type_bit_width(op->type);
  kernel_x86_gpr_fetch(x, X86_RAX, op->args[0]);
  zero_extend(x, X86_RAX, bits);
  if (op->op == OP_POPCNT) {
    emit_popcount_rax(x);
  } else if (x->cpu->level >= CPU_LEVEL_AVX2) {
    EMIT(X86_LZCNT, reg(X86_RAX), reg(X86_RAX));
    if (bits < 64) EMIT(X86_SUB, reg(X86_RAX), x86_imm(64 - bits));
  } else {
    for (int s = 1; s < 64; s *= 2) {
      EMIT(X86_MOV, reg(X86_RCX), reg(X86_RAX));
      EMIT(X86_SHR, reg(X86_RCX), x86_imm(s));
      EMIT(X86_OR, reg(X86_RAX), reg(X86_RCX));
    }
    EMIT(X86_NOT, reg(X86_RAX));
    zero_extend(x, X86_RAX, bits);
    emit_popcount_rax(x);
  }
  kernel_x86_canonicalize(x, X86_RAX, op->type);
  kernel_x86_gpr_define(x, i, X86_RAX);
}

bool kernel_x86_emit_integer(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool is_pred = op->type == TYPE_PRED;
  switch (op->op) {
  case OP_SHIFT_LEFT: case OP_SHIFT_RIGHT_LOGICAL: case OP_SHIFT_RIGHT_ARITHMETIC:
    if (is_pred) break;
    emit_shift(x, i);
    return true;
  case OP_MULHI:
    if (is_pred) break;
    emit_mulhi(x, i);
    return true;
  case OP_POWER: emit_power(x, i); return true;
  case OP_POPCNT: case OP_CLZ:
    if (is_pred) break;
    emit_bit_count(x, i);
    return true;
  default: break;
  }
  return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: %s on %s (op %%%d) has no x86 code yet", x->k->name,
                      opcode_name(op->op), type_name(op->type), i);
}
