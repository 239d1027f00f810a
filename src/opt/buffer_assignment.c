/* Buffer assignment: written by the optimizer issue; until then no plan. */
#include <stdlib.h>

#include "opt/opt.h"

bool assign_buffers(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)m, (void)ctx, (void)failed, (void)st;
  return false;
}

void buffer_plan_free(BufferPlan *plan) {
  if (!plan) return;
  free(plan->slots);
  free(plan);
}

const BufferSlot *buffer_plan_find(const BufferPlan *plan, const Instruction *inst, int output_index) {
  for (int i = 0; plan && i < plan->slot_count; i++)
    if (plan->slots[i].inst == inst && plan->slots[i].output_index == output_index) return &plan->slots[i];
  return NULL;
}

int64_t naive_temp_bytes(const Module *m) {
  (void)m;
  return 0;
}

void print_buffer_plan(StrBuf *sb, const Module *m, const BufferPlan *plan) {
  (void)plan;
  print_module(sb, m);
}

void print_largest_buffers(StrBuf *sb, const BufferPlan *plan, int count) {
  (void)sb, (void)plan, (void)count;
}
