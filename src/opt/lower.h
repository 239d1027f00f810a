/* Lowering: one fusion (or one unfused op) becomes one kernel.
 *
 * This is where the index arithmetic of every data-movement op lives, once:
 * the lowering walks the fused computation from its root, carrying the
 * logical index of the element being computed, and rewrites that index as
 * it passes each op (a transpose permutes it, a slice scales and shifts it,
 * a pad tests it, a reshape linearises and splits it, ...). Both code
 * generators consume the result. */
#ifndef AXLE_OPT_LOWER_H
#define AXLE_OPT_LOWER_H

#include "ir/kernel/kernel.h"

/* A loop fusion, an input (reduce) fusion, or an unfused elementwise, shape
 * or reduce op. NULL with STATUS_UNSUPPORTED in st for what the kernel IR
 * does not express yet (dot, convolution, gather, sort, ...: their own
 * kernel kinds) — never a wrong kernel. */
Kernel *lower_to_kernel(const Instruction *inst, Status *st);

/* The epilogue of an output fusion: the fused computation with `dot` (an
 * instruction of it, computed by the caller, e.g. through a GEMM) read as
 * one more input, the last, whose KernelBuffer.source is dot. */
Kernel *lower_epilogue(const Instruction *fusion, const Instruction *dot, Status *st);

/* select-and-scatter as two kernels, run in order (src/opt/lower_window.c).
 * Part 0 (inputs: the op's operands) stores, for each window placement,
 * the row-major position in the operand of the element select picks (-1
 * when the window holds none): s64, the source's dims, output 0. Part 1
 * reads that as a fourth input, after operand, source and init, and
 * stores the result. */
Kernel *lower_select_and_scatter(const Instruction *inst, int part, Status *st);

/* A scatter's update computation as a rank-0 kernel
 * (src/opt/lower_scatter.c): inputs the N current values then the N update
 * values, outputs the N new values. A runtime routine walks the updates. */
Kernel *lower_scatter_combiner(const Instruction *scatter, Status *st);
/* A computation on scalars (a sort's comparator) as a rank-0 kernel that
 * applies it once: inputs are its parameters in order, then any constants
 * it holds (KernelBuffer.constant set); the one output is its root. origin
 * (the op that calls it) names the kernel in listings and messages. */
Kernel *lower_scalar_computation(const Computation *c, const Instruction *origin, Status *st);

#endif
