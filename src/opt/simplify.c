/* Pass "simplify": the algebraic simplifier.
 *
 * A table of small rewrite rules, each stated in the comment above it, is
 * tried on every live instruction; the first that applies gives the
 * instruction's replacement and its users are redirected to it. The rules
 * only ever replace a value by one that is bit for bit the same, whatever
 * the inputs (NaN, infinities and signed zeros included): float x*0 is not
 * 0 (NaN*0 is NaN, -1*0 is -0), float x+0 is not x (-0+0 is +0; x+(-0) is).
 * Rules on calls, conditionals and while loops are in simplify_control.c.
 *
 * Rounds repeat (a few at most) until no rule applies, so that a rewrite
 * that exposes another is finished in one run of the pass.
 *
 * requires: verified. breaks: schedule. Leaves replaced instructions dead
 * for dce; new instructions are sorted into place before the pass returns.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opt/simplify_internal.h"

/* ---- looking at operands ---- */

/* x itself when it can stand for inst (identical shape), else NULL. */
static Instruction *forward(const Instruction *inst, Instruction *x) {
  return shape_identical(&inst->shape, &x->shape) ? x : NULL;
}

/* The special values the rules look for. */
typedef enum SpecialValue {
  VALUE_ZERO, VALUE_NEGATIVE_ZERO, VALUE_ONE, VALUE_ALL_ONES, VALUE_LOWEST, VALUE_HIGHEST
} SpecialValue;

/* The types whose every operation is exact: integers and pred. Rules
 * that would be wrong for NaN, infinities or signed zeros hold for these. */
static bool type_is_exact(ElementType t) { return type_is_integer(t) || t == TYPE_PRED; }

/* The IEEE binary formats. The 8- and 4-bit floats lack some of negative
 * zero, infinities and a sign bit, so no float rule is trusted on them. */
static bool type_is_ieee(ElementType t) {
  return t == TYPE_F16 || t == TYPE_BF16 || t == TYPE_F32 || t == TYPE_F64;
}

/* A scalar literal of type t holding v, or NULL when t has no such value
 * (all-ones bits of a float; anything of a complex or a minifloat type). */
static Literal *literal_special(ElementType t, SpecialValue v) {
  if (!type_is_exact(t) && !(type_is_ieee(t) && v != VALUE_ALL_ONES)) return NULL;
  Shape shape = shape_scalar(t);
  Literal *lit = literal_create(&shape);
  if (type_is_ieee(t)) {
    static const double float_values[] = {
        [VALUE_ZERO] = 0.0, [VALUE_NEGATIVE_ZERO] = -0.0, [VALUE_ONE] = 1.0,
        [VALUE_LOWEST] = -INFINITY, [VALUE_HIGHEST] = INFINITY};
    literal_set_f64(lit, 0, float_values[v]);
  } else if (t == TYPE_PRED) {
    literal_set_u64(lit, 0, v == VALUE_ONE || v == VALUE_ALL_ONES || v == VALUE_HIGHEST);
  } else if (type_kind(t) == TYPE_KIND_SINT) {
    int bits = type_bit_width(t);
    int64_t highest = bits == 64 ? INT64_MAX : (int64_t)((1ull << (bits - 1)) - 1);
    int64_t values[] = {[VALUE_ZERO] = 0, [VALUE_NEGATIVE_ZERO] = 0, [VALUE_ONE] = 1, [VALUE_ALL_ONES] = -1,
                        [VALUE_LOWEST] = -highest - 1, [VALUE_HIGHEST] = highest};
    literal_set_s64(lit, 0, values[v]);
  } else {
    int bits = type_bit_width(t);
    uint64_t all = bits == 64 ? ~0ull : (1ull << bits) - 1;
    uint64_t values[] = {[VALUE_ZERO] = 0, [VALUE_NEGATIVE_ZERO] = 0, [VALUE_ONE] = 1, [VALUE_ALL_ONES] = all,
                         [VALUE_LOWEST] = 0, [VALUE_HIGHEST] = all};
    literal_set_u64(lit, 0, values[v]);
  }
  return lit;
}

/* The literal behind inst when inst is a constant or a broadcast of one. */
static const Literal *constant_behind(const Instruction *inst) {
  if (inst->opcode == OP_BROADCAST) inst = inst->operands[0];
  return inst->opcode == OP_CONSTANT ? inst->attrs.literal : NULL;
}

/* Every element of inst is v, bit for bit (so -0 is not 0), and there is
 * at least one element. */
static bool instruction_is_all(const Instruction *inst, SpecialValue v) {
  const Literal *lit = constant_behind(inst);
  if (!lit || shape_is_tuple(&lit->shape)) return false;
  int64_t count = shape_element_count(&lit->shape);
  if (count == 0) return false;
  Literal *want = literal_special(lit->shape.type, v);
  if (!want) return false;
  size_t size = (size_t)type_byte_size(lit->shape.type);
  bool all = true;
  for (int64_t i = 0; all && i < count; i++)
    all = memcmp((const char *)lit->data + (size_t)i * size, want->data, size) == 0;
  literal_free(want);
  return all;
}

