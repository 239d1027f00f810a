/* Pass "layout-copies": a value passed on unchanged keeps its layout, and a
 * copy converts it where the text names another one.
 *
 * A layout says where an array's elements lie in memory, never what they
 * are. The ops that pass a value on (tuple, get-tuple-element, opt-barrier,
 * domain, add-dependency, the collectives of one replica, the asynchronous
 * copy and collective pairs) and the boundaries of called computations (a
 * while's state, a conditional's, call's or async pair's parameters and
 * results, and a fusion XLA's optimizer wrote, whose fused parameters and
 * root are its operands and result) hand their operand's storage on as it
 * is: the buffer plan names
 * one storage, and the backends read its bytes in the layout of whichever
 * shape they hold. HLO text may name another layout at the receiving end (text
 * without a layout names the default one, so a column-major parameter put
 * in a tuple written without layouts is one), where XLA's layout
 * assignment would have put a copy. This pass puts it there, so that
 * afterwards both ends of every forward name the same layout:
 *   - an operand that a forward or a callee's parameter takes in another
 *     layout is copied into it (a tuple element by element);
 *   - a forward whose own shape names another layout than the value it
 *     passes on (get-tuple-element, copy-done, a call's or while's result)
 *     takes the value's layout, and its users read a copy in the layout the
 *     text named;
 *   - a while's condition takes its state in the body's layout, and a
 *     body's or branch's root is copied into the layout its caller names.
 * A few ops are computed in the default layout only (a backend walks their
 * arrays in row-major order: scatter, sort and top-k, the linear algebra,
 * scan, rng-bit-generator, ragged-all-to-all): their operands are copied
 * into it, and their result out of it, when they are not.
 *
 * requires: verified; runs first, before any pass that forwards values.
 * breaks:   the operands-before-users order (restored by sorting). */
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"

/* ---- copies between layouts ---- */

/* v in the layouts of `want` (same type, dims and tuple structure as v's
 * shape): v itself when they already agree, else a copy, element by element
 * through tuples. New instructions are appended to c. */
static Instruction *relayout(Computation *c, Instruction *v, const Shape *want) {
  if (shape_identical(&v->shape, want) || !shape_equal(&v->shape, want)) return v;
  Attrs attrs = {0};
  if (!shape_is_tuple(want))
    return computation_add_instruction(c, OP_COPY, &v, 1, NULL, 0, &attrs, want, "layout_copy");
  int n = want->tuple_count;
  Instruction **elements = mem_calloc((size_t)n + 1, sizeof *elements);
  for (int i = 0; i < n; i++) {
    Instruction *element = v->opcode == OP_TUPLE ? v->operands[i] : NULL;
    if (!element) {
      Attrs index = {.tuple_index = i};
      element = computation_add_instruction(c, OP_GET_TUPLE_ELEMENT, &v, 1, NULL, 0, &index,
                                            &v->shape.tuple_shapes[i], NULL);
    }
    elements[i] = relayout(c, element, &want->tuple_shapes[i]);
  }
  Instruction *t = computation_add_instruction(c, OP_TUPLE, elements, n, NULL, 0, &attrs, want, NULL);
  mem_free(elements);
  return t;
}

/* Operand k of inst, as shape `want` names it. */
static bool operand_take_layout(Instruction *inst, int k, const Shape *want) {
  Instruction *from = inst->operands[k];
  Instruction *to = relayout(inst->parent, from, want);
  if (to == from) return false;
  instruction_set_operand(inst, k, to);
  return true;
}

/* inst's users (and its computation, if it is the root) read inst in the
 * layouts its shape names now, while inst takes those of `carried` (the
 * value it passes on): they read a copy. Works for parameters too. */
static bool result_take_layout(Instruction *inst, const Shape *carried) {
  if (shape_identical(&inst->shape, carried) || !shape_equal(&inst->shape, carried)) return false;
  Computation *c = inst->parent;
  Shape named = inst->shape;
  int user_count = inst->user_count;
  Instruction **users = mem_calloc((size_t)user_count + 1, sizeof *users);
  if (user_count) memcpy(users, inst->users, (size_t)user_count * sizeof *users);
  bool was_root = c->root == inst;
  inst->shape = shape_copy_into_arena(carried, &c->module->arena);
  Instruction *copy = relayout(c, inst, &named);
  for (int u = 0; u < user_count; u++)
    for (int k = 0; k < users[u]->operand_count; k++)
      if (users[u]->operands[k] == inst) instruction_set_operand(users[u], k, copy);
  if (was_root) computation_set_root(c, copy);
  mem_free(users);
  return true;
}

/* The root of callee, copied into the layouts `want` names. */
static bool root_take_layout(Computation *callee, const Shape *want) {
  Instruction *root = callee->root;
  Instruction *copy = relayout(callee, root, want);
  if (copy == root) return false;
  computation_set_root(callee, copy);
  return true;
}

