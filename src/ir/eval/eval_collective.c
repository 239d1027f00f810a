/* Collectives across the devices of one run: which devices take part in
 * each (XLA's group modes), and what each device's result is, given every
 * participant's operands. Both the evaluator and the CPU backend run
 * collectives through here (the CPU backend calls the evaluator's rule on
 * views of its buffers), so there is one definition of each collective.
 *
 * A run over several devices (src/runtime/device_run.c) runs one thread
 * per device and tells each thread which device it is (eval_device_set).
 * At a collective a device hands its operands to exchange, which returns
 * once every device of the run has reached the same collective, with every
 * device's operands; the device then computes its own result from them and
 * calls exchange_done, after which the others may free theirs.
 *
 * Device ids. XLA's default device assignment puts (replica r, partition
 * p) on device p * replica_count + r; replica_groups and the flattened ids
 * of use_global_device_ids count r * partition_count + p. Here a device is
 * named by its flattened id; the runtime maps thread numbers to it.
 *
 * Determinism: an all-reduce or reduce-scatter combines the participants'
 * operands in the order of their group, left to right
 * (((x0 + x1) + x2) + x3), whatever the order they arrived in, so every
 * device of a group gets the same bits, run after run. */
#include <stdlib.h>

#include "eval_internal.h"

/* The device the calling thread runs as: a run over several devices sets
 * it for each of its threads; NULL (one device) otherwise. Thread-local
 * because the evaluator's rules take no context, and the device is a
 * property of the thread that runs the module. */
static _Thread_local const EvalDevice *current_device;

void eval_device_set(const EvalDevice *device) { current_device = device; }
const EvalDevice *eval_device_get(void) { return current_device; }

int64_t eval_device_count(void) {
  return current_device ? current_device->replica_count * current_device->partition_count : 1;
}

/* XLA's GetCollectiveOpGroupMode: no channel_id, the groups name replicas;
 * a channel_id makes them name partitions, except on the ops that carry
 * use_global_device_ids (all-reduce, all-gather, reduce-scatter), where it
 * makes them name replicas across every partition (false) or flattened
 * device ids (true). */
CollectiveGroupMode collective_group_mode(const Instruction *inst) {
  Opcode op = inst->opcode;
  bool global_ids_attr = op == OP_ALL_REDUCE || op == OP_ALL_REDUCE_START || op == OP_ALL_GATHER ||
                         op == OP_ALL_GATHER_START || op == OP_REDUCE_SCATTER;
  if (!inst->attrs.channel_id) return GROUP_CROSS_REPLICA;
  if (!global_ids_attr) return GROUP_CROSS_PARTITION;
  return attrs_replica_groups(&inst->attrs)->use_global_device_ids ? GROUP_FLATTENED_ID : GROUP_CROSS_REPLICA_AND_PARTITION;
}

/* How many ids the groups of a mode choose among. */
static int64_t group_id_space(CollectiveGroupMode mode, int64_t replicas, int64_t partitions) {
  switch (mode) {
  case GROUP_CROSS_PARTITION: return partitions;
  case GROUP_FLATTENED_ID: return replicas * partitions;
  default: return replicas;
  }
}

/* The id a device has among a mode's ids. */
static int64_t device_group_id(CollectiveGroupMode mode, const EvalDevice *d) {
  switch (mode) {
  case GROUP_CROSS_PARTITION: return d->partition;
  case GROUP_FLATTENED_ID: return d->replica * d->partition_count + d->partition;
  default: return d->replica;
  }
}

/* Group g's size in a ReplicaGroups (uniform or each its own). */
static int64_t replica_group_size(const ReplicaGroups *groups, int g) {
  return groups->sizes.count > g ? groups->sizes.values[g] : groups->group_size;
}

/* The ids of the group holding id, from the written groups or, with none,
 * every id of the space (XLA fills empty replica_groups so). Returns the
 * count; 0 when no group holds id. ids must hold space entries. */
static int64_t group_of(const ReplicaGroups *groups, int64_t id, int64_t space, int64_t *ids) {
  if (groups->ids.count == 0) {
    for (int64_t k = 0; k < space; k++) ids[k] = k;
    return space;
  }
  for (int i = 0, g = 0; i < groups->ids.count; g++) {
    int64_t size = replica_group_size(groups, g);
    if (size <= 0) return 0;
    for (int64_t k = 0; k < size && i + k < groups->ids.count; k++) {
      if (groups->ids.values[i + k] != id) continue;
      for (int64_t j = 0; j < size; j++) ids[j] = groups->ids.values[i + j];
      return size;
    }
    i += (int)size;
  }
  return 0;
}

