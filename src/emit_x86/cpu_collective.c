/* Collectives on the CPU backend when a run has several devices
 * (docs/multi-device.md): each is a runtime step that calls the evaluator's
 * rule for the instruction on views of its operand buffers. The rule hands
 * over to src/ir/eval/eval_collective.c, which exchanges operands with the
 * other devices' threads and computes this device's result; the step then
 * writes the result's leaves into the program's buffers. The evaluator and
 * the CPU backend so share one definition of every collective, and the
 * reduction order that makes results bit-identical run to run.
 *
 * On one device the collectives stay what cpu_compile_forward makes them
 * (copies), and this file is not used. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"

/* The operand and result leaves, row-major (cpu_add_call_step copies other
 * layouts around the call). */
static bool collective_step_run(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)pool;
  const Instruction *inst = s->inst;
  int n = inst->operand_count;
  Literal *views = mem_calloc((size_t)n + 1, sizeof *views);
  Literal **operands = mem_calloc((size_t)n + 1, sizeof *operands);
  if (!views || !operands) {
    mem_free(views);
    mem_free(operands);
    return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (int i = 0; i < n; i++) {
    views[i] = (Literal){.shape = inst->operands[i]->shape, .data = buffers[i]};
    shape_set_default_layout(&views[i].shape);
    operands[i] = &views[i];
  }
  Literal *value = eval_instruction(inst, operands, st);
  mem_free(operands);
  mem_free(views);
  if (!value) return false;
  int leaves = shape_leaf_count(&inst->shape);
  for (int k = 0; k < leaves; k++) {
    const Literal *leaf = shape_is_tuple(&value->shape) ? value->elements[k] : value;
    if (!shape_is_tuple(&leaf->shape) && shape_byte_size(&leaf->shape) > 0)
      memcpy(buffers[n + k], leaf->data, (size_t)shape_byte_size(&leaf->shape));
  }
  literal_free(value);
  return true;
}

const char *cpu_collective_refusal(const Instruction *inst) {
  const Shape *s = &inst->shape;
  /* The leaves of a one-level tuple are its elements; deeper tuples (an
   * all-gather-start of several operands) are not laid out so here. */
  if (shape_is_tuple(s) && shape_leaf_count(s) != s->tuple_count)
    return "a collective across devices whose result nests tuples";
  for (int i = 0; i < inst->operand_count; i++)
    if (shape_is_tuple(&inst->operands[i]->shape)) return "a collective across devices on a tuple operand";
  return NULL;
}

bool cpu_compile_collective(CpuCompile *c, const Instruction *inst) {
  return cpu_add_call_step(c, inst, shape_leaf_count(&inst->shape), collective_step_run, NULL, NULL) != NULL;
}
