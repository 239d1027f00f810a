/* The editing core (src/ir/edit.c, edit_clone.c, edit_compare.c): each test
 * parses a small module, edits it, and checks the structure it expects; then
 * the module must still verify (use lists included), print, and parse back
 * to the same text. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "../test.h"

static Module *parse_text(const char *text) {
  Status st;
  Module *m = parse_module(text, strlen(text), "inline", &st);
  if (!m) printf("  parse failed: %s\n", st.message);
  return m;
}

/* Verifies, prints, re-parses and re-prints; the two texts must agree. */
static bool module_survives_round_trip(Module *m) {
  Status st;
  status_clear(&st);
  if (!verify_module(m, &st)) {
    printf("  verify failed: %s\n", st.message);
    return false;
  }
  StrBuf first = {0}, second = {0};
  print_module(&first, m);
  Module *again = parse_module(first.data, first.len, "printed", &st);
  if (again) print_module(&second, again);
  bool same = again && strcmp(first.data, second.data) == 0;
  if (!again) printf("  printed text does not parse: %s\n%s", st.message, first.data);
  else if (!same) printf("  printed twice differently:\n%s\n---\n%s", first.data, second.data);
  module_free(again);
  strbuf_free(&first);
  strbuf_free(&second);
  return same;
}

static Instruction *named(const Module *m, const char *name) {
  for (int c = 0; c < m->computation_count; c++) {
    Instruction *inst = computation_find_instruction(m->computations[c], name);
    if (inst) return inst;
  }
  return NULL;
}

static bool lists_user(const Instruction *operand, const Instruction *user) {
  for (int u = 0; u < operand->user_count; u++)
    if (operand->users[u] == user) return true;
  return false;
}

static const char *const SQUARE_PLUS =
    "HloModule sq\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  sq = f32[4] multiply(x, x)\n"
    "  one = f32[] constant(1)\n"
    "  ones = f32[4] broadcast(one), dimensions={}\n"
    "  ROOT r = f32[4] add(sq, ones)\n"
    "}\n";

TEST(an_operand_read_twice_lists_its_user_once) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Instruction *x = named(m, "x"), *sq = named(m, "sq"), *r = named(m, "r");
  EXPECT(x->user_count == 1 && x->users[0] == sq, "x has %d users", x->user_count);
  EXPECT(sq->user_count == 1 && sq->users[0] == r, "sq has %d users", sq->user_count);
  EXPECT(r->user_count == 0, "the root has %d users", r->user_count);
  module_free(m);
}

TEST(set_operand_moves_the_user_between_use_lists) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Instruction *x = named(m, "x"), *sq = named(m, "sq"), *ones = named(m, "ones");
  instruction_set_operand(sq, 1, ones);
  EXPECT(lists_user(x, sq) && x->user_count == 1, "x still read once by sq");
  EXPECT(lists_user(ones, sq) && ones->user_count == 2, "ones now read by sq and r: %d", ones->user_count);
  instruction_set_operand(sq, 0, ones);
  EXPECT(x->user_count == 0, "x no longer read, has %d users", x->user_count);
  EXPECT(ones->user_count == 2, "sq listed once on ones though it reads it twice: %d", ones->user_count);
  Status st;
  status_clear(&st);
  EXPECT(computation_sort(m->entry, &st), "sort: %s", st.message);   /* ones came after sq */
  EXPECT(module_survives_round_trip(m), "see above");
  module_free(m);
}

