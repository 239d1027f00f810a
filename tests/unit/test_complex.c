/* Complex numbers and fft: complex constants read and print back bit for
 * bit, the verifier refuses what HLO does not define on complex numbers,
 * and the evaluator's fft keeps its defining properties at a size where a
 * slow transform would show (the corpus checks values against NumPy). */
#include "complex_compat.h"
#include <math.h>
#include <string.h>
#include <time.h>

#include "ir.h"
#include "../test.h"

static Module *parse_text(const char *text, Status *st) {
  status_clear(st);
  return parse_module(text, strlen(text), "inline.hlo", st);
}

static Module *parse_entry(const char *body, Status *st) {
  char text[4096];
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n%s\n}\n", body);
  return parse_text(text, st);
}

/* ---- literals ---- */

/* The constant of the root of a one-constant module. */
static const Literal *root_literal(const Module *m) { return m->entry->root->attrs.literal; }

TEST(complex_constants_print_as_real_imaginary_pairs_and_read_back_bit_exact) {
  static const char text[] =
      "HloModule m\nENTRY e {\n"
      "  a = c64[2,2] constant({{(1, 2), (-0, -3.5)}, {(inf, -inf), (nan, 1e-45)}})\n"
      "  b = c128[3] constant({(0.1, -0.2), (1e308, 4.9406564584124654e-324), (-nan, 0)})\n"
      "  ROOT t = (c64[2,2], c128[3]) tuple(a, b)\n}\n";
  Status st;
  Module *m = parse_text(text, &st);
  EXPECT(m != NULL, "%s", st.message);
  if (!m) return;
  const Literal *a = m->entry->instructions[0]->attrs.literal;
  const Literal *b = m->entry->instructions[1]->attrs.literal;
  const float *af = a->data;
  const double *bd = b->data;
  EXPECT(af[0] == 1 && af[1] == 2 && af[3] == -3.5f && signbit(af[2]), "c64 parts stored real first");
  EXPECT(isinf(af[4]) && af[5] < 0 && isnan(af[6]) && af[7] > 0, "inf, -inf, nan, denormal kept");
  EXPECT(bd[0] == 0.1 && bd[1] == -0.2 && bd[2] == 1e308 && bd[3] > 0, "c128 parts");
  StrBuf sb = {0};
  print_module(&sb, m);
  EXPECT(strstr(sb.data, "{(1, 2), (-0, -3.5)}") && strstr(sb.data, "{(inf, -inf), (nan, 1e-45)}") &&
             strstr(sb.data, "(0.1, -0.2)"),
         "printed: %s", sb.data);
  Module *again = parse_text(sb.data, &st);
  EXPECT(again != NULL, "%s\n%s", st.message, sb.data);
  if (again) {
    EXPECT(literal_equal(a, again->entry->instructions[0]->attrs.literal), "c64 bits differ:\n%s", sb.data);
    EXPECT(literal_equal(b, again->entry->instructions[1]->attrs.literal), "c128 bits differ:\n%s",
           sb.data);
  }
  strbuf_free(&sb);
  module_free(again);
  module_free(m);
}

TEST(a_complex_scalar_constant_is_one_parenthesized_pair) {
  Status st;
  Module *m = parse_entry("  ROOT c = c64[] constant((0.5, -2))", &st);
  EXPECT(m != NULL, "%s", st.message);
  if (m) {
    double complex z = literal_get_complex(root_literal(m), 0);
    EXPECT(creal(z) == 0.5 && cimag(z) == -2, "got (%g, %g)", creal(z), cimag(z));
  }
  module_free(m);
}

TEST(a_complex_constant_without_both_parts_is_a_parse_error) {
  static const char *const bodies[] = {
      "  ROOT c = c64[] constant(1)",
      "  ROOT c = c64[] constant((1))",
      "  ROOT c = c64[2] constant({(1, 2), (3 4)})",
      "  ROOT c = c128[] constant((1, x))",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
    Status st;
    Module *m = parse_entry(bodies[i], &st);
    EXPECT(m == NULL && st.code == STATUS_PARSE_ERROR && st.loc.line == 3, "case %zu: code %d %s", i,
           st.code, st.message);
    module_free(m);
  }
}

