/* The CPU backend's rng (the legacy random op with no state operand): a
 * runtime routine (CPU_STEP_CALL) that fills the result with
 * rng_values_fill (src/ir/rng_bits.c), the very function that defines the
 * op for the evaluator, so the two draw the same numbers. The values are
 * keyed by the instruction's name and do not change from run to run. */
#include "emit_x86/cpu_compile.h"

/* A literal over a buffer the step was given (row-major, see cpu_call.c). */
static Literal literal_over(const Shape *shape, void *data) { return (Literal){.shape = *shape, .data = data}; }

static bool rng_run(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)pool, (void)st;
  const Instruction *inst = s->inst;
  Literal a = literal_over(&inst->operands[0]->shape, buffers[0]);
  Literal b = literal_over(&inst->operands[1]->shape, buffers[1]);
  /* The result follows the operands: rng(a, b) or rng(a, b, dims). */
  Literal out = literal_over(&inst->shape, buffers[inst->operand_count]);
  rng_values_fill(inst, &a, &b, &out);
  return true;
}

const char *cpu_rng_refusal(const Instruction *inst) {
  if (inst->operand_count < 2 || inst->operand_count > 3 || shape_is_tuple(&inst->shape) || inst->operands[0]->shape.rank != 0 ||
      inst->operands[1]->shape.rank != 0)
    return "an rng whose bounds are not two scalars";
  return NULL;
}

bool cpu_compile_rng(CpuCompile *c, const Instruction *inst) {
  return cpu_add_call_step(c, inst, 1, rng_run, NULL, NULL) != NULL;
}
