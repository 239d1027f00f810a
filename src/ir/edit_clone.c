/* Cloning instructions, computations and modules (part of the editing core,
 * ir.h's edit.c section). A clone is built with computation_add_instruction,
 * so its use lists, names and literal ownership follow the same rules as
 * everything else added to a module. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

const Metadata *metadata_copy_into_arena(const Metadata *md, Arena *arena) {
  if (!md) return NULL;
  Metadata *copy = arena_alloc(arena, sizeof *copy);
  copy->op_name = md->op_name ? arena_strdup(arena, md->op_name) : NULL;
  copy->source_file = md->source_file ? arena_strdup(arena, md->source_file) : NULL;
  copy->source_line = md->source_line;
  return copy;
}

Instruction *instruction_clone(Computation *dst, const Instruction *src, Instruction *const *new_operands,
                               const char *name_base) {
  Attrs attrs = src->attrs;
  if (attrs.literal) attrs.literal = literal_clone(attrs.literal);
  Instruction *inst = computation_add_instruction(dst, src->opcode, new_operands, src->operand_count, src->called,
                                                  src->called_count, &attrs, &src->shape,
                                                  name_base ? name_base : src->name);
  inst->loc = src->loc;
  inst->metadata = metadata_copy_into_arena(src->metadata, &dst->module->arena);
  return inst;
}

/* A computation of the source module and its copy, for remapping calls. */
typedef struct ComputationPair {
  const Computation *from;
  Computation *to;
} ComputationPair;

static int pair_compare(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const ComputationPair *)a)->from, y = (uintptr_t)((const ComputationPair *)b)->from;
  return x < y ? -1 : x > y;
}

static Computation *computation_clone_body(Module *dst, const Computation *src, const char *name) {
  Computation *c = module_add_computation(dst, name ? name : src->name);
  c->loc = src->loc;
  int n = src->instruction_count;
  Instruction **copies = mem_calloc((size_t)n + 1, sizeof *copies);
  int operand_capacity = 16;
  Instruction **operands = mem_calloc((size_t)operand_capacity, sizeof *operands);
  for (int i = 0; i < n; i++) {
    const Instruction *inst = src->instructions[i];
    if (inst->operand_count > operand_capacity) {
      operand_capacity = inst->operand_count;
      operands = mem_realloc(operands, sizeof *operands * (size_t)operand_capacity);
    }
    for (int k = 0; k < inst->operand_count; k++) operands[k] = copies[inst->operands[k]->index];
    copies[i] = instruction_clone(c, inst, operands, inst->name);
  }
  if (src->root) c->root = copies[src->root->index];
  mem_free(operands);
  mem_free(copies);
  return c;
}

Computation *computation_clone(Module *dst, const Computation *src, const char *name) {
  return computation_clone_body(dst, src, name);
}

/* A parsed module may give a computation and an instruction the same name
 * (they are told apart by where they appear), which module_unique_name,
 * one pool for both, would have renamed: a copy keeps the source's names. */
static void keep_source_names(Computation *to, const Computation *from) {
  Arena *arena = &to->module->arena;
  if (strcmp(to->name, from->name) != 0) {
    to->name = arena_strdup(arena, from->name);
    module_register_name(to->module, to->name);
  }
  for (int i = 0; i < to->instruction_count; i++) {
    Instruction *inst = to->instructions[i];
    const char *wanted = from->instructions[i]->name;
    if (strcmp(inst->name, wanted) == 0) continue;
    inst->name = arena_strdup(arena, wanted);
    module_register_name(to->module, inst->name);
  }
}

Module *module_clone(const Module *src) {
  Module *m = module_create(src->name);
  if (src->filename) m->filename = arena_strdup(&m->arena, src->filename);
  m->replica_count = src->replica_count;
  m->partition_count = src->partition_count;
  if (src->io_alias_count > 0) {
    m->io_aliases = arena_memdup(&m->arena, src->io_aliases, sizeof(IoAlias) * (size_t)src->io_alias_count);
    m->io_alias_count = src->io_alias_count;
    for (int i = 0; i < m->io_alias_count; i++) {
      IoAlias *a = &m->io_aliases[i];
      a->output_index = intlist_copy(&m->arena, a->output_index.values, a->output_index.count);
      a->parameter_index = intlist_copy(&m->arena, a->parameter_index.values, a->parameter_index.count);
    }
  }
  int n = src->computation_count;
  ComputationPair *pairs = mem_calloc((size_t)n + 1, sizeof *pairs);
  for (int i = 0; i < n; i++) {
    const Computation *from = src->computations[i];
    Computation *to = computation_clone_body(m, from, from->name);
    keep_source_names(to, from);
    to->is_entry = from->is_entry;
    if (from == src->entry) m->entry = to;
    pairs[i] = (ComputationPair){from, to};
  }
  /* The copies still call the source's computations: point them at the copies. */
  qsort(pairs, (size_t)n, sizeof *pairs, pair_compare);
  for (int i = 0; i < m->computation_count; i++) {
    Computation *c = m->computations[i];
    for (int k = 0; k < c->instruction_count; k++) {
      Instruction *inst = c->instructions[k];
      for (int j = 0; j < inst->called_count; j++) {
        ComputationPair key = {inst->called[j], NULL};
        ComputationPair *found = bsearch(&key, pairs, (size_t)n, sizeof *pairs, pair_compare);
        assert(found);
        inst->called[j] = found->to;
      }
    }
  }
  mem_free(pairs);
  return m;
}
