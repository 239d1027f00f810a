/* The Hopper GEMM (gemm.wgmma): f16 x f16 or bf16 x bf16 products with f32
 * sums on sm_90a, through wgmma.mma_async, its operands brought into shared
 * memory by the tensor memory accelerator (cp.async.bulk.tensor).
 *
 * A 256-thread block (two warpgroups) computes a 128x128 tile of the
 * output. The k dimension goes by in steps of 64, through a ring of four
 * stages in dynamic shared memory; each stage holds a 128x64 slab of lhs
 * and one of rhs, both [row][k] (k contiguous), 128 bytes a row, written
 * by the TMA with its 128-byte swizzle (the 16-byte chunk c of row r lands
 * at chunk c ^ (r % 8)), which is the layout wgmma's 128-byte-swizzle
 * K-major descriptors read without bank conflicts. Thread 0 issues the
 * copies: a stage's mbarrier is armed with the bytes it expects
 * (mbarrier.arrive.expect_tx), the two copies complete it, and every thread
 * waits on its phase before reading. While the tensor cores work on stage
 * s, the copies of the next three stages are in flight.
 *
 * Warpgroup w computes rows 64w .. 64w + 63 with four
 * wgmma.m64n128k16 per stage, 64 f32 sums per thread: lane l of warp v
 * holds rows 16v + l/4 and 16v + l/4 + 8, columns 8i + 2(l%4) and
 * 8i + 2(l%4) + 1 for i = 0..15 (the PTX ISA's "Register Fragments" for
 * wgmma's D matrix).
 *
 * The TMA reads each operand as a [batch][rows][k] array, k contiguous,
 * rows a multiple of 8 elements apart (gpu_dot.c packs an operand that is
 * not: ptx_gemm_pack_emit), and fills what lies past m, n or k with zeros,
 * so any m, n, k is correct and only the stores are masked. */
#include <string.h>

#include "emit_ptx/ptx_gemm_internal.h"

enum {
  WG_THREADS = 256,
  WG_TILE = PTX_GEMM_WGMMA_BOX_ROWS,                 /* 128 rows of lhs, 128 of rhs */
  WG_K = PTX_GEMM_WGMMA_BOX_K,                      /* 64 halves: one 128-byte row */
  WG_ROW_BYTES = 128,
  WG_STAGES = 4,
  WG_OPERAND_BYTES = WG_TILE * WG_ROW_BYTES,        /* 16 KB */
  WG_STAGE_BYTES = 2 * WG_OPERAND_BYTES,
  WG_SUMS = 64,                                     /* m64n128 over a warpgroup's 128 threads */
  WG_STEPS = WG_K / 16,                             /* wgmma k16 per stage */
};

bool ptx_gemm_wgmma_fits(const PtxBuilder *b, const PtxGemm *g) {
  bool half = g->lhs_type == TYPE_F16 || g->lhs_type == TYPE_BF16;
  return ptx_target_has_wgmma(&b->target) && half && g->rhs_type == g->lhs_type &&
         g->ragged.kind == PTX_GEMM_PLAIN && !g->scaled &&
         (g->result_type == g->lhs_type || g->result_type == TYPE_F32);
}

/* Whether an operand already lies as the TMA reads it. */
bool ptx_gemm_wgmma_operand_direct(const PtxGemmDims *batch, const PtxGemmDims *rows, const PtxGemmDims *k,
                                   int64_t *pitch, int64_t *batch_stride) {
  if (k->count != 1 || k->stride[0] != 1 || rows->count > 1 || batch->count > 1) return false;
  *pitch = rows->count ? rows->stride[0] : k->extent[0];
  *batch_stride = batch->count ? batch->stride[0] : 0;
  /* nested as a tensor map describes them: batches past whole row blocks */
  int64_t row_block = *pitch * (rows->count ? rows->extent[0] : 1);
  return *pitch % 8 == 0 && *pitch >= k->extent[0] && *batch_stride % 8 == 0 &&
         (!batch->count || *batch_stride >= row_block);
}

/* ------------------------------------------------------------ the kernel */

