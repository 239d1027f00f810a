/* Pass "unpack-layouts": spells out the bitcasts that read packed bytes,
 * then drops E(n) from every layout when nothing in the module can tell.
 *
 * A layout's E(4) says the device packs two s4 elements to a byte. axle
 * stores one element per byte everywhere (literals, host buffers, the
 * buffer plan), and the only op whose meaning depends on the packing is a
 * bitcast that reads packed bytes as something else: one whose operand and
 * result are packed differently or hold different element counts (s4[16]
 * packed is 8 bytes, which an s4[8] may reinterpret). Such a bitcast of a
 * sub-byte type T of b bits, r = 8 / b elements a byte, is first rewritten
 * into ops on values (eval_bitcast's meaning, in physical order):
 *   packed -> one a byte: result[j] is byte j's low b bits, element r*j of
 *     the packed operand: a slice with stride r;
 *   one a byte -> packed: element k is bits [b*(k%r), +b) of byte k/r,
 *     which holds operand element k/r sign- (or zero-) extended: the
 *     element itself, then r-1 copies of its sign (-1 or 0; 0 unsigned).
 * Without such a bitcast left every value is the same packed or not, so
 * the pass clears the packing from the shapes of every instruction and
 * constant, and a backend sees plain layouts. A bitcast of another form
 * (packed on both sides with different counts, a packing that is not the
 * type's width) keeps the module's packing, and a backend that cannot
 * store packed arrays says so.
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

/* Whether s's elements sit packed in its buffers (XLA's ByteSizeOf). */
static bool shape_packed(const Shape *s) { return shape_buffer_byte_size(s) != shape_byte_size(s); }

static Instruction *add_op(Computation *c, const Instruction *at, Opcode op, Instruction *const *operands, int count,
                           const Attrs *attrs, const Shape *shape) {
  Attrs none = {0};
  Instruction *made = computation_add_instruction(c, op, operands, count, NULL, 0, attrs ? attrs : &none, shape, NULL);
  made->metadata = at->metadata;
  made->loc = at->loc;
  return made;
}

/* T[n] in physical order, packed E(bits) or not. */
static Shape flat_shape(ElementType type, int64_t n, int bits) {
  Shape s = shape_array(type, 1, &n);
  s.element_size_bits = (uint8_t)bits;
  return s;
}

static Instruction *add_slice(Computation *c, const Instruction *at, Instruction *x, int64_t limit, int64_t stride,
                              const Shape *shape) {
  int64_t start = 0;
  SliceDims dims = {{1, &start}, {1, &limit}, {1, &stride}};
  Attrs attrs = {0};
  attrs.slice = &dims;
  return add_op(c, at, OP_SLICE, &x, 1, &attrs, shape);
}

static Instruction *add_scalar(Computation *c, const Instruction *at, ElementType type, int64_t value,
                               const Shape *spread) {
  Shape s = shape_scalar(type);
  Attrs attrs = {0};
  attrs.literal = literal_create(&s);
  literal_set_s64(attrs.literal, 0, value);
  Instruction *k = add_op(c, at, OP_CONSTANT, NULL, 0, &attrs, &s);
  return add_op(c, at, OP_BROADCAST, &k, 1, NULL, spread);
}

/* One a byte -> packed: each byte's r elements, the operand's element
 * then r-1 copies of its sign, in order; cut to `count`. */
