/* The GPU backend's entry in the backend table.
 *
 * Today it opens the CUDA driver and the device, so that a machine without
 * them gets the message a user needs ("no CUDA driver", "no CUDA device");
 * PTX emission from the kernel IR is the GPU backend issue's work, and until
 * it lands a machine with a GPU is told so rather than given a silent
 * fallback. */
#include "runtime/backend.h"
#include "runtime/cuda_driver.h"
#include "runtime/executable.h"

static bool gpu_compile(Executable *exe, Status *st) {
  exe->program = NULL;
  GpuDevice gpu;
  if (!gpu_device_open(&gpu, st)) return false;
  char device[160];
  snprintf(device, sizeof device, "%s, sm_%d%d", gpu.name, gpu.compute_major, gpu.compute_minor);
  gpu_device_close(&gpu);
  return status_error(st, STATUS_UNSUPPORTED,
                      "found %s, but axle does not generate PTX yet; use --backend interp", device);
}

static HostBuffer *gpu_run(const Executable *exe, HostBuffer *const *args, int arg_count, Status *st) {
  (void)exe, (void)args, (void)arg_count;
  status_error(st, STATUS_UNSUPPORTED, "the GPU backend cannot run modules yet");
  return NULL;
}

static void gpu_free_program(void *program) { (void)program; }

const Backend backend_gpu = {
    .name = "gpu",
    .optimizes = true,
    .compile = gpu_compile,
    .run = gpu_run,
    .free_program = gpu_free_program,
};
