/* JAX's LAPACK custom-calls read into a LapackCall (lapack.h): which
 * routine the target names, its options from backend_config, and the
 * operand and result shapes JAX's CPU lowering gives it, checked here once
 * for the evaluator and the CPU backend; then one batch element run.
 *
 * The forms (jax/_src/lax/linalg.py and jaxlib's lapack kernels), each over
 * leading batch dimensions, a being m x n:
 *   potrf  a (n x n)            -> (a, s32 info)                 uplo
 *   geqrf  a                    -> (a, tau[min(m,n)])
 *   orgqr  a (n <= m), tau[k]   -> q (m x n); ungqr for complex
 *   syevd  a (n x n)            -> (v, w[n] real, s32 info)      uplo, mode
 *   gesdd  a                    -> (a, s[min(m,n)] real, u, vt, s32 info)  mode
 *   trsm   a (m x m), b [, alpha scalar] -> x (b's shape)        side, uplo,
 *                                                                trans_x, diag
 * JAX's 2024 forms of syevd and gesdd add workspace leaves (rank 1, not
 * batched) after info; they are accepted and written as zeros.
 * backend_config is an attribute dictionary of ASCII codes:
 * {uplo = 76 : ui8} ('L'), mode 'V'/'N' (syevd: eigenvectors or not),
 * 'A'/'S'/'N' (gesdd: u m x m and vt n x n, u m x k and vt k x n, none),
 * side 'L'/'R', trans_x 'N'/'T'/'C', diag 'N'/'U'. JAX always writes every
 * option; one that is missing takes LAPACK's first choice ('L', 'V', 'A',
 * 'L', 'N', 'N'). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lapack.h"

/* The LAPACK routines JAX calls, as lapack_ + s/d/c/z + routine, with an
 * _ffi suffix in current JAX; the rows past `runs` are refused by name. */
static const struct {
  const char *routine, *jax_function;
  LapackRoutine runs;
} routines[] = {
    {"getrf", "jnp.linalg.lu (also solve, inv, det)", LAPACK_GETRF},
    {"potrf", "jnp.linalg.cholesky", LAPACK_POTRF},
    {"geqrf", "jnp.linalg.qr", LAPACK_GEQRF},
    {"orgqr", "jnp.linalg.qr", LAPACK_ORGQR},
    {"ungqr", "jnp.linalg.qr", LAPACK_ORGQR},
    {"syevd", "jnp.linalg.eigh", LAPACK_SYEVD},
    {"heevd", "jnp.linalg.eigh", LAPACK_SYEVD},
    {"gesdd", "jnp.linalg.svd", LAPACK_GESDD},
    {"trsm", "jax.scipy.linalg.solve_triangular", LAPACK_TRSM},
    {"geqp3", "jax.scipy.linalg.qr with pivoting", LAPACK_REFUSED},
    {"gesvd", "jnp.linalg.svd", LAPACK_REFUSED},
    {"geev", "jnp.linalg.eig", LAPACK_REFUSED},
    {"gees", "jax.scipy.linalg.schur", LAPACK_REFUSED},
    {"gehrd", "jax.scipy.linalg.hessenberg", LAPACK_REFUSED},
    {"sytrd", "jax.scipy.linalg.eigh_tridiagonal", LAPACK_REFUSED},
    {"hetrd", "jax.scipy.linalg.eigh_tridiagonal", LAPACK_REFUSED},
    {"gtsv", "jax.lax.linalg.tridiagonal_solve", LAPACK_REFUSED},
};

/* Splits lapack_<t><routine>[_ffi] into its type letter and row; -1 when
 * the target is not one of JAX's LAPACK calls. */
static int routine_row(const char *target, char *type_letter) {
  if (!target || strncmp(target, "lapack_", 7) != 0 || !target[7] || !strchr("sdcz", target[7])) return -1;
  for (size_t i = 0; i < sizeof routines / sizeof routines[0]; i++) {
    size_t n = strlen(routines[i].routine);
    const char *rest = target + 8 + n;
    if (strncmp(target + 8, routines[i].routine, n) == 0 && (!*rest || strcmp(rest, "_ffi") == 0)) {
      *type_letter = target[7];
      return (int)i;
    }
  }
  return -1;
}

