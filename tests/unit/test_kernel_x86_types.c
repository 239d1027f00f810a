/* The x86 kernel compiler on every non-complex element type, against the
 * evaluator: one HLO op `r = R[N] op(a, b)` is lowered to a kernel,
 * compiled at every ISA level this machine has, and run over edge values
 * (0, ±1, the type's limits, shift counts at and past the width, NaN, ±inf,
 * ±0, subnormals, the halfway points of each narrow float, every bit
 * pattern of the 8- and 16-bit floats); the result must be the bytes the
 * evaluator (src/ir/eval) gives, NaN bits included. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/kernel_x86.h"
#include "ir.h"
#include "ir/kernel/kernel.h"
#include "opt/lower.h"
#include "../test.h"

/* Values as bit patterns (or integers), one list per operand. */
typedef struct Values {
  uint64_t *v;
  int64_t n, capacity;
} Values;

static void values_add(Values *vs, uint64_t v) {
  if (vs->n == vs->capacity) {
    vs->capacity = vs->capacity ? 2 * vs->capacity : 64;
    vs->v = realloc(vs->v, (size_t)vs->capacity * sizeof *vs->v);
    if (!vs->v) abort();
  }
  vs->v[vs->n++] = v;
}

static uint32_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

static float f32_value(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static double f64_value(uint64_t b) {
  double d;
  memcpy(&d, &b, 8);
  return d;
}

static uint64_t f64_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}

static Literal *literal_of(ElementType t, const Values *vs) {
  int64_t n = vs->n;
  Shape s = shape_array(t, 1, &n);
  Literal *lit = literal_create(&s);
  int size = type_byte_size(t);
  for (int64_t i = 0; i < n; i++) {
    if (type_is_integer(t) || t == TYPE_PRED) literal_set_s64(lit, i, (int64_t)vs->v[i]);
    else memcpy((char *)lit->data + i * size, &vs->v[i], (size_t)size);
  }
  return lit;
}

static void print_element(const Literal *lit, int64_t i) {
  int size = type_byte_size(lit->shape.type);
  uint64_t bits = 0;
  memcpy(&bits, (const char *)lit->data + i * size, (size_t)size);
  printf("%s:0x%llx", type_name(lit->shape.type), (unsigned long long)bits);
}

/* Whether the element of type t at p is a NaN. */
static bool element_is_nan(ElementType t, const void *p) {
  if (!type_is_float(t)) return false;
  uint64_t bits = 0;
  memcpy(&bits, p, (size_t)type_byte_size(t));
  switch (t) {
  case TYPE_F64: return isnan(f64_value(bits));
  case TYPE_F32: return isnan(f32_value((uint32_t)bits));
  case TYPE_F16: return isnan(half_to_float((uint16_t)bits));
  case TYPE_BF16: return isnan(bf16_to_float((uint16_t)bits));
  default: return isnan(minifloat_to_float(t, (uint8_t)bits));
  }
}

/* With two NaN operands, which one's payload an IEEE op returns is the
 * order of its operands, which C leaves to the compiler (a + b may be
 * emitted as b + a): the evaluator's choice is not a rule to check. */
static bool nan_payload_unspecified(Literal **inputs, int input_count, const Literal *want, const char *got,
                                    int64_t i) {
  int nans = 0;
  for (int a = 0; a < input_count; a++) {
    ElementType t = inputs[a]->shape.type;
    nans += element_is_nan(t, (const char *)inputs[a]->data + i * type_byte_size(t));
  }
  ElementType t = want->shape.type;
  return nans >= 2 && element_is_nan(t, (const char *)want->data + i * type_byte_size(t)) && element_is_nan(t, got);
}

/* Compiles `text` (whose root is the op) at each level, runs it on the
 * inputs and compares every byte with the evaluator's result. `seen` are
 * the values the op sees at each index (for the NaN rule above), when they
 * are not the inputs themselves. */
