/* The CUDA driver API, opened at run time.
 *
 * axle links against nothing from CUDA: this header declares the handful of
 * driver types and entry points the GPU backend uses, and cuda_driver.c
 * finds them with dlopen("libcuda.so.1") and dlsym. A machine without a
 * driver or a device builds and runs every other backend; the GPU backend
 * then says "no CUDA driver" or "no CUDA device".
 *
 * Above the raw table sits GpuDevice, the one context, stream and device
 * the runtime uses, with calls that turn every driver error into a Status
 * that says what was being done (loading which module, launching which
 * kernel, allocating how many bytes) and, for module loads, the JIT's own
 * error log. */
#ifndef AXLE_RUNTIME_CUDA_DRIVER_H
#define AXLE_RUNTIME_CUDA_DRIVER_H

#include <stddef.h>

#include "ir.h"
#include "runtime/cuda_constants.h"

/* ---- the driver's types, as its ABI defines them ---- */
typedef int CUresult;                  /* 0 is CUDA_SUCCESS */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;

/* The driver's constants (error codes, attributes, JIT options, flags,
 * tensor-map enums), with cuda.h's names and values: one table,
 * cuda_constants.h, checked against cuda.h by test_cuda_header. */
enum { AXLE_CUDA_CONSTANTS(AXLE_CUDA_ENUMERATOR) };

/* A TMA descriptor (cuTensorMapEncodeTiled): 128 opaque bytes, passed to a
 * kernel by value as a .param .align 64 .b8 [128]. */
typedef struct CUtensorMap {
  _Alignas(64) unsigned long long opaque[CU_TENSOR_MAP_NUM_QWORDS];
} CUtensorMap;

/* The entry points, one row each: CUDA_ENTRY(field, "symbol", return, args).
 * Several are exported under a _v2 name since CUDA 3.2 (64-bit sizes); the
 * symbol column says which name dlsym must look for. */
#define AXLE_CUDA_ENTRIES(CUDA_ENTRY)                                                              \
  CUDA_ENTRY(init, "cuInit", (unsigned flags))                                                     \
  CUDA_ENTRY(device_get_count, "cuDeviceGetCount", (int *count))                                   \
  CUDA_ENTRY(device_get, "cuDeviceGet", (CUdevice * device, int ordinal))                          \
  CUDA_ENTRY(device_get_attribute, "cuDeviceGetAttribute", (int *value, int attribute, CUdevice d)) \
  CUDA_ENTRY(device_get_name, "cuDeviceGetName", (char *name, int length, CUdevice d))             \
  CUDA_ENTRY(primary_ctx_retain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice d))        \
  CUDA_ENTRY(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2", (CUdevice d))                    \
  CUDA_ENTRY(ctx_set_current, "cuCtxSetCurrent", (CUcontext ctx))                                  \
  CUDA_ENTRY(mem_get_info, "cuMemGetInfo_v2", (size_t * free_bytes, size_t * total_bytes))         \
  CUDA_ENTRY(mem_alloc, "cuMemAlloc_v2", (CUdeviceptr * ptr, size_t bytes))                        \
  CUDA_ENTRY(mem_free, "cuMemFree_v2", (CUdeviceptr ptr))                                          \
  CUDA_ENTRY(mem_alloc_host, "cuMemAllocHost_v2", (void **ptr, size_t bytes))                      \
  CUDA_ENTRY(mem_free_host, "cuMemFreeHost", (void *ptr))                                          \
  CUDA_ENTRY(memcpy_htod_async, "cuMemcpyHtoDAsync_v2",                                            \
             (CUdeviceptr dst, const void *src, size_t bytes, CUstream s))                         \
  CUDA_ENTRY(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2",                                            \
             (void *dst, CUdeviceptr src, size_t bytes, CUstream s))                               \
  CUDA_ENTRY(memcpy_dtod_async, "cuMemcpyDtoDAsync_v2",                                            \
             (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s))                         \
  CUDA_ENTRY(stream_create, "cuStreamCreate", (CUstream * s, unsigned flags))                      \
  CUDA_ENTRY(stream_destroy, "cuStreamDestroy_v2", (CUstream s))                                   \
  CUDA_ENTRY(stream_synchronize, "cuStreamSynchronize", (CUstream s))                              \
  CUDA_ENTRY(event_create, "cuEventCreate", (CUevent * e, unsigned flags))                         \
  CUDA_ENTRY(event_record, "cuEventRecord", (CUevent e, CUstream s))                               \
  CUDA_ENTRY(event_synchronize, "cuEventSynchronize", (CUevent e))                                 \
  CUDA_ENTRY(event_elapsed_time, "cuEventElapsedTime", (float *ms, CUevent start, CUevent end))    \
  CUDA_ENTRY(event_destroy, "cuEventDestroy_v2", (CUevent e))                                      \
  CUDA_ENTRY(module_load_data_ex, "cuModuleLoadDataEx",                                            \
             (CUmodule * m, const void *image, unsigned count, int *options, void **values))       \
  CUDA_ENTRY(module_unload, "cuModuleUnload", (CUmodule m))                                        \
  CUDA_ENTRY(module_get_function, "cuModuleGetFunction", (CUfunction * f, CUmodule m, const char *name)) \
  CUDA_ENTRY(launch_kernel, "cuLaunchKernel",                                                      \
             (CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,   \
              unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream s,               \
              void **params, void **extra))                                                        \
  CUDA_ENTRY(get_error_name, "cuGetErrorName", (CUresult r, const char **name))                   \
  CUDA_ENTRY(get_error_string, "cuGetErrorString", (CUresult r, const char **text))

