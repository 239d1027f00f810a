/* The x86 kernel compiler against the kernel interpreter: every corpus op
 * and every fusion the optimizer makes that lowers to a kernel, and whose
 * ops and types have x86 code, is compiled at every ISA level this machine
 * has, run on random inputs, and must give kernel_eval's bytes (exactly:
 * the code runs the same IEEE operations in the same order, reductions
 * included, so no tolerance is needed; NaN matches any NaN). Rows split
 * in two halves, or run by a pool of 2 threads, give the same bytes as one
 * call. Generated pages are never writable and executable at once. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/kernel_x86.h"
#include "ir.h"
#include "ir/kernel/kernel.h"
#include "opt/lower.h"
#include "opt/opt.h"
#include "corpus_walk.h"
#include "../test.h"

/* Random operands: signed integers centred on zero (corpus_walk.h). */
static Literal *random_literal(const Shape *shape, uint64_t *state) { return corpus_random_literal(shape, state, 3); }

/* Literals hold elements in row-major logical order; kernel buffers are in
 * the shape's layout. physical[i] is where logical element i lives. */
static int64_t physical_offset(const Shape *s, int64_t logical) {
  int64_t index[AXLE_MAX_RANK], stride[AXLE_MAX_RANK], n = 1, offset = 0;
  for (int d = s->rank - 1; d >= 0; d--) index[d] = logical % s->dims[d], logical /= s->dims[d];
  for (int j = 0; j < s->rank; j++) {
    int d = s->has_layout ? s->minor_to_major[j] : s->rank - 1 - j;
    stride[d] = n;
    n *= s->dims[d];
  }
  for (int d = 0; d < s->rank; d++) offset += index[d] * stride[d];
  return offset;
}

static void *buffer_from_literal(const Literal *lit, const Shape *s) {
  size_t size = (size_t)type_byte_size(s->type);
  int64_t n = shape_element_count(s);
  char *buffer = mem_calloc((size_t)n + 1, size);
  if (size == 0 || !lit->data) return buffer;  /* a token, or an empty value: no bytes to place */
  for (int64_t i = 0; i < n; i++)
    memcpy(buffer + (size_t)physical_offset(s, i) * size, (const char *)lit->data + (size_t)i * size, size);
  return buffer;
}

/* A narrow float computed as f32 and rounded to its type: a math
 * function within 1 ulp of libm's f32 can round to the neighbouring value
 * of the narrow type, one unit of its mantissa away. */
static bool narrow_within_one_unit(ElementType t, const void *got, const void *want) {
  double a, b;
  int mantissa_bits = t == TYPE_BF16 ? 7 : 10;
  if (t == TYPE_F16 || t == TYPE_BF16) {
    uint16_t x, y;
    memcpy(&x, got, 2), memcpy(&y, want, 2);
    a = t == TYPE_F16 ? half_to_float(x) : bf16_to_float(x);
    b = t == TYPE_F16 ? half_to_float(y) : bf16_to_float(y);
  } else {
    int exponent_bits, bias;
    minifloat_layout(t, &exponent_bits, &mantissa_bits, &bias);
    a = minifloat_to_float(t, *(const uint8_t *)got);
    b = minifloat_to_float(t, *(const uint8_t *)want);
  }
  return (isnan(a) && isnan(b)) || fabs(a - b) <= ldexp(1.0, -mantissa_bits) * fabs(b);
}

/* Element i of a buffer equals element i of a literal (any NaN equals any
 * NaN); a reordered f32 sum of n terms may differ by tolerance. */
static bool element_matches(const Shape *s, const void *buffer, const Literal *lit, int64_t i, double tolerance) {
  size_t size = (size_t)type_byte_size(s->type);
  const char *got = (const char *)buffer + (size_t)physical_offset(s, i) * size;
  if (size == 0) return true;  /* a token holds nothing to compare */
  const char *want = (const char *)lit->data + (size_t)i * size;
  if (memcmp(got, want, size) == 0) return true;
  if (s->type == TYPE_F32) {
    float a, b;
    memcpy(&a, got, 4), memcpy(&b, want, 4);
    return (isnan(a) && isnan(b)) || fabs((double)a - (double)b) <= tolerance * (1.0 + fabs((double)b));
  }
  if (s->type == TYPE_F64) {
    /* a math kernel's f64 (within 2 ulp of libm's) gets 2^-44 where an
     * f32 one gets 2^-20 */
    double a, b;
    memcpy(&a, got, 8), memcpy(&b, want, 8);
    return (isnan(a) && isnan(b)) || fabs(a - b) <= tolerance * 0x1p-24 * (1.0 + fabs(b));
  }
  if (tolerance > 0 && (s->type == TYPE_F16 || s->type == TYPE_BF16 || type_is_minifloat(s->type)))
    return narrow_within_one_unit(s->type, got, want);
  return false;
}

typedef struct Tally {
  int kernels, compiled, refused, wrong, split_differs, vectorized, reordered_sums, level_differs;
  struct Buffers *level_reference;  /* the first compiled level's outputs of the kernel being checked */
  bool reference_filled;            /* the first level that compiled it has filled level_reference */
  int runs_per_level[CPU_LEVEL_AVX512 + 1];
} Tally;

