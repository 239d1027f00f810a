/* Dots and convolutions on the CPU backend (cpu_dot.c, cpu_product.c,
 * cpu_conv.c) against the reference evaluator: random dimension numbers and
 * layouts, odd sizes through the GEMM, every element type, every
 * convolution feature (stride, padding, negative padding, dilations,
 * reversal, feature and batch groups, dim_labels), and dots inside fusions.
 * Each module also runs at 1 and 2 threads, which must give the same bytes.
 * The evaluator is the oracle (executable_check: exact for integers, a
 * relative tolerance for floats). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
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

static bool buffers_same_bytes(const HostBuffer *a, const HostBuffer *b) {
  if (shape_is_tuple(&a->shape)) {
    for (int i = 0; i < a->shape.tuple_count; i++)
      if (!buffers_same_bytes(a->elements[i], b->elements[i])) return false;
    return true;
  }
  return memcmp(a->data, b->data, (size_t)shape_byte_size(&a->shape)) == 0;
}

/* Compiles text for the CPU at 1 and 2 threads, runs both on random
 * arguments from seed, and checks the result against the evaluator and the
 * two results against each other. Returns the CPU program's step count of
 * `kind` (-1 when it did not compile), for tests that check the path. */
static int check_module(const char *text, uint64_t seed, CpuStepKind kind) {
  Status st;
  Executable *e1 = compile_text(text, 1, &st);
  EXPECT(e1, "compiles: %s\n%s", st.message, text);
  if (!e1) return -1;
  Executable *e2 = compile_text(text, 2, &st);
  const Computation *entry = executable_module_to_run(e1)->entry;
  int n = 0;
  HostBuffer *args[16];
  for (int i = 0; i < entry->instruction_count && n < 16; i++) {
    const Instruction *p = entry->instructions[i];
    if (p->opcode != OP_PARAMETER) continue;
    Literal *lit = literal_create(&p->shape);
    literal_fill_random(lit, &seed);
    args[p->attrs.parameter_number] = host_buffer_adopt_literal(lit);
    n++;
  }
  HostBuffer *r1 = executable_run(e1, args, n, &st);
  EXPECT(r1, "runs: %s", st.message);
  if (r1) EXPECT(executable_check(e1, args, n, r1, &st), "matches the evaluator: %s\n%s", st.message, text);
  HostBuffer *r2 = e2 ? executable_run(e2, args, n, &st) : NULL;
  if (r1 && r2) EXPECT(buffers_same_bytes(r1, r2), "1 and 2 threads give the same bytes\n%s", text);
  const CpuProgram *p = e1->program;
  int steps = 0;
  for (int i = 0; i < p->step_count; i++) steps += p->steps[i].kind == kind;
  host_buffer_free(r1);
  host_buffer_free(r2);
  for (int i = 0; i < n; i++) host_buffer_free(args[i]);
  executable_free(e1);
  executable_free(e2);
  return steps;
}

/* ---- random dot_general ---- */

static uint64_t rng_state = 12345;
static int64_t pick(int64_t n) { return (int64_t)(literal_random_next(&rng_state) % (uint64_t)n); }

static void shuffle(int64_t *v, int n) {
  for (int i = n - 1; i > 0; i--) {
    int64_t j = pick(i + 1), t = v[i];
    v[i] = v[j];
    v[j] = t;
  }
}

/* "f32[2,3]{0,1}": dims in the order given, a random layout. */
static void shape_text(char *out, const char *type, const int64_t *dims, int rank) {
  int64_t order[8];
  for (int i = 0; i < rank; i++) order[i] = i;
  shuffle(order, rank);
  out += sprintf(out, "%s[", type);
  for (int i = 0; i < rank; i++) out += sprintf(out, "%s%lld", i ? "," : "", (long long)dims[i]);
  out += sprintf(out, "]{");
  for (int i = 0; i < rank; i++) out += sprintf(out, "%s%lld", i ? "," : "", (long long)order[i]);
  sprintf(out, "}");
}

static void list_text(char *out, const int64_t *v, int n) {
  for (int i = 0; i < n; i++) out += sprintf(out, "%s%lld", i ? "," : "", (long long)v[i]);
  *out = 0;
}

/* A dot with nb batch, nk contracting and nm, nn free dims, the operands'
 * dims in random order and every array in a random layout. */
