/* Elementwise arithmetic: each result element depends only on the operand
 * elements at the same index. The type conversions (convert,
 * bitcast-convert, reduce-precision) live in eval_convert.c.
 *
 * Numbers follow XLA's evaluator exactly:
 *   - f32 is computed in float, f64 in double, f16 and bf16 in float with
 *     the result rounded back to nearest even;
 *   - integers are carried in 64 bits (sign- or zero-extended by type),
 *     computed in unsigned arithmetic so that overflow is defined, and
 *     wrap when stored at the element width;
 *   - pred is one byte holding 0 or 1; arithmetic on it behaves as on C++
 *     bool (add is or, multiply is and). */
#include <math.h>

#include "eval_internal.h"
#include "kernel/math_reference.h"

/* ---- shared checks and integer helpers ---- */


/* For operands the verifier would have rejected (modules built in C). */
static Literal *malformed(const Instruction *inst, const char *why, Status *st) {
  status_error(st, STATUS_VERIFY_ERROR, "%s: %s", opcode_name(inst->opcode), why);
  return NULL;
}

static bool is_signed_type(ElementType t) { return type_kind(t) == TYPE_KIND_SINT; }

static uint64_t width_mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

static int64_t sign_extend(uint64_t v, int bits) {
  if (bits >= 64) return (int64_t)v;
  uint64_t top = 1ull << (bits - 1);
  return (int64_t)(((v & width_mask(bits)) ^ top) - top);
}

/* Loaded integers are already sign- or zero-extended to 64 bits by type. */
static bool int_less(uint64_t a, uint64_t b, bool is_signed) {
  return is_signed ? (int64_t)a < (int64_t)b : a < b;
}

static uint64_t load_int(const Literal *lit, int64_t i) {
  return (uint64_t)literal_get_s64(lit, i);
}

static Literal *unsupported_type(const Instruction *inst, ElementType t, Status *st) {
  status_error(st, STATUS_UNSUPPORTED, "%s is not defined on %s", opcode_name(inst->opcode),
               type_name(t));
  return NULL;
}

/* ---- unary ops on floats ---- */

static float negate_f32(float x) { return -x; }
static double negate_f64(double x) { return -x; }
static float logistic_f32(float x) { return 1.0f / (1.0f + expf(-x)); }
static double logistic_f64(double x) { return 1.0 / (1.0 + exp(-x)); }
static float rsqrt_f32(float x) { return 1.0f / sqrtf(x); }
static double rsqrt_f64(double x) { return 1.0 / sqrt(x); }
/* sign: NaN stays NaN; zeros keep their sign; otherwise -1 or 1. */
static float sign_f32(float x) { return isnan(x) ? x : copysignf(x != 0.0f, x); }
static double sign_f64(double x) { return isnan(x) ? x : copysign(x != 0.0, x); }
/* round-nearest-even under the default rounding mode, which nothing in
 * axle changes; round-nearest-afz is C's round (halves away from zero). */
static float round_even_f32(float x) { return nearbyintf(x); }
static double round_even_f64(double x) { return nearbyint(x); }

/* One row per unary float op: the float function and the double one. */
typedef struct FloatUnaryRow {
  Opcode op;
  float (*f32)(float);
  double (*f64)(double);
} FloatUnaryRow;

