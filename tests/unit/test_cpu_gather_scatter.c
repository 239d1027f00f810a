/* gather, reduce-window, scatter and select-and-scatter on the CPU backend
 * (src/opt/lower_gather.c, lower_window.c, lower_scatter.c,
 * src/emit_x86/cpu_scatter.c), at their edges: clamped gather starts,
 * padding and dilation holes that a reduction skips, scatter windows that
 * reach past the operand, duplicate scatter indices applied in order, ties
 * in select-and-scatter. Every expected value is worked out by hand in the
 * comment above it; every module runs at 1 and 2 threads, which must give
 * the same bytes. */
#include <stdlib.h>
#include <string.h>

#include "ir/kernel/kernel.h"
#include "opt/lower.h"
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

static HostBuffer *buffer_of(ElementType t, int rank, const int64_t *dims, const void *data) {
  Status st;
  status_clear(&st);
  Shape s = shape_array(t, rank, dims);
  return host_buffer_create(&s, data, &st);
}

static bool buffers_identical(const HostBuffer *a, const HostBuffer *b) {
  if (a->shape.type != b->shape.type) return false;
  if (shape_is_tuple(&a->shape)) {
    if (a->shape.tuple_count != b->shape.tuple_count) return false;
    for (int i = 0; i < a->shape.tuple_count; i++)
      if (!buffers_identical(a->elements[i], b->elements[i])) return false;
    return true;
  }
  return shape_same_dims(&a->shape, &b->shape) && memcmp(a->data, b->data, (size_t)shape_byte_size(&a->shape)) == 0;
}

/* Runs text at 1 and 2 threads, checks both give the same bytes, and
 * returns the first (NULL, after a failed expectation, if it did not run). */
static HostBuffer *run_on_cpu(const char *text, HostBuffer **args, int n) {
  Status st;
  HostBuffer *out[2] = {NULL, NULL};
  for (int t = 0; t < 2; t++) {
    Executable *exe = compile_text(text, t + 1, &st);
    EXPECT(exe != NULL, "compiles: %s", st.message);
    if (exe) out[t] = executable_run(exe, args, n, &st);
    EXPECT(!exe || out[t], "runs: %s", st.message);
    executable_free(exe);
  }
  if (out[0] && out[1]) EXPECT(buffers_identical(out[0], out[1]), "1 and 2 threads give the same bytes");
  host_buffer_free(out[1]);
  return out[0];
}

static void expect_s32(const HostBuffer *b, const int32_t *want, int64_t n, const char *what) {
  const int32_t *got = b ? b->data : NULL;
  for (int64_t i = 0; got && i < n; i++)
    EXPECT(got[i] == want[i], "%s[%lld]: want %d, got %d", what, (long long)i, want[i], got[i]);
}

static void expect_f32(const HostBuffer *b, const float *want, int64_t n, const char *what) {
  const float *got = b ? b->data : NULL;
  for (int64_t i = 0; got && i < n; i++)
    EXPECT(got[i] == want[i], "%s[%lld]: want %g, got %g", what, (long long)i, want[i], got[i]);
}

static void free_all(HostBuffer **args, int n, HostBuffer *out) {
  for (int i = 0; i < n; i++) host_buffer_free(args[i]);
  host_buffer_free(out);
}

/* Slices of 3 out of x = 10..15: starts clamp into [0, 6-3]. */
TEST(gather_clamps_each_start_so_the_slice_stays_inside_the_operand) {
  const char *text =
      "HloModule g\nENTRY main {\n"
      "  x = s32[6] parameter(0)\n  i = s32[4,1] parameter(1)\n  u = u64[2,1] parameter(2)\n"
      "  a = s32[4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={3}\n"
      "  b = s32[2,3] gather(x, u), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={3}\n"
      "  ROOT t = (s32[4,3], s32[2,3]) tuple(a, b)\n}\n";
  int32_t x[6] = {10, 11, 12, 13, 14, 15}, i[4] = {-5, 0, 2, 100};
  uint64_t u[2] = {UINT64_MAX, 1};
  int64_t six = 6, i_dims[2] = {4, 1}, u_dims[2] = {2, 1};
  HostBuffer *args[3] = {buffer_of(TYPE_S32, 1, &six, x), buffer_of(TYPE_S32, 2, i_dims, i),
                         buffer_of(TYPE_U64, 2, u_dims, u)};
  HostBuffer *out = run_on_cpu(text, args, 3);
  /* -5 -> 0, 0, 2, 100 -> 3; a u64 past INT64_MAX clamps high (3), not to 0. */
  const int32_t want_a[12] = {10, 11, 12, 10, 11, 12, 12, 13, 14, 13, 14, 15};
  const int32_t want_b[6] = {13, 14, 15, 11, 12, 13};
  if (out) expect_s32(out->elements[0], want_a, 12, "a"), expect_s32(out->elements[1], want_b, 6, "b");
  free_all(args, 3, out);
}

