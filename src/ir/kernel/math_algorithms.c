/* The math functions' algorithms, each written once over the primitives
 * of math_program.h; the targets (C values, x86, PTX) give them meaning.
 * docs/math.md states each algorithm and its accuracy.
 *
 * Rules this file keeps, so that every target computes the same bits:
 *   - no branches on data: both sides are computed and a select picks one;
 *   - every float operation is one primitive (one rounding; fma one fused
 *     rounding; min and max as the primitives define them);
 *   - no call has two arguments that emit operations: C leaves the order
 *     of their evaluation open, and the emitted text (x86 code, PTX) must
 *     not depend on the C compiler; such values are named first, in order.
 * f32 and f64 share an algorithm where its shape is the same; a
 * MathFormat gives the width's types, exponent field, constants and
 * tables. */
#include "kernel/math_program.h"

#include <string.h>

#include "kernel/math_reference.h"

const MathFormat math_format_f32 = {
    .real = MATH_F32,
    .integer = MATH_I32,
    .mantissa_bits = 23,
    .exponent_bias = 127,
    .round_shifter = MATHREF_ROUND_SHIFTER_F32,
    .log2e = MATHREF_LOG2E,
    .ln2_hi = MATHREF_LN2_HI,
    .ln2_lo = MATHREF_LN2_LO,
    .exp_low = -104.0,
    .exp_high = 89.0,
    .exp_table = {.f32 = mathref_exp_table, .count = MATHREF_EXP_COUNT},
};

const MathFormat math_format_f64 = {
    .real = MATH_F64,
    .integer = MATH_I64,
    .mantissa_bits = 52,
    .exponent_bias = 1023,
    .round_shifter = MATHREF_ROUND_SHIFTER_F64,
    .log2e = MATHREF_LOG2E_F64,
    .ln2_hi = MATHREF_LN2_HI_F64,
    .ln2_lo = MATHREF_LN2_LO_F64,
    .exp_low = -746.0,
    .exp_high = 710.0,
    .exp_table = {.f64 = mathref_exp_f64_table, .count = MATHREF_EXP_F64_COUNT},
};

MathVal mp_real(MathTarget *t, MathType real, double c) {
  if (real == MATH_F32) {
    float single = (float)c;
    uint32_t bits;
    memcpy(&bits, &single, sizeof bits);
    return t->constant(t, MATH_F32, bits);
  }
  uint64_t bits;
  memcpy(&bits, &c, sizeof bits);
  return t->constant(t, MATH_F64, bits);
}

MathVal mp_int(MathTarget *t, MathType integer, int64_t c) {
  uint64_t bits = (uint64_t)c;
  if (integer == MATH_I32) bits &= 0xffffffffu;
  return t->constant(t, integer, bits);
}

static int scope_begin(MathTarget *t) { return t->scope_begin ? t->scope_begin(t) : 0; }

static MathVal scope_end(MathTarget *t, int scope, MathVal result) {
  return t->scope_end ? t->scope_end(t, scope, result) : result;
}

/* ---- helpers shared by the algorithms ---- */

static double table_entry(const MathTable *table, int k) { return table->f32 ? table->f32[k] : table->f64[k]; }

/* Horner's rule, one fma per coefficient: c[0] + c[1] v + ... */
static MathVal polynomial(MathTarget *t, MathType real, const MathTable *table, MathVal v) {
  MathVal p = mp_real(t, real, table_entry(table, table->count - 1));
  for (int k = table->count - 2; k >= 0; k--) {
    MathVal ck = mp_real(t, real, table_entry(table, k));
    p = mp_op(t, MATH_FMA, real, p, v, ck);
  }
  return p;
}

/* min(max(x, low), high) */
static MathVal clamp(MathTarget *t, MathType real, MathVal x, double low, double high) {
  MathVal rlow = mp_real(t, real, low);
  MathVal above = mp_binary(t, MATH_MAX, real, x, rlow);
  MathVal rhigh = mp_real(t, real, high);
  return mp_binary(t, MATH_MIN, real, above, rhigh);
}

/* 2^n for an integer n of the normal exponents, built in the exponent
 * field. */
static MathVal power_of_two(MathTarget *t, const MathFormat *f, MathVal n) {
  MathVal bias = mp_int(t, f->integer, f->exponent_bias);
  MathVal biased = mp_binary(t, MATH_ADD, f->integer, n, bias);
  MathVal bits = mp_shift(t, MATH_SHIFT_LEFT, f->integer, biased, f->mantissa_bits);
  return mp_unary(t, MATH_FROM_BITS, f->integer, bits);
}

/* The last step of every function: a NaN x returns x + x (quieted). */
static MathVal nan_passed(MathTarget *t, MathType real, MathVal x, MathVal y) {
  MathVal nan = mp_unary(t, MATH_IS_NAN, real, x);
  MathVal quieted = mp_binary(t, MATH_ADD, real, x, x);
  return mp_select(t, real, nan, quieted, y);
}

/* ---- exp ---- */

/* x = n ln2 + r with |r| <= ln2/2: n from one fma with the rounding
 * constant, ln2 in two parts (x - n LN2_HI is exact inside the fma, see
 * MATHREF_LN2_HI). Returns r, and n (a float holding an integer). */
static MathVal exp_reduce(MathTarget *t, const MathFormat *f, MathVal x, MathVal *n) {
  MathType real = f->real;
  MathVal log2e = mp_real(t, real, f->log2e);
  MathVal shifter = mp_real(t, real, f->round_shifter);
  MathVal shifted = mp_op(t, MATH_FMA, real, x, log2e, shifter);
  *n = mp_binary(t, MATH_SUB, real, shifted, shifter);
  MathVal minus_ln2_hi = mp_real(t, real, -f->ln2_hi);
  MathVal r = mp_op(t, MATH_FMA, real, *n, minus_ln2_hi, x);
  MathVal minus_ln2_lo = mp_real(t, real, -f->ln2_lo);
  return mp_op(t, MATH_FMA, real, *n, minus_ln2_lo, r);
}

/* exp(x) = 2^n e^r, e^r = 1 + r + r^2 P(r). x is first clamped to where
 * the result is neither 0 nor inf anyway. 2^n is applied in two halves,
 * each a normal power of two, so that a subnormal result is rounded once,
 * by the last multiply. */
MathVal math_program_exp(MathTarget *t, const MathFormat *f, MathVal x) {
  int scope = scope_begin(t);
  MathType real = f->real, integer = f->integer;
  MathVal n;
  MathVal r = exp_reduce(t, f, clamp(t, real, x, f->exp_low, f->exp_high), &n);
  MathVal poly = polynomial(t, real, &f->exp_table, r);
  MathVal r2 = mp_binary(t, MATH_MUL, real, r, r);
  MathVal one = mp_real(t, real, 1.0);
  MathVal p = mp_binary(t, MATH_ADD, real, one, mp_op(t, MATH_FMA, real, r2, poly, r));
  MathVal ni = mp_unary(t, MATH_TO_INT, real, n);
  MathVal n1 = mp_shift(t, MATH_SHIFT_RIGHT, integer, ni, 1);
  MathVal n2 = mp_binary(t, MATH_SUB, integer, ni, n1);
  MathVal scale1 = power_of_two(t, f, n1);
  MathVal scale2 = power_of_two(t, f, n2);
  MathVal y = mp_binary(t, MATH_MUL, real, mp_binary(t, MATH_MUL, real, p, scale1), scale2);
  return scope_end(t, scope, nan_passed(t, real, x, y));
}
