/* A kernel block's ops as PTX (ptx_emit_block_phase): loads and stores
 * through each buffer's layout, constants, and every scalar op (the narrow
 * integer and the float-format ones handed to ptx_int.c and
 * ptx_float_ops.c); and an accumulator's combine. The skeletons
 * (ptx_kernel.c's loops and reductions, ptx_row.c, ptx_tile.c) decide how
 * often and where a block is emitted. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_kernel_internal.h"

/* f64 to f32 rounded to odd (toward zero, the lowest bit set when
 * inexact), so that rounding it on to f16 or bf16 is the one rounding of
 * the f64 (double_to_float_round_to_odd in src/ir/types.c says why).
 * cvt.rz is "rounding toward zero" (PTX ISA, cvt, Floating Point Notes);
 * setp.ne is false for NaN, which keeps its cvt result. Past f32's range
 * the ISA's Type Conversion section gives the largest value or infinity:
 * either overflows f16 and bf16 as the f64 does, so only a finite result
 * takes the odd bit. */
static PtxReg f64_to_f32_round_to_odd(Emit *E, PtxReg x) {
  PtxReg f = ptx_reg_new(E->b, PTX_F32), back = ptx_reg_new(E->b, PTX_F64), out = ptx_reg_new(E->b, PTX_F32);
  PtxReg bits = ptx_reg_new(E->b, PTX_U32), inexact = ptx_reg_new(E->b, PTX_PRED), finite = ptx_reg_new(E->b, PTX_PRED);
  ptx_inst(E->b, "cvt.rz.f32.f64 $r, $r", f, x);
  ptx_inst(E->b, "cvt.f64.f32 $r, $r", back, f);
  ptx_inst(E->b, "setp.ne.f64 $r, $r, $r", inexact, back, x);
  ptx_inst(E->b, "testp.finite.f32 $r, $r", finite, f);
  ptx_inst(E->b, "and.pred $r, $r, $r", inexact, inexact, finite);
  ptx_inst(E->b, "mov.b32 $r, $r", bits, f);
  ptx_inst(E->b, "@$r or.b32 $r, $r, 1", inexact, bits, bits);
  ptx_inst(E->b, "mov.b32 $r, $r", out, bits);
  return out;
}

/* ---- memory ---- */

/* The physical element offset of logical indices args[first..] in shape s. */
static PtxReg physical_offset(Emit *E, const Shape *s, const KernelOp *op, int first) {
  if (s->rank == 0) {
    PtxReg zero = ptx_reg_new(E->b, PTX_S64);
    ptx_inst(E->b, "mov.b64 $r, 0", zero);
    return zero;
  }
  PtxReg offset = E->values[op->args[first + s->minor_to_major[s->rank - 1]]];
  for (int j = s->rank - 2; j >= 0; j--) {
    int d = (int)s->minor_to_major[j];
    PtxReg next = ptx_reg_new(E->b, PTX_S64);
    ptx_inst(E->b, "mad.lo.s64 $r, $r, $D, $r", next, offset, s->dims[d], E->values[op->args[first + d]]);
    offset = next;
  }
  return offset;
}

PtxReg ptx_emit_element_load(Emit *E, ElementType t, PtxReg address) {
  PtxReg v;
  if (ptx_emit_is_half(t)) {
    PtxReg h = ptx_reg_new(E->b, PTX_B16);
    ptx_inst(E->b, "ld.global.b16 $r, [$r]", h, address);
    return ptx_emit_half_widen(E, t, h);
  }
  if (ptx_emit_is_narrow_int(t)) return ptx_int_load(E, t, address);
  if (ptx_minifloat_known(t)) return ptx_minifloat_load(E, t, address);
  if (t == TYPE_PRED) {
    PtxReg byte = ptx_reg_new(E->b, PTX_U16);
    v = ptx_reg_new(E->b, PTX_PRED);
    ptx_inst(E->b, "ld.global.u8 $r, [$r]", byte, address);
    ptx_inst(E->b, "setp.ne.u16 $r, $r, 0", v, byte);
    return v;
  }
  PtxType pt = PTX_F32;
  ptx_emit_value_type(t, &pt);
  v = ptx_reg_new(E->b, pt);
  ptx_inst(E->b, "ld.global$s $r, [$r]", ptx_type_suffix(pt), v, address);
  return v;
}