static void check_text_seen(const char *label, const char *text, Literal **inputs, int input_count, Literal **seen) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  EXPECT(m != NULL, "%s: %s", label, st.message);
  if (!m) return;
  Literal *want = eval_module(m, inputs, input_count, &st);
  EXPECT(want != NULL, "%s: the evaluator: %s", label, st.message);
  Kernel *k = want ? lower_to_kernel(m->entry->root, &st) : NULL;
  EXPECT(!want || k != NULL, "%s: lowering: %s", label, st.message);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  for (CpuLevel level = CPU_LEVEL_SSE4; k && level <= hardware.hardware_level; level++) {
    CpuFeatures cpu = hardware;
    status_clear(&st);
    if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s at %s: %s", label, cpu_level_name(level), st.message);
    if (!ck) continue;
    size_t bytes = (size_t)shape_byte_size(&want->shape);
    char *out = calloc(1, bytes + 1);
    void *buffers[4];
    for (int a = 0; a < input_count; a++) buffers[a] = inputs[a]->data;
    buffers[input_count] = out;
    kernel_x86_run(ck, buffers, NULL);
    int size = type_byte_size(want->shape.type), shown = 0;
    int64_t n = shape_element_count(&want->shape), wrong = 0;
    for (int64_t i = 0; i < n; i++) {
      if (memcmp(out + i * size, (const char *)want->data + i * size, (size_t)size) == 0) continue;
      if (nan_payload_unspecified(seen ? seen : inputs, input_count, want, out + i * size, i)) continue;
      if (wrong++ == 0) EXPECT(false, "%s at %s differs from the evaluator:", label, cpu_level_name(level));
      if (shown++ >= 4) continue;
      printf("    element %lld: inputs", (long long)i);
      for (int a = 0; a < input_count; a++) printf(" "), print_element(inputs[a], i);
      uint64_t got = 0, expected = 0;
      memcpy(&got, out + i * size, (size_t)size);
      memcpy(&expected, (const char *)want->data + i * size, (size_t)size);
      printf(": got 0x%llx, want 0x%llx\n", (unsigned long long)got, (unsigned long long)expected);
    }
    if (wrong) printf("    %lld of %lld elements differ\n", (long long)wrong, (long long)n);
    free(out);
    kernel_x86_free(ck);
  }
  kernel_free(k);
  literal_free(want);
  module_free(m);
}

static void check_text(const char *label, const char *text, Literal **inputs, int input_count) {
  check_text_seen(label, text, inputs, input_count, NULL);
}

/* `ROOT r = result[N] op(a[, b])attrs` on the given operand values. */
static void check_op(const char *op, ElementType result, ElementType a_type, const Values *a, ElementType b_type,
                     const Values *b, const char *attrs) {
  char text[600], label[200];
  long long n = (long long)a->n;
  bool binary = b != NULL;
  if (binary)
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = %s[%lld] parameter(0)\n  b = %s[%lld] parameter(1)\n"
             "  ROOT r = %s[%lld] %s(a, b)%s\n}\n",
             type_name(a_type), n, type_name(b_type), n, type_name(result), n, op, attrs);
  else
    snprintf(text, sizeof text, "HloModule m\nENTRY e {\n  a = %s[%lld] parameter(0)\n  ROOT r = %s[%lld] %s(a)%s\n}\n",
             type_name(a_type), n, type_name(result), n, op, attrs);
  snprintf(label, sizeof label, "%s %s(%s%s%s)%s", type_name(result), op, type_name(a_type), binary ? ", " : "",
           binary ? type_name(b_type) : "", attrs);
  Literal *inputs[2] = {literal_of(a_type, a), binary ? literal_of(b_type, b) : NULL};
  check_text(label, text, inputs, binary ? 2 : 1);
  literal_free(inputs[0]);
  literal_free(inputs[1]);
}

/* Every pair of values from one list: a[i] = list[i / n], b[i] = list[i % n]. */
static void pairs_of(const Values *list, Values *a, Values *b) {
  for (int64_t i = 0; i < list->n; i++)
    for (int64_t j = 0; j < list->n; j++) values_add(a, list->v[i]), values_add(b, list->v[j]);
}

static void values_free(Values *a, Values *b, Values *c) {
  free(a->v), free(b->v), free(c->v);
  *a = *b = *c = (Values){0};
}

static const ElementType integer_types[] = {TYPE_S8, TYPE_S16, TYPE_S32, TYPE_S64, TYPE_U8,
                                            TYPE_U16, TYPE_U32, TYPE_U64, TYPE_S4, TYPE_U4};
enum { INTEGER_TYPE_COUNT = sizeof integer_types / sizeof integer_types[0] };