/* A new instruction in inst's computation that carries inst's provenance
 * (its metadata survives the rewrite); attrs NULL for none. */
static Instruction *add_beside(Instruction *inst, Opcode op, Instruction *const *operands, int count,
                               const Attrs *attrs, const Shape *shape, const char *name) {
  Attrs none = {0};
  Instruction *added = computation_add_instruction(inst->parent, op, operands, count, NULL, 0,
                                                   attrs ? attrs : &none, shape, name);
  added->metadata = inst->metadata;
  return added;
}

/* A new instruction like inst (its shape, name and called computations). */
static Instruction *add_like(Instruction *inst, Opcode op, Instruction *const *operands, int count,
                             const Attrs *attrs, const Shape *shape) {
  Computation *c = inst->parent;
  Instruction *like = computation_add_instruction(c, op, operands, count, inst->called, inst->called_count, attrs,
                                                  shape ? shape : &inst->shape, inst->name);
  like->metadata = inst->metadata; /* provenance survives the rewrite */
  return like;
}

/* scalar at inst's shape: broadcast unless inst is a scalar. */
static Instruction *add_spread(Instruction *inst, Instruction *scalar) {
  if (inst->shape.rank == 0) return scalar;
  return add_beside(inst, OP_BROADCAST, &scalar, 1, NULL, &inst->shape, "broadcast");
}

/* A value of inst's shape with every element the scalar literal lit
 * (which the module takes). */
static Instruction *add_constant_spread(Instruction *inst, Literal *lit) {
  Attrs attrs = {0};
  attrs.literal = lit;
  Shape scalar = shape_scalar(inst->shape.type);
  return add_spread(inst, add_beside(inst, OP_CONSTANT, NULL, 0, &attrs, &scalar, "constant"));
}

/* A value of inst's shape with every element v. */
static Instruction *add_filled(Instruction *inst, SpecialValue v) {
  Literal *lit = literal_special(inst->shape.type, v);
  return lit ? add_constant_spread(inst, lit) : NULL;
}

/* ---- elementwise identities ---- */

/* The value e with op(x, e) = x for every x, bit for bit. From the op
 * table's identity column, except float add: x + 0 turns -0 into +0, so
 * its identity is -0. */
static bool identity_value(Opcode op, ElementType t, SpecialValue *v) {
  switch (opcode_identity(op)) {
  case ID_ZERO: *v = op == OP_ADD && type_is_float(t) ? VALUE_NEGATIVE_ZERO : VALUE_ZERO; return true;
  case ID_ONE: *v = VALUE_ONE; return true;
  case ID_ALL_ONES: *v = VALUE_ALL_ONES; return true;
  case ID_LOWEST: *v = VALUE_LOWEST; return true;
  case ID_HIGHEST: *v = VALUE_HIGHEST; return true;
  default: return false;
  }
}

/* x + (-0.0) = x; x * 1 = x; x & ~0 = x; x | 0 = x; x ^ 0 = x;
 * max(x, -inf) = x; min(x, +inf) = x (NaN included: max(NaN, -inf) is NaN);
 * and the same with the operands swapped, all of these commuting. */
static Instruction *rule_identity_operand(Instruction *inst) {
  SpecialValue v;
  if (inst->operand_count != 2 || !identity_value(inst->opcode, inst->shape.type, &v)) return NULL;
  if (instruction_is_all(inst->operands[1], v)) return forward(inst, inst->operands[0]);
  if (opcode_is_commutative(inst->opcode) && instruction_is_all(inst->operands[0], v))
    return forward(inst, inst->operands[1]);
  return NULL;
}

/* Right identities of ops that do not commute: x - 0 = x (also for x = -0:
 * -0 - +0 is -0), x / 1 = x, x << 0 = x, x >> 0 = x, x ** 1 = x. */
static Instruction *rule_right_identity(Instruction *inst) {
  SpecialValue v;
  switch (inst->opcode) {
  case OP_SUBTRACT: case OP_SHIFT_LEFT: case OP_SHIFT_RIGHT_ARITHMETIC: case OP_SHIFT_RIGHT_LOGICAL:
    v = VALUE_ZERO; break;
  case OP_DIVIDE: case OP_POWER: v = VALUE_ONE; break;
  default: return NULL;
  }
  return instruction_is_all(inst->operands[1], v) ? forward(inst, inst->operands[0]) : NULL;
}

/* Integers only: x * 0 = 0, x & 0 = 0, x | ~0 = ~0 (the constant operand is
 * the result). Not floats: NaN * 0 is NaN and -1 * 0 is -0. */
static Instruction *rule_absorbing_operand(Instruction *inst) {
  if (inst->operand_count != 2 || !type_is_exact(inst->shape.type)) return NULL;
  SpecialValue v;
  switch (inst->opcode) {
  case OP_MULTIPLY: case OP_AND: v = VALUE_ZERO; break;
  case OP_OR: v = VALUE_ALL_ONES; break;
  default: return NULL;
  }
  for (int k = 0; k < 2; k++)
    if (instruction_is_all(inst->operands[k], v)) return forward(inst, inst->operands[k]);
  return NULL;
}

