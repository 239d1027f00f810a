/* The x86 kernel compiler's math functions against their definition:
 * `f32[N] op(x)` (and op(x, y)) for every f32 math function, compiled at
 * every ISA level this machine has (sse4 emulates the FMA exactly) and
 * run over 2^17 inputs, gives exactly mathref's bits for each and is
 * within docs/math.md's ulp bound of the C library's double function
 * rounded to f32; the f64 functions give mathref's f64 bits over 2^16
 * inputs (their bounds are test_math_ulp.c's); remainder gives fmod's
 * bits, exactly. */
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

enum { INPUT_COUNT = 1 << 17, SPECIAL_COUNT = 22 };

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
static void inputs_fill(float *in, uint64_t seed) {
  static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-149f, -0x1p-149f,
                                   0x1p-126f, 88.72283f, 88.72284f, -87.33654f, -103.97208f, -103.97209f,
                                   89.0f, -104.0f, 0x1p-25f, -0x1p-25f, 1.0f, -1.0f, FLT_MAX, -FLT_MAX};
  int n = (int)(sizeof specials / sizeof specials[0]);
  _Static_assert(sizeof specials / sizeof specials[0] == SPECIAL_COUNT, "SPECIAL_COUNT counts the specials");
  memcpy(in, specials, sizeof specials);
  int sweep = INPUT_COUNT / 2;
  for (int i = 0; i < sweep; i++) in[n + i] = -110.0f + 210.0f * (float)i / (float)sweep;
  uint64_t state = seed;
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
static Kernel *kernel_of_unary(const char *op, const char *dims, Module **module) {
  char text[300];
  snprintf(text, sizeof text, "HloModule m\nENTRY e { a = f32[%s] parameter(0)\n ROOT r = f32[%s] %s(a) }\n", dims,
           dims, op);
  Status st;
  status_clear(&st);
  Module *m = *module = parse_module(text, strlen(text), "inline", &st);
  EXPECT(m != NULL, "%s", st.message);
  if (!m) return NULL;
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL, "%s", st.message);
  return k;
}

/* Compiles `text` (an HLO module with an f32[INPUT_COUNT] root) at every
 * level this machine has and checks every output against mathref's bits
 * and libm's bound: want(i) and libm(i) give them for element i. Every
 * level must compile it (without FMA, the fused multiply-adds are
 * emulated); returns how many levels ran. */
typedef struct Expected {
  int count;        /* the elements of the kernel's shape, at most INPUT_COUNT */
  bool simd;        /* whether avx2 and up must run it in a SIMD loop */
  float (*unary)(float);
  double (*unary_libm)(double);
  float (*binary)(float, float);
  double (*binary_libm)(double, double);
} Expected;

static float expected_of(const Expected *e, const float *in, const float *in2, int i) {
  return e->unary ? e->unary(in[i]) : e->binary(in[i], in2[i]);
}

static float libm_of(const Expected *e, const float *in, const float *in2, int i) {
  return e->unary ? (float)e->unary_libm((double)in[i]) : (float)e->binary_libm((double)in[i], (double)in2[i]);
}

static int check_levels(const char *op, Kernel *k, const Expected *e, float *in, float *in2, int64_t ulp_bound) {
  float *out = malloc(sizeof(float) * INPUT_COUNT);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  int levels = 0;
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
    CpuFeatures cpu = hardware;
    Status st;
    status_clear(&st);
    if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s at %s: %s", op, cpu_level_name(level), st.message);
    if (!ck) continue;
    levels++;
    if (e->simd && level >= CPU_LEVEL_AVX2)
      EXPECT(kernel_x86_lanes(ck) > 0, "%s at %s: no SIMD loop", op, cpu_level_name(level));
    memset(out, 0, sizeof(float) * INPUT_COUNT);
    void *unary_buffers[] = {in, out}, *binary_buffers[] = {in, in2, out};
    kernel_x86_run(ck, e->unary ? unary_buffers : binary_buffers, NULL);
    int not_identical = 0, beyond_bound = 0;
    for (int i = 0; i < e->count; i++) {
      float want = expected_of(e, in, in2, i), libm = libm_of(e, in, in2, i);
      if (bits_of(out[i]) != bits_of(want) && !(isnan(out[i]) && isnan(want)) && not_identical++ < 3)
        EXPECT(false, "%s %s(%a, %a) = %a, mathref gives %a", cpu_level_name(level), op, in[i], in2 ? in2[i] : 0.0f,
               out[i], want);
      if (ulp_distance(out[i], libm) > ulp_bound && beyond_bound++ < 3)
        EXPECT(false, "%s %s(%a, %a) = %a is more than %lld ulp from libm's %a", cpu_level_name(level), op, in[i],
               in2 ? in2[i] : 0.0f, out[i], (long long)ulp_bound, libm);
    }
    printf("  %s at %s (%d lanes): %d inputs, %d not mathref's bits, %d beyond %lld ulp of libm\n", op,
           cpu_level_name(level), kernel_x86_lanes(ck), e->count, not_identical, beyond_bound, (long long)ulp_bound);
    kernel_x86_free(ck);
  }
  free(out);
  return levels;
}

