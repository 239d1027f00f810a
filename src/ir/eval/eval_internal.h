/* What the evaluator's files share: one function per opcode (or family of
 * opcodes), and small helpers for walking multi-dimensional indices.
 *
 * Every op function has the same form: operands are borrowed, the result is
 * a new literal owned by the caller, NULL with st filled in on error. */
#ifndef AXLE_IR_EVAL_INTERNAL_H
#define AXLE_IR_EVAL_INTERNAL_H

#include <string.h>

#include "ir.h"

typedef Literal *EvalOpFn(const Instruction *inst, Literal *const *operands, Status *st);

/* eval_control.c: tuples, calls, control flow, fusion, map, ... (parameters and
 * constants are the driver's, in eval.c) */
EvalOpFn eval_tuple, eval_get_tuple_element, eval_call, eval_while, eval_conditional,
    eval_fusion, eval_map, eval_optimization_barrier;

/* eval_collective.c: replica-id and partition-id (the collectives' rules stay in
 * eval_reduce.c and eval_async.c and hand over to it on several devices) */
EvalOpFn eval_replica_id;

/* eval_custom_call.c: runs JAX's LAPACK calls (src/ir/lapack.h), refuses other
 * targets; _supported says which without running (false with st filled). */
EvalOpFn eval_custom_call;
bool eval_custom_call_supported(const Instruction *inst, Status *st);
/* Whether rng-bit-generator's state is one axle's generators take (eval_rng.c). */
bool eval_rng_bit_generator_supported(const Instruction *inst, Status *st);

/* eval_elementwise.c */
EvalOpFn eval_unary, eval_binary, eval_compare, eval_select, eval_clamp, eval_convert,
    eval_bitcast_convert, eval_reduce_precision, eval_stochastic_convert;

/* eval_movement.c: ops that move elements without arithmetic */
EvalOpFn eval_broadcast, eval_reshape, eval_transpose, eval_slice, eval_dynamic_slice,
    eval_dynamic_update_slice, eval_concatenate, eval_pad, eval_reverse, eval_iota, eval_copy,
    eval_bitcast;

/* eval_reduce.c: reductions and the single-replica collectives */
EvalOpFn eval_reduce, eval_reduce_window, eval_select_and_scatter, eval_all_reduce,
    eval_all_gather, eval_reduce_scatter, eval_collective_permute;

/* eval_gather.c */
EvalOpFn eval_gather, eval_scatter;

/* eval_sort.c */
EvalOpFn eval_sort;

/* eval_reduce.c: calling a reducer or comparator on scalars, one element at a
 * time. The argument literals are made once and reused for every call;
 * eval_scalar_call_run checks that the computation returned result_count scalars
 * (a tuple of them when result_count > 1) of the expected types. */
typedef struct ScalarCall {
  const Instruction *inst;         /* the op that calls it, for messages */
  const Computation *computation;
  int arg_count;
  Literal **args;                  /* rank-0 literals, filled by the caller */
  int result_count;
  ElementType *result_types;
} ScalarCall;

bool eval_scalar_call_init(ScalarCall *call, const Instruction *inst, const Computation *computation,
                      const ElementType *arg_types, int arg_count,
                      const ElementType *result_types, int result_count, Status *st);
Literal *eval_scalar_call_run(ScalarCall *call, Status *st);  /* result owned by the caller */
const Literal *eval_scalar_result(const Literal *result, int k); /* k-th scalar of a run's result */
void eval_scalar_call_free(ScalarCall *call);

/* A new literal for result k of count (the instruction's shape itself, or its
 * k-th tuple element when count > 1), after checking that the declared shape
 * has the type and dims the op's meaning gives (computed). */
Literal *eval_create_result(const Instruction *inst, int k, int count, const Shape *computed,
                            Status *st);
/* The op's value from results[0..count-1] (a tuple when count > 1) if ok,
 * else frees them; frees the array itself either way. */
Literal *eval_finish_results(Literal **results, int count, bool ok);

/* eval_complex.c: complex(re, im), real, imag, and the elementwise ops on
 * complex operands, which eval_unary, eval_binary, eval_compare and
 * eval_convert hand over (operands already checked against the result). */
EvalOpFn eval_complex, eval_real, eval_imag;
Literal *eval_complex_unary(const Instruction *inst, const Literal *x, Status *st);
Literal *eval_complex_binary(const Instruction *inst, const Literal *lhs, const Literal *rhs,
                             Status *st);
Literal *eval_complex_compare(const Instruction *inst, const Literal *lhs, const Literal *rhs,
                              Status *st);
void eval_complex_convert_element(Literal *out, int64_t index, const Literal *in);

/* eval_fft.c */
EvalOpFn eval_fft;

/* eval_linalg.c */
EvalOpFn eval_dot, eval_convolution, eval_cholesky, eval_triangular_solve;

/* eval_batchnorm.c */
EvalOpFn eval_batch_norm_inference, eval_batch_norm_training, eval_batch_norm_grad;

/* eval_rng.c */
EvalOpFn eval_rng_bit_generator, eval_rng, eval_rng_get_and_update_state;

/* eval_async.c: tokens, asynchronous pairs, host transfers, dimension sizes */
EvalOpFn eval_after_all, eval_forward, eval_async_start, eval_async_done, eval_copy_start,
    eval_copy_done, eval_all_gather_start, eval_collective_permute_start, eval_host_transfer,
    eval_shuffle, eval_ragged_all_to_all, eval_get_dimension_size, eval_dynamic_reshape;

/* eval_dot_variants.c */
EvalOpFn eval_scaled_dot, eval_ragged_dot;

/* eval_sort.c: topk; eval_control.c: scan */
EvalOpFn eval_topk, eval_scan;

/* ---- shared helpers (eval.c) ---- */

/* Scratch memory for one op: a message and exit status 1 when memory runs
 * out, as literal_create does, since the result is allocated the same way. */
void *eval_scratch_calloc(int64_t count, size_t size);
/* An elementwise op's operand must have the result's dimensions. */
bool eval_check_same_dims(const Instruction *inst, const Literal *operand, Status *st);

/* ---- index helpers ---- */

/* Advances a row-major multi-index over dims; returns false after the last. */
static inline bool index_next(int64_t *index, const int64_t *dims, int rank) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

static inline int64_t index_linear(const int64_t *index, const int64_t *strides, int rank) {
  int64_t at = 0;
  for (int d = 0; d < rank; d++) at += index[d] * strides[d];
  return at;
}

/* Copies one element (same element type) between arrays. */
static inline void literal_copy_element(Literal *dst, int64_t di, const Literal *src, int64_t si) {
  int size = type_byte_size(dst->shape.type);
  memcpy((char *)dst->data + di * size, (const char *)src->data + si * size, (size_t)size);
}

#endif
