/* Shape inference: the one place where an instruction's result shape is
 * computed from its operands' shapes and its attributes.
 *
 * The rules follow XLA's ShapeInference (xla/service/shape_inference.cc) and
 * the checks its HLO verifier adds on top (no implicit broadcast between the
 * operands of an elementwise op, for one). Where HLO lets the text choose
 * something inference cannot know (the target type of convert, the output
 * dims of broadcast/reshape/iota, the preferred element type of dot and
 * convolution, the result of a custom-call), the declared shape supplies it
 * and inference checks everything else.
 *
 * This file holds the rules for elementwise ops, data movement, calls and
 * control flow, and the dispatch table; the checks every rule shares are in
 * shape_inference_checks.c, below every rule. The
 * rules for ops with structured attributes (windows, gather/scatter, dot,
 * convolution, linear algebra, sort, collectives) are in
 * shape_inference_ops.c. verify.c walks the module and compares each
 * declared shape with the inferred one.
 */
#include <assert.h> /* static_assert */
#include <string.h>

#include "shape_inference.h"

/* ---- elementwise ---- */

/* The float unary ops that HLO also defines on complex numbers (XLA's
 * ShapeInference); the rest (floor, erf, is-finite, ...) need an order or
 * a real line and refuse complex operands. */
static bool unary_takes_complex(Opcode op) {
  switch (op) {
  case OP_ABS: case OP_NEGATE: case OP_SIGN: case OP_EXPONENTIAL: case OP_EXPONENTIAL_MINUS_ONE:
  case OP_LOG: case OP_LOG_PLUS_ONE: case OP_LOGISTIC: case OP_SQRT: case OP_RSQRT: case OP_CBRT:
  case OP_SINE: case OP_COSINE: case OP_TAN: case OP_TANH:
    return true;
  default:
    return false;
  }
}

static bool infer_unary(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  const Shape *x = infer_operand_shape(in, 0);
  ElementType t = x->type;
  Opcode op = in->inst->opcode;
  if (type_is_complex(t) && !unary_takes_complex(op))
    return infer_fail(in, "is not defined on complex numbers (%s)", type_name(t));
  switch (op) {
  case OP_NOT:
    if (!type_is_integer(t) && t != TYPE_PRED)
      return infer_fail(in, "needs pred or integer, got %s", type_name(t));
    break;
  case OP_CLZ:
  case OP_POPCNT:
    if (!type_is_integer(t)) return infer_fail(in, "needs an integer type, got %s", type_name(t));
    break;
  case OP_ABS:
  case OP_NEGATE:
  case OP_SIGN:
    if (t == TYPE_PRED) return infer_fail(in, "does not take pred");
    break;
  default:
    if (!type_is_float(t) && !type_is_complex(t))
      return infer_fail(in, "needs a floating-point type, got %s", type_name(t));
  }
  infer_set_same_as(in, x);
  if (op == OP_IS_FINITE) in->out->type = TYPE_PRED;
  if (op == OP_ABS) in->out->type = type_complex_component(t); /* |z| is real */
  return true;
}

/* HLO has no implicit broadcast: both operands have the output's dims. */
static bool infer_binary(Infer *in) {
  if (!infer_expect_operand_count(in, 2) || !infer_expect_array(in, 0) || !infer_expect_array(in, 1))
    return false;
  if (!infer_expect_same_dims(in, 0, 1) || !infer_expect_same_type(in, 0, 1)) return false;
  ElementType t = infer_operand_shape(in, 0)->type;
  Opcode op = in->inst->opcode;
  /* Complex numbers have arithmetic but no order: no maximum, minimum or
   * remainder (and no bitwise ops, refused below with the integers'). */
  if (type_is_complex(t) && op != OP_ADD && op != OP_SUBTRACT && op != OP_MULTIPLY &&
      op != OP_DIVIDE && op != OP_POWER)
    return infer_fail(in, "is not defined on complex numbers (%s)", type_name(t));
  switch (op) {
  case OP_AND:
  case OP_OR:
  case OP_XOR:
    if (!type_is_integer(t) && t != TYPE_PRED)
      return infer_fail(in, "needs pred or integer, got %s", type_name(t));
    break;
  case OP_SHIFT_LEFT:
  case OP_SHIFT_RIGHT_ARITHMETIC:
  case OP_SHIFT_RIGHT_LOGICAL:
  case OP_MULHI:
    if (!type_is_integer(t)) return infer_fail(in, "needs an integer type, got %s", type_name(t));
    break;
  case OP_ATAN2:
    if (!type_is_float(t)) return infer_fail(in, "needs a floating-point type, got %s", type_name(t));
    break;
  case OP_MULTIPLY:
  case OP_MAXIMUM:
  case OP_MINIMUM:
    break;   /* on pred: and, or, and (XLA's HloEvaluator and emitters agree) */
  default:
    if (t == TYPE_PRED) return infer_fail(in, "does not take pred");
  }
  return infer_set_same_as(in, infer_operand_shape(in, 0));
}

