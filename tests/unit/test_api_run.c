/* The public C API a deployment needs: the results' shapes before a run,
 * runs into the caller's memory, the optimizer's flags and dumps per
 * compile, and .npy files. Corpus modules run on their NumPy-made inputs
 * (tests/hlo/NAME/in*.npy, read with axle_npy_read). */
#include <dirent.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

#include "axle.h"
#include "tool_files.h"
#include "../test.h"

static char fake_driver[4096];

static const char pair_text[] =
    "HloModule pair\n"
    "ENTRY main {\n"
    "  x = f32[2,3] parameter(0)\n"
    "  doubled = f32[2,3] add(x, x)\n"
    "  zero = f32[] constant(0)\n"
    "  sum = f32[] reduce(x, zero), dimensions={0,1}, to_apply=add\n"
    "  count = s32[] constant(6)\n"
    "  ROOT r = (f32[2,3], (f32[], s32[])) tuple(doubled, (f32[], s32[]) tuple(sum, count))\n"
    "}\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT c = f32[] add(a, b)\n"
    "}\n";

static axle_module_t *parse(const char *text) {
  axle_error_t *err = NULL;
  axle_module_t *m = axle_module_parse(text, strlen(text), "test.hlo", &err);
  EXPECT(m != NULL, "parse failed: %s", axle_error_message(err));
  axle_error_free(err);
  return m;
}

static axle_executable_t *compile(const axle_module_t *m, axle_backend_t backend, const axle_compile_options_t *o) {
  axle_error_t *err = NULL;
  axle_executable_t *exe = m ? axle_compile_with(m, backend, o, &err) : NULL;
  EXPECT(!m || exe != NULL, "compile failed: %s", axle_error_message(err));
  axle_error_free(err);
  return exe;
}

TEST(result_shapes_are_known_before_a_run) {
  axle_module_t *m = parse(pair_text);
  axle_executable_t *exe = compile(m, AXLE_BACKEND_CPU, NULL);
  if (!exe) goto done;
  EXPECT(axle_executable_result_count(exe) == 3, "count %d", axle_executable_result_count(exe));
  EXPECT(axle_executable_result_type(exe, 0) == AXLE_F32, "type 0");
  EXPECT(axle_executable_result_rank(exe, 0) == 2, "rank 0 %d", axle_executable_result_rank(exe, 0));
  EXPECT(axle_executable_result_dim(exe, 0, 0) == 2 && axle_executable_result_dim(exe, 0, 1) == 3, "dims 0");
  EXPECT(axle_executable_result_byte_size(exe, 0) == 24, "bytes 0 %zu", axle_executable_result_byte_size(exe, 0));
  EXPECT(axle_executable_result_type(exe, 1) == AXLE_F32 && axle_executable_result_rank(exe, 1) == 0, "leaf 1");
  EXPECT(axle_executable_result_byte_size(exe, 1) == 4, "bytes 1 %zu", axle_executable_result_byte_size(exe, 1));
  EXPECT(axle_executable_result_type(exe, 2) == AXLE_S32, "type 2 %d", axle_executable_result_type(exe, 2));
  /* out of range, each way */
  EXPECT(axle_executable_result_type(exe, 3) == AXLE_TUPLE, "type 3");
  EXPECT(axle_executable_result_rank(exe, -1) == -1, "rank -1");
  EXPECT(axle_executable_result_dim(exe, 0, 2) == -1, "dim 2 of a rank-2 result");
  EXPECT(axle_executable_result_byte_size(exe, 3) == 0, "bytes 3");
  EXPECT(axle_executable_result_byte_size(NULL, 0) == 0, "no executable");
done:
  axle_executable_free(exe);
  axle_module_free(m);
}

/* Fills with a pattern no result holds, so a leaf left unwritten shows. */
enum { POISON = 0xA5 };

/* Runs exe with axle_executable_run and with axle_executable_run_into
 * (into poisoned memory) and compares every leaf byte for byte. */
