/* Pass "canonicalize-dots" (src/opt/canonicalize_dots.c): each dot reads
 * its operands as [batch, M, K] and [batch, K, N] through bitcasts that
 * relabel the operand's own bytes, and computes the same bits. Modules are
 * written inline; the expected layouts are worked out by hand beside each
 * test. */
#include <stdlib.h>
#include <string.h>

#include "ir/dot_plan.h"
#include "opt/opt.h"
#include "pass_test_support.h"
#include "runtime/executable.h"

/* Runs the pass and the verifier after it; returns whether it changed m. */
static bool canonicalize(Module *m) { return run_pass_verified(canonicalize_dots, m); }

static bool list_is(const IntList *l, int n, const int64_t *want) {
  if (l->count != n) return false;
  for (int i = 0; i < n; i++)
    if (l->values[i] != want[i]) return false;
  return true;
}

static bool layout_is(const Shape *s, const int8_t *want) {
  return memcmp(s->minor_to_major, want, (size_t)s->rank) == 0;
}

/* lhs f32[5,3,2,7]: batch 3, contracting {2,0}, free 1. Canonical order
 * 3,1,2,0 gives f32[7,3,2,5]; its dim i is x's order[i], so x's minor-to-
 * major {3,2,1,0} becomes {0,2,1,3}. rhs f32[2,7,4,5]: batch 1,
 * contracting {0,3}, free 2: order 1,0,3,2, f32[7,2,5,4]{2,3,0,1}. */
static const char batch_last_contracting_first[] =
    "HloModule m\nENTRY e {\n"
    "  a = f32[5,3,2,7]{3,2,1,0} parameter(0)\n"
    "  b = f32[2,7,4,5]{3,2,1,0} parameter(1)\n"
    "  ROOT d = f32[7,3,4]{2,1,0} dot(a, b), lhs_batch_dims={3}, rhs_batch_dims={1}, "
    "lhs_contracting_dims={2,0}, rhs_contracting_dims={0,3}\n}\n";

TEST(batch_last_and_contracting_first_become_relabels_in_canonical_order) {
  Module *m = parse_text(batch_last_contracting_first);
  if (!m) return;
  EXPECT(canonicalize(m), "the pass changes the module");
  const Instruction *d = m->entry->root;
  EXPECT(d->opcode == OP_DOT, "the root is a dot, not %s", opcode_name(d->opcode));
  EXPECT(strcmp(d->name, "d") == 0, "the dot keeps its name (kernels are named after it), not %s", d->name);
  const DotDims *dd = attrs_dot(&d->attrs);
  EXPECT(list_is(&dd->lhs_batch, 1, (int64_t[]){0}) && list_is(&dd->rhs_batch, 1, (int64_t[]){0}), "batch {0}");
  EXPECT(list_is(&dd->lhs_contracting, 2, (int64_t[]){2, 3}), "lhs contracting {2,3}");
  EXPECT(list_is(&dd->rhs_contracting, 2, (int64_t[]){1, 2}), "rhs contracting {1,2}");
  const Instruction *l = d->operands[0], *r = d->operands[1];
  EXPECT(l->opcode == OP_BITCAST && l->operands[0]->opcode == OP_PARAMETER, "lhs is a bitcast of the parameter");
  EXPECT(r->opcode == OP_BITCAST && r->operands[0]->opcode == OP_PARAMETER, "rhs is a bitcast of the parameter");
  int64_t ldims[] = {7, 3, 2, 5}, rdims[] = {7, 2, 5, 4};
  EXPECT(memcmp(l->shape.dims, ldims, sizeof ldims) == 0 && layout_is(&l->shape, (int8_t[]){0, 2, 1, 3}),
         "lhs f32[7,3,2,5]{0,2,1,3}");
  EXPECT(memcmp(r->shape.dims, rdims, sizeof rdims) == 0 && layout_is(&r->shape, (int8_t[]){2, 3, 0, 1}),
         "rhs f32[7,2,5,4]{2,3,0,1}");
  EXPECT(!canonicalize(m), "a second run finds nothing to do");
  module_free(m);
}

