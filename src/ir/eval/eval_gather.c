/* gather and scatter in the reference evaluator: the general forms, with
 * index_vector_dim, collapsed/inserted window dims and batching dims.
 *
 * Both ops read "index vectors" out of an indices array: for one position
 * in the indices' other dims (the batch, or scatter, dims), the vector runs
 * along index_vector_dim. When index_vector_dim equals the indices' rank,
 * the vector is implicitly one element long (a trailing dim of size 1). */
#include <stdlib.h>

#include "eval_internal.h"
#include "ir/scatter_plan.h"

/* Each entry of list is a dimension below bound and appears once; sorted too
 * when the op requires it. Marks the entries in seen (which may already
 * hold marks from a list that must not overlap this one). */
static bool check_dim_list(const Instruction *inst, const char *what, const IntList *list,
                           int64_t bound, bool sorted, bool *seen, Status *st) {
  for (int k = 0; k < list->count; k++) {
    int64_t d = list->values[k];
    if (d < 0 || d >= bound || (seen && seen[d]) || (sorted && k > 0 && d <= list->values[k - 1]))
      return status_error(st, STATUS_VERIFY_ERROR,
                          "%s %s: %s entry %lld is out of range, repeated or out of order",
                          opcode_name(inst->opcode), inst->name, what, (long long)d);
    if (seen) seen[d] = true;
  }
  return true;
}

static int64_t index_vector_length(const Shape *indices, int64_t index_vector_dim) {
  return index_vector_dim < indices->rank ? indices->dims[index_vector_dim] : 1;
}

static bool check_indices(const Instruction *inst, const Literal *indices, int64_t index_vector_dim,
                          const IntList *map, Status *st) {
  if (indices->shape.type == TYPE_TUPLE || !type_is_integer(indices->shape.type))
    return status_error(st, STATUS_VERIFY_ERROR, "%s %s: indices must be an integer array",
                        opcode_name(inst->opcode), inst->name);
  if (index_vector_dim < 0 || index_vector_dim > indices->shape.rank)
    return status_error(st, STATUS_VERIFY_ERROR, "%s %s: index_vector_dim %lld is out of range",
                        opcode_name(inst->opcode), inst->name, (long long)index_vector_dim);
  if (index_vector_length(&indices->shape, index_vector_dim) != map->count)
    return status_error(st, STATUS_VERIFY_ERROR,
                        "%s %s: index vectors have %lld elements but the index map has %d",
                        opcode_name(inst->opcode), inst->name,
                        (long long)index_vector_length(&indices->shape, index_vector_dim),
                        map->count);
  return true;
}

/* Batching dims pair an operand dim with an indices dim of the same size
 * (never index_vector_dim). */
static bool check_batching(const Instruction *inst, const Shape *operand, const Shape *indices,
                           const IntList *operand_dims, const IntList *indices_dims,
                           int64_t index_vector_dim, Status *st) {
  bool seen[AXLE_MAX_RANK] = {false};
  if (!check_dim_list(inst, "indices batching dims", indices_dims, indices->rank, false, seen, st))
    return false;
  if (operand_dims->count != indices_dims->count)
    return status_error(st, STATUS_VERIFY_ERROR, "%s %s: batching dims lists differ in length",
                        opcode_name(inst->opcode), inst->name);
  for (int k = 0; k < operand_dims->count; k++) {
    int64_t i = indices_dims->values[k];
    if (i == index_vector_dim || operand->dims[operand_dims->values[k]] != indices->dims[i])
      return status_error(st, STATUS_VERIFY_ERROR,
                          "%s %s: batching dims pair %d differs in size or is index_vector_dim",
                          opcode_name(inst->opcode), inst->name, k);
  }
  return true;
}

/* One index value. A u64 index past INT64_MAX is still "too large" (it must
 * clamp high, or make a scatter window fall out of bounds), not negative. */
static int64_t read_index(const Literal *indices, int64_t at) {
  if (indices->shape.type == TYPE_U64) {
    uint64_t u = literal_get_u64(indices, at);
    return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
  }
  return literal_get_s64(indices, at);
}

