/* The GPU backend's control flow (src/emit_ptx/gpu_control.c) on the fake
 * libcuda with FAKE_CUDA_EXECUTE=1, so every kernel runs on the host SIMT
 * simulator and results are real. Each module is also run by the
 * interpreter (the reference evaluator) and the two results must have the
 * same bits: loops of 0, 1 and several trips (the trace shows one pred
 * download per test of the condition), a loop that swaps two leaves of its
 * state, a loop whose body and condition launch nothing, each branch of a
 * conditional, an index out of range (the last branch), a pred
 * conditional, a conditional inside a loop body, the collectives of one
 * replica and the async pairs, and a run on device buffers. Error paths: a failing device-to-device copy and a failing pred
 * download are located at the while. The kernels inside a body assemble
 * with ptxas for sm_80 and sm_90a (skipped with a message without ptxas). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit_ptx/gpu_program.h"
#include "runtime/executable.h"
#include "tool_files.h"
#include "../test.h"

static char fake_driver[4096], trace_path[4096], ptxas[4096];

static void use_simulator(void) {
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_SAVE_PTX");
  unsetenv("FAKE_CUDA_CAPABILITY");
  setenv("FAKE_CUDA_TRACE", trace_path, 1);
  unlink(trace_path);
}

static Executable *compile_on(const char *text, axle_backend_t backend, Status *st) {
  status_clear(st);
  Module *m = parse_module(text, strlen(text), "control.hlo", st);
  if (!m) return NULL;
  ExecutableOptions options;
  executable_options_default(&options, backend);
  Executable *exe = executable_compile(m, &options, st);
  module_free(m);
  return exe;
}

/* The same shapes and the same bytes, leaf by leaf. */
static bool same_bits(const HostBuffer *a, const HostBuffer *b) {
  if (shape_is_tuple(&a->shape) != shape_is_tuple(&b->shape)) return false;
  if (shape_is_tuple(&a->shape)) {
    if (a->shape.tuple_count != b->shape.tuple_count) return false;
    for (int i = 0; i < a->shape.tuple_count; i++)
      if (!same_bits(a->elements[i], b->elements[i])) return false;
    return true;
  }
  size_t bytes = (size_t)shape_byte_size(&a->shape);
  return bytes == (size_t)shape_byte_size(&b->shape) && (bytes == 0 || memcmp(a->data, b->data, bytes) == 0);
}

/* Runs text on the GPU (simulated) and on the interpreter with the same
 * arguments; true when the results have the same bits. */
static bool gpu_matches_interpreter(const char *label, const char *text, HostBuffer *const *args, int arg_count) {
  Status st;
  Executable *gpu = compile_on(text, AXLE_BACKEND_GPU, &st);
  EXPECT(gpu != NULL, "%s: %s", label, st.message);
  Executable *interp = compile_on(text, AXLE_BACKEND_INTERP, &st);
  EXPECT(interp != NULL, "%s: the interpreter: %s", label, st.message);
  HostBuffer *got = gpu ? executable_run(gpu, args, arg_count, &st) : NULL;
  EXPECT(!gpu || got, "%s: %s", label, st.message);
  HostBuffer *want = interp ? executable_run(interp, args, arg_count, &st) : NULL;
  bool same = got && want && same_bits(got, want);
  EXPECT(!got || !want || same, "%s: the GPU's result differs from the interpreter's", label);
  host_buffer_free(got);
  host_buffer_free(want);
  executable_free(gpu);
  executable_free(interp);
  return same;
}

static HostBuffer *s32_scalar(int32_t v) {
  Status st;
  Shape s = {.type = TYPE_S32, .rank = 0};
  return host_buffer_create(&s, &v, &st);
}

static HostBuffer *pred_scalar(bool v) {
  Status st;
  Shape s = {.type = TYPE_PRED, .rank = 0};
  uint8_t b = v;
  return host_buffer_create(&s, &b, &st);
}

static HostBuffer *f32_vector(const float *values, int n) {
  Status st;
  Shape s = {.type = TYPE_F32, .rank = 1, .dims = {n}, .minor_to_major = {0}};
  return host_buffer_create(&s, values, &st);
}