static const FloatUnaryRow float_unary_table[] = {
    {OP_ABS, fabsf, fabs},
    {OP_ACOS, acosf, acos},
    {OP_ACOSH, acoshf, acosh},
    {OP_ASIN, asinf, asin},
    {OP_ASINH, asinhf, asinh},
    {OP_ATAN, atanf, atan},
    {OP_ATANH, atanhf, atanh},
    {OP_CBRT, cbrtf, cbrt},
    {OP_CEIL, ceilf, ceil},
    {OP_COSH, coshf, cosh},
    {OP_COSINE, cosf, cos},
    {OP_ERF, erff, erf},
    {OP_EXPONENTIAL, mathref_expf, mathref_exp}, /* the compiled code's algorithm, bit for bit */
    {OP_EXPONENTIAL_MINUS_ONE, expm1f, expm1},
    {OP_FLOOR, floorf, floor},
    {OP_LOG, logf, log},
    {OP_LOG_PLUS_ONE, log1pf, log1p},
    {OP_LOGISTIC, logistic_f32, logistic_f64},
    {OP_NEGATE, negate_f32, negate_f64},
    {OP_ROUND_NEAREST_AFZ, roundf, round},
    {OP_ROUND_NEAREST_EVEN, round_even_f32, round_even_f64},
    {OP_RSQRT, rsqrt_f32, rsqrt_f64},
    {OP_SIGN, sign_f32, sign_f64},
    {OP_SINE, sinf, sin},
    {OP_SINH, sinhf, sinh},
    {OP_SQRT, sqrtf, sqrt},
    {OP_TAN, tanf, tan},
    {OP_TANH, tanhf, tanh},
};

static const FloatUnaryRow *find_float_unary(Opcode op) {
  for (size_t i = 0; i < sizeof float_unary_table / sizeof float_unary_table[0]; i++)
    if (float_unary_table[i].op == op) return &float_unary_table[i];
  return NULL;
}

static Literal *float_unary(const Instruction *inst, const Literal *x, Status *st) {
  ElementType t = x->shape.type;
  int64_t n = shape_element_count(&x->shape);
  if (inst->opcode == OP_IS_FINITE) {
    Literal *out = literal_create(&inst->shape);
    for (int64_t i = 0; i < n; i++) literal_set_s64(out, i, isfinite(literal_get_f64(x, i)) != 0);
    return out;
  }
  const FloatUnaryRow *row = find_float_unary(inst->opcode);
  if (!row) return unsupported_type(inst, t, st);
  Literal *out = literal_create(&inst->shape);
  for (int64_t i = 0; i < n; i++) {
    double v = literal_get_f64(x, i);
    literal_set_f64(out, i, t == TYPE_F64 ? row->f64(v) : (double)row->f32((float)v));
  }
  return out;
}

/* ---- unary ops on integers and pred ---- */

static bool int_unary_value(Opcode op, uint64_t a, ElementType t, uint64_t *out) {
  int bits = type_bit_width(t);
  bool is_signed = is_signed_type(t);
  switch (op) {
  /* abs of the most negative value wraps back to itself, as in XLA. */
  case OP_ABS: *out = is_signed && (int64_t)a < 0 ? 0 - a : a; return true;
  case OP_NEGATE: *out = 0 - a; return true;
  case OP_SIGN:
    *out = is_signed ? (uint64_t)(((int64_t)a > 0) - ((int64_t)a < 0)) : (uint64_t)(a != 0);
    return true;
  /* not is logical on pred (a byte 0/1) and bitwise on integers. */
  case OP_NOT: *out = t == TYPE_PRED ? (uint64_t)(a == 0) : ~a; return true;
  case OP_POPCNT: *out = (uint64_t)__builtin_popcountll(a & width_mask(bits)); return true;
  case OP_CLZ: {
    uint64_t v = a & width_mask(bits);
    *out = v == 0 ? (uint64_t)bits : (uint64_t)(__builtin_clzll(v) - (64 - bits));
    return true;
  }
  default: return false;
  }
}

static Literal *int_unary(const Instruction *inst, const Literal *x, Status *st) {
  ElementType t = x->shape.type;
  uint64_t probe;
  if (!int_unary_value(inst->opcode, 0, t, &probe)) return unsupported_type(inst, t, st);
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&x->shape);
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = 0;
    int_unary_value(inst->opcode, load_int(x, i), t, &v);
    literal_set_s64(out, i, (int64_t)v);
  }
  return out;
}

