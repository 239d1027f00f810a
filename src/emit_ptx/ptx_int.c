/* Integer and sign coverage of the PTX emitter: the narrow integers
 * (s8, u8, s16, u16), integer power, sign, and compare type=TOTALORDER.
 *
 * PTX has no 8-bit arithmetic and its 16-bit shifts do not clamp at the
 * element width, so a narrow integer lives in a 32-bit register: s8/s16
 * sign-extended (.s32), u8/u16 zero-extended (.u32). Every op computes in
 * 32 bits on that form and the result is brought back to it ("narrowed":
 * the low bits kept and extended again), which is the wrap-around at the
 * element width the evaluator does. The ops where the 32-bit form would
 * read the wrong bits get their operand re-extended first: the logical
 * shift and popcnt/clz of a signed type read it zero-extended, the
 * arithmetic shift of an unsigned type reads it sign-extended (HLO's
 * arithmetic shift is signed whatever the type). Shift counts need no
 * care: a count at or past the element width but below 32 shifts every
 * element bit out, as a count of 32 or more (PTX clamps) does. */
#include <assert.h>

#include "emit_ptx/ptx_kernel_internal.h"

/* s4/u4/s2/u2 (one byte each, unpacked) are narrow integers too: the
 * same 32-bit form, extended from their 4 or 2 bits. */
bool ptx_emit_is_narrow_int(ElementType t) {
  return t == TYPE_S8 || t == TYPE_U8 || t == TYPE_S16 || t == TYPE_U16 || t == TYPE_S4 || t == TYPE_U4 ||
         t == TYPE_S2 || t == TYPE_U2;
}

/* The 32-bit type a narrow integer computes in; t itself otherwise. */
ElementType ptx_int_wide_type(ElementType t) {
  switch (t) {
  case TYPE_S8: case TYPE_S16: case TYPE_S4: case TYPE_S2: return TYPE_S32;
  case TYPE_U8: case TYPE_U16: case TYPE_U4: case TYPE_U2: return TYPE_U32;
  default: return t;
  }
}

static bool is_signed_int(ElementType t) { return type_kind(t) == TYPE_KIND_SINT; }

/* Bits 0..width of r, sign- or zero-extended to 32 as type t says. */
static PtxReg extend_as(Emit *E, ElementType t, bool as_signed, PtxReg r) {
  int bits = type_bit_width(t);
  PtxReg d = ptx_reg_new(E->b, as_signed ? PTX_S32 : PTX_U32);
  if (as_signed) {
    PtxReg up = ptx_reg_new(E->b, PTX_S32);
    ptx_inst(E->b, "shl.b32 $r, $r, $d", up, r, 32 - bits);
    ptx_inst(E->b, "shr.s32 $r, $r, $d", d, up, 32 - bits);
  } else {
    ptx_inst(E->b, "and.b32 $r, $r, $d", d, r, (int)((1u << bits) - 1));
  }
  return d;
}

/* A 32-bit result brought back to t's register form. */
static PtxReg narrow(Emit *E, ElementType t, PtxReg r) { return extend_as(E, t, is_signed_int(t), r); }

PtxReg ptx_int_narrow(Emit *E, ElementType t, PtxReg r) { return narrow(E, t, r); }

PtxReg ptx_int_load(Emit *E, ElementType t, PtxReg address) {
  if (type_bit_width(t) < 8) {   /* only the low bits count (the evaluator's load_narrow_int) */
    PtxReg byte = ptx_reg_new(E->b, PTX_U32);
    ptx_inst(E->b, "ld.global.u8 $r, [$r]", byte, address);
    return narrow(E, t, byte);
  }
  PtxType pt = t == TYPE_S8 ? PTX_S8 : t == TYPE_U8 ? PTX_U8 : t == TYPE_S16 ? PTX_S16 : PTX_U16;
  PtxReg v = ptx_emit_value_new(E, t);
  /* ld of a narrow type into a 32-bit register extends by the type */
  ptx_inst(E->b, "ld.global$s $r, [$r]", ptx_type_suffix(pt), v, address);
  return v;
}

