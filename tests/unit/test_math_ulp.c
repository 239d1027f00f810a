/* Measures the accuracy of axle's inline f32 math (src/ir/kernel/
 * math_reference.c) against the C library: for each function, over a
 * million or more inputs, the largest distance in ulps between its result
 * and the double-precision libm function's result rounded to f32. A
 * function fails when that distance exceeds its documented bound
 * (docs/math.md). NaN must meet NaN, and a zero must have the right sign.
 *
 * The inputs of each function: its special values (±0, ±inf, NaN, the
 * subnormal and overflow edges); random mantissas in every exponent of
 * both signs (subnormals included); a dense uniform sweep of the range
 * where the result is neither 0, 1 nor inf; and the points where the range
 * reduction changes its multiple (for sin/cos/tan, the floats nearest to
 * multiples of pi/4). The generator is seeded, so every run tests the
 * same inputs.
 *
 * Prints: function  inputs  max_ulp  at_input  bound. */
#include "kernel/math_reference.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test.h"

/* ---- inputs ---- */

typedef struct {
  float *x;
  float *y; /* second operand of a binary function, or NULL */
  size_t count, capacity;
} Inputs;

static uint64_t random_state = 0x9e3779b97f4a7c15u;

static uint32_t random_u32(void) {
  random_state ^= random_state >> 12;
  random_state ^= random_state << 25;
  random_state ^= random_state >> 27;
  return (uint32_t)((random_state * 0x2545f4914f6cdd1du) >> 32);
}

static float random_uniform(float lo, float hi) {
  return lo + (hi - lo) * (float)((random_u32() >> 8) * 0x1p-24);
}

static float f32_from_bits(uint32_t b) {
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}

