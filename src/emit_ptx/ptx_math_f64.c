/* The f64 math functions in PTX: src/ir/kernel/math_reference_f64.c
 * transcribed operation for operation, as ptx_math.c does for the f32
 * ones, so that a GPU thread computes the reference's bits.
 *
 * The same rules: every float operation is the IEEE one (add.rn, mul.rn,
 * div.rn, fma.rn, sqrt.rn on f64; never .approx or .ftz); min/max are
 * setp then selp; both sides of every branch are computed and selp picks
 * one; the reference's int64_t lanes are .s64 registers (shr.s64 is its
 * arithmetic shift). Coefficients come from math_reference.h's tables;
 * Payne-Hanek's words of 2/pi go into the module once, as a .global
 * array. No call has two arguments that emit instructions (C leaves
 * their order open), so such values are named first, in order. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit_ptx/ptx_builder.h"
#include "emit_ptx/ptx_math_program.h"
#include "kernel/math_reference.h"

typedef PtxReg R;

/* ---- one instruction each ---- */

static R reg(PtxBuilder *b, PtxType t) { return ptx_reg_new(b, t); }

static R d_imm(PtxBuilder *b, double v) { return ptx_f64_constant(b, v); }

static R l_imm(PtxBuilder *b, int64_t v) {
  char text[24];
  snprintf(text, sizeof text, "%lld", (long long)v);
  R d = reg(b, PTX_S64);
  ptx_inst(b, "mov.b64 $r, $s", d, text);
  return d;
}

static R add(PtxBuilder *b, R x, R y) { return ptx_op2(b, PTX_F64, "add.rn.f64", x, y); }
static R sub(PtxBuilder *b, R x, R y) { return ptx_op2(b, PTX_F64, "sub.rn.f64", x, y); }
static R mul(PtxBuilder *b, R x, R y) { return ptx_op2(b, PTX_F64, "mul.rn.f64", x, y); }
static R divide(PtxBuilder *b, R x, R y) { return ptx_op2(b, PTX_F64, "div.rn.f64", x, y); }
static R dfma(PtxBuilder *b, R x, R y, R z) { return ptx_op3(b, PTX_F64, "fma.rn.f64", x, y, z); }
static R neg(PtxBuilder *b, R x) { return ptx_op1(b, PTX_F64, "neg.f64", x); }
static R subk(PtxBuilder *b, R x, double k) { return sub(b, x, d_imm(b, k)); }
static R mulk(PtxBuilder *b, R x, double k) { return mul(b, x, d_imm(b, k)); }
static R fmak(PtxBuilder *b, R x, double k, R z) { return dfma(b, x, d_imm(b, k), z); }
/* k - x */
static R ksub(PtxBuilder *b, double k, R x) {
  R rk = d_imm(b, k);
  return sub(b, rk, x);
}

static R cmp(PtxBuilder *b, const char *op, R x, R y) {
  R p = reg(b, PTX_PRED);
  ptx_inst(b, "setp.$s.f64 $r, $r, $r", op, p, x, y);
  return p;
}
static R cmpk(PtxBuilder *b, const char *op, R x, double k) { return cmp(b, op, x, d_imm(b, k)); }
static R lcmpk(PtxBuilder *b, const char *op, R x, int k) {
  R p = reg(b, PTX_PRED);
  ptx_inst(b, "setp.$s.s64 $r, $r, $d", op, p, x, k);
  return p;
}
static R is_nan(PtxBuilder *b, R x) { return cmp(b, "nan", x, x); }
static R p_or(PtxBuilder *b, R p, R q) { return ptx_op2(b, PTX_PRED, "or.pred", p, q); }

static R sel(PtxBuilder *b, R mask, R a, R c) {
  R d = reg(b, PTX_F64);
  ptx_inst(b, "selp.f64 $r, $r, $r, $r", d, a, c, mask);
  return d;
}
static R lsel(PtxBuilder *b, R mask, R a, R c) {
  R d = reg(b, PTX_S64);
  ptx_inst(b, "selp.b64 $r, $r, $r, $r", d, a, c, mask);
  return d;
}
static R lselk(PtxBuilder *b, R mask, int64_t a, int64_t c) {
  R ra = l_imm(b, a), rc = l_imm(b, c);
  return lsel(b, mask, ra, rc);
}

