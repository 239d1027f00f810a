/* The GPU backend's sort, top-k, scatter and rng-bit-generator, run on the
 * fake driver's SIMT simulator (FAKE_CUDA_EXECUTE=1) and compared bit for
 * bit with the evaluator (the oracle: src/ir/eval/eval_sort.c,
 * eval_gather.c, rng_bits.c) on the same inputs. The modules are also
 * assembled by ptxas for sm_80 and sm_90a (skipped with a message where
 * ptxas is missing). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/executable.h"
#include "../test.h"
#include "tool_files.h"

static char fake_driver[4096], ptxas[4096];

static Executable *compile_text(const char *text, Status *st) {
  status_clear(st);
  Module *m = parse_module(text, strlen(text), "gpu_sort_test.hlo", st);
  if (!m) return NULL;
  ExecutableOptions options;
  executable_options_default(&options, AXLE_BACKEND_GPU);
  Executable *exe = executable_compile(m, &options, st);
  module_free(m);
  return exe;
}

/* Floats that test the total order: NaN, -NaN, -0, +0, infinities. */
static void add_special_floats(Literal *lit) {
  if (lit->shape.type != TYPE_F32) return;
  static const uint32_t specials[] = {0x7FC00000u, 0xFFC00000u, 0x80000000u, 0x00000000u, 0x7F800000u, 0xFF800000u};
  int64_t n = shape_element_count(&lit->shape);
  for (int64_t i = 0; i < n; i += 5) memcpy((char *)lit->data + 4 * i, &specials[(i / 5) % 6], 4);
}

/* The first differing leaf and element of want and got, if any. */
static bool leaves_equal(const Literal *want, const Literal *got, char *why, size_t size) {
  for (int64_t leaf = 0;; leaf++) {
    int64_t a = leaf, b = leaf;
    const Literal *w = literal_leaf(want, &a), *g = literal_leaf(got, &b);
    if (!w || !g) return !w && !g;
    int bytes = type_byte_size(w->shape.type);
    int64_t n = shape_element_count(&w->shape);
    for (int64_t i = 0; i < n; i++)
      if (memcmp((char *)w->data + i * bytes, (char *)g->data + i * bytes, (size_t)bytes) != 0) {
        uint64_t x = 0, y = 0;
        memcpy(&x, (char *)w->data + i * bytes, (size_t)bytes);
        memcpy(&y, (char *)g->data + i * bytes, (size_t)bytes);
        snprintf(why, size, "leaf %lld element %lld: evaluator 0x%llx, GPU 0x%llx", (long long)leaf, (long long)i,
                 (unsigned long long)x, (unsigned long long)y);
        return false;
      }
  }
}

/* Compiles text for the simulated GPU, runs it on inputs drawn from a
 * fixed seed (f32 inputs salted with special floats when asked), and
 * expects every result leaf to have the evaluator's bits. */
static void expect_evaluator_bits(const char *text, bool specials) {
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  Status st;
  Executable *exe = compile_text(text, &st);
  EXPECT(exe != NULL, "compile: %s", st.message);
  if (!exe) return;
  const Computation *entry = exe->module->entry;
  int n = entry->parameter_count;
  Literal *inputs[8] = {0};
  HostBuffer *args[8] = {0};
  uint64_t seed = 12345;
  for (int i = 0; i < n && i < 8; i++) {
    inputs[i] = literal_create(&entry->parameters[i]->shape);
    literal_fill_random(inputs[i], &seed);
    if (specials) add_special_floats(inputs[i]);
    args[i] = host_buffer_create(&inputs[i]->shape, inputs[i]->data, &st);
  }
  status_clear(&st);
  HostBuffer *result = executable_run(exe, args, n, &st);
  EXPECT(result != NULL, "run: %s", st.message);
  Literal *want = result ? eval_module(exe->module, inputs, n, &st) : NULL;
  EXPECT(!result || want, "evaluator: %s", st.message);
  if (want) {
    Literal *got = host_buffer_view(result);
    char why[256] = "";
    EXPECT(leaves_equal(want, got, why, sizeof why), "%s", why);
    literal_view_free(got);
  }
  literal_free(want);
  host_buffer_free(result);
  for (int i = 0; i < n && i < 8; i++) host_buffer_free(args[i]), literal_free(inputs[i]);
  executable_free(exe);
  unsetenv("FAKE_CUDA_EXECUTE");
}