static const float x_values[4] = {0.5f, -1.25f, 3.0f, 1e-3f};

/* i from 0 while i < n: x = x * 2 + 1; the trip count is the argument n. */
static const char counted_loop[] =
    "HloModule counted_loop\n"
    "cond {\n  s = (s32[], s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] get-tuple-element(s), index=1\n  ROOT more = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n  s = (s32[], s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] get-tuple-element(s), index=1\n  x = f32[4] get-tuple-element(s), index=2\n"
    "  one = s32[] constant(1)\n  next_i = s32[] add(i, one)\n  two = f32[] constant(2)\n"
    "  twos = f32[4] broadcast(two), dimensions={}\n  onef = f32[] constant(1)\n"
    "  ones = f32[4] broadcast(onef), dimensions={}\n  d = f32[4] multiply(x, twos)\n"
    "  next_x = f32[4] add(d, ones)\n  ROOT t = (s32[], s32[], f32[4]) tuple(next_i, n, next_x)\n}\n"
    "ENTRY e {\n  n = s32[] parameter(0)\n  x = f32[4] parameter(1)\n  zero = s32[] constant(0)\n"
    "  init = (s32[], s32[], f32[4]) tuple(zero, n, x)\n"
    "  loop = (s32[], s32[], f32[4]) while(init), condition=cond, body=body\n"
    "  ROOT r = f32[4] get-tuple-element(loop), index=2\n}\n";

TEST(a_loop_runs_its_trips_and_downloads_the_pred_once_per_test) {
  int trips[] = {0, 1, 5};
  for (int k = 0; k < 3; k++) {
    use_simulator();
    HostBuffer *args[2] = {s32_scalar(trips[k]), f32_vector(x_values, 4)};
    char label[64];
    snprintf(label, sizeof label, "%d trips", trips[k]);
    gpu_matches_interpreter(label, counted_loop, args, 2);
    /* trips + 1 tests of the condition, then the one result leaf */
    EXPECT(trace_count("cuMemcpyDtoHAsync") == trips[k] + 2, "%d trips: %d downloads", trips[k],
           trace_count("cuMemcpyDtoHAsync"));
    for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
  }
}

/* Each trip swaps a and b, adding 1 to b on its way: the body's last
 * root leaf is a leaf of the state that an earlier copy overwrites. */
TEST(a_loop_that_swaps_two_leaves_of_its_state_keeps_both) {
  use_simulator();
  static const char text[] =
      "HloModule swap_loop\n"
      "cond {\n  s = (s32[], f32[4], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
      "  three = s32[] constant(3)\n  ROOT more = pred[] compare(i, three), direction=LT\n}\n"
      "body {\n  s = (s32[], f32[4], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
      "  a = f32[4] get-tuple-element(s), index=1\n  b = f32[4] get-tuple-element(s), index=2\n"
      "  one = s32[] constant(1)\n  next_i = s32[] add(i, one)\n  onef = f32[] constant(1)\n"
      "  ones = f32[4] broadcast(onef), dimensions={}\n  b1 = f32[4] add(b, ones)\n"
      "  ROOT t = (s32[], f32[4], f32[4]) tuple(next_i, b1, a)\n}\n"
      "ENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  zero = s32[] constant(0)\n"
      "  init = (s32[], f32[4], f32[4]) tuple(zero, a, b)\n"
      "  ROOT loop = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body\n}\n";
  static const float b_values[4] = {10, 20, 30, 40};
  HostBuffer *args[2] = {f32_vector(x_values, 4), f32_vector(b_values, 4)};
  gpu_matches_interpreter("swap", text, args, 2);
  for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
}

/* The condition is a leaf of the state and the body only swaps two
 * leaves: no kernel at all, only copies and downloads. */
