/* The CUDA driver layer against a fake libcuda.so.1 (tests/fake_cuda), so
 * that every error path runs on machines without a GPU: no driver, no
 * device, a module that fails to load (with the JIT's log in the message),
 * device memory that is too small (with the bytes needed), a failed launch. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "runtime/cuda_driver.h"
#include "tool_files.h"
#include "../test.h"

static char fake_driver[4096];

static void use_fake(void) {
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_DEVICES");
  unsetenv("FAKE_CUDA_FREE_BYTES");
}

static bool open_device(GpuDevice *gpu, Status *st) {
  status_clear(st);
  return gpu_device_open(gpu, st);
}

TEST(missing_driver_says_no_cuda_driver) {
  use_fake();
  setenv("AXLE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  GpuDevice gpu;
  Status st;
  EXPECT(!open_device(&gpu, &st), "opened a driver that does not exist");
  EXPECT(strstr(st.message, "no CUDA driver") != NULL, "message: %s", st.message);
  EXPECT(status_exit_code(&st) == 2, "exit code %d", status_exit_code(&st));
}

TEST(driver_without_devices_says_no_cuda_device) {
  use_fake();
  setenv("FAKE_CUDA_DEVICES", "0", 1);
  GpuDevice gpu;
  Status st;
  EXPECT(!open_device(&gpu, &st), "opened a device that does not exist");
  EXPECT(strstr(st.message, "no CUDA device") != NULL, "message: %s", st.message);
}

TEST(device_opens_and_reports_its_compute_capability) {
  use_fake();
  GpuDevice gpu;
  Status st;
  bool ok = open_device(&gpu, &st);
  EXPECT(ok, "%s", st.message);
  if (!ok) return;
  EXPECT(gpu.compute_major == 9 && gpu.compute_minor == 0, "sm_%d%d", gpu.compute_major, gpu.compute_minor);
  EXPECT(strcmp(gpu.name, "Fake GPU (tests)") == 0, "name %s", gpu.name);
  gpu_device_close(&gpu);
}

TEST(failed_init_names_the_call_and_the_error) {
  use_fake();
  setenv("FAKE_CUDA_FAIL", "cuInit", 1);
  GpuDevice gpu;
  Status st;
  EXPECT(!open_device(&gpu, &st), "cuInit failure ignored");
  EXPECT(strstr(st.message, "cuInit failed") && strstr(st.message, "CUDA_ERROR_NOT_INITIALIZED"),
         "message: %s", st.message);
}

TEST(module_load_failure_shows_the_jit_error_log) {
  use_fake();
  GpuDevice gpu;
  Status st;
  EXPECT(open_device(&gpu, &st), "%s", st.message);
  if (!gpu.driver.library) return;
  setenv("FAKE_CUDA_FAIL", "cuModuleLoadDataEx", 1);
  CUmodule module;
  status_clear(&st);
  EXPECT(!gpu_module_load(&gpu, ".version 8.0\n.target sm_90a\n", "fusion.add_multiply", &module, &st),
         "a failing load succeeded");
  EXPECT(strstr(st.message, "fusion.add_multiply") && strstr(st.message, "CUDA_ERROR_INVALID_PTX"),
         "message: %s", st.message);
  EXPECT(strstr(st.message, "JIT error log") && strstr(st.message, "line 7; error"), "message: %s", st.message);
  gpu_device_close(&gpu);
}

TEST(allocation_beyond_free_memory_says_how_much_was_needed) {
  use_fake();
  setenv("FAKE_CUDA_FREE_BYTES", "1000", 1);
  GpuDevice gpu;
  Status st;
  EXPECT(open_device(&gpu, &st), "%s", st.message);
  if (!gpu.driver.library) return;
  CUdeviceptr p = 0;
  status_clear(&st);
  EXPECT(!gpu_alloc(&gpu, 300000000000ull, "the temporary block", &p, &st), "allocated 300 GB");
  EXPECT(strstr(st.message, "the temporary block needs 300000000000 bytes of device memory; 1000 of"),
         "message: %s", st.message);
  EXPECT(st.code == STATUS_OUT_OF_MEMORY, "code %d", st.code);
  gpu_device_close(&gpu);
}

TEST(driver_out_of_memory_is_reported_with_the_size) {
  use_fake();
  GpuDevice gpu;
  Status st;
  EXPECT(open_device(&gpu, &st), "%s", st.message);
  if (!gpu.driver.library) return;
  setenv("FAKE_CUDA_FAIL", "cuMemAlloc_v2", 1);
  CUdeviceptr p = 0;
  status_clear(&st);
  EXPECT(!gpu_alloc(&gpu, 4096, "parameter 0", &p, &st), "allocation failure ignored");
  EXPECT(strstr(st.message, "parameter 0 needs 4096 bytes"), "message: %s", st.message);
  gpu_device_close(&gpu);
}

TEST(launch_failure_names_the_kernel_and_its_grid) {
  use_fake();
  GpuDevice gpu;
  Status st;
  EXPECT(open_device(&gpu, &st), "%s", st.message);
  if (!gpu.driver.library) return;
  setenv("FAKE_CUDA_FAIL", "cuLaunchKernel", 1);
  CUfunction f = NULL;
  unsigned grid[3] = {256, 1, 1}, block[3] = {128, 1, 1};
  status_clear(&st);
  EXPECT(!gpu_launch(&gpu, f, "fusion.softmax", grid, block, 0, NULL, &st), "launch failure ignored");
  EXPECT(strstr(st.message, "fusion.softmax (grid 256x1x1, block 128x1x1)") &&
             strstr(st.message, "CUDA_ERROR_LAUNCH_FAILED"),
         "message: %s", st.message);
  gpu_device_close(&gpu);
}

TEST(copies_round_trip_through_device_memory) {
  use_fake();
  GpuDevice gpu;
  Status st;
  EXPECT(open_device(&gpu, &st), "%s", st.message);
  if (!gpu.driver.library) return;
  float in[64], out[64];
  for (int i = 0; i < 64; i++) in[i] = (float)i * 0.5f, out[i] = -1;
  CUdeviceptr p = 0;
  bool ok = gpu_alloc(&gpu, sizeof in, "a test buffer", &p, &st) &&
            gpu_copy_to_device(&gpu, p, in, sizeof in, &st) && gpu_copy_to_host(&gpu, out, p, sizeof out, &st);
  EXPECT(ok, "%s", st.message);
  EXPECT(memcmp(in, out, sizeof in) == 0, "copies changed the data");
  gpu_free(&gpu, p);
  gpu_device_close(&gpu);
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  RUN(missing_driver_says_no_cuda_driver);
  RUN(driver_without_devices_says_no_cuda_device);
  RUN(device_opens_and_reports_its_compute_capability);
  RUN(failed_init_names_the_call_and_the_error);
  RUN(module_load_failure_shows_the_jit_error_log);
  RUN(allocation_beyond_free_memory_says_how_much_was_needed);
  RUN(driver_out_of_memory_is_reported_with_the_size);
  RUN(launch_failure_names_the_kernel_and_its_grid);
  RUN(copies_round_trip_through_device_memory);
  return test_summary();
}
