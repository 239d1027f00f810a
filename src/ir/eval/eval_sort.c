/* sort in the reference evaluator.
 *
 * sort(operands..., dimensions={d}, is_stable=..., to_apply=comparator)
 * sorts every 1-D slice along dimension d. All operands share dims and move
 * together: the comparator sees element pairs of every operand,
 * (lhs_0, rhs_0, lhs_1, rhs_1, ...), and returns pred "lhs comes before rhs".
 *
 * We always use a stable merge sort: it is a valid answer for an unstable
 * sort too, so one algorithm serves both and the oracle is deterministic.
 * The merge takes the right element only when comparator(right, left) is
 * true, and every step advances, so a comparator that is not a strict weak
 * order gives some permutation, never a crash or an endless loop. */
#include <stdlib.h>

#include "eval_internal.h"

/* One slice being sorted: the operands, where the slice starts and its step. */
typedef struct SortSlice {
  Literal *const *operands;
  int n;
  int64_t base, stride;
  ScalarCall *compare;
} SortSlice;

/* Whether slice element a comes before element b: 1 yes, 0 no, -1 error. */
static int sort_less(const SortSlice *s, int64_t a, int64_t b, Status *st) {
  for (int i = 0; i < s->n; i++) {
    literal_copy_element(s->compare->args[2 * i], 0, s->operands[i], s->base + a * s->stride);
    literal_copy_element(s->compare->args[2 * i + 1], 0, s->operands[i], s->base + b * s->stride);
  }
  Literal *result = eval_scalar_call_run(s->compare, st);
  if (!result) return -1;
  int less = literal_get_s64(result, 0) != 0;
  literal_free(result);
  return less;
}

/* Merges the sorted runs from[lo, mid) and from[mid, hi) into to[lo, hi).
 * Ties keep the left run first, which is what makes the sort stable. */
static bool merge_runs(const SortSlice *s, const int64_t *from, int64_t *to, int64_t lo,
                       int64_t mid, int64_t hi, Status *st) {
  int64_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    int right_first = sort_less(s, from[j], from[i], st);
    if (right_first < 0) return false;
    to[k++] = right_first ? from[j++] : from[i++];
  }
  while (i < mid) to[k++] = from[i++];
  while (j < hi) to[k++] = from[j++];
  return true;
}

/* Bottom-up merge sort of the positions 0..length-1; the sorted order ends
 * in *order (one of the two buffers). */
static bool merge_sort(const SortSlice *s, int64_t length, int64_t *a, int64_t *b,
                       int64_t **order, Status *st) {
  for (int64_t k = 0; k < length; k++) a[k] = k;
  for (int64_t width = 1; width < length; width *= 2) {
    for (int64_t lo = 0; lo < length; lo += 2 * width) {
      int64_t mid = lo + width < length ? lo + width : length;
      int64_t hi = lo + 2 * width < length ? lo + 2 * width : length;
      if (!merge_runs(s, a, b, lo, mid, hi, st)) return false;
    }
    int64_t *t = a;
    a = b;
    b = t;
  }
  *order = a;
  return true;
}

static bool sort_check_operands(const Instruction *inst, Literal *const *operands, Status *st) {
  if (inst->operand_count < 1 || inst->called_count < 1)
    return status_error(st, STATUS_VERIFY_ERROR, "sort %s needs operands and a comparator",
                        inst->name);
  for (int i = 0; i < inst->operand_count; i++)
    if (operands[i]->shape.type == TYPE_TUPLE ||
        !shape_same_dims(&operands[i]->shape, &operands[0]->shape))
      return status_error(st, STATUS_VERIFY_ERROR,
                          "sort %s: operand %d is not an array of operand 0's dims", inst->name, i);
  const IntList *dims = &inst->attrs.dimensions;
  if (dims->count != 1 || dims->values[0] < 0 || dims->values[0] >= operands[0]->shape.rank)
    return status_error(st, STATUS_VERIFY_ERROR, "sort %s needs one dimension within the rank",
                        inst->name);
  return true;
}

