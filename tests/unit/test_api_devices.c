/* The C API over several devices in one process (docs/multi-device.md):
 * axle_compile_options_t.devices and axle_executable_run_devices, on the
 * CPU backend, the interpreter, and the GPU backend over 4 simulated GPUs
 * (the fake driver and the fake NCCL built beside this program). The expected values are exact sums of
 * small integers in f32, so any order of addition gives them; the
 * determinism test compares the bits of two runs of values whose sum
 * depends on the order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axle.h"
#include "../test.h"
#include "tool_files.h"

/* Each replica's x goes through an all-reduce over 4 replicas and an
 * all-gather, and replica-id marks which device answered. */
static const char four_replicas[] =
    "HloModule four, replica_count=4\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT c = f32[] add(a, b)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[3] parameter(0)\n"
    "  sum = f32[3] all-reduce(x), replica_groups={{0,1,2,3}}, to_apply=add\n"
    "  all = f32[12] all-gather(x), replica_groups=[1,4]<=[4], dimensions={0}\n"
    "  id = u32[] replica-id()\n"
    "  ROOT r = (f32[3], f32[12], u32[]) tuple(sum, all, id)\n"
    "}\n";

static axle_executable_t *compile_for(const char *text, axle_backend_t backend, int devices, axle_error_t **err) {
  axle_module_t *m = axle_module_parse(text, strlen(text), "devices.hlo", err);
  if (!m) return NULL;
  axle_compile_options_t o = {.threads = 1, .devices = devices};
  axle_executable_t *exe = axle_compile_with(m, backend, &o, err);
  axle_module_free(m);
  return exe;
}

/* Device d's x: d*3 + {0, 1, 2}, or values whose sum depends on its order. */
static void inputs_make(axle_buffer_t **args, bool order_matters) {
  int64_t dims[1] = {3};
  for (int d = 0; d < 4; d++) {
    float x[3];
    for (int k = 0; k < 3; k++) x[k] = order_matters ? (d % 2 ? 1e8f : 1.0f) * (float)(k + 1) / 3.0f : (float)(d * 3 + k);
    args[d] = axle_buffer_create(AXLE_F32, 1, dims, x, NULL);
  }
}

static void buffers_free(axle_buffer_t **b, int n) {
  for (int i = 0; i < n; i++) axle_buffer_free(b[i]);
}

static void check_four_replicas(axle_backend_t backend) {
  axle_error_t *err = NULL;
  axle_executable_t *exe = compile_for(four_replicas, backend, 4, &err);
  EXPECT(exe != NULL, "compile failed: %s", axle_error_message(err));
  if (!exe) return axle_error_free(err);
  axle_buffer_t *args[4], *results[4] = {0};
  inputs_make(args, false);
  bool ok = axle_executable_run_devices(exe, args, 1, results, 4, &err);
  EXPECT(ok, "run failed: %s", axle_error_message(err));
  for (int d = 0; ok && d < 4; d++) {
    const float *sum = axle_buffer_data(axle_buffer_tuple_element(results[d], 0));
    const float *all = axle_buffer_data(axle_buffer_tuple_element(results[d], 1));
    const uint32_t *id = axle_buffer_data(axle_buffer_tuple_element(results[d], 2));
    for (int k = 0; k < 3; k++)  /* sum over d of d*3 + k = 18 + 4k */
      EXPECT(sum[k] == 18.0f + 4.0f * (float)k, "device %d sum[%d] = %g, want %g", d, k, sum[k], 18.0 + 4.0 * k);
    for (int k = 0; k < 12; k++) EXPECT(all[k] == (float)k, "device %d all[%d] = %g, want %d", d, k, all[k], k);
    EXPECT(*id == (uint32_t)d, "device %d says replica %u", d, *id);
  }
  buffers_free(results, ok ? 4 : 0);
  buffers_free(args, 4);
  axle_executable_free(exe);
}

TEST(four_replicas_on_the_cpu_backend) { check_four_replicas(AXLE_BACKEND_CPU); }
TEST(four_replicas_on_the_interpreter) { check_four_replicas(AXLE_BACKEND_INTERP); }

