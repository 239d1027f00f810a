/* The x86 target of the math programs (src/ir/kernel/math_program.h):
 * each primitive is one call of the math builder, which emits its few
 * instructions on scalar slots or, in vector mode, on every lane. A value
 * is the builder's slot; a mask is its i32 0/1 (scalar) or all-ones lanes
 * (vector), both "nonzero" to a select; reinterpreting bits is the same
 * slot, so BITS and FROM_BITS emit nothing.
 *
 * A table row (MathRows) is a copy of the table in the code, jumped over,
 * read rip-relative (scalar code only).
 *
 * The functions below (math_exp_f32, ...) are the builder's names for the
 * algorithms of math_algorithms.c, which kernel_x86_math.c calls. */
#include <assert.h>

#include "emit_x86/kernel_x86_math_builder.h"
#include "kernel/math_program.h"


static MathValue float_op(MathBuilder *b, MathOp op, bool f64, MathValue a, MathValue c, MathValue d) {
  switch (op) {
  case MATH_ADD: return f64 ? math_add_f64(b, a, c) : math_add_f32(b, a, c);
  case MATH_SUB: return f64 ? math_sub_f64(b, a, c) : math_sub_f32(b, a, c);
  case MATH_MUL: return f64 ? math_mul_f64(b, a, c) : math_mul_f32(b, a, c);
  case MATH_DIV: return f64 ? math_div_f64(b, a, c) : math_div_f32(b, a, c);
  case MATH_FMA: return f64 ? math_fma_f64(b, a, c, d) : math_fma_f32(b, a, c, d);
  case MATH_MIN: return f64 ? math_min_f64(b, a, c) : math_min_f32(b, a, c);
  case MATH_MAX: return f64 ? math_max_f64(b, a, c) : math_max_f32(b, a, c);
  case MATH_SQRT: return f64 ? math_sqrt_f64(b, a) : math_sqrt_f32(b, a);
  case MATH_ABS: return f64 ? math_abs_f64(b, a) : math_abs_f32(b, a);
  case MATH_NEGATE: return f64 ? math_negate_f64(b, a) : math_negate_f32(b, a);
  case MATH_COPYSIGN: return f64 ? math_copysign_f64(b, a, c) : math_copysign_f32(b, a, c);
  case MATH_LESS: return f64 ? math_less_f64(b, a, c) : math_less_f32(b, a, c);
  case MATH_EQUAL: return f64 ? math_equal_f64(b, a, c) : math_equal_f32(b, a, c);
  case MATH_IS_NAN: return f64 ? math_is_nan_f64(b, a) : math_is_nan_f32(b, a);
  case MATH_TO_INT: return f64 ? math_i64_from_f64(b, a) : math_i32_from_f32(b, a);
  case MATH_WIDEN: return math_f64_from_f32(b, a);
  case MATH_NARROW: return math_f32_from_f64(b, a);
  case MATH_BITS: return a;
  default: assert(!"not a float operation"); return a;
  }
}

static MathValue i32_op(MathBuilder *b, MathOp op, MathValue a, MathValue c) {
  switch (op) {
  case MATH_ADD: return math_add_i32(b, a, c);
  case MATH_SUB: return math_sub_i32(b, a, c);
  case MATH_MUL: return math_mul_i32(b, a, c);
  case MATH_AND: return math_and_i32(b, a, c);
  case MATH_OR: return math_or_i32(b, a, c);
  case MATH_XOR: return math_xor_i32(b, a, c);
  case MATH_EXTEND: return math_u64_from_u32(b, a);
  case MATH_SHIFT_LEFT: return math_shift_left_i32(b, a, c);
  case MATH_SHIFT_RIGHT: return math_shift_right_i32(b, a, c);
  case MATH_SHIFT_RIGHT_LOGICAL: return math_shift_right_u32(b, a, c);
  case MATH_LESS: return math_less_i32(b, a, c);
  case MATH_EQUAL: return math_equal_i32(b, a, c);
  case MATH_TO_FLOAT: return math_f32_from_i32(b, a);
  case MATH_FROM_BITS: return a;
  default: assert(!"not an i32 operation"); return a;
  }
}

