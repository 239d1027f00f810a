/* Shape rules for the ops with structured attributes: reductions and
 * windows, dot and convolution, the linear-algebra and
 * batch-norm ops, rng-bit-generator, sort, and the collectives. The shared
 * checks and the dispatch table are in shape_inference.c. */
#include <string.h>

#include "shape_inference.h"

/* ---- reductions and windows ---- */

/* Splits variadic operands into n inputs followed by n scalar inits;
 * inputs share dims, each init types its accumulator. */
static bool split_inputs_and_inits(const Infer *in, int *n_out, ElementType *acc, ElementType *elem) {
  int count = in->inst->operand_count;
  if (count < 2 || count % 2 != 0) return infer_fail(in, "needs N inputs followed by N init values");
  int n = count / 2;
  if (n > AXLE_MAX_RANK) return infer_fail(in, "too many inputs (%d)", n);
  for (int i = 0; i < n; i++) {
    if (!infer_expect_array(in, i) || !infer_expect_same_dims(in, 0, i)) return false;
    if (!infer_expect_scalar(in, n + i, "an init value")) return false;
    acc[i] = infer_operand_shape(in, n + i)->type;
    elem[i] = infer_operand_shape(in, i)->type;
  }
  *n_out = n;
  return true;
}

/* One result per input, with the accumulator types; a tuple when n > 1. */
static bool set_reduce_results(Infer *in, int n, const ElementType *acc, int rank, const int64_t *dims) {
  if (rank > AXLE_MAX_RANK) return infer_fail(in, "result rank exceeds %d", AXLE_MAX_RANK);
  Shape results[AXLE_MAX_RANK];
  for (int i = 0; i < n; i++) results[i] = shape_array(acc[i], rank, dims);
  if (n == 1) return infer_set_same_as(in, &results[0]);
  return infer_set_tuple(in, n, results);
}

bool infer_reduce(Infer *in) {
  ElementType acc[AXLE_MAX_RANK], elem[AXLE_MAX_RANK];
  int n;
  if (!infer_expect_called_count(in, 1) || !split_inputs_and_inits(in, &n, acc, elem)) return false;
  const Shape *x = infer_operand_shape(in, 0);
  const IntList *d = &in->inst->attrs.dimensions;
  if (!infer_check_dim_list(in, "dimensions", d, x->rank, false)) return false;
  if (!infer_check_reducer(in, in->inst->called[0], acc, elem, n)) return false;
  int64_t dims[AXLE_MAX_RANK];
  int rank = 0;
  for (int i = 0; i < x->rank; i++)
    if (!infer_list_contains(d, i)) dims[rank++] = x->dims[i];
  return set_reduce_results(in, n, acc, rank, dims);
}

/* Window output size along one dimension (XLA's window_util::StridedBound
 * over the dilated, padded base). */
static bool window_output_dim(const Infer *in, int i, int64_t base, const WindowDim *w, int64_t *out) {
  if (w->size < 1 || w->stride < 1 || w->lhs_dilate < 1 || w->rhs_dilate < 1)
    return infer_fail(in, "window dimension %d needs size, stride and dilations >= 1", i);
  int64_t dilated, extent;
  if (!infer_dilated_bound(in, "base dimension", base, w->lhs_dilate, &dilated) ||
      !infer_dilated_bound(in, "window size", w->size, w->rhs_dilate, &extent) ||
      !infer_expect_extent(in, "window padding", w->pad_lo) ||
      !infer_expect_extent(in, "window padding", w->pad_hi))
    return false;
  int64_t padded = dilated + w->pad_lo + w->pad_hi;
  if (padded < 0) return infer_fail(in, "window padding makes dimension %d negative", i);
  *out = padded < extent ? 0 : (padded - extent) / w->stride + 1;
  return true;
}

static bool window_output_dims(const Infer *in, const Shape *x, int64_t *dims) {
  const Window *w = attrs_window(&in->inst->attrs);
  if (w->rank != x->rank)
    return infer_fail(in, "window has %d dimensions, operand rank is %d", w->rank, x->rank);
  for (int i = 0; i < x->rank; i++) {
    if (w->dims[i].reversal) return infer_fail(in, "window reversal applies only to convolution");
    if (!window_output_dim(in, i, x->dims[i], &w->dims[i], &dims[i])) return false;
  }
  return true;
}

