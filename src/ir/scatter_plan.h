/* The description of a scatter, built once from its dimension numbers
 * (scatter_plan_make) and executed by every implementation: the evaluator
 * (src/ir/eval/eval_gather.c), the CPU backend's routine
 * (src/emit_x86/cpu_scatter.c) and the GPU backend's walk
 * (src/emit_ptx/gpu_scatter_apply.c, ptx_scatter.c).
 *
 * The updates' dims split in two: update_window_dims walk a window, the
 * others ("scatter dims", in order) pick an index vector from the indices
 * (the indices' dims but index_vector_dim, in order). Scatter index k is
 * visited row-major over the scatter dims and, inside it, window element w
 * row-major over update_window_dims: the evaluator's order, XLA's
 * HloEvaluator's. The window's element 0 lands on the operand at `start`:
 * the index vector's entries on scatter_dims_to_operand_dims, the scatter
 * index's batching components on input_batching_dims, 0 elsewhere; each
 * operand dim that is neither inserted nor batching takes one window dim,
 * in order. A window that would reach past the operand anywhere is
 * dropped whole, as XLA does (HloEvaluator::HandleScatter; the StableHLO
 * spec leaves it to the implementation). */
#ifndef AXLE_IR_SCATTER_PLAN_H
#define AXLE_IR_SCATTER_PLAN_H

#include "ir.h"

typedef struct ScatterPlan {
  int n;                                       /* inputs, updates and results */
  int operand_rank, update_rank, indices_rank;
  int64_t operand_dims[AXLE_MAX_RANK];
  int scatter_count;                           /* the updates' scatter dims */
  int scatter_axes[AXLE_MAX_RANK];             /* update dim of scatter component j */
  int scatter_indices_dim[AXLE_MAX_RANK];      /* indices dim of scatter component j */
  int64_t scatter_sizes[AXLE_MAX_RANK], scatter_total;
  int window_count;                            /* update_window_dims */
  int window_axes[AXLE_MAX_RANK];              /* update dim of window component j */
  int64_t window_sizes[AXLE_MAX_RANK], window_total;
  int window_of_operand[AXLE_MAX_RANK];        /* window component feeding operand dim d, or -1 */
  int64_t window_extent_of_operand[AXLE_MAX_RANK]; /* 1 for inserted and batching dims */
  int index_vector_dim;                        /* = indices_rank: an implicit vector of length 1 */
  int vector_length;                           /* scatter_dims_to_operand_dims */
  int vector_operand_dim[AXLE_MAX_RANK];
  int batching_count;
  int batching_operand_dim[AXLE_MAX_RANK];
  int batching_scatter_axis[AXLE_MAX_RANK];    /* the scatter component that is its index */
} ScatterPlan;

/* The plan of scatter(inputs..., indices, updates..., to_apply); NULL, or
 * what does not fit (the verifier's checks are assumed; these are the
 * ones the walk's memory safety needs). */
const char *scatter_plan_make(const Instruction *inst, ScatterPlan *p);

/* Reads entry indices_index (a full index of the indices array) as s64; a
 * u64 past INT64_MAX reads as INT64_MAX, "too large", not negative. */
typedef int64_t ScatterIndexRead(const void *context, const int64_t *indices_index);
/* The operand position of window element 0 for scatter index
 * scatter_index (scatter_count components), and whether the whole window
 * fits inside the operand. */
bool scatter_window_start(const ScatterPlan *p, ScatterIndexRead *read, const void *context,
                          const int64_t *scatter_index, int64_t *start);
/* Window element window_index of that scatter index: its update index and
 * its operand index. */
void scatter_window_element(const ScatterPlan *p, const int64_t *scatter_index, const int64_t *window_index,
                            const int64_t *start, int64_t *update_index, int64_t *operand_index);

#endif
