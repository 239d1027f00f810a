/* The kernels of the GPU's sort: a bottom-up merge sort of positions.
 *
 * Every row's order starts as 0..n-1, sorted first in tiles of up to 256
 * positions in shared memory (one block per tile, barriers between
 * passes); each global merge pass then doubles the sorted runs (width
 * 256, 512, ... < n), ping-ponging between two scratch arrays; a gather
 * then moves every operand through the final order. A
 * merge pass gives every position its own thread, which finds where its
 * element lands by one binary search in the other run, so a pass is
 * parallel over all elements of all rows and takes log2(width) comparator
 * calls per thread; no thread waits on another, so the passes need no
 * shared memory or barriers and any grid is correct (grid-stride loops).
 * The result is the stable order, which is the evaluator's (it merges the
 * same runs, left first on ties) whenever the comparator is a strict weak
 * order, as HLO requires of it. */
#include <stdlib.h>

#include "emit_ptx/ptx_sort.h"

PtxSortLoop ptx_sort_loop_open(PtxBuilder *b, int64_t total) {
  PtxSortLoop l = {.i = ptx_global_thread_index(b), .stride = ptx_reg_new(b, PTX_U64)};
  PtxReg blocks = ptx_reg_new(b, PTX_U32), threads = ptx_reg_new(b, PTX_U32), p = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "mov.u32 $r, %nctaid.x", blocks);
  ptx_inst(b, "mov.u32 $r, %ntid.x", threads);
  ptx_inst(b, "mul.wide.u32 $r, $r, $r", l.stride, blocks, threads);
  l.head = ptx_label_new(b, "head");
  l.done = ptx_label_new(b, "done");
  ptx_label_place(b, l.head);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", p, l.i, total);
  ptx_inst(b, "@$r bra $l", p, l.done);
  return l;
}

void ptx_sort_loop_close(PtxBuilder *b, const PtxSortLoop *l) {
  ptx_inst(b, "add.u64 $r, $r, $r", l->i, l->i, l->stride);
  ptx_inst(b, "bra.uni $l", l->head);
  ptx_label_place(b, l->done);
  ptx_inst(b, "ret");
}

void ptx_sort_divide(PtxBuilder *b, PtxReg a, int64_t d, PtxReg *q, PtxReg *r) {
  *q = ptx_reg_new(b, PTX_U64);
  *r = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "div.u64 $r, $r, $D", *q, a, d);
  ptx_inst(b, "mul.lo.u64 $r, $r, $D", *r, *q, d);
  ptx_inst(b, "sub.u64 $r, $r, $r", *r, a, *r);
}

/* The physical offset of row r's element 0 in a row-major array whose
 * sorted dimension has extent `extent` (n for operands, k for top-k's
 * outputs): (r / inner) * extent * inner + r % inner. */
static PtxReg row_base(PtxBuilder *b, const PtxSortRows *rows, PtxReg r, int64_t extent) {
  PtxReg outer, in, base = ptx_reg_new(b, PTX_U64);
  ptx_sort_divide(b, r, rows->inner, &outer, &in);
  ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", base, outer, extent * rows->inner, in);
  return base;
}

/* The address of element `position` of a row: pointer + (base + position * inner) * bytes. */
static PtxReg row_element_address(PtxBuilder *b, PtxReg pointer, PtxReg base, PtxReg position, int64_t inner,
                                  int bytes) {
  PtxReg offset = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", offset, position, inner, base);
  return ptx_element_address(b, pointer, offset, bytes);
}

/* The s32 order entry at index (row * n + j), widened to u64. */
static PtxReg order_load(PtxBuilder *b, PtxReg order, PtxReg index) {
  PtxReg address = ptx_element_address(b, order, index, 4), v = ptx_reg_new(b, PTX_S32);
  PtxReg wide = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "ld.global.s32 $r, [$r]", v, address);
  ptx_inst(b, "cvt.u64.u32 $r, $r", wide, v);
  return wide;
}

