/* A fake libcuda.so.1 for tests on machines without a GPU.
 *
 * It exports the driver entry points axle opens with dlsym, records each call
 * and can be told to fail, so that every error path of the GPU runtime (no
 * device, a module that does not load, out of memory, a failed launch) runs
 * in `make test`. "Device memory" is host memory, so copies round-trip;
 * kernels are not run: a launch is only recorded, with its grid, block and
 * the device pointers it was given (FAKE_CUDA_TRACE). Controlled by the
 * environment, read at each call:
 *   FAKE_CUDA_DEVICES=N       how many devices cuDeviceGetCount reports (default 1);
 *                             each has its own context (a run over several GPUs)
 *   FAKE_CUDA_FAIL=SYMBOL     that entry point fails (e.g. cuModuleLoadDataEx)
 *   FAKE_CUDA_FREE_BYTES=N    what cuMemGetInfo reports free (default 16 GiB)
 *   FAKE_CUDA_TRACE=FILE      append one line per call to FILE
 *   FAKE_CUDA_CAPABILITY=M.N  the compute capability reported (default 9.0)
 *   FAKE_CUDA_SAVE_PTX=DIR    write each module loaded as DIR/N.ptx (N = 0, 1, ...),
 *                             for ptxas and cuobjdump checks of what axle emits
 *   FAKE_CUDA_EXECUTE=1       run each launch on the host with the SIMT
 *                             simulator (ptx_simulate.h), so results are real;
 *                             an access outside memory fails the launch with
 *                             CUDA_ERROR_ILLEGAL_ADDRESS, an instruction it
 *                             lacks with CUDA_ERROR_LAUNCH_FAILED, each with
 *                             a line on stderr
 *   FAKE_CUDA_CORRUPT_LAUNCH=TEXT  TEST ONLY, with FAKE_CUDA_EXECUTE=1: after each
 *                             simulated launch of a kernel whose .entry name
 *                             contains TEXT, the first 4 bytes of its last
 *                             buffer (the last parameter that points into an
 *                             allocation: axle passes inputs, then outputs,
 *                             then scalars) are inverted, so that a test can
 *                             make one kernel wrong and see axle-run --check
 *                             name it (an f32 becomes another sign and scale,
 *                             or a NaN; never a nearby value)
 *
 * Every constant comes from src/runtime/cuda_constants.h (checked against
 * cuda.h by test_cuda_header). Each rule of the real driver it imitates
 * quotes cuda.h's documentation of that call at the code, or says where
 * cuda.h is silent and what the fake assumes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/runtime/cuda_constants.h"
#include "ptx_simulate.h"

typedef int CUresult;
/* cuda.h's values, checked against cuda.h by tests/unit/test_cuda_header.c */
enum { AXLE_CUDA_CONSTANTS(AXLE_CUDA_ENUMERATOR) };
typedef unsigned long long CUdeviceptr;

