/* Where each kernel value lives: its register class, its stack slot, and
 * the moves between its home (kernel_x86_internal.h's ValueHome: a
 * register, or a stack slot when spilled) and a scratch register, with the
 * canonical form an integer is re-extended to after an op. The bottom file
 * of the x86 kernel compiler: it calls nothing else of it. The allocator
 * (kernel_x86_regalloc.c) gives each value its home; every op's code
 * (kernel_x86_ops.c and its family files) moves values through these. */
#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }
static X86Reg gpr32(X86Reg r64) { return x86_gpr(X86_KIND_GPR32, x86_reg_number(r64)); }
static X86Reg gpr16(X86Reg r64) { return x86_gpr(X86_KIND_GPR16, x86_reg_number(r64)); }
static X86Reg gpr8(X86Reg r64) { return x86_gpr(X86_KIND_GPR8, x86_reg_number(r64)); }

ValueClass kernel_x86_value_class_of(ElementType t) {
  /* f16, bf16 and the minifloats as the f32 of their value (kernel_x86_narrow.c) */
  if (t == TYPE_F32 || t == TYPE_F64 || t == TYPE_F16 || t == TYPE_BF16 || type_is_minifloat(t)) return VALUE_XMM;
  /* Sub-byte integers (s4, u2, ...) take a byte each, extended from their width. */
  if (t == TYPE_PRED || type_is_integer(t)) return VALUE_GPR;
  return VALUE_NONE;
}

X86Operand kernel_x86_slot(int slot, int size) { return x86_mem(size, X86_RSP, 8 * slot); }

static int float_size(ElementType t) { return t == TYPE_F64 ? 8 : 4; }

/* A value as an operand: its register, or its stack slot. */
static X86Operand value_operand(const KernelX86 *x, int v) {
  const ValueHome *h = &x->homes[v];
  if (!h->spilled) return reg(h->reg);
  int size = h->value_class == VALUE_XMM ? float_size(x->k->ops[v].type) : 8;
  return kernel_x86_slot(x->value_slot + h->spill, size);
}

static void gpr_fetch(KernelX86 *x, X86Reg into, int v) { EMIT(X86_MOV, reg(into), value_operand(x, v)); }

static void gpr_define(KernelX86 *x, int v, X86Reg from) {
  const ValueHome *h = &x->homes[v];
  if (h->spilled) EMIT(X86_MOV, kernel_x86_slot(x->value_slot + h->spill, 8), reg(from));
  else EMIT(X86_MOV, reg(h->reg), reg(from));
}

static void xmm_fetch(KernelX86 *x, X86Reg into, int v) {
  const ValueHome *h = &x->homes[v];
  if (!h->spilled) EMIT(X86_MOVAPS, reg(into), reg(h->reg));
  else if (x->k->ops[v].type == TYPE_F64) EMIT(X86_MOVSD, reg(into), value_operand(x, v));
  else EMIT(X86_MOVSS, reg(into), value_operand(x, v));
}

static void xmm_define(KernelX86 *x, int v, X86Reg from) {
  const ValueHome *h = &x->homes[v];
  if (!h->spilled) EMIT(X86_MOVAPS, reg(h->reg), reg(from));
  else if (x->k->ops[v].type == TYPE_F64) EMIT(X86_MOVSD, value_operand(x, v), reg(from));
  else EMIT(X86_MOVSS, value_operand(x, v), reg(from));
}

/* Re-extends r from the width of t: the canonical form after an op. */
static void canonicalize(KernelX86 *x, X86Reg r, ElementType t) {
  switch (t) {
  case TYPE_S8: EMIT(X86_MOVSX, reg(r), reg(gpr8(r))); break;
  case TYPE_S16: EMIT(X86_MOVSX, reg(r), reg(gpr16(r))); break;
  case TYPE_S32: EMIT(X86_MOVSXD, reg(r), reg(gpr32(r))); break;
  case TYPE_U8: case TYPE_PRED: EMIT(X86_MOVZX, reg(gpr32(r)), reg(gpr8(r))); break;
  case TYPE_U16: EMIT(X86_MOVZX, reg(gpr32(r)), reg(gpr16(r))); break;
  case TYPE_U32: EMIT(X86_MOV, reg(gpr32(r)), reg(gpr32(r))); break;
  /* s4, u4, s2, u2: one byte per element, extended from their own width */
  case TYPE_S4: case TYPE_S2:
    EMIT(X86_SHL, reg(r), x86_imm(64 - type_bit_width(t)));
    EMIT(X86_SAR, reg(r), x86_imm(64 - type_bit_width(t)));
    break;
  case TYPE_U4: case TYPE_U2: EMIT(X86_AND, reg(r), x86_imm((1 << type_bit_width(t)) - 1)); break;
  default: break;
  }
}

/* The helpers above, for the other files of the kernel compiler. */
X86Operand kernel_x86_value_operand(const KernelX86 *x, int v) { return value_operand(x, v); }
void kernel_x86_gpr_fetch(KernelX86 *x, X86Reg into, int v) { gpr_fetch(x, into, v); }
void kernel_x86_gpr_define(KernelX86 *x, int v, X86Reg from) { gpr_define(x, v, from); }
void kernel_x86_xmm_fetch(KernelX86 *x, X86Reg into, int v) { xmm_fetch(x, into, v); }
void kernel_x86_xmm_define(KernelX86 *x, int v, X86Reg from) { xmm_define(x, v, from); }
void kernel_x86_canonicalize(KernelX86 *x, X86Reg r, ElementType t) { canonicalize(x, r, t); }
