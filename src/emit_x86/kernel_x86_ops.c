/* The machine code of one kernel op, in scalar registers
 * (kernel_x86_emit_scalar_op; kernel_x86_emit_op in kernel_x86_vector.c
 * picks it or the op's vector form), and the listing note naming the HLO
 * instruction an op comes from (kernel_x86_note_origin).
 *
 * Integer and pred values live in 64-bit GPRs in a canonical form: the
 * value sign-extended (signed types) or zero-extended (unsigned, pred) from
 * its width, so that one 64-bit instruction followed by re-extension from
 * the width gives the wrapped result of every integer width, and 64-bit
 * compares order values of every width. f32 and f64 live in the low lane of
 * an xmm register, and so do f16, bf16 and the 8- and 4-bit floats, as the
 * f32 of their value, each op's result rounded to its type at once
 * (kernel_x86_narrow.c). Each op fetches its arguments (from a register or its
 * stack slot), computes into scratch registers, and moves the result to its
 * home (kernel_x86_regalloc.c).
 *
 * The semantics are the evaluator's (src/ir/eval), restated where the
 * instruction differs from them: maximum/minimum propagate NaN (maxss does
 * not), float-to-integer converts saturate and map NaN to 0 (cvttss2si
 * gives the "integer indefinite" value), integer division by zero gives -1
 * and remainder by zero the dividend (idiv traps). */
#include <string.h>

#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }

static bool unsupported(KernelX86 *x, int i, const char *why) {
  const KernelOp *op = &x->k->ops[i];
  const char *what = op->kop == KOP_HLO ? opcode_name(op->op) : "op";
  return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: %s on %s (op %%%d) has no x86 code yet%s%s", x->k->name,
                      what, type_name(op->type), i, why ? ": " : "", why ? why : "");
}

/* The value homes (kernel_x86_homes.c), by the short names this file uses. */
static X86Operand value_operand(const KernelX86 *x, int v) { return kernel_x86_value_operand(x, v); }
static void gpr_fetch(KernelX86 *x, X86Reg into, int v) { kernel_x86_gpr_fetch(x, into, v); }
static void gpr_define(KernelX86 *x, int v, X86Reg from) { kernel_x86_gpr_define(x, v, from); }
static void xmm_fetch(KernelX86 *x, X86Reg into, int v) { kernel_x86_xmm_fetch(x, into, v); }
static void xmm_define(KernelX86 *x, int v, X86Reg from) { kernel_x86_xmm_define(x, v, from); }
static void canonicalize(KernelX86 *x, X86Reg r, ElementType t) { kernel_x86_canonicalize(x, r, t); }

static bool type_is_unsigned_or_pred(ElementType t) { return t == TYPE_PRED || type_kind(t) == TYPE_KIND_UINT; }

/* ---- loads, stores, accumulators ---- */

/* Element strides of a buffer in its layout: minor_to_major[0] varies
 * fastest; a kernel buffer without a layout is row-major (unlike
 * shape_layout_strides, which reads minor_to_major whatever has_layout). */
void kernel_x86_layout_strides(const Shape *s, int64_t *stride) {
  int64_t n = 1;
  for (int j = 0; j < s->rank; j++) {
    int d = s->has_layout ? s->minor_to_major[j] : s->rank - 1 - j;
    stride[d] = n;
    n *= s->dims[d];
  }
}

/* Leaves in KX_SCRATCH_ADDRESS the buffer's base, in rax the element offset
 * of indices args[first..first+rank), and returns the memory operand.
 * Constant indices fold into the displacement. */
bool kernel_x86_element_address(KernelX86 *x, int i, int buffer, const Shape *s, int first, X86Operand *out) {
  return kernel_x86_element_address_without(x, i, buffer, s, first, -1, out);
}

