/* The GPU backend's fft and linear algebra (src/emit_ptx/gpu_fft.c,
 * gpu_linalg.c) on the fake libcuda with FAKE_CUDA_EXECUTE=1: every launch
 * runs in the host SIMT simulator, and each module's results are checked
 * against the reference evaluator (--backend interp) within a tolerance
 * (the fft sums in another order; the linear algebra follows the
 * evaluator's order in f64, so it is held much tighter). Each module is
 * compiled for compute capability 9.0 and 8.0 and the PTX the driver was
 * given is assembled by ptxas for its target, sm_90a and sm_80 (skipped
 * with a message where ptxas is missing). What the families refuse is
 * checked to be a located refusal that says why. */
#include "complex_compat.h"
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/executable.h"
#include "tool_files.h"
#include "../test.h"

static char fake_driver[4096], work_dir[64], ptxas[4096];
static int compile_number;

/* How a case fills its parameters. */
typedef enum Fill {
  FILL_RANDOM,     /* every component uniform in [-1, 1) */
  FILL_SPD,        /* batches of Hermitian matrices with a dominant diagonal (positive definite) */
  FILL_DOMINANT,   /* random, with n added to the diagonal (well-conditioned triangles) */
} Fill;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static void put(void *data, ElementType t, int64_t i, double complex v) {
  switch (t) {
  case TYPE_F32: ((float *)data)[i] = (float)creal(v); break;
  case TYPE_F64: ((double *)data)[i] = creal(v); break;
  case TYPE_C64: ((float *)data)[2 * i] = (float)creal(v), ((float *)data)[2 * i + 1] = (float)cimag(v); break;
  default: ((double *)data)[2 * i] = creal(v), ((double *)data)[2 * i + 1] = cimag(v); break;
  }
}

static double complex get(const void *data, ElementType t, int64_t i) {
  switch (t) {
  case TYPE_F32: return ((const float *)data)[i];
  case TYPE_F64: return ((const double *)data)[i];
  case TYPE_C64: return CMPLX(((const float *)data)[2 * i], ((const float *)data)[2 * i + 1]);
  case TYPE_C128: return CMPLX(((const double *)data)[2 * i], ((const double *)data)[2 * i + 1]);
  case TYPE_S32: return ((const int32_t *)data)[i];
  default: return NAN;
  }
}

static HostBuffer *argument(const Shape *s, Fill fill) {
  int64_t count = shape_element_count(s), n = s->rank >= 2 ? s->dims[s->rank - 1] : 1;
  void *data = calloc((size_t)count + 1, (size_t)type_byte_size(s->type));
  bool complex_type = type_is_complex(s->type);
  for (int64_t i = 0; i < count; i++) {
    double complex v = complex_type ? CMPLX(uniform(), uniform()) : uniform();
    int64_t r = (i / n) % n, c = i % n;
    if (fill != FILL_RANDOM && r == c) v = creal(v) + (double)n + 1;
    put(data, s->type, i, v);
  }
  /* Hermitian: the upper triangle mirrors the lower, conjugated. */
  for (int64_t i = 0; fill == FILL_SPD && i < count; i++) {
    int64_t base = i - i % (n * n), r = (i / n) % n, c = i % n;
    if (c > r) put(data, s->type, i, conj(get(data, s->type, base + c * n + r)));
  }
  Status st;
  status_clear(&st);
  HostBuffer *b = host_buffer_create(s, data, &st);
  free(data);
  return b;
}

/* got against want, leaf by leaf: |g - w| <= atol + rtol |w|, NaN for NaN. */
static void compare(const char *label, const HostBuffer *want, const HostBuffer *got, double rtol, double atol) {
  if (shape_is_tuple(&want->shape)) {
    for (int i = 0; i < want->shape.tuple_count; i++) compare(label, want->elements[i], got->elements[i], rtol, atol);
    return;
  }
  int64_t count = shape_element_count(&want->shape), bad = 0;
  for (int64_t i = 0; i < count && bad < 3; i++) {
    double complex w = get(want->data, want->shape.type, i), g = get(got->data, got->shape.type, i);
    bool same_nan = (isnan(creal(w)) && isnan(creal(g))) || (isnan(cimag(w)) && isnan(cimag(g)));
    bool close = cabs(g - w) <= atol + rtol * cabs(w);
    if (same_nan || close) continue;
    bad++;
    EXPECT(false, "%s: element %lld: wanted %.17g%+.17gi, got %.17g%+.17gi", label, (long long)i, creal(w), cimag(w),
           creal(g), cimag(g));
  }
}

