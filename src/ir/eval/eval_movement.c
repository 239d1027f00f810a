/* Ops that move elements without arithmetic: broadcast, reshape, transpose,
 * slice, dynamic-slice, dynamic-update-slice, concatenate, pad, reverse,
 * iota, copy and bitcast.
 *
 * Every op here is defined on logical indices, whatever the layouts, except
 * bitcast: it reinterprets the operand's bytes in physical (layout) order.
 * Most ops walk the result's multi-index in row-major order and copy the
 * one operand element that index reads. */
#include <stdlib.h>

#include "eval_internal.h"

static Literal *malformed(const Instruction *inst, const char *why, Status *st) {
  status_error(st, STATUS_VERIFY_ERROR, "%s: %s", opcode_name(inst->opcode), why);
  return NULL;
}

static bool is_array(const Literal *lit) { return lit->shape.type != TYPE_TUPLE; }

static bool same_array_type(const Instruction *inst, const Literal *operand) {
  return is_array(operand) && inst->shape.type == operand->shape.type;
}

/* Broadcast, transpose, slice, dynamic-slice and reverse are all affine
 * reads: the result element at multi-index i is the operand element at
 * linear position base + sum over d of i[d] * step[d]. Each op only works
 * out its base and steps (a step of 0 repeats, a negative one reverses). */
static Literal *affine_read(const Instruction *inst, const Literal *in, int64_t base,
                            const int64_t *step) {
  int rank = inst->shape.rank;
  int64_t index[AXLE_MAX_RANK] = {0};
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&inst->shape);
  for (int64_t o = 0; o < n; o++, index_next(index, inst->shape.dims, rank))
    literal_copy_element(out, o, in, base + index_linear(index, step, rank));
  return out;
}

/* broadcast: operand dimension i becomes result dimension dimensions[i]. */
Literal *eval_broadcast(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0];
  const IntList *map = &inst->attrs.dimensions;
  int rank = inst->shape.rank;
  if (!same_array_type(inst, in) || map->count != in->shape.rank)
    return malformed(inst, "dimensions= must name one result dimension per operand dimension", st);
  for (int i = 0; i < map->count; i++)
    if (map->values[i] < 0 || map->values[i] >= rank ||
        inst->shape.dims[map->values[i]] != in->shape.dims[i])
      return malformed(inst, "dimensions= does not match the operand's shape", st);
  int64_t in_strides[AXLE_MAX_RANK], step[AXLE_MAX_RANK] = {0};
  shape_strides(&in->shape, in_strides);
  for (int i = 0; i < map->count; i++) step[map->values[i]] = in_strides[i];
  return affine_read(inst, in, 0, step);
}

/* reshape keeps the row-major element sequence. */
Literal *eval_reshape(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0];
  if (!same_array_type(inst, in) ||
      shape_element_count(&in->shape) != shape_element_count(&inst->shape))
    return malformed(inst, "the element counts differ", st);
  Literal *out = literal_create(&inst->shape);
  memcpy(out->data, in->data, (size_t)shape_byte_size(&in->shape));
  return out;
}

/* transpose: result dimension i is operand dimension dimensions[i]. */
Literal *eval_transpose(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0];
  const IntList *perm = &inst->attrs.dimensions;
  int rank = inst->shape.rank;
  if (!same_array_type(inst, in) || perm->count != rank || in->shape.rank != rank)
    return malformed(inst, "dimensions= must be a permutation of the operand's dimensions", st);
  for (int i = 0; i < rank; i++)
    if (perm->values[i] < 0 || perm->values[i] >= rank ||
        in->shape.dims[perm->values[i]] != inst->shape.dims[i])
      return malformed(inst, "dimensions= does not match the shapes", st);
  int64_t in_strides[AXLE_MAX_RANK], step[AXLE_MAX_RANK];
  shape_strides(&in->shape, in_strides);
  for (int i = 0; i < rank; i++) step[i] = in_strides[perm->values[i]];
  return affine_read(inst, in, 0, step);
}

