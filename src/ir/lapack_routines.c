/* The algorithms behind JAX's LAPACK custom-calls (lapack.h), shared by the
 * evaluator and the CPU backend so that both give the same bits.
 *
 * Where LAPACK's answer is unique (potrf, trsm, the reflectors of geqrf and
 * the q of orgqr, by larfg's sign rule) these follow LAPACK's unblocked
 * routines (potf2, geqr2, ung2r, trsm), so they agree with any LAPACK to
 * rounding. Where it is not (eigenvectors and singular vectors are unique
 * only up to a phase, and not at all for repeated values) they use Jacobi
 * methods, which are simple and accurate: what is unique (eigenvalues,
 * singular values, the subspaces, a = v diag(w) v^H) agrees with LAPACK.
 *
 * Everything is double complex: a real matrix gives real rotations and real
 * reflectors, so its imaginary parts stay exactly zero and its real parts
 * are what real arithmetic gives (divide() keeps real divisions real). */
#include "complex_compat.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "lapack.h"

typedef LapackValue Value;

/* a / b, as a real division when b is real (C's complex division scales
 * and would round a real quotient differently). */
static Value divide(Value a, Value b) {
  if (cimag(b) == 0) return CMPLX(creal(a) / creal(b), cimag(a) / creal(b));
  return a / b;
}

static double abs_squared(Value v) { return creal(v) * creal(v) + cimag(v) * cimag(v); }

/* ------------------------------------------------------------------ potrf */

/* Element (i, j), i >= j, of the lower triangle of the Hermitian matrix
 * that a's `lower` triangle holds: the upper triangle is its conjugate. */
static Value *triangle_at(LapackValue *a, int64_t n, bool lower, int64_t i, int64_t j) {
  return lower ? &a[i * n + j] : &a[j * n + i];
}

static Value triangle_get(LapackValue *a, int64_t n, bool lower, int64_t i, int64_t j) {
  Value v = *triangle_at(a, n, lower, i, j);
  return lower ? v : conj(v);
}

static void triangle_set(LapackValue *a, int64_t n, bool lower, int64_t i, int64_t j, Value v) {
  *triangle_at(a, n, lower, i, j) = lower ? v : conj(v);
}

/* Column by column (potf2): l_jj = sqrt(a_jj - sum |l_jk|^2), then the
 * column below it. An upper factor is U = L^H of the same matrix. The
 * diagonal's imaginary part is not read (a Hermitian matrix has none). On
 * a pivot that is not positive the updated diagonal is stored and the
 * rest is left as it was. */
int32_t lapack_potrf(LapackValue *a, int64_t n, bool lower) {
  for (int64_t j = 0; j < n; j++) {
    double d = creal(triangle_get(a, n, lower, j, j));
    for (int64_t k = 0; k < j; k++) d -= abs_squared(triangle_get(a, n, lower, j, k));
    if (!(d > 0)) {
      triangle_set(a, n, lower, j, j, d);
      return (int32_t)(j + 1);
    }
    double root = sqrt(d);
    triangle_set(a, n, lower, j, j, root);
    for (int64_t i = j + 1; i < n; i++) {
      Value v = triangle_get(a, n, lower, i, j);
      for (int64_t k = 0; k < j; k++) v -= triangle_get(a, n, lower, i, k) * conj(triangle_get(a, n, lower, j, k));
      triangle_set(a, n, lower, i, j, divide(v, root));
    }
  }
  return 0;
}

/* ------------------------------------------------------------- geqrf, orgqr */

/* C := C - tau v (v^H C) for C the rows r0.. and columns c0..cols-1 of a
 * (row stride cols), v the column `vc` of a from row r0 down with v[r0] = 1
 * (larf from the left). */
