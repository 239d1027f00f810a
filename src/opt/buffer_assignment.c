/* Pass assign_buffers ("buffer-assignment"): where every value lives at run
 * time, fixed at compile time, so that a module's peak temporary memory is
 * known before it runs (and a module over --max_temp_bytes fails here, not
 * halfway through a run).
 *
 * requires: verified; scheduled (the instruction order is the execution
 *           order; run after schedule).
 * guarantees: ctx->plan describes the entry in its current order; any later
 *           edit of the entry makes the plan stale.
 * breaks:   nothing (the module is not changed).
 *
 * The plan, in four steps over the leaves (the arrays inside each result,
 * depth first through tuples):
 *   1. storage: each leaf either owns storage or names another's (bitcast,
 *      get-tuple-element and tuple own nothing);
 *   2. liveness: an owned buffer lives from the position that writes it to
 *      the last position that reads it through any name; results live to
 *      the end;
 *   3. in place: a temporary made elementwise from an operand whose buffer
 *      dies at that very instruction takes that buffer over (a group of
 *      values sharing one buffer, one after another);
 *   4. offsets: walking the positions, groups whose last reader has passed
 *      give their bytes back and each new group takes the best-fitting free
 *      hole of the one temporary block (the smallest that holds it), or
 *      grows the block. Offsets are 64-byte aligned. */
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"

/* ---- leaves of a shape ---- */

static void shape_collect_leaves(const Shape *s, const Shape **out, int *n) {
  if (!shape_is_tuple(s)) {
    out[(*n)++] = s;
    return;
  }
  for (int i = 0; s->tuple_shapes && i < s->tuple_count; i++)
    shape_collect_leaves(&s->tuple_shapes[i], out, n);
}

/* The number of the first leaf of element `element` of a tuple shape. */
static int tuple_leaf_offset(const Shape *s, int64_t element) {
  int n = 0;
  for (int64_t i = 0; s->tuple_shapes && i < element && i < s->tuple_count; i++)
    n += shape_leaf_count(&s->tuple_shapes[i]);
  return n;
}

/* The leaf number of the array at path `index`, or -1 when the path does
 * not end at an array. */
static int shape_index_to_leaf(const Shape *s, const IntList *index) {
  int leaf = 0;
  for (int i = 0; i < index->count; i++) {
    int64_t k = index->values[i];
    if (!shape_is_tuple(s) || !s->tuple_shapes || k < 0 || k >= s->tuple_count) return -1;
    leaf += tuple_leaf_offset(s, k);
    s = &s->tuple_shapes[k];
  }
  return shape_is_tuple(s) ? -1 : leaf;
}

