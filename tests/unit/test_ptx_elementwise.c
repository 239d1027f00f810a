/* Elementwise coverage of the PTX emitter: the narrow integers (ptx_int.c),
 * the minifloats (ptx_minifloat.c), reduce-precision and
 * round-nearest-afz (ptx_float_ops.c), complex kernels (ptx_complex.c),
 * sign, integer power, compare type=TOTALORDER, converts and
 * bitcast-converts between them.
 *
 * Each case is one HLO op on parameters, lowered to a kernel, written as
 * PTX for sm_80 and sm_90a (both assembled by ptxas where it is installed;
 * skipped with a message where not), run for sm_80 on the host's SIMT
 * simulator (tests/fake_cuda/ptx_simulate.h) and compared with the kernel
 * interpreter (kernel_eval, the reference evaluator's meaning) over edge
 * values: 0, -0, ±1, halves, min and max of each width, denormals, ±inf,
 * NaN, shift counts at and past the width. A binary op sees every pair of
 * them. These ops are exact, so results must match bit for bit (any NaN
 * matches any NaN); complex ones, split into real ops in another order,
 * within a few roundings. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit_ptx/ptx_kernel.h"
#include "opt/lower.h"
#include "tool_files.h"
#include "gpu_test_support.h"
#include "../test.h"

/* RUN, then the test's kernels through ptxas (counted in the test). */
#define RUN_AND_ASSEMBLE(name)                                                \
  do {                                                                        \
    test_current_name = #name;                                                \
    test_current_failed = 0;                                                  \
    name();                                                                   \
    ptxas_flush(#name);                                                       \
    if (test_current_failed) test_failed++;                                   \
    else { test_passed++; printf("PASS %s\n", #name); }                       \
    fflush(stdout);                                                           \
  } while (0)

static char work_dir[64], ptxas[4096];

static const double float_edges[] = {
    0.0,     -0.0,    1.0,     -1.0,   0.5,     -0.5,    1.5,      -2.5,     2.5,     3.75,   -7.0,
    100.25,  1e-3,    65504.0, 1e10,   -1e10,   3.4e38,  1e-40,    -1e-45,   1e-310,  448.0,  240.0,
    57344.0, 6.0,     0x1p-127, 0.1,   -0.3,    0x1.fffffep+22, 8388609.5, INFINITY, -INFINITY, NAN,
};
static const int64_t int_edges[] = {
    0, 1, -1, 2, -2, 3, 5, -3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 100, 127, -128, 255, 256,
    32767, -32768, 65535, INT32_MIN, INT32_MAX, INT64_MIN, INT64_MAX,
};
enum { FLOAT_EDGES = sizeof float_edges / sizeof *float_edges, INT_EDGES = sizeof int_edges / sizeof *int_edges };

static int edge_count(ElementType t) { return type_is_float(t) || type_is_complex(t) ? FLOAT_EDGES : INT_EDGES; }

/* Element i of operand `which` (of `arity`): a binary op's two operands
 * walk all pairs of edges; a complex value takes its parts from two. */
static void edge_set(Literal *lit, int64_t i, int which, int arity) {
  ElementType t = lit->shape.type;
  int n = edge_count(t);
  int64_t pick = which == 0 || arity == 1 ? i % n : (i / n) % n;
  if (type_is_complex(t)) {
    double re = float_edges[pick], im = float_edges[(pick * 7 + 3) % n];
    literal_set_complex(lit, i, re + im * _Complex_I);
  } else if (type_is_float(t)) {
    literal_set_f64(lit, i, float_edges[pick]);
  } else if (t == TYPE_PRED) {
    literal_set_s64(lit, i, pick & 1);
  } else {
    literal_set_s64(lit, i, int_edges[pick]);
  }
}

/* Every case's kernel also goes into one module per target, assembled by
 * ptxas once per test (ptxas_flush): hundreds of small runs would be slow. */
static PtxBuilder modules[2];
static PtxTarget targets[2];
static int module_kernels;

static void modules_reset(void) {
  Status st;
  status_clear(&st);
  for (int i = 0; i < 2; i++) {
    if (module_kernels >= 0) ptx_builder_free(&modules[i]);
    ptx_target_for_device(8 + i, 0, &targets[i], &st);
    ptx_builder_init(&modules[i], &targets[i]);
  }
  module_kernels = 0;
}

static void ptxas_flush(const char *label) {
  for (int i = 0; ptxas[0] && module_kernels > 0 && i < 2; i++) {
    char *log = NULL, name[160];
    snprintf(name, sizeof name, "%s_%s", label, targets[i].name);
    EXPECT(ptxas_run(ptxas, work_dir, name, ptx_builder_text(&modules[i]), targets[i].name, &log),
           "%s: ptxas -arch=%s:\n%.3000s", label, targets[i].name, log ? log : "");
    free(log);
  }
  modules_reset();
}

/* The root of hlo is emitted for sm_80 and sm_90a and computes on the
 * simulator what kernel_eval computes, over the edge values. */
static void case_check(const char *label, const char *hlo, double slack) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(hlo, strlen(hlo), label, &st);
  EXPECT(m != NULL, "%s: %s", label, st.message);
  if (!m) return;
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL, "%s: %s", label, st.message);
  char entry[32];
  snprintf(entry, sizeof entry, "k%d", module_kernels++);
  for (int i = 0; k && i < 2; i++) {
    PtxKernelShape shape;
    EXPECT(ptx_kernel_emit(&modules[i], k, entry, &shape, &st), "%s for %s: %s", label, targets[i].name, st.message);
  }
  PtxBuilder b;
  ptx_builder_init(&b, &targets[0]);
  PtxKernelShape shape;
  if (k && ptx_kernel_emit(&b, k, "kernel", &shape, &st)) {
    Literal *inputs[4] = {0};
    for (int i = 0; i < k->input_count && i < 4; i++) {
      /* a constant (a reduce's init) keeps its value: the emitter reads it */
      const Instruction *source = k->inputs[i].source;
      const Literal *fixed = k->inputs[i].constant ? k->inputs[i].constant
                             : source && source->opcode == OP_CONSTANT ? source->attrs.literal : NULL;
      if (fixed) {
        inputs[i] = literal_clone(fixed);
        continue;
      }
      inputs[i] = literal_create(&k->inputs[i].shape);
      int64_t n = shape_element_count(&k->inputs[i].shape);
      for (int64_t e = 0; e < n; e++) edge_set(inputs[i], e, i, k->input_count);
    }
    /* A complex kernel runs as its split (same bytes, real shapes): the
     * reference is kernel_eval of that split, so the check is of the
     * emitter, bit for bit, not of the split's own rounding. */
    Status split_status;
    status_clear(&split_status);
    Kernel *split = kernel_has_complex(k) ? kernel_split_complex(k, &split_status) : NULL;
    EXPECT(!kernel_has_complex(k) || split, "%s: %s", label, split_status.message);
    const Kernel *ref = split ? split : k;
    Literal *ref_inputs[4] = {0};
    for (int i = 0; i < ref->input_count && i < 4; i++) {
      ref_inputs[i] = literal_create(&ref->inputs[i].shape);
      memcpy(ref_inputs[i]->data, inputs[i]->data, (size_t)shape_byte_size(&ref->inputs[i].shape));
    }
    char why[512] = "";
    /* the same bits, any NaN for any NaN; complex parts within `slack` relative error */
    OutputTolerance tolerance = {.any_nan = true, .complex_part_relative = slack};
    SimulateOutcome outcome = kernel_simulate(ref, ptx_builder_text(&b), (unsigned)shape.blocks,
                                              (unsigned)shape.block_threads, ref_inputs, &tolerance, why, sizeof why);
    EXPECT(outcome == SIMULATE_MATCHED, "%s: %s", label, why);
    for (int i = 0; i < k->input_count && i < 4; i++) literal_free(inputs[i]), literal_free(ref_inputs[i]);
    if (split) kernel_free(split);
  }
  ptx_builder_free(&b);
  kernel_free(k);
  module_free(m);
}

/* `result` op(x[, y]) with x, y of `type`, n elements. */
static void op_check(const char *type, const char *result, const char *op, int arity, const char *attrs) {
  int n = edge_count(TYPE_F32);
  char hlo[1024], label[128];
  ElementType t = TYPE_F32;
  for (int i = 0; i < TYPE_COUNT; i++)
    if (!strcmp(type_name((ElementType)i), type)) t = (ElementType)i;
  n = edge_count(t);
  if (arity == 2) n *= n;
  snprintf(label, sizeof label, "%s_%s_%s", op, type, result);
  for (char *c = label; *c; c++)
    if (*c == '-') *c = '_';
  if (arity == 1)
    snprintf(hlo, sizeof hlo, "HloModule m\nENTRY e { x = %s[%d] parameter(0)\n ROOT r = %s[%d] %s(x)%s }\n", type, n,
             result, n, op, attrs);
  else
    snprintf(hlo, sizeof hlo,
             "HloModule m\nENTRY e { x = %s[%d] parameter(0)\n y = %s[%d] parameter(1)\n"
             " ROOT r = %s[%d] %s(x, y)%s }\n",
             type, n, type, n, result, n, op, attrs);
  case_check(label, hlo, 1e-6);
}

static const char *const narrow_ints[] = {"s8", "u8", "s16", "u16"};

TEST(narrow_integer_binary_ops_wrap_at_their_width_as_the_evaluator_does) {
  static const char *const ops[] = {"add",     "subtract", "multiply", "divide",      "remainder",
                                    "maximum", "minimum",  "and",      "or",          "xor",
                                    "power",   "shift-left", "shift-right-logical", "shift-right-arithmetic",
                                    "mulhi"};
  for (int t = 0; t < 4; t++)
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) op_check(narrow_ints[t], narrow_ints[t], ops[o], 2, "");
}

