/* The math functions written once: each algorithm (math_algorithms.c) is
 * a C function over a small set of primitive operations, and a target
 * gives the primitives their meaning:
 *   - C values (math_values.c): a value is its bits and each operation is
 *     done at once; this is the reference that the ulp tests measure
 *     (mathref_* in math_reference.h);
 *   - x86 (emit_x86/kernel_x86_math_program.c): each operation emits the
 *     math builder's few instructions, in scalar slots or vector lanes;
 *   - PTX (emit_ptx/ptx_math_program.c): each operation emits one or two
 *     PTX instructions on virtual registers.
 * Every target computes the same bits, since every operation is one IEEE
 * operation with one rounding (fma one fused rounding, min "a < c ? a : c",
 * round to nearest, subnormals kept) or exact integer and bit work.
 *
 * f32 and f64 differ in a MathFormat only (the types, the exponent field,
 * the constants and the coefficient tables): an algorithm that has the
 * same shape at both widths is written once for both. */
#ifndef AXLE_MATH_PROGRAM_H
#define AXLE_MATH_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

/* A value of a math program: its bits (C values; an f32 or i32 in the low
 * 32 bits), or the target's name for it (an x86 slot, a PTX register). */
typedef uint64_t MathVal;

/* The type of an operation's operands. A mask is a condition: 0 or 1 as
 * C values, a predicate in PTX, 0/1 or all-ones lanes on x86; a select
 * reads it as "nonzero". */
typedef enum MathType { MATH_F32, MATH_F64, MATH_I32, MATH_I64, MATH_MASK } MathType;

/* The primitive operations.
 *   MATH_OP(NAME, operands, what it computes on operands a, b, c)
 * Float operations round once to nearest; integer ones wrap (two's
 * complement); "to float"/"to int" change the type to the other kind of
 * the same width (f32 <-> i32, f64 <-> i64). */
#define AXLE_MATH_OPS(MATH_OP)                                                     \
  MATH_OP(ADD, 2, "a + b (float or integer)")                                      \
  MATH_OP(SUB, 2, "a - b (float or integer)")                                      \
  MATH_OP(MUL, 2, "a * b (float or integer)")                                      \
  MATH_OP(DIV, 2, "a / b (float)")                                                 \
  MATH_OP(FMA, 3, "a * b + c with one rounding (float)")                           \
  MATH_OP(MIN, 2, "a < b ? a : b (float: a NaN a gives b)")                        \
  MATH_OP(MAX, 2, "a > b ? a : b (float)")                                         \
  MATH_OP(SQRT, 1, "the correctly rounded square root of a (float)")               \
  MATH_OP(ABS, 1, "a without its sign bit (float)")                                \
  MATH_OP(NEGATE, 1, "a with its sign bit flipped (float)")                        \
  MATH_OP(COPYSIGN, 2, "a with the sign bit of b (float)")                         \
  MATH_OP(LESS, 2, "mask: a < b (float: false when unordered; signed integer)")   \
  MATH_OP(EQUAL, 2, "mask: a == b (float: false when unordered; integer)")        \
  MATH_OP(IS_NAN, 1, "mask: a is a NaN (float)")                                   \
  MATH_OP(AND, 2, "a & b (integer or mask)")                                       \
  MATH_OP(OR, 2, "a | b (integer or mask)")                                        \
  MATH_OP(XOR, 2, "a ^ b (integer or mask)")                                       \
  MATH_OP(NOT, 1, "mask: not a (mask)")                                            \
  MATH_OP(LESS_UNSIGNED, 2, "mask: a < b as unsigned integers (integer)")         \
  MATH_OP(MULTIPLY_HIGH, 2, "the high 64 bits of the unsigned 128-bit a b (i64)") \
  MATH_OP(SHIFT_LEFT, 2, "a << b, b a count, not a value (integer)")              \
  MATH_OP(SHIFT_RIGHT, 2, "a >> b, the sign copied in, b a count (integer)")      \
  MATH_OP(SHIFT_RIGHT_LOGICAL, 2, "a >> b, zeros shifted in, b a count (integer)") \
  MATH_OP(SHIFT_LEFT_BY, 2, "a << b, b a value in [0, width) (integer)")          \
  MATH_OP(SHIFT_RIGHT_LOGICAL_BY, 2, "a >> b, zeros in, b a value in [0, width)") \
  MATH_OP(EXTEND, 1, "the i64 of the unsigned a (i32)")                            \
  MATH_OP(TRUNCATE, 1, "the i32 of a's low 32 bits (i64)")                         \
  MATH_OP(TO_INT, 1, "a truncated toward zero to an integer (float)")              \
  MATH_OP(TO_FLOAT, 1, "a converted, rounded to nearest (integer)")                \
  MATH_OP(WIDEN, 1, "the f64 equal to a (f32)")                                  \
  MATH_OP(NARROW, 1, "a rounded to nearest f32 (f64)")                             \
  MATH_OP(BITS, 1, "the bits of a as an integer (float)")                          \
  MATH_OP(FROM_BITS, 1, "the float whose bits are a (integer)")                    \
  MATH_OP(SELECT, 3, "a ? b : c, a a mask, b and c of the type given")

