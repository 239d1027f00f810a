/* The CPU backend's dense linear algebra: runtime routines (CPU_STEP_CALL
 * steps) for cholesky, triangular-solve and the LAPACK custom-calls JAX's
 * CPU lowering emits for jnp.linalg: the LU factorization
 * (lapack_sgetrf_ffi, lapack_dgetrf_ffi) here, and potrf, geqrf, orgqr,
 * syevd, gesdd and trsm through the evaluator's own code (src/ir/lapack.h)
 * on each batch element. Each works on the batch of matrices in the minor-most
 * two dimensions, in double (double complex), rounding each output once,
 * with the evaluator's definitions (src/ir/eval/eval_linalg.c,
 * eval_custom_call.c), which follow XLA's expanders and LAPACK.
 *
 * Batch elements are independent: each is one task on the pool, so every
 * thread count writes the same bytes. */
#include "complex_compat.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "ir/lapack.h"
#include "ir/linalg_plan.h"

typedef double complex Complex;

static double load_real(ElementType t, const void *data, int64_t i) {
  return t == TYPE_F32 ? ((const float *)data)[i] : ((const double *)data)[i];
}

static void store_real(ElementType t, void *data, int64_t i, double v) {
  if (t == TYPE_F32) ((float *)data)[i] = (float)v;
  else ((double *)data)[i] = v;
}

static Complex load_complex(ElementType t, const void *data, int64_t i) {
  if (t == TYPE_C64) return CMPLX(((const float *)data)[2 * i], ((const float *)data)[2 * i + 1]);
  return CMPLX(((const double *)data)[2 * i], ((const double *)data)[2 * i + 1]);
}

static void store_complex(ElementType t, void *data, int64_t i, Complex v) {
  if (t == TYPE_C64) {
    ((float *)data)[2 * i] = (float)creal(v);
    ((float *)data)[2 * i + 1] = (float)cimag(v);
  } else {
    ((double *)data)[2 * i] = creal(v);
    ((double *)data)[2 * i + 1] = cimag(v);
  }
}

/* What every routine here knows of its instruction. */
typedef struct LinalgState {
  ElementType type;
  int64_t batches;
  int64_t m, n;                /* cholesky: n x n; getrf: m x n */
  bool lower;
} LinalgState;

typedef struct LinalgRun {
  const LinalgState *state;
  void *const *buffers;
} LinalgRun;

/* A call step on the operands and the leaves of the result, in order. */
static bool add_linalg_step(CpuCompile *c, const Instruction *inst, int leaves, const LinalgState *s, TaskFn *task);

/* ---- cholesky ---- */

/* One batch element, by the plan (src/ir/linalg_plan.h). */
static void cholesky_task_run(void *context, int64_t b) {
  const LinalgRun *run = context;
  const LinalgState *s = run->state;
  CholeskyPlan plan = {.batches = s->batches, .n = s->n, .lower = s->lower};
  int64_t size = s->n * s->n, base = b * size;
  if (type_is_complex(s->type)) {
    Complex *a = mem_calloc((size_t)size, sizeof *a), *l = mem_calloc((size_t)size, sizeof *l);
    Complex *out = mem_calloc((size_t)size, sizeof *out);
    for (int64_t i = 0; i < size; i++) a[i] = load_complex(s->type, run->buffers[0], base + i);
    cholesky_run_complex(&plan, a, l, out);
    for (int64_t i = 0; i < size; i++) store_complex(s->type, run->buffers[1], base + i, out[i]);
    mem_free(a);
    mem_free(l);
    mem_free(out);
    return;
  }
  double *a = mem_calloc((size_t)size, sizeof *a), *l = mem_calloc((size_t)size, sizeof *l);
  double *out = mem_calloc((size_t)size, sizeof *out);
  for (int64_t i = 0; i < size; i++) a[i] = load_real(s->type, run->buffers[0], base + i);
  cholesky_run(&plan, a, l, out);
  for (int64_t i = 0; i < size; i++) store_real(s->type, run->buffers[1], base + i, out[i]);
  mem_free(a);
  mem_free(l);
  mem_free(out);
}

static bool type_is_linalg_float(ElementType t) { return t == TYPE_F32 || t == TYPE_F64; }

static const char *cholesky_refusal(const Instruction *inst) {
  const Shape *a = &inst->operands[0]->shape;
  CholeskyPlan plan;
  if (!cholesky_plan_make(a, &inst->shape, inst->attrs.lower, &plan) || a->type != inst->shape.type)
    return "a cholesky whose operand is not a batch of square matrices like its result";
  if (!type_is_linalg_float(a->type) && a->type != TYPE_C64 && a->type != TYPE_C128)
    return "a cholesky of this element type";
  return NULL;
}

bool cpu_compile_cholesky(CpuCompile *c, const Instruction *inst) {
  const Shape *a = &inst->operands[0]->shape;
  CholeskyPlan plan;
  cholesky_plan_make(a, &inst->shape, inst->attrs.lower, &plan);  /* cholesky_refusal found no problem */
  LinalgState s = {.type = a->type, .batches = plan.batches, .n = plan.n, .lower = plan.lower};
  return add_linalg_step(c, inst, 1, &s, cholesky_task_run);
}

