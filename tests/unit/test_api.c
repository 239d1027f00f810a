/* The public C API: parse, build, compile, run, and the errors a caller sees. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "axle.h"
#include "../test.h"

static const char add_one_text[] =
    "HloModule add_one\n"
    "ENTRY main {\n"
    "  x = f32[3] parameter(0)\n"
    "  one = f32[] constant(1)\n"
    "  ones = f32[3] broadcast(one), dimensions={}\n"
    "  ROOT y = f32[3] add(x, ones)\n"
    "}\n";

static axle_module_t *parse(const char *text, axle_error_t **err) {
  return axle_module_parse(text, strlen(text), "test.hlo", err);
}

TEST(parsed_module_runs_on_host_buffers) {
  axle_error_t *err = NULL;
  axle_module_t *m = parse(add_one_text, &err);
  EXPECT(m != NULL, "parse failed: %s", axle_error_message(err));
  if (!m) {
    axle_error_free(err);
    return;
  }
  EXPECT(axle_module_parameter_count(m) == 1, "one parameter");
  EXPECT(axle_module_parameter_type(m, 0) == AXLE_F32, "f32 parameter");
  EXPECT(axle_module_parameter_dim(m, 0, 0) == 3, "dim 3");
  axle_executable_t *exe = axle_compile(m, AXLE_BACKEND_INTERP, &err);
  int64_t dims[1] = {3};
  float x[3] = {1, 2, -4};
  axle_buffer_t *arg = axle_buffer_create(AXLE_F32, 1, dims, x, &err);
  axle_buffer_t *out = NULL;
  bool ok = axle_executable_run(exe, &arg, 1, &out, &err);
  EXPECT(ok, "run failed: %s", axle_error_message(err));
  if (ok) {
    const float *y = axle_buffer_data(out);
    EXPECT(y[0] == 2 && y[1] == 3 && y[2] == -3, "got %g %g %g", y[0], y[1], y[2]);
  }
  axle_buffer_free(out);
  axle_buffer_free(arg);
  axle_executable_free(exe);
  axle_module_free(m);
  axle_error_free(err);
}

TEST(wrong_argument_shape_names_the_parameter) {
  axle_error_t *err = NULL;
  axle_module_t *m = parse(add_one_text, &err);
  if (!m) {
    axle_error_free(err);
    return;
  }
  axle_executable_t *exe = axle_compile(m, AXLE_BACKEND_INTERP, &err);
  int64_t dims[1] = {4};
  axle_buffer_t *arg = axle_buffer_create(AXLE_F32, 1, dims, NULL, &err);
  axle_buffer_t *out = NULL;
  bool ok = axle_executable_run(exe, &arg, 1, &out, &err);
  EXPECT(!ok, "a f32[4] argument for f32[3] must be refused");
  EXPECT(axle_error_status(err) == AXLE_ERROR_INPUT, "status %d", axle_error_status(err));
  EXPECT(strstr(axle_error_message(err), "parameter 0 (x) expects f32[3], got f32[4]") != NULL,
         "message: %s", axle_error_message(err));
  axle_buffer_free(arg);
  axle_executable_free(exe);
  axle_module_free(m);
  axle_error_free(err);
}

TEST(parse_error_is_located) {
  axle_error_t *err = NULL;
  axle_module_t *m = parse("HloModule m\nENTRY main {\n  x = f32[3] frobnicate()\n}\n", &err);
  EXPECT(m == NULL, "an unknown opcode must be refused");
  EXPECT(axle_error_status(err) == AXLE_ERROR_PARSE, "status %d", axle_error_status(err));
  EXPECT(strncmp(axle_error_message(err), "test.hlo:3:", 11) == 0, "message: %s",
         axle_error_message(err));
  axle_module_free(m);
  axle_error_free(err);
}

TEST(builder_module_matches_hand_computation) {
  axle_error_t *err = NULL;
  axle_builder_t *b = axle_builder_create("built");
  int64_t dims[2] = {2, 3}, reduce_dims[1] = {1};
  axle_value_t x = axle_builder_parameter(b, AXLE_F32, 2, dims, "x");
  axle_value_t e = axle_builder_unary(b, AXLE_NEGATE, x);
  axle_value_t init = axle_builder_constant(b, AXLE_F32, 0);
  axle_value_t r = axle_builder_reduce(b, AXLE_ADD, axle_builder_binary(b, AXLE_MULTIPLY, e, x),
                                       init, 1, reduce_dims);
  axle_module_t *m = axle_builder_finish(b, r, &err);
  axle_builder_free(b);
  EXPECT(m != NULL, "finish failed: %s", axle_error_message(err));
  if (!m) {
    axle_error_free(err);
    return;
  }
  axle_executable_t *exe = axle_compile(m, AXLE_BACKEND_INTERP, &err);
  float data[6] = {1, 2, 3, 4, 5, 6};
  axle_buffer_t *arg = axle_buffer_create(AXLE_F32, 2, dims, data, &err);
  axle_buffer_t *out = NULL;
  EXPECT(axle_executable_run(exe, &arg, 1, &out, &err), "run: %s", axle_error_message(err));
  if (out) {
    const float *y = axle_buffer_data(out);
    EXPECT(axle_buffer_rank(out) == 1 && axle_buffer_dim(out, 0) == 2, "shape [2]");
    EXPECT(y[0] == -14 && y[1] == -77, "-(1+4+9) = -14, -(16+25+36) = -77; got %g %g", y[0], y[1]);
  }
  axle_buffer_free(out);
  axle_buffer_free(arg);
  axle_executable_free(exe);
  axle_module_free(m);
  axle_error_free(err);
}

TEST(builder_reports_the_first_error_at_finish) {
  axle_error_t *err = NULL;
  axle_builder_t *b = axle_builder_create("bad");
  int64_t d2[1] = {2}, d3[1] = {3};
  axle_value_t x = axle_builder_parameter(b, AXLE_F32, 1, d2, "x");
  axle_value_t y = axle_builder_parameter(b, AXLE_F32, 1, d3, "y");
  axle_value_t s = axle_builder_binary(b, AXLE_ADD, x, y);
  EXPECT(s < 0, "adding f32[2] and f32[3] must fail");
  axle_module_t *m = axle_builder_finish(b, s, &err);
  EXPECT(m == NULL && err != NULL, "finish must report the error");
  EXPECT(axle_error_status(err) == AXLE_ERROR_VERIFY, "status %d", axle_error_status(err));
  axle_builder_free(b);
  axle_module_free(m);
  axle_error_free(err);
}

TEST(unbuilt_backends_are_refused_clearly) {
  axle_error_t *err = NULL;
  axle_module_t *m = parse(add_one_text, &err);
  if (!m) {
    axle_error_free(err);
    return;
  }
  axle_executable_t *exe = axle_compile(m, AXLE_BACKEND_GPU, &err);
  EXPECT(exe == NULL, "no GPU backend yet");
  EXPECT(axle_error_status(err) == AXLE_ERROR_UNSUPPORTED, "status %d", axle_error_status(err));
  axle_module_free(m);
  axle_error_free(err);
}

TEST(tuple_parameters_take_tuple_buffers) {
  static const char text[] = "HloModule t\nENTRY main {\n  p = (f32[2], (s32[], f32[2])) parameter(0)\n"
                             "  a = f32[2] get-tuple-element(p), index=0\n  q = (s32[], f32[2]) get-tuple-element(p), index=1\n"
                             "  b = f32[2] get-tuple-element(q), index=1\n  ROOT s = f32[2] add(a, b)\n}\n";
  axle_error_t *err = NULL;
  axle_module_t *m = parse(text, &err);
  axle_executable_t *exe = m ? axle_compile(m, AXLE_BACKEND_INTERP, &err) : NULL;
  EXPECT(exe != NULL, "compiles: %s", axle_error_message(err));
  if (!exe) {
    axle_module_free(m);
    axle_error_free(err);
    return;
  }
  EXPECT(axle_module_parameter_type(m, 0) == AXLE_TUPLE, "the parameter is a tuple");
  int64_t d2[1] = {2};
  float av[2] = {1, 2}, bv[2] = {10, 20};
  int32_t k = 7;
  axle_buffer_t *a = axle_buffer_create(AXLE_F32, 1, d2, av, &err);
  axle_buffer_t *b = axle_buffer_create(AXLE_F32, 1, d2, bv, &err);
  axle_buffer_t *kb = axle_buffer_create(AXLE_S32, 0, NULL, &k, &err);
  axle_buffer_t *inner = axle_buffer_create_tuple((axle_buffer_t *[]){kb, b}, 2, &err);
  axle_buffer_t *outer = axle_buffer_create_tuple((axle_buffer_t *[]){a, inner}, 2, &err);
  axle_buffer_t *wrong = axle_buffer_create_tuple((axle_buffer_t *[]){a, b}, 2, &err);
  EXPECT(outer && wrong && axle_buffer_tuple_count(outer) == 2, "tuple buffers are made");
  axle_buffer_t *out = NULL;
  bool ok = axle_executable_run(exe, &outer, 1, &out, &err);
  EXPECT(ok, "runs: %s", axle_error_message(err));
  if (ok) {
    const float *y = axle_buffer_data(out);
    EXPECT(y[0] == 11 && y[1] == 22, "a + b = {%g, %g}", y[0], y[1]);
  }
  axle_error_free(err);
  err = NULL;
  axle_buffer_t *out2 = NULL;
  EXPECT(!axle_executable_run(exe, &wrong, 1, &out2, &err) && axle_error_status(err) == AXLE_ERROR_INPUT &&
         strstr(axle_error_message(err), "expects (f32[2], (s32[], f32[2])), got (f32[2], f32[2])"),
         "a tuple of the wrong structure is refused: %s", axle_error_message(err));
  axle_error_free(err);
  axle_buffer_free(out);
  axle_buffer_free(wrong);
  axle_buffer_free(outer);
  axle_buffer_free(inner);
  axle_buffer_free(kb);
  axle_buffer_free(b);
  axle_buffer_free(a);
  axle_executable_free(exe);
  axle_module_free(m);
}

TEST(parse_options_fill_elided_constants) {
  static const char text[] = "HloModule e\nENTRY main {\n  ROOT c = f32[3] constant({...})\n}\n";
  axle_error_t *err = NULL;
  axle_module_t *m = parse(text, &err);
  EXPECT(m == NULL && axle_error_status(err) == AXLE_ERROR_PARSE, "refused without options");
  axle_error_free(err);
  err = NULL;
  axle_parse_options_t options = {.fill_elided_constants = true, .elided_seed = 1};
  m = axle_module_parse_with(text, strlen(text), "e.hlo", &options, &err);
  EXPECT(m != NULL && axle_module_elided_constant_count(m) == 1, "filled with the options: %s",
         axle_error_message(err));
  axle_module_free(m);
  axle_error_free(err);
}

/* Runs add_one_text's module on {1, 2, -4}; true when it gives {2, 3, -3}. */
static bool add_one_runs(axle_executable_t *exe) {
  axle_error_t *err = NULL;
  int64_t dims[1] = {3};
  float x[3] = {1, 2, -4};
  axle_buffer_t *arg = axle_buffer_create(AXLE_F32, 1, dims, x, &err);
  axle_buffer_t *out = NULL;
  bool ok = axle_executable_run(exe, &arg, 1, &out, &err);
  if (ok) {
    const float *y = axle_buffer_data(out);
    ok = y[0] == 2 && y[1] == 3 && y[2] == -3;
  }
  axle_buffer_free(out);
  axle_buffer_free(arg);
  axle_error_free(err);
  return ok;
}