/* dims: the kernel's shape; count: its elements. */
static void check_function_shaped(const char *op, const char *dims, int count, bool simd, float (*reference)(float),
                                  double (*libm)(double), int64_t ulp_bound) {
  Module *m = NULL;
  Kernel *k = kernel_of_unary(op, dims, &m);
  float *in = malloc(sizeof(float) * INPUT_COUNT);
  inputs_fill(in, 12345);
  Expected e = {.count = count, .simd = simd, .unary = reference, .unary_libm = libm};
  int levels = k ? check_levels(op, k, &e, in, NULL, ulp_bound) : 0;
  EXPECT(levels > 0, "%s: no level compiled it", op);
  free(in);
  kernel_free(k);
  module_free(m);
}

static void check_function(const char *op, float (*reference)(float), double (*libm)(double), int64_t ulp_bound) {
  char dims[16];
  snprintf(dims, sizeof dims, "%d", INPUT_COUNT);
  check_function_shaped(op, dims, INPUT_COUNT, false, reference, libm, ulp_bound);
}

/* Pairs: two independent fills, then every pair of the special values
 * at the front. */
static void check_binary_function(const char *op, float (*reference)(float, float), double (*libm)(double, double),
                                  int64_t ulp_bound) {
  char text[400];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e { a = f32[%d] parameter(0)\n b = f32[%d] parameter(1)\n"
           " ROOT r = f32[%d] %s(a, b) }\n",
           INPUT_COUNT, INPUT_COUNT, INPUT_COUNT, op);
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  EXPECT(m != NULL, "%s", st.message);
  Kernel *k = m ? lower_to_kernel(m->entry->root, &st) : NULL;
  EXPECT(k != NULL, "%s", st.message);
  float *in = malloc(sizeof(float) * INPUT_COUNT), *in2 = malloc(sizeof(float) * INPUT_COUNT);
  inputs_fill(in, 12345);
  inputs_fill(in2, 777);
  float specials[SPECIAL_COUNT];
  memcpy(specials, in, sizeof specials);
  for (int i = 0; i < SPECIAL_COUNT; i++)
    for (int j = 0; j < SPECIAL_COUNT; j++) {
      in[SPECIAL_COUNT * i + j] = specials[i];
      in2[SPECIAL_COUNT * i + j] = specials[j];
    }
  Expected e = {.count = INPUT_COUNT, .binary = reference, .binary_libm = libm};
  int levels = k ? check_levels(op, k, &e, in, in2, ulp_bound) : 0;
  EXPECT(levels > 0, "%s: no level compiled it", op);
  free(in);
  free(in2);
  kernel_free(k);
  module_free(m);
}

/* Without FMA (sse4) a fused multiply-add rounded to nearest in f64 and
 * then to f32 rounds twice; the two differ only where the f64 sum is an
 * f32 midpoint. For 2^-25 <= |x| < 0.34, expm1(x) is the one fma
 * x^2 P(x) + x, and at these x (found by scanning every such float) that
 * sum is a midpoint with a nonzero error: rounding twice gives one ulp
 * more than mathref (0x1.000004p-21 for 0x1.000002p-21 at the first). */
TEST(expm1_where_rounding_twice_differs_gives_mathref_bits_at_every_level) {
  static const float midpoints[] = {0x1.fffffep-22f, 0x1.fffff6p-20f, 0x1.ffffd6p-18f};
  enum { COUNT = 64 };
  float in[COUNT];
  for (int i = 0; i < COUNT; i++) in[i] = midpoints[i % 3];
  Expected e = {.count = COUNT, .simd = true, .unary = mathref_expm1f, .unary_libm = expm1};
  Module *m = NULL;
  Kernel *k = kernel_of_unary("exponential-minus-one", "64", &m);
  int levels = k ? check_levels("exponential-minus-one", k, &e, in, NULL, 1) : 0;
  EXPECT(levels > 0, "exponential-minus-one: no level compiled it");
  kernel_free(k);
  module_free(m);
}