static void random_dot_text(char *text, const char *type, const char *result_type, const int64_t *sizes) {
  int nb = (int)pick(3), nk = 1 + (int)pick(2), nm = (int)pick(3), nn = (int)pick(3);
  int64_t bsize[4], ksize[4], lhs_dims[8], rhs_dims[8], out_dims[8];
  int64_t lperm[8], rperm[8], lpos[8], rpos[8];
  int lrank = nb + nk + nm, rrank = nb + nk + nn;
  for (int i = 0; i < lrank; i++) lperm[i] = i;  /* logical dim i: batch, contracting, free */
  for (int i = 0; i < rrank; i++) rperm[i] = i;
  shuffle(lperm, lrank);
  shuffle(rperm, rrank);
  int64_t all[8];
  for (int i = 0; i < 8; i++) all[i] = sizes[pick(5)];
  for (int i = 0; i < nb; i++) bsize[i] = all[i];
  for (int i = 0; i < nk; i++) ksize[i] = all[4 + i];
  for (int i = 0; i < lrank; i++) {
    lpos[i] = lperm[i];  /* where logical dim i sits */
    lhs_dims[lperm[i]] = i < nb ? bsize[i] : i < nb + nk ? ksize[i - nb] : sizes[pick(5)];
  }
  for (int i = 0; i < rrank; i++) {
    rpos[i] = rperm[i];
    rhs_dims[rperm[i]] = i < nb ? bsize[i] : i < nb + nk ? ksize[i - nb] : sizes[pick(5)];
  }
  /* The result: batch, lhs free dims in lhs order, rhs free dims in rhs order. */
  int r = 0;
  for (int i = 0; i < nb; i++) out_dims[r++] = bsize[i];
  for (int d = 0; d < lrank; d++)
    for (int i = nb + nk; i < lrank; i++)
      if (lpos[i] == d) out_dims[r++] = lhs_dims[d];
  for (int d = 0; d < rrank; d++)
    for (int i = nb + nk; i < rrank; i++)
      if (rpos[i] == d) out_dims[r++] = rhs_dims[d];
  char ls[128], rs[128], os[128], lb[64], rb[64], lc[64], rc[64];
  shape_text(ls, type, lhs_dims, lrank);
  shape_text(rs, type, rhs_dims, rrank);
  shape_text(os, result_type, out_dims, r);
  list_text(lb, lpos, nb);
  list_text(rb, rpos, nb);
  list_text(lc, lpos + nb, nk);
  list_text(rc, rpos + nb, nk);
  sprintf(text,
          "HloModule random_dot\nENTRY main {\n  a = %s parameter(0)\n  b = %s parameter(1)\n"
          "  ROOT d = %s dot(a, b), lhs_batch_dims={%s}, rhs_batch_dims={%s}, lhs_contracting_dims={%s}, "
          "rhs_contracting_dims={%s}\n}\n",
          ls, rs, os, lb, rb, lc, rc);
}

TEST(f32_dots_with_random_dimension_numbers_and_layouts_match_the_evaluator) {
  static const int64_t sizes[5] = {1, 2, 3, 7, 17};
  char text[1024];
  for (int i = 0; i < 40; i++) {
    random_dot_text(text, "f32", "f32", sizes);
    check_module(text, (uint64_t)i, CPU_STEP_CALL);
  }
}

TEST(dots_of_every_type_with_random_dimension_numbers_match_the_evaluator) {
  static const int64_t sizes[5] = {1, 2, 3, 5, 9};
  static const char *types[][2] = {{"f64", "f64"}, {"s32", "s32"}, {"s8", "s32"}, {"u8", "u16"},  {"bf16", "f32"},
                                   {"f16", "f16"}, {"bf16", "bf16"}, {"c64", "c64"}, {"c128", "c128"}, {"f32", "f64"},
                                   {"s64", "s64"}, {"pred", "pred"}};
  char text[1024];
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (int i = 0; i < 4; i++) {
      random_dot_text(text, types[t][0], types[t][1], sizes);
      check_module(text, (uint64_t)(100 + i), CPU_STEP_CALL);
    }
}

/* Sizes around the micro-kernel's tile edges and past one K block. */
TEST(odd_sized_dots_through_the_gemm_match_the_evaluator) {
  static const int64_t mnk[][3] = {{1, 1, 1}, {7, 17, 1023}, {1023, 7, 17}, {17, 1023, 7}, {33, 65, 300}};
  char text[1024];
  for (size_t i = 0; i < sizeof mnk / sizeof mnk[0]; i++) {
    long long m = mnk[i][0], n = mnk[i][1], k = mnk[i][2];
    sprintf(text,
            "HloModule odd\nENTRY main {\n  a = f32[%lld,%lld] parameter(0)\n  b = f32[%lld,%lld] parameter(1)\n"
            "  c = f32[%lld,%lld] parameter(2)\n"
            "  d = f32[%lld,%lld] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
            "  e = f32[%lld,%lld]{0,1} dot(a, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
            "  ROOT t = (f32[%lld,%lld], f32[%lld,%lld]{0,1}) tuple(d, e)\n}\n",
            m, k, n, k, k, n, m, n, m, n, m, n, m, n);
    check_module(text, i, CPU_STEP_DOT);
  }
}

/* ---- convolutions ---- */

