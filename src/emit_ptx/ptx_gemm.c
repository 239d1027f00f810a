/* The PTX GEMM's dispatcher (ptx_gemm_emit: which path a product takes)
 * and its plainest path, the SIMT kernel (gemm.simt, see ptx_gemm.h). The
 * helpers every path shares live below it, in ptx_gemm_emit.c. */
#include "emit_ptx/ptx_gemm.h"

#include <string.h>

#include "emit_ptx/ptx_gemm_internal.h"

/* ------------------------------------------------------------ ragged groups */

/* The group this launch handles and its coordinate range (ptx_gemm.h):
 * once per tile when group_sizes has one row per batch index, else per
 * row (ROWS) or per k (SUMS) in ragged_within. live: group < G (launch G
 * of ROWS mode writes zeros). */
typedef struct GemmRaggedRegs {
  PtxGemmRaggedKind kind;
  PtxReg sizes, group, batch_row, start, end, live;
} GemmRaggedRegs;

/* group_sizes[row + index * sizes_group_stride], as s64. */
static PtxReg load_size(PtxBuilder *b, const PtxGemm *g, PtxReg sizes, PtxReg row, PtxReg index) {
  ElementType t = g->ragged.sizes_type;
  PtxReg offset = ptx_reg_new(b, PTX_U64), v = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", offset, index, g->ragged.sizes_group_stride, row);
  PtxReg address = ptx_gemm_emit_address(b, sizes, offset, type_byte_size(t));
  if (t == TYPE_S64 || t == TYPE_U64) {
    ptx_inst(b, "ld.global.b64 $r, [$r]", v, address);
  } else {
    PtxReg w = ptx_reg_new(b, PTX_S32);
    ptx_inst(b, "ld.global.b32 $r, [$r]", w, address);
    ptx_inst(b, "cvt.s64.s32 $r, $r", v, w);
  }
  return v;
}

/* sum = sum + v, held at INT64_MIN or INT64_MAX instead of wrapping, as
 * s64_add_saturating: the add overflowed when the sum's sign differs from
 * both inputs'; the held value is INT64_MAX with every bit flipped when v
 * is negative. */
static void add_saturating(PtxBuilder *b, PtxReg sum, PtxReg v) {
  PtxReg was = ptx_reg_new(b, PTX_S64), x = ptx_reg_new(b, PTX_S64), y = ptx_reg_new(b, PTX_S64);
  PtxReg held = ptx_reg_new(b, PTX_S64), over = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "mov.s64 $r, $r", was, sum);
  ptx_inst(b, "add.s64 $r, $r, $r", sum, was, v);
  ptx_inst(b, "xor.b64 $r, $r, $r", x, was, sum);
  ptx_inst(b, "xor.b64 $r, $r, $r", y, v, sum);
  ptx_inst(b, "and.b64 $r, $r, $r", x, x, y);
  ptx_inst(b, "setp.lt.s64 $r, $r, 0", over, x);
  ptx_inst(b, "shr.s64 $r, $r, 63", held, v);
  ptx_inst(b, "xor.b64 $r, $r, $D", held, held, INT64_MAX);
  ptx_inst(b, "selp.s64 $r, $r, $r, $r", sum, held, sum, over);
}

/* start and end of this launch's group in the sizes row at `row` (an
 * element offset into group_sizes). The evaluator's group_of puts a
 * coordinate in the first group whose running end passes it, so start is
 * the largest running end before the group (not the last one: a negative
 * size moves the end back), and 0 at least. */