static void trace(const char *symbol) {
  const char *path = getenv("FAKE_CUDA_TRACE");
  if (!path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%s\n", symbol);
  fclose(f);
}

/* The error a failing call returns: the one the real driver gives for the
 * usual failure of that call. */
static CUresult outcome(const char *symbol, CUresult error) {
  trace(symbol);
  const char *fail = getenv("FAKE_CUDA_FAIL");
  return fail && strcmp(fail, symbol) == 0 ? error : 0;
}

static long long env_number(const char *name, long long fallback) {
  const char *v = getenv(name);
  return v && *v ? atoll(v) : fallback;
}

/* No device: CUDA_ERROR_NO_DEVICE, "This indicates that no CUDA-capable
 * devices were detected by the installed CUDA driver" (cuda.h). */
CUresult cuInit(unsigned flags) {
  (void)flags;
  if (env_number("FAKE_CUDA_DEVICES", 1) == 0) return trace("cuInit"), CUDA_ERROR_NO_DEVICE;
  return outcome("cuInit", CUDA_ERROR_NOT_INITIALIZED);
}
CUresult cuDeviceGetCount(int *count) {
  *count = (int)env_number("FAKE_CUDA_DEVICES", 1);
  return outcome("cuDeviceGetCount", CUDA_ERROR_INVALID_VALUE);
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return outcome("cuDeviceGet", CUDA_ERROR_INVALID_DEVICE);
}
/* An H100 SXM by default: compute capability 9.0 and 132 multiprocessors
 * (the values are the device's; cuda.h only names the attributes). */
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  const char *capability = getenv("FAKE_CUDA_CAPABILITY");
  int major = 9, minor = 0;
  if (capability && *capability && sscanf(capability, "%d.%d", &major, &minor) != 2) major = 9, minor = 0;
  *value = attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR   ? major
           : attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ? minor
           : attribute == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT     ? 132 /* an H100 SXM */
                                                                       : 0;
  return outcome("cuDeviceGetAttribute", CUDA_ERROR_INVALID_VALUE);
}
CUresult cuDeviceGetName(char *name, int length, int device) {
  (void)device;
  snprintf(name, (size_t)length, "Fake GPU (tests)");
  return outcome("cuDeviceGetName", CUDA_ERROR_INVALID_VALUE);
}
/* Each device has its own primary context; the calling thread's current
 * one is kept, so that the fake NCCL can check that a collective runs in
 * its communicator's device (fake_cuda_current_device). */
enum { MAX_DEVICES = 64 };
static int contexts[MAX_DEVICES];
/* initial-exec: read without __tls_get_addr. LeakSanitizer tracks the
 * dynamic TLS blocks that __tls_get_addr hands out, and at exit it now and
 * then read a stale entry of this library's block and crashed its leak scan
 * (make check: "Tracer caught signal 11", "DTLS 6 at 0x...2436"). One
 * pointer fits the static TLS that glibc keeps for libraries loaded later. */
static _Thread_local int *current_context __attribute__((tls_model("initial-exec")));

CUresult cuDevicePrimaryCtxRetain(void **ctx, int device) {
  if (device < 0 || device >= MAX_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  *ctx = &contexts[device];
  return outcome("cuDevicePrimaryCtxRetain", CUDA_ERROR_INVALID_CONTEXT);
}
int fake_cuda_current_device(void) { return current_context ? (int)(current_context - contexts) : -1; }
CUresult cuDevicePrimaryCtxRelease_v2(int device) {
  (void)device;
  return outcome("cuDevicePrimaryCtxRelease_v2", CUDA_ERROR_INVALID_CONTEXT);
}
CUresult cuCtxSetCurrent(void *ctx) {
  CUresult r = outcome("cuCtxSetCurrent", CUDA_ERROR_INVALID_CONTEXT);
  if (!r) current_context = ctx;
  return r;
}
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
  *free_bytes = (size_t)env_number("FAKE_CUDA_FREE_BYTES", 16ll << 30);
  *total_bytes = (size_t)80 << 30;
  return outcome("cuMemGetInfo_v2", CUDA_ERROR_INVALID_VALUE);
}
/* The live allocations, so that a simulated launch touches only them. */
enum { MAX_ALLOCATIONS = 1024 };
static PtxsBuffer allocations[MAX_ALLOCATIONS];

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  CUresult r = outcome("cuMemAlloc_v2", CUDA_ERROR_OUT_OF_MEMORY);
  if (r) return r;
  *ptr = (CUdeviceptr)(uintptr_t)malloc(bytes);
  if (!*ptr) return 2;
  for (int i = 0; i < MAX_ALLOCATIONS; i++)
    if (!allocations[i].base) {
      allocations[i] = (PtxsBuffer){(char *)(uintptr_t)*ptr, bytes};
      break;
    }
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr ptr) {
  for (int i = 0; i < MAX_ALLOCATIONS; i++)
    if (allocations[i].base == (char *)(uintptr_t)ptr) allocations[i] = (PtxsBuffer){NULL, 0};
  free((void *)(uintptr_t)ptr);
  return outcome("cuMemFree_v2", CUDA_ERROR_INVALID_VALUE);
}
CUresult cuMemAllocHost_v2(void **ptr, size_t bytes) {
  CUresult r = outcome("cuMemAllocHost_v2", 2);
  if (r) return r;
  *ptr = malloc(bytes);
  return *ptr ? 0 : 2;
}
CUresult cuMemFreeHost(void *ptr) {
  free(ptr);
  return outcome("cuMemFreeHost", CUDA_ERROR_INVALID_VALUE);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, void *stream) {
  (void)stream;
  CUresult r = outcome("cuMemcpyHtoDAsync_v2", CUDA_ERROR_INVALID_VALUE);
  if (!r) memcpy((void *)(uintptr_t)dst, src, bytes);
  return r;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, void *stream) {
  (void)stream;
  CUresult r = outcome("cuMemcpyDtoHAsync_v2", CUDA_ERROR_INVALID_VALUE);
  if (!r) memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return r;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, void *stream) {
  (void)stream;
  CUresult r = outcome("cuMemcpyDtoDAsync_v2", CUDA_ERROR_INVALID_VALUE);
  if (!r) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return r;
}
CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  static int s;
  *stream = &s;
  return outcome("cuStreamCreate", CUDA_ERROR_INVALID_VALUE);
}
CUresult cuStreamDestroy_v2(void *stream) {
  (void)stream;
  return outcome("cuStreamDestroy_v2", CUDA_ERROR_INVALID_VALUE);
}
/* A failed launch is reported at the next synchronization, as on a GPU:
 * cuStreamSynchronize "Waits until the device has completed all operations
 * in the stream", and of CUDA_ERROR_LAUNCH_FAILED cuda.h says "any further
 * CUDA work will return the same error". */