static int64_t align_up(int64_t bytes) {
  return (bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
}

/* ---- the planner's working state ---- */

/* A buffer in the temporary block: values that occupy it one after another
 * (an in-place chain), live together from start to end. */
typedef struct Group {
  int start, end;
  int64_t size;                /* aligned */
  int64_t offset;
} Group;

typedef struct Planner {
  const Computation *c;
  int n;                       /* instructions */
  int leaf_count;
  int *leaf_base;              /* per instruction: its first leaf; [n] = leaf_count */
  int *leaf_inst;              /* per leaf: the position of its instruction */
  const Shape **leaf_shape;
  bool *names_only;            /* per instruction: an alias op, owning nothing */
  int *owner;                  /* per leaf: the leaf whose storage it names */
  int *group;                  /* per owning TEMP leaf: its group; else -1 */
  Group *groups;
  int group_count;
  BufferSlot *slots;           /* per leaf */
} Planner;

static bool is_alias_op(Opcode op) {
  return op == OP_BITCAST || op == OP_GET_TUPLE_ELEMENT || op == OP_TUPLE;
}

static void planner_init(Planner *p, const Computation *c) {
  memset(p, 0, sizeof *p);
  p->c = c;
  p->n = c->instruction_count;
  p->leaf_base = mem_calloc((size_t)p->n + 1, sizeof(int));
  for (int i = 0; i < p->n; i++)
    p->leaf_base[i + 1] = p->leaf_base[i] + shape_leaf_count(&c->instructions[i]->shape);
  p->leaf_count = p->leaf_base[p->n];
  size_t leaves = (size_t)p->leaf_count + 1;
  p->leaf_inst = mem_calloc(leaves, sizeof(int));
  p->leaf_shape = mem_calloc(leaves, sizeof(Shape *));
  p->names_only = mem_calloc((size_t)p->n + 1, sizeof(bool));
  p->owner = mem_calloc(leaves, sizeof(int));
  p->group = mem_calloc(leaves, sizeof(int));
  p->groups = mem_calloc(leaves, sizeof(Group));
  p->slots = mem_calloc(leaves, sizeof(BufferSlot));
  for (int i = 0; i < p->n; i++) {
    int k = p->leaf_base[i];
    shape_collect_leaves(&c->instructions[i]->shape, p->leaf_shape, &k);
    for (k = p->leaf_base[i]; k < p->leaf_base[i + 1]; k++) p->leaf_inst[k] = i;
  }
}

static void planner_free(Planner *p) {
  mem_free(p->leaf_base);
  mem_free(p->leaf_inst);
  mem_free(p->leaf_shape);
  mem_free(p->names_only);
  mem_free(p->owner);
  mem_free(p->group);
  mem_free(p->groups);
  mem_free(p->slots);
}

static int leaves_of(const Planner *p, const Instruction *inst) {
  return p->leaf_base[inst->index + 1] - p->leaf_base[inst->index];
}

/* ---- 1. storage ---- */

/* For an alias op, points its leaves at the leaves they name; returns
 * false when the shapes do not line up (then it owns its storage). */
static bool storage_link_alias(Planner *p, const Instruction *inst) {
  int base = p->leaf_base[inst->index], count = leaves_of(p, inst);
  if (inst->opcode == OP_TUPLE) {
    int total = 0;
    for (int k = 0; k < inst->operand_count; k++) total += leaves_of(p, inst->operands[k]);
    if (total != count) return false;
    for (int k = 0, at = base; k < inst->operand_count; k++) {
      const Instruction *op = inst->operands[k];
      for (int j = 0; j < leaves_of(p, op); j++) p->owner[at++] = p->owner[p->leaf_base[op->index] + j];
    }
    return true;
  }
  if (inst->operand_count != 1) return false;
  const Instruction *op = inst->operands[0];
  int from = p->leaf_base[op->index];
  if (inst->opcode == OP_GET_TUPLE_ELEMENT) {
    if (!shape_is_tuple(&op->shape) || inst->attrs.tuple_index < 0 ||
        inst->attrs.tuple_index >= op->shape.tuple_count)
      return false;
    from += tuple_leaf_offset(&op->shape, inst->attrs.tuple_index);
  }
  if (from + count > p->leaf_base[op->index + 1]) return false;
  for (int j = 0; j < count; j++) p->owner[base + j] = p->owner[from + j];
  return true;
}

static void plan_storage(Planner *p) {
  for (int i = 0; i < p->n; i++) {
    const Instruction *inst = p->c->instructions[i];
    bool alias = is_alias_op(inst->opcode) && storage_link_alias(p, inst);
    p->names_only[i] = alias;
    for (int k = p->leaf_base[i]; k < p->leaf_base[i + 1]; k++) {
      BufferSlot *s = &p->slots[k];
      s->inst = inst;
      s->output_index = k - p->leaf_base[i];
      s->offset = -1;
      s->shape = p->leaf_shape[k];
      s->size = shape_byte_size(s->shape);
      s->live_from = s->live_to = i;
      s->parameter_number = -1;
      p->group[k] = -1;
      if (alias) {
        s->kind = BUFFER_ALIAS;
        s->source = p->c->instructions[p->leaf_inst[p->owner[k]]];
        s->source_index = p->owner[k] - p->leaf_base[p->leaf_inst[p->owner[k]]];
        continue;
      }
      p->owner[k] = k;
      s->kind = inst->opcode == OP_PARAMETER  ? BUFFER_PARAMETER
                : inst->opcode == OP_CONSTANT ? BUFFER_CONSTANT
                                              : BUFFER_TEMP;
      if (inst->opcode == OP_PARAMETER) s->parameter_number = inst->attrs.parameter_number;
    }
  }
}

/* ---- 2. liveness ---- */

static void plan_liveness(Planner *p) {
  for (int u = 0; u < p->n; u++) {
    const Instruction *user = p->c->instructions[u];
    /* An alias op reads nothing: its own readers keep the storage alive. */
    if (p->names_only[u]) continue;
    for (int k = 0; k < user->operand_count; k++) {
      const Instruction *op = user->operands[k];
      for (int l = p->leaf_base[op->index]; l < p->leaf_base[op->index + 1]; l++) {
        BufferSlot *owner = &p->slots[p->owner[l]];
        if (owner->live_to < u) owner->live_to = u;
      }
    }
  }
  /* The result is read by the caller, after the last position. */
  const Instruction *root = p->c->root;
  for (int l = root ? p->leaf_base[root->index] : 0; root && l < p->leaf_base[root->index + 1]; l++) {
    BufferSlot *owner = &p->slots[p->owner[l]];
    owner->live_to = p->n - 1;
    if (owner->kind == BUFFER_TEMP) owner->kind = BUFFER_OUTPUT;
  }
  /* A name lives from where it is made while its storage lives. */
  for (int l = 0; l < p->leaf_count; l++) {
    BufferSlot *s = &p->slots[l];
    if (s->kind == BUFFER_ALIAS && p->slots[p->owner[l]].live_to > s->live_to)
      s->live_to = p->slots[p->owner[l]].live_to;
  }
}

/* ---- 3. in place ---- */

/* Whether, inside fusion body f, the result's element i reads only element
 * i of parameter `number`: every instruction that (transitively) reads the
 * parameter is elementwise over the result's dimensions. A fusion whose
 * root is elementwise may still read an operand through a reverse, a
 * slice or a broadcast; writing over that operand would then clobber
 * elements not yet read. */
static bool fusion_reads_elementwise(const Computation *f, int64_t number) {
  if (!f || number < 0 || number >= f->parameter_count || !f->parameters[number]) return false;
  if (!opcode_is_elementwise(f->root->opcode)) return false;
  bool *reads = mem_calloc((size_t)f->instruction_count, sizeof(bool));
  bool ok = true;
  reads[f->parameters[number]->index] = true;
  for (int i = 0; ok && i < f->instruction_count; i++) {
    const Instruction *inst = f->instructions[i];
    for (int k = 0; k < inst->operand_count && !reads[i]; k++) reads[i] = reads[inst->operands[k]->index];
    if (reads[i] && inst->opcode != OP_PARAMETER)
      ok = opcode_is_elementwise(inst->opcode) && shape_same_dims(&inst->shape, &f->root->shape);
  }
  mem_free(reads);
  return ok;
}

/* Element j of the operand sits where element j of the result will: same
 * dimensions, same layout, same element size. */
static bool shapes_share_bytes(const Shape *a, const Shape *b) {
  if (shape_is_tuple(a) || shape_is_tuple(b) || !shape_same_dims(a, b)) return false;
  if (type_byte_size(a->type) != type_byte_size(b->type)) return false;
  return memcmp(a->minor_to_major, b->minor_to_major, sizeof(int) * (size_t)a->rank) == 0;
}

/* Whether operand k of inst, a single array naming storage leaf `target`,
 * lets inst write over it: inst computes element i from element i of that
 * operand only, and the bytes line up. */
static bool operand_reads_elementwise(const Planner *p, const Instruction *inst, int k, int target) {
  const Instruction *op = inst->operands[k];
  if (leaves_of(p, op) != 1 || p->owner[p->leaf_base[op->index]] != target) return false;
  if (!shapes_share_bytes(&op->shape, &inst->shape)) return false;
  if (p->slots[target].size != shape_byte_size(&inst->shape)) return false;
  if (inst->opcode == OP_FUSION)
    return inst->called_count == 1 && fusion_reads_elementwise(inst->called[0], k);
  return opcode_is_elementwise(inst->opcode);
}

/* Whether inst may write its single array result over storage leaf
 * `target`: it reads that storage, and every operand through which it
 * reads it does so elementwise (fusion(a, a) may read one of the two
 * through a reverse). Liveness is the caller's business. */
static bool can_write_over(const Planner *p, const Instruction *inst, int target) {
  if (leaves_of(p, inst) != 1) return false;
  bool reads = false;
  for (int k = 0; k < inst->operand_count; k++) {
    const Instruction *op = inst->operands[k];
    for (int l = p->leaf_base[op->index]; l < p->leaf_base[op->index + 1]; l++) {
      if (p->owner[l] != target) continue;
      if (!operand_reads_elementwise(p, inst, k, target)) return false;
      reads = true;
    }
  }
  return reads;
}

static void group_create(Planner *p, int leaf) {
  const BufferSlot *s = &p->slots[leaf];
  p->groups[p->group_count] = (Group){s->live_from, s->live_to, align_up(s->size), 0};
  p->group[leaf] = p->group_count++;
}

/* The group of an operand's buffer that inst may take over: one that dies
 * at inst, which computes element i from element i of it; -1 if none. */
static int group_to_take_over(const Planner *p, const Instruction *inst, int *target_leaf) {
  for (int k = 0; k < inst->operand_count; k++) {
    const Instruction *op = inst->operands[k];
    if (leaves_of(p, op) != 1) continue;
    int target = p->owner[p->leaf_base[op->index]];
    int g = p->group[target];
    /* Dying here: no later position reads the buffer under any name. */
    if (g < 0 || p->groups[g].end != inst->index || !can_write_over(p, inst, target)) continue;
    *target_leaf = target;
    return g;
  }
  return -1;
}

/* Every temporary joins the group of an operand's buffer that dies at it,
 * when it may write over it; otherwise it starts a group of its own. */
static void plan_in_place(Planner *p) {
  for (int i = 0; i < p->n; i++) {
    const Instruction *inst = p->c->instructions[i];
    for (int l = p->leaf_base[i]; l < p->leaf_base[i + 1]; l++) {
      BufferSlot *s = &p->slots[l];
      if (s->kind != BUFFER_TEMP) continue;
      int target = -1;
      int g = leaves_of(p, inst) == 1 && s->size > 0 ? group_to_take_over(p, inst, &target) : -1;
      if (g < 0) {
        group_create(p, l);
        continue;
      }
      p->group[l] = g;
      p->groups[g].end = s->live_to;
      s->shares_with = p->slots[target].inst;
      s->shares_with_index = p->slots[target].output_index;
    }
  }
}

/* input_output_alias: a result leaf is written straight into the donated
 * argument's buffer when nothing reads the argument after the result is
 * written (or the writer reads it elementwise, at the same position). When
 * that does not hold the result keeps its own buffer, and the runtime
 * copies it over at the end, as XLA does with a copy. */
static void plan_io_aliases(Planner *p) {
  const Module *m = p->c->module;
  const Instruction *root = p->c->root;
  if (!p->c->is_entry || !m || !root) return;
  for (int a = 0; a < m->io_alias_count; a++) {
    const IoAlias *alias = &m->io_aliases[a];
    if (alias->parameter_number < 0 || alias->parameter_number >= p->c->parameter_count) continue;
    const Instruction *param = p->c->parameters[alias->parameter_number];
    int out = shape_index_to_leaf(&root->shape, &alias->output_index);
    int in = param ? shape_index_to_leaf(&param->shape, &alias->parameter_index) : -1;
    if (out < 0 || in < 0) continue;
    int target = p->leaf_base[param->index] + in;
    BufferSlot *result = &p->slots[p->owner[p->leaf_base[root->index] + out]];
    if (result->kind != BUFFER_OUTPUT || result->parameter_number >= 0) continue;
    const Instruction *writer = result->inst;
    int when = result->live_from, last_read = p->slots[target].live_to;
    if (last_read < when || (last_read == when && can_write_over(p, writer, target)))
      result->parameter_number = alias->parameter_number;
  }
}

/* ---- 4. offsets ---- */

/* The free holes of the temporary block, sorted by offset; a hole never
 * touches the block's top (freed bytes there lower the top instead). */
typedef struct Holes {
  int64_t *offset, *size;
  int count, capacity;
  int64_t top, peak;
} Holes;

static void holes_insert(Holes *h, int at, int64_t offset, int64_t size) {
  if (h->count == h->capacity) {
    h->capacity = h->capacity ? h->capacity * 2 : 16;
    h->offset = mem_realloc(h->offset, sizeof(int64_t) * (size_t)h->capacity);
    h->size = mem_realloc(h->size, sizeof(int64_t) * (size_t)h->capacity);
  }
  memmove(h->offset + at + 1, h->offset + at, sizeof(int64_t) * (size_t)(h->count - at));
  memmove(h->size + at + 1, h->size + at, sizeof(int64_t) * (size_t)(h->count - at));
  h->offset[at] = offset;
  h->size[at] = size;
  h->count++;
}

static void holes_remove(Holes *h, int at) {
  memmove(h->offset + at, h->offset + at + 1, sizeof(int64_t) * (size_t)(h->count - at - 1));
  memmove(h->size + at, h->size + at + 1, sizeof(int64_t) * (size_t)(h->count - at - 1));
  h->count--;
}

/* Gives [offset, offset+size) back, merging it with the holes beside it. */
static void holes_release(Holes *h, int64_t offset, int64_t size) {
  int at = 0;
  while (at < h->count && h->offset[at] < offset) at++;
  if (at < h->count && offset + size == h->offset[at]) {
    size += h->size[at];
    holes_remove(h, at);
  }
  if (at > 0 && h->offset[at - 1] + h->size[at - 1] == offset) {
    at--;
    offset = h->offset[at];
    size += h->size[at];
    holes_remove(h, at);
  }
  if (offset + size == h->top) h->top = offset;
  else holes_insert(h, at, offset, size);
}

/* Best fit: the smallest hole that holds size (the lowest such on a tie);
 * without one, the block grows. */
static int64_t holes_take(Holes *h, int64_t size) {
  int best = -1;
  for (int i = 0; i < h->count; i++)
    if (h->size[i] >= size && (best < 0 || h->size[i] < h->size[best])) best = i;
  if (best < 0) {
    int64_t offset = h->top;
    h->top += size;
    if (h->top > h->peak) h->peak = h->top;
    return offset;
  }
  int64_t offset = h->offset[best];
  h->offset[best] += size;
  h->size[best] -= size;
  if (h->size[best] == 0) holes_remove(h, best);
  return offset;
}

/* Groups are numbered in order of their start. At each position the groups
 * whose last reader came before it are freed first, then the groups that
 * start there take their offsets. Returns the block's size. */
static int64_t plan_offsets(Planner *p) {
  /* The groups by end position: a counting sort, as ends are positions. */
  int *first = mem_calloc((size_t)p->n + 1, sizeof(int));
  int *by_end = mem_calloc((size_t)p->group_count + 1, sizeof(int));
  for (int g = 0; g < p->group_count; g++) first[p->groups[g].end + 1]++;
  for (int pos = 0; pos < p->n; pos++) first[pos + 1] += first[pos];
  for (int g = 0; g < p->group_count; g++) by_end[first[p->groups[g].end]++] = g;
  mem_free(first);
  Holes h = {0};
  int next_start = 0, next_end = 0;
  for (int pos = 0; pos < p->n; pos++) {
    for (; next_end < p->group_count && p->groups[by_end[next_end]].end < pos; next_end++) {
      const Group *g = &p->groups[by_end[next_end]];
      if (g->size > 0) holes_release(&h, g->offset, g->size);
    }
    for (; next_start < p->group_count && p->groups[next_start].start == pos; next_start++) {
      Group *g = &p->groups[next_start];
      g->offset = g->size > 0 ? holes_take(&h, g->size) : 0;
    }
  }
  mem_free(by_end);
  mem_free(h.offset);
  mem_free(h.size);
  return h.peak;
}

/* The position where the live groups' bytes add up to the most. */
static void plan_peak(const Planner *p, BufferPlan *plan) {
  int64_t *delta = mem_calloc((size_t)p->n + 1, sizeof(int64_t));
  for (int g = 0; g < p->group_count; g++) {
    delta[p->groups[g].start] += p->groups[g].size;
    delta[p->groups[g].end + 1] -= p->groups[g].size;
  }
  int64_t live = 0;
  for (int pos = 0; pos < p->n; pos++) {
    live += delta[pos];
    if (live > plan->peak_live_bytes) {
      plan->peak_live_bytes = live;
      plan->peak_position = pos;
    }
  }
  mem_free(delta);
}

BufferPlan *buffer_plan_create(const Computation *c) {
  Planner p;
  planner_init(&p, c);
  plan_storage(&p);
  plan_liveness(&p);
  plan_io_aliases(&p);
  plan_in_place(&p);
  BufferPlan *plan = mem_calloc(1, sizeof *plan);
  plan->computation = c;
  plan->temp_bytes = plan_offsets(&p);
  plan_peak(&p, plan);
  for (int l = 0; l < p.leaf_count; l++) {
    if (p.slots[l].kind != BUFFER_TEMP) continue;
    p.slots[l].offset = p.groups[p.group[l]].offset;
    plan->naive_temp_bytes += align_up(p.slots[l].size);
  }
  plan->slot_count = p.leaf_count;
  plan->slots = p.slots;
  p.slots = NULL;
  planner_free(&p);
  return plan;
}

void buffer_plan_free(BufferPlan *plan) {
  if (!plan) return;
  mem_free(plan->slots);
  mem_free(plan);
}

/* Slots are in position order, so a binary search on the instruction's
 * index finds it while the plan is current; a linear search covers a
 * computation edited since. */
const BufferSlot *buffer_plan_find(const BufferPlan *plan, const Instruction *inst, int output_index) {
  if (!plan || !inst) return NULL;
  int lo = 0, hi = plan->slot_count;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    const BufferSlot *s = &plan->slots[mid];
    bool before = s->inst->index < inst->index ||
                  (s->inst->index == inst->index && s->output_index < output_index);
    if (before) lo = mid + 1;
    else hi = mid;
  }
  if (lo < plan->slot_count && plan->slots[lo].inst == inst && plan->slots[lo].output_index == output_index)
    return &plan->slots[lo];
  for (int i = 0; i < plan->slot_count; i++)
    if (plan->slots[i].inst == inst && plan->slots[i].output_index == output_index) return &plan->slots[i];
  return NULL;
}