TEST(executable_outlives_its_module_and_text) {
  axle_error_t *err = NULL;
  char *text = strdup(add_one_text);
  axle_module_t *m = axle_module_parse(text, strlen(text), "outlive.hlo", &err);
  axle_executable_t *exe = m ? axle_compile(m, AXLE_BACKEND_INTERP, &err) : NULL;
  EXPECT(exe != NULL, "compiles: %s", axle_error_message(err));
  /* Scribble over the text before freeing it, so a dangling read would see garbage. */
  memset(text, 'x', strlen(text));
  free(text);
  axle_module_free(m);
  axle_compile_cache_clear();
  EXPECT(exe && add_one_runs(exe), "the executable runs after its module, text and cache entry are gone");
  axle_executable_free(exe);
  axle_error_free(err);
}

TEST(second_compile_of_the_same_module_is_a_cache_hit) {
  axle_error_t *err = NULL;
  axle_compile_cache_clear();
  int64_t hits0, misses0, hits1, misses1, hits2, misses2;
  axle_compile_cache_counts(&hits0, &misses0);
  axle_module_t *m1 = parse(add_one_text, &err);
  axle_module_t *m2 = parse(add_one_text, &err);  /* another object, the same text */
  axle_executable_t *e1 = m1 ? axle_compile(m1, AXLE_BACKEND_INTERP, &err) : NULL;
  axle_executable_t *e2 = m2 ? axle_compile(m2, AXLE_BACKEND_INTERP, &err) : NULL;
  axle_compile_cache_counts(&hits1, &misses1);
  EXPECT(e1 && e2, "both compile: %s", axle_error_message(err));
  EXPECT(misses1 - misses0 == 1 && hits1 - hits0 == 1,
         "one compile ran and one came from the cache; got %lld misses, %lld hits",
         (long long)(misses1 - misses0), (long long)(hits1 - hits0));
  /* Each owner frees its own; the other still runs. */
  axle_executable_free(e1);
  axle_module_free(m1);
  EXPECT(e2 && add_one_runs(e2), "the shared executable runs after the first owner freed it");
  axle_executable_free(e2);
  axle_module_free(m2);
  /* A different module is a miss. */
  axle_module_t *m3 = parse("HloModule other\nENTRY main {\n  ROOT x = f32[3] parameter(0)\n}\n", &err);
  axle_executable_t *e3 = m3 ? axle_compile(m3, AXLE_BACKEND_INTERP, &err) : NULL;
  axle_compile_cache_counts(&hits2, &misses2);
  EXPECT(e3 && misses2 - misses1 == 1 && hits2 == hits1, "another module compiles anew");
  axle_executable_free(e3);
  axle_module_free(m3);
  axle_compile_cache_clear();
  axle_error_free(err);
}