TEST(narrow_integer_unary_ops_and_sign_match_the_evaluator) {
  static const char *const ops[] = {"negate", "abs", "not", "popcnt", "count-leading-zeros", "sign"};
  for (int t = 0; t < 4; t++)
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) op_check(narrow_ints[t], narrow_ints[t], ops[o], 1, "");
}

TEST(integer_power_and_sign_on_32_and_64_bits_match_the_evaluator) {
  static const char *const types[] = {"s32", "u32", "s64", "u64"};
  for (int t = 0; t < 4; t++) {
    op_check(types[t], types[t], "power", 2, "");
    op_check(types[t], types[t], "mulhi", 2, "");
    op_check(types[t], types[t], "sign", 1, "");
  }
}

TEST(compares_of_narrow_integers_and_total_order_floats_match) {
  static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  char attrs[64];
  for (int d = 0; d < 6; d++) {
    snprintf(attrs, sizeof attrs, ", direction=%s", dirs[d]);
    for (int t = 0; t < 4; t++) op_check(narrow_ints[t], "pred", "compare", 2, attrs);
    snprintf(attrs, sizeof attrs, ", direction=%s, type=TOTALORDER", dirs[d]);
    op_check("f32", "pred", "compare", 2, attrs);
    op_check("f64", "pred", "compare", 2, attrs);
    op_check("bf16", "pred", "compare", 2, attrs);
  }
}

