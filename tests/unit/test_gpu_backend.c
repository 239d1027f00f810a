/* The GPU backend's compile and run against the fake libcuda
 * (tests/fake_cuda): the fake runs no kernel, but its "device memory" is
 * host memory and it records every call, so these tests check what can be
 * checked without a GPU: values that only travel (a parameter or a
 * constant returned as it is) come back exact; each run launches each
 * kernel once and uploads only its arguments (constants go up once, at
 * compile time); and every error path gives a message that says what
 * failed: no driver, no device, a module that does not load (with the JIT
 * log), out of device memory (with the bytes needed), pinned staging
 * refused, a failed launch (located at the instruction), a failed
 * synchronization. Results of real kernels are checked on a GPU by
 * tests/gpu/run.sh. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/executable.h"
#include "runtime/transfer_manager.h"
#include "tool_files.h"
#include "../test.h"

static char fake_driver[4096], trace_path[4096];

static void use_fake(void) {
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  unsetenv("FAKE_CUDA_EXECUTE");
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_DEVICES");
  unsetenv("FAKE_CUDA_FREE_BYTES");
  setenv("FAKE_CUDA_TRACE", trace_path, 1);
  unlink(trace_path);
}

/* p + c, and p and c themselves: one kernel, one parameter, a constant. */
static const char add_constant[] =
    "HloModule add_constant\n"
    "ENTRY e {\n"
    "  p = f32[4] parameter(0)\n"
    "  c = f32[4] constant({1, 2, 3, 4})\n"
    "  a = f32[4] add(p, c)\n"
    "  ROOT t = (f32[4], f32[4], f32[4]) tuple(a, p, c)\n"
    "}\n";

static const char with_dot[] =
    "HloModule with_dot\n"
    "ENTRY e {\n"
    "  x = pred[4,8] parameter(0)\n"
    "  y = pred[8,2] parameter(1)\n"
    "  ROOT d = pred[4,2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "}\n";

static Executable *compile_text(const char *text, Status *st) {
  status_clear(st);
  Module *m = parse_module(text, strlen(text), "gpu_test.hlo", st);
  if (!m) return NULL;
  ExecutableOptions options;
  executable_options_default(&options, AXLE_BACKEND_GPU);
  Executable *exe = executable_compile(m, &options, st);
  module_free(m);
  return exe;
}

static const float argument_values[4] = {0.5f, -1.25f, 3.0f, 1e-3f};

static HostBuffer *run_once(Executable *exe, Status *st) {
  Shape s = {.type = TYPE_F32, .rank = 1, .dims = {4}, .minor_to_major = {0}};
  HostBuffer *arg = host_buffer_create(&s, argument_values, st);
  status_clear(st);
  HostBuffer *result = arg ? executable_run(exe, &arg, 1, st) : NULL;
  host_buffer_free(arg);
  return result;
}

TEST(a_parameter_and_a_constant_returned_as_they_are_come_back_exact) {
  use_fake();
  Status st;
  Executable *exe = compile_text(add_constant, &st);
  EXPECT(exe != NULL, "%s", st.message);
  if (!exe) return;
  HostBuffer *r = run_once(exe, &st);
  EXPECT(r != NULL, "%s", st.message);
  if (r) {
    static const float constant[4] = {1, 2, 3, 4};
    EXPECT(r->shape.tuple_count == 3, "%d leaves", r->shape.tuple_count);
    EXPECT(memcmp(r->elements[1]->data, argument_values, sizeof argument_values) == 0, "the parameter changed");
    EXPECT(memcmp(r->elements[2]->data, constant, sizeof constant) == 0, "the constant changed: %g %g %g %g",
           ((float *)r->elements[2]->data)[0], ((float *)r->elements[2]->data)[1],
           ((float *)r->elements[2]->data)[2], ((float *)r->elements[2]->data)[3]);
  }
  host_buffer_free(r);
  executable_free(exe);
}

