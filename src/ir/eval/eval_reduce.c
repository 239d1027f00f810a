/* Reductions in the reference evaluator: reduce, reduce-window,
 * select-and-scatter, and the collectives as they behave on one replica.
 *
 * Reducers are HLO computations. They are applied here the slow, obvious way:
 * one call of eval_computation per element, on rank-0 literals (ScalarCall,
 * shared with gather/scatter and sort). The order of those calls is part of
 * the meaning for non-associative reducers (float add), so each op states
 * the order it uses; it is the order of XLA's HloEvaluator. */
#include <stdlib.h>

#include "eval_internal.h"

/* ---------------------------------------------------------------- ScalarCall */

bool eval_scalar_call_init(ScalarCall *call, const Instruction *inst, const Computation *computation,
                      const ElementType *arg_types, int arg_count,
                      const ElementType *result_types, int result_count, Status *st) {
  memset(call, 0, sizeof *call);
  call->inst = inst;
  call->computation = computation;
  if (!computation)
    return status_error(st, STATUS_VERIFY_ERROR, "%s %s has no called computation",
                        opcode_name(inst->opcode), inst->name);
  if (computation->parameter_count != arg_count)
    return status_error(st, STATUS_VERIFY_ERROR, "%s %s: computation %s takes %d parameters, expected %d",
                        opcode_name(inst->opcode), inst->name, computation->name,
                        computation->parameter_count, arg_count);
  for (int i = 0; i < arg_count; i++) {
    const Shape *p = &computation->parameters[i]->shape;
    if (p->type != arg_types[i] || p->rank != 0)
      return status_error(st, STATUS_VERIFY_ERROR,
                          "%s %s: parameter %d of computation %s must be %s[], to match the operands",
                          opcode_name(inst->opcode), inst->name, i, computation->name,
                          type_name(arg_types[i]));
  }
  call->args = mem_calloc((size_t)arg_count + 1, sizeof *call->args);
  call->result_types = mem_calloc((size_t)result_count + 1, sizeof *call->result_types);
  if (!call->args || !call->result_types) {
    eval_scalar_call_free(call);
    return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  }
  call->arg_count = arg_count;
  for (int i = 0; i < arg_count; i++) {
    Shape scalar = shape_scalar(arg_types[i]);
    call->args[i] = literal_create(&scalar);
  }
  call->result_count = result_count;
  memcpy(call->result_types, result_types, sizeof *result_types * (size_t)result_count);
  return true;
}

static bool is_scalar_of(const Literal *lit, ElementType type) {
  return lit->shape.type == type && lit->shape.rank == 0;
}

Literal *eval_scalar_call_run(ScalarCall *call, Status *st) {
  Literal *result = eval_computation(call->computation, call->args, call->arg_count, st);
  if (!result) return NULL;
  bool ok;
  if (call->result_count == 1 && result->shape.type != TYPE_TUPLE) {
    ok = is_scalar_of(result, call->result_types[0]);
  } else {
    ok = result->shape.type == TYPE_TUPLE && result->shape.tuple_count == call->result_count;
    for (int k = 0; ok && k < call->result_count; k++)
      ok = is_scalar_of(result->elements[k], call->result_types[k]);
  }
  if (ok) return result;
  StrBuf expected = {0}, got = {0};
  for (int k = 0; k < call->result_count; k++)
    strbuf_printf(&expected, "%s%s[]", k ? ", " : "", type_name(call->result_types[k]));
  if (result->shape.type == TYPE_TUPLE) strbuf_printf(&got, "a tuple of %d", result->shape.tuple_count);
  else shape_print(&got, &result->shape, false);
  status_error(st, STATUS_RUNTIME_ERROR, "%s %s: computation %s returned %s, expected %s",
               opcode_name(call->inst->opcode), call->inst->name, call->computation->name,
               got.data, expected.data);
  strbuf_free(&expected);
  strbuf_free(&got);
  literal_free(result);
  return NULL;
}

const Literal *eval_scalar_result(const Literal *result, int k) {
  return result->shape.type == TYPE_TUPLE ? result->elements[k] : result;
}

