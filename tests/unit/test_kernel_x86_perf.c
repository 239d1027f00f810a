/* The kernel compiler's faster paths keep their answers. Long reductions
 * to few output points split into chunks of the reduced range
 * (kernel_x86.c): the chunks run as parallel tasks and are folded in
 * order, so the bytes are the same whatever the thread count, and the
 * result stays within rounding of an exact (double) sum. On AVX-512 a loop
 * kernel's tail runs as one more masked trip of its SIMD body. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/kernel_x86.h"
#include "ir.h"
#include "ir/kernel/kernel.h"
#include "opt/lower.h"
#include "../test.h"

/* Each row's reduced elements, contiguous: f32[3,200003] reduced over
 * {1} (3 chunks of 65536, the last with a scalar tail) or f32[3,300,1000]
 * over {1,2} (4 chunks of 65 slices of 1000, the last of 105). */
enum { ROWS = 3 };
typedef struct SplitCase {
  const char *shape, *dims;
  int64_t columns, chunks;
} SplitCase;
static const SplitCase split_cases[] = {{"f32[3,200003]", "{1}", 200003, 3}, {"f32[3,300,1000]", "{1,2}", 300000, 4}};

static Kernel *lower_text(const char *text, Module **m) {
  Status st;
  status_clear(&st);
  *m = parse_module(text, strlen(text), "inline", &st);
  EXPECT(*m != NULL, "%s", st.message);
  if (!*m) return NULL;
  Kernel *k = lower_to_kernel((*m)->entry->root, &st);
  EXPECT(k != NULL, "%s", st.message);
  return k;
}

/* Values in [-1, 1) from a fixed generator; row 2 holds one NaN in its
 * second chunk when nan is set. */
