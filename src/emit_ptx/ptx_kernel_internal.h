/* What the files of the PTX kernel emitter share: the emitter's state and
 * the helpers the skeletons (ptx_kernel.c, ptx_row.c, ptx_tile.c) are built
 * from. Internal to src/emit_ptx; the interface of the PTX emitter is
 * ptx_kernel.h. */
#ifndef AXLE_EMIT_PTX_PTX_KERNEL_INTERNAL_H
#define AXLE_EMIT_PTX_PTX_KERNEL_INTERNAL_H

#include "emit_ptx/ptx_kernel.h"

enum { LOOP_THREADS = 256, WARP = 32, BLOCK_REDUCE_THREADS = 256, GRID_CAP = 65535 };

typedef struct Emit {
  PtxBuilder *b;
  const Kernel *k;
  Status *st;
  PtxReg inputs[64], outputs[64];      /* global addresses of the buffers */
  PtxReg *values;                      /* per op, once its op is emitted */
  PtxReg index[AXLE_MAX_RANK], rindex[AXLE_MAX_RANK];
  PtxReg acc[AXLE_MAX_RANK];
  int pending[AXLE_MAX_RANK];          /* REDUCE: the value acc a takes at the block's end */
  /* loop.v4: the lane being emitted and each vector load's registers. */
  int lane;
  PtxReg (*lanes)[4];                  /* per op: LOAD values, or STORE values gathered */
} Emit;

/* A row reduction's plan: each accumulator's combiner (one op on the old
 * accumulator and an element), started from its identity. */
typedef struct RowPlan {
  Opcode combiner[AXLE_MAX_RANK];
} RowPlan;

/* The grid-stride loop: for (i = first; i < n; i += stride) body, with
 * the loop's head and tail written around what `body` emits. */
typedef struct GridLoop {
  PtxReg i;
  PtxLabel head, done;
} GridLoop;

/* ---- ptx_emit_support.c: below every other file of the emitter ---- */
/* The register type a value of t computes in; false for types the emitter
 * does not handle. */
bool ptx_emit_value_type(ElementType t, PtxType *out);
/* f16, bf16 and the minifloats compute in f32, rounded after each op. */
bool ptx_emit_computes_in_f32(ElementType t);
bool ptx_emit_is_half(ElementType t);
PtxReg ptx_emit_value_new(Emit *E, ElementType t);
const char *ptx_emit_mov_suffix(PtxRegClass c);
void ptx_emit_reg_move(Emit *E, PtxReg dst, PtxReg src);
PtxReg ptx_emit_half_round(Emit *E, ElementType t, PtxReg f);
void ptx_emit_indices_recover(Emit *E, PtxReg linear, int rank, const int64_t *dims, const int64_t *order, PtxReg *index);
int64_t ptx_emit_dims_product(int rank, const int64_t *dims);
void ptx_emit_space_order(const Kernel *k, int64_t *order);
void ptx_emit_reduce_order(const Kernel *k, int64_t *order);
GridLoop ptx_emit_grid_loop_open(Emit *E, PtxReg first, int64_t n);
/* The same, its bound the register *bound when bound is not NULL. */
GridLoop ptx_emit_grid_loop_open_to(Emit *E, PtxReg first, int64_t n, const PtxReg *bound);
void ptx_emit_grid_loop_close(Emit *E, const GridLoop *g, PtxReg stride);
PtxReg ptx_emit_grid_stride(Emit *E, bool per_block);
void ptx_emit_accumulators_declare(Emit *E);
PtxType ptx_emit_shared_type(PtxReg r);
/* The reduced space walked by one thread from `first` in steps of `step`
 * (elements), in the interpreter's order: rindex recovered, REDUCE emitted. */
bool ptx_emit_reduce_loop(Emit *E, PtxReg first, int step);
/* shfl.sync in `mode` ("down": lane l takes lane l + offset's value;
 * "bfly": lane l ^ offset's) of a 32- or 64-bit value, all lanes taking part. */
PtxReg ptx_emit_shuffle(Emit *E, const char *mode, PtxReg v, int offset);

