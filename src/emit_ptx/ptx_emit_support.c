/* What every part of the PTX kernel emitter builds on (ptx_kernel_internal.h):
 * the register type each kernel value computes in, half types rounded and
 * widened, one op through ptx_ops.c's table, index recovery, the
 * grid-stride loop, accumulators and their identities. It calls nothing
 * else of the emitter's, so a reader can start here: ptx_int.c,
 * ptx_float_ops.c and ptx_block.c build on it; the skeletons (ptx_row.c,
 * ptx_tile.c, ptx_kernel.c) on all of them. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_kernel_internal.h"

/* ---- types ---- */

/* The register type a value of t computes in; false for types the emitter
 * does not handle. */
bool ptx_emit_value_type(ElementType t, PtxType *out) {
  switch (t) {
  case TYPE_F16:
  case TYPE_BF16: *out = PTX_F32; return true;
  case TYPE_S8: case TYPE_S16: case TYPE_S4: case TYPE_S2: *out = PTX_S32; return true;   /* ptx_int.c: sign-extended */
  case TYPE_U8: case TYPE_U16: case TYPE_U4: case TYPE_U2: *out = PTX_U32; return true;   /* zero-extended */
  case TYPE_PRED: case TYPE_S32: case TYPE_U32: case TYPE_S64: case TYPE_U64: case TYPE_F32: case TYPE_F64:
    return ptx_type_of_element(t, out);
  default: return ptx_minifloat_known(t) && (*out = PTX_F32, true);   /* ptx_minifloat.c */
  }
}

bool ptx_emit_is_half(ElementType t) { return t == TYPE_F16 || t == TYPE_BF16; }

/* f16, bf16 and the minifloats compute in f32, rounded after each op. */
bool ptx_emit_computes_in_f32(ElementType t) { return ptx_emit_is_half(t) || ptx_minifloat_known(t); }

PtxReg ptx_emit_value_new(Emit *E, ElementType t) {
  PtxType pt = PTX_F32;
  bool known = ptx_emit_value_type(t, &pt);
  assert(known && "kernel_types_check runs first");
  (void)known;
  return ptx_reg_new(E->b, pt);
}

const char *ptx_emit_mov_suffix(PtxRegClass c) {
  static const char *const names[PTX_REG_CLASS_COUNT] = {".pred", ".b16", ".b32", ".b64", ".f32", ".f64"};
  return names[c];
}

void ptx_emit_reg_move(Emit *E, PtxReg dst, PtxReg src) {
  ptx_inst(E->b, "mov$s $r, $r", ptx_emit_mov_suffix(dst.cls), dst, src);
}

/* f32 -> f16/bf16 -> f32: a value of a half type (or a minifloat) rounded to it. */
PtxReg ptx_emit_half_round(Emit *E, ElementType t, PtxReg f) {
  if (ptx_minifloat_known(t)) return ptx_minifloat_round(E, t, f);
  PtxReg h = ptx_reg_new(E->b, PTX_B16), out = ptx_reg_new(E->b, PTX_F32);
  if (t == TYPE_F16) {
    ptx_inst(E->b, "cvt.rn.f16.f32 $r, $r", h, f);
    ptx_inst(E->b, "cvt.f32.f16 $r, $r", out, h);
    return out;
  }
  PtxReg u = ptx_reg_new(E->b, PTX_U32);
  ptx_inst(E->b, "cvt.rn.bf16.f32 $r, $r", h, f);
  ptx_inst(E->b, "cvt.u32.u16 $r, $r", u, h);
  ptx_inst(E->b, "shl.b32 $r, $r, 16", u, u);
  ptx_inst(E->b, "mov.b32 $r, $r", out, u);
  return out;
}

/* 16 bits of f16/bf16 widened to f32 (exact); before sm_90 no cvt reads
 * bf16, whose bits are the top half of an f32. */