static float *input_values(int64_t columns, bool nan) {
  float *x = mem_calloc((size_t)(ROWS * columns), sizeof *x);
  uint64_t state = 12345;
  for (int64_t i = 0; i < ROWS * columns; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((double)(state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
  if (nan) x[2 * columns + 70000] = NAN;
  return x;
}

/* The exact reduction of row r from init, in double (max/min: NaN wins). */
static double reference(const char *reducer, const float *x, int64_t columns, int r, double init) {
  double acc = init;
  for (int64_t c = 0; c < columns; c++) {
    double v = x[r * columns + c];
    if (isnan(v) || isnan(acc)) acc = NAN;
    else if (!strcmp(reducer, "add")) acc += v;
    else if (!strcmp(reducer, "maximum")) acc = fmax(acc, v);
    else acc = fmin(acc, v);
  }
  return acc;
}

static void check_reducer(const char *reducer, const CpuFeatures *cpu, const SplitCase *c) {
  char text[600];
  snprintf(text, sizeof text,
           "HloModule s\nf { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] %s(a, b) }\n"
           "ENTRY e { x = %s parameter(0)\n i = f32[] parameter(1)\n"
           " ROOT r = f32[%d] reduce(x, i), dimensions=%s, to_apply=f }\n",
           reducer, c->shape, ROWS, c->dims);
  Module *m = NULL;
  Kernel *k = lower_text(text, &m);
  Status st;
  status_clear(&st);
  CompiledKernel *ck = k ? kernel_x86_compile(k, cpu, &st) : NULL;
  EXPECT(ck != NULL, "%s", st.message);
  if (ck) {
    EXPECT(kernel_x86_split_chunks(ck) == c->chunks, "%s of %s at %s: %lld chunks", reducer, c->shape,
           cpu_level_name(cpu->level), (long long)kernel_x86_split_chunks(ck));
    float *x = input_values(c->columns, strcmp(reducer, "add") != 0);
    float init = strcmp(reducer, "add") ? 0.75f : 0.5f;
    float first[ROWS] = {0};
    static const int threads[] = {0, 1, 2, 3, 8};
    for (int t = 0; t < 5; t++) {
      float out[ROWS] = {0};
      void *buffers[3] = {x, &init, out};
      ThreadPool *pool = threads[t] ? thread_pool_create(threads[t]) : NULL;
      kernel_x86_run(ck, buffers, pool);
      thread_pool_free(pool);
      if (t == 0) memcpy(first, out, sizeof out);
      EXPECT(memcmp(first, out, sizeof out) == 0, "%s at %s: %d threads give other bytes than one call", reducer,
             cpu_level_name(cpu->level), threads[t]);
    }
    /* rows one by one, as a caller splitting rows would */
    float out[ROWS] = {0};
    void *buffers[3] = {x, &init, out};
    for (int r = 0; r < ROWS; r++) kernel_x86_run_rows(ck, buffers, r, 1);
    EXPECT(memcmp(first, out, sizeof out) == 0, "%s: rows run one by one give other bytes", reducer);
    for (int r = 0; r < ROWS; r++) {
      double want = reference(reducer, x, c->columns, r, init);
      bool ok = isnan(want) ? isnan(first[r]) : fabs(first[r] - want) <= 1e-6 * (double)c->columns * 0.5;
      if (strcmp(reducer, "add") && !isnan(want)) ok = first[r] == (float)want;
      EXPECT(ok, "%s of %s at %s row %d: %.9g, exact %.9g", reducer, c->shape, cpu_level_name(cpu->level), r,
             first[r], want);
    }
    free(x);
  }
  kernel_x86_free(ck);
  kernel_free(k);
  module_free(m);
}

TEST(long_sums_split_into_chunks_give_the_same_bytes_at_every_thread_count) {
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  static const char *const reducers[] = {"add", "maximum", "minimum"};
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
    CpuFeatures cpu = hardware;
    Status st;
    status_clear(&st);
    if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 2; c++) check_reducer(reducers[r], &cpu, &split_cases[c]);
  }
}

/* Many output points keep whole rows: their rows already give the tasks. */
TEST(sums_to_many_points_are_not_split) {
  Module *m = NULL;
  Kernel *k = lower_text("HloModule s\nf { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
                         "ENTRY e { x = f32[100,140000] parameter(0)\n i = f32[] constant(0)\n"
                         " ROOT r = f32[100] reduce(x, i), dimensions={1}, to_apply=f }\n", &m);
  CpuFeatures cpu;
  cpu_features_detect_hardware(&cpu);
  Status st;
  status_clear(&st);
  CompiledKernel *ck = k ? kernel_x86_compile(k, &cpu, &st) : NULL;
  EXPECT(ck != NULL && kernel_x86_split_chunks(ck) == 0, "%s", ck ? "split" : st.message);
  kernel_x86_free(ck);
  kernel_free(k);
  module_free(m);
}

static char *listing_of(const CompiledKernel *ck) {
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  kernel_x86_print_listing(ck, f);
  fclose(f);
  return text;
}

/* a * b + a over f32[5,37]: 37 = 2 * 16 + 5, so each row ends in a masked
 * trip of 5 lanes whose loads and stores touch nothing past the row (the
 * element after each row is a canary) and whose values are the scalar
 * code's. */
TEST(avx512_loop_tails_run_masked_and_write_only_their_lanes) {
  CpuFeatures cpu;
  cpu_features_detect_hardware(&cpu);
  if (cpu.hardware_level < CPU_LEVEL_AVX512) return;
  Module *m = NULL;
  Kernel *k = lower_text("HloModule t\nfused { a = f32[5,37] parameter(0)\n b = f32[5,37] parameter(1)\n"
                         " p = f32[5,37] multiply(a, b)\n ROOT s = f32[5,37] add(p, a) }\n"
                         "ENTRY e { a = f32[5,37] parameter(0)\n b = f32[5,37] parameter(1)\n"
                         " ROOT f = f32[5,37] fusion(a, b), kind=kLoop, calls=fused }\n", &m);
  Status st;
  status_clear(&st);
  CompiledKernel *ck = k ? kernel_x86_compile(k, &cpu, &st) : NULL;
  EXPECT(ck != NULL, "%s", st.message);
  if (ck) {
    char *text = listing_of(ck);
    EXPECT(strstr(text, "masked tail, 5 lanes") && strstr(text, "{%k2}") && !strstr(text, "scalar tail"),
           "listing:\n%s", text);
    free(text);
    enum { N = 5 * 37 };
    float a[N], b[N], out[N + 1];
    for (int i = 0; i < N; i++) a[i] = (float)(i % 11) * 0.37f - 1.5f, b[i] = (float)(i % 7) * -0.61f + 0.25f;
    out[N] = 12345.0f;
    void *buffers[3] = {a, b, out};
    kernel_x86_run(ck, buffers, NULL);
    int wrong = 0;
    for (int i = 0; i < N; i++) {
      volatile float p = a[i] * b[i];
      float want = p + a[i];
      wrong += memcmp(&want, &out[i], sizeof want) != 0;
    }
    EXPECT(wrong == 0 && out[N] == 12345.0f, "%d elements wrong, canary %g", wrong, out[N]);
  }
  kernel_x86_free(ck);
  kernel_free(k);
  module_free(m);
}

/* Lines of the listing that write a zmm register or an immediate to the
 * stack frame. */
static int stack_stores(const char *text) {
  int n = 0;
  for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), line);
    const char *to = strstr(buf, "(%rsp)");
    const char *comma = strrchr(buf, ',');
    bool store = to && comma && comma < to; /* AT&T: the destination is last */
    if (store && (strstr(buf, "%zmm") || strstr(buf, "movl")) && !strstr(buf, "movss")) n++;
  }
  return n;
}

/* Softmax as JAX writes it, over rows of 256. */
static const char softmax_text[] =
    "HloModule s\nmax { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b) }\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "fused { x = f32[6,256] parameter(0)\n ninf = f32[] constant(-inf)\n zero = f32[] constant(0)\n"
    " mx = f32[6] reduce(x, ninf), dimensions={1}, to_apply=max\n mb = f32[6,256] broadcast(mx), dimensions={0}\n"
    " d = f32[6,256] subtract(x, mb)\n e = f32[6,256] exponential(d)\n"
    " s = f32[6] reduce(e, zero), dimensions={1}, to_apply=add\n sb = f32[6,256] broadcast(s), dimensions={0}\n"
    " ROOT y = f32[6,256] divide(e, sb) }\n"
    "ENTRY e { x = f32[6,256] parameter(0)\n ROOT f = f32[6,256] fusion(x), kind=kInput, calls=fused }\n";

/* Lines of text after the first line holding `from` and before the next
 * holding `to` that hold `what`; -1 when from or to is missing. */
static int lines_between(const char *text, const char *from, const char *to, const char *what) {
  const char *start = strstr(text, from);
  const char *end = start ? strstr(start, to) : NULL;
  if (!end) return -1;
  int n = 0;
  for (const char *line = start; line && line < end; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < 511 ? len : 511), line);
    n += strstr(buf, what) != NULL;
  }
  return n;
}

