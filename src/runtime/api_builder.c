/* The public builder (axle_builder_*): a handle-based front on src/ir's
 * builder. The first error is kept and reported by axle_builder_finish; every
 * later call is a no-op returning -1, so callers check once at the end. */
#include <stdlib.h>
#include <string.h>

#include "runtime/api_internal.h"

struct axle_builder {
  Module *module;
  Computation *entry;
  Instruction **values;   /* handle -> instruction */
  int value_count, value_cap;
  Status status;          /* the first error */
  bool failed;
};

static axle_builder_t *axle_builder_create_body(const char *module_name) {
  axle_builder_t *b = mem_calloc(1, sizeof *b);
  if (!b) return NULL;
  b->module = module_create(module_name ? module_name : "built");
  b->entry = builder_add_computation(b->module, "main");
  b->entry->is_entry = true;
  b->module->entry = b->entry;
  return b;
}

AXLE_API axle_builder_t *axle_builder_create(const char *module_name) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return NULL;
  axle_builder_t *returned = axle_builder_create_body(module_name);
  mem_scope_end(&scope);
  return returned;
}

AXLE_API void axle_builder_free(axle_builder_t *b) {
  if (!b) return;
  module_free(b->module);
  mem_free(b->values);
  mem_free(b);
}

static axle_value_t fail(axle_builder_t *b, const char *message) {
  if (!b->failed) status_error(&b->status, STATUS_VERIFY_ERROR, "%s", message);
  b->failed = true;
  return -1;
}

static axle_value_t remember(axle_builder_t *b, Instruction *inst) {
  if (!inst) {
    b->failed = true;
    return -1;
  }
  if (b->value_count == b->value_cap) {
    int cap = b->value_cap ? 2 * b->value_cap : 16;
    Instruction **v = mem_realloc(b->values, sizeof *v * (size_t)cap);
    if (!v) return fail(b, "out of memory");
    b->values = v;
    b->value_cap = cap;
  }
  b->values[b->value_count] = inst;
  return b->value_count++;
}

/* A builder call that ran out of memory leaves the builder failed: its
 * module may already point to what the call allocated, so that is kept (a
 * keeping scope) and nothing more is added; axle_builder_finish reports it. */
static axle_value_t builder_out_of_memory(axle_builder_t *b, const MemScope *scope) {
  if (!b->failed)
    status_error(&b->status, STATUS_OUT_OF_MEMORY, "out of memory: needs %zu bytes", scope->needed);
  b->failed = true;
  return -1;
}

static axle_module_t *builder_finish_out_of_memory(axle_builder_t *b, const MemScope *scope, axle_error_t **error) {
  if (b) builder_out_of_memory(b, scope);
  api_out_of_memory(error, scope);
  return NULL;
}

/* Looks up a handle; NULL (and the builder failed) when it is not valid. */
static Instruction *value(axle_builder_t *b, axle_value_t v) {
  if (b->failed) return NULL;
  if (v < 0 || v >= b->value_count) {
    fail(b, "a builder value handle is out of range");
    return NULL;
  }
  return b->values[v];
}

static axle_value_t add(axle_builder_t *b, Opcode op, Instruction **operands, int n,
                        Computation *called, const Attrs *attrs) {
  if (b->failed) return -1;
  Instruction *inst = builder_add_instruction(b->entry, op, operands, n, &called,
                                              called ? 1 : 0, attrs, NULL, &b->status);
  return remember(b, inst);
}

static bool dims_valid(int rank, const int64_t *dims) {
  if (rank < 0 || rank > AXLE_MAX_RANK || (rank > 0 && !dims)) return false;
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0) return false;
  return true;
}

static axle_value_t axle_builder_parameter_body(axle_builder_t *b, axle_type_t type, int rank,
                                             const int64_t *dims, const char *name) {
  if (b->failed) return -1;
  if ((int)type < 0 || type >= AXLE_TUPLE || !dims_valid(rank, dims))
    return fail(b, "axle_builder_parameter: bad element type or dimensions");
  Shape shape = shape_array((ElementType)type, rank, dims);
  return remember(b, builder_add_parameter(b->entry, &shape, name));
}

AXLE_API axle_value_t axle_builder_parameter(axle_builder_t *b, axle_type_t type, int rank,
                                             const int64_t *dims, const char *name) {
  MemScope scope;
  mem_scope_begin_keeping(&scope);
  if (setjmp(scope.unwind) != 0) return builder_out_of_memory(b, &scope);
  axle_value_t returned = axle_builder_parameter_body(b, type, rank, dims, name);
  mem_scope_end(&scope);
  return returned;
}

