/* Complex kernels on real pairs (src/ir/kernel/kernel_complex.c): each
 * complex op, lowered to a kernel, split into real pairs and run by the
 * kernel interpreter and by the x86 compiler, must give the evaluator's
 * values on edge values: every pair of parts from {0, -0, 1, -1.5, a
 * subnormal, a huge number, -2.5e-3, +inf, -inf, NaN}. Arithmetic,
 * compare, select, convert and the parts are exact (NaN matches any NaN);
 * magnitude, square root and the transcendentals agree within a few units
 * of the last place of the result's magnitude. Where the x86 compiler
 * lacks a real op (sine, say) it must refuse the kernel, not miscompute.
 * Also: the shape of the two forms (inline parts for componentwise loops,
 * pairs otherwise), and the corpus's complex ops against NumPy's goldens. */
#include "complex_compat.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/kernel_x86.h"
#include "ir.h"
#include "ir/kernel/kernel.h"
#include "opt/lower.h"
#include "runtime/npy.h"
#include "../test.h"

static const double edge_parts[] = {0.0, -0.0, 1.0, -1.5, 0x1p-140, 3.0e30, -2.5e-3, INFINITY, -INFINITY, NAN};
enum { EDGE_COUNT = sizeof edge_parts / sizeof edge_parts[0] };
/* Finite values for the transcendentals, whose infinite and NaN corners
 * C's complex.h defines case by case. */
static const double finite_parts[] = {0.0, -0.0, 0.5, -1.25, 1.0, 3.0, -7.0, 1e-3};
enum { FINITE_COUNT = sizeof finite_parts / sizeof finite_parts[0] };

typedef struct Case {
  Module *m;
  const Instruction *root;
  Literal *operands[3];
  Literal *want;
} Case;

/* `op` on operands of type `type` over the grid of parts (binary ops: every
 * pair of grid values); the result type and shape come from `result`. */
static bool case_create(Case *c, const char *type, const char *result, const char *op, int arity, const double *parts,
                        int part_count) {
  memset(c, 0, sizeof *c);
  int64_t values = (int64_t)part_count * part_count, n = arity == 2 ? values * values : values;
  char text[1024];
  if (arity == 1)
    snprintf(text, sizeof text, "HloModule m\nENTRY e {\n  a = %s[%lld] parameter(0)\n  ROOT r = %s[%lld] %s(a)\n}\n",
             type, (long long)n, result, (long long)n, op);
  else
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = %s[%lld] parameter(0)\n  b = %s[%lld] parameter(1)\n"
             "  ROOT r = %s[%lld] %s(a, b)\n}\n",
             type, (long long)n, type, (long long)n, result, (long long)n, op);
  Status st;
  status_clear(&st);
  c->m = parse_module(text, strlen(text), "inline.hlo", &st);
  EXPECT(c->m != NULL, "%s: %s", op, st.message);
  if (!c->m) return false;
  c->root = c->m->entry->root;
  for (int a = 0; a < arity; a++) {
    c->operands[a] = literal_create(&c->root->operands[a]->shape);
    for (int64_t i = 0; i < n; i++) {
      int64_t v = arity == 2 ? (a == 0 ? i / values : i % values) : i;
      double complex z = CMPLX(parts[v / part_count], parts[v % part_count]);
      if (type_is_complex(c->operands[a]->shape.type)) literal_set_complex(c->operands[a], i, z);
      else literal_set_f64(c->operands[a], i, creal(z));
    }
  }
  c->want = eval_instruction(c->root, c->operands, &st);
  EXPECT(c->want != NULL, "%s: the evaluator refused: %s", op, st.message);
  return c->want != NULL;
}

static void case_free(Case *c) {
  for (int a = 0; a < 3; a++) literal_free(c->operands[a]);
  literal_free(c->want);
  module_free(c->m);
}

/* Element i of `got` (bytes in want's type) against want: equal bits, both
 * NaN, or within tolerance times the magnitude of the wanted element. */
