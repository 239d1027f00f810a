/* Pass fuse_module ("fusion"): groups instructions into fusions, the unit
 * a code generator compiles into one kernel, so that the values between
 * them stay in registers instead of making a round trip through memory.
 * This is where most of an XLA-style compiler's speed comes from.
 *
 * requires: a verified module. Fusions already present are kept as they
 *   are and treated as opaque; so are reducer (to_apply) computations.
 * guarantees: every value is computed as before (members are cloned, never
 *   rewritten); each fused computation it makes is called by one fusion
 *   instruction (cse may later share identical ones); nothing expensive is
 *   computed more than once per element; a tuple that reads exactly a
 *   fusion's outputs is replaced by the fusion. docs/fusion.md explains
 *   the whole pass for a reader new to it.
 * breaks: the schedule and the buffer plan (fusions are appended and each
 *   computation is sorted again).
 *
 * Three kinds of fusion, named as XLA names them; the code generators
 * (the next stage) rely on exactly these shapes:
 *   kLoop   elementwise and data-movement ops (broadcast, reshape,
 *           transpose, slice, pad, concatenate, ...): one loop over the
 *           output's elements, each member computed at the index its
 *           consumer asks for. Several outputs of the same dimensions make
 *           a multi-output fusion (a tuple root).
 *   kInput  a row kernel: one or more reduces over the same rows (same
 *           operand dimensions, same reduced dimensions) with the ops that
 *           feed them, and after them ops on the reduced values (computed
 *           once per row) and ops back over the row that read the reduced
 *           values through a broadcast along the kept dimensions, as
 *           softmax and layer norm do. Such a later pass over a row reads
 *           the row again, so the kernel keeps the row in a buffer; rows
 *           are limited to FUSION_ROW_BUFFER_ELEMENTS for that.
 *           Outputs have the row's or the reduced dimensions.
 *   kOutput one dot or convolution with elementwise ops applied to each
 *           of its results as it is stored (bias, activation, residual:
 *           the epilogue). The dot's operands are never fused into it.
 *
 * How the groups are chosen:
 *   1. producers into consumers (fuse_producers): each computation is
 *      walked from its root back, so an instruction is visited after all
 *      its users. It joins the group of its users when that group stays
 *      a valid fusion (candidate_is_valid); a cheap instruction read by
 *      several groups is duplicated into each; otherwise it joins one of
 *      them and is also written out (a multi-output fusion), or starts a
 *      group of its own.
 *   2. whole groups merge (merge_groups): a reduction into the row ops
 *      that consume it, and siblings that read the same input.
 *   3. each group becomes a fused computation and a fusion (fusion_build.c).
 * Nothing expensive is ever recomputed: an instruction of cost COST_MATH
 * (or a reduce, or a dot) is never duplicated into two fusions, nor
 * placed under a broadcast that would compute it once per copy.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opt/fusion_internal.h"

/* More members than this make kernels that are hard to compile and read;
 * XLA caps fusions too. */
enum { FUSION_MAX_MEMBERS = 200 };
/* A row kernel that reads a row again after reducing it holds the row in
 * a buffer (registers, shared memory or L1): 4096 f32 are 16 KiB. */
enum { FUSION_ROW_BUFFER_ELEMENTS = 4096 };
/* A cheap instruction is copied into at most this many fusions, and a
 * copy's own producers are copied again at most this deep: a chain of
 * cheap adds read by many kernels would otherwise be recomputed, whole,
 * in every one of them. */
enum { FUSION_MAX_COPIES = 16, FUSION_MAX_COPY_DEPTH = 3 };
/* Cycle searches and merges cost work; a computation of n instructions
 * gets this much per instruction, so that fusion stays linear on very
 * large modules. Once spent, a search answers "cycle" (the join is
 * refused: safe, only less fused) and no more merges are tried. */
enum { FUSION_WORK_PER_INSTRUCTION = 64 };

/* ------------------------------------------------------------ small sets */

