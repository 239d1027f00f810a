/* The kernel IR and the lowering: every op of every corpus module that the
 * lowering accepts, lowered alone and run by the kernel interpreter, gives
 * the evaluator's bits; fusions lower to one kernel each; the printed form
 * shows what a reader expects. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ir/kernel/kernel.h"
#include "opt/lower.h"
#include "opt/opt.h"
#include "corpus_walk.h"
#include "../test.h"

static Literal **new_outputs(const Kernel *k) {
  Literal **outs = mem_calloc((size_t)k->output_count + 1, sizeof *outs);
  for (int o = 0; o < k->output_count; o++) outs[o] = literal_create(&k->outputs[o].shape);
  return outs;
}

static void free_outputs(const Kernel *k, Literal **outs) {
  for (int o = 0; o < k->output_count; o++) literal_free(outs[o]);
  free(outs);
}

/* Runs inst's kernel on the given operand values and compares with want. */
static bool kernel_matches(const Instruction *inst, const Kernel *k, Literal *const *operands, const Literal *want,
                           char *why, size_t why_size) {
  Literal **inputs = mem_calloc((size_t)k->input_count + 1, sizeof *inputs);
  for (int i = 0; i < k->input_count; i++)
    inputs[i] = k->inputs[i].constant ? (Literal *)k->inputs[i].constant : operands[i];
  Literal **outs = new_outputs(k);
  Status st;
  status_clear(&st);
  bool ok = kernel_eval(k, inputs, outs, &st);
  if (!ok) snprintf(why, why_size, "%s: %s", inst->name, st.message);
  for (int o = 0; ok && o < k->output_count; o++) {
    /* output o is the result's leaf o, depth first (a nested tuple root) */
    int64_t leaf = k->outputs[o].output_index;
    const Literal *w = literal_leaf(want, &leaf);
    if (!w || !literal_equal(w, outs[o])) {
      ok = false;
      snprintf(why, why_size, "%s: output %d differs from the evaluator", inst->name, o);
    }
  }
  free_outputs(k, outs);
  free(inputs);
  return ok;
}

typedef struct Tally {
  int modules, fusions, lowered, refused, wrong;
} Tally;

/* Every instruction that lowers is checked against the evaluator on the
 * operand values the evaluator saw. */
static void check_instruction(const Module *m, const Instruction *inst, Literal *const *operands,
                              const Literal *value, void *context) {
  Tally *t = context;
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(inst, &st);
  if (!k) {
    t->refused++;
    return;
  }
  t->lowered++;
  char why[1400];
  if (!kernel_matches(inst, k, operands, value, why, sizeof why)) {
    t->wrong++;
    StrBuf sb = {0};
    print_kernel(&sb, k);
    EXPECT(false, "%s: %s\n%s", m->name, why, sb.data);
    strbuf_free(&sb);
  }
  kernel_free(k);
}

static void check_module(Module *m, const char *path, const Status *optimize_error, void *context) {
  Tally *t = context;
  EXPECT(!optimize_error, "%s: %s", path, optimize_error ? optimize_error->message : "");
  if (optimize_error) return;
  t->modules++;
  t->fusions += opt_count_fusions(m);
  entry_for_each_value(m, 1, 0, check_instruction, t);
}

TEST(every_lowered_corpus_op_matches_the_evaluator) {
  Tally t = {0};
  EXPECT(corpus_for_each(false, check_module, &t), "run from the repository root");
  printf("  %d modules: %d ops lowered and checked, %d not lowered (no kernel form yet), %d wrong\n", t.modules,
         t.lowered, t.refused, t.wrong);
  EXPECT(t.lowered > 300, "only %d ops lowered", t.lowered);
}

/* The same after the optimizer: every fusion the pipeline makes is one
 * kernel (or is refused by name), and the kernel computes what the fusion
 * computes. */
TEST(every_fusion_the_optimizer_makes_lowers_to_a_matching_kernel) {
  Tally t = {0};
  EXPECT(corpus_for_each(true, check_module, &t), "run from the repository root");
  printf("  %d optimized modules (%d fusions): %d kernels checked, %d ops not lowered, %d wrong\n", t.modules,
         t.fusions, t.lowered, t.refused, t.wrong);
}

static Module *parse_text(const char *text) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  EXPECT(m != NULL, "%s", st.message);
  return m;
}

/* reduce(x + y*z) as one fusion: one kernel, one load per input, the sum in
 * one accumulator, nothing stored but the result. */