static void apply_reflector(LapackValue *a, int64_t m, int64_t cols, int64_t r0, int64_t vc, int64_t c0, Value tau) {
  if (tau == 0) return;
  for (int64_t c = c0; c < cols; c++) {
    Value w = a[r0 * cols + c];
    for (int64_t i = r0 + 1; i < m; i++) w += conj(a[i * cols + vc]) * a[i * cols + c];
    w *= tau;
    a[r0 * cols + c] -= w;
    for (int64_t i = r0 + 1; i < m; i++) a[i * cols + c] -= a[i * cols + vc] * w;
  }
}

/* larfg: the reflector H = I - tau v v^H with H^H (alpha; x) = (beta; 0),
 * beta real, of sign opposite to Re(alpha); x becomes v below its 1.
 * tau = 0 (H = I) when x is zero and alpha is real. */
static Value make_reflector(LapackValue *a, int64_t m, int64_t cols, int64_t j) {
  double xnorm = 0;
  for (int64_t i = j + 1; i < m; i++) xnorm += abs_squared(a[i * cols + j]);
  Value alpha = a[j * cols + j];
  if (xnorm == 0 && cimag(alpha) == 0) return 0;
  double norm = sqrt(abs_squared(alpha) + xnorm);
  double beta = creal(alpha) >= 0 ? -norm : norm;
  Value tau = CMPLX((beta - creal(alpha)) / beta, -cimag(alpha) / beta);
  Value scale = divide(1, alpha - beta);
  for (int64_t i = j + 1; i < m; i++) a[i * cols + j] *= scale;
  a[j * cols + j] = beta;
  return tau;
}

/* geqr2: column j's reflector, then H^H applied to the columns right of it. */
void lapack_geqrf(LapackValue *a, int64_t m, int64_t n, LapackValue *tau) {
  int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; j++) {
    tau[j] = make_reflector(a, m, n, j);
    apply_reflector(a, m, n, j, j, j + 1, conj(tau[j]));
  }
}

/* ung2r: the identity's columns past k, then from the last reflector back,
 * each applied to the columns right of it and its own column made the
 * first column of H(i). */
void lapack_orgqr(LapackValue *a, int64_t m, int64_t n, int64_t k, const LapackValue *tau) {
  for (int64_t j = k; j < n; j++)
    for (int64_t i = 0; i < m; i++) a[i * n + j] = i == j;
  for (int64_t i = k - 1; i >= 0; i--) {
    if (i < n - 1) {
      a[i * n + i] = 1;
      apply_reflector(a, m, n, i, i, i + 1, tau[i]);
    }
    for (int64_t r = i + 1; r < m; r++) a[r * n + i] *= -tau[i];
    a[i * n + i] = 1 - tau[i];
    for (int64_t r = 0; r < i; r++) a[r * n + i] = 0;
  }
}

/* ------------------------------------------------------------------- trsm */

/* op(a)[i][j] as the solve reads it: the named triangle of a (1 on the
 * diagonal when unit), zero elsewhere, transposed or conjugated by op. */
static Value op_element(const LapackValue *a, int64_t m, bool lower, char transpose, bool unit, int64_t i, int64_t j) {
  int64_t r = transpose == 'N' ? i : j, c = transpose == 'N' ? j : i;
  if (r == c && unit) return 1;
  if (r != c && (lower ? r < c : r > c)) return 0;
  Value v = a[r * m + c];
  return transpose == 'C' ? conj(v) : v;
}

/* Substitution for one vector x (x[i * stride]) with t[i][j] = t(i, j). A
 * right-side solve x op(a) = b is op(a)^T x^T = b^T: the same with t read
 * transposed. */
