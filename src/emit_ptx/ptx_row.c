/* Row kernels in PTX (KERNEL_ROW: softmax, layernorm): several passes over
 * each row of the reduced dimensions, each pass reading the accumulators
 * the passes before it finished (kernel.h).
 *
 * row.block   one block per row (32 threads for rows under 1024
 *             elements, else 256). In a REDUCE phase every thread folds
 *             a strided part of the row into its own accumulators, which
 *             start from the combiner's identity; the lanes of a warp then
 *             meet by shfl.sync.bfly, so that every lane holds the warp's
 *             total, and the warps' totals meet through shared memory,
 *             where every thread reads them in warp order: all threads end
 *             the phase holding the same bits, as the next phase needs. A
 *             ROW phase is a strided loop over the row; POST runs in
 *             thread 0. Needs each reduced accumulator to have one plain
 *             combiner (add, multiply, maximum, minimum, and, or) of
 *             itself and a value that does not depend on its own phase's
 *             accumulators (ptx_row_plan_make).
 *   row.thread  otherwise: one thread per row, the phases in the
 *             interpreter's order (any reducer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_kernel_internal.h"

enum { ROW_BLOCK_THREADS = 256, ROW_BLOCK_MIN_ELEMENTS = 1024 };

/* ---- the plan ---- */

/* The phase whose REDUCE block writes accumulator a: -1 when none does,
 * -2 when several do (no plan then). */
static int accumulator_phase(const Kernel *k, int a) {
  int phase = -1;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->kop != KOP_ACC_WRITE || op->acc != a || op->block != KBLOCK_REDUCE) continue;
    if (phase >= 0 && phase != op->phase) return -2;
    phase = op->phase;
  }
  return phase;
}

/* own[i]: op i depends on an accumulator that its own phase reduces. */
static void own_phase_dependence(const Kernel *k, const int *acc_phase, bool *own) {
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    own[i] = op->kop == KOP_ACC_READ && op->block == KBLOCK_REDUCE && acc_phase[op->acc] == op->phase;
    for (int a = 0; op->kop == KOP_HLO && a < op->arg_count; a++) own[i] |= own[op->args[a]];
  }
}

bool ptx_row_plan_make(const Kernel *k, RowPlan *plan) {
  if (k->kind != KERNEL_ROW || k->reduce_rank == 0) return false;
  int acc_phase[AXLE_MAX_RANK];
  for (int a = 0; a < k->acc_count; a++) {
    acc_phase[a] = accumulator_phase(k, a);
    if (acc_phase[a] == -2 || k->acc_types[a] == TYPE_PRED) return false;
  }
  bool *own = mem_calloc((size_t)k->op_count + 1, sizeof *own);
  own_phase_dependence(k, acc_phase, own);
  bool ok = true;
  for (int a = 0; ok && a < k->acc_count; a++) {
    plan->combiner[a] = OP_ADD;
    if (acc_phase[a] >= 0) ok = kernel_acc_combiner(k, own, a, &plan->combiner[a]);
  }
  /* inside a phase only the combiner may read that phase's accumulators */
  ok = ok && kernel_only_combiners_read(k, own);
  mem_free(own);
  return ok;
}

/* ---- the skeletons ---- */

/* The rows in row-major order of the iteration space: the outputs have
 * the row's dimensions too, so their layout does not order the rows. */
static void row_space_order(const Kernel *k, int64_t *order) {
  for (int j = 0; j < k->rank; j++) order[j] = k->rank - 1 - j;
}

/* One pass over the row from `first` in steps of `step`: rindex
 * recovered, the phase's ops emitted. */
static bool phase_loop_emit(Emit *E, PtxReg first, PtxReg step, int phase) {
  const Kernel *k = E->k;
  int64_t order[AXLE_MAX_RANK];
  ptx_emit_reduce_order(k, order);
  GridLoop g = ptx_emit_grid_loop_open(E, first, ptx_emit_dims_product(k->reduce_rank, k->reduce_dims));
  ptx_emit_indices_recover(E, g.i, k->reduce_rank, k->reduce_dims, order, E->rindex);
  if (!ptx_emit_block_phase(E, k->phase_blocks[phase], phase)) return false;
  ptx_emit_grid_loop_close(E, &g, step);
  return true;
}

