/* The description of a sort or a topk, built once from the instruction
 * (sort_plan_make) and executed by every implementation: the evaluator
 * (src/ir/eval/eval_sort.c), the CPU backend's routines
 * (src/emit_x86/cpu_sort.c) and the GPU backend's kernels
 * (src/emit_ptx/gpu_sort.c, ptx_sort.c).
 *
 * Every implementation sorts a permutation of a row's positions with one
 * algorithm, a stable bottom-up merge sort that takes the right element
 * only when "right comes before left" holds: a valid answer for
 * is_stable=false too, so one order serves both and every implementation
 * gives the same one; a comparator that is no strict weak order still
 * gives a permutation, never a crash or an endless loop. The operands are
 * then gathered through the permutation.
 *
 * topk(x), k, largest is the same sort of x's last dimension with "comes
 * before" = greater (largest) or less, floats in total order
 * (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN), keeping the first k
 * positions: ties go to the lower index, as XLA's lowering (a stable sort
 * of (x, iota) with a greater-than comparator, then a slice) orders them. */
#ifndef AXLE_IR_SORT_PLAN_H
#define AXLE_IR_SORT_PLAN_H

#include "ir.h"

typedef struct SortPlan {
  bool is_topk;
  int operand_count;
  int dimension;                 /* the sorted one; topk: the last */
  /* `rows` rows of `length` elements: element j of row r sits at
   * sort_row_base(r) + j * inner of a row-major array, inner being the
   * product of the dims after the sorted one. */
  int64_t rows, length, inner;
  int64_t k;                     /* positions kept per row: length for a sort */
  bool largest;                  /* topk: greater comes first */
} SortPlan;

/* The plan of a sort (every operand an array of operand 0's dims, one
 * dimension within the rank, a comparator) or a topk (k within the last
 * dimension); NULL, or what does not fit. */
const char *sort_plan_make(const Instruction *inst, SortPlan *p);
int64_t sort_row_base(const SortPlan *p, int64_t row);

/* "Position a comes before position b": 1 yes, 0 no, -1 stop (an error
 * the caller keeps). */
typedef int SortLess(void *context, int64_t a, int64_t b);
/* Sorts the positions 0..length-1 with scratch a and b (length each);
 * returns the one that holds the order, or NULL when less stopped. */
const int64_t *sort_merge_positions(SortLess *less, void *context, int64_t length, int64_t *a, int64_t *b);

/* topk's order key of element i of x: comparing keys as signed integers
 * orders floats totally and integers by value (unsigned ones flipped at
 * the top bit). */
int64_t sort_order_key(const Literal *x, int64_t i);
/* topk's order of one row, whose elements' order keys are keys[0..length):
 * the sorted positions (in a or b, scratch of length each). */
const int64_t *sort_topk_order(const SortPlan *p, const int64_t *keys, int64_t *a, int64_t *b);
#endif