/* 0, ±1, ±2, the limits and their neighbours, counts around the width and
 * around 64, and a few bit patterns, all wrapped to the width on storing. */
static void integer_edges(ElementType t, Values *vs) {
  int w = type_bit_width(t);
  uint64_t top = 1ull << (w - 1), mask = w == 64 ? ~0ull : (1ull << w) - 1;
  uint64_t list[] = {0, 1, 2, 3, (uint64_t)-1, (uint64_t)-2, top, top - 1, top + 1, mask, mask - 1,
                     (uint64_t)w - 1, (uint64_t)w, (uint64_t)w + 1, 63, 64, 65, (uint64_t)-(int64_t)w,
                     0x5555555555555555ull, 0x8badf00d12345678ull, 7, 100};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
    uint64_t v = list[i] & mask;
    if (type_kind(t) == TYPE_KIND_SINT && (v & top)) v |= ~mask; /* the value the literal holds */
    values_add(vs, v);
  }
}

TEST(shifts_shift_everything_out_for_counts_at_or_past_the_width) {
  static const char *const ops[] = {"shift-left", "shift-right-logical", "shift-right-arithmetic"};
  for (int t = 0; t < INTEGER_TYPE_COUNT; t++)
    for (int o = 0; o < 3; o++) {
      Values list = {0}, a = {0}, b = {0};
      integer_edges(integer_types[t], &list);
      pairs_of(&list, &a, &b);
      check_op(ops[o], integer_types[t], integer_types[t], &a, integer_types[t], &b, "");
      values_free(&list, &a, &b);
    }
}

TEST(mulhi_power_divide_and_remainder_follow_xla_at_every_width) {
  /* mulhi: the high half of the double-width product; power: 1^y = x^0 =
   * 1, negative exponents give 0; x / 0 = -1, x % 0 = x, MIN / -1 = MIN. */
  static const char *const ops[] = {"mulhi", "power", "divide", "remainder"};
  for (int t = 0; t < INTEGER_TYPE_COUNT; t++)
    for (int o = 0; o < 4; o++) {
      if (o == 0 && type_bit_width(integer_types[t]) < 8) continue; /* XLA has no 4-bit mulhi */
      Values list = {0}, a = {0}, b = {0};
      integer_edges(integer_types[t], &list);
      pairs_of(&list, &a, &b);
      check_op(ops[o], integer_types[t], integer_types[t], &a, integer_types[t], &b, "");
      values_free(&list, &a, &b);
    }
}

TEST(popcnt_and_count_leading_zeros_count_within_the_element_width) {
  for (int t = 0; t < INTEGER_TYPE_COUNT; t++) {
    Values a = {0}, none = {0}, none2 = {0};
    integer_edges(integer_types[t], &a);
    check_op("popcnt", integer_types[t], integer_types[t], &a, TYPE_COUNT, NULL, "");
    check_op("count-leading-zeros", integer_types[t], integer_types[t], &a, TYPE_COUNT, NULL, "");
    values_free(&a, &none, &none2);
  }
}

static const ElementType narrow_types[] = {TYPE_F16, TYPE_BF16, TYPE_F8E4M3FN, TYPE_F8E5M2, TYPE_F8E4M3FNUZ,
                                           TYPE_F8E5M2FNUZ, TYPE_F8E4M3B11FNUZ, TYPE_F8E4M3, TYPE_F8E3M4,
                                           TYPE_F8E8M0FNU, TYPE_F4E2M1FN};
enum { NARROW_TYPE_COUNT = sizeof narrow_types / sizeof narrow_types[0] };

static float narrow_to_float(ElementType t, uint32_t bits) {
  if (t == TYPE_F16) return half_to_float((uint16_t)bits);
  if (t == TYPE_BF16) return bf16_to_float((uint16_t)bits);
  return minifloat_to_float(t, (uint8_t)bits);
}

/* Every bit pattern of t (the 16-bit types: every 7th, and their specials). */
static void narrow_patterns(ElementType t, Values *vs) {
  int w = type_bit_width(t);
  uint32_t count = 1u << w, step = w == 16 ? 7 : 1;
  for (uint32_t bits = 0; bits < count; bits += step) values_add(vs, bits);
  if (w == 16) {
    static const uint32_t specials[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0x7c00,
                                        0xfc00, 0x7c01, 0x7e00, 0xfe00, 0x7f80, 0xff80, 0x7f81, 0x7fc0,
                                        0x007f, 0x0080, 0x7f7f, 0xffff};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) values_add(vs, specials[i]);
  }
}

