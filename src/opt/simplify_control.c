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
  Instruction **copies = mem_calloc((size_t)callee->instruction_count, sizeof *copies);
  int most = 1;
  for (int i = 0; i < callee->instruction_count; i++)
    if (callee->instructions[i]->operand_count > most) most = callee->instructions[i]->operand_count;
  Instruction **operands = mem_calloc((size_t)most, sizeof *operands);
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
  mem_free(operands);
  mem_free(copies);
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
Instruction *simplify_rule_call_inline(Instruction *inst) {
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
Instruction *simplify_rule_conditional_known_branch(Instruction *inst) {
  if (inst->opcode != OP_CONDITIONAL || inst->operand_count != inst->called_count + 1) return NULL;
  int chosen = conditional_known_branch(inst);
  if (chosen < 0) return NULL;
  const Computation *branch = inst->called[chosen];
  if (branch->parameter_count != 1 || !inlined_shape_fits(inst, branch, &inst->operands[1 + chosen]))
    return NULL;
  return computation_inline(inst->parent, branch, &inst->operands[1 + chosen]);
}

/* ---- while loops ----
 *
 * A loop's state is one tuple: the condition and the body each take it as
 * their parameter, the body returns the next one. Both rewrites below make
 * a new loop with a different state tuple: they copy the condition and the
 * body (another loop may share them), retype the copies' parameters, and
 * leave the old loop dead for dce. The old loop's users read the new one
 * through a tuple of its elements, which the tuple rules then see through. */

static Shape shape_tuple_of(Arena *arena, const Shape *elements, int count) {
  Shape s = {0};
  s.type = TYPE_TUPLE;
  s.tuple_count = count;
  s.tuple_shapes = arena_alloc(arena, sizeof(Shape) * (size_t)(count > 0 ? count : 1));
  for (int i = 0; i < count; i++) s.tuple_shapes[i] = elements[i];
  return s;
}

static Instruction *add_tuple_element(Computation *c, Instruction *tuple, int index) {
  if (tuple->opcode == OP_TUPLE) return tuple->operands[index];
  Attrs attrs = {0};
  attrs.tuple_index = index;
  return computation_add_instruction(c, OP_GET_TUPLE_ELEMENT, &tuple, 1, NULL, 0, &attrs,
                                     &tuple->shape.tuple_shapes[index], "get-tuple-element");
}

static Instruction *add_tuple(Computation *c, Instruction *const *elements, int count) {
  Arena *arena = &c->module->arena;
  Shape *shapes = arena_alloc(arena, sizeof(Shape) * (size_t)(count > 0 ? count : 1));
  for (int i = 0; i < count; i++) shapes[i] = elements[i]->shape;
  Shape shape = shape_tuple_of(arena, shapes, count);
  Attrs attrs = {0};
  return computation_add_instruction(c, OP_TUPLE, elements, count, NULL, 0, &attrs, &shape, "tuple");
}

/* Whether a computation's one parameter is read only through
 * get-tuple-element (so each element's readers are known). */
static bool parameter_read_by_elements(const Computation *c) {
  if (c->parameter_count != 1) return false;
  const Instruction *param = c->parameters[0];
  if (param == c->root) return false;
  for (int u = 0; u < param->user_count; u++)
    if (param->users[u]->opcode != OP_GET_TUPLE_ELEMENT) return false;
  return true;
}

/* Removes what nothing reads from a copied loop computation, so that no
 * instruction is left reading an element that is about to go. */
static void computation_sweep_unread(Computation *c) {
  for (int i = c->instruction_count - 1; i >= 0; i--) {
    Instruction *inst = c->instructions[i];
    bool kept = inst->user_count > 0 || inst == c->root || inst->opcode == OP_PARAMETER;
    if (kept || instruction_has_effects(inst)) continue;
    computation_remove_instruction(c, inst);
  }
}

/* Gives a loop computation's parameter the new state shape; its
 * get-tuple-elements read element renumber[old index]. Those reading an
 * element that is gone (renumber -1) must be unused by now: they go. */
static void loop_parameter_retype(Computation *c, const Shape *state, const int *renumber) {
  Instruction *param = c->parameters[0];
  param->shape = shape_copy_into_arena(state, &c->module->arena);
  int count = param->user_count;
  Instruction **readers = mem_calloc((size_t)count + 1, sizeof *readers);
  for (int u = 0; u < count; u++) readers[u] = param->users[u];
  for (int u = 0; u < count; u++) {
    Instruction *gte = readers[u];
    int index = renumber[gte->attrs.tuple_index];
    if (index >= 0) gte->attrs.tuple_index = index;
    else computation_remove_instruction(c, gte);
  }
  mem_free(readers);
}

/* The new loop, and the old loop's users moved onto it through a tuple of
 * the old shape: old element j is the new loop's element renumber[j], and
 * an element that is gone (which no user reads) is filled in from the old
 * initial state, only to keep the tuple's shape. */
static void loop_replace(Instruction *loop, Instruction *init, Computation *condition, Computation *body,
                         const int *renumber) {
  Computation *c = loop->parent;
  Computation *called[2] = {condition, body};
  Instruction *next = computation_add_instruction(c, OP_WHILE, &init, 1, called, 2, &loop->attrs, &init->shape,
                                                  loop->name);
  next->metadata = loop->metadata;
  int old_count = loop->shape.tuple_count;
  Instruction **elements = mem_calloc((size_t)old_count + 1, sizeof *elements);
  for (int j = 0; j < old_count; j++)
    elements[j] = renumber[j] >= 0 ? add_tuple_element(c, next, renumber[j])
                                   : add_tuple_element(c, loop->operands[0], j);
  instruction_replace_all_uses(loop, add_tuple(c, elements, old_count));
  mem_free(elements);
  module_sort_computations(c->module);
}

/* A get-tuple-element that nothing reads reads nothing. */
static bool instruction_is_unread(const Instruction *inst) {
  return inst->user_count == 0 && inst != inst->parent->root;
}

/* Which elements of a loop's state matter: those read after the loop,
 * those the condition reads, and those the next value of an element that
 * matters depends on. false when the loop is not in a form this can tell
 * (then every element matters). */
static bool loop_find_read_elements(const Instruction *loop, bool *read) {
  const Computation *cond = loop->called[0], *body = loop->called[1];
  if (!shape_is_tuple(&loop->shape) || loop == loop->parent->root || body->root->opcode != OP_TUPLE ||
      !parameter_read_by_elements(cond) || !parameter_read_by_elements(body))
    return false;
  for (int u = 0; u < loop->user_count; u++) {
    const Instruction *user = loop->users[u];
    if (user->opcode != OP_GET_TUPLE_ELEMENT) return false;
    if (!instruction_is_unread(user)) read[user->attrs.tuple_index] = true;
  }
  const Instruction *cond_param = cond->parameters[0];
  for (int u = 0; u < cond_param->user_count; u++)
    if (!instruction_is_unread(cond_param->users[u])) read[cond_param->users[u]->attrs.tuple_index] = true;
  /* An element is read when the next value of a read element depends on
   * it: follow each read element's slot of the body's root back to the
   * elements it comes from, until no more turn up. */
  int n = loop->shape.tuple_count, size = body->instruction_count;
  bool *followed = mem_calloc((size_t)n, sizeof *followed);
  bool *visited = mem_calloc((size_t)size, sizeof *visited);
  const Instruction **stack = mem_calloc((size_t)size + 1, sizeof *stack);
  for (bool more = true; more;) {
    more = false;
    for (int k = 0; k < n; k++) {
      if (!read[k] || followed[k]) continue;
      followed[k] = more = true;
      /* marked when pushed, so each instruction is pushed once at most */
      int depth = 0;
      const Instruction *start = body->root->operands[k];
      if (!visited[start->index]) visited[start->index] = true, stack[depth++] = start;
      while (depth > 0) {
        const Instruction *inst = stack[--depth];
        if (inst->opcode == OP_GET_TUPLE_ELEMENT && inst->operands[0] == body->parameters[0]) {
          read[inst->attrs.tuple_index] = true;
          continue;
        }
        for (int q = 0; q < inst->operand_count; q++) {
          const Instruction *operand = inst->operands[q];
          if (!visited[operand->index]) visited[operand->index] = true, stack[depth++] = operand;
        }
      }
    }
  }
  mem_free(followed);
  mem_free(visited);
  mem_free(stack);
  return true;
}

/* while(init) whose state has elements nobody reads (not after the loop,
 * not the condition, not the body except to carry them over) = the same
 * loop without them: they cannot change any element that is read. */
static bool loop_drop_unread_state(Instruction *loop) {
  int n = loop->shape.type == TYPE_TUPLE ? loop->shape.tuple_count : 0;
  bool *read = mem_calloc((size_t)n + 1, sizeof *read);
  int *renumber = mem_calloc((size_t)n + 1, sizeof *renumber);
  int kept = 0;
  bool known = loop_find_read_elements(loop, read);
  for (int j = 0; j < n; j++) renumber[j] = read[j] ? kept++ : -1;
  bool changed = known && kept > 0 && kept < n;
  if (changed) {
    Computation *c = loop->parent;
    Module *m = c->module;
    Instruction **elements = mem_calloc((size_t)n, sizeof *elements);
    Shape *shapes = arena_alloc(&m->arena, sizeof(Shape) * (size_t)n);
    for (int j = 0; j < n; j++)
      if (read[j]) shapes[renumber[j]] = loop->shape.tuple_shapes[j];
    Shape state = shape_tuple_of(&m->arena, shapes, kept);
    for (int j = 0; j < n; j++)
      if (read[j]) elements[renumber[j]] = add_tuple_element(c, loop->operands[0], j);
    Instruction *init = add_tuple(c, elements, kept);
    Computation *cond = computation_clone(m, loop->called[0], NULL);
    Computation *body = computation_clone(m, loop->called[1], NULL);
    Instruction *old_root = body->root;
    for (int j = 0; j < n; j++)
      if (read[j]) elements[renumber[j]] = old_root->operands[j];
    computation_set_root(body, add_tuple(body, elements, kept));
    computation_sweep_unread(body);
    computation_sweep_unread(cond);
    loop_parameter_retype(cond, &state, renumber);
    loop_parameter_retype(body, &state, renumber);
    loop_replace(loop, init, cond, body, renumber);
    mem_free(elements);
  }
  mem_free(read);
  mem_free(renumber);
  return changed;
}

/* Worth a place in the loop state: real work. Constants, relabelling
 * (reshape, bitcast) and size-inflating ops (broadcast, iota) are cheaper
 * to redo each trip than to carry. */
static bool instruction_worth_hoisting(const Instruction *inst) {
  switch (inst->opcode) {
  case OP_CONSTANT: case OP_PARAMETER: case OP_GET_TUPLE_ELEMENT: case OP_TUPLE: case OP_BROADCAST:
  case OP_IOTA: case OP_RESHAPE: case OP_BITCAST:
    return false;
  default:
    return !shape_is_tuple(&inst->shape);
  }
}

/* invariant[i]: body instruction i has the same value on every trip. The
 * elements the body passes on unchanged (root slot j is the body's own
 * element j) are invariant, and so is what is computed from them and from
 * constants alone, without effects. */
static void loop_find_invariants(const Computation *body, bool *invariant) {
  const Instruction *param = body->parameters[0], *root = body->root;
  for (int i = 0; i < body->instruction_count; i++) {
    const Instruction *inst = body->instructions[i];
    if (inst == root || inst->opcode == OP_PARAMETER) continue;
    if (inst->opcode == OP_GET_TUPLE_ELEMENT && inst->operands[0] == param) {
      const Instruction *next = root->operands[inst->attrs.tuple_index];
      invariant[i] = next->opcode == OP_GET_TUPLE_ELEMENT && next->operands[0] == param &&
                     next->attrs.tuple_index == inst->attrs.tuple_index;
      continue;
    }
    if (instruction_has_effects(inst)) continue;
    bool all = true;
    for (int k = 0; k < inst->operand_count && all; k++) all = invariant[inst->operands[k]->index];
    invariant[i] = all;
  }
}

/* hoist[i]: invariant work that something staying in the body reads (a
 * varying instruction, the root, or cheap invariant work such as a
 * broadcast, which stays and is redone each trip): the frontier of what
 * moves out. Users come later, so a backward walk knows their fate first.
 * needed[i]: what the hoisted need, copied out with them. */
static int loop_choose_hoisted(const Computation *body, const bool *invariant, bool *hoist, bool *needed) {
  int count = 0;
  for (int i = body->instruction_count - 1; i >= 0; i--) {
    const Instruction *inst = body->instructions[i];
    if (!invariant[i] || !instruction_worth_hoisting(inst)) continue;
    for (int u = 0; u < inst->user_count && !hoist[i]; u++) hoist[i] = !hoist[inst->users[u]->index];
    count += hoist[i];
  }
  for (int i = body->instruction_count - 1; i >= 0; i--) {
    if (!hoist[i] && !needed[i]) continue;
    const Instruction *inst = body->instructions[i];
    if (inst->opcode == OP_GET_TUPLE_ELEMENT && inst->operands[0] == body->parameters[0]) continue;
    for (int k = 0; k < inst->operand_count; k++) needed[inst->operands[k]->index] = true;
  }
  return count;
}

/* Copies the hoisted instructions and what they need in front of the loop;
 * the body's invariant elements read the loop's initial state there.
 * outside[i] is the copy of body instruction i. */
static void loop_copy_out(Instruction *loop, const Computation *body, const bool *hoist, const bool *needed,
                          Instruction **outside) {
  Computation *c = loop->parent;
  int most = 1;
  for (int i = 0; i < body->instruction_count; i++)
    if (body->instructions[i]->operand_count > most) most = body->instructions[i]->operand_count;
  Instruction **operands = mem_calloc((size_t)most, sizeof *operands);
  for (int i = 0; i < body->instruction_count; i++) {
    if (!hoist[i] && !needed[i]) continue;
    const Instruction *inst = body->instructions[i];
    if (inst->opcode == OP_GET_TUPLE_ELEMENT && inst->operands[0] == body->parameters[0]) {
      outside[i] = add_tuple_element(c, loop->operands[0], (int)inst->attrs.tuple_index);
      continue;
    }
    for (int k = 0; k < inst->operand_count; k++) operands[k] = outside[inst->operands[k]->index];
    outside[i] = instruction_clone(c, inst, operands, NULL);
  }
  mem_free(operands);
}

/* Loop-invariant code motion: work in a while body that gives the same
 * value on every trip is done once, before the loop, and carried in as a
 * new state element that the body passes on unchanged. (When the loop runs
 * no trip the work is wasted, but the result is the same: it has no
 * effects.) */
static bool loop_hoist_invariants(Instruction *loop) {
  Computation *body = loop->called[1];
  if (!shape_is_tuple(&loop->shape) || body->root->opcode != OP_TUPLE || !parameter_read_by_elements(body) ||
      !parameter_read_by_elements(loop->called[0]))
    return false;
  int size = body->instruction_count, n = loop->shape.tuple_count;
  bool *invariant = mem_calloc((size_t)size, sizeof *invariant);
  bool *hoist = mem_calloc((size_t)size, sizeof *hoist);
  bool *needed = mem_calloc((size_t)size, sizeof *needed);
  loop_find_invariants(body, invariant);
  int count = loop_choose_hoisted(body, invariant, hoist, needed);
  if (count > 0) {
    Computation *c = loop->parent;
    Module *m = c->module;
    Instruction **outside = mem_calloc((size_t)size, sizeof *outside);
    loop_copy_out(loop, body, hoist, needed, outside);
    Instruction **elements = mem_calloc((size_t)(n + count), sizeof *elements);
    Shape *shapes = arena_alloc(&m->arena, sizeof(Shape) * (size_t)(n + count));
    int *renumber = mem_calloc((size_t)n, sizeof *renumber);
    for (int j = 0; j < n; j++) {
      renumber[j] = j;
      elements[j] = add_tuple_element(c, loop->operands[0], j);
      shapes[j] = loop->shape.tuple_shapes[j];
    }
    for (int i = 0, h = n; i < size; i++)
      if (hoist[i]) shapes[h] = body->instructions[i]->shape, elements[h++] = outside[i];
    Shape state = shape_tuple_of(&m->arena, shapes, n + count);
    Instruction *init = add_tuple(c, elements, n + count);
    Computation *cond = computation_clone(m, loop->called[0], NULL);
    Computation *new_body = computation_clone(m, body, NULL);
    loop_parameter_retype(cond, &state, renumber);
    loop_parameter_retype(new_body, &state, renumber);
    /* In the copy, each hoisted instruction is replaced by its element
     * (the copy keeps the body's order, so index i is still i). */
    Instruction *param = new_body->parameters[0];
    for (int i = 0, h = n; i < size; i++) {
      if (!hoist[i]) continue;
      Instruction *carried = add_tuple_element(new_body, param, h++);
      instruction_replace_all_uses(new_body->instructions[i], carried);
    }
    Instruction *old_root = new_body->root;
    for (int j = 0; j < n; j++) elements[j] = old_root->operands[j];
    for (int h = n; h < n + count; h++) elements[h] = add_tuple_element(new_body, param, h);
    computation_set_root(new_body, add_tuple(new_body, elements, n + count));
    computation_remove_instruction(new_body, old_root);
    Status st;
    computation_sort(new_body, &st);
    loop_replace(loop, init, cond, new_body, renumber);
    mem_free(outside);
    mem_free(elements);
    mem_free(renumber);
  }
  mem_free(invariant);
  mem_free(hoist);
  mem_free(needed);
  return count > 0;
}

/* Loops are rewritten whole, so they are visited here rather than through
 * the rule table: a snapshot of c's while loops, each tried in turn. */
bool computation_simplify_loops(Computation *c) {
  int count = 0;
  for (int i = 0; i < c->instruction_count; i++) count += c->instructions[i]->opcode == OP_WHILE;
  if (count == 0) return false;
  Instruction **loops = mem_calloc((size_t)count, sizeof *loops);
  count = 0;
  for (int i = 0; i < c->instruction_count; i++)
    if (c->instructions[i]->opcode == OP_WHILE) loops[count++] = c->instructions[i];
  bool changed = false;
  for (int i = 0; i < count; i++) {
    Instruction *loop = loops[i];
    if (instruction_is_unread(loop) || instruction_has_effects(loop)) continue;
    if (loop_drop_unread_state(loop) || loop_hoist_invariants(loop)) changed = true;
  }
  mem_free(loops);
  return changed;
}