/* Fills indices_index with batch (the indices dims other than
 * index_vector_dim, in order) and reads the index vector there. */
static void fetch_index_vector(const Literal *indices, int64_t index_vector_dim,
                               const int64_t *batch, int64_t *indices_index, int64_t *vector,
                               int length) {
  const Shape *s = &indices->shape;
  int64_t strides[AXLE_MAX_RANK];
  shape_strides(s, strides);
  for (int d = 0, j = 0; d < s->rank; d++)
    if (d != index_vector_dim) indices_index[d] = batch[j++];
  for (int k = 0; k < length; k++) {
    if (index_vector_dim < s->rank) indices_index[index_vector_dim] = k;
    vector[k] = read_index(indices, index_linear(indices_index, strides, s->rank));
  }
}

/* ------------------------------------------------------------------- gather */

/* The gather attributes, checked, and the result dims they give. */
typedef struct GatherPlan {
  const GatherDims *g;
  bool is_offset_axis[AXLE_MAX_RANK];  /* result axes listed in offset_dims */
  int64_t offset_operand_dim[AXLE_MAX_RANK]; /* operand dim of the j-th offset axis */
  int result_rank;
  int64_t result_dims[AXLE_MAX_RANK];
} GatherPlan;

static bool gather_plan(const Instruction *inst, const Shape *operand, const Shape *indices,
                        GatherPlan *p, Status *st) {
  const GatherDims *g = p->g = attrs_gather(&inst->attrs);
  bool not_offset[AXLE_MAX_RANK] = {false}, seen_map[AXLE_MAX_RANK] = {false};
  if (g->slice_sizes.count != operand->rank)
    return status_error(st, STATUS_VERIFY_ERROR, "gather %s: slice_sizes needs %d entries",
                        inst->name, operand->rank);
  for (int d = 0; d < operand->rank; d++)
    if (g->slice_sizes.values[d] < 0 || g->slice_sizes.values[d] > operand->dims[d])
      return status_error(st, STATUS_VERIFY_ERROR, "gather %s: slice size %d does not fit the operand",
                          inst->name, d);
  if (!check_dim_list(inst, "collapsed_slice_dims", &g->collapsed_slice_dims, operand->rank, true,
                      not_offset, st) ||
      !check_dim_list(inst, "operand_batching_dims", &g->operand_batching_dims, operand->rank,
                      true, not_offset, st) ||
      !check_dim_list(inst, "start_index_map", &g->start_index_map, operand->rank, false,
                      seen_map, st) ||
      !check_batching(inst, operand, indices, &g->operand_batching_dims,
                      &g->start_indices_batching_dims, g->index_vector_dim, st))
    return false;
  for (int k = 0; k < g->operand_batching_dims.count; k++)
    if (seen_map[g->operand_batching_dims.values[k]])
      return status_error(st, STATUS_VERIFY_ERROR,
                          "gather %s: a batching dim is also in start_index_map", inst->name);
  int offset_count = 0;
  for (int d = 0; d < operand->rank; d++) {
    if (not_offset[d] && g->slice_sizes.values[d] > 1)
      return status_error(st, STATUS_VERIFY_ERROR,
                          "gather %s: collapsed or batching dim %d needs slice size 1", inst->name, d);
    if (!not_offset[d]) p->offset_operand_dim[offset_count++] = d;
  }
  int batch_count = indices->rank - (g->index_vector_dim < indices->rank ? 1 : 0);
  p->result_rank = batch_count + offset_count;
  if (g->offset_dims.count != offset_count || p->result_rank > AXLE_MAX_RANK)
    return status_error(st, STATUS_VERIFY_ERROR, "gather %s: offset_dims needs %d entries",
                        inst->name, offset_count);
  if (!check_dim_list(inst, "offset_dims", &g->offset_dims, p->result_rank, true,
                      p->is_offset_axis, st))
    return false;
  for (int r = 0, j = 0, b = 0; r < p->result_rank; r++) {
    if (p->is_offset_axis[r]) {
      p->result_dims[r] = g->slice_sizes.values[p->offset_operand_dim[j++]];
    } else {
      if (b == g->index_vector_dim) b++;
      p->result_dims[r] = indices->dims[b++];
    }
  }
  /* A collapsed dim of slice size 0 (shape inference allows "<= 1") leaves
   * result elements that would read from an empty slice: no value to give. */
  int64_t result_count = 1;
  for (int r = 0; r < p->result_rank; r++) result_count *= p->result_dims[r];
  for (int k = 0; result_count > 0 && k < g->collapsed_slice_dims.count; k++)
    if (g->slice_sizes.values[g->collapsed_slice_dims.values[k]] == 0)
      return status_error(st, STATUS_UNSUPPORTED,
                          "gather %s: collapsed dim %lld has slice size 0 but the result is not empty",
                          inst->name, (long long)g->collapsed_slice_dims.values[k]);
  return true;
}

