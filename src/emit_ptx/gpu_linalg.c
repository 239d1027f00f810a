/* The GPU backend's linear algebra: cholesky, triangular-solve, and JAX's
 * LU custom call (lapack_sgetrf_ffi / lapack_dgetrf_ffi) and real
 * triangular solve (lapack_strsm_ffi / lapack_dtrsm_ffi).
 *
 * Each is a serial kernel: one thread per matrix (cholesky, LU) or per
 * solved vector (triangular-solve) runs the reference evaluator's loops
 * (src/ir/numeric_routines.c, src/ir/eval/eval_linalg.c) in the same
 * order, in f64, on an f64 copy in scratch memory (gpu_reserve_temp), and
 * rounds each output once, as the evaluator does. Every f64 operation is
 * the IEEE one (.rn, no fused multiply-add), so the results are the
 * evaluator's bits. The batch dimensions run grid-stride, so any grid is
 * correct; threads share no data, so there are no races. Small matrices
 * are what HLO modules hold these ops for (the factorizations JAX calls
 * LAPACK for on a CPU); a blocked, many-thread version is the way to
 * large ones. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_serial.h"
#include "ir/lapack.h"
#include "ir/linalg_plan.h"

enum { LINALG_BLOCK = 64, LINALG_MAX_GRID = 1 << 20 };

/* A value in f64: re only for reals, re and im for complex numbers. */
typedef struct Value {
  PtxReg re, im;
  bool complex;
} Value;

static Value value_load(PtxBuilder *b, PtxReg base, PtxReg index, ElementType t) {
  Value v = {.re = ptx_serial_load(b, base, index, t, 0), .complex = type_is_complex(t)};
  if (v.complex) v.im = ptx_serial_load(b, base, index, t, 1);
  return v;
}

static void value_store(PtxBuilder *b, PtxReg base, PtxReg index, ElementType t, Value v) {
  ptx_serial_store(b, base, index, t, 0, v.re);
  if (type_is_complex(t)) ptx_serial_store(b, base, index, t, 1, v.im);
}

/* acc -= x * conj(y) (complex, as C's complex multiply rounds it) or
 * acc -= x * y (real). */
static void value_sub_product(PtxBuilder *b, Value acc, Value x, Value y, bool conjugate_y) {
  PtxReg p1 = ptx_reg_new(b, PTX_F64);
  ptx_inst(b, "mul.rn.f64 $r, $r, $r", p1, x.re, y.re);
  if (!acc.complex) {
    ptx_inst(b, "sub.rn.f64 $r, $r, $r", acc.re, acc.re, p1);
    return;
  }
  PtxReg yi = y.im;
  if (conjugate_y) {
    yi = ptx_reg_new(b, PTX_F64);
    ptx_inst(b, "neg.f64 $r, $r", yi, y.im);
  }
  PtxReg p2 = ptx_reg_new(b, PTX_F64), re = ptx_reg_new(b, PTX_F64);
  ptx_inst(b, "mul.rn.f64 $r, $r, $r", p2, x.im, yi);
  ptx_inst(b, "sub.rn.f64 $r, $r, $r", re, p1, p2);
  ptx_inst(b, "sub.rn.f64 $r, $r, $r", acc.re, acc.re, re);
  PtxReg p3 = ptx_reg_new(b, PTX_F64), p4 = ptx_reg_new(b, PTX_F64), im = ptx_reg_new(b, PTX_F64);
  ptx_inst(b, "mul.rn.f64 $r, $r, $r", p3, x.re, yi);
  ptx_inst(b, "mul.rn.f64 $r, $r, $r", p4, x.im, y.re);
  ptx_inst(b, "add.rn.f64 $r, $r, $r", im, p3, p4);
  ptx_inst(b, "sub.rn.f64 $r, $r, $r", acc.im, acc.im, im);
}

/* A fresh copy of v divided (each part) by a real divisor. */
static Value value_div_real(PtxBuilder *b, Value v, PtxReg divisor) {
  Value q = {.re = ptx_reg_new(b, PTX_F64), .complex = v.complex};
  ptx_inst(b, "div.rn.f64 $r, $r, $r", q.re, v.re, divisor);
  if (v.complex) {
    q.im = ptx_reg_new(b, PTX_F64);
    ptx_inst(b, "div.rn.f64 $r, $r, $r", q.im, v.im, divisor);
  }
  return q;
}

