/* The description of one rng-bit-generator, built once from its algorithm
 * and shapes (src/ir/rng_bits.c) and executed by every implementation: the
 * evaluator and the CPU backend call rng_bits_generate, which runs it on
 * the host; the GPU backend's kernels (src/emit_ptx/ptx_rng.c) read the
 * same fields. How blocks become elements is said at the top of
 * rng_bits.c. */
#ifndef AXLE_IR_RNG_BITS_H
#define AXLE_IR_RNG_BITS_H

#include "ir.h"

typedef struct RngBitsPlan {
  RngAlgorithm algorithm;      /* RNG_THREE_FRY or RNG_PHILOX */
  int state_count;             /* u64 words of state: 2, or 3 (Philox) */
  int width;                   /* bits per output element: 8, 16, 32, 64 */
  int64_t count;               /* output elements */
  int rank, split;             /* Threefry 32-bit: the output's dims, split in two along `split` */
  int64_t dims[AXLE_MAX_RANK];
  int64_t blocks;              /* cipher blocks used: how far the counter advances */
} RngBitsPlan;

/* rng_default is Philox, as XLA's CPU and GPU compilers pick it. */
RngAlgorithm rng_algorithm_resolve(RngAlgorithm algorithm);
/* The state lengths the generators take: u64[2] for Threefry, u64[2] or
 * u64[3] for Philox (XLA's text may name others; they are refused). */
bool rng_state_length_fits(RngAlgorithm algorithm, int64_t length);
/* The plan of bits of shape `bits` (an array) from a state of
 * state_count words; algorithm as resolved. */
void rng_bits_plan_make(RngAlgorithm algorithm, const Shape *bits, int state_count, RngBitsPlan *p);

#endif
