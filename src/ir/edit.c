/* The IR editing core: what passes use to rewrite a module in place.
 *
 * Every function here keeps three invariants that the rest of axle reads
 * without checking:
 *   - use lists: inst->users holds each instruction that reads inst, once,
 *     however many of its operands are inst. They are updated incrementally
 *     (a replace or a removal touches only the instructions involved), so a
 *     pass never rebuilds them and a pipeline never walks the whole module to
 *     find who reads what;
 *   - order: a computation lists operands before users and inst->index is the
 *     instruction's position;
 *   - names: every instruction name is unique in the module, and new names
 *     come from module_unique_name, which also knows every parsed name.
 * Growing arrays live in the module's arena and double, so appending is O(1)
 * amortised; the blocks they leave behind go with the arena.
 * Cloning is in edit_clone.c and attribute equality in edit_compare.c. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* -------------------------------------------------------------- growth */

/* Makes room for one more item in an arena array of *capacity items. */
static void *arena_grow(Arena *arena, void *items, int count, int *capacity, size_t item_size) {
  if (count < *capacity) return items;
  int grown_capacity = *capacity ? *capacity * 2 : 4;
  void *grown = arena_alloc(arena, item_size * (size_t)grown_capacity);
  if (count) memcpy(grown, items, item_size * (size_t)count);
  *capacity = grown_capacity;
  return grown;
}

/* ------------------------------------------------------------ use lists */

static int operand_occurrences(const Instruction *user, const Instruction *operand) {
  int n = 0;
  for (int k = 0; k < user->operand_count; k++) n += user->operands[k] == operand;
  return n;
}

static void users_append(Instruction *operand, Instruction *user) {
  Arena *arena = &operand->parent->module->arena;
  operand->users = arena_grow(arena, operand->users, operand->user_count, &operand->user_capacity,
                              sizeof *operand->users);
  operand->users[operand->user_count++] = user;
}

/* Keeps the order of the others, so that walks over users are deterministic. */
static void users_remove(Instruction *operand, Instruction *user) {
  for (int i = 0; i < operand->user_count; i++) {
    if (operand->users[i] != user) continue;
    memmove(&operand->users[i], &operand->users[i + 1],
            sizeof *operand->users * (size_t)(operand->user_count - i - 1));
    operand->user_count--;
    return;
  }
  assert(!"use list lacks a user");
}

/* Lists inst in the use list of each of its operands (once per operand). */
static void users_link(Instruction *inst) {
  for (int k = 0; k < inst->operand_count; k++) {
    Instruction *operand = inst->operands[k];
    bool earlier = false;
    for (int j = 0; j < k && !earlier; j++) earlier = inst->operands[j] == operand;
    if (!earlier) users_append(operand, inst);
  }
}

static void users_unlink(Instruction *inst) {
  for (int k = 0; k < inst->operand_count; k++) {
    Instruction *operand = inst->operands[k];
    bool earlier = false;
    for (int j = 0; j < k && !earlier; j++) earlier = inst->operands[j] == operand;
    if (!earlier) users_remove(operand, inst);
  }
}

void computation_link_users(Computation *c) {
  for (int i = 0; i < c->instruction_count; i++) users_link(c->instructions[i]);
}

void instruction_set_operand(Instruction *inst, int i, Instruction *operand) {
  assert(i >= 0 && i < inst->operand_count);
  Instruction *old = inst->operands[i];
  if (old == operand) return;
  inst->operands[i] = operand;
  if (operand_occurrences(inst, old) == 0) users_remove(old, inst);
  if (operand_occurrences(inst, operand) == 1) users_append(operand, inst);
}

void instruction_replace_all_uses(Instruction *old, Instruction *replacement) {
  if (old == replacement) return;
  int kept = 0;
  for (int u = 0; u < old->user_count; u++) {
    Instruction *user = old->users[u];
    /* replacement may read old (y = f(x) taking x's place): it keeps doing so. */
    if (user == replacement) {
      old->users[kept++] = user;
      continue;
    }
    bool already = operand_occurrences(user, replacement) > 0;
    for (int k = 0; k < user->operand_count; k++)
      if (user->operands[k] == old) user->operands[k] = replacement;
    if (!already) users_append(replacement, user);
  }
  old->user_count = kept;
  if (old->parent->root == old) old->parent->root = replacement;
}

void computation_set_root(Computation *c, Instruction *root) {
  assert(root && root->parent == c);
  c->root = root;
}