static bool element_close(const Literal *want, const void *got, int64_t i, double tolerance) {
  Shape one = shape_scalar(want->shape.type);
  Literal *g = literal_create(&one);
  size_t size = (size_t)type_byte_size(want->shape.type);
  memcpy(g->data, (const char *)got + (size_t)i * size, size);
  bool same = memcmp(g->data, (const char *)want->data + (size_t)i * size, size) == 0;
  if (!same && want->shape.type == TYPE_PRED) {
    literal_free(g);
    return false;
  }
  double complex w = literal_get_complex(want, i), a = literal_get_complex(g, 0);
  literal_free(g);
  if (same) return true;
  double parts_w[2] = {creal(w), cimag(w)}, parts_a[2] = {creal(a), cimag(a)};
  double scale = isfinite(cabs(w)) ? cabs(w) : 0;
  for (int p = 0; p < 2; p++) {
    if (isnan(parts_w[p]) || isnan(parts_a[p])) {
      if (!(isnan(parts_w[p]) && isnan(parts_a[p]))) return false;
    } else if (isinf(parts_w[p]) || isinf(parts_a[p])) {
      if (parts_w[p] != parts_a[p]) return false;
    } else if (fabs(parts_w[p] - parts_a[p]) > tolerance * scale || (tolerance == 0 && parts_w[p] != parts_a[p])) {
      return false;
    }
  }
  return true;
}

/* How many elements of got differ from want; the first is described. */
static int64_t count_differences(const Case *c, const void *got, double tolerance, char *first, size_t size) {
  int64_t n = shape_element_count(&c->want->shape), bad = 0;
  for (int64_t i = 0; i < n; i++) {
    if (element_close(c->want, got, i, tolerance)) continue;
    if (bad++ == 0) {
      Shape one = shape_scalar(c->want->shape.type);
      Literal *g = literal_create(&one);
      size_t bytes = (size_t)type_byte_size(one.type);
      memcpy(g->data, (const char *)got + (size_t)i * bytes, bytes);
      double complex a0 = literal_get_complex(c->operands[0], i);
      double complex a1 = c->operands[1] ? literal_get_complex(c->operands[1], i) : 0;
      double complex w = literal_get_complex(c->want, i), a = literal_get_complex(g, 0);
      snprintf(first, size, "element %lld: (%g,%g) (%g,%g): want (%.9g,%.9g), got (%.9g,%.9g)", (long long)i,
               creal(a0), cimag(a0), creal(a1), cimag(a1), creal(w), cimag(w), creal(a), cimag(a));
      literal_free(g);
    }
  }
  return bad;
}

/* A literal of `shape` holding the bytes of `from` (a complex array seen as
 * its real pairs). */
static Literal *literal_view(const Literal *from, const Shape *shape) {
  Literal *lit = literal_create(shape);
  memcpy(lit->data, from->data, (size_t)shape_byte_size(&from->shape));
  return lit;
}

/* The split kernel through the kernel interpreter. */
static void check_interpreted(const Case *c, const Kernel *k, const char *what, double tolerance) {
  Status st;
  status_clear(&st);
  Kernel *split = kernel_split_complex(k, &st);
  EXPECT(split != NULL, "%s: %s", what, st.message);
  if (!split) return;
  Literal *inputs[3] = {NULL, NULL, NULL};
  for (int i = 0; i < split->input_count; i++) inputs[i] = literal_view(c->operands[i], &split->inputs[i].shape);
  Literal *out = literal_create(&split->outputs[0].shape);
  bool ok = kernel_eval(split, inputs, &out, &st);
  EXPECT(ok, "%s: kernel_eval: %s", what, st.message);
  char first[256] = "";
  int64_t bad = ok ? count_differences(c, out->data, tolerance, first, sizeof first) : 0;
  EXPECT(bad == 0, "%s (interpreted): %lld elements differ; %s", what, (long long)bad, first);
  for (int i = 0; i < split->input_count; i++) literal_free(inputs[i]);
  literal_free(out);
  kernel_free(split);
}

/* The original kernel through the x86 compiler at the machine's level. */
static void check_compiled(const Case *c, const Kernel *k, const char *what, double tolerance, int *refused) {
  CpuFeatures cpu;
  cpu_features_detect_hardware(&cpu);
  if (cpu.level < CPU_LEVEL_SSE4) return;
  Status st;
  status_clear(&st);
  CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
  if (!ck) {
    EXPECT(st.code == STATUS_UNSUPPORTED, "%s: %s", what, st.message);
    (*refused)++;
    return;
  }
  void *buffers[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < k->input_count; i++) buffers[i] = c->operands[i]->data;
  Literal *out = literal_create(&c->want->shape);
  buffers[k->input_count] = out->data;
  kernel_x86_run(ck, buffers, NULL);
  char first[256] = "";
  int64_t bad = count_differences(c, out->data, tolerance, first, sizeof first);
  EXPECT(bad == 0, "%s (x86): %lld elements differ; %s", what, (long long)bad, first);
  literal_free(out);
  kernel_x86_free(ck);
}