/* The value of `key = N : ui8` in a backend_config dictionary, as a
 * character; `otherwise` when the key is absent. */
static char config_option(const char *config, const char *key, char otherwise) {
  size_t n = strlen(key);
  for (const char *at = config ? strstr(config, key) : NULL; at; at = strstr(at + 1, key)) {
    bool starts = at == config || strchr("{, ", at[-1]);
    const char *after = at + n;
    while (*after == ' ') after++;
    if (!starts || *after != '=') continue;
    long v = strtol(after + 1, NULL, 10);
    return v > 0 && v < 128 ? (char)v : '?';
  }
  return otherwise;
}

/* ---- shapes ---- */

/* The shapes checked for one call: batch dimensions from the first
 * operand, each later array the batch followed by its own dimensions. */
typedef struct Check {
  const Shape *batch;   /* the first operand; its leading rank - 2 dims */
  int batch_rank;
  bool ok;
} Check;

static bool dims_are(Check *k, const Shape *s, ElementType t, int own_rank, int64_t d0, int64_t d1) {
  if (!k->ok || !s || shape_is_tuple(s) || s->type != t || s->rank != k->batch_rank + own_rank) return k->ok = false;
  for (int d = 0; d < k->batch_rank; d++)
    if (s->dims[d] != k->batch->dims[d]) return k->ok = false;
  if (own_rank >= 1 && s->dims[k->batch_rank] != d0) return k->ok = false;
  if (own_rank == 2 && s->dims[k->batch_rank + 1] != d1) return k->ok = false;
  return true;
}

static int64_t matrix_rows(const Shape *s) { return s->dims[s->rank - 2]; }
static int64_t matrix_cols(const Shape *s) { return s->dims[s->rank - 1]; }

/* The result leaves, in order: their type and values per batch element. */
static void set_results(LapackCall *c, int count, const ElementType *types, const int64_t *values) {
  c->result_count = count;
  for (int j = 0; j < count; j++) {
    c->result_type[j] = types[j];
    c->result_values[j] = values[j];
    c->result_batched[j] = true;
  }
}

/* The workspace leaves past the first `count` of a syevd or gesdd result:
 * each a rank-1 array, written once as zeros. */
static bool add_workspace_leaves(const Instruction *inst, LapackCall *c, int count) {
  for (int j = count; j < inst->shape.tuple_count; j++) {
    const Shape *w = &inst->shape.tuple_shapes[j];
    if (shape_is_tuple(w) || w->rank != 1 || j >= LAPACK_MAX_RESULTS) return false;
    c->result_type[j] = w->type;
    c->result_values[j] = w->dims[0];
    c->result_batched[j] = false;
  }
  c->result_count = inst->shape.tuple_count;
  return true;
}

static const Shape *leaf(const Instruction *inst, int j) {
  const Shape *s = &inst->shape;
  return shape_is_tuple(s) && s->tuple_shapes && j < s->tuple_count ? &s->tuple_shapes[j] : NULL;
}

static bool result_is_tuple_of(const Instruction *inst, int count) {
  return shape_is_tuple(&inst->shape) && inst->shape.tuple_count == count && inst->shape.tuple_shapes;
}

static bool result_is_tuple_of_at_least(const Instruction *inst, int count) {
  return shape_is_tuple(&inst->shape) && inst->shape.tuple_count >= count && inst->shape.tuple_shapes;
}

/* gesdd: 'N' computes neither u nor vt; whatever their shapes, they are
 * written as zeros (LAPACK does not touch them). */