/* type= must suit the operands: FLOAT/TOTALORDER for floats, SIGNED for
 * signed integers, UNSIGNED for unsigned integers and pred. */
static bool infer_compare(Infer *in) {
  if (!infer_expect_operand_count(in, 2) || !infer_expect_array(in, 0) || !infer_expect_array(in, 1))
    return false;
  if (!infer_expect_same_dims(in, 0, 1) || !infer_expect_same_type(in, 0, 1)) return false;
  ElementType t = infer_operand_shape(in, 0)->type;
  CompareType ct = in->inst->attrs.compare_type;
  bool ok = true;
  if (ct == CMP_TYPE_FLOAT)
    ok = type_is_float(t) || type_is_complex(t);
  else if (ct == CMP_TYPE_TOTALORDER)
    ok = type_is_float(t);
  else if (ct == CMP_TYPE_SIGNED)
    ok = type_kind(t) == TYPE_KIND_SINT;
  else if (ct == CMP_TYPE_UNSIGNED)
    ok = type_kind(t) == TYPE_KIND_UINT || t == TYPE_PRED;
  if (!ok) return infer_fail(in, "comparison type does not suit element type %s", type_name(t));
  if ((unsigned)in->inst->attrs.direction > CMP_GE) return infer_fail(in, "bad comparison direction");
  CompareDirection d = in->inst->attrs.direction;
  if (type_is_complex(t) && d != CMP_EQ && d != CMP_NE)
    return infer_fail(in, "complex numbers have no order: only EQ and NE compare %s", type_name(t));
  infer_set_same_as(in, infer_operand_shape(in, 0));
  in->out->type = TYPE_PRED;
  return true;
}

/* Modern HLO: the predicate has the same dims as the values (no scalar pred). */
static bool infer_select(Infer *in) {
  if (!infer_expect_operand_count(in, 3)) return false;
  for (int i = 0; i < 3; i++)
    if (!infer_expect_array(in, i)) return false;
  if (infer_operand_shape(in, 0)->type != TYPE_PRED)
    return infer_fail(in, "predicate must be pred, got %s", type_name(infer_operand_shape(in, 0)->type));
  if (!infer_expect_same_dims(in, 0, 1) || !infer_expect_same_dims(in, 1, 2) ||
      !infer_expect_same_type(in, 1, 2))
    return false;
  return infer_set_same_as(in, infer_operand_shape(in, 1));
}

/* clamp(min, x, max): min and max may be scalars. */
static bool infer_clamp(Infer *in) {
  if (!infer_expect_operand_count(in, 3)) return false;
  for (int i = 0; i < 3; i++)
    if (!infer_expect_array(in, i)) return false;
  for (int i = 0; i < 3; i += 2) {
    if (!infer_expect_same_type(in, i, 1)) return false;
    if (infer_operand_shape(in, i)->rank != 0 && !infer_expect_same_dims(in, i, 1)) return false;
  }
  ElementType t = infer_operand_shape(in, 1)->type;
  if (t == TYPE_PRED) return infer_fail(in, "does not take pred");
  if (type_is_complex(t)) return infer_fail(in, "is not defined on complex numbers (%s)", type_name(t));
  return infer_set_same_as(in, infer_operand_shape(in, 1));
}

/* convert's target type is the declared one; only the dims are inferred.
 * Complex to real is refused, as XLA refuses it: which part to keep is the
 * program's choice, made with real, imag or abs. */
static bool infer_convert(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  if (shape_is_tuple(&in->inst->shape)) return infer_fail(in, "result must be an array");
  ElementType from = infer_operand_shape(in, 0)->type, to = in->inst->shape.type;
  if (type_is_complex(from) && !type_is_complex(to))
    return infer_fail(in, "converting complex %s to real %s is not defined; use real, imag or abs",
                      type_name(from), type_name(to));
  infer_set_same_as(in, infer_operand_shape(in, 0));
  in->out->type = in->inst->shape.type;
  return true;
}

/* Between widths, the narrower side has one more (minor) dimension of size
 * wide/narrow; equal widths keep the dims. */
static bool infer_bitcast_convert(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  if (shape_is_tuple(&in->inst->shape)) return infer_fail(in, "result must be an array");
  const Shape *x = infer_operand_shape(in, 0);
  ElementType to = in->inst->shape.type;
  int from_bits = type_bit_width(x->type), to_bits = type_bit_width(to);
  int64_t dims[AXLE_MAX_RANK + 1];
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  if (from_bits == to_bits) return infer_set_array(in, to, x->rank, dims);
  if (from_bits > to_bits) {
    dims[x->rank] = from_bits / to_bits;
    return infer_set_array(in, to, x->rank + 1, dims);
  }
  if (x->rank == 0 || x->dims[x->rank - 1] != to_bits / from_bits)
    return infer_fail(in, "converting %s to %s needs a minor dimension of size %d", type_name(x->type),
                      type_name(to), to_bits / from_bits);
  return infer_set_array(in, to, x->rank - 1, dims);
}

