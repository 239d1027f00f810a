/* The CPU backend's control flow and value-moving ops
 * (src/emit_x86/cpu_control.c), the batch-norm expansion
 * (src/opt/expand_batch_norm.c) and rng-bit-generator's shared bits
 * (src/ir/rng_bits.c). Each module is compiled for the CPU at 1 and 2
 * threads; the results must be the same bytes, and must match the reference
 * evaluator (executable_check: exact for integers) and, where the rule is
 * simple, values worked out here. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_program.h"
#include "runtime/executable.h"
#include "../test.h"

static Executable *compile_text(const char *text, int threads, Status *st) {
  status_clear(st);
  Module *m = parse_module(text, strlen(text), "test.hlo", st);
  if (!m) return NULL;
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_CPU);
  o.threads = threads;
  Executable *exe = executable_compile(m, &o, st);
  module_free(m);
  return exe;
}

/* Random arguments for every (array) parameter of text's entry. */
static int random_arguments(const char *text, HostBuffer **args, uint64_t seed) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "test.hlo", &st);
  if (!m) return 0;
  int n = m->entry->parameter_count;
  for (int i = 0; i < n; i++) {
    Literal *lit = literal_create(&m->entry->parameters[i]->shape);
    literal_fill_random(lit, &seed);
    args[i] = host_buffer_create(&lit->shape, lit->data, &st);
    literal_free(lit);
  }
  module_free(m);
  return n;
}

static bool buffers_identical(const HostBuffer *a, const HostBuffer *b) {
  if (shape_is_tuple(&a->shape) != shape_is_tuple(&b->shape)) return false;
  if (!shape_is_tuple(&a->shape))
    return memcmp(a->data, b->data, (size_t)shape_buffer_byte_size(&a->shape)) == 0;
  if (a->shape.tuple_count != b->shape.tuple_count) return false;
  for (int i = 0; i < a->shape.tuple_count; i++)
    if (!buffers_identical(a->elements[i], b->elements[i])) return false;
  return true;
}

/* Compiles and runs text at 1 and 2 threads on args; expects both to agree
 * byte for byte and with the evaluator. Returns the 1-thread result. */
static HostBuffer *run_checked(const char *text, HostBuffer **args, int n) {
  Status st;
  Executable *e1 = compile_text(text, 1, &st);
  EXPECT(e1, "compiles: %s", st.message);
  Executable *e2 = e1 ? compile_text(text, 2, &st) : NULL;
  HostBuffer *r1 = e1 ? executable_run(e1, args, n, &st) : NULL;
  EXPECT(!e1 || r1, "runs: %s", st.message);
  HostBuffer *r2 = e2 && r1 ? executable_run(e2, args, n, &st) : NULL;
  if (r1 && r2) EXPECT(buffers_identical(r1, r2), "1 and 2 threads give the same bytes");
  if (r1) EXPECT(executable_check(e1, args, n, r1, &st), "matches the evaluator: %s", st.message);
  host_buffer_free(r2);
  executable_free(e1);
  executable_free(e2);
  return r1;
}

static HostBuffer *run_random(const char *text, uint64_t seed) {
  HostBuffer *args[8] = {0};
  int n = random_arguments(text, args, seed);
  HostBuffer *r = run_checked(text, args, n);
  for (int i = 0; i < n; i++) host_buffer_free(args[i]);
  return r;
}

static HostBuffer *s32_scalar(int32_t v) {
  Status st;
  Shape s = shape_scalar(TYPE_S32);
  return host_buffer_create(&s, &v, &st);
}

