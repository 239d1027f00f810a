/* Ops that move whole values or run other computations: tuple,
 * get-tuple-element, call, while, conditional, fusion, map, opt-barrier,
 * replica-id and partition-id, and scan. (custom-call is in
 * eval_custom_call.c.)
 *
 * A called computation runs through eval_computation, which borrows its
 * arguments; the values handed back are owned here. */
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

static Literal *malformed(const Instruction *inst, const char *why, Status *st) {
  status_error(st, STATUS_VERIFY_ERROR, "%s: %s", opcode_name(inst->opcode), why);
  return NULL;
}

static bool has_called(const Instruction *inst, int count, Status *st) {
  if (inst->called_count >= count) return true;
  return status_error(st, STATUS_VERIFY_ERROR, "%s needs %d called computation%s",
                      opcode_name(inst->opcode), count, count == 1 ? "" : "s");
}

Literal *eval_tuple(const Instruction *inst, Literal *const *operands, Status *st) {
  Literal **elements = mem_calloc((size_t)inst->operand_count + 1, sizeof *elements);
  if (!elements) {
    status_error(st, STATUS_OUT_OF_MEMORY, "tuple: out of memory");
    return NULL;
  }
  for (int i = 0; i < inst->operand_count; i++) elements[i] = literal_clone(operands[i]);
  Literal *out = literal_create_tuple(elements, inst->operand_count);
  mem_free(elements);
  return out;
}

Literal *eval_get_tuple_element(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *tuple = operands[0];
  int64_t index = inst->attrs.tuple_index;
  if (tuple->shape.type != TYPE_TUPLE || index < 0 || index >= tuple->shape.tuple_count)
    return malformed(inst, "index= is outside the tuple", st);
  return literal_clone(tuple->elements[index]);
}

/* call and fusion run called[0] on all their operands. */
Literal *eval_call(const Instruction *inst, Literal *const *operands, Status *st) {
  if (!has_called(inst, 1, st)) return NULL;
  return eval_computation(inst->called[0], operands, inst->operand_count, st);
}

Literal *eval_fusion(const Instruction *inst, Literal *const *operands, Status *st) {
  return eval_call(inst, operands, st);
}

/* A pred scalar computed by a loop condition. */
static bool read_condition(const Instruction *inst, const Literal *cond, bool *out, Status *st) {
  if (cond->shape.type != TYPE_PRED || shape_element_count(&cond->shape) != 1)
    return status_error(st, STATUS_VERIFY_ERROR, "%s: the condition must return pred[]",
                        opcode_name(inst->opcode));
  *out = literal_get_s64(cond, 0) != 0;
  return true;
}

/* while: state = init; while condition(state): state = body(state).
 * A loop that never ends is the program's own; each iteration frees the
 * previous state, so memory stays bounded. */
Literal *eval_while(const Instruction *inst, Literal *const *operands, Status *st) {
  if (!has_called(inst, 2, st)) return NULL;
  Literal *state = literal_clone(operands[0]);
  for (;;) {
    Literal *cond = eval_computation(inst->called[0], &state, 1, st);
    bool keep_going = false;
    bool ok = cond && read_condition(inst, cond, &keep_going, st);
    literal_free(cond);
    if (!ok) {
      literal_free(state);
      return NULL;
    }
    if (!keep_going) return state;
    Literal *next = eval_computation(inst->called[1], &state, 1, st);
    literal_free(state);
    if (!next) return NULL;
    state = next;
  }
}

/* conditional(selector, arg0, arg1, ...): a pred selector runs branch 0 when
 * true and branch 1 when false; an s32 selector runs that branch, and an
 * index out of range (negative or past the end) runs the last branch. Branch
 * i receives operand i + 1. */
Literal *eval_conditional(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *selector = operands[0];
  int branches = inst->called_count;
  if (branches < 1 || inst->operand_count != branches + 1)
    return malformed(inst, "needs one argument per branch", st);
  if (selector->shape.type == TYPE_TUPLE || shape_element_count(&selector->shape) != 1 ||
      selector->shape.rank != 0)
    return malformed(inst, "the branch selector must be a scalar", st);
  int chosen;
  if (selector->shape.type == TYPE_PRED) {
    if (branches != 2) return malformed(inst, "a pred selector needs two branches", st);
    chosen = literal_get_s64(selector, 0) ? 0 : 1;
  } else if (type_is_integer(selector->shape.type)) {
    int64_t index = literal_get_s64(selector, 0);
    if (selector->shape.type == TYPE_U64 && literal_get_u64(selector, 0) > (uint64_t)INT64_MAX)
      index = -1;
    chosen = index < 0 || index >= branches ? branches - 1 : (int)index;
  } else {
    return malformed(inst, "the branch selector must be pred or an integer", st);
  }
  return eval_computation(inst->called[chosen], &operands[1 + chosen], 1, st);
}

/* map applies called[0] to the elements at each index of all operands
 * (the operands share the result's dimensions; dimensions= lists them all). */