void ptx_int_store(Emit *E, ElementType t, PtxReg address, PtxReg v) {
  ptx_inst(E->b, type_byte_size(t) == 1 ? "st.global.u8 [$r], $r" : "st.global.u16 [$r], $r", address, v);
}

/* ---- convert and bitcast-convert ---- */

/* A float (f32, f64; f16/bf16 arrive as f32) to a narrow integer: PTX's
 * cvt.rzi saturates at 32 bits, then a clamp to t's range gives the
 * evaluator's saturation at t's. NaN must give 0, which cvt gives from f32
 * but not from f64 ("Zero if source is not .f64 and destination is not
 * .s64, .u64. Otherwise 1 << (BitWidth(dst) - 1)", PTX ISA, cvt, Integer
 * Notes): selected explicitly. */
static PtxReg float_to_narrow(Emit *E, ElementType from, ElementType t, PtxReg x) {
  bool sgn = is_signed_int(t);
  int bits = type_bit_width(t);
  PtxReg w = ptx_reg_new(E->b, sgn ? PTX_S32 : PTX_U32), lo = ptx_reg_new(E->b, sgn ? PTX_S32 : PTX_U32);
  PtxReg d = ptx_reg_new(E->b, sgn ? PTX_S32 : PTX_U32);
  const char *src = from == TYPE_F64 ? ".f64" : ".f32";
  ptx_inst(E->b, sgn ? "cvt.rzi.s32$s $r, $r" : "cvt.rzi.u32$s $r, $r", src, w, x);
  if (sgn) {
    ptx_inst(E->b, "max.s32 $r, $r, $d", lo, w, -(1 << (bits - 1)));
    ptx_inst(E->b, "min.s32 $r, $r, $d", d, lo, (1 << (bits - 1)) - 1);
  } else {
    ptx_inst(E->b, "min.u32 $r, $r, $d", d, w, (1 << bits) - 1);
  }
  PtxReg nan = ptx_reg_new(E->b, PTX_PRED);
  ptx_inst(E->b, "setp.nan$s $r, $r, $r", src, nan, x, x);
  ptx_inst(E->b, sgn ? "@$r mov.s32 $r, 0" : "@$r mov.u32 $r, 0", nan, d);
  return d;
}

static bool convert_emit(Emit *E, const KernelOp *op, const PtxReg *args, PtxReg *out) {
  ElementType from = E->k->ops[op->args[0]].type, to = op->type;
  if (ptx_emit_is_half(to)) {   /* from a narrow integer: exact in f32, one rounding */
    KernelOp to_f32 = *op;
    to_f32.type = TYPE_F32;
    PtxReg f;
    if (!ptx_emit_table_op(E, &to_f32, ptx_int_wide_type(from), TYPE_F32, args, &f)) return false;
    *out = ptx_emit_half_round(E, to, f);
    return true;
  }
  if (!ptx_emit_is_narrow_int(to)) return ptx_emit_table_op(E, op, ptx_int_wide_type(from), to, args, out);
  if (type_is_float(from)) {
    *out = float_to_narrow(E, from, to, args[0]);
    return true;
  }
  if (from == TYPE_PRED) return ptx_emit_table_op(E, op, from, ptx_int_wide_type(to), args, out);
  PtxReg w = args[0];
  if (type_byte_size(from) == 8) {   /* wraps: the low 32 bits, then the low 8 or 16 */
    w = ptx_reg_new(E->b, PTX_U32);
    ptx_inst(E->b, "cvt.u32.u64 $r, $r", w, args[0]);
  }
  *out = narrow(E, to, w);
  return true;
}

/* Same-width reinterpretations with a narrow integer on one side: between
 * s8/u8 or s16/u16 (re-extended), and s16/u16 with f16/bf16 (the 16 bits of
 * the half value, which its f32 holds exactly). */