static void order_store(PtxBuilder *b, PtxReg order, PtxReg index, PtxReg value) {
  PtxReg address = ptx_element_address(b, order, index, 4), v = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "cvt.u32.u64 $r, $r", v, value);
  ptx_inst(b, "st.global.u32 [$r], $r", address, v);
}

PtxReg ptx_sort_value_load(PtxBuilder *b, ElementType t, PtxReg address) {
  if (t == TYPE_PRED) {
    PtxReg byte = ptx_reg_new(b, PTX_U16), p = ptx_reg_new(b, PTX_PRED);
    ptx_inst(b, "ld.global.u8 $r, [$r]", byte, address);
    ptx_inst(b, "setp.ne.u16 $r, $r, 0", p, byte);
    return p;
  }
  PtxType pt = PTX_F32;
  if (t == TYPE_C64) pt = PTX_B64;   /* both parts in one register (ptx_scalar_complex.c) */
  else ptx_type_of_element(t, &pt);
  PtxReg v = ptx_reg_new(b, pt);
  ptx_inst(b, "ld.global$s $r, [$r]", ptx_type_suffix(pt), v, address);
  return v;
}

void ptx_sort_value_store(PtxBuilder *b, ElementType t, PtxReg address, PtxReg v) {
  if (t == TYPE_PRED) {
    PtxReg byte = ptx_reg_new(b, PTX_U16);
    ptx_inst(b, "selp.u16 $r, 1, 0, $r", byte, v);
    ptx_inst(b, "st.global.u8 [$r], $r", address, byte);
    return;
  }
  PtxType pt = PTX_F32;
  if (t == TYPE_C64) pt = PTX_B64;
  else ptx_type_of_element(t, &pt);
  ptx_inst(b, "st.global$s [$r], $r", ptx_type_suffix(pt), address, v);
}

/* The merge kernels' registers and what their comparator needs. */
typedef struct MergeState {
  const PtxSortRows *rows;
  const PtxSortOperand *operands;
  int operand_count;
  PtxSortLess less;
  const void *ctx;
  PtxReg from, to, operands_at[64];
  PtxReg base;            /* the row's element 0 in the operands */
  PtxReg order_row;       /* global passes: r * n, the row's start in the order arrays */
  const char *shared;     /* tile passes: the shared order array read, else NULL */
  PtxReg me, right;       /* this thread's position, and whether it is in the right run */
} MergeState;

/* less(lhs, rhs) for positions lhs and rhs of the row, through the operands. */
static bool merge_less(PtxBuilder *b, const MergeState *s, PtxReg lhs, PtxReg rhs, PtxReg *out, Status *st) {
  PtxReg values[128];
  for (int i = 0; i < s->operand_count; i++) {
    values[2 * i] = values[2 * i + 1] = (PtxReg){PTX_REG_B32, -1};
    if (!s->operands[i].read) continue;
    ElementType t = s->operands[i].type;
    int bytes = type_byte_size(t);
    values[2 * i] = ptx_sort_value_load(b, t, row_element_address(b, s->operands_at[i], s->base, lhs, s->rows->inner, bytes));
    values[2 * i + 1] =
        ptx_sort_value_load(b, t, row_element_address(b, s->operands_at[i], s->base, rhs, s->rows->inner, bytes));
  }
  return s->less(s->ctx, b, values, out, st);
}

/* The shared address of entry `index` (u64) of the s32 array `name`. */
static PtxReg shared_entry(PtxBuilder *b, const char *name, PtxReg index) {
  PtxReg base = ptx_reg_new(b, PTX_U32), at = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mov.u32 $r, $s", base, name);
  ptx_inst(b, "cvt.u32.u64 $r, $r", at, index);
  ptx_inst(b, "mad.lo.u32 $r, $r, 4, $r", at, at, base);
  return at;
}

static PtxReg shared_order_load(PtxBuilder *b, const char *name, PtxReg index) {
  PtxReg v = ptx_reg_new(b, PTX_U32), wide = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "ld.shared.u32 $r, [$r]", v, shared_entry(b, name, index));
  ptx_inst(b, "cvt.u64.u32 $r, $r", wide, v);
  return wide;
}

