/* Helpers the evaluator's unit tests share: a small builder for modules
 * made in C, literal constructors, and checks that print what differed.
 * Everything is static inline so each test program takes what it uses. */
#ifndef AXLE_TESTS_EVAL_TEST_SUPPORT_H
#define AXLE_TESTS_EVAL_TEST_SUPPORT_H

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "../test.h"
#include "eval/eval_internal.h"

/* ---- building modules ---- */

enum { MAX_INSTRUCTIONS = 32, MAX_COMPUTATIONS = 8 };

static inline Computation *new_computation(Module *m, const char *name) {
  if (!m->computations)
    m->computations = arena_alloc(&m->arena, MAX_COMPUTATIONS * sizeof(Computation *));
  Computation *c = arena_alloc(&m->arena, sizeof *c);
  c->name = arena_strdup(&m->arena, name);
  c->module = m;
  c->instructions = arena_alloc(&m->arena, MAX_INSTRUCTIONS * sizeof(Instruction *));
  c->parameters = arena_alloc(&m->arena, MAX_INSTRUCTIONS * sizeof(Instruction *));
  m->computations[m->computation_count++] = c;
  m->entry = c;
  return c;
}

/* Appends an instruction; the operands follow as Instruction pointers. */
static inline Instruction *add(Computation *c, Opcode op, Shape shape, int operand_count, ...) {
  Arena *arena = &c->module->arena;
  Instruction *inst = arena_alloc(arena, sizeof *inst);
  inst->opcode = op;
  inst->name = opcode_name(op);
  inst->shape = shape;
  inst->parent = c;
  inst->index = c->instruction_count;
  inst->operand_count = operand_count;
  inst->operands = arena_alloc(arena, (size_t)(operand_count + 1) * sizeof(Instruction *));
  va_list ap;
  va_start(ap, operand_count);
  for (int i = 0; i < operand_count; i++) inst->operands[i] = va_arg(ap, Instruction *);
  va_end(ap);
  c->instructions[c->instruction_count++] = inst;
  c->root = inst;
  return inst;
}

static inline Instruction *add_parameter(Computation *c, Shape shape) {
  Instruction *p = add(c, OP_PARAMETER, shape, 0);
  p->attrs.parameter_number = c->parameter_count;
  c->parameters[c->parameter_count++] = p;
  return p;
}

static inline IntList ints(Module *m, int count, ...) {
  int64_t values[AXLE_MAX_RANK];
  va_list ap;
  va_start(ap, count);
  for (int i = 0; i < count; i++) values[i] = va_arg(ap, int64_t);
  va_end(ap);
  return intlist_copy(&m->arena, values, count);
}

/* ---- literals ---- */

static inline Shape shape1(ElementType t, int64_t n) { return shape_array(t, 1, &n); }
static inline Shape shape2(ElementType t, int64_t a, int64_t b) {
  int64_t dims[2] = {a, b};
  return shape_array(t, 2, dims);
}

static inline Literal *ints_lit(Shape s, const int64_t *values) {
  Literal *lit = literal_create(&s);
  for (int64_t i = 0; i < shape_element_count(&s); i++) literal_set_s64(lit, i, values[i]);
  return lit;
}

static inline Literal *floats_lit(Shape s, const double *values) {
  Literal *lit = literal_create(&s);
  for (int64_t i = 0; i < shape_element_count(&s); i++) literal_set_f64(lit, i, values[i]);
  return lit;
}

