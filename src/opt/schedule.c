/* Pass schedule_module ("schedule"): the order in which each computation's
 * instructions run, chosen to keep few bytes live at once. The order IS the
 * schedule: the pass reorders each instruction list, and buffer assignment
 * then plans memory over those positions.
 *
 * requires: verified.
 * guarantees: operands before users; instructions with side effects keep
 *           their relative order; the order is a function of the module
 *           alone (ties go to the earlier instruction), so a module always
 *           gets the same schedule.
 * breaks:   a buffer plan made before it (run buffer-assignment after).
 *
 * Two candidate orders, as XLA also tries several schedulers and keeps the
 * best:
 *   list         among the instructions whose operands have all run, take
 *                the one that adds the fewest bytes, counting what it
 *                allocates against the operands whose last reader it is
 *                (their buffers die as it runs);
 *   depth-first  a post-order walk from the root, which finishes one chain
 *                of work before starting the next.
 * Either can lose to the order the producer wrote, so buffer assignment
 * plans each, and a candidate replaces the current order only when its
 * temporary block is smaller.
 *
 * Fusion bodies are left alone: a fusion runs as one kernel, whose order
 * inside is the code generator's business. */
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"

/* The ready instructions, a binary heap on (net bytes, original position).
 * An instruction whose key changes is pushed again; the stale entry is
 * skipped when it surfaces. */
typedef struct ReadyEntry {
  int64_t net;
  int index;
} ReadyEntry;

typedef struct Scheduler {
  const Computation *c;
  int n;
  int *user_start, *users;     /* distinct users of each instruction (CSR) */
  int *side_next;              /* the next side-effecting instruction, or -1 */
  int *waiting;                /* operands (and side-effect predecessor) not yet run */
  int *uses_left;              /* users not yet run; the root has one more, the caller */
  int64_t *bytes;              /* bytes an instruction's result allocates */
  bool *done;
  ReadyEntry *heap;
  int heap_count, heap_capacity;
} Scheduler;

static bool entry_before(ReadyEntry a, ReadyEntry b) {
  return a.net != b.net ? a.net < b.net : a.index < b.index;
}

