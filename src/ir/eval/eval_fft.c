/* The evaluator's fft: discrete Fourier transforms over the 1 to 3
 * minor-most dimensions, of any length.
 *
 *   FFT    X[k] = sum_j x[j] e^(-2 pi i jk/n)            complex -> complex
 *   IFFT   x[j] = 1/n sum_k X[k] e^(+2 pi i jk/n)        complex -> complex
 *   RFFT   the FFT of a real input, keeping the last dimension's first
 *          n/2+1 outputs (the rest are their conjugates)   real -> complex
 *   IRFFT  the inverse of RFFT: the last dimension's n/2+1 inputs are
 *          extended to n by X[n-k] = conj(X[k]) and the real part of the
 *          IFFT is kept (so the imaginary parts of X[0], and of X[n/2] for
 *          even n, are ignored, as in XLA and NumPy)      complex -> real
 * A multi-dimensional transform is the 1-D one along each dimension in
 * turn. All arithmetic is in double complex, rounded once to the result
 * type at the end.
 *
 * The 1-D transform is the mixed-radix Cooley-Tukey recursion: a length
 * n = p*m with p its smallest prime factor splits into p transforms of
 * length m over the inputs j = r (mod p), joined by a DFT of length p
 * for each output. That costs n * (sum of n's prime factors): fast for
 * lengths with small factors, and O(n^2) (a plain DFT) for a prime. */
#include "complex_compat.h"
#include <math.h>
#include <stdlib.h>

#include "eval_internal.h"

/* The twiddle factors of the top-level length: w[j] = e^(sign 2 pi i j/n). */
typedef struct Dft {
  int64_t n;
  double complex *twiddle;
  double complex *scratch; /* n values: the join step's gathered terms */
} Dft;

static int64_t smallest_factor(int64_t n) {
  for (int64_t p = 2; p * p <= n; p++)
    if (n % p == 0) return p;
  return n;
}

/* out[k], k < n, is the transform of in[0], in[stride], ..., in[(n-1)*stride].
 * step = dft->n / n: the top-level twiddles w[step * j] are this length's. */
static void dft_recurse(const Dft *dft, const double complex *in, int64_t stride, double complex *out,
                        int64_t n, int64_t step) {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  int64_t p = smallest_factor(n), m = n / p;
  /* Sub-transform r of the inputs j = r (mod p) lands in out[r*m .. r*m+m). */
  for (int64_t r = 0; r < p; r++) dft_recurse(dft, in + r * stride, stride * p, out + r * m, m, step * p);
  /* X[k + q*m] = sum_r w_n^(r k) Y_r[k] w_p^(r q). The p values read for
   * one k are exactly the p written, so the join works in place. */
  double complex *term = dft->scratch;
  for (int64_t k = 0; k < m; k++) {
    for (int64_t r = 0; r < p; r++) term[r] = out[r * m + k] * dft->twiddle[(r * k * step) % dft->n];
    for (int64_t q = 0; q < p; q++) {
      double complex sum = 0;
      for (int64_t r = 0; r < p; r++) sum += term[r] * dft->twiddle[((r * q) % p) * m * step];
      out[k + q * m] = sum;
    }
  }
}

/* e^(sign 2 pi i j/n) for 0 <= j < n. The angle is split into whole
 * quarter turns, applied exactly, and a remainder below a quarter turn, so
 * that 1, i, -1 and -i come out exact (an FFT of integers then has exact
 * zeros where it should) and large j loses no accuracy. */
static double complex unit_root(int64_t j, int64_t n, double sign) {
  int64_t quarter = (4 * j) / n, rest = 4 * j - quarter * n;
  double angle = (M_PI / 2) * (double)rest / (double)n;
  double complex w = CMPLX(cos(angle), sin(angle));
  static const double complex turns[4] = {1, CMPLX(0, 1), -1, CMPLX(0, -1)};
  w *= turns[quarter];
  return sign < 0 ? conj(w) : w;
}

/* Transforms data (a row-major array of dims) along dimension axis. */
static void transform_axis(double complex *data, const int64_t *dims, int rank, int axis, bool inverse) {
  int64_t n = dims[axis], inner = 1, outer = 1;
  for (int d = axis + 1; d < rank; d++) inner *= dims[d];
  for (int d = 0; d < axis; d++) outer *= dims[d];
  if (n == 0 || inner == 0 || outer == 0) return;
  Dft dft = {n, eval_scratch_calloc(n, sizeof(double complex)),
             eval_scratch_calloc(n, sizeof(double complex))};
  for (int64_t j = 0; j < n; j++) dft.twiddle[j] = unit_root(j, n, inverse ? 1.0 : -1.0);
  double complex *line = eval_scratch_calloc(n, sizeof(double complex));
  double complex *result = eval_scratch_calloc(n, sizeof(double complex));
  double scale = inverse ? 1.0 / (double)n : 1.0;
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t i = 0; i < inner; i++) {
      double complex *base = data + o * n * inner + i;
      for (int64_t j = 0; j < n; j++) line[j] = base[j * inner];
      dft_recurse(&dft, line, 1, result, n, 1);
      for (int64_t j = 0; j < n; j++) base[j * inner] = result[j] * scale;
    }
  }
  mem_free(line);
  mem_free(result);
  mem_free(dft.twiddle);
  mem_free(dft.scratch);
}