static const char *const conv_cases[] = {
    /* stride and padding, NHWC */
    "x = f32[2,9,8,3] parameter(0)\n  w = f32[3,3,3,5] parameter(1)\n"
    "  ROOT c = f32[2,5,4,5] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_0}, dim_labels=b01f_01io->b01f",
    /* negative padding, 1-D */
    "x = f32[1,10,2] parameter(0)\n  w = f32[3,2,4] parameter(1)\n"
    "  ROOT c = f32[1,6,4] convolution(x, w), window={size=3 pad=-1_-1}, dim_labels=b0f_0io->b0f",
    /* input (lhs) and kernel (rhs) dilation */
    "x = f32[1,5,6,2] parameter(0)\n  w = f32[2,3,2,3] parameter(1)\n"
    "  ROOT c = f32[1,10,4,3] convolution(x, w), window={size=2x3 pad=1_1x1_1 lhs_dilate=2x1 rhs_dilate=1x2}, "
    "dim_labels=b01f_01io->b01f",
    /* feature groups, NCHW, kernel first labels */
    "x = f32[2,6,7,7] parameter(0)\n  w = f32[4,3,3,3] parameter(1)\n"
    "  ROOT c = f32[2,4,5,5] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01, "
    "feature_group_count=2",
    /* depthwise */
    "x = f32[1,8,8,4] parameter(0)\n  w = f32[3,3,1,4] parameter(1)\n"
    "  ROOT c = f32[1,8,8,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
    "feature_group_count=4",
    /* batch groups (a weight gradient) */
    "x = f32[4,5,5,2] parameter(0)\n  w = f32[3,3,2,6] parameter(1)\n"
    "  ROOT c = f32[2,3,3,6] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f, "
    "batch_group_count=2",
    /* window reversal, odd labels */
    "x = f32[3,2,6] parameter(0)\n  w = f32[4,3,2] parameter(1)\n"
    "  ROOT c = f32[5,4,6] convolution(x, w), window={size=3 pad=2_2 rhs_reversal=1}, dim_labels=0fb_o0i->0fb",
    /* 3-D, integers exactly */
    "x = s32[1,4,4,4,2] parameter(0)\n  w = s32[2,2,2,2,3] parameter(1)\n"
    "  ROOT c = s32[1,3,3,3,3] convolution(x, w), window={size=2x2x2}, dim_labels=b012f_012io->b012f",
    /* f64 and a 1x1 kernel with stride */
    "x = f64[2,7,7,3] parameter(0)\n  w = f64[1,1,3,4] parameter(1)\n"
    "  ROOT c = f64[2,4,4,4] convolution(x, w), window={size=1x1 stride=2x2}, dim_labels=b01f_01io->b01f",
    /* the implicit GEMM past one K block (KC = 256), a block edge inside a tap */
    "x = f32[2,12,12,40] parameter(0)\n  w = f32[3,3,40,24] parameter(1)\n"
    "  ROOT c = f32[2,12,12,24] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
    /* bf16 operands, f32 result */
    "x = bf16[1,6,6,3] parameter(0)\n  w = bf16[3,3,3,2] parameter(1)\n"
    "  ROOT c = f32[1,4,4,2] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f",
    /* The result's positions innermost (NCHW): the product turned around,
     * positions as columns (cpu_conv.c). Same padding, panels of 32
     * positions across rows of 7 */
    "x = f32[2,5,9,7] parameter(0)\n  w = f32[6,5,3,3] parameter(1)\n"
    "  ROOT c = f32[2,6,9,7] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
    /* outer stride, inner kernel dilation, uneven padding, reversal */
    "x = f32[1,3,11,10] parameter(0)\n  w = f32[4,3,3,3] parameter(1)\n"
    "  ROOT c = f32[1,4,6,8] convolution(x, w), window={size=3x3 stride=2x1 pad=2_1x0_2 rhs_dilate=1x2 "
    "rhs_reversal=0x1}, dim_labels=bf01_oi01->bf01",
    /* inner stride and inner input dilation: element by element */
    "x = f32[2,3,6,9] parameter(0)\n  w = f32[2,3,2,3] parameter(1)\n"
    "  ROOT c = f32[2,2,7,5] convolution(x, w), window={size=2x3 stride=1x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
    "x = f32[1,2,5,6] parameter(0)\n  w = f32[3,2,3,2] parameter(1)\n"
    "  ROOT c = f32[1,3,5,12] convolution(x, w), window={size=3x2 pad=1_1x1_1 lhs_dilate=1x2}, "
    "dim_labels=bf01_oi01->bf01",
    /* 1-D with window reversal; negative inner padding */
    "x = f32[3,4,40] parameter(0)\n  w = f32[5,4,3] parameter(1)\n"
    "  ROOT c = f32[3,5,40] convolution(x, w), window={size=3 pad=1_1 rhs_reversal=1}, dim_labels=bf0_oi0->bf0",
    "x = f32[2,3,6,9] parameter(0)\n  w = f32[4,3,3,3] parameter(1)\n"
    "  ROOT c = f32[2,4,6,5] convolution(x, w), window={size=3x3 pad=1_1x-1_-1}, dim_labels=bf01_oi01->bf01",
    /* K past one block (40 x 9 = 360) with the kernel's columns uneven
     * (HWIO: gathered), an NHWC input */
    "x = f32[1,6,6,40] parameter(0)\n  w = f32[3,3,40,8] parameter(1)\n"
    "  ROOT c = f32[1,8,6,6] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->bf01",
    /* 3-D */
    "x = f32[1,2,4,5,6] parameter(0)\n  w = f32[3,2,2,2,2] parameter(1)\n"
    "  ROOT c = f32[1,3,4,5,7] convolution(x, w), window={size=2x2x2 pad=0_1x1_0x1_1}, dim_labels=bf012_oi012->bf012",
};

TEST(convolutions_with_every_window_and_group_feature_match_the_evaluator) {
  char text[1024];
  for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
    sprintf(text, "HloModule conv\nENTRY main {\n  %s\n}\n", conv_cases[i]);
    EXPECT(check_module(text, i, CPU_STEP_CALL) == 1, "case %zu is one gathered product", i);
  }
}

/* f32 convolutions of one group, stride 1, whose result holds each
 * feature's positions innermost: the direct convolution (conv_direct.c) at
 * AVX-512. Its corners: output features not a multiple of its 8-feature
 * tile, padding on one side only or wider than the window (rows of
 * positions longer than the padded input's), kernel dilation and reversal,
 * 1-D, an NHWC input and HWIO kernel, input features past one run of the
 * kernel (its partial sums added to the tile), images of several tasks, a
 * 1x1 window, a result with the feature outermost. */