/* The registers every part of the kernel uses. */
typedef struct WgKernel {
  const PtxGemm *g;
  PtxReg tid, leader;          /* u32; thread 0 issues the copies */
  PtxReg smem, bars;           /* u32 shared addresses: the stages, the mbarriers */
  PtxReg lhs_map, rhs_map;     /* u64 generic addresses of the tensor maps */
  PtxReg phases;               /* u32: bit s is the parity stage s waits for next */
  PtxReg a_desc, b_desc;       /* u64: the descriptors of stage 0 */
  PtxReg m0, n0, batch;        /* u32 coordinates of the tile */
  int64_t steps;               /* k stages per tile */
} WgKernel;

/* The stage's mbarrier: bars + 8 stage. */
static PtxReg stage_barrier(PtxBuilder *b, const WgKernel *w, PtxReg stage) {
  PtxReg at = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mad.lo.u32 $r, $r, 8, $r", at, stage, w->bars);
  return at;
}

/* When `when` holds: arm stage's barrier and copy k step `step` of both
 * operands into it. */
static void issue_stage(PtxBuilder *b, const WgKernel *w, PtxReg when, PtxReg step, PtxReg stage) {
  PtxReg bar = stage_barrier(b, w, stage), lhs_at = ptx_reg_new(b, PTX_U32), rhs_at = ptx_reg_new(b, PTX_U32),
         k = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mad.lo.u32 $r, $r, $d, $r", lhs_at, stage, WG_STAGE_BYTES, w->smem);
  ptx_inst(b, "add.u32 $r, $r, $d", rhs_at, lhs_at, WG_OPERAND_BYTES);
  ptx_inst(b, "mul.lo.u32 $r, $r, $d", k, step, WG_K);
  ptx_inst(b, "@$r mbarrier.arrive.expect_tx.shared::cta.b64 _, [$r], $d", when, bar, WG_STAGE_BYTES);
  ptx_inst(b, "@$r cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$r], [$r, {$r, $r, $r}], [$r]",
           when, lhs_at, w->lhs_map, k, w->m0, w->batch, bar);
  ptx_inst(b, "@$r cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$r], [$r, {$r, $r, $r}], [$r]",
           when, rhs_at, w->rhs_map, k, w->n0, w->batch, bar);
}

/* A K-major, 128-byte-swizzle descriptor of the slab at shared address
 * `at`: start >> 4 in bits 0-13, leading byte offset 16 (unused by this
 * mode) in 16-29, 1024 bytes between 8-row groups in 32-45, swizzle mode 1
 * in 62-63. */
static PtxReg slab_descriptor(PtxBuilder *b, PtxReg at) {
  PtxReg d = ptx_reg_new(b, PTX_U64), start = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "shr.u32 $r, $r, 4", start, at);
  ptx_inst(b, "and.b32 $r, $r, 16383", start, start);
  ptx_inst(b, "cvt.u64.u32 $r, $r", d, start);
  uint64_t fields = (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
  ptx_inst(b, "or.b64 $r, $r, $D", d, d, (int64_t)fields);
  return d;
}

static void kernel_setup(PtxBuilder *b, WgKernel *w, const char *smem_name) {
  w->tid = ptx_reg_new(b, PTX_U32), w->leader = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "mov.u32 $r, %tid.x", w->tid);
  ptx_inst(b, "setp.eq.u32 $r, $r, 0", w->leader, w->tid);
  /* the swizzle is a function of the address bits: stages start 1024-aligned */
  w->smem = ptx_reg_new(b, PTX_U32), w->bars = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mov.u32 $r, $s", w->smem, smem_name);
  ptx_inst(b, "add.u32 $r, $r, 1023", w->smem, w->smem);
  ptx_inst(b, "and.b32 $r, $r, -1024", w->smem, w->smem);
  ptx_inst(b, "mov.u32 $r, gemm_full", w->bars);
  w->lhs_map = ptx_reg_new(b, PTX_U64), w->rhs_map = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u64 $r, lhs_map", w->lhs_map);
  ptx_inst(b, "cvta.param.u64 $r, $r", w->lhs_map, w->lhs_map);
  ptx_inst(b, "mov.u64 $r, rhs_map", w->rhs_map);
  ptx_inst(b, "cvta.param.u64 $r, $r", w->rhs_map, w->rhs_map);
  for (int s = 0; s < WG_STAGES; s++)
    ptx_inst(b, "@$r mbarrier.init.shared::cta.b64 [$r+$d], 1", w->leader, w->bars, 8 * s);
  ptx_inst(b, "@$r fence.mbarrier_init.release.cluster", w->leader);
  ptx_inst(b, "fence.proxy.async.shared::cta");
  ptx_inst(b, "bar.sync 0");
  w->phases = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mov.u32 $r, 0", w->phases);
  /* warpgroup g reads rows 64g.. of the lhs slab; both read all of rhs's */
  PtxReg group = ptx_reg_new(b, PTX_U32), a_at = ptx_reg_new(b, PTX_U32), b_at = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "shr.u32 $r, $r, 7", group, w->tid);
  ptx_inst(b, "mad.lo.u32 $r, $r, $d, $r", a_at, group, 64 * WG_ROW_BYTES, w->smem);
  ptx_inst(b, "add.u32 $r, $r, $d", b_at, w->smem, WG_OPERAND_BYTES);
  w->a_desc = slab_descriptor(b, a_at);
  w->b_desc = slab_descriptor(b, b_at);
}