bool infer_reduce_window(Infer *in) {
  ElementType acc[AXLE_MAX_RANK], elem[AXLE_MAX_RANK];
  int n;
  if (!infer_expect_called_count(in, 1) || !split_inputs_and_inits(in, &n, acc, elem)) return false;
  const Shape *x = infer_operand_shape(in, 0);
  int64_t dims[AXLE_MAX_RANK];
  if (!window_output_dims(in, x, dims)) return false;
  if (!infer_check_reducer(in, in->inst->called[0], acc, elem, n)) return false;
  return set_reduce_results(in, n, acc, x->rank, dims);
}

/* select-and-scatter(operand, source, init): source has the window output
 * shape; select is (T, T) -> pred, scatter is (T, T) -> T. */
bool infer_select_and_scatter(Infer *in) {
  if (!infer_expect_operand_count(in, 3) || !infer_expect_called_count(in, 2)) return false;
  if (!infer_expect_array(in, 0) || !infer_expect_array(in, 1) ||
      !infer_expect_scalar(in, 2, "the init value"))
    return false;
  if (!infer_expect_same_type(in, 0, 1) || !infer_expect_same_type(in, 0, 2)) return false;
  const Shape *x = infer_operand_shape(in, 0), *src = infer_operand_shape(in, 1);
  int64_t dims[AXLE_MAX_RANK];
  char buf[128];
  if (!window_output_dims(in, x, dims)) return false;
  Shape want = shape_array(x->type, x->rank, dims);
  if (!shape_same_dims(&want, src))
    return infer_fail(in, "source must have the window output shape %s", infer_shape_text(&want, buf));
  ElementType t = x->type, pred = TYPE_PRED;
  const Computation *select = in->inst->called[0];
  if (select->parameter_count != 2 || !infer_is_scalar_of(infer_param_shape(select, 0), t) ||
      !infer_is_scalar_of(infer_param_shape(select, 1), t))
    return infer_fail(in, "select '%s' must take (%s[], %s[])", select->name, type_name(t), type_name(t));
  if (!infer_check_scalar_results(in, select, &pred, 1)) return false;
  if (!infer_check_reducer(in, in->inst->called[1], &t, &t, 1)) return false;
  return infer_set_same_as(in, x);
}

/* ---- linear algebra ---- */

/* A dot or convolution of complex operands has a complex result and one of
 * real operands a real result: a declared type may widen, never cross. */
static bool check_complex_result(const Infer *in, ElementType operand) {
  ElementType declared = in->inst->shape.type;
  if (!shape_is_tuple(&in->inst->shape) && type_is_complex(declared) != type_is_complex(operand))
    return infer_fail(in, "operands of type %s cannot give a %s result", type_name(operand),
                      type_name(declared));
  return true;
}

/* Result dims: batch dims (lhs order), lhs free dims, rhs free dims. The
 * element type is the declared one (preferred_element_type). */
