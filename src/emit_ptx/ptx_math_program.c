/* The PTX target of the math programs (src/ir/kernel/math_program.h):
 * each primitive is one PTX instruction (two for min and max) on fresh
 * virtual registers, so that a GPU thread computes the reference's bits.
 *
 * The forms keep the primitives' rules: every float operation is the IEEE
 * one (add.rn, mul.rn, div.rn, fma.rn, sqrt.rn; never .approx or .ftz,
 * which would flush subnormals); min and max are setp then selp, not
 * PTX's min.f32, which returns the other operand for a NaN either way; a
 * mask is a predicate; abs and copysign work on the bits (and.b32, or.b32)
 * so that a NaN keeps its payload as on the other targets. A value is a
 * PtxReg, its class in the high 32 bits of the MathVal. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "emit_ptx/ptx_builder.h"
#include "emit_ptx/ptx_math_program.h"
#include "kernel/math_program.h"

static MathVal value_of(PtxReg r) { return (MathVal)r.cls << 32 | (uint32_t)r.index; }
static PtxReg reg_of(MathVal v) { return (PtxReg){(PtxRegClass)(v >> 32), (int)(uint32_t)v}; }

/* The PTX spelling of each type: its float, its signed integer, its bits. */
typedef struct PtxMathType {
  PtxType real, integer, bits;
  const char *real_name, *integer_name, *bits_name;
} PtxMathType;

static const PtxMathType ptx_math_32 = {PTX_F32, PTX_S32, PTX_B32, "f32", "s32", "b32"};
static const PtxMathType ptx_math_64 = {PTX_F64, PTX_S64, PTX_B64, "f64", "s64", "b64"};

/* d = OP.SUFFIX a[, c[, e]] with `operands` register operands. */
static PtxReg instruction(PtxBuilder *b, PtxType type, const char *op, const char *suffix, int operands, PtxReg a,
                          PtxReg c, PtxReg e) {
  char name[32];
  snprintf(name, sizeof name, "%s.%s", op, suffix);
  if (operands == 1) return ptx_op1(b, type, name, a);
  if (operands == 2) return ptx_op2(b, type, name, a, c);
  return ptx_op3(b, type, name, a, c, e);
}

/* d = OP.SUFFIX a, count: a shift by a constant count. */
static PtxReg shift(PtxBuilder *b, PtxType type, const char *op, const char *suffix, PtxReg a, int count) {
  char name[32];
  snprintf(name, sizeof name, "%s.%s", op, suffix);
  PtxReg d = ptx_reg_new(b, type);
  ptx_inst(b, "$s $r, $r, $d", name, d, a, count);
  return d;
}

static PtxReg compare(PtxBuilder *b, const char *how, const char *type_name, PtxReg a, PtxReg c) {
  PtxReg p = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "setp.$s.$s $r, $r, $r", how, type_name, p, a, c);
  return p;
}

static PtxReg select_reg(PtxBuilder *b, PtxReg mask, PtxReg a, PtxReg c) {
  static const char *const suffix[PTX_REG_CLASS_COUNT] = {
      [PTX_REG_B32] = "b32", [PTX_REG_B64] = "b64", [PTX_REG_F32] = "f32", [PTX_REG_F64] = "f64"};
  static const PtxType type[PTX_REG_CLASS_COUNT] = {
      [PTX_REG_B32] = PTX_B32, [PTX_REG_B64] = PTX_B64, [PTX_REG_F32] = PTX_F32, [PTX_REG_F64] = PTX_F64};
  assert(suffix[a.cls] && a.cls == c.cls);
  PtxReg d = ptx_reg_new(b, type[a.cls]);
  ptx_inst(b, "selp.$s $r, $r, $r, $r", suffix[a.cls], d, a, c, mask);
  return d;
}

/* d = OP.bits a, k: k the mask of the sign bit or of the rest, written
 * in decimal for 32 bits and in hex for 64, as the other PTX emitters do. */
static PtxReg bits_with_mask(PtxBuilder *b, const PtxMathType *w, const char *op, PtxReg a, uint64_t mask) {
  char text[24];
  if (w == &ptx_math_64) snprintf(text, sizeof text, "0x%016llX", (unsigned long long)mask);
  else snprintf(text, sizeof text, "%d", (int)(int32_t)(uint32_t)mask);
  PtxReg d = ptx_reg_new(b, w->integer);
  ptx_inst(b, "$s.$s $r, $r, $s", op, w->bits_name, d, a, text);
  return d;
}

