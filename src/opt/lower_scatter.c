/* Lowering a scatter's update computation (to_apply) to a rank-0 kernel.
 *
 * A scatter writes over its result in update order, and updates may land on
 * one element several times, so it is not a kernel over the result's
 * index space: the CPU backend runs it as a routine (cpu_scatter.c) that
 * copies the operands, walks the updates in order, and calls this kernel
 * once per updated element: f(current..., update...) -> new... */
#include <stdlib.h>

#include "opt/lower_internal.h"

Kernel *lower_scatter_combiner(const Instruction *scatter, Status *st) {
  const Computation *f = scatter->called_count ? scatter->called[0] : NULL;
  Lower L = {.origin = scatter, .body = f, .st = st, .block = KBLOCK_PRE};
  L.k = kernel_create(scatter->name, scatter, KERNEL_LOOP);
  int n = (scatter->operand_count - 1) / 2;
  const Instruction *outputs[AXLE_MAX_RANK];
  bool ok;
  if (scatter->opcode != OP_SCATTER || !f || !f->root || f->parameter_count != 2 * n || n > AXLE_MAX_RANK) {
    ok = lower_fail(&L, scatter, "a scatter without an update computation of 2N scalar parameters") >= 0;
  } else {
    for (int p = 0; p < 2 * n; p++) kernel_add_input(L.k, &f->parameters[p]->shape, f->parameters[p], NULL);
    for (int o = 0; o < n; o++) outputs[o] = n == 1 && f->root->opcode != OP_TUPLE ? f->root : f->root->operands[o];
    ok = f->root->opcode == OP_TUPLE ? f->root->operand_count == n : n == 1;
    if (!ok) lower_fail(&L, scatter, "an update computation with the wrong number of results");
    else ok = lower_loop(&L, outputs, n);
  }
  return lower_finish(&L, scatter->name, ok);
}
