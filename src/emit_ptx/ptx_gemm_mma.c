/* The tensor-core GEMM (gemm.mma): f16 x f16 or bf16 x bf16 products with
 * an f32 sum, on sm_80 and later, through mma.sync.aligned.m16n8k16; and
 * f32 x f32 through tf32 (m16n8k8) where the dot's algorithm allows it
 * (MmaForm below; the layout described here is the f16 one).
 *
 * A 128-thread block (4 warps) computes a 64x64 tile of the output,
 * stepping k by 16. Each step the block stages a 64x16 slab of lhs as
 * [m][k] and a 16x64 slab of rhs as [n][k] in shared memory, both with k
 * contiguous, so that each register of an mma fragment (two neighbouring
 * k of one row or column, the PTX ISA's "Matrix Fragments for
 * mma.m16n8k16 with floating point type") is one 32-bit shared load. Rows
 * are 24 halves apart: the 8 rows x 4 words a fragment load touches then
 * fall in 32 different banks. Warp w owns the 32x32 quarter (w / 2, w % 2)
 * of the tile: 2 x 4 mma tiles of 16x8, 32 f32 sums per thread.
 *
 * Accumulator fragment (c0..c3 of an m16n8 tile): lane l holds rows l/4
 * and l/4 + 8, columns 2(l%4) and 2(l%4) + 1. Out-of-range elements are
 * staged as zeros and never stored, so any m, n, k is correct. The sums
 * are f32, rounded once to the result type, as gemm.simt does; the
 * hardware's order of the 16 additions inside one mma is its own, so
 * results may differ from gemm.simt's in the last bits of f32. */
#include "emit_ptx/ptx_gemm_internal.h"

enum {
  MMA_THREADS = 128, MMA_TILE = 64,
  MMA_ROW_BYTES = 48,      /* one staged row: 32 bytes of k + 16 of padding */
  MMA_WARP_M = 2, MMA_WARP_N = 4,  /* mma tiles per warp: 2 x m16, 4 x n8 */
};

/* The two element forms. f16/bf16: m16n8k16, a row holds 16 halves (pitch
 * 24). tf32 (f32 operands, only where the dot's algorithm allows it):
 * m16n8k8, a row holds 8 words (pitch 12), each rounded to tf32 by
 * cvt.rna.tf32.f32 as it is staged. The tf32 fragments ("Matrix Fragments
 * for mma.m16n8k8" with .tf32) put element (row g, column t) where the
 * f16 ones put the word (row g, columns 2t, 2t + 1), so both forms read
 * the same byte offsets of the staged rows. */
typedef struct MmaForm {
  bool tf32;
  int k, bytes, pitch;     /* k per step; bytes per element; elements per staged row */
} MmaForm;

static MmaForm mma_form(const PtxGemm *g) {
  bool tf32 = g->lhs_type == TYPE_F32;
  int bytes = tf32 ? 4 : 2;
  return (MmaForm){tf32, tf32 ? 8 : 16, bytes, MMA_ROW_BYTES / bytes};
}

bool ptx_gemm_mma_fits(const PtxBuilder *b, const PtxGemm *g) {
  bool half = g->lhs_type == TYPE_F16 || g->lhs_type == TYPE_BF16;
  bool tf32 = g->lhs_type == TYPE_F32 && g->result_type == TYPE_F32 && g->allow_tf32;
  return b->target.sm >= 80 && (half || tf32) && g->rhs_type == g->lhs_type && g->ragged.kind == PTX_GEMM_PLAIN &&
         !g->scaled && (g->result_type == g->lhs_type || g->result_type == TYPE_F32);
}

/* Stages the k x 64 slab of one operand at (k0, o0) as [outer][k]
 * elements. Threads walk k first when k is the operand's contiguous dim
 * (coalesced reads), else the outer index. */
