/* The f32 math functions in PTX: src/ir/kernel/math_reference.c
 * transcribed operation for operation, so that a GPU thread computes the
 * same bits as the reference (and as the CPU backend's vector code).
 *
 * The transcription keeps the reference's rules: every float operation is
 * the IEEE one (add.rn, mul.rn, div.rn, fma.rn, sqrt.rn; never .approx or
 * .ftz, so subnormals are kept); min/max are "a < b ? a : b" (setp then
 * selp, not PTX's min, which treats NaN differently); both sides of every
 * branch are computed and selp picks one; integers are 32-bit (shr.s32 is
 * the arithmetic shift), with mul.wide.u32 and 64-bit sums where
 * Payne-Hanek needs them, and pow works in f64 as the reference does. The
 * coefficient tables are read from math_reference.h, so both use the very
 * same numbers; the Payne-Hanek windows of 2/pi go into the module once,
 * as a .global array, when a kernel first needs them.
 *
 * Each function takes its operand registers and returns a fresh register
 * holding the result; registers are virtual (ptxas allocates), so the
 * code below reads like the C it transcribes. One rule keeps the text the
 * same whatever the C compiler: no call has two arguments that emit
 * instructions (C leaves the order of their evaluation open), so such
 * values are named first, in order. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit_ptx/ptx_builder.h"
#include "emit_ptx/ptx_math_program.h"
#include "kernel/math_reference.h"

typedef PtxReg R;

/* ---- one instruction each ---- */

static R reg(PtxBuilder *b, PtxType t) { return ptx_reg_new(b, t); }

static R f_imm(PtxBuilder *b, float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  char text[16];
  snprintf(text, sizeof text, "0f%08X", bits);
  R d = reg(b, PTX_F32);
  ptx_inst(b, "mov.b32 $r, $s", d, text);
  return d;
}

static R i_imm(PtxBuilder *b, int v) {
  R d = reg(b, PTX_S32);
  ptx_inst(b, "mov.b32 $r, $d", d, v);
  return d;
}

static R add(PtxBuilder *b, R x, R y) { return ptx_op2(b, PTX_F32, "add.rn.f32", x, y); }
static R sub(PtxBuilder *b, R x, R y) { return ptx_op2(b, PTX_F32, "sub.rn.f32", x, y); }
static R mul(PtxBuilder *b, R x, R y) { return ptx_op2(b, PTX_F32, "mul.rn.f32", x, y); }
static R divide(PtxBuilder *b, R x, R y) { return ptx_op2(b, PTX_F32, "div.rn.f32", x, y); }
static R ffma(PtxBuilder *b, R x, R y, R z) { return ptx_op3(b, PTX_F32, "fma.rn.f32", x, y, z); }
static R neg(PtxBuilder *b, R x) { return ptx_op1(b, PTX_F32, "neg.f32", x); }
static R subk(PtxBuilder *b, R x, float k) { return sub(b, x, f_imm(b, k)); }
static R mulk(PtxBuilder *b, R x, float k) { return mul(b, x, f_imm(b, k)); }
static R fmak(PtxBuilder *b, R x, float k, R z) { return ffma(b, x, f_imm(b, k), z); }

/* A predicate: setp.CMP.f32 x, y. */
static R cmp(PtxBuilder *b, const char *op, R x, R y) {
  R p = reg(b, PTX_PRED);
  ptx_inst(b, "setp.$s.f32 $r, $r, $r", op, p, x, y);
  return p;
}
static R cmpk(PtxBuilder *b, const char *op, R x, float k) { return cmp(b, op, x, f_imm(b, k)); }
static R icmpk(PtxBuilder *b, const char *op, R x, int k) {
  R p = reg(b, PTX_PRED);
  ptx_inst(b, "setp.$s.s32 $r, $r, $d", op, p, x, k);
  return p;
}
static R is_nan(PtxBuilder *b, R x) { return cmp(b, "nan", x, x); }
static R p_or(PtxBuilder *b, R p, R q) { return ptx_op2(b, PTX_PRED, "or.pred", p, q); }

