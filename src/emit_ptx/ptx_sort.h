/* The PTX of the GPU backend's sort family (gpu_sort.c drives it).
 *
 *   ptx_scalar_call.c  a scalar computation (a sort's comparator) written
 *                      inline as PTX, operation for operation, and the
 *                      total-order comparison of floats
 *   ptx_sort.c         the kernels of a stable merge sort of index
 *                      permutations: tiles in shared memory, one global
 *                      merge pass, and the final gather of every operand
 *                      through the permutation
 *
 * A sort is done on positions, not values: each row of the "order" array
 * holds the positions 0..n-1 of that row's elements, and the comparator
 * reads the operands at the positions it compares. So any number of
 * operands of any element width costs one permutation, and the operands
 * are moved once, at the end. */
#ifndef AXLE_EMIT_PTX_PTX_SORT_H
#define AXLE_EMIT_PTX_PTX_SORT_H

#include "emit_ptx/ptx_builder.h"

/* ---- ptx_scalar_call.c ---- */

/* Whether element type t lives in one PTX register the scalar emitter
 * computes on (pred, s32, u32, s64, u64, f32, f64; c64 as a .b64 pair). */
bool ptx_scalar_type_ok(ElementType t);

/* The computation comp written inline: params[i] holds parameter i (a
 * register whose class fits its type; index < 0 for a parameter the caller
 * could not load, which must then be unused). *result is the root's value.
 * Supported: parameter, constant, compare (every direction and type, floats
 * in total order when asked), select, bitcast-convert, and the elementwise
 * ops of ptx_ops.c's table on the types above. Others: STATUS_UNSUPPORTED. */
bool ptx_scalar_call_emit(PtxBuilder *b, const Computation *comp, const PtxReg *params, PtxReg *result, Status *st);

/* The same for a computation with `count` results (a variadic scatter's
 * combiner, whose root is a tuple of them): results[i] is result i. */
bool ptx_scalar_call_emit_results(PtxBuilder *b, const Computation *comp, const PtxReg *params, PtxReg *results,
                                  int count, Status *st);

/* ---- ptx_scalar_complex.c ----
 * Instruction inst of a scalar computation that computes on or yields c64
 * (a .b64 register: real part low, imaginary high): constant, real, imag,
 * complex, add, subtract, negate, compare EQ/NE, select, copy; else (and
 * c128) STATUS_UNSUPPORTED. */
bool ptx_scalar_complex_emit(PtxBuilder *b, const Instruction *inst, const PtxReg *args, PtxReg *out, Status *st);

/* compare(a, b) in direction dir for element type t, with floats in IEEE
 * total order (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN) when
 * total_order; gives a fresh pred register. */
PtxReg ptx_compare_emit(PtxBuilder *b, ElementType t, CompareDirection dir, bool total_order, PtxReg a, PtxReg x);

/* ---- ptx_sort.c ---- */

/* The rows of a sort: `rows` rows of `n` elements; element j of row r sits at
 * physical offset (r / inner) * n * inner + r % inner + j * inner of a
 * row-major array (inner: the product of the dims after the sorted one). */
typedef struct PtxSortRows {
  int64_t rows, n, inner;
} PtxSortRows;

/* How the merge kernel asks "does element lhs come before element rhs":
 * values holds (lhs_0, rhs_0, lhs_1, rhs_1, ...) for the operands the
 * comparator reads (unread ones have index < 0); the answer is a pred. */
typedef bool (*PtxSortLess)(const void *ctx, PtxBuilder *b, const PtxReg *values, PtxReg *less, Status *st);

typedef struct PtxSortOperand {
  ElementType type;
  bool read;   /* the comparator reads it (its values are loaded) */
} PtxSortOperand;

/* The grid-stride loop over [0, total): i is the u64 index; the body goes
 * between open and close (close also ends the kernel's code with ret). */
typedef struct PtxSortLoop {
  PtxReg i, stride;
  PtxLabel head, done;
} PtxSortLoop;
PtxSortLoop ptx_sort_loop_open(PtxBuilder *b, int64_t total);
void ptx_sort_loop_close(PtxBuilder *b, const PtxSortLoop *l);
/* *q = a / d and *r = a % d (u64) for a constant d > 0. */
void ptx_sort_divide(PtxBuilder *b, PtxReg a, int64_t d, PtxReg *q, PtxReg *r);
/* An element of type t (ptx_scalar_type_ok) at a global address, in the
 * register the scalar emitter computes on (a pred is a byte in memory). */
PtxReg ptx_sort_value_load(PtxBuilder *b, ElementType t, PtxReg address);
void ptx_sort_value_store(PtxBuilder *b, ElementType t, PtxReg address, PtxReg v);
/* One element of `bytes` (1, 2, 4, 8) copied from global address `from` to `to`. */
void ptx_sort_element_copy(PtxBuilder *b, int bytes, PtxReg to, PtxReg from);

/* .entry name(to, operands...): the first passes, in shared memory. A
 * block takes one tile of `tile` (a power of two up to 256, the block
 * size) consecutive positions of a row at a time, sorts it by the same
 * merge passes between two shared arrays, and writes it to `to`: after
 * it, every run of `tile` positions is sorted, so the global passes start
 * at width `tile` (none remain when a row fits in one tile). */
bool ptx_sort_emit_tiles(PtxBuilder *b, const char *name, const PtxSortRows *rows, int64_t tile,
                         const PtxSortOperand *operands, int operand_count, PtxSortLess less, const void *ctx,
                         Status *st);

/* .entry name(from, to, operands..., width): one bottom-up merge pass over
 * sorted runs of `width` positions. Each thread places one position: its
 * place in the merged run is its place in its own run plus the number of
 * the other run's elements that go before it, found by binary search (a
 * left element goes after right elements strictly before it, a right
 * element after left elements not after it: ties keep the left run first,
 * so the sort is stable, as the evaluator's merge is). */
bool ptx_sort_emit_merge(PtxBuilder *b, const char *name, const PtxSortRows *rows, const PtxSortOperand *operands,
                         int operand_count, PtxSortLess less, const void *ctx, Status *st);

/* .entry name(order, operands..., outputs..., [indices]): output i at row
 * position j (j < k) is operand i at position order[r * n + j]; with
 * `indices`, one more s32 output gets the position itself (top-k). */
void ptx_sort_emit_gather(PtxBuilder *b, const char *name, const PtxSortRows *rows, int64_t k,
                          const ElementType *types, int operand_count, bool indices);

#endif