/* stochastic-convert(operand, random): a float operand, random bits of an
 * unsigned type as wide as it, the same dims; the result type is declared
 * (XLA defines only float to signed integer, which the evaluator checks). */
static bool infer_stochastic_convert(Infer *in) {
  if (!infer_expect_operand_count(in, 2) || !infer_expect_array(in, 0) || !infer_expect_array(in, 1))
    return false;
  if (shape_is_tuple(&in->inst->shape)) return infer_fail(in, "result must be an array");
  const Shape *x = infer_operand_shape(in, 0), *random = infer_operand_shape(in, 1);
  if (!type_is_float(x->type)) return infer_fail(in, "operand must be a float, got %s", type_name(x->type));
  if (type_kind(random->type) != TYPE_KIND_UINT || type_bit_width(random->type) != type_bit_width(x->type))
    return infer_fail(in, "random bits must be an unsigned type as wide as %s, got %s",
                      type_name(x->type), type_name(random->type));
  if (!infer_expect_same_dims(in, 0, 1)) return false;
  infer_set_same_as(in, x);
  in->out->type = in->inst->shape.type;
  return true;
}

static bool infer_reduce_precision(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  if (!type_is_float(infer_operand_shape(in, 0)->type)) return infer_fail(in, "needs a floating-point type");
  if (in->inst->attrs.exponent_bits < 1 || in->inst->attrs.mantissa_bits < 0)
    return infer_fail(in, "needs exponent_bits >= 1 and mantissa_bits >= 0");
  return infer_set_same_as(in, infer_operand_shape(in, 0));
}

/* map: N operands of the same dims, a scalar function of N arguments. */
static bool infer_map(Infer *in) {
  int n = in->inst->operand_count;
  if (n < 1) return infer_fail(in, "needs at least one operand");
  if (!infer_expect_called_count(in, 1)) return false;
  for (int i = 0; i < n; i++)
    if (!infer_expect_array(in, i) || !infer_expect_same_dims(in, 0, i)) return false;
  const Computation *f = in->inst->called[0];
  int rank = infer_operand_shape(in, 0)->rank;
  const IntList *dims = &in->inst->attrs.dimensions;
  /* XLA's map always covers every dimension; an absent list means the same. */
  if (dims->count != rank && dims->count != 0)
    return infer_fail(in, "dimensions must list every operand dimension");
  for (int i = 0; i < dims->count; i++)
    if (dims->values[i] != i) return infer_fail(in, "dimensions must be {0,...,rank-1}");
  if (f->parameter_count != n)
    return infer_fail(in, "computation '%s' takes %d parameters, given %d", f->name, f->parameter_count, n);
  for (int i = 0; i < n; i++)
    if (!infer_is_scalar_of(infer_param_shape(f, i), infer_operand_shape(in, i)->type))
      return infer_fail(in, "computation '%s' parameter %d must be %s[]", f->name, i,
                        type_name(infer_operand_shape(in, i)->type));
  const Shape *r = &f->root->shape;
  if (shape_is_tuple(r) || r->rank != 0)
    return infer_fail(in, "computation '%s' must return a scalar", f->name);
  infer_set_same_as(in, infer_operand_shape(in, 0));
  in->out->type = r->type;
  return true;
}

/* ---- data movement ---- */

/* The output dims are declared; operand dim i becomes output dim dimensions[i]. */
static bool infer_broadcast(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  const Shape *x = infer_operand_shape(in, 0), *decl = &in->inst->shape;
  const IntList *d = &in->inst->attrs.dimensions;
  if (shape_is_tuple(decl)) return infer_fail(in, "result must be an array");
  if (d->count != x->rank)
    return infer_fail(in, "dimensions has %d entries but the operand has rank %d", d->count, x->rank);
  if (!infer_check_dim_list(in, "dimensions", d, decl->rank, true)) return false;
  for (int i = 0; i < d->count; i++)
    if (x->dims[i] != decl->dims[d->values[i]])
      return infer_fail(
          in, "operand dimension %d (size %lld) does not match result dimension %lld (size %lld)", i,
          (long long)x->dims[i], (long long)d->values[i], (long long)decl->dims[d->values[i]]);
  return infer_set_array(in, x->type, decl->rank, decl->dims);
}