bool infer_dot(Infer *in) {
  if (!infer_expect_operand_count(in, 2) || !infer_expect_array(in, 0) || !infer_expect_array(in, 1))
    return false;
  const Shape *l = infer_operand_shape(in, 0), *r = infer_operand_shape(in, 1);
  const DotDims *d = attrs_dot(&in->inst->attrs);
  if (l->type != r->type && !(type_is_float(l->type) && type_is_float(r->type)))
    return infer_fail(in, "operand types %s and %s do not mix", type_name(l->type), type_name(r->type));
  if (!check_complex_result(in, l->type)) return false;
  if ((d->algorithm == DOT_ALG_TF32_TF32_F32 || d->algorithm == DOT_ALG_TF32_TF32_F32_X3) &&
      (l->type != TYPE_F32 || r->type != TYPE_F32))
    return infer_fail(in, "algorithm=%s needs f32 operands, not %s and %s", dot_algorithm_names[d->algorithm],
                      type_name(l->type), type_name(r->type));
  if (d->lhs_batch.count != d->rhs_batch.count || d->lhs_contracting.count != d->rhs_contracting.count)
    return infer_fail(in, "lhs and rhs need as many batch and contracting dimensions");
  if (!infer_check_dim_list(in, "lhs_batch_dims", &d->lhs_batch, l->rank, false) ||
      !infer_check_dim_list(in, "rhs_batch_dims", &d->rhs_batch, r->rank, false) ||
      !infer_check_dim_list(in, "lhs_contracting_dims", &d->lhs_contracting, l->rank, false) ||
      !infer_check_dim_list(in, "rhs_contracting_dims", &d->rhs_contracting, r->rank, false))
    return false;
  for (int i = 0; i < d->lhs_batch.count; i++) {
    if (l->dims[d->lhs_batch.values[i]] != r->dims[d->rhs_batch.values[i]])
      return infer_fail(in, "batch dimension %d differs in size between lhs and rhs", i);
    if (infer_list_contains(&d->lhs_contracting, d->lhs_batch.values[i]) ||
        infer_list_contains(&d->rhs_contracting, d->rhs_batch.values[i]))
      return infer_fail(in, "a dimension is both batch and contracting");
  }
  for (int i = 0; i < d->lhs_contracting.count; i++)
    if (l->dims[d->lhs_contracting.values[i]] != r->dims[d->rhs_contracting.values[i]])
      return infer_fail(in, "contracting dimension %d has size %lld on lhs and %lld on rhs", i,
                        (long long)l->dims[d->lhs_contracting.values[i]],
                        (long long)r->dims[d->rhs_contracting.values[i]]);
  int64_t dims[2 * AXLE_MAX_RANK];
  int rank = 0;
  for (int i = 0; i < d->lhs_batch.count; i++) dims[rank++] = l->dims[d->lhs_batch.values[i]];
  for (int i = 0; i < l->rank; i++)
    if (!infer_list_contains(&d->lhs_batch, i) && !infer_list_contains(&d->lhs_contracting, i))
      dims[rank++] = l->dims[i];
  for (int i = 0; i < r->rank; i++)
    if (!infer_list_contains(&d->rhs_batch, i) && !infer_list_contains(&d->rhs_contracting, i))
      dims[rank++] = r->dims[i];
  ElementType t = shape_is_tuple(&in->inst->shape) ? l->type : in->inst->shape.type;
  return infer_set_array(in, t, rank, dims);
}

static bool check_conv_labels(const Infer *in, int rank) {
  const ConvDims *c = attrs_conv(&in->inst->attrs);
  int64_t groups[3][AXLE_MAX_RANK + 2];
  const char *names[3] = {"input", "kernel", "output"};
  int n = c->spatial_count;
  groups[0][0] = c->input_batch, groups[0][1] = c->input_feature;
  groups[1][0] = c->kernel_input_feature, groups[1][1] = c->kernel_output_feature;
  groups[2][0] = c->output_batch, groups[2][1] = c->output_feature;
  for (int i = 0; i < n; i++) {
    groups[0][2 + i] = c->input_spatial[i];
    groups[1][2 + i] = c->kernel_spatial[i];
    groups[2][2 + i] = c->output_spatial[i];
  }
  for (int g = 0; g < 3; g++) {
    IntList list = {rank, groups[g]};
    char what[32];
    snprintf(what, sizeof what, "dim_labels (%s)", names[g]);
    if (!infer_check_dim_list(in, what, &list, rank, false)) return false;
  }
  return true;
}

/* Checks the group counts against the feature and batch sizes. */
static bool check_conv_groups(const Infer *in, const Shape *x, const Shape *k, int64_t fgc, int64_t bgc) {
  const ConvDims *c = attrs_conv(&in->inst->attrs);
  int64_t in_features = x->dims[c->input_feature], out_features = k->dims[c->kernel_output_feature];
  if (fgc < 1 || bgc < 1) return infer_fail(in, "group counts must be positive");
  if (fgc > 1 && bgc > 1)
    return infer_fail(in, "feature_group_count and batch_group_count cannot both exceed 1");
  if (in_features % fgc != 0 || out_features % fgc != 0)
    return infer_fail(in, "feature_group_count %lld must divide the input and output features",
                      (long long)fgc);
  if (in_features / fgc != k->dims[c->kernel_input_feature])
    return infer_fail(in,
                      "input features %lld / feature_group_count %lld must equal kernel input features %lld",
                      (long long)in_features, (long long)fgc, (long long)k->dims[c->kernel_input_feature]);
  if (x->dims[c->input_batch] % bgc != 0 || out_features % bgc != 0)
    return infer_fail(in, "batch_group_count %lld must divide the input batch and output features",
                      (long long)bgc);
  return true;
}