/* Softmax's exp once per element, at every level the machine runs: the
 * sum's phase stores exp(x - max) into the output row and the ROW phase
 * reads it back and divides, so the ROW loop holds no exp code (exp's
 * scaling by 2^n is the only float-to-int truncation, cvtt*, here, or at
 * avx512 the only vscalefps). The
 * schedule in the kernel IR says so. Rows with NaN, +inf, -inf only and
 * large values give the same bytes at every level and kernel_eval's
 * values (within the 16-partial sum's rounding, NaN where it has NaN). */
TEST(softmax_computes_exp_once_per_element_at_every_level) {
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  Module *m = NULL;
  Kernel *k = lower_text(softmax_text, &m);
  if (!k) return;
  enum { ROWS6 = 6, COLS = 256 };
  Literal *input = literal_create(&k->inputs[0].shape), *want = literal_create(&k->outputs[0].shape);
  for (int i = 0; i < ROWS6 * COLS; i++) {
    int r = i / COLS, c = i % COLS;
    double v = sin(i * 0.37) * 4.0;
    if (r == 1 && c == 77) v = NAN;
    if (r == 2 && c == 200) v = INFINITY;
    if (r == 3) v = -INFINITY;
    if (r == 4) v = 80.0 + v;
    if (r == 5 && c % 3 == 0) v = -INFINITY;
    literal_set_f64(input, i, v);
  }
  Status st;
  status_clear(&st);
  EXPECT(kernel_eval(k, &input, &want, &st), "%s", st.message);
  float first[ROWS6 * COLS];
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
    CpuFeatures cpu;
    cpu_features_for_level(&cpu, level);
    kernel_x86_schedule(k, &cpu);
    StrBuf sb = {0};
    print_kernel(&sb, k);
    EXPECT(strstr(sb.data, "stores %15 to the output for phase 2") && strstr(sb.data, "reads %23 back from the output"),
           "%s: the schedule reuses no exp:\n%s", cpu_level_name(level), sb.data);
    strbuf_free(&sb);
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s", st.message);
    if (!ck) continue;
    char *text = listing_of(ck);
    /* the ROW loop, or where it runs in the next row's max loop (avx2 and
     * up), that loop's copy with it, and the last row's loop after the rows */
    bool handed_on = strstr(text, "the row handed on divided in this loop") != NULL;
    const char *row_from = handed_on ? "the row handed on divided in this loop" : "row vector loop";
    const char *row_to = handed_on ? "# op %7:" : "# post";
    const char *sum_to = handed_on ? "the row's divisor and output row" : "row vector loop";
    int in_row = lines_between(text, row_from, row_to, "cvtt") + lines_between(text, row_from, row_to, "vscalefps");
    if (handed_on)
      in_row += lines_between(text, "the last row handed on", "the vector math's constants", "cvtt") +
                lines_between(text, "the last row handed on", "the vector math's constants", "vscalefps");
    int in_sum = lines_between(text, "# vector sum", sum_to, "cvtt") + lines_between(text, "# vector sum", sum_to, "vscalefps");
    EXPECT(in_row == 0 && in_sum > 0, "%s: %d lines of exp code in the ROW loop, %d before:\n%s", cpu_level_name(level),
           in_row, in_sum, text);
    free(text);
    float x[ROWS6 * COLS], y[ROWS6 * COLS];
    for (int i = 0; i < ROWS6 * COLS; i++) x[i] = (float)literal_get_f64(input, i);
    void *buffers[2] = {x, y};
    kernel_x86_run(ck, buffers, NULL);
    if (level == CPU_LEVEL_SSE4) memcpy(first, y, sizeof y);
    EXPECT(memcmp(first, y, sizeof y) == 0, "%s gives other bytes than sse4", cpu_level_name(level));
    int wrong = 0;
    for (int i = 0; i < ROWS6 * COLS; i++) {
      double w = literal_get_f64(want, i);
      wrong += isnan(w) ? !isnan(y[i]) : fabs(y[i] - w) > 0x1p-16 * fabs(w);
    }
    EXPECT(wrong == 0, "%s: %d elements differ from kernel_eval", cpu_level_name(level), wrong);
    kernel_x86_free(ck);
  }
  literal_free(input);
  literal_free(want);
  kernel_free(k);
  module_free(m);
}

/* At avx2 and up softmax's ROW phase (exp / sum, read back from the
 * output) runs in the next row's max loop, each trip dividing a vector of
 * the row before, and the last row of a range is divided after the rows.
 * Every way of cutting the 6 rows into ranges (as threads get them: rows
 * one at a time, 2 + 4, 3 + 3, 5 + 1, all at once), and the output
 * written over the input (a donated buffer), give sse4's bytes, whose ROW
 * phase runs in its own loop; rows with a NaN (its max rerun in the exact
 * loop), +inf, only -inf and large values among them. */
