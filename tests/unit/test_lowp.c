/* The narrow types: the 8- and 4-bit floats (their rounding at the edges,
 * checked on hand-worked values that tests/gen/minifloat_reference.py
 * checks too), the 4- and 2-bit integers, packed E(n) layouts, and
 * stochastic-convert. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "../test.h"

static const ElementType minifloats[] = {
    TYPE_F8E4M3FN, TYPE_F8E5M2, TYPE_F8E4M3FNUZ, TYPE_F8E5M2FNUZ, TYPE_F8E4M3B11FNUZ,
    TYPE_F8E4M3, TYPE_F8E3M4, TYPE_F8E8M0FNU, TYPE_F4E2M1FN,
};
enum { MINIFLOAT_COUNT = sizeof minifloats / sizeof minifloats[0] };

/* ---- helpers ---- */

static Module *parse_text(const char *text) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "test.hlo", &st);
  EXPECT(m != NULL, "parse: %s", st.message);
  return m;
}

/* Parses and runs a module with no parameters; NULL (and st) on failure. */
static Literal *run_text(const char *text, Status *st) {
  status_clear(st);
  Module *m = parse_module(text, strlen(text), "test.hlo", st);
  if (!m) return NULL;
  Literal *out = eval_module(m, NULL, 0, st);
  module_free(m);
  return out;
}

static Literal *run_ok(const char *text) {
  Status st;
  Literal *out = run_text(text, &st);
  EXPECT(out != NULL, "run: %s", st.message);
  return out;
}

static uint8_t byte_at(const Literal *lit, int64_t i) { return ((const uint8_t *)lit->data)[i]; }

/* ---- the conversions themselves ---- */

/* The canonical NaN of each type, for the sign given: what any NaN becomes. */
static uint8_t canonical_nan(ElementType t, bool negative) {
  switch (t) {
  case TYPE_F8E4M3FN: return negative ? 0xFF : 0x7F;
  case TYPE_F8E5M2: return negative ? 0xFE : 0x7E;
  case TYPE_F8E4M3: return negative ? 0xFC : 0x7C;
  case TYPE_F8E3M4: return negative ? 0xF8 : 0x78;
  case TYPE_F8E8M0FNU: return 0xFF;
  default: return 0x80; /* the fnuz types */
  }
}

TEST(every_minifloat_bit_pattern_survives_a_trip_through_f32) {
  for (int k = 0; k < MINIFLOAT_COUNT; k++) {
    ElementType t = minifloats[k];
    int patterns = 1 << type_bit_width(t), bad = 0;
    for (int b = 0; b < patterns; b++) {
      float v = minifloat_to_float(t, (uint8_t)b);
      uint8_t back = double_to_minifloat(t, v);
      uint8_t want = isnan(v) ? canonical_nan(t, signbit(v) != 0) : (uint8_t)b;
      if (back != want && bad++ < 3)
        EXPECT(back == want, "%s 0x%02x -> %.9g -> 0x%02x, expected 0x%02x", type_name(t), b, v,
               back, want);
    }
    EXPECT(bad == 0, "%s: %d patterns changed", type_name(t), bad);
  }
}

