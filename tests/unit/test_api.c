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

int main(void) {
  RUN(parsed_module_runs_on_host_buffers);
  RUN(wrong_argument_shape_names_the_parameter);
  RUN(parse_error_is_located);
  RUN(builder_module_matches_hand_computation);
  RUN(builder_reports_the_first_error_at_finish);
  RUN(unbuilt_backends_are_refused_clearly);
  RUN(tuple_parameters_take_tuple_buffers);
  RUN(parse_options_fill_elided_constants);
  return test_summary();
}
