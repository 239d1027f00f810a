/* Pass "dce": dead code elimination.
 *
 * Removes what cannot affect the module's result:
 *   - instructions nobody reads (no users, not the root, no side effects);
 *   - computations nobody calls (other than the entry);
 *   - unused parameters of computations reached only through call and
 *     fusion, together with the matching operand at every call site.
 * While bodies and conditions keep their parameters: their one parameter is
 * the loop state, whose tuple shape the loop fixes (simplify removes unused
 * loop state by rewriting the whole loop). Conditional branches keep theirs.
 *
 * requires: verified. breaks: schedule (the order is kept, but removed
 * instructions leave it stale). Other passes leave dead code behind them and
 * count on this one to sweep it.
 */
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"

/* Effects reach through calls: a call or a while loop whose body does a
 * custom-call must stay even when its result is unused. Recursion ends
 * because the verifier rules out cycles of calls. A sharding annotation
 * (custom_call_is_identity) is the one custom-call without effects. */
bool instruction_has_effects(const Instruction *inst) {
  if (custom_call_is_identity(inst)) return false;
  if (opcode_has_side_effects(inst->opcode)) return true;
  for (int k = 0; k < inst->called_count; k++) {
    const Computation *callee = inst->called[k];
    for (int i = 0; i < callee->instruction_count; i++)
      if (instruction_has_effects(callee->instructions[i])) return true;
  }
  return false;
}

/* inst stops being a user of operand (edit.c keeps each user once). */
static void users_forget(Instruction *operand, const Instruction *inst) {
  for (int u = 0; u < operand->user_count; u++) {
    if (operand->users[u] != inst) continue;
    memmove(&operand->users[u], &operand->users[u + 1],
            sizeof(Instruction *) * (size_t)(operand->user_count - u - 1));
    operand->user_count--;
    return;
  }
}

/* Walking backwards finds a whole dead chain in one sweep: an operand comes
 * before its users, so when it is visited its users are already known dead
 * or alive. The set goes in one call (removing one at a time shifts the
 * array each time: quadratic on a big module). */
static bool computation_remove_dead(Computation *c) {
  bool *dead = mem_calloc((size_t)c->instruction_count + 1, sizeof *dead);
  Instruction **doomed = mem_calloc((size_t)c->instruction_count + 1, sizeof *doomed);
  int count = 0;
  for (int i = c->instruction_count - 1; i >= 0; i--) {
    Instruction *inst = c->instructions[i];
    if (inst == c->root || inst->opcode == OP_PARAMETER || instruction_has_effects(inst)) continue;
    bool users_dead = true;
    for (int u = 0; u < inst->user_count && users_dead; u++) users_dead = dead[inst->users[u]->index];
    if (!users_dead) continue;
    dead[i] = true;
    doomed[count++] = inst;
  }
  if (count > 0) computation_remove_instructions(c, doomed, count);
  mem_free(dead);
  mem_free(doomed);
  return count > 0;
}

static int computation_position(const Module *m, const Computation *c) {
  for (int k = 0; k < m->computation_count; k++)
    if (m->computations[k] == c) return k;
  return -1;
}

/* Marks every computation reachable from the entry through called lists. */
static void computation_mark_reachable(const Module *m, const Computation *c, bool *reachable) {
  int at = computation_position(m, c);
  if (at < 0 || reachable[at]) return;
  reachable[at] = true;
  for (int i = 0; i < c->instruction_count; i++) {
    const Instruction *inst = c->instructions[i];
    for (int k = 0; k < inst->called_count; k++) computation_mark_reachable(m, inst->called[k], reachable);
  }
}

/* Callers come after their callees, so removing from the end frees a dead
 * caller before its callees are asked whether anyone still calls them. */
static bool module_remove_dead_computations(Module *m) {
  bool *reachable = mem_calloc((size_t)m->computation_count, sizeof *reachable);
  computation_mark_reachable(m, m->entry, reachable);
  bool changed = false;
  for (int k = m->computation_count - 1; k >= 0; k--) {
    if (reachable[k]) continue;
    module_remove_computation(m, m->computations[k]);
    changed = true;
  }
  mem_free(reachable);
  return changed;
}

/* Drops operand i of inst, keeping the use lists right: inst leaves the
 * operand's users unless it reads that operand in another slot too. (edit.c
 * has no such call: only call sites of a shrinking computation need it.) */
static void instruction_remove_operand(Instruction *inst, int i) {
  Instruction *gone = inst->operands[i];
  memmove(&inst->operands[i], &inst->operands[i + 1],
          sizeof(Instruction *) * (size_t)(inst->operand_count - i - 1));
  inst->operand_count--;
  for (int k = 0; k < inst->operand_count; k++)
    if (inst->operands[k] == gone) return;
  users_forget(gone, inst);
}

/* For each computation (by position): true when it is called, and only by
 * call and fusion instructions, whose operands are its parameters one for
 * one. One walk over the module, so that the pass stays linear in its size
 * however many fusion bodies there are. */
static bool *module_find_functions(const Module *m) {
  int n = m->computation_count;
  bool *called = mem_calloc((size_t)n, sizeof *called);
  bool *otherwise = mem_calloc((size_t)n, sizeof *otherwise);
  for (int k = 0; k < n; k++) {
    const Computation *caller = m->computations[k];
    for (int i = 0; i < caller->instruction_count; i++) {
      const Instruction *inst = caller->instructions[i];
      bool as_function = inst->opcode == OP_CALL || inst->opcode == OP_FUSION;
      for (int q = 0; q < inst->called_count; q++) {
        int at = computation_position(m, inst->called[q]);
        if (at < 0) continue;
        called[at] = true;
        otherwise[at] |= !as_function;
      }
    }
  }
  for (int k = 0; k < n; k++) called[k] &= !otherwise[k];
  mem_free(otherwise);
  return called;
}

static void module_remove_call_operand(Module *m, const Computation *c, int number) {
  for (int k = 0; k < m->computation_count; k++) {
    Computation *caller = m->computations[k];
    for (int i = 0; i < caller->instruction_count; i++) {
      Instruction *inst = caller->instructions[i];
      if (inst->called_count > 0 && inst->called[0] == c && number < inst->operand_count)
        instruction_remove_operand(inst, number);
    }
  }
}

/* The root counts as a use: a computation that returns its parameter
 * needs it. */
static bool module_remove_unused_parameters(Module *m) {
  bool changed = false;
  bool *is_function = module_find_functions(m);
  for (int k = 0; k < m->computation_count; k++) {
    Computation *c = m->computations[k];
    if (c->is_entry || !is_function[k]) continue;
    for (int p = c->parameter_count - 1; p >= 0; p--) {
      const Instruction *param = c->parameters[p];
      if (param->user_count > 0 || param == c->root) continue;
      computation_remove_parameter(c, p);
      module_remove_call_operand(m, c, p);
      changed = true;
    }
  }
  mem_free(is_function);
  return changed;
}

bool eliminate_dead_code(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx, (void)failed, (void)st;
  /* A removed parameter frees the operand at its call sites, which may have
   * been the caller's only use of one of its own parameters: go round until
   * nothing more dies. Computations last: a dead call is what keeps its
   * callee reachable. */
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (int k = 0; k < m->computation_count; k++) again |= computation_remove_dead(m->computations[k]);
    again |= module_remove_unused_parameters(m);
    changed |= again;
  }
  changed |= module_remove_dead_computations(m);
  return changed;
}