static axle_value_t axle_builder_constant_body(axle_builder_t *b, axle_type_t type, double v) {
  if (b->failed) return -1;
  if ((int)type < 0 || type >= AXLE_TUPLE) return fail(b, "axle_builder_constant: bad type");
  Shape shape = shape_scalar((ElementType)type);
  Attrs attrs = {0};
  attrs.literal = literal_create(&shape);
  literal_set_f64(attrs.literal, 0, v);
  axle_value_t handle = add(b, OP_CONSTANT, NULL, 0, NULL, &attrs);
  if (handle < 0) literal_free(attrs.literal);
  return handle;
}

AXLE_API axle_value_t axle_builder_constant(axle_builder_t *b, axle_type_t type, double v) {
  MemScope scope;
  mem_scope_begin_keeping(&scope);
  if (setjmp(scope.unwind) != 0) return builder_out_of_memory(b, &scope);
  axle_value_t returned = axle_builder_constant_body(b, type, v);
  mem_scope_end(&scope);
  return returned;
}

static const Opcode unary_opcodes[] = {
    [AXLE_ABS] = OP_ABS,   [AXLE_NEGATE] = OP_NEGATE,     [AXLE_EXP] = OP_EXPONENTIAL,
    [AXLE_LOG] = OP_LOG,   [AXLE_TANH] = OP_TANH,         [AXLE_SQRT] = OP_SQRT,
    [AXLE_RSQRT] = OP_RSQRT, [AXLE_LOGISTIC] = OP_LOGISTIC, [AXLE_FLOOR] = OP_FLOOR,
    [AXLE_CEIL] = OP_CEIL, [AXLE_SIN] = OP_SINE,          [AXLE_COS] = OP_COSINE,
};

static const Opcode binary_opcodes[] = {
    [AXLE_ADD] = OP_ADD,         [AXLE_SUBTRACT] = OP_SUBTRACT, [AXLE_MULTIPLY] = OP_MULTIPLY,
    [AXLE_DIVIDE] = OP_DIVIDE,   [AXLE_MAXIMUM] = OP_MAXIMUM,   [AXLE_MINIMUM] = OP_MINIMUM,
    [AXLE_POWER] = OP_POWER,
};

static axle_value_t axle_builder_unary_body(axle_builder_t *b, axle_unary_op_t op, axle_value_t x) {
  Instruction *operand = value(b, x);
  if (!operand) return -1;
  if ((int)op < 0 || op > AXLE_COS) return fail(b, "axle_builder_unary: unknown op");
  return add(b, unary_opcodes[op], &operand, 1, NULL, NULL);
}

AXLE_API axle_value_t axle_builder_unary(axle_builder_t *b, axle_unary_op_t op, axle_value_t x) {
  MemScope scope;
  mem_scope_begin_keeping(&scope);
  if (setjmp(scope.unwind) != 0) return builder_out_of_memory(b, &scope);
  axle_value_t returned = axle_builder_unary_body(b, op, x);
  mem_scope_end(&scope);
  return returned;
}

static axle_value_t axle_builder_binary_body(axle_builder_t *b, axle_binary_op_t op, axle_value_t x,
                                          axle_value_t y) {
  Instruction *operands[2] = {value(b, x), value(b, y)};
  if (!operands[0] || !operands[1]) return -1;
  if ((int)op < 0 || op > AXLE_POWER) return fail(b, "axle_builder_binary: unknown op");
  return add(b, binary_opcodes[op], operands, 2, NULL, NULL);
}

AXLE_API axle_value_t axle_builder_binary(axle_builder_t *b, axle_binary_op_t op, axle_value_t x,
                                          axle_value_t y) {
  MemScope scope;
  mem_scope_begin_keeping(&scope);
  if (setjmp(scope.unwind) != 0) return builder_out_of_memory(b, &scope);
  axle_value_t returned = axle_builder_binary_body(b, op, x, y);
  mem_scope_end(&scope);
  return returned;
}

static axle_value_t axle_builder_broadcast_body(axle_builder_t *b, axle_value_t x, int rank,
                                             const int64_t *dims, const int64_t *broadcast_dims) {
  Instruction *operand = value(b, x);
  if (!operand) return -1;
  if (!dims_valid(rank, dims)) return fail(b, "axle_builder_broadcast: bad dimensions");
  /* The result shape is an input here; infer_shape checks it against the
   * operand and the dimension mapping. */
  Attrs attrs = {0};
  attrs.dimensions = intlist_copy(&b->module->arena, broadcast_dims, operand->shape.rank);
  Shape shape = shape_array(operand->shape.type, rank, dims);
  return remember(b, builder_add_instruction(b->entry, OP_BROADCAST, &operand, 1, NULL, 0,
                                             &attrs, &shape, &b->status));
}