TEST(the_rewritten_dot_computes_the_same_bits) {
  static const char *modules[] = {
      batch_last_contracting_first,
      /* several contracting dims, lhs column-major */
      "HloModule m\nENTRY e {\n  a = f32[3,4,6]{0,1,2} parameter(0)\n  b = f32[4,5,3]{2,1,0} parameter(1)\n"
      "  ROOT d = f32[6,5]{1,0} dot(a, b), lhs_contracting_dims={1,0}, rhs_contracting_dims={0,2}\n}\n",
      /* s32, batch in the middle, rhs free dim first */
      "HloModule m\nENTRY e {\n  a = s32[4,2,6]{2,1,0} parameter(0)\n  b = s32[5,6,2]{2,1,0} parameter(1)\n"
      "  ROOT d = s32[2,4,5]{2,1,0} dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={2}, "
      "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}\n",
  };
  for (size_t i = 0; i < sizeof modules / sizeof *modules; i++) {
    Module *m = parse_text(modules[i]);
    if (!m) continue;
    Literal *before = evaluate_seeded(m);
    EXPECT(canonicalize(m), "module %zu: the pass changes it", i);
    Literal *after = evaluate_seeded(m);
    EXPECT(before && after && shape_byte_size(&before->shape) == shape_byte_size(&after->shape) &&
               memcmp(before->data, after->data, (size_t)shape_byte_size(&before->shape)) == 0,
           "module %zu: the same bits before and after", i);
    literal_free(before);
    literal_free(after);
    module_free(m);
  }
}

/* dot(bitcast(a) as f32[16,8]{0,1}, b) contracting its dim 0 reads a's
 * rows: the canonical lhs is a's own shape, so the dot reads a itself. */
TEST(a_transpose_written_as_a_bitcast_folds_into_its_source) {
  Module *m = parse_text("HloModule m\nENTRY e {\n  a = f32[8,16]{1,0} parameter(0)\n"
                         "  b = f32[16,4]{1,0} parameter(1)\n  at = f32[16,8]{0,1} bitcast(a)\n"
                         "  ROOT d = f32[8,4]{1,0} dot(at, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n");
  if (!m) return;
  EXPECT(canonicalize(m), "the pass changes the module");
  const Instruction *d = m->entry->root;
  EXPECT(d->operands[0]->opcode == OP_PARAMETER, "the dot reads parameter a, not %s",
         opcode_name(d->operands[0]->opcode));
  EXPECT(list_is(&attrs_dot(&d->attrs)->lhs_contracting, 1, (int64_t[]){1}), "lhs contracting {1}");
  module_free(m);
}

TEST(a_canonical_dot_is_left_alone) {
  Module *m = parse_text("HloModule m\nENTRY e {\n  a = f32[3,8,16] parameter(0)\n  b = f32[3,16,4] parameter(1)\n"
                         "  ROOT d = f32[3,8,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                         "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}\n");
  if (m) EXPECT(!canonicalize(m), "a canonical dot is not rewritten");
  module_free(m);
}

/* Fusions given in the input (as XLA's optimizer writes them) around dots
 * in other orders: batch dims last or in the middle, contracting dims
 * first, operands computed inside the fusion, a root dot, an epilogue. */