int64_t buffer_plan_naive_temp_bytes(const Module *m) {
  if (!m || !m->entry || !m->entry->root) return 0;
  BufferPlan *plan = buffer_plan_create(m->entry);
  int64_t bytes = plan->naive_temp_bytes;
  buffer_plan_free(plan);
  return bytes;
}

/* ---- computations the entry runs ---- */

/* What each computation needs while it runs, computed once each: a
 * computation called from many places (or a diamond of calls) would
 * otherwise be planned again for every path to it. */
typedef struct CalleeCache {
  const Computation **computations;
  int64_t *bytes;
  int count, capacity;
} CalleeCache;

static int64_t callees_temp_bytes(const Computation *c, CalleeCache *cache);

/* The block of callee c plus what its own callees need on top of it. */
static int64_t callee_run_bytes(const Computation *c, CalleeCache *cache) {
  for (int i = 0; i < cache->count; i++)
    if (cache->computations[i] == c) return cache->bytes[i];
  BufferPlan *plan = buffer_plan_create(c);
  int64_t bytes = plan->temp_bytes + callees_temp_bytes(c, cache);
  buffer_plan_free(plan);
  if (cache->count == cache->capacity) {
    cache->capacity = cache->capacity ? cache->capacity * 2 : 8;
    cache->computations =
        mem_realloc(cache->computations, sizeof(Computation *) * (size_t)cache->capacity);
    cache->bytes = mem_realloc(cache->bytes, sizeof(int64_t) * (size_t)cache->capacity);
  }
  cache->computations[cache->count] = c;
  cache->bytes[cache->count++] = bytes;
  return bytes;
}