/* A counter loop of `trips` trips that also updates an f32[5] by x/2 + 1. */
static const char counter_text[] =
    "HloModule counter\n"
    "cond {\n"
    "  s = (s32[], f32[5], s32[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] get-tuple-element(s), index=2\n"
    "  ROOT more = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[5], s32[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  x = f32[5] get-tuple-element(s), index=1\n"
    "  n = s32[] get-tuple-element(s), index=2\n"
    "  one = s32[] constant(1)\n"
    "  half = f32[] constant(0.5)\n"
    "  halves = f32[5] broadcast(half), dimensions={}\n"
    "  onef = f32[] constant(1)\n"
    "  ones = f32[5] broadcast(onef), dimensions={}\n"
    "  xh = f32[5] multiply(x, halves)\n"
    "  y = f32[5] add(xh, ones)\n"
    "  i1 = s32[] add(i, one)\n"
    "  ROOT next = (s32[], f32[5], s32[]) tuple(i1, y, n)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[5] parameter(0)\n"
    "  n = s32[] parameter(1)\n"
    "  zero = s32[] constant(0)\n"
    "  init = (s32[], f32[5], s32[]) tuple(zero, x, n)\n"
    "  ROOT w = (s32[], f32[5], s32[]) while(init), condition=cond, body=body\n"
    "}\n";

/* Runs counter_text for `trips` trips; checks the count and x. */
static void check_counter(int32_t trips) {
  HostBuffer *args[2] = {0};
  random_arguments(counter_text, args, 11);  /* x; n is replaced below */
  host_buffer_free(args[1]);
  args[1] = s32_scalar(trips);
  HostBuffer *r = run_checked(counter_text, args, 2);
  if (r) {
    int32_t count = *(int32_t *)r->elements[0]->data;
    int32_t want_count = trips > 0 ? trips : 0;
    EXPECT(count == want_count, "%d trips counted, want %d", count, want_count);
    const float *x = args[0]->data, *y = r->elements[1]->data;
    int wrong = 0;
    for (int k = 0; k < 5; k++) {
      float v = x[k];
      for (int t = 0; t < want_count; t++) v = v * 0.5f + 1.0f;
      wrong += memcmp(&v, &y[k], sizeof v) != 0;
    }
    EXPECT(wrong == 0, "%d of 5 elements differ from %d steps of x/2 + 1", wrong, want_count);
  }
  host_buffer_free(r);
  host_buffer_free(args[0]);
  host_buffer_free(args[1]);
}

TEST(a_while_runs_its_body_until_the_condition_is_false) {
  check_counter(10);
  check_counter(7);  /* an odd count leaves the state in the scratch half */
  check_counter(1);
}

TEST(a_while_whose_condition_is_false_at_once_returns_its_init) {
  check_counter(0);
  check_counter(-3);
}

/* An outer loop of 3 trips, each running an inner loop of 4 trips that
 * adds the outer counter to an accumulator: 4 * (0 + 1 + 2) = 12 per
 * element, plus the input. */
static const char nested_text[] =
    "HloModule nested\n"
    "inner_cond {\n"
    "  s = (s32[], s32[], f32[3]) parameter(0)\n"
    "  j = s32[] get-tuple-element(s), index=0\n"
    "  four = s32[] constant(4)\n"
    "  ROOT more = pred[] compare(j, four), direction=LT\n"
    "}\n"
    "inner_body {\n"
    "  s = (s32[], s32[], f32[3]) parameter(0)\n"
    "  j = s32[] get-tuple-element(s), index=0\n"
    "  i = s32[] get-tuple-element(s), index=1\n"
    "  acc = f32[3] get-tuple-element(s), index=2\n"
    "  one = s32[] constant(1)\n"
    "  fi = f32[] convert(i)\n"
    "  fis = f32[3] broadcast(fi), dimensions={}\n"
    "  sum = f32[3] add(acc, fis)\n"
    "  j1 = s32[] add(j, one)\n"
    "  ROOT next = (s32[], s32[], f32[3]) tuple(j1, i, sum)\n"
    "}\n"
    "outer_cond {\n"
    "  s = (s32[], f32[3]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  three = s32[] constant(3)\n"
    "  ROOT more = pred[] compare(i, three), direction=LT\n"
    "}\n"
    "outer_body {\n"
    "  s = (s32[], f32[3]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  acc = f32[3] get-tuple-element(s), index=1\n"
    "  zero = s32[] constant(0)\n"
    "  init = (s32[], s32[], f32[3]) tuple(zero, i, acc)\n"
    "  w = (s32[], s32[], f32[3]) while(init), condition=inner_cond, body=inner_body\n"
    "  one = s32[] constant(1)\n"
    "  i1 = s32[] add(i, one)\n"
    "  acc1 = f32[3] get-tuple-element(w), index=2\n"
    "  ROOT next = (s32[], f32[3]) tuple(i1, acc1)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[3] parameter(0)\n"
    "  zero = s32[] constant(0)\n"
    "  init = (s32[], f32[3]) tuple(zero, x)\n"
    "  ROOT w = (s32[], f32[3]) while(init), condition=outer_cond, body=outer_body\n"
    "}\n";

