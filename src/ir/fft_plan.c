/* The fft plan of fft_plan.h and the host algorithm that runs it. */
#include "complex_compat.h"
#include <math.h>
#include <string.h>

#include "fft_plan.h"

typedef double complex Complex;

/* ------------------------------------------------------------ the plan */

/* n's prime factors, smallest first; a length of 1 is one factor 1. */
static int prime_factors(int64_t n, int64_t *factors) {
  int count = 0;
  for (int64_t p = 2; p * p <= n; p++)
    while (n % p == 0) factors[count++] = p, n /= p;
  if (n > 1 || count == 0) factors[count++] = n;
  return count;
}

static bool last_dim_fits(FftType type, int64_t in_last, int64_t out_last) {
  switch (type) {
  case FFT_TYPE_RFFT: return out_last == in_last / 2 + 1;
  case FFT_TYPE_IRFFT: return in_last == out_last / 2 + 1;
  default: return out_last == in_last;
  }
}

const char *fft_plan_make(const Shape *x, const Shape *out, const FftDims *f, FftPlan *p) {
  int count = f->length.count, rank = x->rank;
  if (shape_is_tuple(x) || shape_is_tuple(out) || count < 1 || count > 3 || rank < count || out->rank != rank)
    return "an fft whose fft_length does not fit its operand";
  for (int d = 0; d < rank - 1; d++)
    if (out->dims[d] != x->dims[d]) return "an fft whose result dims differ from its operand's";
  if (!last_dim_fits(f->type, x->dims[rank - 1], out->dims[rank - 1]))
    return "an fft whose last result dim does not fit its type";
  *p = (FftPlan){.type = f->type, .inverse = f->type == FFT_TYPE_IFFT || f->type == FFT_TYPE_IRFFT,
                 .rank = rank, .first = rank - count};
  memcpy(p->in_dims, x->dims, sizeof(int64_t) * (size_t)rank);
  memcpy(p->out_dims, out->dims, sizeof(int64_t) * (size_t)rank);
  for (int d = p->first; d < rank; d++) {
    /* IRFFT's last dim is n long in the result, n/2+1 in the operand. */
    int64_t full = f->type == FFT_TYPE_IRFFT && d == rank - 1 ? out->dims[d] : x->dims[d];
    if (f->length.values[d - p->first] != full) return "an fft_length that differs from the operand's dims";
    p->length[d] = full;
    if (full > 0) p->factor_count[d] = prime_factors(full, p->factors[d]);
  }
  return NULL;
}

static int64_t dims_count(const int64_t *dims, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= dims[d];
  return n;
}

int64_t fft_plan_in_count(const FftPlan *p) { return dims_count(p->in_dims, p->rank); }
int64_t fft_plan_out_count(const FftPlan *p) { return dims_count(p->out_dims, p->rank); }

Complex fft_unit_root(int64_t j, int64_t n, bool inverse) {
  int64_t quarter = (4 * j) / n, rest = 4 * j - quarter * n;
  double angle = (M_PI / 2) * (double)rest / (double)n;
  Complex w = CMPLX(cos(angle), sin(angle));
  static const Complex turns[4] = {1, CMPLX(0, 1), -1, CMPLX(0, -1)};
  w *= turns[quarter];
  return inverse ? w : conj(w);
}

/* ----------------------------------------------------- one line's transform */

static bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* In-place radix-2 forward transform of m (a power of two) values. */
static void radix2_forward(const FftLine *p, Complex *x) {
  int64_t m = p->m;
  for (int64_t i = 1, j = 0; i < m; i++) {  /* bit-reversal permutation */
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) {
      Complex t = x[i];
      x[i] = x[j];
      x[j] = t;
    }
  }
  for (int64_t half = 1; half < m; half *= 2) {
    int64_t step = m / (2 * half);
    for (int64_t start = 0; start < m; start += 2 * half)
      for (int64_t k = 0; k < half; k++) {
        Complex u = x[start + k], v = x[start + k + half] * p->twiddle[k * step];
        x[start + k] = u + v;
        x[start + k + half] = u - v;
      }
  }
}

FftLine *fft_line_create(int64_t n) {
  FftLine *p = mem_calloc(1, sizeof *p);
  p->n = n;
  p->m = 1;
  while (p->m < (is_power_of_two(n) ? n : 2 * n - 1)) p->m *= 2;
  p->twiddle = mem_calloc((size_t)p->m / 2 + 1, sizeof *p->twiddle);
  for (int64_t j = 0; j < p->m / 2; j++) p->twiddle[j] = fft_unit_root(j, p->m, false);
  if (is_power_of_two(n)) return p;
  /* c[k] = e^(-pi i k^2/n) = e^(-2 pi i (k^2 mod 2n) / 2n): the reduced
   * exponent keeps the angle small and exact for large k. */
  p->chirp = mem_calloc((size_t)n, sizeof *p->chirp);
  for (int64_t k = 0; k < n; k++) p->chirp[k] = fft_unit_root((k * k) % (2 * n), 2 * n, false);
  p->chirp_filter = mem_calloc((size_t)p->m, sizeof *p->chirp_filter);
  for (int64_t t = 0; t < n; t++) {
    p->chirp_filter[t] = conj(p->chirp[t]);
    if (t > 0) p->chirp_filter[p->m - t] = conj(p->chirp[t]);
  }
  radix2_forward(p, p->chirp_filter);
  return p;
}