static double logistic_libm(double x) { return 1.0 / (1.0 + exp(-x)); }
static double rsqrt_libm(double x) { return 1.0 / sqrt(x); }

/* Each function gives mathref's bits at every level and keeps its bound
 * (docs/math.md) against libm. */
TEST(exp_log_family_gives_mathref_bits_at_every_level_within_its_bound) {
  check_function("exponential", mathref_expf, exp, 1);
  check_function("exponential-minus-one", mathref_expm1f, expm1, 1);
  check_function("log", mathref_logf, log, 1);
  check_function("log-plus-one", mathref_log1pf, log1p, 1);
  check_function("logistic", mathref_logisticf, logistic_libm, 1);
  check_function("tanh", mathref_tanhf, tanh, 1);
  check_function("erf", mathref_erff, erf, 1);
  check_function("cbrt", mathref_cbrtf, cbrt, 1);
  check_function("rsqrt", mathref_rsqrtf, rsqrt_libm, 1);
  check_function("sqrt", mathref_sqrtf, sqrt, 0);
}

TEST(trigonometric_functions_give_mathref_bits_at_every_level_within_their_bound) {
  check_function("sine", mathref_sinf, sin, 1);
  check_function("cosine", mathref_cosf, cos, 1);
  check_function("tan", mathref_tanf, tan, 1);
  check_binary_function("atan2", mathref_atan2f, atan2, 1);
  check_binary_function("power", mathref_powf, pow, 1);
}

/* The functions with a vector form (kernel_x86_math_lanes.c) run in the
 * SIMD loop from avx2 up (lane by lane at sse4), over rows of 65533
 * points: each row ends in a tail (5 points past the last 8-lane vector,
 * 13 past the last 16-lane one, a masked trip at avx512), and every lane
 * gives mathref's bits. The random bit patterns among the inputs send
 * lanes through Payne-Hanek. */
TEST(vectorized_functions_give_mathref_bits_in_every_lane_and_tail) {
  static const struct {
    const char *op;
    float (*reference)(float);
    double (*libm)(double);
    int64_t ulp_bound;
  } functions[] = {
      {"exponential", mathref_expf, exp, 1}, {"exponential-minus-one", mathref_expm1f, expm1, 1},
      {"log", mathref_logf, log, 1}, {"log-plus-one", mathref_log1pf, log1p, 1},
      {"logistic", mathref_logisticf, logistic_libm, 1}, {"tanh", mathref_tanhf, tanh, 1},
      {"erf", mathref_erff, erf, 1}, {"cbrt", mathref_cbrtf, cbrt, 1}, {"rsqrt", mathref_rsqrtf, rsqrt_libm, 1},
      {"atan", mathref_atanf, atan, 1}, {"asinh", mathref_asinhf, asinh, 2}, {"acosh", mathref_acoshf, acosh, 2},
      {"sine", mathref_sinf, sin, 1}, {"tan", mathref_tanf, tan, 1},
  };
  for (size_t f = 0; f < sizeof functions / sizeof functions[0]; f++)
    check_function_shaped(functions[f].op, "2,65533", 2 * 65533, true, functions[f].reference, functions[f].libm,
                          functions[f].ulp_bound);
}

static float fmod_f32(float x, float y) { return fmodf(x, y); }

/* remainder is exact: the C library's fmodf bit for bit (NaN for NaN). */
TEST(remainder_on_f32_is_exactly_fmod_at_every_level) { check_binary_function("remainder", fmod_f32, fmod, 0); }

/* f64 inputs: random bits (every exponent, subnormals, NaN, infinities),
 * a sweep of [-800, 800], pairs of nearby magnitudes for the second
 * operand, and every pair of the special values at the front. */
enum { F64_COUNT = 1 << 16 };

static void inputs_fill_f64(double *a, double *b) {
  static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-1074, -0x1p-1074, 0x1p-1022,
                                    1.0, -1.0, 3.0, 0.1, DBL_MAX, -DBL_MAX, 1e300, 1e-300, 709.8, -745.2, 0.5};
  enum { S = sizeof specials / sizeof specials[0] };
  uint64_t state = 99;
  for (int i = 0; i < F64_COUNT; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r1 = state;
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    memcpy(&a[i], &r1, 8);
    memcpy(&b[i], &state, 8);
    if (i % 4 == 1) b[i] = a[i] * (1.0 + (double)(state >> 40) * 0x1p-20) / 7.0;
    if (i % 4 == 2) a[i] = -800.0 + 1600.0 * (double)i / F64_COUNT;
    if (i < S * S) a[i] = specials[i / S], b[i] = specials[i % S];
  }
}