static void shared_order_store(PtxBuilder *b, const char *name, PtxReg index, PtxReg value) {
  PtxReg v = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "cvt.u32.u64 $r, $r", v, value);
  ptx_inst(b, "st.shared.u32 [$r], $r", shared_entry(b, name, index), v);
}

/* The binary search of one merge step: the number of the other run's
 * elements in [start, end) that go before this thread's element. A left
 * element goes after the right run's elements e with less(e, me); a right
 * element after the left run's elements e with !less(me, e). Both
 * conditions hold on a prefix of the other (sorted) run. */
static bool merge_search(PtxBuilder *b, const MergeState *s, PtxReg start, PtxReg end, Status *st) {
  PtxLabel head = ptx_label_new(b, "search"), done = ptx_label_new(b, "found");
  PtxReg p = ptx_reg_new(b, PTX_PRED), mid = ptx_reg_new(b, PTX_U64), index = ptx_reg_new(b, PTX_U64);
  PtxReg lhs = ptx_reg_new(b, PTX_U64), rhs = ptx_reg_new(b, PTX_U64), go = ptx_reg_new(b, PTX_PRED);
  ptx_label_place(b, head);
  ptx_inst(b, "setp.ge.u64 $r, $r, $r", p, start, end);
  ptx_inst(b, "@$r bra $l", p, done);
  ptx_inst(b, "add.u64 $r, $r, $r", mid, start, end);
  ptx_inst(b, "shr.u64 $r, $r, 1", mid, mid);
  PtxReg candidate;
  if (s->shared) {
    candidate = shared_order_load(b, s->shared, mid);
  } else {
    ptx_inst(b, "add.u64 $r, $r, $r", index, s->order_row, mid);
    candidate = order_load(b, s->from, index);
  }
  ptx_inst(b, "selp.b64 $r, $r, $r, $r", lhs, s->me, candidate, s->right);
  ptx_inst(b, "selp.b64 $r, $r, $r, $r", rhs, candidate, s->me, s->right);
  PtxReg is_less;
  if (!merge_less(b, s, lhs, rhs, &is_less, st)) return false;
  /* left: go past the candidate when less(candidate, me); right: when !less(me, candidate) */
  ptx_inst(b, "xor.pred $r, $r, $r", go, is_less, s->right);
  ptx_inst(b, "@$r add.u64 $r, $r, 1", go, start, mid);
  ptx_inst(b, "@!$r mov.u64 $r, $r", go, end, mid);
  ptx_inst(b, "bra.uni $l", head);
  ptx_label_place(b, done);
  return true;
}

/* Where the element at index j of runs of `width` within [0, limit) goes
 * (s->me holds it): *dest, relative to the same origin as j. */
static bool merge_place(PtxBuilder *b, MergeState *s, PtxReg j, PtxReg width, PtxReg limit, PtxReg *dest,
                        Status *st) {
  /* lo = j - j % (2 width); mid = min(lo + width, limit); hi = min(lo + 2 width, limit) */
  PtxReg pair = ptx_reg_new(b, PTX_U64), lo = ptx_reg_new(b, PTX_U64), mid = ptx_reg_new(b, PTX_U64);
  PtxReg hi = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "shl.b64 $r, $r, 1", pair, width);
  ptx_inst(b, "rem.u64 $r, $r, $r", lo, j, pair);
  ptx_inst(b, "sub.u64 $r, $r, $r", lo, j, lo);
  ptx_inst(b, "add.u64 $r, $r, $r", mid, lo, width);
  ptx_inst(b, "min.u64 $r, $r, $r", mid, mid, limit);
  ptx_inst(b, "add.u64 $r, $r, $r", hi, lo, pair);
  ptx_inst(b, "min.u64 $r, $r, $r", hi, hi, limit);
  s->right = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "setp.ge.u64 $r, $r, $r", s->right, j, mid);
  /* the other run: [mid, hi) for a left element, [lo, mid) for a right one */
  PtxReg start = ptx_reg_new(b, PTX_U64), end = ptx_reg_new(b, PTX_U64), other = ptx_reg_new(b, PTX_U64);
  PtxReg own = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "selp.b64 $r, $r, $r, $r", start, lo, mid, s->right);
  ptx_inst(b, "selp.b64 $r, $r, $r, $r", end, mid, hi, s->right);
  ptx_inst(b, "selp.b64 $r, $r, $r, $r", own, mid, lo, s->right);
  ptx_inst(b, "mov.u64 $r, $r", other, start);
  if (!merge_search(b, s, start, end, st)) return false;
  /* destination: lo + (j - own run's start) + (found - other run's start) */
  *dest = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "sub.u64 $r, $r, $r", *dest, j, own);
  ptx_inst(b, "add.u64 $r, $r, $r", *dest, *dest, lo);
  ptx_inst(b, "add.u64 $r, $r, $r", *dest, *dest, start);
  ptx_inst(b, "sub.u64 $r, $r, $r", *dest, *dest, other);
  return true;
}