/* x with its sign bit cleared (sign NULL), or replaced by sign's. */
static PtxReg sign_bits(PtxBuilder *b, const PtxMathType *w, PtxReg x, const PtxReg *sign) {
  uint64_t sign_bit = w == &ptx_math_64 ? UINT64_C(1) << 63 : UINT64_C(1) << 31;
  PtxReg bits = instruction(b, w->bits, "mov", w->bits_name, 1, x, x, x);
  PtxReg result = bits_with_mask(b, w, "and", bits, sign_bit - 1);
  if (sign) {
    PtxReg sign_source = instruction(b, w->bits, "mov", w->bits_name, 1, *sign, *sign, *sign);
    PtxReg sign_part = bits_with_mask(b, w, "and", sign_source, sign_bit);
    result = instruction(b, w->bits, "or", w->bits_name, 2, result, sign_part, sign_part);
  }
  return instruction(b, w->real, "mov", w->bits_name, 1, result, result, result);
}

static PtxReg float_op(PtxBuilder *b, MathOp op, bool f64, PtxReg a, PtxReg c, PtxReg e) {
  const PtxMathType *w = f64 ? &ptx_math_64 : &ptx_math_32;
  const char *rn = f64 ? "rn.f64" : "rn.f32";
  switch (op) {
  case MATH_ADD: return instruction(b, w->real, "add", rn, 2, a, c, e);
  case MATH_SUB: return instruction(b, w->real, "sub", rn, 2, a, c, e);
  case MATH_MUL: return instruction(b, w->real, "mul", rn, 2, a, c, e);
  case MATH_DIV: return instruction(b, w->real, "div", rn, 2, a, c, e);
  case MATH_FMA: return instruction(b, w->real, "fma", rn, 3, a, c, e);
  case MATH_SQRT: return instruction(b, w->real, "sqrt", rn, 1, a, c, e);
  case MATH_MIN: return select_reg(b, compare(b, "lt", w->real_name, a, c), a, c);
  case MATH_MAX: return select_reg(b, compare(b, "gt", w->real_name, a, c), a, c);
  case MATH_ABS: return sign_bits(b, w, a, NULL);
  case MATH_COPYSIGN: return sign_bits(b, w, a, &c);
  case MATH_NEGATE: return instruction(b, w->real, "neg", w->real_name, 1, a, c, e);
  case MATH_LESS: return compare(b, "lt", w->real_name, a, c);
  case MATH_EQUAL: return compare(b, "eq", w->real_name, a, c);
  case MATH_IS_NAN: return compare(b, "nan", w->real_name, a, a);
  case MATH_TO_INT: return instruction(b, w->integer, "cvt.rzi", f64 ? "s64.f64" : "s32.f32", 1, a, c, e);
  case MATH_WIDEN: return ptx_op1(b, PTX_F64, "cvt.f64.f32", a);
  case MATH_NARROW: return ptx_op1(b, PTX_F32, "cvt.rn.f32.f64", a);
  case MATH_BITS: return instruction(b, w->bits, "mov", w->bits_name, 1, a, c, e);
  default: assert(!"not a float operation"); return a;
  }
}

/* The high 64 bits of x y from 32-bit halves, as the C values do: the
 * bits of mul.hi.u64, in the instructions the f64 Payne-Hanek was
 * written in before (and that tests/unit/ptx_interpret.h runs). */
static PtxReg multiply_high(PtxBuilder *b, PtxReg x, PtxReg y) {
  const PtxMathType *w = &ptx_math_64;
  const uint64_t low_half = 0xffffffffu;
  PtxReg x0 = bits_with_mask(b, w, "and", x, low_half), x1 = shift(b, PTX_S64, "shr", "u64", x, 32);
  PtxReg y0 = bits_with_mask(b, w, "and", y, low_half), y1 = shift(b, PTX_S64, "shr", "u64", y, 32);
  PtxReg p00 = ptx_op2(b, PTX_S64, "mul.lo.u64", x0, y0), p01 = ptx_op2(b, PTX_S64, "mul.lo.u64", x0, y1);
  PtxReg p10 = ptx_op2(b, PTX_S64, "mul.lo.u64", x1, y0), p11 = ptx_op2(b, PTX_S64, "mul.lo.u64", x1, y1);
  PtxReg p00_high = shift(b, PTX_S64, "shr", "u64", p00, 32);
  PtxReg p01_low = bits_with_mask(b, w, "and", p01, low_half), p10_low = bits_with_mask(b, w, "and", p10, low_half);
  PtxReg middle = ptx_op2(b, PTX_S64, "add.s64", ptx_op2(b, PTX_S64, "add.s64", p00_high, p01_low), p10_low);
  PtxReg p01_high = shift(b, PTX_S64, "shr", "u64", p01, 32), p10_high = shift(b, PTX_S64, "shr", "u64", p10, 32);
  PtxReg sum = ptx_op2(b, PTX_S64, "add.s64", ptx_op2(b, PTX_S64, "add.s64", p11, p01_high), p10_high);
  PtxReg middle_high = shift(b, PTX_S64, "shr", "u64", middle, 32);
  return ptx_op2(b, PTX_S64, "add.s64", sum, middle_high);
}

