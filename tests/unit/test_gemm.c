/* The blocked SGEMM (src/emit_x86/gemm.c and its generated micro-kernel)
 * against a naive reference that accumulates in double, at every ISA level
 * this CPU has (sse4, avx2, avx512 forced through CpuFeatures), for odd
 * sizes, transposed operands, batches, the epilogue hook and every thread
 * count. Levels the CPU lacks are reported as skipped. Run with -v to print
 * each level's micro-kernel listing. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_features.h"
#include "emit_x86/gemm.h"
#include "runtime/thread_pool.h"
#include "../test.h"

static bool verbose;
static CpuFeatures hardware;
static const CpuLevel all_levels[] = {CPU_LEVEL_SSE4, CPU_LEVEL_AVX2, CPU_LEVEL_AVX512};
enum { LEVEL_COUNT = 3 };

/* The plan for level, or NULL (after saying so) when this CPU lacks it. */
static GemmPlan *plan_for_level(CpuLevel level) {
  CpuFeatures f = hardware;
  Status st;
  status_clear(&st);
  if (!cpu_features_force_level(&f, cpu_level_name(level), &st)) {
    printf("  skipped level %s: %s\n", cpu_level_name(level), st.message);
    return NULL;
  }
  GemmPlan *plan = gemm_plan_create(&f, &st);
  EXPECT(plan != NULL, "plan for %s: %s", cpu_level_name(level), st.message);
  return plan;
}

/* Deterministic values in [-1, 1). */
static float *random_floats(int64_t count, unsigned seed) {
  float *x = malloc((size_t)(count > 0 ? count : 1) * sizeof *x);
  uint64_t state = seed * 0x9e3779b97f4a7c15u + 1;
  for (int64_t i = 0; i < count; i++) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    x[i] = (float)((double)(state >> 40) / (double)(1 << 23) - 1.0);
  }
  return x;
}

/* Checks every element of p's C against sum_k A[i,k]*B[k,j] in double. The
 * tolerance is the classic bound for a float sum of K products,
 * K * FLT_EPSILON * sum |A[i,k]*B[k,j]|: rounding can reach it, a wrong
 * element or a missing term cannot hide under it. Reports the first miss. */
static bool product_matches_reference(const GemmProblem *p, const char *what) {
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        double sum = 0, sum_abs = 0;
        for (int64_t k = 0; k < p->k; k++) {
          double x = (double)p->a[b * p->a_batch_stride + i * p->a_row_stride + k * p->a_col_stride] *
                     (double)p->b[b * p->b_batch_stride + k * p->b_row_stride + j * p->b_col_stride];
          sum += x;
          sum_abs += fabs(x);
        }
        double got = p->c[b * p->c_batch_stride + i * p->c_row_stride + j];
        double tolerance = (double)p->k * FLT_EPSILON * sum_abs;
        if (!(fabs(got - sum) <= tolerance)) {
          EXPECT(false, "%s: M=%lld N=%lld K=%lld batch %lld C[%lld,%lld] = %.9g, expected %.9g (tolerance %.3g)",
                 what, (long long)p->m, (long long)p->n, (long long)p->k, (long long)b,
                 (long long)i, (long long)j, got, sum, tolerance);
          return false;
        }
      }
  return true;
}

/* Runs C = A·B with row-major or transposed operands, C's rows padded by 3
 * to catch a kernel that assumes ldc == N. */
static bool gemm_case_passes(const GemmPlan *plan, ThreadPool *pool, int64_t m, int64_t n,
                             int64_t k, bool a_transposed, bool b_transposed, const char *what) {
  float *a = random_floats(m * k, (unsigned)(m * 31 + k)), *b = random_floats(k * n, (unsigned)(n * 17 + k));
  int64_t ldc = n + 3;
  float *c = malloc((size_t)(m * ldc) * sizeof *c);
  for (int64_t i = 0; i < m * ldc; i++) c[i] = NAN;   /* every element must be written */
  GemmProblem p = {
    .batch = 1, .m = m, .n = n, .k = k, .a = a, .b = b, .c = c, .c_row_stride = ldc,
    .a_row_stride = a_transposed ? 1 : k, .a_col_stride = a_transposed ? m : 1,
    .b_row_stride = b_transposed ? 1 : n, .b_col_stride = b_transposed ? k : 1,
  };
  gemm_f32_batched(plan, pool, &p, NULL);
  bool ok = product_matches_reference(&p, what);
  free(a); free(b); free(c);
  return ok;
}

