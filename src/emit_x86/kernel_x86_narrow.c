/* The narrow floats in x86 kernels: f16, bf16 and the 8- and 4-bit
 * minifloats (f8e4m3fn, f8e5m2, ..., f4e2m1fn).
 *
 * A narrow value lives in an xmm register as the f32 of the same value
 * (every narrow value is exact in f32). A load widens the stored bits to
 * f32, an op computes in f32, and its result is rounded to the narrow type
 * at once (to nearest, ties to even, with the type's rules for overflow,
 * NaN and -0), so the next op sees exactly what the evaluator stores after
 * each op (src/ir/eval: f16 and bf16 "computed in float, rounded back";
 * minifloat.c for the rest). A store writes the bits.
 *
 * Widening: bf16 is the top half of an f32; f16's bits move into f32's
 * fields, the exponent rebiased by one multiply by 2^112 (exact, and right
 * for its subnormals too); a minifloat is looked up in a 256-entry table of
 * minifloat_to_float's values, placed after the function's code.
 *
 * Rounding an f32 magnitude a to a format with M mantissa bits and bias B:
 * where the result is normal, the f32 bits themselves round: drop 23 - M
 * bits to nearest even (a carry correctly bumps the exponent) and rebias;
 * past the largest finite value, the type's overflow result. Below the
 * format's smallest normal, adding C = 2^(24 - B - M) in f32 rounds a to a
 * multiple of the format's smallest subnormal, and the bits of the sum less
 * those of C are the encoding. */
#include <math.h>
#include <string.h>

#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }

bool kernel_x86_type_is_narrow(ElementType t) { return t == TYPE_F16 || t == TYPE_BF16 || type_is_minifloat(t); }

static uint32_t float_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

bool kernel_x86_minifloat_nan_has_bits(ElementType t) {
  return type_is_minifloat(t) && isinf(minifloat_to_float(t, double_to_minifloat(t, INFINITY)));
}

/* The f32 that stands for minifloat bits. The IEEE-like minifloats
 * (f8e5m2, f8e4m3, f8e3m4) have several NaN encodings, and a copy must
 * keep which one (the evaluator copies bytes), so their NaNs carry the
 * encoding in the f32 payload's low byte; an op's NaN result is the
 * type's one NaN of its sign all the same (rounding ignores payloads),
 * and a convert to another type clears the payload (kernel_x86_convert.c). */
static float minifloat_register_value(ElementType t, uint8_t bits) {
  float v = minifloat_to_float(t, bits);
  if (!isnan(v) || !kernel_x86_minifloat_nan_has_bits(t)) return v;
  uint32_t with_bits = (signbit(v) ? 0x80000000u : 0) | 0x7fc00000u | bits;
  memcpy(&v, &with_bits, sizeof v);
  return v;
}

float kernel_x86_narrow_value(ElementType t, double v) {
  if (t == TYPE_F16) return half_to_float(float_to_half((float)v));
  if (t == TYPE_BF16) return bf16_to_float(float_to_bf16((float)v));
  return minifloat_register_value(t, double_to_minifloat(t, v));
}

/* What an encoder needs of a format besides M and B: the results the
 * minifloat rules give for NaN, infinity (and overflow) and zero of each
 * sign, taken from the reference conversion itself. */
typedef struct NarrowFormat {
  int mantissa_bits, bias;
  uint32_t sign_bit, max_finite;
  uint32_t nan[2], overflow[2], zero[2]; /* [0] positive, [1] negative */
} NarrowFormat;

static NarrowFormat narrow_format(ElementType t) {
  NarrowFormat f = {0};
  if (t == TYPE_F16) {
    f.mantissa_bits = 10, f.bias = 15, f.sign_bit = 0x8000, f.max_finite = 0x7bff;
    f.overflow[0] = 0x7c00, f.overflow[1] = 0xfc00, f.zero[1] = 0x8000;
    return f;
  }
  int exponent_bits;
  minifloat_layout(t, &exponent_bits, &f.mantissa_bits, &f.bias);
  int width = type_bit_width(t);
  f.sign_bit = 1u << (width - 1);
  for (uint32_t bits = 0; bits < f.sign_bit; bits++) {
    float v = minifloat_to_float(t, (uint8_t)bits);
    if (isfinite(v) && v >= minifloat_to_float(t, (uint8_t)f.max_finite)) f.max_finite = bits;
  }
  for (int negative = 0; negative < 2; negative++) {
    double sign = negative ? -1.0 : 1.0;
    f.nan[negative] = double_to_minifloat(t, copysign(NAN, sign));
    f.overflow[negative] = double_to_minifloat(t, sign * INFINITY);
    f.zero[negative] = double_to_minifloat(t, sign * 0.0);
  }
  return f;
}

/* ---- widening: the bits in eax (zero-extended) to f32 in scratch0 ---- */