void lapack_trsm(const LapackValue *a, LapackValue *b, int64_t rows, int64_t cols, bool left_side, bool lower,
                 char transpose, bool unit_diagonal) {
  int64_t m = left_side ? rows : cols, vectors = left_side ? cols : rows;
  int64_t stride = left_side ? cols : 1, step = left_side ? 1 : cols;
  /* t lower triangular: op(a) lower (left), or op(a)^T lower (right). */
  bool t_lower = (lower == (transpose == 'N')) == left_side;
  for (int64_t v = 0; v < vectors; v++) {
    LapackValue *x = b + v * step;
    for (int64_t s = 0; s < m; s++) {
      int64_t i = t_lower ? s : m - 1 - s;
      Value sum = x[i * stride];
      for (int64_t kk = t_lower ? 0 : i + 1; kk < (t_lower ? i : m); kk++) {
        Value t = left_side ? op_element(a, m, lower, transpose, unit_diagonal, i, kk)
                            : op_element(a, m, lower, transpose, unit_diagonal, kk, i);
        sum -= t * x[kk * stride];
      }
      x[i * stride] = divide(sum, op_element(a, m, lower, transpose, unit_diagonal, i, i));
    }
  }
}

/* ----------------------------------------------------------------- Jacobi */

/* The rotation that zeroes the off-diagonal r of the 2 x 2 Hermitian block
 * [[app, r], [r, aqq]] (r real, > 0): t = tan of its angle, the smaller
 * root of t^2 + 2 theta t - 1 = 0 (Rutishauser's choice). */
static void jacobi_rotation(double app, double aqq, double r, double *c, double *s, double *t) {
  double theta = (aqq - app) / (2 * r);
  double root = fabs(theta) > 1e150 ? fabs(theta) : sqrt(theta * theta + 1);
  *t = (theta >= 0 ? 1 : -1) / (fabs(theta) + root);
  *c = 1 / sqrt(*t * *t + 1);
  *s = *t * *c;
}

/* Columns p, q of an n-row matrix x (row stride cols): q times the phase
 * conj(e), then (p, q) <- (c p - s q, s p + c q). */
static void rotate_columns(LapackValue *x, int64_t rows, int64_t cols, int64_t p, int64_t q, Value phase, double c,
                           double s) {
  for (int64_t i = 0; i < rows; i++) {
    Value xp = x[i * cols + p], xq = x[i * cols + q] * phase;
    x[i * cols + p] = c * xp - s * xq;
    x[i * cols + q] = s * xp + c * xq;
  }
}

static bool all_finite(const LapackValue *a, int64_t count) {
  for (int64_t i = 0; i < count; i++)
    if (!isfinite(creal(a[i])) || !isfinite(cimag(a[i]))) return false;
  return true;
}

enum { JACOBI_MAX_SWEEPS = 60 };

/* Stable insertion sort of order[0..n) by key, ascending or descending. */
static void sort_order(const double *key, int64_t n, bool descending, int64_t *order) {
  for (int64_t i = 0; i < n; i++) {
    int64_t v = order[i] = i, j = i;
    for (; j > 0 && (descending ? key[order[j - 1]] < key[v] : key[order[j - 1]] > key[v]); j--)
      order[j] = order[j - 1];
    order[j] = v;
  }
}

/* Cyclic Jacobi on the full Hermitian h (n x n), accumulating v: a pair
 * (p, q) is rotated while |h_pq| exceeds eps times the norm of h. The
 * phase of h_pq is moved into column q first, making the block real. */
static bool jacobi_eigen(LapackValue *h, LapackValue *v, int64_t n) {
  double norm = 0;
  for (int64_t i = 0; i < n * n; i++) norm += abs_squared(h[i]);
  double tolerance = DBL_EPSILON * sqrt(norm);
  for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; sweep++) {
    bool rotated = false;
    for (int64_t p = 0; p < n; p++)
      for (int64_t q = p + 1; q < n; q++) {
        double r = cabs(h[p * n + q]);
        if (!(r > tolerance)) continue;
        rotated = true;
        Value phase = CMPLX(creal(h[p * n + q]) / r, -cimag(h[p * n + q]) / r);
        double c, s, t, app = creal(h[p * n + p]), aqq = creal(h[q * n + q]);
        jacobi_rotation(app, aqq, r, &c, &s, &t);
        rotate_columns(h, n, n, p, q, phase, c, s);
        /* The rows, as the conjugate of the columns' operation. */
        for (int64_t k = 0; k < n; k++) {
          Value hp = h[p * n + k], hq = h[q * n + k] * conj(phase);
          h[p * n + k] = c * hp - s * hq;
          h[q * n + k] = s * hp + c * hq;
        }
        h[p * n + p] = app - t * r;
        h[q * n + q] = aqq + t * r;
        h[p * n + q] = h[q * n + p] = 0;
        rotate_columns(v, n, n, p, q, phase, c, s);
      }
    if (!rotated) return true;
  }
  return false;
}

