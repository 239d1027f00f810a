/* Building modules in C: the engine under the public axle_builder_* API and
 * under passes that create instructions. Shapes are never written by hand
 * here: builder_add_instruction asks infer_shape, the one owner of shapes. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

Computation *builder_add_computation(Module *m, const char *name) {
  Computation *c = arena_alloc(&m->arena, sizeof *c);
  c->name = arena_strdup(&m->arena, name);
  c->module = m;
  Computation **list = arena_alloc(&m->arena, sizeof *list * (size_t)(m->computation_count + 1));
  if (m->computation_count) memcpy(list, m->computations, sizeof *list * (size_t)m->computation_count);
  list[m->computation_count++] = c;
  m->computations = list;
  return c;
}

static void computation_append(Computation *c, Instruction *inst) {
  Arena *arena = &c->module->arena;
  Instruction **list = arena_alloc(arena, sizeof *list * (size_t)(c->instruction_count + 1));
  if (c->instruction_count) memcpy(list, c->instructions, sizeof *list * (size_t)c->instruction_count);
  inst->index = c->instruction_count;
  inst->parent = c;
  list[c->instruction_count++] = inst;
  c->instructions = list;
  c->root = inst;
}

/* A parameter's shape is given, not inferred. */
Instruction *builder_add_parameter(Computation *c, const Shape *shape, const char *name) {
  Arena *arena = &c->module->arena;
  Instruction *inst = arena_alloc(arena, sizeof *inst);
  inst->opcode = OP_PARAMETER;
  inst->shape = *shape;
  inst->attrs.parameter_number = c->parameter_count;
  char fallback[32];
  snprintf(fallback, sizeof fallback, "p%d", c->parameter_count);
  inst->name = arena_strdup(arena, name ? name : fallback);
  Instruction **params = arena_alloc(arena, sizeof *params * (size_t)(c->parameter_count + 1));
  if (c->parameter_count) memcpy(params, c->parameters, sizeof *params * (size_t)c->parameter_count);
  params[c->parameter_count++] = inst;
  c->parameters = params;
  computation_append(c, inst);
  return inst;
}

/* Creates an instruction with the given operands and attributes, infers its
 * shape, and appends it. Returns NULL (nothing appended) if the shape cannot
 * be inferred. The literal of a constant passes to the module.
 * declared gives the result shape where operands do not determine it
 * (broadcast, reshape, iota, convert, ...); infer_shape checks it.
 * The out-of-line attribute groups (padding, window, dim_labels, slice,
 * dot, gather and scatter dimension numbers) are copied into the
 * module's arena, so callers may pass groups that live on their stack. */
Instruction *builder_add_instruction(Computation *c, Opcode op, Instruction *const *operands,
                                     int operand_count, Computation *const *called,
                                     int called_count, const Attrs *attrs,
                                     const Shape *declared, Status *st) {
  Arena *arena = &c->module->arena;
  Instruction *inst = arena_alloc(arena, sizeof *inst);
  inst->opcode = op;
  inst->parent = c;
  if (attrs) inst->attrs = *attrs;
  if (inst->attrs.padding) inst->attrs.padding = arena_memdup(arena, inst->attrs.padding, sizeof(PadDims));
  if (inst->attrs.window) inst->attrs.window = arena_memdup(arena, inst->attrs.window, sizeof(Window));
  if (inst->attrs.conv) inst->attrs.conv = arena_memdup(arena, inst->attrs.conv, sizeof(ConvDims));
  if (inst->attrs.slice) inst->attrs.slice = arena_memdup(arena, inst->attrs.slice, sizeof(SliceDims));
  if (inst->attrs.dot) inst->attrs.dot = arena_memdup(arena, inst->attrs.dot, sizeof(DotDims));
  if (inst->attrs.gather) inst->attrs.gather = arena_memdup(arena, inst->attrs.gather, sizeof(GatherDims));
  if (inst->attrs.scatter) inst->attrs.scatter = arena_memdup(arena, inst->attrs.scatter, sizeof(ScatterDims));
  if (inst->attrs.scalars) inst->attrs.scalars = arena_memdup(arena, inst->attrs.scalars, sizeof(ScalarAttrs));
  if (declared) inst->shape = *declared;
  else if (op == OP_CONSTANT && inst->attrs.literal) inst->shape = inst->attrs.literal->shape;
  inst->operand_count = operand_count;
  inst->operands = arena_memdup(arena, operands, sizeof *operands * (size_t)operand_count);
  inst->called_count = called_count;
  inst->called = arena_memdup(arena, called, sizeof *called * (size_t)called_count);
  char name[64];
  snprintf(name, sizeof name, "%s.%d", opcode_name(op), c->instruction_count);
  inst->name = arena_strdup(arena, name);
  if (!infer_shape(inst, &inst->shape, arena, st)) return NULL;
  computation_append(c, inst);
  return inst;
}
