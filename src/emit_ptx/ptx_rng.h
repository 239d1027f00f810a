/* The PTX of the GPU backend's rng-bit-generator (ptx_rng.c; gpu_rng.c
 * drives it). The generators are src/ir/rng_bits.c's, whose header says
 * how blocks become elements. */
#ifndef AXLE_EMIT_PTX_PTX_RNG_H
#define AXLE_EMIT_PTX_PTX_RNG_H

#include "emit_ptx/ptx_builder.h"

typedef struct PtxRngPlan {
  RngAlgorithm algorithm;      /* RNG_THREE_FRY or RNG_PHILOX */
  int state_count;             /* u64 words of state: 2, or 3 (Philox) */
  int width;                   /* bits per output element: 8, 16, 32, 64 */
  int64_t count;               /* output elements */
  int rank, split;             /* Threefry 32-bit: the output's dims, split in two along `split` */
  int64_t dims[AXLE_MAX_RANK];
  int64_t blocks;              /* cipher blocks used: how far the counter advances */
} PtxRngPlan;

/* .entry name(state, bits): every output element's bits (row-major). */
void ptx_rng_emit_bits(PtxBuilder *b, const char *name, const PtxRngPlan *p);
/* .entry name(state, next): the state with its counter advanced; one thread. */
void ptx_rng_emit_state(PtxBuilder *b, const char *name, const PtxRngPlan *p);

#endif