/* syevd/heevd. A matrix holding an infinity or NaN gives NaN throughout
 * (LAPACK's answer there is not defined), info 0. A Jacobi run that does
 * not converge answers info 1. */
int32_t lapack_heev(LapackValue *a, int64_t n, bool lower, bool vectors, double *w) {
  LapackValue *h = mem_calloc((size_t)(2 * n * n), sizeof *h), *v = h + n * n;
  double *diagonal = mem_calloc((size_t)n, sizeof *diagonal);
  int64_t *order = mem_calloc((size_t)n, sizeof *order);
  int32_t info = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      h[i * n + j] = i == j ? creal(a[i * n + i]) : (i > j) == lower ? a[i * n + j] : conj(a[j * n + i]);
      v[i * n + j] = i == j;
    }
  if (all_finite(h, n * n)) {
    info = jacobi_eigen(h, v, n) ? 0 : 1;
    for (int64_t i = 0; i < n; i++) diagonal[i] = creal(h[i * n + i]);
  } else {
    for (int64_t i = 0; i < n * n; i++) v[i] = CMPLX(NAN, NAN);
    for (int64_t i = 0; i < n; i++) diagonal[i] = NAN;
  }
  sort_order(diagonal, n, false, order);
  for (int64_t j = 0; j < n; j++) {
    w[j] = diagonal[order[j]];
    for (int64_t i = 0; vectors && i < n; i++) a[i * n + j] = v[i * n + order[j]];
  }
  mem_free(h);
  mem_free(diagonal);
  mem_free(order);
  return info;
}

/* -------------------------------------------------------------------- svd */

/* One-sided Jacobi (Hestenes) on the columns of x (rows x cols, rows >=
 * cols), accumulating v (cols x cols): a pair is rotated until its columns
 * are orthogonal to eps, relative to their lengths. */
static bool jacobi_orthogonalize(LapackValue *x, int64_t rows, int64_t cols, LapackValue *v) {
  for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; sweep++) {
    bool rotated = false;
    for (int64_t p = 0; p < cols; p++)
      for (int64_t q = p + 1; q < cols; q++) {
        double app = 0, aqq = 0;
        Value g = 0;
        for (int64_t i = 0; i < rows; i++) {
          app += abs_squared(x[i * cols + p]);
          aqq += abs_squared(x[i * cols + q]);
          g += conj(x[i * cols + p]) * x[i * cols + q];
        }
        double r = cabs(g);
        if (!(r > DBL_EPSILON * sqrt(app) * sqrt(aqq)) || !(r > DBL_MIN)) continue;
        rotated = true;
        Value phase = CMPLX(creal(g) / r, -cimag(g) / r);
        double c, s, t;
        jacobi_rotation(app, aqq, r, &c, &s, &t);
        rotate_columns(x, rows, cols, p, q, phase, c, s);
        rotate_columns(v, cols, cols, p, q, phase, c, s);
      }
    if (!rotated) return true;
  }
  return false;
}

/* Fills the columns of the n x n matrix q not marked valid with unit
 * vectors orthogonal to the valid ones (and to each other): Gram-Schmidt,
 * twice, on e_0, e_1, ... until one keeps more than half its length. */
