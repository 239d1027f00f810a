/* The CPU backend's driver (src/emit_x86/cpu_backend.c, cpu_program.c):
 * dots through the GEMM, fused elementwise chains as one kernel, output
 * fusions as GEMM plus epilogue, refusals that name the instruction, and
 * the same bytes at every thread count. References are computed here in
 * plain C (double sums for products), never by axle. */
#include <math.h>
#include <setjmp.h>
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

static HostBuffer *f32_random(int rank, const int64_t *dims, unsigned seed) {
  Status st;
  status_clear(&st);
  Shape s = shape_array(TYPE_F32, rank, dims);
  HostBuffer *b = host_buffer_create(&s, NULL, &st);
  float *v = b->data;
  for (int64_t i = 0; i < shape_element_count(&s); i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
  return b;
}

static int count_steps(const Executable *exe, CpuStepKind kind) {
  const CpuProgram *p = exe->program;
  int n = 0;
  for (int i = 0; i < p->step_count; i++) n += p->steps[i].kind == kind;
  return n;
}

/* Runs text at 1 and 2 threads; both results (or NULL) come back. */
static void run_both(const char *text, HostBuffer **args, int n, HostBuffer **out1, HostBuffer **out2,
                     Executable **exe1) {
  Status st;
  Executable *e1 = compile_text(text, 1, &st), *e2 = compile_text(text, 2, &st);
  EXPECT(e1 && e2, "compiles: %s", st.message);
  *out1 = e1 ? executable_run(e1, args, n, &st) : NULL;
  *out2 = e2 ? executable_run(e2, args, n, &st) : NULL;
  EXPECT(*out1 && *out2, "runs: %s", st.message);
  *exe1 = e1;
  executable_free(e2);
}

static const char dot_text[] =
    "HloModule dots\n"
    "ENTRY main {\n"
    "  a = f32[37,19] parameter(0)\n"
    "  b = f32[19,41] parameter(1)\n"
    "  p = f32[3,5,7] parameter(2)\n"
    "  q = f32[3,9,7] parameter(3)\n"
    "  ab = f32[37,41] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  pq = f32[3,5,9] dot(p, q), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}\n"
    "  ROOT t = (f32[37,41], f32[3,5,9]) tuple(ab, pq)\n"
    "}\n";

/* Largest |got - want| / (1 + |want|) of C[b][i][j] = sum_k A(b,i,k) B(b,k,j). */
static double product_error(const float *got, const float *a, const float *b, int batch, int m, int n, int k,
                            int64_t a_rs, int64_t a_cs, int64_t b_rs, int64_t b_cs) {
  double worst = 0;
  for (int t = 0; t < batch; t++)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        double want = 0;
        for (int l = 0; l < k; l++)
          want += (double)a[t * m * k + i * a_rs + l * a_cs] * b[t * n * k + l * b_rs + j * b_cs];
        double e = fabs(got[(t * m + i) * n + j] - want) / (1 + fabs(want));
        if (e > worst) worst = e;
      }
  return worst;
}

TEST(unfused_f32_dots_run_on_the_gemm_and_match_a_double_product) {
  int64_t da[2] = {37, 19}, db[2] = {19, 41}, dp[3] = {3, 5, 7}, dq[3] = {3, 9, 7};
  HostBuffer *args[4] = {f32_random(2, da, 1), f32_random(2, db, 2), f32_random(3, dp, 3), f32_random(3, dq, 4)};
  HostBuffer *r1, *r2;
  Executable *exe;
  run_both(dot_text, args, 4, &r1, &r2, &exe);
  if (exe) EXPECT(count_steps(exe, CPU_STEP_DOT) == 2, "two GEMM steps, got %d", count_steps(exe, CPU_STEP_DOT));
  if (r1 && r2) {
    float *ab = r1->elements[0]->data, *pq = r1->elements[1]->data;
    double e1 = product_error(ab, args[0]->data, args[1]->data, 1, 37, 41, 19, 19, 1, 41, 1);
    /* q is [3,9,7] contracted on its last dim: B(k, j) = q[j*7 + k]. */
    double e2 = product_error(pq, args[2]->data, args[3]->data, 3, 5, 9, 7, 7, 1, 1, 7);
    EXPECT(e1 < 1e-5 && e2 < 1e-5, "relative error %g (2-D) and %g (batched, transposed rhs)", e1, e2);
    for (int i = 0; i < 2; i++) {
      size_t bytes = (size_t)shape_byte_size(&r1->elements[i]->shape);
      EXPECT(memcmp(r1->elements[i]->data, r2->elements[i]->data, bytes) == 0, "output %d: 1 and 2 threads give the same bytes", i);
    }
  }
  host_buffer_free(r1);
  host_buffer_free(r2);
  executable_free(exe);
  for (int i = 0; i < 4; i++) host_buffer_free(args[i]);
}