/* Inserts x into an ascending list unless it is there already. */
static void intvec_insert_sorted(IntVec *v, int x) {
  int at = v->count;
  while (at > 0 && v->items[at - 1] > x) at--;
  if (at > 0 && v->items[at - 1] == x) return;
  fusion_intvec_push(v, x);
  memmove(&v->items[at + 1], &v->items[at], sizeof *v->items * (size_t)(v->count - 1 - at));
  v->items[at] = x;
}

/* ------------------------------------------------- what may be fused */

static bool is_core(const Instruction *inst) {
  return inst->opcode == OP_DOT || inst->opcode == OP_CONVOLUTION;
}

/* Ops that can live inside a fusion. Scalar constants are not members:
 * fusion_build.c clones one into every fusion that reads it. */
static bool inst_is_fusible(const Instruction *inst) {
  if (shape_is_tuple(&inst->shape) || opcode_has_side_effects(inst->opcode)) return false;
  if (opcode_is_elementwise(inst->opcode)) return true;
  switch (inst->opcode) {
  case OP_BROADCAST: case OP_RESHAPE: case OP_BITCAST: case OP_TRANSPOSE: case OP_SLICE:
  case OP_PAD: case OP_CONCATENATE: case OP_REVERSE: case OP_IOTA: case OP_COPY:
  case OP_DYNAMIC_SLICE: case OP_DOT: case OP_CONVOLUTION:
    return true;
  case OP_BITCAST_CONVERT: /* one element to one element only when the widths agree */
    return shape_same_dims(&inst->shape, &inst->operands[0]->shape);
  case OP_REDUCE:          /* single-output reduces; variadic ones stay alone */
    return inst->operand_count == 2;
  default:
    return false;
  }
}

/* What is worth a kernel of its own when nothing else takes it: a lone
 * bitcast is free, a lone dot is already one kernel, and dead code is
 * left for dce. */
static bool inst_starts_group(const Instruction *inst) {
  return inst_is_fusible(inst) && inst->opcode != OP_BITCAST && !is_core(inst) &&
         (inst->user_count > 0 || inst == inst->parent->root);
}

/* Cheap enough to compute again in every fusion that reads it. */
static bool inst_is_duplicable(const Instruction *inst) {
  return opcode_cost(inst->opcode) == COST_CHEAP && inst->opcode != OP_REDUCE && !is_core(inst);
}

/* ----------------------------------------------------- group membership */

static bool in_candidate(const Fuser *f, const Instruction *inst) {
  int i = fuser_inst_id(f, inst);
  return i >= 0 && f->cand_mark[i] == f->cand_stamp;
}

static void candidate_add(Fuser *f, IntVec *cand, int i) {
  if (f->cand_mark[i] == f->cand_stamp) return;
  f->cand_mark[i] = f->cand_stamp;
  intvec_insert_sorted(cand, i);
}

/* A new candidate made of groups a and b (-1: none) and what is added. */
static void candidate_begin(Fuser *f, IntVec *cand, int a, int b) {
  f->cand_stamp++;
  cand->count = 0;
  f->cand_group_count = 0;
  if (a >= 0) f->cand_groups[f->cand_group_count++] = a;
  if (b >= 0) f->cand_groups[f->cand_group_count++] = b;
  for (int k = 0; k < f->cand_group_count; k++) {
    const IntVec *members = &f->groups[f->cand_groups[k]].members;
    for (int q = 0; q < members->count; q++) candidate_add(f, cand, members->items[q]);
  }
}

/* ------------------------------------------------ is a candidate valid? */

static uint32_t reduced_dims_mask(const Instruction *reduce) {
  uint32_t mask = 0;
  for (int k = 0; k < reduce->attrs.dimensions.count; k++) mask |= 1u << reduce->attrs.dimensions.values[k];
  return mask;
}

/* Two reduces share a row kernel when they reduce the same dimensions of
 * operands of the same dimensions. */
static bool reduces_share_rows(const Instruction *a, const Instruction *b) {
  return shape_same_dims(&a->operands[0]->shape, &b->operands[0]->shape) &&
         reduced_dims_mask(a) == reduced_dims_mask(b);
}