bool kernel_x86_element_address_without(KernelX86 *x, int i, int buffer, const Shape *s, int first, int skip_dim,
                                        X86Operand *out) {
  const KernelOp *op = &x->k->ops[i];
  int64_t stride[AXLE_MAX_RANK], constant_offset = 0;
  int size = type_byte_size(s->type);
  kernel_x86_layout_strides(s, stride);
  EMIT(X86_MOV, reg(KX_SCRATCH_ADDRESS), x86_mem(8, KX_BUFFERS, 8 * buffer));
  EMIT(X86_XOR, reg(X86_EAX), reg(X86_EAX));
  for (int d = 0; d < s->rank; d++) {
    const KernelOp *index = &x->k->ops[op->args[first + d]];
    if (s->dims[d] == 1 || d == skip_dim) continue; /* the only valid index is 0 */
    if (index->kop == KOP_CONSTANT) {
      constant_offset += index->value.i * stride[d];
      continue;
    }
    gpr_fetch(x, X86_RCX, op->args[first + d]);
    if (stride[d] != 1) {
      if (stride[d] > INT32_MAX) return unsupported(x, i, "a buffer stride past 2^31 elements");
      EMIT(X86_IMUL, reg(X86_RCX), reg(X86_RCX), x86_imm(stride[d]));
    }
    EMIT(X86_ADD, reg(X86_RAX), reg(X86_RCX));
  }
  int64_t disp = constant_offset * size;
  if (disp > INT32_MAX || disp < INT32_MIN) return unsupported(x, i, "a constant offset past 2 GiB");
  *out = x86_mem_index(size, KX_SCRATCH_ADDRESS, X86_RAX, size, (int32_t)disp);
  return true;
}

static bool emit_load(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  const Shape *s = &x->k->inputs[op->buffer].shape;
  X86Operand m;
  if (!kernel_x86_element_address(x, i, op->buffer, s, 0, &m)) return false;
  ElementType t = s->type;
  if (kernel_x86_type_is_narrow(t)) {
    EMIT(X86_MOVZX, reg(X86_EAX), m);
    kernel_x86_emit_narrow_decode(x, t);
    xmm_define(x, i, KX_XMM_SCRATCH0);
    return true;
  }
  if (kernel_x86_value_class_of(t) == VALUE_XMM) {
    EMIT(t == TYPE_F64 ? X86_MOVSD : X86_MOVSS, reg(KX_XMM_SCRATCH0), m);
    xmm_define(x, i, KX_XMM_SCRATCH0);
    return true;
  }
  int size = type_byte_size(t);
  if (size == 8) EMIT(X86_MOV, reg(X86_RDX), m);
  else if (size == 4 && type_kind(t) == TYPE_KIND_SINT) EMIT(X86_MOVSXD, reg(X86_RDX), m);
  else if (size == 4) EMIT(X86_MOV, reg(X86_EDX), m);
  else if (type_kind(t) == TYPE_KIND_SINT) EMIT(X86_MOVSX, reg(X86_RDX), m);
  else EMIT(X86_MOVZX, reg(X86_EDX), m);
  if (type_bit_width(t) < 8) canonicalize(x, X86_RDX, t); /* only the low bits of the byte count */
  gpr_define(x, i, X86_RDX);
  return true;
}

static bool emit_store(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  const Shape *s = &x->k->outputs[op->buffer].shape;
  X86Operand m;
  ElementType t = s->type;
  if (kernel_x86_type_is_narrow(t)) {
    /* the bits first: the address takes rax, rcx and r11, not rdx */
    xmm_fetch(x, KX_XMM_SCRATCH0, op->args[0]);
    kernel_x86_emit_narrow_encode(x, t, false);
    if (!kernel_x86_element_address(x, i, x->k->input_count + op->buffer, s, 1, &m)) return false;
    EMIT(X86_MOV, m, reg(type_byte_size(t) == 2 ? X86_DX : X86_DL));
    return true;
  }
  if (!kernel_x86_element_address(x, i, x->k->input_count + op->buffer, s, 1, &m)) return false;
  if (kernel_x86_value_class_of(t) == VALUE_XMM) {
    xmm_fetch(x, KX_XMM_SCRATCH0, op->args[0]);
    EMIT(t == TYPE_F64 ? X86_MOVSD : X86_MOVSS, m, reg(KX_XMM_SCRATCH0));
    return true;
  }
  gpr_fetch(x, X86_RDX, op->args[0]);
  int size = type_byte_size(t);
  X86Reg r = size == 8 ? X86_RDX : size == 4 ? X86_EDX : size == 2 ? X86_DX : X86_DL;
  EMIT(X86_MOV, m, reg(r));
  return true;
}