/* max(x, x) = min(x, x) = x & x = x | x = x. */
static Instruction *rule_same_operands_idempotent(Instruction *inst) {
  Opcode op = inst->opcode;
  if (op != OP_MAXIMUM && op != OP_MINIMUM && op != OP_AND && op != OP_OR) return NULL;
  return inst->operands[0] == inst->operands[1] ? forward(inst, inst->operands[0]) : NULL;
}

/* Integers only: x - x = 0, x ^ x = 0 (for floats inf - inf is NaN). */
static Instruction *rule_same_operands_cancel(Instruction *inst) {
  if ((inst->opcode != OP_SUBTRACT && inst->opcode != OP_XOR) || !type_is_exact(inst->shape.type)) return NULL;
  return inst->operands[0] == inst->operands[1] ? add_filled(inst, VALUE_ZERO) : NULL;
}

/* Integers and pred: compare(x, x) is true for EQ, LE, GE and false for
 * NE, LT, GT. Not floats: NaN equals nothing, itself included. */
static Instruction *rule_compare_same_operands(Instruction *inst) {
  if (inst->opcode != OP_COMPARE || inst->operands[0] != inst->operands[1]) return NULL;
  ElementType t = inst->operands[0]->shape.type;
  if (!type_is_exact(t) || inst->attrs.compare_type == CMP_TYPE_FLOAT ||
      inst->attrs.compare_type == CMP_TYPE_TOTALORDER)
    return NULL;
  CompareDirection d = inst->attrs.direction;
  bool holds = d == CMP_EQ || d == CMP_LE || d == CMP_GE;
  return add_filled(inst, holds ? VALUE_ONE : VALUE_ZERO);
}

/* negate(negate(x)) = x (also for the most negative integer, which wraps
 * to itself both times); not(not(x)) = x. Not for the minifloats, some of
 * which cannot hold -x. */
static Instruction *rule_double_negation(Instruction *inst) {
  if (inst->opcode != OP_NEGATE && inst->opcode != OP_NOT) return NULL;
  ElementType t = inst->shape.type;
  if (!type_is_exact(t) && !type_is_ieee(t) && !type_is_complex(t)) return NULL; /* f8e8m0 has no sign */
  Instruction *inner = inst->operands[0];
  return inner->opcode == inst->opcode ? forward(inst, inner->operands[0]) : NULL;
}

/* select(true, a, b) = a; select(false, a, b) = b; select(p, a, a) = a. */
static Instruction *rule_select(Instruction *inst) {
  if (inst->opcode != OP_SELECT) return NULL;
  Instruction *p = inst->operands[0], *a = inst->operands[1], *b = inst->operands[2];
  if (a == b) return forward(inst, a);
  if (instruction_is_all(p, VALUE_ONE)) return forward(inst, a);
  if (instruction_is_all(p, VALUE_ZERO)) return forward(inst, b);
  return NULL;
}

/* ---- shape changes ---- */

static bool dimensions_are_identity(const IntList *dims, int rank) {
  if (dims->count != rank) return false;
  for (int i = 0; i < rank; i++)
    if (dims->values[i] != i) return false;
  return true;
}

/* A broadcast, reshape, transpose, convert, copy-free slice or pad that
 * leaves its operand as it is, is its operand:
 *   broadcast(x) with dimensions={0..r-1} to x's own dims, reshape(x) to x's
 *   own dims, transpose(x) with dimensions={0..r-1}, convert(x) to x's own
 *   type, bitcast(x) to x's own shape and layout. */
static Instruction *rule_no_op_shape_change(Instruction *inst) {
  Instruction *x = inst->operand_count == 1 ? inst->operands[0] : NULL;
  switch (inst->opcode) {
  case OP_BROADCAST: case OP_TRANSPOSE:
    if (!dimensions_are_identity(&inst->attrs.dimensions, x->shape.rank)) return NULL;
    break;
  case OP_RESHAPE: case OP_CONVERT: case OP_BITCAST: case OP_COPY: break;
  default: return NULL;
  }
  return shape_identical(&inst->shape, &x->shape) ? x : NULL;
}

/* reverse(reverse(x, d), d) = x: each dimension flipped twice. */
static Instruction *rule_reverse_of_reverse(Instruction *inst) {
  if (inst->opcode != OP_REVERSE || inst->operands[0]->opcode != OP_REVERSE) return NULL;
  const IntList *outer = &inst->attrs.dimensions, *inner = &inst->operands[0]->attrs.dimensions;
  bool flipped[AXLE_MAX_RANK] = {false};
  for (int i = 0; i < outer->count; i++) flipped[outer->values[i]] ^= true;
  for (int i = 0; i < inner->count; i++) flipped[inner->values[i]] ^= true;
  for (int d = 0; d < inst->shape.rank; d++)
    if (flipped[d]) return NULL;
  return forward(inst, inst->operands[0]->operands[0]);
}

