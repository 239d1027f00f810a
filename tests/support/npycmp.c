/* npycmp: compares an output .npy with its golden, for tests/run.sh.
 *
 *   npycmp GOLDEN ACTUAL [RTOL ATOL] [bf16]
 *
 * The dtype and shape must match. Floats match when
 *   |actual - golden| <= atol + rtol * |golden|,
 * NaN matches NaN, and infinities must match exactly. The defaults are
 * rtol=1e-5 atol=1e-6 for f32/f64 and 1e-2 for both with f16 and bf16.
 * Complex values match when each part does, the tolerance scaled by the
 * golden's magnitude |g| (so that a part near zero in a large value, as
 * FFT results have, is held to the value's precision, not its own).
 * Integers and pred must be equal. bf16 has no NumPy dtype and is stored as
 * <u2; the word "bf16" says to read u16 data as bfloat16 bits (a corpus
 * tolerance file can hold "1e-2 1e-2 bf16").
 *
 * Exit 0 when equal; 1 with the first mismatches and their count when not;
 * 2 for bad usage or unreadable files. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "runtime/npy.h"

enum { SHOWN_MISMATCHES = 8 };

static void print_index(int64_t linear, const Shape *s) {
  int64_t strides[AXLE_MAX_RANK];
  shape_strides(s, strides);
  printf("[");
  for (int d = 0; d < s->rank; d++) {
    printf("%s%lld", d ? "," : "", (long long)(linear / strides[d]));
    linear %= strides[d];
  }
  printf("]");
}

static double element_as_float(const Literal *lit, int64_t i, bool as_bf16) {
  if (as_bf16) return bf16_to_float(((const uint16_t *)lit->data)[i]);
  return literal_get_f64(lit, i);
}

static bool floats_match(double g, double a, double rtol, double atol) {
  if (isnan(g) || isnan(a)) return isnan(g) && isnan(a);
  if (isinf(g) || isinf(a)) return g == a;
  return fabs(a - g) <= atol + rtol * fabs(g);
}

static bool complex_parts_match(double g, double a, double scale, double rtol, double atol) {
  if (isnan(g) || isnan(a)) return isnan(g) && isnan(a);
  if (isinf(g) || isinf(a)) return g == a;
  return fabs(a - g) <= atol + rtol * scale;
}

static bool complex_match(const Literal *g, const Literal *a, int64_t i, double rtol, double atol) {
  double _Complex x = literal_get_complex(g, i), y = literal_get_complex(a, i);
  double scale = isfinite(cabs(x)) ? cabs(x) : 0.0;
  return complex_parts_match(creal(x), creal(y), scale, rtol, atol) &&
         complex_parts_match(cimag(x), cimag(y), scale, rtol, atol);
}

/* Integers compare through their 64-bit patterns, so u64 and s64 are exact. */
static bool integers_match(const Literal *g, const Literal *a, int64_t i) {
  return literal_get_u64(g, i) == literal_get_u64(a, i);
}

static void print_value(const Literal *lit, int64_t i, bool as_float, bool as_bf16) {
  if (type_is_complex(lit->shape.type)) {
    double _Complex z = literal_get_complex(lit, i);
    printf("(%.9g, %.9g)", creal(z), cimag(z));
  } else if (as_float) printf("%.9g", element_as_float(lit, i, as_bf16));
  else if (type_kind(lit->shape.type) == TYPE_KIND_UINT) printf("%llu", (unsigned long long)literal_get_u64(lit, i));
  else printf("%lld", (long long)literal_get_s64(lit, i));
}

static int compare(const Literal *g, const Literal *a, double rtol, double atol, bool as_bf16) {
  bool as_float = type_is_float(g->shape.type) || as_bf16;
  int64_t count = shape_element_count(&g->shape), bad = 0;
  for (int64_t i = 0; i < count; i++) {
    bool ok = type_is_complex(g->shape.type) ? complex_match(g, a, i, rtol, atol)
            : as_float ? floats_match(element_as_float(g, i, as_bf16),
                                      element_as_float(a, i, as_bf16), rtol, atol)
                       : integers_match(g, a, i);
    if (ok) continue;
    if (bad++ < SHOWN_MISMATCHES) {
      printf("  at ");
      print_index(i, &g->shape);
      printf(": expected ");
      print_value(g, i, as_float, as_bf16);
      printf(", actual ");
      print_value(a, i, as_float, as_bf16);
      printf("\n");
    }
  }
  if (bad == 0) return 0;
  printf("%lld of %lld elements differ (rtol=%g atol=%g)\n", (long long)bad, (long long)count,
         rtol, atol);
  return 1;
}

static void print_shape(const char *label, const Literal *lit, bool as_bf16) {
  StrBuf sb = {0};
  Shape s = lit->shape;
  if (as_bf16 && s.type == TYPE_U16) s.type = TYPE_BF16;
  shape_print(&sb, &s, false);
  printf("%s %s", label, sb.data);
  strbuf_free(&sb);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: npycmp GOLDEN ACTUAL [RTOL ATOL] [bf16]\n");
    return 2;
  }
  double tol[2];
  int tol_count = 0;
  bool as_bf16 = false;
  for (int i = 3; i < argc; i++) {
    char *end;
    if (strcmp(argv[i], "bf16") == 0) { as_bf16 = true; continue; }
    double v = strtod(argv[i], &end);
    if (*end || end == argv[i] || tol_count == 2 || v < 0) {
      fprintf(stderr, "npycmp: bad argument '%s'\n", argv[i]);
      return 2;
    }
    tol[tol_count++] = v;
  }
  if (tol_count == 1) {
    fprintf(stderr, "npycmp: give both RTOL and ATOL\n");
    return 2;
  }
  Status st;
  status_clear(&st);
  Literal *golden = npy_read(argv[1], &st);
  Literal *actual = golden ? npy_read(argv[2], &st) : NULL;
  if (!actual) {
    status_print(&st, stdout);
    literal_free(golden);
    return 2;
  }
  int rc;
  as_bf16 = as_bf16 && golden->shape.type == TYPE_U16;
  if (golden->shape.type != actual->shape.type || !shape_same_dims(&golden->shape, &actual->shape)) {
    print_shape("expected", golden, as_bf16);
    print_shape(", actual", actual, as_bf16);
    printf("\n");
    rc = 1;
  } else {
    bool half = golden->shape.type == TYPE_F16 || as_bf16;
    double rtol = tol_count ? tol[0] : half ? 1e-2 : 1e-5;
    double atol = tol_count ? tol[1] : half ? 1e-2 : 1e-6;
    rc = compare(golden, actual, rtol, atol, as_bf16);
  }
  literal_free(golden);
  literal_free(actual);
  return rc;
}
