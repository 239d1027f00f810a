/* dot's two variants, defined through dot itself (eval_linalg.c):
 *
 *   scaled-dot(lhs, rhs, lhs_scale, rhs_scale) multiplies each operand by
 *   its scale, repeated over blocks (scale dim d covers operand dim d in
 *   blocks of dims[d] / scale_dims[d] elements), then takes the dot. The
 *   products are formed in double, then the dot rounds as dot does.
 *
 *   ragged-dot(lhs, rhs, group_sizes) cuts one lhs dimension into groups of
 *   group_sizes[g] consecutive entries (a row of sizes for each index over
 *   the leading dims group_sizes may have, ragged_dot_sizes_prefix); entries
 *   past the last group belong to none and contribute zeros. See
 *   infer_ragged_dot for its three modes. */
#include <stdlib.h>

#include "eval_internal.h"

/* Runs dot as if inst were a dot with these dims and this result shape:
 * a plain dot, its ragged dims dropped (each mode has cut its operands). */
static Literal *dot_as(const Instruction *inst, const DotDims *dims, const Shape *shape, const Literal *lhs,
                       const Literal *rhs, Status *st) {
  DotDims plain = *dims;
  plain.lhs_ragged = plain.rhs_group = (IntList){0, NULL};
  Instruction as = *inst;
  as.opcode = OP_DOT;
  as.attrs.dot = &plain;
  as.shape = *shape;
  as.operand_count = 2;
  Literal *operands[2] = {(Literal *)lhs, (Literal *)rhs};
  return eval_dot(&as, operands, st);
}

/* x times its scale, repeated over blocks, as an f64 array. */
static Literal *apply_scale(const Literal *x, const Literal *scale) {
  Shape s = x->shape;
  s.type = TYPE_F64;
  Literal *out = literal_create(&s);
  int rank = x->shape.rank;
  int64_t index[AXLE_MAX_RANK] = {0}, scale_strides[AXLE_MAX_RANK], count = shape_element_count(&s);
  shape_strides(&scale->shape, scale_strides);
  for (int64_t i = 0; i < count; i++, index_next(index, s.dims, rank)) {
    int64_t at = 0;
    for (int d = 0; d < rank; d++) at += index[d] / (s.dims[d] / scale->shape.dims[d]) * scale_strides[d];
    literal_set_f64(out, i, literal_get_f64(x, i) * literal_get_f64(scale, at));
  }
  return out;
}

Literal *eval_scaled_dot(const Instruction *inst, Literal *const *operands, Status *st) {
  for (int k = 0; k < 2; k++) {
    const Shape *x = &operands[k]->shape, *s = &operands[k + 2]->shape;
    bool fits = x->type != TYPE_TUPLE && s->type != TYPE_TUPLE && x->rank == s->rank;
    for (int d = 0; fits && d < x->rank; d++) fits = s->dims[d] > 0 && x->dims[d] % s->dims[d] == 0;
    if (!fits) {
      status_error(st, STATUS_VERIFY_ERROR, "scaled-dot %s: scale %d does not tile its operand", inst->name,
                   k + 2);
      return NULL;
    }
  }
  Literal *lhs = apply_scale(operands[0], operands[2]), *rhs = apply_scale(operands[1], operands[3]);
  Literal *out = dot_as(inst, attrs_dot(&inst->attrs), &inst->shape, lhs, rhs, st);
  literal_free(lhs);
  literal_free(rhs);
  return out;
}

/* ---- ragged-dot ---- */

/* The group of entry `at` along the ragged dimension, for batch row `row`
 * of group_sizes: -1 when past the last group. The running end saturates
 * (s64_add_saturating): a group 2^63 - 1 long runs past every row. */
static int64_t group_of(const Literal *sizes, int64_t row, int64_t at) {
  int64_t groups = sizes->shape.dims[sizes->shape.rank - 1], end = 0;
  for (int64_t g = 0; g < groups; g++) {
    end = s64_add_saturating(end, literal_get_s64(sizes, row * groups + g));
    if (at < end) return g;
  }
  return -1;
}

/* Row of group_sizes for a multi-index whose prefix coordinates are at
 * positions pos[0..]: 0 when group_sizes is [G]. */
static int64_t sizes_row(const Literal *sizes, const int64_t *index, const int64_t *pos) {
  int64_t row = 0;
  for (int j = 0; j + 1 < sizes->shape.rank; j++) row = row * sizes->shape.dims[j] + index[pos[j]];
  return row;
}

static bool list_has(const IntList *list, int64_t v) {
  for (int i = 0; i < list->count; i++)
    if (list->values[i] == v) return true;
  return false;
}

/* rhs without its group dimension, at group g. */
static Literal *rhs_group(const Literal *rhs, int gd, int64_t g) {
  Shape s = rhs->shape;
  s.rank--;
  for (int k = gd; k < s.rank; k++) s.dims[k] = rhs->shape.dims[k + 1];
  shape_set_default_layout(&s);
  Literal *out = literal_create(&s);
  int64_t outer = 1, inner = 1, size = type_byte_size(s.type);
  for (int k = 0; k < gd; k++) outer *= rhs->shape.dims[k];
  for (int k = gd + 1; k < rhs->shape.rank; k++) inner *= rhs->shape.dims[k];
  for (int64_t o = 0; o < outer; o++)
    memcpy((char *)out->data + o * inner * size,
           (const char *)rhs->data + ((o * rhs->shape.dims[gd] + g) * inner) * size, (size_t)(inner * size));
  return out;
}