TEST(gemm_matches_double_reference_for_odd_sizes_at_every_isa_level) {
  static const int64_t small[] = {1, 7, 17, 33};
  /* Sizes with 1023 in one or two dimensions (large enough for the packed
   * path, so edge tiles of 1 and 7 rows or columns go through the kernel),
   * and one that needs several K blocks and macro tiles in both directions.
   * The small ones mostly take the direct path. */
  static const int64_t large[][3] = {
    {1023, 33, 17}, {17, 1023, 33}, {33, 17, 1023}, {1023, 1023, 7}, {7, 1023, 1023},
    {1023, 7, 1023}, {1, 1023, 1023}, {1023, 1, 1023}, {7, 7, 1023}, {1, 33, 1023},
    {700, 600, 531},
  };
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    const char *name = cpu_level_name(all_levels[l]);
    int cases = 0;
    for (int x = 0; x < 4; x++)
      for (int y = 0; y < 4; y++)
        for (int z = 0; z < 4; z++, cases++)
          if (!gemm_case_passes(plan, NULL, small[x], small[y], small[z], false, false, name)) goto done;
    for (size_t i = 0; i < sizeof large / sizeof large[0]; i++, cases++)
      if (!gemm_case_passes(plan, NULL, large[i][0], large[i][1], large[i][2], false, false, name)) break;
  done:
    if (verbose) printf("  %s: %d sizes\n", name, cases);
    gemm_plan_free(plan);
  }
}

TEST(gemm_absorbs_transposed_a_and_b_into_packing) {
  static const int64_t sizes[][3] = {{5, 9, 3}, {67, 45, 129}, {130, 257, 300}};
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
      for (int t = 1; t < 4; t++)
        gemm_case_passes(plan, NULL, sizes[i][0], sizes[i][1], sizes[i][2], t & 1, t & 2,
                         t == 1 ? "A transposed" : t == 2 ? "B transposed" : "A and B transposed");
    gemm_plan_free(plan);
  }
}

/* A column-major A (lanes contiguous, x^T of a weight gradient) is packed
 * a line of A at a time across the block's panels: the panels hold the
 * same floats as a row-major A's, so the same bits. Several row blocks
 * (M past 336), tiles of 13 and 14 rows, K in several blocks with a tail,
 * a batch of 2 whose second A starts past the first, at every ISA level. */
TEST(gemm_column_major_a_packed_by_lines_gives_the_bits_of_row_major_a) {
  static const int64_t sizes[][3] = {{784, 40, 520}, {700, 33, 531}, {29, 17, 300}, {5, 9, 3}};
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2], lda = k + 3, batch = 2;
      float *a_rows = random_floats(batch * m * lda, 50), *b = random_floats(batch * k * n, 51);
      float *a_columns = malloc((size_t)(batch * m * k) * sizeof *a_columns);
      for (int64_t q = 0; q < batch; q++)
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < k; j++) a_columns[q * m * k + j * m + i] = a_rows[q * m * lda + i * lda + j];
      float *c[2];
      for (int way = 0; way < 2; way++) {
        c[way] = malloc((size_t)(batch * m * n) * sizeof *c[way]);
        GemmProblem p = {
          .batch = batch, .m = m, .n = n, .k = k, .a = way == 0 ? a_rows : a_columns,
          .a_row_stride = way == 0 ? lda : 1, .a_col_stride = way == 0 ? 1 : m,
          .a_batch_stride = way == 0 ? m * lda : m * k, .b = b, .b_row_stride = n, .b_col_stride = 1,
          .b_batch_stride = k * n, .c = c[way], .c_row_stride = n, .c_batch_stride = m * n,
        };
        gemm_f32_batched(plan, NULL, &p, NULL);
        product_matches_reference(&p, way == 0 ? "row-major A" : "column-major A");
      }
      EXPECT(memcmp(c[0], c[1], (size_t)(batch * m * n) * sizeof(float)) == 0,
             "%s %lldx%lldx%lld: column-major A and row-major A give different bits",
             cpu_level_name(all_levels[l]), (long long)m, (long long)n, (long long)k);
      free(a_rows); free(a_columns); free(b); free(c[0]); free(c[1]);
    }
    gemm_plan_free(plan);
  }
}

