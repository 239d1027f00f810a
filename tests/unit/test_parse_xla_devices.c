/* Forms of XLA's own files (docs/xla-check.md) that axle now loads: the
 * collectives written for several devices (replica_groups in both forms,
 * all-gather, reduce-scatter, all-to-all's tuple form, collective-permute's
 * combined and in-place forms), the legacy vector of dynamic-slice start
 * indices, after-all of values that are not tokens, rng's third operand,
 * output_to_operand_aliasing on async-start, result_accuracy, and async ops
 * that name their start's thread or none. A module
 * that needs more devices than the one axle runs loads, and is refused
 * when it is compiled, at the instruction, with the count it needs. The
 * modules are written for this test; the values are worked by hand. */
#include <stdio.h>
#include <string.h>

#include "ir.h"
#include "../test.h"

static Module *parse_ok(const char *text) {
  Status st;
  Module *m = parse_module(text, strlen(text), "test.hlo", &st);
  if (!m) status_print(&st, stdout);
  return m;
}

/* m loads, and compiling it is refused at line `line` with `want`. */
static bool refused_when_compiled(const Module *m, int line, const char *want) {
  if (!m) return false;
  Status st;
  status_clear(&st);
  if (eval_check_supported(m, &st)) {
    printf("  compiled, expected '%s'\n", want);
    return false;
  }
  bool ok = st.code == STATUS_UNSUPPORTED && st.loc.line == line && strstr(st.message, want) != NULL;
  if (!ok) status_print(&st, stdout);
  return ok;
}

static Literal *run(const Module *m) {
  Status st;
  status_clear(&st);
  if (!m || !eval_check_supported(m, &st)) {
    if (m) status_print(&st, stdout);
    return NULL;
  }
  Literal *out = eval_module(m, NULL, 0, &st);
  if (!out) status_print(&st, stdout);
  return out;
}

TEST(all_gather_over_a_group_of_four_is_four_times_the_operand_and_needs_four_devices) {
  Module *m = parse_ok("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n"
                       "  ROOT ag = f32[8,3] all-gather(p), dimensions={0}, replica_groups={{0,1,2,3}}\n}\n");
  EXPECT(m != NULL, "f32[2,3] gathered over 4 devices is f32[8,3]");
  EXPECT(refused_when_compiled(m, 4, "instruction 'ag' (all-gather) needs 4 devices; this run has 1"),
         "refused when compiled, at the instruction");
  module_free(m);
  Status st;
  const char *wrong = "HloModule m\nENTRY e { p = f32[2,3] parameter(0)\n"
                      "  ROOT ag = f32[4,3] all-gather(p), dimensions={0}, replica_groups={{0,1,2,3}} }\n";
  Module *bad = parse_module(wrong, strlen(wrong), "test.hlo", &st);
  EXPECT(bad == NULL && strstr(st.message, "inferred shape f32[8,3]"), "a result of the wrong size is refused");
  module_free(bad);
}