TEST(each_run_launches_each_kernel_once_and_uploads_only_its_arguments) {
  use_fake();
  Status st;
  Executable *exe = compile_text(add_constant, &st);
  EXPECT(exe != NULL, "%s", st.message);
  if (!exe) return;
  int uploads_at_compile = trace_count("cuMemcpyHtoDAsync");
  EXPECT(uploads_at_compile >= 1, "the constant was not uploaded at compile time");
  EXPECT(trace_count("cuLaunchKernel") == 0, "compile launched a kernel");
  int allocations_at_compile = trace_count("cuMemAlloc_v2");
  for (int run = 1; run <= 2; run++) {
    HostBuffer *r = run_once(exe, &st);
    EXPECT(r != NULL, "run %d: %s", run, st.message);
    host_buffer_free(r);
    EXPECT(trace_count("cuLaunchKernel") == run, "run %d: %d launches", run, trace_count("cuLaunchKernel"));
    EXPECT(trace_count("cuMemcpyHtoDAsync") == uploads_at_compile + run, "run %d: %d uploads (%d at compile)", run,
           trace_count("cuMemcpyHtoDAsync"), uploads_at_compile);
    EXPECT(trace_count("cuMemAlloc_v2") == allocations_at_compile, "run %d allocated device memory", run);
    /* another executable's context may be current on this thread */
    EXPECT(trace_count("cuCtxSetCurrent") >= run, "run %d did not make its context current", run);
  }
  /* add(p, c): p, c and the result, each a device pointer. */
  EXPECT(trace_count("cuLaunchKernel grid=1x1x1 block=") == 2, "the launch of a 4-element add: grid is not 1");
  FILE *f = fopen(trace_path, "r");
  char line[256];
  bool three = false;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "cuLaunchKernel", 14) == 0) three = strstr(line, "params=3") != NULL;
  if (f) fclose(f);
  EXPECT(three, "the add's launch did not pass three device pointers");
  executable_free(exe);
  EXPECT(trace_count("cuMemFree_v2") == trace_count("cuMemAlloc_v2"), "%d allocations, %d frees",
         trace_count("cuMemAlloc_v2"), trace_count("cuMemFree_v2"));
  EXPECT(trace_count("cuMemFreeHost") == trace_count("cuMemAllocHost"), "pinned staging not freed");
}