static uint32_t bits_from_f32(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static void inputs_add2(Inputs *in, float x, float y) {
  if (in->count == in->capacity) {
    in->capacity = in->capacity ? 2 * in->capacity : 1 << 20;
    in->x = realloc(in->x, in->capacity * sizeof(float));
    in->y = realloc(in->y, in->capacity * sizeof(float));
    if (!in->x || !in->y) abort();
  }
  in->x[in->count] = x;
  in->y[in->count] = y;
  in->count++;
}

static void inputs_add(Inputs *in, float x) { inputs_add2(in, x, 0.0f); }

static void inputs_free(Inputs *in) {
  free(in->x);
  free(in->y);
}

static const float special_values[] = {
    0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX,
    0x1p-149f, -0x1p-149f, 0x1.fffffcp-127f, -0x1.fffffcp-127f, 1.0f, -1.0f, 0.5f, -0.5f,
    2.0f, -2.0f, 3.0f, -3.0f, 0x1p-24f, -0x1p-24f, 0x1p-25f, 0x1p24f, -0x1p24f, 0.25f, 10.0f,
};
#define SPECIAL_COUNT (sizeof special_values / sizeof special_values[0])

/* Every exponent field 0..255 of both signs, each with per_exponent random
 * mantissas (exponent 255 gives infinities and NaNs). */
static void inputs_add_every_exponent(Inputs *in, int per_exponent) {
  for (uint32_t sign = 0; sign < 2; sign++)
    for (uint32_t e = 0; e < 256; e++)
      for (int i = 0; i < per_exponent; i++)
        inputs_add(in, f32_from_bits(sign << 31 | e << 23 | (random_u32() & 0x7fffffu)));
}

static void inputs_add_uniform(Inputs *in, float lo, float hi, int count) {
  for (int i = 0; i < count; i++) inputs_add(in, random_uniform(lo, hi));
}

/* The floats at k * step and two neighbours each side, for 1 <= |k| <=
 * k_max: count inputs at most, the k spread evenly when there are more
 * than count/10 of them. */
static void inputs_add_multiples(Inputs *in, double step, double k_max, int count) {
  double stride = k_max / (count / 10) > 1.0 ? k_max / (count / 10) : 1.0;
  for (double k = 1; k <= k_max; k += stride) {
    double kk = floor(k);
    for (int sign = -1; sign <= 1; sign += 2) {
      float center = (float)(sign * kk * step);
      inputs_add(in, center);
      inputs_add(in, nextafterf(center, INFINITY));
      inputs_add(in, nextafterf(center, -INFINITY));
      inputs_add(in, nextafterf(nextafterf(center, INFINITY), INFINITY));
      inputs_add(in, nextafterf(nextafterf(center, -INFINITY), -INFINITY));
    }
  }
}

/* base 2^e for every e that stays finite, with two neighbours each side:
 * the points where a reduction by powers of two changes e. */
static void inputs_add_binades(Inputs *in, float base) {
  for (int e = -150; e <= 128; e++) {
    float center = (float)ldexp(base, e);
    if (center == 0 || isinf(center)) continue;
    float up = nextafterf(center, INFINITY), down = nextafterf(center, 0);
    float points[] = {center, up, nextafterf(up, INFINITY), down, nextafterf(down, 0)};
    for (int i = 0; i < 5; i++) {
      inputs_add(in, points[i]);
      inputs_add(in, -points[i]);
    }
  }
}

/* ---- measuring ---- */

/* Floats in order as integers: -0 and +0 both map to 0, so the distance
 * between two floats is the number of floats between them. */
static int64_t ordered_from_f32(float x) {
  uint32_t b = bits_from_f32(x);
  return (b >> 31) ? -(int64_t)(b & 0x7fffffffu) : (int64_t)b;
}

#define ULP_WRONG_KIND 1e9 /* NaN against a number, or a zero of the wrong sign */

static double ulp_distance(float got, float expected) {
  if (isnan(got) || isnan(expected)) return isnan(got) && isnan(expected) ? 0 : ULP_WRONG_KIND;
  if (got == 0 && expected == 0 && signbit(got) != signbit(expected)) return ULP_WRONG_KIND;
  int64_t d = ordered_from_f32(got) - ordered_from_f32(expected);
  return (double)(d < 0 ? -d : d);
}

typedef struct {
  double max_ulp;
  size_t worst;
} Measure;

typedef float (*UnaryF32)(float);
typedef double (*UnaryF64)(double);
typedef float (*BinaryF32)(float, float);
typedef double (*BinaryF64)(double, double);

static void print_row(const char *name, size_t count, Measure m, const char *at, double bound) {
  printf("%-10s %8zu %8.0f  %-28s %5.0f\n", name, count, m.max_ulp, at, bound);
}

static void check_unary(const char *name, UnaryF32 f, UnaryF64 reference, const Inputs *in,
                        double bound) {
  Measure m = {0, 0};
  for (size_t i = 0; i < in->count; i++) {
    float x = in->x[i];
    double d = ulp_distance(f(x), (float)reference((double)x));
    if (d > m.max_ulp) m = (Measure){d, i};
  }
  char at[64];
  snprintf(at, sizeof at, "%.9g", in->x[m.worst]);
  print_row(name, in->count, m, at, bound);
  float x = in->x[m.worst];
  EXPECT(in->count >= 1000000, "%s tested on only %zu inputs", name, in->count);
  EXPECT(m.max_ulp <= bound, "%s(%.9g = %a) = %.9g, expected %.9g: %.0f ulp > %.0f", name, x, x,
         f(x), (float)reference(x), m.max_ulp, bound);
}

static void check_binary(const char *name, BinaryF32 f, BinaryF64 reference, const Inputs *in,
                         double bound) {
  Measure m = {0, 0};
  for (size_t i = 0; i < in->count; i++) {
    float a = in->x[i], b = in->y[i];
    double d = ulp_distance(f(a, b), (float)reference((double)a, (double)b));
    if (d > m.max_ulp) m = (Measure){d, i};
  }
  char at[64];
  float a = in->x[m.worst], b = in->y[m.worst];
  snprintf(at, sizeof at, "%.9g, %.9g", a, b);
  print_row(name, in->count, m, at, bound);
  EXPECT(in->count >= 1000000, "%s tested on only %zu inputs", name, in->count);
  EXPECT(m.max_ulp <= bound, "%s(%.9g, %.9g) = %.9g, expected %.9g: %.0f ulp > %.0f", name, a, b,
         f(a, b), (float)reference(a, b), m.max_ulp, bound);
}

/* The inputs every unary function gets, and the dense sweep of its range. */
static Inputs unary_inputs(float lo, float hi) {
  Inputs in = {0};
  for (size_t i = 0; i < SPECIAL_COUNT; i++) inputs_add(&in, special_values[i]);
  inputs_add_every_exponent(&in, 1200);
  inputs_add_uniform(&in, lo, hi, 300000);
  return in;
}

static double reference_logistic(double x) { return 1.0 / (1.0 + exp(-x)); }
static double reference_rsqrt(double x) { return 1.0 / sqrt(x); }

/* ---- the rules ---- */

#define LN2 0.69314718055994531
#define PI 3.14159265358979324

TEST(exp_and_expm1_within_bound_over_whole_range) {
  Inputs in = unary_inputs(-104.0f, 89.0f);
  float edges[] = {88.7228394f, 88.7228317f, -87.3365479f, -103.972084f, -103.278931f, 89.0f, -104.0f};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) inputs_add(&in, edges[i]);
  inputs_add_multiples(&in, LN2 / 2, 300, 40000);
  inputs_add_uniform(&in, -1.0f, 1.0f, 100000);
  check_unary("exp", mathref_expf, exp, &in, 1);
  check_unary("expm1", mathref_expm1f, expm1, &in, 1);
  inputs_free(&in);
}

