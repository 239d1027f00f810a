/* The CPU backend's fft: a runtime routine (a CPU_STEP_CALL step) for
 * FFT, IFFT, RFFT and IRFFT over the 1 to 3 minor-most dimensions, of any
 * length, with HLO's (and NumPy's) definitions:
 *
 *   FFT    X[k] = sum_j x[j] e^(-2 pi i jk/n)            complex -> complex
 *   IFFT   x[j] = 1/n sum_k X[k] e^(+2 pi i jk/n)        complex -> complex
 *   RFFT   the FFT of a real input, keeping the last dimension's first
 *          n/2+1 outputs                                   real -> complex
 *   IRFFT  the last dimension's n/2+1 inputs extended to n by
 *          X[n-k] = conj(X[k]), then the real part of the IFFT
 *
 * A multi-dimensional transform is the 1-D one along each dimension in
 * turn, in double complex throughout, rounded once to the result type. A
 * length that is a power of two runs the iterative radix-2 algorithm; any
 * other length n runs Bluestein's: X[j] = c[j] sum_k (x[k] c[k]) conj(c[j-k])
 * with the chirp c[t] = e^(-pi i t^2/n) (from jk = (j^2 + k^2 - (j-k)^2)/2),
 * a convolution done by radix-2 transforms of a power of two m >= 2n-1.
 * The inverse is the forward transform conjugated on both sides. Plans
 * (twiddles, the chirp and its transform) are made at compile time.
 *
 * The lines along one dimension are independent: they run as tasks of a
 * fixed number of lines (chosen by the shape) on the pool, so every thread
 * count writes the same bytes. */
#include "complex_compat.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"

typedef double complex Complex;

/* e^(sign 2 pi i j/n), 0 <= j < n. Whole quarter turns are applied
 * exactly, so 1, i, -1 and -i come out exact, and the rest of the angle
 * stays below a quarter turn, where cos and sin are most accurate. */
static Complex unit_root(int64_t j, int64_t n, double sign) {
  int64_t quarter = (4 * j) / n, rest = 4 * j - quarter * n;
  double angle = (M_PI / 2) * (double)rest / (double)n;
  Complex w = CMPLX(cos(angle), sin(angle));
  static const Complex turns[4] = {1, CMPLX(0, 1), -1, CMPLX(0, -1)};
  w *= turns[quarter];
  return sign < 0 ? conj(w) : w;
}

/* ---- plans ---- */

/* The forward transform of one length. */
typedef struct FftPlan {
  int64_t n;
  int64_t m;               /* the radix-2 length: n itself, or Bluestein's m */
  Complex *twiddle;        /* e^(-2 pi i j/m), j < m/2 */
  Complex *chirp;          /* Bluestein: c[k], k < n; NULL for a power of two */
  Complex *chirp_filter;   /* Bluestein: the transform of conj(c) laid circularly */
} FftPlan;

static bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* In-place radix-2 forward transform of m (a power of two) values. */
static void radix2_forward(const FftPlan *p, Complex *x) {
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

static FftPlan *fft_plan_create(int64_t n) {
  FftPlan *p = mem_calloc(1, sizeof *p);
  p->n = n;
  p->m = 1;
  while (p->m < (is_power_of_two(n) ? n : 2 * n - 1)) p->m *= 2;
  p->twiddle = mem_calloc((size_t)p->m / 2 + 1, sizeof *p->twiddle);
  for (int64_t j = 0; j < p->m / 2; j++) p->twiddle[j] = unit_root(j, p->m, -1.0);
  if (is_power_of_two(n)) return p;
  /* c[k] = e^(-pi i k^2/n) = e^(-2 pi i (k^2 mod 2n) / 2n): the reduced
   * exponent keeps the angle small and exact for large k. */
  p->chirp = mem_calloc((size_t)n, sizeof *p->chirp);
  for (int64_t k = 0; k < n; k++) p->chirp[k] = unit_root((k * k) % (2 * n), 2 * n, -1.0);
  p->chirp_filter = mem_calloc((size_t)p->m, sizeof *p->chirp_filter);
  for (int64_t t = 0; t < n; t++) {
    p->chirp_filter[t] = conj(p->chirp[t]);
    if (t > 0) p->chirp_filter[p->m - t] = conj(p->chirp[t]);
  }
  radix2_forward(p, p->chirp_filter);
  return p;
}

static void fft_plan_free(FftPlan *p) {
  if (!p) return;
  mem_free(p->twiddle);
  mem_free(p->chirp);
  mem_free(p->chirp_filter);
  mem_free(p);
}

/* The forward transform of line[0..n) in place; work holds p->m values. */
static void fft_forward(const FftPlan *p, Complex *line, Complex *work) {
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
static void fft_line(const FftPlan *p, Complex *line, Complex *work, bool inverse) {
  if (inverse)
    for (int64_t j = 0; j < p->n; j++) line[j] = conj(line[j]);
  fft_forward(p, line, work);
  if (inverse)
    for (int64_t j = 0; j < p->n; j++) line[j] = conj(line[j]) / (double)p->n;
}

/* ---- the routine ---- */

typedef struct FftState {
  FftType type;
  ElementType in_type, out_type;
  int rank, first;                   /* transformed dims: first .. rank-1 */
  int64_t in_dims[AXLE_MAX_RANK], out_dims[AXLE_MAX_RANK];
  FftPlan *plans[AXLE_MAX_RANK];     /* per transformed dim, at its full length */
} FftState;

static void fft_state_free(void *state) {
  FftState *s = state;
  if (!s) return;
  for (int d = 0; d < AXLE_MAX_RANK; d++) fft_plan_free(s->plans[d]);
  mem_free(s);
}

/* Lines of about this many elements make one task. */
enum { FFT_ELEMENTS_PER_TASK = 1 << 13 };

/* One pass along dimension `axis` of the work array (row-major, dims). */
typedef struct AxisPass {
  Complex *data;
  const FftPlan *plan;
  int64_t outer, inner, lines_per_task;
  bool inverse;
} AxisPass;

static void axis_task_run(void *context, int64_t task) {
  const AxisPass *a = context;
  int64_t n = a->plan->n, lines = a->outer * a->inner;
  int64_t first = task * a->lines_per_task;
  int64_t last = first + a->lines_per_task < lines ? first + a->lines_per_task : lines;
  Complex *line = mem_calloc((size_t)a->plan->m, sizeof *line);
  Complex *work = mem_calloc((size_t)a->plan->m, sizeof *work);
  for (int64_t l = first; l < last; l++) {
    Complex *base = a->data + (l / a->inner) * n * a->inner + l % a->inner;
    for (int64_t j = 0; j < n; j++) line[j] = base[j * a->inner];
    fft_line(a->plan, line, work, a->inverse);
    for (int64_t j = 0; j < n; j++) base[j * a->inner] = line[j];
  }
  mem_free(line);
  mem_free(work);
}

static void transform_axis(Complex *data, const int64_t *dims, int rank, int axis, const FftPlan *plan, bool inverse,
                           ThreadPool *pool) {
  AxisPass a = {data, plan, 1, 1, 1, inverse};
  for (int d = 0; d < axis; d++) a.outer *= dims[d];
  for (int d = axis + 1; d < rank; d++) a.inner *= dims[d];
  a.lines_per_task = FFT_ELEMENTS_PER_TASK / plan->n > 0 ? FFT_ELEMENTS_PER_TASK / plan->n : 1;
  int64_t lines = a.outer * a.inner;
  thread_pool_run(pool, (lines + a.lines_per_task - 1) / a.lines_per_task, axis_task_run, &a);
}

static Complex load_element(ElementType t, const void *data, int64_t i) {
  switch (t) {
  case TYPE_F32: return ((const float *)data)[i];
  case TYPE_F64: return ((const double *)data)[i];
  case TYPE_C64: return CMPLX(((const float *)data)[2 * i], ((const float *)data)[2 * i + 1]);
  default: return CMPLX(((const double *)data)[2 * i], ((const double *)data)[2 * i + 1]);
  }
}

static void store_element(ElementType t, void *data, int64_t i, Complex v) {
  switch (t) {
  case TYPE_F32: ((float *)data)[i] = (float)creal(v); break;
  case TYPE_F64: ((double *)data)[i] = creal(v); break;
  case TYPE_C64:
    ((float *)data)[2 * i] = (float)creal(v);
    ((float *)data)[2 * i + 1] = (float)cimag(v);
    break;
  default:
    ((double *)data)[2 * i] = creal(v);
    ((double *)data)[2 * i + 1] = cimag(v);
    break;
  }
}

static int64_t dims_count(const int64_t *dims, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= dims[d];
  return n;
}

/* IRFFT's last dimension: each line of `half` values becomes n, with
 * X[k] = conj(X[n-k]) above n/2. */
static Complex *extend_hermitian(const Complex *data, int64_t lines, int64_t half, int64_t n) {
  Complex *full = mem_calloc((size_t)(lines * n), sizeof *full);
  for (int64_t l = 0; l < lines; l++)
    for (int64_t k = 0; k < n; k++) full[l * n + k] = k < half ? data[l * half + k] : conj(data[l * half + n - k]);
  return full;
}

static bool fft_call(const CpuStep *step, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)st;
  const FftState *s = step->state;
  int rank = s->rank;
  int64_t dims[AXLE_MAX_RANK];
  memcpy(dims, s->in_dims, sizeof dims);
  int64_t count = dims_count(dims, rank);
  Complex *data = mem_calloc((size_t)count, sizeof *data);
  for (int64_t i = 0; i < count; i++) data[i] = load_element(s->in_type, buffers[0], i);
  bool inverse = s->type == FFT_TYPE_IFFT || s->type == FFT_TYPE_IRFFT;
  int last = s->type == FFT_TYPE_IRFFT ? rank - 1 : rank;  /* IRFFT does its last dim after extending it */
  for (int axis = s->first; axis < last; axis++)
    transform_axis(data, dims, rank, axis, s->plans[axis], inverse, pool);
  if (s->type == FFT_TYPE_IRFFT) {
    int64_t n = s->out_dims[rank - 1];
    Complex *full = extend_hermitian(data, count / dims[rank - 1], dims[rank - 1], n);
    mem_free(data);
    data = full;
    dims[rank - 1] = n;
    transform_axis(data, dims, rank, rank - 1, s->plans[rank - 1], true, pool);
  }
  /* RFFT keeps the first n/2+1 of each last-dimension line. */
  int64_t out_last = s->out_dims[rank - 1], work_last = dims[rank - 1];
  int64_t out_count = dims_count(s->out_dims, rank);
  for (int64_t o = 0; o < out_count; o++)
    store_element(s->out_type, buffers[1], o, data[(o / out_last) * work_last + o % out_last]);
  mem_free(data);
  return true;
}

/* The element types each kind of transform takes and gives. */
static bool fft_types_fit(FftType type, ElementType in, ElementType out) {
  switch (type) {
  case FFT_TYPE_RFFT: return (in == TYPE_F32 && out == TYPE_C64) || (in == TYPE_F64 && out == TYPE_C128);
  case FFT_TYPE_IRFFT: return (in == TYPE_C64 && out == TYPE_F32) || (in == TYPE_C128 && out == TYPE_F64);
  default: return (in == TYPE_C64 || in == TYPE_C128) && out == in;
  }
}

bool cpu_compile_fft(CpuCompile *c, const Instruction *inst) {
  const Shape *x = &inst->operands[0]->shape, *out = &inst->shape;
  const FftDims *f = attrs_fft(&inst->attrs);
  int count = f->length.count, rank = x->rank;
  if (shape_is_tuple(x) || shape_is_tuple(out) || count < 1 || count > 3 || rank < count || out->rank != rank)
    return cpu_refuse(c, inst, "an fft whose fft_length does not fit its operand");
  if (!fft_types_fit(f->type, x->type, out->type)) return cpu_refuse(c, inst, "an fft of these element types");
  if (shape_element_count(out) == 0) return true;  /* nothing to write */
  if (shape_element_count(x) == 0) return cpu_refuse(c, inst, "an fft of an empty operand into a non-empty result");
  for (int d = 0; d < rank - 1; d++)
    if (out->dims[d] != x->dims[d]) return cpu_refuse(c, inst, "an fft whose result dims differ from its operand's");
  int64_t in_last = x->dims[rank - 1], out_last = out->dims[rank - 1];
  bool last_fits = f->type == FFT_TYPE_RFFT    ? out_last == in_last / 2 + 1
                   : f->type == FFT_TYPE_IRFFT ? in_last == out_last / 2 + 1
                                               : out_last == in_last;
  if (!last_fits) return cpu_refuse(c, inst, "an fft whose last result dim does not fit its type");
  int first = rank - count;
  for (int i = 0; i < count; i++) {
    int d = first + i;
    int64_t full = f->type == FFT_TYPE_IRFFT && d == rank - 1 ? out->dims[d] : x->dims[d];
    if (f->length.values[i] != full) return cpu_refuse(c, inst, "an fft_length that differs from the operand's dims");
  }
  FftState *s = mem_calloc(1, sizeof *s);
  *s = (FftState){.type = f->type, .in_type = x->type, .out_type = out->type, .rank = rank, .first = first};
  memcpy(s->in_dims, x->dims, sizeof(int64_t) * (size_t)rank);
  memcpy(s->out_dims, out->dims, sizeof(int64_t) * (size_t)rank);
  for (int i = 0; i < count; i++) s->plans[first + i] = fft_plan_create(f->length.values[i]);
  return cpu_add_call_step(c, inst, 1, fft_call, s, fft_state_free) != NULL;
}
