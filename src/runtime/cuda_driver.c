/* The CUDA driver, found at run time (see cuda_driver.h for why), and the
 * device layer over it: every driver call goes through check_cuda, which
 * turns a failure into a Status naming the call, what it was for and the
 * driver's error name. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda_driver.h"

bool cuda_driver_open(CudaDriver *driver, Status *st) {
  memset(driver, 0, sizeof *driver);
  const char *path = getenv("AXLE_CUDA_DRIVER");
  if (!path || !*path) path = "libcuda.so.1";
  driver->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!driver->library) {
    const char *why = dlerror();
    return status_error(st, STATUS_UNSUPPORTED, "no CUDA driver (%s)", why ? why : path);
  }
  /* POSIX dlsym returns void *; going through memcpy keeps the conversion
   * to a function pointer well defined in ISO C. */
#define AXLE_CUDA_RESOLVE(field, symbol, args)                                                   \
  {                                                                                               \
    void *p = dlsym(driver->library, symbol);                                                     \
    if (!p) {                                                                                     \
      cuda_driver_close(driver);                                                                  \
      return status_error(st, STATUS_UNSUPPORTED, "no CUDA driver (%s lacks %s)", path, symbol); \
    }                                                                                             \
    memcpy(&driver->field, &p, sizeof p);                                                         \
  }
  AXLE_CUDA_ENTRIES(AXLE_CUDA_RESOLVE)
#undef AXLE_CUDA_RESOLVE
#define AXLE_CUDA_RESOLVE_OPTIONAL(field, symbol, args)  \
  {                                                      \
    void *p = dlsym(driver->library, symbol);            \
    if (p) memcpy(&driver->field, &p, sizeof p);         \
  }
  AXLE_CUDA_OPTIONAL_ENTRIES(AXLE_CUDA_RESOLVE_OPTIONAL)
#undef AXLE_CUDA_RESOLVE_OPTIONAL
  return true;
}

void cuda_driver_close(CudaDriver *driver) {
  if (driver->library) dlclose(driver->library);
  memset(driver, 0, sizeof *driver);
}

const char *cuda_error_name(const CudaDriver *driver, CUresult r) {
  const char *name = NULL;
  if (driver->get_error_name && driver->get_error_name(r, &name) == CUDA_SUCCESS && name) return name;
  return "an unknown CUDA error";
}

/* The driver's sentence for r ("out of memory"), or "" without one. */
static const char *cuda_error_text(const CudaDriver *driver, CUresult r) {
  const char *text = NULL;
  if (driver->get_error_string && driver->get_error_string(r, &text) == CUDA_SUCCESS && text) return text;
  return "";
}

/* Fills st when r is an error:
 * "CALL failed while WHAT: CUDA_ERROR_... (N): the driver's sentence". */
static bool check_cuda(const GpuDevice *gpu, CUresult r, const char *call, const char *what, Status *st) {
  if (r == CUDA_SUCCESS) return true;
  const char *text = cuda_error_text(&gpu->driver, r);
  return status_error(st, r == CUDA_ERROR_OUT_OF_MEMORY ? STATUS_OUT_OF_MEMORY : STATUS_RUNTIME_ERROR,
                      "%s failed while %s: %s (%d)%s%s", call, what, cuda_error_name(&gpu->driver, r), r,
                      *text ? ": " : "", text);
}

bool gpu_device_open(GpuDevice *gpu, Status *st) { return gpu_device_open_ordinal(gpu, 0, st); }

bool gpu_device_open_ordinal(GpuDevice *gpu, int ordinal, Status *st) {
  memset(gpu, 0, sizeof *gpu);
  if (!cuda_driver_open(&gpu->driver, st)) return false;
  CudaDriver *d = &gpu->driver;
  int count = 0;
  CUresult r = d->init(0);
  if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && d->device_get_count(&count) == CUDA_SUCCESS && count == 0)) {
    cuda_driver_close(d);
    return status_error(st, STATUS_UNSUPPORTED, "no CUDA device (the driver is present but sees no GPU)");
  }
  if (r == CUDA_SUCCESS && ordinal > 0 && d->device_get_count(&count) == CUDA_SUCCESS && count <= ordinal) {
    cuda_driver_close(d);
    return status_error(st, STATUS_UNSUPPORTED, "no CUDA device %d (the driver sees %d GPU%s)", ordinal, count,
                        count == 1 ? "" : "s");
  }
  char opening[64];
  snprintf(opening, sizeof opening, "opening device %d", ordinal);
  if (!check_cuda(gpu, r, "cuInit", "starting the driver", st) ||
      !check_cuda(gpu, d->device_get(&gpu->device, ordinal), "cuDeviceGet", opening, st) ||
      !check_cuda(gpu, d->device_get_attribute(&gpu->compute_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, gpu->device),
                  "cuDeviceGetAttribute", "reading the compute capability", st) ||
      !check_cuda(gpu, d->device_get_attribute(&gpu->compute_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, gpu->device),
                  "cuDeviceGetAttribute", "reading the compute capability", st) ||
      !check_cuda(gpu, d->device_get_attribute(&gpu->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, gpu->device),
                  "cuDeviceGetAttribute", "counting multiprocessors", st) ||
      !check_cuda(gpu, d->device_get_name(gpu->name, (int)sizeof gpu->name - 1, gpu->device),
                  "cuDeviceGetName", "naming the device", st) ||
      !check_cuda(gpu, d->primary_ctx_retain(&gpu->context, gpu->device), "cuDevicePrimaryCtxRetain",
                  "retaining the device's primary context", st) ||
      !gpu_context_enter(gpu, st)) {
    gpu_device_close(gpu);
    return false;
  }
  if (!check_cuda(gpu, d->stream_create(&gpu->stream, CU_STREAM_DEFAULT), "cuStreamCreate", "creating a stream", st)) {
    gpu_device_close(gpu);
    return false;
  }
  return true;
}

