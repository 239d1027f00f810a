/* Using libaxle from C: XLA's classic example, sum(x + y*z), built twice:
 * once with the builder API and once parsed from HLO text. Both are run on
 * the same inputs and checked against a plain C loop.
 *
 *   build/examples/api_example */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axle.h"

enum { N = 1000 };

static const char module_text[] =
    "HloModule sum_xyz\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[1000] parameter(0)\n"
    "  y = f32[1000] parameter(1)\n"
    "  z = f32[1000] parameter(2)\n"
    "  yz = f32[1000] multiply(y, z)\n"
    "  sum = f32[1000] add(x, yz)\n"
    "  zero = f32[] constant(0)\n"
    "  ROOT total = f32[] reduce(sum, zero), dimensions={0}, to_apply=add\n"
    "}\n";

static axle_module_t *build_module(axle_error_t **err) {
  axle_builder_t *b = axle_builder_create("sum_xyz_built");
  int64_t dims[1] = {N}, reduce_dims[1] = {0};
  axle_value_t x = axle_builder_parameter(b, AXLE_F32, 1, dims, "x");
  axle_value_t y = axle_builder_parameter(b, AXLE_F32, 1, dims, "y");
  axle_value_t z = axle_builder_parameter(b, AXLE_F32, 1, dims, "z");
  axle_value_t sum = axle_builder_binary(b, AXLE_ADD, x, axle_builder_binary(b, AXLE_MULTIPLY, y, z));
  axle_value_t zero = axle_builder_constant(b, AXLE_F32, 0.0);
  axle_value_t total = axle_builder_reduce(b, AXLE_ADD, sum, zero, 1, reduce_dims);
  axle_module_t *m = axle_builder_finish(b, total, err);
  axle_builder_free(b);
  return m;
}

/* Runs m on the three inputs; returns the scalar result, NAN on error. */
static float run_module(axle_module_t *m, axle_buffer_t *args[3]) {
  axle_error_t *err = NULL;
  axle_buffer_t *result = NULL;
  axle_executable_t *exe = axle_compile(m, AXLE_BACKEND_CPU, &err);
  float value = NAN;
  if (exe && axle_executable_run(exe, args, 3, &result, &err))
    value = *(const float *)axle_buffer_data(result);
  else
    fprintf(stderr, "%s", axle_error_message(err));
  axle_error_free(err);
  axle_buffer_free(result);
  axle_executable_free(exe);
  return value;
}

int main(void) {
  static float x[N], y[N], z[N];
  double expected = 0;
  for (int i = 0; i < N; i++) {
    x[i] = (float)i / N;
    y[i] = (float)(i % 7) - 3;
    z[i] = 0.5f;
    expected += x[i] + y[i] * z[i];
  }
  int64_t dims[1] = {N};
  axle_error_t *err = NULL;
  axle_buffer_t *args[3] = {axle_buffer_create(AXLE_F32, 1, dims, x, &err),
                            axle_buffer_create(AXLE_F32, 1, dims, y, &err),
                            axle_buffer_create(AXLE_F32, 1, dims, z, &err)};
  axle_module_t *built = build_module(&err);
  axle_module_t *parsed = built ? axle_module_parse(module_text, strlen(module_text), "inline.hlo", &err) : NULL;
  int rc = 1;
  if (built && parsed) {
    float from_builder = run_module(built, args), from_text = run_module(parsed, args);
    printf("sum(x + y*z) over %d elements\n", N);
    printf("  builder module: %.6f\n  parsed module:  %.6f\n  plain C loop:   %.6f\n",
           from_builder, from_text, expected);
    rc = fabs(from_builder - expected) < 1e-2 && fabs(from_text - expected) < 1e-2 ? 0 : 1;
    printf("%s\n", rc == 0 ? "ok" : "MISMATCH");
  } else {
    fprintf(stderr, "%s", axle_error_message(err));
  }
  axle_error_free(err);
  axle_module_free(built);
  axle_module_free(parsed);
  for (int i = 0; i < 3; i++) axle_buffer_free(args[i]);
  return rc;
}
