/* Column reductions (the reduced dims outer, the kept dim the contiguous
 * minor one) run SIMD across adjacent output points (kernel_x86_schedule.c,
 * "columns"): each lane its own accumulator, the reduced elements in the
 * scalar code's order. So every level and thread count gives kernel_eval's
 * bytes, NaNs included, and the listing's reduce loop loads vectors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/kernel_x86.h"
#include "ir.h"
#include "ir/kernel/kernel.h"
#include "opt/lower.h"
#include "../test.h"

/* The listing through a temporary file: a memstream's buffer pointer
 * makes GCC's dangling-pointer check see ghosts in the scans below. */
static char *listing_of(const CompiledKernel *ck) {
  FILE *f = tmpfile();
  if (!f) return strdup("");
  kernel_x86_print_listing(ck, f);
  long size = ftell(f);
  char *text = calloc((size_t)size + 1, 1);
  rewind(f);
  size_t got = fread(text, 1, (size_t)size, f);
  text[got] = 0;
  fclose(f);
  return text;
}

/* In the reduce loops of the listing's SIMD code (from its first reduce
 * note to its post note): vector loads from the buffers, each lane's
 * element of a strided load moved through edx, and scalar movss loads
 * from them. */
static bool count_simd_loads(const char *listing, int *vector_loads, int *lane_moves, int *scalar_loads) {
  const char *simd = strstr(listing, "# SIMD across");
  const char *loop = simd ? strstr(simd, "# reduce") : NULL;
  const char *scalar = loop ? strstr(loop, "# post") : NULL;
  if (!scalar) return false;
  for (const char *p = loop; p && p < scalar; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char line[256];
    snprintf(line, sizeof line, "%.*s", (int)(len < 255 ? len : 255), p);
    bool memory = strstr(line, "(%r") != NULL && strstr(line, "(%rsp") == NULL && strstr(line, "(%rbx)") == NULL;
    *vector_loads += memory && (strstr(line, "movups") || strstr(line, "vcvtph2ps"));
    *lane_moves += memory && strstr(line, "\tmov ") && strstr(line, "),%edx");
    *scalar_loads += memory && strstr(line, "movss") != NULL;
  }
  return true;
}

/* Inputs from a fixed generator, with NaNs, infinities and signed zeros
 * sprinkled in when `specials`. */
static void fill(Literal *l, uint64_t seed, bool specials) {
  int64_t n = shape_element_count(&l->shape);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    double v = (double)(seed >> 40) / (double)(1ull << 24) * 4.0 - 2.0;
    if (specials && i % 97 == 13) v = NAN;
    if (specials && i % 89 == 7) v = i % 2 ? INFINITY : -INFINITY;
    if (specials && i % 83 == 5) v = i % 2 ? 0.0 : -0.0;
    literal_set_f64(l, i, v);
  }
}

/* Where the column strategy must apply: never, at every level, from avx2
 * up (f16 vectors need F16C), or where the policy likes (then, where it
 * applies, the bytes must still be kernel_eval's). */
typedef enum Expect { NEVER, ALWAYS, FROM_AVX2, AT_AVX512, EITHER } Expect;

/* The text's ENTRY root lowered to one kernel, compiled at every level the
 * machine has; the schedule must be the column strategy where `expect`
 * says, and then each level and thread count must give kernel_eval's
 * bytes (else sse4's bytes at one thread). */