/* broadcast(reduced value) back over the rows: its dimensions are the
 * kept dimensions of the reduce, in order. In a row kernel it reads the
 * row's one reduced value, so it copies nothing expensive. */
static bool broadcast_restores_rows(const Instruction *b, const Instruction *reduce) {
  if (b->opcode != OP_BROADCAST || !reduce) return false;
  const Shape *row = &reduce->operands[0]->shape;
  if (!shape_same_dims(&b->operands[0]->shape, &reduce->shape) || !shape_same_dims(&b->shape, row))
    return false;
  uint32_t mask = reduced_dims_mask(reduce);
  int k = 0;
  for (int d = 0; d < row->rank; d++) {
    if (mask & (1u << d)) continue;
    if (k >= b->attrs.dimensions.count || b->attrs.dimensions.values[k] != d) return false;
    k++;
  }
  return k == b->attrs.dimensions.count;
}

static int64_t row_element_count(const Instruction *reduce) {
  const Shape *row = &reduce->operands[0]->shape;
  uint32_t mask = reduced_dims_mask(reduce);
  int64_t n = 1;
  for (int d = 0; d < row->rank; d++)
    if (mask & (1u << d)) n *= row->dims[d];
  return n;
}

/* The one dot or convolution and the first reduce of a candidate; false
 * when it holds two cores, a core and a reduce, reduces over different
 * rows, or a core's own operand (a dot reads its operands from memory). */
static bool candidate_find_anchors(Fuser *f, const IntVec *cand, const Instruction **core,
                                   const Instruction **reduce) {
  *core = *reduce = NULL;
  for (int k = 0; k < cand->count; k++) {
    const Instruction *inst = f->insts[cand->items[k]];
    if (is_core(inst)) {
      if (*core) return false;
      *core = inst;
    } else if (inst->opcode == OP_REDUCE) {
      if (!*reduce) *reduce = inst;
      else if (!reduces_share_rows(*reduce, inst)) return false;
    }
  }
  if (*core && *reduce) return false;
  if (*core)
    for (int k = 0; k < (*core)->operand_count; k++)
      if (in_candidate(f, (*core)->operands[k])) return false;
  return true;
}

/* A bitcast of the core: canonicalize-convolutions makes each convolution
 * in its canonical dim order and gives its users their dims back through
 * such a relabel of the same bytes, which the epilogue absorbs. */
static bool is_core_relabel(const Instruction *inst, const Instruction *core) {
  return core && inst->opcode == OP_BITCAST && inst->operands[0] == core;
}

/* The dims an epilogue runs over: the core's, or those of the one relabel
 * of the core the candidate holds (then nothing else in it reads the core
 * itself); NULL when the candidate's members disagree. What the fusion
 * writes has these dims too (candidate_outputs_fit). */
static const Shape *epilogue_space(Fuser *f, const Instruction *core) {
  const Instruction *relabel = NULL;
  bool read_directly = false;
  for (int q = 0; q < core->user_count; q++) {
    const Instruction *user = core->users[q];
    if (!in_candidate(f, user)) continue;
    if (!is_core_relabel(user, core)) read_directly = true;
    else if (relabel && !shape_same_dims(&relabel->shape, &user->shape)) return NULL;
    else relabel = user;
  }
  if (!relabel) return &core->shape;
  return read_directly ? NULL : &relabel->shape;
}

/* Members after a reduce or a core ("late") must fit the kernel's shape:
 * an epilogue is elementwise over the core's result (or its relabel); a row kernel goes on
 * elementwise over reduced values or over the row, and returns to the row
 * only through broadcast_restores_rows. Sets *reads_row_again. */
