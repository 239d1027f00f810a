/* erf and pow, written once over the primitives of math_program.h
 * (math_algorithms.c states the rules). Each has one algorithm per
 * width: erf f32 takes erfc from exp and f64 from a table of Taylor rows
 * (a row load); pow f32 works in f64, and pow f64 carries log2|x| and
 * y log2|x| in two doubles. docs/math.md states their accuracy. */
#include "kernel/math_program.h"

#include <math.h>

#include "kernel/math_reference.h"

/* ---- erf ---- */

/* erf's algorithms differ by width: f32 takes erfc from exp, f64 from a
 * table of Taylor rows.
 *
 * f32: |x| < 1: x + x E(x^2). 1 <= |x|: 1 - e^B(t), t = min(|x|, 4)
 * (past 3.92 erf rounds to 1, and so does 1 - erfc(4)), sign restored. */
static MathVal erf_f32(MathTarget *t, MathVal x) {
  static const MathTable small_table = {.f32 = mathref_erf_table, .count = MATHREF_ERF_SMALL_COUNT};
  static const MathTable large_table = {.f32 = mathref_erf_table + MATHREF_ERF_SMALL_COUNT,
                                        .count = MATHREF_ERF_COUNT - MATHREF_ERF_SMALL_COUNT};
  int scope = mp_scope_begin(t);
  MathType real = MATH_F32;
  MathVal ax = mp_unary(t, MATH_ABS, real, x);
  MathVal one = mp_real(t, real, 1.0);
  MathVal poly_small = mp_polynomial(t, real, &small_table, mp_binary(t, MATH_MUL, real, x, x));
  MathVal small = mp_op(t, MATH_FMA, real, x, poly_small, x);
  MathVal four = mp_real(t, real, 4.0);
  MathVal clamped = mp_binary(t, MATH_MIN, real, ax, four);
  MathVal exponent = mp_polynomial(t, real, &large_table, mp_binary(t, MATH_SUB, real, clamped, one));
  MathVal erfc = math_program_exp(t, &math_format_f32, exponent);
  MathVal large = mp_binary(t, MATH_COPYSIGN, real, mp_binary(t, MATH_SUB, real, one, erfc), x);
  MathVal y = mp_select(t, real, mp_binary(t, MATH_LESS, real, ax, one), small, large);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, y));
}

/* erfc from 1 to 6, row k its Taylor polynomial around 1.25 + k/2. */
static const MathRows erfc_rows_f64 = {
    .symbol = "axle_math_erfc_rows_f64",
    .what = "math_tables.c's erfc rows, for erf",
    .type = MATH_F64,
    .entries = mathref_erfc_f64_rows,
    .rows = MATHREF_ERFC_F64_ROWS,
    .columns = MATHREF_ERFC_F64_COUNT,
};

/* f64, below 1: erf x = x (2/sqrt(pi)) (1 + z S(z)), z = x^2, 2/sqrt(pi)
 * applied in two parts (a one-part constant would add half an ulp
 * everywhere); below 2^-900 x is scaled by 2^64 around the fma, so that
 * its product stays clear of the subnormals (docs/math.md, "Without
 * FMA"), and the scaling back rounds a subnormal result once more. */
static MathVal erf_small_f64(MathTarget *t, MathVal x, MathVal ax) {
  static const MathTable series = {.f64 = mathref_erf_small_f64_table, .count = MATHREF_ERF_SMALL_F64_COUNT};
  MathType real = MATH_F64;
  MathVal z = mp_binary(t, MATH_MUL, real, x, x);
  MathVal w = mp_binary(t, MATH_MUL, real, z, mp_polynomial(t, real, &series, z));
  MathVal tiny = mp_binary(t, MATH_LESS, real, ax, mp_real(t, real, 0x1p-900));
  MathVal up = mp_real(t, real, 0x1p64);
  MathVal xs = mp_select(t, real, tiny, mp_binary(t, MATH_MUL, real, x, up), x);
  MathVal c_hi = mp_real(t, real, MATHREF_TWO_OVER_SQRT_PI_HI_F64);
  MathVal c_lo = mp_real(t, real, MATHREF_TWO_OVER_SQRT_PI_LO_F64);
  MathVal inner = mp_binary(t, MATH_MUL, real, xs, mp_op(t, MATH_FMA, real, c_hi, w, c_lo));
  MathVal small = mp_op(t, MATH_FMA, real, xs, c_hi, inner);
  MathVal down = mp_real(t, real, 0x1p-64);
  return mp_select(t, real, tiny, mp_binary(t, MATH_MUL, real, small, down), small);
}