/* Waits until stage's copies have landed; flips the parity it waits for next. */
static void wait_stage(PtxBuilder *b, WgKernel *w, PtxReg stage) {
  PtxReg bar = stage_barrier(b, w, stage), parity = ptx_reg_new(b, PTX_U32), bit = ptx_reg_new(b, PTX_U32),
         ready = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "shr.u32 $r, $r, $r", parity, w->phases, stage);
  ptx_inst(b, "and.b32 $r, $r, 1", parity, parity);
  PtxLabel again = ptx_label_new(b, "wait");
  ptx_label_place(b, again);
  ptx_inst(b, "mbarrier.try_wait.parity.shared::cta.b64 $r, [$r], $r", ready, bar, parity);
  ptx_inst(b, "@!$r bra $l", ready, again);
  ptx_inst(b, "shl.b32 $r, 1, $r", bit, stage);
  ptx_inst(b, "xor.b32 $r, $r, $r", w->phases, w->phases, bit);
}

/* The stage's four wgmma k16 steps into sums. */
static void multiply_stage(PtxBuilder *b, const WgKernel *w, PtxReg stage, const PtxReg *sums) {
  char list[WG_SUMS * 8] = "", name[16];
  for (int i = 0; i < WG_SUMS; i++) {
    ptx_reg_name(sums[i], name, sizeof name);
    strcat(list, i ? ", " : "");
    strcat(list, name);
  }
  const char *type = w->g->lhs_type == TYPE_F16 ? "f16" : "bf16";
  PtxReg shift = ptx_reg_new(b, PTX_U64), a = ptx_reg_new(b, PTX_U64), c = ptx_reg_new(b, PTX_U64),
         scale = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "mul.wide.u32 $r, $r, $d", shift, stage, WG_STAGE_BYTES >> 4);
  ptx_inst(b, "add.u64 $r, $r, $r", a, w->a_desc, shift);
  ptx_inst(b, "add.u64 $r, $r, $r", c, w->b_desc, shift);
  ptx_inst(b, "setp.eq.u32 $r, 0, 0", scale);  /* D = A B + D */
  ptx_inst(b, "wgmma.fence.sync.aligned");
  for (int s = 0; s < WG_STEPS; s++) {
    if (s) {  /* 16 halves further along k: 32 bytes, 2 in the descriptor's units */
      ptx_inst(b, "add.u64 $r, $r, 2", a, a);
      ptx_inst(b, "add.u64 $r, $r, 2", c, c);
    }
    ptx_inst(b, "wgmma.mma_async.sync.aligned.m64n128k16.f32.$s.$s {$s}, $r, $r, $r, 1, 1, 0, 0", type, type, list,
             a, c, scale);
  }
  ptx_inst(b, "wgmma.commit_group.sync.aligned");
  ptx_inst(b, "wgmma.wait_group.sync.aligned 0");
}

/* The k loop of one tile: the first stages issued, then each step waits,
 * multiplies, and (thread 0) refills the stage it used with step + 4. */