static const char chain_text[] =
    "HloModule chain\n"
    "ENTRY main {\n"
    "  x = f32[1001] parameter(0)\n"
    "  y = f32[1001] parameter(1)\n"
    "  two = f32[] constant(2)\n"
    "  twos = f32[1001] broadcast(two), dimensions={}\n"
    "  zero = f32[] constant(0)\n"
    "  zeros = f32[1001] broadcast(zero), dimensions={}\n"
    "  m = f32[1001] multiply(x, twos)\n"
    "  s = f32[1001] add(m, y)\n"
    "  n = f32[1001] negate(s)\n"
    "  ROOT r = f32[1001] maximum(n, zeros)\n"
    "}\n";

TEST(a_fused_elementwise_chain_is_one_kernel_with_exact_results) {
  int64_t d = 1001;
  HostBuffer *args[2] = {f32_random(1, &d, 5), f32_random(1, &d, 6)};
  HostBuffer *r1, *r2;
  Executable *exe;
  run_both(chain_text, args, 2, &r1, &r2, &exe);
  if (exe)
    EXPECT(count_steps(exe, CPU_STEP_KERNEL) == 1 && count_steps(exe, CPU_STEP_DOT) == 0,
           "one kernel for the fused chain, got %d", count_steps(exe, CPU_STEP_KERNEL));
  if (r1 && r2) {
    const float *x = args[0]->data, *y = args[1]->data, *got = r1->data;
    int wrong = 0;
    for (int i = 0; i < 1001; i++) {
      float s = x[i] * 2.0f + y[i], want = -s > 0 ? -s : 0;
      /* The same IEEE operations give the same bits (no FMA contraction). */
      wrong += memcmp(&want, &got[i], sizeof want) != 0;
    }
    EXPECT(wrong == 0, "%d of 1001 elements differ from max(-(2x+y), 0)", wrong);
    EXPECT(memcmp(r1->data, r2->data, 1001 * sizeof(float)) == 0, "1 and 2 threads give the same bytes");
  }
  host_buffer_free(r1);
  host_buffer_free(r2);
  executable_free(exe);
  for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
}

static const char mlp_text[] =
    "HloModule mlp\n"
    "ENTRY main {\n"
    "  x = f32[9,13] parameter(0)\n"
    "  w = f32[13,21] parameter(1)\n"
    "  b = f32[21] parameter(2)\n"
    "  d = f32[9,21] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  bb = f32[9,21] broadcast(b), dimensions={1}\n"
    "  s = f32[9,21] add(d, bb)\n"
    "  zero = f32[] constant(0)\n"
    "  zeros = f32[9,21] broadcast(zero), dimensions={}\n"
    "  ROOT r = f32[9,21] maximum(s, zeros)\n"
    "}\n";

TEST(an_output_fusion_runs_the_gemm_then_its_epilogue_kernel) {
  int64_t dx[2] = {9, 13}, dw[2] = {13, 21}, db = 21;
  HostBuffer *args[3] = {f32_random(2, dx, 7), f32_random(2, dw, 8), f32_random(1, &db, 9)};
  HostBuffer *r1, *r2;
  Executable *exe;
  run_both(mlp_text, args, 3, &r1, &r2, &exe);
  if (exe)
    EXPECT(count_steps(exe, CPU_STEP_CALL) == 1 && count_steps(exe, CPU_STEP_KERNEL) == 0,
           "one GEMM running the epilogue kernel on its blocks, got %d calls and %d kernels",
           count_steps(exe, CPU_STEP_CALL), count_steps(exe, CPU_STEP_KERNEL));
  if (r1 && r2) {
    const float *x = args[0]->data, *w = args[1]->data, *b = args[2]->data, *got = r1->data;
    double worst = 0;
    for (int i = 0; i < 9; i++)
      for (int j = 0; j < 21; j++) {
        double want = b[j];
        for (int k = 0; k < 13; k++) want += (double)x[i * 13 + k] * w[k * 21 + j];
        if (want < 0) want = 0;
        double e = fabs(got[i * 21 + j] - want) / (1 + fabs(want));
        if (e > worst) worst = e;
      }
    EXPECT(worst < 1e-5, "relative error %g against max(x.w + b, 0)", worst);
    EXPECT(memcmp(r1->data, r2->data, 9 * 21 * sizeof(float)) == 0, "1 and 2 threads give the same bytes");
  }
  host_buffer_free(r1);
  host_buffer_free(r2);
  executable_free(exe);
  for (int i = 0; i < 3; i++) host_buffer_free(args[i]);
}

