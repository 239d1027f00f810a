/* Pass "canonicalize-convolutions" (src/opt/canonicalize_convolutions.c):
 * each convolution reads its input as [batch, spatial.., feature] and its
 * kernel as [spatial.., in, out], and makes [batch, spatial.., feature],
 * through bitcasts that relabel the bytes where they lie; it computes the
 * same bits, and the compiled module the evaluator's answer on the module
 * as written. Modules are inline; the expected layouts are worked out by
 * hand beside each test. */
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"
#include "pass_test_support.h"
#include "runtime/executable.h"

/* Runs the pass and the verifier after it; returns whether it changed m. */
static bool canonicalize(Module *m) { return run_pass_verified(canonicalize_convolutions, m); }

static bool shape_is(const Shape *s, int rank, const int64_t *dims, const int8_t *minor_to_major) {
  return s->rank == rank && memcmp(s->dims, dims, sizeof *dims * (size_t)rank) == 0 &&
         memcmp(s->minor_to_major, minor_to_major, (size_t)rank) == 0;
}

static bool is_canonical(const ConvDims *cd) {
  int n = cd->spatial_count;
  bool ok = cd->input_batch == 0 && cd->input_feature == n + 1 && cd->output_batch == 0 &&
            cd->output_feature == n + 1 && cd->kernel_input_feature == n && cd->kernel_output_feature == n + 1;
  for (int s = 0; s < n; s++)
    ok = ok && cd->input_spatial[s] == 1 + s && cd->output_spatial[s] == 1 + s && cd->kernel_spatial[s] == s;
  return ok;
}

/* NCHW / OIHW as JAX writes it. Input f32[2,3,6,5]{3,2,1,0} read as b01f
 * (order 0,2,3,1) is f32[2,6,5,3]: its minor dim 3 (x) is now dim 2, then
 * y (2 -> 1), c (1 -> 3), n: {2,1,3,0}. Kernel f32[4,3,2,2] read as 01io
 * (order 2,3,1,0) is f32[2,2,3,4] with layout {1,0,2,3}. The result
 * f32[2,4,5,4] is made as f32[2,5,4,4]{2,1,3,0}, then relabelled back. */
static const char nchw[] =
    "HloModule m\nENTRY e {\n"
    "  x = f32[2,3,6,5]{3,2,1,0} parameter(0)\n"
    "  w = f32[4,3,2,2]{3,2,1,0} parameter(1)\n"
    "  ROOT c = f32[2,4,5,4]{3,2,1,0} convolution(x, w), window={size=2x2}, dim_labels=bf01_oi01->bf01\n}\n";

TEST(an_nchw_convolution_becomes_canonical_over_relabels_of_the_same_bytes) {
  Module *m = parse_text(nchw);
  if (!m) return;
  EXPECT(canonicalize(m), "the pass changes the module");
  const Instruction *root = m->entry->root;
  EXPECT(root->opcode == OP_BITCAST && shape_is(&root->shape, 4, (int64_t[]){2, 4, 5, 4}, (int8_t[]){3, 2, 1, 0}),
         "the root is a bitcast to the old f32[2,4,5,4]{3,2,1,0}, not %s", opcode_name(root->opcode));
  const Instruction *c = root->operands[0];
  EXPECT(c->opcode == OP_CONVOLUTION, "the bitcast reads the convolution, not %s", opcode_name(c->opcode));
  if (c->opcode != OP_CONVOLUTION) return;
  EXPECT(strcmp(c->name, "c") == 0, "the convolution keeps its name (kernels are named after it), not %s", c->name);
  EXPECT(is_canonical(attrs_conv(&c->attrs)), "dim_labels are b01f_01io->b01f");
  EXPECT(shape_is(&c->shape, 4, (int64_t[]){2, 5, 4, 4}, (int8_t[]){2, 1, 3, 0}), "result f32[2,5,4,4]{2,1,3,0}");
  const Instruction *x = c->operands[0], *w = c->operands[1];
  EXPECT(x->opcode == OP_BITCAST && x->operands[0]->opcode == OP_PARAMETER, "the input is a bitcast of x");
  EXPECT(w->opcode == OP_BITCAST && w->operands[0]->opcode == OP_PARAMETER, "the kernel is a bitcast of w");
  EXPECT(shape_is(&x->shape, 4, (int64_t[]){2, 6, 5, 3}, (int8_t[]){2, 1, 3, 0}), "input f32[2,6,5,3]{2,1,3,0}");
  EXPECT(shape_is(&w->shape, 4, (int64_t[]){2, 2, 3, 4}, (int8_t[]){1, 0, 2, 3}), "kernel f32[2,2,3,4]{1,0,2,3}");
  EXPECT(!canonicalize(m), "a second run finds nothing to do");
  module_free(m);
}