TEST(a_loop_whose_body_and_condition_launch_nothing) {
  static const char text[] =
      "HloModule empty_body\n"
      "cond {\n  s = (pred[], pred[], f32[4]) parameter(0)\n  ROOT p = pred[] get-tuple-element(s), index=0\n}\n"
      "body {\n  s = (pred[], pred[], f32[4]) parameter(0)\n  p = pred[] get-tuple-element(s), index=0\n"
      "  q = pred[] get-tuple-element(s), index=1\n  x = f32[4] get-tuple-element(s), index=2\n"
      "  ROOT t = (pred[], pred[], f32[4]) tuple(q, p, x)\n}\n"
      "ENTRY e {\n  p = pred[] parameter(0)\n  x = f32[4] parameter(1)\n  no = pred[] constant(false)\n"
      "  init = (pred[], pred[], f32[4]) tuple(p, no, x)\n"
      "  ROOT loop = (pred[], pred[], f32[4]) while(init), condition=cond, body=body\n}\n";
  for (int start = 0; start < 2; start++) {
    use_simulator();
    HostBuffer *args[2] = {pred_scalar(start), f32_vector(x_values, 4)};
    gpu_matches_interpreter(start ? "one trip" : "no trip", text, args, 2);
    EXPECT(trace_count("cuLaunchKernel") == 0, "%d launches", trace_count("cuLaunchKernel"));
    /* the pred is tested start + 1 times; then three result leaves */
    EXPECT(trace_count("cuMemcpyDtoHAsync") == start + 1 + 3, "%d downloads", trace_count("cuMemcpyDtoHAsync"));
    for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
  }
}

static const char three_branches[] =
    "HloModule three_branches\n"
    "b0 {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] negate(x)\n}\n"
    "b1 {\n  x = (f32[4], s32[]) parameter(0)\n  v = f32[4] get-tuple-element(x), index=0\n"
    "  ROOT y = f32[4] add(v, v)\n}\n"
    "b2 {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] multiply(x, x)\n}\n"
    "ENTRY e {\n  i = s32[] parameter(0)\n  x = f32[4] parameter(1)\n  k = s32[] constant(7)\n"
    "  t = (f32[4], s32[]) tuple(x, k)\n"
    "  ROOT c = f32[4] conditional(i, x, t, x), branch_computations={b0, b1, b2}\n}\n";

TEST(a_conditional_runs_the_branch_of_its_index_and_the_last_when_out_of_range) {
  int32_t indices[] = {0, 1, 2, 3, 7, -1};
  for (int k = 0; k < 6; k++) {
    use_simulator();
    HostBuffer *args[2] = {s32_scalar(indices[k]), f32_vector(x_values, 4)};
    char label[64];
    snprintf(label, sizeof label, "index %d", indices[k]);
    gpu_matches_interpreter(label, three_branches, args, 2);
    EXPECT(trace_count("cuLaunchKernel") == 1, "index %d: %d launches", indices[k], trace_count("cuLaunchKernel"));
    for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
  }
}

TEST(a_pred_conditional_runs_the_first_branch_when_true) {
  static const char text[] =
      "HloModule pred_conditional\n"
      "yes {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] negate(x)\n}\n"
      "no {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] abs(x)\n}\n"
      "ENTRY e {\n  p = pred[] parameter(0)\n  x = f32[4] parameter(1)\n"
      "  ROOT c = f32[4] conditional(p, x, x), true_computation=yes, false_computation=no\n}\n";
  for (int v = 0; v < 2; v++) {
    use_simulator();
    HostBuffer *args[2] = {pred_scalar(v), f32_vector(x_values, 4)};
    gpu_matches_interpreter(v ? "true" : "false", text, args, 2);
    for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
  }
}

/* A loop whose body holds a conditional on the trip's parity: odd trips
 * negate, even ones add one. */
