/* The module verifier: walks every computation and instruction and checks
 * what later stages take for granted.
 *
 *   - the entry exists and comes last; callees come before their callers
 *     (which also rules out recursion);
 *   - each computation has a root and parameters numbered 0..n-1, once each;
 *   - operands are instructions of the same computation, defined earlier;
 *   - every declared shape is sane (rank <= AXLE_MAX_RANK, dims >= 0, fewer
 *     than 2^40 elements, layout a permutation) and equals the shape that
 *     infer_shape computes (dims and element types; layouts are ignored).
 *
 * Messages name the computation and the instruction and carry its loc.
 */
#include <stdarg.h>
#include <string.h>

#include "ir.h"

static bool verify_fail_at(Status *st, const Module *m, SourceLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool verify_fail_at(Status *st, const Module *m, SourceLoc loc, const char *fmt, ...) {
  char message[sizeof st->message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return status_error_at(st, STATUS_VERIFY_ERROR, m->filename, loc, "%s", message);
}

enum { MAX_ELEMENT_COUNT_LOG2 = 40 };

/* Why a declared shape cannot be, or NULL when it is fine. */
static const char *shape_problem(const Shape *s, int depth) {
  if (s->type == TYPE_TUPLE) {
    if (depth > 64) return "tuples nest too deeply";
    if (s->tuple_count < 0 || (s->tuple_count > 0 && !s->tuple_shapes)) return "malformed tuple";
    for (int i = 0; i < s->tuple_count; i++) {
      const char *why = shape_problem(&s->tuple_shapes[i], depth + 1);
      if (why) return why;
    }
    return NULL;
  }
  if ((unsigned)s->type >= TYPE_TUPLE) return "unknown element type";
  if (s->rank < 0 || s->rank > AXLE_MAX_RANK) return "rank is above the limit of 16";
  int64_t count = 1;
  bool seen[AXLE_MAX_RANK] = {false};
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0) return "a dimension is negative";
    if (s->dims[i] >= ((int64_t)1 << MAX_ELEMENT_COUNT_LOG2)) return "a dimension reaches 2^40";
    if (s->dims[i] > 0 && count > (((int64_t)1 << MAX_ELEMENT_COUNT_LOG2) - 1) / s->dims[i])
      return "the element count reaches 2^40";
    count *= s->dims[i];
    int m = s->minor_to_major[i];
    if (m < 0 || m >= s->rank || seen[m]) return "the layout is not a permutation of the dimensions";
    seen[m] = true;
  }
  return NULL;
}

static bool verify_parameters(const Module *m, const Computation *c, Status *st) {
  int seen = 0;
  for (int i = 0; i < c->instruction_count; i++) {
    const Instruction *inst = c->instructions[i];
    if (inst->opcode != OP_PARAMETER) continue;
    int64_t k = inst->attrs.parameter_number;
    if (k < 0 || k >= c->parameter_count || c->parameters[k] != inst)
      return verify_fail_at(st, m, inst->loc,
                            "parameter '%s' has number %lld, but computation '%s' has %d parameters "
                            "or another parameter holds that number",
                            inst->name, (long long)k, c->name, c->parameter_count);
    seen++;
  }
  if (seen != c->parameter_count)
    return verify_fail_at(st, m, c->loc, "computation '%s' expects parameters 0..%d but has %d of them",
                          c->name, c->parameter_count - 1, seen);
  return true;
}

static bool verify_structure(const Module *m, const Computation *c, int position, Status *st) {
  if (!c->root) return verify_fail_at(st, m, c->loc, "computation '%s' has no root", c->name);
  if (c->root->parent != c)
    return verify_fail_at(st, m, c->loc, "computation '%s' has a root from elsewhere", c->name);
  if (c->is_entry != (c == m->entry))
    return verify_fail_at(st, m, c->loc, "computation '%s' is marked entry but is not the entry", c->name);
  for (int i = 0; i < c->instruction_count; i++) {
    const Instruction *inst = c->instructions[i];
    if (inst->parent != c || inst->index != i)
      return verify_fail_at(st, m, inst->loc, "instruction '%s' is misplaced in computation '%s'", inst->name,
                            c->name);
    for (int k = 0; k < inst->operand_count; k++) {
      const Instruction *op = inst->operands[k];
      if (!op || op->parent != c || op->index >= i)
        return verify_fail_at(st, m, inst->loc,
                              "instruction '%s' (%s) in computation '%s': operand %d is not an earlier "
                              "instruction of the same computation",
                              inst->name, opcode_name(inst->opcode), c->name, k);
    }
    for (int k = 0; k < inst->called_count; k++) {
      const Computation *callee = inst->called[k];
      int at = -1;
      for (int j = 0; callee && j < position; j++)
        if (m->computations[j] == callee) at = j;
      if (at < 0 || callee == m->entry)
        return verify_fail_at(st, m, inst->loc,
                              "instruction '%s' (%s) in computation '%s' calls a computation that is "
                              "not defined before it (or is the entry)",
                              inst->name, opcode_name(inst->opcode), c->name);
    }
  }
  return verify_parameters(m, c, st);
}