static const char *const fused_modules[] = {
    /* kOutput: contracting dim first in both, bias and relu after */
    "HloModule m\n"
    "fused {\n  p0 = f32[16,8] parameter(0)\n  p1 = f32[4,16] parameter(1)\n  p2 = f32[4] parameter(2)\n"
    "  d = f32[8,4] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n"
    "  b = f32[8,4] broadcast(p2), dimensions={1}\n  s = f32[8,4] add(d, b)\n"
    "  z = f32[8,4] broadcast(f32[] constant(0)), dimensions={}\n  ROOT r = f32[8,4] maximum(s, z)\n}\n"
    "ENTRY e {\n  a = f32[16,8] parameter(0)\n  w = f32[4,16] parameter(1)\n  bias = f32[4] parameter(2)\n"
    "  ROOT f = f32[8,4] fusion(a, w, bias), kind=kOutput, calls=fused\n}\n",
    /* kLoop, the dot the root: batch last in lhs, in the middle of rhs */
    "HloModule m\n"
    "fused {\n  p0 = f32[6,5,3] parameter(0)\n  p1 = f32[7,3,6] parameter(1)\n"
    "  ROOT d = f32[3,5,7] dot(p0, p1), lhs_batch_dims={2}, rhs_batch_dims={1}, "
    "lhs_contracting_dims={0}, rhs_contracting_dims={2}\n}\n"
    "ENTRY e {\n  a = f32[6,5,3] parameter(0)\n  b = f32[7,3,6] parameter(1)\n"
    "  ROOT f = f32[3,5,7] fusion(a, b), kind=kLoop, calls=fused\n}\n",
    /* an operand computed inside the fusion, a column-major parameter,
     * two contracting dims */
    "HloModule m\n"
    "fused {\n  p0 = f32[3,4,6]{0,1,2} parameter(0)\n  p1 = f32[4,5,3] parameter(1)\n"
    "  n = f32[4,5,3] negate(p1)\n"
    "  ROOT d = f32[6,5] dot(p0, n), lhs_contracting_dims={1,0}, rhs_contracting_dims={0,2}\n}\n"
    "ENTRY e {\n  a = f32[3,4,6]{0,1,2} parameter(0)\n  b = f32[4,5,3] parameter(1)\n"
    "  ROOT f = f32[6,5] fusion(a, b), kind=kOutput, calls=fused\n}\n",
    /* f64, the dot's result read by the root through a multiply */
    "HloModule m\n"
    "fused {\n  p0 = f64[5,2,9] parameter(0)\n  p1 = f64[9,2,3] parameter(1)\n  p2 = f64[2,5,3] parameter(2)\n"
    "  d = f64[2,5,3] dot(p0, p1), lhs_batch_dims={1}, rhs_batch_dims={1}, "
    "lhs_contracting_dims={2}, rhs_contracting_dims={0}\n"
    "  ROOT m = f64[2,5,3] multiply(d, p2)\n}\n"
    "ENTRY e {\n  a = f64[5,2,9] parameter(0)\n  b = f64[9,2,3] parameter(1)\n  c = f64[2,5,3] parameter(2)\n"
    "  ROOT f = f64[2,5,3] fusion(a, b, c), kind=kOutput, calls=fused\n}\n",
};

static bool fusion_body_dots_are_canonical(const Module *m) {
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *c = m->computations[k];
    for (int i = 0; i < c->instruction_count; i++) {
      const Instruction *inst = c->instructions[i];
      if (inst->opcode != OP_DOT) continue;
      DotPlan p;
      if (dot_plan_make(attrs_dot(&inst->attrs), &inst->operands[0]->shape, &inst->operands[1]->shape, &p) ||
          !p.lhs_canonical || !p.rhs_canonical)
        return false;
    }
  }
  return true;
}

/* The fusion's computation keeps its parameters and its root's shape; the
 * dot inside reads relabels of them; the values are the same bits. */
TEST(a_dot_inside_an_input_fusion_becomes_canonical_inside_its_body) {
  for (size_t i = 0; i < sizeof fused_modules / sizeof *fused_modules; i++)
    check_fusion_body_rewritten(fused_modules[i], i, canonicalize, fusion_body_dots_are_canonical);
}

/* Compiled for the CPU (the whole pipeline), each gives the evaluator's
 * answer on the module as written, its optimized fusion reading its dot's
 * operands through relabels. */
static void reads_through_relabels(const Executable *e, size_t i) {
  const Computation *body = executable_module_to_run(e)->entry->root->called[0];
  int relabels = 0;
  for (int k = 0; k < body->instruction_count; k++) relabels += body->instructions[k]->opcode == OP_BITCAST;
  EXPECT(relabels > 0, "module %zu: the optimized body reads its dot through relabels", i);
}

TEST(each_compiled_input_fusion_matches_the_evaluator_on_the_original) {
  for (size_t i = 0; i < sizeof fused_modules / sizeof *fused_modules; i++)
    check_cpu_matches_the_evaluator(fused_modules[i], i, 21 + i, reads_through_relabels);
}

int main(void) {
  RUN(batch_last_and_contracting_first_become_relabels_in_canonical_order);
  RUN(the_rewritten_dot_computes_the_same_bits);
  RUN(a_transpose_written_as_a_bitcast_folds_into_its_source);
  RUN(a_canonical_dot_is_left_alone);
  RUN(a_dot_inside_an_input_fusion_becomes_canonical_inside_its_body);
  RUN(each_compiled_input_fusion_matches_the_evaluator_on_the_original);
  return test_summary();
}