void eval_scalar_call_free(ScalarCall *call) {
  if (call->args)
    for (int i = 0; i < call->arg_count; i++) literal_free(call->args[i]);
  mem_free(call->args);
  mem_free(call->result_types);
  call->args = NULL;
  call->result_types = NULL;
}

/* ------------------------------------------------------------ result shapes */

Literal *eval_create_result(const Instruction *inst, int k, int count, const Shape *computed,
                            Status *st) {
  const Shape *declared = &inst->shape;
  if (count > 1) {
    if (inst->shape.type != TYPE_TUPLE || inst->shape.tuple_count != count ||
        !inst->shape.tuple_shapes) {
      status_error(st, STATUS_VERIFY_ERROR, "%s %s must have a tuple shape of %d elements",
                   opcode_name(inst->opcode), inst->name, count);
      return NULL;
    }
    declared = &inst->shape.tuple_shapes[k];
  }
  if (declared->type != computed->type || !shape_same_dims(declared, computed)) {
    StrBuf want = {0}, have = {0};
    shape_print(&want, computed, false);
    shape_print(&have, declared, false);
    status_error(st, STATUS_VERIFY_ERROR, "%s %s: result%s should be %s, but is declared %s",
                 opcode_name(inst->opcode), inst->name, count > 1 ? " element" : "", want.data,
                 have.data);
    strbuf_free(&want);
    strbuf_free(&have);
    return NULL;
  }
  return literal_create(declared);
}

static void free_results(Literal **results, int count) {
  for (int i = 0; i < count; i++) literal_free(results[i]);
}

Literal *eval_finish_results(Literal **results, int count, bool ok) {
  Literal *value = NULL;
  if (ok) value = count == 1 ? results[0] : literal_create_tuple(results, count);
  else if (results) free_results(results, count);
  mem_free(results);
  return value;
}

/* Variadic reductions take N arrays of one set of dims, then N scalar init
 * values. */
static bool check_variadic_operands(const Instruction *inst, Literal *const *operands, int n,
                                    Status *st) {
  if (n < 1 || inst->operand_count != 2 * n)
    return status_error(st, STATUS_VERIFY_ERROR, "%s %s needs N arrays and N init values",
                        opcode_name(inst->opcode), inst->name);
  for (int i = 0; i < 2 * n; i++)
    if (operands[i]->shape.type == TYPE_TUPLE)
      return status_error(st, STATUS_VERIFY_ERROR, "%s %s: operand %d is a tuple",
                          opcode_name(inst->opcode), inst->name, i);
  for (int i = 1; i < n; i++)
    if (!shape_same_dims(&operands[i]->shape, &operands[0]->shape))
      return status_error(st, STATUS_VERIFY_ERROR, "%s %s: input %d has other dims than input 0",
                          opcode_name(inst->opcode), inst->name, i);
  for (int i = n; i < 2 * n; i++)
    if (operands[i]->shape.rank != 0)
      return status_error(st, STATUS_VERIFY_ERROR, "%s %s: init value %d is not a scalar",
                          opcode_name(inst->opcode), inst->name, i - n);
  return true;
}

/* A reducer of N inputs takes (accumulator_0..N-1, value_0..N-1) and returns
 * the N new accumulators; their types are the init values'. */
static bool reducer_call_init(ScalarCall *call, const Instruction *inst, Literal *const *operands,
                              int n, Status *st) {
  ElementType *types = mem_calloc((size_t)(2 * n), sizeof *types);
  if (!types) return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n; i++) {
    types[i] = operands[n + i]->shape.type;
    types[n + i] = operands[i]->shape.type;
  }
  bool ok = eval_scalar_call_init(call, inst, inst->called_count > 0 ? inst->called[0] : NULL, types,
                             2 * n, types, n, st);
  mem_free(types);
  return ok;
}

/* One reducer step: values at input_index become args n..2n-1, and the
 * reducer's results replace the accumulators in args 0..n-1. */
static bool reducer_step(ScalarCall *call, Literal *const *inputs, int n, int64_t input_index,
                         Status *st) {
  for (int i = 0; i < n; i++) literal_copy_element(call->args[n + i], 0, inputs[i], input_index);
  Literal *result = eval_scalar_call_run(call, st);
  if (!result) return false;
  for (int i = 0; i < n; i++) literal_copy_element(call->args[i], 0, eval_scalar_result(result, i), 0);
  literal_free(result);
  return true;
}