static const char two_layer_text[] =
    "HloModule two_layers\n"
    "ENTRY main {\n"
    "  x = f32[6,10] parameter(0)\n"
    "  w1 = f32[10,12] parameter(1)\n"
    "  w2 = f32[12,5] parameter(2)\n"
    "  zero = f32[] constant(0)\n"
    "  d1 = f32[6,12] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  z1 = f32[6,12] broadcast(zero), dimensions={}\n"
    "  h = f32[6,12] maximum(d1, z1)\n"
    "  d2 = f32[6,5] dot(h, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  z2 = f32[6,5] broadcast(zero), dimensions={}\n"
    "  ROOT y = f32[6,5] maximum(d2, z2)\n"
    "}\n";

/* Both layers' products share one temporary: the second must not see the first. */
TEST(consecutive_output_fusions_each_read_their_own_product) {
  int64_t dx[2] = {6, 10}, d1[2] = {10, 12}, d2[2] = {12, 5};
  HostBuffer *args[3] = {f32_random(2, dx, 10), f32_random(2, d1, 11), f32_random(2, d2, 12)};
  HostBuffer *r1, *r2;
  Executable *exe;
  run_both(two_layer_text, args, 3, &r1, &r2, &exe);
  if (exe) EXPECT(count_steps(exe, CPU_STEP_CALL) == 2, "two GEMMs, got %d", count_steps(exe, CPU_STEP_CALL));
  if (r1 && r2) {
    const float *x = args[0]->data, *w1 = args[1]->data, *w2 = args[2]->data, *got = r1->data;
    double h[6][12], worst = 0;
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 12; j++) {
        h[i][j] = 0;
        for (int k = 0; k < 10; k++) h[i][j] += (double)x[i * 10 + k] * w1[k * 12 + j];
        if (h[i][j] < 0) h[i][j] = 0;
      }
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 5; j++) {
        double want = 0;
        for (int k = 0; k < 12; k++) want += h[i][k] * w2[k * 5 + j];
        if (want < 0) want = 0;
        double e = fabs(got[i * 5 + j] - want) / (1 + fabs(want));
        if (e > worst) worst = e;
      }
    EXPECT(worst < 1e-5, "relative error %g against two relu layers", worst);
    EXPECT(memcmp(r1->data, r2->data, 6 * 5 * sizeof(float)) == 0, "1 and 2 threads give the same bytes");
  }
  host_buffer_free(r1);
  host_buffer_free(r2);
  executable_free(exe);
  for (int i = 0; i < 3; i++) host_buffer_free(args[i]);
}

/* rng-get-and-update-state (a generator state XLA advances every run)
 * stands for any op the backend has no code for; the evaluator runs it. */
static const char refused_text[] =
    "HloModule refused\n"
    "ENTRY main {\n"
    "  x = f32[3,3] parameter(0)\n"
    "  ROOT factor = u64[2] rng-get-and-update-state(), delta=1\n"
    "}\n";

TEST(what_it_cannot_compile_is_a_located_error_naming_the_instruction) {
  Status st;
  Executable *exe = compile_text(refused_text, 1, &st);
  EXPECT(exe == NULL, "an rng-get-and-update-state is refused, not run some other way");
  EXPECT(st.code == STATUS_UNSUPPORTED && status_exit_code(&st) == 2, "a compile error (exit 2), code %d", st.code);
  EXPECT(strstr(st.message, "the CPU backend cannot compile factor (rng-get-and-update-state) yet") != NULL, "message: %s",
         st.message);
  EXPECT(st.loc.line == 4, "located at its line, got %d", st.loc.line);
  executable_free(exe);
}

/* Kernels that compile to the same code are compiled once and shared by
 * their steps (an unrolled model's layers); kernels that differ only in
 * what the code generator reads from their HLO (reduce-precision's bit
 * counts) or in a layout are compiled apart. Unfused, each op is a kernel.
 * x = 1.25: with no mantissa bit it rounds to 1, with two it stays 1.25. */
