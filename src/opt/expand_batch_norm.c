/* Pass "expand-batch-norm": batch-norm-inference, batch-norm-training and
 * batch-norm-grad become the primitive ops they are made of (broadcast,
 * reduce, elementwise arithmetic), the way XLA's BatchNormExpander does, so
 * that fusion and the backends see only ops they already compile.
 *
 * The formulas are the evaluator's (src/ir/eval/eval_batchnorm.c), with n
 * the elements per feature, sums over the elements of one feature:
 *   inference: y = scale * ((x - mean) / sqrt(var + eps)) + offset
 *   training:  mean = sum(x) / n, var = sum((x - mean)^2) / n (biased,
 *              from centered values), y as inference; returns (y, mean, var)
 *   grad:      xc = x - mean, s = var + eps,
 *              grad_x = scale / sqrt(s) / n * (n dy - sum(dy) - xc sum(dy xc) / s)
 *              grad_scale = sum(dy xc) / sqrt(s), grad_offset = sum(dy)
 * computed in the operand's element type (the evaluator uses double and
 * rounds once, so results differ by rounding only).
 *
 * requires: verified. breaks: nothing (run before fusion, schedule and
 * buffer assignment). */
#include <stdlib.h>

#include "opt/opt.h"

/* The instruction being expanded, and where its replacement goes. */
typedef struct Expansion {
  Computation *c;
  const Instruction *inst;
  const Shape *full;            /* the operand's shape (layout included) */
  Shape vector;                 /* [features] */
  ElementType type;
  int feature;
  int64_t per_feature;
  Computation *adder;           /* the reducer: a scalar add of type */
} Expansion;

static Instruction *add_op(Expansion *e, Opcode op, Instruction *const *operands, int count, const Attrs *attrs,
                           const Shape *shape) {
  Attrs none = {0};
  Computation *const *called = op == OP_REDUCE ? &e->adder : NULL;
  Instruction *made = computation_add_instruction(e->c, op, operands, count, called, op == OP_REDUCE,
                                                  attrs ? attrs : &none, shape, NULL);
  made->metadata = e->inst->metadata;
  made->loc = e->inst->loc;
  return made;
}

static Instruction *add_binary(Expansion *e, Opcode op, Instruction *a, Instruction *b) {
  Instruction *operands[2] = {a, b};
  return add_op(e, op, operands, 2, NULL, &a->shape);
}

static Instruction *add_unary(Expansion *e, Opcode op, Instruction *a) { return add_op(e, op, &a, 1, NULL, &a->shape); }

static Instruction *add_scalar(Expansion *e, double value) {
  Shape s = shape_scalar(e->type);
  Literal *lit = literal_create(&s);
  literal_set_f64(lit, 0, value);
  Attrs attrs = {0};
  attrs.literal = lit;
  return add_op(e, OP_CONSTANT, NULL, 0, &attrs, &s);
}

/* A scalar or a [features] vector spread over the operand's shape. */
static Instruction *add_spread(Expansion *e, Instruction *v) {
  Attrs attrs = {0};
  int64_t feature = e->feature;
  if (v->shape.rank == 1) attrs.dimensions = (IntList){1, &feature};
  return add_op(e, OP_BROADCAST, &v, 1, &attrs, e->full);
}

/* The sum of each feature's elements of a value of the operand's shape. */
static Instruction *add_feature_sum(Expansion *e, Instruction *x) {
  int64_t dims[AXLE_MAX_RANK];
  int n = 0;
  for (int d = 0; d < e->full->rank; d++)
    if (d != e->feature) dims[n++] = d;
  Attrs attrs = {0};
  attrs.dimensions = (IntList){n, dims};
  Instruction *operands[2] = {x, add_scalar(e, 0)};
  return add_op(e, OP_REDUCE, operands, 2, &attrs, &e->vector);
}

/* scale * (centered / sqrt(var + eps)) + offset, over the operand's shape. */
static Instruction *add_normalized(Expansion *e, Instruction *centered, Instruction *scale, Instruction *offset,
                                   Instruction *variance) {
  Instruction *eps = add_op(e, OP_BROADCAST, (Instruction *[]){add_scalar(e, (float)e->inst->attrs.epsilon)}, 1,
                            NULL, &e->vector);
  Instruction *deviation = add_unary(e, OP_SQRT, add_binary(e, OP_ADD, variance, eps));
  Instruction *unit = add_binary(e, OP_DIVIDE, centered, add_spread(e, deviation));
  return add_binary(e, OP_ADD, add_binary(e, OP_MULTIPLY, add_spread(e, scale), unit), add_spread(e, offset));
}

static Instruction *add_tuple(Expansion *e, Instruction *a, Instruction *b, Instruction *c) {
  Instruction *parts[3] = {a, b, c};
  return add_op(e, OP_TUPLE, parts, 3, NULL, &e->inst->shape);
}

static Instruction *expand_inference(Expansion *e, Instruction *const *in) {
  Instruction *centered = add_binary(e, OP_SUBTRACT, in[0], add_spread(e, in[3]));
  return add_normalized(e, centered, in[1], in[2], in[4]);
}

