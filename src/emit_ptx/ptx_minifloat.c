/* The 8- and 4-bit floats (f8e4m3fn, f8e5m2, f8e4m3fnuz, f8e5m2fnuz,
 * f8e4m3b11fnuz, f8e4m3, f8e3m4, f8e8m0fnu, f4e2m1fn) on the GPU.
 *
 * A minifloat value computes in an f32 register, like f16 and bf16: every
 * one of them is exact in f32. In memory it is one byte (a packed E(4)
 * layout is refused by ptx_kernel.c). Loads decode the byte, stores and the
 * rounding after each op encode it; both follow src/ir/minifloat.c, the
 * evaluator's definition, bit for bit:
 *   decode  sign, exponent and mantissa fields; the value is the integer
 *           significand times 2^k, computed in f64 (exact: 2^-127 of
 *           f8e8m0fnu is below f32's normal range) and narrowed exactly;
 *           NaN and infinity patterns per the type's specials
 *   encode  from f64 (f32 and f16 values are exact there, and a convert
 *           from f64 rounds once, from its own value): the 53-bit
 *           significand shifted right to the format's mantissa (further for
 *           subnormals) with round-to-nearest-even by adding half an ulp
 *           less one plus the kept bit, then the exponent field added so a
 *           carry bumps it; past the largest finite value the type's
 *           overflow (infinity, NaN, or saturation for f4e2m1fn); NaN, zero
 *           and the sign per the specials, in priority order. */
#include "emit_ptx/ptx_kernel_internal.h"

typedef enum Specials { SP_IEEE, SP_FN, SP_FNUZ, SP_FNU, SP_NONE } Specials;

typedef struct Format {
  ElementType type;
  int eb, mb, bias;
  bool has_sign;
  Specials specials;
} Format;

/* The same rows as minifloat.c's table (which is private to src/ir). */
static const Format formats[] = {
    {TYPE_F8E4M3FN, 4, 3, 7, true, SP_FN},         {TYPE_F8E5M2, 5, 2, 15, true, SP_IEEE},
    {TYPE_F8E4M3FNUZ, 4, 3, 8, true, SP_FNUZ},     {TYPE_F8E5M2FNUZ, 5, 2, 16, true, SP_FNUZ},
    {TYPE_F8E4M3B11FNUZ, 4, 3, 11, true, SP_FNUZ}, {TYPE_F8E4M3, 4, 3, 7, true, SP_IEEE},
    {TYPE_F8E3M4, 3, 4, 3, true, SP_IEEE},         {TYPE_F8E8M0FNU, 8, 0, 127, false, SP_FNU},
    {TYPE_F4E2M1FN, 2, 1, 1, true, SP_NONE},
};

static const Format *format_of(ElementType t) {
  for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
    if (formats[i].type == t) return &formats[i];
  return NULL;
}

bool ptx_minifloat_known(ElementType t) { return format_of(t) != NULL; }

static unsigned magnitude_mask(const Format *f) { return (1u << (f->eb + f->mb)) - 1; }
static unsigned sign_bit(const Format *f) { return f->has_sign ? 1u << (f->eb + f->mb) : 0; }
static unsigned exponent_mask(const Format *f) { return ((1u << f->eb) - 1) << f->mb; }

static unsigned max_finite_bits(const Format *f) {
  switch (f->specials) {
  case SP_IEEE: return magnitude_mask(f) - (1u << f->mb);
  case SP_FN: case SP_FNU: return magnitude_mask(f) - 1;
  default: return magnitude_mask(f);
  }
}

static unsigned nan_bits(const Format *f, bool negative) {
  unsigned sign = negative ? sign_bit(f) : 0;
  switch (f->specials) {
  case SP_IEEE: return sign | exponent_mask(f) | 1u << (f->mb - 1);
  case SP_FN: return sign | magnitude_mask(f);
  case SP_FNUZ: return sign_bit(f);
  case SP_FNU: return magnitude_mask(f);
  default: return negative ? 0 : sign_bit(f);
  }
}