static const char same_code_text[] =
    "HloModule same_code\n"
    "ENTRY main {\n"
    "  x = f32[8,16] parameter(0)\n"
    "  y = f32[8,16] parameter(1)\n"
    "  e1 = f32[8,16] negate(x)\n"
    "  e2 = f32[8,16] negate(y)\n"
    "  r1 = f32[8,16] reduce-precision(x), exponent_bits=8, mantissa_bits=0\n"
    "  r2 = f32[8,16] reduce-precision(x), exponent_bits=8, mantissa_bits=2\n"
    "  t = f32[8,16]{0,1} negate(x)\n"
    "  ROOT out = (f32[8,16], f32[8,16], f32[8,16], f32[8,16], f32[8,16]{0,1}) tuple(e1, e2, r1, r2, t)\n"
    "}\n";

static const CompiledKernel *kernel_of(const Executable *exe, const char *name) {
  const CpuProgram *p = exe->program;
  for (int i = 0; i < p->step_count; i++)
    if (p->steps[i].kind == CPU_STEP_KERNEL && strcmp(p->steps[i].inst->name, name) == 0) return p->steps[i].kernel;
  return NULL;
}

TEST(kernels_of_the_same_code_compile_once_and_others_apart) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(same_code_text, strlen(same_code_text), "test.hlo", &st);
  EXPECT(m != NULL, "%s", st.message);
  if (!m) return;
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_CPU);
  o.threads = 1;
  o.opt.no_fusion = true;
  Executable *exe = executable_compile(m, &o, &st);
  module_free(m);
  EXPECT(exe != NULL, "compiles: %s", st.message);
  if (!exe) return;
  const CompiledKernel *e1 = kernel_of(exe, "e1"), *e2 = kernel_of(exe, "e2"), *r1 = kernel_of(exe, "r1"),
                       *r2 = kernel_of(exe, "r2"), *t = kernel_of(exe, "t");
  EXPECT(e1 && e2 && r1 && r2 && t, "a kernel step for each op");
  EXPECT(e1 == e2, "negate(x) and negate(y) share one compiled kernel");
  EXPECT(r1 != r2, "reduce-precision with 0 and with 2 mantissa bits are compiled apart");
  EXPECT(t != e1, "a negate in another layout is compiled apart");
  int64_t dims[2] = {8, 16};
  HostBuffer *args[2] = {f32_random(2, dims, 1), f32_random(2, dims, 2)};
  float *x = args[0]->data;
  for (int i = 0; i < 8 * 16; i++) x[i] = 1.25f;
  HostBuffer *out = executable_run(exe, args, 2, &st);
  EXPECT(out != NULL, "runs: %s", st.message);
  if (out) {
    const float *y = args[1]->data, *ne1 = out->elements[0]->data, *ne2 = out->elements[1]->data;
    const float *pr1 = out->elements[2]->data, *pr2 = out->elements[3]->data;
    int wrong = 0;
    for (int i = 0; i < 8 * 16; i++)
      wrong += ne1[i] != -1.25f || ne2[i] != -y[i] || pr1[i] != 1.0f || pr2[i] != 1.25f;
    EXPECT(wrong == 0, "%d wrong elements; first: e1 %g e2 %g (want %g) r1 %g (want 1) r2 %g (want 1.25)", wrong,
           ne1[0], ne2[0], -y[0], pr1[0], pr2[0]);
    host_buffer_free(out);
  }
  host_buffer_free(args[0]);
  host_buffer_free(args[1]);
  executable_free(exe);
}

/* Mappings of this process that are writable and executable at once:
 * their count, and the first one's line in first_line. */
static int writable_executable_mappings(char *first_line, size_t size) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  char line[512];
  int count = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 || perms[1] != 'w' || perms[2] != 'x') continue;
    if (count++ == 0) snprintf(first_line, size, "%s", line);
  }
  fclose(f);
  return count;
}

/* W^X: code is written, then made read-execute, for every kernel, the
 * GEMM's micro-kernels and the compiled comparators alike. */
TEST(compiled_programs_leave_no_page_writable_and_executable) {
  Status st;
  Executable *programs[3] = {compile_text(mlp_text, 2, &st), compile_text(chain_text, 1, &st),
                             compile_text(two_layer_text, 2, &st)};
  for (int i = 0; i < 3; i++) EXPECT(programs[i] != NULL, "program %d compiles: %s", i, st.message);
  char line[512] = "";
  int found = writable_executable_mappings(line, sizeof line);
  EXPECT(found == 0, "%d mappings are writable and executable, the first: %s", found, line);
  for (int i = 0; i < 3; i++) executable_free(programs[i]);
}

