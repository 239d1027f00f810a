/* Questions about a reduction's accumulators that every code generator
 * asks before it splits the reduced space among threads or lanes: which
 * op combines each accumulator, whether the initial value is that op's
 * identity, and whether anything but the combiner reads an accumulator
 * inside the loop. Partial results of a split combine exactly as the
 * sequential loop would only when all three hold (kernel.h). And the
 * form of each load and store along the index a vector loop walks, which
 * decides where a vector reads and writes (kernel_access_form). */
#include <math.h>
#include <stdint.h>

#include "ir/kernel/kernel.h"

bool kernel_init_value(const Kernel *k, const KernelOp *init, KernelOp *out) {
  *out = *init;
  if (init->kop == KOP_CONSTANT) return true;
  if (init->kop != KOP_LOAD) return false;
  const KernelBuffer *in = &k->inputs[init->buffer];
  const Literal *lit = in->constant;
  if (!lit && in->source && in->source->opcode == OP_CONSTANT) lit = in->source->attrs.literal;
  if (!lit || in->shape.rank != 0 || type_is_complex(in->shape.type)) return false;
  out->kop = KOP_CONSTANT;
  if (type_is_float(init->type)) out->value.f = literal_get_f64(lit, 0);
  else out->value.i = literal_get_s64(lit, 0);
  return true;
}

/* From the op table's identity column. Integer accumulators are 32 or 64
 * bits wide; an unsigned 32-bit all-ones value may be held sign-extended. */
bool kernel_constant_is_identity(const KernelOp *c, Opcode op) {
  ElementType t = c->type;
  OpIdentity id = opcode_identity(op);
  if (type_is_float(t)) {
    double v = c->value.f;
    return (id == ID_ZERO && v == 0) || (id == ID_ONE && v == 1) || (id == ID_LOWEST && v == -INFINITY) ||
           (id == ID_HIGHEST && v == INFINITY);
  }
  bool is_signed = t == TYPE_S32 || t == TYPE_S64;
  int64_t smin = t == TYPE_S32 ? INT32_MIN : INT64_MIN, smax = t == TYPE_S32 ? INT32_MAX : INT64_MAX;
  int64_t umax = t == TYPE_U32 ? (int64_t)UINT32_MAX : -1;
  int64_t v = c->value.i;
  switch (id) {
  case ID_ZERO: return v == 0;
  case ID_ONE: return v == 1;
  case ID_ALL_ONES: return t == TYPE_U32 ? (uint32_t)v == UINT32_MAX : v == -1;
  case ID_LOWEST: return is_signed ? v == smin : v == 0;
  case ID_HIGHEST: return is_signed ? v == smax : v == umax || (t == TYPE_U32 && v == -1);
  default: return false;
  }
}

void kernel_mark_acc_dependent(const Kernel *k, bool *dependent) {
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    dependent[i] = op->kop == KOP_ACC_READ;
    for (int a = 0; op->kop == KOP_HLO && a < op->arg_count; a++) dependent[i] |= dependent[op->args[a]];
  }
}

static bool is_split_combiner(Opcode op) {
  return op == OP_ADD || op == OP_MULTIPLY || op == OP_MAXIMUM || op == OP_MINIMUM || op == OP_AND || op == OP_OR;
}

bool kernel_acc_combiner(const Kernel *k, const bool *dependent, int a, Opcode *combiner) {
  bool found = false;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *w = &k->ops[i];
    if (w->kop != KOP_ACC_WRITE || w->acc != a || w->block == KBLOCK_PRE) continue;
    const KernelOp *c = &k->ops[w->args[0]];
    if (c->kop != KOP_HLO || c->arg_count != 2 || !is_split_combiner(c->op)) return false;
    const KernelOp *x = &k->ops[c->args[0]], *y = &k->ops[c->args[1]];
    bool x_acc = x->kop == KOP_ACC_READ && x->acc == a, y_acc = y->kop == KOP_ACC_READ && y->acc == a;
    if (!(x_acc && !dependent[c->args[1]]) && !(y_acc && !dependent[c->args[0]])) return false;
    if (found && *combiner != c->op) return false;
    *combiner = c->op;
    found = true;
  }
  if (!found) return false;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *w = &k->ops[i];
    KernelOp init;
    if (w->kop == KOP_ACC_WRITE && w->acc == a && w->block == KBLOCK_PRE &&
        (!kernel_init_value(k, &k->ops[w->args[0]], &init) || !kernel_constant_is_identity(&init, *combiner)))
      return false;
  }
  return true;
}