static const char loop_of_conditionals[] =
    "HloModule loop_of_conditionals\n"
    "neg {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] negate(x)\n}\n"
    "inc {\n  x = f32[4] parameter(0)\n  one = f32[] constant(1)\n  ones = f32[4] broadcast(one), dimensions={}\n"
    "  ROOT y = f32[4] add(x, ones)\n}\n"
    "cond {\n  s = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  five = s32[] constant(5)\n  ROOT more = pred[] compare(i, five), direction=LT\n}\n"
    "body {\n  s = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  x = f32[4] get-tuple-element(s), index=1\n  two = s32[] constant(2)\n  r = s32[] remainder(i, two)\n"
    "  y = f32[4] conditional(r, x, x), branch_computations={inc, neg}\n  one = s32[] constant(1)\n"
    "  next = s32[] add(i, one)\n  ROOT t = (s32[], f32[4]) tuple(next, y)\n}\n"
    "ENTRY e {\n  x = f32[4] parameter(0)\n  zero = s32[] constant(0)\n  init = (s32[], f32[4]) tuple(zero, x)\n"
    "  ROOT loop = (s32[], f32[4]) while(init), condition=cond, body=body\n}\n";

TEST(a_conditional_inside_a_loop_body_runs_its_branch_each_trip) {
  use_simulator();
  HostBuffer *arg = f32_vector(x_values, 4);
  gpu_matches_interpreter("loop of conditionals", loop_of_conditionals, &arg, 1);
  /* 6 condition tests, 5 branch indices, 2 result leaves */
  EXPECT(trace_count("cuMemcpyDtoHAsync") == 13, "%d downloads", trace_count("cuMemcpyDtoHAsync"));
  host_buffer_free(arg);
}

/* On one replica a collective hands its operand on; the start/done pairs
 * and the async wrappers run at once; the ordering ops forward. */
TEST(collectives_of_one_replica_and_async_pairs_hand_their_values_on) {
  use_simulator();
  static const char text[] =
      "HloModule one_replica\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
      "wrapped {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  ROOT m = f32[4] subtract(a, b)\n}\n"
      "ENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n"
      "  start = ((f32[4], f32[4]), f32[4], s32[]) async-start(x, y), calls=wrapped\n"
      "  update = ((f32[4], f32[4]), f32[4], s32[]) async-update(start), calls=wrapped\n"
      "  done = f32[4] async-done(update), calls=wrapped\n"
      "  ars = f32[4] all-reduce-start(x), replica_groups={}, to_apply=add\n  ard = f32[4] all-reduce-done(ars)\n"
      "  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(y), source_target_pairs={{0,0}}\n"
      "  cpd = f32[4] collective-permute-done(cps)\n"
      "  cs = (f32[4], f32[4], u32[]) copy-start(x)\n  cd = f32[4] copy-done(cs)\n"
      "  t = (f32[4], f32[4]) tuple(done, cd)\n  b = (f32[4], f32[4]) opt-barrier(t)\n"
      "  b0 = f32[4] get-tuple-element(b), index=0\n  tok = token[] after-all()\n"
      "  dep = f32[4] add-dependency(b0, tok)\n"
      "  ROOT r = (f32[4], f32[4], f32[4], f32[4], (f32[4], f32[4], u32[], u32[])) tuple(dep, ard, cpd, cd, cps)\n}\n";
  static const float y_values[4] = {4, 3, 2, 1};
  HostBuffer *args[2] = {f32_vector(x_values, 4), f32_vector(y_values, 4)};
  gpu_matches_interpreter("one replica", text, args, 2);
  for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
}

/* Static sizes and replica 0: constants and copies. */
TEST(sizes_on_static_shapes_and_the_replica_id_are_copies) {
  use_simulator();
  static const char text[] =
      "HloModule sizes\n"
      "ENTRY e {\n  x = f32[2,2] parameter(0)\n  d0 = s32[] get-dimension-size(x), dimensions={0}\n"
      "  n = s32[] constant(2)\n  same = f32[2,2] set-dimension-size(x, n), dimensions={1}\n"
      "  four = s32[] constant(4)\n  flat = f32[4] dynamic-reshape(x, four)\n  rid = u32[] replica-id()\n"
      "  ROOT r = (s32[], f32[2,2], f32[4], u32[]) tuple(d0, same, flat, rid)\n}\n";
  Status st;
  Shape s = {.type = TYPE_F32, .rank = 2, .dims = {2, 2}, .minor_to_major = {1, 0}};
  HostBuffer *arg = host_buffer_create(&s, x_values, &st);
  gpu_matches_interpreter("sizes", text, &arg, 1);
  host_buffer_free(arg);
}

