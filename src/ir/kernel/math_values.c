/* The C-values target of the math programs (math_program.h): a value is
 * its bits and each primitive is done at once, with C's own IEEE
 * operations (fmaf and fma are one fused rounding, sqrtf and sqrt
 * correctly rounded). This is the reference: mathref_* (math_reference.h)
 * runs the algorithms here, and the ulp tests measure it. */
#include "kernel/math_values.h"

#include <math.h>
#include <string.h>

static float f32_of(MathVal v) {
  uint32_t bits = (uint32_t)v;
  float x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

static double f64_of(MathVal v) {
  double x;
  memcpy(&x, &v, sizeof x);
  return x;
}

MathVal math_value_f32(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits;
}

MathVal math_value_f64(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits;
}

float math_value_as_f32(MathVal v) { return f32_of(v); }
double math_value_as_f64(MathVal v) { return f64_of(v); }

static MathVal f32_op(MathOp op, MathVal a, MathVal b, MathVal c) {
  float x = f32_of(a), y = f32_of(b);
  switch (op) {
  case MATH_ADD: return math_value_f32(x + y);
  case MATH_SUB: return math_value_f32(x - y);
  case MATH_MUL: return math_value_f32(x * y);
  case MATH_DIV: return math_value_f32(x / y);
  case MATH_FMA: return math_value_f32(fmaf(x, y, f32_of(c)));
  case MATH_MIN: return x < y ? a : b;
  case MATH_MAX: return x > y ? a : b;
  case MATH_SQRT: return math_value_f32(sqrtf(x));
  case MATH_ABS: return a & 0x7fffffffu;
  case MATH_NEGATE: return (a ^ 0x80000000u) & 0xffffffffu;
  case MATH_COPYSIGN: return (a & 0x7fffffffu) | (b & 0x80000000u);
  case MATH_LESS: return x < y;
  case MATH_EQUAL: return x == y;
  case MATH_IS_NAN: return x != x;
  case MATH_TO_INT: return (uint32_t)(int32_t)x;
  case MATH_WIDEN: return math_value_f64((double)x);
  case MATH_BITS: return a & 0xffffffffu;
  default: return 0;
  }
}

static MathVal f64_op(MathOp op, MathVal a, MathVal b, MathVal c) {
  double x = f64_of(a), y = f64_of(b);
  const uint64_t sign = UINT64_C(1) << 63;
  switch (op) {
  case MATH_ADD: return math_value_f64(x + y);
  case MATH_SUB: return math_value_f64(x - y);
  case MATH_MUL: return math_value_f64(x * y);
  case MATH_DIV: return math_value_f64(x / y);
  case MATH_FMA: return math_value_f64(fma(x, y, f64_of(c)));
  case MATH_MIN: return x < y ? a : b;
  case MATH_MAX: return x > y ? a : b;
  case MATH_SQRT: return math_value_f64(sqrt(x));
  case MATH_ABS: return a & ~sign;
  case MATH_NEGATE: return a ^ sign;
  case MATH_COPYSIGN: return (a & ~sign) | (b & sign);
  case MATH_LESS: return x < y;
  case MATH_EQUAL: return x == y;
  case MATH_IS_NAN: return x != x;
  case MATH_TO_INT: return (uint64_t)(int64_t)x;
  case MATH_NARROW: return math_value_f32((float)x);
  case MATH_BITS: return a;
  default: return 0;
  }
}

/* The high 64 bits of a b, from 32-bit halves. */
static uint64_t multiply_high(uint64_t a, uint64_t b) {
  uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t middle = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
}

/* Integer lanes of `bits` bits: results are cut to the width, so that an
 * i32's upper half stays zero. */
static MathVal integer_op(MathOp op, int bits, MathVal a, MathVal b) {
  uint64_t mask = bits == 32 ? 0xffffffffu : ~UINT64_C(0);
  int64_t sa = bits == 32 ? (int64_t)(int32_t)a : (int64_t)a;
  int64_t sb = bits == 32 ? (int64_t)(int32_t)b : (int64_t)b;
  switch (op) {
  case MATH_ADD: return (a + b) & mask;
  case MATH_SUB: return (a - b) & mask;
  case MATH_MUL: return (a * b) & mask;
  case MATH_AND: return a & b;
  case MATH_OR: return a | b;
  case MATH_XOR: return a ^ b;
  case MATH_LESS_UNSIGNED: return (a & mask) < (b & mask);
  case MATH_MULTIPLY_HIGH: return multiply_high(a, b);
  case MATH_SHIFT_LEFT:
  case MATH_SHIFT_LEFT_BY: return (a << b) & mask;
  /* >> of a negative signed value is the arithmetic shift on every
   * compiler axle supports (implementation-defined in C11) */
  case MATH_SHIFT_RIGHT: return (uint64_t)(sa >> b) & mask;
  case MATH_SHIFT_RIGHT_LOGICAL:
  case MATH_SHIFT_RIGHT_LOGICAL_BY: return (a & mask) >> b;
  case MATH_LESS: return sa < sb;
  case MATH_EQUAL: return a == b;
  case MATH_TO_FLOAT: return bits == 32 ? math_value_f32((float)(int32_t)a) : math_value_f64((double)(int64_t)a);
  case MATH_FROM_BITS: return a;
  case MATH_EXTEND:
  case MATH_TRUNCATE: return a & 0xffffffffu;
  default: return 0;
  }
}

static MathVal values_op(MathTarget *t, MathOp op, MathType type, MathVal a, MathVal b, MathVal c) {
  (void)t;
  if (op == MATH_SELECT) return a ? b : c;
  switch (type) {
  case MATH_F32: return f32_op(op, a, b, c);
  case MATH_F64: return f64_op(op, a, b, c);
  case MATH_I32: return integer_op(op, 32, a, b);
  case MATH_I64: return integer_op(op, 64, a, b);
  case MATH_MASK:
    if (op == MATH_NOT) return !a;
    if (op == MATH_XOR) return !a != !b;
    return op == MATH_AND ? (a && b) : (a || b);
  }
  return 0;
}

static MathVal values_constant(MathTarget *t, MathType type, uint64_t bits) {
  (void)t, (void)type;
  return bits;
}

static void values_load_row(MathTarget *t, const MathRows *table, MathVal row, MathVal *entries) {
  (void)t;
  size_t stride = (size_t)(table->stride ? table->stride : table->columns);
  size_t first = (size_t)(uint32_t)row * stride;
  for (int j = 0; j < table->columns; j++) {
    if (table->type == MATH_F64) entries[j] = math_value_f64(((const double *)table->entries)[first + (size_t)j]);
    else if (table->type == MATH_I64) entries[j] = ((const uint64_t *)table->entries)[first + (size_t)j];
    else entries[j] = ((const uint32_t *)table->entries)[first + (size_t)j];
  }
}

MathTarget math_values_target(void) {
  return (MathTarget){.op = values_op, .constant = values_constant, .load_row = values_load_row};
}

float math_values_run_f32(MathFunction fn, float x) {
  MathTarget t = math_values_target();
  return math_value_as_f32(fn(&t, &math_format_f32, math_value_f32(x)));
}

double math_values_run_f64(MathFunction fn, double x) {
  MathTarget t = math_values_target();
  return math_value_as_f64(fn(&t, &math_format_f64, math_value_f64(x)));
}
