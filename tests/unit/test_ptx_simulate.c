/* PTX kernels run on the host by a small SIMT simulator (ptx_simulate.h)
 * and compared with the kernel interpreter (kernel_eval), so that what the
 * PTX emitter writes is checked for meaning, not only for assembling,
 * on machines without a GPU:
 *   - softmax row kernels, one warp per row and a 256-thread block per
 *     long row (butterflies, shared memory, barriers), and the
 *     one-thread-per-row fallback;
 *   - every corpus kernel of the optimized corpus that the emitter writes
 *     and the simulator knows every instruction of, on random inputs,
 *     for up to 2^16 outputs.
 * Loops and in-order reductions must match bit for bit (NaN matches any
 * NaN); warp, block and row-block reductions add in another order and may
 * differ by R rounding errors of the type (R the reduced length); kernels
 * with a math function by a few ulps (kernel_eval uses libm). The real
 * GPU check is tests/gpu/gpu_kernels.c. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_kernel.h"
#include "opt/lower.h"
#include "corpus_walk.h"
#include "gpu_test_support.h"
#include "../test.h"

static bool kernel_has_math(const Kernel *k) {
  for (int i = 0; i < k->op_count; i++)
    if (k->ops[i].kop == KOP_HLO && ptx_op_needs_math_sequence(k->ops[i].op)) return true;
  return false;
}

typedef enum CorpusOutcome { SIMULATED, NOT_EMITTED, NOT_SIMULATED, MISMATCHED } CorpusOutcome;

/* Emits k for sm_80, simulates it on inputs and compares with kernel_eval. */
static CorpusOutcome kernel_emit_and_simulate(const Kernel *k, Literal *const *inputs, char *why, size_t size,
                                              const char **strategy) {
  PtxTarget target;
  Status st;
  status_clear(&st);
  if (!ptx_target_for_device(8, 0, &target, &st)) return NOT_EMITTED;
  PtxBuilder b;
  ptx_builder_init(&b, &target);
  PtxKernelShape shape;
  if (!ptx_kernel_emit(&b, k, "kernel", &shape, &st)) {
    ptx_builder_free(&b);
    return NOT_EMITTED;
  }
  *strategy = shape.strategy;
  /* see the file's comment for the slack */
  int64_t r = 1;
  for (int d = 0; d < k->reduce_rank; d++) r *= k->reduce_dims[d];
  bool reordered = !strcmp(shape.strategy, "reduce.warp") || !strcmp(shape.strategy, "reduce.block") ||
                   !strcmp(shape.strategy, "row.block") || !strcmp(shape.strategy, "reduce.column");
  /* a complex kernel runs split into real ops (kernel_split_complex), whose
   * formulas round differently from C's complex.h */
  OutputTolerance tolerance = {.any_nan = true, .sum_roundings = reordered ? r + 1 : 0,
                               .math_roundings = kernel_has_math(k) ? 8 : 0, .complex_roundings = 16};
  SimulateOutcome outcome = kernel_simulate(k, ptx_builder_text(&b), (unsigned)shape.blocks,
                                            (unsigned)shape.block_threads, inputs, &tolerance, why, size);
  ptx_builder_free(&b);
  return outcome == SIMULATE_MATCHED        ? SIMULATED
         : outcome == SIMULATE_NOT_EVALUATED ? NOT_EMITTED
         : outcome == SIMULATE_UNSUPPORTED   ? NOT_SIMULATED
                                             : MISMATCHED;
}

/* ---- the simulator's own conversions ---- */

TEST(the_simulators_half_conversions_agree_with_the_ir_on_every_value) {
  int wrong = 0;
  for (uint32_t h = 0; h < 65536 && wrong < 3; h++) {
    float a = ptxs_half_to_float((uint16_t)h), b = half_to_float((uint16_t)h);
    float c = ptxs_bf16_to_float((uint16_t)h), d = bf16_to_float((uint16_t)h);
    bool same = (memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b)) && (memcmp(&c, &d, sizeof c) == 0 || (c != c && d != d));
    if (!same) wrong++;
    EXPECT(same, "0x%04x: f16 %.9g vs %.9g, bf16 %.9g vs %.9g", h, a, b, c, d);
  }
  /* every 97th float: rounding to half and bf16 */
  for (uint64_t u = 0; u < (1ull << 32) && wrong < 6; u += 97) {
    uint32_t bits = (uint32_t)u;
    float f;
    memcpy(&f, &bits, sizeof f);
    uint16_t a = ptxs_float_to_half(f), b = float_to_half(f), c = ptxs_float_to_bf16(f), d = float_to_bf16(f);
    bool nan = f != f;
    bool same = nan ? ((a & 0x7c00) == 0x7c00 && (a & 0x3ff) && (c & 0x7f80) == 0x7f80 && (c & 0x7f)) : a == b && c == d;
    if (!same) wrong++;
    EXPECT(same, "%.9g (0x%08x): f16 0x%04x vs 0x%04x, bf16 0x%04x vs 0x%04x", f, bits, a, b, c, d);
  }
}

/* ---- softmax ---- */

