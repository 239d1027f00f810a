/* custom-call: code outside HLO, named by custom_call_target.
 *
 * The evaluator runs two families of targets: the sharding annotations,
 * which on one device are their operand, and the LAPACK routines JAX's CPU
 * lowering calls for jnp.linalg (src/ir/lapack.h): getrf (lu, solve, inv,
 * det; real types), potrf (cholesky), geqrf and orgqr/ungqr (qr),
 * syevd/heevd (eigh), gesdd (svd) and trsm (solve_triangular), in f32,
 * f64, c64 and c128. Every other target is refused, and the other LAPACK
 * calls JAX emits are named with the JAX function behind them, so a user
 * can tell which line of their program needs another route. The refusal
 * is found when a module is compiled (eval_check_supported), not half-way
 * through a run. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"
#include "ir/lapack.h"
#include "ir/linalg_plan.h"

static bool check_getrf_shapes(const Instruction *inst, GetrfPlan *plan, Status *st);

/* XLA's ShardingRemover drops these three when there is one partition:
 * they say how a value is split across devices (or switch a region to
 * manual partitioning), never what it is. */
bool custom_call_is_identity(const Instruction *inst) {
  static const char *const targets[] = {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"};
  const char *target = inst->opcode == OP_CUSTOM_CALL ? inst->attrs.custom_call_target : NULL;
  for (size_t i = 0; target && i < sizeof targets / sizeof targets[0]; i++)
    if (strcmp(target, targets[i]) == 0) return true;
  return false;
}

/* On one device the result is the operand: one operand of the same type
 * and dims (a layout may differ; the value is the same). */
static bool check_identity_shape(const Instruction *inst, Status *st) {
  const Instruction *x = inst->operand_count == 1 && inst->operands ? inst->operands[0] : NULL;
  if (x && !shape_is_tuple(&x->shape) && inst->shape.type == x->shape.type && shape_same_dims(&inst->shape, &x->shape))
    return true;
  if (x && shape_is_tuple(&x->shape) && shape_equal(&inst->shape, &x->shape)) return true;
  return status_error(st, STATUS_VERIFY_ERROR,
                      "custom-call %s (%s) is its operand on one device: it takes one operand of its own shape",
                      inst->name, inst->attrs.custom_call_target);
}

bool eval_custom_call_supported(const Instruction *inst, Status *st) {
  if (custom_call_is_identity(inst)) return check_identity_shape(inst, st);
  LapackCall call;
  if (!lapack_call_read(inst, &call, st)) return false;
  if (call.routine != LAPACK_GETRF) return true;
  GetrfPlan plan;
  return inst->operand_count == 1 && inst->operands && inst->operands[0]
             ? check_getrf_shapes(inst, &plan, st)
             : status_error(st, STATUS_VERIFY_ERROR, "custom-call %s (%s) takes one operand", inst->name,
                            inst->attrs.custom_call_target);
}

/* ---- getrf ---- */

/* The declared result must be (a's shape, s32[batch..., min(m,n)],
 * s32[batch...]): getrf_plan_make (src/ir/linalg_plan.c) checks it. */
static bool check_getrf_shapes(const Instruction *inst, GetrfPlan *plan, Status *st) {
  if (!getrf_plan_make(inst, plan))
    return status_error(st, STATUS_VERIFY_ERROR,
                        "custom-call %s (%s): expects one float matrix (batch..., m, n) and returns "
                        "(the same shape, s32[batch..., min(m,n)], s32[batch...])",
                        inst->name, inst->attrs.custom_call_target);
  return true;
}

static Literal *eval_getrf(const Instruction *inst, const Literal *a, Status *st) {
  GetrfPlan plan;
  if (!check_getrf_shapes(inst, &plan, st)) return NULL;
  int64_t m = plan.m, n = plan.n, steps = plan.steps;
  int64_t count = m > 0 && n > 0 ? plan.batches : 0;
  Literal *parts[3];
  for (int k = 0; k < 3; k++) parts[k] = literal_create(&inst->shape.tuple_shapes[k]);
  double *work = eval_scratch_calloc(m * n, sizeof *work);
  int32_t *ipiv = eval_scratch_calloc(steps, sizeof *ipiv);
  for (int64_t b = 0; b < count; b++) {
    for (int64_t i = 0; i < m * n; i++) work[i] = literal_get_f64(a, b * m * n + i);
    int64_t info = linalg_lu_factor(work, m, n, ipiv);
    for (int64_t i = 0; i < m * n; i++) literal_set_f64(parts[0], b * m * n + i, work[i]);
    for (int64_t j = 0; j < steps; j++) literal_set_s64(parts[1], b * steps + j, ipiv[j]);
    literal_set_s64(parts[2], b, info);
  }
  mem_free(work);
  mem_free(ipiv);
  return literal_create_tuple(parts, 3);
}

/* ---- the routines of lapack.h ---- */

/* Each batch element's operands are read into double complex, run, and
 * the result leaves written back, each rounded once to its type. */
static Literal *eval_lapack(const Instruction *inst, const LapackCall *call, Literal *const *operands) {
  LapackValue *in[LAPACK_MAX_OPERANDS] = {0}, *out[LAPACK_MAX_RESULTS] = {0};
  Literal *parts[LAPACK_MAX_RESULTS];
  for (int i = 0; i < call->operand_count; i++) in[i] = eval_scratch_calloc(call->operand_values[i] + 1, sizeof(LapackValue));
  for (int j = 0; j < call->result_count; j++) {
    out[j] = eval_scratch_calloc(call->result_values[j] + 1, sizeof(LapackValue));
    parts[j] = literal_create(call->result_count == 1 ? &inst->shape : &inst->shape.tuple_shapes[j]);
  }
  for (int64_t b = 0; b < call->batches; b++) {
    for (int i = 0; i < call->operand_count; i++) {
      int64_t base = call->operand_batched[i] ? b * call->operand_values[i] : 0;
      for (int64_t e = 0; e < call->operand_values[i]; e++) in[i][e] = literal_get_complex(operands[i], base + e);
    }
    int32_t info = lapack_call_run(call, (const LapackValue *const *)in, out);
    for (int j = 0; j < call->result_count; j++) {
      int64_t count = call->result_values[j];
      if (!call->result_batched[j]) continue; /* a workspace: its zeros */
      for (int64_t e = 0; e < count; e++) {
        if (j == call->info_leaf) literal_set_s64(parts[j], b, info);
        else if (type_is_complex(call->result_type[j])) literal_set_complex(parts[j], b * count + e, out[j][e]);
        else literal_set_f64(parts[j], b * count + e, creal(out[j][e]));
      }
    }
  }
  for (int i = 0; i < call->operand_count; i++) mem_free(in[i]);
  for (int j = 0; j < call->result_count; j++) mem_free(out[j]);
  return call->result_count == 1 ? parts[0] : literal_create_tuple(parts, call->result_count);
}

Literal *eval_custom_call(const Instruction *inst, Literal *const *operands, Status *st) {
  if (!eval_custom_call_supported(inst, st)) return NULL;
  if (custom_call_is_identity(inst)) return literal_clone(operands[0]);
  LapackCall call;
  if (!lapack_call_read(inst, &call, st)) return NULL;
  if (call.routine == LAPACK_GETRF) return eval_getrf(inst, operands[0], st);
  return eval_lapack(inst, &call, operands);
}