/* s with the default layout on every array, in arena. */
static Shape shape_row_major(const Shape *s, Arena *arena) {
  Shape out = shape_copy_into_arena(s, arena);
  if (!shape_is_tuple(&out)) shape_set_default_layout(&out);
  for (int i = 0; shape_is_tuple(&out) && i < out.tuple_count; i++)
    out.tuple_shapes[i] = shape_row_major(&out.tuple_shapes[i], arena);
  return out;
}

/* ---- the rules, by what an op does with its operands ---- */

/* Ops whose operand k is part k of the result (the whole result when there
 * is one operand): on one replica the collectives are identities. */
static bool forwards_operands(Opcode op) {
  switch (op) {
  case OP_TUPLE: case OP_OPTIMIZATION_BARRIER: case OP_DOMAIN: case OP_ALL_REDUCE: case OP_ALL_GATHER:
  case OP_REDUCE_SCATTER: case OP_ALL_TO_ALL: case OP_COLLECTIVE_BROADCAST: case OP_COLLECTIVE_REDUCE:
  case OP_ALL_REDUCE_START: case OP_ALL_REDUCE_DONE:
    return true;
  default:
    return false;
  }
}

static bool fix_forwarded_operands(Instruction *inst) {
  const Shape *s = &inst->shape;
  bool changed = false;
  if (inst->opcode != OP_TUPLE && inst->operand_count == 1) return operand_take_layout(inst, 0, s);
  if (!shape_is_tuple(s) || s->tuple_count != inst->operand_count) return false;
  for (int k = 0; k < inst->operand_count; k++) changed |= operand_take_layout(inst, k, &s->tuple_shapes[k]);
  return changed;
}

/* The element of operand 0 that an op's result is: get-tuple-element's
 * index, a done's element 1 (the start's result); -1: none. */
static int64_t forwarded_element(const Instruction *inst) {
  switch (inst->opcode) {
  case OP_GET_TUPLE_ELEMENT: return inst->attrs.tuple_index;
  case OP_COPY_DONE: case OP_ASYNC_DONE: case OP_ALL_GATHER_DONE: case OP_COLLECTIVE_PERMUTE_DONE: return 1;
  default: return -1;
  }
}

static bool fix_forwarded_element(Instruction *inst, int64_t element) {
  const Shape *from = inst->operand_count == 1 ? &inst->operands[0]->shape : NULL;
  if (!from || !shape_is_tuple(from) || element < 0 || element >= from->tuple_count) return false;
  return result_take_layout(inst, &from->tuple_shapes[element]);
}

/* Element `element` of inst's tuple shape names `value`'s layouts from now
 * on (inst's users, a get-tuple-element or a done, take them in turn). */
static bool element_take_layout(Instruction *inst, int element, const Shape *value) {
  const Shape *named = &inst->shape.tuple_shapes[element];
  if (shape_identical(named, value) || !shape_equal(named, value)) return false;
  Arena *arena = &inst->parent->module->arena;
  Shape shape = shape_copy_into_arena(&inst->shape, arena);
  shape.tuple_shapes[element] = shape_copy_into_arena(value, arena);
  inst->shape = shape;
  return true;
}

/* copy-start(x) is (x, the copy, context): the copy is made in element 1's
 * layout, and element 0 names x as it now is. (add-dependency and a
 * collective-permute of one replica pass operand 0 on, too.) */
static bool fix_start(Instruction *inst) {
  const Shape *s = &inst->shape;
  if (!shape_is_tuple(s) || s->tuple_count < 2) return false;
  bool changed = operand_take_layout(inst, 0, &s->tuple_shapes[1]);
  return element_take_layout(inst, 0, &inst->operands[0]->shape) || changed;
}

/* async-start(args), calls=f, is ((args), f's result, context): the args
 * in f's parameter layouts, and elements 0 and 1 name the args and f's
 * root as they are. An update passes the start's tuple on as it is. */
static bool fix_async_start(Instruction *inst) {
  const Computation *f = inst->called[0];
  const Shape *s = &inst->shape;
  int n = inst->operand_count;
  if (!shape_is_tuple(s) || s->tuple_count < 2 || !shape_is_tuple(&s->tuple_shapes[0]) ||
      s->tuple_shapes[0].tuple_count != n || f->parameter_count != n)
    return false;
  bool changed = false;
  for (int k = 0; k < n; k++) changed |= operand_take_layout(inst, k, &f->parameters[k]->shape);
  Shape args = {.type = TYPE_TUPLE, .tuple_count = n, .tuple_shapes = mem_calloc((size_t)n + 1, sizeof(Shape))};
  for (int k = 0; k < n; k++) args.tuple_shapes[k] = inst->operands[k]->shape;
  changed |= element_take_layout(inst, 0, &args);
  mem_free(args.tuple_shapes);
  return element_take_layout(inst, 1, &f->root->shape) || changed;
}