/* f64: from 1 on 1 - erfc (row k = floor(2 (t - 1)), h the distance to
 * its center, exact); from 6 on erf rounds to 1. */
static MathVal erf_f64(MathTarget *t, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = MATH_F64, integer = MATH_I64;
  MathVal ax = mp_unary(t, MATH_ABS, real, x);
  MathVal small = erf_small_f64(t, x, ax);
  MathVal one = mp_real(t, real, 1.0);
  MathVal six = mp_real(t, real, 6.0);
  MathVal clamped = mp_binary(t, MATH_MIN, real, mp_binary(t, MATH_MAX, real, ax, one), six);
  MathVal two = mp_real(t, real, 2.0);
  MathVal k =
      mp_unary(t, MATH_TO_INT, real, mp_binary(t, MATH_MUL, real, mp_binary(t, MATH_SUB, real, clamped, one), two));
  MathVal last = mp_int(t, integer, MATHREF_ERFC_F64_ROWS - 1);
  k = mp_select(t, integer, mp_binary(t, MATH_LESS, integer, last, k), last, k);
  MathVal first_center = mp_real(t, real, 1.25), half = mp_real(t, real, 0.5);
  MathVal center = mp_binary(t, MATH_ADD, real, first_center,
                             mp_binary(t, MATH_MUL, real, half, mp_unary(t, MATH_TO_FLOAT, integer, k)));
  MathVal h = mp_binary(t, MATH_SUB, real, clamped, center);
  MathVal row[MATHREF_ERFC_F64_COUNT];
  t->load_row(t, &erfc_rows_f64, k, row);
  MathVal erfc = row[MATHREF_ERFC_F64_COUNT - 1];
  for (int j = MATHREF_ERFC_F64_COUNT - 2; j >= 0; j--) erfc = mp_op(t, MATH_FMA, real, erfc, h, row[j]);
  MathVal large = mp_binary(t, MATH_COPYSIGN, real, mp_binary(t, MATH_SUB, real, one, erfc), x);
  MathVal y = mp_select(t, real, mp_binary(t, MATH_LESS, real, ax, one), small, large);
  return mp_scope_end(t, scope, mp_nan_passed(t, real, x, y));
}

MathVal math_program_erf(MathTarget *t, const MathFormat *f, MathVal x) {
  return f->real == MATH_F32 ? erf_f32(t, x) : erf_f64(t, x);
}

/* ---- pow ---- */

/* f32: log2|x| in f64 for |x| > 0 finite: e + log(1+f) log2(e), with
 * log(1+f) = 2s + s^3 P(s^2), s = f / (2 + f); f from log's split in f32
 * (a subnormal x scaled by 2^23 first), exact in f64. */
