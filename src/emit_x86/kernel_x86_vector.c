/* SIMD along the innermost dimension of a loop kernel.
 *
 * One vector iteration computes `lanes` consecutive points of the
 * innermost loop (4 f32 on SSE4.1, 8 on AVX2, 16 on AVX-512). Every value
 * is classified (LaneForm): integer values must be uniform across the
 * lanes, or the innermost index plus a uniform value; both are computed by
 * the ordinary scalar code for lane 0, which is exactly the address of the
 * first lane. f32 values are vectors. A load is a vector load when its
 * index along the buffer's most minor dimension (layout minor_to_major[0],
 * stride 1) is the innermost index plus a uniform value and every other
 * index is uniform, and a broadcast when every index is uniform; a store
 * must be contiguous. Anything else (gathers, per-lane integers, f32
 * compares and selects, ...) leaves the kernel scalar: correct first. The
 * points the vectors do not cover (inner % lanes) run through the scalar
 * code after the vector loop.
 *
 * Each lane runs the scalar code's IEEE operation, so the results are the
 * same bits as the scalar code's. */
#include <string.h>

#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }

static bool is_sse(const KernelX86 *x) { return x->cpu->level == CPU_LEVEL_SSE4; }

static X86Reg vreg(const KernelX86 *x, int n) {
  return x->cpu->level == CPU_LEVEL_AVX512 ? x86_zmm(n) : x->cpu->level == CPU_LEVEL_AVX2 ? x86_ymm(n) : x86_xmm(n);
}

/* ---- classification ---- */

static int minor_dim(const Shape *s) { return s->has_layout ? s->minor_to_major[0] : s->rank - 1; }

/* The indices args[first..first+rank) of buffer shape s: LANE_BROADCAST
 * when all are uniform, LANE_VECTOR when contiguous, -1 otherwise. */
static int access_form(const KernelX86 *x, const KernelOp *op, const Shape *s, int first) {
  bool uniform = true, contiguous = s->rank > 0;
  for (int d = 0; d < s->rank; d++) {
    int f = x->forms[op->args[first + d]];
    if (f != LANE_UNIFORM) uniform = false;
    if (d == minor_dim(s) ? f != LANE_INNER : f != LANE_UNIFORM) contiguous = false;
  }
  return uniform ? LANE_BROADCAST : contiguous ? LANE_VECTOR : -1;
}

static bool vector_f32_opcode(Opcode op) {
  switch (op) {
  case OP_ADD: case OP_SUBTRACT: case OP_MULTIPLY: case OP_DIVIDE: case OP_SQRT:
  case OP_NEGATE: case OP_ABS: case OP_MAXIMUM: case OP_MINIMUM:
    return true;
  default:
    return false;
  }
}

/* The form of op i, or -1 when it has no vector form. */
static int op_form(const KernelX86 *x, int i) {
  const Kernel *k = x->k;
  const KernelOp *op = &k->ops[i];
  ValueClass c = value_class_of(op->type);
  if (c == VALUE_XMM && op->type != TYPE_F32) return -1;
  switch (op->kop) {
  case KOP_INDEX: return op->dim == k->rank - 1 ? LANE_INNER : LANE_UNIFORM;
  case KOP_CONSTANT: return c == VALUE_XMM ? LANE_VECTOR : LANE_UNIFORM;
  case KOP_LOAD: {
    int f = access_form(x, op, &k->inputs[op->buffer].shape, 0);
    if (c == VALUE_XMM) return f;
    return f == LANE_BROADCAST ? LANE_UNIFORM : -1;
  }
  case KOP_STORE: {
    int value = x->forms[op->args[0]];
    bool vector_value = value == LANE_VECTOR || value == LANE_BROADCAST;
    return c == VALUE_XMM && vector_value && access_form(x, op, &k->outputs[op->buffer].shape, 1) == LANE_VECTOR
               ? LANE_VECTOR : -1;
  }
  case KOP_HLO: {
    if (c == VALUE_XMM) {
      for (int a = 0; a < op->arg_count; a++)
        if (k->ops[op->args[a]].type != TYPE_F32) return -1;
      return vector_f32_opcode(op->op) ? LANE_VECTOR : -1;
    }
    int inner = 0, uniform = 0;
    for (int a = 0; a < op->arg_count; a++) {
      int f = x->forms[op->args[a]];
      inner += f == LANE_INNER, uniform += f == LANE_UNIFORM;
    }
    if (uniform == op->arg_count) return LANE_UNIFORM;
    /* innermost index + uniform stays contiguous; nothing else does */
    bool shifted = op->op == OP_ADD && op->type == TYPE_S64 && inner == 1 && uniform == 1;
    return shifted ? LANE_INNER : -1;
  }
  default: return -1;
  }
}