typedef struct OpCase {
  const char *op;
  int arity;
  const char *result; /* NULL: the operand type */
  double tolerance_c64, tolerance_c128;
} OpCase;

static void check_ops(const OpCase *cases, int count, const double *parts, int part_count, int *refused) {
  static const char *const types[] = {"c64", "c128"};
  for (int n = 0; n < count; n++) {
    for (int t = 0; t < 2; t++) {
      const OpCase *oc = &cases[n];
      char result[16], what[64];
      snprintf(result, sizeof result, "%s", oc->result ? oc->result : types[t]);
      if (oc->result && strcmp(oc->result, "part") == 0) snprintf(result, sizeof result, "%s", t ? "f64" : "f32");
      snprintf(what, sizeof what, "%s %s", oc->op, types[t]);
      Case c;
      if (!case_create(&c, types[t], result, oc->op, oc->arity, parts, part_count)) {
        case_free(&c);
        continue;
      }
      Status st;
      status_clear(&st);
      Kernel *k = lower_to_kernel(c.root, &st);
      EXPECT(k != NULL, "%s: %s", what, st.message);
      double tolerance = t ? oc->tolerance_c128 : oc->tolerance_c64;
      if (k) check_interpreted(&c, k, what, tolerance);
      if (k) check_compiled(&c, k, what, tolerance, refused);
      kernel_free(k);
      case_free(&c);
    }
  }
}

TEST(complex_arithmetic_on_real_pairs_is_exactly_the_evaluators_at_inf_nan_and_zero_parts) {
  static const OpCase cases[] = {
      {"add", 2, NULL, 0, 0},      {"subtract", 2, NULL, 0, 0}, {"multiply", 2, NULL, 0, 0},
      {"negate", 1, NULL, 0, 0},   {"real", 1, "part", 0, 0},   {"imag", 1, "part", 0, 0},
      {"divide", 2, NULL, 0, 4e-16}, {"abs", 1, "part", 0, 4e-16}, {"sign", 1, NULL, 0, 4e-16},
  };
  int refused = 0;
  check_ops(cases, sizeof cases / sizeof cases[0], edge_parts, EDGE_COUNT, &refused);
  EXPECT(refused == 0, "%d of these kernels were refused by the x86 compiler", refused);
}

TEST(complex_compare_is_equal_only_when_both_parts_are) {
  int refused = 0;
  static const char *const directions[] = {"EQ", "NE"};
  for (int d = 0; d < 2; d++) {
    Case c;
    int64_t n = (int64_t)EDGE_COUNT * EDGE_COUNT * EDGE_COUNT * EDGE_COUNT;
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = c64[%lld] parameter(0)\n  b = c64[%lld] parameter(1)\n"
             "  ROOT r = pred[%lld] compare(a, b), direction=%s\n}\n",
             (long long)n, (long long)n, (long long)n, directions[d]);
    Status st;
    status_clear(&st);
    memset(&c, 0, sizeof c);
    c.m = parse_module(text, strlen(text), "inline.hlo", &st);
    EXPECT(c.m != NULL, "%s", st.message);
    if (!c.m) continue;
    c.root = c.m->entry->root;
    for (int a = 0; a < 2; a++) {
      c.operands[a] = literal_create(&c.root->operands[a]->shape);
      for (int64_t i = 0; i < n; i++) {
        int64_t v = a == 0 ? i / (EDGE_COUNT * EDGE_COUNT) : i % (EDGE_COUNT * EDGE_COUNT);
        literal_set_complex(c.operands[a], i, CMPLX(edge_parts[v / EDGE_COUNT], edge_parts[v % EDGE_COUNT]));
      }
    }
    c.want = eval_instruction(c.root, c.operands, &st);
    Kernel *k = lower_to_kernel(c.root, &st);
    EXPECT(c.want && k, "%s", st.message);
    if (c.want && k) check_interpreted(&c, k, directions[d], 0);
    if (c.want && k) check_compiled(&c, k, directions[d], 0, &refused);
    kernel_free(k);
    case_free(&c);
  }
  EXPECT(refused == 0, "%d compare kernels were refused", refused);
}