TEST(converts_to_and_from_narrow_integers_saturate_and_wrap_as_the_evaluator_does) {
  static const char *const from[] = {"f32", "f64", "f16", "bf16", "s8", "u8", "s16", "u16", "s32", "u64", "pred"};
  static const char *const to[] = {"s8", "u8", "s16", "u16", "f32", "f16", "bf16", "s64", "pred"};
  for (size_t f = 0; f < sizeof from / sizeof *from; f++)
    for (size_t t = 0; t < sizeof to / sizeof *to; t++)
      if (strcmp(from[f], to[t])) op_check(from[f], to[t], "convert", 1, "");
}

static const char *const minifloats[] = {"f8e4m3fn", "f8e5m2",  "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz",
                                         "f8e4m3",   "f8e3m4",  "f8e8m0fnu",  "f4e2m1fn"};

TEST(minifloats_round_to_nearest_even_from_f32_f64_and_integers_and_widen_exactly) {
  static const char *const other[] = {"f32", "f64", "f16", "s32", "u8"};
  for (int m = 0; m < 9; m++)
    for (int o = 0; o < 5; o++) {
      op_check(other[o], minifloats[m], "convert", 1, "");
      op_check(minifloats[m], other[o], "convert", 1, "");
    }
  op_check("f8e4m3fn", "f8e5m2", "convert", 1, "");
  op_check("f8e5m2", "f8e4m3fnuz", "convert", 1, "");
}