/* A shift's count is a .u32 in PTX: a 64-bit count is cut to it. */
static PtxReg shift_count(PtxBuilder *b, PtxReg count) {
  return count.cls == PTX_REG_B64 ? ptx_op1(b, PTX_U32, "cvt.u32.u64", count) : count;
}

static PtxReg integer_op(PtxBuilder *b, MathOp op, bool i64, PtxReg a, MathVal count, PtxReg c) {
  const PtxMathType *w = i64 ? &ptx_math_64 : &ptx_math_32;
  const char *u = i64 ? "u64" : "u32";
  switch (op) {
  case MATH_ADD: return instruction(b, w->integer, "add", w->integer_name, 2, a, c, c);
  case MATH_SUB: return instruction(b, w->integer, "sub", w->integer_name, 2, a, c, c);
  case MATH_MUL: return instruction(b, w->integer, "mul.lo", w->integer_name, 2, a, c, c);
  case MATH_AND: return instruction(b, w->integer, "and", w->bits_name, 2, a, c, c);
  case MATH_OR: return instruction(b, w->integer, "or", w->bits_name, 2, a, c, c);
  case MATH_XOR: return instruction(b, w->integer, "xor", w->bits_name, 2, a, c, c);
  case MATH_LESS_UNSIGNED: return compare(b, "lt", u, a, c);
  case MATH_MULTIPLY_HIGH: return multiply_high(b, a, c);
  case MATH_SHIFT_LEFT_BY: return instruction(b, w->integer, "shl", w->bits_name, 2, a, shift_count(b, c), c);
  case MATH_SHIFT_RIGHT_LOGICAL_BY: return instruction(b, w->integer, "shr", u, 2, a, shift_count(b, c), c);
  case MATH_EXTEND: return ptx_op1(b, PTX_S64, "cvt.u64.u32", a);
  case MATH_TRUNCATE: return ptx_op1(b, PTX_S32, "cvt.u32.u64", a);
  case MATH_SHIFT_LEFT: return shift(b, w->integer, "shl", w->bits_name, a, (int)count);
  case MATH_SHIFT_RIGHT: return shift(b, w->integer, "shr", w->integer_name, a, (int)count);
  case MATH_SHIFT_RIGHT_LOGICAL: return shift(b, w->integer, "shr", u, a, (int)count);
  case MATH_LESS: return compare(b, "lt", w->integer_name, a, c);
  case MATH_EQUAL: return compare(b, "eq", w->integer_name, a, c);
  case MATH_TO_FLOAT: return instruction(b, w->real, "cvt.rn", i64 ? "f64.s64" : "f32.s32", 1, a, c, c);
  case MATH_FROM_BITS: return instruction(b, w->real, "mov", w->bits_name, 1, a, c, c);
  default: assert(!"not an integer operation"); return a;
  }
}

static PtxReg mask_op(PtxBuilder *b, MathOp op, PtxReg a, PtxReg c) {
  switch (op) {
  case MATH_AND: return ptx_op2(b, PTX_PRED, "and.pred", a, c);
  case MATH_OR: return ptx_op2(b, PTX_PRED, "or.pred", a, c);
  case MATH_XOR: return ptx_op2(b, PTX_PRED, "xor.pred", a, c);
  case MATH_NOT: return ptx_op1(b, PTX_PRED, "not.pred", a);
  default: assert(!"not a mask operation"); return a;
  }
}

static MathVal ptx_math_op(MathTarget *t, MathOp op, MathType type, MathVal a, MathVal c, MathVal e) {
  PtxBuilder *b = t->context;
  PtxReg ra = reg_of(a), rc = reg_of(c), re = reg_of(e);
  if (op == MATH_SELECT) return value_of(select_reg(b, ra, rc, re));
  switch (type) {
  case MATH_F32: return value_of(float_op(b, op, false, ra, rc, re));
  case MATH_F64: return value_of(float_op(b, op, true, ra, rc, re));
  case MATH_I32: return value_of(integer_op(b, op, false, ra, c, rc));
  case MATH_I64: return value_of(integer_op(b, op, true, ra, c, rc));
  case MATH_MASK: return value_of(mask_op(b, op, ra, rc));
  }
  return a;
}