/* A fresh register copy (loads give fresh registers; accumulators must not
 * alias a value that is read again). */
static Value value_copy(PtxBuilder *b, Value v) {
  Value c = {.re = ptx_reg_new(b, PTX_F64), .complex = v.complex};
  ptx_inst(b, "mov.f64 $r, $r", c.re, v.re);
  if (v.complex) {
    c.im = ptx_reg_new(b, PTX_F64);
    ptx_inst(b, "mov.f64 $r, $r", c.im, v.im);
  }
  return c;
}

/* row * n + col + base, an element index of an n-column matrix. */
static PtxReg matrix_index(PtxBuilder *b, PtxReg base, PtxReg row, int64_t n, PtxReg col) {
  PtxReg at = ptx_serial_mad(b, row, n, col);
  ptx_inst(b, "add.s64 $r, $r, $r", at, at, base);
  return at;
}

static unsigned grid_for(int64_t items) {
  int64_t blocks = (items + LINALG_BLOCK - 1) / LINALG_BLOCK;
  return (unsigned)(blocks < 1 ? 1 : blocks < LINALG_MAX_GRID ? blocks : LINALG_MAX_GRID);
}

static void kernel_open(PtxBuilder *b, const char *entry, const char *what, const char *const *params, int count,
                        PtxReg *pointers) {
  ptx_kernel_begin(b, entry, what);
  for (int i = 0; i < count; i++) ptx_kernel_param(b, PTX_U64, params[i]);
  ptx_kernel_set_max_threads(b, LINALG_BLOCK);
  for (int i = 0; i < count; i++) pointers[i] = ptx_param_load_global_pointer(b, params[i]);
}

static void kernel_close(PtxBuilder *b) {
  ptx_inst(b, "ret");
  ptx_kernel_end(b);
}

/* ------------------------------------------------------------- cholesky */

/* The plan (src/ir/linalg_plan.h) and the element types. */
typedef struct CholeskyKernel {
  int64_t n;
  bool lower;
  ElementType type, work_type;  /* work: f64 or c128 */
} CholeskyKernel;

/* Column j of L (linalg_cholesky_factor, or its complex form): the
 * updated diagonal d, root = sqrt(re d), L[j][j] = d/root (root for a 1x1
 * matrix), then L[i][j] for i > j. `bad` becomes nonzero on a NaN root. */
static void cholesky_column(PtxBuilder *b, const CholeskyKernel *q, PtxReg a, PtxReg work, PtxReg base, PtxReg j,
                            PtxReg bad) {
  PtxReg zero = ptx_serial_s64(b, 0), n = ptx_serial_s64(b, q->n);
  Value d = value_copy(b, value_load(b, a, matrix_index(b, base, j, q->n, j), q->type));
  SerialLoop k = ptx_serial_loop_begin(b, zero, j, NULL);
  Value ljk = value_load(b, work, matrix_index(b, base, j, q->n, k.var), q->work_type);
  value_sub_product(b, d, ljk, ljk, true);
  ptx_serial_loop_end(b, &k);
  PtxReg root = ptx_reg_new(b, PTX_F64), is_nan = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "sqrt.rn.f64 $r, $r", root, d.re);
  ptx_inst(b, "setp.nan.f64 $r, $r, $r", is_nan, root, root);
  ptx_inst(b, "@$r mov.s64 $r, 1", is_nan, bad);
  Value diag = {.re = root, .im = ptx_serial_f64(b, 0.0), .complex = d.complex};
  if (q->n != 1) diag = value_div_real(b, d, root);
  value_store(b, work, matrix_index(b, base, j, q->n, j), q->work_type, diag);
  PtxReg below = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "add.s64 $r, $r, 1", below, j);
  SerialLoop i = ptx_serial_loop_begin(b, below, n, NULL);
  PtxReg from = q->lower ? matrix_index(b, base, i.var, q->n, j) : matrix_index(b, base, j, q->n, i.var);
  Value v = value_copy(b, value_load(b, a, from, q->type));
  SerialLoop k2 = ptx_serial_loop_begin(b, zero, j, NULL);
  Value lik = value_load(b, work, matrix_index(b, base, i.var, q->n, k2.var), q->work_type);
  Value ljk2 = value_load(b, work, matrix_index(b, base, j, q->n, k2.var), q->work_type);
  value_sub_product(b, v, lik, ljk2, true);
  ptx_serial_loop_end(b, &k2);
  value_store(b, work, matrix_index(b, base, i.var, q->n, j), q->work_type, value_div_real(b, v, root));
  ptx_serial_loop_end(b, &i);
}

