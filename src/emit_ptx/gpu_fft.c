/* The GPU backend's fft: FFT, IFFT, RFFT and IRFFT over the 1 to 3
 * minor-most dimensions, any length, c64 / c128 (f32 / f64 for the real
 * sides of RFFT and IRFFT).
 *
 * The GPU executes the plan every implementation shares
 * (src/ir/fft_plan.h): a multi-dimensional transform is the 1-D one along
 * each dimension in turn, in f64 complex, rounded once to the result type
 * at the end. Each dimension of length n = R1 R2 ... (the plan's
 * factorization: its prime factors, smallest first) is one Stockham stage
 * ("pass", one kernel) per factor: a thread per output element t of the
 * stage, t = (block, q, k) = block*Ns*R + q*Ns + k with Ns the product of
 * the earlier radices, sums the R inputs j + r*n/R (j = block*Ns + k)
 * times w[r*(k + q*Ns)*n/(Ns*R) mod n]: the twiddle and the radix-R DFT
 * in one product. A power of two is log2(n) radix-2 stages; a prime is one
 * stage of radix n, the plain O(n^2) DFT; work is n * (sum of factors).
 * Stockham's ordering needs no bit reversal: each stage reads one array
 * and writes the other. This is the GPU's own algorithm (a thread per
 * output, no shared chirp convolution): its sums differ from the host's
 * (radix-2 and Bluestein, fft_plan.c) within a few ulps of f64. The
 * twiddles w are the plan's fft_unit_root, computed on the host and
 * uploaded once per dimension as a constant binding, so no kernel needs an
 * f64 sin or cos.
 *
 * Stages ping-pong through two f64-complex scratch arrays
 * (gpu_reserve_temp); the first stage reads the operand in its own type,
 * the last writes the result in its own type. RFFT's last stage computes
 * only the first n/2+1 outputs of each line; IRFFT's last dimension reads,
 * in its first stage, a line of n/2+1 values as the n of its Hermitian
 * extension, X[j] = conj(X[n-j]) for j > n/2, and its last stage keeps the
 * real part. */
#include "complex_compat.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_serial.h"
#include "ir/fft_plan.h"

enum { FFT_BLOCK = 128, FFT_MAX_GRID = 1 << 20 };

/* One stage of the DFT along one dimension of a row-major array seen as
 * [outer, n_in, inner] (in) and [outer, n_out, inner] (out). */
typedef struct FftPass {
  int64_t outer, inner;
  int64_t n;              /* the transform length (the twiddles') */
  int64_t n_in, n_out;    /* stored line lengths: n, or n/2+1 (RFFT's out, IRFFT's in) */
  int64_t radix, span;   /* this stage's radix R, and Ns: the product of the earlier stages' radices */
  bool inverse;           /* e^(+2 pi i jk/n) */
  bool scale;             /* the dimension's last stage of an inverse: times 1/n */
  bool hermitian;         /* IRFFT's last dimension, first stage: j > n_in-1 reads conj(in[n-j]) */
  bool real_out;          /* keep the real part */
  ElementType in_type, out_type;  /* TYPE_C128 for the scratch arrays */
} FftPass;

/* The twiddles of one pass as a constant binding: n complex doubles. */
static int twiddle_binding(GpuCompile *c, int64_t n, bool inverse) {
  double *w = mem_malloc((size_t)(2 * n) * sizeof *w);
  for (int64_t j = 0; j < n; j++) {
    double _Complex root = fft_unit_root(j, n, inverse);
    w[2 * j] = creal(root);
    w[2 * j + 1] = cimag(root);
  }
  GpuBinding b = {.kind = GPU_BINDING_CONSTANT, .bytes = 16 * n};
  return gpu_program_add_binding(c->p, b, w);
}

/* The input x[j] of output (o, i)'s line, as (re, im) in f64. */
static void load_line_value(PtxBuilder *b, const FftPass *pass, PtxReg in, PtxReg line_base, PtxReg j,
                            PtxReg *re, PtxReg *im) {
  PtxReg source_j = j;
  PtxReg mirrored = ptx_reg_new(b, PTX_PRED);
  if (pass->hermitian) {
    PtxReg reflected = ptx_reg_new(b, PTX_S64);
    source_j = ptx_reg_new(b, PTX_S64);
    ptx_inst(b, "setp.ge.s64 $r, $r, $D", mirrored, j, pass->n_in);
    ptx_inst(b, "sub.s64 $r, $D, $r", reflected, pass->n, j);
    ptx_inst(b, "selp.b64 $r, $r, $r, $r", source_j, reflected, j, mirrored);
  }
  PtxReg at = ptx_serial_mad(b, source_j, pass->inner, line_base);
  *re = ptx_serial_load(b, in, at, pass->in_type, 0);
  if (type_is_complex(pass->in_type)) {
    *im = ptx_serial_load(b, in, at, pass->in_type, 1);
    if (pass->hermitian) ptx_inst(b, "@$r neg.f64 $r, $r", mirrored, *im, *im);
  } else {
    *im = ptx_serial_f64(b, 0.0);
  }
}

