/* Element types, shapes and the 16-bit float conversions. */
#include <math.h>
#include <string.h>

#include "ir.h"
#include "../test.h"

TEST(half_round_trips_every_finite_value) {
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00) continue;  /* inf and nan */
    uint16_t back = float_to_half(half_to_float((uint16_t)h));
    if (back != h && bad++ < 3) EXPECT(back == h, "0x%04x came back as 0x%04x", h, back);
  }
  EXPECT(bad == 0, "%d values did not round-trip", bad);
}

TEST(half_rounds_to_nearest_even) {
  EXPECT(float_to_half(65504.0f) == 0x7bff, "max half");
  EXPECT(float_to_half(65520.0f) == 0x7c00, "65520 rounds to inf");
  EXPECT(float_to_half(1.0f + 1.0f / 2048) == 0x3c00, "tie rounds to even (down)");
  EXPECT(float_to_half(1.0f + 3.0f / 2048) == 0x3c02, "tie rounds to even (up)");
  EXPECT(float_to_half(5.9604645e-8f) == 0x0001, "smallest subnormal");
  EXPECT(isnan(half_to_float(float_to_half(NAN))), "nan stays nan");
}

TEST(bf16_rounds_to_nearest_even) {
  EXPECT(float_to_bf16(1.0f) == 0x3f80, "1.0");
  EXPECT(bf16_to_float(float_to_bf16(3.140625f)) == 3.140625f, "exact value kept");
  EXPECT(isnan(bf16_to_float(float_to_bf16(NAN))), "nan stays nan");
}

/* f64 -> f16/bf16 is one rounding: through f32 (round to nearest) the
 * values just above a tie land on it and round to even, the wrong way. */
TEST(f64_to_f16_and_bf16_rounds_once) {
  double above_f16_tie = 1 + ldexp(1, -11) + ldexp(1, -40), below_f16_tie = 1 + ldexp(1, -11) - ldexp(1, -40);
  EXPECT(double_to_half(above_f16_tie) == 0x3c01, "1 + 2^-11 + 2^-40 gave 0x%04x, expected 0x3c01",
         double_to_half(above_f16_tie));
  EXPECT(double_to_half(below_f16_tie) == 0x3c00, "1 + 2^-11 - 2^-40 gave 0x%04x, expected 0x3c00",
         double_to_half(below_f16_tie));
  EXPECT(double_to_half(1 + ldexp(1, -11)) == 0x3c00, "the tie itself goes to even");
  EXPECT(double_to_half(ldexp(1, -25) * (1 + ldexp(1, -40))) == 0x0001, "just above half the smallest subnormal");
  EXPECT(double_to_half(65520 - ldexp(1, -30)) == 0x7bff && double_to_half(65520) == 0x7c00, "overflow threshold");
  EXPECT(double_to_half(1e300) == 0x7c00 && double_to_half(-1e300) == 0xfc00, "past f32's range: infinity");
  double above_bf16_tie = 1 + ldexp(1, -8) + ldexp(1, -40);
  EXPECT(double_to_bf16(above_bf16_tie) == 0x3f81, "1 + 2^-8 + 2^-40 gave 0x%04x, expected 0x3f81",
         double_to_bf16(above_bf16_tie));
  EXPECT(double_to_bf16(1 + ldexp(1, -8)) == 0x3f80, "the tie itself goes to even");
  EXPECT(isnan(bf16_to_float(double_to_bf16(NAN))) && isnan(half_to_float(double_to_half(-NAN))), "NaN stays NaN");
}

TEST(shape_prints_with_layout) {
  int64_t dims[] = {2, 3};
  Shape s = shape_array(TYPE_F32, 2, dims);
  StrBuf sb = {0};
  shape_print(&sb, &s, true);
  EXPECT(strcmp(sb.data, "f32[2,3]{1,0}") == 0, "got %s", sb.data);
  strbuf_free(&sb);
  EXPECT(shape_element_count(&s) == 6, "count");
  EXPECT(shape_byte_size(&s) == 24, "bytes");
}

TEST(type_names_round_trip) {
  for (int t = 0; t < TYPE_TUPLE; t++) {
    ElementType back;
    const char *n = type_name((ElementType)t);
    EXPECT(type_from_name(n, strlen(n), &back) && back == (ElementType)t, "%s", n);
  }
}

/* A module holds one Instruction per HLO line; the big attribute groups
 * (window, dim_labels, padding) are kept out of line so that a 200,000-line
 * module does not take gigabytes. Growth past this bound should be a choice. */
TEST(instruction_stays_small) {
  EXPECT(sizeof(Instruction) < 512, "sizeof(Instruction) is %zu bytes; move big attribute groups out of line",
         sizeof(Instruction));
}

int main(void) {
  RUN(half_round_trips_every_finite_value);
  RUN(half_rounds_to_nearest_even);
  RUN(bf16_rounds_to_nearest_even);
  RUN(f64_to_f16_and_bf16_rounds_once);
  RUN(shape_prints_with_layout);
  RUN(type_names_round_trip);
  RUN(instruction_stays_small);
  return test_summary();
}