/* `op` on f64 at every level gives want's bits (NaN for NaN). */
static void check_f64_function(const char *op, double (*unary)(double), double (*binary)(double, double)) {
  char text[300];
  if (unary)
    snprintf(text, sizeof text, "HloModule m\nENTRY e { a = f64[%d] parameter(0)\n ROOT r = f64[%d] %s(a) }\n",
             F64_COUNT, F64_COUNT, op);
  else
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e { a = f64[%d] parameter(0)\n b = f64[%d] parameter(1)\n"
             " ROOT r = f64[%d] %s(a, b) }\n", F64_COUNT, F64_COUNT, F64_COUNT, op);
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  Kernel *k = m ? lower_to_kernel(m->entry->root, &st) : NULL;
  EXPECT(k != NULL, "%s", st.message);
  double *a = malloc(sizeof(double) * F64_COUNT), *b = malloc(sizeof(double) * F64_COUNT);
  double *out = malloc(sizeof(double) * F64_COUNT);
  inputs_fill_f64(a, b);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  int levels = 0;
  for (CpuLevel level = CPU_LEVEL_SSE4; k && level <= hardware.hardware_level; level++) {
    CpuFeatures cpu = hardware;
    if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s at %s: %s", op, cpu_level_name(level), st.message);
    if (!ck) continue;
    levels++;
    void *unary_buffers[] = {a, out}, *binary_buffers[] = {a, b, out};
    kernel_x86_run(ck, unary ? unary_buffers : binary_buffers, NULL);
    int wrong = 0;
    for (int i = 0; i < F64_COUNT; i++) {
      double want = unary ? unary(a[i]) : binary(a[i], b[i]);
      if (memcmp(&out[i], &want, 8) != 0 && !(isnan(out[i]) && isnan(want)) && wrong++ < 3)
        EXPECT(false, "%s %s(%a, %a) = %a, want %a", cpu_level_name(level), op, a[i], unary ? 0.0 : b[i], out[i],
               want);
    }
    printf("  %s f64 at %s: %d inputs, %d not the reference's bits\n", op, cpu_level_name(level), F64_COUNT, wrong);
    kernel_x86_free(ck);
  }
  EXPECT(levels > 0, "%s: no level compiled it", op);
  free(a);
  free(b);
  free(out);
  kernel_free(k);
  module_free(m);
}

TEST(remainder_on_f64_is_exactly_fmod_at_every_level) { check_f64_function("remainder", NULL, fmod); }

TEST(f64_functions_give_mathref_bits_at_every_level) {
  check_f64_function("exponential", mathref_exp, NULL);
  check_f64_function("exponential-minus-one", mathref_expm1, NULL);
  check_f64_function("log", mathref_log, NULL);
  check_f64_function("log-plus-one", mathref_log1p, NULL);
  check_f64_function("atan2", NULL, mathref_atan2);
  check_f64_function("cbrt", mathref_cbrt, NULL);
  check_f64_function("rsqrt", mathref_rsqrt, NULL);
  check_f64_function("tanh", mathref_tanh, NULL);
  check_f64_function("logistic", mathref_logistic, NULL);
  check_f64_function("atan", mathref_atan, NULL);
  check_f64_function("asin", mathref_asin, NULL);
  check_f64_function("acos", mathref_acos, NULL);
  check_f64_function("sinh", mathref_sinh, NULL);
  check_f64_function("cosh", mathref_cosh, NULL);
  check_f64_function("asinh", mathref_asinh, NULL);
  check_f64_function("acosh", mathref_acosh, NULL);
  check_f64_function("atanh", mathref_atanh, NULL);
  check_f64_function("round-nearest-afz", round, NULL);
  check_f64_function("sine", mathref_sin, NULL);
  check_f64_function("cosine", mathref_cos, NULL);
  check_f64_function("tan", mathref_tan, NULL);
  check_f64_function("erf", mathref_erf, NULL);
  check_f64_function("power", NULL, mathref_pow);
}

