/* Shared-memory tiles in PTX: the two kernel shapes whose global accesses
 * are not coalesced when one thread computes one output element in the
 * output's own order (ptx_kernel.c's loop and reduce.thread).
 *
 * reduce.column   a reduction whose loads read along an output dimension
 *                 (reduce f32[4096,1024] over dim 0: each output is a
 *                 column). A block takes 32 neighbouring outputs and up
 *                 to 8 warps, one slice each: lane l of slice s folds the
 *                 reduced points s, s + 8, s + 16 ... of output l, so a
 *                 warp's 32 loads are neighbours in memory. The slices'
 *                 partials meet in shared memory, where slice 0 combines
 *                 them in slice order and runs POST: a fixed order, so
 *                 the bits do not change from run to run (they differ
 *                 from the interpreter's in-order sum within the
 *                 reduction's tolerance). Needs the plain combiners from
 *                 their identity that reduce.warp needs.
 *   transpose.tile a loop kernel that reads an operand whose most minor
 *                 dimension is another than the output's (a transpose, a
 *                 copy to another layout, a fusion around one). A block
 *                 of 32 x 8 threads takes a 32 x 32 tile of those two
 *                 dimensions: it first reads the operand with the lanes
 *                 along the operand's minor dim into shared memory, then
 *                 computes and stores the outputs with the lanes along
 *                 the output's minor dim, reading the operand's values
 *                 back from the tile across. Rows are padded to 33 words
 *                 so that reading a column of the tile hits 32 different
 *                 banks. Both global reads and writes are coalesced.
 *
 * Both reuse the emitter's op walk (ptx_emit_block_phase) unchanged: the
 * transpose's read and write halves run derived kernels in which a tiled
 * load's value passes through an accumulator register (an ACC_WRITE in
 * PRE is a move into it, an ACC_READ a move out of it). */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_kernel_internal.h"

enum {
  TILE = 32,                /* outputs per column block; the transpose tile's side */
  COLUMN_SLICES = 8,        /* warps per column block */
  TILE_ROWS = 8,            /* warps per transpose block: each does 4 of the 32 rows */
  TILE_PITCH = TILE + 1,    /* shared row length: a column read meets every bank once */
  TILE_MAX_LOADS = 4,       /* tiled operands per transpose kernel */
  TILE_MIN_EXTENT = 16,     /* below this a tile is mostly idle threads */
};

/* ---- the column reduction's plan ---- */

/* Every load of the reduced space reads its buffer's most minor dimension
 * at the output space's fastest index: neighbouring outputs are
 * neighbouring addresses. */
static bool loads_are_columns(const Kernel *k) {
  int64_t order[AXLE_MAX_RANK];
  ptx_emit_space_order(k, order);
  int columns = 0;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->kop != KOP_LOAD || op->block != KBLOCK_REDUCE) continue;
    const Shape *s = &k->inputs[op->buffer].shape;
    if (s->rank == 0) continue;
    const KernelOp *minor = &k->ops[op->args[s->minor_to_major[0]]];
    if (minor->kop != KOP_INDEX || minor->dim != order[0]) return false;
    columns++;
  }
  return columns > 0;
}

static bool column_plan_make(const Kernel *k, RowPlan *plan) {
  if (k->kind != KERNEL_REDUCE || k->rank == 0 || k->reduce_rank == 0 || k->acc_count == 0 || k->output_count == 0)
    return false;
  return loads_are_columns(k) && kernel_reduction_splits(k, plan->combiner);
}

/* ---- the column reduction ---- */

static void column_slot_name(int a, char *name, size_t size) { snprintf(name, size, "column_acc%d", a); }

/* Every thread leaves its partial at [slice][lane] (its thread number),
 * and the block waits for all of them. */