/* Moving or reshaping a broadcast scalar gives the same scalar everywhere:
 * reshape, transpose, broadcast, slice and reverse of broadcast(s) =
 * broadcast(s) to the result's shape. */
static Instruction *rule_move_broadcast_scalar(Instruction *inst) {
  switch (inst->opcode) {
  case OP_RESHAPE: case OP_TRANSPOSE: case OP_BROADCAST: case OP_SLICE: case OP_REVERSE: break;
  default: return NULL;
  }
  Instruction *b = inst->operands[0];
  if (b->opcode != OP_BROADCAST || b->operands[0]->shape.rank != 0) return NULL;
  Instruction *scalar = b->operands[0];
  return add_beside(inst, OP_BROADCAST, &scalar, 1, NULL, &inst->shape, inst->name);
}

/* dynamic-slice(x, s0, s1, ...) with constant starts = slice(x) at the
 * starts clamped as HLO clamps them: into [0, dim - size], so the window
 * always fits. (The one-vector form of the starts is left alone.) */
static Instruction *rule_dynamic_slice_constant_starts(Instruction *inst) {
  if (inst->opcode != OP_DYNAMIC_SLICE) return NULL;
  const Instruction *x = inst->operands[0];
  int rank = x->shape.rank;
  if (inst->operand_count != 1 + rank) return NULL;
  int64_t starts[AXLE_MAX_RANK], limits[AXLE_MAX_RANK], strides[AXLE_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    const Instruction *index = inst->operands[1 + d];
    if (index->opcode != OP_CONSTANT || index->shape.rank != 0 || !type_is_integer(index->shape.type))
      return NULL;
    const Literal *lit = index->attrs.literal;
    int64_t start = literal_get_s64(lit, 0);
    if (index->shape.type == TYPE_U64 && literal_get_u64(lit, 0) > (uint64_t)INT64_MAX) start = INT64_MAX;
    int64_t size = inst->shape.dims[d], last = x->shape.dims[d] - size;
    starts[d] = start < 0 ? 0 : start > last ? last : start;
    limits[d] = starts[d] + size;
    strides[d] = 1;
  }
  SliceDims slice = {{rank, starts}, {rank, limits}, {rank, strides}};
  Attrs attrs = {0};
  attrs.slice = &slice;
  Instruction *operand = inst->operands[0];
  return add_beside(inst, OP_SLICE, &operand, 1, &attrs, &inst->shape, inst->name);
}

/* x / 2^k = x * 2^-k for IEEE floats: both are the exact quotient rounded
 * once (a power of two's reciprocal is exact, unless it overflows or falls
 * below the normal range, which is checked), and a multiply is cheaper. */
static Instruction *rule_divide_by_power_of_two(Instruction *inst) {
  if (inst->opcode != OP_DIVIDE || !type_is_ieee(inst->shape.type)) return NULL;
  const Literal *lit = constant_behind(inst->operands[1]);
  if (!lit || shape_element_count(&lit->shape) == 0) return NULL;
  double d = literal_get_f64(lit, 0);
  int exponent;
  if (!isfinite(d) || fabs(frexp(d, &exponent)) != 0.5) return NULL; /* d = ±2^k */
  /* every element the same value */
  for (int64_t i = 1; i < shape_element_count(&lit->shape); i++)
    if (literal_get_f64(lit, i) != d) return NULL;
  Shape scalar_shape = shape_scalar(inst->shape.type);
  Literal *reciprocal = literal_create(&scalar_shape);
  literal_set_f64(reciprocal, 0, 1.0 / d);
  /* the reciprocal must survive the trip into the type exactly, as a normal number */
  double back = literal_get_f64(reciprocal, 0);
  if (back != 1.0 / d || back * d != 1.0 || !isnormal(back) || !isnormal(d)) {
    literal_free(reciprocal);
    return NULL;
  }
  Instruction *operands[2] = {inst->operands[0], add_constant_spread(inst, reciprocal)};
  return add_beside(inst, OP_MULTIPLY, operands, 2, NULL, &inst->shape, inst->name);
}

/* broadcast(broadcast(x, d1), d2) = broadcast(x, d): x's dimension i lands
 * in the inner result's d1[i], which lands in the outer's d2[d1[i]]. */
static Instruction *rule_broadcast_of_broadcast(Instruction *inst) {
  if (inst->opcode != OP_BROADCAST || inst->operands[0]->opcode != OP_BROADCAST) return NULL;
  Instruction *inner = inst->operands[0];
  Instruction *x = inner->operands[0];
  int64_t dims[AXLE_MAX_RANK];
  for (int i = 0; i < x->shape.rank; i++)
    dims[i] = inst->attrs.dimensions.values[inner->attrs.dimensions.values[i]];
  Attrs attrs = inst->attrs;
  attrs.dimensions = (IntList){x->shape.rank, dims};
  return add_like(inst, OP_BROADCAST, &x, 1, &attrs, NULL);
}

