/* Element types and shapes: sizes, names, layouts, the two 16-bit float
 * formats (IEEE half and bfloat16) and the 8- and 4-bit "minifloats". */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "ir.h"

typedef struct TypeInfo {
  const char *name;
  int byte_size;
  TypeKind kind;
} TypeInfo;

static const TypeInfo type_table[] = {
#define AXLE_TYPE_ROW(e, name, size, kind) {name, size, kind},
    AXLE_ELEMENT_TYPES(AXLE_TYPE_ROW)
#undef AXLE_TYPE_ROW
};
static_assert(sizeof type_table / sizeof type_table[0] == TYPE_TOKEN,
              "one row per element type");

const char *type_name(ElementType t) {
  if (t < TYPE_TOKEN) return type_table[t].name;
  return t == TYPE_TOKEN ? "token" : "tuple";
}

/* token is spelled like an element type (token[]) though it holds nothing. */
bool type_from_name(const char *s, size_t n, ElementType *out) {
  for (int t = 0; t < TYPE_TOKEN; t++) {
    if (strlen(type_table[t].name) == n && memcmp(type_table[t].name, s, n) == 0) {
      *out = (ElementType)t;
      return true;
    }
  }
  if (n == 5 && memcmp(s, "token", 5) == 0) {
    *out = TYPE_TOKEN;
    return true;
  }
  return false;
}

int type_byte_size(ElementType t) { return t < TYPE_TOKEN ? type_table[t].byte_size : 0; }
TypeKind type_kind(ElementType t) { assert(t < TYPE_TOKEN); return type_table[t].kind; }
bool type_is_float(ElementType t) { return t < TYPE_TOKEN && type_table[t].kind == TYPE_KIND_FLOAT; }
bool type_is_integer(ElementType t) {
  return t < TYPE_TOKEN &&
         (type_table[t].kind == TYPE_KIND_SINT || type_table[t].kind == TYPE_KIND_UINT);
}
/* The sub-byte types still take a byte each in a literal. */
int type_bit_width(ElementType t) {
  switch (t) {
  case TYPE_S4: case TYPE_U4: case TYPE_F4E2M1FN: return 4;
  case TYPE_S2: case TYPE_U2: return 2;
  default: return 8 * type_byte_size(t);
  }
}
bool type_is_complex(ElementType t) {
  return t < TYPE_TUPLE && type_table[t].kind == TYPE_KIND_COMPLEX;
}
ElementType type_complex_component(ElementType t) {
  return t == TYPE_C64 ? TYPE_F32 : t == TYPE_C128 ? TYPE_F64 : t;
}
ElementType type_complex_of(ElementType component) {
  return component == TYPE_F32 ? TYPE_C64 : component == TYPE_F64 ? TYPE_C128 : component;
}

/* ---- 16-bit floats ---- */

static uint32_t float_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13)); /* inf, nan */
  if (exp == 0) {
    /* subnormal half: man * 2^-24, exact in float */
    float v = (float)man * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t float_to_half(float f) {
  uint32_t u = float_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) /* inf or nan; keep nan quiet and non-zero */
    return sign | 0x7c00 | (abs > 0x7f800000u ? (uint16_t)(0x200 | ((abs >> 13) & 0x3ff)) : 0);
  if (abs >= 0x477ff000u) return sign | 0x7c00;  /* rounds past 65504: inf */
  if (abs < 0x38800000u) {
    /* result is subnormal (or zero): value / 2^-24, rounded to nearest even */
    float v = bits_float(abs) * 16777216.0f;
    uint32_t m = (uint32_t)v;
    float rem = v - (float)m;
    if (rem > 0.5f || (rem == 0.5f && (m & 1))) m++;
    return sign | (uint16_t)m;
  }
  uint32_t mant = abs + 0xfffu + ((abs >> 13) & 1); /* round to nearest even */
  return sign | (uint16_t)((mant - 0x38000000u) >> 13);
}