/* The most that one of the computations c runs (while condition and body,
 * a conditional's branches, a call) needs at a time. Their parameters and
 * results are the calling instruction's own buffers; the computations that
 * reduce, sort, map or fusion apply run inside a kernel and need none. */
static int64_t callees_temp_bytes(const Computation *c, CalleeCache *cache) {
  int64_t most = 0;
  for (int i = 0; i < c->instruction_count; i++) {
    const Instruction *inst = c->instructions[i];
    if (inst->opcode != OP_WHILE && inst->opcode != OP_CONDITIONAL && inst->opcode != OP_CALL) continue;
    for (int k = 0; k < inst->called_count; k++) {
      int64_t bytes = inst->called[k] && inst->called[k]->root ? callee_run_bytes(inst->called[k], cache) : 0;
      if (bytes > most) most = bytes;
    }
  }
  return most;
}

/* ---- the pass ---- */

bool assign_buffers(Module *m, OptContext *ctx, bool *failed, Status *st) {
  if (!m->entry || !m->entry->root) return false;
  buffer_plan_free(ctx->plan);
  BufferPlan *plan = ctx->plan = buffer_plan_create(m->entry);
  CalleeCache cache = {0};
  plan->called_temp_bytes = callees_temp_bytes(m->entry, &cache);
  mem_free(cache.computations);
  mem_free(cache.bytes);
  int64_t limit = ctx->options.max_temp_bytes, needed = plan->temp_bytes + plan->called_temp_bytes;
  if (limit > 0 && needed > limit) {
    StrBuf largest = {0};
    print_largest_buffers(&largest, plan, 5);
    status_error(st, STATUS_UNSUPPORTED,
                 "module '%s' needs %lld bytes of temporary memory (%lld in the entry's block, %lld more "
                 "while a loop body or called computation runs), more than --max_temp_bytes=%lld; "
                 "the largest buffers live at the entry's peak:\n%s",
                 m->name, (long long)needed, (long long)plan->temp_bytes, (long long)plan->called_temp_bytes,
                 (long long)limit, largest.data ? largest.data : "");
    strbuf_free(&largest);
    *failed = true;
  }
  return false;
}