/* Dimension orders, groups, dilations, padding, strides, reversal, one and
 * three spatial dims, an epilogue and a tuple user. */
static const char *const modules[] = {
    nchw,
    /* already canonical but for the kernel: OIHW read as HWIO */
    "HloModule m\nENTRY e {\n  x = f32[2,5,5,3] parameter(0)\n  w = f32[4,3,3,3] parameter(1)\n"
    "  ROOT c = f32[2,5,5,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_oi01->b01f\n}\n",
    /* every role somewhere odd, a column-major input */
    "HloModule m\nENTRY e {\n  x = f32[5,2,6,3]{0,1,2,3} parameter(0)\n  w = f32[2,6,4,3] parameter(1)\n"
    "  ROOT c = f32[4,3,2,2] convolution(x, w), window={size=3x2}, dim_labels=0bf1_1io0->f0b1\n}\n",
    /* feature groups (depthwise-like), dilations both sides, padding */
    "HloModule m\nENTRY e {\n  x = f32[1,4,7,6] parameter(0)\n  w = f32[4,1,3,2] parameter(1)\n"
    "  ROOT c = f32[1,4,14,6] convolution(x, w), window={size=3x2 pad=2_1x1_1 lhs_dilate=2x1 rhs_dilate=1x2}, "
    "dim_labels=bf01_oi01->bf01, feature_group_count=4\n}\n",
    /* batch groups, stride, negative padding */
    "HloModule m\nENTRY e {\n  x = f32[4,3,9] parameter(0)\n  w = f32[2,3,2] parameter(1)\n"
    "  ROOT c = f32[2,2,4] convolution(x, w), window={size=2 stride=2 pad=-1_0}, dim_labels=bf0_oi0->bf0, "
    "batch_group_count=2\n}\n",
    /* three spatial dims, window reversal, f64 */
    "HloModule m\nENTRY e {\n  x = f64[2,3,4,3,4] parameter(0)\n  w = f64[2,3,2,2,2] parameter(1)\n"
    "  ROOT c = f64[2,2,3,2,3] convolution(x, w), window={size=2x2x2 rhs_reversal=1x0x1}, "
    "dim_labels=bf012_oi012->bf012\n}\n",
    /* an epilogue and a tuple reading the convolution */
    "HloModule m\nENTRY e {\n  x = f32[2,3,6,6] parameter(0)\n  w = f32[5,3,3,3] parameter(1)\n"
    "  b = f32[5] parameter(2)\n"
    "  c = f32[2,5,6,6] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01\n"
    "  bb = f32[2,5,6,6] broadcast(b), dimensions={1}\n  s = f32[2,5,6,6] add(c, bb)\n"
    "  z = f32[2,5,6,6] broadcast(f32[] constant(0)), dimensions={}\n  r = f32[2,5,6,6] maximum(s, z)\n"
    "  ROOT t = (f32[2,5,6,6], f32[2,5,6,6]) tuple(r, c)\n}\n",
    /* s32 */
    "HloModule m\nENTRY e {\n  x = s32[2,3,5] parameter(0)\n  w = s32[3,2,3] parameter(1)\n"
    "  ROOT c = s32[2,2,3] convolution(x, w), window={size=3}, dim_labels=bf0_io0->bf0\n}\n",
};