CUresult cuStreamSynchronize(void *stream) {
  (void)stream;
  return outcome("cuStreamSynchronize", CUDA_ERROR_LAUNCH_FAILED);
}
CUresult cuEventCreate(void **event, unsigned flags) {
  (void)flags;
  static int e;
  *event = &e;
  return outcome("cuEventCreate", CUDA_ERROR_INVALID_VALUE);
}
CUresult cuEventRecord(void *event, void *stream) {
  (void)event, (void)stream;
  return outcome("cuEventRecord", CUDA_ERROR_INVALID_VALUE);
}
CUresult cuEventSynchronize(void *event) {
  (void)event;
  return outcome("cuEventSynchronize", CUDA_ERROR_INVALID_VALUE);
}
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  (void)start, (void)end;
  *ms = 0.5f;
  return outcome("cuEventElapsedTime", CUDA_ERROR_INVALID_VALUE);
}
CUresult cuEventDestroy_v2(void *event) { (void)event; return outcome("cuEventDestroy_v2", CUDA_ERROR_INVALID_VALUE); }

/* A failing load writes a log the way ptxas does, so tests can check that
 * the log reaches the user. A module keeps its PTX text, so that a
 * function knows how many parameters its .entry declares. */
typedef struct FakeModule {
  char *ptx;
} FakeModule;

typedef struct FakeFunction {
  int param_count;
  const FakeModule *module;
  int max_dynamic_shared;   /* cuFuncSetAttribute */
  char name[256];
} FakeFunction;

static void save_ptx(const char *ptx) {
  const char *dir = getenv("FAKE_CUDA_SAVE_PTX");
  if (!dir || !*dir) return;
  for (int n = 0; n < 100000; n++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%d.ptx", dir, n);
    FILE *probe = fopen(path, "r");
    if (probe) {
      fclose(probe);
      continue;
    }
    FILE *f = fopen(path, "w");
    if (f) fputs(ptx, f), fclose(f);
    return;
  }
}

CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned count, int *options, void **values) {
  CUresult r = outcome("cuModuleLoadDataEx", CUDA_ERROR_INVALID_PTX);
  if (r) {
    *module = NULL;
    for (unsigned i = 0; i + 1 < count; i++) {
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER && options[i + 1] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
        size_t size = (size_t)(uintptr_t)values[i + 1];
        snprintf(values[i], size, "ptxas application ptx input, line 7; error   : fake error in '%.20s'",
                 (const char *)image);
      }
    }
    return r;
  }
  save_ptx((const char *)image);
  FakeModule *m = calloc(1, sizeof *m);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  m->ptx = strdup((const char *)image);
  *module = m;
  return 0;
}
CUresult cuModuleUnload(void *module) {
  FakeModule *m = module;
  if (m) free(m->ptx);
  free(m);
  return outcome("cuModuleUnload", CUDA_ERROR_INVALID_VALUE);
}

/* The number of ".param" between ".entry NAME(" and its ")". */
static int entry_param_count(const char *ptx, const char *name) {
  char pattern[300];
  snprintf(pattern, sizeof pattern, ".entry %s(", name);
  const char *p = ptx ? strstr(ptx, pattern) : NULL;
  if (!p) return -1;
  const char *end = strchr(p, ')');
  int n = 0;
  for (const char *q = strstr(p, ".param"); q && (!end || q < end); q = strstr(q + 1, ".param")) n++;
  return n;
}

/* Functions live until the process ends, as a test's handful do. */
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  CUresult r = outcome("cuModuleGetFunction", CUDA_ERROR_NOT_FOUND);
  if (r) return r;
  FakeModule *m = module;
  int count = entry_param_count(m ? m->ptx : NULL, name);
  if (count < 0) return 500;
  static FakeFunction functions[4096];
  static int used;
  if (used == 4096) return 2;
  functions[used].param_count = count;
  functions[used].max_dynamic_shared = 0;
  functions[used].module = m;
  snprintf(functions[used].name, sizeof functions[used].name, "%s", name);
  *function = &functions[used++];
  return 0;
}
/* Checks what the real driver checks of a tiled tensor map, then keeps
 * what the simulator's bulk tensor copies need in its 128 bytes. The
 * checks are cuda.h's documentation of cuTensorMapEncodeTiled: "tensorMap
 * address must be aligned to 64 bytes"; "tensorRank must be non-zero and
 * less than or equal to the maximum supported dimensionality of 5";
 * "globalAddress ... must be 16 byte aligned"; "globalDim array ... must be
 * non-zero and less than or equal to 2^32"; "globalStrides array ... must
 * be a multiple of 16 and less than 2^40"; "boxDim array ... must be
 * non-zero and less than or equal to 256"; "When interleave is
 * CU_TENSOR_MAP_INTERLEAVE_NONE, { boxDim[0] * elementSizeInBytes(
 * tensorDataType ) } must be a multiple of 16 bytes"; "CU_TENSOR_MAP_SWIZZLE_128B*
 * require the bounding box inner dimension to be <= 128". Stricter than
 * the driver (only what axle passes is simulated): element strides of 1,
 * no interleave, no swizzle but none and 128B. element_bytes is indexed by
 * CUtensorMapDataType (UINT8, UINT16, UINT32, INT32, UINT64, INT64,
 * FLOAT16, FLOAT32, FLOAT64, BFLOAT16, FLOAT32_FTZ, TFLOAT32,
 * TFLOAT32_FTZ: values 0 to 12 in cuda.h). */
