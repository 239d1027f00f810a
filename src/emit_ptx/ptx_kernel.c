/* PTX from the kernel IR (see ptx_kernel.h): the loop and reduction
 * skeletons around a kernel's blocks, and the entry that picks one.
 *
 * Every kernel value lives in one virtual register, of the type it computes
 * in (ptx_emit_value_type in ptx_emit_support.c: f16 and bf16 in f32). A
 * block of the kernel is emitted by walking its ops in order (ptx_block.c);
 * the skeletons decide how often and where. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_kernel_internal.h"



static bool type_refuse(Emit *E, ElementType t, const char *where) {
  return status_error(E->st, STATUS_UNSUPPORTED, "kernel %s: the PTX emitter does not handle %s (%s) yet",
                      E->k->name, type_name(t), where);
}

/* Every type the kernel touches, checked before anything is emitted. */
static bool kernel_types_check(Emit *E) {
  const Kernel *k = E->k;
  PtxType t;
  for (int i = 0; i < k->input_count; i++)
    if (!ptx_emit_value_type(k->inputs[i].shape.type, &t) || k->inputs[i].shape.element_size_bits)
      return type_refuse(E, k->inputs[i].shape.type, "an input");
  for (int i = 0; i < k->output_count; i++)
    if (!ptx_emit_value_type(k->outputs[i].shape.type, &t) || k->outputs[i].shape.element_size_bits)
      return type_refuse(E, k->outputs[i].shape.type, "an output");
  for (int i = 0; i < k->op_count; i++)
    if (!ptx_emit_value_type(k->ops[i].type, &t)) return type_refuse(E, k->ops[i].type, "a value");
  if (k->input_count + k->output_count > 64)
    return status_error(E->st, STATUS_UNSUPPORTED, "kernel %s: more than 64 buffers", k->name);
  return true;
}

static bool block_emit(Emit *E, KernelBlock block) { return ptx_emit_block_phase(E, block, -1); }

/* ---- loop kernels ---- */

static bool op_is_index(const Kernel *k, int value, int dim) {
  return k->ops[value].kop == KOP_INDEX && k->ops[value].dim == dim;
}

static bool access_is_identity(const Kernel *k, const KernelOp *op, const Shape *s, int first) {
  const Shape *out = &k->outputs[0].shape;
  if (s->rank != k->rank || !shape_same_dims(s, out) ||
      memcmp(s->minor_to_major, out->minor_to_major, sizeof *s->minor_to_major * (size_t)s->rank) != 0)
    return false;
  for (int d = 0; d < s->rank; d++)
    if (!op_is_index(k, op->args[first + d], d)) return false;
  return true;
}

/* How a vectorised loop reads each load (VectorPlan.loads, per op):
 *   IDENTITY   at the output's own index: a 128-bit load at vector v
 *   INNER      varying along the output's innermost physical dim, which is
 *              its own innermost (a bias over rows): a 128-bit load at the
 *              first lane's index
 *   INVARIANT  not varying along it (a per-row scale, a scalar): one load,
 *              the same value in every lane
 * INNER and INVARIANT need the output's innermost extent to be a multiple
 * of the lanes, so that the lanes of a vector share every other index. */
enum { VLOAD_IDENTITY = 1, VLOAD_INNER, VLOAD_INVARIANT };

typedef struct VectorPlan {
  int width;                /* lanes: 4 (4-byte elements) or 2 (8-byte); 0: the scalar loop */
  bool needs_index;         /* some load is INNER or INVARIANT: the first lane's index is needed */
  unsigned char *loads;     /* per op, for KOP_LOAD (owned) */
} VectorPlan;

/* A load whose indices are loop indices (the vector loads put the first
 * lane's indices in their place): INNER, INVARIANT, or 0, from its form
 * along the output's innermost dimension (kernel_access_form). */
static int load_kind_of(const Kernel *k, int i, const Shape *s, int inner, int bytes) {
  const KernelOp *op = &k->ops[i];
  for (int d = 0; d < s->rank; d++)
    if (k->ops[op->args[d]].kop != KOP_INDEX) return 0;
  KernelAccessForm form = kernel_access_form(k, i, inner);
  if (form.kind == KACCESS_INVARIANT) return VLOAD_INVARIANT;
  bool contiguous = form.kind == KACCESS_CONTIGUOUS && type_byte_size(s->type) == bytes && !ptx_emit_is_half(s->type) &&
                    s->dims[form.dim] == k->dims[inner];
  return contiguous ? VLOAD_INNER : 0;
}