/* ---- the verifier ---- */

static void expect_refused(const char *body, const char *fragment) {
  Status st;
  Module *m = parse_entry(body, &st);
  EXPECT(m == NULL, "accepted:\n%s", body);
  EXPECT(st.code == STATUS_VERIFY_ERROR, "code %d: %s", st.code, st.message);
  EXPECT(strstr(st.message, "instruction 'r'") != NULL, "does not name r: %s", st.message);
  EXPECT(strstr(st.message, fragment) != NULL, "lacks '%s': %s", fragment, st.message);
  module_free(m);
}

static void expect_accepted(const char *body) {
  Status st;
  Module *m = parse_entry(body, &st);
  EXPECT(m != NULL, "refused: %s\n%s", st.message, body);
  module_free(m);
}

#define Z "  z = c64[4] parameter(0)\n"

TEST(ops_that_need_an_order_or_a_real_line_refuse_complex_operands) {
  expect_refused(Z "  ROOT r = c64[4] maximum(z, z)", "not defined on complex numbers (c64)");
  expect_refused(Z "  ROOT r = c64[4] minimum(z, z)", "not defined on complex numbers");
  expect_refused(Z "  ROOT r = c64[4] remainder(z, z)", "not defined on complex numbers");
  expect_refused(Z "  ROOT r = c64[4] atan2(z, z)", "not defined on complex numbers");
  expect_refused(Z "  ROOT r = c64[4] floor(z)", "not defined on complex numbers");
  expect_refused(Z "  ROOT r = c64[4] round-nearest-even(z)", "not defined on complex numbers");
  expect_refused(Z "  ROOT r = pred[4] is-finite(z)", "not defined on complex numbers");
  expect_refused(Z "  ROOT r = c64[4] erf(z)", "not defined on complex numbers");
  expect_refused(Z "  ROOT r = c64[4] clamp(z, z, z)", "not defined on complex numbers");
  expect_refused(Z "  ROOT r = pred[4] compare(z, z), direction=LT", "only EQ and NE");
  expect_refused(Z "  ROOT r = pred[4] compare(z, z), direction=EQ, type=TOTALORDER", "comparison type");
}

TEST(complex_to_real_convert_is_refused_in_favour_of_real_imag_or_abs) {
  expect_refused(Z "  ROOT r = f32[4] convert(z)", "use real, imag or abs");
  expect_accepted("  x = s32[4] parameter(0)\n  ROOT r = c64[4] convert(x)");
  expect_accepted(Z "  ROOT r = c128[4] convert(z)");
}

TEST(abs_real_and_imag_of_complex_give_the_component_type) {
  expect_accepted(Z "  ROOT r = f32[4] abs(z)");
  expect_refused(Z "  ROOT r = c64[4] abs(z)", "does not match the inferred");
  expect_accepted("  z = c128[4] parameter(0)\n  ROOT r = f64[4] imag(z)");
  /* On real floats real is the value and imag zero, both of the same type. */
  expect_accepted("  x = f32[4] parameter(0)\n  ROOT r = f32[4] imag(x)");
  expect_refused("  x = s32[4] parameter(0)\n  ROOT r = s32[4] real(x)", "complex or floating-point");
}

TEST(complex_takes_two_f32_or_two_f64_parts_of_one_shape) {
  expect_accepted("  a = f64[2] parameter(0)\n  ROOT r = c128[2] complex(a, a)");
  expect_refused("  a = f32[2] parameter(0)\n  ROOT r = c128[2] complex(a, a)", "does not match the inferred");
  expect_refused("  a = s32[2] parameter(0)\n  ROOT r = c64[2] complex(a, a)", "needs f32 or f64 parts");
  expect_refused("  a = f32[2] parameter(0)\n  b = f64[2] parameter(1)\n  ROOT r = c64[2] complex(a, b)",
                 "same element type");
}