static bool infer_reshape(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  const Shape *x = infer_operand_shape(in, 0), *decl = &in->inst->shape;
  if (shape_is_tuple(decl)) return infer_fail(in, "result must be an array");
  if (shape_element_count(x) != shape_element_count(decl))
    return infer_fail(in, "cannot reshape %lld elements into %lld", (long long)shape_element_count(x),
                      (long long)shape_element_count(decl));
  return infer_set_array(in, x->type, decl->rank, decl->dims);
}

/* bitcast reinterprets the buffer: the result keeps the operand's byte
 * count (of the buffer, so packed E(4) elements count half a byte); its
 * element type, dims and layout are the declared ones. XLA lets the element
 * type change too (s32[] bitcast(f32[] x)), which then reads the same bytes
 * as another type, as bitcast-convert does; axle allows that between
 * unpacked types only. */
static bool infer_bitcast(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  const Shape *x = infer_operand_shape(in, 0), *decl = &in->inst->shape;
  if (shape_is_tuple(decl)) return infer_fail(in, "result must be an array");
  if (shape_buffer_byte_size(x) != shape_buffer_byte_size(decl))
    return infer_fail(in, "result must keep the byte count of the operand (%lld bytes, not %lld)",
                      (long long)shape_buffer_byte_size(x), (long long)shape_buffer_byte_size(decl));
  if (x->type != decl->type && (x->element_size_bits || decl->element_size_bits))
    return infer_fail(in, "a bitcast of packed E(n) elements must keep the element type");
  return infer_set_array(in, decl->type, decl->rank, decl->dims);
}

static bool infer_transpose(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  const Shape *x = infer_operand_shape(in, 0);
  const IntList *p = &in->inst->attrs.dimensions;
  if (p->count != x->rank)
    return infer_fail(in, "dimensions must be a permutation of %d dimensions", x->rank);
  if (!infer_check_dim_list(in, "dimensions", p, x->rank, false)) return false;
  int64_t dims[AXLE_MAX_RANK];
  for (int i = 0; i < x->rank; i++) dims[i] = x->dims[p->values[i]];
  return infer_set_array(in, x->type, x->rank, dims);
}

static bool infer_slice(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  const Shape *x = infer_operand_shape(in, 0);
  const SliceDims *slice = attrs_slice(&in->inst->attrs);
  if (slice->starts.count != x->rank || slice->limits.count != x->rank ||
      slice->strides.count != x->rank)
    return infer_fail(in, "slice needs one [start:limit:stride] per dimension (%d)", x->rank);
  int64_t dims[AXLE_MAX_RANK];
  for (int i = 0; i < x->rank; i++) {
    int64_t lo = slice->starts.values[i], hi = slice->limits.values[i], s = slice->strides.values[i];
    if (lo < 0 || lo > hi || hi > x->dims[i] || s < 1)
      return infer_fail(in, "slice [%lld:%lld:%lld] is out of bounds for dimension %d of size %lld",
                        (long long)lo, (long long)hi, (long long)s, i, (long long)x->dims[i]);
    dims[i] = hi == lo ? 0 : (hi - lo - 1) / s + 1;
  }
  return infer_set_array(in, x->type, x->rank, dims);
}

/* Start indices are separate scalar operands of one integer type. */
static bool check_start_indices(const Infer *in, int first, int rank) {
  if (in->inst->operand_count != first + rank)
    return infer_fail(in, "needs %d scalar start indices, got %d", rank, in->inst->operand_count - first);
  for (int i = first; i < first + rank; i++) {
    if (!infer_expect_scalar(in, i, "a start index")) return false;
    if (!type_is_integer(infer_operand_shape(in, i)->type))
      return infer_fail(in, "start index %d must be an integer", i - first);
    if (!infer_expect_same_type(in, first, i)) return false;
  }
  return true;
}

static bool infer_dynamic_slice(Infer *in) {
  if (in->inst->operand_count < 1 || !infer_expect_array(in, 0))
    return infer_fail(in, "needs an array operand");
  const Shape *x = infer_operand_shape(in, 0);
  if (!check_start_indices(in, 1, x->rank)) return false;
  const IntList *sizes = &in->inst->attrs.dynamic_slice_sizes;
  if (sizes->count != x->rank) return infer_fail(in, "dynamic_slice_sizes needs %d entries", x->rank);
  for (int i = 0; i < x->rank; i++)
    if (sizes->values[i] < 0 || sizes->values[i] > x->dims[i])
      return infer_fail(in, "slice size %lld exceeds dimension %d of size %lld", (long long)sizes->values[i],
                        i, (long long)x->dims[i]);
  return infer_set_array(in, x->type, x->rank, sizes->values);
}

