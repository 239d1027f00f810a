/* Scheduling and buffer assignment (src/opt/schedule.c,
 * src/opt/buffer_assignment.c), and layout-copies (src/opt/layout_copies.c),
 * on which the plan's aliases rely: small modules written inline check each
 * rule of the plan (reuse, in place, donation, the limit) and of the
 * copies; every corpus module checks the properties that must hold
 * everywhere (no two live buffers overlap; the schedule keeps operands
 * first and computes the same bits; every forward names its value's
 * layout). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "opt/opt.h"
#include "runtime/npy.h"
#include "../test.h"

static Module *parse_text(const char *text) {
  Status st;
  Module *m = parse_module(text, strlen(text), "inline.hlo", &st);
  if (!m) printf("  parse failed: %s\n%s\n", st.message, text);
  return m;
}

static const Instruction *find(const Module *m, const char *name) {
  return computation_find_instruction(m->entry, name);
}

static const BufferSlot *slot_of(const BufferPlan *plan, const Module *m, const char *name) {
  return buffer_plan_find(plan, find(m, name), 0);
}

/* f32[1024] is 4096 bytes, a multiple of the 64-byte alignment. */
enum { VECTOR_BYTES = 4096 };

/* ---- reuse and in place ---- */

TEST(chain_of_non_elementwise_ops_needs_two_buffers) {
  /* reverse reads element n-1-i for element i: never in place. */
  Module *m = parse_text("HloModule m\nENTRY e {\n p = f32[1024] parameter(0)\n"
                         " a = f32[1024] reverse(p), dimensions={0}\n b = f32[1024] reverse(a), dimensions={0}\n"
                         " c = f32[1024] reverse(b), dimensions={0}\n ROOT d = f32[1024] reverse(c), dimensions={0}\n}\n");
  if (!m) return;
  BufferPlan *plan = buffer_plan_create(m->entry);
  EXPECT(plan->temp_bytes == 2 * VECTOR_BYTES, "temp_bytes %lld", (long long)plan->temp_bytes);
  EXPECT(plan->naive_temp_bytes == 3 * VECTOR_BYTES, "naive %lld", (long long)plan->naive_temp_bytes);
  EXPECT(slot_of(plan, m, "a")->offset == slot_of(plan, m, "c")->offset, "c does not reuse a's buffer");
  EXPECT(slot_of(plan, m, "b")->shares_with == NULL, "reverse written in place");
  EXPECT(slot_of(plan, m, "d")->kind == BUFFER_OUTPUT, "root kind %d", slot_of(plan, m, "d")->kind);
  EXPECT(slot_of(plan, m, "p")->kind == BUFFER_PARAMETER, "parameter kind");
  buffer_plan_free(plan);
  module_free(m);
}

TEST(chain_of_elementwise_ops_runs_in_one_buffer) {
  Module *m = parse_text("HloModule m\nENTRY e {\n p = f32[1024] parameter(0)\n a = f32[1024] negate(p)\n"
                         " b = f32[1024] exponential(a)\n c = f32[1024] add(b, b)\n ROOT d = f32[1024] negate(c)\n}\n");
  if (!m) return;
  BufferPlan *plan = buffer_plan_create(m->entry);
  EXPECT(plan->temp_bytes == VECTOR_BYTES, "temp_bytes %lld", (long long)plan->temp_bytes);
  EXPECT(slot_of(plan, m, "b")->shares_with == find(m, "a"), "b not in place over a");
  EXPECT(slot_of(plan, m, "c")->shares_with == find(m, "b"), "c not in place over b");
  /* a parameter belongs to the caller: negate(p) gets a buffer of its own. */
  EXPECT(slot_of(plan, m, "a")->shares_with == NULL, "a written over the parameter");
  buffer_plan_free(plan);
  module_free(m);
}

TEST(operand_read_later_is_not_overwritten) {
  Module *m = parse_text("HloModule m\nENTRY e {\n p = f32[1024] parameter(0)\n x = f32[1024] negate(p)\n"
                         " y = f32[1024] exponential(x)\n z = f32[1024] add(y, x)\n ROOT r = f32[1024] negate(z)\n}\n");
  if (!m) return;
  BufferPlan *plan = buffer_plan_create(m->entry);
  const BufferSlot *x = slot_of(plan, m, "x"), *y = slot_of(plan, m, "y"), *z = slot_of(plan, m, "z");
  EXPECT(y->shares_with == NULL, "y overwrote x, which z still reads");
  EXPECT(x->offset != y->offset, "x and y share offset %lld", (long long)x->offset);
  EXPECT(z->shares_with == find(m, "y"), "z not in place over y (both operands die at z)");
  EXPECT(x->live_to == z->live_from, "x live to %d, z at %d", x->live_to, z->live_from);
  buffer_plan_free(plan);
  module_free(m);
}

