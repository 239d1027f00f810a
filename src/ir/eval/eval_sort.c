/* sort and topk in the reference evaluator.
 *
 * sort(operands..., dimensions={d}, is_stable=..., to_apply=comparator)
 * sorts every 1-D slice along dimension d. All operands share dims and move
 * together: the comparator sees element pairs of every operand,
 * (lhs_0, rhs_0, lhs_1, rhs_1, ...), and returns pred "lhs comes before rhs".
 *
 * The plan and the one algorithm (a stable merge sort of positions, for
 * is_stable=false too) are src/ir/sort_plan.c's, which the CPU and the GPU
 * execute as well; here the comparator is the evaluator's own call of the
 * computation, and an error in it stops the sort. */
#include <stdlib.h>

#include "eval_internal.h"
#include "ir/sort_plan.h"

/* One slice being sorted: the operands, where the slice starts and its step. */
typedef struct SortSlice {
  Literal *const *operands;
  int n;
  int64_t base, stride;
  ScalarCall *compare;
  Status *st;
} SortSlice;

/* sort_merge_positions' test: whether slice element a comes before element
 * b, by the comparator; 1 yes, 0 no, -1 error (in s->st). */
static int sort_less(void *context, int64_t a, int64_t b) {
  const SortSlice *s = context;
  for (int i = 0; i < s->n; i++) {
    literal_copy_element(s->compare->args[2 * i], 0, s->operands[i], s->base + a * s->stride);
    literal_copy_element(s->compare->args[2 * i + 1], 0, s->operands[i], s->base + b * s->stride);
  }
  Literal *result = eval_scalar_call_run(s->compare, s->st);
  if (!result) return -1;
  int less = literal_get_s64(result, 0) != 0;
  literal_free(result);
  return less;
}

/* Sorts every row of the plan, writing the permuted elements to results. */
static bool sort_rows(const SortPlan *plan, Literal *const *operands, Literal **results, ScalarCall *compare,
                      Status *st) {
  int n = plan->operand_count;
  int64_t length = plan->length;
  int64_t *a = mem_calloc((size_t)length + 1, sizeof *a), *b = mem_calloc((size_t)length + 1, sizeof *b);
  bool ok = true;
  for (int64_t r = 0; ok && length > 0 && r < plan->rows; r++) {
    SortSlice s = {operands, n, sort_row_base(plan, r), plan->inner, compare, st};
    const int64_t *order = sort_merge_positions(sort_less, &s, length, a, b);
    ok = order != NULL;
    for (int64_t j = 0; ok && j < length; j++)
      for (int i = 0; i < n; i++)
        literal_copy_element(results[i], s.base + j * s.stride, operands[i], s.base + order[j] * s.stride);
  }
  mem_free(a);
  mem_free(b);
  return ok;
}

Literal *eval_sort(const Instruction *inst, Literal *const *operands, Status *st) {
  SortPlan plan;
  const char *problem = sort_plan_make(inst, &plan);
  if (problem) {
    status_error(st, STATUS_VERIFY_ERROR, "sort %s: %s", inst->name, problem);
    return NULL;
  }
  int n = inst->operand_count;
  Literal **results = mem_calloc((size_t)n, sizeof *results);
  ElementType *types = mem_calloc((size_t)(2 * n), sizeof *types);
  ElementType pred = TYPE_PRED;
  ScalarCall compare = {0};
  bool ok = results && types;
  if (!ok) status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; ok && i < n; i++) {
    types[2 * i] = types[2 * i + 1] = operands[i]->shape.type;
    ok = (results[i] = eval_create_result(inst, i, n, &operands[i]->shape, st)) != NULL;
  }
  ok = ok && eval_scalar_call_init(&compare, inst, inst->called[0], types, 2 * n, &pred, 1, st) &&
       sort_rows(&plan, operands, results, &compare, st);
  eval_scalar_call_free(&compare);
  mem_free(types);
  return eval_finish_results(results, n, ok);
}

/* ---- topk ---- */

/* topk(x), k=K, largest=L: along the last dimension, the K largest (or
 * smallest) entries in order and their indices (src/ir/sort_plan.h). */
Literal *eval_topk(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *x = operands[0];
  SortPlan plan;
  const char *problem = sort_plan_make(inst, &plan);
  if (problem) {
    status_error(st, STATUS_VERIFY_ERROR, "topk %s: %s", inst->name, problem);
    return NULL;
  }
  int64_t n = plan.length, k = plan.k;
  int rank = x->shape.rank;
  Shape value_shape = x->shape, index_shape;
  value_shape.dims[rank - 1] = k;
  shape_set_default_layout(&value_shape);
  index_shape = value_shape;
  index_shape.type = TYPE_S32;
  Literal **results = mem_calloc(2, sizeof *results);
  results[0] = eval_create_result(inst, 0, 2, &value_shape, st);
  results[1] = results[0] ? eval_create_result(inst, 1, 2, &index_shape, st) : NULL;
  if (!results[1]) return eval_finish_results(results, 2, false);
  int64_t *keys = eval_scratch_calloc(n, sizeof *keys);
  int64_t *a = eval_scratch_calloc(n, sizeof *a), *b = eval_scratch_calloc(n, sizeof *b);
  for (int64_t r = 0; n > 0 && r < plan.rows; r++) {
    for (int64_t j = 0; j < n; j++) keys[j] = sort_order_key(x, r * n + j);
    const int64_t *order = sort_topk_order(&plan, keys, a, b);
    for (int64_t out = 0; out < k; out++) {
      literal_copy_element(results[0], r * k + out, x, r * n + order[out]);
      literal_set_s64(results[1], r * k + out, order[out]);
    }
  }
  mem_free(keys);
  mem_free(a);
  mem_free(b);
  return eval_finish_results(results, 2, true);
}
