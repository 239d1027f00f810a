/* Complex numbers in the evaluator: the elementwise ops on c64 and c128,
 * complex(re, im), real and imag, and conversions into complex types.
 * eval_elementwise.c and eval_convert.c hand complex operands over to the
 * functions here; the FFT is in eval_fft.c and complex dot and convolution
 * in eval_linalg.c.
 *
 * Numbers follow the real ops' rule: c64 is computed in float complex (C's
 * cexpf, csqrtf, ...), c128 in double complex. Where C has no function
 * (expm1, log1p, cbrt, rsqrt, sign, logistic) it is written out below from
 * its definition, in a form that stays accurate near zero. */
#include "complex_compat.h"
#include <math.h>

#include "eval_internal.h"

static Literal *complex_refused(const Instruction *inst, Status *st) {
  status_error(st, STATUS_UNSUPPORTED, "%s is not defined on complex numbers",
               opcode_name(inst->opcode));
  return NULL;
}

/* ---- unary ---- */

/* expm1(x + iy) = (e^x cos y - 1) + i e^x sin y, with e^x cos y - 1
 * written as expm1(x) cos y - 2 sin^2(y/2) so that no 1 is subtracted. */
static double complex expm1_c128(double complex z) {
  double x = creal(z), y = cimag(z), half = sin(y / 2);
  return CMPLX(expm1(x) * cos(y) - 2 * half * half, exp(x) * sin(y));
}
static float complex expm1_c64(float complex z) {
  float x = crealf(z), y = cimagf(z), half = sinf(y / 2);
  return CMPLXF(expm1f(x) * cosf(y) - 2 * half * half, expf(x) * sinf(y));
}

/* log1p(z) = log|1 + z| + i arg(1 + z), where |1 + z|^2 = 1 + (2x + x^2 + y^2). */
static double complex log1p_c128(double complex z) {
  double x = creal(z), y = cimag(z);
  return CMPLX(0.5 * log1p(x * (2 + x) + y * y), atan2(y, 1 + x));
}
static float complex log1p_c64(float complex z) {
  float x = crealf(z), y = cimagf(z);
  return CMPLXF(0.5f * log1pf(x * (2 + x) + y * y), atan2f(y, 1 + x));
}

/* sign(z) = z / |z|, and 0 for 0 (NaN stays NaN). */
static double complex sign_c128(double complex z) {
  double r = cabs(z);
  return r == 0 ? 0 : z / r;
}
static float complex sign_c64(float complex z) {
  float r = cabsf(z);
  return r == 0 ? 0 : z / r;
}

static double complex negate_c128(double complex z) { return -z; }
static float complex negate_c64(float complex z) { return -z; }
static double complex rsqrt_c128(double complex z) { return 1.0 / csqrt(z); }
static float complex rsqrt_c64(float complex z) { return 1.0f / csqrtf(z); }
/* The principal cube root. */
static double complex cbrt_c128(double complex z) { return z == 0 ? z : cpow(z, 1.0 / 3.0); }
static float complex cbrt_c64(float complex z) { return z == 0 ? z : cpowf(z, 1.0f / 3.0f); }
static double complex logistic_c128(double complex z) { return 1.0 / (1.0 + cexp(-z)); }
static float complex logistic_c64(float complex z) { return 1.0f / (1.0f + cexpf(-z)); }

/* One row per unary op defined on complex numbers (abs is apart: its result
 * is real); the verifier refuses the others. */
typedef struct ComplexUnaryRow {
  Opcode op;
  float complex (*c64)(float complex);
  double complex (*c128)(double complex);
} ComplexUnaryRow;