static void column_partials_store(Emit *E, PtxReg tid) {
  for (int a = 0; a < E->k->acc_count; a++) {
    char name[32];
    column_slot_name(a, name, sizeof name);
    int bytes = ptx_type_byte_size(ptx_emit_shared_type(E->acc[a]));
    PtxReg base = ptx_reg_new(E->b, PTX_U32), at = ptx_reg_new(E->b, PTX_U32);
    ptx_inst(E->b, "mov.u32 $r, $s", base, name);
    ptx_inst(E->b, "mad.lo.u32 $r, $r, $d, $r", at, tid, bytes, base);
    ptx_inst(E->b, "st.shared$s [$r], $r", ptx_emit_mov_suffix(E->acc[a].cls), at, E->acc[a]);
  }
  ptx_inst(E->b, "bar.sync 0");
}

/* Slice 0: slices 1, 2 ... combined into its own partial in that order
 * (a fixed order: the same bits every run), then POST. */
static bool column_finish_emit(Emit *E, const RowPlan *plan, int slices, PtxReg lane) {
  for (int a = 0; a < E->k->acc_count; a++) {
    char name[32];
    column_slot_name(a, name, sizeof name);
    int bytes = ptx_type_byte_size(ptx_emit_shared_type(E->acc[a]));
    PtxReg base = ptx_reg_new(E->b, PTX_U32), at = ptx_reg_new(E->b, PTX_U32);
    ptx_inst(E->b, "mov.u32 $r, $s", base, name);
    ptx_inst(E->b, "mad.lo.u32 $r, $r, $d, $r", at, lane, bytes, base);
    for (int s = 1; s < slices; s++) {
      PtxReg other = ptx_reg_new(E->b, ptx_emit_shared_type(E->acc[a]));
      ptx_inst(E->b, "ld.shared$s $r, [$r+$d]", ptx_emit_mov_suffix(E->acc[a].cls), other, at,
               s * TILE * bytes);
      if (!ptx_emit_accumulator_combine(E, plan, a, other)) return false;
    }
  }
  return ptx_emit_block_phase(E, KBLOCK_POST, -1);
}

static bool column_emit(Emit *E, const RowPlan *plan, PtxKernelShape *shape) {
  const Kernel *k = E->k;
  int64_t n = ptx_emit_dims_product(k->rank, k->dims), reduced = ptx_emit_dims_product(k->reduce_rank, k->reduce_dims);
  int slices = reduced < COLUMN_SLICES ? (int)(reduced > 0 ? reduced : 1) : COLUMN_SLICES;
  int64_t tiles = (n + TILE - 1) / TILE, order[AXLE_MAX_RANK];
  PtxBuilder *b = E->b;
  PtxReg tid = ptx_reg_new(b, PTX_U32), lane = ptx_reg_new(b, PTX_U32), slice = ptx_reg_new(b, PTX_U32);
  PtxReg lane64 = ptx_reg_new(b, PTX_U64), slice64 = ptx_reg_new(b, PTX_U64), block = ptx_reg_new(b, PTX_U32);
  PtxReg first = ptx_reg_new(b, PTX_U64), stride = ptx_emit_grid_stride(E, true);
  ptx_inst(b, "mov.u32 $r, %tid.x", tid);
  ptx_inst(b, "and.b32 $r, $r, 31", lane, tid);
  ptx_inst(b, "shr.u32 $r, $r, 5", slice, tid);
  ptx_inst(b, "cvt.u64.u32 $r, $r", lane64, lane);
  ptx_inst(b, "cvt.u64.u32 $r, $r", slice64, slice);
  ptx_inst(b, "mov.u32 $r, %ctaid.x", block);
  ptx_inst(b, "cvt.u64.u32 $r, $r", first, block);
  ptx_emit_accumulators_declare(E);
  for (int a = 0; a < k->acc_count; a++) {
    char name[32];
    column_slot_name(a, name, sizeof name);
    ptx_shared_declare(b, name, ptx_emit_shared_type(E->acc[a]), slices * TILE, 8);
  }
  ptx_emit_space_order(k, order);
  ptx_comment(b, "32 outputs per block, %d slices of the reduced space; partials meet in shared memory", slices);
  GridLoop g = ptx_emit_grid_loop_open(E, first, tiles);
  PtxReg i = ptx_reg_new(b, PTX_U64), outside = ptx_reg_new(b, PTX_PRED), p = ptx_reg_new(b, PTX_PRED);
  PtxLabel reduced_label = ptx_label_new(b, "reduced"), next = ptx_label_new(b, "next");
  ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", i, g.i, TILE, lane64);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", outside, i, n);
  ptx_inst(b, "@$r bra $l", outside, reduced_label);
  ptx_emit_indices_recover(E, i, k->rank, k->dims, order, E->index);
  if (!ptx_emit_block_phase(E, KBLOCK_PRE, -1) || !ptx_emit_reduce_loop(E, slice64, slices)) return false;
  ptx_label_place(b, reduced_label);
  column_partials_store(E, tid);
  ptx_inst(b, "setp.ne.u32 $r, $r, 0", p, slice);
  ptx_inst(b, "@$r bra $l", p, next);
  ptx_inst(b, "@$r bra $l", outside, next);
  if (!column_finish_emit(E, plan, slices, lane)) return false;
  ptx_label_place(b, next);
  /* the slots are written again for the next 32 outputs */
  ptx_inst(b, "bar.sync 0");
  ptx_emit_grid_loop_close(E, &g, stride);
  shape->strategy = "reduce.column";
  shape->block_threads = slices * TILE;
  shape->blocks = tiles;
  return true;
}

