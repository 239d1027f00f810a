/* The x86 kernel compiler's math functions against their definition:
 * `f32[N] op(x)` (exponential, exponential-minus-one, logistic, tanh, log,
 * log-plus-one, rsqrt, sqrt) compiled at every ISA level this machine has (the sse4 level,
 * without FMA, must refuse the ones that use fmaf, by name) and run over
 * 2^17 inputs gives exactly mathref's bits for each, and is within
 * docs/math.md's ulp bound of the C library's double function rounded to
 * f32. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/kernel_x86.h"
#include "ir.h"
#include "ir/kernel/kernel.h"
#include "kernel/math_reference.h"
#include "opt/lower.h"
#include "../test.h"

enum { INPUT_COUNT = 1 << 17 };

static uint32_t bits_of(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

static float float_of(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* Special values, a dense sweep of [-110, 100] (past both clamps) and
 * random bit patterns (every exponent, NaNs and subnormals included). */
static void inputs_fill(float *in) {
  static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-149f, -0x1p-149f,
                                   0x1p-126f, 88.72283f, 88.72284f, -87.33654f, -103.97208f, -103.97209f,
                                   89.0f, -104.0f, 0x1p-25f, -0x1p-25f, 1.0f, -1.0f, FLT_MAX, -FLT_MAX};
  int n = (int)(sizeof specials / sizeof specials[0]);
  memcpy(in, specials, sizeof specials);
  int sweep = INPUT_COUNT / 2;
  for (int i = 0; i < sweep; i++) in[n + i] = -110.0f + 210.0f * (float)i / (float)sweep;
  uint64_t state = 12345;
  for (int i = n + sweep; i < INPUT_COUNT; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    in[i] = float_of((uint32_t)(state >> 32));
  }
}

/* Floats between a and b, counting across zero (NaN only matches NaN). */
static int64_t ulp_distance(float a, float b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0 : INT64_MAX;
  int64_t ia = (int32_t)bits_of(a), ib = (int32_t)bits_of(b);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return ia > ib ? ia - ib : ib - ia;
}

/* The kernel points into the module: *m lives as long as it. */
static Kernel *kernel_of_unary(const char *op, Module **module) {
  char text[300];
  snprintf(text, sizeof text, "HloModule m\nENTRY e { a = f32[%d] parameter(0)\n ROOT r = f32[%d] %s(a) }\n",
           INPUT_COUNT, INPUT_COUNT, op);
  Status st;
  status_clear(&st);
  Module *m = *module = parse_module(text, strlen(text), "inline", &st);
  EXPECT(m != NULL, "%s", st.message);
  if (!m) return NULL;
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL, "%s", st.message);
  return k;
}

/* Runs `op` at every level (that has FMA, if it needs FMA; a level without
 * must refuse it by name); returns how many levels ran. */
static int check_function(const char *op, float (*reference)(float), double (*libm)(double), int64_t ulp_bound,
                          bool needs_fma) {
  Module *m = NULL;
  Kernel *k = kernel_of_unary(op, &m);
  if (!k) {
    module_free(m);
    return 0;
  }
  float *in = malloc(sizeof(float) * INPUT_COUNT), *out = malloc(sizeof(float) * INPUT_COUNT);
  inputs_fill(in);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  int levels = 0;
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
    CpuFeatures cpu = hardware;
    Status st;
    status_clear(&st);
    if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    if (needs_fma && !cpu.fma) {
      EXPECT(ck == NULL && st.code == STATUS_UNSUPPORTED && strstr(st.message, "FMA") && strstr(st.message, op),
             "%s without FMA: %s", cpu_level_name(level), ck ? "compiled" : st.message);
      kernel_x86_free(ck);
      continue;
    }
    EXPECT(ck != NULL, "%s at %s: %s", op, cpu_level_name(level), st.message);
    if (!ck) continue;
    levels++;
    memset(out, 0, sizeof(float) * INPUT_COUNT);
    void *buffers[] = {in, out};
    kernel_x86_run(ck, buffers, NULL);
    int not_identical = 0, beyond_bound = 0;
    for (int i = 0; i < INPUT_COUNT; i++) {
      float want = reference(in[i]);
      if (bits_of(out[i]) != bits_of(want) && not_identical++ < 3)
        EXPECT(false, "%s %s(%a) = %a, mathref gives %a", cpu_level_name(level), op, in[i], out[i], want);
      if (ulp_distance(out[i], (float)libm((double)in[i])) > ulp_bound && beyond_bound++ < 3)
        EXPECT(false, "%s %s(%a) = %a is more than %lld ulp from libm's %a", cpu_level_name(level), op, in[i],
               out[i], (long long)ulp_bound, (float)libm((double)in[i]));
    }
    printf("  %s at %s: %d inputs, %d not mathref's bits, %d beyond %lld ulp of libm\n", op, cpu_level_name(level),
           INPUT_COUNT, not_identical, beyond_bound, (long long)ulp_bound);
    kernel_x86_free(ck);
  }
  free(in);
  free(out);
  kernel_free(k);
  module_free(m);
  return levels;
}