static void mma_stage(PtxBuilder *b, const PtxGemm *g, const MmaForm *f, const char *shared, PtxReg pointer, PtxReg batch_offset,
                      const PtxGemmDims *outer, const PtxGemmDims *k, int64_t outer_extent, PtxReg tid, PtxReg k0,
                      PtxReg o0) {
  bool k_fastest = ptx_gemm_dims_inner_stride(k) == 1 && k->count == 1;
  PtxReg kk = ptx_reg_new(b, PTX_U64), oo = ptx_reg_new(b, PTX_U64);
  int64_t k_step = k_fastest ? 0 : MMA_THREADS / MMA_TILE, o_step = k_fastest ? MMA_THREADS / f->k : 0;
  ptx_inst(b, "rem.u64 $r, $r, $d", k_fastest ? kk : oo, tid, k_fastest ? f->k : MMA_TILE);
  ptx_inst(b, "div.u64 $r, $r, $d", k_fastest ? oo : kk, tid, k_fastest ? f->k : MMA_TILE);
  PtxReg slot = ptx_reg_new(b, PTX_U64), base = ptx_reg_new(b, PTX_U64), at = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", slot, oo, f->pitch, kk);
  ptx_inst(b, "mov.u64 $r, $s", base, shared);
  ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", at, slot, f->bytes, base);
  PtxReg gk = ptx_reg_new(b, PTX_U64), go = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "add.u64 $r, $r, $r", gk, k0, kk);
  ptx_inst(b, "add.u64 $r, $r, $r", go, o0, oo);
  for (int i = 0; i < MMA_TILE * f->k / MMA_THREADS; i++) {
    PtxReg k_i = i ? ptx_gemm_emit_add(b, gk, k_step * i) : gk,
           o_i = i ? ptx_gemm_emit_add(b, go, o_step * i) : go;
    PtxReg in = ptx_reg_new(b, PTX_PRED), offset = ptx_reg_new(b, PTX_U64);
    PtxReg v = ptx_reg_new(b, f->tf32 ? PTX_B32 : PTX_B16);
    ptx_inst(b, "and.pred $r, $r, $r", in, ptx_gemm_emit_below(b, k_i, g->k), ptx_gemm_emit_below(b, o_i, outer_extent));
    ptx_inst(b, "add.u64 $r, $r, $r", offset, ptx_gemm_emit_offset(b, outer, o_i),
             ptx_gemm_emit_offset(b, k, k_i));
    ptx_inst(b, "add.u64 $r, $r, $r", offset, offset, batch_offset);
    PtxReg address = ptx_gemm_emit_address(b, pointer, offset, f->bytes);
    int64_t shift = (o_step * i * f->pitch + k_step * i) * f->bytes;
    if (f->tf32) {
      PtxReg x = ptx_reg_new(b, PTX_F32);
      ptx_inst(b, "mov.f32 $r, 0f00000000", x);
      ptx_inst(b, "@$r ld.global.f32 $r, [$r]", in, x, address);
      ptx_inst(b, "cvt.rna.tf32.f32 $r, $r", v, x);
      ptx_inst(b, "st.shared.b32 [$r+$D], $r", at, shift, v);
      continue;
    }
    ptx_inst(b, "mov.b16 $r, 0", v);
    ptx_inst(b, "@$r ld.global.b16 $r, [$r]", in, v, address);
    ptx_inst(b, "st.shared.b16 [$r+$D], $r", at, shift, v);
  }
}

/* The warp's position: lane group (l / 4), lane in group (l % 4), and its
 * quarter of the tile (rows wm * 32, columns wn * 32). */
typedef struct MmaLane {
  PtxReg group, in_group, warp_m, warp_n;
} MmaLane;

static MmaLane mma_lane(PtxBuilder *b, PtxReg tid) {
  MmaLane l = {ptx_reg_new(b, PTX_U64), ptx_reg_new(b, PTX_U64), ptx_reg_new(b, PTX_U64), ptx_reg_new(b, PTX_U64)};
  PtxReg lane = ptx_reg_new(b, PTX_U64), warp = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "rem.u64 $r, $r, 32", lane, tid);
  ptx_inst(b, "div.u64 $r, $r, 32", warp, tid);
  ptx_inst(b, "shr.u64 $r, $r, 2", l.group, lane);
  ptx_inst(b, "and.b64 $r, $r, 3", l.in_group, lane);
  ptx_inst(b, "shr.u64 $r, $r, 1", l.warp_m, warp);
  ptx_inst(b, "and.b64 $r, $r, 1", l.warp_n, warp);
  return l;
}

/* Shared address of row (warp quarter + group) word in_group of a slab. */
static PtxReg fragment_base(PtxBuilder *b, const char *shared, const MmaLane *l, PtxReg warp_part) {
  PtxReg row = ptx_reg_new(b, PTX_U64), at = ptx_reg_new(b, PTX_U64), base = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mad.lo.u64 $r, $r, 32, $r", row, warp_part, l->group);
  ptx_inst(b, "mul.lo.u64 $r, $r, $d", at, row, MMA_ROW_BYTES);
  ptx_inst(b, "mad.lo.u64 $r, $r, 4, $r", at, l->in_group, at);
  ptx_inst(b, "mov.u64 $r, $s", base, shared);
  ptx_inst(b, "add.u64 $r, $r, $r", at, at, base);
  return at;
}

