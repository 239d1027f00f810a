/* make bench: SGEMM throughput against this machine's measured FMA peak.
 *
 * The peak is measured, not looked up: a generated loop of independent
 * multiply-adds at the GEMM's ISA level, on one thread. Then C = A·B on
 * square row-major matrices of 256, 512, 1024 and 2048, on 1 and 2 threads,
 * each the median of 5 timed runs after a warm-up, with GFLOP/s (2·N³ per
 * product) as a fraction of the peak times the thread count. A second table
 * runs 1024³ on one thread at every ISA level this CPU has.
 *
 * Two clocks: wall time, and the process's CPU time. On a machine shared
 * with other work the wall clock also counts the time our threads waited
 * for a core; the CPU-time rate (flops per CPU-second, times the thread
 * count) is what the code achieves while it runs, and the peak probe is
 * timed in CPU time too, so of_peak compares like with like. busy is CPU
 * time over wall time times threads: near 100% means the wall figures are
 * trustworthy as well.
 *
 *   build/bench/gemm_bench [--quick]     (AXLE_CPU lowers the level)
 *   build/bench/gemm_bench --listing     prints the micro-kernel's x86 listing
 *   build/bench/gemm_bench --shape M K N [RUNS]
 *                                        one product on one thread, called
 *                                        directly: its median_ms over RUNS
 *                                        (default 21), as axle-run --time
 *                                        prints it, to set beside a module */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emit_x86/cpu_features.h"
#include "emit_x86/gemm.h"
#include "runtime/thread_pool.h"

enum { RUNS = 5 };

