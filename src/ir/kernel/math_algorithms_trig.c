/* sin, cos and tan, written once over the primitives of math_program.h
 * (math_algorithms.c states the rules). Both widths reduce x = n pi/2 +
 * hi + lo with |hi + lo| <= pi/4 in two ways: Cody-Waite below a limit
 * (the quotient's rounding and pi/2 in three parts), Payne-Hanek above it
 * (x's mantissa times the bits of 2/pi that matter, in integers, from a
 * table in math_tables.c); then a polynomial per quadrant. The reductions
 * and polynomials differ by width, so each width has its own algorithm,
 * as tanh's; docs/math.md states their accuracy.
 *
 * Payne-Hanek is work every lane would do for nothing where all
 * arguments are small: it is code a target may skip (skip_if_all), and
 * x86's vector code runs the f32 one lane by lane (lane_by_lane), its
 * 64-bit products being scalar. */
#include "kernel/math_program.h"

#include <math.h>

#include "kernel/math_reference.h"

/* mask: bit of the quadrant q (an integer of type integer) is set */
static MathVal quadrant_bit(MathTarget *t, MathType integer, MathVal q, int bit) {
  MathVal k = mp_int(t, integer, bit);
  return mp_binary(t, MATH_EQUAL, integer, mp_binary(t, MATH_AND, integer, q, k), k);
}

/* NaN and ±inf: sin, cos and tan are NaN there. */
static MathVal trig_is_invalid(MathTarget *t, MathType real, MathVal x) {
  MathVal infinity = mp_real(t, real, (double)INFINITY);
  MathVal infinite = mp_binary(t, MATH_EQUAL, real, mp_unary(t, MATH_ABS, real, x), infinity);
  return mp_binary(t, MATH_OR, MATH_MASK, mp_unary(t, MATH_IS_NAN, real, x), infinite);
}

/* ---- f32 ---- */

/* Cody-Waite, for |x| < MATHREF_TRIG_SMALL_LIMIT. n: the fma rounds
 * x (2/pi rounded to f32) to an integer, which can land on the wrong side
 * of a half (2/pi in f32 is off by 2^-25 relative); a rough r from two
 * parts of pi/2 shows it, and n moves by one. Then r = x - n pi/2 as
 * hi + lo: r1 = x - n PIO2_1 is exact inside the fma; r1 - n PIO2_2 is
 * formed exactly from n PIO2_2 = p + pe (an fma) and r1 - p = s + se
 * (Knuth's two-sum); the rest joins -n PIO2_3 in lo. n times the 2^-76
 * that the three parts miss stays far below r up to the limit. The two
 * floats matter where r is tiny: its relative error becomes the error of
 * sin, and of tan's huge -1/tan(r). */
static MathVal reduce_small_f32(MathTarget *t, MathVal x, MathVal *n, MathVal *lo) {
  MathType real = MATH_F32;
  MathVal two_over_pi = mp_real(t, real, MATHREF_TWO_OVER_PI);
  MathVal shifter = mp_real(t, real, MATHREF_ROUND_SHIFTER_F32);
  MathVal q = mp_binary(t, MATH_SUB, real, mp_op(t, MATH_FMA, real, x, two_over_pi, shifter), shifter);
  MathVal minus_pio2_1 = mp_real(t, real, -MATHREF_PIO2_1), minus_pio2_2 = mp_real(t, real, -MATHREF_PIO2_2);
  MathVal rough = mp_op(t, MATH_FMA, real, q, minus_pio2_2, mp_op(t, MATH_FMA, real, q, minus_pio2_1, x));
  MathVal one = mp_real(t, real, 1.0), zero = mp_real(t, real, 0.0);
  MathVal pio4 = mp_real(t, real, MATHREF_PIO4_HI), minus_pio4 = mp_real(t, real, -MATHREF_PIO4_HI);
  MathVal up = mp_select(t, real, mp_binary(t, MATH_LESS, real, pio4, rough), one, zero);
  q = mp_binary(t, MATH_ADD, real, q, up);
  MathVal down = mp_select(t, real, mp_binary(t, MATH_LESS, real, rough, minus_pio4), one, zero);
  q = mp_binary(t, MATH_SUB, real, q, down);
  MathVal r1 = mp_op(t, MATH_FMA, real, q, minus_pio2_1, x);
  MathVal pio2_2 = mp_real(t, real, MATHREF_PIO2_2);
  MathVal p = mp_binary(t, MATH_MUL, real, q, pio2_2);
  MathVal pe = mp_product_error(t, real, q, pio2_2, p);
  MathVal s = mp_binary(t, MATH_SUB, real, r1, p);
  MathVal back = mp_binary(t, MATH_SUB, real, s, r1);
  MathVal r1_part = mp_binary(t, MATH_SUB, real, r1, mp_binary(t, MATH_SUB, real, s, back));
  MathVal minus_p = mp_unary(t, MATH_NEGATE, real, p);
  MathVal se = mp_binary(t, MATH_ADD, real, r1_part, mp_binary(t, MATH_SUB, real, minus_p, back));
  MathVal minus_q = mp_unary(t, MATH_NEGATE, real, q);
  MathVal pio2_3 = mp_real(t, real, MATHREF_PIO2_3);
  MathVal low = mp_op(t, MATH_FMA, real, minus_q, pio2_3, mp_binary(t, MATH_SUB, real, se, pe));
  MathVal hi = mp_binary(t, MATH_ADD, real, s, low);
  *lo = mp_binary(t, MATH_SUB, real, low, mp_binary(t, MATH_SUB, real, hi, s));
  *n = q;
  return hi;
}

