/* Equality and hashing of attributes and instructions (part of the editing
 * core, ir.h's edit.c section): what common-subexpression elimination asks.
 * Every field of Attrs is compared by value, and groups are read through
 * their accessors, so an absent group equals an all-zero one. A new field of
 * Attrs needs a line in attrs_equal and in attrs_hash. */
#include <assert.h>
#include <string.h>

#include "ir.h"

static bool intlist_equal(const IntList *a, const IntList *b) {
  if (a->count != b->count) return false;
  for (int i = 0; i < a->count; i++)
    if (a->values[i] != b->values[i]) return false;
  return true;
}

static bool values_equal(const int64_t *a, const int64_t *b, int count) {
  for (int i = 0; i < count; i++)
    if (a[i] != b[i]) return false;
  return true;
}

static bool padding_equal(const PadDims *a, const PadDims *b) {
  return a->rank == b->rank && values_equal(a->lo, b->lo, a->rank) && values_equal(a->hi, b->hi, a->rank) &&
         values_equal(a->interior, b->interior, a->rank);
}

static bool window_equal(const Window *a, const Window *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++) {
    const WindowDim *x = &a->dims[i], *y = &b->dims[i];
    if (x->size != y->size || x->stride != y->stride || x->pad_lo != y->pad_lo || x->pad_hi != y->pad_hi ||
        x->lhs_dilate != y->lhs_dilate || x->rhs_dilate != y->rhs_dilate || x->reversal != y->reversal)
      return false;
  }
  return true;
}

static bool conv_equal(const ConvDims *a, const ConvDims *b) {
  int n = a->spatial_count;
  return n == b->spatial_count && a->input_batch == b->input_batch && a->input_feature == b->input_feature &&
         a->kernel_input_feature == b->kernel_input_feature &&
         a->kernel_output_feature == b->kernel_output_feature && a->output_batch == b->output_batch &&
         a->output_feature == b->output_feature && values_equal(a->input_spatial, b->input_spatial, n) &&
         values_equal(a->kernel_spatial, b->kernel_spatial, n) &&
         values_equal(a->output_spatial, b->output_spatial, n);
}

static bool slice_equal(const SliceDims *a, const SliceDims *b) {
  return intlist_equal(&a->starts, &b->starts) && intlist_equal(&a->limits, &b->limits) &&
         intlist_equal(&a->strides, &b->strides);
}

static bool dot_equal(const DotDims *a, const DotDims *b) {
  return intlist_equal(&a->lhs_batch, &b->lhs_batch) && intlist_equal(&a->rhs_batch, &b->rhs_batch) &&
         intlist_equal(&a->lhs_contracting, &b->lhs_contracting) &&
         intlist_equal(&a->rhs_contracting, &b->rhs_contracting) && intlist_equal(&a->lhs_ragged, &b->lhs_ragged) &&
         intlist_equal(&a->rhs_group, &b->rhs_group) && a->algorithm == b->algorithm;
}

static bool scalars_equal(const ScalarAttrs *a, const ScalarAttrs *b) {
  return a->k == b->k && a->num_carries == b->num_carries && a->delta == b->delta &&
         a->distribution == b->distribution && a->largest == b->largest && a->is_reverse == b->is_reverse;
}

static bool gather_equal(const GatherDims *a, const GatherDims *b) {
  return intlist_equal(&a->offset_dims, &b->offset_dims) &&
         intlist_equal(&a->collapsed_slice_dims, &b->collapsed_slice_dims) &&
         intlist_equal(&a->start_index_map, &b->start_index_map) &&
         intlist_equal(&a->operand_batching_dims, &b->operand_batching_dims) &&
         intlist_equal(&a->start_indices_batching_dims, &b->start_indices_batching_dims) &&
         a->index_vector_dim == b->index_vector_dim && intlist_equal(&a->slice_sizes, &b->slice_sizes) &&
         a->indices_are_sorted == b->indices_are_sorted;
}

static bool scatter_equal(const ScatterDims *a, const ScatterDims *b) {
  return intlist_equal(&a->update_window_dims, &b->update_window_dims) &&
         intlist_equal(&a->inserted_window_dims, &b->inserted_window_dims) &&
         intlist_equal(&a->scatter_dims_to_operand_dims, &b->scatter_dims_to_operand_dims) &&
         intlist_equal(&a->input_batching_dims, &b->input_batching_dims) &&
         intlist_equal(&a->scatter_indices_batching_dims, &b->scatter_indices_batching_dims) &&
         a->index_vector_dim == b->index_vector_dim && a->indices_are_sorted == b->indices_are_sorted &&
         a->unique_indices == b->unique_indices;
}

/* Literals compare bit for bit and by shape, layout included (a bitcast of a
 * constant reads its layout). */
