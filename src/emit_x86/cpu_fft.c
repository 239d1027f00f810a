/* The CPU backend's fft: a runtime routine (a CPU_STEP_CALL step) for
 * FFT, IFFT, RFFT and IRFFT over the 1 to 3 minor-most dimensions, of any
 * length. What each fft_type means, and the one host algorithm, are in
 * src/ir/fft_plan.h: the step holds the plan and its lines (twiddles, the
 * chirp and its transform), made at compile time, and runs them as the
 * evaluator does, so the two agree bit for bit.
 *
 * The lines along one dimension are independent: they run as tasks of a
 * fixed number of lines (chosen by the shape) on the pool, so every thread
 * count writes the same bytes. */
#include "complex_compat.h"
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "ir/fft_plan.h"

typedef double complex Complex;

/* ---- the routine ---- */

typedef struct FftState {
  FftPlan plan;
  ElementType in_type, out_type;
  FftLine *lines[AXLE_MAX_RANK];     /* per transformed dim, at its full length */
} FftState;

static void fft_state_free(void *state) {
  FftState *s = state;
  if (!s) return;
  for (int d = 0; d < AXLE_MAX_RANK; d++) fft_line_free(s->lines[d]);
  mem_free(s);
}

/* Lines of about this many elements make one task. */
enum { FFT_ELEMENTS_PER_TASK = 1 << 13 };

typedef struct AxisTasks {
  const FftAxis *axis;
  int64_t lines_per_task;
} AxisTasks;

static void axis_task_run(void *context, int64_t task) {
  const AxisTasks *t = context;
  int64_t lines = t->axis->outer * t->axis->inner, first = task * t->lines_per_task;
  int64_t last = first + t->lines_per_task < lines ? first + t->lines_per_task : lines;
  Complex *line = mem_calloc((size_t)t->axis->line->m, sizeof *line);
  Complex *work = mem_calloc((size_t)t->axis->line->m, sizeof *work);
  fft_axis_run_lines(t->axis, first, last, line, work);
  mem_free(line);
  mem_free(work);
}

/* fft_plan_run's runner: one axis's lines as tasks on the pool. */
static void run_axis_on_pool(void *context, const FftAxis *a) {
  ThreadPool *pool = context;
  int64_t n = a->line->n, lines = a->outer * a->inner;
  AxisTasks t = {a, FFT_ELEMENTS_PER_TASK / n > 0 ? FFT_ELEMENTS_PER_TASK / n : 1};
  thread_pool_run(pool, (lines + t.lines_per_task - 1) / t.lines_per_task, axis_task_run, &t);
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

static bool fft_call(const CpuStep *step, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)st;
  const FftState *s = step->state;
  int64_t in_count = fft_plan_in_count(&s->plan), out_count = fft_plan_out_count(&s->plan);
  Complex *data = mem_calloc((size_t)in_count + 1, sizeof *data);
  for (int64_t i = 0; i < in_count; i++) data[i] = load_element(s->in_type, buffers[0], i);
  Complex *result = fft_plan_run(&s->plan, s->lines, data, run_axis_on_pool, pool);
  for (int64_t o = 0; o < out_count; o++) store_element(s->out_type, buffers[1], o, result[o]);
  mem_free(result);
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

const char *cpu_fft_refusal(const Instruction *inst) {
  const Shape *x = &inst->operands[0]->shape, *out = &inst->shape;
  const FftDims *f = attrs_fft(&inst->attrs);
  FftPlan plan;
  const char *problem = fft_plan_make(x, out, f, &plan);
  if (problem) return problem;
  if (!fft_types_fit(f->type, x->type, out->type)) return "an fft of these element types";
  if (shape_element_count(out) != 0 && shape_element_count(x) == 0)
    return "an fft of an empty operand into a non-empty result";
  return NULL;
}

bool cpu_compile_fft(CpuCompile *c, const Instruction *inst) {
  const Shape *x = &inst->operands[0]->shape, *out = &inst->shape;
  FftPlan plan;
  fft_plan_make(x, out, attrs_fft(&inst->attrs), &plan);  /* cpu_fft_refusal found no problem */
  if (shape_element_count(out) == 0) return true;  /* nothing to write */
  FftState *s = mem_calloc(1, sizeof *s);
  *s = (FftState){.plan = plan, .in_type = x->type, .out_type = out->type};
  for (int d = plan.first; d < plan.rank; d++) s->lines[d] = fft_line_create(plan.length[d]);
  return cpu_add_call_step(c, inst, 1, fft_call, s, fft_state_free) != NULL;
}
