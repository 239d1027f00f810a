/* What the GEMM paths (ptx_gemm.c, ptx_gemm_mma.c, ptx_gemm_wgmma.c,
 * ptx_gemm_complex.c) share, defined in ptx_gemm_emit.c. */
#ifndef AXLE_EMIT_PTX_PTX_GEMM_INTERNAL_H
#define AXLE_EMIT_PTX_PTX_GEMM_INTERNAL_H

#include "emit_ptx/ptx_gemm.h"

/* The loop over output tiles, tile = ctaid.x, += nctaid.x: begin places
 * the loop head and splits the tile number into batch, m0 and n0. */
typedef struct PtxGemmTiles {
  int64_t tiles_m, tiles_n, count;
  PtxReg tile, batch, m0, n0;
  PtxLabel next, done;
} PtxGemmTiles;

void ptx_gemm_tiles_begin(PtxBuilder *b, PtxGemmTiles *t, const PtxGemm *g, int tile_m, int tile_n);
/* Steps to the next tile; after the loop, ret. */
void ptx_gemm_tiles_end(PtxBuilder *b, PtxGemmTiles *t);

/* The sum's type for g's types (f32, f64, s32, s64), or a refusal. */
bool ptx_gemm_accumulator_of(const PtxGemm *g, PtxType *acc, Status *st);
/* The .entry with parameters lhs, rhs, out (then lhs_scale, rhs_scale for
 * scaled-dot; sizes, group for ragged-dot). */
void ptx_gemm_kernel_begin(PtxBuilder *b, const char *entry, const char *what, int threads, const PtxGemm *g);

PtxReg ptx_gemm_emit_offset(PtxBuilder *b, const PtxGemmDims *d, PtxReg index);
PtxReg ptx_gemm_emit_address(PtxBuilder *b, PtxReg base, PtxReg offset, int bytes);
PtxReg ptx_gemm_emit_below(PtxBuilder *b, PtxReg index, int64_t limit);
PtxReg ptx_gemm_emit_add(PtxBuilder *b, PtxReg index, int64_t add);
/* An operand element of type t (0 where pred is false) converted to result
 * type r, in the sum's type acc. */
PtxReg ptx_gemm_emit_load(PtxBuilder *b, PtxReg address, PtxReg pred, ElementType t, ElementType r,
                          PtxType acc);
void ptx_gemm_emit_store(PtxBuilder *b, PtxReg address, PtxReg pred, PtxReg sum, ElementType r, PtxType acc);
void ptx_gemm_emit_multiply_add(PtxBuilder *b, PtxReg sum, PtxReg x, PtxReg y, PtxType acc);
void ptx_gemm_emit_zero(PtxBuilder *b, PtxReg r, PtxType acc);

#endif