/* The lanes per 128-bit access: every store at the output's own index, in
 * one layout and one 4- or 8-byte width; every load one of the kinds above,
 * the 128-bit ones of that width; the indices feeding nothing but loads. */
static VectorPlan vector_plan(const Kernel *k) {
  VectorPlan p = {0};
  if (k->kind != KERNEL_LOOP || k->rank == 0 || k->output_count == 0) return p;
  const Shape *out = &k->outputs[0].shape;
  int bytes = type_byte_size(out->type), inner = (int)out->minor_to_major[0];
  if (ptx_emit_is_half(out->type) || out->type == TYPE_PRED || (bytes != 4 && bytes != 8) || inner >= k->rank) return p;
  p.loads = mem_calloc((size_t)k->op_count + 1, 1);
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    bool memory = op->kop == KOP_LOAD || op->kop == KOP_STORE;
    const Shape *s = op->kop == KOP_LOAD ? &k->inputs[op->buffer].shape : &k->outputs[op->buffer].shape;
    bool ok = true;
    if (op->kop == KOP_STORE)
      ok = type_byte_size(s->type) == bytes && !ptx_emit_is_half(s->type) && s->type != TYPE_PRED &&
           access_is_identity(k, op, s, 1) && k->ops[op->args[0]].kop != KOP_INDEX;
    else if (op->kop == KOP_LOAD && type_byte_size(s->type) == bytes && !ptx_emit_is_half(s->type) &&
             s->type != TYPE_PRED && access_is_identity(k, op, s, 0))
      p.loads[i] = VLOAD_IDENTITY;
    else if (op->kop == KOP_LOAD)
      ok = (p.loads[i] = (unsigned char)load_kind_of(k, i, s, inner, bytes)) != 0;
    for (int a = memory ? op->arg_count : 0; ok && a < op->arg_count; a++) ok = k->ops[op->args[a]].kop != KOP_INDEX;
    if (!ok) return mem_free(p.loads), (VectorPlan){0};
    p.needs_index |= p.loads[i] == VLOAD_INNER || p.loads[i] == VLOAD_INVARIANT;
  }
  p.width = 16 / bytes;
  if (p.needs_index && k->dims[inner] % p.width) return mem_free(p.loads), (VectorPlan){0};
  return p;
}

/* One 128-bit ld or st: "{%f1, %f2, %f3, %f4}" and its type. */
static void vector_list(const PtxReg *regs, int width, char *out, size_t size) {
  size_t at = 0;
  for (int l = 0; l < width && at < size; l++) {
    char name[16];
    ptx_reg_name(regs[l], name, sizeof name);
    at += (size_t)snprintf(out + at, size - at, "%s%s", l ? ", " : "{", name);
  }
  if (at < size) snprintf(out + at, size - at, "}");
}

static const char *vector_type(ElementType t) {
  PtxType pt = PTX_F32;
  ptx_emit_value_type(t, &pt);
  return ptx_type_suffix(pt);
}

/* A load of the vector whose first lane is at E->index: 128 bits at that
 * index (INNER), or one element for every lane (INVARIANT). */
static void vector_load_indexed(Emit *E, int i, int kind, int width) {
  const KernelOp *op = &E->k->ops[i];
  const Shape *s = &E->k->inputs[op->buffer].shape;
  for (int d = 0; d < s->rank; d++) E->values[op->args[d]] = E->index[E->k->ops[op->args[d]].dim];
  PtxReg address = ptx_emit_buffer_address(E, E->inputs[op->buffer], s, op, 0);
  if (kind == VLOAD_INVARIANT) {
    PtxReg v = ptx_emit_element_load(E, s->type, address);
    for (int l = 0; l < width; l++) E->lanes[i][l] = v;
    return;
  }
  char list[160];
  for (int l = 0; l < width; l++) E->lanes[i][l] = ptx_emit_value_new(E, s->type);
  vector_list(E->lanes[i], width, list, sizeof list);
  ptx_inst(E->b, "ld.global.v$d$s $s, [$r]", width, vector_type(s->type), list, address);
}