static void operand_params(PtxBuilder *b, MergeState *s) {
  char name[16];
  for (int i = 0; i < s->operand_count; i++) snprintf(name, sizeof name, "op%d", i), ptx_kernel_param(b, PTX_U64, name);
}

static void operand_pointers(PtxBuilder *b, MergeState *s) {
  char name[16];
  for (int i = 0; i < s->operand_count; i++)
    snprintf(name, sizeof name, "op%d", i), s->operands_at[i] = ptx_param_load_global_pointer(b, name);
}

static PtxReg constant_u64(PtxBuilder *b, int64_t v) {
  PtxReg r = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u64 $r, $D", r, v);
  return r;
}

bool ptx_sort_emit_merge(PtxBuilder *b, const char *name, const PtxSortRows *rows, const PtxSortOperand *operands,
                         int operand_count, PtxSortLess less, const void *ctx, Status *st) {
  MergeState s = {.rows = rows, .operands = operands, .operand_count = operand_count, .less = less, .ctx = ctx};
  if (operand_count > 64) return status_error(st, STATUS_UNSUPPORTED, "a sort of more than 64 operands on the GPU");
  ptx_kernel_begin(b, name, "sort: one merge pass of sorted runs of `width` positions (stable)");
  ptx_kernel_param(b, PTX_U64, "from");
  ptx_kernel_param(b, PTX_U64, "to");
  operand_params(b, &s);
  ptx_kernel_param(b, PTX_U64, "width");
  ptx_kernel_set_max_threads(b, 256);
  s.from = ptx_param_load_global_pointer(b, "from");
  s.to = ptx_param_load_global_pointer(b, "to");
  operand_pointers(b, &s);
  PtxReg width = ptx_param_load(b, PTX_U64, "width"), limit = constant_u64(b, rows->n);
  PtxSortLoop l = ptx_sort_loop_open(b, rows->rows * rows->n);
  PtxReg r, j, dest;
  ptx_sort_divide(b, l.i, rows->n, &r, &j);
  s.base = row_base(b, rows, r, rows->n);
  s.order_row = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mul.lo.u64 $r, $r, $D", s.order_row, r, rows->n);
  s.me = order_load(b, s.from, l.i);
  if (!merge_place(b, &s, j, width, limit, &dest, st)) {
    ptx_kernel_abandon(b);
    return false;
  }
  ptx_inst(b, "add.u64 $r, $r, $r", dest, dest, s.order_row);
  order_store(b, s.to, dest, s.me);
  ptx_sort_loop_close(b, &l);
  ptx_kernel_end(b);
  return true;
}

/* One tile pass of the tile kernel: the threads below `count` place their
 * element of runs of `width` from shared array `from` into `to`; then
 * the block meets at a barrier (every thread, active or not). */
