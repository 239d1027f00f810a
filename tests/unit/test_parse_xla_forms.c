/* Forms found by checking axle against the .hlo files of XLA's repository
 * (docs/xla-check.md): a pred[] predicate on an array select, arithmetic
 * on pred, input_output_alias between leaves of equal byte size but other
 * dimensions, comma-separated metadata fields; and, from XLA's negative
 * parser tests, complex constants whose parts overflow their component,
 * operands written with a shape other than their own, unknown api_version,
 * control-predecessors naming no instruction of their computation, and
 * custom-call operand_layout_constraints that do not fit the operands; from
 * XLA's positive parser tests, the async sugar X-start/X-update/X-done. The modules here are
 * written for this test; the expected values are worked by hand. */
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

static bool fails_with(const char *text, const char *want) {
  Status st;
  Module *m = parse_module(text, strlen(text), "test.hlo", &st);
  if (m) {
    module_free(m);
    printf("  parsed, expected an error containing '%s'\n", want);
    return false;
  }
  bool ok = st.loc.line > 0 && strstr(st.message, want) != NULL;
  if (!ok) status_print(&st, stdout);
  return ok;
}

/* Evaluates m's entry on no arguments and returns its (array) result. */
static Literal *run(const Module *m) {
  Status st;
  Literal *out = m ? eval_module(m, NULL, 0, &st) : NULL;
  if (m && !out) status_print(&st, stdout);
  return out;
}

TEST(select_with_a_scalar_predicate_picks_whole_operands) {
  const char *text = "HloModule m\nENTRY e {\n"
                     "  a = s32[3] constant({1, 2, 3})  b = s32[3] constant({7, 8, 9})\n"
                     "  t = pred[] constant(true)  f = pred[] constant(false)\n"
                     "  x = s32[3] select(t, a, b)  y = s32[3] select(f, a, b)\n"
                     "  ROOT r = s32[6] concatenate(x, y), dimensions={0}\n}\n";
  Module *m = parse_ok(text);
  EXPECT(m != NULL, "pred[] with s32[3] operands parses");
  Literal *out = run(m);
  EXPECT(out != NULL, "runs");
  if (out) {
    static const int64_t want[6] = {1, 2, 3, 7, 8, 9};
    for (int i = 0; i < 6; i++)
      EXPECT(literal_get_s64(out, i) == want[i], "element %d is %lld", i, (long long)literal_get_s64(out, i));
    literal_free(out);
  }
  /* The predicate reaches select broadcast to the operands' dimensions. */
  const Instruction *x = m ? computation_find_instruction(m->entry, "x") : NULL;
  EXPECT(x && x->operands[0]->opcode == OP_BROADCAST && x->operands[0]->shape.rank == 1,
         "select's predicate is a pred[3] broadcast");
  module_free(m);
  EXPECT(fails_with("HloModule m\nENTRY e { p = pred[2] parameter(0)  a = f32[3] parameter(1)\n"
                    "  ROOT s = f32[3] select(p, a, a) }\n",
                    "same dimensions"),
         "a predicate of other dimensions is still refused");
}

TEST(multiply_maximum_minimum_on_pred_are_and_or_and) {
  Module *m = parse_ok("HloModule m\nENTRY e {\n"
                       "  a = pred[4] constant({false, false, true, true})\n"
                       "  b = pred[4] constant({false, true, false, true})\n"
                       "  mul = pred[4] multiply(a, b)  mx = pred[4] maximum(a, b)  mn = pred[4] minimum(a, b)\n"
                       "  ROOT r = pred[12] concatenate(mul, mx, mn), dimensions={0}\n}\n");
  Literal *out = run(m);
  EXPECT(out != NULL, "parses and runs");
  if (out) {
    static const int64_t want[12] = {0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1};
    for (int i = 0; i < 12; i++)
      EXPECT(literal_get_s64(out, i) == want[i], "element %d is %lld", i, (long long)literal_get_s64(out, i));
    literal_free(out);
  }
  module_free(m);
  EXPECT(fails_with("HloModule m\nENTRY e { a = pred[2] parameter(0)  ROOT d = pred[2] divide(a, a) }\n",
                    "does not take pred"),
         "divide on pred is still refused");
}