CUresult cuTensorMapEncodeTiled(void *map, int data_type, unsigned rank, void *address, const unsigned long long *dims,
                                const unsigned long long *strides, const unsigned *box, const unsigned *element_strides,
                                int interleave, int swizzle, int l2_promotion, int oob_fill) {
  (void)l2_promotion, (void)oob_fill;
  CUresult r = outcome("cuTensorMapEncodeTiled", CUDA_ERROR_INVALID_VALUE);
  if (r) return r;
  static const int element_bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  if (data_type < 0 || data_type > 12 || rank < 1 || rank > 5 || ((uintptr_t)address % 16) ||
      interleave != CU_TENSOR_MAP_INTERLEAVE_NONE ||
      (swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && swizzle != CU_TENSOR_MAP_SWIZZLE_128B) || ((uintptr_t)map % 64))
    return CUDA_ERROR_INVALID_VALUE;
  int eb = element_bytes[data_type];
  PtxsTensorMap m = {PTXS_TENSOR_MAP_MAGIC, (uint8_t)eb, (uint8_t)rank, (uint8_t)swizzle, 0, (uint64_t)(uintptr_t)address,
                     {0}, {0}, {0}};
  for (unsigned d = 0; d < rank; d++) {
    if (dims[d] == 0 || dims[d] > (1ull << 32) || box[d] == 0 || box[d] > 256 || element_strides[d] != 1)
      return CUDA_ERROR_INVALID_VALUE;
    if (d > 0 && (strides[d - 1] % 16 || strides[d - 1] >= (1ull << 40))) return CUDA_ERROR_INVALID_VALUE;
    m.dims[d] = dims[d], m.box[d] = box[d];
    if (d > 0) m.strides[d - 1] = strides[d - 1];
  }
  if ((box[0] * (unsigned)eb) % 16 || (swizzle == CU_TENSOR_MAP_SWIZZLE_128B && box[0] * (unsigned)eb > 128))
    return CUDA_ERROR_INVALID_VALUE;
  memset(map, 0, 128);
  memcpy(map, &m, sizeof m);
  return 0;
}

/* Only the dynamic shared memory limit, which a launch then checks.
 * cuda.h: CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES is "the maximum
 * size in bytes of dynamically-allocated shared memory ... The sum of this
 * value and the function attribute CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
 * cannot exceed the device attribute
 * CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"; that attribute is
 * 227 KB on sm_90 (the device's value; cuda.h does not give it). */
CUresult cuFuncSetAttribute(void *f, int attribute, int value) {
  CUresult r = outcome("cuFuncSetAttribute", CUDA_ERROR_INVALID_VALUE);
  if (r) return r;
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 || value > 227 * 1024)
    return CUDA_ERROR_INVALID_VALUE;
  ((FakeFunction *)f)->max_dynamic_shared = value;
  return 0;
}

/* FAKE_CUDA_CORRUPT_LAUNCH: a wrong kernel on purpose (see the top). */
static void launch_corrupt_for_test(const char *name, const PtxsKernel *k, const PtxsRun *run) {
  const char *text = getenv("FAKE_CUDA_CORRUPT_LAUNCH");
  if (!text || !*text || !strstr(name, text)) return;
  for (int i = k->param_count < PTXS_MAX_PARAMS ? k->param_count - 1 : PTXS_MAX_PARAMS - 1; i >= 0; i--) {
    if (k->param_bytes[i]) continue;
    for (int a = 0; a < MAX_ALLOCATIONS; a++) {
      char *base = allocations[a].base, *at = (char *)(uintptr_t)run->params[i];
      if (!base || at < base || at + 4 > base + allocations[a].bytes) continue;
      for (int b = 0; b < 4; b++) at[b] = (char)~at[b];
      return;
    }
  }
}

/* Runs the launch on the host: one-dimensional grids and blocks, as axle
 * launches them; every live allocation is memory the kernel may touch. */