static void emit_acc_read(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  if (kernel_x86_value_class_of(op->type) == VALUE_XMM) {
    EMIT(X86_MOVSD, reg(KX_XMM_SCRATCH0), kernel_x86_slot(x->acc_slot + op->acc, 8));
    xmm_define(x, i, KX_XMM_SCRATCH0);
  } else {
    EMIT(X86_MOV, reg(X86_RAX), kernel_x86_slot(x->acc_slot + op->acc, 8));
    gpr_define(x, i, X86_RAX);
  }
}

/* In REDUCE a write goes to the accumulator's next value: the reducer of a
 * variadic reduce reads every old value first (kernel_x86.c copies next
 * into the accumulator after the block). */
static void emit_acc_write(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  int slot = (op->block == KBLOCK_REDUCE ? x->acc_next_slot : x->acc_slot) + op->acc;
  if (kernel_x86_value_class_of(op->type) == VALUE_XMM) {
    xmm_fetch(x, KX_XMM_SCRATCH0, op->args[0]);
    EMIT(X86_MOVSD, kernel_x86_slot(slot, 8), reg(KX_XMM_SCRATCH0));
  } else {
    gpr_fetch(x, X86_RAX, op->args[0]);
    EMIT(X86_MOV, kernel_x86_slot(slot, 8), reg(X86_RAX));
  }
}

static void emit_constant(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  if (kernel_x86_value_class_of(op->type) == VALUE_XMM) {
    if (op->type == TYPE_F64) {
      int64_t bits;
      memcpy(&bits, &op->value.f, sizeof bits);
      EMIT(X86_MOV, reg(X86_RAX), x86_imm(bits));
      EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH0), reg(X86_RAX));
    } else {
      float f = kernel_x86_type_is_narrow(op->type) ? kernel_x86_narrow_value(op->type, op->value.f) : (float)op->value.f;
      uint32_t bits;
      memcpy(&bits, &f, sizeof bits);
      EMIT(X86_MOV, reg(X86_EAX), x86_imm(bits));
      EMIT(X86_MOVD, reg(KX_XMM_SCRATCH0), reg(X86_EAX));
    }
    xmm_define(x, i, KX_XMM_SCRATCH0);
    return;
  }
  EMIT(X86_MOV, reg(X86_RAX), x86_imm(op->value.i));
  canonicalize(x, X86_RAX, op->type);
  gpr_define(x, i, X86_RAX);
}

static void emit_index(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  const Kernel *k = x->k;
  bool innermost = op->kop == KOP_INDEX ? k->kind == KERNEL_LOOP && op->dim == k->rank - 1
                                        : op->dim == k->reduce_rank - 1;
  if (innermost) {
    gpr_define(x, i, KX_INNER);
    return;
  }
  int slot = (op->kop == KOP_INDEX ? x->index_slot : x->rindex_slot) + op->dim;
  EMIT(X86_MOV, reg(X86_RAX), kernel_x86_slot(slot, 8));
  gpr_define(x, i, X86_RAX);
}

/* ---- arithmetic ---- */