TEST(in_place_needs_the_same_layout_and_element_size) {
  Module *m = parse_text("HloModule m\nENTRY e {\n p = f32[32,32] parameter(0)\n"
                         " a = f32[32,32]{0,1} negate(p)\n b = f32[32,32]{1,0} negate(a)\n"
                         " c = f64[32,32] convert(b)\n ROOT d = f64[32,32] negate(c)\n}\n");
  if (!m) return;
  BufferPlan *plan = buffer_plan_create(m->entry);
  EXPECT(slot_of(plan, m, "b")->shares_with == NULL, "b in place over a with another layout");
  EXPECT(slot_of(plan, m, "c")->shares_with == NULL, "f64 written over f32");
  buffer_plan_free(plan);
  module_free(m);
}

TEST(fusion_in_place_only_when_it_reads_the_operand_elementwise) {
  Module *m = parse_text(
      "HloModule m\n"
      "ew { x = f32[1024] parameter(0)  n = f32[1024] negate(x)  ROOT m = f32[1024] multiply(n, x) }\n"
      "rev { x = f32[1024] parameter(0)  r = f32[1024] reverse(x), dimensions={0}  ROOT s = f32[1024] add(x, r) }\n"
      "two { x = f32[1024] parameter(0)  y = f32[1024] parameter(1)  r = f32[1024] reverse(y), dimensions={0}\n"
      "      ROOT s = f32[1024] add(x, r) }\n"
      "ENTRY e {\n p = f32[1024] parameter(0)\n a = f32[1024] negate(p)\n"
      " f = f32[1024] fusion(a), kind=kLoop, calls=ew\n g = f32[1024] fusion(f), kind=kLoop, calls=rev\n"
      " h = f32[1024] fusion(g, g), kind=kLoop, calls=two\n ROOT i = f32[1024] negate(h)\n}\n");
  if (!m) return;
  BufferPlan *plan = buffer_plan_create(m->entry);
  EXPECT(slot_of(plan, m, "f")->shares_with == find(m, "a"), "elementwise fusion not in place");
  EXPECT(slot_of(plan, m, "g")->shares_with == NULL, "fusion that reverses its operand written in place");
  /* Operand 0 is read elementwise, but the same buffer is operand 1, reversed. */
  EXPECT(slot_of(plan, m, "h")->shares_with == NULL, "fusion(g, g) written over g, which it reads reversed");
  buffer_plan_free(plan);
  module_free(m);
}

TEST(tuple_get_tuple_element_and_bitcast_own_no_storage) {
  Module *m = parse_text("HloModule m\nENTRY e {\n p = f32[1024] parameter(0)\n a = f32[1024] negate(p)\n"
                         " t = (f32[1024], f32[1024]) tuple(a, p)\n g = f32[1024] get-tuple-element(t), index=0\n"
                         " b = f32[32,32] bitcast(g)\n c = f32[32,32] negate(b)\n ROOT r = f32[32,32] negate(c)\n}\n");
  if (!m) return;
  BufferPlan *plan = buffer_plan_create(m->entry);
  const BufferSlot *b = slot_of(plan, m, "b"), *a = slot_of(plan, m, "a");
  EXPECT(b->kind == BUFFER_ALIAS && b->source == find(m, "a"), "bitcast kind %d", b->kind);
  EXPECT(buffer_plan_find(plan, find(m, "t"), 1)->source == find(m, "p"), "tuple leaf 1 not p's");
  /* a is read through the bitcast at c: it lives until c. */
  EXPECT(a->live_to == find(m, "c")->index, "a live to %d", a->live_to);
  EXPECT(plan->naive_temp_bytes == 2 * VECTOR_BYTES, "naive %lld", (long long)plan->naive_temp_bytes);
  buffer_plan_free(plan);
  module_free(m);
}

/* ---- input_output_alias ---- */

TEST(input_output_alias_is_parsed_and_printed_back) {
  Module *m = parse_text("HloModule m, input_output_alias={ {1}: (0, {}, must-alias), {0}: (1, {}) }\n"
                         "ENTRY e {\n p0 = f32[4] parameter(0)\n p1 = f32[4] parameter(1)\n"
                         " a = f32[4] add(p0, p1)\n ROOT t = (f32[4], f32[4]) tuple(a, a)\n}\n");
  if (!m) return;
  EXPECT(m->io_alias_count == 2, "%d aliases", m->io_alias_count);
  const IoAlias *a = &m->io_aliases[0], *b = &m->io_aliases[1];
  EXPECT(a->output_index.count == 1 && a->output_index.values[0] == 1 && a->parameter_number == 0 &&
             a->parameter_index.count == 0 && a->must_alias,
         "first alias read wrongly");
  EXPECT(b->parameter_number == 1 && !b->must_alias, "an alias without a kind is may-alias");
  StrBuf sb = {0};
  print_module(&sb, m);
  const char *want = "input_output_alias={ {1}: (0, {}, must-alias), {0}: (1, {}, may-alias) }";
  EXPECT(sb.data && strstr(sb.data, want), "printed:\n%s", sb.data);
  Module *back = sb.data ? parse_text(sb.data) : NULL;
  EXPECT(back && back->io_alias_count == 2 && back->io_aliases[0].must_alias, "lost in the round trip");
  module_free(back);
  strbuf_free(&sb);
  module_free(m);
}