/* For x = M 2^E (M the 24-bit integer mantissa, E = biased exponent -
 * 150), row E + 1 of mathref_two_over_pi_windows: the bits of 2/pi that
 * matter to x 2/pi mod 4. */
static const MathRows two_over_pi_windows = {
    .symbol = "axle_math_two_over_pi",
    .what = "math_tables.c's windows of 2/pi, for Payne-Hanek",
    .type = MATH_I32,
    .entries = mathref_two_over_pi_windows,
    .rows = 106,
    .columns = 3,
};

/* M times its window of 2/pi, kept mod 2^96 (32x32->64-bit products),
 * is x 2/pi mod 4 in units of 2^-94; its top 64 bits rounded at the top
 * are t: the quadrant (the top two bits) and the fraction f + 2^61, |f| <=
 * 2^61 in units of 2^-62. Returns t. A NaN or an infinity reads the last
 * row; the caller's select drops what it gives. */
static MathVal payne_hanek_f32(MathTarget *t, MathVal bits) {
  MathVal exponent_mask = mp_int(t, MATH_I32, 0xff);
  MathVal exponent =
      mp_binary(t, MATH_AND, MATH_I32, mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, MATH_I32, bits, 23), exponent_mask);
  MathVal row = mp_binary(t, MATH_SUB, MATH_I32, exponent, mp_int(t, MATH_I32, 149));
  MathVal first = mp_int(t, MATH_I32, 0), last = mp_int(t, MATH_I32, 105);
  MathVal below_last = mp_select(t, MATH_I32, mp_binary(t, MATH_LESS, MATH_I32, last, row), last, row);
  row = mp_select(t, MATH_I32, mp_binary(t, MATH_LESS, MATH_I32, row, first), first, below_last);
  MathVal w[3];
  t->load_row(t, &two_over_pi_windows, row, w);
  MathVal mantissa = mp_binary(t, MATH_AND, MATH_I32, bits, mp_int(t, MATH_I32, 0x7fffff));
  MathVal m = mp_binary(t, MATH_OR, MATH_I32, mantissa, mp_int(t, MATH_I32, 0x800000));
  MathVal m64 = mp_unary(t, MATH_EXTEND, MATH_I32, m);
  MathVal p2 = mp_binary(t, MATH_MUL, MATH_I64, m64, mp_unary(t, MATH_EXTEND, MATH_I32, w[2]));
  MathVal p1 = mp_binary(t, MATH_MUL, MATH_I64, m64, mp_unary(t, MATH_EXTEND, MATH_I32, w[1]));
  MathVal low_half = mp_int(t, MATH_I64, 0xffffffff);
  MathVal p2_high = mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, MATH_I64, p2, 32);
  MathVal mid = mp_binary(t, MATH_ADD, MATH_I64, p2_high, mp_binary(t, MATH_AND, MATH_I64, p1, low_half));
  MathVal top = mp_binary(t, MATH_MUL, MATH_I32, m, w[0]);
  MathVal p1_high = mp_unary(t, MATH_TRUNCATE, MATH_I64, mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, MATH_I64, p1, 32));
  top = mp_binary(t, MATH_ADD, MATH_I32, top, p1_high);
  MathVal mid_high = mp_unary(t, MATH_TRUNCATE, MATH_I64, mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, MATH_I64, mid, 32));
  top = mp_binary(t, MATH_ADD, MATH_I32, top, mid_high);
  MathVal top_bits = mp_shift(t, MATH_SHIFT_LEFT, MATH_I64, mp_unary(t, MATH_EXTEND, MATH_I32, top), 32);
  MathVal joined = mp_binary(t, MATH_OR, MATH_I64, top_bits, mp_binary(t, MATH_AND, MATH_I64, mid, low_half));
  return mp_binary(t, MATH_ADD, MATH_I64, joined, mp_int(t, MATH_I64, INT64_C(1) << 61));
}

/* Payne-Hanek, for any finite |x| >= MATHREF_TRIG_SMALL_LIMIT, as a lane
 * part: x in, hi, n and lo out (n a float). |f| is cut into three 21-bit
 * pieces that convert to floats exactly and sum to fh + fl, and times
 * pi/2 gives r. x < 0 reduces as -|x|: r and n change sign. */