static Instruction *expand_training(Expansion *e, Instruction *const *in) {
  Instruction *count = add_op(e, OP_BROADCAST, (Instruction *[]){add_scalar(e, (double)e->per_feature)}, 1, NULL,
                              &e->vector);
  Instruction *mean = add_binary(e, OP_DIVIDE, add_feature_sum(e, in[0]), count);
  Instruction *centered = add_binary(e, OP_SUBTRACT, in[0], add_spread(e, mean));
  Instruction *squares = add_binary(e, OP_MULTIPLY, centered, centered);
  Instruction *variance = add_binary(e, OP_DIVIDE, add_feature_sum(e, squares), count);
  return add_tuple(e, add_normalized(e, centered, in[1], in[2], variance), mean, variance);
}

static Instruction *expand_grad(Expansion *e, Instruction *const *in) {
  Instruction *x = in[0], *scale = in[1], *mean = in[2], *variance = in[3], *dy = in[4];
  Instruction *eps = add_op(e, OP_BROADCAST, (Instruction *[]){add_scalar(e, (float)e->inst->attrs.epsilon)}, 1,
                            NULL, &e->vector);
  Instruction *count = add_op(e, OP_BROADCAST, (Instruction *[]){add_scalar(e, (double)e->per_feature)}, 1, NULL,
                              &e->vector);
  Instruction *s = add_binary(e, OP_ADD, variance, eps);
  Instruction *deviation = add_unary(e, OP_SQRT, s);
  Instruction *centered = add_binary(e, OP_SUBTRACT, x, add_spread(e, mean));
  Instruction *sum_dy = add_feature_sum(e, dy);
  Instruction *sum_dy_xc = add_feature_sum(e, add_binary(e, OP_MULTIPLY, dy, centered));
  /* n dy - sum(dy) - xc * sum(dy xc) / s */
  Instruction *inner = add_binary(e, OP_SUBTRACT, add_binary(e, OP_MULTIPLY, dy, add_spread(e, count)),
                                  add_spread(e, sum_dy));
  inner = add_binary(e, OP_SUBTRACT, inner,
                     add_binary(e, OP_MULTIPLY, centered, add_spread(e, add_binary(e, OP_DIVIDE, sum_dy_xc, s))));
  Instruction *factor = add_binary(e, OP_DIVIDE, add_binary(e, OP_DIVIDE, scale, deviation), count);
  Instruction *grad_x = add_binary(e, OP_MULTIPLY, add_spread(e, factor), inner);
  return add_tuple(e, grad_x, add_binary(e, OP_DIVIDE, sum_dy_xc, deviation), sum_dy);
}

/* The scalar add of type t that the sums reduce with, made once per type. */
static Computation *adder_for(Module *m, ElementType t, Computation **adders) {
  if (adders[t]) return adders[t];
  Computation *add = builder_add_computation(m, "batch_norm_add");
  Shape s = shape_scalar(t);
  Instruction *operands[2] = {builder_add_parameter(add, &s, "x"), builder_add_parameter(add, &s, "y")};
  Attrs none = {0};
  Instruction *sum = computation_add_instruction(add, OP_ADD, operands, 2, NULL, 0, &none, &s, "sum");
  computation_set_root(add, sum);
  return adders[t] = add;
}

static bool is_batch_norm(const Instruction *inst) {
  Opcode op = inst->opcode;
  return op == OP_BATCH_NORM_INFERENCE || op == OP_BATCH_NORM_TRAINING || op == OP_BATCH_NORM_GRAD;
}

/* Expands inst; false (and no change) for shapes the formulas do not cover. */
static bool batch_norm_expand(Module *m, Instruction *inst, Computation **adders) {
  const Shape *x = &inst->operands[0]->shape;
  int64_t f = inst->attrs.feature_index;
  if (shape_is_tuple(x) || !type_is_float(x->type) || f < 0 || f >= x->rank)
    return false;
  Expansion e = {.c = inst->parent, .inst = inst, .full = x, .type = x->type, .feature = (int)f};
  e.vector = shape_array(x->type, 1, &x->dims[f]);
  e.per_feature = x->dims[f] ? shape_element_count(x) / x->dims[f] : 0;
  e.adder = adder_for(m, x->type, adders);
  Instruction *in[5] = {0};
  for (int k = 0; k < inst->operand_count && k < 5; k++) in[k] = inst->operands[k];
  Instruction *made = inst->opcode == OP_BATCH_NORM_INFERENCE  ? expand_inference(&e, in)
                      : inst->opcode == OP_BATCH_NORM_TRAINING ? expand_training(&e, in)
                                                               : expand_grad(&e, in);
  instruction_replace_all_uses(inst, made);
  return true;
}

bool expand_batch_norm(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx;
  Computation *adders[TYPE_COUNT] = {0};
  bool changed = false;
  /* A list of its own: adding a reducer reorders m->computations. */
  int count = m->computation_count;
  Computation **list = mem_calloc((size_t)count + 1, sizeof *list);
  for (int k = 0; k < count; k++) list[k] = m->computations[k];
  for (int k = 0; k < count; k++) {
    Computation *c = list[k];
    bool here = false;
    for (int i = 0; i < c->instruction_count; i++) {
      Instruction *inst = c->instructions[i];
      if (is_batch_norm(inst) && inst->user_count == 0 && inst != c->root) continue;
      if (is_batch_norm(inst) && batch_norm_expand(m, inst, adders)) here = true;
    }
    if (here && !computation_sort(c, st)) {
      mem_free(list);
      *failed = true;
      return false;
    }
    changed |= here;
  }
  mem_free(list);
  if (changed) module_sort_computations(m);
  return changed;
}
