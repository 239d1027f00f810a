/* Element type conversions: convert (by value), bitcast-convert (by bits),
 * stochastic-convert (rounding by random bits) and reduce-precision
 * (rounding to a narrower float format in place).
 *
 * convert follows XLA's Literal::Convert:
 *   - float to integer saturates at the integer's range, NaN gives 0;
 *   - integer to float rounds to nearest even;
 *   - anything to pred is x != 0 (so NaN is true);
 *   - between integer widths the value wraps (two's complement truncation);
 *   - float to float rounds once, to nearest even, from the value itself
 *     (IEEE's convertFormat): f64 to f16 or bf16 does not round to f32
 *     first, which would round twice (1 + 2^-11 + 2^-40 would become f16
 *     1.0 where the one rounding gives 1 + 2^-10); overflow, NaN and -0
 *     of the f8 and f4 types follow the type (minifloat.c);
 *   - an integer to f16, bf16 or an f8/f4 type rounds to float first, as
 *     XLA's half/bfloat16 and ml_dtypes' constructors do;
 *   - to s4/u4/s2/u2 the rules of the wider integers apply at 4 or 2 bits. */
#include <math.h>

#include "eval_internal.h"


/* ---- convert ---- */

/* The range of an integer type, as doubles: exactly 2^k or -2^k, or 0. */
static void int_range_as_double(ElementType t, double *lowest, double *past_max) {
  int bits = type_bit_width(t);
  if (type_kind(t) == TYPE_KIND_SINT) {
    *lowest = -ldexp(1.0, bits - 1);
    *past_max = ldexp(1.0, bits - 1);
  } else {
    *lowest = 0.0;
    *past_max = ldexp(1.0, bits);
  }
}

/* Float to integer: x >= (double)MAX gives MAX, x <= (double)MIN gives MIN
 * (comparing against the type's limits converted to the float type, which
 * round up to 2^k), NaN gives 0, anything else truncates toward zero. */
static void store_float_as_int(Literal *out, int64_t i, double x) {
  ElementType t = out->shape.type;
  double lowest, past_max;
  int_range_as_double(t, &lowest, &past_max);
  if (isnan(x)) {
    literal_set_s64(out, i, 0);
  } else if (x >= past_max) {
    uint64_t max = type_kind(t) == TYPE_KIND_SINT ? (~0ull >> (65 - type_bit_width(t)))
                                                  : (~0ull >> (64 - type_bit_width(t)));
    literal_set_u64(out, i, max);
  } else if (x <= lowest) {
    literal_set_s64(out, i, type_kind(t) == TYPE_KIND_SINT ? (int64_t)lowest : 0);
  } else if (type_kind(t) == TYPE_KIND_UINT) {
    literal_set_u64(out, i, (uint64_t)x);
  } else {
    literal_set_s64(out, i, (int64_t)x);
  }
}

/* An integer (or pred) element converted to the float type t: rounded to
 * float first unless t is f64, as XLA's f16/bf16/f32 constructors do. */
static double int_as_float_value(const Literal *in, int64_t i, ElementType t) {
  bool from_unsigned = in->shape.type == TYPE_U64;
  uint64_t u = literal_get_u64(in, i);
  int64_t s = literal_get_s64(in, i);
  if (t == TYPE_F64) return from_unsigned ? (double)u : (double)s;
  return from_unsigned ? (double)(float)u : (double)(float)s;
}

static void convert_element(Literal *out, int64_t i, const Literal *in) {
  ElementType from = in->shape.type, to = out->shape.type;
  if (type_is_complex(to)) {
    eval_complex_convert_element(out, i, in);
  } else if (to == TYPE_PRED) {
    bool nonzero = type_is_float(from) ? literal_get_f64(in, i) != 0.0
                                       : literal_get_u64(in, i) != 0;
    literal_set_s64(out, i, nonzero);
  } else if (!type_is_float(from) && !type_is_float(to)) {
    literal_set_s64(out, i, literal_get_s64(in, i));
  } else if (!type_is_float(from)) {
    literal_set_f64(out, i, int_as_float_value(in, i, to));
  } else if (!type_is_float(to)) {
    store_float_as_int(out, i, literal_get_f64(in, i));
  } else {
    literal_set_f64(out, i, literal_get_f64(in, i)); /* one rounding, from the value */
  }
}

Literal *eval_convert(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0];
  if (!eval_check_same_dims(inst, in, st)) return NULL;
  if (in->shape.type == inst->shape.type) {
    Literal *out = literal_clone(in);
    out->shape = inst->shape;
    return out;
  }
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&in->shape);
  for (int64_t i = 0; i < n; i++) convert_element(out, i, in);
  return out;
}