static void slot_name(int a, char *name, size_t size) { snprintf(name, size, "row_acc%d", a); }

/* After a REDUCE phase: the accumulators it reduced, combined across the
 * block so that every thread holds the row's total. */
static bool phase_combine_emit(Emit *E, const RowPlan *plan, const int *acc_phase, int phase, int threads,
                               PtxReg tid) {
  const Kernel *k = E->k;
  for (int offset = WARP / 2; offset > 0; offset /= 2)
    for (int a = 0; a < k->acc_count; a++)
      if (acc_phase[a] == phase &&
          !ptx_emit_accumulator_combine(E, plan, a, ptx_emit_shuffle(E, "bfly", E->acc[a], offset)))
        return false;
  if (threads == WARP) return true;
  PtxReg warp = ptx_reg_new(E->b, PTX_U32), lane = ptx_reg_new(E->b, PTX_U32), p = ptx_reg_new(E->b, PTX_PRED);
  PtxLabel stored = ptx_label_new(E->b, "stored");
  ptx_inst(E->b, "shr.u32 $r, $r, 5", warp, tid);
  ptx_inst(E->b, "and.b32 $r, $r, 31", lane, tid);
  ptx_inst(E->b, "setp.ne.u32 $r, $r, 0", p, lane);
  ptx_inst(E->b, "@$r bra $l", p, stored);
  for (int a = 0; a < k->acc_count; a++) {
    if (acc_phase[a] != phase) continue;
    char name[32];
    slot_name(a, name, sizeof name);
    PtxReg base = ptx_reg_new(E->b, PTX_U32), at = ptx_reg_new(E->b, PTX_U32);
    ptx_inst(E->b, "mov.u32 $r, $s", base, name);
    ptx_inst(E->b, "mad.lo.u32 $r, $r, $d, $r", at, warp, ptx_type_byte_size(ptx_emit_shared_type(E->acc[a])), base);
    ptx_inst(E->b, "st.shared$s [$r], $r", ptx_emit_mov_suffix(E->acc[a].cls), at, E->acc[a]);
  }
  ptx_label_place(E->b, stored);
  ptx_inst(E->b, "bar.sync 0");
  for (int a = 0; a < k->acc_count; a++) {
    if (acc_phase[a] != phase) continue;
    char name[32];
    slot_name(a, name, sizeof name);
    int bytes = ptx_type_byte_size(ptx_emit_shared_type(E->acc[a]));
    ptx_inst(E->b, "ld.shared$s $r, [$s]", ptx_emit_mov_suffix(E->acc[a].cls), E->acc[a], name);
    for (int w = 1; w < threads / WARP; w++) {
      PtxReg other = ptx_reg_new(E->b, ptx_emit_shared_type(E->acc[a]));
      ptx_inst(E->b, "ld.shared$s $r, [$s+$d]", ptx_emit_mov_suffix(E->acc[a].cls), other, name, w * bytes);
      if (!ptx_emit_accumulator_combine(E, plan, a, other)) return false;
    }
  }
  /* the slots are written again by the next phase or row */
  ptx_inst(E->b, "bar.sync 0");
  return true;
}