static void group_range(PtxBuilder *b, const PtxGemm *g, const GemmRaggedRegs *rg, PtxReg row, PtxReg start,
                        PtxReg end) {
  PtxReg i = ptx_reg_new(b, PTX_U64), running = ptx_reg_new(b, PTX_S64), past = ptx_reg_new(b, PTX_PRED);
  PtxLabel loop = ptx_label_new(b, "group_start"), done = ptx_label_new(b, "group_started");
  ptx_inst(b, "mov.u64 $r, 0", i);
  ptx_inst(b, "mov.s64 $r, 0", running);
  ptx_inst(b, "mov.s64 $r, 0", start);
  ptx_label_place(b, loop);
  ptx_inst(b, "setp.ge.u64 $r, $r, $r", past, i, rg->group);
  ptx_inst(b, "@$r bra $l", past, done);
  add_saturating(b, running, load_size(b, g, rg->sizes, row, i));
  ptx_inst(b, "max.s64 $r, $r, $r", start, start, running);
  ptx_inst(b, "add.u64 $r, $r, 1", i, i);
  ptx_inst(b, "bra $l", loop);
  ptx_label_place(b, done);
  /* end = running + sizes[group]; the zero launch (group = G) runs to the end */
  ptx_inst(b, "mov.s64 $r, $D", end, (int64_t)1 << 62);
  PtxLabel zero = ptx_label_new(b, "zero_group");
  ptx_inst(b, "@!$r bra $l", rg->live, zero);
  ptx_inst(b, "mov.s64 $r, $r", end, running);
  add_saturating(b, end, load_size(b, g, rg->sizes, row, rg->group));
  ptx_label_place(b, zero);
}

static GemmRaggedRegs ragged_group(PtxBuilder *b, const PtxGemm *g, PtxReg batch) {
  GemmRaggedRegs rg = {.kind = g->ragged.kind};
  if (rg.kind == PTX_GEMM_PLAIN) return rg;
  rg.sizes = ptx_param_load_global_pointer(b, "sizes");
  rg.group = ptx_param_load(b, PTX_U64, "group");
  rg.live = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "setp.lt.u64 $r, $r, $D", rg.live, rg.group, g->ragged.groups);
  rg.batch_row = ptx_gemm_emit_offset(b, &g->ragged.sizes_batch, batch);
  if (!g->ragged.sizes_per_index) {
    rg.start = ptx_reg_new(b, PTX_S64);
    rg.end = ptx_reg_new(b, PTX_S64);
    group_range(b, g, &rg, rg.batch_row, rg.start, rg.end);
  }
  return rg;
}

/* in &= the ragged coordinate of index (a row for ROWS, a k for SUMS) is
 * within this launch's group (signed: a start past 2^63 cannot be). An
 * index past the tile's edge (at least `extent`, m or k) is out already;
 * its sizes row is read at extent - 1 so that the read stays in bounds. */
static void ragged_within(PtxBuilder *b, const PtxGemm *g, const GemmRaggedRegs *rg, PtxReg in, PtxReg index,
                          int64_t extent) {
  PtxReg start = rg->start, end = rg->end;
  if (g->ragged.sizes_per_index) {
    PtxReg row = ptx_reg_new(b, PTX_U64), clamped = ptx_reg_new(b, PTX_U64);
    ptx_inst(b, "min.u64 $r, $r, $D", clamped, index, extent - 1);
    ptx_inst(b, "add.u64 $r, $r, $r", row, rg->batch_row, ptx_gemm_emit_offset(b, &g->ragged.sizes_prefix, clamped));
    start = ptx_reg_new(b, PTX_S64);
    end = ptx_reg_new(b, PTX_S64);
    group_range(b, g, rg, row, start, end);
  }
  PtxReg coordinate = ptx_gemm_emit_offset(b, &g->ragged.coordinate, index);
  PtxReg p = ptx_reg_new(b, PTX_PRED), q = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "setp.ge.s64 $r, $r, $r", p, coordinate, start);
  ptx_inst(b, "setp.lt.s64 $r, $r, $r", q, coordinate, end);
  ptx_inst(b, "and.pred $r, $r, $r", in, in, p);
  ptx_inst(b, "and.pred $r, $r, $r", in, in, q);
}

/* ------------------------------------------------------------ gemm.simt */

enum { SIMT_THREADS = 256, SIMT_TILE = 64, SIMT_K = 16, SIMT_PITCH = SIMT_TILE + 1, SIMT_PER_THREAD = 4 };

typedef struct SimtOperand {
  const char *shared;          /* the shared array's name */
  PtxReg pointer, batch_offset;
  const PtxGemmDims *outer, *k; /* outer: m for lhs, n for rhs */
  int64_t outer_extent;
  ElementType type;
  bool ragged_k;               /* a ragged contraction masks this operand's k (lhs's) */
  /* scaled-dot: the operand's scale */
  PtxReg scale_pointer, scale_batch_offset;
  const PtxGemmDims *scale_outer, *scale_k;
  ElementType scale_type;
} SimtOperand;