/* Vector `v` of every buffer: the loads, the body once per lane, the stores. */
static bool vector_body_emit(Emit *E, PtxReg v, const VectorPlan *plan) {
  const Kernel *k = E->k;
  int width = plan->width;
  char list[160];
  if (plan->needs_index) {  /* the first lane's logical index */
    int64_t order[AXLE_MAX_RANK];
    PtxReg first = ptx_reg_new(E->b, PTX_U64);
    ptx_inst(E->b, "mul.lo.s64 $r, $r, $d", first, v, width);
    ptx_emit_space_order(k, order);
    ptx_emit_indices_recover(E, first, k->rank, k->dims, order, E->index);
  }
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->kop != KOP_LOAD) continue;
    if (plan->loads[i] != VLOAD_IDENTITY) {
      vector_load_indexed(E, i, plan->loads[i], width);
      continue;
    }
    ElementType t = k->inputs[op->buffer].shape.type;
    for (int l = 0; l < width; l++) E->lanes[i][l] = ptx_emit_value_new(E, t);
    PtxReg address = ptx_element_address(E->b, E->inputs[op->buffer], v, 16);
    vector_list(E->lanes[i], width, list, sizeof list);
    ptx_inst(E->b, "ld.global.v$d$s $s, [$r]", width, vector_type(t), list, address);
  }
  for (E->lane = 0; E->lane < width; E->lane++) {
    if (!block_emit(E, KBLOCK_PRE)) return false;
  }
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->kop != KOP_STORE) continue;
    PtxReg address = ptx_element_address(E->b, E->outputs[op->buffer], v, 16);
    vector_list(E->lanes[i], width, list, sizeof list);
    ptx_inst(E->b, "st.global.v$d$s [$r], $s", width, vector_type(k->outputs[op->buffer].shape.type), address, list);
  }
  E->lanes = NULL;
  return true;
}

/* The vectors, when every pointer is 16-byte aligned; returns the first
 * element left for the scalar loop (n rounded down, or 0 if unaligned). */
static bool vector_loop_emit(Emit *E, PtxReg thread, PtxReg stride, const VectorPlan *plan, int64_t n,
                             PtxReg *scalar_start) {
  const Kernel *k = E->k;
  int width = plan->width;
  PtxReg bits = ptx_reg_new(E->b, PTX_B64), aligned = ptx_reg_new(E->b, PTX_PRED);
  PtxReg count = ptx_reg_new(E->b, PTX_U64);
  ptx_comment(E->b, "%d elements per 128-bit access where every buffer is 16-byte aligned", width);
  ptx_inst(E->b, "mov.b64 $r, 0", bits);
  for (int i = 0; i < k->input_count; i++) ptx_inst(E->b, "or.b64 $r, $r, $r", bits, bits, E->inputs[i]);
  for (int o = 0; o < k->output_count; o++) ptx_inst(E->b, "or.b64 $r, $r, $r", bits, bits, E->outputs[o]);
  ptx_inst(E->b, "and.b64 $r, $r, 15", bits, bits);
  ptx_inst(E->b, "setp.eq.b64 $r, $r, 0", aligned, bits);
  ptx_inst(E->b, "selp.u64 $r, $D, 0, $r", count, n / width, aligned);
  PtxReg (*lanes)[4] = mem_calloc((size_t)k->op_count + 1, sizeof *lanes);
  GridLoop g = ptx_emit_grid_loop_open_to(E, thread, 0, &count);
  E->lanes = lanes;
  bool ok = vector_body_emit(E, g.i, plan);
  E->lanes = NULL;
  mem_free(lanes);
  if (!ok) return false;
  ptx_emit_grid_loop_close(E, &g, stride);
  *scalar_start = ptx_reg_new(E->b, PTX_U64);
  ptx_inst(E->b, "mul.lo.s64 $r, $r, $d", *scalar_start, count, width);
  return true;
}