static void read_gesdd_shapes(const Instruction *inst, LapackCall *c, Check *k, ElementType t, ElementType real) {
  int64_t m = c->m, n = c->n;
  k->ok = inst->operand_count == 1 && result_is_tuple_of_at_least(inst, 5);
  const Shape *u = k->ok ? leaf(inst, 2) : NULL, *vt = k->ok ? leaf(inst, 3) : NULL;
  bool none = c->svd_mode == 'N';
  k->ok = k->ok && u && vt && !shape_is_tuple(u) && !shape_is_tuple(vt) && u->rank == k->batch_rank + 2 &&
          vt->rank == k->batch_rank + 2;
  c->u_cols = k->ok ? matrix_cols(u) : 0;
  c->vt_rows = k->ok ? matrix_rows(vt) : 0;
  int64_t u_rows = k->ok ? matrix_rows(u) : 0, vt_cols = k->ok ? matrix_cols(vt) : 0;
  if (!none) k->ok = k->ok && u_rows == m && vt_cols == n &&
                     c->u_cols == (c->svd_mode == 'A' ? m : c->k) && c->vt_rows == (c->svd_mode == 'A' ? n : c->k);
  (void)(dims_are(k, leaf(inst, 0), t, 2, m, n) && dims_are(k, leaf(inst, 1), real, 1, c->k, 0) &&
      dims_are(k, u, t, 2, u_rows, c->u_cols) && dims_are(k, vt, t, 2, c->vt_rows, vt_cols) &&
      dims_are(k, leaf(inst, 4), TYPE_S32, 0, 0, 0));
  set_results(c, 5, (ElementType[]){t, real, t, t, TYPE_S32},
              (int64_t[]){m * n, c->k, u_rows * c->u_cols, c->vt_rows * vt_cols, 1});
  k->ok = k->ok && add_workspace_leaves(inst, c, 5);
  if (none) c->u_cols = c->vt_rows = 0;
  c->info_leaf = 4;
}

/* trsm, with JAX's older form's third operand, the scalar alpha (x = alpha
 * op(a)^-1 b). */
static void read_trsm_shapes(const Instruction *inst, LapackCall *c, Check *k, ElementType t) {
  int64_t m = c->m, n = c->n;
  const Shape *b = inst->operand_count >= 2 ? &inst->operands[1]->shape : NULL;
  k->ok = m == n && b && (inst->operand_count == 2 || inst->operand_count == 3) && !shape_is_tuple(b) &&
          b->rank == k->batch_rank + 2;
  c->rows = k->ok ? matrix_rows(b) : 0;
  c->cols = k->ok ? matrix_cols(b) : 0;
  k->ok = k->ok && (c->left_side ? c->rows : c->cols) == m;
  (void)(dims_are(k, b, t, 2, c->rows, c->cols) && dims_are(k, &inst->shape, t, 2, c->rows, c->cols));
  c->operand_values[1] = c->rows * c->cols;
  c->operand_batched[1] = true;
  if (inst->operand_count == 3) {
    const Shape *alpha = &inst->operands[2]->shape;
    k->ok = k->ok && !shape_is_tuple(alpha) && alpha->type == t && alpha->rank == 0;
    c->operand_values[2] = 1;
  }
  set_results(c, 1, (ElementType[]){t}, (int64_t[]){c->rows * c->cols});
}

/* Each routine's form (the table at the top of the file). */
static bool read_shapes(const Instruction *inst, LapackCall *c, Check *k) {
  ElementType t = c->type, real = type_is_complex(t) ? type_complex_component(t) : t;
  int64_t m = c->m, n = c->n;
  switch (c->routine) {
  case LAPACK_POTRF:
    k->ok = m == n && inst->operand_count == 1 && result_is_tuple_of(inst, 2);
    (void)(dims_are(k, leaf(inst, 0), t, 2, n, n) && dims_are(k, leaf(inst, 1), TYPE_S32, 0, 0, 0));
    set_results(c, 2, (ElementType[]){t, TYPE_S32}, (int64_t[]){n * n, 1});
    c->info_leaf = 1;
    break;
  case LAPACK_GEQRF:
    k->ok = inst->operand_count == 1 && result_is_tuple_of(inst, 2);
    (void)(dims_are(k, leaf(inst, 0), t, 2, m, n) && dims_are(k, leaf(inst, 1), t, 1, c->k, 0));
    set_results(c, 2, (ElementType[]){t, t}, (int64_t[]){m * n, c->k});
    break;
  case LAPACK_ORGQR: {
    const Shape *tau = inst->operand_count == 2 ? &inst->operands[1]->shape : NULL;
    k->ok = tau && !shape_is_tuple(tau) && tau->rank == k->batch_rank + 1 && n <= m && !shape_is_tuple(&inst->shape);
    c->k = k->ok ? tau->dims[k->batch_rank] : 0;
    k->ok = k->ok && c->k <= n;
    (void)(dims_are(k, tau, t, 1, c->k, 0) && dims_are(k, &inst->shape, t, 2, m, n));
    c->operand_values[1] = c->k;
    c->operand_batched[1] = true;
    set_results(c, 1, (ElementType[]){t}, (int64_t[]){m * n});
    break;
  }
  case LAPACK_SYEVD:
    k->ok = m == n && inst->operand_count == 1 && result_is_tuple_of_at_least(inst, 3);
    (void)(dims_are(k, leaf(inst, 0), t, 2, n, n) && dims_are(k, leaf(inst, 1), real, 1, n, 0) &&
        dims_are(k, leaf(inst, 2), TYPE_S32, 0, 0, 0));
    set_results(c, 3, (ElementType[]){t, real, TYPE_S32}, (int64_t[]){n * n, n, 1});
    k->ok = k->ok && add_workspace_leaves(inst, c, 3);
    c->info_leaf = 2;
    break;
  case LAPACK_GESDD: read_gesdd_shapes(inst, c, k, t, real); break;
  case LAPACK_TRSM: read_trsm_shapes(inst, c, k, t); break;
  default: k->ok = false;
  }
  return k->ok;
}

