/* The reference evaluator: runs a computation instruction by instruction.
 *
 * This file holds the driver: argument checks, value lifetimes and the
 * opcode table. The ops live in the other eval_*.c files, one family each
 * (eval_control.c, eval_elementwise.c, eval_convert.c, eval_movement.c, ...). */
#include <assert.h>
#include <stdlib.h>

#include "eval_internal.h"

/* parameter and constant are handled by the driver: their values are
 * borrowed, not computed. */
static EvalOpFn *const eval_table[OP_COUNT] = {
    /* FORM_UNARY and FORM_BINARY rows take eval_unary / eval_binary (see
     * eval_rule below), so they have no entry here. */
    [OP_COMPARE] = eval_compare, [OP_SELECT] = eval_select, [OP_CLAMP] = eval_clamp,
    [OP_COMPLEX] = eval_complex, [OP_REAL] = eval_real, [OP_IMAG] = eval_imag, [OP_FFT] = eval_fft,
    [OP_CONVERT] = eval_convert, [OP_BITCAST_CONVERT] = eval_bitcast_convert,
    [OP_REDUCE_PRECISION] = eval_reduce_precision,
    [OP_STOCHASTIC_CONVERT] = eval_stochastic_convert,
    [OP_BROADCAST] = eval_broadcast, [OP_RESHAPE] = eval_reshape,
    [OP_TRANSPOSE] = eval_transpose, [OP_SLICE] = eval_slice,
    [OP_DYNAMIC_SLICE] = eval_dynamic_slice,
    [OP_DYNAMIC_UPDATE_SLICE] = eval_dynamic_update_slice,
    [OP_CONCATENATE] = eval_concatenate, [OP_PAD] = eval_pad, [OP_REVERSE] = eval_reverse,
    [OP_IOTA] = eval_iota, [OP_COPY] = eval_copy, [OP_BITCAST] = eval_bitcast,
    [OP_REDUCE] = eval_reduce, [OP_REDUCE_WINDOW] = eval_reduce_window,
    [OP_SELECT_AND_SCATTER] = eval_select_and_scatter,
    [OP_ALL_REDUCE] = eval_all_reduce, [OP_ALL_GATHER] = eval_all_gather,
    [OP_REDUCE_SCATTER] = eval_reduce_scatter,
    [OP_COLLECTIVE_PERMUTE] = eval_collective_permute,
    [OP_GATHER] = eval_gather, [OP_SCATTER] = eval_scatter, [OP_SORT] = eval_sort,
    [OP_DOT] = eval_dot, [OP_CONVOLUTION] = eval_convolution,
    [OP_CHOLESKY] = eval_cholesky, [OP_TRIANGULAR_SOLVE] = eval_triangular_solve,
    [OP_BATCH_NORM_INFERENCE] = eval_batch_norm_inference,
    [OP_BATCH_NORM_TRAINING] = eval_batch_norm_training,
    [OP_BATCH_NORM_GRAD] = eval_batch_norm_grad,
    [OP_RNG_BIT_GENERATOR] = eval_rng_bit_generator,
    [OP_TUPLE] = eval_tuple, [OP_GET_TUPLE_ELEMENT] = eval_get_tuple_element,
    [OP_CALL] = eval_call, [OP_WHILE] = eval_while, [OP_CONDITIONAL] = eval_conditional,
    [OP_FUSION] = eval_fusion, [OP_MAP] = eval_map,
    [OP_OPTIMIZATION_BARRIER] = eval_optimization_barrier,
    [OP_CUSTOM_CALL] = eval_custom_call,
    [OP_REPLICA_ID] = eval_replica_id, [OP_PARTITION_ID] = eval_replica_id,
    [OP_TOPK] = eval_topk, [OP_SCAN] = eval_scan,
    [OP_RNG] = eval_rng, [OP_RNG_GET_AND_UPDATE_STATE] = eval_rng_get_and_update_state,
    [OP_SCALED_DOT] = eval_scaled_dot, [OP_RAGGED_DOT] = eval_ragged_dot,
    /* eval_async.c; the single-replica collectives are identities, as all-reduce is */
    [OP_AFTER_ALL] = eval_after_all, [OP_ADD_DEPENDENCY] = eval_forward,
    [OP_DOMAIN] = eval_forward, [OP_SET_DIMENSION_SIZE] = eval_forward,
    [OP_ASYNC_START] = eval_async_start, [OP_ASYNC_UPDATE] = eval_forward,
    [OP_ASYNC_DONE] = eval_async_done, [OP_ALL_REDUCE_START] = eval_all_reduce,
    [OP_ALL_REDUCE_DONE] = eval_forward, [OP_ALL_GATHER_START] = eval_all_gather_start,
    [OP_ALL_GATHER_DONE] = eval_async_done,
    [OP_COLLECTIVE_PERMUTE_START] = eval_collective_permute_start,
    [OP_COLLECTIVE_PERMUTE_DONE] = eval_async_done, [OP_COPY_START] = eval_copy_start,
    [OP_COPY_DONE] = eval_copy_done, [OP_ALL_TO_ALL] = eval_all_reduce,
    [OP_COLLECTIVE_BROADCAST] = eval_all_reduce, [OP_COLLECTIVE_REDUCE] = eval_all_reduce,
    [OP_RAGGED_ALL_TO_ALL] = eval_ragged_all_to_all,
    [OP_SEND] = eval_host_transfer, [OP_SEND_DONE] = eval_host_transfer,
    [OP_RECV] = eval_host_transfer, [OP_RECV_DONE] = eval_host_transfer,
    [OP_INFEED] = eval_host_transfer, [OP_OUTFEED] = eval_host_transfer,
    [OP_SHUFFLE] = eval_shuffle, [OP_GET_DIMENSION_SIZE] = eval_get_dimension_size,
    [OP_DYNAMIC_RESHAPE] = eval_dynamic_reshape,
};
static_assert(AXLE_OPCODE_COUNT == 136, "a new opcode needs a row in eval_table");