static bool emit_integer_divide(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool is_signed = !type_is_unsigned_or_pred(op->type), remainder = op->op == OP_REMAINDER;
  X86Label nonzero = x86_label_new(x->cb), normal = x86_label_new(x->cb), done = x86_label_new(x->cb);
  gpr_fetch(x, X86_RAX, op->args[0]);
  gpr_fetch(x, X86_RCX, op->args[1]);
  EMIT(X86_TEST, reg(X86_RCX), reg(X86_RCX));
  EMIT(X86_JNE, x86_rel(nonzero));
  if (!remainder) EMIT(X86_MOV, reg(X86_RAX), x86_imm(-1)); /* x / 0 = -1 (all ones), x % 0 = x */
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, nonzero);
  if (is_signed) { /* INT_MIN / -1 wraps to INT_MIN, INT_MIN % -1 is 0; idiv would trap */
    EMIT(X86_CMP, reg(X86_RCX), x86_imm(-1));
    EMIT(X86_JNE, x86_rel(normal));
    if (remainder) EMIT(X86_XOR, reg(X86_EAX), reg(X86_EAX));
    else EMIT(X86_NEG, reg(X86_RAX));
    EMIT(X86_JMP, x86_rel(done));
  }
  x86_label_bind(x->cb, normal);
  if (is_signed) {
    x86_emit0(x->cb, X86_CQO);
    EMIT(X86_IDIV, reg(X86_RCX));
  } else {
    EMIT(X86_XOR, reg(X86_EDX), reg(X86_EDX));
    EMIT(X86_DIV, reg(X86_RCX));
  }
  if (remainder) EMIT(X86_MOV, reg(X86_RAX), reg(X86_RDX));
  x86_label_bind(x->cb, done);
  canonicalize(x, X86_RAX, op->type);
  gpr_define(x, i, X86_RAX);
  return true;
}