static MathVal ptx_math_constant(MathTarget *t, MathType type, uint64_t bits) {
  PtxBuilder *b = t->context;
  char text[32];
  PtxReg d;
  switch (type) {
  case MATH_F32:
    snprintf(text, sizeof text, "0f%08X", (unsigned)bits);
    d = ptx_reg_new(b, PTX_F32);
    break;
  case MATH_F64: {
    double v;
    memcpy(&v, &bits, sizeof v);
    return value_of(ptx_f64_constant(b, v));
  }
  case MATH_I64:
    snprintf(text, sizeof text, "%lld", (long long)bits);
    d = ptx_reg_new(b, PTX_S64);
    ptx_inst(b, "mov.b64 $r, $s", d, text);
    return value_of(d);
  default:
    snprintf(text, sizeof text, "%d", (int)(int32_t)(uint32_t)bits);
    d = ptx_reg_new(b, PTX_S32);
    break;
  }
  ptx_inst(b, "mov.b32 $r, $s", d, text);
  return value_of(d);
}

/* A table as one .global array of u32 words, written into the module
 * before the first kernel that reads it: 8-byte entries as aligned u32
 * pairs, low half first (the device is little-endian), so that ld.u64
 * reads each and the module's globals stay in the one .u32 form every
 * reader knows. */
static void table_declare(PtxBuilder *b, const MathRows *table, int size) {
  if (b->module.data && strstr(b->module.data, table->symbol)) return;
  int stride = table->stride ? table->stride : table->columns;
  int words = ((table->rows - 1) * stride + table->columns) * size / 4;
  strbuf_printf(&b->module, "// %s\n", table->what);
  strbuf_printf(&b->module, ".global .align %d .u32 %s[%d] = {", size, table->symbol, words);
  const unsigned char *bytes = table->entries;
  for (int i = 0; i < words; i++) {
    uint32_t word;
    memcpy(&word, bytes + 4 * (size_t)i, sizeof word);
    strbuf_printf(&b->module, "%s%s%u", i ? ", " : "", i % 6 ? "" : "\n  ", (unsigned)word);
  }
  strbuf_printf(&b->module, "\n};\n\n");
}

/* Row `row` of the table: its address from the row (an s64 by a
 * multiply and an add, an s32 by mad.wide), then one ld.global.nc per
 * entry (the table is read-only for the kernel's life). */
static void ptx_load_row(MathTarget *t, const MathRows *table, MathVal row, MathVal *entries) {
  PtxBuilder *b = t->context;
  bool wide = table->type == MATH_F64 || table->type == MATH_I64;
  int size = wide ? 8 : 4, row_bytes = size * (table->stride ? table->stride : table->columns);
  table_declare(b, table, size);
  PtxReg base = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u64 $r, $s", base, table->symbol);
  PtxReg index = reg_of(row), at = ptx_reg_new(b, PTX_S64);
  if (index.cls == PTX_REG_B64) {
    PtxReg offset = ptx_reg_new(b, PTX_S64);
    ptx_inst(b, "mul.lo.s64 $r, $r, $d", offset, index, row_bytes);
    ptx_inst(b, "add.s64 $r, $r, $r", at, base, offset);
  } else {
    ptx_inst(b, "mad.wide.s32 $r, $r, $d, $r", at, index, row_bytes, base);
  }
  bool real = table->type == MATH_F64 || table->type == MATH_F32;
  PtxType type = wide ? (real ? PTX_F64 : PTX_S64) : (real ? PTX_F32 : PTX_S32);
  const char *name = wide ? (real ? "f64" : "u64") : (real ? "f32" : "u32");
  for (int j = 0; j < table->columns; j++) {
    PtxReg entry = ptx_reg_new(b, type);
    ptx_inst(b, "ld.global.nc.$s $r, [$r+$d]", name, entry, at, size * j);
    entries[j] = value_of(entry);
  }
}

static MathTarget ptx_target(PtxBuilder *b) {
  return (MathTarget){.op = ptx_math_op, .constant = ptx_math_constant, .load_row = ptx_load_row, .context = b};
}

/* ---- the algorithms, for ptx_math.c and ptx_math_f64.c ---- */