TEST(donated_parameter_holds_the_result_when_no_one_reads_it_after) {
  Module *m = parse_text("HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) }\n"
                         "ENTRY e {\n p0 = f32[1024] parameter(0)\n p1 = f32[1024] parameter(1)\n"
                         " a = f32[1024] add(p0, p1)\n b = f32[1024] multiply(a, p1)\n"
                         " c = f32[1024] reverse(p0), dimensions={0}\n ROOT t = (f32[1024], f32[1024]) tuple(b, c)\n}\n");
  if (!m) return;
  BufferPlan *plan = buffer_plan_create(m->entry);
  /* Result {0} is b, written while p0 is still to be read by c: no donation. */
  EXPECT(slot_of(plan, m, "b")->parameter_number == -1, "b written into p0, which c reads later");
  /* Result {1} is c; p1's last reader is b, before c: c writes into p1. */
  EXPECT(slot_of(plan, m, "c")->parameter_number == 1, "c not written into p1: %lld",
         (long long)slot_of(plan, m, "c")->parameter_number);
  buffer_plan_free(plan);
  module_free(m);
}

TEST(donated_parameter_is_written_in_place_by_its_last_elementwise_reader) {
  Module *m = parse_text("HloModule m, input_output_alias={ {}: (0, {}, may-alias) }\n"
                         "ENTRY e {\n p0 = f32[1024] parameter(0)\n ROOT a = f32[1024] add(p0, p0)\n}\n");
  if (!m) return;
  BufferPlan *plan = buffer_plan_create(m->entry);
  EXPECT(slot_of(plan, m, "a")->parameter_number == 0, "add(p0, p0) not written into p0");
  buffer_plan_free(plan);
  module_free(m);
}

/* ---- the schedule ---- */

TEST(schedule_runs_each_consumer_right_after_its_big_producer) {
  /* As written, both big values are live at once; scheduled, each is
   * reduced before the next is made. */
  Module *m = parse_text(
      "HloModule m\nsum { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }\n"
      "ENTRY e {\n p = f32[1024] parameter(0)\n z = f32[] constant(0)\n"
      " a = f32[1024,64] broadcast(p), dimensions={0}\n b = f32[1024,64] broadcast(p), dimensions={0}\n"
      " ra = f32[1024] reduce(a, z), dimensions={1}, to_apply=sum\n"
      " rb = f32[1024] reduce(b, z), dimensions={1}, to_apply=sum\n ROOT r = f32[1024] add(ra, rb)\n}\n");
  if (!m) return;
  int64_t before = buffer_plan_naive_temp_bytes(m);
  BufferPlan *plan = buffer_plan_create(m->entry);
  int64_t unscheduled = plan->temp_bytes;
  buffer_plan_free(plan);
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  bool failed = false;
  Status st;
  EXPECT(schedule_module(m, &ctx, &failed, &st), "schedule changed nothing");
  plan = buffer_plan_create(m->entry);
  EXPECT(find(m, "ra")->index < find(m, "b")->index, "ra at %d after b at %d", find(m, "ra")->index,
         find(m, "b")->index);
  EXPECT(plan->temp_bytes < unscheduled, "temp bytes %lld, before scheduling %lld", (long long)plan->temp_bytes,
         (long long)unscheduled);
  EXPECT(plan->temp_bytes < before, "no better than one buffer each");
  buffer_plan_free(plan);
  opt_context_free(&ctx);
  module_free(m);
}

TEST(schedule_keeps_effects_in_order) {
  Module *m = parse_text("HloModule m\nENTRY e {\n p = f32[1024] parameter(0)\n"
                         " big = f32[1024,64] custom-call(p), custom_call_target=\"first\"\n"
                         " small = f32[] custom-call(p), custom_call_target=\"second\"\n"
                         " ROOT t = (f32[1024,64], f32[]) tuple(big, small)\n}\n");
  if (!m) return;
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  bool failed = false;
  Status st;
  schedule_module(m, &ctx, &failed, &st);
  EXPECT(find(m, "big")->index < find(m, "small")->index, "custom-calls reordered");
  opt_context_free(&ctx);
  module_free(m);
}

/* ---- the limit and the reports ---- */

/* The last two passes of the pipeline, as optimize_module runs them. The
 * earlier passes are left out: they may fuse or fold away the very
 * temporaries these tests are about. */