TEST(nested_while_loops_each_keep_their_own_state) {
  HostBuffer *args[1] = {0};
  random_arguments(nested_text, args, 5);
  HostBuffer *r = run_checked(nested_text, args, 1);
  if (r) {
    const float *x = args[0]->data, *y = r->elements[1]->data;
    EXPECT(*(int32_t *)r->elements[0]->data == 3, "outer count %d, want 3", *(int32_t *)r->elements[0]->data);
    for (int k = 0; k < 3; k++) {
      float want = x[k];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) want += (float)i;
      EXPECT(memcmp(&want, &y[k], sizeof want) == 0, "element %d: %g, want %g", k, y[k], want);
    }
  }
  host_buffer_free(r);
  host_buffer_free(args[0]);
}

/* The body returns a constant in a column-major layout: its bytes must be
 * laid out as the layout says, like the caller's state. */
static const char column_major_text[] =
    "HloModule column_major\n"
    "cond {\n"
    "  s = (s32[], f32[2,3]{0,1}) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(2)\n"
    "  ROOT more = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[2,3]{0,1}) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  k = f32[2,3]{0,1} constant({{1, 2, 3}, {4, 5, 6}})\n"
    "  one = s32[] constant(1)\n"
    "  i1 = s32[] add(i, one)\n"
    "  ROOT next = (s32[], f32[2,3]{0,1}) tuple(i1, k)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[2,3]{0,1} parameter(0)\n"
    "  zero = s32[] constant(0)\n"
    "  init = (s32[], f32[2,3]{0,1}) tuple(zero, x)\n"
    "  ROOT w = (s32[], f32[2,3]{0,1}) while(init), condition=cond, body=body\n"
    "}\n";

TEST(a_loop_body_constant_in_a_column_major_layout_keeps_its_layout) {
  HostBuffer *r = run_random(column_major_text, 2);
  if (r) {
    const float want[6] = {1, 2, 3, 4, 5, 6};  /* host buffers are row-major */
    EXPECT(memcmp(want, r->elements[1]->data, sizeof want) == 0, "the constant comes back as written");
  }
  host_buffer_free(r);
}

static const char indexed_text[] =
    "HloModule indexed\n"
    "b0 {\n"
    "  x = f32[4] parameter(0)\n"
    "  ROOT y = f32[4] negate(x)\n"
    "}\n"
    "b1 {\n"
    "  x = f32[4] parameter(0)\n"
    "  ROOT y = f32[4] add(x, x)\n"
    "}\n"
    "b2 {\n"
    "  x = f32[4] parameter(0)\n"
    "  ROOT y = f32[4] multiply(x, x)\n"
    "}\n"
    "ENTRY main {\n"
    "  i = s32[] parameter(0)\n"
    "  x = f32[4] parameter(1)\n"
    "  ROOT c = f32[4] conditional(i, x, x, x), branch_computations={b0, b1, b2}\n"
    "}\n";

TEST(a_conditional_index_out_of_range_runs_the_last_branch) {
  int32_t indices[5] = {0, 1, 2, 7, -1};
  int want_branch[5] = {0, 1, 2, 2, 2};
  HostBuffer *args[2] = {0};
  random_arguments(indexed_text, args, 9);
  for (int t = 0; t < 5; t++) {
    host_buffer_free(args[0]);
    args[0] = s32_scalar(indices[t]);
    HostBuffer *r = run_checked(indexed_text, args, 2);
    if (!r) continue;
    const float *x = args[1]->data, *y = r->data;
    for (int k = 0; k < 4; k++) {
      float want = want_branch[t] == 0 ? -x[k] : want_branch[t] == 1 ? x[k] + x[k] : x[k] * x[k];
      EXPECT(memcmp(&want, &y[k], sizeof want) == 0, "index %d, element %d: %g, want branch %d's %g", indices[t], k,
             y[k], want_branch[t], want);
    }
    host_buffer_free(r);
  }
  host_buffer_free(args[0]);
  host_buffer_free(args[1]);
}

