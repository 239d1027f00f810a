/* c64 values in the inline scalar computations (ptx_scalar_call.c): a sort
 * comparator that reads complex operands, a scatter's complex combiner.
 *
 * A c64 value is one .b64 register holding its memory image: the real
 * part's f32 bits low, the imaginary part's high (mov.b64 {re, im} packs
 * and unpacks it), so it loads, stores and moves as any 8-byte element.
 * The operations are the evaluator's (eval_complex.c), which computes c64
 * in float complex: add, subtract and negate part by part, each part
 * rounded once to f32 (.rn, as the evaluator's float arithmetic);
 * real, imag, complex, compare EQ/NE (both parts equal), select, copy
 * and constants. Others (multiply, divide: the evaluator's C complex
 * arithmetic has its own inf/NaN rules) and c128 are refused. */
#include <complex.h>
#include <string.h>

#include "emit_ptx/ptx_sort.h"

static void unpack(PtxBuilder *b, PtxReg v, PtxReg *re, PtxReg *im) {
  *re = ptx_reg_new(b, PTX_F32);
  *im = ptx_reg_new(b, PTX_F32);
  ptx_inst(b, "mov.b64 {$r, $r}, $r", *re, *im, v);
}

static PtxReg pack(PtxBuilder *b, PtxReg re, PtxReg im) {
  PtxReg v = ptx_reg_new(b, PTX_B64);
  ptx_inst(b, "mov.b64 $r, {$r, $r}", v, re, im);
  return v;
}

static uint32_t f32_bits(double d) {
  float f = (float)d;
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

static PtxReg complex_constant(PtxBuilder *b, const Literal *lit) {
  double complex v = literal_get_complex(lit, 0);
  uint64_t bits = (uint64_t)f32_bits(cimag(v)) << 32 | f32_bits(creal(v));
  PtxReg r = ptx_reg_new(b, PTX_B64);
  char text[24];
  snprintf(text, sizeof text, "0x%016llX", (unsigned long long)bits);
  ptx_inst(b, "mov.b64 $r, $s", r, text);
  return r;
}

/* add, subtract (two operands) or negate (one), part by part. */
static PtxReg partwise(PtxBuilder *b, Opcode op, const PtxReg *args) {
  PtxReg ar, ai, br = {0}, bi = {0};
  unpack(b, args[0], &ar, &ai);
  if (op != OP_NEGATE) unpack(b, args[1], &br, &bi);
  PtxReg re = ptx_reg_new(b, PTX_F32), im = ptx_reg_new(b, PTX_F32);
  if (op == OP_NEGATE) {
    ptx_inst(b, "neg.f32 $r, $r", re, ar);
    ptx_inst(b, "neg.f32 $r, $r", im, ai);
  } else {
    const char *name = op == OP_ADD ? "add" : "sub";
    ptx_inst(b, "$s.rn.f32 $r, $r, $r", name, re, ar, br);
    ptx_inst(b, "$s.rn.f32 $r, $r, $r", name, im, ai, bi);
  }
  return pack(b, re, im);
}

/* EQ: both parts equal (a NaN part makes it false); NE: its negation. */
static PtxReg complex_compare(PtxBuilder *b, CompareDirection dir, const PtxReg *args) {
  PtxReg ar, ai, br, bi;
  unpack(b, args[0], &ar, &ai);
  unpack(b, args[1], &br, &bi);
  PtxReg p = ptx_reg_new(b, PTX_PRED), q = ptx_reg_new(b, PTX_PRED), d = ptx_reg_new(b, PTX_PRED);
  const char *part = dir == CMP_EQ ? "eq" : "neu";
  ptx_inst(b, "setp.$s.f32 $r, $r, $r", part, p, ar, br);
  ptx_inst(b, "setp.$s.f32 $r, $r, $r", part, q, ai, bi);
  ptx_inst(b, dir == CMP_EQ ? "and.pred $r, $r, $r" : "or.pred $r, $r, $r", d, p, q);
  return d;
}

bool ptx_scalar_complex_emit(PtxBuilder *b, const Instruction *inst, const PtxReg *args, PtxReg *out, Status *st) {
  ElementType t = inst->shape.type, first = inst->operand_count ? inst->operands[0]->shape.type : t;
  PtxReg re, im;
  if (t == TYPE_C128 || first == TYPE_C128 ||
      (inst->opcode == OP_SELECT && inst->operand_count == 3 && inst->operands[1]->shape.type == TYPE_C128))
    return status_error(st, STATUS_UNSUPPORTED, "%s (%s) computes on c128, which the GPU's inline scalar computations do not yet",
                        inst->name, opcode_name(inst->opcode));
  switch (inst->opcode) {
  case OP_CONSTANT:
    if (!inst->attrs.literal) break;
    *out = complex_constant(b, inst->attrs.literal);
    return true;
  case OP_REAL:
  case OP_IMAG:
    unpack(b, args[0], &re, &im);
    *out = inst->opcode == OP_REAL ? re : im;
    return true;
  case OP_COMPLEX:
    if (first != TYPE_F32) break;
    *out = pack(b, args[0], args[1]);
    return true;
  case OP_ADD:
  case OP_SUBTRACT:
  case OP_NEGATE:
    *out = partwise(b, inst->opcode, args);
    return true;
  case OP_COMPARE:
    if (inst->attrs.direction != CMP_EQ && inst->attrs.direction != CMP_NE) break;
    *out = complex_compare(b, inst->attrs.direction, args);
    return true;
  case OP_SELECT:
    *out = ptx_reg_new(b, PTX_B64);
    ptx_inst(b, "selp.b64 $r, $r, $r, $r", *out, args[1], args[2], args[0]);
    return true;
  case OP_COPY:
    *out = ptx_reg_new(b, PTX_B64);
    ptx_inst(b, "mov.b64 $r, $r", *out, args[0]);
    return true;
  default:
    break;
  }
  return status_error(st, STATUS_UNSUPPORTED, "%s (%s) on c64 in a scalar computation on the GPU (a comparator or combiner)",
                      inst->name, opcode_name(inst->opcode));
}