typedef enum MathOp {
#define AXLE_MATH_OP_ENUM(name, operands, what) MATH_##name,
  AXLE_MATH_OPS(AXLE_MATH_OP_ENUM)
#undef AXLE_MATH_OP_ENUM
  MATH_OP_COUNT
} MathOp;

typedef struct MathTarget MathTarget;

/* A table that a program indexes by a value it computed: `rows` rows of
 * `columns` entries of one type (MATH_F64 or MATH_I32), row after row. A
 * target places it once (x86 in the code, jumped over; PTX as a .global
 * array named `symbol`, with `what` as its comment) and loads a row. */
typedef struct MathRows {
  const char *symbol, *what;
  MathType type;
  const void *entries;
  int rows, columns;
  int stride; /* entries from one row's start to the next's; 0: columns (rows may overlap) */
} MathRows;

/* A part of an algorithm that a target may run lane by lane (x86 vector
 * code runs it as scalar code on each lane in turn): `inputs` in,
 * `outputs` out, f32 and i32 values only. */
typedef void (*MathLanePart)(MathTarget *t, const MathVal *inputs, MathVal *outputs);

/* A target: the primitives' meaning, filled with designated
 * initializers. scope_begin/scope_end bracket each function: the values
 * made inside are dead after it but its result (x86 reuses their slots;
 * the other targets need no hook there and leave them NULL). */
struct MathTarget {
  MathVal (*op)(MathTarget *t, MathOp op, MathType type, MathVal a, MathVal b, MathVal c);
  /* A constant of a type from its bits (an f32's in the low 32 bits). */
  MathVal (*constant)(MathTarget *t, MathType type, uint64_t bits);
  /* Row `row` of a table into entries[0..columns): row an integer value
   * (I32 or I64) that the program has already clamped to [0, rows). */
  void (*load_row)(MathTarget *t, const MathRows *table, MathVal row, MathVal *entries);
  /* Code whose values only selects read, which discard them where mask
   * is set: a target may jump over it when mask is set everywhere (x86;
   * the C values and PTX leave these NULL and run it). */
  int (*skip_if_all)(MathTarget *t, MathVal mask);
  void (*skip_end)(MathTarget *t, int skip);
  /* part on inputs[0..input_count), lane by lane (NULL: called once) */
  void (*lane_by_lane)(MathTarget *t, MathLanePart part, const MathVal *inputs, int input_count, MathVal *outputs,
                       int output_count);
  /* a 2^n with one rounding, n a float holding an integer whose halves
   * (n >> 1 and n - (n >> 1)) are normal exponents: true with *result where
   * the target has one instruction for it (avx512's vscalefps), else
   * false or NULL, and the algorithm multiplies by the two halves' powers
   * of two, whose first product is exact: the same bits. */
  bool (*scale)(MathTarget *t, MathType real, MathVal a, MathVal n, MathVal *result);
  int (*scope_begin)(MathTarget *t);
  MathVal (*scope_end)(MathTarget *t, int scope, MathVal result);
  void *context; /* the target's own state (a MathBuilder, a PtxBuilder) */
};

/* A width: what an algorithm that reads the same at f32 and f64 needs to
 * know of its floats. math_format_f32 and math_format_f64 (in
 * math_algorithms.c) hold the tables of math_reference.h. */
typedef struct MathTable {
  const float *f32; /* one of the two */
  const double *f64;
  int count;
} MathTable;

typedef struct MathFormat {
  MathType real, integer; /* F32 and I32, or F64 and I64 */
  int mantissa_bits;      /* 23, 52: the exponent field's shift */
  int exponent_bias;      /* 127, 1023 */
  double round_shifter;   /* added and subtracted, rounds to an integer */
  double log2e, ln2_hi, ln2_lo;
  double exp_low, exp_high; /* exp's argument is clamped to these */
  MathTable exp_table;      /* (e^r - 1 - r) / r^2 */
  /* expm1: its lower clamp, below which it returns x, its table, and
   * whether r keeps what its rounding lost (f64) */
  double expm1_low, expm1_tiny;
  MathTable expm1_table;
  bool expm1_keeps_lost;
  /* log: below subnormal_limit x is scaled by 2^subnormal_shift; the bits
   * of sqrt(1/2) split x's exponent and mantissa; log1p returns x below
   * log1p_tiny; the table is log(1+f)'s (f32) or R(s^2)'s of the atanh
   * form (f64, log_atanh_form). */
  double subnormal_limit, log1p_tiny;
  int subnormal_shift;
  uint64_t sqrt_half_bits;
  MathTable log_table;
  bool log_atanh_form;
  /* sinh and cosh switch to (h/2) h, h = e^(|x|/2), from hyperbolic_limit
   * on (where e^|x| would overflow first); asinh and acosh to
   * log|x| + ln 2 from inverse_hyperbolic_limit on (where sqrt(1 + x^2)
   * is |x|); ln2 rounded once */
  double hyperbolic_limit, inverse_hyperbolic_limit, ln2;
  /* atan2: |t| <= tan(pi/8) after the fold, pi/4 in two parts, the table
   * in t^2; at f64 operands below 2^-900 are first scaled by 2^600 so
   * that the division's remainder stays normal (atan2_scales) */
  double tan_pi_8, pio4_hi, pio4_lo;
  MathTable atan_table;
  bool atan2_scales;
  /* cbrt: a subnormal x is scaled by 2^cbrt_subnormal_shift; e/3 is
   * ((e + 3 cbrt_offset) 21846 >> 16) - cbrt_offset, exact for every
   * exponent; f32 guesses with its table, f64 with f32's cbrt; then
   * cbrt_newton_steps Newton steps */
  int cbrt_subnormal_shift, cbrt_offset, cbrt_newton_steps;
} MathFormat;

