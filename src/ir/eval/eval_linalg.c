/* The evaluator's linear algebra: dot, convolution, cholesky and
 * triangular-solve, as HLO defines them (the StableHLO spec's dot_general,
 * convolution, cholesky and triangular_solve; XLA's expanders where the spec
 * leaves a corner open).
 *
 * Arithmetic. A dot or a convolution multiplies and adds in one of two ways,
 * chosen by the instruction's result element type (which may differ from the
 * operands', e.g. bf16 x bf16 -> f32 or s8 x s8 -> s32); operands of another
 * type are first converted to the result type, as XLA does:
 *   - integer or pred results: operands are read as integers and the sum of
 *     products wraps modulo 2^64, then is truncated to the result width; that
 *     is exactly wraparound arithmetic in the result type, like all HLO
 *     integer arithmetic. (XLA's HloEvaluator wraps dots the same way but
 *     clamps an integer convolution's sum to the result range; we wrap both,
 *     so that dot and convolution agree.)
 *   - float results: operands are read as doubles, products are summed in
 *     double and the sum is rounded once to the result type. XLA sums f16,
 *     bf16 and f32 in f32, so results may differ from XLA's in the last bits;
 *     this is the more exact of the two, and comparisons use a tolerance.
 *   - complex results (c64, c128; the operands are complex too, the
 *     verifier sees to it): the same in double complex. There is no
 *     conjugation: a complex dot is sum(a * b), as in HLO.
 * cholesky and triangular-solve work in double and round each output once;
 * their plans and algorithms are src/ir/linalg_plan.c's, which the CPU
 * backend runs as well, bit for bit.
 *
 * The verifier has already checked shapes, but every op checks again what it
 * relies on and answers a status, never an out-of-bounds read. */
#include "complex_compat.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "eval_internal.h"
#include "ir/conv_plan.h"
#include "ir/dot_plan.h"
#include "ir/linalg_plan.h"

/* ------------------------------------------------------------ arithmetic */


/* An operand's elements in the arithmetic of the result: one of f or u.
 * Complex numbers take two doubles each in f, real part first. */
typedef struct Numbers {
  bool integer, is_complex;
  double *f;
  uint64_t *u;
} Numbers;

/* Loads an operand in the arithmetic of the result type t. An operand of
 * another type is first converted to t, as XLA converts a dot's or a
 * convolution's operands to the result type (integer conversions wrap,
 * which the wrapping sum absorbs). */
static Numbers numbers_load(const Literal *lit, ElementType t) {
  Numbers n = {.integer = !type_is_float(t) && !type_is_complex(t), .is_complex = type_is_complex(t)};
  int64_t count = shape_element_count(&lit->shape);
  bool float_operand = type_is_float(lit->shape.type);
  if (n.is_complex) {
    ElementType part = type_complex_component(t);
    n.f = eval_scratch_calloc(2 * count, sizeof *n.f);
    for (int64_t i = 0; i < count; i++) {
      double _Complex z = literal_get_complex(lit, i);
      n.f[2 * i] = float_round_to_type(creal(z), part);
      n.f[2 * i + 1] = float_round_to_type(cimag(z), part);
    }
  } else if (n.integer) {
    n.u = eval_scratch_calloc(count, sizeof *n.u);
    for (int64_t i = 0; i < count; i++)
      n.u[i] = float_operand ? float_convert_to_integer(literal_get_f64(lit, i), t)
                             : (uint64_t)literal_get_s64(lit, i);
  } else {
    n.f = eval_scratch_calloc(count, sizeof *n.f);
    for (int64_t i = 0; i < count; i++) n.f[i] = float_round_to_type(literal_get_f64(lit, i), t);
  }
  return n;
}

static void numbers_free(Numbers *n) {
  mem_free(n->f);
  mem_free(n->u);
}

/* A running sum of products, in the arithmetic of the result (f_imag:
 * the imaginary part of a complex sum). */
typedef struct Sum {
  double f, f_imag;
  uint64_t u;
} Sum;

static inline void sum_add_product(Sum *s, const Numbers *a, int64_t i, const Numbers *b,
                                   int64_t j) {
  if (a->integer) {
    s->u += a->u[i] * b->u[j];
  } else if (a->is_complex) {
    /* (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br) */
    double ar = a->f[2 * i], ai = a->f[2 * i + 1], br = b->f[2 * j], bi = b->f[2 * j + 1];
    s->f += ar * br - ai * bi;
    s->f_imag += ar * bi + ai * br;
  } else {
    s->f += a->f[i] * b->f[j];
  }
}