/* The same hand-worked values as minifloat_reference.py's HAND_WORKED. */
static const struct {
  ElementType type;
  double value;
  uint8_t bits;
  const char *why;
} hand_worked[] = {
    {TYPE_F8E4M3FN, 448, 0x7E, "max finite"},
    {TYPE_F8E4M3FN, 464, 0x7E, "tie between 448 and 480: even mantissa"},
    {TYPE_F8E4M3FN, 465, 0x7F, "rounds to 480, past max: NaN"},
    {TYPE_F8E4M3FN, -1e9, 0xFF, "overflow keeps the sign on NaN"},
    {TYPE_F8E4M3FN, INFINITY, 0x7F, "no infinity: NaN"},
    {TYPE_F8E4M3FN, 0x1p-9, 0x01, "smallest subnormal"},
    {TYPE_F8E4M3FN, 0x1p-10, 0x00, "tie between 0 and 2^-9: 0"},
    {TYPE_F8E4M3FN, 0x3p-11, 0x01, "past the tie: 2^-9"},
    {TYPE_F8E4M3FN, 1.0625, 0x38, "tie between 1 and 1.125: 1"},
    {TYPE_F8E4M3FN, 1.1875, 0x3A, "tie between 1.125 and 1.25: 1.25"},
    {TYPE_F8E4M3FN, -0.0, 0x80, "-0 kept"},
    {TYPE_F8E5M2, 57344, 0x7B, "max finite"},
    {TYPE_F8E5M2, 61440, 0x7C, "tie past max: inf"},
    {TYPE_F8E5M2, 61439, 0x7B, "just below the tie"},
    {TYPE_F8E5M2, -INFINITY, 0xFC, "-inf"},
    {TYPE_F8E5M2, NAN, 0x7E, "quiet NaN"},
    {TYPE_F8E5M2, 0x1p-16, 0x01, "smallest subnormal"},
    {TYPE_F8E4M3FNUZ, 240, 0x7F, "max finite"},
    {TYPE_F8E4M3FNUZ, 248, 0x80, "tie up to 256: NaN"},
    {TYPE_F8E4M3FNUZ, -0.0, 0x00, "no -0"},
    {TYPE_F8E4M3FNUZ, -0x1p-12, 0x00, "rounds to 0: no -0"},
    {TYPE_F8E4M3FNUZ, 0x1p-10, 0x01, "smallest subnormal"},
    {TYPE_F8E4M3FNUZ, -NAN, 0x80, "the one NaN"},
    {TYPE_F8E5M2FNUZ, 57344, 0x7F, "max finite"},
    {TYPE_F8E5M2FNUZ, 0x1p-17, 0x01, "smallest subnormal"},
    {TYPE_F8E5M2FNUZ, INFINITY, 0x80, "no infinity: NaN"},
    {TYPE_F8E4M3B11FNUZ, 30, 0x7F, "max finite"},
    {TYPE_F8E4M3B11FNUZ, 31, 0x80, "tie up to 32: NaN"},
    {TYPE_F8E4M3B11FNUZ, 0x1p-13, 0x01, "smallest subnormal"},
    {TYPE_F8E4M3, 240, 0x77, "max finite"},
    {TYPE_F8E4M3, 248, 0x78, "tie past max: inf"},
    {TYPE_F8E4M3, NAN, 0x7C, "quiet NaN"},
    {TYPE_F8E3M4, 15.5, 0x6F, "max finite"},
    {TYPE_F8E3M4, 15.75, 0x70, "tie past max: inf"},
    {TYPE_F8E3M4, 0x1p-6, 0x01, "smallest subnormal"},
    {TYPE_F8E8M0FNU, 1, 0x7F, "2^0"},
    {TYPE_F8E8M0FNU, 1.5, 0x80, "tie: up (the significand 1 is odd)"},
    {TYPE_F8E8M0FNU, 1.4, 0x7F, "below the tie"},
    {TYPE_F8E8M0FNU, 0x1p127, 0xFE, "max"},
    {TYPE_F8E8M0FNU, 0x3p126, 0xFF, "tie past max: NaN"},
    {TYPE_F8E8M0FNU, 0.0, 0xFF, "no zero: NaN"},
    {TYPE_F8E8M0FNU, -1, 0xFF, "no sign: NaN"},
    {TYPE_F8E8M0FNU, 0x1p-127, 0x00, "the bottom, 2^-127"},
    {TYPE_F8E8M0FNU, 0x1p-140, 0x00, "below the bottom: the bottom's bits"},
    {TYPE_F4E2M1FN, 6, 0x7, "max"},
    {TYPE_F4E2M1FN, 100, 0x7, "saturates"},
    {TYPE_F4E2M1FN, -INFINITY, 0xF, "saturates, signed"},
    {TYPE_F4E2M1FN, 0.25, 0x0, "tie between 0 and 0.5: 0"},
    {TYPE_F4E2M1FN, 0.75, 0x2, "tie between 0.5 and 1: 1"},
    {TYPE_F4E2M1FN, 2.5, 0x4, "tie between 2 and 3: 2"},
    {TYPE_F4E2M1FN, -0.0, 0x8, "-0 kept"},
    {TYPE_F4E2M1FN, NAN, 0x8, "no NaN: ml_dtypes gives -0 bits"},
    {TYPE_F4E2M1FN, -NAN, 0x0, "no NaN: a negative NaN gives +0"},
};

TEST(hand_worked_values_round_to_nearest_even_with_each_types_overflow_rule) {
  for (size_t i = 0; i < sizeof hand_worked / sizeof hand_worked[0]; i++) {
    uint8_t got = double_to_minifloat(hand_worked[i].type, hand_worked[i].value);
    EXPECT(got == hand_worked[i].bits, "%s(%.9g): %s: expected 0x%02x, got 0x%02x",
           type_name(hand_worked[i].type), hand_worked[i].value, hand_worked[i].why,
           hand_worked[i].bits, got);
  }
}