static const ComplexUnaryRow complex_unary_table[] = {
    {OP_CBRT, cbrt_c64, cbrt_c128},
    {OP_COSINE, ccosf, ccos},
    {OP_EXPONENTIAL, cexpf, cexp},
    {OP_EXPONENTIAL_MINUS_ONE, expm1_c64, expm1_c128},
    {OP_LOG, clogf, clog},
    {OP_LOG_PLUS_ONE, log1p_c64, log1p_c128},
    {OP_LOGISTIC, logistic_c64, logistic_c128},
    {OP_NEGATE, negate_c64, negate_c128},
    {OP_RSQRT, rsqrt_c64, rsqrt_c128},
    {OP_SIGN, sign_c64, sign_c128},
    {OP_SINE, csinf, csin},
    {OP_SQRT, csqrtf, csqrt},
    {OP_TAN, ctanf, ctan},
    {OP_TANH, ctanhf, ctanh},
};

static const ComplexUnaryRow *find_complex_unary(Opcode op) {
  for (size_t i = 0; i < sizeof complex_unary_table / sizeof complex_unary_table[0]; i++)
    if (complex_unary_table[i].op == op) return &complex_unary_table[i];
  return NULL;
}

/* x is complex and has the result's dims (eval_unary checked). abs gives
 * the magnitude in the component type: hypot, so no square overflows. */
Literal *eval_complex_unary(const Instruction *inst, const Literal *x, Status *st) {
  ElementType t = x->shape.type;
  ElementType want = inst->opcode == OP_ABS ? type_complex_component(t) : t;
  if (inst->shape.type != want) {
    status_error(st, STATUS_VERIFY_ERROR, "%s: the result has the wrong element type",
                 opcode_name(inst->opcode));
    return NULL;
  }
  const ComplexUnaryRow *row = find_complex_unary(inst->opcode);
  if (!row && inst->opcode != OP_ABS) return complex_refused(inst, st);
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&x->shape);
  for (int64_t i = 0; i < n; i++) {
    double complex z = literal_get_complex(x, i);
    if (inst->opcode == OP_ABS)
      literal_set_f64(out, i, t == TYPE_C128 ? cabs(z) : (double)cabsf((float complex)z));
    else
      literal_set_complex(out, i, t == TYPE_C128 ? row->c128(z) : (double complex)row->c64((float complex)z));
  }
  return out;
}

/* ---- binary ---- */

/* x^y = exp(y log x), with NumPy's and C++'s rule for a zero base:
 * 0^0 = 1, 0^y = 0 for a real positive y, NaN otherwise. */
static double complex power_c128(double complex x, double complex y) {
  if (x != 0) return cpow(x, y);
  if (y == 0) return 1;
  return cimag(y) == 0 && creal(y) > 0 ? 0 : CMPLX(NAN, NAN);
}
static float complex power_c64(float complex x, float complex y) {
  if (x != 0) return cpowf(x, y);
  if (y == 0) return 1;
  return cimagf(y) == 0 && crealf(y) > 0 ? 0 : CMPLXF(NAN, NAN);
}

static bool complex_binary_value(Opcode op, double complex a, double complex b, ElementType t,
                                 double complex *out) {
  if (t == TYPE_C64) {
    float complex x = (float complex)a, y = (float complex)b, r;
    switch (op) {
    case OP_ADD: r = x + y; break;
    case OP_SUBTRACT: r = x - y; break;
    case OP_MULTIPLY: r = x * y; break;
    case OP_DIVIDE: r = x / y; break;
    case OP_POWER: r = power_c64(x, y); break;
    default: return false;
    }
    *out = r;
    return true;
  }
  switch (op) {
  case OP_ADD: *out = a + b; return true;
  case OP_SUBTRACT: *out = a - b; return true;
  case OP_MULTIPLY: *out = a * b; return true;
  case OP_DIVIDE: *out = a / b; return true;
  case OP_POWER: *out = power_c128(a, b); return true;
  default: return false;
  }
}