/* a shifted by the value count (u64, scalar code only): shl/shr by cl. */
static MathValue shift_by(MathBuilder *b, X86Mnemonic m, MathValue a, MathValue count) {
  if (b->width) return math_lanes_unsupported(b, "a u64 shift by a value");
  MathValue v = math_value_new(b);
  X86Buffer *cb = b->x->cb;
  x86_emit(cb, X86_MOV, x86_reg(X86_RAX), math_slot_operand(b, a, 8));
  x86_emit(cb, X86_MOV, x86_reg(X86_ECX), math_slot_operand(b, count, 4));
  x86_emit(cb, m, x86_reg(X86_RAX), x86_reg(X86_CL));
  x86_emit(cb, X86_MOV, math_slot_operand(b, v, 8), x86_reg(X86_RAX));
  return v;
}

static MathValue i64_op(MathBuilder *b, MathOp op, MathValue a, MathValue c) {
  switch (op) {
  case MATH_ADD: return math_add_u64(b, a, c);
  case MATH_SUB: return math_sub_u64(b, a, c);
  case MATH_MUL: return math_mul_u64(b, a, c);
  case MATH_AND: return math_and_u64(b, a, c);
  case MATH_OR: return math_or_u64(b, a, c);
  case MATH_LESS_UNSIGNED: return math_less_u64(b, a, c);
  case MATH_MULTIPLY_HIGH: {
    MathValue low;
    return math_multiply_high_u64(b, a, c, &low);
  }
  case MATH_SHIFT_LEFT_BY: return shift_by(b, X86_SHL, a, c);
  case MATH_SHIFT_RIGHT_LOGICAL_BY: return shift_by(b, X86_SHR, a, c);
  case MATH_TRUNCATE: return a; /* an i32 is its slot's low half */
  case MATH_SHIFT_LEFT: return math_shift_left_u64(b, a, c);
  case MATH_SHIFT_RIGHT: return math_shift_right_i64(b, a, c);
  case MATH_SHIFT_RIGHT_LOGICAL: return math_shift_right_u64(b, a, c);
  case MATH_LESS: return math_less_i64(b, a, c);
  case MATH_EQUAL: return math_equal_u64(b, a, c);
  case MATH_TO_FLOAT: return math_f64_from_i64(b, a);
  case MATH_FROM_BITS: return a;
  default: assert(!"not an i64 operation"); return a;
  }
}

static MathValue mask_op(MathBuilder *b, MathOp op, MathValue a, MathValue c) {
  switch (op) {
  case MATH_AND: return math_and_i32(b, a, c);
  case MATH_OR: return math_or_i32(b, a, c);
  case MATH_XOR: return math_xor_i32(b, a, c);
  case MATH_NOT: return math_not_mask(b, a);
  default: assert(!"not a mask operation"); return a;
  }
}

static MathVal x86_op(MathTarget *t, MathOp op, MathType type, MathVal a, MathVal c, MathVal d) {
  MathBuilder *b = t->context;
  MathValue va = (MathValue)a, vc = (MathValue)c, vd = (MathValue)d;
  if (op == MATH_SELECT) return (MathVal)math_select_value(b, va, vc, vd);
  switch (type) {
  case MATH_F32: return (MathVal)float_op(b, op, false, va, vc, vd);
  case MATH_F64: return (MathVal)float_op(b, op, true, va, vc, vd);
  case MATH_I32: return (MathVal)i32_op(b, op, va, vc);
  case MATH_I64: return (MathVal)i64_op(b, op, va, vc);
  case MATH_MASK: return (MathVal)mask_op(b, op, va, vc);
  }
  return a;
}

static MathVal x86_constant(MathTarget *t, MathType type, uint64_t bits) {
  MathBuilder *b = t->context;
  if (type == MATH_F64 || type == MATH_I64) return (MathVal)math_constant_u64(b, bits);
  return (MathVal)math_constant_i32(b, (int32_t)(uint32_t)bits);
}