static R bits_of(PtxBuilder *b, R x) { return ptx_op1(b, PTX_S64, "mov.b64", x); }
static R double_of_bits(PtxBuilder *b, R r) { return ptx_op1(b, PTX_F64, "mov.b64", r); }
/* d = OP x, k on s64 lanes; k written in hex (masks of the sign bit) */
static R lop(PtxBuilder *b, const char *op, R x, uint64_t k) {
  char text[24];
  snprintf(text, sizeof text, "0x%016llX", (unsigned long long)k);
  R d = reg(b, PTX_S64);
  ptx_inst(b, "$s $r, $r, $s", op, d, x, text);
  return d;
}
static R lop2(PtxBuilder *b, const char *op, R x, R y) { return ptx_op2(b, PTX_S64, op, x, y); }

static const uint64_t SIGN_BIT = UINT64_C(1) << 63;
static const uint64_t MANTISSA = (UINT64_C(1) << 52) - 1;

static R abs_f64(PtxBuilder *b, R x) { return double_of_bits(b, lop(b, "and.b64", bits_of(b, x), ~SIGN_BIT)); }

static R int_of(PtxBuilder *b, R x) { return ptx_op1(b, PTX_S64, "cvt.rzi.s64.f64", x); }
static R double_of(PtxBuilder *b, R i) { return ptx_op1(b, PTX_F64, "cvt.rn.f64.s64", i); }

static R polynomial(PtxBuilder *b, const double *c, int count, R v) {
  R p = d_imm(b, c[count - 1]);
  for (int k = count - 2; k >= 0; k--) {
    R ck = d_imm(b, c[k]);
    p = dfma(b, p, v, ck);
  }
  return p;
}

static const double F64_INF = INFINITY;

static R quiet_nan(PtxBuilder *b) { return double_of_bits(b, l_imm(b, INT64_C(0x7ff8000000000000))); }
static R sel_nan(PtxBuilder *b, R mask, R y) {
  R nan = quiet_nan(b);
  return sel(b, mask, nan, y);
}

/* ---- exp, expm1 ---- */

static R round_to_integer(PtxBuilder *b, R x, double factor) {
  R shifter = d_imm(b, MATHREF_ROUND_SHIFTER_F64);
  return subk(b, fmak(b, x, factor, shifter), MATHREF_ROUND_SHIFTER_F64);
}

/* ---- log, log1p ---- */

/* ---- atan2 ---- */

/* ---- rsqrt and the compositions ---- */

/* ---- pow ---- */

/* a + b = s + *e exactly (Knuth's two-sum). */
static R two_sum(PtxBuilder *b, R x, R y, R *e) {
  R s = add(b, x, y);
  R back = sub(b, s, x);
  R x_lost = sub(b, x, sub(b, s, back)), y_lost = sub(b, y, back);
  *e = add(b, x_lost, y_lost);
  return s;
}

/* fma(x, y, -p): what the product p = x y rounded away */
static R product_error(PtxBuilder *b, R x, R y, R p) {
  R minus_p = neg(b, p);
  return dfma(b, x, y, minus_p);
}
static R product_error_k(PtxBuilder *b, R x, double k, R p) {
  R rk = d_imm(b, k);
  return product_error(b, x, rk, p);
}

/* ---- sin, cos, tan ---- */