TEST(dot_of_complex_operands_has_a_complex_result) {
  expect_accepted("  a = c64[2,3] parameter(0)\n  b = c64[3] parameter(1)\n"
                  "  ROOT r = c64[2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  expect_refused("  a = c64[2,3] parameter(0)\n  b = c64[3] parameter(1)\n"
                 "  ROOT r = f32[2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                 "cannot give a f32 result");
}

TEST(fft_shapes_follow_the_fft_type_and_lengths) {
  expect_accepted("  x = c64[3,8] parameter(0)\n  ROOT r = c64[3,8] fft(x), fft_type=FFT, fft_length={8}");
  expect_accepted("  x = f32[3,10] parameter(0)\n  ROOT r = c64[3,6] fft(x), fft_type=RFFT, fft_length={10}");
  expect_accepted("  x = c128[4,5] parameter(0)\n  ROOT r = f64[4,9] fft(x), fft_type=IRFFT, fft_length={4,9}");
  expect_refused("  x = c64[3,8] parameter(0)\n  ROOT r = c64[3,8] fft(x), fft_type=FFT, fft_length={4}",
                 "fft_length needs 4");
  expect_refused("  x = c64[3,8] parameter(0)\n  ROOT r = c64[3,5] fft(x), fft_type=RFFT, fft_length={8}",
                 "RFFT needs a f32 or f64 operand");
  expect_refused("  x = f32[8] parameter(0)\n  ROOT r = f32[8] fft(x), fft_type=IFFT, fft_length={8}",
                 "needs a complex operand");
  expect_refused("  x = c64[4,6] parameter(0)\n  ROOT r = f32[4,8] fft(x), fft_type=IRFFT, fft_length={4,8}",
                 "fft_length needs 5");
  expect_refused("  x = c64[1,2,2,2] parameter(0)\n"
                 "  ROOT r = c64[1,2,2,2] fft(x), fft_type=FFT, fft_length={1,2,2,2}",
                 "1 to 3 lengths");
  expect_refused("  x = c64[2] parameter(0)\n  ROOT r = c64[2,2] fft(x), fft_type=FFT, fft_length={2,2}",
                 "below the 2 transformed");
}

TEST(fft_needs_its_type_and_lengths) {
  Status st;
  Module *m = parse_entry("  x = c64[8] parameter(0)\n  ROOT r = c64[8] fft(x), fft_length={8}", &st);
  EXPECT(m == NULL && strstr(st.message, "fft_type=") != NULL, "%s", st.message);
  module_free(m);
  m = parse_entry("  x = c64[8] parameter(0)\n  ROOT r = c64[8] fft(x), fft_type=DCT, fft_length={8}", &st);
  EXPECT(m == NULL && st.code == STATUS_PARSE_ERROR, "%s", st.message);
  module_free(m);
}

/* ---- the evaluator ---- */

static Literal *run1(const char *text, Literal *arg, Status *st) {
  Module *m = parse_text(text, st);
  if (!m) return NULL;
  Literal *out = eval_module(m, &arg, 1, st);
  module_free(m);
  return out;
}

TEST(imag_of_a_real_operand_is_zero_and_real_is_the_operand) {
  static const char text[] =
      "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  re = f32[3] real(x)\n"
      "  im = f32[3] imag(x)\n  ROOT t = (f32[3], f32[3]) tuple(re, im)\n}\n";
  Shape s = shape_array(TYPE_F32, 1, (int64_t[]){3});
  Literal *x = literal_create(&s);
  for (int i = 0; i < 3; i++) literal_set_f64(x, i, i - 1.5);
  Status st;
  Literal *out = run1(text, x, &st);
  EXPECT(out != NULL, "%s", st.message);
  for (int i = 0; out && i < 3; i++) {
    EXPECT(literal_get_f64(out->elements[0], i) == i - 1.5, "real[%d]", i);
    EXPECT(literal_get_f64(out->elements[1], i) == 0, "imag[%d]", i);
  }
  literal_free(out);
  literal_free(x);
}

/* The roots of unity at quarter turns are exact, so a length-4 FFT of
 * integers is exact: X = (10, -2+2i, -2, -2-2i) for x = (1, 2, 3, 4). */
TEST(fft_of_small_integers_is_exact) {
  static const char text[] = "HloModule m\nENTRY e {\n  x = c64[4] parameter(0)\n"
                             "  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={4}\n}\n";
  Shape s = shape_array(TYPE_C64, 1, (int64_t[]){4});
  Literal *x = literal_create(&s);
  for (int i = 0; i < 4; i++) literal_set_f64(x, i, i + 1);
  Status st;
  Literal *out = run1(text, x, &st);
  EXPECT(out != NULL, "%s", st.message);
  const double complex want[4] = {10, CMPLX(-2, 2), -2, CMPLX(-2, -2)};
  for (int k = 0; out && k < 4; k++) {
    double complex got = literal_get_complex(out, k);
    EXPECT(got == want[k], "X[%d] = (%.17g, %.17g)", k, creal(got), cimag(got));
  }
  literal_free(out);
  literal_free(x);
}

/* a = (4, 2+2i / 2-2i, 6) = U^H U with U = (2, 1+i / 0, 2), exactly. With
 * lower=false only the upper triangle is read (the lower holds garbage) and
 * the lower triangle of the result is zero. */
TEST(cholesky_upper_of_a_hermitian_matrix_gives_u_with_a_equal_u_adjoint_u) {
  static const char text[] = "HloModule m\nENTRY e {\n  a = c64[2,2] parameter(0)\n"
                             "  ROOT u = c64[2,2] cholesky(a), lower=false\n}\n";
  Shape s = shape_array(TYPE_C64, 2, (int64_t[]){2, 2});
  Literal *a = literal_create(&s);
  const double complex in[4] = {4, CMPLX(2, 2), CMPLX(99, 99), 6};
  for (int i = 0; i < 4; i++) literal_set_complex(a, i, in[i]);
  Status st;
  Literal *out = run1(text, a, &st);
  EXPECT(out != NULL, "%s", st.message);
  const double complex want[4] = {2, CMPLX(1, 1), 0, 2};
  for (int k = 0; out && k < 4; k++) {
    double complex got = literal_get_complex(out, k);
    EXPECT(got == want[k], "U[%d] = (%.17g, %.17g)", k, creal(got), cimag(got));
  }
  literal_free(out);
  literal_free(a);
}

/* Batch element 1, (1 2i / -2i 1), is Hermitian but indefinite (its
 * eigenvalues are 3 and -1): as for real operands, that matrix alone comes
 * out all NaN; element 0, (4), factors to (2). */
TEST(cholesky_of_an_indefinite_hermitian_matrix_is_nan_for_that_matrix_only) {
  static const char text[] = "HloModule m\nENTRY e {\n  a = c128[2,2,2] parameter(0)\n"
                             "  ROOT l = c128[2,2,2] cholesky(a), lower=true\n}\n";
  Shape s = shape_array(TYPE_C128, 3, (int64_t[]){2, 2, 2});
  Literal *a = literal_create(&s);
  const double complex in[8] = {4, 0, 0, 9, 1, CMPLX(0, 2), CMPLX(0, -2), 1};
  for (int i = 0; i < 8; i++) literal_set_complex(a, i, in[i]);
  Status st;
  Literal *out = run1(text, a, &st);
  EXPECT(out != NULL, "%s", st.message);
  const double complex first[4] = {2, 0, 0, 3};
  for (int k = 0; out && k < 4; k++)
    EXPECT(literal_get_complex(out, k) == first[k], "L0[%d]", k);
  for (int k = 4; out && k < 8; k++) {
    double complex got = literal_get_complex(out, k);
    EXPECT(isnan(creal(got)) && isnan(cimag(got)), "L1[%d] = (%g, %g)", k - 4, creal(got), cimag(got));
  }
  literal_free(out);
  literal_free(a);
}

/* 64x64x64 forward then inverse: the round trip gives the input back, the
 * forward transform of x keeps Parseval's sum |X|^2 = N sum |x|^2, and it
 * takes seconds, not minutes (a plain O(N^2) DFT per axis would not). */
TEST(fft_of_64_cubed_round_trips_and_keeps_parseval_in_seconds) {
  static const char text[] =
      "HloModule m\nENTRY e {\n  x = c128[64,64,64] parameter(0)\n"
      "  f = c128[64,64,64] fft(x), fft_type=FFT, fft_length={64,64,64}\n"
      "  b = c128[64,64,64] fft(f), fft_type=IFFT, fft_length={64,64,64}\n"
      "  ROOT t = (c128[64,64,64], c128[64,64,64]) tuple(f, b)\n}\n";
  Shape s = shape_array(TYPE_C128, 3, (int64_t[]){64, 64, 64});
  Literal *x = literal_create(&s);
  int64_t n = shape_element_count(&s);
  uint32_t seed = 12345;
  double energy = 0;
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    double re = (seed >> 8) / 16777216.0 - 0.5;
    seed = seed * 1664525u + 1013904223u;
    double im = (seed >> 8) / 16777216.0 - 0.5;
    literal_set_complex(x, i, CMPLX(re, im));
    energy += re * re + im * im;
  }
  Status st;
  clock_t start = clock();
  Literal *out = run1(text, x, &st);
  double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
  EXPECT(out != NULL, "%s", st.message);
  if (out) {
    double worst = 0, spectrum = 0;
    for (int64_t i = 0; i < n; i++) {
      worst = fmax(worst, cabs(literal_get_complex(out->elements[1], i) - literal_get_complex(x, i)));
      double complex v = literal_get_complex(out->elements[0], i);
      spectrum += creal(v) * creal(v) + cimag(v) * cimag(v);
    }
    EXPECT(worst < 1e-12, "round trip differs by %g", worst);
    EXPECT(fabs(spectrum / (double)n - energy) < 1e-9 * energy, "Parseval: %g vs %g", spectrum / (double)n,
           energy);
  }
  EXPECT(seconds < 20, "took %.1f s", seconds);
  literal_free(out);
  literal_free(x);
}

