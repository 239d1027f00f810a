/* Pass "cse": common subexpression elimination.
 *
 * Two instructions of one computation that are identical (same opcode,
 * shape with layout, operands, called computations and attributes; see
 * instruction_identical) compute the same value, so the later one's users
 * can read the earlier one. Walking in order makes this transitive: once
 * the second `add(x, y)` reads the first, two `multiply(add, z)` become
 * identical too. Constants with the same bits merge the same way.
 *
 * Computations merge too: two non-entry computations with the same
 * instructions in the same order (names aside) are one, so that every
 * `reduce` calling its own copy of an `add` reducer ends up calling one.
 * (Not fusion bodies: each fusion owns its own.)
 *
 * Instructions with effects (custom-call, collectives, rng-bit-generator,
 * calls of computations that do those) are never merged: running one twice
 * is not the same as running it once.
 *
 * requires: verified. breaks: schedule. Leaves the merged copies dead for dce.
 */
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"

/* ---- instructions ---- */

static uint64_t hash_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

static uint64_t instruction_hash(const Instruction *inst) {
  uint64_t h = hash_mix(0, (uint64_t)inst->opcode);
  h = hash_mix(h, (uint64_t)inst->shape.type);
  for (int d = 0; d < inst->shape.rank; d++) h = hash_mix(h, (uint64_t)inst->shape.dims[d]);
  for (int k = 0; k < inst->operand_count; k++) h = hash_mix(h, (uint64_t)(uintptr_t)inst->operands[k]);
  for (int k = 0; k < inst->called_count; k++) h = hash_mix(h, (uint64_t)(uintptr_t)inst->called[k]);
  return hash_mix(h, attrs_hash(&inst->attrs));
}

/* An open-addressing set of the instructions seen so far in a computation. */
typedef struct InstructionSet {
  const Instruction **slots;
  uint64_t *hashes;
  size_t capacity;     /* a power of two, at least twice the count */
} InstructionSet;

static void instruction_set_init(InstructionSet *set, int count) {
  set->capacity = 16;
  while (set->capacity < 2 * (size_t)count + 2) set->capacity *= 2;
  set->slots = mem_calloc(set->capacity, sizeof *set->slots);
  set->hashes = mem_calloc(set->capacity, sizeof *set->hashes);
}

static void instruction_set_free(InstructionSet *set) {
  mem_free(set->slots);
  mem_free(set->hashes);
}

/* The earlier instruction identical to inst, or NULL after adding inst. */
static const Instruction *instruction_set_find_or_add(InstructionSet *set, const Instruction *inst) {
  uint64_t h = instruction_hash(inst);
  size_t mask = set->capacity - 1;
  for (size_t at = (size_t)h & mask;; at = (at + 1) & mask) {
    const Instruction *seen = set->slots[at];
    if (!seen) {
      set->slots[at] = inst;
      set->hashes[at] = h;
      return NULL;
    }
    if (set->hashes[at] == h && instruction_identical(seen, inst)) return seen;
  }
}

/* Parameters are distinct by number, and instructions with effects must
 * each run. */
static bool instruction_is_mergeable(const Instruction *inst) {
  return inst->opcode != OP_PARAMETER && !instruction_has_effects(inst);
}

static bool computation_merge_identical_instructions(Computation *c) {
  InstructionSet seen;
  instruction_set_init(&seen, c->instruction_count);
  bool changed = false;
  for (int i = 0; i < c->instruction_count; i++) {
    Instruction *inst = c->instructions[i];
    if (!instruction_is_mergeable(inst)) continue;
    const Instruction *earlier = instruction_set_find_or_add(&seen, inst);
    if (!earlier) continue;
    instruction_replace_all_uses(inst, (Instruction *)earlier);
    changed = true;
  }
  instruction_set_free(&seen);
  return changed;
}

/* ---- computations ---- */

