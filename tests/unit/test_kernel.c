/* The kernel IR and the lowering: every op of every corpus module that the
 * lowering accepts, lowered alone and run by the kernel interpreter, gives
 * the evaluator's bits; fusions lower to one kernel each; the printed form
 * shows what a reader expects. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ir/kernel/kernel.h"
#include "opt/lower.h"
#include "opt/opt.h"
#include "../test.h"

static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static Literal *random_literal(const Shape *shape, uint64_t *state) {
  if (shape_is_tuple(shape)) {
    Literal **elements = calloc_or_exit((size_t)shape->tuple_count + 1, sizeof *elements);
    for (int i = 0; i < shape->tuple_count; i++) elements[i] = random_literal(&shape->tuple_shapes[i], state);
    Literal *tuple = literal_create_tuple(elements, shape->tuple_count);
    free(elements);   /* the tuple took the elements, not the array */
    return tuple;
  }
  Literal *lit = literal_create(shape);
  for (int64_t i = 0; i < shape_element_count(shape); i++) {
    uint64_t r = next_random(state);
    if (type_is_float(shape->type)) literal_set_f64(lit, i, (double)(r >> 11) * 0x1p-52 - 0.5);
    else if (shape->type == TYPE_PRED) literal_set_s64(lit, i, (int64_t)(r & 1));
    else if (!type_is_complex(shape->type)) literal_set_s64(lit, i, (int64_t)(r % 7));
  }
  return lit;
}

static Literal **new_outputs(const Kernel *k) {
  Literal **outs = calloc_or_exit((size_t)k->output_count + 1, sizeof *outs);
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
  Literal **inputs = calloc_or_exit((size_t)k->input_count + 1, sizeof *inputs);
  for (int i = 0; i < k->input_count; i++)
    inputs[i] = k->inputs[i].constant ? (Literal *)k->inputs[i].constant : operands[i];
  Literal **outs = new_outputs(k);
  Status st;
  status_clear(&st);
  bool ok = kernel_eval(k, inputs, outs, &st);
  if (!ok) snprintf(why, why_size, "%s: %s", inst->name, st.message);
  for (int o = 0; ok && o < k->output_count; o++) {
    const Literal *w = shape_is_tuple(&want->shape) ? want->elements[o] : want;
    if (!literal_equal(w, outs[o])) {
      ok = false;
      snprintf(why, why_size, "%s: output %d differs from the evaluator", inst->name, o);
    }
  }
  free_outputs(k, outs);
  free(inputs);
  return ok;
}

typedef struct Tally {
  int modules, lowered, refused, wrong;
} Tally;

/* Evaluates the entry instruction by instruction; every instruction that
 * lowers is checked against the evaluator on the same operand values. */
static void check_module(const Module *m, Tally *t) {
  const Computation *c = m->entry;
  Literal **values = calloc_or_exit((size_t)c->instruction_count + 1, sizeof *values);
  uint64_t state = 1;
  for (int i = 0; i < c->instruction_count; i++) {
    const Instruction *inst = c->instructions[i];
    Status st;
    status_clear(&st);
    if (inst->opcode == OP_PARAMETER) {
      values[i] = random_literal(&inst->shape, &state);
      continue;
    }
    if (inst->opcode == OP_CONSTANT) {
      values[i] = literal_clone(inst->attrs.literal);
      continue;
    }
    Literal *operands[64];
    for (int a = 0; a < inst->operand_count && a < 64; a++) operands[a] = values[inst->operands[a]->index];
    values[i] = eval_instruction(inst, operands, &st);
    if (!values[i]) break;
    status_clear(&st);
    Kernel *k = lower_to_kernel(inst, &st);
    if (!k) {
      t->refused++;
      continue;
    }
    t->lowered++;
    char why[1400];
    if (!kernel_matches(inst, k, operands, values[i], why, sizeof why)) {
      t->wrong++;
      StrBuf sb = {0};
      print_kernel(&sb, k);
      EXPECT(false, "%s: %s\n%s", m->name, why, sb.data);
      strbuf_free(&sb);
    }
    kernel_free(k);
  }
  for (int i = 0; i < c->instruction_count; i++) literal_free(values[i]);
  free(values);
}

TEST(every_lowered_corpus_op_matches_the_evaluator) {
  DIR *dir = opendir("tests/hlo");
  EXPECT(dir != NULL, "run from the repository root");
  if (!dir) return;
  Tally t = {0};
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".hlo") != 0) continue;
    char path[600];
    snprintf(path, sizeof path, "tests/hlo/%s", e->d_name);
    Status st;
    status_clear(&st);
    Module *m = parse_module_file(path, &st);
    if (!m) continue;
    t.modules++;
    check_module(m, &t);
    module_free(m);
  }
  closedir(dir);
  printf("  %d modules: %d ops lowered and checked, %d not lowered (no kernel form yet), %d wrong\n", t.modules,
         t.lowered, t.refused, t.wrong);
  EXPECT(t.lowered > 300, "only %d ops lowered", t.lowered);
}

/* The same after the optimizer: every fusion the pipeline makes is one
 * kernel (or is refused by name), and the kernel computes what the fusion
 * computes. */
TEST(every_fusion_the_optimizer_makes_lowers_to_a_matching_kernel) {
  DIR *dir = opendir("tests/hlo");
  if (!dir) return;
  Tally t = {0};
  int fusions = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".hlo") != 0) continue;
    char path[600];
    snprintf(path, sizeof path, "tests/hlo/%s", e->d_name);
    Status st;
    status_clear(&st);
    Module *m = parse_module_file(path, &st);
    if (!m) continue;
    OptContext ctx;
    opt_context_init(&ctx, NULL);
    bool optimized = optimize_module(m, &ctx, &st);
    opt_context_free(&ctx);
    EXPECT(optimized, "%s: %s", path, st.message);
    if (optimized) {
      fusions += count_fusions(m);
      t.modules++;
      check_module(m, &t);
    }
    module_free(m);
  }
  closedir(dir);
  printf("  %d optimized modules (%d fusions): %d kernels checked, %d ops not lowered, %d wrong\n", t.modules,
         fusions, t.lowered, t.refused, t.wrong);
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
  RUN(ops_without_a_kernel_form_are_refused_not_miscompiled);
  return test_summary();
}
