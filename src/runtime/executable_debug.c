/* Running a module under watch, instruction by instruction (axle-run
 * --check and --find-nan; docs/debugging.md).
 *
 * A backend that can show its work (Backend.run_observed) calls an observer
 * after each instruction of the entry it computes, with the value's leaves
 * where it stored them. The observer here keeps a copy of each value and,
 * as asked:
 *
 *   find-nan  scans the value's floats for a NaN or an infinity; the first
 *             instruction that made one stops the run. These are the
 *             compiled code's own values: nothing is run again.
 *   check     evaluates the same instruction of the same (optimized) module
 *             with the reference evaluator, on the values the backend
 *             computed for its operands, and compares: exact for integers,
 *             within a tolerance for floats. Taking the backend's operands
 *             means one wrong kernel is named alone; its error does not
 *             spread to every instruction after it.
 *
 * Instructions the backend computes without a step of their own (tuples,
 * get-tuple-elements and bitcasts, which only name storage) get their
 * values from the evaluator, on the backend's values of their operands. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/executable.h"

typedef struct DebugRun {
  const DebugOptions *options;
  const Module *m;
  const Computation *entry;
  Literal **values;     /* per entry instruction: the backend's value, row-major */
  bool *borrowed;       /* values[i] is an argument's view or a constant's literal */
  Literal **args;       /* views of the arguments */
  int arg_count;
  int filled;           /* instructions [0, filled) have values */
  DebugReport *report;
} DebugRun;

/* ---- values from what the backend shows ---- */

/* A row-major copy of a leaf the backend holds in the leaf's layout; NULL
 * for a packed layout (E(n)), which this does not read. want gives the
 * literal's shape (the instruction's own). */
static Literal *literal_from_leaf(const Shape *want, const ObservedLeaf *leaf) {
  const Shape *s = leaf->shape;
  if (s->element_size_bits || s->rank != want->rank) return NULL;
  Literal *lit = literal_create(want);
  int64_t count = shape_element_count(s);
  if (!leaf->data || count == 0) return lit;
  int64_t stride[AXLE_MAX_RANK], index[AXLE_MAX_RANK] = {0};
  shape_layout_strides(s, stride);
  size_t size = (size_t)type_byte_size(s->type);
  for (int64_t i = 0; i < count; i++) {
    int64_t at = 0;
    for (int d = 0; d < s->rank; d++) at += index[d] * stride[d];
    memcpy((char *)lit->data + (size_t)i * size, (const char *)leaf->data + (size_t)at * size, size);
    for (int d = s->rank - 1; d >= 0 && ++index[d] == s->dims[d]; d--) index[d] = 0;
  }
  return lit;
}

/* The value of shape s from leaves[*next...], depth first; NULL if a leaf
 * is missing or unreadable. */
static Literal *value_from_leaves(const Shape *s, const ObservedLeaf *leaves, int count, int *next) {
  if (!shape_is_tuple(s)) return *next < count ? literal_from_leaf(s, &leaves[(*next)++]) : NULL;
  Literal **elements = mem_calloc((size_t)s->tuple_count + 1, sizeof *elements);
  for (int i = 0; i < s->tuple_count; i++) {
    elements[i] = value_from_leaves(&s->tuple_shapes[i], leaves, count, next);
    if (!elements[i]) {
      for (int k = 0; k < i; k++) literal_free(elements[k]);
      mem_free(elements);
      return NULL;
    }
  }
  Literal *tuple = literal_create_tuple(elements, s->tuple_count);
  mem_free(elements);
  return tuple;
}

/* The evaluator's value of inst from the values its operands have here. */
static Literal *value_evaluate(DebugRun *r, const Instruction *inst, Status *st) {
  Literal **operands = mem_calloc((size_t)inst->operand_count + 1, sizeof *operands);
  for (int k = 0; k < inst->operand_count; k++) operands[k] = r->values[inst->operands[k]->index];
  Literal *v = eval_instruction(inst, operands, st);
  mem_free(operands);
  return v;
}

/* Gives every instruction before `end` a value: parameters and constants
 * their own, the rest (what the backend computed without showing it) the
 * evaluator's. */
