/* The description of a convolution, built once from the instruction
 * (conv_plan_make) and read by every implementation: the evaluator
 * (src/ir/eval/eval_linalg.c), the CPU backend's implicit GEMM
 * (src/emit_x86/cpu_conv.c) and the GPU backend's (src/emit_ptx/gpu_conv.c).
 *
 * dim_labels say which dim of each operand is the batch, the feature and
 * each spatial dim; the window (stride, padding, dilations, reversal) is
 * per spatial dim, and without window={...} the kernel is the window, with
 * stride 1, no padding and no dilation. Feature groups split the input
 * features and the output features into matching contiguous runs; batch
 * groups split the input batch and the output features likewise (the
 * spec: split, convolve, concatenate along the output feature dim). At
 * most one of the two counts is above 1. */
#ifndef AXLE_IR_CONV_PLAN_H
#define AXLE_IR_CONV_PLAN_H

#include <stddef.h>

#include "ir.h"

typedef struct ConvPlan {
  int spatial_count;
  int64_t batch, features;           /* the input's B and C */
  int64_t kernel_features;           /* C / feature_groups: the input features of one group */
  int64_t out_features;              /* O */
  int64_t feature_groups, batch_groups;
  int64_t groups;                    /* feature_groups * batch_groups */
  int64_t out_batch;                 /* B / batch_groups */
  int64_t group_out_features;        /* O / groups */
  WindowDim window[AXLE_MAX_RANK];   /* defaults filled in */
  int64_t in_size[AXLE_MAX_RANK], kernel_size[AXLE_MAX_RANK], out_size[AXLE_MAX_RANK];
} ConvPlan;

/* The canonical form, dim_labels b01f_01io->b01f: input and result
 * [batch, spatial 0..S-1, feature], kernel [spatial 0..S-1, in, out]
 * (NHWC / HWIO / NHWC for two spatial dims). canonicalize-convolutions
 * writes every convolution of a compiled module in it, fusion bodies
 * included, so the CPU and GPU backends read only this order and refuse
 * any other (a packed or dynamic operand the pass leaves alone). The plan
 * itself still reads any dim_labels: the evaluator runs the module as
 * written, and the pass asks it of the convolutions it rewrites. */
ConvDims conv_dims_canonical(int spatial_count);
bool conv_dims_are_canonical(const ConvDims *cd);
/* NULL when cd is canonical; else the backends' refusal, in one wording. */
const char *conv_dims_order_refusal(const ConvDims *cd);

/* The plan of convolution conv over operands of shapes lhs and rhs (dims
 * only); false with what does not fit in why (ranks, dim_labels that are
 * no permutation, group counts, a window that is not the kernel's, a
 * result whose dims are not the convolution's). */
bool conv_plan_make(const Instruction *conv, const Shape *lhs, const Shape *rhs, ConvPlan *p, char *why,
                    size_t why_size);

/* The input position window tap `tap` of output position `out` reads in
 * one spatial dim of extent `in`, or -1 in padding or a hole of the input
 * dilation: in the dilated input element i sits at i * lhs_dilate; the
 * window of output o starts at o * stride - pad_lo (negative padding starts
 * it inside the input) and its tap k is k * rhs_dilate further on. Inline:
 * the CPU's patch packing asks it for every tap of every panel row. */
static inline int64_t conv_input_position(const WindowDim *w, int64_t out, int64_t tap, int64_t in) {
  int64_t at = out * w->stride - w->pad_lo + tap * w->rhs_dilate;
  if (at < 0) return -1;
  if (w->lhs_dilate != 1) {  /* a division: most windows have none */
    if (at % w->lhs_dilate != 0) return -1;
    at /= w->lhs_dilate;
  }
  return at < in ? at : -1;
}
#endif