/* ------------------------------------------------------------------- reduce */

/* reduce(inputs..., inits..., dimensions={..}, to_apply=f)
 *
 * The result keeps the operand dims not in `dimensions`, in order. Each
 * result element starts from the init values and folds in the input
 * elements in row-major order of the reduced dims only:
 *   acc = f(acc, x[first]); acc = f(acc, x[second]); ...
 * which is what XLA's HloEvaluator does (it only switches to a double-
 * precision sum for a plain float add reducer; we never do). */
Literal *eval_reduce(const Instruction *inst, Literal *const *operands, Status *st) {
  int n = inst->operand_count / 2;
  if (!check_variadic_operands(inst, operands, n, st)) return NULL;
  const Shape *in = &operands[0]->shape;
  bool is_reduced[AXLE_MAX_RANK] = {false};
  int64_t kept_dims[AXLE_MAX_RANK], reduced_dims[AXLE_MAX_RANK];
  int kept_axes[AXLE_MAX_RANK], reduced_axes[AXLE_MAX_RANK], kept = 0, reduced = 0;
  for (int k = 0; k < inst->attrs.dimensions.count; k++) {
    int64_t d = inst->attrs.dimensions.values[k];
    if (d < 0 || d >= in->rank || is_reduced[d]) {
      status_error(st, STATUS_VERIFY_ERROR, "reduce %s: dimension %lld is out of range or repeated",
                   inst->name, (long long)d);
      return NULL;
    }
    is_reduced[d] = true;
  }
  for (int d = 0; d < in->rank; d++) {
    if (is_reduced[d]) {
      reduced_axes[reduced] = d;
      reduced_dims[reduced++] = in->dims[d];
    } else {
      kept_axes[kept] = d;
      kept_dims[kept++] = in->dims[d];
    }
  }
  Literal **results = mem_calloc((size_t)n, sizeof *results);
  ScalarCall call = {0};
  bool ok = results ? reducer_call_init(&call, inst, operands, n, st)
                    : status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; ok && i < n; i++) {
    Shape s = shape_array(operands[n + i]->shape.type, kept, kept_dims);
    ok = (results[i] = eval_create_result(inst, i, n, &s, st)) != NULL;
  }
  int64_t strides[AXLE_MAX_RANK], out_index[AXLE_MAX_RANK] = {0}, in_index[AXLE_MAX_RANK];
  shape_strides(in, strides);
  int64_t out_count = ok ? shape_element_count(&results[0]->shape) : 0;
  int64_t reduced_count = 1;
  for (int k = 0; k < reduced; k++) reduced_count *= reduced_dims[k];
  for (int64_t o = 0; ok && o < out_count; o++, index_next(out_index, kept_dims, kept)) {
    for (int i = 0; i < n; i++) literal_copy_element(call.args[i], 0, operands[n + i], 0);
    for (int k = 0; k < kept; k++) in_index[kept_axes[k]] = out_index[k];
    int64_t reduced_index[AXLE_MAX_RANK] = {0};
    for (int64_t r = 0; ok && r < reduced_count; r++, index_next(reduced_index, reduced_dims, reduced)) {
      for (int k = 0; k < reduced; k++) in_index[reduced_axes[k]] = reduced_index[k];
      ok = reducer_step(&call, operands, n, index_linear(in_index, strides, in->rank), st);
    }
    for (int i = 0; ok && i < n; i++) literal_copy_element(results[i], o, call.args[i], 0);
  }
  eval_scalar_call_free(&call);
  return eval_finish_results(results, n, ok);
}

/* ------------------------------------------------------------------ windows */

/* Window parameters come from user text. The limits keep every product
 * below (a dilated, padded base position) inside int64: base dims, window
 * sizes, strides and padding up to 2^36 (no literal is larger), dilations up
 * to 2^24. */
