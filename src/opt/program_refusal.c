/* What no target runs, decided once by the program stage (program.h) and
 * recorded on the step as its `unsupported` reason, so that backend_compile
 * refuses it, located, before any target is asked to make code. What one
 * target cannot do and another can stays in that target's supports hook.
 *
 * Two families are decided here. The control ops' forms that every
 * backend's walk relies on. And the copies: the ops whose value is their
 * operands' bytes, moved (the wrappers that only order work, the
 * asynchronous pairs run at once, the size ops on static shapes and, when
 * one device runs, the collectives: an all-reduce of one value is the
 * value). The evaluator (src/ir/eval/eval_async.c) defines each; a copy
 * can make of it only result leaves taken whole from operand leaves of the
 * same shape and layout, zeros, or a size. */
#include "opt/program.h"

/* Leaf `leaf` (depth first) of s; NULL past its last. */
static const Shape *leaf_at(const Shape *s, int leaf) {
  if (!shape_is_tuple(s)) return leaf == 0 ? s : NULL;
  for (int i = 0; i < s->tuple_count; i++) {
    int n = shape_leaf_count(&s->tuple_shapes[i]);
    if (leaf < n) return leaf_at(&s->tuple_shapes[i], leaf);
    leaf -= n;
  }
  return NULL;
}

/* The first leaf of element k of a tuple shape. */
static int element_first_leaf(const Shape *s, int k) {
  int first = 0;
  for (int i = 0; i < k; i++) first += shape_leaf_count(&s->tuple_shapes[i]);
  return first;
}

/* ---- control ---- */

/* The verifier admits none of these forms; a module built through the
 * library may still hold one. */
const char *program_control_refusal(const Instruction *inst) {
  const Shape *s = &inst->shape;
  switch (inst->opcode) {
  case OP_CONDITIONAL: {
    int count = inst->called_count;
    if (count < 1 || inst->operand_count != count + 1) return "a malformed conditional";
    const Shape *index = &inst->operands[0]->shape;
    bool is_pred = index->type == TYPE_PRED;
    if (shape_is_tuple(index) || index->rank != 0 || (!is_pred && index->type != TYPE_S32) || (is_pred && count != 2))
      return "a branch index that is not a pred or s32 scalar";
    return NULL;
  }
  case OP_CALL: return inst->called_count != 1 ? "a call of other than one computation" : NULL;
  case OP_ASYNC_START: {
    if (inst->called_count != 1 || !shape_is_tuple(s) || s->tuple_count < 2) return "a malformed async-start";
    /* element 0 holds the operands, each leaf as it is */
    int operand_leaves = 0, held = element_first_leaf(s, 1);
    for (int k = 0; k < inst->operand_count; k++) operand_leaves += shape_leaf_count(&inst->operands[k]->shape);
    if (operand_leaves != held) return "an operand element that does not hold the operands";
    return program_forward_refusal(inst, 0, 0, held);
  }
  default: return NULL;
  }
}

/* ---- copies ---- */

/* inst's leaves [to_leaf, to_leaf + count) are leaves [from_leaf, ...) of
 * a value of shape `from`, each in the same shape and layout. A leaf of no
 * bytes (a token, an empty array) needs no bytes, so any source will do. */
static const char *leaves_refusal(const Instruction *inst, int to_leaf, const Shape *from, int from_leaf, int count) {
  for (int l = 0; l < count; l++) {
    const Shape *to = leaf_at(&inst->shape, to_leaf + l), *source = leaf_at(from, from_leaf + l);
    if (to && shape_buffer_byte_size(to) == 0) continue;
    if (!to || !source || !shape_identical(source, to)) return "a value forwarded into a different shape or layout";
  }
  return NULL;
}

const char *program_forward_refusal(const Instruction *inst, int first, int to_leaf, int count) {
  for (int k = first; k < inst->operand_count && count > 0; k++) {
    const Shape *s = &inst->operands[k]->shape;
    int n = shape_leaf_count(s);
    if (n > count) n = count;
    const char *why = leaves_refusal(inst, to_leaf, s, 0, n);
    if (why) return why;
    to_leaf += n;
    count -= n;
  }
  return count == 0 ? NULL : "fewer operand leaves than result leaves";
}

/* One replica runs: a permute may only send replica 0 to itself. */
static const char *permute_refusal(const Instruction *inst) {
  const IntList *pairs = &inst->attrs.source_target_pairs;
  for (int k = 0; k < pairs->count; k++)
    if (pairs->values[k] != 0) return "a permute between replicas (one replica runs)";
  return NULL;
}

/* async-update hands the start's tuple on; a done takes element 1 of it
 * (copy-done element 0: copy-start's tuple is (destination, source,
 * context)). */