/* One k step: the warp's 2 x 4 mma tiles from the staged slabs. */
static void mma_step(PtxBuilder *b, const PtxGemm *g, const MmaForm *form, PtxReg a_at, PtxReg b_at,
                     PtxReg *sums) {
  const char *type = form->tf32 ? "tf32" : g->lhs_type == TYPE_F16 ? "f16" : "bf16";
  PtxReg a[MMA_WARP_M][4], f[MMA_WARP_N][2];
  int row8 = 8 * MMA_ROW_BYTES, k8 = 16; /* bytes: 8 rows down, half a step along k */
  for (int i = 0; i < MMA_WARP_M; i++)
    for (int r = 0; r < 4; r++) {
      a[i][r] = ptx_reg_new(b, PTX_B32);
      int shift = i * 16 * MMA_ROW_BYTES + (r & 1) * row8 + (r >> 1) * k8;
      ptx_inst(b, "ld.shared.b32 $r, [$r+$d]", a[i][r], a_at, shift);
    }
  for (int j = 0; j < MMA_WARP_N; j++)
    for (int r = 0; r < 2; r++) {
      f[j][r] = ptx_reg_new(b, PTX_B32);
      ptx_inst(b, "ld.shared.b32 $r, [$r+$d]", f[j][r], b_at, j * 8 * MMA_ROW_BYTES + r * k8);
    }
  for (int i = 0; i < MMA_WARP_M; i++)
    for (int j = 0; j < MMA_WARP_N; j++) {
      PtxReg *c = &sums[(i * MMA_WARP_N + j) * 4];
      ptx_inst(b, "mma.sync.aligned.m16n8k$d.row.col.f32.$s.$s.f32 {$r, $r, $r, $r}, {$r, $r, $r, $r}, {$r, $r}, "
                  "{$r, $r, $r, $r}",
               form->k, type, type, c[0], c[1], c[2], c[3], a[i][0], a[i][1], a[i][2], a[i][3], f[j][0], f[j][1], c[0], c[1],
               c[2], c[3]);
    }
}

/* Each sum to its place: tile (i, j), element e: row group + 8 (e / 2),
 * column 2 in_group + e % 2 within the 16x8 tile. */
static void mma_store(PtxBuilder *b, const PtxGemm *g, const PtxGemmTiles *t, const MmaLane *l, PtxReg out,
                      PtxReg *sums) {
  PtxReg row = ptx_reg_new(b, PTX_U64), column = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mad.lo.u64 $r, $r, 32, $r", row, l->warp_m, l->group);
  ptx_inst(b, "add.u64 $r, $r, $r", row, row, t->m0);
  ptx_inst(b, "mad.lo.u64 $r, $r, 32, $r", column, l->warp_n, t->n0);
  ptx_inst(b, "mad.lo.u64 $r, $r, 2, $r", column, l->in_group, column);
  PtxReg batch_offset = ptx_gemm_emit_offset(b, &g->out_batch, t->batch);
  PtxReg row_in[2 * MMA_WARP_M], row_at[2 * MMA_WARP_M], column_in[2 * MMA_WARP_N], column_at[2 * MMA_WARP_N];
  for (int r = 0; r < 2 * MMA_WARP_M; r++) {  /* rows 0, 8, 16, 24 of the quarter */
    PtxReg index = ptx_gemm_emit_add(b, row, 8 * r);
    row_in[r] = ptx_gemm_emit_below(b, index, g->m);
    row_at[r] = ptx_gemm_emit_offset(b, &g->out_m, index);
    ptx_inst(b, "add.u64 $r, $r, $r", row_at[r], row_at[r], batch_offset);
  }
  for (int c = 0; c < 2 * MMA_WARP_N; c++) {  /* columns 0, 1, 8, 9, ... */
    PtxReg index = ptx_gemm_emit_add(b, column, 8 * (c / 2) + c % 2);
    column_in[c] = ptx_gemm_emit_below(b, index, g->n);
    column_at[c] = ptx_gemm_emit_offset(b, &g->out_n, index);
  }
  int bytes = type_byte_size(g->result_type);
  for (int i = 0; i < MMA_WARP_M; i++)
    for (int j = 0; j < MMA_WARP_N; j++)
      for (int e = 0; e < 4; e++) {
        int r = 2 * i + e / 2, c = 2 * j + e % 2;
        PtxReg in = ptx_reg_new(b, PTX_PRED), offset = ptx_reg_new(b, PTX_U64);
        ptx_inst(b, "and.pred $r, $r, $r", in, row_in[r], column_in[c]);
        ptx_inst(b, "add.u64 $r, $r, $r", offset, row_at[r], column_at[c]);
        ptx_gemm_emit_store(b, ptx_gemm_emit_address(b, out, offset, bytes), in,
                            sums[(i * MMA_WARP_N + j) * 4 + e], g->result_type, PTX_F32);
      }
}

