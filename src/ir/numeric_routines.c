/* Numeric routines that the reference evaluator and the CPU backend's
 * runtime routines share (ir.h, "numeric_routines.c"): the factorizations
 * behind cholesky and JAX's LU custom-call, and HLO's conversions of a
 * double to another element type. One definition keeps the two backends'
 * answers the same by construction. */
#include <complex.h>
#include <math.h>
#include <stdint.h>

#include "ir.h"

/* Factors one n x n matrix (row-major, at a + offset) into l, lower
 * triangular, l l^T = a. Reads only the lower triangle of a, or, for an
 * upper factorization, the upper triangle read as the lower of a^T.
 * Follows XLA's CholeskyExpander column by column: each column below and on
 * the diagonal is divided by sqrt(d), d the updated diagonal, so a diagonal
 * of d/sqrt(d) (NaN when d == 0, as in XLA, except for a 1x1 matrix, which
 * XLA factors with a plain sqrt). Returns false when some sqrt was NaN
 * (not positive definite), which XLA answers with a matrix of NaN. */
bool linalg_cholesky_factor(const double *a, int64_t n, bool lower, double *l) {
  bool ok = true;
  for (int64_t j = 0; j < n; j++) {
    double d = a[j * n + j];
    for (int64_t k = 0; k < j; k++) d -= l[j * n + k] * l[j * n + k];
    double root = sqrt(d);
    if (isnan(root)) ok = false;
    l[j * n + j] = n == 1 ? root : d / root;
    for (int64_t i = j + 1; i < n; i++) {
      double v = lower ? a[i * n + j] : a[j * n + i];
      for (int64_t k = 0; k < j; k++) v -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = v / root;
    }
  }
  return ok;
}

/* The complex form of linalg_cholesky_factor: l l^H = a, a Hermitian. As in XLA's
 * expander, the pivot is sqrt of the real part of the updated diagonal, NaN
 * (not positive definite) when that part is negative; for an upper
 * factorization a is transposed, not conjugated, so that a = U^H U. */
bool linalg_cholesky_factor_complex(const double _Complex *a, int64_t n, bool lower,
                                    double _Complex *l) {
  bool ok = true;
  for (int64_t j = 0; j < n; j++) {
    double _Complex d = a[j * n + j];
    for (int64_t k = 0; k < j; k++) d -= l[j * n + k] * conj(l[j * n + k]);
    double root = sqrt(creal(d));
    if (isnan(root)) ok = false;
    l[j * n + j] = n == 1 ? root : d / root;
    for (int64_t i = j + 1; i < n; i++) {
      double _Complex v = lower ? a[i * n + j] : a[j * n + i];
      for (int64_t k = 0; k < j; k++) v -= l[i * n + k] * conj(l[j * n + k]);
      l[i * n + j] = v / root;
    }
  }
  return ok;
}

/* LU with partial pivoting of one m x n matrix a (row-major, in double),
 * as LAPACK's getrf defines it: P A = L U, L unit lower (its multipliers
 * stored below the diagonal), U upper. Column j takes as pivot the first
 * row at or below j with the largest |a[i][j]|; ipiv[j] is that row,
 * 1-based. A zero pivot leaves the column as it is and sets info to the
 * first such column (1-based); the factorization goes on. */
int64_t linalg_lu_factor(double *a, int64_t m, int64_t n, int32_t *ipiv) {
  int64_t info = 0, steps = m < n ? m : n;
  for (int64_t j = 0; j < steps; j++) {
    int64_t p = j;
    for (int64_t i = j + 1; i < m; i++)
      if (fabs(a[i * n + j]) > fabs(a[p * n + j])) p = i;
    ipiv[j] = (int32_t)(p + 1);
    if (a[p * n + j] != 0) {
      for (int64_t k = 0; p != j && k < n; k++) {
        double t = a[p * n + k];
        a[p * n + k] = a[j * n + k];
        a[j * n + k] = t;
      }
      for (int64_t i = j + 1; i < m; i++) a[i * n + j] /= a[j * n + j];
    } else if (info == 0) {
      info = j + 1;
    }
    for (int64_t i = j + 1; i < m; i++)
      for (int64_t k = j + 1; k < n; k++) a[i * n + k] -= a[i * n + j] * a[j * n + k];
  }
  return info;
}

/* A float converted to float type t: rounded to its precision. */
double float_round_to_type(double v, ElementType t) {
  switch (t) {
  case TYPE_F32: return (float)v;
  case TYPE_F16: return half_to_float(double_to_half(v));
  case TYPE_BF16: return bf16_to_float(double_to_bf16(v));
  default: return type_is_minifloat(t) ? minifloat_to_float(t, double_to_minifloat(t, v)) : v;
  }
}

/* A float converted to integer type t as HLO's convert does it: truncated
 * toward zero, saturated at t's range, NaN to 0. */
uint64_t float_convert_to_integer(double v, ElementType t) {
  if (t == TYPE_PRED) return v != 0;
  if (isnan(v)) return 0;
  int w = type_bit_width(t);
  if (type_kind(t) == TYPE_KIND_SINT) {
    double limit = ldexp(1, w - 1);
    if (v <= -limit) return (uint64_t)(w == 64 ? INT64_MIN : -(int64_t)limit);
    if (v >= limit) return (uint64_t)(w == 64 ? INT64_MAX : (int64_t)limit - 1);
    return (uint64_t)(int64_t)v;
  }
  if (v <= 0) return 0;
  if (v >= ldexp(1, w)) return w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
  return (uint64_t)v;
}

int64_t s64_add_saturating(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b < 0 ? INT64_MIN : INT64_MAX;
}
