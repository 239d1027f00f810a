/* The sort and topk plan of sort_plan.h and the merge sort every
 * implementation runs. */
#include <string.h>

#include "sort_plan.h"

static void plan_rows(const Shape *s, int dim, SortPlan *p) {
  p->dimension = dim;
  p->length = s->dims[dim];
  p->rows = 1;
  p->inner = 1;
  for (int d = 0; d < s->rank; d++)
    if (d > dim) p->inner *= s->dims[d];
    else if (d < dim) p->rows *= s->dims[d];
  p->rows *= p->inner;   /* a row for every index of the other dims */
}

const char *sort_plan_make(const Instruction *inst, SortPlan *p) {
  *p = (SortPlan){.is_topk = inst->opcode == OP_TOPK, .operand_count = inst->operand_count};
  if (inst->operand_count < 1) return "a sort without operands";
  const Shape *s = &inst->operands[0]->shape;
  if (p->is_topk) {
    const ScalarAttrs *sa = attrs_scalars(&inst->attrs);
    if (shape_is_tuple(s) || s->rank < 1 || sa->k < 0 || sa->k > s->dims[s->rank - 1])
      return "a topk whose k does not fit the last dimension";
    plan_rows(s, s->rank - 1, p);
    p->k = sa->k;
    p->largest = sa->largest;
    return NULL;
  }
  if (inst->called_count < 1) return "a sort without a comparator";
  for (int i = 0; i < inst->operand_count; i++)
    if (shape_is_tuple(&inst->operands[i]->shape) || !shape_same_dims(&inst->operands[i]->shape, s))
      return "a sort operand that is not an array of operand 0's dims";
  const IntList *dims = &inst->attrs.dimensions;
  if (dims->count != 1 || dims->values[0] < 0 || dims->values[0] >= s->rank)
    return "a sort without one dimension within the rank";
  plan_rows(s, (int)dims->values[0], p);
  p->k = p->length;
  return NULL;
}

int64_t sort_row_base(const SortPlan *p, int64_t row) {
  return (row / p->inner) * p->length * p->inner + row % p->inner;
}

/* Merges the sorted runs from[lo, mid) and from[mid, hi) into to[lo, hi);
 * ties keep the left run first, which makes the sort stable. */
static bool merge_runs(SortLess *less, void *context, const int64_t *from, int64_t *to, int64_t lo, int64_t mid,
                       int64_t hi) {
  int64_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    int right_first = less(context, from[j], from[i]);
    if (right_first < 0) return false;
    to[k++] = right_first ? from[j++] : from[i++];
  }
  while (i < mid) to[k++] = from[i++];
  while (j < hi) to[k++] = from[j++];
  return true;
}

const int64_t *sort_merge_positions(SortLess *less, void *context, int64_t length, int64_t *a, int64_t *b) {
  for (int64_t k = 0; k < length; k++) a[k] = k;
  for (int64_t width = 1; width < length; width *= 2) {
    for (int64_t lo = 0; lo < length; lo += 2 * width) {
      int64_t mid = lo + width < length ? lo + width : length;
      int64_t hi = lo + 2 * width < length ? lo + 2 * width : length;
      if (!merge_runs(less, context, a, b, lo, mid, hi)) return NULL;
    }
    int64_t *t = a;
    a = b;
    b = t;
  }
  return a;
}

int64_t sort_order_key(const Literal *x, int64_t i) {
  ElementType t = x->shape.type;
  if (type_is_float(t)) {
    double v = literal_get_f64(x, i);
    int64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits < 0 ? bits ^ INT64_MAX : bits;
  }
  if (type_kind(t) == TYPE_KIND_UINT) return (int64_t)(literal_get_u64(x, i) ^ (UINT64_C(1) << 63));
  return literal_get_s64(x, i);
}

typedef struct TopkRow {
  const int64_t *keys;
  bool largest;
} TopkRow;

static int topk_less(void *context, int64_t a, int64_t b) {
  const TopkRow *r = context;
  return r->largest ? r->keys[a] > r->keys[b] : r->keys[a] < r->keys[b];
}

const int64_t *sort_topk_order(const SortPlan *p, const int64_t *keys, int64_t *a, int64_t *b) {
  TopkRow row = {keys, p->largest};
  return sort_merge_positions(topk_less, &row, p->length, a, b);
}
