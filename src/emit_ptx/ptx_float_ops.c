/* Float ops of the PTX emitter with no single PTX instruction:
 * reduce-precision, round-nearest-afz and remainder (fmod), on f32 and f64
 * (f16, bf16 and the minifloats computed in f32 and rounded back).
 *
 * Both are exact integer or float sequences, the evaluator's
 * (src/ir/eval/eval_elementwise.c, eval_convert.c) step for step. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit_ptx/ptx_kernel_internal.h"

bool ptx_float_ops_handles(const Kernel *k, const KernelOp *op) {
  ElementType t = k->ops[op->args[0]].type;
  if (!type_is_float(t) || type_is_complex(t)) return false;
  if (op->op == OP_STOCHASTIC_CONVERT) return true;
  return op->op == OP_REDUCE_PRECISION || op->op == OP_ROUND_NEAREST_AFZ || op->op == OP_REMAINDER;
}

/* round(x), halves away from zero: t = trunc(x); x - t is exact, and when
 * |x - t| >= 0.5 the result is t + copysign(1, x). Integral values, ±inf
 * (x - t is NaN) and NaN come out as they went in; -0.3 gives -0. */
static PtxReg round_afz(Emit *E, bool f64, PtxReg x) {
  const char *ty = f64 ? ".f64" : ".f32";
  PtxType pt = f64 ? PTX_F64 : PTX_F32;
  PtxReg t = ptx_reg_new(E->b, pt), diff = ptx_reg_new(E->b, pt), step = ptx_reg_new(E->b, pt);
  PtxReg d = ptx_reg_new(E->b, pt), p = ptx_reg_new(E->b, PTX_PRED), neg = ptx_reg_new(E->b, PTX_PRED);
  ptx_inst(E->b, "cvt.rzi$s$s $r, $r", ty, ty, t, x);
  ptx_inst(E->b, "sub.rn$s $r, $r, $r", ty, diff, x, t);
  ptx_inst(E->b, "abs$s $r, $r", ty, diff, diff);
  ptx_inst(E->b, f64 ? "setp.ge.f64 $r, $r, 0d3FE0000000000000" : "setp.ge.f32 $r, $r, 0f3F000000", p, diff);
  ptx_inst(E->b, f64 ? "setp.lt.f64 $r, $r, 0d0000000000000000" : "setp.lt.f32 $r, $r, 0f00000000", neg, x);
  ptx_inst(E->b, f64 ? "selp.f64 $r, 0dBFF0000000000000, 0d3FF0000000000000, $r"
                     : "selp.f32 $r, 0fBF800000, 0f3F800000, $r",
           step, neg);
  ptx_inst(E->b, "mov$s $r, $r", ty, d, t);
  ptx_inst(E->b, "@$r add.rn$s $r, $r, $r", p, ty, d, t, step);
  return d;
}

/* XLA's reduce-precision on the bits (eval_convert.c's
 * reduce_precision_bits): round the mantissa to nearest even by adding a
 * bias and masking; past the narrower exponent's range, infinity above and
 * (signed) zero at or below; a NaN stays, or is +inf with no mantissa. */
/* A constant for an instruction of the width: 32-bit ones as signed
 * 32-bit values, so that ptxas reads e.g. ~sign_mask as 0x7FFFFFFF. */
static int64_t width_constant(bool f64, uint64_t v) { return f64 ? (int64_t)v : (int64_t)(int32_t)(uint32_t)v; }