Literal *eval_unary(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *x = operands[0];
  if (!eval_check_same_dims(inst, x, st)) return NULL;
  if (type_is_complex(x->shape.type)) return eval_complex_unary(inst, x, st);
  ElementType want = inst->opcode == OP_IS_FINITE ? TYPE_PRED : x->shape.type;
  if (inst->shape.type != want)
    return malformed(inst, "the result has the wrong element type", st);
  if (type_is_float(x->shape.type)) return float_unary(inst, x, st);
  return int_unary(inst, x, st);
}

/* ---- binary ops ---- */

/* maximum and minimum return a NaN operand (the left one first), else
 * behave as std::max/std::min: max(-0, +0) is the left operand. */
static float binary_f32(Opcode op, float a, float b) {
  switch (op) {
  case OP_ADD: return a + b;
  case OP_SUBTRACT: return a - b;
  case OP_MULTIPLY: return a * b;
  case OP_DIVIDE: return a / b;
  case OP_REMAINDER: return fmodf(a, b);  /* the sign of the dividend */
  case OP_MAXIMUM: return isnan(a) ? a : isnan(b) ? b : a < b ? b : a;
  case OP_MINIMUM: return isnan(a) ? a : isnan(b) ? b : b < a ? b : a;
  case OP_POWER: return powf(a, b);  /* pow(1, y) = pow(x, 0) = 1, even for NaN */
  case OP_ATAN2: return atan2f(a, b);
  default: return NAN;
  }
}

static double binary_f64(Opcode op, double a, double b) {
  switch (op) {
  case OP_ADD: return a + b;
  case OP_SUBTRACT: return a - b;
  case OP_MULTIPLY: return a * b;
  case OP_DIVIDE: return a / b;
  case OP_REMAINDER: return fmod(a, b);
  case OP_MAXIMUM: return isnan(a) ? a : isnan(b) ? b : a < b ? b : a;
  case OP_MINIMUM: return isnan(a) ? a : isnan(b) ? b : b < a ? b : a;
  case OP_POWER: return pow(a, b);
  case OP_ATAN2: return atan2(a, b);
  default: return NAN;
  }
}

static bool float_binary_defined(Opcode op) {
  switch (op) {
  case OP_ADD: case OP_SUBTRACT: case OP_MULTIPLY: case OP_DIVIDE: case OP_REMAINDER:
  case OP_MAXIMUM: case OP_MINIMUM: case OP_POWER: case OP_ATAN2:
    return true;
  default:
    return false;
  }
}

/* Integer division as XLA defines it (no trap): x / 0 is -1 for signed
 * types and the maximum value for unsigned ones, INT_MIN / -1 is INT_MIN. */
static uint64_t int_divide(uint64_t a, uint64_t b, bool is_signed) {
  if (b == 0) return ~0ull;
  if (!is_signed) return a / b;
  if ((int64_t)b == -1) return 0 - a;
  return (uint64_t)((int64_t)a / (int64_t)b);
}

/* x % 0 is x; INT_MIN % -1 is 0. The sign follows the dividend. */
static uint64_t int_remainder(uint64_t a, uint64_t b, bool is_signed) {
  if (b == 0) return a;
  if (!is_signed) return a % b;
  if ((int64_t)b == -1) return 0;
  return (uint64_t)((int64_t)a % (int64_t)b);
}

/* Exponentiation by squaring, wrapping at the width. XLA's rule for the
 * corner cases: 1^y = x^0 = 1; a negative exponent gives 0 for every other
 * base (including -1). On pred this is lhs || !rhs. */
static uint64_t int_power(uint64_t base, uint64_t exponent, bool is_signed) {
  if (base == 1 || exponent == 0) return 1;
  if (is_signed && (int64_t)exponent < 0) return 0;
  uint64_t result = 1;
  while (exponent) {
    if (exponent & 1) result *= base;
    base *= base;
    exponent >>= 1;
  }
  return result;
}

/* Shift counts are read as unsigned at the element width, so a negative
 * count is a huge one; a count at or past the width shifts everything out:
 * 0 for the left and logical shifts, the sign fill for the arithmetic one.
 * The arithmetic shift reads the left operand as signed even for unsigned
 * element types. */
