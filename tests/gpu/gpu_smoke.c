/* gpu_smoke: runs the hand-built example kernels (tests/ptx/example_kernels.h)
 * on a real GPU through axle's driver layer, and compares each result with
 * the same computation on the CPU. Built and run by tests/gpu/run.sh on a
 * machine with an NVIDIA GPU; it proves the path PTX text -> driver JIT ->
 * launch -> copy back before any emitter depends on it.
 *
 * Prints "PASS name (...)" or "FAIL name" with the first mismatches, one
 * "time vector_add_f32 ..." line, and exits 0 when everything passed, 1 when
 * a check failed, 2 when there is no usable GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_builder.h"
#include "runtime/cuda_driver.h"
#include "../ptx/example_kernels.h"

static int passed, failed;

static void report(const char *name, bool ok, const char *detail) {
  if (ok) passed++;
  else failed++;
  printf("%s %s (%s)\n", ok ? "PASS" : "FAIL", name, detail);
  fflush(stdout);
}

/* A fixed sequence of floats in [-1, 1), the same on every run. */
static float value_next(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((double)(*state >> 8) / (double)(1u << 24) * 2.0 - 1.0);
}

/* Loads one example's module and finds its kernel. */
static bool kernel_load(GpuDevice *gpu, const PtxTarget *t, void (*build)(PtxBuilder *), const char *name,
                        CUmodule *module, CUfunction *f, Status *st) {
  PtxBuilder b;
  ptx_builder_init(&b, t);
  build(&b);
  bool ok = gpu_module_load(gpu, ptx_builder_text(&b), name, module, st) && gpu_function_get(gpu, *module, name, f, st);
  ptx_builder_free(&b);
  return ok;
}

/* Device buffers for up to four arrays, freed together. */
typedef struct Buffers {
  CUdeviceptr ptr[4];
  int count;
} Buffers;

static bool buffer_upload(GpuDevice *gpu, Buffers *bufs, const void *host, size_t bytes, Status *st) {
  CUdeviceptr *p = &bufs->ptr[bufs->count++];
  return gpu_alloc(gpu, bytes, "a smoke-test array", p, st) && (!host || gpu_copy_to_device(gpu, *p, host, bytes, st));
}

static void buffers_free(GpuDevice *gpu, Buffers *bufs) {
  for (int i = 0; i < bufs->count; i++) gpu_free(gpu, bufs->ptr[i]);
  bufs->count = 0;
}

/* Times `runs` launches with driver events; returns ms per launch or -1. */
static double launch_time_ms(GpuDevice *gpu, CUfunction f, const unsigned grid[3], const unsigned block[3],
                             void **params, int runs) {
  CudaDriver *d = &gpu->driver;
  CUevent start = NULL, end = NULL;
  float ms = -1;
  Status st;
  bool ok = d->event_create(&start, 0) == CUDA_SUCCESS && d->event_create(&end, 0) == CUDA_SUCCESS &&
            d->event_record(start, gpu->stream) == CUDA_SUCCESS;
  for (int i = 0; ok && i < runs; i++) ok = gpu_launch(gpu, f, "timed", grid, block, 0, params, &st);
  ok = ok && d->event_record(end, gpu->stream) == CUDA_SUCCESS && d->event_synchronize(end) == CUDA_SUCCESS &&
       d->event_elapsed_time(&ms, start, end) == CUDA_SUCCESS;
  if (start) d->event_destroy(start);
  if (end) d->event_destroy(end);
  return ok ? ms / runs : -1;
}

/* n is not a multiple of 4, so the scalar tail runs too. Float addition is
 * exact to compare: the GPU's add.rn.f32 and the CPU's add round alike. */