static Executable *compile(const char *label, const char *hlo, axle_backend_t backend, Status *st) {
  status_clear(st);
  Module *m = parse_module(hlo, strlen(hlo), label, st);
  if (!m) return NULL;
  ExecutableOptions options;
  executable_options_default(&options, backend);
  Executable *exe = executable_compile(m, &options, st);
  module_free(m);
  return exe;
}

/* ptxas on every module saved in dir, for the .target each names. */
static void assemble_saved(const char *label, const char *dir, const char *want_target) {
  if (!ptxas[0]) return;
  DIR *d = opendir(dir);
  int seen = 0;
  for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
    if (!strstr(e->d_name, ".ptx")) continue;
    char path[512], command[8192], text[256] = "";
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "r");
    while (f && fgets(text, sizeof text, f) && strncmp(text, ".target ", 8) != 0) {}
    if (f) fclose(f);
    char target[32] = "";
    sscanf(text, ".target %31s", target);
    EXPECT(strcmp(target, want_target) == 0, "%s: the module targets %s, not %s", label, target, want_target);
    snprintf(command, sizeof command, "'%s' -arch=%s -o '%s.cubin' '%s' >'%s.log' 2>&1", ptxas, target, path, path,
             path);
    EXPECT(system(command) == 0, "%s: ptxas -arch=%s failed on %s (see %s.log)", label, target, path, path);
    seen++;
  }
  if (d) closedir(d);
  EXPECT(seen > 0, "%s: no PTX saved in %s", label, dir);
}

/* The GPU's results of hlo on the simulator under one compute capability. */
static HostBuffer *run_gpu(const char *label, const char *hlo, const char *capability, HostBuffer *const *args,
                           int count) {
  char dir[256];
  snprintf(dir, sizeof dir, "%s/%d", work_dir, compile_number++);
  if (mkdir(dir, 0700) != 0) return NULL;
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  setenv("FAKE_CUDA_CAPABILITY", capability, 1);
  setenv("FAKE_CUDA_SAVE_PTX", dir, 1);
  Status st;
  Executable *exe = compile(label, hlo, AXLE_BACKEND_GPU, &st);
  EXPECT(exe != NULL, "%s: GPU compile (%s): %s", label, capability, st.message);
  HostBuffer *out = exe ? executable_run(exe, args, count, &st) : NULL;
  EXPECT(!exe || out != NULL, "%s: GPU run (%s): %s", label, capability, st.message);
  executable_free(exe);
  unsetenv("FAKE_CUDA_SAVE_PTX");
  if (out) assemble_saved(label, dir, strcmp(capability, "8.0") == 0 ? "sm_80" : "sm_90a");
  return out;
}

/* hlo on the simulated GPU (capability 9.0 and 8.0) against the interpreter. */
static void case_check(const char *label, const char *hlo, Fill fill, double rtol, double atol) {
  Status st;
  Executable *ref = compile(label, hlo, AXLE_BACKEND_INTERP, &st);
  EXPECT(ref != NULL, "%s: interpreter compile: %s", label, st.message);
  if (!ref) return;
  const Computation *entry = executable_module_to_run(ref)->entry;
  HostBuffer *args[8] = {0};
  int count = 0;
  for (int i = 0; i < entry->instruction_count && count < 8; i++)
    if (entry->instructions[i]->opcode == OP_PARAMETER) {
      const Instruction *p = entry->instructions[i];
      args[p->attrs.parameter_number] = argument(&p->shape, fill);
      count++;
    }
  HostBuffer *want = executable_run(ref, args, count, &st);
  EXPECT(want != NULL, "%s: interpreter run: %s", label, st.message);
  static const char *const capabilities[] = {"9.0", "8.0"};
  for (int c = 0; want && c < 2; c++) {
    HostBuffer *got = run_gpu(label, hlo, capabilities[c], args, count);
    if (got) compare(label, want, got, rtol, atol);
    host_buffer_free(got);
  }
  host_buffer_free(want);
  for (int i = 0; i < count; i++) host_buffer_free(args[i]);
  executable_free(ref);
}

/* ---- fft ---- */

TEST(a_c64_fft_of_lengths_1_2_8_13_30_64_and_98_matches_the_interpreter) {
  static const int lengths[] = {1, 2, 8, 13, 30, 64, 98};
  for (int i = 0; i < 7; i++) {
    char hlo[512], label[32];
    snprintf(label, sizeof label, "fft_%d", lengths[i]);
    snprintf(hlo, sizeof hlo,
             "HloModule f\nENTRY e {\n  x = c64[5,%d] parameter(0)\n"
             "  ROOT f = c64[5,%d] fft(x), fft_type=FFT, fft_length={%d}\n}\n",
             lengths[i], lengths[i], lengths[i]);
    case_check(label, hlo, FILL_RANDOM, 1e-6, 1e-5);
  }
}

