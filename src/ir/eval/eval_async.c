/* The ops that order, move or wrap work: tokens, the asynchronous pairs,
 * host transfers (refused), the newer single-replica collectives, and the
 * ops on dimension sizes.
 *
 * An asynchronous pair runs at once: the start computes the wrapped op and
 * keeps (operands, result, context) in its tuple, the done hands the result
 * on. The context elements (u32[] or s32[] scalars in XLA's dumps) hold
 * zeros; nothing reads them. A token is a rank-0 value of no bytes. */
#include <stdlib.h>

#include "eval_internal.h"

static Literal *malformed(const Instruction *inst, const char *why, Status *st) {
  status_error(st, STATUS_VERIFY_ERROR, "%s %s: %s", opcode_name(inst->opcode), inst->name, why);
  return NULL;
}

static Literal *token_create(void) {
  Shape s = shape_scalar(TYPE_TOKEN);
  return literal_create(&s);
}

Literal *eval_after_all(const Instruction *inst, Literal *const *operands, Status *st) {
  (void)inst;
  (void)operands;
  (void)st;
  return token_create();
}

/* add-dependency, domain, set-dimension-size (on static shapes), async-update
 * and all-reduce-done: operand 0's value. */
Literal *eval_forward(const Instruction *inst, Literal *const *operands, Status *st) {
  (void)inst;
  (void)st;
  return literal_clone(operands[0]);
}

/* Element k of a start's tuple: what a done returns. */
static Literal *tuple_element(const Instruction *inst, const Literal *tuple, int k, Status *st) {
  if (tuple->shape.type != TYPE_TUPLE || tuple->shape.tuple_count <= k)
    return malformed(inst, "the operand is not a start's tuple", st);
  return literal_clone(tuple->elements[k]);
}

/* async-done, all-gather-done, collective-permute-done: the result. */
Literal *eval_async_done(const Instruction *inst, Literal *const *operands, Status *st) {
  return tuple_element(inst, operands[0], 1, st);
}

/* copy-done: the destination, element 0. */
Literal *eval_copy_done(const Instruction *inst, Literal *const *operands, Status *st) {
  return tuple_element(inst, operands[0], 0, st);
}

/* A start's tuple: first and second as given (owned by the tuple now), the
 * context elements zero-filled in their declared shapes. */
static Literal *start_tuple(const Instruction *inst, Literal *first, Literal *second, Status *st) {
  const Shape *decl = &inst->shape;
  if (!first || !second || decl->type != TYPE_TUPLE || decl->tuple_count < 2 || !decl->tuple_shapes) {
    bool computed = first && second; /* else st already says why */
    literal_free(first);
    literal_free(second);
    return computed ? malformed(inst, "the result must be a tuple of two or more", st) : NULL;
  }
  Literal **parts = mem_calloc((size_t)decl->tuple_count, sizeof *parts);
  parts[0] = first;
  parts[1] = second;
  for (int i = 2; i < decl->tuple_count; i++) parts[i] = literal_create(&decl->tuple_shapes[i]);
  Literal *out = literal_create_tuple(parts, decl->tuple_count);
  mem_free(parts);
  return out;
}

static Literal *operands_tuple(const Instruction *inst, Literal *const *operands) {
  Literal **parts = mem_calloc((size_t)inst->operand_count + 1, sizeof *parts);
  for (int i = 0; i < inst->operand_count; i++) parts[i] = literal_clone(operands[i]);
  Literal *out = literal_create_tuple(parts, inst->operand_count);
  mem_free(parts);
  return out;
}

/* The operands as one value: the value itself for one, a tuple for more. */
static Literal *operands_value(const Instruction *inst, Literal *const *operands) {
  return inst->operand_count == 1 ? literal_clone(operands[0]) : operands_tuple(inst, operands);
}

/* Runs fn as if inst were opcode op of the given shape (a start's result
 * element), so that a start reuses its synchronous op's rule. */
static Literal *run_as(const Instruction *inst, Opcode op, const Shape *shape, EvalOpFn *fn,
                       Literal *const *operands, Status *st) {
  Instruction as = *inst;
  as.opcode = op;
  as.shape = *shape;
  return fn(&as, operands, st);
}

static const Shape *result_element_shape(const Instruction *inst, int k) {
  static const Shape none;
  if (inst->shape.type != TYPE_TUPLE || inst->shape.tuple_count <= k || !inst->shape.tuple_shapes)
    return &none;
  return &inst->shape.tuple_shapes[k];
}

/* async-start runs the wrapped computation on its operands at once. */
Literal *eval_async_start(const Instruction *inst, Literal *const *operands, Status *st) {
  if (inst->called_count < 1) return malformed(inst, "needs calls=", st);
  Literal *result = eval_computation(inst->called[0], operands, inst->operand_count, st);
  if (!result) return NULL;
  bool unwrapped = inst->operand_count == 1 && result_element_shape(inst, 0)->type != TYPE_TUPLE;
  Literal *args = unwrapped ? literal_clone(operands[0]) : operands_tuple(inst, operands);
  return start_tuple(inst, args, result, st);
}