static bool check_window(const Instruction *inst, const Window *w, const Shape *base, Status *st) {
  if (w->rank != base->rank)
    return status_error(st, STATUS_VERIFY_ERROR, "%s %s: window has %d dimensions, operand has %d",
                        opcode_name(inst->opcode), inst->name, w->rank, base->rank);
  const int64_t small = (int64_t)1 << 24, large = (int64_t)1 << 36;
  for (int d = 0; d < base->rank; d++) {
    const WindowDim *wd = &w->dims[d];
    if (wd->size < 1 || wd->stride < 1 || wd->lhs_dilate < 1 || wd->rhs_dilate < 1)
      return status_error(st, STATUS_VERIFY_ERROR,
                          "%s %s: window dimension %d needs size, stride and dilations >= 1",
                          opcode_name(inst->opcode), inst->name, d);
    if (wd->size > large || wd->stride > large || wd->lhs_dilate > small ||
        wd->rhs_dilate > small || wd->pad_lo > large || wd->pad_lo < -large ||
        wd->pad_hi > large || wd->pad_hi < -large || base->dims[d] > large)
      return status_error(st, STATUS_UNSUPPORTED,
                          "%s %s: window dimension %d is too large for the evaluator",
                          opcode_name(inst->opcode), inst->name, d);
  }
  return true;
}

/* The number of window placements along one dimension: the base is dilated
 * ((d-1)*lhs_dilate+1) and padded (lo+hi), the window dilated
 * ((size-1)*rhs_dilate+1), and placements step by stride; none fit when the
 * window is larger than the padded base. */
static int64_t window_output_dim(int64_t base, const WindowDim *wd) {
  int64_t dilated_base = base == 0 ? 0 : (base - 1) * wd->lhs_dilate + 1;
  int64_t padded = dilated_base + wd->pad_lo + wd->pad_hi;
  int64_t dilated_window = (wd->size - 1) * wd->rhs_dilate + 1;
  if (padded < dilated_window) return 0;
  return (padded - dilated_window) / wd->stride + 1;
}

static void window_output_dims(const Window *w, const Shape *base, int64_t *out_dims) {
  for (int d = 0; d < base->rank; d++) out_dims[d] = window_output_dim(base->dims[d], &w->dims[d]);
}

/* Where window element window_index of placement out_index falls in the
 * base. In the padded, dilated base
 *     P P P E h h E h h E P P        (P padding, E element, h dilation hole)
 * elements sit at pad_lo + k*lhs_dilate, and the window element is at
 * out*stride + w*rhs_dilate. Returns false when that position is padding or
 * a hole: such positions hold no element, so reductions skip them (they
 * contribute the init value, i.e. nothing) and select never picks them. */
static bool window_base_index(const Window *w, const Shape *base, const int64_t *out_index,
                              const int64_t *window_index, int64_t *base_index) {
  for (int d = 0; d < base->rank; d++) {
    const WindowDim *wd = &w->dims[d];
    int64_t at = out_index[d] * wd->stride + window_index[d] * wd->rhs_dilate - wd->pad_lo;
    if (at % wd->lhs_dilate != 0) return false;
    at /= wd->lhs_dilate;
    if (at < 0 || at >= base->dims[d]) return false;
    base_index[d] = at;
  }
  return true;
}

/* Walks the window of one placement in row-major order, but only over the
 * window indices that can land inside the base: per dimension the run
 * [first, first+count). The positions left out lie wholly in padding, so
 * leaving them out changes no result (nor the order of the rest), only the
 * time taken. Each visited index still has to pass window_base_index,
 * which rejects base-dilation holes. */
typedef struct WindowWalk {
  int rank;
  int64_t first[AXLE_MAX_RANK], count[AXLE_MAX_RANK], step[AXLE_MAX_RANK];
  int64_t window_index[AXLE_MAX_RANK]; /* first + step, per dimension */
} WindowWalk;

