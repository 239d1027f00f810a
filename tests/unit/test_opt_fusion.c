/* The fusion pass: which instructions become one kernel, checked by the
 * structure optimize_module leaves (counts of fusions and kernels, kinds,
 * which op sits in which fused computation), and that every corpus module
 * computes the same bits before and after. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"
#include "runtime/npy.h"
#include "../test.h"

/* ---- helpers ---- */

static Module *parse_text(const char *text) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline.hlo", &st);
  if (!m) printf("  parse failed: %s\n", st.message);
  return m;
}

/* Runs the whole pipeline with verification after every pass. */
static bool optimize(Module *m) {
  OptOptions options;
  opt_options_default(&options);
  options.verify_each_pass = true;
  OptContext ctx;
  opt_context_init(&ctx, &options);
  Status st;
  status_clear(&st);
  bool ok = optimize_module(m, &ctx, &st);
  if (!ok) printf("  optimize_module failed: %s\n", st.message);
  opt_context_free(&ctx);
  return ok;
}

static Module *optimized_file(const char *path) {
  Status st;
  status_clear(&st);
  Module *m = parse_module_file(path, &st);
  if (!m) {
    printf("  cannot read %s: %s\n", path, st.message);
    return NULL;
  }
  if (!optimize(m)) {
    module_free(m);
    return NULL;
  }
  return m;
}

static Instruction *first_fusion(const Module *m, FusionKind kind) {
  const Computation *c = m->entry;
  for (int i = 0; i < c->instruction_count; i++)
    if (c->instructions[i]->opcode == OP_FUSION && c->instructions[i]->attrs.fusion_kind == kind)
      return c->instructions[i];
  return NULL;
}

static int count_opcode(const Computation *c, Opcode op) {
  int n = 0;
  for (int i = 0; i < c->instruction_count; i++) n += c->instructions[i]->opcode == op;
  return n;
}

/* How many times op appears in fused computations, over the whole module. */
static int count_fused_opcode(const Module *m, Opcode op) {
  int n = 0;
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *c = m->computations[k];
    for (int i = 0; i < c->instruction_count; i++)
      if (c->instructions[i]->opcode == OP_FUSION) n += count_opcode(c->instructions[i]->called[0], op);
  }
  return n;
}

/* ---- the corpus cases the brief names ---- */

TEST(reduce_of_x_plus_y_times_z_is_one_input_fusion_and_nothing_else) {
  const char *files[] = {"tests/hlo/demo_reduce_sum.hlo", "tests/hlo/jax_reduce_sum_xyz.hlo"};
  for (int f = 0; f < 2; f++) {
    Module *m = optimized_file(files[f]);
    EXPECT(m, "%s did not optimize", files[f]);
    if (!m) continue;
    EXPECT(opt_count_fusions(m) == 1, "%s: %d fusions", files[f], opt_count_fusions(m));
    EXPECT(opt_count_kernels(m) == 1, "%s: %d kernels", files[f], opt_count_kernels(m));
    Instruction *fusion = first_fusion(m, FUSION_INPUT);
    EXPECT(fusion, "%s: no kInput fusion", files[f]);
    if (fusion) {
      EXPECT(fusion == m->entry->root, "%s: the fusion is not the root", files[f]);
      EXPECT(count_opcode(fusion->called[0], OP_REDUCE) == 1, "%s: reduce not fused", files[f]);
      EXPECT(count_opcode(fusion->called[0], OP_MULTIPLY) == 1, "%s: multiply not fused", files[f]);
      EXPECT(fusion->operand_count == 3, "%s: fusion reads %d values, expected x, y, z", files[f],
             fusion->operand_count);
    }
    module_free(m);
  }
}

TEST(fusion_names_say_what_the_fusion_holds) {
  Module *m = optimized_file("tests/hlo/demo_reduce_sum.hlo");
  EXPECT(m, "did not optimize");
  if (!m) return;
  Instruction *fusion = first_fusion(m, FUSION_INPUT);
  EXPECT(fusion && strcmp(fusion->name, "fusion.add_multiply_reduce") == 0, "fusion named %s",
         fusion ? fusion->name : "(none)");
  EXPECT(fusion && strcmp(fusion->called[0]->name, "fused_add_multiply_reduce") == 0,
         "fused computation named %s", fusion ? fusion->called[0]->name : "(none)");
  module_free(m);
}

TEST(softmax_over_the_last_axis_needs_at_most_two_fusions) {
  Module *m = optimized_file("tests/hlo/jax_softmax.hlo");
  EXPECT(m, "did not optimize");
  if (!m) return;
  EXPECT(opt_count_fusions(m) >= 1 && opt_count_fusions(m) <= 2, "%d fusions", opt_count_fusions(m));
  EXPECT(opt_count_kernels(m) == opt_count_fusions(m), "%d kernels but %d fusions: something is left unfused",
         opt_count_kernels(m), opt_count_fusions(m));
  /* exp is computed in one fusion only, and each reduce exactly once */
  EXPECT(count_fused_opcode(m, OP_EXPONENTIAL) == 1, "exponential in %d places",
         count_fused_opcode(m, OP_EXPONENTIAL));
  EXPECT(count_fused_opcode(m, OP_REDUCE) == 2, "%d reduces", count_fused_opcode(m, OP_REDUCE));
  module_free(m);
}