TEST(a_reduce_fusion_is_one_kernel_with_one_accumulator) {
  Module *m = parse_text(
      "HloModule r\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "fused { x = f32[1024] parameter(0)\n y = f32[1024] parameter(1)\n z = f32[1024] parameter(2)\n"
      "  yz = f32[1024] multiply(y, z)\n s = f32[1024] add(x, yz)\n c = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(s, c), dimensions={0}, to_apply=add }\n"
      "ENTRY e { x = f32[1024] parameter(0)\n y = f32[1024] parameter(1)\n z = f32[1024] parameter(2)\n"
      "  ROOT f = f32[] fusion(x, y, z), kind=kInput, calls=fused }\n");
  if (!m) return;
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL, "%s", st.message);
  if (k) {
    int loads = 0, stores = 0;
    for (int i = 0; i < k->op_count; i++) loads += k->ops[i].kop == KOP_LOAD, stores += k->ops[i].kop == KOP_STORE;
    EXPECT(k->kind == KERNEL_REDUCE && k->acc_count == 1 && k->rank == 0 && k->reduce_rank == 1,
           "kind %d accs %d rank %d reduce rank %d", k->kind, k->acc_count, k->rank, k->reduce_rank);
    EXPECT(loads == 3 && stores == 1, "%d loads, %d stores", loads, stores);
    StrBuf sb = {0};
    print_kernel(&sb, k);
    EXPECT(strstr(sb.data, "reduce [1024]") && strstr(sb.data, "acc0"), "printed:\n%s", sb.data);
    strbuf_free(&sb);
    kernel_free(k);
  }
  module_free(m);
}

/* A slice of stride 1 indexes with the loop index itself (plus its start
 * where that is not 0): no "index * 1", no "0 + index". The emitters read
 * such an index as contiguous; a multiply by a constant 1 left the x86
 * vectorizer gathering an LSTM's gate slices lane by lane. */
TEST(stride_one_slices_index_without_multiplies_or_zero_adds) {
  Module *m = parse_text(
      "HloModule s\n"
      "fused { x = f32[4,1024] parameter(0)\n"
      "  a = f32[4,256] slice(x), slice={[0:4], [0:256]}\n"
      "  b = f32[4,256] slice(x), slice={[0:4], [768:1024]}\n"
      "  ROOT s = f32[4,256] add(a, b) }\n"
      "ENTRY e { x = f32[4,1024] parameter(0)\n  ROOT f = f32[4,256] fusion(x), kind=kLoop, calls=fused }\n");
  if (!m) return;
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL, "%s", st.message);
  if (k) {
    int multiplies = 0, adds_of_zero = 0;
    for (int i = 0; i < k->op_count; i++) {
      const KernelOp *op = &k->ops[i];
      if (op->kop != KOP_HLO || op->type != TYPE_S64) continue;
      multiplies += op->op == OP_MULTIPLY;
      for (int a = 0; op->op == OP_ADD && a < 2; a++) {
        const KernelOp *arg = &k->ops[op->args[a]];
        adds_of_zero += arg->kop == KOP_CONSTANT && arg->value.i == 0;
      }
    }
    StrBuf sb = {0};
    print_kernel(&sb, k);
    EXPECT(multiplies == 0 && adds_of_zero == 0, "%d index multiplies, %d adds of 0:\n%s", multiplies, adds_of_zero,
           sb.data);
    strbuf_free(&sb);
    kernel_free(k);
  }
  module_free(m);
}

/* Softmax after the optimizer is one fusion, and that fusion one row
 * kernel: the max, then the sum of exponentials, then the stores, three
 * passes over each row and no temporary array. */
TEST(softmax_is_one_row_kernel_in_three_phases) {
  Status st;
  status_clear(&st);
  Module *m = parse_module_file("tests/hlo/jax_softmax.hlo", &st);
  EXPECT(m != NULL, "%s", st.message);
  if (!m) return;
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  EXPECT(optimize_module(m, &ctx, &st), "%s", st.message);
  opt_context_free(&ctx);
  const Instruction *fusion = NULL;
  for (int i = 0; i < m->entry->instruction_count; i++)
    if (m->entry->instructions[i]->opcode == OP_FUSION) fusion = m->entry->instructions[i];
  EXPECT(fusion != NULL && opt_count_fusions(m) == 1, "%d fusions", opt_count_fusions(m));
  Kernel *k = fusion ? lower_to_kernel(fusion, &st) : NULL;
  EXPECT(k != NULL, "%s", st.message);
  if (k) {
    EXPECT(k->kind == KERNEL_ROW && k->phase_count == 3 && k->phase_blocks[0] == KBLOCK_REDUCE &&
               k->phase_blocks[1] == KBLOCK_REDUCE && k->phase_blocks[2] == KBLOCK_ROW && k->acc_count == 2,
           "kind %d, %d phases, %d accumulators", k->kind, k->phase_count, k->acc_count);
    kernel_free(k);
  }
  module_free(m);
}

