/* The LAPACK routines of src/ir/lapack_routines.c on the matrices where
 * Jacobi methods and reflectors meet their corner cases: repeated
 * eigenvalues (the identity, a zero matrix, a repeated diagonal), rank one,
 * 1 x 1, complex phases, and a wide and a tall svd. Each answer is checked
 * by what defines it (a v = v diag(w), v^H v = I, u diag(s) vt = a, sorted
 * values, q^H q = I, q r = a), not by another implementation. */
#include "complex_compat.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/lapack.h"
#include "../test.h"

typedef LapackValue Value;

enum { N_MAX = 6 };

/* max |x - y| over n values. */
static double max_difference(const Value *x, const Value *y, int64_t n) {
  double d = 0;
  for (int64_t i = 0; i < n; i++) d = fmax(d, cabs(x[i] - y[i]));
  return d;
}

/* c = a b^(H when conjugate), a r x k, b (k x cols, or cols x k conjugated). */
static void multiply(const Value *a, const Value *b, int64_t r, int64_t k, int64_t cols, bool conjugate_b, Value *c) {
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < cols; j++) {
      Value s = 0;
      for (int64_t l = 0; l < k; l++) s += a[i * k + l] * (conjugate_b ? conj(b[j * k + l]) : b[l * cols + j]);
      c[i * cols + j] = s;
    }
}

static void identity(Value *x, int64_t n) {
  for (int64_t i = 0; i < n * n; i++) x[i] = i % (n + 1) == 0;
}

/* v^H v = I; a v = v diag(w) for the full Hermitian a; w ascending. */
static bool eigen_holds(const Value *hermitian, int64_t n, const Value *v, const double *w, double tolerance) {
  Value vt[N_MAX * N_MAX] = {0}, gram[N_MAX * N_MAX] = {0}, eye[N_MAX * N_MAX] = {0}, av[N_MAX * N_MAX] = {0},
        vw[N_MAX * N_MAX] = {0};
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) vt[i * n + j] = conj(v[j * n + i]);
  multiply(vt, v, n, n, n, false, gram);
  identity(eye, n);
  multiply(hermitian, v, n, n, n, false, av);
  for (int64_t i = 0; i < n * n; i++) vw[i] = v[i] * w[i % n];
  bool sorted = true;
  for (int64_t i = 1; i < n; i++) sorted &= w[i - 1] <= w[i];
  return sorted && max_difference(gram, eye, n * n) < tolerance && max_difference(av, vw, n * n) < tolerance;
}

TEST(heev_holds_on_repeated_and_degenerate_spectra) {
  static const double diagonals[][4] = {{1, 1, 1, 1}, {0, 0, 0, 0}, {2, -1, 2, -1}, {5, 5, 5, -3}};
  for (int c = 0; c < 4; c++) {
    Value a[16], h[16] = {0};
    for (int i = 0; i < 16; i++) a[i] = i % 5 == 0 ? diagonals[c][i / 5] : 0;
    memcpy(h, a, sizeof a);
    double w[4];
    EXPECT(lapack_heev(a, 4, true, true, w) == 0, "case %d converges", c);
    EXPECT(eigen_holds(h, 4, a, w, 1e-14), "case %d: a v = v diag(w), v unitary, w sorted", c);
  }
  /* A complex Hermitian matrix with a repeated eigenvalue: I + u u^H has
   * eigenvalues 1, 1, 1 + |u|^2. Only the lower triangle is read: the upper
   * holds noise. */
  Value u[3] = {1 + 2 * I, -0.5 * I, 3}, a[9], h[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      h[i * 3 + j] = (i == j) + u[i] * conj(u[j]);
      a[i * 3 + j] = i >= j ? h[i * 3 + j] : 99 + 7 * I;
    }
  double w[3];
  EXPECT(lapack_heev(a, 3, true, true, w) == 0, "converges");
  EXPECT(eigen_holds(h, 3, a, w, 1e-13), "complex: a v = v diag(w)");
  EXPECT(fabs(w[0] - 1) < 1e-14 && fabs(w[1] - 1) < 1e-14 && fabs(w[2] - 15.25) < 1e-13, "w = %g %g %g", w[0], w[1],
         w[2]);
  Value one = -4;
  double w1;
  EXPECT(lapack_heev(&one, 1, false, true, &w1) == 0 && w1 == -4 && one == 1, "1 x 1: w = a, v = 1");
  Value bad[4] = {1, NAN, NAN, 1};
  double wb[2];
  lapack_heev(bad, 2, true, true, wb);
  EXPECT(isnan(wb[0]) && isnan(wb[1]) && isnan(creal(bad[0])), "a NaN gives NaN throughout");
}

/* u diag(s) vt = a, u^H u = I (u_cols columns), vt vt^H = I, s descending
 * and non-negative. */
