/* The module graph: creation, lookup, and the opcode table's properties. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct OpcodeInfo {
  const char *name;
  int arity;
  OpForm form;
  OpCost cost;
  int flags;
  OpIdentity identity;
} OpcodeInfo;

static const OpcodeInfo opcode_table[] = {
#define AXLE_OPCODE_ROW(e, name, arity, form, cost, flags, identity) \
  {name, arity, form, cost, flags, identity},
    AXLE_OPCODES(AXLE_OPCODE_ROW)
#undef AXLE_OPCODE_ROW
};
static_assert(sizeof opcode_table / sizeof opcode_table[0] == OP_COUNT, "one row per opcode");
static_assert((int)OP_COUNT == AXLE_OPCODE_COUNT, "opcode count changed: revisit the tables indexed by opcode");

const char *opcode_name(Opcode op) { return op < OP_COUNT ? opcode_table[op].name : "?"; }
int opcode_arity(Opcode op) { return opcode_table[op].arity; }
OpForm opcode_form(Opcode op) { return opcode_table[op].form; }
OpCost opcode_cost(Opcode op) { return opcode_table[op].cost; }
OpIdentity opcode_identity(Opcode op) { return opcode_table[op].identity; }
bool opcode_is_elementwise(Opcode op) { return opcode_table[op].flags & F_EW; }
bool opcode_is_commutative(Opcode op) { return opcode_table[op].flags & F_COMM; }
bool opcode_is_associative(Opcode op) { return opcode_table[op].flags & F_ASSOC; }
bool opcode_has_side_effects(Opcode op) { return opcode_table[op].flags & F_SIDE; }

bool opcode_from_name(const char *s, size_t n, Opcode *out) {
  for (int op = 0; op < OP_COUNT; op++) {
    /* strncmp stops at the first differing byte; strlen runs on a match */
    const char *name = opcode_table[op].name;
    if (strncmp(name, s, n) == 0 && strlen(name) == n) {
      *out = (Opcode)op;
      return true;
    }
  }
  return false;
}

Module *module_create(const char *name) {
  Module *m = mem_calloc(1, sizeof *m);
  m->name = arena_strdup(&m->arena, name ? name : "module");
  return m;
}

int64_t module_replica_count(const Module *m) { return m->replica_count > 0 ? m->replica_count : 1; }
int64_t module_partition_count(const Module *m) { return m->partition_count > 0 ? m->partition_count : 1; }

void module_free(Module *m) {
  if (!m) return;
  for (int i = 0; i < m->literal_count; i++) literal_free(m->literals[i]);
  mem_free(m->literals);
  mem_free(m->names.slots);
  arena_free_all(&m->arena);
  mem_free(m);
}

Computation *module_find_computation(const Module *m, const char *name) {
  for (int i = 0; i < m->computation_count; i++)
    if (strcmp(m->computations[i]->name, name) == 0) return m->computations[i];
  return NULL;
}

SourceLoc instruction_source_loc(const Instruction *inst) {
  if (inst->loc.line == 0 && inst->opcode == OP_FUSION && inst->called_count > 0 && inst->called[0]->root)
    return inst->called[0]->root->loc;
  return inst->loc;
}

void instruction_describe(StrBuf *sb, const Instruction *inst) {
  strbuf_printf(sb, "%s", inst->name);
  const Metadata *md = inst->metadata;
  if (!md || (!md->op_name && !md->source_file)) return;
  strbuf_printf(sb, " (%s%s", md->op_name ? md->op_name : "", md->op_name && md->source_file ? " " : "");
  if (md->source_file) {
    strbuf_printf(sb, "at %s", md->source_file);
    if (md->source_line > 0) strbuf_printf(sb, ":%lld", (long long)md->source_line);
  }
  strbuf_printf(sb, ")");
}

Instruction *computation_find_instruction(const Computation *c, const char *name) {
  for (int i = 0; i < c->instruction_count; i++)
    if (strcmp(c->instructions[i]->name, name) == 0) return c->instructions[i];
  return NULL;
}

IntList intlist_copy(Arena *arena, const int64_t *values, int count) {
  IntList l = {count, NULL};
  if (count > 0) l.values = arena_memdup(arena, values, sizeof(int64_t) * (size_t)count);
  return l;
}

/* An absent group reads as all zero: the value the inline fields held
 * before these groups moved out of line, so every check that refused a
 * missing attribute (rank 0 against the operand's rank, say) still does. */
static const PadDims no_padding;
static const Window no_window;
static const ConvDims no_conv;
static const SliceDims no_slice;
static const DotDims no_dot;
static const GatherDims no_gather;
static const ScatterDims no_scatter;
static const FftDims no_fft;

const PadDims *attrs_padding(const Attrs *a) { return a->padding ? a->padding : &no_padding; }
const Window *attrs_window(const Attrs *a) { return a->window ? a->window : &no_window; }
const ConvDims *attrs_conv(const Attrs *a) { return a->conv ? a->conv : &no_conv; }
const SliceDims *attrs_slice(const Attrs *a) { return a->slice ? a->slice : &no_slice; }
const DotDims *attrs_dot(const Attrs *a) { return a->dot ? a->dot : &no_dot; }
const GatherDims *attrs_gather(const Attrs *a) { return a->gather ? a->gather : &no_gather; }
const ScatterDims *attrs_scatter(const Attrs *a) { return a->scatter ? a->scatter : &no_scatter; }
const FftDims *attrs_fft(const Attrs *a) { return a->fft ? a->fft : &no_fft; }

/* An absent group is topk's defaults as much as it can be: k 0 (which
 * inference refuses) and largest false; the parser fills largest=true. */
static const ScalarAttrs no_scalars;
static const ReplicaGroups no_replica_groups;
const ScalarAttrs *attrs_scalars(const Attrs *a) { return a->scalars ? a->scalars : &no_scalars; }
const ReplicaGroups *attrs_replica_groups(const Attrs *a) { return a->replica_groups ? a->replica_groups : &no_replica_groups; }