static ThreadPool *two_threads;

typedef struct Buffers Buffers;
struct Buffers {
  void **all;   /* inputs then outputs */
  int count;
};

static Buffers buffers_create(const Kernel *k, Literal *const *inputs) {
  Buffers b = {.count = k->input_count + k->output_count};
  b.all = mem_calloc((size_t)b.count + 1, sizeof *b.all);
  for (int i = 0; i < k->input_count; i++) b.all[i] = buffer_from_literal(inputs[i], &k->inputs[i].shape);
  for (int o = 0; o < k->output_count; o++) {
    const Shape *s = &k->outputs[o].shape;
    b.all[k->input_count + o] = mem_calloc((size_t)shape_element_count(s) + 1, (size_t)type_byte_size(s->type));
  }
  return b;
}

static void buffers_free(Buffers *b) {
  for (int i = 0; i < b->count; i++) free(b->all[i]);
  free(b->all);
}

static bool outputs_identical(const Kernel *k, const Buffers *a, const Buffers *b) {
  for (int o = 0; o < k->output_count; o++) {
    const Shape *s = &k->outputs[o].shape;
    size_t bytes = (size_t)shape_element_count(s) * (size_t)type_byte_size(s->type);
    if (memcmp(a->all[k->input_count + o], b->all[k->input_count + o], bytes) != 0) return false;
  }
  return true;
}

/* A math function (exp, sin, pow, ...): a COST_MATH op other than the
 * correctly rounded divide and sqrt. */
static bool kernel_has_math(const Kernel *k) {
  for (int i = 0; i < k->op_count; i++)
    if (k->ops[i].kop == KOP_HLO && opcode_cost(k->ops[i].op) == COST_MATH && k->ops[i].op != OP_DIVIDE &&
        k->ops[i].op != OP_SQRT)
      return true;
  return false;
}

/* One kernel at one ISA level: the compiled code against the interpreter's
 * outputs `want`, and split runs against the whole run. */
static void check_level(const Kernel *k, const CpuFeatures *cpu, Literal *const *inputs, Literal **want, Tally *t,
                        const char *where) {
  Status st;
  status_clear(&st);
  CompiledKernel *ck = kernel_x86_compile(k, cpu, &st);
  if (!ck) {
    EXPECT(st.code == STATUS_UNSUPPORTED, "%s: %s", where, st.message);
    if (cpu->level == CPU_LEVEL_SSE4) t->refused++;
    if (getenv("AXLE_TEST_VERBOSE") && cpu->level == CPU_LEVEL_SSE4) printf("refused: %s\n", st.message);
    return;
  }
  if (cpu->level == CPU_LEVEL_SSE4) t->compiled++;
  if (cpu->level == CPU_LEVEL_SSE4 && kernel_x86_lanes(ck)) t->vectorized++;
  t->runs_per_level[cpu->level]++;
  Buffers whole = buffers_create(k, inputs), halves = buffers_create(k, inputs), pooled = buffers_create(k, inputs);
  kernel_x86_run(ck, whole.all, NULL);
  int64_t rows = kernel_x86_row_count(ck);
  kernel_x86_run_rows(ck, halves.all, 0, rows / 2);
  kernel_x86_run_rows(ck, halves.all, rows / 2, rows - rows / 2);
  kernel_x86_run(ck, pooled.all, two_threads);
  bool same = outputs_identical(k, &whole, &halves) && outputs_identical(k, &whole, &pooled);
  if (!same) t->split_differs++;
  EXPECT(same, "%s (%s): rows split in two or on 2 threads give other bytes", where, cpu_level_name(cpu->level));
  /* A vectorized sum adds 16 partial sums (kernel_x86_vector.c): each
   * result is within 2^-20 * (terms) relative (plus the same absolute, for
   * sums that cancel) of the evaluator's sequential sum. A row kernel's
   * vectorized phases may hold such a sum, which its later phases use. */
  double tolerance = 0;
  if (k->kind != KERNEL_LOOP && kernel_x86_lanes(ck)) {
    if (cpu->level == CPU_LEVEL_SSE4) t->reordered_sums++;
    int64_t terms = 1;
    for (int d = 0; d < k->reduce_rank; d++) terms *= k->reduce_dims[d];
    tolerance = 0x1p-20 * (double)terms;
  }
  /* Math functions compute math_reference's bits at every level (without
   * FMA, the FMA is emulated exactly); the evaluator calls libm:
   * within 1 ulp for the function (docs/math.md), 2^-20 relative allows
   * for that ulp carried through the kernel's other ops. */
  if (kernel_has_math(k)) tolerance = fmax(tolerance, 0x1p-20);
  if (!t->reference_filled) {
    t->reference_filled = true;
    for (int o = 0; o < k->output_count; o++) {
      const Shape *s = &k->outputs[o].shape;
      memcpy(t->level_reference->all[k->input_count + o], whole.all[k->input_count + o],
             (size_t)shape_element_count(s) * (size_t)type_byte_size(s->type));
    }
  } else {
    bool same_as_sse4 = outputs_identical(k, &whole, t->level_reference);
    if (!same_as_sse4) t->level_differs++;
    EXPECT(same_as_sse4, "%s: %s gives other bytes than the first level", where, cpu_level_name(cpu->level));
  }
  for (int o = 0; o < k->output_count; o++) {
    const Shape *s = &k->outputs[o].shape;
    for (int64_t i = 0; i < shape_element_count(s); i++) {
      if (element_matches(s, whole.all[k->input_count + o], want[o], i, tolerance)) continue;
      t->wrong++;
      StrBuf sb = {0};
      print_kernel(&sb, k);
      EXPECT(false, "%s (%s): output %d element %lld differs from kernel_eval\n%s", where,
             cpu_level_name(cpu->level), o, (long long)i, sb.data);
      strbuf_free(&sb);
      if (t->wrong < 3) kernel_x86_print_listing(ck, stdout);
      break;
    }
  }
  buffers_free(&whole);
  buffers_free(&halves);
  buffers_free(&pooled);
  kernel_x86_free(ck);
}