TEST(runs_give_the_same_bits_whatever_the_timing) {
  axle_error_t *err = NULL;
  axle_executable_t *exe = compile_for(four_replicas, AXLE_BACKEND_CPU, 4, &err);
  EXPECT(exe != NULL, "compile failed: %s", axle_error_message(err));
  if (!exe) return axle_error_free(err);
  axle_buffer_t *args[4];
  inputs_make(args, true);
  float first[3] = {0};
  for (int run = 0; run < 20; run++) {
    axle_buffer_t *results[4] = {0};
    if (!axle_executable_run_devices(exe, args, 1, results, 4, &err)) {
      EXPECT(false, "run %d failed: %s", run, axle_error_message(err));
      break;
    }
    for (int d = 0; d < 4; d++) {
      const float *sum = axle_buffer_data(axle_buffer_tuple_element(results[d], 0));
      if (run == 0 && d == 0) memcpy(first, sum, sizeof first);
      EXPECT(memcmp(first, sum, sizeof first) == 0, "run %d device %d: %.9g differs from %.9g", run, d, sum[0],
             first[0]);
    }
    buffers_free(results, 4);
  }
  buffers_free(args, 4);
  axle_executable_free(exe);
}

TEST(a_multi_device_executable_refuses_a_plain_run) {
  axle_error_t *err = NULL;
  axle_executable_t *exe = compile_for(four_replicas, AXLE_BACKEND_CPU, 4, &err);
  EXPECT(exe != NULL, "compile failed: %s", axle_error_message(err));
  if (!exe) return axle_error_free(err);
  axle_buffer_t *args[4], *result = NULL, *results[2] = {0};
  inputs_make(args, false);
  EXPECT(!axle_executable_run(exe, args, 1, &result, &err), "a plain run of a 4-device executable succeeded");
  EXPECT(err && strstr(axle_error_message(err), "compiled for 4 devices"), "message: %s", axle_error_message(err));
  axle_error_free(err);
  err = NULL;
  EXPECT(!axle_executable_run_devices(exe, args, 1, results, 2, &err), "2 devices of 4 ran");
  EXPECT(err && strstr(axle_error_message(err), "runs on 4 devices, not 2"), "message: %s", axle_error_message(err));
  axle_error_free(err);
  buffers_free(args, 4);
  axle_executable_free(exe);
}

/* Device 2's input has the wrong shape: it fails before the all-reduce,
 * and the others, waiting there, must end too, naming device 2. */
TEST(a_failing_device_ends_the_run_without_a_hang) {
  axle_error_t *err = NULL;
  axle_executable_t *exe = compile_for(four_replicas, AXLE_BACKEND_CPU, 4, &err);
  EXPECT(exe != NULL, "compile failed: %s", axle_error_message(err));
  if (!exe) return axle_error_free(err);
  axle_buffer_t *args[4], *results[4] = {0};
  inputs_make(args, false);
  int64_t dims[1] = {5};
  axle_buffer_free(args[2]);
  args[2] = axle_buffer_create(AXLE_F32, 1, dims, NULL, NULL);
  EXPECT(!axle_executable_run_devices(exe, args, 1, results, 4, &err), "a run with a bad input succeeded");
  EXPECT(err && strstr(axle_error_message(err), "device 2: parameter 0"), "message: %s", axle_error_message(err));
  for (int d = 0; d < 4; d++) EXPECT(results[d] == NULL, "device %d left a result", d);
  axle_error_free(err);
  buffers_free(args, 4);
  axle_executable_free(exe);
}

/* The same module on 4 GPUs: device d on GPU d, the collectives through
 * NCCL (here the fake one, over the fake driver's simulated devices). */
static char fake_nccl[4096], fake_driver[4096];
TEST(four_replicas_on_four_gpus_through_nccl) {
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  setenv("AXLE_NCCL_LIBRARY", fake_nccl, 1);
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  setenv("FAKE_CUDA_DEVICES", "4", 1);
  check_four_replicas(AXLE_BACKEND_GPU);
}

TEST(devices_must_match_the_module) {
  axle_error_t *err = NULL;
  axle_executable_t *exe = compile_for(four_replicas, AXLE_BACKEND_CPU, 2, &err);
  EXPECT(exe == NULL, "a 4-replica module compiled for 2 devices");
  EXPECT(err && strstr(axle_error_message(err), "replica_count=4 x num_partitions=1 = 4 devices, not 2"), "message: %s",
         axle_error_message(err));
  axle_error_free(err);
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  snprintf(fake_nccl, sizeof fake_nccl, "%.*s/libnccl.so.2", (int)(strlen(fake_driver) - strlen("/libcuda.so.1")),
           fake_driver);
  RUN(four_replicas_on_the_cpu_backend);
  RUN(four_replicas_on_the_interpreter);
  RUN(four_replicas_on_four_gpus_through_nccl);
  RUN(runs_give_the_same_bits_whatever_the_timing);
  RUN(a_multi_device_executable_refuses_a_plain_run);
  RUN(a_failing_device_ends_the_run_without_a_hang);
  RUN(devices_must_match_the_module);
  return test_summary();
}