/* The participants of inst that device d's group holds, as flattened
 * device ids in group order (XLA's GetParticipatingFlattenedIdGroups), and
 * d's position among them. members must hold replica_count *
 * partition_count entries. Returns the count; 0 with st set when d is in
 * no group. */
static int64_t collective_members(const Instruction *inst, const EvalDevice *d, int64_t *members,
                                  int64_t *position, Status *st) {
  CollectiveGroupMode mode = collective_group_mode(inst);
  int64_t space = group_id_space(mode, d->replica_count, d->partition_count);
  int64_t *ids = eval_scratch_calloc(space, sizeof *ids);
  int64_t size = group_of(attrs_replica_groups(&inst->attrs), device_group_id(mode, d), space, ids);
  int64_t count = 0, P = d->partition_count;
  for (int64_t k = 0; k < size; k++) {
    switch (mode) {
    case GROUP_CROSS_REPLICA: members[count++] = ids[k] * P + d->partition; break;
    case GROUP_CROSS_PARTITION: members[count++] = d->replica * P + ids[k]; break;
    case GROUP_FLATTENED_ID: members[count++] = ids[k]; break;
    case GROUP_CROSS_REPLICA_AND_PARTITION:
      for (int64_t p = 0; p < P; p++) members[count++] = ids[k] * P + p;
      break;
    }
  }
  mem_free(ids);
  int64_t self = d->replica * P + d->partition;
  *position = -1;
  for (int64_t k = 0; k < count; k++)
    if (members[k] == self) *position = k;
  if (*position < 0)
    status_error(st, STATUS_RUNTIME_ERROR, "%s %s: device (replica %lld, partition %lld) is in no replica group",
                 opcode_name(inst->opcode), inst->name, (long long)d->replica, (long long)d->partition);
  return *position < 0 ? 0 : count;
}

/* ---- the results, on row-major literals ---- */

/* A row-major array seen as [outer, along, inner] around dimension dim;
 * element bytes included in inner. */
typedef struct Blocks {
  int64_t outer, along, inner;
} Blocks;

static Blocks blocks_around(const Shape *s, int64_t dim) {
  Blocks b = {1, 1, type_byte_size(s->type)};
  for (int d = 0; d < s->rank; d++) {
    if (d < dim) b.outer *= s->dims[d];
    else if (d == dim) b.along = s->dims[d];
    else b.inner *= s->dims[d];
  }
  return b;
}

/* Copies rows [from, from + count) along dim of src into rows [to, ...)
 * of dst (both [outer, along, inner] with the same outer and inner). */
static void copy_rows(Literal *dst, const Literal *src, int64_t dim, int64_t from, int64_t to, int64_t count) {
  Blocks s = blocks_around(&src->shape, dim), d = blocks_around(&dst->shape, dim);
  for (int64_t o = 0; o < s.outer; o++)
    memcpy((char *)dst->data + (o * d.along + to) * d.inner, (const char *)src->data + (o * s.along + from) * s.inner,
           (size_t)(count * s.inner));
}

/* The participants' operand j, in group order. */
typedef struct Participants {
  Literal *const *const *all;  /* all[device][operand] */
  const int64_t *members;
  int64_t count, position;
} Participants;

static const Literal *operand_of(const Participants *p, int64_t member, int j) {
  return p->all[p->members[member]][j];
}

/* Whether to_apply is the add of its two parameters on f32 or f64. Then
 * a typed loop gives the bits calling it would (an IEEE add of two values
 * is exact-rounded whichever way it is computed) without a call per
 * element, which is what makes all-reducing a model's gradients fast. */
static bool reducer_is_float_add(const Computation *c, ElementType t) {
  if (!c || (t != TYPE_F32 && t != TYPE_F64) || c->parameter_count != 2 || !c->root) return false;
  const Instruction *r = c->root;
  return r->opcode == OP_ADD && r->shape.type == t && r->operand_count == 2 &&
         r->operands[0]->opcode == OP_PARAMETER && r->operands[1]->opcode == OP_PARAMETER &&
         r->operands[0] != r->operands[1];
}