static bool emit_hlo_integer(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  ElementType t = op->type;
  bool is_pred = t == TYPE_PRED, is_unsigned = type_is_unsigned_or_pred(t);
  X86Mnemonic m;
  switch (op->op) {
  case OP_AND: m = X86_AND; break;
  case OP_OR: m = X86_OR; break;
  case OP_XOR: m = X86_XOR; break;
  case OP_ADD: m = X86_ADD; break;
  case OP_SUBTRACT: m = X86_SUB; break;
  case OP_MULTIPLY: m = X86_IMUL; break;
  case OP_DIVIDE: case OP_REMAINDER:
    if (is_pred) return unsupported(x, i, NULL);
    return emit_integer_divide(x, i);
  case OP_MAXIMUM: case OP_MINIMUM: {
    /* maximum: a < b ? b : a; minimum: b < a ? b : a. */
    gpr_fetch(x, X86_RAX, op->args[0]);
    gpr_fetch(x, X86_RCX, op->args[1]);
    EMIT(X86_CMP, reg(X86_RAX), reg(X86_RCX));
    X86Cond cc = op->op == OP_MAXIMUM ? (is_unsigned ? X86_CC_B : X86_CC_L) : (is_unsigned ? X86_CC_A : X86_CC_G);
    EMIT(x86_cmovcc(cc), reg(X86_RAX), reg(X86_RCX));
    gpr_define(x, i, X86_RAX);
    return true;
  }
  case OP_CLAMP: {
    /* clamp(lo, x, hi): t = x < lo ? lo : x, then t < hi ? t : hi. */
    if (is_pred) return unsupported(x, i, NULL);
    gpr_fetch(x, X86_RAX, op->args[1]);
    gpr_fetch(x, X86_RCX, op->args[0]);
    EMIT(X86_CMP, reg(X86_RAX), reg(X86_RCX));
    EMIT(x86_cmovcc(is_unsigned ? X86_CC_B : X86_CC_L), reg(X86_RAX), reg(X86_RCX));
    gpr_fetch(x, X86_RCX, op->args[2]);
    EMIT(X86_CMP, reg(X86_RAX), reg(X86_RCX));
    EMIT(x86_cmovcc(is_unsigned ? X86_CC_AE : X86_CC_GE), reg(X86_RAX), reg(X86_RCX));
    gpr_define(x, i, X86_RAX);
    return true;
  }
  case OP_SIGN:
    /* signed: (a > 0) - (a < 0); unsigned: a != 0 */
    if (is_pred) return unsupported(x, i, NULL);
    gpr_fetch(x, X86_RCX, op->args[0]);
    EMIT(X86_XOR, reg(X86_EAX), reg(X86_EAX));
    EMIT(X86_XOR, reg(X86_EDX), reg(X86_EDX));
    EMIT(X86_TEST, reg(X86_RCX), reg(X86_RCX));
    EMIT(is_unsigned ? X86_SETNE : X86_SETG, reg(X86_AL));
    if (!is_unsigned) EMIT(X86_SETL, reg(X86_DL));
    EMIT(X86_SUB, reg(X86_RAX), reg(X86_RDX));
    canonicalize(x, X86_RAX, t);
    gpr_define(x, i, X86_RAX);
    return true;
  case OP_NEGATE: case OP_NOT: case OP_ABS:
    gpr_fetch(x, X86_RAX, op->args[0]);
    if (op->op == OP_NOT && is_pred) EMIT(X86_XOR, reg(X86_EAX), x86_imm(1));
    else if (op->op == OP_NOT) EMIT(X86_NOT, reg(X86_RAX));
    else if (is_pred) return unsupported(x, i, NULL);
    else if (op->op == OP_NEGATE) EMIT(X86_NEG, reg(X86_RAX));
    else if (!is_unsigned) {
      EMIT(X86_MOV, reg(X86_RCX), reg(X86_RAX));
      EMIT(X86_NEG, reg(X86_RCX));
      EMIT(X86_TEST, reg(X86_RAX), reg(X86_RAX));
      EMIT(X86_CMOVS, reg(X86_RAX), reg(X86_RCX));
    }
    canonicalize(x, X86_RAX, t);
    gpr_define(x, i, X86_RAX);
    return true;
  default:
    if (kernel_x86_integer_handles(op->op)) return kernel_x86_emit_integer(x, i);
    return unsupported(x, i, NULL);
  }
  if (is_pred && m == X86_IMUL) m = X86_AND; /* the product of two bools */
  if (is_pred && m != X86_AND && m != X86_OR && m != X86_XOR) return unsupported(x, i, NULL);
  gpr_fetch(x, X86_RAX, op->args[0]);
  EMIT(m, reg(X86_RAX), value_operand(x, op->args[1]));
  canonicalize(x, X86_RAX, t);
  gpr_define(x, i, X86_RAX);
  return true;
}

typedef struct FloatForms {
  Opcode op;
  X86Mnemonic f32, f64;
} FloatForms;

static const FloatForms float_binary_forms[] = {
    {OP_ADD, X86_ADDSS, X86_ADDSD}, {OP_SUBTRACT, X86_SUBSS, X86_SUBSD},
    {OP_MULTIPLY, X86_MULSS, X86_MULSD}, {OP_DIVIDE, X86_DIVSS, X86_DIVSD},
};

/* maximum(a, b) = isnan(a) ? a : isnan(b) ? b : a < b ? b : a, and minimum
 * with b < a. maxss d, s gives d > s ? d : s, and s when either is NaN, so
 * with d = b and s = a it is right except for a NaN b, patched after. */