TEST(log_and_log1p_within_bound_over_whole_range) {
  Inputs in = unary_inputs(-1.0f, 4.0f);
  inputs_add_uniform(&in, 0.7f, 1.5f, 100000);
  inputs_add_uniform(&in, -0.01f, 0.01f, 100000);
  inputs_add_binades(&in, (float)sqrt(0.5));
  inputs_add_binades(&in, (float)sqrt(0.5) - 1.0f); /* log1p's u = 1 + x near sqrt(1/2) */
  check_unary("log", mathref_logf, log, &in, 1);
  check_unary("log1p", mathref_log1pf, log1p, &in, 1);
  inputs_free(&in);
}

TEST(tanh_logistic_erf_within_bound_over_whole_range) {
  Inputs in = unary_inputs(-10.0f, 10.0f);
  inputs_add_uniform(&in, -1.2f, 1.2f, 200000);
  inputs_add_multiples(&in, 0.5625, 1, 10);
  inputs_add_multiples(&in, 1.0, 4, 40);
  check_unary("tanh", mathref_tanhf, tanh, &in, 1);
  check_unary("logistic", mathref_logisticf, reference_logistic, &in, 1);
  check_unary("erf", mathref_erff, erf, &in, 1);
  inputs_free(&in);
}

/* Inputs for sin, cos and tan: besides every exponent, the floats nearest
 * to multiples of pi/4 (where the reduced argument is smallest or changes
 * quadrant), sampled evenly below 2^22 where Cody-Waite reduces, and more
 * arguments from 2^22 up, where Payne-Hanek does. (All 2^32 floats were
 * checked once, by hand, with the same bounds; see docs/math.md.) */
static Inputs trig_inputs(void) {
  Inputs in = unary_inputs(-8.0f, 8.0f);
  inputs_add_uniform(&in, -100000.0f, 100000.0f, 100000);
  inputs_add_uniform(&in, -1.0f, 1.0f, 100000);
  inputs_add_multiples(&in, PI / 4, 0x1p22 / (PI / 4), 200000);
  for (int i = 0; i < 200000; i++)
    inputs_add(&in, f32_from_bits((random_u32() & 0x80000000u) |
                                  (uint32_t)(149 + random_u32() % 106) << 23 |
                                  (random_u32() & 0x7fffffu)));
  return in;
}

