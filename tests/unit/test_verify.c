/* Shape inference and the verifier: each test is a small module that breaks
 * one rule (or keeps a rule that is easy to get wrong), written as HLO text.
 * A refusal must be a verify error that names the instruction and carries
 * its line. */
#include <string.h>

#include "ir.h"
#include "../test.h"

static const char add_f32[] =
    "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n";

/* Wraps an entry body with "HloModule m", add_f32 and "ENTRY e { ... }". */
static Module *parse_entry(const char *body, Status *st) {
  char text[4096];
  snprintf(text, sizeof text, "HloModule m\n%sENTRY e {\n%s\n}\n", add_f32, body);
  status_clear(st);
  return parse_module(text, strlen(text), "inline.hlo", st);
}

/* The body must be refused, naming instruction `name` with a message that
 * contains `fragment`. */
static void expect_refused(const char *body, const char *name, const char *fragment) {
  Status st;
  Module *m = parse_entry(body, &st);
  char want[128];
  snprintf(want, sizeof want, "instruction '%s'", name);
  EXPECT(m == NULL, "accepted:\n%s", body);
  EXPECT(st.code == STATUS_VERIFY_ERROR, "code %d, message: %s", st.code, st.message);
  EXPECT(strstr(st.message, want) != NULL, "message does not name %s: %s", want, st.message);
  EXPECT(strstr(st.message, fragment) != NULL, "message lacks '%s': %s", fragment, st.message);
  /* st.file is not read: it points into the module parse_module freed. */
  EXPECT(st.loc.line > 0, "no location: %s", st.message);
  module_free(m);
}

static void expect_accepted(const char *body) {
  Status st;
  Module *m = parse_entry(body, &st);
  EXPECT(m != NULL, "refused: %s\n%s", st.message, body);
  module_free(m);
}

/* ---- elementwise ---- */

TEST(binary_operands_must_have_the_same_dims) {
  expect_refused("a = f32[2] parameter(0)  b = f32[3] parameter(1)\n ROOT x = f32[2] add(a, b)", "x",
                 "same dimensions");
}

TEST(binary_operands_must_have_the_same_type) {
  expect_refused("a = f32[2] parameter(0)  b = s32[2] parameter(1)\n ROOT x = f32[2] multiply(a, b)", "x",
                 "element type");
}

TEST(declared_shape_must_equal_the_inferred_one) {
  expect_refused("a = f32[2] parameter(0)\n ROOT x = f32[3] negate(a)", "x", "does not match the inferred");
}

TEST(compare_yields_pred) {
  expect_refused("a = f32[2] parameter(0)\n ROOT c = f32[2] compare(a, a), direction=LT", "c", "pred[2]");
}

TEST(compare_type_must_suit_the_operands) {
  expect_refused("a = s32[2] parameter(0)\n ROOT c = pred[2] compare(a, a), direction=LT, type=FLOAT", "c",
                 "comparison type");
}

/* XLA takes a pred[] predicate for the whole select (the parser broadcasts
 * it); any other predicate has the operands' dimensions. */
TEST(select_predicate_is_a_scalar_or_has_the_operand_dimensions) {
  expect_accepted("p = pred[] parameter(0)  a = f32[2] parameter(1)\n ROOT s = f32[2] select(p, a, a)");
  expect_refused("p = pred[3] parameter(0)  a = f32[2] parameter(1)\n ROOT s = f32[2] select(p, a, a)", "s",
                 "same dimensions");
}

TEST(float_ops_refuse_integers) {
  expect_refused("a = s32[2] parameter(0)\n ROOT e = s32[2] exponential(a)", "e", "floating-point");
}

TEST(clamp_bounds_are_scalars_or_the_operand_shape) {
  expect_accepted("lo = f32[] parameter(0)  x = f32[3] parameter(1)\n ROOT c = f32[3] clamp(lo, x, lo)");
  expect_refused("lo = f32[2] parameter(0)  x = f32[3] parameter(1)\n ROOT c = f32[3] clamp(lo, x, lo)", "c",
                 "same dimensions");
}