/* What the x86 code must match bit for bit: kernel_eval of the kernel, or,
 * for a complex kernel, of its real-pair form, which is what the code runs
 * (kernel_complex.c; test_kernel_complex checks that form against the
 * evaluator, within rounding). Literals of both forms hold the same bytes. */
static bool kernel_eval_as_compiled(const Kernel *k, Literal *const *inputs, Literal **outputs, Status *st) {
  if (!kernel_has_complex(k)) return kernel_eval(k, inputs, outputs, st);
  Kernel *real = kernel_split_complex(k, st);
  if (!real) return false;
  Literal **in = mem_calloc((size_t)k->input_count + 1, sizeof *in);
  Literal **out = mem_calloc((size_t)k->output_count + 1, sizeof *out);
  for (int i = 0; i < k->input_count; i++) {
    in[i] = literal_create(&real->inputs[i].shape);
    size_t bytes = (size_t)shape_byte_size(&inputs[i]->shape);
    if (bytes) memcpy(in[i]->data, inputs[i]->data, bytes);  /* an empty value may have no data */
  }
  for (int o = 0; o < k->output_count; o++) out[o] = literal_create(&real->outputs[o].shape);
  bool ok = kernel_eval(real, in, out, st);
  for (int o = 0; o < k->output_count; o++) {
    size_t bytes = (size_t)shape_byte_size(&outputs[o]->shape);
    if (ok && bytes) memcpy(outputs[o]->data, out[o]->data, bytes);
    literal_free(out[o]);
  }
  for (int i = 0; i < k->input_count; i++) literal_free(in[i]);
  free(in);
  free(out);
  kernel_free(real);
  return ok;
}

static void check_kernel(const Kernel *k, Literal *const *operands, Tally *t, const char *where) {
  Literal **inputs = mem_calloc((size_t)k->input_count + 1, sizeof *inputs);
  for (int i = 0; i < k->input_count; i++)
    inputs[i] = k->inputs[i].constant ? (Literal *)k->inputs[i].constant : operands[i];
  Literal **want = mem_calloc((size_t)k->output_count + 1, sizeof *want);
  for (int o = 0; o < k->output_count; o++) want[o] = literal_create(&k->outputs[o].shape);
  Status st;
  status_clear(&st);
  t->kernels++;
  if (kernel_eval_as_compiled(k, inputs, want, &st)) {
    CpuFeatures hardware;
    cpu_features_detect_hardware(&hardware);
    Buffers reference = buffers_create(k, inputs);
    t->level_reference = &reference;
    t->reference_filled = false;
    for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware.hardware_level; level++) {
      CpuFeatures cpu = hardware;
      status_clear(&st);
      if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
      check_level(k, &cpu, inputs, want, t, where);
    }
    buffers_free(&reference);
    t->level_reference = NULL;
  }
  for (int o = 0; o < k->output_count; o++) literal_free(want[o]);
  free(want);
  free(inputs);
}

/* Each instruction that lowers is checked on the operand values the
 * evaluator saw. */
static void check_instruction(const Module *m, const Instruction *inst, Literal *const *operands,
                              const Literal *value, void *context) {
  (void)value;
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(inst, &st);
  if (!k) return;
  char where[300];
  snprintf(where, sizeof where, "%s: %s", m->name, inst->name);
  check_kernel(k, operands, context, where);
  kernel_free(k);
}

static void check_module(Module *m, const char *path, const Status *optimize_error, void *context) {
  (void)path;
  if (!optimize_error) entry_for_each_value(m, 7, 3, check_instruction, context);
}

static void check_corpus(bool optimized) {
  Tally t = {0};
  EXPECT(corpus_for_each(optimized, check_module, &t), "run from the repository root");
  printf("  %s: %d kernels: %d compiled (%d with a SIMD loop, %d of them reductions), %d refused (op or type without x86 "
         "code); runs sse4 %d, avx2 %d, avx512 %d; %d wrong, %d differ when split, %d differ from sse4\n",
         optimized ? "optimized corpus" : "corpus ops", t.kernels, t.compiled, t.vectorized, t.reordered_sums,
         t.refused, t.runs_per_level[CPU_LEVEL_SSE4], t.runs_per_level[CPU_LEVEL_AVX2],
         t.runs_per_level[CPU_LEVEL_AVX512], t.wrong, t.split_differs, t.level_differs);
  EXPECT(t.compiled > 100, "only %d kernels compiled", t.compiled);
}

