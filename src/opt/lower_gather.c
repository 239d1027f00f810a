/* Lowering gather: the element of a gather's result at a logical index,
 * as index arithmetic on loads (see lower_internal.h).
 *
 * Following the StableHLO spec, a result index splits into batch dims (the
 * axes not in offset_dims) and offset dims. The batch dims pick an index
 * vector out of start_indices (running along index_vector_dim); its entries,
 * clamped, are the slice's start in the operand dims of start_index_map:
 *
 *   operand_index = full_start_index + full_batching_index + full_offset_index
 *
 * HLO clamps each start to [0, operand_dim - slice_size], so the slice lies
 * wholly inside the operand and a gather never reads out of bounds. */
#include "opt/lower_internal.h"

int lower_emit_gather(Lower *L, const Instruction *inst, const int *index) {
  const Instruction *x = inst->operands[0], *indices = inst->operands[1];
  const GatherDims *g = attrs_gather(&inst->attrs);
  const Shape *in = &x->shape, *ind = &indices->shape;
  if (!type_is_integer(ind->type)) return lower_fail(L, inst, "start indices that are not integers");
  bool is_offset_axis[AXLE_MAX_RANK] = {false}, not_offset[AXLE_MAX_RANK] = {false};
  for (int j = 0; j < g->offset_dims.count; j++) is_offset_axis[g->offset_dims.values[j]] = true;
  for (int j = 0; j < g->collapsed_slice_dims.count; j++) not_offset[g->collapsed_slice_dims.values[j]] = true;
  for (int j = 0; j < g->operand_batching_dims.count; j++) not_offset[g->operand_batching_dims.values[j]] = true;

  /* The batch axes of the result, in order, index start_indices' dims other
   * than index_vector_dim. */
  int indices_index[AXLE_MAX_RANK];
  for (int r = 0, d = 0; r < inst->shape.rank; r++) {
    if (is_offset_axis[r]) continue;
    if (d == g->index_vector_dim) d++;
    indices_index[d++] = index[r];
  }
  int operand_index[AXLE_MAX_RANK]; /* -1: zero so far */
  for (int d = 0; d < in->rank; d++) operand_index[d] = -1;
  for (int k = 0; k < g->start_index_map.count; k++) {
    int d = (int)g->start_index_map.values[k];
    if (g->index_vector_dim < ind->rank) indices_index[g->index_vector_dim] = lower_k_s64(L, k);
    int start = lower_emit(L, indices, indices_index);
    if (start < 0) return -1;
    operand_index[d] = lower_k_clamped_start(L, start, ind->type, in->dims[d] - g->slice_sizes.values[d]);
  }
  for (int k = 0; k < g->operand_batching_dims.count; k++)
    operand_index[g->operand_batching_dims.values[k]] = indices_index[g->start_indices_batching_dims.values[k]];
  /* Offset axes, in order, walk the operand dims that are neither collapsed
   * nor batching, in order. */
  for (int d = 0, j = 0; d < in->rank; d++) {
    if (not_offset[d]) continue;
    int offset = index[g->offset_dims.values[j++]];
    operand_index[d] = operand_index[d] < 0 ? offset : lower_k_add(L, operand_index[d], offset);
  }
  for (int d = 0; d < in->rank; d++)
    if (operand_index[d] < 0) operand_index[d] = lower_k_s64(L, 0);
  return lower_emit(L, x, operand_index);
}