AXLE_API axle_value_t axle_builder_broadcast(axle_builder_t *b, axle_value_t x, int rank,
                                             const int64_t *dims, const int64_t *broadcast_dims) {
  MemScope scope;
  mem_scope_begin_keeping(&scope);
  if (setjmp(scope.unwind) != 0) return builder_out_of_memory(b, &scope);
  axle_value_t returned = axle_builder_broadcast_body(b, x, rank, dims, broadcast_dims);
  mem_scope_end(&scope);
  return returned;
}

static axle_value_t axle_builder_reshape_body(axle_builder_t *b, axle_value_t x, int rank,
                                           const int64_t *dims) {
  Instruction *operand = value(b, x);
  if (!operand) return -1;
  if (!dims_valid(rank, dims)) return fail(b, "axle_builder_reshape: bad dimensions");
  Shape shape = shape_array(operand->shape.type, rank, dims);
  if (shape_element_count(&shape) != shape_element_count(&operand->shape))
    return fail(b, "axle_builder_reshape: element counts differ");
  return remember(b, builder_add_instruction(b->entry, OP_RESHAPE, &operand, 1, NULL, 0, NULL,
                                             &shape, &b->status));
}

AXLE_API axle_value_t axle_builder_reshape(axle_builder_t *b, axle_value_t x, int rank,
                                           const int64_t *dims) {
  MemScope scope;
  mem_scope_begin_keeping(&scope);
  if (setjmp(scope.unwind) != 0) return builder_out_of_memory(b, &scope);
  axle_value_t returned = axle_builder_reshape_body(b, x, rank, dims);
  mem_scope_end(&scope);
  return returned;
}

static axle_value_t axle_builder_transpose_body(axle_builder_t *b, axle_value_t x,
                                             const int64_t *permutation) {
  Instruction *operand = value(b, x);
  if (!operand) return -1;
  Attrs attrs = {.dimensions = intlist_copy(&b->module->arena, permutation, operand->shape.rank)};
  return add(b, OP_TRANSPOSE, &operand, 1, NULL, &attrs);
}

AXLE_API axle_value_t axle_builder_transpose(axle_builder_t *b, axle_value_t x,
                                             const int64_t *permutation) {
  MemScope scope;
  mem_scope_begin_keeping(&scope);
  if (setjmp(scope.unwind) != 0) return builder_out_of_memory(b, &scope);
  axle_value_t returned = axle_builder_transpose_body(b, x, permutation);
  mem_scope_end(&scope);
  return returned;
}

static axle_value_t axle_builder_matmul_body(axle_builder_t *b, axle_value_t x, axle_value_t y) {
  Instruction *operands[2] = {value(b, x), value(b, y)};
  if (!operands[0] || !operands[1]) return -1;
  int rank = operands[0]->shape.rank;
  if (rank < 2 || operands[1]->shape.rank != rank)
    return fail(b, "axle_builder_matmul: operands must have the same rank, at least 2");
  int64_t batch[AXLE_MAX_RANK];
  for (int i = 0; i < rank - 2; i++) batch[i] = i;
  int64_t lhs_contracting = rank - 1, rhs_contracting = rank - 2;
  Arena *arena = &b->module->arena;
  DotDims dot = {.lhs_batch = intlist_copy(arena, batch, rank - 2),
                 .rhs_batch = intlist_copy(arena, batch, rank - 2),
                 .lhs_contracting = intlist_copy(arena, &lhs_contracting, 1),
                 .rhs_contracting = intlist_copy(arena, &rhs_contracting, 1)};
  Attrs attrs = {.dot = &dot};  /* the builder copies dot into the module */
  return add(b, OP_DOT, operands, 2, NULL, &attrs);
}

AXLE_API axle_value_t axle_builder_matmul(axle_builder_t *b, axle_value_t x, axle_value_t y) {
  MemScope scope;
  mem_scope_begin_keeping(&scope);
  if (setjmp(scope.unwind) != 0) return builder_out_of_memory(b, &scope);
  axle_value_t returned = axle_builder_matmul_body(b, x, y);
  mem_scope_end(&scope);
  return returned;
}