TEST(input_output_alias_needs_equal_byte_size_not_equal_dimensions) {
  Module *m = parse_ok("HloModule m, input_output_alias={ {}: (0, {}) }\n"
                       "ENTRY e { p = bf16[4,6] parameter(0)  n = bf16[4,6] negate(p)\n"
                       "  ROOT b = bf16[6,4] bitcast(n) }\n");
  EXPECT(m != NULL, "a bf16[6,4] result may take a bf16[4,6] parameter's buffer");
  module_free(m);
  EXPECT(fails_with("HloModule m, input_output_alias={ {}: (0, {}) }\n"
                    "ENTRY e { p = f32[4,6] parameter(0)  ROOT s = f32[4,5] slice(p), slice={[0:4], [0:5]} }\n",
                    "differ in size"),
         "a smaller result leaf is refused");
}

TEST(metadata_fields_may_be_separated_by_commas) {
  Module *m = parse_ok("HloModule m\nENTRY e {\n"
                       "  ROOT c = f32[] constant(-4.2), metadata={source_line=5, op_name=\"x/y\", op_type=\"::c\"}\n}\n");
  EXPECT(m != NULL, "parses");
  const Instruction *c = m ? m->entry->root : NULL;
  EXPECT(c && c->metadata && c->metadata->source_line == 5 && c->metadata->op_name &&
             strcmp(c->metadata->op_name, "x/y") == 0,
         "the fields on both sides of a comma are kept");
  module_free(m);
  EXPECT(fails_with("HloModule m\nENTRY e { ROOT c = f32[] constant(1), metadata={source_line=5,, op_type=\"a\"} }\n",
                    "metadata field name"),
         "two commas in a row are refused");
}

TEST(complex_constant_parts_must_fit_their_component_type) {
  EXPECT(fails_with("HloModule m\nENTRY e { ROOT c = c64[] constant((1e100, 0)) }\n", "out of range for f32"),
         "a real part past f32 is refused");
  EXPECT(fails_with("HloModule m\nENTRY e { ROOT c = c64[] constant((0, -1e39)) }\n", "out of range for f32"),
         "an imaginary part past f32 is refused");
  Module *m = parse_ok("HloModule m\nENTRY e { ROOT c = c64[2] constant({(1, -inf), (nan, 3e38)}) }\n");
  EXPECT(m != NULL, "written infinities, NaN and large finite parts are kept");
  module_free(m);
}

TEST(an_operand_written_with_a_shape_must_have_that_shape) {
  Module *m = parse_ok("HloModule m\nENTRY e { p = f32[2,2]{0,1} parameter(0)\n"
                       "  ROOT a = f32[2,2] add(f32[2,2]{1,0} p, f32[2,2] p) }\n");
  EXPECT(m != NULL, "the same shape in another layout is accepted");
  module_free(m);
  EXPECT(fails_with("HloModule m\nENTRY e { p = f32[2,2] parameter(0)  c = f32[2,2] constant({{1, 2}, {3, 4}})\n"
                    "  ROOT a = f32[2,2] add(f32[2,2] p, f32[2,5] c) }\n",
                    "written as f32[2,5], but 'c' is f32[2,2]"),
         "other dimensions are refused at the operand");
  EXPECT(fails_with("HloModule m\nENTRY e { p = f32[2] parameter(0)  ROOT a = f32[2] negate(s32[2] p) }\n",
                    "written as s32[2]"),
         "another element type is refused");
}

TEST(custom_call_api_version_is_one_xla_knows) {
  const char *head = "HloModule m\nENTRY e { c = f32[1] constant({1})\n"
                     "  ROOT r = f32[1] custom-call(c), custom_call_target=\"foo\", api_version=";
  char text[512];
  snprintf(text, sizeof text, "%sAPI_VERSION_STATUS_RETURNING }\n", head);
  Module *m = parse_ok(text);
  EXPECT(m != NULL, "a known version parses");
  module_free(m);
  snprintf(text, sizeof text, "%sAPI_VERSION_NO_SUCH }\n", head);
  EXPECT(fails_with(text, "unknown API version"), "an unknown version is refused");
  snprintf(text, sizeof text, "%sAPI_VERSION_UNSPECIFIED }\n", head);
  EXPECT(fails_with(text, "invalid API version"), "the placeholder is refused");
}