TEST(gemm_batch_strides_select_each_product_and_zero_stride_broadcasts) {
  GemmPlan *plan = plan_for_level(hardware.level);
  if (!plan) return;
  enum { BATCH = 3 };
  static const int64_t sizes[][3] = {{6, 5, 4}, {70, 90, 110}};
  for (size_t s = 0; s < 2; s++) {
    int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
    /* A has its own slice per batch; B is shared (stride 0); C's slices
     * are spaced wider than M*N to catch a stride ignored. */
    float *a = random_floats(BATCH * m * k, 5), *b = random_floats(k * n, 6);
    int64_t c_batch_stride = m * n + 11;
    float *c = calloc((size_t)(BATCH * c_batch_stride), sizeof *c);
    GemmProblem p = {
      .batch = BATCH, .m = m, .n = n, .k = k,
      .a = a, .a_row_stride = k, .a_col_stride = 1, .a_batch_stride = m * k,
      .b = b, .b_row_stride = n, .b_col_stride = 1, .b_batch_stride = 0,
      .c = c, .c_row_stride = n, .c_batch_stride = c_batch_stride,
    };
    gemm_f32_batched(plan, NULL, &p, NULL);
    product_matches_reference(&p, "batched");
    /* The batch spread over threads gives the same bytes. */
    float *c1 = malloc((size_t)(BATCH * c_batch_stride) * sizeof *c1);
    memcpy(c1, c, (size_t)(BATCH * c_batch_stride) * sizeof *c1);
    ThreadPool *pool = thread_pool_create(3);
    gemm_f32_batched(plan, pool, &p, NULL);
    thread_pool_free(pool);
    EXPECT(memcmp(c1, c, (size_t)(BATCH * c_batch_stride) * sizeof *c1) == 0,
           "%lldx%lldx%lld batch on 3 threads differs from 1", (long long)m, (long long)n,
           (long long)k);
    free(a); free(b); free(c); free(c1);
  }
  gemm_plan_free(plan);
}

/* The epilogue under test: counts each element it is given, checks the
 * tile already holds its final value (the full sum, not a partial K block),
 * and applies relu, as a fused epilogue would. */
typedef struct EpilogueLog {
  int *calls;        /* per element of C */
  const float *want; /* the product without the epilogue */
  int64_t n;
  bool saw_partial;
} EpilogueLog;

static void epilogue_count_and_relu(void *context, float *tile, int64_t row_stride, int64_t rows,
                                    int64_t cols, int64_t row0, int64_t col0, int64_t batch) {
  EpilogueLog *log = context;
  (void)batch;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      int64_t at = (row0 + i) * log->n + col0 + j;
      log->calls[at]++;
      float *x = &tile[i * row_stride + j];
      if (*x != log->want[at]) log->saw_partial = true;
      if (*x < 0) *x = 0;
    }
}

TEST(gemm_epilogue_sees_each_finished_element_exactly_once) {
  GemmPlan *plan = plan_for_level(hardware.level);
  if (!plan) return;
  ThreadPool *pool = thread_pool_create(2);
  static const int64_t sizes[][3] = {{9, 8, 7}, {1023, 77, 600}, {100, 517, 33}};
  for (size_t s = 0; s < 3; s++) {
    int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
    float *a = random_floats(m * k, 8), *b = random_floats(k * n, 9);
    float *want = malloc((size_t)(m * n) * sizeof *want), *c = malloc((size_t)(m * n) * sizeof *c);
    gemm_f32(plan, pool, m, n, k, a, k, 1, b, n, 1, want, n, NULL);
    EpilogueLog log = {.calls = calloc((size_t)(m * n), sizeof(int)), .want = want, .n = n};
    GemmEpilogue e = {.apply = epilogue_count_and_relu, .context = &log};
    gemm_f32(plan, pool, m, n, k, a, k, 1, b, n, 1, c, n, &e);
    int64_t wrong_count = -1, wrong_value = -1;
    for (int64_t i = 0; i < m * n; i++) {
      if (log.calls[i] != 1 && wrong_count < 0) wrong_count = i;
      if (c[i] != (want[i] < 0 ? 0.0f : want[i]) && wrong_value < 0) wrong_value = i;
    }
    EXPECT(wrong_count < 0, "%lldx%lldx%lld: element %lld passed %d times", (long long)m,
           (long long)n, (long long)k, (long long)wrong_count, wrong_count < 0 ? 1 : log.calls[wrong_count]);
    EXPECT(!log.saw_partial, "%lldx%lldx%lld: a tile reached the epilogue before its K loop ended",
           (long long)m, (long long)n, (long long)k);
    EXPECT(wrong_value < 0, "%lldx%lldx%lld: relu not applied at element %lld", (long long)m,
           (long long)n, (long long)k, (long long)wrong_value);
    free(a); free(b); free(want); free(c); free(log.calls);
  }
  thread_pool_free(pool);
  gemm_plan_free(plan);
}

/* A row-major B small enough to stay in the caches is read where it lies
 * (its full NR-column panels; a last partial one is packed); the same B
 * given column by column (b_col_stride != 1) is packed. Both must give the
 * same bits, and match the reference: B is a block of a wider matrix (its
 * rows N + 5 apart), K spans several K blocks, N ends in a partial panel,
 * and the two products of the batch have their own B. */