/* ---- the transpose's plan ---- */

typedef struct TransposePlan {
  int dim_in, dim_out;        /* space dims that are the tiled loads' and the outputs' most minor */
  int load_count;
  int loads[TILE_MAX_LOADS];  /* op numbers of the tiled loads */
} TransposePlan;

static bool op_is_index(const Kernel *k, int value, int dim) {
  return k->ops[value].kop == KOP_INDEX && k->ops[value].dim == dim;
}

/* Every store at the output point with the outputs' minor dim dim_out;
 * loads whose minor dim is read at another space index dim_in are tiled
 * (up to four, one dim_in; pred values stay direct). */
static bool transpose_plan_make(const Kernel *k, TransposePlan *t) {
  if (k->kind != KERNEL_LOOP || k->rank < 2 || k->output_count == 0) return false;
  t->dim_out = (int)k->outputs[0].shape.minor_to_major[0];
  t->dim_in = -1;
  t->load_count = 0;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->kop == KOP_STORE) {
      const Shape *s = &k->outputs[op->buffer].shape;
      if (s->rank != k->rank || s->minor_to_major[0] != t->dim_out) return false;
      for (int d = 0; d < s->rank; d++)
        if (!op_is_index(k, op->args[1 + d], d)) return false;
    }
    if (op->kop != KOP_LOAD || op->type == TYPE_PRED) continue;
    const Shape *s = &k->inputs[op->buffer].shape;
    if (s->rank == 0) continue;
    const KernelOp *minor = &k->ops[op->args[s->minor_to_major[0]]];
    if (minor->kop != KOP_INDEX || minor->dim == t->dim_out) continue;
    if (t->dim_in < 0) t->dim_in = minor->dim;
    if (minor->dim == t->dim_in && t->load_count < TILE_MAX_LOADS) t->loads[t->load_count++] = i;
  }
  return t->load_count > 0 && k->dims[t->dim_in] >= TILE_MIN_EXTENT && k->dims[t->dim_out] >= TILE_MIN_EXTENT;
}

/* The read half: only the ops the tiled loads need, then accumulator a
 * takes load a's value. Shares k's buffers; free with mem_free(r->ops), mem_free(r). */
