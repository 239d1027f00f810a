/* GEMM kernels in PTX: one batched matrix product
 *   out[b, m, n] = sum over k of lhs[b, m, k] * rhs[b, k, n]
 * where each of b, m, n, k stands for a group of an operand's dimensions
 * (HLO's dot dimension numbers, gpu_dot.c), each group described by the
 * element strides of its dimensions in the operand's physical layout. So
 * any layout and any dot dimension numbers are one kernel, and no operand
 * is copied into another layout first.
 *
 * Paths (ptx_gemm_emit chooses):
 *   gemm.simt   any element type: a 256-thread block computes a 64x64
 *               tile of out, stepping k by 16 through shared memory; each
 *               thread keeps a 4x4 register tile of sums (f32 for f32,
 *               f16 and bf16 results, f64 for f64, 32- or 64-bit wrapping
 *               integers for integer results)
 *   gemm.complex c64 and c128: one thread per output, the evaluator's
 *               arithmetic to the bit (ptx_gemm_complex.c)
 *   gemm.mma    f16 or bf16 operands with an f16, bf16 or f32 result on
 *               sm_80+: mma.sync.aligned.m16n8k16 on tensor cores, f32
 *               sums; tf32 for f32 operands only where the caller allows
 *               (ptx_gemm_mma.c)
 * Every kernel loops over output tiles (tile += gridDim.x), so any grid is
 * correct; edges are masked, so any m, n, k (0 included) is. */
#ifndef AXLE_EMIT_PTX_PTX_GEMM_H
#define AXLE_EMIT_PTX_PTX_GEMM_H

#include "emit_ptx/ptx_builder.h"

/* The dimensions one GEMM index runs over in one operand, outermost first:
 * index i is split into digits by the extents, and the element offset is
 * sum(digit * stride). Neighbouring dims that lie evenly spaced are merged
 * (ptx_gemm_dims_add), so a plain matrix has one entry per index. */
typedef struct PtxGemmDims {
  int count;
  int64_t extent[AXLE_MAX_RANK], stride[AXLE_MAX_RANK];
  int64_t block[AXLE_MAX_RANK];  /* > 1: the offset is (digit / block) * stride (a scale's) */
} PtxGemmDims;

/* Appends a dim (inner to those already there); extent-1 dims are dropped. */
void ptx_gemm_dims_add(PtxGemmDims *d, int64_t extent, int64_t stride);
/* The same for a scale of scaled-dot: one scale element per block of
 * `block` entries of the operand's dim (never merged). */
void ptx_gemm_dims_add_blocked(PtxGemmDims *d, int64_t extent, int64_t stride, int64_t block);
/* The stride of the innermost dim, 0 when there is none. */
int64_t ptx_gemm_dims_inner_stride(const PtxGemmDims *d);

/* ragged-dot (gpu_dot.c) as launches of one GEMM kernel that takes two
 * more parameters: a pointer to group_sizes (s32 or s64) and the group g
 * as a scalar. The ragged index (m for ROWS, k for SUMS) runs over several
 * lhs dims, one of them the ragged one: `coordinate` gives an index's
 * coordinate along it (stride 1 on the ragged dim, 0 on the others).
 * group_sizes is [G] or [batch..., prefix..., G] in any layout: the size
 * of group g for batch b and ragged index i lies at element
 *   sizes_batch(b) + sizes_prefix(i) + g * sizes_group_stride
 * (sizes_prefix: the strides of the ragged index's dims before the ragged
 * one, 0 on the rest; both empty for [G]). Group g spans the coordinates
 * [start, end): end the running sum of the sizes through g, saturating at
 * the s64 range, start the largest running sum before g (0 at least), so
 * that a coordinate is in the first group whose end passes it, as the
 * evaluator's group_of says even for negative sizes.
 *   ROWS  the ragged dim is one of lhs's free dims (m): rows in group g take
 *         rhs's group g (rhs offset + g * rhs_group_stride); launch g = G
 *         writes zeros to the rows past the last group
 *   SUMS  the ragged dim is one of the contracting dims (k): launch g sums
 *         over group g's k only (lhs is zero elsewhere, as the evaluator
 *         masks it), into out + g * out_group_stride */
typedef enum PtxGemmRaggedKind { PTX_GEMM_PLAIN, PTX_GEMM_RAGGED_ROWS, PTX_GEMM_RAGGED_SUMS } PtxGemmRaggedKind;

typedef struct PtxGemmRagged {
  PtxGemmRaggedKind kind;
  int64_t groups;
  ElementType sizes_type;
  PtxGemmDims coordinate, sizes_batch, sizes_prefix;
  bool sizes_per_index;  /* sizes_prefix has a dim: the group range is per row (ROWS) or per k (SUMS) */
  int64_t sizes_group_stride, rhs_group_stride, out_group_stride;
} PtxGemmRagged;