TEST(minifloat_bits_decode_to_their_values) {
  EXPECT(minifloat_to_float(TYPE_F8E4M3FN, 0x7E) == 448, "e4m3fn max");
  EXPECT(isnan(minifloat_to_float(TYPE_F8E4M3FN, 0x7F)), "e4m3fn NaN");
  EXPECT(minifloat_to_float(TYPE_F8E4M3FN, 0x78) == 256, "e4m3fn exponent 1111 is finite");
  EXPECT(isinf(minifloat_to_float(TYPE_F8E5M2, 0xFC)) && minifloat_to_float(TYPE_F8E5M2, 0xFC) < 0,
         "e5m2 -inf");
  EXPECT(minifloat_to_float(TYPE_F8E5M2, 0x01) == 0x1p-16f, "e5m2 smallest subnormal");
  EXPECT(isnan(minifloat_to_float(TYPE_F8E4M3FNUZ, 0x80)), "fnuz 0x80 is NaN");
  EXPECT(minifloat_to_float(TYPE_F8E4M3FNUZ, 0x08) == 0x1p-7f, "e4m3fnuz smallest normal");
  EXPECT(minifloat_to_float(TYPE_F8E8M0FNU, 0x00) == 0x1p-127f, "e8m0 0x00 is 2^-127");
  EXPECT(minifloat_to_float(TYPE_F8E8M0FNU, 0xFE) == 0x1p127f, "e8m0 max");
  EXPECT(minifloat_to_float(TYPE_F4E2M1FN, 0x7) == 6, "f4 max");
  EXPECT(minifloat_to_float(TYPE_F4E2M1FN, 0x1) == 0.5f, "f4 subnormal");
  float neg_zero = minifloat_to_float(TYPE_F4E2M1FN, 0x8);
  EXPECT(neg_zero == 0 && signbit(neg_zero), "f4 -0");
  EXPECT(type_bit_width(TYPE_F4E2M1FN) == 4 && type_bit_width(TYPE_S2) == 2 &&
             type_byte_size(TYPE_S4) == 1,
         "sub-byte widths, one byte each");
}

/* ---- convert and arithmetic through the evaluator ---- */

TEST(convert_from_f64_to_f8_rounds_once) {
  /* 1.0625 + 2^-40 is past the tie between 1 and 1.125; through f32 it
   * would first become the tie itself, then 1. */
  Literal *r = run_ok("HloModule m\nENTRY e {\n"
                      "  c = f64[2] constant({1.0625000000000009, 1.0625})\n"
                      "  ROOT r = f8e4m3fn[2] convert(c)\n}\n");
  if (r) EXPECT(byte_at(r, 0) == 0x39 && byte_at(r, 1) == 0x38, "got 0x%02x 0x%02x", byte_at(r, 0),
                byte_at(r, 1));
  literal_free(r);
}

TEST(convert_between_minifloats_keeps_exact_values_and_rounds_the_rest) {
  Literal *r = run_ok("HloModule m\nENTRY e {\n"
                      "  c = f8e5m2[4] constant({57344, 1.25, 0.0001, -0})\n"
                      "  ROOT r = f8e4m3fn[4] convert(c)\n}\n");
  /* 57344 overflows to NaN; 1.25 is exact; 0.0001 (in e5m2 7*2^-16) is
   * under half of e4m3fn's smallest subnormal, so 0; -0 stays -0. */
  if (r)
    EXPECT(byte_at(r, 0) == 0x7F && byte_at(r, 1) == 0x3A && byte_at(r, 2) == 0x00 &&
               byte_at(r, 3) == 0x80,
           "got %02x %02x %02x %02x", byte_at(r, 0), byte_at(r, 1), byte_at(r, 2), byte_at(r, 3));
  literal_free(r);
}