static bool fix_async_update(Instruction *inst) {
  const Shape *value = &inst->operands[0]->shape;
  if (shape_identical(&inst->shape, value) || !shape_equal(&inst->shape, value)) return false;
  inst->shape = shape_copy_into_arena(value, &inst->parent->module->arena);
  return true;
}

/* call(args), and a fusion given in the module: args in the callee's
 * parameter layouts; the result in the callee root's. */
static bool fix_call(Instruction *inst) {
  const Computation *callee = inst->called[0];
  bool changed = false;
  for (int k = 0; k < inst->operand_count && k < callee->parameter_count; k++)
    changed |= operand_take_layout(inst, k, &callee->parameters[k]->shape);
  return result_take_layout(inst, &callee->root->shape) || changed;
}

/* while(init): the state lives in the body parameter's layouts; init, the
 * condition's parameter, the body's root and the while's result agree. */
static bool fix_while(Instruction *inst) {
  Computation *condition = inst->called[0], *body = inst->called[1];
  if (body->parameter_count != 1 || condition->parameter_count != 1) return false;
  const Shape *state = &body->parameters[0]->shape;
  bool changed = operand_take_layout(inst, 0, state);
  changed |= result_take_layout(condition->parameters[0], state);
  changed |= root_take_layout(body, state);
  return result_take_layout(inst, state) || changed;
}

/* conditional(index, args...): each branch's argument in its parameter's
 * layouts, each branch's root in the conditional's. */
static bool fix_conditional(Instruction *inst) {
  bool changed = false;
  for (int b = 0; b < inst->called_count && b + 1 < inst->operand_count; b++) {
    Computation *branch = inst->called[b];
    if (branch->parameter_count == 1) changed |= operand_take_layout(inst, b + 1, &branch->parameters[0]->shape);
    changed |= root_take_layout(branch, &inst->shape);
  }
  return changed;
}

/* The ops some backend computes in the default layout only. */
static bool computed_in_default_layout(Opcode op) {
  switch (op) {
  case OP_SCATTER: case OP_SORT: case OP_TOPK: case OP_CHOLESKY: case OP_TRIANGULAR_SOLVE: case OP_SCAN:
  case OP_RNG_BIT_GENERATOR: case OP_RAGGED_ALL_TO_ALL:
    return true;
  default:
    return false;
  }
}

/* Operands copied into the default layout, and the result out of it, when
 * any of them is in another. */
static bool fix_default_layout_op(Instruction *inst) {
  Arena *arena = &inst->parent->module->arena;
  bool changed = false;
  for (int k = 0; k < inst->operand_count; k++) {
    Shape row_major = shape_row_major(&inst->operands[k]->shape, arena);
    changed |= operand_take_layout(inst, k, &row_major);
  }
  Shape row_major = shape_row_major(&inst->shape, arena);
  return result_take_layout(inst, &row_major) || changed;
}

static bool fix_instruction(Instruction *inst) {
  if (forwards_operands(inst->opcode)) return fix_forwarded_operands(inst);
  int64_t element = forwarded_element(inst);
  if (element >= 0) return fix_forwarded_element(inst, element);
  switch (inst->opcode) {
  case OP_COPY_START: case OP_ALL_GATHER_START: case OP_COLLECTIVE_PERMUTE_START: return fix_start(inst);
  case OP_ADD_DEPENDENCY: case OP_COLLECTIVE_PERMUTE: return operand_take_layout(inst, 0, &inst->shape);
  case OP_CALL: case OP_FUSION: return inst->called_count == 1 && fix_call(inst);
  case OP_ASYNC_START: return inst->called_count == 1 && fix_async_start(inst);
  case OP_ASYNC_UPDATE: return inst->operand_count == 1 && fix_async_update(inst);
  case OP_WHILE: return inst->called_count == 2 && inst->operand_count == 1 && fix_while(inst);
  case OP_CONDITIONAL: return fix_conditional(inst);
  default: return computed_in_default_layout(inst->opcode) && fix_default_layout_op(inst);
  }
}

bool insert_layout_copies(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx;
  bool changed = false;
  /* Callees come before callers, so a caller that copies into a callee's
   * root or parameter finds the callee's own forwards already agreeing. */
  for (int c = 0; c < m->computation_count; c++) {
    Computation *comp = m->computations[c];
    int count = comp->instruction_count;  /* the copies appended need nothing */
    for (int i = 0; i < count; i++) changed |= fix_instruction(comp->instructions[i]);
  }
  if (!changed) return false;
  for (int c = 0; c < m->computation_count; c++)
    if (!computation_sort(m->computations[c], st)) {
      *failed = true;
      return true;
    }
  return true;
}