/* lhs and rhs are complex with the result's type and dims (eval_binary checked). */
Literal *eval_complex_binary(const Instruction *inst, const Literal *lhs, const Literal *rhs,
                             Status *st) {
  ElementType t = lhs->shape.type;
  double complex probe;
  if (!complex_binary_value(inst->opcode, 0, 1, t, &probe)) return complex_refused(inst, st);
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&lhs->shape);
  for (int64_t i = 0; i < n; i++) {
    double complex v = 0;
    complex_binary_value(inst->opcode, literal_get_complex(lhs, i), literal_get_complex(rhs, i), t, &v);
    literal_set_complex(out, i, v);
  }
  return out;
}

/* Complex numbers are equal when both parts are; a NaN part makes the pair
 * unordered, so only NE holds. There is no order: LT and the rest are
 * refused (the verifier refuses them first). */
Literal *eval_complex_compare(const Instruction *inst, const Literal *lhs, const Literal *rhs,
                              Status *st) {
  CompareDirection d = inst->attrs.direction;
  if (d != CMP_EQ && d != CMP_NE) {
    status_error(st, STATUS_UNSUPPORTED, "compare: complex numbers have no order (only EQ and NE)");
    return NULL;
  }
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&lhs->shape);
  for (int64_t i = 0; i < n; i++) {
    double complex a = literal_get_complex(lhs, i), b = literal_get_complex(rhs, i);
    literal_set_s64(out, i, (a == b) == (d == CMP_EQ));
  }
  return out;
}

/* ---- complex, real, imag ---- */

/* complex(re, im): re and im share the result's dims and component type. */
Literal *eval_complex(const Instruction *inst, Literal *const *operands, Status *st) {
  const Literal *re = operands[0], *im = operands[1];
  if (!eval_check_same_dims(inst, re, st) || !eval_check_same_dims(inst, im, st)) return NULL;
  ElementType part = type_complex_component(inst->shape.type);
  if (!type_is_complex(inst->shape.type) || re->shape.type != part || im->shape.type != part) {
    status_error(st, STATUS_VERIFY_ERROR, "complex: the parts must be %s for a %s result",
                 type_name(part), type_name(inst->shape.type));
    return NULL;
  }
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&inst->shape);
  for (int64_t i = 0; i < n; i++)
    literal_set_complex(out, i, CMPLX(literal_get_f64(re, i), literal_get_f64(im, i)));
  return out;
}

/* real and imag of a complex operand are its parts; of a real float
 * operand, real is the value itself and imag is zero (XLA's rule). */
static Literal *complex_part(const Instruction *inst, const Literal *x, bool imaginary, Status *st) {
  if (!eval_check_same_dims(inst, x, st)) return NULL;
  if (x->shape.type == TYPE_TUPLE || inst->shape.type != type_complex_component(x->shape.type)) {
    status_error(st, STATUS_VERIFY_ERROR, "%s: the result has the wrong element type",
                 opcode_name(inst->opcode));
    return NULL;
  }
  Literal *out = literal_create(&inst->shape);
  int64_t n = shape_element_count(&x->shape);
  if (!type_is_complex(x->shape.type)) {
    if (!imaginary) memcpy(out->data, x->data, (size_t)shape_byte_size(&x->shape));
    return out;
  }
  for (int64_t i = 0; i < n; i++) {
    double complex z = literal_get_complex(x, i);
    literal_set_f64(out, i, imaginary ? cimag(z) : creal(z));
  }
  return out;
}

Literal *eval_real(const Instruction *inst, Literal *const *operands, Status *st) {
  return complex_part(inst, operands[0], false, st);
}

Literal *eval_imag(const Instruction *inst, Literal *const *operands, Status *st) {
  return complex_part(inst, operands[0], true, st);
}

/* ---- convert ---- */

/* Into a complex type: a real value becomes (value, 0); a complex value
 * keeps both parts, each rounded to the target's component type. An
 * integer is read as a double first (exact below 2^53). */
void eval_complex_convert_element(Literal *out, int64_t i, const Literal *in) {
  literal_set_complex(out, i, literal_get_complex(in, i));
}