static void reduce_large_f32(MathTarget *t, const MathVal *inputs, MathVal *outputs) {
  MathType real = MATH_F32;
  MathVal bits = mp_unary(t, MATH_BITS, real, inputs[0]);
  MathVal rounded = payne_hanek_f32(t, bits);
  MathVal quadrant =
      mp_unary(t, MATH_TRUNCATE, MATH_I64, mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, MATH_I64, rounded, 62));
  MathVal biased = mp_binary(t, MATH_AND, MATH_I64, rounded, mp_int(t, MATH_I64, (INT64_C(1) << 62) - 1));
  MathVal bit_one = mp_int(t, MATH_I64, 1);
  MathVal half_bit =
      mp_binary(t, MATH_AND, MATH_I64, mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, MATH_I64, biased, 61), bit_one);
  MathVal f_negative = mp_binary(t, MATH_EQUAL, MATH_I64, half_bit, mp_int(t, MATH_I64, 0));
  MathVal half = mp_int(t, MATH_I64, INT64_C(1) << 61);
  MathVal below = mp_binary(t, MATH_SUB, MATH_I64, half, biased);
  MathVal fa = mp_select(t, MATH_I64, f_negative, below, mp_binary(t, MATH_SUB, MATH_I64, biased, half));
  MathVal piece = mp_int(t, MATH_I32, 0x1fffff);
  MathVal top = mp_unary(t, MATH_TRUNCATE, MATH_I64, mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, MATH_I64, fa, 42));
  MathVal scale_20 = mp_real(t, real, 0x1p-20);
  MathVal v2 = mp_binary(t, MATH_MUL, real, mp_unary(t, MATH_TO_FLOAT, MATH_I32, top), scale_20);
  MathVal middle = mp_unary(t, MATH_TRUNCATE, MATH_I64, mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, MATH_I64, fa, 21));
  middle = mp_binary(t, MATH_AND, MATH_I32, middle, piece);
  MathVal scale_41 = mp_real(t, real, 0x1p-41);
  MathVal v1 = mp_binary(t, MATH_MUL, real, mp_unary(t, MATH_TO_FLOAT, MATH_I32, middle), scale_41);
  MathVal bottom = mp_binary(t, MATH_AND, MATH_I32, mp_unary(t, MATH_TRUNCATE, MATH_I64, fa), piece);
  MathVal scale_62 = mp_real(t, real, 0x1p-62);
  MathVal v0 = mp_binary(t, MATH_MUL, real, mp_unary(t, MATH_TO_FLOAT, MATH_I32, bottom), scale_62);
  MathVal fh = mp_binary(t, MATH_ADD, real, v2, v1);
  MathVal fl = mp_binary(t, MATH_ADD, real, mp_binary(t, MATH_ADD, real, mp_binary(t, MATH_SUB, real, v2, fh), v1), v0);
  MathVal pio2_1 = mp_real(t, real, MATHREF_PIO2_1), pio2_2 = mp_real(t, real, MATHREF_PIO2_2);
  MathVal rh = mp_binary(t, MATH_MUL, real, fh, pio2_1);
  MathVal rh_error = mp_product_error(t, real, fh, pio2_1, rh);
  MathVal fl_part = mp_binary(t, MATH_MUL, real, fl, pio2_1);
  MathVal rl = mp_binary(t, MATH_ADD, real, rh_error, mp_op(t, MATH_FMA, real, fh, pio2_2, fl_part));
  MathVal hi = mp_binary(t, MATH_ADD, real, rh, rl);
  MathVal low = mp_binary(t, MATH_SUB, real, rl, mp_binary(t, MATH_SUB, real, hi, rh));
  MathVal x_negative = mp_binary(t, MATH_LESS, MATH_I32, bits, mp_int(t, MATH_I32, 0));
  MathVal negate = mp_binary(t, MATH_XOR, MATH_MASK, f_negative, x_negative);
  MathVal four = mp_int(t, MATH_I32, 4), three = mp_int(t, MATH_I32, 3);
  MathVal mirrored = mp_binary(t, MATH_AND, MATH_I32, mp_binary(t, MATH_SUB, MATH_I32, four, quadrant), three);
  MathVal n = mp_select(t, MATH_I32, x_negative, mirrored, quadrant);
  MathVal minus_hi = mp_unary(t, MATH_NEGATE, real, hi);
  outputs[0] = mp_select(t, real, negate, minus_hi, hi);
  outputs[1] = mp_unary(t, MATH_TO_FLOAT, MATH_I32, n);
  MathVal minus_low = mp_unary(t, MATH_NEGATE, real, low);
  outputs[2] = mp_select(t, real, negate, minus_low, low);
}

/* Runs part lane by lane where the target can, else at once. */
static void run_lane_part(MathTarget *t, MathLanePart part, const MathVal *inputs, int input_count,
                          MathVal *outputs, int output_count) {
  if (t->lane_by_lane) t->lane_by_lane(t, part, inputs, input_count, outputs, output_count);
  else part(t, inputs, outputs);
}

static int skip_if_all(MathTarget *t, MathVal mask) { return t->skip_if_all ? t->skip_if_all(t, mask) : 0; }

static void skip_end(MathTarget *t, int skip) {
  if (t->skip_end) t->skip_end(t, skip);
}

/* x = n pi/2 + hi + lo with |hi + lo| <= pi/4, for every finite x;
 * returns hi and the quadrant n mod 4 (an i32). */