/* Entry points a driver may lack (older than CUDA 12): NULL then, and what
 * needs them is not used (the Hopper GEMM falls back to mma.sync). */
#define AXLE_CUDA_OPTIONAL_ENTRIES(CUDA_ENTRY)                                                     \
  CUDA_ENTRY(tensor_map_encode_tiled, "cuTensorMapEncodeTiled",                                    \
             (CUtensorMap * map, int data_type, unsigned rank, void *address,                     \
              const unsigned long long *dims, const unsigned long long *strides,                   \
              const unsigned *box, const unsigned *element_strides, int interleave, int swizzle,  \
              int l2_promotion, int oob_fill))                                                     \
  CUDA_ENTRY(func_set_attribute, "cuFuncSetAttribute", (CUfunction f, int attribute, int value))

typedef struct CudaDriver {
  void *library;   /* the dlopen handle */
#define AXLE_CUDA_FIELD(field, symbol, args) CUresult(*field) args;
  AXLE_CUDA_ENTRIES(AXLE_CUDA_FIELD)
  AXLE_CUDA_OPTIONAL_ENTRIES(AXLE_CUDA_FIELD)
#undef AXLE_CUDA_FIELD
} CudaDriver;

/* Opens the driver library: $AXLE_CUDA_DRIVER when set (the tests point it
 * at a fake), else libcuda.so.1. Fails with "no CUDA driver (...)". */
bool cuda_driver_open(CudaDriver *driver, Status *st);
void cuda_driver_close(CudaDriver *driver);
/* "CUDA_ERROR_OUT_OF_MEMORY", or "an unknown CUDA error" when the driver has no name. */
const char *cuda_error_name(const CudaDriver *driver, CUresult r);

/* ---- the device the runtime uses: device 0 (or the one asked for), its primary context, one stream ----
 * Every GpuDevice (one per executable) shares the device's primary context,
 * as CUDA's runtime API does: a context costs hundreds of MB of device
 * memory, and a compile cache may hold dozens of executables. Each has its
 * own stream, module and memory. */
typedef struct GpuDevice {
  CudaDriver driver;
  CUdevice device;
  CUcontext context;
  CUstream stream;
  int compute_major, compute_minor;
  int multiprocessors;
  char name[128];
} GpuDevice;

/* Fails with "no CUDA driver" or "no CUDA device" (STATUS_UNSUPPORTED). */
bool gpu_device_open(GpuDevice *gpu, Status *st);
/* The same for the GPU numbered `ordinal` (a run over several GPUs opens
 * device d for its device d); "no CUDA device 3 (the driver sees 2 GPUs)". */