TEST(gemm_reading_b_in_place_gives_the_bits_of_packed_b) {
  /* the first is 2.4 MiB of B: read in place only where the kernel prefetches */
  static const int64_t sizes[][3] = {{20, 2100, 300}, {64, 1000, 300}, {45, 77, 513}, {300, 40, 20}};
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2], ldb = n + 5;
      float *a = random_floats(2 * m * k, 20), *b_rows = random_floats(2 * k * ldb, 21);
      float *b_columns = malloc((size_t)(2 * k * n) * sizeof *b_columns);
      for (int64_t batch = 0; batch < 2; batch++)
        for (int64_t i = 0; i < k; i++)
          for (int64_t j = 0; j < n; j++)
            b_columns[batch * k * n + j * k + i] = b_rows[batch * k * ldb + i * ldb + j];
      float *c[2];
      for (int way = 0; way < 2; way++) {
        c[way] = malloc((size_t)(2 * m * n) * sizeof *c[way]);
        GemmProblem p = {
          .batch = 2, .m = m, .n = n, .k = k,
          .a = a, .a_row_stride = k, .a_col_stride = 1, .a_batch_stride = m * k,
          .b = way == 0 ? b_rows : b_columns, .b_row_stride = way == 0 ? ldb : 1,
          .b_col_stride = way == 0 ? 1 : k, .b_batch_stride = way == 0 ? k * ldb : k * n,
          .c = c[way], .c_row_stride = n, .c_batch_stride = m * n,
        };
        gemm_f32_batched(plan, NULL, &p, NULL);
        if (way == 0) product_matches_reference(&p, "B in place");
      }
      EXPECT(memcmp(c[0], c[1], (size_t)(2 * m * n) * sizeof(float)) == 0,
             "%s %lldx%lldx%lld: B read in place and B packed differ", cpu_level_name(all_levels[l]),
             (long long)m, (long long)n, (long long)k);
      free(a); free(b_rows); free(b_columns); free(c[0]); free(c[1]);
    }
    gemm_plan_free(plan);
  }
}

/* C placed 0..15 floats past a 64-byte boundary, with rows a multiple of
 * 16 floats apart (so every row shares the offset) and not: the kernel may
 * move its tiles to store whole cache lines, and edge columns may be stored
 * under a lane mask, but every element must get the bits of the aligned
 * run, and no float between C's rows or around C may change. Shapes with
 * one K block (C written) and two (C added to), B read in place and packed,
 * edge tiles of 1 to 31 columns. */
TEST(gemm_results_are_the_same_bits_wherever_c_lies_and_touch_nothing_else) {
  static const int64_t sizes[][3] = {{256, 512, 10}, {45, 77, 300}, {30, 10, 40}, {29, 1000, 20}, {40, 33, 513}};
  enum { GUARD = 64 };
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
      float *a = random_floats(m * k, 30), *b = random_floats(k * n, 31);
      for (int padded = 0; padded < 2; padded++) {
        int64_t ldc = padded ? n + 3 : (n + 15) / 16 * 16, floats = m * ldc + 2 * GUARD;
        float *aligned = aligned_alloc(64, (size_t)(floats + 16 + 15) / 16 * 64);   /* a whole number of 64 bytes */
        float *expected = malloc((size_t)(m * n) * sizeof *expected);
        for (int offset = 0; offset < 16; offset++) {
          float *c = aligned + GUARD + offset;
          for (int64_t i = 0; i < floats + 16; i++) aligned[i] = -7.0f;
          gemm_f32(plan, NULL, m, n, k, a, k, 1, b, n, 1, c, ldc, NULL);
          int64_t touched = 0, wrong = -1;
          for (int64_t i = 0; i < floats + 16; i++) {
            int64_t at = i - GUARD - offset, row = at >= 0 ? at / ldc : -1, column = at >= 0 ? at % ldc : -1;
            bool in_c = at >= 0 && row < m && column < n;
            if (!in_c) touched += aligned[i] != -7.0f;
            else if (offset == 0) expected[row * n + column] = aligned[i];
            else if (wrong < 0 && memcmp(&aligned[i], &expected[row * n + column], sizeof(float)) != 0) wrong = at;
          }
          EXPECT(touched == 0 && wrong < 0,
                 "%s %lldx%lldx%lld, ldc %lld, C %d floats past 64 bytes: %lld floats outside C changed; first "
                 "element unlike the aligned run's: %lld",
                 cpu_level_name(all_levels[l]), (long long)m, (long long)n, (long long)k, (long long)ldc, offset,
                 (long long)touched, (long long)wrong);
          if (offset == 0) {
            GemmProblem p = {.batch = 1, .m = m, .n = n, .k = k, .a = a, .a_row_stride = k, .a_col_stride = 1,
                             .b = b, .b_row_stride = n, .b_col_stride = 1, .c = c, .c_row_stride = ldc};
            product_matches_reference(&p, "C aligned");
          }
        }
        free(aligned); free(expected);
      }
      free(a); free(b);
    }
    gemm_plan_free(plan);
  }
}