static void element_store(Emit *E, ElementType t, PtxReg address, PtxReg v) {
  if (ptx_emit_is_half(t)) {
    PtxReg h = ptx_reg_new(E->b, PTX_B16);
    ptx_inst(E->b, t == TYPE_F16 ? "cvt.rn.f16.f32 $r, $r" : "cvt.rn.bf16.f32 $r, $r", h, v);
    ptx_inst(E->b, "st.global.b16 [$r], $r", address, h);
  } else if (ptx_emit_is_narrow_int(t)) {
    ptx_int_store(E, t, address, v);
  } else if (ptx_minifloat_known(t)) {
    ptx_minifloat_store(E, t, address, v);
  } else if (t == TYPE_PRED) {
    PtxReg byte = ptx_reg_new(E->b, PTX_U16);
    ptx_inst(E->b, "selp.u16 $r, 1, 0, $r", byte, v);
    ptx_inst(E->b, "st.global.u8 [$r], $r", address, byte);
  } else {
    PtxType pt = PTX_F32;
    ptx_emit_value_type(t, &pt);
    ptx_inst(E->b, "st.global$s [$r], $r", ptx_type_suffix(pt), address, v);
  }
}

PtxReg ptx_emit_buffer_address(Emit *E, PtxReg base, const Shape *s, const KernelOp *op,
                               int first) {
  PtxReg offset = physical_offset(E, s, op, first);
  return ptx_element_address(E->b, base, offset, type_byte_size(s->type));
}

/* ---- scalar ops ---- */

static PtxReg constant_emit(Emit *E, const KernelOp *op) {
  PtxReg r = ptx_emit_value_new(E, op->type);
  char text[40];
  if (op->type == TYPE_F64) {
    uint64_t bits;
    memcpy(&bits, &op->value.f, sizeof bits);
    snprintf(text, sizeof text, "0d%016llX", (unsigned long long)bits);
    ptx_inst(E->b, "mov.f64 $r, $s", r, text);
  } else if (type_is_float(op->type)) {
    /* f16 and bf16 constants are exact in f32 */
    float f = (float)op->value.f;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    snprintf(text, sizeof text, "0f%08X", (unsigned)bits);
    ptx_inst(E->b, "mov.f32 $r, $s", r, text);
  } else if (op->type == TYPE_PRED) {
    ptx_inst(E->b, "setp.ne.u32 $r, $d, 0", r, op->value.i != 0);
  } else {
    bool wide = type_byte_size(op->type) == 8;
    snprintf(text, sizeof text, "0x%llX",
             wide ? (unsigned long long)op->value.i : (unsigned long long)(uint32_t)op->value.i);
    ptx_inst(E->b, wide ? "mov.b64 $r, $s" : "mov.b32 $r, $s", r, text);
  }
  return r;
}

/* HLO's integer remainder: x % 0 is x, INT_MIN % -1 is 0 (PTX leaves both
 * unspecified). */
static PtxReg remainder_emit(Emit *E, ElementType t, PtxReg a, PtxReg b) {
  PtxReg d = ptx_emit_value_new(E, t);
  PtxReg p = ptx_reg_new(E->b, PTX_PRED);
  const char *s = ptx_type_suffix(t == TYPE_S32 ? PTX_S32 : t == TYPE_U32 ? PTX_U32 : t == TYPE_S64 ? PTX_S64 : PTX_U64);
  ptx_inst(E->b, "rem$s $r, $r, $r", s, d, a, b);
  if (t == TYPE_S32 || t == TYPE_S64) {
    ptx_inst(E->b, "setp.eq$s $r, $r, -1", s, p, b);
    ptx_inst(E->b, "@$r mov$s $r, 0", p, s, d);
  }
  ptx_inst(E->b, "setp.eq$s $r, $r, 0", s, p, b);
  ptx_inst(E->b, "@$r mov$s $r, $r", p, ptx_emit_mov_suffix(d.cls), d, a);
  return d;
}

/* select and compare on pred, which PTX's selp and setp do not take. */
static PtxReg pred_select(Emit *E, PtxReg c, PtxReg a, PtxReg b) {
  PtxReg x = ptx_reg_new(E->b, PTX_PRED), y = ptx_reg_new(E->b, PTX_PRED), d = ptx_reg_new(E->b, PTX_PRED);
  ptx_inst(E->b, "and.pred $r, $r, $r", x, c, a);
  ptx_inst(E->b, "and.pred $r, !$r, $r", y, c, b);
  ptx_inst(E->b, "or.pred $r, $r, $r", d, x, y);
  return d;
}

static bool pred_compare(Emit *E, const KernelOp *op, const PtxReg *args, PtxReg *out) {
  PtxReg u[2];
  for (int i = 0; i < 2; i++) {
    u[i] = ptx_reg_new(E->b, PTX_U32);
    ptx_inst(E->b, "selp.u32 $r, 1, 0, $r", u[i], args[i]);
  }
  PtxElementwise e = {.op = OP_COMPARE, .type = TYPE_U32, .direction = op->direction};
  *out = ptx_reg_new(E->b, PTX_PRED);
  return ptx_emit_elementwise(E->b, &e, *out, u, E->st);
}