/* f32 inputs that probe t's rounding: each value of t, the midpoints
 * between neighbours and one f32 ulp either side of them, past the largest
 * finite value, specials, and tiny values. */
static void rounding_probes(ElementType t, Values *vs) {
  Values patterns = {0};
  narrow_patterns(t, &patterns);
  float previous = NAN;
  for (int64_t i = 0; i < patterns.n; i++) {
    float v = narrow_to_float(t, (uint32_t)patterns.v[i]);
    if (isnan(v)) continue;
    values_add(vs, f32_bits(v));
    if (!isnan(previous) && !isinf(v) && !isinf(previous) && (previous < 0) == (v < 0)) {
      float mid = (float)(((double)previous + (double)v) / 2);
      values_add(vs, f32_bits(mid));
      values_add(vs, f32_bits(nextafterf(mid, INFINITY)));
      values_add(vs, f32_bits(nextafterf(mid, -INFINITY)));
    }
    previous = v;
  }
  free(patterns.v);
  static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -1e-45f, 1e-40f,
                                   0x1p-126f, 0x1p-127f, 0x1.8p-127f, 1e30f, -1e30f, 3.4e38f, 65504.0f, 65520.0f,
                                   65519.99f, 448.0f, 464.0f, 480.0f, 57344.0f, 61440.0f, 6.0f, 7.0f, -7.0f};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) values_add(vs, f32_bits(specials[i]));
  values_add(vs, 0x7f800001u); /* a signalling NaN */
  values_add(vs, 0xffc01234u);
}

TEST(converts_to_each_narrow_float_round_to_nearest_even_with_its_overflow_rules) {
  for (int t = 0; t < NARROW_TYPE_COUNT; t++) {
    Values probes = {0}, none = {0}, none2 = {0};
    rounding_probes(narrow_types[t], &probes);
    check_op("convert", narrow_types[t], TYPE_F32, &probes, TYPE_COUNT, NULL, "");
    values_free(&probes, &none, &none2);
  }
}

/* f64 rounds to a minifloat once: values a hair (below f32's precision)
 * off each halfway point must not round as the halfway point would. */
TEST(f64_converts_to_each_minifloat_round_once) {
  for (int t = 2; t < NARROW_TYPE_COUNT; t++) {
    Values probes = {0}, wide = {0}, none = {0};
    rounding_probes(narrow_types[t], &probes);
    for (int64_t i = 0; i < probes.n; i++) {
      double v = (double)f32_value((uint32_t)probes.v[i]);
      values_add(&wide, f64_bits(v));
      if (isfinite(v) && v != 0) values_add(&wide, f64_bits(v * (1 + 0x1p-40))), values_add(&wide, f64_bits(v * (1 - 0x1p-40)));
    }
    values_add(&wide, f64_bits(1e300)), values_add(&wide, f64_bits(-1e-300)), values_add(&wide, 0x7ff0000000000001ull);
    check_op("convert", narrow_types[t], TYPE_F64, &wide, TYPE_COUNT, NULL, "");
    values_free(&probes, &wide, &none);
  }
}

TEST(narrow_floats_widen_exactly_and_store_their_bits_unchanged) {
  for (int t = 0; t < NARROW_TYPE_COUNT; t++) {
    Values patterns = {0}, none = {0}, none2 = {0};
    narrow_patterns(narrow_types[t], &patterns);
    check_op("convert", TYPE_F32, narrow_types[t], &patterns, TYPE_COUNT, NULL, "");
    check_op("negate", narrow_types[t], narrow_types[t], &patterns, TYPE_COUNT, NULL, "");
    check_op("convert", TYPE_S32, narrow_types[t], &patterns, TYPE_COUNT, NULL, "");
    check_op("reverse", narrow_types[t], narrow_types[t], &patterns, TYPE_COUNT, NULL, ", dimensions={0}");
    values_free(&patterns, &none, &none2);
  }
  Values patterns = {0}, none = {0}, none2 = {0};
  narrow_patterns(TYPE_F16, &patterns);
  check_op("bitcast-convert", TYPE_U16, TYPE_F16, &patterns, TYPE_COUNT, NULL, "");
  check_op("bitcast-convert", TYPE_BF16, TYPE_U16, &patterns, TYPE_COUNT, NULL, "");
  check_op("bitcast-convert", TYPE_F16, TYPE_BF16, &patterns, TYPE_COUNT, NULL, "");
  values_free(&patterns, &none, &none2);
}

