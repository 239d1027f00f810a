/* Shape rules for the ops that order, move or wrap work rather than compute
 * values: tokens (after-all, add-dependency), the asynchronous pairs
 * (async-start/update/done and the collective and copy start/done pairs),
 * host transfers (send, recv, infeed, outfeed), ragged-all-to-all, and the
 * ops on dimension sizes. The shared checks and the dispatch table are in
 * shape_inference.c.
 *
 * An asynchronous start returns a tuple whose first elements are fixed by
 * the op (XLA's shape inference) and whose remaining elements are a context
 * the backend chooses (u32[] or s32[] scalars): that context is taken from
 * the declared shape, and the rest is checked. */
#include <string.h>

#include "shape_inference.h"

static Shape token_shape(void) { return shape_scalar(TYPE_TOKEN); }

static bool expect_token(const Infer *in, int i) {
  const Shape *s = infer_operand_shape(in, i);
  char buf[128];
  if (s->type != TYPE_TOKEN)
    return infer_fail(in, "operand %d must be a token, got %s", i, infer_shape_text(s, buf));
  return true;
}

static bool expect_tuple_operand(const Infer *in, int i, int min_count) {
  const Shape *s = infer_operand_shape(in, i);
  char buf[128];
  if (!shape_is_tuple(s) || s->tuple_count < min_count)
    return infer_fail(in, "operand %d must be a tuple of at least %d elements, got %s", i, min_count,
                      infer_shape_text(s, buf));
  return true;
}

/* after-all(operands...) makes a token ordered after every operand (none:
 * a fresh token). XLA's
 * verifier checks only the result, so an operand may be any value (an
 * ordering edge from a computed value, as XLA's parser tests write it). */
bool infer_after_all(Infer *in) {
  Shape t = token_shape();
  return infer_set_same_as(in, &t);
}

/* add-dependency(value, token): the value, ordered after the token. */
bool infer_add_dependency(Infer *in) {
  if (!expect_token(in, 1)) return false;
  return infer_set_same_as(in, infer_operand_shape(in, 0));
}

/* The declared shape of a start: a tuple of at least `fixed` elements, the
 * first ones equal to want[]; the rest (the context) are kept as declared. */
static bool set_start_tuple(Infer *in, const Shape *want, int fixed) {
  const Shape *decl = &in->inst->shape;
  char ba[128], bb[128];
  if (!shape_is_tuple(decl) || decl->tuple_count < fixed)
    return infer_fail(in, "result must be a tuple of at least %d elements", fixed);
  for (int i = 0; i < fixed; i++)
    if (!shape_equal(&decl->tuple_shapes[i], &want[i]))
      return infer_fail(in, "result element %d is %s, expected %s", i,
                        infer_shape_text(&decl->tuple_shapes[i], ba), infer_shape_text(&want[i], bb));
  return infer_set_tuple(in, decl->tuple_count, decl->tuple_shapes);
}

/* The operands as one shape: the shape itself for one, a tuple for more. */
static Shape operands_shape(Infer *in) {
  int n = in->inst->operand_count;
  if (n == 1) return *infer_operand_shape(in, 0);
  Shape s;
  memset(&s, 0, sizeof s);
  s.type = TYPE_TUPLE;
  s.tuple_count = n;
  s.tuple_shapes = arena_alloc(in->arena, sizeof(Shape) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++) s.tuple_shapes[i] = *infer_operand_shape(in, i);
  return s;
}

/* async-start(args...), calls=c: ((args...), c's result, context...). */
bool infer_async_start(Infer *in) {
  if (!infer_expect_called_count(in, 1)) return false;
  const Computation *c = in->inst->called[0];
  if (!infer_check_call_signature(in, c, 0, in->inst->operand_count)) return false;
  int n = in->inst->operand_count;
  Shape want[2];
  memset(&want[0], 0, sizeof want[0]);
  want[0].type = TYPE_TUPLE;
  want[0].tuple_count = n;
  want[0].tuple_shapes = arena_alloc(in->arena, sizeof(Shape) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++) want[0].tuple_shapes[i] = *infer_operand_shape(in, i);
  want[1] = c->root->shape;
  /* XLA's design notes print a lone operand unwrapped: (f32[64], f32[32], s32[]). */
  const Shape *decl = &in->inst->shape;
  if (n == 1 && shape_is_tuple(decl) && decl->tuple_count >= 2 && !shape_is_tuple(&decl->tuple_shapes[0]))
    want[0] = *infer_operand_shape(in, 0);
  return set_start_tuple(in, want, 2);
}