TEST(replace_all_uses_redirects_users_and_the_root) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Computation *e = m->entry;
  Instruction *x = named(m, "x"), *sq = named(m, "sq"), *r = named(m, "r");
  /* r = add(sq, ones) -> neg(r) becomes the root, reading r itself */
  Instruction *neg = computation_add_instruction(e, OP_NEGATE, &r, 1, NULL, 0, NULL, &r->shape, NULL);
  instruction_replace_all_uses(r, neg);
  EXPECT(e->root == neg, "root is %s", e->root->name);
  EXPECT(neg->operands[0] == r && lists_user(r, neg), "the replacement keeps reading the old value");
  instruction_replace_all_uses(sq, x);
  EXPECT(r->operands[0] == x && sq->user_count == 0 && lists_user(x, r), "r reads x");
  EXPECT(x->user_count == 2, "x read by sq and r: %d", x->user_count);
  computation_remove_instruction(e, sq);
  EXPECT(x->user_count == 1 && x->users[0] == r, "the removed sq left x's users");
  EXPECT(module_survives_round_trip(m), "see above");
  module_free(m);
}

/* The constant's literal belongs to the module: removing the constant leaks
 * nothing (make check runs this under ASan). */
TEST(removing_a_constant_keeps_indices_dense_and_leaks_nothing) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Computation *e = m->entry;
  Instruction *ones = named(m, "ones"), *one = named(m, "one"), *r = named(m, "r");
  Instruction *two = computation_add_instruction(e, OP_CONSTANT, NULL, 0, NULL, 0,
                                                 &(Attrs){.literal = literal_create(&one->shape)}, &one->shape,
                                                 "two");
  computation_move_before(e, two, ones);
  instruction_set_operand(ones, 0, two);
  computation_remove_instruction(e, one);
  for (int i = 0; i < e->instruction_count; i++)
    EXPECT(e->instructions[i]->index == i, "index %d at position %d", e->instructions[i]->index, i);
  EXPECT(r->operands[1] == ones && ones->operands[0] == two, "graph rewired");
  EXPECT(module_survives_round_trip(m), "see above");
  module_free(m);
}

TEST(move_before_keeps_positions_and_indices_in_step) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Computation *e = m->entry;
  Instruction *x = named(m, "x"), *sq = named(m, "sq"), *one = named(m, "one"), *r = named(m, "r");
  computation_move_before(e, one, x);   /* backwards */
  EXPECT(e->instructions[0] == one && e->instructions[1] == x && e->instructions[2] == sq, "one first");
  computation_move_before(e, one, r);   /* forwards */
  EXPECT(e->instructions[2] == named(m, "ones") && e->instructions[3] == one && e->instructions[4] == r,
         "one just before r");
  for (int i = 0; i < e->instruction_count; i++)
    EXPECT(e->instructions[i]->index == i, "index %d at position %d", e->instructions[i]->index, i);
  /* one now comes after its user ones: only a sort makes it legal again. */
  Status st;
  status_clear(&st);
  EXPECT(!verify_module(m, &st), "an operand after its user was accepted");
  EXPECT(computation_sort(e, &st), "sort: %s", st.message);
  EXPECT(one->index < named(m, "ones")->index, "sorted");
  EXPECT(module_survives_round_trip(m), "see above");
  module_free(m);
}

TEST(sort_keeps_a_legal_order_and_moves_only_what_it_must) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Computation *e = m->entry;
  const char *before[5];
  for (int i = 0; i < 5; i++) before[i] = e->instructions[i]->name;
  Status st;
  status_clear(&st);
  EXPECT(computation_sort(e, &st), "sort: %s", st.message);
  for (int i = 0; i < 5; i++) EXPECT(strcmp(e->instructions[i]->name, before[i]) == 0, "moved %s", before[i]);
  /* a new instruction appended at the end but read early */
  Instruction *x = named(m, "x"), *sq = named(m, "sq");
  Instruction *ab = computation_add_instruction(e, OP_ABS, &x, 1, NULL, 0, NULL, &x->shape, NULL);
  instruction_set_operand(sq, 1, ab);
  EXPECT(computation_sort(e, &st), "sort: %s", st.message);
  EXPECT(ab->index == 1 && sq->index == 2 && e->instructions[0] == x, "abs moved just before sq: at %d", ab->index);
  EXPECT(module_survives_round_trip(m), "see above");
  module_free(m);
}

