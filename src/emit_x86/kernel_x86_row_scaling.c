/* A row kernel's last phase run in the next row's first loop (schedule
 * in_next_row, chosen by kernel_x86_schedule.c): softmax's out = exp /
 * sum, where the ROW phase reads exp back from the output row and divides
 * it by the sum. After the phase before it (the sum final), a row hands on
 * its divisor and its output row's address in two frame slots; the next
 * row's first loop (the maximum's, kernel_x86_vector.c) divides a vector
 * of that row in place beside each vector it reads, so the divides, which
 * hold the divide unit for several cycles each, overlap the reads from
 * memory that loop waits on; the last row of the thread's range is divided
 * after the rows. The same IEEE divide of the same values as the ROW
 * phase's own loop: the same bits at every level and thread count.
 *
 *   entry:       handed-on row = none
 *   each row:    phase 0's loop  [+ one vector of the handed-on row per group]
 *                phases 1 .. ROW-1
 *                hand on (divisor = acc, row = the output row)
 *   after rows:  the handed-on row, divided */
#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

enum { S1 = 14, S2 = 13 }; /* kernel_x86_vector.c's scratch vector registers, free between ops */

static X86Operand reg(X86Reg r) { return x86_reg(r); }

static X86Reg vreg(const KernelX86 *x, int n) { return x->cpu->level == CPU_LEVEL_AVX512 ? x86_zmm(n) : x86_ymm(n); }

static X86Operand scaling_divisor(const KernelX86 *x) { return kernel_x86_slot(x->scaling_slot, 4); }
static X86Operand scaling_row(const KernelX86 *x) { return kernel_x86_slot(x->scaling_slot + 1, 8); }

void kernel_x86_clear_row_scaling(KernelX86 *x) { EMIT(X86_MOV, scaling_row(x), x86_imm(0)); }

void kernel_x86_emit_unless_row_handed_on(KernelX86 *x, X86Label skip) {
  EMIT(X86_CMP, scaling_row(x), x86_imm(0));
  EMIT(X86_JE, x86_rel(skip));
}

bool kernel_x86_scales_previous_row(const KernelX86 *x) {
  const Kernel *k = x->k;
  return k->kind == KERNEL_ROW && x->phase == 0 && x->schedule.phases[k->phase_count - 1].in_next_row;
}

/* The divisor (the accumulator the ROW phase divides by) and the output
 * row, whose address the phase before computed for its store. */
void kernel_x86_hand_on_row_scaling(KernelX86 *x) {
  const Kernel *k = x->k;
  int store = kernel_x86_row_store(k);
  const KernelOp *quotient = &k->ops[k->ops[store].args[0]];
  x86_listing_note(x->cb, "the row's divisor and output row, for the next row's loop");
  EMIT(X86_MOVSS, reg(KX_XMM_SCRATCH0), kernel_x86_slot(x->acc_slot + k->ops[quotient->args[1]].acc, 4));
  EMIT(X86_MOVSS, scaling_divisor(x), reg(KX_XMM_SCRATCH0));
  EMIT(X86_MOV, reg(KX_SCRATCH_ADDRESS), kernel_x86_row_pointer_slot(x, store));
  EMIT(X86_MOV, scaling_row(x), reg(KX_SCRATCH_ADDRESS));
}

/* The handed-on row's vector at r14 (x->lanes wide) divided in place. */
void kernel_x86_emit_row_scaling_vector(KernelX86 *x) {
  EMIT(X86_MOV, reg(KX_SCRATCH_ADDRESS), scaling_row(x));
  X86Operand m = x86_mem_index(4 * x->lanes, KX_SCRATCH_ADDRESS, KX_INNER, 4, 0);
  EMIT(X86_VMOVUPS, reg(vreg(x, S1)), m);
  if (x->cpu->level == CPU_LEVEL_AVX512) { /* the divide broadcasts the divisor itself: one instruction fewer */
    EMIT(X86_VDIVPS, reg(vreg(x, S1)), reg(vreg(x, S1)), x86_broadcast(scaling_divisor(x)));
  } else {
    EMIT(X86_VBROADCASTSS, reg(vreg(x, S2)), scaling_divisor(x));
    EMIT(X86_VDIVPS, reg(vreg(x, S1)), reg(vreg(x, S1)), reg(vreg(x, S2)));
  }
  EMIT(X86_VMOVUPS, m, reg(vreg(x, S1)));
}

void kernel_x86_emit_row_scaling_loop(KernelX86 *x) {
  const Kernel *k = x->k;
  X86Label head = x86_label_new(x->cb), done = x86_label_new(x->cb);
  kernel_x86_emit_unless_row_handed_on(x, done);
  EMIT(X86_XOR, reg(X86_R14D), reg(X86_R14D));
  x86_label_bind(x->cb, head);
  kernel_x86_emit_row_scaling_vector(x);
  EMIT(X86_ADD, reg(KX_INNER), x86_imm(x->lanes));
  EMIT(X86_CMP, reg(KX_INNER), x86_imm(k->reduce_dims[k->reduce_rank - 1] - x->lanes));
  EMIT(X86_JLE, x86_rel(head));
  x86_label_bind(x->cb, done);
}

void kernel_x86_emit_last_row_scaling(KernelX86 *x) {
  x86_listing_note(x->cb, "the last row handed on, divided");
  x->lanes = x->schedule.phases[x->k->phase_count - 1].lanes;
  kernel_x86_emit_row_scaling_loop(x); /* the function's exit clears the upper halves */
  x->lanes = 0;
}