static uint64_t int_shift(Opcode op, uint64_t a, uint64_t b, int bits) {
  uint64_t count = b & width_mask(bits);
  int64_t as_signed = sign_extend(a, bits);
  if (count >= (uint64_t)bits) {
    if (op == OP_SHIFT_RIGHT_ARITHMETIC) return as_signed < 0 ? ~0ull : 0;
    return 0;
  }
  switch (op) {
  case OP_SHIFT_LEFT: return a << count;
  case OP_SHIFT_RIGHT_LOGICAL: return (a & width_mask(bits)) >> count;
  default:
    return as_signed < 0 ? ~(~(uint64_t)as_signed >> count) : (uint64_t)as_signed >> count;
  }
}

/* mulhi: the high half of the double-width product, at the element width
 * (signed or unsigned by type). Operands arrive sign- or zero-extended to
 * 64 bits, so below 64 bits the exact product fits in 128. */
static uint64_t int_mulhi(uint64_t a, uint64_t b, bool is_signed, int bits) {
  if (is_signed) {
    __int128 p = (__int128)(int64_t)a * (__int128)(int64_t)b;
    return (uint64_t)(p >> bits);
  }
  unsigned __int128 p = (unsigned __int128)a * b;
  return (uint64_t)(p >> bits);
}

static bool int_binary_value(Opcode op, uint64_t a, uint64_t b, ElementType t, uint64_t *out) {
  bool is_signed = is_signed_type(t);
  switch (op) {
  case OP_ADD: *out = a + b; return true;
  case OP_SUBTRACT: *out = a - b; return true;
  case OP_MULTIPLY: *out = a * b; return true;
  case OP_DIVIDE: *out = int_divide(a, b, is_signed); return true;
  case OP_REMAINDER: *out = int_remainder(a, b, is_signed); return true;
  case OP_MAXIMUM: *out = int_less(a, b, is_signed) ? b : a; return true;
  case OP_MINIMUM: *out = int_less(b, a, is_signed) ? b : a; return true;
  case OP_POWER: *out = int_power(a, b, is_signed); return true;
  case OP_AND: *out = a & b; return true;
  case OP_OR: *out = a | b; return true;
  case OP_XOR: *out = a ^ b; return true;
  case OP_MULHI:
    if (t == TYPE_PRED) return false;
    *out = int_mulhi(a, b, is_signed, type_bit_width(t));
    return true;
  case OP_SHIFT_LEFT: case OP_SHIFT_RIGHT_LOGICAL: case OP_SHIFT_RIGHT_ARITHMETIC:
    if (t == TYPE_PRED) return false;
    *out = int_shift(op, a, b, type_bit_width(t));
    return true;
  default: return false;
  }
}

Literal *eval_binary(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *lhs = operands[0], *rhs = operands[1];
  if (!eval_check_same_dims(inst, lhs, st) || !eval_check_same_dims(inst, rhs, st)) return NULL;
  ElementType t = lhs->shape.type;
  if (rhs->shape.type != t || inst->shape.type != t)
    return malformed(inst, "operands and result must have one element type", st);
  if (type_is_complex(t)) return eval_complex_binary(inst, lhs, rhs, st);
  int64_t n = shape_element_count(&lhs->shape);
  Opcode op = inst->opcode;
  uint64_t probe;
  if (type_is_float(t) ? !float_binary_defined(op) : !int_binary_value(op, 0, 1, t, &probe))
    return unsupported_type(inst, t, st);
  Literal *out = literal_create(&inst->shape);
  for (int64_t i = 0; i < n; i++) {
    if (t == TYPE_F64) {
      literal_set_f64(out, i, binary_f64(op, literal_get_f64(lhs, i), literal_get_f64(rhs, i)));
    } else if (type_is_float(t)) {
      float a = (float)literal_get_f64(lhs, i), b = (float)literal_get_f64(rhs, i);
      literal_set_f64(out, i, binary_f32(op, a, b));
    } else {
      uint64_t v = 0;
      int_binary_value(op, load_int(lhs, i), load_int(rhs, i), t, &v);
      literal_set_s64(out, i, (int64_t)v);
    }
  }
  return out;
}