/* A pred conditional inside a loop body, on a tuple operand, and a call. */
static const char branches_in_loop_text[] =
    "HloModule branches_in_loop\n"
    "plus {\n"
    "  p = (f32[], f32[]) parameter(0)\n"
    "  a = f32[] get-tuple-element(p), index=0\n"
    "  b = f32[] get-tuple-element(p), index=1\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "minus {\n"
    "  p = (f32[], f32[]) parameter(0)\n"
    "  a = f32[] get-tuple-element(p), index=0\n"
    "  b = f32[] get-tuple-element(p), index=1\n"
    "  ROOT s = f32[] subtract(a, b)\n"
    "}\n"
    "scale {\n"
    "  v = f32[6] parameter(0)\n"
    "  k = f32[] parameter(1)\n"
    "  ks = f32[6] broadcast(k), dimensions={}\n"
    "  ROOT r = f32[6] multiply(v, ks)\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[], f32[6]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  acc = f32[] get-tuple-element(s), index=1\n"
    "  xs = f32[6] get-tuple-element(s), index=2\n"
    "  x1 = f32[1] dynamic-slice(xs, i), dynamic_slice_sizes={1}\n"
    "  x = f32[] reshape(x1)\n"
    "  two = s32[] constant(2)\n"
    "  zero = s32[] constant(0)\n"
    "  parity = s32[] remainder(i, two)\n"
    "  even = pred[] compare(parity, zero), direction=EQ\n"
    "  args = (f32[], f32[]) tuple(acc, x)\n"
    "  next = f32[] conditional(even, args, args), true_computation=plus, false_computation=minus\n"
    "  one = s32[] constant(1)\n"
    "  i1 = s32[] add(i, one)\n"
    "  ROOT r = (s32[], f32[], f32[6]) tuple(i1, next, xs)\n"
    "}\n"
    "cond {\n"
    "  s = (s32[], f32[], f32[6]) parameter(0)\n"
    "  six = s32[] constant(6)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  ROOT more = pred[] compare(i, six), direction=LT\n"
    "}\n"
    "ENTRY main {\n"
    "  xs = f32[6] parameter(0)\n"
    "  zi = s32[] constant(0)\n"
    "  zf = f32[] constant(0)\n"
    "  init = (s32[], f32[], f32[6]) tuple(zi, zf, xs)\n"
    "  w = (s32[], f32[], f32[6]) while(init), condition=cond, body=body\n"
    "  total = f32[] get-tuple-element(w), index=1\n"
    "  ROOT scaled = f32[6] call(xs, total), to_apply=scale\n"
    "}\n";

TEST(a_conditional_in_a_loop_body_and_a_call_run_their_computations) {
  HostBuffer *args[1] = {0};
  random_arguments(branches_in_loop_text, args, 21);
  HostBuffer *r = run_checked(branches_in_loop_text, args, 1);
  if (r) {
    const float *x = args[0]->data, *y = r->data;
    float total = 0;
    for (int i = 0; i < 6; i++) total = i % 2 == 0 ? total + x[i] : total - x[i];
    for (int k = 0; k < 6; k++) {
      float want = x[k] * total;
      EXPECT(memcmp(&want, &y[k], sizeof want) == 0, "element %d: %g, want %g", k, y[k], want);
    }
  }
  host_buffer_free(r);
  host_buffer_free(args[0]);
}

static const char map_scan_text[] =
    "HloModule map_scan\n"
    "fma {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  xy = f32[] multiply(x, y)\n"
    "  one = f32[] constant(1)\n"
    "  ROOT r = f32[] add(xy, one)\n"
    "}\n"
    "pick {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  t = (f32[], f32[]) tuple(y, x)\n"
    "  first = f32[] get-tuple-element(t), index=0\n"
    "  ROOT r = f32[] subtract(first, x)\n"
    "}\n"
    "step {\n"
    "  slice = s32[2] parameter(0)\n"
    "  carry = s32[2] parameter(1)\n"
    "  sum = s32[2] add(carry, slice)\n"
    "  ROOT out = (s32[2], s32[2]) tuple(sum, sum)\n"
    "}\n"
    "ENTRY main {\n"
    "  a = f32[3,4] parameter(0)\n"
    "  b = f32[3,4] parameter(1)\n"
    "  n = s32[2,5] parameter(2)\n"
    "  init = s32[2] parameter(3)\n"
    "  m = f32[3,4] map(a, b), dimensions={0,1}, to_apply=fma\n"
    "  p = f32[3,4] map(a, b), dimensions={0,1}, to_apply=pick\n"
    "  fwd = (s32[2,5], s32[2]) scan(n, init), dimensions={1}, num_carries=1, to_apply=step\n"
    "  rev = (s32[2,5], s32[2]) scan(n, init), dimensions={1}, num_carries=1, is_reverse=true, to_apply=step\n"
    "  ROOT out = (f32[3,4], f32[3,4], (s32[2,5], s32[2]), (s32[2,5], s32[2])) tuple(m, p, fwd, rev)\n"
    "}\n";

static int count_opcode(const Module *m, Opcode op) {
  int n = 0;
  for (int k = 0; k < m->computation_count; k++)
    for (int i = 0; i < m->computations[k]->instruction_count; i++) n += m->computations[k]->instructions[i]->opcode == op;
  return n;
}

TEST(an_elementwise_map_is_inlined_any_other_runs_per_element_and_scan_per_step) {
  Status st;
  Executable *e = compile_text(map_scan_text, 1, &st);
  EXPECT(e, "compiles: %s", st.message);
  if (e) EXPECT(count_opcode(e->optimized, OP_MAP) == 1, "one map (the one with a tuple) left after inline-map, got %d",
                count_opcode(e->optimized, OP_MAP));
  executable_free(e);
  HostBuffer *r = run_random(map_scan_text, 3);
  if (r) {
    const float *m = r->elements[0]->data, *p = r->elements[1]->data;
    HostBuffer *args[4] = {0};
    random_arguments(map_scan_text, args, 3);
    const float *a = args[0]->data, *b = args[1]->data;
    int wrong = 0;
    for (int i = 0; i < 12; i++) {
      float fma = a[i] * b[i] + 1.0f, pick = b[i] - a[i];
      wrong += memcmp(&fma, &m[i], sizeof fma) != 0 || memcmp(&pick, &p[i], sizeof pick) != 0;
    }
    EXPECT(wrong == 0, "%d of 12 elements differ from x*y+1 or y-x", wrong);
    for (int i = 0; i < 4; i++) host_buffer_free(args[i]);
  }
  host_buffer_free(r);
}

static const char moves_text[] =
    "HloModule moves\n"
    "add {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(x, y)\n"
    "}\n"
    "wrapped {\n"
    "  a = f32[6] parameter(0)\n"
    "  b = f32[6] parameter(1)\n"
    "  ROOT m = f32[6] multiply(a, b)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[6] parameter(0)\n"
    "  y = f32[6] parameter(1)\n"
    "  start = ((f32[6], f32[6]), f32[6], s32[]) async-start(x, y), calls=wrapped\n"
    "  done = f32[6] async-done(start), calls=wrapped\n"
    "  ar = f32[6] all-reduce(x), replica_groups={}, to_apply=add\n"
    "  cp = f32[6] collective-permute(y), source_target_pairs={}\n"
    "  t = (f32[6], f32[6]) tuple(x, y)\n"
    "  b = (f32[6], f32[6]) opt-barrier(t)\n"
    "  d = s32[] get-dimension-size(x), dimensions={0}\n"
    "  rid = u32[] replica-id()\n"
    "  ROOT r = (f32[6], f32[6], f32[6], (f32[6], f32[6]), s32[], u32[]) tuple(done, ar, cp, b, d, rid)\n"
    "}\n";

TEST(one_replica_collectives_async_pairs_and_size_ops_are_copies_and_constants) {
  HostBuffer *r = run_random(moves_text, 4);
  if (r) {
    const float *cp = r->elements[2]->data;
    int nonzero = 0;
    for (int k = 0; k < 6; k++) nonzero += cp[k] != 0;
    EXPECT(nonzero == 0, "a permute with no pair delivers zeros, %d nonzero", nonzero);
    EXPECT(*(int32_t *)r->elements[4]->data == 6, "get-dimension-size gives %d, want 6", *(int32_t *)r->elements[4]->data);
    EXPECT(*(uint32_t *)r->elements[5]->data == 0, "replica-id gives %u, want 0", *(uint32_t *)r->elements[5]->data);
  }
  host_buffer_free(r);
}

static const char batch_norm_text[] =
    "HloModule batch_norm\n"
    "ENTRY main {\n"
    "  x = f32[4,3,5] parameter(0)\n"
    "  scale = f32[3] parameter(1)\n"
    "  offset = f32[3] parameter(2)\n"
    "  dy = f32[4,3,5] parameter(3)\n"
    "  t = (f32[4,3,5], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1\n"
    "  mean = f32[3] get-tuple-element(t), index=1\n"
    "  var = f32[3] get-tuple-element(t), index=2\n"
    "  y = f32[4,3,5] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.001, feature_index=1\n"
    "  g = (f32[4,3,5], f32[3], f32[3]) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=1\n"
    "  ROOT r = ((f32[4,3,5], f32[3], f32[3]), f32[4,3,5], (f32[4,3,5], f32[3], f32[3])) tuple(t, y, g)\n"
    "}\n";

TEST(batch_norm_ops_expand_to_primitive_ops_that_match_the_evaluator) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(batch_norm_text, strlen(batch_norm_text), "test.hlo", &st);
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  ctx.options.verify_each_pass = true;
  bool ok = m && optimize_module(m, &ctx, &st);
  EXPECT(ok, "optimizes: %s", st.message);
  int left = 0;
  for (int k = 0; ok && k < m->computation_count; k++)
    for (int i = 0; i < m->computations[k]->instruction_count; i++) {
      Opcode op = m->computations[k]->instructions[i]->opcode;
      left += op == OP_BATCH_NORM_TRAINING || op == OP_BATCH_NORM_INFERENCE || op == OP_BATCH_NORM_GRAD;
    }
  EXPECT(left == 0, "%d batch-norm ops are left after the optimizer", left);
  opt_context_free(&ctx);
  module_free(m);
  HostBuffer *r = run_random(batch_norm_text, 8);
  host_buffer_free(r);
}