/* ------------------------------------------------------ adding, moving */

static void computation_renumber(Computation *c, int from) {
  for (int i = from; i < c->instruction_count; i++) c->instructions[i]->index = i;
}

void computation_append_instruction(Computation *c, Instruction *inst) {
  Arena *arena = &c->module->arena;
  c->instructions = arena_grow(arena, c->instructions, c->instruction_count, &c->instruction_capacity,
                               sizeof *c->instructions);
  inst->index = c->instruction_count;
  inst->parent = c;
  c->instructions[c->instruction_count++] = inst;
}

/* A parameter takes its number's slot; slots between stay NULL until filled. */
static void computation_place_parameter(Computation *c, Instruction *param) {
  int number = (int)param->attrs.parameter_number;
  assert(number >= 0);
  Arena *arena = &c->module->arena;
  while (c->parameter_capacity <= number)
    c->parameters = arena_grow(arena, c->parameters, c->parameter_capacity, &c->parameter_capacity,
                               sizeof *c->parameters);
  if (number >= c->parameter_count) c->parameter_count = number + 1;
  assert(!c->parameters[number] && "a parameter with this number already exists");
  c->parameters[number] = param;
}

void attrs_copy_into_arena(Attrs *dst, const Attrs *src, Arena *arena) {
  *dst = *src;
  if (src->padding) dst->padding = arena_memdup(arena, src->padding, sizeof(PadDims));
  if (src->window) dst->window = arena_memdup(arena, src->window, sizeof(Window));
  if (src->conv) dst->conv = arena_memdup(arena, src->conv, sizeof(ConvDims));
  if (src->slice) {
    SliceDims *s = arena_alloc(arena, sizeof *s);
    s->starts = intlist_copy(arena, src->slice->starts.values, src->slice->starts.count);
    s->limits = intlist_copy(arena, src->slice->limits.values, src->slice->limits.count);
    s->strides = intlist_copy(arena, src->slice->strides.values, src->slice->strides.count);
    dst->slice = s;
  }
  if (src->dot) {
    DotDims *d = arena_alloc(arena, sizeof *d);
    d->lhs_batch = intlist_copy(arena, src->dot->lhs_batch.values, src->dot->lhs_batch.count);
    d->rhs_batch = intlist_copy(arena, src->dot->rhs_batch.values, src->dot->rhs_batch.count);
    d->lhs_contracting = intlist_copy(arena, src->dot->lhs_contracting.values, src->dot->lhs_contracting.count);
    d->rhs_contracting = intlist_copy(arena, src->dot->rhs_contracting.values, src->dot->rhs_contracting.count);
    d->lhs_ragged = intlist_copy(arena, src->dot->lhs_ragged.values, src->dot->lhs_ragged.count);
    d->rhs_group = intlist_copy(arena, src->dot->rhs_group.values, src->dot->rhs_group.count);
    d->algorithm = src->dot->algorithm;
    dst->dot = d;
  }
  if (src->gather) {
    const GatherDims *g = src->gather;
    GatherDims *d = arena_memdup(arena, g, sizeof *g);
    d->offset_dims = intlist_copy(arena, g->offset_dims.values, g->offset_dims.count);
    d->collapsed_slice_dims = intlist_copy(arena, g->collapsed_slice_dims.values, g->collapsed_slice_dims.count);
    d->start_index_map = intlist_copy(arena, g->start_index_map.values, g->start_index_map.count);
    d->operand_batching_dims = intlist_copy(arena, g->operand_batching_dims.values, g->operand_batching_dims.count);
    d->start_indices_batching_dims =
        intlist_copy(arena, g->start_indices_batching_dims.values, g->start_indices_batching_dims.count);
    d->slice_sizes = intlist_copy(arena, g->slice_sizes.values, g->slice_sizes.count);
    dst->gather = d;
  }
  if (src->scatter) {
    const ScatterDims *s = src->scatter;
    ScatterDims *d = arena_memdup(arena, s, sizeof *s);
    d->update_window_dims = intlist_copy(arena, s->update_window_dims.values, s->update_window_dims.count);
    d->inserted_window_dims = intlist_copy(arena, s->inserted_window_dims.values, s->inserted_window_dims.count);
    d->scatter_dims_to_operand_dims =
        intlist_copy(arena, s->scatter_dims_to_operand_dims.values, s->scatter_dims_to_operand_dims.count);
    d->input_batching_dims = intlist_copy(arena, s->input_batching_dims.values, s->input_batching_dims.count);
    d->scatter_indices_batching_dims =
        intlist_copy(arena, s->scatter_indices_batching_dims.values, s->scatter_indices_batching_dims.count);
    dst->scatter = d;
  }
  if (src->scalars) dst->scalars = arena_memdup(arena, src->scalars, sizeof(ScalarAttrs));
  if (src->fft) {
    FftDims *f = arena_memdup(arena, src->fft, sizeof *f);
    f->length = intlist_copy(arena, src->fft->length.values, src->fft->length.count);
    dst->fft = f;
  }
  dst->dimensions = intlist_copy(arena, src->dimensions.values, src->dimensions.count);
  dst->dynamic_slice_sizes = intlist_copy(arena, src->dynamic_slice_sizes.values, src->dynamic_slice_sizes.count);
  dst->source_target_pairs = intlist_copy(arena, src->source_target_pairs.values, src->source_target_pairs.count);
  if (src->replica_groups) {
    ReplicaGroups *g = arena_memdup(arena, src->replica_groups, sizeof *g);
    g->ids = intlist_copy(arena, src->replica_groups->ids.values, src->replica_groups->ids.count);
    g->sizes = intlist_copy(arena, src->replica_groups->sizes.values, src->replica_groups->sizes.count);
    dst->replica_groups = g;
  }
  if (src->custom_call_target) dst->custom_call_target = arena_strdup(arena, src->custom_call_target);
  if (src->backend_config) dst->backend_config = arena_strdup(arena, src->backend_config);
}