TEST(control_predecessors_name_instructions_of_the_same_computation) {
  Module *m = parse_ok("HloModule m\nENTRY e { a = f32[] parameter(0)\n"
                       "  b = f32[] negate(a)  ROOT c = f32[] abs(a), control-predecessors={b} }\n");
  EXPECT(m != NULL, "a defined predecessor parses");
  module_free(m);
  EXPECT(fails_with("HloModule m\nENTRY e { a = f32[] parameter(0)\n"
                    "  ROOT c = f32[] abs(a), control-predecessors={done} }\n",
                    "control predecessor 'done' is not defined"),
         "an undefined name is refused");
  EXPECT(fails_with("HloModule m\nf { x = f32[] parameter(0)  ROOT y = f32[] negate(x) }\n"
                    "ENTRY e { a = f32[] parameter(0)\n"
                    "  ROOT c = f32[] call(a), to_apply=f, control-predecessors={y} }\n",
                    "not defined"),
         "a name from another computation is refused");
}

TEST(operand_layout_constraints_give_each_operand_its_own_shape) {
  const char *head = "HloModule m\nENTRY e { a = f32[2,3] parameter(0)  b = s32[4] parameter(1)\n"
                     "  ROOT r = f32[1] custom-call(a, b), custom_call_target=\"t\", operand_layout_constraints=";
  char text[512];
  snprintf(text, sizeof text, "%s{f32[2,3]{0,1}, s32[4]{0}} }\n", head);
  Module *m = parse_ok(text);
  EXPECT(m != NULL, "one shape per operand, in any layout, parses");
  module_free(m);
  snprintf(text, sizeof text, "%s{f32[2,3]{0,1}} }\n", head);
  EXPECT(fails_with(text, "gives 1 shapes for 2 operands"), "too few shapes are refused");
  snprintf(text, sizeof text, "%s{f32[2,3]{0,1}, s32[5]{0}} }\n", head);
  EXPECT(fails_with(text, "shape 1 does not match operand 1"), "a shape other than the operand's is refused");
}

/* The instruction of m's entry named name, or NULL. */
static const Instruction *entry_instruction(const Module *m, const char *name) {
  for (int i = 0; m && i < m->entry->instruction_count; i++)
    if (strcmp(m->entry->instructions[i]->name, name) == 0) return m->entry->instructions[i];
  return NULL;
}

/* XLA's parser test AsyncOpsWithSyntaxSugar's form, in a module written
 * here: custom-call-start is an async-start whose computation holds the
 * custom-call (its attributes go to the custom-call, the async ones are
 * dropped); -update and -done are async-update and async-done. The module
 * loads; running it meets the custom-call, which axle refuses. */
TEST(custom_call_start_update_done_are_async_ops_around_one_custom_call) {
  const char *text =
      "HloModule m\nENTRY e {\n  x = f32[4] constant({1, 2, 3, 4})\n"
      "  s = ((f32[4]), f32[8], s32[]) custom-call-start(x), custom_call_target=\"bar\", "
      "async_execution_thread=\"side\"\n"
      "  u = ((f32[4]), f32[8], s32[]) custom-call-update(s), async_group_id=3, custom_call_target=\"bar\"\n"
      "  ROOT d = f32[8] custom-call-done(u)\n}\n";
  Module *m = parse_ok(text);
  EXPECT(m != NULL, "parses");
  const Instruction *s = entry_instruction(m, "s"), *u = entry_instruction(m, "u");
  EXPECT(s && s->opcode == OP_ASYNC_START && s->called_count == 1, "s is an async-start with one computation");
  EXPECT(u && u->opcode == OP_ASYNC_UPDATE, "u is an async-update");
  EXPECT(m && m->entry->root->opcode == OP_ASYNC_DONE, "the root is an async-done");
  if (s && s->opcode == OP_ASYNC_START && s->called_count == 1) {
    const Computation *c = s->called[0];
    const Instruction *root = c->root;
    EXPECT(c->parameter_count == 1 && c->parameters[0]->shape.rank == 1 && c->parameters[0]->shape.dims[0] == 4,
           "the computation takes the one f32[4] operand");
    EXPECT(root->opcode == OP_CUSTOM_CALL && root->attrs.custom_call_target &&
               strcmp(root->attrs.custom_call_target, "bar") == 0,
           "its root is the custom-call to bar");
    EXPECT(root->shape.type == TYPE_F32 && root->shape.rank == 1 && root->shape.dims[0] == 8,
           "the custom-call has element 1 of the start's shape");
    EXPECT(root->operand_count == 1 && root->operands[0] == c->parameters[0], "on the parameter");
  }
  Status st;
  Literal *out = m ? eval_module(m, NULL, 0, &st) : NULL;
  EXPECT(m && !out && strstr(st.message, "custom-call"), "running it refuses the custom-call");
  literal_free(out);
  module_free(m);
}

