/* The forms of HLO text XLA accepts beyond the fully written one: shapes
 * left out, instructions nested as operands, modules without a header,
 * order= on compare, type-changing bitcasts, elided constants (a parse
 * option), module attributes checked by name, signatures checked against
 * their roots. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "../test.h"

static Module *parse_ok(const char *text) {
  Status st;
  Module *m = parse_module(text, strlen(text), "test.hlo", &st);
  if (!m) status_print(&st, stdout);
  return m;
}

/* Whether text fails with a located error whose message contains want. */
static bool fails_with(const char *text, const ParseOptions *options, const char *want) {
  Status st;
  Module *m = parse_module_with(text, strlen(text), "test.hlo", options, &st);
  if (m) {
    module_free(m);
    printf("  parsed, expected an error containing '%s'\n", want);
    return false;
  }
  bool ok = st.loc.line > 0 && strstr(st.message, want) != NULL;
  if (!ok) {
    printf("  expected a located error containing '%s', got:\n  ", want);
    status_print(&st, stdout);
  }
  return ok;
}

static Instruction *find(const Module *m, const char *name) {
  return computation_find_instruction(m->entry, name);
}

static bool shape_is(const Instruction *inst, const char *want) {
  StrBuf sb = {0};
  shape_print(&sb, &inst->shape, false);
  bool same = sb.data && strcmp(sb.data, want) == 0;
  if (!same) printf("  %s has shape %s, expected %s\n", inst->name, sb.data ? sb.data : "?", want);
  strbuf_free(&sb);
  return same;
}

TEST(left_out_shapes_are_inferred_from_operands_and_callees) {
  Module *m = parse_ok("HloModule m\n"
                       "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = add(a, b) }\n"
                       "ENTRY e { x = f32[2,3] parameter(0)  y = s32[3,4] parameter(1)\n"
                       "  c = convert(y)\n"
                       "}\n");
  EXPECT(m == NULL, "convert without a shape is refused");
  module_free(m);
  m = parse_ok("HloModule m\n"
               "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = add(a, b) }\n"
               "ENTRY e { x = f32[2,3] parameter(0)  y = f32[3,4] parameter(1)\n"
               "  d = dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
               "  z = f32[] constant(0)  r = reduce(d, z), dimensions={0}, to_apply=add\n"
               "  k = call(r), to_apply=neg  lt = compare(d, d), direction=LT\n"
               "  ROOT t = tuple(d, r, k, lt) }\n"
               "neg { v = f32[4] parameter(0)  ROOT n = negate(v) }\n");
  EXPECT(m != NULL, "parses");
  if (!m) return;
  EXPECT(shape_is(find(m, "d"), "f32[2,4]"), "dot's shape from its dimension numbers");
  EXPECT(shape_is(find(m, "r"), "f32[4]"), "reduce's shape");
  EXPECT(shape_is(find(m, "k"), "f32[4]"), "call's shape from a callee written after it");
  EXPECT(shape_is(find(m, "lt"), "pred[2,4]"), "compare gives pred");
  EXPECT(shape_is(m->entry->root, "(f32[2,4], f32[4], f32[4], pred[2,4])"), "tuple");
  module_free(m);
}

TEST(nested_instructions_get_names_that_avoid_every_written_name) {
  /* "add.anon" is taken by a written instruction, later in the text. */
  Module *m = parse_ok("HloModule m\nENTRY e {\n"
                       "  ROOT r = tuple(add(f32[2] parameter(0), f32[2] parameter(1)), add.anon)\n"
                       "  add.anon = f32[2] constant({1, 2})\n}\n");
  EXPECT(m != NULL, "parses");
  if (!m) return;
  Instruction *r = m->entry->root;
  EXPECT(r->operand_count == 2 && strcmp(r->operands[0]->name, "add.anon.1") == 0,
         "the nested add is add.anon.1, got %s", r->operand_count ? r->operands[0]->name : "-");
  EXPECT(strcmp(r->operands[1]->name, "add.anon") == 0, "the written add.anon keeps its name");
  Instruction *add = r->operands[0];
  EXPECT(add->operand_count == 2 && strcmp(add->operands[0]->name, "parameter.anon") == 0 &&
         strcmp(add->operands[1]->name, "parameter.anon.1") == 0, "nested parameters are named in text order");
  EXPECT(m->entry->parameter_count == 2, "nested parameters are the computation's parameters");
  EXPECT(m->entry->instructions[m->entry->instruction_count - 1] == r, "the root stays last");
  module_free(m);
}