static bool literal_identical(const Literal *a, const Literal *b) {
  if (!a || !b) return a == b;
  if (a->shape.type != TYPE_TUPLE &&
      memcmp(a->shape.minor_to_major, b->shape.minor_to_major, sizeof a->shape.minor_to_major[0] * (size_t)a->shape.rank))
    return false;
  return literal_equal(a, b);
}

static bool text_equal(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

/* A new field in Attrs must be compared here, hashed below and copied by
 * attrs_copy_into_arena (edit.c): otherwise CSE would merge two instructions
 * that differ only in it. The size check makes a new field stop the build
 * until these three are revisited. */
static_assert(sizeof(Attrs) == 256, "Attrs changed: update attrs_equal, attrs_hash and attrs_copy_into_arena");

bool attrs_equal(const Attrs *a, const Attrs *b) {
  return a->parameter_number == b->parameter_number && literal_identical(a->literal, b->literal) &&
         intlist_equal(&a->dimensions, &b->dimensions) && a->iota_dimension == b->iota_dimension &&
         a->tuple_index == b->tuple_index && intlist_equal(&a->dynamic_slice_sizes, &b->dynamic_slice_sizes) &&
         padding_equal(attrs_padding(a), attrs_padding(b)) && window_equal(attrs_window(a), attrs_window(b)) &&
         conv_equal(attrs_conv(a), attrs_conv(b)) && slice_equal(attrs_slice(a), attrs_slice(b)) &&
         dot_equal(attrs_dot(a), attrs_dot(b)) && gather_equal(attrs_gather(a), attrs_gather(b)) &&
         scatter_equal(attrs_scatter(a), attrs_scatter(b)) &&
         scalars_equal(attrs_scalars(a), attrs_scalars(b)) && attrs_fft(a)->type == attrs_fft(b)->type && intlist_equal(&attrs_fft(a)->length, &attrs_fft(b)->length) &&
         a->feature_group_count == b->feature_group_count && a->batch_group_count == b->batch_group_count &&
         a->direction == b->direction && a->compare_type == b->compare_type && a->fusion_kind == b->fusion_kind &&
         a->rng_algorithm == b->rng_algorithm && a->transpose_a == b->transpose_a && a->lower == b->lower &&
         a->left_side == b->left_side && a->unit_diagonal == b->unit_diagonal && a->is_stable == b->is_stable &&
         text_equal(a->custom_call_target, b->custom_call_target) &&
         text_equal(a->backend_config, b->backend_config) && a->exponent_bits == b->exponent_bits &&
         a->mantissa_bits == b->mantissa_bits && memcmp(&a->epsilon, &b->epsilon, sizeof a->epsilon) == 0 &&
         a->feature_index == b->feature_index && a->channel_id == b->channel_id &&
         attrs_replica_groups(a)->use_global_device_ids == attrs_replica_groups(b)->use_global_device_ids &&
         intlist_equal(&a->source_target_pairs, &b->source_target_pairs) &&
         intlist_equal(&attrs_replica_groups(a)->ids, &attrs_replica_groups(b)->ids) &&
         attrs_replica_groups(a)->group_size == attrs_replica_groups(b)->group_size &&
         intlist_equal(&attrs_replica_groups(a)->sizes, &attrs_replica_groups(b)->sizes);
}

/* ------------------------------------------------------------- hashing */

static uint64_t hash_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

static uint64_t hash_values(uint64_t h, const int64_t *values, int count) {
  h = hash_mix(h, (uint64_t)count);
  for (int i = 0; i < count; i++) h = hash_mix(h, (uint64_t)values[i]);
  return h;
}

static uint64_t hash_list(uint64_t h, const IntList *l) { return hash_values(h, l->values, l->count); }

/* A literal's hash reads at most its first 256 bytes: equal literals still
 * hash equal, and a huge constant does not make hashing slow. */
static uint64_t hash_literal(uint64_t h, const Literal *lit) {
  if (!lit) return hash_mix(h, 0);
  h = hash_mix(h, (uint64_t)lit->shape.type + 1);
  if (lit->shape.type == TYPE_TUPLE) return hash_mix(h, (uint64_t)lit->shape.tuple_count);
  int64_t bytes = shape_byte_size(&lit->shape);
  const unsigned char *data = lit->data;
  for (int64_t i = 0; i < bytes && i < 256; i++) h = hash_mix(h, data[i]);
  return hash_mix(h, (uint64_t)bytes);
}

static uint64_t hash_groups(uint64_t h, const Attrs *a) {
  const PadDims *p = attrs_padding(a);
  h = hash_values(hash_values(hash_values(h, p->lo, p->rank), p->hi, p->rank), p->interior, p->rank);
  const Window *w = attrs_window(a);
  h = hash_mix(h, (uint64_t)w->rank);
  for (int i = 0; i < w->rank; i++) {
    const WindowDim *d = &w->dims[i];
    int64_t v[] = {d->size, d->stride, d->pad_lo, d->pad_hi, d->lhs_dilate, d->rhs_dilate, d->reversal};
    h = hash_values(h, v, 7);
  }
  const ConvDims *c = attrs_conv(a);
  int64_t cv[] = {c->input_batch, c->input_feature, c->kernel_input_feature, c->kernel_output_feature,
                  c->output_batch, c->output_feature};
  h = hash_values(h, cv, 6);
  h = hash_values(hash_values(hash_values(h, c->input_spatial, c->spatial_count), c->kernel_spatial,
                              c->spatial_count),
                  c->output_spatial, c->spatial_count);
  const SliceDims *s = attrs_slice(a);
  h = hash_list(hash_list(hash_list(h, &s->starts), &s->limits), &s->strides);
  const DotDims *d = attrs_dot(a);
  h = hash_list(hash_list(hash_list(hash_list(h, &d->lhs_batch), &d->rhs_batch), &d->lhs_contracting),
                &d->rhs_contracting);
  h = hash_mix(hash_list(hash_list(h, &d->lhs_ragged), &d->rhs_group), (uint64_t)d->algorithm);
  const ScalarAttrs *q = attrs_scalars(a);
  int64_t qv[] = {q->k, q->num_carries, q->delta, q->distribution, q->largest, q->is_reverse};
  h = hash_values(h, qv, 6);
  const GatherDims *g = attrs_gather(a);
  h = hash_list(hash_list(hash_list(h, &g->offset_dims), &g->collapsed_slice_dims), &g->start_index_map);
  h = hash_list(hash_list(hash_list(h, &g->operand_batching_dims), &g->start_indices_batching_dims),
                &g->slice_sizes);
  h = hash_mix(hash_mix(h, (uint64_t)g->index_vector_dim), g->indices_are_sorted);
  const ScatterDims *t = attrs_scatter(a);
  h = hash_list(hash_list(hash_list(h, &t->update_window_dims), &t->inserted_window_dims),
                &t->scatter_dims_to_operand_dims);
  h = hash_list(hash_list(h, &t->input_batching_dims), &t->scatter_indices_batching_dims);
  h = hash_list(hash_mix(h, (uint64_t)attrs_fft(a)->type), &attrs_fft(a)->length);
  return hash_mix(hash_mix(hash_mix(h, (uint64_t)t->index_vector_dim), t->indices_are_sorted), t->unique_indices);
}

uint64_t attrs_hash(const Attrs *a) {
  uint64_t h = hash_mix(0, (uint64_t)a->parameter_number);
  h = hash_literal(h, a->literal);
  h = hash_list(hash_list(h, &a->dimensions), &a->dynamic_slice_sizes);
  int64_t scalars[] = {a->iota_dimension, a->tuple_index, a->feature_group_count, a->batch_group_count,
                       a->direction, a->compare_type, a->fusion_kind, a->rng_algorithm, a->transpose_a,
                       a->lower, a->left_side, a->unit_diagonal, a->is_stable, a->exponent_bits,
                       a->mantissa_bits, a->feature_index, a->channel_id};
  h = hash_values(h, scalars, (int)(sizeof scalars / sizeof scalars[0]));
  uint64_t epsilon_bits;
  memcpy(&epsilon_bits, &a->epsilon, sizeof epsilon_bits);
  h = hash_mix(h, epsilon_bits);
  for (const char *s = a->custom_call_target; s && *s; s++) h = hash_mix(h, (unsigned char)*s);
  for (const char *s = a->backend_config; s && *s; s++) h = hash_mix(h, (unsigned char)*s);
  h = hash_list(hash_list(h, &a->source_target_pairs), &attrs_replica_groups(a)->ids);
  return hash_groups(h, a);
}

/* ------------------------------------------------------- instructions */

/* Same element type, dimensions, layout and packing, through tuples. */
bool shape_identical(const Shape *a, const Shape *b) {
  if (a->type != b->type) return false;
  if (a->type == TYPE_TUPLE) {
    if (a->tuple_count != b->tuple_count) return false;
    for (int i = 0; i < a->tuple_count; i++)
      if (!shape_identical(&a->tuple_shapes[i], &b->tuple_shapes[i])) return false;
    return true;
  }
  return a->rank == b->rank && a->element_size_bits == b->element_size_bits &&
         values_equal(a->dims, b->dims, a->rank) &&
         memcmp(a->minor_to_major, b->minor_to_major, sizeof a->minor_to_major[0] * (size_t)a->rank) == 0;
}

bool instruction_identical(const Instruction *a, const Instruction *b) {
  if (a->opcode != b->opcode || a->operand_count != b->operand_count || a->called_count != b->called_count)
    return false;
  for (int k = 0; k < a->operand_count; k++)
    if (a->operands[k] != b->operands[k]) return false;
  for (int k = 0; k < a->called_count; k++)
    if (a->called[k] != b->called[k]) return false;
  return shape_identical(&a->shape, &b->shape) && attrs_equal(&a->attrs, &b->attrs);
}
