/* What the kernel tests share: walking the corpus (every .hlo file of tests/hlo, as
 * written or optimized), and evaluating an entry computation instruction by
 * instruction on random parameters, so each instruction can be checked on
 * the operand values the evaluator saw. Header-only, like test.h. */
#ifndef AXLE_TESTS_CORPUS_WALK_H
#define AXLE_TESTS_CORPUS_WALK_H

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "opt/opt.h"

/* Floats in [-0.5, 0.5), pred coin flips, integers in [0, 7) less
 * signed_offset for signed types; complex values stay zero. */
static inline Literal *corpus_random_literal(const Shape *shape, uint64_t *state, int64_t signed_offset) {
  if (shape_is_tuple(shape)) {
    Literal **elements = mem_calloc((size_t)shape->tuple_count + 1, sizeof *elements);
    for (int i = 0; i < shape->tuple_count; i++)
      elements[i] = corpus_random_literal(&shape->tuple_shapes[i], state, signed_offset);
    Literal *tuple = literal_create_tuple(elements, shape->tuple_count); /* copies the array */
    free(elements);
    return tuple;
  }
  Literal *lit = literal_create(shape);
  for (int64_t i = 0; i < shape_element_count(shape); i++) {
    uint64_t r = literal_random_next(state);
    if (type_is_float(shape->type)) literal_set_f64(lit, i, (double)(r >> 11) * 0x1p-52 - 0.5);
    else if (shape->type == TYPE_PRED) literal_set_s64(lit, i, (int64_t)(r & 1));
    else if (!type_is_complex(shape->type))
      literal_set_s64(lit, i, (int64_t)(r % 7) - (type_kind(shape->type) == TYPE_KIND_SINT ? signed_offset : 0));
  }
  return lit;
}

/* inst, the operand values it read and the value the evaluator gave it. */
typedef void EntryVisit(const Module *m, const Instruction *inst, Literal *const *operands, const Literal *value,
                        void *context);

/* Evaluates m's entry in order on random parameters (from seed); calls
 * visit for every instruction but parameters and constants. Stops at the
 * first instruction the evaluator refuses. */
static inline void entry_for_each_value(const Module *m, uint64_t seed, int64_t signed_offset, EntryVisit *visit,
                                 void *context) {
  const Computation *c = m->entry;
  Literal **values = mem_calloc((size_t)c->instruction_count + 1, sizeof *values);
  uint64_t state = seed;
  for (int i = 0; i < c->instruction_count; i++) {
    const Instruction *inst = c->instructions[i];
    if (inst->opcode == OP_PARAMETER) {
      values[i] = corpus_random_literal(&inst->shape, &state, signed_offset);
      continue;
    }
    if (inst->opcode == OP_CONSTANT) {
      values[i] = literal_clone(inst->attrs.literal);
      continue;
    }
    /* (A tuple may have any number of operands.) */
    Literal **operands = mem_calloc((size_t)inst->operand_count + 1, sizeof *operands);
    for (int a = 0; a < inst->operand_count; a++) operands[a] = values[inst->operands[a]->index];
    Status st;
    status_clear(&st);
    values[i] = eval_instruction(inst, operands, &st);
    if (values[i]) visit(m, inst, operands, values[i], context);
    free(operands);
    if (!values[i]) break;
  }
  for (int i = 0; i < c->instruction_count; i++) literal_free(values[i]);
  free(values);
}

/* optimize_error is NULL, or why optimize_module failed
 * (the module is then as parsed). */
typedef void CorpusVisit(Module *m, const char *path, const Status *optimize_error, void *context);

/* Every corpus module that parses, optimized first when asked. False when
 * the corpus folder cannot be read (run from the repository root). */
static inline bool corpus_for_each(bool optimized, CorpusVisit *visit, void *context) {
  DIR *dir = opendir("tests/hlo");
  if (!dir) return false;
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
    bool ok = true;
    if (optimized) {
      OptContext ctx;
      opt_context_init(&ctx, NULL);
      ok = optimize_module(m, &ctx, &st);
      opt_context_free(&ctx);
    }
    visit(m, path, ok ? NULL : &st, context);
    module_free(m);
  }
  closedir(dir);
  return true;
}

#endif