static Instruction *spread_bytes(Computation *c, const Instruction *at, Instruction *flat, int r, int64_t count,
                                 const Shape *packed) {
  ElementType t = flat->shape.type;
  int64_t n = flat->shape.dims[0], column[2] = {n, 1}, rest[2] = {n, r - 1}, whole[2] = {n, r};
  Shape one = shape_array(t, 2, column), fill_shape = shape_array(t, 2, rest), joined = shape_array(t, 2, whole);
  Instruction *sign = add_scalar(c, at, t, 0, &flat->shape);
  if (type_kind(t) == TYPE_KIND_SINT) {
    Shape pred = shape_array(TYPE_PRED, 1, &n);
    Attrs less = {0};
    less.direction = CMP_LT;
    Instruction *negative = add_op(c, at, OP_COMPARE, (Instruction *[]){flat, sign}, 2, &less, &pred);
    Instruction *minus_one = add_scalar(c, at, t, -1, &flat->shape);
    sign = add_op(c, at, OP_SELECT, (Instruction *[]){negative, minus_one, sign}, 3, NULL, &flat->shape);
  }
  int64_t first = 0;
  Attrs along = {0};
  along.dimensions = (IntList){1, &first};
  Instruction *fill = add_op(c, at, OP_BROADCAST, &sign, 1, &along, &fill_shape);
  Instruction *self = add_op(c, at, OP_RESHAPE, &flat, 1, NULL, &one);
  int64_t second = 1;
  along.dimensions = (IntList){1, &second};
  Instruction *bytes = add_op(c, at, OP_CONCATENATE, (Instruction *[]){self, fill}, 2, &along, &joined);
  Shape all = flat_shape(t, n * r, 0);
  Instruction *elements = add_op(c, at, OP_RESHAPE, &bytes, 1, NULL, count == n * r ? packed : &all);
  return count == n * r ? elements : add_slice(c, at, elements, count, 1, packed);
}

/* The bitcast inst as ops on values, or NULL when it is not of the two
 * forms above. */
static Instruction *spell_out(Computation *c, Instruction *inst) {
  Instruction *x = inst->operands[0];
  const Shape *from = &x->shape, *to = &inst->shape;
  int bits = type_bit_width(from->type);
  if (from->type != to->type || bits >= 8 || shape_packed(from) == shape_packed(to)) return NULL;
  const Shape *packed = shape_packed(from) ? from : to;
  if (packed->element_size_bits != bits) return NULL;
  int r = 8 / bits;
  int64_t n_from = shape_element_count(from), n_to = shape_element_count(to);
  Shape flat_from = flat_shape(from->type, n_from, from->element_size_bits);
  Shape flat_to = flat_shape(to->type, n_to, to->element_size_bits);
  Instruction *flat = add_op(c, inst, OP_BITCAST, &x, 1, NULL, &flat_from), *made;
  if (shape_packed(from)) {
    if (n_to != (n_from + r - 1) / r) return NULL;
    made = add_slice(c, inst, flat, n_from, r, &flat_to);
  } else {
    if (n_from != (n_to + r - 1) / r) return NULL;
    made = spread_bytes(c, inst, flat, r, n_to, &flat_to);
  }
  return add_op(c, inst, OP_BITCAST, &made, 1, NULL, to);
}

/* Rewrites each bitcast that reads packing and has a form spell_out takes. */
static bool spell_out_packed_bitcasts(Module *m, Status *st, bool *failed) {
  bool changed = false;
  for (int k = 0; k < m->computation_count; k++) {
    Computation *c = m->computations[k];
    int n = c->instruction_count, dead_count = 0;
    Instruction **dead = mem_calloc((size_t)n + 1, sizeof *dead);
    for (int i = 0; i < n; i++) {
      Instruction *inst = c->instructions[i];
      if (!bitcast_reads_packing(inst)) continue;
      Instruction *made = spell_out(c, inst);
      if (!made) continue;
      instruction_replace_all_uses(inst, made);
      dead[dead_count++] = inst;
    }
    bool here = dead_count > 0;
    if (here) computation_remove_instructions(c, dead, dead_count);
    mem_free(dead);
    if (here && !computation_sort(c, st)) {
      *failed = true;
      return changed;
    }
    changed |= here;
  }
  return changed;
}

static bool shape_unpack(Shape *s) {
  bool changed = s->element_size_bits != 0;
  s->element_size_bits = 0;
  if (shape_is_tuple(s) && s->tuple_shapes)
    for (int i = 0; i < s->tuple_count; i++) changed |= shape_unpack(&s->tuple_shapes[i]);
  return changed;
}

bool unpack_layouts(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx;
  bool changed = spell_out_packed_bitcasts(m, st, failed);
  if (*failed) return changed;
  for (int c = 0; c < m->computation_count; c++) {
    const Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++)
      if (bitcast_reads_packing(comp->instructions[i])) return changed;
  }
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