/* v times its scale element (both in the sum's type, f32 or f64: the
 * product of two f32 values rounded once, as the evaluator's). */
static PtxReg simt_scale(PtxBuilder *b, const PtxGemm *g, const SimtOperand *o, PtxReg in, PtxReg o_i, PtxReg k_i,
                         PtxReg v, PtxType acc) {
  PtxReg offset = ptx_reg_new(b, PTX_U64), product = ptx_reg_new(b, acc);
  ptx_inst(b, "add.u64 $r, $r, $r", offset, ptx_gemm_emit_offset(b, o->scale_outer, o_i),
           ptx_gemm_emit_offset(b, o->scale_k, k_i));
  ptx_inst(b, "add.u64 $r, $r, $r", offset, offset, o->scale_batch_offset);
  PtxReg address = ptx_gemm_emit_address(b, o->scale_pointer, offset, type_byte_size(o->scale_type));
  PtxReg scale = ptx_gemm_emit_load(b, address, in, o->scale_type, g->result_type, acc);
  ptx_inst(b, "mul.rn$s $r, $r, $r", ptx_type_suffix(acc), product, v, scale);
  return product;
}

/* Loads the operand's 16 x 64 slab at (k0, first outer index o0) into its
 * shared array, [k][outer] with rows padded to 65 so that the compute
 * loop's reads and these stores spread over the banks. When the operand's
 * k dimension is the contiguous one, neighbouring threads take
 * neighbouring k (coalesced); otherwise neighbouring outer indices. */
static void simt_load_slab(PtxBuilder *b, const PtxGemm *g, const SimtOperand *o, PtxReg tid, PtxReg k0, PtxReg o0,
                           PtxType acc, const GemmRaggedRegs *rg) {
  bool k_fastest = ptx_gemm_dims_inner_stride(o->k) == 1 && o->k->count == 1;
  PtxReg kk = ptx_reg_new(b, PTX_U64), oo = ptx_reg_new(b, PTX_U64);
  int64_t k_step = k_fastest ? 0 : SIMT_THREADS / SIMT_TILE, o_step = k_fastest ? SIMT_THREADS / SIMT_K : 0;
  ptx_inst(b, "rem.u64 $r, $r, $d", kk, tid, k_fastest ? SIMT_K : SIMT_TILE);
  ptx_inst(b, "div.u64 $r, $r, $d", oo, tid, k_fastest ? SIMT_K : SIMT_TILE);
  if (!k_fastest) {
    PtxReg swap = kk;
    kk = oo;
    oo = swap;
  }
  /* shared address of (kk, oo) */
  PtxReg slot = ptx_reg_new(b, PTX_U64), base = ptx_reg_new(b, PTX_U64), at = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", slot, kk, SIMT_PITCH, oo);
  ptx_inst(b, "mov.u64 $r, $s", base, o->shared);
  ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", at, slot, ptx_type_byte_size(acc), base);
  PtxReg gk = ptx_reg_new(b, PTX_U64), go = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "add.u64 $r, $r, $r", gk, k0, kk);
  ptx_inst(b, "add.u64 $r, $r, $r", go, o0, oo);
  int bytes = type_byte_size(o->type);
  for (int i = 0; i < SIMT_TILE * SIMT_K / SIMT_THREADS; i++) {
    PtxReg k_i = i ? ptx_gemm_emit_add(b, gk, k_step * i) : gk,
           o_i = i ? ptx_gemm_emit_add(b, go, o_step * i) : go;
    PtxReg in = ptx_reg_new(b, PTX_PRED);
    ptx_inst(b, "and.pred $r, $r, $r", in, ptx_gemm_emit_below(b, k_i, g->k), ptx_gemm_emit_below(b, o_i, o->outer_extent));
    if (rg->kind == PTX_GEMM_RAGGED_SUMS && o->ragged_k) ragged_within(b, g, rg, in, k_i, g->k);
    if (rg->kind == PTX_GEMM_RAGGED_ROWS) ptx_inst(b, "and.pred $r, $r, $r", in, in, rg->live);
    PtxReg offset = ptx_reg_new(b, PTX_U64);
    ptx_inst(b, "add.u64 $r, $r, $r", offset, ptx_gemm_emit_offset(b, o->outer, o_i), ptx_gemm_emit_offset(b, o->k, k_i));
    ptx_inst(b, "add.u64 $r, $r, $r", offset, offset, o->batch_offset);
    PtxReg v = ptx_gemm_emit_load(b, ptx_gemm_emit_address(b, o->pointer, offset, bytes), in, o->type, g->result_type, acc);
    if (g->scaled) v = simt_scale(b, g, o, in, o_i, k_i, v, acc);
    int64_t shift = (k_step * i * SIMT_PITCH + o_step * i) * ptx_type_byte_size(acc);
    ptx_inst(b, "st.shared$s [$r+$D], $r", ptx_type_suffix(acc), at, shift, v);
  }
}

