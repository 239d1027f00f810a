/* The 8-bit and 4-bit floating-point types ("minifloats"): what each bit
 * pattern means, and how a wider value rounds into one.
 *
 * The meaning follows ml_dtypes, the library XLA's literals and evaluator use
 * for these types, so a convert here gives the bits XLA's would:
 *   - a value rounds once, to nearest, ties to even (f32 and f16 values are
 *     exact in double, so rounding from a double is rounding from them);
 *   - what a type cannot hold is handled by its "specials" (the table below):
 *     past the largest finite value, IEEE-like types give infinity, types
 *     without infinity (fn, fnuz) give NaN, and f4e2m1fn, which has neither,
 *     saturates to its largest value;
 *   - infinity in goes the same way as overflow;
 *   - the fnuz types have no -0: -0 gives +0, and the bits of -0 (0x80) are
 *     their only NaN;
 *   - f8e8m0fnu is a bare exponent: no sign, no zero; 0x00 is 2^-127, 0xff
 *     NaN, and zero, negative values and NaN all give NaN. Values between
 *     powers of two round on the exponent, ties up (the one-bit significand
 *     "1" is odd);
 *   - f4e2m1fn has no NaN: ml_dtypes maps NaN to the bits 0b1000 (-0) when
 *     the NaN's sign is clear and to +0 when it is set. */
#include <math.h>
#include <string.h>

#include "ir.h"

typedef enum MinifloatSpecials {
  SPECIALS_IEEE, /* exponent all ones: infinity (mantissa 0) or NaN, as in f16 */
  SPECIALS_FN,   /* no infinity; exponent and mantissa all ones is NaN */
  SPECIALS_FNUZ, /* no infinity, no -0: 0x80 is the one NaN */
  SPECIALS_FNU,  /* no sign, no zero: all ones is the one NaN */
  SPECIALS_NONE, /* no infinity, no NaN: overflow saturates */
} MinifloatSpecials;

typedef struct MinifloatFormat {
  ElementType type;
  int exponent_bits, mantissa_bits, bias;
  bool has_sign;
  MinifloatSpecials specials;
} MinifloatFormat;

/* One row per minifloat type: exponent bits, mantissa bits, exponent bias. */
static const MinifloatFormat minifloat_formats[] = {
    {TYPE_F8E4M3FN, 4, 3, 7, true, SPECIALS_FN},         /* max 448 */
    {TYPE_F8E5M2, 5, 2, 15, true, SPECIALS_IEEE},        /* max 57344 */
    {TYPE_F8E4M3FNUZ, 4, 3, 8, true, SPECIALS_FNUZ},     /* max 240 */
    {TYPE_F8E5M2FNUZ, 5, 2, 16, true, SPECIALS_FNUZ},    /* max 57344 */
    {TYPE_F8E4M3B11FNUZ, 4, 3, 11, true, SPECIALS_FNUZ}, /* max 30 */
    {TYPE_F8E4M3, 4, 3, 7, true, SPECIALS_IEEE},         /* max 240 */
    {TYPE_F8E3M4, 3, 4, 3, true, SPECIALS_IEEE},         /* max 15.5 */
    {TYPE_F8E8M0FNU, 8, 0, 127, false, SPECIALS_FNU},    /* 2^-127 .. 2^127 */
    {TYPE_F4E2M1FN, 2, 1, 1, true, SPECIALS_NONE},       /* max 6 */
};
enum { MINIFLOAT_COUNT = sizeof minifloat_formats / sizeof minifloat_formats[0] };

static const MinifloatFormat *minifloat_format(ElementType t) {
  for (int i = 0; i < MINIFLOAT_COUNT; i++)
    if (minifloat_formats[i].type == t) return &minifloat_formats[i];
  return NULL;
}

bool type_is_minifloat(ElementType t) { return minifloat_format(t) != NULL; }

bool minifloat_layout(ElementType t, int *exponent_bits, int *mantissa_bits, int *bias) {
  const MinifloatFormat *f = minifloat_format(t);
  if (!f) return false;
  *exponent_bits = f->exponent_bits, *mantissa_bits = f->mantissa_bits, *bias = f->bias;
  return true;
}

/* Bits of the magnitude (everything but the sign). */
static uint32_t magnitude_mask(const MinifloatFormat *f) {
  return (1u << (f->exponent_bits + f->mantissa_bits)) - 1;
}

static uint32_t sign_bit(const MinifloatFormat *f) {
  return f->has_sign ? 1u << (f->exponent_bits + f->mantissa_bits) : 0;
}

static uint32_t exponent_mask(const MinifloatFormat *f) {
  return ((1u << f->exponent_bits) - 1) << f->mantissa_bits;
}

/* The largest finite magnitude's bits. */
static uint32_t max_finite_bits(const MinifloatFormat *f) {
  switch (f->specials) {
  case SPECIALS_IEEE: return magnitude_mask(f) - (1u << f->mantissa_bits);
  case SPECIALS_FN: case SPECIALS_FNU: return magnitude_mask(f) - 1;
  default: return magnitude_mask(f);
  }
}