static bool candidate_late_members_fit(Fuser *f, const IntVec *cand, const Instruction *core,
                                       const Instruction *reduce, bool *reads_row_again) {
  *reads_row_again = false;
  const Shape *space = core ? epilogue_space(f, core) : NULL;
  if (core && !space) return false;
  for (int k = 0; k < cand->count; k++) {
    int i = cand->items[k];
    const Instruction *inst = f->insts[i];
    bool late = false;
    for (int q = 0; q < inst->operand_count; q++) {
      const Instruction *o = inst->operands[q];
      if (!in_candidate(f, o)) continue;
      late |= f->late[o->index] || o->opcode == OP_REDUCE || o == core;
    }
    f->late[i] = late;
    if (!late || inst->opcode == OP_REDUCE) continue;
    bool elementwise = opcode_is_elementwise(inst->opcode);
    if (core) {
      if (is_core_relabel(inst, core)) continue;
      if (!elementwise || !shape_same_dims(&inst->shape, space)) return false;
    } else if (broadcast_restores_rows(inst, reduce)) {
      *reads_row_again = true;
    } else if (!elementwise) {
      return false;
    } else if (shape_same_dims(&inst->shape, &reduce->operands[0]->shape)) {
      *reads_row_again = true;
    } else if (!shape_same_dims(&inst->shape, &reduce->shape)) {
      return false;
    }
  }
  return true;
}

/* What a fusion writes must have the dimensions of its iteration space,
 * and be no more values than one kernel stores (src/opt/lower.c keeps a
 * kernel's outputs in arrays of AXLE_MAX_RANK). */
static bool candidate_outputs_fit(Fuser *f, const IntVec *cand, const Instruction *core,
                                  const Instruction *reduce) {
  const Shape *loop_space = NULL, *space = core ? epilogue_space(f, core) : NULL;
  int outputs = 0;
  for (int k = 0; k < cand->count; k++) {
    int i = cand->items[k];
    if (!fuser_is_output(f, i)) continue;
    if (++outputs > AXLE_MAX_RANK) return false;
    const Instruction *inst = f->insts[i];
    if (core) {
      if ((inst != core && !f->late[i]) || !space || !shape_same_dims(&inst->shape, space)) return false;
    } else if (reduce) {
      if (!shape_same_dims(&inst->shape, &reduce->shape) &&
          !shape_same_dims(&inst->shape, &reduce->operands[0]->shape))
        return false;
    } else if (!loop_space) {
      loop_space = &inst->shape;
    } else if (!shape_same_dims(&inst->shape, loop_space)) {
      return false;
    }
  }
  return true;
}

/* A member under a broadcast that widens is computed once per copy; only
 * cheap members may be. Walks users before producers. */
static bool candidate_replicates_nothing_expensive(Fuser *f, const IntVec *cand, const Instruction *core,
                                                   const Instruction *reduce) {
  for (int k = cand->count - 1; k >= 0; k--) {
    int i = cand->items[k];
    const Instruction *inst = f->insts[i];
    bool replicated = false;
    for (int q = 0; q < inst->user_count && !replicated; q++) {
      const Instruction *user = inst->users[q];
      if (!in_candidate(f, user)) continue;
      bool widens = user->opcode == OP_BROADCAST &&
                    shape_element_count(&user->shape) > shape_element_count(&inst->shape) &&
                    !broadcast_restores_rows(user, reduce);
      replicated = f->replicated[user->index] || widens;
    }
    f->replicated[i] = replicated;
    if (replicated && (opcode_cost(inst->opcode) != COST_CHEAP || inst == core)) return false;
  }
  return true;
}

/* Whether the instructions marked in cand can be one fusion. */
static bool candidate_is_valid(Fuser *f, const IntVec *cand) {
  if (cand->count > FUSION_MAX_MEMBERS) return false;
  const Instruction *core, *reduce;
  bool reads_row_again;
  if (!candidate_find_anchors(f, cand, &core, &reduce)) return false;
  if (!candidate_late_members_fit(f, cand, core, reduce, &reads_row_again)) return false;
  if (reads_row_again && row_element_count(reduce) > FUSION_ROW_BUFFER_ELEMENTS) return false;
  if (!candidate_outputs_fit(f, cand, core, reduce)) return false;
  return candidate_replicates_nothing_expensive(f, cand, core, reduce);
}

/* The cycle search walks nodes: an unfused instruction i is node i, group
 * g is node n + g. */
static void node_push(Fuser *f, IntVec *stack, int node) {
  if (node < f->n ? f->seen_mark[node] == f->seen_stamp : f->group_seen[node - f->n] == f->group_seen_stamp)
    return;
  fusion_intvec_push(stack, node);
}