/* Params a, out, work: one thread per matrix. */
static void emit_cholesky(PtxBuilder *b, const char *entry, const CholeskyKernel *q, int64_t batches) {
  static const char *const params[] = {"a", "out", "work"};
  PtxReg p[3];
  kernel_open(b, entry, "cholesky: a thread per matrix, column by column in f64", params, 3, p);
  SerialLoop m = ptx_serial_grid_loop_begin(b, batches);
  PtxReg base = ptx_reg_new(b, PTX_S64), bad = ptx_serial_s64(b, 0);
  PtxReg zero = ptx_serial_s64(b, 0), n = ptx_serial_s64(b, q->n), size = ptx_serial_s64(b, q->n * q->n);
  ptx_inst(b, "mul.lo.s64 $r, $r, $D", base, m.var, q->n * q->n);
  Value nothing = {
      .re = ptx_serial_f64(b, 0.0), .im = ptx_serial_f64(b, 0.0), .complex = type_is_complex(q->type)};
  SerialLoop clear = ptx_serial_loop_begin(b, zero, size, NULL);
  PtxReg at = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "add.s64 $r, $r, $r", at, base, clear.var);
  value_store(b, p[2], at, q->work_type, nothing);
  ptx_serial_loop_end(b, &clear);
  SerialLoop j = ptx_serial_loop_begin(b, zero, n, NULL);
  cholesky_column(b, q, p[0], p[2], base, j.var, bad);
  ptx_serial_loop_end(b, &j);
  /* out[i][j] = L[i][j] (lower) or L[j][i] (upper); all NaN when not
   * positive definite. */
  PtxReg failed = ptx_reg_new(b, PTX_PRED), nan = ptx_serial_f64(b, NAN);
  ptx_inst(b, "setp.ne.s64 $r, $r, 0", failed, bad);
  SerialLoop r = ptx_serial_loop_begin(b, zero, n, NULL);
  SerialLoop c = ptx_serial_loop_begin(b, zero, n, NULL);
  PtxReg from = q->lower ? matrix_index(b, base, r.var, q->n, c.var) : matrix_index(b, base, c.var, q->n, r.var);
  Value v = value_load(b, p[2], from, q->work_type);
  ptx_inst(b, "@$r mov.f64 $r, $r", failed, v.re, nan);
  if (v.complex) ptx_inst(b, "@$r mov.f64 $r, $r", failed, v.im, nan);
  value_store(b, p[1], matrix_index(b, base, r.var, q->n, c.var), q->type, v);
  ptx_serial_loop_end(b, &c);
  ptx_serial_loop_end(b, &r);
  ptx_serial_loop_end(b, &m);
  kernel_close(b);
}

static bool compile_cholesky(GpuCompile *c, const Instruction *inst) {
  const Shape *a = &inst->operands[0]->shape;
  CholeskyPlan plan;
  cholesky_plan_make(a, &inst->shape, inst->attrs.lower, &plan);  /* gpu_linalg_refusal found it fits */
  CholeskyKernel q = {.n = plan.n, .lower = plan.lower, .type = a->type};
  q.work_type = type_is_complex(a->type) ? TYPE_C128 : TYPE_F64;
  int64_t batches = plan.batches, elements = shape_element_count(a);
  if (elements == 0) return true;
  int buffers[3] = {gpu_binding_of(c, inst->operands[0], 0), gpu_binding_of(c, inst, 0), -1};
  buffers[2] = gpu_reserve_temp(c, elements * type_byte_size(q.work_type));
  char entry[160];
  gpu_entry_name(c, inst, "cholesky", entry, sizeof entry);
  emit_cholesky(c->ptx, entry, &q, batches);
  return gpu_add_launch(c, inst, entry, grid_for(batches), LINALG_BLOCK, buffers, 3, NULL, 0) != NULL;
}

/* ----------------------------------------------------- triangular-solve */

/* The plan (src/ir/linalg_plan.h) and the element type of a and b. */
typedef struct SolvePlan {
  TriangularSolvePlan plan;
  ElementType type;
} SolvePlan;

