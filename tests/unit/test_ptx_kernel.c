/* PTX from the kernel IR, checked without a GPU.
 *
 *   - every kernel of every corpus module (each entry instruction lowered
 *     alone, and each after optimize_module, so fusions are included) that
 *     the emitter accepts is assembled by ptxas for sm_80 and sm_90a; the
 *     refusals are counted by reason and printed;
 *   - the strategy each kind of kernel gets (128-bit accesses for plain
 *     elementwise kernels, shuffles for row reductions, shared memory for
 *     long rows, a thread per output for column reductions);
 *   - refusals leave nothing behind in the module;
 *   - the PTX of one elementwise fusion and one row reduction equals the
 *     reviewed copies under tests/ptx/ (AXLE_UPDATE_PTX=1 rewrites them, for
 *     review in the diff).
 * Checks whose tool is missing print "SKIP name (why)". Run from the
 * repository root (make test does). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit_ptx/ptx_kernel.h"
#include "opt/lower.h"
#include "opt/opt.h"
#include "runtime/backend.h"
#include "runtime/executable.h"
#include "corpus_walk.h"
#include "tool_files.h"
#include "../test.h"

static char work_dir[64], ptxas[4096], fake_driver[4096];
static int skipped;

static void skip(const char *name, const char *why) {
  skipped++;
  printf("SKIP %s (%s)\n", name, why);
}

static bool ptxas_find(void) { return tool_find("ptxas", ptxas, sizeof ptxas); }

static PtxTarget target_make(int major) {
  PtxTarget t;
  Status st;
  bool ok = ptx_target_for_device(major, 0, &t, &st);
  EXPECT(ok, "%s", st.message);
  return t;
}

/* ---- the corpus ---- */

enum { MAX_REASONS = 64 };

typedef struct Tally {
  PtxBuilder b;
  int kernels, emitted, not_lowered, refused;
  char *reasons[MAX_REASONS];
  int reason_counts[MAX_REASONS];
  int reason_count;
  int strategy_counts[8];
} Tally;

static const char *const strategies[] = {"loop",        "loop.v4",      "loop.v2",   "reduce.thread",
                                         "reduce.warp", "reduce.block", "row.block", "row.thread"};

/* A refusal's reason without the kernel's name, so that like ones count together. */
static void reason_add(Tally *t, const char *message) {
  const char *colon = strncmp(message, "kernel ", 7) == 0 ? strstr(message, ": ") : NULL;
  const char *reason = colon ? colon + 2 : message;
  for (int i = 0; i < t->reason_count; i++)
    if (strcmp(t->reasons[i], reason) == 0) {
      t->reason_counts[i]++;
      return;
    }
  if (t->reason_count == MAX_REASONS) return;
  t->reasons[t->reason_count] = strdup(reason);
  t->reason_counts[t->reason_count++] = 1;
}

static void kernel_add(Tally *t, const Instruction *inst) {
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(inst, &st);
  if (!k) {
    t->not_lowered++;
    return;
  }
  t->kernels++;
  char base[128], entry[160];
  ptx_entry_name(k->name, base, sizeof base);
  snprintf(entry, sizeof entry, "k%d_%s", t->kernels, base);
  PtxKernelShape shape;
  if (ptx_kernel_emit(&t->b, k, entry, &shape, &st)) {
    t->emitted++;
    for (int s = 0; s < (int)(sizeof strategies / sizeof *strategies); s++)
      if (strcmp(shape.strategy, strategies[s]) == 0) t->strategy_counts[s]++;
  } else {
    t->refused++;
    reason_add(t, st.message);
  }
  kernel_free(k);
}

/* Every entry instruction of a corpus module that could be a kernel. */
static void module_kernels_add(Module *m, const char *path, const Status *optimize_error, void *context) {
  (void)path;
  const Computation *c = m->entry;
  for (int i = 0; !optimize_error && i < c->instruction_count; i++) {
    Opcode op = c->instructions[i]->opcode;
    if (op != OP_PARAMETER && op != OP_CONSTANT && op != OP_TUPLE && op != OP_GET_TUPLE_ELEMENT)
      kernel_add(context, c->instructions[i]);
  }
}