float bf16_to_float(uint16_t b) { return bits_float((uint32_t)b << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet nan */
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

/* Round to odd keeps, in its last bit, whether anything was dropped: a
 * value between two f32s becomes the odd one of them, so a later rounding
 * to p <= 22 significant bits sees a tie only where there was one, and
 * "just above" or "just below" a tie stays on its side. Subnormal f32s
 * keep at least 16 bits more than bf16's subnormals, and lie far below
 * f16's and the minifloats', so the argument holds there too. Past f32's
 * range the result is FLT_MAX (odd), which overflows every narrower type
 * as the value itself does. NaN and infinity convert as they are. */
float double_to_float_round_to_odd(double v) {
  float f = (float)v;
  if (isnan(v) || (double)f == v) return f;
  uint32_t bits = float_bits(f);
  if (fabs((double)f) > fabs(v)) bits--; /* rounded away from zero: one step back (sign-magnitude) */
  return bits_float(bits | 1);
}

uint16_t double_to_half(double v) { return float_to_half(double_to_float_round_to_odd(v)); }
uint16_t double_to_bf16(double v) { return float_to_bf16(double_to_float_round_to_odd(v)); }

/* ---- shapes ---- */

void shape_set_default_layout(Shape *s) {
  for (int i = 0; i < s->rank; i++) s->minor_to_major[i] = s->rank - 1 - i;
  s->has_layout = false;
  s->element_size_bits = 0;
}

Shape shape_array(ElementType t, int rank, const int64_t *dims) {
  Shape s;
  memset(&s, 0, sizeof s);
  assert(rank >= 0 && rank <= AXLE_MAX_RANK);
  s.type = t;
  s.rank = rank;
  for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
  shape_set_default_layout(&s);
  return s;
}

Shape shape_scalar(ElementType t) { return shape_array(t, 0, NULL); }

bool shape_is_tuple(const Shape *s) { return s->type == TYPE_TUPLE; }

/* A token holds no elements, though it is written like a scalar. */
int64_t shape_element_count(const Shape *s) {
  if (s->type == TYPE_TOKEN) return 0;
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

int64_t shape_byte_size(const Shape *s) {
  return shape_element_count(s) * type_byte_size(s->type);
}

/* XLA's ByteSizeOf: E(n) packs 8/n elements to a byte; others take
 * their type's size whatever the layout says. */
int64_t shape_buffer_byte_size(const Shape *s) {
  int bits = s->element_size_bits;
  if (bits == 0 || bits >= 8 || type_bit_width(s->type) > bits) return shape_byte_size(s);
  return (shape_element_count(s) * bits + 7) / 8;
}

bool shape_is_row_major(const Shape *s) {
  if (shape_is_tuple(s) || s->element_size_bits) return false;
  for (int d = 0; d < s->rank; d++)
    if (s->minor_to_major[d] != s->rank - 1 - d) return false;
  return true;
}

void shape_layout_strides(const Shape *s, int64_t strides[AXLE_MAX_RANK]) {
  int64_t step = 1;
  for (int i = 0; i < s->rank; i++) {
    strides[s->minor_to_major[i]] = step;
    step *= s->dims[s->minor_to_major[i]];
  }
}

void shape_relayout_copy(const Shape *s, const void *src, void *dst, bool into_layout) {
  int64_t stride[AXLE_MAX_RANK], index[AXLE_MAX_RANK] = {0};
  shape_layout_strides(s, stride);
  size_t size = (size_t)type_byte_size(s->type);
  int64_t count = shape_element_count(s);
  for (int64_t i = 0; i < count; i++) {
    int64_t at = 0;
    for (int d = 0; d < s->rank; d++) at += index[d] * stride[d];
    const char *from = (const char *)src + (size_t)(into_layout ? i : at) * size;
    memcpy((char *)dst + (size_t)(into_layout ? at : i) * size, from, size);
    for (int d = s->rank - 1; d >= 0 && ++index[d] == s->dims[d]; d--) index[d] = 0;
  }
}

int shape_leaf_count(const Shape *s) {
  if (!shape_is_tuple(s)) return 1;
  int n = 0;
  for (int i = 0; s->tuple_shapes && i < s->tuple_count; i++) n += shape_leaf_count(&s->tuple_shapes[i]);
  return n;
}

const Shape *shape_leaf_at(const Shape *s, int leaf) {
  if (!shape_is_tuple(s)) return leaf == 0 ? s : NULL;
  for (int i = 0; s->tuple_shapes && i < s->tuple_count; i++) {
    int n = shape_leaf_count(&s->tuple_shapes[i]);
    if (leaf < n) return shape_leaf_at(&s->tuple_shapes[i], leaf);
    leaf -= n;
  }
  return NULL;
}

int shape_element_first_leaf(const Shape *s, int k) {
  int first = 0;
  for (int i = 0; i < k; i++) first += shape_leaf_count(&s->tuple_shapes[i]);
  return first;
}

bool shape_same_dims(const Shape *a, const Shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

bool shape_dim_is_unbounded(const Shape *s, int d) {
  return s->type != TYPE_TUPLE && d >= 0 && d < s->rank && (s->dynamic_dims >> d & 1) &&
         s->dims[d] == AXLE_UNBOUNDED_DIM;
}

bool shape_has_unbounded_dims(const Shape *s) {
  if (s->type == TYPE_TUPLE) {
    for (int i = 0; i < s->tuple_count && s->tuple_shapes; i++)
      if (shape_has_unbounded_dims(&s->tuple_shapes[i])) return true;
    return false;
  }
  for (int d = 0; d < s->rank; d++)
    if (shape_dim_is_unbounded(s, d)) return true;
  return false;
}

bool shape_equal(const Shape *a, const Shape *b) {
  if (a->type != b->type) return false;
  if (a->type != TYPE_TUPLE) return shape_same_dims(a, b);
  if (a->tuple_count != b->tuple_count) return false;
  for (int i = 0; i < a->tuple_count; i++)
    if (!shape_equal(&a->tuple_shapes[i], &b->tuple_shapes[i])) return false;
  return true;
}

void shape_print(StrBuf *sb, const Shape *s, bool with_layout) {
  if (s->type == TYPE_TUPLE) {
    strbuf_printf(sb, "(");
    for (int i = 0; i < s->tuple_count; i++) {
      if (i) strbuf_printf(sb, ", ");
      shape_print(sb, &s->tuple_shapes[i], with_layout);
    }
    strbuf_printf(sb, ")");
    return;
  }
  strbuf_printf(sb, "%s[", type_name(s->type));
  for (int i = 0; i < s->rank; i++) {
    if (shape_dim_is_unbounded(s, i)) strbuf_printf(sb, "%s?", i ? "," : "");
    else strbuf_printf(sb, "%s%s%lld", i ? "," : "", s->dynamic_dims >> i & 1 ? "<=" : "", (long long)s->dims[i]);
  }
  strbuf_printf(sb, "]");
  if (with_layout && s->rank > 0) {
    strbuf_printf(sb, "{");
    for (int i = 0; i < s->rank; i++) strbuf_printf(sb, "%s%d", i ? "," : "", s->minor_to_major[i]);
    if (s->element_size_bits) strbuf_printf(sb, ":E(%d)", s->element_size_bits);
    strbuf_printf(sb, "}");
  }
}

void shape_strides(const Shape *s, int64_t strides[AXLE_MAX_RANK]) {
  int64_t stride = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    strides[i] = stride;
    stride *= s->dims[i];
  }
}

/* XLA's text spelling of each DotAlgorithm (PrecisionConfig.Algorithm
 * lower-cased, without its ALG_ prefix). */
const char *const dot_algorithm_names[DOT_ALG_COUNT] = {
    [DOT_ALG_UNSET] = "unset",
    [DOT_ALG_ANY_F8_ANY_F8_F32] = "dot_any_f8_any_f8_f32",
    [DOT_ALG_ANY_F8_ANY_F8_F32_FAST_ACCUM] = "dot_any_f8_any_f8_f32_fast_accum",
    [DOT_ALG_F16_F16_F16] = "dot_f16_f16_f16",
    [DOT_ALG_F16_F16_F32] = "dot_f16_f16_f32",
    [DOT_ALG_BF16_BF16_BF16] = "dot_bf16_bf16_bf16",
    [DOT_ALG_BF16_BF16_F32] = "dot_bf16_bf16_f32",
    [DOT_ALG_BF16_BF16_F32_X3] = "dot_bf16_bf16_f32_x3",
    [DOT_ALG_BF16_BF16_F32_X6] = "dot_bf16_bf16_f32_x6",
    [DOT_ALG_BF16_BF16_F32_X9] = "dot_bf16_bf16_f32_x9",
    [DOT_ALG_TF32_TF32_F32] = "dot_tf32_tf32_f32",
    [DOT_ALG_TF32_TF32_F32_X3] = "dot_tf32_tf32_f32_x3",
    [DOT_ALG_F32_F32_F32] = "dot_f32_f32_f32",
    [DOT_ALG_F64_F64_F64] = "dot_f64_f64_f64",
};