bool infer_convolution(Infer *in) {
  if (!infer_expect_operand_count(in, 2) || !infer_expect_array(in, 0) || !infer_expect_array(in, 1))
    return false;
  const Shape *x = infer_operand_shape(in, 0), *k = infer_operand_shape(in, 1);
  const ConvDims *c = attrs_conv(&in->inst->attrs);
  const Window *w = attrs_window(&in->inst->attrs);
  int n = c->spatial_count, rank = n + 2;
  if (n < 0 || rank > AXLE_MAX_RANK || x->rank != rank || k->rank != rank)
    return infer_fail(in, "dim_labels describe rank %d but the operands have ranks %d and %d", rank, x->rank,
                      k->rank);
  if (!check_conv_labels(in, rank)) return false;
  if (w->rank != n) return infer_fail(in, "window has %d dimensions, expected %d spatial", w->rank, n);
  int64_t fgc = in->inst->attrs.feature_group_count ? in->inst->attrs.feature_group_count : 1;
  int64_t bgc = in->inst->attrs.batch_group_count ? in->inst->attrs.batch_group_count : 1;
  if (!check_conv_groups(in, x, k, fgc, bgc)) return false;
  int64_t dims[AXLE_MAX_RANK];
  dims[c->output_batch] = x->dims[c->input_batch] / bgc;
  dims[c->output_feature] = k->dims[c->kernel_output_feature];
  for (int i = 0; i < n; i++) {
    if (w->dims[i].size != k->dims[c->kernel_spatial[i]])
      return infer_fail(in, "window size %lld differs from kernel spatial dimension %d (%lld)",
                        (long long)w->dims[i].size, i, (long long)k->dims[c->kernel_spatial[i]]);
    if (!window_output_dim(in, i, x->dims[c->input_spatial[i]], &w->dims[i], &dims[c->output_spatial[i]]))
      return false;
  }
  if (x->type != k->type && !(type_is_float(x->type) && type_is_float(k->type)))
    return infer_fail(in, "operand types %s and %s do not mix", type_name(x->type), type_name(k->type));
  if (!check_complex_result(in, x->type)) return false;
  ElementType t = shape_is_tuple(&in->inst->shape) ? x->type : in->inst->shape.type;
  return infer_set_array(in, t, rank, dims);
}

/* A batch of square matrices in the two minor dimensions. */
static bool expect_square_matrices(const Infer *in, int i) {
  const Shape *a = infer_operand_shape(in, i);
  if (!infer_expect_array(in, i)) return false;
  if (!type_is_float(a->type)) return infer_fail(in, "needs a floating-point type");
  if (a->rank < 2 || a->dims[a->rank - 1] != a->dims[a->rank - 2])
    return infer_fail(in, "operand %d must be square matrices in its two minor dimensions", i);
  return true;
}

/* Complex operands are factored as Hermitian (a = L L^H), as XLA does. */
bool infer_cholesky(Infer *in) {
  if (!infer_expect_array(in, 0)) return false;
  if (type_is_complex(infer_operand_shape(in, 0)->type)) {
    const Shape *a = infer_operand_shape(in, 0);
    if (a->rank < 2 || a->dims[a->rank - 1] != a->dims[a->rank - 2])
      return infer_fail(in, "operand 0 must be square matrices in its two minor dimensions");
    return infer_set_same_as(in, a);
  }
  if (!expect_square_matrices(in, 0)) return false;
  return infer_set_same_as(in, infer_operand_shape(in, 0));
}

bool infer_triangular_solve(Infer *in) {
  if (!expect_square_matrices(in, 0) || !infer_expect_array(in, 1) || !infer_expect_same_type(in, 0, 1))
    return false;
  const Shape *a = infer_operand_shape(in, 0), *b = infer_operand_shape(in, 1);
  if (b->rank != a->rank) return infer_fail(in, "a and b must have the same rank");
  for (int i = 0; i < a->rank - 2; i++)
    if (a->dims[i] != b->dims[i]) return infer_fail(in, "batch dimension %d differs between a and b", i);
  int64_t m = a->dims[a->rank - 1];
  int64_t shared = in->inst->attrs.left_side ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
  if (shared != m)
    return infer_fail(in, "b dimension %lld must match a's size %lld (left_side=%s)", (long long)shared,
                      (long long)m, in->inst->attrs.left_side ? "true" : "false");
  if ((unsigned)in->inst->attrs.transpose_a > TRANSPOSE_A_ADJOINT) return infer_fail(in, "bad transpose_a");
  return infer_set_same_as(in, b);
}