bool kernel_only_combiners_read(const Kernel *k, const bool *dependent) {
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    for (int a = 0; op->kop == KOP_HLO && a < op->arg_count; a++) {
      if (!dependent[op->args[a]]) continue;
      bool is_combiner = false;
      for (int j = 0; j < k->op_count; j++)
        is_combiner |= k->ops[j].kop == KOP_ACC_WRITE && k->ops[j].block == KBLOCK_REDUCE && k->ops[j].args[0] == i;
      if (!is_combiner || k->ops[op->args[a]].kop != KOP_ACC_READ) return false;
    }
  }
  return true;
}

bool kernel_reduction_splits(const Kernel *k, Opcode *combiners) {
  bool *dependent = mem_calloc((size_t)k->op_count + 1, sizeof *dependent);
  kernel_mark_acc_dependent(k, dependent);
  bool ok = true;
  for (int a = 0; ok && a < k->acc_count; a++) {
    combiners[a] = OP_ADD;
    ok = k->acc_types[a] != TYPE_PRED && kernel_acc_combiner(k, dependent, a, &combiners[a]);
  }
  ok = ok && kernel_only_combiners_read(k, dependent);
  mem_free(dependent);
  return ok;
}

/* Value v is the walked index: a loop kernel's loop index of walk_dim,
 * or the access's own phase's index of reduced dimension walk_dim. */
static bool is_walked_index(const Kernel *k, const KernelOp *access, int v, int walk_dim) {
  const KernelOp *op = &k->ops[v];
  if (k->kind == KERNEL_LOOP) return op->kop == KOP_INDEX && op->dim == walk_dim;
  return op->kop == KOP_RINDEX && op->dim == walk_dim && op->phase == access->phase;
}

/* Value v is the walked index (offset 0) or it plus a constant (a slice
 * of the row: the LSTM's gates at 256, 512, 768). */
static bool walked_plus_constant(const Kernel *k, const KernelOp *access, int v, int walk_dim, int64_t *offset) {
  const KernelOp *op = &k->ops[v];
  *offset = 0;
  if (is_walked_index(k, access, v, walk_dim)) return true;
  if (op->kop != KOP_HLO || op->op != OP_ADD || op->type != TYPE_S64) return false;
  for (int a = 0; a < 2; a++) {
    if (is_walked_index(k, access, op->args[a], walk_dim) && k->ops[op->args[1 - a]].kop == KOP_CONSTANT) {
      *offset = k->ops[op->args[1 - a]].value.i;
      return true;
    }
  }
  return false;
}

/* Whether index value v stays the same along the walk. A phase's
 * loop-invariant values are marked (kernel_order_blocks); in a loop
 * kernel every op is in PRE and none is marked, so only what needs no
 * computing counts: a constant or another dimension's loop index. */
static bool fixed_along_walk(const Kernel *k, int v, int walk_dim) {
  const KernelOp *op = &k->ops[v];
  if (k->kind == KERNEL_LOOP) return op->kop == KOP_CONSTANT || (op->kop == KOP_INDEX && op->dim != walk_dim);
  return op->block == KBLOCK_PRE || op->invariant;
}

KernelAccessForm kernel_access_form(const Kernel *k, int i, int walk_dim) {
  const KernelOp *op = &k->ops[i];
  KernelAccessForm form = {KACCESS_OTHER, -1, 0};
  bool store = op->kop == KOP_STORE;
  if (!store && op->kop != KOP_LOAD) return form;
  /* the PRE and POST blocks of a reduction run once per output point:
   * no walk to be contiguous or invariant along */
  if (k->kind != KERNEL_LOOP && op->block != KBLOCK_REDUCE && op->block != KBLOCK_ROW) return form;
  const Shape *s = store ? &k->outputs[op->buffer].shape : &k->inputs[op->buffer].shape;
  int first = store ? 1 : 0, walked = -1;
  int64_t offset = 0;
  for (int d = 0; d < s->rank; d++) {
    int v = op->args[first + d];
    int64_t here;
    if (walked_plus_constant(k, op, v, walk_dim, &here)) {
      if (walked >= 0 || d != (int)s->minor_to_major[0]) return form;
      walked = d;
      offset = here;
    } else if (s->dims[d] != 1 && !fixed_along_walk(k, v, walk_dim)) {
      return form; /* a dimension of extent 1 has one valid index, 0, whatever computes it */
    }
  }
  form.kind = walked >= 0 ? KACCESS_CONTIGUOUS : KACCESS_INVARIANT;
  form.dim = walked;
  form.offset = offset;
  return form;
}