static void tile_k_loop(PtxBuilder *b, WgKernel *w, const PtxReg *sums) {
  PtxReg step = ptx_reg_new(b, PTX_U32), stage = ptx_reg_new(b, PTX_U32);
  for (int s = 0; s < WG_STAGES && s < w->steps; s++) {
    ptx_inst(b, "mov.u32 $r, $d", step, s);
    issue_stage(b, w, w->leader, step, step);
  }
  PtxLabel next = ptx_label_new(b, "k_step");
  ptx_inst(b, "mov.u32 $r, 0", step);
  ptx_label_place(b, next);
  ptx_inst(b, "and.b32 $r, $r, $d", stage, step, WG_STAGES - 1);
  wait_stage(b, w, stage);
  multiply_stage(b, w, stage, sums);
  ptx_inst(b, "bar.sync 0");  /* both warpgroups are done with the stage */
  PtxReg refill = ptx_reg_new(b, PTX_U32), more = ptx_reg_new(b, PTX_PRED), again = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "add.u32 $r, $r, $d", refill, step, WG_STAGES);
  ptx_inst(b, "setp.lt.u32 $r, $r, $D", more, refill, w->steps);
  ptx_inst(b, "and.pred $r, $r, $r", more, more, w->leader);
  issue_stage(b, w, more, refill, stage);
  ptx_inst(b, "add.u32 $r, $r, 1", step, step);
  ptx_inst(b, "setp.lt.u32 $r, $r, $D", again, step, w->steps);
  ptx_inst(b, "@$r bra $l", again, next);
}

/* Each thread's 64 sums to their places (the fragment layout above). */
static void tile_store(PtxBuilder *b, const WgKernel *w, const PtxGemmTiles *t, PtxReg out,
                       const PtxReg *sums) {
  const PtxGemm *g = w->g;
  PtxReg tid = ptx_reg_new(b, PTX_U64), row = ptx_reg_new(b, PTX_U64), column = ptx_reg_new(b, PTX_U64),
         lane = ptx_reg_new(b, PTX_U64), part = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "cvt.u64.u32 $r, $r", tid, w->tid);
  ptx_inst(b, "and.b64 $r, $r, 31", lane, tid);
  ptx_inst(b, "shr.u64 $r, $r, 5", part, tid);   /* warp v of the block: rows 16v.. */
  ptx_inst(b, "shr.u64 $r, $r, 2", row, lane);
  ptx_inst(b, "mad.lo.u64 $r, $r, 16, $r", row, part, row);
  ptx_inst(b, "add.u64 $r, $r, $r", row, row, t->m0);
  ptx_inst(b, "and.b64 $r, $r, 3", column, lane);
  ptx_inst(b, "mad.lo.u64 $r, $r, 2, $r", column, column, t->n0);
  PtxReg batch_offset = ptx_gemm_emit_offset(b, &g->out_batch, t->batch);
  PtxReg row_in[2], row_at[2], column_in[32], column_at[32];
  for (int r = 0; r < 2; r++) {
    PtxReg index = ptx_gemm_emit_add(b, row, 8 * r);
    row_in[r] = ptx_gemm_emit_below(b, index, g->m);
    row_at[r] = ptx_gemm_emit_offset(b, &g->out_m, index);
    ptx_inst(b, "add.u64 $r, $r, $r", row_at[r], row_at[r], batch_offset);
  }
  for (int c = 0; c < 32; c++) {
    PtxReg index = ptx_gemm_emit_add(b, column, 8 * (c / 2) + c % 2);
    column_in[c] = ptx_gemm_emit_below(b, index, g->n);
    column_at[c] = ptx_gemm_emit_offset(b, &g->out_n, index);
  }
  int bytes = type_byte_size(g->result_type);
  for (int i = 0; i < WG_SUMS; i++) {
    int r = (i % 4) / 2, c = 2 * (i / 4) + i % 2;
    PtxReg in = ptx_reg_new(b, PTX_PRED), offset = ptx_reg_new(b, PTX_U64);
    ptx_inst(b, "and.pred $r, $r, $r", in, row_in[r], column_in[c]);
    ptx_inst(b, "add.u64 $r, $r, $r", offset, row_at[r], column_at[c]);
    ptx_gemm_emit_store(b, ptx_gemm_emit_address(b, out, offset, bytes), in, sums[i], g->result_type,
                        PTX_F32);
  }
}

static void wgmma_body(PtxBuilder *b, const PtxGemm *g, const char *smem_name) {
  WgKernel w = {.g = g, .steps = (g->k + WG_K - 1) / WG_K};
  PtxReg out = ptx_param_load_global_pointer(b, "out");
  kernel_setup(b, &w, smem_name);
  PtxGemmTiles t;
  ptx_gemm_tiles_begin(b, &t, g, WG_TILE, WG_TILE);
  w.m0 = ptx_reg_new(b, PTX_U32), w.n0 = ptx_reg_new(b, PTX_U32), w.batch = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "cvt.u32.u64 $r, $r", w.m0, t.m0);
  ptx_inst(b, "cvt.u32.u64 $r, $r", w.n0, t.n0);
  ptx_inst(b, "cvt.u32.u64 $r, $r", w.batch, t.batch);
  PtxReg sums[WG_SUMS];
  for (int i = 0; i < WG_SUMS; i++) {
    sums[i] = ptx_reg_new(b, PTX_F32);
    ptx_gemm_emit_zero(b, sums[i], PTX_F32);
  }
  if (w.steps > 0) tile_k_loop(b, &w, sums);
  tile_store(b, &w, &t, out, sums);
  ptx_gemm_tiles_end(b, &t);
}