/* x[i] = (x[i] - sum over t's triangle of t[i][k] x[k]) / t[i][i], with
 * t = op(a) read as triangular_solve_run (src/ir/linalg_plan.c) reads it,
 * k ascending: t[i][k] is a[k][i] when transposed, and a unit diagonal is
 * not divided by. */
static void solve_step(PtxBuilder *b, const SolvePlan *q, PtxReg a, PtxReg work, PtxReg a_base, PtxReg x_base,
                       PtxReg step) {
  PtxReg i = step;
  if (!q->plan.t_lower) {
    i = ptx_reg_new(b, PTX_S64);
    ptx_inst(b, "sub.s64 $r, $D, $r", i, q->plan.m - 1, step);
  }
  PtxReg xi = ptx_serial_mad(b, i, q->plan.element_stride, x_base);
  Value s = value_copy(b, value_load(b, work, xi, TYPE_F64));
  PtxReg start = ptx_serial_s64(b, 0), end = i;
  if (!q->plan.t_lower) {
    start = ptx_reg_new(b, PTX_S64);
    ptx_inst(b, "add.s64 $r, $r, 1", start, i);
    end = ptx_serial_s64(b, q->plan.m);
  }
  SerialLoop k = ptx_serial_loop_begin(b, start, end, NULL);
  PtxReg t_at = q->plan.transpose ? matrix_index(b, a_base, k.var, q->plan.m, i) : matrix_index(b, a_base, i, q->plan.m, k.var);
  Value t = value_load(b, a, t_at, q->type);
  Value x = value_load(b, work, ptx_serial_mad(b, k.var, q->plan.element_stride, x_base), TYPE_F64);
  value_sub_product(b, s, t, x, false);
  ptx_serial_loop_end(b, &k);
  if (!q->plan.unit_diagonal) s = value_div_real(b, s, value_load(b, a, matrix_index(b, a_base, i, q->plan.m, i), q->type).re);
  value_store(b, work, xi, TYPE_F64, s);
}

/* Params a, b, out, work: one thread per solved vector. */
static void emit_solve(PtxBuilder *b, const char *entry, const SolvePlan *q, int64_t batches) {
  static const char *const params[] = {"a", "b", "out", "work"};
  PtxReg p[4];
  kernel_open(b, entry, "triangular-solve: a thread per solved vector, by substitution in f64", params, 4, p);
  SerialLoop v = ptx_serial_grid_loop_begin(b, batches * q->plan.vectors);
  PtxReg matrix = ptx_reg_new(b, PTX_S64), vector = ptx_reg_new(b, PTX_S64), a_base = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "div.s64 $r, $r, $D", matrix, v.var, q->plan.vectors);
  ptx_inst(b, "rem.s64 $r, $r, $D", vector, v.var, q->plan.vectors);
  ptx_inst(b, "mul.lo.s64 $r, $r, $D", a_base, matrix, q->plan.m * q->plan.m);
  PtxReg x_base = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "mul.lo.s64 $r, $r, $D", x_base, matrix, q->plan.rows * q->plan.cols);
  x_base = ptx_serial_mad(b, vector, q->plan.vector_stride, x_base);
  PtxReg zero = ptx_serial_s64(b, 0), m = ptx_serial_s64(b, q->plan.m);
  SerialLoop load = ptx_serial_loop_begin(b, zero, m, NULL);
  PtxReg at = ptx_serial_mad(b, load.var, q->plan.element_stride, x_base);
  value_store(b, p[3], at, TYPE_F64, value_load(b, p[1], at, q->type));
  ptx_serial_loop_end(b, &load);
  SerialLoop step = ptx_serial_loop_begin(b, zero, m, NULL);
  solve_step(b, q, p[0], p[3], a_base, x_base, step.var);
  ptx_serial_loop_end(b, &step);
  SerialLoop store = ptx_serial_loop_begin(b, zero, m, NULL);
  PtxReg to = ptx_serial_mad(b, store.var, q->plan.element_stride, x_base);
  value_store(b, p[2], to, q->type, value_load(b, p[3], to, TYPE_F64));
  ptx_serial_loop_end(b, &store);
  ptx_serial_loop_end(b, &v);
  kernel_close(b);
}

/* One solve per batch element of x (a's and x's batches alike), with the
 * options of HLO's triangular-solve (transpose: op(a) is a^T; ADJOINT is
 * TRANSPOSE for reals) or of LAPACK's trsm, which mean the same. */
