/* The opcodes added to match XLA's current list, where a corpus case with a
 * NumPy golden cannot say it: rng's draws (checked by statistical bounds and
 * reproducibility, not exact values), rng-get-and-update-state, the token
 * type, topk's default, the refusals found when compiling, and the opcode
 * list itself. */
#include <stdlib.h>

#include "eval_test_support.h"

/* Parses and evaluates a module with no parameters. */
static Literal *run_text(const char *text) {
  Status st;
  Literal *r = run_hlo(text, NULL, 0, &st);
  if (!r) printf("  evaluation failed: %s\n", st.message);
  return r;
}

static void mean_and_deviation(const Literal *x, double *mean, double *deviation) {
  int64_t n = shape_element_count(&x->shape);
  double sum = 0, squares = 0;
  for (int64_t i = 0; i < n; i++) sum += get_f(x, i);
  *mean = sum / (double)n;
  for (int64_t i = 0; i < n; i++) squares += (get_f(x, i) - *mean) * (get_f(x, i) - *mean);
  *deviation = sqrt(squares / (double)(n - 1));
}

static const char *uniform_text =
    "HloModule u\nENTRY main {\n"
    "  a = f32[] constant(-2)\n  b = f32[] constant(3)\n"
    "  ROOT r = f32[4000] rng(a, b), distribution=rng_uniform\n}\n";

TEST(rng_uniform_is_reproducible_and_stays_in_its_interval) {
  Literal *first = run_text(uniform_text), *second = run_text(uniform_text);
  EXPECT(first && second, "both runs give a value");
  if (first && second) {
    EXPECT(literal_equal(first, second), "the same module gives the same bits");
    double lo = 1e9, hi = -1e9, mean, deviation;
    for (int64_t i = 0; i < 4000; i++) {
      lo = fmin(lo, get_f(first, i));
      hi = fmax(hi, get_f(first, i));
    }
    EXPECT(lo >= -2 && hi < 3, "draws in [-2, 3): saw [%g, %g]", lo, hi);
    mean_and_deviation(first, &mean, &deviation);
    /* uniform on [-2, 3): mean 0.5, deviation 5/sqrt(12) = 1.443; the mean
     * of 4000 draws is within 5 standard errors (0.114) */
    EXPECT(fabs(mean - 0.5) < 0.114, "mean %g, want 0.5", mean);
    EXPECT(fabs(deviation - 1.443) < 0.07, "deviation %g, want 1.443", deviation);
  }
  literal_free(first);
  literal_free(second);
}

TEST(rng_normal_has_the_given_mean_and_deviation) {
  Literal *r = run_text("HloModule n\nENTRY main {\n"
                        "  a = f64[] constant(1)\n  b = f64[] constant(2)\n"
                        "  ROOT r = f64[4000] rng(a, b), distribution=rng_normal\n}\n");
  EXPECT(r != NULL, "a value");
  if (r) {
    double mean, deviation;
    mean_and_deviation(r, &mean, &deviation);
    /* 5 standard errors of the mean: 5 * 2 / sqrt(4000) = 0.158 */
    EXPECT(fabs(mean - 1) < 0.158, "mean %g, want 1", mean);
    EXPECT(fabs(deviation - 2) < 0.15, "deviation %g, want 2", deviation);
  }
  literal_free(r);
}

TEST(rng_uniform_integers_cover_the_half_open_range) {
  Literal *r = run_text("HloModule i\nENTRY main {\n"
                        "  a = s32[] constant(-5)\n  b = s32[] constant(5)\n"
                        "  ROOT r = s32[2000] rng(a, b), distribution=rng_uniform\n}\n");
  EXPECT(r != NULL, "a value");
  if (r) {
    int seen[10] = {0};
    bool in_range = true;
    for (int64_t i = 0; i < 2000; i++) {
      int64_t v = get_s(r, i);
      in_range &= v >= -5 && v < 5;
      if (v >= -5 && v < 5) seen[v + 5]++;
    }
    EXPECT(in_range, "every draw in [-5, 5)");
    for (int k = 0; k < 10; k++) EXPECT(seen[k] > 120, "value %d drawn %d times of ~200", k - 5, seen[k]);
  }
  literal_free(r);
}

TEST(rng_instructions_draw_different_numbers) {
  Literal *r = run_text("HloModule two\nENTRY main {\n"
                        "  a = f32[] constant(0)\n  b = f32[] constant(1)\n"
                        "  x = f32[8] rng(a, b), distribution=rng_uniform\n"
                        "  y = f32[8] rng(a, b), distribution=rng_uniform\n"
                        "  ROOT t = (f32[8], f32[8]) tuple(x, y)\n}\n");
  EXPECT(r && r->shape.type == TYPE_TUPLE, "a tuple");
  if (r && r->shape.type == TYPE_TUPLE)
    EXPECT(!literal_equal(r->elements[0], r->elements[1]), "x and y differ");
  literal_free(r);
}