void gpu_device_close(GpuDevice *gpu) {
  CudaDriver *d = &gpu->driver;
  if (d->library) {
    if (gpu->stream) d->stream_destroy(gpu->stream);
    if (gpu->context) d->primary_ctx_release(gpu->device);
  }
  cuda_driver_close(d);
  memset(gpu, 0, sizeof *gpu);
}

/* The JIT writes its logs into buffers we hand it; on failure the error log
 * (ptxas's own messages, with line numbers into the PTX) is what a user
 * needs, so it goes into the message. */
bool gpu_module_load(GpuDevice *gpu, const char *ptx, const char *what, CUmodule *module, Status *st) {
  char error_log[4096] = "", info_log[4096] = "";
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                   CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {error_log, (void *)(uintptr_t)sizeof error_log, info_log,
                    (void *)(uintptr_t)sizeof info_log};
  CUresult r = gpu->driver.module_load_data_ex(module, ptx, 4, options, values);
  if (r == CUDA_SUCCESS) return true;
  error_log[sizeof error_log - 1] = 0;
  return status_error(st, STATUS_RUNTIME_ERROR, "loading the PTX of %s failed: %s (%d)%s%s", what,
                      cuda_error_name(&gpu->driver, r), r, error_log[0] ? "\nJIT error log:\n" : "",
                      error_log);
}

bool gpu_function_get(GpuDevice *gpu, CUmodule module, const char *name, CUfunction *f, Status *st) {
  char what[256];
  snprintf(what, sizeof what, "looking up kernel %s", name);
  return check_cuda(gpu, gpu->driver.module_get_function(f, module, name), "cuModuleGetFunction", what, st);
}

bool gpu_check_free(GpuDevice *gpu, size_t bytes, const char *what, Status *st) {
  size_t free_bytes = 0, total_bytes = 0;
  if (!check_cuda(gpu, gpu->driver.mem_get_info(&free_bytes, &total_bytes), "cuMemGetInfo",
                  "reading free device memory", st))
    return false;
  if (bytes > free_bytes)
    return status_error(st, STATUS_OUT_OF_MEMORY, "%s needs %zu bytes of device memory; %zu of %zu bytes are free",
                        what, bytes, free_bytes, total_bytes);
  return true;
}

bool gpu_alloc(GpuDevice *gpu, size_t bytes, const char *what, CUdeviceptr *ptr, Status *st) {
  if (!gpu_check_free(gpu, bytes, what, st)) return false;
  CUresult r = gpu->driver.mem_alloc(ptr, bytes ? bytes : 1);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return status_error(st, STATUS_OUT_OF_MEMORY, "%s needs %zu bytes of device memory; the driver refused",
                        what, bytes);
  char doing[256];
  snprintf(doing, sizeof doing, "allocating %zu bytes for %s", bytes, what);
  return check_cuda(gpu, r, "cuMemAlloc", doing, st);
}

void gpu_free(GpuDevice *gpu, CUdeviceptr ptr) {
  if (ptr) gpu->driver.mem_free(ptr);
}

bool gpu_alloc_pinned(GpuDevice *gpu, size_t bytes, void **ptr, Status *st) {
  char what[128];
  snprintf(what, sizeof what, "pinning %zu bytes of host memory to stage transfers", bytes);
  return check_cuda(gpu, gpu->driver.mem_alloc_host(ptr, bytes), "cuMemAllocHost", what, st);
}

bool gpu_copy_to_host_async(GpuDevice *gpu, void *dst, CUdeviceptr src, size_t bytes, Status *st) {
  return check_cuda(gpu, gpu->driver.memcpy_dtoh_async(dst, src, bytes, gpu->stream), "cuMemcpyDtoHAsync",
                    "copying a result to the host", st);
}

bool gpu_copy_to_device(GpuDevice *gpu, CUdeviceptr dst, const void *src, size_t bytes, Status *st) {
  return check_cuda(gpu, gpu->driver.memcpy_htod_async(dst, src, bytes, gpu->stream), "cuMemcpyHtoDAsync",
                    "copying to the device", st);
}