static const char *solve_refusal(const Instruction *inst, const Shape *x, bool left_side, bool lower, bool transpose,
                                 bool unit) {
  const Shape *a = &inst->operands[0]->shape;
  if (a->type != TYPE_F32 && a->type != TYPE_F64) return "a triangular solve that is not f32 or f64";
  TriangularSolvePlan plan;
  if (!triangular_solve_plan_make(a, x, left_side, lower, transpose, unit, &plan))
    return "a triangular-solve whose a and b do not fit together";
  return NULL;
}

static bool launch_solve(GpuCompile *c, const Instruction *inst, const Shape *x, bool left_side, bool lower,
                         bool transpose, bool unit) {
  const Shape *a = &inst->operands[0]->shape;
  SolvePlan q = {.type = a->type};
  triangular_solve_plan_make(a, x, left_side, lower, transpose, unit, &q.plan);  /* solve_refusal found it fits */
  int64_t elements = shape_element_count(x);
  if (elements == 0) return true;
  int buffers[4] = {gpu_binding_of(c, inst->operands[0], 0), gpu_binding_of(c, inst->operands[1], 0),
                    gpu_binding_of(c, inst, 0), gpu_reserve_temp(c, 8 * elements)};
  char entry[160];
  gpu_entry_name(c, inst, "solve", entry, sizeof entry);
  emit_solve(c->ptx, entry, &q, q.plan.batches);
  return gpu_add_launch(c, inst, entry, grid_for(q.plan.batches * q.plan.vectors), LINALG_BLOCK, buffers, 4, NULL, 0) != NULL;
}

static const char *triangular_solve_refusal(const Instruction *inst) {
  const Shape *a = &inst->operands[0]->shape, *x = &inst->operands[1]->shape;
  if (!shape_same_dims(x, &inst->shape) || a->type != x->type || x->type != inst->shape.type)
    return "a triangular-solve whose a and b do not fit together";
  return solve_refusal(inst, x, inst->attrs.left_side, inst->attrs.lower, inst->attrs.transpose_a != TRANSPOSE_A_NO,
                       inst->attrs.unit_diagonal);
}

static bool compile_triangular_solve(GpuCompile *c, const Instruction *inst) {
  const Shape *x = &inst->operands[1]->shape;
  return launch_solve(c, inst, x, inst->attrs.left_side, inst->attrs.lower, inst->attrs.transpose_a != TRANSPOSE_A_NO,
                      inst->attrs.unit_diagonal);
}

/* ------------------------------------------------------------ LU (getrf) */

typedef struct LuPlan {
  int64_t m, n, steps;
  ElementType type;
} LuPlan;

/* Swaps rows j and pivot (all n columns) of the work matrix. */
static void lu_swap_rows(PtxBuilder *b, const LuPlan *q, PtxReg work, PtxReg base, PtxReg j, PtxReg pivot) {
  PtxReg zero = ptx_serial_s64(b, 0), n = ptx_serial_s64(b, q->n);
  SerialLoop k = ptx_serial_loop_begin(b, zero, n, NULL);
  PtxReg at_p = matrix_index(b, base, pivot, q->n, k.var), at_j = matrix_index(b, base, j, q->n, k.var);
  PtxReg vp = ptx_serial_load(b, work, at_p, TYPE_F64, 0), vj = ptx_serial_load(b, work, at_j, TYPE_F64, 0);
  ptx_serial_store(b, work, at_p, TYPE_F64, 0, vj);
  ptx_serial_store(b, work, at_j, TYPE_F64, 0, vp);
  ptx_serial_loop_end(b, &k);
}

/* The first row at or below j with the largest |w[i][j]| (linalg_lu_factor). */
static PtxReg lu_pivot_row(PtxBuilder *b, const LuPlan *q, PtxReg work, PtxReg base, PtxReg j, PtxReg below) {
  PtxReg pivot = ptx_reg_new(b, PTX_S64), best = ptx_reg_new(b, PTX_F64), m = ptx_serial_s64(b, q->m);
  ptx_inst(b, "mov.s64 $r, $r", pivot, j);
  ptx_inst(b, "abs.f64 $r, $r", best,
           ptx_serial_load(b, work, matrix_index(b, base, j, q->n, j), TYPE_F64, 0));
  SerialLoop i = ptx_serial_loop_begin(b, below, m, NULL);
  PtxReg size = ptx_reg_new(b, PTX_F64), larger = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "abs.f64 $r, $r", size, ptx_serial_load(b, work, matrix_index(b, base, i.var, q->n, j), TYPE_F64, 0));
  ptx_inst(b, "setp.gt.f64 $r, $r, $r", larger, size, best);
  ptx_inst(b, "@$r mov.s64 $r, $r", larger, pivot, i.var);
  ptx_inst(b, "@$r mov.f64 $r, $r", larger, best, size);
  ptx_serial_loop_end(b, &i);
  return pivot;
}