TEST(sort_names_an_instruction_on_a_cycle) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Instruction *sq = named(m, "sq"), *r = named(m, "r");
  instruction_set_operand(sq, 0, r);
  Status st;
  status_clear(&st);
  EXPECT(!computation_sort(m->entry, &st) && strstr(st.message, "cycle") && strstr(st.message, "'sq'"),
         "got: %s", st.message);
  instruction_set_operand(sq, 0, named(m, "x"));
  module_free(m);
}

TEST(unique_names_avoid_parsed_names) {
  Module *m = parse_text("HloModule u\n"
                         "ENTRY main {\n"
                         "  add = f32[] parameter(0)\n"
                         "  add.1 = f32[] add(add, add)\n"
                         "  ROOT add.2 = f32[] add(add.1, add)\n"
                         "}\n");
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  const char *a = module_unique_name(m, "add");
  const char *b = module_unique_name(m, "add.1");
  const char *c = module_unique_name(m, "main");
  const char *d = module_unique_name(m, "fresh");
  EXPECT(strcmp(a, "add.3") == 0, "got %s", a);
  EXPECT(strcmp(b, "add.4") == 0, "a numbered base restarts from its stem: got %s", b);
  EXPECT(strcmp(c, "main.1") == 0, "computation names are taken too: got %s", c);
  EXPECT(strcmp(d, "fresh") == 0, "a free base is itself: got %s", d);
  Instruction *p = named(m, "add");
  Instruction *made = computation_add_instruction(m->entry, OP_ADD, (Instruction *[]){p, p}, 2, NULL, 0, NULL,
                                                  &p->shape, NULL);
  EXPECT(strcmp(made->name, "add.5") == 0, "got %s", made->name);
  EXPECT(module_survives_round_trip(m), "see above");
  module_free(m);
}

/* XLA names instructions uniquely module-wide; text that reuses a name in
 * another computation is read with the later one renamed, the entry's first. */
TEST(parser_renames_names_repeated_across_computations_keeping_the_entry) {
  Module *m = parse_text("HloModule dup\n"
                         "sum {\n"
                         "  a = f32[] parameter(0)\n"
                         "  b = f32[] parameter(1)\n"
                         "  ROOT r = f32[] add(a, b)\n"
                         "}\n"
                         "ENTRY main {\n"
                         "  a = f32[4] parameter(0)\n"
                         "  z = f32[] constant(0)\n"
                         "  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=sum\n"
                         "}\n");
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Computation *sum = module_find_computation(m, "sum");
  EXPECT(computation_find_instruction(m->entry, "a") && computation_find_instruction(m->entry, "r"),
         "the entry keeps its names");
  EXPECT(computation_find_instruction(sum, "a.1") && computation_find_instruction(sum, "r.1") &&
             computation_find_instruction(sum, "b"),
         "the reducer's repeated names are renamed");
  EXPECT(module_survives_round_trip(m), "see above");
  module_free(m);
}

TEST(verifier_refuses_a_name_used_twice_in_the_module) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  named(m, "ones")->name = "sq";
  Status st;
  status_clear(&st);
  EXPECT(!verify_module(m, &st) && strstr(st.message, "'sq'") && strstr(st.message, "twice"), "got: %s",
         st.message);
  module_free(m);
}

TEST(verifier_refuses_a_stale_use_list) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Instruction *r = named(m, "r");
  r->operands[0] = named(m, "ones");   /* behind the editing core's back */
  Status st;
  status_clear(&st);
  EXPECT(!verify_module(m, &st) && strstr(st.message, "'sq'") && strstr(st.message, "user"), "got: %s",
         st.message);
  r->operands[0] = named(m, "sq");
  module_free(m);
}

