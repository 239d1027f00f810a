/* HLO's reduce-precision on f32 and f64 in the kernel compiler's scalar
 * code: XLA's algorithm on the bits, as the evaluator's
 * reduce_precision_bits (src/ir/eval/eval_convert.c) states it. The
 * mantissa is rounded to nearest even by adding a bias and masking (a
 * carry bumps the exponent); a narrower exponent sends values above its
 * largest to infinity and at or below its smallest to zero; a NaN stays
 * itself, or becomes +infinity when no mantissa bit is kept. The widths
 * are compile-time constants, so only the steps they need are emitted. */
#include "emit_x86/kernel_x86_math_builder.h"

typedef struct FloatBits {
  int mantissa_bits, exponent_bits, total_bits;
} FloatBits;

static const FloatBits bits_f32 = {23, 8, 32};
static const FloatBits bits_f64 = {52, 11, 64};

/* The mantissa rounded to `mantissa_bits`, nearest even. */
static MathValue mantissa_rounded(MathBuilder *b, const FloatBits *f, MathValue x, int mantissa_bits) {
  int dropped = f->mantissa_bits - mantissa_bits;
  uint64_t last_kept_bit = UINT64_C(1) << dropped;
  MathValue odd = shift_right_u64(b, and_u64(b, x, constant_u64(b, last_kept_bit)), dropped);
  MathValue bias = add_u64(b, constant_u64(b, (last_kept_bit >> 1) - 1), odd);
  x = and_u64(b, add_u64(b, x, bias), constant_u64(b, ~(last_kept_bit - 1)));
  if (f->total_bits < 64) x = and_u64(b, x, constant_u64(b, (UINT64_C(1) << f->total_bits) - 1));
  return x;
}

/* Exponents past the narrower range: infinity above, signed zero at or
 * below its smallest (the narrow format's subnormals are flushed). */
static MathValue exponent_clamped(MathBuilder *b, const FloatBits *f, MathValue x, int exponent_bits) {
  uint64_t sign_mask = UINT64_C(1) << (f->total_bits - 1);
  uint64_t exp_mask = ((UINT64_C(1) << f->exponent_bits) - 1) << f->mantissa_bits;
  uint64_t bias = (UINT64_C(1) << (f->exponent_bits - 1)) - 1;
  uint64_t reduced_bias = (UINT64_C(1) << (exponent_bits - 1)) - 1;
  MathValue exponent = and_u64(b, x, constant_u64(b, exp_mask));
  MathValue signed_zero = and_u64(b, x, constant_u64(b, sign_mask));
  MathValue max_exponent = constant_u64(b, (bias + reduced_bias) << f->mantissa_bits);
  MathValue min_exponent = constant_u64(b, (bias - reduced_bias) << f->mantissa_bits);
  MathValue infinity = or_u64(b, signed_zero, constant_u64(b, exp_mask));
  MathValue y = select_value(b, less_u64(b, max_exponent, exponent), infinity, x);
  return select_value(b, not_mask(b, less_u64(b, min_exponent, exponent)), signed_zero, y);
}

bool kernel_x86_emit_reduce_precision(KernelX86 *x, int i, X86Operand input, X86Reg *result) {
  const KernelOp *op = &x->k->ops[i];
  bool f64 = op->type == TYPE_F64;
  if ((op->type != TYPE_F32 && !f64) || !op->origin)
    return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: reduce-precision on %s (op %%%d) has no x86 code yet",
                        x->k->name, type_name(op->type), i);
  const FloatBits *f = f64 ? &bits_f64 : &bits_f32;
  /* widths past the source format's change nothing (the evaluator caps
   * them the same way) */
  int64_t eb = op->origin->attrs.exponent_bits, mb = op->origin->attrs.mantissa_bits;
  int exponent_bits = eb > f->exponent_bits ? f->exponent_bits : (int)eb;
  int mantissa_bits = mb > f->mantissa_bits ? f->mantissa_bits : (int)mb;
  MathBuilder b;
  math_builder_begin(&b, x);
  MathValue v = math_input(&b, input, f64);
  MathValue bits = f64 ? v : u64_from_u32(&b, v);
  uint64_t sign_mask = UINT64_C(1) << (f->total_bits - 1);
  uint64_t exp_mask = ((UINT64_C(1) << f->exponent_bits) - 1) << f->mantissa_bits;
  MathValue is_nan = less_u64(&b, constant_u64(&b, exp_mask), and_u64(&b, bits, constant_u64(&b, ~sign_mask)));
  MathValue y = bits;
  if (mantissa_bits < f->mantissa_bits) y = mantissa_rounded(&b, f, y, mantissa_bits);
  if (exponent_bits < f->exponent_bits) y = exponent_clamped(&b, f, y, exponent_bits);
  y = select_value(&b, is_nan, mantissa_bits > 0 ? bits : constant_u64(&b, exp_mask), y);
  math_output(&b, y, KX_XMM_SCRATCH2, f64);
  *result = KX_XMM_SCRATCH2;
  return math_builder_end(&b);
}
