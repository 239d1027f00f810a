/* The inline math functions in the kernel compiler's scalar code: which
 * HLO op is which math program (kernel_x86_math_program.c runs the
 * algorithms of src/ir/kernel/math_algorithms*.c), and the glue from a
 * kernel op's operands to the math builder's slots and back.
 *
 * Every function is computed the same way at every ISA level: where the
 * CPU lacks FMA (the sse4 level), the builder emulates each fused
 * multiply-add exactly, so sse4 gives the same bits as avx2 and avx512. */
#include "emit_x86/kernel_x86_internal.h"

#include "emit_x86/kernel_x86_math_builder.h"

#include <string.h>

typedef MathValue (*UnaryMath)(MathBuilder *b, MathValue x);
typedef MathValue (*BinaryMath)(MathBuilder *b, MathValue x, MathValue y);

/* The functions, by HLO op and type. sqrt, floor, ceil and round-nearest-even
 * are single instructions (kernel_x86_ops.c). */
static const struct {
  Opcode op;
  UnaryMath f32, f64; /* NULL: no code for that type yet */
} unary_functions[] = {
    {OP_EXPONENTIAL, math_exp_f32, math_exp_f64},
    {OP_EXPONENTIAL_MINUS_ONE, math_expm1_f32, math_expm1_f64},
    {OP_LOG, math_log_f32, math_log_f64},
    {OP_LOG_PLUS_ONE, math_log1p_f32, math_log1p_f64},
    {OP_TANH, math_tanh_f32, math_tanh_f64},
    {OP_LOGISTIC, math_logistic_f32, math_logistic_f64},
    {OP_ERF, math_erf_f32, math_erf_f64},
    {OP_CBRT, math_cbrt_f32, math_cbrt_f64},
    {OP_RSQRT, math_rsqrt_f32, math_rsqrt_f64},
    {OP_SINE, math_sin_f32, math_sin_f64},
    {OP_COSINE, math_cos_f32, math_cos_f64},
    {OP_TAN, math_tan_f32, math_tan_f64},
    {OP_ATAN, math_atan_f32, math_atan_f64},
    {OP_ASIN, math_asin_f32, math_asin_f64},
    {OP_ACOS, math_acos_f32, math_acos_f64},
    {OP_SINH, math_sinh_f32, math_sinh_f64},
    {OP_COSH, math_cosh_f32, math_cosh_f64},
    {OP_ASINH, math_asinh_f32, math_asinh_f64},
    {OP_ACOSH, math_acosh_f32, math_acosh_f64},
    {OP_ATANH, math_atanh_f32, math_atanh_f64},
};

static const struct {
  Opcode op;
  BinaryMath f32, f64;
} binary_functions[] = {
    {OP_POWER, math_pow_f32, math_pow_f64},
    {OP_ATAN2, math_atan2_f32, math_atan2_f64},
};

bool kernel_x86_is_math(Opcode op) {
  for (size_t f = 0; f < sizeof unary_functions / sizeof unary_functions[0]; f++)
    if (unary_functions[f].op == op) return true;
  for (size_t f = 0; f < sizeof binary_functions / sizeof binary_functions[0]; f++)
    if (binary_functions[f].op == op) return true;
  return false;
}

/* The f32 functions whose programs use only f32 and i32 operations,
 * which the math builder's vector mode has (kernel_x86_math_lanes.c). */
static const Opcode lane_functions[] = {
    OP_EXPONENTIAL, OP_EXPONENTIAL_MINUS_ONE, OP_LOG, OP_LOG_PLUS_ONE, OP_TANH, OP_LOGISTIC, OP_ERF, OP_CBRT,
    OP_ATAN2, OP_ATAN, OP_ASIN, OP_ACOS, OP_SINH, OP_COSH, OP_ASINH, OP_ACOSH, OP_ATANH,
};

/* sin, cos and tan are among them: their Payne-Hanek reduction runs lane
 * by lane (lane_by_lane), and only when some lane is past the Cody-Waite
 * range (skip_if_all). */
bool kernel_x86_math_has_lanes(const KernelX86 *x, Opcode op) {
  (void)x;
  for (size_t f = 0; f < sizeof lane_functions / sizeof lane_functions[0]; f++)
    if (lane_functions[f] == op) return true;
  return op == OP_SINE || op == OP_COSINE || op == OP_TAN;
}

static bool math_refuse(KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: %s on %s (op %%%d) has no x86 code yet", x->k->name,
                      opcode_name(op->op), type_name(op->type), i);
}

/* The builder's result in xmm13, or the refusal when the program ran out
 * of slots. */
static bool math_finish(MathBuilder *b, MathValue v, bool f64, X86Reg *result) {
  math_output(b, v, KX_XMM_SCRATCH2, f64);
  *result = KX_XMM_SCRATCH2;
  return math_builder_end(b);
}