TEST(no_driver_and_no_device_are_refused_at_compile_with_exit_code_2) {
  use_fake();
  setenv("AXLE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  Status st;
  Executable *exe = compile_text(add_constant, &st);
  EXPECT(!exe && strstr(st.message, "no CUDA driver") && status_exit_code(&st) == 2, "%s", st.message);
  executable_free(exe);
  use_fake();
  setenv("FAKE_CUDA_DEVICES", "0", 1);
  exe = compile_text(add_constant, &st);
  EXPECT(!exe && strstr(st.message, "no CUDA device") && status_exit_code(&st) == 2, "%s", st.message);
  executable_free(exe);
}

TEST(a_module_the_jit_rejects_fails_at_compile_with_the_jit_log) {
  use_fake();
  setenv("FAKE_CUDA_FAIL", "cuModuleLoadDataEx", 1);
  Status st;
  Executable *exe = compile_text(add_constant, &st);
  EXPECT(!exe && strstr(st.message, "JIT error log") && strstr(st.message, "CUDA_ERROR_INVALID_PTX"), "%s",
         st.message);
  executable_free(exe);
}

TEST(too_little_device_memory_says_how_many_bytes_were_needed) {
  use_fake();
  setenv("FAKE_CUDA_FREE_BYTES", "8", 1);
  Status st;
  Executable *exe = compile_text(add_constant, &st);
  EXPECT(!exe && st.code == STATUS_OUT_OF_MEMORY && strstr(st.message, "needs") && strstr(st.message, "bytes") &&
             strstr(st.message, "8 of"),
         "%s", st.message);
  executable_free(exe);
  use_fake();
  setenv("FAKE_CUDA_FAIL", "cuMemAlloc_v2", 1);
  exe = compile_text(add_constant, &st);
  EXPECT(!exe && st.code == STATUS_OUT_OF_MEMORY && strstr(st.message, "needs") && strstr(st.message, "refused"),
         "%s", st.message);
  executable_free(exe);
  use_fake();
  setenv("FAKE_CUDA_FAIL", "cuMemAllocHost_v2", 1);
  exe = compile_text(add_constant, &st);
  EXPECT(!exe && st.code == STATUS_OUT_OF_MEMORY && strstr(st.message, "pinning"), "%s", st.message);
  executable_free(exe);
}

TEST(a_failed_launch_is_located_at_the_instruction_and_names_the_kernel) {
  use_fake();
  Status st;
  Executable *exe = compile_text(add_constant, &st);
  EXPECT(exe != NULL, "%s", st.message);
  if (!exe) return;
  setenv("FAKE_CUDA_FAIL", "cuLaunchKernel", 1);
  HostBuffer *r = run_once(exe, &st);
  EXPECT(!r && status_exit_code(&st) == 1, "a failed launch gave a result (exit %d)", status_exit_code(&st));
  EXPECT(strstr(st.message, "cuLaunchKernel failed") && strstr(st.message, "unspecified launch failure") &&
             strstr(st.message, "add"),
         "%s", st.message);
  EXPECT(st.file && strcmp(st.file, "gpu_test.hlo") == 0 && st.loc.line == 5, "located at %s:%d",
         st.file ? st.file : "(none)", st.loc.line);
  host_buffer_free(r);
  /* A failure at the synchronization (how a kernel's fault surfaces). */
  setenv("FAKE_CUDA_FAIL", "cuStreamSynchronize", 1);
  r = run_once(exe, &st);
  EXPECT(!r && strstr(st.message, "waiting for the device") && strstr(st.message, "CUDA_ERROR_LAUNCH_FAILED"), "%s",
         st.message);
  host_buffer_free(r);
  /* The executable stays usable once the driver recovers. */
  unsetenv("FAKE_CUDA_FAIL");
  r = run_once(exe, &st);
  EXPECT(r != NULL, "the run after a failure: %s", st.message);
  host_buffer_free(r);
  executable_free(exe);
}

/* sm_90a's GEMM (gemm.wgmma) needs two driver calls no other kernel does:
 * cuFuncSetAttribute for its 129 KB of dynamic shared memory, at compile,
 * and cuTensorMapEncodeTiled for its operands, at each launch. Each failing
 * is an error that says what was being done, located at the dot. */
static const char bf16_dot[] =
    "HloModule bf16_dot\n"
    "ENTRY e {\n"
    "  x = bf16[4,8] parameter(0)\n"
    "  y = bf16[2,8] parameter(1)\n"
    "  ROOT d = f32[4,2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
    "}\n";

TEST(the_hopper_gemm_says_which_driver_call_failed) {
  use_fake();
  Status st;
  setenv("FAKE_CUDA_FAIL", "cuFuncSetAttribute", 1);
  Executable *exe = compile_text(bf16_dot, &st);
  EXPECT(!exe && strstr(st.message, "cuFuncSetAttribute failed") && strstr(st.message, "dynamic shared memory") &&
             st.loc.line == 5,
         "line %d: %s", st.loc.line, st.message);
  executable_free(exe);
  unsetenv("FAKE_CUDA_FAIL");
  exe = compile_text(bf16_dot, &st);
  EXPECT(exe != NULL, "%s", st.message);
  if (!exe) return;
  Shape sx = {.type = TYPE_BF16, .rank = 2, .dims = {4, 8}, .minor_to_major = {1, 0}};
  Shape sy = {.type = TYPE_BF16, .rank = 2, .dims = {2, 8}, .minor_to_major = {1, 0}};
  uint16_t ones[32];
  for (int i = 0; i < 32; i++) ones[i] = 0x3f80;  /* 1.0 */
  HostBuffer *args[2] = {host_buffer_create(&sx, ones, &st), host_buffer_create(&sy, ones, &st)};
  setenv("FAKE_CUDA_FAIL", "cuTensorMapEncodeTiled", 1);
  status_clear(&st);
  HostBuffer *r = executable_run(exe, args, 2, &st);
  EXPECT(!r && status_exit_code(&st) == 1 && strstr(st.message, "cuTensorMapEncodeTiled failed") &&
             strstr(st.message, "tensor memory accelerator") && strstr(st.message, "k0_d_gemm"),
         "%s", st.message);
  EXPECT(st.file && strcmp(st.file, "gpu_test.hlo") == 0 && st.loc.line == 5, "located at %s:%d",
         st.file ? st.file : "(none)", st.loc.line);
  host_buffer_free(r);
  unsetenv("FAKE_CUDA_FAIL");
  /* and on the simulator the product is right: 8 ones summed */
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  status_clear(&st);
  r = executable_run(exe, args, 2, &st);
  unsetenv("FAKE_CUDA_EXECUTE");
  EXPECT(r != NULL, "%s", st.message);
  for (int i = 0; r && i < 8; i++) EXPECT(((float *)r->data)[i] == 8.0f, "element %d is %g", i, ((float *)r->data)[i]);
  host_buffer_free(r);
  for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
  executable_free(exe);
}

TEST(an_op_without_a_gpu_kernel_is_a_located_refusal_at_compile) {
  use_fake();
  Status st;
  Executable *exe = compile_text(with_dot, &st);
  EXPECT(!exe && st.code == STATUS_UNSUPPORTED && strstr(st.message, "GPU backend cannot compile") &&
             strstr(st.message, "dot") && st.loc.line == 5,
         "line %d: %s", st.loc.line, st.message);
  EXPECT(trace_count("cuModuleLoadDataEx") == 0, "a refused module was loaded");
  executable_free(exe);
}

/* rng-get-and-update-state has no kernel form; the GPU's supports hook
 * refuses it (and rng) with its own reason, before any PTX: the values
 * come from a module-wide generator it does not model, not from a kernel
 * the lowering lacks. */
TEST(a_module_wide_generator_is_refused_with_the_gpu_reason) {
  use_fake();
  static const char text[] = "HloModule rng_state\nENTRY main {\n  ROOT s = u64[2] rng-get-and-update-state(), delta=4\n}\n";
  Status st;
  Executable *exe = compile_text(text, &st);
  EXPECT(!exe && st.code == STATUS_UNSUPPORTED && st.loc.line == 3 &&
             strstr(st.message, "GPU backend cannot compile s (rng-get-and-update-state) yet: rng and "
                                "rng-get-and-update-state draw from a module-wide generator"),
         "line %d: %s", st.loc.line, st.message);
  executable_free(exe);
}

/* softmax over 8 rows of 10 fuses into one row kernel: one launch, a
 * block of one warp per row. */
TEST(a_softmax_is_one_launch_of_a_block_per_row) {
  use_fake();
  static const char text[] =
      "HloModule softmax\n"
      "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b) }\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "ENTRY e {\n  x = f32[8,10] parameter(0)\n  low = f32[] constant(-inf)\n"
      "  m = f32[8] reduce(x, low), dimensions={1}, to_apply=max\n"
      "  mb = f32[8,10] broadcast(m), dimensions={0}\n  d = f32[8,10] subtract(x, mb)\n"
      "  e = f32[8,10] exponential(d)\n  zero = f32[] constant(0)\n"
      "  s = f32[8] reduce(e, zero), dimensions={1}, to_apply=add\n"
      "  sb = f32[8,10] broadcast(s), dimensions={0}\n  ROOT y = f32[8,10] divide(e, sb)\n}\n";
  Status st;
  Executable *exe = compile_text(text, &st);
  EXPECT(exe != NULL, "%s", st.message);
  if (!exe) return;
  Shape s = {.type = TYPE_F32, .rank = 2, .dims = {8, 10}, .minor_to_major = {1, 0}};
  HostBuffer *arg = host_buffer_create(&s, NULL, &st);
  HostBuffer *r = arg ? executable_run(exe, &arg, 1, &st) : NULL;
  EXPECT(r != NULL, "%s", st.message);
  EXPECT(trace_count("cuLaunchKernel") == 1, "%d launches", trace_count("cuLaunchKernel"));
  EXPECT(trace_count("cuLaunchKernel grid=8x1x1 block=32x1x1 params=2") == 1, "not one warp-sized block per row");
  host_buffer_free(r);
  host_buffer_free(arg);
  executable_free(exe);
}

/* With FAKE_CUDA_EXECUTE=1 the fake runs every launch on the host SIMT
 * simulator: the backend's placement, launches and transfers then give
 * real results, checked here against the evaluator. */
TEST(run_on_the_simulated_device_the_results_match_the_evaluator) {
  use_fake();
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  Status st;
  Executable *exe = compile_text(add_constant, &st);
  EXPECT(exe != NULL, "%s", st.message);
  HostBuffer *r = exe ? run_once(exe, &st) : NULL;
  EXPECT(r != NULL, "%s", st.message);
  if (r) {
    const float *sum = r->elements[0]->data;
    for (int i = 0; i < 4; i++)
      EXPECT(sum[i] == argument_values[i] + (float)(i + 1), "sum[%d] = %g, wanted %g", i, sum[i],
             argument_values[i] + (float)(i + 1));
    Shape s = {.type = TYPE_F32, .rank = 1, .dims = {4}, .minor_to_major = {0}};
    HostBuffer *arg = host_buffer_create(&s, argument_values, &st);
    status_clear(&st);
    EXPECT(arg && executable_check(exe, &arg, 1, r, &st), "%s", st.message);
    host_buffer_free(arg);
  }
  host_buffer_free(r);
  executable_free(exe);
  unsetenv("FAKE_CUDA_EXECUTE");
}

/* f32[2,3]{0,1}: column-major, so row-major 0 1 2 / 3 4 5 sits on the
 * device as 0 3 1 4 2 5. */
TEST(a_column_major_layout_reorders_the_bytes_both_ways) {
  Shape s = {.type = TYPE_F32, .rank = 2, .dims = {2, 3}, .minor_to_major = {0, 1}};
  const float row_major[6] = {0, 1, 2, 3, 4, 5}, want[6] = {0, 3, 1, 4, 2, 5};
  float physical[6], back[6];
  shape_relayout_copy(&s, row_major, physical, true);
  EXPECT(memcmp(physical, want, sizeof want) == 0, "physical %g %g %g %g %g %g", physical[0], physical[1],
         physical[2], physical[3], physical[4], physical[5]);
  shape_relayout_copy(&s, physical, back, false);
  EXPECT(memcmp(back, row_major, sizeof back) == 0, "the round trip changed the values");
}

TEST(a_parameter_in_a_column_major_layout_comes_back_in_row_major_order) {
  use_fake();
  static const char text[] = "HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}\n"
                             "ENTRY e {\n  ROOT p = f32[2,3]{0,1} parameter(0)\n}\n";
  Status st;
  Executable *exe = compile_text(text, &st);
  EXPECT(exe != NULL, "%s", st.message);
  if (!exe) return;
  Shape s = {.type = TYPE_F32, .rank = 2, .dims = {2, 3}, .minor_to_major = {1, 0}};
  const float values[6] = {0.5f, 1, 2, 3, 4, -5};
  HostBuffer *arg = host_buffer_create(&s, values, &st);
  HostBuffer *r = arg ? executable_run(exe, &arg, 1, &st) : NULL;
  EXPECT(r && memcmp(r->data, values, sizeof values) == 0, "%s", r ? "the values moved" : st.message);
  host_buffer_free(r);
  host_buffer_free(arg);
  executable_free(exe);
}

/* axle_compile_options_t.gpu_target: the PTX is the named target's, loaded
 * on a device whose capability runs it; an unknown name, a device that
 * cannot run it, or a target for another backend fail the compile, saying so. */
static axle_executable_t *compile_for_target(axle_backend_t backend, const char *target, axle_error_t **err) {
  axle_module_t *m = axle_module_parse(add_constant, strlen(add_constant), "gpu_test.hlo", err);
  axle_compile_options_t o = {.gpu_target = target};
  axle_executable_t *exe = m ? axle_compile_with(m, backend, &o, err) : NULL;
  axle_module_free(m);
  return exe;
}

TEST(the_c_api_compiles_for_a_named_gpu_target_the_device_can_run) {
  use_fake();
  char saved[64];
  snprintf(saved, sizeof saved, "/tmp/axle-gpu-saved-%d", (int)getpid());
  mkdir(saved, 0777);
  setenv("FAKE_CUDA_SAVE_PTX", saved, 1);
  setenv("FAKE_CUDA_CAPABILITY", "9.0", 1);
  axle_error_t *err = NULL;
  axle_executable_t *exe = compile_for_target(AXLE_BACKEND_GPU, "sm_86", &err);
  EXPECT(exe, "%s", axle_error_message(err));
  char path[128];
  snprintf(path, sizeof path, "%s/0.ptx", saved);
  FILE *f = fopen(path, "r");
  char text[4096] = {0};
  if (f) fread(text, 1, sizeof text - 1, f), fclose(f);
  EXPECT(strstr(text, "\n.target sm_86\n"), "the loaded module is not sm_86's: %.200s", text);
  unlink(path);
  rmdir(saved);
  unsetenv("FAKE_CUDA_SAVE_PTX");
  axle_executable_free(exe);
  axle_error_free(err);
  err = NULL;
  setenv("FAKE_CUDA_CAPABILITY", "8.6", 1);
  exe = compile_for_target(AXLE_BACKEND_GPU, "sm_90a", &err);
  EXPECT(!exe && strstr(axle_error_message(err), "PTX for --target sm_90a does not run on device 0"), "%s",
         exe ? "compiled" : axle_error_message(err));
  axle_executable_free(exe);
  axle_error_free(err);
  err = NULL;
  exe = compile_for_target(AXLE_BACKEND_GPU, "sm_12", &err);
  EXPECT(!exe && strstr(axle_error_message(err), "unknown GPU target 'sm_12'"), "%s",
         exe ? "compiled" : axle_error_message(err));
  axle_executable_free(exe);
  axle_error_free(err);
  err = NULL;
  exe = compile_for_target(AXLE_BACKEND_CPU, "sm_80", &err);
  EXPECT(!exe && strstr(axle_error_message(err), "gpu_target is for AXLE_BACKEND_GPU only"), "%s",
         exe ? "compiled" : axle_error_message(err));
  axle_executable_free(exe);
  axle_error_free(err);
  unsetenv("FAKE_CUDA_CAPABILITY");
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  snprintf(trace_path, sizeof trace_path, "/tmp/axle-gpu-trace-%d.txt", (int)getpid());
  RUN(a_parameter_and_a_constant_returned_as_they_are_come_back_exact);
  RUN(each_run_launches_each_kernel_once_and_uploads_only_its_arguments);
  RUN(no_driver_and_no_device_are_refused_at_compile_with_exit_code_2);
  RUN(a_module_the_jit_rejects_fails_at_compile_with_the_jit_log);
  RUN(too_little_device_memory_says_how_many_bytes_were_needed);
  RUN(a_failed_launch_is_located_at_the_instruction_and_names_the_kernel);
  RUN(an_op_without_a_gpu_kernel_is_a_located_refusal_at_compile);
  RUN(a_module_wide_generator_is_refused_with_the_gpu_reason);
  RUN(the_hopper_gemm_says_which_driver_call_failed);
  RUN(a_softmax_is_one_launch_of_a_block_per_row);
  RUN(run_on_the_simulated_device_the_results_match_the_evaluator);
  RUN(a_column_major_layout_reorders_the_bytes_both_ways);
  RUN(a_parameter_in_a_column_major_layout_comes_back_in_row_major_order);
  RUN(the_c_api_compiles_for_a_named_gpu_target_the_device_can_run);
  unlink(trace_path);
  unsetenv("FAKE_CUDA_TRACE");
  return test_summary();
}