/* The tolerances leave room for a few ulp of each real function (the x86
 * code's are mathref's, not libm's) composed by the formula. */
TEST(complex_square_root_and_transcendentals_on_real_pairs_agree_with_c_complex_h) {
  static const OpCase cases[] = {
      {"sqrt", 1, NULL, 3e-7, 1e-15},    {"rsqrt", 1, NULL, 3e-7, 1e-15},     {"exponential", 1, NULL, 4e-6, 4e-14},
      {"exponential-minus-one", 1, NULL, 4e-6, 4e-14}, {"log", 1, NULL, 4e-6, 4e-14},
      {"log-plus-one", 1, NULL, 4e-6, 4e-14}, {"sine", 1, NULL, 4e-6, 4e-14}, {"cosine", 1, NULL, 4e-6, 4e-14},
      {"tan", 1, NULL, 8e-6, 8e-14},     {"tanh", 1, NULL, 8e-6, 8e-14},      {"logistic", 1, NULL, 8e-6, 8e-14},
      {"cbrt", 1, NULL, 8e-6, 8e-14},    {"power", 2, NULL, 2e-5, 4e-13},
  };
  int refused = 0;
  check_ops(cases, sizeof cases / sizeof cases[0], finite_parts, FINITE_COUNT, &refused);
  printf("  (%d of these kernels wait for x86 code of a real math function)\n", refused);
}

TEST(complex_square_root_keeps_c_complex_h_special_cases) {
  static const OpCase cases[] = {{"sqrt", 1, NULL, 3e-7, 1e-15}};
  int refused = 0;
  check_ops(cases, 1, edge_parts, EDGE_COUNT, &refused);
  EXPECT(refused == 0, "sqrt was refused by the x86 compiler");
}

/* A reduction over complex values keeps a pair of accumulators per
 * complex one; a product over a row holding an infinity and a NaN recovers
 * the infinities as C's multiplication does at each step. */
TEST(complex_reductions_keep_a_pair_of_accumulators_and_the_evaluators_products) {
  static const char text[] =
      "HloModule m\nmul {\n  x = c64[] parameter(0)\n  y = c64[] parameter(1)\n  ROOT p = c64[] multiply(x, y)\n}\n"
      "ENTRY e {\n  z = c64[100,3] parameter(0)\n  one = c64[] constant((1, 0))\n"
      "  ROOT r = c64[100] reduce(z, one), dimensions={1}, to_apply=mul\n}\n";
  Case c;
  memset(&c, 0, sizeof c);
  Status st;
  status_clear(&st);
  c.m = parse_module(text, strlen(text), "inline.hlo", &st);
  EXPECT(c.m != NULL, "%s", st.message);
  if (!c.m) return;
  c.root = c.m->entry->root;
  c.operands[0] = literal_create(&c.root->operands[0]->shape);
  for (int64_t i = 0; i < 300; i++)
    literal_set_complex(c.operands[0], i, CMPLX(edge_parts[i % EDGE_COUNT], edge_parts[(i / 7) % EDGE_COUNT]));
  c.operands[1] = literal_clone(c.root->operands[1]->attrs.literal);
  c.want = eval_instruction(c.root, c.operands, &st);
  Kernel *k = c.want ? lower_to_kernel(c.root, &st) : NULL;
  EXPECT(k != NULL, "%s", st.message);
  Kernel *split = k ? kernel_split_complex(k, &st) : NULL;
  EXPECT(!k || (split && split->acc_count == 2 * k->acc_count && split->acc_types[0] == TYPE_F32),
         "accumulators: %d complex became %d", k ? k->acc_count : 0, split ? split->acc_count : 0);
  int refused = 0;
  if (k) check_interpreted(&c, k, "reduce multiply", 0);
  if (k) check_compiled(&c, k, "reduce multiply", 0, &refused);
  EXPECT(refused == 0, "the reduction was refused by the x86 compiler");
  kernel_free(split);
  kernel_free(k);
  case_free(&c);
}

/* Integers that a float cannot hold exactly, and floats at the edges. (u64
 * is left out: the x86 compiler has no u64-to-float convert yet.) */