static MathVal reduce_f32(MathTarget *t, MathVal x, MathVal *quadrant, MathVal *lo) {
  MathType real = MATH_F32;
  MathVal limit = mp_real(t, real, MATHREF_TRIG_SMALL_LIMIT);
  MathVal small = mp_binary(t, MATH_LESS, real, mp_unary(t, MATH_ABS, real, x), limit);
  MathVal zero = mp_real(t, real, 0.0);
  MathVal n_small, lo_small;
  MathVal hi_small = reduce_small_f32(t, mp_select(t, real, small, x, zero), &n_small, &lo_small);
  MathVal large[3];
  int skip = skip_if_all(t, small); /* Payne-Hanek only where the argument needs it */
  run_lane_part(t, reduce_large_f32, &x, 1, large, 3);
  skip_end(t, skip);
  MathVal n = mp_unary(t, MATH_TO_INT, real, mp_select(t, real, small, n_small, large[1]));
  *quadrant = mp_binary(t, MATH_AND, MATH_I32, n, mp_int(t, MATH_I32, 3));
  *lo = mp_select(t, real, small, lo_small, large[2]);
  return mp_select(t, real, small, hi_small, large[0]);
}

/* sin(hi + lo) = hi + (hi^3 S(hi^2) + lo), rounded once at the end. */
static MathVal sin_kernel_f32(MathTarget *t, MathVal r, MathVal lo) {
  static const MathTable table = {.f32 = mathref_sin_table, .count = MATHREF_SIN_COUNT};
  MathVal z = mp_binary(t, MATH_MUL, MATH_F32, r, r);
  MathVal z_p = mp_binary(t, MATH_MUL, MATH_F32, z, mp_polynomial(t, MATH_F32, &table, z));
  return mp_binary(t, MATH_ADD, MATH_F32, r, mp_op(t, MATH_FMA, MATH_F32, r, z_p, lo));
}

/* cos(hi + lo) = 1 + hi^2 C(hi^2); lo would change it by hi lo, which is
 * below a quarter ulp of a result of at least 0.7. */
static MathVal cos_kernel_f32(MathTarget *t, MathVal r) {
  static const MathTable table = {.f32 = mathref_cos_table, .count = MATHREF_COS_COUNT};
  MathVal z = mp_binary(t, MATH_MUL, MATH_F32, r, r);
  MathVal p = mp_polynomial(t, MATH_F32, &table, z);
  return mp_op(t, MATH_FMA, MATH_F32, z, p, mp_real(t, MATH_F32, 1.0));
}

/* By quadrant: sin, cos, -sin, -cos. |x| < 2^-12 returns x (keeps -0). */
static MathVal sin_f32(MathTarget *t, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = MATH_F32;
  MathVal quadrant, lo;
  MathVal r = reduce_f32(t, x, &quadrant, &lo);
  MathVal cosine = cos_kernel_f32(t, r), sine = sin_kernel_f32(t, r, lo);
  MathVal y = mp_select(t, real, quadrant_bit(t, MATH_I32, quadrant, 1), cosine, sine);
  MathVal minus_y = mp_unary(t, MATH_NEGATE, real, y);
  y = mp_select(t, real, quadrant_bit(t, MATH_I32, quadrant, 2), minus_y, y);
  MathVal tiny_limit = mp_real(t, real, 0x1p-12);
  MathVal tiny = mp_binary(t, MATH_LESS, real, mp_unary(t, MATH_ABS, real, x), tiny_limit);
  y = mp_select(t, real, tiny, x, y);
  MathVal nan = mp_quiet_nan(t, &math_format_f32);
  return mp_scope_end(t, scope, mp_select(t, real, trig_is_invalid(t, real, x), nan, y));
}

/* By quadrant: cos, -sin, -cos, sin. */
static MathVal cos_f32(MathTarget *t, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = MATH_F32;
  MathVal quadrant, lo;
  MathVal r = reduce_f32(t, x, &quadrant, &lo);
  MathVal sine = sin_kernel_f32(t, r, lo), cosine = cos_kernel_f32(t, r);
  MathVal y = mp_select(t, real, quadrant_bit(t, MATH_I32, quadrant, 1), sine, cosine);
  MathVal next = mp_binary(t, MATH_ADD, MATH_I32, quadrant, mp_int(t, MATH_I32, 1));
  MathVal minus_y = mp_unary(t, MATH_NEGATE, real, y);
  y = mp_select(t, real, quadrant_bit(t, MATH_I32, next, 2), minus_y, y);
  MathVal nan = mp_quiet_nan(t, &math_format_f32);
  return mp_scope_end(t, scope, mp_select(t, real, trig_is_invalid(t, real, x), nan, y));
}

/* tan(x) = t in even quadrants and -1/t in odd ones, with
 * t = tan(hi + lo) = hi + w, w = hi^3 T(hi^2) + lo (1 + hi^2). t is kept
 * as t + t_lo (Fast2Sum, as |hi| >= |w|), and -1/t gets one correction
 * step against it: q + q (1 + q t) with q = -1/t, the residual 1 + q t
 * exact in an fma. Without the step the reciprocal's rounding adds a
 * whole ulp to t's. */
