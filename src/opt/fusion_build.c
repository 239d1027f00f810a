/* Turning fusion.c's groups into fusions: for each group, a fused
 * computation holding clones of its members, and in their place one
 * fusion instruction, written as XLA writes it:
 *
 *   fusion.add_multiply_reduce = f32[] fusion(x, y, z), kind=kInput,
 *       calls=fused_add_multiply_reduce
 *
 * The fused computation's parameters are the fusion's operands (each
 * value once); scalar constants are cloned in rather than passed. A group
 * with several outputs gets a tuple root, and its readers outside read
 * get-tuple-element of the fusion. Names say what a fusion holds: the
 * distinct opcodes of its members, alphabetically (shape plumbing such as
 * broadcast left out when there is anything else).
 */
#include <stdlib.h>
#include <string.h>

#include "opt/fusion_internal.h"

/* Up to this many opcode names go into a fusion's name. */
enum { FUSION_NAME_OPCODES = 6 };

static bool opcode_is_plumbing(Opcode op) {
  return op == OP_BROADCAST || op == OP_RESHAPE || op == OP_BITCAST;
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "add_multiply_reduce": the distinct opcodes of the members, sorted. */
static void group_label(const Fuser *f, const IntVec *members, char *out, size_t size) {
  const char *names[OP_COUNT];
  int count = 0;
  bool has_work = false;
  for (int k = 0; k < members->count; k++) has_work |= !opcode_is_plumbing(f->insts[members->items[k]]->opcode);
  bool seen[OP_COUNT] = {false};
  for (int k = 0; k < members->count; k++) {
    Opcode op = f->insts[members->items[k]]->opcode;
    if (seen[op] || (has_work && opcode_is_plumbing(op))) continue;
    seen[op] = true;
    names[count++] = opcode_name(op);
  }
  qsort(names, (size_t)count, sizeof *names, compare_strings);
  size_t len = 0;
  out[0] = 0;
  for (int k = 0; k < count && k < FUSION_NAME_OPCODES; k++) {
    int wrote = snprintf(out + len, size - len, "%s%s", k ? "_" : "", names[k]);
    if (wrote < 0 || (size_t)wrote >= size - len) break;
    len += (size_t)wrote;
  }
  for (char *c = out; *c; c++)
    if (*c == '-') *c = '_';
}

static FusionKind group_kind(const Fuser *f, const IntVec *members) {
  FusionKind kind = FUSION_LOOP;
  for (int k = 0; k < members->count; k++) {
    Opcode op = f->insts[members->items[k]]->opcode;
    if (op == OP_DOT || op == OP_CONVOLUTION) return FUSION_OUTPUT;
    if (op == OP_REDUCE) kind = FUSION_INPUT;
  }
  return kind;
}

/* The values a fusion reads from outside, in order, and the parameters of
 * the fused computation that stand for them. */
typedef struct FusionInputs {
  Instruction **values, **params;
  int count, capacity;
} FusionInputs;

/* The state of building one group. */
typedef struct GroupBuild {
  Fuser *f;
  int group;
  Computation *fused;
  Instruction **clone_of;   /* per original instruction: its clone in `fused` */
  IntVec cloned;            /* which entries of clone_of to clear afterwards */
  FusionInputs inputs;
} GroupBuild;

static Instruction *fused_parameter(GroupBuild *b, Instruction *value) {
  FusionInputs *in = &b->inputs;
  for (int k = 0; k < in->count; k++)
    if (in->values[k] == value) return in->params[k];
  if (in->count == in->capacity) {
    in->capacity = in->capacity ? 2 * in->capacity : 8;
    in->values = mem_realloc(in->values, sizeof *in->values * (size_t)in->capacity);
    in->params = mem_realloc(in->params, sizeof *in->params * (size_t)in->capacity);
  }
  char name[32];
  snprintf(name, sizeof name, "param_%d", in->count);
  Attrs attrs = {.parameter_number = in->count};
  Instruction *param = computation_add_instruction(b->fused, OP_PARAMETER, NULL, 0, NULL, 0, &attrs,
                                                   &value->shape, name);
  in->values[in->count] = value;
  in->params[in->count++] = param;
  return param;
}

/* What a member's operand becomes inside the fused computation: its clone,
 * a cloned scalar constant, or a parameter. */
static Instruction *fused_operand(GroupBuild *b, Instruction *operand) {
  Fuser *f = b->f;
  int i = operand->index;
  bool original = i >= 0 && i < f->n && f->insts[i] == operand;
  if (original && b->clone_of[i]) return b->clone_of[i];
  if (original && operand->opcode == OP_CONSTANT && operand->shape.rank == 0 &&
      !shape_is_tuple(&operand->shape)) {
    b->clone_of[i] = instruction_clone(b->fused, operand, NULL, NULL);
    fusion_intvec_push(&b->cloned, i);
    return b->clone_of[i];
  }
  return fused_parameter(b, operand);
}

/* The fused computation's root: the one output, or a tuple of them. */
static Instruction *fused_root(GroupBuild *b, const IntVec *outputs) {
  if (outputs->count == 1) return b->clone_of[outputs->items[0]];
  Arena *arena = &b->f->module->arena;
  Instruction **elements = arena_alloc(arena, sizeof *elements * (size_t)outputs->count);
  Shape shape = {.type = TYPE_TUPLE, .tuple_count = outputs->count};
  shape.tuple_shapes = arena_alloc(arena, sizeof *shape.tuple_shapes * (size_t)outputs->count);
  for (int k = 0; k < outputs->count; k++) {
    elements[k] = b->clone_of[outputs->items[k]];
    shape.tuple_shapes[k] = elements[k]->shape;
  }
  return computation_add_instruction(b->fused, OP_TUPLE, elements, outputs->count, NULL, 0, NULL, &shape,
                                     "tuple");
}

/* The tuple that is the only reader of every output outside the group,
 * reading each once and nothing else, or NULL. The fusion then takes that
 * tuple's place, outputs in its order: a tuple of get-tuple-elements of
 * the fusion would only be simplified back into the fusion later. */
static Instruction *outputs_whole_tuple_reader(const Fuser *f, int g, const IntVec *outputs) {
  Instruction *tuple = NULL;
  for (int k = 0; k < outputs->count; k++) {
    const Instruction *out = f->insts[outputs->items[k]];
    if (out == f->comp->root) return NULL;
    for (int q = 0; q < out->user_count; q++) {
      Instruction *user = out->users[q];
      int u = user->index;
      bool member = u < f->n && f->insts[u] == user && fusion_group_contains(f, g, u);
      if (member) continue;
      if (user->opcode != OP_TUPLE || (tuple && user != tuple)) return NULL;
      tuple = user;
    }
  }
  if (!tuple || tuple->operand_count != outputs->count) return NULL;
  /* It must read the outputs and nothing else: a tuple of one output and
   * a value from elsewhere has the right count but is not the fusion. */
  for (int k = 0; k < tuple->operand_count; k++) {
    bool is_output = false;
    for (int j = 0; j < outputs->count; j++) is_output |= f->insts[outputs->items[j]] == tuple->operands[k];
    if (!is_output) return NULL;
    for (int j = 0; j < k; j++)
      if (tuple->operands[j] == tuple->operands[k]) return NULL;
  }
  return tuple;
}

/* Readers of each output now read the fusion (or its tuple element). */
static void fusion_take_over_outputs(GroupBuild *b, Instruction *fusion, const IntVec *outputs,
                                     Instruction *whole_tuple) {
  Fuser *f = b->f;
  if (outputs->count == 1) {
    instruction_replace_all_uses(f->insts[outputs->items[0]], fusion);
    return;
  }
  if (whole_tuple) {
    instruction_replace_all_uses(whole_tuple, fusion);
    return;
  }
  for (int k = 0; k < outputs->count; k++) {
    Instruction *original = f->insts[outputs->items[k]];
    Attrs attrs = {.tuple_index = k};
    Instruction *element = computation_add_instruction(f->comp, OP_GET_TUPLE_ELEMENT, &fusion, 1, NULL, 0,
                                                       &attrs, &original->shape, original->name);
    instruction_replace_all_uses(original, element);
  }
}

/* Builds group g; returns the tuple it replaced whole, if any (now dead). */
static Instruction *group_build(Fuser *f, int g, IntVec *outputs, Instruction **clone_of) {
  const IntVec *members = &f->groups[g].members;
  Instruction *whole_tuple = outputs->count > 1 ? outputs_whole_tuple_reader(f, g, outputs) : NULL;
  for (int k = 0; whole_tuple && k < whole_tuple->operand_count; k++)
    outputs->items[k] = whole_tuple->operands[k]->index;
  char label[160], name[192];
  group_label(f, members, label, sizeof label);
  snprintf(name, sizeof name, "fused_%s", label);
  GroupBuild b = {.f = f, .group = g, .clone_of = clone_of};
  b.fused = module_add_computation(f->module, name);
  Instruction **operands = NULL;
  int operand_capacity = 0;
  for (int k = 0; k < members->count; k++) {
    Instruction *src = f->insts[members->items[k]];
    if (src->operand_count > operand_capacity) {
      operand_capacity = src->operand_count;
      operands = mem_realloc(operands, sizeof *operands * (size_t)operand_capacity);
    }
    for (int q = 0; q < src->operand_count; q++) operands[q] = fused_operand(&b, src->operands[q]);
    clone_of[members->items[k]] = instruction_clone(b.fused, src, operands, NULL);
    fusion_intvec_push(&b.cloned, members->items[k]);
  }
  mem_free(operands);
  Instruction *root = fused_root(&b, outputs);
  computation_set_root(b.fused, root);

  Attrs attrs = {.fusion_kind = group_kind(f, members)};
  snprintf(name, sizeof name, "fusion.%s", label);
  Instruction *fusion = computation_add_instruction(f->comp, OP_FUSION, b.inputs.values, b.inputs.count,
                                                    &b.fused, 1, &attrs, &root->shape, name);
  /* The fusion speaks for its (last) root in messages, dumps and listings;
   * the members keep their own metadata in the fused computation. */
  fusion->metadata = f->insts[outputs->items[outputs->count - 1]]->metadata;
  fusion_take_over_outputs(&b, fusion, outputs, whole_tuple);
  for (int k = 0; k < b.cloned.count; k++) clone_of[b.cloned.items[k]] = NULL;
  fusion_intvec_free(&b.cloned);
  mem_free(b.inputs.values);
  mem_free(b.inputs.params);
  return whole_tuple;
}

/* The fused originals (and the scalar constants only they read) are dead
 * now, unless something outside the fusions still reads them (dead code
 * that was there before, left for dce). */
static void fused_originals_remove(Fuser *f, const bool *fused, const bool *constant_was_read) {
  bool *dead = mem_calloc((size_t)f->n + 1, sizeof *dead);
  Instruction **doomed = mem_calloc((size_t)f->n + 1, sizeof *doomed);
  int doomed_count = 0;
  /* Users before operands: a member is dead once all its readers are. */
  for (int i = f->n - 1; i >= 0; i--) {
    Instruction *inst = f->insts[i];
    bool removable = fused[i] || (constant_was_read[i] && inst->opcode == OP_CONSTANT);
    if (!removable || inst == f->comp->root) continue;
    bool read = false;
    for (int k = 0; k < inst->user_count && !read; k++) {
      int u = inst->users[k]->index;
      read = !(u < f->n && f->insts[u] == inst->users[k] && dead[u]);
    }
    dead[i] = !read;
    if (dead[i]) doomed[doomed_count++] = inst;
  }
  computation_remove_instructions(f->comp, doomed, doomed_count);
  mem_free(doomed);
  mem_free(dead);
}

int fusion_groups_build(Fuser *f) {
  /* Outputs are decided before anything changes: building one group
   * rewires the readers of its outputs. */
  IntVec *outputs = mem_calloc((size_t)f->group_count + 1, sizeof *outputs);
  for (int g = 0; g < f->group_count; g++) {
    if (f->groups[g].merged) continue;
    fuser_mark_group(f, g);
    const IntVec *members = &f->groups[g].members;
    for (int k = 0; k < members->count; k++)
      if (fuser_is_output(f, members->items[k])) fusion_intvec_push(&outputs[g], members->items[k]);
  }
  size_t n = (size_t)f->n + 1;
  Instruction **clone_of = mem_calloc(n, sizeof *clone_of);
  bool *fused = mem_calloc(n, sizeof *fused);
  bool *constant_was_read = mem_calloc(n, sizeof *constant_was_read);
  for (int i = 0; i < f->n; i++) constant_was_read[i] = f->insts[i]->opcode == OP_CONSTANT && f->insts[i]->user_count;
  int made = 0;
  for (int g = 0; g < f->group_count; g++) {
    if (f->groups[g].merged || outputs[g].count == 0) continue;
    Instruction *whole_tuple = group_build(f, g, &outputs[g], clone_of);
    if (whole_tuple && whole_tuple->index < f->n && f->insts[whole_tuple->index] == whole_tuple)
      fused[whole_tuple->index] = true;
    for (int k = 0; k < f->groups[g].members.count; k++) fused[f->groups[g].members.items[k]] = true;
    made++;
  }
  fused_originals_remove(f, fused, constant_was_read);
  for (int g = 0; g < f->group_count; g++) fusion_intvec_free(&outputs[g]);
  mem_free(outputs);
  mem_free(clone_of);
  mem_free(fused);
  mem_free(constant_was_read);
  return made;
}
