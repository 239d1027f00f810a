/* Literals filled with values drawn from a seed: the inputs axle-run makes
 * when none are given, and the constants XLA printed elided ({...}). One
 * generator for both, so a seed means the same values everywhere. */
#include <complex.h>

#include "ir.h"

/* splitmix64: tiny, fast, and the same sequence on every host. */
uint64_t literal_random_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void literal_fill_random(Literal *lit, uint64_t *state) {
  if (shape_is_tuple(&lit->shape)) {
    for (int i = 0; i < lit->shape.tuple_count; i++) literal_fill_random(lit->elements[i], state);
    return;
  }
  int64_t n = shape_element_count(&lit->shape);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = literal_random_next(state);
    switch (type_kind(lit->shape.type)) {
    case TYPE_KIND_SINT: literal_set_s64(lit, i, (int64_t)(r % 17) - 8); break;
    case TYPE_KIND_UINT: literal_set_s64(lit, i, (int64_t)(r % 9)); break;
    case TYPE_KIND_PRED: literal_set_s64(lit, i, (int64_t)(r & 1)); break;
    case TYPE_KIND_COMPLEX: {  /* both parts uniform in [-1, 1) */
      double re = (double)(r >> 11) * 0x1p-52 - 1.0;
      double im = (double)(literal_random_next(state) >> 11) * 0x1p-52 - 1.0;
      literal_set_complex(lit, i, re + im * _Complex_I);
      break;
    }
    default: literal_set_f64(lit, i, (double)(r >> 11) * 0x1p-52 - 1.0); break;  /* floats */
    }
  }
}