TEST(the_rewritten_convolution_computes_the_same_bits) {
  for (size_t i = 0; i < sizeof modules / sizeof *modules; i++) {
    Module *m = parse_text(modules[i]);
    if (!m) continue;
    Literal *before = evaluate_seeded(m);
    EXPECT(canonicalize(m), "module %zu: the pass changes it", i);
    for (int k = 0; k < m->entry->instruction_count; k++) {
      const Instruction *inst = m->entry->instructions[k];
      if (inst->opcode == OP_CONVOLUTION)
        EXPECT(is_canonical(attrs_conv(&inst->attrs)), "module %zu: %s is canonical", i, inst->name);
    }
    Literal *after = evaluate_seeded(m);
    EXPECT(before && after && literal_equal(before, after), "module %zu: the same bits before and after", i);
    literal_free(before);
    literal_free(after);
    module_free(m);
  }
}

/* Compiled for the CPU (the whole pipeline, this pass included), each
 * module gives the evaluator's answer on the module as written. */
TEST(each_compiled_module_matches_the_evaluator_on_the_original) {
  for (size_t i = 0; i < sizeof modules / sizeof *modules; i++)
    check_cpu_matches_the_evaluator(modules[i], i, 11 + i, NULL);
}

/* The epilogue of an NCHW convolution reads it through the relabel back:
 * fusion keeps the relabel in the output fusion, whose loads of the
 * convolution are a permutation of the loop's index (no division). */
TEST(an_nchw_epilogue_stays_in_the_convolutions_output_fusion) {
  Module *m = parse_text(modules[6]);
  if (!m) return;
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_CPU);
  Status st;
  status_clear(&st);
  Executable *e = executable_compile(m, &o, &st);
  EXPECT(e != NULL, "compiles: %s", st.message);
  if (e) {
    const Computation *entry = executable_module_to_run(e)->entry;
    int convolutions = 0, output_fusions = 0;
    for (int k = 0; k < entry->instruction_count; k++) {
      const Instruction *inst = entry->instructions[k];
      convolutions += inst->opcode == OP_CONVOLUTION;
      output_fusions += inst->opcode == OP_FUSION && inst->attrs.fusion_kind == FUSION_OUTPUT;
    }
    EXPECT(convolutions == 0 && output_fusions == 1, "one output fusion holds the convolution (%d left alone, %d "
           "output fusions)", convolutions, output_fusions);
  }
  executable_free(e);
  module_free(m);
}

TEST(a_canonical_convolution_is_left_alone) {
  Module *m = parse_text("HloModule m\nENTRY e {\n  x = f32[1,4,4,2] parameter(0)\n  w = f32[2,2,2,3] parameter(1)\n"
                         "  ROOT c = f32[1,3,3,3] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f\n}\n");
  if (m) {
    EXPECT(!canonicalize(m), "a canonical convolution is left as it is");
    module_free(m);
  }
}

/* Fusions given in the input (as XLA's optimizer writes them) around
 * convolutions in other orders: NCHW with bias and relu, a root
 * convolution, feature groups, batch groups, an operand computed inside
 * the fusion, a column-major parameter. */