TEST(softmax_divides_each_row_in_the_next_rows_max_loop_and_each_range_ends_divided) {
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  Module *m = NULL;
  Kernel *k = lower_text(softmax_text, &m);
  if (!k) return;
  enum { ROWS6 = 6, COLS = 256 };
  float x[ROWS6 * COLS], first[ROWS6 * COLS], y[ROWS6 * COLS];
  for (int i = 0; i < ROWS6 * COLS; i++) {
    int r = i / COLS, c = i % COLS;
    x[i] = (float)(sin(i * 0.37) * 4.0);
    if (r == 1 && c == 77) x[i] = NAN;
    if (r == 2 && c == 200) x[i] = INFINITY;
    if (r == 3) x[i] = -INFINITY;
    if (r == 4) x[i] += 80.0f;
  }
  static const int cuts[][ROWS6 + 1] = {{1, 1, 1, 1, 1, 1, 0}, {2, 4, 0}, {3, 3, 0}, {5, 1, 0}, {6, 0}};
  Status st;
  status_clear(&st);
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
    CpuFeatures cpu;
    cpu_features_for_level(&cpu, level);
    kernel_x86_schedule(k, &cpu);
    StrBuf sb = {0};
    print_kernel(&sb, k);
    bool handed_on = strstr(sb.data, "runs in the next row's phase 0 loop") != NULL;
    EXPECT(handed_on == (level >= CPU_LEVEL_AVX2), "%s: phase 2 %s the next row's loop:\n%s", cpu_level_name(level),
           handed_on ? "runs in" : "does not run in", sb.data);
    strbuf_free(&sb);
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s", st.message);
    if (!ck) continue;
    if (level == CPU_LEVEL_SSE4) {
      void *buffers[2] = {x, first};
      kernel_x86_run(ck, buffers, NULL);
    }
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
      memset(y, 0xff, sizeof y);
      void *buffers[2] = {x, y};
      for (int part = 0, row = 0; cuts[c][part]; row += cuts[c][part++])
        kernel_x86_run_rows(ck, buffers, row, cuts[c][part]);
      for (int i = 0; i < ROWS6 * COLS; i++)
        if (memcmp(&first[i], &y[i], 4) != 0) {
          EXPECT(false, "%s, ranges of %d, %d, ... rows: row %d column %d is %a, sse4's %a", cpu_level_name(level),
                 cuts[c][0], cuts[c][1], i / COLS, i % COLS, y[i], first[i]);
          break;
        }
    }
    memcpy(y, x, sizeof y);
    void *in_place[2] = {y, y};
    kernel_x86_run(ck, in_place, NULL);
    EXPECT(memcmp(first, y, sizeof y) == 0, "%s, output over the input: other bytes than sse4's", cpu_level_name(level));
    kernel_x86_free(ck);
  }
  double total = 0;
  for (int c = 0; c < COLS; c++) total += first[5 * COLS + c];
  EXPECT(fabs(total - 1.0) < 1e-5, "row 5 sums to %.9g, not 1", total);
  kernel_free(k);
  module_free(m);
}

/* A softmax past the last-level cache (LARGE_BYTES, f32[2048,4096]: 32
 * MiB) keeps exp in a row buffer in the frame, prefetches the next row,
 * and stores its ROW phase past the caches (vmovntps / movntps, then one
 * sfence) on rows aligned to the vector, with plain stores on the
 * others: an output 64-byte aligned and one 4 bytes past that give the
 * same bytes, at every level, on 1 and 3 threads, as sse4's aligned run.
 * A row over ROW_BUFFER_MAX_BYTES (f32[512,16384]) reuses exp through
 * the output, so it stores no stream. A small softmax does neither (the
 * test above). */
