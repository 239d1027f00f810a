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
 * index is uniform, and a broadcast when every index is uniform; any other
 * f32 load is gathered lane by lane (emit_vector_gather). A store must be
 * contiguous. Anything else (scatters, per-lane integer or pred values,
 * f32 compares and selects, ...) leaves the kernel scalar: correct first. The
 * points the vectors do not cover (inner % lanes) run through the scalar
 * code after the vector loop, or on AVX-512 through the SIMD body once more
 * with its contiguous loads and stores masked (k2) to the lanes left. The
 * phases of a row kernel are classified one by one
 * (kernel_x86_in_vector_loop): other accumulators' values, fixed during a
 * phase, are broadcast. The classification is kernel_x86_vector_forms.c's
 * (the file below this one, which the policy and the allocator ask too);
 * this file emits the code.
 *
 * Each lane runs the scalar code's IEEE operation, so the results are the
 * same bits as the scalar code's. The math functions run in every lane
 * at once (kernel_x86_math_lanes.c) or lane by lane through the scalar
 * code (kernel_x86_emit_math_per_lane), mathref's bits either way. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/kernel_x86_internal.h"
#include "emit_x86/kernel_x86_math_builder.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }

static bool is_sse(const KernelX86 *x) { return x->cpu->level == CPU_LEVEL_SSE4; }

static X86Reg vreg(const KernelX86 *x, int n) {
  return x->cpu->level == CPU_LEVEL_AVX512 ? x86_zmm(n) : x->cpu->level == CPU_LEVEL_AVX2 ? x86_ymm(n) : x86_xmm(n);
}

/* ---- emission ---- */

/* The bytes of one lane, and of a whole vector register. */
static int lane_bytes(const KernelX86 *x) { return x->vector_f64 ? 8 : 4; }
static int vector_bytes(const KernelX86 *x) { return lane_bytes(x) * x->lanes; }

/* The packed-single or packed-double form of an instruction. */
static X86Mnemonic ps_or_pd(const KernelX86 *x, X86Mnemonic ps, X86Mnemonic pd) { return x->vector_f64 ? pd : ps; }