static void corpus_walk(Tally *t, bool optimized) {
  EXPECT(corpus_for_each(optimized, module_kernels_add, t), "run from the repository root");
}

static void tally_print(const Tally *t, const char *what) {
  printf("  %s for %s: %d kernels lowered, %d emitted, %d refused (%d ops not lowered)\n", what, t->b.target.name,
         t->kernels, t->emitted, t->refused, t->not_lowered);
  printf("    strategies:");
  for (int s = 0; s < (int)(sizeof strategies / sizeof *strategies); s++)
    printf(" %s %d%s", strategies[s], t->strategy_counts[s], s + 1 < (int)(sizeof strategies / sizeof *strategies) ? "," : "\n");
  for (int i = 0; i < t->reason_count; i++) printf("    refused %3d: %s\n", t->reason_counts[i], t->reasons[i]);
}

static void corpus_check(int major, bool optimized) {
  Tally t;
  memset(&t, 0, sizeof t);
  PtxTarget target = target_make(major);
  ptx_builder_init(&t.b, &target);
  corpus_walk(&t, optimized);
  const char *what = optimized ? "optimized corpus" : "corpus entry ops";
  tally_print(&t, what);
  /* A floor, so that a change that makes the emitter refuse most kernels
   * shows up (after fusion the corpus has fewer, larger kernels). */
  EXPECT(t.emitted >= (optimized ? 80 : 300), "only %d kernels emitted", t.emitted);
  char label[64], *log = NULL;
  snprintf(label, sizeof label, "corpus_%s_%s", optimized ? "optimized" : "ops", target.name);
  bool ok = ptxas_run(ptxas, work_dir, label, ptx_builder_text(&t.b), target.name, &log);
  EXPECT(ok, "ptxas -arch=%s failed on %s/%s.ptx (%d kernels):\n%.4000s", target.name, work_dir, label, t.emitted,
         log ? log : "");
  if (ok) printf("  ptxas -arch=%s assembled all %d kernels\n", target.name, t.emitted);
  free(log);
  for (int i = 0; i < t.reason_count; i++) free(t.reasons[i]);
  ptx_builder_free(&t.b);
}

TEST(ptxas_assembles_every_emitted_corpus_op_kernel_for_sm_80) { corpus_check(8, false); }
TEST(ptxas_assembles_every_emitted_corpus_op_kernel_for_sm_90a) { corpus_check(9, false); }
TEST(ptxas_assembles_every_emitted_optimized_corpus_kernel_for_sm_80) { corpus_check(8, true); }
TEST(ptxas_assembles_every_emitted_optimized_corpus_kernel_for_sm_90a) { corpus_check(9, true); }

/* ---- single kernels ---- */

static Module *parse_text(const char *text) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  EXPECT(m != NULL, "%s", st.message);
  return m;
}

/* The PTX of the entry's root (lowered, emitted for sm_80), or NULL with
 * the refusal in st; shape gets the strategy. */
static char *root_ptx(Module *m, int major, PtxKernelShape *shape, Status *st) {
  status_clear(st);
  Kernel *k = lower_to_kernel(m->entry->root, st);
  EXPECT(k != NULL, "%s", st->message);
  if (!k) return NULL;
  PtxBuilder b;
  PtxTarget t = target_make(major);
  ptx_builder_init(&b, &t);
  size_t header = strlen(ptx_builder_text(&b));
  char entry[160];
  ptx_entry_name(k->name, entry, sizeof entry);
  char *text = NULL;
  if (ptx_kernel_emit(&b, k, entry, shape, st)) text = strdup(ptx_builder_text(&b));
  else EXPECT(strlen(ptx_builder_text(&b)) == header, "a refused kernel left text behind:\n%s", ptx_builder_text(&b));
  ptx_builder_free(&b);
  kernel_free(k);
  return text;
}