static unsigned overflow_bits(const Format *f, bool negative) {
  unsigned sign = negative ? sign_bit(f) : 0;
  switch (f->specials) {
  case SP_IEEE: return sign | exponent_mask(f);
  case SP_NONE: return sign | max_finite_bits(f);
  default: return nan_bits(f, negative);
  }
}

/* ---- decode: the byte (zero-extended in a .u32) to an f32 ---- */

/* p = whether the byte is a NaN pattern of f. */
static void nan_test(PtxBuilder *b, const Format *f, PtxReg bits, PtxReg mag, PtxReg p) {
  PtxReg e = ptx_reg_new(b, PTX_U32), q = ptx_reg_new(b, PTX_PRED);
  switch (f->specials) {
  case SP_IEEE:
    ptx_inst(b, "and.b32 $r, $r, $d", e, mag, (int)exponent_mask(f));
    ptx_inst(b, "setp.eq.u32 $r, $r, $d", p, e, (int)exponent_mask(f));
    ptx_inst(b, "setp.ne.u32 $r, $r, $d", q, mag, (int)exponent_mask(f));
    ptx_inst(b, "and.pred $r, $r, $r", p, p, q);
    break;
  case SP_FN: case SP_FNU: ptx_inst(b, "setp.eq.u32 $r, $r, $d", p, mag, (int)magnitude_mask(f)); break;
  case SP_FNUZ: ptx_inst(b, "setp.eq.u32 $r, $r, $d", p, bits, (int)sign_bit(f)); break;
  default: ptx_inst(b, "setp.ne.u32 $r, $r, $r", p, bits, bits); break;   /* never */
  }
}

static PtxReg decode(PtxBuilder *b, const Format *f, PtxReg bits) {
  PtxReg mag = ptx_reg_new(b, PTX_U32), exp = ptx_reg_new(b, PTX_U32), sig = ptx_reg_new(b, PTX_U32);
  PtxReg k = ptx_reg_new(b, PTX_S32), p = ptx_reg_new(b, PTX_PRED);
  PtxReg scale_bits = ptx_reg_new(b, PTX_U64), scale = ptx_reg_new(b, PTX_F64), wide = ptx_reg_new(b, PTX_F64);
  PtxReg v = ptx_reg_new(b, PTX_F32), out = ptx_reg_new(b, PTX_F32);
  ptx_inst(b, "and.b32 $r, $r, $d", mag, bits, (int)magnitude_mask(f));
  ptx_inst(b, "shr.u32 $r, $r, $d", exp, mag, f->mb);
  ptx_inst(b, "and.b32 $r, $r, $d", sig, mag, (1 << f->mb) - 1);
  /* k = exponent - bias - mb, the exponent field counting 1 when 0
   * (subnormal: no implicit one); f8e8m0fnu has no subnormals */
  if (f->specials == SP_FNU) {
    ptx_inst(b, "or.b32 $r, $r, $d", sig, sig, 1 << f->mb);
  } else {
    ptx_inst(b, "setp.ne.u32 $r, $r, 0", p, exp);
    ptx_inst(b, "@$r or.b32 $r, $r, $d", p, sig, sig, 1 << f->mb);
    ptx_inst(b, "max.u32 $r, $r, 1", exp, exp);
  }
  ptx_inst(b, "add.s32 $r, $r, $d", k, exp, 1023 - f->bias - f->mb);
  ptx_inst(b, "cvt.u64.u32 $r, $r", scale_bits, k);
  ptx_inst(b, "shl.b64 $r, $r, 52", scale_bits, scale_bits);
  ptx_inst(b, "mov.b64 $r, $r", scale, scale_bits);
  ptx_inst(b, "cvt.rn.f64.u32 $r, $r", wide, sig);
  ptx_inst(b, "mul.rn.f64 $r, $r, $r", wide, wide, scale);
  ptx_inst(b, "cvt.rn.f32.f64 $r, $r", v, wide);
  if (f->specials == SP_IEEE) {
    ptx_inst(b, "setp.eq.u32 $r, $r, $d", p, mag, (int)exponent_mask(f));
    ptx_inst(b, "@$r mov.f32 $r, 0f7F800000", p, v);
  }
  nan_test(b, f, bits, mag, p);
  ptx_inst(b, "@$r mov.f32 $r, 0f7FC00000", p, v);
  if (f->has_sign) {
    ptx_inst(b, "and.b32 $r, $r, $d", exp, bits, (int)sign_bit(f));
    ptx_inst(b, "setp.ne.u32 $r, $r, 0", p, exp);
    ptx_inst(b, "xor.b32 $r, $r, 0x80000000", out, v);   /* neg.f32 of a NaN is unspecified (PTX ISA, neg) */
    ptx_inst(b, "@!$r mov.f32 $r, $r", p, out, v);
    return out;
  }
  return v;
}