static const char large_softmax_text[] =
    "HloModule s\nmax { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b) }\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "fused { x = f32[R,C] parameter(0)\n ninf = f32[] constant(-inf)\n zero = f32[] constant(0)\n"
    " mx = f32[R] reduce(x, ninf), dimensions={1}, to_apply=max\n mb = f32[R,C] broadcast(mx), dimensions={0}\n"
    " d = f32[R,C] subtract(x, mb)\n e = f32[R,C] exponential(d)\n"
    " s = f32[R] reduce(e, zero), dimensions={1}, to_apply=add\n sb = f32[R,C] broadcast(s), dimensions={0}\n"
    " ROOT y = f32[R,C] divide(e, sb) }\n"
    "ENTRY e { x = f32[R,C] parameter(0)\n ROOT f = f32[R,C] fusion(x), kind=kInput, calls=fused }\n";

static Kernel *lower_softmax(int rows, int columns, Module **m) {
  StrBuf text = {0};
  for (const char *p = large_softmax_text; *p; p++) {
    if (*p == 'R' && p[1] == ',' && p[-1] == '[') strbuf_printf(&text, "%d", rows);
    else if (*p == 'R' && p[1] == ']' && p[-1] == '[') strbuf_printf(&text, "%d", rows);
    else if (*p == 'C' && p[1] == ']' && p[-1] == ',') strbuf_printf(&text, "%d", columns);
    else strbuf_printf(&text, "%c", *p);
  }
  Kernel *k = lower_text(text.data, m);
  strbuf_free(&text);
  return k;
}

TEST(large_softmax_streams_its_output_past_the_caches_with_the_same_bytes) {
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  enum { R = 2048, C = 4096, N = R * C };
  Module *m = NULL;
  Kernel *k = lower_softmax(R, C, &m);
  if (!k) return;
  float *x = mem_calloc(N, sizeof *x);
  for (int i = 0; i < N; i++) x[i] = (float)(sin(i * 0.37) * 4.0);
  float *first = mem_calloc(N, sizeof *first), *block = aligned_alloc(64, (N + 16) * sizeof(float));
  Status st;
  status_clear(&st);
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
    CpuFeatures cpu;
    cpu_features_for_level(&cpu, level);
    kernel_x86_schedule(k, &cpu);
    StrBuf sb = {0};
    print_kernel(&sb, k);
    EXPECT(strstr(sb.data, "non-temporal stores on aligned rows") && strstr(sb.data, "prefetches the next row (+16384 bytes)") &&
               strstr(sb.data, "stores %15 to the row buffer for phase 2"),
           "%s: no streaming or prefetch in the schedule:\n%s", cpu_level_name(level), sb.data);
    strbuf_free(&sb);
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s", st.message);
    if (!ck) continue;
    char *text = listing_of(ck);
    EXPECT(strstr(text, "movntps") && strstr(text, "sfence") && strstr(text, "prefetcht0"),
           "%s: no non-temporal store, sfence or prefetch in the listing", cpu_level_name(level));
    free(text);
    for (int offset = 0; offset <= 1; offset++) {
      for (int threads = 1; threads <= 3; threads += 2) {
        float *y = block + offset; /* 64-byte aligned rows, then rows 4 bytes past */
        memset(block, 0, (N + 16) * sizeof(float));
        void *buffers[2] = {x, y};
        ThreadPool *pool = thread_pool_create(threads);
        kernel_x86_run(ck, buffers, pool);
        thread_pool_free(pool);
        if (level == CPU_LEVEL_SSE4 && offset == 0 && threads == 1) memcpy(first, y, N * sizeof(float));
        EXPECT(memcmp(first, y, N * sizeof(float)) == 0, "%s, output %d bytes past 64, %d threads: other bytes than sse4's",
               cpu_level_name(level), 4 * offset, threads);
      }
    }
    kernel_x86_free(ck);
  }
  double total = 0;
  for (int c = 0; c < C; c++) total += first[5 * C + c];
  EXPECT(fabs(total - 1.0) < 1e-5, "row 5 sums to %.9g, not 1", total);
  mem_free(x);
  mem_free(first);
  free(block);
  kernel_free(k);
  module_free(m);
  Module *wide_module = NULL;
  Kernel *wide = lower_softmax(512, 16384, &wide_module);
  if (!wide) return;
  CpuFeatures cpu;
  cpu_features_for_level(&cpu, CPU_LEVEL_SSE4);
  kernel_x86_schedule(wide, &cpu);
  StrBuf sb = {0};
  print_kernel(&sb, wide);
  EXPECT(strstr(sb.data, "reads %23 back from the output") && !strstr(sb.data, "non-temporal"),
         "a 64 KiB row goes through the frame, or streams:\n%s", sb.data);
  strbuf_free(&sb);
  kernel_free(wide);
  module_free(wide_module);
}

/* The schedule is part of what makes two kernels the same code: softmax
 * scheduled for sse4 and for avx2 compiles apart, and alike when both are
 * scheduled for the same level. */
TEST(kernels_scheduled_apart_are_not_the_same_code) {
  Module *m1 = NULL, *m2 = NULL;
  Kernel *a = lower_text(softmax_text, &m1), *b = lower_text(softmax_text, &m2);
  if (a && b) {
    CpuFeatures sse4, avx2;
    cpu_features_for_level(&sse4, CPU_LEVEL_SSE4);
    cpu_features_for_level(&avx2, CPU_LEVEL_AVX2);
    kernel_x86_schedule(a, &sse4);
    kernel_x86_schedule(b, &avx2);
    EXPECT(!kernel_same_code(a, b), "sse4 and avx2 schedules count as the same code");
    kernel_x86_schedule(b, &sse4);
    EXPECT(kernel_same_code(a, b) && kernel_code_hash(a) == kernel_code_hash(b), "one schedule, yet not the same code");
  }
  kernel_free(a);
  kernel_free(b);
  module_free(m1);
  module_free(m2);
}

/* A maximum or minimum over rows of 256 at avx512 runs in four
 * accumulators with one NaN and zero test per row; at avx2 in its two
 * partial vectors, their NaN lanes or'ed into one register tested once
 * per row (no blends per element); both then fold their partials in a
 * tree, not in lane order, where no partial is NaN and the tree's result
 * is not a zero. Rows with NaNs of different payloads, with -0 and +0 in
 * either order, all -inf, or +inf then NaN, and an initial value that is
 * a zero of either sign, still give the bytes of sse4's loop, which
 * blends NaNs element by element and combines its partials in lane
 * order (the test reruns them in that order). */
static void set_bits(float *x, int i, uint32_t bits) { memcpy(&x[i], &bits, sizeof bits); }

/* `math` (an elementwise op, or "copy") applies to each element before the
 * reduction: exp makes the loop run vector math beside its partials. */
