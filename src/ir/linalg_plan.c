/* The linear-algebra descriptions of linalg_plan.h and the host-side
 * algorithms that run them. */
#include "linalg_plan.h"

static int64_t batch_count(const Shape *s) {
  int64_t n = 1;
  for (int d = 0; d < s->rank - 2; d++) n *= s->dims[d];
  return n;
}

bool triangular_solve_plan_make(const Shape *a, const Shape *b, bool left_side, bool lower, bool transpose_a,
                                bool unit_diagonal, TriangularSolvePlan *p) {
  int rank = b->rank;
  bool fits = !shape_is_tuple(a) && !shape_is_tuple(b) && rank >= 2 && a->rank == rank &&
              a->dims[rank - 1] == a->dims[rank - 2];
  for (int d = 0; fits && d < rank - 2; d++) fits = a->dims[d] == b->dims[d];
  if (fits) fits = a->dims[rank - 1] == (left_side ? b->dims[rank - 2] : b->dims[rank - 1]);
  if (!fits) return false;
  *p = (TriangularSolvePlan){.batches = batch_count(b), .m = a->dims[rank - 1], .rows = b->dims[rank - 2],
                             .cols = b->dims[rank - 1], .lower = lower, .left_side = left_side,
                             .unit_diagonal = unit_diagonal};
  p->transpose = left_side ? transpose_a : !transpose_a; /* x op(a) = b is op(a)^T x^T = b^T */
  p->t_lower = lower != p->transpose;
  p->vectors = left_side ? p->cols : p->rows;
  p->vector_stride = left_side ? 1 : p->cols;
  p->element_stride = left_side ? p->cols : 1;
  return true;
}

/* t[i][k]: a's element in the triangle the plan reads. */
static double triangular_element(const TriangularSolvePlan *p, const double *a, int64_t i, int64_t k) {
  return p->transpose ? a[k * p->m + i] : a[i * p->m + k];
}

/* Solves t y = y in place for one vector y (y[i * stride]). */
static void triangular_substitute(const TriangularSolvePlan *p, const double *a, double *y, int64_t stride) {
  int64_t m = p->m;
  for (int64_t step = 0; step < m; step++) {
    int64_t i = p->t_lower ? step : m - 1 - step;
    double sum = y[i * stride];
    int64_t first = p->t_lower ? 0 : i + 1, end = p->t_lower ? i : m;
    for (int64_t k = first; k < end; k++) sum -= triangular_element(p, a, i, k) * y[k * stride];
    y[i * stride] = p->unit_diagonal ? sum : sum / a[i * m + i];
  }
}

void triangular_solve_run(const TriangularSolvePlan *p, const double *a, double *x) {
  for (int64_t v = 0; v < p->vectors; v++) triangular_substitute(p, a, x + v * p->vector_stride, p->element_stride);
}