TEST(every_supported_corpus_op_matches_kernel_eval_at_every_isa_level) { check_corpus(false); }

TEST(every_supported_fusion_matches_kernel_eval_at_every_isa_level) { check_corpus(true); }

static Module *parse_text(const char *text) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  EXPECT(m != NULL, "%s", st.message);
  return m;
}

static CompiledKernel *compile_root(const Module *m, Kernel **k, Status *st) {
  *k = lower_to_kernel(m->entry->root, st);
  if (!*k) return NULL;
  CpuFeatures cpu;
  cpu_features_detect_hardware(&cpu);
  return kernel_x86_compile(*k, &cpu, st);
}

TEST(the_listing_heads_each_block_with_its_hlo_instruction_and_jax_line) {
  Module *m = parse_text(
      "HloModule l\nENTRY e { a = f32[4,3] parameter(0)\n b = f32[4,3] parameter(1)\n"
      "  ROOT s = f32[4,3] add(a, b), metadata={op_name=\"jit(f)/add\" source_file=\"f.py\" source_line=12} }\n");
  if (!m) return;
  Status st;
  status_clear(&st);
  Kernel *k = NULL;
  CompiledKernel *ck = compile_root(m, &k, &st);
  EXPECT(ck != NULL, "%s", st.message);
  if (ck) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    kernel_x86_print_listing(ck, f);
    fclose(f);
    EXPECT(strstr(text, "jit(f)/add") && strstr(text, "f.py:12") && strstr(text, "addss"), "listing:\n%s", text);
    free(text);
  }
  kernel_x86_free(ck);
  kernel_free(k);
  module_free(m);
}


/* Fills a literal with values cycled from a list (the corner cases). */
static Literal *literal_from_values(const Shape *s, const double *values, int count, int phase) {
  Literal *lit = literal_create(s);
  for (int64_t i = 0; i < shape_element_count(s); i++) {
    double v = values[(i * (phase + 1) + phase) % count];
    if (type_is_float(s->type)) literal_set_f64(lit, i, v);
    else literal_set_s64(lit, i, (int64_t)v);
  }
  return lit;
}

/* The root of a one-instruction module, on corner-case operands, at every
 * level; true when the checks ran (the kernel compiled). */
static bool check_corner_cases(const char *text, const double *values, int count, Tally *t) {
  Module *m = parse_text(text);
  if (!m) return false;
  const Instruction *root = m->entry->root;
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(root, &st);
  EXPECT(k != NULL, "%s", st.message);
  if (k) {
    Literal *operands[8];
    for (int a = 0; a < root->operand_count && a < 8; a++)
      operands[a] = literal_from_values(&root->operands[a]->shape, values, count, a);
    check_kernel(k, operands, t, root->name);
    for (int a = 0; a < root->operand_count && a < 8; a++) literal_free(operands[a]);
    kernel_free(k);
  }
  module_free(m);
  return k != NULL;
}

static const double float_corners[] = {NAN, 0.0, -0.0, INFINITY, -INFINITY, 1.5, -2.5, 3e9, -3e9, 2147483647.0,
                                       -2147483648.0, 1e-45, 0.5, -0.5, 7.0, NAN, 255.5, -129.0, 65536.0};

/* maximum/minimum propagate NaN and order -0 and +0 as the evaluator does,
 * in the SIMD loop (37 = vectors and a tail at every width) and in scalar code. */
TEST(maximum_and_minimum_propagate_nan_in_vector_and_scalar_code) {
  Tally t = {0};
  int n = (int)(sizeof float_corners / sizeof float_corners[0]);
  const char *ops[] = {"maximum", "minimum", "add", "divide", "subtract", "multiply"};
  for (int o = 0; o < 6; o++) {
    char text[400];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e { a = f32[3,37] parameter(0)\n b = f32[3,37] parameter(1)\n"
             "  ROOT r = f32[3,37] %s(a, b) }\n", ops[o]);
    check_corner_cases(text, float_corners, n, &t);
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e { a = f64[5] parameter(0)\n b = f64[5] parameter(1)\n"
             "  ROOT r = f64[5] %s(a, b) }\n", ops[o]);
    check_corner_cases(text, float_corners, n, &t);
  }
  EXPECT(t.compiled == 12 && t.vectorized == 6 && t.wrong == 0, "%d compiled, %d vectorized, %d wrong", t.compiled,
         t.vectorized, t.wrong);
}

/* Float to integer saturates at the limits and maps NaN to 0; integer
 * division by zero gives -1 and remainder by zero the dividend; compares
 * with NaN are false except ne. */