TEST(sin_cos_tan_within_bound_over_whole_range) {
  Inputs in = trig_inputs();
  check_unary("sin", mathref_sinf, sin, &in, 1);
  check_unary("cos", mathref_cosf, cos, &in, 1);
  check_unary("tan", mathref_tanf, tan, &in, 1);
  inputs_free(&in);
}

TEST(atan2_within_bound_over_all_pairs) {
  Inputs in = {0};
  for (size_t i = 0; i < SPECIAL_COUNT; i++)
    for (size_t j = 0; j < SPECIAL_COUNT; j++)
      inputs_add2(&in, special_values[i], special_values[j]);
  for (int i = 0; i < 400000; i++) inputs_add2(&in, f32_from_bits(random_u32()), f32_from_bits(random_u32()));
  for (int i = 0; i < 400000; i++) {
    float x = random_uniform(-10.0f, 10.0f);
    inputs_add2(&in, x * random_uniform(-3.0f, 3.0f), x);
  }
  for (int i = 0; i < 300000; i++) inputs_add2(&in, random_uniform(-1, 1), random_uniform(-1, 1));
  /* The folds: |y| = |x|, and |y| / |x| (or its inverse) near tan(pi/8). */
  for (int i = 0; i < 20000; i++) {
    float x = f32_from_bits(random_u32() & 0xbfffffffu), tx = x * 0x1.a8279ap-2f;
    float ys[] = {x, -x, tx, nextafterf(tx, INFINITY), nextafterf(tx, -INFINITY)};
    for (int j = 0; j < 5; j++) {
      inputs_add2(&in, ys[j], x);
      inputs_add2(&in, x, ys[j]);
    }
  }
  check_binary("atan2", mathref_atan2f, atan2, &in, 1);
  inputs_free(&in);
}

/* pow's inputs: y chosen so that y log2|x| lands in [-160, 160] (the
 * results between 0 and inf), negative x with integer y, x near 1 with
 * large y, any bits, and every pair of special values. */
TEST(pow_within_bound_over_all_pairs) {
  Inputs in = {0};
  for (size_t i = 0; i < SPECIAL_COUNT; i++)
    for (size_t j = 0; j < SPECIAL_COUNT; j++)
      inputs_add2(&in, special_values[i], special_values[j]);
  for (int i = 0; i < 500000; i++) {
    float x = f32_from_bits(random_u32() & 0x7fffffffu);
    double l2 = log2(x);
    if (!(fabs(l2) > 1e-3 && isfinite(l2))) continue;
    inputs_add2(&in, x, (float)(random_uniform(-160.0f, 160.0f) / l2));
  }
  Inputs edges = {0};
  inputs_add_binades(&edges, (float)sqrt(0.5));
  for (size_t i = 0; i < edges.count; i++)
    inputs_add2(&in, edges.x[i], (float)(random_uniform(-160.0f, 160.0f) / log2(fabs(edges.x[i]))));
  inputs_free(&edges);
  for (int i = 0; i < 200000; i++)
    inputs_add2(&in, -random_uniform(0.0f, 8.0f), (float)((int)(random_u32() % 101) - 50));
  for (int i = 0; i < 200000; i++)
    inputs_add2(&in, 1.0f + random_uniform(-0x1p-8f, 0x1p-8f), random_uniform(-20000.0f, 20000.0f));
  for (int i = 0; i < 200000; i++) inputs_add2(&in, f32_from_bits(random_u32()), f32_from_bits(random_u32()));
  check_binary("pow", mathref_powf, pow, &in, 1);
  inputs_free(&in);
}

TEST(cbrt_sqrt_rsqrt_within_bound_over_whole_range) {
  Inputs in = unary_inputs(-10.0f, 10.0f);
  inputs_add_multiples(&in, 1.0, 1000, 5000);
  inputs_add_binades(&in, 1.0f);
  inputs_add_uniform(&in, 0.0f, 1000.0f, 100000);
  check_unary("cbrt", mathref_cbrtf, cbrt, &in, 1);
  check_unary("sqrt", mathref_sqrtf, sqrt, &in, 0);
  check_unary("rsqrt", mathref_rsqrtf, reference_rsqrt, &in, 1);
  inputs_free(&in);
}