void fft_line_free(FftLine *p) {
  if (!p) return;
  mem_free(p->twiddle);
  mem_free(p->chirp);
  mem_free(p->chirp_filter);
  mem_free(p);
}

/* The forward transform of line[0..n) in place; work holds p->m values. */
static void fft_forward(const FftLine *p, Complex *line, Complex *work) {
  if (!p->chirp) {
    radix2_forward(p, line);
    return;
  }
  int64_t n = p->n, m = p->m;
  for (int64_t k = 0; k < m; k++) work[k] = k < n ? line[k] * p->chirp[k] : 0;
  radix2_forward(p, work);
  /* The inverse transform of the product, as conj(forward(conj(.))) / m. */
  for (int64_t k = 0; k < m; k++) work[k] = conj(work[k] * p->chirp_filter[k]);
  radix2_forward(p, work);
  for (int64_t j = 0; j < n; j++) line[j] = p->chirp[j] * conj(work[j]) / (double)m;
}

/* The transform of one line, forward, or inverse (conjugated on both sides
 * and scaled by 1/n). */
static void fft_line_run(const FftLine *p, Complex *line, Complex *work, bool inverse) {
  if (inverse)
    for (int64_t j = 0; j < p->n; j++) line[j] = conj(line[j]);
  fft_forward(p, line, work);
  if (inverse)
    for (int64_t j = 0; j < p->n; j++) line[j] = conj(line[j]) / (double)p->n;
}

void fft_axis_run_lines(const FftAxis *a, int64_t first, int64_t last, Complex *line, Complex *work) {
  int64_t n = a->line->n;
  for (int64_t l = first; l < last; l++) {
    Complex *base = a->data + (l / a->inner) * n * a->inner + l % a->inner;
    for (int64_t j = 0; j < n; j++) line[j] = base[j * a->inner];
    fft_line_run(a->line, line, work, a->inverse);
    for (int64_t j = 0; j < n; j++) base[j * a->inner] = line[j];
  }
}

/* ------------------------------------------------------ the whole transform */

static void run_axis_serially(const FftAxis *a) {
  Complex *line = mem_calloc((size_t)a->line->m, sizeof *line), *work = mem_calloc((size_t)a->line->m, sizeof *work);
  fft_axis_run_lines(a, 0, a->outer * a->inner, line, work);
  mem_free(line);
  mem_free(work);
}

/* Transforms the work array (row-major, dims) along dimension axis. */
static void transform_axis(Complex *data, const int64_t *dims, int rank, int axis, const FftLine *line, bool inverse,
                           FftAxisRunner *runner, void *context) {
  if (!line) return; /* a length of 0: nothing to transform */
  FftAxis a = {data, line, 1, 1, inverse};
  for (int d = 0; d < axis; d++) a.outer *= dims[d];
  for (int d = axis + 1; d < rank; d++) a.inner *= dims[d];
  if (a.outer * a.inner * line->n == 0) return;
  if (runner) runner(context, &a);
  else run_axis_serially(&a);
}

/* IRFFT's last dimension: each line of `half` values becomes n, with
 * X[k] = conj(X[n-k]) above n/2. */
static Complex *extend_hermitian(const Complex *data, int64_t lines, int64_t half, int64_t n) {
  Complex *full = mem_calloc((size_t)(lines * n) + 1, sizeof *full);
  for (int64_t l = 0; l < lines; l++)
    for (int64_t k = 0; k < n; k++) full[l * n + k] = k < half ? data[l * half + k] : conj(data[l * half + n - k]);
  return full;
}

Complex *fft_plan_run(const FftPlan *p, FftLine *const *lines, Complex *data, FftAxisRunner *runner, void *context) {
  int rank = p->rank;
  int64_t dims[AXLE_MAX_RANK];
  memcpy(dims, p->in_dims, sizeof dims);
  int last = p->type == FFT_TYPE_IRFFT ? rank - 1 : rank;  /* IRFFT does its last dim after extending it */
  for (int axis = p->first; axis < last; axis++)
    transform_axis(data, dims, rank, axis, lines[axis], p->inverse, runner, context);
  if (p->type == FFT_TYPE_IRFFT) {
    int64_t n = p->out_dims[rank - 1], half = dims[rank - 1];
    Complex *full = extend_hermitian(data, half ? dims_count(dims, rank) / half : 0, half, n);
    mem_free(data);
    data = full;
    dims[rank - 1] = n;
    transform_axis(data, dims, rank, rank - 1, lines[rank - 1], true, runner, context);
  }
  /* RFFT keeps the first n/2+1 of each last-dimension line. */
  int64_t out_last = p->out_dims[rank - 1], work_last = dims[rank - 1], out_count = fft_plan_out_count(p);
  Complex *out = mem_calloc((size_t)out_count + 1, sizeof *out);
  for (int64_t o = 0; out_last > 0 && o < out_count; o++) out[o] = data[(o / out_last) * work_last + o % out_last];
  mem_free(data);
  return out;
}