static void vector_add_check(GpuDevice *gpu, const PtxTarget *t) {
  uint64_t n = (1u << 24) + 3;
  float *x = malloc(n * 4), *y = malloc(n * 4), *out = malloc(n * 4);
  uint32_t state = 1;
  for (uint64_t i = 0; i < n; i++) x[i] = value_next(&state), y[i] = value_next(&state), out[i] = NAN;
  Status st;
  status_clear(&st);
  CUmodule module = NULL;
  CUfunction f;
  Buffers bufs = {0};
  uint64_t threads = (n + 3) / 4;
  unsigned grid[3] = {(unsigned)((threads + VECTOR_ADD_THREADS - 1) / VECTOR_ADD_THREADS), 1, 1};
  unsigned block[3] = {VECTOR_ADD_THREADS, 1, 1};
  bool ok = kernel_load(gpu, t, example_vector_add_f32, "vector_add_f32", &module, &f, &st) &&
            buffer_upload(gpu, &bufs, x, n * 4, &st) && buffer_upload(gpu, &bufs, y, n * 4, &st) &&
            buffer_upload(gpu, &bufs, NULL, n * 4, &st);
  void *params[] = {&bufs.ptr[0], &bufs.ptr[1], &bufs.ptr[2], &n};
  ok = ok && gpu_launch(gpu, f, "vector_add_f32", grid, block, 0, params, &st) &&
       gpu_copy_to_host(gpu, out, bufs.ptr[2], n * 4, &st);
  char detail[1200];
  if (!ok) {
    snprintf(detail, sizeof detail, "%s", st.message);
  } else {
    uint64_t wrong = 0, first = 0;
    for (uint64_t i = 0; i < n; i++)
      if (out[i] != x[i] + y[i] && !wrong++) first = i;
    ok = wrong == 0;
    snprintf(detail, sizeof detail, "n=%llu, %llu wrong; first at %llu: %g + %g gave %g", (unsigned long long)n,
             (unsigned long long)wrong, (unsigned long long)first, x[first], y[first], out[first]);
    if (ok) {
      double ms = launch_time_ms(gpu, f, grid, block, params, 20);
      printf("time vector_add_f32 n=%llu: %.4f ms, %.0f GB/s\n", (unsigned long long)n, ms,
             ms > 0 ? 3.0 * 4 * (double)n / (ms * 1e6) : 0);
      snprintf(detail, sizeof detail, "n=%llu, equal to the CPU's sums", (unsigned long long)n);
    }
  }
  report("gpu/vector_add_f32", ok, detail);
  buffers_free(gpu, &bufs);
  if (module) gpu->driver.module_unload(module);
  free(x), free(y), free(out);
}

/* The GPU adds in another order than the CPU, so the sum is held to a
 * bound on f32 rounding: the unit roundoff times the sum of magnitudes,
 * once per level of additions a value passes through. */
static void row_sum_check(GpuDevice *gpu, const PtxTarget *t) {
  unsigned rows = 1000, cols = 3001;
  size_t count = (size_t)rows * cols;
  float *in = malloc(count * 4), *out = malloc(rows * 4);
  uint32_t state = 2;
  for (size_t i = 0; i < count; i++) in[i] = value_next(&state);
  Status st;
  status_clear(&st);
  CUmodule module = NULL;
  CUfunction f;
  Buffers bufs = {0};
  unsigned grid[3] = {rows, 1, 1}, block[3] = {ROW_SUM_THREADS, 1, 1};
  bool ok = kernel_load(gpu, t, example_row_sum_f32, "row_sum_f32", &module, &f, &st) &&
            buffer_upload(gpu, &bufs, in, count * 4, &st) && buffer_upload(gpu, &bufs, NULL, rows * 4, &st);
  void *params[] = {&bufs.ptr[0], &bufs.ptr[1], &cols};
  ok = ok && gpu_launch(gpu, f, "row_sum_f32", grid, block, 0, params, &st) &&
       gpu_copy_to_host(gpu, out, bufs.ptr[1], rows * 4, &st);
  char detail[1200];
  snprintf(detail, sizeof detail, "%s", ok ? "" : st.message);
  for (unsigned r = 0; ok && r < rows; r++) {
    double sum = 0, magnitude = 0;
    for (unsigned c = 0; c < cols; c++) sum += in[(size_t)r * cols + c], magnitude += fabs(in[(size_t)r * cols + c]);
    double bound = 24 * 0x1p-24 * magnitude;   /* 12 + 5 + 3 additions deep */
    if (fabs(out[r] - sum) > bound) {
      ok = false;
      snprintf(detail, sizeof detail, "row %u: GPU %.9g, CPU (double) %.9g, allowed error %.3g", r, out[r], sum, bound);
    }
  }
  if (ok) snprintf(detail, sizeof detail, "%u rows of %u, within f32 rounding of the CPU's double sums", rows, cols);
  report("gpu/row_sum_f32", ok, detail);
  buffers_free(gpu, &bufs);
  if (module) gpu->driver.module_unload(module);
  free(in), free(out);
}