static void emit_float_max_min(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool f64 = op->type == TYPE_F64;
  X86Mnemonic m = op->op == OP_MAXIMUM ? (f64 ? X86_MAXSD : X86_MAXSS) : (f64 ? X86_MINSD : X86_MINSS);
  X86Mnemonic ucomi = f64 ? X86_UCOMISD : X86_UCOMISS;
  X86Label done = x86_label_new(x->cb);
  xmm_fetch(x, KX_XMM_SCRATCH0, op->args[1]);
  xmm_fetch(x, KX_XMM_SCRATCH1, op->args[0]);
  EMIT(m, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(ucomi, reg(KX_XMM_SCRATCH1), reg(KX_XMM_SCRATCH1));
  EMIT(X86_JP, x86_rel(done));
  xmm_fetch(x, KX_XMM_SCRATCH2, op->args[1]);
  EMIT(ucomi, reg(KX_XMM_SCRATCH2), reg(KX_XMM_SCRATCH2));
  EMIT(X86_JNP, x86_rel(done));
  EMIT(X86_MOVAPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH2));
  x86_label_bind(x->cb, done);
  xmm_define(x, i, KX_XMM_SCRATCH0);
}

/* clamp(lo, x, hi) as the evaluator's clamp_pick: the first NaN of lo, x,
 * hi in that order; else t = x < lo ? lo : x, then t < hi ? t : hi. */
static void emit_float_clamp(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  X86Mnemonic ucomi = op->type == TYPE_F64 ? X86_UCOMISD : X86_UCOMISS;
  X86Label done = x86_label_new(x->cb), at_least_lo = x86_label_new(x->cb);
  static const int nan_order[] = {0, 1, 2};
  for (int n = 0; n < 3; n++) {
    xmm_fetch(x, KX_XMM_SCRATCH0, op->args[nan_order[n]]);
    EMIT(ucomi, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
    EMIT(X86_JP, x86_rel(done));
  }
  xmm_fetch(x, KX_XMM_SCRATCH0, op->args[1]);
  xmm_fetch(x, KX_XMM_SCRATCH1, op->args[0]);
  EMIT(ucomi, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_JAE, x86_rel(at_least_lo)); /* x >= lo (no NaN left: CF is "below") */
  EMIT(X86_MOVAPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  x86_label_bind(x->cb, at_least_lo);
  xmm_fetch(x, KX_XMM_SCRATCH1, op->args[2]);
  EMIT(ucomi, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_JB, x86_rel(done));
  EMIT(X86_MOVAPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  x86_label_bind(x->cb, done);
  xmm_define(x, i, KX_XMM_SCRATCH0);
}

/* sign(x): x itself for NaN and ±0, else 1 with x's sign bit. */
static void emit_float_sign(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool f64 = op->type == TYPE_F64;
  X86Mnemonic ucomi = f64 ? X86_UCOMISD : X86_UCOMISS;
  X86Label done = x86_label_new(x->cb);
  xmm_fetch(x, KX_XMM_SCRATCH0, op->args[0]);
  EMIT(ucomi, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
  EMIT(X86_JP, x86_rel(done));
  EMIT(X86_XORPS, reg(KX_XMM_SCRATCH1), reg(KX_XMM_SCRATCH1));
  EMIT(ucomi, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_JE, x86_rel(done));
  EMIT(X86_MOV, reg(X86_RAX), x86_imm(f64 ? INT64_MIN : 0x80000000ll));
  EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH1), reg(X86_RAX));
  EMIT(X86_ANDPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_MOV, reg(X86_RAX), x86_imm(f64 ? 0x3ff0000000000000ll : 0x3f800000ll));
  EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH1), reg(X86_RAX));
  EMIT(X86_ORPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  x86_label_bind(x->cb, done);
  xmm_define(x, i, KX_XMM_SCRATCH0);
}

/* round-nearest-afz (C's round): t = x truncated; |x - t| is exact, and
 * from 1/2 up t steps one away from zero. NaN and ±inf come out of every
 * path unchanged (inf - inf is NaN, which steps to inf + 1 = inf), and
 * -0.4 keeps its sign as -0. */
static void emit_float_round_half_away(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool f64 = op->type == TYPE_F64;
  X86Label done = x86_label_new(x->cb);
  xmm_fetch(x, KX_XMM_SCRATCH0, op->args[0]);
  EMIT(f64 ? X86_ROUNDSD : X86_ROUNDSS, reg(KX_XMM_SCRATCH1), reg(KX_XMM_SCRATCH0), x86_imm(11));
  EMIT(f64 ? X86_MOVSD : X86_MOVSS, reg(KX_XMM_SCRATCH2), reg(KX_XMM_SCRATCH0));
  EMIT(f64 ? X86_SUBSD : X86_SUBSS, reg(KX_XMM_SCRATCH2), reg(KX_XMM_SCRATCH1));
  EMIT(X86_MOVQ, reg(X86_RAX), reg(KX_XMM_SCRATCH2));
  if (!f64) EMIT(X86_SHL, reg(X86_RAX), x86_imm(32)); /* the f32 bits on top, as an f64's are */
  EMIT(X86_SHL, reg(X86_RAX), x86_imm(1));         /* |x - t|, its sign shifted out */
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(f64 ? (int64_t)(0x3fe0000000000000ull << 1) : (int64_t)(0x3f000000ull << 33)));
  EMIT(X86_CMP, reg(X86_RAX), reg(X86_RCX));
  EMIT(X86_JB, x86_rel(done));
  EMIT(X86_MOVQ, reg(X86_RAX), reg(KX_XMM_SCRATCH0)); /* 1 with x's sign */
  if (!f64) EMIT(X86_SHL, reg(X86_RAX), x86_imm(32));
  EMIT(X86_SHR, reg(X86_RAX), x86_imm(63));
  EMIT(X86_SHL, reg(X86_RAX), x86_imm(f64 ? 63 : 31));
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(f64 ? 0x3ff0000000000000ll : 0x3f800000ll));
  EMIT(X86_OR, reg(X86_RAX), reg(X86_RCX));
  EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH2), reg(X86_RAX));
  EMIT(f64 ? X86_ADDSD : X86_ADDSS, reg(KX_XMM_SCRATCH1), reg(KX_XMM_SCRATCH2));
  x86_label_bind(x->cb, done);
  xmm_define(x, i, KX_XMM_SCRATCH1);
}

