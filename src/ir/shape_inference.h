/* Internal to shape inference: the context every rule takes, the checks the
 * rules share (shape_inference_checks.c), and the rules for ops with structured
 * attributes that live in shape_inference_ops.c. Not installed. */
#ifndef AXLE_IR_SHAPE_INFERENCE_H
#define AXLE_IR_SHAPE_INFERENCE_H

#include "ir.h"

/* No dimension, padding, stride or dilation may reach 2^40 (the verifier's
 * bound on element counts too), so that sums and products of them never
 * overflow 64 bits. */
#define AXLE_MAX_EXTENT ((int64_t)1 << 40)

/* Everything one inference needs, so helpers take one argument. */
typedef struct Infer {
  const Instruction *inst;
  Shape *out;
  Arena *arena;
  Status *st;
} Infer;

/* Fills st with "instruction 'x' (opcode): MESSAGE (in computation 'c')" and
 * returns false. */
bool infer_fail(const Infer *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A shape as text for messages; buf must hold 128 bytes. */
const char *infer_shape_text(const Shape *s, char *buf);
/* After a failed check, appends " (StableHLO RULE)" to its message, naming
 * the spec rule the shared check enforced here; returns false. */
bool infer_note_rule(const Infer *in, const char *rule);
const Shape *infer_operand_shape(const Infer *in, int i);

/* Each check returns true, or fails with a message naming the instruction. */
bool infer_expect_operand_count(const Infer *in, int n);
bool infer_expect_called_count(const Infer *in, int n);
bool infer_expect_array(const Infer *in, int i);
bool infer_expect_scalar(const Infer *in, int i, const char *what);
bool infer_expect_same_dims(const Infer *in, int a, int b);
bool infer_expect_same_type(const Infer *in, int a, int b);
/* Every entry in [0, bound), no repeats, increasing when sorted. */
bool infer_check_dim_list(const Infer *in, const char *name, const IntList *list, int64_t bound, bool sorted);
bool infer_list_contains(const IntList *list, int64_t v);
/* |value| < AXLE_MAX_EXTENT, or fails naming what. */
bool infer_expect_extent(const Infer *in, const char *what, int64_t value);
/* (bound - 1) * dilation + 1 for bound > 0, else 0; fails if it reaches AXLE_MAX_EXTENT. */
bool infer_dilated_bound(const Infer *in, const char *what, int64_t bound, int64_t dilation, int64_t *out);

/* Set the result (always returning true, or false past AXLE_MAX_RANK). */
bool infer_set_array(Infer *in, ElementType t, int rank, const int64_t *dims);
bool infer_set_same_as(Infer *in, const Shape *s);
bool infer_set_tuple(Infer *in, int count, const Shape *elements);

/* Called computations. */
const Shape *infer_param_shape(const Computation *c, int i); /* NULL if missing */
bool infer_is_scalar_of(const Shape *s, ElementType t);
bool infer_check_call_signature(const Infer *in, const Computation *c, int first, int count);
bool infer_check_scalar_results(const Infer *in, const Computation *c, const ElementType *types, int n);
bool infer_check_reducer(const Infer *in, const Computation *c, const ElementType *acc,
                         const ElementType *elem, int n);

/* Rules in shape_inference_ops.c. */
bool infer_reduce(Infer *in);
bool infer_reduce_window(Infer *in);
bool infer_select_and_scatter(Infer *in);
bool infer_gather(Infer *in);
bool infer_scatter(Infer *in);
bool infer_dot(Infer *in);
bool infer_convolution(Infer *in);
bool infer_cholesky(Infer *in);
bool infer_triangular_solve(Infer *in);
bool infer_batch_norm(Infer *in);
bool infer_rng_bit_generator(Infer *in);
bool infer_sort(Infer *in);
bool infer_collective(Infer *in);
bool infer_complex(Infer *in);
bool infer_real_imag(Infer *in);
bool infer_fft(Infer *in);
/* Also in shape_inference.c: the result is operand 0's shape / the declared one. */
bool infer_pass_through(Infer *in);
bool infer_declared(Infer *in);

/* Rules in shape_inference_async.c: tokens, asynchronous pairs, host
 * transfers, the newer collectives and the dimension-size ops. */
bool infer_after_all(Infer *in);
bool infer_add_dependency(Infer *in);
bool infer_async_start(Infer *in);
bool infer_async_update(Infer *in);
bool infer_async_done(Infer *in);
bool infer_all_gather_start(Infer *in);
bool infer_pair_start(Infer *in);
bool infer_collective_permute(Infer *in);
bool infer_collective_permute_start(Infer *in);
bool infer_copy_done(Infer *in);
bool infer_ragged_all_to_all(Infer *in);
bool infer_host_transfer(Infer *in);
bool infer_get_dimension_size(Infer *in);
bool infer_set_dimension_size(Infer *in);
bool infer_dynamic_reshape(Infer *in);

/* Rules in shape_inference_extra.c: topk, scan, rng, and dot's variants. */
bool infer_topk(Infer *in);
bool infer_scan(Infer *in);
bool infer_rng(Infer *in);
bool infer_rng_get_and_update_state(Infer *in);
bool infer_scaled_dot(Infer *in);
bool infer_ragged_dot(Infer *in);

#endif