static bool values_fill_before(DebugRun *r, int end, Status *st) {
  for (; r->filled < end; r->filled++) {
    int i = r->filled;
    const Instruction *inst = r->entry->instructions[i];
    if (r->values[i]) continue;
    r->borrowed[i] = inst->opcode == OP_PARAMETER || inst->opcode == OP_CONSTANT;
    if (inst->opcode == OP_PARAMETER) {
      int64_t n = inst->attrs.parameter_number;
      r->values[i] = n >= 0 && n < r->arg_count ? r->args[n] : NULL;
    } else if (inst->opcode == OP_CONSTANT) {
      r->values[i] = inst->attrs.literal;
    } else {
      r->values[i] = value_evaluate(r, inst, st);
    }
    if (!r->values[i]) {
      if (!st->message[0]) status_error(st, STATUS_RUNTIME_ERROR, "%s has no value to check against", inst->name);
      return false;
    }
  }
  return true;
}

/* ---- reports ---- */

static void index_print(StrBuf *sb, const Shape *s, int64_t at) {
  int64_t index[AXLE_MAX_RANK];
  for (int d = s->rank - 1; d >= 0; d--) {
    index[d] = s->dims[d] ? at % s->dims[d] : 0;
    at = s->dims[d] ? at / s->dims[d] : 0;
  }
  strbuf_printf(sb, "[");
  for (int d = 0; d < s->rank; d++) strbuf_printf(sb, "%s%lld", d ? "," : "", (long long)index[d]);
  strbuf_printf(sb, "]");
}

static void element_print(StrBuf *sb, const Literal *lit, int64_t at) {
  ElementType t = lit->shape.type;
  if (type_is_complex(t)) {
    double _Complex z = literal_get_complex(lit, at);
    strbuf_printf(sb, "(%.9g, %.9g)", creal(z), cimag(z));
  } else if (type_is_float(t)) {
    strbuf_printf(sb, "%.9g", literal_get_f64(lit, at));
  } else if (t == TYPE_U64) {
    strbuf_printf(sb, "%llu", (unsigned long long)literal_get_u64(lit, at));
  } else {
    strbuf_printf(sb, "%lld", (long long)literal_get_s64(lit, at));
  }
}

/* Fails the run with "NAME (op_name at file:line) MESSAGE", located at the
 * instruction in the module text. */
static bool report_at(DebugRun *r, const Instruction *inst, StrBuf *message, Status *st) {
  StrBuf who = {0};
  instruction_describe(&who, inst);
  status_error_at(st, STATUS_RUNTIME_ERROR, r->m->filename, instruction_source_loc(inst), "%s %s",
                  who.data ? who.data : inst->name, message->data ? message->data : "");
  strbuf_free(&who);
  strbuf_free(message);
  return false;
}

/* " (leaf 2)" for a leaf of a tuple-shaped value, else "". */
static void leaf_print(StrBuf *sb, const Instruction *inst, int leaf) {
  if (shape_is_tuple(&inst->shape)) strbuf_printf(sb, " in leaf %d", leaf);
}

/* ---- find-nan ---- */

static bool element_is_finite(const Literal *lit, int64_t at) {
  if (type_is_complex(lit->shape.type)) {
    double _Complex z = literal_get_complex(lit, at);
    return isfinite(creal(z)) && isfinite(cimag(z));
  }
  return isfinite(literal_get_f64(lit, at));
}

/* The first non-finite element of the value's float leaves, depth first. */
static bool value_find_nonfinite(const Literal *v, int *leaf, const Literal **where, int64_t *at, int64_t *count) {
  if (shape_is_tuple(&v->shape)) {
    for (int i = 0; i < v->shape.tuple_count; i++)
      if (value_find_nonfinite(v->elements[i], leaf, where, at, count)) return true;
    return false;
  }
  ElementType t = v->shape.type;
  if (type_is_float(t) || type_is_complex(t)) {
    int64_t n = shape_element_count(&v->shape);
    for (int64_t i = 0; i < n; i++) {
      if (element_is_finite(v, i)) continue;
      if (*count == 0) *at = i;
      ++*count;
    }
    if (*count) {
      *where = v;
      return true;
    }
  }
  ++*leaf;
  return false;
}

/* The fused instruction that first makes a non-finite value when the
 * evaluator runs the fusion's computation on the backend's values of the
 * fusion's operands (which were finite, or an earlier instruction would
 * have been named); NULL if none does. */