/* async-update passes the start's tuple on; calls= is optional there. */
bool infer_async_update(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !expect_tuple_operand(in, 0, 2)) return false;
  return infer_set_same_as(in, infer_operand_shape(in, 0));
}

/* async-done, all-gather-done and collective-permute-done: element 1 of
 * the start's tuple, the wrapped op's result. */
bool infer_async_done(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !expect_tuple_operand(in, 0, 2)) return false;
  return infer_set_same_as(in, &infer_operand_shape(in, 0)->tuple_shapes[1]);
}

/* all-gather-start: (operands, results); on one replica they are equal. */
bool infer_all_gather_start(Infer *in) {
  if (!infer_collective(in)) return false;
  Shape parts[2] = {operands_shape(in), *in->out};
  return infer_set_tuple(in, 2, parts);
}

/* collective-permute has three forms (XLA's parser tests write each):
 *   collective-permute(x)                         -> x
 *   collective-permute(x0, x1, ...)   combined:   -> (x0, x1, ...)
 *   collective-permute(input, output, input_starts, output_starts),
 *       slice_sizes={...}             in place:   -> output
 * where the in-place form's start operands are tuples (of index scalars, or
 * of such tuples when input and output are tuples): the form is told by
 * them. collective-permute-start returns (operands, results, context...):
 * ((x0, x1..), (x0, x1..)) for the combined form, (input, output, ...) for
 * the in-place one. Each sends data between devices; running any but the
 * one-operand form on one device is refused (eval_check_supported). */
bool collective_permute_is_in_place(const Instruction *inst) {
  return inst->operand_count == 4 && shape_is_tuple(&inst->operands[2]->shape) &&
         shape_is_tuple(&inst->operands[3]->shape);
}

static bool permute_result(Infer *in, Shape *result) {
  int n = in->inst->operand_count;
  if (n < 1) return infer_fail(in, "needs at least one operand");
  if (collective_permute_is_in_place(in->inst)) {
    const Shape *input = infer_operand_shape(in, 0), *output = infer_operand_shape(in, 1);
    if (shape_is_tuple(input) != shape_is_tuple(output) ||
        (!shape_is_tuple(input) && input->type != output->type))
      return infer_fail(in, "the in-place form's input and output must both be arrays of one type, or tuples");
    *result = *output;
    return true;
  }
  for (int i = 0; i < n; i++)
    if (!infer_expect_array(in, i)) return false;
  *result = operands_shape(in);
  return true;
}

bool infer_collective_permute(Infer *in) {
  Shape result;
  if (!permute_result(in, &result)) return false;
  return infer_set_same_as(in, &result);
}

bool infer_collective_permute_start(Infer *in) {
  Shape want[2];
  if (!permute_result(in, &want[1])) return false;
  want[0] = collective_permute_is_in_place(in->inst) ? *infer_operand_shape(in, 0) : want[1];
  return set_start_tuple(in, want, 2);
}

/* copy-start: (operand, result, context...), the result shaped like the
 * operand. */
bool infer_pair_start(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !infer_expect_array(in, 0)) return false;
  Shape want[2] = {*infer_operand_shape(in, 0), *infer_operand_shape(in, 0)};
  return set_start_tuple(in, want, 2);
}

/* copy-done: element 0 of copy-start's tuple (the destination). */
bool infer_copy_done(Infer *in) {
  if (!infer_expect_operand_count(in, 1) || !expect_tuple_operand(in, 0, 2)) return false;
  return infer_set_same_as(in, &infer_operand_shape(in, 0)->tuple_shapes[0]);
}

/* ragged-all-to-all(input, output, input_offsets, send_sizes,
 * output_offsets, recv_sizes): the result is the output buffer, updated.
 * The four index operands are integer arrays of one shape. */
bool infer_ragged_all_to_all(Infer *in) {
  for (int i = 0; i < 6; i++)
    if (!infer_expect_array(in, i)) return false;
  const Shape *x = infer_operand_shape(in, 0), *y = infer_operand_shape(in, 1);
  if (!infer_expect_same_type(in, 0, 1)) return false;
  if (x->rank < 1 || y->rank != x->rank)
    return infer_fail(in, "input and output must have the same rank, at least 1");
  for (int d = 1; d < x->rank; d++)
    if (x->dims[d] != y->dims[d]) return infer_fail(in, "input and output differ in dimension %d", d);
  for (int i = 2; i < 6; i++) {
    if (!type_is_integer(infer_operand_shape(in, i)->type))
      return infer_fail(in, "operand %d (offsets or sizes) must be integers", i);
    if (infer_operand_shape(in, i)->rank != 1 || !infer_expect_same_dims(in, 2, i) ||
        !infer_expect_same_type(in, 2, i))
      return infer_fail(in, "offsets and sizes must be rank-1 arrays of one shape and type");
  }
  return infer_set_same_as(in, y);
}

