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
#include "ir/scatter_plan.h"

/* A kernel of the kernel IR written as PTX and launched over bindings
 * (its inputs, then its outputs). */
bool gpu_launch_lowered_kernel(GpuCompile *c, const Instruction *inst, const Kernel *k, const char *suffix,
                               const int *bindings, int count);

/* gpu_scatter_apply.c */
/* Why the GPU refuses a scatter of program: operands, indices, updates
 * and results row-major arrays of types the kernel computes on, no result
 * over the indices or updates. NULL when it compiles it. */
const char *gpu_scatter_apply_refusal(const Program *program, const Instruction *inst);
bool gpu_compile_scatter_apply(GpuCompile *c, const Instruction *inst);

/* A scatter's index arithmetic, fixed at compile time: the plan every
 * implementation executes (src/ir/scatter_plan.h: the walk visits scatter
 * index k row-major over the updates' scatter dims and, inside, window
 * element w row-major over update_window_dims, the evaluator's order), and
 * what the GPU's kernel adds: element strides of its row-major arrays,
 * element types, and the atomic form of the combiner. */
typedef struct PtxScatterPlan {
  ScatterPlan plan;
  ElementType types[AXLE_MAX_RANK];        /* of input i (and update i) */
  ElementType index_type;
  int64_t scatter_update_stride[AXLE_MAX_RANK];  /* element stride in the updates */
  int64_t scatter_indices_stride[AXLE_MAX_RANK]; /* element stride in the indices */
  int64_t window_update_stride[AXLE_MAX_RANK];
  int64_t vector_stride;                   /* along index_vector_dim (0: implicit) */
  int64_t operand_stride[AXLE_MAX_RANK];
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
