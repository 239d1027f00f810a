/* The f32 GEMM engine of the CPU backend: C[M,N] = A[M,K] · B[K,N].
 *
 * Every HLO dot (and, later, every convolution as an implicit GEMM) ends up
 * here. A and B come with arbitrary element strides for rows and columns, so
 * a transposed operand or any contracting-dimension layout costs nothing
 * extra: it is absorbed when the operands are copied ("packed") into the
 * panels the micro-kernel reads. C is row-major with a row stride.
 *
 * How it is built (the classic BLIS/GotoBLAS structure):
 *   gemm_kernel.c  generates the register-blocked micro-kernel with axle's
 *                  own assembler, one shape per ISA level: it multiplies an
 *                  MR x KC panel of A by a KC x NR panel of B into an MR x NR
 *                  tile of C held entirely in vector registers.
 *   gemm.c         packing, cache blocking (MC, KC, NC), edge tiles, the
 *                  direct path for small products, batches and threads.
 *
 * Determinism: K is cut into blocks by the SHAPE of the problem, never by
 * the thread count, and the whole K loop of a tile runs in one task in a
 * fixed order. Every element of C is therefore computed by the same
 * instructions in the same order whatever the thread count: results are
 * bit-identical for 1, 2 or 64 threads. (How the tiles are grouped into
 * tasks, macro tiles of C, does depend on it: one thread runs a product as
 * one task. Which task, or which kernel height or column mask, computes an
 * element never changes its bits.)
 *
 *   GemmPlan *plan = gemm_plan_create(&cpu, &st);     (once: JITs the kernel)
 *   gemm_f32(plan, pool, M, N, K, a, K, 1, b, N, 1, c, N, NULL);
 *   gemm_plan_free(plan);
 */
#ifndef AXLE_EMIT_X86_GEMM_H
#define AXLE_EMIT_X86_GEMM_H

#include <stdint.h>
#include <stdio.h>

#include "emit_x86/cpu_features.h"
#include "emit_x86/x86_encode.h"
#include "ir.h"
#include "runtime/thread_pool.h"

/* ---------------------------------------------------------- gemm_kernel.c
 * The micro-kernel's shape for one ISA level. A tile of C is MR rows by
 * NR = vectors * lanes columns; each of its MR * vectors accumulators is a
 * vector register. Per step of K the kernel loads one row of the B panel
 * (vectors loads), broadcasts each of the MR values of the A panel and
 * multiply-adds. */
typedef struct GemmKernelShape {
  CpuLevel level;
  int mr;        /* rows of the C tile: A values broadcast per K step */
  int vectors;   /* vector registers across one row of the tile */
  int lanes;     /* f32 lanes per vector register */
  int nr;        /* columns of the C tile: vectors * lanes */
  int unroll;    /* K steps per iteration of the main loop (a power of two) */
} GemmKernelShape;

/* The generated code's signature (System V):
 *   a_panel  kc steps of MR floats (A's column k of the tile's rows)
 *   b_panel  kc steps of NR floats (B's row k of the tile's columns), the
 *            steps b_step_bytes apart (NR * 4 in a packed panel)
 *   c        the tile's top-left element; rows are c_row_bytes apart
 *   accumulate  0: C = A·B;  otherwise C = C + A·B (the A·B of this K block
 *               is summed first, from zero, then added to C)
 *   column_mask bit j set: column j of the tile is C's (read only by the
 *               column-masked kernels, which touch no other column)
 *   a_row_bytes read only by the A-in-place kernels: a_panel is then
 *               A[row0][k0] of a row-major A, its rows this many bytes
 *               apart, instead of a packed panel
 * Every float of a B panel's row is read, so B's edge panels are
 * zero-padded; of A's panel, only the first `rows` values of a step (the
 * variant's rows), so A's panels need no padding. */
typedef void GemmKernelFn(int64_t kc, const float *a_panel, const float *b_panel, float *c,
                          int64_t c_row_bytes, int64_t accumulate, int64_t b_step_bytes, int64_t column_mask,
                          int64_t a_row_bytes);

/* The shape used at level (sse4, avx2 or avx512); NULL below SSE4.1. */
const GemmKernelShape *gemm_kernel_shape_for_level(CpuLevel level);
/* Which of a shape's kernels: it computes only the first `rows` (1..MR)
 * rows of the tile (the panels keep their MR x KC layout, so a tile at the
 * bottom edge of C runs the kernel of its own height and wastes no FMAs on
 * padding rows); column_masked (avx512 only): C is read and written only in
 * the columns of column_mask, for a tile at C's right edge; a_in_place: A's
 * rows are read where they lie (a_row_bytes apart), not from a packed
 * panel; narrow (column-masked only): one vector across the tile, for at
 * most `lanes` columns. */
typedef struct GemmKernelVariant {
  int rows;
  bool column_masked;
  bool a_in_place;
  bool narrow;
} GemmKernelVariant;

/* Appends the micro-kernel for shape and variant to cb, as one function at
 * the buffer's current offset. False if the encoder rejected an
 * instruction. */
bool gemm_kernel_emit(X86Buffer *cb, const GemmKernelShape *shape, GemmKernelVariant variant);

