/* The kernel ops whose argument and result types differ: compare (to
 * pred), select (on a pred), convert, bitcast-convert, stochastic-convert,
 * and reduce-precision (which works on the bits). Same registers and
 * canonical forms as kernel_x86_ops.c. */
#include <math.h>
#include <string.h>

#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }

static bool refuse(KernelX86 *x, int i, const char *why) {
  const KernelOp *op = &x->k->ops[i];
  ElementType from = x->k->ops[op->args[op->op == OP_SELECT ? 1 : 0]].type;
  return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: %s from %s to %s (op %%%d) has no x86 code yet: %s",
                      x->k->name, opcode_name(op->op), type_name(from), type_name(op->type), i, why);
}

static bool is_float(ElementType t) { return kernel_x86_value_class_of(t) == VALUE_XMM; }
static bool is_unsigned_or_pred(ElementType t) { return t == TYPE_PRED || type_kind(t) == TYPE_KIND_UINT; }

/* Local copies of the fetch/define helpers (kept static in each file so
 * the two stay independent to read). */
static X86Operand operand_of(const KernelX86 *x, int v) {
  const ValueHome *h = &x->homes[v];
  if (!h->spilled) return reg(h->reg);
  int size = h->value_class == VALUE_XMM ? (x->k->ops[v].type == TYPE_F64 ? 8 : 4) : 8;
  return kernel_x86_slot(x->value_slot + h->spill, size);
}

static void fetch(KernelX86 *x, X86Reg into, int v) {
  const ValueHome *h = &x->homes[v];
  if (h->value_class == VALUE_GPR) EMIT(X86_MOV, reg(into), operand_of(x, v));
  else if (!h->spilled) EMIT(X86_MOVAPS, reg(into), reg(h->reg));
  else EMIT(x->k->ops[v].type == TYPE_F64 ? X86_MOVSD : X86_MOVSS, reg(into), operand_of(x, v));
}

static void define(KernelX86 *x, int v, X86Reg from) {
  const ValueHome *h = &x->homes[v];
  if (h->value_class == VALUE_GPR) EMIT(X86_MOV, operand_of(x, v), reg(from));
  else if (!h->spilled) EMIT(X86_MOVAPS, reg(h->reg), reg(from));
  else EMIT(x->k->ops[v].type == TYPE_F64 ? X86_MOVSD : X86_MOVSS, operand_of(x, v), reg(from));
}

static void canonicalize(KernelX86 *x, X86Reg r, ElementType t) {
  X86Reg r32 = x86_gpr(X86_KIND_GPR32, x86_reg_number(r)), r16 = x86_gpr(X86_KIND_GPR16, x86_reg_number(r)),
         r8 = x86_gpr(X86_KIND_GPR8, x86_reg_number(r));
  switch (t) {
  case TYPE_S8: EMIT(X86_MOVSX, reg(r), reg(r8)); break;
  case TYPE_S16: EMIT(X86_MOVSX, reg(r), reg(r16)); break;
  case TYPE_S32: EMIT(X86_MOVSXD, reg(r), reg(r32)); break;
  case TYPE_U8: case TYPE_PRED: EMIT(X86_MOVZX, reg(r32), reg(r8)); break;
  case TYPE_U16: EMIT(X86_MOVZX, reg(r32), reg(r16)); break;
  case TYPE_U32: EMIT(X86_MOV, reg(r32), reg(r32)); break;
  /* s4, u4, s2, u2: one byte per element, extended from their own width */
  case TYPE_S4: case TYPE_S2:
    EMIT(X86_SHL, reg(r), x86_imm(64 - type_bit_width(t)));
    EMIT(X86_SAR, reg(r), x86_imm(64 - type_bit_width(t)));
    break;
  case TYPE_U4: case TYPE_U2: EMIT(X86_AND, reg(r), x86_imm((1 << type_bit_width(t)) - 1)); break;
  default: break;
  }
}

/* ---- compare ---- */

/* The integer whose signed order is the total order of the float in r:
 * -NaN < -inf < ... < -0 < +0 < ... < inf < NaN. Negative floats have
 * their magnitude bits flipped, which turns sign-magnitude into two's
 * complement. f32 bits are sign-extended first, so one 64-bit compare
 * serves both widths. */