static const char *const fused_modules[] = {
    "HloModule m\n"
    "fused {\n  p0 = f32[2,3,6,6] parameter(0)\n  p1 = f32[5,3,3,3] parameter(1)\n  p2 = f32[5] parameter(2)\n"
    "  c = f32[2,5,6,6] convolution(p0, p1), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01\n"
    "  b = f32[2,5,6,6] broadcast(p2), dimensions={1}\n  s = f32[2,5,6,6] add(c, b)\n"
    "  z = f32[2,5,6,6] broadcast(f32[] constant(0)), dimensions={}\n  ROOT r = f32[2,5,6,6] maximum(s, z)\n}\n"
    "ENTRY e {\n  x = f32[2,3,6,6] parameter(0)\n  w = f32[5,3,3,3] parameter(1)\n  bias = f32[5] parameter(2)\n"
    "  ROOT f = f32[2,5,6,6] fusion(x, w, bias), kind=kOutput, calls=fused\n}\n",
    /* the convolution the root of a kLoop fusion: the root becomes the relabel back */
    "HloModule m\n"
    "fused {\n  p0 = f32[2,3,6,5] parameter(0)\n  p1 = f32[4,3,2,2] parameter(1)\n"
    "  ROOT c = f32[2,4,5,4] convolution(p0, p1), window={size=2x2}, dim_labels=bf01_oi01->bf01\n}\n"
    "ENTRY e {\n  x = f32[2,3,6,5] parameter(0)\n  w = f32[4,3,2,2] parameter(1)\n"
    "  ROOT f = f32[2,4,5,4] fusion(x, w), kind=kLoop, calls=fused\n}\n",
    /* depthwise: feature groups, dilation, padding */
    "HloModule m\n"
    "fused {\n  p0 = f32[1,4,7,6] parameter(0)\n  p1 = f32[4,1,3,2] parameter(1)\n"
    "  c = f32[1,4,14,6] convolution(p0, p1), window={size=3x2 pad=2_1x1_1 lhs_dilate=2x1 rhs_dilate=1x2}, "
    "dim_labels=bf01_oi01->bf01, feature_group_count=4\n  ROOT n = f32[1,4,14,6] negate(c)\n}\n"
    "ENTRY e {\n  x = f32[1,4,7,6] parameter(0)\n  w = f32[4,1,3,2] parameter(1)\n"
    "  ROOT f = f32[1,4,14,6] fusion(x, w), kind=kOutput, calls=fused\n}\n",
    /* batch groups, stride, negative padding, 1-D */
    "HloModule m\n"
    "fused {\n  p0 = f32[4,3,9] parameter(0)\n  p1 = f32[2,3,2] parameter(1)\n"
    "  ROOT c = f32[2,2,4] convolution(p0, p1), window={size=2 stride=2 pad=-1_0}, dim_labels=bf0_oi0->bf0, "
    "batch_group_count=2\n}\n"
    "ENTRY e {\n  x = f32[4,3,9] parameter(0)\n  w = f32[2,3,2] parameter(1)\n"
    "  ROOT f = f32[2,2,4] fusion(x, w), kind=kOutput, calls=fused\n}\n",
    /* every role somewhere odd, a column-major input, the kernel computed inside */
    "HloModule m\n"
    "fused {\n  p0 = f32[5,2,6,3]{0,1,2,3} parameter(0)\n  p1 = f32[2,6,4,3] parameter(1)\n"
    "  k = f32[2,6,4,3] multiply(p1, p1)\n"
    "  ROOT c = f32[4,3,2,2] convolution(p0, k), window={size=3x2}, dim_labels=0bf1_1io0->f0b1\n}\n"
    "ENTRY e {\n  x = f32[5,2,6,3]{0,1,2,3} parameter(0)\n  w = f32[2,6,4,3] parameter(1)\n"
    "  ROOT f = f32[4,3,2,2] fusion(x, w), kind=kOutput, calls=fused\n}\n",
};

static bool every_convolution_is_canonical(const Module *m) {
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *c = m->computations[k];
    for (int i = 0; i < c->instruction_count; i++)
      if (c->instructions[i]->opcode == OP_CONVOLUTION && !is_canonical(attrs_conv(&c->instructions[i]->attrs)))
        return false;
  }
  return true;
}

/* The fusion's computation keeps its parameters and its root's shape; the
 * convolution inside reads relabels of them; the values are the same bits. */
TEST(a_convolution_inside_an_input_fusion_becomes_canonical_inside_its_body) {
  for (size_t i = 0; i < sizeof fused_modules / sizeof *fused_modules; i++)
    check_fusion_body_rewritten(fused_modules[i], i, canonicalize, every_convolution_is_canonical);
}

static void compiled_canonical(const Executable *e, size_t i) {
  EXPECT(every_convolution_is_canonical(executable_module_to_run(e)), "module %zu: compiled canonical", i);
}

TEST(each_compiled_input_fusion_matches_the_evaluator_on_the_original) {
  for (size_t i = 0; i < sizeof fused_modules / sizeof *fused_modules; i++)
    check_cpu_matches_the_evaluator(fused_modules[i], i, 31 + i, compiled_canonical);
}

int main(void) {
  RUN(an_nchw_convolution_becomes_canonical_over_relabels_of_the_same_bytes);
  RUN(the_rewritten_convolution_computes_the_same_bits);
  RUN(each_compiled_module_matches_the_evaluator_on_the_original);
  RUN(an_nchw_epilogue_stays_in_the_convolutions_output_fusion);
  RUN(a_canonical_convolution_is_left_alone);
  RUN(a_convolution_inside_an_input_fusion_becomes_canonical_inside_its_body);
  RUN(each_compiled_input_fusion_matches_the_evaluator_on_the_original);
  return test_summary();
}