TEST(bitcast_convert_adds_or_drops_a_minor_dimension) {
  expect_accepted("a = f32[2] parameter(0)\n b = u8[2,4] bitcast-convert(a)\n ROOT c = f32[2] bitcast-convert(b)");
  expect_refused("a = f32[3] parameter(0)\n ROOT c = f64[3] bitcast-convert(a)", "c", "minor dimension");
}

/* ---- data movement ---- */

TEST(broadcast_dimensions_must_cover_the_operand_rank) {
  expect_refused("a = f32[2] parameter(0)\n ROOT b = f32[2,3] broadcast(a), dimensions={0,1}", "b",
                 "operand has rank 1");
}

TEST(broadcast_keeps_operand_dimension_sizes) {
  expect_refused("a = f32[3] parameter(0)\n ROOT b = f32[2,3] broadcast(a), dimensions={0}", "b",
                 "does not match result dimension");
}

TEST(reshape_keeps_the_element_count) {
  expect_refused("a = f32[6] parameter(0)\n ROOT r = f32[2,4] reshape(a)", "r", "cannot reshape 6 elements");
}

TEST(transpose_needs_a_permutation) {
  expect_refused("a = f32[2,3] parameter(0)\n ROOT t = f32[2,2] transpose(a), dimensions={0,0}", "t", "repeats");
}

TEST(slice_stays_within_bounds) {
  expect_refused("a = f32[4] parameter(0)\n ROOT s = f32[5] slice(a), slice={[0:5]}", "s", "out of bounds");
}

TEST(dynamic_slice_sizes_fit_the_operand) {
  expect_refused("a = f32[4] parameter(0)  i = s32[] parameter(1)\n"
                 " ROOT d = f32[5] dynamic-slice(a, i), dynamic_slice_sizes={5}", "d", "exceeds dimension");
}

/* One vector of as many starts as the operand has dimensions is XLA's
 * legacy form, which the parser rewrites (test_parse_xla_devices); any
 * other non-scalar start is refused. */
TEST(dynamic_slice_start_indices_are_scalars) {
  expect_refused("a = f32[4] parameter(0)  i = s32[2] parameter(1)\n"
                 " ROOT d = f32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}", "d", "must be a scalar");
}

TEST(dynamic_update_slice_update_fits) {
  expect_refused("a = f32[4] parameter(0)  u = f32[5] parameter(1)  i = s32[] parameter(2)\n"
                 " ROOT d = f32[4] dynamic-update-slice(a, u, i)", "d", "exceeds");
}

TEST(concatenate_operands_agree_off_the_axis) {
  expect_refused("a = f32[2,3] parameter(0)  b = f32[2,4] parameter(1)\n"
                 " ROOT c = f32[4,3] concatenate(a, b), dimensions={0}", "c", "differs in dimension 1");
}

TEST(pad_value_is_a_scalar_of_the_operand_type) {
  expect_refused("a = f32[2] parameter(0)  z = s32[] parameter(1)\n ROOT p = f32[4] pad(a, z), padding=1_1", "p",
                 "element type");
}

TEST(negative_padding_cannot_make_a_negative_dimension) {
  expect_accepted("a = f32[4] parameter(0)  z = f32[] constant(0)\n ROOT p = f32[1] pad(a, z), padding=-2_-1");
  expect_refused("a = f32[2] parameter(0)  z = f32[] constant(0)\n ROOT p = f32[0] pad(a, z), padding=-2_-1", "p",
                 "negative");
}

TEST(get_tuple_element_index_is_in_range) {
  expect_refused("a = f32[2] parameter(0)  t = (f32[2]) tuple(a)\n ROOT g = f32[2] get-tuple-element(t), index=1",
                 "g", "out of range");
}

TEST(iota_dimension_is_in_range) {
  expect_refused("ROOT i = s32[4] iota(), iota_dimension=1", "i", "out of range");
}

