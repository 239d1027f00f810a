/* The evaluator's fft: discrete Fourier transforms over the 1 to 3
 * minor-most dimensions, of any length. What each fft_type means, and the
 * algorithm, are in src/ir/fft_plan.h: the evaluator makes the plan and
 * runs it on the host, as the CPU backend's routine does, so the two agree
 * bit for bit. */
#include "complex_compat.h"

#include "eval_internal.h"
#include "ir/fft_plan.h"

Literal *eval_fft(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *x = operands[0];
  FftPlan plan;
  const char *problem = fft_plan_make(&x->shape, &inst->shape, attrs_fft(&inst->attrs), &plan);
  if (problem) {
    status_error(st, STATUS_VERIFY_ERROR, "fft: operand, result and fft_length do not fit together (%s)", problem);
    return NULL;
  }
  int64_t in_count = fft_plan_in_count(&plan), out_count = fft_plan_out_count(&plan);
  double complex *data = eval_scratch_calloc(in_count, sizeof(double complex));
  for (int64_t i = 0; i < in_count; i++) data[i] = literal_get_complex(x, i);
  FftLine *lines[AXLE_MAX_RANK] = {0};
  for (int d = plan.first; d < plan.rank; d++)
    if (plan.length[d] > 0) lines[d] = fft_line_create(plan.length[d]);
  double complex *result = fft_plan_run(&plan, lines, data, NULL, NULL);
  for (int d = 0; d < AXLE_MAX_RANK; d++) fft_line_free(lines[d]);
  Literal *out = literal_create(&inst->shape);
  for (int64_t o = 0; o < out_count; o++) {
    if (plan.type == FFT_TYPE_IRFFT) literal_set_f64(out, o, creal(result[o]));
    else literal_set_complex(out, o, result[o]);
  }
  mem_free(result);
  return out;
}
