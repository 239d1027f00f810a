/* Pass "canonicalize-dots": every dot reads its operands in the canonical
 * order of its plan (src/ir/dot_plan.h), lhs as [batch, M, K] and rhs as
 * [batch, K, N], so that a dot's dimension numbers are always
 *
 *   lhs_batch_dims = rhs_batch_dims = {0, ..., B-1},
 *   lhs_contracting_dims = {B+M, ...}, rhs_contracting_dims = {B, ...}
 *
 * (XLA's DotDecomposer writes the same order with transposes, then merges
 * each group into one dim with reshapes.) The transpose to that order is
 * written as a bitcast: its result's layout is the permuted layout of the
 * operand, so its bytes are the operand's own and it costs nothing. The
 * GEMMs then find every stride where they found it before, and no copy is
 * made that the GEMM's packer or the GPU's strided loads absorbed. A
 * materialized transpose into the default layout, as XLA makes, would cost
 * a pass over memory that today's GEMM does without; so the canonical
 * order lives in the plan and in these free relabels, not in new copies.
 *
 * The result keeps its dims ([batch, M, N] in HLO already), the pairs
 * keep their order and so the sum its order: every value is bit for bit
 * what it was. Groups are not merged into one dim: a merge is a free
 * bitcast only where the group's dims are adjacent in memory, which the
 * GEMM's own stride merge (dot_dims_merge) already finds.
 *
 * Dots inside fusion bodies are rewritten the same way, so that fusions
 * given in the input (XLA's kOutput and kLoop fusions around a dot) reach
 * the backends in the canonical form too: the relabels sit inside the
 * body, over its parameters, whose shapes (like the root's) stay as they
 * were; the program stage reads a relabelled fusion parameter where it
 * lies (program_fused_operand, src/opt/program.c), so a relabel inside a
 * fusion costs nothing either.
 *
 * Left alone: operands with packed (E(n)) or dynamic dims, and scaled-dot
 * and ragged-dot.
 *
 * requires: verified. breaks: nothing (new instructions sit just before
 * the dot they replace). */
#include <string.h>

#include "ir/dot_plan.h"
#include "opt/opt.h"

/* x's shape read in `order` (dim i is x's dim order[i]), over x's own
 * bytes: the result's minor_to_major names x's dims where x's names them. */
Shape relabel_shape(const Shape *x, const int64_t *order) {
  Shape s = *x;
  int64_t position[AXLE_MAX_RANK];
  for (int i = 0; i < s.rank; i++) {
    s.dims[i] = x->dims[order[i]];
    position[order[i]] = i;
  }
  for (int j = 0; j < s.rank; j++) s.minor_to_major[j] = (int8_t)position[x->minor_to_major[j]];
  s.has_layout = true;
  return s;
}

/* x read in `order` as a bitcast placed before `before`. A bitcast of a
 * bitcast is one bitcast, and one to its operand's own shape is the
 * operand itself. */
Instruction *relabel_instruction(Computation *c, Instruction *before, Instruction *x, const int64_t *order) {
  Instruction *source = x;
  while (source->opcode == OP_BITCAST && source->operands[0]->shape.type == x->shape.type &&
         !shape_is_tuple(&source->operands[0]->shape) && !source->operands[0]->shape.element_size_bits)
    source = source->operands[0];
  Shape s = relabel_shape(&x->shape, order);
  if (shape_identical(&s, &source->shape)) return source;
  Attrs none = {0};
  Instruction *made = computation_add_instruction(c, OP_BITCAST, &source, 1, NULL, 0, &none, &s, NULL);
  made->metadata = before->metadata;
  made->loc = before->loc;
  computation_move_before(c, made, before);
  return made;
}

static bool operand_relabels(const Instruction *x) {
  return !shape_is_tuple(&x->shape) && !x->shape.element_size_bits && !x->shape.dynamic_dims;
}

static void range(int64_t *out, int64_t from, int count) {
  for (int i = 0; i < count; i++) out[i] = from + i;
}

/* dot in canonical form, in its place; false when it already was (or is
 * left alone). */
static bool canonicalize_dot(Computation *c, Instruction *dot) {
  Instruction *lhs = dot->operands[0], *rhs = dot->operands[1];
  if (!operand_relabels(lhs) || !operand_relabels(rhs)) return false;
  const DotDims *dd = attrs_dot(&dot->attrs);
  DotPlan p;
  if (dot_plan_make(dd, &lhs->shape, &rhs->shape, &p) || p.ragged != DOT_RAGGED_NONE) return false;
  if (p.lhs_canonical && p.rhs_canonical) return false;
  int nb = p.batch_count, nm = p.m_count, nk = p.k_count;
  int64_t batch[AXLE_MAX_RANK], lhs_k[AXLE_MAX_RANK], rhs_k[AXLE_MAX_RANK];
  range(batch, 0, nb);
  range(lhs_k, nb + nm, nk);
  range(rhs_k, nb, nk);
  DotDims canonical = *dd;
  canonical.lhs_batch = canonical.rhs_batch = (IntList){nb, batch};
  canonical.lhs_contracting = (IntList){nk, lhs_k};
  canonical.rhs_contracting = (IntList){nk, rhs_k};
  Instruction *operands[2] = {p.lhs_canonical ? lhs : relabel_instruction(c, dot, lhs, p.lhs_order),
                              p.rhs_canonical ? rhs : relabel_instruction(c, dot, rhs, p.rhs_order)};
  Attrs attrs = dot->attrs;
  attrs.dot = &canonical;
  Instruction *made = computation_add_instruction(c, OP_DOT, operands, 2, NULL, 0, &attrs, &dot->shape, dot->name);
  made->metadata = dot->metadata;
  made->loc = dot->loc;
  computation_move_before(c, made, dot);
  instruction_replace_all_uses(dot, made);
  /* The dot keeps its name (kernels, dumps and messages are named after
   * it): free again once the old one is gone, and still the module's. */
  const char *name = dot->name;
  computation_remove_instruction(c, dot);
  made->name = name;
  return true;
}

bool canonicalize_dots(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx, (void)failed, (void)st;
  bool changed = false;
  for (int k = 0; k < m->computation_count; k++) {
    Computation *c = m->computations[k];
    bool has_dot = false;
    for (int i = 0; i < c->instruction_count && !has_dot; i++) has_dot = c->instructions[i]->opcode == OP_DOT;
    if (!has_dot) continue;
    for (int i = 0; i < c->instruction_count; i++) {
      Instruction *inst = c->instructions[i];
      if (inst->opcode == OP_DOT && canonicalize_dot(c, inst)) changed = true;
    }
  }
  return changed;
}