static PtxReg reduce_precision(Emit *E, bool f64, PtxReg x, int exponent_bits, int mantissa_bits) {
  int src_m = f64 ? 52 : 23, src_e = f64 ? 11 : 8;
  int e = exponent_bits > 11 ? 11 : exponent_bits, m = mantissa_bits > 52 ? 52 : mantissa_bits;
  PtxType it = f64 ? PTX_U64 : PTX_U32;
  const char *B = f64 ? ".b64" : ".b32", *U = f64 ? ".u64" : ".u32";
  uint64_t sign_mask = 1ull << (f64 ? 63 : 31), exp_mask = ((1ull << src_e) - 1) << src_m;
  PtxReg bits = ptx_reg_new(E->b, it), original = ptx_reg_new(E->b, it), t = ptx_reg_new(E->b, it);
  PtxReg nan = ptx_reg_new(E->b, PTX_PRED), p = ptx_reg_new(E->b, PTX_PRED);
  PtxReg out = ptx_reg_new(E->b, f64 ? PTX_F64 : PTX_F32);
  ptx_inst(E->b, "mov$s $r, $r", B, original, x);
  ptx_inst(E->b, "and$s $r, $r, $D", B, t, original, width_constant(f64, ~sign_mask));
  ptx_inst(E->b, "setp.gt$s $r, $r, $D", U, nan, t, width_constant(f64, exp_mask));
  ptx_inst(E->b, "mov$s $r, $r", B, bits, original);
  if (m < src_m) {
    int dropped = src_m - m;
    uint64_t last_kept = 1ull << dropped;
    ptx_inst(E->b, "shr$s $r, $r, $d", U, t, bits, dropped);
    ptx_inst(E->b, "and$s $r, $r, 1", B, t, t);
    ptx_inst(E->b, "add$s $r, $r, $D", U, t, t, width_constant(f64, ((last_kept >> 1) - 1)));
    ptx_inst(E->b, "add$s $r, $r, $r", U, bits, bits, t);
    ptx_inst(E->b, "and$s $r, $r, $D", B, bits, bits, width_constant(f64, ~(last_kept - 1)));
  }
  if (e < src_e) {
    uint64_t bias = (1ull << (src_e - 1)) - 1, reduced = (1ull << (e - 1)) - 1;
    PtxReg exponent = ptx_reg_new(E->b, it), sign = ptx_reg_new(E->b, it);
    ptx_inst(E->b, "and$s $r, $r, $D", B, exponent, bits, width_constant(f64, exp_mask));
    ptx_inst(E->b, "and$s $r, $r, $D", B, sign, bits, width_constant(f64, sign_mask));
    ptx_inst(E->b, "setp.gt$s $r, $r, $D", U, p, exponent, width_constant(f64, ((bias + reduced) << src_m)));
    ptx_inst(E->b, "@$r or$s $r, $r, $D", p, B, bits, sign, width_constant(f64, exp_mask));
    ptx_inst(E->b, "setp.le$s $r, $r, $D", U, p, exponent, width_constant(f64, ((bias - reduced) << src_m)));
    ptx_inst(E->b, "@$r mov$s $r, $r", p, B, bits, sign);
  }
  if (m > 0) ptx_inst(E->b, "@$r mov$s $r, $r", nan, B, bits, original);
  else ptx_inst(E->b, "@$r mov$s $r, $D", nan, B, bits, width_constant(f64, exp_mask));
  ptx_inst(E->b, "mov$s $r, $r", B, out, bits);
  return out;
}

/* The significand of finite nonzero |x| (bits in abs) as an integer with
 * its leading one at bit 52, and the exponent e that goes with it
 * (|x| = m * 2^(e - 1075)); a subnormal is normalized by its clz. */
static void fmod_split(Emit *E, PtxReg abs, PtxReg *m, PtxReg *e) {
  PtxReg e64 = ptx_reg_new(E->b, PTX_U64), lz = ptx_reg_new(E->b, PTX_U32), sh = ptx_reg_new(E->b, PTX_S32);
  PtxReg p = ptx_reg_new(E->b, PTX_PRED), shifted = ptx_reg_new(E->b, PTX_U64), sub_e = ptx_reg_new(E->b, PTX_S32);
  *m = ptx_reg_new(E->b, PTX_U64), *e = ptx_reg_new(E->b, PTX_S32);
  ptx_inst(E->b, "shr.u64 $r, $r, 52", e64, abs);
  ptx_inst(E->b, "cvt.u32.u64 $r, $r", *e, e64);
  ptx_inst(E->b, "and.b64 $r, $r, 0xFFFFFFFFFFFFF", *m, abs);
  ptx_inst(E->b, "clz.b64 $r, $r", lz, *m);
  ptx_inst(E->b, "sub.s32 $r, $r, 11", sh, lz);
  ptx_inst(E->b, "shl.b64 $r, $r, $r", shifted, *m, sh);
  ptx_inst(E->b, "mov.b32 $r, 1", sub_e);
  ptx_inst(E->b, "sub.s32 $r, $r, $r", sub_e, sub_e, sh);
  ptx_inst(E->b, "setp.eq.s32 $r, $r, 0", p, *e);
  ptx_inst(E->b, "@$r mov.b64 $r, $r", p, *m, shifted);
  ptx_inst(E->b, "@$r mov.b32 $r, $r", p, *e, sub_e);
  ptx_inst(E->b, "@!$r or.b64 $r, $r, 0x10000000000000", p, *m, *m);
}