/* Cody-Waite for |x| < 2^20: x = n pi/2 + hi + lo. */
static R trig_reduce_small(PtxBuilder *b, R x, R *n, R *lo) {
  *n = round_to_integer(b, x, MATHREF_TWO_OVER_PI_F64);
  R r1 = fmak(b, *n, -MATHREF_PIO2_1_F64, x);
  R w = mulk(b, *n, MATHREF_PIO2_2_F64);
  R e2, r2 = two_sum(b, r1, neg(b, w), &e2);
  R p3 = mulk(b, *n, MATHREF_PIO2_3_F64);
  R p3e = product_error_k(b, *n, MATHREF_PIO2_3_F64, p3);
  R se, sum = two_sum(b, r2, neg(b, p3), &se);
  R low = add(b, sub(b, e2, p3e), se);
  R hi = add(b, sum, low);
  *lo = sub(b, low, sub(b, hi, sum));
  return hi;
}

/* The words of 2/pi as one .global array, written into the module before
 * the first kernel that reads it: 8-byte aligned u32 pairs, low half
 * first (the device is little-endian), so that ld.u64 reads each word and
 * the module's globals stay in the one .u32 form every reader knows. */
static const char *two_over_pi_symbol = "axle_math_two_over_pi_f64";

static void table_declare(PtxBuilder *b, const char *symbol, const char *what, const uint64_t *words, int count) {
  if (b->module.data && strstr(b->module.data, symbol)) return;
  strbuf_printf(&b->module, "// %s\n", what);
  strbuf_printf(&b->module, ".global .align 8 .u32 %s[%d] = {", symbol, 2 * count);
  for (int i = 0; i < 2 * count; i++) {
    uint64_t word = words[i / 2];
    strbuf_printf(&b->module, "%s%s%u", i ? ", " : "", i % 6 ? "" : "\n  ",
                  (unsigned)(i % 2 ? word >> 32 : word & 0xffffffffu));
  }
  strbuf_printf(&b->module, "\n};\n\n");
}

static void two_over_pi_declare(PtxBuilder *b) {
  table_declare(b, two_over_pi_symbol, "math_reference_f64.c's words of 2/pi, for Payne-Hanek",
                mathref_two_over_pi_words, MATHREF_TWO_OVER_PI_WORDS);
}

static R u32_op(PtxBuilder *b, const char *op, R x, int k) {
  R d = reg(b, PTX_U32);
  ptx_inst(b, "$s $r, $r, $d", op, d, x, k);
  return d;
}

/* 64 bits of the table from bit g on (two_over_pi_bits): the words at
 * `at` and at + 8, shifted by `shift` (0..63, a u32). */
static R two_over_pi_bits(PtxBuilder *b, R at, int offset, R shift, R shift_rest) {
  R first = reg(b, PTX_U64), second = reg(b, PTX_U64);
  ptx_inst(b, "ld.global.nc.u64 $r, [$r+$d]", first, at, offset);
  ptx_inst(b, "ld.global.nc.u64 $r, [$r+$d]", second, at, offset + 8);
  R high = ptx_op2(b, PTX_U64, "shl.b64", first, shift);
  R low = ptx_op2(b, PTX_U64, "shr.u64", lop(b, "shr.u64", second, 1), shift_rest);
  return ptx_op2(b, PTX_U64, "or.b64", high, low);
}

/* The high 64 bits of x y (the low ones are mul.lo), from 32-bit halves. */
static R multiply_high(PtxBuilder *b, R x, R y) {
  const uint64_t low_half = 0xffffffffu;
  R x0 = lop(b, "and.b64", x, low_half), x1 = lop(b, "shr.u64", x, 32);
  R y0 = lop(b, "and.b64", y, low_half), y1 = lop(b, "shr.u64", y, 32);
  R p00 = lop2(b, "mul.lo.u64", x0, y0), p01 = lop2(b, "mul.lo.u64", x0, y1);
  R p10 = lop2(b, "mul.lo.u64", x1, y0), p11 = lop2(b, "mul.lo.u64", x1, y1);
  R p00_high = lop(b, "shr.u64", p00, 32), p01_low = lop(b, "and.b64", p01, low_half);
  R p10_low = lop(b, "and.b64", p10, low_half);
  R middle = lop2(b, "add.s64", lop2(b, "add.s64", p00_high, p01_low), p10_low);
  R p01_high = lop(b, "shr.u64", p01, 32), p10_high = lop(b, "shr.u64", p10, 32);
  R sum = lop2(b, "add.s64", lop2(b, "add.s64", p11, p01_high), p10_high);
  return lop2(b, "add.s64", sum, lop(b, "shr.u64", middle, 32));
}