/* ---- reductions, windows ---- */

TEST(reduce_dimensions_are_in_range) {
  expect_refused("a = f32[2,3] parameter(0)  z = f32[] constant(0)\n"
                 " ROOT r = f32[2] reduce(a, z), dimensions={2}, to_apply=add", "r", "out of range");
}

TEST(reducer_signature_matches_the_element_types) {
  expect_refused("a = s32[2] parameter(0)  z = s32[] constant(0)\n"
                 " ROOT r = s32[] reduce(a, z), dimensions={0}, to_apply=add", "r", "reducer 'add'");
}

TEST(variadic_reduce_returns_a_tuple) {
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule m\n"
           "argmax { av = f32[] parameter(0)  ai = s32[] parameter(1)  bv = f32[] parameter(2)"
           "  bi = s32[] parameter(3)\n"
           "  gt = pred[] compare(av, bv), direction=GT  v = f32[] select(gt, av, bv)"
           "  i = s32[] select(gt, ai, bi)  ROOT t = (f32[], s32[]) tuple(v, i) }\n"
           "ENTRY e { x = f32[4] parameter(0)  n = s32[4] iota(), iota_dimension=0\n"
           "  z = f32[] constant(-inf)  zi = s32[] constant(0)\n"
           "  ROOT r = (f32[], s32[]) reduce(x, n, z, zi), dimensions={0}, to_apply=argmax }\n");
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline.hlo", &st);
  EXPECT(m != NULL, "refused: %s", st.message);
  module_free(m);
}

TEST(reduce_window_window_matches_the_operand_rank) {
  expect_refused("a = f32[4,4] parameter(0)  z = f32[] constant(0)\n"
                 " ROOT r = f32[2] reduce-window(a, z), window={size=2 stride=2}, to_apply=add", "r",
                 "window has 1 dimensions");
}

TEST(select_and_scatter_source_has_the_window_output_shape) {
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule m\n%s"
           "ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }\n"
           "ENTRY e { x = f32[4] parameter(0)  s = f32[3] parameter(1)  z = f32[] constant(0)\n"
           "  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=add }\n",
           add_f32);
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline.hlo", &st);
  EXPECT(m == NULL && strstr(st.message, "instruction 'r'") && strstr(st.message, "window output shape"),
         "got: %s", st.message);
  module_free(m);
}

TEST(huge_paddings_and_dilations_are_refused_without_overflow) {
  expect_refused("a = f32[4] parameter(0)  z = f32[] constant(0)\n"
                 " ROOT p = f32[4] pad(a, z), padding=9223372036854775807_9223372036854775807", "p", "too large");
  expect_refused("a = f32[4] parameter(0)  z = f32[] constant(0)\n"
                 " ROOT p = f32[4] pad(a, z), padding=0_0_4611686018427387904", "p", "too large");
  expect_refused("a = f32[4] parameter(0)  z = f32[] constant(0)\n"
                 " ROOT r = f32[4] reduce-window(a, z), window={size=3 rhs_dilate=4611686018427387904}, to_apply=add",
                 "r", "too large");
  expect_accepted("a = f32[4] parameter(0)\n ROOT s = f32[1] slice(a), slice={[0:4:9223372036854775807]}");
}

/* ---- dot, convolution, gather, scatter ---- */

TEST(dot_contracting_dimensions_agree) {
  expect_refused("a = f32[2,3] parameter(0)  b = f32[4,5] parameter(1)\n"
                 " ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "d",
                 "contracting dimension 0 has size 3 on lhs and 4 on rhs");
}

TEST(dot_accepts_the_declared_element_type_but_checks_dims) {
  expect_accepted("a = bf16[2,3] parameter(0)  b = bf16[3,5] parameter(1)\n"
                  " ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  expect_refused("a = bf16[2,3] parameter(0)  b = bf16[3,5] parameter(1)\n"
                 " ROOT d = f32[5,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "d",
                 "f32[2,5]");
}