/* 2^k as an f64, for -1022 <= k <= 1023. */
static PtxReg power_of_two(Emit *E, PtxReg k) {
  PtxReg biased = ptx_reg_new(E->b, PTX_S32), wide = ptx_reg_new(E->b, PTX_U64), d = ptx_reg_new(E->b, PTX_F64);
  ptx_inst(E->b, "add.s32 $r, $r, 1023", biased, k);
  ptx_inst(E->b, "cvt.u64.u32 $r, $r", wide, biased);
  ptx_inst(E->b, "shl.b64 $r, $r, 52", wide, wide);
  ptx_inst(E->b, "mov.b64 $r, $r", d, wide);
  return d;
}

/* fmod(x, y) on f64, exactly, with x's sign: the significands divided by
 * shift and subtract, one exponent step at a time (up to ~2100 steps for
 * the widest ranges); the remainder, below |y|, is exact in f64 and is
 * scaled back in two exact multiplies. NaN for a NaN operand, y = 0 or an
 * infinite x; x itself when |x| < |y| (so for an infinite y). */
static PtxReg fmod_f64(Emit *E, PtxReg x, PtxReg y) {
  PtxReg bits_x = ptx_reg_new(E->b, PTX_U64), ax = ptx_reg_new(E->b, PTX_U64), ay = ptx_reg_new(E->b, PTX_U64);
  PtxReg sign = ptx_reg_new(E->b, PTX_U64), r = ptx_reg_new(E->b, PTX_U64), n = ptx_reg_new(E->b, PTX_S32);
  PtxReg p = ptx_reg_new(E->b, PTX_PRED), q = ptx_reg_new(E->b, PTX_PRED), k = ptx_reg_new(E->b, PTX_S32);
  PtxReg k1 = ptx_reg_new(E->b, PTX_S32), rf = ptx_reg_new(E->b, PTX_F64), out = ptx_reg_new(E->b, PTX_F64);
  PtxReg mx, ex, my, ey;
  PtxLabel head = ptx_label_new(E->b, "fmod"), done = ptx_label_new(E->b, "fmod_done");
  ptx_inst(E->b, "mov.b64 $r, $r", bits_x, x);
  ptx_inst(E->b, "and.b64 $r, $r, 0x7FFFFFFFFFFFFFFF", ax, bits_x);
  ptx_inst(E->b, "and.b64 $r, $r, 0x8000000000000000", sign, bits_x);
  ptx_inst(E->b, "mov.b64 $r, $r", ay, y);
  ptx_inst(E->b, "and.b64 $r, $r, 0x7FFFFFFFFFFFFFFF", ay, ay);
  fmod_split(E, ax, &mx, &ex);
  fmod_split(E, ay, &my, &ey);
  ptx_inst(E->b, "sub.s32 $r, $r, $r", n, ex, ey);
  ptx_inst(E->b, "mov.b64 $r, $r", r, mx);
  ptx_label_place(E->b, head);
  ptx_inst(E->b, "setp.le.s32 $r, $r, 0", p, n);
  ptx_inst(E->b, "@$r bra $l", p, done);
  ptx_inst(E->b, "setp.ge.u64 $r, $r, $r", p, r, my);
  ptx_inst(E->b, "@$r sub.s64 $r, $r, $r", p, r, r, my);
  ptx_inst(E->b, "shl.b64 $r, $r, 1", r, r);
  ptx_inst(E->b, "sub.s32 $r, $r, 1", n, n);
  ptx_inst(E->b, "bra $l", head);
  ptx_label_place(E->b, done);
  ptx_inst(E->b, "setp.ge.u64 $r, $r, $r", p, r, my);
  ptx_inst(E->b, "@$r sub.s64 $r, $r, $r", p, r, r, my);
  /* |result| = r * 2^(ey - 1075) */
  ptx_inst(E->b, "sub.s32 $r, $r, 1075", k, ey);
  ptx_inst(E->b, "max.s32 $r, $r, -1022", k1, k);
  ptx_inst(E->b, "sub.s32 $r, $r, $r", k, k, k1);
  ptx_inst(E->b, "cvt.rn.f64.u64 $r, $r", rf, r);
  PtxReg scale1 = power_of_two(E, k1);
  ptx_inst(E->b, "mul.rn.f64 $r, $r, $r", rf, rf, scale1);
  PtxReg scale2 = power_of_two(E, k);
  ptx_inst(E->b, "mul.rn.f64 $r, $r, $r", rf, rf, scale2);
  ptx_inst(E->b, "mov.b64 $r, $r", r, rf);
  ptx_inst(E->b, "or.b64 $r, $r, $r", r, r, sign);
  ptx_inst(E->b, "mov.b64 $r, $r", out, r);
  ptx_inst(E->b, "setp.lt.u64 $r, $r, $r", p, ax, ay);   /* |x| < |y|: x */
  ptx_inst(E->b, "@$r mov.f64 $r, $r", p, out, x);
  ptx_inst(E->b, "setp.eq.u64 $r, $r, 0", p, ay);
  ptx_inst(E->b, "setp.ge.u64 $r, $r, 0x7FF0000000000000", q, ax);
  ptx_inst(E->b, "or.pred $r, $r, $r", p, p, q);
  ptx_inst(E->b, "setp.gt.u64 $r, $r, 0x7FF0000000000000", q, ay);
  ptx_inst(E->b, "or.pred $r, $r, $r", p, p, q);
  ptx_inst(E->b, "@$r mov.f64 $r, 0d7FF8000000000000", p, out);
  return out;
}