TEST(an_ifft_over_two_dims_in_c128_matches_to_f64_precision) {
  case_check("ifft_2d_c128",
             "HloModule f\nENTRY e {\n  x = c128[3,5,12] parameter(0)\n"
             "  ROOT f = c128[3,5,12] fft(x), fft_type=IFFT, fft_length={5,12}\n}\n",
             FILL_RANDOM, 1e-12, 1e-13);
}

TEST(an_fft_over_three_dims_with_a_batch_dim_and_more_threads_than_a_block_matches) {
  case_check("fft_3d",
             "HloModule f\nENTRY e {\n  x = c64[2,6,7,8] parameter(0)\n"
             "  ROOT f = c64[2,6,7,8] fft(x), fft_type=FFT, fft_length={6,7,8}\n}\n",
             FILL_RANDOM, 1e-6, 1e-5);
}

TEST(an_rfft_keeps_the_first_half_plus_one_outputs_for_odd_and_even_lengths) {
  case_check("rfft_odd_f32",
             "HloModule f\nENTRY e {\n  x = f32[4,11] parameter(0)\n"
             "  ROOT f = c64[4,6] fft(x), fft_type=RFFT, fft_length={11}\n}\n",
             FILL_RANDOM, 1e-6, 1e-5);
  case_check("rfft_2d_f64",
             "HloModule f\nENTRY e {\n  x = f64[3,4,8] parameter(0)\n"
             "  ROOT f = c128[3,4,5] fft(x), fft_type=RFFT, fft_length={4,8}\n}\n",
             FILL_RANDOM, 1e-12, 1e-13);
}

TEST(an_irfft_extends_each_line_hermitian_and_keeps_the_real_part) {
  case_check("irfft_even_f32",
             "HloModule f\nENTRY e {\n  x = c64[3,7] parameter(0)\n"
             "  ROOT f = f32[3,12] fft(x), fft_type=IRFFT, fft_length={12}\n}\n",
             FILL_RANDOM, 1e-6, 1e-6);
  case_check("irfft_odd_f32",
             "HloModule f\nENTRY e {\n  x = c64[2,5] parameter(0)\n"
             "  ROOT f = f32[2,9] fft(x), fft_type=IRFFT, fft_length={9}\n}\n",
             FILL_RANDOM, 1e-6, 1e-6);
  case_check("irfft_16_f64",
             "HloModule f\nENTRY e {\n  x = c128[2,9] parameter(0)\n"
             "  ROOT f = f64[2,16] fft(x), fft_type=IRFFT, fft_length={16}\n}\n",
             FILL_RANDOM, 1e-12, 1e-13);
  case_check("irfft_3d_f64",
             "HloModule f\nENTRY e {\n  x = c128[2,3,4,4] parameter(0)\n"
             "  ROOT f = f64[2,3,4,6] fft(x), fft_type=IRFFT, fft_length={3,4,6}\n}\n",
             FILL_RANDOM, 1e-12, 1e-13);
}

/* ---- cholesky ---- */

TEST(cholesky_lower_and_upper_in_f32_and_f64_matches_the_interpreter) {
  case_check("cholesky_real",
             "HloModule c\nENTRY e {\n  a = f32[3,5,5] parameter(0)\n  b = f64[2,6,6] parameter(1)\n"
             "  l = f32[3,5,5] cholesky(a), lower=true\n  u = f32[3,5,5] cholesky(a), lower=false\n"
             "  dl = f64[2,6,6] cholesky(b), lower=true\n  du = f64[2,6,6] cholesky(b), lower=false\n"
             "  ROOT t = (f32[3,5,5], f32[3,5,5], f64[2,6,6], f64[2,6,6]) tuple(l, u, dl, du)\n}\n",
             FILL_SPD, 1e-6, 1e-7);
}

TEST(complex_cholesky_of_hermitian_matrices_and_a_1x1_matches) {
  case_check("cholesky_complex",
             "HloModule c\nENTRY e {\n  a = c64[2,4,4] parameter(0)\n  b = c128[3,1,1] parameter(1)\n"
             "  l = c64[2,4,4] cholesky(a), lower=true\n  u = c64[2,4,4] cholesky(a), lower=false\n"
             "  one = c128[3,1,1] cholesky(b), lower=true\n"
             "  ROOT t = (c64[2,4,4], c64[2,4,4], c128[3,1,1]) tuple(l, u, one)\n}\n",
             FILL_SPD, 1e-6, 1e-7);
}