/* slice: result index i reads operand index start + i * stride. */
Literal *eval_slice(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0];
  const SliceDims *slice = attrs_slice(&inst->attrs);
  int rank = inst->shape.rank;
  if (!same_array_type(inst, in) || in->shape.rank != rank || slice->starts.count != rank)
    return malformed(inst, "slice= must give one range per dimension", st);
  for (int d = 0; d < rank; d++) {
    int64_t start = slice->starts.values[d];
    int64_t stride = slice->strides.count == rank ? slice->strides.values[d] : 1;
    int64_t last = start + (inst->shape.dims[d] - 1) * stride;
    if (start < 0 || stride < 1 || (inst->shape.dims[d] > 0 && last >= in->shape.dims[d]))
      return malformed(inst, "the slice reaches outside the operand", st);
  }
  int64_t in_strides[AXLE_MAX_RANK], step[AXLE_MAX_RANK], base = 0;
  shape_strides(&in->shape, in_strides);
  for (int d = 0; d < rank; d++) {
    int64_t stride = slice->strides.count == rank ? slice->strides.values[d] : 1;
    base += slice->starts.values[d] * in_strides[d];
    step[d] = stride * in_strides[d];
  }
  return affine_read(inst, in, base, step);
}

/* ---- dynamic-slice and dynamic-update-slice ---- */

/* A start index read from a scalar of any integer type; u64 values past
 * INT64_MAX are huge, not negative. */
static int64_t read_start(const Literal *lit, int64_t i) {
  if (lit->shape.type == TYPE_U64) {
    uint64_t u = literal_get_u64(lit, i);
    return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
  }
  return literal_get_s64(lit, i);
}

/* Start indices come as one scalar operand per dimension (operands[first..])
 * or, in older HLO, as one rank-1 operand. Each is clamped so the window
 * fits: start = clamp(start, 0, dim - size). */
static bool read_clamped_starts(const Instruction *inst, Literal *const *operands, int first,
                                const Shape *operand, const int64_t *sizes, int64_t *starts,
                                Status *st) {
  int rank = operand->rank;
  int given = inst->operand_count - first;
  bool vector_form = given == 1 && operands[first]->shape.rank == 1 && is_array(operands[first]) &&
                     operands[first]->shape.dims[0] == rank;
  if (!vector_form && given != rank)
    return status_error(st, STATUS_VERIFY_ERROR, "%s takes one start index per dimension",
                        opcode_name(inst->opcode));
  for (int d = 0; d < rank; d++) {
    const Literal *index = vector_form ? operands[first] : operands[first + d];
    if (!is_array(index) || !type_is_integer(index->shape.type) ||
        shape_element_count(&index->shape) != (vector_form ? rank : 1))
      return status_error(st, STATUS_VERIFY_ERROR, "%s: start indices must be integer scalars",
                          opcode_name(inst->opcode));
    if (sizes[d] < 0 || sizes[d] > operand->dims[d])
      return status_error(st, STATUS_VERIFY_ERROR, "%s: the window is larger than the operand",
                          opcode_name(inst->opcode));
    int64_t start = read_start(index, vector_form ? d : 0);
    int64_t limit = operand->dims[d] - sizes[d];
    starts[d] = start < 0 ? 0 : start > limit ? limit : start;
  }
  return true;
}

Literal *eval_dynamic_slice(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0];
  int rank = inst->shape.rank;
  if (!same_array_type(inst, in) || in->shape.rank != rank)
    return malformed(inst, "the result must have the operand's rank and type", st);
  int64_t starts[AXLE_MAX_RANK];
  if (!read_clamped_starts(inst, operands, 1, &in->shape, inst->shape.dims, starts, st))
    return NULL;
  int64_t in_strides[AXLE_MAX_RANK];
  shape_strides(&in->shape, in_strides);
  return affine_read(inst, in, index_linear(starts, in_strides, rank), in_strides);
}

/* dynamic-update-slice(operand, update, starts...): a copy of the operand
 * with the update written at the clamped starts. */
