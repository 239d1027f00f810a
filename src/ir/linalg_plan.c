/* The linear-algebra descriptions of linalg_plan.h and the host-side
 * algorithms that run them. */
#include "complex_compat.h"
#include <math.h>
#include <string.h>

#include "linalg_plan.h"

static int64_t batch_count(const Shape *s) {
  int64_t n = 1;
  for (int d = 0; d < s->rank - 2; d++) n *= s->dims[d];
  return n;
}

bool cholesky_plan_make(const Shape *a, const Shape *out, bool lower, CholeskyPlan *p) {
  if (shape_is_tuple(a) || shape_is_tuple(out) || a->rank < 2 || a->dims[a->rank - 1] != a->dims[a->rank - 2] ||
      !shape_same_dims(a, out))
    return false;
  *p = (CholeskyPlan){.batches = batch_count(a), .n = a->dims[a->rank - 1], .lower = lower};
  return true;
}

/* lower: out[i][j] = l[i][j]; upper: out[i][j] = l[j][i] = U[i][j]. */
void cholesky_run(const CholeskyPlan *p, const double *a, double *l, double *out) {
  int64_t n = p->n;
  memset(l, 0, sizeof *l * (size_t)(n * n));
  bool ok = linalg_cholesky_factor(a, n, p->lower, l);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) out[i * n + j] = ok ? (p->lower ? l[i * n + j] : l[j * n + i]) : NAN;
}

void cholesky_run_complex(const CholeskyPlan *p, const double complex *a, double complex *l, double complex *out) {
  int64_t n = p->n;
  for (int64_t i = 0; i < n * n; i++) l[i] = 0;
  bool ok = linalg_cholesky_factor_complex(a, n, p->lower, l);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) out[i * n + j] = ok ? (p->lower ? l[i * n + j] : l[j * n + i]) : CMPLX(NAN, NAN);
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

bool getrf_plan_make(const Instruction *inst, GetrfPlan *p) {
  const Shape *s = &inst->shape;
  if (inst->operand_count != 1) return false;
  const Shape *x = &inst->operands[0]->shape;
  if (shape_is_tuple(x) || !type_is_float(x->type) || x->rank < 2 || !shape_is_tuple(s) || s->tuple_count != 3 ||
      !s->tuple_shapes || !shape_equal(&s->tuple_shapes[0], x))
    return false;
  const Shape *ipiv = &s->tuple_shapes[1], *info = &s->tuple_shapes[2];
  int batch = x->rank - 2;
  *p = (GetrfPlan){.batches = batch_count(x), .m = x->dims[batch], .n = x->dims[batch + 1]};
  p->steps = p->m < p->n ? p->m : p->n;
  bool fits = ipiv->type == TYPE_S32 && ipiv->rank == batch + 1 && ipiv->dims[batch] == p->steps &&
              info->type == TYPE_S32 && info->rank == batch;
  for (int d = 0; fits && d < batch; d++) fits = ipiv->dims[d] == x->dims[d] && info->dims[d] == x->dims[d];
  return fits;
}