static const char rng_text[] =
    "HloModule rng\n"
    "ENTRY main {\n"
    "  s2 = u64[2] parameter(0)\n"
    "  s3 = u64[3] parameter(1)\n"
    "  a = (u64[2], u32[5,3]) rng-bit-generator(s2), algorithm=rng_three_fry\n"
    "  b = (u64[2], u64[4]) rng-bit-generator(s2), algorithm=rng_three_fry\n"
    "  c = (u64[3], u32[7]) rng-bit-generator(s3), algorithm=rng_philox\n"
    "  d = (u64[2], u8[9]) rng-bit-generator(s2), algorithm=rng_default\n"
    "  ROOT r = ((u64[2], u32[5,3]), (u64[2], u64[4]), (u64[3], u32[7]), (u64[2], u8[9])) tuple(a, b, c, d)\n"
    "}\n";

TEST(rng_bit_generator_gives_the_evaluators_bits_for_each_algorithm) {
  HostBuffer *r = run_random(rng_text, 12);
  if (r) {
    const uint64_t *state = r->elements[0]->elements[0]->data;
    EXPECT(state[1] != 0 || state[0] != 0, "a state comes back");
  }
  host_buffer_free(r);
}

static const char ragged_text[] =
    "HloModule ragged\n"
    "ENTRY main {\n"
    "  src = f32[5,2] parameter(0)\n"
    "  dst = f32[6,2] parameter(1)\n"
    "  in_off = s32[2] parameter(2)\n"
    "  send = s32[2] parameter(3)\n"
    "  out_off = s32[2] parameter(4)\n"
    "  ROOT r = f32[6,2] ragged-all-to-all(src, dst, in_off, send, out_off, send), replica_groups={{0}}\n"
    "}\n";