static Kernel *reader_kernel_make(const Kernel *k, const TransposePlan *t) {
  bool *need = mem_calloc((size_t)k->op_count + 1, sizeof *need);
  int *renumber = mem_calloc((size_t)k->op_count + 1, sizeof *renumber);
  for (int a = 0; a < t->load_count; a++) need[t->loads[a]] = true;
  for (int i = k->op_count - 1; i >= 0; i--)
    for (int a = 0; need[i] && a < k->ops[i].arg_count; a++) need[k->ops[i].args[a]] = true;
  Kernel *r = mem_calloc(1, sizeof *r);
  *r = *k;
  r->ops = mem_calloc((size_t)k->op_count + TILE_MAX_LOADS, sizeof *r->ops);
  int n = 0;
  for (int i = 0; i < k->op_count; i++) {
    if (!need[i]) continue;
    KernelOp op = k->ops[i];
    for (int a = 0; a < op.arg_count; a++) op.args[a] = renumber[op.args[a]];
    renumber[i] = n;
    r->ops[n++] = op;
  }
  for (int a = 0; a < t->load_count; a++) {
    KernelOp w = {.kop = KOP_ACC_WRITE, .block = KBLOCK_PRE, .type = k->ops[t->loads[a]].type, .acc = a,
                  .arg_count = 1, .args = {renumber[t->loads[a]]}, .origin = k->ops[t->loads[a]].origin};
    r->ops[n++] = w;
    r->acc_types[a] = w.type;
  }
  r->op_count = r->op_capacity = n;
  r->acc_count = t->load_count;
  mem_free(need);
  mem_free(renumber);
  return r;
}

/* The write half: the whole body, each tiled load become a read of its
 * accumulator (which holds the value from the tile). */
static Kernel *writer_kernel_make(const Kernel *k, const TransposePlan *t) {
  Kernel *w = mem_calloc(1, sizeof *w);
  *w = *k;
  w->ops = mem_calloc((size_t)k->op_count + 1, sizeof *w->ops);
  memcpy(w->ops, k->ops, (size_t)k->op_count * sizeof *k->ops);
  for (int a = 0; a < t->load_count; a++) {
    KernelOp *op = &w->ops[t->loads[a]];
    op->kop = KOP_ACC_READ;
    op->acc = a;
    op->arg_count = 0;
    w->acc_types[a] = op->type;
  }
  w->acc_count = t->load_count;
  return w;
}

static void derived_kernel_free(Kernel *k) {
  if (!k) return;
  mem_free(k->ops);
  mem_free(k);
}

/* ---- the transpose ---- */

static void tile_slot_name(int a, char *name, size_t size) { snprintf(name, size, "tile%d", a); }

/* The shared address of tile a's element [row][column]. */
static PtxReg tile_address(Emit *E, int a, PtxReg row, PtxReg column) {
  char name[32];
  tile_slot_name(a, name, sizeof name);
  int bytes = ptx_type_byte_size(ptx_emit_shared_type(E->acc[a]));
  PtxReg base = ptx_reg_new(E->b, PTX_U32), element = ptx_reg_new(E->b, PTX_U32), at = ptx_reg_new(E->b, PTX_U32);
  ptx_inst(E->b, "mov.u32 $r, $s", base, name);
  ptx_inst(E->b, "mad.lo.u32 $r, $r, $d, $r", element, row, TILE_PITCH, column);
  ptx_inst(E->b, "mad.lo.u32 $r, $r, $d, $r", at, element, bytes, base);
  return at;
}

typedef struct TileCorner {
  PtxReg in0, out0;     /* the tile's first index along dim_in and dim_out */
  PtxReg lane, warp;    /* u32 */
  PtxReg lane64, warp64;
} TileCorner;

/* Points the tile's two dims at corner + offsets (lane along `along`),
 * skipping to `skip` outside the space. */
static void tile_point_set(Emit *E, const TransposePlan *t, const TileCorner *c, bool lanes_along_in, int row,
                           PtxLabel skip) {
  const Kernel *k = E->k;
  PtxReg in = ptx_reg_new(E->b, PTX_S64), out = ptx_reg_new(E->b, PTX_S64), p = ptx_reg_new(E->b, PTX_PRED);
  PtxReg across = ptx_reg_new(E->b, PTX_U64);
  ptx_inst(E->b, "add.s64 $r, $r, $d", across, c->warp64, row);
  ptx_inst(E->b, "add.s64 $r, $r, $r", in, c->in0, lanes_along_in ? c->lane64 : across);
  ptx_inst(E->b, "add.s64 $r, $r, $r", out, c->out0, lanes_along_in ? across : c->lane64);
  ptx_inst(E->b, "setp.ge.u64 $r, $r, $D", p, in, k->dims[t->dim_in]);
  ptx_inst(E->b, "@$r bra $l", p, skip);
  ptx_inst(E->b, "setp.ge.u64 $r, $r, $D", p, out, k->dims[t->dim_out]);
  ptx_inst(E->b, "@$r bra $l", p, skip);
  E->index[t->dim_in] = in;
  E->index[t->dim_out] = out;
}