static X86Operand vector_slot(const KernelX86 *x, int v) {
  return x86_mem(vector_bytes(x), X86_RSP, 8 * (x->vector_slot + 8 * x->homes[v].spill));
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

/* An argument's register: its home, or scratch after a load from its slot. */
static int vector_source(KernelX86 *x, int v, int scratch) {
  const ValueHome *h = &x->homes[v];
  if (!h->spilled) return x86_reg_number(h->reg);
  vector_fetch(x, scratch, v);
  return scratch;
}

/* Where op v computes its result: its home register (never an argument's,
 * kernel_x86_regalloc.c), or S0 (15) when it lives in its slot... */
static int vector_target(const KernelX86 *x, int v) {
  const ValueHome *h = &x->homes[v];
  return h->spilled ? 15 : x86_reg_number(h->reg);
}

/* ...which vector_finish then stores. */
static void vector_finish(KernelX86 *x, int v, int r) {
  if (x->homes[v].spilled) vector_define(x, v, r);
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

/* Every lane of vector register n = the 32-bit pattern bits (f64 lanes:
 * the 64-bit pattern, avx2 and up). */
static void vector_broadcast_lane(KernelX86 *x, int n, uint64_t bits) {
  if (x->vector_f64) {
    X86Operand slot = kernel_x86_slot(x->scratch_slot, 8);
    EMIT(X86_MOV, reg(X86_RAX), x86_imm((int64_t)bits));
    EMIT(X86_MOV, slot, reg(X86_RAX));
    EMIT(X86_VBROADCASTSD, reg(vreg(x, n)), slot);
    return;
  }
  X86Operand slot = kernel_x86_slot(x->scratch_slot, 4);
  EMIT(X86_MOV, slot, x86_imm((uint32_t)bits));
  if (is_sse(x)) {
    EMIT(X86_MOVSS, reg(x86_xmm(n)), slot);
    EMIT(X86_SHUFPS, reg(x86_xmm(n)), reg(x86_xmm(n)), x86_imm(0));
  } else {
    EMIT(X86_VBROADCASTSS, reg(vreg(x, n)), slot);
  }
}

static void vector_broadcast_bits(KernelX86 *x, int n, uint32_t bits) { vector_broadcast_lane(x, n, bits); }

enum { S0 = 15, S1 = 14, S2 = 13 };  /* the scratch vector registers */

/* Where lane n of mask register `mask` is all ones, dst takes src: the
 * and/andn/or blend, which every level has. */
static void vector_blend(KernelX86 *x, int dst, int src, int mask) {
  vector_op(x, X86_ANDPS, X86_VANDPS, src, src, mask);     /* src & m */
  vector_op(x, X86_ANDNPS, X86_VANDNPS, mask, mask, dst);  /* ~m & dst */
  vector_op(x, X86_ORPS, X86_VORPS, dst, mask, src);
}

/* Where a lane of source is NaN, S0 takes that lane (clobbers S1, S2). */
static void take_nan_lanes(KernelX86 *x, X86Operand source) {
  vector_move(x, reg(vreg(x, S2)), source);
  if (is_sse(x)) EMIT(X86_CMPPS, reg(vreg(x, S2)), reg(vreg(x, S2)), x86_imm(3));
  else if (x->cpu->level == CPU_LEVEL_AVX2)
    EMIT(ps_or_pd(x, X86_VCMPPS, X86_VCMPPD), reg(vreg(x, S2)), reg(vreg(x, S2)), reg(vreg(x, S2)), x86_imm(3));
  if (x->cpu->level == CPU_LEVEL_AVX512) {
    EMIT(ps_or_pd(x, X86_VCMPPS, X86_VCMPPD), reg(X86_K1), reg(vreg(x, S2)), reg(vreg(x, S2)), x86_imm(3));
    EMIT(ps_or_pd(x, X86_VMOVUPS, X86_VMOVUPD), x86_merge_masked(reg(vreg(x, S0)), X86_K1), reg(vreg(x, S2)));
    return;
  }
  vector_move(x, reg(vreg(x, S1)), source);
  vector_blend(x, S0, S1, S2);
}

static void vector_take_nan_lanes(KernelX86 *x, int v) {
  const ValueHome *h = &x->homes[v];
  take_nan_lanes(x, h->spilled ? vector_slot(x, v) : reg(vreg(x, x86_reg_number(h->reg))));
}

/* maximum / minimum with the scalar code's rule (kernel_x86_ops.c): maxps
 * with b first is right except in lanes where b is NaN and a is not. */
static void emit_vector_max_min(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool max = op->op == OP_MAXIMUM;
  vector_fetch(x, S0, op->args[1]);
  vector_fetch(x, S1, op->args[0]);
  vector_op(x, max ? X86_MAXPS : X86_MINPS,
            max ? ps_or_pd(x, X86_VMAXPS, X86_VMAXPD) : ps_or_pd(x, X86_VMINPS, X86_VMINPD), S0, S0, S1);
  vector_take_nan_lanes(x, op->args[1]);
  vector_take_nan_lanes(x, op->args[0]);
  vector_define(x, i, S0);
}

/* A load with no vector form: for each lane l, r14 steps to the lane's
 * point, the marked integer ops run again in scalar code, and the element
 * goes to lane l of a stack buffer; then one vector load. The marked ops
 * run once more at lane 0 after, for the contiguous accesses that follow. */
static bool emit_vector_gather(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  const Shape *s = &x->k->inputs[op->buffer].shape;
  bool *marked = mem_calloc((size_t)i + 1, sizeof *marked);
  kernel_x86_mark_index_slice(x, i, marked);
  int lanes = x->lanes;
  bool ok = true;
  for (int l = 0; ok && l <= lanes; l++) {
    if (l == lanes) EMIT(X86_SUB, reg(KX_INNER), x86_imm(lanes - 1));
    else if (l > 0) EMIT(X86_INC, reg(KX_INNER));
    for (int v = 0; ok && v < i; v++)
      if (marked[v]) ok = kernel_x86_emit_op(x, v);
    if (l == lanes || !ok) break;
    X86Operand m;
    ok = kernel_x86_element_address(x, i, op->buffer, s, 0, &m);
    X86Mnemonic move = ps_or_pd(x, X86_MOVSS, X86_MOVSD);
    EMIT(move, reg(x86_xmm(S0)), m);
    EMIT(move, x86_mem(lane_bytes(x), X86_RSP, 8 * x->partial_slot + lane_bytes(x) * l), reg(x86_xmm(S0)));
  }
  mem_free(marked);
  if (!ok) return false;
  int d = vector_target(x, i);
  vector_move(x, reg(vreg(x, d)), x86_mem(vector_bytes(x), X86_RSP, 8 * x->partial_slot));
  vector_finish(x, i, d);
  return true;
}

/* The column strategy's load or store whose lanes' elements lie `stride`
 * bytes apart (kernel_x86_columns.c): lane 0's address from the scalar
 * index code, then each lane's f32 through edx and the frame's partial
 * slot, which one vector move reads or fills. */
static bool emit_column_strided(KernelX86 *x, int i, int64_t stride) {
  const KernelOp *op = &x->k->ops[i];
  bool store = op->kop == KOP_STORE;
  const Shape *s = store ? &x->k->outputs[op->buffer].shape : &x->k->inputs[op->buffer].shape;
  X86Operand m, lanes = x86_mem(vector_bytes(x), X86_RSP, 8 * x->partial_slot);
  if (store) vector_move(x, lanes, reg(vreg(x, vector_source(x, op->args[0], S0))));
  if (!kernel_x86_element_address(x, i, store ? x->k->input_count + op->buffer : op->buffer, s, store ? 1 : 0, &m))
    return false;
  for (int l = 0; l < x->lanes; l++) {
    X86Operand element = m, lane = x86_mem(4, X86_RSP, 8 * x->partial_slot + 4 * l);
    int64_t disp = m.mem.disp + l * stride;
    if (disp > INT32_MAX || disp < INT32_MIN)
      return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: a strided lane past 2 GiB", x->k->name);
    element.mem.disp = (int32_t)disp;
    EMIT(X86_MOV, reg(X86_EDX), store ? lane : element);
    EMIT(X86_MOV, store ? element : lane, reg(X86_EDX));
  }
  if (store) return true;
  int d = vector_target(x, i);
  vector_move(x, reg(vreg(x, d)), lanes);
  vector_finish(x, i, d);
  return true;
}

/* An f32 compare as a mask: all ones in the lanes where it holds. The
 * cmpps predicates are false on NaN except NEQ_UQ, like the scalar code;
 * GT and GE swap their operands into LT and LE. */
static void emit_vector_compare(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool swap = op->direction == CMP_GT || op->direction == CMP_GE;
  int predicate = op->direction == CMP_EQ ? 0 : op->direction == CMP_NE ? 4
                  : op->direction == CMP_LT || op->direction == CMP_GT ? 1 : 2;
  int a = vector_source(x, op->args[swap ? 1 : 0], S0), b = vector_source(x, op->args[swap ? 0 : 1], S1);
  int d = vector_target(x, i);
  if (x->cpu->level == CPU_LEVEL_AVX512) {
    EMIT(ps_or_pd(x, X86_VCMPPS, X86_VCMPPD), reg(X86_K1), reg(vreg(x, a)), reg(vreg(x, b)), x86_imm(predicate));
    vector_broadcast_lane(x, S2, ~0ull);
    EMIT(ps_or_pd(x, X86_VMOVUPS, X86_VMOVUPD), x86_zero_masked(reg(vreg(x, d)), X86_K1), reg(vreg(x, S2)));
  } else if (is_sse(x)) {
    if (d != a) EMIT(X86_MOVAPS, reg(x86_xmm(d)), reg(x86_xmm(a)));
    EMIT(X86_CMPPS, reg(x86_xmm(d)), reg(x86_xmm(b)), x86_imm(predicate));
  } else {
    EMIT(ps_or_pd(x, X86_VCMPPS, X86_VCMPPD), reg(vreg(x, d)), reg(vreg(x, a)), reg(vreg(x, b)), x86_imm(predicate));
  }
  vector_finish(x, i, d);
}

/* Op i's value from memory m: a broadcast of one f32, or a whole vector. */
static bool vector_load(KernelX86 *x, int i, X86Operand m) {
  int d = vector_target(x, i);
  if (x->forms[i] == LANE_BROADCAST && is_sse(x)) {
    EMIT(X86_MOVSS, reg(x86_xmm(d)), m);
    EMIT(X86_SHUFPS, reg(x86_xmm(d)), reg(x86_xmm(d)), x86_imm(0));
  } else if (x->forms[i] == LANE_BROADCAST) {
    EMIT(ps_or_pd(x, X86_VBROADCASTSS, X86_VBROADCASTSD), reg(vreg(x, d)), m);
  } else {
    /* a masked tail reads only the lanes inside the row: zeros elsewhere */
    m.mem.size = (uint16_t)vector_bytes(x);
    vector_move(x, x->tail_masked ? x86_zero_masked(reg(vreg(x, d)), X86_K2) : reg(vreg(x, d)), m);
  }
  vector_finish(x, i, d);
  return true;
}


static bool emit_vector_memory(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool store = op->kop == KOP_STORE;
  const Shape *s = store ? &x->k->outputs[op->buffer].shape : &x->k->inputs[op->buffer].shape;
  X86Operand m;
  if (x->address_slots[i] >= 0) {
    /* r14 is the inner reduced index in the phase's SIMD loop, the inner
     * loop index in a loop kernel's */
    int size = type_byte_size(s->type);
    m = x86_mem_index(size, kernel_x86_row_pointer(x, i), KX_INNER, size, x->inner_offset);
  } else if (!kernel_x86_element_address(x, i, store ? x->k->input_count + op->buffer : op->buffer, s,
                                         store ? 1 : 0, &m)) {
    return false;
  }
  if (store) {
    int value = vector_source(x, op->args[0], S0);
    if (s->type == TYPE_F16) { /* already rounded: exact; immediate 0 is nearest even */
      m.mem.size = (uint16_t)(2 * x->lanes);
      EMIT(X86_VCVTPS2PH, m, reg(vreg(x, value)), x86_imm(0));
      return true;
    }
    m.mem.size = (uint16_t)vector_bytes(x);
    if (x->streaming) { /* an aligned row: kernel_x86_emit_vector_row */
      EMIT(is_sse(x) ? X86_MOVNTPS : X86_VMOVNTPS, m, reg(vreg(x, value)));
      return true;
    }
    vector_move(x, x->tail_masked ? x86_merge_masked(m, X86_K2) : m, reg(vreg(x, value)));
    return true;
  }
  if (s->type == TYPE_F16) {
    int d = vector_target(x, i);
    m.mem.size = (uint16_t)(2 * x->lanes);
    EMIT(X86_VCVTPH2PS, reg(vreg(x, d)), m);
    vector_finish(x, i, d);
    return true;
  }
  return vector_load(x, i, m);
}

/* An f16 op's f32 results rounded to f16 and widened back, lane by lane. */
static void emit_vector_half_round(KernelX86 *x, int i) {
  X86Reg half = x->cpu->level == CPU_LEVEL_AVX512 ? x86_ymm(S1) : x86_xmm(S1);
  vector_fetch(x, S0, i);
  EMIT(X86_VCVTPS2PH, reg(half), reg(vreg(x, S0)), x86_imm(0));
  EMIT(X86_VCVTPH2PS, reg(vreg(x, S0)), reg(half));
  vector_define(x, i, S0);
}

static bool emit_vector_op_value(KernelX86 *x, int i);

bool kernel_x86_emit_vector_op(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  int64_t stride = x->columns ? kernel_x86_column_stride(x, i) : 0;
  if (stride) return emit_column_strided(x, i, stride);
  if (op->kop == KOP_LOAD && x->forms[i] == LANE_GATHER) return emit_vector_gather(x, i);
  if (op->kop == KOP_LOAD || op->kop == KOP_STORE) return emit_vector_memory(x, i);
  if (op->kop == KOP_ACC_READ && x->columns) {
    X86Operand acc = kernel_x86_column_acc(x, op->acc, false);
    if (acc.kind == X86_OPERAND_MEM) return vector_load(x, i, acc);
    int d = vector_target(x, i);
    vector_move(x, reg(vreg(x, d)), acc);
    vector_finish(x, i, d);
    return true;
  }
  if (op->kop == KOP_ACC_READ) return vector_load(x, i, kernel_x86_slot(x->acc_slot + op->acc, 4));
  if (op->kop == KOP_ACC_WRITE) { /* the column strategy's: REDUCE writes the next value */
    int value = vector_source(x, op->args[0], S0);
    vector_move(x, kernel_x86_column_acc(x, op->acc, op->block == KBLOCK_REDUCE), reg(vreg(x, value)));
    return true;
  }
  if (!emit_vector_op_value(x, i)) return false;
  if (op->kop == KOP_HLO && op->type == TYPE_F16) emit_vector_half_round(x, i);
  return true;
}

/* Constants and HLO ops. */
static bool emit_vector_op_value(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  if (op->kop == KOP_CONSTANT) {
    float f = op->type == TYPE_F16 ? kernel_x86_narrow_value(op->type, op->value.f) : (float)op->value.f;
    uint32_t bits;
    uint64_t wide_bits;
    memcpy(&bits, &f, sizeof bits);
    memcpy(&wide_bits, &op->value.f, sizeof wide_bits);
    int d = vector_target(x, i);
    vector_broadcast_lane(x, d, x->vector_f64 ? wide_bits : bits);
    vector_finish(x, i, d);
    return true;
  }
  switch (op->op) {
  case OP_ADD: case OP_SUBTRACT: case OP_MULTIPLY: case OP_DIVIDE: {
    static const X86Mnemonic sse[] = {X86_ADDPS, X86_SUBPS, X86_MULPS, X86_DIVPS};
    static const X86Mnemonic avx[] = {X86_VADDPS, X86_VSUBPS, X86_VMULPS, X86_VDIVPS};
    static const X86Mnemonic avx_pd[] = {X86_VADDPD, X86_VSUBPD, X86_VMULPD, X86_VDIVPD};
    int n = op->op == OP_ADD ? 0 : op->op == OP_SUBTRACT ? 1 : op->op == OP_MULTIPLY ? 2 : 3;
    int a = vector_source(x, op->args[0], S0), b = vector_source(x, op->args[1], S1), d = vector_target(x, i);
    vector_op(x, sse[n], x->vector_f64 ? avx_pd[n] : avx[n], d, a, b);
    vector_finish(x, i, d);
    return true;
  }
  case OP_SQRT: {
    int a = vector_source(x, op->args[0], S0), d = vector_target(x, i);
    EMIT(is_sse(x) ? X86_SQRTPS : ps_or_pd(x, X86_VSQRTPS, X86_VSQRTPD), reg(vreg(x, d)), reg(vreg(x, a)));
    vector_finish(x, i, d);
    return true;
  }
  case OP_RSQRT: { /* 1 / sqrt(x), both rounded, as the scalar code */
    int a = vector_source(x, op->args[0], S0), d = vector_target(x, i);
    EMIT(is_sse(x) ? X86_SQRTPS : ps_or_pd(x, X86_VSQRTPS, X86_VSQRTPD), reg(vreg(x, S1)), reg(vreg(x, a)));
    if (x->vector_f64) vector_broadcast_lane(x, S2, 0x3ff0000000000000ull);
    else vector_broadcast_bits(x, S2, 0x3f800000u);
    vector_op(x, X86_DIVPS, ps_or_pd(x, X86_VDIVPS, X86_VDIVPD), d, S2, S1);
    vector_finish(x, i, d);
    return true;
  }
  case OP_NEGATE: case OP_ABS: {
    if (x->vector_f64) vector_broadcast_lane(x, S1, op->op == OP_NEGATE ? 1ull << 63 : ~0ull >> 1);
    else vector_broadcast_bits(x, S1, op->op == OP_NEGATE ? 0x80000000u : 0x7fffffffu);
    int a = vector_source(x, op->args[0], S0), d = vector_target(x, i);
    if (op->op == OP_NEGATE) vector_op(x, X86_XORPS, X86_VXORPS, d, a, S1);
    else vector_op(x, X86_ANDPS, X86_VANDPS, d, a, S1);
    vector_finish(x, i, d);
    return true;
  }
  case OP_MAXIMUM: case OP_MINIMUM: emit_vector_max_min(x, i); return true;
  case OP_COMPARE: emit_vector_compare(x, i); return true;
  case OP_CONVERT: /* f16 <-> f32: the same f32 values; an f16 result is rounded after */
    vector_fetch(x, S0, op->args[0]);
    vector_define(x, i, S0);
    return true;
  case OP_SELECT: {
    /* S0 = on_false, then the lanes where the mask is set take on_true */
    vector_fetch(x, S0, op->args[2]);
    vector_fetch(x, S1, op->args[1]);
    vector_fetch(x, S2, op->args[0]);
    vector_blend(x, S0, S1, S2);
    vector_define(x, i, S0);
    return true;
  }
  default:
    if (kernel_x86_is_vector_math(x, op->op)) {
      int a = vector_source(x, op->args[0], S0), b = op->arg_count == 2 ? vector_source(x, op->args[1], S1) : a;
      int d = vector_target(x, i);
      if (!kernel_x86_emit_vector_math(x, i, reg(vreg(x, a)), reg(vreg(x, b)), d)) return false;
      vector_finish(x, i, d);
      return true;
    }
    if (kernel_x86_is_lane_math(x, op->op)) {
      int a = vector_source(x, op->args[0], S0), b = op->arg_count == 2 ? vector_source(x, op->args[1], S1) : a;
      int d = vector_target(x, i);
      if (!kernel_x86_emit_math_per_lane(x, i, reg(vreg(x, a)), reg(vreg(x, b)), reg(vreg(x, d)))) return false;
      vector_finish(x, i, d);
      return true;
    }
    return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: op %%%d (%s) was classified as vector", x->k->name, i,
                        opcode_name(op->op));
  }
}

/* Every op of a kernel is emitted through here, by the driver
 * (kernel_x86.c) and by the SIMD loops below: in the SIMD loop being
 * emitted (x->lanes set) an op the classification made vector
 * (kernel_x86_op_is_vector) takes its vector form, any other op its
 * scalar code (kernel_x86_ops.c). */
bool kernel_x86_emit_op(KernelX86 *x, int i) {
  if (x->lanes && kernel_x86_op_is_vector(x, i)) return kernel_x86_emit_vector_op(x, i);
  return kernel_x86_emit_scalar_op(x, i);
}

/* ---- sums (and max, min) along the innermost reduced dimension ----
 *
 * REDUCE_PARTIALS (16) partial results, whatever the ISA: partial l takes
 * the elements l, l + 16, l + 32, ... of each innermost run (4 xmm, 2 ymm or
 * 1 zmm accumulators starting at the reducer's identity). After the run the
 * accumulator takes them in lane order, acc = (((acc + p0) + p1) ... +
 * p15), and then the last n % 16 elements one by one. The order depends
 * on the shape only, so the result is the same for every thread count and
 * every ISA level; it is not the evaluator's sequential order, so float
 * sums differ from it by rounding. */

/* The loop's leading run of invariant ops (kernel_order_blocks puts them
 * first), computed once before the loop: their values outlive it
 * (kernel_x86_regalloc.c). Returns the first op after the run; x->lanes
 * is set. */
static int emit_invariant_prefix(KernelX86 *x, bool *ok) {
  const Kernel *k = x->k;
  const Instruction *last = NULL;
  bool noted = false;
  *ok = true;
  for (int i = 0; i < k->op_count; i++) {
    if (!kernel_x86_in_vector_loop(x, &k->ops[i])) continue;
    if (!k->ops[i].invariant) return i;
    if (x->dead[i]) continue;
    if (!noted) x86_listing_note(x->cb, "loop-invariant ops, once per row");
    noted = true;
    kernel_x86_note_origin(x, i, &last);
    if (!kernel_x86_emit_op(x, i)) return *ok = false, k->op_count;
  }
  return k->op_count;
}

/* The invariant run, then the row pointers (which may read its values). */
static int emit_loop_prologue(KernelX86 *x, bool *ok) {
  int body = emit_invariant_prefix(x, ok);
  if (*ok) *ok = kernel_x86_emit_row_pointers(x);
  if (*ok) kernel_x86_load_pointer_registers(x);
  return body;
}

/* The f32 element at r14 of row access i's row: [row pointer + 4 r14],
 * as wide as the loop's vectors. */
static X86Operand row_element(KernelX86 *x, int i) {
  return x86_mem_index(vector_bytes(x), kernel_x86_row_pointer(x, i), KX_INNER, 4, 0);
}

/* Where phase x->phase stores, or the ROW phase reads back, the value
 * the ROW phase reuses (schedule.phases[].reuse): the row buffer in the
 * frame, or the output row. */
static X86Operand reuse_element(KernelX86 *x) {
  if (!kernel_x86_reuse_in_frame(x)) return row_element(x, kernel_x86_row_store(x->k));
  EMIT(X86_MOV, reg(KX_SCRATCH_ADDRESS), kernel_x86_slot(x->row_buffer_pointer_slot, 8));
  return x86_mem_index(vector_bytes(x), KX_SCRATCH_ADDRESS, KX_INNER, 4, 0);
}

/* One loop over the row from r14 = 0, the ROW phase's ops from `body`. */
static bool emit_row_loop(KernelX86 *x, int body) {
  const Kernel *k = x->k;
  EMIT(X86_XOR, reg(X86_R14D), reg(X86_R14D));
  X86Label head = x86_label_new(x->cb);
  x86_label_bind(x->cb, head);
  const Instruction *last = NULL;
  int reused = x->schedule.phases[x->phase].reuse_as;
  for (int i = body; i < k->op_count; i++) {
    if (!kernel_x86_in_vector_loop(x, &k->ops[i]) || x->dead[i] || kernel_x86_index_only_addresses_rows(x, i)) continue;
    kernel_x86_note_origin(x, i, &last);
    if (i == reused) {
      x86_listing_note(x->cb, "%%%d read back from the %s, where phase %d stored it", i,
                       kernel_x86_reuse_in_frame(x) ? "row buffer" : "output", x->phase - 1);
      if (!vector_load(x, i, reuse_element(x))) return false;
    } else if (!kernel_x86_emit_op(x, i)) {
      return false;
    }
  }
  EMIT(X86_ADD, reg(KX_INNER), x86_imm(x->lanes));
  EMIT(X86_CMP, reg(KX_INNER), x86_imm(k->reduce_dims[k->reduce_rank - 1] - x->lanes));
  EMIT(X86_JLE, x86_rel(head));
  return true;
}

/* With stream_stores, a row whose output address is aligned to the
 * vector (as non-temporal stores need) runs a loop storing past the
 * caches; another row runs the plain loop. */
bool kernel_x86_emit_vector_row(KernelX86 *x, int lanes) {
  x->lanes = lanes;
  bool ok;
  int body = emit_loop_prologue(x, &ok);
  if (!ok) return x->lanes = 0, false;
  X86Label plain = x86_label_new(x->cb), done = x86_label_new(x->cb);
  if (x->schedule.phases[x->phase].stream_stores) {
    EMIT(X86_MOV, reg(KX_SCRATCH_ADDRESS), kernel_x86_row_pointer_slot(x, kernel_x86_row_store(x->k)));
    EMIT(X86_TEST, reg(X86_R11D), x86_imm(vector_bytes(x) - 1));
    EMIT(X86_JNE, x86_rel(plain));
    x86_listing_note(x->cb, "row vector loop, %d f32 lanes, non-temporal stores (an aligned row)", lanes);
    x->streaming = true;
    ok = emit_row_loop(x, body);
    x->streaming = false;
    if (!ok) return x->lanes = 0, false;
    EMIT(X86_JMP, x86_rel(done));
  }
  x86_label_bind(x->cb, plain);
  x86_listing_note(x->cb, "row vector loop, %d f32 lanes", lanes);
  ok = emit_row_loop(x, body);
  x86_label_bind(x->cb, done);
  x->lanes = 0;
  kernel_x86_forget_pointer_registers(x);
  if (!ok) return false;
  if (x->cpu->level >= CPU_LEVEL_AVX2) x86_emit0(x->cb, X86_VZEROUPPER);
  return true;
}

static X86Operand partial_operand(const KernelX86 *x, int first_lane, int size) {
  return x86_mem(size, X86_RSP, 8 * x->partial_slot + 4 * first_lane);
}

/* Where the loop keeps partial vector u, so that the sum's chain runs
 * through no store: at avx512 (one vector of 16) a register past the
 * vector math's (zmm28); below, one of the registers the kernel's values
 * leave free during the loop (x->loop_vector_registers, the u-th from
 * the bottom), or its stack slot when too few are. */
enum { PARTIAL_REGISTER = MATH_HOME_FIRST + MATH_HOME_COUNT };
static X86Operand partial_home(const KernelX86 *x, int u, int lanes) {
  if (x->cpu->level == CPU_LEVEL_AVX512) return reg(x86_zmm(PARTIAL_REGISTER + u));
  for (int r = 0, n = 0; r < KX_VECTOR_VALUE_REGISTERS; r++)
    if (x->loop_vector_registers & 1u << r && n++ == u) return reg(vreg(x, r));
  return partial_operand(x, u * lanes, 4 * lanes);
}

/* Below avx512: `vectors` registers of 0..12 that hold no kernel value
 * while the loop runs (a value lives from its op to its last use; one
 * made before the loop and read in it outlives the loop, as
 * kernel_x86_regalloc.c extends it), the highest first; 0 when there are
 * too few, and the partials stay in the frame. */
static uint32_t free_loop_registers(const KernelX86 *x, int vectors) {
  const Kernel *k = x->k;
  int first = -1, last = -1;
  for (int i = 0; i < k->op_count; i++)
    if (kernel_x86_in_vector_loop(x, &k->ops[i])) last = i, first = first < 0 ? i : first;
  uint32_t busy = 0, chosen = 0;
  for (int v = 0; v < k->op_count && first >= 0; v++) {
    const ValueHome *h = &x->homes[v];
    if (h->value_class == VALUE_XMM && !h->spilled && v <= last && x->last_use[v] >= first)
      busy |= 1u << x86_reg_number(h->reg);
  }
  for (int r = KX_VECTOR_VALUE_REGISTERS - 1; r >= 0 && vectors > 0; r--)
    if (!(busy & 1u << r)) chosen |= 1u << r, vectors--;
  return vectors == 0 ? chosen : 0;
}

/* Whether the loop runs a math function in vector lanes. At sse4 its
 * emulated FMAs need every register they can get: more than the four
 * partial vectors save. */
static bool loop_has_vector_math(const KernelX86 *x) {
  for (int i = 0; i < x->k->op_count; i++)
    if (kernel_x86_in_vector_loop(x, &x->k->ops[i]) && x->k->ops[i].kop == KOP_HLO &&
        kernel_x86_is_vector_math(x, x->k->ops[i].op))
      return true;
  return false;
}

static void emit_partials_combine(KernelX86 *x);
static_assert(PARTIAL_REGISTER + 4 <= 32, "four max/min accumulators from zmm28 need zmm28..31");

/* One group of the loop's elements at r14: the ops that compute the
 * element (not the sum's own three), and the store of a value the next
 * phase reads back (schedule.phases[].reuse). */
static bool emit_group(KernelX86 *x, int body, bool noted) {
  const Kernel *k = x->k;
  int early_store = kernel_x86_reuse_store(x);
  int reused = early_store >= 0 ? x->schedule.phases[x->phase + 1].reuse : -1;
  int prefetch = x->schedule.phases[x->phase].prefetch_row_bytes;
  const Instruction *last = NULL;
  for (int i = body; i < k->op_count; i++) {
    if (!kernel_x86_in_vector_loop(x, &k->ops[i]) || i == x->reduce_read || i == x->reduce_combine ||
        i == x->reduce_write || kernel_x86_index_only_addresses_rows(x, i))
      continue;
    if (!noted) kernel_x86_note_origin(x, i, &last);
    if (prefetch && k->ops[i].kop == KOP_LOAD && x->address_slots[i] >= 0) {
      /* the same place in the next row (schedule.phases[].prefetch_row_bytes) */
      EMIT(X86_PREFETCHT0, x86_mem_index(1, kernel_x86_row_pointer(x, i), KX_INNER, 4, prefetch));
    }
    if (!kernel_x86_emit_op(x, i)) return false;
    if (i == reused) { /* for the ROW phase to read back */
      if (!noted) x86_listing_note(x->cb, "%%%d to the %s, for phase %d", i, kernel_x86_reuse_in_frame(x) ? "row buffer" : "output", x->phase + 1);
      int value = vector_source(x, i, S0);
      vector_move(x, reuse_element(x), reg(vreg(x, value)));
    }
  }
  return true;
}

static void emit_identity(KernelX86 *x, Opcode reducer, int vectors, int lanes) {
  /* -0 for add, -inf for maximum, +inf for minimum (NaN still wins in both) */
  vector_broadcast_bits(x, S0, reducer == OP_ADD ? 0x80000000u : reducer == OP_MAXIMUM ? 0xff800000u : 0x7f800000u);
  for (int u = 0; u < vectors; u++) vector_move(x, partial_home(x, u, lanes), reg(vreg(x, S0)));
}

/* A maximum or minimum in four accumulators (zmm28..31, avx512, whole
 * groups of 64: kernel_x86_schedule.c): acc_g = max(element, acc_g), which
 * is the exact loop's step wherever no NaN is, with k3 gathering the NaN
 * lanes; then the accumulators fold into zmm28. That is the exact loop's
 * partial unless a NaN was seen (its blends decide which NaN wins) or a
 * lane came out ±0 (which zero wins depends on the order of equal
 * values): then it jumps to `exact`, which runs the row again in order. */
static bool emit_fast_max_min(KernelX86 *x, int body, int element, X86Label exact, bool scaling) {
  const Kernel *k = x->k;
  enum { GROUPS = 4 };
  bool max = k->ops[x->reduce_combine].op == OP_MAXIMUM;
  X86Mnemonic op = max ? X86_VMAXPS : X86_VMINPS;
  x86_listing_note(x->cb, "vector %s: %d accumulators, NaN and zero test once per row", max ? "max" : "min", GROUPS);
  emit_identity(x, k->ops[x->reduce_combine].op, GROUPS, 16);
  EMIT(X86_KXORW, reg(X86_K3), reg(X86_K3), reg(X86_K3));
  EMIT(X86_XOR, reg(X86_R14D), reg(X86_R14D));
  X86Label head = x86_label_new(x->cb);
  x86_label_bind(x->cb, head);
  for (int g = 0; g < GROUPS; g++) {
    if (scaling) kernel_x86_emit_row_scaling_vector(x);
    if (!emit_group(x, body, g > 0 || scaling)) return false;
    X86Reg e = x86_zmm(vector_source(x, element, S0));
    X86Reg acc = x86_zmm(PARTIAL_REGISTER + g);
    EMIT(op, reg(acc), reg(e), reg(acc));
    EMIT(X86_VCMPPS, reg(X86_K1), reg(e), reg(e), x86_imm(3));
    EMIT(X86_KORW, reg(X86_K3), reg(X86_K3), reg(X86_K1));
    EMIT(X86_ADD, reg(KX_INNER), x86_imm(16));
  }
  EMIT(X86_CMP, reg(KX_INNER), x86_imm(k->reduce_dims[k->reduce_rank - 1] - GROUPS * 16));
  EMIT(X86_JLE, x86_rel(head));
  X86Reg first = x86_zmm(PARTIAL_REGISTER);
  for (int g = 1; g < GROUPS; g++) EMIT(op, reg(first), reg(x86_zmm(PARTIAL_REGISTER + g)), reg(first));
  EMIT(X86_VPXORD, reg(x86_zmm(S2)), reg(x86_zmm(S2)), reg(x86_zmm(S2)));
  EMIT(X86_VCMPPS, reg(X86_K1), reg(first), reg(x86_zmm(S2)), x86_imm(0)); /* EQ_OQ: ±0 lanes */
  EMIT(X86_KORW, reg(X86_K1), reg(X86_K1), reg(X86_K3));
  EMIT(X86_KORTESTW, reg(X86_K1), reg(X86_K1));
  EMIT(X86_JNE, x86_rel(exact));
  return true;
}

/* A maximum or minimum at avx2 in the exact loop's own partial vectors:
 * partial = max(element, partial) is the exact loop's step wherever
 * neither is NaN (no NaN in the row keeps every partial NaN-free), ±0 and
 * ties included, as the order of the partials is the same. A NaN lane in
 * an element sends the row to `exact`, whose blends decide which NaN
 * wins: each element's NaN lanes (vcmpunordps) are or'ed into register
 * `nans`, tested once after the loop; where no register is free for it
 * (nans < 0), each vector is tested and branches on its own. */
static bool emit_nan_tested_max_min(KernelX86 *x, int body, int element, X86Label exact, int nans, bool scaling) {
  const Kernel *k = x->k;
  bool max = k->ops[x->reduce_combine].op == OP_MAXIMUM;
  int vectors = REDUCE_PARTIALS / x->lanes;
  if (nans >= 0)
    x86_listing_note(x->cb, "vector %s: %d accumulators, NaN lanes or'ed, tested once per row (no blends)",
                     max ? "max" : "min", vectors);
  else
    x86_listing_note(x->cb, "vector %s: %d accumulators, a NaN test per vector (no blends)", max ? "max" : "min",
                     vectors);
  emit_identity(x, k->ops[x->reduce_combine].op, vectors, x->lanes);
  if (nans >= 0) EMIT(X86_VXORPS, reg(vreg(x, nans)), reg(vreg(x, nans)), reg(vreg(x, nans)));
  EMIT(X86_XOR, reg(X86_R14D), reg(X86_R14D));
  X86Label head = x86_label_new(x->cb);
  x86_label_bind(x->cb, head);
  for (int u = 0; u < vectors; u++) {
    if (scaling) kernel_x86_emit_row_scaling_vector(x);
    if (!emit_group(x, body, u > 0 || scaling)) return false;
    int e = vector_source(x, element, S0);
    X86Operand partial = partial_home(x, u, x->lanes);
    int p = partial.kind == X86_OPERAND_REG ? x86_reg_number(partial.reg) : S1;
    if (partial.kind != X86_OPERAND_REG) vector_move(x, reg(vreg(x, S1)), partial);
    EMIT(max ? X86_VMAXPS : X86_VMINPS, reg(vreg(x, p)), reg(vreg(x, e)), reg(vreg(x, p)));
    if (partial.kind != X86_OPERAND_REG) vector_move(x, partial, reg(vreg(x, S1)));
    EMIT(X86_VCMPPS, reg(vreg(x, S2)), reg(vreg(x, e)), reg(vreg(x, e)), x86_imm(3)); /* UNORD_Q */
    if (nans >= 0) {
      EMIT(X86_VORPS, reg(vreg(x, nans)), reg(vreg(x, nans)), reg(vreg(x, S2)));
    } else {
      EMIT(X86_VMOVMSKPS, reg(X86_EAX), reg(vreg(x, S2)));
      EMIT(X86_TEST, reg(X86_EAX), reg(X86_EAX));
      EMIT(X86_JNE, x86_rel(exact));
    }
    EMIT(X86_ADD, reg(KX_INNER), x86_imm(x->lanes));
  }
  EMIT(X86_CMP, reg(KX_INNER), x86_imm(k->reduce_dims[k->reduce_rank - 1] - REDUCE_PARTIALS));
  EMIT(X86_JLE, x86_rel(head));
  if (nans >= 0) {
    EMIT(X86_VMOVMSKPS, reg(X86_EAX), reg(vreg(x, nans)));
    EMIT(X86_TEST, reg(X86_EAX), reg(X86_EAX));
    EMIT(X86_JNE, x86_rel(exact));
  }
  return true;
}

/* After the fast loop, whose partials hold no NaN (a NaN element sent
 * the row to the exact loop): their maximum (minimum) folded in a tree.
 * Over values with no NaN and no zero, max is exact and equal values have
 * equal bits, so every order of folding gives the same bits as the lane
 * order of emit_partials_combine; a zero result (where the order of -0
 * and +0 decides) goes to that lane-order combine (`combine`). The
 * accumulator then takes the result with its NaN-first rule: a NaN
 * accumulator stays, else max(result, acc) keeps acc on ties. Four levels
 * of vmaxps instead of sixteen dependent compare-and-branch steps. */
static void emit_tree_fold(KernelX86 *x, X86Label combine, X86Label done) {
  const Kernel *k = x->k;
  bool max = k->ops[x->reduce_combine].op == OP_MAXIMUM;
  X86Mnemonic op = max ? X86_VMAXPS : X86_VMINPS;
  x86_listing_note(x->cb, "the %s partials folded in a tree (none is NaN; a zero result folds in lane order)",
                   max ? "max" : "min");
  X86Operand y1 = reg(x86_ymm(S1)), y2 = reg(x86_ymm(S2)), x1 = reg(x86_xmm(S1)), x2 = reg(x86_xmm(S2));
  if (x->cpu->level == CPU_LEVEL_AVX512) {
    EMIT(X86_VEXTRACTF64X4, y1, reg(x86_zmm(PARTIAL_REGISTER)), x86_imm(1));
    EMIT(X86_VEXTRACTF64X4, y2, reg(x86_zmm(PARTIAL_REGISTER)), x86_imm(0));
    EMIT(op, y1, y1, y2);
  } else { /* avx2: two partial vectors of 8, in registers or the frame */
    EMIT(X86_VMOVUPS, y1, partial_home(x, 0, 8));
    EMIT(op, y1, y1, partial_home(x, 1, 8));
  }
  EMIT(X86_VEXTRACTF128, x2, y1, x86_imm(1));
  EMIT(op, x1, x1, x2);
  EMIT(X86_VSHUFPS, x2, x1, x1, x86_imm(0x4e)); /* lanes 2 3 0 1 */
  EMIT(op, x1, x1, x2);
  EMIT(X86_VSHUFPS, x2, x1, x1, x86_imm(0xb1)); /* lanes 1 0 3 2 */
  EMIT(op, x1, x1, x2);
  EMIT(X86_VMOVD, reg(X86_EAX), x1);
  EMIT(X86_TEST, reg(X86_EAX), x86_imm(0x7fffffff));
  EMIT(X86_JE, x86_rel(combine));
  x86_emit0(x->cb, X86_VZEROUPPER);
  int a = k->ops[x->reduce_write].acc;
  X86Operand acc = kernel_x86_slot(x->acc_slot + a, 4), s0 = reg(x86_xmm(S0));
  X86Label keep = x86_label_new(x->cb);
  EMIT(X86_MOVSS, s0, acc);
  EMIT(X86_UCOMISS, s0, s0);
  EMIT(X86_JP, x86_rel(keep));
  EMIT(max ? X86_MAXSS : X86_MINSS, x1, s0);
  EMIT(X86_MOVAPS, s0, x1);
  x86_label_bind(x->cb, keep);
  EMIT(X86_MOVSS, acc, s0);
  EMIT(X86_MOVSS, kernel_x86_slot(x->acc_next_slot + a, 4), s0);
  EMIT(X86_JMP, x86_rel(done));
}

/* The sum's loop over whole groups of REDUCE_PARTIALS elements; with
 * `scaling`, each vector of the group beside a vector of the row handed
 * on (kernel_x86_hand_on_row_scaling). */
static bool emit_sum_loop(KernelX86 *x, int body, int element, bool fast, bool scaling) {
  const Kernel *k = x->k;
  const KernelOp *add = &k->ops[x->reduce_combine];
  int lanes = x->lanes;
  int64_t n = k->reduce_dims[k->reduce_rank - 1];
  /* one chunk of a split sum covers [first, end) (at least 16 elements) */
  bool chunked = x->split == SPLIT_PARTIAL && k->reduce_rank == 1;
  x86_listing_note(x->cb, "vector sum: %d partial sums in %d-lane registers%s", REDUCE_PARTIALS, lanes,
                   x->cpu->level != CPU_LEVEL_AVX512 && !x->loop_vector_registers ? " (kept in the frame)" : "");
  Opcode reducer = add->op;
  emit_identity(x, reducer, REDUCE_PARTIALS / lanes, lanes);
  if (chunked) EMIT(X86_MOV, reg(KX_INNER), kernel_x86_slot(x->chunk_slot, 8));
  else EMIT(X86_XOR, reg(X86_R14D), reg(X86_R14D));
  X86Label head = x86_label_new(x->cb);
  x86_label_bind(x->cb, head);
  for (int u = 0; u < REDUCE_PARTIALS / lanes; u++) {
    if (scaling) kernel_x86_emit_row_scaling_vector(x);
    if (!emit_group(x, body, u > 0 || fast || scaling))
      return x->lanes = 0, x->loop_vector_registers = x->loop_reserved_registers = 0, false;
    /* partial = partial + element: the accumulator is the first operand
     * of the evaluator's add too (commutative either way, bit for bit). */
    X86Operand partial = partial_home(x, u, lanes);
    if (reducer == OP_ADD && partial.kind == X86_OPERAND_REG) {
      int e = vector_source(x, element, S0);
      int p = x86_reg_number(partial.reg);
      vector_op(x, X86_ADDPS, X86_VADDPS, p, p, e);
    } else if (reducer == OP_ADD) {
      vector_move(x, reg(vreg(x, S1)), partial);
      vector_fetch(x, S0, element);
      vector_op(x, X86_ADDPS, X86_VADDPS, S1, S1, S0);
      vector_move(x, partial, reg(vreg(x, S1)));
    } else {
      /* the evaluator's rule with a = partial, b = element, as in
       * emit_vector_max_min */
      bool max = reducer == OP_MAXIMUM;
      vector_fetch(x, S0, element);
      vector_move(x, reg(vreg(x, S1)), partial);
      vector_op(x, max ? X86_MAXPS : X86_MINPS, max ? X86_VMAXPS : X86_VMINPS, S0, S0, S1);
      vector_take_nan_lanes(x, element);
      take_nan_lanes(x, partial);
      vector_move(x, partial, reg(vreg(x, S0)));
    }
    EMIT(X86_ADD, reg(KX_INNER), x86_imm(lanes));
  }
  if (chunked) {
    EMIT(X86_MOV, reg(X86_RAX), kernel_x86_slot(x->chunk_slot + 1, 8));
    EMIT(X86_SUB, reg(X86_RAX), x86_imm(REDUCE_PARTIALS));
    EMIT(X86_CMP, reg(KX_INNER), reg(X86_RAX));
  } else {
    EMIT(X86_CMP, reg(KX_INNER), x86_imm(n - REDUCE_PARTIALS));
  }
  EMIT(X86_JLE, x86_rel(head));
  return true;
}

bool kernel_x86_emit_vector_reduce(KernelX86 *x, int lanes) {
  const Kernel *k = x->k;
  if (!kernel_x86_find_sum(x)) return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: no vector sum", k->name);
  const KernelOp *add = &k->ops[x->reduce_combine];
  int element = add->args[0] == x->reduce_read ? add->args[1] : add->args[0];
  x->lanes = lanes;
  bool ok;
  int body = emit_loop_prologue(x, &ok);
  if (!ok) return x->lanes = 0, false;
  X86Label exact = x86_label_new(x->cb), combine = x86_label_new(x->cb), done = x86_label_new(x->cb);
  bool fast = x->schedule.phases[x->phase].rerun_exact; /* never with chunks: kernel_x86_schedule.c */
  int nans = -1; /* the avx2 fast loop's NaN lanes, where a register is free */
  if (x->cpu->level != CPU_LEVEL_AVX512 && !(is_sse(x) && loop_has_vector_math(x))) {
    int partials = REDUCE_PARTIALS / lanes;
    uint32_t chosen = fast ? free_loop_registers(x, partials + 1) : 0;
    if (chosen) nans = __builtin_ctz(chosen), chosen &= ~(1u << nans);
    else chosen = free_loop_registers(x, partials);
    x->loop_vector_registers = chosen;
    x->loop_reserved_registers = nans >= 0 ? 1u << nans : 0;
  }
  /* The row handed on is divided in this loop's trips where the loop runs
   * every trip (the avx2 fast loop only with its NaN register, else it may
   * leave early for the exact loop), else in a loop of its own first. */
  bool scaling = kernel_x86_scales_previous_row(x);
  bool in_trips = x->cpu->level == CPU_LEVEL_AVX512 || !fast || nans >= 0;
  if (scaling && !in_trips) {
    x86_listing_note(x->cb, "the row handed on, divided");
    kernel_x86_emit_row_scaling_loop(x);
  }
  scaling = scaling && in_trips;
  if (fast) {
    X86Label tree = x86_label_new(x->cb);
    for (int copy = scaling ? 0 : 1; copy < 2; copy++) {
      X86Label plain = x86_label_new(x->cb);
      if (copy == 0) {
        x86_listing_note(x->cb, "the row handed on divided in this loop (every row but the first of the range)");
        kernel_x86_emit_unless_row_handed_on(x, plain);
      }
      bool emitted = x->cpu->level == CPU_LEVEL_AVX512 ? emit_fast_max_min(x, body, element, exact, copy == 0)
                                                       : emit_nan_tested_max_min(x, body, element, exact, nans, copy == 0);
      if (!emitted) return x->lanes = 0, x->loop_vector_registers = x->loop_reserved_registers = 0, false;
      if (copy == 0) EMIT(X86_JMP, x86_rel(tree));
      x86_label_bind(x->cb, plain);
    }
    x86_label_bind(x->cb, tree);
    emit_tree_fold(x, combine, done);
    x86_label_bind(x->cb, exact);
  } else if (scaling) {
    X86Label plain = x86_label_new(x->cb);
    x86_listing_note(x->cb, "the row handed on divided in this loop (every row but the first of the range)");
    kernel_x86_emit_unless_row_handed_on(x, plain);
    if (!emit_sum_loop(x, body, element, fast, true)) return false;
    EMIT(X86_JMP, x86_rel(combine));
    x86_label_bind(x->cb, plain);
  }
  if (!emit_sum_loop(x, body, element, fast, false)) return false;
  x86_label_bind(x->cb, combine);
  /* partials in registers 0..12 go to the frame, where the combine reads
   * them, before vzeroupper clears their upper halves */
  for (int u = 0; x->loop_vector_registers && u < REDUCE_PARTIALS / lanes; u++)
    vector_move(x, partial_operand(x, u * lanes, 4 * lanes), partial_home(x, u, lanes));
  x->loop_vector_registers = x->loop_reserved_registers = 0;
  x->lanes = 0;
  kernel_x86_forget_pointer_registers(x);
  /* zmm28 is past zmm15: vzeroupper keeps it */
  if (x->cpu->level >= CPU_LEVEL_AVX2) x86_emit0(x->cb, X86_VZEROUPPER);
  emit_partials_combine(x);
  x86_label_bind(x->cb, done);
  return true;
}

/* acc = reducer(acc, partial l) for l = 0..15 in lane order, the
 * accumulator in scratch 0 throughout: read from its slot once, written
 * back once. At avx512 the lanes come out of zmm28 four at a time
 * (vextractf32x4, then pshufd); below, from the frame, where the loop
 * keeps its partial vectors. Maximum and minimum take NaN first, as
 * kernel_x86_emit_acc_combine does: a NaN accumulator stays, else a NaN
 * lane is taken, else max(acc, lane) keeps acc on ties. */
static void emit_partials_combine(KernelX86 *x) {
  const Kernel *k = x->k;
  int a = k->ops[x->reduce_write].acc;
  Opcode reducer = k->ops[x->reduce_combine].op;
  bool in_register = x->cpu->level == CPU_LEVEL_AVX512;
  X86Operand acc = kernel_x86_slot(x->acc_slot + a, 4), s0 = reg(x86_xmm(S0)), s1 = reg(x86_xmm(S1));
  x86_listing_note(x->cb, "the 16 partials into the accumulator in lane order, in registers");
  EMIT(X86_MOVSS, s0, acc);
  for (int l = 0; l < REDUCE_PARTIALS; l++) {
    X86Operand lane = partial_operand(x, l, 4);
    if (in_register) {
      if (l % 4 == 0) EMIT(X86_VEXTRACTF32X4, reg(x86_xmm(S2)), reg(x86_zmm(PARTIAL_REGISTER)), x86_imm(l / 4));
      EMIT(X86_PSHUFD, s1, reg(x86_xmm(S2)), x86_imm(l % 4));
      lane = s1;
    }
    if (reducer == OP_ADD) {
      EMIT(X86_ADDSS, s0, lane);
      continue;
    }
    X86Label take = x86_label_new(x->cb), done = x86_label_new(x->cb);
    EMIT(X86_UCOMISS, s0, s0);
    EMIT(X86_JP, x86_rel(done));
    if (!in_register) EMIT(X86_MOVSS, s1, lane);
    EMIT(X86_UCOMISS, s1, s1);
    EMIT(X86_JP, x86_rel(take));
    EMIT(reducer == OP_MAXIMUM ? X86_MAXSS : X86_MINSS, s1, s0);
    x86_label_bind(x->cb, take);
    EMIT(X86_MOVAPS, s0, s1);
    x86_label_bind(x->cb, done);
  }
  EMIT(X86_MOVSS, acc, s0);
  EMIT(X86_MOVSS, kernel_x86_slot(x->acc_next_slot + a, 4), s0);
}

/* The result goes to the accumulator and its next value, which a later
 * scalar loop copies back (kernel_x86.c). */
void kernel_x86_emit_acc_combine(KernelX86 *x, X86Operand partial) {
  const Kernel *k = x->k;
  int a = k->ops[x->reduce_write].acc;
  X86Operand acc = kernel_x86_slot(x->acc_slot + a, 4), next = kernel_x86_slot(x->acc_next_slot + a, 4);
  Opcode reducer = k->ops[x->reduce_combine].op;
  if (reducer == OP_ADD) {
    EMIT(X86_MOVSS, reg(x86_xmm(S0)), acc);
    EMIT(X86_ADDSS, reg(x86_xmm(S0)), partial);
  } else { /* acc = max(acc, partial), NaN first */
    X86Label done = x86_label_new(x->cb);
    EMIT(X86_MOVSS, reg(x86_xmm(S0)), partial);
    EMIT(X86_MOVSS, reg(x86_xmm(S1)), acc);
    EMIT(reducer == OP_MAXIMUM ? X86_MAXSS : X86_MINSS, reg(x86_xmm(S0)), reg(x86_xmm(S1)));
    EMIT(X86_UCOMISS, reg(x86_xmm(S1)), reg(x86_xmm(S1)));
    EMIT(X86_JP, x86_rel(done));
    EMIT(X86_MOVSS, reg(x86_xmm(S2)), partial);
    EMIT(X86_UCOMISS, reg(x86_xmm(S2)), reg(x86_xmm(S2)));
    EMIT(X86_JNP, x86_rel(done));
    EMIT(X86_MOVAPS, reg(x86_xmm(S0)), reg(x86_xmm(S2)));
    x86_label_bind(x->cb, done);
  }
  EMIT(X86_MOVSS, acc, reg(x86_xmm(S0)));
  EMIT(X86_MOVSS, next, reg(x86_xmm(S0)));
}
