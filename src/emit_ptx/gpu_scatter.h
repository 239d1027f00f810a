/* What the GPU backend's scatter files share:
 *
 *   gpu_scatter.c        select-and-scatter (the kernel IR's two kernels),
 *                        and the helper that launches a lowered kernel
 *   gpu_scatter_apply.c  scatter: the plan of index arithmetic, the launches
 *   ptx_scatter.c        scatter's kernels: copy, and the update walk */
#ifndef AXLE_EMIT_PTX_GPU_SCATTER_H
#define AXLE_EMIT_PTX_GPU_SCATTER_H

#include "emit_ptx/gpu_compile.h"
#include "ir/kernel/kernel.h"

/* A kernel of the kernel IR written as PTX and launched over bindings
 * (its inputs, then its outputs). */
bool gpu_launch_lowered_kernel(GpuCompile *c, const Instruction *inst, const Kernel *k, const char *suffix,
                               const int *bindings, int count);

/* gpu_scatter_apply.c */
bool gpu_compile_scatter_apply(GpuCompile *c, const Instruction *inst);

/* A scatter's index arithmetic, fixed at compile time (all arrays
 * row-major). The walk visits scatter index k (row-major over the
 * updates' scatter dims) and, inside, window element w (row-major over
 * update_window_dims): the evaluator's order. */
typedef struct PtxScatterPlan {
  int n;                                   /* inputs, updates and results */
  ElementType types[AXLE_MAX_RANK];        /* of input i (and update i) */
  ElementType index_type;
  int64_t scatter_total, window_total;     /* the walk is scatter_total * window_total long */
  int scatter_count;                       /* the updates' scatter dims */
  int64_t scatter_sizes[AXLE_MAX_RANK];
  int64_t scatter_update_stride[AXLE_MAX_RANK];  /* element stride in the updates */
  int64_t scatter_indices_stride[AXLE_MAX_RANK]; /* element stride in the indices */
  int window_count;
  int64_t window_sizes[AXLE_MAX_RANK];
  int64_t window_update_stride[AXLE_MAX_RANK];
  int vector_length;                       /* scatter_dims_to_operand_dims.count */
  int64_t vector_stride;                   /* along index_vector_dim (0: implicit) */
  int vector_operand_dim[AXLE_MAX_RANK];
  int batching_count;
  int batching_operand_dim[AXLE_MAX_RANK];
  int batching_scatter_axis[AXLE_MAX_RANK];  /* which scatter index component */
  int operand_rank;
  int64_t operand_dims[AXLE_MAX_RANK], operand_stride[AXLE_MAX_RANK];
  int window_of_operand[AXLE_MAX_RANK];    /* window component feeding operand dim d, or -1 */
  int64_t window_extent_of_operand[AXLE_MAX_RANK]; /* 1 for inserted and batching dims */
  /* The red.global operation ("add.u32", "max.s64", ...) that applies the
   * combiner atomically, or NULL for the inline combiner. */
  const char *atomic;
} PtxScatterPlan;

/* ptx_scatter.c */
/* .entry name(in, out): out[i] = in[i] for count elements of `bytes`. */
void ptx_scatter_emit_copy(PtxBuilder *b, const char *name, int64_t count, int bytes);
/* .entry name(indices, updates..., results...): the walk, each in-bounds
 * element results = combiner(results..., updates...). Launched on one
 * thread, it runs in the evaluator's order; on many (unique indices, or
 * an atomic combiner: red.global), any thread may take any element. */
bool ptx_scatter_emit_apply(PtxBuilder *b, const char *name, const PtxScatterPlan *plan, const Computation *combiner,
                            Status *st);

#endif