/* Phase one: the operand read with lanes along dim_in, into
 * tile[row along dim_out][lane along dim_in]. */
static bool tile_read_emit(Emit *E, const Kernel *reader, const TransposePlan *t, const TileCorner *c) {
  const Kernel *k = E->k;
  PtxReg *values = E->values;
  E->values = mem_calloc((size_t)reader->op_count + 1, sizeof *E->values);
  bool ok = true;
  for (int row = 0; ok && row < TILE; row += TILE_ROWS) {
    PtxLabel skip = ptx_label_new(E->b, "read_skip");
    PtxReg local = ptx_reg_new(E->b, PTX_U32);
    ptx_inst(E->b, "add.u32 $r, $r, $d", local, c->warp, row);
    tile_point_set(E, t, c, true, row, skip);
    E->k = reader;
    ok = ptx_emit_block_phase(E, KBLOCK_PRE, -1);
    E->k = k;
    for (int a = 0; ok && a < t->load_count; a++)
      ptx_inst(E->b, "st.shared$s [$r], $r", ptx_emit_mov_suffix(E->acc[a].cls), tile_address(E, a, local, c->lane),
               E->acc[a]);
    ptx_label_place(E->b, skip);
  }
  mem_free(E->values);
  E->values = values;
  return ok;
}

/* Phase two: lanes along dim_out, each tiled value read across the tile,
 * then the kernel's body and its stores. */
static bool tile_write_emit(Emit *E, const Kernel *writer, const TransposePlan *t, const TileCorner *c) {
  const Kernel *k = E->k;
  bool ok = true;
  for (int row = 0; ok && row < TILE; row += TILE_ROWS) {
    PtxLabel skip = ptx_label_new(E->b, "write_skip");
    PtxReg local = ptx_reg_new(E->b, PTX_U32);
    ptx_inst(E->b, "add.u32 $r, $r, $d", local, c->warp, row);
    tile_point_set(E, t, c, false, row, skip);
    for (int a = 0; a < t->load_count; a++)
      ptx_inst(E->b, "ld.shared$s $r, [$r]", ptx_emit_mov_suffix(E->acc[a].cls), E->acc[a],
               tile_address(E, a, c->lane, local));
    E->k = writer;
    ok = ptx_emit_block_phase(E, KBLOCK_PRE, -1);
    E->k = k;
    ptx_label_place(E->b, skip);
  }
  return ok;
}

/* The tile's corner from its number: dim_out's tile fastest, then
 * dim_in's, then the other dims of the space (recovered with the two
 * tiled dims' extents taken as 1). */
static void tile_corner_recover(Emit *E, const TransposePlan *t, PtxReg tile, TileCorner *c) {
  const Kernel *k = E->k;
  int64_t tiles_in = (k->dims[t->dim_in] + TILE - 1) / TILE, tiles_out = (k->dims[t->dim_out] + TILE - 1) / TILE;
  int64_t rest_dims[AXLE_MAX_RANK], order[AXLE_MAX_RANK];
  memcpy(rest_dims, k->dims, sizeof rest_dims);
  rest_dims[t->dim_in] = rest_dims[t->dim_out] = 1;
  PtxReg q = ptx_reg_new(E->b, PTX_U64), rest = ptx_reg_new(E->b, PTX_U64);
  PtxReg tile_in = ptx_reg_new(E->b, PTX_U64), tile_out = ptx_reg_new(E->b, PTX_U64);
  ptx_inst(E->b, "rem.u64 $r, $r, $D", tile_out, tile, tiles_out);
  ptx_inst(E->b, "div.u64 $r, $r, $D", q, tile, tiles_out);
  ptx_inst(E->b, "rem.u64 $r, $r, $D", tile_in, q, tiles_in);
  ptx_inst(E->b, "div.u64 $r, $r, $D", rest, q, tiles_in);
  ptx_emit_space_order(k, order);
  ptx_emit_indices_recover(E, rest, k->rank, rest_dims, order, E->index);
  c->in0 = ptx_reg_new(E->b, PTX_U64);
  c->out0 = ptx_reg_new(E->b, PTX_U64);
  ptx_inst(E->b, "mul.lo.u64 $r, $r, $d", c->in0, tile_in, TILE);
  ptx_inst(E->b, "mul.lo.u64 $r, $r, $d", c->out0, tile_out, TILE);
}

