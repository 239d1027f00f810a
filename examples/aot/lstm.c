/* The 3-layer LSTM of examples/aot (60 units, 8 steps of 32 features),
 * compiled ahead of time: this program links lstm.o (axle-aot
 * examples/aot/lstm.hlo) and nothing of axle's. The weights are the
 * module's parameters, as JAX's jit(lstm)(params, xs) takes them; here
 * they come from a fixed generator (a deployment would load them once).
 * It prints the top layer's hidden state at the last step and a checksum
 * of all eight.
 *
 *   make examples       builds it and runs it (docs/aot.md) */
#include <stdio.h>
#include <stdlib.h>

#include "lstm.h"

/* Uniform in [-scale, scale), from a 32-bit linear congruential generator. */
static void fill(float *x, int64_t n, float scale, unsigned *state) {
  for (int64_t i = 0; i < n; i++) {
    *state = *state * 1664525u + 1013904223u;
    x[i] = scale * ((float)(*state >> 8) / 8388608.0f - 1.0f);
  }
}

int main(void) {
  const void *params[LSTM_PARAM_COUNT];
  unsigned state = 1;
  for (int i = 0; i < LSTM_PARAM_COUNT; i++) {
    float *p = aligned_alloc(64, ((size_t)lstm_params[i].bytes + 63) / 64 * 64);
    if (!p) return 1;
    /* the sequence in [-1, 1), the weight matrices in [-0.15, 0.15), the biases in [-0.1, 0.1) */
    float scale = i == 0 ? 1.0f : lstm_params[i].rank == 2 ? 0.15f : 0.1f;
    fill(p, lstm_params[i].elements, scale, &state);
    params[i] = p;
  }
  static _Alignas(64) float h[LSTM_RESULT0_ELEMENTS];
  void *results[] = {h};
  void *temp = aligned_alloc(LSTM_TEMP_ALIGNMENT, (LSTM_TEMP_BYTES + 63) / 64 * 64);
  int rc = temp ? lstm_run(params, results, temp) : LSTM_ERROR_ARGUMENT;
  if (rc != LSTM_OK) {
    fprintf(stderr, "lstm_run: %s\n", rc == LSTM_ERROR_CPU ? "this CPU lacks " LSTM_ISA : "bad arguments");
    return 1;
  }
  int64_t dims[] = LSTM_RESULT0_DIMS;
  double sum = 0;
  for (int64_t i = 0; i < LSTM_RESULT0_ELEMENTS; i++) sum += h[i];
  printf("h[step %lld][0..5]:", (long long)dims[0] - 1);
  for (int u = 0; u < 6; u++) printf(" %+.5f", h[(dims[0] - 1) * dims[1] + u]);
  printf("\nsum of h over %lld steps x %lld units: %+.5f\n", (long long)dims[0], (long long)dims[1], sum);
  for (int i = 0; i < LSTM_PARAM_COUNT; i++) free((void *)params[i]);
  free(temp);
  return 0;
}