/* A sample of t's values for binary ops: every 8-bit pattern is 65536
 * pairs, so the 8-bit types take every third and the 16-bit types fewer. */
static void narrow_sample(ElementType t, Values *vs) {
  Values all = {0};
  narrow_patterns(t, &all);
  int64_t step = type_bit_width(t) == 16 ? 61 : type_bit_width(t) == 8 ? 3 : 1;
  for (int64_t i = 0; i < all.n; i += step) values_add(vs, all.v[i]);
  if (type_bit_width(t) == 16)
    for (int64_t i = all.n - 20; i < all.n; i++) values_add(vs, all.v[i]);
  free(all.v);
}

TEST(narrow_float_arithmetic_rounds_each_f32_result_to_the_type) {
  static const char *const ops[] = {"add", "multiply", "divide", "maximum", "subtract", "remainder"};
  for (int t = 0; t < NARROW_TYPE_COUNT; t++) {
    Values sample = {0}, a = {0}, b = {0};
    narrow_sample(narrow_types[t], &sample);
    pairs_of(&sample, &a, &b);
    for (int o = 0; o < 6; o++) check_op(ops[o], narrow_types[t], narrow_types[t], &a, narrow_types[t], &b, "");
    check_op("compare", TYPE_PRED, narrow_types[t], &a, narrow_types[t], &b, ", direction=LT");
    /* a reversed operand is no contiguous vector: the scalar code at every level */
    char text[700];
    const char *name = type_name(narrow_types[t]);
    long long n = (long long)a.n;
    snprintf(text, sizeof text,
             "HloModule m\nf {\n  p = %s[%lld] parameter(0)\n  q = %s[%lld] parameter(1)\n"
             "  v = %s[%lld] reverse(p), dimensions={0}\n  ROOT r = %s[%lld] multiply(v, q)\n}\n"
             "ENTRY e {\n  a = %s[%lld] parameter(0)\n  b = %s[%lld] parameter(1)\n"
             "  ROOT r = %s[%lld] fusion(a, b), kind=kLoop, calls=f\n}\n",
             name, n, name, n, name, n, name, n, name, n, name, n, name, n);
    Values reversed = {0};
    for (int64_t j = a.n - 1; j >= 0; j--) values_add(&reversed, a.v[j]);
    Literal *inputs[2] = {literal_of(narrow_types[t], &reversed), literal_of(narrow_types[t], &b)};
    Literal *seen[2] = {literal_of(narrow_types[t], &a), inputs[1]};
    check_text_seen("multiply(reverse(a), b), scalar", text, inputs, 2, seen);
    literal_free(inputs[0]), literal_free(inputs[1]), literal_free(seen[0]);
    free(reversed.v);
    values_free(&sample, &a, &b);
  }
}

/* Floats of every kind: zeros, ±1, limits, subnormals, infinities, NaNs
 * of both signs and with payloads. */
static void float_edges(ElementType t, Values *vs) {
  static const double list[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-300, -1e-300, 1e-40, 1e-45, 3.4e38,
                                -3.4e38, 1e300, 2147483647.0, 2147483648.0, -2147483649.0, 9.3e18, 1.8e19,
                                2e19, -9.3e18, INFINITY, -INFINITY, 0.49999997, 0.49999999999999994, -0.4,
                                1.5, -3.5, 2.5000001, 8388609.0, 4503599627370497.0, -0.5};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
    values_add(vs, t == TYPE_F64 ? f64_bits(list[i]) : f32_bits((float)list[i]));
  if (t == TYPE_F64) {
    values_add(vs, 0x7ff8000000000000ull), values_add(vs, 0xfff8000000000000ull), values_add(vs, 0x7ff0000000000001ull);
    values_add(vs, 0x0000000000000001ull), values_add(vs, 0x8010000000000000ull);
    values_add(vs, 0x000fffffffffffffull), values_add(vs, 0x8000000000000003ull), values_add(vs, 0x0000000012345678ull);
  } else {
    values_add(vs, 0x7fc00000u), values_add(vs, 0xffc00000u), values_add(vs, 0x7f800001u), values_add(vs, 1u);
    values_add(vs, 0x80800000u), values_add(vs, 0x7fc01234u), values_add(vs, 0x007fffffu), values_add(vs, 0x80000003u);
  }
}