/* Step j: pivot, record ipiv, swap and scale (or note a zero pivot in
 * info), then the trailing update, all as linalg_lu_factor orders them. */
static void lu_step(PtxBuilder *b, const LuPlan *q, const PtxReg *p, PtxReg base, PtxReg matrix, PtxReg j,
                    PtxReg info) {
  PtxReg work = p[4], m = ptx_serial_s64(b, q->m), n = ptx_serial_s64(b, q->n),
         below = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "add.s64 $r, $r, 1", below, j);
  PtxReg pivot = lu_pivot_row(b, q, work, base, j, below);
  PtxReg one_based = ptx_reg_new(b, PTX_S64), word = ptx_reg_new(b, PTX_S32);
  ptx_inst(b, "add.s64 $r, $r, 1", one_based, pivot);
  ptx_inst(b, "cvt.u32.u64 $r, $r", word, one_based);
  PtxReg ipiv_at = ptx_element_address(b, p[2], ptx_serial_mad(b, matrix, q->steps, j), 4);
  ptx_inst(b, "st.global.s32 [$r], $r", ipiv_at, word);
  PtxReg nonzero = ptx_reg_new(b, PTX_PRED), same = ptx_reg_new(b, PTX_PRED), unset = ptx_reg_new(b, PTX_PRED);
  PtxLabel zero_pivot = ptx_label_new(b, "zero_pivot"), update = ptx_label_new(b, "update"),
           no_swap = ptx_label_new(b, "no_swap");
  /* C's a != 0 is true for NaN: the unordered compare. */
  ptx_inst(b, "setp.neu.f64 $r, $r, 0d0000000000000000", nonzero,
           ptx_serial_load(b, work, matrix_index(b, base, pivot, q->n, j), TYPE_F64, 0));
  ptx_inst(b, "@!$r bra $l", nonzero, zero_pivot);
  ptx_inst(b, "setp.eq.s64 $r, $r, $r", same, pivot, j);
  ptx_inst(b, "@$r bra $l", same, no_swap);
  lu_swap_rows(b, q, work, base, j, pivot);
  ptx_label_place(b, no_swap);
  PtxReg diagonal = ptx_serial_load(b, work, matrix_index(b, base, j, q->n, j), TYPE_F64, 0);
  SerialLoop i = ptx_serial_loop_begin(b, below, m, NULL);
  PtxReg at = matrix_index(b, base, i.var, q->n, j), scaled = ptx_reg_new(b, PTX_F64);
  ptx_inst(b, "div.rn.f64 $r, $r, $r", scaled, ptx_serial_load(b, work, at, TYPE_F64, 0), diagonal);
  ptx_serial_store(b, work, at, TYPE_F64, 0, scaled);
  ptx_serial_loop_end(b, &i);
  ptx_inst(b, "bra.uni $l", update);
  ptx_label_place(b, zero_pivot);
  ptx_inst(b, "setp.eq.s64 $r, $r, 0", unset, info);
  ptx_inst(b, "@$r add.s64 $r, $r, 1", unset, info, j);
  ptx_label_place(b, update);
  SerialLoop r = ptx_serial_loop_begin(b, below, m, NULL);
  PtxReg factor = ptx_serial_load(b, work, matrix_index(b, base, r.var, q->n, j), TYPE_F64, 0);
  SerialLoop k = ptx_serial_loop_begin(b, below, n, NULL);
  PtxReg at_rk = matrix_index(b, base, r.var, q->n, k.var), product = ptx_reg_new(b, PTX_F64);
  PtxReg value = ptx_serial_load(b, work, at_rk, TYPE_F64, 0), updated = ptx_reg_new(b, PTX_F64);
  ptx_inst(b, "mul.rn.f64 $r, $r, $r", product, factor,
           ptx_serial_load(b, work, matrix_index(b, base, j, q->n, k.var), TYPE_F64, 0));
  ptx_inst(b, "sub.rn.f64 $r, $r, $r", updated, value, product);
  ptx_serial_store(b, work, at_rk, TYPE_F64, 0, updated);
  ptx_serial_loop_end(b, &k);
  ptx_serial_loop_end(b, &r);
}