/* Padding and base-dilation holes hold no element: the accumulator starts
 * at init once and only elements are added.
 *   a: x = {1,2,4} dilated by 2 and padded 1 each side: P 1 h 2 h 4 P;
 *      windows of 2: (P,1) (1,h) (h,2) (2,h) (h,4) (4,P) -> 10 + {1,1,2,2,4,4}.
 *   b: y = {1,2,4,8,16}, a window of 2 dilated by 2 (span 3), stride 2:
 *      y0+y2 = 5, y2+y4 = 20. */
TEST(reduce_window_skips_padding_and_dilation_holes_without_adding_init_again) {
  const char *text =
      "HloModule rw\nadd { p = f32[] parameter(0)\n q = f32[] parameter(1)\n ROOT s = f32[] add(p, q) }\n"
      "ENTRY main {\n  x = f32[3] parameter(0)\n  y = f32[5] parameter(1)\n"
      "  ten = f32[] constant(10)\n  zero = f32[] constant(0)\n"
      "  a = f32[6] reduce-window(x, ten), window={size=2 pad=1_1 lhs_dilate=2}, to_apply=add\n"
      "  b = f32[2] reduce-window(y, zero), window={size=2 stride=2 rhs_dilate=2}, to_apply=add\n"
      "  ROOT t = (f32[6], f32[2]) tuple(a, b)\n}\n";
  float x[3] = {1, 2, 4}, y[5] = {1, 2, 4, 8, 16};
  int64_t three = 3, five = 5;
  HostBuffer *args[2] = {buffer_of(TYPE_F32, 1, &three, x), buffer_of(TYPE_F32, 1, &five, y)};
  HostBuffer *out = run_on_cpu(text, args, 2);
  const float want_a[6] = {11, 11, 12, 12, 14, 14}, want_b[2] = {5, 20};
  if (out) expect_f32(out->elements[0], want_a, 6, "a"), expect_f32(out->elements[1], want_b, 2, "b");
  free_all(args, 2, out);
}

/* Windows of 2 into s32[6], combined by f(old, new) = old*10 + new, which
 * shows the order. Index 5 reaches past the end (5 > 6-2) and -1 before
 * the start: both windows are dropped whole. Index 1 comes twice:
 *   out[1] = (1*10 + 2)*10 + 8 = 128, out[2] = (1*10 + 3)*10 + 9 = 139. */
TEST(scatter_drops_windows_reaching_outside_and_applies_repeats_in_update_order) {
  const char *text =
      "HloModule sc\nshift { old = s32[] parameter(0)\n new = s32[] parameter(1)\n ten = s32[] constant(10)\n"
      " scaled = s32[] multiply(old, ten)\n ROOT r = s32[] add(scaled, new) }\n"
      "ENTRY main {\n  x = s32[6] parameter(0)\n  i = s32[4,1] parameter(1)\n  u = s32[4,2] parameter(2)\n"
      "  ROOT s = s32[6] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=shift\n}\n";
  int32_t x[6] = {1, 1, 1, 1, 1, 1}, i[4] = {1, 5, -1, 1}, u[8] = {2, 3, 4, 5, 6, 7, 8, 9};
  int64_t six = 6, i_dims[2] = {4, 1}, u_dims[2] = {4, 2};
  HostBuffer *args[3] = {buffer_of(TYPE_S32, 1, &six, x), buffer_of(TYPE_S32, 2, i_dims, i),
                         buffer_of(TYPE_S32, 2, u_dims, u)};
  HostBuffer *out = run_on_cpu(text, args, 3);
  const int32_t want[6] = {1, 128, 139, 1, 1, 1};
  expect_s32(out, want, 6, "s");
  int32_t *kept = args[0]->data;
  EXPECT(kept[1] == 1, "the operand is left as it was: %d", kept[1]);
  free_all(args, 3, out);
}

/* operand {-2,-2,-5,7}, windows of 2, stride 1, one pad in front:
 *   (P,-2) -> 0 (padding is never picked, though 0 > -2 would win)
 *   (-2,-2) -> 0 (a tie: select(a,b) = a >= b keeps the first)
 *   (-2,-5) -> 1,  (-5,7) -> 3.
 * source {1,2,4,8} added onto init 0.5: {0.5+1+2, 0.5+4, 0.5, 0.5+8}. */