/* ---- reports ---- */

static const char *buffer_kind_name(BufferKind kind) {
  switch (kind) {
  case BUFFER_PARAMETER: return "parameter";
  case BUFFER_CONSTANT: return "constant";
  case BUFFER_OUTPUT: return "output";
  case BUFFER_TEMP: return "temp";
  case BUFFER_ALIAS: return "alias";
  }
  return "?";
}

/* "name" or "name{k}" for leaf k of a tuple-shaped result. */
static void print_leaf_name(StrBuf *sb, const Instruction *inst, int leaf) {
  if (shape_is_tuple(&inst->shape)) strbuf_printf(sb, "%s{%d}", inst->name, leaf);
  else strbuf_printf(sb, "%s", inst->name);
}

static void print_slot_comment(StrBuf *sb, const BufferSlot *s, int leaves) {
  strbuf_printf(sb, "  /* slot");
  if (leaves > 1 || shape_is_tuple(&s->inst->shape)) strbuf_printf(sb, "[%d]", s->output_index);
  if (s->kind == BUFFER_TEMP) strbuf_printf(sb, ": offset=%lld", (long long)s->offset);
  else strbuf_printf(sb, ": offset=-");
  strbuf_printf(sb, " size=%lld live=[%d,%d] kind=%s", (long long)s->size, s->live_from, s->live_to,
                buffer_kind_name(s->kind));
  if (s->kind == BUFFER_PARAMETER) strbuf_printf(sb, "(%lld)", (long long)s->parameter_number);
  if (s->kind == BUFFER_OUTPUT && s->parameter_number >= 0)
    strbuf_printf(sb, " donated=parameter(%lld)", (long long)s->parameter_number);
  if (s->shares_with) {
    strbuf_printf(sb, " in_place_over=");
    print_leaf_name(sb, s->shares_with, s->shares_with_index);
  }
  if (s->kind == BUFFER_ALIAS && s->source) {
    strbuf_printf(sb, " of=");
    print_leaf_name(sb, s->source, s->source_index);
  }
  strbuf_printf(sb, " */\n");
}