/* gather(operand, start_indices), following the StableHLO spec's formula:
 *   operand_index = full_start_index + full_batching_index + full_offset_index
 * where the start index read from start_indices is clamped per dim to
 * [0, operand_dim - slice_size] so the whole slice lies in the operand
 * (HLO never reads out of bounds and never fails on a bad index). */
Literal *eval_gather(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *operand = operands[0], *indices = operands[1];
  GatherPlan p = {0};
  if (operand->shape.type == TYPE_TUPLE) {
    status_error(st, STATUS_VERIFY_ERROR, "gather %s: operand is a tuple", inst->name);
    return NULL;
  }
  if (!check_indices(inst, indices, attrs_gather(&inst->attrs)->index_vector_dim,
                     &attrs_gather(&inst->attrs)->start_index_map, st) ||
      !gather_plan(inst, &operand->shape, &indices->shape, &p, st))
    return NULL;
  const GatherDims *g = p.g;
  Shape computed = shape_array(operand->shape.type, p.result_rank, p.result_dims);
  Literal *result = eval_create_result(inst, 0, 1, &computed, st);
  if (!result) return NULL;
  int rank = operand->shape.rank;
  int64_t strides[AXLE_MAX_RANK], result_index[AXLE_MAX_RANK] = {0}, batch[AXLE_MAX_RANK];
  int64_t indices_index[AXLE_MAX_RANK], vector[AXLE_MAX_RANK], operand_index[AXLE_MAX_RANK];
  shape_strides(&operand->shape, strides);
  int64_t count = shape_element_count(&computed);
  for (int64_t o = 0; o < count; o++, index_next(result_index, p.result_dims, p.result_rank)) {
    for (int r = 0, b = 0; r < p.result_rank; r++)
      if (!p.is_offset_axis[r]) batch[b++] = result_index[r];
    fetch_index_vector(indices, g->index_vector_dim, batch, indices_index, vector,
                       g->start_index_map.count);
    for (int d = 0; d < rank; d++) operand_index[d] = 0;
    for (int k = 0; k < g->start_index_map.count; k++) {
      int64_t d = g->start_index_map.values[k];
      int64_t hi = operand->shape.dims[d] - g->slice_sizes.values[d];
      operand_index[d] = vector[k] < 0 ? 0 : vector[k] > hi ? hi : vector[k];
    }
    for (int k = 0; k < g->operand_batching_dims.count; k++)
      operand_index[g->operand_batching_dims.values[k]] =
          indices_index[g->start_indices_batching_dims.values[k]];
    for (int j = 0; j < g->offset_dims.count; j++)
      operand_index[p.offset_operand_dim[j]] += result_index[g->offset_dims.values[j]];
    literal_copy_element(result, o, operand, index_linear(operand_index, strides, rank));
  }
  return result;
}

/* ------------------------------------------------------------------ scatter */