static EvalOpFn *eval_rule(Opcode op) {
  if (opcode_form(op) == FORM_UNARY) return eval_unary;
  if (opcode_form(op) == FORM_BINARY) return eval_binary;
  return eval_table[op];
}

/* Does a literal fit a parameter's shape (element types, dimensions and
 * tuple structure; layouts do not matter to values)? */
static bool literal_fits_shape(const Literal *lit, const Shape *shape) {
  if (shape->type == TYPE_TUPLE) {
    if (lit->shape.type != TYPE_TUPLE || lit->shape.tuple_count != shape->tuple_count) return false;
    for (int i = 0; i < shape->tuple_count; i++)
      if (!literal_fits_shape(lit->elements[i], &shape->tuple_shapes[i])) return false;
    return true;
  }
  return lit->shape.type == shape->type && shape_same_dims(&lit->shape, shape);
}

static bool check_arguments(const Computation *c, Literal *const *args, int arg_count,
                            Status *st) {
  if (arg_count != c->parameter_count)
    return status_error(st, STATUS_INPUT_ERROR, "computation %s takes %d arguments, got %d",
                        c->name, c->parameter_count, arg_count);
  for (int p = 0; p < arg_count; p++) {
    const Instruction *param = c->parameters[p];
    if (!args[p] || (param && !literal_fits_shape(args[p], &param->shape))) {
      StrBuf want = {0}, got = {0};
      if (param) shape_print(&want, &param->shape, false);
      if (args[p]) shape_print(&got, &args[p]->shape, false);
      status_error(st, STATUS_INPUT_ERROR, "computation %s: argument %d should be %s, got %s",
                   c->name, p, want.data ? want.data : "?", got.data ? got.data : "nothing");
      strbuf_free(&want);
      strbuf_free(&got);
      return false;
    }
  }
  return true;
}

/* last_use[i]: the position of the last instruction that reads instruction
 * i's value (the root is read by the caller: it has no last use here). */