static void check_max_min_rows(const char *reducer, const char *init, float sign, const char *math) {
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule r\nred { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] %s(a, b) }\n"
           "fused { x = f32[8,256] parameter(0)\n i = f32[] constant(%s)\n y = f32[8,256] %s(x)\n"
           " ROOT r = f32[8] reduce(y, i), dimensions={1}, to_apply=red }\n"
           "ENTRY e { x = f32[8,256] parameter(0)\n ROOT f = f32[8] fusion(x), kind=kInput, calls=fused }\n",
           reducer, init, math);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  Module *m = NULL;
  Kernel *k = lower_text(text, &m);
  if (!k) return;
  enum { COLS = 256 };
  float x[8 * COLS], first[8];
  for (int i = 0; i < 8 * COLS; i++) x[i] = sign * (float)(-1.0 - (i * 37 % 101) * 0.25);
  x[0 * COLS + 130] = sign * 3.5f;
  set_bits(x, 1 * COLS + 5, 0x7fc00001u), set_bits(x, 1 * COLS + 100, 0xffc00002u);
  set_bits(x, 2 * COLS + 3, 0x80000000u), x[2 * COLS + 40] = 0.0f;
  /* lane 0: +0 first (column 16, accumulator 1), -0 later (64, accumulator 0) */
  x[3 * COLS + 16] = 0.0f, set_bits(x, 3 * COLS + 64, 0x80000000u);
  for (int c = 0; c < COLS; c++) x[4 * COLS + c] = -sign * INFINITY;
  x[5 * COLS + 9] = sign * INFINITY, set_bits(x, 5 * COLS + 200, 0x7fc0beefu);
  set_bits(x, 6 * COLS + 255, 0xffc01234u);
  for (int c = 0; c < COLS; c++) set_bits(x, 7 * COLS + c, c % 2 ? 0x80000000u : 0);
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
    CpuFeatures cpu;
    cpu_features_for_level(&cpu, level);
    Status st;
    status_clear(&st);
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s", st.message);
    if (!ck) continue;
    if (level == CPU_LEVEL_AVX512) {
      char *listing = listing_of(ck);
      EXPECT(strstr(listing, "4 accumulators, NaN and zero test once per row") &&
                 strstr(listing, "partials folded in a tree"),
             "%s: one accumulator, or the partials in lane order:\n%s", reducer, listing);
      free(listing);
    }
    if (level == CPU_LEVEL_AVX2) {
      char *listing = listing_of(ck);
      EXPECT(strstr(listing, "2 accumulators, NaN lanes or'ed, tested once per row") &&
                 lines_between(listing, "tested once per row", "vector sum:", "vandnps") == 0 &&
                 lines_between(listing, "tested once per row", "vector sum:", "vmovmskps") == 1 &&
                 strstr(listing, "partials folded in a tree"),
             "%s at avx2: NaN blends or a NaN test per vector, or the partials in lane order:\n%s", reducer, listing);
      free(listing);
    }
    float y[8];
    void *buffers[2] = {x, y};
    kernel_x86_run(ck, buffers, NULL);
    if (level == CPU_LEVEL_SSE4) memcpy(first, y, sizeof y);
    for (int r = 0; r < 8; r++) {
      uint32_t a, b;
      memcpy(&a, &first[r], 4), memcpy(&b, &y[r], 4);
      EXPECT(a == b, "%s row %d: %s gives %08x, sse4 %08x", reducer, r, cpu_level_name(level), b, a);
    }
    kernel_x86_free(ck);
  }
  kernel_free(k);
  module_free(m);
}

TEST(fast_max_and_min_test_for_nan_instead_of_blending_and_keep_nan_and_zero_rules) {
  check_max_min_rows("maximum", "-inf", 1.0f, "copy");
  check_max_min_rows("minimum", "inf", -1.0f, "copy");
  check_max_min_rows("maximum", "0", 1.0f, "copy");
  check_max_min_rows("maximum", "-0", 1.0f, "copy");
  check_max_min_rows("minimum", "0", -1.0f, "copy");
  check_max_min_rows("minimum", "-0", -1.0f, "copy");
  check_max_min_rows("maximum", "-inf", 1.0f, "exponential");
  check_max_min_rows("minimum", "inf", -1.0f, "exponential");
}

/* Softmax as JAX writes it, at avx512: the exp's values live in
 * registers, its constants in a pool after the code, and each sum's 16
 * partials in a register, so the row's loops write nothing to the stack:
 * per row, each sum writes its identity once before its loop (read by
 * broadcast; the max has three loops: its fast loop twice, with and
 * without the row before's division, then its exact loop), and the
 * partials go from zmm28 to the lane-order combine in registers; 4 stores
 * in all (the row pointers are 8-byte movs). 21 row accesses: the max's
 * four groups in each copy of its fast loop (8), the row before's load
 * and store beside each group of the first copy (8), one in its exact
 * loop, the sum's load and its store of exp for phase 2, and the last
 * row's load and store after the rows (phase 2 runs in the next row's
 * max loop). And the result is still mathref's exp divided by the sum of
 * the same values (--check covers the bits). */
