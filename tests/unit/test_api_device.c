/* Device buffers in the public API (include/axle.h: axle_buffer_to_device,
 * axle_run_on_device, axle_buffer_to_host), on every backend:
 *   - the CPU backend and the interpreter keep them in host memory: a loop
 *     of steps on device buffers gives what host runs give;
 *   - the GPU backend, on the fake libcuda (tests/fake_cuda): its trace
 *     shows that a run on device buffers copies nothing up or down and
 *     launches each kernel once, that every allocation is freed, and with
 *     FAKE_CUDA_EXECUTE=1 (kernels run by the SIMT simulator) the values
 *     of a loop of steps are right, a parameter returned as it is too;
 *   - what is refused says why: tuples, wrong shapes, a buffer of another
 *     backend, a results array of the wrong length. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "axle.h"
#include "tool_files.h"
#include "../test.h"

static char fake_driver[4096], trace_path[4096];

static void use_fake(bool execute) {
  /* an executable compiled under another fake setting must not come back,
   * and what it frees belongs to the trace before this one */
  axle_compile_cache_clear();
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  if (execute) setenv("FAKE_CUDA_EXECUTE", "1", 1);
  else unsetenv("FAKE_CUDA_EXECUTE");
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_DEVICES");
  unsetenv("FAKE_CUDA_FREE_BYTES");
  setenv("FAKE_CUDA_TRACE", trace_path, 1);
  unlink(trace_path);
}

/* One step of a loop: the state plus the weights, the product, and the
 * weights returned as they are. */
static const char step_module[] =
    "HloModule step\n"
    "ENTRY e {\n"
    "  w = f32[40] parameter(0)\n"
    "  s = f32[40] parameter(1)\n"
    "  a = f32[40] add(s, w)\n"
    "  m = f32[40] multiply(s, w)\n"
    "  ROOT t = (f32[40], f32[40], f32[40]) tuple(a, m, w)\n"
    "}\n";

enum { N = 40, STEPS = 3 };

static axle_executable_t *compile_step(axle_backend_t backend) {
  axle_error_t *err = NULL;
  axle_module_t *m = axle_module_parse(step_module, strlen(step_module), "step.hlo", &err);
  axle_executable_t *exe = m ? axle_compile(m, backend, &err) : NULL;
  EXPECT(exe != NULL, "%s", axle_error_message(err));
  axle_error_free(err);
  axle_module_free(m);
  return exe;
}

static axle_device_buffer_t *upload(axle_executable_t *exe, const float *values) {
  int64_t dims[1] = {N};
  axle_error_t *err = NULL;
  axle_buffer_t *h = axle_buffer_create(AXLE_F32, 1, dims, values, &err);
  axle_device_buffer_t *d = h ? axle_buffer_to_device(exe, h, &err) : NULL;
  EXPECT(d != NULL, "%s", axle_error_message(err));
  axle_error_free(err);
  axle_buffer_free(h);
  return d;
}

/* The values of d, or false with the failure reported. */
static bool download(const axle_device_buffer_t *d, float *values) {
  axle_error_t *err = NULL;
  axle_buffer_t *h = axle_buffer_to_host(d, &err);
  EXPECT(h != NULL, "%s", axle_error_message(err));
  axle_error_free(err);
  if (h) memcpy(values, axle_buffer_data(h), sizeof(float) * N);
  axle_buffer_free(h);
  return h != NULL;
}

/* STEPS runs of state = state + w on device buffers; the last run's
 * three results checked against the same steps computed here. */
static void step_loop_check(axle_executable_t *exe, const char *where) {
  float w[N], s[N], want_sum[N], want_product[N], got[N];
  for (int i = 0; i < N; i++) w[i] = 0.25f * (float)(i - 7), s[i] = 1.5f - 0.125f * (float)i;
  axle_device_buffer_t *dw = upload(exe, w), *state = upload(exe, s), *out[3] = {0};
  EXPECT(axle_executable_result_count(exe) == 3, "%s: %d results", where, axle_executable_result_count(exe));
  for (int step = 0; step < STEPS && dw && state; step++) {
    for (int i = 0; i < N; i++) want_product[i] = s[i] * w[i], want_sum[i] = s[i] + w[i], s[i] = want_sum[i];
    axle_device_buffer_t *args[2] = {dw, state};
    axle_error_t *err = NULL;
    if (step > 0) axle_device_buffer_free(out[1]), axle_device_buffer_free(out[2]);
    bool ran = axle_run_on_device(exe, args, 2, out, 3, &err);
    EXPECT(ran, "%s: step %d: %s", where, step, axle_error_message(err));
    axle_error_free(err);
    axle_device_buffer_free(state);
    state = ran ? out[0] : NULL;
    if (!ran) out[1] = out[2] = NULL;
  }
  const float *want[3] = {want_sum, want_product, w};
  for (int r = 0; r < 3 && state; r++) {
    if (!download(r == 0 ? state : out[r], got)) continue;
    for (int i = 0; i < N; i++)
      EXPECT(got[i] == want[r][i], "%s: result %d element %d: wanted %g, got %g", where, r, i, want[r][i], got[i]);
  }
  axle_device_buffer_free(out[1]);
  axle_device_buffer_free(out[2]);
  axle_device_buffer_free(state);
  axle_device_buffer_free(dw);
}