static bool tile_pass(PtxBuilder *b, MergeState *s, PtxReg j, PtxReg active, PtxReg count, int64_t width,
                      const char *from, const char *to, Status *st) {
  PtxLabel skip = ptx_label_new(b, "tile_skip");
  ptx_inst(b, "@!$r bra $l", active, skip);
  s->shared = from;
  s->me = shared_order_load(b, from, j);
  PtxReg dest;
  if (!merge_place(b, s, j, constant_u64(b, width), count, &dest, st)) return false;
  shared_order_store(b, to, dest, s->me);
  ptx_label_place(b, skip);
  ptx_inst(b, "bar.sync 0");
  return true;
}

/* The tile loop's body for tile (r, t): positions [t T, min(t T + T, n))
 * of row r start as themselves in shared memory, are merge-sorted there
 * in log2(T) passes, and are written to the order array. */
static bool tile_sort(PtxBuilder *b, MergeState *s, int64_t tile, PtxReg tile_index, Status *st) {
  const PtxSortRows *rows = s->rows;
  int64_t tiles_per_row = (rows->n + tile - 1) / tile;
  PtxReg r, t, first = ptx_reg_new(b, PTX_U64), count = ptx_reg_new(b, PTX_U64), j = ptx_reg_new(b, PTX_U64);
  PtxReg tid = ptx_reg_new(b, PTX_U32), active = ptx_reg_new(b, PTX_PRED), position = ptx_reg_new(b, PTX_U64);
  ptx_sort_divide(b, tile_index, tiles_per_row, &r, &t);
  ptx_inst(b, "mul.lo.u64 $r, $r, $D", first, t, tile);
  ptx_inst(b, "sub.u64 $r, $D, $r", count, rows->n, first);
  ptx_inst(b, "min.u64 $r, $r, $D", count, count, tile);
  ptx_inst(b, "mov.u32 $r, %tid.x", tid);
  ptx_inst(b, "cvt.u64.u32 $r, $r", j, tid);
  ptx_inst(b, "setp.lt.u64 $r, $r, $r", active, j, count);
  s->base = row_base(b, rows, r, rows->n);
  PtxLabel skip = ptx_label_new(b, "tile_idle");
  ptx_inst(b, "add.u64 $r, $r, $r", position, first, j);
  ptx_inst(b, "@!$r bra $l", active, skip);
  shared_order_store(b, "sort_tile_a", j, position);
  ptx_label_place(b, skip);
  ptx_inst(b, "bar.sync 0");
  const char *names[2] = {"sort_tile_a", "sort_tile_b"};
  int current = 0;
  for (int64_t width = 1; width < tile; width *= 2, current ^= 1)
    if (!tile_pass(b, s, j, active, count, width, names[current], names[current ^ 1], st)) return false;
  PtxLabel idle = ptx_label_new(b, "tile_done");
  ptx_inst(b, "@!$r bra $l", active, idle);
  PtxReg at = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", at, r, rows->n, position);
  order_store(b, s->to, at, shared_order_load(b, names[current], j));
  ptx_label_place(b, idle);
  ptx_inst(b, "bar.sync 0");   /* the next tile rewrites the shared arrays */
  return true;
}