static void mma_body(PtxBuilder *b, const PtxGemm *g) {
  MmaForm form = mma_form(g);
  PtxReg lhs = ptx_param_load_global_pointer(b, "lhs"), rhs = ptx_param_load_global_pointer(b, "rhs"),
         out = ptx_param_load_global_pointer(b, "out");
  PtxReg tid32 = ptx_reg_new(b, PTX_U32), tid = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u32 $r, %tid.x", tid32);
  ptx_inst(b, "cvt.u64.u32 $r, $r", tid, tid32);
  MmaLane l = mma_lane(b, tid);
  PtxReg a_at = fragment_base(b, "gemm_lhs", &l, l.warp_m), b_at = fragment_base(b, "gemm_rhs", &l, l.warp_n);
  PtxGemmTiles t;
  ptx_gemm_tiles_begin(b, &t, g, MMA_TILE, MMA_TILE);
  PtxReg lhs_batch = ptx_gemm_emit_offset(b, &g->lhs_batch, t.batch);
  PtxReg rhs_batch = ptx_gemm_emit_offset(b, &g->rhs_batch, t.batch);
  PtxReg sums[MMA_WARP_M * MMA_WARP_N * 4];
  for (int i = 0; i < MMA_WARP_M * MMA_WARP_N * 4; i++) {
    sums[i] = ptx_reg_new(b, PTX_F32);
    ptx_gemm_emit_zero(b, sums[i], PTX_F32);
  }
  PtxReg k0 = ptx_reg_new(b, PTX_U64), past = ptx_reg_new(b, PTX_PRED);
  PtxLabel step = ptx_label_new(b, "k_step"), steps_done = ptx_label_new(b, "k_done");
  ptx_inst(b, "mov.u64 $r, 0", k0);
  ptx_label_place(b, step);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", past, k0, g->k);
  ptx_inst(b, "@$r bra $l", past, steps_done);
  mma_stage(b, g, &form, "gemm_lhs", lhs, lhs_batch, &g->lhs_m, &g->lhs_k, g->m, tid, k0, t.m0);
  mma_stage(b, g, &form, "gemm_rhs", rhs, rhs_batch, &g->rhs_n, &g->rhs_k, g->n, tid, k0, t.n0);
  ptx_inst(b, "bar.sync 0");
  mma_step(b, g, &form, a_at, b_at, sums);
  ptx_inst(b, "bar.sync 0");  /* the slabs are read before the next step overwrites them */
  ptx_inst(b, "add.u64 $r, $r, $d", k0, k0, form.k);
  ptx_inst(b, "bra $l", step);
  ptx_label_place(b, steps_done);
  mma_store(b, g, &t, &l, out, sums);
  ptx_gemm_tiles_end(b, &t);
}

bool ptx_gemm_mma_emit(PtxBuilder *b, const PtxGemm *g, const char *entry, PtxGemmShape *shape, Status *st) {
  (void)st;
  char what[160];
  bool tf32 = g->lhs_type == TYPE_F32;
  snprintf(what, sizeof what, "gemm.mma (mma.sync m16n8k%d%s): %s x %s -> %s, batch %lld, %lld x %lld x %lld",
           tf32 ? 8 : 16, tf32 ? " tf32" : "", type_name(g->lhs_type), type_name(g->rhs_type), type_name(g->result_type), (long long)g->batch,
           (long long)g->m, (long long)g->n, (long long)g->k);
  ptx_gemm_kernel_begin(b, entry, what, MMA_THREADS, g);
  ptx_shared_declare(b, "gemm_lhs", PTX_B16, MMA_TILE * MMA_ROW_BYTES / 2, 16);
  ptx_shared_declare(b, "gemm_rhs", PTX_B16, MMA_TILE * MMA_ROW_BYTES / 2, 16);
  mma_body(b, g);
  ptx_kernel_end(b);
  int64_t tiles = g->batch * ((g->m + MMA_TILE - 1) / MMA_TILE) * ((g->n + MMA_TILE - 1) / MMA_TILE);
  *shape = (PtxGemmShape){"gemm.mma", MMA_THREADS, tiles < 1 ? 1 : tiles, 0};
  return true;
}