/* The threads this process runs now (/proc/self/status), -1 when unknown. */
static int process_thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  int threads = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "Threads: %d", &threads) == 1) break;
  fclose(f);
  return threads;
}

static const char one_task_dot_text[] =
    "HloModule one_task\n"
    "ENTRY main {\n"
    "  a = f32[128,128] parameter(0)\n"
    "  b = f32[128,128] parameter(1)\n"
    "  ROOT c = f32[128,128] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "}\n";

static const char many_task_dot_text[] =
    "HloModule many_tasks\n"
    "ENTRY main {\n"
    "  a = f32[512,512] parameter(0)\n"
    "  b = f32[512,512] parameter(1)\n"
    "  ROOT c = f32[512,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "}\n";

/* A second thread only pays where a step has two tasks to share: a
 * program whose every step is one task (a 128^3 product is one GEMM task)
 * starts no thread at --threads 2 and runs on the caller's; one with a
 * step of several starts the second. Either way the bits are 1 thread's. */
TEST(threads_start_only_for_a_program_with_a_step_of_several_tasks) {
  static const struct {
    const char *text;
    int64_t n;
    int new_threads;
  } cases[] = {{one_task_dot_text, 128, 0}, {many_task_dot_text, 512, 1}};
  for (int c = 0; c < 2; c++) {
    int64_t dims[2] = {cases[c].n, cases[c].n};
    HostBuffer *args[2] = {f32_random(2, dims, 3), f32_random(2, dims, 4)};
    Status st;
    Executable *one = compile_text(cases[c].text, 1, &st);
    int before = process_thread_count();
    Executable *two = compile_text(cases[c].text, 2, &st);
    int started = process_thread_count() - before;
    EXPECT(one && two, "compiles: %s", st.message);
    EXPECT(before < 0 || started == cases[c].new_threads, "%lld^3 at 2 threads started %d threads, want %d",
           (long long)cases[c].n, started, cases[c].new_threads);
    HostBuffer *out1 = one ? executable_run(one, args, 2, &st) : NULL;
    HostBuffer *out2 = two ? executable_run(two, args, 2, &st) : NULL;
    EXPECT(out1 && out2, "runs: %s", st.message);
    if (out1 && out2)
      EXPECT(memcmp(out1->data, out2->data, (size_t)(dims[0] * dims[1]) * sizeof(float)) == 0,
             "%lld^3: 2 threads' bits differ from 1 thread's", (long long)cases[c].n);
    host_buffer_free(out1);
    host_buffer_free(out2);
    executable_free(one);
    executable_free(two);
    host_buffer_free(args[0]);
    host_buffer_free(args[1]);
  }
}

/* A run into the caller's result, inside a memory scope as the public API
 * runs it; false on an error or an unwind. */
static bool run_into_scoped(const Executable *exe, HostBuffer *const *args, int n, void *const *leaves) {
  Status st;
  status_clear(&st);
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return false;
  bool ok = executable_run_into(exe, args, n, leaves, &st);
  mem_scope_end(&scope);
  return ok;
}

/* Issue 17 item 5: after the first run, a run allocates nothing: not the
 * GEMM's workspace (kept by its plan) nor the memory scope's set that
 * borrowing it used to need, not a split sum's chunk sums (in the
 * temporary block), at 1 thread and at 2. */
TEST(runs_after_the_first_allocate_nothing) {
  static const char *const texts[] = {
      one_task_dot_text,
      many_task_dot_text,
      "HloModule long_sum\n"
      "add { x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y) }\n"
      "ENTRY main {\n"
      "  a = f32[262144] parameter(0)\n"
      "  b = f32[262144] parameter(1)\n"
      "  zero = f32[] constant(0)\n"
      "  s = f32[] reduce(a, zero), dimensions={0}, to_apply=add\n"
      "  t = f32[] reduce(b, zero), dimensions={0}, to_apply=add\n"
      "  ROOT both = (f32[], f32[]) tuple(s, t)\n"
      "}\n",
  };
  for (int t = 0; t < 3; t++) {
    for (int threads = 1; threads <= 2; threads++) {
      Status st;
      Executable *exe = compile_text(texts[t], threads, &st);
      EXPECT(exe != NULL, "module %d compiles: %s", t, st.message);
      if (!exe) continue;
      const Computation *entry = exe->module->entry;
      HostBuffer *args[2];
      for (int i = 0; i < 2; i++)
        args[i] = f32_random(entry->parameters[i]->shape.rank, entry->parameters[i]->shape.dims, 5 + i);
      void *leaves[2] = {0};
      int n = 0;
      HostBuffer *result = host_buffer_create_leaves(&entry->root->shape, true, leaves, &n, &st);
      bool ok = run_into_scoped(exe, args, 2, leaves);
      long before = mem_allocation_count();
      for (int run = 0; ok && run < 4; run++) ok = run_into_scoped(exe, args, 2, leaves);
      long allocated = mem_allocation_count() - before;
      EXPECT(ok, "module %d runs at %d threads", t, threads);
      EXPECT(allocated == 0, "module %d at %d threads: 4 runs after the first allocated %ld blocks", t, threads,
             allocated);
      host_buffer_free(result);
      host_buffer_free(args[0]);
      host_buffer_free(args[1]);
      executable_free(exe);
    }
  }
}