/* An argsort of f32[n] in total order, with the positions as a passenger. */
static void expect_argsort_of_length(int64_t n) {
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule argsort\n"
           "lt { a = f32[] parameter(0)\n b = f32[] parameter(1)\n i = s32[] parameter(2)\n j = s32[] parameter(3)\n"
           "  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER }\n"
           "ENTRY e {\n  x = f32[%lld] parameter(0)\n  i = s32[%lld] iota(), iota_dimension=0\n"
           "  ROOT s = (f32[%lld], s32[%lld]) sort(x, i), dimensions={0}, is_stable=true, to_apply=lt\n}\n",
           (long long)n, (long long)n, (long long)n, (long long)n);
  expect_evaluator_bits(text, true);
}

TEST(an_argsort_of_odd_lengths_in_total_order_matches_the_evaluator_bit_for_bit) {
  expect_argsort_of_length(1);
  expect_argsort_of_length(2);
  expect_argsort_of_length(33);
  expect_argsort_of_length(1000);
}

TEST(a_sort_of_5000_longer_than_shared_memory_would_hold_matches) { expect_argsort_of_length(5000); }

/* s32 keys in [-8, 8] tie often: a stable sort keeps the passengers of
 * equal keys in their original order (descending, along dimension 0). */
TEST(equal_keys_keep_their_order_in_a_stable_sort_along_a_leading_dimension) {
  expect_evaluator_bits("HloModule stable\n"
                        "gt { a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
                        "  c = f32[] parameter(2)\n d = f32[] parameter(3)\n"
                        "  ROOT r = pred[] compare(a, b), direction=GT }\n"
                        "ENTRY e {\n  k = s32[37,3] parameter(0)\n  v = f32[37,3] parameter(1)\n"
                        "  ROOT s = (s32[37,3], f32[37,3]) sort(k, v), dimensions={0}, is_stable=true, to_apply=gt\n}\n",
                        false);
}

/* Two keys, the second breaking ties of the first (select on compares),
 * and a pred passenger. */
TEST(a_lexicographic_comparator_on_two_keys_with_a_pred_passenger_matches) {
  expect_evaluator_bits("HloModule lexicographic\n"
                        "less { a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
                        "  c = u32[] parameter(2)\n d = u32[] parameter(3)\n"
                        "  p = pred[] parameter(4)\n q = pred[] parameter(5)\n"
                        "  eq = pred[] compare(a, b), direction=EQ\n lt = pred[] compare(a, b), direction=LT\n"
                        "  lt2 = pred[] compare(c, d), direction=LT\n"
                        "  ROOT r = pred[] select(eq, lt2, lt) }\n"
                        "ENTRY e {\n  a = s32[4,50] parameter(0)\n  c = u32[4,50] parameter(1)\n  p = pred[4,50] parameter(2)\n"
                        "  ROOT s = (s32[4,50], u32[4,50], pred[4,50]) sort(a, c, p), dimensions={1}, to_apply=less\n}\n",
                        false);
}

TEST(top_k_of_floats_with_nans_and_ties_matches_the_evaluator) {
  expect_evaluator_bits("HloModule topk\n"
                        "ENTRY e {\n  x = f32[5,41] parameter(0)\n"
                        "  ROOT t = (f32[5,7], s32[5,7]) topk(x), k=7, largest=true\n}\n",
                        true);
  expect_evaluator_bits("HloModule topk_small\n"
                        "ENTRY e {\n  x = s32[3,20] parameter(0)\n"
                        "  ROOT t = (s32[3,20], s32[3,20]) topk(x), k=20, largest=false\n}\n",
                        false);
}

/* Indices in [0, 8] into 5 rows: many collide, and some fall out of
 * bounds. A float add depends on the order of the updates; a combiner
 * returning the update keeps the last. */