bool ptx_gemm_wgmma_emit(PtxBuilder *b, const PtxGemm *g, const char *entry, PtxGemmShape *shape, Status *st) {
  (void)st;
  char what[200], smem_name[200];
  snprintf(what, sizeof what, "gemm.wgmma (wgmma m64n128k16, TMA, %d stages): %s x %s -> %s, batch %lld, %lld x %lld x %lld",
           WG_STAGES, type_name(g->lhs_type), type_name(g->rhs_type), type_name(g->result_type), (long long)g->batch,
           (long long)g->m, (long long)g->n, (long long)g->k);
  snprintf(smem_name, sizeof smem_name, "%s_stages", entry);
  ptx_gemm_kernel_begin(b, entry, what, WG_THREADS, g);
  ptx_kernel_param_bytes(b, "lhs_map", 128, 64);
  ptx_kernel_param_bytes(b, "rhs_map", 128, 64);
  ptx_dynamic_shared_declare(b, smem_name, 1024);
  ptx_shared_declare(b, "gemm_full", PTX_B64, WG_STAGES, 8);
  wgmma_body(b, g, smem_name);
  ptx_kernel_end(b);
  int64_t tiles = g->batch * ((g->m + WG_TILE - 1) / WG_TILE) * ((g->n + WG_TILE - 1) / WG_TILE);
  *shape = (PtxGemmShape){"gemm.wgmma", WG_THREADS, tiles < 1 ? 1 : tiles, WG_STAGES * WG_STAGE_BYTES + 1024};
  return true;
}

/* ------------------------------------------------------------ packing */

enum { PACK_THREADS = 256, PACK_TILE = 32 };

/* An operand whose rows are contiguous (k strided: a [k][n] rhs) goes
 * through shared memory 32x32 at a time, so that both the reads (along
 * rows) and the writes (along k) are coalesced: thread (x, y) of 32 x 8
 * reads rows r0 + x at k0 + y + 8i, and writes k0 + x of rows r0 + y + 8i.
 * The tile's rows are 33 halves apart, so a column read spreads over the
 * banks. */