static void ready_push(Scheduler *s, int64_t net, int index) {
  if (s->heap_count == s->heap_capacity) {
    s->heap_capacity = s->heap_capacity ? s->heap_capacity * 2 : 64;
    s->heap = mem_realloc(s->heap, sizeof(ReadyEntry) * (size_t)s->heap_capacity);
  }
  int i = s->heap_count++;
  s->heap[i] = (ReadyEntry){net, index};
  while (i > 0 && entry_before(s->heap[i], s->heap[(i - 1) / 2])) {
    ReadyEntry t = s->heap[i];
    s->heap[i] = s->heap[(i - 1) / 2];
    s->heap[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

static ReadyEntry ready_pop(Scheduler *s) {
  ReadyEntry top = s->heap[0];
  s->heap[0] = s->heap[--s->heap_count];
  for (int i = 0;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < s->heap_count && entry_before(s->heap[l], s->heap[m])) m = l;
    if (r < s->heap_count && entry_before(s->heap[r], s->heap[m])) m = r;
    if (m == i) break;
    ReadyEntry t = s->heap[i];
    s->heap[i] = s->heap[m];
    s->heap[m] = t;
    i = m;
  }
  return top;
}

/* Bytes of new storage a result takes: parameters, constants and the ops
 * that only name other storage take none. */
static int64_t result_bytes(const Shape *shape) {
  if (!shape_is_tuple(shape)) return shape_byte_size(shape);
  int64_t n = 0;
  for (int i = 0; shape->tuple_shapes && i < shape->tuple_count; i++)
    n += result_bytes(&shape->tuple_shapes[i]);
  return n;
}

static int64_t allocated_bytes(const Instruction *inst) {
  switch (inst->opcode) {
  case OP_PARAMETER: case OP_CONSTANT: case OP_BITCAST: case OP_GET_TUPLE_ELEMENT: case OP_TUPLE:
    return 0;
  default:
    return result_bytes(&inst->shape);
  }
}

/* Whether operand k of inst is the first occurrence of that operand
 * (add(x, x) reads x once). */
static bool is_first_occurrence(const Instruction *inst, int k) {
  for (int j = 0; j < k; j++)
    if (inst->operands[j] == inst->operands[k]) return false;
  return true;
}

static void scheduler_init(Scheduler *s, const Computation *c) {
  memset(s, 0, sizeof *s);
  s->c = c;
  s->n = c->instruction_count;
  size_t n = (size_t)s->n + 1;
  s->user_start = mem_calloc(n + 1, sizeof(int));
  s->side_next = mem_calloc(n, sizeof(int));
  s->waiting = mem_calloc(n, sizeof(int));
  s->uses_left = mem_calloc(n, sizeof(int));
  s->bytes = mem_calloc(n, sizeof(int64_t));
  s->done = mem_calloc(n, sizeof(bool));
  for (int i = 0; i < s->n; i++) {
    const Instruction *inst = c->instructions[i];
    s->bytes[i] = allocated_bytes(inst);
    for (int k = 0; k < inst->operand_count; k++)
      if (is_first_occurrence(inst, k)) s->user_start[inst->operands[k]->index + 1]++;
  }
  for (int i = 0; i < s->n; i++) s->user_start[i + 1] += s->user_start[i];
  s->users = mem_calloc((size_t)s->user_start[s->n] + 1, sizeof(int));
  int *fill = mem_calloc(n, sizeof(int));
  int previous_side = -1;
  for (int i = 0; i < s->n; i++) {
    const Instruction *inst = c->instructions[i];
    s->side_next[i] = -1;
    for (int k = 0; k < inst->operand_count; k++) {
      if (!is_first_occurrence(inst, k)) continue;
      int o = inst->operands[k]->index;
      s->users[s->user_start[o] + fill[o]++] = i;
      s->waiting[i]++;
      s->uses_left[o]++;
    }
    /* Effects happen in the order the module gives them. */
    if (opcode_has_side_effects(inst->opcode)) {
      if (previous_side >= 0) {
        s->side_next[previous_side] = i;
        s->waiting[i]++;
      }
      previous_side = i;
    }
  }
  mem_free(fill);
  if (c->root) s->uses_left[c->root->index]++;
}

static void scheduler_free(Scheduler *s) {
  mem_free(s->user_start);
  mem_free(s->users);
  mem_free(s->side_next);
  mem_free(s->waiting);
  mem_free(s->uses_left);
  mem_free(s->bytes);
  mem_free(s->done);
  mem_free(s->heap);
}

/* What running i now adds to the live bytes: its result, less the operands
 * it is the last reader of. */
static int64_t net_bytes(const Scheduler *s, int i) {
  const Instruction *inst = s->c->instructions[i];
  int64_t net = s->bytes[i];
  for (int k = 0; k < inst->operand_count; k++) {
    int o = inst->operands[k]->index;
    if (is_first_occurrence(inst, k) && s->uses_left[o] == 1) net -= s->bytes[o];
  }
  return net;
}

/* After i has run: its users and its side-effect successor may become
 * ready, and an operand left with one reader makes that reader cheaper. */
static void scheduler_retire(Scheduler *s, int i) {
  const Instruction *inst = s->c->instructions[i];
  s->done[i] = true;
  for (int u = s->user_start[i]; u < s->user_start[i + 1]; u++)
    if (--s->waiting[s->users[u]] == 0) ready_push(s, net_bytes(s, s->users[u]), s->users[u]);
  if (s->side_next[i] >= 0 && --s->waiting[s->side_next[i]] == 0)
    ready_push(s, net_bytes(s, s->side_next[i]), s->side_next[i]);
  for (int k = 0; k < inst->operand_count; k++) {
    if (!is_first_occurrence(inst, k)) continue;
    int o = inst->operands[k]->index;
    if (--s->uses_left[o] != 1) continue;
    for (int u = s->user_start[o]; u < s->user_start[o + 1]; u++) {
      int last = s->users[u];
      if (!s->done[last] && s->waiting[last] == 0) ready_push(s, net_bytes(s, last), last);
    }
  }
}

/* Fills order[] with the list schedule of c (positions into the current
 * instruction list). */
static void schedule_list(const Computation *c, int *order) {
  Scheduler s;
  scheduler_init(&s, c);
  for (int i = 0; i < s.n; i++)
    if (s.waiting[i] == 0) ready_push(&s, net_bytes(&s, i), i);
  int count = 0;
  while (s.heap_count > 0) {
    ReadyEntry e = ready_pop(&s);
    if (s.done[e.index] || e.net != net_bytes(&s, e.index)) continue;
    order[count++] = e.index;
    scheduler_retire(&s, e.index);
  }
  scheduler_free(&s);
  /* A verified computation has no cycle, so every instruction ran. */
  if (count != c->instruction_count)
    for (int i = 0; i < c->instruction_count; i++) order[i] = i;
}

/* Puts c's instructions in the order given by old positions: written into
 * the list at once (moving them one by one with computation_move_before
 * would cost a pass over the list each), then handed to the core's stable
 * computation_sort, which keeps a legal order as it is and renumbers. */
static void computation_apply_order(Computation *c, Instruction **old, const int *order) {
  for (int i = 0; i < c->instruction_count; i++) c->instructions[i] = old[order[i]];
  Status st;
  bool sorted = computation_sort(c, &st);
  (void)sorted; /* the computation was verified: it has no cycle */
}

static int64_t computation_temp_bytes(const Computation *c) {
  BufferPlan *plan = buffer_plan_create(c);
  int64_t bytes = plan->temp_bytes;
  buffer_plan_free(plan);
  return bytes;
}

/* Schedules c; returns whether its order changed. */
/* Fills order[] with a depth-first post-order from the root: each value is
 * made just before its first reader needs it, so a chain of work finishes
 * (and frees its buffers) before the next begins. Instructions the root
 * does not reach follow, each as the root of its own walk. The side-effect
 * predecessor counts as one more operand. */
static void schedule_depth_first(const Computation *c, int *order) {
  int n = c->instruction_count, count = 0, previous_side = -1;
  int *side_prev = mem_calloc((size_t)n, sizeof(int));
  for (int i = 0; i < n; i++) {
    side_prev[i] = -1;
    if (!opcode_has_side_effects(c->instructions[i]->opcode)) continue;
    side_prev[i] = previous_side;
    previous_side = i;
  }
  bool *seen = mem_calloc((size_t)n, sizeof(bool));
  int *stack = mem_calloc((size_t)n, sizeof(int)), *next = mem_calloc((size_t)n, sizeof(int));
  for (int r = -1; r < n; r++) {
    int start = r < 0 ? c->root->index : r;
    if (seen[start]) continue;
    int depth = 0;
    stack[depth++] = start;
    seen[start] = true;
    while (depth > 0) {
      int top = stack[depth - 1];
      const Instruction *inst = c->instructions[top];
      int k = next[top]++;
      /* Operands, then the side-effect predecessor (-1: none), then done (-2). */
      int child = k < inst->operand_count    ? inst->operands[k]->index
                  : k == inst->operand_count ? side_prev[top]
                                             : -2;
      if (child == -2) {
        order[count++] = top;
        depth--;
      } else if (child >= 0 && !seen[child]) {
        seen[child] = true;
        stack[depth++] = child;
      }
    }
  }
  mem_free(side_prev);
  mem_free(seen);
  mem_free(stack);
  mem_free(next);
}

static bool order_is_identity(const int *order, int n) {
  for (int i = 0; i < n; i++)
    if (order[i] != i) return false;
  return true;
}

/* Schedules c: the list order and the depth-first order each replace the
 * current one only if they make the temporary block smaller. Returns
 * whether the order changed. */
static bool schedule_computation(Computation *c) {
  int n = c->instruction_count;
  if (n < 2 || !c->root) return false;
  int *candidate = mem_calloc((size_t)n, sizeof(int)), *best = mem_calloc((size_t)n, sizeof(int));
  Instruction **old = mem_calloc((size_t)n, sizeof(Instruction *));
  memcpy(old, c->instructions, sizeof(Instruction *) * (size_t)n);
  for (int i = 0; i < n; i++) best[i] = i;
  int64_t best_bytes = computation_temp_bytes(c);
  for (int way = 0; way < 2; way++) {
    if (way == 0) schedule_list(c, candidate);
    else schedule_depth_first(c, candidate);
    if (order_is_identity(candidate, n)) continue;
    computation_apply_order(c, old, candidate);
    int64_t bytes = computation_temp_bytes(c);
    if (bytes < best_bytes) {
      best_bytes = bytes;
      memcpy(best, candidate, sizeof(int) * (size_t)n);
    }
    for (int i = 0; i < n; i++) candidate[i] = i;
    computation_apply_order(c, old, candidate);
  }
  bool changed = !order_is_identity(best, n);
  if (changed) computation_apply_order(c, old, best);
  mem_free(candidate);
  mem_free(best);
  mem_free(old);
  return changed;
}

static int compare_pointers(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;
  return x < y ? -1 : x > y;
}

bool schedule_module(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx, (void)failed, (void)st;
  /* The fusion bodies, sorted, so that each computation is looked up once. */
  int body_count = 0, capacity = 0;
  const Computation **bodies = NULL;
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *caller = m->computations[k];
    for (int i = 0; i < caller->instruction_count; i++) {
      const Instruction *inst = caller->instructions[i];
      if (inst->opcode != OP_FUSION || inst->called_count == 0) continue;
      if (body_count == capacity) {
        capacity = capacity ? capacity * 2 : 16;
        bodies = mem_realloc(bodies, sizeof *bodies * (size_t)capacity);
      }
      bodies[body_count++] = inst->called[0];
    }
  }
  if (body_count) qsort(bodies, (size_t)body_count, sizeof *bodies, compare_pointers);
  bool changed = false;
  for (int k = 0; k < m->computation_count; k++) {
    Computation *c = m->computations[k];
    if (body_count && bsearch(&c, bodies, (size_t)body_count, sizeof *bodies, compare_pointers)) continue;
    changed |= schedule_computation(c);
  }
  mem_free(bodies);
  return changed;
}
