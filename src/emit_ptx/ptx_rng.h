/* The PTX of the GPU backend's rng-bit-generator (ptx_rng.c; gpu_rng.c
 * drives it). The generators are src/ir/rng_bits.c's, whose header says
 * how blocks become elements; the kernels execute its RngBitsPlan. */
#ifndef AXLE_EMIT_PTX_PTX_RNG_H
#define AXLE_EMIT_PTX_PTX_RNG_H

#include "emit_ptx/ptx_builder.h"
#include "ir/rng_bits.h"


/* .entry name(state, bits): every output element's bits (row-major). */
void ptx_rng_emit_bits(PtxBuilder *b, const char *name, const RngBitsPlan *p);
/* .entry name(state, next): the state with its counter advanced; one thread. */
void ptx_rng_emit_state(PtxBuilder *b, const char *name, const RngBitsPlan *p);

#endif