TEST(f8_arithmetic_is_computed_in_f32_and_rounded_back) {
  Literal *r = run_ok("HloModule m\nENTRY e {\n"
                      "  a = f8e4m3fn[3] constant({1, 448, 16})\n"
                      "  b = f8e4m3fn[3] constant({0.0625, 32, 16})\n"
                      "  ROOT r = f8e4m3fn[3] add(a, b)\n}\n");
  /* 1.0625 ties to 1; 480 is past max: NaN; 32 exact */
  if (r)
    EXPECT(byte_at(r, 0) == 0x38 && byte_at(r, 1) == 0x7F && byte_at(r, 2) == 0x60,
           "got %02x %02x %02x", byte_at(r, 0), byte_at(r, 1), byte_at(r, 2));
  literal_free(r);
}

TEST(total_order_compare_puts_negative_zero_below_zero_on_f8) {
  Literal *r = run_ok("HloModule m\nENTRY e {\n"
                      "  a = f8e4m3fn[2] constant({-0, -1})\n"
                      "  b = f8e4m3fn[2] constant({0, -0.5})\n"
                      "  ROOT r = pred[2] compare(a, b), direction=LT, type=TOTALORDER\n}\n");
  if (r) EXPECT(byte_at(r, 0) == 1 && byte_at(r, 1) == 1, "got %d %d", byte_at(r, 0), byte_at(r, 1));
  literal_free(r);
}

TEST(s4_and_u4_arithmetic_wraps_at_four_bits) {
  Literal *r = run_ok("HloModule m\nENTRY e {\n"
                      "  a = s4[4] constant({7, -8, -8, 5})\n"
                      "  b = s4[4] constant({1, -1, 1, 5})\n"
                      "  s = s4[4] add(a, b)\n"
                      "  p = s4[4] multiply(a, b)\n"
                      "  u = u4[2] constant({15, 9})\n"
                      "  v = u4[2] add(u, u)\n"
                      "  w = s32[3] constant({9, -9, 100})\n"
                      "  c = s4[3] convert(w)\n"
                      "  f = f32[2] constant({100, -100})\n"
                      "  g = s4[2] convert(f)\n"
                      "  ROOT t = (s4[4], s4[4], u4[2], s4[3], s4[2]) tuple(s, p, v, c, g)\n}\n");
  if (!r) return;
  const Literal *s = r->elements[0], *p = r->elements[1], *v = r->elements[2];
  const Literal *c = r->elements[3], *g = r->elements[4];
  EXPECT(literal_get_s64(s, 0) == -8 && literal_get_s64(s, 1) == 7 && literal_get_s64(s, 2) == -7 &&
             literal_get_s64(s, 3) == -6,
         "add: %lld %lld %lld %lld", (long long)literal_get_s64(s, 0), (long long)literal_get_s64(s, 1),
         (long long)literal_get_s64(s, 2), (long long)literal_get_s64(s, 3));
  EXPECT(literal_get_s64(p, 0) == 7 && literal_get_s64(p, 1) == -8 && literal_get_s64(p, 3) == -7,
         "multiply: %lld %lld %lld", (long long)literal_get_s64(p, 0),
         (long long)literal_get_s64(p, 1), (long long)literal_get_s64(p, 3));
  EXPECT(literal_get_s64(v, 0) == 14 && literal_get_s64(v, 1) == 2, "u4 add: %lld %lld",
         (long long)literal_get_s64(v, 0), (long long)literal_get_s64(v, 1));
  EXPECT(literal_get_s64(c, 0) == -7 && literal_get_s64(c, 1) == 7 && literal_get_s64(c, 2) == 4,
         "s32 to s4 wraps: %lld %lld %lld", (long long)literal_get_s64(c, 0),
         (long long)literal_get_s64(c, 1), (long long)literal_get_s64(c, 2));
  EXPECT(literal_get_s64(g, 0) == 7 && literal_get_s64(g, 1) == -8, "f32 to s4 saturates: %lld %lld",
         (long long)literal_get_s64(g, 0), (long long)literal_get_s64(g, 1));
  literal_free(r);
}

TEST(a_narrow_integer_constant_out_of_range_is_a_parse_error) {
  Status st;
  Literal *r = run_text("HloModule m\nENTRY e {\n  ROOT c = s4[2] constant({7, 8})\n}\n", &st);
  EXPECT(r == NULL && st.code == STATUS_PARSE_ERROR && strstr(st.message, "s4"), "got: %s",
         st.message);
  literal_free(r);
}

/* ---- packed layouts ---- */