static void emit_total_order_key(KernelX86 *x, X86Reg into, int v) {
  bool wide = x->k->ops[v].type == TYPE_F64;
  fetch(x, KX_XMM_SCRATCH0, v);
  if (wide) {
    EMIT(X86_MOVQ, reg(into), reg(KX_XMM_SCRATCH0));
  } else {
    EMIT(X86_MOVD, reg(x86_gpr(X86_KIND_GPR32, x86_reg_number(into))), reg(KX_XMM_SCRATCH0));
    EMIT(X86_MOVSXD, reg(into), reg(x86_gpr(X86_KIND_GPR32, x86_reg_number(into))));
  }
  EMIT(X86_MOV, reg(X86_RDX), reg(into));
  EMIT(X86_SAR, reg(X86_RDX), x86_imm(63));
  EMIT(X86_SHR, reg(X86_RDX), x86_imm(wide ? 1 : 33));
  EMIT(X86_XOR, reg(into), reg(X86_RDX));
}

/* A minifloat's key, from its bits (as the evaluator's total_order_key):
 * sign-magnitude in the type's width turned into two's complement, and
 * f8e8m0fnu's bits as they are (no sign); into rax. */
static void emit_minifloat_order_key(KernelX86 *x, int v) {
  ElementType t = x->k->ops[v].type;
  int sign = 1 << (type_bit_width(t) - 1);
  X86Label positive = x86_label_new(x->cb);
  fetch(x, KX_XMM_SCRATCH0, v);
  kernel_x86_emit_narrow_encode(x, t, false);
  EMIT(X86_MOV, reg(X86_EAX), reg(X86_EDX));
  if (t == TYPE_F8E8M0FNU) return;
  EMIT(X86_AND, reg(X86_EAX), x86_imm(sign - 1));
  EMIT(X86_TEST, reg(X86_EDX), x86_imm(sign));
  EMIT(X86_JE, x86_rel(positive));
  EMIT(X86_NOT, reg(X86_RAX)); /* -m - 1 */
  x86_label_bind(x->cb, positive);
}

/* f32, f64 and the 16-bit floats (whose f32 values keep their order, NaN
 * payloads included), and the minifloats by their bits. */
static bool emit_total_order_compare(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  ElementType t = x->k->ops[op->args[0]].type;
  if (type_is_minifloat(t)) {
    emit_minifloat_order_key(x, op->args[1]);
    EMIT(X86_MOV, kernel_x86_slot(x->scratch_slot, 8), reg(X86_RAX));
    emit_minifloat_order_key(x, op->args[0]);
    EMIT(X86_MOV, reg(X86_RCX), kernel_x86_slot(x->scratch_slot, 8));
  } else {
    emit_total_order_key(x, X86_RAX, op->args[0]);
    emit_total_order_key(x, X86_RCX, op->args[1]);
  }
  EMIT(X86_CMP, reg(X86_RAX), reg(X86_RCX));
  X86Cond cc;
  switch (op->direction) {
  case CMP_EQ: cc = X86_CC_E; break;
  case CMP_NE: cc = X86_CC_NE; break;
  case CMP_LT: cc = X86_CC_L; break;
  case CMP_LE: cc = X86_CC_LE; break;
  case CMP_GT: cc = X86_CC_G; break;
  default: cc = X86_CC_GE; break;
  }
  EMIT(x86_setcc(cc), reg(X86_AL));
  EMIT(X86_MOVZX, reg(X86_EAX), reg(X86_AL));
  define(x, i, X86_RAX);
  return true;
}

/* After ucomiss a, b the flags say: unordered ZF=PF=CF=1, a < b CF=1,
 * a = b ZF=1, a > b none. Every ordered direction is false on NaN and NE
 * is true, as the evaluator's direction_holds has it. */
static bool emit_float_compare(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  int a = op->args[0], b = op->args[1];
  X86Mnemonic ucomi = x->k->ops[a].type == TYPE_F64 ? X86_UCOMISD : X86_UCOMISS;
  if (op->compare_type == CMP_TYPE_TOTALORDER) return emit_total_order_compare(x, i);
  bool swap = op->direction == CMP_LT || op->direction == CMP_LE;
  fetch(x, KX_XMM_SCRATCH0, swap ? b : a);
  EMIT(ucomi, reg(KX_XMM_SCRATCH0), operand_of(x, swap ? a : b));
  switch (op->direction) {
  case CMP_EQ:
    EMIT(X86_SETE, reg(X86_AL));
    EMIT(X86_SETNP, reg(X86_CL));
    EMIT(X86_AND, reg(X86_AL), reg(X86_CL));
    break;
  case CMP_NE:
    EMIT(X86_SETNE, reg(X86_AL));
    EMIT(X86_SETP, reg(X86_CL));
    EMIT(X86_OR, reg(X86_AL), reg(X86_CL));
    break;
  case CMP_GT: case CMP_LT: EMIT(X86_SETA, reg(X86_AL)); break;
  default: EMIT(X86_SETAE, reg(X86_AL)); break;
  }
  EMIT(X86_MOVZX, reg(X86_EAX), reg(X86_AL));
  define(x, i, X86_RAX);
  return true;
}

