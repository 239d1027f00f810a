/* The checks every shape-inference rule shares (shape_inference.h): a
 * located failure message, operand and called-computation counts, array
 * and scalar operands, dimension lists, extents, and the signatures of
 * called computations (reducers, comparators, bodies). The bottom file of
 * shape inference: the rules (shape_inference.c and
 * shape_inference_{ops,async,extra,gather}.c) build on it and it calls none
 * of them. */
#include <stdarg.h>
#include <string.h>

#include "shape_inference.h"

/* Fills st with "instruction 'x' (opcode): MESSAGE (in computation 'c')". */
bool infer_fail(const Infer *in, const char *fmt, ...) {
  const Instruction *inst = in->inst;
  char body[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  const Computation *c = inst->parent;
  const char *file = c && c->module ? c->module->filename : NULL;
  if (c)
    return status_error_at(in->st, STATUS_VERIFY_ERROR, file, inst->loc,
                           "instruction '%s' (%s): %s (in computation '%s')", inst->name,
                           opcode_name(inst->opcode), body, c->name);
  return status_error_at(in->st, STATUS_VERIFY_ERROR, file, inst->loc, "instruction '%s' (%s): %s",
                         inst->name, opcode_name(inst->opcode), body);
}

bool infer_note_rule(const Infer *in, const char *rule) {
  size_t len = strlen(in->st->message);
  snprintf(in->st->message + len, sizeof in->st->message - len, " (StableHLO %s)", rule);
  return false;
}

/* A shape as text for messages; buf must hold 128 bytes. */
const char *infer_shape_text(const Shape *s, char *buf) {
  StrBuf sb = {0};
  shape_print(&sb, s, false);
  snprintf(buf, 128, "%s", sb.data ? sb.data : "?");
  strbuf_free(&sb);
  return buf;
}

const Shape *infer_operand_shape(const Infer *in, int i) { return &in->inst->operands[i]->shape; }

bool infer_expect_operand_count(const Infer *in, int n) {
  if (in->inst->operand_count != n)
    return infer_fail(in, "expects %d operands, got %d", n, in->inst->operand_count);
  return true;
}

bool infer_expect_called_count(const Infer *in, int n) {
  if (in->inst->called_count != n)
    return infer_fail(in, "expects %d called computations, got %d", n, in->inst->called_count);
  for (int i = 0; i < n; i++)
    if (!in->inst->called[i] || !in->inst->called[i]->root)
      return infer_fail(in, "called computation %d is missing or empty", i);
  return true;
}

bool infer_expect_array(const Infer *in, int i) {
  if (shape_is_tuple(infer_operand_shape(in, i)))
    return infer_fail(in, "operand %d ('%s') must be an array, not a tuple", i, in->inst->operands[i]->name);
  if (infer_operand_shape(in, i)->type == TYPE_TOKEN)
    return infer_fail(in, "operand %d ('%s') must be an array, not a token", i, in->inst->operands[i]->name);
  return true;
}

bool infer_expect_scalar(const Infer *in, int i, const char *what) {
  const Shape *s = infer_operand_shape(in, i);
  char buf[128];
  if (shape_is_tuple(s) || s->rank != 0 || s->type == TYPE_TOKEN)
    return infer_fail(in, "%s (operand %d) must be a scalar, got %s", what, i, infer_shape_text(s, buf));
  return true;
}

bool infer_expect_same_dims(const Infer *in, int a, int b) {
  char ba[128], bb[128];
  if (!shape_same_dims(infer_operand_shape(in, a), infer_operand_shape(in, b)))
    return infer_fail(in, "operands %d and %d must have the same dimensions, got %s and %s", a, b,
                      infer_shape_text(infer_operand_shape(in, a), ba),
                      infer_shape_text(infer_operand_shape(in, b), bb));
  return true;
}

bool infer_expect_same_type(const Infer *in, int a, int b) {
  if (infer_operand_shape(in, a)->type != infer_operand_shape(in, b)->type)
    return infer_fail(in, "operands %d and %d must have the same element type, got %s and %s", a, b,
                      type_name(infer_operand_shape(in, a)->type),
                      type_name(infer_operand_shape(in, b)->type));
  return true;
}

/* Every entry of list in [0, bound), no repeats, increasing when sorted. */
bool infer_check_dim_list(const Infer *in, const char *name, const IntList *list, int64_t bound,
                          bool sorted) {
  for (int i = 0; i < list->count; i++) {
    int64_t d = list->values[i];
    if (d < 0 || d >= bound)
      return infer_fail(in, "%s entry %lld is out of range [0, %lld)", name, (long long)d, (long long)bound);
    for (int j = 0; j < i; j++) {
      if (list->values[j] == d) return infer_fail(in, "%s repeats dimension %lld", name, (long long)d);
      if (sorted && list->values[j] > d) return infer_fail(in, "%s must be sorted", name);
    }
  }
  return true;
}

bool infer_list_contains(const IntList *list, int64_t v) {
  for (int i = 0; i < list->count; i++)
    if (list->values[i] == v) return true;
  return false;
}

bool infer_expect_extent(const Infer *in, const char *what, int64_t value) {
  if (value <= -AXLE_MAX_EXTENT || value >= AXLE_MAX_EXTENT)
    return infer_fail(in, "%s %lld is too large (limit 2^40)", what, (long long)value);
  return true;
}

bool infer_dilated_bound(const Infer *in, const char *what, int64_t bound, int64_t dilation, int64_t *out) {
  if (!infer_expect_extent(in, what, bound) || !infer_expect_extent(in, "a dilation", dilation)) return false;
  if (bound > 1 && dilation > (AXLE_MAX_EXTENT - 1) / (bound - 1))
    return infer_fail(in, "%s %lld dilated by %lld is too large (limit 2^40)", what, (long long)bound,
                      (long long)dilation);
  *out = bound > 0 ? (bound - 1) * dilation + 1 : 0;
  return true;
}

bool infer_set_array(Infer *in, ElementType t, int rank, const int64_t *dims) {
  if (rank > AXLE_MAX_RANK) return infer_fail(in, "result rank %d exceeds %d", rank, AXLE_MAX_RANK);
  *in->out = shape_array(t, rank, dims);
  return true;
}

bool infer_set_same_as(Infer *in, const Shape *s) {
  *in->out = *s;
  if (!shape_is_tuple(s)) shape_set_default_layout(in->out);
  return true;
}

bool infer_set_tuple(Infer *in, int count, const Shape *elements) {
  Shape s;
  memset(&s, 0, sizeof s);
  s.type = TYPE_TUPLE;
  s.tuple_count = count;
  if (count > 0) s.tuple_shapes = arena_memdup(in->arena, elements, sizeof(Shape) * (size_t)count);
  *in->out = s;
  return true;
}

/* ---- called computations ---- */

const Shape *infer_param_shape(const Computation *c, int i) {
  return i < c->parameter_count && c->parameters[i] ? &c->parameters[i]->shape : NULL;
}

/* The computation takes exactly these operands, shape for shape. */
bool infer_check_call_signature(const Infer *in, const Computation *c, int first, int count) {
  char ba[128], bb[128];
  if (c->parameter_count != count)
    return infer_fail(in, "computation '%s' takes %d parameters, given %d", c->name, c->parameter_count,
                      count);
  for (int i = 0; i < count; i++) {
    const Shape *p = infer_param_shape(c, i);
    const Shape *o = infer_operand_shape(in, first + i);
    if (!p) return infer_fail(in, "computation '%s' lacks parameter %d", c->name, i);
    if (!shape_equal(p, o))
      return infer_fail(in, "computation '%s' parameter %d is %s but operand %d is %s", c->name, i,
                        infer_shape_text(p, ba), first + i, infer_shape_text(o, bb));
  }
  return true;
}

bool infer_is_scalar_of(const Shape *s, ElementType t) {
  return s && !shape_is_tuple(s) && s->rank == 0 && s->type == t;
}

/* The computation's root is n scalars of these types: one scalar when n is
 * 1, else a tuple of n scalars. */
bool infer_check_scalar_results(const Infer *in, const Computation *c, const ElementType *types, int n) {
  const Shape *r = &c->root->shape;
  char buf[128];
  bool ok;
  if (n == 1) {
    ok = infer_is_scalar_of(r, types[0]);
  } else {
    ok = shape_is_tuple(r) && r->tuple_count == n;
    for (int i = 0; ok && i < n; i++) ok = infer_is_scalar_of(&r->tuple_shapes[i], types[i]);
  }
  if (!ok)
    return infer_fail(in, "computation '%s' returns %s, expected %d scalar(s) starting with %s", c->name,
                      infer_shape_text(r, buf), n, type_name(types[0]));
  return true;
}

/* A reducer over n values: (acc_0..acc_n-1, x_0..x_n-1) -> acc or (acc...),
 * all scalars, the accumulators typed like the init values and the inputs
 * like the input elements. (XLA also lets an input parameter differ from
 * the input's element type in float precision; the evaluator does not, so
 * neither does this.) */
bool infer_check_reducer(const Infer *in, const Computation *c, const ElementType *acc,
                         const ElementType *elem, int n) {
  if (c->parameter_count != 2 * n)
    return infer_fail(in, "reducer '%s' takes %d parameters, expected %d", c->name, c->parameter_count,
                      2 * n);
  for (int i = 0; i < 2 * n; i++) {
    ElementType want = i < n ? acc[i] : elem[i - n];
    if (!infer_is_scalar_of(infer_param_shape(c, i), want))
      return infer_fail(in, "reducer '%s' parameter %d must be %s[]", c->name, i, type_name(want));
  }
  return infer_check_scalar_results(in, c, acc, n);
}