static void fill_convert_operand(Literal *lit) {
  static const int64_t ints[] = {0, 1, -7, (1ll << 53) + 1, (1ll << 62) + (1ll << 38) + 1, INT64_MIN, INT64_MAX,
                                 -(1ll << 24) - 1};
  int64_t n = shape_element_count(&lit->shape);
  for (int64_t i = 0; i < n; i++) {
    if (type_is_complex(lit->shape.type))
      literal_set_complex(lit, i, CMPLX(edge_parts[i % EDGE_COUNT], edge_parts[(i / EDGE_COUNT) % EDGE_COUNT] / 3));
    else if (type_is_float(lit->shape.type)) literal_set_f64(lit, i, edge_parts[i % EDGE_COUNT] / 3);
    else literal_set_s64(lit, i, ints[i % 8]);
  }
}

TEST(converts_into_complex_round_each_part_as_the_evaluator_does) {
  static const char *const pairs[][2] = {{"s64", "c64"}, {"s32", "c64"}, {"f64", "c64"},
                                         {"f32", "c128"}, {"s64", "c128"}, {"c64", "c128"}, {"c128", "c64"},
                                         {"pred", "c64"}};
  int refused = 0;
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
    char text[256], what[64];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = %s[100] parameter(0)\n  ROOT r = %s[100] convert(a)\n}\n", pairs[p][0],
             pairs[p][1]);
    snprintf(what, sizeof what, "convert %s to %s", pairs[p][0], pairs[p][1]);
    Case c;
    memset(&c, 0, sizeof c);
    Status st;
    status_clear(&st);
    c.m = parse_module(text, strlen(text), "inline.hlo", &st);
    EXPECT(c.m != NULL, "%s: %s", what, st.message);
    if (!c.m) continue;
    c.root = c.m->entry->root;
    c.operands[0] = literal_create(&c.root->operands[0]->shape);
    fill_convert_operand(c.operands[0]);
    c.want = eval_instruction(c.root, c.operands, &st);
    Kernel *k = c.want ? lower_to_kernel(c.root, &st) : NULL;
    EXPECT(k != NULL, "%s: %s", what, st.message);
    if (k) check_interpreted(&c, k, what, 0);
    if (k) check_compiled(&c, k, what, 0, &refused);
    kernel_free(k);
    case_free(&c);
  }
  EXPECT(refused == 0, "%d converts were refused by the x86 compiler", refused);
}

/* bitcast-convert between c64[n] and f32[n,2] (c128 and f64) moves bits:
 * each part lands where it was, infinities and NaNs included. */
TEST(bitcast_convert_splits_complex_into_its_parts_and_joins_them_exactly) {
  static const char *const forms[][2] = {{"c64[100]", "f32[100,2]"}, {"f32[100,2]", "c64[100]"},
                                         {"c128[100]", "f64[100,2]"}, {"f64[100,2]", "c128[100]"}};
  int refused = 0;
  for (int f = 0; f < 4; f++) {
    char text[256];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = %s parameter(0)\n  ROOT r = %s bitcast-convert(a)\n}\n", forms[f][0],
             forms[f][1]);
    Case c;
    memset(&c, 0, sizeof c);
    Status st;
    status_clear(&st);
    c.m = parse_module(text, strlen(text), "inline.hlo", &st);
    EXPECT(c.m != NULL, "%s: %s", forms[f][0], st.message);
    if (!c.m) continue;
    c.root = c.m->entry->root;
    c.operands[0] = literal_create(&c.root->operands[0]->shape);
    bool complex_operand = type_is_complex(c.operands[0]->shape.type);
    for (int64_t i = 0; i < 100; i++) {
      double re = edge_parts[i % EDGE_COUNT], im = edge_parts[i / EDGE_COUNT];
      if (complex_operand) {
        literal_set_complex(c.operands[0], i, CMPLX(re, im));
      } else {
        literal_set_f64(c.operands[0], 2 * i, re);
        literal_set_f64(c.operands[0], 2 * i + 1, im);
      }
    }
    c.want = eval_instruction(c.root, c.operands, &st);
    Kernel *k = c.want ? lower_to_kernel(c.root, &st) : NULL;
    EXPECT(k != NULL, "%s to %s: %s", forms[f][0], forms[f][1], st.message);
    if (k) check_interpreted(&c, k, forms[f][0], 0);
    if (k) check_compiled(&c, k, forms[f][0], 0, &refused);
    kernel_free(k);
    case_free(&c);
  }
  EXPECT(refused == 0, "%d bitcast-converts were refused by the x86 compiler", refused);
}