static void emit_half_decode(KernelX86 *x) {
  X86Label special = x86_label_new(x->cb), sign = x86_label_new(x->cb);
  EMIT(X86_MOV, reg(X86_ECX), reg(X86_EAX));
  EMIT(X86_AND, reg(X86_ECX), x86_imm(0x8000));
  EMIT(X86_SHL, reg(X86_ECX), x86_imm(16));
  EMIT(X86_AND, reg(X86_EAX), x86_imm(0x7fff));
  EMIT(X86_CMP, reg(X86_EAX), x86_imm(0x7c00));
  EMIT(X86_JAE, x86_rel(special));
  EMIT(X86_SHL, reg(X86_EAX), x86_imm(13));
  EMIT(X86_MOVD, reg(KX_XMM_SCRATCH0), reg(X86_EAX));
  EMIT(X86_MOV, reg(X86_EDX), x86_imm(float_bits(0x1p112f)));
  EMIT(X86_MOVD, reg(KX_XMM_SCRATCH1), reg(X86_EDX));
  EMIT(X86_MULSS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_MOVD, reg(X86_EAX), reg(KX_XMM_SCRATCH0));
  EMIT(X86_JMP, x86_rel(sign));
  x86_label_bind(x->cb, special); /* infinity, or NaN with its payload */
  EMIT(X86_SHL, reg(X86_EAX), x86_imm(13));
  EMIT(X86_OR, reg(X86_EAX), x86_imm(0x7f800000));
  x86_label_bind(x->cb, sign);
  EMIT(X86_OR, reg(X86_EAX), reg(X86_ECX));
  EMIT(X86_MOVD, reg(KX_XMM_SCRATCH0), reg(X86_EAX));
}

static X86Label narrow_table(KernelX86 *x, ElementType t) {
  if (!x->narrow_table_used[t]) {
    x->narrow_table_used[t] = true;
    x->narrow_tables[t] = x86_label_new(x->cb);
  }
  return x->narrow_tables[t];
}

void kernel_x86_emit_narrow_decode(KernelX86 *x, ElementType t) {
  if (t == TYPE_BF16) {
    EMIT(X86_SHL, reg(X86_EAX), x86_imm(16));
    EMIT(X86_MOVD, reg(KX_XMM_SCRATCH0), reg(X86_EAX));
  } else if (t == TYPE_F16) {
    emit_half_decode(x);
  } else {
    EMIT(X86_LEA, reg(KX_SCRATCH_ADDRESS), x86_mem_label(8, narrow_table(x, t)));
    EMIT(X86_MOVSS, reg(KX_XMM_SCRATCH0), x86_mem_index(4, KX_SCRATCH_ADDRESS, X86_RAX, 4, 0));
  }
}

void kernel_x86_emit_narrow_tables(KernelX86 *x) {
  for (int t = 0; t < TYPE_COUNT; t++) {
    if (!x->narrow_table_used[t]) continue;
    x86_align(x->cb, 16);
    x86_listing_note(x->cb, "table: the f32 value of each %s", type_name((ElementType)t));
    x86_label_bind(x->cb, x->narrow_tables[t]);
    float values[256];
    for (int bits = 0; bits < 256; bits++) values[bits] = minifloat_register_value((ElementType)t, (uint8_t)bits);
    x86_emit_bytes(x->cb, values, sizeof values);
  }
}

/* ---- rounding: f32 in scratch0 to the bits in edx ---- */

/* bf16 keeps f32's exponent: the low 16 bits round away to nearest even,
 * and a NaN is made quiet (float_to_bf16) when it is an op's result. */
static void emit_bf16_encode(KernelX86 *x, bool quiet_nan) {
  X86Label nan = x86_label_new(x->cb), done = x86_label_new(x->cb);
  EMIT(X86_MOVD, reg(X86_EAX), reg(KX_XMM_SCRATCH0));
  EMIT(X86_MOV, reg(X86_ECX), reg(X86_EAX));
  EMIT(X86_AND, reg(X86_ECX), x86_imm(0x7fffffff));
  EMIT(X86_CMP, reg(X86_ECX), x86_imm(0x7f800000));
  EMIT(X86_JA, x86_rel(nan));
  EMIT(X86_MOV, reg(X86_EDX), reg(X86_EAX));
  EMIT(X86_SHR, reg(X86_EDX), x86_imm(16));
  EMIT(X86_AND, reg(X86_EDX), x86_imm(1));
  EMIT(X86_ADD, reg(X86_EDX), x86_imm(0x7fff));
  EMIT(X86_ADD, reg(X86_EDX), reg(X86_EAX));
  EMIT(X86_SHR, reg(X86_EDX), x86_imm(16));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, nan);
  EMIT(X86_MOV, reg(X86_EDX), reg(X86_EAX));
  EMIT(X86_SHR, reg(X86_EDX), x86_imm(16));
  if (quiet_nan) EMIT(X86_OR, reg(X86_EDX), x86_imm(0x40));
  x86_label_bind(x->cb, done);
}