static const Instruction *fusion_first_nonfinite(DebugRun *r, const Instruction *fusion) {
  const Computation *body = fusion->called[0];
  int n = body->instruction_count;
  Literal **v = mem_calloc((size_t)n + 1, sizeof *v);
  const Instruction *found = NULL;
  Status ignored;
  status_clear(&ignored);
  for (int i = 0; i < n && !found; i++) {
    const Instruction *inst = body->instructions[i];
    if (inst->opcode == OP_PARAMETER || inst->opcode == OP_CONSTANT) continue;
    Literal **operands = mem_calloc((size_t)inst->operand_count + 1, sizeof *operands);
    for (int k = 0; k < inst->operand_count; k++) {
      const Instruction *op = inst->operands[k];
      int64_t number = op->attrs.parameter_number;
      operands[k] = op->opcode == OP_CONSTANT ? op->attrs.literal
                    : op->opcode != OP_PARAMETER ? v[op->index]
                    : number >= 0 && number < fusion->operand_count ? r->values[fusion->operands[number]->index]
                                                                   : NULL;
    }
    v[i] = eval_instruction(inst, operands, &ignored);
    mem_free(operands);
    if (!v[i]) break;
    int leaf = 0;
    int64_t at = 0, count = 0;
    const Literal *where = NULL;
    if (value_find_nonfinite(v[i], &leaf, &where, &at, &count)) found = inst;
  }
  for (int i = 0; i < n; i++) literal_free(v[i]);
  mem_free(v);
  return found;
}

static bool value_check_finite(DebugRun *r, const Instruction *inst, const Literal *got, Status *st) {
  int leaf = 0;
  int64_t at = 0, count = 0;
  const Literal *where = NULL;
  if (!value_find_nonfinite(got, &leaf, &where, &at, &count)) return true;
  StrBuf sb = {0};
  double first = type_is_complex(where->shape.type) ? NAN : literal_get_f64(where, at);
  strbuf_printf(&sb, "is the first instruction to produce %s: ", isinf(first) ? "an infinity" : "a NaN");
  element_print(&sb, where, at);
  strbuf_printf(&sb, " at ");
  index_print(&sb, &where->shape, at);
  leaf_print(&sb, inst, leaf);
  strbuf_printf(&sb, " (%lld of %lld elements are not finite)", (long long)count,
                (long long)shape_element_count(&where->shape));
  const Instruction *inside = inst->opcode == OP_FUSION ? fusion_first_nonfinite(r, inst) : NULL;
  if (inside) {
    strbuf_printf(&sb, "; inside the fusion, evaluated on the same inputs, the first is ");
    instruction_describe(&sb, inside);
    if (inside->loc.line > 0) strbuf_printf(&sb, " at line %d", inside->loc.line);
  }
  return report_at(r, inst, &sb, st);
}

/* ---- check ---- */

/* How far a float may be from the evaluator's, relative to its size: the
 * rounding of the type, with room for inline math at a few ulp and for
 * sums taken in another order. An f64 value may come out of a fusion
 * that computed in f32 (and converted): it gets f32's few ulp. */
static double type_tolerance(ElementType t) {
  int bits = type_bit_width(type_is_complex(t) ? type_complex_component(t) : t);
  return bits <= 8 ? 0.25 : bits <= 16 ? 1e-2 : bits <= 32 ? 1e-4 : 1e-6;
}

typedef struct Difference {
  int64_t count;    /* elements beyond tolerance */
  int64_t at;       /* the largest's row-major index */
  double largest;   /* its size (infinity when only one side is NaN) */
} Difference;

/* The smallest normal of a float type: below it values are subnormal, and
 * a difference there is a flush to zero (the evaluator's exp-based
 * formulas underflow where inline math keeps the subnormal), not an error
 * of the computation. */
static double type_smallest_normal(ElementType t) {
  ElementType real = type_is_complex(t) ? type_complex_component(t) : t;
  int bits = type_bit_width(real);
  if (real == TYPE_BF16) return 0x1p-126;
  return bits <= 16 ? 0x1p-14 : bits <= 32 ? 0x1p-126 : 0x1p-1022;
}