PtxReg ptx_emit_half_widen(Emit *E, ElementType t, PtxReg h);
/* One HLO op through ptx_ops.c's table, operands of operand_type (f16 and
 * bf16 computed in f32 and rounded after). */
bool ptx_emit_table_op(Emit *E, const KernelOp *op, ElementType operand_type, ElementType result_type,
                   const PtxReg *args, PtxReg *out);

/* ---- ptx_block.c: a block's ops, over ptx_int.c and ptx_float_ops.c ---- */
/* The ops of `block` whose phase is `phase` (any phase when < 0). */
bool ptx_emit_block_phase(Emit *E, KernelBlock block, int phase);
/* The address of the element of s that op's args[first..] index, from
 * the buffer's base; a load of one element of type t there. */
PtxReg ptx_emit_buffer_address(Emit *E, PtxReg base, const Shape *s, const KernelOp *op, int first);
PtxReg ptx_emit_element_load(Emit *E, ElementType t, PtxReg address);
bool ptx_emit_accumulator_combine(Emit *E, const RowPlan *plan, int a, PtxReg other);

/* ---- ptx_int.c: s8/u8/s16/u16 in 32-bit registers, integer power, sign,
 * compare type=TOTALORDER ---- */
bool ptx_emit_is_narrow_int(ElementType t);
/* s32 for s8/s16, u32 for u8/u16, t itself otherwise. */
ElementType ptx_int_wide_type(ElementType t);
/* A 32-bit result wrapped to narrow t's register form (re-extended). */
PtxReg ptx_int_narrow(Emit *E, ElementType t, PtxReg r);
PtxReg ptx_int_load(Emit *E, ElementType t, PtxReg address);
void ptx_int_store(Emit *E, ElementType t, PtxReg address, PtxReg v);
/* Whether op is one ptx_int_emit writes (instead of ptx_kernel.c). */
bool ptx_int_handles(const Kernel *k, const KernelOp *op);
bool ptx_int_emit(Emit *E, const KernelOp *op, const PtxReg *args, PtxReg *out);

/* ---- ptx_minifloat.c: the f8 and f4 types, computed in f32 ---- */
bool ptx_minifloat_known(ElementType t);
PtxReg ptx_minifloat_load(Emit *E, ElementType t, PtxReg address);
void ptx_minifloat_store(Emit *E, ElementType t, PtxReg address, PtxReg v);
/* An f32 or f64 value rounded to t, back in an f32. */
PtxReg ptx_minifloat_round(Emit *E, ElementType t, PtxReg x);

/* ---- ptx_float_ops.c: reduce-precision, round-nearest-afz ---- */
bool ptx_float_ops_handles(const Kernel *k, const KernelOp *op);
bool ptx_float_ops_emit(Emit *E, const KernelOp *op, const PtxReg *args, PtxReg *out);

/* ---- ptx_complex.c: a kernel with c64/c128 values, split into parts ---- */
bool ptx_complex_emit(PtxBuilder *b, const Kernel *k, const char *entry, PtxKernelShape *shape, Status *st);

/* ---- ptx_row.c: row kernels (KERNEL_ROW: softmax, layernorm) ---- */
/* True when every REDUCE phase's accumulators have a plain combiner
 * started from its identity, so a block can share each row's work. */
bool ptx_row_plan_make(const Kernel *k, RowPlan *plan);
/* "row.block" (with a plan: one block per row, warp butterflies and
 * shared memory) or "row.thread" (without: one thread per row, the
 * phases in the interpreter's order). */
bool ptx_row_emit(Emit *E, const RowPlan *plan, PtxKernelShape *shape);

/* ---- ptx_tile.c: shared-memory tiles ---- */
/* "reduce.column" (a reduction along an output dimension) or
 * "transpose.tile" (a loop reading an operand across the output's minor
 * dimension) when k is one of those and a tile fits; NULL otherwise. */
const char *ptx_tile_strategy(const Kernel *k);
bool ptx_tile_emit(Emit *E, PtxKernelShape *shape);


#endif