/* A row-major A of a narrow product is read where it lies (avx512), a
 * column-major one packed: the same FMAs in the same order, so the same
 * bits. Heights of 1 to 14 rows at the bottom edge, K with a tail of 1 to 3
 * steps and two K blocks, edge columns, and A's rows 3 floats longer than
 * K (a_row_stride > K). */
TEST(gemm_reading_a_in_place_gives_the_bits_of_packed_a) {
  static const int64_t sizes[][3] = {{128, 128, 128}, {41, 77, 301}, {15, 512, 10}, {27, 33, 5}, {300, 100, 513}};
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2], lda = k + 3;
      float *a_rows = random_floats(m * lda, 40), *b = random_floats(k * n, 41);
      float *a_columns = malloc((size_t)(m * k) * sizeof *a_columns);
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++) a_columns[j * m + i] = a_rows[i * lda + j];
      float *c[2];
      for (int way = 0; way < 2; way++) {
        c[way] = malloc((size_t)(m * n) * sizeof *c[way]);
        GemmProblem p = {
          .batch = 1, .m = m, .n = n, .k = k,
          .a = way == 0 ? a_rows : a_columns, .a_row_stride = way == 0 ? lda : 1, .a_col_stride = way == 0 ? 1 : m,
          .b = b, .b_row_stride = n, .b_col_stride = 1, .c = c[way], .c_row_stride = n,
        };
        gemm_f32_batched(plan, NULL, &p, NULL);
        if (way == 0) product_matches_reference(&p, "A in place");
      }
      EXPECT(memcmp(c[0], c[1], (size_t)(m * n) * sizeof(float)) == 0,
             "%s %lldx%lldx%lld: A read in place and A packed differ", cpu_level_name(all_levels[l]), (long long)m,
             (long long)n, (long long)k);
      free(a_rows); free(a_columns); free(b); free(c[0]); free(c[1]);
    }
    gemm_plan_free(plan);
  }
}

/* The dump writes a dot's schedule before any run, from the layout alone:
 * a problem with no addresses must get the schedule a run takes (A read in
 * place for a narrow row-major product on avx512, packed when its rows are
 * 2 KiB apart; B packed for a short K). */
TEST(gemm_schedule_of_a_problem_without_addresses_is_the_one_a_run_takes) {
  GemmPlan *plan = plan_for_level(CPU_LEVEL_AVX512);
  if (!plan) return;
  static const struct { int64_t m, n, k; const char *says; } cases[] = {
    {128, 128, 128, "A read where it lies"},
    {256, 256, 512, "A packed (transposed)"},   /* rows 2 KiB apart */
    {128, 1024, 128, "A packed (transposed)"},  /* wider than 512 */
    /* 9 MiB of B, read where it lies: the kernel prefetches the next panel */
    {128, 768, 3072, "B read where it lies (row-major, the next panel prefetched)"},
    /* M = 128 is 10 tiles of MR = 14 at most: heights evened out, no tile of 2 */
    {128, 768, 3072, "M in 10 row tiles of 12 to 13 rows"},
    {1024, 1024, 1024, "M in 74 row tiles of 13 to 14 rows"},
    {140, 64, 64, "M in 10 row tiles of 14 rows"},
    /* K = 10: B packed whatever its layout, so C's stores cannot alias B's rows */
    {256, 512, 10, "B packed into 32x10 panels"},
    /* K blocks of 512 where C is wide (N >= 512), of 256 where it is not */
    {1024, 1024, 1024, "x KC 512"},
    {128, 768, 3072, "x KC 512"},
    {512, 64, 512, "x KC 256"},
    {512, 511, 1024, "x KC 256"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    GemmProblem p = {.batch = 1, .m = cases[i].m, .n = cases[i].n, .k = cases[i].k, .a_row_stride = cases[i].k,
                     .a_col_stride = 1, .b_row_stride = cases[i].n, .b_col_stride = 1, .c_row_stride = cases[i].n};
    StrBuf sb = {0};
    gemm_schedule_describe(plan, &p, 1, &sb);
    EXPECT(sb.data && strstr(sb.data, cases[i].says), "%lldx%lldx%lld: expected \"%s\" in: %s", (long long)p.m,
           (long long)p.n, (long long)p.k, cases[i].says, sb.data ? sb.data : "(nothing)");
    strbuf_free(&sb);
  }
  gemm_plan_free(plan);
}

TEST(gemm_results_are_bit_identical_for_1_2_and_3_threads) {
  static const int64_t sizes[][3] = {{1023, 517, 300}, {256, 256, 256}, {45, 1000, 700}};
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    for (size_t s = 0; s < 3; s++) {
      int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
      float *a = random_floats(m * k, 10), *b = random_floats(k * n, 11);
      float *c[3];
      for (int t = 0; t < 3; t++) {
        ThreadPool *pool = thread_pool_create(t + 1);
        c[t] = malloc((size_t)(m * n) * sizeof *c[t]);
        gemm_f32(plan, pool, m, n, k, a, 1, m, b, n, 1, c[t], n, NULL);   /* A transposed */
        thread_pool_free(pool);
      }
      EXPECT(memcmp(c[0], c[1], (size_t)(m * n) * sizeof(float)) == 0,
             "%s %lldx%lldx%lld: 1 and 2 threads differ", cpu_level_name(all_levels[l]),
             (long long)m, (long long)n, (long long)k);
      EXPECT(memcmp(c[0], c[2], (size_t)(m * n) * sizeof(float)) == 0,
             "%s %lldx%lldx%lld: 1 and 3 threads differ", cpu_level_name(all_levels[l]),
             (long long)m, (long long)n, (long long)k);
      free(a); free(b);
      for (int t = 0; t < 3; t++) free(c[t]);
    }
    gemm_plan_free(plan);
  }
}