static Literal *add_participants(const Participants *p, int j) {
  Literal *acc = literal_clone(operand_of(p, 0, j));
  int64_t n = shape_element_count(&acc->shape);
  for (int64_t m = 1; m < p->count; m++) {
    const Literal *next = operand_of(p, m, j);
    if (acc->shape.type == TYPE_F32)
      for (int64_t e = 0; e < n; e++) ((float *)acc->data)[e] += ((const float *)next->data)[e];
    else
      for (int64_t e = 0; e < n; e++) ((double *)acc->data)[e] += ((const double *)next->data)[e];
  }
  return acc;
}

/* to_apply folded over the participants' operand j, element by element, in
 * group order. */
static Literal *reduce_participants(const Instruction *inst, const Participants *p, int j, Status *st) {
  const Literal *first = operand_of(p, 0, j);
  ElementType t = first->shape.type;
  if (reducer_is_float_add(inst->called_count ? inst->called[0] : NULL, t)) return add_participants(p, j);
  ElementType types[2] = {t, t};
  ScalarCall call;
  if (!eval_scalar_call_init(&call, inst, inst->called_count ? inst->called[0] : NULL, types, 2, types, 1, st))
    return NULL;
  Literal *acc = literal_clone(first);
  int64_t n = shape_element_count(&first->shape);
  size_t size = (size_t)type_byte_size(t);
  for (int64_t m = 1; m < p->count && acc; m++) {
    const Literal *next = operand_of(p, m, j);
    for (int64_t e = 0; e < n; e++) {
      memcpy(call.args[0]->data, (char *)acc->data + e * (int64_t)size, size);
      memcpy(call.args[1]->data, (const char *)next->data + e * (int64_t)size, size);
      Literal *r = eval_scalar_call_run(&call, st);
      if (!r) {
        literal_free(acc);
        acc = NULL;
        break;
      }
      memcpy((char *)acc->data + e * (int64_t)size, eval_scalar_result(r, 0)->data, size);
      literal_free(r);
    }
  }
  eval_scalar_call_free(&call);
  return acc;
}

/* The shape of result j of an op with count results (the instruction's own
 * shape, or its tuple element). */
static const Shape *result_shape(const Instruction *inst, int j, int count) {
  return count > 1 || (shape_is_tuple(&inst->shape) && inst->shape.tuple_shapes) ? &inst->shape.tuple_shapes[j]
                                                                                   : &inst->shape;
}

/* A result literal of the declared shape, checked against the dims the
 * op's meaning gives. */
static Literal *new_result(const Instruction *inst, int j, int count, const Shape *computed, Status *st) {
  if (!shape_equal(result_shape(inst, j, count), computed)) {
    status_error(st, STATUS_VERIFY_ERROR, "%s %s: result %d has the wrong shape for its group of devices",
                 opcode_name(inst->opcode), inst->name, j);
    return NULL;
  }
  return literal_create(result_shape(inst, j, count));
}

static int64_t split_dimension(const Instruction *inst) {
  return inst->attrs.dimensions.count ? inst->attrs.dimensions.values[0] : 0;
}

/* all-gather: the participants' operands concatenated along the dimension,
 * in group order. */
static Literal *all_gather_one(const Instruction *inst, const Participants *p, int j, int count, Status *st) {
  int64_t dim = split_dimension(inst);
  Shape gathered = operand_of(p, 0, j)->shape;
  gathered.dims[dim] *= p->count;
  Literal *out = new_result(inst, j, count, &gathered, st);
  for (int64_t m = 0; out && m < p->count; m++) {
    const Literal *x = operand_of(p, m, j);
    copy_rows(out, x, dim, 0, m * x->shape.dims[dim], x->shape.dims[dim]);
  }
  return out;
}

/* reduce-scatter: the all-reduce's value, of which this device keeps the
 * block at its position along the dimension. */
static Literal *reduce_scatter_one(const Instruction *inst, const Participants *p, int j, int count, Status *st) {
  int64_t dim = split_dimension(inst);
  Literal *sum = reduce_participants(inst, p, j, st);
  if (!sum) return NULL;
  Shape part = sum->shape;
  part.dims[dim] /= p->count;
  Literal *out = new_result(inst, j, count, &part, st);
  if (out) copy_rows(out, sum, dim, p->position * part.dims[dim], 0, part.dims[dim]);
  literal_free(sum);
  return out;
}