static CUresult launch_simulate(const FakeFunction *f, unsigned blocks, unsigned threads, unsigned shared,
                                void **params) {
  PtxsKernel *k = calloc(1, sizeof *k);
  PtxsRun *run = calloc(1, sizeof *run);
  CUresult result = CUDA_SUCCESS;
  if (!k || !run || !ptxs_parse_entry(k, f->module->ptx, f->name)) {
    fprintf(stderr, "fake CUDA: cannot simulate %s: %s\n", f->name, k ? k->error : "out of memory");
    if (k) ptxs_free(k);
    result = CUDA_ERROR_LAUNCH_FAILED;
  } else {
    run->k = k;
    /* a by-value array (a tensor map) is read where the caller keeps it */
    for (int i = 0; i < k->param_count && i < PTXS_MAX_PARAMS; i++)
      run->params[i] = k->param_bytes[i] ? (uint64_t)(uintptr_t)params[i] : *(CUdeviceptr *)params[i];
    run->dynamic_shared = shared;
    for (int i = 0; i < MAX_ALLOCATIONS && run->buffer_count < PTXS_MAX_BUFFERS; i++)
      if (allocations[i].base) run->buffers[run->buffer_count++] = allocations[i];
    if (!ptxs_run(run, blocks, threads)) {
      fprintf(stderr, "fake CUDA: %s: %s\n", f->name, run->error);
      /* an access outside memory is what the driver reports as "an illegal
       * memory access"; an instruction the simulator lacks, a launch failure */
      result = run->unsupported ? CUDA_ERROR_LAUNCH_FAILED : CUDA_ERROR_ILLEGAL_ADDRESS;
    } else {
      launch_corrupt_for_test(f->name, k, run);
    }
    ptxs_free(k);
  }
  free(run);
  free(k);
  return result;
}

/* The trace line of a launch: "cuLaunchKernel grid=GxGxG block=BxBxB
 * params=N", N counting the device pointers, up to the first 0, among the
 * parameters the function's .entry declares (every parameter of axle's
 * kernels is a pointer). A launch with an empty grid or block, or a block
 * over 1024 threads, fails with CUDA_ERROR_INVALID_VALUE as the driver's
 * would (1024 is CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK on every device
 * axle targets, a device value cuda.h does not give; cuLaunchKernel's
 * documentation lists CUDA_ERROR_INVALID_VALUE among its errors). Past the
 * 48 KB of dynamic shared memory a launch gets without asking (a device
 * value too), cuFuncSetAttribute must have raised the function's limit. */
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  (void)stream, (void)extra;
  const FakeFunction *function = f;
  int count = 0;
  while (function && params && count < function->param_count && *(CUdeviceptr *)params[count]) count++;
  char line[160];
  snprintf(line, sizeof line, "cuLaunchKernel grid=%ux%ux%u block=%ux%ux%u params=%d", gx, gy, gz, bx, by, bz, count);
  trace(line);
  if (gx * gy * gz == 0 || bx * by * bz == 0 || bx * by * bz > 1024) return CUDA_ERROR_INVALID_VALUE;
  /* past 48 KB, dynamic shared memory must have been allowed (cuFuncSetAttribute) */
  if (shared > 48 * 1024 && (!function || shared > (unsigned)function->max_dynamic_shared))
    return CUDA_ERROR_INVALID_VALUE;
  const char *fail = getenv("FAKE_CUDA_FAIL");
  if (fail && strcmp(fail, "cuLaunchKernel") == 0) return CUDA_ERROR_LAUNCH_FAILED;
  const char *execute = getenv("FAKE_CUDA_EXECUTE");
  return execute && *execute == '1' && function ? launch_simulate(function, gx, bx, shared, params) : 0;
}
CUresult cuGetErrorString(CUresult r, const char **text) {
  switch (r) {
  case CUDA_ERROR_OUT_OF_MEMORY: *text = "out of memory"; break;
  case CUDA_ERROR_INVALID_PTX: *text = "a PTX JIT compilation failed"; break;
  case CUDA_ERROR_ILLEGAL_ADDRESS: *text = "an illegal memory access was encountered"; break;
  case CUDA_ERROR_LAUNCH_FAILED: *text = "unspecified launch failure"; break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return 0;
}
CUresult cuGetErrorName(CUresult r, const char **name) {
  switch (r) {
#define FAKE_ERROR_NAME(constant, value) \
  case constant: *name = #constant; return CUDA_SUCCESS;
    AXLE_CUDA_ERRORS(FAKE_ERROR_NAME)
#undef FAKE_ERROR_NAME
  default: return CUDA_ERROR_INVALID_VALUE;
  }
}