/* ---- compare ---- */

/* The total order on floats: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
 * Flipping the magnitude bits of negative values turns the sign-magnitude
 * encoding into a two's complement integer with that order. */
static int64_t total_order_key(const Literal *lit, int64_t i) {
  const char *p = (const char *)lit->data;
  switch (lit->shape.type) {
  case TYPE_F64: {
    int64_t v;
    memcpy(&v, p + 8 * i, 8);
    return v < 0 ? v ^ INT64_MAX : v;
  }
  case TYPE_F32: {
    int32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v < 0 ? v ^ INT32_MAX : v;
  }
  default: {
    if (type_is_minifloat(lit->shape.type)) {
      /* One byte, sign-magnitude in the type's width (f4 has 4 bits);
       * f8e8m0fnu has no sign, so its bits are already in order. */
      int bits = type_bit_width(lit->shape.type);
      int64_t v = ((const uint8_t *)p)[i], sign = 1 << (bits - 1);
      if (lit->shape.type == TYPE_F8E8M0FNU) return v;
      return v & sign ? -(v & (sign - 1)) - 1 : v;
    }
    int16_t v;
    memcpy(&v, p + 2 * i, 2);
    return v < 0 ? v ^ INT16_MAX : v;
  }
  }
}

/* order: -1, 0 or 1; unordered: a NaN took part (only NE holds). */
static bool direction_holds(CompareDirection d, int order, bool unordered) {
  if (unordered) return d == CMP_NE;
  switch (d) {
  case CMP_EQ: return order == 0;
  case CMP_NE: return order != 0;
  case CMP_LT: return order < 0;
  case CMP_LE: return order <= 0;
  case CMP_GT: return order > 0;
  default: return order >= 0;
  }
}

static int order_of(bool less, bool greater) { return less ? -1 : greater ? 1 : 0; }

static bool compare_element(const Literal *lhs, const Literal *rhs, int64_t i, CompareType type,
                            CompareDirection d) {
  if (type == CMP_TYPE_TOTALORDER) {
    int64_t a = total_order_key(lhs, i), b = total_order_key(rhs, i);
    return direction_holds(d, order_of(a < b, a > b), false);
  }
  if (type == CMP_TYPE_FLOAT) {
    double a = literal_get_f64(lhs, i), b = literal_get_f64(rhs, i);
    return direction_holds(d, order_of(a < b, a > b), isnan(a) || isnan(b));
  }
  uint64_t a = load_int(lhs, i), b = load_int(rhs, i);
  bool is_signed = type == CMP_TYPE_SIGNED;
  if (is_signed) {
    int bits = type_bit_width(lhs->shape.type);
    a = (uint64_t)sign_extend(a, bits);
    b = (uint64_t)sign_extend(b, bits);
  } else {
    a &= width_mask(type_bit_width(lhs->shape.type));
    b &= width_mask(type_bit_width(lhs->shape.type));
  }
  return direction_holds(d, order_of(int_less(a, b, is_signed), int_less(b, a, is_signed)), false);
}

/* The comparison type an operand type implies; an explicit type= that
 * cannot apply to the operands (FLOAT on integers) falls back to it. */
static CompareType effective_compare_type(CompareType given, ElementType t) {
  if (type_is_float(t))
    return given == CMP_TYPE_TOTALORDER ? CMP_TYPE_TOTALORDER : CMP_TYPE_FLOAT;
  if (given == CMP_TYPE_SIGNED || given == CMP_TYPE_UNSIGNED) return given;
  return is_signed_type(t) ? CMP_TYPE_SIGNED : CMP_TYPE_UNSIGNED;
}

