/* The GPU backend's random numbers (gpu_backend.c routes
 * OP_RNG_BIT_GENERATOR here; its supports hook refuses OP_RNG and
 * OP_RNG_GET_AND_UPDATE_STATE, which draw from a module-wide generator).
 *
 * rng-bit-generator is two launches (ptx_rng.c): the bits, one element
 * per thread, then the advanced state on one thread, after every thread
 * has read the old one (the plan may put both in one buffer). The bits
 * are the evaluator's (src/ir/rng_bits.c), bit for bit: both execute
 * the plan rng_bits_plan_make builds.
 *
 * rng (no state operand) and rng-get-and-update-state are refused: their
 * values come from a module-wide generator that the evaluator derives from
 * the module's instruction order, which the GPU backend does not model. */
#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_rng.h"

/* The plan is rng_bits.c's (src/ir/rng_bits.h); the GPU adds only that
 * the bits be a row-major array of whole bytes, as its kernels store them. */
const char *gpu_rng_refusal(const Program *program, const Instruction *inst) {
  const Shape *state = &inst->operands[0]->shape;
  const Shape *s = &inst->shape;
  if (s->type != TYPE_TUPLE || s->tuple_count != 2 || state->type != TYPE_U64 || state->rank != 1)
    return "an rng-bit-generator without a u64 state and a (state, bits) result";
  const Shape *bits = &s->tuple_shapes[1];
  if (!rng_state_length_fits(inst->attrs.rng_algorithm, state->dims[0]))
    return "an rng-bit-generator state of the wrong length for its algorithm";
  if (bits->type == TYPE_TUPLE || bits->type == TYPE_PRED || !shape_is_row_major(bits) ||
      type_bit_width(bits->type) < 8 || type_bit_width(bits->type) % 8)
    return "rng-bit-generator bits that are not a row-major array of 8-, 16-, 32- or 64-bit elements";
  /* the kernel reads the state while it writes the bits */
  if (program_shares_storage(program, inst, 1, inst->operands[0], 0))
    return "rng-bit-generator bits sharing storage with the state";
  return NULL;
}

static bool compile_rng_bit_generator(GpuCompile *c, const Instruction *inst) {
  RngBitsPlan p = {0};
  int64_t state_length = inst->operands[0]->shape.dims[0];  /* gpu_rng_refusal found the shapes fit */
  rng_bits_plan_make(inst->attrs.rng_algorithm, &inst->shape.tuple_shapes[1], (int)state_length, &p);
  int state = gpu_binding_of(c, inst->operands[0], 0), next = gpu_binding_of(c, inst, 0);
  int bits = gpu_binding_of(c, inst, 1);  /* not over the state: gpu_rng_refusal */
  char entry[160];
  if (p.count > 0) {
    int buffers[2] = {state, bits};
    gpu_entry_name(c, inst, "bits", entry, sizeof entry);
    ptx_rng_emit_bits(c->ptx, entry, &p);
    int64_t blocks = (p.count + 255) / 256;
    if (!gpu_add_launch(c, inst, entry, (unsigned)(blocks < 65535 ? blocks : 65535), 256, buffers, 2, NULL, 0))
      return false;
  }
  int buffers[2] = {state, next};
  gpu_entry_name(c, inst, "state", entry, sizeof entry);
  ptx_rng_emit_state(c->ptx, entry, &p);
  return gpu_add_launch(c, inst, entry, 1, 1, buffers, 2, NULL, 0) != NULL;
}

bool gpu_compile_rng(GpuCompile *c, const Instruction *inst) {
  return compile_rng_bit_generator(c, inst);
}