static const char *const elementwise_fusion =
    "HloModule elementwise\n"
    "fused { x = f32[1024,256] parameter(0)\n y = f32[1024,256] parameter(1)\n z = f32[1024,256] parameter(2)\n"
    "  yz = f32[1024,256] multiply(y, z)\n ROOT s = f32[1024,256] add(x, yz) }\n"
    "ENTRY e { x = f32[1024,256] parameter(0)\n y = f32[1024,256] parameter(1)\n z = f32[1024,256] parameter(2)\n"
    "  ROOT f = f32[1024,256] fusion(x, y, z), kind=kLoop, calls=fused }\n";

static const char *const row_sum =
    "HloModule row_sum\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "ENTRY e { x = f32[64,8192] parameter(0)\n c = f32[] constant(0)\n"
    "  ROOT r = f32[64] reduce(x, c), dimensions={1}, to_apply=add }\n";

/* Checks one kernel's strategy and that its text contains each mark. */
static void expect_kernel(const char *hlo, const char *strategy, const char *const *marks, int mark_count) {
  Module *m = parse_text(hlo);
  if (!m) return;
  PtxKernelShape shape;
  Status st;
  char *text = root_ptx(m, 8, &shape, &st);
  EXPECT(text != NULL, "refused: %s", st.message);
  if (text) {
    EXPECT(strcmp(shape.strategy, strategy) == 0, "strategy %s, wanted %s", shape.strategy, strategy);
    for (int i = 0; i < mark_count; i++) EXPECT(strstr(text, marks[i]), "no '%s' in\n%s", marks[i], text);
  }
  free(text);
  module_free(m);
}

TEST(an_elementwise_fusion_over_equal_shapes_uses_128_bit_loads_and_stores_when_aligned) {
  static const char *const marks[] = {"ld.global.v4.f32", "st.global.v4.f32", "and.b64", ".maxntid 256"};
  expect_kernel(elementwise_fusion, "loop.v4", marks, 4);
}

/* A broadcast along rows (a bias) is read 128 bits at a time at the first
 * lane's index; a broadcast scalar once per vector; when the rows are not
 * a whole number of vectors, one element per thread through index
 * arithmetic. */
TEST(a_broadcast_reads_through_index_arithmetic_one_element_per_thread) {
  static const char *const vector_marks[] = {"div.u32", "rem.u32", "ld.global.v4.f32", "st.global.v4.f32"};
  expect_kernel("HloModule b\nfused { x = f32[256] parameter(0)\n y = f32[128,256] parameter(1)\n"
                "  xb = f32[128,256] broadcast(x), dimensions={1}\n ROOT s = f32[128,256] add(xb, y) }\n"
                "ENTRY e { x = f32[256] parameter(0)\n y = f32[128,256] parameter(1)\n"
                "  ROOT f = f32[128,256] fusion(x, y), kind=kLoop, calls=fused }\n",
                "loop.v4", vector_marks, 4);
  static const char *const scalar_marks[] = {"ld.global.f32", "ld.global.v4.f32", "st.global.v4.f32"};
  expect_kernel("HloModule b\nfused { x = f32[] parameter(0)\n y = f32[128,256] parameter(1)\n"
                "  xb = f32[128,256] broadcast(x), dimensions={}\n ROOT s = f32[128,256] multiply(xb, y) }\n"
                "ENTRY e { x = f32[] parameter(0)\n y = f32[128,256] parameter(1)\n"
                "  ROOT f = f32[128,256] fusion(x, y), kind=kLoop, calls=fused }\n",
                "loop.v4", scalar_marks, 3);
  static const char *const marks[] = {"div.u32", "rem.u32", "ld.global.f32"};
  expect_kernel("HloModule b\nfused { x = f32[250] parameter(0)\n y = f32[128,250] parameter(1)\n"
                "  xb = f32[128,250] broadcast(x), dimensions={1}\n ROOT s = f32[128,250] add(xb, y) }\n"
                "ENTRY e { x = f32[250] parameter(0)\n y = f32[128,250] parameter(1)\n"
                "  ROOT f = f32[128,250] fusion(x, y), kind=kLoop, calls=fused }\n",
                "loop", marks, 3);
}

TEST(a_transposed_layout_is_addressed_through_minor_to_major) {
  /* out[i, j] at physical j * 64 + i: the store's offset multiplies by 64 */
  static const char *const marks[] = {"mad.lo.s64", ", 64, "};
  expect_kernel("HloModule t\nENTRY e { x = f32[64,32]{1,0} parameter(0)\n"
                "  ROOT c = f32[64,32]{0,1} copy(x) }\n",
                "transpose.tile", marks, 2);
}

TEST(a_short_row_reduction_takes_one_warp_per_row_with_shuffles) {
  static const char *const marks[] = {"shfl.sync.down.b32", ".maxntid 32"};
  expect_kernel("HloModule r\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
                "ENTRY e { x = f32[100,1000] parameter(0)\n c = f32[] constant(0)\n"
                "  ROOT r = f32[100] reduce(x, c), dimensions={1}, to_apply=add }\n",
                "reduce.warp", marks, 2);
}

TEST(a_long_row_reduction_takes_a_block_with_shared_memory) {
  static const char *const marks[] = {"shfl.sync.down.b32", ".shared", "bar.sync 0", ".maxntid 256"};
  expect_kernel(row_sum, "reduce.block", marks, 4);
}

TEST(a_column_reduction_takes_column_tiles_through_shared_memory) {
  static const char *const marks[] = {"ld.global.f32", ".shared", "bar.sync 0", ".maxntid 256"};
  expect_kernel("HloModule c\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
                "ENTRY e { x = f32[1000,100] parameter(0)\n c = f32[] constant(0)\n"
                "  ROOT r = f32[100] reduce(x, c), dimensions={0}, to_apply=add }\n",
                "reduce.column", marks, 4);
}

TEST(a_reduction_from_a_non_identity_init_stays_sequential) {
  /* lanes starting from 1 would add it 32 times */
  static const char *const marks[] = {"add.rn.f32"};
  expect_kernel("HloModule c\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
                "ENTRY e { x = f32[8,4096] parameter(0)\n c = f32[] constant(1)\n"
                "  ROOT r = f32[8] reduce(x, c), dimensions={1}, to_apply=add }\n",
                "reduce.thread", marks, 1);
}

TEST(f16_arithmetic_is_computed_in_f32_and_rounded_after_each_op) {
  static const char *const marks[] = {"ld.global.b16", "cvt.f32.f16", "add.rn.f32", "cvt.rn.f16.f32", "st.global.b16"};
  expect_kernel("HloModule h\nENTRY e { x = f16[300] parameter(0)\n y = f16[300] parameter(1)\n"
                "  ROOT s = f16[300] add(x, y) }\n",
                "loop", marks, 5);
}

TEST(converts_between_f32_and_half_types_round_once_and_widen_exactly) {
  static const char *const marks[] = {"cvt.rn.bf16.f32", "cvt.f32.f16", "cvt.rn.f16.f32", "shl.b32"};
  expect_kernel("HloModule h\nfused { x = f32[64] parameter(0)\n b = bf16[64] convert(x)\n"
                "  y = f16[64] parameter(1)\n yf = f32[64] convert(y)\n bf = f32[64] convert(b)\n"
                "  s = f32[64] add(yf, bf)\n ROOT h = f16[64] convert(s) }\n"
                "ENTRY e { x = f32[64] parameter(0)\n y = f16[64] parameter(1)\n"
                "  ROOT f = f16[64] fusion(x, y), kind=kLoop, calls=fused }\n",
                "loop", marks, 4);
}

TEST(pred_is_a_byte_in_memory) {
  static const char *const marks[] = {"ld.global.u8", "setp.ne.u16", "and.pred", "selp.u16", "st.global.u8"};
  expect_kernel("HloModule p\nENTRY e { x = pred[77] parameter(0)\n y = pred[77] parameter(1)\n"
                "  ROOT c = pred[77] and(x, y) }\n",
                "loop", marks, 5);
}

static void expect_refused(const char *hlo, const char *why) {
  Module *m = parse_text(hlo);
  if (!m) return;
  PtxKernelShape shape;
  Status st;
  char *text = root_ptx(m, 8, &shape, &st);
  EXPECT(text == NULL && st.code == STATUS_UNSUPPORTED && strstr(st.message, why), "wanted a refusal with '%s', got %s",
         why, text ? "a kernel" : st.message);
  free(text);
  module_free(m);
}

TEST(math_functions_and_unhandled_types_are_refused_leaving_nothing_behind) {
  /* f32 and f64 math has its sequences (ptx_math.c; test_ptx_math*.c) and is no longer refused */
  /* s8, s4 and c64 are handled now (ptx_int.c, ptx_complex.c); packed s4 (two to a byte) is not */
  expect_refused("HloModule x\nENTRY e { x = s4[16]{0:E(4)} parameter(0)\n ROOT y = s4[16]{0:E(4)} negate(x) }\n",
                 "s4");
}

/* The reviewed copies: a change to the emitter shows in their diff. */
static void expect_reviewed(const char *hlo, const char *path) {
  Module *m = parse_text(hlo);
  if (!m) return;
  PtxKernelShape shape;
  Status st;
  char *text = root_ptx(m, 8, &shape, &st);
  if (!text) {
    module_free(m);
    return;
  }
  char why[512];
  EXPECT(reviewed_copy_matches(path, text, why, sizeof why), "%s", why);
  free(text);
  module_free(m);
}

TEST(elementwise_fusion_ptx_matches_the_reviewed_copy) { expect_reviewed(elementwise_fusion, "tests/ptx/elementwise_fusion.ptx"); }
TEST(row_sum_ptx_matches_the_reviewed_copy) { expect_reviewed(row_sum, "tests/ptx/row_sum.ptx"); }

/* pred select and compare, integer remainder and division, clamp,
 * bitcast-convert, iota, f64 and bf16 converts, 64-bit shift counts: the
 * constructs the op table leaves to this emitter, in one kernel. */
static const char *const mixed_types =
    "HloModule mix\n"
    "fused {\n"
    "a = pred[64] parameter(0)\n"
    "b = pred[64] parameter(1)\n"
    "x = s32[64] parameter(2)\n"
    "y = s32[64] parameter(3)\n"
    "f = f32[64] parameter(4)\n"
    "d = f64[64] parameter(5)\n"
    "h = bf16[64] parameter(6)\n"
    "u = u64[64] parameter(7)\n"
    "sel = pred[64] select(a, b, a)\n"
    "cmp = pred[64] compare(a, b), direction=LT\n"
    "both = pred[64] and(sel, cmp)\n"
    "r = s32[64] remainder(x, y)\n"
    "q = s32[64] divide(x, y)\n"
    "lo = f32[] constant(-1)\n"
    "hi = f32[] constant(1)\n"
    "c = f32[64] clamp(lo, f, hi)\n"
    "bc = s32[64] bitcast-convert(c)\n"
    "s1 = s32[64] add(r, q)\n"
    "s2 = s32[64] add(s1, bc)\n"
    "i = s32[64] iota(), iota_dimension=0\n"
    "s3 = s32[64] select(both, s2, i)\n"
    "df = f32[64] convert(d)\n"
    "hf = f32[64] convert(h)\n"
    "m = f32[64] maximum(df, hf)\n"
    "ms = s32[64] convert(m)\n"
    "s4 = s32[64] add(s3, ms)\n"
    "ur = u64[64] remainder(u, u)\n"
    "us = s32[64] convert(ur)\n"
    "s5 = s32[64] shift-left(s4, us)\n"
    "dhf = s32[64] convert(h)\n"
    "ROOT out = s32[64] xor(s5, dhf)\n"
    "}\n"
    "ENTRY e {\n"
    "a = pred[64] parameter(0)\n"
    "b = pred[64] parameter(1)\n"
    "x = s32[64] parameter(2)\n"
    "y = s32[64] parameter(3)\n"
    "f = f32[64] parameter(4)\n"
    "d = f64[64] parameter(5)\n"
    "h = bf16[64] parameter(6)\n"
    "u = u64[64] parameter(7)\n"
    "ROOT o = s32[64] fusion(a, b, x, y, f, d, h, u), kind=kLoop, calls=fused\n"
    "}\n";

TEST(a_kernel_mixing_every_handled_type_assembles_for_sm_80_and_sm_90a) {
  Module *m = parse_text(mixed_types);
  if (!m) return;
  for (int major = 8; major <= 9; major++) {
    PtxKernelShape shape;
    Status st;
    char *text = root_ptx(m, major, &shape, &st);
    EXPECT(text != NULL, "refused: %s", st.message);
    char *log = NULL;
    const char *arch = major == 8 ? "sm_80" : "sm_90a";
    if (text) EXPECT(ptxas_run(ptxas, work_dir, arch, text, arch, &log),
                     "ptxas -arch=%s:\n%.3000s\n%s", arch, log ? log : "", text);
    free(log);
    free(text);
  }
  module_free(m);
}

/* A sum and a maximum of the same rows in one kernel, for each width the
 * shuffles handle (64-bit values cross as two halves; f16 in f32). */
TEST(row_reductions_with_two_accumulators_take_a_block_and_assemble_for_every_width) {
  static const char *const types[] = {"f64", "s64", "f16", "u32", "f32"};
  static const char *const lowest[] = {"-inf", "-9223372036854775808", "-inf", "0", "-inf"};
  for (int i = 0; i < 5; i++) {
    const char *t = types[i];
    char hlo[2048];
    snprintf(hlo, sizeof hlo,
             "HloModule r\nadd { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ROOT s = %s[] add(a, b) }\n"
             "mx { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ROOT s = %s[] maximum(a, b) }\n"
             "fused { x = %s[16,8192] parameter(0)\n c = %s[] constant(0)\n"
             "  s = %s[16] reduce(x, c), dimensions={1}, to_apply=add\n lo = %s[] constant(%s)\n"
             "  m = %s[16] reduce(x, lo), dimensions={1}, to_apply=mx\n ROOT t = (%s[16], %s[16]) tuple(s, m) }\n"
             "ENTRY e { x = %s[16,8192] parameter(0)\n"
             "  ROOT f = (%s[16], %s[16]) fusion(x), kind=kInput, calls=fused }\n",
             t, t, t, t, t, t, t, t, t, t, lowest[i], t, t, t, t, t, t);
    Module *m = parse_text(hlo);
    if (!m) continue;
    PtxKernelShape shape;
    Status st;
    char *text = root_ptx(m, 8, &shape, &st), *log = NULL;
    EXPECT(text != NULL, "%s: refused: %s", t, st.message);
    if (text) {
      EXPECT(strcmp(shape.strategy, "reduce.block") == 0, "%s: strategy %s", t, shape.strategy);
      char label[32];
      snprintf(label, sizeof label, "rows_%s", t);
      EXPECT(ptxas_run(ptxas, work_dir, label, text, "sm_80", &log), "%s: ptxas:\n%.3000s", t, log ? log : "");
    }
    free(log);
    free(text);
    module_free(m);
  }
}

/* softmax over rows of `width`, its sum started from `sum_init` (0 is the
 * identity; anything else keeps the reduction sequential). */
static Module *softmax_module(int width, const char *sum_init) {
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule softmax\n"
           "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b) }\n"
           "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
           "fused { x = f32[8,%d] parameter(0)\n low = f32[] constant(-inf)\n"
           "  m = f32[8] reduce(x, low), dimensions={1}, to_apply=max\n"
           "  mb = f32[8,%d] broadcast(m), dimensions={0}\n d = f32[8,%d] subtract(x, mb)\n"
           "  e = f32[8,%d] exponential(d)\n zero = f32[] constant(%s)\n"
           "  s = f32[8] reduce(e, zero), dimensions={1}, to_apply=add\n"
           "  sb = f32[8,%d] broadcast(s), dimensions={0}\n ROOT y = f32[8,%d] divide(e, sb) }\n"
           "ENTRY e { x = f32[8,%d] parameter(0)\n"
           "  ROOT f = f32[8,%d] fusion(x), kind=kInput, calls=fused }\n",
           width, width, width, width, sum_init, width, width, width, width);
  return parse_text(text);
}