TEST(total_order_compare_orders_nans_and_signed_zeros_by_their_bits) {
  static const char *const directions[] = {"LT", "LE", "EQ", "NE", "GE", "GT"};
  static const ElementType types[] = {TYPE_F32, TYPE_F64};
  for (int t = 0; t < 2; t++) {
    Values list = {0}, a = {0}, b = {0};
    float_edges(types[t], &list);
    pairs_of(&list, &a, &b);
    for (int d = 0; d < 6; d++) {
      char attrs[64];
      snprintf(attrs, sizeof attrs, ", direction=%s, type=TOTALORDER", directions[d]);
      check_op("compare", TYPE_PRED, types[t], &a, types[t], &b, attrs);
    }
    values_free(&list, &a, &b);
  }
  for (int t = 0; t < NARROW_TYPE_COUNT; t++) {
    const ElementType *narrow = narrow_types;
    Values list = {0}, a = {0}, b = {0};
    narrow_sample(narrow[t], &list);
    pairs_of(&list, &a, &b);
    check_op("compare", TYPE_PRED, narrow[t], &a, narrow[t], &b, ", direction=LT, type=TOTALORDER");
    check_op("compare", TYPE_PRED, narrow[t], &a, narrow[t], &b, ", direction=EQ, type=TOTALORDER");
    values_free(&list, &a, &b);
  }
}

TEST(f64_arithmetic_and_converts_match_the_evaluator_on_special_values) {
  static const char *const binary[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "remainder"};
  Values list = {0}, a = {0}, b = {0};
  float_edges(TYPE_F64, &list);
  pairs_of(&list, &a, &b);
  for (int o = 0; o < 7; o++) check_op(binary[o], TYPE_F64, TYPE_F64, &a, TYPE_F64, &b, "");
  check_op("compare", TYPE_PRED, TYPE_F64, &a, TYPE_F64, &b, ", direction=GE");
  static const char *const unary[] = {"abs", "negate", "sqrt", "floor", "sign", "round-nearest-afz"};
  for (int o = 0; o < 6; o++) check_op(unary[o], TYPE_F64, TYPE_F64, &list, TYPE_COUNT, NULL, "");
  check_op("is-finite", TYPE_PRED, TYPE_F64, &list, TYPE_COUNT, NULL, "");
  static const ElementType targets[] = {TYPE_F32, TYPE_S32, TYPE_U64, TYPE_S64, TYPE_PRED, TYPE_F16, TYPE_BF16};
  for (int t = 0; t < 7; t++) check_op("convert", targets[t], TYPE_F64, &list, TYPE_COUNT, NULL, "");
  values_free(&list, &a, &b);
  float_edges(TYPE_F32, &list);
  for (int t = 0; t < 5; t++) check_op("convert", targets[t + 2], TYPE_F32, &list, TYPE_COUNT, NULL, "");
  pairs_of(&list, &a, &b);
  check_op("remainder", TYPE_F32, TYPE_F32, &a, TYPE_F32, &b, "");
  free(a.v), free(b.v);
  a = b = (Values){0};
  check_op("is-finite", TYPE_PRED, TYPE_F32, &list, TYPE_COUNT, NULL, "");
  check_op("round-nearest-afz", TYPE_F32, TYPE_F32, &list, TYPE_COUNT, NULL, "");
  free(list.v);
  list = (Values){0};
  integer_edges(TYPE_U64, &list);
  check_op("convert", TYPE_F32, TYPE_U64, &list, TYPE_COUNT, NULL, "");
  check_op("convert", TYPE_F64, TYPE_U64, &list, TYPE_COUNT, NULL, "");
  check_op("convert", TYPE_F16, TYPE_U64, &list, TYPE_COUNT, NULL, "");
  free(list.v);
}