TEST(converts_divisions_and_compares_follow_the_evaluator_at_the_edges) {
  Tally t = {0};
  int n = (int)(sizeof float_corners / sizeof float_corners[0]);
  const char *converts[] = {"s32", "s8", "u8", "s64", "u32", "s16"};
  for (int c = 0; c < 6; c++) {
    char text[300];
    snprintf(text, sizeof text, "HloModule m\nENTRY e { a = f32[19] parameter(0)\n ROOT r = %s[19] convert(a) }\n",
             converts[c]);
    check_corner_cases(text, float_corners, n, &t);
  }
  static const double ints[] = {0, 1, -1, 7, -7, 2147483647.0, -2147483648.0, 3, 0, -2};
  const char *int_ops[] = {"divide", "remainder", "maximum", "minimum", "multiply", "subtract"};
  for (int o = 0; o < 6; o++) {
    char text[300];
    snprintf(text, sizeof text, "HloModule m\nENTRY e { a = s32[10] parameter(0)\n b = s32[10] parameter(1)\n"
             " ROOT r = s32[10] %s(a, b) }\n", int_ops[o]);
    check_corner_cases(text, ints, 10, &t);
  }
  const char *dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (int d = 0; d < 6; d++) {
    char text[300];
    snprintf(text, sizeof text, "HloModule m\nENTRY e { a = f32[19] parameter(0)\n b = f32[19] parameter(1)\n"
             " ROOT r = pred[19] compare(a, b), direction=%s }\n", dirs[d]);
    check_corner_cases(text, float_corners, n, &t);
  }
  const char *clamps[] = {"f32", "f64", "s32", "u8"};
  for (int c = 0; c < 4; c++) {
    char text[400];
    snprintf(text, sizeof text, "HloModule m\nENTRY e { l = %s[19] parameter(0)\n x = %s[19] parameter(1)\n"
             " h = %s[19] parameter(2)\n ROOT r = %s[19] clamp(l, x, h) }\n", clamps[c], clamps[c], clamps[c], clamps[c]);
    check_corner_cases(text, c >= 2 ? ints : float_corners, c >= 2 ? 10 : n, &t);
    snprintf(text, sizeof text, "HloModule m\nENTRY e { x = %s[19] parameter(0)\n ROOT r = %s[19] sign(x) }\n",
             clamps[c], clamps[c]);
    check_corner_cases(text, c >= 2 ? ints : float_corners, c >= 2 ? 10 : n, &t);
  }
  EXPECT(t.compiled == 26 && t.wrong == 0, "%d compiled, %d wrong", t.compiled, t.wrong);
}

/* A body with more live values than registers: 20 f32 loads and 10 s64
 * indices all live at once, so both classes spill, in the SIMD loop and in
 * the scalar tail. */
TEST(values_beyond_the_register_file_spill_and_stay_correct) {
  Kernel *k = kernel_create("spill", NULL, KERNEL_LOOP);
  k->rank = 1;
  k->dims[0] = 37;
  int64_t dims[1] = {37 + 9};
  Shape in = shape_array(TYPE_F32, 1, dims), out = shape_array(TYPE_F32, 1, k->dims);
  for (int i = 0; i < 20; i++) kernel_add_input(k, &in, NULL, NULL);
  kernel_add_output(k, &out, NULL, 0);
  KernelOp index = {.kop = KOP_INDEX, .type = TYPE_S64, .dim = 0};
  int j = kernel_add_op(k, &index), shifted[10], loaded[20];
  for (int s = 0; s < 10; s++) {
    KernelOp c = {.kop = KOP_CONSTANT, .type = TYPE_S64, .value.i = s};
    KernelOp add = {.kop = KOP_HLO, .op = OP_ADD, .type = TYPE_S64, .arg_count = 2};
    add.args[0] = j, add.args[1] = kernel_add_op(k, &c);
    shifted[s] = kernel_add_op(k, &add);
  }
  for (int i = 0; i < 20; i++) {
    KernelOp load = {.kop = KOP_LOAD, .type = TYPE_F32, .buffer = i, .arg_count = 1};
    load.args[0] = shifted[(i * 7) % 10];
    loaded[i] = kernel_add_op(k, &load);
  }
  int sum = loaded[0];
  for (int i = 1; i < 20; i++) {
    KernelOp mul = {.kop = KOP_HLO, .op = OP_MULTIPLY, .type = TYPE_F32, .arg_count = 2};
    mul.args[0] = loaded[i], mul.args[1] = loaded[19 - i];
    KernelOp add = {.kop = KOP_HLO, .op = OP_ADD, .type = TYPE_F32, .arg_count = 2};
    add.args[0] = sum, add.args[1] = kernel_add_op(k, &mul);
    sum = kernel_add_op(k, &add);
  }
  KernelOp store = {.kop = KOP_STORE, .type = TYPE_F32, .buffer = 0, .arg_count = 2};
  store.args[0] = sum, store.args[1] = j;
  kernel_add_op(k, &store);
  uint64_t state = 3;
  Literal *inputs[20];
  for (int i = 0; i < 20; i++) inputs[i] = random_literal(&in, &state);
  Tally t = {0};
  check_kernel(k, inputs, &t, "spill");
  for (int i = 0; i < 20; i++) literal_free(inputs[i]);
  kernel_free(k);
  EXPECT(t.compiled == 1 && t.vectorized == 1 && t.wrong == 0, "%d compiled, %d vectorized, %d wrong", t.compiled,
         t.vectorized, t.wrong);
}