/* Compares one leaf whose elements each sum `terms` terms:
 *   |got - want| <= tol * (|want| + max|want| / 10)
 *                   + sum_rounding_allowance(type, terms, max|want|)
 * or below the type's smallest normal, tol the type's few-ulp rounding
 * (type_tolerance). exact: bit for bit. */
static void leaf_compare(const Literal *want, const Literal *got, bool exact, int64_t terms, Difference *d) {
  int64_t n = shape_element_count(&want->shape);
  ElementType t = want->shape.type;
  size_t size = (size_t)type_byte_size(t);
  if (exact || (!type_is_float(t) && !type_is_complex(t))) {
    for (int64_t i = 0; i < n; i++) {
      if (memcmp((const char *)want->data + i * size, (const char *)got->data + i * size, size) == 0) continue;
      double gap = t == TYPE_U64                       ? fabs((double)literal_get_u64(want, i) - (double)literal_get_u64(got, i))
                   : type_is_float(t) || type_is_complex(t) ? cabs(literal_get_complex(want, i) - literal_get_complex(got, i))
                                                            : fabs((double)literal_get_s64(want, i) - (double)literal_get_s64(got, i));
      if (d->count++ == 0 || gap > d->largest) d->largest = gap, d->at = i;
    }
    return;
  }
  double tol = type_tolerance(t), biggest = 0;
  for (int64_t i = 0; i < n; i++) {
    double m = cabs(literal_get_complex(want, i));
    if (isfinite(m) && m > biggest) biggest = m;
  }
  double growth = sum_rounding_allowance(t, terms, biggest);
  for (int64_t i = 0; i < n; i++) {
    double _Complex w = literal_get_complex(want, i), g = literal_get_complex(got, i);
    bool w_nan = isnan(creal(w)) || isnan(cimag(w)), g_nan = isnan(creal(g)) || isnan(cimag(g));
    if (w == g || (w_nan && g_nan)) continue;
    double gap = w_nan != g_nan ? INFINITY : cabs(w - g);
    if (gap <= tol * (cabs(w) + biggest / 10) + growth || gap < type_smallest_normal(t)) continue;
    if (isnan(gap)) gap = INFINITY;  /* infinities of opposite signs */
    if (d->count++ == 0 || gap > d->largest) d->largest = gap, d->at = i;
  }
}

/* The first leaf (depth first) where want and got differ; -1 if none. */
static int value_compare_leaves(const Literal *want, const Literal *got, bool exact, int64_t terms, int *leaf,
                                Difference *d, const Literal **w, const Literal **g) {
  if (shape_is_tuple(&want->shape)) {
    for (int i = 0; i < want->shape.tuple_count; i++) {
      int found = value_compare_leaves(want->elements[i], got->elements[i], exact, terms, leaf, d, w, g);
      if (found >= 0) return found;
    }
    return -1;
  }
  int here = (*leaf)++;
  leaf_compare(want, got, exact, terms, d);
  if (d->count == 0) return -1;
  *w = want;
  *g = got;
  return here;
}

static int value_compare(const Literal *want, const Literal *got, int64_t terms, int *leaf, Difference *d,
                         const Literal **w, const Literal **g) {
  return value_compare_leaves(want, got, false, terms, leaf, d, w, g);
}

static int value_compare_exactly(const Literal *want, const Literal *got, int *leaf, Difference *d,
                                 const Literal **w, const Literal **g) {
  return value_compare_leaves(want, got, true, 1, leaf, d, w, g);
}

static bool value_check_against_evaluator(DebugRun *r, const Instruction *inst, const Literal *got, Status *st) {
  Status why;
  status_clear(&why);
  Literal *want = value_evaluate(r, inst, &why);
  if (!want) {
    StrBuf sb = {0};
    strbuf_printf(&sb, "cannot be checked: the evaluator fails on it: %s", why.message);
    return report_at(r, inst, &sb, st);
  }
  int leaf = 0;
  Difference d = {0};
  const Literal *w = NULL, *g = NULL;
  int found = value_compare(want, got, instruction_summed_terms(inst), &leaf, &d, &w, &g);
  if (found < 0) {
    literal_free(want);
    return true;
  }
  StrBuf sb = {0};
  strbuf_printf(&sb, "is the first instruction whose result differs from the evaluator's on the same inputs: "
                     "%lld of %lld elements differ%s",
                (long long)d.count, (long long)shape_element_count(&w->shape),
                type_is_float(w->shape.type) || type_is_complex(w->shape.type) ? " beyond tolerance" : "");
  leaf_print(&sb, inst, found);
  strbuf_printf(&sb, "; the largest difference, %.9g, at ", d.largest);
  index_print(&sb, &w->shape, d.at);
  strbuf_printf(&sb, ": got ");
  element_print(&sb, g, d.at);
  strbuf_printf(&sb, ", the evaluator ");
  element_print(&sb, w, d.at);
  literal_free(want);
  return report_at(r, inst, &sb, st);
}