/* The compositions (atan, asin, ... round-nearest-afz): their ranges
 * densely, around ±1 where asin, acos, acosh and atanh turn, and around
 * the switches of sinh, cosh (88) and asinh, acosh (2^12). */
TEST(compositions_within_bound_over_whole_range) {
  Inputs in = unary_inputs(-10.0f, 10.0f);
  inputs_add_uniform(&in, -1.0f, 1.0f, 200000);
  inputs_add_uniform(&in, 0.99f, 1.01f, 50000);
  inputs_add_uniform(&in, -1.01f, -0.99f, 50000);
  inputs_add_uniform(&in, 80.0f, 90.0f, 50000);
  inputs_add_uniform(&in, -90.0f, -80.0f, 50000);
  inputs_add_uniform(&in, 3000.0f, 5000.0f, 50000);
  inputs_add_multiples(&in, 0.5, 100, 2000);
  check_unary("atan", mathref_atanf, atan, &in, 1);
  check_unary("asin", mathref_asinf, asin, &in, 1);
  check_unary("acos", mathref_acosf, acos, &in, 1);
  check_unary("sinh", mathref_sinhf, sinh, &in, 2);
  check_unary("cosh", mathref_coshf, cosh, &in, 2);
  check_unary("asinh", mathref_asinhf, asinh, &in, 2);
  check_unary("acosh", mathref_acoshf, acosh, &in, 2);
  check_unary("atanh", mathref_atanhf, atanh, &in, 2);
  check_unary("round_afz", mathref_round_afzf, round, &in, 0);
  inputs_free(&in);
}

/* ---- f64 ----
 * Against the C library's long double function (64-bit mantissa on x86)
 * rounded to double, which is the correctly rounded result or within a
 * hair of it, as the distance in doubles. Inputs: the special values,
 * random mantissas in every exponent of both signs, and a dense sweep. */

static int64_t ordered_from_f64(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return (b >> 63) ? -(int64_t)(b & ~(UINT64_C(1) << 63)) : (int64_t)b;
}

static double ulp_distance_f64(double got, double expected) {
  if (isnan(got) || isnan(expected)) return isnan(got) && isnan(expected) ? 0 : ULP_WRONG_KIND;
  if (got == 0 && expected == 0 && signbit(got) != signbit(expected)) return ULP_WRONG_KIND;
  int64_t d = ordered_from_f64(got) - ordered_from_f64(expected);
  return (double)(d < 0 ? -d : d);
}

static uint64_t random_u64(void) { return (uint64_t)random_u32() << 32 | random_u32(); }

typedef struct {
  double *x, *y;
  size_t count;
} InputsF64;

static const double special_values_f64[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-1074, -0x1p-1074,
                                            0x1p-1022, -0x1p-1022, 0x1.fffffffffffffp-1023, DBL_MAX, -DBL_MAX,
                                            1.0, -1.0, 0.5, -0.5, 2.0, 709.782712893384, -745.1332191019412,
                                            710.0, -746.0, 0x1p-54, 0x1p28, 0.5625, 22.0};
enum { SPECIAL_F64_COUNT = sizeof special_values_f64 / sizeof special_values_f64[0] };

/* specials, 100 per exponent (2046 x 2), then `sweep` uniform in [lo, hi]
 * and as many in [-1, 1]; y (binary functions) drawn the same way. */
