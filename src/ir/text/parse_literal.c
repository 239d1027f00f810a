/* Constant literals: the text inside constant(...).
 *
 * XLA prints an array constant as nested braces, one level per dimension,
 * in row-major order: f32[2,3] constant({ {1, 2, 3}, {4, 5, 6} }). A scalar
 * is a bare value, a tuple a parenthesized list of literals. Large
 * constants may have been printed elided as "{...}": their values are
 * gone, and are refused or made up (ParseOptions.fill_elided_constants). */
#include "complex_compat.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse_internal.h"

/* Range of each integer type, for "value does not fit" errors. */
static bool integer_fits(ElementType t, int64_t v) {
  switch (t) {
  case TYPE_S8: return v >= INT8_MIN && v <= INT8_MAX;
  case TYPE_S16: return v >= INT16_MIN && v <= INT16_MAX;
  case TYPE_S32: return v >= INT32_MIN && v <= INT32_MAX;
  case TYPE_U8: return v >= 0 && v <= UINT8_MAX;
  case TYPE_U16: return v >= 0 && v <= UINT16_MAX;
  case TYPE_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
  case TYPE_S4: return v >= -8 && v <= 7;
  case TYPE_U4: return v >= 0 && v <= 15;
  case TYPE_S2: return v >= -2 && v <= 1;
  case TYPE_U2: return v >= 0 && v <= 3;
  default: return true;
  }
}