/* reshape(reshape(x)) = reshape(x): a reshape keeps the row-major order of
 * the elements, so two keep it too. bitcast(bitcast(x)) = bitcast(x): each
 * keeps the bytes. */
static Instruction *rule_reshape_chain(Instruction *inst) {
  Opcode op = inst->opcode;
  if ((op != OP_RESHAPE && op != OP_BITCAST) || inst->operands[0]->opcode != op) return NULL;
  Instruction *x = inst->operands[0]->operands[0];
  return add_like(inst, op, &x, 1, &inst->attrs, NULL);
}

/* transpose(transpose(x, p1), p2) = transpose(x, p): the outer result's
 * dimension i is the inner's p2[i], which is x's p1[p2[i]]. */
static Instruction *rule_transpose_chain(Instruction *inst) {
  if (inst->opcode != OP_TRANSPOSE || inst->operands[0]->opcode != OP_TRANSPOSE) return NULL;
  Instruction *inner = inst->operands[0];
  Instruction *x = inner->operands[0];
  int64_t perm[AXLE_MAX_RANK];
  for (int i = 0; i < inst->shape.rank; i++)
    perm[i] = inner->attrs.dimensions.values[inst->attrs.dimensions.values[i]];
  Attrs attrs = inst->attrs;
  attrs.dimensions = (IntList){inst->shape.rank, perm};
  return add_like(inst, OP_TRANSPOSE, &x, 1, &attrs, NULL);
}

/* Significand bits of an IEEE format, the implicit one included; 0 for
 * anything else. */
static int type_precision(ElementType t) {
  switch (t) {
  case TYPE_F16: return 11;
  case TYPE_BF16: return 8;
  case TYPE_F32: return 24;
  case TYPE_F64: return 53;
  default: return 0;
  }
}

/* Whether every value of type a is exactly a value of type b. Only pred,
 * the integers and the IEEE floats are considered (f16 into bf16 and back
 * are both lossy; f16 and bf16 into f32 are exact). */
static bool type_holds_exactly(ElementType a, ElementType b) {
  if (a == b) return true;
  bool a_known = type_is_exact(a) || type_is_ieee(a), b_known = type_is_exact(b) || type_is_ieee(b);
  if (!a_known || !b_known || b == TYPE_PRED) return false;
  if (a == TYPE_PRED) return true;
  int wa = type_bit_width(a), wb = type_bit_width(b);
  if (type_is_ieee(a)) return type_is_ieee(b) && type_precision(b) > type_precision(a) && wb > wa;
  if (type_is_ieee(b)) return wa <= type_precision(b);
  if (type_kind(a) == TYPE_KIND_SINT) return type_kind(b) == TYPE_KIND_SINT && wb >= wa;
  return type_kind(b) == TYPE_KIND_UINT ? wb >= wa : wb > wa; /* unsigned into signed needs a bit more */
}

/* convert(convert(x, B), C) = convert(x, C) when converting x to B loses
 * nothing: the second conversion then sees x's own value. Except integer
 * to float to integer: float to integer saturates, integer to integer
 * wraps. And convert(convert(x, B), A) = x when A is x's type. Only
 * among pred, integers and IEEE floats, whose conversions the evaluator
 * rounds the same way whichever path the value took. */
static Instruction *rule_convert_chain(Instruction *inst) {
  if (inst->opcode != OP_CONVERT || inst->operands[0]->opcode != OP_CONVERT) return NULL;
  Instruction *x = inst->operands[0]->operands[0];
  ElementType a = x->shape.type, b = inst->operands[0]->shape.type, c = inst->shape.type;
  if (!type_holds_exactly(a, b) || !(type_is_exact(c) || type_is_ieee(c))) return NULL;
  if (type_is_integer(a) && type_is_float(b) && type_is_integer(c)) return NULL;
  if (a == c) return forward(inst, x);
  return add_like(inst, OP_CONVERT, &x, 1, &inst->attrs, NULL);
}

/* slice(slice(x, s1), s2) = slice(x, s): per dimension the outer start
 * and stride count in inner elements, each s1.stride apart from s1.start. */
static Instruction *rule_slice_of_slice(Instruction *inst) {
  if (inst->opcode != OP_SLICE || inst->operands[0]->opcode != OP_SLICE) return NULL;
  const SliceDims *outer = attrs_slice(&inst->attrs), *inner = attrs_slice(&inst->operands[0]->attrs);
  Instruction *x = inst->operands[0]->operands[0];
  int rank = inst->shape.rank;
  int64_t starts[AXLE_MAX_RANK], limits[AXLE_MAX_RANK], strides[AXLE_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    starts[d] = inner->starts.values[d] + outer->starts.values[d] * inner->strides.values[d];
    strides[d] = inner->strides.values[d] * outer->strides.values[d];
    int64_t n = inst->shape.dims[d];
    limits[d] = n == 0 ? starts[d] : starts[d] + (n - 1) * strides[d] + 1;
  }
  SliceDims slice = {{rank, starts}, {rank, limits}, {rank, strides}};
  Attrs attrs = inst->attrs;
  attrs.slice = &slice;
  return add_like(inst, OP_SLICE, &x, 1, &attrs, NULL);
}