/* Sums, maxima and minima along the innermost reduced dimension use 16
 * partial results (vectors plus a scalar tail: 1000 = 62 * 16 + 8, 37 =
 * 2 * 16 + 5, 17 = 16 + 1), with outer reduced dimensions around them;
 * every level gives the same bytes. In f32[41,17] one element in 41 is NaN,
 * so some rows hold a NaN and others do not. */
TEST(vectorized_reductions_stay_within_tolerance_and_identical_across_levels) {
  Tally t = {0};
  double values[41];
  for (int v = 0; v < 41; v++) values[v] = (v % 7 - 3) * 0.375 + v * 1e-3;
  values[40] = NAN;
  const char *shapes[][3] = {{"f32[3,1000]", "f32[3]", "{1}"}, {"f32[4,5,37]", "f32[4]", "{1,2}"},
                             {"f32[64]", "f32[]", "{0}"}, {"f32[41,17]", "f32[41]", "{1}"}};
  const char *reducers[] = {"add", "maximum", "minimum"};
  for (int r = 0; r < 3; r++) {
    for (int c = 0; c < 4; c++) {
      char text[600];
      snprintf(text, sizeof text,
               "HloModule r\nf { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] %s(a, b) }\n"
               "ENTRY e { x = %s parameter(0)\n i = f32[] parameter(1)\n"
               " ROOT r = %s reduce(x, i), dimensions=%s, to_apply=f }\n",
               reducers[r], shapes[c][0], shapes[c][1], shapes[c][2]);
      check_corner_cases(text, values, c == 3 ? 41 : 40, &t);
    }
  }
  EXPECT(t.compiled == 12 && t.reordered_sums == 12 && t.wrong == 0 && t.level_differs == 0 && t.split_differs == 0,
         "%d compiled, %d vectorized, %d wrong, %d differ across levels", t.compiled, t.reordered_sums, t.wrong,
         t.level_differs);
}

/* A row kernel walks each row three times: the max, then the sum of the
 * row less its max (reading the max), then the stores of (x - max) / sum.
 * Each phase is a SIMD loop (23 = 16 + 7 and 5 + 4 + 4: vectors and scalar
 * tails) and must match the kernel interpreter within the tolerance of
 * reordered sums, the same bytes at every level and thread count. */
TEST(row_kernels_make_one_pass_per_phase_over_each_row) {
  Tally t = {0};
  double values[23];
  for (int v = 0; v < 23; v++) values[v] = (v % 5 - 2) * 0.75 + v * 1e-2;
  for (int c = 0; c < 2; c++) {
    const char *shape = c == 0 ? "f32[7,23]" : "f32[7,5,13]", *reduced = c == 0 ? "f32[7]" : "f32[7]";
    const char *dims = c == 0 ? "{1}" : "{1,2}", *kept = "{0}";
    char text[1200];
    snprintf(text, sizeof text,
             "HloModule row\n"
             "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b) }\n"
             "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
             "fused { x = %1$s parameter(0)\n lo = f32[] constant(-inf)\n zero = f32[] constant(0)\n"
             "  m = %2$s reduce(x, lo), dimensions=%3$s, to_apply=max\n mb = %1$s broadcast(m), dimensions=%4$s\n"
             "  c = %1$s subtract(x, mb)\n s = %2$s reduce(c, zero), dimensions=%3$s, to_apply=add\n"
             "  sb = %1$s broadcast(s), dimensions=%4$s\n ROOT d = %1$s divide(c, sb) }\n"
             "ENTRY e { x = %1$s parameter(0)\n ROOT f = %1$s fusion(x), kind=kInput, calls=fused }\n",
             shape, reduced, dims, kept);
    EXPECT(check_corner_cases(text, values, 23, &t), "the row kernel did not lower");
  }
  EXPECT(t.compiled == 2 && t.vectorized == 2 && t.wrong == 0 && t.level_differs == 0 && t.split_differs == 0,
         "%d compiled, %d vectorized, %d wrong, %d differ across levels, %d differ when split", t.compiled,
         t.vectorized, t.wrong, t.level_differs, t.split_differs);
}

/* Layer normalization as one row kernel: the mean, the sum of squares of
 * the centered row, then the ROW phase with rsqrt of the variance (a
 * vector op) and per-column gamma and beta (contiguous loads of a rank-1
 * buffer). Rows of 19 (a vector and a tail at every level) and 64. */