static bool infer_dynamic_update_slice(Infer *in) {
  if (in->inst->operand_count < 2 || !infer_expect_array(in, 0) || !infer_expect_array(in, 1))
    return infer_fail(in, "needs an operand and an update");
  const Shape *x = infer_operand_shape(in, 0), *u = infer_operand_shape(in, 1);
  if (!infer_expect_same_type(in, 0, 1) || !check_start_indices(in, 2, x->rank)) return false;
  if (u->rank != x->rank)
    return infer_fail(in, "update rank %d differs from operand rank %d", u->rank, x->rank);
  for (int i = 0; i < x->rank; i++)
    if (u->dims[i] > x->dims[i])
      return infer_fail(in, "update dimension %d (size %lld) exceeds the operand's (%lld)", i,
                        (long long)u->dims[i], (long long)x->dims[i]);
  return infer_set_same_as(in, x);
}

static bool infer_concatenate(Infer *in) {
  int n = in->inst->operand_count;
  if (n < 1) return infer_fail(in, "needs at least one operand");
  if (in->inst->attrs.dimensions.count != 1) return infer_fail(in, "dimensions must hold one dimension");
  int64_t d = in->inst->attrs.dimensions.values[0];
  const Shape *x = infer_operand_shape(in, 0);
  if (!infer_expect_array(in, 0)) return false;
  if (d < 0 || d >= x->rank)
    return infer_fail(in, "dimension %lld is out of range for rank %d", (long long)d, x->rank);
  int64_t dims[AXLE_MAX_RANK];
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  for (int i = 1; i < n; i++) {
    const Shape *y = infer_operand_shape(in, i);
    if (!infer_expect_array(in, i) || !infer_expect_same_type(in, 0, i)) return false;
    if (y->rank != x->rank) return infer_fail(in, "operand %d has rank %d, expected %d", i, y->rank, x->rank);
    for (int k = 0; k < x->rank; k++)
      if (k != d && y->dims[k] != x->dims[k])
        return infer_fail(in, "operand %d differs in dimension %d, which is not the concatenated one", i, k);
    dims[d] += y->dims[d];
    if (!infer_expect_extent(in, "the concatenated dimension", dims[d])) return false;
  }
  return infer_set_array(in, x->type, x->rank, dims);
}

/* Each dim becomes lo + hi + size + (size-1)*interior; lo/hi may be negative. */
static bool infer_pad(Infer *in) {
  if (!infer_expect_operand_count(in, 2) || !infer_expect_array(in, 0) ||
      !infer_expect_scalar(in, 1, "the padding value"))
    return false;
  if (!infer_expect_same_type(in, 0, 1)) return false;
  const Shape *x = infer_operand_shape(in, 0);
  const PadDims *p = attrs_padding(&in->inst->attrs);
  if (p->rank != x->rank)
    return infer_fail(in, "padding has %d dimensions, operand rank is %d", p->rank, x->rank);
  int64_t dims[AXLE_MAX_RANK];
  for (int i = 0; i < x->rank; i++) {
    if (p->interior[i] < 0) return infer_fail(in, "interior padding must not be negative");
    /* interior padding is a dilation by interior + 1 */
    int64_t inner;
    if (!infer_expect_extent(in, "interior padding", p->interior[i]) ||
        !infer_dilated_bound(in, "dimension", x->dims[i], p->interior[i] + 1, &inner) ||
        !infer_expect_extent(in, "low padding", p->lo[i]) ||
        !infer_expect_extent(in, "high padding", p->hi[i]))
      return false;
    dims[i] = p->lo[i] + p->hi[i] + inner;
    if (dims[i] < 0) return infer_fail(in, "padding makes dimension %d negative", i);
  }
  return infer_set_array(in, x->type, x->rank, dims);
}

static bool infer_reverse(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  if (!infer_check_dim_list(in, "dimensions", &in->inst->attrs.dimensions, infer_operand_shape(in, 0)->rank,
                            false))
    return false;
  return infer_set_same_as(in, infer_operand_shape(in, 0));
}

static bool infer_iota(Infer *in) {
  const Shape *decl = &in->inst->shape;
  if (shape_is_tuple(decl) || decl->rank == 0) return infer_fail(in, "result must be an array of rank >= 1");
  int64_t d = in->inst->attrs.iota_dimension;
  if (d < 0 || d >= decl->rank) return infer_fail(in, "iota_dimension %lld is out of range", (long long)d);
  return infer_set_array(in, decl->type, decl->rank, decl->dims);
}

static bool infer_tuple(Infer *in) {
  int n = in->inst->operand_count;
  Shape *elements = arena_alloc(in->arena, sizeof(Shape) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++) elements[i] = *infer_operand_shape(in, i);
  return infer_set_tuple(in, n, elements);
}

static bool infer_get_tuple_element(Infer *in) {
  if (!infer_expect_operand_count(in, 1)) return false;
  const Shape *t = infer_operand_shape(in, 0);
  int64_t i = in->inst->attrs.tuple_index;
  if (!shape_is_tuple(t)) return infer_fail(in, "operand must be a tuple");
  if (i < 0 || i >= t->tuple_count)
    return infer_fail(in, "index %lld is out of range for a tuple of %d", (long long)i, t->tuple_count);
  *in->out = t->tuple_shapes[i];
  return true;
}