typedef struct PtxGemm {
  int64_t batch, m, n, k;
  PtxGemmRagged ragged;
  ElementType lhs_type, rhs_type, result_type;
  PtxGemmDims lhs_batch, lhs_m, lhs_k;
  PtxGemmDims rhs_batch, rhs_k, rhs_n;
  PtxGemmDims out_batch, out_m, out_n;
  /* scaled-dot: each operand element is multiplied by its scale's first
   * (two more pointer parameters, lhs_scale and rhs_scale); f32 and f64
   * results only, so that the product is the evaluator's, rounded once. */
  bool scaled;
  ElementType lhs_scale_type, rhs_scale_type;
  PtxGemmDims lhs_scale_batch, lhs_scale_m, lhs_scale_k;
  PtxGemmDims rhs_scale_batch, rhs_scale_k, rhs_scale_n;
  bool allow_tf32;   /* the dot's precision config lets f32 go through tf32 */
} PtxGemm;

typedef struct PtxGemmShape {
  const char *path;    /* "gemm.simt", "gemm.mma", "gemm.wgmma" (static) */
  int block_threads;
  int64_t blocks;      /* covers every output tile once */
  unsigned shared_bytes;  /* dynamic shared memory the launch must give */
} PtxGemmShape;

/* Appends .entry `entry` (its name must contain "gemm") taking three .u64
 * pointers: lhs, rhs, out. Refuses (STATUS_UNSUPPORTED, nothing left in
 * the builder) element types it has no arithmetic for: mixed complex,
 * scaled or ragged complex, pred, integer with float, f8. */
bool ptx_gemm_emit(PtxBuilder *b, const PtxGemm *g, const char *entry, PtxGemmShape *shape, Status *st);

/* ---- ptx_gemm_mma.c ----
 * Whether g takes the tensor-core path on b's target, and its kernel. */
bool ptx_gemm_mma_fits(const PtxBuilder *b, const PtxGemm *g);
bool ptx_gemm_mma_emit(PtxBuilder *b, const PtxGemm *g, const char *entry, PtxGemmShape *shape, Status *st);

/* ---- ptx_gemm_wgmma.c ----
 * gemm.wgmma, sm_90a's fast path: f16/bf16 operands, wgmma.mma_async fed
 * by the TMA. The kernel takes lhs, rhs, out, then two tensor maps by
 * value (.param .align 64 .b8 lhs_map[128], rhs_map[128]), each over its
 * operand as a 3-d array {k, rows, batch} (innermost first; rows are m for
 * lhs, n for rhs), 128-byte swizzle, boxes of {BOX_K, BOX_ROWS, 1}; and
 * shape->shared_bytes of dynamic shared memory. */
enum { PTX_GEMM_WGMMA_BOX_K = 64, PTX_GEMM_WGMMA_BOX_ROWS = 128 };
bool ptx_gemm_wgmma_fits(const PtxBuilder *b, const PtxGemm *g);
bool ptx_gemm_wgmma_emit(PtxBuilder *b, const PtxGemm *g, const char *entry, PtxGemmShape *shape, Status *st);
/* Whether an operand (its batch, rows and k dims) lies as the TMA can read
 * it: k contiguous, rows `pitch` elements apart and batches `batch_stride`,
 * both multiples of 8 (16 bytes). */
bool ptx_gemm_wgmma_operand_direct(const PtxGemmDims *batch, const PtxGemmDims *rows, const PtxGemmDims *k,
                                   int64_t *pitch, int64_t *batch_stride);
/* A kernel (params operand, packed) that copies an operand into a
 * [batches][rows][pitch] array, k contiguous, zeros past k. */
typedef struct PtxGemmPack {
  ElementType type;                    /* 16-bit */
  int64_t batches, rows, k, pitch;
  PtxGemmDims batch_dims, row_dims, k_dims;
} PtxGemmPack;
bool ptx_gemm_pack_emit(PtxBuilder *b, const char *entry, const PtxGemmPack *p, PtxGemmShape *shape);

/* ---- ptx_gemm_complex.c ----
 * gemm.complex: c64 x c64 -> c64 and c128 x c128 -> c128 (not scaled or
 * ragged), one thread per output, the evaluator's arithmetic to the bit. */
bool ptx_gemm_complex_fits(const PtxGemm *g);
bool ptx_gemm_complex_emit(PtxBuilder *b, const PtxGemm *g, const char *entry, PtxGemmShape *shape, Status *st);

#endif