/* ---- triangular-solve ---- */

/* What a triangular-solve step knows: its plan (src/ir/linalg_plan.h). */
typedef struct SolveStep {
  TriangularSolvePlan plan;
  ElementType type;
} SolveStep;

typedef struct SolveRun {
  const SolveStep *step;
  void *const *buffers;   /* a, b, x */
} SolveRun;

static void triangular_solve_task_run(void *context, int64_t b) {
  const SolveRun *run = context;
  const TriangularSolvePlan *p = &run->step->plan;
  ElementType t = run->step->type;
  int64_t m = p->m, size = p->rows * p->cols;
  double *a = mem_calloc((size_t)(m * m) + 1, sizeof *a), *x = mem_calloc((size_t)size + 1, sizeof *x);
  for (int64_t i = 0; i < m * m; i++) a[i] = load_real(t, run->buffers[0], b * m * m + i);
  for (int64_t i = 0; i < size; i++) x[i] = load_real(t, run->buffers[1], b * size + i);
  triangular_solve_run(p, a, x);
  for (int64_t i = 0; i < size; i++) store_real(t, run->buffers[2], b * size + i, x[i]);
  mem_free(a);
  mem_free(x);
}

static bool triangular_solve_call(const CpuStep *step, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)st;
  const SolveStep *s = step->state;
  SolveRun run = {s, buffers};
  thread_pool_run(pool, s->plan.batches, triangular_solve_task_run, &run);
  return true;
}

static bool triangular_solve_plan_of(const Instruction *inst, TriangularSolvePlan *plan) {
  const Shape *a = &inst->operands[0]->shape, *b = &inst->operands[1]->shape;
  return triangular_solve_plan_make(a, b, inst->attrs.left_side, inst->attrs.lower,
                                    inst->attrs.transpose_a != TRANSPOSE_A_NO, inst->attrs.unit_diagonal, plan);
}

static const char *triangular_solve_refusal(const Instruction *inst) {
  const Shape *a = &inst->operands[0]->shape, *b = &inst->operands[1]->shape;
  TriangularSolvePlan plan;
  if (!triangular_solve_plan_of(inst, &plan) || !shape_same_dims(b, &inst->shape))
    return "a triangular-solve whose shapes do not fit together";
  if (!type_is_linalg_float(a->type) || b->type != a->type || inst->shape.type != a->type)
    return "a triangular-solve of this element type";
  return NULL;
}

/* triangular-solve(a, b): x with op(a) x = b (left_side) or x op(a) = b;
 * op is identity or transpose (ADJOINT is transpose for reals). */
bool cpu_compile_triangular_solve(CpuCompile *c, const Instruction *inst) {
  const Shape *a = &inst->operands[0]->shape, *b = &inst->operands[1]->shape;
  SolveStep s = {.type = a->type};
  triangular_solve_plan_of(inst, &s.plan);  /* triangular_solve_refusal found no problem */
  if (shape_element_count(a) == 0 || shape_element_count(b) == 0) return true; /* nothing to write */
  SolveStep *step = mem_calloc(1, sizeof *step);
  *step = s;
  return cpu_add_call_step(c, inst, 1, triangular_solve_call, step, mem_free) != NULL;
}

/* ---- getrf (the LAPACK custom-call) ---- */

/* Buffers: a; then the result's leaves: lu, ipiv (s32), info (s32). */
static void getrf_task_run(void *context, int64_t b) {
  const LinalgRun *run = context;
  const LinalgState *s = run->state;
  int64_t m = s->m, n = s->n, steps = m < n ? m : n, base = b * m * n;
  double *work = mem_calloc((size_t)(m * n) + 1, sizeof *work);
  int32_t *ipiv = (int32_t *)run->buffers[2] + b * steps, *info = (int32_t *)run->buffers[3] + b;
  for (int64_t i = 0; i < m * n; i++) work[i] = load_real(s->type, run->buffers[0], base + i);
  *info = (int32_t)linalg_lu_factor(work, m, n, ipiv);
  for (int64_t i = 0; i < m * n; i++) store_real(s->type, run->buffers[1], base + i, work[i]);
  mem_free(work);
}

/* ---- the other LAPACK custom-calls (src/ir/lapack.h) ---- */

/* A LAPACK call's step: what lapack_call_read found, run per batch element. */
typedef struct LapackStep {
  LapackCall call;
} LapackStep;

typedef struct LapackRun {
  const LapackCall *call;
  void *const *buffers;   /* operands, then the result leaves */
} LapackRun;

static LapackValue load_value(ElementType t, const void *data, int64_t i) {
  return type_is_complex(t) ? load_complex(t, data, i) : load_real(t, data, i);
}

/* Batch element b: operands into double complex, lapack_call_run, and each
 * leaf stored in its type (the info leaf as s32). */