TEST(batch_dot_orders_batch_then_lhs_then_rhs_free_dims) {
  expect_accepted("a = f32[7,2,3] parameter(0)  b = f32[3,7,5] parameter(1)\n"
                  " ROOT d = f32[7,2,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2},"
                  " rhs_batch_dims={1}, rhs_contracting_dims={0}");
}

TEST(convolution_input_features_match_the_kernel_times_groups) {
  expect_accepted("x = f32[1,5,5,4] parameter(0)  k = f32[3,3,2,6] parameter(1)\n"
                  " ROOT c = f32[1,3,3,6] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1},"
                  " dim_labels=b01f_01io->b01f, feature_group_count=2");
  expect_refused("x = f32[1,5,5,4] parameter(0)  k = f32[3,3,3,6] parameter(1)\n"
                 " ROOT c = f32[1,3,3,6] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1},"
                 " dim_labels=b01f_01io->b01f, feature_group_count=2", "c", "kernel input features");
}

TEST(convolution_window_matches_the_kernel) {
  expect_refused("x = f32[1,5,5,4] parameter(0)  k = f32[3,3,4,6] parameter(1)\n"
                 " ROOT c = f32[1,4,4,6] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f", "c",
                 "window size 2 differs");
}

TEST(gather_index_vector_matches_start_index_map) {
  expect_accepted("x = f32[3,3] parameter(0)  i = s32[2] parameter(1)\n"
                  " ROOT g = f32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},"
                  " start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}");
  expect_refused("x = f32[3,3] parameter(0)  i = s32[2,2] parameter(1)\n"
                 " ROOT g = f32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},"
                 " start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}", "g", "start_index_map has 1");
}

TEST(scatter_updates_match_the_indices) {
  expect_refused("x = f32[3,3] parameter(0)  i = s32[2] parameter(1)  u = f32[4,3] parameter(2)\n"
                 " ROOT s = f32[3,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},"
                 " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add", "s",
                 "must match indices dimension");
}

TEST(triangular_solve_b_matches_a) {
  expect_refused("a = f32[3,3] parameter(0)  b = f32[4,2] parameter(1)\n"
                 " ROOT x = f32[4,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE",
                 "x", "must match a's size 3");
}

TEST(batch_norm_scale_has_the_feature_size) {
  expect_refused("x = f32[2,3] parameter(0)  s = f32[2] parameter(1)  o = f32[3] parameter(2)\n"
                 " ROOT t = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001,"
                 " feature_index=1", "t", "must be f32[3]");
}

/* ---- calls and control flow ---- */

TEST(sort_comparator_returns_pred) {
  expect_refused("a = f32[4] parameter(0)\n ROOT s = f32[4] sort(a), dimensions={0}, to_apply=add", "s",
                 "returns f32[]");
}

TEST(while_body_keeps_the_loop_state_shape) {
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule m\n"
           "c { s = s32[] parameter(0)  n = s32[] constant(3)  ROOT lt = pred[] compare(s, n), direction=LT }\n"
           "b { s = s32[] parameter(0)  ROOT f = f32[] convert(s) }\n"
           "ENTRY e { z = s32[] constant(0)  ROOT w = s32[] while(z), condition=c, body=b }\n");
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline.hlo", &st);
  EXPECT(m == NULL && strstr(st.message, "instruction 'w'") && strstr(st.message, "body 'b' returns f32[]"),
         "got: %s", st.message);
  module_free(m);
}

TEST(call_arguments_match_the_parameters) {
  expect_refused("a = f32[2] parameter(0)\n ROOT c = f32[] call(a, a), to_apply=add", "c",
                 "parameter 0 is f32[] but operand 0 is f32[2]");
}