static bool transpose_emit(Emit *E, const TransposePlan *t, PtxKernelShape *shape) {
  const Kernel *k = E->k;
  PtxBuilder *b = E->b;
  int64_t tiles = ptx_emit_dims_product(k->rank, k->dims) / (k->dims[t->dim_in] * k->dims[t->dim_out]) *
                  ((k->dims[t->dim_in] + TILE - 1) / TILE) * ((k->dims[t->dim_out] + TILE - 1) / TILE);
  TileCorner c = {.lane = ptx_reg_new(b, PTX_U32), .warp = ptx_reg_new(b, PTX_U32),
                  .lane64 = ptx_reg_new(b, PTX_U64), .warp64 = ptx_reg_new(b, PTX_U64)};
  PtxReg tid = ptx_reg_new(b, PTX_U32), block = ptx_reg_new(b, PTX_U32), first = ptx_reg_new(b, PTX_U64);
  PtxReg stride = ptx_emit_grid_stride(E, true);
  ptx_inst(b, "mov.u32 $r, %tid.x", tid);
  ptx_inst(b, "and.b32 $r, $r, 31", c.lane, tid);
  ptx_inst(b, "shr.u32 $r, $r, 5", c.warp, tid);
  ptx_inst(b, "cvt.u64.u32 $r, $r", c.lane64, c.lane);
  ptx_inst(b, "cvt.u64.u32 $r, $r", c.warp64, c.warp);
  ptx_inst(b, "mov.u32 $r, %ctaid.x", block);
  ptx_inst(b, "cvt.u64.u32 $r, $r", first, block);
  for (int a = 0; a < t->load_count; a++) {
    char name[32];
    tile_slot_name(a, name, sizeof name);
    E->acc[a] = ptx_emit_value_new(E, k->ops[t->loads[a]].type);
    ptx_shared_declare(b, name, ptx_emit_shared_type(E->acc[a]), TILE * TILE_PITCH, 8);
  }
  Kernel *reader = reader_kernel_make(k, t), *writer = writer_kernel_make(k, t);
  ptx_comment(b, "32x32 tiles of dims %d (read along) and %d (written along) through shared memory", t->dim_in,
              t->dim_out);
  GridLoop g = ptx_emit_grid_loop_open(E, first, tiles);
  tile_corner_recover(E, t, g.i, &c);
  bool ok = tile_read_emit(E, reader, t, &c);
  ptx_inst(b, "bar.sync 0");
  ok = ok && tile_write_emit(E, writer, t, &c);
  /* the tiles are written again for the next tile */
  ptx_inst(b, "bar.sync 0");
  ptx_emit_grid_loop_close(E, &g, stride);
  derived_kernel_free(reader);
  derived_kernel_free(writer);
  shape->strategy = "transpose.tile";
  shape->block_threads = TILE * TILE_ROWS;
  shape->blocks = tiles;
  return ok;
}

/* ---- the hook ---- */

const char *ptx_tile_strategy(const Kernel *k) {
  RowPlan plan;
  TransposePlan t;
  if (column_plan_make(k, &plan)) return "reduce.column";
  if (transpose_plan_make(k, &t)) return "transpose.tile";
  return NULL;
}

bool ptx_tile_emit(Emit *E, PtxKernelShape *shape) {
  RowPlan plan;
  TransposePlan t;
  if (column_plan_make(E->k, &plan)) return column_emit(E, &plan, shape);
  if (transpose_plan_make(E->k, &t)) return transpose_emit(E, &t, shape);
  return status_error(E->st, STATUS_UNSUPPORTED, "kernel %s: no tile strategy fits", E->k->name);
}