/* select_*: mask ? a : c. */
static R sel(PtxBuilder *b, R mask, R a, R c) {
  R d = reg(b, PTX_F32);
  ptx_inst(b, "selp.f32 $r, $r, $r, $r", d, a, c, mask);
  return d;
}
static R selk(PtxBuilder *b, R mask, float a, float c) {
  R ra = f_imm(b, a), rc = f_imm(b, c);
  return sel(b, mask, ra, rc);
}
static R isel(PtxBuilder *b, R mask, R a, R c) {
  R d = reg(b, PTX_S32);
  ptx_inst(b, "selp.b32 $r, $r, $r, $r", d, a, c, mask);
  return d;
}

static R bits_of(PtxBuilder *b, R x) { return ptx_op1(b, PTX_B32, "mov.b32", x); }
static R float_of_bits(PtxBuilder *b, R r) { return ptx_op1(b, PTX_F32, "mov.b32", r); }
static R iop(PtxBuilder *b, const char *op, R x, int k) {
  R d = reg(b, PTX_S32);
  ptx_inst(b, "$s $r, $r, $d", op, d, x, k);
  return d;
}

static R abs_f32(PtxBuilder *b, R x) { return float_of_bits(b, iop(b, "and.b32", bits_of(b, x), 0x7fffffff)); }

static R int_of(PtxBuilder *b, R x) { return ptx_op1(b, PTX_S32, "cvt.rzi.s32.f32", x); }
static R float_of(PtxBuilder *b, R i) { return ptx_op1(b, PTX_F32, "cvt.rn.f32.s32", i); }

static R polynomial_f32(PtxBuilder *b, const float *c, int count, R v) {
  R p = f_imm(b, c[count - 1]);
  for (int k = count - 2; k >= 0; k--) {
    R ck = f_imm(b, c[k]);
    p = ffma(b, p, v, ck);
  }
  return p;
}

static const float F32_INF = (float)INFINITY;

static R quiet_nan(PtxBuilder *b) { return float_of_bits(b, i_imm(b, 0x7fc00000)); }

/* mask ? NaN : y. */
static R sel_nan(PtxBuilder *b, R mask, R y) {
  R nan = quiet_nan(b);
  return sel(b, mask, nan, y);
}

/* ---- exp, expm1 ---- */

/* ---- log, log1p ---- */

/* ---- tanh, logistic, erf ---- */

/* ---- cbrt, rsqrt ---- */

/* ---- sin, cos, tan ---- */

/* Cody-Waite for |x| < MATHREF_TRIG_SMALL_LIMIT (math_reference.c says
 * why each step is exact): x = n pi/2 + hi + lo. */
static R trig_reduce_small(PtxBuilder *b, R x, R *n, R *lo) {
  R q = subk(b, fmak(b, x, MATHREF_TWO_OVER_PI, f_imm(b, MATHREF_ROUND_SHIFTER_F32)), MATHREF_ROUND_SHIFTER_F32);
  R rough = fmak(b, q, -MATHREF_PIO2_2, fmak(b, q, -MATHREF_PIO2_1, x));
  q = add(b, q, selk(b, cmpk(b, "gt", rough, MATHREF_PIO4_HI), 1.0f, 0.0f));
  q = sub(b, q, selk(b, cmpk(b, "lt", rough, -MATHREF_PIO4_HI), 1.0f, 0.0f));
  R r1 = fmak(b, q, -MATHREF_PIO2_1, x);
  R p = mulk(b, q, MATHREF_PIO2_2);
  R pe = fmak(b, q, MATHREF_PIO2_2, neg(b, p));
  R s = sub(b, r1, p);
  R back = sub(b, s, r1);
  R r1_lost = sub(b, r1, sub(b, s, back));
  R p_lost = sub(b, neg(b, p), back);
  R se = add(b, r1_lost, p_lost);
  R minus_q = neg(b, q);
  R low = fmak(b, minus_q, MATHREF_PIO2_3, sub(b, se, pe));
  R hi = add(b, s, low);
  *lo = sub(b, low, sub(b, hi, s));
  *n = q;
  return hi;
}

/* The windows of 2/pi as one .global array of 106 x 3 words, written
 * into the module before the first kernel that reads it. */
static const char *two_over_pi_symbol = "axle_math_two_over_pi";