/* Returns whether the walk has a first position at all. */
static bool window_walk_start(WindowWalk *walk, const Window *w, const Shape *base,
                              const int64_t *out_index) {
  walk->rank = base->rank;
  bool empty = false;
  for (int d = 0; d < base->rank; d++) {
    const WindowDim *wd = &w->dims[d];
    /* window element k sits at start + k*rhs_dilate of the dilated base,
     * whose elements span [0, last]. */
    int64_t start = out_index[d] * wd->stride - wd->pad_lo;
    int64_t last = (base->dims[d] - 1) * wd->lhs_dilate;
    int64_t lo = start >= 0 ? 0 : (-start + wd->rhs_dilate - 1) / wd->rhs_dilate;
    int64_t hi = last < start ? -1 : (last - start) / wd->rhs_dilate;
    if (hi > wd->size - 1) hi = wd->size - 1;
    if (base->dims[d] == 0 || hi < lo) empty = true;
    walk->first[d] = lo;
    walk->count[d] = hi - lo + 1;
    walk->step[d] = 0;
    walk->window_index[d] = lo;
  }
  return !empty;
}

static bool window_walk_next(WindowWalk *walk) {
  bool more = index_next(walk->step, walk->count, walk->rank);
  for (int d = 0; d < walk->rank; d++) walk->window_index[d] = walk->first[d] + walk->step[d];
  return more;
}

/* ------------------------------------------------------------ reduce-window */

/* reduce-window(inputs..., inits..., window={..}, to_apply=f)
 *
 * Each result element starts from the init values and folds in, with f, the
 * input elements under its window placement, visiting the window in
 * row-major order and skipping positions that fall on padding or on
 * base-dilation holes (XLA's IterateThroughWindow). */
Literal *eval_reduce_window(const Instruction *inst, Literal *const *operands, Status *st) {
  int n = inst->operand_count / 2;
  if (!check_variadic_operands(inst, operands, n, st)) return NULL;
  const Shape *in = &operands[0]->shape;
  const Window *w = attrs_window(&inst->attrs);
  if (!check_window(inst, w, in, st)) return NULL;
  int64_t out_dims[AXLE_MAX_RANK];
  window_output_dims(w, in, out_dims);
  Literal **results = mem_calloc((size_t)n, sizeof *results);
  ScalarCall call = {0};
  bool ok = results ? reducer_call_init(&call, inst, operands, n, st)
                    : status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; ok && i < n; i++) {
    Shape s = shape_array(operands[n + i]->shape.type, in->rank, out_dims);
    ok = (results[i] = eval_create_result(inst, i, n, &s, st)) != NULL;
  }
  int64_t strides[AXLE_MAX_RANK], out_index[AXLE_MAX_RANK] = {0}, base_index[AXLE_MAX_RANK];
  shape_strides(in, strides);
  int64_t out_count = ok ? shape_element_count(&results[0]->shape) : 0;
  for (int64_t o = 0; ok && o < out_count; o++, index_next(out_index, out_dims, in->rank)) {
    for (int i = 0; i < n; i++) literal_copy_element(call.args[i], 0, operands[n + i], 0);
    WindowWalk walk;
    for (bool more = window_walk_start(&walk, w, in, out_index); ok && more;
         more = window_walk_next(&walk)) {
      if (!window_base_index(w, in, out_index, walk.window_index, base_index)) continue;
      ok = reducer_step(&call, operands, n, index_linear(base_index, strides, in->rank), st);
    }
    for (int i = 0; ok && i < n; i++) literal_copy_element(results[i], o, call.args[i], 0);
  }
  eval_scalar_call_free(&call);
  return eval_finish_results(results, n, ok);
}

/* ------------------------------------------------------- select-and-scatter */

/* Picks the operand element of one window placement: the first in-base
 * position in row-major window order starts as the selection, and each
 * position (the first included, as XLA does) replaces it when
 * select(selected, candidate) is false. Returns via *found whether any
 * position of the window lies in the base. */
static bool select_in_window(ScalarCall *select, const Literal *operand, const Window *w,
                             const int64_t *source_index, int64_t *selected_linear, bool *found,
                             Status *st) {
  const Shape *base = &operand->shape;
  int64_t strides[AXLE_MAX_RANK], base_index[AXLE_MAX_RANK];
  shape_strides(base, strides);
  *found = false;
  WindowWalk walk;
  for (bool more = window_walk_start(&walk, w, base, source_index); more;
       more = window_walk_next(&walk)) {
    if (!window_base_index(w, base, source_index, walk.window_index, base_index)) continue;
    int64_t at = index_linear(base_index, strides, base->rank);
    if (!*found) {
      *found = true;
      *selected_linear = at;
    }
    literal_copy_element(select->args[0], 0, operand, *selected_linear);
    literal_copy_element(select->args[1], 0, operand, at);
    Literal *keep = eval_scalar_call_run(select, st);
    if (!keep) return false;
    if (literal_get_s64(keep, 0) == 0) *selected_linear = at;
    literal_free(keep);
  }
  return true;
}