/* The low 192 bits of M W (W the 192 bits of 2/pi from the 2^(1-E) place
 * on), as math_reference_f64.c: the top word r2, the next r1, the low
 * word's top 42 bits in *lo2. */
static R trig_window_product(PtxBuilder *b, R bits, R *r1, R *lo2) {
  two_over_pi_declare(b);
  R e = lop(b, "sub.s64", lop(b, "and.b64", lop(b, "shr.u64", bits, 52), 0x7ff), 1075);
  R e_low = lcmpk(b, "lt", e, -32);
  e = lsel(b, e_low, l_imm(b, -32), e);
  R m = lop(b, "or.b64", lop(b, "and.b64", bits, MANTISSA), UINT64_C(1) << 52);
  R g = lop(b, "add.s64", e, 62);
  R shift = u32_op(b, "and.b32", ptx_op1(b, PTX_U32, "cvt.u32.u64", g), 63);
  R shift_rest = reg(b, PTX_U32);
  ptx_inst(b, "sub.s32 $r, 63, $r", shift_rest, shift);
  R table = reg(b, PTX_U64);
  ptx_inst(b, "mov.u64 $r, $s", table, two_over_pi_symbol);
  R at = lop2(b, "add.s64", table, lop(b, "shl.b64", lop(b, "shr.s64", g, 6), 3));
  R w0 = two_over_pi_bits(b, at, 0, shift, shift_rest);
  R w1 = two_over_pi_bits(b, at, 8, shift, shift_rest);
  R w2 = two_over_pi_bits(b, at, 16, shift, shift_rest);
  *lo2 = lop2(b, "mul.lo.u64", m, w2);
  R hi2 = multiply_high(b, m, w2);
  R lo1 = lop2(b, "mul.lo.u64", m, w1);
  R hi1 = multiply_high(b, m, w1);
  *r1 = lop2(b, "add.s64", hi2, lo1);
  R carried = reg(b, PTX_PRED);
  ptx_inst(b, "setp.lt.u64 $r, $r, $r", carried, *r1, hi2);
  R carry = lselk(b, carried, 1, 0);
  R top = lop2(b, "add.s64", hi1, lop2(b, "mul.lo.u64", m, w0));
  return lop2(b, "add.s64", top, carry);
}

/* (double)(int64_t)v * scale */
static R scaled_double_of(PtxBuilder *b, R v, double scale) { return mulk(b, double_of(b, v), scale); }

/* Payne-Hanek for |x| >= 2^20 (any finite x; the caller selects). */
static R trig_reduce_large(PtxBuilder *b, R x, R *quadrant, R *lo) {
  R bits = bits_of(b, x), r1, lo2;
  R r2 = trig_window_product(b, bits, &r1, &lo2);
  R t = lop(b, "add.s64", r2, UINT64_C(1) << 61);
  R q = lop(b, "shr.u64", t, 62);
  R f = lop(b, "sub.s64", lop(b, "and.b64", t, (UINT64_C(1) << 62) - 1), UINT64_C(1) << 61);
  R pa = scaled_double_of(b, lop(b, "shr.s64", f, 21), 0x1p-41);
  R pb = scaled_double_of(b, lop(b, "and.b64", f, 0x1fffff), 0x1p-62);
  R pc = scaled_double_of(b, lop(b, "shr.u64", r1, 11), 0x1p-115);
  R r1_low = lop(b, "shl.b64", lop(b, "and.b64", r1, 2047), 42);
  R pd = scaled_double_of(b, lop2(b, "or.b64", r1_low, lop(b, "shr.u64", lo2, 22)), 0x1p-168);
  R e1, s1 = two_sum(b, pa, pb, &e1);
  R e2, s2 = two_sum(b, s1, pc, &e2);
  R e3, s3 = two_sum(b, s2, pd, &e3);
  R l = add(b, add(b, e1, e2), e3);
  R vh = add(b, s3, l);
  R vl = sub(b, l, sub(b, vh, s3));
  R rh = mulk(b, vh, MATHREF_PIO2_HI_F64);
  R rh_error = product_error_k(b, vh, MATHREF_PIO2_HI_F64, rh);
  R vl_part = mulk(b, vl, MATHREF_PIO2_HI_F64);
  R rl = add(b, rh_error, fmak(b, vh, MATHREF_PIO2_LO_F64, vl_part));
  R hi = add(b, rh, rl);
  R low = sub(b, rl, sub(b, hi, rh));
  R negative = lcmpk(b, "lt", bits, 0);
  R mirrored = lop(b, "and.b64", lop2(b, "sub.s64", l_imm(b, 4), q), 3);
  *quadrant = lsel(b, negative, mirrored, q);
  R minus_low = neg(b, low), minus_hi = neg(b, hi);
  *lo = sel(b, negative, minus_low, low);
  return sel(b, negative, minus_hi, hi);
}

