/* Pass "canonicalize-dots" (src/opt/canonicalize_dots.c): each dot reads
 * its operands as [batch, M, K] and [batch, K, N] through bitcasts that
 * relabel the operand's own bytes, and computes the same bits. Modules are
 * written inline; the expected layouts are worked out by hand beside each
 * test. */
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"
#include "pass_test_support.h"

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

TEST(a_canonical_dot_and_a_dot_inside_a_fusion_are_left_alone) {
  Module *m = parse_text("HloModule m\nENTRY e {\n  a = f32[3,8,16] parameter(0)\n  b = f32[3,16,4] parameter(1)\n"
                         "  ROOT d = f32[3,8,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                         "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}\n");
  if (m) EXPECT(!canonicalize(m), "a canonical dot is not rewritten");
  module_free(m);
  m = parse_text("HloModule m\nfused {\n  p0 = f32[16,8] parameter(0)\n  p1 = f32[16,4] parameter(1)\n"
                 "  ROOT d = f32[8,4] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n"
                 "ENTRY e {\n  a = f32[16,8] parameter(0)\n  b = f32[16,4] parameter(1)\n"
                 "  ROOT f = f32[8,4] fusion(a, b), kind=kOutput, calls=fused\n}\n");
  if (m) EXPECT(!canonicalize(m), "a fused dot reads its fusion's parameters as they are");
  module_free(m);
}

int main(void) {
  RUN(batch_last_and_contracting_first_become_relabels_in_canonical_order);
  RUN(the_rewritten_dot_computes_the_same_bits);
  RUN(a_transpose_written_as_a_bitcast_folds_into_its_source);
  RUN(a_canonical_dot_and_a_dot_inside_a_fusion_are_left_alone);
  return test_summary();
}