static bool schedule_and_assign(Module *m, OptContext *ctx, Status *st) {
  bool failed = false;
  status_clear(st);
  schedule_module(m, ctx, &failed, st);
  if (!failed) assign_buffers(m, ctx, &failed, st);
  return !failed;
}

TEST(max_temp_bytes_fails_at_compile_time_naming_the_largest_buffers) {
  Module *m = parse_text("HloModule m\nENTRY e {\n p = f32[1024] parameter(0)\n"
                         " a = f32[1024] reverse(p), dimensions={0},"
                         " metadata={op_name=\"jit(f)/rev\" source_file=\"model.py\" source_line=12}\n"
                         " b = f32[1024] reverse(a), dimensions={0}\n"
                         " ROOT c = f32[1024] reverse(b), dimensions={0}\n}\n");
  if (!m) return;
  OptOptions options;
  opt_options_default(&options);
  Status st;
  EXPECT(opt_options_parse_flag(&options, "--max_temp_bytes=5000", &st), "flag refused: %s", st.message);
  OptContext ctx;
  opt_context_init(&ctx, &options);
  bool ok = schedule_and_assign(m, &ctx, &st);
  EXPECT(!ok, "a module needing 8192 bytes passed a 5000-byte limit");
  EXPECT(status_exit_code(&st) == 2, "exit code %d", status_exit_code(&st));
  EXPECT(strstr(st.message, "8192 bytes") != NULL, "message lacks the bytes needed: %s", st.message);
  EXPECT(strstr(st.message, "max_temp_bytes=5000") != NULL, "message lacks the limit: %s", st.message);
  EXPECT(strstr(st.message, " a = f32[1024] reverse") != NULL, "message lacks buffer a: %s", st.message);
  EXPECT(strstr(st.message, " b = f32[1024] reverse") != NULL, "message lacks buffer b: %s", st.message);
  EXPECT(strstr(st.message, "(jit(f)/rev at model.py:12)") != NULL, "message lacks a's source line: %s", st.message);
  opt_context_free(&ctx);
  opt_context_init(&ctx, NULL);
  ctx.options.max_temp_bytes = 8192;
  EXPECT(schedule_and_assign(m, &ctx, &st), "refused at exactly its need: %s", st.message);
  opt_context_free(&ctx);
  module_free(m);
}