/* The sugar wraps any opcode; a lone operand may be written unwrapped in
 * the start's shape. negate({1, -2, 3}) = {-1, 2, -3}; add with {10, 20, 30}. */
TEST(async_sugar_of_negate_and_add_runs_the_wrapped_op) {
  const char *text =
      "HloModule m\nENTRY e {\n  x = f32[3] constant({1, -2, 3})\n  y = f32[3] constant({10, 20, 30})\n"
      "  n = (f32[3], f32[3], s32[]) negate-start(x)\n  nd = f32[3] negate-done(n)\n"
      "  a = ((f32[3], f32[3]), f32[3], s32[]) add-start(nd, y)\n"
      "  ROOT ad = f32[3] add-done(a)\n}\n";
  Module *m = parse_ok(text);
  EXPECT(m != NULL, "parses");
  Literal *out = run(m);
  EXPECT(out != NULL, "runs");
  static const double want[3] = {9, 22, 27};
  for (int i = 0; out && i < 3; i++)
    EXPECT(literal_get_f64(out, i) == want[i], "element %d is %g", i, literal_get_f64(out, i));
  literal_free(out);
  module_free(m);
}

TEST(async_sugar_start_needs_a_written_shape_of_operands_and_result) {
  EXPECT(fails_with("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  s = negate-start(x)\n"
                    "  ROOT d = f32[3] negate-done(s)\n}\n", "cannot be inferred"),
         "no shape");
  EXPECT(fails_with("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  s = f32[3] negate-start(x)\n"
                    "  ROOT d = f32[3] negate-done(s)\n}\n", "must be a tuple"),
         "not a tuple");
  EXPECT(fails_with("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n"
                    "  s = ((f32[3], f32[3]), f32[3], s32[]) negate-start(x)\n"
                    "  ROOT d = f32[3] negate-done(s)\n}\n", "must be a tuple"),
         "two operand shapes for one operand");
  EXPECT(fails_with("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n"
                    "  s = ((f32[3]), f32[3], s32[]) nothing-start(x)\n"
                    "  ROOT d = f32[3] negate-done(s)\n}\n", "unknown opcode"),
         "no such wrapped opcode");
}

/* JAX's LAPACK calls carry their options in backend_config, an attribute
 * dictionary printed bare ({uplo = 76 : ui8}): a custom-call keeps it as
 * written, prints it back the same way, and two calls that differ only in
 * it are different instructions (CSE must not merge a lower and an upper
 * solve). */
TEST(custom_call_backend_config_is_kept_printed_and_told_apart) {
  const char *text =
      "HloModule m\nENTRY e {\n  a = f32[2,2] parameter(0)\n  b = f32[2,1] parameter(1)\n"
      "  lo = f32[2,1] custom-call(a, b), custom_call_target=\"lapack_strsm_ffi\", "
      "backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}\n"
      "  up = f32[2,1] custom-call(a, b), custom_call_target=\"lapack_strsm_ffi\", "
      "backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}\n"
      "  q = f32[2,1] custom-call(a, b), custom_call_target=\"x\", backend_config=\"opaque\"\n"
      "  ROOT r = (f32[2,1], f32[2,1], f32[2,1]) tuple(lo, up, q)\n}\n";
  Module *m = parse_ok(text);
  EXPECT(m != NULL, "parses");
  if (!m) return;
  const Instruction *lo = entry_instruction(m, "lo"), *up = entry_instruction(m, "up"), *q = entry_instruction(m, "q");
  EXPECT(lo && up && q, "the three calls are there");
  if (!lo || !up || !q) return;
  EXPECT(lo->attrs.backend_config &&
             !strcmp(lo->attrs.backend_config, "{diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}"),
         "kept as written: %s", lo->attrs.backend_config ? lo->attrs.backend_config : "(null)");
  EXPECT(q->attrs.backend_config && !strcmp(q->attrs.backend_config, "opaque"), "a string is kept without its quotes");
  EXPECT(!attrs_equal(&lo->attrs, &up->attrs), "calls differing only in backend_config are not equal");
  StrBuf sb = {0};
  print_module(&sb, m);
  EXPECT(sb.data && strstr(sb.data, "backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}") &&
             strstr(sb.data, "backend_config=\"opaque\""),
         "printed back as XLA prints it:\n%s", sb.data ? sb.data : "");
  Module *again = sb.data ? parse_ok(sb.data) : NULL;
  EXPECT(again != NULL, "the printed module parses");
  module_free(again);
  strbuf_free(&sb);
  module_free(m);
}