/* A run that returns its result (axle_executable_run) allocates that
 * result and nothing else: each buffer one block, its data (or a tuple's
 * element list) in the same block as the buffer, and no list of the
 * result's leaves per run. Here an array, and a tuple of an array and a
 * tuple of two: 1 and 2 + 3 blocks. */
TEST(a_run_returning_its_result_allocates_one_block_per_buffer) {
  static const char *const texts[] = {
      "HloModule array_result\n"
      "ENTRY main {\n  a = f32[64,32] parameter(0)\n  b = f32[64,32] parameter(1)\n"
      "  ROOT s = f32[64,32] add(a, b)\n}\n",
      "HloModule tuple_result\n"
      "ENTRY main {\n  a = f32[64,32] parameter(0)\n  b = f32[64,32] parameter(1)\n"
      "  s = f32[64,32] add(a, b)\n  m = f32[64,32] multiply(a, b)\n  d = f32[64,32] subtract(a, b)\n"
      "  ROOT t = (f32[64,32], (f32[64,32], f32[64,32])) tuple(s, (f32[64,32], f32[64,32]) tuple(m, d))\n}\n",
  };
  static const long blocks_wanted[] = {1, 5};
  int64_t dims[2] = {64, 32};
  for (int t = 0; t < 2; t++) {
    Status st;
    Executable *exe = compile_text(texts[t], 1, &st);
    EXPECT(exe != NULL, "module %d compiles: %s", t, st.message);
    if (!exe) continue;
    HostBuffer *args[2] = {f32_random(2, dims, 11), f32_random(2, dims, 12)};
    HostBuffer *first = executable_run(exe, args, 2, &st);
    long before = mem_allocation_count();
    HostBuffer *later = executable_run(exe, args, 2, &st);
    long allocated = mem_allocation_count() - before;
    EXPECT(first && later, "module %d runs: %s", t, st.message);
    EXPECT(allocated == blocks_wanted[t], "module %d: a run allocated %ld blocks, wanted %ld (its result's buffers)",
           t, allocated, blocks_wanted[t]);
    HostBuffer *leaf = later && t == 1 ? later->elements[1]->elements[1] : later;
    const float *x = args[0]->data, *y = args[1]->data;
    bool right = leaf != NULL && ((uintptr_t)leaf->data & (ARRAY_ALIGNMENT - 1)) == 0;
    for (int i = 0; right && i < 64 * 32; i++) right = ((float *)leaf->data)[i] == (t == 1 ? x[i] - y[i] : x[i] + y[i]);
    EXPECT(right, "module %d: the result's last leaf is wrong or not aligned to %d bytes", t, ARRAY_ALIGNMENT);
    host_buffer_free(first);
    host_buffer_free(later);
    host_buffer_free(args[0]);
    host_buffer_free(args[1]);
    executable_free(exe);
  }
}

int main(void) {
  RUN(unfused_f32_dots_run_on_the_gemm_and_match_a_double_product);
  RUN(a_fused_elementwise_chain_is_one_kernel_with_exact_results);
  RUN(an_output_fusion_runs_the_gemm_then_its_epilogue_kernel);
  RUN(consecutive_output_fusions_each_read_their_own_product);
  RUN(what_it_cannot_compile_is_a_located_error_naming_the_instruction);
  RUN(compiled_programs_leave_no_page_writable_and_executable);
  RUN(kernels_of_the_same_code_compile_once_and_others_apart);
  RUN(threads_start_only_for_a_program_with_a_step_of_several_tasks);
  RUN(runs_after_the_first_allocate_nothing);
  RUN(a_run_returning_its_result_allocates_one_block_per_buffer);
  return test_summary();
}