static void sum_store(Literal *out, int64_t index, const Sum *s, bool integer) {
  if (integer) literal_set_s64(out, index, (int64_t)s->u);
  else if (type_is_complex(out->shape.type)) literal_set_complex(out, index, CMPLX(s->f, s->f_imag));
  else literal_set_f64(out, index, s->f);
}

static bool result_is_integer(const Instruction *inst) {
  return !type_is_float(inst->shape.type) && !type_is_complex(inst->shape.type);
}

static bool check_array(const Instruction *inst, const Literal *lit, const char *what,
                        Status *st) {
  if (!lit || lit->shape.type == TYPE_TUPLE)
    return status_error(st, STATUS_RUNTIME_ERROR, "%s: %s must be an array", inst->name, what);
  return true;
}

/* ------------------------------------------------------------------- dot */

/* dot (dot_general): result[batch..., lhs_free..., rhs_free...] =
 *   sum over the contracting indices of lhs[...] * rhs[...],
 * the groups as the dot's plan (src/ir/dot_plan.h) lists them; the sum
 * walks the contracting indices row-major over the list. */
Literal *eval_dot(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *lhs = operands[0], *rhs = operands[1];
  if (!check_array(inst, lhs, "lhs", st) || !check_array(inst, rhs, "rhs", st)) return NULL;
  DotPlan p;
  const char *why = dot_plan_make(attrs_dot(&inst->attrs), &lhs->shape, &rhs->shape, &p);
  if (why) {
    status_error(st, STATUS_RUNTIME_ERROR, "%s: %s", inst->name, why);
    return NULL;
  }
  /* The result dims implied by the rule above must be the declared ones. */
  int64_t dims[AXLE_MAX_RANK];
  int rank = 0, nb = p.batch_count, nl = p.m_count, nr = p.n_count, nc = p.k_count;
  for (int i = 0; i < nb; i++) dims[rank++] = lhs->shape.dims[p.lhs_batch[i]];
  for (int i = 0; i < nl; i++) dims[rank++] = lhs->shape.dims[p.lhs_m[i]];
  for (int i = 0; i < nr; i++) dims[rank++] = rhs->shape.dims[p.rhs_n[i]];
  Shape expect = shape_array(inst->shape.type, rank, dims);
  if (inst->shape.type == TYPE_TUPLE || !shape_same_dims(&expect, &inst->shape)) {
    status_error(st, STATUS_RUNTIME_ERROR, "%s: result shape does not match the dot dims",
                 inst->name);
    return NULL;
  }
  int64_t ls[AXLE_MAX_RANK], rs[AXLE_MAX_RANK], cdims[AXLE_MAX_RANK];
  shape_strides(&lhs->shape, ls);
  shape_strides(&rhs->shape, rs);
  /* Offsets of every contracting index, precomputed for the inner loop. */
  for (int i = 0; i < nc; i++) cdims[i] = lhs->shape.dims[p.lhs_k[i]];
  int64_t nk = p.k;
  int64_t *lhs_k = eval_scratch_calloc(nk, sizeof *lhs_k);
  int64_t *rhs_k = eval_scratch_calloc(nk, sizeof *rhs_k);
  int64_t k_index[AXLE_MAX_RANK] = {0};
  for (int64_t k = 0; k < nk; k++, index_next(k_index, cdims, nc))
    for (int i = 0; i < nc; i++) {
      lhs_k[k] += k_index[i] * ls[p.lhs_k[i]];
      rhs_k[k] += k_index[i] * rs[p.rhs_k[i]];
    }

  bool integer = result_is_integer(inst);
  Numbers a = numbers_load(lhs, inst->shape.type), b = numbers_load(rhs, inst->shape.type);
  Literal *out = literal_create(&inst->shape);
  int64_t count = shape_element_count(&out->shape), index[AXLE_MAX_RANK] = {0};
  for (int64_t at = 0; at < count; at++, index_next(index, dims, rank)) {
    int64_t lhs_base = 0, rhs_base = 0;
    for (int i = 0; i < nb; i++) {
      lhs_base += index[i] * ls[p.lhs_batch[i]];
      rhs_base += index[i] * rs[p.rhs_batch[i]];
    }
    for (int i = 0; i < nl; i++) lhs_base += index[nb + i] * ls[p.lhs_m[i]];
    for (int i = 0; i < nr; i++) rhs_base += index[nb + nl + i] * rs[p.rhs_n[i]];
    Sum sum = {0};
    for (int64_t k = 0; k < nk; k++)
      sum_add_product(&sum, &a, lhs_base + lhs_k[k], &b, rhs_base + rhs_k[k]);
    sum_store(out, at, &sum, integer);
  }
  numbers_free(&a);
  numbers_free(&b);
  mem_free(lhs_k);
  mem_free(rhs_k);
  return out;
}

