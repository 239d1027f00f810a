/* Pass "unpack-layouts": drops E(n) from every layout when nothing in the
 * module can tell.
 *
 * A layout's E(4) says the device packs two s4 elements to a byte. axle
 * stores one element per byte everywhere (literals, host buffers, the
 * buffer plan), and the only op whose meaning depends on the packing is a
 * bitcast that reads packed bytes as something else: one whose operand and
 * result are packed differently or hold different element counts (s4[16]
 * packed is 8 bytes, which an s4[8] may reinterpret). Without such a
 * bitcast every value is the same packed or not, so the pass clears the
 * packing from the shapes of every instruction and constant, and a backend
 * sees plain layouts. With one, the module keeps its packing and a backend
 * that cannot store packed arrays says so.
 *
 * requires: verified. breaks: nothing. */
#include "opt/opt.h"

/* A bitcast whose result depends on how its operand is packed. */
static bool bitcast_reads_packing(const Instruction *inst) {
  if (inst->opcode != OP_BITCAST || inst->operand_count != 1) return false;
  const Shape *from = &inst->operands[0]->shape, *to = &inst->shape;
  if (shape_is_tuple(from) || shape_is_tuple(to)) return false;
  if (!from->element_size_bits && !to->element_size_bits) return false;
  return from->element_size_bits != to->element_size_bits || from->type != to->type ||
         shape_element_count(from) != shape_element_count(to);
}

static bool shape_unpack(Shape *s) {
  bool changed = s->element_size_bits != 0;
  s->element_size_bits = 0;
  if (shape_is_tuple(s) && s->tuple_shapes)
    for (int i = 0; i < s->tuple_count; i++) changed |= shape_unpack(&s->tuple_shapes[i]);
  return changed;
}

bool unpack_layouts(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx, (void)failed, (void)st;
  for (int c = 0; c < m->computation_count; c++) {
    const Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++)
      if (bitcast_reads_packing(comp->instructions[i])) return false;
  }
  bool changed = false;
  for (int c = 0; c < m->computation_count; c++) {
    const Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++) {
      Instruction *inst = comp->instructions[i];
      changed |= shape_unpack(&inst->shape);
      if (inst->attrs.literal) changed |= shape_unpack(&inst->attrs.literal->shape);
    }
  }
  return changed;
}
