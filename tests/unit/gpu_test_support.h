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

/* ---- layouts ---- */

/* The physical position of logical row-major element `logical` of s. */
static inline int64_t physical_position(const Shape *s, int64_t logical) {
  int64_t index[AXLE_MAX_RANK];
  for (int d = s->rank - 1; d >= 0; d--) index[d] = logical % s->dims[d], logical /= s->dims[d];
  int64_t offset = 0;
  for (int j = s->rank - 1; j >= 0; j--) offset = offset * s->dims[s->minor_to_major[j]] + index[s->minor_to_major[j]];
  return offset;
}

/* Between a literal's logical order and a buffer's physical one. */
static inline void layout_copy(const Literal *lit, char *physical, bool to_physical) {
  size_t size = (size_t)type_byte_size(lit->shape.type);
  int64_t n = shape_element_count(&lit->shape);
  for (int64_t i = 0; i < n; i++) {
    char *p = physical + (size_t)physical_position(&lit->shape, i) * size, *l = (char *)lit->data + (size_t)i * size;
    if (to_physical) memcpy(p, l, size);
    else memcpy(l, p, size);
  }
}

/* ---- comparing outputs ---- */

/* One rounding error of a float type (of its parts, for a complex type);
 * 0 for the others. */
static inline double type_epsilon(ElementType t) {
  switch (t) {
  case TYPE_F16: return 0x1p-10;
  case TYPE_BF16: return 0x1p-7;
  case TYPE_F32: case TYPE_C64: return 0x1p-23;
  case TYPE_F64: case TYPE_C128: return 0x1p-52;
  default: return 0;
  }
}

/* How far got may be from want. The same bits always match and integers
 * must always have them; each field below that is 0 (or false) allows
 * nothing more. eps is type_epsilon of the output's type. */
typedef struct OutputTolerance {
  bool any_nan;                  /* a NaN matches any NaN (PTX's max.NaN returns the canonical one) */
  int64_t sum_roundings;         /* floats: |a - b| <= n eps max(1, |a|, |b|): sums added in another order */
  int64_t math_roundings;        /* floats: |a - b| <= n eps max(|a|, |b|): math functions, ulps apart */
  double complex_part_relative;  /* complex: each part within this times the larger of its two values */
  int64_t complex_roundings;     /* complex: each part within n eps max(|a|, |b|), the complex magnitudes */
} OutputTolerance;

/* Whether x and y, one part of two complex values, match under tol;
 * magnitude is the larger of the two values' magnitudes. */
static inline bool complex_part_close(double x, double y, double magnitude, double eps, const OutputTolerance *tol) {
  if (x == y || (tol->any_nan && isnan(x) && isnan(y))) return true;
  if (tol->complex_part_relative > 0 && fabs(x - y) <= tol->complex_part_relative * fmax(fabs(x), fabs(y))) return true;
  return tol->complex_roundings > 0 && fabs(x - y) <= (double)tol->complex_roundings * eps * magnitude;
}

/* Whether got matches want under tol; why says where it does not. */
static inline bool outputs_match(const Literal *want, const Literal *got, const OutputTolerance *tol, char *why,
                                 size_t size) {
  int64_t n = shape_element_count(&want->shape);
  ElementType t = want->shape.type;
  size_t bytes = (size_t)type_byte_size(t);
  double eps = type_epsilon(t);
  for (int64_t i = 0; i < n; i++) {
    if (memcmp((char *)want->data + (size_t)i * bytes, (char *)got->data + (size_t)i * bytes, bytes) == 0) continue;
    if (type_is_complex(t)) {
      double _Complex a = literal_get_complex(want, i), b = literal_get_complex(got, i);
      double magnitude = fmax(cabs(a), cabs(b));
      if (complex_part_close(creal(a), creal(b), magnitude, eps, tol) &&
          complex_part_close(cimag(a), cimag(b), magnitude, eps, tol))
        continue;
      snprintf(why, size, "element %lld: wanted (%.9g, %.9g), got (%.9g, %.9g)", (long long)i, creal(a), cimag(a),
               creal(b), cimag(b));
    } else if (type_is_float(t)) {
      double a = literal_get_f64(want, i), b = literal_get_f64(got, i);
      if (tol->any_nan && isnan(a) && isnan(b)) continue;
      double scale = fmax(1.0, fmax(fabs(a), fabs(b)));
      if (tol->sum_roundings > 0 && fabs(a - b) <= (double)tol->sum_roundings * eps * scale) continue;
      if (tol->math_roundings > 0 && fabs(a - b) <= (double)tol->math_roundings * eps * fmax(fabs(a), fabs(b)))
        continue;
      snprintf(why, size, "element %lld: wanted %.9g (%a), got %.9g (%a)", (long long)i, a, a, b, b);
    } else {
      snprintf(why, size, "element %lld: wanted %lld, got %lld", (long long)i, (long long)literal_get_s64(want, i),
               (long long)literal_get_s64(got, i));
    }
    return false;
  }
  return true;
}

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
  PtxsKernel *pk = calloc_or_exit(1, sizeof *pk);
  PtxsRun *run = calloc_or_exit(1, sizeof *run);
  SimulateOutcome outcome = SIMULATE_MATCHED;
  if (!ptxs_parse(pk, text)) {
    snprintf(why, size, "the simulator cannot read the kernel: %s", pk->error);
    outcome = SIMULATE_MISMATCHED;
  }
  Literal **want = calloc_or_exit((size_t)k->output_count + 1, sizeof *want);
  Literal **got = calloc_or_exit((size_t)k->output_count + 1, sizeof *got);
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
    char *data = calloc_or_exit(bytes + 16, 1);
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