static void complete_orthonormal(LapackValue *q, int64_t n, bool *valid, LapackValue *x) {
  int64_t next = 0;
  for (int64_t col = 0; col < n; col++) {
    if (valid[col]) continue;
    for (; next < n; next++) {
      for (int64_t i = 0; i < n; i++) x[i] = i == next;
      for (int pass = 0; pass < 2; pass++)
        for (int64_t c = 0; c < n; c++) {
          if (!valid[c]) continue;
          Value d = 0;
          for (int64_t i = 0; i < n; i++) d += conj(q[i * n + c]) * x[i];
          for (int64_t i = 0; i < n; i++) x[i] -= d * q[i * n + c];
        }
      double length = 0;
      for (int64_t i = 0; i < n; i++) length += abs_squared(x[i]);
      if (length > 0.25) {
        for (int64_t i = 0; i < n; i++) q[i * n + col] = x[i] / sqrt(length);
        valid[col] = true;
        next++;
        break;
      }
    }
  }
}

/* gesdd. A tall a (m >= n) is x = a; a wide one is x = a^H, whose SVD
 * x = U S V^H is a's with U and V swapped. The columns of x are made
 * orthogonal (x V = U S), their lengths are the singular values, sorted
 * descending; U's columns for zero values and past min(m, n) complete an
 * orthonormal basis. A NaN or infinity gives NaN results and info -4, as
 * LAPACK answers a NaN. */
int32_t lapack_gesdd(const LapackValue *a, int64_t m, int64_t n, double *s, LapackValue *u, int64_t u_cols,
                     LapackValue *vt, int64_t vt_rows) {
  bool tall = m >= n;
  int64_t p = tall ? m : n, q = tall ? n : m;
  if (!all_finite(a, m * n)) {
    for (int64_t i = 0; i < q; i++) s[i] = NAN;
    for (int64_t i = 0; i < m * u_cols; i++) u[i] = CMPLX(NAN, NAN);
    for (int64_t i = 0; i < vt_rows * n; i++) vt[i] = CMPLX(NAN, NAN);
    return -4;
  }
  LapackValue *x = mem_calloc((size_t)(p * q + q * q + p * p + p), sizeof *x);
  LapackValue *v = x + p * q, *big = v + q * q, *scratch = big + p * p;
  double *length = mem_calloc((size_t)q, sizeof *length);
  int64_t *order = mem_calloc((size_t)q, sizeof *order);
  bool *valid = mem_calloc((size_t)p, sizeof *valid);
  for (int64_t i = 0; i < p; i++)
    for (int64_t j = 0; j < q; j++) x[i * q + j] = tall ? a[i * n + j] : conj(a[j * n + i]);
  for (int64_t i = 0; i < q * q; i++) v[i] = i % (q + 1) == 0;
  bool converged = jacobi_orthogonalize(x, p, q, v);
  for (int64_t j = 0; j < q; j++) {
    double sum = 0;
    for (int64_t i = 0; i < p; i++) sum += abs_squared(x[i * q + j]);
    length[j] = sqrt(sum);
  }
  sort_order(length, q, true, order);
  /* big: x's unit columns in sorted order, completed to p x p. */
  for (int64_t j = 0; j < p; j++) {
    valid[j] = j < q && length[order[j]] > 0;
    for (int64_t i = 0; i < p; i++) big[i * p + j] = valid[j] ? x[i * q + order[j]] / length[order[j]] : 0;
  }
  complete_orthonormal(big, p, valid, scratch);
  for (int64_t j = 0; j < q; j++) s[j] = length[order[j]];
  /* tall: u = big, vt = V^H; wide: u = V, vt = big^H (V sorted by order). */
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < u_cols; j++) u[i * u_cols + j] = tall ? big[i * p + j] : v[i * q + order[j]];
  for (int64_t i = 0; i < vt_rows; i++)
    for (int64_t j = 0; j < n; j++) vt[i * n + j] = conj(tall ? v[j * q + order[i]] : big[j * p + i]);
  mem_free(x);
  mem_free(length);
  mem_free(order);
  mem_free(valid);
  return converged ? 0 : 1;
}
