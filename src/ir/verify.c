/* The module verifier: walks every computation and instruction and checks
 * what later stages take for granted.
 *
 *   - the entry exists; computations are first put in callees-before-callers
 *     order (module_sort_computations, so passes may add them anywhere),
 *     after which a callee that still comes after its caller means a cycle
 *     of calls (HLO has no recursion);
 *   - instruction names are unique in the module (as in XLA);
 *   - use lists match the operands (edit.c keeps them; code that writes
 *     operands directly breaks them);
 *   - each computation has a root and parameters numbered 0..n-1, once each;
 *   - operands are instructions of the same computation, defined earlier;
 *   - every declared shape is sane (rank <= AXLE_MAX_RANK, dims >= 0, fewer
 *     than 2^48 elements, each dimension below 2^40, layout a permutation) and equals the shape that
 *     infer_shape computes (dims and element types; layouts are ignored).
 *
 * Messages name the computation and the instruction and carry its loc.
 */
#include <stdarg.h>
#include <stdlib.h>
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

enum { MAX_EXTENT_LOG2 = 40, MAX_ELEMENT_COUNT_LOG2 = 48 };

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
    int m = s->minor_to_major[i];
    if (m < 0 || m >= s->rank || seen[m]) return "the layout is not a permutation of the dimensions";
    seen[m] = true;
    if (shape_dim_is_unbounded(s, i)) continue;  /* f32[?]: no size */
    if (s->dims[i] < 0) return "a dimension is negative";
    if (s->dims[i] >= ((int64_t)1 << MAX_EXTENT_LOG2)) return "a dimension reaches 2^40";
    if (s->dims[i] > 0 && count > (((int64_t)1 << MAX_ELEMENT_COUNT_LOG2) - 1) / s->dims[i])
      return "the element count reaches 2^48";
    count *= s->dims[i];
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

static bool instruction_reads(const Instruction *user, const Instruction *operand) {
  for (int k = 0; k < user->operand_count; k++)
    if (user->operands[k] == operand) return true;
  return false;
}

/* Each user listed once and really reading the instruction, and each
 * (instruction, distinct operand) pair listed: counted, so the check stays
 * linear however many users an instruction has. */
static bool verify_users(const Module *m, const Computation *c, Status *st) {
  int n = c->instruction_count;
  int *stamp = mem_calloc((size_t)n + 1, sizeof *stamp);
  int64_t listed = 0, expected = 0;
  const Instruction *bad = NULL;
  for (int i = 0; i < n && !bad; i++) {
    const Instruction *inst = c->instructions[i];
    for (int k = 0; k < inst->operand_count; k++) {
      bool earlier = false;
      for (int j = 0; j < k && !earlier; j++) earlier = inst->operands[j] == inst->operands[k];
      expected += !earlier;
    }
    for (int u = 0; u < inst->user_count && !bad; u++) {
      const Instruction *user = inst->users[u];
      bool reads = user && user->parent == c && user->index >= 0 && user->index < n &&
                   c->instructions[user->index] == user && stamp[user->index] != i + 1 &&
                   instruction_reads(user, inst);
      if (!reads) bad = inst;
      else stamp[user->index] = i + 1;
      listed++;
    }
  }
  mem_free(stamp);
  if (bad)
    return verify_fail_at(st, m, bad->loc, "instruction '%s' in computation '%s' lists a user that does not read it "
                          "(or lists it twice)", bad->name, c->name);
  if (listed != expected)
    return verify_fail_at(st, m, c->loc, "computation '%s': the use lists miss %lld uses",
                          c->name, (long long)(expected - listed));
  return true;
}

/* Instruction names must be unique in the whole module. */
static bool verify_unique_names(const Module *m, Status *st) {
  int64_t total = 0;
  for (int i = 0; i < m->computation_count; i++) total += m->computations[i]->instruction_count;
  int64_t capacity = 16;
  while (capacity < total * 2) capacity *= 2;
  const Instruction **slots = mem_calloc((size_t)capacity, sizeof *slots);
  const Instruction *twice = NULL;
  for (int i = 0; i < m->computation_count && !twice; i++) {
    const Computation *c = m->computations[i];
    for (int k = 0; k < c->instruction_count && !twice; k++) {
      const Instruction *inst = c->instructions[k];
      uint64_t h = 1469598103934665603ull;
      for (const char *s = inst->name; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
      int64_t at = (int64_t)(h & (uint64_t)(capacity - 1));
      while (slots[at] && strcmp(slots[at]->name, inst->name) != 0) at = (at + 1) & (capacity - 1);
      if (slots[at]) twice = inst;
      slots[at] = inst;
    }
  }
  mem_free(slots);
  if (twice)
    return verify_fail_at(st, m, twice->loc, "instruction name '%s' is used twice in the module (in computation '%s')",
                          twice->name, twice->parent->name);
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
                              "not in the module, is the entry, or calls it back (a cycle)",
                              inst->name, opcode_name(inst->opcode), c->name);
    }
  }
  return verify_parameters(m, c, st) && verify_users(m, c, st);
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
 * leaf of the same byte size, and no result leaf is donated twice (XLA's rules). */
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
    /* XLA asks for equal byte sizes only: a donated buffer may come back
     * reshaped (a bitcast of the parameter as the result). */
    if (shape_is_tuple(out) || shape_is_tuple(in) || out->type == TYPE_TOKEN || in->type == TYPE_TOKEN ||
        shape_byte_size(out) != shape_byte_size(in))
      return verify_fail_at(st, m, a->loc, "input_output_alias: the result leaf and the parameter leaf differ in size");
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
  if (m->entry) module_sort_computations(m);
  if (!m->entry || m->computation_count == 0 || m->computations[m->computation_count - 1] != m->entry)
    return verify_fail_at(st, m, (SourceLoc){0, 0},
                          "module '%s' has no entry computation (or it is not last)", m->name);
  for (int i = 0; i < m->computation_count; i++)
    if (!verify_structure(m, m->computations[i], i, st)) return false;
  if (!verify_unique_names(m, st)) return false;
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