static MathVal pow_log2_f32(MathTarget *t, MathVal ax) {
  static const MathTable log_table = {.f64 = mathref_pow_table, .count = MATHREF_POW_LOG_COUNT};
  const MathFormat *f = &math_format_f32;
  MathVal limit = mp_real(t, MATH_F32, f->subnormal_limit);
  MathVal subnormal = mp_binary(t, MATH_LESS, MATH_F32, ax, limit);
  MathVal scale = mp_real(t, MATH_F32, 0x1p23);
  MathVal scaled = mp_select(t, MATH_F32, subnormal, mp_binary(t, MATH_MUL, MATH_F32, ax, scale), ax);
  MathVal e;
  MathVal m1 = mp_unary(t, MATH_WIDEN, MATH_F32, mp_log_split(t, f, scaled, &e));
  MathVal shift = mp_int(t, MATH_I32, 23), no_shift = mp_int(t, MATH_I32, 0);
  e = mp_binary(t, MATH_SUB, MATH_I32, e, mp_select(t, MATH_I32, subnormal, shift, no_shift));
  MathVal two = mp_real(t, MATH_F64, 2.0);
  MathVal s = mp_binary(t, MATH_DIV, MATH_F64, m1, mp_binary(t, MATH_ADD, MATH_F64, two, m1));
  MathVal s2 = mp_binary(t, MATH_MUL, MATH_F64, s, s);
  MathVal poly = mp_polynomial(t, MATH_F64, &log_table, s2);
  MathVal twice = mp_binary(t, MATH_MUL, MATH_F64, two, s);
  MathVal log1p_m1 = mp_binary(t, MATH_ADD, MATH_F64, twice,
                               mp_binary(t, MATH_MUL, MATH_F64, mp_binary(t, MATH_MUL, MATH_F64, s, s2), poly));
  /* e is exact in f32 (|e| < 2^8), so in f64 through it */
  MathVal ef = mp_unary(t, MATH_WIDEN, MATH_F32, mp_unary(t, MATH_TO_FLOAT, MATH_I32, e));
  MathVal log2e = mp_real(t, MATH_F64, MATHREF_LOG2E_F64);
  return mp_binary(t, MATH_ADD, MATH_F64, ef, mp_binary(t, MATH_MUL, MATH_F64, log1p_m1, log2e));
}

/* f32: 2^z in f64, rounded once to f32 at the end. z is clamped to
 * [-160, 130], which already gives 0 and inf in f32; 2^n is a normal
 * double there, so the only rounding of a subnormal result is the final
 * narrowing. A NaN z becomes 0 here (the caller's select returns NaN),
 * so that no NaN is converted to an integer. */
static MathVal pow_exp2_f32(MathTarget *t, MathVal z) {
  static const MathTable exp2_table = {.f64 = mathref_pow_table + MATHREF_POW_LOG_COUNT,
                                       .count = MATHREF_POW_COUNT - MATHREF_POW_LOG_COUNT};
  MathType real = MATH_F64;
  MathVal low = mp_real(t, real, -160.0), high = mp_real(t, real, 130.0);
  MathVal zc = mp_select(t, real, mp_binary(t, MATH_LESS, real, high, z), high, z);
  zc = mp_select(t, real, mp_binary(t, MATH_LESS, real, z, low), low, zc);
  zc = mp_select_constant(t, real, mp_unary(t, MATH_IS_NAN, real, z), 0.0, zc);
  MathVal shifter = mp_real(t, real, MATHREF_ROUND_SHIFTER_F64);
  MathVal n = mp_binary(t, MATH_SUB, real, mp_binary(t, MATH_ADD, real, zc, shifter), shifter);
  MathVal r = mp_binary(t, MATH_SUB, real, zc, n);
  MathVal p = mp_polynomial(t, real, &exp2_table, r);
  MathVal scale = mp_power_of_two(t, &math_format_f64, mp_unary(t, MATH_TO_INT, real, n));
  return mp_unary(t, MATH_NARROW, real, mp_binary(t, MATH_MUL, real, p, scale));
}

/* f64: x = 2^e m as log's split; log(m) = 2 atanh(s), s = f / (2 + f),
 * carried in two doubles to about 2^-100: s = s_h + s_l (2 + f split
 * exactly, the division's remainder by an fma); 2s + 2s^3/3 with s^3 and
 * 2/3 in two parts; s^5 (2/5 + 2/7 s^2 + ...) in one, as it is below
 * 2^-12 of the sum. Returns 2 atanh(s) as its head, the tail in *low. */