/* The reducer computation: (a, b) -> op(a, b) on scalars of type t. */
static Computation *scalar_reducer(axle_builder_t *b, Opcode op, ElementType t) {
  char name[64];
  snprintf(name, sizeof name, "reducer.%d", b->module->computation_count);
  Computation *c = builder_add_computation(b->module, name);
  Shape scalar = shape_scalar(t);
  Instruction *params[2] = {builder_add_parameter(c, &scalar, "lhs"),
                            builder_add_parameter(c, &scalar, "rhs")};
  Instruction *result = builder_add_instruction(c, op, params, 2, NULL, 0, NULL, NULL, &b->status);
  if (!result) return NULL;
  computation_set_root(c, result);
  return c;
}

static axle_value_t axle_builder_reduce_body(axle_builder_t *b, axle_binary_op_t op, axle_value_t x,
                                          axle_value_t init, int dim_count, const int64_t *dims) {
  Instruction *operands[2] = {value(b, x), value(b, init)};
  if (!operands[0] || !operands[1]) return -1;
  if (op != AXLE_ADD && op != AXLE_MULTIPLY && op != AXLE_MAXIMUM && op != AXLE_MINIMUM)
    return fail(b, "axle_builder_reduce: op must be ADD, MULTIPLY, MAXIMUM or MINIMUM");
  if (dim_count < 0 || dim_count > operands[0]->shape.rank || (dim_count > 0 && !dims))
    return fail(b, "axle_builder_reduce: bad dimension list");
  Computation *reducer = scalar_reducer(b, binary_opcodes[op], operands[0]->shape.type);
  if (!reducer) {
    b->failed = true;
    return -1;
  }
  Attrs attrs = {.dimensions = intlist_copy(&b->module->arena, dims, dim_count)};
  return add(b, OP_REDUCE, operands, 2, reducer, &attrs);
}

AXLE_API axle_value_t axle_builder_reduce(axle_builder_t *b, axle_binary_op_t op, axle_value_t x,
                                          axle_value_t init, int dim_count, const int64_t *dims) {
  MemScope scope;
  mem_scope_begin_keeping(&scope);
  if (setjmp(scope.unwind) != 0) return builder_out_of_memory(b, &scope);
  axle_value_t returned = axle_builder_reduce_body(b, op, x, init, dim_count, dims);
  mem_scope_end(&scope);
  return returned;
}

static axle_value_t axle_builder_tuple_body(axle_builder_t *b, int count, const axle_value_t *values) {
  if (b->failed) return -1;
  if (count < 0 || (count > 0 && !values)) return fail(b, "axle_builder_tuple: bad value list");
  Instruction **operands = mem_calloc((size_t)count + 1, sizeof *operands);
  if (!operands) return fail(b, "out of memory");
  for (int i = 0; i < count; i++) {
    operands[i] = value(b, values[i]);
    if (!operands[i]) {
      mem_free(operands);
      return -1;
    }
  }
  axle_value_t handle = add(b, OP_TUPLE, operands, count, NULL, NULL);
  mem_free(operands);
  return handle;
}

AXLE_API axle_value_t axle_builder_tuple(axle_builder_t *b, int count, const axle_value_t *values) {
  MemScope scope;
  mem_scope_begin_keeping(&scope);
  if (setjmp(scope.unwind) != 0) return builder_out_of_memory(b, &scope);
  axle_value_t returned = axle_builder_tuple_body(b, count, values);
  mem_scope_end(&scope);
  return returned;
}

static axle_module_t *axle_builder_finish_body(axle_builder_t *b, axle_value_t root, axle_error_t **error) {
  Instruction *r = value(b, root);
  if (!r || b->failed) {
    if (!b->failed) fail(b, "axle_builder_finish: no root");
    api_set_error(error, &b->status);
    return NULL;
  }
  Module *m = b->module;
  /* The public API's root is the value given here (src/ir's builder sets none). */
  computation_set_root(b->entry, r);
  /* Allocated before the builder lets go of m: out of memory up to there
   * frees only these two and leaves the builder as it was. */
  axle_module_t *am = mem_calloc(1, sizeof *am);
  Module *fresh = module_create("finished");
  Status st;
  status_clear(&st);
  if (!verify_module(m, &st)) {
    module_free(fresh);
    mem_free(am);
    api_set_error(error, &st);
    return NULL;
  }
  b->module = fresh;  /* the builder no longer owns m */
  b->failed = true;
  b->status.code = STATUS_INPUT_ERROR;
  snprintf(b->status.message, sizeof b->status.message, "the builder was already finished");
  am->module = m;
  return am;
}

AXLE_API axle_module_t *axle_builder_finish(axle_builder_t *b, axle_value_t root, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return builder_finish_out_of_memory(b, &scope, error);
  axle_module_t *returned = axle_builder_finish_body(b, root, error);
  mem_scope_end(&scope);
  return returned;
}