/* A NaN; IEEE-like types get the quiet one (top mantissa bit set). */
static uint8_t nan_bits(const MinifloatFormat *f, bool negative) {
  uint32_t sign = negative ? sign_bit(f) : 0;
  switch (f->specials) {
  case SPECIALS_IEEE: return (uint8_t)(sign | exponent_mask(f) | 1u << (f->mantissa_bits - 1));
  case SPECIALS_FN: return (uint8_t)(sign | magnitude_mask(f));
  case SPECIALS_FNUZ: return (uint8_t)sign_bit(f);
  case SPECIALS_FNU: return (uint8_t)magnitude_mask(f);
  default: return (uint8_t)(negative ? 0 : sign_bit(f));
  }
}

/* What infinity and overflow give. */
static uint8_t overflow_bits(const MinifloatFormat *f, bool negative) {
  uint32_t sign = negative ? sign_bit(f) : 0;
  switch (f->specials) {
  case SPECIALS_IEEE: return (uint8_t)(sign | exponent_mask(f));
  case SPECIALS_NONE: return (uint8_t)(sign | max_finite_bits(f));
  default: return nan_bits(f, negative);
  }
}

static bool bits_are_nan(const MinifloatFormat *f, uint32_t bits) {
  uint32_t mag = bits & magnitude_mask(f);
  switch (f->specials) {
  case SPECIALS_IEEE: return (mag & exponent_mask(f)) == exponent_mask(f) && mag != exponent_mask(f);
  case SPECIALS_FN: case SPECIALS_FNU: return mag == magnitude_mask(f);
  case SPECIALS_FNUZ: return bits == sign_bit(f);
  default: return false;
  }
}

float minifloat_to_float(ElementType t, uint8_t bits) {
  const MinifloatFormat *f = minifloat_format(t);
  if (!f) return 0.0f;
  bool negative = (bits & sign_bit(f)) != 0;
  if (bits_are_nan(f, bits)) return negative ? -NAN : NAN;
  uint32_t mag = bits & magnitude_mask(f);
  uint32_t exponent = mag >> f->mantissa_bits, mantissa = mag & ((1u << f->mantissa_bits) - 1);
  float value;
  if (f->specials == SPECIALS_IEEE && exponent == (1u << f->exponent_bits) - 1) {
    value = INFINITY;
  } else if (exponent == 0 && f->specials != SPECIALS_FNU) {
    /* subnormal: no implicit one, the smallest exponent */
    value = ldexpf((float)mantissa, 1 - f->bias - f->mantissa_bits);
  } else {
    float significand = (float)((1u << f->mantissa_bits) | mantissa);
    value = ldexpf(significand, (int)exponent - f->bias - f->mantissa_bits);
  }
  return negative ? -value : value;
}

/* Rounds away the low `shift` bits of x to nearest, ties to even: add half
 * an ulp less one, plus one when the lowest kept bit is odd. A carry may
 * run into the bits above, which is the correct result. */
static uint64_t bits_round_nearest_even(uint64_t x, int shift) {
  uint64_t odd = (x >> shift) & 1;
  return (x + (1ull << (shift - 1)) - 1 + odd) >> shift;
}

/* A finite, nonzero magnitude a to bits. The significand of a, as a 53-bit
 * integer with the leading one at bit 52, is shifted right so its leading
 * one lands on the format's implicit bit (further for subnormals), rounded,
 * and added to the exponent field less one: the leading one then counts the
 * exponent's missing one, and a rounding carry bumps the exponent. */
static uint32_t magnitude_round(const MinifloatFormat *f, double a) {
  int e;
  double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  uint64_t significand = (uint64_t)ldexp(m, 53);
  int biased_minus_one = (e - 1) + f->bias - 1;
  int subnormal_shift = biased_minus_one < 0 ? -biased_minus_one : 0;
  int shift = 52 - f->mantissa_bits + subnormal_shift;
  if (shift > 54) shift = 54; /* past this everything rounds to 0 anyway */
  uint64_t rounded = bits_round_nearest_even(significand, shift);
  uint64_t exponent_field = biased_minus_one > 0 ? (uint64_t)biased_minus_one : 0;
  uint64_t wide = rounded + (exponent_field << f->mantissa_bits);
  return wide > max_finite_bits(f) ? UINT32_MAX : (uint32_t)wide;
}

uint8_t double_to_minifloat(ElementType t, double v) {
  const MinifloatFormat *f = minifloat_format(t);
  if (!f) return 0;
  bool negative = signbit(v) != 0;
  if (isnan(v)) return nan_bits(f, negative);
  if (!f->has_sign && negative && v != 0.0) return nan_bits(f, negative);
  if (isinf(v)) return overflow_bits(f, negative);
  if (v == 0.0) {
    if (f->specials == SPECIALS_FNU) return nan_bits(f, negative); /* no zero */
    if (f->specials == SPECIALS_FNUZ) return 0;                     /* no -0 */
    return (uint8_t)(negative ? sign_bit(f) : 0);
  }
  uint32_t mag = magnitude_round(f, fabs(v));
  if (mag == UINT32_MAX) return overflow_bits(f, negative);
  /* A value that rounds to zero keeps its sign, except where -0 is NaN. */
  if (mag == 0 && f->specials == SPECIALS_FNUZ) return 0;
  return (uint8_t)((negative ? sign_bit(f) : 0) | mag);
}