/* One 16-deep step of the thread's 4x4 sums from the two slabs. */
static void simt_multiply_slabs(PtxBuilder *b, PtxReg tid, PtxReg *sums, PtxType acc) {
  int bytes = ptx_type_byte_size(acc);
  PtxReg tx = ptx_reg_new(b, PTX_U64), ty = ptx_reg_new(b, PTX_U64), a = ptx_reg_new(b, PTX_U64),
         c = ptx_reg_new(b, PTX_U64), base = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "rem.u64 $r, $r, 16", tx, tid);
  ptx_inst(b, "div.u64 $r, $r, 16", ty, tid);
  ptx_inst(b, "mov.u64 $r, gemm_lhs", base);
  ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", a, ty, bytes, base);
  ptx_inst(b, "mov.u64 $r, gemm_rhs", base);
  ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", c, tx, bytes, base);
  PtxReg x[SIMT_PER_THREAD], y[SIMT_PER_THREAD];
  for (int i = 0; i < SIMT_PER_THREAD; i++) x[i] = ptx_reg_new(b, acc), y[i] = ptx_reg_new(b, acc);
  for (int kk = 0; kk < SIMT_K; kk++) {
    for (int i = 0; i < SIMT_PER_THREAD; i++) {
      int shift = (kk * SIMT_PITCH + 16 * i) * bytes;
      ptx_inst(b, "ld.shared$s $r, [$r+$d]", ptx_type_suffix(acc), x[i], a, shift);
      ptx_inst(b, "ld.shared$s $r, [$r+$d]", ptx_type_suffix(acc), y[i], c, shift);
    }
    for (int i = 0; i < SIMT_PER_THREAD; i++)
      for (int j = 0; j < SIMT_PER_THREAD; j++)
        ptx_gemm_emit_multiply_add(b, sums[i * SIMT_PER_THREAD + j], x[i], y[j], acc);
  }
}