static void two_over_pi_declare(PtxBuilder *b) {
  if (b->module.data && strstr(b->module.data, two_over_pi_symbol)) return;
  strbuf_printf(&b->module, "// math_reference.c's windows of 2/pi, for Payne-Hanek\n");
  strbuf_printf(&b->module, ".global .align 4 .u32 %s[318] = {", two_over_pi_symbol);
  for (int row = 0; row < 106; row++)
    for (int w = 0; w < 3; w++)
      strbuf_printf(&b->module, "%s%s%u", row + w ? ", " : "", (row * 3 + w) % 6 ? "" : "\n  ",
                    mathref_two_over_pi_windows[row][w]);
  strbuf_printf(&b->module, "\n};\n\n");
}

static R u64_op(PtxBuilder *b, const char *op, R x, const char *k) {
  R d = reg(b, PTX_U64);
  ptx_inst(b, "$s $r, $r, $s", op, d, x, k);
  return d;
}
static R u32_of_u64(PtxBuilder *b, R x) { return ptx_op1(b, PTX_U32, "cvt.u32.u64", x); }
static R u64_of_u32(PtxBuilder *b, R x) { return ptx_op1(b, PTX_U64, "cvt.u64.u32", x); }
/* (float)(int32_t)x * scale, x a u64 below 2^31 */
static R scaled_float_of_u64(PtxBuilder *b, R x, float scale) {
  return mulk(b, ptx_op1(b, PTX_F32, "cvt.rn.f32.s32", u32_of_u64(b, x)), scale);
}

/* M 2^E times its window of 2/pi, mod 2^96: the top 64 bits, rounded,
 * hold the quadrant (2 bits) and the signed fraction (units of 2^-62). */
static R trig_window_product(PtxBuilder *b, R bits) {
  R row = iop(b, "sub.s32", iop(b, "and.b32", iop(b, "shr.u32", bits, 23), 0xff), 149);
  row = iop(b, "min.s32", iop(b, "max.s32", row, 0), 105);
  R table = reg(b, PTX_U64);
  ptx_inst(b, "mov.u64 $r, $s", table, two_over_pi_symbol);
  R at = reg(b, PTX_U64);
  ptx_inst(b, "mad.wide.s32 $r, $r, 12, $r", at, row, table);
  R w[3];
  for (int i = 0; i < 3; i++) {
    w[i] = reg(b, PTX_U32);
    ptx_inst(b, "ld.global.nc.u32 $r, [$r+$d]", w[i], at, 4 * i);
  }
  R m = iop(b, "or.b32", iop(b, "and.b32", bits, 0x7fffff), 0x800000);
  R p2 = ptx_op2(b, PTX_U64, "mul.wide.u32", m, w[2]);
  R p1 = ptx_op2(b, PTX_U64, "mul.wide.u32", m, w[1]);
  R p2_high = u64_op(b, "shr.u64", p2, "32"), p1_low = u64_op(b, "and.b64", p1, "4294967295");
  R mid = ptx_op2(b, PTX_U64, "add.s64", p2_high, p1_low);
  R top = ptx_op2(b, PTX_U32, "mul.lo.u32", m, w[0]);
  top = ptx_op2(b, PTX_U32, "add.u32", top, u32_of_u64(b, u64_op(b, "shr.u64", p1, "32")));
  top = ptx_op2(b, PTX_U32, "add.u32", top, u32_of_u64(b, u64_op(b, "shr.u64", mid, "32")));
  R t_high = u64_op(b, "shl.b64", u64_of_u32(b, top), "32"), t_low = u64_op(b, "and.b64", mid, "4294967295");
  R t = ptx_op2(b, PTX_U64, "or.b64", t_high, t_low);
  return u64_op(b, "add.s64", t, "2305843009213693952"); /* + 2^61 */
}