int kernel_x86_vector_lanes(KernelX86 *x) {
  const Kernel *k = x->k;
  int lanes = x->cpu->level == CPU_LEVEL_AVX512 ? 16 : x->cpu->level == CPU_LEVEL_AVX2 ? 8 : 4;
  if (k->kind != KERNEL_LOOP || k->rank == 0 || k->dims[k->rank - 1] < lanes) return 0;
  for (int i = 0; i < k->op_count; i++) {
    int f = op_form(x, i);
    if (f < 0) return 0;
    x->forms[i] = (uint8_t)f;
  }
  return lanes;
}

/* ---- emission ---- */

static X86Operand vector_slot(const KernelX86 *x, int v) {
  return x86_mem(4 * x->lanes, X86_RSP, 8 * (x->vector_slot + 8 * v));
}

static void vector_move(KernelX86 *x, X86Operand to, X86Operand from) {
  EMIT(is_sse(x) ? X86_MOVUPS : X86_VMOVUPS, to, from);
}

static void vector_fetch(KernelX86 *x, int into, int v) {
  const ValueHome *h = &x->homes[v];
  vector_move(x, reg(vreg(x, into)), h->spilled ? vector_slot(x, v) : reg(vreg(x, x86_reg_number(h->reg))));
}

static void vector_define(KernelX86 *x, int v, int from) {
  const ValueHome *h = &x->homes[v];
  vector_move(x, h->spilled ? vector_slot(x, v) : reg(vreg(x, x86_reg_number(h->reg))), reg(vreg(x, from)));
}

/* dst = a OP b; SSE's two-operand form needs dst == a. */
static void vector_op(KernelX86 *x, X86Mnemonic sse, X86Mnemonic avx, int dst, int a, int b) {
  if (is_sse(x)) {
    if (dst != a) EMIT(X86_MOVAPS, reg(vreg(x, dst)), reg(vreg(x, a)));
    EMIT(sse, reg(vreg(x, dst)), reg(vreg(x, b)));
  } else {
    EMIT(avx, reg(vreg(x, dst)), reg(vreg(x, a)), reg(vreg(x, b)));
  }
}

/* Every lane of vector register n = the 32-bit pattern bits. */
static void vector_broadcast_bits(KernelX86 *x, int n, uint32_t bits) {
  X86Operand slot = kernel_x86_slot(x->scratch_slot, 4);
  EMIT(X86_MOV, slot, x86_imm(bits));
  if (is_sse(x)) {
    EMIT(X86_MOVSS, reg(x86_xmm(n)), slot);
    EMIT(X86_SHUFPS, reg(x86_xmm(n)), reg(x86_xmm(n)), x86_imm(0));
  } else {
    EMIT(X86_VBROADCASTSS, reg(vreg(x, n)), slot);
  }
}

enum { S0 = 15, S1 = 14, S2 = 13 };  /* the scratch vector registers */

/* Where lane n of mask register `mask` is all ones, dst takes src: the
 * and/andn/or blend, which every level has. */
static void vector_blend(KernelX86 *x, int dst, int src, int mask) {
  vector_op(x, X86_ANDPS, X86_VANDPS, src, src, mask);     /* src & m */
  vector_op(x, X86_ANDNPS, X86_VANDNPS, mask, mask, dst);  /* ~m & dst */
  vector_op(x, X86_ORPS, X86_VORPS, dst, mask, src);
}

/* Where lane n of v is NaN, S0 takes v's lane (clobbers S1, S2). */
static void vector_take_nan_lanes(KernelX86 *x, int v) {
  vector_fetch(x, S2, v);
  if (is_sse(x)) EMIT(X86_CMPPS, reg(vreg(x, S2)), reg(vreg(x, S2)), x86_imm(3));
  else if (x->cpu->level == CPU_LEVEL_AVX2)
    EMIT(X86_VCMPPS, reg(vreg(x, S2)), reg(vreg(x, S2)), reg(vreg(x, S2)), x86_imm(3));
  if (x->cpu->level == CPU_LEVEL_AVX512) {
    EMIT(X86_VCMPPS, reg(X86_K1), reg(vreg(x, S2)), reg(vreg(x, S2)), x86_imm(3));
    EMIT(X86_VMOVUPS, x86_merge_masked(reg(vreg(x, S0)), X86_K1), reg(vreg(x, S2)));
    return;
  }
  vector_fetch(x, S1, v);
  vector_blend(x, S0, S1, S2);
}

