/* The description of one fft, built once from its shapes and fft_length
 * (fft_plan_make) and executed by every implementation: the evaluator
 * (src/ir/eval/eval_fft.c) and the CPU backend's routine
 * (src/emit_x86/cpu_fft.c) run it on the host with the one host algorithm
 * below, so they agree bit for bit; the GPU backend (src/emit_ptx/gpu_fft.c)
 * runs one Stockham kernel per entry of the plan's factorization, with the
 * plan's twiddles (fft_unit_root), and agrees within a few ulps of f64.
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
 * turn, in double complex throughout, rounded once to the result type.
 *
 * The host's 1-D algorithm (FftLine): a length that is a power of two runs
 * the iterative radix-2 algorithm; any other length n runs Bluestein's,
 * X[j] = c[j] sum_k (x[k] c[k]) conj(c[j-k]) with the chirp
 * c[t] = e^(-pi i t^2/n) (from jk = (j^2 + k^2 - (j-k)^2)/2), a
 * convolution done by radix-2 transforms of a power of two m >= 2n-1: work
 * n log n for every length. The inverse is the forward transform
 * conjugated on both sides, scaled by 1/n. */
#ifndef AXLE_IR_FFT_PLAN_H
#define AXLE_IR_FFT_PLAN_H

#include "ir.h"

enum { FFT_MAX_FACTORS = 64 };

typedef struct FftPlan {
  FftType type;
  bool inverse;                          /* IFFT, IRFFT: e^(+2 pi i jk/n), scaled by 1/n */
  int rank, first;                       /* the transformed dims: first .. rank-1 */
  int64_t in_dims[AXLE_MAX_RANK], out_dims[AXLE_MAX_RANK];
  /* Per transformed dim d: the transform length (IRFFT's last: the
   * result's), and its prime factors smallest first (1 for a length of 1):
   * the radices of the GPU's stages, one kernel each. */
  int64_t length[AXLE_MAX_RANK];
  int factor_count[AXLE_MAX_RANK];
  int64_t factors[AXLE_MAX_RANK][FFT_MAX_FACTORS];
} FftPlan;

/* The plan of fft(x) -> out; NULL, or what does not fit: 1 to 3 lengths
 * equal to the transformed dims, the result's dims the operand's but the
 * last, which is n/2+1 for RFFT's n and the n of IRFFT's n/2+1. */
const char *fft_plan_make(const Shape *x, const Shape *out, const FftDims *f, FftPlan *p);
/* Elements of the operand and of the result. */
int64_t fft_plan_in_count(const FftPlan *p);
int64_t fft_plan_out_count(const FftPlan *p);

/* e^(2 pi i j/n), conjugated unless inverse, 0 <= j < n. Whole quarter
 * turns are applied exactly, so 1, i, -1 and -i come out exact (an fft of
 * integers then has exact zeros where it should), and the rest of the
 * angle stays below a quarter turn, where cos and sin are most accurate. */
double _Complex fft_unit_root(int64_t j, int64_t n, bool inverse);

/* ------------------------------------------------ the host algorithm */

/* The 1-D transform of one length, made once (twiddles and chirp). */
typedef struct FftLine {
  int64_t n;
  int64_t m;                      /* the radix-2 length: n itself, or Bluestein's m */
  double _Complex *twiddle;       /* e^(-2 pi i j/m), j < m/2 */
  double _Complex *chirp;         /* Bluestein: c[k], k < n; NULL for a power of two */
  double _Complex *chirp_filter;  /* Bluestein: the transform of conj(c) laid circularly */
} FftLine;

FftLine *fft_line_create(int64_t n);
void fft_line_free(FftLine *line);

/* The lines along one transformed dim of the work array, seen as
 * [outer, n, inner]: line l starts at (l / inner) * n * inner + l % inner. */
typedef struct FftAxis {
  double _Complex *data;
  const FftLine *line;
  int64_t outer, inner;
  bool inverse;
} FftAxis;

/* Transforms lines [first, last) of an axis; line and work hold
 * line->m values each. Lines are independent: any split gives the same
 * bytes. */
void fft_axis_run_lines(const FftAxis *a, int64_t first, int64_t last, double _Complex *line, double _Complex *work);

/* How a caller runs every line of one axis (the CPU: tasks on its pool);
 * NULL runs them one after another. */
typedef void FftAxisRunner(void *context, const FftAxis *a);

/* The whole transform: data (taken, freed) holds the operand's elements
 * as complex values; lines[d] is the FftLine of length[d] for each
 * transformed d. Returns the result's elements (real ones in the real
 * part for IRFFT), a new array. */
double _Complex *fft_plan_run(const FftPlan *p, FftLine *const *lines, double _Complex *data, FftAxisRunner *runner,
                              void *context);

#endif