static const char *const direct_conv_cases[] = {
    "x = f32[1,3,5,7] parameter(0)\n  w = f32[13,3,3,3] parameter(1)\n"
    "  ROOT c = f32[1,13,5,7] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
    "x = f32[2,5,9,8] parameter(0)\n  w = f32[8,5,3,2] parameter(1)\n"
    "  ROOT c = f32[2,8,7,9] convolution(x, w), window={size=3x2 pad=2_0x0_3 rhs_dilate=2x2 rhs_reversal=1x1}, "
    "dim_labels=bf01_oi01->bf01",
    "x = f32[2,7,100] parameter(0)\n  w = f32[5,7,4] parameter(1)\n"
    "  ROOT c = f32[2,5,98] convolution(x, w), window={size=4 pad=3_1 rhs_dilate=2}, dim_labels=bf0_oi0->bf0",
    "x = f32[2,12,12,40] parameter(0)\n  w = f32[3,3,40,9] parameter(1)\n"
    "  ROOT c = f32[2,9,12,12] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->bf01",
    "x = f32[1,3,30,31] parameter(0)\n  w = f32[9,3,5,5] parameter(1)\n"
    "  ROOT c = f32[1,9,30,31] convolution(x, w), window={size=5x5 pad=2_2x2_2}, dim_labels=bf01_oi01->bf01",
    "x = f32[1,200,6,6] parameter(0)\n  w = f32[16,200,1,1] parameter(1)\n"
    "  ROOT c = f32[1,16,6,6] convolution(x, w), window={size=1x1}, dim_labels=bf01_oi01->bf01",
    "x = f32[1,2,4,5] parameter(0)\n  w = f32[3,2,3,3] parameter(1)\n"
    "  ROOT c = f32[1,3,8,9] convolution(x, w), window={size=3x3 pad=3_3x3_3}, dim_labels=bf01_oi01->bf01",
    "x = f32[2,3,6,6] parameter(0)\n  w = f32[4,3,3,3] parameter(1)\n"
    "  ROOT c = f32[2,4,6,6]{3,2,0,1} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
    /* "same" windows read the input in place: many tiles, so that some
     * hold their column masks in k registers; dilated; 1-D. */
    "x = f32[2,5,20,24] parameter(0)\n  w = f32[11,5,3,3] parameter(1)\n"
    "  ROOT c = f32[2,11,20,24] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
    "x = f32[1,4,17,30] parameter(0)\n  w = f32[8,4,3,3] parameter(1)\n"
    "  ROOT c = f32[1,8,17,30] convolution(x, w), window={size=3x3 pad=2_2x2_2 rhs_dilate=2x2}, "
    "dim_labels=bf01_oi01->bf01",
    "x = f32[2,6,90] parameter(0)\n  w = f32[9,6,3] parameter(1)\n"
    "  ROOT c = f32[2,9,90] convolution(x, w), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0",
    /* Every tile an edge tile (the taps many rows up or down leave the
     * image), each with a kernel of its own that skips the taps outside:
     * rows of 7, 13 edge tiles sharing 5 kernels, each tile's masks its
     * own; rows of 50, more distinct edge tiles than edge kernels (the
     * rest load every mask) and more distinct masks in a tile than k
     * registers hold (the rest loaded beside their loads). */
    "x = f32[1,3,100,7] parameter(0)\n  w = f32[8,3,3,3] parameter(1)\n"
    "  ROOT c = f32[1,8,100,7] convolution(x, w), window={size=3x3 pad=40_40x1_1 rhs_dilate=40x1}, "
    "dim_labels=bf01_oi01->bf01",
    "x = f32[1,3,30,50] parameter(0)\n  w = f32[8,3,3,3] parameter(1)\n"
    "  ROOT c = f32[1,8,30,50] convolution(x, w), window={size=3x3 pad=15_15x1_1 rhs_dilate=15x1}, "
    "dim_labels=bf01_oi01->bf01",
    /* Whole tiles of whole blocks are written into the result by the
     * kernel's last run, after a first run's partial sums. */
    "x = f32[1,40,16,24] parameter(0)\n  w = f32[16,40,3,3] parameter(1)\n"
    "  ROOT c = f32[1,16,16,24] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
};

/* Compiles text at 1 thread: how many direct convolution steps its
 * program has, -1 when it does not compile, -2 below AVX-512 (where the
 * implicit GEMM runs every convolution). */
static int direct_conv_steps(const char *text) {
  Status st;
  Executable *e = compile_text(text, 1, &st);
  if (!e) return -1;
  const CpuProgram *p = e->program;
  int steps = p->cpu.level == CPU_LEVEL_AVX512 ? 0 : -2;
  for (int i = 0; steps >= 0 && i < p->step_count; i++) steps += conv_direct_step_is(&p->steps[i]);
  executable_free(e);
  return steps;
}

/* No input features: every sum is empty, so the result is zeros (the
 * random modules found the direct path storing nothing at all). One and
 * two spatial dims, features last and first. */
