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

/* ---- control ---- */

/* Whether operands [lo, hi) of inst are callee's parameters and callee's
 * root is result, in shape and layout: every target runs a called
 * computation on the caller's storage as it lies, and copies its root
 * leaf by leaf. */
static bool called_fits(const Instruction *inst, const Computation *callee, int lo, int hi, const Shape *result) {
  bool fits = callee && callee->root && callee->parameter_count == hi - lo && shape_identical(&callee->root->shape, result);
  for (int q = lo; q < hi && fits; q++) fits = shape_identical(&inst->operands[q]->shape, &callee->parameters[q - lo]->shape);
  return fits;
}

static const char *const called_differs = "a called computation whose parameters or result differ in shape or layout";

/* The loop state is one storage for init, the condition's and the body's
 * parameter and the body's root. */
static const char *while_refusal(const Instruction *inst) {
  if (inst->called_count != 2 || inst->operand_count != 1 || !inst->called[0]->root || !inst->called[1]->root)
    return "a malformed while";
  const Computation *condition = inst->called[0], *body = inst->called[1];
  const Shape *s = &inst->shape;
  if (!shape_identical(&inst->operands[0]->shape, s) || condition->parameter_count != 1 || body->parameter_count != 1 ||
      !shape_identical(s, &condition->parameters[0]->shape) || !shape_identical(s, &body->parameters[0]->shape) ||
      !shape_identical(&body->root->shape, s))
    return "a loop state whose shapes or layouts differ between init, condition and body";
  const Shape *pred = &condition->root->shape;
  if (shape_is_tuple(pred) || pred->type != TYPE_PRED || pred->rank != 0)
    return "a condition that does not return a pred scalar";
  return NULL;
}

/* The verifier admits none of these forms; a module built through the
 * library may still hold one. A fusion asked here is one run as a call
 * (no kernel computes it). */
const char *program_control_refusal(const Instruction *inst) {
  const Shape *s = &inst->shape;
  switch (inst->opcode) {
  case OP_WHILE: return while_refusal(inst);
  case OP_FUSION:
    if (inst->called_count != 1) return "a fusion of other than one computation";
    return called_fits(inst, inst->called[0], 0, inst->operand_count, s) ? NULL : called_differs;
  case OP_CONDITIONAL: {
    int count = inst->called_count;
    if (count < 1 || inst->operand_count != count + 1) return "a malformed conditional";
    const Shape *index = &inst->operands[0]->shape;
    bool is_pred = index->type == TYPE_PRED;
    if (shape_is_tuple(index) || index->rank != 0 || (!is_pred && index->type != TYPE_S32) || (is_pred && count != 2))
      return "a branch index that is not a pred or s32 scalar";
    for (int k = 0; k < count; k++)  /* branch k runs on operand k + 1 */
      if (!called_fits(inst, inst->called[k], k + 1, k + 2, s))
        return "a branch whose parameter or result differs in shape or layout";
    return NULL;
  }
  case OP_CALL:
    if (inst->called_count != 1) return "a call of other than one computation";
    return called_fits(inst, inst->called[0], 0, inst->operand_count, s) ? NULL : called_differs;
  case OP_ASYNC_START: {
    if (inst->called_count != 1 || !shape_is_tuple(s) || s->tuple_count < 2) return "a malformed async-start";
    /* element 0 holds the operands, each leaf as it is */
    int operand_leaves = 0, held = shape_element_first_leaf(s, 1);
    for (int k = 0; k < inst->operand_count; k++) operand_leaves += shape_leaf_count(&inst->operands[k]->shape);
    if (operand_leaves != held) return "an operand element that does not hold the operands";
    /* the computation runs on all the operands; its root is element 1 */
    if (!called_fits(inst, inst->called[0], 0, inst->operand_count, &s->tuple_shapes[1])) return called_differs;
    return program_forward_refusal(inst, 0, 0, held);
  }
  default: return NULL;
  }
}

/* ---- copies ---- */

/* The copy ops, in the order docs/gpu.md lists them.
 *   form       how the leaves are made (ProgramCopyForm)
 *   element    FROM_START: the element of the start's tuple handed on
 *              (-1: the whole tuple; copy-start's is (destination,
 *              source, context), so copy-done takes 0)
 *   exchanges  with several devices, an exchange between them: a
 *              COLLECTIVE step the target runs, not a copy */