/* ---- the two forms ---- */

static Kernel *kernel_of_root(const char *body, Module **m) {
  char text[512];
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n%s\n}\n", body);
  Status st;
  status_clear(&st);
  *m = parse_module(text, strlen(text), "inline.hlo", &st);
  EXPECT(*m != NULL, "%s", st.message);
  Kernel *k = *m ? lower_to_kernel((*m)->entry->root, &st) : NULL;
  EXPECT(!*m || k != NULL, "%s", st.message);
  return k;
}

/* add, subtract, negate and complex converts on buffers of the loop's own
 * shape need no pairs: the innermost extent doubles (c64[4,64] is
 * f32[4,128]), the ops stay one each, and the loop vectorizes. Anything
 * else (a multiply, a transposed read) gets the paired form. */
TEST(componentwise_complex_loops_keep_their_parts_inline_and_vectorize) {
  Module *m;
  Kernel *k = kernel_of_root("  a = c64[4,64] parameter(0)\n  b = c64[4,64] parameter(1)\n"
                             "  ROOT d = c64[4,64] subtract(a, b)",
                             &m);
  Status st;
  status_clear(&st);
  Kernel *split = k ? kernel_split_complex(k, &st) : NULL;
  EXPECT(!k || (split && split->rank == 2 && split->dims[1] == 128 && split->op_count == k->op_count &&
                split->inputs[0].shape.type == TYPE_F32 && split->inputs[0].shape.dims[1] == 128),
         "the inline form: rank %d, inner %lld, %d ops for %d", split ? split->rank : -1,
         split ? (long long)split->dims[split->rank - 1] : -1, split ? split->op_count : -1, k ? k->op_count : -1);
  CpuFeatures cpu;
  cpu_features_detect_hardware(&cpu);
  CompiledKernel *ck = k && cpu.level >= CPU_LEVEL_SSE4 ? kernel_x86_compile(k, &cpu, &st) : NULL;
  EXPECT(cpu.level < CPU_LEVEL_SSE4 || (ck && kernel_x86_lanes(ck) > 0), "not vectorized: %s", st.message);
  kernel_x86_free(ck);
  kernel_free(split);
  kernel_free(k);
  module_free(m);

  k = kernel_of_root("  a = c64[4,64] parameter(0)\n  ROOT r = c128[4,64] convert(a)", &m);
  split = k ? kernel_split_complex(k, &st) : NULL;
  EXPECT(!k || (split && split->dims[1] == 128 && split->outputs[0].shape.type == TYPE_F64), "convert: not inline");
  kernel_free(split);
  kernel_free(k);
  module_free(m);

  static const char *const paired[] = {
      "  a = c64[4,64] parameter(0)\n  b = c64[4,64] parameter(1)\n  ROOT r = c64[4,64] multiply(a, b)",
      "  a = c64[64,4] parameter(0)\n  ROOT t = c64[4,64] transpose(a), dimensions={1,0}",
  };
  for (int p = 0; p < 2; p++) {
    k = kernel_of_root(paired[p], &m);
    split = k ? kernel_split_complex(k, &st) : NULL;
    EXPECT(!k || (split && split->dims[1] == 64 && split->inputs[0].shape.rank == 3), "case %d: not the paired form",
           p);
    kernel_free(split);
    kernel_free(k);
    module_free(m);
  }
}

/* ---- against NumPy ---- */

/* The real-pair form of each root operand of a corpus module, interpreted
 * on the corpus inputs, against NumPy's golden within the corpus's
 * tolerance: the formulas checked independently of the evaluator, on the
 * values the CPU backend will meet once the real math functions exist. */
