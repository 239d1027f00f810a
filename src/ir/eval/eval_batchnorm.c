/* The evaluator's batch normalization: batch-norm-inference,
 * batch-norm-training and batch-norm-grad, by the formulas of the StableHLO
 * spec (which restate XLA's batchnorm_expander).
 *
 * Every op normalizes over all dimensions but feature_index: "feature c"
 * below means all elements whose index along feature_index is c, and
 * scale, offset, mean and variance hold one value per feature.
 *
 * Arithmetic is in double, each output rounded once to its element type.
 * epsilon is an f32 attribute in HLO, so it is rounded to f32 first: with
 * f64 operands XLA adds (double)(float)epsilon, and so do we. batch-norm-
 * training's variance is the biased one (divided by the element count, not
 * count - 1), computed from centered values; XLA's expander computes
 * E[x^2] - E[x]^2, equal in exact arithmetic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "eval_internal.h"

/* Where the features lie in the operand, and per-feature scratch sums. */
typedef struct FeatureLayout {
  int64_t count;        /* elements of the operand */
  int64_t features;     /* dims[feature_index] */
  int64_t stride;       /* row-major stride of feature_index */
  double per_feature;   /* elements per feature, as the divisor */
} FeatureLayout;

static int64_t feature_of(const FeatureLayout *f, int64_t i) {
  return (i / f->stride) % f->features;
}


static double *doubles_calloc(int64_t n) { return eval_scratch_calloc(n, sizeof(double)); }

static double epsilon_of(const Instruction *inst) {
  return (double)(float)inst->attrs.epsilon;
}

static bool is_array(const Literal *lit) { return lit && lit->shape.type != TYPE_TUPLE; }

/* Checks the operand, the per-feature vectors and the result shape; fills f.
 * vectors: the operands (after the first) that hold one value per feature;
 * same_as_operand: another operand that must match the first (grad_output). */
static bool check_batch_norm(const Instruction *inst, Literal *const *operands, int vectors,
                             const Literal *same_as_operand, FeatureLayout *f, Status *st) {
  const Literal *x = operands[0];
  int64_t fi = inst->attrs.feature_index;
  if (!is_array(x) || fi < 0 || fi >= x->shape.rank)
    return status_error(st, STATUS_RUNTIME_ERROR,
                        "%s: feature_index %lld is not a dimension of the operand", inst->name,
                        (long long)fi);
  int64_t strides[AXLE_MAX_RANK];
  shape_strides(&x->shape, strides);
  f->count = shape_element_count(&x->shape);
  f->features = x->shape.dims[fi];
  f->stride = strides[fi];
  f->per_feature = f->features ? (double)(f->count / f->features) : 0;
  for (int k = 1; k <= vectors; k++) {
    const Literal *v = operands[k];
    if (!is_array(v) || v->shape.rank != 1 || v->shape.dims[0] != f->features)
      return status_error(st, STATUS_RUNTIME_ERROR,
                          "%s: operand %d must hold one value per feature (%lld)", inst->name,
                          k, (long long)f->features);
  }
  if (same_as_operand &&
      (!is_array(same_as_operand) || !shape_same_dims(&same_as_operand->shape, &x->shape)))
    return status_error(st, STATUS_RUNTIME_ERROR, "%s: grad_output's shape differs from the "
                        "operand's", inst->name);
  return true;
}

/* For the two ops that return (array like the operand, vector, vector). */
static bool check_tuple_result(const Instruction *inst, const FeatureLayout *f,
                               const Literal *x, Status *st) {
  const Shape *s = &inst->shape;
  bool ok = s->type == TYPE_TUPLE && s->tuple_count == 3 && s->tuple_shapes &&
            shape_same_dims(&s->tuple_shapes[0], &x->shape);
  for (int k = 1; ok && k < 3; k++)
    ok = s->tuple_shapes[k].type != TYPE_TUPLE && s->tuple_shapes[k].rank == 1 &&
         s->tuple_shapes[k].dims[0] == f->features;
  if (!ok)
    return status_error(st, STATUS_RUNTIME_ERROR,
                        "%s: result must be (operand shape, [features], [features])",
                        inst->name);
  return true;
}

static double *load_vector(const Literal *v, int64_t n) {
  double *out = doubles_calloc(n);
  for (int64_t i = 0; i < n; i++) out[i] = literal_get_f64(v, i);
  return out;
}

/* y = scale * (x - mean) / sqrt(variance + epsilon) + offset, per feature. */
static void normalize(const Literal *x, const FeatureLayout *f, const double *scale,
                      const double *offset, const double *mean, const double *variance,
                      double epsilon, Literal *y) {
  for (int64_t i = 0; i < f->count; i++) {
    int64_t c = feature_of(f, i);
    double centered = literal_get_f64(x, i) - mean[c];
    literal_set_f64(y, i, scale[c] * (centered / sqrt(variance[c] + epsilon)) + offset[c]);
  }
}