/* The printer writes a computation as "ENTRY name {", one line per
 * instruction in order, then "}"; the slot comments go before each line. */
static void print_entry_with_slots(StrBuf *sb, const char *text, const Computation *entry,
                                   const BufferPlan *plan) {
  const char *line = text;
  int i = -1; /* -1: the ENTRY line itself */
  while (*line) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
    if (i >= 0 && i < entry->instruction_count && !(len >= 1 && line[0] == '}')) {
      /* An instruction's slots sit side by side, leaf 0 first. */
      const Instruction *inst = entry->instructions[i++];
      const BufferSlot *first = buffer_plan_find(plan, inst, 0), *end = plan->slots + plan->slot_count;
      int leaves = 0;
      while (first && first + leaves < end && first[leaves].inst == inst) leaves++;
      for (int k = 0; k < leaves; k++) print_slot_comment(sb, &first[k], leaves);
    } else if (i >= 0) {
      i = entry->instruction_count; /* past the entry: copy the rest as it is */
    } else {
      i = 0;
    }
    strbuf_printf(sb, "%.*s", (int)len, line);
    line += len;
  }
}

void print_buffer_plan(StrBuf *sb, const Module *m, const BufferPlan *plan) {
  StrBuf text = {0};
  print_module(&text, m);
  const Computation *entry = m->entry;
  if (!plan || !entry || plan->computation != entry || !text.data) {
    strbuf_printf(sb, "/* no buffer plan for this module */\n%s", text.data ? text.data : "");
    strbuf_free(&text);
    return;
  }
  strbuf_printf(sb,
                "/* Buffer assignment of ENTRY %s: one temporary block of %lld bytes\n"
                " * (%lld if every temporary had its own buffer); the most bytes live at once,\n"
                " * %lld, at position %d. Offsets are into the block, %d-byte aligned.\n"
                " * Loop bodies and called computations need %lld bytes more while they run. */\n",
                entry->name, (long long)plan->temp_bytes, (long long)plan->naive_temp_bytes,
                (long long)plan->peak_live_bytes, plan->peak_position, BUFFER_ALIGNMENT,
                (long long)plan->called_temp_bytes);
  const char *at = strstr(text.data, "\nENTRY ");
  size_t head = at ? (size_t)(at - text.data) + 1 : 0;
  strbuf_printf(sb, "%.*s", (int)head, text.data);
  print_entry_with_slots(sb, text.data + head, entry, plan);
  strbuf_free(&text);
}