static bool svd_holds(const Value *a, int64_t m, int64_t n, bool full, double tolerance) {
  int64_t k = m < n ? m : n, u_cols = full ? m : k, vt_rows = full ? n : k;
  Value u[N_MAX * N_MAX] = {0}, vt[N_MAX * N_MAX] = {0}, us[N_MAX * N_MAX] = {0}, rebuilt[N_MAX * N_MAX] = {0},
        gram[N_MAX * N_MAX] = {0}, eye[N_MAX * N_MAX] = {0};
  double s[N_MAX];
  if (lapack_gesdd(a, m, n, s, u, u_cols, vt, vt_rows) != 0) return false;
  bool ok = true;
  for (int64_t i = 0; i < k; i++) ok &= s[i] >= 0 && (i == 0 || s[i - 1] >= s[i]);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < k; j++) us[i * k + j] = u[i * u_cols + j] * s[j];
  multiply(us, vt, m, k, n, false, rebuilt);
  ok &= max_difference(rebuilt, a, m * n) < tolerance;
  Value uh[N_MAX * N_MAX] = {0};
  for (int64_t i = 0; i < u_cols; i++)
    for (int64_t j = 0; j < m; j++) uh[i * m + j] = conj(u[j * u_cols + i]);
  multiply(uh, u, u_cols, m, u_cols, false, gram);
  identity(eye, u_cols);
  ok &= max_difference(gram, eye, u_cols * u_cols) < tolerance;
  multiply(vt, vt, vt_rows, n, vt_rows, true, gram);
  identity(eye, vt_rows);
  return ok && max_difference(gram, eye, vt_rows * vt_rows) < tolerance;
}

TEST(gesdd_holds_on_rank_deficient_tall_and_wide_matrices) {
  Value zero[12] = {0}, rank_one[12], complex_wide[15], tall[12];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) {
      rank_one[i * 3 + j] = (i + 1.0) * (j - 1.5);
      tall[i * 3 + j] = (i * 3 + j) % 5 - 2 + 0.25 * i;
    }
  for (int i = 0; i < 15; i++) complex_wide[i] = CMPLX(sin(i + 1.0), cos(3.0 * i));
  for (int full = 0; full < 2; full++) {
    EXPECT(svd_holds(zero, 4, 3, full, 1e-14), "zero matrix (full %d): u and vt completed to a basis", full);
    EXPECT(svd_holds(rank_one, 4, 3, full, 1e-13), "rank one (full %d)", full);
    EXPECT(svd_holds(rank_one, 3, 4, full, 1e-13), "rank one read wide (full %d)", full);
    EXPECT(svd_holds(tall, 4, 3, full, 1e-13), "tall (full %d)", full);
    EXPECT(svd_holds(complex_wide, 3, 5, full, 1e-13), "complex wide (full %d)", full);
  }
}

TEST(geqrf_orgqr_give_q_r_equal_to_a_with_larfg_signs) {
  Value a[12], packed[12], tau[3], q[12];
  for (int i = 0; i < 12; i++) a[i] = CMPLX(i % 4 - 1.5, (i * 7) % 5 - 2.0);
  memcpy(packed, a, sizeof a);
  lapack_geqrf(packed, 4, 3, tau);
  memcpy(q, packed, sizeof q);
  lapack_orgqr(q, 4, 3, 3, tau);
  Value r[9] = {0}, qr[12], qh[12], gram[9], eye[9];
  for (int i = 0; i < 3; i++)
    for (int j = i; j < 3; j++) r[i * 3 + j] = packed[i * 3 + j];
  multiply(q, r, 4, 3, 3, false, qr);
  EXPECT(max_difference(qr, a, 12) < 1e-13, "q r = a");
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) qh[i * 4 + j] = conj(q[j * 3 + i]);
  multiply(qh, q, 3, 4, 3, false, gram);
  identity(eye, 3);
  EXPECT(max_difference(gram, eye, 9) < 1e-13, "q^H q = I");
  /* larfg: beta = -sign(Re(alpha)) |(alpha, x)|, so r's diagonal is real
   * with the sign opposite to the column's leading real part. */
  EXPECT(cimag(packed[0]) == 0 && creal(packed[0]) * creal(a[0]) < 0, "r[0][0] = %g%+gi", creal(packed[0]),
         cimag(packed[0]));
  /* A column already zero below a real diagonal: tau = 0, H = I. */
  Value diagonal[4] = {2, 0, 0, 3}, t2[2];
  lapack_geqrf(diagonal, 2, 2, t2);
  EXPECT(t2[0] == 0 && diagonal[0] == 2, "tau = 0 leaves the column");
}

TEST(potrf_reads_one_triangle_and_reports_the_failing_column) {
  Value a[9] = {4, 99, 99, 2, 5, 99, -2, 1, 6}, want_l10 = 1, want_l20 = -1;
  EXPECT(lapack_potrf(a, 3, true) == 0, "positive definite: info 0");
  EXPECT(a[0] == 2 && a[3] == want_l10 && a[6] == want_l20 && a[1] == 99 && a[2] == 99 && a[5] == 99,
         "l = [2; 1; -1] in the lower triangle, the upper untouched");
  Value b[4] = {1, 2, 2, 1};
  EXPECT(lapack_potrf(b, 2, false) == 2, "indefinite: info 2");
  Value c[1] = {NAN};
  EXPECT(lapack_potrf(c, 1, true) == 1, "NaN pivot: info 1");
}

int main(void) {
  RUN(heev_holds_on_repeated_and_degenerate_spectra);
  RUN(gesdd_holds_on_rank_deficient_tall_and_wide_matrices);
  RUN(geqrf_orgqr_give_q_r_equal_to_a_with_larfg_signs);
  RUN(potrf_reads_one_triangle_and_reports_the_failing_column);
  return test_summary();
}