/* fmod on f32 (and the types computed in f32): in f64, where both
 * operands are exact and so is the result, which f32 holds exactly. */
static PtxReg fmod_emit(Emit *E, bool f64, PtxReg x, PtxReg y) {
  if (f64) return fmod_f64(E, x, y);
  PtxReg wx = ptx_reg_new(E->b, PTX_F64), wy = ptx_reg_new(E->b, PTX_F64), d = ptx_reg_new(E->b, PTX_F32);
  ptx_inst(E->b, "cvt.f64.f32 $r, $r", wx, x);
  ptx_inst(E->b, "cvt.f64.f32 $r, $r", wy, y);
  ptx_inst(E->b, "cvt.rn.f32.f64 $r, $r", d, fmod_f64(E, wx, wy));
  return d;
}

/* stochastic-convert, the evaluator's stochastic_round (eval_convert.c)
 * step for step, in f64 (f32 and the halves widen to it exactly): NaN
 * gives 0; at or past the result's range, its end; otherwise |x| = t + f,
 * and t + 1 (with x's sign) when random < (u64)(f * 2^w), w the random
 * type's width. f * 2^w is exact and below 2^64; t + 1 stays in range. */
static PtxReg stochastic_convert(Emit *E, ElementType from, ElementType random_type, ElementType to, PtxReg x,
                                 PtxReg random) {
  int result_bits = type_bit_width(to), random_bits = type_bit_width(random_type);
  int64_t max = (int64_t)(~0ull >> (65 - result_bits)), min = -max - 1;
  char max_text[24], min_text[24], scale_text[24];
  ptx_f64_text((double)max, max_text, sizeof max_text);
  ptx_f64_text((double)min, min_text, sizeof min_text);
  ptx_f64_text(ldexp(1.0, random_bits), scale_text, sizeof scale_text);
  PtxReg v = x, mag = ptx_reg_new(E->b, PTX_F64), whole = ptx_reg_new(E->b, PTX_F64);
  PtxReg frac = ptx_reg_new(E->b, PTX_F64), t = ptx_reg_new(E->b, PTX_S64), limit = ptx_reg_new(E->b, PTX_U64);
  PtxReg r64 = ptx_reg_new(E->b, PTX_U64), p = ptx_reg_new(E->b, PTX_PRED);
  if (from != TYPE_F64) {
    v = ptx_reg_new(E->b, PTX_F64);
    ptx_inst(E->b, "cvt.f64.f32 $r, $r", v, x);
  }
  if (type_byte_size(random_type) == 8) ptx_inst(E->b, "mov.b64 $r, $r", r64, random);
  else ptx_inst(E->b, "cvt.u64.u32 $r, $r", r64, random);
  ptx_inst(E->b, "abs.f64 $r, $r", mag, v);
  ptx_inst(E->b, "cvt.rmi.f64.f64 $r, $r", whole, mag);
  ptx_inst(E->b, "sub.rn.f64 $r, $r, $r", frac, mag, whole);
  ptx_inst(E->b, "mul.rn.f64 $r, $r, $s", frac, frac, scale_text);
  ptx_inst(E->b, "cvt.rzi.u64.f64 $r, $r", limit, frac);
  ptx_inst(E->b, "cvt.rzi.s64.f64 $r, $r", t, whole);
  ptx_inst(E->b, "setp.lt.u64 $r, $r, $r", p, r64, limit);
  ptx_inst(E->b, "@$r add.s64 $r, $r, 1", p, t, t);
  ptx_inst(E->b, "setp.lt.f64 $r, $r, 0d0000000000000000", p, v);   /* -0 keeps t = 0 */
  ptx_inst(E->b, "@$r neg.s64 $r, $r", p, t, t);
  ptx_inst(E->b, "setp.ge.f64 $r, $r, $s", p, v, max_text);
  ptx_inst(E->b, "@$r mov.b64 $r, $D", p, t, max);
  ptx_inst(E->b, "setp.le.f64 $r, $r, $s", p, v, min_text);
  ptx_inst(E->b, "@$r mov.b64 $r, $D", p, t, min);
  ptx_inst(E->b, "setp.nan.f64 $r, $r, $r", p, v, v);
  ptx_inst(E->b, "@$r mov.b64 $r, 0", p, t);
  if (type_byte_size(to) == 8) return t;
  PtxReg d = ptx_emit_value_new(E, to);   /* in range: the low 32 bits are the value */
  ptx_inst(E->b, "cvt.u32.u64 $r, $r", d, t);
  return d;
}