/* The nodes that read producer's value from memory through its user z:
 * z itself when unfused, and every group holding z but no copy of
 * producer, except `self` (the group producer is in, which computes it). */
static void push_readers(Fuser *f, IntVec *stack, int producer, const Instruction *user, int self) {
  int z = fuser_inst_id(f, user);
  if (z < 0) return;
  if (f->groups_of[z].count == 0) node_push(f, stack, z);
  for (int g = 0; g < f->groups_of[z].count; g++) {
    int group = f->groups_of[z].items[g];
    if (group != self && !fusion_group_contains(f, group, producer)) node_push(f, stack, f->n + group);
  }
}

/* Pushes what reads the values that node writes. */
static void node_expand(Fuser *f, IntVec *stack, int node) {
  if (node < f->n) {
    const Instruction *inst = f->insts[node];
    for (int q = 0; q < inst->user_count; q++) push_readers(f, stack, node, inst->users[q], -1);
    return;
  }
  int group = node - f->n;
  const IntVec *members = &f->groups[group].members;
  f->work_left -= members->count;
  for (int k = 0; k < members->count; k++) {
    const Instruction *member = f->insts[members->items[k]];
    /* A user inside this group may have copies in others that read the
     * member from memory: push_readers looks at all of them. */
    for (int q = 0; q < member->user_count; q++) push_readers(f, stack, members->items[k], member->users[q], group);
  }
}

/* Pushes the nodes outside the candidate that read what it writes: users
 * outside it, and other groups that hold a user but no copy of the value. */
static void push_candidate_readers(Fuser *f, IntVec *stack, const IntVec *cand) {
  for (int k = 0; k < cand->count; k++) {
    int producer = cand->items[k];
    const Instruction *inst = f->insts[producer];
    for (int q = 0; q < inst->user_count; q++) {
      int z = fuser_inst_id(f, inst->users[q]);
      if (z < 0) continue;
      if (f->groups_of[z].count == 0 && f->cand_mark[z] != f->cand_stamp) node_push(f, stack, z);
      for (int g = 0; g < f->groups_of[z].count; g++) {
        int group = f->groups_of[z].items[g];
        if (!fuser_in_candidate_group(f, group) && !fusion_group_contains(f, group, producer)) node_push(f, stack, f->n + group);
      }
    }
  }
}

/* Whether fusing cand would make a cycle: a value it writes is read,
 * through unfused instructions or other groups, by something that feeds
 * it. Copies of a cheap instruction in other groups are not edges: each
 * group computes its own. */
static bool candidate_has_cycle(Fuser *f, const IntVec *cand) {
  f->seen_stamp++;
  f->group_seen_stamp++;
  IntVec stack = {0};
  push_candidate_readers(f, &stack, cand);
  bool cycle = false;
  while (stack.count && !cycle) {
    if (--f->work_left < 0) {
      cycle = true;  /* out of work: answer as if there were one */
      break;
    }
    int node = stack.items[--stack.count];
    bool in_cand = node < f->n ? f->cand_mark[node] == f->cand_stamp : fuser_in_candidate_group(f, node - f->n);
    if (in_cand) cycle = true;
    if (node < f->n) {
      if (f->seen_mark[node] == f->seen_stamp) continue;
      f->seen_mark[node] = f->seen_stamp;
    } else {
      if (f->group_seen[node - f->n] == f->group_seen_stamp) continue;
      f->group_seen[node - f->n] = f->group_seen_stamp;
    }
    if (!cycle) node_expand(f, &stack, node);
  }
  fusion_intvec_free(&stack);
  return cycle;
}

/* ---------------------------------------------------- changing groups */

static int group_create(Fuser *f) {
  if (f->group_count == f->group_capacity) {
    f->group_capacity = f->group_capacity ? 2 * f->group_capacity : 16;
    f->groups = mem_realloc(f->groups, sizeof *f->groups * (size_t)f->group_capacity);
    f->group_seen = mem_realloc(f->group_seen, sizeof *f->group_seen * (size_t)f->group_capacity);
  }
  f->groups[f->group_count] = (FusionGroup){0};
  f->group_seen[f->group_count] = 0;
  return f->group_count++;
}