Literal *eval_map(const Instruction *inst, Literal *const *operands, Status *st) {
  if (!has_called(inst, 1, st)) return NULL;
  int count = inst->operand_count;
  for (int k = 0; k < count; k++)
    if (operands[k]->shape.type == TYPE_TUPLE ||
        !shape_same_dims(&operands[k]->shape, &inst->shape))
      return malformed(inst, "operands must have the result's dimensions", st);
  Literal **scalars = mem_calloc((size_t)count + 1, sizeof *scalars);
  if (!scalars) {
    status_error(st, STATUS_OUT_OF_MEMORY, "map: out of memory");
    return NULL;
  }
  for (int k = 0; k < count; k++) {
    Shape s = shape_scalar(operands[k]->shape.type);
    scalars[k] = literal_create(&s);
  }
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&inst->shape);
  for (int64_t i = 0; out && i < n; i++) {
    for (int k = 0; k < count; k++) literal_copy_element(scalars[k], 0, operands[k], i);
    Literal *r = eval_computation(inst->called[0], scalars, count, st);
    if (r && (r->shape.type != inst->shape.type || shape_element_count(&r->shape) != 1)) {
      literal_free(r);
      r = malformed(inst, "the mapped computation must return a scalar of the result type", st);
    }
    if (!r) {
      literal_free(out);
      out = NULL;
      break;
    }
    literal_copy_element(out, i, r, 0);
    literal_free(r);
  }
  for (int k = 0; k < count; k++) literal_free(scalars[k]);
  mem_free(scalars);
  return out;
}

/* opt-barrier only stops the optimizer; its value is its operand. */
Literal *eval_optimization_barrier(const Instruction *inst, Literal *const *operands,
                                   Status *st) {
  (void)inst;
  (void)st;
  return literal_clone(operands[0]);
}

/* ---- scan ---- */

/* An array seen as [outer, steps, inner] around the scanned dimension d. */
typedef struct ScanView {
  int64_t outer, steps, inner;
  int size;
} ScanView;

static ScanView scan_view(const Shape *s, int d) {
  ScanView v = {1, s->dims[d], 1, type_byte_size(s->type)};
  for (int i = 0; i < d; i++) v.outer *= s->dims[i];
  for (int i = d + 1; i < s->rank; i++) v.inner *= s->dims[i];
  return v;
}

/* Copies step `at` of a full array to or from a slice (the array without d). */
static void scan_copy_step(const ScanView *v, Literal *full, Literal *slice, int64_t at, bool to_slice) {
  size_t block = (size_t)(v->inner * v->size);
  for (int64_t o = 0; o < v->outer; o++) {
    char *f = (char *)full->data + ((o * v->steps + at) * v->inner) * v->size;
    char *s = (char *)slice->data + o * v->inner * v->size;
    if (to_slice) memcpy(s, f, block);
    else memcpy(f, s, block);
  }
}

/* The k-th of a computation's results (the value itself when it is one). */
static Literal *result_part(Literal *r, int count, int k) {
  return count == 1 && r->shape.type != TYPE_TUPLE ? r : r->elements[k];
}

/* One step of scan: the slices of the inputs, then the carries, into f;
 * its outputs go to step `at` of the stacked outputs and its carries
 * replace the old ones. */
static bool scan_step(const Instruction *inst, Literal *const *operands, int inputs, int carries,
                      Literal **state, Literal **outputs, int output_count, int64_t at, Status *st) {
  int d = (int)inst->attrs.dimensions.values[0], n = inputs + carries;
  Literal **args = mem_calloc((size_t)n + 1, sizeof *args);
  for (int i = 0; i < inputs; i++) {
    args[i] = literal_create(&inst->called[0]->parameters[i]->shape);
    ScanView v = scan_view(&operands[i]->shape, d);
    scan_copy_step(&v, (Literal *)operands[i], args[i], at, true);
  }
  for (int c = 0; c < carries; c++) args[inputs + c] = state[c];
  Literal *r = eval_computation(inst->called[0], args, n, st);
  for (int i = 0; i < inputs; i++) literal_free(args[i]);
  mem_free(args);
  if (!r) return false;
  int parts = output_count + carries;
  bool single = parts == 1 && r->shape.type != TYPE_TUPLE;
  if (!single && (r->shape.type != TYPE_TUPLE || r->shape.tuple_count != parts)) {
    literal_free(r);
    malformed(inst, "the scanned computation returned the wrong number of results", st);
    return false;
  }
  for (int k = 0; k < output_count; k++) {
    ScanView v = scan_view(&outputs[k]->shape, d);
    scan_copy_step(&v, outputs[k], result_part(r, parts, k), at, false);
  }
  for (int c = 0; c < carries; c++) {
    literal_free(state[c]);
    state[c] = literal_clone(result_part(r, parts, output_count + c));
  }
  literal_free(r);
  return true;
}

/* scan runs its computation once per step along dimension d (backwards when
 * is_reverse), threading the carries; see infer_scan for the shapes. */
Literal *eval_scan(const Instruction *inst, Literal *const *operands, Status *st) {
  const ScalarAttrs *sa = attrs_scalars(&inst->attrs);
  int carries = (int)sa->num_carries, inputs = inst->operand_count - carries;
  if (!has_called(inst, 1, st)) return NULL;
  int parts = inst->shape.type == TYPE_TUPLE ? inst->shape.tuple_count : 1;
  int output_count = parts - carries;
  if (inputs < 1 || output_count < 0 || inst->attrs.dimensions.count != 1)
    return malformed(inst, "inputs, carries and results do not add up", st);
  int64_t steps = operands[0]->shape.dims[inst->attrs.dimensions.values[0]];
  Literal **state = mem_calloc((size_t)carries + 1, sizeof *state);
  Literal **results = mem_calloc((size_t)parts, sizeof *results);
  for (int c = 0; c < carries; c++) state[c] = literal_clone(operands[inputs + c]);
  for (int k = 0; k < output_count; k++)
    results[k] = literal_create(parts == 1 ? &inst->shape : &inst->shape.tuple_shapes[k]);
  bool ok = true;
  for (int64_t s = 0; ok && s < steps; s++)
    ok = scan_step(inst, operands, inputs, carries, state, results, output_count,
                   sa->is_reverse ? steps - 1 - s : s, st);
  for (int c = 0; c < carries; c++) results[output_count + c] = state[c];
  mem_free(state);
  return eval_finish_results(results, parts, ok);
}