static HostBuffer *s32_pair(int32_t a, int32_t b) {
  Status st;
  int64_t two = 2;
  Shape s = shape_array(TYPE_S32, 1, &two);
  int32_t v[2] = {a, b};
  return host_buffer_create(&s, v, &st);
}

TEST(ragged_all_to_all_moves_rows_and_reports_offsets_out_of_range_at_run_time) {
  HostBuffer *args[5] = {0};
  random_arguments(ragged_text, args, 30);
  for (int i = 2; i < 5; i++) host_buffer_free(args[i]);
  args[2] = s32_pair(0, 3), args[3] = s32_pair(2, 1), args[4] = s32_pair(4, 0);
  HostBuffer *r = run_checked(ragged_text, args, 5);
  if (r) {
    const float *src = args[0]->data, *dst = args[1]->data, *got = r->data;
    /* rows 0,1 of src land at rows 4,5; row 3 at row 0; rows 1..3 keep dst's */
    float want[12];
    memcpy(want, dst, sizeof want);
    memcpy(want + 8, src, 4 * sizeof(float));
    memcpy(want, src + 6, 2 * sizeof(float));
    EXPECT(memcmp(want, got, sizeof want) == 0, "rows moved as the offsets say");
  }
  host_buffer_free(r);
  host_buffer_free(args[4]);
  args[4] = s32_pair(5, 0);  /* two rows from row 5 of a 6-row output */
  Status st;
  Executable *e = compile_text(ragged_text, 1, &st);
  r = e ? executable_run(e, args, 5, &st) : NULL;
  EXPECT(e && !r && st.code == STATUS_RUNTIME_ERROR && strstr(st.message, "out of range"),
         "a run-time error (exit 1) naming the update: %s", st.message);
  host_buffer_free(r);
  executable_free(e);
  for (int i = 0; i < 5; i++) host_buffer_free(args[i]);
}