static void group_add_member(Fuser *f, int g, int i) {
  intvec_insert_sorted(&f->groups[g].members, i);
  if (!fusion_group_contains(f, g, i)) fusion_intvec_push(&f->groups_of[i], g);
}

/* Moves every member of `from` into `into`; a member both held becomes one. */
static void group_merge_into(Fuser *f, int into, int from) {
  IntVec *members = &f->groups[from].members;
  for (int k = 0; k < members->count; k++) {
    int i = members->items[k];
    IntVec *of = &f->groups_of[i];
    int w = 0;
    for (int r = 0; r < of->count; r++)
      if (of->items[r] != from) of->items[w++] = of->items[r];
    of->count = w;
    group_add_member(f, into, i);
  }
  fusion_intvec_free(members);
  f->groups[from].merged = true;
}

/* Instruction i joins group g if the result is valid; when i must also be
 * written out (someone outside g reads it) the join must not make a cycle. */
static bool try_join(Fuser *f, IntVec *cand, int i, int g) {
  candidate_begin(f, cand, g, -1);
  candidate_add(f, cand, i);
  if (!candidate_is_valid(f, cand)) return false;
  if (fuser_is_output(f, i) && candidate_has_cycle(f, cand)) return false;
  group_add_member(f, g, i);
  return true;
}

/* A cheap instruction whose users all sit in groups is copied into each of
 * them; it is then written nowhere. All or nothing, and within the limits
 * on copies (FUSION_MAX_COPIES, FUSION_MAX_COPY_DEPTH). */
static bool try_duplicate(Fuser *f, IntVec *cand, int i, const IntVec *user_groups) {
  const Instruction *inst = f->insts[i];
  int depth = 1;
  for (int q = 0; q < inst->user_count; q++) {
    int u = fuser_inst_id(f, inst->users[q]);
    if (u >= 0 && f->copy_depth[u] + 1 > depth) depth = f->copy_depth[u] + 1;
  }
  if (user_groups->count > FUSION_MAX_COPIES || depth > FUSION_MAX_COPY_DEPTH) return false;
  for (int k = 0; k < user_groups->count; k++) fusion_intvec_push(&f->groups_of[i], user_groups->items[k]);
  bool ok = true;
  for (int k = 0; k < user_groups->count && ok; k++) {
    int g = user_groups->items[k];
    candidate_begin(f, cand, g, -1);
    candidate_add(f, cand, i);
    ok = candidate_is_valid(f, cand);
  }
  f->groups_of[i].count = 0;
  if (!ok) return false;
  for (int k = 0; k < user_groups->count; k++) group_add_member(f, user_groups->items[k], i);
  f->copy_depth[i] = (unsigned char)depth;
  return true;
}

/* Phase 1: from the root back, each producer into its consumers' groups. */
static void fuse_producers(Fuser *f) {
  IntVec cand = {0}, user_groups = {0};
  for (int i = f->n - 1; i >= 0; i--) {
    const Instruction *inst = f->insts[i];
    if (!inst_is_fusible(inst)) continue;
    user_groups.count = 0;
    bool read_outside = inst == f->comp->root;
    for (int q = 0; q < inst->user_count; q++) {
      int u = fuser_inst_id(f, inst->users[q]);
      if (u < 0 || f->groups_of[u].count == 0) read_outside = true;
      else
        for (int g = 0; g < f->groups_of[u].count; g++)
          if (!fusion_intvec_contains(&user_groups, f->groups_of[u].items[g]))
            fusion_intvec_push(&user_groups, f->groups_of[u].items[g]);
    }
    bool done = false;
    if (!read_outside && user_groups.count > 1 && inst_is_duplicable(inst))
      done = try_duplicate(f, &cand, i, &user_groups);
    for (int k = 0; k < user_groups.count && !done; k++) done = try_join(f, &cand, i, user_groups.items[k]);
    if (!done && inst_starts_group(inst)) group_add_member(f, group_create(f), i);
  }
  fusion_intvec_free(&cand);
  fusion_intvec_free(&user_groups);
}