TEST(compositions_give_mathref_bits_at_every_level_within_their_bound) {
  check_function("atan", mathref_atanf, atan, 1);
  check_function("asin", mathref_asinf, asin, 1);
  check_function("acos", mathref_acosf, acos, 1);
  check_function("sinh", mathref_sinhf, sinh, 2);
  check_function("cosh", mathref_coshf, cosh, 2);
  check_function("asinh", mathref_asinhf, asinh, 2);
  check_function("acosh", mathref_acoshf, acosh, 2);
  check_function("atanh", mathref_atanhf, atanh, 2);
  check_function("round-nearest-afz", mathref_round_afzf, round, 0);
}

/* is-finite: true exactly for the finite floats, at every level. */
static void check_is_finite(const char *type, int size) {
  enum { N = 4096 };
  char text[300];
  snprintf(text, sizeof text, "HloModule m\nENTRY e { a = %s[%d] parameter(0)\n ROOT r = pred[%d] is-finite(a) }\n",
           type, N, N);
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  Kernel *k = m ? lower_to_kernel(m->entry->root, &st) : NULL;
  EXPECT(k != NULL, "%s", st.message);
  unsigned char in[N * 8], out[N];
  uint64_t state = 5;
  for (int i = 0; i < N * 8; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    in[i] = (unsigned char)(state >> 56);
  }
  /* every eighth value: an infinity or a NaN of either sign */
  for (int i = 0; i < N; i += 8) {
    if (size == 4) memcpy(in + 4 * i, &(float){i % 16 ? INFINITY : -NAN}, 4);
    else memcpy(in + 8 * i, &(double){i % 16 ? -INFINITY : NAN}, 8);
  }
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  for (CpuLevel level = CPU_LEVEL_SSE4; k && level <= hardware.hardware_level; level++) {
    CpuFeatures cpu = hardware;
    if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "is-finite %s at %s: %s", type, cpu_level_name(level), st.message);
    if (!ck) continue;
    void *buffers[] = {in, out};
    kernel_x86_run(ck, buffers, NULL);
    int wrong = 0;
    for (int i = 0; i < N; i++) {
      float f;
      double d;
      if (size == 4) memcpy(&f, in + 4 * i, 4);
      else memcpy(&d, in + 8 * i, 8);
      bool want = size == 4 ? isfinite(f) : isfinite(d);
      if ((out[i] != 0) != want && wrong++ < 3)
        EXPECT(false, "%s is-finite %s element %d: got %d", cpu_level_name(level), type, i, out[i]);
    }
    kernel_x86_free(ck);
  }
  kernel_free(k);
  module_free(m);
}

TEST(is_finite_is_false_exactly_for_infinities_and_nans) {
  check_is_finite("f32", 4);
  check_is_finite("f64", 8);
}

/* The evaluator passes f32 through f64, which quiets a signaling NaN;
 * the compiled code keeps its bits: both are NaN. */
static bool both_nan(const unsigned char *a, const unsigned char *b, int size) {
  if (size == 4) {
    float x, y;
    memcpy(&x, a, 4), memcpy(&y, b, 4);
    return isnan(x) && isnan(y);
  }
  double x, y;
  memcpy(&x, a, 8), memcpy(&y, b, 8);
  return isnan(x) && isnan(y);
}

/* reduce-precision: the compiled code gives the evaluator's bits (through
 * kernel_eval, the lowering's oracle; any NaN for a NaN) on random bit patterns, for widths
 * that round, overflow, flush, keep no mantissa bit, or change nothing. */
static void check_reduce_precision(const char *type, int size, int exponent_bits, int mantissa_bits) {
  enum { N = 4096 };
  char text[300];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e { a = %s[%d] parameter(0)\n ROOT r = %s[%d] reduce-precision(a), "
           "exponent_bits=%d, mantissa_bits=%d }\n",
           type, N, type, N, exponent_bits, mantissa_bits);
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  EXPECT(m != NULL, "%s", st.message);
  Kernel *k = m ? lower_to_kernel(m->entry->root, &st) : NULL;
  EXPECT(k != NULL, "%s", st.message);
  if (!k) {
    module_free(m);
    return;
  }
  Literal *in = literal_create(&k->inputs[0].shape), *want = literal_create(&k->outputs[0].shape);
  unsigned char *bytes = in->data;
  uint64_t state = 77;
  for (int i = 0; i < N * size; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    bytes[i] = (unsigned char)(state >> 56);
  }
  EXPECT(kernel_eval(k, &in, &want, &st), "%s", st.message);
  unsigned char *out = malloc((size_t)N * (size_t)size);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
    CpuFeatures cpu = hardware;
    if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "reduce-precision %s at %s: %s", type, cpu_level_name(level), st.message);
    if (!ck) continue;
    void *buffers[] = {in->data, out};
    kernel_x86_run(ck, buffers, NULL);
    int wrong = 0;
    for (int i = 0; i < N; i++)
      if (memcmp(out + i * size, (unsigned char *)want->data + i * size, (size_t)size) != 0 &&
          !both_nan(out + i * size, (unsigned char *)want->data + i * size, size) && wrong++ < 3)
        EXPECT(false, "%s reduce-precision %s e%d m%d element %d differs from the evaluator", cpu_level_name(level),
               type, exponent_bits, mantissa_bits, i);
    kernel_x86_free(ck);
  }
  free(out);
  literal_free(in);
  literal_free(want);
  kernel_free(k);
  module_free(m);
}

