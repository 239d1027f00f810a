/* No process exits from the library: an allocation that fails anywhere in
 * parse, compile or run comes back as AXLE_ERROR_OUT_OF_MEMORY from the
 * public call, frees what that call had allocated (LeakSanitizer checks it
 * under `make check`), and leaves the library usable. The failures are
 * injected with mem_fail_after (src/ir/memory.c): first a clean pass counts
 * the allocations of the whole sequence, then each point (or, for a long
 * sequence, points at an even stride) is made to fail in turn. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "axle.h"
#include "ir.h"
#include "../test.h"

/* A fused softmax, a dot, a while loop and a sort: the optimizer's passes,
 * buffer assignment, the kernel compiler, the GEMM, control flow and a
 * runtime routine all allocate on the way. */
static const char module_text[] =
    "HloModule oom\n"
    "max_f32 {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT m = f32[] maximum(a, b)\n"
    "}\n"
    "add_f32 {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "less {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT lt = pred[] compare(a, b), direction=LT\n"
    "}\n"
    "cond {\n"
    "  state = (s32[], f32[8,8]) parameter(0)\n"
    "  i = s32[] get-tuple-element(state), index=0\n"
    "  three = s32[] constant(3)\n"
    "  ROOT go = pred[] compare(i, three), direction=LT\n"
    "}\n"
    "body {\n"
    "  state = (s32[], f32[8,8]) parameter(0)\n"
    "  i = s32[] get-tuple-element(state), index=0\n"
    "  x = f32[8,8] get-tuple-element(state), index=1\n"
    "  one = s32[] constant(1)\n"
    "  next = s32[] add(i, one)\n"
    "  half = f32[] constant(0.5)\n"
    "  halves = f32[8,8] broadcast(half), dimensions={}\n"
    "  y = f32[8,8] multiply(x, halves)\n"
    "  ROOT out = (s32[], f32[8,8]) tuple(next, y)\n"
    "}\n"
    "ENTRY main {\n"
    "  a = f32[8,8] parameter(0)\n"
    "  b = f32[8,8] parameter(1)\n"
    "  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  low = f32[] constant(-inf)\n"
    "  mx = f32[8] reduce(d, low), dimensions={1}, to_apply=max_f32\n"
    "  mxb = f32[8,8] broadcast(mx), dimensions={0}\n"
    "  shifted = f32[8,8] subtract(d, mxb)\n"
    "  e = f32[8,8] exponential(shifted)\n"
    "  zero = f32[] constant(0)\n"
    "  sum = f32[8] reduce(e, zero), dimensions={1}, to_apply=add_f32\n"
    "  sumb = f32[8,8] broadcast(sum), dimensions={0}\n"
    "  softmax = f32[8,8] divide(e, sumb)\n"
    "  start = s32[] constant(0)\n"
    "  init = (s32[], f32[8,8]) tuple(start, softmax)\n"
    "  loop = (s32[], f32[8,8]) while(init), condition=cond, body=body\n"
    "  scaled = f32[8,8] get-tuple-element(loop), index=1\n"
    "  ROOT sorted = f32[8,8] sort(scaled), dimensions={1}, to_apply=less\n"
    "}\n";

enum { SIDE = 8, COUNT = SIDE * SIDE };

/* The answer, computed here: row-wise softmax of a·b, times 1/8, sorted. */
static void expected_result(const float *a, const float *b, float *out) {
  for (int i = 0; i < SIDE; i++) {
    double row[SIDE], mx = -INFINITY, sum = 0;
    for (int j = 0; j < SIDE; j++) {
      double d = 0;
      for (int k = 0; k < SIDE; k++) d += (double)a[i * SIDE + k] * b[k * SIDE + j];
      row[j] = d;
      if (d > mx) mx = d;
    }
    for (int j = 0; j < SIDE; j++) sum += row[j] = exp(row[j] - mx);
    for (int j = 0; j < SIDE; j++) row[j] = row[j] / sum * 0.125;
    for (int j = 1; j < SIDE; j++)
      for (int k = j; k > 0 && row[k] < row[k - 1]; k--) {
        double t = row[k];
        row[k] = row[k - 1];
        row[k - 1] = t;
      }
    for (int j = 0; j < SIDE; j++) out[i * SIDE + j] = (float)row[j];
  }
}

typedef struct Outcome {
  bool ok;                /* every call succeeded and the result is right */
  bool out_of_memory;     /* a call failed, with AXLE_ERROR_OUT_OF_MEMORY */
  char message[160];      /* anything else: what went wrong */
} Outcome;

static bool failed_call(Outcome *o, const char *call, axle_error_t *err) {
  if (axle_error_status(err) == AXLE_ERROR_OUT_OF_MEMORY && strstr(axle_error_message(err), "out of memory"))
    o->out_of_memory = true;
  else
    snprintf(o->message, sizeof o->message, "%s: status %d: %s", call, (int)axle_error_status(err),
             axle_error_message(err));
  axle_error_free(err);
  return false;
}

/* Parse, compile (past the compile cache) and run through the public API. */
static Outcome parse_compile_run(int threads) {
  Outcome o = {0};
  float a[COUNT], b[COUNT], want[COUNT], got[COUNT];
  for (int i = 0; i < COUNT; i++) a[i] = (float)((i * 7) % 11) / 4 - 1, b[i] = (float)((i * 5) % 13) / 6 - 1;
  expected_result(a, b, want);
  axle_compile_cache_clear();
  axle_error_t *err = NULL;
  axle_module_t *m = axle_module_parse(module_text, strlen(module_text), "oom.hlo", &err);
  axle_executable_t *exe = NULL;
  axle_buffer_t *args[2] = {0}, *result = NULL;
  int64_t dims[2] = {SIDE, SIDE};
  axle_compile_options_t options = {.threads = threads};
  if (!m) {
    failed_call(&o, "parse", err);
  } else if (!(exe = axle_compile_with(m, AXLE_BACKEND_CPU, &options, &err))) {
    failed_call(&o, "compile", err);
  } else if (!(args[0] = axle_buffer_create(AXLE_F32, 2, dims, a, &err)) ||
             !(args[1] = axle_buffer_create(AXLE_F32, 2, dims, b, &err))) {
    failed_call(&o, "buffer", err);
  } else if (!axle_executable_run(exe, args, 2, &result, &err)) {
    failed_call(&o, "run", err);
  } else {
    memcpy(got, axle_buffer_data(result), sizeof got);
    o.ok = true;
    for (int i = 0; i < COUNT; i++)
      if (fabsf(got[i] - want[i]) > 1e-5f * (1 + fabsf(want[i]))) {
        o.ok = false;
        snprintf(o.message, sizeof o.message, "element %d is %g, not %g", i, got[i], want[i]);
        break;
      }
  }
  axle_buffer_free(result);
  axle_buffer_free(args[0]);
  axle_buffer_free(args[1]);
  axle_executable_free(exe);
  axle_module_free(m);
  axle_compile_cache_clear();
  return o;
}

/* Each failure point of the sequence at `threads` threads, at most about
 * `most` of them; every one must end in AXLE_ERROR_OUT_OF_MEMORY, and a
 * clean run after it must give the right answer. */
static void every_failure_point(int threads, long most) {
  mem_fail_after(1L << 40);
  Outcome clean = parse_compile_run(threads);
  long allocations = (1L << 40) - mem_fail_after(-1);
  EXPECT(clean.ok, "the clean run failed: %s", clean.message);
  if (!clean.ok) return;
  long stride = allocations > most ? (allocations + most - 1) / most : 1;
  long tried = 0, unwound = 0, wrong = 0;
  for (long point = 0; point < allocations; point += stride) {
    mem_fail_after(point);
    Outcome o = parse_compile_run(threads);
    bool injected = mem_fail_after(-1) < 0;
    tried++;
    if (o.out_of_memory && injected) {
      unwound++;
    } else if (!(injected && o.ok)) {
      /* A failure must surface as out of memory, never as another error or
       * a wrong answer; and nothing but the injected failure may fail. */
      wrong++;
      EXPECT(false, "failure point %ld of %ld: %s%s", point, allocations, o.ok ? "succeeded" : "",
             o.out_of_memory ? "out of memory without an injected failure" : o.message);
    }
    if (point % (stride * 64) == 0) {
      Outcome after = parse_compile_run(threads);
      EXPECT(after.ok, "after failure point %ld the library is broken: %s", point, after.message);
    }
  }
  Outcome last = parse_compile_run(threads);
  EXPECT(last.ok, "after all failure points: %s", last.message);
  printf("  %d thread%s: %ld allocations, %ld failure points tried (stride %ld), %ld unwound to "
         "AXLE_ERROR_OUT_OF_MEMORY, %ld wrong\n",
         threads, threads == 1 ? "" : "s", allocations, tried, stride, unwound, wrong);
}

/* One executable run again and again, each run failing at another point
 * and followed by a clean run: what the program keeps between runs (its
 * frame, the GEMM's workspace) must survive a run that unwound. */
static void runs_of_one_executable(int threads) {
  float a[COUNT], b[COUNT], want[COUNT];
  for (int i = 0; i < COUNT; i++) a[i] = (float)((i * 3) % 7) / 2 - 1, b[i] = (float)((i * 5) % 9) / 4 - 1;
  expected_result(a, b, want);
  axle_error_t *err = NULL;
  axle_module_t *m = axle_module_parse(module_text, strlen(module_text), "oom.hlo", &err);
  axle_compile_options_t options = {.threads = threads};
  axle_executable_t *exe = m ? axle_compile_with(m, AXLE_BACKEND_CPU, &options, &err) : NULL;
  int64_t dims[2] = {SIDE, SIDE};
  axle_buffer_t *args[2] = {axle_buffer_create(AXLE_F32, 2, dims, a, &err), axle_buffer_create(AXLE_F32, 2, dims, b, &err)};
  EXPECT(exe && args[0] && args[1], "setting up: %s", axle_error_message(err));
  long tried = 0, unwound = 0;
  for (long point = 0; exe && args[0] && args[1]; point++) {
    axle_buffer_t *result = NULL;
    mem_fail_after(point);
    bool ran = axle_executable_run(exe, args, 2, &result, &err);
    bool injected = mem_fail_after(-1) < 0;
    axle_buffer_free(result);
    if (!injected) break;
    tried++;
    if (!ran && axle_error_status(err) == AXLE_ERROR_OUT_OF_MEMORY) unwound++;
    else EXPECT(false, "run failure point %ld: %s", point, ran ? "succeeded" : axle_error_message(err));
    axle_error_free(err);
    err = NULL;
    result = NULL;
    ran = axle_executable_run(exe, args, 2, &result, &err);
    EXPECT(ran, "the clean run after failure point %ld: %s", point, axle_error_message(err));
    for (int i = 0; ran && i < COUNT; i++)
      if (fabsf(((float *)axle_buffer_data(result))[i] - want[i]) > 1e-5f * (1 + fabsf(want[i]))) {
        EXPECT(false, "after failure point %ld, element %d is wrong", point, i);
        break;
      }
    axle_buffer_free(result);
  }
  printf("  %d thread%s: %ld failure points of a run of one executable, %ld unwound, each followed by a right run\n",
         threads, threads == 1 ? "" : "s", tried, unwound);
  axle_error_free(err);
  axle_buffer_free(args[0]);
  axle_buffer_free(args[1]);
  axle_executable_free(exe);
  axle_module_free(m);
}

TEST(a_run_that_runs_out_of_memory_leaves_its_executable_whole) {
  runs_of_one_executable(1);
  runs_of_one_executable(2);
}

TEST(each_allocation_failure_of_parse_compile_and_run_is_reported_and_freed) { every_failure_point(1, 1500); }
TEST(allocation_failures_with_a_thread_pool_are_reported_and_freed) { every_failure_point(2, 1000); }

/* Corpus modules of the other op families (tests/hlo/NAME.hlo with its
 * NumPy-made inputs NAME/in*.npy), each from its file: a parse from a path,
 * the routines' compile paths (FFT, scatter, gather, convolution, linear
 * algebra, rng, top-k, reduce-window, select-and-scatter, conditional). */
static const char *const family_modules[] = {
    "fft_2d_c128", "scatter_variadic_and_batched", "gather_batching_dims", "conv2d_nhwc_same",
    "cholesky", "rng_bit_generator_three_fry", "topk_largest_random_f32", "reduce_window_pooling",
    "select_and_scatter_maxpool_grad", "conditional_indexed", "sort_and_linalg_non_default_layout",
};

/* Parse NAME's file, compile and run it on its inputs; an out-of-memory
 * anywhere is recorded, anything else is a message. */
static Outcome corpus_module_run(const char *name) {
  Outcome o = {0};
  char path[256];
  axle_compile_cache_clear();
  axle_error_t *err = NULL;
  axle_buffer_t *args[8] = {0}, *result = NULL;
  int arg_count = 0;
  snprintf(path, sizeof path, "tests/hlo/%s.hlo", name);
  axle_module_t *m = axle_module_parse_file(path, &err);
  axle_executable_t *exe = NULL;
  if (!m) {
    failed_call(&o, "parse", err);
    goto done;
  }
  for (; arg_count < axle_module_parameter_count(m) && arg_count < 8; arg_count++) {
    snprintf(path, sizeof path, "tests/hlo/%s/in%d.npy", name, arg_count);
    if (!(args[arg_count] = axle_npy_read(path, &err))) {
      failed_call(&o, "npy", err);
      goto done;
    }
  }
  if (!(exe = axle_compile(m, AXLE_BACKEND_CPU, &err))) failed_call(&o, "compile", err);
  else if (!axle_executable_run(exe, args, arg_count, &result, &err)) failed_call(&o, "run", err);
  else o.ok = true;
done:
  axle_buffer_free(result);
  for (int i = 0; i < arg_count; i++) axle_buffer_free(args[i]);
  axle_executable_free(exe);
  axle_module_free(m);
  axle_compile_cache_clear();
  return o;
}

TEST(allocation_failures_in_every_op_family_are_reported_and_freed) {
  enum { POINTS_PER_MODULE = 120 };
  long total_tried = 0, total_unwound = 0;
  for (size_t k = 0; k < sizeof family_modules / sizeof family_modules[0]; k++) {
    const char *name = family_modules[k];
    mem_fail_after(1L << 40);
    Outcome clean = corpus_module_run(name);
    long allocations = (1L << 40) - mem_fail_after(-1);
    EXPECT(clean.ok, "%s: the clean run failed: %s", name, clean.message);
    if (!clean.ok) continue;
    long stride = allocations > POINTS_PER_MODULE ? (allocations + POINTS_PER_MODULE - 1) / POINTS_PER_MODULE : 1;
    for (long point = k % stride; point < allocations; point += stride) {
      mem_fail_after(point);
      Outcome o = corpus_module_run(name);
      bool injected = mem_fail_after(-1) < 0;
      total_tried++;
      if (o.out_of_memory && injected) total_unwound++;
      else EXPECT(injected && o.ok, "%s: failure point %ld of %ld: %s", name, point, allocations,
                  o.out_of_memory ? "out of memory without an injected failure" : o.message);
    }
    Outcome after = corpus_module_run(name);
    EXPECT(after.ok, "%s: after its failure points: %s", name, after.message);
  }
  printf("  %zu op-family modules: %ld failure points tried, %ld unwound to AXLE_ERROR_OUT_OF_MEMORY\n",
         sizeof family_modules / sizeof family_modules[0], total_tried, total_unwound);
}

/* The public builder: a failed call leaves the builder failed, and finish
 * reports out of memory; nothing crashes. */
TEST(a_builder_that_runs_out_of_memory_reports_it) {
  for (long point = 0; point < 200; point++) {
    mem_fail_after(point);
    axle_builder_t *b = axle_builder_create("built");
    axle_module_t *m = NULL;
    axle_error_t *err = NULL;
    if (b) {
      int64_t dims[1] = {4};
      axle_value_t x = axle_builder_parameter(b, AXLE_F32, 1, dims, "x");
      axle_value_t y = axle_builder_unary(b, AXLE_EXP, x);
      m = axle_builder_finish(b, axle_builder_binary(b, AXLE_ADD, x, y), &err);
    }
    bool injected = mem_fail_after(-1) < 0;
    if (injected) EXPECT(!b || (!m && axle_error_status(err) == AXLE_ERROR_OUT_OF_MEMORY),
                         "point %ld: %s", point, axle_error_message(err));
    else EXPECT(m != NULL, "point %ld: the builder failed without an injected failure", point);
    axle_error_free(err);
    axle_module_free(m);
    axle_builder_free(b);
    if (!injected) {
      printf("  builder: %ld failure points tried\n", point);
      break;
    }
  }
}

int main(void) {
  RUN(each_allocation_failure_of_parse_compile_and_run_is_reported_and_freed);
  RUN(allocation_failures_with_a_thread_pool_are_reported_and_freed);
  RUN(a_run_that_runs_out_of_memory_leaves_its_executable_whole);
  RUN(allocation_failures_in_every_op_family_are_reported_and_freed);
  RUN(a_builder_that_runs_out_of_memory_reports_it);
  return test_summary();
}