static void check_kernel(const char *name, const char *text, Expect expect) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), name, &st);
  EXPECT(m != NULL, "%s: %s", name, st.message);
  if (!m) return;
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL, "%s: %s", name, st.message);
  if (!k) {
    module_free(m);
    return;
  }
  Literal *in[8] = {0}, *want[8] = {0}, *first[8] = {0};
  for (int b = 0; b < k->input_count; b++) {
    in[b] = literal_create(&k->inputs[b].shape);
    fill(in[b], 777 + (uint64_t)b, true);
  }
  for (int b = 0; b < k->output_count; b++) want[b] = literal_create(&k->outputs[b].shape);
  EXPECT(kernel_eval(k, in, want, &st), "%s: %s", name, st.message);
  /* kernel_eval indexes its literals row-major; the compiled code reads
   * and writes each buffer in its layout: the same values, moved there */
  Literal *laid_in[8] = {0};
  for (int b = 0; b < k->input_count; b++) {
    laid_in[b] = literal_clone(in[b]);
    if (!shape_is_row_major(&in[b]->shape)) shape_relayout_copy(&in[b]->shape, in[b]->data, laid_in[b]->data, true);
  }
  for (int b = 0; b < k->output_count; b++) {
    if (shape_is_row_major(&want[b]->shape)) continue;
    Literal *row_major = literal_clone(want[b]);
    shape_relayout_copy(&want[b]->shape, row_major->data, want[b]->data, true);
    literal_free(row_major);
  }
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
    CpuFeatures cpu;
    cpu_features_for_level(&cpu, level);
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s at %s: %s", name, cpu_level_name(level), st.message);
    if (!ck) continue;
    char *listing = listing_of(ck);
    bool is_columns = strstr(listing, ": columns\n") || strstr(listing, ": columns, ");
    bool columns = expect == ALWAYS || (expect == FROM_AVX2 && level >= CPU_LEVEL_AVX2) ||
                   (expect == AT_AVX512 && level == CPU_LEVEL_AVX512) || (expect == EITHER && is_columns);
    EXPECT(is_columns == columns, "%s at %s: the strategy is%s columns:\n%.3000s", name, cpu_level_name(level),
           is_columns ? "" : " not", listing);
    int64_t reduced = 1;
    for (int d = 0; d < k->reduce_rank; d++) reduced *= k->reduce_dims[d];
    if (columns && is_columns && reduced > 0) { /* an empty reduce has no loop */
      int vector_loads = 0, lane_moves = 0, scalar_loads = 0;
      bool found = count_simd_loads(listing, &vector_loads, &lane_moves, &scalar_loads);
      EXPECT(found && vector_loads + lane_moves > 0 && scalar_loads == 0,
             "%s at %s: %d vector loads, %d lane moves, %d scalar movss loads from buffers in the SIMD code:\n%s",
             name, cpu_level_name(level), vector_loads, lane_moves, scalar_loads, listing);
      /* at avx512 the accumulators stay in registers across the loop */
      EXPECT(level < CPU_LEVEL_AVX512 || strstr(listing, "accumulators in zmm28.."),
             "%s at avx512: the accumulators are not in registers:\n%s", name, listing);
    }
    free(listing);
    /* no pool, pools of 1 to 3 threads, and (-1) rows in runs of 7 from
     * any row, so that groups start anywhere */
    static const int threads[] = {0, 1, 2, 3, -1};
    for (int t = 0; t < 5; t++) {
      void *buffers[16];
      Literal *out[8] = {0};
      for (int b = 0; b < k->input_count; b++) buffers[b] = laid_in[b]->data;
      for (int b = 0; b < k->output_count; b++) {
        out[b] = literal_create(&k->outputs[b].shape);
        buffers[k->input_count + b] = out[b]->data;
      }
      if (threads[t] < 0) {
        for (int64_t row = 0; row < kernel_x86_row_count(ck); row += 7)
          kernel_x86_run_rows(ck, buffers, row, kernel_x86_row_count(ck) - row < 7 ? kernel_x86_row_count(ck) - row : 7);
      } else {
        ThreadPool *pool = threads[t] ? thread_pool_create(threads[t]) : NULL;
        kernel_x86_run(ck, buffers, pool);
        thread_pool_free(pool);
      }
      for (int b = 0; b < k->output_count; b++) {
        /* columns: kernel_eval's bytes; other schedules (16 partial sums)
         * differ from it by rounding, but not across levels and threads */
        if (!first[b]) first[b] = literal_clone(out[b]);
        size_t bytes = (size_t)shape_byte_size(&out[b]->shape);
        const uint8_t *got = out[b]->data, *exp = (columns ? want[b] : first[b])->data;
        size_t same = 0;
        while (same < bytes && got[same] == exp[same]) same++;
        EXPECT(same == bytes, "%s at %s, %d threads: output %d differs from %s at byte %zu of %zu", name,
               cpu_level_name(level), threads[t], b, columns ? "kernel_eval" : "sse4's", same, bytes);
        literal_free(out[b]);
      }
    }
    kernel_x86_free(ck);
  }
  for (int b = 0; b < k->input_count; b++) literal_free(in[b]), literal_free(laid_in[b]);
  for (int b = 0; b < k->output_count; b++) literal_free(want[b]), literal_free(first[b]);
  kernel_free(k);
  module_free(m);
}