bool gpu_device_open_ordinal(GpuDevice *gpu, int ordinal, Status *st);
void gpu_device_close(GpuDevice *gpu);
/* Loads PTX text. On failure the message carries the JIT's error log. */
bool gpu_module_load(GpuDevice *gpu, const char *ptx, const char *what, CUmodule *module, Status *st);
bool gpu_function_get(GpuDevice *gpu, CUmodule module, const char *name, CUfunction *f, Status *st);
/* Checks the free device memory first, so that a module that needs more
 * fails with how much it needed rather than a bare out-of-memory. */
/* Fails with "WHAT needs N bytes of device memory; F of T bytes are free"
 * when bytes are more than the device has free. */
bool gpu_check_free(GpuDevice *gpu, size_t bytes, const char *what, Status *st);
bool gpu_alloc(GpuDevice *gpu, size_t bytes, const char *what, CUdeviceptr *ptr, Status *st);
void gpu_free(GpuDevice *gpu, CUdeviceptr ptr);
/* Pinned host memory (cuMemAllocHost), for the TransferManager's staging;
 * fails with the bytes it wanted. */
bool gpu_alloc_pinned(GpuDevice *gpu, size_t bytes, void **ptr, Status *st);
/* Enqueued on the stream; both wait for nothing. */
bool gpu_copy_to_host_async(GpuDevice *gpu, void *dst, CUdeviceptr src, size_t bytes, Status *st);
bool gpu_copy_to_device(GpuDevice *gpu, CUdeviceptr dst, const void *src, size_t bytes, Status *st);
bool gpu_copy_to_host(GpuDevice *gpu, void *dst, CUdeviceptr src, size_t bytes, Status *st);
/* Device to device, enqueued on the stream (the regions must not overlap). */
bool gpu_copy_on_device(GpuDevice *gpu, CUdeviceptr dst, CUdeviceptr src, size_t bytes, Status *st);
bool gpu_launch(GpuDevice *gpu, CUfunction f, const char *kernel_name, const unsigned grid[3],
                const unsigned block[3], unsigned shared_bytes, void **params, Status *st);
bool gpu_synchronize(GpuDevice *gpu, Status *st);
/* Whether the driver has what the TMA/wgmma GEMM needs (tensor maps and
 * more than 48 KB of dynamic shared memory per block). */
bool gpu_has_tensor_maps(const GpuDevice *gpu);
/* Lets f take up to `bytes` of dynamic shared memory (over 48 KB needs it). */
bool gpu_function_allow_shared(GpuDevice *gpu, CUfunction f, const char *kernel_name, unsigned bytes, Status *st);
/* A tiled tensor map (see cuTensorMapEncodeTiled) over the array at address. */
typedef struct GpuTensorMapShape {
  int data_type, rank, swizzle;
  unsigned long long dims[5], strides[4];   /* elements; bytes, of dims 1.. */
  unsigned box[5];
} GpuTensorMapShape;
bool gpu_tensor_map_encode(GpuDevice *gpu, const GpuTensorMapShape *shape, CUdeviceptr address, CUtensorMap *map,
                           const char *kernel_name, Status *st);
/* Makes gpu's context the calling thread's current one. A context is
 * current only on the thread that created it, and creating another (a
 * second executable) replaces it there, so every compile and run step that
 * calls the driver starts with this. */
bool gpu_context_enter(GpuDevice *gpu, Status *st);

/* Device time between two points on the stream, by CUDA events (axle-run
 * --time's device line): start records the first, stop records the second,
 * waits for it and gives the milliseconds between. */
typedef struct GpuTimer {
  CUevent start, end;
} GpuTimer;
bool gpu_timer_create(GpuDevice *gpu, GpuTimer *t, Status *st);
bool gpu_timer_start(GpuDevice *gpu, GpuTimer *t, Status *st);
bool gpu_timer_stop(GpuDevice *gpu, GpuTimer *t, double *ms, Status *st);
void gpu_timer_destroy(GpuDevice *gpu, GpuTimer *t);

#endif