TEST(layer_norm_row_kernels_run_their_phases_as_simd_loops) {
  Tally t = {0};
  double values[29];
  for (int v = 0; v < 29; v++) values[v] = (v % 9 - 4) * 0.5 + v * 1e-2;
  for (int c = 0; c < 2; c++) {
    int n = c == 0 ? 19 : 64;
    char text[1600];
    snprintf(text, sizeof text,
             "HloModule ln\n"
             "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
             "fused { x = f32[6,%1$d] parameter(0)\n g = f32[%1$d] parameter(1)\n b = f32[%1$d] parameter(2)\n"
             "  zero = f32[] constant(0)\n n = f32[] constant(%1$d)\n nb = f32[6] broadcast(n), dimensions={}\n"
             "  s = f32[6] reduce(x, zero), dimensions={1}, to_apply=add\n mean = f32[6] divide(s, nb)\n"
             "  mb = f32[6,%1$d] broadcast(mean), dimensions={0}\n c = f32[6,%1$d] subtract(x, mb)\n"
             "  q = f32[6,%1$d] multiply(c, c)\n v = f32[6] reduce(q, zero), dimensions={1}, to_apply=add\n"
             "  var = f32[6] divide(v, nb)\n r = f32[6] rsqrt(var)\n rb = f32[6,%1$d] broadcast(r), dimensions={0}\n"
             "  gb = f32[6,%1$d] broadcast(g), dimensions={1}\n bb = f32[6,%1$d] broadcast(b), dimensions={1}\n"
             "  y = f32[6,%1$d] multiply(c, rb)\n z = f32[6,%1$d] multiply(y, gb)\n"
             "  ROOT o = f32[6,%1$d] add(z, bb) }\n"
             "ENTRY e { x = f32[6,%1$d] parameter(0)\n g = f32[%1$d] parameter(1)\n b = f32[%1$d] parameter(2)\n"
             "  ROOT f = f32[6,%1$d] fusion(x, g, b), kind=kInput, calls=fused }\n",
             n);
    EXPECT(check_corner_cases(text, values, 29, &t), "the row kernel did not lower");
  }
  EXPECT(t.compiled == 2 && t.vectorized == 2 && t.wrong == 0 && t.level_differs == 0 && t.split_differs == 0,
         "%d compiled, %d vectorized, %d wrong, %d differ across levels, %d differ when split", t.compiled,
         t.vectorized, t.wrong, t.level_differs, t.split_differs);
}

/* Loads that are not contiguous along the innermost dimension (a
 * transpose, a reversed slice) are gathered lane by lane inside the SIMD
 * loop: their index arithmetic runs once per lane. */
TEST(strided_loads_are_gathered_lane_by_lane_in_the_simd_loop) {
  Tally t = {0};
  static const double values[] = {0.25, -1.5, 3.0, 1e-3, -7.0, 0.125, 2.5, NAN, -0.0};
  check_corner_cases("HloModule t\nENTRY e { a = f32[37,19] parameter(0)\n"
                     " ROOT t = f32[19,37] transpose(a), dimensions={1,0} }\n", values, 9, &t);
  check_corner_cases("HloModule t\nENTRY e { a = f32[5,40] parameter(0)\n b = f32[5,37] parameter(1)\n"
                     " r = f32[5,40] reverse(a), dimensions={1}\n s = f32[5,37] slice(r), slice={[0:5], [2:39]}\n"
                     " ROOT m = f32[5,37] multiply(s, b) }\n", values, 9, &t);
  EXPECT(t.compiled == 2 && t.vectorized == 2 && t.wrong == 0 && t.split_differs == 0, "%d compiled, %d vectorized, %d wrong",
         t.compiled, t.vectorized, t.wrong);
}

/* Writes the listing of m's root kernel to f; false (st set) when it does
 * not compile. */
static bool print_root_listing(const Module *m, FILE *f, Status *st) {
  Kernel *k = NULL;
  CompiledKernel *ck = compile_root(m, &k, st);
  if (ck) kernel_x86_print_listing(ck, f);
  kernel_x86_free(ck);
  kernel_free(k);
  return ck != NULL;
}

/* A loop kernel's loads and stores along its rows (slices at constant
 * offsets, a broadcast bias, outer loop indices of a rank-3 space, a
 * column-major operand, rows with and without a tail) take a row pointer
 * set once per row, and the vector loop keeps no index arithmetic: no
 * multiply by a stride. The values are kernel_eval's at every level. */
