/* Comparing a kernel's outputs with the kernel interpreter's, within a
 * tolerance the caller states, and moving buffers between a literal's
 * logical row-major order and a layout's physical one. Shared by the
 * simulator tests (gpu_test_support.h) and the GPU machine's
 * tests/gpu/gpu_kernels.c; it needs no simulator. Header-only, static
 * inline. */
#ifndef AXLE_TESTS_OUTPUT_COMPARE_H
#define AXLE_TESTS_OUTPUT_COMPARE_H

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"

/* ---- layouts ---- */

/* The physical position of logical row-major element `logical` of s. */
static inline int64_t physical_position(const Shape *s, int64_t logical) {
  int64_t index[AXLE_MAX_RANK];
  for (int d = s->rank - 1; d >= 0; d--) index[d] = logical % s->dims[d], logical /= s->dims[d];
  int64_t offset = 0;
  for (int j = s->rank - 1; j >= 0; j--) offset = offset * s->dims[s->minor_to_major[j]] + index[s->minor_to_major[j]];
  return offset;
}

/* Between a literal's logical order and a buffer's physical one. */
static inline void layout_copy(const Literal *lit, char *physical, bool to_physical) {
  size_t size = (size_t)type_byte_size(lit->shape.type);
  int64_t n = shape_element_count(&lit->shape);
  for (int64_t i = 0; i < n; i++) {
    char *p = physical + (size_t)physical_position(&lit->shape, i) * size, *l = (char *)lit->data + (size_t)i * size;
    if (to_physical) memcpy(p, l, size);
    else memcpy(l, p, size);
  }
}

/* ---- comparing outputs ---- */

/* One rounding error of a float type (of its parts, for a complex type);
 * 0 for the others. */
static inline double type_epsilon(ElementType t) {
  switch (t) {
  case TYPE_F16: return 0x1p-10;
  case TYPE_BF16: return 0x1p-7;
  case TYPE_F32: case TYPE_C64: return 0x1p-23;
  case TYPE_F64: case TYPE_C128: return 0x1p-52;
  default: return 0;
  }
}

/* How far got may be from want. The same bits always match and integers
 * must always have them; each field below that is 0 (or false) allows
 * nothing more. eps is type_epsilon of the output's type. */
typedef struct OutputTolerance {
  bool any_nan;                  /* a NaN matches any NaN (PTX's max.NaN returns the canonical one) */
  int64_t sum_roundings;         /* floats: |a - b| <= n eps max(1, |a|, |b|): sums added in another order */
  int64_t math_roundings;        /* floats: |a - b| <= n eps max(|a|, |b|): math functions, ulps apart */
  double complex_part_relative;  /* complex: each part within this times the larger of its two values */
  int64_t complex_roundings;     /* complex: each part within n eps max(|a|, |b|), the complex magnitudes */
} OutputTolerance;

/* Whether x and y, one part of two complex values, match under tol;
 * magnitude is the larger of the two values' magnitudes. */
static inline bool complex_part_close(double x, double y, double magnitude, double eps, const OutputTolerance *tol) {
  if (x == y || (tol->any_nan && isnan(x) && isnan(y))) return true;
  if (tol->complex_part_relative > 0 && fabs(x - y) <= tol->complex_part_relative * fmax(fabs(x), fabs(y))) return true;
  return tol->complex_roundings > 0 && fabs(x - y) <= (double)tol->complex_roundings * eps * magnitude;
}

/* Whether got matches want under tol; why says where it does not. */
static inline bool outputs_match(const Literal *want, const Literal *got, const OutputTolerance *tol, char *why,
                                 size_t size) {
  int64_t n = shape_element_count(&want->shape);
  ElementType t = want->shape.type;
  size_t bytes = (size_t)type_byte_size(t);
  double eps = type_epsilon(t);
  for (int64_t i = 0; i < n; i++) {
    if (memcmp((char *)want->data + (size_t)i * bytes, (char *)got->data + (size_t)i * bytes, bytes) == 0) continue;
    if (type_is_complex(t)) {
      double _Complex a = literal_get_complex(want, i), b = literal_get_complex(got, i);
      double magnitude = fmax(cabs(a), cabs(b));
      if (complex_part_close(creal(a), creal(b), magnitude, eps, tol) &&
          complex_part_close(cimag(a), cimag(b), magnitude, eps, tol))
        continue;
      snprintf(why, size, "element %lld: wanted (%.9g, %.9g), got (%.9g, %.9g)", (long long)i, creal(a), cimag(a),
               creal(b), cimag(b));
    } else if (type_is_float(t)) {
      double a = literal_get_f64(want, i), b = literal_get_f64(got, i);
      if (tol->any_nan && isnan(a) && isnan(b)) continue;
      double scale = fmax(1.0, fmax(fabs(a), fabs(b)));
      if (tol->sum_roundings > 0 && fabs(a - b) <= (double)tol->sum_roundings * eps * scale) continue;
      if (tol->math_roundings > 0 && fabs(a - b) <= (double)tol->math_roundings * eps * fmax(fabs(a), fabs(b)))
        continue;
      snprintf(why, size, "element %lld: wanted %.9g (%a), got %.9g (%a)", (long long)i, a, a, b, b);
    } else {
      snprintf(why, size, "element %lld: wanted %lld, got %lld", (long long)i, (long long)literal_get_s64(want, i),
               (long long)literal_get_s64(got, i));
    }
    return false;
  }
  return true;
}

#endif