/* ---- bitcast-convert ---- */

/* An element's bits, in the low type_bit_width bits (a 4-bit element's
 * byte holds its value sign- or zero-extended; only the low bits count). */
static uint64_t element_bits(const Literal *lit, int64_t i) {
  int size = type_byte_size(lit->shape.type), bits = type_bit_width(lit->shape.type);
  uint64_t v = 0;
  memcpy(&v, (const char *)lit->data + i * size, (size_t)size); /* little-endian host */
  return bits >= 64 ? v : v & ((1ull << bits) - 1);
}

static void element_bits_store(Literal *lit, int64_t i, uint64_t v) {
  if (type_is_integer(lit->shape.type) && type_bit_width(lit->shape.type) < 8) {
    literal_set_u64(lit, i, v); /* sign-extends s4 and s2 */
    return;
  }
  int size = type_byte_size(lit->shape.type);
  memcpy((char *)lit->data + i * size, &v, (size_t)size);
}

/* Elements narrower than a byte (s4, u4, f4e2m1fn, s2, u2): the same rule
 * as the byte-multiple case below, element by element. A wide element i
 * is the narrow elements i*k .. i*k+k-1, the first in its lowest bits. */
static void bitcast_convert_bits(Literal *out, const Literal *in) {
  int from = type_bit_width(in->shape.type), to = type_bit_width(out->shape.type);
  int64_t n_out = shape_element_count(&out->shape);
  if (from >= to) {
    int k = from / to;
    uint64_t mask = to >= 64 ? ~0ull : (1ull << to) - 1;
    for (int64_t o = 0; o < n_out; o++)
      element_bits_store(out, o, (element_bits(in, o / k) >> (o % k * to)) & mask);
    return;
  }
  int k = to / from;
  for (int64_t o = 0; o < n_out; o++) {
    uint64_t v = 0;
    for (int j = 0; j < k; j++) v |= element_bits(in, o * k + j) << (j * from);
    element_bits_store(out, o, v);
  }
}

/* Same width: each element's bits are reinterpreted. Different widths: a
 * wide element splits into narrow ones along a new minor-most dimension, or
 * the minor-most dimension of narrow elements joins into one wide element,
 * least significant part first (XLA's little-endian order). Because literals
 * are row-major, both cases are the same byte sequence read with the new
 * type on a little-endian host, which every axle target is. */
Literal *eval_bitcast_convert(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0];
  if (in->shape.type == TYPE_TUPLE || inst->shape.type == TYPE_TUPLE ||
      shape_element_count(&in->shape) * type_bit_width(in->shape.type) !=
          shape_element_count(&inst->shape) * type_bit_width(inst->shape.type)) {
    status_error(st, STATUS_VERIFY_ERROR, "bitcast-convert: operand and result sizes differ");
    return NULL;
  }
  Literal *out = literal_create(&inst->shape);
  if (type_bit_width(in->shape.type) % 8 == 0 && type_bit_width(inst->shape.type) % 8 == 0)
    memcpy(out->data, in->data, (size_t)shape_byte_size(&in->shape));
  else
    bitcast_convert_bits(out, in);
  return out;
}

/* ---- stochastic-convert ---- */

/* One element, as XLA's evaluator defines it: infinities and values past
 * the integer's range saturate, NaN gives 0; otherwise |x| = t + f with t
 * its integer part, and the result is t + 1 (with x's sign) exactly when
 * random < f * 2^w, w the width of the random type, so it rounds up with
 * probability f over uniform random bits. */
static int64_t stochastic_round(double x, uint64_t random, int random_bits, int result_bits) {
  int64_t max = (int64_t)(~0ull >> (65 - result_bits)), min = -max - 1;
  if (isnan(x)) return 0;
  if (x >= (double)max) return max;
  if (x <= (double)min) return min;
  double magnitude = fabs(x), truncated = floor(magnitude);
  double fraction = magnitude - truncated; /* exact: both are in x's type */
  int64_t t = (int64_t)truncated;
  if (fraction != 0.0 && random < (uint64_t)ldexp(fraction, random_bits)) t++;
  return signbit(x) ? -t : t;
}

Literal *eval_stochastic_convert(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *x = operands[0], *random = operands[1];
  if (!eval_check_same_dims(inst, x, st) || !eval_check_same_dims(inst, random, st)) return NULL;
  if (type_kind(inst->shape.type) != TYPE_KIND_SINT) {
    status_error(st, STATUS_UNSUPPORTED,
                 "stochastic-convert to %s: XLA defines only float to signed integer",
                 type_name(inst->shape.type));
    return NULL;
  }
  Literal *out = literal_create(&inst->shape);
  int random_bits = type_bit_width(random->shape.type), result_bits = type_bit_width(inst->shape.type);
  int64_t n = shape_element_count(&inst->shape);
  for (int64_t i = 0; i < n; i++)
    literal_set_s64(out, i, stochastic_round(literal_get_f64(x, i), literal_get_u64(random, i),
                                             random_bits, result_bits));
  return out;
}