static bool emit_hlo_float(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool f64 = op->type == TYPE_F64;
  for (size_t f = 0; f < sizeof float_binary_forms / sizeof float_binary_forms[0]; f++) {
    if (float_binary_forms[f].op != op->op) continue;
    xmm_fetch(x, KX_XMM_SCRATCH0, op->args[0]);
    EMIT(f64 ? float_binary_forms[f].f64 : float_binary_forms[f].f32, reg(KX_XMM_SCRATCH0),
         value_operand(x, op->args[1]));
    xmm_define(x, i, KX_XMM_SCRATCH0);
    return true;
  }
  switch (op->op) {
  case OP_MAXIMUM: case OP_MINIMUM: emit_float_max_min(x, i); return true;
  case OP_CLAMP: emit_float_clamp(x, i); return true;
  case OP_SIGN: emit_float_sign(x, i); return true;
  case OP_NEGATE: case OP_ABS: {
    /* The sign bit flipped or cleared: exact for NaN, ±0 and ±inf. */
    int64_t mask = op->op == OP_NEGATE ? (f64 ? INT64_MIN : 0x80000000ll) : (f64 ? INT64_MAX : 0x7fffffffll);
    xmm_fetch(x, KX_XMM_SCRATCH0, op->args[0]);
    EMIT(X86_MOV, reg(X86_RAX), x86_imm(mask));
    EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH1), reg(X86_RAX));
    EMIT(op->op == OP_NEGATE ? X86_XORPS : X86_ANDPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
    xmm_define(x, i, KX_XMM_SCRATCH0);
    return true;
  }
  case OP_SQRT:
    EMIT(f64 ? X86_SQRTSD : X86_SQRTSS, reg(KX_XMM_SCRATCH0), value_operand(x, op->args[0]));
    xmm_define(x, i, KX_XMM_SCRATCH0);
    return true;
  case OP_ROUND_NEAREST_AFZ: emit_float_round_half_away(x, i); return true;
  case OP_REMAINDER: kernel_x86_emit_float_remainder(x, i); return true;
  case OP_FLOOR: case OP_CEIL: case OP_ROUND_NEAREST_EVEN: {
    /* roundss's immediate: bit 3 suppresses the inexact exception, bits
     * 0-1 pick the rounding (0 nearest even, 1 down, 2 up). */
    int mode = op->op == OP_FLOOR ? 9 : op->op == OP_CEIL ? 10 : 8;
    EMIT(f64 ? X86_ROUNDSD : X86_ROUNDSS, reg(KX_XMM_SCRATCH0), value_operand(x, op->args[0]), x86_imm(mode));
    xmm_define(x, i, KX_XMM_SCRATCH0);
    return true;
  }
  default:
    if (kernel_x86_is_math(op->op)) {
      X86Reg result;
      bool ok = op->arg_count == 1
                    ? kernel_x86_emit_math(x, i, value_operand(x, op->args[0]), &result)
                    : kernel_x86_emit_math_binary(x, i, value_operand(x, op->args[0]),
                                                  value_operand(x, op->args[1]), &result);
      if (ok) xmm_define(x, i, result);
      return ok;
    }
    if (opcode_form(op->op) == FORM_UNARY || op->op == OP_POWER || op->op == OP_ATAN2 || op->op == OP_REMAINDER)
      return unsupported(x, i, "its polynomial approximation is not written yet (src/ir/kernel/math_reference)");
    return unsupported(x, i, NULL);
  }
}