TEST(loop_kernels_address_their_rows_through_row_pointers_with_kernel_evals_values) {
  static const char *const gates =
      "HloModule g\nfused { a = f32[3,%d] parameter(0)\n b = f32[3,%d] parameter(1)\n c = f32[%d] parameter(2)\n"
      " d = f32[3,%d] parameter(3)\n s = f32[3,%d] add(a, b)\n cb = f32[3,%d] broadcast(c), dimensions={1}\n"
      " z = f32[3,%d] add(s, cb)\n zi = f32[3,%d] slice(z), slice={[0:3], [0:%d]}\n"
      " zf = f32[3,%d] slice(z), slice={[0:3], [%d:%d]}\n zo = f32[3,%d] slice(z), slice={[0:3], [%d:%d]}\n"
      " fc = f32[3,%d] multiply(zf, d)\n n = f32[3,%d] add(fc, zi)\n h = f32[3,%d] multiply(zo, n)\n"
      " ROOT r = (f32[3,%d], f32[3,%d]) tuple(h, n) }\n"
      "ENTRY e { a = f32[3,%d] parameter(0)\n b = f32[3,%d] parameter(1)\n c = f32[%d] parameter(2)\n"
      " d = f32[3,%d] parameter(3)\n ROOT f = (f32[3,%d], f32[3,%d]) fusion(a, b, c, d), kind=kLoop, calls=fused }\n";
  static const double values[] = {0.25, -1.5, 3.0, 1e-3, -7.0, 0.125, 2.5, NAN, -0.0, INFINITY, 65536.0};
  Tally t = {0};
  int tried = 0;
  for (int w = 32; w <= 37; w += 5) {   /* rows of two whole vectors of 16; rows with a tail */
    int n = 3 * w;
    char text[2000];
    snprintf(text, sizeof text, gates, n, n, n, w, n, n, n, w, w, w, w, 2 * w, w, 2 * w, n, w, w, w, w, w, n, n, n,
             w, w, w);
    tried += check_corner_cases(text, values, 11, &t);
    Module *m = parse_text(text);
    if (!m) continue;
    Status st;
    status_clear(&st);
    char *listing = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&listing, &size);
    bool compiled = print_root_listing(m, f, &st);
    fclose(f);
    EXPECT(compiled, "%s", st.message);
    char *loop = strstr(listing, "vector loop");
    EXPECT(!compiled || (strstr(listing, "row pointers, once per row") && loop), "no row pointers:\n%s", listing);
    if (loop) {
      char *end = strstr(loop, "tail");
      if (end) *end = 0;
      EXPECT(!strstr(loop, "imul"), "the vector loop multiplies an index by a stride:\n%s", loop);
    }
    free(listing);
    module_free(m);
  }
  tried += check_corner_cases("HloModule t\nENTRY e { a = f32[2,3,40] parameter(0)\n b = f32[2,3,37] parameter(1)\n"
                              " s = f32[2,3,37] slice(a), slice={[0:2], [0:3], [3:40]}\n"
                              " ROOT m = f32[2,3,37] multiply(s, b) }\n", values, 11, &t);
  tried += check_corner_cases("HloModule t\nENTRY e { a = f32[5,37]{0,1} parameter(0)\n b = f32[5,37] parameter(1)\n"
                              " ROOT m = f32[5,37] add(a, b) }\n", values, 11, &t);
  EXPECT(tried == 4 && t.compiled == 4 && t.vectorized == 4 && t.wrong == 0 && t.split_differs == 0 &&
         t.level_differs == 0, "%d tried, %d compiled, %d vectorized, %d wrong, %d differ when split, %d across levels",
         tried, t.compiled, t.vectorized, t.wrong, t.split_differs, t.level_differs);
}

/* select(compare(a, b), a, b) on f32 runs in the SIMD loop with the
 * compare as a lane mask: every direction, NaN operands included. */
TEST(float_selects_on_compares_run_as_lane_masks) {
  Tally t = {0};
  int n = (int)(sizeof float_corners / sizeof float_corners[0]);
  const char *dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (int d = 0; d < 6; d++) {
    char text[700];
    snprintf(text, sizeof text,
             "HloModule m\nfused { a = f32[3,37] parameter(0)\n b = f32[3,37] parameter(1)\n"
             " p = pred[3,37] compare(a, b), direction=%s\n ROOT r = f32[3,37] select(p, a, b) }\n"
             "ENTRY e { a = f32[3,37] parameter(0)\n b = f32[3,37] parameter(1)\n"
             " ROOT f = f32[3,37] fusion(a, b), kind=kLoop, calls=fused }\n", dirs[d]);
    check_corner_cases(text, float_corners, n, &t);
  }
  EXPECT(t.compiled == 6 && t.vectorized == 6 && t.wrong == 0, "%d compiled, %d vectorized, %d wrong", t.compiled,
         t.vectorized, t.wrong);
}

/* W^X: after everything above compiled its kernels, no mapping of this
 * process is writable and executable at once. */
TEST(generated_code_pages_are_never_writable_and_executable) {
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps) return;
  char line[512];
  int wx = 0;
  while (fgets(line, sizeof line, maps)) {
    char perms[8] = {0};
    if (sscanf(line, "%*s %7s", perms) == 1 && perms[1] == 'w' && perms[2] == 'x') wx++;
  }
  fclose(maps);
  EXPECT(wx == 0, "%d mappings are writable and executable", wx);
}

int main(void) {
  two_threads = thread_pool_create(2);
  RUN(every_supported_corpus_op_matches_kernel_eval_at_every_isa_level);
  RUN(every_supported_fusion_matches_kernel_eval_at_every_isa_level);
  RUN(the_listing_heads_each_block_with_its_hlo_instruction_and_jax_line);
  RUN(maximum_and_minimum_propagate_nan_in_vector_and_scalar_code);
  RUN(converts_divisions_and_compares_follow_the_evaluator_at_the_edges);
  RUN(values_beyond_the_register_file_spill_and_stay_correct);
  RUN(vectorized_reductions_stay_within_tolerance_and_identical_across_levels);
  RUN(row_kernels_make_one_pass_per_phase_over_each_row);
  RUN(layer_norm_row_kernels_run_their_phases_as_simd_loops);
  RUN(strided_loads_are_gathered_lane_by_lane_in_the_simd_loop);
  RUN(float_selects_on_compares_run_as_lane_masks);
  RUN(loop_kernels_address_their_rows_through_row_pointers_with_kernel_evals_values);
  RUN(generated_code_pages_are_never_writable_and_executable);
  thread_pool_free(two_threads);
  return test_summary();
}