/* Params a, lu, ipiv, info, work: one thread per matrix. */
static void emit_lu(PtxBuilder *b, const char *entry, const LuPlan *q, int64_t batches) {
  static const char *const params[] = {"a", "lu", "ipiv", "info", "work"};
  PtxReg p[5];
  kernel_open(b, entry, "getrf: LU with partial pivoting, a thread per matrix, in f64", params, 5, p);
  SerialLoop matrix = ptx_serial_grid_loop_begin(b, batches);
  PtxReg base = ptx_reg_new(b, PTX_S64), zero = ptx_serial_s64(b, 0), size = ptx_serial_s64(b, q->m * q->n);
  ptx_inst(b, "mul.lo.s64 $r, $r, $D", base, matrix.var, q->m * q->n);
  SerialLoop load = ptx_serial_loop_begin(b, zero, size, NULL);
  PtxReg at = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "add.s64 $r, $r, $r", at, base, load.var);
  ptx_serial_store(b, p[4], at, TYPE_F64, 0, ptx_serial_load(b, p[0], at, q->type, 0));
  ptx_serial_loop_end(b, &load);
  PtxReg info = ptx_serial_s64(b, 0), steps = ptx_serial_s64(b, q->steps);
  SerialLoop j = ptx_serial_loop_begin(b, zero, steps, NULL);
  lu_step(b, q, p, base, matrix.var, j.var, info);
  ptx_serial_loop_end(b, &j);
  SerialLoop store = ptx_serial_loop_begin(b, zero, size, NULL);
  PtxReg to = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "add.s64 $r, $r, $r", to, base, store.var);
  ptx_serial_store(b, p[1], to, q->type, 0, ptx_serial_load(b, p[4], to, TYPE_F64, 0));
  ptx_serial_loop_end(b, &store);
  PtxReg word = ptx_reg_new(b, PTX_S32);
  ptx_inst(b, "cvt.u32.u64 $r, $r", word, info);
  ptx_inst(b, "st.global.s32 [$r], $r", ptx_element_address(b, p[3], matrix.var, 4), word);
  ptx_serial_loop_end(b, &matrix);
  kernel_close(b);
}

/* lapack_sgetrf_ffi / lapack_dgetrf_ffi (with or without _ffi): a -> (lu,
 * ipiv s32[batch..., min(m,n)] 1-based, info s32[batch...]). */
static bool is_real_getrf(const char *target) {
  return target && (!strcmp(target, "lapack_sgetrf_ffi") || !strcmp(target, "lapack_dgetrf_ffi") ||
                    !strcmp(target, "lapack_sgetrf") || !strcmp(target, "lapack_dgetrf"));
}

static const char *getrf_refusal(const Instruction *inst) {
  const Shape *a = &inst->operands[0]->shape;
  if (inst->operand_count != 1 || (a->type != TYPE_F32 && a->type != TYPE_F64) || !shape_is_row_major(a))
    return "a getrf custom call whose shapes are not (f32/f64 a) -> (a, ipiv, info)";
  GetrfPlan plan;
  if (!getrf_plan_make(inst, &plan)) return "a getrf custom call whose ipiv or info shape does not fit";
  if (plan.batches == 0 || plan.m == 0 || plan.n == 0) return "a getrf of an empty matrix";
  return NULL;
}

static bool compile_getrf(GpuCompile *c, const Instruction *inst) {
  const Shape *a = &inst->operands[0]->shape;
  GetrfPlan plan;
  getrf_plan_make(inst, &plan);  /* getrf_refusal found it fits */
  LuPlan q = {.m = plan.m, .n = plan.n, .steps = plan.steps, .type = a->type};
  int64_t batches = plan.batches;
  int buffers[5] = {gpu_binding_of(c, inst->operands[0], 0), gpu_binding_of(c, inst, 0), gpu_binding_of(c, inst, 1),
                    gpu_binding_of(c, inst, 2), gpu_reserve_temp(c, 8 * shape_element_count(a))};
  char entry[160];
  gpu_entry_name(c, inst, "getrf", entry, sizeof entry);
  emit_lu(c->ptx, entry, &q, batches);
  return gpu_add_launch(c, inst, entry, grid_for(batches), LINALG_BLOCK, buffers, 5, NULL, 0) != NULL;
}