/* all-to-all with dimensions={d}: every participant splits its operand into
 * count blocks along d and sends block k to participant k; a device's
 * result is the blocks it received, in group order along d. Without
 * dimensions (the tuple form) operand k goes to participant k whole, and
 * result k is what participant k sent. */
static Literal *all_to_all_one(const Instruction *inst, const Participants *p, int j, int count, Status *st) {
  if (inst->attrs.dimensions.count == 0) {
    const Literal *x = operand_of(p, j, (int)p->position);
    Literal *out = new_result(inst, j, count, &x->shape, st);
    if (out) memcpy(out->data, x->data, (size_t)shape_byte_size(&x->shape));
    return out;
  }
  int64_t dim = split_dimension(inst);
  Literal *out = new_result(inst, j, count, &operand_of(p, 0, j)->shape, st);
  int64_t block = out ? out->shape.dims[dim] / p->count : 0;
  for (int64_t m = 0; out && m < p->count; m++)
    copy_rows(out, operand_of(p, m, j), dim, p->position * block, m * block, block);
  return out;
}

/* A copy of participant m's operand j as result j (zeros for m < 0). */
static Literal *copy_from(const Instruction *inst, const Participants *p, int64_t m, int j, int count,
                          const Shape *shape, Status *st) {
  Literal *out = new_result(inst, j, count, shape, st);
  if (out && m >= 0) memcpy(out->data, operand_of(p, m, j)->data, (size_t)shape_byte_size(shape));
  return out;
}

/* collective-permute: for each {source, target} pair (ids among the
 * replicas of this partition, or with a channel_id among the partitions of
 * this replica), the source's operand becomes the target's result; a
 * device no pair targets gets zeros. Here the participants are the whole
 * row of ids, so participant k is id k. */
static int64_t permute_source(const Instruction *inst, const Participants *p) {
  const IntList *pairs = &inst->attrs.source_target_pairs;
  for (int k = 0; k + 1 < pairs->count; k += 2)
    if (pairs->values[k + 1] == p->position) return pairs->values[k];
  return -1;
}

static Literal *collective_result(const Instruction *inst, const Participants *p, int j, int count, Status *st) {
  const Shape *x = &operand_of(p, 0, j)->shape;
  switch (inst->opcode) {
  case OP_ALL_REDUCE:
  case OP_ALL_REDUCE_START: {
    Literal *sum = reduce_participants(inst, p, j, st);
    Literal *out = sum ? new_result(inst, j, count, &sum->shape, st) : NULL;
    if (out) memcpy(out->data, sum->data, (size_t)shape_byte_size(&sum->shape));
    literal_free(sum);
    return out;
  }
  case OP_ALL_GATHER: return all_gather_one(inst, p, j, count, st);
  case OP_REDUCE_SCATTER: return reduce_scatter_one(inst, p, j, count, st);
  case OP_ALL_TO_ALL: return all_to_all_one(inst, p, j, count, st);
  case OP_COLLECTIVE_PERMUTE: return copy_from(inst, p, permute_source(inst, p), j, count, x, st);
  case OP_COLLECTIVE_BROADCAST: return copy_from(inst, p, 0, j, count, x, st); /* the group's first device sends */
  default:
    status_error(st, STATUS_UNSUPPORTED, "%s %s runs on one device only", opcode_name(inst->opcode), inst->name);
    return NULL;
  }
}

/* The participants of a permute: every id of its row (see permute_source). */
static int64_t permute_members(const Instruction *inst, const EvalDevice *d, int64_t *members, int64_t *position) {
  bool partitions = collective_group_mode(inst) == GROUP_CROSS_PARTITION;
  int64_t count = partitions ? d->partition_count : d->replica_count;
  for (int64_t k = 0; k < count; k++)
    members[k] = partitions ? d->replica * d->partition_count + k : k * d->partition_count + d->partition;
  *position = partitions ? d->partition : d->replica;
  return count;
}

int64_t collective_participants(const Instruction *inst, const EvalDevice *d, int64_t *members, int64_t *position,
                                Status *st) {
  bool permute = inst->opcode == OP_COLLECTIVE_PERMUTE || inst->opcode == OP_COLLECTIVE_PERMUTE_START;
  return permute ? permute_members(inst, d, members, position) : collective_members(inst, d, members, position, st);
}