/* The form of each routine, for the message when the shapes do not fit. */
static const char *form_of(LapackRoutine r) {
  switch (r) {
  case LAPACK_POTRF: return "a (batch..., n, n) -> (a's shape, s32[batch...])";
  case LAPACK_GEQRF: return "a (batch..., m, n) -> (a's shape, tau[batch..., min(m,n)])";
  case LAPACK_ORGQR: return "a (batch..., m, n), n <= m, tau (batch..., k), k <= n -> a's shape";
  case LAPACK_SYEVD:
    return "a (batch..., n, n) -> (a's shape, real w[batch..., n], s32[batch...][, rank-1 workspaces])";
  case LAPACK_GESDD:
    return "a (batch..., m, n) -> (a's shape, real s[batch..., min(m,n)], u, vt, s32[batch...][, rank-1 "
           "workspaces]) with u and vt as mode asks";
  case LAPACK_TRSM: return "a (batch..., m, m), b (batch..., rows, cols)[, scalar alpha] -> b's shape";
  default: return "";
  }
}

static bool read_options(const Instruction *inst, LapackCall *c, Status *st) {
  const char *config = inst->attrs.backend_config;
  char uplo = config_option(config, "uplo", 'L'), mode = config_option(config, "mode", c->routine == LAPACK_GESDD ? 'A' : 'V');
  char side = config_option(config, "side", 'L'), diag = config_option(config, "diag", 'N');
  c->transpose = config_option(config, "trans_x", 'N');
  c->lower = uplo == 'L';
  c->left_side = side == 'L';
  c->unit_diagonal = diag == 'U';
  c->vectors = mode == 'V';
  c->svd_mode = mode;
  bool ok = strchr("LU", uplo) && strchr("LR", side) && strchr("NU", diag) && strchr("NTC", c->transpose) &&
            (c->routine == LAPACK_GESDD ? strchr("ASN", mode) != NULL : strchr("VN", mode) != NULL);
  if (!ok)
    return status_error(st, STATUS_VERIFY_ERROR,
                        "custom-call %s (%s): backend_config %s names an option LAPACK does not have", inst->name,
                        inst->attrs.custom_call_target, config);
  return true;
}