/* What one device cannot do is refused at compile, located. */
TEST(a_permute_between_replicas_is_a_located_refusal) {
  use_simulator();
  static const char text[] =
      "HloModule permute\n"
      "ENTRY e {\n  x = f32[4] parameter(0)\n"
      "  ROOT p = f32[4] collective-permute(x), source_target_pairs={{0,1},{1,0}}\n}\n";
  Status st;
  Executable *exe = compile_on(text, AXLE_BACKEND_GPU, &st);
  EXPECT(!exe && st.code == STATUS_UNSUPPORTED && strstr(st.message, "needs 2 devices; this run has 1") &&
             st.loc.line == 4,
         "line %d: %s", st.loc.line, st.message);
  executable_free(exe);
}

/* ragged-all-to-all of one replica (gpu_ragged.c): the result starts as
 * the output buffer, then each update's rows move in order (the second
 * overwrites rows the first wrote); f32 rows and c128 rows (16-byte
 * elements, moved as two 8-byte units). Offsets computed at run time, or
 * out of range, are located refusals. */
static const char ragged_moves[] =
    "HloModule ragged\n"
    "ENTRY e {\n  src = f32[5,2] parameter(0)\n  dst = f32[6,2] parameter(1)\n"
    "  zs = c128[4,1] parameter(2)\n  zd = c128[3,1] parameter(3)\n"
    "  io = s32[2] constant({1, 0})\n  sz = s32[2] constant({3, 2})\n  oo = s32[2] constant({3, 2})\n"
    "  r = f32[6,2] ragged-all-to-all(src, dst, io, sz, oo, sz), replica_groups={{0}}\n"
    "  i1 = s32[1] constant({2})\n  n1 = s32[1] constant({2})\n  o1 = s32[1] constant({1})\n"
    "  z = c128[3,1] ragged-all-to-all(zs, zd, i1, n1, o1, n1), replica_groups={{0}}\n"
    "  ROOT t = (f32[6,2], c128[3,1]) tuple(r, z)\n}\n";

TEST(a_ragged_all_to_all_of_one_replica_moves_rows_as_the_interpreter_does) {
  use_simulator();
  Status st;
  float src[10], dst[12];
  double zs[8], zd[6];
  for (int i = 0; i < 10; i++) src[i] = 0.5f * (float)i + 1;
  for (int i = 0; i < 12; i++) dst[i] = -(float)i - 0.25f;
  for (int i = 0; i < 8; i++) zs[i] = i / 3.0;
  for (int i = 0; i < 6; i++) zd[i] = -i / 7.0;
  Shape s1 = {.type = TYPE_F32, .rank = 2, .dims = {5, 2}, .minor_to_major = {1, 0}};
  Shape s2 = {.type = TYPE_F32, .rank = 2, .dims = {6, 2}, .minor_to_major = {1, 0}};
  Shape s3 = {.type = TYPE_C128, .rank = 2, .dims = {4, 1}, .minor_to_major = {1, 0}};
  Shape s4 = {.type = TYPE_C128, .rank = 2, .dims = {3, 1}, .minor_to_major = {1, 0}};
  HostBuffer *args[4] = {host_buffer_create(&s1, src, &st), host_buffer_create(&s2, dst, &st),
                         host_buffer_create(&s3, zs, &st), host_buffer_create(&s4, zd, &st)};
  gpu_matches_interpreter("ragged-all-to-all", ragged_moves, args, 4);
  for (int i = 0; i < 4; i++) host_buffer_free(args[i]);
  static const char computed[] =
      "HloModule ragged_computed\n"
      "ENTRY e {\n  src = f32[5,2] parameter(0)\n  dst = f32[6,2] parameter(1)\n  io = s32[1] parameter(2)\n"
      "  sz = s32[1] constant({3})\n  oo = s32[1] constant({3})\n"
      "  ROOT r = f32[6,2] ragged-all-to-all(src, dst, io, sz, oo, sz), replica_groups={{0}}\n}\n";
  static const char too_far[] =
      "HloModule ragged_far\n"
      "ENTRY e {\n  src = f32[5,2] parameter(0)\n  dst = f32[6,2] parameter(1)\n  io = s32[1] constant({1})\n"
      "  sz = s32[1] constant({3})\n  oo = s32[1] constant({4})\n"
      "  ROOT r = f32[6,2] ragged-all-to-all(src, dst, io, sz, oo, sz), replica_groups={{0}}\n}\n";
  const char *texts[2] = {computed, too_far}, *reasons[2] = {"run time", "out of range"};
  for (int i = 0; i < 2; i++) {
    Executable *exe = compile_on(texts[i], AXLE_BACKEND_GPU, &st);
    EXPECT(!exe && st.code == STATUS_UNSUPPORTED && strstr(st.message, reasons[i]) && st.loc.line == 8,
           "line %d: %s", st.loc.line, st.message);
    executable_free(exe);
  }
}