/* select-and-scatter(operand, source, init, window={..}, select=s, scatter=f)
 *
 * The result has the operand's shape and starts as init everywhere. For each
 * source element, in row-major order, one window placement over the operand
 * (source has the reduce-window result dims) chooses an operand position
 * with `select`; then result[pos] = f(result[pos], source_value). That
 * argument order is the StableHLO spec's (a reduce of the selected source
 * values, result first) and XLA's CPU and GPU backends'; XLA's HloEvaluator
 * alone passes (source, result). Only a non-commutative scatter can tell.
 * Padded positions are never chosen, and a window lying wholly in padding
 * scatters nothing. */
Literal *eval_select_and_scatter(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *operand = operands[0], *source = operands[1], *init = operands[2];
  const Window *w = attrs_window(&inst->attrs);
  ElementType t = operand->shape.type;
  if (inst->operand_count != 3 || inst->called_count != 2 || t == TYPE_TUPLE ||
      source->shape.type != t || init->shape.type != t || init->shape.rank != 0) {
    status_error(st, STATUS_VERIFY_ERROR,
                 "select-and-scatter %s needs operand, source and a scalar init of one element "
                 "type, and select and scatter computations",
                 inst->name);
    return NULL;
  }
  if (!check_window(inst, w, &operand->shape, st)) return NULL;
  int64_t source_dims[AXLE_MAX_RANK];
  window_output_dims(w, &operand->shape, source_dims);
  Shape expected_source = shape_array(t, operand->shape.rank, source_dims);
  if (!shape_same_dims(&source->shape, &expected_source)) {
    status_error(st, STATUS_VERIFY_ERROR,
                 "select-and-scatter %s: source dims must be the window placements over the operand",
                 inst->name);
    return NULL;
  }
  ElementType pair[2] = {t, t}, pred = TYPE_PRED;
  ScalarCall select = {0}, scatter = {0};
  Literal *result = eval_create_result(inst, 0, 1, &operand->shape, st);
  bool ok = result && eval_scalar_call_init(&select, inst, inst->called[0], pair, 2, &pred, 1, st) &&
            eval_scalar_call_init(&scatter, inst, inst->called[1], pair, 2, &t, 1, st);
  int64_t total = ok ? shape_element_count(&operand->shape) : 0;
  for (int64_t i = 0; i < total; i++) literal_copy_element(result, i, init, 0);
  int64_t source_index[AXLE_MAX_RANK] = {0}, source_count = ok ? shape_element_count(&source->shape) : 0;
  for (int64_t s = 0; ok && s < source_count;
       s++, index_next(source_index, source_dims, operand->shape.rank)) {
    int64_t at = 0;
    bool found = false;
    ok = select_in_window(&select, operand, w, source_index, &at, &found, st);
    if (!ok || !found) continue;
    literal_copy_element(scatter.args[0], 0, result, at);
    literal_copy_element(scatter.args[1], 0, source, s);
    Literal *sum = eval_scalar_call_run(&scatter, st);
    ok = sum != NULL;
    if (ok) literal_copy_element(result, at, sum, 0);
    literal_free(sum);
  }
  eval_scalar_call_free(&select);
  eval_scalar_call_free(&scatter);
  if (!ok) {
    literal_free(result);
    return NULL;
  }
  return result;
}

/* ------------------------------------------------------ one-replica collectives
 *
 * The evaluator runs one replica (and one partition). Over a group of one,
 * all-reduce reduces a single contribution (no reducer call), all-gather
 * concatenates one piece, reduce-scatter keeps the only shard: each returns
 * its operands unchanged. A module written for more replicas shows it in its
 * shapes (all-gather's result is larger than its operand, reduce-scatter's
 * smaller), and is reported unsupported rather than run wrongly. */