/* One thread runs a product in the blocks the caches ask for, not cut into
 * the 8 tasks that spread it over several threads (each cut reads B again
 * or packs A again); the M and N blocks only say which task computes a tile,
 * so the bits are those of 2 threads. 128 x 3072 x 768 (M x K x N), the
 * product of make bench that the cuts cost most. */
TEST(gemm_one_thread_runs_one_task_with_the_bits_of_eight) {
  GemmPlan *plan = plan_for_level(CPU_LEVEL_AVX512);
  if (!plan) return;
  int64_t m = 128, k = 3072, n = 768;
  float *a = random_floats(m * k, 12), *b = random_floats(k * n, 13);
  GemmProblem p = {.batch = 1, .m = m, .n = n, .k = k, .a = a, .a_row_stride = k, .a_col_stride = 1,
                   .b = b, .b_row_stride = n, .b_col_stride = 1, .c_row_stride = n};
  static const struct { int threads; const char *says; } cases[] = {
    {1, "1 tasks (1 x 1 macro tiles x 1 products) for 1 thread"},
    {2, "8 tasks (4 x 2 macro tiles x 1 products) for 2 threads"},
  };
  for (size_t i = 0; i < 2; i++) {
    StrBuf sb = {0};
    gemm_schedule_describe(plan, &p, cases[i].threads, &sb);
    EXPECT(sb.data && strstr(sb.data, cases[i].says), "expected \"%s\" in: %s", cases[i].says,
           sb.data ? sb.data : "(nothing)");
    strbuf_free(&sb);
  }
  /* what decides whether a program starts its pool: the tasks of several threads */
  EXPECT(gemm_task_count(plan, &p) >= 8, "a pool would get %lld tasks, not 8 or more",
         (long long)gemm_task_count(plan, &p));
  float *c[2];
  for (int t = 0; t < 2; t++) {
    ThreadPool *pool = t ? thread_pool_create(2) : NULL;
    c[t] = malloc((size_t)(m * n) * sizeof *c[t]);
    p.c = c[t];
    gemm_f32_batched(plan, pool, &p, NULL);
    thread_pool_free(pool);
  }
  EXPECT(memcmp(c[0], c[1], (size_t)(m * n) * sizeof(float)) == 0, "1 and 2 threads differ");
  free(a); free(b); free(c[0]); free(c[1]);
  gemm_plan_free(plan);
}

TEST(gemm_with_k_zero_writes_zeros_and_empty_c_writes_nothing) {
  GemmPlan *plan = plan_for_level(hardware.level);
  if (!plan) return;
  float a[1] = {1}, b[1] = {1}, c[6] = {5, 5, 5, 5, 5, 5};
  gemm_f32(plan, NULL, 2, 3, 0, a, 0, 1, b, 3, 1, c, 3, NULL);
  for (int i = 0; i < 6; i++) EXPECT(c[i] == 0.0f, "C[%d] = %g after K = 0", i, c[i]);
  c[0] = 7;
  gemm_f32(plan, NULL, 0, 3, 4, a, 4, 1, b, 3, 1, c, 3, NULL);
  gemm_f32(plan, NULL, 1, 0, 4, a, 4, 1, b, 3, 1, c, 3, NULL);
  EXPECT(c[0] == 7.0f, "C touched by an empty product: %g", c[0]);
  gemm_plan_free(plan);
}

/* The permissions column of the /proc/self/maps line that covers addr. */
static bool mapping_permissions(const void *addr, char perms[5]) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return false;
  char line[512];
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char p[5];
    if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && lo <= (uintptr_t)addr && (uintptr_t)addr < hi) {
      memcpy(perms, p, 5);
      found = true;
    }
  }
  fclose(f);
  return found;
}