TEST(layernorm_needs_at_most_two_fusions) {
  Module *m = optimized_file("tests/hlo/jax_layernorm.hlo");
  EXPECT(m, "did not optimize");
  if (!m) return;
  EXPECT(opt_count_fusions(m) >= 1 && opt_count_fusions(m) <= 2, "%d fusions", opt_count_fusions(m));
  EXPECT(opt_count_kernels(m) == opt_count_fusions(m), "%d kernels but %d fusions", opt_count_kernels(m),
         opt_count_fusions(m));
  EXPECT(count_fused_opcode(m, OP_RSQRT) == 1, "rsqrt in %d places", count_fused_opcode(m, OP_RSQRT));
  EXPECT(count_fused_opcode(m, OP_REDUCE) == 2, "%d reduces", count_fused_opcode(m, OP_REDUCE));
  module_free(m);
}

TEST(dot_bias_relu_is_one_dot_with_a_fused_epilogue) {
  Module *m = optimized_file("tests/hlo/jax_mlp_layer.hlo");
  EXPECT(m, "did not optimize");
  if (!m) return;
  EXPECT(opt_count_fusions(m) == 1, "%d fusions", opt_count_fusions(m));
  EXPECT(opt_count_kernels(m) == 1, "%d kernels", opt_count_kernels(m));
  Instruction *fusion = first_fusion(m, FUSION_OUTPUT);
  EXPECT(fusion, "no kOutput fusion");
  if (fusion) {
    const Computation *body = fusion->called[0];
    EXPECT(count_opcode(body, OP_DOT) == 1, "the fusion holds %d dots", count_opcode(body, OP_DOT));
    EXPECT(count_opcode(body, OP_MAXIMUM) == 1, "relu not in the epilogue");
    EXPECT(body->root->opcode == OP_MAXIMUM, "the fusion's root is %s", opcode_name(body->root->opcode));
  }
  module_free(m);
}

static const Instruction *find_opcode(const Computation *c, Opcode op) {
  for (int i = 0; i < c->instruction_count; i++)
    if (c->instructions[i]->opcode == op) return c->instructions[i];
  return NULL;
}

TEST(fused_members_keep_their_metadata_and_the_fusion_takes_its_roots) {
  Module *m = optimized_file("tests/hlo/jax_mlp_layer.hlo");
  EXPECT(m, "did not optimize");
  if (!m) return;
  Instruction *fusion = first_fusion(m, FUSION_OUTPUT);
  EXPECT(fusion, "no kOutput fusion");
  if (fusion) {
    const Metadata *md = fusion->metadata;
    EXPECT(md && md->op_name && strcmp(md->op_name, "jit(mlp)/jit(main)/max") == 0,
           "the fusion's op_name is %s", md && md->op_name ? md->op_name : "(none)");
    const Instruction *dot = find_opcode(fusion->called[0], OP_DOT);
    const Metadata *dmd = dot ? dot->metadata : NULL;
    EXPECT(dmd && dmd->source_file && strcmp(dmd->source_file, "mlp.py") == 0 && dmd->source_line == 3,
           "the fused dot lost its source line");
  }
  module_free(m);
}

/* The training step has three kernels after fusion, and cannot have fewer:
 *   1. fused_error, a fusion the module already holds (opaque to the pass);
 *   2. one row kernel over the 16 errors: both reductions (the loss and the
 *      bias gradient) read the same rows, and it also writes derr, which
 *      the weight-gradient dot reads from memory;
 *   3. the weight-gradient dot with its update (w - lr * grad) as epilogue:
 *      a dot reads its operands from memory, so derr cannot be fused into it.
 */
TEST(train_step_fuses_into_three_kernels) {
  Module *m = optimized_file("tests/hlo/jax_train_step.hlo");
  EXPECT(m, "did not optimize");
  if (!m) return;
  EXPECT(opt_count_fusions(m) <= 3, "%d fusions (bound 3)", opt_count_fusions(m));
  EXPECT(opt_count_kernels(m) <= 3, "%d kernels (bound 3)", opt_count_kernels(m));
  EXPECT(first_fusion(m, FUSION_OUTPUT), "the gradient dot has no epilogue fusion");
  module_free(m);
}

/* A transformer feed-forward block: layer norm, dot + bias + tanh-GELU,
 * dot + bias + residual. Three kernels: the norm's row kernel and two
 * dots with their epilogues. */