/* The table's bytes in the code, jumped over, read rip-relative at
 * row * (its row's bytes) into fresh slots: the scalar form of a gather.
 * The row is read as an i32 (an i64 row's low half: rows are few). */
static void x86_load_row(MathTarget *t, const MathRows *table, MathVal row, MathVal *entries) {
  MathBuilder *b = t->context;
  if (b->width) {
    for (int j = 0; j < table->columns; j++) entries[j] = (MathVal)math_lanes_unsupported(b, "a table row");
    return;
  }
  int size = table->type == MATH_F64 || table->type == MATH_I64 ? 8 : 4;
  X86Buffer *cb = b->x->cb;
  X86Label data = x86_label_new(cb), over = x86_label_new(cb);
  x86_emit(cb, X86_JMP, x86_rel(over));
  x86_label_bind(cb, data);
  int stride = table->stride ? table->stride : table->columns;
  x86_emit_bytes(cb, table->entries,
                 ((size_t)(table->rows - 1) * (size_t)stride + (size_t)table->columns) * (size_t)size);
  x86_label_bind(cb, over);
  x86_emit(cb, X86_LEA, x86_reg(X86_RDX), x86_mem_label(8, data));
  x86_emit(cb, X86_IMUL, x86_reg(X86_EAX), math_slot_operand(b, (MathValue)row, 4), x86_imm(size * stride));
  X86Reg scratch = size == 8 ? X86_RCX : X86_ECX;
  for (int j = 0; j < table->columns; j++) {
    MathValue entry = math_value_new(b);
    x86_emit(cb, X86_MOV, x86_reg(scratch), x86_mem_index(size, X86_RDX, X86_RAX, 1, size * j));
    x86_emit(cb, X86_MOV, math_slot_operand(b, entry, size), x86_reg(scratch));
    entries[j] = (MathVal)entry;
  }
}

static int x86_skip_if_all(MathTarget *t, MathVal mask) { return math_skip_if(t->context, (MathValue)mask); }

static void x86_skip_end(MathTarget *t, int skip) { math_skip_end(t->context, skip); }

static MathTarget x86_target(MathBuilder *b);

/* Vector mode: part runs as scalar code on each lane's elements in a loop
 * over the lanes (its counter in the nested builder's first slot), its
 * inputs and outputs 4-byte elements. Scalar mode: part runs once. */
static void x86_lane_by_lane(MathTarget *t, MathLanePart part, const MathVal *inputs, int input_count,
                             MathVal *outputs, int output_count) {
  MathBuilder *b = t->context;
  if (!b->width) {
    part(t, inputs, outputs);
    return;
  }
  enum { MOST = 4 };
  assert(input_count <= MOST && output_count <= MOST);
  MathValue to[MOST];
  for (int k = 0; k < output_count; k++) to[k] = math_lanes_value_new(b);
  MathBuilder lane;
  math_builder_begin_nested(&lane, b);
  X86Buffer *cb = b->x->cb;
  X86Operand counter = math_slot_operand(&lane, math_value_new(&lane), 8);
  x86_emit(cb, X86_MOV, counter, x86_imm(0));
  X86Label head = x86_label_new(cb);
  x86_label_bind(cb, head);
  MathVal in[MOST], out[MOST];
  for (int k = 0; k < input_count; k++) {
    x86_emit(cb, X86_MOV, x86_reg(X86_RAX), counter);
    in[k] = (MathVal)math_input(&lane, math_lanes_element(b, (MathValue)inputs[k], X86_RAX), false);
  }
  MathTarget scalar = x86_target(&lane);
  part(&scalar, in, out);
  x86_emit(cb, X86_MOV, x86_reg(X86_RAX), counter);
  for (int k = 0; k < output_count; k++) {
    x86_emit(cb, X86_MOV, x86_reg(X86_ECX), math_slot_operand(&lane, (MathValue)out[k], 4));
    x86_emit(cb, X86_MOV, math_lanes_element(b, to[k], X86_RAX), x86_reg(X86_ECX));
    outputs[k] = (MathVal)to[k];
  }
  x86_emit(cb, X86_INC, counter);
  x86_emit(cb, X86_CMP, counter, x86_imm(b->width / 4));
  x86_emit(cb, X86_JL, x86_rel(head));
  math_builder_end(&lane);
}