/* clamp(lo, x, hi) = min(max(x, lo), hi), each through the table (NaN in
 * any operand gives NaN, as HLO's clamp does). */
static bool clamp_emit(Emit *E, const KernelOp *op, const PtxReg *args, PtxReg *out) {
  ElementType t = E->k->ops[op->args[1]].type;
  KernelOp max = *op, min = *op;
  max.op = OP_MAXIMUM, min.op = OP_MINIMUM;
  PtxReg low[2] = {args[1], args[0]}, high[2];
  if (!ptx_emit_table_op(E, &max, t, t, low, &high[0])) return false;
  high[1] = args[2];
  return ptx_emit_table_op(E, &min, t, t, high, out);
}

static bool convert_emit(Emit *E, const KernelOp *op, const PtxReg *args, PtxReg *out) {
  ElementType from = E->k->ops[op->args[0]].type, to = op->type;
  /* to f16/bf16 or a minifloat from an integer: rounded to f32 first,
   * then to the narrow type, as the evaluator (XLA's half constructors,
   * ml_dtypes) does; from f64 it rounds once, from the f64 (a minifloat
   * encodes the f64 itself; f16 and bf16 take it rounded to odd). */
  if (ptx_minifloat_known(to) && from == TYPE_F64) {
    *out = ptx_emit_half_round(E, to, args[0]);
    return true;
  }
  if (ptx_emit_is_half(to) && from == TYPE_F64) {
    *out = ptx_emit_half_round(E, to, f64_to_f32_round_to_odd(E, args[0]));
    return true;
  }
  if (ptx_emit_computes_in_f32(to) && (type_is_integer(from) || from == TYPE_PRED)) {
    KernelOp to_f32 = *op;
    to_f32.type = TYPE_F32;
    PtxReg f;
    if (!ptx_emit_table_op(E, &to_f32, from, TYPE_F32, args, &f)) return false;
    *out = ptx_emit_half_round(E, to, f);
    return true;
  }
  if (from == to) {
    *out = ptx_emit_value_new(E, to);
    ptx_emit_reg_move(E, *out, args[0]);
    return true;
  }
  if (ptx_emit_computes_in_f32(to) && (from == TYPE_F32 || ptx_emit_computes_in_f32(from))) {
    *out = ptx_emit_half_round(E, to, args[0]);
    return true;
  }
  if (ptx_emit_computes_in_f32(from) && to == TYPE_F32) {   /* already widened, exactly */
    *out = ptx_emit_value_new(E, to);
    ptx_emit_reg_move(E, *out, args[0]);
    return true;
  }
  return ptx_emit_table_op(E, op, from, to, args, out);
}

static bool bitcast_emit(Emit *E, const KernelOp *op, const PtxReg *args, PtxReg *out) {
  ElementType from = E->k->ops[op->args[0]].type, to = op->type;
  if (ptx_emit_computes_in_f32(from) || ptx_emit_computes_in_f32(to) || from == TYPE_PRED)
    return status_error(E->st, STATUS_UNSUPPORTED, "kernel %s: bitcast-convert from %s to %s on the GPU", E->k->name,
                        type_name(from), type_name(to));
  *out = ptx_emit_value_new(E, to);
  ptx_inst(E->b, type_byte_size(to) == 8 ? "mov.b64 $r, $r" : "mov.b32 $r, $r", *out, args[0]);
  return true;
}

static bool hlo_emit(Emit *E, const KernelOp *op, PtxReg *out) {
  PtxReg args[KERNEL_MAX_ARGS];
  for (int a = 0; a < op->arg_count; a++) args[a] = E->values[op->args[a]];
  ElementType first = E->k->ops[op->args[0]].type;
  if (ptx_int_handles(E->k, op)) return ptx_int_emit(E, op, args, out);   /* ptx_int.c */
  if (ptx_float_ops_handles(E->k, op)) return ptx_float_ops_emit(E, op, args, out);   /* ptx_float_ops.c */
  switch (op->op) {
  case OP_CONVERT: return convert_emit(E, op, args, out);
  case OP_BITCAST_CONVERT: return bitcast_emit(E, op, args, out);
  case OP_CLAMP: return clamp_emit(E, op, args, out);
  case OP_SELECT:
    if (op->type == TYPE_PRED) return *out = pred_select(E, args[0], args[1], args[2]), true;
    return ptx_emit_table_op(E, op, op->type, op->type, args, out);
  case OP_COMPARE:
    if (first == TYPE_PRED) return pred_compare(E, op, args, out);
    return ptx_emit_table_op(E, op, first, TYPE_PRED, args, out);
  case OP_REMAINDER:
    if (type_is_integer(first)) return *out = remainder_emit(E, first, args[0], args[1]), true;
    break;
  default: break;
  }
  return ptx_emit_table_op(E, op, first, op->type, args, out);
}

