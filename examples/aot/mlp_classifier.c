/* The MLP classifier of examples/aot, compiled ahead of time: this program
 * links mlp_classifier.o (axle-aot examples/aot/mlp_classifier.hlo) and
 * nothing of axle's. The weights are in the object (.rodata); the input is
 * four samples of 64 features; the output, each sample's class
 * probabilities and its class (the module's softmax and argmax).
 *
 *   make examples       builds it and runs it (docs/aot.md) */
#include <stdio.h>
#include <stdlib.h>

#include "mlp_classifier.h"

int main(void) {
  /* Features from a fixed integer hash, in [-1, 1): the same every run. */
  static _Alignas(64) float x[MLP_CLASSIFIER_PARAM0_ELEMENTS];
  for (int i = 0; i < MLP_CLASSIFIER_PARAM0_ELEMENTS; i++) {
    unsigned h = (unsigned)i * 2654435761u;
    x[i] = (float)((h >> 8) % 2000) / 1000.0f - 1.0f;
  }
  static _Alignas(64) float probabilities[MLP_CLASSIFIER_RESULT0_ELEMENTS];
  static _Alignas(64) int32_t classes[MLP_CLASSIFIER_RESULT1_ELEMENTS];
  const void *params[MLP_CLASSIFIER_PARAM_COUNT] = {x};
  void *results[MLP_CLASSIFIER_RESULT_COUNT] = {probabilities, classes};
  /* The module needs a scratch block; this one is static, as a small
   * embedded program would have it. */
  static _Alignas(MLP_CLASSIFIER_TEMP_ALIGNMENT) unsigned char temp[MLP_CLASSIFIER_TEMP_BYTES + 1];
  int rc = mlp_classifier_run(params, results, temp);
  if (rc != MLP_CLASSIFIER_OK) {
    fprintf(stderr, "mlp_classifier_run: %s\n",
            rc == MLP_CLASSIFIER_ERROR_CPU ? "this CPU lacks " MLP_CLASSIFIER_ISA : "bad arguments");
    return 1;
  }
  int64_t dims[] = MLP_CLASSIFIER_RESULT0_DIMS;
  for (int64_t s = 0; s < dims[0]; s++) {
    printf("sample %lld: class %d, probabilities", (long long)s, classes[s]);
    for (int64_t c = 0; c < dims[1]; c++) printf(" %.4f", probabilities[s * dims[1] + c]);
    printf("\n");
  }
  return 0;
}