static Literal *collective_compute(const Instruction *inst, Literal *const *const *all, const EvalDevice *d,
                                   Status *st) {
  int64_t *members = eval_scratch_calloc(d->replica_count * d->partition_count, sizeof *members);
  Participants p = {.all = all, .members = members};
  bool permute = inst->opcode == OP_COLLECTIVE_PERMUTE;
  p.count = permute ? permute_members(inst, d, members, &p.position) : collective_members(inst, d, members, &p.position, st);
  /* the tuple form of all-to-all has one result per operand, as the others */
  int count = inst->operand_count;
  Literal **results = count > 0 && p.count > 0 ? mem_calloc((size_t)count, sizeof *results) : NULL;
  bool ok = results != NULL;
  if (!ok && p.count > 0) status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  for (int j = 0; ok && j < count; j++) ok = (results[j] = collective_result(inst, &p, j, count, st)) != NULL;
  mem_free(members);
  if (!results) return NULL;
  if (ok && count == 1 && shape_is_tuple(&inst->shape)) return literal_create_tuple(results, 1);
  return eval_finish_results(results, count, ok);
}

Literal *eval_collective_across_devices(const Instruction *inst, Literal *const *operands, Status *st) {
  const EvalDevice *d = current_device;
  Literal *const *const *all = NULL;
  if (!d->exchange(d->run, d, inst, operands, &all, st)) return NULL;
  Literal *result = collective_compute(inst, all, d, st);
  d->exchange_done(d->run, d);
  return result;
}

/* replica-id and partition-id: this device's, as u32[] (0 on one device). */
Literal *eval_replica_id(const Instruction *inst, Literal *const *operands, Status *st) {
  (void)operands;
  if (inst->shape.type == TYPE_TUPLE || shape_element_count(&inst->shape) != 1) {
    status_error(st, STATUS_VERIFY_ERROR, "%s %s: the result must be a scalar", opcode_name(inst->opcode), inst->name);
    return NULL;
  }
  Literal *out = literal_create(&inst->shape);
  const EvalDevice *d = current_device;
  if (d) literal_set_s64(out, 0, inst->opcode == OP_PARTITION_ID ? d->partition : d->replica);
  return out;
}

/* ---- what a run over replicas x partitions devices can run ---- */

static bool refuse(const Instruction *inst, Status *st, const char *why) {
  return status_error(st, STATUS_UNSUPPORTED, "instruction '%s' (%s): %s", inst->name, opcode_name(inst->opcode),
                      why);
}

/* Each id of the space at most once among the list; with every_id, each
 * exactly once. */
static bool ids_check(const Instruction *inst, const int64_t *ids, int count, int64_t space, bool every_id,
                      const char *what, Status *st) {
  char *seen = eval_scratch_calloc(space, 1);
  bool ok = true;
  for (int k = 0; ok && k < count; k++) {
    if (ids[k] < 0 || ids[k] >= space)
      ok = status_error(st, STATUS_UNSUPPORTED, "instruction '%s' (%s): %s names id %lld; this run has %lld",
                        inst->name, opcode_name(inst->opcode), what, (long long)ids[k], (long long)space);
    else if (seen[ids[k]]++)
      ok = status_error(st, STATUS_UNSUPPORTED, "instruction '%s' (%s): %s names id %lld twice", inst->name,
                        opcode_name(inst->opcode), what, (long long)ids[k]);
  }
  if (ok && every_id && count != space)
    ok = status_error(st, STATUS_UNSUPPORTED,
                      "instruction '%s' (%s): replica_groups name %d of the %lld ids; each must be in one group",
                      inst->name, opcode_name(inst->opcode), count, (long long)space);
  mem_free(seen);
  return ok;
}

/* A permute's pairs: ids of the space, no source and no target twice. */
static bool pairs_check(const Instruction *inst, int64_t space, Status *st) {
  const IntList *pairs = &inst->attrs.source_target_pairs;
  int n = pairs->count / 2;
  int64_t *half = eval_scratch_calloc(n + 1, sizeof *half);
  bool ok = true;
  for (int side = 0; ok && side < 2; side++) {
    for (int k = 0; k < n; k++) half[k] = pairs->values[2 * k + side];
    ok = ids_check(inst, half, n, space, false, side ? "source_target_pairs' targets" : "source_target_pairs' sources",
                   st);
  }
  mem_free(half);
  return ok;
}