static bool bitcast_emit(Emit *E, const KernelOp *op, const PtxReg *args, PtxReg *out) {
  ElementType from = E->k->ops[op->args[0]].type, to = op->type;
  if (type_bit_width(from) != type_bit_width(to))
    return status_error(E->st, STATUS_UNSUPPORTED, "kernel %s: bitcast-convert from %s to %s changes the width",
                        E->k->name, type_name(from), type_name(to));
  if (ptx_emit_is_narrow_int(from) && ptx_emit_is_narrow_int(to)) {
    *out = narrow(E, to, args[0]);
    return true;
  }
  PtxReg h = ptx_reg_new(E->b, PTX_B16);
  if (ptx_emit_is_half(to)) {
    ptx_inst(E->b, "cvt.u16.u32 $r, $r", h, args[0]);
    *out = ptx_emit_half_widen(E, to, h);
    return true;
  }
  if (!ptx_emit_is_half(from))
    return status_error(E->st, STATUS_UNSUPPORTED, "kernel %s: bitcast-convert from %s to %s on the GPU", E->k->name,
                        type_name(from), type_name(to));
  PtxReg bits = ptx_reg_new(E->b, PTX_U32);
  if (from == TYPE_F16) {
    ptx_inst(E->b, "cvt.rn.f16.f32 $r, $r", h, args[0]);
    ptx_inst(E->b, "cvt.u32.u16 $r, $r", bits, h);
  } else {
    ptx_inst(E->b, "mov.b32 $r, $r", bits, args[0]);
    ptx_inst(E->b, "shr.u32 $r, $r, 16", bits, bits);
  }
  *out = narrow(E, to, bits);
  return true;
}

/* ---- integer ops ---- */

/* x % 0 is x; a narrow INT_MIN % -1 does not trap in 32 bits. */
static PtxReg narrow_remainder(Emit *E, ElementType t, PtxReg a, PtxReg b) {
  const char *s = is_signed_int(t) ? ".s32" : ".u32";
  PtxReg d = ptx_emit_value_new(E, t), p = ptx_reg_new(E->b, PTX_PRED);
  ptx_inst(E->b, "rem$s $r, $r, $r", s, d, a, b);
  ptx_inst(E->b, "setp.eq$s $r, $r, 0", s, p, b);
  ptx_inst(E->b, "@$r mov.b32 $r, $r", p, d, a);
  return d;
}

/* clz at the element width: of the zero-extended bits, less the 32 - width
 * leading zeros the extension adds. */
static PtxReg narrow_clz(Emit *E, ElementType t, PtxReg a) {
  PtxReg z = extend_as(E, t, false, a), c = ptx_reg_new(E->b, PTX_U32), d = ptx_emit_value_new(E, t);
  ptx_inst(E->b, "clz.b32 $r, $r", c, z);
  ptx_inst(E->b, "sub.u32 $r, $r, $d", d, c, 32 - type_bit_width(t));
  return type_bit_width(t) < 8 ? narrow(E, t, d) : d;   /* s2's clz(0) = 2 wraps to -2 */
}

/* The evaluator's integer power: exponentiation by squaring, wrapping at
 * the width; 1^y = x^0 = 1, and a negative exponent gives 0 for any other
 * base. A loop of at most 64 steps: the exponent halves each time. */