extern const MathFormat math_format_f32, math_format_f64;

/* ---- the algorithms (math_algorithms.c); docs/math.md states each ---- */

/* A one-argument algorithm: x of f's real type in, its result out. */
typedef MathVal (*MathFunction)(MathTarget *t, const MathFormat *f, MathVal x);
/* atan2 and pow: functions of two values. */
typedef MathVal (*MathFunction2)(MathTarget *t, const MathFormat *f, MathVal a, MathVal b);

MathVal math_program_exp(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_expm1(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_log(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_log1p(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_logistic(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_sinh(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_cosh(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_asinh(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_acosh(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_atanh(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_rsqrt(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_cbrt(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_atan2(MathTarget *t, const MathFormat *f, MathVal y, MathVal x);
MathVal math_program_atan(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_asin(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_acos(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_tanh(MathTarget *t, const MathFormat *f, MathVal x); /* one algorithm per width */
/* math_algorithms_erf_pow.c: one algorithm per width */
MathVal math_program_erf(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_pow(MathTarget *t, const MathFormat *f, MathVal x, MathVal y);
/* math_algorithms_trig.c: one algorithm per width */
MathVal math_program_sin(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_cos(MathTarget *t, const MathFormat *f, MathVal x);
MathVal math_program_tan(MathTarget *t, const MathFormat *f, MathVal x);

/* ---- writing algorithms: one call per primitive ---- */

static inline MathVal mp_op(MathTarget *t, MathOp op, MathType type, MathVal a, MathVal b, MathVal c) {
  return t->op(t, op, type, a, b, c);
}
static inline MathVal mp_unary(MathTarget *t, MathOp op, MathType type, MathVal a) {
  return t->op(t, op, type, a, 0, 0);
}
static inline MathVal mp_binary(MathTarget *t, MathOp op, MathType type, MathVal a, MathVal b) {
  return t->op(t, op, type, a, b, 0);
}
static inline MathVal mp_select(MathTarget *t, MathType type, MathVal mask, MathVal a, MathVal b) {
  return t->op(t, MATH_SELECT, type, mask, a, b);
}
static inline MathVal mp_shift(MathTarget *t, MathOp op, MathType type, MathVal a, int count) {
  return t->op(t, op, type, a, (MathVal)count, 0);
}

/* A float constant of type real (an f32 table's numbers are exact in
 * double, so the round trip keeps them), and an integer one. */
MathVal mp_real(MathTarget *t, MathType real, double c);
MathVal mp_int(MathTarget *t, MathType integer, int64_t c);

/* Helpers the algorithms share (math_algorithms.c). */
int mp_scope_begin(MathTarget *t);
MathVal mp_scope_end(MathTarget *t, int scope, MathVal result);
/* Horner's rule, one fma per coefficient: c[0] + c[1] v + ... */
MathVal mp_polynomial(MathTarget *t, MathType real, const MathTable *table, MathVal v);
/* a + b = s + *e exactly (Knuth's two-sum); returns s */
MathVal mp_two_sum(MathTarget *t, MathType real, MathVal a, MathVal b, MathVal *e);
/* a b - p exactly, p = a b rounded: one fma */
MathVal mp_product_error(MathTarget *t, MathType real, MathVal a, MathVal b, MathVal p);
/* mask ? c : y, c a constant */
MathVal mp_select_constant(MathTarget *t, MathType type, MathVal mask, double c, MathVal y);
MathVal mp_quiet_nan(MathTarget *t, const MathFormat *f);
/* The last step of every function: a NaN x returns x + x (quieted). */
MathVal mp_nan_passed(MathTarget *t, MathType real, MathVal x, MathVal y);
/* 2^n for an integer n of the normal exponents, built in the exponent
 * field */
MathVal mp_power_of_two(MathTarget *t, const MathFormat *f, MathVal n);
/* A positive normal x = 2^e m with m in [sqrt(1/2), sqrt(2)): returns
 * m - 1 (exact) and e, by integer arithmetic on the bits */
MathVal mp_log_split(MathTarget *t, const MathFormat *f, MathVal x, MathVal *e);

#endif
