/* Pass "inline-map": a map whose scalar computation is made only of
 * elementwise ops and scalar constants becomes those ops on whole arrays,
 * as XLA's MapInliner does, so fusion turns it into one kernel instead of a
 * computation run once per element.
 *
 * map(a, b), to_apply={x, y -> add(multiply(x, y), 1)} becomes
 * add(multiply(a, b), broadcast(1)): each instruction of the computation is
 * copied with the map's dimensions and layout and its own element type;
 * parameters stand for the map's operands; scalar constants are broadcast.
 * Elementwise ops compute element i from element i alone, so every element
 * gets the same bits as the per-element computation. A map whose
 * computation holds anything else (a call, an op with effects, a tuple) or
 * whose operands are in another layout than its result stays as it is.
 *
 * requires: verified. breaks: nothing (run before fusion). */
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"

static bool same_layout(const Shape *a, const Shape *b) {
  return a->rank == b->rank && a->element_size_bits == b->element_size_bits &&
         memcmp(a->minor_to_major, b->minor_to_major, (size_t)a->rank * sizeof *a->minor_to_major) == 0;
}

/* Whether map's computation can be copied onto whole arrays. */
static bool map_can_inline(const Instruction *map) {
  if (map->called_count != 1 || shape_is_tuple(&map->shape) || map->attrs.dimensions.count != map->shape.rank)
    return false;
  const Computation *f = map->called[0];
  if (f->parameter_count != map->operand_count) return false;
  for (int k = 0; k < map->operand_count; k++) {
    const Shape *o = &map->operands[k]->shape;
    if (shape_is_tuple(o) || !shape_same_dims(o, &map->shape) || !same_layout(o, &map->shape)) return false;
  }
  for (int i = 0; i < f->instruction_count; i++) {
    const Instruction *inst = f->instructions[i];
    if (shape_is_tuple(&inst->shape) || inst->shape.rank != 0) return false;
    if (inst->opcode == OP_PARAMETER || inst->opcode == OP_CONSTANT) continue;
    if (!opcode_is_elementwise(inst->opcode) || opcode_has_side_effects(inst->opcode) || inst->called_count)
      return false;
  }
  return true;
}

/* The map's shape with element type t. */
static Shape shape_retyped(const Shape *s, ElementType t) {
  Shape out = *s;
  out.type = t;
  return out;
}

/* Copies f's instructions onto the map's arrays; returns the copy of the root. */
static Instruction *map_inline(Instruction *map) {
  const Computation *f = map->called[0];
  Computation *c = map->parent;
  Instruction **copies = mem_calloc((size_t)f->instruction_count, sizeof *copies);
  Instruction *operands[3];
  Attrs none = {0};
  for (int i = 0; i < f->instruction_count; i++) {
    const Instruction *src = f->instructions[i];
    Shape shape = shape_retyped(&map->shape, src->shape.type);
    if (src->opcode == OP_PARAMETER) {
      copies[i] = map->operands[src->attrs.parameter_number];
      continue;
    }
    if (src->opcode == OP_CONSTANT) {
      Instruction *scalar = instruction_clone(c, src, NULL, NULL);
      copies[i] = computation_add_instruction(c, OP_BROADCAST, &scalar, 1, NULL, 0, &none, &shape, NULL);
    } else {
      for (int k = 0; k < src->operand_count && k < 3; k++) operands[k] = copies[src->operands[k]->index];
      copies[i] = computation_add_instruction(c, src->opcode, operands, src->operand_count, NULL, 0, &src->attrs,
                                              &shape, src->name);
    }
    copies[i]->metadata = map->metadata;
    copies[i]->loc = map->loc;
  }
  Instruction *root = copies[f->root->index];
  mem_free(copies);
  return root;
}

bool inline_map(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx;
  bool changed = false;
  for (int k = 0; k < m->computation_count; k++) {
    Computation *c = m->computations[k];
    bool here = false;
    int count = c->instruction_count;
    for (int i = 0; i < count; i++) {
      Instruction *map = c->instructions[i];
      if (map->opcode != OP_MAP || (map->user_count == 0 && map != c->root) || !map_can_inline(map)) continue;
      /* A computation returning its parameter makes the map that operand
       * (map_can_inline checked that its shape is the map's). */
      instruction_replace_all_uses(map, map_inline(map));
      here = true;
    }
    if (here && !computation_sort(c, st)) {
      *failed = true;
      return false;
    }
    changed |= here;
  }
  return changed;
}