static PtxReg int_power(Emit *E, ElementType t, PtxReg base_in, PtxReg exp_in) {
  ElementType w = ptx_int_wide_type(t);
  PtxType pt = PTX_S32;
  ptx_type_of_element(w, &pt);
  const char *B = type_byte_size(w) == 8 ? ".b64" : ".b32", *S = type_byte_size(w) == 8 ? ".s64" : ".s32";
  const char *U = type_byte_size(w) == 8 ? ".u64" : ".u32";
  PtxReg r = ptx_reg_new(E->b, pt), base = ptx_reg_new(E->b, pt), e = ptx_reg_new(E->b, pt);
  PtxReg bit = ptx_reg_new(E->b, pt), p = ptx_reg_new(E->b, PTX_PRED);
  PtxLabel head = ptx_label_new(E->b, "pow"), done = ptx_label_new(E->b, "pow_done");
  ptx_inst(E->b, "mov$s $r, 1", B, r);
  ptx_inst(E->b, "mov$s $r, $r", B, base, base_in);
  ptx_inst(E->b, "mov$s $r, $r", B, e, exp_in);
  ptx_inst(E->b, "setp.eq$s $r, $r, 1", B, p, base);
  ptx_inst(E->b, "@$r bra $l", p, done);
  if (is_signed_int(t)) {
    ptx_inst(E->b, "setp.lt$s $r, $r, 0", S, p, e);
    ptx_inst(E->b, "@$r mov$s $r, 0", p, B, r);
    ptx_inst(E->b, "@$r bra $l", p, done);
  }
  ptx_label_place(E->b, head);
  ptx_inst(E->b, "setp.eq$s $r, $r, 0", B, p, e);
  ptx_inst(E->b, "@$r bra $l", p, done);
  ptx_inst(E->b, "and$s $r, $r, 1", B, bit, e);
  ptx_inst(E->b, "setp.ne$s $r, $r, 0", B, p, bit);
  ptx_inst(E->b, "@$r mul.lo$s $r, $r, $r", p, U, r, r, base);
  ptx_inst(E->b, "mul.lo$s $r, $r, $r", U, base, base, base);
  ptx_inst(E->b, "shr$s $r, $r, 1", U, e, e);
  ptx_inst(E->b, "bra $l", head);
  ptx_label_place(E->b, done);
  return ptx_emit_is_narrow_int(t) ? narrow(E, t, r) : r;
}

/* sign: -1, 0, 1 for signed integers, x != 0 for unsigned; for floats
 * NaN stays, ±0 stays, anything else is ±1 with x's sign. */
static PtxReg sign_emit(Emit *E, ElementType t, PtxReg x) {
  PtxReg d = ptx_emit_value_new(E, t), p = ptx_reg_new(E->b, PTX_PRED);
  if (type_is_float(t)) {
    bool f64 = t == TYPE_F64;
    const char *ty = f64 ? ".f64" : ".f32", *one = f64 ? "0d3FF0000000000000" : "0f3F800000";
    const char *minus = f64 ? "0dBFF0000000000000" : "0fBF800000";
    ptx_inst(E->b, "mov$s $r, $r", ty, d, x);   /* ±0 and NaN */
    ptx_inst(E->b, "setp.gt$s $r, $r, 0$s", ty, p, x, f64 ? "d0000000000000000" : "f00000000");
    ptx_inst(E->b, "@$r mov$s $r, $s", p, ty, d, one);
    ptx_inst(E->b, "setp.lt$s $r, $r, 0$s", ty, p, x, f64 ? "d0000000000000000" : "f00000000");
    ptx_inst(E->b, "@$r mov$s $r, $s", p, ty, d, minus);
    return d;
  }
  bool wide = type_byte_size(t) == 8;
  const char *B = wide ? ".b64" : ".b32";
  ptx_inst(E->b, "setp.ne$s $r, $r, 0", B, p, x);
  ptx_inst(E->b, wide ? "selp.b64 $r, 1, 0, $r" : "selp.b32 $r, 1, 0, $r", d, p);
  if (is_signed_int(t)) {
    ptx_inst(E->b, wide ? "setp.lt.s64 $r, $r, 0" : "setp.lt.s32 $r, $r, 0", p, x);
    ptx_inst(E->b, "@$r mov$s $r, -1", p, B, d);
  }
  return d;
}

/* compare type=TOTALORDER on floats: the bits as a signed integer, with
 * the non-sign bits of a negative value flipped, order as the evaluator's
 * total_order_key does (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN).
 * f16/bf16 arrive widened to f32 exactly, which keeps their order. */