TEST(a_convolution_over_zero_input_features_is_all_zeros) {
  static const char *const cases[] = {
      "HloModule m\nENTRY e {\n  x = f32[2,3,0] parameter(0)\n  w = f32[3,0,7] parameter(1)\n"
      "  ROOT c = f32[2,1,7] convolution(x, w), window={size=3}, dim_labels=b0f_0io->b0f\n}\n",
      "HloModule m\nENTRY e {\n  x = f32[2,0,3] parameter(0)\n  w = f32[3,0,7] parameter(1)\n"
      "  ROOT c = f32[2,7,1] convolution(x, w), window={size=3}, dim_labels=bf0_0io->bf0\n}\n",
      "HloModule m\nENTRY e {\n  x = f32[1,0,9,9] parameter(0)\n  w = f32[16,0,3,3] parameter(1)\n"
      "  ROOT c = f32[1,16,9,9] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01\n}\n",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_module(cases[i], 60 + i, CPU_STEP_CALL);
}

TEST(direct_convolutions_with_odd_sizes_padding_and_dilation_match_the_evaluator) {
  char text[1024];
  for (size_t i = 0; i < sizeof direct_conv_cases / sizeof direct_conv_cases[0]; i++) {
    sprintf(text, "HloModule conv\nENTRY main {\n  %s\n}\n", direct_conv_cases[i]);
    EXPECT(check_module(text, 40 + i, CPU_STEP_CALL) == 1, "case %zu is one step", i);
    int direct = direct_conv_steps(text);
    EXPECT(direct == 1 || direct == -2, "case %zu runs the direct convolution at avx512 (%d steps)", i, direct);
  }
}

/* What the direct convolution leaves to the implicit GEMM: stride,
 * negative padding, input dilation, feature groups, f64, NHWC results. */
TEST(convolutions_the_direct_path_does_not_cover_take_the_implicit_gemm) {
  static const char *const cases[] = {
      "x = f32[1,3,9,9] parameter(0)\n  w = f32[4,3,3,3] parameter(1)\n"
      "  ROOT c = f32[1,4,4,4] convolution(x, w), window={size=3x3 stride=2x2}, dim_labels=bf01_oi01->bf01",
      "x = f32[1,3,9,9] parameter(0)\n  w = f32[4,3,3,3] parameter(1)\n"
      "  ROOT c = f32[1,4,7,5] convolution(x, w), window={size=3x3 pad=0_0x-1_-1}, dim_labels=bf01_oi01->bf01",
      "x = f32[1,3,5,5] parameter(0)\n  w = f32[4,3,3,3] parameter(1)\n"
      "  ROOT c = f32[1,4,7,7] convolution(x, w), window={size=3x3 lhs_dilate=2x2}, dim_labels=bf01_oi01->bf01",
      "x = f32[1,4,6,6] parameter(0)\n  w = f32[4,2,3,3] parameter(1)\n"
      "  ROOT c = f32[1,4,4,4] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=2",
      "x = f64[1,3,6,6] parameter(0)\n  w = f64[4,3,3,3] parameter(1)\n"
      "  ROOT c = f64[1,4,4,4] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01",
      "x = f32[1,6,6,3] parameter(0)\n  w = f32[3,3,3,4] parameter(1)\n"
      "  ROOT c = f32[1,6,6,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
  };
  char text[1024];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sprintf(text, "HloModule conv\nENTRY main {\n  %s\n}\n", cases[i]);
    EXPECT(check_module(text, 60 + i, CPU_STEP_CALL) == 1, "case %zu is one step", i);
    int direct = direct_conv_steps(text);
    EXPECT(direct == 0 || direct == -2, "case %zu takes the implicit GEMM (%d direct steps)", i, direct);
  }
}

/* ---- dots and convolutions inside fusions ---- */

TEST(a_loop_fusion_around_a_dot_runs_the_product_then_its_epilogue) {
  static const char text[] =
      "HloModule loop_dot\n"
      "fused {\n"
      "  x = f32[16,4] parameter(0)\n"
      "  w = f32[4] parameter(1)\n"
      "  b = f32[] parameter(2)\n"
      "  d = f32[16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  bb = f32[16] broadcast(b), dimensions={}\n"
      "  ROOT s = f32[16] add(d, bb)\n"
      "}\n"
      "ENTRY main {\n"
      "  x = f32[16,4] parameter(0)\n"
      "  w = f32[4] parameter(1)\n"
      "  b = f32[] parameter(2)\n"
      "  ROOT f = f32[16] fusion(x, w, b), kind=kLoop, calls=fused\n"
      "}\n";
  EXPECT(check_module(text, 7, CPU_STEP_KERNEL) == 1, "one epilogue kernel");
}

/* The epilogue runs on each block of rows the GEMM finishes; a wide
 * product whose columns the GEMM splits runs it after the GEMM instead. */
TEST(an_epilogue_run_per_block_of_rows_matches_the_evaluator) {
  static const long long sizes[][3] = {{700, 300, 64}, {20, 100, 2500}, {3, 5, 7}};
  char text[1024];
  for (int i = 0; i < 3; i++) {
    long long m = sizes[i][0], k = sizes[i][1], n = sizes[i][2];
    sprintf(text,
            "HloModule mlp\nENTRY main {\n  x = f32[%lld,%lld] parameter(0)\n  w = f32[%lld,%lld] parameter(1)\n"
            "  b = f32[%lld] parameter(2)\n"
            "  d = f32[%lld,%lld] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
            "  bb = f32[%lld,%lld] broadcast(b), dimensions={1}\n  s = f32[%lld,%lld] add(d, bb)\n"
            "  ROOT t = f32[%lld,%lld] tanh(s)\n}\n",
            m, k, k, n, n, m, n, m, n, m, n, m, n);
    EXPECT(check_module(text, 30 + (uint64_t)i, CPU_STEP_CALL) == 1, "one call for the dot and its epilogue");
  }
}