TEST(gemm_micro_kernel_pages_are_read_execute_not_writable) {
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    char perms[5] = "";
    EXPECT(mapping_permissions(gemm_plan_kernel_address(plan), perms), "no mapping for the kernel");
    EXPECT(strncmp(perms, "r-x", 3) == 0, "%s kernel pages are %s, expected r-x",
           cpu_level_name(all_levels[l]), perms);
    gemm_plan_free(plan);
  }
}

TEST(gemm_listing_shows_the_multiply_add_of_each_level) {
  static const char *const expected[] = {"mulps", "vfmadd231ps %ymm", "vfmadd231ps %zmm"};
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    Status st;
    status_clear(&st);
    EXPECT(gemm_plan_print_listing(plan, out, &st), "%s", st.message);
    fclose(out);
    EXPECT(strstr(text, expected[l]) != NULL, "%s listing lacks \"%s\"",
           cpu_level_name(all_levels[l]), expected[l]);
    if (verbose) printf("%s", text);
    free(text);
    gemm_plan_free(plan);
  }
}

TEST(gemm_plan_below_sse4_is_an_error_not_a_crash) {
  CpuFeatures none = {0};
  Status st;
  status_clear(&st);
  EXPECT(gemm_plan_create(&none, &st) == NULL, "a plan without SSE4.1");
  EXPECT(st.code == STATUS_UNSUPPORTED && strstr(st.message, "SSE4.1"), "status %d: %s", st.code,
         st.message);
}

/* A packer reading a row-major batch of A, as a convolution's patch packer
 * computes its panels: the GemmPackFn contract, zero rows included. */
typedef struct RowMajorA {
  const float *a;
  int64_t m, k;
} RowMajorA;

static void row_major_pack(void *context, int64_t batch, int64_t row0, int rows, int width, int64_t k0,
                           int64_t depth, float *dst) {
  const RowMajorA *ra = context;
  const float *a = ra->a + batch * ra->m * ra->k;
  for (int64_t k = 0; k < depth; k++)
    for (int l = 0; l < width; l++) dst[k * width + l] = l < rows ? a[(row0 + l) * ra->k + k0 + k] : 0.0f;
}

TEST(gemm_with_a_packer_gives_the_bits_of_gemm_reading_a_at_strides) {
  static const int64_t sizes[][4] = {{2, 300, 70, 600}, {1, 5, 9, 3}, {3, 29, 33, 257}};
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    for (size_t s = 0; s < 3; s++) {
      int64_t batch = sizes[s][0], m = sizes[s][1], n = sizes[s][2], k = sizes[s][3];
      float *a = random_floats(batch * m * k, 20), *b = random_floats(batch * k * n, 21);
      float *strided = calloc((size_t)(batch * m * n), sizeof(float));
      float *packed = calloc((size_t)(batch * m * n), sizeof(float));
      GemmProblem p = {.batch = batch, .m = m, .n = n, .k = k, .a = a, .a_row_stride = k, .a_col_stride = 1,
                       .a_batch_stride = m * k, .b = b, .b_row_stride = n, .b_col_stride = 1, .b_batch_stride = k * n,
                       .c = strided, .c_row_stride = n, .c_batch_stride = m * n};
      ThreadPool *pool = thread_pool_create(2);
      gemm_f32_batched(plan, pool, &p, NULL);
      EXPECT(product_matches_reference(&p, "strided A"), "%s: strided A is right", cpu_level_name(all_levels[l]));
      RowMajorA ra = {a, m, k};
      p.c = packed;
      p.a = NULL;
      p.a_pack = row_major_pack;
      p.a_pack_context = &ra;
      gemm_f32_batched(plan, pool, &p, NULL);
      thread_pool_free(pool);
      /* The small products the strided call ran directly sum in another
       * order; the packed ones must be the same bits. */
      bool direct = (double)m * n * k < 32 * 32 * 32;
      p.a = a;
      if (direct) EXPECT(product_matches_reference(&p, "packed A"), "%s: packed A is right", cpu_level_name(all_levels[l]));
      else
        EXPECT(memcmp(strided, packed, (size_t)(batch * m * n) * sizeof(float)) == 0, "%s %lldx%lldx%lldx%lld: bits differ",
               cpu_level_name(all_levels[l]), (long long)batch, (long long)m, (long long)n, (long long)k);
      free(a); free(b); free(strided); free(packed);
    }
    gemm_plan_free(plan);
  }
}

/* The B packer of a convolution turned around (cpu_conv.c), here reading
 * a row-major B: dst[k * width + l] = B[batch][k0 + k][col0 + l]. */