static bool total_order_compare(Emit *E, const KernelOp *op, ElementType t, const PtxReg *args, PtxReg *out) {
  bool f64 = t == TYPE_F64;
  PtxReg keys[2];
  for (int i = 0; i < 2; i++) {
    PtxType it = f64 ? PTX_S64 : PTX_S32;
    PtxReg bits = ptx_reg_new(E->b, it), flip = ptx_reg_new(E->b, it), mask = ptx_reg_new(E->b, it);
    keys[i] = ptx_reg_new(E->b, it);
    ptx_inst(E->b, f64 ? "mov.b64 $r, $r" : "mov.b32 $r, $r", bits, args[i]);
    ptx_inst(E->b, f64 ? "shr.s64 $r, $r, 63" : "shr.s32 $r, $r, 31", flip, bits);
    ptx_inst(E->b, f64 ? "and.b64 $r, $r, 0x7FFFFFFFFFFFFFFF" : "and.b32 $r, $r, 0x7FFFFFFF", mask, flip);
    ptx_inst(E->b, f64 ? "xor.b64 $r, $r, $r" : "xor.b32 $r, $r, $r", keys[i], bits, mask);
  }
  KernelOp cmp = *op;
  cmp.compare_type = CMP_TYPE_SIGNED;
  return ptx_emit_table_op(E, &cmp, f64 ? TYPE_S64 : TYPE_S32, TYPE_PRED, keys, out);
}

/* ---- arithmetic on pred ----
 * The evaluator computes pred as the integers 0 and 1 and stores x != 0,
 * so: add and maximum are or, multiply and minimum are and, subtract is
 * xor (1 - 1 = 0, 0 - 1 = -1), divide is a | !b (x / 0 is all ones),
 * remainder a & !b (x % 0 is x, x % 1 is 0), power a | !b (x^0 = 1^y = 1),
 * negate and abs are the value itself. */
static bool is_pred_arithmetic(Opcode op) {
  switch (op) {
  case OP_ADD: case OP_SUBTRACT: case OP_MULTIPLY: case OP_DIVIDE: case OP_REMAINDER: case OP_MAXIMUM:
  case OP_MINIMUM: case OP_POWER: case OP_NEGATE: case OP_ABS: case OP_CLAMP:
    return true;
  default: return false;
  }
}

static PtxReg pred_binary(Emit *E, Opcode op, PtxReg a, PtxReg b) {
  PtxReg d = ptx_reg_new(E->b, PTX_PRED);
  switch (op) {
  case OP_ADD: case OP_MAXIMUM: ptx_inst(E->b, "or.pred $r, $r, $r", d, a, b); break;
  case OP_MULTIPLY: case OP_MINIMUM: ptx_inst(E->b, "and.pred $r, $r, $r", d, a, b); break;
  case OP_SUBTRACT: ptx_inst(E->b, "xor.pred $r, $r, $r", d, a, b); break;
  case OP_REMAINDER: ptx_inst(E->b, "and.pred $r, $r, !$r", d, a, b); break;
  default: ptx_inst(E->b, "or.pred $r, $r, !$r", d, a, b); break;   /* divide, power */
  }
  return d;
}

static PtxReg pred_emit(Emit *E, const KernelOp *op, const PtxReg *args) {
  if (op->op == OP_NEGATE || op->op == OP_ABS) {
    PtxReg d = ptx_reg_new(E->b, PTX_PRED);
    ptx_inst(E->b, "mov.pred $r, $r", d, args[0]);
    return d;
  }
  if (op->op == OP_CLAMP)   /* min(max(x, lo), hi) */
    return pred_binary(E, OP_MINIMUM, pred_binary(E, OP_MAXIMUM, args[1], args[0]), args[2]);
  return pred_binary(E, op->op, args[0], args[1]);
}

bool ptx_int_handles(const Kernel *k, const KernelOp *op) {
  ElementType first = k->ops[op->args[0]].type;
  if (op->op == OP_STOCHASTIC_CONVERT) return false;   /* ptx_float_ops.c, for every result width */
  if (op->type == TYPE_PRED && first == TYPE_PRED && is_pred_arithmetic(op->op)) return true;
  if (op->op == OP_POWER && type_is_integer(first)) return true;
  if (op->op == OP_SIGN && first != TYPE_PRED) return true;
  if (op->op == OP_COMPARE && op->compare_type == CMP_TYPE_TOTALORDER && type_is_float(first)) return true;
  return ptx_emit_is_narrow_int(first) || ptx_emit_is_narrow_int(op->type);
}