/* ----------------------------------------------------------- convolution */

/* One output element (the plan is src/ir/conv_plan.h): the sum over the
 * kernel's taps and input features of its group. Feature groups split the input features and the output
 * features into matching contiguous runs; batch groups split the input
 * batch and the output features likewise (spec: split, convolve, concatenate
 * along the output feature dimension). Window reversal pairs window tap k
 * with kernel tap size-1-k. */
static void conv_output_element(const Instruction *inst, const ConvPlan *p, const Literal *lhs,
                                const Literal *rhs, const Numbers *a, const Numbers *b,
                                const int64_t *out_index, Sum *sum) {
  const ConvDims *cd = attrs_conv(&inst->attrs);
  int64_t ls[AXLE_MAX_RANK], rs[AXLE_MAX_RANK];
  shape_strides(&lhs->shape, ls);
  shape_strides(&rhs->shape, rs);
  int64_t of = out_index[cd->output_feature];
  int64_t feature_group = of / (p->out_features / p->feature_groups);
  int64_t batch_group = of / (p->out_features / p->batch_groups);
  int64_t batch = batch_group * (p->batch / p->batch_groups) + out_index[cd->output_batch];
  int64_t first_feature = feature_group * p->kernel_features;
  int64_t tap[AXLE_MAX_RANK] = {0};
  int64_t taps = 1;
  for (int s = 0; s < p->spatial_count; s++) taps *= p->kernel_size[s];
  for (int64_t t = 0; t < taps; t++, index_next(tap, p->kernel_size, p->spatial_count)) {
    int64_t lhs_at = batch * ls[cd->input_batch] + first_feature * ls[cd->input_feature];
    int64_t rhs_at = of * rs[cd->kernel_output_feature];
    bool inside = true;
    for (int s = 0; s < p->spatial_count && inside; s++) {
      int64_t pos = conv_input_position(&p->window[s], out_index[cd->output_spatial[s]], tap[s],
                                        lhs->shape.dims[cd->input_spatial[s]]);
      int64_t k = p->window[s].reversal ? p->kernel_size[s] - 1 - tap[s] : tap[s];
      inside = pos >= 0;
      lhs_at += pos * ls[cd->input_spatial[s]];
      rhs_at += k * rs[cd->kernel_spatial[s]];
    }
    if (!inside) continue;
    for (int64_t c = 0; c < p->kernel_features; c++)
      sum_add_product(sum, a, lhs_at + c * ls[cd->input_feature], b,
                      rhs_at + c * rs[cd->kernel_input_feature]);
  }
}

/* convolution: see conv_output_element for what one element is. */
Literal *eval_convolution(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *lhs = operands[0], *rhs = operands[1];
  if (!check_array(inst, lhs, "lhs", st) || !check_array(inst, rhs, "rhs", st)) return NULL;
  ConvPlan plan;
  char why[200];
  if (!conv_plan_make(inst, &lhs->shape, &rhs->shape, &plan, why, sizeof why)) {
    status_error(st, STATUS_RUNTIME_ERROR, "%s: %s", inst->name, why);
    return NULL;
  }
  bool integer = result_is_integer(inst);
  Numbers a = numbers_load(lhs, inst->shape.type), b = numbers_load(rhs, inst->shape.type);
  Literal *out = literal_create(&inst->shape);
  int64_t count = shape_element_count(&out->shape), index[AXLE_MAX_RANK] = {0};
  for (int64_t at = 0; at < count; at++, index_next(index, out->shape.dims, out->shape.rank)) {
    Sum sum = {0};
    conv_output_element(inst, &plan, lhs, rhs, &a, &b, index, &sum);
    sum_store(out, at, &sum, integer);
  }
  numbers_free(&a);
  numbers_free(&b);
  return out;
}

/* -------------------------------------------------------------- cholesky */

/* Operands of cholesky and triangular-solve are batches of matrices in
 * their two minor dimensions; the leading dimensions are the batch
 * (src/ir/linalg_plan.h). */
static bool check_square_batch(const Instruction *inst, const Literal *a, Status *st) {
  if (!check_array(inst, a, "a", st)) return false;
  if (a->shape.rank < 2 || a->shape.dims[a->shape.rank - 1] != a->shape.dims[a->shape.rank - 2])
    return status_error(st, STATUS_RUNTIME_ERROR, "%s: a must be a batch of square matrices",
                        inst->name);
  return true;
}