TEST(unknown_backend_value_is_an_error) {
  axle_error_t *err = NULL;
  axle_module_t *m = parse(add_one_text, &err);
  axle_executable_t *exe = m ? axle_compile(m, (axle_backend_t)7, &err) : NULL;
  EXPECT(exe == NULL && axle_error_status(err) == AXLE_ERROR_INPUT, "backend 7 is refused: %s",
         axle_error_message(err));
  axle_module_free(m);
  axle_error_free(err);
}

TEST(buffers_copy_their_data_in) {
  axle_error_t *err = NULL;
  int64_t dims[2] = {2, 2};
  int32_t v[4] = {1, 2, 3, 4};
  axle_buffer_t *b = axle_buffer_create(AXLE_S32, 2, dims, v, &err);
  v[0] = 99;
  EXPECT(b && ((int32_t *)axle_buffer_data(b))[0] == 1, "later writes to the source do not reach the buffer");
  EXPECT(b && axle_buffer_byte_size(b) == 16 && axle_buffer_rank(b) == 2 && axle_buffer_dim(b, 1) == 2,
         "s32[2,2] is 16 bytes");
  axle_buffer_t *zeros = axle_buffer_create(AXLE_F64, 1, dims, NULL, &err);
  EXPECT(zeros && ((double *)axle_buffer_data(zeros))[1] == 0, "no data: zeros");
  axle_buffer_t *t = axle_buffer_create_tuple((axle_buffer_t *[]){b, zeros}, 2, &err);
  ((int32_t *)axle_buffer_data(b))[1] = -5;
  axle_buffer_t *t0 = t ? axle_buffer_tuple_element(t, 0) : NULL;
  EXPECT(t0 && ((int32_t *)axle_buffer_data(t0))[1] == 2, "a tuple holds copies of its elements");
  EXPECT(t && axle_buffer_data(t) == NULL && axle_buffer_tuple_element(t, 2) == NULL,
         "a tuple has no data of its own and two elements");
  axle_buffer_free(t);
  axle_buffer_free(zeros);
  axle_buffer_free(b);
  axle_error_free(err);
}

