/* Collectives across GPUs (docs/multi-device.md, "Across GPUs"): each is
 * compiled into a GpuCollective, a short list of actions the run does on
 * the program's stream: NCCL calls on the communicator of the device's
 * group (src/runtime/nccl.c makes one per group, ranks in group order), and
 * device-to-device copies that lay the blocks out the way NCCL reads and
 * writes them.
 *
 * NCCL moves contiguous blocks in rank order: an all-gather writes rank r's
 * buffer at r * its size, a reduce-scatter hands rank r the r-th slice.
 * HLO concatenates or splits along any dimension d. Seen in memory order
 * around d, an array is [outer, along, inner] (outer: the dimensions more
 * major than d; inner: the more minor ones, bytes included); when outer is
 * 1 the blocks along d are contiguous and NCCL works on the buffers as
 * they are, otherwise the blocks go through a scratch area in rank-major
 * order, outer copies per rank. Which device is which rank, which devices
 * form a group, and what each result means is eval_collective.c's, shared
 * with the CPU backend.
 *
 * Data movement (gathers, all-to-all, permutes, broadcasts) moves bytes
 * (ncclUint8), whatever the element type; reductions name the type and
 * NCCL's op for the to_apply (add, multiply, maximum, minimum). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/gpu_collective.h"

bool gpu_collective_is_across(Opcode op) {
  switch (op) {
  case OP_ALL_REDUCE:
  case OP_ALL_REDUCE_START:
  case OP_ALL_GATHER:
  case OP_REDUCE_SCATTER:
  case OP_ALL_TO_ALL:
  case OP_COLLECTIVE_PERMUTE:
  case OP_COLLECTIVE_BROADCAST:
    return true;
  default: return false;
  }
}

/* ---- compile ---- */

/* An array around dimension dim in memory order (see the top). */
typedef struct Blocks {
  int64_t outer, along, inner;
} Blocks;

static Blocks blocks_around(const Shape *s, int64_t dim) {
  Blocks b = {1, s->dims[dim], type_byte_size(s->type)};
  bool minor = true;  /* minor_to_major lists dim's more minor dimensions first */
  for (int i = 0; i < s->rank; i++) {
    int d = s->minor_to_major[i];
    if (d == dim) minor = false;
    else if (minor) b.inner *= s->dims[d];
    else b.outer *= s->dims[d];
  }
  return b;
}

/* The leaves the collective reads and writes: operand j's binding and
 * shape, and result j's. */
typedef struct CollectiveLeaves {
  int n;
  int *in, *out;
  const Shape **in_shapes, **out_shapes;
} CollectiveLeaves;

/* The NCCL type of a reduction over t. */
static bool nccl_type_of(ElementType t, ncclDataType_t *type) {
  switch (t) {
  case TYPE_S8: *type = ncclInt8; return true;
  case TYPE_U8: *type = ncclUint8; return true;
  case TYPE_S32: *type = ncclInt32; return true;
  case TYPE_U32: *type = ncclUint32; return true;
  case TYPE_S64: *type = ncclInt64; return true;
  case TYPE_U64: *type = ncclUint64; return true;
  case TYPE_F16: *type = ncclFloat16; return true;
  case TYPE_F32: *type = ncclFloat32; return true;
  case TYPE_F64: *type = ncclFloat64; return true;
  case TYPE_BF16: *type = ncclBfloat16; return true;
  default: return false;
  }
}

/* NCCL's op for a to_apply that is one of add, multiply, maximum, minimum
 * of its two parameters. */
static bool nccl_op_of(const Instruction *inst, ncclRedOp_t *op) {
  const Computation *f = inst->called_count == 1 ? inst->called[0] : NULL;
  const Instruction *r = f && f->parameter_count == 2 ? f->root : NULL;
  if (!r || r->operand_count != 2 || r->operands[0]->opcode != OP_PARAMETER ||
      r->operands[1]->opcode != OP_PARAMETER || r->operands[0] == r->operands[1])
    return false;
  switch (r->opcode) {
  case OP_ADD: *op = ncclSum; return true;
  case OP_MULTIPLY: *op = ncclProd; return true;
  case OP_MAXIMUM: *op = ncclMax; return true;
  case OP_MINIMUM: *op = ncclMin; return true;
  default: return false;
  }
}