/* ---- encode: an f64 to the byte (in a .u32) ---- */

/* The rounded magnitude of finite nonzero |v| (bits in abs_bits), or a
 * value past max_finite_bits on overflow. */
static PtxReg magnitude_round(PtxBuilder *b, const Format *f, PtxReg abs_bits) {
  PtxReg e = ptx_reg_new(b, PTX_S32), bmo = ptx_reg_new(b, PTX_S32), shift = ptx_reg_new(b, PTX_S32);
  PtxReg sub = ptx_reg_new(b, PTX_S32), sig = ptx_reg_new(b, PTX_U64), t = ptx_reg_new(b, PTX_U64);
  PtxReg half = ptx_reg_new(b, PTX_U64), odd = ptx_reg_new(b, PTX_U64), field = ptx_reg_new(b, PTX_U64);
  PtxReg e64 = ptx_reg_new(b, PTX_U64), p = ptx_reg_new(b, PTX_PRED), mag = ptx_reg_new(b, PTX_U64);
  PtxReg out = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "shr.u64 $r, $r, 52", e64, abs_bits);
  ptx_inst(b, "cvt.u32.u64 $r, $r", e, e64);
  /* the significand with its leading one at bit 52 (an f64 subnormal has
   * none, and rounds to 0 below whatever the shift) */
  ptx_inst(b, "and.b64 $r, $r, 0xFFFFFFFFFFFFF", sig, abs_bits);
  ptx_inst(b, "setp.ne.s32 $r, $r, 0", p, e);
  ptx_inst(b, "@$r or.b64 $r, $r, 0x10000000000000", p, sig, sig);
  /* biased exponent less one in f's terms: (E - 1023) + bias - 1 */
  ptx_inst(b, "add.s32 $r, $r, $d", bmo, e, f->bias - 1024);
  ptx_inst(b, "neg.s32 $r, $r", sub, bmo);
  ptx_inst(b, "max.s32 $r, $r, 0", sub, sub);
  ptx_inst(b, "add.s32 $r, $r, $d", shift, sub, 52 - f->mb);
  ptx_inst(b, "min.s32 $r, $r, 54", shift, shift);
  ptx_inst(b, "shr.u64 $r, $r, $r", odd, sig, shift);
  ptx_inst(b, "and.b64 $r, $r, 1", odd, odd);
  ptx_inst(b, "sub.s32 $r, $r, 1", sub, shift);
  ptx_inst(b, "mov.b64 $r, 1", half);
  ptx_inst(b, "shl.b64 $r, $r, $r", half, half, sub);
  ptx_inst(b, "add.s64 $r, $r, $r", t, sig, half);
  ptx_inst(b, "add.s64 $r, $r, $r", t, t, odd);
  ptx_inst(b, "sub.s64 $r, $r, 1", t, t);
  ptx_inst(b, "shr.u64 $r, $r, $r", t, t, shift);
  ptx_inst(b, "max.s32 $r, $r, 0", bmo, bmo);
  ptx_inst(b, "cvt.u64.u32 $r, $r", field, bmo);
  ptx_inst(b, "shl.b64 $r, $r, $d", field, field, f->mb);
  ptx_inst(b, "add.s64 $r, $r, $r", mag, t, field);
  /* overflow: anything past the largest finite magnitude, as 0x100 */
  ptx_inst(b, "min.u64 $r, $r, 256", mag, mag);
  ptx_inst(b, "cvt.u32.u64 $r, $r", out, mag);
  return out;
}