static bool scatter_check_operands(const Instruction *inst, Literal *const *operands, int n,
                                   Status *st) {
  const Shape *in = &operands[0]->shape, *up = &operands[n + 1]->shape;
  for (int i = 0; i < 2 * n + 1; i++)
    if (operands[i]->shape.type == TYPE_TUPLE)
      return status_error(st, STATUS_VERIFY_ERROR, "scatter %s: operand %d is a tuple", inst->name, i);
  for (int i = 0; i < n; i++)
    if (!shape_same_dims(&operands[i]->shape, in) || !shape_same_dims(&operands[n + 1 + i]->shape, up) ||
        operands[i]->shape.type != operands[n + 1 + i]->shape.type)
      return status_error(st, STATUS_VERIFY_ERROR,
                          "scatter %s: inputs (and updates) must share dims, and input %d and "
                          "update %d one element type",
                          inst->name, i, i);
  return true;
}

/* The scatter attributes checked against the shapes, each with its own
 * message; the plan (src/ir/scatter_plan.c) then derives the walk. */
static bool scatter_check_dims(const Instruction *inst, const Shape *in, const Shape *indices,
                               const Shape *updates, Status *st) {
  const ScatterDims *s = attrs_scatter(&inst->attrs);
  bool not_window[AXLE_MAX_RANK] = {false}, is_window_axis[AXLE_MAX_RANK] = {false};
  bool seen_map[AXLE_MAX_RANK] = {false};
  if (!check_dim_list(inst, "update_window_dims", &s->update_window_dims, updates->rank, true,
                      is_window_axis, st) ||
      !check_dim_list(inst, "inserted_window_dims", &s->inserted_window_dims, in->rank, true,
                      not_window, st) ||
      !check_dim_list(inst, "input_batching_dims", &s->input_batching_dims, in->rank, true,
                      not_window, st) ||
      !check_dim_list(inst, "scatter_dims_to_operand_dims", &s->scatter_dims_to_operand_dims,
                      in->rank, false, seen_map, st) ||
      !check_batching(inst, in, indices, &s->input_batching_dims, &s->scatter_indices_batching_dims,
                      s->index_vector_dim, st))
    return false;
  for (int k = 0; k < s->input_batching_dims.count; k++)
    if (seen_map[s->input_batching_dims.values[k]])
      return status_error(st, STATUS_VERIFY_ERROR,
                          "scatter %s: a batching dim is also in scatter_dims_to_operand_dims",
                          inst->name);
  int window_input_dims = 0, scatter_count = updates->rank - s->update_window_dims.count;
  for (int d = 0; d < in->rank; d++) {
    if (not_window[d]) continue;
    if (window_input_dims >= s->update_window_dims.count)
      return status_error(st, STATUS_VERIFY_ERROR,
                          "scatter %s: update_window_dims must cover the input's window dims",
                          inst->name);
    int64_t axis = s->update_window_dims.values[window_input_dims++];
    if (updates->dims[axis] > in->dims[d])
      return status_error(st, STATUS_VERIFY_ERROR,
                          "scatter %s: update window dim %lld is larger than input dim %d",
                          inst->name, (long long)axis, d);
  }
  int batch_count = indices->rank - (s->index_vector_dim < indices->rank ? 1 : 0);
  if (window_input_dims != s->update_window_dims.count || batch_count != scatter_count)
    return status_error(st, STATUS_VERIFY_ERROR,
                        "scatter %s: updates must have one dim per input window dim and per "
                        "indices batch dim",
                        inst->name);
  for (int d = 0, b = 0; d < updates->rank; d++) {
    if (is_window_axis[d]) continue;
    if (b == s->index_vector_dim) b++;
    if (updates->dims[d] != indices->dims[b])
      return status_error(st, STATUS_VERIFY_ERROR,
                          "scatter %s: update scatter dim %d differs from the indices' dim %d",
                          inst->name, d, b);
    b++;
  }
  return true;
}

/* scatter_window_start's reader: an entry of the indices literal. */
static int64_t scatter_index_read(const void *context, const int64_t *indices_index) {
  const Literal *indices = context;
  int64_t strides[AXLE_MAX_RANK];
  shape_strides(&indices->shape, strides);
  return read_index(indices, index_linear(indices_index, strides, indices->shape.rank));
}

/* Applies the update computation over one scatter index's window, in
 * row-major order of the window: input = f(input..., update...). */