/* Small multiples of 1/4 are exact in bf16 and their products and sums in
 * f32, so the tile must equal the CPU's product exactly. */
static void mma_check(GpuDevice *gpu, const PtxTarget *t) {
  uint16_t a[16 * 16], bt[8 * 16];
  float a_value[16][16], b_value[16][8], c[16 * 8];
  for (int i = 0; i < 16; i++)
    for (int k = 0; k < 16; k++) a_value[i][k] = (float)((i * 3 + k * 5) % 9 - 4) * 0.25f;
  for (int k = 0; k < 16; k++)
    for (int j = 0; j < 8; j++) b_value[k][j] = (float)((k * 7 + j * 2) % 11 - 5) * 0.25f;
  for (int i = 0; i < 16; i++)
    for (int k = 0; k < 16; k++) a[i * 16 + k] = float_to_bf16(a_value[i][k]);
  for (int j = 0; j < 8; j++)
    for (int k = 0; k < 16; k++) bt[j * 16 + k] = float_to_bf16(b_value[k][j]);
  Status st;
  status_clear(&st);
  CUmodule module = NULL;
  CUfunction f;
  Buffers bufs = {0};
  unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  bool ok = kernel_load(gpu, t, example_mma_bf16, "mma_bf16_16x8x16", &module, &f, &st) &&
            buffer_upload(gpu, &bufs, a, sizeof a, &st) && buffer_upload(gpu, &bufs, bt, sizeof bt, &st) &&
            buffer_upload(gpu, &bufs, NULL, sizeof c, &st);
  void *params[] = {&bufs.ptr[0], &bufs.ptr[1], &bufs.ptr[2]};
  ok = ok && gpu_launch(gpu, f, "mma_bf16_16x8x16", grid, block, 0, params, &st) &&
       gpu_copy_to_host(gpu, c, bufs.ptr[2], sizeof c, &st);
  char detail[1200];
  snprintf(detail, sizeof detail, "%s", ok ? "16x8 tile equal to the CPU's product" : st.message);
  for (int i = 0; ok && i < 16; i++)
    for (int j = 0; ok && j < 8; j++) {
      float want = 0;
      for (int k = 0; k < 16; k++) want += a_value[i][k] * b_value[k][j];
      if (c[i * 8 + j] != want) {
        ok = false;
        snprintf(detail, sizeof detail, "c[%d][%d]: GPU %g, CPU %g", i, j, c[i * 8 + j], want);
      }
    }
  report("gpu/mma_bf16_16x8x16", ok, detail);
  buffers_free(gpu, &bufs);
  if (module) gpu->driver.module_unload(module);
}

int main(void) {
  GpuDevice gpu;
  Status st;
  status_clear(&st);
  if (!gpu_device_open(&gpu, &st)) {
    printf("no GPU: %s\n", st.message);
    return 2;
  }
  PtxTarget t;
  if (!ptx_target_for_device(gpu.compute_major, gpu.compute_minor, &t, &st)) {
    printf("unusable GPU %s: %s\n", gpu.name, st.message);
    gpu_device_close(&gpu);
    return 2;
  }
  printf("device: %s, compute capability %d.%d, %d multiprocessors; PTX target %s\n", gpu.name, gpu.compute_major,
         gpu.compute_minor, gpu.multiprocessors, t.name);
  vector_add_check(&gpu, &t);
  row_sum_check(&gpu, &t);
  mma_check(&gpu, &t);
  gpu_device_close(&gpu);
  printf("gpu_smoke: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