/* A slice of everything (start 0, stride 1, every element), a pad of
 * nothing (all lo, hi and interior 0) and a concatenate of one operand are
 * that operand. */
static Instruction *rule_no_op_slice_pad_concatenate(Instruction *inst) {
  Instruction *x = inst->operand_count > 0 ? inst->operands[0] : NULL;
  if (inst->opcode == OP_CONCATENATE) return inst->operand_count == 1 ? forward(inst, x) : NULL;
  if (inst->opcode == OP_SLICE) {
    const SliceDims *s = attrs_slice(&inst->attrs);
    for (int d = 0; d < inst->shape.rank; d++)
      if (s->starts.values[d] != 0 || s->strides.values[d] != 1 || inst->shape.dims[d] != x->shape.dims[d])
        return NULL;
    return forward(inst, x);
  }
  if (inst->opcode == OP_PAD) {
    const PadDims *p = attrs_padding(&inst->attrs);
    for (int d = 0; d < p->rank; d++)
      if (p->lo[d] != 0 || p->hi[d] != 0 || p->interior[d] != 0) return NULL;
    return forward(inst, x);
  }
  return NULL;
}

/* The binary op a reducer applies, when its root is op(p0, p1) on its two
 * parameters; *swapped when it is op(p1, p0). */
static bool reducer_binary_op(const Computation *reducer, Opcode *op, bool *swapped) {
  const Instruction *root = reducer->root;
  if (reducer->parameter_count != 2 || opcode_form(root->opcode) != FORM_BINARY) return false;
  const Instruction *p0 = reducer->parameters[0], *p1 = reducer->parameters[1];
  *op = root->opcode;
  *swapped = root->operands[0] == p1 && root->operands[1] == p0;
  return (root->operands[0] == p0 && root->operands[1] == p1) || *swapped;
}

/* reduce(x, init) over no dimensions reduces one element per output, so it
 * is op(init, x) elementwise, where op is the reducer's (a single binary
 * op on its parameters). With init the identity, rule_identity_operand
 * then leaves x. */
static Instruction *rule_reduce_no_dimensions(Instruction *inst) {
  if (inst->opcode != OP_REDUCE || inst->operand_count != 2 || inst->attrs.dimensions.count != 0) return NULL;
  Opcode op;
  bool swapped;
  if (!reducer_binary_op(inst->called[0], &op, &swapped)) return NULL;
  Instruction *x = inst->operands[0], *init = inst->operands[1];
  Instruction *inits = add_beside(inst, OP_BROADCAST, &init, 1, NULL, &inst->shape, "broadcast");
  Instruction *operands[2] = {swapped ? x : inits, swapped ? inits : x};
  return add_beside(inst, op, operands, 2, NULL, &inst->shape, opcode_name(op));
}

/* ---- reshapes and transposes that only relabel memory ---- */

/* The dimensions of s from major to minor, leaving out those of size 1,
 * which take no part in the order of the bytes. */
static int physical_order(const Shape *s, const int64_t *relabel, int64_t *order) {
  int n = 0;
  for (int k = s->rank - 1; k >= 0; k--) {
    int d = s->minor_to_major[k];
    if (s->dims[d] != 1) order[n++] = relabel ? relabel[d] : d;
  }
  return n;
}

static bool order_is_increasing(const int64_t *order, int n) {
  for (int i = 1; i < n; i++)
    if (order[i] <= order[i - 1]) return false;
  return true;
}

/* reshape(x) = bitcast(x) when both shapes lay their elements out in
 * row-major order (a reshape keeps that order; a bitcast keeps the bytes):
 * their layouts list the dimensions of size above 1 from minor to major.
 * transpose(x, p) = bitcast(x) when the result's bytes come in the order
 * x's do: walking the result's dimensions major to minor, mapped through
 * p, gives x's own major-to-minor order. */
static Instruction *rule_relabel_as_bitcast(Instruction *inst) {
  if (inst->opcode != OP_RESHAPE && inst->opcode != OP_TRANSPOSE) return NULL;
  Instruction *x = inst->operands[0];
  if (x->shape.element_size_bits != inst->shape.element_size_bits) return NULL; /* packed differently */
  int64_t a[AXLE_MAX_RANK], b[AXLE_MAX_RANK];
  if (inst->opcode == OP_RESHAPE) {
    int na = physical_order(&x->shape, NULL, a), nb = physical_order(&inst->shape, NULL, b);
    if (!order_is_increasing(a, na) || !order_is_increasing(b, nb)) return NULL;
  } else {
    int na = physical_order(&x->shape, NULL, a);
    int nb = physical_order(&inst->shape, inst->attrs.dimensions.values, b);
    if (na != nb || memcmp(a, b, sizeof(int64_t) * (size_t)na) != 0) return NULL;
  }
  Attrs attrs = {0};
  return add_like(inst, OP_BITCAST, &x, 1, &attrs, NULL);
}