/* f32[?]: XLA's unbounded dynamic dimension (kUnboundedSize). It loads,
 * prints back as ?, and flows through elementwise ops, parameters,
 * tuples and custom-calls (XLA's hlo_to_mhlo tests write these); other ops
 * are refused at load, located; compiling is refused at the instruction. */
TEST(unbounded_dynamic_dimensions_load_print_back_and_are_refused_when_compiled) {
  const char *text = "HloModule m\n\nENTRY e {\n  p = f32[?,4] parameter(0)\n  q = s64[3] parameter(1)\n"
                     "  a = f32[?,4] abs(p)\n  s = f32[?,4] add(a, p)\n"
                     "  c = f32[2,?,4] custom-call(s, q), custom_call_target=\"mhlo.dynamic_broadcast_in_dim\"\n"
                     "  ROOT t = (f32[?,4], f32[2,?,4]) tuple(s, c)\n}\n";
  Module *m = parse_ok(text);
  EXPECT(m != NULL, "parses and verifies");
  StrBuf sb = {0};
  if (m) print_module(&sb, m);
  EXPECT(sb.data && strstr(sb.data, "a = f32[?,4]{1,0} abs(p)") && strstr(sb.data, "f32[2,?,4]{2,1,0} custom-call("),
         "prints ? back:\n%s", sb.data ? sb.data : "");
  Module *again = sb.data ? parse_ok(sb.data) : NULL;
  StrBuf sb2 = {0};
  if (again) print_module(&sb2, again);
  EXPECT(again && sb2.data && strcmp(sb.data, sb2.data) == 0, "parse, print, parse, print gives the same text");
  strbuf_free(&sb2);
  module_free(again);
  strbuf_free(&sb);
  Status st;
  status_clear(&st);
  EXPECT(m && !eval_check_supported(m, &st) && st.code == STATUS_UNSUPPORTED && st.loc.line == 4 &&
             strstr(st.message, "dynamic dimensions (f32[?,4]) are not supported"),
         "compiling is refused at the parameter: %s", st.message);
  module_free(m);
  EXPECT(fails_with("HloModule m\nENTRY e {\n  p = f32[?] parameter(0)\n"
                    "  ROOT r = f32[?,2] broadcast(p), dimensions={0}\n}\n",
                    "unbounded dynamic dimensions are not supported"),
         "an op outside the elementwise ones is refused at load");
  EXPECT(fails_with("HloModule m\nENTRY e {\n  ROOT c = f32[?] constant({1, 2})\n}\n", "unbounded"),
         "a constant has no unbounded dimension");
  EXPECT(fails_with("HloModule m\nENTRY e {\n  p = f32[?] parameter(0)  q = f32[3] parameter(1)\n"
                    "  ROOT r = f32[3] add(p, q)\n}\n",
                    "unbounded dynamic dimensions are not supported"),
         "? against a static size is refused at load (XLA would take it as 3)");
}

int main(void) {
  RUN(select_with_a_scalar_predicate_picks_whole_operands);
  RUN(multiply_maximum_minimum_on_pred_are_and_or_and);
  RUN(input_output_alias_needs_equal_byte_size_not_equal_dimensions);
  RUN(metadata_fields_may_be_separated_by_commas);
  RUN(complex_constant_parts_must_fit_their_component_type);
  RUN(an_operand_written_with_a_shape_must_have_that_shape);
  RUN(custom_call_api_version_is_one_xla_knows);
  RUN(control_predecessors_name_instructions_of_the_same_computation);
  RUN(operand_layout_constraints_give_each_operand_its_own_shape);
  RUN(custom_call_backend_config_is_kept_printed_and_told_apart);
  RUN(custom_call_start_update_done_are_async_ops_around_one_custom_call);
  RUN(async_sugar_of_negate_and_add_runs_the_wrapped_op);
  RUN(async_sugar_start_needs_a_written_shape_of_operands_and_result);
  RUN(unbounded_dynamic_dimensions_load_print_back_and_are_refused_when_compiled);
  return test_summary();
}