static bool emit_compare(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  ElementType t = x->k->ops[op->args[0]].type;
  if (is_float(t)) return emit_float_compare(x, i);
  /* The evaluator takes SIGNED/UNSIGNED as given; a signedness other than
   * the operands' own would need re-extension first. */
  bool is_unsigned = is_unsigned_or_pred(t);
  if ((op->compare_type == CMP_TYPE_SIGNED && is_unsigned) || (op->compare_type == CMP_TYPE_UNSIGNED && !is_unsigned))
    return refuse(x, i, "a comparison of another signedness than the operands'");
  if (op->compare_type == CMP_TYPE_SIGNED && t == TYPE_PRED) return refuse(x, i, "signed comparison of pred");
  fetch(x, X86_RCX, op->args[0]);
  EMIT(X86_CMP, reg(X86_RCX), operand_of(x, op->args[1]));
  X86Cond cc;
  switch (op->direction) {
  case CMP_EQ: cc = X86_CC_E; break;
  case CMP_NE: cc = X86_CC_NE; break;
  case CMP_LT: cc = is_unsigned ? X86_CC_B : X86_CC_L; break;
  case CMP_LE: cc = is_unsigned ? X86_CC_BE : X86_CC_LE; break;
  case CMP_GT: cc = is_unsigned ? X86_CC_A : X86_CC_G; break;
  default: cc = is_unsigned ? X86_CC_AE : X86_CC_GE; break;
  }
  EMIT(x86_setcc(cc), reg(X86_AL));
  EMIT(X86_MOVZX, reg(X86_EAX), reg(X86_AL));
  define(x, i, X86_RAX);
  return true;
}

/* ---- select ---- */

static bool emit_select(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  if (x->k->ops[op->args[0]].type != TYPE_PRED) return refuse(x, i, "a predicate that is not pred");
  if (!is_float(op->type)) {
    fetch(x, X86_RAX, op->args[2]);
    fetch(x, X86_RDX, op->args[1]);
    fetch(x, X86_RCX, op->args[0]);
    EMIT(X86_TEST, reg(X86_RCX), reg(X86_RCX));
    EMIT(X86_CMOVNE, reg(X86_RAX), reg(X86_RDX));
    define(x, i, X86_RAX);
    return true;
  }
  X86Label done = x86_label_new(x->cb);
  fetch(x, KX_XMM_SCRATCH0, op->args[2]);
  fetch(x, X86_RCX, op->args[0]);
  EMIT(X86_TEST, reg(X86_RCX), reg(X86_RCX));
  EMIT(X86_JE, x86_rel(done));
  fetch(x, KX_XMM_SCRATCH0, op->args[1]);
  x86_label_bind(x->cb, done);
  define(x, i, KX_XMM_SCRATCH0);
  return true;
}

/* ---- convert ---- */

static void load_f64_constant(KernelX86 *x, X86Reg into, double value) {
  int64_t bits;
  memcpy(&bits, &value, sizeof bits);
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(bits));
  EMIT(X86_MOVQ, reg(into), reg(X86_RCX));
}

/* Float to integer as the evaluator's store_float_as_int: NaN gives 0,
 * values at or past the type's limits give the limit, the rest truncate.
 * The value is widened to f64 (exactly) and checked against 2^(w-1) (or
 * 2^w unsigned); anything strictly between a limit and the next power of
 * two truncates to that limit anyway, so the exact threshold the evaluator
 * compares with cannot change a result. */