bool ptx_sort_emit_tiles(PtxBuilder *b, const char *name, const PtxSortRows *rows, int64_t tile,
                         const PtxSortOperand *operands, int operand_count, PtxSortLess less, const void *ctx,
                         Status *st) {
  MergeState s = {.rows = rows, .operands = operands, .operand_count = operand_count, .less = less, .ctx = ctx};
  if (operand_count > 64) return status_error(st, STATUS_UNSUPPORTED, "a sort of more than 64 operands on the GPU");
  ptx_kernel_begin(b, name, "sort: every tile of a row merge-sorted in shared memory (stable)");
  ptx_kernel_param(b, PTX_U64, "to");
  operand_params(b, &s);
  ptx_kernel_set_max_threads(b, (int)tile);
  ptx_shared_declare(b, "sort_tile_a", PTX_U32, (int)tile, 4);
  ptx_shared_declare(b, "sort_tile_b", PTX_U32, (int)tile, 4);
  s.to = ptx_param_load_global_pointer(b, "to");
  operand_pointers(b, &s);
  /* one tile per block at a time: the loop is uniform across the block, so
   * every thread meets every barrier */
  int64_t tiles = rows->rows * ((rows->n + tile - 1) / tile);
  PtxReg index = ptx_reg_new(b, PTX_U64), step = ptx_reg_new(b, PTX_U64), p = ptx_reg_new(b, PTX_PRED);
  PtxReg block = ptx_reg_new(b, PTX_U32), blocks = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mov.u32 $r, %ctaid.x", block);
  ptx_inst(b, "mov.u32 $r, %nctaid.x", blocks);
  ptx_inst(b, "cvt.u64.u32 $r, $r", index, block);
  ptx_inst(b, "cvt.u64.u32 $r, $r", step, blocks);
  PtxLabel head = ptx_label_new(b, "tile_head"), done = ptx_label_new(b, "tile_end");
  ptx_label_place(b, head);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", p, index, tiles);
  ptx_inst(b, "@$r bra.uni $l", p, done);
  if (!tile_sort(b, &s, tile, index, st)) {
    ptx_kernel_abandon(b);
    return false;
  }
  ptx_inst(b, "add.u64 $r, $r, $r", index, index, step);
  ptx_inst(b, "bra.uni $l", head);
  ptx_label_place(b, done);
  ptx_inst(b, "ret");
  ptx_kernel_end(b);
  return true;
}

/* One element copied as bytes (a pred or u8 is one byte). */
void ptx_sort_element_copy(PtxBuilder *b, int bytes, PtxReg to, PtxReg from) {
  static const PtxType by_size[9] = {[1] = PTX_U8, [2] = PTX_B16, [4] = PTX_B32, [8] = PTX_B64};
  PtxType t = by_size[bytes];
  PtxReg v = ptx_reg_new(b, t == PTX_U8 ? PTX_U16 : t);
  ptx_inst(b, "ld.global$s $r, [$r]", ptx_type_suffix(t), v, from);
  ptx_inst(b, "st.global$s [$r], $r", ptx_type_suffix(t), to, v);
}

void ptx_sort_emit_gather(PtxBuilder *b, const char *name, const PtxSortRows *rows, int64_t k,
                          const ElementType *types, int operand_count, bool indices) {
  char param[16];
  PtxReg in[64], out[65];
  int outputs = operand_count + (indices ? 1 : 0);
  ptx_kernel_begin(b, name, "sort: every operand moved through the sorted order");
  ptx_kernel_param(b, PTX_U64, "order");
  for (int i = 0; i < operand_count; i++) snprintf(param, sizeof param, "in%d", i), ptx_kernel_param(b, PTX_U64, param);
  for (int o = 0; o < outputs; o++) snprintf(param, sizeof param, "out%d", o), ptx_kernel_param(b, PTX_U64, param);
  ptx_kernel_set_max_threads(b, 256);
  PtxReg order = ptx_param_load_global_pointer(b, "order");
  for (int i = 0; i < operand_count; i++) snprintf(param, sizeof param, "in%d", i), in[i] = ptx_param_load_global_pointer(b, param);
  for (int o = 0; o < outputs; o++) snprintf(param, sizeof param, "out%d", o), out[o] = ptx_param_load_global_pointer(b, param);
  PtxSortLoop l = ptx_sort_loop_open(b, rows->rows * k);
  PtxReg r, j, index = ptx_reg_new(b, PTX_U64);
  ptx_sort_divide(b, l.i, k, &r, &j);
  ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", index, r, rows->n, j);
  PtxReg source = order_load(b, order, index);
  PtxReg in_base = row_base(b, rows, r, rows->n), out_base = row_base(b, rows, r, k);
  for (int i = 0; i < operand_count; i++) {
    int bytes = type_byte_size(types[i]);
    ptx_sort_element_copy(b, bytes, row_element_address(b, out[i], out_base, j, rows->inner, bytes),
                 row_element_address(b, in[i], in_base, source, rows->inner, bytes));
  }
  if (indices) order_store(b, out[operand_count], l.i, source);
  ptx_sort_loop_close(b, &l);
  ptx_kernel_end(b);
}