static PtxReg encode(PtxBuilder *b, const Format *f, PtxReg v) {
  PtxReg bits = ptx_reg_new(b, PTX_U64), abs_bits = ptx_reg_new(b, PTX_U64), sign64 = ptx_reg_new(b, PTX_U64);
  PtxReg neg = ptx_reg_new(b, PTX_PRED), p = ptx_reg_new(b, PTX_PRED), q = ptx_reg_new(b, PTX_PRED);
  PtxReg sign = ptx_reg_new(b, PTX_U32), out = ptx_reg_new(b, PTX_U32), special = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mov.b64 $r, $r", bits, v);
  ptx_inst(b, "and.b64 $r, $r, 0x7FFFFFFFFFFFFFFF", abs_bits, bits);
  ptx_inst(b, "shr.u64 $r, $r, 63", sign64, bits);
  ptx_inst(b, "setp.ne.u64 $r, $r, 0", neg, sign64);
  ptx_inst(b, "selp.u32 $r, $d, 0, $r", sign, (int)sign_bit(f), neg);
  PtxReg mag = magnitude_round(b, f, abs_bits);
  /* finite: the sign and the magnitude; overflow past the largest */
  ptx_inst(b, "or.b32 $r, $r, $r", out, sign, mag);
  ptx_inst(b, "setp.gt.u32 $r, $r, $d", p, mag, (int)max_finite_bits(f));
  ptx_inst(b, "setp.eq.u64 $r, $r, 0x7FF0000000000000", q, abs_bits);   /* infinity overflows too */
  ptx_inst(b, "or.pred $r, $r, $r", p, p, q);
  ptx_inst(b, "selp.u32 $r, $d, $d, $r", special, (int)overflow_bits(f, true), (int)overflow_bits(f, false), neg);
  ptx_inst(b, "@$r mov.b32 $r, $r", p, out, special);
  if (f->specials == SP_FNUZ) {   /* no -0: a magnitude of 0 is +0 */
    ptx_inst(b, "setp.eq.u32 $r, $r, 0", p, mag);
    ptx_inst(b, "@$r mov.b32 $r, 0", p, out);
  }
  ptx_inst(b, "setp.eq.u64 $r, $r, 0", p, abs_bits);   /* zero */
  if (f->specials == SP_FNU) ptx_inst(b, "@$r mov.b32 $r, $d", p, out, (int)nan_bits(f, false));
  if (!f->has_sign) {   /* a negative nonzero value, and any NaN */
    ptx_inst(b, "setp.ne.u64 $r, $r, 0", q, abs_bits);
    ptx_inst(b, "and.pred $r, $r, $r", q, q, neg);
    ptx_inst(b, "@$r mov.b32 $r, $d", q, out, (int)nan_bits(f, true));
  }
  ptx_inst(b, "setp.gt.u64 $r, $r, 0x7FF0000000000000", p, abs_bits);   /* NaN */
  ptx_inst(b, "selp.u32 $r, $d, $d, $r", special, (int)nan_bits(f, true), (int)nan_bits(f, false), neg);
  ptx_inst(b, "@$r mov.b32 $r, $r", p, out, special);
  return out;
}

/* ---- what ptx_kernel.c calls ---- */

PtxReg ptx_minifloat_load(Emit *E, ElementType t, PtxReg address) {
  PtxReg byte = ptx_reg_new(E->b, PTX_U32);
  ptx_inst(E->b, "ld.global.u8 $r, [$r]", byte, address);
  return decode(E->b, format_of(t), byte);
}

/* x: an f32 or f64 register */
static PtxReg encode_any(Emit *E, const Format *f, PtxReg x) {
  if (x.cls == PTX_REG_F64) return encode(E->b, f, x);
  PtxReg wide = ptx_reg_new(E->b, PTX_F64);
  ptx_inst(E->b, "cvt.f64.f32 $r, $r", wide, x);
  return encode(E->b, f, wide);
}

void ptx_minifloat_store(Emit *E, ElementType t, PtxReg address, PtxReg v) {
  ptx_inst(E->b, "st.global.u8 [$r], $r", address, encode_any(E, format_of(t), v));
}

PtxReg ptx_minifloat_round(Emit *E, ElementType t, PtxReg x) {
  const Format *f = format_of(t);
  return decode(E->b, f, encode_any(E, f, x));
}