static int *compute_last_uses(const Computation *c) {
  int *last_use = mem_malloc(((size_t)c->instruction_count + 1) * sizeof *last_use);
  if (!last_use) return NULL;
  for (int i = 0; i < c->instruction_count; i++) last_use[i] = -1;
  for (int i = 0; i < c->instruction_count; i++) {
    const Instruction *inst = c->instructions[i];
    for (int k = 0; k < inst->operand_count; k++) last_use[inst->operands[k]->index] = i;
  }
  last_use[c->root->index] = c->instruction_count;
  return last_use;
}

/* One op on given values: the engine of evaluate_instruction below and of
 * constant folding. */
Literal *eval_instruction(const Instruction *inst, Literal *const *operands, Status *st) {
  if (inst->opcode == OP_PARAMETER || inst->opcode == OP_CONSTANT) {
    status_error(st, STATUS_UNSUPPORTED, "eval_instruction: %s has no operands to compute from",
                 opcode_name(inst->opcode));
    return NULL;
  }
  EvalOpFn *fn = eval_rule(inst->opcode);
  if (!fn) {
    status_error(st, STATUS_UNSUPPORTED, "the evaluator has no rule for %s", opcode_name(inst->opcode));
    return NULL;
  }
  for (int k = 0; k < inst->operand_count; k++)
    if (!operands[k]) {
      status_error(st, STATUS_INPUT_ERROR, "eval_instruction: operand %d of %s is missing", k, inst->name);
      return NULL;
    }
  return fn(inst, operands, st);
}

/* One instruction's value: parameters and constants are borrowed, every
 * other value is computed by its opcode's function and owned here. */
static Literal *evaluate_instruction(const Instruction *inst, Literal *const *values,
                                     Literal *const *args, int arg_count, Status *st) {
  if (inst->opcode == OP_PARAMETER) {
    int64_t number = inst->attrs.parameter_number;
    if (number >= 0 && number < arg_count) return args[number];
    status_error(st, STATUS_VERIFY_ERROR, "parameter(%lld) is out of range", (long long)number);
    return NULL;
  }
  if (inst->opcode == OP_CONSTANT) {
    if (!inst->attrs.literal) status_error(st, STATUS_VERIFY_ERROR, "constant without a value");
    return inst->attrs.literal;
  }
  Literal **operands = mem_calloc((size_t)inst->operand_count + 1, sizeof *operands);
  if (!operands) {
    status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  for (int k = 0; k < inst->operand_count; k++) {
    operands[k] = values[inst->operands[k]->index];
    if (!operands[k]) {
      /* Only an operand defined after its user can be missing here. */
      status_error(st, STATUS_VERIFY_ERROR, "%s reads %s before it is computed", inst->name,
                   inst->operands[k]->name);
      mem_free(operands);
      return NULL;
    }
  }
  Literal *result = eval_instruction(inst, operands, st);
  mem_free(operands);
  return result;
}

/* Runs the instructions in order. Each value is freed right after its last
 * reader has run, so a loop body or a long chain holds only what is live. */
Literal *eval_computation(const Computation *c, Literal *const *args, int arg_count, Status *st) {
  if (!c->root) {
    status_error(st, STATUS_VERIFY_ERROR, "computation %s has no root", c->name);
    return NULL;
  }
  if (!check_arguments(c, args, arg_count, st)) return NULL;
  int n = c->instruction_count;
  /* values[i] is instruction i's result; borrowed[i] marks parameters and
   * constants, whose literals belong to someone else. */
  Literal **values = mem_calloc((size_t)n + 1, sizeof *values);
  bool *borrowed = mem_calloc((size_t)n + 1, sizeof *borrowed);
  int *last_use = compute_last_uses(c);
  Literal *result = NULL;
  bool ok = values && borrowed && last_use;
  if (!ok) status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; ok && i < n; i++) {
    const Instruction *inst = c->instructions[i];
    borrowed[i] = inst->opcode == OP_PARAMETER || inst->opcode == OP_CONSTANT;
    values[i] = evaluate_instruction(inst, values, args, arg_count, st);
    if (!values[i]) {
      ok = false;
      if (st->loc.line == 0) {
        st->file = c->module ? c->module->filename : NULL;
        st->loc = inst->loc;
      }
      break;
    }
    if (last_use[i] < 0 && !borrowed[i]) {  /* nothing reads it */
      literal_free(values[i]);
      values[i] = NULL;
    }
    for (int k = 0; k < inst->operand_count; k++) {
      int used = inst->operands[k]->index;
      if (last_use[used] == i && !borrowed[used]) {
        literal_free(values[used]);
        values[used] = NULL;
      }
    }
  }
  if (ok) {
    int r = c->root->index;
    result = borrowed[r] ? literal_clone(values[r]) : values[r];
    if (!borrowed[r]) values[r] = NULL;
  }
  for (int i = 0; values && borrowed && i < n; i++)
    if (!borrowed[i]) literal_free(values[i]);
  mem_free(last_use);
  mem_free(values);
  mem_free(borrowed);
  return result;
}