/* Thread (tx, ty) of the tile holds rows ty + 16i and columns tx + 16j. */
static void simt_store(PtxBuilder *b, const PtxGemm *g, PtxReg tid, const PtxGemmTiles *t, PtxReg out, PtxReg *sums,
                       PtxType acc, const GemmRaggedRegs *rg) {
  PtxReg tx = ptx_reg_new(b, PTX_U64), ty = ptx_reg_new(b, PTX_U64), row = ptx_reg_new(b, PTX_U64),
         column = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "rem.u64 $r, $r, 16", tx, tid);
  ptx_inst(b, "div.u64 $r, $r, 16", ty, tid);
  ptx_inst(b, "add.u64 $r, $r, $r", row, t->m0, ty);
  ptx_inst(b, "add.u64 $r, $r, $r", column, t->n0, tx);
  PtxReg batch_offset = ptx_gemm_emit_offset(b, &g->out_batch, t->batch);
  if (rg->kind == PTX_GEMM_RAGGED_SUMS)
    ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", batch_offset, rg->group, g->ragged.out_group_stride, batch_offset);
  PtxReg row_in[SIMT_PER_THREAD], row_at[SIMT_PER_THREAD], column_in[SIMT_PER_THREAD], column_at[SIMT_PER_THREAD];
  for (int i = 0; i < SIMT_PER_THREAD; i++) {
    PtxReg r = ptx_gemm_emit_add(b, row, 16 * i), c = ptx_gemm_emit_add(b, column, 16 * i);
    row_in[i] = ptx_gemm_emit_below(b, r, g->m);
    if (rg->kind == PTX_GEMM_RAGGED_ROWS) ragged_within(b, g, rg, row_in[i], r, g->m);
    column_in[i] = ptx_gemm_emit_below(b, c, g->n);
    row_at[i] = ptx_gemm_emit_offset(b, &g->out_m, r);
    ptx_inst(b, "add.u64 $r, $r, $r", row_at[i], row_at[i], batch_offset);
    column_at[i] = ptx_gemm_emit_offset(b, &g->out_n, c);
  }
  int bytes = type_byte_size(g->result_type);
  for (int i = 0; i < SIMT_PER_THREAD; i++)
    for (int j = 0; j < SIMT_PER_THREAD; j++) {
      PtxReg in = ptx_reg_new(b, PTX_PRED), offset = ptx_reg_new(b, PTX_U64);
      ptx_inst(b, "and.pred $r, $r, $r", in, row_in[i], column_in[j]);
      ptx_inst(b, "add.u64 $r, $r, $r", offset, row_at[i], column_at[j]);
      ptx_gemm_emit_store(b, ptx_gemm_emit_address(b, out, offset, bytes), in, sums[i * SIMT_PER_THREAD + j], g->result_type,
                      acc);
    }
}

static void simt_body(PtxBuilder *b, const PtxGemm *g, PtxType acc) {
  PtxReg lhs = ptx_param_load_global_pointer(b, "lhs"), rhs = ptx_param_load_global_pointer(b, "rhs"),
         out = ptx_param_load_global_pointer(b, "out");
  PtxReg tid32 = ptx_reg_new(b, PTX_U32), tid = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u32 $r, %tid.x", tid32);
  ptx_inst(b, "cvt.u64.u32 $r, $r", tid, tid32);
  PtxGemmTiles t;
  ptx_gemm_tiles_begin(b, &t, g, SIMT_TILE, SIMT_TILE);
  SimtOperand a = {.shared = "gemm_lhs", .pointer = lhs, .batch_offset = ptx_gemm_emit_offset(b, &g->lhs_batch, t.batch),
                   .outer = &g->lhs_m, .k = &g->lhs_k, .outer_extent = g->m, .type = g->lhs_type,
                   .ragged_k = true};
  SimtOperand c = {.shared = "gemm_rhs", .pointer = rhs, .batch_offset = ptx_gemm_emit_offset(b, &g->rhs_batch, t.batch),
                   .outer = &g->rhs_n, .k = &g->rhs_k, .outer_extent = g->n, .type = g->rhs_type};
  if (g->scaled) {
    PtxReg ls = ptx_param_load_global_pointer(b, "lhs_scale"), rs = ptx_param_load_global_pointer(b, "rhs_scale");
    a.scale_pointer = ls, a.scale_type = g->lhs_scale_type;
    a.scale_outer = &g->lhs_scale_m, a.scale_k = &g->lhs_scale_k;
    a.scale_batch_offset = ptx_gemm_emit_offset(b, &g->lhs_scale_batch, t.batch);
    c.scale_pointer = rs, c.scale_type = g->rhs_scale_type;
    c.scale_outer = &g->rhs_scale_n, c.scale_k = &g->rhs_scale_k;
    c.scale_batch_offset = ptx_gemm_emit_offset(b, &g->rhs_scale_batch, t.batch);
  }
  GemmRaggedRegs rg = ragged_group(b, g, t.batch);
  if (rg.kind == PTX_GEMM_RAGGED_ROWS)  /* past the last group nothing is read: any group's rhs serves */
    ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", c.batch_offset, rg.group, g->ragged.rhs_group_stride, c.batch_offset);
  PtxReg sums[SIMT_PER_THREAD * SIMT_PER_THREAD];
  for (int i = 0; i < SIMT_PER_THREAD * SIMT_PER_THREAD; i++) {
    sums[i] = ptx_reg_new(b, acc);
    ptx_gemm_emit_zero(b, sums[i], acc);
  }
  PtxReg k0 = ptx_reg_new(b, PTX_U64), past = ptx_reg_new(b, PTX_PRED);
  PtxLabel step = ptx_label_new(b, "k_step"), steps_done = ptx_label_new(b, "k_done");
  ptx_inst(b, "mov.u64 $r, 0", k0);
  ptx_label_place(b, step);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", past, k0, g->k);
  ptx_inst(b, "@$r bra $l", past, steps_done);
  simt_load_slab(b, g, &a, tid, k0, t.m0, acc, &rg);
  simt_load_slab(b, g, &c, tid, k0, t.n0, acc, &rg);
  ptx_inst(b, "bar.sync 0");
  simt_multiply_slabs(b, tid, sums, acc);
  /* every thread is done reading the slabs before the next step's stores */
  ptx_inst(b, "bar.sync 0");
  ptx_inst(b, "add.u64 $r, $r, $d", k0, k0, SIMT_K);
  ptx_inst(b, "bra $l", step);
  ptx_label_place(b, steps_done);
  simt_store(b, g, tid, &t, out, sums, acc, &rg);
  ptx_gemm_tiles_end(b, &t);
}