static double clock_seconds(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static float *random_floats(int64_t count) {
  float *x = malloc((size_t)count * sizeof *x);
  if (!x) {
    fprintf(stderr, "error: out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i < count; i++) x[i] = (float)((double)rand() / RAND_MAX - 0.5);
  return x;
}

typedef struct Timing {
  double wall, cpu;   /* medians, in seconds */
} Timing;

static double median_of(double *x) {
  qsort(x, RUNS, sizeof x[0], compare_doubles);
  return x[RUNS / 2];
}

/* Median wall and CPU seconds of RUNS products of size n, after one
 * untimed warm-up. */
static Timing gemm_time(const GemmPlan *plan, ThreadPool *pool, int64_t n) {
  float *a = random_floats(n * n), *b = random_floats(n * n), *c = random_floats(n * n);
  double wall[RUNS], cpu[RUNS];
  gemm_f32(plan, pool, n, n, n, a, n, 1, b, n, 1, c, n, NULL);
  for (int r = 0; r < RUNS; r++) {
    double w0 = clock_seconds(CLOCK_MONOTONIC), c0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
    gemm_f32(plan, pool, n, n, n, a, n, 1, b, n, 1, c, n, NULL);
    cpu[r] = clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
    wall[r] = clock_seconds(CLOCK_MONOTONIC) - w0;
  }
  free(a); free(b); free(c);
  return (Timing){median_of(wall), median_of(cpu)};
}

static double gflops(int64_t n, double seconds) { return 2.0 * (double)n * (double)n * (double)n / seconds * 1e-9; }

static int fail(const Status *st) {
  fprintf(stderr, "error: %s\n", st->message);
  return 1;
}

/* --shape M K N [RUNS]: row-major operands from malloc, one warm-up, then
 * the median wall time. */
static int shape_time(const GemmPlan *plan, char **argv, int argc) {
  int64_t m = atoll(argv[2]), k = atoll(argv[3]), n = atoll(argv[4]);
  int runs = argc > 5 ? atoi(argv[5]) : 21;
  if (m < 1 || k < 1 || n < 1 || runs < 1) {
    fprintf(stderr, "usage: gemm_bench --shape M K N [RUNS]\n");
    return 2;
  }
  float *a = random_floats(m * k + 16), *b = random_floats(k * n + 16), *c = random_floats(m * n + 16);
  double *ms = calloc((size_t)runs, sizeof *ms);
  for (int r = -1; r < runs; r++) {
    double t0 = clock_seconds(CLOCK_MONOTONIC);
    gemm_f32(plan, NULL, m, n, k, a, k, 1, b, n, 1, c, n, NULL);
    if (r >= 0) ms[r] = (clock_seconds(CLOCK_MONOTONIC) - t0) * 1e3;
  }
  qsort(ms, (size_t)runs, sizeof *ms, compare_doubles);
  printf("time: median_ms=%.4f min_ms=%.4f runs=%d; %.1f GFLOP/s\n", ms[runs / 2], ms[0], runs,
         2.0 * (double)m * (double)n * (double)k / (ms[runs / 2] * 1e6));
  free(a); free(b); free(c); free(ms);
  return 0;
}

int main(int argc, char **argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  bool listing = argc > 1 && strcmp(argv[1], "--listing") == 0;
  Status st;
  status_clear(&st);
  CpuFeatures cpu;
  if (!cpu_features_detect(&cpu, &st)) return fail(&st);
  GemmPlan *plan = gemm_plan_create(&cpu, &st);
  if (!plan) return fail(&st);
  if (argc >= 5 && strcmp(argv[1], "--shape") == 0) {
    int rc = shape_time(plan, argv, argc);
    gemm_plan_free(plan);
    return rc;
  }
  if (listing) {
    bool ok = gemm_plan_print_listing(plan, stdout, &st);
    gemm_plan_free(plan);
    return ok ? 0 : fail(&st);
  }
  const GemmKernelShape *shape = gemm_plan_kernel_shape(plan);
  double peak = gemm_peak_gflops_measure(cpu.level, 0.2, RUNS, &st);
  if (peak <= 0) return fail(&st);
  printf("isa %s, micro-kernel %dx%d; measured FMA peak, 1 thread (CPU time): %.1f GFLOP/s\n",
         cpu_level_name(cpu.level), shape->mr, shape->nr, peak);
  printf("%-6s %-8s %-10s %-13s %-13s %-8s %s\n", "size", "threads", "median_ms",
         "wall_GFLOP/s", "cpu_GFLOP/s", "of_peak", "busy");
  static const int64_t sizes[] = {256, 512, 1024, 2048};
  for (int s = 0; s < (quick ? 3 : 4); s++)
    for (int threads = 1; threads <= 2; threads++) {
      ThreadPool *pool = threads > 1 ? thread_pool_create(threads) : NULL;
      Timing t = gemm_time(plan, pool, sizes[s]);
      double cpu_rate = gflops(sizes[s], t.cpu / threads);
      printf("%-6lld %-8d %-10.2f %-13.1f %-13.1f %3.0f%%     %3.0f%%\n", (long long)sizes[s], threads,
             t.wall * 1e3, gflops(sizes[s], t.wall), cpu_rate, 100.0 * cpu_rate / (peak * threads),
             100.0 * t.cpu / (t.wall * threads));
      thread_pool_free(pool);
    }
  gemm_plan_free(plan);

  printf("\n1024^3 on 1 thread at each ISA level this CPU has\n");
  printf("%-7s %-8s %-12s %-13s %s\n", "isa", "tile", "peak_GFLOP/s", "cpu_GFLOP/s", "of_peak");
  static const char *const levels[] = {"sse4", "avx2", "avx512"};
  for (int l = 0; l < 3; l++) {
    CpuFeatures f;
    cpu_features_detect_hardware(&f);
    if (!cpu_features_force_level(&f, levels[l], &st)) continue;
    GemmPlan *p = gemm_plan_create(&f, &st);
    if (!p) return fail(&st);
    double level_peak = gemm_peak_gflops_measure(f.level, 0.2, RUNS, &st);
    double rate = gflops(1024, gemm_time(p, NULL, 1024).cpu);
    char tile[16];
    snprintf(tile, sizeof tile, "%dx%d", gemm_plan_kernel_shape(p)->mr, gemm_plan_kernel_shape(p)->nr);
    printf("%-7s %-8s %-12.1f %-13.1f %.0f%%\n", levels[l], tile, level_peak, rate,
           100.0 * rate / level_peak);
    gemm_plan_free(p);
  }
  return 0;
}
