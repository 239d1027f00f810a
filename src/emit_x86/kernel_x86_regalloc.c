/* Register allocation for a kernel body: linear scan by last use.
 *
 * A kernel body is straight-line SSA code (the loops are the compiler's,
 * around whole blocks), so each value's life is one interval of op
 * numbers: from its definition to its last use. A value made once per row
 * in PRE and read in the REDUCE loop must survive every trip of the loop,
 * so its interval runs to the end of the REDUCE block. Intervals are
 * visited in order of definition; a value gets a free register of its
 * class, or, when none is free, the register of the active interval that
 * ends last (that value then lives in its stack slot for its whole life,
 * Poletto and Sarkar's rule), or its own slot when it ends last itself.
 * A result never shares a register with an argument of its own op: the
 * op's code may then write its result before reading its arguments. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/kernel_x86_internal.h"

/* rbx, r12..r14 are fixed (kernel_x86_internal.h), rax, rcx, rdx, r11 are
 * scratch, rsp is the stack. */
static const X86Reg allocatable_gprs[] = {X86_RSI, X86_RDI, X86_R8, X86_R9, X86_R10, X86_RBP, X86_R15};
enum { GPR_COUNT = sizeof allocatable_gprs / sizeof allocatable_gprs[0], XMM_COUNT = KX_VECTOR_VALUE_REGISTERS };

static bool op_has_value(const KernelOp *op) { return op->kop != KOP_STORE && op->kop != KOP_ACC_WRITE; }

static void compute_last_uses(KernelX86 *x) {
  const Kernel *k = x->k;
  /* A value made before a loop (PRE) and read inside it must outlive the
   * loop's last op, since the loop runs it again. Row kernels have several
   * loops (phases); the last looped op of any bounds them all. */
  int last_reduce_op = -1;
  for (int i = 0; i < k->op_count; i++)
    if (k->ops[i].block == KBLOCK_REDUCE || k->ops[i].block == KBLOCK_ROW) last_reduce_op = i;
  for (int i = 0; i < k->op_count; i++) x->last_use[i] = i;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    for (int a = 0; a < op->arg_count; a++) {
      int v = op->args[a];
      int end = i;
      if ((op->block == KBLOCK_REDUCE || op->block == KBLOCK_ROW) && k->ops[v].block == KBLOCK_PRE) end = last_reduce_op;
      /* an invariant value computed once before its phase's SIMD loop
       * (kernel_x86_vector.c) is read on every trip of it */
      if ((op->block == KBLOCK_REDUCE || op->block == KBLOCK_ROW) && !op->invariant && k->ops[v].invariant)
        end = last_reduce_op;
      if (end > x->last_use[v]) x->last_use[v] = end;
    }
  }
  if (x->vectorized_lanes && k->kind == KERNEL_LOOP) kernel_x86_extend_gather_lives(x);
}

typedef struct RegisterPool {
  X86Reg regs[32];
  int owner[32];   /* the value in each register, or -1 */
  int count;
} RegisterPool;

static void pool_release_expired(RegisterPool *p, const int *last_use, int now) {
  for (int r = 0; r < p->count; r++)
    if (p->owner[r] >= 0 && last_use[p->owner[r]] < now) p->owner[r] = -1;
}

static void pool_assign(KernelX86 *x, RegisterPool *p, int v) {
  int latest = -1;
  for (int r = 0; r < p->count; r++) {
    if (p->owner[r] < 0) {
      p->owner[r] = v;
      x->homes[v].reg = p->regs[r];
      return;
    }
    if (latest < 0 || x->last_use[p->owner[r]] > x->last_use[p->owner[latest]]) latest = r;
  }
  if (x->last_use[p->owner[latest]] > x->last_use[v]) {
    x->homes[p->owner[latest]].spilled = true;
    p->owner[latest] = v;
    x->homes[v].reg = p->regs[latest];
  } else {
    x->homes[v].spilled = true;
  }
}

bool kernel_x86_allocate(KernelX86 *x) {
  const Kernel *k = x->k;
  compute_last_uses(x);
  /* an interleaved loop's first vector gets the low bank, the second the
   * same homes a bank up (kernel_x86_second_homes) */
  bool interleaved = x->allocating_vector && x->schedule.phases[0].unroll == 2 && k->kind == KERNEL_LOOP;
  RegisterPool gprs = {.count = GPR_COUNT}, xmms = {.count = interleaved ? KX_INTERLEAVED_BANK : XMM_COUNT};
  for (int r = 0; r < GPR_COUNT; r++) gprs.regs[r] = allocatable_gprs[r], gprs.owner[r] = -1;
  for (int r = 0; r < xmms.count; r++) xmms.regs[r] = x86_xmm(r), xmms.owner[r] = -1;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    pool_release_expired(&gprs, x->last_use, i);
    pool_release_expired(&xmms, x->last_use, i);
    memset(&x->homes[i], 0, sizeof x->homes[i]);
    if (!op_has_value(op)) continue;
    ValueClass c = kernel_x86_value_class_of(op->type);
    if (c != VALUE_NONE && x->allocating_vector && kernel_x86_op_is_vector(x, i)) c = VALUE_XMM;
    if (c == VALUE_NONE)
      return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: op %%%d produces %s, which x86 kernels do not support yet",
                          k->name, i, type_name(op->type));
    x->homes[i].value_class = c;
    pool_assign(x, c == VALUE_GPR ? &gprs : &xmms, i);
  }
  /* Stack slots only for the values that ended up spilled. */
  int spills = 0;
  for (int i = 0; i < k->op_count; i++)
    if (x->homes[i].spilled) x->homes[i].spill = spills++;
  if (interleaved) spills *= 2; /* the second vector's slots after the first's */
  if (spills > x->spill_count) x->spill_count = spills; /* the frame fits both allocations */
  return true;
}

/* The second vector's homes: each register a bank up, each slot after
 * the first vector's (whose count is half the vector spills). */
ValueHome *kernel_x86_second_homes(const KernelX86 *x) {
  const Kernel *k = x->k;
  ValueHome *second = mem_calloc((size_t)k->op_count + 1, sizeof *second);
  int spills = 0;
  for (int i = 0; i < k->op_count; i++) spills += x->vector_homes[i].spilled;
  for (int i = 0; i < k->op_count; i++) {
    second[i] = x->vector_homes[i];
    if (second[i].spilled) second[i].spill += spills;
    else if (second[i].value_class == VALUE_XMM) second[i].reg = x86_xmm(x86_reg_number(second[i].reg) + KX_INTERLEAVED_BANK);
  }
  return second;
}