static bool scatter_window(const ScatterPlan *p, ScalarCall *call, Literal **results,
                           Literal *const *updates, int n, const int64_t *scatter_index,
                           const int64_t *start, Status *st) {
  const Shape *in = &results[0]->shape, *up = &updates[0]->shape;
  int64_t in_strides[AXLE_MAX_RANK], up_strides[AXLE_MAX_RANK];
  int64_t window_index[AXLE_MAX_RANK] = {0}, update_index[AXLE_MAX_RANK], input_index[AXLE_MAX_RANK];
  shape_strides(in, in_strides);
  shape_strides(up, up_strides);
  for (int64_t w = 0; w < p->window_total; w++, index_next(window_index, p->window_sizes, p->window_count)) {
    scatter_window_element(p, scatter_index, window_index, start, update_index, input_index);
    int64_t at = index_linear(input_index, in_strides, in->rank);
    int64_t from = index_linear(update_index, up_strides, up->rank);
    for (int i = 0; i < n; i++) {
      literal_copy_element(call->args[i], 0, results[i], at);
      literal_copy_element(call->args[n + i], 0, updates[i], from);
    }
    Literal *value = eval_scalar_call_run(call, st);
    if (!value) return false;
    for (int i = 0; i < n; i++) literal_copy_element(results[i], at, eval_scalar_result(value, i), 0);
    literal_free(value);
  }
  return true;
}

/* scatter(inputs..., scatter_indices, updates..., to_apply=f)
 *
 * The results start as copies of the inputs. Updates are applied one
 * scatter index at a time (row-major over the updates' scatter dims), each
 * over its whole window (row-major over update_window_dims), as XLA's
 * HloEvaluator does; this is row-major order of the update index whenever
 * the window dims come last. Each element becomes
 * f(current_0..N-1, update_0..N-1). */
Literal *eval_scatter(const Instruction *inst, Literal *const *operands, Status *st) {
  int n = (inst->operand_count - 1) / 2;
  if (n < 1 || inst->operand_count != 2 * n + 1 || inst->called_count < 1) {
    status_error(st, STATUS_VERIFY_ERROR,
                 "scatter %s needs N inputs, indices, N updates and an update computation",
                 inst->name);
    return NULL;
  }
  const Literal *indices = operands[n];
  Literal *const *updates = operands + n + 1;
  ScatterPlan p;
  const char *problem = NULL;
  if (!scatter_check_operands(inst, operands, n, st) ||
      !check_indices(inst, indices, attrs_scatter(&inst->attrs)->index_vector_dim,
                     &attrs_scatter(&inst->attrs)->scatter_dims_to_operand_dims, st) ||
      !scatter_check_dims(inst, &operands[0]->shape, &indices->shape, &updates[0]->shape, st))
    return NULL;
  if ((problem = scatter_plan_make(inst, &p)) != NULL) {
    status_error(st, STATUS_VERIFY_ERROR, "scatter %s: %s", inst->name, problem);
    return NULL;
  }
  Literal **results = mem_calloc((size_t)n, sizeof *results);
  ElementType *types = mem_calloc((size_t)(2 * n), sizeof *types);
  ScalarCall call = {0};
  bool ok = results && types;
  if (!ok) status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; ok && i < n; i++) {
    types[i] = types[n + i] = operands[i]->shape.type;
    ok = (results[i] = eval_create_result(inst, i, n, &operands[i]->shape, st)) != NULL;
    if (ok) memcpy(results[i]->data, operands[i]->data, (size_t)shape_byte_size(&operands[i]->shape));
  }
  ok = ok && eval_scalar_call_init(&call, inst, inst->called[0], types, 2 * n, types, n, st);
  int64_t scatter_index[AXLE_MAX_RANK] = {0}, start[AXLE_MAX_RANK];
  for (int64_t k = 0; ok && k < p.scatter_total; k++, index_next(scatter_index, p.scatter_sizes, p.scatter_count)) {
    if (!scatter_window_start(&p, scatter_index_read, indices, scatter_index, start)) continue;
    ok = scatter_window(&p, &call, results, updates, n, scatter_index, start, st);
  }
  eval_scalar_call_free(&call);
  mem_free(types);
  return eval_finish_results(results, n, ok);
}