static bool op_emit(Emit *E, int i) {
  const KernelOp *op = &E->k->ops[i];
  PtxReg v = {0, 0};
  switch (op->kop) {
  case KOP_INDEX: v = E->index[op->dim]; break;
  case KOP_RINDEX: v = E->rindex[op->dim]; break;
  case KOP_CONSTANT: v = constant_emit(E, op); break;
  case KOP_LOAD:
    if (E->lanes) {
      v = E->lanes[i][E->lane];
    } else {
      const Shape *s = &E->k->inputs[op->buffer].shape;
      v = ptx_emit_element_load(E, s->type,
                                ptx_emit_buffer_address(E, E->inputs[op->buffer], s, op, 0));
    }
    break;
  case KOP_STORE:
    if (E->lanes) {
      E->lanes[i][E->lane] = E->values[op->args[0]];
    } else {
      const Shape *s = &E->k->outputs[op->buffer].shape;
      element_store(E, s->type, ptx_emit_buffer_address(E, E->outputs[op->buffer], s, op, 1),
                    E->values[op->args[0]]);
    }
    return true;
  case KOP_HLO:
    if (!hlo_emit(E, op, &v)) return false;
    break;
  case KOP_ACC_READ:
    v = ptx_emit_value_new(E, op->type);
    ptx_emit_reg_move(E, v, E->acc[op->acc]);
    break;
  case KOP_ACC_WRITE:
    if (op->block == KBLOCK_REDUCE) E->pending[op->acc] = op->args[0];
    else ptx_emit_reg_move(E, E->acc[op->acc], E->values[op->args[0]]);
    return true;
  }
  E->values[i] = v;
  return true;
}

/* Every op of a block (of one phase, or any when phase < 0), in order;
 * REDUCE's accumulator writes take effect together at its end (a variadic
 * reducer reads all the old values). */
bool ptx_emit_block_phase(Emit *E, KernelBlock block, int phase) {
  for (int a = 0; a < E->k->acc_count; a++) E->pending[a] = -1;
  for (int i = 0; i < E->k->op_count; i++) {
    const KernelOp *op = &E->k->ops[i];
    if (op->block == block && (phase < 0 || op->phase == phase) && !op_emit(E, i)) return false;
  }
  for (int a = 0; a < E->k->acc_count; a++)
    if (E->pending[a] >= 0) ptx_emit_reg_move(E, E->acc[a], E->values[E->pending[a]]);
  return true;
}

/* acc[a] = combiner(acc[a], other), rounded for f16/bf16. */
bool ptx_emit_accumulator_combine(Emit *E, const RowPlan *plan, int a, PtxReg other) {
  ElementType t = E->k->acc_types[a];
  PtxElementwise e = {.op = plan->combiner[a],
                      .type = ptx_emit_computes_in_f32(t) ? TYPE_F32 : ptx_int_wide_type(t)};
  PtxReg operands[2] = {E->acc[a], other};
  PtxReg r = ptx_emit_value_new(E, t);
  if (!ptx_emit_elementwise(E->b, &e, r, operands, E->st)) return false;
  if (ptx_emit_computes_in_f32(t)) r = ptx_emit_half_round(E, t, r);
  if (ptx_emit_is_narrow_int(t)) r = ptx_int_narrow(E, t, r);
  ptx_emit_reg_move(E, E->acc[a], r);
  return true;
}

bool ptx_emit_reduce_loop(Emit *E, PtxReg first, int step) {
  const Kernel *k = E->k;
  int64_t order[AXLE_MAX_RANK];
  ptx_emit_reduce_order(k, order);
  PtxReg step_reg = ptx_reg_new(E->b, PTX_U64);
  ptx_inst(E->b, "mov.u64 $r, $d", step_reg, step);
  GridLoop g = ptx_emit_grid_loop_open(E, first, ptx_emit_dims_product(k->reduce_rank, k->reduce_dims));
  ptx_emit_indices_recover(E, g.i, k->reduce_rank, k->reduce_dims, order, E->rindex);
  if (!ptx_emit_block_phase(E, KBLOCK_REDUCE, -1)) return false;
  ptx_emit_grid_loop_close(E, &g, step_reg);
  return true;
}