static void check_reduce(const char *reducer, const char *shape, const char *dims, const char *out_shape,
                         const char *init, Expect columns) {
  char text[1000], name[200];
  snprintf(text, sizeof text,
           "HloModule c\nf { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] %s(a, b) }\n"
           "ENTRY e { x = %s parameter(0)\n i = f32[] constant(%s)\n"
           " ROOT r = %s reduce(x, i), dimensions=%s, to_apply=f }\n",
           reducer, shape, init, out_shape, dims);
  snprintf(name, sizeof name, "%s of %s over %s", reducer, shape, dims);
  check_kernel(name, text, columns);
}

TEST(column_sums_max_and_min_give_kernel_eval_bytes_at_every_level_and_thread_count) {
  check_reduce("add", "f32[256,512]", "{0}", "f32[512]", "0", ALWAYS);
  check_reduce("maximum", "f32[37,67]", "{0}", "f32[67]", "-inf", ALWAYS);
  check_reduce("minimum", "f32[37,67]", "{0}", "f32[67]", "inf", ALWAYS);
  check_reduce("add", "f32[5,9,35]", "{0,1}", "f32[35]", "0.5", ALWAYS);
  check_reduce("add", "f32[3,7,40]", "{1}", "f32[3,40]", "0", ALWAYS);
  /* an empty reduce dim: every output is the init value */
  check_reduce("add", "f32[0,48]", "{0}", "f32[48]", "1.5", ALWAYS);
  /* too few columns for one vector at any level: stays scalar */
  check_reduce("add", "f32[40,3]", "{0}", "f32[3]", "0", NEVER);
  /* the minor dim reduced (a row reduction): not this strategy */
  check_reduce("add", "f32[64,40]", "{1}", "f32[64]", "0", NEVER);
  /* a column-major input: the kept dim is not contiguous, stays scalar */
  check_reduce("add", "f32[256,40]{0,1}", "{0}", "f32[40]", "0", NEVER);
  /* the output column-major: its minor dim is not the loop's last */
  check_reduce("add", "f32[5,16,40]", "{0}", "f32[16,40]{0,1}", "0", EITHER);
}

/* f16 elements widened to f32 and summed down the columns: vcvtph2ps
 * loads from avx2 up (sse4 has no f16 vectors: scalar). */
TEST(f16_columns_summed_in_f32) {
  static const char text[] =
      "HloModule h\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "fused { x = f16[29,40]{1,0} parameter(0)\n c = f32[29,40]{1,0} convert(x)\n zero = f32[] constant(0)\n"
      " ROOT r = f32[40]{0} reduce(c, zero), dimensions={0}, to_apply=add }\n"
      "ENTRY e { x = f16[29,40] parameter(0)\n ROOT f = f32[40] fusion(x), kind=kInput, calls=fused }\n";
  check_kernel("f16 column sum", text, FROM_AVX2);
}

/* Whether the text's ENTRY root, lowered and compiled at each level the
 * machine has, has `needle` in its listing. */
static void expect_listing(const char *name, const char *text, const char *needle, bool present) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), name, &st);
  Kernel *k = m ? lower_to_kernel(m->entry->root, &st) : NULL;
  EXPECT(k != NULL, "%s: %s", name, st.message);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  for (CpuLevel level = CPU_LEVEL_SSE4; k && level <= hardware.hardware_level; level++) {
    CpuFeatures cpu;
    cpu_features_for_level(&cpu, level);
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s at %s: %s", name, cpu_level_name(level), st.message);
    if (!ck) continue;
    char *listing = listing_of(ck);
    EXPECT((strstr(listing, needle) != NULL) == present, "%s at %s: '%s' %s the listing:\n%.1500s", name,
           cpu_level_name(level), needle, present ? "is not in" : "is in", listing);
    free(listing);
    kernel_x86_free(ck);
  }
  kernel_free(k);
  module_free(m);
}

/* The MLP training step's bias gradient: relu's backward fused with the
 * sum over the batch, a ROW kernel storing dz and the updated bias;
 * 50 columns: 3 vectors of 16 and a scalar tail at avx512. Its ROW phase
 * (dz stored) reads no accumulator: it runs in the REDUCE phase's loop,
 * one pass down the columns. */