TEST(nested_instruction_may_carry_attributes_of_its_own) {
  Module *m = parse_ok("HloModule m\nENTRY e { a = f32[3] parameter(0)  m = f32[2,3] parameter(1)\n"
                       "  ROOT r = add(m, f32[2,3] broadcast(a), dimensions={1}) }\n");
  EXPECT(m != NULL, "parses");
  if (!m) return;
  Instruction *b = m->entry->root->operands[1];
  EXPECT(b->opcode == OP_BROADCAST && b->attrs.dimensions.count == 1 && b->attrs.dimensions.values[0] == 1,
         "dimensions= belongs to the nested broadcast");
  module_free(m);
}

TEST(module_without_header_is_named_after_its_entry) {
  Module *m = parse_ok("f { p = f32[] parameter(0)  ROOT n = negate(p) }\n"
                       "g { q = f32[] parameter(0)  ROOT c = call(q), to_apply=f }\n");
  EXPECT(m != NULL, "parses");
  if (!m) return;
  EXPECT(strcmp(m->entry->name, "g") == 0, "without ENTRY the last computation is the entry");
  EXPECT(strcmp(m->name, "module_g") == 0, "named module_<entry>, got %s", m->name);
  module_free(m);
  m = parse_ok("ENTRY main { ROOT c = f32[] constant(1) }\nother { ROOT d = f32[] constant(2) }\n");
  EXPECT(m && strcmp(m->name, "module_main") == 0, "ENTRY wins over the last computation");
  module_free(m);
}

TEST(compare_order_total_is_totalorder_and_partial_is_the_default) {
  Module *m = parse_ok("HloModule m\nENTRY e { x = f32[2] parameter(0)\n"
                       "  t = pred[2] compare(x, x), direction=LT, order=TOTAL\n"
                       "  p = pred[2] compare(x, x), direction=LT, order=PARTIAL\n"
                       "  ROOT r = tuple(t, p) }\n");
  EXPECT(m != NULL, "parses");
  if (!m) return;
  EXPECT(find(m, "t")->attrs.compare_type == CMP_TYPE_TOTALORDER, "TOTAL");
  EXPECT(find(m, "p")->attrs.compare_type == CMP_TYPE_DEFAULT, "PARTIAL");
  module_free(m);
  EXPECT(fails_with("HloModule m\nENTRY e { x = f32[2] parameter(0)\n"
                    "  ROOT t = pred[2] compare(x, x), direction=LT, type=TOTALORDER, order=PARTIAL }\n",
                    NULL, "order=PARTIAL contradicts"),
         "PARTIAL with type=TOTALORDER is a contradiction");
}

TEST(bitcast_may_change_the_element_type_at_equal_byte_count) {
  static const char text[] = "HloModule m\nENTRY e { x = f32[] parameter(0)  ROOT i = s32[] bitcast(x) }\n";
  Module *m = parse_ok(text);
  EXPECT(m != NULL, "parses");
  if (!m) return;
  Literal *x = literal_create(&m->entry->parameters[0]->shape);
  literal_set_f64(x, 0, 1.0);
  Status st;
  Literal *out = eval_module(m, &x, 1, &st);
  EXPECT(out && literal_get_s64(out, 0) == 0x3f800000, "1.0f reads as 0x3f800000");
  literal_free(out);
  literal_free(x);
  module_free(m);
}