TEST(avx512_softmax_loops_keep_their_values_in_registers) {
  CpuFeatures cpu;
  cpu_features_detect_hardware(&cpu);
  if (cpu.hardware_level < CPU_LEVEL_AVX512) return;
  Module *m = NULL;
  Kernel *k = lower_text(softmax_text, &m);
  Status st;
  status_clear(&st);
  CompiledKernel *ck = k ? kernel_x86_compile(k, &cpu, &st) : NULL;
  EXPECT(ck != NULL, "%s", st.message);
  if (ck) {
    char *text = listing_of(ck);
    int stores = stack_stores(text);
    EXPECT(stores == 4 && strstr(text, "the vector math's constants"), "%d stores of zmm or immediates to the stack:\n%s",
           stores, text);
    /* the 21 row accesses (see above) address their row's pointer (in
     * rbp or r15 through a loop, else r11 loaded from its slot) plus
     * r14, with no index arithmetic in the loops; the max's and the
     * sum's loops keep theirs in registers */
    int row_accesses = 0, in_registers = 0;
    for (const char *p = text; (p = strstr(p, "(%r11,%r14,4)")) != NULL; p++) row_accesses++;
    for (const char *p = text; (p = strstr(p, "(%rbp,%r14,4)")) != NULL; p++) in_registers++;
    for (const char *p = text; (p = strstr(p, "(%r15,%r14,4)")) != NULL; p++) in_registers++;
    row_accesses += in_registers;
    EXPECT(in_registers >= 8 + 2, "%d accesses through a row pointer in a register:\n%s", in_registers, text);
    EXPECT(row_accesses == 21, "%d accesses through a row pointer:\n%s", row_accesses, text);
    /* the partials leave zmm28 by vextractf32x4 into the combine, and the
     * accumulator stays in a register through it: no load of the
     * accumulator's slot between two of its adds: one load, two stores */
    EXPECT(strstr(text, "vextractf32x4") && lines_between(text, "into the accumulator in lane order", "# loop", "(%rsp)") == 3,
           "the lane combine goes through the stack:\n%s", text);
    /* the exp is written in place (math_lanes_fma, math_lanes_move): in
     * the sum's loop one register copy, of its input into the math's
     * registers, and one of its result into the kernel's; its NaN
     * select reads k1, with no mask widened in between */
    int copies = lines_between(text, "op %15:", "to the output, for phase 2", "vmovups %zmm");
    EXPECT(copies == 2 && lines_between(text, "op %15:", "to the output, for phase 2", "vpternlogd") == 0,
           "%d register copies in the exp:\n%s", copies, text);
    EXPECT(strstr(text, "schedule for x86 avx512: row, 3 phases") &&
               strstr(text, "phase 2 row: SIMD 16 f32 lanes, unroll 1, tail none, reads %23 back from the output") &&
               strstr(text, "loops: phase 2: 1 invariant ops once per row, 1 row pointers"),
           "no printed schedule:\n%s", text);
    free(text);
  }
  kernel_x86_free(ck);
  kernel_free(k);
  module_free(m);
}

/* At avx2 the 16 ymm registers are shared: the kernel's values take
 * ymm0..12, and exp's values and the sums' partial vectors take those
 * that no value holds while the loop runs, so the loops touch the stack
 * with no ymm load or store. What stays: each sum's two partial vectors
 * stored once after its loop (the lane-order combine reads them from
 * there), and the broadcasts of the identity and of the invariants. */
TEST(avx2_softmax_loops_keep_exp_and_partial_sums_in_registers) {
  CpuFeatures cpu;
  cpu_features_detect_hardware(&cpu);
  Status st;
  status_clear(&st);
  if (cpu.hardware_level < CPU_LEVEL_AVX2 || !cpu_features_force_level(&cpu, "avx2", &st)) return;
  Module *m = NULL;
  Kernel *k = lower_text(softmax_text, &m);
  CompiledKernel *ck = k ? kernel_x86_compile(k, &cpu, &st) : NULL;
  EXPECT(ck != NULL, "%s", st.message);
  if (ck) {
    char *text = listing_of(ck);
    int stack_moves = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
      const char *eol = strchr(line, '\n');
      size_t len = eol ? (size_t)(eol - line) : strlen(line);
      char buf[256];
      snprintf(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), line);
      stack_moves += strstr(buf, "%ymm") && strstr(buf, "(%rsp)") && !strstr(buf, "vbroadcastss");
    }
    EXPECT(stack_moves == 4, "%d ymm loads or stores of the stack (want the 2 sums' 2 partial vectors):\n%s",
           stack_moves, text);
    EXPECT(lines_between(text, "# op %15:", "# %15 to the output", "(%rsp)") == 0,
           "exp's values go through the stack:\n%s", text);
    free(text);
  }
  kernel_x86_free(ck);
  kernel_free(k);
  module_free(m);
}

/* At sse4 exp runs in 4 vector lanes too, each fused multiply-add
 * emulated exactly in two f64 lanes at a time (cvtps2pd, mulpd, the
 * round-to-odd sum, cvtpd2ps), not lane by lane through the scalar
 * code's emulation (cvtss2sd per element). The bits are mathref's
 * (test_kernel_x86_math checks every function at sse4). */
TEST(sse4_softmax_runs_exp_in_vector_lanes_with_its_fma_emulated_in_f64_lanes) {
  CpuFeatures cpu;
  cpu_features_detect_hardware(&cpu);
  Status st;
  status_clear(&st);
  if (!cpu_features_force_level(&cpu, "sse4", &st)) return;
  Module *m = NULL;
  Kernel *k = lower_text(softmax_text, &m);
  CompiledKernel *ck = k ? kernel_x86_compile(k, &cpu, &st) : NULL;
  EXPECT(ck != NULL, "%s", st.message);
  if (ck) {
    char *text = listing_of(ck);
    int lanes = lines_between(text, "# op %15:", "# %15 to the output", "cvtps2pd");
    int scalar = lines_between(text, "# op %15:", "# %15 to the output", "cvtss2sd");
    EXPECT(lanes > 0 && scalar == 0, "exp at sse4: %d cvtps2pd, %d cvtss2sd:\n%s", lanes, scalar, text);
    free(text);
  }
  kernel_x86_free(ck);
  kernel_free(k);
  module_free(m);
}

/* An LSTM's gates over rows of 53 = 2 * 16 + 16 + 5: the logistic of one
 * slice of the row times the tanh of another, plus c. At avx512 the
 * schedule interleaves two vectors per trip (unroll 2: a long dependent
 * chain of math per vector), then runs the last whole vector alone and
 * the 5 lanes left as a masked trip; below, unroll 1. Every level gives
 * sse4's bytes (the same IEEE ops per element, one vector a trip there),
 * within the math functions' rounding of kernel_eval's (whose reference
 * math differs from the vector polynomials by an ulp here and there). */