/* Sorts every slice along dim, writing the permuted elements to results. */
static bool sort_slices(const Instruction *inst, Literal *const *operands, Literal **results,
                        ScalarCall *compare, Status *st) {
  int n = inst->operand_count, dim = (int)inst->attrs.dimensions.values[0];
  const Shape *shape = &operands[0]->shape;
  int64_t strides[AXLE_MAX_RANK], outer_dims[AXLE_MAX_RANK], outer_index[AXLE_MAX_RANK] = {0};
  shape_strides(shape, strides);
  memcpy(outer_dims, shape->dims, sizeof outer_dims);
  int64_t length = shape->dims[dim];
  outer_dims[dim] = 1;
  int64_t slices = 1;
  for (int d = 0; d < shape->rank; d++) slices *= outer_dims[d];
  if (length == 0) slices = 0;
  int64_t *a = mem_calloc((size_t)length + 1, sizeof *a), *b = mem_calloc((size_t)length + 1, sizeof *b);
  bool ok = a && b;
  if (!ok) status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  for (int64_t k = 0; ok && k < slices; k++, index_next(outer_index, outer_dims, shape->rank)) {
    SortSlice s = {operands, n, index_linear(outer_index, strides, shape->rank), strides[dim],
                   compare};
    int64_t *order = NULL;
    ok = merge_sort(&s, length, a, b, &order, st);
    for (int64_t j = 0; ok && j < length; j++)
      for (int i = 0; i < n; i++)
        literal_copy_element(results[i], s.base + j * s.stride, operands[i],
                             s.base + order[j] * s.stride);
  }
  mem_free(a);
  mem_free(b);
  return ok;
}

Literal *eval_sort(const Instruction *inst, Literal *const *operands, Status *st) {
  if (!sort_check_operands(inst, operands, st)) return NULL;
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
       sort_slices(inst, operands, results, &compare, st);
  eval_scalar_call_free(&compare);
  mem_free(types);
  return eval_finish_results(results, n, ok);
}

/* ---- topk ---- */

/* An order key per element: floats by the total order (-NaN < -inf < ...
 * < -0 < +0 < ... < inf < NaN, as a sort with a TOTALORDER comparison
 * would give), signed and unsigned integers by value. Unsigned values are
 * flipped at the top bit so that one signed comparison serves all. */
static int64_t topk_key(const Literal *x, int64_t i) {
  ElementType t = x->shape.type;
  if (type_is_float(t)) {
    double v = literal_get_f64(x, i);
    int64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits < 0 ? bits ^ INT64_MAX : bits;
  }
  if (type_kind(t) == TYPE_KIND_UINT) return (int64_t)(literal_get_u64(x, i) ^ (1ull << 63));
  return literal_get_s64(x, i);
}

/* topk(x), k=K, largest=L: along the last dimension, the K largest (or
 * smallest) entries in order and their indices. Ties go to the lower
 * index first, as XLA's lowering (a stable sort of (x, iota) with a
 * greater-than comparator, then a slice) orders them. */
Literal *eval_topk(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *x = operands[0];
  const ScalarAttrs *sa = attrs_scalars(&inst->attrs);
  int rank = x->shape.rank;
  if (x->shape.type == TYPE_TUPLE || rank < 1 || sa->k < 0 || sa->k > x->shape.dims[rank - 1]) {
    status_error(st, STATUS_VERIFY_ERROR, "topk %s: k must fit the last dimension", inst->name);
    return NULL;
  }
  int64_t n = x->shape.dims[rank - 1], k = sa->k, rows = n ? shape_element_count(&x->shape) / n : 0;
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
  bool *taken = eval_scratch_calloc(n, sizeof *taken);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t j = 0; j < n; j++) {
      keys[j] = topk_key(x, r * n + j);
      taken[j] = false;
    }
    /* Pick the best untaken entry K times; scanning upward and replacing
     * only on a strictly better key keeps the lower index among ties. */
    for (int64_t out = 0; out < k; out++) {
      int64_t best = -1;
      for (int64_t j = 0; j < n; j++)
        if (!taken[j] && (best < 0 || (sa->largest ? keys[j] > keys[best] : keys[j] < keys[best])))
          best = j;
      taken[best] = true;
      literal_copy_element(results[0], r * k + out, x, r * n + best);
      literal_set_s64(results[1], r * k + out, best);
    }
  }
  mem_free(keys);
  mem_free(taken);
  return eval_finish_results(results, 2, true);
}