TEST(tuple_results_come_back_as_tuple_buffers) {
  static const char text[] = "HloModule t\nENTRY main {\n  x = f32[2] parameter(0)\n"
                             "  n = f32[2] negate(x)\n  c = s32[] constant(5)\n"
                             "  inner = (s32[], f32[2]) tuple(c, x)\n  ROOT r = (f32[2], (s32[], f32[2])) tuple(n, inner)\n}\n";
  axle_error_t *err = NULL;
  axle_module_t *m = parse(text, &err);
  axle_executable_t *exe = m ? axle_compile(m, AXLE_BACKEND_INTERP, &err) : NULL;
  axle_module_free(m);
  int64_t d2[1] = {2};
  float xv[2] = {1.5f, -2};
  axle_buffer_t *x = axle_buffer_create(AXLE_F32, 1, d2, xv, &err);
  axle_buffer_t *out = NULL;
  bool ok = exe && axle_executable_run(exe, &x, 1, &out, &err);
  EXPECT(ok, "runs: %s", axle_error_message(err));
  if (ok) {
    EXPECT(axle_buffer_type(out) == AXLE_TUPLE && axle_buffer_tuple_count(out) == 2, "a tuple of 2");
    const float *n = axle_buffer_data(axle_buffer_tuple_element(out, 0));
    axle_buffer_t *inner = axle_buffer_tuple_element(out, 1);
    EXPECT(n[0] == -1.5f && n[1] == 2, "negate gives {%g, %g}", n[0], n[1]);
    EXPECT(axle_buffer_tuple_count(inner) == 2 &&
               *(int32_t *)axle_buffer_data(axle_buffer_tuple_element(inner, 0)) == 5 &&
               ((float *)axle_buffer_data(axle_buffer_tuple_element(inner, 1)))[1] == -2,
           "the nested tuple holds 5 and x");
  }
  axle_buffer_t *none = NULL;
  axle_error_free(err);
  err = NULL;
  EXPECT(exe && !axle_executable_run(exe, NULL, 0, &none, &err) && none == NULL &&
             strstr(axle_error_message(err), "takes 1 parameter, got 0"),
         "a missing argument is refused: %s", axle_error_message(err));
  axle_buffer_free(out);
  axle_buffer_free(x);
  axle_executable_free(exe);
  axle_error_free(err);
}