TEST(rng_get_and_update_state_advances_by_the_deltas_before_it) {
  Literal *r = run_text("HloModule s\nENTRY main {\n"
                        "  a = u64[2] rng-get-and-update-state(), delta=4\n"
                        "  b = u64[2] rng-get-and-update-state(), delta=8\n"
                        "  c = u64[2] rng-get-and-update-state(), delta=1\n"
                        "  ROOT t = (u64[2], u64[2], u64[2]) tuple(a, b, c)\n}\n");
  EXPECT(r && r->shape.type == TYPE_TUPLE, "a tuple");
  if (r && r->shape.type == TYPE_TUPLE) {
    uint64_t a = literal_get_u64(r->elements[0], 0), b = literal_get_u64(r->elements[1], 0);
    uint64_t c = literal_get_u64(r->elements[2], 0);
    EXPECT(b == a + 4 && c == a + 12, "states %llu, %llu, %llu", (unsigned long long)a, (unsigned long long)b,
           (unsigned long long)c);
    EXPECT(literal_get_u64(r->elements[0], 1) == 0, "high word 0");
  }
  literal_free(r);
}

TEST(rng_get_and_update_state_gives_a_u64_pair) {
  Literal *r = run_text("HloModule s\nENTRY main {\n"
                        "  ROOT s = u64[2] rng-get-and-update-state(), delta=4\n}\n");
  EXPECT(r && r->shape.type == TYPE_U64 && shape_element_count(&r->shape) == 2, "u64[2]");
  literal_free(r);
  Status st;
  status_clear(&st);
  const char *wrong = "HloModule s\nENTRY main {\n  ROOT s = u64[3] rng-get-and-update-state(), delta=4\n}\n";
  Module *m = parse_module(wrong, strlen(wrong), "s.hlo", &st);
  EXPECT(m == NULL && strstr(st.message, "u64[2]"), "u64[3] is refused: %s", st.message);
  module_free(m);
}

/* Parses text, prints it, and returns the printed module (caller frees). */
static char *printed(const char *text) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "p.hlo", &st);
  if (!m) {
    printf("  parse failed: %s\n", st.message);
    return NULL;
  }
  StrBuf sb = {0};
  print_module(&sb, m);
  module_free(m);
  return sb.data;
}

TEST(token_shapes_parse_and_print_as_token) {
  char *text = printed("HloModule t\nENTRY main {\n  p = f32[2] parameter(0)\n"
                       "  a = token[] after-all()\n  b = token[] after-all(a, a)\n"
                       "  ROOT d = f32[2] add-dependency(p, b)\n}\n");
  EXPECT(text && strstr(text, "b = token[] after-all(a, a)"), "printed: %s", text ? text : "");
  free(text);
}

TEST(rng_attributes_print_as_xla_spells_them) {
  char *text = printed("HloModule r\nENTRY main {\n  a = f32[] constant(0)\n  b = f32[] constant(1)\n"
                       "  x = f32[3] rng(a, b), distribution=rng_normal\n"
                       "  s = u64[2] rng-get-and-update-state(), delta=8\n"
                       "  ROOT t = (f32[3], u64[2]) tuple(x, s)\n}\n");
  EXPECT(text && strstr(text, "rng(a, b), distribution=rng_normal") &&
             strstr(text, "rng-get-and-update-state(), delta=8"),
         "printed: %s", text ? text : "");
  free(text);
}

TEST(topk_largest_defaults_to_true) {
  char *text = printed("HloModule k\nENTRY main {\n  p = f32[5] parameter(0)\n"
                       "  ROOT t = (f32[2], s32[2]) topk(p), k=2\n}\n");
  EXPECT(text && strstr(text, "k=2, largest=true"), "printed: %s", text ? text : "");
  free(text);
}

TEST(refused_ops_are_found_before_running) {
  const char *texts[] = {
      "HloModule s\nENTRY main {\n  p = f32[4] parameter(0)\n  ROOT s = f32[4] shuffle(p)\n}\n",
      "HloModule c\nENTRY main {\n  p = f32[4] parameter(0)\n"
      "  ROOT c = f32[4] custom-call(p), custom_call_target=\"lapack_zgeev_ffi\"\n}\n",
  };
  const char *wants[] = {"shuffle is not supported", "which JAX emits for jnp.linalg.eig)"};
  for (int k = 0; k < 2; k++) {
    Status st;
    status_clear(&st);
    Module *m = parse_module(texts[k], strlen(texts[k]), "r.hlo", &st);
    EXPECT(m != NULL, "case %d parses: %s", k, st.message);
    if (!m) continue;
    bool refused = !eval_check_supported(m, &st);
    EXPECT(refused && st.code == STATUS_UNSUPPORTED && strstr(st.message, wants[k]) && st.loc.line == 4,
           "case %d: %s (line %d)", k, st.message, st.loc.line);
    module_free(m);
  }
}