static void pack_tiled_body(PtxBuilder *b, const PtxGemmPack *p, PtxReg in, PtxReg out) {
  int64_t tiles_r = (p->rows + PACK_TILE - 1) / PACK_TILE, tiles_k = (p->pitch + PACK_TILE - 1) / PACK_TILE;
  PtxReg tid = ptx_reg_new(b, PTX_U64), x = ptx_reg_new(b, PTX_U64), y = ptx_reg_new(b, PTX_U64),
         tile = ptx_reg_new(b, PTX_U64), step = ptx_reg_new(b, PTX_U64), n32 = ptx_reg_new(b, PTX_U32),
         t32 = ptx_reg_new(b, PTX_U32), base = ptx_reg_new(b, PTX_U64), done = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "mov.u32 $r, %tid.x", t32);
  ptx_inst(b, "cvt.u64.u32 $r, $r", tid, t32);
  ptx_inst(b, "and.b64 $r, $r, 31", x, tid);
  ptx_inst(b, "shr.u64 $r, $r, 5", y, tid);
  ptx_inst(b, "mov.u32 $r, %ctaid.x", n32);
  ptx_inst(b, "cvt.u64.u32 $r, $r", tile, n32);
  ptx_inst(b, "mov.u32 $r, %nctaid.x", n32);
  ptx_inst(b, "cvt.u64.u32 $r, $r", step, n32);
  ptx_inst(b, "mov.u64 $r, pack_tile", base);
  PtxLabel loop = ptx_label_new(b, "tile"), finished = ptx_label_new(b, "tiles_done");
  ptx_label_place(b, loop);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", done, tile, p->batches * tiles_r * tiles_k);
  ptx_inst(b, "@$r bra $l", done, finished);
  PtxReg k0 = ptx_reg_new(b, PTX_U64), r0 = ptx_reg_new(b, PTX_U64), batch = ptx_reg_new(b, PTX_U64),
         rest = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "rem.u64 $r, $r, $D", k0, tile, tiles_k);
  ptx_inst(b, "div.u64 $r, $r, $D", rest, tile, tiles_k);
  ptx_inst(b, "rem.u64 $r, $r, $D", r0, rest, tiles_r);
  ptx_inst(b, "div.u64 $r, $r, $D", batch, rest, tiles_r);
  ptx_inst(b, "mul.lo.u64 $r, $r, $d", k0, k0, PACK_TILE);
  ptx_inst(b, "mul.lo.u64 $r, $r, $d", r0, r0, PACK_TILE);
  PtxReg batch_at = ptx_gemm_emit_offset(b, &p->batch_dims, batch), r = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "add.u64 $r, $r, $r", r, r0, x);
  PtxReg r_in = ptx_gemm_emit_below(b, r, p->rows);
  for (int i = 0; i < PACK_TILE / 8; i++) {  /* read: rows along x */
    PtxReg kk = ptx_reg_new(b, PTX_U64), inside = ptx_reg_new(b, PTX_PRED), offset = ptx_reg_new(b, PTX_U64),
           v = ptx_reg_new(b, PTX_B16), slot = ptx_reg_new(b, PTX_U64);
    ptx_inst(b, "add.u64 $r, $r, $r", kk, k0, y);
    ptx_inst(b, "add.u64 $r, $r, $d", kk, kk, 8 * i);
    ptx_inst(b, "and.pred $r, $r, $r", inside, r_in, ptx_gemm_emit_below(b, kk, p->k));
    ptx_inst(b, "add.u64 $r, $r, $r", offset, batch_at, ptx_gemm_emit_offset(b, &p->k_dims, kk));
    ptx_inst(b, "add.u64 $r, $r, $r", offset, offset, r);  /* rows: stride 1 */
    ptx_inst(b, "mov.b16 $r, 0", v);
    ptx_inst(b, "@$r ld.global.b16 $r, [$r]", inside, v, ptx_gemm_emit_address(b, in, offset, 2));
    ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", slot, y, PACK_TILE + 1, x);
    ptx_inst(b, "mad.lo.u64 $r, $r, 2, $r", slot, slot, base);
    ptx_inst(b, "st.shared.b16 [$r+$d], $r", slot, 8 * i * (PACK_TILE + 1) * 2, v);
  }
  ptx_inst(b, "bar.sync 0");
  PtxReg kk = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "add.u64 $r, $r, $r", kk, k0, x);
  PtxReg k_in = ptx_gemm_emit_below(b, kk, p->pitch);
  for (int i = 0; i < PACK_TILE / 8; i++) {  /* write: k along x */
    PtxReg row = ptx_reg_new(b, PTX_U64), inside = ptx_reg_new(b, PTX_PRED), at = ptx_reg_new(b, PTX_U64),
           v = ptx_reg_new(b, PTX_B16), slot = ptx_reg_new(b, PTX_U64);
    ptx_inst(b, "add.u64 $r, $r, $r", row, r0, y);
    ptx_inst(b, "add.u64 $r, $r, $d", row, row, 8 * i);
    ptx_inst(b, "and.pred $r, $r, $r", inside, k_in, ptx_gemm_emit_below(b, row, p->rows));
    ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", slot, x, PACK_TILE + 1, y);
    ptx_inst(b, "add.u64 $r, $r, $d", slot, slot, 8 * i);
    ptx_inst(b, "mad.lo.u64 $r, $r, 2, $r", slot, slot, base);
    ptx_inst(b, "ld.shared.b16 $r, [$r]", v, slot);
    ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", at, batch, p->rows, row);
    ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", at, at, p->pitch, kk);
    ptx_inst(b, "@$r st.global.b16 [$r], $r", inside, ptx_gemm_emit_address(b, out, at, 2), v);
  }
  ptx_inst(b, "bar.sync 0");  /* the tile is read before the next one is staged */
  ptx_inst(b, "add.u64 $r, $r, $r", tile, tile, step);
  ptx_inst(b, "bra $l", loop);
  ptx_label_place(b, finished);
  ptx_inst(b, "ret");
}