static Literal *collective_identity(const Instruction *inst, Literal *const *operands, Status *st) {
  int n = inst->operand_count;
  if (n < 1) {
    status_error(st, STATUS_VERIFY_ERROR, "%s %s has no operands", opcode_name(inst->opcode),
                 inst->name);
    return NULL;
  }
  /* all-to-all's tuple form returns a tuple even of one operand. */
  bool tuple_result = inst->shape.type == TYPE_TUPLE && inst->shape.tuple_shapes && inst->shape.tuple_count == n;
  for (int i = 0; i < n; i++) {
    const Shape *declared = tuple_result ? &inst->shape.tuple_shapes[i] : &inst->shape;
    if (operands[i]->shape.type == TYPE_TUPLE || !shape_equal(declared, &operands[i]->shape)) {
      status_error(st, STATUS_UNSUPPORTED,
                   "%s %s: result shape differs from operand %d, which means more than one "
                   "replica; the evaluator runs one",
                   opcode_name(inst->opcode), inst->name, i);
      return NULL;
    }
  }
  Literal **results = mem_calloc((size_t)n, sizeof *results);
  if (!results) {
    status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  /* The values are the operands'; the shapes (layouts) the instruction's. */
  for (int i = 0; i < n; i++) {
    results[i] = n == 1 && tuple_result ? literal_create(&inst->shape.tuple_shapes[0])
                                        : eval_create_result(inst, i, n, &operands[i]->shape, st);
    if (!results[i] && n == 1 && tuple_result) status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
    if (!results[i]) {
      free_results(results, i);
      mem_free(results);
      return NULL;
    }
    memcpy(results[i]->data, operands[i]->data, (size_t)shape_byte_size(&operands[i]->shape));
  }
  if (n == 1 && tuple_result) {
    Literal *one = literal_create_tuple(results, 1);
    mem_free(results);
    return one;
  }
  return eval_finish_results(results, n, true);
}

/* all-reduce (and all-to-all, collective-broadcast): on several devices
 * eval_collective.c computes them; on one, each is its operand. */
Literal *eval_all_reduce(const Instruction *inst, Literal *const *operands, Status *st) {
  if (eval_device_count() > 1) return eval_collective_across_devices(inst, operands, st);
  return collective_identity(inst, operands, st);
}

Literal *eval_all_gather(const Instruction *inst, Literal *const *operands, Status *st) {
  if (eval_device_count() > 1) return eval_collective_across_devices(inst, operands, st);
  return collective_identity(inst, operands, st);
}

Literal *eval_reduce_scatter(const Instruction *inst, Literal *const *operands, Status *st) {
  if (eval_device_count() > 1) return eval_collective_across_devices(inst, operands, st);
  return collective_identity(inst, operands, st);
}

/* collective-permute sends replica s's operand to replica t for each pair
 * {s,t}. With one replica the only possible pair is {0,0} (a copy); with no
 * pair targeting replica 0 nothing arrives and the result is zeros. A pair
 * naming another replica needs more replicas than the evaluator runs. */
Literal *eval_collective_permute(const Instruction *inst, Literal *const *operands, Status *st) {
  if (eval_device_count() > 1) return eval_collective_across_devices(inst, operands, st);
  const IntList *pairs = &inst->attrs.source_target_pairs;
  if (inst->operand_count != 1 || operands[0]->shape.type == TYPE_TUPLE || pairs->count % 2) {
    status_error(st, STATUS_VERIFY_ERROR,
                 "collective-permute %s needs one array operand and {source,target} pairs",
                 inst->name);
    return NULL;
  }
  bool receives = false;
  for (int k = 0; k < pairs->count; k++) {
    if (pairs->values[k] != 0) {
      status_error(st, STATUS_UNSUPPORTED,
                   "collective-permute %s names replica %lld; the evaluator runs one replica",
                   inst->name, (long long)pairs->values[k]);
      return NULL;
    }
    receives = true;
  }
  Literal *result = eval_create_result(inst, 0, 1, &operands[0]->shape, st);
  if (result && receives)
    memcpy(result->data, operands[0]->data, (size_t)shape_byte_size(&operands[0]->shape));
  return result;
}