/* ---- control flow and calls ---- */

static bool infer_call(Infer *in) {
  if (!infer_expect_called_count(in, 1)) return false;
  const Computation *c = in->inst->called[0];
  if (!infer_check_call_signature(in, c, 0, in->inst->operand_count)) return false;
  return infer_set_same_as(in, &c->root->shape);
}

/* condition: T -> pred[]; body: T -> T; the result is T. */
static bool infer_while(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_called_count(in, 2)) return false;
  const Computation *cond = in->inst->called[0], *body = in->inst->called[1];
  const Shape *t = infer_operand_shape(in, 0);
  char ba[128], bb[128];
  if (!infer_check_call_signature(in, cond, 0, 1) || !infer_check_call_signature(in, body, 0, 1))
    return false;
  if (!infer_is_scalar_of(&cond->root->shape, TYPE_PRED))
    return infer_fail(in, "condition '%s' must return pred[], returns %s", cond->name,
                      infer_shape_text(&cond->root->shape, ba));
  if (!shape_equal(&body->root->shape, t))
    return infer_fail(in, "body '%s' returns %s but the loop state is %s", body->name,
                      infer_shape_text(&body->root->shape, ba), infer_shape_text(t, bb));
  return infer_set_same_as(in, t);
}

/* conditional(selector, arg_0..arg_n-1): a pred selector picks between two
 * branches (true first), an s32 selector between n; branch i takes arg_i,
 * and all branches return the same shape. */
static bool infer_conditional(Infer *in) {
  int n = in->inst->called_count;
  char ba[128], bb[128];
  if (n < 1 || in->inst->operand_count != n + 1)
    return infer_fail(in, "needs one argument per branch after the selector (%d branches, %d operands)", n,
                      in->inst->operand_count);
  if (!infer_expect_called_count(in, n) || !infer_expect_scalar(in, 0, "the selector")) return false;
  ElementType sel = infer_operand_shape(in, 0)->type;
  if (sel != TYPE_PRED && sel != TYPE_S32) return infer_fail(in, "selector must be pred[] or s32[]");
  if (sel == TYPE_PRED && n != 2) return infer_fail(in, "a pred selector needs exactly two branches");
  const Shape *result = &in->inst->called[0]->root->shape;
  for (int i = 0; i < n; i++) {
    const Computation *b = in->inst->called[i];
    if (!infer_check_call_signature(in, b, i + 1, 1)) return false;
    if (!shape_equal(&b->root->shape, result))
      return infer_fail(in, "branch '%s' returns %s but branch 0 returns %s", b->name,
                        infer_shape_text(&b->root->shape, ba), infer_shape_text(result, bb));
  }
  return infer_set_same_as(in, result);
}

/* ---- leaves ---- */

static bool infer_parameter(Infer *in) {
  const Computation *c = in->inst->parent;
  int64_t k = in->inst->attrs.parameter_number;
  if (k < 0 || (c && k >= c->parameter_count))
    return infer_fail(in, "parameter number %lld is out of range", (long long)k);
  return infer_set_same_as(in, &in->inst->shape);
}

/* A literal's shape. A tuple literal keeps its element shapes on its
 * elements (tuple_shapes is NULL), so they are gathered into the arena. */
static Shape literal_shape(Arena *arena, const Literal *lit) {
  Shape s = lit->shape;
  if (!shape_is_tuple(&s)) {
    shape_set_default_layout(&s);
    return s;
  }
  s.tuple_shapes = arena_alloc(arena, sizeof(Shape) * (size_t)(s.tuple_count > 0 ? s.tuple_count : 1));
  for (int i = 0; i < s.tuple_count; i++) s.tuple_shapes[i] = literal_shape(arena, lit->elements[i]);
  return s;
}

static bool infer_constant(Infer *in) {
  const Literal *lit = in->inst->attrs.literal;
  if (!lit) return infer_fail(in, "has no value");
  *in->out = literal_shape(in->arena, lit);
  return true;
}

static bool infer_scalar_id(Infer *in) { return infer_set_array(in, TYPE_U32, 0, NULL); }

/* custom-call means whatever its target says: the declared shape stands. */
bool infer_declared(Infer *in) { return infer_set_same_as(in, &in->inst->shape); }

bool infer_pass_through(Infer *in) {
  if (!infer_expect_operand_count(in, 1)) return false;
  return infer_set_same_as(in, infer_operand_shape(in, 0));
}

static bool infer_fusion(Infer *in) {
  if ((unsigned)in->inst->attrs.fusion_kind > FUSION_CUSTOM) return infer_fail(in, "bad fusion kind");
  return infer_call(in);
}