TEST(minifloat_arithmetic_rounds_each_f32_result_to_the_type) {
  static const char *const ops[] = {"add", "subtract", "multiply", "divide", "maximum"};
  for (int m = 0; m < 9; m++)
    for (int o = 0; o < 5; o++) op_check(minifloats[m], minifloats[m], ops[o], 2, "");
}

TEST(reduce_precision_round_nearest_afz_and_float_remainder_match_bit_for_bit) {
  static const char *const types[] = {"f32", "f64", "f16", "bf16"};
  static const char *const widths[] = {", exponent_bits=5, mantissa_bits=10", ", exponent_bits=8, mantissa_bits=7",
                                       ", exponent_bits=3, mantissa_bits=2", ", exponent_bits=11, mantissa_bits=0",
                                       ", exponent_bits=1, mantissa_bits=30"};
  for (int t = 0; t < 4; t++) {
    for (int w = 0; w < 5; w++) op_check(types[t], types[t], "reduce-precision", 1, widths[w]);
    op_check(types[t], types[t], "round-nearest-afz", 1, "");
    op_check(types[t], types[t], "remainder", 2, "");
    op_check(types[t], types[t], "sign", 1, "");
  }
}

TEST(float_maximum_and_minimum_propagate_nan_and_keep_the_left_of_equal_zeros) {
  static const char *const types[] = {"f32", "f64", "f16", "bf16"};
  for (int t = 0; t < 4; t++) {
    op_check(types[t], types[t], "maximum", 2, "");
    op_check(types[t], types[t], "minimum", 2, "");
  }
}

TEST(bitcast_converts_between_16_bit_types_keep_the_bits) {
  op_check("u16", "f16", "bitcast-convert", 1, "");
  op_check("s16", "bf16", "bitcast-convert", 1, "");
  op_check("bf16", "u16", "bitcast-convert", 1, "");
  op_check("s8", "u8", "bitcast-convert", 1, "");
  op_check("u16", "s16", "bitcast-convert", 1, "");
}

TEST(complex_elementwise_ops_split_into_parts_match_within_a_few_roundings) {
  static const char *const binary[] = {"add", "subtract", "multiply", "divide"};
  for (int o = 0; o < 4; o++) {
    op_check("c64", "c64", binary[o], 2, "");
    op_check("c128", "c128", binary[o], 2, "");
  }
  op_check("c64", "c64", "negate", 1, "");
  op_check("c64", "f32", "abs", 1, "");
  op_check("c64", "f32", "real", 1, "");
  op_check("c128", "f64", "imag", 1, "");
  op_check("c64", "c128", "convert", 1, "");
  op_check("c64", "pred", "compare", 2, ", direction=NE");
}

/* A reduce of `type` over `dims` of x[in] by `op` from `init`. */
static void reduce_check(const char *label, const char *type, const char *in, const char *out, const char *dims,
                         const char *op, const char *init) {
  char hlo[1024];
  snprintf(hlo, sizeof hlo,
           "HloModule %s\nr { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ROOT s = %s[] %s(a, b) }\n"
           "ENTRY e { x = %s[%s] parameter(0)\n c = %s[] constant(%s)\n"
           "  ROOT y = %s[%s] reduce(x, c), dimensions={%s}, to_apply=r }\n",
           label, type, type, type, op, type, in, type, init, type, out, dims);
  case_check(label, hlo, 0);
}