static bool loop_kernel_emit(Emit *E, PtxKernelShape *shape) {
  const Kernel *k = E->k;
  int64_t n = ptx_emit_dims_product(k->rank, k->dims), order[AXLE_MAX_RANK];
  VectorPlan plan = vector_plan(k);
  int width = plan.width;
  PtxReg thread = ptx_global_thread_index(E->b), stride = ptx_emit_grid_stride(E, false);
  PtxReg first = thread;
  if (width) {
    PtxReg start;
    bool ok = vector_loop_emit(E, thread, stride, &plan, n, &start);
    mem_free(plan.loads);
    if (!ok) return false;
    first = ptx_reg_new(E->b, PTX_U64);
    ptx_inst(E->b, "add.s64 $r, $r, $r", first, start, thread);
  }
  ptx_comment(E->b, "one element per thread: its logical index, then the body");
  ptx_emit_space_order(k, order);
  GridLoop g = ptx_emit_grid_loop_open(E, first, n);
  ptx_emit_indices_recover(E, g.i, k->rank, k->dims, order, E->index);
  if (!block_emit(E, KBLOCK_PRE)) return false;
  ptx_emit_grid_loop_close(E, &g, stride);
  shape->strategy = width == 4 ? "loop.v4" : width == 2 ? "loop.v2" : "loop";
  shape->block_threads = LOOP_THREADS;
  int64_t items = width ? (n + width - 1) / width : n;
  shape->blocks = (items + LOOP_THREADS - 1) / LOOP_THREADS;
  return true;
}

/* ---- reduce kernels ---- */

/* One thread per output element, the reduced space in order: any reducer. */
static bool reduce_thread_emit(Emit *E, PtxKernelShape *shape) {
  const Kernel *k = E->k;
  int64_t n = ptx_emit_dims_product(k->rank, k->dims), order[AXLE_MAX_RANK];
  PtxReg thread = ptx_global_thread_index(E->b), stride = ptx_emit_grid_stride(E, false);
  PtxReg zero = ptx_reg_new(E->b, PTX_U64);
  ptx_inst(E->b, "mov.u64 $r, 0", zero);
  ptx_emit_accumulators_declare(E);
  ptx_emit_space_order(k, order);
  ptx_comment(E->b, "one output element per thread; the reduced space in order");
  GridLoop g = ptx_emit_grid_loop_open(E, thread, n);
  ptx_emit_indices_recover(E, g.i, k->rank, k->dims, order, E->index);
  if (!block_emit(E, KBLOCK_PRE) || !ptx_emit_reduce_loop(E, zero, 1) || !block_emit(E, KBLOCK_POST)) return false;
  ptx_emit_grid_loop_close(E, &g, stride);
  shape->strategy = "reduce.thread";
  shape->block_threads = LOOP_THREADS;
  shape->blocks = (n + LOOP_THREADS - 1) / LOOP_THREADS;
  return true;
}

/* A row reduction's plan: each accumulator's combiner (one op on the old
 * accumulator and an element), started from its identity. */

/* Every load of the reduced space reads along its buffer's most minor
 * dimension with the last reduced index: rows, coalesced across a warp. */
static bool loads_are_rows(const Kernel *k) {
  int loads = 0;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->kop != KOP_LOAD || op->block != KBLOCK_REDUCE) continue;
    const Shape *s = &k->inputs[op->buffer].shape;
    if (s->rank == 0) return false;
    const KernelOp *minor = &k->ops[op->args[s->minor_to_major[0]]];
    if (minor->kop != KOP_RINDEX || minor->dim != k->reduce_rank - 1) return false;
    loads++;
  }
  return loads > 0;
}

static bool row_plan_make(const Kernel *k, RowPlan *plan) {
  if (k->kind != KERNEL_REDUCE || k->reduce_rank == 0 || k->acc_count == 0) return false;
  if (ptx_emit_dims_product(k->reduce_rank, k->reduce_dims) < 2 * WARP || !loads_are_rows(k)) return false;
  return kernel_reduction_splits(k, plan->combiner);
}

/* The block's warps' totals through shared memory: lane 0 of each warp
 * stores, thread 0 combines them in warp order. */