TEST(a_scatter_with_colliding_indices_applies_updates_in_the_evaluator_order) {
  expect_evaluator_bits("HloModule scatter_add\n"
                        "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
                        "ENTRY e {\n  x = f32[5,3] parameter(0)\n  i = s32[40,1] parameter(1)\n  u = f32[40,3] parameter(2)\n"
                        "  ROOT r = f32[5,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},\n"
                        "    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n",
                        false);
  expect_evaluator_bits("HloModule scatter_replace\n"
                        "last { a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(b, b) }\n"
                        "ENTRY e {\n  x = s32[6] parameter(0)\n  i = u32[30] parameter(1)\n  u = s32[30] parameter(2)\n"
                        "  ROOT r = s32[6] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},\n"
                        "    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=last\n}\n",
                        false);
}

/* c64 in the inline computations (one .b64 register per value): a
 * comparator on real parts with ties broken by imaginary parts (complex
 * equality, real, imag), and a scatter combiner of add, subtract, negate
 * and complex, with colliding indices. */
static const char complex_sort_scatter[] =
    "HloModule complex_inline\n"
    "less { a = c64[] parameter(0)\n b = c64[] parameter(1)\n"
    "  ra = f32[] real(a)\n rb = f32[] real(b)\n ia = f32[] imag(a)\n ib = f32[] imag(b)\n"
    "  same = pred[] compare(a, b), direction=EQ\n lt = pred[] compare(ra, rb), direction=LT\n"
    "  ilt = pred[] compare(ia, ib), direction=LT\n req = pred[] compare(ra, rb), direction=EQ\n"
    "  tie = pred[] select(req, ilt, lt)\n f = pred[] constant(false)\n ROOT r = pred[] select(same, f, tie) }\n"
    "comb { a = c64[] parameter(0)\n b = c64[] parameter(1)\n s = c64[] add(a, b)\n"
    "  n = c64[] negate(b)\n ib = f32[] imag(b)\n ra = f32[] real(a)\n w = c64[] complex(ib, ra)\n"
    "  d = c64[] subtract(s, w)\n k = c64[] constant((0.5, -0.25))\n e = c64[] add(d, k)\n ROOT r = c64[] add(e, n) }\n"
    "ENTRY e {\n  v = c64[3,29] parameter(0)\n  x = c64[6,2] parameter(1)\n  i = s32[25,1] parameter(2)\n"
    "  u = c64[25,2] parameter(3)\n  s = c64[3,29] sort(v), dimensions={1}, is_stable=true, to_apply=less\n"
    "  c = c64[6,2] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},\n"
    "    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb\n"
    "  ROOT r = (c64[3,29], c64[6,2]) tuple(s, c)\n}\n";

TEST(a_c64_comparator_and_a_c64_scatter_combiner_match_the_evaluator_bit_for_bit) {
  expect_evaluator_bits(complex_sort_scatter, false);
  /* c128 and a c64 multiply stay located refusals */
  Status st;
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  Executable *exe = compile_text("HloModule m\nmul { a = c64[] parameter(0)\n b = c64[] parameter(1)\n"
                                 " ROOT r = c64[] multiply(a, b) }\n"
                                 "ENTRY e {\n x = c64[4] parameter(0)\n i = s32[2,1] parameter(1)\n"
                                 " u = c64[2] parameter(2)\n ROOT c = c64[4] scatter(x, i, u), update_window_dims={},"
                                 " inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,"
                                 " to_apply=mul\n}\n",
                                 &st);
  EXPECT(!exe && strstr(st.message, "cannot compile") && strstr(st.message, "c64"), "%s", st.message);
  executable_free(exe);
}

static const char integer_scatter_add[] =
    "HloModule scatter_atomic\n"
    "add { a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(b, a) }\n"
    "ENTRY e {\n  x = s32[4,3] parameter(0)\n  i = s32[50,1] parameter(1)\n  u = s32[50,3] parameter(2)\n"
    "  ROOT r = s32[4,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},\n"
    "    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n";