TEST(reduce_precision_rounds_the_mantissa_and_flushes_past_the_exponent) {
  static const int formats[][2] = {{5, 10}, {8, 7}, {4, 3}, {5, 2}, {11, 52}, {2, 0}, {8, 23}, {6, 30}};
  for (int t = 0; t < 2; t++) {
    ElementType type = t ? TYPE_F64 : TYPE_F32;
    Values list = {0}, none = {0}, none2 = {0};
    float_edges(type, &list);
    Values probes = {0};
    rounding_probes(TYPE_F16, &probes);
    for (int64_t i = 0; i < probes.n; i++)
      values_add(&list, type == TYPE_F64 ? f64_bits((double)f32_value((uint32_t)probes.v[i])) : probes.v[i]);
    free(probes.v);
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
      char attrs[64];
      snprintf(attrs, sizeof attrs, ", exponent_bits=%d, mantissa_bits=%d", formats[f][0], formats[f][1]);
      check_op("reduce-precision", type, type, &list, TYPE_COUNT, NULL, attrs);
    }
    values_free(&list, &none, &none2);
  }
}

TEST(stochastic_convert_rounds_up_when_the_random_bits_are_below_the_fraction) {
  Values x = {0}, random = {0}, none = {0};
  static const float values[] = {0.25f, -0.25f, 1.5f, -1.5f, 2.75f, 0.0f, -0.0f, NAN, INFINITY, -INFINITY,
                                 3e9f, -3e9f, 1e-30f, 7.0f, 100.125f, -100.125f};
  static const uint32_t randoms[] = {0, 1, 0x3fffffff, 0x40000000, 0x7fffffff, 0x80000000, 0xbfffffff, 0xc0000000,
                                     0xffffffff, 0x20000000};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
    for (size_t j = 0; j < sizeof randoms / sizeof randoms[0]; j++)
      values_add(&x, f32_bits(values[i])), values_add(&random, randoms[j]);
  check_op("stochastic-convert", TYPE_S32, TYPE_F32, &x, TYPE_U32, &random, "");
  check_op("stochastic-convert", TYPE_S8, TYPE_F32, &x, TYPE_U32, &random, "");
  values_free(&x, &random, &none);
  static const uint64_t wide_randoms[] = {0, 1, 0x3fffffffffffffffull, 0x4000000000000000ull, 0x7fffffffffffffffull,
                                          0x8000000000000000ull, 0xbfffffffffffffffull, 0xc000000000000000ull,
                                          0xffffffffffffffffull};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
    for (size_t j = 0; j < sizeof wide_randoms / sizeof wide_randoms[0]; j++)
      values_add(&x, f64_bits((double)values[i] + 0x1p-30)), values_add(&random, wide_randoms[j]);
  check_op("stochastic-convert", TYPE_S64, TYPE_F64, &x, TYPE_U64, &random, "");
  values_free(&x, &random, &none);
  Values halves = {0}, half_random = {0};
  static const uint16_t half_values[] = {0x3800, 0xb800, 0x3e00, 0xc100, 0x7c00, 0x7e00, 0x0001, 0x5bff};
  static const uint16_t half_randoms[] = {0, 1, 0x3fff, 0x4000, 0x7fff, 0x8000, 0xffff};
  for (size_t i = 0; i < 8; i++)
    for (size_t j = 0; j < 7; j++) values_add(&halves, half_values[i]), values_add(&half_random, half_randoms[j]);
  check_op("stochastic-convert", TYPE_S16, TYPE_F16, &halves, TYPE_U16, &half_random, "");
  values_free(&halves, &half_random, &none);
}

/* With F16C (avx2 and up), f16 arithmetic and f16 <-> f32 converts run in
 * the SIMD loop; the results are checked above at every level. */
TEST(f16_arithmetic_runs_as_vectors_where_f16c_is_present) {
  const char *text = "HloModule m\nENTRY e {\n  a = f16[1000] parameter(0)\n  b = f16[1000] parameter(1)\n"
                     "  c = f16[1000] multiply(a, b)\n  d = f32[1000] convert(c)\n  e = f32[1000] add(d, d)\n"
                     "  ROOT r = f16[1000] convert(e)\n}\n";
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  Kernel *k = m ? lower_to_kernel(m->entry->root, &st) : NULL;
  EXPECT(k != NULL, "%s", st.message);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  for (CpuLevel level = CPU_LEVEL_SSE4; k && level <= hardware.hardware_level; level++) {
    CpuFeatures cpu = hardware;
    if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s", st.message);
    if (!ck) continue;
    int want = cpu.f16c ? (level == CPU_LEVEL_AVX512 ? 16 : 8) : 0;
    EXPECT(kernel_x86_lanes(ck) == want, "%s: %d lanes, expected %d", cpu_level_name(level), kernel_x86_lanes(ck), want);
    kernel_x86_free(ck);
  }
  kernel_free(k);
  module_free(m);
}

