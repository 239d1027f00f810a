/* make bench's OpenBLAS peer: cblas_sgemm on row-major f32 matrices, as a
 * C user calls it. Prints "cblas_sgemm MS", the median of RUNS calls.
 *
 *   openblas_peer sgemm M K N RUNS
 *
 * Built by `make bench` only where cblas.h exists (make bench-deps). The
 * thread count is OpenBLAS's own (bench/run.sh sets OPENBLAS_NUM_THREADS). */
#include <cblas.h>
#include <string.h>

#include "peer_timing.h"

static const char usage[] = "openblas_peer sgemm M K N RUNS";

typedef struct Gemm {
  int m, k, n;
  const float *a, *b;
  float *c;
} Gemm;

static void gemm_call(void *ctx) {
  const Gemm *g = ctx;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n, 0.0f,
              g->c, g->n);
}

int main(int argc, char **argv) {
  if (argc != 6 || strcmp(argv[1], "sgemm") != 0) {
    fprintf(stderr, "usage: %s\n", usage);
    return 2;
  }
  Gemm g = {(int)peer_count(argv[2], usage), (int)peer_count(argv[3], usage), (int)peer_count(argv[4], usage),
            NULL, NULL, NULL};
  int runs = (int)peer_count(argv[5], usage);
  float *a = peer_random_floats((size_t)g.m * g.k), *b = peer_random_floats((size_t)g.k * g.n);
  g.a = a, g.b = b, g.c = peer_random_floats((size_t)g.m * g.n);
  printf("cblas_sgemm %.4f\n", peer_median_ms(gemm_call, &g, runs));
  free(a), free(b), free(g.c);
  return 0;
}