TEST(narrow_integer_and_minifloat_reductions_combine_in_wide_registers_and_wrap) {
  reduce_check("rows_s8_add", "s8", "8,300", "8", "1", "add", "0");           /* warp partials, wrapping */
  reduce_check("rows_u16_mul", "u16", "3,5000", "3", "1", "multiply", "1");   /* block partials */
  reduce_check("columns_s16_max", "s16", "300,40", "40", "0", "maximum", "-32768");
  reduce_check("thread_u8_add", "u8", "37,5", "5", "0", "add", "7");          /* a non-identity init */
  reduce_check("rows_f8_max", "f8e5m2", "4,200", "4", "1", "maximum", "-inf");
}

/* pred arithmetic is the evaluator's 0/1 integers stored as x != 0:
 * multiply and minimum are and, maximum is or (the ops the verifier lets
 * pred take). */
TEST(pred_arithmetic_matches_the_evaluators_zero_one_integers) {
  static const char *const binary[] = {"multiply", "maximum", "minimum"};
  for (size_t o = 0; o < sizeof binary / sizeof *binary; o++) op_check("pred", "pred", binary[o], 2, "");
}

/* s4/u4/s2/u2 take a byte each (only the low bits count on a load) and
 * compute as the 8- and 16-bit integers do, wrapped at 4 or 2 bits. */
TEST(sub_byte_integers_compute_in_32_bits_and_wrap_at_their_width) {
  static const char *const types[] = {"s4", "u4", "s2", "u2"};
  static const char *const binary[] = {"add",     "subtract", "multiply", "divide",  "remainder",
                                       "maximum", "minimum",  "xor",      "power",   "shift-left",
                                       "shift-right-logical", "shift-right-arithmetic", "mulhi"};
  static const char *const unary[] = {"negate", "abs", "not", "popcnt", "count-leading-zeros", "sign"};
  static const char *const other[] = {"f32", "f16", "s32", "s8", "u64", "pred"};
  for (int t = 0; t < 4; t++) {
    for (size_t o = 0; o < sizeof binary / sizeof *binary; o++) op_check(types[t], types[t], binary[o], 2, "");
    for (size_t o = 0; o < sizeof unary / sizeof *unary; o++) op_check(types[t], types[t], unary[o], 1, "");
    op_check(types[t], "pred", "compare", 2, ", direction=LT");
    for (size_t o = 0; o < sizeof other / sizeof *other; o++) {
      op_check(types[t], other[o], "convert", 1, "");
      op_check(other[o], types[t], "convert", 1, "");
    }
    for (int u = 0; u < 4; u++)
      if (u != t) op_check(types[t], types[u], "convert", 1, "");
  }
  op_check("s4", "u4", "bitcast-convert", 1, "");
  op_check("u2", "s2", "bitcast-convert", 1, "");
}

/* stochastic-convert(x, random): every float edge against integer edges
 * as the random bits (0, 1, all ones, 2^31 - 1, 2^31, ...), each result
 * width, bit for bit as the evaluator's stochastic_round. */
TEST(stochastic_convert_rounds_by_the_random_bits_as_the_evaluator_does) {
  static const char *const cases[][3] = {
      {"f32", "u32", "s32"}, {"f32", "u32", "s8"},  {"f32", "u32", "s16"}, {"f32", "u32", "s64"},
      {"f16", "u16", "s16"}, {"f16", "u16", "s8"},  {"f16", "u16", "s32"}, {"bf16", "u16", "s8"},
      {"f64", "u64", "s64"}, {"f64", "u64", "s32"},
  };
  int n = FLOAT_EDGES * INT_EDGES;
  char hlo[512], label[64];
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    snprintf(label, sizeof label, "stochastic_%s_%s_%s", cases[c][0], cases[c][1], cases[c][2]);
    snprintf(hlo, sizeof hlo,
             "HloModule m\nENTRY e { x = %s[%d] parameter(0)\n z = %s[%d] parameter(1)\n"
             " ROOT r = %s[%d] stochastic-convert(x, z) }\n",
             cases[c][0], n, cases[c][1], n, cases[c][2], n);
    case_check(label, hlo, 0);
  }
}