static int compare_slot_size(const void *a, const void *b) {
  const BufferSlot *x = *(const BufferSlot *const *)a, *y = *(const BufferSlot *const *)b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return x->live_from - y->live_from;
}

/* The temporaries live at the peak. Two of them share an offset only in an
 * in-place hand-over at that position; the newer value is listed. */
void print_largest_buffers(StrBuf *sb, const BufferPlan *plan, int count) {
  if (!plan) return;
  const BufferSlot **live = mem_calloc((size_t)plan->slot_count + 1, sizeof(BufferSlot *));
  int n = 0;
  for (int i = plan->slot_count - 1; i >= 0; i--) {
    const BufferSlot *s = &plan->slots[i];
    if (s->kind != BUFFER_TEMP || s->size == 0 || s->live_from > plan->peak_position ||
        s->live_to < plan->peak_position)
      continue;
    bool seen = false;
    for (int j = 0; j < n && !seen; j++) seen = live[j]->offset == s->offset;
    if (!seen) live[n++] = s;
  }
  qsort(live, (size_t)n, sizeof *live, compare_slot_size);
  for (int i = 0; i < n && i < count; i++) {
    const BufferSlot *s = live[i];
    StrBuf shape = {0};
    shape_print(&shape, s->shape, false);
    strbuf_printf(sb, "  %10lld bytes  ", (long long)s->size);
    print_leaf_name(sb, s->inst, s->output_index);
    strbuf_printf(sb, " = %s %s  live=[%d,%d]", shape.data ? shape.data : "", opcode_name(s->inst->opcode),
                  s->live_from, s->live_to);
    /* instruction_describe gives "name (op_name at file:line)": the part
     * after the name says where in the user's program the buffer comes from. */
    StrBuf where = {0};
    instruction_describe(&where, s->inst);
    size_t name_len = strlen(s->inst->name);
    strbuf_printf(sb, "%s\n", where.data && where.len > name_len ? where.data + name_len : "");
    strbuf_free(&where);
    strbuf_free(&shape);
  }
  mem_free(live);
}