/* The size of every group of inst in a run (0 when they differ). */
static int64_t uniform_group_size(const Instruction *inst, int64_t replicas, int64_t partitions) {
  CollectiveGroupMode mode = collective_group_mode(inst);
  const ReplicaGroups *g = attrs_replica_groups(&inst->attrs);
  int64_t size = g->ids.count ? g->group_size : group_id_space(mode, replicas, partitions);
  return mode == GROUP_CROSS_REPLICA_AND_PARTITION ? size * partitions : size;
}

/* The shapes of an all-gather, reduce-scatter or all-to-all must fit its
 * group size: G times the operand along the dimension, 1/G of it, a
 * multiple of G, G operands for the tuple all-to-all. */
static bool group_size_fits_shapes(const Instruction *inst, int64_t size, Status *st) {
  Opcode op = inst->opcode;
  const Shape *y = &inst->shape;
  if (op == OP_ALL_GATHER_START && shape_is_tuple(y) && y->tuple_count == 2 && y->tuple_shapes) y = &y->tuple_shapes[1];
  if (op == OP_ALL_TO_ALL && inst->attrs.dimensions.count == 0) {
    if (inst->operand_count == size) return true;
    return status_error(st, STATUS_UNSUPPORTED,
                        "instruction '%s' (all-to-all): %d operands for a group of %lld devices", inst->name,
                        inst->operand_count, (long long)size);
  }
  bool resizes = op == OP_ALL_GATHER || op == OP_ALL_GATHER_START || op == OP_REDUCE_SCATTER || op == OP_ALL_TO_ALL;
  if (!resizes || inst->operand_count != 1 || shape_is_tuple(y) || inst->attrs.dimensions.count != 1) return true;
  const Shape *x = &inst->operands[0]->shape;
  int64_t d = inst->attrs.dimensions.values[0];
  if (d < 0 || d >= x->rank || d >= y->rank) return true;  /* the verifier's to report */
  bool fits = op == OP_ALL_GATHER || op == OP_ALL_GATHER_START ? y->dims[d] == x->dims[d] * size
              : op == OP_REDUCE_SCATTER                        ? x->dims[d] == y->dims[d] * size
                                                               : size > 0 && x->dims[d] % size == 0;
  if (fits) return true;
  return status_error(st, STATUS_UNSUPPORTED,
                      "instruction '%s' (%s): its shapes along dimension %lld do not fit a group of %lld devices",
                      inst->name, opcode_name(op), (long long)d, (long long)size);
}

bool collective_check_devices(const Instruction *inst, int64_t replicas, int64_t partitions, Status *st) {
  Opcode op = inst->opcode;
  switch (op) {
  case OP_ALL_REDUCE: case OP_ALL_REDUCE_START: case OP_ALL_GATHER: case OP_ALL_GATHER_START:
  case OP_REDUCE_SCATTER: case OP_ALL_TO_ALL: case OP_COLLECTIVE_BROADCAST:
  case OP_COLLECTIVE_PERMUTE: case OP_COLLECTIVE_PERMUTE_START:
    break;
  case OP_COLLECTIVE_REDUCE: case OP_RAGGED_ALL_TO_ALL:
    return refuse(inst, st, "runs on one device only; this run has several");
  default:
    return true;
  }
  bool global_ids = attrs_replica_groups(&inst->attrs)->use_global_device_ids;
  if (global_ids && !inst->attrs.channel_id) return refuse(inst, st, "use_global_device_ids=true needs a channel_id");
  CollectiveGroupMode mode = collective_group_mode(inst);
  int64_t space = group_id_space(mode, replicas, partitions);
  if (op == OP_COLLECTIVE_PERMUTE || op == OP_COLLECTIVE_PERMUTE_START) {
    if (inst->operand_count > 1 && collective_permute_is_in_place(inst))
      return refuse(inst, st, "the in-place form is not supported across devices");
    return pairs_check(inst, space, st);
  }
  const ReplicaGroups *g = attrs_replica_groups(&inst->attrs);
  if (mode == GROUP_FLATTENED_ID && g->ids.count == 0)
    return refuse(inst, st, "use_global_device_ids=true needs replica_groups");
  if (g->ids.count && !ids_check(inst, g->ids.values, g->ids.count, space, true, "replica_groups", st)) return false;
  int64_t size = uniform_group_size(inst, replicas, partitions);
  return size == 0 || group_size_fits_shapes(inst, size, st);
}