static const char refused_in_body_text[] =
    "HloModule refused_in_body\n"
    "cond {\n"
    "  s = f32[2,2] parameter(0)\n"
    "  ROOT f = pred[] constant(false)\n"
    "}\n"
    "body {\n"
    "  s = f32[2,2] parameter(0)\n"
    "  g = u64[2] rng-get-and-update-state(), delta=1\n"
    "  ROOT l = f32[2,2] copy(s)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[2,2] parameter(0)\n"
    "  ROOT w = f32[2,2] while(x), condition=cond, body=body\n"
    "}\n";

TEST(what_a_loop_body_cannot_compile_is_a_located_refusal_naming_it) {
  Status st;
  Executable *e = compile_text(refused_in_body_text, 1, &st);
  EXPECT(!e, "does not compile");
  EXPECT(st.code == STATUS_UNSUPPORTED && strstr(st.message, "(rng-get-and-update-state)") && st.loc.line == 8,
         "an unsupported-op error at line 8 naming the rng-get-and-update-state: %s (line %d)", st.message, st.loc.line);
  executable_free(e);
}

int main(void) {
  RUN(a_while_runs_its_body_until_the_condition_is_false);
  RUN(a_while_whose_condition_is_false_at_once_returns_its_init);
  RUN(nested_while_loops_each_keep_their_own_state);
  RUN(a_loop_body_constant_in_a_column_major_layout_keeps_its_layout);
  RUN(a_conditional_index_out_of_range_runs_the_last_branch);
  RUN(a_conditional_in_a_loop_body_and_a_call_run_their_computations);
  RUN(an_elementwise_map_is_inlined_any_other_runs_per_element_and_scan_per_step);
  RUN(one_replica_collectives_async_pairs_and_size_ops_are_copies_and_constants);
  RUN(batch_norm_ops_expand_to_primitive_ops_that_match_the_evaluator);
  RUN(rng_bit_generator_gives_the_evaluators_bits_for_each_algorithm);
  RUN(ragged_all_to_all_moves_rows_and_reports_offsets_out_of_range_at_run_time);
  RUN(what_a_loop_body_cannot_compile_is_a_located_refusal_naming_it);
  return test_summary();
}