bool lapack_call_read(const Instruction *inst, LapackCall *c, Status *st) {
  const char *target = inst->attrs.custom_call_target;
  char letter = 0;
  int row = routine_row(target, &letter);
  if (row < 0)
    return status_error(st, STATUS_UNSUPPORTED, "unsupported custom-call target %s", target ? target : "(none)");
  *c = (LapackCall){.routine = routines[row].runs, .info_leaf = -1};
  c->type = letter == 's' ? TYPE_F32 : letter == 'd' ? TYPE_F64 : letter == 'c' ? TYPE_C64 : TYPE_C128;
  bool real_only = !strcmp(routines[row].routine, "orgqr") || !strcmp(routines[row].routine, "syevd");
  bool complex_only = !strcmp(routines[row].routine, "ungqr") || !strcmp(routines[row].routine, "heevd");
  if (c->routine == LAPACK_REFUSED || (c->routine == LAPACK_GETRF && type_is_complex(c->type)) ||
      (real_only && type_is_complex(c->type)) || (complex_only && !type_is_complex(c->type)))
    return status_error(st, STATUS_UNSUPPORTED,
                        "custom-call target %s (LAPACK, which JAX emits for %s) is not supported", target,
                        routines[row].jax_function);
  if (c->routine == LAPACK_GETRF) return true;
  const Shape *a = inst->operand_count >= 1 && inst->operands && inst->operands[0] ? &inst->operands[0]->shape : NULL;
  if (!a || shape_is_tuple(a) || a->rank < 2 || a->type != c->type)
    return status_error(st, STATUS_VERIFY_ERROR, "custom-call %s (%s): expects %s of %s", inst->name, target,
                        form_of(c->routine), type_name(c->type));
  if (!read_options(inst, c, st)) return false;
  Check check = {.batch = a, .batch_rank = a->rank - 2, .ok = true};
  c->m = matrix_rows(a);
  c->n = matrix_cols(a);
  c->k = c->m < c->n ? c->m : c->n;
  c->batches = 1;
  for (int d = 0; d < a->rank - 2; d++) c->batches *= a->dims[d];
  c->operand_count = inst->operand_count;
  c->operand_values[0] = c->m * c->n;
  c->operand_batched[0] = true;
  if (!read_shapes(inst, c, &check))
    return status_error(st, STATUS_VERIFY_ERROR, "custom-call %s (%s): expects %s of %s", inst->name, target,
                        form_of(c->routine), type_name(c->type));
  return true;
}

/* ---- one batch element ---- */

static void copy_values(LapackValue *to, const LapackValue *from, int64_t count) {
  if (count > 0) memcpy(to, from, sizeof *to * (size_t)count);
}

int32_t lapack_call_run(const LapackCall *c, const LapackValue *const *in, LapackValue *const *out) {
  int64_t m = c->m, n = c->n;
  switch (c->routine) {
  case LAPACK_POTRF:
    copy_values(out[0], in[0], n * n);
    return lapack_potrf(out[0], n, c->lower);
  case LAPACK_GEQRF:
    copy_values(out[0], in[0], m * n);
    lapack_geqrf(out[0], m, n, out[1]);
    return 0;
  case LAPACK_ORGQR:
    copy_values(out[0], in[0], m * n);
    lapack_orgqr(out[0], m, n, c->k, in[1]);
    return 0;
  case LAPACK_SYEVD: {
    copy_values(out[0], in[0], n * n);
    double *w = mem_calloc((size_t)n + 1, sizeof *w);
    int32_t info = lapack_heev(out[0], n, c->lower, c->vectors, w);
    for (int64_t i = 0; i < n; i++) out[1][i] = w[i];
    mem_free(w);
    return info;
  }
  case LAPACK_GESDD: {
    copy_values(out[0], in[0], m * n);
    double *s = mem_calloc((size_t)c->k + 1, sizeof *s);
    for (int64_t i = 0; i < c->result_values[2]; i++) out[2][i] = 0;
    for (int64_t i = 0; i < c->result_values[3]; i++) out[3][i] = 0;
    int32_t info = lapack_gesdd(in[0], m, n, s, out[2], c->u_cols, out[3], c->vt_rows);
    for (int64_t i = 0; i < c->k; i++) out[1][i] = s[i];
    mem_free(s);
    return info;
  }
  case LAPACK_TRSM: {
    int64_t count = c->rows * c->cols;
    copy_values(out[0], in[1], count);
    if (c->operand_count == 3)
      for (int64_t i = 0; i < count; i++) out[0][i] *= in[2][0];
    lapack_trsm(in[0], out[0], c->rows, c->cols, c->left_side, c->lower, c->transpose, c->unit_diagonal);
    return 0;
  }
  default: return 0;
  }
}