static const char select_and_scatter_text[] =
    "HloModule ss\nge { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
    " ROOT r = pred[] compare(a, b), direction=GE }\n"
    "add { p = f32[] parameter(0)\n q = f32[] parameter(1)\n ROOT s = f32[] add(p, q) }\n"
    "ENTRY main {\n  x = f32[4] parameter(0)\n  g = f32[4] parameter(1)\n  half = f32[] constant(0.5)\n"
    "  ROOT r = f32[4] select-and-scatter(x, g, half), window={size=2 pad=1_0}, select=ge, scatter=add\n}\n";
static const float ss_operand[4] = {-2, -2, -5, 7}, ss_source[4] = {1, 2, 4, 8};
static const float ss_want[4] = {3.5f, 4.5f, 0.5f, 8.5f};

TEST(select_and_scatter_picks_the_first_of_tied_elements_and_never_padding) {
  int64_t four = 4;
  HostBuffer *args[2] = {buffer_of(TYPE_F32, 1, &four, ss_operand), buffer_of(TYPE_F32, 1, &four, ss_source)};
  HostBuffer *out = run_on_cpu(select_and_scatter_text, args, 2);
  expect_f32(out, ss_want, 4, "r");
  free_all(args, 2, out);
}

/* The same two kernels through the kernel interpreter: part 0's picks are
 * the positions worked out above, part 1 the result. */
TEST(select_and_scatter_kernels_run_in_the_kernel_interpreter) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(select_and_scatter_text, strlen(select_and_scatter_text), "ss.hlo", &st);
  EXPECT(m != NULL, "%s", st.message);
  if (!m) return;
  const Instruction *inst = m->entry->root;
  Kernel *pick = lower_select_and_scatter(inst, 0, &st);
  Kernel *scatter = pick ? lower_select_and_scatter(inst, 1, &st) : NULL;
  EXPECT(pick && scatter, "lowers: %s", st.message);
  int64_t four = 4;
  Shape f4 = shape_array(TYPE_F32, 1, &four), scalar = shape_scalar(TYPE_F32), s4 = shape_array(TYPE_S64, 1, &four);
  Literal *x = literal_create(&f4), *g = literal_create(&f4), *init = literal_create(&scalar);
  Literal *picks = literal_create(&s4), *result = literal_create(&f4);
  memcpy(x->data, ss_operand, sizeof ss_operand);
  memcpy(g->data, ss_source, sizeof ss_source);
  literal_set_f64(init, 0, 0.5);
  Literal *inputs[4] = {x, g, init, picks};
  bool ok = scatter && kernel_eval(pick, inputs, &picks, &st) && kernel_eval(scatter, inputs, &result, &st);
  EXPECT(ok, "runs: %s", st.message);
  const int64_t want_picks[4] = {0, 0, 1, 3};
  for (int i = 0; ok && i < 4; i++) {
    EXPECT(literal_get_s64(picks, i) == want_picks[i], "pick %d: want %lld, got %lld", i, (long long)want_picks[i],
           (long long)literal_get_s64(picks, i));
    EXPECT(literal_get_f64(result, i) == ss_want[i], "r[%d]: want %g, got %g", i, ss_want[i],
           literal_get_f64(result, i));
  }
  literal_free(x), literal_free(g), literal_free(init), literal_free(picks), literal_free(result);
  kernel_free(pick);
  kernel_free(scatter);
  module_free(m);
}

/* Many float updates onto few elements: rounding depends on the order, so
 * equal bytes at 1 and 2 threads (run_on_cpu) mean one order. */