static void expect_run_into_matches_run(const char *label, axle_executable_t *exe, axle_buffer_t *const *args,
                                        int arg_count) {
  axle_error_t *err = NULL;
  axle_buffer_t *result = NULL;
  bool ran = axle_executable_run(exe, args, arg_count, &result, &err);
  EXPECT(ran, "%s: run failed: %s", label, axle_error_message(err));
  int count = axle_executable_result_count(exe);
  void **leaves = calloc((size_t)count + 1, sizeof *leaves);
  size_t *sizes = calloc((size_t)count + 1, sizeof *sizes);
  for (int i = 0; i < count; i++) {
    sizes[i] = axle_executable_result_byte_size(exe, i);
    leaves[i] = aligned_alloc(64, sizes[i] / 64 * 64 + 64);
    memset(leaves[i], POISON, sizes[i]);
  }
  bool ran_into = axle_executable_run_into(exe, args, arg_count, leaves, sizes, count, &err);
  EXPECT(ran_into, "%s: run_into failed: %s", label, axle_error_message(err));
  /* the leaves of the run's result, depth first, as a stack of tuples */
  axle_buffer_t *stack[64];
  int index[64], depth = 0, leaf = 0;
  stack[0] = result, index[0] = -1;
  while (ran && ran_into && depth >= 0) {
    axle_buffer_t *b = stack[depth];
    if (axle_buffer_type(b) != AXLE_TUPLE) {
      EXPECT(leaf < count, "%s: more leaves than result_count", label);
      if (leaf >= count) break;
      EXPECT(axle_buffer_byte_size(b) == sizes[leaf], "%s: leaf %d: %zu bytes, result_byte_size %zu", label, leaf,
             axle_buffer_byte_size(b), sizes[leaf]);
      EXPECT(memcmp(axle_buffer_data(b), leaves[leaf], sizes[leaf]) == 0, "%s: leaf %d differs", label, leaf);
      leaf++;
      depth--;
      continue;
    }
    if (++index[depth] < axle_buffer_tuple_count(b) && depth + 1 < 64) {
      stack[depth + 1] = axle_buffer_tuple_element(b, index[depth]);
      index[depth + 1] = -1;
      depth++;
    } else {
      depth--;
    }
  }
  EXPECT(!ran || !ran_into || leaf == count, "%s: %d leaves, result_count %d", label, leaf, count);
  for (int i = 0; i < count; i++) free(leaves[i]);
  free(leaves);
  free(sizes);
  axle_buffer_free(result);
  axle_error_free(err);
}

TEST(run_into_writes_what_run_returns) {
  axle_module_t *m = parse(pair_text);
  int64_t dims[2] = {2, 3};
  float x[6] = {1, -2, 3.5f, 4, 5, -6};
  axle_buffer_t *arg = axle_buffer_create(AXLE_F32, 2, dims, x, NULL);
  for (axle_backend_t be = AXLE_BACKEND_INTERP; m && be <= AXLE_BACKEND_CPU; be++) {
    axle_executable_t *exe = compile(m, be, NULL);
    if (!exe) continue;
    expect_run_into_matches_run(be == AXLE_BACKEND_CPU ? "pair on cpu" : "pair on interp", exe, &arg, 1);
    /* and the values themselves, against a hand computation */
    float doubled[6] __attribute__((aligned(16))), sum[4] __attribute__((aligned(16)));
    int32_t count[4] __attribute__((aligned(16)));
    void *results[3] = {doubled, sum, count};
    size_t sizes[3] = {sizeof doubled, sizeof sum, sizeof count};
    axle_error_t *err = NULL;
    bool ok = axle_executable_run_into(exe, &arg, 1, results, sizes, 3, &err);
    EXPECT(ok, "run_into: %s", axle_error_message(err));
    EXPECT(ok && doubled[2] == 7 && doubled[5] == -12 && sum[0] == 5.5f && count[0] == 6,
           "got %g %g %g %d", doubled[2], doubled[5], sum[0], count[0]);
    axle_error_free(err);
    axle_executable_free(exe);
  }
  axle_buffer_free(arg);
  axle_module_free(m);
}

/* A loop as a deployment writes it: the argument refilled in place, the
 * results into the same memory every step. */