/* IRFFT's last dimension: each line of half = n/2+1 values becomes n, with
 * X[k] = conj(X[n-k]) above n/2. */
static double complex *extend_hermitian(const double complex *data, const int64_t *dims, int rank, int64_t n) {
  int64_t half = dims[rank - 1], lines = 1;
  for (int d = 0; d < rank - 1; d++) lines *= dims[d];
  double complex *full = eval_scratch_calloc(lines * n, sizeof(double complex));
  for (int64_t l = 0; l < lines; l++) {
    const double complex *from = data + l * half;
    double complex *to = full + l * n;
    for (int64_t k = 0; k < n; k++) to[k] = k < half ? from[k] : conj(from[n - k]);
  }
  return full;
}

/* What the loops below rely on, for modules the verifier has not seen:
 * the result has the operand's dims but in the last one, which is the
 * same for FFT and IFFT, n/2+1 for RFFT's n, and n with n/2+1 = the
 * operand's for IRFFT. */
static bool fft_shapes_fit(const Shape *x, const Shape *out, const FftDims *f) {
  int count = f->length.count, rank = x->rank;
  if (x->type == TYPE_TUPLE || out->type == TYPE_TUPLE || count < 1 || count > 3 || rank < count ||
      out->rank != rank)
    return false;
  for (int d = 0; d < rank - 1; d++)
    if (out->dims[d] != x->dims[d]) return false;
  int64_t in_last = x->dims[rank - 1], out_last = out->dims[rank - 1];
  switch (f->type) {
  case FFT_TYPE_RFFT: return out_last == in_last / 2 + 1;
  case FFT_TYPE_IRFFT: return in_last == out_last / 2 + 1;
  default: return out_last == in_last;
  }
}

Literal *eval_fft(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *x = operands[0];
  const FftDims *f = attrs_fft(&inst->attrs);
  int count = f->length.count;
  if (!fft_shapes_fit(&x->shape, &inst->shape, f)) {
    status_error(st, STATUS_VERIFY_ERROR, "fft: operand, result and fft_length do not fit together");
    return NULL;
  }
  int rank = x->shape.rank, first = rank - count;
  bool inverse = f->type == FFT_TYPE_IFFT || f->type == FFT_TYPE_IRFFT;
  /* The work array: the operand's shape, except that RFFT transforms the
   * real input at full length and IRFFT extends the last dimension below. */
  int64_t in_count = shape_element_count(&x->shape);
  double complex *data = eval_scratch_calloc(in_count, sizeof(double complex));
  for (int64_t i = 0; i < in_count; i++) data[i] = literal_get_complex(x, i);
  int64_t dims[AXLE_MAX_RANK];
  memcpy(dims, x->shape.dims, sizeof(int64_t) * (size_t)rank);
  int last_axis_done = rank;  /* IRFFT does the last dimension after extending it */
  if (f->type == FFT_TYPE_IRFFT) last_axis_done = rank - 1;
  for (int axis = first; axis < last_axis_done; axis++) transform_axis(data, dims, rank, axis, inverse);
  if (f->type == FFT_TYPE_IRFFT) {
    int64_t n = inst->shape.dims[rank - 1];
    double complex *full = extend_hermitian(data, dims, rank, n);
    mem_free(data);
    data = full;
    dims[rank - 1] = n;
    transform_axis(data, dims, rank, rank - 1, true);
  }
  /* RFFT keeps the first n/2+1 of each last-dimension line: the result's
   * extent, read from the work array's rows. */
  Literal *out = literal_create(&inst->shape);
  int64_t out_last = inst->shape.dims[rank - 1], work_last = dims[rank - 1];
  int64_t out_count = shape_element_count(&inst->shape);
  for (int64_t o = 0; out_last > 0 && o < out_count; o++) {
    double complex v = data[(o / out_last) * work_last + o % out_last];
    if (f->type == FFT_TYPE_IRFFT) literal_set_f64(out, o, creal(v));
    else literal_set_complex(out, o, v);
  }
  mem_free(data);
  return out;
}