TEST(elided_constants_are_refused_unless_the_options_fill_them) {
  static const char text[] = "HloModule m\nENTRY e { a = f32[4] constant({...})\n"
                             "  b = s32[3] constant({...})  ROOT t = tuple(a, b) }\n";
  EXPECT(fails_with(text, NULL, "printed elided ({...}) and cannot be read"), "refused by default");
  ParseOptions fill = {.fill_elided_constants = true, .elided_seed = 7};
  Status st;
  Module *m1 = parse_module_with(text, strlen(text), "t.hlo", &fill, &st);
  Module *m2 = parse_module_with(text, strlen(text), "t.hlo", &fill, &st);
  fill.elided_seed = 8;
  Module *m3 = parse_module_with(text, strlen(text), "t.hlo", &fill, &st);
  EXPECT(m1 && m2 && m3, "parses with the option");
  if (m1 && m2 && m3) {
    EXPECT(m1->elided_constant_count == 2, "counts 2 elided constants, got %d", m1->elided_constant_count);
    const Literal *a1 = find(m1, "a")->attrs.literal, *a2 = find(m2, "a")->attrs.literal;
    const Literal *a3 = find(m3, "a")->attrs.literal, *b1 = find(m1, "b")->attrs.literal;
    EXPECT(literal_equal(a1, a2), "the same seed gives the same values");
    EXPECT(!literal_equal(a1, a3), "another seed gives other values");
    bool in_range = true, ints_small = true;
    for (int i = 0; i < 4; i++) in_range = in_range && fabs(literal_get_f64(a1, i)) <= 1;
    for (int i = 0; i < 3; i++) ints_small = ints_small && llabs(literal_get_s64(b1, i)) <= 8;
    EXPECT(in_range && ints_small, "floats in [-1, 1), small integers");
  }
  module_free(m1);
  module_free(m2);
  module_free(m3);
}

TEST(module_attributes_are_known_by_name_and_checked_for_form) {
  Module *m;
  m = parse_ok("HloModule m, is_scheduled=true, replica_count=1, num_partitions=1,"
               " input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (0, {}) },"
               " alias_passthrough_params=true, entry_computation_layout={(f32[2]{0})->f32[2]{0}},"
               " frontend_attributes={a=\"b\"}, allow_spmd_sharding_propagation_to_parameters={true},"
               " allow_spmd_sharding_propagation_to_output={false}\n"
               "ENTRY e { p = f32[2] parameter(0)  ROOT n = f32[2] negate(p) }\n");
  EXPECT(m != NULL, "every module attribute of XLA's list is accepted");
  module_free(m);
  EXPECT(fails_with("HloModule m, entry_computation_layout={(f32[2]{0})}\nENTRY e { ROOT c = f32[] constant(1) }\n",
                    NULL, "expected '->'"), "a malformed layout is refused");
  EXPECT(fails_with("HloModule m, spmd_mode=1\nENTRY e { ROOT c = f32[] constant(1) }\n", NULL,
                    "unknown module attribute 'spmd_mode'"), "an unknown one is refused by name");
}

TEST(nan_payloads_are_kept_bit_for_bit) {
  Module *m = parse_ok("HloModule m\nENTRY e { ROOT c = bf16[2] constant({-nan(0x7f), nan(0x1)}) }\n");
  EXPECT(m != NULL, "parses");
  if (!m) return;
  uint16_t bits[2];
  memcpy(bits, m->entry->root->attrs.literal->data, sizeof bits);
  EXPECT(bits[0] == 0xffff && bits[1] == 0x7f81, "bits 0x%04x 0x%04x", bits[0], bits[1]);
  StrBuf sb = {0};
  print_instruction(&sb, m->entry->root);
  EXPECT(sb.data && strstr(sb.data, "{-nan(0x7f), nan(0x1)}"), "printed back: %s", sb.data ? sb.data : "");
  strbuf_free(&sb);
  module_free(m);
}

int main(void) {
  RUN(left_out_shapes_are_inferred_from_operands_and_callees);
  RUN(nested_instructions_get_names_that_avoid_every_written_name);
  RUN(nested_instruction_may_carry_attributes_of_its_own);
  RUN(module_without_header_is_named_after_its_entry);
  RUN(compare_order_total_is_totalorder_and_partial_is_the_default);
  RUN(bitcast_may_change_the_element_type_at_equal_byte_count);
  RUN(elided_constants_are_refused_unless_the_options_fill_them);
  RUN(module_attributes_are_known_by_name_and_checked_for_form);
  RUN(nan_payloads_are_kept_bit_for_bit);
  return test_summary();
}