Shape shape_copy_into_arena(const Shape *s, Arena *arena) {
  Shape copy = *s;
  if (s->type == TYPE_TUPLE && s->tuple_count > 0) {
    copy.tuple_shapes = arena_alloc(arena, sizeof(Shape) * (size_t)s->tuple_count);
    for (int i = 0; i < s->tuple_count; i++) copy.tuple_shapes[i] = shape_copy_into_arena(&s->tuple_shapes[i], arena);
  }
  return copy;
}

Instruction *computation_add_instruction(Computation *c, Opcode op, Instruction *const *operands,
                                         int operand_count, Computation *const *called,
                                         int called_count, const Attrs *attrs, const Shape *shape,
                                         const char *name_base) {
  Module *m = c->module;
  for (int k = 0; k < operand_count; k++)
    assert(operands[k] && operands[k]->parent == c && "operands come from the same computation");
  Arena *arena = &m->arena;
  Instruction *inst = arena_alloc(arena, sizeof *inst);
  inst->opcode = op;
  inst->parent = c;
  if (attrs) attrs_copy_into_arena(&inst->attrs, attrs, arena);
  if (inst->attrs.literal) module_adopt_literal(m, inst->attrs.literal);
  inst->shape = shape_copy_into_arena(shape, arena);
  inst->operand_count = operand_count;
  inst->operands = arena_alloc(arena, sizeof *operands * (size_t)(operand_count + 1));
  if (operand_count) memcpy(inst->operands, operands, sizeof *operands * (size_t)operand_count);
  inst->called_count = called_count;
  inst->called = arena_alloc(arena, sizeof *called * (size_t)(called_count + 1));
  if (called_count) memcpy(inst->called, called, sizeof *called * (size_t)called_count);
  inst->name = module_unique_name(m, name_base ? name_base : opcode_name(op));
  computation_append_instruction(c, inst);
  users_link(inst);
  if (op == OP_PARAMETER) computation_place_parameter(c, inst);
  return inst;
}

void computation_move_before(Computation *c, Instruction *inst, Instruction *before) {
  assert(inst->parent == c && before->parent == c);
  int from = inst->index, to = before->index;
  if (from == to || from == to - 1) return;
  if (from < to) {
    memmove(&c->instructions[from], &c->instructions[from + 1], sizeof *c->instructions * (size_t)(to - 1 - from));
    c->instructions[to - 1] = inst;
    computation_renumber(c, from);
  } else {
    memmove(&c->instructions[to + 1], &c->instructions[to], sizeof *c->instructions * (size_t)(from - to));
    c->instructions[to] = inst;
    computation_renumber(c, to);
  }
}

/* ------------------------------------------------------------- removing */

static void computation_drop_position(Computation *c, int position) {
  memmove(&c->instructions[position], &c->instructions[position + 1],
          sizeof *c->instructions * (size_t)(c->instruction_count - position - 1));
  c->instruction_count--;
  computation_renumber(c, position);
}