static const char *const CALLS =
    "HloModule calls\n"
    "f {\n"
    "  p0 = f32[] parameter(0)\n"
    "  p1 = f32[] parameter(1)\n"
    "  p2 = f32[] parameter(2)\n"
    "  ROOT m = f32[] multiply(p0, p2)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT c = f32[] call(x, y, x), to_apply=f\n"
    "}\n";

TEST(removing_a_parameter_renumbers_the_later_ones) {
  Module *m = parse_text(CALLS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Computation *f = module_find_computation(m, "f");
  Instruction *p2 = named(m, "p2");
  computation_remove_parameter(f, 1);
  EXPECT(f->parameter_count == 2 && f->parameters[1] == p2 && p2->attrs.parameter_number == 1,
         "p2 is now parameter 1");
  Instruction *p3 = builder_add_parameter(f, &p2->shape, "p3");
  EXPECT(f->parameter_count == 3 && f->parameters[2] == p3, "a new parameter takes the freed number 2");
  computation_remove_parameter(f, 2);
  /* the caller drops its operand 1 */
  Instruction *c = named(m, "c");
  Instruction *x = named(m, "x");
  Instruction *call = computation_add_instruction(m->entry, OP_CALL, (Instruction *[]){x, x}, 2, &f, 1, NULL,
                                                  &c->shape, "c");
  instruction_replace_all_uses(c, call);
  computation_remove_instruction(m->entry, c);
  EXPECT(named(m, "y")->user_count == 0, "y unused");
  EXPECT(module_survives_round_trip(m), "see above");
  module_free(m);
}

TEST(cloned_instruction_copies_everything_but_operands_and_name) {
  Module *m = parse_text("HloModule cl\n"
                         "ENTRY main {\n"
                         "  x = f32[2,3]{0,1} parameter(0)\n"
                         "  c = f32[3] constant({1, 2, 3})\n"
                         "  s = f32[2,2] slice(x), slice={[0:2], [1:3]}\n"
                         "  ROOT t = (f32[2,2], f32[3]) tuple(s, c)\n"
                         "}\n");
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Instruction *x = named(m, "x"), *s = named(m, "s"), *c = named(m, "c");
  Instruction *s2 = instruction_clone(m->entry, s, &x, NULL);
  Instruction *c2 = instruction_clone(m->entry, c, NULL, NULL);
  EXPECT(strcmp(s2->name, "s.1") == 0 && strcmp(c2->name, "c.1") == 0, "names %s %s", s2->name, c2->name);
  EXPECT(instruction_identical(s, s2), "a clone with the same operands is identical");
  EXPECT(s2->attrs.slice != s->attrs.slice && attrs_equal(&s->attrs, &s2->attrs), "slice copied by value");
  EXPECT(c2->attrs.literal != c->attrs.literal && literal_equal(c->attrs.literal, c2->attrs.literal),
         "literal cloned, not shared");
  EXPECT(lists_user(x, s2) && x->user_count == 2, "x read by s and its clone");
  module_free(m);
}

TEST(cloned_computation_and_module_are_independent_deep_copies) {
  Module *m = parse_text(CALLS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Computation *f = module_find_computation(m, "f");
  Computation *g = computation_clone(m, f, NULL);
  EXPECT(strcmp(g->name, "f.1") == 0 && g->instruction_count == f->instruction_count, "clone %s", g->name);
  EXPECT(g->root != f->root && g->root->parent == g && g->root->operands[0] == g->parameters[0],
         "root rewired to the clone's parameters");
  instruction_replace_all_uses(named(m, "c"), named(m, "c"));   /* no-op */
  Instruction *c = named(m, "c");
  c->called[0] = g;   /* call the clone; f is now unused */
  module_remove_computation(m, f);
  EXPECT(module_survives_round_trip(m), "see above");
  Module *copy = module_clone(m);
  EXPECT(copy->computation_count == m->computation_count && copy->entry != m->entry, "deep");
  EXPECT(copy->entry->root->called[0] == copy->computations[0], "calls remapped to the copy");
  StrBuf a = {0}, b = {0};
  print_module(&a, m);
  print_module(&b, copy);
  EXPECT(strcmp(a.data, b.data) == 0, "the copy prints the same:\n%s\n---\n%s", a.data, b.data);
  module_free(m);   /* the copy must not need the original */
  EXPECT(module_survives_round_trip(copy), "see above");
  strbuf_free(&a);
  strbuf_free(&b);
  module_free(copy);
}

TEST(module_clone_keeps_names_shared_by_a_computation_and_an_instruction) {
  Module *m = parse_text("HloModule same\n"
                         "add {\n"
                         "  a = f32[] parameter(0)\n"
                         "  b = f32[] parameter(1)\n"
                         "  ROOT s = f32[] add(a, b)\n"
                         "}\n"
                         "ENTRY main {\n"
                         "  p = f32[4] parameter(0)\n"
                         "  z = f32[] constant(0)\n"
                         "  add = f32[] reduce(p, z), dimensions={0}, to_apply=add\n"
                         "  ROOT main = f32[] negate(add)\n"
                         "}\n");
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Module *copy = module_clone(m);
  StrBuf a = {0}, b = {0};
  print_module(&a, m);
  print_module(&b, copy);
  EXPECT(strcmp(a.data, b.data) == 0, "the copy prints the same:\n%s\n---\n%s", a.data, b.data);
  const char *fresh = module_unique_name(copy, "add");
  EXPECT(strcmp(fresh, "add") != 0 && strcmp(fresh, "main") != 0, "the copy's names are taken: got %s", fresh);
  EXPECT(module_survives_round_trip(copy), "see above");
  strbuf_free(&a);
  strbuf_free(&b);
  module_free(copy);
  module_free(m);
}

TEST(attrs_equal_and_hash_see_every_group) {
  Module *m = parse_text("HloModule at\n"
                         "ENTRY main {\n"
                         "  x = f32[8] parameter(0)\n"
                         "  a = f32[4] slice(x), slice={[0:4]}\n"
                         "  b = f32[4] slice(x), slice={[0:4]}\n"
                         "  c = f32[4] slice(x), slice={[4:8]}\n"
                         "  k1 = f32[] constant(1)\n"
                         "  k2 = f32[] constant(1)\n"
                         "  k3 = f32[] constant(-0)\n"
                         "  k4 = f32[] constant(0)\n"
                         "  ROOT t = (f32[4], f32[4], f32[4], f32[], f32[], f32[], f32[]) tuple(a, b, c, k1, k2, k3, k4)\n"
                         "}\n");
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Instruction *a = named(m, "a"), *b = named(m, "b"), *c = named(m, "c");
  EXPECT(attrs_equal(&a->attrs, &b->attrs) && attrs_hash(&a->attrs) == attrs_hash(&b->attrs), "a and b");
  EXPECT(instruction_identical(a, b), "a and b are identical");
  EXPECT(!attrs_equal(&a->attrs, &c->attrs) && !instruction_identical(a, c), "different slices");
  EXPECT(attrs_hash(&a->attrs) != attrs_hash(&c->attrs), "different slices hash apart (not required, expected)");
  Instruction *k1 = named(m, "k1"), *k2 = named(m, "k2"), *k3 = named(m, "k3"), *k4 = named(m, "k4");
  EXPECT(instruction_identical(k1, k2) && attrs_hash(&k1->attrs) == attrs_hash(&k2->attrs), "equal constants");
  EXPECT(!attrs_equal(&k3->attrs, &k4->attrs), "-0 and 0 differ bit for bit");
  Attrs none = {0}, zero_pad = {.padding = &(PadDims){0}};
  EXPECT(attrs_equal(&none, &zero_pad) && attrs_hash(&none) == attrs_hash(&zero_pad),
         "an absent group equals an all-zero one");
  module_free(m);
}

TEST(eval_instruction_computes_one_op_for_folding) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Instruction *sq = named(m, "sq"), *one = named(m, "one");
  Literal *x = literal_create(&named(m, "x")->shape);
  for (int i = 0; i < 4; i++) literal_set_f64(x, i, i + 1);
  Status st;
  status_clear(&st);
  Literal *y = eval_instruction(sq, (Literal *[]){x, x}, &st);
  EXPECT(y && literal_get_f64(y, 3) == 16, "4*4: %s", y ? "" : st.message);
  EXPECT(!eval_instruction(one, NULL, &st) && strstr(st.message, "constant"), "a constant is refused: %s",
         st.message);
  literal_free(y);
  literal_free(x);
  module_free(m);
}

static const char *const WITH_METADATA =
    "HloModule md\n"
    "ENTRY main {\n"
    "  x = f32[2] parameter(0), metadata={op_name=\"x\"}\n"
    "  ROOT n = f32[2] negate(x), metadata={op_type=\"neg\" op_name=\"jit(f)/neg\" "
    "source_file=\"/work/model.py\" source_line=12 source_end_line=12 source_column=4 "
    "profile_type={1,2} stack_frame_id=3}\n"
    "}\n";

TEST(metadata_keeps_op_name_file_and_line_and_skips_the_rest) {
  Module *m = parse_text(WITH_METADATA);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  const Metadata *md = named(m, "n")->metadata;
  EXPECT(md && md->op_name && strcmp(md->op_name, "jit(f)/neg") == 0, "op_name");
  EXPECT(md && md->source_file && strcmp(md->source_file, "/work/model.py") == 0 && md->source_line == 12,
         "file and line");
  const Metadata *mx = named(m, "x")->metadata;
  EXPECT(mx && mx->source_file == NULL && mx->source_line == 0, "absent fields stay empty");
  EXPECT(named(m, "n")->metadata && module_survives_round_trip(m), "see above");
  StrBuf sb = {0};
  print_instruction(&sb, named(m, "n"));
  EXPECT(strstr(sb.data, ", metadata={op_name=\"jit(f)/neg\" source_file=\"/work/model.py\" source_line=12}"),
         "printed: %s", sb.data);
  strbuf_free(&sb);
  module_free(m);
}

TEST(clones_keep_metadata_and_describe_names_the_source_line) {
  Module *m = parse_text(WITH_METADATA);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Instruction *n = named(m, "n");
  Instruction *n2 = instruction_clone(m->entry, n, n->operands, NULL);
  EXPECT(n2->metadata && strcmp(n2->metadata->op_name, "jit(f)/neg") == 0, "instruction clone keeps it");
  Module *copy = module_clone(m);
  module_free(m);
  Instruction *n3 = named(copy, "n");
  EXPECT(n3 && n3->metadata && n3->metadata->source_line == 12 &&
             strcmp(n3->metadata->source_file, "/work/model.py") == 0,
         "module clone keeps it, in its own arena");
  StrBuf sb = {0};
  if (n3) instruction_describe(&sb, n3);
  EXPECT(sb.data && strcmp(sb.data, "n (jit(f)/neg at /work/model.py:12)") == 0, "got %s", sb.data);
  strbuf_free(&sb);
  instruction_describe(&sb, named(copy, "x"));
  EXPECT(strcmp(sb.data, "x (x)") == 0, "op_name only: %s", sb.data);
  strbuf_free(&sb);
  module_free(copy);
}

TEST(metadata_op_name_must_be_quoted) {
  const char *text = "HloModule md\nENTRY main {\n  ROOT x = f32[] parameter(0), metadata={op_name=x}\n}\n";
  Status st;
  Module *m = parse_module(text, strlen(text), "bad.hlo", &st);
  EXPECT(!m && st.loc.line == 3 && strstr(st.message, "quoted op_name"), "got %d: %s", st.loc.line, st.message);
  module_free(m);
}

/* src/ir's builder leaves the root to the caller. */
TEST(builder_sets_no_root_and_appends_in_amortised_time) {
  Module *m = module_create("chain");
  Computation *e = builder_add_computation(m, "main");
  e->is_entry = true;
  m->entry = e;
  Shape s = shape_array(TYPE_F32, 1, (int64_t[]){2});
  Instruction *last = builder_add_parameter(e, &s, "x");
  EXPECT(e->root == NULL, "a parameter became the root");
  Status st;
  status_clear(&st);
  for (int i = 0; i < 40000 && last; i++)
    last = builder_add_instruction(e, OP_NEGATE, &last, 1, NULL, 0, NULL, NULL, &st);
  EXPECT(last && e->root == NULL, "no implicit root: %s", st.message);
  EXPECT(e->instruction_count == 40001, "count %d", e->instruction_count);
  if (last) computation_set_root(e, last);
  EXPECT(verify_module(m, &st), "verify: %s", st.message);
  /* DCE's way out: the last 30,000 go at once, in one pass. */
  if (e->instruction_count == 40001) {
    computation_set_root(e, e->instructions[10000]);
    computation_remove_instructions(e, e->instructions + 10001, 30000);
    EXPECT(e->instruction_count == 10001 && e->root->user_count == 0, "count %d, root users %d",
           e->instruction_count, e->root->user_count);
    EXPECT(verify_module(m, &st), "verify after removal: %s", st.message);
  }
  module_free(m);
}

TEST(removing_a_set_filters_the_survivors_use_lists) {
  Module *m = parse_text(SQUARE_PLUS);
  if (!m) { EXPECT(m != NULL, "parse"); return; }
  Instruction *x = named(m, "x"), *r = named(m, "r");
  Instruction *extra = computation_add_instruction(m->entry, OP_ABS, &x, 1, NULL, 0, NULL, &x->shape, NULL);
  computation_set_root(m->entry, x);
  computation_remove_instructions(m->entry, (Instruction *[]){r, named(m, "sq"), named(m, "ones"), named(m, "one")}, 4);
  EXPECT(x->user_count == 1 && x->users[0] == extra, "x keeps only abs: %d users", x->user_count);
  EXPECT(m->entry->instruction_count == 2 && extra->index == 1, "x and abs remain");
  EXPECT(module_survives_round_trip(m), "see above");
  module_free(m);
}

int main(void) {
  RUN(an_operand_read_twice_lists_its_user_once);
  RUN(set_operand_moves_the_user_between_use_lists);
  RUN(replace_all_uses_redirects_users_and_the_root);
  RUN(removing_a_constant_keeps_indices_dense_and_leaks_nothing);
  RUN(move_before_keeps_positions_and_indices_in_step);
  RUN(sort_keeps_a_legal_order_and_moves_only_what_it_must);
  RUN(sort_names_an_instruction_on_a_cycle);
  RUN(unique_names_avoid_parsed_names);
  RUN(parser_renames_names_repeated_across_computations_keeping_the_entry);
  RUN(verifier_refuses_a_name_used_twice_in_the_module);
  RUN(verifier_refuses_a_stale_use_list);
  RUN(removing_a_parameter_renumbers_the_later_ones);
  RUN(cloned_instruction_copies_everything_but_operands_and_name);
  RUN(cloned_computation_and_module_are_independent_deep_copies);
  RUN(module_clone_keeps_names_shared_by_a_computation_and_an_instruction);
  RUN(attrs_equal_and_hash_see_every_group);
  RUN(eval_instruction_computes_one_op_for_folding);
  RUN(metadata_keeps_op_name_file_and_line_and_skips_the_rest);
  RUN(clones_keep_metadata_and_describe_names_the_source_line);
  RUN(metadata_op_name_must_be_quoted);
  RUN(builder_sets_no_root_and_appends_in_amortised_time);
  RUN(removing_a_set_filters_the_survivors_use_lists);
  return test_summary();
}