/* Why NCCL does not reduce over s with inst's to_apply; NULL when it does. */
static const char *reduction_refusal(const Instruction *inst, const Shape *s) {
  ncclDataType_t type;
  ncclRedOp_t op;
  if (!nccl_type_of(s->type, &type)) return "a reduction across GPUs of a type NCCL does not reduce";
  if (!nccl_op_of(inst, &op)) return "a reduction across GPUs whose to_apply is not add, multiply, maximum or minimum";
  return NULL;
}

/* (reduction_refusal let it through) */
static void reduction_of(const Instruction *inst, const Shape *s, ncclDataType_t *type, ncclRedOp_t *op) {
  nccl_type_of(s->type, type);
  nccl_op_of(inst, op);
}

static int64_t split_dimension(const Instruction *inst) {
  return inst->attrs.dimensions.count ? inst->attrs.dimensions.values[0] : 0;
}

/* Copies binding `array` (b: [outer, along, inner], along = G blocks)
 * into scratch rank-major, [G][outer][block][inner], so that rank r's
 * part is contiguous; or back (to_ranks false). outer * G copies. */
static void blocks_reorder(GpuCollective *k, Blocks b, int64_t groups, int array, int scratch, bool to_ranks) {
  int64_t block = b.along / groups * b.inner;
  for (int64_t r = 0; r < groups; r++)
    for (int64_t o = 0; o < b.outer; o++) {
      int64_t array_at = (o * groups + r) * block, scratch_at = (r * b.outer + o) * block;
      if (to_ranks) gpu_collective_copy_add(k, array, array_at, scratch, scratch_at, block);
      else gpu_collective_copy_add(k, scratch, scratch_at, array, array_at, block);
    }
}

static void all_gather_add(GpuCompile *c, GpuCollective *k, const Instruction *inst, int64_t groups, int in,
                           const Shape *in_shape, int out) {
  Blocks b = blocks_around(in_shape, split_dimension(inst));
  int64_t bytes = b.outer * b.along * b.inner;
  int target = b.outer == 1 ? out : gpu_reserve_temp(c, bytes * groups);
  GpuAction *a = gpu_collective_action_add(k, GPU_ACTION_ALL_GATHER);
  a->from = in, a->to = target, a->bytes = bytes;
  if (b.outer > 1) blocks_reorder(k, (Blocks){b.outer, b.along * groups, b.inner}, groups, out, target, false);
}

static void reduce_scatter_add(GpuCompile *c, GpuCollective *k, const Instruction *inst, int64_t groups, int in,
                               const Shape *in_shape, int out, ncclDataType_t type, ncclRedOp_t op) {
  Blocks b = blocks_around(in_shape, split_dimension(inst));
  int64_t bytes = b.outer * b.along * b.inner;
  /* NCCL reads rank r's slice at r * its size: the input itself when the
   * blocks are contiguous and it is not the result's storage */
  int source = b.outer == 1 && in != out ? in : gpu_reserve_temp(c, bytes);
  if (source != in) blocks_reorder(k, b, groups, in, source, true);
  GpuAction *a = gpu_collective_action_add(k, GPU_ACTION_REDUCE_SCATTER);
  a->from = source, a->to = out, a->type = type, a->op = op;
  a->count = bytes / groups / type_byte_size(in_shape->type);
}

/* all-to-all with dimensions={d}: block r of the operand to rank r, and
 * rank r's block into block r of the result; this device's own block is a
 * copy. */