TEST(reduce_precision_gives_the_evaluators_bits_at_every_level) {
  static const int widths[][2] = {{5, 10}, {8, 7}, {3, 2}, {4, 0}, {11, 52}, {8, 23}, {1, 1}, {11, 10}};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
    check_reduce_precision("f32", 4, widths[w][0], widths[w][1]);
    check_reduce_precision("f64", 8, widths[w][0], widths[w][1]);
  }
}

/* exp where its result is subnormal (x from -103.98, where it rounds to
 * 0, up to -87.3, where it reaches 2^-126): the compiled code at every
 * level gives the evaluator's bits, since both compute the one algorithm
 * (the evaluator's exp is mathref's), whose 2^n scaling rounds such a
 * result once from 1 + q, not again from 1 + q rounded to f32. */
TEST(exp_with_subnormal_results_gives_the_evaluators_bits_at_every_level) {
  enum { N = 4112 };
  char text[200];
  snprintf(text, sizeof text, "HloModule m\nENTRY e { a = f32[%d] parameter(0)\n ROOT r = f32[%d] exponential(a) }\n", N,
           N);
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  EXPECT(m != NULL, "%s", st.message);
  Kernel *k = m ? lower_to_kernel(m->entry->root, &st) : NULL;
  EXPECT(k != NULL, "%s", st.message);
  if (!k) {
    module_free(m);
    return;
  }
  Literal *in = literal_create(&k->inputs[0].shape);
  float *x = in->data;
  for (int i = 0; i < N; i++) x[i] = -103.98f + (float)i * (103.98f - 87.3f) / N;
  Literal *want = eval_module(m, &in, 1, &st);
  EXPECT(want != NULL, "%s", st.message);
  float *out = malloc(N * sizeof *out);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  for (CpuLevel level = CPU_LEVEL_SSE4; want && level <= hardware.hardware_level; level++) {
    CpuFeatures cpu = hardware;
    if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "exp at %s: %s", cpu_level_name(level), st.message);
    if (!ck) continue;
    void *buffers[] = {in->data, out};
    kernel_x86_run(ck, buffers, NULL);
    const float *expected = want->data;
    int wrong = 0, first = -1;
    for (int i = 0; i < N; i++)
      if (bits_of(out[i]) != bits_of(expected[i]) && wrong++ == 0) first = i;
    EXPECT(wrong == 0, "exp at %s: %d of %d subnormal results differ from the evaluator's, first exp(%a) = %a, evaluator %a",
           cpu_level_name(level), wrong, N, first >= 0 ? x[first] : 0.0f, first >= 0 ? out[first] : 0.0f,
           first >= 0 ? expected[first] : 0.0f);
    kernel_x86_free(ck);
  }
  free(out);
  literal_free(in);
  if (want) literal_free(want);
  kernel_free(k);
  module_free(m);
}

int main(void) {
  RUN(exp_log_family_gives_mathref_bits_at_every_level_within_its_bound);
  RUN(vectorized_functions_give_mathref_bits_in_every_lane_and_tail);
  RUN(trigonometric_functions_give_mathref_bits_at_every_level_within_their_bound);
  RUN(compositions_give_mathref_bits_at_every_level_within_their_bound);
  RUN(expm1_where_rounding_twice_differs_gives_mathref_bits_at_every_level);
  RUN(remainder_on_f32_is_exactly_fmod_at_every_level);
  RUN(remainder_on_f64_is_exactly_fmod_at_every_level);
  RUN(f64_functions_give_mathref_bits_at_every_level);
  RUN(is_finite_is_false_exactly_for_infinities_and_nans);
  RUN(reduce_precision_gives_the_evaluators_bits_at_every_level);
  RUN(exp_with_subnormal_results_gives_the_evaluators_bits_at_every_level);
  return test_summary();
}