static const char relu_backward_text[] =
      "HloModule m\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "fused { p0 = f32[50]{0} parameter(0)\n bb = f32[33,50]{1,0} broadcast(p0), dimensions={1}\n"
      " p1 = f32[33,50]{1,0} parameter(1)\n z = f32[33,50]{1,0} add(p1, bb)\n zero = f32[] constant(0)\n"
      " zs = f32[33,50]{1,0} broadcast(zero), dimensions={}\n"
      " act = pred[33,50]{1,0} compare(z, zs), direction=GT\n p2 = f32[33,50]{1,0} parameter(2)\n"
      " dz = f32[33,50]{1,0} select(act, p2, zs)\n db = f32[50]{0} reduce(dz, zero), dimensions={0}, to_apply=add\n"
      " lr = f32[] constant(0.01)\n lrb = f32[50]{0} broadcast(lr), dimensions={}\n"
      " st = f32[50]{0} multiply(db, lrb)\n nb = f32[50]{0} subtract(p0, st)\n"
      " ROOT t = (f32[33,50]{1,0}, f32[50]{0}) tuple(dz, nb) }\n"
      "ENTRY e { b = f32[50] parameter(0)\n x = f32[33,50] parameter(1)\n d = f32[33,50] parameter(2)\n"
      " ROOT f = (f32[33,50]{1,0}, f32[50]{0}) fusion(b, x, d), kind=kInput, calls=fused }\n";

TEST(relu_backward_with_bias_gradient_runs_in_columns) {
  check_kernel("relu backward + bias gradient", relu_backward_text, ALWAYS);
  expect_listing("relu backward + bias gradient", relu_backward_text, "in phase 0's loop (one pass over the rows)", true);
}


/* The MLP step's log-softmax over 10 classes: a row kernel whose rows
 * (10) are shorter than an avx512 vector, so no phase has lanes of its
 * own there; it runs 16 rows at once instead, each lane one row, its
 * elements loaded and exp stored lane by lane (16 rows apart by 10
 * floats), the max and the sum in the scalar code's order. At avx2 and
 * sse4 its row phase is a SIMD loop along the row. */
static const char log_softmax_text[] =
    "HloModule s\nmax { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b) }\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "fused { p0 = f32[10]{0} parameter(0)\n bb = f32[%d,10]{1,0} broadcast(p0), dimensions={1}\n"
    " p1 = f32[%d,10]{1,0} parameter(1)\n logits = f32[%d,10]{1,0} add(p1, bb)\n ninf = f32[] constant(-inf)\n"
    " rmax = f32[%d]{0} reduce(logits, ninf), dimensions={1}, to_apply=max\n"
    " mb = f32[%d,10]{1,0} broadcast(rmax), dimensions={0}\n sh = f32[%d,10]{1,0} subtract(logits, mb)\n"
    " e = f32[%d,10]{1,0} exponential(sh)\n zero = f32[] constant(0)\n"
    " rsum = f32[%d]{0} reduce(e, zero), dimensions={1}, to_apply=add\n lse = f32[%d]{0} log(rsum)\n"
    " ROOT t = (f32[%d]{0}, f32[%d,10]{1,0}, f32[%d]{0}, f32[%d]{0}) tuple(rmax, e, rsum, lse) }\n"
    "ENTRY e { b = f32[10] parameter(0)\n x = f32[%d,10] parameter(1)\n"
    " ROOT f = (f32[%d]{0}, f32[%d,10]{1,0}, f32[%d]{0}, f32[%d]{0}) fusion(b, x), kind=kInput, calls=fused }\n";

TEST(a_softmax_over_rows_shorter_than_a_vector_runs_16_rows_at_once) {
  /* 256 rows: whole groups; 37: two groups and 5 rows alone */
  static const int rows[] = {256, 37};
  for (int r = 0; r < 2; r++) {
    char text[3000], name[100];
    int n = rows[r];
    snprintf(text, sizeof text, log_softmax_text, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n);
    snprintf(name, sizeof name, "log-softmax of f32[%d,10]", n);
    check_kernel(name, text, AT_AVX512);
  }
}

/* A REDUCE phase that reads, of an input shaped like the ROW phase's
 * output (the same memory if donated), another element than the one the
 * ROW phase stores on the same trip (here row 32 - r, reversed): storing
 * early could change what it reads, so the ROW phase keeps its own loop. */
TEST(a_reduce_phase_reading_another_element_of_the_stored_shape_keeps_the_row_loop_apart) {
  static const char text[] =
      "HloModule r\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "fused { p = f32[33,50]{1,0} parameter(0)\n rev = f32[33,50]{1,0} reverse(p), dimensions={0}\n"
      " zero = f32[] constant(0)\n s = f32[50]{0} reduce(rev, zero), dimensions={0}, to_apply=add\n"
      " sq = f32[33,50]{1,0} multiply(p, p)\n ROOT t = (f32[33,50]{1,0}, f32[50]{0}) tuple(sq, s) }\n"
      "ENTRY e { p = f32[33,50] parameter(0)\n"
      " ROOT f = (f32[33,50]{1,0}, f32[50]{0}) fusion(p), kind=kInput, calls=fused }\n";
  check_kernel("reversed reduce beside a stored square", text, ALWAYS);
  expect_listing("reversed reduce beside a stored square", text, "loop (one pass over the rows)", false);
}

/* A ROW phase that reads what the REDUCE phase before it sums (softmax's
 * max) must wait for the whole sum: it keeps its own loop. */
TEST(a_row_phase_reading_an_accumulator_keeps_its_own_loop) {
  char text[3000];
  snprintf(text, sizeof text, log_softmax_text, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64);
  expect_listing("log-softmax of f32[64,10]", text, "loop (one pass over the rows)", false);
}

/* A strided store beside a load of an input shaped like its output (the
 * same memory if donated) that does not index the stored dim by the
 * lane: lane l's loads would read what other lanes have stored, not the
 * scalar code's order. Not the column strategy. */
TEST(a_strided_store_beside_a_transposed_read_of_a_same_shaped_input_stays_out_of_columns) {
  static const char text[] =
      "HloModule t\nmax { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b) }\n"
      "fused { x = f32[40,12]{1,0} parameter(0)\n y = f32[12,40]{1,0} parameter(1)\n"
      " yt = f32[40,12]{1,0} transpose(y), dimensions={1,0}\n ninf = f32[] constant(-inf)\n"
      " m = f32[40]{0} reduce(x, ninf), dimensions={1}, to_apply=max\n"
      " mb = f32[40,12]{1,0} broadcast(m), dimensions={0}\n d = f32[40,12]{1,0} subtract(yt, mb)\n"
      " ROOT t = (f32[40,12]{1,0}, f32[40]{0}) tuple(d, m) }\n"
      "ENTRY e { x = f32[40,12] parameter(0)\n y = f32[12,40] parameter(1)\n"
      " ROOT f = (f32[40,12]{1,0}, f32[40]{0}) fusion(x, y), kind=kInput, calls=fused }\n";
  check_kernel("a strided store and a transposed read of another shape", text, ALWAYS);
  static const char same_shape[] =
      "HloModule t\nmax { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b) }\n"
      "fused { x = f32[12,12]{1,0} parameter(0)\n"
      " xt = f32[12,12]{1,0} transpose(x), dimensions={1,0}\n ninf = f32[] constant(-inf)\n"
      " m = f32[12]{0} reduce(x, ninf), dimensions={1}, to_apply=max\n"
      " mb = f32[12,12]{1,0} broadcast(m), dimensions={0}\n d = f32[12,12]{1,0} subtract(xt, mb)\n"
      " ROOT t = (f32[12,12]{1,0}, f32[12]{0}) tuple(d, m) }\n"
      "ENTRY e { x = f32[12,12] parameter(0)\n"
      " ROOT f = (f32[12,12]{1,0}, f32[12]{0}) fusion(x), kind=kInput, calls=fused }\n";
  check_kernel("a strided store and a transposed read of a same-shaped input", same_shape, NEVER);
}

int main(void) {
  RUN(column_sums_max_and_min_give_kernel_eval_bytes_at_every_level_and_thread_count);
  RUN(relu_backward_with_bias_gradient_runs_in_columns);
  RUN(f16_columns_summed_in_f32);
  RUN(a_softmax_over_rows_shorter_than_a_vector_runs_16_rows_at_once);
  RUN(a_row_phase_reading_an_accumulator_keeps_its_own_loop);
  RUN(a_reduce_phase_reading_another_element_of_the_stored_shape_keeps_the_row_loop_apart);
  RUN(a_strided_store_beside_a_transposed_read_of_a_same_shaped_input_stays_out_of_columns);
  return test_summary();
}