Literal *eval_all_gather_start(const Instruction *inst, Literal *const *operands, Status *st) {
  Literal *result = run_as(inst, OP_ALL_GATHER, result_element_shape(inst, 1), eval_all_gather, operands, st);
  return result ? start_tuple(inst, operands_value(inst, operands), result, st) : NULL;
}

Literal *eval_collective_permute_start(const Instruction *inst, Literal *const *operands, Status *st) {
  Literal *result = run_as(inst, OP_COLLECTIVE_PERMUTE, result_element_shape(inst, 1),
                           eval_collective_permute, operands, st);
  return result ? start_tuple(inst, literal_clone(operands[0]), result, st) : NULL;
}

/* copy-start: (destination, source, context); the destination is the copy. */
Literal *eval_copy_start(const Instruction *inst, Literal *const *operands, Status *st) {
  return start_tuple(inst, literal_clone(operands[0]), literal_clone(operands[0]), st);
}

/* send, recv, infeed and outfeed talk to the host or another program,
 * which a module run on its own does not have. */
Literal *eval_host_transfer(const Instruction *inst, Literal *const *operands, Status *st) {
  (void)operands;
  status_error(st, STATUS_UNSUPPORTED, "%s %s: host transfer ops are not supported",
               opcode_name(inst->opcode), inst->name);
  return NULL;
}

/* shuffle has no published semantics yet (XLA's operation-semantics page
 * does not describe it), so it is parsed and refused. */
Literal *eval_shuffle(const Instruction *inst, Literal *const *operands, Status *st) {
  (void)operands;
  status_error(st, STATUS_UNSUPPORTED,
               "shuffle %s: shuffle is not supported (its semantics are "
               "not documented by XLA)",
               inst->name);
  return NULL;
}

/* ragged-all-to-all on one replica: for each update j, rows
 * [input_offsets[j], +send_sizes[j]) of the input land at rows
 * [output_offsets[j], +send_sizes[j]) of the output buffer (operand 1);
 * recv_sizes must agree with send_sizes, as replica 0 receives what it
 * sends. Rows run along dimension 0. */
Literal *eval_ragged_all_to_all(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *in = operands[0], *out_buffer = operands[1];
  Literal *out = literal_clone(out_buffer);
  int64_t updates = shape_element_count(&operands[2]->shape);
  int64_t row_in =
      in->shape.rank ? shape_element_count(&in->shape) / (in->shape.dims[0] ? in->shape.dims[0] : 1) : 1;
  int size = type_byte_size(in->shape.type);
  for (int64_t j = 0; j < updates; j++) {
    int64_t from = literal_get_s64(operands[2], j), count = literal_get_s64(operands[3], j);
    int64_t to = literal_get_s64(operands[4], j), recv = literal_get_s64(operands[5], j);
    /* written so that no sum of user-given values can overflow */
    if (count != recv || count < 0 || from < 0 || to < 0 || from > in->shape.dims[0] - count ||
        to > out_buffer->shape.dims[0] - count) {
      literal_free(out);
      status_error(st, STATUS_RUNTIME_ERROR,
                   "ragged-all-to-all %s: update %lld (offsets %lld -> %lld, sizes %lld/%lld) is out "
                   "of range or unmatched",
                   inst->name, (long long)j, (long long)from, (long long)to, (long long)count,
                   (long long)recv);
      return NULL;
    }
    memcpy((char *)out->data + to * row_in * size, (const char *)in->data + from * row_in * size,
           (size_t)(count * row_in * size));
  }
  return out;
}

/* get-dimension-size on a static shape is that dimension's size. */
Literal *eval_get_dimension_size(const Instruction *inst, Literal *const *operands, Status *st) {
  const IntList *d = &inst->attrs.dimensions;
  if (d->count != 1 || d->values[0] < 0 || d->values[0] >= operands[0]->shape.rank)
    return malformed(inst, "dimensions must name one operand dimension", st);
  Shape s = shape_scalar(TYPE_S32);
  Literal *out = literal_create(&s);
  literal_set_s64(out, 0, operands[0]->shape.dims[d->values[0]]);
  return out;
}

/* dynamic-reshape on static shapes: a reshape whose size operands must be
 * the declared dims (a smaller size would need a dynamic shape). */
Literal *eval_dynamic_reshape(const Instruction *inst, Literal *const *operands, Status *st) {
  for (int i = 1; i < inst->operand_count; i++) {
    int64_t size = literal_get_s64(operands[i], 0);
    if (i - 1 >= inst->shape.rank || size != inst->shape.dims[i - 1]) {
      status_error(st, STATUS_UNSUPPORTED,
                   "dynamic-reshape %s: size %lld for dimension %d differs from the static %lld; "
                   "dynamic shapes are not supported",
                   inst->name, (long long)size, i - 1,
                   (long long)(i - 1 < inst->shape.rank ? inst->shape.dims[i - 1] : -1));
      return NULL;
    }
  }
  return run_as(inst, OP_RESHAPE, &inst->shape, eval_reshape, operands, st);
}