/* scan (gpu_scan.c) with an elementwise step: two carries that trade
 * places each step (the new first is the old second), an s32 input, a
 * middle scanned dim, forwards and in reverse; a step that mixes
 * elements (a reverse) is a located refusal. */
static const char scan_text[] =
    "HloModule scans\n"
    "step {\n  x = f32[4,3] parameter(0)\n  k = s32[4,3] parameter(1)\n  a = f32[4,3] parameter(2)\n"
    "  b = f32[4,3] parameter(3)\n  ax = f32[4,3] multiply(a, x)\n  y = f32[4,3] add(ax, b)\n"
    "  kf = f32[4,3] convert(k)\n  nb = f32[4,3] subtract(y, kf)\n  big = pred[4,3] compare(y, b), direction=GT\n"
    "  ROOT t = (f32[4,3], pred[4,3], f32[4,3], f32[4,3]) tuple(y, big, b, nb)\n}\n"
    "ENTRY e {\n  x = f32[4,5,3] parameter(0)\n  k = s32[4,5,3] parameter(1)\n  a = f32[4,3] parameter(2)\n"
    "  b = f32[4,3] parameter(3)\n"
    "  f = (f32[4,5,3], pred[4,5,3], f32[4,3], f32[4,3]) scan(x, k, a, b), dimensions={1}, num_carries=2, to_apply=step\n"
    "  r = (f32[4,5,3], pred[4,5,3], f32[4,3], f32[4,3]) scan(x, k, a, b), dimensions={1}, num_carries=2,"
    " is_reverse=true, to_apply=step\n"
    "  ROOT o = ((f32[4,5,3], pred[4,5,3], f32[4,3], f32[4,3]), (f32[4,5,3], pred[4,5,3], f32[4,3], f32[4,3])) tuple(f, r)\n}\n";

TEST(a_scan_with_an_elementwise_step_matches_the_interpreter_forwards_and_in_reverse) {
  use_simulator();
  Status st;
  float x[60], a[12], b[12];
  int32_t k[60];
  for (int i = 0; i < 60; i++) x[i] = (float)((i * 7) % 11) / 9.0f - 0.5f, k[i] = i % 5 - 2;
  for (int i = 0; i < 12; i++) a[i] = 0.25f * (float)i - 1, b[i] = 1.0f / (float)(i + 3);
  Shape full = {.type = TYPE_F32, .rank = 3, .dims = {4, 5, 3}, .minor_to_major = {2, 1, 0}};
  Shape ints = full, slice = {.type = TYPE_F32, .rank = 2, .dims = {4, 3}, .minor_to_major = {1, 0}};
  ints.type = TYPE_S32;
  HostBuffer *args[4] = {host_buffer_create(&full, x, &st), host_buffer_create(&ints, k, &st),
                         host_buffer_create(&slice, a, &st), host_buffer_create(&slice, b, &st)};
  gpu_matches_interpreter("scan", scan_text, args, 4);
  for (int i = 0; i < 4; i++) host_buffer_free(args[i]);
  static const char mixing[] =
      "HloModule mixing\n"
      "step {\n  x = f32[3] parameter(0)\n  c = f32[3] parameter(1)\n  r = f32[3] reverse(x), dimensions={0}\n"
      "  n = f32[3] add(r, c)\n  ROOT t = (f32[3], f32[3]) tuple(x, n)\n}\n"
      "ENTRY e {\n  x = f32[4,3] parameter(0)\n  c = f32[3] parameter(1)\n"
      "  ROOT r = (f32[4,3], f32[3]) scan(x, c), dimensions={0}, num_carries=1, to_apply=step\n}\n";
  Executable *exe = compile_on(mixing, AXLE_BACKEND_GPU, &st);
  EXPECT(!exe && st.code == STATUS_UNSUPPORTED && strstr(st.message, "not elementwise") && st.loc.line == 12, "line %d: %s",
         st.loc.line, st.message);
  executable_free(exe);
}