static char *saved_ptx(const char *text, const char *capability);

/* An integer add (or min, max) gives the same bits in any order: the
 * walk is spread over the grid, each update a red.global atomic. */
TEST(an_integer_add_or_max_scatter_goes_atomic_and_still_matches) {
  expect_evaluator_bits(integer_scatter_add, false);
  expect_evaluator_bits("HloModule scatter_max\n"
                        "max { a = s64[] parameter(0)\n b = s64[] parameter(1)\n ROOT s = s64[] maximum(a, b) }\n"
                        "ENTRY e {\n  x = s64[7] parameter(0)\n  i = s64[20] parameter(1)\n  u = s64[20] parameter(2)\n"
                        "  ROOT r = s64[7] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},\n"
                        "    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=max\n}\n",
                        false);
  char *ptx = saved_ptx(integer_scatter_add, "9.0");
  EXPECT(ptx && strstr(ptx, "red.global.add.u32"), "no red.global.add.u32 in the scatter's PTX");
  free(ptx);
}

TEST(rng_bit_generator_gives_the_evaluator_bits_for_philox_and_threefry) {
  expect_evaluator_bits("HloModule rng\n"
                        "ENTRY e {\n  s2 = u64[2] parameter(0)\n  s3 = u64[3] parameter(1)\n"
                        "  a = (u64[2], u32[7,5]) rng-bit-generator(s2), algorithm=rng_philox\n"
                        "  b = (u64[3], u64[9]) rng-bit-generator(s3), algorithm=rng_philox\n"
                        "  c = (u64[2], u8[3,5]) rng-bit-generator(s2), algorithm=rng_three_fry\n"
                        "  d = (u64[2], u32[]) rng-bit-generator(s2), algorithm=rng_three_fry\n"
                        "  ROOT t = ((u64[2], u32[7,5]), (u64[3], u64[9]), (u64[2], u8[3,5]), (u64[2], u32[])) "
                        "tuple(a, b, c, d)\n}\n",
                        false);
}

/* A Threefry 32-bit output with a zero dimension: the split dimension
 * (the first even one) may be that zero, and no block is used. */
TEST(an_empty_threefry_output_uses_no_block_and_matches_the_evaluator) {
  expect_evaluator_bits("HloModule rng_empty\n"
                        "ENTRY e {\n  s = u64[2] parameter(0)\n"
                        "  a = (u64[2], u32[0,3]) rng-bit-generator(s), algorithm=rng_three_fry\n"
                        "  b = (u64[2], u16[3,0]) rng-bit-generator(s), algorithm=rng_three_fry\n"
                        "  ROOT t = ((u64[2], u32[0,3]), (u64[2], u16[3,0])) tuple(a, b)\n}\n",
                        false);
}

TEST(rng_without_a_state_is_a_located_refusal) {
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  Status st;
  Executable *exe = compile_text("HloModule r\nENTRY e {\n  a = f32[] constant(0)\n  b = f32[] constant(1)\n"
                                 "  ROOT r = f32[4] rng(a, b), distribution=rng_uniform\n}\n",
                                 &st);
  EXPECT(!exe && strstr(st.message, "GPU backend cannot compile") && strstr(st.message, "module-wide generator"),
         "%s", st.message);
  executable_free(exe);
}

/* The module's PTX for compute capability `capability`, as the fake
 * driver saved it; malloc'd, or NULL. */
static char *saved_ptx(const char *text, const char *capability) {
  char dir[64], path[512];
  snprintf(dir, sizeof dir, "/tmp/axle-sort-ptx-%d-%s", (int)getpid(), capability);
  if (access(dir, F_OK) != 0 && mkdir(dir, 0700) != 0) return NULL;
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  setenv("FAKE_CUDA_SAVE_PTX", dir, 1);
  setenv("FAKE_CUDA_CAPABILITY", capability, 1);
  Status st;
  Executable *exe = compile_text(text, &st);
  unsetenv("FAKE_CUDA_SAVE_PTX");
  unsetenv("FAKE_CUDA_CAPABILITY");
  executable_free(exe);
  char *ptx = NULL;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!strstr(e->d_name, ".ptx")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (!ptx) ptx = file_read(path);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
  return ptx;
}