void computation_remove_instruction(Computation *c, Instruction *inst) {
  assert(inst->parent == c && c->instructions[inst->index] == inst);
  assert(inst->user_count == 0 && "an instruction with users cannot be removed");
  assert(c->root != inst && "the root cannot be removed");
  assert(inst->opcode != OP_PARAMETER && "use computation_remove_parameter");
  users_unlink(inst);
  computation_drop_position(c, inst->index);
}

void computation_remove_instructions(Computation *c, Instruction *const *dead, int count) {
  int n = c->instruction_count;
  bool *marked = mem_calloc((size_t)n + 1, sizeof *marked);
  for (int d = 0; d < count; d++) {
    Instruction *inst = dead[d];
    assert(inst->parent == c && c->instructions[inst->index] == inst);
    assert(c->root != inst && inst->opcode != OP_PARAMETER && "root and parameters stay");
    marked[inst->index] = true;
  }
  /* Each surviving operand's use list is filtered once, however many of its
   * users die: linear in the uses involved. */
  bool *filtered = mem_calloc((size_t)n + 1, sizeof *filtered);
  for (int d = 0; d < count; d++) {
    for (int u = 0; u < dead[d]->user_count; u++)
      assert(marked[dead[d]->users[u]->index] && "a removed instruction's users must be removed too");
    for (int k = 0; k < dead[d]->operand_count; k++) {
      Instruction *operand = dead[d]->operands[k];
      if (marked[operand->index] || filtered[operand->index]) continue;
      filtered[operand->index] = true;
      int kept = 0;
      for (int u = 0; u < operand->user_count; u++)
        if (!marked[operand->users[u]->index]) operand->users[kept++] = operand->users[u];
      operand->user_count = kept;
    }
  }
  int kept = 0;
  for (int i = 0; i < n; i++)
    if (!marked[i]) c->instructions[kept++] = c->instructions[i];
  c->instruction_count = kept;
  computation_renumber(c, 0);
  mem_free(marked);
  mem_free(filtered);
}

void computation_remove_parameter(Computation *c, int number) {
  assert(!c->is_entry && number >= 0 && number < c->parameter_count);
  Instruction *param = c->parameters[number];
  assert(param && param->user_count == 0 && c->root != param);
  computation_drop_position(c, param->index);
  for (int k = number + 1; k < c->parameter_count; k++) {
    c->parameters[k - 1] = c->parameters[k];
    if (c->parameters[k - 1]) c->parameters[k - 1]->attrs.parameter_number = k - 1;
  }
  c->parameters[--c->parameter_count] = NULL;
}

/* -------------------------------------------------------------- sorting */

/* A depth-first walk from each instruction in the current order, emitting
 * an instruction after its operands: an order that is already legal comes
 * out unchanged. The walk keeps its own stack, so a long chain written
 * backwards cannot exhaust the C stack. An operand still on the stack
 * closes a cycle. */
bool computation_sort_or_find_cycle(Computation *c, Instruction **user, int *operand_index) {
  int n = c->instruction_count;
  char *state = mem_calloc((size_t)n + 1, 1); /* 0 new, 1 on the stack, 2 emitted */
  int *stack = mem_calloc((size_t)n + 1, sizeof *stack);
  int *next_operand = mem_calloc((size_t)n + 1, sizeof *next_operand);
  Instruction **order = mem_calloc((size_t)n + 1, sizeof *order);
  int emitted = 0;
  bool ok = true;
  for (int i = 0; i < n; i++) c->instructions[i]->index = i;
  for (int start = 0; ok && start < n; start++) {
    if (state[start]) continue;
    int top = 0;
    stack[top++] = start;
    state[start] = 1;
    while (ok && top > 0) {
      int i = stack[top - 1];
      Instruction *inst = c->instructions[i];
      if (next_operand[i] == inst->operand_count) {
        state[i] = 2;
        top--;
        order[emitted++] = inst;
        continue;
      }
      int k = next_operand[i]++;
      int j = inst->operands[k]->index;
      if (state[j] == 1) {
        *user = inst;
        *operand_index = k;
        ok = false;
      } else if (state[j] == 0) {
        state[j] = 1;
        stack[top++] = j;
      }
    }
  }
  if (ok) {
    memcpy(c->instructions, order, sizeof *order * (size_t)n);
    computation_renumber(c, 0);
  }
  mem_free(state);
  mem_free(stack);
  mem_free(next_operand);
  mem_free(order);
  return ok;
}