static MathVal tan_f32(MathTarget *t, MathVal x) {
  static const MathTable table = {.f32 = mathref_tan_table, .count = MATHREF_TAN_COUNT};
  int scope = mp_scope_begin(t);
  MathType real = MATH_F32;
  MathVal quadrant, lo;
  MathVal r = reduce_f32(t, x, &quadrant, &lo);
  MathVal z = mp_binary(t, MATH_MUL, real, r, r);
  MathVal p = mp_polynomial(t, real, &table, z);
  MathVal one = mp_real(t, real, 1.0);
  MathVal z_p = mp_binary(t, MATH_MUL, real, z, p);
  MathVal lo_part = mp_binary(t, MATH_MUL, real, lo, mp_op(t, MATH_FMA, real, r, r, one));
  MathVal w = mp_op(t, MATH_FMA, real, r, z_p, lo_part);
  MathVal sum = mp_binary(t, MATH_ADD, real, r, w);
  MathVal sum_lo = mp_binary(t, MATH_SUB, real, w, mp_binary(t, MATH_SUB, real, sum, r));
  MathVal q = mp_binary(t, MATH_DIV, real, mp_real(t, real, -1.0), sum);
  MathVal q_sum_lo = mp_binary(t, MATH_MUL, real, q, sum_lo);
  MathVal residual = mp_binary(t, MATH_ADD, real, mp_op(t, MATH_FMA, real, q, sum, one), q_sum_lo);
  MathVal cotangent = mp_op(t, MATH_FMA, real, q, residual, q);
  MathVal y = mp_select(t, real, quadrant_bit(t, MATH_I32, quadrant, 1), cotangent, sum);
  MathVal tiny_limit = mp_real(t, real, 0x1p-12);
  MathVal tiny = mp_binary(t, MATH_LESS, real, mp_unary(t, MATH_ABS, real, x), tiny_limit);
  y = mp_select(t, real, tiny, x, y);
  MathVal nan = mp_quiet_nan(t, &math_format_f32);
  return mp_scope_end(t, scope, mp_select(t, real, trig_is_invalid(t, real, x), nan, y));
}

/* ---- f64 ---- */

/* Cody-Waite for |x| < 2^20: n = round(x 2/pi) (possibly one off at a
 * half, which leaves |r| a hair past pi/4, inside the series' reach);
 * x - n P1 and n P2 are exact (33-bit parts, n < 2^20), n P3 is split by
 * an fma, and two-sums keep every lost bit in lo. pi/2 is known to 2^-119
 * this way, which fdlibm's analysis shows is enough below 2^20. */
static MathVal reduce_small_f64(MathTarget *t, MathVal x, MathVal *n, MathVal *lo) {
  MathType real = MATH_F64;
  MathVal two_over_pi = mp_real(t, real, MATHREF_TWO_OVER_PI_F64);
  MathVal shifter = mp_real(t, real, MATHREF_ROUND_SHIFTER_F64);
  *n = mp_binary(t, MATH_SUB, real, mp_op(t, MATH_FMA, real, x, two_over_pi, shifter), shifter);
  MathVal minus_pio2_1 = mp_real(t, real, -MATHREF_PIO2_1_F64);
  MathVal r1 = mp_op(t, MATH_FMA, real, *n, minus_pio2_1, x);
  MathVal pio2_2 = mp_real(t, real, MATHREF_PIO2_2_F64);
  MathVal w = mp_binary(t, MATH_MUL, real, *n, pio2_2);
  MathVal e2, se;
  MathVal r2 = mp_two_sum(t, real, r1, mp_unary(t, MATH_NEGATE, real, w), &e2);
  MathVal pio2_3 = mp_real(t, real, MATHREF_PIO2_3_F64);
  MathVal p3 = mp_binary(t, MATH_MUL, real, *n, pio2_3);
  MathVal p3e = mp_product_error(t, real, *n, pio2_3, p3);
  MathVal s = mp_two_sum(t, real, r2, mp_unary(t, MATH_NEGATE, real, p3), &se);
  MathVal low = mp_binary(t, MATH_ADD, real, mp_binary(t, MATH_SUB, real, e2, p3e), se);
  MathVal hi = mp_binary(t, MATH_ADD, real, s, low);
  *lo = mp_binary(t, MATH_SUB, real, low, mp_binary(t, MATH_SUB, real, hi, s));
  return hi;
}

/* Four words of mathref_two_over_pi_words from word j on (rows overlap):
 * the 192 bits from bit g on lie in them, g < 64 j + 64. */
static const MathRows two_over_pi_words = {
    .symbol = "axle_math_two_over_pi_f64",
    .what = "math_tables.c's words of 2/pi, for Payne-Hanek",
    .type = MATH_I64,
    .entries = mathref_two_over_pi_words,
    .rows = MATHREF_TWO_OVER_PI_WORDS - 3,
    .columns = 4,
    .stride = 1,
};

/* The low 192 bits of M W, W the 192 bits of 2/pi from the 2^(1-E) place
 * on (|x| = M 2^E, M the 53-bit mantissa), in units of 2^-190 quarter
 * turns, rounded at the top: returns the top word t (the quadrant in its
 * top two bits), the next in *r1 and the last in *r0. Word k of W is word
 * j + k of the table shifted left by s = g & 63 with word j + k + 1's top
 * bits below (shifted right by 64 - s in two steps, 1 and 63 - s, so that
 * s = 0 works). */