/* f8e8m0fnu is a bare exponent (no sign, no zero, no subnormals) whose
 * values round on the exponent, ties up; zero, negatives, NaN and
 * infinity give its NaN. Below 2^-126 the reference gives 2^-127 (0) up to
 * 2^-127 itself and 2^-126 (1) above it. */
static void emit_e8m0_encode(KernelX86 *x) {
  X86Label nan = x86_label_new(x->cb), done = x86_label_new(x->cb);
  EMIT(X86_MOVD, reg(X86_EAX), reg(KX_XMM_SCRATCH0));
  EMIT(X86_MOV, reg(X86_EDX), x86_imm(0xff));
  EMIT(X86_TEST, reg(X86_EAX), reg(X86_EAX));
  EMIT(X86_JLE, x86_rel(done)); /* +0, or the sign bit set */
  EMIT(X86_CMP, reg(X86_EAX), x86_imm(0x7f800000));
  EMIT(X86_JAE, x86_rel(done));
  EMIT(X86_XOR, reg(X86_EDX), reg(X86_EDX));
  EMIT(X86_CMP, reg(X86_EAX), x86_imm(0x400000));
  EMIT(X86_JBE, x86_rel(done));
  EMIT(X86_MOV, reg(X86_EDX), x86_imm(1));
  EMIT(X86_CMP, reg(X86_EAX), x86_imm(0x800000));
  EMIT(X86_JB, x86_rel(done));
  EMIT(X86_MOV, reg(X86_EDX), reg(X86_EAX));
  EMIT(X86_ADD, reg(X86_EDX), x86_imm(0x400000));
  EMIT(X86_SHR, reg(X86_EDX), x86_imm(23));
  EMIT(X86_CMP, reg(X86_EDX), x86_imm(0xfe));
  EMIT(X86_JBE, x86_rel(done));
  x86_label_bind(x->cb, nan);
  EMIT(X86_MOV, reg(X86_EDX), x86_imm(0xff));
  x86_label_bind(x->cb, done);
}

/* edx = positive if ecx (the sign, 0 or 1) is 0, else negative. */
static void emit_pick_by_sign(KernelX86 *x, uint32_t positive, uint32_t negative, X86Label done) {
  EMIT(X86_MOV, reg(X86_EDX), x86_imm(positive));
  EMIT(X86_TEST, reg(X86_ECX), reg(X86_ECX));
  EMIT(X86_JE, x86_rel(done));
  EMIT(X86_MOV, reg(X86_EDX), x86_imm(negative));
  EMIT(X86_JMP, x86_rel(done));
}

/* f16 and the signed minifloats, as the file comment describes; ecx holds
 * the sign (0 or 1), eax the f32 magnitude's bits. */