static InputsF64 inputs_f64(double lo, double hi, int sweep) {
  size_t capacity = SPECIAL_F64_COUNT * SPECIAL_F64_COUNT + 2 * 2047 * 100 + 2 * (size_t)sweep;
  InputsF64 in = {malloc(capacity * sizeof(double)), malloc(capacity * sizeof(double)), 0};
  if (!in.x || !in.y) abort();
  for (int i = 0; i < SPECIAL_F64_COUNT; i++)
    for (int j = 0; j < SPECIAL_F64_COUNT; j++) {
      in.x[in.count] = special_values_f64[i];
      in.y[in.count++] = special_values_f64[j];
    }
  for (uint64_t e = 0; e < 2047; e++)
    for (int k = 0; k < 100; k++)
      for (uint64_t sign = 0; sign < 2; sign++) {
        uint64_t bx = sign << 63 | e << 52 | (random_u64() & ((UINT64_C(1) << 52) - 1));
        uint64_t by = random_u64() & ~(UINT64_C(0x7ff) << 52);
        by |= (uint64_t)(1023 + (int)(random_u32() % 40) - 20) << 52;
        memcpy(&in.x[in.count], &bx, 8);
        memcpy(&in.y[in.count++], &by, 8);
      }
  for (int i = 0; i < sweep; i++) {
    in.x[in.count] = lo + (hi - lo) * (double)(random_u64() >> 11) * 0x1p-53;
    in.y[in.count++] = -10 + 20 * (double)(random_u64() >> 11) * 0x1p-53;
    in.x[in.count] = -1 + 2 * (double)(random_u64() >> 11) * 0x1p-53;
    in.y[in.count++] = -1 + 2 * (double)(random_u64() >> 11) * 0x1p-53;
  }
  return in;
}

static void check_f64(const char *name, double (*f)(double), long double (*reference)(long double),
                      double (*f2)(double, double), long double (*reference2)(long double, long double),
                      const InputsF64 *in, double bound) {
  Measure m = {0, 0};
  for (size_t i = 0; i < in->count; i++) {
    double got = f ? f(in->x[i]) : f2(in->y[i], in->x[i]);
    double want = f ? (double)reference(in->x[i]) : (double)reference2(in->y[i], in->x[i]);
    double d = ulp_distance_f64(got, want);
    if (d > m.max_ulp) m = (Measure){d, i};
  }
  char at[64];
  if (f) snprintf(at, sizeof at, "%.17g", in->x[m.worst]);
  else snprintf(at, sizeof at, "%.9g, %.9g", in->y[m.worst], in->x[m.worst]);
  print_row(name, in->count, m, at, bound);
  EXPECT(in->count >= 1000000, "%s tested on only %zu inputs", name, in->count);
  EXPECT(m.max_ulp <= bound, "%s at %a (y %a): %.0f ulp > %.0f", name, in->x[m.worst], in->y[m.worst], m.max_ulp,
         bound);
}

/* check_f64 passes (y, x) to two-argument functions, atan2's order; pow
 * is pow(x, y) of the same pairs: the second array is the base. */
static double mathref_pow_yx(double y, double x) { return mathref_pow(x, y); }
static long double powl_yx(long double y, long double x) { return powl(x, y); }

static long double logistic_long(long double x) { return 1.0L / (1.0L + expl(-x)); }
static long double rsqrt_long(long double x) { return 1.0L / sqrtl(x); }