TEST(max_temp_bytes_from_axle_flags_fails_optimize_module) {
  /* Dots: nothing earlier in the pipeline folds, fuses or merges them. */
  Module *m = parse_text("HloModule m\nENTRY e {\n p = f32[32,32] parameter(0)\n q = f32[32,32] parameter(1)\n"
                         " d1 = f32[32,32] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                         " d2 = f32[32,32] dot(d1, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                         " ROOT d3 = f32[32,32] dot(d2, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
  if (!m) return;
  OptOptions options;
  opt_options_default(&options);
  Status st;
  setenv("AXLE_FLAGS", "--max_temp_bytes=8191", 1);
  EXPECT(opt_options_from_env(&options, &st), "AXLE_FLAGS refused: %s", st.message);
  unsetenv("AXLE_FLAGS");
  OptContext ctx;
  opt_context_init(&ctx, &options);
  status_clear(&st);
  EXPECT(!optimize_module(m, &ctx, &st), "two live 4096-byte dots passed an 8191-byte limit");
  EXPECT(status_exit_code(&st) == 2, "exit code %d", status_exit_code(&st));
  EXPECT(strstr(st.message, "needs 8192 bytes") && strstr(st.message, " d1 = f32[32,32] dot"), "message: %s",
         st.message);
  opt_context_free(&ctx);
  module_free(m);
}

TEST(max_temp_bytes_counts_what_a_loop_body_needs_while_it_runs) {
  Module *m = parse_text(
      "HloModule m\n"
      "cond { s = (s32[], f32[1024]) parameter(0)  i = s32[] get-tuple-element(s), index=0\n"
      "       n = s32[] constant(3)  ROOT lt = pred[] compare(i, n), direction=LT }\n"
      "body { s = (s32[], f32[1024]) parameter(0)  i = s32[] get-tuple-element(s), index=0\n"
      "       x = f32[1024] get-tuple-element(s), index=1  r = f32[1024] reverse(x), dimensions={0}\n"
      "       y = f32[1024] negate(r)  one = s32[] constant(1)  j = s32[] add(i, one)\n"
      "       ROOT t = (s32[], f32[1024]) tuple(j, y) }\n"
      "ENTRY e {\n p = f32[1024] parameter(0)\n z = s32[] constant(0)\n"
      " init = (s32[], f32[1024]) tuple(z, p)\n w = (s32[], f32[1024]) while(init), condition=cond, body=body\n"
      " ROOT out = f32[1024] get-tuple-element(w), index=1\n}\n");
  if (!m) return;
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  ctx.options.max_temp_bytes = 1000;
  Status st;
  EXPECT(!schedule_and_assign(m, &ctx, &st), "the body's 4096-byte temporary passed a 1000-byte limit");
  EXPECT(ctx.plan && ctx.plan->temp_bytes == 64, "entry block %lld", ctx.plan ? (long long)ctx.plan->temp_bytes : -1LL);
  EXPECT(ctx.plan && ctx.plan->called_temp_bytes == 4096, "body needs %lld",
         ctx.plan ? (long long)ctx.plan->called_temp_bytes : -1LL);
  EXPECT(strstr(st.message, "needs 4160 bytes") && strstr(st.message, "4096 more"), "message: %s", st.message);
  opt_context_free(&ctx);
  module_free(m);
}

TEST(buffer_plan_dump_is_hlo_that_parses_back) {
  Module *m = parse_text("HloModule m, input_output_alias={ {}: (0, {}, may-alias) }\nENTRY e {\n"
                         " p = f32[1024] parameter(0)\n a = f32[1024] negate(p)\n t = (f32[1024], f32[1024]) tuple(a, p)\n"
                         " g = f32[1024] get-tuple-element(t), index=0\n ROOT r = f32[1024] negate(g)\n}\n");
  if (!m) return;
  BufferPlan *plan = buffer_plan_create(m->entry);
  StrBuf sb = {0};
  print_buffer_plan(&sb, m, plan);
  EXPECT(sb.data && strstr(sb.data, "/* slot: offset=0 size=4096 live=[1,4] kind=temp */\n  a = "),
         "no slot comment before a:\n%s", sb.data);
  EXPECT(sb.data && strstr(sb.data, "/* slot[1]: offset=- size=4096 live=[2,2] kind=alias of=p */"),
         "no comment for t's second leaf:\n%s", sb.data);
  Status st;
  Module *back = sb.data ? parse_module(sb.data, sb.len, "dump.hlo", &st) : NULL;
  EXPECT(back != NULL, "dump does not parse: %s\n%s", back ? "" : st.message, sb.data);
  if (back) {
    EXPECT(back->entry->instruction_count == m->entry->instruction_count, "instruction count changed");
    EXPECT(back->io_alias_count == 1, "input_output_alias lost");
  }
  module_free(back);
  strbuf_free(&sb);
  buffer_plan_free(plan);
  module_free(m);
}

/* ---- every corpus module ---- */

/* Calls check(name, module) on every tests/hlo module that parses. */
static int for_each_corpus_module(void (*check)(const char *name, Module *m)) {
  DIR *dir = opendir("tests/hlo");
  EXPECT(dir != NULL, "cannot open tests/hlo (run from the repository root)");
  if (!dir) return 0;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".hlo") != 0) continue;
    char path[600];
    snprintf(path, sizeof path, "tests/hlo/%s", e->d_name);
    Status st;
    Module *m = parse_module_file(path, &st);
    EXPECT(m != NULL, "%s: %s", path, st.message);
    if (!m) continue;
    check(e->d_name, m);
    module_free(m);
    count++;
  }
  closedir(dir);
  return count;
}

static bool ranges_overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return a0 < b1 && b0 < a1; }

/* Temporaries live at the same position never share bytes, except an
 * in-place hand-over at the one position where the old value dies. */
static void check_plan(const char *name, const BufferPlan *plan) {
  for (int i = 0; i < plan->slot_count; i++) {
    const BufferSlot *s = &plan->slots[i];
    if (s->kind != BUFFER_TEMP || s->size == 0) continue;
    EXPECT(s->offset % BUFFER_ALIGNMENT == 0, "%s: %s at unaligned offset %lld", name, s->inst->name,
           (long long)s->offset);
    EXPECT(s->offset + s->size <= plan->temp_bytes, "%s: %s past the block", name, s->inst->name);
    for (int j = i + 1; j < plan->slot_count; j++) {
      const BufferSlot *t = &plan->slots[j];
      if (t->kind != BUFFER_TEMP || t->size == 0) continue;
      if (!ranges_overlap(s->live_from, s->live_to + 1, t->live_from, t->live_to + 1)) continue;
      if (!ranges_overlap(s->offset, s->offset + s->size, t->offset, t->offset + t->size)) continue;
      bool hand_over = t->shares_with == s->inst && t->shares_with_index == s->output_index &&
                       s->live_to == t->live_from;
      EXPECT(hand_over, "%s: %s [%d,%d] and %s [%d,%d] overlap at offsets %lld and %lld", name, s->inst->name,
             s->live_from, s->live_to, t->inst->name, t->live_from, t->live_to, (long long)s->offset,
             (long long)t->offset);
    }
  }
  EXPECT(plan->temp_bytes <= plan->naive_temp_bytes, "%s: plan %lld > naive %lld", name,
         (long long)plan->temp_bytes, (long long)plan->naive_temp_bytes);
}