void *eval_scratch_calloc(int64_t count, size_t size) {
  return mem_calloc((size_t)(count > 0 ? count : 1), size);
}

bool eval_check_same_dims(const Instruction *inst, const Literal *operand, Status *st) {
  if (operand->shape.type == TYPE_TUPLE || inst->shape.type == TYPE_TUPLE ||
      !shape_same_dims(&operand->shape, &inst->shape))
    return status_error(st, STATUS_VERIFY_ERROR, "%s: operand dimensions differ from the result's",
                        opcode_name(inst->opcode));
  return true;
}

/* Ops the evaluator refuses whatever the inputs: values of dynamic
 * dimensions, collectives over more than one device, the host transfers
 * and shuffle. Their rules ignore operands, so each is asked for its refusal
 * without running anything. A custom-call is refused unless its target is
 * one the evaluator runs (eval_custom_call.c). */
static bool refused_whatever_the_inputs(Opcode op) {
  switch (op) {
  case OP_SHUFFLE:
  case OP_SEND: case OP_SEND_DONE: case OP_RECV: case OP_RECV_DONE: case OP_INFEED: case OP_OUTFEED:
    return true;
  default:
    return false;
  }
}

static bool shape_has_dynamic_dims(const Shape *s) {
  if (s->type != TYPE_TUPLE) return s->dynamic_dims != 0;
  for (int i = 0; i < s->tuple_count && s->tuple_shapes; i++)
    if (shape_has_dynamic_dims(&s->tuple_shapes[i])) return true;
  return false;
}

/* How many devices a collective's text says it runs on: one past the
 * largest id its replica_groups or source_target_pairs name; with neither,
 * the group size its shapes show (an all-gather's result G times its
 * operand along the dimension, a reduce-scatter's 1/G). 1 for other ops. */
static int64_t collective_device_count(const Instruction *inst) {
  const IntList *groups = &attrs_replica_groups(&inst->attrs)->ids;
  const IntList *ids = groups->count > 0 ? groups : &inst->attrs.source_target_pairs;
  int64_t count = 1;
  for (int k = 0; k < ids->count; k++)
    if (ids->values[k] + 1 > count) count = ids->values[k] + 1;
  Opcode op = inst->opcode;
  bool resizes = op == OP_ALL_GATHER || op == OP_REDUCE_SCATTER || op == OP_ALL_GATHER_START;
  if (ids->count > 0 || !resizes || inst->operand_count < 1 || inst->attrs.dimensions.count != 1) return count;
  const Shape *x = &inst->operands[0]->shape, *y = &inst->shape;
  if (op == OP_ALL_GATHER_START && shape_is_tuple(y) && y->tuple_count == 2 && y->tuple_shapes) y = &y->tuple_shapes[1];
  int64_t d = inst->attrs.dimensions.values[0];
  if (shape_is_tuple(x) || shape_is_tuple(y) || d >= x->rank || d >= y->rank) return count;
  int64_t small = op == OP_REDUCE_SCATTER ? y->dims[d] : x->dims[d];
  int64_t large = op == OP_REDUCE_SCATTER ? x->dims[d] : y->dims[d];
  return small > 0 && large > small ? large / small : count;
}