static MathVal pow_log_m_f64(MathTarget *t, MathVal m1, MathVal *low) {
  static const MathTable series = {.f64 = mathref_pow_log_f64_table, .count = MATHREF_POW_LOG_F64_COUNT};
  MathType real = MATH_F64;
  MathVal two = mp_real(t, real, 2.0);
  MathVal den = mp_binary(t, MATH_ADD, real, two, m1);
  MathVal den_l = mp_binary(t, MATH_ADD, real, mp_binary(t, MATH_SUB, real, two, den), m1);
  MathVal s = mp_binary(t, MATH_DIV, real, m1, den);
  MathVal minus_s = mp_unary(t, MATH_NEGATE, real, s);
  MathVal remainder = mp_op(t, MATH_FMA, real, minus_s, den, m1);
  MathVal s_l = mp_binary(t, MATH_DIV, real,
                          mp_binary(t, MATH_SUB, real, remainder, mp_binary(t, MATH_MUL, real, s, den_l)), den);
  MathVal s2 = mp_binary(t, MATH_MUL, real, s, s);
  MathVal s2_l = mp_product_error(t, real, s, s, s2);
  MathVal s3 = mp_binary(t, MATH_MUL, real, s2, s);
  MathVal three = mp_real(t, real, 3.0);
  MathVal s2_l_s = mp_binary(t, MATH_MUL, real, s2_l, s);
  MathVal cross =
      mp_binary(t, MATH_ADD, real, s2_l_s, mp_binary(t, MATH_MUL, real, mp_binary(t, MATH_MUL, real, three, s2), s_l));
  MathVal s3_l = mp_binary(t, MATH_ADD, real, mp_product_error(t, real, s2, s, s3), cross);
  MathVal c_hi = mp_real(t, real, MATHREF_TWO_THIRDS_HI_F64), c_lo = mp_real(t, real, MATHREF_TWO_THIRDS_LO_F64);
  MathVal third = mp_binary(t, MATH_MUL, real, s3, c_hi);
  MathVal s3_c_lo = mp_binary(t, MATH_MUL, real, s3, c_lo);
  MathVal third_parts = mp_binary(t, MATH_ADD, real, s3_c_lo, mp_binary(t, MATH_MUL, real, s3_l, c_hi));
  MathVal third_l = mp_binary(t, MATH_ADD, real, mp_product_error(t, real, s3, c_hi, third), third_parts);
  MathVal s3_s2 = mp_binary(t, MATH_MUL, real, s3, s2);
  MathVal rest = mp_binary(t, MATH_MUL, real, s3_s2, mp_polynomial(t, real, &series, s2));
  MathVal twice = mp_binary(t, MATH_MUL, real, two, s);
  MathVal h = mp_binary(t, MATH_ADD, real, twice, third); /* 2s >= 8 third: Fast2Sum */
  MathVal twice_l = mp_binary(t, MATH_MUL, real, two, s_l);
  MathVal small = mp_binary(t, MATH_ADD, real, twice_l, mp_binary(t, MATH_ADD, real, third_l, rest));
  MathVal lost = mp_binary(t, MATH_SUB, real, third, mp_binary(t, MATH_SUB, real, h, twice));
  *low = mp_binary(t, MATH_ADD, real, lost, small);
  return h;
}

/* f64: log2|x| = *low + return, right to about 2^-70 relative, which
 * y log2|x| needs (|y log2|x|| up to 1100, to 2^-55 absolute): log(m)
 * times log2(e) (two parts) plus e. */
