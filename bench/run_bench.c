/* A module run in a loop through the public C API, as a deployment runs it:
 * axle_executable_run_into into result memory the caller owns, at a chosen
 * alignment. Two questions it answers (docs/benchmarks.md):
 *
 *   - what one run of a tiny module costs beyond its arithmetic (the
 *     per-run overhead: argument checks, binding addresses, the thread
 *     pool), timed over batches of runs so that the clock's own cost does
 *     not count;
 *   - whether the rate depends on where the caller's result lies: each
 *     result is placed --result-offset bytes past a 4 KiB boundary (a
 *     multiple of 16 below 4096: the API asks for 16-byte alignment, as
 *     malloc's; 0, 16, 32 and 48 are the offsets within a cache line), or,
 *     with --result-near-argument I, that many bytes past argument I's
 *     offset in its 4 KiB page. The caches index a line by its address
 *     modulo 4 KiB (L1's sets), so a result whose rows start at the same
 *     offsets as an argument's rows competes with them for the same sets,
 *     and a load that matches an earlier store in those 12 bits waits for
 *     it (4 KiB aliasing): the placement an allocator may happen to give.
 *
 *   build/bench/run_bench FILE.hlo [--threads N] [--samples N] [--batch N]
 *                         [--result-offset BYTES] [--result-near-argument I]
 *                         [--run]
 *
 * --run times axle_executable_run instead (a new result per run). The
 * arguments are f32 in [-0.5, 0.5) (other types: zeros), made once. The
 * output is one line: median_ms (per run, the median over the samples),
 * min_ms, the same median in ns, and where the results lie. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "axle.h"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int fail(axle_error_t *err) {
  fprintf(stderr, "error: %s\n", err ? axle_error_message(err) : "out of memory");
  axle_error_free(err);
  return 1;
}

/* Argument i of the module: f32 in [-0.5, 0.5) from a fixed generator. */
static axle_buffer_t *argument_create(const axle_module_t *m, int i, unsigned *seed, axle_error_t **err) {
  int rank = axle_module_parameter_rank(m, i);
  int64_t dims[16], count = 1;
  for (int d = 0; d < rank && d < 16; d++) count *= dims[d] = axle_module_parameter_dim(m, i, d);
  axle_type_t type = axle_module_parameter_type(m, i);
  axle_buffer_t *b = axle_buffer_create(type, rank, dims, NULL, err);
  if (b && type == AXLE_F32) {
    float *x = axle_buffer_data(b);
    for (int64_t k = 0; k < count; k++) {
      *seed = *seed * 1664525u + 1013904223u;
      x[k] = (float)(*seed >> 8) * 0x1p-24f - 0.5f;
    }
  }
  return b;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: run_bench FILE.hlo [--threads N] [--samples N] [--batch N] [--result-offset B]\n"
                    "                 [--result-near-argument I] [--run]\n");
    return 2;
  }
  enum { PAGE = 4096 };
  int threads = 1, samples = 21, batch = 1, offset = 0, near_argument = -1;
  bool fresh_result = false;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--run") == 0) fresh_result = true;
    else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0) threads = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--samples") == 0) samples = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--batch") == 0) batch = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--result-offset") == 0) offset = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--result-near-argument") == 0) near_argument = atoi(argv[++i]);
    else {
      fprintf(stderr, "run_bench: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (samples < 1 || batch < 1 || offset < 0 || offset % 16 != 0 || offset >= PAGE) {
    fprintf(stderr, "run_bench: samples and batch from 1, result offset a multiple of 16 below 4096\n");
    return 2;
  }
  axle_error_t *err = NULL;
  axle_module_t *m = axle_module_parse_file(argv[1], &err);
  if (!m) return fail(err);
  axle_compile_options_t options = {.threads = threads};
  axle_executable_t *exe = axle_compile_with(m, AXLE_BACKEND_CPU, &options, &err);
  if (!exe) return fail(err);
  int arg_count = axle_module_parameter_count(m), result_count = axle_executable_result_count(exe);
  axle_buffer_t **args = calloc((size_t)arg_count + 1, sizeof *args);
  unsigned seed = 1;
  for (int i = 0; i < arg_count; i++)
    if (!(args[i] = argument_create(m, i, &seed, &err))) return fail(err);
  if (near_argument >= arg_count || (near_argument >= 0 && !axle_buffer_byte_size(args[near_argument]))) {
    fprintf(stderr, "run_bench: the module has no argument %d with data\n", near_argument);
    return 2;
  }
  /* Where in its page each result starts. */
  int page_offset = offset;
  if (near_argument >= 0)
    page_offset = (int)(((uintptr_t)axle_buffer_data(args[near_argument]) + (uintptr_t)offset) % PAGE);
  void **memory = calloc((size_t)result_count + 1, sizeof *memory);
  void **results = calloc((size_t)result_count + 1, sizeof *results);
  size_t *sizes = calloc((size_t)result_count + 1, sizeof *sizes);
  for (int i = 0; i < result_count; i++) {
    sizes[i] = axle_executable_result_byte_size(exe, i);
    memory[i] = aligned_alloc(PAGE, (sizes[i] + PAGE + PAGE - 1) / PAGE * PAGE);
    memset(memory[i], 0, sizes[i] + PAGE);
    results[i] = (char *)memory[i] + page_offset;
  }
  double *ns = calloc((size_t)samples, sizeof *ns);
  for (int s = -1; s < samples; s++) {  /* sample -1 warms up */
    double t0 = now_ns();
    for (int r = 0; r < batch; r++) {
      bool ok;
      if (fresh_result) {
        axle_buffer_t *out = NULL;
        ok = axle_executable_run(exe, args, arg_count, &out, &err);
        axle_buffer_free(out);
      } else {
        ok = axle_executable_run_into(exe, args, arg_count, results, sizes, result_count, &err);
      }
      if (!ok) return fail(err);
    }
    if (s >= 0) ns[s] = (now_ns() - t0) / batch;
  }
  qsort(ns, (size_t)samples, sizeof *ns, compare_doubles);
  char where[64];
  if (near_argument >= 0) snprintf(where, sizeof where, "argument %d's page offset + %d", near_argument, offset);
  else snprintf(where, sizeof where, "%d past 4 KiB", offset);
  printf("median_ms=%.6f min_ms=%.6f median_ns=%.0f (%d samples of %d run%s, results at %s, page offset %d, %d thread%s)\n",
         ns[samples / 2] * 1e-6, ns[0] * 1e-6, ns[samples / 2], samples, batch, batch == 1 ? "" : "s", where,
         page_offset, threads, threads == 1 ? "" : "s");
  for (int i = 0; i < result_count; i++) free(memory[i]);
  for (int i = 0; i < arg_count; i++) axle_buffer_free(args[i]);
  free(memory), free(results), free(sizes), free(ns), free(args);
  axle_executable_free(exe);
  axle_module_free(m);
  return 0;
}