/* ---- host-memory backends ---- */

TEST(on_the_cpu_backend_and_the_interpreter_a_loop_on_device_buffers_gives_the_host_values) {
  axle_backend_t backends[2] = {AXLE_BACKEND_CPU, AXLE_BACKEND_INTERP};
  const char *names[2] = {"cpu", "interp"};
  for (int b = 0; b < 2; b++) {
    axle_executable_t *exe = compile_step(backends[b]);
    if (exe) step_loop_check(exe, names[b]);
    axle_executable_free(exe);
  }
}

TEST(a_device_buffer_outlives_the_executable_handle_it_was_made_with) {
  axle_executable_t *exe = compile_step(AXLE_BACKEND_CPU);
  if (!exe) return;
  float values[N], got[N];
  for (int i = 0; i < N; i++) values[i] = (float)i * 0.5f;
  axle_device_buffer_t *d = upload(exe, values);
  axle_executable_free(exe);
  axle_compile_cache_clear();
  if (d && download(d, got)) EXPECT(memcmp(got, values, sizeof values) == 0, "the values changed");
  axle_device_buffer_free(d);
}

TEST(tuples_wrong_shapes_other_backends_and_short_result_arrays_are_refused_with_a_reason) {
  axle_executable_t *cpu = compile_step(AXLE_BACKEND_CPU), *interp = compile_step(AXLE_BACKEND_INTERP);
  if (!cpu || !interp) return;
  axle_error_t *err = NULL;
  int64_t dims[1] = {N}, short_dims[1] = {3};
  axle_buffer_t *h = axle_buffer_create(AXLE_F32, 1, dims, NULL, &err);
  axle_buffer_t *tuple = axle_buffer_create_tuple(&h, 1, &err);
  EXPECT(axle_buffer_to_device(cpu, tuple, &err) == NULL && strstr(axle_error_message(err), "arrays, not tuples"),
         "a tuple: %s", axle_error_message(err));
  axle_error_free(err), err = NULL;
  axle_buffer_t *small = axle_buffer_create(AXLE_F32, 1, short_dims, NULL, &err);
  axle_device_buffer_t *d = axle_buffer_to_device(cpu, h, &err), *wrong = axle_buffer_to_device(cpu, small, &err);
  axle_device_buffer_t *other = axle_buffer_to_device(interp, h, &err), *out[3];
  axle_device_buffer_t *bad_shape[2] = {d, wrong}, *bad_backend[2] = {d, other}, *good[2] = {d, d};
  EXPECT(!axle_run_on_device(cpu, bad_shape, 2, out, 3, &err) && axle_error_status(err) == AXLE_ERROR_INPUT &&
             strstr(axle_error_message(err), "parameter 1"),
         "a wrong shape: %s", axle_error_message(err));
  axle_error_free(err), err = NULL;
  EXPECT(!axle_run_on_device(cpu, bad_backend, 2, out, 3, &err) && strstr(axle_error_message(err), "interp backend"),
         "another backend's buffer: %s", axle_error_message(err));
  axle_error_free(err), err = NULL;
  EXPECT(!axle_run_on_device(cpu, good, 2, out, 2, &err) && strstr(axle_error_message(err), "3 arrays, not 2"),
         "a short results array: %s", axle_error_message(err));
  axle_error_free(err);
  axle_device_buffer_free(d), axle_device_buffer_free(wrong), axle_device_buffer_free(other);
  axle_buffer_free(small), axle_buffer_free(tuple), axle_buffer_free(h);
  axle_executable_free(cpu), axle_executable_free(interp);
}

/* ---- the GPU backend on the fake driver ---- */