bool kernel_x86_emit_math(KernelX86 *x, int i, X86Operand input, X86Reg *result) {
  const KernelOp *op = &x->k->ops[i];
  bool f64 = op->type == TYPE_F64;
  /* f16, bf16 and the minifloats are held as f32 and rounded after the op */
  if (op->type != TYPE_F32 && !f64 && !kernel_x86_type_is_narrow(op->type)) return math_refuse(x, i);
  for (size_t f = 0; f < sizeof unary_functions / sizeof unary_functions[0]; f++) {
    if (unary_functions[f].op != op->op) continue;
    UnaryMath function = f64 ? unary_functions[f].f64 : unary_functions[f].f32;
    if (!function) break;
    MathBuilder b;
    math_builder_begin(&b, x);
    MathValue v = function(&b, math_input(&b, input, f64));
    return math_finish(&b, v, f64, result);
  }
  return math_refuse(x, i);
}

bool kernel_x86_emit_math_binary(KernelX86 *x, int i, X86Operand left, X86Operand right, X86Reg *result) {
  const KernelOp *op = &x->k->ops[i];
  bool f64 = op->type == TYPE_F64;
  if (op->type != TYPE_F32 && !f64 && !kernel_x86_type_is_narrow(op->type)) return math_refuse(x, i);
  for (size_t f = 0; f < sizeof binary_functions / sizeof binary_functions[0]; f++) {
    if (binary_functions[f].op != op->op) continue;
    BinaryMath function = f64 ? binary_functions[f].f64 : binary_functions[f].f32;
    if (!function) break;
    MathBuilder b;
    math_builder_begin(&b, x);
    MathValue a = math_input(&b, left, f64);
    MathValue c = math_input(&b, right, f64);
    return math_finish(&b, function(&b, a, c), f64, result);
  }
  return math_refuse(x, i);
}

/* Op i of the SIMD loop in every lane: `input` (a vector register of the
 * loop's width) in, the result in vector register `into`. */
static bool emit_vector_function(KernelX86 *x, int i, X86Operand left, X86Operand right, int into, MathHomes *homes) {
  const KernelOp *op = &x->k->ops[i];
  MathBuilder b;
  math_builder_begin_lanes(&b, x, 4 * x->lanes);
  b.homes = homes;
  MathValue v = -1;
  for (size_t f = 0; f < sizeof unary_functions / sizeof unary_functions[0]; f++)
    if (unary_functions[f].op == op->op) v = unary_functions[f].f32(&b, math_input(&b, left, false));
  for (size_t f = 0; f < sizeof binary_functions / sizeof binary_functions[0]; f++) {
    if (binary_functions[f].op != op->op) continue;
    MathValue a = math_input(&b, left, false);
    v = binary_functions[f].f32(&b, a, math_input(&b, right, false));
  }
  if (v < 0) return math_refuse(x, i);
  math_output(&b, v, x86_xmm(into), false);
  return math_builder_end(&b);
}

/* The vector registers op i's function may use for its values. At
 * avx512: zmm16..27, which no kernel value uses. At avx2 and sse4 the
 * 16 vector registers are shared with the kernel's values (0..12; 13..15
 * are scratch): those that hold no value live at op i, its arguments
 * included (they are read after the first value is made), nor one an
 * invariant op hoisted before the loop keeps, nor one the loop keeps for
 * itself (x->loop_vector_registers: the partial sums; and
 * x->loop_reserved_registers). Its own result's
 * register is free: it is written last. */
static void math_home_registers(const KernelX86 *x, int i, MathHomes *homes) {
  homes->register_count = 0;
  if (x->cpu->level == CPU_LEVEL_AVX512) {
    for (int r = 0; r < MATH_HOME_COUNT; r++) homes->registers[homes->register_count++] = (int8_t)(MATH_HOME_FIRST + r);
    return;
  }
  uint32_t busy = x->loop_vector_registers | x->loop_reserved_registers;
  for (int v = 0; v < x->k->op_count; v++) {
    const ValueHome *h = &x->homes[v];
    if (v == i || h->value_class != VALUE_XMM || h->spilled || x->last_use[v] < i) continue;
    if (v < i || x->k->ops[v].invariant) busy |= 1u << x86_reg_number(h->reg);
  }
  for (int r = 0; r < KX_VECTOR_VALUE_REGISTERS && homes->register_count < MATH_HOME_COUNT; r++)
    if (!(busy & 1u << r)) homes->registers[homes->register_count++] = (int8_t)r;
}

/* The function's values get registers (MathHomes): a dry run into a
 * scratch buffer finds each value's last use, then the real run places
 * them. */
bool kernel_x86_emit_vector_math(KernelX86 *x, int i, X86Operand left, X86Operand right, int into) {
  if (!kernel_x86_math_has_lanes(x, x->k->ops[i].op)) return math_refuse(x, i);
  MathHomes *homes = mem_calloc(1, sizeof *homes);
  memset(homes->slot_instance, 0xff, sizeof homes->slot_instance);
  math_home_registers(x, i, homes);
  X86Buffer scratch, *code = x->cb;
  x86_buffer_init(&scratch);
  x->cb = &scratch;
  x->math_dry_run = true;
  bool ok = emit_vector_function(x, i, left, right, into, homes);
  x->math_dry_run = false;
  x->cb = code;
  x86_buffer_free(&scratch);
  if (ok) {
    bool registers = !homes->needs_memory && homes->register_count > 0;
    homes->assigning = true;
    homes->instance_count = 0;
    memset(homes->slot_instance, 0xff, sizeof homes->slot_instance);
    for (int r = 0; r < MATH_HOME_COUNT; r++) homes->owner[r] = -1;
    ok = emit_vector_function(x, i, left, right, into, registers ? homes : NULL);
  }
  mem_free(homes->last_use);
  mem_free(homes->home);
  mem_free(homes);
  return ok;
}