typedef struct RowMajorB {
  const float *b;
  int64_t k, n;
} RowMajorB;
static void row_major_b_pack(void *context, int64_t batch, int64_t col0, int cols, int width, int64_t k0,
                             int64_t depth, float *dst) {
  const RowMajorB *rb = context;
  const float *b = rb->b + batch * rb->k * rb->n;
  for (int64_t k = 0; k < depth; k++)
    for (int l = 0; l < width; l++) dst[k * width + l] = l < cols ? b[(k0 + k) * rb->n + col0 + l] : 0.0f;
}

/* A B packer gives the bits of B packed from its strides (B given column
 * by column, so that it is packed, not read in place), small products
 * included (a packer takes the packed path at any size). */
TEST(gemm_with_a_b_packer_gives_the_bits_of_gemm_packing_b_itself) {
  static const int64_t sizes[][4] = {{2, 70, 300, 600}, {1, 5, 9, 3}, {3, 29, 33, 257}};
  for (int l = 0; l < LEVEL_COUNT; l++) {
    GemmPlan *plan = plan_for_level(all_levels[l]);
    if (!plan) continue;
    for (size_t s = 0; s < 3; s++) {
      int64_t batch = sizes[s][0], m = sizes[s][1], n = sizes[s][2], k = sizes[s][3];
      float *a = random_floats(batch * m * k, 22), *b = random_floats(batch * k * n, 23);
      float *b_columns = malloc((size_t)(batch * k * n) * sizeof *b_columns);
      for (int64_t x = 0; x < batch; x++)
        for (int64_t i = 0; i < k; i++)
          for (int64_t j = 0; j < n; j++) b_columns[x * k * n + j * k + i] = b[x * k * n + i * n + j];
      float *strided = calloc((size_t)(batch * m * n), sizeof(float));
      float *packed = calloc((size_t)(batch * m * n), sizeof(float));
      GemmProblem p = {.batch = batch, .m = m, .n = n, .k = k, .a = a, .a_row_stride = k, .a_col_stride = 1,
                       .a_batch_stride = m * k, .b = b_columns, .b_row_stride = 1, .b_col_stride = k,
                       .b_batch_stride = k * n, .c = strided, .c_row_stride = n, .c_batch_stride = m * n};
      ThreadPool *pool = thread_pool_create(2);
      gemm_f32_batched(plan, pool, &p, NULL);
      RowMajorB rb = {b, k, n};
      p.c = packed;
      p.b = NULL;
      p.b_pack = row_major_b_pack;
      p.b_pack_context = &rb;
      gemm_f32_batched(plan, pool, &p, NULL);
      thread_pool_free(pool);
      p.b = b;
      p.b_row_stride = n;
      p.b_col_stride = 1;
      EXPECT(product_matches_reference(&p, "packed B"), "%s: packed B is right", cpu_level_name(all_levels[l]));
      bool direct = (double)m * n * k < 32 * 32 * 32;
      if (!direct)
        EXPECT(memcmp(strided, packed, (size_t)(batch * m * n) * sizeof(float)) == 0, "%s %lldx%lldx%lldx%lld: bits differ",
               cpu_level_name(all_levels[l]), (long long)batch, (long long)m, (long long)n, (long long)k);
      free(a); free(b); free(b_columns); free(strided); free(packed);
    }
    gemm_plan_free(plan);
  }
}

int main(int argc, char **argv) {
  verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
  cpu_features_detect_hardware(&hardware);
  RUN(gemm_matches_double_reference_for_odd_sizes_at_every_isa_level);
  RUN(gemm_absorbs_transposed_a_and_b_into_packing);
  RUN(gemm_batch_strides_select_each_product_and_zero_stride_broadcasts);
  RUN(gemm_epilogue_sees_each_finished_element_exactly_once);
  RUN(gemm_reading_b_in_place_gives_the_bits_of_packed_b);
  RUN(gemm_with_a_b_packer_gives_the_bits_of_gemm_packing_b_itself);
  RUN(gemm_results_are_bit_identical_for_1_2_and_3_threads);
  RUN(gemm_reading_a_in_place_gives_the_bits_of_packed_a);
  RUN(gemm_column_major_a_packed_by_lines_gives_the_bits_of_row_major_a);
  RUN(gemm_schedule_of_a_problem_without_addresses_is_the_one_a_run_takes);
  RUN(gemm_one_thread_runs_one_task_with_the_bits_of_eight);
  RUN(gemm_results_are_the_same_bits_wherever_c_lies_and_touch_nothing_else);
  RUN(gemm_with_k_zero_writes_zeros_and_empty_c_writes_nothing);
  RUN(gemm_with_a_packer_gives_the_bits_of_gemm_reading_a_at_strides);
  RUN(gemm_micro_kernel_pages_are_read_execute_not_writable);
  RUN(gemm_listing_shows_the_multiply_add_of_each_level);
  RUN(gemm_plan_below_sse4_is_an_error_not_a_crash);
  return test_summary();
}