TEST(feed_forward_block_is_a_row_kernel_and_two_dot_epilogues) {
  Module *m = parse_text(
      "HloModule block\n"
      "add { a = f32[] parameter(0)\n"
      " b = f32[] parameter(1)\n"
      " ROOT s = f32[] add(a, b) }\n"
      "ENTRY e {\n"
      "  x = f32[8,64] parameter(0)\n"
      "  w1 = f32[64,256] parameter(1)\n"
      "  b1 = f32[256] parameter(2)\n"
      "  w2 = f32[256,64] parameter(3)\n"
      "  b2 = f32[64] parameter(4)\n"
      "  zero = f32[] constant(0)\n"
      "  sum = f32[8] reduce(x, zero), dimensions={1}, to_apply=add\n"
      "  n = f32[] constant(64)\n"
      "  nb = f32[8] broadcast(n), dimensions={}\n"
      "  mean = f32[8] divide(sum, nb)\n"
      "  mb = f32[8,64] broadcast(mean), dimensions={0}\n"
      "  c = f32[8,64] subtract(x, mb)\n"
      "  sq = f32[8,64] multiply(c, c)\n"
      "  ss = f32[8] reduce(sq, zero), dimensions={1}, to_apply=add\n"
      "  var = f32[8] divide(ss, nb)\n"
      "  eps = f32[] constant(1e-5)\n"
      "  eb = f32[8] broadcast(eps), dimensions={}\n"
      "  ve = f32[8] add(var, eb)\n"
      "  inv = f32[8] rsqrt(ve)\n"
      "  ib = f32[8,64] broadcast(inv), dimensions={0}\n"
      "  ln = f32[8,64] multiply(c, ib)\n"
      "  h = f32[8,256] dot(ln, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  bb1 = f32[8,256] broadcast(b1), dimensions={1}\n"
      "  hb = f32[8,256] add(h, bb1)\n"
      "  half = f32[] constant(0.5)\n"
      "  hh = f32[8,256] broadcast(half), dimensions={}\n"
      "  t = f32[8,256] tanh(hb)\n"
      "  one = f32[] constant(1)\n"
      "  ob = f32[8,256] broadcast(one), dimensions={}\n"
      "  t1 = f32[8,256] add(t, ob)\n"
      "  g0 = f32[8,256] multiply(hb, t1)\n"
      "  g = f32[8,256] multiply(g0, hh)\n"
      "  o = f32[8,64] dot(g, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  bb2 = f32[8,64] broadcast(b2), dimensions={1}\n"
      "  ob2 = f32[8,64] add(o, bb2)\n"
      "  ROOT y = f32[8,64] add(ob2, x)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize");
  if (!m) return;
  EXPECT(opt_count_fusions(m) == 3 && opt_count_kernels(m) == 3, "%d fusions, %d kernels",
         opt_count_fusions(m), opt_count_kernels(m));
  int outputs = 0;
  for (int i = 0; i < m->entry->instruction_count; i++) {
    const Instruction *inst = m->entry->instructions[i];
    outputs += inst->opcode == OP_FUSION && inst->attrs.fusion_kind == FUSION_OUTPUT;
  }
  EXPECT(outputs == 2, "%d kOutput fusions", outputs);
  EXPECT(first_fusion(m, FUSION_INPUT) != NULL, "no row kernel for the norm");
  EXPECT(count_fused_opcode(m, OP_TANH) == 1, "tanh in %d fusions", count_fused_opcode(m, OP_TANH));
  module_free(m);
}

/* ---- rules, on small inline modules ---- */