TEST(a_matrix_that_is_not_positive_definite_comes_out_all_nan_and_the_next_does_not) {
  const char *hlo = "HloModule c\nENTRY e {\n"
                    "  a = f64[2,2,2] constant({{{1, 2}, {2, 1}}, {{4, 2}, {2, 3}}})\n"
                    "  ROOT l = f64[2,2,2] cholesky(a), lower=true\n}\n";
  HostBuffer *got = run_gpu("cholesky_not_pd", hlo, "9.0", NULL, 0);
  if (!got) return;
  const double *v = got->data;
  for (int i = 0; i < 4; i++) EXPECT(isnan(v[i]), "element %d of the first matrix is %g, not NaN", i, v[i]);
  /* the evaluator's diagonal is d / sqrt(d): here 2 / sqrt(2) */
  EXPECT(v[4] == 2 && v[5] == 0 && v[6] == 1 && v[7] == 2.0 / sqrt(2.0), "second matrix %g %g %g %g", v[4], v[5], v[6],
         v[7]);
  host_buffer_free(got);
  case_check("cholesky_random_not_pd",
             "HloModule c\nENTRY e {\n  a = f32[4,3,3] parameter(0)\n"
             "  ROOT l = f32[4,3,3] cholesky(a), lower=false\n}\n",
             FILL_RANDOM, 1e-6, 1e-7);
}

/* ---- triangular-solve ---- */

/* Every variant of left_side x lower x transpose_a x unit_diagonal in one
 * module over a batch of two. */