static MathVal pow_log2_f64(MathTarget *t, MathVal ax, MathVal *low) {
  const MathFormat *f = &math_format_f64;
  MathType real = MATH_F64, integer = MATH_I64;
  MathVal limit = mp_real(t, real, f->subnormal_limit);
  MathVal subnormal = mp_binary(t, MATH_LESS, real, ax, limit);
  MathVal scale = mp_real(t, real, 0x1p54);
  MathVal scaled = mp_select(t, real, subnormal, mp_binary(t, MATH_MUL, real, ax, scale), ax);
  MathVal e;
  MathVal m1 = mp_log_split(t, f, scaled, &e);
  MathVal shift = mp_int(t, integer, 54), no_shift = mp_int(t, integer, 0);
  e = mp_binary(t, MATH_SUB, integer, e, mp_select(t, integer, subnormal, shift, no_shift));
  MathVal l;
  MathVal h = pow_log_m_f64(t, m1, &l);
  MathVal log2e = mp_real(t, real, MATHREF_LOG2E_F64), log2e_lo = mp_real(t, real, MATHREF_LOG2E_LO_F64);
  MathVal p = mp_binary(t, MATH_MUL, real, h, log2e);
  MathVal h_log2e_lo = mp_binary(t, MATH_MUL, real, h, log2e_lo);
  MathVal p_parts = mp_binary(t, MATH_ADD, real, h_log2e_lo, mp_binary(t, MATH_MUL, real, l, log2e));
  MathVal p_l = mp_binary(t, MATH_ADD, real, mp_product_error(t, real, h, log2e, p), p_parts);
  MathVal sum_l;
  MathVal sum = mp_two_sum(t, real, mp_unary(t, MATH_TO_FLOAT, integer, e), p, &sum_l);
  MathVal tail = mp_binary(t, MATH_ADD, real, sum_l, p_l);
  MathVal result = mp_binary(t, MATH_ADD, real, sum, tail);
  *low = mp_binary(t, MATH_ADD, real, mp_binary(t, MATH_SUB, real, sum, result), tail);
  return result;
}

/* f64: 2^(z + z_l): n = round(z), r = (z - n) + z_l (z - n exact) with
 * what that sum lost; e^(r ln2) with r ln2 = t + t_l (ln 2 in two parts),
 * 1 + t + t^2 P(t) + t_l (1 + t), P exp's table; 2^n in two halves. z is
 * clamped to [-1100, 1100] (0 and inf beyond), a NaN z to 0 (the caller's
 * select returns NaN). */
static MathVal pow_exp2_f64(MathTarget *t, MathVal z, MathVal z_l) {
  const MathFormat *f = &math_format_f64;
  MathType real = MATH_F64, integer = MATH_I64;
  MathVal zero = mp_real(t, real, 0.0), limit = mp_real(t, real, 1100.0);
  MathVal z_nan = mp_unary(t, MATH_IS_NAN, real, z);
  /* !(|z| <= 1100): past the limit, or NaN */
  MathVal past = mp_binary(t, MATH_LESS, real, limit, mp_unary(t, MATH_ABS, real, z));
  MathVal out = mp_binary(t, MATH_OR, MATH_MASK, past, z_nan);
  MathVal minus_limit = mp_real(t, real, -1100.0);
  MathVal signed_limit = mp_select(t, real, mp_binary(t, MATH_LESS, real, zero, z), limit, minus_limit);
  MathVal zc = mp_select(t, real, z_nan, zero, mp_select(t, real, out, signed_limit, z));
  MathVal zl = mp_select(t, real, mp_binary(t, MATH_OR, MATH_MASK, out, z_nan), zero, z_l);
  MathVal shifter = mp_real(t, real, MATHREF_ROUND_SHIFTER_F64);
  MathVal n = mp_binary(t, MATH_SUB, real, mp_binary(t, MATH_ADD, real, zc, shifter), shifter);
  MathVal head = mp_binary(t, MATH_SUB, real, zc, n);
  MathVal r = mp_binary(t, MATH_ADD, real, head, zl);
  MathVal r_l = mp_binary(t, MATH_ADD, real, mp_binary(t, MATH_SUB, real, head, r), zl);
  MathVal ln2 = mp_real(t, real, MATHREF_LN2_F64), ln2_lo = mp_real(t, real, MATHREF_LN2_LO_EXACT_F64);
  MathVal u = mp_binary(t, MATH_MUL, real, r, ln2);
  MathVal r_ln2_lo = mp_binary(t, MATH_MUL, real, r, ln2_lo);
  MathVal u_parts = mp_binary(t, MATH_ADD, real, r_ln2_lo, mp_binary(t, MATH_MUL, real, r_l, ln2));
  MathVal u_l = mp_binary(t, MATH_ADD, real, mp_product_error(t, real, r, ln2, u), u_parts);
  MathVal p = mp_polynomial(t, real, &f->exp_table, u);
  MathVal lost_part = mp_op(t, MATH_FMA, real, u_l, u, u_l);
  MathVal inner = mp_op(t, MATH_FMA, real, mp_binary(t, MATH_MUL, real, u, u), p, lost_part);
  MathVal one = mp_real(t, real, 1.0);
  MathVal y = mp_binary(t, MATH_ADD, real, one, mp_binary(t, MATH_ADD, real, u, inner));
  MathVal ni = mp_unary(t, MATH_TO_INT, real, n);
  MathVal n1 = mp_shift(t, MATH_SHIFT_RIGHT, integer, ni, 1);
  MathVal scale1 = mp_power_of_two(t, f, n1);
  MathVal scale2 = mp_power_of_two(t, f, mp_binary(t, MATH_SUB, integer, ni, n1));
  return mp_binary(t, MATH_MUL, real, mp_binary(t, MATH_MUL, real, y, scale1), scale2);
}