/* Groups into and from become one (held in `into`) if the union is valid
 * and makes no cycle. */
static bool try_merge(Fuser *f, IntVec *cand, int into, int from) {
  candidate_begin(f, cand, into, from);
  f->work_left -= cand->count;
  if (!candidate_is_valid(f, cand) || candidate_has_cycle(f, cand)) return false;
  group_merge_into(f, into, from);
  return true;
}

/* One producer group of consumer b merged into b, if any can be. */
static bool merge_one_producer_group(Fuser *f, IntVec *cand, int b) {
  const IntVec *members = &f->groups[b].members;
  for (int k = 0; k < members->count; k++) {
    const Instruction *inst = f->insts[members->items[k]];
    for (int q = 0; q < inst->operand_count; q++) {
      int o = fuser_inst_id(f, inst->operands[q]);
      if (o < 0 || fusion_group_contains(f, b, o)) continue;
      for (int g = 0; g < f->groups_of[o].count; g++) {
        if (f->work_left <= 0) return false;
        if (try_merge(f, cand, b, f->groups_of[o].items[g])) return true;
      }
    }
  }
  return false;
}

/* A consumer group takes in the groups whose outputs it reads: a reduction
 * and the row ops after it, which phase 1 could not join while the
 * consumer was still a loop. Returns whether anything merged. */
static bool merge_producer_groups(Fuser *f, IntVec *cand) {
  bool changed = false;
  for (int b = 0; b < f->group_count; b++) {
    if (f->groups[b].merged) continue;
    while (merge_one_producer_group(f, cand, b)) changed = true;
  }
  return changed;
}

/* Sibling groups that read the same array from memory become one
 * multi-output fusion, which reads it once. Only the first few readers of
 * each array are paired: enough for real models, and no quadratic search
 * over an array that a thousand kernels read. */
enum { FUSION_SIBLINGS_PAIRED = 8 };

static bool merge_sibling_groups(Fuser *f, IntVec *cand) {
  bool changed = false;
  IntVec readers = {0};
  for (int x = 0; x < f->n && f->work_left > 0; x++) {
    const Instruction *inst = f->insts[x];
    if (shape_is_tuple(&inst->shape) || shape_element_count(&inst->shape) <= 1) continue;
    readers.count = 0;
    for (int q = 0; q < inst->user_count && readers.count < FUSION_SIBLINGS_PAIRED; q++) {
      int u = fuser_inst_id(f, inst->users[q]);
      if (u < 0) continue;
      for (int g = 0; g < f->groups_of[u].count && readers.count < FUSION_SIBLINGS_PAIRED; g++) {
        int group = f->groups_of[u].items[g];
        if (!fusion_group_contains(f, group, x) && !fusion_intvec_contains(&readers, group))
          fusion_intvec_push(&readers, group);
      }
    }
    for (int a = 0; a < readers.count; a++)
      for (int b = a + 1; b < readers.count && f->work_left > 0; b++) {
        int ga = readers.items[a], gb = readers.items[b];
        if (f->groups[ga].merged || f->groups[gb].merged) continue;
        if (try_merge(f, cand, ga, gb)) changed = true;
      }
  }
  fusion_intvec_free(&readers);
  return changed;
}

/* Phase 2, a few rounds while something merges. */
static void merge_groups(Fuser *f) {
  IntVec cand = {0};
  for (int round = 0; round < 8 && f->work_left > 0; round++) {
    bool changed = merge_producer_groups(f, &cand);
    changed |= merge_sibling_groups(f, &cand);
    if (!changed) break;
  }
  fusion_intvec_free(&cand);
}

/* ------------------------------------------------------------- driver */