/* ---- dispatch ---- */

typedef bool InferFn(Infer *in);

/* One row per opcode; a new opcode without a rule fails to compile here. */
static InferFn *const infer_table[OP_COUNT] = {
    /* FORM_UNARY and FORM_BINARY rows take infer_unary / infer_binary
     * (see infer_rule below), so they have no entry here. */
    [OP_COPY] = infer_pass_through,
    [OP_COMPARE] = infer_compare, [OP_SELECT] = infer_select, [OP_CLAMP] = infer_clamp,
    [OP_COMPLEX] = infer_complex, [OP_REAL] = infer_real_imag, [OP_IMAG] = infer_real_imag,
    [OP_FFT] = infer_fft,
    [OP_CONVERT] = infer_convert, [OP_BITCAST_CONVERT] = infer_bitcast_convert,
    [OP_REDUCE_PRECISION] = infer_reduce_precision, [OP_MAP] = infer_map,
    [OP_STOCHASTIC_CONVERT] = infer_stochastic_convert,
    [OP_BROADCAST] = infer_broadcast, [OP_RESHAPE] = infer_reshape, [OP_BITCAST] = infer_bitcast,
    [OP_TRANSPOSE] = infer_transpose, [OP_SLICE] = infer_slice,
    [OP_DYNAMIC_SLICE] = infer_dynamic_slice, [OP_DYNAMIC_UPDATE_SLICE] = infer_dynamic_update_slice,
    [OP_CONCATENATE] = infer_concatenate, [OP_PAD] = infer_pad, [OP_REVERSE] = infer_reverse,
    [OP_IOTA] = infer_iota, [OP_TUPLE] = infer_tuple, [OP_GET_TUPLE_ELEMENT] = infer_get_tuple_element,
    [OP_REDUCE] = infer_reduce, [OP_REDUCE_WINDOW] = infer_reduce_window,
    [OP_SELECT_AND_SCATTER] = infer_select_and_scatter,
    [OP_GATHER] = infer_gather, [OP_SCATTER] = infer_scatter, [OP_SORT] = infer_sort,
    [OP_DOT] = infer_dot, [OP_CONVOLUTION] = infer_convolution,
    [OP_CHOLESKY] = infer_cholesky, [OP_TRIANGULAR_SOLVE] = infer_triangular_solve,
    [OP_BATCH_NORM_TRAINING] = infer_batch_norm, [OP_BATCH_NORM_INFERENCE] = infer_batch_norm,
    [OP_BATCH_NORM_GRAD] = infer_batch_norm, [OP_RNG_BIT_GENERATOR] = infer_rng_bit_generator,
    [OP_CALL] = infer_call, [OP_WHILE] = infer_while, [OP_CONDITIONAL] = infer_conditional,
    [OP_FUSION] = infer_fusion,
    [OP_ALL_REDUCE] = infer_collective, [OP_ALL_GATHER] = infer_collective,
    [OP_REDUCE_SCATTER] = infer_collective, [OP_COLLECTIVE_PERMUTE] = infer_collective_permute,
    [OP_PARAMETER] = infer_parameter, [OP_CONSTANT] = infer_constant,
    [OP_REPLICA_ID] = infer_scalar_id, [OP_PARTITION_ID] = infer_scalar_id,
    [OP_CUSTOM_CALL] = infer_declared, [OP_OPTIMIZATION_BARRIER] = infer_pass_through,
  /* shape_inference_async.c */
  [OP_AFTER_ALL] = infer_after_all, [OP_ADD_DEPENDENCY] = infer_add_dependency,
  [OP_DOMAIN] = infer_pass_through, [OP_SHUFFLE] = infer_declared,
  [OP_ASYNC_START] = infer_async_start, [OP_ASYNC_UPDATE] = infer_async_update,
  [OP_ASYNC_DONE] = infer_async_done, [OP_ALL_REDUCE_START] = infer_collective,
  [OP_ALL_REDUCE_DONE] = infer_pass_through, [OP_ALL_GATHER_START] = infer_all_gather_start,
  [OP_ALL_GATHER_DONE] = infer_async_done, [OP_COLLECTIVE_PERMUTE_START] = infer_collective_permute_start,
  [OP_COLLECTIVE_PERMUTE_DONE] = infer_async_done, [OP_COPY_START] = infer_pair_start,
  [OP_COPY_DONE] = infer_copy_done, [OP_ALL_TO_ALL] = infer_collective,
  [OP_COLLECTIVE_BROADCAST] = infer_collective, [OP_COLLECTIVE_REDUCE] = infer_collective,
  [OP_RAGGED_ALL_TO_ALL] = infer_ragged_all_to_all,
  [OP_SEND] = infer_host_transfer, [OP_SEND_DONE] = infer_host_transfer,
  [OP_RECV] = infer_host_transfer, [OP_RECV_DONE] = infer_host_transfer,
  [OP_INFEED] = infer_host_transfer, [OP_OUTFEED] = infer_host_transfer,
  [OP_GET_DIMENSION_SIZE] = infer_get_dimension_size,
  [OP_SET_DIMENSION_SIZE] = infer_set_dimension_size, [OP_DYNAMIC_RESHAPE] = infer_dynamic_reshape,
  /* shape_inference_extra.c */
  [OP_TOPK] = infer_topk, [OP_SCAN] = infer_scan, [OP_RNG] = infer_rng,
  [OP_RNG_GET_AND_UPDATE_STATE] = infer_rng_get_and_update_state,
  [OP_SCALED_DOT] = infer_scaled_dot, [OP_RAGGED_DOT] = infer_ragged_dot,
};
static_assert(AXLE_OPCODE_COUNT == 136, "a new opcode needs a row in infer_table");