TEST(scatter_and_reduce_window_give_the_same_bytes_at_every_thread_count) {
  const char *text =
      "HloModule det\nadd { p = f32[] parameter(0)\n q = f32[] parameter(1)\n ROOT s = f32[] add(p, q) }\n"
      "ENTRY main {\n  x = f32[64] parameter(0)\n  i = s32[4096,1] parameter(1)\n  u = f32[4096] parameter(2)\n"
      "  y = f32[64,64] parameter(3)\n  zero = f32[] constant(0)\n"
      "  s = f32[64] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
      "  w = f32[32,32] reduce-window(y, zero), window={size=3x3 stride=2x2 pad=1_1x1_1}, to_apply=add\n"
      "  ROOT t = (f32[64], f32[32,32]) tuple(s, w)\n}\n";
  float *x = mem_calloc(64, sizeof *x), *u = mem_calloc(4096, sizeof *u), *y = mem_calloc(4096, sizeof *y);
  int32_t *i = mem_calloc(4096, sizeof *i);
  unsigned seed = 7;
  for (int k = 0; k < 4096; k++) {
    seed = seed * 1103515245u + 12345u;
    i[k] = (int32_t)((seed >> 8) % 70) - 3; /* some out of bounds */
    u[k] = (float)((seed >> 4) % 100003) / 997.0f;
    y[k] = (float)((seed >> 12) % 1009) / 101.0f - 5.0f;
  }
  int64_t n64 = 64, i_dims[2] = {4096, 1}, n4096 = 4096, y_dims[2] = {64, 64};
  HostBuffer *args[4] = {buffer_of(TYPE_F32, 1, &n64, x), buffer_of(TYPE_S32, 2, i_dims, i),
                         buffer_of(TYPE_F32, 1, &n4096, u), buffer_of(TYPE_F32, 2, y_dims, y)};
  HostBuffer *out = run_on_cpu(text, args, 4);
  EXPECT(out != NULL, "runs");
  free_all(args, 4, out);
  free(x), free(u), free(y), free(i);
}

/* Lowers the root of text alone (NULL, after a failed expectation, if it
 * does not lower); *m must be freed. */
static Kernel *lower_root(const char *text, Module **m) {
  Status st;
  status_clear(&st);
  *m = parse_module(text, strlen(text), "inline.hlo", &st);
  EXPECT(*m != NULL, "%s", st.message);
  Kernel *k = *m ? lower_to_kernel((*m)->entry->root, &st) : NULL;
  EXPECT(!*m || k, "lowers: %s", st.message);
  return k;
}

/* An embedding lookup: one load of the start index, clamped (maximum with
 * 0, minimum with 10-1), and one load of the table at it. */
TEST(gather_lowers_to_a_clamped_index_load_then_a_load_of_the_operand) {
  Module *m;
  Kernel *k = lower_root("HloModule g\nENTRY main {\n  t = f32[10,4] parameter(0)\n  i = s32[5] parameter(1)\n"
                         "  ROOT r = f32[5,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, "
                         "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}\n}\n",
                         &m);
  int loads[2] = {0, 0}, clamps = 0;
  for (int i = 0; k && i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->kop == KOP_LOAD) loads[op->buffer]++;
    if (op->kop == KOP_HLO && (op->op == OP_MAXIMUM || op->op == OP_MINIMUM) && op->type == TYPE_S64) clamps++;
  }
  EXPECT(!k || (loads[0] == 1 && loads[1] == 1 && clamps == 2), "loads of table %d, of indices %d; clamps %d",
         loads[0], loads[1], clamps);
  kernel_free(k);
  module_free(m);
}

/* Index constants made while the window loop is emitted run once, before
 * it: the kernel lists every PRE op before every REDUCE op, and every POST
 * op last, as the code generators' register allocation expects. */
TEST(a_reduce_window_kernel_lists_its_ops_in_the_order_they_run) {
  Module *m;
  Kernel *k = lower_root("HloModule rw\nmx { p = f32[] parameter(0)\n q = f32[] parameter(1)\n"
                         " ROOT s = f32[] maximum(p, q) }\nENTRY main {\n  x = f32[9,9] parameter(0)\n"
                         "  c = f32[] constant(0)\n  ROOT r = f32[5,5] reduce-window(x, c), "
                         "window={size=3x3 stride=2x2 pad=1_1x1_1}, to_apply=mx\n}\n",
                         &m);
  EXPECT(!k || (k->kind == KERNEL_REDUCE && k->reduce_rank == 2), "a reduce kernel over the 3x3 window");
  for (int i = 1; k && i < k->op_count; i++)
    EXPECT(k->ops[i - 1].block <= k->ops[i].block, "op %d (block %d) after op %d (block %d)", i,
           (int)k->ops[i].block, i - 1, (int)k->ops[i - 1].block);
  kernel_free(k);
  module_free(m);
}

/* An empty value the program computes has no storage: a window over
 * padding alone and a select-and-scatter with no placements read none of
 * it. reduce-window of f32[0] with window 2 and padding 1_1 has one
 * placement, over two padding positions: init, 0.5. select-and-scatter over
 * f32[1,4] with a 2x2 window has no placement (one row), so its source is
 * f32[0,2] and every result element is init, 2.5. */