/* operand and the per-feature vectors: rank 1, size of the feature dim. */
static bool check_batch_norm(const Infer *in, int first_vector, int vector_count, int grad_index) {
  if (!infer_expect_array(in, 0)) return false;
  const Shape *x = infer_operand_shape(in, 0);
  int64_t f = in->inst->attrs.feature_index;
  if (!type_is_float(x->type)) return infer_fail(in, "needs a floating-point type");
  if (f < 0 || f >= x->rank) return infer_fail(in, "feature_index %lld is out of range", (long long)f);
  for (int i = first_vector; i < first_vector + vector_count; i++) {
    const Shape *v = infer_operand_shape(in, i);
    if (!infer_expect_array(in, i) || !infer_expect_same_type(in, 0, i)) return false;
    if (v->rank != 1 || v->dims[0] != x->dims[f])
      return infer_fail(in, "operand %d must be %s[%lld]", i, type_name(x->type), (long long)x->dims[f]);
  }
  if (grad_index >= 0 &&
      (!infer_expect_same_type(in, 0, grad_index) || !infer_expect_same_dims(in, 0, grad_index)))
    return false;
  return true;
}

/* Training and grad return (operand-shaped, feature vector, feature vector). */
static bool set_batch_norm_triple(Infer *in) {
  const Shape *x = infer_operand_shape(in, 0);
  Shape parts[3];
  parts[0] = *x;
  shape_set_default_layout(&parts[0]);
  parts[1] = parts[2] = shape_array(x->type, 1, &x->dims[in->inst->attrs.feature_index]);
  return infer_set_tuple(in, 3, parts);
}

bool infer_batch_norm(Infer *in) {
  switch (in->inst->opcode) {
  case OP_BATCH_NORM_TRAINING: /* operand, scale, offset */
    return check_batch_norm(in, 1, 2, -1) && set_batch_norm_triple(in);
  case OP_BATCH_NORM_INFERENCE: /* operand, scale, offset, mean, variance */
    return check_batch_norm(in, 1, 4, -1) && infer_set_same_as(in, infer_operand_shape(in, 0));
  default: /* grad: operand, scale, mean, variance, grad_output */
    return check_batch_norm(in, 1, 3, 4) && set_batch_norm_triple(in);
  }
}

/* rng-bit-generator(state) -> (new state, bits): the bits' shape is declared. */
bool infer_rng_bit_generator(Infer *in) {
  const Shape *state = infer_operand_shape(in, 0), *decl = &in->inst->shape;
  char buf[128];
  if (!infer_expect_array(in, 0)) return false;
  if (state->rank != 1 || !type_is_integer(state->type))
    return infer_fail(in, "state must be a rank-1 integer array, got %s", infer_shape_text(state, buf));
  if (!shape_is_tuple(decl) || decl->tuple_count != 2 || shape_is_tuple(&decl->tuple_shapes[1]) ||
      !type_is_integer(decl->tuple_shapes[1].type))
    return infer_fail(in, "result must be (state, integer array)");
  Shape parts[2] = {*state, decl->tuple_shapes[1]};
  shape_set_default_layout(&parts[0]);
  shape_set_default_layout(&parts[1]);
  return infer_set_tuple(in, 2, parts);
}

/* sort: N operands of the same dims; the comparator takes (a_i, b_i) pairs
 * for every operand and returns pred[]. */
bool infer_sort(Infer *in) {
  int n = in->inst->operand_count;
  if (n < 1) return infer_fail(in, "needs at least one operand");
  if (!infer_expect_called_count(in, 1)) return false;
  for (int i = 0; i < n; i++)
    if (!infer_expect_array(in, i) || !infer_expect_same_dims(in, 0, i)) return false;
  const IntList *d = &in->inst->attrs.dimensions;
  if (d->count != 1) return infer_fail(in, "dimensions must hold one dimension");
  if (!infer_check_dim_list(in, "dimensions", d, infer_operand_shape(in, 0)->rank, false)) return false;
  const Computation *cmp = in->inst->called[0];
  if (cmp->parameter_count != 2 * n)
    return infer_fail(in, "comparator '%s' takes %d parameters, expected %d", cmp->name, cmp->parameter_count,
                      2 * n);
  for (int i = 0; i < 2 * n; i++) {
    ElementType t = infer_operand_shape(in, i / 2)->type;
    if (!infer_is_scalar_of(infer_param_shape(cmp, i), t))
      return infer_fail(in, "comparator '%s' parameter %d must be %s[]", cmp->name, i, type_name(t));
  }
  ElementType pred = TYPE_PRED;
  if (!infer_check_scalar_results(in, cmp, &pred, 1)) return false;
  if (n == 1) return infer_set_same_as(in, infer_operand_shape(in, 0));
  Shape *parts = arena_alloc(in->arena, sizeof(Shape) * (size_t)n);
  for (int i = 0; i < n; i++) parts[i] = *infer_operand_shape(in, i);
  return infer_set_tuple(in, n, parts);
}

