/* Building modules in C: the engine under the public axle_builder_* API and
 * under passes that create instructions. Shapes are never written by hand
 * here: builder_add_instruction asks infer_shape, the one owner of shapes,
 * then hands the instruction to the editing core (edit.c), which appends it,
 * names it and links its use lists. Nothing becomes the root implicitly. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

Computation *builder_add_computation(Module *m, const char *name) { return module_add_computation(m, name); }

/* A parameter's shape is given, not inferred; it takes the next number. */
Instruction *builder_add_parameter(Computation *c, const Shape *shape, const char *name) {
  Attrs attrs = {.parameter_number = c->parameter_count};
  char fallback[32];
  snprintf(fallback, sizeof fallback, "p%d", c->parameter_count);
  return computation_add_instruction(c, OP_PARAMETER, NULL, 0, NULL, 0, &attrs, shape, name ? name : fallback);
}

/* Creates an instruction with the given operands and attributes, infers its
 * shape, and appends it. Returns NULL (nothing appended) if the shape cannot
 * be inferred; then a constant's literal still belongs to the caller, and
 * otherwise passes to the module.
 * declared gives the result shape where operands do not determine it
 * (broadcast, reshape, iota, convert, ...); infer_shape checks it.
 * The attribute groups and lists are copied into the module's arena, so
 * callers may pass ones that live on their stack. */
Instruction *builder_add_instruction(Computation *c, Opcode op, Instruction *const *operands,
                                     int operand_count, Computation *const *called,
                                     int called_count, const Attrs *attrs,
                                     const Shape *declared, Status *st) {
  /* Shape inference reads an instruction: a draft on the stack, not yet in c. */
  Instruction draft = {.opcode = op, .name = opcode_name(op), .parent = c,
                       .operands = (Instruction **)operands, .operand_count = operand_count,
                       .called = (Computation **)called, .called_count = called_count};
  if (attrs) draft.attrs = *attrs;
  if (declared) draft.shape = *declared;
  else if (op == OP_CONSTANT && draft.attrs.literal) draft.shape = draft.attrs.literal->shape;
  Shape shape;
  if (!infer_shape(&draft, &shape, &c->module->arena, st)) return NULL;
  return computation_add_instruction(c, op, operands, operand_count, called, called_count, attrs, &shape, NULL);
}