/* Layer norm's per-row values (the mean, 1/sqrt(var + eps)) read only
 * accumulators of earlier phases and constants: they are marked
 * invariant and come first in their phase, before its loop index, so a
 * code generator can compute them once per row; everything that reads an
 * element stays variant. */
TEST(loop_invariant_ops_come_first_in_their_phase) {
  Module *m = parse_text(
      "HloModule ln\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "fused { x = f32[8,64] parameter(0)\n zero = f32[] constant(0)\n"
      "  sum = f32[8] reduce(x, zero), dimensions={1}, to_apply=add\n n = f32[] constant(64)\n"
      "  n8 = f32[8] broadcast(n), dimensions={}\n mean = f32[8] divide(sum, n8)\n"
      "  mb = f32[8,64] broadcast(mean), dimensions={0}\n c = f32[8,64] subtract(x, mb)\n"
      "  sq = f32[8,64] multiply(c, c)\n ss = f32[8] reduce(sq, zero), dimensions={1}, to_apply=add\n"
      "  var = f32[8] divide(ss, n8)\n inv = f32[8] rsqrt(var)\n ib = f32[8,64] broadcast(inv), dimensions={0}\n"
      "  ROOT y = f32[8,64] multiply(c, ib) }\n"
      "ENTRY e { x = f32[8,64] parameter(0)\n ROOT f = f32[8,64] fusion(x), kind=kInput, calls=fused }\n");
  if (!m) return;
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL && k->kind == KERNEL_ROW, "%s", st.message);
  if (k) {
    StrBuf sb = {0};
    print_kernel(&sb, k);
    bool rsqrt_invariant = false, variant_seen[AXLE_MAX_RANK] = {false};
    for (int i = 0; i < k->op_count; i++) {
      const KernelOp *op = &k->ops[i];
      if (op->block != KBLOCK_REDUCE && op->block != KBLOCK_ROW) continue;
      if (op->kop == KOP_HLO && op->op == OP_RSQRT) rsqrt_invariant = op->invariant;
      if (op->kop == KOP_LOAD || op->kop == KOP_RINDEX) EXPECT(!op->invariant, "op %d invariant:\n%s", i, sb.data);
      EXPECT(!(op->invariant && variant_seen[op->phase]), "invariant op %d after a variant one:\n%s", i, sb.data);
      if (!op->invariant) variant_seen[op->phase] = true;
    }
    EXPECT(rsqrt_invariant, "rsqrt not invariant:\n%s", sb.data);
    EXPECT(strstr(sb.data, "inv ") != NULL, "printed without the invariant mark:\n%s", sb.data);
    strbuf_free(&sb);
    kernel_free(k);
  }
  module_free(m);
}

TEST(ops_without_a_kernel_form_are_refused_not_miscompiled) {
  Module *m = parse_text("HloModule d\nENTRY e { a = f32[4,8] parameter(0)\n b = f32[8,2] parameter(1)\n"
                         "  ROOT d = f32[4,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0} }\n");
  if (!m) return;
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k == NULL && st.code == STATUS_UNSUPPORTED && strstr(st.message, "dot"), "message: %s", st.message);
  kernel_free(k);
  module_free(m);
}

int main(void) {
  RUN(every_lowered_corpus_op_matches_the_evaluator);
  RUN(every_fusion_the_optimizer_makes_lowers_to_a_matching_kernel);
  RUN(a_reduce_fusion_is_one_kernel_with_one_accumulator);
  RUN(stride_one_slices_index_without_multiplies_or_zero_adds);
  RUN(softmax_is_one_row_kernel_in_three_phases);
  RUN(loop_invariant_ops_come_first_in_their_phase);
  RUN(ops_without_a_kernel_form_are_refused_not_miscompiled);
  return test_summary();
}