Literal *eval_dynamic_update_slice(const Instruction *inst, Literal *const *operands,
                                   Status *st) {
  const Literal *in = operands[0], *update = operands[1];
  int rank = inst->shape.rank;
  if (!same_array_type(inst, in) || !same_array_type(inst, update) || in->shape.rank != rank ||
      update->shape.rank != rank)
    return malformed(inst, "operand, update and result must agree in rank and type", st);
  int64_t starts[AXLE_MAX_RANK];
  if (!read_clamped_starts(inst, operands, 2, &in->shape, update->shape.dims, starts, st))
    return NULL;
  Literal *out = literal_clone(in);
  out->shape = inst->shape;
  int64_t out_strides[AXLE_MAX_RANK], index[AXLE_MAX_RANK] = {0};
  shape_strides(&inst->shape, out_strides);
  int64_t n = shape_element_count(&update->shape);
  for (int64_t u = 0; u < n; u++, index_next(index, update->shape.dims, rank)) {
    int64_t to = 0;
    for (int d = 0; d < rank; d++) to += (starts[d] + index[d]) * out_strides[d];
    literal_copy_element(out, to, update, u);
  }
  return out;
}

/* concatenate along dimensions[0]: the operands follow one another. */
Literal *eval_concatenate(const Instruction *inst, Literal *const *operands, Status *st) {
  int rank = inst->shape.rank;
  if (inst->attrs.dimensions.count != 1 || inst->attrs.dimensions.values[0] < 0 ||
      inst->attrs.dimensions.values[0] >= rank)
    return malformed(inst, "dimensions= must name one dimension", st);
  int axis = (int)inst->attrs.dimensions.values[0];
  int64_t total = 0;
  for (int k = 0; k < inst->operand_count; k++) {
    const Literal *in = operands[k];
    if (!same_array_type(inst, in) || in->shape.rank != rank)
      return malformed(inst, "operands must have the result's rank and type", st);
    for (int d = 0; d < rank; d++)
      if (d != axis && in->shape.dims[d] != inst->shape.dims[d])
        return malformed(inst, "operands differ outside the concatenated dimension", st);
    total += in->shape.dims[axis];
  }
  if (total != inst->shape.dims[axis])
    return malformed(inst, "the operands do not add up to the result", st);
  Literal *out = literal_create(&inst->shape);
  int64_t out_strides[AXLE_MAX_RANK];
  shape_strides(&inst->shape, out_strides);
  int64_t offset = 0;
  for (int k = 0; k < inst->operand_count; k++) {
    const Literal *in = operands[k];
    int64_t index[AXLE_MAX_RANK] = {0};
    int64_t n = shape_element_count(&in->shape);
    for (int64_t i = 0; i < n; i++, index_next(index, in->shape.dims, rank)) {
      int64_t to = offset * out_strides[axis];
      for (int d = 0; d < rank; d++) to += index[d] * out_strides[d];
      literal_copy_element(out, to, in, i);
    }
    offset += in->shape.dims[axis];
  }
  return out;
}

/* pad: operand element i of a dimension lands at lo + i * (interior + 1);
 * every other position holds the padding value. A negative lo or hi cuts
 * elements off that edge. */
Literal *eval_pad(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0], *value = operands[1];
  const PadDims *p = attrs_padding(&inst->attrs);
  int rank = inst->shape.rank;
  if (!same_array_type(inst, in) || !same_array_type(inst, value) || value->shape.rank != 0 ||
      in->shape.rank != rank || p->rank != rank)
    return malformed(inst, "needs an operand, a scalar padding value and padding= per dimension",
                     st);
  for (int d = 0; d < rank; d++) {
    int64_t dim = in->shape.dims[d];
    int64_t expect = p->lo[d] + p->hi[d] + dim + (dim > 0 ? (dim - 1) * p->interior[d] : 0);
    if (p->interior[d] < 0 || expect != inst->shape.dims[d])
      return malformed(inst, "padding= does not give the result's shape", st);
  }
  int64_t in_strides[AXLE_MAX_RANK], index[AXLE_MAX_RANK] = {0};
  shape_strides(&in->shape, in_strides);
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&inst->shape);
  for (int64_t o = 0; o < n; o++, index_next(index, inst->shape.dims, rank)) {
    int64_t from = 0;
    bool inside = true;
    for (int d = 0; d < rank && inside; d++) {
      int64_t shifted = index[d] - p->lo[d], step = p->interior[d] + 1;
      inside = shifted >= 0 && shifted % step == 0 && shifted / step < in->shape.dims[d];
      from += shifted / step * in_strides[d];
    }
    if (inside) literal_copy_element(out, o, in, from);
    else literal_copy_element(out, o, value, 0);
  }
  return out;
}