/* The functions with no vector form, in the SIMD loop: the argument
 * vectors go to a buffer past the scalar slots of the math area, and a
 * loop over the lanes (its counter in the area too) runs the scalar code
 * on each lane's element, writing the results to a third buffer, which is
 * then the result vector. Each lane gets the scalar code's bits; only
 * the rest of the kernel gets faster.
 *
 * The scalar code is legacy SSE, which runs several times slower while
 * the upper halves of ymm0..15 are dirty; so from avx2 up the vector
 * registers that may hold values (0..12; 13..15 are scratch, 16..31 are
 * untouched by vzeroupper) are saved, vzeroupper runs, and they are
 * restored after the lanes. */
bool kernel_x86_is_lane_math(const KernelX86 *x, Opcode op) {
  /* f64 lanes are 2 or 4 per ymm: the saves and the lane loop cost more
   * than the rest of the kernel gains (exp f64 measured 20% slower) */
  if (x->vector_f64) return false;
  for (size_t f = 0; f < sizeof unary_functions / sizeof unary_functions[0]; f++)
    if (unary_functions[f].op == op) return unary_functions[f].f32 != NULL;
  for (size_t f = 0; f < sizeof binary_functions / sizeof binary_functions[0]; f++)
    if (binary_functions[f].op == op) return binary_functions[f].f32 != NULL;
  return false;
}

enum { KX_VECTOR_SAVED = 13 };

bool kernel_x86_emit_math_per_lane(KernelX86 *x, int i, X86Operand left, X86Operand right, X86Operand into) {
  const KernelOp *op = &x->k->ops[i];
  bool f64 = x->vector_f64, binary = op->arg_count == 2;
  int lane = f64 ? 8 : 4, bytes = lane * x->lanes;
  /* 3 buffers of 64 bytes, the counter, then the saved registers */
  int base = 8 * (x->math_slot + KX_MATH_SLOTS);
  X86Mnemonic move = x->cpu->level == CPU_LEVEL_SSE4 ? X86_MOVUPS : X86_VMOVUPS;
  X86Operand counter = x86_mem(8, X86_RSP, base + 192);
  x86_emit(x->cb, move, x86_mem(bytes, X86_RSP, base), left);
  if (binary) x86_emit(x->cb, move, x86_mem(bytes, X86_RSP, base + 64), right);
  x86_emit(x->cb, X86_MOV, counter, x86_imm(0));
  bool avx = x->cpu->level >= CPU_LEVEL_AVX2;
  X86Reg (*wide)(int) = x->cpu->level == CPU_LEVEL_AVX512 ? x86_zmm : x86_ymm;
  for (int r = 0; avx && r < KX_VECTOR_SAVED; r++)
    x86_emit(x->cb, X86_VMOVUPS, x86_mem(bytes, X86_RSP, base + 256 + 64 * r), x86_reg(wide(r)));
  if (avx) x86_emit0(x->cb, X86_VZEROUPPER);
  X86Label head = x86_label_new(x->cb);
  x86_label_bind(x->cb, head);
  x86_emit(x->cb, X86_MOV, x86_reg(X86_RAX), counter);
  X86Reg result;
  bool ok = binary ? kernel_x86_emit_math_binary(x, i, x86_mem_index(lane, X86_RSP, X86_RAX, lane, base),
                                                 x86_mem_index(lane, X86_RSP, X86_RAX, lane, base + 64), &result)
                   : kernel_x86_emit_math(x, i, x86_mem_index(lane, X86_RSP, X86_RAX, lane, base), &result);
  if (!ok) return false;
  x86_emit(x->cb, X86_MOV, x86_reg(X86_RAX), counter);
  x86_emit(x->cb, f64 ? X86_MOVSD : X86_MOVSS, x86_mem_index(lane, X86_RSP, X86_RAX, lane, base + 128), x86_reg(result));
  x86_emit(x->cb, X86_INC, counter);
  x86_emit(x->cb, X86_CMP, counter, x86_imm(x->lanes));
  x86_emit(x->cb, X86_JL, x86_rel(head));
  for (int r = 0; avx && r < KX_VECTOR_SAVED; r++)
    x86_emit(x->cb, X86_VMOVUPS, x86_reg(wide(r)), x86_mem(bytes, X86_RSP, base + 256 + 64 * r));
  x86_emit(x->cb, move, into, x86_mem(bytes, X86_RSP, base + 128));
  return true;
}