static void lapack_task_run(void *context, int64_t b) {
  const LapackRun *run = context;
  const LapackCall *call = run->call;
  LapackValue *in[LAPACK_MAX_OPERANDS] = {0}, *out[LAPACK_MAX_RESULTS] = {0};
  for (int i = 0; i < call->operand_count; i++) {
    int64_t count = call->operand_values[i], base = call->operand_batched[i] ? b * count : 0;
    in[i] = mem_calloc((size_t)count + 1, sizeof(LapackValue));
    for (int64_t e = 0; e < count; e++) in[i][e] = load_value(call->type, run->buffers[i], base + e);
  }
  for (int j = 0; j < call->result_count; j++) out[j] = mem_calloc((size_t)call->result_values[j] + 1, sizeof(LapackValue));
  int32_t info = lapack_call_run(call, (const LapackValue *const *)in, out);
  for (int j = 0; j < call->result_count; j++) {
    void *leaf = run->buffers[call->operand_count + j];
    int64_t count = call->result_values[j];
    ElementType t = call->result_type[j];
    if (!call->result_batched[j]) {
      if (b == 0 && count > 0) memset(leaf, 0, (size_t)(count * type_byte_size(t)));
    } else if (j == call->info_leaf) {
      ((int32_t *)leaf)[b] = info;
    } else {
      for (int64_t e = 0; e < count; e++)
        if (type_is_complex(t)) store_complex(t, leaf, b * count + e, out[j][e]);
        else store_real(t, leaf, b * count + e, creal(out[j][e]));
    }
  }
  for (int i = 0; i < call->operand_count; i++) mem_free(in[i]);
  for (int j = 0; j < call->result_count; j++) mem_free(out[j]);
}

static bool lapack_call(const CpuStep *step, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)st;
  const LapackStep *ls = step->state;
  LapackRun run = {&ls->call, buffers};
  thread_pool_run(pool, ls->call.batches, lapack_task_run, &run);
  return true;
}

/* A getrf's result (a's shape, s32[batch..., min(m,n)], s32[batch...]),
 * of a non-empty matrix: the pivots and info of an empty one are left
 * to the interpreter. */
static const char *getrf_refusal(const Instruction *inst) {
  GetrfPlan plan;
  if (!getrf_plan_make(inst, &plan) || !type_is_linalg_float(inst->operands[0]->shape.type))
    return "a getrf whose result is not (a's shape, s32[batch..., min(m,n)], s32[batch...])";
  for (int i = 0; i < inst->operand_count; i++)
    if (shape_element_count(&inst->operands[i]->shape) == 0) return "a getrf of an empty matrix";
  return NULL;
}

/* Why the CPU refuses a custom-call: one lapack_call_read cannot read
 * (another target than LAPACK's, a malformed call), with its message,
 * which names the call and its target (made into `made`); then getrf's
 * forms. */
static const char *custom_call_refusal(const Instruction *inst, Status *made) {
  LapackCall call;
  if (!lapack_call_read(inst, &call, made)) return made->message;
  return call.routine == LAPACK_GETRF ? getrf_refusal(inst) : NULL;
}

const char *cpu_linalg_refusal(const Instruction *inst, Status *made) {
  switch (inst->opcode) {
  case OP_CHOLESKY: return cholesky_refusal(inst);
  case OP_TRIANGULAR_SOLVE: return triangular_solve_refusal(inst);
  default: return custom_call_refusal(inst, made);
  }
}

bool cpu_compile_custom_call(CpuCompile *c, const Instruction *inst) {
  LapackCall call;
  Status st = {0};
  lapack_call_read(inst, &call, &st);  /* custom_call_refusal read it before any code was made */
  if (call.routine != LAPACK_GETRF) {
    /* An empty matrix reads nothing and writes only info (0). */
    if (call.batches == 0) return true; /* nothing to write */
    LapackStep *ls = mem_calloc(1, sizeof *ls);
    ls->call = call;
    return cpu_add_call_step(c, inst, inst->shape.type == TYPE_TUPLE ? call.result_count : 1, lapack_call, ls, mem_free) != NULL;
  }
  GetrfPlan plan;
  getrf_plan_make(inst, &plan);  /* getrf_refusal found no problem */
  LinalgState s = {.type = inst->operands[0]->shape.type, .batches = plan.batches, .m = plan.m, .n = plan.n};
  return add_linalg_step(c, inst, 3, &s, getrf_task_run);
}

/* ---- steps ---- */

typedef struct LinalgStep {
  LinalgState state;
  TaskFn *task;
} LinalgStep;

static bool linalg_call(const CpuStep *step, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)st;
  const LinalgStep *ls = step->state;
  LinalgRun run = {&ls->state, buffers};
  thread_pool_run(pool, ls->state.batches, ls->task, &run);
  return true;
}

static bool add_linalg_step(CpuCompile *c, const Instruction *inst, int leaves, const LinalgState *s, TaskFn *task) {
  bool empty = false;  /* (getrf_refusal refused an empty getrf) */
  for (int i = 0; i < inst->operand_count; i++) empty |= shape_element_count(&inst->operands[i]->shape) == 0;
  if (empty || s->batches == 0) return true;  /* nothing to write */
  LinalgStep *ls = mem_calloc(1, sizeof *ls);
  ls->state = *s;
  ls->task = task;
  return cpu_add_call_step(c, inst, leaves, linalg_call, ls, mem_free) != NULL;
}