TEST(conditional_branches_return_the_same_shape) {
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule m\n"
           "t { x = f32[] parameter(0)  ROOT y = f32[] negate(x) }\n"
           "f { x = f32[] parameter(0)  ROOT y = s32[] convert(x) }\n"
           "ENTRY e { p = pred[] parameter(0)  x = f32[] parameter(1)\n"
           "  ROOT k = f32[] conditional(p, x, x), true_computation=t, false_computation=f }\n");
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline.hlo", &st);
  EXPECT(m == NULL && strstr(st.message, "instruction 'k'") && strstr(st.message, "branch 'f' returns s32[]"),
         "got: %s", st.message);
  module_free(m);
}

/* ---- module-level checks, run on a parsed module changed afterwards ---- */

/* Each dimension stays below 2^40 and the element count below 2^48 (the
 * parser's bounds, so that byte sizes summed over a module cannot
 * overflow); a shape between 2^40 and 2^48 elements verifies. */
TEST(declared_dimensions_stay_below_two_to_the_forty_and_counts_below_two_to_the_forty_eight) {
  Status st;
  Module *m = parse_entry("ROOT a = f32[2,2] parameter(0)", &st);
  EXPECT(m != NULL, "refused: %s", st.message);
  if (!m) return;
  Instruction *a = m->entry->root;
  a->shape.dims[0] = (int64_t)1 << 41;
  status_clear(&st);
  EXPECT(!verify_module(m, &st) && strstr(st.message, "a dimension reaches 2^40") &&
             strstr(st.message, "instruction 'a'"),
         "got: %s", st.message);
  a->shape.dims[0] = a->shape.dims[1] = (int64_t)1 << 25;
  status_clear(&st);
  EXPECT(!verify_module(m, &st) && strstr(st.message, "the element count reaches 2^48"), "got: %s", st.message);
  a->shape.dims[0] = a->shape.dims[1] = (int64_t)1 << 21;
  status_clear(&st);
  EXPECT(verify_module(m, &st), "2^42 elements: %s", st.message);
  module_free(m);
}

TEST(parameter_numbers_are_complete) {
  Status st;
  Module *m = parse_entry("a = f32[2] parameter(0)  b = f32[2] parameter(1)\n ROOT x = f32[2] add(a, b)", &st);
  EXPECT(m != NULL, "refused: %s", st.message);
  if (!m) return;
  m->entry->instructions[1]->attrs.parameter_number = 0;
  status_clear(&st);
  EXPECT(!verify_module(m, &st) && st.code == STATUS_VERIFY_ERROR && strstr(st.message, "parameter 'b'"),
         "got: %s", st.message);
  module_free(m);
}

TEST(verify_errors_carry_the_file_and_the_instruction_line) {
  Status st;
  Module *m = parse_entry("a = f32[2] parameter(0)\n ROOT x = f32[2] negate(a)", &st);
  EXPECT(m != NULL, "refused: %s", st.message);
  if (!m) return;
  m->entry->root->shape.dims[0] = 3;
  status_clear(&st);
  EXPECT(!verify_module(m, &st), "accepted a wrong declared shape");
  EXPECT(st.file == m->filename && st.loc.line == 5 && st.loc.col == 7, "at %s:%d:%d: %s",
         st.file ? st.file : "(null)", st.loc.line, st.loc.col, st.message);
  EXPECT(strstr(st.message, "computation 'e'") != NULL, "computation not named: %s", st.message);
  module_free(m);
}

/* Passes add computations anywhere: the verifier puts callees before
 * callers (entry last) itself, and refuses only what no order can fix. */
TEST(computations_in_any_order_are_sorted_callees_first) {
  Status st;
  Module *m = parse_entry("a = f32[2] parameter(0)  z = f32[] constant(0)\n"
                          " ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=add", &st);
  EXPECT(m != NULL && m->computation_count == 2, "refused: %s", st.message);
  if (!m) return;
  /* put the entry first and the reducer last */
  Computation *first = m->computations[0];
  m->computations[0] = m->computations[1];
  m->computations[1] = first;
  status_clear(&st);
  EXPECT(verify_module(m, &st), "refused: %s", st.message);
  EXPECT(m->computations[0] == first && m->computations[1] == m->entry, "not sorted callees first");
  m->entry->root->called[0] = m->entry;
  status_clear(&st);
  EXPECT(!verify_module(m, &st) && strstr(st.message, "instruction 'r'") && strstr(st.message, "calls"),
         "a call to the entry was accepted: %s", st.message);
  module_free(m);
}