/* reverse the listed dimensions. */
Literal *eval_reverse(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0];
  int rank = inst->shape.rank;
  if (!same_array_type(inst, in) || !shape_same_dims(&in->shape, &inst->shape))
    return malformed(inst, "the result must have the operand's shape", st);
  bool reversed[AXLE_MAX_RANK] = {false};
  for (int i = 0; i < inst->attrs.dimensions.count; i++) {
    int64_t d = inst->attrs.dimensions.values[i];
    if (d < 0 || d >= rank) return malformed(inst, "dimensions= names a missing dimension", st);
    reversed[d] = true;
  }
  int64_t strides[AXLE_MAX_RANK], step[AXLE_MAX_RANK], base = 0;
  shape_strides(&in->shape, strides);
  for (int d = 0; d < rank; d++) {
    step[d] = reversed[d] ? -strides[d] : strides[d];
    if (reversed[d] && in->shape.dims[d] > 0) base += (in->shape.dims[d] - 1) * strides[d];
  }
  return affine_read(inst, in, base, step);
}

/* iota: each element is its index along iota_dimension, in the element type. */
Literal *eval_iota(const Instruction *inst, Literal *const *operands, Status *st) {
  (void)operands;
  int rank = inst->shape.rank;
  int64_t axis = inst->attrs.iota_dimension;
  if (inst->shape.type == TYPE_TUPLE || axis < 0 || axis >= rank)
    return malformed(inst, "iota_dimension= must name a dimension of the result", st);
  Literal *out = literal_create(&inst->shape);
  int64_t index[AXLE_MAX_RANK] = {0};
  int64_t n = shape_element_count(&inst->shape);
  for (int64_t o = 0; o < n; o++, index_next(index, inst->shape.dims, rank)) {
    if (type_is_float(inst->shape.type)) literal_set_f64(out, o, (double)index[axis]);
    else literal_set_s64(out, o, index[axis]);
  }
  return out;
}

Literal *eval_copy(const Instruction *inst, Literal *const *operands, Status *st) {
  (void)st;
  Literal *out = literal_clone(operands[0]);
  if (is_array(out)) out->shape = inst->shape;
  return out;
}

/* ---- bitcast ---- */

/* Strides, per logical dimension, of the physical (layout) order:
 * minor_to_major[0] varies fastest. */
static void physical_strides(const Shape *s, int64_t strides[AXLE_MAX_RANK]) {
  int64_t stride = 1;
  for (int k = 0; k < s->rank; k++) {
    int d = s->minor_to_major[k];
    strides[d] = stride;
    stride *= s->dims[d];
  }
}