static const ProgramCopyOp copy_ops[] = {
    /* op                          form                          element exchanges */
    {OP_ALL_REDUCE,                PROGRAM_COPY_FORWARD,         0,      true},
    {OP_ALL_GATHER,                PROGRAM_COPY_FORWARD,         0,      true},
    {OP_REDUCE_SCATTER,            PROGRAM_COPY_FORWARD,         0,      true},
    {OP_ALL_TO_ALL,                PROGRAM_COPY_FORWARD,         0,      true},
    {OP_COLLECTIVE_BROADCAST,      PROGRAM_COPY_FORWARD,         0,      true},
    {OP_COLLECTIVE_PERMUTE,        PROGRAM_COPY_PERMUTE,         0,      true},
    {OP_ALL_REDUCE_START,          PROGRAM_COPY_FORWARD,         0,      true},
    {OP_ALL_GATHER_START,          PROGRAM_COPY_START,           0,      true},
    {OP_COLLECTIVE_PERMUTE_START,  PROGRAM_COPY_START,           0,      true},
    {OP_REPLICA_ID,                PROGRAM_COPY_DEVICE_ID,       0,      true},
    {OP_PARTITION_ID,              PROGRAM_COPY_DEVICE_ID,       0,      true},
    {OP_ALL_REDUCE_DONE,           PROGRAM_COPY_FORWARD,         0,      false},
    {OP_ALL_GATHER_DONE,           PROGRAM_COPY_FROM_START,      1,      false},
    {OP_COLLECTIVE_PERMUTE_DONE,   PROGRAM_COPY_FROM_START,      1,      false},
    {OP_COLLECTIVE_REDUCE,         PROGRAM_COPY_FORWARD,         0,      false},
    {OP_ASYNC_UPDATE,              PROGRAM_COPY_FROM_START,      -1,     false},
    {OP_ASYNC_DONE,                PROGRAM_COPY_FROM_START,      1,      false},
    {OP_COPY_START,                PROGRAM_COPY_START,           0,      false},
    {OP_COPY_DONE,                 PROGRAM_COPY_FROM_START,      0,      false},
    {OP_ADD_DEPENDENCY,            PROGRAM_COPY_FORWARD,         0,      false},
    {OP_DOMAIN,                    PROGRAM_COPY_FORWARD,         0,      false},
    {OP_OPTIMIZATION_BARRIER,      PROGRAM_COPY_FORWARD,         0,      false},
    {OP_AFTER_ALL,                 PROGRAM_COPY_NOTHING,         0,      false},
    {OP_GET_DIMENSION_SIZE,        PROGRAM_COPY_DIMENSION_SIZE,  0,      false},
    {OP_SET_DIMENSION_SIZE,        PROGRAM_COPY_FORWARD,         0,      false},
    {OP_DYNAMIC_RESHAPE,           PROGRAM_COPY_DYNAMIC_RESHAPE, 0,      false},
};

const ProgramCopyOp *program_copy_op(Opcode op) {
  for (size_t i = 0; i < sizeof copy_ops / sizeof copy_ops[0]; i++)
    if (copy_ops[i].op == op) return &copy_ops[i];
  return NULL;
}

/* inst's leaves [to_leaf, to_leaf + count) are leaves [from_leaf, ...) of
 * a value of shape `from`, each in the same shape and layout. A leaf of no
 * bytes (a token, an empty array) needs no bytes, so any source will do. */
static const char *leaves_refusal(const Instruction *inst, int to_leaf, const Shape *from, int from_leaf, int count) {
  for (int l = 0; l < count; l++) {
    const Shape *to = shape_leaf_at(&inst->shape, to_leaf + l), *source = shape_leaf_at(from, from_leaf + l);
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

/* async-update hands the start's tuple on; a done takes one element of it. */
static const char *from_start_refusal(const Instruction *inst, int element) {
  const Instruction *start = inst->operand_count == 1 ? inst->operands[0] : NULL;
  if (!start || !shape_is_tuple(&start->shape) || start->shape.tuple_count < 2)
    return "an operand that is not a start's tuple";
  int first = element < 0 ? 0 : shape_element_first_leaf(&start->shape, element);
  return leaves_refusal(inst, 0, &start->shape, first, shape_leaf_count(&inst->shape));
}

/* A start's tuple: the operands in element 0, the result in element 1
 * (the operands again, or zeros for a permute that sends nothing to
 * replica 0), zeros in the context elements after. */
static const char *start_refusal(const Instruction *inst) {
  const char *why = program_start_form_refusal(inst);
  if (why) return why;
  const Shape *s = &inst->shape;
  int result_first = shape_element_first_leaf(s, 1), result_count = shape_element_first_leaf(s, 2) - result_first;
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
  const ProgramCopyOp *row = program_copy_op(inst->opcode);
  int leaves = shape_leaf_count(&inst->shape);
  if (!row) return "an op no copy makes";
  switch (row->form) {
  case PROGRAM_COPY_FORWARD: return program_forward_refusal(inst, 0, 0, leaves);
  case PROGRAM_COPY_FROM_START: return from_start_refusal(inst, row->element);
  case PROGRAM_COPY_START: return start_refusal(inst);
  case PROGRAM_COPY_PERMUTE: {
    const char *why = permute_refusal(inst);
    if (why || inst->attrs.source_target_pairs.count == 0) return why;  /* none sent: zeros */
    return program_forward_refusal(inst, 0, 0, leaves);
  }
  case PROGRAM_COPY_DIMENSION_SIZE: return dimension_size_refusal(inst);
  case PROGRAM_COPY_DYNAMIC_RESHAPE: return dynamic_reshape_refusal(inst);
  case PROGRAM_COPY_DEVICE_ID:  /* replica 0 of 1 */
  case PROGRAM_COPY_NOTHING:    /* a token: no storage */
    return NULL;
  }
  return NULL;
}