/* A kernel whose float values are all f64 runs in the SIMD loop from avx2
 * (4 or 8 lanes), compares and selects as lane masks included, and gives
 * the evaluator's bits. */
TEST(f64_kernels_run_as_vectors_from_avx2) {
  Values list = {0}, a = {0}, b = {0};
  float_edges(TYPE_F64, &list);
  pairs_of(&list, &a, &b);
  char text[900];
  long long n = (long long)a.n;
  snprintf(text, sizeof text,
           "HloModule m\nf {\n  p = f64[%lld] parameter(0)\n  q = f64[%lld] parameter(1)\n"
           "  c = f64[] constant(-0.75)\n  cb = f64[%lld] broadcast(c), dimensions={}\n"
           "  s = f64[%lld] multiply(p, cb)\n  t = f64[%lld] maximum(s, q)\n  u = f64[%lld] negate(t)\n"
           "  lt = pred[%lld] compare(p, q), direction=LT\n  v = f64[%lld] select(lt, u, p)\n"
           "  w = f64[%lld] abs(v)\n  r2 = f64[%lld] sqrt(w)\n  ROOT r = f64[%lld] divide(r2, q)\n}\n"
           "ENTRY e {\n  a = f64[%lld] parameter(0)\n  b = f64[%lld] parameter(1)\n"
           "  ROOT r = f64[%lld] fusion(a, b), kind=kLoop, calls=f\n}\n",
           n, n, n, n, n, n, n, n, n, n, n, n, n, n);
  Literal *inputs[2] = {literal_of(TYPE_F64, &a), literal_of(TYPE_F64, &b)};
  check_text("f64 fusion", text, inputs, 2);
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline", &st);
  Kernel *k = m ? lower_to_kernel(m->entry->root, &st) : NULL;
  EXPECT(k != NULL, "%s", st.message);
  CpuFeatures hardware;
  cpu_features_detect_hardware(&hardware);
  for (CpuLevel level = CPU_LEVEL_SSE4; k && level <= hardware.hardware_level; level++) {
    CpuFeatures cpu = hardware;
    if (!cpu_features_force_level(&cpu, cpu_level_name(level), &st)) continue;
    CompiledKernel *ck = kernel_x86_compile(k, &cpu, &st);
    EXPECT(ck != NULL, "%s", st.message);
    if (!ck) continue;
    int want = level == CPU_LEVEL_AVX512 ? 8 : level == CPU_LEVEL_AVX2 ? 4 : 0;
    EXPECT(kernel_x86_lanes(ck) == want, "%s: %d lanes, expected %d", cpu_level_name(level), kernel_x86_lanes(ck), want);
    kernel_x86_free(ck);
  }
  kernel_free(k);
  module_free(m);
  literal_free(inputs[0]), literal_free(inputs[1]);
  values_free(&list, &a, &b);
}

int main(void) {
  RUN(shifts_shift_everything_out_for_counts_at_or_past_the_width);
  RUN(mulhi_power_divide_and_remainder_follow_xla_at_every_width);
  RUN(popcnt_and_count_leading_zeros_count_within_the_element_width);
  RUN(converts_to_each_narrow_float_round_to_nearest_even_with_its_overflow_rules);
  RUN(f64_converts_to_each_minifloat_round_once);
  RUN(narrow_floats_widen_exactly_and_store_their_bits_unchanged);
  RUN(narrow_float_arithmetic_rounds_each_f32_result_to_the_type);
  RUN(total_order_compare_orders_nans_and_signed_zeros_by_their_bits);
  RUN(f64_arithmetic_and_converts_match_the_evaluator_on_special_values);
  RUN(reduce_precision_rounds_the_mantissa_and_flushes_past_the_exponent);
  RUN(stochastic_convert_rounds_up_when_the_random_bits_are_below_the_fraction);
  RUN(f16_arithmetic_runs_as_vectors_where_f16c_is_present);
  RUN(f64_kernels_run_as_vectors_from_avx2);
  return test_summary();
}