static void check_against_goldens(const char *name, double rtol, double atol) {
  char path[256];
  Status st;
  status_clear(&st);
  snprintf(path, sizeof path, "tests/hlo/%s.hlo", name);
  Module *m = parse_module_file(path, &st);
  EXPECT(m != NULL, "%s (run from the repository root)", st.message);
  if (!m) return;
  /* every instruction's value: the corpus inputs, then the evaluator's */
  const Computation *c = m->entry;
  Literal **values = mem_calloc((size_t)c->instruction_count + 1, sizeof *values);
  for (int i = 0; i < c->instruction_count && st.code == STATUS_OK; i++) {
    const Instruction *inst = c->instructions[i];
    if (inst->opcode == OP_TUPLE || inst->operand_count > 8) continue;  /* the root: its operands are checked */
    Literal *operands[8] = {NULL};
    for (int a = 0; a < inst->operand_count; a++) operands[a] = values[inst->operands[a]->index];
    snprintf(path, sizeof path, "tests/hlo/%s/in%d.npy", name, (int)inst->attrs.parameter_number);
    values[i] = inst->opcode == OP_PARAMETER ? npy_read(path, &st) : eval_instruction(inst, operands, &st);
    EXPECT(values[i] != NULL, "%s: %s", name, st.message);
  }
  const Instruction *root = c->root;
  for (int o = 0; o < root->operand_count && st.code == STATUS_OK; o++) {
    Kernel *k = lower_to_kernel(root->operands[o], &st);
    Kernel *split = k ? kernel_split_complex(k, &st) : NULL;
    EXPECT(split != NULL, "%s out%d: %s", name, o, st.message);
    if (!split) {
      kernel_free(k);
      break;
    }
    Literal *inputs[8] = {NULL}, *out = literal_create(&split->outputs[0].shape);
    for (int i = 0; i < split->input_count && i < 8 && st.code == STATUS_OK; i++) {
      const KernelBuffer *b = &k->inputs[i];
      const Literal *from = b->constant ? b->constant : values[b->source->index];
      if (!from) status_error(&st, STATUS_UNSUPPORTED, "%s: no value for %s", name, b->source->name);
      else inputs[i] = literal_view(from, &split->inputs[i].shape);
    }
    bool ok = st.code == STATUS_OK && kernel_eval(split, inputs, &out, &st);
    EXPECT(ok, "%s out%d: %s", name, o, st.message);
    snprintf(path, sizeof path, "tests/hlo/%s/out%d.npy", name, o);
    Literal *golden = ok ? npy_read(path, &st) : NULL, *got = golden ? literal_view(out, &golden->shape) : NULL;
    for (int64_t i = 0; got && i < shape_element_count(&golden->shape); i++) {
      double complex want = literal_get_complex(golden, i), have = literal_get_complex(got, i);
      double allowed = atol + rtol * cabs(want);
      bool close = fabs(creal(want) - creal(have)) <= allowed && fabs(cimag(want) - cimag(have)) <= allowed;
      EXPECT(close, "%s out%d element %lld: NumPy (%.9g, %.9g), real pairs (%.9g, %.9g)", name, o, (long long)i,
             creal(want), cimag(want), creal(have), cimag(have));
      if (!close) break;
    }
    literal_free(golden);
    literal_free(got);
    literal_free(out);
    for (int i = 0; i < 8; i++) literal_free(inputs[i]);
    kernel_free(split);
    kernel_free(k);
  }
  for (int i = 0; i < c->instruction_count; i++) literal_free(values[i]);
  free(values);
  module_free(m);
}

TEST(complex_corpus_ops_on_real_pairs_match_numpys_goldens) {
  check_against_goldens("complex_arithmetic_c64", 1e-5, 1e-6);
  check_against_goldens("complex_unary_c64", 2e-5, 2e-6);
  check_against_goldens("complex_unary_c128", 1e-5, 1e-6);
  check_against_goldens("complex_power_c128", 1e-5, 1e-6);
}

int main(void) {
  RUN(complex_arithmetic_on_real_pairs_is_exactly_the_evaluators_at_inf_nan_and_zero_parts);
  RUN(complex_compare_is_equal_only_when_both_parts_are);
  RUN(complex_square_root_and_transcendentals_on_real_pairs_agree_with_c_complex_h);
  RUN(complex_square_root_keeps_c_complex_h_special_cases);
  RUN(converts_into_complex_round_each_part_as_the_evaluator_does);
  RUN(complex_reductions_keep_a_pair_of_accumulators_and_the_evaluators_products);
  RUN(bitcast_convert_splits_complex_into_its_parts_and_joins_them_exactly);
  RUN(componentwise_complex_loops_keep_their_parts_inline_and_vectorize);
  RUN(complex_corpus_ops_on_real_pairs_match_numpys_goldens);
  return test_summary();
}