/* The pass kernel: (in, out, twiddles) pointers. */
static void emit_pass(PtxBuilder *b, const char *entry, const FftPass *pass) {
  ptx_kernel_begin(b, entry, "fft: one Stockham stage along one dimension, a thread per output element");
  ptx_kernel_param(b, PTX_U64, "in");
  ptx_kernel_param(b, PTX_U64, "out");
  ptx_kernel_param(b, PTX_U64, "twiddles");
  ptx_kernel_set_max_threads(b, FFT_BLOCK);
  PtxReg in = ptx_param_load_global_pointer(b, "in"), out = ptx_param_load_global_pointer(b, "out");
  PtxReg twiddles = ptx_param_load_global_pointer(b, "twiddles");
  SerialLoop item = ptx_serial_grid_loop_begin(b, pass->outer * pass->n_out * pass->inner);
  /* item = (o * n_out + t) * inner + i; output position t of the line is
   * (block, q, k) with t = block * Ns R + q Ns + k, and it sums the R inputs
   * j + r n/R, j = block Ns + k, each times w[r (k + q Ns) n/(Ns R)]. */
  int64_t group = pass->span * pass->radix;
  PtxReg i = ptx_reg_new(b, PTX_S64), rest = ptx_reg_new(b, PTX_S64), t = ptx_reg_new(b, PTX_S64),
         o = ptx_reg_new(b, PTX_S64), k = ptx_reg_new(b, PTX_S64), in_group = ptx_reg_new(b, PTX_S64),
         block = ptx_reg_new(b, PTX_S64), step = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "rem.s64 $r, $r, $D", i, item.var, pass->inner);
  ptx_inst(b, "div.s64 $r, $r, $D", rest, item.var, pass->inner);
  ptx_inst(b, "rem.s64 $r, $r, $D", t, rest, pass->n_out);
  ptx_inst(b, "div.s64 $r, $r, $D", o, rest, pass->n_out);
  ptx_inst(b, "rem.s64 $r, $r, $D", k, t, pass->span);
  ptx_inst(b, "rem.s64 $r, $r, $D", in_group, t, group);
  ptx_inst(b, "div.s64 $r, $r, $D", block, t, group);
  PtxReg j0 = ptx_serial_mad(b, block, pass->span, k);
  /* in_group = q Ns + k: the step of the twiddle index, (q Ns + k) n/(Ns R) < n */
  ptx_inst(b, "mul.lo.s64 $r, $r, $D", step, in_group, pass->n / group);
  PtxReg line_base = ptx_serial_mad(b, o, pass->n_in * pass->inner, i);
  PtxReg sum_re = ptx_serial_f64(b, 0.0), sum_im = ptx_serial_f64(b, 0.0);
  PtxReg turn = ptx_serial_s64(b, 0); /* (r * step) mod n */
  PtxReg zero = ptx_serial_s64(b, 0), radix = ptx_serial_s64(b, pass->radix);
  SerialLoop r = ptx_serial_loop_begin(b, zero, radix, NULL);
  PtxReg j = ptx_serial_mad(b, r.var, pass->n / pass->radix, j0);
  PtxReg xr, xi;
  load_line_value(b, pass, in, line_base, j, &xr, &xi);
  PtxReg wr = ptx_serial_load(b, twiddles, turn, TYPE_C128, 0),
         wi = ptx_serial_load(b, twiddles, turn, TYPE_C128, 1);
  ptx_serial_complex_multiply_add(b, sum_re, sum_im, xr, xi, wr, wi);
  PtxReg wrapped = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "add.s64 $r, $r, $r", turn, turn, step);
  ptx_inst(b, "setp.ge.s64 $r, $r, $D", wrapped, turn, pass->n);
  ptx_inst(b, "@$r sub.s64 $r, $r, $D", wrapped, turn, turn, pass->n);
  ptx_serial_loop_end(b, &r);
  if (pass->scale) {
    PtxReg scale = ptx_serial_f64(b, 1.0 / (double)pass->n);
    ptx_inst(b, "mul.rn.f64 $r, $r, $r", sum_re, sum_re, scale);
    ptx_inst(b, "mul.rn.f64 $r, $r, $r", sum_im, sum_im, scale);
  }
  ptx_serial_store(b, out, item.var, pass->out_type, 0, sum_re);
  if (!pass->real_out) ptx_serial_store(b, out, item.var, pass->out_type, 1, sum_im);
  ptx_serial_loop_end(b, &item);
  ptx_inst(b, "ret");
  ptx_kernel_end(b);
}

/* The plan (src/ir/fft_plan.h) and what the GPU's passes add: one
 * operand, row-major layouts, element types its loads and stores take.
 * NULL when it fits, else why not. */