TEST(iota_replica_groups_are_expanded_and_printed_as_a_list) {
  /* [2,4]<=[4,2]T(1,0): iota(8) as [4,2], transposed to [2,4]: rows
   * {0,2,4,6} and {1,3,5,7}. */
  Module *m = parse_ok("HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n"
                       "  ROOT ag = f32[12] all-gather(p), dimensions={0}, replica_groups=[2,4]<=[4,2]T(1,0)\n}\n");
  const ReplicaGroups *g = m ? attrs_replica_groups(&m->entry->root->attrs) : NULL;
  static const int64_t want[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  EXPECT(g && g->ids.count == 8 && g->group_size == 4, "two groups of four");
  for (int i = 0; g && i < g->ids.count && i < 8; i++)
    EXPECT(g->ids.values[i] == want[i], "id %d is %lld", i, (long long)g->ids.values[i]);
  StrBuf sb = {0};
  if (m) print_module(&sb, m);
  EXPECT(sb.data && strstr(sb.data, "replica_groups={{0,2,4,6},{1,3,5,7}}"), "printed as a list: %s",
         sb.data ? sb.data : "");
  strbuf_free(&sb);
  EXPECT(refused_when_compiled(m, 4, "needs 8 devices"), "ids up to 7: eight devices");
  module_free(m);
}

/* XLA's all-reduce may name groups of different sizes ({{0,1,2},{3}});
 * they load, print back as written and need as many devices as they name.
 * An all-gather's result depends on the group's size, so there one size
 * is required. */
TEST(all_reduce_groups_may_differ_in_size) {
  Module *m = parse_ok("HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                       "  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  ROOT ar = f32[4] all-reduce(p), replica_groups={{0,1,2},{3}}, to_apply=add\n}\n");
  EXPECT(m != NULL, "groups of 3 and 1 load");
  StrBuf sb = {0};
  if (m) print_module(&sb, m);
  EXPECT(sb.data && strstr(sb.data, "replica_groups={{0,1,2},{3}}"), "printed as written: %s", sb.data ? sb.data : "");
  strbuf_free(&sb);
  EXPECT(refused_when_compiled(m, 9, "instruction 'ar' (all-reduce) needs 4 devices; this run has 1"),
         "refused when compiled, at the instruction");
  module_free(m);
  Status st;
  const char *gather = "HloModule m\nENTRY e { p = f32[4] parameter(0)\n"
                       "  ROOT ag = f32[12] all-gather(p), dimensions={0}, replica_groups={{0,1,2},{3}} }\n";
  Module *bad = parse_module(gather, strlen(gather), "test.hlo", &st);
  EXPECT(bad == NULL && strstr(st.message, "replica groups of different sizes give no one result shape"),
         "an all-gather over groups of different sizes is refused: %s", st.message);
  module_free(bad);
}

TEST(reduce_scatter_keeps_one_shard_of_the_group) {
  Module *m = parse_ok("HloModule m\nadd { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
                       "ENTRY e {\n  p = f32[8] parameter(0)\n"
                       "  ROOT rs = f32[2] reduce-scatter(p), dimensions={0}, replica_groups={{0,1,2,3}}, to_apply=add\n}\n");
  EXPECT(m != NULL, "f32[8] scattered over 4 devices is f32[2]");
  EXPECT(refused_when_compiled(m, 5, "needs 4 devices"), "refused when compiled");
  module_free(m);
  Status st;
  const char *uneven = "HloModule m\nadd { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
                       "ENTRY e { p = f32[6] parameter(0)\n"
                       "  ROOT rs = f32[1] reduce-scatter(p), dimensions={0}, replica_groups={{0,1,2,3}}, to_apply=add }\n";
  Module *bad = parse_module(uneven, strlen(uneven), "test.hlo", &st);
  EXPECT(bad == NULL && strstr(st.message, "does not split into 4 parts"), "6 does not split into 4: %s", st.message);
  module_free(bad);
}

TEST(collectives_without_groups_take_the_group_from_their_shapes) {
  Module *m = parse_ok("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  ROOT ag = f32[6] all-gather(p), dimensions={0}, replica_groups={}\n}\n");
  EXPECT(refused_when_compiled(m, 4, "needs 3 devices"), "f32[2] to f32[6]: three devices");
  module_free(m);
}

TEST(a_group_of_one_device_runs) {
  Module *m = parse_ok("HloModule m\nENTRY e {\n  p = f32[2] constant({1, 2})\n"
                       "  ag = f32[2] all-gather(p), dimensions={0}, replica_groups={{0}}\n"
                       "  ROOT t = (f32[2]) all-to-all(ag), replica_groups={{0}}\n}\n");
  Literal *out = run(m);
  EXPECT(out && out->shape.type == TYPE_TUPLE && out->shape.tuple_count == 1, "all-to-all of one operand, no "
                                                                              "dimension: a tuple of one");
  if (out && out->shape.type == TYPE_TUPLE && out->elements) {
    EXPECT(literal_get_f64(out->elements[0], 0) == 1 && literal_get_f64(out->elements[0], 1) == 2,
           "the values pass through");
  }
  literal_free(out);
  module_free(m);
}

TEST(collective_permute_combined_and_in_place_forms_load) {
  Module *combined = parse_ok("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)  b = s32[3] parameter(1)\n"
                              "  ROOT cp = (f32[2], s32[3]) collective-permute(a, b), source_target_pairs={{0,1},{1,0}}\n}\n");
  EXPECT(refused_when_compiled(combined, 4, "needs 2 devices"), "two operands, two devices");
  module_free(combined);
  Module *one = parse_ok("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)  b = s32[3] parameter(1)\n"
                         "  ROOT cp = (f32[2], s32[3]) collective-permute(a, b), source_target_pairs={{0,0}}\n}\n");
  EXPECT(refused_when_compiled(one, 4, "the combined form is not supported"), "on one device: refused by form");
  module_free(one);
  Module *in_place = parse_ok(
      "HloModule m\nENTRY e {\n  input = f32[4,2] parameter(0)  output = f32[8,2] parameter(1)\n"
      "  z = u32[] constant(0)  starts = (u32[], u32[]) tuple(z, z)\n"
      "  ROOT cp = f32[8,2] collective-permute(input, output, starts, starts), source_target_pairs={{0,1}}, "
      "slice_sizes={{4,2}}\n}\n");
  EXPECT(in_place != NULL, "the in-place form: the result is the output buffer");
  EXPECT(refused_when_compiled(in_place, 5, "needs 2 devices"), "refused when compiled");
  module_free(in_place);
  Module *start = parse_ok(
      "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)  b = f32[3] parameter(1)\n"
      "  s = ((f32[2], f32[3]), (f32[2], f32[3])) collective-permute-start(a, b), source_target_pairs={{0,1}}\n"
      "  ROOT d = (f32[2], f32[3]) collective-permute-done(s)\n}\n");
  EXPECT(start != NULL, "combined collective-permute-start: ((operands), (results))");
  module_free(start);
}

TEST(dynamic_slice_start_indices_may_be_one_vector) {
  /* x = [[0,1,2],[3,4,5],[6,7,8]]; starts (1, 5): column 5 clamps to 1. */
  Module *m = parse_ok("HloModule m\nENTRY e {\n"
                       "  x = s32[3,3] constant({{0,1,2},{3,4,5},{6,7,8}})\n"
                       "  v = s32[2] constant({1, 5})\n"
                       "  ROOT ds = s32[2,2] dynamic-slice(x, v), dynamic_slice_sizes={2,2}\n}\n");
  const Instruction *root = m ? m->entry->root : NULL;
  EXPECT(root && root->opcode == OP_DYNAMIC_SLICE && root->operand_count == 3 && strcmp(root->name, "ds") == 0,
         "rewritten to one scalar start per dimension, the name kept");
  Literal *out = run(m);
  static const int64_t want[4] = {4, 5, 7, 8};
  for (int i = 0; out && i < 4; i++)
    EXPECT(literal_get_s64(out, i) == want[i], "element %d is %lld", i, (long long)literal_get_s64(out, i));
  EXPECT(out != NULL, "runs");
  literal_free(out);
  module_free(m);
  m = parse_ok("HloModule m\nENTRY e {\n  x = s32[2,3] constant({{0,1,2},{3,4,5}})\n"
               "  u = s32[1,2] constant({{9,9}})  v = s32[2] constant({1, 0})\n"
               "  ROOT d = s32[2,3] dynamic-update-slice(x, u, v)\n}\n");
  out = run(m);
  static const int64_t updated[6] = {0, 1, 2, 9, 9, 5};
  for (int i = 0; out && i < 6; i++)
    EXPECT(literal_get_s64(out, i) == updated[i], "element %d is %lld", i, (long long)literal_get_s64(out, i));
  EXPECT(out != NULL, "dynamic-update-slice's vector form runs");
  literal_free(out);
  module_free(m);
}

TEST(after_all_may_follow_values_that_are_not_tokens) {
  Module *m = parse_ok("HloModule m\nENTRY e {\n  p = f32[] constant(2)  n = f32[] negate(p)\n"
                       "  t = token[] after-all(n, p)\n  d = f32[] add-dependency(p, t)\n"
                       "  ROOT r = f32[] add(n, d)\n}\n");
  Literal *out = run(m);
  EXPECT(out && literal_get_f64(out, 0) == 0, "-2 + 2 is 0");
  literal_free(out);
  module_free(m);
}

TEST(rng_may_take_the_result_dimensions_as_a_third_operand) {
  Module *m = parse_ok("HloModule m\nENTRY e {\n  a = s32[] constant(3)  b = s32[] constant(4)\n"
                       "  shape = s64[2] constant({2, 5})\n"
                       "  ROOT r = s32[2,5] rng(a, b, shape), distribution=rng_uniform\n}\n");
  Literal *out = run(m);
  EXPECT(out != NULL, "runs");
  for (int i = 0; out && i < 10; i++) EXPECT(literal_get_s64(out, i) == 3, "uniform in [3, 4) is 3");
  literal_free(out);
  module_free(m);
  /* XLA's rng_expander test writes it in the rng's own type for f16 (its
   * expander converts every operand to f32 alongside a and b); the values
   * are not read, so they need not be the result's dims. */
  m = parse_ok("HloModule m\nENTRY e {\n  mean = f16[] constant(0)  stdev = f16[] constant(0)\n"
               "  shape = f16[3] constant({8, 4, 2})\n"
               "  ROOT r = f16[2] rng(mean, stdev, shape), distribution=rng_normal\n}\n");
  out = run(m);
  EXPECT(out != NULL, "an f16 rng with an f16[3] third operand runs");
  for (int i = 0; out && i < 2; i++) EXPECT(literal_get_f64(out, i) == 0, "normal with stdev 0 is the mean");
  literal_free(out);
  module_free(m);
  Status st;
  const char *matrix = "HloModule m\nENTRY e {\n  a = f32[] constant(0)  b = f32[] constant(1)\n"
                       "  shape = s64[1,2] constant({{2, 2}})\n"
                       "  ROOT r = f32[2,2] rng(a, b, shape), distribution=rng_uniform\n}\n";
  m = parse_module(matrix, strlen(matrix), "test.hlo", &st);
  EXPECT(!m && st.loc.line == 5 && strstr(st.message, "rank-1"), "a third operand of rank 2 is refused, located");
  module_free(m);
  const char *other = "HloModule m\nENTRY e {\n  a = f16[] constant(0)  b = f16[] constant(1)\n"
                      "  shape = f32[2] constant({2, 2})\n"
                      "  ROOT r = f16[2,2] rng(a, b, shape), distribution=rng_uniform\n}\n";
  m = parse_module(other, strlen(other), "test.hlo", &st);
  EXPECT(!m && st.loc.line == 5 && strstr(st.message, "rank-1"), "a float third operand of another type is refused");
  module_free(m);
}

TEST(async_start_takes_output_to_operand_aliasing_and_result_accuracy_its_two_forms) {
  Module *m = parse_ok("HloModule m\nwrapped { x = f32[4] parameter(0)  ROOT n = f32[4] negate(x) }\n"
                       "ENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  s = ((f32[4]), f32[4], u32[]) async-start(p), calls=wrapped, "
                       "output_to_operand_aliasing={{1}: (0, {})}\n"
                       "  d = f32[4] async-done(s)\n"
                       "  e1 = f32[4] exponential(d), result_accuracy={mode=highest}\n"
                       "  ROOT e2 = f32[4] exponential(e1), result_accuracy={tolerance={rtol=0.5, atol=1.0, ulps=2}}\n}\n");
  EXPECT(m != NULL, "parses");
  module_free(m);
  m = parse_ok("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
               "  s = ((f32[4]), f32[4], s32[]) negate-start(p), async_execution_thread=\"side\"\n"
               "  u = ((f32[4]), f32[4], s32[]) negate-update(s)\n"
               "  ROOT d = f32[4] negate-done(u), async_execution_thread=\"side\"\n}\n");
  EXPECT(m != NULL, "an update naming no thread runs on its start's; a done may name the same one");
  module_free(m);
}

int main(void) {
  RUN(all_gather_over_a_group_of_four_is_four_times_the_operand_and_needs_four_devices);
  RUN(iota_replica_groups_are_expanded_and_printed_as_a_list);
  RUN(all_reduce_groups_may_differ_in_size);
  RUN(reduce_scatter_keeps_one_shard_of_the_group);
  RUN(collectives_without_groups_take_the_group_from_their_shapes);
  RUN(a_group_of_one_device_runs);
  RUN(collective_permute_combined_and_in_place_forms_load);
  RUN(dynamic_slice_start_indices_may_be_one_vector);
  RUN(after_all_may_follow_values_that_are_not_tokens);
  RUN(rng_may_take_the_result_dimensions_as_a_third_operand);
  RUN(async_start_takes_output_to_operand_aliasing_and_result_accuracy_its_two_forms);
  return test_summary();
}