TEST(a_packed_minifloat_layout_is_refused_not_miscompiled) {
  Status st;
  status_clear(&st);
  const char *hlo = "HloModule m\nENTRY e { x = f4e2m1fn[8]{0:E(4)} parameter(0)\n"
                    " ROOT r = f4e2m1fn[8]{0:E(4)} negate(x) }\n";
  Module *m = parse_module(hlo, strlen(hlo), "packed", &st);
  EXPECT(m != NULL, "%s", st.message);
  if (!m) return;
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  if (k) {
    PtxTarget target;
    ptx_target_for_device(8, 0, &target, &st);
    PtxBuilder b;
    ptx_builder_init(&b, &target);
    PtxKernelShape shape;
    status_clear(&st);
    EXPECT(!ptx_kernel_emit(&b, k, "kernel", &shape, &st), "a packed E(4) buffer was emitted");
    EXPECT(st.code == STATUS_UNSUPPORTED, "status %d: %s", (int)st.code, st.message);
    ptx_builder_free(&b);
    kernel_free(k);
  }
  module_free(m);
}

int main(void) {
  snprintf(work_dir, sizeof work_dir, "/tmp/axle-ptxelt-XXXXXX");
  if (!mkdtemp(work_dir)) {
    printf("FAIL test_ptx_elementwise_setup\n  cannot make a temporary directory\n");
    return 1;
  }
  if (!tool_find("ptxas", ptxas, sizeof ptxas)) printf("SKIP ptxas checks (no ptxas on PATH or in /usr/local/cuda/bin)\n");
  module_kernels = -1;
  modules_reset();
  RUN_AND_ASSEMBLE(narrow_integer_binary_ops_wrap_at_their_width_as_the_evaluator_does);
  RUN_AND_ASSEMBLE(narrow_integer_unary_ops_and_sign_match_the_evaluator);
  RUN_AND_ASSEMBLE(integer_power_and_sign_on_32_and_64_bits_match_the_evaluator);
  RUN_AND_ASSEMBLE(compares_of_narrow_integers_and_total_order_floats_match);
  RUN_AND_ASSEMBLE(converts_to_and_from_narrow_integers_saturate_and_wrap_as_the_evaluator_does);
  RUN_AND_ASSEMBLE(minifloats_round_to_nearest_even_from_f32_f64_and_integers_and_widen_exactly);
  RUN_AND_ASSEMBLE(minifloat_arithmetic_rounds_each_f32_result_to_the_type);
  RUN_AND_ASSEMBLE(reduce_precision_round_nearest_afz_and_float_remainder_match_bit_for_bit);
  RUN_AND_ASSEMBLE(float_maximum_and_minimum_propagate_nan_and_keep_the_left_of_equal_zeros);
  RUN_AND_ASSEMBLE(bitcast_converts_between_16_bit_types_keep_the_bits);
  RUN_AND_ASSEMBLE(complex_elementwise_ops_split_into_parts_match_within_a_few_roundings);
  RUN_AND_ASSEMBLE(narrow_integer_and_minifloat_reductions_combine_in_wide_registers_and_wrap);
  RUN_AND_ASSEMBLE(pred_arithmetic_matches_the_evaluators_zero_one_integers);
  RUN_AND_ASSEMBLE(sub_byte_integers_compute_in_32_bits_and_wrap_at_their_width);
  RUN_AND_ASSEMBLE(stochastic_convert_rounds_by_the_random_bits_as_the_evaluator_does);
  RUN_AND_ASSEMBLE(a_packed_minifloat_layout_is_refused_not_miscompiled);
  for (int i = 0; i < 2; i++) ptx_builder_free(&modules[i]);
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", work_dir);
  if (!getenv("AXLE_KEEP_PTX") && system(command) != 0) printf("  (could not remove %s)\n", work_dir);
  return test_summary();
}