/* Payne-Hanek for any finite |x| >= MATHREF_TRIG_SMALL_LIMIT. */
static R trig_reduce_large(PtxBuilder *b, R x, R *n, R *lo) {
  two_over_pi_declare(b);
  R bits = bits_of(b, x);
  R t = trig_window_product(b, bits);
  R quadrant = u32_of_u64(b, u64_op(b, "shr.u64", t, "62"));
  R biased = u64_op(b, "and.b64", t, "4611686018427387903"); /* f + 2^61 */
  R f_negative = reg(b, PTX_PRED);
  ptx_inst(b, "setp.eq.u64 $r, $r, 0", f_negative, u64_op(b, "and.b64", biased, "2305843009213693952"));
  R below = reg(b, PTX_U64), above = u64_op(b, "sub.s64", biased, "2305843009213693952");
  ptx_inst(b, "sub.s64 $r, 2305843009213693952, $r", below, biased);
  R fa = reg(b, PTX_U64);
  ptx_inst(b, "selp.b64 $r, $r, $r, $r", fa, below, above, f_negative);
  R v2 = scaled_float_of_u64(b, u64_op(b, "shr.u64", fa, "42"), 0x1p-20f);
  R v1 = scaled_float_of_u64(b, u64_op(b, "and.b64", u64_op(b, "shr.u64", fa, "21"), "2097151"), 0x1p-41f);
  R v0 = scaled_float_of_u64(b, u64_op(b, "and.b64", fa, "2097151"), 0x1p-62f);
  R fh = add(b, v2, v1);
  R fl = add(b, add(b, sub(b, v2, fh), v1), v0);
  R rh = mulk(b, fh, MATHREF_PIO2_1);
  R rh_error = fmak(b, fh, MATHREF_PIO2_1, neg(b, rh));
  R fl_part = fmak(b, fh, MATHREF_PIO2_2, mulk(b, fl, MATHREF_PIO2_1));
  R rl = add(b, rh_error, fl_part);
  R hi = add(b, rh, rl);
  R low = sub(b, rl, sub(b, hi, rh));
  R x_negative = icmpk(b, "lt", bits, 0);
  R negate = ptx_op2(b, PTX_PRED, "xor.pred", f_negative, x_negative);
  *lo = sel(b, negate, neg(b, low), low);
  R mirrored = iop(b, "and.b32", ptx_op2(b, PTX_S32, "sub.s32", i_imm(b, 4), quadrant), 3);
  *n = float_of(b, isel(b, x_negative, mirrored, quadrant));
  return sel(b, negate, neg(b, hi), hi);
}

/* x = n pi/2 + hi + lo with |hi + lo| <= pi/4; the quadrant n mod 4. */
static R trig_reduce(PtxBuilder *b, R x, R *quadrant, R *lo) {
  R small = cmpk(b, "lt", abs_f32(b, x), MATHREF_TRIG_SMALL_LIMIT);
  R n_small, lo_small, n_large, lo_large;
  R hi_small = trig_reduce_small(b, sel(b, small, x, f_imm(b, 0.0f)), &n_small, &lo_small);
  R hi_large = trig_reduce_large(b, x, &n_large, &lo_large);
  *quadrant = iop(b, "and.b32", int_of(b, sel(b, small, n_small, n_large)), 3);
  *lo = sel(b, small, lo_small, lo_large);
  return sel(b, small, hi_small, hi_large);
}

static R sin_kernel(PtxBuilder *b, R r, R lo) {
  R z = mul(b, r, r);
  return add(b, r, ffma(b, r, mul(b, z, polynomial_f32(b, mathref_sin_table, MATHREF_SIN_COUNT, z)), lo));
}

static R cos_kernel(PtxBuilder *b, R r) {
  R z = mul(b, r, r);
  R poly = polynomial_f32(b, mathref_cos_table, MATHREF_COS_COUNT, z), one = f_imm(b, 1.0f);
  return ffma(b, z, poly, one);
}

static R trig_is_invalid(PtxBuilder *b, R x) {
  R nan = is_nan(b, x), infinite = cmpk(b, "eq", abs_f32(b, x), F32_INF);
  return p_or(b, nan, infinite);
}

/* mask ? -y : y. */
static R sel_negated(PtxBuilder *b, R mask, R y) {
  R minus_y = neg(b, y);
  return sel(b, mask, minus_y, y);
}

/* A predicate: (i & bit) != 0. */
static R bit_set(PtxBuilder *b, R i, int bit) { return icmpk(b, "ne", iop(b, "and.b32", i, bit), 0); }

static R sin_f32(PtxBuilder *b, R x) {
  R quadrant, lo, r = trig_reduce(b, x, &quadrant, &lo);
  R odd = bit_set(b, quadrant, 1), cosine = cos_kernel(b, r), sine = sin_kernel(b, r, lo);
  R y = sel(b, odd, cosine, sine);
  y = sel_negated(b, bit_set(b, quadrant, 2), y);
  y = sel(b, cmpk(b, "lt", abs_f32(b, x), 0x1p-12f), x, y);
  return sel_nan(b, trig_is_invalid(b, x), y);
}

