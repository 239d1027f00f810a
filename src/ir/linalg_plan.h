/* Descriptions of HLO's dense linear-algebra ops, built once from an
 * instruction's shapes and attributes and executed by every implementation:
 * the evaluator (src/ir/eval/eval_linalg.c), the CPU backend's runtime
 * routines (src/emit_x86/cpu_linalg.c) and the GPU backend's kernels
 * (src/emit_ptx/gpu_linalg.c). The host-side algorithm lives here too, so
 * the evaluator and the CPU run the same arithmetic in the same order and
 * agree bit for bit; the GPU kernel follows the same order.
 *
 * The matrices are the two minor-most dimensions of each operand; the
 * leading dimensions are the batch. */
#ifndef AXLE_IR_LINALG_PLAN_H
#define AXLE_IR_LINALG_PLAN_H

#include "ir.h"

/* cholesky(a): lower=true gives L with a = L L^T (L L^H for complex),
 * lower=false U with a = U^T U (U^H U); the other triangle of the result
 * is zero, as XLA's expander leaves it, and a batch element that is not
 * positive definite comes out all NaN. The factorization is
 * linalg_cholesky_factor (numeric_routines.c), XLA's CholeskyExpander. */
typedef struct CholeskyPlan {
  int64_t batches;
  int64_t n;                  /* a is n x n */
  bool lower;
} CholeskyPlan;

/* The plan of cholesky(a) -> out; false unless a is a batch of square
 * matrices with out's dims. */
bool cholesky_plan_make(const Shape *a, const Shape *out, bool lower, CholeskyPlan *p);
/* One batch element: a and out hold its n x n values; l is n x n scratch. */
void cholesky_run(const CholeskyPlan *p, const double *a, double *l, double *out);
void cholesky_run_complex(const CholeskyPlan *p, const double _Complex *a, double _Complex *l, double _Complex *out);

/* triangular-solve(a, b) (and LAPACK's trsm, which means the same): x with
 * op(a) x = b (left_side) or x op(a) = b, op the identity or the transpose
 * (ADJOINT is the transpose for reals). A right-side solve x op(a) = b is
 * solved as op(a)^T x^T = b^T, so the matrix substituted, t, is a
 * transposed when exactly one of `transpose` and "right side" holds. Only
 * the triangle of a named by `lower` is read (t's triangle is t_lower); a
 * unit diagonal is not read either. Each solved vector of x is a column of
 * b (left side) or a row (right side): `vectors` of them per matrix, the
 * first element of vector v at v * vector_stride, element i of it at
 * i * element_stride. */
typedef struct TriangularSolvePlan {
  int64_t batches;            /* matrices of b (and of a) */
  int64_t m;                  /* a is m x m */
  int64_t rows, cols;         /* b and x are rows x cols */
  bool lower, left_side, unit_diagonal;
  bool transpose;             /* t[i][k] is a[k][i] */
  bool t_lower;               /* t is lower triangular: substitution runs forward */
  int64_t vectors, vector_stride, element_stride;
} TriangularSolvePlan;

/* The plan of a solve with a (batch..., m, m) and b (batch..., rows,
 * cols); false when their shapes do not fit together (ranks, batch dims,
 * a square, the solved dimension of b equal to m). */
bool triangular_solve_plan_make(const Shape *a, const Shape *b, bool left_side, bool lower, bool transpose_a,
                                bool unit_diagonal, TriangularSolvePlan *p);
/* One batch element: a holds its m x m values, x its rows x cols values
 * of b, overwritten by the solution. Each x[i] of a vector is
 * (x[i] - sum over k of t[i][k] x[k]) / t[i][i], k ascending over t's
 * triangle; a zero on the diagonal gives infinities and NaN, as plain
 * substitution does. */
void triangular_solve_run(const TriangularSolvePlan *p, const double *a, double *x);

/* JAX's LU custom-call (lapack_sgetrf_ffi, lapack_dgetrf_ffi; LAPACK's
 * getrf): a (batch..., m, n) -> (lu of a's shape, ipiv s32[batch...,
 * min(m,n)], info s32[batch...]), the declared result checked here, since
 * a custom-call's shape is whatever the text says. The factorization is
 * linalg_lu_factor (numeric_routines.c). */
typedef struct GetrfPlan {
  int64_t batches;
  int64_t m, n, steps;        /* steps = min(m, n): the pivots per matrix */
} GetrfPlan;

/* The plan of getrf(a); false unless the operand is one float array of
 * rank 2 or more and the result the tuple above. */
bool getrf_plan_make(const Instruction *inst, GetrfPlan *p);

#endif
