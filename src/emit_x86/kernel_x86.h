/* x86-64 machine code from the kernel IR (src/ir/kernel/kernel.h).
 *
 * One Kernel becomes one function with the ABI
 *
 *   void kernel(void *const *buffers,  inputs then outputs: element 0 of each
 *               int64_t first_row, int64_t row_count)
 *
 * A row is one point of the iteration space flattened over every dimension
 * but the innermost (loop kernels: the innermost dimension is the loop
 * inside a row) or over every output dimension (reduce kernels: one output
 * element's whole reduction runs inside its row). Rows are independent, so
 * kernel_x86_run splits them into tasks by SHAPE (a fixed number of
 * elements per task) and every thread count gives the same bits.
 *
 * Buffers are dense in their shape's layout (minor_to_major), element 0
 * first. The body is compiled one kernel op at a time, in scalar registers
 * (kernel_x86_ops.c, kernel_x86_convert.c) placed by a linear-scan
 * allocator (kernel_x86_regalloc.c). Loop kernels whose f32 values load
 * and store contiguously along the innermost dimension also get a SIMD loop
 * (kernel_x86_vector.c: 4, 8 or 16 lanes by ISA level) with a scalar tail,
 * or on AVX-512 one more trip of the SIMD body masked to the lanes left.
 * Reduce kernels with one f32 add/maximum/minimum accumulator over elements
 * loaded along the innermost reduced dimension keep 16 partial results in
 * vectors, combined in lane order: the same bytes at every thread count and
 * every ISA level, within rounding of the evaluator's sequential sum. A row
 * kernel (softmax, layer norm) vectorizes each phase on its own: a REDUCE
 * phase like such a reduction, the ROW phase like a loop kernel. A long sum
 * to few output points is cut into fixed chunks of its reduced range, run
 * as parallel tasks and folded in chunk order (kernel_x86.c). Every other
 * reduction runs sequentially, exactly as the evaluator does.
 *
 * The math functions (docs/math.md) are inline code transcribed from
 * mathref_* with the math builder. In a SIMD loop at avx2 and avx512 the
 * f32 exp, expm1, log, log1p, tanh, logistic, erf, cbrt, atan2 and the
 * inverse and hyperbolic functions, sin, cos and tan run in every lane at
 * once (the builder's vector mode, kernel_x86_math_lanes.c); the other
 * f32 ones (pow; every one at sse4) run
 * lane by lane through the scalar code inside the SIMD loop, and an f64
 * kernel with a math function stays scalar. Either way each lane gives
 * mathref's bits, at every ISA level.
 *
 * What it cannot compile (a type or an op it has no code for yet) is
 * refused with STATUS_UNSUPPORTED naming the op and its type: never a
 * wrong answer.
 */
#ifndef AXLE_EMIT_X86_KERNEL_X86_H
#define AXLE_EMIT_X86_KERNEL_X86_H

#include <stdint.h>
#include <stdio.h>

#include "emit_x86/cpu_features.h"
#include "ir/kernel/kernel.h"
#include "runtime/thread_pool.h"

typedef struct CompiledKernel CompiledKernel;

typedef void KernelX86Function(void *const *buffers, int64_t first_row, int64_t row_count);

/* NULL with st filled in (STATUS_UNSUPPORTED for what has no code yet). The
 * result does not keep k: it may be freed after. It keeps the listing of
 * its code for kernel_x86_print_listing. */
CompiledKernel *kernel_x86_compile(const Kernel *k, const CpuFeatures *cpu, Status *st);
/* The x86 policy: stores in k->schedule how kernel_x86_compile will run
 * k's loops at cpu's level (kernel_x86_schedule.c says how it chooses).
 * A kernel compiled unscheduled is scheduled the same way on the way. */
void kernel_x86_schedule(Kernel *k, const CpuFeatures *cpu);
/* The same, keeping the listing only when keep_listing: recording it costs
 * more than encoding the code, and only dumps read it. */
CompiledKernel *kernel_x86_compile_listed(const Kernel *k, const CpuFeatures *cpu, bool keep_listing, Status *st);
/* Another owner of ck (steps of one program that run the same kernel, which
 * compile and free on one thread); each owner calls kernel_x86_free. */
CompiledKernel *kernel_x86_share(CompiledKernel *ck);
void kernel_x86_free(CompiledKernel *ck);

/* All rows, split into tasks by shape and run on pool (NULL: this thread).
 * A split sum allocates its chunk sums' block for the call. */
void kernel_x86_run(const CompiledKernel *ck, void *const *buffers, ThreadPool *pool);
/* The same over buffers that end, for a split sum, with one more: its
 * chunk sums' block of kernel_x86_chunk_sum_bytes, the caller's (a CPU
 * program keeps it in its temporary block, so a run allocates nothing). */
void kernel_x86_run_with_chunk_sums(const CompiledKernel *ck, void *const *buffers, ThreadPool *pool);
/* Rows [first_row, first_row + row_count) on this thread. */
void kernel_x86_run_rows(const CompiledKernel *ck, void *const *buffers, int64_t first_row, int64_t row_count);
/* The tasks kernel_x86_run hands the pool: fixed by the shape (0 when
 * there are no rows), so a program knows at compile time whether a second
 * thread could ever help. */
int64_t kernel_x86_task_count(const CompiledKernel *ck);
/* A split sum's chunk sums, in bytes (0 for any other kernel). */
int64_t kernel_x86_chunk_sum_bytes(const CompiledKernel *ck);
int64_t kernel_x86_row_count(const CompiledKernel *ck);
/* Chunks a long sum is split into (tasks over the reduced range, folded in
 * order after), 0 when each output point's reduction runs whole. */
int64_t kernel_x86_split_chunks(const CompiledKernel *ck);
/* Elements of one row (the innermost dimension, or one reduction's). */
int64_t kernel_x86_elements_per_row(const CompiledKernel *ck);
/* The machine code (*size bytes; a split sum's fold starts at
 * *combine_offset, 0 otherwise). It is position-independent and reaches
 * nothing outside its own bytes (constants are immediates, tables sit in
 * the code, read rip-relative), so it runs wherever it is copied: what the
 * AOT writer (cpu_aot.c) places in an object's .text. */
const uint8_t *kernel_x86_code(const CompiledKernel *ck, size_t *size, size_t *combine_offset);
/* f32 lanes of the kernel's vector loop (4, 8, 16), 0 when it runs scalar code only. */
int kernel_x86_lanes(const CompiledKernel *ck);

/* The machine code in objdump's format, each block headed by the kernel op
 * and HLO instruction it came from (a comment line when compiled without
 * its listing). */
void kernel_x86_print_listing(const CompiledKernel *ck, FILE *out);

#endif