static MathVal payne_hanek_f64(MathTarget *t, MathVal bits, MathVal *r1, MathVal *r0) {
  MathType integer = MATH_I64;
  MathVal exponent_mask = mp_int(t, integer, 0x7ff);
  MathVal exponent =
      mp_binary(t, MATH_AND, integer, mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, integer, bits, 52), exponent_mask);
  MathVal e = mp_binary(t, MATH_SUB, integer, exponent, mp_int(t, integer, 1075));
  /* NaN, inf and the small x read some row; the caller selects */
  MathVal lowest = mp_int(t, integer, -32);
  e = mp_select(t, integer, mp_binary(t, MATH_LESS, integer, e, lowest), lowest, e);
  MathVal mantissa = mp_binary(t, MATH_AND, integer, bits, mp_int(t, integer, (INT64_C(1) << 52) - 1));
  MathVal m = mp_binary(t, MATH_OR, integer, mantissa, mp_int(t, integer, INT64_C(1) << 52));
  MathVal g = mp_binary(t, MATH_ADD, integer, e, mp_int(t, integer, 62));
  MathVal words[4];
  t->load_row(t, &two_over_pi_words, mp_shift(t, MATH_SHIFT_RIGHT, integer, g, 6), words);
  MathVal s = mp_binary(t, MATH_AND, integer, g, mp_int(t, integer, 63));
  MathVal rest = mp_binary(t, MATH_SUB, integer, mp_int(t, integer, 63), s);
  MathVal w[3];
  for (int k = 0; k < 3; k++) {
    MathVal high = mp_binary(t, MATH_SHIFT_LEFT_BY, integer, words[k], s);
    MathVal next = mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, integer, words[k + 1], 1);
    w[k] = mp_binary(t, MATH_OR, integer, high, mp_binary(t, MATH_SHIFT_RIGHT_LOGICAL_BY, integer, next, rest));
  }
  MathVal hi2 = mp_binary(t, MATH_MULTIPLY_HIGH, integer, m, w[2]);
  *r0 = mp_binary(t, MATH_MUL, integer, m, w[2]);
  MathVal hi1 = mp_binary(t, MATH_MULTIPLY_HIGH, integer, m, w[1]);
  MathVal lo1 = mp_binary(t, MATH_MUL, integer, m, w[1]);
  *r1 = mp_binary(t, MATH_ADD, integer, hi2, lo1);
  MathVal one = mp_int(t, integer, 1), zero = mp_int(t, integer, 0);
  MathVal carry = mp_select(t, integer, mp_binary(t, MATH_LESS_UNSIGNED, integer, *r1, hi2), one, zero);
  MathVal top = mp_binary(t, MATH_ADD, integer, hi1, mp_binary(t, MATH_MUL, integer, m, w[0]));
  top = mp_binary(t, MATH_ADD, integer, top, carry);
  return mp_binary(t, MATH_ADD, integer, top, mp_int(t, integer, INT64_C(1) << 61));
}

/* x times the product rounded: a fraction f in [-1/2, 1/2) as a signed
 * 62-bit word and two more, cut into four pieces that convert to doubles
 * exactly and sum (two-sums) to vh + vl; times pi/2 (in two parts) is
 * hi + lo. x < 0 reduces as -|x|. Payne-Hanek for |x| >= 2^20: 192 bits
 * of 2/pi leave an error below 2^-135 of a quarter turn. */