static void all_to_all_add(GpuCompile *c, GpuCollective *k, const Instruction *inst, int64_t groups, int64_t self,
                           int in, const Shape *in_shape, int out) {
  Blocks b = blocks_around(in_shape, split_dimension(inst));
  int64_t bytes = b.outer * b.along * b.inner, block = bytes / groups;
  bool direct = b.outer == 1 && in != out;
  int send = direct ? in : gpu_reserve_temp(c, bytes), recv = direct ? out : gpu_reserve_temp(c, bytes);
  if (!direct) blocks_reorder(k, b, groups, in, send, true);
  gpu_collective_copy_add(k, send, self * block, recv, self * block, block);
  gpu_collective_action_add(k, GPU_ACTION_GROUP_START);
  for (int64_t r = 0; r < groups; r++) {
    if (r == self) continue;
    GpuAction *a = gpu_collective_action_add(k, GPU_ACTION_SEND);
    a->from = send, a->from_offset = r * block, a->bytes = block, a->peer = (int)r;
    a = gpu_collective_action_add(k, GPU_ACTION_RECV);
    a->to = recv, a->to_offset = r * block, a->bytes = block, a->peer = (int)r;
  }
  gpu_collective_action_add(k, GPU_ACTION_GROUP_END);
  if (!direct) blocks_reorder(k, b, groups, out, recv, false);
}

/* collective-permute of one operand: this device (id self of its row)
 * sends to every target of a pair it is the source of, and receives from
 * the source of the pair that targets it, or gets zeros. */
static void permute_add(GpuCompile *c, GpuCollective *k, const Instruction *inst, int64_t self, int in, int out,
                        int64_t bytes) {
  const IntList *pairs = &inst->attrs.source_target_pairs;
  int64_t source = -1;
  for (int i = 0; i + 1 < pairs->count; i += 2)
    if (pairs->values[i + 1] == self) source = pairs->values[i];
  /* the result is written only once the sends have read the operand,
   * which may be the same storage */
  int recv = in == out && source >= 0 && source != self ? gpu_reserve_temp(c, bytes) : out;
  gpu_collective_action_add(k, GPU_ACTION_GROUP_START);
  for (int i = 0; i + 1 < pairs->count; i += 2) {
    if (pairs->values[i] != self || pairs->values[i + 1] == self) continue;
    GpuAction *a = gpu_collective_action_add(k, GPU_ACTION_SEND);
    a->from = in, a->bytes = bytes, a->peer = (int)pairs->values[i + 1];
  }
  if (source >= 0 && source != self) {
    GpuAction *a = gpu_collective_action_add(k, GPU_ACTION_RECV);
    a->to = recv, a->bytes = bytes, a->peer = (int)source;
  }
  gpu_collective_action_add(k, GPU_ACTION_GROUP_END);
  gpu_collective_copy_add(k, recv, 0, out, 0, bytes);
  if (source < 0) {
    GpuBinding zero = {.kind = GPU_BINDING_CONSTANT, .bytes = bytes};
    gpu_collective_copy_add(k, gpu_program_add_binding(c->p, zero, mem_calloc((size_t)bytes, 1)), 0, out, 0, bytes);
  } else if (source == self) {
    gpu_collective_copy_add(k, in, 0, out, 0, bytes);
  }
}

/* The tuple all-to-all: operand r to rank r, result r from rank r. */
static void all_to_all_tuple_add(GpuCollective *k, const CollectiveLeaves *l, int64_t self) {
  int64_t own = (int64_t)shape_byte_size(l->in_shapes[self]);
  gpu_collective_copy_add(k, l->in[self], 0, l->out[self], 0, own);
  gpu_collective_action_add(k, GPU_ACTION_GROUP_START);
  for (int r = 0; r < l->n; r++) {
    if (r == self) continue;
    GpuAction *a = gpu_collective_action_add(k, GPU_ACTION_SEND);
    a->from = l->in[r], a->bytes = shape_byte_size(l->in_shapes[r]), a->peer = r;
    a = gpu_collective_action_add(k, GPU_ACTION_RECV);
    a->to = l->out[r], a->bytes = shape_byte_size(l->out_shapes[r]), a->peer = r;
  }
  gpu_collective_action_add(k, GPU_ACTION_GROUP_END);
}