/* Instruction k of a and of b do the same thing to the same positions. */
static bool instructions_match(const Instruction *x, const Instruction *y) {
  if (x->opcode != y->opcode || x->operand_count != y->operand_count ||
      x->called_count != y->called_count || !shape_identical(&x->shape, &y->shape) ||
      !attrs_equal(&x->attrs, &y->attrs))
    return false;
  for (int k = 0; k < x->operand_count; k++)
    if (x->operands[k]->index != y->operands[k]->index) return false;
  for (int k = 0; k < x->called_count; k++)
    if (x->called[k] != y->called[k]) return false;
  return true;
}

/* Same instructions in the same order, names aside. Called computations
 * compare by identity: callees merge first (module order puts them first),
 * which is what lets their callers match afterwards. */
static bool computations_match(const Computation *a, const Computation *b) {
  if (a->instruction_count != b->instruction_count || a->parameter_count != b->parameter_count ||
      a->root->index != b->root->index)
    return false;
  for (int i = 0; i < a->instruction_count; i++)
    if (!instructions_match(a->instructions[i], b->instructions[i])) return false;
  for (int i = 0; i < a->instruction_count; i++)
    if (instruction_has_effects(a->instructions[i])) return false;
  return true;
}

static void module_redirect_calls(Module *m, const Computation *from, Computation *to) {
  for (int k = 0; k < m->computation_count; k++) {
    Computation *c = m->computations[k];
    for (int i = 0; i < c->instruction_count; i++) {
      Instruction *inst = c->instructions[i];
      for (int q = 0; q < inst->called_count; q++)
        if (inst->called[q] == from) inst->called[q] = to;
    }
  }
}

/* A cheap fingerprint, so that only likely matches are compared in full. */
static uint64_t computation_fingerprint(const Computation *c) {
  uint64_t h = hash_mix((uint64_t)c->instruction_count, (uint64_t)c->parameter_count);
  for (int i = 0; i < c->instruction_count; i++) h = hash_mix(h, (uint64_t)c->instructions[i]->opcode);
  return h;
}

/* Fusion bodies are left alone: each fusion owns its body, and the passes
 * after fusion may edit one body without expecting to edit another. */
static void module_mark_fusion_bodies(const Module *m, bool *is_fusion_body) {
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *caller = m->computations[k];
    for (int i = 0; i < caller->instruction_count; i++) {
      const Instruction *inst = caller->instructions[i];
      if (inst->opcode != OP_FUSION || inst->called_count == 0) continue;
      for (int j = 0; j < m->computation_count; j++) is_fusion_body[j] |= m->computations[j] == inst->called[0];
    }
  }
}

/* The later copy's callers call the earlier one; the copy is removed at
 * once (nothing calls it any more). Callers of the copy may sit before the
 * kept computation in module order, so the order is sorted again. */
static bool module_merge_identical_computations(Module *m) {
  int n = m->computation_count;
  bool *skip = mem_calloc((size_t)n, sizeof *skip);
  uint64_t *fingerprints = mem_calloc((size_t)n, sizeof *fingerprints);
  module_mark_fusion_bodies(m, skip);
  for (int k = 0; k < n; k++) {
    skip[k] |= m->computations[k]->is_entry;
    fingerprints[k] = computation_fingerprint(m->computations[k]);
  }
  /* Removed computations stay in these arrays; `gone` marks them. */
  Computation **order = mem_calloc((size_t)n, sizeof *order);
  memcpy(order, m->computations, sizeof *order * (size_t)n);
  bool *gone = mem_calloc((size_t)n, sizeof *gone);
  bool changed = false;
  for (int j = 0; j < n; j++) {
    if (skip[j]) continue;
    for (int i = 0; i < j; i++) {
      if (skip[i] || gone[i] || fingerprints[i] != fingerprints[j] || !computations_match(order[i], order[j]))
        continue;
      module_redirect_calls(m, order[j], order[i]);
      module_remove_computation(m, order[j]);
      gone[j] = changed = true;
      break;
    }
  }
  mem_free(skip);
  mem_free(fingerprints);
  mem_free(order);
  mem_free(gone);
  if (changed) module_sort_computations(m);
  return changed;
}

bool eliminate_common_subexpressions(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx, (void)failed, (void)st;
  bool changed = module_merge_identical_computations(m);
  for (int k = 0; k < m->computation_count; k++)
    changed |= computation_merge_identical_instructions(m->computations[k]);
  return changed;
}
