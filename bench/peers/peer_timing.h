/* What the C peers of make bench share: random inputs and the median wall
 * time of RUNS calls after one untimed warm-up, as axle-run --time does. */
#ifndef BENCH_PEER_TIMING_H
#define BENCH_PEER_TIMING_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double peer_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int peer_compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Uniform in [-0.5, 0.5); exits on exhaustion (a benchmark driver, not a
 * library). */
static float *peer_random_floats(size_t count) {
  float *x = malloc(count * sizeof *x);
  if (!x) {
    fprintf(stderr, "error: out of memory for %zu floats\n", count);
    exit(1);
  }
  for (size_t i = 0; i < count; i++) x[i] = (float)((double)rand() / RAND_MAX - 0.5);
  return x;
}

/* Median milliseconds of runs calls of fn(ctx), after one warm-up. */
static double peer_median_ms(void (*fn)(void *), void *ctx, int runs) {
  double *ms = malloc((size_t)runs * sizeof *ms);
  if (!ms) exit(1);
  fn(ctx);
  for (int r = 0; r < runs; r++) {
    double t0 = peer_seconds();
    fn(ctx);
    ms[r] = (peer_seconds() - t0) * 1e3;
  }
  qsort(ms, (size_t)runs, sizeof ms[0], peer_compare_doubles);
  double median = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
  free(ms);
  return median;
}

/* A positive count from argv, or exit 2 with the usage. */
static long peer_count(const char *arg, const char *usage) {
  char *end;
  long n = strtol(arg, &end, 10);
  if (*end || n <= 0 || n > 1000000) {
    fprintf(stderr, "error: '%s' is not a positive count\nusage: %s\n", arg, usage);
    exit(2);
  }
  return n;
}

#endif