/* Each operand times its scale must be one rounding of an exact product:
 * f32 results from f16/bf16/f32 values, f64 results from any float. */
static bool scaled_types_fit(const PtxGemm *g) {
  ElementType types[4] = {g->lhs_type, g->rhs_type, g->lhs_scale_type, g->rhs_scale_type};
  for (int i = 0; i < 4; i++) {
    bool narrow = types[i] == TYPE_F16 || types[i] == TYPE_BF16 || types[i] == TYPE_F32;
    if (!(g->result_type == TYPE_F64 ? narrow || types[i] == TYPE_F64 : g->result_type == TYPE_F32 && narrow))
      return false;
  }
  return true;
}

bool ptx_gemm_emit(PtxBuilder *b, const PtxGemm *g, const char *entry, PtxGemmShape *shape, Status *st) {
  if (ptx_gemm_mma_fits(b, g)) return ptx_gemm_mma_emit(b, g, entry, shape, st);
  if (type_is_complex(g->result_type)) return ptx_gemm_complex_emit(b, g, entry, shape, st);
  PtxType acc;
  if (!ptx_gemm_accumulator_of(g, &acc, st)) return false;
  if (g->scaled && !scaled_types_fit(g))
    return status_error(st, STATUS_UNSUPPORTED, "the GPU backend has no scaled-dot GEMM for %s (%s) x %s (%s) -> %s",
                        type_name(g->lhs_type), type_name(g->lhs_scale_type), type_name(g->rhs_type),
                        type_name(g->rhs_scale_type), type_name(g->result_type));
  char what[160];
  snprintf(what, sizeof what, "gemm.simt: %s x %s -> %s, batch %lld, %lld x %lld x %lld", type_name(g->lhs_type),
           type_name(g->rhs_type), type_name(g->result_type), (long long)g->batch, (long long)g->m, (long long)g->n,
           (long long)g->k);
  ptx_gemm_kernel_begin(b, entry, what, SIMT_THREADS, g);
  int bytes = ptx_type_byte_size(acc);
  PtxType shared_type = acc == PTX_S32 ? PTX_B32 : acc == PTX_S64 ? PTX_B64 : acc;
  ptx_shared_declare(b, "gemm_lhs", shared_type, SIMT_K * SIMT_PITCH, bytes);
  ptx_shared_declare(b, "gemm_rhs", shared_type, SIMT_K * SIMT_PITCH, bytes);
  simt_body(b, g, acc);
  ptx_kernel_end(b);
  PtxGemmTiles t = {.tiles_m = (g->m + SIMT_TILE - 1) / SIMT_TILE, .tiles_n = (g->n + SIMT_TILE - 1) / SIMT_TILE};
  int64_t tiles = g->batch * t.tiles_m * t.tiles_n;
  *shape = (PtxGemmShape){"gemm.simt", SIMT_THREADS, tiles < 1 ? 1 : tiles, 0};
  return true;
}