PtxReg ptx_emit_half_widen(Emit *E, ElementType t, PtxReg h) {
  PtxReg out = ptx_reg_new(E->b, PTX_F32);
  if (t == TYPE_F16) {
    ptx_inst(E->b, "cvt.f32.f16 $r, $r", out, h);
    return out;
  }
  PtxReg u = ptx_reg_new(E->b, PTX_U32);
  ptx_inst(E->b, "cvt.u32.u16 $r, $r", u, h);
  ptx_inst(E->b, "shl.b32 $r, $r, 16", u, u);
  ptx_inst(E->b, "mov.b32 $r, $r", out, u);
  return out;
}

bool ptx_emit_table_op(Emit *E, const KernelOp *op, ElementType operand_type, ElementType result_type,
                       const PtxReg *args, PtxReg *out) {
  PtxElementwise e = {.op = op->op, .type = ptx_emit_computes_in_f32(operand_type) ? TYPE_F32 : operand_type,
                      .result_type = result_type, .direction = op->direction, .compare_type = op->compare_type};
  if (e.op == OP_CONVERT && ptx_emit_computes_in_f32(result_type)) e.result_type = TYPE_F32;
  bool gives_pred = op->op == OP_COMPARE || op->op == OP_IS_FINITE;
  *out = ptx_emit_value_new(E, gives_pred ? TYPE_PRED : result_type);
  if (!ptx_emit_elementwise(E->b, &e, *out, args, E->st)) return false;
  if (ptx_emit_computes_in_f32(result_type)) *out = ptx_emit_half_round(E, result_type, *out);
  return true;
}

/* ---- index recovery ---- */

/* index[order[0]] = linear % dims[order[0]], and so on outward; in 32 bits
 * when the space fits (ptxas turns a 32-bit division by a constant into a
 * multiply), in 64 otherwise. */
void ptx_emit_indices_recover(Emit *E, PtxReg linear, int rank, const int64_t *dims, const int64_t *order,
                            PtxReg *index) {
  int64_t total = 1;
  for (int d = 0; d < rank; d++) total *= dims[d];
  bool narrow = total <= INT32_MAX;
  PtxReg rest = linear;
  if (narrow) {
    rest = ptx_reg_new(E->b, PTX_U32);
    ptx_inst(E->b, "cvt.u32.u64 $r, $r", rest, linear);
  }
  for (int j = 0; j < rank; j++) {
    int d = (int)order[j];
    PtxReg part = rest;
    if (j < rank - 1) {
      PtxReg quotient = ptx_reg_new(E->b, narrow ? PTX_U32 : PTX_U64);
      part = ptx_reg_new(E->b, narrow ? PTX_U32 : PTX_U64);
      ptx_inst(E->b, narrow ? "rem.u32 $r, $r, $D" : "rem.u64 $r, $r, $D", part, rest, dims[d]);
      ptx_inst(E->b, narrow ? "div.u32 $r, $r, $D" : "div.u64 $r, $r, $D", quotient, rest, dims[d]);
      rest = quotient;
    }
    index[d] = ptx_reg_new(E->b, PTX_S64);
    if (narrow) ptx_inst(E->b, "cvt.u64.u32 $r, $r", index[d], part);
    else ptx_inst(E->b, "mov.b64 $r, $r", index[d], part);
  }
}

int64_t ptx_emit_dims_product(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= dims[d];
  return n;
}

/* The order the output index space is walked in: the first output's
 * physical order, so neighbouring threads store to neighbouring bytes. */
void ptx_emit_space_order(const Kernel *k, int64_t *order) {
  for (int j = 0; j < k->rank; j++) order[j] = k->rank - 1 - j;
  if (!k->output_count) return;
  /* The output's dims past the loop's rank (a complex output's component
   * dim, ptx_complex.c) are not loop dims: they are left out. */
  const Shape *s = &k->outputs[0].shape;
  int64_t picked[AXLE_MAX_RANK];
  int n = 0;
  for (int j = 0; j < s->rank; j++)
    if (s->minor_to_major[j] < k->rank && n < AXLE_MAX_RANK) picked[n++] = s->minor_to_major[j];
  if (n == k->rank) memcpy(order, picked, sizeof *order * (size_t)n);
}