static PtxReg run(PtxBuilder *b, MathFunction fn, const MathFormat *f, PtxReg x) {
  MathTarget t = ptx_target(b);
  return reg_of(fn(&t, f, value_of(x)));
}

static PtxReg run2(PtxBuilder *b, MathFunction2 fn, const MathFormat *f, PtxReg a, PtxReg c) {
  MathTarget t = ptx_target(b);
  return reg_of(fn(&t, f, value_of(a), value_of(c)));
}

PtxReg ptx_math_exp_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_exp, &math_format_f32, x); }
PtxReg ptx_math_exp_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_exp, &math_format_f64, x); }
PtxReg ptx_math_expm1_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_expm1, &math_format_f32, x); }
PtxReg ptx_math_expm1_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_expm1, &math_format_f64, x); }
PtxReg ptx_math_log_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_log, &math_format_f32, x); }
PtxReg ptx_math_log_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_log, &math_format_f64, x); }
PtxReg ptx_math_log1p_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_log1p, &math_format_f32, x); }
PtxReg ptx_math_log1p_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_log1p, &math_format_f64, x); }
PtxReg ptx_math_logistic_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_logistic, &math_format_f32, x); }
PtxReg ptx_math_logistic_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_logistic, &math_format_f64, x); }
PtxReg ptx_math_tanh_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_tanh, &math_format_f32, x); }
PtxReg ptx_math_tanh_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_tanh, &math_format_f64, x); }
PtxReg ptx_math_sinh_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_sinh, &math_format_f32, x); }
PtxReg ptx_math_sinh_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_sinh, &math_format_f64, x); }
PtxReg ptx_math_cosh_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_cosh, &math_format_f32, x); }
PtxReg ptx_math_cosh_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_cosh, &math_format_f64, x); }
PtxReg ptx_math_asinh_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_asinh, &math_format_f32, x); }
PtxReg ptx_math_asinh_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_asinh, &math_format_f64, x); }
PtxReg ptx_math_acosh_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_acosh, &math_format_f32, x); }
PtxReg ptx_math_acosh_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_acosh, &math_format_f64, x); }
PtxReg ptx_math_atanh_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_atanh, &math_format_f32, x); }
PtxReg ptx_math_atanh_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_atanh, &math_format_f64, x); }
PtxReg ptx_math_rsqrt_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_rsqrt, &math_format_f32, x); }
PtxReg ptx_math_rsqrt_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_rsqrt, &math_format_f64, x); }

PtxReg ptx_math_atan2_f32(PtxBuilder *b, PtxReg y, PtxReg x) {
  return run2(b, math_program_atan2, &math_format_f32, y, x);
}

PtxReg ptx_math_atan2_f64(PtxBuilder *b, PtxReg y, PtxReg x) {
  return run2(b, math_program_atan2, &math_format_f64, y, x);
}

PtxReg ptx_math_atan_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_atan, &math_format_f32, x); }
PtxReg ptx_math_atan_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_atan, &math_format_f64, x); }
PtxReg ptx_math_asin_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_asin, &math_format_f32, x); }
PtxReg ptx_math_asin_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_asin, &math_format_f64, x); }
PtxReg ptx_math_acos_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_acos, &math_format_f32, x); }
PtxReg ptx_math_acos_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_acos, &math_format_f64, x); }
PtxReg ptx_math_sin_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_sin, &math_format_f32, x); }
PtxReg ptx_math_sin_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_sin, &math_format_f64, x); }
PtxReg ptx_math_cos_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_cos, &math_format_f32, x); }
PtxReg ptx_math_cos_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_cos, &math_format_f64, x); }
PtxReg ptx_math_tan_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_tan, &math_format_f32, x); }
PtxReg ptx_math_tan_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_tan, &math_format_f64, x); }
PtxReg ptx_math_erf_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_erf, &math_format_f32, x); }
PtxReg ptx_math_erf_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_erf, &math_format_f64, x); }

PtxReg ptx_math_pow_f32(PtxBuilder *b, PtxReg x, PtxReg y) {
  return run2(b, math_program_pow, &math_format_f32, x, y);
}

PtxReg ptx_math_pow_f64(PtxBuilder *b, PtxReg x, PtxReg y) {
  return run2(b, math_program_pow, &math_format_f64, x, y);
}

PtxReg ptx_math_cbrt_f32(PtxBuilder *b, PtxReg x) { return run(b, math_program_cbrt, &math_format_f32, x); }
PtxReg ptx_math_cbrt_f64(PtxBuilder *b, PtxReg x) { return run(b, math_program_cbrt, &math_format_f64, x); }