/* maximum / minimum with the scalar code's rule (kernel_x86_ops.c): maxps
 * with b first is right except in lanes where b is NaN and a is not. */
static void emit_vector_max_min(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool max = op->op == OP_MAXIMUM;
  vector_fetch(x, S0, op->args[1]);
  vector_fetch(x, S1, op->args[0]);
  vector_op(x, max ? X86_MAXPS : X86_MINPS, max ? X86_VMAXPS : X86_VMINPS, S0, S0, S1);
  vector_take_nan_lanes(x, op->args[1]);
  vector_take_nan_lanes(x, op->args[0]);
  vector_define(x, i, S0);
}

static bool emit_vector_memory(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool store = op->kop == KOP_STORE;
  const Shape *s = store ? &x->k->outputs[op->buffer].shape : &x->k->inputs[op->buffer].shape;
  X86Operand m;
  if (!kernel_x86_element_address(x, i, store ? x->k->input_count + op->buffer : op->buffer, s, store ? 1 : 0, &m))
    return false;
  if (store) {
    vector_fetch(x, S0, op->args[0]);
    m.mem.size = (uint16_t)(4 * x->lanes);
    vector_move(x, m, reg(vreg(x, S0)));
    return true;
  }
  if (x->forms[i] == LANE_BROADCAST && is_sse(x)) {
    EMIT(X86_MOVSS, reg(x86_xmm(S0)), m);
    EMIT(X86_SHUFPS, reg(x86_xmm(S0)), reg(x86_xmm(S0)), x86_imm(0));
  } else if (x->forms[i] == LANE_BROADCAST) {
    EMIT(X86_VBROADCASTSS, reg(vreg(x, S0)), m);
  } else {
    m.mem.size = (uint16_t)(4 * x->lanes);
    vector_move(x, reg(vreg(x, S0)), m);
  }
  vector_define(x, i, S0);
  return true;
}

bool kernel_x86_emit_vector_op(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  if (op->kop == KOP_LOAD || op->kop == KOP_STORE) return emit_vector_memory(x, i);
  if (op->kop == KOP_CONSTANT) {
    float f = (float)op->value.f;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    vector_broadcast_bits(x, S0, bits);
    vector_define(x, i, S0);
    return true;
  }
  switch (op->op) {
  case OP_ADD: case OP_SUBTRACT: case OP_MULTIPLY: case OP_DIVIDE: {
    static const X86Mnemonic sse[] = {X86_ADDPS, X86_SUBPS, X86_MULPS, X86_DIVPS};
    static const X86Mnemonic avx[] = {X86_VADDPS, X86_VSUBPS, X86_VMULPS, X86_VDIVPS};
    int n = op->op == OP_ADD ? 0 : op->op == OP_SUBTRACT ? 1 : op->op == OP_MULTIPLY ? 2 : 3;
    vector_fetch(x, S0, op->args[0]);
    vector_fetch(x, S1, op->args[1]);
    vector_op(x, sse[n], avx[n], S0, S0, S1);
    break;
  }
  case OP_SQRT:
    vector_fetch(x, S0, op->args[0]);
    EMIT(is_sse(x) ? X86_SQRTPS : X86_VSQRTPS, reg(vreg(x, S0)), reg(vreg(x, S0)));
    break;
  case OP_NEGATE: case OP_ABS:
    vector_broadcast_bits(x, S1, op->op == OP_NEGATE ? 0x80000000u : 0x7fffffffu);
    vector_fetch(x, S0, op->args[0]);
    if (op->op == OP_NEGATE) vector_op(x, X86_XORPS, X86_VXORPS, S0, S0, S1);
    else vector_op(x, X86_ANDPS, X86_VANDPS, S0, S0, S1);
    break;
  case OP_MAXIMUM: case OP_MINIMUM: emit_vector_max_min(x, i); return true;
  default:
    return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: op %%%d (%s) was classified as vector", x->k->name, i,
                        opcode_name(op->op));
  }
  vector_define(x, i, S0);
  return true;
}