static bool block_combine_emit(Emit *E, const RowPlan *plan, int threads, PtxReg tid, PtxLabel skip_post) {
  int warps = threads / WARP;
  PtxReg warp = ptx_reg_new(E->b, PTX_U32), lane = ptx_reg_new(E->b, PTX_U32), p = ptx_reg_new(E->b, PTX_PRED);
  PtxLabel stored = ptx_label_new(E->b, "stored");
  ptx_inst(E->b, "shr.u32 $r, $r, 5", warp, tid);
  ptx_inst(E->b, "and.b32 $r, $r, 31", lane, tid);
  ptx_inst(E->b, "setp.ne.u32 $r, $r, 0", p, lane);
  ptx_inst(E->b, "@$r bra $l", p, stored);
  for (int a = 0; a < E->k->acc_count; a++) {
    int bytes = ptx_type_byte_size(ptx_emit_shared_type(E->acc[a]));
    PtxReg base = ptx_reg_new(E->b, PTX_U32), at = ptx_reg_new(E->b, PTX_U32);
    char name[32];
    snprintf(name, sizeof name, "warp_acc%d", a);
    ptx_inst(E->b, "mov.u32 $r, $s", base, name);
    ptx_inst(E->b, "mad.lo.u32 $r, $r, $d, $r", at, warp, bytes, base);
    ptx_inst(E->b, "st.shared$s [$r], $r", ptx_emit_mov_suffix(E->acc[a].cls), at, E->acc[a]);
  }
  ptx_label_place(E->b, stored);
  ptx_inst(E->b, "bar.sync 0");
  ptx_inst(E->b, "setp.ne.u32 $r, $r, 0", p, tid);
  ptx_inst(E->b, "@$r bra $l", p, skip_post);
  for (int a = 0; a < E->k->acc_count; a++) {
    char name[32];
    snprintf(name, sizeof name, "warp_acc%d", a);
    int bytes = ptx_type_byte_size(ptx_emit_shared_type(E->acc[a]));
    for (int w = 1; w < warps; w++) {
      PtxReg other = ptx_reg_new(E->b, ptx_emit_shared_type(E->acc[a]));
      ptx_inst(E->b, "ld.shared$s $r, [$s+$d]", ptx_emit_mov_suffix(E->acc[a].cls), other, name, w * bytes);
      if (!ptx_emit_accumulator_combine(E, plan, a, other)) return false;
    }
  }
  return true;
}

/* One warp (or block) per output element: the lanes stride over the
 * reduced space, their partials meet by shuffles in a fixed tree, the
 * warps' through shared memory; thread 0 runs POST. */
static bool reduce_row_emit(Emit *E, const RowPlan *plan, PtxKernelShape *shape) {
  const Kernel *k = E->k;
  int64_t n = ptx_emit_dims_product(k->rank, k->dims), order[AXLE_MAX_RANK];
  int threads = ptx_emit_dims_product(k->reduce_rank, k->reduce_dims) >= 4096 ? BLOCK_REDUCE_THREADS : WARP;
  PtxReg tid = ptx_reg_new(E->b, PTX_U32), tid64 = ptx_reg_new(E->b, PTX_U64), block = ptx_reg_new(E->b, PTX_U32);
  PtxReg first = ptx_reg_new(E->b, PTX_U64), stride = ptx_emit_grid_stride(E, true), p = ptx_reg_new(E->b, PTX_PRED);
  ptx_inst(E->b, "mov.u32 $r, %tid.x", tid);
  ptx_inst(E->b, "cvt.u64.u32 $r, $r", tid64, tid);
  ptx_inst(E->b, "mov.u32 $r, %ctaid.x", block);
  ptx_inst(E->b, "cvt.u64.u32 $r, $r", first, block);
  ptx_emit_accumulators_declare(E);
  for (int a = 0; threads > WARP && a < k->acc_count; a++) {
    char name[32];
    snprintf(name, sizeof name, "warp_acc%d", a);
    ptx_shared_declare(E->b, name, ptx_emit_shared_type(E->acc[a]), threads / WARP, 8);
  }
  ptx_emit_space_order(k, order);
  ptx_comment(E->b, "one output element per %s; lane partials, then a shuffle tree", threads > WARP ? "block" : "warp");
  GridLoop g = ptx_emit_grid_loop_open(E, first, n);
  ptx_emit_indices_recover(E, g.i, k->rank, k->dims, order, E->index);
  if (!block_emit(E, KBLOCK_PRE) || !ptx_emit_reduce_loop(E, tid64, threads)) return false;
  for (int offset = WARP / 2; offset > 0; offset /= 2)
    for (int a = 0; a < k->acc_count; a++)
      if (!ptx_emit_accumulator_combine(E, plan, a, ptx_emit_shuffle(E, "down", E->acc[a], offset))) return false;
  PtxLabel next = ptx_label_new(E->b, "next");
  if (threads > WARP) {
    if (!block_combine_emit(E, plan, threads, tid, next)) return false;
  } else {
    ptx_inst(E->b, "setp.ne.u32 $r, $r, 0", p, tid);
    ptx_inst(E->b, "@$r bra $l", p, next);
  }
  if (!block_emit(E, KBLOCK_POST)) return false;
  ptx_label_place(E->b, next);
  /* the shared slots are reused by the next output element */
  if (threads > WARP) ptx_inst(E->b, "bar.sync 0");
  ptx_emit_grid_loop_close(E, &g, stride);
  shape->strategy = threads > WARP ? "reduce.block" : "reduce.warp";
  shape->block_threads = threads;
  shape->blocks = n;
  return true;
}