/* vscalefps in f32 lanes at avx512: a 2^floor(n) with one rounding,
 * subnormal results included (MXCSR's default: no flush to zero), what
 * the two multiplies of the other levels give. */
static bool x86_scale(MathTarget *t, MathType real, MathVal a, MathVal n, MathVal *result) {
  MathBuilder *b = t->context;
  if (b->width != 64 || real != MATH_F32) return false;
  *result = (MathVal)math_lanes_binary(b, X86_VSCALEFPS, (MathValue)a, (MathValue)n);
  return true;
}

static int x86_scope_begin(MathTarget *t) { return math_scope_begin(t->context); }

static MathVal x86_scope_end(MathTarget *t, int scope, MathVal result) {
  return (MathVal)math_scope_end(t->context, scope, (MathValue)result);
}

static MathTarget x86_target(MathBuilder *b) {
  return (MathTarget){
      .op = x86_op,
      .constant = x86_constant,
      .load_row = x86_load_row,
      .skip_if_all = x86_skip_if_all,
      .skip_end = x86_skip_end,
      .lane_by_lane = x86_lane_by_lane,
      .scale = x86_scale,
      .scope_begin = x86_scope_begin,
      .scope_end = x86_scope_end,
      .context = b,
  };
}

/* ---- the algorithms, by the builder's names ---- */

static MathValue run(MathBuilder *b, MathFunction fn, const MathFormat *f, MathValue x) {
  MathTarget t = x86_target(b);
  return (MathValue)fn(&t, f, (MathVal)x);
}

static MathValue run2(MathBuilder *b, MathFunction2 fn, const MathFormat *f, MathValue a, MathValue c) {
  MathTarget t = x86_target(b);
  return (MathValue)fn(&t, f, (MathVal)a, (MathVal)c);
}

MathValue math_exp_f32(MathBuilder *b, MathValue x) { return run(b, math_program_exp, &math_format_f32, x); }
MathValue math_exp_f64(MathBuilder *b, MathValue x) { return run(b, math_program_exp, &math_format_f64, x); }
MathValue math_expm1_f32(MathBuilder *b, MathValue x) { return run(b, math_program_expm1, &math_format_f32, x); }
MathValue math_expm1_f64(MathBuilder *b, MathValue x) { return run(b, math_program_expm1, &math_format_f64, x); }
MathValue math_log_f32(MathBuilder *b, MathValue x) { return run(b, math_program_log, &math_format_f32, x); }
MathValue math_log_f64(MathBuilder *b, MathValue x) { return run(b, math_program_log, &math_format_f64, x); }
MathValue math_log1p_f32(MathBuilder *b, MathValue x) { return run(b, math_program_log1p, &math_format_f32, x); }
MathValue math_log1p_f64(MathBuilder *b, MathValue x) { return run(b, math_program_log1p, &math_format_f64, x); }
MathValue math_logistic_f32(MathBuilder *b, MathValue x) { return run(b, math_program_logistic, &math_format_f32, x); }
MathValue math_logistic_f64(MathBuilder *b, MathValue x) { return run(b, math_program_logistic, &math_format_f64, x); }
MathValue math_tanh_f32(MathBuilder *b, MathValue x) { return run(b, math_program_tanh, &math_format_f32, x); }
MathValue math_tanh_f64(MathBuilder *b, MathValue x) { return run(b, math_program_tanh, &math_format_f64, x); }
MathValue math_sinh_f32(MathBuilder *b, MathValue x) { return run(b, math_program_sinh, &math_format_f32, x); }
MathValue math_sinh_f64(MathBuilder *b, MathValue x) { return run(b, math_program_sinh, &math_format_f64, x); }
MathValue math_cosh_f32(MathBuilder *b, MathValue x) { return run(b, math_program_cosh, &math_format_f32, x); }
MathValue math_cosh_f64(MathBuilder *b, MathValue x) { return run(b, math_program_cosh, &math_format_f64, x); }
MathValue math_asinh_f32(MathBuilder *b, MathValue x) { return run(b, math_program_asinh, &math_format_f32, x); }
MathValue math_asinh_f64(MathBuilder *b, MathValue x) { return run(b, math_program_asinh, &math_format_f64, x); }
MathValue math_acosh_f32(MathBuilder *b, MathValue x) { return run(b, math_program_acosh, &math_format_f32, x); }
MathValue math_acosh_f64(MathBuilder *b, MathValue x) { return run(b, math_program_acosh, &math_format_f64, x); }
MathValue math_atanh_f32(MathBuilder *b, MathValue x) { return run(b, math_program_atanh, &math_format_f32, x); }
MathValue math_atanh_f64(MathBuilder *b, MathValue x) { return run(b, math_program_atanh, &math_format_f64, x); }
MathValue math_rsqrt_f32(MathBuilder *b, MathValue x) { return run(b, math_program_rsqrt, &math_format_f32, x); }
MathValue math_rsqrt_f64(MathBuilder *b, MathValue x) { return run(b, math_program_rsqrt, &math_format_f64, x); }

