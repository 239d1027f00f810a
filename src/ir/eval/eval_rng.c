/* The evaluator's rng-bit-generator, rng and rng-get-and-update-state.
 * rng-bit-generator's bits (Threefry and Philox, as XLA computes them) live
 * in src/ir/rng_bits.c, shared with the CPU backend's runtime routine. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"
#include "ir/rng_bits.h"

/* ------------------------------------------------------------ the op */

/* The states axle's Threefry and Philox take (src/ir/rng_bits.c): u64[2]
 * for three_fry, u64[2] or u64[3] for philox. XLA's text may name longer
 * ones; eval_check_supported refuses those when a module is compiled. */
static bool rng_state_fits(const Instruction *inst, const Shape *state, RngAlgorithm algorithm, StatusCode code,
                           Status *st) {
  if (state->type != TYPE_U64 || state->rank != 1)
    return status_error(st, code, "%s: the state must be a u64 vector", inst->name);
  int64_t n = state->dims[0];
  if (!rng_state_length_fits(algorithm, n))
    return status_error(st, code, "%s: the state of %s must be u64[%s], not u64[%lld]", inst->name,
                        algorithm == RNG_THREE_FRY ? "rng_three_fry" : "rng_philox",
                        algorithm == RNG_THREE_FRY ? "2" : "2] or u64[3", (long long)n);
  return true;
}

bool eval_rng_bit_generator_supported(const Instruction *inst, Status *st) {
  RngAlgorithm algorithm = rng_algorithm_resolve(inst->attrs.rng_algorithm);
  return inst->operand_count == 1 && inst->operands && inst->operands[0]
             ? rng_state_fits(inst, &inst->operands[0]->shape, algorithm, STATUS_UNSUPPORTED, st)
             : status_error(st, STATUS_VERIFY_ERROR, "%s: rng-bit-generator takes one state operand", inst->name);
}

static bool check_rng(const Instruction *inst, const Literal *state, RngAlgorithm *algorithm,
                      Status *st) {
  *algorithm = rng_algorithm_resolve(inst->attrs.rng_algorithm);
  if (!state) return status_error(st, STATUS_RUNTIME_ERROR, "%s: the state must be a u64 vector", inst->name);
  if (!rng_state_fits(inst, &state->shape, *algorithm, STATUS_RUNTIME_ERROR, st)) return false;
  const Shape *s = &inst->shape;
  if (s->type != TYPE_TUPLE || s->tuple_count != 2 || !s->tuple_shapes ||
      !shape_equal(&s->tuple_shapes[0], &state->shape) ||
      s->tuple_shapes[1].type == TYPE_TUPLE || s->tuple_shapes[1].type == TYPE_PRED)
    return status_error(st, STATUS_RUNTIME_ERROR,
                        "%s: result must be (state shape, array of non-pred bits)", inst->name);
  return true;
}


/* rng-bit-generator(state) -> (new_state, bits); the bits are
 * rng_bits_generate's (src/ir/rng_bits.c), which the CPU backend shares. */
Literal *eval_rng_bit_generator(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *state = operands[0];
  RngAlgorithm algorithm;
  if (!check_rng(inst, state, &algorithm, st)) return NULL;
  Literal *out = literal_create(&inst->shape);
  Literal *new_state = out->elements[0], *data = out->elements[1];
  int64_t count = shape_element_count(&data->shape);
  uint64_t *bits = eval_scratch_calloc(count, sizeof *bits);
  rng_bits_generate(algorithm, &data->shape, state->data, (int)state->shape.dims[0], new_state->data, bits);
  for (int64_t i = 0; i < count; i++) rng_bits_store(data->data, data->shape.type, i, bits[i]);
  mem_free(bits);
  return out;
}

/* ------------------------------------------------------------ rng */

/* rng has no state operand: XLA draws from a generator seeded once per
 * module. The evaluator keys Philox with a fixed seed mixed with the
 * instruction's name, so a run is reproducible and two rng instructions
 * draw different numbers.
 *
 * rng-get-and-update-state returns the module's generator state and then
 * advances it by delta. The evaluator keeps no state between instructions,
 * so the state an instruction sees is the seed plus the deltas of the
 * rng-get-and-update-state instructions before it in the module's order:
 * what XLA gives when each runs once, as in straight-line code. (In a loop
 * body every iteration sees the same state; XLA's would advance.) The state
 * is u64[2] = {low word, high word}. */
enum { RNG_SEED = 0x2545F4914F6CDD1Dull & 0x7fffffff };

/* distribution=rng_uniform: [a, b) (a when b <= a); rng_normal: mean a,
 * standard deviation b: rng_values_fill (src/ir/rng_bits.c), which the CPU
 * backend's routine calls too. */
Literal *eval_rng(const Instruction *inst, Literal *const *operands, Status *st) {
  ElementType t = inst->shape.type;
  if (t == TYPE_TUPLE || operands[0]->shape.type != t || operands[1]->shape.type != t) {
    status_error(st, STATUS_VERIFY_ERROR, "rng %s: a, b and the result must share a type", inst->name);
    return NULL;
  }
  Literal *out = literal_create(&inst->shape);
  rng_values_fill(inst, operands[0], operands[1], out);
  return out;
}

Literal *eval_rng_get_and_update_state(const Instruction *inst, Literal *const *operands,
                                       Status *st) {
  (void)operands;
  if (inst->shape.type != TYPE_U64 || shape_element_count(&inst->shape) != 2) {
    status_error(st, STATUS_VERIFY_ERROR, "%s: the result must be u64[2]", inst->name);
    return NULL;
  }
  uint64_t state = RNG_SEED;
  const Computation *at = inst->parent;
  const Module *m = at ? at->module : NULL;
  for (int c = 0; m && c < m->computation_count; c++) {
    const Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count && comp->instructions[i] != inst; i++)
      if (comp->instructions[i]->opcode == OP_RNG_GET_AND_UPDATE_STATE)
        state += (uint64_t)attrs_scalars(&comp->instructions[i]->attrs)->delta;
    if (comp == at) break;
  }
  Literal *out = literal_create(&inst->shape);
  literal_set_u64(out, 0, state);
  return out;
}