/* cholesky(a): see CholeskyPlan (src/ir/linalg_plan.h) for what it means;
 * the evaluator loads each batch element and runs the plan. */
Literal *eval_cholesky(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *a = operands[0];
  if (!check_square_batch(inst, a, st)) return NULL;
  CholeskyPlan plan;
  if (inst->shape.type == TYPE_TUPLE || !cholesky_plan_make(&a->shape, &inst->shape, inst->attrs.lower, &plan)) {
    status_error(st, STATUS_RUNTIME_ERROR, "%s: result shape differs from the operand's",
                 inst->name);
    return NULL;
  }
  int64_t size = plan.n * plan.n;
  Literal *out = literal_create(&inst->shape);
  bool complex_values = type_is_complex(inst->shape.type);
  size_t value_size = complex_values ? sizeof(double _Complex) : sizeof(double);
  void *m = eval_scratch_calloc(size, value_size), *l = eval_scratch_calloc(size, value_size);
  void *result = eval_scratch_calloc(size, value_size);
  for (int64_t bi = 0; bi < plan.batches; bi++) {
    int64_t base = bi * size;
    if (complex_values) {
      double _Complex *mc = m, *rc = result;
      for (int64_t i = 0; i < size; i++) mc[i] = literal_get_complex(a, base + i);
      cholesky_run_complex(&plan, mc, l, rc);
      for (int64_t i = 0; i < size; i++) literal_set_complex(out, base + i, rc[i]);
    } else {
      double *mr = m, *rr = result;
      for (int64_t i = 0; i < size; i++) mr[i] = literal_get_f64(a, base + i);
      cholesky_run(&plan, mr, l, rr);
      for (int64_t i = 0; i < size; i++) literal_set_f64(out, base + i, rr[i]);
    }
  }
  mem_free(m);
  mem_free(l);
  mem_free(result);
  return out;
}

/* ------------------------------------------------------ triangular-solve */

static bool check_triangular_solve(const Instruction *inst, const Literal *a, const Literal *b,
                                   Status *st) {
  if (!check_square_batch(inst, a, st) || !check_array(inst, b, "b", st)) return false;
  int rank = a->shape.rank;
  int64_t m = a->shape.dims[rank - 1];
  bool dims_ok = b->shape.rank == rank;
  for (int d = 0; dims_ok && d < rank - 2; d++) dims_ok = a->shape.dims[d] == b->shape.dims[d];
  if (dims_ok)
    dims_ok = inst->attrs.left_side ? b->shape.dims[rank - 2] == m : b->shape.dims[rank - 1] == m;
  if (!dims_ok)
    return status_error(st, STATUS_RUNTIME_ERROR,
                        "%s: b's shape does not fit a (batch dims, or the solved dimension)",
                        inst->name);
  if (inst->shape.type == TYPE_TUPLE || !shape_same_dims(&inst->shape, &b->shape))
    return status_error(st, STATUS_RUNTIME_ERROR, "%s: result shape differs from b's",
                        inst->name);
  return true;
}

/* triangular-solve(a, b): x with op(a) x = b (left_side) or x op(a) = b,
 * where op is identity, transpose or adjoint (= transpose for reals). Only
 * the triangle of a named by `lower` is read. A zero on the diagonal gives
 * infinities and NaN, as plain substitution does. */
Literal *eval_triangular_solve(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *a = operands[0], *b = operands[1];
  if (!check_triangular_solve(inst, a, b, st)) return NULL;
  TriangularSolvePlan plan;
  triangular_solve_plan_make(&a->shape, &b->shape, inst->attrs.left_side, inst->attrs.lower,
                             inst->attrs.transpose_a != TRANSPOSE_A_NO, inst->attrs.unit_diagonal, &plan);
  int64_t m = plan.m, size = plan.rows * plan.cols;
  Literal *out = literal_create(&inst->shape);
  double *matrix = eval_scratch_calloc(m * m, sizeof(double));
  double *x = eval_scratch_calloc(size, sizeof(double));
  for (int64_t bi = 0; bi < plan.batches; bi++) {
    for (int64_t i = 0; i < m * m; i++) matrix[i] = literal_get_f64(a, bi * m * m + i);
    for (int64_t i = 0; i < size; i++) x[i] = literal_get_f64(b, bi * size + i);
    triangular_solve_run(&plan, matrix, x);
    for (int64_t i = 0; i < size; i++) literal_set_f64(out, bi * size + i, x[i]);
  }
  mem_free(matrix);
  mem_free(x);
  return out;
}