static bool verify_instruction_shape(const Module *m, const Computation *c, const Instruction *inst,
                                     Arena *scratch, Status *st) {
  const char *why = shape_problem(&inst->shape, 0);
  if (why)
    return verify_fail_at(st, m, inst->loc,
                          "instruction '%s' (%s): declared shape is invalid: %s "
                          "(in computation '%s')",
                          inst->name, opcode_name(inst->opcode), why, c->name);
  Shape inferred;
  if (!infer_shape(inst, &inferred, scratch, st)) return false;
  if (!shape_equal(&inferred, &inst->shape)) {
    StrBuf want = {0}, got = {0};
    shape_print(&want, &inferred, false);
    shape_print(&got, &inst->shape, false);
    verify_fail_at(st, m, inst->loc,
                   "instruction '%s' (%s): declared shape %s does not match the inferred shape %s "
                   "(in computation '%s')",
                   inst->name, opcode_name(inst->opcode), got.data, want.data, c->name);
    strbuf_free(&want);
    strbuf_free(&got);
    return false;
  }
  return true;
}

/* The leaf of shape at index (a path through tuples), or NULL. */
static const Shape *shape_at_index(const Shape *shape, const IntList *index) {
  for (int i = 0; i < index->count; i++) {
    if (!shape_is_tuple(shape) || index->values[i] < 0 || index->values[i] >= shape->tuple_count) return NULL;
    shape = &shape->tuple_shapes[index->values[i]];
  }
  return shape;
}

static bool intlist_same(const IntList *x, const IntList *y) {
  return x->count == y->count &&
         (x->count == 0 || memcmp(x->values, y->values, sizeof(int64_t) * (size_t)x->count) == 0);
}

/* input_output_alias: each entry names a real parameter and a real result
 * leaf of the same shape, and no result leaf is donated twice (XLA's rules). */
static bool verify_io_aliases(const Module *m, Status *st) {
  const Computation *entry = m->entry;
  for (int i = 0; i < m->io_alias_count; i++) {
    const IoAlias *a = &m->io_aliases[i];
    if (a->parameter_number < 0 || a->parameter_number >= entry->parameter_count ||
        !entry->parameters[a->parameter_number])
      return verify_fail_at(st, m, a->loc, "input_output_alias names parameter %lld, but the entry has %d",
                            (long long)a->parameter_number, entry->parameter_count);
    const Shape *out = shape_at_index(&entry->root->shape, &a->output_index);
    const Shape *in = shape_at_index(&entry->parameters[a->parameter_number]->shape, &a->parameter_index);
    if (!out) return verify_fail_at(st, m, a->loc, "input_output_alias: no such leaf in the result");
    if (!in) return verify_fail_at(st, m, a->loc, "input_output_alias: no such leaf in the parameter");
    if (shape_is_tuple(out) || !shape_equal(out, in))
      return verify_fail_at(st, m, a->loc, "input_output_alias: the result leaf and the parameter leaf differ in shape");
    for (int j = 0; j < i; j++) {
      const IoAlias *b = &m->io_aliases[j];
      if (intlist_same(&b->output_index, &a->output_index))
        return verify_fail_at(st, m, a->loc, "input_output_alias: a result leaf is aliased twice");
      if (b->parameter_number == a->parameter_number && intlist_same(&b->parameter_index, &a->parameter_index))
        return verify_fail_at(st, m, a->loc, "input_output_alias: a parameter is donated twice");
    }
  }
  return true;
}

bool verify_module(Module *m, Status *st) {
  if (!m->entry || m->computation_count == 0 || m->computations[m->computation_count - 1] != m->entry)
    return verify_fail_at(st, m, (SourceLoc){0, 0},
                          "module '%s' has no entry computation (or it is not last)", m->name);
  for (int i = 0; i < m->computation_count; i++)
    if (!verify_structure(m, m->computations[i], i, st)) return false;
  /* Inferred tuple shapes go to a scratch arena, so that verifying after
   * every pass does not grow the module's. */
  Arena scratch = {0};
  bool ok = true;
  for (int i = 0; ok && i < m->computation_count; i++) {
    const Computation *c = m->computations[i];
    for (int k = 0; ok && k < c->instruction_count; k++)
      ok = verify_instruction_shape(m, c, c->instructions[k], &scratch, st);
  }
  arena_free_all(&scratch);
  return ok && verify_io_aliases(m, st);
}