/* C99 Annex F's special cases of pow after 2^(y log2|x|): y = 0 or x = 1
 * give 1 (even with NaN), as does |x| = 1 with infinite y; a negative
 * finite x with a non-integer finite y gives NaN; a negative x (or -0,
 * -inf) with an odd integer y gives the negative result. log2|x| is -inf
 * for 0 and +inf for inf, so y log2|x| is ±inf or NaN there and 2^z does
 * the rest. |y| below 2^mantissa rounds to an integer by adding and
 * subtracting 2^mantissa; from there up every float is an integer, and
 * from twice that up an even one. */
static MathVal pow_special_cases(MathTarget *t, const MathFormat *f, MathVal x, MathVal y, MathVal result) {
  MathType real = f->real, integer = f->integer;
  MathVal ax = mp_unary(t, MATH_ABS, real, x), ay = mp_unary(t, MATH_ABS, real, y);
  MathVal integral = mp_real(t, real, (double)(UINT64_C(1) << f->mantissa_bits));
  MathVal zero = mp_real(t, real, 0.0), one = mp_real(t, real, 1.0);
  MathVal infinity = mp_real(t, real, (double)INFINITY);
  MathVal ay_shifted = mp_binary(t, MATH_SUB, real, mp_binary(t, MATH_ADD, real, ay, integral), integral);
  MathVal ay_rounded = mp_select(t, real, mp_binary(t, MATH_LESS, real, ay, integral), ay_shifted, ay);
  MathVal y_integer = mp_binary(t, MATH_EQUAL, real, ay_rounded, ay);
  MathVal even_limit = mp_real(t, real, (double)(UINT64_C(2) << f->mantissa_bits));
  MathVal below = mp_select(t, real, mp_binary(t, MATH_LESS, real, ay, even_limit), ay_rounded, zero);
  MathVal one_int = mp_int(t, integer, 1);
  MathVal low_bit = mp_binary(t, MATH_AND, integer, mp_unary(t, MATH_TO_INT, real, below), one_int);
  MathVal y_odd = mp_binary(t, MATH_AND, MATH_MASK, y_integer, mp_binary(t, MATH_EQUAL, integer, low_bit, one_int));
  /* x's sign bit, -0 and -inf included */
  MathVal negative_x = mp_binary(t, MATH_LESS, real, mp_binary(t, MATH_COPYSIGN, real, one, x), zero);
  MathVal negated = mp_unary(t, MATH_NEGATE, real, result);
  result = mp_select(t, real, mp_binary(t, MATH_AND, MATH_MASK, negative_x, y_odd), negated, result);
  MathVal minus_infinity = mp_real(t, real, -(double)INFINITY);
  MathVal x_negative = mp_binary(t, MATH_LESS, real, x, zero);
  MathVal finite_negative =
      mp_binary(t, MATH_AND, MATH_MASK, x_negative, mp_binary(t, MATH_LESS, real, minus_infinity, x));
  MathVal invalid = mp_binary(t, MATH_AND, MATH_MASK, finite_negative, mp_unary(t, MATH_NOT, MATH_MASK, y_integer));
  invalid = mp_binary(t, MATH_OR, MATH_MASK, invalid, mp_unary(t, MATH_IS_NAN, real, x));
  invalid = mp_binary(t, MATH_OR, MATH_MASK, invalid, mp_unary(t, MATH_IS_NAN, real, y));
  result = mp_select(t, real, invalid, mp_quiet_nan(t, f), result);
  MathVal y_zero = mp_binary(t, MATH_EQUAL, real, y, zero);
  MathVal is_one = mp_binary(t, MATH_OR, MATH_MASK, y_zero, mp_binary(t, MATH_EQUAL, real, x, one));
  MathVal ax_one = mp_binary(t, MATH_EQUAL, real, ax, one);
  MathVal unit_power = mp_binary(t, MATH_AND, MATH_MASK, ax_one, mp_binary(t, MATH_EQUAL, real, ay, infinity));
  is_one = mp_binary(t, MATH_OR, MATH_MASK, is_one, unit_power);
  return mp_select(t, real, is_one, one, result);
}