/* Every leaf's actions, for the collective op (the start forms' op). */
static bool actions_add(GpuCompile *c, GpuCollective *k, const Instruction *inst, Opcode op, const CollectiveLeaves *l,
                        int64_t groups, int64_t self) {
  if (op == OP_ALL_TO_ALL && inst->attrs.dimensions.count == 0) {
    if (l->n != groups) return gpu_refuse(c, inst, "a tuple all-to-all whose operands are not one per device");
    all_to_all_tuple_add(k, l, self);
    return true;
  }
  /* several all-reduces (the combined form) go to NCCL as one group, which
   * it may fuse into one launch */
  bool grouped = op == OP_ALL_REDUCE && l->n > 1;
  if (grouped) gpu_collective_action_add(k, GPU_ACTION_GROUP_START);
  for (int j = 0; j < l->n; j++) {
    const Shape *s = l->in_shapes[j];
    int64_t bytes = shape_byte_size(s);
    if (bytes == 0) continue;  /* (its layouts and reduction: gpu_collective_refusal) */
    ncclDataType_t type;
    ncclRedOp_t reduce;
    switch (op) {
    case OP_ALL_REDUCE: {
      reduction_of(inst, s, &type, &reduce);
      GpuAction *a = gpu_collective_action_add(k, GPU_ACTION_ALL_REDUCE);
      a->from = l->in[j], a->to = l->out[j], a->type = type, a->op = reduce;
      a->count = shape_element_count(s);
      break;
    }
    case OP_ALL_GATHER: all_gather_add(c, k, inst, groups, l->in[j], s, l->out[j]); break;
    case OP_REDUCE_SCATTER:
      reduction_of(inst, s, &type, &reduce);
      reduce_scatter_add(c, k, inst, groups, l->in[j], s, l->out[j], type, reduce);
      break;
    case OP_ALL_TO_ALL: all_to_all_add(c, k, inst, groups, self, l->in[j], s, l->out[j]); break;
    case OP_COLLECTIVE_PERMUTE: permute_add(c, k, inst, self, l->in[j], l->out[j], bytes); break;
    case OP_COLLECTIVE_BROADCAST: {
      GpuAction *a = gpu_collective_action_add(k, GPU_ACTION_BROADCAST);
      a->from = l->in[j], a->to = l->out[j], a->bytes = bytes;
      break;
    }
    default: return gpu_refuse(c, inst, "a collective the GPU backend does not run across GPUs");
    }
  }
  if (grouped) gpu_collective_action_add(k, GPU_ACTION_GROUP_END);
  return true;
}

/* The communicator of this device's group: its members' GPUs in group
 * order (device d runs on GPU d; a member is a flattened id). */
static ncclComm_t group_comm(GpuCompile *c, const Instruction *inst, int64_t *groups, int64_t *self) {
  EvalDevice d = {.replica = c->replica, .partition = c->partition, .replica_count = c->replica_count,
                  .partition_count = c->partition_count};
  int64_t space = c->replica_count * c->partition_count;
  int64_t *members = mem_calloc((size_t)space, sizeof *members);
  int *ordinals = mem_calloc((size_t)space, sizeof *ordinals);
  *groups = collective_participants(inst, &d, members, self, c->st);
  for (int64_t k = 0; k < *groups; k++) {
    int64_t replica = members[k] / c->partition_count, partition = members[k] % c->partition_count;
    ordinals[k] = (int)(partition * c->replica_count + replica);
  }
  ncclComm_t comm = *groups > 0 ? nccl_cliques_get(c->nccl, ordinals, (int)*groups, (int)*self, c->st) : NULL;
  mem_free(members);
  mem_free(ordinals);
  /* ncclCommInitAll visits every GPU of the clique (cudaSetDevice): this
   * device's context becomes current again for the rest of its compile */
  if (comm && !gpu_context_enter(&c->p->gpu, c->st)) comm = NULL;
  if (!comm && c->st->code != STATUS_OK) {
    char message[sizeof c->st->message];
    snprintf(message, sizeof message, "%s", c->st->message);
    status_error_at(c->st, c->st->code, c->m->filename, inst->loc, "%s (for %s)", message, inst->name);
  }
  return comm;
}

/* Flattens s's array leaves, depth first, into out. */
static void shape_leaves_list(const Shape *s, const Shape **out, int *n) {
  if (!shape_is_tuple(s)) {
    out[(*n)++] = s;
    return;
  }
  for (int i = 0; i < s->tuple_count; i++) shape_leaves_list(&s->tuple_shapes[i], out, n);
}