TEST(layouts_are_permutations_of_the_dimensions) {
  Status st;
  Module *m = parse_entry("ROOT a = f32[2,3]{0,1} parameter(0)", &st);
  EXPECT(m != NULL, "refused: %s", st.message);
  if (!m) return;
  m->entry->root->shape.minor_to_major[1] = 0;
  status_clear(&st);
  EXPECT(!verify_module(m, &st) && strstr(st.message, "layout"), "got: %s", st.message);
  module_free(m);
}

/* A bare instruction of each opcode, with no operands, attributes or
 * callees: inference must reach the opcode's rule and answer, not crash. */
/* The C builder asks infer_shape to overwrite the declared shape in place;
 * a declared layout survives (layouts are not inferred). */
TEST(infer_shape_may_write_over_the_declared_shape) {
  Status st;
  Module *m = parse_entry("a = s32[2,3] parameter(0)\n ROOT c = f32[2,3]{0,1} convert(a)", &st);
  EXPECT(m != NULL, "refused: %s", st.message);
  if (!m) return;
  Instruction *c = m->entry->root;
  status_clear(&st);
  EXPECT(infer_shape(c, &c->shape, &m->arena, &st), "failed: %s", st.message);
  EXPECT(c->shape.type == TYPE_F32 && c->shape.rank == 2 && c->shape.dims[1] == 3, "became %s[rank %d]",
         type_name(c->shape.type), c->shape.rank);
  EXPECT(c->shape.minor_to_major[0] == 0 && c->shape.minor_to_major[1] == 1, "layout {%d,%d}",
         c->shape.minor_to_major[0], c->shape.minor_to_major[1]);
  module_free(m);
}

TEST(every_opcode_has_a_shape_rule) {
  Arena arena = {0};
  for (int op = 0; op < OP_COUNT; op++) {
    Instruction inst;
    memset(&inst, 0, sizeof inst);
    inst.opcode = (Opcode)op;
    inst.name = "bare";
    inst.shape = shape_scalar(TYPE_F32);
    Shape out;
    Status st;
    status_clear(&st);
    bool ok = infer_shape(&inst, &out, &arena, &st);
    EXPECT(ok || strstr(st.message, "has no shape rule") == NULL, "%s: %s", opcode_name((Opcode)op), st.message);
    EXPECT(ok || st.code == STATUS_VERIFY_ERROR, "%s: code %d", opcode_name((Opcode)op), st.code);
  }
  arena_free_all(&arena);
}

TEST(infer_shape_computes_the_result_without_a_declared_one) {
  Status st;
  Module *m = parse_entry("a = f32[2,3] parameter(0)\n ROOT t = f32[3,2] transpose(a), dimensions={1,0}", &st);
  EXPECT(m != NULL, "refused: %s", st.message);
  if (!m) return;
  Shape out;
  status_clear(&st);
  EXPECT(infer_shape(m->entry->root, &out, &m->arena, &st), "failed: %s", st.message);
  EXPECT(out.type == TYPE_F32 && out.rank == 2 && out.dims[0] == 3 && out.dims[1] == 2, "got rank %d", out.rank);
  module_free(m);
}

/* padding, window and dim_labels live out of line and are NULL when absent:
 * instructions built in C without them must be refused with a message,
 * never dereferenced. A stack-held group passed to the builder is copied. */
static bool refused_with(Computation *c, Opcode op, Instruction *const *operands, int count,
                         Computation *called, const Attrs *attrs, const char *fragment) {
  Status st;
  status_clear(&st);
  Instruction *inst = builder_add_instruction(c, op, operands, count, called ? &called : NULL,
                                              called ? 1 : 0, attrs, NULL, &st);
  EXPECT(inst == NULL, "%s was accepted", opcode_name(op));
  EXPECT(strstr(st.message, fragment) != NULL, "%s: message lacks '%s': %s", opcode_name(op), fragment,
         st.message);
  return inst == NULL;
}