TEST(math_loops_interleave_two_vectors_at_avx512_with_kernel_evals_values) {
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  Module *m = NULL;
  Kernel *k = lower_text("HloModule t\nfused { x = f32[5,106] parameter(0)\n c = f32[5,53] parameter(1)\n"
                         " o = f32[5,53] slice(x), slice={[0:5], [0:53]}\n g = f32[5,53] slice(x), slice={[0:5], [53:106]}\n"
                         " lo = f32[5,53] logistic(o)\n tg = f32[5,53] tanh(g)\n p = f32[5,53] multiply(lo, tg)\n"
                         " ROOT s = f32[5,53] add(p, c) }\n"
                         "ENTRY e { x = f32[5,106] parameter(0)\n c = f32[5,53] parameter(1)\n"
                         " ROOT f = f32[5,53] fusion(x, c), kind=kLoop, calls=fused }\n", &m);
  if (!k) return;
  enum { IN = 5 * 106, N = 5 * 53 };
  Literal *inputs[2] = {literal_create(&k->inputs[0].shape), literal_create(&k->inputs[1].shape)};
  Literal *want = literal_create(&k->outputs[0].shape);
  float x[IN], c[N];
  for (int i = 0; i < IN; i++) x[i] = (float)(sin(i * 0.61) * 9.0), literal_set_f64(inputs[0], i, x[i]);
  x[7] = NAN, x[60] = INFINITY, x[170] = -INFINITY, x[300] = 1e-30f;
  for (int i = 0; i < IN; i++) literal_set_f64(inputs[0], i, x[i]);
  for (int i = 0; i < N; i++) c[i] = (float)(cos(i * 0.23) * 2.0), literal_set_f64(inputs[1], i, c[i]);
  Status st;
  status_clear(&st);
  EXPECT(kernel_eval(k, inputs, &want, &st), "%s", st.message);
  float expected[N], first[N];
  for (int i = 0; i < N; i++) expected[i] = (float)literal_get_f64(want, i);
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
    CpuFeatures cpu;
    cpu_features_for_level(&cpu, level);
    kernel_x86_schedule(k, &cpu);
    StrBuf sb = {0};
    print_kernel(&sb, k);
    bool interleaved = level == CPU_LEVEL_AVX512;
    EXPECT(strstr(sb.data, interleaved ? "SIMD 16 f32 lanes, unroll 2, tail masked" : ", unroll 1,") != NULL,
           "%s: schedule:\n%s", cpu_level_name(level), sb.data);
    strbuf_free(&sb);
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s", st.message);
    if (!ck) continue;
    char *text = listing_of(ck);
    bool listed = strstr(text, "two vectors interleaved") && strstr(text, "the last whole vector") &&
                  strstr(text, "masked tail, 5 lanes");
    EXPECT(interleaved ? listed : !strstr(text, "two vectors interleaved"), "%s: listing:\n%s", cpu_level_name(level), text);
    free(text);
    float y[N + 1];
    y[N] = 12345.0f;
    void *buffers[3] = {x, c, y};
    kernel_x86_run(ck, buffers, NULL);
    if (level == CPU_LEVEL_SSE4) memcpy(first, y, sizeof first);
    EXPECT(memcmp(first, y, sizeof first) == 0 && y[N] == 12345.0f, "%s gives other bytes than sse4 (one vector a trip), canary %g",
           cpu_level_name(level), y[N]);
    int wrong = 0;
    for (int i = 0; i < N; i++) {
      float w = expected[i];
      bool differs = isnan(w) ? !isnan(y[i]) : fabsf(y[i] - w) > 0x1p-22f * (1.0f + fabsf(c[i])); /* |p| <= 1, then + c */
      if (differs && wrong < 3) fprintf(stderr, "  element %d: %a, kernel_eval %a\n", i, y[i], w);
      wrong += differs;
    }
    EXPECT(wrong == 0, "%s: %d elements differ from kernel_eval's by more than its math's rounding", cpu_level_name(level), wrong);
    kernel_x86_free(ck);
  }
  literal_free(inputs[0]);
  literal_free(inputs[1]);
  literal_free(want);
  kernel_free(k);
  module_free(m);
}

int main(void) {
  RUN(long_sums_split_into_chunks_give_the_same_bytes_at_every_thread_count);
  RUN(sums_to_many_points_are_not_split);
  RUN(avx512_loop_tails_run_masked_and_write_only_their_lanes);
  RUN(avx512_softmax_loops_keep_their_values_in_registers);
  RUN(avx2_softmax_loops_keep_exp_and_partial_sums_in_registers);
  RUN(sse4_softmax_runs_exp_in_vector_lanes_with_its_fma_emulated_in_f64_lanes);
  RUN(softmax_computes_exp_once_per_element_at_every_level);
  RUN(softmax_divides_each_row_in_the_next_rows_max_loop_and_each_range_ends_divided);
  RUN(large_softmax_streams_its_output_past_the_caches_with_the_same_bytes);
  RUN(fast_max_and_min_test_for_nan_instead_of_blending_and_keep_nan_and_zero_rules);
  RUN(kernels_scheduled_apart_are_not_the_same_code);
  RUN(math_loops_interleave_two_vectors_at_avx512_with_kernel_evals_values);
  return test_summary();
}
