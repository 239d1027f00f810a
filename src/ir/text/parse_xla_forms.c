/* Attributes and module-wide rules of XLA's HLO text found by checking axle
 * against the files of XLA's repository (docs/xla-check.md): custom-call
 * api_version and operand_layout_constraints, control-predecessors, and the
 * pred[] select predicate XLA allows, the X-start/X-update/X-done
 * spelling of async ops, and the legacy vector of dynamic-slice start
 * indices. The attribute readers are listed in
 * parse_attrs.c's table; the checks run from parse.c once shapes are known. */
#include <string.h>

#include "parse_internal.h"

/* api_version=API_VERSION_...: how XLA calls a custom-call target. axle
 * runs its targets itself, so the value is only checked against the names
 * XLA knows (API_VERSION_UNSPECIFIED is a placeholder XLA refuses too). */
bool parse_api_version(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  (void)notes;
  static const char *const known[] = {"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                                      "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
  Token *t = lex_peek(p);
  if (lex_token_is(t, "API_VERSION_UNSPECIFIED")) return parse_error(p, t, "invalid API version API_VERSION_UNSPECIFIED");
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (lex_token_is(t, known[i])) {
      lex_next(p);
      return true;
    }
  return parse_error(p, t, "unknown API version '%.*s'", t->len, t->text);
}

/* operand_layout_constraints={f32[2]{0}, ...}: one shape per operand, in
 * the layout the target wants. axle's targets take any layout, so the
 * layouts are dropped; the shapes are checked against the operands after
 * the parse (parse_check_layout_constraints), as XLA does. */
bool parse_operand_layout_constraints(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  LayoutConstraints lc = {.at = *lex_peek(p), .inst = inst};
  if (!lex_expect(p, "{")) return false;
  int cap = 0;
  for (int n = 0; !lex_token_is(lex_peek(p), "}"); n++) {
    if (n > 0 && !lex_expect(p, ",")) return false;
    if (lc.count == cap) {
      cap = cap ? cap * 2 : 4;
      Shape *shapes = arena_alloc(&p->module->arena, sizeof(Shape) * (size_t)cap);
      if (lc.count) memcpy(shapes, lc.shapes, sizeof(Shape) * (size_t)lc.count);
      lc.shapes = shapes;
    }
    if (!parse_shape(p, &lc.shapes[lc.count])) return false;
    lc.count++;
  }
  lex_next(p);
  if (p->constraint_count == p->constraint_cap) {
    int grown = p->constraint_cap ? p->constraint_cap * 2 : 8;
    LayoutConstraints *list = arena_alloc(&p->module->arena, sizeof(LayoutConstraints) * (size_t)grown);
    if (p->constraint_count) memcpy(list, p->constraints, sizeof(LayoutConstraints) * (size_t)p->constraint_count);
    p->constraints = list;
    p->constraint_cap = grown;
  }
  p->constraints[p->constraint_count++] = lc;
  return true;
}

/* control-predecessors={a, b}: ordering only, so not kept; the names are
 * recorded so that one naming no instruction is refused, as in XLA. */
bool parse_control_predecessors(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  (void)notes;
  if (!lex_expect(p, "{")) return false;
  for (int n = 0; !lex_token_is(lex_peek(p), "}"); n++) {
    if (n > 0 && !lex_expect(p, ",")) return false;
    Token *t = lex_peek(p);
    if (t->kind != TK_WORD) return parse_error(p, t, "expected an instruction name");
    if (p->control_count == p->control_cap) {
      int cap = p->control_cap ? p->control_cap * 2 : 16;
      Token *names = arena_alloc(&p->module->arena, sizeof(Token) * (size_t)cap);
      int *comps = arena_alloc(&p->module->arena, sizeof(int) * (size_t)cap);
      if (p->control_count) {
        memcpy(names, p->control_names, sizeof(Token) * (size_t)p->control_count);
        memcpy(comps, p->control_comps, sizeof(int) * (size_t)p->control_count);
      }
      p->control_names = names;
      p->control_comps = comps;
      p->control_cap = cap;
    }
    p->control_names[p->control_count] = *t;
    p->control_comps[p->control_count++] = p->current_comp;
    lex_next(p);
  }
  lex_next(p);
  return true;
}

/* A custom-call's operand_layout_constraints give one shape per operand,
 * each the operand's own (layouts aside). */
bool parse_check_layout_constraints(Parser *p) {
  for (int i = 0; i < p->constraint_count; i++) {
    const LayoutConstraints *lc = &p->constraints[i];
    if (lc->count != lc->inst->operand_count)
      return parse_error(p, &lc->at, "operand_layout_constraints gives %d shapes for %d operands", lc->count,
                         lc->inst->operand_count);
    for (int k = 0; k < lc->count; k++)
      if (!shape_equal(&lc->shapes[k], &lc->inst->operands[k]->shape))
        return parse_error(p, &lc->at, "operand_layout_constraints: shape %d does not match operand %d ('%s')", k, k,
                           lc->inst->operands[k]->name);
  }
  return true;
}

/* XLA's select takes a pred[] predicate with array operands (one choice
 * for every element). axle's IR keeps select's predicate the operands'
 * dimensions, so such a predicate is broadcast here: the backends see one
 * form only, and the module means what XLA means by it. */
void parse_broadcast_scalar_select_predicates(Module *m) {
  for (int c = 0; c < m->computation_count; c++) {
    Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++) {
      Instruction *inst = comp->instructions[i];
      if (inst->opcode != OP_SELECT || inst->operand_count != 3) continue;
      const Shape *pred = &inst->operands[0]->shape, *value = &inst->operands[1]->shape;
      if (shape_is_tuple(pred) || pred->type != TYPE_PRED || pred->rank != 0) continue;
      if (shape_is_tuple(value) || value->type == TYPE_TOKEN || value->rank == 0) continue;
      Shape wide = shape_array(TYPE_PRED, value->rank, value->dims);
      Attrs attrs = {0};
      Instruction *operand = inst->operands[0];
      Instruction *b = computation_add_instruction(comp, OP_BROADCAST, &operand, 1, NULL, 0, &attrs, &wide,
                                                   "broadcast.pred");
      b->loc = inst->loc;
      computation_move_before(comp, b, inst);
      instruction_set_operand(inst, 0, b);
      i++;   /* inst moved one place down */
    }
  }
}