static void triangular_solve_variants(const char *type, bool left_side, double tolerance) {
  static const char *const transposes[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  char hlo[8192], b_shape[64], label[64];
  snprintf(b_shape, sizeof b_shape, left_side ? "%s[2,5,3]" : "%s[2,3,5]", type);
  int n = snprintf(hlo, sizeof hlo, "HloModule t\nENTRY e {\n  a = %s[2,5,5] parameter(0)\n  b = %s parameter(1)\n",
                   type, b_shape);
  int count = 0;
  for (int lower = 0; lower < 2; lower++)
    for (int t = 0; t < 3; t++)
      for (int unit = 0; unit < 2; unit++)
        n += snprintf(hlo + n, sizeof hlo - (size_t)n,
                      "  s%d = %s triangular-solve(a, b), left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s\n",
                      count++, b_shape, left_side ? "true" : "false", lower ? "true" : "false",
                      unit ? "true" : "false", transposes[t]);
  n += snprintf(hlo + n, sizeof hlo - (size_t)n, "  ROOT r = (");
  for (int i = 0; i < count; i++) n += snprintf(hlo + n, sizeof hlo - (size_t)n, "%s%s", i ? ", " : "", b_shape);
  n += snprintf(hlo + n, sizeof hlo - (size_t)n, ") tuple(");
  for (int i = 0; i < count; i++) n += snprintf(hlo + n, sizeof hlo - (size_t)n, "%ss%d", i ? ", " : "", i);
  snprintf(hlo + n, sizeof hlo - (size_t)n, ")\n}\n");
  snprintf(label, sizeof label, "triangular_solve_%s_%s", type, left_side ? "left" : "right");
  case_check(label, hlo, FILL_DOMINANT, tolerance, tolerance);
}

TEST(every_triangular_solve_variant_left_and_right_in_f32_and_f64_matches) {
  triangular_solve_variants("f32", true, 1e-6);
  triangular_solve_variants("f32", false, 1e-6);
  triangular_solve_variants("f64", true, 1e-14);
  triangular_solve_variants("f64", false, 1e-14);
}

/* ---- getrf ---- */

TEST(getrf_square_wide_and_tall_in_f32_and_f64_gives_the_interpreters_lu_pivots_and_info) {
  case_check("sgetrf_square",
             "HloModule l\nENTRY e {\n  a = f32[3,4,4] parameter(0)\n"
             "  ROOT lu = (f32[3,4,4], s32[3,4], s32[3]) custom-call(a), custom_call_target=\"lapack_sgetrf_ffi\"\n}\n",
             FILL_RANDOM, 1e-6, 1e-6);
  case_check("dgetrf_wide",
             "HloModule l\nENTRY e {\n  a = f64[2,3,5] parameter(0)\n"
             "  ROOT lu = (f64[2,3,5], s32[2,3], s32[2]) custom-call(a), custom_call_target=\"lapack_dgetrf_ffi\"\n}\n",
             FILL_RANDOM, 1e-14, 1e-14);
  case_check("dgetrf_tall",
             "HloModule l\nENTRY e {\n  a = f64[6,3] parameter(0)\n"
             "  ROOT lu = (f64[6,3], s32[3], s32[]) custom-call(a), custom_call_target=\"lapack_dgetrf_ffi\"\n}\n",
             FILL_RANDOM, 1e-14, 1e-14);
}

TEST(getrf_of_a_singular_matrix_reports_the_first_zero_pivot_in_info) {
  const char *hlo = "HloModule l\nENTRY e {\n"
                    "  a = f64[3,3] constant({{1, 2, 3}, {2, 4, 6}, {0, 0, 0}})\n"
                    "  ROOT lu = (f64[3,3], s32[3], s32[]) custom-call(a), custom_call_target=\"lapack_dgetrf_ffi\"\n}\n";
  HostBuffer *got = run_gpu("dgetrf_singular", hlo, "9.0", NULL, 0);
  if (!got) return;
  const int32_t *ipiv = got->elements[1]->data, *info = got->elements[2]->data;
  EXPECT(ipiv[0] == 2 && ipiv[1] == 2 && ipiv[2] == 3, "ipiv %d %d %d", ipiv[0], ipiv[1], ipiv[2]);
  EXPECT(*info == 2, "info %d, wanted 2", *info);
  host_buffer_free(got);
}

/* ---- refusals ---- */

static void refusal_check(const char *label, const char *hlo, const char *why) {
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  Status st;
  Executable *exe = compile(label, hlo, AXLE_BACKEND_GPU, &st);
  EXPECT(exe == NULL, "%s compiled", label);
  EXPECT(strstr(st.message, "cannot compile") && strstr(st.message, why),
         "message: %s", st.message);
  executable_free(exe);
}

TEST(an_fft_over_a_column_major_array_and_an_f16_cholesky_are_located_refusals_that_say_why) {
  refusal_check("fft_column_major",
                "HloModule f\nENTRY e {\n  x = c64[4,8]{0,1} parameter(0)\n"
                "  ROOT f = c64[4,8]{0,1} fft(x), fft_type=FFT, fft_length={8}\n}\n",
                "non-row-major");
  refusal_check("cholesky_f16",
                "HloModule c\nENTRY e {\n  x = f16[4,4] parameter(0)\n  ROOT l = f16[4,4] cholesky(x), lower=true\n}\n",
                "element type");
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  snprintf(work_dir, sizeof work_dir, "/tmp/axle-fftlinalg-XXXXXX");
  if (!mkdtemp(work_dir)) {
    printf("FAIL test_gpu_fft_linalg_setup\n  cannot make a temporary directory\n");
    return 1;
  }
  if (!tool_find("ptxas", ptxas, sizeof ptxas)) printf("SKIP ptxas checks (no ptxas on PATH or in /usr/local/cuda/bin)\n");
  RUN(a_c64_fft_of_lengths_1_2_8_13_30_64_and_98_matches_the_interpreter);
  RUN(an_ifft_over_two_dims_in_c128_matches_to_f64_precision);
  RUN(an_fft_over_three_dims_with_a_batch_dim_and_more_threads_than_a_block_matches);
  RUN(an_rfft_keeps_the_first_half_plus_one_outputs_for_odd_and_even_lengths);
  RUN(an_irfft_extends_each_line_hermitian_and_keeps_the_real_part);
  RUN(cholesky_lower_and_upper_in_f32_and_f64_matches_the_interpreter);
  RUN(complex_cholesky_of_hermitian_matrices_and_a_1x1_matches);
  RUN(a_matrix_that_is_not_positive_definite_comes_out_all_nan_and_the_next_does_not);
  RUN(every_triangular_solve_variant_left_and_right_in_f32_and_f64_matches);
  RUN(getrf_square_wide_and_tall_in_f32_and_f64_gives_the_interpreters_lu_pivots_and_info);
  RUN(getrf_of_a_singular_matrix_reports_the_first_zero_pivot_in_info);
  RUN(an_fft_over_a_column_major_array_and_an_f16_cholesky_are_located_refusals_that_say_why);
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", work_dir);
  if (!getenv("AXLE_KEEP_PTX") && system(command) != 0) printf("  (could not remove %s)\n", work_dir);
  return test_summary();
}