TEST(run_into_in_a_loop_reuses_the_same_memory) {
  axle_module_t *m = parse(pair_text);
  axle_executable_t *exe = compile(m, AXLE_BACKEND_CPU, NULL);
  int64_t dims[2] = {2, 3};
  axle_buffer_t *arg = axle_buffer_create(AXLE_F32, 2, dims, NULL, NULL);
  float doubled[6] __attribute__((aligned(16))), sum[4] __attribute__((aligned(16)));
  int32_t count[4] __attribute__((aligned(16)));
  void *results[3] = {doubled, sum, count};
  size_t sizes[3] = {sizeof doubled, sizeof sum, sizeof count};
  for (int step = 0; exe && step < 5; step++) {
    float *x = axle_buffer_data(arg);
    for (int i = 0; i < 6; i++) x[i] = (float)(step * 10 + i);
    axle_error_t *err = NULL;
    bool ok = axle_executable_run_into(exe, &arg, 1, results, sizes, 3, &err);
    EXPECT(ok, "step %d: %s", step, axle_error_message(err));
    axle_error_free(err);
    float want_sum = (float)(step * 60 + 15);
    EXPECT(doubled[5] == 2 * (float)(step * 10 + 5) && sum[0] == want_sum, "step %d: doubled[5] %g, sum %g (want %g)",
           step, doubled[5], sum[0], want_sum);
  }
  axle_buffer_free(arg);
  axle_executable_free(exe);
  axle_module_free(m);
}