static const char *async_forward_refusal(const Instruction *inst) {
  const Instruction *start = inst->operand_count == 1 ? inst->operands[0] : NULL;
  if (!start || !shape_is_tuple(&start->shape) || start->shape.tuple_count < 2)
    return "an operand that is not a start's tuple";
  int first = 0;
  if (inst->opcode != OP_ASYNC_UPDATE) first = element_first_leaf(&start->shape, inst->opcode == OP_COPY_DONE ? 0 : 1);
  return leaves_refusal(inst, 0, &start->shape, first, shape_leaf_count(&inst->shape));
}

/* A start's tuple: the operands in element 0, the result in element 1
 * (the operands again, or zeros for a permute that sends nothing to
 * replica 0), zeros in the context elements after. */
static const char *start_refusal(const Instruction *inst) {
  const char *why = program_start_form_refusal(inst);
  if (why) return why;
  const Shape *s = &inst->shape;
  int result_first = element_first_leaf(s, 1), result_count = element_first_leaf(s, 2) - result_first;
  if ((why = program_forward_refusal(inst, 0, 0, result_first))) return why;
  if (inst->opcode == OP_COLLECTIVE_PERMUTE_START) {
    if ((why = permute_refusal(inst))) return why;
    if (inst->attrs.source_target_pairs.count == 0) return NULL;
  }
  return program_forward_refusal(inst, 0, result_first, result_count);
}

const char *program_start_form_refusal(const Instruction *inst) {
  const Shape *s = &inst->shape;
  if (!shape_is_tuple(s) || s->tuple_count < 2 || inst->operand_count < 1) return "a start whose result is not a tuple";
  return NULL;
}

/* get-dimension-size on a static shape is the size: one s32 scalar. */
static const char *dimension_size_refusal(const Instruction *inst) {
  const IntList *d = &inst->attrs.dimensions;
  const Shape *of = &inst->operands[0]->shape, *s = &inst->shape;
  if (d->count != 1 || shape_is_tuple(of) || d->values[0] < 0 || d->values[0] >= of->rank || shape_is_tuple(s) ||
      s->type != TYPE_S32 || s->rank != 0)
    return "a get-dimension-size that is not one s32 dimension";
  return NULL;
}

/* dynamic-reshape on static shapes is a reshape: its sizes must be the
 * static dims, and with both sides row-major the bytes stay in order. */
static const char *dynamic_reshape_refusal(const Instruction *inst) {
  for (int i = 1; i < inst->operand_count; i++) {
    const Instruction *size = inst->operands[i];
    const Literal *lit = size->opcode == OP_CONSTANT ? size->attrs.literal : NULL;
    if (!lit || i - 1 >= inst->shape.rank || literal_get_s64(lit, 0) != inst->shape.dims[i - 1])
      return "a dynamic-reshape whose sizes are not the static dims as constants";
  }
  const Shape *from = &inst->operands[0]->shape, *to = &inst->shape;
  if (from->element_size_bits || to->element_size_bits) return "a packed layout (E(n))";
  if (shape_is_tuple(from) || shape_is_tuple(to) || !shape_is_row_major(from) || !shape_is_row_major(to) ||
      shape_byte_size(from) != shape_byte_size(to))
    return "a dynamic-reshape between layouts";
  return NULL;
}

const char *program_copy_refusal(const Instruction *inst) {
  int leaves = shape_leaf_count(&inst->shape);
  switch (inst->opcode) {
  case OP_ASYNC_UPDATE:
  case OP_ASYNC_DONE:
  case OP_ALL_GATHER_DONE:
  case OP_COLLECTIVE_PERMUTE_DONE:
  case OP_COPY_DONE:
    return async_forward_refusal(inst);
  case OP_ALL_GATHER_START:
  case OP_COLLECTIVE_PERMUTE_START:
  case OP_COPY_START:
    return start_refusal(inst);
  case OP_COLLECTIVE_PERMUTE: {
    const char *why = permute_refusal(inst);
    if (why || inst->attrs.source_target_pairs.count == 0) return why;  /* none sent: zeros */
    return program_forward_refusal(inst, 0, 0, leaves);
  }
  case OP_REPLICA_ID:
  case OP_PARTITION_ID:   /* replica 0 of 1 */
  case OP_AFTER_ALL:      /* a token: no storage */
    return NULL;
  case OP_GET_DIMENSION_SIZE: return dimension_size_refusal(inst);
  case OP_DYNAMIC_RESHAPE: return dynamic_reshape_refusal(inst);
  default:
    /* the wrappers that only order work and the collectives of one
     * replica hand their operands' leaves on */
    return program_forward_refusal(inst, 0, 0, leaves);
  }
}