static void check_corpus_plan(const char *name, Module *m) {
  BufferPlan *plan = buffer_plan_create(m->entry);
  check_plan(name, plan);
  int64_t unscheduled = plan->temp_bytes;
  buffer_plan_free(plan);
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  bool failed = false;
  Status st;
  schedule_module(m, &ctx, &failed, &st);
  assign_buffers(m, &ctx, &failed, &st);
  EXPECT(ctx.plan != NULL && !failed, "%s: no plan", name);
  if (ctx.plan) check_plan(name, ctx.plan);
  /* A schedule is kept only when it shrinks the block. */
  if (ctx.plan)
    EXPECT(ctx.plan->temp_bytes <= unscheduled, "%s: %lld bytes scheduled, %lld as written", name,
           (long long)ctx.plan->temp_bytes, (long long)unscheduled);
  opt_context_free(&ctx);
  /* And the plan of the whole pipeline, fusions and all. */
  Module *optimized = module_clone(m);
  opt_context_init(&ctx, NULL);
  status_clear(&st);
  EXPECT(optimize_module(optimized, &ctx, &st), "%s: optimize_module failed: %s", name, st.message);
  if (ctx.plan) check_plan(name, ctx.plan);
  opt_context_free(&ctx);
  module_free(optimized);
}

TEST(live_buffers_never_overlap_and_schedules_never_grow_the_block_on_any_corpus_module) {
  int n = for_each_corpus_module(check_corpus_plan);
  EXPECT(n > 50, "only %d corpus modules", n);
}

/* The corpus inputs of module NAME (tests/hlo/NAME/in*.npy). */
static int read_corpus_inputs(const char *file, Literal **args, int max) {
  char stem[300];
  snprintf(stem, sizeof stem, "%.*s", (int)(strlen(file) - 4), file);
  int n = 0;
  for (; n < max; n++) {
    char path[700];
    snprintf(path, sizeof path, "tests/hlo/%s/in%d.npy", stem, n);
    FILE *f = fopen(path, "rb");
    if (!f) break;
    fclose(f);
    Status st;
    args[n] = npy_read(path, &st);
    if (!args[n]) break;
  }
  return n;
}

static void check_corpus_schedule(const char *name, Module *m) {
  Literal *args[64];
  int n = read_corpus_inputs(name, args, 64);
  Status st;
  Literal *before = eval_module(m, args, n, &st);
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  bool failed = false;
  schedule_module(m, &ctx, &failed, &st);
  opt_context_free(&ctx);
  for (int c = 0; c < m->computation_count; c++) {
    const Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++) {
      const Instruction *inst = comp->instructions[i];
      EXPECT(inst->index == i, "%s: %s has index %d at %d", name, inst->name, inst->index, i);
      for (int k = 0; k < inst->operand_count; k++)
        EXPECT(inst->operands[k]->index < i, "%s: %s runs before its operand %s", name, inst->name,
               inst->operands[k]->name);
    }
  }
  status_clear(&st);
  EXPECT(verify_module(m, &st), "%s: broken by schedule: %s", name, st.message);
  Literal *after = eval_module(m, args, n, &st);
  EXPECT((before == NULL) == (after == NULL), "%s: evaluates only %s scheduling", name, before ? "before" : "after");
  if (before && after) EXPECT(literal_equal(before, after), "%s: other bits after scheduling", name);
  literal_free(before);
  literal_free(after);
  for (int i = 0; i < n; i++) literal_free(args[i]);
}

TEST(schedule_keeps_operands_first_and_the_results_on_every_corpus_module) {
  int n = for_each_corpus_module(check_corpus_schedule);
  EXPECT(n > 50, "only %d corpus modules", n);
}

/* ---- layout-copies: both ends of every forward name one layout ---- */

/* Whether value `from` reaches a place that names shape `to` in the same
 * layouts; else says where in why. */
static bool layouts_agree(const Shape *from, const Shape *to, const Instruction *at, const char *what, char *why,
                          size_t size) {
  if (shape_identical(from, to)) return true;
  snprintf(why, size, "%s: %s names another layout than its value", at->name, what);
  return false;
}

/* What the backends rely on after layout-copies: every forward, and every
 * boundary of a while, call or conditional, names its value's layout. */
