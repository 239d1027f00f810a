/* A scalar computation written inline as PTX: a sort's comparator, which
 * the merge kernel (ptx_sort.c) calls at every step of its binary search.
 *
 * The computation's instructions are emitted in their order (operands
 * before users), one register each. Arithmetic goes through ptx_ops.c's
 * table, so an op means here what it means in every other kernel; what
 * this file adds is what the table leaves out: comparisons of floats in
 * total order (JAX sorts with compare type=TOTALORDER), compare and select
 * on pred, constants and bitcasts. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_sort.h"

bool ptx_scalar_type_ok(ElementType t) {
  switch (t) {
  case TYPE_PRED:
  case TYPE_S32:
  case TYPE_U32:
  case TYPE_S64:
  case TYPE_U64:
  case TYPE_F32:
  case TYPE_F64:
  case TYPE_C64:   /* one .b64 register (ptx_scalar_complex.c) */
    return true;
  default:
    return false;
  }
}

static PtxReg value_new(PtxBuilder *b, ElementType t) {
  PtxType pt = PTX_PRED;
  bool known = ptx_type_of_element(t, &pt);
  (void)known;
  return ptx_reg_new(b, pt);
}

/* A float's bits made a signed integer that orders as the total order
 * does: negative floats (sign bit set) have their other bits flipped, so
 * that a more negative float is a smaller integer. */
static PtxReg total_order_key(PtxBuilder *b, bool wide, PtxReg f) {
  PtxReg bits = ptx_reg_new(b, wide ? PTX_S64 : PTX_S32), sign = ptx_reg_new(b, wide ? PTX_S64 : PTX_S32);
  PtxReg key = ptx_reg_new(b, wide ? PTX_S64 : PTX_S32);
  if (wide) {
    ptx_inst(b, "mov.b64 $r, $r", bits, f);
    ptx_inst(b, "shr.s64 $r, $r, 63", sign, bits);
    ptx_inst(b, "and.b64 $r, $r, 0x7FFFFFFFFFFFFFFF", sign, sign);
    ptx_inst(b, "xor.b64 $r, $r, $r", key, bits, sign);
  } else {
    ptx_inst(b, "mov.b32 $r, $r", bits, f);
    ptx_inst(b, "shr.s32 $r, $r, 31", sign, bits);
    ptx_inst(b, "and.b32 $r, $r, 0x7FFFFFFF", sign, sign);
    ptx_inst(b, "xor.b32 $r, $r, $r", key, bits, sign);
  }
  return key;
}

static const char *const signed_compare[] = {[CMP_EQ] = "eq", [CMP_NE] = "ne", [CMP_LT] = "lt",
                                             [CMP_LE] = "le", [CMP_GT] = "gt", [CMP_GE] = "ge"};
static const char *const unsigned_compare[] = {[CMP_EQ] = "eq", [CMP_NE] = "ne", [CMP_LT] = "lo",
                                               [CMP_LE] = "ls", [CMP_GT] = "hi", [CMP_GE] = "hs"};
/* HLO's float compare: NE is true with a NaN (unordered), the rest false. */
static const char *const float_compare[] = {[CMP_EQ] = "eq", [CMP_NE] = "neu", [CMP_LT] = "lt",
                                            [CMP_LE] = "le", [CMP_GT] = "gt", [CMP_GE] = "ge"};

PtxReg ptx_compare_emit(PtxBuilder *b, ElementType t, CompareDirection dir, bool total_order, PtxReg a, PtxReg x) {
  PtxReg p = ptx_reg_new(b, PTX_PRED);
  bool wide = type_byte_size(t) == 8;
  if (t == TYPE_PRED) {
    /* setp takes no .pred operands: compare them as 0/1 (false < true). */
    PtxReg ua = ptx_reg_new(b, PTX_U32), ux = ptx_reg_new(b, PTX_U32);
    ptx_inst(b, "selp.u32 $r, 1, 0, $r", ua, a);
    ptx_inst(b, "selp.u32 $r, 1, 0, $r", ux, x);
    ptx_inst(b, "setp.$s.u32 $r, $r, $r", unsigned_compare[dir], p, ua, ux);
  } else if (type_is_float(t) && total_order) {
    PtxReg ka = total_order_key(b, wide, a), kx = total_order_key(b, wide, x);
    ptx_inst(b, wide ? "setp.$s.s64 $r, $r, $r" : "setp.$s.s32 $r, $r, $r", signed_compare[dir], p, ka, kx);
  } else if (type_is_float(t)) {
    ptx_inst(b, wide ? "setp.$s.f64 $r, $r, $r" : "setp.$s.f32 $r, $r, $r", float_compare[dir], p, a, x);
  } else if (type_kind(t) == TYPE_KIND_UINT) {
    ptx_inst(b, wide ? "setp.$s.u64 $r, $r, $r" : "setp.$s.u32 $r, $r, $r", unsigned_compare[dir], p, a, x);
  } else {
    ptx_inst(b, wide ? "setp.$s.s64 $r, $r, $r" : "setp.$s.s32 $r, $r, $r", signed_compare[dir], p, a, x);
  }
  return p;
}