bool gpu_copy_to_host(GpuDevice *gpu, void *dst, CUdeviceptr src, size_t bytes, Status *st) {
  if (!check_cuda(gpu, gpu->driver.memcpy_dtoh_async(dst, src, bytes, gpu->stream), "cuMemcpyDtoHAsync",
                  "copying to the host", st))
    return false;
  return gpu_synchronize(gpu, st);
}

bool gpu_copy_on_device(GpuDevice *gpu, CUdeviceptr dst, CUdeviceptr src, size_t bytes, Status *st) {
  return check_cuda(gpu, gpu->driver.memcpy_dtod_async(dst, src, bytes, gpu->stream), "cuMemcpyDtoDAsync",
                    "copying on the device", st);
}

bool gpu_launch(GpuDevice *gpu, CUfunction f, const char *kernel_name, const unsigned grid[3],
                const unsigned block[3], unsigned shared_bytes, void **params, Status *st) {
  char what[256];
  snprintf(what, sizeof what, "launching kernel %s (grid %ux%ux%u, block %ux%ux%u)", kernel_name, grid[0],
           grid[1], grid[2], block[0], block[1], block[2]);
  return check_cuda(gpu,
                    gpu->driver.launch_kernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                              shared_bytes, gpu->stream, params, NULL),
                    "cuLaunchKernel", what, st);
}

bool gpu_synchronize(GpuDevice *gpu, Status *st) {
  return check_cuda(gpu, gpu->driver.stream_synchronize(gpu->stream), "cuStreamSynchronize",
                    "waiting for the device", st);
}

bool gpu_has_tensor_maps(const GpuDevice *gpu) {
  return gpu->driver.tensor_map_encode_tiled && gpu->driver.func_set_attribute;
}

bool gpu_function_allow_shared(GpuDevice *gpu, CUfunction f, const char *kernel_name, unsigned bytes, Status *st) {
  char what[256];
  snprintf(what, sizeof what, "letting kernel %s use %u bytes of dynamic shared memory", kernel_name, bytes);
  return check_cuda(gpu, gpu->driver.func_set_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes),
                    "cuFuncSetAttribute", what, st);
}

bool gpu_tensor_map_encode(GpuDevice *gpu, const GpuTensorMapShape *shape, CUdeviceptr address, CUtensorMap *map,
                           const char *kernel_name, Status *st) {
  char what[256];
  snprintf(what, sizeof what, "describing an operand of kernel %s at 0x%llx to the tensor memory accelerator",
           kernel_name, address);
  const unsigned element_strides[5] = {1, 1, 1, 1, 1};
  CUresult r = gpu->driver.tensor_map_encode_tiled(
      map, shape->data_type, (unsigned)shape->rank, (void *)(uintptr_t)address, shape->dims, shape->strides,
      shape->box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, shape->swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return check_cuda(gpu, r, "cuTensorMapEncodeTiled", what, st);
}

bool gpu_context_enter(GpuDevice *gpu, Status *st) {
  return check_cuda(gpu, gpu->driver.ctx_set_current(gpu->context), "cuCtxSetCurrent",
                    "making the device's context current", st);
}

/* ---- device time (CUDA events) ---- */

bool gpu_timer_create(GpuDevice *gpu, GpuTimer *t, Status *st) {
  *t = (GpuTimer){0};
  if (!check_cuda(gpu, gpu->driver.event_create(&t->start, CU_EVENT_DEFAULT), "cuEventCreate", "making a timing event", st))
    return false;
  if (check_cuda(gpu, gpu->driver.event_create(&t->end, CU_EVENT_DEFAULT), "cuEventCreate", "making a timing event", st)) return true;
  gpu_timer_destroy(gpu, t);
  return false;
}

bool gpu_timer_start(GpuDevice *gpu, GpuTimer *t, Status *st) {
  return check_cuda(gpu, gpu->driver.event_record(t->start, gpu->stream), "cuEventRecord", "starting a timing", st);
}

bool gpu_timer_stop(GpuDevice *gpu, GpuTimer *t, double *ms, Status *st) {
  float elapsed = 0;
  bool ok = check_cuda(gpu, gpu->driver.event_record(t->end, gpu->stream), "cuEventRecord", "ending a timing", st) &&
            check_cuda(gpu, gpu->driver.event_synchronize(t->end), "cuEventSynchronize", "waiting for a timing", st) &&
            check_cuda(gpu, gpu->driver.event_elapsed_time(&elapsed, t->start, t->end), "cuEventElapsedTime",
                       "reading a timing", st);
  *ms = elapsed;
  return ok;
}

void gpu_timer_destroy(GpuDevice *gpu, GpuTimer *t) {
  if (t->start) gpu->driver.event_destroy(t->start);
  if (t->end) gpu->driver.event_destroy(t->end);
  *t = (GpuTimer){0};
}