/* A fusion as JAX may write it: the dot reads a transpose and a scaled
 * copy computed inside the fusion, which are computed first. */
TEST(a_fused_dot_reading_values_computed_inside_its_fusion_matches_the_evaluator) {
  static const char text[] =
      "HloModule inner_operands\n"
      "fused {\n"
      "  x = f32[5,8] parameter(0)\n"
      "  w = f32[6,5] parameter(1)\n"
      "  xt = f32[8,5] transpose(x), dimensions={1,0}\n"
      "  two = f32[] constant(2)\n"
      "  twos = f32[6,5] broadcast(two), dimensions={}\n"
      "  w2 = f32[6,5] multiply(w, twos)\n"
      "  e = f32[6,5] exponential(w2)\n"
      "  d = f32[8,6] dot(xt, e), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
      "  ROOT n = f32[8,6] negate(d)\n"
      "}\n"
      "ENTRY main {\n"
      "  x = f32[5,8] parameter(0)\n"
      "  w = f32[6,5] parameter(1)\n"
      "  ROOT f = f32[8,6] fusion(x, w), kind=kOutput, calls=fused\n"
      "}\n";
  int kernels = check_module(text, 9, CPU_STEP_KERNEL);
  EXPECT(kernels >= 3, "kernels for both operands, then the epilogue: got %d kernels", kernels);
}

/* A kCustom fusion whose operand is column-major while its fused
 * parameter is row-major: the product must read the logical array (or
 * the backend refuse, located), never the bytes in the wrong order. */
TEST(a_fused_dot_whose_operand_has_another_layout_than_its_parameter_matches_or_is_refused) {
  static const char text[] =
      "HloModule custom_dot_column_major_operand\n"
      "fused_dot {\n"
      "  p0 = f32[3,4] parameter(0)\n"
      "  p1 = f32[4,5] parameter(1)\n"
      "  ROOT d = f32[3,5] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "}\n"
      "ENTRY main {\n"
      "  x = f32[3,4] parameter(0)\n"
      "  w = f32[4,5]{0,1} parameter(1)\n"
      "  ROOT f = f32[3,5] fusion(x, w), kind=kCustom, calls=fused_dot\n"
      "}\n";
  Status st;
  Executable *e = compile_text(text, 1, &st);
  if (!e) {
    EXPECT(st.code == STATUS_UNSUPPORTED && st.loc.line == 10, "a located refusal: %s", st.message);
    return;
  }
  executable_free(e);
  check_module(text, 3, CPU_STEP_KERNEL);
}

TEST(a_convolution_with_a_fused_bias_and_relu_matches_the_evaluator) {
  static const char text[] =
      "HloModule conv_relu\n"
      "ENTRY main {\n"
      "  x = f32[2,6,6,3] parameter(0)\n"
      "  w = f32[3,3,3,4] parameter(1)\n"
      "  bias = f32[4] parameter(2)\n"
      "  c = f32[2,6,6,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
      "  bb = f32[2,6,6,4] broadcast(bias), dimensions={3}\n"
      "  s = f32[2,6,6,4] add(c, bb)\n"
      "  zero = f32[] constant(0)\n"
      "  zeros = f32[2,6,6,4] broadcast(zero), dimensions={}\n"
      "  ROOT r = f32[2,6,6,4] maximum(s, zeros)\n"
      "}\n";
  EXPECT(check_module(text, 8, CPU_STEP_KERNEL) == 0, "the epilogue runs inside the convolution's product step");
  /* Few rows and many features: the GEMM splits the columns, and the
   * epilogue runs after it. */
  static const char wide[] =
      "HloModule conv_wide\n"
      "ENTRY main {\n"
      "  x = f32[1,3,3,40] parameter(0)\n"
      "  w = f32[1,1,40,3000] parameter(1)\n"
      "  c = f32[1,3,3,3000] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f\n"
      "  ROOT t = f32[1,3,3,3000] tanh(c)\n"
      "}\n";
  EXPECT(check_module(wide, 9, CPU_STEP_KERNEL) == 0, "the epilogue runs inside the wide convolution's step");
}

/* ---- taps in padding ---- */

/* HLO's convolution sums over the taps inside the input only (XLA's
 * HloEvaluator and axle's skip the others), so a weight that only ever
 * faces padding is never multiplied, and an infinite or NaN one there
 * leaves the result finite. With an input 2 rows high, padded 2 rows above
 * and none below, the 3-row window's top row meets only padding. Four
 * paths: NCHW (the direct convolution at avx512, the turned-around implicit
 * GEMM below it), NHWC (the implicit GEMM), NHWC with a bias and relu fused
 * into the GEMM, and f64 (the product outside the GEMM). */