/* ---- collectives ----
 *
 * Over a group of G devices all-gather concatenates G pieces along its
 * dimension (the result is G times the operand there), reduce-scatter keeps
 * one of G shards (1/G), all-to-all keeps the shape (its split dimension
 * must divide by G); the others keep their operands' shapes. G is the size
 * of replica_groups; with no groups XLA takes every replica of the run,
 * which the module text does not state, so G is read off the declared
 * shape (result / operand along the dimension). Running checks the device
 * count (eval_check_supported). */

/* G for an all-gather or reduce-scatter along dim: the groups' size, or the
 * declared result's ratio to the operand when there are no groups. */
static bool collective_group_size(const Infer *in, const Shape *x, int64_t dim, int64_t *g) {
  const Attrs *a = &in->inst->attrs;
  *g = attrs_replica_groups(a)->group_size;
  if (*g > 0) return true;
  if (attrs_replica_groups(a)->ids.count > 0)
    return infer_fail(in, "replica groups of different sizes give no one result shape");
  const Shape *decl = &in->inst->shape;
  if (in->inst->opcode == OP_ALL_GATHER_START && shape_is_tuple(decl) && decl->tuple_count == 2 && decl->tuple_shapes)
    decl = &decl->tuple_shapes[1];
  *g = 1;
  if (shape_is_tuple(decl) || decl->rank != x->rank || dim >= x->rank) return true;
  int64_t small = in->inst->opcode == OP_REDUCE_SCATTER ? decl->dims[dim] : x->dims[dim];
  int64_t large = in->inst->opcode == OP_REDUCE_SCATTER ? x->dims[dim] : decl->dims[dim];
  if (small > 0 && large % small == 0) *g = large / small;
  return true;
}

/* Resizes each part along dim for a group of g: all-gather multiplies,
 * reduce-scatter divides (the operand must split evenly), all-to-all keeps
 * the size (it must split evenly). */
static bool resize_for_group(const Infer *in, Shape *parts, int n, int64_t dim, int64_t g) {
  Opcode op = in->inst->opcode;
  for (int i = 0; i < n; i++) {
    int64_t size = parts[i].dims[dim];
    if (op == OP_ALL_GATHER || op == OP_ALL_GATHER_START) {
      if (size > ((int64_t)1 << 40) / g) return infer_fail(in, "gathered dimension %lld is too large", (long long)dim);
      parts[i].dims[dim] = size * g;
    } else if (size % g != 0) {
      return infer_fail(in, "dimension %lld (size %lld) does not split into %lld parts, one per device of the group",
                        (long long)dim, (long long)size, (long long)g);
    } else if (op == OP_REDUCE_SCATTER) {
      parts[i].dims[dim] = size / g;
    }
  }
  return true;
}

bool infer_collective(Infer *in) {
  int n = in->inst->operand_count;
  if (n < 1) return infer_fail(in, "needs at least one operand");
  if (n > AXLE_MAX_RANK) return infer_fail(in, "too many operands (%d)", n);
  Shape parts[AXLE_MAX_RANK];
  ElementType types[AXLE_MAX_RANK];
  for (int i = 0; i < n; i++) {
    if (!infer_expect_array(in, i)) return false;
    parts[i] = *infer_operand_shape(in, i);
    shape_set_default_layout(&parts[i]);
    types[i] = parts[i].type;
  }
  Opcode op = in->inst->opcode;
  /* all-to-all's split dimension is optional (the tuple form has none). */
  bool split = op == OP_ALL_TO_ALL && in->inst->attrs.dimensions.count > 0;
  if (op == OP_ALL_GATHER || op == OP_REDUCE_SCATTER || op == OP_ALL_GATHER_START || split) {
    const IntList *d = &in->inst->attrs.dimensions;
    if (d->count != 1) return infer_fail(in, "dimensions must hold one dimension");
    if (!infer_check_dim_list(in, "dimensions", d, parts[0].rank, false)) return false;
    int64_t g;
    if (!collective_group_size(in, &parts[0], d->values[0], &g) || !resize_for_group(in, parts, n, d->values[0], g))
      return false;
  }
  if (op == OP_ALL_REDUCE || op == OP_REDUCE_SCATTER || op == OP_ALL_REDUCE_START ||
      op == OP_COLLECTIVE_REDUCE) {
    if (!infer_expect_called_count(in, 1)) return false;
    for (int i = 0; i < n; i++)
      if (!infer_check_reducer(in, in->inst->called[0], &types[i], &types[i], 1)) return false;
  }
  /* all-to-all without a split dimension is the tuple form: a tuple even
   * of one operand. */
  bool tuple_form = op == OP_ALL_TO_ALL && !split && shape_is_tuple(&in->inst->shape);
  return n == 1 && !tuple_form ? infer_set_same_as(in, &parts[0]) : infer_set_tuple(in, n, parts);
}