/* pow(x, y) = 2^(y log2|x|), then pow_special_cases. f32 works in f64,
 * because y log2|x| needs about 40 correct bits before 2^z is taken; f64
 * carries log2|x| and y log2|x| in two doubles. */
static MathVal pow_f32(MathTarget *t, MathVal x, MathVal y) {
  int scope = mp_scope_begin(t);
  MathVal ax = mp_unary(t, MATH_ABS, MATH_F32, x);
  MathVal l2 = pow_log2_f32(t, ax);
  MathVal zero = mp_real(t, MATH_F32, 0.0), infinity = mp_real(t, MATH_F32, (double)INFINITY);
  l2 = mp_select_constant(t, MATH_F64, mp_binary(t, MATH_EQUAL, MATH_F32, ax, zero), -(double)INFINITY, l2);
  l2 = mp_select_constant(t, MATH_F64, mp_binary(t, MATH_EQUAL, MATH_F32, ax, infinity), (double)INFINITY, l2);
  MathVal z = mp_binary(t, MATH_MUL, MATH_F64, mp_unary(t, MATH_WIDEN, MATH_F32, y), l2);
  MathVal result = pow_exp2_f32(t, z);
  return mp_scope_end(t, scope, pow_special_cases(t, &math_format_f32, x, y, result));
}

static MathVal pow_f64(MathTarget *t, MathVal x, MathVal y) {
  int scope = mp_scope_begin(t);
  MathType real = MATH_F64;
  MathVal ax = mp_unary(t, MATH_ABS, real, x);
  MathVal l_low;
  MathVal l = pow_log2_f64(t, ax, &l_low);
  MathVal zero = mp_real(t, real, 0.0), infinity = mp_real(t, real, (double)INFINITY);
  MathVal ax_zero = mp_binary(t, MATH_EQUAL, real, ax, zero),
          ax_infinite = mp_binary(t, MATH_EQUAL, real, ax, infinity);
  MathVal edge = mp_binary(t, MATH_OR, MATH_MASK, ax_zero, ax_infinite);
  l = mp_select(t, real, ax_infinite, infinity, l);
  l = mp_select_constant(t, real, ax_zero, -(double)INFINITY, l);
  l_low = mp_select(t, real, edge, zero, l_low);
  MathVal z = mp_binary(t, MATH_MUL, real, y, l);
  MathVal z_error = mp_product_error(t, real, y, l, z);
  MathVal z_l = mp_binary(t, MATH_ADD, real, z_error, mp_binary(t, MATH_MUL, real, y, l_low));
  MathVal result = pow_exp2_f64(t, z, mp_select(t, real, edge, zero, z_l));
  return mp_scope_end(t, scope, pow_special_cases(t, &math_format_f64, x, y, result));
}

MathVal math_program_pow(MathTarget *t, const MathFormat *f, MathVal x, MathVal y) {
  return f->real == MATH_F32 ? pow_f32(t, x, y) : pow_f64(t, x, y);
}