/* send(data, token) -> (data, u32[], token); send-done(send) -> token;
 * recv(token) -> (data, u32[], token) with data declared;
 * recv-done(recv) -> (data, token); infeed(token) -> (data, token) with
 * data declared; outfeed(data, token) -> token. They are checked for form
 * only: running them is refused (the evaluator says why). */
bool infer_host_transfer(Infer *in) {
  Shape parts[3];
  switch (in->inst->opcode) {
  case OP_SEND:
    if (!expect_token(in, 1)) return false;
    parts[0] = *infer_operand_shape(in, 0);
    parts[1] = shape_scalar(TYPE_U32);
    parts[2] = token_shape();
    return infer_set_tuple(in, 3, parts);
  case OP_OUTFEED:
    if (!expect_token(in, 1)) return false;
    parts[0] = token_shape();
    return infer_set_same_as(in, &parts[0]);
  case OP_SEND_DONE:
    if (!expect_tuple_operand(in, 0, 3)) return false;
    parts[0] = token_shape();
    return infer_set_same_as(in, &parts[0]);
  case OP_RECV_DONE:
    if (!expect_tuple_operand(in, 0, 3)) return false;
    parts[0] = infer_operand_shape(in, 0)->tuple_shapes[0];
    parts[1] = token_shape();
    return infer_set_tuple(in, 2, parts);
  default: { /* recv, infeed: the data shape is the declared one */
    const Shape *decl = &in->inst->shape;
    int want = in->inst->opcode == OP_RECV ? 3 : 2;
    if (!expect_token(in, 0)) return false;
    if (!shape_is_tuple(decl) || decl->tuple_count != want)
      return infer_fail(in, "result must be a tuple of %d elements", want);
    parts[0] = decl->tuple_shapes[0];
    parts[1] = want == 3 ? shape_scalar(TYPE_U32) : token_shape();
    parts[2] = token_shape();
    return infer_set_tuple(in, want, parts);
  }
  }
}

static bool expect_one_dimension(const Infer *in, int rank) {
  const IntList *d = &in->inst->attrs.dimensions;
  if (d->count != 1) return infer_fail(in, "dimensions must hold one dimension");
  return infer_check_dim_list(in, "dimensions", d, rank, false);
}

/* get-dimension-size(x), dimensions={d}: s32[], the size of dimension d
 * (shapes in axle are static, so it is a constant). */
bool infer_get_dimension_size(Infer *in) {
  if (!infer_expect_array(in, 0) || !expect_one_dimension(in, infer_operand_shape(in, 0)->rank)) return false;
  return infer_set_array(in, TYPE_S32, 0, NULL);
}

/* set-dimension-size(x, size), dimensions={d}: x with dimension d's dynamic
 * size set; on static shapes the result keeps x's shape. */
bool infer_set_dimension_size(Infer *in) {
  if (!infer_expect_array(in, 0) || !infer_expect_scalar(in, 1, "the size")) return false;
  if (infer_operand_shape(in, 1)->type != TYPE_S32) return infer_fail(in, "the size must be s32[]");
  if (!expect_one_dimension(in, infer_operand_shape(in, 0)->rank)) return false;
  return infer_set_same_as(in, infer_operand_shape(in, 0));
}

/* dynamic-reshape(x, sizes...): one s32[] size per result dimension; the
 * dims are the declared (static) ones, which the sizes must match when run. */
bool infer_dynamic_reshape(Infer *in) {
  const Shape *decl = &in->inst->shape;
  if (in->inst->operand_count < 1 || !infer_expect_array(in, 0)) return infer_fail(in, "needs an operand");
  if (shape_is_tuple(decl) || decl->type == TYPE_TOKEN) return infer_fail(in, "result must be an array");
  if (in->inst->operand_count != 1 + decl->rank)
    return infer_fail(in, "needs one size per result dimension (%d), got %d", decl->rank,
                      in->inst->operand_count - 1);
  for (int i = 1; i < in->inst->operand_count; i++)
    if (!infer_expect_scalar(in, i, "a size") || infer_operand_shape(in, i)->type != TYPE_S32)
      return infer_fail(in, "size operand %d must be s32[]", i);
  const Shape *x = infer_operand_shape(in, 0);
  if (shape_element_count(x) != shape_element_count(decl))
    return infer_fail(in, "cannot reshape %lld elements into %lld", (long long)shape_element_count(x),
                      (long long)shape_element_count(decl));
  return infer_set_array(in, x->type, decl->rank, decl->dims);
}