static const char padding_taps_text[] =
    "HloModule padding_taps\n"
    "ENTRY main {\n"
    "  x = f32[2,3,2,7] parameter(0)\n"
    "  w = f32[5,3,3,3] parameter(1)\n"
    "  xh = f32[2,2,7,3] parameter(2)\n"
    "  wh = f32[3,3,3,5] parameter(3)\n"
    "  bias = f32[5] parameter(4)\n"
    "  x64 = f64[2,3,2,7] parameter(5)\n"
    "  w64 = f64[5,3,3,3] parameter(6)\n"
    "  nchw = f32[2,5,2,7] convolution(x, w), window={size=3x3 pad=2_0x1_1}, dim_labels=bf01_oi01->bf01\n"
    "  nhwc = f32[2,2,7,5] convolution(xh, wh), window={size=3x3 pad=2_0x1_1}, dim_labels=b01f_01io->b01f\n"
    "  fused = f32[2,2,7,5] convolution(xh, w), window={size=3x3 pad=2_0x1_1}, dim_labels=b01f_oi01->b01f\n"
    "  biases = f32[2,2,7,5] broadcast(bias), dimensions={3}\n"
    "  biased = f32[2,2,7,5] add(fused, biases)\n"
    "  zero = f32[] constant(0)\n"
    "  zeros = f32[2,2,7,5] broadcast(zero), dimensions={}\n"
    "  relu = f32[2,2,7,5] maximum(biased, zeros)\n"
    "  wide = f64[2,5,2,7] convolution(x64, w64), window={size=3x3 pad=2_0x1_1}, dim_labels=bf01_oi01->bf01\n"
    "  ROOT out = (f32[2,5,2,7], f32[2,2,7,5], f32[2,2,7,5], f64[2,5,2,7]) tuple(nchw, nhwc, relu, wide)\n"
    "}\n";

/* Whether every element of every leaf of b is finite. */
static bool buffer_is_finite(const HostBuffer *b) {
  if (shape_is_tuple(&b->shape)) {
    for (int i = 0; i < b->shape.tuple_count; i++)
      if (!buffer_is_finite(b->elements[i])) return false;
    return true;
  }
  Literal *view = host_buffer_view(b);
  bool finite = true;
  for (int64_t i = 0; i < shape_element_count(&b->shape) && finite; i++) finite = isfinite(literal_get_f64(view, i));
  literal_view_free(view);
  return finite;
}

TEST(an_infinite_or_nan_weight_facing_only_padding_leaves_the_convolution_finite_at_every_level) {
  int levels[3] = {CPU_LEVEL_AVX512, CPU_LEVEL_AVX2, CPU_LEVEL_SSE4};
  for (int l = 0; l < 3; l++) {
    Status st;
    status_clear(&st);
    HostBuffer *r[2] = {NULL, NULL};
    HostBuffer *args[7];
    Executable *e[2] = {NULL, NULL};
    for (int t = 0; t < 2; t++) {
      Module *m = parse_module(padding_taps_text, strlen(padding_taps_text), "test.hlo", &st);
      ExecutableOptions o;
      executable_options_default(&o, AXLE_BACKEND_CPU);
      o.threads = 1 + t;
      o.cpu_level = levels[l];
      e[t] = m ? executable_compile(m, &o, &st) : NULL;
      module_free(m);
      EXPECT(e[t], "level %d compiles: %s", levels[l], st.message);
    }
    if (!e[0] || !e[1]) continue;
    const Computation *entry = executable_module_to_run(e[0])->entry;
    uint64_t seed = 77;
    for (int i = 0; i < entry->instruction_count; i++) {
      const Instruction *p = entry->instructions[i];
      if (p->opcode != OP_PARAMETER) continue;
      Literal *lit = literal_create(&p->shape);
      literal_fill_random(lit, &seed);
      /* The window's top row: tap (0, tx) of w[o][c][0][tx], wh[0][tx][c][o], w64. */
      int n = p->attrs.parameter_number;
      if (n == 1 || n == 6) {
        literal_set_f64(lit, ((1 * 3 + 0) * 3 + 0) * 3 + 2, INFINITY);
        literal_set_f64(lit, ((3 * 3 + 2) * 3 + 0) * 3 + 0, -INFINITY);
        literal_set_f64(lit, ((4 * 3 + 1) * 3 + 0) * 3 + 1, NAN);
      }
      if (n == 3) {
        literal_set_f64(lit, ((0 * 3 + 2) * 3 + 0) * 5 + 1, INFINITY);
        literal_set_f64(lit, ((0 * 3 + 0) * 3 + 2) * 5 + 3, NAN);
      }
      args[n] = host_buffer_adopt_literal(lit);
    }
    for (int t = 0; t < 2; t++) {
      r[t] = executable_run(e[t], args, 7, &st);
      EXPECT(r[t], "level %d runs: %s", levels[l], st.message);
    }
    if (r[0]) {
      EXPECT(buffer_is_finite(r[0]), "level %d: every output is finite", levels[l]);
      EXPECT(executable_check(e[0], args, 7, r[0], &st), "level %d matches the evaluator: %s", levels[l], st.message);
    }
    if (r[0] && r[1]) EXPECT(buffers_same_bytes(r[0], r[1]), "level %d: 1 and 2 threads give the same bytes", levels[l]);
    for (int t = 0; t < 2; t++) {
      host_buffer_free(r[t]);
      executable_free(e[t]);
    }
    for (int i = 0; i < 7; i++) host_buffer_free(args[i]);
  }
}

/* ---- scaled-dot and ragged-dot ---- */