static long minor_page_faults(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

/* A run allocates nothing of its own: the temporary block (here the first
 * product, which the second reads) and the GEMM's packed panels are made by
 * the first run and kept. Memory freshly mapped for each run would cost a
 * page fault per 4 KiB every run (1 MiB of packed B alone is 256), so the
 * page faults of the later runs say whether anything was allocated; the
 * kernel's own bookkeeping may add a few. The results stay the same bits. */
TEST(run_into_in_a_loop_touches_no_fresh_memory) {
  axle_module_t *m = parse("HloModule two_products\n"
                           "ENTRY main {\n"
                           "  a = f32[512,512] parameter(0)\n"
                           "  b = f32[512,512] parameter(1)\n"
                           "  c = f32[512,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                           "  ROOT d = f32[512,512] dot(c, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                           "}\n");
  axle_compile_options_t one_thread = {.threads = 1};
  axle_executable_t *exe = compile(m, AXLE_BACKEND_CPU, &one_thread);
  int64_t dims[2] = {512, 512};
  axle_buffer_t *args[2] = {axle_buffer_create(AXLE_F32, 2, dims, NULL, NULL),
                            axle_buffer_create(AXLE_F32, 2, dims, NULL, NULL)};
  for (int i = 0; i < 2; i++) {
    float *x = axle_buffer_data(args[i]);
    for (int k = 0; k < 512 * 512; k++) x[k] = (float)((k * (i + 3)) % 17) / 16.0f - 0.5f;
  }
  size_t size = 512 * 512 * sizeof(float);
  float *first = aligned_alloc(64, size), *later = aligned_alloc(64, size);
  void *results[1] = {first};
  axle_error_t *err = NULL;
  bool ok = exe && axle_executable_run_into(exe, args, 2, results, &size, 1, &err);
  EXPECT(!exe || ok, "first run: %s", axle_error_message(err));
  enum { RUNS = 8 };
  memset(later, 0, size);  /* the caller's own pages, touched before counting */
  results[0] = later;
  long faults_before = minor_page_faults();
  for (int run = 0; ok && run < RUNS; run++) ok = axle_executable_run_into(exe, args, 2, results, &size, 1, &err);
  long faults = minor_page_faults() - faults_before;
  EXPECT(!exe || ok, "later runs: %s", axle_error_message(err));
  EXPECT(!ok || faults < 4 * RUNS, "%d runs after the first took %ld page faults (%ld a run)", RUNS, faults,
         faults / RUNS);
  EXPECT(!ok || memcmp(first, later, size) == 0, "a later run's bits differ from the first's");
  axle_error_free(err);
  free(first);
  free(later);
  axle_buffer_free(args[0]);
  axle_buffer_free(args[1]);
  axle_executable_free(exe);
  axle_module_free(m);
}

/* Arrays the library allocates start on a cache line (64 bytes), whatever
 * their size: malloc gives 16, and a large block 16 bytes past a page. */
TEST(buffers_start_on_a_cache_line) {
  static const int64_t sizes[] = {1, 3, 1000, 1 << 20};
  for (int i = 0; i < 4; i++) {
    axle_error_t *err = NULL;
    axle_buffer_t *b = axle_buffer_create(AXLE_F32, 1, &sizes[i], NULL, &err);
    EXPECT(b != NULL, "f32[%lld]: %s", (long long)sizes[i], axle_error_message(err));
    axle_error_free(err);
    if (!b) continue;
    uintptr_t at = (uintptr_t)axle_buffer_data(b);
    EXPECT(at % 64 == 0, "f32[%lld] starts %u bytes past a 64-byte line", (long long)sizes[i], (unsigned)(at % 64));
    axle_buffer_free(b);
  }
}

/* Each misuse fails with AXLE_ERROR_INPUT, names what is wrong, and runs
 * nothing: the caller's memory keeps its poison. */
TEST(run_into_refuses_wrong_results_before_running) {
  axle_module_t *m = parse(pair_text);
  axle_executable_t *exe = compile(m, AXLE_BACKEND_CPU, NULL);
  int64_t dims[2] = {2, 3};
  axle_buffer_t *arg = axle_buffer_create(AXLE_F32, 2, dims, NULL, NULL);
  unsigned char memory[3][64] __attribute__((aligned(16)));
  memset(memory, POISON, sizeof memory);
  void *results[3] = {memory[0], memory[1], memory[2]};
  void *misaligned[3] = {memory[0] + 4, memory[1], memory[2]};
  size_t sizes[3] = {24, 4, 4}, short_sizes[3] = {24, 4, 3};
  struct {
    void *const *results;
    const size_t *sizes;
    int count;
    const char *says;
  } cases[] = {
      {results, sizes, 2, "the result has 3 arrays, not 2"},
      {results, short_sizes, 3, "result 2 needs 4 bytes, given 3"},
      {misaligned, sizes, 3, "result 0 is not aligned to 16 bytes"},
      {NULL, sizes, 3, "no results or no result sizes given"},
  };
  for (size_t c = 0; exe && c < sizeof cases / sizeof cases[0]; c++) {
    axle_error_t *err = NULL;
    bool ok = axle_executable_run_into(exe, &arg, 1, cases[c].results, cases[c].sizes, cases[c].count, &err);
    EXPECT(!ok && axle_error_status(err) == AXLE_ERROR_INPUT, "case %zu: must be refused as input", c);
    EXPECT(strstr(axle_error_message(err), cases[c].says) != NULL, "case %zu: message %s", c,
           axle_error_message(err));
    axle_error_free(err);
  }
  bool untouched = true;
  for (size_t i = 0; i < sizeof memory; i++) untouched &= ((unsigned char *)memory)[i] == POISON;
  EXPECT(untouched, "a refused run wrote into the results");
  /* the arguments are checked as axle_executable_run checks them */
  int64_t wrong[1] = {6};
  axle_buffer_t *flat = axle_buffer_create(AXLE_F32, 1, wrong, NULL, NULL);
  axle_error_t *err = NULL;
  bool ok = exe && axle_executable_run_into(exe, &flat, 1, results, sizes, 3, &err);
  EXPECT(!ok && strstr(axle_error_message(err), "expects f32[2,3], got f32[6]"), "message %s", axle_error_message(err));
  axle_error_free(err);
  axle_buffer_free(flat);
  axle_buffer_free(arg);
  axle_executable_free(exe);
  axle_module_free(m);
}

/* Reads tests/hlo/NAME/in*.npy in order; returns how many. */
static int corpus_inputs(const char *name, axle_buffer_t **args, int most) {
  int n = 0;
  for (; n < most; n++) {
    char path[512];
    snprintf(path, sizeof path, "tests/hlo/%s/in%d.npy", name, n);
    if (access(path, R_OK) != 0) break;
    axle_error_t *err = NULL;
    args[n] = axle_npy_read(path, &err);
    EXPECT(args[n] != NULL, "%s: %s", path, axle_error_message(err));
    axle_error_free(err);
    if (!args[n]) break;
  }
  return n;
}

/* Runs every corpus module that runs on the backends from `first` to `last`
 * and compares run with run_into (expect_run_into_matches_run); returns
 * how many runs it compared. */
static int corpus_run_into_matches_run(axle_backend_t first, axle_backend_t last) {
  DIR *dir = opendir("tests/hlo");
  EXPECT(dir != NULL, "cannot read tests/hlo (run from the repository root)");
  int compared = 0;
  for (struct dirent *e; dir && (e = readdir(dir));) {
    size_t length = strlen(e->d_name);
    if (length < 5 || strcmp(e->d_name + length - 4, ".hlo") != 0) continue;
    char name[256], path[600];
    snprintf(name, sizeof name, "%.*s", (int)(length - 4), e->d_name);
    snprintf(path, sizeof path, "tests/hlo/%s", e->d_name);
    axle_module_t *m = axle_module_parse_file(path, NULL);
    axle_buffer_t *args[64] = {0};
    int n = m ? corpus_inputs(name, args, 64) : 0;
    for (axle_backend_t be = first; m && be <= last; be++) {
      /* what a backend refuses, or a run refuses, is other tests' business */
      axle_executable_t *exe = axle_compile(m, be, NULL);
      axle_buffer_t *probe = NULL;
      if (exe && axle_executable_run(exe, args, n, &probe, NULL)) {
        char label[400];
        snprintf(label, sizeof label, "%s on %s", name, be == AXLE_BACKEND_CPU ? "cpu" : "interp");
        expect_run_into_matches_run(label, exe, args, n);
        compared++;
      }
      axle_buffer_free(probe);
      axle_executable_free(exe);
    }
    for (int i = 0; i < n; i++) axle_buffer_free(args[i]);
    axle_module_free(m);
  }
  if (dir) closedir(dir);
  return compared;
}

/* Every corpus module that runs, on the interpreter and the CPU: results
 * written in place, copied from a parameter or a constant, relayouted,
 * nested in tuples, made by loops and runtime routines. */
TEST(run_into_matches_run_on_every_corpus_module) {
  int compared = corpus_run_into_matches_run(AXLE_BACKEND_INTERP, AXLE_BACKEND_CPU);
  /* 171 of the 179 modules run on both (the rest need elided constants or are refused) */
  EXPECT(compared >= 300, "only %d runs compared", compared);
}

/* axle_executable_run hands back memory the program wrote, not memory
 * zeroed first and then written (a second pass over the result every run):
 * so every byte of every result must be written by the program itself,
 * whatever the memory held. Here malloc fills what it hands out with 0x5A
 * (glibc's M_PERTURB; under ASan its allocator's 0xbe) and serves large
 * blocks from the heap too, while run_into's memory holds 0xA5: a byte the
 * program leaves alone differs between the two. */
TEST(run_writes_every_byte_of_its_result_whatever_its_memory_held) {
#if defined(__GLIBC__) && defined(M_PERTURB)
  mallopt(M_PERTURB, 0xA5);                  /* malloc's blocks then hold 0xA5 ^ 0xFF */
  mallopt(M_MMAP_THRESHOLD, 256 << 20);      /* and come from the heap, not fresh zero pages */
#endif
  unsigned char *probe = aligned_alloc(64, 4096);
  bool dirty = probe && probe[100] != 0;
  free(probe);
  EXPECT(dirty, "malloc's memory is not filled on this system: the test would not see an unwritten byte");
  int compared = corpus_run_into_matches_run(AXLE_BACKEND_CPU, AXLE_BACKEND_CPU);
#if defined(__GLIBC__) && defined(M_PERTURB)
  mallopt(M_PERTURB, 0);
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
  EXPECT(compared >= 150, "only %d runs compared", compared);
}

/* The GPU backend writes results from device memory straight into the
 * caller's: on the fake CUDA driver, its kernels run by the SIMT simulator
 * (tests/fake_cuda). */
TEST(run_into_on_the_simulated_gpu_writes_what_run_returns) {
  axle_compile_cache_clear();
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  axle_module_t *m = parse(pair_text);
  int64_t dims[2] = {2, 3};
  float x[6] = {1, -2, 3.5f, 4, 5, -6};
  axle_buffer_t *arg = axle_buffer_create(AXLE_F32, 2, dims, x, NULL);
  axle_executable_t *exe = compile(m, AXLE_BACKEND_GPU, NULL);
  if (exe) expect_run_into_matches_run("pair on the simulated gpu", exe, &arg, 1);
  axle_executable_free(exe);
  axle_buffer_free(arg);
  axle_module_free(m);
  axle_error_t *err = NULL;
  m = axle_module_parse_file("tests/hlo/custom_call_sharding_is_identity.hlo", &err);
  EXPECT(m != NULL, "%s", axle_error_message(err));
  axle_error_free(err);
  axle_buffer_t *args[1] = {NULL};
  int n = m ? corpus_inputs("custom_call_sharding_is_identity", args, 1) : 0;
  exe = m && n == 1 ? compile(m, AXLE_BACKEND_GPU, NULL) : NULL;
  if (exe) expect_run_into_matches_run("custom_call_sharding_is_identity on the simulated gpu", exe, args, 1);
  axle_executable_free(exe);
  axle_buffer_free(args[0]);
  axle_module_free(m);
  axle_compile_cache_clear();
  unsetenv("FAKE_CUDA_EXECUTE");
  unsetenv("AXLE_CUDA_DRIVER");
}

/* ---- compile options ---- */

static char *file_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = calloc(1 << 20, 1);
  size_t n = fread(text, 1, (1 << 20) - 1, f);
  text[n] = 0;
  fclose(f);
  return text;
}

/* The after_optimizations dump in dir, or NULL. */
static char *after_optimizations(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char *text = NULL;
  for (struct dirent *e; !text && (e = readdir(d));) {
    if (!strstr(e->d_name, ".after_optimizations.txt")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    text = file_text(path);
  }
  closedir(d);
  return text;
}

static const char fusible_text[] =
    "HloModule fusible\n"
    "ENTRY main {\n"
    "  x = f32[64] parameter(0)\n"
    "  e = f32[64] exponential(x)\n"
    "  ROOT y = f32[64] multiply(e, x)\n"
    "}\n";

static void remove_dir(const char *dir) {
  char command[600];
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  if (system(command) != 0) printf("  (could not remove %s)\n", dir);
}

TEST(compile_options_dump_and_pass_the_optimizers_flags) {
  axle_module_t *m = parse(fusible_text);
  char fused_dir[] = "/tmp/axle_test_api_run_XXXXXX", plain_dir[] = "/tmp/axle_test_api_run_XXXXXX";
  if (!m || !mkdtemp(fused_dir) || !mkdtemp(plain_dir)) goto done;
  char fused_sub[600], plain_sub[600];
  snprintf(fused_sub, sizeof fused_sub, "%s/made/by/the/compile", fused_dir);  /* created by it */
  snprintf(plain_sub, sizeof plain_sub, "%s/dumps", plain_dir);
  axle_compile_options_t fused = {.dump_dir = fused_sub};
  axle_compile_options_t plain = {.dump_dir = plain_sub, .flags = "  --no_fusion\t--fold_limit=16 "};
  axle_executable_t *a = compile(m, AXLE_BACKEND_CPU, &fused), *b = compile(m, AXLE_BACKEND_CPU, &plain);
  char *fused_text = after_optimizations(fused_sub), *plain_text = after_optimizations(plain_sub);
  EXPECT(fused_text != NULL, "no after_optimizations dump in %s", fused_sub);
  EXPECT(plain_text != NULL, "no after_optimizations dump in %s", plain_sub);
  EXPECT(!fused_text || strstr(fused_text, "fusion(") != NULL, "by default the two ops fuse:\n%s", fused_text);
  EXPECT(!plain_text || strstr(plain_text, "fusion(") == NULL, "--no_fusion leaves them apart:\n%s", plain_text);
  free(fused_text);
  free(plain_text);
  axle_executable_free(a);
  axle_executable_free(b);
done:
  remove_dir(fused_dir);
  remove_dir(plain_dir);
  axle_module_free(m);
}

TEST(compile_options_flags_take_effect_and_unknown_ones_are_named) {
  axle_module_t *m = parse(fusible_text);
  axle_error_t *err = NULL;
  /* --max_temp_bytes fails a compile whose temporaries need more */
  axle_compile_options_t tight = {.flags = "--no_fusion --max_temp_bytes=16"};
  axle_executable_t *exe = m ? axle_compile_with(m, AXLE_BACKEND_CPU, &tight, &err) : NULL;
  EXPECT(m && !exe, "f32[64] of temporaries must not fit in 16 bytes");
  EXPECT(!m || strstr(axle_error_message(err), "max_temp_bytes") != NULL, "message %s", axle_error_message(err));
  axle_error_free(err), err = NULL;
  axle_executable_free(exe);
  axle_compile_options_t unknown = {.flags = "--no_fusion --fuse_harder"};
  exe = m ? axle_compile_with(m, AXLE_BACKEND_CPU, &unknown, &err) : NULL;
  EXPECT(m && !exe && axle_error_status(err) == AXLE_ERROR_INPUT, "an unknown flag must be an input error");
  EXPECT(!m || strstr(axle_error_message(err), "unknown optimizer flag '--fuse_harder'") != NULL, "message %s",
         axle_error_message(err));
  axle_error_free(err), err = NULL;
  axle_executable_free(exe);
  axle_compile_options_t empty_dir = {.dump_dir = ""};
  exe = m ? axle_compile_with(m, AXLE_BACKEND_CPU, &empty_dir, &err) : NULL;
  EXPECT(m && !exe && strstr(axle_error_message(err), "dump_dir: the folder name is empty"), "message %s",
         axle_error_message(err));
  axle_error_free(err), err = NULL;
  axle_executable_free(exe);
  /* The API reads no AXLE_FLAGS: what a tool's environment says does not
   * leak into a library's compile. */
  setenv("AXLE_FLAGS", "--not_a_flag", 1);
  exe = m ? axle_compile_with(m, AXLE_BACKEND_CPU, NULL, &err) : NULL;
  EXPECT(!m || exe, "AXLE_FLAGS reached the API: %s", axle_error_message(err));
  unsetenv("AXLE_FLAGS");
  axle_error_free(err);
  axle_executable_free(exe);
  axle_module_free(m);
}

/* ---- .npy ---- */

TEST(npy_read_takes_numpys_files) {
  axle_error_t *err = NULL;
  axle_buffer_t *b = axle_npy_read("tests/hlo/demo_reduce_sum/in0.npy", &err);  /* written by NumPy */
  EXPECT(b != NULL, "read: %s", axle_error_message(err));
  if (b) {
    EXPECT(axle_buffer_type(b) == AXLE_F32 && axle_buffer_rank(b) == 1 && axle_buffer_dim(b, 0) == 1024,
           "f32[1024] expected, got %s rank %d", axle_type_name(axle_buffer_type(b)), axle_buffer_rank(b));
  }
  axle_buffer_free(b);
  axle_error_free(err), err = NULL;
  b = axle_npy_read("tests/hlo/demo_reduce_sum.hlo", &err);  /* not an .npy file */
  EXPECT(!b && axle_error_status(err) != AXLE_OK && axle_error_message(err)[0], "a .hlo file is not .npy");
  axle_error_free(err);
}

TEST(npy_write_then_read_gives_the_same_array) {
  char path[] = "/tmp/axle_test_api_npy_XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  int64_t dims[3] = {2, 1, 3};
  int16_t values[6] = {-3, 0, 7, 32767, -32768, 12};
  axle_buffer_t *b = axle_buffer_create(AXLE_S16, 3, dims, values, NULL);
  axle_error_t *err = NULL;
  bool ok = fd >= 0 && axle_npy_write(path, b, &err);
  EXPECT(ok, "write: %s", axle_error_message(err));
  axle_buffer_t *back = ok ? axle_npy_read(path, &err) : NULL;
  EXPECT(!ok || back, "read back: %s", axle_error_message(err));
  if (back) {
    EXPECT(axle_buffer_type(back) == AXLE_S16 && axle_buffer_rank(back) == 3 && axle_buffer_dim(back, 1) == 1 &&
               axle_buffer_dim(back, 2) == 3,
           "shape changed");
    EXPECT(memcmp(axle_buffer_data(back), values, sizeof values) == 0, "values changed");
  }
  axle_error_free(err), err = NULL;
  /* a tuple has no .npy form */
  axle_buffer_t *tuple = axle_buffer_create_tuple(&b, 1, NULL);
  EXPECT(!axle_npy_write(path, tuple, &err) && axle_error_status(err) == AXLE_ERROR_INPUT, "a tuple must be refused");
  axle_error_free(err);
  axle_buffer_free(tuple);
  axle_buffer_free(back);
  axle_buffer_free(b);
  unlink(path);
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  RUN(result_shapes_are_known_before_a_run);
  RUN(run_into_writes_what_run_returns);
  RUN(run_into_in_a_loop_reuses_the_same_memory);
  RUN(run_into_in_a_loop_touches_no_fresh_memory);
  RUN(buffers_start_on_a_cache_line);
  RUN(run_into_refuses_wrong_results_before_running);
  RUN(run_into_matches_run_on_every_corpus_module);
  RUN(run_writes_every_byte_of_its_result_whatever_its_memory_held);
  RUN(run_into_on_the_simulated_gpu_writes_what_run_returns);
  RUN(compile_options_dump_and_pass_the_optimizers_flags);
  RUN(compile_options_flags_take_effect_and_unknown_ones_are_named);
  RUN(npy_read_takes_numpys_files);
  RUN(npy_write_then_read_gives_the_same_array);
  return test_summary();
}