static bool emit_float_to_int(KernelX86 *x, int i, ElementType from) {
  const KernelOp *op = &x->k->ops[i];
  ElementType to = op->type;
  int bits = type_bit_width(to);
  bool is_unsigned = type_kind(to) == TYPE_KIND_UINT;
  if (to == TYPE_PRED) { /* x != 0, so NaN is true: not equal, or unordered */
    fetch(x, KX_XMM_SCRATCH0, op->args[0]);
    EMIT(X86_XORPS, reg(KX_XMM_SCRATCH1), reg(KX_XMM_SCRATCH1));
    EMIT(from == TYPE_F64 ? X86_UCOMISD : X86_UCOMISS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
    EMIT(X86_SETNE, reg(X86_AL));
    EMIT(X86_SETP, reg(X86_CL));
    EMIT(X86_OR, reg(X86_AL), reg(X86_CL));
    EMIT(X86_MOVZX, reg(X86_EAX), reg(X86_AL));
    define(x, i, X86_RAX);
    return true;
  }
  double past_max = is_unsigned ? ldexp(1.0, bits) : ldexp(1.0, bits - 1);
  double lowest = is_unsigned ? 0.0 : -ldexp(1.0, bits - 1);
  int64_t max = is_unsigned ? (int64_t)(~0ull >> (64 - bits)) : (int64_t)(~0ull >> (65 - bits));
  int64_t min = is_unsigned ? 0 : -max - 1;
  X86Label done = x86_label_new(x->cb), saturate_high = x86_label_new(x->cb), saturate_low = x86_label_new(x->cb);
  fetch(x, KX_XMM_SCRATCH0, op->args[0]);
  if (from != TYPE_F64) EMIT(X86_CVTSS2SD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
  EMIT(X86_XOR, reg(X86_EAX), reg(X86_EAX));
  EMIT(X86_UCOMISD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
  EMIT(X86_JP, x86_rel(done));
  load_f64_constant(x, KX_XMM_SCRATCH1, past_max);
  EMIT(X86_UCOMISD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_JAE, x86_rel(saturate_high));
  load_f64_constant(x, KX_XMM_SCRATCH1, lowest);
  EMIT(X86_UCOMISD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_JBE, x86_rel(saturate_low));
  if (to == TYPE_U64) {
    /* cvttsd2si is signed: from 2^63 up, convert x - 2^63 and set the top bit */
    X86Label small = x86_label_new(x->cb);
    load_f64_constant(x, KX_XMM_SCRATCH1, ldexp(1.0, 63));
    EMIT(X86_UCOMISD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
    EMIT(X86_JB, x86_rel(small));
    EMIT(X86_SUBSD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
    EMIT(X86_CVTTSD2SI, reg(X86_RAX), reg(KX_XMM_SCRATCH0));
    EMIT(X86_MOV, reg(X86_RCX), x86_imm(INT64_MIN));
    EMIT(X86_XOR, reg(X86_RAX), reg(X86_RCX));
    EMIT(X86_JMP, x86_rel(done));
    x86_label_bind(x->cb, small);
  }
  EMIT(X86_CVTTSD2SI, reg(X86_RAX), reg(KX_XMM_SCRATCH0));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, saturate_high);
  EMIT(X86_MOV, reg(X86_RAX), x86_imm(max));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, saturate_low);
  EMIT(X86_MOV, reg(X86_RAX), x86_imm(min));
  x86_label_bind(x->cb, done);
  define(x, i, X86_RAX);
  return true;
}

/* The evaluator rounds f64 to f16, bf16 or an f8 or f4 type once. Going
 * through f32 keeps that one rounding if f64 -> f32 rounds to odd (toward
 * zero, then the lowest bit set when inexact; double_to_float_round_to_odd
 * in types.c says why): f32's 24 bits are more than two past f16's 11,
 * bf16's 8 and any minifloat's, so the odd bit only says "past the halfway
 * point" or "not exact". cvtsd2ss rounds to nearest; when its result came out
 * larger in magnitude than v it steps back one (sign-magnitude bits), so
 * it is v truncated, and then takes the odd bit. A NaN stays cvtsd2ss's
 * (its payload's top bits, as (float) in the evaluator keeps them). f64 v
 * to scratch0 (f32). */
static void emit_f64_to_f32_round_to_odd(KernelX86 *x, int v) {
  X86Label exact = x86_label_new(x->cb), toward_zero = x86_label_new(x->cb);
  fetch(x, KX_XMM_SCRATCH1, v);
  EMIT(X86_CVTSD2SS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_UCOMISD, reg(KX_XMM_SCRATCH1), reg(KX_XMM_SCRATCH1));
  EMIT(X86_JP, x86_rel(exact));
  EMIT(X86_CVTSS2SD, reg(KX_XMM_SCRATCH2), reg(KX_XMM_SCRATCH0));
  EMIT(X86_MOVQ, reg(X86_RAX), reg(KX_XMM_SCRATCH1));
  EMIT(X86_MOVQ, reg(X86_RCX), reg(KX_XMM_SCRATCH2));
  EMIT(X86_CMP, reg(X86_RAX), reg(X86_RCX));
  EMIT(X86_JE, x86_rel(exact));
  EMIT(X86_SHL, reg(X86_RAX), x86_imm(1)); /* the magnitudes, without the sign */
  EMIT(X86_SHL, reg(X86_RCX), x86_imm(1));
  EMIT(X86_MOVD, reg(X86_EDX), reg(KX_XMM_SCRATCH0));
  EMIT(X86_CMP, reg(X86_RCX), reg(X86_RAX));
  EMIT(X86_JBE, x86_rel(toward_zero));
  EMIT(X86_DEC, reg(X86_EDX));
  x86_label_bind(x->cb, toward_zero);
  EMIT(X86_OR, reg(X86_EDX), x86_imm(1));
  EMIT(X86_MOVD, reg(KX_XMM_SCRATCH0), reg(X86_EDX));
  x86_label_bind(x->cb, exact);
}

static bool emit_convert(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  ElementType from = x->k->ops[op->args[0]].type, to = op->type;
  if (is_float(from) && is_float(to)) {
    /* f16, bf16 and the minifloats are f32 values here, and their results
     * are rounded after the op (kernel_x86_ops.c). */
    if (from == TYPE_F64 && kernel_x86_type_is_narrow(to)) {
      emit_f64_to_f32_round_to_odd(x, op->args[0]);
      define(x, i, KX_XMM_SCRATCH0);
      return true;
    }
    fetch(x, KX_XMM_SCRATCH0, op->args[0]);
    if (kernel_x86_minifloat_nan_has_bits(from)) { /* a NaN's encoding stays behind: the f32 quiet NaN */
      X86Label ordered = x86_label_new(x->cb);
      EMIT(X86_UCOMISS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
      EMIT(X86_JNP, x86_rel(ordered));
      EMIT(X86_MOVD, reg(X86_EAX), reg(KX_XMM_SCRATCH0));
      EMIT(X86_AND, reg(X86_EAX), x86_imm((int32_t)0xffc00000u));
      EMIT(X86_MOVD, reg(KX_XMM_SCRATCH0), reg(X86_EAX));
      x86_label_bind(x->cb, ordered);
    }
    if (from != TYPE_F64 && to == TYPE_F64) EMIT(X86_CVTSS2SD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
    if (from == TYPE_F64 && to != TYPE_F64) EMIT(X86_CVTSD2SS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
    if (from != TYPE_F64 && to == TYPE_F32) { /* through double, as the evaluator: a signalling NaN turns quiet */
      EMIT(X86_CVTSS2SD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
      EMIT(X86_CVTSD2SS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
    }
    define(x, i, KX_XMM_SCRATCH0);
    return true;
  }
  if (is_float(from)) return emit_float_to_int(x, i, from);
  if (is_float(to)) {
    /* The canonical 64-bit value is exact; cvtsi2ss rounds it once. */
    X86Mnemonic cvtsi2 = to == TYPE_F64 ? X86_CVTSI2SD : X86_CVTSI2SS;
    fetch(x, X86_RAX, op->args[0]);
    EMIT(X86_XORPS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
    if (from == TYPE_U64) {
      /* cvtsi2ss is signed: a u64 from 2^63 up is halved, its lost low bit
       * kept as a sticky bit so the one rounding stays right, and doubled */
      X86Label small = x86_label_new(x->cb), done = x86_label_new(x->cb);
      EMIT(X86_TEST, reg(X86_RAX), reg(X86_RAX));
      EMIT(X86_JNS, x86_rel(small));
      EMIT(X86_MOV, reg(X86_RCX), reg(X86_RAX));
      EMIT(X86_AND, reg(X86_ECX), x86_imm(1));
      EMIT(X86_SHR, reg(X86_RAX), x86_imm(1));
      EMIT(X86_OR, reg(X86_RAX), reg(X86_RCX));
      EMIT(cvtsi2, reg(KX_XMM_SCRATCH0), reg(X86_RAX));
      EMIT(to == TYPE_F64 ? X86_ADDSD : X86_ADDSS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
      EMIT(X86_JMP, x86_rel(done));
      x86_label_bind(x->cb, small);
      EMIT(cvtsi2, reg(KX_XMM_SCRATCH0), reg(X86_RAX));
      x86_label_bind(x->cb, done);
    } else {
      EMIT(cvtsi2, reg(KX_XMM_SCRATCH0), reg(X86_RAX));
    }
    define(x, i, KX_XMM_SCRATCH0);
    return true;
  }
  fetch(x, X86_RAX, op->args[0]);
  if (to == TYPE_PRED) { /* x != 0 */
    EMIT(X86_TEST, reg(X86_RAX), reg(X86_RAX));
    EMIT(X86_SETNE, reg(X86_AL));
  }
  canonicalize(x, X86_RAX, to);
  define(x, i, X86_RAX);
  return true;
}

static bool emit_bitcast_convert(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  ElementType from = x->k->ops[op->args[0]].type, to = op->type;
  if (type_bit_width(from) != type_bit_width(to)) return refuse(x, i, "a bitcast between widths");
  if (kernel_x86_type_is_narrow(from) || kernel_x86_type_is_narrow(to)) {
    /* through the narrow type's own bits (exact for a value of the type) */
    if (kernel_x86_type_is_narrow(from)) {
      fetch(x, KX_XMM_SCRATCH0, op->args[0]);
      kernel_x86_emit_narrow_encode(x, from, false);
    } else {
      fetch(x, X86_RDX, op->args[0]);
    }
    if (kernel_x86_type_is_narrow(to)) {
      EMIT(X86_MOVZX, reg(X86_EAX), reg(type_bit_width(to) == 16 ? X86_DX : X86_DL));
      if (type_bit_width(to) < 8) EMIT(X86_AND, reg(X86_EAX), x86_imm((1 << type_bit_width(to)) - 1));
      kernel_x86_emit_narrow_decode(x, to);
      define(x, i, KX_XMM_SCRATCH0);
    } else {
      canonicalize(x, X86_RDX, to);
      define(x, i, X86_RDX);
    }
    return true;
  }
  bool wide = type_bit_width(to) == 64;
  fetch(x, is_float(from) ? KX_XMM_SCRATCH0 : X86_RAX, op->args[0]);
  if (is_float(from) && is_float(to)) {
    define(x, i, KX_XMM_SCRATCH0);
  } else if (is_float(from)) {
    EMIT(wide ? X86_MOVQ : X86_MOVD, reg(wide ? X86_RAX : X86_EAX), reg(KX_XMM_SCRATCH0));
    canonicalize(x, X86_RAX, to);
    define(x, i, X86_RAX);
  } else if (is_float(to)) {
    EMIT(wide ? X86_MOVQ : X86_MOVD, reg(KX_XMM_SCRATCH0), reg(wide ? X86_RAX : X86_EAX));
    define(x, i, KX_XMM_SCRATCH0);
  } else {
    canonicalize(x, X86_RAX, to);
    define(x, i, X86_RAX);
  }
  return true;
}

/* ---- stochastic-convert ---- */

/* As the evaluator's stochastic_round: NaN gives 0, values at or past the
 * signed result's limits saturate; otherwise |x| = t + f with t its integer
 * part, and the result is t + 1 (with x's sign) exactly when the random
 * bits r < f * 2^w, w their width. All in f64, where f32 and the 16-bit
 * floats are exact, and so are f and f * 2^w. */
static bool emit_stochastic_convert(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  ElementType from = x->k->ops[op->args[0]].type;
  int random_bits = type_bit_width(x->k->ops[op->args[1]].type), bits = type_bit_width(op->type);
  if (type_kind(op->type) != TYPE_KIND_SINT) return refuse(x, i, "a result that is not a signed integer");
  int64_t max = (int64_t)(~0ull >> (65 - bits)), min = -max - 1;
  X86Label done = x86_label_new(x->cb), high = x86_label_new(x->cb), low = x86_label_new(x->cb),
           no_carry = x86_label_new(x->cb), positive = x86_label_new(x->cb);
  fetch(x, KX_XMM_SCRATCH0, op->args[0]);
  if (from != TYPE_F64) EMIT(X86_CVTSS2SD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
  EMIT(X86_XOR, reg(X86_EAX), reg(X86_EAX));
  EMIT(X86_UCOMISD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
  EMIT(X86_JP, x86_rel(done));
  load_f64_constant(x, KX_XMM_SCRATCH1, (double)max);
  EMIT(X86_UCOMISD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_JAE, x86_rel(high));
  load_f64_constant(x, KX_XMM_SCRATCH1, (double)min);
  EMIT(X86_UCOMISD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_JBE, x86_rel(low));
  /* r11 keeps x's bits for its sign; scratch0 = |x|, scratch1 = floor(|x|) */
  EMIT(X86_MOVQ, reg(KX_SCRATCH_ADDRESS), reg(KX_XMM_SCRATCH0));
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(INT64_MAX));
  EMIT(X86_MOVQ, reg(KX_XMM_SCRATCH1), reg(X86_RCX));
  EMIT(X86_ANDPD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  EMIT(X86_ROUNDSD, reg(KX_XMM_SCRATCH1), reg(KX_XMM_SCRATCH0), x86_imm(9));
  EMIT(X86_CVTTSD2SI, reg(X86_RAX), reg(KX_XMM_SCRATCH1));
  EMIT(X86_SUBSD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  load_f64_constant(x, KX_XMM_SCRATCH1, ldexp(1.0, random_bits));
  EMIT(X86_MULSD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
  if (random_bits == 64) {
    /* f * 2^64 may reach 2^63, past cvttsd2si's signed range: convert
     * what is above 2^63 and set the top bit */
    X86Label small = x86_label_new(x->cb), converted = x86_label_new(x->cb);
    load_f64_constant(x, KX_XMM_SCRATCH1, ldexp(1.0, 63));
    EMIT(X86_UCOMISD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
    EMIT(X86_JB, x86_rel(small));
    EMIT(X86_SUBSD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH1));
    EMIT(X86_CVTTSD2SI, reg(X86_RCX), reg(KX_XMM_SCRATCH0));
    EMIT(X86_MOV, reg(X86_RDX), x86_imm(INT64_MIN));
    EMIT(X86_XOR, reg(X86_RCX), reg(X86_RDX));
    EMIT(X86_JMP, x86_rel(converted));
    x86_label_bind(x->cb, small);
    EMIT(X86_CVTTSD2SI, reg(X86_RCX), reg(KX_XMM_SCRATCH0));
    x86_label_bind(x->cb, converted);
  } else {
    EMIT(X86_CVTTSD2SI, reg(X86_RCX), reg(KX_XMM_SCRATCH0));
  }
  /* f = 0 gives a threshold of 0, which no random value is below */
  fetch(x, X86_RDX, op->args[1]);
  EMIT(X86_CMP, reg(X86_RDX), reg(X86_RCX));
  EMIT(X86_JAE, x86_rel(no_carry));
  EMIT(X86_INC, reg(X86_RAX));
  x86_label_bind(x->cb, no_carry);
  EMIT(X86_TEST, reg(KX_SCRATCH_ADDRESS), reg(KX_SCRATCH_ADDRESS));
  EMIT(X86_JNS, x86_rel(positive));
  EMIT(X86_NEG, reg(X86_RAX));
  x86_label_bind(x->cb, positive);
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, high);
  EMIT(X86_MOV, reg(X86_RAX), x86_imm(max));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(x->cb, low);
  EMIT(X86_MOV, reg(X86_RAX), x86_imm(min));
  x86_label_bind(x->cb, done);
  canonicalize(x, X86_RAX, op->type);
  define(x, i, X86_RAX);
  return true;
}

/* ---- reduce-precision ---- */

/* XLA's algorithm, on the bits (as the evaluator's reduce_precision_bits):
 * round the mantissa to nearest even by adding a bias and masking (a carry
 * bumps the exponent); where the exponent is narrower, values above the
 * new largest exponent become infinity and those at or below the new
 * smallest become zero, keeping the sign (so the narrow format's denormals
 * flush); a NaN stays the same NaN, or becomes +inf when no mantissa bit
 * is kept. rax holds the bits, rdx the original, rcx and r11 constants.
 * f16 and bf16 values are f32 here, reduced as f32 and rounded back after
 * (kernel_x86_narrow.c), as the evaluator computes them. */
static void emit_reduce_precision(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool wide = op->type == TYPE_F64;
  int src_mantissa = wide ? 52 : 23, src_exponent = wide ? 11 : 8;
  int exponent_bits = (int)op->origin->attrs.exponent_bits, mantissa_bits = (int)op->origin->attrs.mantissa_bits;
  if (exponent_bits > 11) exponent_bits = 11;
  if (mantissa_bits > 52) mantissa_bits = 52;
  uint64_t sign_mask = 1ull << (wide ? 63 : 31);
  uint64_t exp_mask = ((1ull << src_exponent) - 1) << src_mantissa;
  X86Operand r11 = reg(KX_SCRATCH_ADDRESS);
  X86Label exponent_done = x86_label_new(x->cb), to_zero = x86_label_new(x->cb), not_nan = x86_label_new(x->cb);
  fetch(x, KX_XMM_SCRATCH0, op->args[0]);
  if (!wide) { /* the evaluator reads an f32 through double, which quietens a signalling NaN */
    EMIT(X86_CVTSS2SD, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
    EMIT(X86_CVTSD2SS, reg(KX_XMM_SCRATCH0), reg(KX_XMM_SCRATCH0));
  }
  if (wide) EMIT(X86_MOVQ, reg(X86_RAX), reg(KX_XMM_SCRATCH0));
  else EMIT(X86_MOVD, reg(X86_EAX), reg(KX_XMM_SCRATCH0));
  EMIT(X86_MOV, reg(X86_RDX), reg(X86_RAX));
  if (mantissa_bits < src_mantissa) {
    int dropped = src_mantissa - mantissa_bits;
    EMIT(X86_MOV, reg(X86_RCX), reg(X86_RAX));
    EMIT(X86_SHR, reg(X86_RCX), x86_imm(dropped));
    EMIT(X86_AND, reg(X86_ECX), x86_imm(1));
    EMIT(X86_MOV, r11, x86_imm((int64_t)((1ull << (dropped - 1)) - 1)));
    EMIT(X86_ADD, reg(X86_RAX), reg(X86_RCX));
    EMIT(X86_ADD, reg(X86_RAX), r11);
    EMIT(X86_MOV, r11, x86_imm((int64_t)~((1ull << dropped) - 1)));
    EMIT(X86_AND, reg(X86_RAX), r11);
    if (!wide) EMIT(X86_MOV, reg(X86_EAX), reg(X86_EAX));
  }
  if (exponent_bits < src_exponent) {
    uint64_t bias = (1ull << (src_exponent - 1)) - 1, reduced_bias = (1ull << (exponent_bits - 1)) - 1;
    EMIT(X86_MOV, reg(X86_RCX), x86_imm((int64_t)exp_mask));
    EMIT(X86_AND, reg(X86_RCX), reg(X86_RAX));
    EMIT(X86_MOV, r11, x86_imm((int64_t)((bias - reduced_bias) << src_mantissa)));
    EMIT(X86_CMP, reg(X86_RCX), r11);
    EMIT(X86_JBE, x86_rel(to_zero));
    EMIT(X86_MOV, r11, x86_imm((int64_t)((bias + reduced_bias) << src_mantissa)));
    EMIT(X86_CMP, reg(X86_RCX), r11);
    EMIT(X86_JBE, x86_rel(exponent_done));
    EMIT(X86_MOV, r11, x86_imm((int64_t)sign_mask)); /* past the largest: the signed infinity */
    EMIT(X86_AND, reg(X86_RAX), r11);
    EMIT(X86_MOV, r11, x86_imm((int64_t)exp_mask));
    EMIT(X86_OR, reg(X86_RAX), r11);
    EMIT(X86_JMP, x86_rel(exponent_done));
    x86_label_bind(x->cb, to_zero); /* at or below the smallest: the signed zero */
    EMIT(X86_MOV, r11, x86_imm((int64_t)sign_mask));
    EMIT(X86_AND, reg(X86_RAX), r11);
    x86_label_bind(x->cb, exponent_done);
  }
  EMIT(X86_MOV, reg(X86_RCX), reg(X86_RDX));
  EMIT(X86_MOV, r11, x86_imm((int64_t)~sign_mask));
  EMIT(X86_AND, reg(X86_RCX), r11);
  EMIT(X86_MOV, r11, x86_imm((int64_t)exp_mask));
  EMIT(X86_CMP, reg(X86_RCX), r11);
  EMIT(X86_JBE, x86_rel(not_nan));
  EMIT(X86_MOV, reg(X86_RAX), mantissa_bits > 0 ? reg(X86_RDX) : r11);
  x86_label_bind(x->cb, not_nan);
  EMIT(wide ? X86_MOVQ : X86_MOVD, reg(KX_XMM_SCRATCH0), reg(wide ? X86_RAX : X86_EAX));
  define(x, i, KX_XMM_SCRATCH0);
}

/* is-finite: neither infinity nor NaN, so the exponent is not all ones:
 * with the sign shifted out, the bits are below the exponent mask's. */
static void emit_is_finite(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  bool wide = x->k->ops[op->args[0]].type == TYPE_F64;
  fetch(x, KX_XMM_SCRATCH0, op->args[0]);
  EMIT(X86_MOVQ, reg(X86_RAX), reg(KX_XMM_SCRATCH0));
  EMIT(X86_SHL, reg(X86_RAX), x86_imm(wide ? 1 : 33)); /* an f32's bits on top */
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(wide ? (int64_t)(0x7ff0000000000000ull << 1) : (int64_t)(0x7f800000ull << 33)));
  EMIT(X86_CMP, reg(X86_RAX), reg(X86_RCX));
  EMIT(X86_SETB, reg(X86_AL));
  EMIT(X86_MOVZX, reg(X86_EAX), reg(X86_AL));
  define(x, i, X86_RAX);
}

bool kernel_x86_emit_hlo_mixed(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  switch (op->op) {
  case OP_COMPARE: return emit_compare(x, i);
  case OP_SELECT: return emit_select(x, i);
  case OP_CONVERT: return emit_convert(x, i);
  case OP_STOCHASTIC_CONVERT: return emit_stochastic_convert(x, i);
  case OP_REDUCE_PRECISION: emit_reduce_precision(x, i); return true;
  case OP_IS_FINITE: emit_is_finite(x, i); return true;
  default: return emit_bitcast_convert(x, i);
  }
}