/* ---- the observer and the run ---- */

static bool debug_observe(void *context, const Instruction *inst, const ObservedLeaf *leaves, int leaf_count,
                          Status *st) {
  DebugRun *r = context;
  if (inst->parent != r->entry || r->values[inst->index]) return true;
  if (!values_fill_before(r, inst->index, st)) return false;
  int next = 0;
  Literal *got = value_from_leaves(&inst->shape, leaves, leaf_count, &next);
  if (!got) {
    /* A layout this cannot read: the evaluator's value stands in for it. */
    r->report->unread++;
    return values_fill_before(r, inst->index + 1, st);
  }
  r->values[inst->index] = got;
  r->filled = inst->index + 1;
  r->report->instructions++;
  return (!r->options->find_nan || value_check_finite(r, inst, got, st)) &&
         (!r->options->check || value_check_against_evaluator(r, inst, got, st));
}

/* The result must be the value the root had when it was computed: a step
 * that wrote into storage still to be returned shows up here, and nowhere
 * else, since every other value was copied as soon as it was made. */
static bool result_check_intact(DebugRun *r, const HostBuffer *result, Status *st) {
  if (!values_fill_before(r, r->entry->instruction_count, st)) return false;
  const Instruction *root = r->entry->root;
  Literal *got = host_buffer_view(result);
  int leaf = 0;
  Difference d = {0};
  const Literal *w = NULL, *g = NULL;
  /* Exact: both are the backend's own bits. */
  int found = value_compare_exactly(r->values[root->index], got, &leaf, &d, &w, &g);
  literal_view_free(got);
  if (found < 0) return true;
  StrBuf sb = {0};
  strbuf_printf(&sb, "was overwritten after it was computed: %lld elements of the result", (long long)d.count);
  leaf_print(&sb, root, found);
  strbuf_printf(&sb, " differ from the values the instruction produced");
  return report_at(r, root, &sb, st);
}

HostBuffer *executable_run_debug(const Executable *e, HostBuffer *const *args, int arg_count, const DebugOptions *o,
                                 DebugReport *report, Status *st) {
  memset(report, 0, sizeof *report);
  if (!e->backend->run_observed) {
    status_error(st, STATUS_UNSUPPORTED, "the %s backend cannot show its work instruction by instruction",
                 e->backend->name);
    return NULL;
  }
  if (arg_count < 0 || (arg_count > 0 && !args)) {
    status_error(st, STATUS_INPUT_ERROR, "no arguments given");
    return NULL;
  }
  if (!host_buffer_check_arguments(e->module->entry, args, arg_count, st)) return NULL;
  const Module *m = executable_module_to_run(e);
  int n = m->entry->instruction_count;
  DebugRun r = {.options = o, .m = m, .entry = m->entry, .arg_count = arg_count, .report = report};
  r.values = mem_calloc((size_t)n + 1, sizeof *r.values);
  r.borrowed = mem_calloc((size_t)n + 1, sizeof *r.borrowed);
  r.args = mem_calloc((size_t)arg_count + 1, sizeof *r.args);
  for (int i = 0; i < arg_count; i++) r.args[i] = host_buffer_view(args[i]);
  HostBuffer *result = e->backend->run_observed(e->program, executable_module_to_run(e), args, arg_count, debug_observe, &r, st);
  if (result && o->check && !result_check_intact(&r, result, st)) {
    host_buffer_free(result);
    result = NULL;
  }
  for (int i = 0; i < n; i++)
    if (!r.borrowed[i]) literal_free(r.values[i]);
  for (int i = 0; i < arg_count; i++) literal_view_free(r.args[i]);
  mem_free(r.args);
  mem_free(r.borrowed);
  mem_free(r.values);
  return result;
}
