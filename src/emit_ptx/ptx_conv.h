/* Convolutions on the GPU as implicit GEMMs.
 *
 *   gpu_conv.c  an HLO convolution (window, groups, layouts; dim_labels
 *               always canonical, b01f_01io->b01f: conv_plan.h) becomes a
 *               PtxConv: the GEMM it is, per group, with the strides that
 *               find each operand element in memory
 *   ptx_conv.c  the PtxConv as one SIMT kernel: shared-memory tiles of
 *               both operands, a register tile of outputs per thread
 *
 * The GEMM of group g (feature groups or batch groups; at most one of the
 * two counts is above 1, so g is one or the other):
 *   M = output batch x output spatial positions   (rows: output pixels)
 *   N = output features of one group              (columns)
 *   K = kernel taps x input features of one group (k = tap * Cg + c)
 *   A[m, k] = the lhs element that tap of pixel m reads (0 in padding or in
 *             a hole of the lhs dilation), B[k, n] = the rhs element.
 * The lhs is never copied into a column matrix: each A element is found
 * from (m, k) as the tile is loaded, hence "implicit". */
#ifndef AXLE_EMIT_PTX_PTX_CONV_H
#define AXLE_EMIT_PTX_PTX_CONV_H

#include "emit_ptx/ptx_builder.h"
#include "ir/kernel/kernel.h"

typedef struct PtxConv {
  ElementType type;                 /* the result's: f32, f64, f16, bf16, c64 or c128 */
  ElementType lhs_type, rhs_type;   /* the same, or a type it holds exactly (f16 into f32) */
  int spatial_count;
  int64_t groups;                   /* feature_group_count x batch_group_count */
  int64_t out_batch;                /* the result's batch */
  int64_t group_in_features;        /* Cg: the kernel's input features */
  int64_t group_out_features;       /* Og: output features / groups */
  int64_t in_spatial[AXLE_MAX_RANK], kernel_spatial[AXLE_MAX_RANK], out_spatial[AXLE_MAX_RANK];
  WindowDim window[AXLE_MAX_RANK];  /* stride, padding, dilations, reversal */
  /* Strides in elements, in each buffer's own layout. */
  int64_t lhs_batch, lhs_feature, lhs_spatial[AXLE_MAX_RANK];
  int64_t lhs_group;                /* how far group g+1's lhs starts from g's */
  int64_t rhs_in_feature, rhs_out_feature, rhs_spatial[AXLE_MAX_RANK];
  int64_t out_batch_stride, out_feature, out_spatial_stride[AXLE_MAX_RANK];
} PtxConv;

/* An output fusion's epilogue, applied to each sum before it is stored:
 * the loop kernel lower_epilogue made, whose input conv_input is the
 * convolution's value. The kernel then stores only what the epilogue
 * stores, and its parameters are (lhs, rhs, in0.., out0..): the
 * epilogue's buffers (in<conv_input> is never read). */
typedef struct PtxConvEpilogue {
  const Kernel *kernel;
  int conv_input;
} PtxConvEpilogue;

/* Whether the epilogue can run at the store: a loop kernel over the
 * result's dimensions (in its own order, or permuted by a relabel), of
 * real values, reading the convolution only at the point it computes. */
bool ptx_conv_epilogue_fits(const PtxConv *conv, const PtxConvEpilogue *epilogue);

/* Whether the kernel computes a result of type `result` from an operand
 * of type `operand`: result f32, f64, f16, bf16, c64 or c128, the operand
 * the same or a real type whose every value the result holds (f16/bf16
 * into f32 or f64, f32 into f64), since the evaluator converts operands to
 * the result type. */
bool ptx_conv_types_fit(ElementType result, ElementType operand);

/* The GEMM's extents (per group). */
int64_t ptx_conv_m(const PtxConv *conv);
int64_t ptx_conv_n(const PtxConv *conv);
int64_t ptx_conv_k(const PtxConv *conv);

/* gpu_conv.c: conv (an OP_CONVOLUTION) as a PtxConv, its operands and
 * result stored in the layouts of lhs, rhs and result; false with the
 * reason in st (STATUS_UNSUPPORTED) for what the kernel does not do. */
bool ptx_conv_describe(const Instruction *conv, const Shape *lhs, const Shape *rhs, const Shape *result,
                       PtxConv *out, Status *st);

/* Writes the .entry `name` with parameters (lhs, rhs, out: .u64 global
 * pointers), or those of the epilogue when it is not NULL (it must fit).
 * *blocks and *threads: the launch it is written for; the kernel loops
 * over its tiles, so a smaller grid is still correct. */
bool ptx_conv_emit(PtxBuilder *b, const PtxConv *conv, const PtxConvEpilogue *epilogue, const char *name,
                   int64_t *blocks, int *threads, Status *st);

#endif