/* The ops on a narrow integer that are not the 32-bit op then narrowed. */
static bool narrow_special(Emit *E, const KernelOp *op, ElementType t, PtxReg *args, PtxReg *out) {
  KernelOp wide = *op;
  wide.type = op->op == OP_COMPARE ? TYPE_PRED : ptx_int_wide_type(op->type);
  switch (op->op) {
  case OP_REMAINDER: *out = narrow_remainder(E, t, args[0], args[1]); return true;
  case OP_CLZ: *out = narrow_clz(E, t, args[0]); return true;
  case OP_MULHI: {   /* the exact product fits 32 bits: its high half is a shift */
    PtxReg p = ptx_reg_new(E->b, PTX_S32), h = ptx_reg_new(E->b, PTX_S32);
    ptx_inst(E->b, "mul.lo.s32 $r, $r, $r", p, args[0], args[1]);
    ptx_inst(E->b, is_signed_int(t) ? "shr.s32 $r, $r, $d" : "shr.u32 $r, $r, $d", h, p, type_bit_width(t));
    *out = narrow(E, t, h);
    return true;
  }
  case OP_POPCNT:
    args[0] = extend_as(E, t, false, args[0]);
    if (!ptx_emit_table_op(E, &wide, TYPE_U32, TYPE_U32, args, out)) return false;
    if (type_bit_width(t) < 8) *out = narrow(E, t, *out);   /* s4's popcnt(-1) = 4 wraps to -4 */
    return true;
  case OP_SHIFT_RIGHT_LOGICAL: args[0] = extend_as(E, t, false, args[0]); break;
  case OP_SHIFT_RIGHT_ARITHMETIC: args[0] = extend_as(E, t, true, args[0]); break;
  case OP_COMPARE: case OP_IS_FINITE:
    return ptx_emit_table_op(E, &wide, ptx_int_wide_type(t), TYPE_PRED, args, out);
  default: break;
  }
  PtxReg w;
  if (!ptx_emit_table_op(E, &wide, ptx_int_wide_type(t), ptx_int_wide_type(op->type), args, &w)) return false;
  *out = narrow(E, op->type, w);
  return true;
}

bool ptx_int_emit(Emit *E, const KernelOp *op, const PtxReg *in, PtxReg *out) {
  PtxReg args[KERNEL_MAX_ARGS];
  for (int a = 0; a < op->arg_count; a++) args[a] = in[a];
  ElementType first = E->k->ops[op->args[0]].type;
  if (op->type == TYPE_PRED && first == TYPE_PRED && is_pred_arithmetic(op->op))
    return *out = pred_emit(E, op, args), true;
  switch (op->op) {
  case OP_CONVERT: return convert_emit(E, op, args, out);
  case OP_BITCAST_CONVERT: return bitcast_emit(E, op, args, out);
  case OP_POWER: return *out = int_power(E, first, args[0], args[1]), true;
  case OP_SIGN:   /* ±1, ±0 and NaN are exact in f16/bf16: no rounding after */
    return *out = sign_emit(E, ptx_emit_is_half(first) ? TYPE_F32 : ptx_int_wide_type(first), args[0]), true;
  case OP_COMPARE:
    if (op->compare_type == CMP_TYPE_TOTALORDER && type_is_float(first))
      return total_order_compare(E, op, ptx_emit_is_half(first) ? TYPE_F32 : first, args, out);
    break;
  case OP_SELECT: {
    KernelOp wide = *op;
    wide.type = ptx_int_wide_type(op->type);
    return ptx_emit_table_op(E, &wide, wide.type, wide.type, args, out);
  }
  case OP_CLAMP: {
    KernelOp mx = *op, mn = *op;
    mx.op = OP_MAXIMUM, mn.op = OP_MINIMUM;
    mx.type = mn.type = ptx_int_wide_type(op->type);
    PtxReg low[2] = {args[1], args[0]}, high[2];
    if (!ptx_emit_table_op(E, &mx, mx.type, mx.type, low, &high[0])) return false;
    high[1] = args[2];
    return ptx_emit_table_op(E, &mn, mn.type, mn.type, high, out);
  }
  default: break;
  }
  ElementType t = op->op == OP_SELECT ? op->type : first;
  return narrow_special(E, op, t, args, out);
}