TEST(builder_copies_the_scalar_attributes_it_is_given) {
  Module *m = module_create("built");
  Computation *c = builder_add_computation(m, "main");
  int64_t dims[1] = {5};
  Shape x_shape = shape_array(TYPE_F32, 1, dims);
  Instruction *x = builder_add_parameter(c, &x_shape, "x");
  Status st;
  status_clear(&st);
  Instruction *t = NULL;
  {
    ScalarAttrs on_stack = {.k = 2, .largest = false};
    Attrs attrs = {.scalars = &on_stack};
    t = builder_add_instruction(c, OP_TOPK, &x, 1, NULL, 0, &attrs, NULL, &st);
  }
  EXPECT(t != NULL, "topk built: %s", st.message);
  if (t) {
    EXPECT(attrs_scalars(&t->attrs)->k == 2 && !attrs_scalars(&t->attrs)->largest, "k and largest kept");
    const Shape *s = &t->shape;
    EXPECT(shape_is_tuple(s) && s->tuple_count == 2 && s->tuple_shapes[1].type == TYPE_S32 &&
               s->tuple_shapes[0].dims[0] == 2,
           "(f32[2], s32[2])");
  }
  module_free(m);
}

/* Every spelling of XLA's opcode list (xla/hlo/ir/hlo_opcode.h), but for
 * complex, real, imag, fft and stochastic-convert, which come with the
 * complex and f8 types. */
TEST(every_opcode_of_xla_is_known) {
  static const char *const names[] = {
      "abs", "acos", "acosh", "add", "add-dependency", "after-all", "all-gather",
      "all-gather-done", "all-gather-start", "all-reduce", "all-reduce-done", "all-reduce-start",
      "all-to-all", "and", "asin", "asinh", "async-done", "async-start", "async-update", "atan",
      "atan2", "atanh", "batch-norm-grad", "batch-norm-inference", "batch-norm-training", "bitcast",
      "bitcast-convert", "broadcast", "call", "cbrt", "ceil", "cholesky", "clamp",
      "count-leading-zeros", "collective-broadcast", "collective-permute", "collective-permute-done",
      "collective-permute-start", "collective-reduce", "compare", "concatenate", "conditional",
      "constant", "convert", "convolution", "copy", "copy-done", "copy-start", "cosine", "cosh",
      "custom-call", "divide", "domain", "dot", "dynamic-reshape", "dynamic-slice",
      "dynamic-update-slice", "erf", "exponential", "exponential-minus-one", "floor", "fusion",
      "gather", "get-dimension-size", "get-tuple-element", "infeed", "iota", "is-finite", "log",
      "log-plus-one", "logistic", "map", "maximum", "minimum", "mulhi", "multiply", "negate", "not",
      "opt-barrier", "or", "outfeed", "pad", "parameter", "partition-id", "popcnt", "power",
      "ragged-all-to-all", "ragged-dot", "recv", "recv-done", "reduce", "reduce-precision",
      "reduce-scatter", "reduce-window", "remainder", "replica-id", "reshape", "reverse", "rng",
      "rng-bit-generator", "rng-get-and-update-state", "round-nearest-afz", "round-nearest-even",
      "rsqrt", "scaled-dot", "scan", "scatter", "select", "select-and-scatter", "send", "send-done",
      "set-dimension-size", "shift-left", "shift-right-arithmetic", "shift-right-logical",
      "shuffle", "sign", "sine", "sinh", "slice", "sort", "sqrt", "subtract", "tan", "tanh", "topk",
      "transpose", "triangular-solve", "tuple", "while", "xor",
  };
  int count = (int)(sizeof names / sizeof names[0]);
  EXPECT(count == 131, "the list holds %d names", count);
  for (int i = 0; i < count; i++) {
    Opcode op;
    bool known = opcode_from_name(names[i], strlen(names[i]), &op);
    EXPECT(known && strcmp(opcode_name(op), names[i]) == 0, "'%s' is an opcode", names[i]);
  }
}

int main(void) {
  RUN(rng_uniform_is_reproducible_and_stays_in_its_interval);
  RUN(rng_normal_has_the_given_mean_and_deviation);
  RUN(rng_uniform_integers_cover_the_half_open_range);
  RUN(rng_instructions_draw_different_numbers);
  RUN(rng_get_and_update_state_gives_a_u64_pair);
  RUN(rng_get_and_update_state_advances_by_the_deltas_before_it);
  RUN(token_shapes_parse_and_print_as_token);
  RUN(rng_attributes_print_as_xla_spells_them);
  RUN(topk_largest_defaults_to_true);
  RUN(refused_ops_are_found_before_running);
  RUN(builder_copies_the_scalar_attributes_it_is_given);
  RUN(every_opcode_of_xla_is_known);
  return test_summary();
}