/* The device-buffer run (gpu_device_buffers.c) passes its own addresses
 * through the loop's steps. */
TEST(a_loop_runs_on_device_buffers) {
  use_simulator();
  Status st;
  Executable *exe = compile_on(counted_loop, AXLE_BACKEND_GPU, &st);
  EXPECT(exe != NULL, "%s", st.message);
  if (!exe) return;
  int32_t n = 3;
  uint64_t args[2] = {0, 0}, result = 0;
  GpuProgram *p = exe->program;
  bool ok = gpu_device_upload(p, &n, sizeof n, &args[0], &st) &&
            gpu_device_upload(p, x_values, sizeof x_values, &args[1], &st) &&
            gpu_run_on_device(p, args, 2, &result, 1, &st);
  EXPECT(ok, "%s", st.message);
  float got[4] = {0};
  if (ok) EXPECT(gpu_device_download(p, result, got, sizeof got, &st), "%s", st.message);
  for (int i = 0; ok && i < 4; i++) {
    float want = x_values[i];
    for (int t = 0; t < n; t++) want = want * 2 + 1;
    EXPECT(got[i] == want, "x[%d] = %g, wanted %g", i, got[i], want);
  }
  for (int i = 0; i < 2; i++) gpu_device_release(p, args[i]);
  gpu_device_release(p, result);
  executable_free(exe);
}

/* A run-time failure inside the loop is located at the while (line 28 of
 * counted_loop) and says what failed; the executable then runs again. */
static void loop_failure_check(const char *symbol, const char *doing) {
  use_simulator();
  Status st;
  Executable *exe = compile_on(counted_loop, AXLE_BACKEND_GPU, &st);
  EXPECT(exe != NULL, "%s", st.message);
  if (!exe) return;
  HostBuffer *args[2] = {s32_scalar(2), f32_vector(x_values, 4)};
  setenv("FAKE_CUDA_FAIL", symbol, 1);
  status_clear(&st);
  HostBuffer *r = executable_run(exe, args, 2, &st);
  EXPECT(!r && strstr(st.message, doing) && strstr(st.message, "loop"), "%s: %s", symbol, st.message);
  EXPECT(st.file && strcmp(st.file, "control.hlo") == 0 && st.loc.line == 28, "%s: located at %s:%d", symbol,
         st.file ? st.file : "(none)", st.loc.line);
  host_buffer_free(r);
  unsetenv("FAKE_CUDA_FAIL");
  status_clear(&st);
  r = executable_run(exe, args, 2, &st);
  EXPECT(r != NULL, "the run after a failure: %s", st.message);
  host_buffer_free(r);
  for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
  executable_free(exe);
}

TEST(a_failing_device_to_device_copy_is_located_at_the_while) {
  loop_failure_check("cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync failed");
}

TEST(a_failing_pred_download_is_located_at_the_while) {
  loop_failure_check("cuMemcpyDtoHAsync_v2", "downloading the loop's condition");
}

/* The module's PTX (kernels of the loop body and of the branches) as the
 * fake saved it, through ptxas for the target it was written for. */