static void fuser_init(Fuser *f, Module *m, Computation *c) {
  memset(f, 0, sizeof *f);
  f->module = m;
  f->comp = c;
  f->n = c->instruction_count;
  size_t n = (size_t)f->n + 1;
  f->insts = mem_calloc(n, sizeof *f->insts);
  memcpy(f->insts, c->instructions, sizeof *f->insts * (size_t)f->n);
  f->groups_of = mem_calloc(n, sizeof *f->groups_of);
  f->cand_mark = mem_calloc(n, sizeof *f->cand_mark);
  f->seen_mark = mem_calloc(n, sizeof *f->seen_mark);
  f->late = mem_calloc(n, 1);
  f->replicated = mem_calloc(n, 1);
  f->copy_depth = mem_calloc(n, 1);
  f->work_left = (int64_t)FUSION_WORK_PER_INSTRUCTION * ((int64_t)f->n + 64);
}

static void fuser_free(Fuser *f) {
  for (int i = 0; i < f->n; i++) fusion_intvec_free(&f->groups_of[i]);
  for (int g = 0; g < f->group_count; g++) fusion_intvec_free(&f->groups[g].members);
  mem_free(f->insts);
  mem_free(f->groups_of);
  mem_free(f->groups);
  mem_free(f->group_seen);
  mem_free(f->cand_mark);
  mem_free(f->seen_mark);
  mem_free(f->late);
  mem_free(f->replicated);
  mem_free(f->copy_depth);
}

static int compare_pointers(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
  return x < y ? -1 : x > y;
}

/* The computations whose instructions run as kernels: the entry and the
 * bodies of while, conditional and call. Fusion bodies and reducers
 * (to_apply of reduce, sort, scatter, map, ...) run inside other kernels.
 * Returns how many it put in out (room for every computation). */
static int computations_running_kernels(const Module *m, Computation **out) {
  int called_count = 0, called_capacity = 16;
  const Computation **called = mem_calloc((size_t)called_capacity, sizeof *called);
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *c = m->computations[k];
    for (int i = 0; i < c->instruction_count; i++) {
      const Instruction *inst = c->instructions[i];
      Opcode op = inst->opcode;
      if (op == OP_WHILE || op == OP_CONDITIONAL || op == OP_CALL) continue;
      for (int q = 0; q < inst->called_count; q++) {
        if (called_count == called_capacity) {
          called_capacity *= 2;
          called = mem_realloc(called, sizeof *called * (size_t)called_capacity);
        }
        called[called_count++] = inst->called[q];
      }
    }
  }
  qsort(called, (size_t)called_count, sizeof *called, compare_pointers);
  int count = 0;
  for (int k = 0; k < m->computation_count; k++) {
    Computation *c = m->computations[k];
    if (!bsearch(&c, called, (size_t)called_count, sizeof *called, compare_pointers)) out[count++] = c;
  }
  mem_free(called);
  return count;
}

/* Fuses one computation; returns how many fusions it made. */
static int fuse_computation(Module *m, Computation *c, OptContext *ctx) {
  Fuser f;
  fuser_init(&f, m, c);
  fuse_producers(&f);
  merge_groups(&f);
  if (f.work_left <= 0 && ctx)
    strbuf_printf(&ctx->notes, "fusion: %s has %d instructions; the search for multi-output fusions and merges "
                  "stopped early (it is kept linear)\n", c->name, f.n);
  int made = fusion_groups_build(&f);
  fuser_free(&f);
  return made;
}

bool fuse_module(Module *m, OptContext *ctx, bool *failed, Status *st) {
  int count = m->computation_count;
  Computation **pending = mem_calloc((size_t)count + 1, sizeof *pending);
  int pending_count = computations_running_kernels(m, pending);
  int made = 0;
  bool sorted = true;
  Status sort_st;
  status_clear(&sort_st);
  const char *unsorted = NULL;
  for (int k = 0; k < pending_count && sorted; k++) {
    made += fuse_computation(m, pending[k], ctx);
    /* Fusions were appended after their readers; sorting puts them back. */
    sorted = computation_sort(pending[k], &sort_st);
    if (!sorted) unsorted = pending[k]->name;
  }
  mem_free(pending);
  if (!sorted) {
    *failed = true;
    return status_error(st, STATUS_UNSUPPORTED, "fusion left a cycle in %s (a bug in the pass): %s", unsorted,
                        sort_st.message);
  }
  if (made) module_sort_computations(m);
  return made > 0;
}
