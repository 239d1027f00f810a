/* Literals: values as the evaluator and the runtime see them. Array data is
 * dense and row-major in logical index order; tuples hold their elements. */
#include "complex_compat.h"
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* An array's storage. A module whose values are too large is the likely
 * reason memory runs out here, so the failure names the shape. */
static void *array_storage(const Shape *shape) {
  size_t bytes = (size_t)shape_byte_size(shape);
  void *p = mem_try_array_calloc(bytes);
  if (!p) {
    char what[MEM_WHAT_SIZE];
    StrBuf sb = {0};
    shape_print(&sb, shape, false);
    snprintf(what, sizeof what, "%s", sb.data ? sb.data : "an array");
    strbuf_free(&sb);
    mem_fail_for(what, bytes);
  }
  return p;
}

Literal *literal_create(const Shape *shape) {
  Literal *lit = mem_calloc(1, sizeof *lit);
  lit->shape = *shape;
  if (shape->type == TYPE_TUPLE) {
    lit->shape.tuple_shapes = NULL;
    lit->elements = mem_calloc((size_t)shape->tuple_count, sizeof(Literal *));
    for (int i = 0; i < shape->tuple_count; i++)
      lit->elements[i] = literal_create(&shape->tuple_shapes[i]);
  } else {
    lit->data = array_storage(shape);
  }
  return lit;
}

Literal *literal_create_tuple(Literal **elements, int count) {
  Literal *lit = mem_calloc(1, sizeof *lit);
  lit->shape.type = TYPE_TUPLE;
  lit->shape.tuple_count = count;
  lit->elements = mem_calloc((size_t)count, sizeof(Literal *));
  for (int i = 0; i < count; i++) lit->elements[i] = elements[i];
  return lit;
}

Literal *literal_clone(const Literal *src) {
  Literal *lit = mem_calloc(1, sizeof *lit);
  lit->shape = src->shape;
  if (src->shape.type == TYPE_TUPLE) {
    lit->elements = mem_calloc((size_t)src->shape.tuple_count, sizeof(Literal *));
    for (int i = 0; i < src->shape.tuple_count; i++)
      lit->elements[i] = literal_clone(src->elements[i]);
  } else {
    size_t n = (size_t)shape_byte_size(&src->shape);
    lit->data = mem_calloc(n, 1);
    memcpy(lit->data, src->data, n);
  }
  return lit;
}

void literal_free(Literal *lit) {
  if (!lit) return;
  if (lit->shape.type == TYPE_TUPLE) {
    for (int i = 0; i < lit->shape.tuple_count; i++) literal_free(lit->elements[i]);
    mem_free(lit->elements);
  }
  mem_free(lit->data);
  mem_free(lit);
}

#define LOAD(T, lit, i) (((const T *)(lit)->data)[i])
#define STORE(T, lit, i, v) (((T *)(lit)->data)[i] = (T)(v))

/* The 4- and 2-bit integers take a byte each; only the low bits count, so
 * a value is read by sign- or zero-extending them. */
static int64_t load_narrow_int(const Literal *lit, int64_t i) {
  int bits = type_bit_width(lit->shape.type);
  uint64_t v = LOAD(uint8_t, lit, i) & ((1u << bits) - 1);
  if (type_kind(lit->shape.type) == TYPE_KIND_UINT) return (int64_t)v;
  uint64_t top = 1ull << (bits - 1);
  return (int64_t)((v ^ top) - top);
}

double literal_get_f64(const Literal *lit, int64_t i) {
  switch (lit->shape.type) {
  case TYPE_PRED: return LOAD(uint8_t, lit, i) != 0;
  case TYPE_S8: return LOAD(int8_t, lit, i);
  case TYPE_S16: return LOAD(int16_t, lit, i);
  case TYPE_S32: return LOAD(int32_t, lit, i);
  case TYPE_S64: return (double)LOAD(int64_t, lit, i);
  case TYPE_U8: return LOAD(uint8_t, lit, i);
  case TYPE_U16: return LOAD(uint16_t, lit, i);
  case TYPE_U32: return LOAD(uint32_t, lit, i);
  case TYPE_U64: return (double)LOAD(uint64_t, lit, i);
  case TYPE_F16: return half_to_float(LOAD(uint16_t, lit, i));
  case TYPE_BF16: return bf16_to_float(LOAD(uint16_t, lit, i));
  case TYPE_F32: return LOAD(float, lit, i);
  case TYPE_F64: return LOAD(double, lit, i);
  case TYPE_C64: return LOAD(float, lit, 2 * i);   /* the real part */
  case TYPE_C128: return LOAD(double, lit, 2 * i);
  case TYPE_S4: case TYPE_U4: case TYPE_S2: case TYPE_U2: return (double)load_narrow_int(lit, i);
  default:
    if (type_is_minifloat(lit->shape.type))
      return minifloat_to_float(lit->shape.type, LOAD(uint8_t, lit, i));
    return 0;
  }
}

/* Integers are read exactly; floats are truncated (callers that need HLO's
 * saturating convert do it themselves). */
int64_t literal_get_s64(const Literal *lit, int64_t i) {
  switch (lit->shape.type) {
  case TYPE_PRED: return LOAD(uint8_t, lit, i) != 0;
  case TYPE_S8: return LOAD(int8_t, lit, i);
  case TYPE_S16: return LOAD(int16_t, lit, i);
  case TYPE_S32: return LOAD(int32_t, lit, i);
  case TYPE_S64: return LOAD(int64_t, lit, i);
  case TYPE_U8: return LOAD(uint8_t, lit, i);
  case TYPE_U16: return LOAD(uint16_t, lit, i);
  case TYPE_U32: return LOAD(uint32_t, lit, i);
  case TYPE_U64: return (int64_t)LOAD(uint64_t, lit, i);
  case TYPE_S4: case TYPE_U4: case TYPE_S2: case TYPE_U2: return load_narrow_int(lit, i);
  default: {
    double d = literal_get_f64(lit, i);
    if (d != d) return 0;
    if (d >= 9.2233720368547758e18) return INT64_MAX;
    if (d <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)d;
  }
  }
}