/* A long f32 sum: the reduction is split into tasks, so a thread count that
 * changed the split would change the rounding. */
static const char long_sum_text[] =
    "HloModule long_sum\n"
    "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
    "ENTRY main {\n"
    "  x = f32[64,4099] parameter(0)\n"
    "  zero = f32[] constant(0)\n"
    "  ROOT r = f32[64] reduce(x, zero), dimensions={1}, to_apply=add\n"
    "}\n";

/* The CPU backend's sum at `threads` threads, into out[64]; false if it did not run. */
static bool long_sum_run(axle_module_t *m, const axle_buffer_t *x, int threads, float *out) {
  axle_error_t *err = NULL;
  axle_compile_options_t options = {.threads = threads};
  axle_executable_t *exe = axle_compile_with(m, AXLE_BACKEND_CPU, &options, &err);
  axle_buffer_t *result = NULL, *arg = (axle_buffer_t *)x;
  bool ok = exe && axle_executable_run(exe, &arg, 1, &result, &err);
  EXPECT(ok, "threads=%d: %s", threads, err ? axle_error_message(err) : "");
  if (ok) memcpy(out, axle_buffer_data(result), 64 * sizeof(float));
  axle_buffer_free(result);
  axle_executable_free(exe);
  axle_error_free(err);
  return ok;
}

TEST(compile_option_threads_gives_the_same_bits_at_every_count) {
  axle_error_t *err = NULL;
  axle_module_t *m = parse(long_sum_text, &err);
  EXPECT(m != NULL, "parse failed: %s", axle_error_message(err));
  int64_t dims[2] = {64, 4099};
  axle_buffer_t *x = m ? axle_buffer_create(AXLE_F32, 2, dims, NULL, &err) : NULL;
  if (!x) {
    axle_module_free(m);
    axle_error_free(err);
    return;
  }
  float *data = axle_buffer_data(x);
  uint32_t state = 12345;
  for (int64_t i = 0; i < 64 * 4099; i++) {
    state = state * 1664525u + 1013904223u;
    data[i] = (float)(state >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
  }
  int64_t misses_before = 0, misses_after = 0;
  axle_compile_cache_counts(NULL, &misses_before);
  float one[64], other[64];
  if (long_sum_run(m, x, 1, one)) {
    const int counts[] = {2, 3, 8};
    for (int i = 0; i < 3; i++)
      if (long_sum_run(m, x, counts[i], other))
        EXPECT(memcmp(one, other, sizeof one) == 0, "threads=%d differs from threads=1", counts[i]);
    axle_compile_cache_counts(NULL, &misses_after);
    EXPECT(misses_after - misses_before == 4, "each thread count compiles apart: %lld misses",
           (long long)(misses_after - misses_before));
  }
  axle_compile_options_t negative = {.threads = -1};
  axle_executable_t *bad = axle_compile_with(m, AXLE_BACKEND_CPU, &negative, &err);
  EXPECT(!bad && err && strstr(axle_error_message(err), "threads"), "a negative thread count is refused");
  axle_executable_free(bad);
  axle_buffer_free(x);
  axle_module_free(m);
  axle_error_free(err);
}

int main(void) {
  RUN(parsed_module_runs_on_host_buffers);
  RUN(wrong_argument_shape_names_the_parameter);
  RUN(parse_error_is_located);
  RUN(builder_module_matches_hand_computation);
  RUN(builder_reports_the_first_error_at_finish);
  RUN(unbuilt_backends_are_refused_clearly);
  RUN(tuple_parameters_take_tuple_buffers);
  RUN(parse_options_fill_elided_constants);
  RUN(executable_outlives_its_module_and_text);
  RUN(second_compile_of_the_same_module_is_a_cache_hit);
  RUN(unknown_backend_value_is_an_error);
  RUN(buffers_copy_their_data_in);
  RUN(tuple_results_come_back_as_tuple_buffers);
  RUN(compile_option_threads_gives_the_same_bits_at_every_count);
  axle_compile_cache_clear();  /* so that nothing is left for the leak checker to judge */
  return test_summary();
}