static MathVal reduce_large_f64(MathTarget *t, MathVal x, MathVal *quadrant, MathVal *lo) {
  MathType real = MATH_F64, integer = MATH_I64;
  MathVal bits = mp_unary(t, MATH_BITS, real, x);
  MathVal r1, r0;
  MathVal rounded = payne_hanek_f64(t, bits, &r1, &r0);
  MathVal q = mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, integer, rounded, 62);
  MathVal biased = mp_binary(t, MATH_AND, integer, rounded, mp_int(t, integer, (INT64_C(1) << 62) - 1));
  MathVal f = mp_binary(t, MATH_SUB, integer, biased, mp_int(t, integer, INT64_C(1) << 61));
  MathVal f_high = mp_unary(t, MATH_TO_FLOAT, integer, mp_shift(t, MATH_SHIFT_RIGHT, integer, f, 21));
  MathVal pa = mp_binary(t, MATH_MUL, real, f_high, mp_real(t, real, 0x1p-41));
  MathVal f_low = mp_unary(t, MATH_TO_FLOAT, integer, mp_binary(t, MATH_AND, integer, f, mp_int(t, integer, 0x1fffff)));
  MathVal pb = mp_binary(t, MATH_MUL, real, f_low, mp_real(t, real, 0x1p-62));
  MathVal r1_high = mp_unary(t, MATH_TO_FLOAT, integer, mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, integer, r1, 11));
  MathVal pc = mp_binary(t, MATH_MUL, real, r1_high, mp_real(t, real, 0x1p-115));
  MathVal r1_low = mp_binary(t, MATH_AND, integer, r1, mp_int(t, integer, 2047));
  MathVal r0_high = mp_shift(t, MATH_SHIFT_RIGHT_LOGICAL, integer, r0, 22);
  MathVal last = mp_binary(t, MATH_OR, integer, mp_shift(t, MATH_SHIFT_LEFT, integer, r1_low, 42), r0_high);
  MathVal scale_168 = mp_real(t, real, 0x1p-168);
  MathVal pd = mp_binary(t, MATH_MUL, real, mp_unary(t, MATH_TO_FLOAT, integer, last), scale_168);
  MathVal e1, e2, e3;
  MathVal s1 = mp_two_sum(t, real, pa, pb, &e1);
  MathVal s2 = mp_two_sum(t, real, s1, pc, &e2);
  MathVal s3 = mp_two_sum(t, real, s2, pd, &e3);
  MathVal l = mp_binary(t, MATH_ADD, real, mp_binary(t, MATH_ADD, real, e1, e2), e3);
  MathVal vh = mp_binary(t, MATH_ADD, real, s3, l);
  MathVal vl = mp_binary(t, MATH_SUB, real, l, mp_binary(t, MATH_SUB, real, vh, s3));
  MathVal pio2_hi = mp_real(t, real, MATHREF_PIO2_HI_F64), pio2_lo = mp_real(t, real, MATHREF_PIO2_LO_F64);
  MathVal rh = mp_binary(t, MATH_MUL, real, vh, pio2_hi);
  MathVal rh_error = mp_product_error(t, real, vh, pio2_hi, rh);
  MathVal vl_part = mp_binary(t, MATH_MUL, real, vl, pio2_hi);
  MathVal rl = mp_binary(t, MATH_ADD, real, rh_error, mp_op(t, MATH_FMA, real, vh, pio2_lo, vl_part));
  MathVal hi = mp_binary(t, MATH_ADD, real, rh, rl);
  MathVal low = mp_binary(t, MATH_SUB, real, rl, mp_binary(t, MATH_SUB, real, hi, rh));
  MathVal negative = mp_binary(t, MATH_LESS, integer, bits, mp_int(t, integer, 0));
  MathVal four = mp_int(t, integer, 4), three = mp_int(t, integer, 3);
  MathVal mirrored = mp_binary(t, MATH_AND, integer, mp_binary(t, MATH_SUB, integer, four, q), three);
  *quadrant = mp_select(t, integer, negative, mirrored, q);
  MathVal minus_low = mp_unary(t, MATH_NEGATE, real, low);
  *lo = mp_select(t, real, negative, minus_low, low);
  MathVal minus_hi = mp_unary(t, MATH_NEGATE, real, hi);
  return mp_select(t, real, negative, minus_hi, hi);
}

/* As reduce_f32, the quadrant an i64. */
static MathVal reduce_f64(MathTarget *t, MathVal x, MathVal *quadrant, MathVal *lo) {
  MathType real = MATH_F64, integer = MATH_I64;
  MathVal limit = mp_real(t, real, 0x1p20);
  MathVal small = mp_binary(t, MATH_LESS, real, mp_unary(t, MATH_ABS, real, x), limit);
  MathVal zero = mp_real(t, real, 0.0);
  MathVal n, lo_small, lo_large, q_large;
  MathVal hi_small = reduce_small_f64(t, mp_select(t, real, small, x, zero), &n, &lo_small);
  int skip = skip_if_all(t, small); /* Payne-Hanek only where the argument needs it */
  MathVal hi_large = reduce_large_f64(t, x, &q_large, &lo_large);
  skip_end(t, skip);
  MathVal low_bits = mp_int(t, integer, 3);
  MathVal q_small = mp_binary(t, MATH_AND, integer, mp_unary(t, MATH_TO_INT, real, n), low_bits);
  *quadrant = mp_select(t, integer, small, q_small, q_large);
  *lo = mp_select(t, real, small, lo_small, lo_large);
  return mp_select(t, real, small, hi_small, hi_large);
}

/* sin(hi + lo) = hi + (hi^3 S(z) + lo (1 - z/2)), z = hi^2. */
static MathVal sin_kernel_f64(MathTarget *t, MathVal hi, MathVal lo) {
  static const MathTable table = {.f64 = mathref_sin_f64_table, .count = MATHREF_SIN_F64_COUNT};
  MathType real = MATH_F64;
  MathVal z = mp_binary(t, MATH_MUL, real, hi, hi);
  MathVal p = mp_polynomial(t, real, &table, z);
  MathVal minus_half = mp_real(t, real, -0.5), one = mp_real(t, real, 1.0);
  MathVal correction = mp_binary(t, MATH_MUL, real, lo, mp_op(t, MATH_FMA, real, z, minus_half, one));
  MathVal z_p = mp_binary(t, MATH_MUL, real, z, p);
  return mp_binary(t, MATH_ADD, real, hi, mp_op(t, MATH_FMA, real, hi, z_p, correction));
}

/* cos(hi + lo) = w + tail with w = 1 - z/2 rounded, tail what w lost
 * plus z^2 C(z) - hi lo - (z's own rounding error)/2. */