TEST(exponential_gives_mathref_bits_and_stays_within_one_ulp_of_libm) {
  int levels = check_function("exponential", mathref_expf, exp, 1, true);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  EXPECT(levels > 0 || !hardware.fma, "no level with FMA compiled it");
}

static double logistic_libm(double x) { return 1.0 / (1.0 + exp(-x)); }

TEST(logistic_gives_mathref_bits_and_stays_within_one_ulp_of_libm) {
  int levels = check_function("logistic", mathref_logisticf, logistic_libm, 1, true);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  EXPECT(levels > 0 || !hardware.fma, "no level with FMA compiled it");
}

TEST(tanh_gives_mathref_bits_and_stays_within_one_ulp_of_libm) {
  int levels = check_function("tanh", mathref_tanhf, tanh, 1, true);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  EXPECT(levels > 0 || !hardware.fma, "no level with FMA compiled it");
}

TEST(log_gives_mathref_bits_and_stays_within_one_ulp_of_libm) {
  int levels = check_function("log", mathref_logf, log, 1, true);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  EXPECT(levels > 0 || !hardware.fma, "no level with FMA compiled it");
}

TEST(exponential_minus_one_gives_mathref_bits_and_stays_within_one_ulp_of_libm) {
  int levels = check_function("exponential-minus-one", mathref_expm1f, expm1, 1, true);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  EXPECT(levels > 0 || !hardware.fma, "no level with FMA compiled it");
}

TEST(log_plus_one_gives_mathref_bits_and_stays_within_one_ulp_of_libm) {
  int levels = check_function("log-plus-one", mathref_log1pf, log1p, 1, true);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  EXPECT(levels > 0 || !hardware.fma, "no level with FMA compiled it");
}

static double rsqrt_libm(double x) { return 1.0 / sqrt(x); }

TEST(rsqrt_gives_mathref_bits_at_every_level_and_stays_within_one_ulp) {
  int levels = check_function("rsqrt", mathref_rsqrtf, rsqrt_libm, 1, false);
  EXPECT(levels > 0, "no level compiled it");
}

TEST(sqrt_gives_mathref_bits_at_every_level_and_is_correctly_rounded) {
  int levels = check_function("sqrt", mathref_sqrtf, sqrt, 0, false);
  EXPECT(levels > 0, "no level compiled it");
}

TEST(exponential_of_f64_is_refused_by_name) {
  Kernel *k = NULL;
  Status st;
  status_clear(&st);
  const char *text = "HloModule m\nENTRY e { a = f64[8] parameter(0)\n ROOT r = f64[8] exponential(a) }\n";
  Module *m = parse_module(text, strlen(text), "inline", &st);
  EXPECT(m != NULL, "%s", st.message);
  if (!m) return;
  k = lower_to_kernel(m->entry->root, &st);
  CpuFeatures cpu;
  cpu_features_detect_hardware(&cpu);
  CompiledKernel *ck = k ? kernel_x86_compile(k, &cpu, &st) : NULL;
  EXPECT(ck == NULL && st.code == STATUS_UNSUPPORTED && strstr(st.message, "exponential"), "message: %s", st.message);
  kernel_x86_free(ck);
  kernel_free(k);
  module_free(m);
}

int main(void) {
  RUN(exponential_gives_mathref_bits_and_stays_within_one_ulp_of_libm);
  RUN(logistic_gives_mathref_bits_and_stays_within_one_ulp_of_libm);
  RUN(tanh_gives_mathref_bits_and_stays_within_one_ulp_of_libm);
  RUN(log_gives_mathref_bits_and_stays_within_one_ulp_of_libm);
  RUN(exponential_minus_one_gives_mathref_bits_and_stays_within_one_ulp_of_libm);
  RUN(log_plus_one_gives_mathref_bits_and_stays_within_one_ulp_of_libm);
  RUN(rsqrt_gives_mathref_bits_at_every_level_and_stays_within_one_ulp);
  RUN(sqrt_gives_mathref_bits_at_every_level_and_is_correctly_rounded);
  RUN(exponential_of_f64_is_refused_by_name);
  return test_summary();
}