/* ---- complex numbers ---- */

/* complex(real, imag): two f32 (or f64) arrays of one shape make c64 (c128). */
bool infer_complex(Infer *in) {
  if (!infer_expect_operand_count(in, 2) || !infer_expect_array(in, 0) || !infer_expect_array(in, 1) ||
      !infer_expect_same_dims(in, 0, 1) || !infer_expect_same_type(in, 0, 1))
    return false;
  ElementType t = infer_operand_shape(in, 0)->type;
  if (t != TYPE_F32 && t != TYPE_F64) return infer_fail(in, "needs f32 or f64 parts, got %s", type_name(t));
  infer_set_same_as(in, infer_operand_shape(in, 0));
  in->out->type = type_complex_of(t);
  return true;
}

/* real and imag give a complex operand's parts; on a real float operand
 * real is the value itself and imag is zero, as in XLA. */
bool infer_real_imag(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  ElementType t = infer_operand_shape(in, 0)->type;
  if (!type_is_complex(t) && !type_is_float(t))
    return infer_fail(in, "needs a complex or floating-point type, got %s", type_name(t));
  infer_set_same_as(in, infer_operand_shape(in, 0));
  in->out->type = type_complex_component(t);
  return true;
}

/* fft over the last n = |fft_length| (1 to 3) dimensions:
 *   FFT, IFFT  c[..., L] -> c[..., L]
 *   RFFT       f[..., L] -> c[..., L/2+1 in the last]   (f32 -> c64, f64 -> c128)
 *   IRFFT      c[..., L/2+1 in the last] -> f[..., L]
 * where L is fft_length; every other transformed dimension must equal it. */
bool infer_fft(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  const Shape *x = infer_operand_shape(in, 0);
  const FftDims *f = attrs_fft(&in->inst->attrs);
  int n = f->length.count;
  if (n < 1 || n > 3) return infer_fail(in, "fft_length must hold 1 to 3 lengths, got %d", n);
  if (x->rank < n) return infer_fail(in, "operand rank %d is below the %d transformed dimensions", x->rank, n);
  bool real_input = f->type == FFT_TYPE_RFFT, real_output = f->type == FFT_TYPE_IRFFT;
  if ((unsigned)f->type > FFT_TYPE_IRFFT) return infer_fail(in, "bad fft_type");
  if (real_input ? (x->type != TYPE_F32 && x->type != TYPE_F64) : !type_is_complex(x->type))
    return infer_fail(in, "%s needs a %s operand, got %s", real_input ? "RFFT" : "this fft_type",
                      real_input ? "f32 or f64" : "complex", type_name(x->type));
  int64_t dims[AXLE_MAX_RANK];
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  int first = x->rank - n;
  for (int i = 0; i < n; i++) {
    int64_t length = f->length.values[i];
    if (length < 1) return infer_fail(in, "fft_length entry %lld must be positive", (long long)length);
    if (!infer_expect_extent(in, "an fft length", length)) return false;
    int64_t want = real_output && i == n - 1 ? length / 2 + 1 : length;
    if (x->dims[first + i] != want)
      return infer_fail(in, "operand dimension %d has size %lld, fft_length needs %lld", first + i,
                        (long long)x->dims[first + i], (long long)want);
    if (i == n - 1) dims[first + i] = real_input ? length / 2 + 1 : length;
  }
  ElementType t = real_input ? type_complex_of(x->type) : real_output ? type_complex_component(x->type) : x->type;
  return infer_set_array(in, t, x->rank, dims);
}