/* The reduced space: the last reduced dim fastest, the interpreter's order. */
void ptx_emit_reduce_order(const Kernel *k, int64_t *order) {
  for (int j = 0; j < k->reduce_rank; j++) order[j] = k->reduce_rank - 1 - j;
}

/* The grid-stride loop: for (i = first; i < n; i += stride) body, with
 * the loop's head and tail written around what `body` emits. */

/* The bound is the constant n, or the register *bound when given. */
GridLoop ptx_emit_grid_loop_open_to(Emit *E, PtxReg first, int64_t n, const PtxReg *bound) {
  GridLoop g = {ptx_reg_new(E->b, PTX_U64), ptx_label_new(E->b, "loop"), ptx_label_new(E->b, "loop_done")};
  PtxReg p = ptx_reg_new(E->b, PTX_PRED);
  ptx_inst(E->b, "mov.b64 $r, $r", g.i, first);
  ptx_label_place(E->b, g.head);
  if (bound) ptx_inst(E->b, "setp.ge.u64 $r, $r, $r", p, g.i, *bound);
  else ptx_inst(E->b, "setp.ge.u64 $r, $r, $D", p, g.i, n);
  ptx_inst(E->b, "@$r bra $l", p, g.done);
  return g;
}

GridLoop ptx_emit_grid_loop_open(Emit *E, PtxReg first, int64_t n) {
  return ptx_emit_grid_loop_open_to(E, first, n, NULL);
}

void ptx_emit_grid_loop_close(Emit *E, const GridLoop *g, PtxReg stride) {
  ptx_inst(E->b, "add.s64 $r, $r, $r", g->i, g->i, stride);
  ptx_inst(E->b, "bra $l", g->head);
  ptx_label_place(E->b, g->done);
}

/* nctaid.x * ntid.x (or nctaid.x alone: one block per item) */
PtxReg ptx_emit_grid_stride(Emit *E, bool per_block) {
  PtxReg blocks = ptx_reg_new(E->b, PTX_U32), threads = ptx_reg_new(E->b, PTX_U32);
  PtxReg stride = ptx_reg_new(E->b, PTX_U64);
  ptx_inst(E->b, "mov.u32 $r, %nctaid.x", blocks);
  if (per_block) {
    ptx_inst(E->b, "cvt.u64.u32 $r, $r", stride, blocks);
  } else {
    ptx_inst(E->b, "mov.u32 $r, %ntid.x", threads);
    ptx_inst(E->b, "mul.wide.u32 $r, $r, $r", stride, blocks, threads);
  }
  return stride;
}

void ptx_emit_accumulators_declare(Emit *E) {
  for (int a = 0; a < E->k->acc_count; a++) E->acc[a] = ptx_emit_value_new(E, E->k->acc_types[a]);
}

PtxType ptx_emit_shared_type(PtxReg r) {
  return r.cls == PTX_REG_F32 ? PTX_F32 : r.cls == PTX_REG_F64 ? PTX_F64 : r.cls == PTX_REG_B64 ? PTX_B64 : PTX_B32;
}

PtxReg ptx_emit_shuffle(Emit *E, const char *mode, PtxReg v, int offset) {
  PtxReg out = ptx_reg_new(E->b, ptx_emit_shared_type(v));
  if (v.cls == PTX_REG_F32 || v.cls == PTX_REG_B32) {
    ptx_inst(E->b, "shfl.sync.$s.b32 $r, $r, $d, 31, -1", mode, out, v, offset);
    return out;
  }
  /* 64-bit values cross in two 32-bit halves */
  PtxReg lo = ptx_reg_new(E->b, PTX_B32), hi = ptx_reg_new(E->b, PTX_B32);
  ptx_inst(E->b, "mov.b64 {$r, $r}, $r", lo, hi, v);
  ptx_inst(E->b, "shfl.sync.$s.b32 $r, $r, $d, 31, -1", mode, lo, lo, offset);
  ptx_inst(E->b, "shfl.sync.$s.b32 $r, $r, $d, 31, -1", mode, hi, hi, offset);
  ptx_inst(E->b, "mov.b64 $r, {$r, $r}", out, lo, hi);
  return out;
}