/* The machine's f32 multiply-add peak for one thread at level, in GFLOP/s:
 * a generated loop of independent FMAs (mulps + addps on sse4), timed for
 * about `seconds` of the thread's CPU time (so that time the thread spent
 * descheduled on a busy machine does not count). The median of `repeats`
 * timings is returned; 0 on error. */
double gemm_peak_gflops_measure(CpuLevel level, double seconds, int repeats, Status *st);

/* ------------------------------------------------------------------ gemm.c */
typedef struct GemmPlan GemmPlan;

/* Generates and maps (W^X) the micro-kernel for cpu->level. Fails below
 * SSE4.1 or when the code cannot be mapped. */
GemmPlan *gemm_plan_create(const CpuFeatures *cpu, Status *st);
void gemm_plan_free(GemmPlan *plan);
const GemmKernelShape *gemm_plan_kernel_shape(const GemmPlan *plan);
/* Where the micro-kernel's code lies (for a test of the page permissions). */
const void *gemm_plan_kernel_address(const GemmPlan *plan);
/* The full-tile micro-kernel's x86 listing in objdump's format, for docs and
 * dumps. */
bool gemm_plan_print_listing(const GemmPlan *plan, FILE *out, Status *st);

/* A hook run on each finished tile of C, after its whole K loop and before
 * the tile is left for good: tile points at C[row0, col0] of the product
 * numbered batch, rows x cols elements, row_stride elements apart. Each
 * element of C is passed exactly once. Tiles may be handed to several threads
 * at once, so the hook must only touch the tile it is given. The fused
 * epilogue of a dot (bias, activation) will be applied here. */
typedef void GemmEpilogueFn(void *context, float *tile, int64_t row_stride, int64_t rows,
                            int64_t cols, int64_t row0, int64_t col0, int64_t batch);
/* A hook run once per block of C that one task finished: rows [row0,
 * row0 + rows) by columns [col0, col0 + cols) of product `batch` hold their
 * final values (a whole macro tile, or a whole product on the direct path),
 * still warm in the cache. Called from the task's thread, like apply. */
typedef void GemmBlockFn(void *context, int64_t batch, int64_t row0, int64_t rows, int64_t col0, int64_t cols);
typedef struct GemmEpilogue {
  GemmEpilogueFn *apply;
  GemmBlockFn *finish_block;   /* may be NULL */
  void *context;
} GemmEpilogue;

/* A packer that computes A's elements rather than reading them at strides
 * (a convolution's input patches: the implicit GEMM). It fills one panel:
 * dst[k * width + l] = A[batch][row0 + l][k0 + k] for l < rows and
 * k < depth, and 0 for the rows from `rows` up to width. */
typedef void GemmPackFn(void *context, int64_t batch, int64_t row0, int rows, int width, int64_t k0,
                        int64_t depth, float *dst);

/* A batch of products C[b] = A[b] · B[b], b in [0, batch). Strides count
 * elements; A[b][i,k] is a[b*a_batch_stride + i*a_row_stride + k*a_col_stride]
 * (so a transposed A just swaps its two strides), likewise B[b][k,j], and
 * C[b][i,j] is c[b*c_batch_stride + i*c_row_stride + j]. Strides may be zero
 * (a broadcast operand) but C's tiles must not overlap. */
typedef struct GemmProblem {
  int64_t batch, m, n, k;
  const float *a;
  int64_t a_row_stride, a_col_stride, a_batch_stride;
  const float *b;
  int64_t b_row_stride, b_col_stride, b_batch_stride;
  float *c;
  int64_t c_row_stride, c_batch_stride;
  /* Non-NULL: A's panels come from a_pack (a and its strides are unused),
   * and the direct path, which reads A where it lies, is never taken. */
  GemmPackFn *a_pack;
  void *a_pack_context;
  /* Non-NULL: B's panels come from b_pack, which fills dst[k * width + l]
   * = B[batch][k0 + k][col0 + l] for l < cols (and 0 up to width); b and
   * its strides are unused (a convolution's input patches, when the
   * product's columns are output positions). */
  GemmPackFn *b_pack;
  void *b_pack_context;
} GemmProblem;

/* Runs the problem on pool (NULL: the calling thread), then the epilogue (if
 * any, and if it has apply) on every tile. K = 0 gives C = 0. */
void gemm_f32_batched(const GemmPlan *plan, ThreadPool *pool, const GemmProblem *problem,
                      const GemmEpilogue *epilogue);
/* The most tasks gemm_f32_batched hands a pool of more than one thread at
 * once for problem (1: it runs on the calling thread): known before any
 * run, to decide whether a pool is worth starting. */
int64_t gemm_task_count(const GemmPlan *plan, const GemmProblem *problem);
/* What gemm_f32_batched will do for problem on `threads` threads (its
 * schedule), in words, for the dumps: the path, tile, blocks, tasks and
 * packing. */
void gemm_schedule_describe(const GemmPlan *plan, const GemmProblem *problem, int threads, StrBuf *sb);
/* One product: C[M,N] = A[M,K] · B[K,N] with C's rows ldc elements apart. */
void gemm_f32(const GemmPlan *plan, ThreadPool *pool, int64_t m, int64_t n, int64_t k,
              const float *a, int64_t a_row_stride, int64_t a_col_stride, const float *b,
              int64_t b_row_stride, int64_t b_col_stride, float *c, int64_t ldc,
              const GemmEpilogue *epilogue);

#endif
