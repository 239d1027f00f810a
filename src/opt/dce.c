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
 * because the verifier rules out cycles of calls. */
bool instruction_has_effects(const Instruction *inst) {
  if (opcode_has_side_effects(inst->opcode)) return true;
  for (int k = 0; k < inst->called_count; k++) {
    const Computation *callee = inst->called[k];
    for (int i = 0; i < callee->instruction_count; i++)
      if (instruction_has_effects(callee->instructions[i])) return true;
  }
  return false;
}

static bool instruction_is_dead(const Instruction *inst) {
  return inst->user_count == 0 && inst != inst->parent->root && inst->opcode != OP_PARAMETER &&
         !instruction_has_effects(inst);
}

/* Walking backwards removes a whole dead chain in one sweep: an operand
 * comes before its users, so by the time it is visited its dead users are
 * already gone. */
static bool computation_remove_dead(Computation *c) {
  bool changed = false;
  for (int i = c->instruction_count - 1; i >= 0; i--) {
    Instruction *inst = c->instructions[i];
    if (!instruction_is_dead(inst)) continue;
    computation_remove_instruction(c, inst);
    changed = true;
  }
  return changed;
}

/* Marks every computation reachable from the entry through called lists. */
static void computation_mark_reachable(const Module *m, const Computation *c, bool *reachable) {
  int at = -1;
  for (int k = 0; k < m->computation_count; k++)
    if (m->computations[k] == c) at = k;
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
  bool *reachable = calloc_or_exit((size_t)m->computation_count, sizeof *reachable);
  computation_mark_reachable(m, m->entry, reachable);
  bool changed = false;
  for (int k = m->computation_count - 1; k >= 0; k--) {
    if (reachable[k]) continue;
    module_remove_computation(m, m->computations[k]);
    changed = true;
  }
  free(reachable);
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
  for (int u = 0; u < gone->user_count; u++) {
    if (gone->users[u] != inst) continue;
    memmove(&gone->users[u], &gone->users[u + 1], sizeof(Instruction *) * (size_t)(gone->user_count - u - 1));
    gone->user_count--;
    return;
  }
}

/* True when every instruction that calls c is a call or a fusion, whose
 * operands are c's parameters one for one (and there is at least one). */
static bool computation_called_only_as_function(const Module *m, const Computation *c) {
  int callers = 0;
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *caller = m->computations[k];
    for (int i = 0; i < caller->instruction_count; i++) {
      const Instruction *inst = caller->instructions[i];
      for (int q = 0; q < inst->called_count; q++) {
        if (inst->called[q] != c) continue;
        if (inst->opcode != OP_CALL && inst->opcode != OP_FUSION) return false;
        callers++;
      }
    }
  }
  return callers > 0;
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
  for (int k = 0; k < m->computation_count; k++) {
    Computation *c = m->computations[k];
    if (c->is_entry || !computation_called_only_as_function(m, c)) continue;
    for (int p = c->parameter_count - 1; p >= 0; p--) {
      const Instruction *param = c->parameters[p];
      if (param->user_count > 0 || param == c->root) continue;
      computation_remove_parameter(c, p);
      module_remove_call_operand(m, c, p);
      changed = true;
    }
  }
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