TEST(absent_padding_window_and_dim_labels_are_refused) {
  Module *m = module_create("absent");
  Shape s = shape_scalar(TYPE_F32);
  Computation *add = builder_add_computation(m, "add");
  Instruction *ab[] = {builder_add_parameter(add, &s, "a"), builder_add_parameter(add, &s, "b")};
  Status st;
  status_clear(&st);
  Instruction *sum = builder_add_instruction(add, OP_ADD, ab, 2, NULL, 0, NULL, NULL, &st);
  EXPECT(sum, "add: %s", st.message);
  if (sum) computation_set_root(add, sum);
  Computation *c = builder_add_computation(m, "e");
  int64_t dims[] = {1, 4, 1};
  Shape v = shape_array(TYPE_F32, 1, &dims[1]), x3 = shape_array(TYPE_F32, 3, dims);
  Instruction *xz[] = {builder_add_parameter(c, &v, "x"), builder_add_parameter(c, &s, "z")};
  Instruction *conv_ops[] = {builder_add_parameter(c, &x3, "in"), builder_add_parameter(c, &x3, "k")};
  Attrs none = {0};
  refused_with(c, OP_PAD, xz, 2, NULL, &none, "padding has 0 dimensions");
  refused_with(c, OP_REDUCE_WINDOW, xz, 2, add, &none, "window has 0 dimensions");
  refused_with(c, OP_CONVOLUTION, conv_ops, 2, NULL, &none, "dim_labels describe rank 2");
  ConvDims b0f = {.spatial_count = 1, .input_feature = 2, .input_spatial = {1}, .kernel_input_feature = 2,
                  .kernel_output_feature = 0, .kernel_spatial = {1}, .output_feature = 2,
                  .output_spatial = {1}};
  Attrs labels_only = {.conv = &b0f};
  refused_with(c, OP_CONVOLUTION, conv_ops, 2, NULL, &labels_only, "window has 0 dimensions");
  PadDims one = {.rank = 1, .lo = {1}, .hi = {2}};
  Attrs padded = {.padding = &one};
  Instruction *p = builder_add_instruction(c, OP_PAD, xz, 2, NULL, 0, &padded, NULL, &st);
  EXPECT(p && p->shape.dims[0] == 7, "pad built in C: %s", st.message);
  EXPECT(p && p->attrs.padding != &one, "the builder kept a pointer to the caller's padding");
  module_free(m);
}

/* The scatter that crashed the CPU backend (issue 22), built in C: operand
 * dimension 0 both inserted and batching. The builder infers every shape,
 * so it meets the verifier's rule and is refused before any backend. */
TEST(scatter_built_in_c_with_a_dimension_inserted_and_batching_is_refused) {
  Module *m = module_create("scatter_in_c");
  Shape s = shape_scalar(TYPE_F32);
  Computation *add = builder_add_computation(m, "add");
  Instruction *ab[] = {builder_add_parameter(add, &s, "a"), builder_add_parameter(add, &s, "b")};
  Status st;
  status_clear(&st);
  Instruction *sum = builder_add_instruction(add, OP_ADD, ab, 2, NULL, 0, NULL, NULL, &st);
  EXPECT(sum, "add: %s", st.message);
  if (sum) computation_set_root(add, sum);
  Computation *c = builder_add_computation(m, "e");
  int64_t x_dims[] = {2, 3}, idx_dims[] = {2, 4, 1}, upd_dims[] = {2, 4};
  Shape x = shape_array(TYPE_F32, 2, x_dims), idx = shape_array(TYPE_S32, 3, idx_dims),
        upd = shape_array(TYPE_F32, 2, upd_dims);
  Instruction *ops[] = {builder_add_parameter(c, &x, "x"), builder_add_parameter(c, &idx, "i"),
                        builder_add_parameter(c, &upd, "u")};
  int64_t zero[] = {0}, one[] = {1};
  ScatterDims dims = {.inserted_window_dims = {1, zero}, .input_batching_dims = {1, zero},
                      .scatter_indices_batching_dims = {1, zero}, .scatter_dims_to_operand_dims = {1, one},
                      .index_vector_dim = 2};
  Attrs attrs = {.scatter = &dims};
  refused_with(c, OP_SCATTER, ops, 3, add, &attrs,
               "dimension 0 is in both inserted_window_dims and input_batching_dims (StableHLO scatter (C9))");
  module_free(m);
}

