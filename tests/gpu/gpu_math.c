/* gpu_math: the PTX math functions (src/emit_ptx/ptx_math.c) run on a
 * real GPU over about a million f32 inputs each and compared bit for bit
 * with src/ir/kernel/math_reference.c, which they transcribe: any
 * difference is a transcription error (NaNs match any NaN). The inputs
 * step through every exponent with a spread of mantissas, both signs,
 * plus the special values; the second operand of atan2 and pow is another
 * such sweep, shifted. Built and run by tests/gpu/run.sh on a machine with
 * an NVIDIA GPU. Prints PASS/FAIL per function and one summary line; exits
 * 0 when all passed, 1 when one failed, 2 without a usable GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_kernel.h"
#include "kernel/math_reference.h"
#include "opt/lower.h"
#include "runtime/cuda_driver.h"

/* Inputs per function: 2^20, or GPU_MATH_COUNT (tests/gpu/run.sh's dry run
 * on the host simulator uses fewer). */
static int input_count = 1 << 20;

typedef struct MathFunction {
  const char *op;
  float (*unary)(float);
  float (*binary)(float, float);
} MathFunction;

static const MathFunction functions[] = {
    {"exponential", mathref_expf, NULL}, {"exponential-minus-one", mathref_expm1f, NULL},
    {"log", mathref_logf, NULL},         {"log-plus-one", mathref_log1pf, NULL},
    {"tanh", mathref_tanhf, NULL},       {"logistic", mathref_logisticf, NULL},
    {"erf", mathref_erff, NULL},         {"sine", mathref_sinf, NULL},
    {"cosine", mathref_cosf, NULL},      {"tan", mathref_tanf, NULL},
    {"cbrt", mathref_cbrtf, NULL},       {"rsqrt", mathref_rsqrtf, NULL},
    {"atan2", NULL, mathref_atan2f},     {"power", NULL, mathref_powf},
};

static float float_of_bits(uint32_t b) {
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* Input i of a sweep: specials first, then bit patterns spread over all
 * floats by a multiplier that is odd (so they are distinct). */
static float sweep_input(uint32_t i, uint32_t shift) {
  static const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 0.5f, 2.0f, 1e-45f, -1e-45f,
                                   3.4028235e38f, 0x1p22f, -0x1p22f, 0x1p-126f, 88.7f, -103.9f, 3.14159265f};
  uint32_t n = sizeof specials / sizeof *specials;
  if (i < n) return specials[(i + shift) % n];
  return float_of_bits((i + shift) * 2654435761u);
}

static uint32_t float_bits(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static bool same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)); }

/* Runs y = op(x[, w]) on the device; false with st set. */
static bool device_run(GpuDevice *gpu, const PtxTarget *t, const MathFunction *f, const float *x, const float *w,
                       float *y, Status *st) {
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  x = f32[%d] parameter(0)\n  w = f32[%d] parameter(1)\n"
           "  ROOT y = f32[%d] %s(x%s)\n}\n",
           input_count, input_count, input_count, f->op, f->binary ? ", w" : "");
  Module *m = parse_module(text, strlen(text), "gpu_math.hlo", st);
  Kernel *k = m ? lower_to_kernel(m->entry->root, st) : NULL;
  PtxBuilder b;
  ptx_builder_init(&b, t);
  PtxKernelShape shape;
  bool ok = k && ptx_kernel_emit(&b, k, "math", &shape, st);
  CUmodule module = NULL;
  CUfunction function;
  CUdeviceptr ptr[3] = {0, 0, 0};
  size_t bytes = (size_t)input_count * sizeof(float);
  int buffers = f->binary ? 3 : 2;
  ok = ok && gpu_module_load(gpu, ptx_builder_text(&b), f->op, &module, st) &&
       gpu_function_get(gpu, module, "math", &function, st);
  for (int i = 0; ok && i < buffers; i++) ok = gpu_alloc(gpu, bytes, "a math buffer", &ptr[i], st);
  ok = ok && gpu_copy_to_device(gpu, ptr[0], x, bytes, st) && (!f->binary || gpu_copy_to_device(gpu, ptr[1], w, bytes, st));
  void *params[3] = {&ptr[0], &ptr[1], &ptr[2]};
  unsigned grid[3] = {(unsigned)shape.blocks, 1, 1}, block[3] = {(unsigned)shape.block_threads, 1, 1};
  ok = ok && gpu_launch(gpu, function, f->op, grid, block, 0, params, st) &&
       gpu_copy_to_host(gpu, y, ptr[buffers - 1], bytes, st);
  for (int i = 0; i < buffers; i++) gpu_free(gpu, ptr[i]);
  if (module) gpu->driver.module_unload(module);
  ptx_builder_free(&b);
  kernel_free(k);
  module_free(m);
  return ok;
}

int main(void) {
  const char *count = getenv("GPU_MATH_COUNT");
  if (count && atoi(count) > 0) input_count = atoi(count);
  GpuDevice gpu;
  Status st;
  status_clear(&st);
  PtxTarget target;
  if (!gpu_device_open(&gpu, &st) ||
      !ptx_target_for_device(gpu.compute_major, gpu.compute_minor, &target, &st)) {
    printf("gpu_math: %s\n", st.message);
    return 2;
  }
  float *x = malloc(input_count * sizeof *x), *w = malloc(input_count * sizeof *w), *y = malloc(input_count * sizeof *y);
  for (uint32_t i = 0; i < (uint32_t)input_count; i++) x[i] = sweep_input(i, 0), w[i] = sweep_input(i, 7);
  int passed = 0, failed = 0;
  for (size_t i = 0; i < sizeof functions / sizeof *functions; i++) {
    const MathFunction *f = &functions[i];
    status_clear(&st);
    if (!device_run(&gpu, &target, f, x, w, y, &st)) {
      printf("FAIL %s: %s\n", f->op, st.message);
      failed++;
      continue;
    }
    int64_t wrong = 0, first = -1;
    for (int64_t j = 0; j < input_count; j++) {
      float want = f->unary ? f->unary(x[j]) : f->binary(x[j], w[j]);
      if (same_bits(want, y[j])) continue;
      if (wrong++ == 0) first = j;
    }
    if (wrong == 0) {
      printf("PASS %s (%d inputs, bit for bit)\n", f->op, input_count);
      passed++;
    } else {
      float want = f->unary ? f->unary(x[first]) : f->binary(x[first], w[first]);
      char at[64];
      if (f->binary) snprintf(at, sizeof at, "(%.9g, %.9g)", x[first], w[first]);
      else snprintf(at, sizeof at, "%.9g", x[first]);
      printf("FAIL %s: %lld of %d differ; first at %s: wanted %.9g (0x%08x), got %.9g\n", f->op, (long long)wrong,
             input_count, at, want, float_bits(want), y[first]);
      failed++;
    }
  }
  free(x), free(w), free(y);
  gpu_device_close(&gpu);
  printf("gpu_math: %d passed, %d failed (on %s)\n", passed, failed, target.name);
  return failed ? 1 : 0;
}