static const char *const variant_cases[] = {
    /* rows take their group's rhs; rows past the last group are 0 */
    "lhs = f32[9,4] parameter(0)\n  rhs = f32[3,5,4]{0,2,1} parameter(1)\n  sizes = s32[3] constant({2, 0, 5})\n"
    "  ROOT d = f32[9,5] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={2}, "
    "lhs_ragged_dims={0}, rhs_group_dims={0}",
    /* groups per batch and per row dim before the ragged one (XLA's
     * [batch, free dims before the ragged one, G]), the ragged dim second
     * of two row dims */
    "lhs = f32[2,3,6,4] parameter(0)\n  rhs = f32[2,2,4,5] parameter(1)\n"
    "  sizes = s64[2,3,2] constant({{{1, 4}, {6, 0}, {2, 2}}, {{0, 3}, {5, 1}, {3, 3}}})\n"
    "  ROOT d = f32[2,3,6,5] ragged-dot(lhs, rhs, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, "
    "lhs_contracting_dims={3}, rhs_contracting_dims={2}, lhs_ragged_dims={2}, rhs_group_dims={1}",
    /* contracting groups: partial sums, one result per group */
    "lhs = f32[3,10] parameter(0)\n  rhs = f32[10,2] parameter(1)\n  sizes = s32[3] constant({4, 1, 3})\n"
    "  ROOT d = f32[3,3,2] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
    "lhs_ragged_dims={1}",
    /* scales over blocks of both dims, a batch and a transposed rhs */
    "lhs = f32[2,4,8] parameter(0)\n  rhs = f32[2,6,8] parameter(1)\n  ls = f32[2,2,4] parameter(2)\n"
    "  rs = f32[1,3,2] parameter(3)\n"
    "  ROOT d = f32[2,4,6] scaled-dot(lhs, rhs, ls, rs), lhs_batch_dims={0}, rhs_batch_dims={0}, "
    "lhs_contracting_dims={2}, rhs_contracting_dims={2}",
};

/* canonicalize-dots reads operands in odd orders through relabels of
 * their own bytes: where the strides merge, the dot is still one GEMM
 * step (no copy, no gathered product); where they do not, the gathered
 * product; either way the evaluator's answer. */
TEST(odd_dimension_orders_stay_on_the_gemm_and_match_the_evaluator) {
  static const struct {
    const char *text;
    int gemm_steps;
  } cases[] = {
      {/* batch last, contracting first: lhs [K=6, M=4, B=3] */
       "HloModule m\nENTRY e {\n  a = f32[6,4,3] parameter(0)\n  b = f32[6,5,3] parameter(1)\n"
       "  ROOT d = f32[3,4,5] dot(a, b), lhs_batch_dims={2}, rhs_batch_dims={2}, "
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n",
       1},
      {/* two contracting dims first on lhs, last on rhs, in order */
       "HloModule m\nENTRY e {\n  a = f32[2,3,4] parameter(0)\n  b = f32[5,2,3] parameter(1)\n"
       "  ROOT d = f32[4,5] dot(a, b), lhs_contracting_dims={0,1}, rhs_contracting_dims={1,2}\n}\n",
       1},
      {/* a column-major lhs whose batch is its minor dim */
       "HloModule m\nENTRY e {\n  a = f32[3,7,9]{0,1,2} parameter(0)\n  b = f32[3,9,5] parameter(1)\n"
       "  ROOT d = f32[3,7,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
       "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}\n",
       1},
      {/* contracting pairs in reverse order: no one K stride */
       "HloModule m\nENTRY e {\n  a = f32[5,3,2,7] parameter(0)\n  b = f32[2,7,4,5] parameter(1)\n"
       "  ROOT d = f32[7,3,4] dot(a, b), lhs_batch_dims={3}, rhs_batch_dims={1}, "
       "lhs_contracting_dims={2,0}, rhs_contracting_dims={0,3}\n}\n",
       0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int steps = check_module(cases[i].text, 40 + i, CPU_STEP_DOT);
    EXPECT(steps == cases[i].gemm_steps, "case %zu: %d GEMM steps, want %d", i, steps, cases[i].gemm_steps);
  }
}

TEST(ragged_and_scaled_dots_match_the_evaluator) {
  char text[1024];
  for (size_t i = 0; i < sizeof variant_cases / sizeof variant_cases[0]; i++) {
    sprintf(text, "HloModule variant\nENTRY main {\n  %s\n}\n", variant_cases[i]);
    EXPECT(check_module(text, 20 + i, CPU_STEP_CALL) == 1, "case %zu is one gathered product", i);
  }
}

int main(void) {
  RUN(f32_dots_with_random_dimension_numbers_and_layouts_match_the_evaluator);
  RUN(dots_of_every_type_with_random_dimension_numbers_match_the_evaluator);
  RUN(odd_sized_dots_through_the_gemm_match_the_evaluator);
  RUN(convolutions_with_every_window_and_group_feature_match_the_evaluator);
  RUN(a_convolution_over_zero_input_features_is_all_zeros);
  RUN(direct_convolutions_with_odd_sizes_padding_and_dilation_match_the_evaluator);
  RUN(convolutions_the_direct_path_does_not_cover_take_the_implicit_gemm);
  RUN(a_loop_fusion_around_a_dot_runs_the_product_then_its_epilogue);
  RUN(a_fused_dot_reading_values_computed_inside_its_fusion_matches_the_evaluator);
  RUN(an_epilogue_run_per_block_of_rows_matches_the_evaluator);
  RUN(a_fused_dot_whose_operand_has_another_layout_than_its_parameter_matches_or_is_refused);
  RUN(a_convolution_with_a_fused_bias_and_relu_matches_the_evaluator);
  RUN(an_infinite_or_nan_weight_facing_only_padding_leaves_the_convolution_finite_at_every_level);
  RUN(odd_dimension_orders_stay_on_the_gemm_and_match_the_evaluator);
  RUN(ragged_and_scaled_dots_match_the_evaluator);
  return test_summary();
}