TEST(f64_functions_within_bound_over_whole_range) {
  InputsF64 in = inputs_f64(-750.0, 750.0, 300000);
  check_f64("exp f64", mathref_exp, expl, NULL, NULL, &in, 1);
  check_f64("expm1 f64", mathref_expm1, expm1l, NULL, NULL, &in, 1);
  check_f64("sinh f64", mathref_sinh, sinhl, NULL, NULL, &in, 2);
  check_f64("cosh f64", mathref_cosh, coshl, NULL, NULL, &in, 2);
  check_f64("tanh f64", mathref_tanh, tanhl, NULL, NULL, &in, 2);
  check_f64("logistic f64", mathref_logistic, logistic_long, NULL, NULL, &in, 1);
  free(in.x);
  free(in.y);
  in = inputs_f64(-2.0, 10.0, 300000);
  check_f64("log f64", mathref_log, logl, NULL, NULL, &in, 1);
  check_f64("log1p f64", mathref_log1p, log1pl, NULL, NULL, &in, 1);
  check_f64("atan2 f64", NULL, NULL, mathref_atan2, atan2l, &in, 1);
  check_f64("atan f64", mathref_atan, atanl, NULL, NULL, &in, 1);
  check_f64("asin f64", mathref_asin, asinl, NULL, NULL, &in, 1);
  check_f64("acos f64", mathref_acos, acosl, NULL, NULL, &in, 1);
  check_f64("asinh f64", mathref_asinh, asinhl, NULL, NULL, &in, 2);
  check_f64("acosh f64", mathref_acosh, acoshl, NULL, NULL, &in, 2);
  check_f64("atanh f64", mathref_atanh, atanhl, NULL, NULL, &in, 2);
  check_f64("cbrt f64", mathref_cbrt, cbrtl, NULL, NULL, &in, 1);
  check_f64("rsqrt f64", mathref_rsqrt, rsqrt_long, NULL, NULL, &in, 1);
  check_f64("erf f64", mathref_erf, erfl, NULL, NULL, &in, 2);
  free(in.x);
  free(in.y);
  /* sin, cos, tan: also near multiples of pi/2 up to 2^20 (Cody-Waite's
   * limit), where the reduced argument is smallest */
  in = inputs_f64(-1e6, 1e6, 300000);
  for (size_t i = 0; i < 100000 && i < in.count; i++) {
    double k = (double)(random_u32() % (1 << 20));
    in.x[in.count - 1 - i] = nextafter(k * 1.5707963267948966, (double)(random_u32() & 1 ? INFINITY : 0.0));
  }
  check_f64("sin f64", mathref_sin, sinl, NULL, NULL, &in, 1);
  check_f64("cos f64", mathref_cos, cosl, NULL, NULL, &in, 1);
  check_f64("tan f64", mathref_tan, tanl, NULL, NULL, &in, 2);
  /* pow: y chosen so that y log2|x| spans [-1080, 1030] (results from
   * below the subnormals to past overflow), negative x with integer y,
   * x near 1 with large y; the array x (second) is the base. */
  for (size_t i = SPECIAL_F64_COUNT * SPECIAL_F64_COUNT; i < in.count; i++) {
    uint64_t bits = random_u64() & ~(UINT64_C(1) << 63);
    double base;
    memcpy(&base, &bits, 8);
    int kind = (int)(random_u32() % 4);
    double u = (double)(random_u64() >> 11) * 0x1p-53;
    if (kind == 0 && isfinite(base) && base != 0.0 && base != 1.0) {
      in.x[i] = base;
      in.y[i] = (-1080.0 + 2110.0 * u) / log2(base);
    } else if (kind == 1) {
      in.x[i] = -8.0 * u;
      in.y[i] = (double)((int)(random_u32() % 201) - 100);
    } else if (kind == 2) {
      in.x[i] = 1.0 + (u - 0.5) * 0x1p-20;
      in.y[i] = (double)(random_u64() >> 11) * 0x1p-53 * 4e8 - 2e8;
    }
  }
  check_f64("pow f64", NULL, NULL, mathref_pow_yx, powl_yx, &in, 1);
  free(in.x);
  free(in.y);
}

int main(void) {
  printf("%-10s %8s %8s  %-28s %5s\n", "function", "inputs", "max_ulp", "at_input", "bound");
  RUN(exp_and_expm1_within_bound_over_whole_range);
  RUN(log_and_log1p_within_bound_over_whole_range);
  RUN(tanh_logistic_erf_within_bound_over_whole_range);
  RUN(sin_cos_tan_within_bound_over_whole_range);
  RUN(atan2_within_bound_over_all_pairs);
  RUN(pow_within_bound_over_all_pairs);
  RUN(cbrt_sqrt_rsqrt_within_bound_over_whole_range);
  RUN(compositions_within_bound_over_whole_range);
  RUN(f64_functions_within_bound_over_whole_range);
  return test_summary();
}
