/* The scatter plan of scatter_plan.h and the index arithmetic every
 * implementation's walk runs. */
#include "scatter_plan.h"

/* Marks list's entries (each below bound) in marks; false if one is not. */
static bool mark_dims(const IntList *list, int bound, bool *marks) {
  for (int k = 0; k < list->count; k++) {
    if (list->values[k] < 0 || list->values[k] >= bound) return false;
    marks[list->values[k]] = true;
  }
  return true;
}

const char *scatter_plan_make(const Instruction *inst, ScatterPlan *p) {
  const ScatterDims *s = attrs_scatter(&inst->attrs);
  int n = (inst->operand_count - 1) / 2;
  *p = (ScatterPlan){.n = n};
  if (n < 1 || n > AXLE_MAX_RANK || inst->operand_count != 2 * n + 1 || inst->called_count < 1)
    return "a scatter without N inputs, indices, N updates and an update computation";
  for (int i = 0; i < inst->operand_count; i++)
    if (shape_is_tuple(&inst->operands[i]->shape)) return "a scatter with a tuple-shaped operand";
  const Shape *in = &inst->operands[0]->shape, *indices = &inst->operands[n]->shape;
  const Shape *updates = &inst->operands[n + 1]->shape;
  p->operand_rank = in->rank;
  p->update_rank = updates->rank;
  p->indices_rank = indices->rank;
  p->index_vector_dim = (int)s->index_vector_dim;
  bool is_window_axis[AXLE_MAX_RANK] = {false}, not_window[AXLE_MAX_RANK] = {false};
  if (s->index_vector_dim < 0 || s->index_vector_dim > indices->rank ||
      !mark_dims(&s->update_window_dims, updates->rank, is_window_axis) ||
      !mark_dims(&s->inserted_window_dims, in->rank, not_window) ||
      !mark_dims(&s->input_batching_dims, in->rank, not_window) ||
      s->scatter_dims_to_operand_dims.count > AXLE_MAX_RANK ||
      s->input_batching_dims.count != s->scatter_indices_batching_dims.count)
    return "a scatter whose dimension numbers do not fit its shapes";
  p->window_count = s->update_window_dims.count;
  p->window_total = p->scatter_total = 1;
  for (int j = 0; j < p->window_count; j++) {
    p->window_axes[j] = (int)s->update_window_dims.values[j];
    p->window_sizes[j] = updates->dims[p->window_axes[j]];
    p->window_total *= p->window_sizes[j];
  }
  for (int d = 0, b = 0; d < updates->rank; d++) {
    if (is_window_axis[d]) continue;
    if (b == s->index_vector_dim) b++;
    int j = p->scatter_count++;
    p->scatter_axes[j] = d;
    p->scatter_indices_dim[j] = b++;
    p->scatter_sizes[j] = updates->dims[d];
    p->scatter_total *= updates->dims[d];
  }
  int64_t vector_length = s->index_vector_dim < indices->rank ? indices->dims[s->index_vector_dim] : 1;
  if (p->scatter_count != indices->rank - (s->index_vector_dim < indices->rank ? 1 : 0) ||
      vector_length != s->scatter_dims_to_operand_dims.count)
    return "a scatter whose updates and indices do not fit together";
  for (int j = 0; j < p->scatter_count; j++)
    if (p->scatter_sizes[j] != indices->dims[p->scatter_indices_dim[j]])
      return "a scatter whose updates and indices do not fit together";
  p->vector_length = s->scatter_dims_to_operand_dims.count;
  for (int v = 0; v < p->vector_length; v++) {
    p->vector_operand_dim[v] = (int)s->scatter_dims_to_operand_dims.values[v];
    if (p->vector_operand_dim[v] < 0 || p->vector_operand_dim[v] >= in->rank)
      return "a scatter whose dimension numbers do not fit its shapes";
  }
  p->batching_count = s->input_batching_dims.count;
  for (int k = 0; k < p->batching_count; k++) {
    p->batching_operand_dim[k] = (int)s->input_batching_dims.values[k];
    /* The scatter component of indices dim sibd[k]: its place among the
     * indices dims but index_vector_dim. */
    int64_t dim = s->scatter_indices_batching_dims.values[k];
    p->batching_scatter_axis[k] = (int)(dim > s->index_vector_dim ? dim - 1 : dim);
    if (dim < 0 || dim >= indices->rank || dim == s->index_vector_dim || p->batching_scatter_axis[k] >= p->scatter_count)
      return "a scatter whose dimension numbers do not fit its shapes";
  }
  int j = 0;
  for (int d = 0; d < in->rank; d++) {
    p->operand_dims[d] = in->dims[d];
    p->window_of_operand[d] = not_window[d] || j >= p->window_count ? -1 : j++;
    p->window_extent_of_operand[d] = p->window_of_operand[d] < 0 ? 1 : p->window_sizes[p->window_of_operand[d]];
  }
  if (j != p->window_count) return "a scatter whose update_window_dims do not cover the input's window dims";
  return NULL;
}

bool scatter_window_start(const ScatterPlan *p, ScatterIndexRead *read, const void *context,
                          const int64_t *scatter_index, int64_t *start) {
  int64_t indices_index[AXLE_MAX_RANK];
  for (int j = 0; j < p->scatter_count; j++) indices_index[p->scatter_indices_dim[j]] = scatter_index[j];
  for (int d = 0; d < p->operand_rank; d++) start[d] = 0;
  for (int k = 0; k < p->vector_length; k++) {
    if (p->index_vector_dim < p->indices_rank) indices_index[p->index_vector_dim] = k;
    start[p->vector_operand_dim[k]] = read(context, indices_index);
  }
  for (int k = 0; k < p->batching_count; k++) start[p->batching_operand_dim[k]] = scatter_index[p->batching_scatter_axis[k]];
  for (int d = 0; d < p->operand_rank; d++)
    if (start[d] < 0 || start[d] > p->operand_dims[d] - p->window_extent_of_operand[d]) return false;
  return true;
}

void scatter_window_element(const ScatterPlan *p, const int64_t *scatter_index, const int64_t *window_index,
                            const int64_t *start, int64_t *update_index, int64_t *operand_index) {
  for (int j = 0; j < p->scatter_count; j++) update_index[p->scatter_axes[j]] = scatter_index[j];
  for (int j = 0; j < p->window_count; j++) update_index[p->window_axes[j]] = window_index[j];
  for (int d = 0; d < p->operand_rank; d++) {
    int w = p->window_of_operand[d];
    operand_index[d] = start[d] + (w < 0 ? 0 : window_index[w]);
  }
}