static MathVal cos_kernel_f64(MathTarget *t, MathVal hi, MathVal lo) {
  static const MathTable table = {.f64 = mathref_cos_f64_table, .count = MATHREF_COS_F64_COUNT};
  MathType real = MATH_F64;
  MathVal half = mp_real(t, real, 0.5), one = mp_real(t, real, 1.0);
  MathVal z = mp_binary(t, MATH_MUL, real, hi, hi);
  MathVal z_lost = mp_product_error(t, real, hi, hi, z);
  MathVal hz = mp_binary(t, MATH_MUL, real, half, z);
  MathVal w = mp_binary(t, MATH_SUB, real, one, hz);
  MathVal p = mp_polynomial(t, real, &table, z);
  MathVal z_z_p = mp_binary(t, MATH_MUL, real, mp_binary(t, MATH_MUL, real, z, z), p);
  MathVal cross = mp_op(t, MATH_FMA, real, hi, lo, mp_binary(t, MATH_MUL, real, half, z_lost));
  MathVal small = mp_binary(t, MATH_SUB, real, z_z_p, cross);
  MathVal lost = mp_binary(t, MATH_SUB, real, mp_binary(t, MATH_SUB, real, one, w), hz);
  return mp_binary(t, MATH_ADD, real, w, mp_binary(t, MATH_ADD, real, lost, small));
}

static MathVal sin_f64(MathTarget *t, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = MATH_F64;
  MathVal quadrant, lo;
  MathVal hi = reduce_f64(t, x, &quadrant, &lo);
  MathVal cosine = cos_kernel_f64(t, hi, lo), sine = sin_kernel_f64(t, hi, lo);
  MathVal y = mp_select(t, real, quadrant_bit(t, MATH_I64, quadrant, 1), cosine, sine);
  MathVal minus_y = mp_unary(t, MATH_NEGATE, real, y);
  y = mp_select(t, real, quadrant_bit(t, MATH_I64, quadrant, 2), minus_y, y);
  MathVal tiny_limit = mp_real(t, real, 0x1p-26);
  MathVal tiny = mp_binary(t, MATH_LESS, real, mp_unary(t, MATH_ABS, real, x), tiny_limit);
  y = mp_select(t, real, tiny, x, y);
  MathVal nan = mp_quiet_nan(t, &math_format_f64);
  return mp_scope_end(t, scope, mp_select(t, real, trig_is_invalid(t, real, x), nan, y));
}

static MathVal cos_f64(MathTarget *t, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = MATH_F64;
  MathVal quadrant, lo;
  MathVal hi = reduce_f64(t, x, &quadrant, &lo);
  MathVal sine = sin_kernel_f64(t, hi, lo), cosine = cos_kernel_f64(t, hi, lo);
  MathVal y = mp_select(t, real, quadrant_bit(t, MATH_I64, quadrant, 1), sine, cosine);
  MathVal next = mp_binary(t, MATH_ADD, MATH_I64, quadrant, mp_int(t, MATH_I64, 1));
  MathVal minus_y = mp_unary(t, MATH_NEGATE, real, y);
  y = mp_select(t, real, quadrant_bit(t, MATH_I64, next, 2), minus_y, y);
  MathVal nan = mp_quiet_nan(t, &math_format_f64);
  return mp_scope_end(t, scope, mp_select(t, real, trig_is_invalid(t, real, x), nan, y));
}

/* tan = sin / cos of the reduced argument (-cos / sin in odd quadrants),
 * the quotient corrected once by its remainder. */
static MathVal tan_f64(MathTarget *t, MathVal x) {
  int scope = mp_scope_begin(t);
  MathType real = MATH_F64;
  MathVal quadrant, lo;
  MathVal hi = reduce_f64(t, x, &quadrant, &lo);
  MathVal s = sin_kernel_f64(t, hi, lo), c = cos_kernel_f64(t, hi, lo);
  MathVal odd = quadrant_bit(t, MATH_I64, quadrant, 1);
  MathVal minus_c = mp_unary(t, MATH_NEGATE, real, c);
  MathVal num = mp_select(t, real, odd, minus_c, s), den = mp_select(t, real, odd, s, c);
  MathVal q = mp_binary(t, MATH_DIV, real, num, den);
  MathVal remainder = mp_op(t, MATH_FMA, real, mp_unary(t, MATH_NEGATE, real, q), den, num);
  MathVal y = mp_binary(t, MATH_ADD, real, q, mp_binary(t, MATH_DIV, real, remainder, den));
  MathVal tiny_limit = mp_real(t, real, 0x1p-27);
  MathVal tiny = mp_binary(t, MATH_LESS, real, mp_unary(t, MATH_ABS, real, x), tiny_limit);
  y = mp_select(t, real, tiny, x, y);
  MathVal nan = mp_quiet_nan(t, &math_format_f64);
  return mp_scope_end(t, scope, mp_select(t, real, trig_is_invalid(t, real, x), nan, y));
}

MathVal math_program_sin(MathTarget *t, const MathFormat *f, MathVal x) {
  return f->real == MATH_F32 ? sin_f32(t, x) : sin_f64(t, x);
}

MathVal math_program_cos(MathTarget *t, const MathFormat *f, MathVal x) {
  return f->real == MATH_F32 ? cos_f32(t, x) : cos_f64(t, x);
}

MathVal math_program_tan(MathTarget *t, const MathFormat *f, MathVal x) {
  return f->real == MATH_F32 ? tan_f32(t, x) : tan_f64(t, x);
}