TEST(element_size_in_a_layout_is_kept_printed_and_sized) {
  Module *m = parse_text("HloModule m\nENTRY e {\n"
                         "  ROOT p = s4[9]{0:E(4)} parameter(0)\n}\n");
  if (!m) return;
  const Shape *s = &m->entry->root->shape;
  EXPECT(s->element_size_bits == 4, "E(4) kept: %d", s->element_size_bits);
  EXPECT(shape_buffer_byte_size(s) == 5 && shape_byte_size(s) == 9, "9 nibbles take 5 bytes: %lld",
         (long long)shape_buffer_byte_size(s));
  StrBuf sb = {0};
  shape_print(&sb, s, true);
  EXPECT(strcmp(sb.data, "s4[9]{0:E(4)}") == 0, "printed %s", sb.data);
  strbuf_free(&sb);
  module_free(m);
  Status st;
  status_clear(&st);
  const char *bad = "HloModule m\nENTRY e {\n  ROOT p = f32[2]{0:E(4)} parameter(0)\n}\n";
  Module *b = parse_module(bad, strlen(bad), "t.hlo", &st);
  EXPECT(b == NULL && strstr(st.message, "E(4)"), "E(4) on f32 refused: %s", st.message);
  module_free(b);
}

TEST(bitcast_honours_packed_nibbles) {
  /* Packed, element k is nibble k of the buffer. Read as unpacked s4 each
   * byte is one element, its low nibble: elements 0, 2, 4, 6. Packed with
   * a column-major layout, the same nibbles fill columns first. */
  Literal *r = run_ok("HloModule m\nENTRY e {\n"
                      "  x = s4[8]{0:E(4)} constant({-8, 7, 1, 2, 3, -1, 0, 5})\n"
                      "  u = s4[4]{0} bitcast(x)\n"
                      "  t = s4[2,4]{0,1:E(4)} bitcast(x)\n"
                      "  ROOT r = (s4[4], s4[2,4]) tuple(u, t)\n}\n");
  if (!r) return;
  const Literal *u = r->elements[0], *t = r->elements[1];
  int64_t want_u[] = {-8, 1, 3, 0}, want_t[] = {-8, 1, 3, 0, 7, 2, -1, 5};
  for (int i = 0; i < 4; i++)
    EXPECT(literal_get_s64(u, i) == want_u[i], "unpacked [%d] = %lld", i, (long long)literal_get_s64(u, i));
  for (int i = 0; i < 8; i++)
    EXPECT(literal_get_s64(t, i) == want_t[i], "column-major [%d] = %lld", i,
           (long long)literal_get_s64(t, i));
  literal_free(r);
}

TEST(bitcast_convert_splits_bytes_into_nibbles_low_first) {
  Literal *r = run_ok("HloModule m\nENTRY e {\n"
                      "  x = s8[2] constant({33, -2})\n"
                      "  n = s4[2,2] bitcast-convert(x)\n"
                      "  b = u8[2] bitcast-convert(n)\n"
                      "  f = f4e2m1fn[2,2] bitcast-convert(x)\n"
                      "  ROOT r = (s4[2,2], u8[2], f4e2m1fn[2,2]) tuple(n, b, f)\n}\n");
  if (!r) return;
  const Literal *n = r->elements[0], *b = r->elements[1], *f = r->elements[2];
  /* 33 = 0x21: nibbles 1, 2; -2 = 0xfe: nibbles 0xe (-2), 0xf (-1) */
  EXPECT(literal_get_s64(n, 0) == 1 && literal_get_s64(n, 1) == 2 && literal_get_s64(n, 2) == -2 &&
             literal_get_s64(n, 3) == -1,
         "nibbles %lld %lld %lld %lld", (long long)literal_get_s64(n, 0),
         (long long)literal_get_s64(n, 1), (long long)literal_get_s64(n, 2),
         (long long)literal_get_s64(n, 3));
  EXPECT(byte_at(b, 0) == 0x21 && byte_at(b, 1) == 0xFE, "rejoined %02x %02x", byte_at(b, 0),
         byte_at(b, 1));
  /* f4 nibbles 0x1 (0.5) and 0x2 (1); 0xe is -4, 0xf is -6 */
  EXPECT(literal_get_f64(f, 0) == 0.5 && literal_get_f64(f, 1) == 1 && literal_get_f64(f, 2) == -4 &&
             literal_get_f64(f, 3) == -6,
         "f4 values %g %g %g %g", literal_get_f64(f, 0), literal_get_f64(f, 1),
         literal_get_f64(f, 2), literal_get_f64(f, 3));
  literal_free(r);
}

/* ---- stochastic-convert ---- */