static PtxReg constant_emit(PtxBuilder *b, const Literal *lit) {
  ElementType t = lit->shape.type;
  PtxReg r = value_new(b, t);
  char text[40];
  if (t == TYPE_F64 || t == TYPE_F32) {
    double d = literal_get_f64(lit, 0);
    uint64_t bits64;
    uint32_t bits32;
    float f = (float)d;
    memcpy(&bits64, &d, sizeof bits64);
    memcpy(&bits32, &f, sizeof bits32);
    if (t == TYPE_F64) snprintf(text, sizeof text, "0d%016llX", (unsigned long long)bits64);
    else snprintf(text, sizeof text, "0f%08X", (unsigned)bits32);
    ptx_inst(b, t == TYPE_F64 ? "mov.f64 $r, $s" : "mov.f32 $r, $s", r, text);
  } else if (t == TYPE_PRED) {
    ptx_inst(b, "setp.ne.u32 $r, $d, 0", r, literal_get_s64(lit, 0) != 0);
  } else {
    bool wide = type_byte_size(t) == 8;
    uint64_t v = literal_get_u64(lit, 0);
    snprintf(text, sizeof text, "0x%llX", wide ? (unsigned long long)v : (unsigned long long)(uint32_t)v);
    ptx_inst(b, wide ? "mov.b64 $r, $s" : "mov.b32 $r, $s", r, text);
  }
  return r;
}

/* select on pred values, which selp does not take. */
static PtxReg pred_select(PtxBuilder *b, PtxReg c, PtxReg x, PtxReg y) {
  PtxReg t = ptx_reg_new(b, PTX_PRED), f = ptx_reg_new(b, PTX_PRED), d = ptx_reg_new(b, PTX_PRED);
  PtxReg not_c = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "and.pred $r, $r, $r", t, c, x);
  ptx_inst(b, "not.pred $r, $r", not_c, c);
  ptx_inst(b, "and.pred $r, $r, $r", f, not_c, y);
  ptx_inst(b, "or.pred $r, $r, $r", d, t, f);
  return d;
}

/* One instruction of the computation; values[] holds its operands'. */
static bool instruction_emit(PtxBuilder *b, const Instruction *inst, const PtxReg *params, PtxReg *values,
                             Status *st) {
  PtxReg args[3];
  ElementType t = inst->shape.type;
  if (inst->opcode == OP_TUPLE) return true;   /* the root of a variadic combiner: read by its operands */
  if (inst->opcode == OP_PARAMETER) {
    values[inst->index] = params[inst->attrs.parameter_number];   /* index < 0: unloaded, an error only if read */
    return true;
  }
  if (inst->operand_count > 3)
    return status_error(st, STATUS_UNSUPPORTED, "%s (%s) in a scalar computation on the GPU (a comparator or combiner)", inst->name,
                        opcode_name(inst->opcode));
  for (int i = 0; i < inst->operand_count; i++) {
    args[i] = values[inst->operands[i]->index];
    if (args[i].index < 0)
      return status_error(st, STATUS_UNSUPPORTED, "parameter %s of a scalar computation is of a type the GPU kernel cannot load", inst->operands[i]->name);
  }
  ElementType first = inst->operand_count ? inst->operands[0]->shape.type : t;
  PtxReg *out = &values[inst->index];
  if (type_is_complex(t) || type_is_complex(first)) return ptx_scalar_complex_emit(b, inst, args, out, st);
  if (!ptx_scalar_type_ok(t) || (inst->operand_count && !ptx_scalar_type_ok(first)) || shape_is_tuple(&inst->shape))
    return status_error(st, STATUS_UNSUPPORTED, "%s (%s) computes on %s, which the GPU's inline scalar computations do not yet",
                        inst->name, opcode_name(inst->opcode), type_name(shape_is_tuple(&inst->shape) ? first : t));
  switch (inst->opcode) {
  case OP_CONSTANT:
    if (!inst->attrs.literal) return status_error(st, STATUS_UNSUPPORTED, "constant %s without a value", inst->name);
    *out = constant_emit(b, inst->attrs.literal);
    return true;
  case OP_COMPARE:
    *out = ptx_compare_emit(b, first, inst->attrs.direction, inst->attrs.compare_type == CMP_TYPE_TOTALORDER, args[0],
                            args[1]);
    return true;
  case OP_SELECT:
    if (t == TYPE_PRED) {
      *out = pred_select(b, args[0], args[1], args[2]);
      return true;
    }
    break;
  case OP_BITCAST_CONVERT:
  case OP_COPY:
    if (type_byte_size(t) != type_byte_size(first) || t == TYPE_PRED) break;
    *out = value_new(b, t);
    ptx_inst(b, type_byte_size(t) == 8 ? "mov.b64 $r, $r" : "mov.b32 $r, $r", *out, args[0]);
    return true;
  default: break;
  }
  PtxElementwise e = {.op = inst->opcode, .type = inst->opcode == OP_SELECT ? t : first, .result_type = t,
                      .direction = inst->attrs.direction};
  *out = value_new(b, t);
  return ptx_emit_elementwise(b, &e, *out, args, st);
}

bool ptx_scalar_call_emit_results(PtxBuilder *b, const Computation *comp, const PtxReg *params, PtxReg *results,
                                  int count, Status *st) {
  const Instruction *root = comp->root;
  bool tuple = root->opcode == OP_TUPLE;
  if ((tuple && root->operand_count != count) || (!tuple && count != 1))
    return status_error(st, STATUS_UNSUPPORTED, "a computation with %d results where %d are needed",
                        tuple ? root->operand_count : 1, count);
  PtxReg *values = mem_calloc((size_t)comp->instruction_count + 1, sizeof *values);
  bool ok = true;
  for (int i = 0; ok && i < comp->instruction_count; i++) ok = instruction_emit(b, comp->instructions[i], params, values, st);
  for (int i = 0; ok && i < count; i++) results[i] = values[tuple ? root->operands[i]->index : root->index];
  mem_free(values);
  return ok;
}

bool ptx_scalar_call_emit(PtxBuilder *b, const Computation *comp, const PtxReg *params, PtxReg *result, Status *st) {
  return ptx_scalar_call_emit_results(b, comp, params, result, 1, st);
}
