/* The one description of a product's dimensions (dot_plan.h): which dims
 * of each operand and of the result form the batch, M, N and K groups,
 * the group extents, and the canonical order of each operand. */
#include <string.h>

#include "ir/dot_plan.h"

/* Marks the dims list names in `used`; NULL, or what is wrong. */
static const char *mark_dims(const IntList *list, int rank, bool *used) {
  for (int i = 0; i < list->count; i++) {
    int64_t d = list->values[i];
    if (d < 0 || d >= rank) return "a dot dimension is out of range";
    if (used[d]) return "a dot dimension is named twice";
    used[d] = true;
  }
  return NULL;
}

static int list_position(const int64_t *values, int n, int64_t v) {
  for (int i = 0; i < n; i++)
    if (values[i] == v) return i;
  return -1;
}

/* The dims of an operand of rank `rank` that `used` leaves, in order. */
static int unused_dims(int rank, const bool *used, int64_t *out) {
  int n = 0;
  for (int d = 0; d < rank; d++)
    if (!used[d]) out[n++] = d;
  return n;
}

/* order = the groups a, b, c one after another; whether that is 0, 1, ... */
static bool order_concat(int64_t *order, const int64_t *a, int na, const int64_t *b, int nb, const int64_t *c,
                         int nc) {
  memcpy(order, a, sizeof *a * (size_t)na);
  memcpy(order + na, b, sizeof *b * (size_t)nb);
  memcpy(order + na + nb, c, sizeof *c * (size_t)nc);
  bool identity = true;
  for (int i = 0; i < na + nb + nc; i++) identity &= order[i] == i;
  return identity;
}

static int64_t extent_of(const Shape *s, const int64_t *dims, int n) {
  int64_t e = 1;
  for (int i = 0; i < n; i++) e *= s->dims[dims[i]];
  return e;
}

/* Which ragged-dot this is: the ragged dim (lhs_ragged) is a free dim when
 * rhs names a group dim, a contracting dim, or a batch dim (a plain dot). */
static const char *plan_ragged(const DotDims *dd, DotPlan *p) {
  p->ragged = DOT_RAGGED_NONE;
  p->rhs_group_dim = -1;
  if (dd->rhs_group.count > 1) return "a ragged-dot with more than one group dimension";
  if (dd->lhs_ragged.count != 1) return dd->rhs_group.count ? "a ragged-dot without one ragged dimension" : NULL;
  int64_t ragged = dd->lhs_ragged.values[0];
  if (dd->rhs_group.count == 1) {
    p->ragged_index = list_position(p->lhs_m, p->m_count, ragged);
    if (p->ragged_index < 0) return "a ragged-dot whose ragged dimension is not a free dimension";
    p->ragged = DOT_RAGGED_ROWS;
    p->rhs_group_dim = dd->rhs_group.values[0];
  } else if ((p->ragged_index = list_position(p->lhs_k, p->k_count, ragged)) >= 0) {
    p->ragged = DOT_RAGGED_SUMS;
    p->out_first = 1;
  }
  return NULL;
}

const char *dot_plan_make(const DotDims *dd, const Shape *lhs, const Shape *rhs, DotPlan *p) {
  memset(p, 0, sizeof *p);
  if (dd->lhs_batch.count != dd->rhs_batch.count || dd->lhs_contracting.count != dd->rhs_contracting.count)
    return "lhs and rhs name different numbers of batch or contracting dimensions";
  bool lused[AXLE_MAX_RANK] = {false}, rused[AXLE_MAX_RANK] = {false};
  const char *why = mark_dims(&dd->lhs_batch, lhs->rank, lused);
  if (!why) why = mark_dims(&dd->lhs_contracting, lhs->rank, lused);
  if (!why) why = mark_dims(&dd->rhs_batch, rhs->rank, rused);
  if (!why) why = mark_dims(&dd->rhs_contracting, rhs->rank, rused);
  if (!why) why = mark_dims(&dd->rhs_group, rhs->rank, rused);
  if (why) return why;
  p->batch_count = dd->lhs_batch.count;
  p->k_count = dd->lhs_contracting.count;
  for (int i = 0; i < p->batch_count; i++) {
    p->lhs_batch[i] = dd->lhs_batch.values[i];
    p->rhs_batch[i] = dd->rhs_batch.values[i];
    if (lhs->dims[p->lhs_batch[i]] != rhs->dims[p->rhs_batch[i]]) return "a batch dimension differs in size";
  }
  for (int i = 0; i < p->k_count; i++) {
    p->lhs_k[i] = dd->lhs_contracting.values[i];
    p->rhs_k[i] = dd->rhs_contracting.values[i];
    if (lhs->dims[p->lhs_k[i]] != rhs->dims[p->rhs_k[i]]) return "a contracting dimension differs in size";
  }
  p->m_count = unused_dims(lhs->rank, lused, p->lhs_m);
  p->n_count = unused_dims(rhs->rank, rused, p->rhs_n);
  if ((why = plan_ragged(dd, p))) return why;
  p->out_rank = p->out_first + p->batch_count + p->m_count + p->n_count;
  if (p->out_rank > AXLE_MAX_RANK) return "a dot whose result would have a rank above the limit";
  for (int i = 0; i < p->batch_count; i++) p->out_batch[i] = p->out_first + i;
  for (int i = 0; i < p->m_count; i++) p->out_m[i] = p->out_first + p->batch_count + i;
  for (int i = 0; i < p->n_count; i++) p->out_n[i] = p->out_first + p->batch_count + p->m_count + i;
  p->batch = extent_of(lhs, p->lhs_batch, p->batch_count);
  p->m = extent_of(lhs, p->lhs_m, p->m_count);
  p->n = extent_of(rhs, p->rhs_n, p->n_count);
  p->k = extent_of(lhs, p->lhs_k, p->k_count);
  p->lhs_canonical =
      order_concat(p->lhs_order, p->lhs_batch, p->batch_count, p->lhs_m, p->m_count, p->lhs_k, p->k_count);
  p->rhs_canonical =
      p->ragged != DOT_RAGGED_ROWS &&
      order_concat(p->rhs_order, p->rhs_batch, p->batch_count, p->rhs_k, p->k_count, p->rhs_n, p->n_count);
  return NULL;
}

bool dot_dims_merge(const Shape *s, const int64_t *dims, int n, int64_t *extent, int64_t *stride) {
  int64_t strides[AXLE_MAX_RANK];
  shape_layout_strides(s, strides);
  *extent = 1;
  *stride = 0;
  int64_t last = -1;
  for (int i = n - 1; i >= 0; i--) {  /* innermost first */
    int64_t d = dims[i], e = s->dims[d];
    if (e == 1) continue;
    if (last < 0) *stride = strides[d];
    else if (strides[d] != strides[last] * s->dims[last]) return false;
    *extent *= e;
    last = d;
  }
  return true;
}

int64_t dot_plan_products(const DotPlan *p) { return p->batch * p->m * p->n * p->k; }
