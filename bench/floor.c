/* make bench's floors, measured in the same run as the workloads:
 *
 *   fma_gflops X   this machine's one-thread f32 multiply-add peak
 *                  (gemm_peak_gflops_measure: a generated loop of
 *                  independent FMAs at the GEMM's ISA level)
 *   read_gbs Y     a plain read loop's rate over 256 MiB (far past every
 *                  cache), 16-byte loads into four independent sums
 *
 * Each is the median of 5 timings. The compute-bound rows of the table are
 * compared with the first, the memory-bound rows with the second.
 *
 *   build/bench/floor [--quick]      --quick: 64 MiB and shorter probes */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emit_x86/cpu_features.h"
#include "emit_x86/gemm.h"

enum { RUNS = 5 };

typedef uint32_t Lanes __attribute__((vector_size(16)));

static double wall_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sums every word, so the compiler cannot drop a load; four sums so the
 * adds are never the limit. */
static uint32_t read_all(const Lanes *x, size_t count) {
  Lanes s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
  for (size_t i = 0; i < count; i += 4) {
    s0 += x[i];
    s1 += x[i + 1];
    s2 += x[i + 2];
    s3 += x[i + 3];
  }
  Lanes s = s0 + s1 + s2 + s3;
  return s[0] + s[1] + s[2] + s[3];
}

/* Median GB/s of RUNS passes over bytes, after one pass that maps the pages. */
static double read_gbs_measure(size_t bytes) {
  size_t count = bytes / sizeof(Lanes);
  Lanes *x = aligned_alloc(64, bytes);
  if (!x) {
    fprintf(stderr, "error: out of memory for the %zu-byte read probe\n", bytes);
    exit(1);
  }
  memset(x, 1, bytes);
  volatile uint32_t sink = read_all(x, count);
  double gbs[RUNS];
  for (int r = 0; r < RUNS; r++) {
    double t0 = wall_seconds();
    sink += read_all(x, count);
    gbs[r] = (double)bytes / (wall_seconds() - t0) * 1e-9;
  }
  (void)sink;
  free(x);
  qsort(gbs, RUNS, sizeof gbs[0], compare_doubles);
  return gbs[RUNS / 2];
}

int main(int argc, char **argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  Status st;
  status_clear(&st);
  CpuFeatures cpu;
  if (!cpu_features_detect(&cpu, &st)) {
    fprintf(stderr, "error: %s\n", st.message);
    return 1;
  }
  double peak = gemm_peak_gflops_measure(cpu.level, quick ? 0.05 : 0.2, RUNS, &st);
  if (peak <= 0) {
    fprintf(stderr, "error: %s\n", st.message);
    return 1;
  }
  printf("isa %s\n", cpu_level_name(cpu.level));
  printf("fma_gflops %.1f\n", peak);
  printf("read_gbs %.1f\n", read_gbs_measure((size_t)(quick ? 64 : 256) << 20));
  return 0;
}