static Module *softmax_module(int rows, int width, const char *sum_init) {
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule softmax\n"
           "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b) }\n"
           "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
           "fused { x = f32[%d,%d] parameter(0)\n low = f32[] constant(-inf)\n"
           "  m = f32[%d] reduce(x, low), dimensions={1}, to_apply=max\n"
           "  mb = f32[%d,%d] broadcast(m), dimensions={0}\n d = f32[%d,%d] subtract(x, mb)\n"
           "  e = f32[%d,%d] exponential(d)\n zero = f32[] constant(%s)\n"
           "  s = f32[%d] reduce(e, zero), dimensions={1}, to_apply=add\n"
           "  sb = f32[%d,%d] broadcast(s), dimensions={0}\n ROOT y = f32[%d,%d] divide(e, sb) }\n"
           "ENTRY e { x = f32[%d,%d] parameter(0)\n"
           "  ROOT f = f32[%d,%d] fusion(x), kind=kInput, calls=fused }\n",
           rows, width, rows, rows, width, rows, width, rows, width, sum_init, rows, rows, width, rows, width, rows,
           width, rows, width);
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "softmax.hlo", &st);
  EXPECT(m != NULL, "%s", st.message);
  return m;
}

static void softmax_check(int rows, int width, const char *sum_init, const char *want_strategy) {
  Module *m = softmax_module(rows, width, sum_init);
  if (!m) return;
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL, "%s", st.message);
  if (k) {
    uint64_t state = 7;
    Literal *x = corpus_random_literal(&k->inputs[0].shape, &state, 0);
    for (int64_t i = 0; i < shape_element_count(&x->shape); i++) literal_set_f64(x, i, 8 * literal_get_f64(x, i));
    char why[512] = "";
    const char *strategy = "";
    CorpusOutcome outcome = kernel_emit_and_simulate(k, &x, why, sizeof why, &strategy);
    EXPECT(!strcmp(strategy, want_strategy), "%dx%d: strategy %s", rows, width, strategy);
    EXPECT(outcome == SIMULATED, "%dx%d (%s): %s", rows, width, strategy, outcome == NOT_EMITTED ? "not emitted" : why);
    literal_free(x);
  }
  kernel_free(k);
  module_free(m);
}

TEST(softmax_rows_of_one_warp_match_the_interpreter) { softmax_check(5, 10, "0", "row.block"); }
TEST(softmax_rows_of_a_256_thread_block_match_the_interpreter) { softmax_check(3, 2000, "0", "row.block"); }
TEST(softmax_with_a_sum_off_identity_runs_one_thread_per_row_and_matches) { softmax_check(4, 37, "1", "row.thread"); }

/* ---- the corpus ---- */

typedef struct CorpusTally {
  int simulated, not_simulated, mismatched;
  const char *module;
} CorpusTally;

enum { MAX_OUTPUT_ELEMENTS = 1 << 16, MAX_WORK = 1 << 22 };

static void instruction_visit(const Module *m, const Instruction *inst, Literal *const *operands,
                              const Literal *value, void *context) {
  (void)m, (void)value;
  CorpusTally *t = context;
  if (inst->opcode == OP_TUPLE || inst->opcode == OP_GET_TUPLE_ELEMENT || inst->opcode == OP_BITCAST ||
      inst->operand_count > 64)
    return;
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(inst, &st);
  if (!k) return;
  int64_t outputs = 1, reduced = 1;
  for (int d = 0; d < k->rank; d++) outputs *= k->dims[d];
  for (int d = 0; d < k->reduce_rank; d++) reduced *= k->reduce_dims[d];
  if (outputs <= MAX_OUTPUT_ELEMENTS && outputs * (reduced * (k->phase_count ? k->phase_count : 1)) <= MAX_WORK) {
    Literal **inputs = mem_calloc((size_t)k->input_count + 1, sizeof *inputs);
    for (int i = 0; i < k->input_count; i++)
      inputs[i] = k->inputs[i].constant ? (Literal *)k->inputs[i].constant : operands[i];
    char why[512] = "";
    const char *strategy = "-";
    CorpusOutcome outcome = kernel_emit_and_simulate(k, inputs, why, sizeof why, &strategy);
    if (outcome == SIMULATED) t->simulated++;
    if (outcome == NOT_SIMULATED) t->not_simulated++;
    if (outcome == MISMATCHED) {
      t->mismatched++;
      EXPECT(false, "%s/%s (%s): %s", t->module, inst->name, strategy, why);
    }
    free(inputs);
  }
  kernel_free(k);
}

static void module_visit(Module *m, const char *path, const Status *optimize_error, void *context) {
  if (optimize_error) return;
  CorpusTally *t = context;
  t->module = path;
  entry_for_each_value(m, 1, 3, instruction_visit, t);
}

TEST(every_simulated_corpus_kernel_matches_the_interpreter) {
  CorpusTally t = {0};
  EXPECT(corpus_for_each(true, module_visit, &t), "cannot read tests/hlo (run from the repository root)");
  printf("  corpus kernels simulated: %d matched or mismatched, %d with instructions the simulator lacks\n",
         t.simulated + t.mismatched, t.not_simulated);
  /* the simulator must keep covering most of what is emitted */
  EXPECT(t.simulated >= 60, "only %d kernels simulated", t.simulated);
}

int main(void) {
  RUN(the_simulators_half_conversions_agree_with_the_ir_on_every_value);
  RUN(softmax_rows_of_one_warp_match_the_interpreter);
  RUN(softmax_rows_of_a_256_thread_block_match_the_interpreter);
  RUN(softmax_with_a_sum_off_identity_runs_one_thread_per_row_and_matches);
  RUN(every_simulated_corpus_kernel_matches_the_interpreter);
  return test_summary();
}