static bool forwards_agree(const Module *m, char *why, size_t size) {
  for (int c = 0; c < m->computation_count; c++) {
    const Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++) {
      const Instruction *inst = comp->instructions[i];
      const Shape *s = &inst->shape;
      bool ok = true;
      switch (inst->opcode) {
      case OP_TUPLE:
        for (int k = 0; k < inst->operand_count && ok; k++)
          ok = layouts_agree(&inst->operands[k]->shape, &s->tuple_shapes[k], inst, "a tuple element", why, size);
        break;
      case OP_GET_TUPLE_ELEMENT:
        ok = layouts_agree(&inst->operands[0]->shape.tuple_shapes[inst->attrs.tuple_index], s, inst, "the element",
                           why, size);
        break;
      case OP_OPTIMIZATION_BARRIER:
        ok = layouts_agree(&inst->operands[0]->shape, s, inst, "the barrier", why, size);
        break;
      case OP_WHILE: {
        const Shape *state = &inst->called[1]->parameters[0]->shape;
        ok = layouts_agree(&inst->operands[0]->shape, state, inst, "the body's parameter", why, size) &&
             layouts_agree(state, &inst->called[0]->parameters[0]->shape, inst, "the condition", why, size) &&
             layouts_agree(&inst->called[1]->root->shape, state, inst, "the body's root", why, size) &&
             layouts_agree(state, s, inst, "the while", why, size);
        break;
      }
      case OP_CALL:
        for (int k = 0; k < inst->operand_count && ok; k++)
          ok = layouts_agree(&inst->operands[k]->shape, &inst->called[0]->parameters[k]->shape, inst,
                             "a callee parameter", why, size);
        if (ok) ok = layouts_agree(&inst->called[0]->root->shape, s, inst, "the call", why, size);
        break;
      case OP_CONDITIONAL:
        for (int b = 0; b < inst->called_count && ok; b++)
          ok = layouts_agree(&inst->operands[b + 1]->shape, &inst->called[b]->parameters[0]->shape, inst,
                             "a branch parameter", why, size) &&
               layouts_agree(&inst->called[b]->root->shape, s, inst, "the conditional", why, size);
        break;
      default:
        break;
      }
      if (!ok) return false;
    }
  }
  return true;
}

/* Parses text, checks that its forwards disagree, runs layout-copies (and
 * the verifier), and checks that they agree after it and that a second run
 * changes nothing. */
static Module *layout_copied(const char *text) {
  Module *m = parse_text(text);
  if (!m) return NULL;
  char why[256] = "";
  EXPECT(!forwards_agree(m, why, sizeof why), "the module as written already agrees");
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  bool failed = false;
  Status st;
  status_clear(&st);
  EXPECT(insert_layout_copies(m, &ctx, &failed, &st) && !failed, "the pass changes the module: %s", st.message);
  status_clear(&st);
  EXPECT(verify_module(m, &st), "module broken after layout-copies: %s", st.message);
  EXPECT(forwards_agree(m, why, sizeof why), "after layout-copies: %s", why);
  EXPECT(!insert_layout_copies(m, &ctx, &failed, &st), "a second run changes nothing");
  opt_context_free(&ctx);
  return m;
}

TEST(layout_copies_copy_a_column_major_value_into_the_layout_its_tuple_names) {
  Module *m = layout_copied("HloModule m\nENTRY e {\n p = s32[2,3]{0,1} parameter(0)\n t = (s32[2,3]) tuple(p)\n"
                            " b = (s32[2,3]) opt-barrier(t)\n ROOT g = s32[2,3] get-tuple-element(b), index=0\n}\n");
  if (!m) return;
  const Instruction *element = find(m, "t")->operands[0];
  EXPECT(element->opcode == OP_COPY && element->operands[0] == find(m, "p"), "the tuple reads a copy of p");
  EXPECT(element->shape.minor_to_major[0] == 1, "the copy is row-major, as the tuple names it");
  module_free(m);
}

TEST(layout_copies_give_a_loop_state_one_layout) {
  Module *m = layout_copied(
      "HloModule m\n"
      "cond {\n s = (s32[], f32[3,4,2]{2,1,0}) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
      " n = s32[] constant(2)\n ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
      "body {\n s = (s32[], f32[3,4,2]{0,1,2}) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
      " x = f32[3,4,2]{0,1,2} get-tuple-element(s), index=1\n one = s32[] constant(1)\n i2 = s32[] add(i, one)\n"
      " x2 = f32[3,4,2]{1,2,0} add(x, x)\n ROOT t = (s32[], f32[3,4,2]{1,2,0}) tuple(i2, x2)\n}\n"
      "ENTRY e {\n q = f32[3,4,2]{1,2,0} parameter(0)\n z = s32[] constant(0)\n"
      " t = (s32[], f32[3,4,2]{1,2,0}) tuple(z, q)\n"
      " w = (s32[], f32[3,4,2]{2,1,0}) while(t), condition=cond, body=body\n"
      " ROOT r = f32[3,4,2]{0,2,1} get-tuple-element(w), index=1\n}\n");
  if (!m) return;
  const Shape *state = &find(m, "w")->shape.tuple_shapes[1];
  EXPECT(state->minor_to_major[0] == 0 && state->minor_to_major[1] == 1, "the while carries the body's {0,1,2}");
  EXPECT(m->entry->root->shape.minor_to_major[0] == 0 && m->entry->root->shape.minor_to_major[1] == 2,
         "the result keeps the {0,2,1} the text names");
  module_free(m);
}