bool ptx_float_ops_emit(Emit *E, const KernelOp *op, const PtxReg *args, PtxReg *out) {
  ElementType t = E->k->ops[op->args[0]].type;
  bool f64 = t == TYPE_F64;
  PtxReg r;
  if (op->op == OP_STOCHASTIC_CONVERT) {
    if (type_kind(op->type) != TYPE_KIND_SINT || !type_is_integer(E->k->ops[op->args[1]].type))
      return status_error(E->st, STATUS_UNSUPPORTED, "kernel %s: stochastic-convert from %s to %s (XLA defines only "
                          "float to signed integer, with unsigned random bits)", E->k->name, type_name(t),
                          type_name(op->type));
    *out = stochastic_convert(E, t, E->k->ops[op->args[1]].type, op->type, args[0], args[1]);
    return true;
  }
  if (op->op == OP_ROUND_NEAREST_AFZ) {
    r = round_afz(E, f64, args[0]);
  } else if (op->op == OP_REMAINDER) {
    r = fmod_emit(E, f64, args[0], args[1]);
  } else {
    if (!op->origin || op->origin->opcode != OP_REDUCE_PRECISION)
      return status_error(E->st, STATUS_UNSUPPORTED, "kernel %s: a reduce-precision without its instruction's widths",
                          E->k->name);
    int64_t eb = op->origin->attrs.exponent_bits, mb = op->origin->attrs.mantissa_bits;
    if (eb < 1 || mb < 0)
      return status_error(E->st, STATUS_UNSUPPORTED, "kernel %s: reduce-precision with exponent_bits %lld, "
                          "mantissa_bits %lld", E->k->name, (long long)eb, (long long)mb);
    r = reduce_precision(E, f64, args[0], eb > 11 ? 11 : (int)eb, mb > 52 ? 52 : (int)mb);
  }
  *out = t == TYPE_F32 || f64 ? r : ptx_emit_half_round(E, t, r);
  return true;
}