TEST(on_the_gpu_a_run_on_device_buffers_copies_nothing_and_frees_what_it_allocates) {
  use_fake(false);
  axle_executable_t *exe = compile_step(AXLE_BACKEND_GPU);
  if (!exe) return;
  float values[N] = {0};
  axle_device_buffer_t *w = upload(exe, values), *s = upload(exe, values);
  int up = trace_count("cuMemcpyHtoDAsync"), down = trace_count("cuMemcpyDtoHAsync");
  int launches = trace_count("cuLaunchKernel"), per_run = 0;
  for (int run = 1; run <= 2 && w && s; run++) {
    axle_device_buffer_t *args[2] = {w, s}, *out[3] = {0};
    axle_error_t *err = NULL;
    EXPECT(axle_run_on_device(exe, args, 2, out, 3, &err), "run %d: %s", run, axle_error_message(err));
    axle_error_free(err);
    if (run == 1) per_run = trace_count("cuLaunchKernel") - launches;
    EXPECT(per_run >= 1 && trace_count("cuLaunchKernel") - launches == run * per_run, "run %d: %d launches", run,
           trace_count("cuLaunchKernel") - launches);
    /* the weights returned as they are are the one leaf copied, through the host: one copy each way */
    EXPECT(trace_count("cuMemcpyHtoDAsync") - up == run, "run %d: %d copies up", run,
           trace_count("cuMemcpyHtoDAsync") - up);
    EXPECT(trace_count("cuMemcpyDtoHAsync") - down == run, "run %d: %d copies down", run,
           trace_count("cuMemcpyDtoHAsync") - down);
    for (int r = 0; r < 3; r++) axle_device_buffer_free(out[r]);
  }
  axle_device_buffer_free(w), axle_device_buffer_free(s);
  axle_executable_free(exe);
  axle_compile_cache_clear();
  EXPECT(trace_count("cuMemFree_v2") == trace_count("cuMemAlloc_v2"), "%d allocations, %d frees",
         trace_count("cuMemAlloc_v2"), trace_count("cuMemFree_v2"));
}

TEST(on_the_gpu_a_run_whose_results_are_all_kernel_outputs_copies_nothing_at_all) {
  use_fake(false);
  static const char text[] = "HloModule add\nENTRY e { x = f32[40] parameter(0)\n y = f32[40] parameter(1)\n"
                             "  ROOT a = f32[40] add(x, y) }\n";
  axle_error_t *err = NULL;
  axle_module_t *m = axle_module_parse(text, strlen(text), "add.hlo", &err);
  axle_executable_t *exe = m ? axle_compile(m, AXLE_BACKEND_GPU, &err) : NULL;
  EXPECT(exe != NULL, "%s", axle_error_message(err));
  axle_error_free(err), err = NULL;
  axle_module_free(m);
  if (!exe) return;
  float values[N] = {0};
  axle_device_buffer_t *x = upload(exe, values), *out = NULL;
  int copies = trace_count("cuMemcpy");
  axle_device_buffer_t *args[2] = {x, x};
  for (int run = 0; run < 2 && x; run++) {
    EXPECT(axle_run_on_device(exe, args, 2, &out, 1, &err), "%s", axle_error_message(err));
    axle_device_buffer_free(out), out = NULL;
  }
  EXPECT(trace_count("cuMemcpy") == copies, "%d copies in two runs", trace_count("cuMemcpy") - copies);
  axle_error_free(err);
  axle_device_buffer_free(x);
  axle_executable_free(exe);
}

TEST(on_the_simulated_gpu_a_loop_on_device_buffers_gives_the_right_values) {
  use_fake(true);
  axle_executable_t *exe = compile_step(AXLE_BACKEND_GPU);
  if (exe) step_loop_check(exe, "gpu");
  axle_executable_free(exe);
  axle_compile_cache_clear();
  EXPECT(trace_count("cuMemFree_v2") == trace_count("cuMemAlloc_v2"), "%d allocations, %d frees",
         trace_count("cuMemAlloc_v2"), trace_count("cuMemFree_v2"));
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  snprintf(trace_path, sizeof trace_path, "/tmp/axle-api-device-trace-%d.txt", (int)getpid());
  RUN(on_the_cpu_backend_and_the_interpreter_a_loop_on_device_buffers_gives_the_host_values);
  RUN(a_device_buffer_outlives_the_executable_handle_it_was_made_with);
  RUN(tuples_wrong_shapes_other_backends_and_short_result_arrays_are_refused_with_a_reason);
  RUN(on_the_gpu_a_run_on_device_buffers_copies_nothing_and_frees_what_it_allocates);
  RUN(on_the_gpu_a_run_whose_results_are_all_kernel_outputs_copies_nothing_at_all);
  RUN(on_the_simulated_gpu_a_loop_on_device_buffers_gives_the_right_values);
  unlink(trace_path);
  unsetenv("FAKE_CUDA_TRACE");
  return test_summary();
}