static const char *fft_plan_for_gpu(const Instruction *inst, FftPlan *plan) {
  const Shape *x = &inst->operands[0]->shape, *out = &inst->shape;
  const char *problem = fft_plan_make(x, out, attrs_fft(&inst->attrs), plan);
  if (problem) return problem;
  if (!shape_is_row_major(x) || !shape_is_row_major(out)) return "an fft over a non-row-major layout";
  if (!ptx_serial_type_ok(x->type) || !ptx_serial_type_ok(out->type)) return "an fft of this element type";
  return NULL;
}

/* The pass along `axis` of the work dims. */
static FftPass make_pass(const FftPlan *plan, const int64_t *dims, int axis) {
  int rank = plan->rank;
  FftPass pass = {.outer = 1, .inner = 1, .in_type = TYPE_C128, .out_type = TYPE_C128};
  for (int d = 0; d < axis; d++) pass.outer *= dims[d];
  for (int d = axis + 1; d < rank; d++) pass.inner *= dims[d];
  pass.n = pass.n_in = pass.n_out = dims[axis];
  pass.inverse = plan->inverse;
  if (axis == rank - 1 && plan->type == FFT_TYPE_RFFT) pass.n_out = plan->out_dims[rank - 1];
  if (axis == rank - 1 && plan->type == FFT_TYPE_IRFFT) {
    pass.n = pass.n_out = plan->length[rank - 1];
    pass.hermitian = pass.real_out = true;
  }
  return pass;
}

static bool add_pass(GpuCompile *c, const Instruction *inst, const FftPass *pass, int in, int out, int twiddles,
                     int pass_number) {
  char suffix[16], entry[160];
  snprintf(suffix, sizeof suffix, "pass%d", pass_number);
  gpu_entry_name(c, inst, suffix, entry, sizeof entry);
  emit_pass(c->ptx, entry, pass);
  int64_t total = pass->outer * pass->n_out * pass->inner;
  int64_t blocks = (total + FFT_BLOCK - 1) / FFT_BLOCK;
  int buffers[3] = {in, out, twiddles};
  return gpu_add_launch(c, inst, entry, (unsigned)(blocks < FFT_MAX_GRID ? blocks : FFT_MAX_GRID), FFT_BLOCK, buffers,
                        3, NULL, 0) != NULL;
}

const char *gpu_fft_refusal(const Program *program, const Instruction *inst) {
  if (inst->operand_count != 1) return "an fft without one operand";
  FftPlan plan;
  const char *why = fft_plan_for_gpu(inst, &plan);
  if (why) return why;
  /* a plan may place a result over its operand; a pass reads whole
   * lines, so it cannot work in place */
  bool empty = shape_element_count(&inst->operands[0]->shape) == 0 || shape_element_count(&inst->shape) == 0;
  if (!empty && program_storage_overlaps(program, inst, 0, inst->operands[0], 0))
    return "an fft whose result overlaps its operand";
  return NULL;
}

bool gpu_compile_fft(GpuCompile *c, const Instruction *inst) {
  FftPlan plan;
  fft_plan_for_gpu(inst, &plan);  /* gpu_fft_refusal found no problem */
  const Shape *x = &inst->operands[0]->shape;
  int rank = plan.rank;
  int64_t dims[AXLE_MAX_RANK], largest = 0;
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)rank);
  if (shape_element_count(x) == 0 || shape_element_count(&inst->shape) == 0) return true;
  /* Scratch: every intermediate array, f64 complex; the largest is at most
   * the operand's count with the last dim at its larger extent. */
  largest = shape_element_count(x) / dims[rank - 1] *
            (dims[rank - 1] > inst->shape.dims[rank - 1] ? dims[rank - 1] : inst->shape.dims[rank - 1]);
  int scratch[2] = {-1, -1};
  int from = gpu_binding_of(c, inst->operands[0], 0), result = gpu_binding_of(c, inst, 0);
  int pass_number = 0;
  for (int axis = plan.first; axis < rank; axis++) {
    FftPass whole = make_pass(&plan, dims, axis);
    int twiddles = twiddle_binding(c, whole.n, whole.inverse);
    const int64_t *radices = plan.factors[axis];
    int stages = plan.factor_count[axis];
    int64_t span = 1;
    for (int s = 0; s < stages; span *= radices[s], s++) {
      bool first = s == 0, last = s == stages - 1;
      FftPass pass = whole;
      pass.radix = radices[s];
      pass.span = span;
      if (!first) pass.n_in = pass.n, pass.hermitian = false;
      if (!last) pass.n_out = pass.n, pass.real_out = false;
      pass.scale = last && pass.inverse;
      if (first && axis == plan.first) pass.in_type = x->type;
      bool final = last && axis == rank - 1;
      if (final) pass.out_type = inst->shape.type;
      if (pass.real_out && !final) return gpu_refuse(c, inst, "an fft pass with a real result before the last");
      int to = result;
      if (!final) {
        int which = pass_number % 2;
        if (scratch[which] < 0) scratch[which] = gpu_reserve_temp(c, 16 * largest);
        to = scratch[which];
      }
      if (!add_pass(c, inst, &pass, from, to, twiddles, pass_number++)) return false;
      from = to;
    }
    dims[axis] = whole.n_out;
  }
  return true;
}