Literal *eval_compare(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *lhs = operands[0], *rhs = operands[1];
  if (!eval_check_same_dims(inst, lhs, st) || !eval_check_same_dims(inst, rhs, st)) return NULL;
  if (lhs->shape.type != rhs->shape.type)
    return malformed(inst, "the operands' element types differ", st);
  if (type_is_complex(lhs->shape.type)) return eval_complex_compare(inst, lhs, rhs, st);
  CompareType type = effective_compare_type(inst->attrs.compare_type, lhs->shape.type);
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&lhs->shape);
  for (int64_t i = 0; i < n; i++)
    literal_set_s64(out, i, compare_element(lhs, rhs, i, type, inst->attrs.direction));
  return out;
}

/* ---- select and clamp: each result element is a copy of one operand's ---- */

/* select(pred, on_true, on_false); pred is a scalar or has the result's dims. */
Literal *eval_select(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *pred = operands[0], *on_true = operands[1], *on_false = operands[2];
  if (!eval_check_same_dims(inst, on_true, st) || !eval_check_same_dims(inst, on_false, st)) return NULL;
  if (on_true->shape.type != inst->shape.type || on_false->shape.type != inst->shape.type)
    return malformed(inst, "both choices must have the result's element type", st);
  if (pred->shape.type == TYPE_TUPLE || (pred->shape.rank != 0 && !eval_check_same_dims(inst, pred, st)))
    return malformed(inst, "the predicate must be a scalar or have the result's dimensions", st);
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&inst->shape);
  for (int64_t i = 0; i < n; i++) {
    bool p = literal_get_s64(pred, pred->shape.rank == 0 ? 0 : i) != 0;
    literal_copy_element(out, i, p ? on_true : on_false, i);
  }
  return out;
}

/* One element of one operand. */
typedef struct ElementRef {
  const Literal *lit;
  int64_t index;
} ElementRef;

static bool element_is_nan(ElementRef e) {
  return type_is_float(e.lit->shape.type) && isnan(literal_get_f64(e.lit, e.index));
}

/* a < b in the element type's order; never called on NaN. */
static bool element_less(ElementRef a, ElementRef b) {
  ElementType t = a.lit->shape.type;
  if (type_is_float(t)) return literal_get_f64(a.lit, a.index) < literal_get_f64(b.lit, b.index);
  return int_less(load_int(a.lit, a.index), load_int(b.lit, b.index), is_signed_type(t));
}

/* clamp(lo, x, hi) = std::min(hi, std::max(x, lo)); a NaN in lo, then x,
 * then hi is the result. */
static ElementRef clamp_pick(ElementRef lo, ElementRef x, ElementRef hi) {
  if (element_is_nan(lo)) return lo;
  if (element_is_nan(x)) return x;
  if (element_is_nan(hi)) return hi;
  ElementRef at_least_lo = element_less(x, lo) ? lo : x;
  return element_less(at_least_lo, hi) ? at_least_lo : hi;
}

/* lo and hi may be scalars or have the operand's shape. */
Literal *eval_clamp(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *lo = operands[0], *x = operands[1], *hi = operands[2];
  if (!eval_check_same_dims(inst, x, st)) return NULL;
  if (x->shape.type != inst->shape.type)
    return malformed(inst, "the operand must have the result's element type", st);
  for (int k = 0; k < 3; k += 2) {
    const Literal *bound = operands[k];
    if (bound->shape.type != x->shape.type ||
        (bound->shape.rank != 0 && !shape_same_dims(&bound->shape, &x->shape)))
      return malformed(inst, "the bounds must be scalars or match the operand", st);
  }
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&x->shape);
  for (int64_t i = 0; i < n; i++) {
    ElementRef pick = clamp_pick((ElementRef){lo, lo->shape.rank == 0 ? 0 : i}, (ElementRef){x, i},
                                 (ElementRef){hi, hi->shape.rank == 0 ? 0 : i});
    literal_copy_element(out, i, pick.lit, pick.index);
  }
  return out;
}