/* The leaves: operands' in order; results from inst's leaf `first`. */
static void leaves_gather(GpuCompile *c, const Instruction *inst, int first, CollectiveLeaves *l, bool *ok) {
  const Shape **all = mem_calloc((size_t)shape_leaf_count(&inst->shape) + 1, sizeof *all);
  l->n = inst->operand_count;
  l->in = mem_calloc((size_t)l->n + 1, sizeof *l->in);
  l->out = mem_calloc((size_t)l->n + 1, sizeof *l->out);
  l->in_shapes = mem_calloc((size_t)l->n + 1, sizeof *l->in_shapes);
  l->out_shapes = mem_calloc((size_t)l->n + 1, sizeof *l->out_shapes);
  int count = 0;
  shape_leaves_list(&inst->shape, all, &count);
  for (int j = 0; j < l->n && *ok; j++) {
    const Instruction *op = inst->operands[j];
    if (first + j < count) {  /* (an array each: gpu_collective_refusal) */
      l->in[j] = gpu_binding_of(c, op, 0), l->in_shapes[j] = &op->shape;
      l->out[j] = gpu_binding_of(c, inst, first + j), l->out_shapes[j] = all[first + j];
      if ((l->in[j] < 0 || l->out[j] < 0) && shape_byte_size(&op->shape) > 0)
        *ok = gpu_refuse(c, inst, "a collective's buffer the plan does not place");
    }
  }
  mem_free(all);
}

static void leaves_free(CollectiveLeaves *l) {
  mem_free(l->in);
  mem_free(l->out);
  mem_free(l->in_shapes);
  mem_free(l->out_shapes);
}

static Opcode across_op(Opcode op) {
  return op == OP_ALL_REDUCE_START          ? OP_ALL_REDUCE
         : op == OP_ALL_GATHER_START        ? OP_ALL_GATHER
         : op == OP_COLLECTIVE_PERMUTE_START ? OP_COLLECTIVE_PERMUTE
                                             : op;
}

/* ---- refusals ----
 * Decided from the instruction alone, in the supports hook: each operand
 * an array, in its result's layout, reduced by a type and to_apply NCCL
 * has. What needs this device's groups (a tuple all-to-all's operand
 * count) or the plan's bindings stays with the compile above. */
const char *gpu_collective_refusal(const Instruction *inst, int first) {
  Opcode op = across_op(inst->opcode);
  const Shape **all = mem_calloc((size_t)shape_leaf_count(&inst->shape) + 1, sizeof *all);
  int count = 0;
  shape_leaves_list(&inst->shape, all, &count);
  const char *why = NULL;
  for (int j = 0; j < inst->operand_count && !why; j++)
    if (shape_is_tuple(&inst->operands[j]->shape) || first + j >= count)
      why = "a collective across GPUs on a tuple operand";
  bool tuple_all_to_all = op == OP_ALL_TO_ALL && inst->attrs.dimensions.count == 0;
  for (int j = 0; j < inst->operand_count && !why && !tuple_all_to_all; j++) {
    const Shape *s = &inst->operands[j]->shape, *out = all[first + j];
    if (shape_byte_size(s) == 0) continue;
    if (s->element_size_bits || out->element_size_bits ||
        memcmp(s->minor_to_major, out->minor_to_major, (size_t)s->rank) != 0)
      why = "a collective across GPUs whose operand and result differ in layout";
    else if (op == OP_ALL_REDUCE || op == OP_REDUCE_SCATTER)
      why = reduction_refusal(inst, s);
  }
  mem_free(all);
  return why;
}

bool gpu_compile_collective_across(GpuCompile *c, const Instruction *inst, int first) {
  Opcode op = across_op(inst->opcode);
  int64_t groups = 0, self = 0;
  ncclComm_t comm = group_comm(c, inst, &groups, &self);
  if (!comm) return false;
  CollectiveLeaves l = {0};
  bool ok = true;
  leaves_gather(c, inst, first, &l, &ok);
  GpuCollective *k = mem_calloc(1, sizeof *k);
  *k = (GpuCollective){.cliques = c->nccl, .comm = comm};
  ok = ok && actions_add(c, k, inst, op, &l, groups, self);
  leaves_free(&l);
  if (!ok) {
    gpu_collective_free(k);
    return false;
  }
  gpu_steps_add(c->p->current, GPU_STEP_COLLECTIVE, inst)->collective = k;
  return true;
}