TEST(a_softmax_takes_one_block_per_row_with_butterflies_and_assembles) {
  static const struct { int width; bool shared; } cases[] = {{10, false}, {4096, true}};
  for (int i = 0; i < 2; i++) {
    Module *m = softmax_module(cases[i].width, "0");
    if (!m) return;
    PtxKernelShape shape;
    Status st;
    char *text = root_ptx(m, 8, &shape, &st), *log = NULL;
    EXPECT(text != NULL, "width %d: refused: %s", cases[i].width, st.message);
    if (text) {
      EXPECT(strcmp(shape.strategy, "row.block") == 0, "width %d: strategy %s", cases[i].width, shape.strategy);
      EXPECT(shape.blocks == 8 && shape.block_threads == (cases[i].shared ? 256 : 32), "width %d: %lld blocks of %d",
             cases[i].width, (long long)shape.blocks, shape.block_threads);
      EXPECT(strstr(text, "shfl.sync.bfly.b32"), "width %d: no butterfly", cases[i].width);
      EXPECT((strstr(text, ".shared") != NULL) == cases[i].shared && (strstr(text, "bar.sync") != NULL) == cases[i].shared,
             "width %d: shared memory %s", cases[i].width, cases[i].shared ? "missing" : "used by one warp");
      EXPECT(strstr(text, "exponential on f32, math_algorithms.c"), "width %d: exp is not the math sequence",
             cases[i].width);
      char label[32];
      snprintf(label, sizeof label, "softmax_%d", cases[i].width);
      if (ptxas[0]) {
        EXPECT(ptxas_run(ptxas, work_dir, label, text, "sm_80", &log),
               "width %d: ptxas sm_80:\n%.3000s", cases[i].width, log ? log : "");
        free(log);
        log = NULL;
        char *text90 = root_ptx(m, 9, &shape, &st);
        EXPECT(text90 && ptxas_run(ptxas, work_dir, label, text90, "sm_90a", &log),
               "width %d: ptxas sm_90a:\n%.3000s", cases[i].width, log ? log : "");
        free(text90);
      }
    }
    free(log);
    free(text);
    module_free(m);
  }
}