/* bitcast(x) to another element type of the same width = bitcast-convert(x),
 * after a bitcast to x's own type when the dimensions or the layout change
 * too: both keep every element's bits where they lie. XLA's simplifier
 * writes bitcast-converts as bitcasts once layouts are assigned, so every
 * sort XLA has optimized reads its TOTALORDER keys through an f32 -> s32
 * bitcast inside the comparator; backends see one form, bitcast-convert.
 * Packed (E(n)), complex and pred types keep the bitcast, which backends
 * refuse with a reason. */
static Instruction *rule_bitcast_changing_type(Instruction *inst) {
  if (inst->opcode != OP_BITCAST) return NULL;
  Instruction *x = inst->operands[0];
  ElementType from = x->shape.type, to = inst->shape.type;
  if (shape_is_tuple(&x->shape) || shape_is_tuple(&inst->shape) || from == to) return NULL;
  if (x->shape.element_size_bits || inst->shape.element_size_bits) return NULL;
  if (type_is_complex(from) || type_is_complex(to) || from == TYPE_PRED || to == TYPE_PRED) return NULL;
  if (type_bit_width(from) != type_bit_width(to)) return NULL;
  Shape relabelled = inst->shape;
  relabelled.type = from;
  if (!shape_identical(&relabelled, &x->shape)) {
    Attrs attrs = {0};
    x = add_like(inst, OP_BITCAST, &x, 1, &attrs, &relabelled);
  }
  Attrs attrs = {0};
  return add_like(inst, OP_BITCAST_CONVERT, &x, 1, &attrs, NULL);
}

/* ---- dot ---- */

/* Rewrites one side's dimension numbers through a transpose's permutation;
 * false when the free dimensions would change order (the dot's result lists
 * them in increasing order, so their order must survive). */
static bool dot_side_absorb(const IntList *batch, const IntList *contracting, const int64_t *perm, int rank,
                            int64_t *new_batch, int64_t *new_contracting) {
  bool bound[AXLE_MAX_RANK] = {false};
  for (int i = 0; i < batch->count; i++) new_batch[i] = perm[batch->values[i]], bound[batch->values[i]] = true;
  for (int i = 0; i < contracting->count; i++)
    new_contracting[i] = perm[contracting->values[i]], bound[contracting->values[i]] = true;
  int64_t last = -1;
  for (int d = 0; d < rank; d++) {
    if (bound[d]) continue;
    if (perm[d] <= last) return false;
    last = perm[d];
  }
  return true;
}

/* dot(transpose(a, p), b) = dot(a, b) with the lhs dimension numbers read
 * through p (dimension d of the transpose is a's p[d]), and likewise on the
 * rhs, as long as the free dimensions keep their order. */
static Instruction *rule_dot_absorb_transpose(Instruction *inst) {
  if (inst->opcode != OP_DOT) return NULL;
  const DotDims *dims = attrs_dot(&inst->attrs);
  int64_t lb[AXLE_MAX_RANK], lc[AXLE_MAX_RANK], rb[AXLE_MAX_RANK], rc[AXLE_MAX_RANK];
  DotDims absorbed = {{dims->lhs_batch.count, lb}, {dims->rhs_batch.count, rb},
                      {dims->lhs_contracting.count, lc}, {dims->rhs_contracting.count, rc},
                      {0, NULL}, {0, NULL}, dims->algorithm};
  for (int i = 0; i < dims->lhs_batch.count; i++) lb[i] = dims->lhs_batch.values[i];
  for (int i = 0; i < dims->rhs_batch.count; i++) rb[i] = dims->rhs_batch.values[i];
  for (int i = 0; i < dims->lhs_contracting.count; i++) lc[i] = dims->lhs_contracting.values[i];
  for (int i = 0; i < dims->rhs_contracting.count; i++) rc[i] = dims->rhs_contracting.values[i];
  Instruction *operands[2] = {inst->operands[0], inst->operands[1]};
  bool changed = false;
  for (int side = 0; side < 2; side++) {
    Instruction *t = inst->operands[side];
    if (t->opcode != OP_TRANSPOSE) continue;
    const IntList *batch = side == 0 ? &dims->lhs_batch : &dims->rhs_batch;
    const IntList *contracting = side == 0 ? &dims->lhs_contracting : &dims->rhs_contracting;
    if (!dot_side_absorb(batch, contracting, t->attrs.dimensions.values, t->shape.rank, side == 0 ? lb : rb,
                         side == 0 ? lc : rc))
      return NULL;
    operands[side] = t->operands[0];
    changed = true;
  }
  if (!changed) return NULL;
  Attrs attrs = inst->attrs;
  attrs.dot = &absorbed;
  return add_like(inst, OP_DOT, operands, 2, &attrs, NULL);
}

/* ---- tuples ---- */

/* get-tuple-element(tuple(a0, a1, ...), index=i) = ai. */
static Instruction *rule_tuple_element_forward(Instruction *inst) {
  if (inst->opcode != OP_GET_TUPLE_ELEMENT || inst->operands[0]->opcode != OP_TUPLE) return NULL;
  return forward(inst, inst->operands[0]->operands[inst->attrs.tuple_index]);
}