TEST(the_sort_scatter_and_rng_kernels_assemble_with_ptxas_for_sm_80_and_sm_90a) {
  if (!ptxas[0]) {
    printf("SKIP ptxas checks (no ptxas on PATH or in /usr/local/cuda/bin)\n");
    return;
  }
  static const char text[] =
      "HloModule all\n"
      "lt { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = pred[] compare(a, b), direction=LT, "
      "type=TOTALORDER }\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "ENTRY e {\n  x = f32[3,9] parameter(0)\n  i = s32[4,1] parameter(1)\n  u = f32[4,9] parameter(2)\n"
      "  st = u64[2] parameter(3)\n"
      "  s = f32[3,9] sort(x), dimensions={1}, to_apply=lt\n"
      "  t = (f32[3,2], s32[3,2]) topk(x), k=2, largest=true\n"
      "  c = f32[3,9] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},\n"
      "    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
      "  g = (u64[2], u32[5]) rng-bit-generator(st), algorithm=rng_philox\n"
      "  h = (u64[2], u32[5]) rng-bit-generator(st), algorithm=rng_three_fry\n"
      "  ROOT r = (f32[3,9], (f32[3,2], s32[3,2]), f32[3,9], (u64[2], u32[5]), (u64[2], u32[5])) tuple(s, t, c, g, h)\n}\n";
  static const char *const texts[] = {text, complex_sort_scatter};
  static const char *const targets[][2] = {{"8.0", "sm_80"}, {"9.0", "sm_90a"}};
  for (int t = 0; t < 4; t++) {
    char *ptx = saved_ptx(texts[t / 2], targets[t % 2][0]);
    EXPECT(ptx && strstr(ptx, targets[t % 2][1]), "no module saved for %s", targets[t % 2][1]);
    if (!ptx) continue;
    char file[128], log[128], command[8192];
    snprintf(file, sizeof file, "/tmp/axle-sort-%d-%s.ptx", (int)getpid(), targets[t % 2][1]);
    snprintf(log, sizeof log, "/tmp/axle-sort-%d-%s.log", (int)getpid(), targets[t % 2][1]);
    file_write(file, ptx);
    snprintf(command, sizeof command, "'%s' -arch=%s -o /dev/null '%s' >'%s' 2>&1", ptxas, targets[t % 2][1], file, log);
    int rc = system(command);
    char *out = file_read(log);
    EXPECT(rc == 0, "ptxas -arch=%s:\n%.3000s", targets[t % 2][1], out ? out : "");
    free(out);
    free(ptx);
    unlink(file);
    unlink(log);
  }
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  if (!tool_find("ptxas", ptxas, sizeof ptxas)) ptxas[0] = 0;
  RUN(an_argsort_of_odd_lengths_in_total_order_matches_the_evaluator_bit_for_bit);
  RUN(a_sort_of_5000_longer_than_shared_memory_would_hold_matches);
  RUN(equal_keys_keep_their_order_in_a_stable_sort_along_a_leading_dimension);
  RUN(a_lexicographic_comparator_on_two_keys_with_a_pred_passenger_matches);
  RUN(top_k_of_floats_with_nans_and_ties_matches_the_evaluator);
  RUN(a_scatter_with_colliding_indices_applies_updates_in_the_evaluator_order);
  RUN(a_c64_comparator_and_a_c64_scatter_combiner_match_the_evaluator_bit_for_bit);
  RUN(an_integer_add_or_max_scatter_goes_atomic_and_still_matches);
  RUN(rng_bit_generator_gives_the_evaluator_bits_for_philox_and_threefry);
  RUN(an_empty_threefry_output_uses_no_block_and_matches_the_evaluator);
  RUN(rng_without_a_state_is_a_located_refusal);
  RUN(the_sort_scatter_and_rng_kernels_assemble_with_ptxas_for_sm_80_and_sm_90a);
  return test_summary();
}