int main(void) {
  RUN(binary_operands_must_have_the_same_dims);
  RUN(binary_operands_must_have_the_same_type);
  RUN(declared_shape_must_equal_the_inferred_one);
  RUN(compare_yields_pred);
  RUN(compare_type_must_suit_the_operands);
  RUN(select_predicate_is_a_scalar_or_has_the_operand_dimensions);
  RUN(float_ops_refuse_integers);
  RUN(clamp_bounds_are_scalars_or_the_operand_shape);
  RUN(bitcast_convert_adds_or_drops_a_minor_dimension);
  RUN(broadcast_dimensions_must_cover_the_operand_rank);
  RUN(broadcast_keeps_operand_dimension_sizes);
  RUN(reshape_keeps_the_element_count);
  RUN(transpose_needs_a_permutation);
  RUN(slice_stays_within_bounds);
  RUN(dynamic_slice_sizes_fit_the_operand);
  RUN(dynamic_slice_start_indices_are_scalars);
  RUN(dynamic_update_slice_update_fits);
  RUN(concatenate_operands_agree_off_the_axis);
  RUN(pad_value_is_a_scalar_of_the_operand_type);
  RUN(negative_padding_cannot_make_a_negative_dimension);
  RUN(absent_padding_window_and_dim_labels_are_refused);
  RUN(get_tuple_element_index_is_in_range);
  RUN(iota_dimension_is_in_range);
  RUN(reduce_dimensions_are_in_range);
  RUN(reducer_signature_matches_the_element_types);
  RUN(variadic_reduce_returns_a_tuple);
  RUN(reduce_window_window_matches_the_operand_rank);
  RUN(select_and_scatter_source_has_the_window_output_shape);
  RUN(scatter_built_in_c_with_a_dimension_inserted_and_batching_is_refused);
  RUN(huge_paddings_and_dilations_are_refused_without_overflow);
  RUN(dot_contracting_dimensions_agree);
  RUN(dot_accepts_the_declared_element_type_but_checks_dims);
  RUN(batch_dot_orders_batch_then_lhs_then_rhs_free_dims);
  RUN(convolution_input_features_match_the_kernel_times_groups);
  RUN(convolution_window_matches_the_kernel);
  RUN(gather_index_vector_matches_start_index_map);
  RUN(scatter_updates_match_the_indices);
  RUN(triangular_solve_b_matches_a);
  RUN(batch_norm_scale_has_the_feature_size);
  RUN(sort_comparator_returns_pred);
  RUN(while_body_keeps_the_loop_state_shape);
  RUN(call_arguments_match_the_parameters);
  RUN(conditional_branches_return_the_same_shape);
  RUN(declared_dimensions_stay_below_two_to_the_forty_and_counts_below_two_to_the_forty_eight);
  RUN(parameter_numbers_are_complete);
  RUN(verify_errors_carry_the_file_and_the_instruction_line);
  RUN(computations_in_any_order_are_sorted_callees_first);
  RUN(layouts_are_permutations_of_the_dimensions);
  RUN(infer_shape_may_write_over_the_declared_shape);
  RUN(every_opcode_has_a_shape_rule);
  RUN(infer_shape_computes_the_result_without_a_declared_one);
  return test_summary();
}