/* XLA prints an async-start whose wrapped computation holds one instruction
 * of opcode X as X-start, and its async-update and async-done as X-update
 * and X-done (where X has no -start form of its own). Reads such a word:
 * X-start gives X itself, to be wrapped once the module is read
 * (wrap_async_sugar); X-update and X-done give async-update and async-done. */
bool opcode_from_async_sugar(const Token *op, Opcode *out, AsyncSugar *sugar, Opcode *wrapped_out) {
  static const struct { const char *suffix; AsyncSugar sugar; } forms[] = {
    {"-start", ASYNC_SUGAR_START}, {"-update", ASYNC_SUGAR_UPDATE}, {"-done", ASYNC_SUGAR_DONE}};
  for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
    size_t n = strlen(forms[f].suffix);
    if ((size_t)op->len <= n || memcmp(op->text + op->len - n, forms[f].suffix, n) != 0) continue;
    Opcode wrapped;
    if (!opcode_from_name(op->text, (size_t)op->len - n, &wrapped) || wrapped == OP_PARAMETER ||
        wrapped == OP_CONSTANT || wrapped == OP_ASYNC_START || wrapped == OP_ASYNC_UPDATE ||
        wrapped == OP_ASYNC_DONE)
      return false;
    *sugar = forms[f].sugar;
    *wrapped_out = wrapped;
    *out = *sugar == ASYNC_SUGAR_START ? wrapped : *sugar == ASYNC_SUGAR_UPDATE ? OP_ASYNC_UPDATE : OP_ASYNC_DONE;
    return true;
  }
  return false;
}

/* The legacy form of dynamic-slice and dynamic-update-slice gives the start
 * indices as one rank-1 vector, dynamic-slice(x, s32[3] v), where today's
 * form gives one scalar per dimension. XLA's parser still reads it; here
 * each element becomes a scalar (slice, then reshape), so the IR and the
 * backends keep one form. A rank-1 index for a rank-1 operand is the same
 * in both forms only when it is a scalar, so s32[1] with one operand
 * dimension is the legacy form too. */
static Instruction *vector_element(Computation *comp, Instruction *vector, int64_t k, Instruction *before) {
  Arena *arena = &comp->module->arena;
  SliceDims *dims = arena_alloc(arena, sizeof *dims);
  int64_t *bounds = arena_alloc(arena, 3 * sizeof(int64_t));
  bounds[0] = k, bounds[1] = k + 1, bounds[2] = 1;
  dims->starts = (IntList){1, &bounds[0]};
  dims->limits = (IntList){1, &bounds[1]};
  dims->strides = (IntList){1, &bounds[2]};
  Attrs slice_attrs = {.slice = dims}, no_attrs = {0};
  int64_t one = 1;
  Shape piece = shape_array(vector->shape.type, 1, &one), scalar = shape_scalar(vector->shape.type);
  Instruction *s = computation_add_instruction(comp, OP_SLICE, &vector, 1, NULL, 0, &slice_attrs, &piece, "start.slice");
  Instruction *r = computation_add_instruction(comp, OP_RESHAPE, &s, 1, NULL, 0, &no_attrs, &scalar, "start");
  s->loc = r->loc = before->loc;
  computation_move_before(comp, s, before);
  computation_move_before(comp, r, before);
  return r;
}

void split_vector_start_indices(Module *m) {
  for (int c = 0; c < m->computation_count; c++) {
    Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++) {
      Instruction *inst = comp->instructions[i];
      int first = inst->opcode == OP_DYNAMIC_SLICE ? 1 : inst->opcode == OP_DYNAMIC_UPDATE_SLICE ? 2 : -1;
      if (first < 0 || inst->operand_count != first + 1) continue;
      const Shape *x = &inst->operands[0]->shape, *v = &inst->operands[first]->shape;
      if (shape_is_tuple(x) || shape_is_tuple(v) || !type_is_integer(v->type) || v->rank != 1 ||
          v->dims[0] != x->rank || x->rank == 0)
        continue;
      Instruction *operands[AXLE_MAX_RANK + 2];
      for (int k = 0; k < first; k++) operands[k] = inst->operands[k];
      for (int64_t k = 0; k < x->rank; k++) operands[first + k] = vector_element(comp, inst->operands[first], k, inst);
      Instruction *scalar_form = computation_add_instruction(comp, inst->opcode, operands, first + x->rank, NULL, 0,
                                                             &inst->attrs, &inst->shape, inst->name);
      scalar_form->loc = inst->loc;
      scalar_form->metadata = inst->metadata;
      computation_move_before(comp, scalar_form, inst);
      instruction_replace_all_uses(inst, scalar_form);
      const char *name = inst->name;
      computation_remove_instruction(comp, inst);
      scalar_form->name = name;
      i = scalar_form->index;
    }
  }
}