static bool row_block_emit(Emit *E, const RowPlan *plan, PtxKernelShape *shape) {
  const Kernel *k = E->k;
  int64_t n = ptx_emit_dims_product(k->rank, k->dims), order[AXLE_MAX_RANK];
  int64_t row = ptx_emit_dims_product(k->reduce_rank, k->reduce_dims);
  int threads = row >= ROW_BLOCK_MIN_ELEMENTS ? ROW_BLOCK_THREADS : WARP;
  int acc_phase[AXLE_MAX_RANK];
  for (int a = 0; a < k->acc_count; a++) acc_phase[a] = accumulator_phase(k, a);
  PtxReg tid = ptx_reg_new(E->b, PTX_U32), tid64 = ptx_reg_new(E->b, PTX_U64), block = ptx_reg_new(E->b, PTX_U32);
  PtxReg first = ptx_reg_new(E->b, PTX_U64), stride = ptx_emit_grid_stride(E, true), p = ptx_reg_new(E->b, PTX_PRED);
  PtxReg step = ptx_reg_new(E->b, PTX_U64);
  ptx_inst(E->b, "mov.u32 $r, %tid.x", tid);
  ptx_inst(E->b, "cvt.u64.u32 $r, $r", tid64, tid);
  ptx_inst(E->b, "mov.u32 $r, %ctaid.x", block);
  ptx_inst(E->b, "cvt.u64.u32 $r, $r", first, block);
  ptx_inst(E->b, "mov.u64 $r, $d", step, threads);
  ptx_emit_accumulators_declare(E);
  for (int a = 0; threads > WARP && a < k->acc_count; a++) {
    char name[32];
    slot_name(a, name, sizeof name);
    if (acc_phase[a] >= 0) ptx_shared_declare(E->b, name, ptx_emit_shared_type(E->acc[a]), threads / WARP, 8);
  }
  row_space_order(k, order);
  ptx_comment(E->b, "one row per block; each REDUCE phase ends with every thread holding the row's total");
  GridLoop g = ptx_emit_grid_loop_open(E, first, n);
  ptx_emit_indices_recover(E, g.i, k->rank, k->dims, order, E->index);
  if (!ptx_emit_block_phase(E, KBLOCK_PRE, -1)) return false;
  for (int phase = 0; phase < k->phase_count; phase++) {
    if (!phase_loop_emit(E, tid64, step, phase)) return false;
    if (k->phase_blocks[phase] == KBLOCK_REDUCE && !phase_combine_emit(E, plan, acc_phase, phase, threads, tid))
      return false;
  }
  PtxLabel next = ptx_label_new(E->b, "next");
  ptx_inst(E->b, "setp.ne.u32 $r, $r, 0", p, tid);
  ptx_inst(E->b, "@$r bra $l", p, next);
  if (!ptx_emit_block_phase(E, KBLOCK_POST, -1)) return false;
  ptx_label_place(E->b, next);
  ptx_emit_grid_loop_close(E, &g, stride);
  shape->strategy = "row.block";
  shape->block_threads = threads;
  shape->blocks = n;
  return true;
}

static bool row_thread_emit(Emit *E, PtxKernelShape *shape) {
  const Kernel *k = E->k;
  int64_t n = ptx_emit_dims_product(k->rank, k->dims), order[AXLE_MAX_RANK];
  PtxReg thread = ptx_global_thread_index(E->b), stride = ptx_emit_grid_stride(E, false);
  PtxReg zero = ptx_reg_new(E->b, PTX_U64), one = ptx_reg_new(E->b, PTX_U64);
  ptx_inst(E->b, "mov.u64 $r, 0", zero);
  ptx_inst(E->b, "mov.u64 $r, 1", one);
  ptx_emit_accumulators_declare(E);
  row_space_order(k, order);
  ptx_comment(E->b, "one row per thread; the phases in order");
  GridLoop g = ptx_emit_grid_loop_open(E, thread, n);
  ptx_emit_indices_recover(E, g.i, k->rank, k->dims, order, E->index);
  if (!ptx_emit_block_phase(E, KBLOCK_PRE, -1)) return false;
  for (int phase = 0; phase < k->phase_count; phase++)
    if (!phase_loop_emit(E, zero, one, phase)) return false;
  if (!ptx_emit_block_phase(E, KBLOCK_POST, -1)) return false;
  ptx_emit_grid_loop_close(E, &g, stride);
  shape->strategy = "row.thread";
  shape->block_threads = LOOP_THREADS;
  shape->blocks = (n + LOOP_THREADS - 1) / LOOP_THREADS;
  return true;
}

bool ptx_row_emit(Emit *E, const RowPlan *plan, PtxKernelShape *shape) {
  return plan ? row_block_emit(E, plan, shape) : row_thread_emit(E, shape);
}