TEST(a_row_kernel_whose_sum_starts_off_identity_takes_one_thread_per_row) {
  Module *m = softmax_module(4096, "1");
  if (!m) return;
  PtxKernelShape shape;
  Status st;
  char *text = root_ptx(m, 8, &shape, &st), *log = NULL;
  EXPECT(text != NULL, "refused: %s", st.message);
  if (text) {
    EXPECT(strcmp(shape.strategy, "row.thread") == 0, "strategy %s", shape.strategy);
    EXPECT(!strstr(text, "shfl.sync"), "a sequential row used shuffles");
    if (ptxas[0]) EXPECT(ptxas_run(ptxas, work_dir, "softmax_thread", text, "sm_80", &log),
                         "ptxas:\n%.3000s", log ? log : "");
  }
  free(log);
  free(text);
  module_free(m);
}

/* The GPU backend against the fake libcuda: compile writes every kernel's
 * PTX and loads it through the driver (its failure shows the JIT log, a
 * missing kernel names it); the launches themselves are tested in
 * test_gpu_backend.c. */
static bool gpu_compile_with(const char *fail, Status *st) {
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  unsetenv("FAKE_CUDA_DEVICES");
  if (fail) setenv("FAKE_CUDA_FAIL", fail, 1);
  else unsetenv("FAKE_CUDA_FAIL");
  Module *m = parse_text(elementwise_fusion);
  status_clear(st);
  ExecutableOptions options;
  executable_options_default(&options, AXLE_BACKEND_GPU);
  Executable *exe = m ? executable_compile(m, &options, st) : NULL;
  bool ok = exe != NULL;
  executable_free(exe);
  module_free(m);
  unsetenv("FAKE_CUDA_FAIL");
  return ok;
}