TEST(stochastic_convert_rounds_up_exactly_when_random_is_below_the_fraction) {
  /* 2.25: fraction 0.25 = 0x40000000 / 2^32, so random 0x3fffffff rounds
   * up and 0x40000000 does not; the magnitude rounds, then the sign. */
  Literal *r = run_ok("HloModule m\nENTRY e {\n"
                      "  x = f32[8] constant({2.25, 2.25, -2.25, -2.25, nan, 1e10, -1e10, 3})\n"
                      "  z = u32[8] constant({1073741823, 1073741824, 0, 4294967295, 0, 0, 0, 0})\n"
                      "  ROOT r = s32[8] stochastic-convert(x, z)\n}\n");
  int64_t want[] = {3, 2, -3, -2, 0, INT32_MAX, INT32_MIN, 3};
  if (r)
    for (int i = 0; i < 8; i++)
      EXPECT(literal_get_s64(r, i) == want[i], "[%d] = %lld, expected %lld", i,
             (long long)literal_get_s64(r, i), (long long)want[i]);
  literal_free(r);
  r = run_ok("HloModule m\nENTRY e {\n"
             "  x = f16[2] constant({1.5, 200})\n"
             "  z = u16[2] constant({32767, 0})\n"
             "  ROOT r = s8[2] stochastic-convert(x, z)\n}\n");
  if (r)
    EXPECT(literal_get_s64(r, 0) == 2 && literal_get_s64(r, 1) == 127, "f16 to s8: %lld %lld",
           (long long)literal_get_s64(r, 0), (long long)literal_get_s64(r, 1));
  literal_free(r);
}

TEST(stochastic_convert_needs_unsigned_random_bits_as_wide_as_the_operand) {
  Status st;
  Literal *r = run_text("HloModule m\nENTRY e {\n"
                        "  x = f32[2] parameter(0)\n  z = u16[2] parameter(1)\n"
                        "  ROOT r = s32[2] stochastic-convert(x, z)\n}\n",
                        &st);
  EXPECT(r == NULL && st.code == STATUS_VERIFY_ERROR && strstr(st.message, "as wide as"),
         "got: %s", st.message);
  literal_free(r);
  r = run_text("HloModule m\nENTRY e {\n"
               "  x = f32[1] constant({1.5})\n  z = u32[1] constant({0})\n"
               "  ROOT r = f16[1] stochastic-convert(x, z)\n}\n",
               &st);
  EXPECT(r == NULL && st.code == STATUS_UNSUPPORTED, "float result refused: %s", st.message);
  literal_free(r);
}

/* ---- text ---- */

TEST(minifloat_constants_print_as_exact_values_and_read_back) {
  const char *text = "HloModule m\nENTRY e {\n"
                     "  ROOT c = f8e4m3fn[5] constant({448, -0, nan, 0.001953125, -1.75})\n}\n";
  Module *m = parse_text(text);
  if (!m) return;
  StrBuf sb = {0};
  print_literal(&sb, m->entry->root->attrs.literal);
  EXPECT(strcmp(sb.data, "{448, -0, nan, 0.001953125, -1.75}") == 0, "printed %s", sb.data);
  strbuf_free(&sb);
  module_free(m);
}

int main(void) {
  RUN(every_minifloat_bit_pattern_survives_a_trip_through_f32);
  RUN(hand_worked_values_round_to_nearest_even_with_each_types_overflow_rule);
  RUN(minifloat_bits_decode_to_their_values);
  RUN(convert_from_f64_to_f8_rounds_once);
  RUN(convert_between_minifloats_keeps_exact_values_and_rounds_the_rest);
  RUN(f8_arithmetic_is_computed_in_f32_and_rounded_back);
  RUN(total_order_compare_puts_negative_zero_below_zero_on_f8);
  RUN(s4_and_u4_arithmetic_wraps_at_four_bits);
  RUN(a_narrow_integer_constant_out_of_range_is_a_parse_error);
  RUN(element_size_in_a_layout_is_kept_printed_and_sized);
  RUN(bitcast_honours_packed_nibbles);
  RUN(bitcast_convert_splits_bytes_into_nibbles_low_first);
  RUN(stochastic_convert_rounds_up_exactly_when_random_is_below_the_fraction);
  RUN(stochastic_convert_needs_unsigned_random_bits_as_wide_as_the_operand);
  RUN(minifloat_constants_print_as_exact_values_and_read_back);
  return test_summary();
}
