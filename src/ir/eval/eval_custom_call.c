/* custom-call: code outside HLO, named by custom_call_target.
 *
 * The evaluator runs two families of targets: the sharding annotations,
 * which on one device are their operand, and the LU factorization JAX's
 * CPU lowering calls for jnp.linalg.lu, solve, inv and det
 * (lapack_sgetrf_ffi, lapack_dgetrf_ffi). Every other target is refused, and the other LAPACK
 * calls JAX emits for jnp.linalg are named with the JAX function behind
 * them, so a user can tell which line of their program needs another
 * route. The refusal is found when a module is compiled
 * (eval_check_supported), not half-way through a run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

/* The LAPACK routines JAX calls, as lapack_ + s/d/c/z + routine, with an
 * _ffi suffix in current JAX. */
static const struct {
  const char *routine, *jax_function;
} lapack_routines[] = {
    {"getrf", "jnp.linalg.lu (also solve, inv, det)"}, {"potrf", "jnp.linalg.cholesky"},
    {"geqrf", "jnp.linalg.qr"}, {"geqp3", "jax.scipy.linalg.qr with pivoting"},
    {"orgqr", "jnp.linalg.qr"}, {"ungqr", "jnp.linalg.qr"}, {"syevd", "jnp.linalg.eigh"},
    {"heevd", "jnp.linalg.eigh"}, {"gesdd", "jnp.linalg.svd"}, {"gesvd", "jnp.linalg.svd"},
    {"geev", "jnp.linalg.eig"}, {"gees", "jax.scipy.linalg.schur"},
    {"trsm", "jax.scipy.linalg.solve_triangular"}, {"gehrd", "jax.scipy.linalg.hessenberg"},
    {"sytrd", "jax.scipy.linalg.eigh_tridiagonal"}, {"hetrd", "jax.scipy.linalg.eigh_tridiagonal"},
    {"gtsv", "jax.lax.linalg.tridiagonal_solve"},
};

/* Splits lapack_<t><routine>[_ffi] into its type letter and routine row;
 * -1 when the target is not one of JAX's LAPACK calls. */
static int lapack_routine(const char *target, char *type_letter) {
  if (!target || strncmp(target, "lapack_", 7) != 0 || !target[7] || !strchr("sdcz", target[7])) return -1;
  for (size_t i = 0; i < sizeof lapack_routines / sizeof lapack_routines[0]; i++) {
    size_t n = strlen(lapack_routines[i].routine);
    const char *rest = target + 8 + n;
    if (strncmp(target + 8, lapack_routines[i].routine, n) == 0 && (!*rest || strcmp(rest, "_ffi") == 0)) {
      *type_letter = target[7];
      return (int)i;
    }
  }
  return -1;
}

/* Real getrf (s, d) runs; complex getrf needs complex element types. */
static bool runs_here(const char *target) {
  char t = 0;
  int row = lapack_routine(target, &t);
  return row == 0 && (t == 's' || t == 'd');
}

static bool check_getrf_shapes(const Instruction *inst, const Shape *x, Status *st);

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
  const char *target = inst->attrs.custom_call_target;
  if (custom_call_is_identity(inst)) return check_identity_shape(inst, st);
  if (runs_here(target))
    return inst->operand_count == 1 && inst->operands && inst->operands[0]
               ? check_getrf_shapes(inst, &inst->operands[0]->shape, st)
               : status_error(st, STATUS_VERIFY_ERROR, "custom-call %s (%s) takes one operand", inst->name,
                              target);
  char t = 0;
  int row = lapack_routine(target, &t);
  if (row >= 0)
    return status_error(st, STATUS_UNSUPPORTED,
                        "custom-call target %s (LAPACK, which JAX emits for %s) is not supported", target,
                        lapack_routines[row].jax_function);
  return status_error(st, STATUS_UNSUPPORTED, "unsupported custom-call target %s",
                      target ? target : "(none)");
}

/* ---- getrf ---- */

/* The declared result (a custom-call's shape is whatever the text says)
 * must be (a's shape, s32[batch..., min(m,n)], s32[batch...]). */
static bool check_getrf_shapes(const Instruction *inst, const Shape *x, Status *st) {
  const Shape *s = &inst->shape;
  bool ok = inst->operand_count == 1 && x->type != TYPE_TUPLE && type_is_float(x->type) && x->rank >= 2 &&
            s->type == TYPE_TUPLE && s->tuple_count == 3 && s->tuple_shapes;
  ok = ok && shape_equal(&s->tuple_shapes[0], x);
  const Shape *ipiv = ok ? &s->tuple_shapes[1] : NULL, *info = ok ? &s->tuple_shapes[2] : NULL;
  int batch = x->rank - 2;
  int64_t m = ok ? x->dims[batch] : 0, n = ok ? x->dims[batch + 1] : 0;
  ok = ok && ipiv->type == TYPE_S32 && ipiv->rank == batch + 1 && ipiv->dims[batch] == (m < n ? m : n) &&
       info->type == TYPE_S32 && info->rank == batch;
  for (int d = 0; ok && d < batch; d++) ok = ipiv->dims[d] == x->dims[d] && info->dims[d] == x->dims[d];
  if (!ok)
    return status_error(st, STATUS_VERIFY_ERROR,
                        "custom-call %s (%s): expects one float matrix (batch..., m, n) and returns "
                        "(the same shape, s32[batch..., min(m,n)], s32[batch...])",
                        inst->name, inst->attrs.custom_call_target);
  return true;
}

static Literal *eval_getrf(const Instruction *inst, const Literal *a, Status *st) {
  if (!check_getrf_shapes(inst, &a->shape, st)) return NULL;
  int batch = a->shape.rank - 2;
  int64_t m = a->shape.dims[batch], n = a->shape.dims[batch + 1], steps = m < n ? m : n;
  int64_t count = m > 0 && n > 0 ? shape_element_count(&a->shape) / (m * n) : 0;
  Literal *parts[3];
  for (int k = 0; k < 3; k++) parts[k] = literal_create(&inst->shape.tuple_shapes[k]);
  double *work = scratch_calloc(m * n, sizeof *work);
  int32_t *ipiv = scratch_calloc(steps, sizeof *ipiv);
  for (int64_t b = 0; b < count; b++) {
    for (int64_t i = 0; i < m * n; i++) work[i] = literal_get_f64(a, b * m * n + i);
    int64_t info = linalg_lu_factor(work, m, n, ipiv);
    for (int64_t i = 0; i < m * n; i++) literal_set_f64(parts[0], b * m * n + i, work[i]);
    for (int64_t j = 0; j < steps; j++) literal_set_s64(parts[1], b * steps + j, ipiv[j]);
    literal_set_s64(parts[2], b, info);
  }
  free(work);
  free(ipiv);
  return literal_create_tuple(parts, 3);
}

Literal *eval_custom_call(const Instruction *inst, Literal *const *operands, Status *st) {
  if (!eval_custom_call_supported(inst, st)) return NULL;
  if (custom_call_is_identity(inst)) return literal_clone(operands[0]);
  return eval_getrf(inst, operands[0], st);
}