TEST(gpu_compile_loads_every_kernel_through_the_driver) {
  Status st;
  EXPECT(gpu_compile_with(NULL, &st), "%s", st.message);
  EXPECT(!gpu_compile_with("cuModuleLoadDataEx", &st) && strstr(st.message, "JIT error log"), "%s", st.message);
  EXPECT(!gpu_compile_with("cuModuleGetFunction", &st) && strstr(st.message, "looking up kernel"), "%s", st.message);
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  snprintf(work_dir, sizeof work_dir, "/tmp/axle-ptxk-XXXXXX");
  if (!mkdtemp(work_dir)) {
    printf("FAIL test_ptx_kernel_setup\n  cannot make a temporary directory\n");
    return 1;
  }
  ptxas_find();
  RUN(an_elementwise_fusion_over_equal_shapes_uses_128_bit_loads_and_stores_when_aligned);
  RUN(a_broadcast_reads_through_index_arithmetic_one_element_per_thread);
  RUN(a_transposed_layout_is_addressed_through_minor_to_major);
  RUN(a_short_row_reduction_takes_one_warp_per_row_with_shuffles);
  RUN(a_long_row_reduction_takes_a_block_with_shared_memory);
  RUN(a_column_reduction_takes_column_tiles_through_shared_memory);
  RUN(a_reduction_from_a_non_identity_init_stays_sequential);
  RUN(f16_arithmetic_is_computed_in_f32_and_rounded_after_each_op);
  RUN(converts_between_f32_and_half_types_round_once_and_widen_exactly);
  RUN(pred_is_a_byte_in_memory);
  RUN(math_functions_and_unhandled_types_are_refused_leaving_nothing_behind);
  RUN(elementwise_fusion_ptx_matches_the_reviewed_copy);
  RUN(row_sum_ptx_matches_the_reviewed_copy);
  RUN(gpu_compile_loads_every_kernel_through_the_driver);
  RUN(a_softmax_takes_one_block_per_row_with_butterflies_and_assembles);
  RUN(a_row_kernel_whose_sum_starts_off_identity_takes_one_thread_per_row);
  if (ptxas[0]) {
    RUN(a_kernel_mixing_every_handled_type_assembles_for_sm_80_and_sm_90a);
    RUN(row_reductions_with_two_accumulators_take_a_block_and_assemble_for_every_width);
    RUN(ptxas_assembles_every_emitted_corpus_op_kernel_for_sm_80);
    RUN(ptxas_assembles_every_emitted_corpus_op_kernel_for_sm_90a);
    RUN(ptxas_assembles_every_emitted_optimized_corpus_kernel_for_sm_80);
    RUN(ptxas_assembles_every_emitted_optimized_corpus_kernel_for_sm_90a);
  } else {
    skip("a_kernel_mixing_every_handled_type_assembles and ptxas_assembles_every_emitted_corpus_kernel (6 checks)", "no ptxas on PATH or in /usr/local/cuda/bin");
  }
  printf("ptx_kernel: %d passed, %d failed, %d skipped (ptxas: %s)\n", test_passed, test_failed, skipped,
         ptxas[0] ? ptxas : "absent");
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", work_dir);
  if (!getenv("AXLE_KEEP_PTX") && system(command) != 0) printf("  (could not remove %s)\n", work_dir);
  return test_summary();
}