MathValue math_atan2_f32(MathBuilder *b, MathValue y, MathValue x) {
  return run2(b, math_program_atan2, &math_format_f32, y, x);
}

MathValue math_atan2_f64(MathBuilder *b, MathValue y, MathValue x) {
  return run2(b, math_program_atan2, &math_format_f64, y, x);
}

MathValue math_atan_f32(MathBuilder *b, MathValue x) { return run(b, math_program_atan, &math_format_f32, x); }
MathValue math_atan_f64(MathBuilder *b, MathValue x) { return run(b, math_program_atan, &math_format_f64, x); }
MathValue math_asin_f32(MathBuilder *b, MathValue x) { return run(b, math_program_asin, &math_format_f32, x); }
MathValue math_asin_f64(MathBuilder *b, MathValue x) { return run(b, math_program_asin, &math_format_f64, x); }
MathValue math_acos_f32(MathBuilder *b, MathValue x) { return run(b, math_program_acos, &math_format_f32, x); }
MathValue math_acos_f64(MathBuilder *b, MathValue x) { return run(b, math_program_acos, &math_format_f64, x); }
MathValue math_sin_f32(MathBuilder *b, MathValue x) { return run(b, math_program_sin, &math_format_f32, x); }
MathValue math_sin_f64(MathBuilder *b, MathValue x) { return run(b, math_program_sin, &math_format_f64, x); }
MathValue math_cos_f32(MathBuilder *b, MathValue x) { return run(b, math_program_cos, &math_format_f32, x); }
MathValue math_cos_f64(MathBuilder *b, MathValue x) { return run(b, math_program_cos, &math_format_f64, x); }
MathValue math_tan_f32(MathBuilder *b, MathValue x) { return run(b, math_program_tan, &math_format_f32, x); }
MathValue math_tan_f64(MathBuilder *b, MathValue x) { return run(b, math_program_tan, &math_format_f64, x); }
MathValue math_erf_f32(MathBuilder *b, MathValue x) { return run(b, math_program_erf, &math_format_f32, x); }
MathValue math_erf_f64(MathBuilder *b, MathValue x) { return run(b, math_program_erf, &math_format_f64, x); }

MathValue math_pow_f32(MathBuilder *b, MathValue x, MathValue y) {
  return run2(b, math_program_pow, &math_format_f32, x, y);
}

MathValue math_pow_f64(MathBuilder *b, MathValue x, MathValue y) {
  return run2(b, math_program_pow, &math_format_f64, x, y);
}

MathValue math_cbrt_f32(MathBuilder *b, MathValue x) { return run(b, math_program_cbrt, &math_format_f32, x); }
MathValue math_cbrt_f64(MathBuilder *b, MathValue x) { return run(b, math_program_cbrt, &math_format_f64, x); }