/* ---- reduce-precision ---- */

/* A float format as bit fields: mantissa bits (without the implicit one)
 * and exponent bits, inside an unsigned word of total_bits. */
typedef struct FloatFormat {
  int mantissa_bits, exponent_bits, total_bits;
} FloatFormat;

/* XLA's algorithm (the same in its evaluator and its CPU/GPU emitters):
 * round the mantissa to nearest even by adding a bias and masking; then, if
 * the exponent is narrower, values above the new largest exponent become
 * infinity and values at or below the new smallest become zero (so every
 * denormal of the narrow format is flushed, not rounded). A NaN input stays
 * the same NaN, unless no mantissa bits are kept: then it is +infinity. */
static uint64_t reduce_precision_bits(uint64_t x, FloatFormat src, int exponent_bits,
                                      int mantissa_bits) {
  uint64_t sign_mask = 1ull << (src.total_bits - 1);
  uint64_t exp_mask = ((1ull << src.exponent_bits) - 1) << src.mantissa_bits;
  bool is_nan = (x & ~sign_mask) > exp_mask;
  uint64_t original = x;
  if (mantissa_bits < src.mantissa_bits) {
    int dropped = src.mantissa_bits - mantissa_bits;
    uint64_t last_kept_bit = 1ull << dropped;
    uint64_t bias = (last_kept_bit >> 1) - 1 + ((x & last_kept_bit) >> dropped);
    /* A carry out of the mantissa correctly bumps the exponent. */
    x = (x + bias) & ~(last_kept_bit - 1);
    if (src.total_bits < 64) x &= (1ull << src.total_bits) - 1;
  }
  if (exponent_bits < src.exponent_bits) {
    uint64_t bias = (1ull << (src.exponent_bits - 1)) - 1;
    uint64_t reduced_bias = (1ull << (exponent_bits - 1)) - 1;
    uint64_t max_exponent = (bias + reduced_bias) << src.mantissa_bits;
    uint64_t min_exponent = (bias - reduced_bias) << src.mantissa_bits;
    uint64_t exponent = x & exp_mask;
    uint64_t signed_zero = x & sign_mask;
    if (exponent > max_exponent) x = signed_zero | exp_mask;
    if (exponent <= min_exponent) x = signed_zero;
  }
  if (is_nan) x = mantissa_bits > 0 ? original : exp_mask;
  return x;
}

static float reduce_precision_f32(float v, int exponent_bits, int mantissa_bits) {
  static const FloatFormat f32 = {23, 8, 32};
  uint32_t bits;
  memcpy(&bits, &v, 4);
  bits = (uint32_t)reduce_precision_bits(bits, f32, exponent_bits, mantissa_bits);
  memcpy(&v, &bits, 4);
  return v;
}

static double reduce_precision_f64(double v, int exponent_bits, int mantissa_bits) {
  static const FloatFormat f64 = {52, 11, 64};
  uint64_t bits;
  memcpy(&bits, &v, 8);
  bits = reduce_precision_bits(bits, f64, exponent_bits, mantissa_bits);
  memcpy(&v, &bits, 8);
  return v;
}

/* f16 and bf16 are reduced in float (as XLA's evaluator computes them) and
 * rounded back; f32 in float, f64 in double. */
Literal *eval_reduce_precision(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0];
  if (!eval_check_same_dims(inst, in, st)) return NULL;
  int64_t eb = inst->attrs.exponent_bits, mb = inst->attrs.mantissa_bits;
  if (!type_is_float(in->shape.type) || in->shape.type != inst->shape.type) {
    status_error(st, STATUS_VERIFY_ERROR, "reduce-precision needs a floating-point operand");
    return NULL;
  }
  if (eb < 1 || mb < 0) {
    status_error(st, STATUS_VERIFY_ERROR,
                 "reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
    return NULL;
  }
  /* Widths past the source format's change nothing; cap them so the shifts
   * above stay in range. */
  int e = eb > 11 ? 11 : (int)eb, m = mb > 52 ? 52 : (int)mb;
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&in->shape);
  for (int64_t i = 0; i < n; i++) {
    double v = literal_get_f64(in, i);
    if (in->shape.type == TYPE_F64) literal_set_f64(out, i, reduce_precision_f64(v, e, m));
    else literal_set_f64(out, i, reduce_precision_f32((float)v, e, m));
  }
  return out;
}