static void emit_generic_encode(KernelX86 *x, ElementType t, bool quiet_nan) {
  NarrowFormat f = narrow_format(t);
  int shift = 23 - f.mantissa_bits;
  uint32_t min_normal = (uint32_t)(1 - f.bias + 127) << 23, c = (uint32_t)(24 - f.bias - f.mantissa_bits + 127) << 23;
  X86Label nan = x86_label_new(x->cb), overflow = x86_label_new(x->cb), zero = x86_label_new(x->cb),
           subnormal = x86_label_new(x->cb), sign = x86_label_new(x->cb), done = x86_label_new(x->cb);
  EMIT(X86_MOVD, reg(X86_EAX), reg(KX_XMM_SCRATCH0));
  EMIT(X86_MOV, reg(X86_ECX), reg(X86_EAX));
  EMIT(X86_SHR, reg(X86_ECX), x86_imm(31));
  EMIT(X86_AND, reg(X86_EAX), x86_imm(0x7fffffff));
  EMIT(X86_CMP, reg(X86_EAX), x86_imm(0x7f800000));
  EMIT(X86_JA, x86_rel(nan));
  EMIT(X86_JE, x86_rel(overflow));
  EMIT(X86_TEST, reg(X86_EAX), reg(X86_EAX));
  EMIT(X86_JE, x86_rel(zero));
  EMIT(X86_CMP, reg(X86_EAX), x86_imm(min_normal));
  EMIT(X86_JB, x86_rel(subnormal));
  EMIT(X86_MOV, reg(X86_EDX), reg(X86_EAX));
  EMIT(X86_SHR, reg(X86_EDX), x86_imm(shift));
  EMIT(X86_AND, reg(X86_EDX), x86_imm(1));
  EMIT(X86_ADD, reg(X86_EDX), x86_imm((1 << (shift - 1)) - 1));
  EMIT(X86_ADD, reg(X86_EDX), reg(X86_EAX));
  EMIT(X86_SHR, reg(X86_EDX), x86_imm(shift));
  EMIT(X86_SUB, reg(X86_EDX), x86_imm((127 - f.bias) << f.mantissa_bits));
  EMIT(X86_CMP, reg(X86_EDX), x86_imm(f.max_finite));
  EMIT(X86_JA, x86_rel(overflow));
  EMIT(X86_JMP, x86_rel(sign));
  x86_label_bind(x->cb, subnormal);
  EMIT(X86_MOVD, reg(KX_XMM_SCRATCH1), reg(X86_EAX));
  EMIT(X86_MOV, reg(X86_EDX), x86_imm(c));
  EMIT(X86_MOVD, reg(KX_XMM_SCRATCH2), reg(X86_EDX));
  EMIT(X86_ADDSS, reg(KX_XMM_SCRATCH1), reg(KX_XMM_SCRATCH2));
  EMIT(X86_MOVD, reg(X86_EDX), reg(KX_XMM_SCRATCH1));
  EMIT(X86_SUB, reg(X86_EDX), x86_imm(c));
  EMIT(X86_JE, x86_rel(zero)); /* it rounded to zero: the type's zero of that sign */
  x86_label_bind(x->cb, sign);
  EMIT(X86_TEST, reg(X86_ECX), reg(X86_ECX));
  EMIT(X86_JE, x86_rel(done));
  EMIT(X86_OR, reg(X86_EDX), x86_imm(f.sign_bit));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, zero);
  emit_pick_by_sign(x, f.zero[0], f.zero[1], done);
  x86_label_bind(x->cb, overflow);
  emit_pick_by_sign(x, f.overflow[0], f.overflow[1], done);
  x86_label_bind(x->cb, nan);
  if (t == TYPE_F16) { /* a NaN that keeps the payload's top bits and the sign */
    EMIT(X86_MOV, reg(X86_EDX), reg(X86_EAX));
    EMIT(X86_SHR, reg(X86_EDX), x86_imm(13));
    EMIT(X86_AND, reg(X86_EDX), x86_imm(0x3ff));
    EMIT(X86_OR, reg(X86_EDX), x86_imm(quiet_nan ? 0x7e00 : 0x7c00));
    EMIT(X86_SHL, reg(X86_ECX), x86_imm(15));
    EMIT(X86_OR, reg(X86_EDX), reg(X86_ECX));
  } else {
    if (!quiet_nan && kernel_x86_minifloat_nan_has_bits(t)) { /* the encoding it was loaded from */
      X86Label canonical = x86_label_new(x->cb);
      EMIT(X86_MOV, reg(X86_EDX), reg(X86_EAX));
      EMIT(X86_TEST, reg(X86_EDX), x86_imm(0x3fff00));
      EMIT(X86_JNE, x86_rel(canonical));
      EMIT(X86_AND, reg(X86_EDX), x86_imm(0xff));
      EMIT(X86_JMP, x86_rel(done));
      x86_label_bind(x->cb, canonical);
    }
    emit_pick_by_sign(x, f.nan[0], f.nan[1], done);
  }
  x86_label_bind(x->cb, done);
}

/* A value in a register is either an op's rounded result, whose NaN is
 * quiet already, or a loaded one, whose NaN bits a store must keep (the
 * evaluator copies such elements): a store does not quieten. */
void kernel_x86_emit_narrow_encode(KernelX86 *x, ElementType t, bool quiet_nan) {
  if (t == TYPE_BF16) emit_bf16_encode(x, quiet_nan);
  else if (t == TYPE_F8E8M0FNU) emit_e8m0_encode(x);
  else emit_generic_encode(x, t, quiet_nan);
}

void kernel_x86_emit_narrow_round(KernelX86 *x, ElementType t) {
  if (t == TYPE_F16 && x->cpu->f16c) {
    /* F16C rounds to nearest even and quietens NaNs as float_to_half does */
    EMIT(X86_VCVTPS2PH, reg(KX_XMM_SCRATCH1), reg(KX_XMM_SCRATCH0), x86_imm(0));
    EMIT(X86_VCVTPH2PS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
    return;
  }
  kernel_x86_emit_narrow_encode(x, t, true);
  EMIT(X86_MOV, reg(X86_EAX), reg(X86_EDX));
  kernel_x86_emit_narrow_decode(x, t);
}

/* Every op with a narrow result rounds it, as the evaluator stores each
 * result through the type's conversion, but those it computes by copying
 * an operand's bytes (select, clamp) or rebuilding them (bitcast-convert). */
bool kernel_x86_narrow_rounds_after(const KernelOp *op) {
  if (op->kop != KOP_HLO || !kernel_x86_type_is_narrow(op->type)) return false;
  return op->op != OP_SELECT && op->op != OP_CLAMP && op->op != OP_BITCAST_CONVERT;
}