TEST(cheap_broadcast_read_by_two_kernels_is_duplicated_not_written) {
  Module *m = parse_text(
      "HloModule m\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "ENTRY e {\n"
      "  p = f32[8] parameter(0)\n"
      "  q = f32[8,8] parameter(1)\n"
      "  b = f32[8,8] broadcast(p), dimensions={0}\n"
      "  x = f32[8,8] multiply(b, q)\n"
      "  zero = f32[] constant(0)\n"
      "  r = f32[8] reduce(x, zero), dimensions={0}, to_apply=add\n"
      "  y = f32[8,8] add(b, q)\n"
      "  s = f32[4,8] slice(y), slice={[0:4], [0:8]}\n"
      "  ROOT out = (f32[8], f32[4,8]) tuple(r, s)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize");
  if (!m) return;
  EXPECT(count_fused_opcode(m, OP_BROADCAST) == 2, "broadcast in %d fusions, expected a copy in each of 2",
         count_fused_opcode(m, OP_BROADCAST));
  EXPECT(count_opcode(m->entry, OP_BROADCAST) == 0, "the broadcast is still written to memory");
  EXPECT(opt_count_fusions(m) == 2, "%d fusions (the reduction, the slice)", opt_count_fusions(m));
  module_free(m);
}

TEST(expensive_producer_is_computed_once_not_per_broadcast_copy) {
  Module *m = parse_text(
      "HloModule m\n"
      "ENTRY e {\n"
      "  p = f32[8] parameter(0)\n"
      "  q = f32[8,64] parameter(1)\n"
      "  e = f32[8] exponential(p)\n"
      "  b = f32[8,64] broadcast(e), dimensions={0}\n"
      "  ROOT y = f32[8,64] add(b, q)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize");
  if (!m) return;
  EXPECT(count_fused_opcode(m, OP_EXPONENTIAL) == 1, "exponential in %d fusions",
         count_fused_opcode(m, OP_EXPONENTIAL));
  EXPECT(opt_count_fusions(m) == 2, "%d fusions: exp must be its own kernel, not under the broadcast",
         opt_count_fusions(m));
  Instruction *loop = m->entry->root;
  EXPECT(loop->opcode == OP_FUSION && count_opcode(loop->called[0], OP_EXPONENTIAL) == 0,
         "exp was fused under the broadcast");
  module_free(m);
}

TEST(expensive_producer_read_by_two_kernels_is_not_duplicated) {
  Module *m = parse_text(
      "HloModule m\n"
      "ENTRY e {\n"
      "  p = f32[16] parameter(0)\n"
      "  l = f32[16] log(p)\n"
      "  a = f32[4,4] reshape(l)\n"
      "  b = f32[16] negate(l)\n"
      "  d = f32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  ROOT out = (f32[4,4], f32[16]) tuple(d, b)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize");
  if (!m) return;
  EXPECT(count_fused_opcode(m, OP_LOG) == 1, "log computed in %d fusions", count_fused_opcode(m, OP_LOG));
  module_free(m);
}

TEST(reduce_over_rows_too_long_to_buffer_is_not_read_again_in_its_kernel) {
  Module *m = parse_text(
      "HloModule m\n"
      "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b) }\n"
      "ENTRY e {\n"
      "  x = f32[2,10000] parameter(0)\n"
      "  ninf = f32[] constant(-inf)\n"
      "  r = f32[2] reduce(x, ninf), dimensions={1}, to_apply=max\n"
      "  b = f32[2,10000] broadcast(r), dimensions={0}\n"
      "  ROOT y = f32[2,10000] subtract(x, b)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize");
  if (!m) return;
  EXPECT(opt_count_fusions(m) == 2, "%d fusions: a 10000-element row is not buffered", opt_count_fusions(m));
  EXPECT(count_fused_opcode(m, OP_REDUCE) == 1, "reduce in %d fusions", count_fused_opcode(m, OP_REDUCE));
  Instruction *root = m->entry->root;
  EXPECT(root->opcode == OP_FUSION && root->attrs.fusion_kind == FUSION_LOOP &&
         count_opcode(root->called[0], OP_REDUCE) == 0,
         "the reduce was fused into the elementwise loop");
  module_free(m);
}

TEST(sibling_reductions_of_one_input_become_one_multi_output_fusion) {
  Module *m = parse_text(
      "HloModule m\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "ENTRY e {\n"
      "  x = f32[4,32] parameter(0)\n"
      "  zero = f32[] constant(0)\n"
      "  s = f32[4] reduce(x, zero), dimensions={1}, to_apply=add\n"
      "  sq = f32[4,32] multiply(x, x)\n"
      "  s2 = f32[4] reduce(sq, zero), dimensions={1}, to_apply=add\n"
      "  ROOT out = (f32[4], f32[4]) tuple(s, s2)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize");
  if (!m) return;
  EXPECT(opt_count_fusions(m) == 1, "%d fusions", opt_count_fusions(m));
  Instruction *fusion = first_fusion(m, FUSION_INPUT);
  EXPECT(fusion && shape_is_tuple(&fusion->shape) && fusion->shape.tuple_count == 2,
         "not a two-output fusion");
  EXPECT(fusion && fusion->called[0]->root->opcode == OP_TUPLE, "the fused root is not a tuple");
  EXPECT(fusion && fusion->operand_count == 1, "x is read %d times", fusion ? fusion->operand_count : -1);
  /* the root tuple(s, s2) read exactly the fusion's outputs: the fusion took its place */
  EXPECT(fusion && fusion == m->entry->root, "the fusion did not replace the root tuple");
  module_free(m);
}

TEST(readers_of_a_multi_output_fusion_read_get_tuple_element) {
  Module *m = parse_text(
      "HloModule m\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "ENTRY e {\n"
      "  x = f32[4,32] parameter(0)\n"
      "  zero = f32[] constant(0)\n"
      "  s = f32[4] reduce(x, zero), dimensions={1}, to_apply=add\n"
      "  sq = f32[4,32] multiply(x, x)\n"
      "  s2 = f32[4] reduce(sq, zero), dimensions={1}, to_apply=add\n"
      "  ROOT out = (f32[4], f32[4,32], f32[4]) tuple(s2, x, s)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize");
  if (!m) return;
  EXPECT(opt_count_fusions(m) == 1, "%d fusions", opt_count_fusions(m));
  EXPECT(count_opcode(m->entry, OP_GET_TUPLE_ELEMENT) == 2, "%d get-tuple-elements, expected 2",
         count_opcode(m->entry, OP_GET_TUPLE_ELEMENT));
  const Instruction *root = m->entry->root;
  EXPECT(root->opcode == OP_TUPLE && root->operand_count == 3 &&
         root->operands[0]->opcode == OP_GET_TUPLE_ELEMENT && root->operands[2]->opcode == OP_GET_TUPLE_ELEMENT,
         "the root tuple does not read the fusion's elements");
  module_free(m);
}

/* exp is read by the sort (which no fusion holds) and by the add that also
 * reads the sort: writing exp out of the add's fusion would make that
 * fusion both feed the sort and wait for it. */
TEST(a_producer_is_not_fused_where_its_value_would_come_back_through_an_unfused_op) {
  Module *m = parse_text(
      "HloModule m\n"
      "lt { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = pred[] compare(a, b), direction=LT }\n"
      "ENTRY e {\n"
      "  p = f32[16] parameter(0)\n"
      "  e = f32[16] exponential(p)\n"
      "  s = f32[16] sort(e), dimensions={0}, to_apply=lt\n"
      "  ROOT y = f32[16] add(e, s)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize (a cycle?)");
  if (!m) return;
  EXPECT(opt_count_fusions(m) == 2, "%d fusions (exp, add)", opt_count_fusions(m));
  const Instruction *root = m->entry->root;
  EXPECT(root->opcode == OP_FUSION && count_opcode(root->called[0], OP_EXPONENTIAL) == 0,
         "exp was fused with the add");
  module_free(m);
}

/* m = d1 * d2 is cheap and read by two epilogues, so each holds a copy;
 * then neither dot may join the other's epilogue, or each fusion would
 * wait for the other (found by random modules: a copy in a group is a
 * reader of whatever that group does not compute itself). */
TEST(copies_of_a_cheap_producer_do_not_let_two_fusions_wait_for_each_other) {
  Module *m = parse_text(
      "HloModule m\n"
      "lt { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = pred[] compare(a, b), direction=LT }\n"
      "ENTRY e {\n"
      "  a = f32[4,8] parameter(0)\n"
      "  b = f32[4,8] parameter(1)\n"
      "  w = f32[8] parameter(2)\n"
      "  q = f32[4] parameter(3)\n"
      "  d1 = f32[4] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  d2 = f32[4] dot(b, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  m = f32[4] multiply(d1, d2)\n"
      "  s = f32[4] sort(q), dimensions={0}, to_apply=lt\n"
      "  y1 = f32[4] add(m, m)\n"
      "  y2 = f32[4] multiply(m, s)\n"
      "  b1 = f32[4,8] broadcast(d1), dimensions={0}\n"
      "  ROOT out = (f32[4,8], f32[4], f32[4]) tuple(b1, y1, y2)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize (a cycle?)");
  if (!m) return;
  EXPECT(count_fused_opcode(m, OP_DOT) + count_opcode(m->entry, OP_DOT) == 2, "the dots were duplicated");
  module_free(m);
}

/* Each value a fusion reads is one parameter, however often members use it. */
TEST(fusion_parameters_are_the_distinct_values_it_reads) {
  Module *m = parse_text(
      "HloModule m\n"
      "ENTRY e {\n"
      "  x = f32[32] parameter(0)\n"
      "  sq = f32[32] multiply(x, x)\n"
      "  ROOT y = f32[32] add(x, sq)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize");
  if (!m) return;
  const Instruction *root = m->entry->root;
  EXPECT(root->opcode == OP_FUSION && root->operand_count == 1, "the fusion reads %d values",
         root->operand_count);
  EXPECT(root->opcode == OP_FUSION && root->called[0]->parameter_count == 1, "%d parameters",
         root->called[0]->parameter_count);
  module_free(m);
}

/* Fusion works inside loop bodies too; the reducer a reduce applies is a
 * computation the kernel calls per element, never fused itself. */
TEST(while_bodies_are_fused_and_reducers_are_left_alone) {
  Module *m = parse_text(
      "HloModule m\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "cond { s = (s32[], f32[8]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
      "  n = s32[] constant(3)\n ROOT lt = pred[] compare(i, n), direction=LT }\n"
      "body { s = (s32[], f32[8]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
      "  v = f32[8] get-tuple-element(s), index=1\n one = s32[] constant(1)\n"
      "  j = s32[] add(i, one)\n e = f32[8] exponential(v)\n h = f32[] constant(0.5)\n"
      "  hb = f32[8] broadcast(h), dimensions={}\n w = f32[8] multiply(e, hb)\n"
      "  ROOT t = (s32[], f32[8]) tuple(j, w) }\n"
      "ENTRY e {\n"
      "  x = f32[8] parameter(0)\n"
      "  zero = s32[] constant(0)\n"
      "  init = (s32[], f32[8]) tuple(zero, x)\n"
      "  loop = (s32[], f32[8]) while(init), condition=cond, body=body\n"
      "  v = f32[8] get-tuple-element(loop), index=1\n"
      "  z = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(v, z), dimensions={0}, to_apply=add\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize");
  if (!m) return;
  const Computation *body = module_find_computation(m, "body");
  const Computation *reducer = module_find_computation(m, "add");
  EXPECT(body && count_opcode(body, OP_FUSION) >= 1, "the loop body holds no fusion");
  EXPECT(body && count_opcode(body, OP_EXPONENTIAL) == 0, "exp is still unfused in the body");
  EXPECT(reducer && count_opcode(reducer, OP_FUSION) == 0 && count_opcode(reducer, OP_ADD) == 1,
         "the reducer was changed");
  module_free(m);
}

TEST(dot_operands_are_never_fused_into_the_dot) {
  Module *m = parse_text(
      "HloModule m\n"
      "ENTRY e {\n"
      "  a = f32[4,8] parameter(0)\n"
      "  b = f32[8,4] parameter(1)\n"
      "  n = f32[4,8] negate(a)\n"
      "  d = f32[4,4] dot(n, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  ROOT t = f32[4,4] tanh(d)\n"
      "}\n");
  EXPECT(m && optimize(m), "did not optimize");
  if (!m) return;
  Instruction *out = first_fusion(m, FUSION_OUTPUT);
  EXPECT(out, "no kOutput fusion");
  if (out) EXPECT(count_opcode(out->called[0], OP_NEGATE) == 0, "negate was fused into the dot's operand");
  EXPECT(opt_count_fusions(m) == 2, "%d fusions (negate, dot+tanh)", opt_count_fusions(m));
  module_free(m);
}

TEST(fusion_keeps_existing_fusions_and_reducers_as_they_are) {
  Module *m = optimized_file("tests/hlo/fusion_kinds.hlo");
  EXPECT(m, "did not optimize");
  if (!m) return;
  EXPECT(opt_count_fusions(m) == 2, "%d fusions", opt_count_fusions(m));
  module_free(m);
}

/* ---- every corpus module: same bits, round trip, idempotent ---- */

/* The inputs of a corpus case, read as the parameters' types (bf16 files
 * hold the bits as u16). NULL when the case has no usable inputs. */
static Literal **corpus_inputs(const Module *m, const char *dir, int *count) {
  int n = m->entry->parameter_count;
  Literal **args = mem_calloc((size_t)n + 1, sizeof *args);
  for (int i = 0; i < n; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/in%d.npy", dir, i);
    Status st;
    status_clear(&st);
    args[i] = npy_read(path, &st);
    const Shape *want = &m->entry->parameters[i]->shape;
    if (args[i] && want->type == TYPE_BF16 && args[i]->shape.type == TYPE_U16) args[i]->shape.type = TYPE_BF16;
    if (!args[i] || !shape_equal(&args[i]->shape, want)) {
      for (int k = 0; k <= i; k++) literal_free(args[k]);
      free(args);
      return NULL;
    }
  }
  *count = n;
  return args;
}

static Literal *evaluate(const Module *m, Literal **args, int count) {
  Status st;
  status_clear(&st);
  Literal *out = eval_module(m, args, count, &st);
  if (!out) printf("  eval failed: %s\n", st.message);
  return out;
}

static char *module_text(const Module *m) {
  StrBuf sb = {0};
  print_module(&sb, m);
  return sb.data;
}

/* expand-batch-norm is the one pass that changes rounding: the evaluator
 * computes a batch norm in double and rounds once, its expansion rounds
 * each f32 step. A module with one must agree to a relative 1e-4. */
static bool module_has_batch_norm(const Module *m) {
  for (int k = 0; k < m->computation_count; k++)
    for (int i = 0; i < m->computations[k]->instruction_count; i++) {
      Opcode op = m->computations[k]->instructions[i]->opcode;
      if (op == OP_BATCH_NORM_TRAINING || op == OP_BATCH_NORM_INFERENCE || op == OP_BATCH_NORM_GRAD) return true;
    }
  return false;
}

static bool literals_close(const Literal *a, const Literal *b) {
  if (shape_is_tuple(&a->shape) || shape_is_tuple(&b->shape)) {
    if (!shape_is_tuple(&a->shape) || !shape_is_tuple(&b->shape) || a->shape.tuple_count != b->shape.tuple_count)
      return false;
    for (int i = 0; i < a->shape.tuple_count; i++)
      if (!literals_close(a->elements[i], b->elements[i])) return false;
    return true;
  }
  if (!type_is_float(a->shape.type) || !shape_equal(&a->shape, &b->shape)) return literal_equal(a, b);
  for (int64_t i = 0; i < shape_element_count(&a->shape); i++) {
    double x = literal_get_f64(a, i), y = literal_get_f64(b, i);
    if (!(fabs(x - y) <= 1e-4 * (1 + fabs(x)))) return false;
  }
  return true;
}

/* One corpus file: evaluate, optimize, evaluate again (the same bits),
 * print and parse back (the same text), optimize again (no change). */
static void check_corpus_case(const char *name) {
  char path[512], dir[512];
  snprintf(path, sizeof path, "tests/hlo/%s.hlo", name);
  snprintf(dir, sizeof dir, "tests/hlo/%s", name);
  Status st;
  status_clear(&st);
  Module *m = parse_module_file(path, &st);
  EXPECT(m, "%s: %s", path, st.message);
  if (!m) return;
  int count = 0;
  Literal **args = corpus_inputs(m, dir, &count);
  Literal *before = args ? evaluate(m, args, count) : NULL;
  bool rounds_anew = module_has_batch_norm(m);
  EXPECT(optimize(m), "%s: optimize_module failed", name);
  if (before) {
    Literal *after = evaluate(m, args, count);
    bool same = after && (rounds_anew ? literals_close(before, after) : literal_equal(before, after));
    EXPECT(same, "%s: results differ after optimize_module", name);
    literal_free(after);
  }
  char *text = module_text(m);
  Module *again = parse_module(text, strlen(text), name, &st);
  EXPECT(again, "%s: the optimized module does not parse back: %s", name, st.message);
  if (again) {
    char *text2 = module_text(again);
    EXPECT(strcmp(text, text2) == 0, "%s: printing the re-parsed module differs", name);
    free(text2);
    module_free(again);
  }
  int fusions = opt_count_fusions(m);
  EXPECT(optimize(m), "%s: second optimize_module failed", name);
  char *text3 = module_text(m);
  EXPECT(opt_count_fusions(m) == fusions && strcmp(text, text3) == 0,
         "%s: a second optimize_module changed it", name);
  free(text3);
  free(text);
  literal_free(before);
  for (int i = 0; args && i < count; i++) literal_free(args[i]);
  free(args);
  module_free(m);
}

/* ---- random modules: fusion never changes a result, never makes a cycle ---- */

/* A small generator of modules over three shapes, m = f32[R,C] and its
 * rows r = f32[R] and columns c = f32[C], mixing elementwise ops,
 * broadcasts, reduces both ways, dots, selects and a sort (which no
 * fusion takes): the shapes where fusion's choices interact. */
typedef struct RandomModule {
  uint64_t state;
  StrBuf text;
  int count[3];            /* values of each shape: m0.., r0.., c0.. */
  bool used[3][64];
} RandomModule;

static unsigned random_below(RandomModule *g, unsigned n) {
  g->state = g->state * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(g->state >> 33) % n;
}

/* One of the last few values of shape kind t, marked used. */
static int random_pick(RandomModule *g, int t) {
  int n = g->count[t], k = n - 1 - (int)random_below(g, n < 4 ? (unsigned)n : 4u);
  g->used[t][k] = true;
  return k;
}

static void random_instruction(RandomModule *g, const char *const shapes[3], int rows, int cols) {
  static const char kinds[3] = {'m', 'r', 'c'};
  static const char *const binary[] = {"add", "multiply", "subtract", "maximum"};
  static const char *const unary[] = {"exponential", "tanh", "negate", "abs"};
  unsigned k = random_below(g, 100);
  int t = (int)random_below(g, 3), out = t;
  char name[16];
  if (k < 30) {
    int a = random_pick(g, t), b = random_pick(g, t);
    snprintf(name, sizeof name, "%c%d", kinds[t], g->count[t]);
    strbuf_printf(&g->text, "  %s = %s %s(%c%d, %c%d)\n", name, shapes[t], binary[random_below(g, 4)], kinds[t], a,
                  kinds[t], b);
  } else if (k < 45) {
    int a = random_pick(g, t);
    snprintf(name, sizeof name, "%c%d", kinds[t], g->count[t]);
    strbuf_printf(&g->text, "  %s = %s %s(%c%d)\n", name, shapes[t], unary[random_below(g, 4)], kinds[t], a);
  } else if (k < 60) {
    int from = 1 + (int)random_below(g, 2), a = random_pick(g, from);
    out = 0;
    snprintf(name, sizeof name, "m%d", g->count[0]);
    strbuf_printf(&g->text, "  %s = %s broadcast(%c%d), dimensions={%d}\n", name, shapes[0], kinds[from], a,
                  from == 1 ? 0 : 1);
  } else if (k < 75) {
    int a = random_pick(g, 0);
    bool rows_out = random_below(g, 2);
    out = rows_out ? 1 : 2;
    snprintf(name, sizeof name, "%c%d", kinds[out], g->count[out]);
    strbuf_printf(&g->text, "  %s = %s reduce(m%d, zero), dimensions={%d}, to_apply=add\n", name, shapes[out], a,
                  rows_out ? 1 : 0);
  } else if (k < 85) {
    int a = random_pick(g, 0), b = random_pick(g, 2);
    out = 1;
    snprintf(name, sizeof name, "r%d", g->count[1]);
    strbuf_printf(&g->text, "  %s = %s dot(m%d, c%d), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", name,
                  shapes[1], a, b);
  } else if (k < 92) {
    int a = random_pick(g, 0), b = random_pick(g, 0), c = random_pick(g, 0);
    out = 0;
    snprintf(name, sizeof name, "m%d", g->count[0]);
    strbuf_printf(&g->text, "  %s.p = pred[%d,%d] compare(m%d, m%d), direction=GT\n", name, rows, cols, a, b);
    strbuf_printf(&g->text, "  %s = %s select(%s.p, m%d, m%d)\n", name, shapes[0], name, a, c);
  } else {
    int a = random_pick(g, 1);
    out = 1;
    snprintf(name, sizeof name, "r%d", g->count[1]);
    strbuf_printf(&g->text, "  %s = %s sort(r%d), dimensions={0}, to_apply=lt\n", name, shapes[1], a);
  }
  g->count[out]++;
}

/* The text of random module number seed; the root is a tuple of every
 * value nothing reads. */
static char *random_module_text(uint64_t seed) {
  RandomModule g = {.state = seed * 0x9e3779b97f4a7c15ull + 1};
  int rows = random_below(&g, 2) ? 4 : 3, cols = random_below(&g, 4) == 0 ? 5000 : 6;
  char shapes[3][32];
  snprintf(shapes[0], sizeof shapes[0], "f32[%d,%d]", rows, cols);
  snprintf(shapes[1], sizeof shapes[1], "f32[%d]", rows);
  snprintf(shapes[2], sizeof shapes[2], "f32[%d]", cols);
  const char *const shape_names[3] = {shapes[0], shapes[1], shapes[2]};
  strbuf_printf(&g.text,
                "HloModule random_%d\n"
                "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
                "lt { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = pred[] compare(a, b), direction=LT }\n"
                "ENTRY e {\n  m0 = %s parameter(0)\n  m1 = %s parameter(1)\n  r0 = %s parameter(2)\n"
                "  c0 = %s parameter(3)\n  zero = f32[] constant(0)\n",
                (int)seed, shapes[0], shapes[0], shapes[1], shapes[2]);
  g.count[0] = 2, g.count[1] = 1, g.count[2] = 1;
  int n = 4 + (int)random_below(&g, 24);
  for (int i = 0; i < n && g.count[0] < 60 && g.count[1] < 60 && g.count[2] < 60; i++)
    random_instruction(&g, shape_names, rows, cols);
  strbuf_printf(&g.text, "  ROOT out = (");
  const char kinds[3] = {'m', 'r', 'c'};
  bool first = true;
  for (int t = 0; t < 3; t++)
    for (int k = 0; k < g.count[t]; k++)
      if (!g.used[t][k]) strbuf_printf(&g.text, "%s%s", first ? "" : ", ", shapes[t]), first = false;
  strbuf_printf(&g.text, ") tuple(");
  first = true;
  for (int t = 0; t < 3; t++)
    for (int k = 0; k < g.count[t]; k++)
      if (!g.used[t][k]) strbuf_printf(&g.text, "%s%c%d", first ? "" : ", ", kinds[t], k), first = false;
  strbuf_printf(&g.text, ")\n}\n");
  return g.text.data;
}

static Literal **random_inputs(const Module *m, uint64_t seed) {
  int n = m->entry->parameter_count;
  Literal **args = mem_calloc((size_t)n + 1, sizeof *args);
  for (int i = 0; i < n; i++) {
    args[i] = literal_create(&m->entry->parameters[i]->shape);
    int64_t count = shape_element_count(&args[i]->shape);
    for (int64_t e = 0; e < count; e++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      literal_set_f64(args[i], e, (double)(int)(seed >> 40) / (double)(1 << 23) - 1.0);
    }
  }
  return args;
}

TEST(random_modules_compute_the_same_bits_after_optimize_module) {
  for (uint64_t seed = 1; seed <= 300; seed++) {
    char *text = random_module_text(seed);
    Module *m = parse_text(text);
    EXPECT(m, "random module %d does not parse:\n%s", (int)seed, text);
    if (!m) {
      free(text);
      continue;
    }
    Literal **args = random_inputs(m, seed);
    int n = m->entry->parameter_count;
    Literal *before = evaluate(m, args, n);
    bool ok = optimize(m);
    EXPECT(ok, "random module %d: optimize_module failed on\n%s", (int)seed, text);
    Literal *after = ok ? evaluate(m, args, n) : NULL;
    EXPECT(!ok || (before && after && literal_equal(before, after)), "random module %d computes something else:\n%s",
           (int)seed, text);
    literal_free(before);
    literal_free(after);
    for (int i = 0; i < n; i++) literal_free(args[i]);
    free(args);
    module_free(m);
    free(text);
  }
}

/* Each x_i is written out for a sort whose result runs down a long chain
 * of adds: the cycle search from every x_i would walk the rest of the
 * chain, which is quadratic; the pass spends a linear budget, then
 * refuses (safely) and says so in the notes. The cheap adds are copied
 * into the kernels that read them, but not whole chains into every one.
 * The module still computes the same bits. */
TEST(fusion_search_stays_linear_on_long_modules_and_says_where_it_stopped) {
  StrBuf sb = {0};
  enum { STEPS = 1500 };
  strbuf_printf(&sb, "HloModule long\n"
                     "lt { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = pred[] compare(a, b), direction=LT }\n"
                     "ENTRY e {\n  p = f32[8] parameter(0)\n  z0 = f32[8] parameter(1)\n");
  for (int i = 1; i < STEPS; i++)
    strbuf_printf(&sb, "  x%d = f32[8] exponential(z%d)\n  u%d = f32[8] negate(x%d)\n"
                       "  r%d = f32[8] sort(x%d), dimensions={0}, to_apply=lt\n  z%d = f32[8] add(z%d, r%d)\n",
                  i, i - 1, i, i, i, i, i, i - 1, i);
  strbuf_printf(&sb, "  ROOT out = (f32[8]");
  for (int i = 1; i < STEPS; i++) strbuf_printf(&sb, ", f32[8]");
  strbuf_printf(&sb, ") tuple(z%d", STEPS - 1);
  for (int i = 1; i < STEPS; i++) strbuf_printf(&sb, ", u%d", i);
  strbuf_printf(&sb, ")\n}\n");
  Module *m = parse_text(sb.data);
  strbuf_free(&sb);
  EXPECT(m, "the long module does not parse");
  if (!m) return;
  Literal **args = random_inputs(m, 7);
  Literal *before = evaluate(m, args, 2);
  OptOptions options;
  opt_options_default(&options);
  options.verify_each_pass = true;
  OptContext ctx;
  opt_context_init(&ctx, &options);
  Status st;
  status_clear(&st);
  EXPECT(optimize_module(m, &ctx, &st), "optimize_module failed: %s", st.message);
  EXPECT(ctx.notes.data && strstr(ctx.notes.data, "fusion: e has") && strstr(ctx.notes.data, "stopped early"),
         "no note that the search stopped: %s", ctx.notes.data ? ctx.notes.data : "(none)");
  int adds = count_fused_opcode(m, OP_ADD) + count_opcode(m->entry, OP_ADD);
  EXPECT(adds <= 4 * STEPS, "%d adds for %d in the module: chains were copied whole", adds, STEPS - 1);
  Literal *after = evaluate(m, args, 2);
  EXPECT(before && after && literal_equal(before, after), "the long module computes something else");
  opt_context_free(&ctx);
  literal_free(before);
  literal_free(after);
  for (int i = 0; i < 2; i++) literal_free(args[i]);
  free(args);
  module_free(m);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

TEST(every_corpus_module_computes_the_same_after_fusion_and_round_trips) {
  DIR *d = opendir("tests/hlo");
  EXPECT(d, "cannot open tests/hlo");
  if (!d) return;
  char *names[512];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 512) {
    size_t len = strlen(e->d_name);
    if (len > 4 && strcmp(e->d_name + len - 4, ".hlo") == 0) {
      names[n] = mem_calloc(len, 1);
      memcpy(names[n], e->d_name, len - 4);
      n++;
    }
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, compare_names);
  EXPECT(n > 50, "only %d corpus modules", n);
  for (int i = 0; i < n; i++) {
    check_corpus_case(names[i]);
    free(names[i]);
  }
}

int main(void) {
  RUN(reduce_of_x_plus_y_times_z_is_one_input_fusion_and_nothing_else);
  RUN(fusion_names_say_what_the_fusion_holds);
  RUN(softmax_over_the_last_axis_needs_at_most_two_fusions);
  RUN(layernorm_needs_at_most_two_fusions);
  RUN(dot_bias_relu_is_one_dot_with_a_fused_epilogue);
  RUN(fused_members_keep_their_metadata_and_the_fusion_takes_its_roots);
  RUN(train_step_fuses_into_three_kernels);
  RUN(feed_forward_block_is_a_row_kernel_and_two_dot_epilogues);
  RUN(cheap_broadcast_read_by_two_kernels_is_duplicated_not_written);
  RUN(expensive_producer_is_computed_once_not_per_broadcast_copy);
  RUN(expensive_producer_read_by_two_kernels_is_not_duplicated);
  RUN(reduce_over_rows_too_long_to_buffer_is_not_read_again_in_its_kernel);
  RUN(sibling_reductions_of_one_input_become_one_multi_output_fusion);
  RUN(readers_of_a_multi_output_fusion_read_get_tuple_element);
  RUN(a_producer_is_not_fused_where_its_value_would_come_back_through_an_unfused_op);
  RUN(copies_of_a_cheap_producer_do_not_let_two_fusions_wait_for_each_other);
  RUN(fusion_parameters_are_the_distinct_values_it_reads);
  RUN(while_bodies_are_fused_and_reducers_are_left_alone);
  RUN(dot_operands_are_never_fused_into_the_dot);
  RUN(fusion_keeps_existing_fusions_and_reducers_as_they_are);
  RUN(every_corpus_module_computes_the_same_after_fusion_and_round_trips);
  RUN(random_modules_compute_the_same_bits_after_optimize_module);
  RUN(fusion_search_stays_linear_on_long_modules_and_says_where_it_stopped);
  return test_summary();
}