static R cos_f32(PtxBuilder *b, R x) {
  R quadrant, lo, r = trig_reduce(b, x, &quadrant, &lo);
  R odd = bit_set(b, quadrant, 1), sine = sin_kernel(b, r, lo), cosine = cos_kernel(b, r);
  R y = sel(b, odd, sine, cosine);
  y = sel_negated(b, bit_set(b, iop(b, "add.s32", quadrant, 1), 2), y);
  return sel_nan(b, trig_is_invalid(b, x), y);
}

static R tan_f32(PtxBuilder *b, R x) {
  R quadrant, lo, r = trig_reduce(b, x, &quadrant, &lo);
  R z = mul(b, r, r);
  R p = polynomial_f32(b, mathref_tan_table, MATHREF_TAN_COUNT, z);
  R zp = mul(b, z, p), one = f_imm(b, 1.0f);
  R w = ffma(b, r, zp, mul(b, lo, ffma(b, r, r, one)));
  R t = add(b, r, w);
  R t_lo = sub(b, w, sub(b, t, r));
  R q = divide(b, f_imm(b, -1.0f), t);
  R one_again = f_imm(b, 1.0f);
  R reciprocal_error = ffma(b, q, t, one_again);
  R residual = add(b, reciprocal_error, mul(b, q, t_lo));
  R odd = bit_set(b, quadrant, 1);
  R y = sel(b, odd, ffma(b, q, residual, q), t);
  y = sel(b, cmpk(b, "lt", abs_f32(b, x), 0x1p-12f), x, y);
  return sel_nan(b, trig_is_invalid(b, x), y);
}

/* ---- atan2 ---- */

/* ---- pow, in f64 as the reference ---- */

/* ---- compositions of the above (math_reference.c's atanf ... atanhf) ---- */

/* ---- the table the elementwise emitter reads ---- */

typedef struct PtxMathRow {
  Opcode op;
  R (*unary)(PtxBuilder *b, R x);
  R (*binary)(PtxBuilder *b, R x, R y);
} PtxMathRow;

static const PtxMathRow ptx_math_rows[] = {
    {OP_EXPONENTIAL, ptx_math_exp_f32, NULL},   {OP_EXPONENTIAL_MINUS_ONE, ptx_math_expm1_f32, NULL},
    {OP_LOG, ptx_math_log_f32, NULL},           {OP_LOG_PLUS_ONE, ptx_math_log1p_f32, NULL},
    {OP_TANH, ptx_math_tanh_f32, NULL},         {OP_LOGISTIC, ptx_math_logistic_f32, NULL},
    {OP_ERF, ptx_math_erf_f32, NULL},           {OP_SINE, sin_f32, NULL},
    {OP_COSINE, cos_f32, NULL},        {OP_TAN, tan_f32, NULL},
    {OP_CBRT, ptx_math_cbrt_f32, NULL},         {OP_RSQRT, ptx_math_rsqrt_f32, NULL},
    {OP_ATAN2, NULL, ptx_math_atan2_f32},       {OP_POWER, NULL, ptx_math_pow_f32},
    {OP_ATAN, ptx_math_atan_f32, NULL},         {OP_ASIN, ptx_math_asin_f32, NULL},
    {OP_ACOS, ptx_math_acos_f32, NULL},         {OP_SINH, ptx_math_sinh_f32, NULL},
    {OP_COSH, ptx_math_cosh_f32, NULL},         {OP_ASINH, ptx_math_asinh_f32, NULL},
    {OP_ACOSH, ptx_math_acosh_f32, NULL},       {OP_ATANH, ptx_math_atanh_f32, NULL},
};

bool ptx_math_emit(PtxBuilder *b, Opcode op, PtxReg dst, const PtxReg *operands) {
  for (size_t i = 0; i < sizeof ptx_math_rows / sizeof *ptx_math_rows; i++) {
    const PtxMathRow *row = &ptx_math_rows[i];
    if (row->op != op) continue;
    ptx_comment(b, "%s, transcribed from math_reference.c", opcode_name(op));
    R y = row->unary ? row->unary(b, operands[0]) : row->binary(b, operands[0], operands[1]);
    ptx_inst(b, "mov.f32 $r, $r", dst, y);
    return true;
  }
  return false;
}