/* batch-norm-inference(operand, scale, offset, mean, variance) */
Literal *eval_batch_norm_inference(const Instruction *inst, Literal *const *operands,
                                   Status *st) {
  FeatureLayout f;
  if (!check_batch_norm(inst, operands, 4, NULL, &f, st)) return NULL;
  if (inst->shape.type == TYPE_TUPLE || !shape_same_dims(&inst->shape, &operands[0]->shape)) {
    status_error(st, STATUS_RUNTIME_ERROR, "%s: result shape differs from the operand's",
                 inst->name);
    return NULL;
  }
  double *v[4];
  for (int k = 0; k < 4; k++) v[k] = load_vector(operands[k + 1], f.features);
  Literal *y = literal_create(&inst->shape);
  normalize(operands[0], &f, v[0], v[1], v[2], v[3], epsilon_of(inst), y);
  for (int k = 0; k < 4; k++) mem_free(v[k]);
  return y;
}

/* batch-norm-training(operand, scale, offset) -> (output, batch_mean, batch_var):
 * the mean and biased variance of each feature, and the operand normalized
 * with them. */
Literal *eval_batch_norm_training(const Instruction *inst, Literal *const *operands,
                                  Status *st) {
  FeatureLayout f;
  const Literal *x = operands[0];
  if (!check_batch_norm(inst, operands, 2, NULL, &f, st) || !check_tuple_result(inst, &f, x, st))
    return NULL;
  double *scale = load_vector(operands[1], f.features);
  double *offset = load_vector(operands[2], f.features);
  double *mean = doubles_calloc(f.features), *variance = doubles_calloc(f.features);
  for (int64_t i = 0; i < f.count; i++) mean[feature_of(&f, i)] += literal_get_f64(x, i);
  for (int64_t c = 0; c < f.features; c++) mean[c] /= f.per_feature;
  for (int64_t i = 0; i < f.count; i++) {
    int64_t c = feature_of(&f, i);
    double centered = literal_get_f64(x, i) - mean[c];
    variance[c] += centered * centered;
  }
  for (int64_t c = 0; c < f.features; c++) variance[c] /= f.per_feature;
  Literal *out = literal_create(&inst->shape);
  normalize(x, &f, scale, offset, mean, variance, epsilon_of(inst), out->elements[0]);
  for (int64_t c = 0; c < f.features; c++) {
    literal_set_f64(out->elements[1], c, mean[c]);
    literal_set_f64(out->elements[2], c, variance[c]);
  }
  mem_free(scale);
  mem_free(offset);
  mem_free(mean);
  mem_free(variance);
  return out;
}

/* batch-norm-grad(operand, scale, mean, variance, grad_output)
 *   -> (grad_operand, grad_scale, grad_offset), with n elements per feature,
 * xc = x - mean, dy = grad_output, s = variance + epsilon (the spec's i1..i6):
 *   grad_operand = scale / sqrt(s) / n * (n dy - sum(dy) - xc * sum(dy xc) / s)
 *   grad_scale   = sum(dy * xc / sqrt(s))
 *   grad_offset  = sum(dy)
 * sums over the elements of one feature. */
Literal *eval_batch_norm_grad(const Instruction *inst, Literal *const *operands, Status *st) {
  FeatureLayout f;
  const Literal *x = operands[0], *dy = operands[4];
  if (!check_batch_norm(inst, operands, 3, dy, &f, st) || !check_tuple_result(inst, &f, x, st))
    return NULL;
  double *scale = load_vector(operands[1], f.features);
  double *mean = load_vector(operands[2], f.features);
  double *variance = load_vector(operands[3], f.features);
  double *sum_dy = doubles_calloc(f.features), *sum_dy_xc = doubles_calloc(f.features);
  double epsilon = epsilon_of(inst);
  for (int64_t i = 0; i < f.count; i++) {
    int64_t c = feature_of(&f, i);
    double g = literal_get_f64(dy, i);
    sum_dy[c] += g;
    sum_dy_xc[c] += g * (literal_get_f64(x, i) - mean[c]);
  }
  Literal *out = literal_create(&inst->shape);
  double n = f.per_feature;
  for (int64_t i = 0; i < f.count; i++) {
    int64_t c = feature_of(&f, i);
    double s = variance[c] + epsilon, xc = literal_get_f64(x, i) - mean[c];
    double inner = literal_get_f64(dy, i) * n - sum_dy[c] - xc * sum_dy_xc[c] / s;
    literal_set_f64(out->elements[0], i, scale[c] / sqrt(s) / n * inner);
  }
  for (int64_t c = 0; c < f.features; c++) {
    literal_set_f64(out->elements[1], c, sum_dy_xc[c] / sqrt(variance[c] + epsilon));
    literal_set_f64(out->elements[2], c, sum_dy[c]);
  }
  mem_free(scale);
  mem_free(mean);
  mem_free(variance);
  mem_free(sum_dy);
  mem_free(sum_dy_xc);
  return out;
}
