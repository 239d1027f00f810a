/* PTX from the kernel IR: one Kernel (src/ir/kernel/kernel.h) becomes one
 * PTX .entry.
 *
 * Parameters: one .u64 pointer per buffer, the kernel's inputs first, then
 * its outputs, in the kernel's order. Shapes are static, so element counts
 * and extents are written into the code as constants: a launch passes the
 * pointers only. Every kernel loops grid-stride over its work, so any grid
 * is correct; PtxKernelShape says which block size it is written for and
 * the grid that covers the work once.
 *
 * Strategies, chosen from the kernel:
 *   loop           one thread per output element; logical indices recovered
 *                  from the linear index by div/rem over the dims, in the
 *                  first output's physical order so stores are coalesced
 *   loop.v4/.v2    the same with 128-bit ld/st.global.v4 (v2 for 64-bit
 *                  types) when every access is at the output's own index
 *                  with one layout and one element width; a run-time check
 *                  falls back to the scalar loop when a pointer is not
 *                  16-byte aligned, and the last n % 4 elements go scalar
 *   reduce.thread  one thread per output element, looping over the reduced
 *                  space in the interpreter's order (any reducer)
 *   reduce.warp    row reductions (the last reduced dim is every load's
 *   reduce.block   most minor one) whose reducers are one add, multiply,
 *                  maximum, minimum, and or or started from its identity:
 *                  one warp (or 256-thread block) per output element, lane
 *                  partials combined by shfl.sync.down and then across
 *                  warps through shared memory by thread 0, in a fixed order
 *   reduce.column  (ptx_tile.c) reductions along an output dimension, and
 *   transpose.tile loops reading an operand across the output's minor
 *                  dimension: 32-wide tiles through shared memory, so that
 *                  global reads and writes are coalesced
 *
 * Element types: pred, s32, u32, s64, u64, f32, f64; s8/u8/s16/u16 in
 * 32-bit registers (ptx_int.c); f16/bf16 and the f8/f4 minifloats
 * (ptx_minifloat.c) computed in f32 and rounded back after every op (so
 * each op is rounded once, as HLO means); c64/c128 split into real parts
 * (ptx_complex.c). Others (s4/u4/s2/u2), and math functions without a
 * software sequence yet (f64), are refused with STATUS_UNSUPPORTED and
 * nothing is left in the builder. See docs/gpu.md, "Element types". */
#ifndef AXLE_EMIT_PTX_PTX_KERNEL_H
#define AXLE_EMIT_PTX_PTX_KERNEL_H

#include "emit_ptx/ptx_builder.h"
#include "ir/kernel/kernel.h"

typedef struct PtxKernelShape {
  const char *strategy;   /* "loop", "loop.v4", "reduce.warp" ... (static) */
  int block_threads;      /* the .maxntid it is written for */
  int64_t blocks;         /* covers the work once (at least 1) */
} PtxKernelShape;

/* Appends kernel k to b's module as .entry `entry` (see ptx_entry_name). */
bool ptx_kernel_emit(PtxBuilder *b, const Kernel *k, const char *entry, PtxKernelShape *shape, Status *st);

/* A PTX identifier from a kernel name: characters PTX does not allow in
 * names ('.', '-') become '_', and a leading digit gets a '_' before it. */
void ptx_entry_name(const char *kernel_name, char *out, size_t size);

#endif