static InferFn *infer_rule(Opcode op) {
  if ((unsigned)op >= OP_COUNT) return NULL;
  if (opcode_form(op) == FORM_UNARY) return infer_unary;
  if (opcode_form(op) == FORM_BINARY) return infer_binary;
  return infer_table[op];
}

/* Whether a and b are unbounded (f32[?]) in the same dims. */
static bool same_unbounded_dims(const Shape *a, const Shape *b) {
  if (shape_is_tuple(a) || shape_is_tuple(b)) return true;  /* the rule refuses those */
  for (int d = 0; d < a->rank || d < b->rank; d++)
    if (shape_dim_is_unbounded(a, d) != shape_dim_is_unbounded(b, d)) return false;
  return true;
}

/* f32[?] (XLA's kUnboundedSize) has no size, so only the rules that pass
 * dimensions through unchanged take it: parameters, custom-calls (their
 * shape is declared), tuples and their elements, and elementwise ops whose
 * operands and result are unbounded in the same dims. XLA infers more (?
 * against a sized dim gives the size, and every other op has a rule for
 * it); those are refused here, at load, located. */
static bool check_unbounded(const Infer *in) {
  const Instruction *inst = in->inst;
  bool any = shape_has_unbounded_dims(&inst->shape);
  for (int k = 0; k < inst->operand_count; k++) any = any || shape_has_unbounded_dims(&inst->operands[k]->shape);
  if (!any) return true;
  Opcode op = inst->opcode;
  bool elementwise = opcode_form(op) == FORM_UNARY || opcode_form(op) == FORM_BINARY;
  if (!elementwise && op != OP_PARAMETER && op != OP_CUSTOM_CALL && op != OP_TUPLE && op != OP_GET_TUPLE_ELEMENT)
    return infer_fail(in, "unbounded dynamic dimensions are not supported here (f32[?] passes through "
                      "parameters, tuples, custom-calls and elementwise ops only)");
  for (int k = 0; elementwise && k <= inst->operand_count; k++) {
    const Shape *s = k < inst->operand_count ? &inst->operands[k]->shape : &inst->shape;
    if (!same_unbounded_dims(s, &inst->operands[0]->shape))
      return infer_fail(in, "unbounded dynamic dimensions are not supported against sized ones (XLA takes the size)");
  }
  return true;
}

/* The rules read the declared inst->shape, and callers may pass
 * &inst->shape as out (the builder does), so the result is built aside and
 * stored only once it is complete; on failure *out is untouched. The
 * result has the default layout unless the declared shape gives one. */
bool infer_shape(const Instruction *inst, Shape *out, Arena *arena, Status *st) {
  Shape result;
  memset(&result, 0, sizeof result);
  Infer in = {inst, &result, arena, st};
  InferFn *rule = infer_rule(inst->opcode);
  if (!rule) return infer_fail(&in, "has no shape rule");
  int arity = opcode_arity(inst->opcode);
  if (arity >= 0 && inst->operand_count != arity)
    return infer_fail(&in, "expects %d operands, got %d", arity, inst->operand_count);
  for (int i = 0; i < inst->operand_count; i++)
    if (!inst->operands[i]) return infer_fail(&in, "operand %d is missing", i);
  if (!check_unbounded(&in) || !rule(&in)) return false;
  /* Layouts are not inferred; a declared one of the same rank is kept (it
   * is what gives a bitcast its meaning). */
  const Shape *declared = &inst->shape;
  if (!shape_is_tuple(&result) && !shape_is_tuple(declared) && declared->has_layout &&
      declared->rank == result.rank) {
    memcpy(result.minor_to_major, declared->minor_to_major, sizeof result.minor_to_major);
    result.has_layout = true;
    result.element_size_bits = declared->element_size_bits;
  }
  *out = result;
  return true;
}