/* -------------------------------------------------------------- routing */

/* cholesky and triangular-solve: row-major arrays of types the serial
 * kernels compute on, then each one's shapes. */
static const char *routine_refusal(const Instruction *inst) {
  for (int i = 0; i < inst->operand_count; i++) {
    const Shape *s = &inst->operands[i]->shape;
    if (s->type == TYPE_TUPLE || !shape_is_row_major(s)) return "a non-row-major operand";
    if (!ptx_serial_type_ok(s->type)) return "linear algebra on this element type";
  }
  if (shape_is_tuple(&inst->shape) || !shape_is_row_major(&inst->shape)) return "a non-row-major result";
  if (inst->opcode == OP_CHOLESKY && inst->operand_count == 1) {
    const Shape *a = &inst->operands[0]->shape;
    CholeskyPlan plan;
    if (!cholesky_plan_make(a, &inst->shape, inst->attrs.lower, &plan) || a->type != inst->shape.type)
      return "a cholesky whose operand is not a batch of square matrices like its result";
  }
  if (inst->opcode == OP_TRIANGULAR_SOLVE && inst->operand_count == 2) return triangular_solve_refusal(inst);
  return NULL;
}

/* LAPACK's trsm on reals is HLO's triangular-solve ('C' is 'T'); the
 * shapes were checked by lapack_call_read. Its older form's alpha and
 * complex types are not. */
static bool runs_as_a_solve(const LapackCall *call) {
  return call->routine == LAPACK_TRSM && call->operand_count == 2 && !type_is_complex(call->type);
}

/* A custom-call: getrf's forms, and trsm's as a triangular-solve. One
 * lapack_call_read cannot read, or another LAPACK routine, is refused with
 * a message naming the call's target (made into `made`). */
static const char *custom_call_refusal(const Instruction *inst, Status *made) {
  if (is_real_getrf(inst->attrs.custom_call_target)) return getrf_refusal(inst);
  LapackCall call;
  if (!lapack_call_read(inst, &call, made)) return made->message;
  if (runs_as_a_solve(&call))
    return solve_refusal(inst, &inst->operands[1]->shape, call.left_side, call.lower, call.transpose != 'N',
                         call.unit_diagonal);
  status_error(made, STATUS_UNSUPPORTED,
               "LAPACK custom-call %s: no GPU kernel for this routine yet (the CPU backend and the interpreter run it)",
               inst->attrs.custom_call_target);
  return made->message;
}

const char *gpu_linalg_refusal(const Program *program, const Instruction *inst, Status *made) {
  if (inst->opcode == OP_CUSTOM_CALL) return custom_call_refusal(inst, made);
  const char *why = routine_refusal(inst);
  /* the cholesky kernel reads its operand while it writes the result */
  if (!why && inst->opcode == OP_CHOLESKY && shape_element_count(&inst->shape) > 0 &&
      program_shares_storage(program, inst, 0, inst->operands[0], 0))
    return "a cholesky whose result shares its operand's buffer";
  return why;
}

bool gpu_compile_linalg(GpuCompile *c, const Instruction *inst) {
  if (inst->opcode == OP_CHOLESKY && inst->operand_count == 1) return compile_cholesky(c, inst);
  if (inst->opcode == OP_TRIANGULAR_SOLVE && inst->operand_count == 2) return compile_triangular_solve(c, inst);
  return gpu_compile_kernel(c, inst);
}

/* The other LAPACK calls JAX's CPU lowering emits (potrf, geqrf, orgqr,
 * syevd, gesdd, trsm; src/ir/lapack.h) run in the evaluator and on the CPU
 * backend; on the GPU, trsm of f32 and f64 runs as a triangular-solve, the
 * rest is refused, naming the routine (custom_call_refusal). */
bool gpu_compile_custom_call(GpuCompile *c, const Instruction *inst) {
  if (is_real_getrf(inst->attrs.custom_call_target)) return compile_getrf(c, inst);
  LapackCall call;
  Status unused = {0};
  lapack_call_read(inst, &call, &unused);  /* custom_call_refusal read it: a trsm that runs as a solve */
  return launch_solve(c, inst, &inst->operands[1]->shape, call.left_side, call.lower, call.transpose != 'N',
                      call.unit_diagonal);
}