bool computation_sort(Computation *c, Status *st) {
  Instruction *user = NULL;
  int k = 0;
  if (computation_sort_or_find_cycle(c, &user, &k)) return true;
  return status_error_at(st, STATUS_VERIFY_ERROR, c->module->filename, user->loc,
                         "instruction '%s' is part of a cycle through '%s' (in computation '%s')", user->name,
                         user->operands[k]->name, c->name);
}

/* A pointer -> int map, open addressing, for the module-wide walks. */
typedef struct PtrIndex {
  const void **keys;
  int *values;
  int capacity;
} PtrIndex;

static void ptr_index_init(PtrIndex *pi, int count) {
  pi->capacity = 16;
  while (pi->capacity < count * 2) pi->capacity *= 2;
  pi->keys = mem_calloc((size_t)pi->capacity, sizeof *pi->keys);
  pi->values = mem_calloc((size_t)pi->capacity, sizeof *pi->values);
}

static int ptr_index_slot(const PtrIndex *pi, const void *key) {
  uint64_t h = (uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull;
  int i = (int)(h >> 40) & (pi->capacity - 1);
  while (pi->keys[i] && pi->keys[i] != key) i = (i + 1) & (pi->capacity - 1);
  return i;
}

static void ptr_index_free(PtrIndex *pi) {
  mem_free(pi->keys);
  mem_free(pi->values);
}

/* The same walk as computation_sort over call edges, the entry walked last.
 * On a cycle the computation on the stack is skipped, so the order stays a
 * permutation and the verifier reports the call that goes backwards. */
void module_sort_computations(Module *m) {
  int n = m->computation_count;
  PtrIndex index;
  ptr_index_init(&index, n);
  for (int c = 0; c < n; c++) {
    int slot = ptr_index_slot(&index, m->computations[c]);
    index.keys[slot] = m->computations[c];
    index.values[slot] = c;
  }
  char *state = mem_calloc((size_t)n + 1, 1);
  int *stack = mem_calloc((size_t)n + 1, sizeof *stack);
  int *next_inst = mem_calloc((size_t)n + 1, sizeof *next_inst);
  int *next_call = mem_calloc((size_t)n + 1, sizeof *next_call);
  Computation **order = mem_calloc((size_t)n + 1, sizeof *order);
  int emitted = 0;
  for (int round = 0; round < 2; round++) {
    for (int start = 0; start < n; start++) {
      /* First every computation but the entry, then the entry, so it is last. */
      if (state[start] || (round == 0) == (m->computations[start] == m->entry)) continue;
      int top = 0;
      stack[top++] = start;
      state[start] = 1;
      while (top > 0) {
        int c = stack[top - 1];
        const Computation *comp = m->computations[c];
        if (next_inst[c] == comp->instruction_count) {
          state[c] = 2;
          top--;
          order[emitted++] = m->computations[c];
          continue;
        }
        const Instruction *inst = comp->instructions[next_inst[c]];
        if (next_call[c] == inst->called_count) {
          next_inst[c]++;
          next_call[c] = 0;
          continue;
        }
        int slot = ptr_index_slot(&index, inst->called[next_call[c]++]);
        int callee = index.keys[slot] ? index.values[slot] : -1;
        if (callee >= 0 && state[callee] == 0) {
          state[callee] = 1;
          stack[top++] = callee;
        }
      }
    }
  }
  assert(emitted == n);
  memcpy(m->computations, order, sizeof *order * (size_t)n);
  mem_free(state);
  mem_free(stack);
  mem_free(next_inst);
  mem_free(next_call);
  mem_free(order);
  ptr_index_free(&index);
}

/* -------------------------------------------------------- computations */

Computation *module_add_computation(Module *m, const char *name) {
  Computation *c = arena_alloc(&m->arena, sizeof *c);
  c->name = module_unique_name(m, name);
  c->module = m;
  m->computations = arena_grow(&m->arena, m->computations, m->computation_count, &m->computation_capacity,
                               sizeof *m->computations);
  int at = m->computation_count;
  /* Before the entry, when it is last: callers of the new computation come
   * later (or are the entry). */
  if (at > 0 && m->computations[at - 1] == m->entry) {
    m->computations[at] = m->entry;
    at--;
  }
  m->computations[at] = c;
  m->computation_count++;
  return c;
}

int computation_caller_count(const Module *m, const Computation *c) {
  int callers = 0;
  for (int i = 0; i < m->computation_count; i++) {
    const Computation *comp = m->computations[i];
    for (int k = 0; k < comp->instruction_count; k++) {
      const Instruction *inst = comp->instructions[k];
      for (int j = 0; j < inst->called_count; j++) callers += inst->called[j] == c;
    }
  }
  return callers;
}

void module_remove_computation(Module *m, Computation *c) {
  assert(c != m->entry && computation_caller_count(m, c) == 0);
  for (int i = 0; i < m->computation_count; i++) {
    if (m->computations[i] != c) continue;
    memmove(&m->computations[i], &m->computations[i + 1],
            sizeof *m->computations * (size_t)(m->computation_count - i - 1));
    m->computation_count--;
    return;
  }
  assert(!"computation is not in the module");
}

/* ------------------------------------------------------ names, literals */

static uint64_t name_hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* The slot holding name (n bytes), or the empty slot where it would go. */
static NameSlot *name_slot(const NameSet *set, const char *name, size_t n) {
  int i = (int)(name_hash(name, n) & (uint64_t)(set->capacity - 1));
  for (;;) {
    NameSlot *slot = &set->slots[i];
    if (!slot->name || (strncmp(slot->name, name, n) == 0 && slot->name[n] == '\0')) return slot;
    i = (i + 1) & (set->capacity - 1);
  }
}

static void name_set_grow(NameSet *set) {
  NameSet grown = {mem_calloc(set->capacity ? (size_t)set->capacity * 2 : 64, sizeof(NameSlot)),
                   set->capacity ? set->capacity * 2 : 64, set->count};
  for (int i = 0; i < set->capacity; i++) {
    if (!set->slots[i].name) continue;
    *name_slot(&grown, set->slots[i].name, strlen(set->slots[i].name)) = set->slots[i];
  }
  mem_free(set->slots);
  *set = grown;
}

static NameSlot *name_set_find(NameSet *set, const char *name, size_t n) {
  if ((set->count + 1) * 2 > set->capacity) name_set_grow(set);
  return name_slot(set, name, n);
}

bool module_register_name(Module *m, const char *name) {
  NameSlot *slot = name_set_find(&m->names, name, strlen(name));
  if (slot->name) return false;
  slot->name = name;
  m->names.count++;
  return true;
}

/* "add.12" -> length of "add"; names without a numeric suffix keep theirs. */
static size_t name_stem_length(const char *name) {
  size_t n = strlen(name), i = n;
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') i--;
  if (i > 1 && i < n && name[i - 1] == '.') return i - 1;
  return n;
}

const char *module_unique_name(Module *m, const char *base) {
  if (!base || !*base) base = "x";
  NameSlot *slot = name_set_find(&m->names, base, strlen(base));
  if (!slot->name) {
    slot->name = arena_strdup(&m->arena, base);
    m->names.count++;
    return slot->name;
  }
  size_t stem_length = name_stem_length(base);
  char *stem = arena_strndup(&m->arena, base, stem_length);
  /* The stem's slot remembers the next suffix to try, so naming n copies of
   * "add" costs O(n), not O(n^2). */
  NameSlot *stem_slot = name_set_find(&m->names, stem, stem_length);
  if (!stem_slot->name) {
    stem_slot->name = stem;
    m->names.count++;
    stem_slot->next_suffix = 1;
  }
  int suffix = stem_slot->next_suffix > 0 ? stem_slot->next_suffix : 1;
  size_t cap = stem_length + 16;
  char *candidate = arena_alloc(&m->arena, cap);
  for (;; suffix++) {
    snprintf(candidate, cap, "%s.%d", stem, suffix);
    NameSlot *s = name_set_find(&m->names, candidate, strlen(candidate));
    if (s->name) continue;
    s->name = candidate;
    m->names.count++;
    /* name_set_find may have moved the table: look the stem up again. */
    name_set_find(&m->names, stem, stem_length)->next_suffix = suffix + 1;
    return candidate;
  }
}

void module_adopt_literal(Module *m, Literal *lit) {
  if (m->literal_count == m->literal_capacity) {
    m->literal_capacity = m->literal_capacity ? m->literal_capacity * 2 : 16;
    m->literals = mem_realloc(m->literals, sizeof *m->literals * (size_t)m->literal_capacity);
  }
  m->literals[m->literal_count++] = lit;
}