int main(void) {
  RUN(complex_constants_print_as_real_imaginary_pairs_and_read_back_bit_exact);
  RUN(a_complex_scalar_constant_is_one_parenthesized_pair);
  RUN(a_complex_constant_without_both_parts_is_a_parse_error);
  RUN(ops_that_need_an_order_or_a_real_line_refuse_complex_operands);
  RUN(complex_to_real_convert_is_refused_in_favour_of_real_imag_or_abs);
  RUN(abs_real_and_imag_of_complex_give_the_component_type);
  RUN(complex_takes_two_f32_or_two_f64_parts_of_one_shape);
  RUN(dot_of_complex_operands_has_a_complex_result);
  RUN(fft_shapes_follow_the_fft_type_and_lengths);
  RUN(fft_needs_its_type_and_lengths);
  RUN(imag_of_a_real_operand_is_zero_and_real_is_the_operand);
  RUN(fft_of_small_integers_is_exact);
  RUN(cholesky_upper_of_a_hermitian_matrix_gives_u_with_a_equal_u_adjoint_u);
  RUN(cholesky_of_an_indefinite_hermitian_matrix_is_nan_for_that_matrix_only);
  RUN(fft_of_64_cubed_round_trips_and_keeps_parseval_in_seconds);
  return test_summary();
}