/* The ops of HLO opcodes: those whose types differ from their operands'
 * (kernel_x86_convert.c), float arithmetic, integer arithmetic. */
static bool emit_hlo(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  if (op->op == OP_COMPARE || op->op == OP_SELECT || op->op == OP_CONVERT || op->op == OP_BITCAST_CONVERT ||
      op->op == OP_REDUCE_PRECISION || op->op == OP_STOCHASTIC_CONVERT || op->op == OP_IS_FINITE)
    return kernel_x86_emit_hlo_mixed(x, i);
  if (kernel_x86_value_class_of(op->type) == VALUE_XMM) return emit_hlo_float(x, i);
  return emit_hlo_integer(x, i);
}

bool kernel_x86_emit_scalar_op(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  switch (op->kop) {
  case KOP_INDEX: case KOP_RINDEX: emit_index(x, i); return true;
  case KOP_CONSTANT: emit_constant(x, i); return true;
  case KOP_LOAD: return emit_load(x, i);
  case KOP_STORE: return emit_store(x, i);
  case KOP_ACC_READ: emit_acc_read(x, i); return true;
  case KOP_ACC_WRITE: emit_acc_write(x, i); return true;
  case KOP_HLO:
    if (!emit_hlo(x, i)) return false;
    /* f16, bf16 and the minifloats: each result rounded to its type */
    if (kernel_x86_narrow_rounds_after(op)) {
      xmm_fetch(x, KX_XMM_SCRATCH0, i);
      kernel_x86_emit_narrow_round(x, op->type);
      xmm_define(x, i, KX_XMM_SCRATCH0);
    }
    return true;
  }
  return unsupported(x, i, NULL);
}

/* One listing note per change of HLO instruction: the reader sees which
 * instruction (and which JAX line, from its metadata) each block implements. */
void kernel_x86_note_origin(KernelX86 *x, int i, const Instruction **last) {
  const KernelOp *op = &x->k->ops[i];
  if (!x->cb->listing_enabled || !op->origin || op->origin == *last) return;
  *last = op->origin;
  StrBuf sb = {0};
  instruction_describe(&sb, op->origin);
  x86_listing_note(x->cb, "op %%%d: %s", i, sb.data ? sb.data : op->origin->name);
  strbuf_free(&sb);
}