#define INTS(type, ...)                                                      \
  ints_lit(shape1(type, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
           (int64_t[]){__VA_ARGS__})
#define FLOATS(type, ...)                                                    \
  floats_lit(shape1(type, sizeof((double[]){__VA_ARGS__}) / sizeof(double)), \
             (double[]){__VA_ARGS__})

static inline Literal *scalar_int(ElementType t, int64_t v) {
  return ints_lit(shape_scalar(t), &v);
}

/* Runs one instruction of the given opcode and result shape on the given
 * operands (which become parameters). attrs, when not NULL, is copied in. */
static inline Literal *run_op(Opcode op, Shape result, const Attrs *attrs, Status *st, int count,
                              ...) {
  Module *m = module_create("one_op");
  Computation *c = new_computation(m, "main");
  Literal *args[8];
  Instruction *params[8];
  va_list ap;
  va_start(ap, count);
  for (int i = 0; i < count; i++) {
    args[i] = va_arg(ap, Literal *);
    params[i] = add_parameter(c, args[i]->shape);
  }
  va_end(ap);
  Instruction *inst = add(c, op, result, 0);
  inst->operand_count = count;
  inst->operands = params;
  if (attrs) inst->attrs = *attrs;
  status_clear(st);
  Literal *out = eval_module(m, args, count, st);
  for (int i = 0; i < count; i++) literal_free(args[i]);
  module_free(m);
  return out;
}

static inline Literal *run1(Opcode op, Shape result, Literal *a) {
  Status st;
  Literal *out = run_op(op, result, NULL, &st, 1, a);
  if (!out) printf("  %s failed: %s\n", opcode_name(op), st.message);
  return out;
}

static inline Literal *run2(Opcode op, Shape result, Literal *a, Literal *b) {
  Status st;
  Literal *out = run_op(op, result, NULL, &st, 2, a, b);
  if (!out) printf("  %s failed: %s\n", opcode_name(op), st.message);
  return out;
}

static inline Literal *run_attrs(Opcode op, Shape result, const Attrs *attrs, int count, Literal *a,
                                 Literal *b, Literal *c) {
  Status st;
  Literal *out = run_op(op, result, attrs, &st, count, a, b, c);
  if (!out) printf("  %s failed: %s\n", opcode_name(op), st.message);
  return out;
}

static inline int64_t get_s(const Literal *lit, int64_t i) { return literal_get_s64(lit, i); }
static inline uint64_t get_u(const Literal *lit, int64_t i) { return literal_get_u64(lit, i); }
static inline double get_f(const Literal *lit, int64_t i) { return literal_get_f64(lit, i); }

static inline uint16_t get_bits16(const Literal *lit, int64_t i) {
  return ((const uint16_t *)lit->data)[i];
}

/* Checks every element of an integer result. */
static inline void expect_ints(const Literal *got, int64_t n, const int64_t *want,
                               const char *what) {
  EXPECT(got != NULL, "%s: no result", what);
  if (!got) return;
  EXPECT(shape_element_count(&got->shape) == n, "%s: %lld elements", what,
         (long long)shape_element_count(&got->shape));
  for (int64_t i = 0; i < n && i < shape_element_count(&got->shape); i++)
    EXPECT(get_s(got, i) == want[i], "%s[%lld] = %lld, want %lld", what, (long long)i,
           (long long)get_s(got, i), (long long)want[i]);
}

/* Exact float comparison that treats NaN as equal to NaN and tells -0 from +0. */
static inline bool same_float(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

static inline void expect_floats(const Literal *got, int64_t n, const double *want,
                                 const char *what) {
  EXPECT(got != NULL, "%s: no result", what);
  if (!got) return;
  for (int64_t i = 0; i < n && i < shape_element_count(&got->shape); i++)
    EXPECT(same_float(get_f(got, i), want[i]), "%s[%lld] = %.9g, want %.9g", what, (long long)i,
           get_f(got, i), want[i]);
}

#define EXPECT_INTS(got, what, ...)                                                              \
  expect_ints(got, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__}, \
              what)
#define EXPECT_FLOATS(got, what, ...)                                                           \
  expect_floats(got, sizeof((double[]){__VA_ARGS__}) / sizeof(double), (double[]){__VA_ARGS__}, \
                what)

/* Parses text that must be valid and evaluates its entry on args. */
static inline Literal *run_hlo(const char *text, Literal *const *args, int count, Status *st) {
  status_clear(st);
  Module *m = parse_module(text, strlen(text), "test.hlo", st);
  if (!m) {
    status_print(st, stdout);
    return NULL;
  }
  Literal *r = eval_module(m, args, count, st);
  module_free(m);
  return r;
}

#endif