TEST(layout_copies_give_calls_and_branches_their_callees_layouts) {
  Module *m = layout_copied(
      "HloModule m\n"
      "twice {\n a = f32[3,4] parameter(0)\n ROOT d = f32[3,4]{0,1} add(a, a)\n}\n"
      "keep {\n ROOT a = f32[3,4]{0,1} parameter(0)\n}\n"
      "negate {\n a = f32[3,4] parameter(0)\n ROOT n = f32[3,4] negate(a)\n}\n"
      "ENTRY e {\n x = f32[3,4]{0,1} parameter(0)\n which = pred[] parameter(1)\n"
      " c = f32[3,4] call(x), to_apply=twice\n"
      " k = f32[3,4] conditional(which, c, x), true_computation=keep, false_computation=negate\n"
      " ROOT r = (f32[3,4], f32[3,4]) tuple(c, k)\n}\n");
  if (m) module_free(m);
}

TEST(layout_copies_compute_scatter_in_the_default_layout) {
  Module *m = parse_text(
      "HloModule m\nadd {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(a, b)\n}\n"
      "ENTRY e {\n p = s32[4,3]{0,1} parameter(0)\n i = s32[3,1] parameter(1)\n u = s32[3,3]{0,1} parameter(2)\n"
      " ROOT s = s32[4,3]{0,1} scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0},"
      " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n");
  if (!m) return;
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  bool failed = false;
  Status st;
  status_clear(&st);
  EXPECT(insert_layout_copies(m, &ctx, &failed, &st), "the pass changes the module");
  const Instruction *scatter = find(m, "s");
  for (int k = 0; k < scatter->operand_count; k++)
    EXPECT(shape_is_row_major(&scatter->operands[k]->shape), "scatter operand %d is row-major", k);
  EXPECT(shape_is_row_major(&scatter->shape), "the scatter's result is row-major");
  EXPECT(m->entry->root->opcode == OP_COPY && m->entry->root->shape.minor_to_major[0] == 0,
         "the result is copied back into the {0,1} the text names");
  opt_context_free(&ctx);
  module_free(m);
}

static void check_corpus_forwards(const char *name, Module *m) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Status st;
  status_clear(&st);
  EXPECT(optimize_module(m, &ctx, &st), "%s: optimize_module failed: %s", name, st.message);
  char why[256] = "";
  EXPECT(forwards_agree(m, why, sizeof why), "%s: after optimizing: %s", name, why);
  opt_context_free(&ctx);
}

TEST(every_forward_names_its_values_layout_after_optimizing_any_corpus_module) {
  int n = for_each_corpus_module(check_corpus_forwards);
  EXPECT(n > 50, "only %d corpus modules", n);
}

int main(void) {
  RUN(chain_of_non_elementwise_ops_needs_two_buffers);
  RUN(chain_of_elementwise_ops_runs_in_one_buffer);
  RUN(operand_read_later_is_not_overwritten);
  RUN(in_place_needs_the_same_layout_and_element_size);
  RUN(fusion_in_place_only_when_it_reads_the_operand_elementwise);
  RUN(tuple_get_tuple_element_and_bitcast_own_no_storage);
  RUN(input_output_alias_is_parsed_and_printed_back);
  RUN(donated_parameter_holds_the_result_when_no_one_reads_it_after);
  RUN(donated_parameter_is_written_in_place_by_its_last_elementwise_reader);
  RUN(schedule_runs_each_consumer_right_after_its_big_producer);
  RUN(schedule_keeps_effects_in_order);
  RUN(max_temp_bytes_fails_at_compile_time_naming_the_largest_buffers);
  RUN(max_temp_bytes_from_axle_flags_fails_optimize_module);
  RUN(max_temp_bytes_counts_what_a_loop_body_needs_while_it_runs);
  RUN(buffer_plan_dump_is_hlo_that_parses_back);
  RUN(live_buffers_never_overlap_and_schedules_never_grow_the_block_on_any_corpus_module);
  RUN(schedule_keeps_operands_first_and_the_results_on_every_corpus_module);
  RUN(layout_copies_copy_a_column_major_value_into_the_layout_its_tuple_names);
  RUN(layout_copies_give_a_loop_state_one_layout);
  RUN(layout_copies_give_calls_and_branches_their_callees_layouts);
  RUN(layout_copies_compute_scatter_in_the_default_layout);
  RUN(every_forward_names_its_values_layout_after_optimizing_any_corpus_module);
  return test_summary();
}