uint64_t literal_get_u64(const Literal *lit, int64_t i) {
  if (lit->shape.type == TYPE_U64) return LOAD(uint64_t, lit, i);
  return (uint64_t)literal_get_s64(lit, i);
}

void literal_set_f64(Literal *lit, int64_t i, double v) {
  switch (lit->shape.type) {
  /* one rounding from the double, as a convert from f64 makes */
  case TYPE_F16: STORE(uint16_t, lit, i, double_to_half(v)); break;
  case TYPE_BF16: STORE(uint16_t, lit, i, double_to_bf16(v)); break;
  case TYPE_F32: STORE(float, lit, i, v); break;
  case TYPE_F64: STORE(double, lit, i, v); break;
  case TYPE_C64: case TYPE_C128: literal_set_complex(lit, i, v); break;
  case TYPE_PRED: STORE(uint8_t, lit, i, v != 0); break;
  default:
    /* A minifloat rounds from the double itself: one rounding, as XLA's
     * convert from f64 does. */
    if (type_is_minifloat(lit->shape.type))
      STORE(uint8_t, lit, i, double_to_minifloat(lit->shape.type, v));
    else
      literal_set_s64(lit, i, (int64_t)v);
    break;
  }
}

/* Integers wrap to the element width, as HLO integer arithmetic does. */
void literal_set_s64(Literal *lit, int64_t i, int64_t v) {
  switch (lit->shape.type) {
  case TYPE_PRED: STORE(uint8_t, lit, i, v != 0); break;
  case TYPE_S8: STORE(int8_t, lit, i, (uint8_t)v); break;
  case TYPE_S16: STORE(int16_t, lit, i, (uint16_t)v); break;
  case TYPE_S32: STORE(int32_t, lit, i, (uint32_t)v); break;
  case TYPE_S64: STORE(int64_t, lit, i, v); break;
  case TYPE_U8: STORE(uint8_t, lit, i, v); break;
  case TYPE_U16: STORE(uint16_t, lit, i, v); break;
  case TYPE_U32: STORE(uint32_t, lit, i, v); break;
  case TYPE_U64: STORE(uint64_t, lit, i, v); break;
  /* Stored sign- or zero-extended, so the byte is also the value. */
  case TYPE_S4: case TYPE_S2: {
    int bits = type_bit_width(lit->shape.type);
    uint64_t top = 1ull << (bits - 1), low = (uint64_t)v & ((1ull << bits) - 1);
    STORE(int8_t, lit, i, (int64_t)((low ^ top) - top));
    break;
  }
  case TYPE_U4: case TYPE_U2:
    STORE(uint8_t, lit, i, (uint64_t)v & ((1ull << type_bit_width(lit->shape.type)) - 1));
    break;
  default: literal_set_f64(lit, i, (double)v); break;
  }
}

void literal_set_u64(Literal *lit, int64_t i, uint64_t v) {
  if (type_is_float(lit->shape.type) || type_is_complex(lit->shape.type))
    literal_set_f64(lit, i, (double)v);
  else literal_set_s64(lit, i, (int64_t)v);
}

double _Complex literal_get_complex(const Literal *lit, int64_t i) {
  switch (lit->shape.type) {
  case TYPE_C64: return CMPLX(LOAD(float, lit, 2 * i), LOAD(float, lit, 2 * i + 1));
  case TYPE_C128: return CMPLX(LOAD(double, lit, 2 * i), LOAD(double, lit, 2 * i + 1));
  default: return CMPLX(literal_get_f64(lit, i), 0.0);
  }
}

void literal_set_complex(Literal *lit, int64_t i, double _Complex v) {
  switch (lit->shape.type) {
  case TYPE_C64:
    STORE(float, lit, 2 * i, creal(v));
    STORE(float, lit, 2 * i + 1, cimag(v));
    break;
  case TYPE_C128:
    STORE(double, lit, 2 * i, creal(v));
    STORE(double, lit, 2 * i + 1, cimag(v));
    break;
  default: literal_set_f64(lit, i, creal(v)); break;
  }
}

bool literal_equal(const Literal *a, const Literal *b) {
  if (a->shape.type != b->shape.type) return false;
  if (a->shape.type == TYPE_TUPLE) {
    if (a->shape.tuple_count != b->shape.tuple_count) return false;
    for (int i = 0; i < a->shape.tuple_count; i++)
      if (!literal_equal(a->elements[i], b->elements[i])) return false;
    return true;
  }
  return shape_same_dims(&a->shape, &b->shape) &&
         memcmp(a->data, b->data, (size_t)shape_byte_size(&a->shape)) == 0;
}

/* Leaf `*leaf` (counting down, depth first) of a literal, or NULL. */
const Literal *literal_leaf(const Literal *lit, int64_t *leaf) {
  if (!shape_is_tuple(&lit->shape)) return (*leaf)-- == 0 ? lit : NULL;
  for (int i = 0; i < lit->shape.tuple_count; i++) {
    const Literal *found = literal_leaf(lit->elements[i], leaf);
    if (found || *leaf < 0) return found;
  }
  return NULL;
}