/* Non-contracting mode: each output row along the ragged dimension takes
 * the dot with its group's rhs. */
static Literal *ragged_rows(const Instruction *inst, Literal *const *operands, Status *st) {
  const DotDims *dd = attrs_dot(&inst->attrs);
  const Literal *lhs = operands[0], *rhs = operands[1], *sizes = operands[2];
  int gd = (int)dd->rhs_group.values[0];
  int64_t ragged = dd->lhs_ragged.values[0], rb[AXLE_MAX_RANK], rc[AXLE_MAX_RANK];
  DotDims view = *dd;
  for (int i = 0; i < dd->rhs_batch.count; i++)
    rb[i] = dd->rhs_batch.values[i] - (dd->rhs_batch.values[i] > gd);
  for (int i = 0; i < dd->rhs_contracting.count; i++)
    rc[i] = dd->rhs_contracting.values[i] - (dd->rhs_contracting.values[i] > gd);
  view.rhs_batch = (IntList){dd->rhs_batch.count, rb};
  view.rhs_contracting = (IntList){dd->rhs_contracting.count, rc};
  /* Where the ragged dimension sits in the result. group_sizes' prefix
   * (the batch dims, then lhs's free dims before the ragged one) is the
   * result's leading dims in the same order. */
  int64_t pos = dd->lhs_batch.count, batch_pos[AXLE_MAX_RANK];
  for (int d = 0; d < ragged; d++) pos += !list_has(&dd->lhs_batch, d) && !list_has(&dd->lhs_contracting, d);
  for (int j = 0; j < AXLE_MAX_RANK; j++) batch_pos[j] = j;
  Literal *out = literal_create(&inst->shape);
  int64_t count = shape_element_count(&inst->shape);
  for (int64_t g = 0; g < rhs->shape.dims[gd]; g++) {
    Literal *rg = rhs_group(rhs, gd, g);
    Literal *full = dot_as(inst, &view, &inst->shape, lhs, rg, st);
    literal_free(rg);
    if (!full) {
      literal_free(out);
      return NULL;
    }
    int64_t index[AXLE_MAX_RANK] = {0};
    for (int64_t i = 0; i < count; i++, index_next(index, inst->shape.dims, inst->shape.rank))
      if (group_of(sizes, sizes_row(sizes, index, batch_pos), index[pos]) == g)
        literal_copy_element(out, i, full, i);
    literal_free(full);
  }
  return out;
}

/* Contracting mode: result[g] is the dot over group g's part of the
 * contracting dimension only. */
static Literal *ragged_sums(const Instruction *inst, Literal *const *operands, Status *st) {
  const DotDims *dd = attrs_dot(&inst->attrs);
  const Literal *lhs = operands[0], *rhs = operands[1], *sizes = operands[2];
  int64_t ragged = dd->lhs_ragged.values[0], groups = inst->shape.dims[0];
  Shape part = inst->shape;
  part.rank--;
  for (int k = 0; k < part.rank; k++) part.dims[k] = inst->shape.dims[k + 1];
  shape_set_default_layout(&part);
  int64_t prefix[AXLE_MAX_RANK];  /* the batch dims, then contracting dims listed before the ragged one */
  ragged_dot_sizes_prefix(dd, lhs->shape.rank, prefix);
  Literal *out = literal_create(&inst->shape);
  int64_t part_bytes = shape_byte_size(&part), count = shape_element_count(&lhs->shape);
  for (int64_t g = 0; g < groups; g++) {
    Literal *masked = literal_clone(lhs);
    int64_t index[AXLE_MAX_RANK] = {0};
    for (int64_t i = 0; i < count; i++, index_next(index, lhs->shape.dims, lhs->shape.rank))
      if (group_of(sizes, sizes_row(sizes, index, prefix), index[ragged]) != g)
        memset((char *)masked->data + i * type_byte_size(lhs->shape.type), 0,
               (size_t)type_byte_size(lhs->shape.type));
    Literal *sum = dot_as(inst, dd, &part, masked, rhs, st);
    literal_free(masked);
    if (!sum) {
      literal_free(out);
      return NULL;
    }
    memcpy((char *)out->data + g * part_bytes, sum->data, (size_t)part_bytes);
    literal_free(sum);
  }
  return out;
}

Literal *eval_ragged_dot(const Instruction *inst, Literal *const *operands, Status *st) {
  const DotDims *dd = attrs_dot(&inst->attrs);
  if (dd->lhs_ragged.count != 1 || inst->shape.type == TYPE_TUPLE) {
    status_error(st, STATUS_VERIFY_ERROR, "ragged-dot %s needs one lhs_ragged_dims entry", inst->name);
    return NULL;
  }
  if (dd->rhs_group.count == 1) return ragged_rows(inst, operands, st);
  for (int i = 0; i < dd->lhs_contracting.count; i++)
    if (dd->lhs_contracting.values[i] == dd->lhs_ragged.values[0]) return ragged_sums(inst, operands, st);
  /* A ragged batch dimension changes nothing: every batch is one group's. */
  return dot_as(inst, dd, &inst->shape, operands[0], operands[1], st);
}