/* Refuses inst, located, for its dynamic dimensions. */
static bool refuse_dynamic(const Module *m, const Instruction *inst, Status *st) {
  StrBuf text = {0};
  shape_print(&text, &inst->shape, false);
  status_error(st, STATUS_UNSUPPORTED, "instruction '%s' (%s): dynamic dimensions (%s) are not supported",
               inst->name, opcode_name(inst->opcode), text.data ? text.data : "");
  strbuf_free(&text);
  st->file = m->filename;
  st->loc = inst->loc;
  return false;
}

bool module_refuse_unbounded_dims(const Module *m, Status *st) {
  for (int c = 0; c < m->computation_count; c++)
    for (int i = 0; i < m->computations[c]->instruction_count; i++) {
      const Instruction *inst = m->computations[c]->instructions[i];
      if (shape_has_unbounded_dims(&inst->shape)) return refuse_dynamic(m, inst, st);
    }
  return true;
}

/* Whether a run over replicas x partitions devices can run inst; false
 * with st set (unlocated) when it cannot. */
static bool instruction_supported(const Instruction *inst, int64_t replicas, int64_t partitions, Status *st) {
  bool permute = inst->opcode == OP_COLLECTIVE_PERMUTE || inst->opcode == OP_COLLECTIVE_PERMUTE_START;
  int64_t devices = collective_device_count(inst);
  if (replicas * partitions > 1) {
    if (!collective_check_devices(inst, replicas, partitions, st)) return false;
  } else if (devices > 1) {
    return status_error(st, STATUS_UNSUPPORTED, "instruction '%s' (%s) needs %lld devices; this run has 1",
                        inst->name, opcode_name(inst->opcode), (long long)devices);
  } else if (permute && inst->operand_count > 1) {
    return status_error(st, STATUS_UNSUPPORTED, "instruction '%s' (%s): the %s form is not supported", inst->name,
                        opcode_name(inst->opcode), collective_permute_is_in_place(inst) ? "in-place" : "combined");
  }
  if (inst->opcode == OP_CUSTOM_CALL) return eval_custom_call_supported(inst, st);
  if (inst->opcode == OP_RNG_BIT_GENERATOR) return eval_rng_bit_generator_supported(inst, st);
  if (!refused_whatever_the_inputs(inst->opcode)) return true;
  Literal *value = eval_rule(inst->opcode)(inst, NULL, st);
  if (!value) return false;
  literal_free(value); /* cannot happen: each of these rules refuses */
  return true;
}

bool eval_check_supported(const Module *m, Status *st) { return eval_check_supported_on(m, 1, 1, st); }

bool eval_check_supported_on(const Module *m, int64_t replica_count, int64_t partition_count, Status *st) {
  for (int c = 0; c < m->computation_count; c++) {
    const Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++) {
      const Instruction *inst = comp->instructions[i];
      /* A dynamic value comes from the text (a parameter or an op written
       * with one): instructions a pass made (a fusion's parameters) have
       * no place to point at, and their source is checked where it is. */
      if (inst->loc.line > 0 && shape_has_dynamic_dims(&inst->shape)) return refuse_dynamic(m, inst, st);
      if (instruction_supported(inst, replica_count, partition_count, st)) {
        continue;
      }
      st->file = m->filename;
      st->loc = inst->loc;
      return false;
    }
  }
  return true;
}

Literal *eval_module(const Module *m, Literal *const *args, int arg_count, Status *st) {
  if (!m->entry) {
    status_error(st, STATUS_VERIFY_ERROR, "module %s has no entry computation", m->name);
    return NULL;
  }
  return eval_computation(m->entry, args, arg_count, st);
}