static bool pack_is_tiled(const PtxGemmPack *p) {
  return p->row_dims.count == 1 && p->row_dims.stride[0] == 1 && p->k_dims.count > 0;
}

/* out[b][r][kk] = the operand's (b, r, kk) for kk < k, 0 up to pitch; one
 * thread per element of out, the grid striding over the rest. */
static void pack_elementwise_body(PtxBuilder *b, const PtxGemmPack *p, PtxReg in, PtxReg out) {
  PtxReg index = ptx_global_thread_index(b), stride = ptx_reg_new(b, PTX_U64), n32 = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mov.u32 $r, %nctaid.x", n32);
  ptx_inst(b, "cvt.u64.u32 $r, $r", stride, n32);
  ptx_inst(b, "mul.lo.u64 $r, $r, 256", stride, stride);
  int64_t total = p->batches * p->rows * p->pitch;
  PtxLabel loop = ptx_label_new(b, "pack"), done = ptx_label_new(b, "packed");
  PtxReg past = ptx_reg_new(b, PTX_PRED);
  ptx_label_place(b, loop);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", past, index, total);
  ptx_inst(b, "@$r bra $l", past, done);
  PtxReg kk = ptx_reg_new(b, PTX_U64), rest = ptx_reg_new(b, PTX_U64), r = ptx_reg_new(b, PTX_U64),
         batch = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "rem.u64 $r, $r, $D", kk, index, p->pitch);
  ptx_inst(b, "div.u64 $r, $r, $D", rest, index, p->pitch);
  ptx_inst(b, "rem.u64 $r, $r, $D", r, rest, p->rows);
  ptx_inst(b, "div.u64 $r, $r, $D", batch, rest, p->rows);
  PtxReg inside = ptx_gemm_emit_below(b, kk, p->k), offset = ptx_reg_new(b, PTX_U64),
         v = ptx_reg_new(b, PTX_B16);
  ptx_inst(b, "add.u64 $r, $r, $r", offset, ptx_gemm_emit_offset(b, &p->batch_dims, batch), ptx_gemm_emit_offset(b, &p->row_dims, r));
  ptx_inst(b, "add.u64 $r, $r, $r", offset, offset, ptx_gemm_emit_offset(b, &p->k_dims, kk));
  ptx_inst(b, "mov.b16 $r, 0", v);
  ptx_inst(b, "@$r ld.global.b16 $r, [$r]", inside, v, ptx_gemm_emit_address(b, in, offset, 2));
  ptx_inst(b, "st.global.b16 [$r], $r", ptx_gemm_emit_address(b, out, index, 2), v);
  ptx_inst(b, "add.u64 $r, $r, $r", index, index, stride);
  ptx_inst(b, "bra $l", loop);
  ptx_label_place(b, done);
  ptx_inst(b, "ret");
}

bool ptx_gemm_pack_emit(PtxBuilder *b, const char *entry, const PtxGemmPack *p, PtxGemmShape *shape) {
  bool tiled = pack_is_tiled(p);
  char what[160];
  snprintf(what, sizeof what, "pack %s [%lld][%lld][%lld of %lld] for the TMA%s", type_name(p->type),
           (long long)p->batches, (long long)p->rows, (long long)p->k, (long long)p->pitch,
           tiled ? ", 32x32 tiles through shared memory" : "");
  ptx_kernel_begin(b, entry, what);
  ptx_kernel_param(b, PTX_U64, "operand");
  ptx_kernel_param(b, PTX_U64, "packed");
  ptx_kernel_set_max_threads(b, PACK_THREADS);
  PtxReg in = ptx_param_load_global_pointer(b, "operand"), out = ptx_param_load_global_pointer(b, "packed");
  int64_t blocks;
  if (tiled) {
    ptx_shared_declare(b, "pack_tile", PTX_B16, PACK_TILE * (PACK_TILE + 1), 4);
    pack_tiled_body(b, p, in, out);
    blocks = p->batches * ((p->rows + PACK_TILE - 1) / PACK_TILE) * ((p->pitch + PACK_TILE - 1) / PACK_TILE);
  } else {
    pack_elementwise_body(b, p, in, out);
    blocks = (p->batches * p->rows * p->pitch + PACK_THREADS - 1) / PACK_THREADS;
  }
  ptx_kernel_end(b);
  *shape = (PtxGemmShape){"pack", PACK_THREADS, blocks < 1 ? 1 : blocks, 0};
  return true;
}