static bool layout_is_permutation(const Shape *s) {
  bool seen[AXLE_MAX_RANK] = {false};
  for (int k = 0; k < s->rank; k++) {
    int d = s->minor_to_major[k];
    if (d < 0 || d >= s->rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

/* Copies between a row-major literal and a buffer in its physical order. */
static void copy_physical(const Shape *s, char *physical, char *row_major, bool to_physical) {
  int64_t strides[AXLE_MAX_RANK], index[AXLE_MAX_RANK] = {0};
  physical_strides(s, strides);
  size_t size = (size_t)type_byte_size(s->type);
  int64_t n = shape_element_count(s);
  for (int64_t i = 0; i < n; i++, index_next(index, s->dims, s->rank)) {
    char *p = physical + index_linear(index, strides, s->rank) * (int64_t)size;
    char *r = row_major + i * (int64_t)size;
    if (to_physical) memcpy(p, r, size);
    else memcpy(r, p, size);
  }
}

/* A buffer of elements in physical order, one per byte, as the bytes of
 * a packed buffer: element k in bits [k*bits, k*bits+bits). */
static void elements_pack(const uint8_t *elements, int64_t count, int bits, uint8_t *packed) {
  uint8_t mask = (uint8_t)((1u << bits) - 1);
  for (int64_t k = 0; k < count; k++)
    packed[k * bits / 8] |= (uint8_t)((elements[k] & mask) << (k * bits % 8));
}

/* The inverse; s4 and s2 elements are sign-extended into their byte, as a
 * literal holds them. */
static void elements_unpack(const uint8_t *packed, int64_t count, int bits, bool is_signed,
                            uint8_t *elements) {
  unsigned top = 1u << (bits - 1);
  for (int64_t k = 0; k < count; k++) {
    unsigned v = (packed[k * bits / 8] >> (k * bits % 8)) & ((1u << bits) - 1);
    elements[k] = (uint8_t)(is_signed ? (v ^ top) - top : v);
  }
}

/* Whether elements of s sit packed in its buffers (an E(n) layout). */
static bool is_packed(const Shape *s) {
  return shape_buffer_byte_size(s) != shape_byte_size(s);
}

/* bitcast: the result's bytes in its physical order are the operand's bytes
 * in the operand's physical order. Literals are row-major, so the operand is
 * laid out by its minor_to_major, read back as the result's physical bytes,
 * and permuted to the result's row-major order. Sub-byte elements under an
 * E(n) layout are packed on the way out and unpacked on the way back. When
 * the element type changes (equal byte counts), each side walks the bytes
 * with its own element size, so the bits are reinterpreted as by
 * bitcast-convert. */
Literal *eval_bitcast(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0];
  if (!is_array(in) || inst->shape.type == TYPE_TUPLE)
    return malformed(inst, "operand and result must have the same byte size", st);
  /* The operand's layout is the one its instruction declares: a literal
   * handed in by the caller carries data, not a layout. */
  Shape from = in->shape;
  const Shape *declared = inst->operand_count > 0 ? &inst->operands[0]->shape : NULL;
  if (declared && declared->type != TYPE_TUPLE && declared->rank == from.rank) {
    memcpy(from.minor_to_major, declared->minor_to_major, sizeof from.minor_to_major);
    from.element_size_bits = declared->element_size_bits;
  }
  const Shape *to = &inst->shape;
  if (shape_buffer_byte_size(&from) != shape_buffer_byte_size(to))
    return malformed(inst, "operand and result must have the same byte size", st);
  if (from.type != to->type && (is_packed(&from) || is_packed(to)))
    return malformed(inst, "a bitcast of packed elements must keep the element type", st);
  if (!layout_is_permutation(&from) || !layout_is_permutation(to))
    return malformed(inst, "a layout is not a permutation of the dimensions", st);
  size_t from_bytes = (size_t)shape_byte_size(&from), to_bytes = (size_t)shape_byte_size(to);
  size_t buffer_bytes = (size_t)shape_buffer_byte_size(to);
  char *physical = mem_calloc(from_bytes + to_bytes + buffer_bytes + 1, 1);
  if (!physical) {
    status_error(st, STATUS_OUT_OF_MEMORY, "bitcast: out of memory");
    return NULL;
  }
  copy_physical(&from, physical, in->data, true);
  char *result_physical = physical;
  if (is_packed(&from) || is_packed(to)) {
    uint8_t *buffer = (uint8_t *)physical + from_bytes + to_bytes;
    int bits = type_bit_width(from.type);
    bool is_signed = type_kind(from.type) == TYPE_KIND_SINT;
    if (is_packed(&from)) elements_pack((uint8_t *)physical, shape_element_count(&from), bits, buffer);
    else memcpy(buffer, physical, buffer_bytes);
    result_physical = physical + from_bytes;
    if (is_packed(to))
      elements_unpack(buffer, shape_element_count(to), bits, is_signed, (uint8_t *)result_physical);
    else
      elements_unpack(buffer, shape_element_count(to), 8, false, (uint8_t *)result_physical);
  }
  Literal *out = literal_create(to);
  copy_physical(to, result_physical, out->data, false);
  mem_free(physical);
  /* An unpacked sub-byte element read from a packed buffer holds a whole
   * byte; its value is the low bits, stored back the canonical way. */
  if (type_bit_width(to->type) < 8 && !is_packed(to)) {
    uint8_t mask = (uint8_t)((1u << type_bit_width(to->type)) - 1);
    for (int64_t i = 0; i < shape_element_count(to); i++) {
      if (type_is_integer(to->type)) literal_set_s64(out, i, literal_get_s64(out, i));
      else ((uint8_t *)out->data)[i] &= mask;
    }
  }
  return out;
}