static const char empty_windows_text[] =
    "HloModule empty_windows\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "ge { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT p = pred[] compare(a, b), direction=GE }\n"
    "ENTRY main {\n"
    "  e = f32[0] parameter(0)\n"
    "  x = f32[1,4] parameter(1)\n"
    "  s = f32[0,2] parameter(2)\n"
    "  n = f32[0] negate(e)\n"
    "  half = f32[] constant(0.5)\n"
    "  w = f32[1] reduce-window(n, half), window={size=2 pad=1_1}, to_apply=add\n"
    "  m = f32[0,2] negate(s)\n"
    "  init = f32[] constant(2.5)\n"
    "  t = f32[1,4] select-and-scatter(x, m, init), window={size=2x2 stride=2x2}, select=ge, scatter=add\n"
    "  ROOT r = (f32[1], f32[1,4]) tuple(w, t)\n"
    "}\n";

TEST(windows_over_empty_computed_values_read_nothing_and_give_init) {
  float none = 0, x[4] = {3, -1, 4, 1};
  int64_t e_dims[1] = {0}, x_dims[2] = {1, 4}, s_dims[2] = {0, 2};
  HostBuffer *args[3] = {buffer_of(TYPE_F32, 1, e_dims, &none), buffer_of(TYPE_F32, 2, x_dims, x),
                         buffer_of(TYPE_F32, 2, s_dims, &none)};
  HostBuffer *out = run_on_cpu(empty_windows_text, args, 3);
  const float window[1] = {0.5f}, scattered[4] = {2.5f, 2.5f, 2.5f, 2.5f};
  if (out) expect_f32(out->elements[0], window, 1, "reduce-window");
  if (out) expect_f32(out->elements[1], scattered, 4, "select-and-scatter");
  free_all(args, 3, out);
}

/* A u64 start of 2^63 or 2^64 - 1 is large, not negative: dynamic-slice
 * of 3 from 0..7 clamps it to 8 - 3 = 5 and reads {5, 6, 7}; an s8 start
 * of -128 clamps to 0 and reads {0, 1, 2}. */
static const char unsigned_start_text[] =
    "HloModule unsigned_start\n"
    "ENTRY main {\n"
    "  x = f32[8] iota(), iota_dimension=0\n"
    "  i = u64[] parameter(0)\n"
    "  j = u64[] parameter(1)\n"
    "  k = s8[] parameter(2)\n"
    "  a = f32[3] dynamic-slice(x, i), dynamic_slice_sizes={3}\n"
    "  b = f32[3] dynamic-slice(x, j), dynamic_slice_sizes={3}\n"
    "  c = f32[3] dynamic-slice(x, k), dynamic_slice_sizes={3}\n"
    "  ROOT r = (f32[3], f32[3], f32[3]) tuple(a, b, c)\n"
    "}\n";

TEST(dynamic_slice_clamps_a_u64_start_past_2_to_the_63_high) {
  uint64_t half = (uint64_t)1 << 63, all = UINT64_MAX;
  int8_t lowest = INT8_MIN;
  HostBuffer *args[3] = {buffer_of(TYPE_U64, 0, NULL, &half), buffer_of(TYPE_U64, 0, NULL, &all),
                         buffer_of(TYPE_S8, 0, NULL, &lowest)};
  HostBuffer *out = run_on_cpu(unsigned_start_text, args, 3);
  const float high[3] = {5, 6, 7}, low[3] = {0, 1, 2};
  if (out) expect_f32(out->elements[0], high, 3, "start 2^63");
  if (out) expect_f32(out->elements[1], high, 3, "start 2^64 - 1");
  if (out) expect_f32(out->elements[2], low, 3, "start -128");
  free_all(args, 3, out);
}

int main(void) {
  RUN(gather_lowers_to_a_clamped_index_load_then_a_load_of_the_operand);
  RUN(a_reduce_window_kernel_lists_its_ops_in_the_order_they_run);
  RUN(gather_clamps_each_start_so_the_slice_stays_inside_the_operand);
  RUN(reduce_window_skips_padding_and_dilation_holes_without_adding_init_again);
  RUN(scatter_drops_windows_reaching_outside_and_applies_repeats_in_update_order);
  RUN(select_and_scatter_picks_the_first_of_tied_elements_and_never_padding);
  RUN(select_and_scatter_kernels_run_in_the_kernel_interpreter);
  RUN(scatter_and_reduce_window_give_the_same_bytes_at_every_thread_count);
  RUN(windows_over_empty_computed_values_read_nothing_and_give_init);
  RUN(dynamic_slice_clamps_a_u64_start_past_2_to_the_63_high);
  return test_summary();
}