static bool word_to_uint64(const Token *t, uint64_t *out) {
  if (t->kind != TK_WORD || t->len == 0 || t->len > 40 || t->text[0] < '0' || t->text[0] > '9')
    return false;
  char buf[48];
  memcpy(buf, t->text, (size_t)t->len);
  buf[t->len] = '\0';
  errno = 0;
  char *end;
  unsigned long long v = strtoull(buf, &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;
  *out = v;
  return true;
}

/* float = number | "inf" | "-inf" | "nan" ("(" payload ")")?
 * One part of a complex value. A payload on a NaN part is read past (the
 * part stays the default NaN); real constants keep theirs, see
 * parse_nan_payload. */
static bool parse_float_value(Parser *p, const char *tname, double *out) {
  Token *t = lex_peek(p);
  if (t->kind != TK_WORD || !lex_word_to_double(t, out))
    return parse_error(p, t, "expected a %s value", tname);
  lex_next(p);
  if (isnan(*out) && lex_token_is(lex_peek(p), "(")) return lex_skip_balanced(p);
  return true;
}

/* complex = "(" float "," float ")"   the real part, then the imaginary one */
static bool parse_complex_value(Parser *p, Literal *lit, int64_t index) {
  const char *part_name = type_name(type_complex_component(lit->shape.type));
  double re, im;
  if (!lex_token_is(lex_peek(p), "("))
    return parse_error(p, lex_peek(p), "expected a %s value as (real, imaginary)",
                       type_name(lit->shape.type));
  lex_next(p);
  Token re_token = *lex_peek(p);
  if (!parse_float_value(p, part_name, &re) || !lex_expect(p, ",")) return false;
  Token im_token = *lex_peek(p);
  if (!parse_float_value(p, part_name, &im) || !lex_expect(p, ")")) return false;
  literal_set_complex(lit, index, CMPLX(re, im));
  /* A finite part too large for the component type (1e100 in a c64) is an
   * error, as for real constants and in XLA. */
  double _Complex stored = literal_get_complex(lit, index);
  const Token *bad = isinf(creal(stored)) && !isinf(re) ? &re_token
                     : isinf(cimag(stored)) && !isinf(im) ? &im_token
                                                          : NULL;
  if (bad)
    return parse_error(p, bad, "value %.*s is out of range for %s", bad->len > 40 ? 40 : bad->len, bad->text,
                       part_name);
  return true;
}

/* The mantissa bits a NaN payload may use, per float type. */
static int mantissa_bits_of(ElementType t) {
  switch (t) {
  case TYPE_F16: return 10;
  case TYPE_BF16: return 7;
  case TYPE_F32: return 23;
  case TYPE_F64: return 52;
  default: return 0;
  }
}

/* nan_payload = "(" hex ")"    after nan or -nan: nan(0x7f)
 * Newer XLA prints a NaN's mantissa when it is not the default quiet one.
 * The payload must be nonzero (zero would be an infinity) and fit in the
 * mantissa; the bits are kept, so the constant prints back the same. */
static bool parse_nan_payload(Parser *p, Literal *lit, int64_t index, const Token *nan) {
  lex_expect(p, "(");
  Token t = *lex_peek(p);
  int bits = mantissa_bits_of(lit->shape.type);
  char buf[24];
  unsigned long long payload = 0;
  bool ok = t.kind == TK_WORD && t.len > 2 && t.len < (int)sizeof buf && t.text[0] == '0' &&
            (t.text[1] == 'x' || t.text[1] == 'X');
  if (ok) {
    memcpy(buf, t.text, (size_t)t.len);
    buf[t.len] = '\0';
    char *end;
    errno = 0;
    payload = strtoull(buf + 2, &end, 16);
    ok = *end == '\0' && errno == 0;
  }
  if (!ok) return parse_error(p, &t, "expected a NaN payload such as 0x7f");
  if (bits == 0 || payload == 0 || (bits < 64 && payload >> bits))
    return parse_error(p, &t, "NaN payload %.*s does not fit the %d mantissa bits of %s", t.len, t.text,
                       bits, type_name(lit->shape.type));
  lex_next(p);
  if (!lex_expect(p, ")")) return false;
  /* sign | all-ones exponent | payload, in the type's own width. */
  bool negative = nan->text[0] == '-';
  int width = type_bit_width(lit->shape.type);
  uint64_t word = ((uint64_t)negative << (width - 1)) | (((1ull << (width - 1 - bits)) - 1) << bits) | payload;
  memcpy((char *)lit->data + index * (width / 8), &word, (size_t)(width / 8));
  return true;
}

/* scalar = "true" | "false" | integer | float | "inf" | "-inf" | "nan" nan_payload? | complex */
static bool parse_scalar(Parser *p, Literal *lit, int64_t index) {
  /* A constant may hold millions of values; the tokens read so far are
   * not needed again. */
  lex_release_read_tokens(p);
  Token *t = lex_peek(p);
  ElementType type = lit->shape.type;
  const char *tname = type_name(type);
  if (type_is_complex(type)) return parse_complex_value(p, lit, index);
  if (t->kind != TK_WORD)
    return parse_error(p, t, "expected a %s value", tname);
  if (type == TYPE_PRED) {
    int64_t v;
    if (lex_token_is(t, "true")) v = 1;
    else if (lex_token_is(t, "false")) v = 0;
    else if (!lex_word_to_int64(t, &v) || (v != 0 && v != 1))
      return parse_error(p, t, "expected true or false for a pred value");
    literal_set_s64(lit, index, v);
  } else if (type == TYPE_U64) {
    /* XLA reads a negative u64 as its two's complement (-1 is the max). */
    uint64_t v;
    int64_t negative;
    if (lex_word_to_int64(t, &negative) && negative < 0) v = (uint64_t)negative;
    else if (!word_to_uint64(t, &v)) return parse_error(p, t, "expected a u64 value");
    literal_set_u64(lit, index, v);
  } else if (type_is_integer(type)) {
    int64_t v;
    if (!lex_word_to_int64(t, &v)) return parse_error(p, t, "expected a %s value", tname);
    if (!integer_fits(type, v))
      return parse_error(p, t, "value %lld does not fit in %s", (long long)v, tname);
    literal_set_s64(lit, index, v);
  } else {
    double v;
    if (!lex_word_to_double(t, &v)) return parse_error(p, t, "expected a %s value", tname);
    literal_set_f64(lit, index, v);
    /* A finite number too large for the type is an error, as in XLA, not
     * an infinity nobody wrote. */
    if (!isnan(v) && isinf(literal_get_f64(lit, index)) && !memchr(t->text, 'i', (size_t)t->len))
      return parse_error(p, t, "value %.*s is out of range for %s", t->len > 40 ? 40 : t->len, t->text, tname);
    if (isnan(v) && lex_token_is(lex_peek_at(p, 1), "(")) {
      Token nan = *t;
      lex_next(p);
      return parse_nan_payload(p, lit, index, &nan);
    }
  }
  lex_next(p);
  return true;
}

/* array_level = "{" (array_level | scalar) ("," ...)* "}"   at depth < rank
 * Fills elements in row-major order through *index. */
static bool parse_array_level(Parser *p, Literal *lit, int depth, int64_t *index) {
  const Shape *shape = &lit->shape;
  if (depth == shape->rank) return parse_scalar(p, lit, (*index)++);
  Token *open = lex_peek(p);
  if (lex_token_is(open, "{") && lex_token_is(lex_peek_at(p, 1), "..."))
    return parse_error(p, open, "this constant was printed elided ({...}) and cannot be read");
  if (!lex_expect(p, "{")) return false;
  int64_t n = 0;
  while (!lex_token_is(lex_peek(p), "}")) {
    if (n > 0 && !lex_expect(p, ",")) return false;
    if (n == shape->dims[depth])
      return parse_error(p, lex_peek(p), "too many elements in dimension %d of the constant (size %lld)",
                         depth, (long long)shape->dims[depth]);
    if (!parse_array_level(p, lit, depth + 1, index)) return false;
    n++;
  }
  if (n != shape->dims[depth])
    return parse_error(p, lex_peek(p), "dimension %d of the constant has %lld elements, the shape says %lld",
                       depth, (long long)n, (long long)shape->dims[depth]);
  lex_next(p);
  return true;
}

/* elided = "{" "..." "}"
 * XLA prints a large constant's values as "..." unless asked for them all.
 * They are gone; with ParseOptions.fill_elided_constants the constant
 * gets values drawn from the options' seed, one stream through the module
 * in text order, so the same text and seed give the same module. */
static bool at_elided(Parser *p) {
  return lex_token_is(lex_peek(p), "{") && lex_token_is(lex_peek_at(p, 1), "...") &&
         lex_token_is(lex_peek_at(p, 2), "}");
}

static Literal *parse_elided_literal(Parser *p, const Shape *shape) {
  Token start = *lex_peek(p);
  if (!p->options->fill_elided_constants) {
    parse_error(p, &start, "this constant was printed elided ({...}) and cannot be read");
    return NULL;
  }
  if (shape->rank == 0) {
    parse_error(p, &start, "a scalar constant cannot be elided");
    return NULL;
  }
  lex_next(p);
  lex_next(p);
  lex_next(p);
  /* Each constant its own stream, apart from the one axle-run draws inputs
   * from with the same seed (else a constant would equal an input). */
  uint64_t state = (p->options->elided_seed ^ 0x5851f42d4c957f2dull) +
                   (uint64_t)(p->module->elided_constant_count + 1) * 0x632be59bd9b4e019ull;
  Literal *lit = literal_create(shape);
  literal_fill_random(lit, &state);
  p->module->elided_constant_count++;
  return lit;
}

static Literal *parse_array_literal(Parser *p, const Shape *shape) {
  if (at_elided(p)) return parse_elided_literal(p, shape);
  Token *start = lex_peek(p);
  /* Every element takes at least one byte of text, so a count larger than
   * what is left of the text is an error before anything is allocated. */
  int64_t count = shape_element_count(shape);
  if ((uint64_t)count > lex_bytes_left(p)) {
    if (lex_token_is(start, "{") && lex_token_is(lex_peek_at(p, 1), "..."))
      parse_error(p, start, "this constant was printed elided ({...}) and cannot be read");
    else
      parse_error(p, start, "constant of %lld elements is longer than the text", (long long)count);
    return NULL;
  }
  Literal *lit = literal_create(shape);
  int64_t index = 0;
  if (!parse_array_level(p, lit, 0, &index)) {
    literal_free(lit);
    return NULL;
  }
  return lit;
}

/* Early XLA printed the literal's shape inside the parentheses too:
 * constant(f32[2] {1, 2}). The shape must then agree with the instruction's. */
static bool skip_literal_shape(Parser *p, const Shape *shape) {
  Token *start = lex_peek(p);
  if (start->kind != TK_WORD || !lex_token_is(lex_peek_at(p, 1), "[")) return true;
  Shape written;
  if (!parse_array_shape_without_layout(p, &written)) return false;
  if (!shape_equal(&written, shape))
    return parse_error(p, start, "the constant's shape differs from the instruction's");
  return true;
}

/* literal = array_shape? ( "(" (literal ("," literal)*)? ")" | array_literal ) */
Literal *parse_literal(Parser *p, const Shape *shape) {
  Token *start = lex_peek(p);
  if (shape->type == TYPE_TOKEN) {
    parse_error(p, start, "a token has no value to give a constant");
    return NULL;
  }
  if (!skip_literal_shape(p, shape)) return NULL;
  if (!shape_is_tuple(shape)) return parse_array_literal(p, shape);
  if (p->depth >= PARSE_MAX_DEPTH) {
    parse_error(p, start, "constant nested too deeply");
    return NULL;
  }
  if (!lex_expect(p, "(")) return NULL;
  int count = shape->tuple_count;
  Literal **elements = mem_calloc((size_t)count + 1, sizeof(Literal *));
  if (!elements) {
    parse_error(p, start, "out of memory");
    return NULL;
  }
  p->depth++;
  bool ok = true;
  for (int i = 0; i < count && ok; i++) {
    if (i > 0 && !lex_expect(p, ",")) ok = false;
    else if (!(elements[i] = parse_literal(p, &shape->tuple_shapes[i]))) ok = false;
  }
  p->depth--;
  if (ok && !lex_expect(p, ")")) ok = false;
  if (!ok) {
    for (int i = 0; i < count; i++) literal_free(elements[i]);
    mem_free(elements);
    return NULL;
  }
  Literal *lit = literal_create_tuple(elements, count);
  mem_free(elements);
  lit->shape = *shape;
  lit->shape.tuple_shapes = NULL;
  return lit;
}
