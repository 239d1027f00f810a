/* The description of a product (dot, scaled-dot, ragged-dot), built once
 * from the dimension numbers (dot_plan_make) and read by every
 * implementation: the evaluator (src/ir/eval/eval_linalg.c), the CPU
 * backend's GEMM and gathered products (src/emit_x86/cpu_dot.c), the GPU
 * backend's GEMM (src/emit_ptx/gpu_dot.c), the optimizer's flop count and
 * its canonicalize-dots pass (src/opt/canonicalize_dots.c).
 *
 * HLO's dot_general names, for each operand, its batch dims and its
 * contracting dims, in pairs (lhs_batch[i] goes with rhs_batch[i]); every
 * other dim is free. The result's dims are the batch dims in the order
 * listed, then lhs's free dims in increasing order (M), then rhs's (N):
 *
 *   result[b..., m..., n...] = sum over k... of lhs[b, m, k] * rhs[b, k, n]
 *
 * with the contracting indices walked row-major over the list, the first
 * pair outermost: that order is the order of the sum, so it never changes
 * (the bits of a float sum depend on it).
 *
 * The canonical form of an operand (XLA's DotDecomposer) lists its dims
 * grouped: lhs as [batch, M, K], rhs as [batch, K, N], each group in the
 * plan's order. lhs_order/rhs_order is the permutation to it; an operand
 * already in that order needs no transpose. canonicalize-dots puts every
 * dot of a compiled module in it (fusion bodies included), so the CPU and
 * GPU backends meet dots only in this order; the plan still reads any
 * order, for the evaluator (which runs the module as written), for
 * ragged-dot and scaled-dot (which no pass rewrites), and for the pass
 * itself. The backends' GEMMs read each group through its strides
 * (dot_dims_merge), so they held no code for any one order to remove.
 *
 * ragged-dot (lhs_ragged, rhs_group) is the same product: rhs's group dim
 * is in no group, and a ragged contracting dim puts the group dim first in
 * the result. */
#ifndef AXLE_IR_DOT_PLAN_H
#define AXLE_IR_DOT_PLAN_H

#include "ir.h"

typedef enum DotRagged {
  DOT_RAGGED_NONE,   /* a dot, or a ragged-dot whose ragged dim is a batch dim */
  DOT_RAGGED_ROWS,   /* the ragged dim is an lhs free dim; rhs has a group dim */
  DOT_RAGGED_SUMS,   /* the ragged dim is contracting; one result per group */
} DotRagged;

typedef struct DotPlan {
  int batch_count, m_count, n_count, k_count;  /* how many dims each group has */
  /* Each group's dims in each operand, in the order the product walks
   * them (batch and contracting: the list's order; free: increasing). */
  int64_t lhs_batch[AXLE_MAX_RANK], rhs_batch[AXLE_MAX_RANK];
  int64_t lhs_m[AXLE_MAX_RANK], rhs_n[AXLE_MAX_RANK];
  int64_t lhs_k[AXLE_MAX_RANK], rhs_k[AXLE_MAX_RANK];
  /* The result's dims of each group: out_first + 0.., then on. */
  int64_t out_batch[AXLE_MAX_RANK], out_m[AXLE_MAX_RANK], out_n[AXLE_MAX_RANK];
  int out_first;           /* 1 for DOT_RAGGED_SUMS (the group dim), else 0 */
  int out_rank;
  int64_t batch, m, n, k;  /* each group's extent: the product of its dims */
  /* The canonical order: canonical dim i is the operand's dim order[i]. */
  int64_t lhs_order[AXLE_MAX_RANK], rhs_order[AXLE_MAX_RANK];
  bool lhs_canonical, rhs_canonical;  /* order is the identity */
  DotRagged ragged;
  int ragged_index;        /* ROWS: its place in lhs_m; SUMS: in lhs_k */
  int64_t rhs_group_dim;   /* ROWS: rhs's group dim; else -1 */
} DotPlan;

/* The plan of a product with dimension numbers dd over operands of shapes
 * lhs and rhs (dims only; layouts play no part); NULL, or what does not
 * fit (counts that differ, a dim out of range or named twice, sizes that
 * differ within a pair, a result above AXLE_MAX_RANK). */
const char *dot_plan_make(const DotDims *dd, const Shape *lhs, const Shape *rhs, DotPlan *p);

/* The dims dims[0..n) of s (outermost first) merged into one extent and
 * one element stride in s's layout; false when they are not evenly spaced
 * in memory. Dims of extent 1 are skipped: any stride serves them. */
bool dot_dims_merge(const Shape *s, const int64_t *dims, int n, int64_t *extent, int64_t *stride);

/* Multiply-adds of the product: batch * m * n * k. */
int64_t dot_plan_products(const DotPlan *p);
#endif