/* tuple(get-tuple-element(t, 0), ..., get-tuple-element(t, n-1)) = t when
 * t has exactly n elements. */
static Instruction *rule_tuple_of_its_elements(Instruction *inst) {
  if (inst->opcode != OP_TUPLE || inst->operand_count == 0) return NULL;
  Instruction *t = NULL;
  for (int k = 0; k < inst->operand_count; k++) {
    Instruction *e = inst->operands[k];
    if (e->opcode != OP_GET_TUPLE_ELEMENT || e->attrs.tuple_index != k) return NULL;
    if (t && e->operands[0] != t) return NULL;
    t = e->operands[0];
  }
  return forward(inst, t);
}

/* ---- sharding annotations ---- */

/* custom-call(x), custom_call_target="Sharding" (or SPMDFullToShardShape,
 * SPMDShardToFullShape) = x on one device, as XLA's ShardingRemover has it.
 * A layout that differs from x's becomes a copy, which changes no value. */
static Instruction *rule_sharding_is_its_operand(Instruction *inst) {
  if (!custom_call_is_identity(inst) || inst->operand_count != 1 || inst->called_count != 0) return NULL;
  Instruction *x = inst->operands[0];
  if (shape_identical(&inst->shape, &x->shape)) return x;
  if (shape_is_tuple(&x->shape) || inst->shape.type != x->shape.type || !shape_same_dims(&inst->shape, &x->shape))
    return NULL;
  Attrs none = {0};
  return add_like(inst, OP_COPY, &x, 1, &none, NULL);
}

/* ---- the driver ---- */

/* Tried in this order; the first that applies wins. The relabelling as a
 * bitcast comes after the chain rules, which it would otherwise hide. */
static RewriteRule *const rules[] = {
    /* elementwise values */
    rule_identity_operand,
    rule_right_identity,
    rule_absorbing_operand,
    rule_same_operands_idempotent,
    rule_same_operands_cancel,
    rule_compare_same_operands,
    rule_double_negation,
    rule_select,
    rule_divide_by_power_of_two,
    /* shape changes */
    rule_no_op_shape_change,
    rule_no_op_slice_pad_concatenate,
    rule_reverse_of_reverse,
    rule_move_broadcast_scalar,
    rule_broadcast_of_broadcast,
    rule_reshape_chain,
    rule_transpose_chain,
    rule_convert_chain,
    rule_slice_of_slice,
    rule_dynamic_slice_constant_starts,
    rule_reduce_no_dimensions,
    rule_dot_absorb_transpose,
    /* tuples and control flow; bitcasts last */
    rule_tuple_element_forward,
    rule_tuple_of_its_elements,
    simplify_rule_call_inline,
    simplify_rule_conditional_known_branch,
    rule_sharding_is_its_operand,
    rule_relabel_as_bitcast,
    rule_bitcast_changing_type,
};

static Instruction *instruction_simplify(Instruction *inst) {
  if (inst->opcode == OP_PARAMETER || inst->opcode == OP_CONSTANT || instruction_has_effects(inst))
    return NULL;
  for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
    Instruction *replacement = rules[r](inst);
    if (replacement && replacement != inst) return replacement;
  }
  return NULL;
}

/* One round over the instructions present at its start (new ones wait for
 * the next round). Dead instructions are skipped: rewriting them would
 * change nothing, and would make a second run of the pass report work. */
static bool computation_simplify_round(Computation *c) {
  int count = c->instruction_count;
  if (count == 0) return false;
  Instruction **snapshot = mem_calloc((size_t)count, sizeof *snapshot);
  memcpy(snapshot, c->instructions, sizeof *snapshot * (size_t)count);
  bool changed = false;
  for (int i = 0; i < count; i++) {
    Instruction *inst = snapshot[i];
    if (inst->user_count == 0 && inst != c->root) continue;
    Instruction *replacement = instruction_simplify(inst);
    if (!replacement) continue;
    instruction_replace_all_uses(inst, replacement);
    changed = true;
  }
  mem_free(snapshot);
  return changed;
}

/* The computations are visited from a snapshot: the loop rules add
 * computations (copies of a loop's condition and body, already simplified
 * as the originals were) and sort the module's list while it is walked. */
bool simplify_module(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx;
  enum { MAX_ROUNDS = 8 };
  int count = m->computation_count;
  Computation **computations = mem_calloc((size_t)count, sizeof *computations);
  for (int k = 0; k < count; k++) computations[k] = m->computations[k];
  bool changed = false;
  for (int k = 0; k < count && !*failed; k++) {
    Computation *c = computations[k];
    bool touched = false;
    for (int round = 0; round < MAX_ROUNDS; round++) {
      bool again = computation_simplify_round(c);
      again |= computation_simplify_loops(c);
      touched |= again;
      if (!again) break;
    }
    if (touched && !computation_sort(c, st)) *failed = true;
    changed |= touched;
  }
  mem_free(computations);
  return changed;
}