static R trig_reduce(PtxBuilder *b, R x, R *quadrant, R *lo) {
  R small = cmpk(b, "lt", abs_f64(b, x), 0x1p20);
  R n, lo_small, q_large, lo_large;
  R zero = d_imm(b, 0.0);
  R hi_small = trig_reduce_small(b, sel(b, small, x, zero), &n, &lo_small);
  R hi_large = trig_reduce_large(b, x, &q_large, &lo_large);
  R q_small = lop(b, "and.b64", int_of(b, n), 3);
  *quadrant = lsel(b, small, q_small, q_large);
  *lo = sel(b, small, lo_small, lo_large);
  return sel(b, small, hi_small, hi_large);
}

static R sin_kernel(PtxBuilder *b, R hi, R lo) {
  R z = mul(b, hi, hi);
  R p = polynomial(b, mathref_sin_f64_table, MATHREF_SIN_F64_COUNT, z);
  R zp = mul(b, z, p), one = d_imm(b, 1.0);
  R lo_part = mul(b, lo, fmak(b, z, -0.5, one));
  return add(b, hi, dfma(b, hi, zp, lo_part));
}

static R cos_kernel(PtxBuilder *b, R hi, R lo) {
  R z = mul(b, hi, hi);
  R z_lost = product_error(b, hi, hi, z);
  R hz = mulk(b, z, 0.5);
  R w = ksub(b, 1.0, hz);
  R p = polynomial(b, mathref_cos_f64_table, MATHREF_COS_F64_COUNT, z);
  R w_lost = sub(b, ksub(b, 1.0, w), hz);
  R zzp = mul(b, mul(b, z, z), p);
  R half_lost = mulk(b, z_lost, 0.5);
  R tail = add(b, w_lost, sub(b, zzp, dfma(b, hi, lo, half_lost)));
  return add(b, w, tail);
}

static R trig_is_invalid(PtxBuilder *b, R x) {
  R nan = is_nan(b, x), infinite = cmpk(b, "eq", abs_f64(b, x), F64_INF);
  return p_or(b, nan, infinite);
}

static R bit_set(PtxBuilder *b, R i, int bit) { return lcmpk(b, "ne", lop(b, "and.b64", i, (uint64_t)bit), 0); }

static R sel_negated(PtxBuilder *b, R mask, R y) {
  R minus_y = neg(b, y);
  return sel(b, mask, minus_y, y);
}

static R sin_f64(PtxBuilder *b, R x) {
  R quadrant, lo, hi = trig_reduce(b, x, &quadrant, &lo);
  R odd = bit_set(b, quadrant, 1), cosine = cos_kernel(b, hi, lo), sine = sin_kernel(b, hi, lo);
  R y = sel(b, odd, cosine, sine);
  y = sel_negated(b, bit_set(b, quadrant, 2), y);
  y = sel(b, cmpk(b, "lt", abs_f64(b, x), 0x1p-26), x, y);
  return sel_nan(b, trig_is_invalid(b, x), y);
}