/* ---- the entry ---- */

void ptx_entry_name(const char *kernel_name, char *out, size_t size) {
  size_t at = 0;
  if (size == 0) return;
  char first = kernel_name[0];
  if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_') && size > 1)
    out[at++] = '_';
  for (const char *p = kernel_name; *p && at + 1 < size; p++) {
    char c = *p;
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out[at++] = keep ? c : '_';
  }
  out[at] = 0;
}

static void kernel_describe(const Kernel *k, const char *strategy, StrBuf *sb) {
  strbuf_printf(sb, "kernel %s (%s): ", k->name, strategy);
  for (int o = 0; o < k->output_count; o++) {
    strbuf_printf(sb, "%sout%d ", o ? ", " : "", o);
    shape_print(sb, &k->outputs[o].shape, true);
  }
  strbuf_printf(sb, " from %d input%s", k->input_count, k->input_count == 1 ? "" : "s");
}

static void buffers_load(Emit *E) {
  char name[16];
  ptx_comment(E->b, "buffers");
  for (int i = 0; i < E->k->input_count; i++) {
    snprintf(name, sizeof name, "in%d", i);
    E->inputs[i] = ptx_param_load_global_pointer(E->b, name);
  }
  for (int o = 0; o < E->k->output_count; o++) {
    snprintf(name, sizeof name, "out%d", o);
    E->outputs[o] = ptx_param_load_global_pointer(E->b, name);
  }
}

bool ptx_kernel_emit(PtxBuilder *b, const Kernel *k, const char *entry, PtxKernelShape *shape, Status *st) {
  if (kernel_has_complex(k)) return ptx_complex_emit(b, k, entry, shape, st);   /* ptx_complex.c */
  Emit E = {.b = b, .k = k, .st = st};
  memset(shape, 0, sizeof *shape);
  if (!kernel_types_check(&E)) return false;
  RowPlan plan;
  bool row = k->kind == KERNEL_ROW ? ptx_row_plan_make(k, &plan) : row_plan_make(k, &plan);
  const char *tile = k->kind != KERNEL_ROW && !row ? ptx_tile_strategy(k) : NULL;  /* ptx_tile.c */
  const char *strategy = tile                                                      ? tile
                         : k->kind == KERNEL_ROW                                   ? (row ? "row.block" : "row.thread")
                         : k->kind == KERNEL_LOOP                                  ? "loop"
                         : !row                                                    ? "reduce.thread"
                         : ptx_emit_dims_product(k->reduce_rank, k->reduce_dims) >= 4096 ? "reduce.block"
                                                                                  : "reduce.warp";
  StrBuf what = {0};
  kernel_describe(k, strategy, &what);
  ptx_kernel_begin(b, entry, what.data);
  strbuf_free(&what);
  char name[16];
  for (int i = 0; i < k->input_count; i++) snprintf(name, sizeof name, "in%d", i), ptx_kernel_param(b, PTX_U64, name);
  for (int o = 0; o < k->output_count; o++) snprintf(name, sizeof name, "out%d", o), ptx_kernel_param(b, PTX_U64, name);
  E.values = mem_calloc((size_t)k->op_count + 1, sizeof *E.values);
  buffers_load(&E);
  bool ok = tile                     ? ptx_tile_emit(&E, shape)
            : k->kind == KERNEL_ROW    ? ptx_row_emit(&E, row ? &plan : NULL, shape)
            : k->kind == KERNEL_LOOP ? loop_kernel_emit(&E, shape)
            : row                  ? reduce_row_emit(&E, &plan, shape)
                                   : reduce_thread_emit(&E, shape);
  mem_free(E.values);
  if (!ok) {
    ptx_kernel_abandon(b);
    return false;
  }
  ptx_kernel_set_max_threads(b, shape->block_threads);
  ptx_inst(b, "ret");
  ptx_kernel_end(b);
  if (shape->blocks < 1) shape->blocks = 1;
  if (shape->blocks > GRID_CAP) shape->blocks = GRID_CAP;
  return true;
}
