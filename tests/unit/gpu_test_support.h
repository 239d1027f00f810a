/* What the PTX tests share to check a kernel's meaning on the host: a
 * kernel-IR kernel's PTX is run on the SIMT simulator
 * (tests/fake_cuda/ptx_simulate.h) and each output is compared with the
 * kernel interpreter's (kernel_eval), within a tolerance the caller states.
 * Buffers go to the simulated device in their layout's physical order
 * (literals hold logical row-major order), as they go to a real one.
 * Header-only, like test.h; everything is static inline so each test
 * program takes what it uses. */
#ifndef AXLE_TESTS_GPU_TEST_SUPPORT_H
#define AXLE_TESTS_GPU_TEST_SUPPORT_H

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "kernel/kernel.h"
#include "../fake_cuda/ptx_simulate.h"
#include "output_compare.h"


/* ---- simulating one kernel ---- */

typedef enum SimulateOutcome {
  SIMULATE_MATCHED,         /* every output matched kernel_eval's */
  SIMULATE_MISMATCHED,      /* an output differed, or the simulator could not read or run the kernel */
  SIMULATE_NOT_EVALUATED,   /* kernel_eval refused the kernel: nothing to compare with */
  SIMULATE_UNSUPPORTED,     /* the kernel has an instruction the simulator does not know */
} SimulateOutcome;

/* Runs text, PTX whose one entry is k's kernel, on the simulator on
 * inputs with a grid of `blocks` blocks of `threads` threads, and compares
 * each output with kernel_eval's under tol. why says what went wrong for
 * every outcome but SIMULATE_MATCHED. */
static inline SimulateOutcome kernel_simulate(const Kernel *k, const char *text, unsigned blocks, unsigned threads,
                                              Literal *const *inputs, const OutputTolerance *tol, char *why,
                                              size_t size) {
  Status st;
  status_clear(&st);
  PtxsKernel *pk = mem_calloc(1, sizeof *pk);
  PtxsRun *run = mem_calloc(1, sizeof *run);
  SimulateOutcome outcome = SIMULATE_MATCHED;
  if (!ptxs_parse(pk, text)) {
    snprintf(why, size, "the simulator cannot read the kernel: %s", pk->error);
    outcome = SIMULATE_MISMATCHED;
  }
  Literal **want = mem_calloc((size_t)k->output_count + 1, sizeof *want);
  Literal **got = mem_calloc((size_t)k->output_count + 1, sizeof *got);
  for (int o = 0; o < k->output_count; o++)
    want[o] = literal_create(&k->outputs[o].shape), got[o] = literal_create(&k->outputs[o].shape);
  if (outcome == SIMULATE_MATCHED && !kernel_eval(k, inputs, want, &st)) {
    snprintf(why, size, "kernel_eval: %.400s", st.message);
    outcome = SIMULATE_NOT_EVALUATED;
  }
  run->k = pk;
  for (int i = 0; outcome == SIMULATE_MATCHED && i < k->input_count + k->output_count; i++) {
    const Literal *lit = i < k->input_count ? inputs[i] : got[i - k->input_count];
    size_t bytes = (size_t)shape_byte_size(&lit->shape);
    char *data = mem_calloc(bytes + 16, 1);
    if (i < k->input_count) layout_copy(lit, data, true);
    run->buffers[run->buffer_count++] = (PtxsBuffer){data, bytes};
    run->params[i] = (uint64_t)(uintptr_t)data;
  }
  if (outcome == SIMULATE_MATCHED && !ptxs_run(run, blocks, threads)) {
    snprintf(why, size, "simulator: %s", run->error);
    outcome = run->unsupported ? SIMULATE_UNSUPPORTED : SIMULATE_MISMATCHED;
  }
  for (int o = 0; outcome == SIMULATE_MATCHED && o < k->output_count; o++) {
    layout_copy(got[o], run->buffers[k->input_count + o].base, false);
    if (!outputs_match(want[o], got[o], tol, why, size)) outcome = SIMULATE_MISMATCHED;
  }
  for (int i = 0; i < run->buffer_count; i++) free(run->buffers[i].base);
  for (int o = 0; o < k->output_count; o++) literal_free(want[o]), literal_free(got[o]);
  ptxs_free(pk);
  free(want), free(got), free(run), free(pk);
  return outcome;
}

#endif