static R cos_f64(PtxBuilder *b, R x) {
  R quadrant, lo, hi = trig_reduce(b, x, &quadrant, &lo);
  R odd = bit_set(b, quadrant, 1), sine = sin_kernel(b, hi, lo), cosine = cos_kernel(b, hi, lo);
  R y = sel(b, odd, sine, cosine);
  y = sel_negated(b, bit_set(b, lop(b, "add.s64", quadrant, 1), 2), y);
  return sel_nan(b, trig_is_invalid(b, x), y);
}

static R tan_f64(PtxBuilder *b, R x) {
  R quadrant, lo, hi = trig_reduce(b, x, &quadrant, &lo);
  R s = sin_kernel(b, hi, lo), c = cos_kernel(b, hi, lo);
  R odd = bit_set(b, quadrant, 1);
  R minus_c = neg(b, c);
  R num = sel(b, odd, minus_c, s), den = sel(b, odd, s, c);
  R q = divide(b, num, den);
  R remainder = dfma(b, neg(b, q), den, num);
  R y = add(b, q, divide(b, remainder, den));
  y = sel(b, cmpk(b, "lt", abs_f64(b, x), 0x1p-27), x, y);
  return sel_nan(b, trig_is_invalid(b, x), y);
}

/* ---- cbrt ---- */

/* ---- erf ---- */

/* ---- the table the elementwise emitter reads ---- */

typedef struct PtxMathRow {
  Opcode op;
  R (*unary)(PtxBuilder *b, R x);
  R (*binary)(PtxBuilder *b, R x, R y);
} PtxMathRow;

static const PtxMathRow ptx_math_f64_rows[] = {
    {OP_EXPONENTIAL, ptx_math_exp_f64, NULL}, {OP_EXPONENTIAL_MINUS_ONE, ptx_math_expm1_f64, NULL},
    {OP_LOG, ptx_math_log_f64, NULL},         {OP_LOG_PLUS_ONE, ptx_math_log1p_f64, NULL},
    {OP_TANH, ptx_math_tanh_f64, NULL},       {OP_LOGISTIC, ptx_math_logistic_f64, NULL},
    {OP_RSQRT, ptx_math_rsqrt_f64, NULL},     {OP_ATAN2, NULL, ptx_math_atan2_f64},
    {OP_POWER, NULL, ptx_math_pow_f64},       {OP_SINE, sin_f64, NULL},
    {OP_COSINE, cos_f64, NULL},      {OP_TAN, tan_f64, NULL},
    {OP_CBRT, ptx_math_cbrt_f64, NULL},       {OP_ERF, ptx_math_erf_f64, NULL},
    {OP_ATAN, ptx_math_atan_f64, NULL},       {OP_ASIN, ptx_math_asin_f64, NULL},
    {OP_ACOS, ptx_math_acos_f64, NULL},       {OP_SINH, ptx_math_sinh_f64, NULL},
    {OP_COSH, ptx_math_cosh_f64, NULL},       {OP_ASINH, ptx_math_asinh_f64, NULL},
    {OP_ACOSH, ptx_math_acosh_f64, NULL},     {OP_ATANH, ptx_math_atanh_f64, NULL},
};

bool ptx_math_f64_emit(PtxBuilder *b, Opcode op, PtxReg dst, const PtxReg *operands) {
  for (size_t i = 0; i < sizeof ptx_math_f64_rows / sizeof *ptx_math_f64_rows; i++) {
    const PtxMathRow *row = &ptx_math_f64_rows[i];
    if (row->op != op) continue;
    ptx_comment(b, "%s on f64, transcribed from math_reference_f64.c", opcode_name(op));
    R y = row->unary ? row->unary(b, operands[0]) : row->binary(b, operands[0], operands[1]);
    ptx_inst(b, "mov.f64 $r, $r", dst, y);
    return true;
  }
  return false;
}