static void saved_ptx_assembles(const char *text_to_compile, const char *capability) {
  char dir[64];
  snprintf(dir, sizeof dir, "/tmp/axle-gpu-control-XXXXXX");
  if (!mkdtemp(dir)) {
    EXPECT(false, "cannot make a directory for the PTX");
    return;
  }
  use_simulator();
  setenv("FAKE_CUDA_SAVE_PTX", dir, 1);
  setenv("FAKE_CUDA_CAPABILITY", capability, 1);
  Status st;
  Executable *exe = compile_on(text_to_compile, AXLE_BACKEND_GPU, &st);
  EXPECT(exe != NULL, "%s", st.message);
  executable_free(exe);
  char ptx[128], command[8192], log[128];
  snprintf(ptx, sizeof ptx, "%s/0.ptx", dir);
  snprintf(log, sizeof log, "%s/ptxas.log", dir);
  char *text = file_read(ptx);
  EXPECT(text && strstr(text, ".entry"), "no kernel saved at %s", ptx);
  const char *target = text ? strstr(text, ".target ") : NULL;
  char arch[16] = "";
  if (target) sscanf(target + 8, "%15[a-z0-9_]", arch);
  EXPECT(arch[0], "no .target in the PTX");
  snprintf(command, sizeof command, "'%s' -arch=%s -o '%s/0.cubin' '%s' >'%s' 2>&1", ptxas, arch, dir, ptx, log);
  if (arch[0] && system(command) != 0) {
    char *why = file_read(log);
    EXPECT(false, "ptxas -arch=%s:\n%.3000s", arch, why ? why : "");
    free(why);
  }
  free(text);
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  if (system(command) != 0) printf("  (could not remove %s)\n", dir);
  unsetenv("FAKE_CUDA_SAVE_PTX");
  unsetenv("FAKE_CUDA_CAPABILITY");
}

TEST(the_kernels_inside_loops_and_branches_assemble_for_sm_80_and_sm_90a) {
  saved_ptx_assembles(loop_of_conditionals, "8.0");
  saved_ptx_assembles(loop_of_conditionals, "9.0");
  saved_ptx_assembles(ragged_moves, "8.0");
  saved_ptx_assembles(ragged_moves, "9.0");
  saved_ptx_assembles(scan_text, "8.0");
  saved_ptx_assembles(scan_text, "9.0");
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  snprintf(trace_path, sizeof trace_path, "/tmp/axle-gpu-control-trace-%d.txt", (int)getpid());
  RUN(a_loop_runs_its_trips_and_downloads_the_pred_once_per_test);
  RUN(a_loop_that_swaps_two_leaves_of_its_state_keeps_both);
  RUN(a_loop_whose_body_and_condition_launch_nothing);
  RUN(a_conditional_runs_the_branch_of_its_index_and_the_last_when_out_of_range);
  RUN(a_pred_conditional_runs_the_first_branch_when_true);
  RUN(a_conditional_inside_a_loop_body_runs_its_branch_each_trip);
  RUN(collectives_of_one_replica_and_async_pairs_hand_their_values_on);
  RUN(sizes_on_static_shapes_and_the_replica_id_are_copies);
  RUN(a_permute_between_replicas_is_a_located_refusal);
  RUN(a_ragged_all_to_all_of_one_replica_moves_rows_as_the_interpreter_does);
  RUN(a_scan_with_an_elementwise_step_matches_the_interpreter_forwards_and_in_reverse);
  RUN(a_loop_runs_on_device_buffers);
  RUN(a_failing_device_to_device_copy_is_located_at_the_while);
  RUN(a_failing_pred_download_is_located_at_the_while);
  if (tool_find("ptxas", ptxas, sizeof ptxas)) RUN(the_kernels_inside_loops_and_branches_assemble_for_sm_80_and_sm_90a);
  else printf("SKIP the_kernels_inside_loops_and_branches_assemble_for_sm_80_and_sm_90a (no ptxas on PATH or in /usr/local/cuda/bin)\n");
  unlink(trace_path);
  unsetenv("FAKE_CUDA_TRACE");
  return test_summary();
}
