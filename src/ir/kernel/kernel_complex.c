/* Complex numbers as pairs of reals: a kernel whose buffers or values are
 * c64 (c128) rewritten into one on f32 (f64) only, so that a code
 * generator that knows real arithmetic runs complex kernels unchanged.
 *
 * A complex buffer becomes a real buffer with one more, innermost,
 * dimension of extent 2 (component 0 the real part, 1 the imaginary part):
 * the same bytes, since a complex element is its two parts side by side.
 * Each complex value becomes two real values; loads, stores and
 * accumulators come in pairs; each complex op becomes the real ops of its
 * formula (see kernel.h for the list). A loop of componentwise ops only
 * (add, subtract, negate) keeps the parts inline instead: see
 * merge_components.
 *
 * The formulas are those of the evaluator (src/ir/eval/eval_complex.c),
 * which computes in C's float complex / double complex: multiplication and
 * division follow C's Annex G, as libgcc's __mulsc3 and __divsc3 do,
 * including their recovery of infinities from NaN results; c64 division
 * and magnitude are computed in f64 and rounded once, as libgcc and glibc
 * do for float. The transcendental parts (exp, log, sin, cos, atan2 on
 * the reals) are ordinary real ops of the kernel: a code generator that
 * lacks one refuses the kernel with that op's name.
 *
 * Where they differ from C: c128 division is Smith's method without
 * libgcc's rescaling near the ends of the exponent range; the
 * transcendental formulas keep C's special cases only for zeros (and
 * sqrt's for infinities), so an infinite or NaN part may give another
 * NaN/infinity pattern than C's case tables, and exp, sin, cos, tanh
 * overflow a little before C's do (e^x is formed before it is scaled). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/kernel/kernel.h"

typedef struct Pair {
  int re, im;
} Pair;

enum { SPLIT_CONSTANTS = 64 };

typedef struct Split {
  const Kernel *from;
  Kernel *to;
  const KernelOp *at;  /* the op being rewritten: its block, phase and origin */
  int *re, *im;        /* per value of `from`: its real part (or itself) and imaginary part (-1: real) */
  int acc_re[AXLE_MAX_RANK], acc_im[AXLE_MAX_RANK];
  int constants[SPLIT_CONSTANTS]; /* constants k_const made, to reuse */
  int constant_count;
  Status *st;
} Split;

static bool split_fail(Split *s, const char *why) {
  if (s->st->code == STATUS_OK)
    status_error(s->st, STATUS_UNSUPPORTED, "kernel %s: complex %s has no real-pair form yet", s->from->name, why);
  return false;
}

/* ---- building real ops (in the block, phase and origin of s->at) ---- */

static int op_add(Split *s, KernelOp op) {
  op.block = s->at->block;
  op.phase = s->at->phase;
  op.origin = s->at->origin;
  return kernel_add_op(s->to, &op);
}

/* A constant, made once: a PRE one serves every block, another one its own
 * block and phase (the formulas below use 0, 1 and infinity many times). */
static int k_const(Split *s, ElementType t, double v) {
  KernelOp op = {.kop = KOP_CONSTANT, .type = t};
  if (type_is_float(t)) op.value.f = v;
  else op.value.i = (int64_t)v;
  for (int n = 0; n < s->constant_count; n++) {
    const KernelOp *c = &s->to->ops[s->constants[n]];
    if (c->type != t || memcmp(&c->value, &op.value, sizeof op.value) != 0) continue;
    if (c->block == KBLOCK_PRE || (c->block == s->at->block && c->phase == s->at->phase)) return s->constants[n];
  }
  int id = op_add(s, op);
  if (s->constant_count < SPLIT_CONSTANTS) s->constants[s->constant_count++] = id;
  return id;
}

static int k_op(Split *s, Opcode code, ElementType t, int a, int b, int c) {
  KernelOp op = {.kop = KOP_HLO, .type = t, .op = code, .arg_count = b < 0 ? 1 : c < 0 ? 2 : 3};
  op.args[0] = a, op.args[1] = b, op.args[2] = c;
  return op_add(s, op);
}

static int k_unary(Split *s, Opcode code, ElementType t, int a) { return k_op(s, code, t, a, -1, -1); }
static int k_binary(Split *s, Opcode code, ElementType t, int a, int b) { return k_op(s, code, t, a, b, -1); }

static int k_compare(Split *s, CompareDirection d, int a, int b) {
  KernelOp op = {.kop = KOP_HLO, .type = TYPE_PRED, .op = OP_COMPARE, .direction = d, .arg_count = 2};
  op.compare_type = type_is_float(s->to->ops[a].type) ? CMP_TYPE_FLOAT : CMP_TYPE_SIGNED;
  op.args[0] = a, op.args[1] = b;
  return op_add(s, op);
}

/* Real arithmetic on values of type t (f32 or f64). */
static int r_add(Split *s, ElementType t, int a, int b) { return k_binary(s, OP_ADD, t, a, b); }
static int r_sub(Split *s, ElementType t, int a, int b) { return k_binary(s, OP_SUBTRACT, t, a, b); }
static int r_mul(Split *s, ElementType t, int a, int b) { return k_binary(s, OP_MULTIPLY, t, a, b); }
static int r_div(Split *s, ElementType t, int a, int b) { return k_binary(s, OP_DIVIDE, t, a, b); }
static int r_neg(Split *s, ElementType t, int a) { return k_unary(s, OP_NEGATE, t, a); }
static int r_abs(Split *s, ElementType t, int a) { return k_unary(s, OP_ABS, t, a); }
static int r_select(Split *s, ElementType t, int p, int a, int b) { return k_op(s, OP_SELECT, t, p, a, b); }
static int p_and(Split *s, int a, int b) { return k_binary(s, OP_AND, TYPE_PRED, a, b); }
static int p_or(Split *s, int a, int b) { return k_binary(s, OP_OR, TYPE_PRED, a, b); }
static int p_not(Split *s, int a) { return k_unary(s, OP_NOT, TYPE_PRED, a); }

static int is_nan(Split *s, int a) { return k_compare(s, CMP_NE, a, a); }
static int is_zero(Split *s, ElementType t, int a) { return k_compare(s, CMP_EQ, a, k_const(s, t, 0)); }
static int is_inf(Split *s, ElementType t, int a) {
  return k_compare(s, CMP_EQ, r_abs(s, t, a), k_const(s, t, INFINITY));
}

/* The sign bit (set for -0 and negative NaNs, which a compare cannot see). */
static int sign_bit(Split *s, ElementType t, int a) {
  ElementType bits = t == TYPE_F64 ? TYPE_S64 : TYPE_S32;
  return k_compare(s, CMP_LT, k_unary(s, OP_BITCAST_CONVERT, bits, a), k_const(s, bits, 0));
}

/* C's copysign(magnitude, sign) for a magnitude without a sign bit. */
static int copy_sign(Split *s, ElementType t, int magnitude, int sign) {
  return r_select(s, t, sign_bit(s, t, sign), r_neg(s, t, magnitude), magnitude);
}

static Pair pair_select(Split *s, ElementType t, int p, Pair a, Pair b) {
  return (Pair){r_select(s, t, p, a.re, b.re), r_select(s, t, p, a.im, b.im)};
}

static Pair pair_convert(Split *s, ElementType to, Pair z) {
  ElementType from = s->to->ops[z.re].type;
  if (from == to) return z;
  return (Pair){k_unary(s, OP_CONVERT, to, z.re), k_unary(s, OP_CONVERT, to, z.im)};
}

/* ---- multiplication and division (C's Annex G, as libgcc) ---- */

/* What C's recovery rules ask of each part, computed once. */
typedef struct PartFacts {
  int inf, nan, negative;  /* preds; negative is the sign bit */
  int finite;
} PartFacts;

static PartFacts part_facts(Split *s, ElementType t, int v) {
  int magnitude = r_abs(s, t, v), inf = k_const(s, t, INFINITY);
  return (PartFacts){.inf = k_compare(s, CMP_EQ, magnitude, inf), .nan = is_nan(s, v), .negative = sign_bit(s, t, v),
                     .finite = k_compare(s, CMP_LT, magnitude, inf)};
}

/* copysign(1 or 0, v): ±1 for an infinite v, ±0 otherwise (C's "boxing"). */
static int part_boxed(Split *s, ElementType t, const PartFacts *f) {
  int one = r_select(s, t, f->negative, k_const(s, t, -1), k_const(s, t, 1));
  return r_select(s, t, f->inf, one, r_select(s, t, f->negative, k_const(s, t, -0.0), k_const(s, t, 0)));
}

/* v, or copysign(0, v) for a NaN v. */
static int part_unnan(Split *s, ElementType t, int v, const PartFacts *f) {
  return r_select(s, t, f->nan, r_select(s, t, f->negative, k_const(s, t, -0.0), k_const(s, t, 0)), v);
}

/* (a + ib)(c + id) = (ac - bd) + i(ad + bc); when both parts come out NaN
 * and a factor is infinite (or a product overflowed), C recomputes with
 * the infinities boxed to ±1 and the NaNs set to ±0, times infinity. */
static Pair complex_multiply(Split *s, ElementType t, Pair x, Pair y) {
  int parts[4] = {x.re, x.im, y.re, y.im};
  int ac = r_mul(s, t, parts[0], parts[2]), bd = r_mul(s, t, parts[1], parts[3]);
  int ad = r_mul(s, t, parts[0], parts[3]), bc = r_mul(s, t, parts[1], parts[2]);
  Pair naive = {r_sub(s, t, ac, bd), r_add(s, t, ad, bc)};
  PartFacts f[4];
  for (int i = 0; i < 4; i++) f[i] = part_facts(s, t, parts[i]);
  int x_inf = p_or(s, f[0].inf, f[1].inf), y_inf = p_or(s, f[2].inf, f[3].inf);
  int overflowed = p_or(s, p_or(s, is_inf(s, t, ac), is_inf(s, t, bd)), p_or(s, is_inf(s, t, ad), is_inf(s, t, bc)));
  int recalc = p_or(s, p_or(s, x_inf, y_inf), overflowed);
  /* a factor that is infinite is boxed; NaNs elsewhere become ±0 */
  for (int i = 0; i < 4; i++)
    parts[i] = r_select(s, t, i < 2 ? x_inf : y_inf, part_boxed(s, t, &f[i]), part_unnan(s, t, parts[i], &f[i]));
  int inf = k_const(s, t, INFINITY);
  Pair recovered = {r_mul(s, t, inf, r_sub(s, t, r_mul(s, t, parts[0], parts[2]), r_mul(s, t, parts[1], parts[3]))),
                    r_mul(s, t, inf, r_add(s, t, r_mul(s, t, parts[0], parts[3]), r_mul(s, t, parts[1], parts[2])))};
  int both_nan = p_and(s, is_nan(s, naive.re), is_nan(s, naive.im));
  return pair_select(s, t, p_and(s, both_nan, recalc), recovered, naive);
}

/* c64: in f64 without Smith's scaling, then rounded once (libgcc's
 * __divsc3 where the hardware has double). */
static Pair divide_wide(Split *s, Pair x, Pair y) {
  Pair w = pair_convert(s, TYPE_F64, x), v = pair_convert(s, TYPE_F64, y);
  const ElementType t = TYPE_F64;
  int denominator = r_add(s, t, r_mul(s, t, v.re, v.re), r_mul(s, t, v.im, v.im));
  int re = r_div(s, t, r_add(s, t, r_mul(s, t, w.re, v.re), r_mul(s, t, w.im, v.im)), denominator);
  int im = r_div(s, t, r_sub(s, t, r_mul(s, t, w.im, v.re), r_mul(s, t, w.re, v.im)), denominator);
  return pair_convert(s, TYPE_F32, (Pair){re, im});
}

/* c128: Smith's method, dividing through by the larger of |c| and |d|. */
static Pair divide_smith(Split *s, Pair x, Pair y) {
  const ElementType t = TYPE_F64;
  int a = x.re, b = x.im, c = y.re, d = y.im;
  /* |c| < |d|: ratio = c/d, denominator = c ratio + d */
  int r1 = r_div(s, t, c, d), den1 = r_add(s, t, r_mul(s, t, c, r1), d);
  Pair q1 = {r_div(s, t, r_add(s, t, r_mul(s, t, a, r1), b), den1),
             r_div(s, t, r_sub(s, t, r_mul(s, t, b, r1), a), den1)};
  /* otherwise: ratio = d/c, denominator = d ratio + c */
  int r2 = r_div(s, t, d, c), den2 = r_add(s, t, r_mul(s, t, d, r2), c);
  Pair q2 = {r_div(s, t, r_add(s, t, r_mul(s, t, b, r2), a), den2),
             r_div(s, t, r_sub(s, t, b, r_mul(s, t, a, r2)), den2)};
  return pair_select(s, t, k_compare(s, CMP_LT, r_abs(s, t, c), r_abs(s, t, d)), q1, q2);
}

/* x / y; where both parts come out NaN, C recovers: a nonzero over zero is
 * an infinity, an infinity over a finite number is an infinity, a finite
 * number over an infinity is a zero. */
static Pair complex_divide(Split *s, ElementType t, Pair x, Pair y) {
  Pair q = t == TYPE_F32 ? divide_wide(s, x, y) : divide_smith(s, x, y);
  int a = x.re, b = x.im, c = y.re, d = y.im;
  PartFacts fa = part_facts(s, t, a), fb = part_facts(s, t, b), fc = part_facts(s, t, c), fd = part_facts(s, t, d);
  int zero = k_const(s, t, 0), inf = k_const(s, t, INFINITY);
  /* by zero */
  int by_zero = p_and(s, p_and(s, is_zero(s, t, c), is_zero(s, t, d)), p_not(s, p_and(s, fa.nan, fb.nan)));
  int signed_inf = r_select(s, t, fc.negative, k_const(s, t, -INFINITY), inf);
  Pair q_zero = {r_mul(s, t, signed_inf, a), r_mul(s, t, signed_inf, b)};
  /* infinite over finite: the infinities boxed to ±1, the rest ±0 */
  int inf_over = p_and(s, p_or(s, fa.inf, fb.inf), p_and(s, fc.finite, fd.finite));
  int ba = part_boxed(s, t, &fa), bb = part_boxed(s, t, &fb);
  Pair q_inf = {r_mul(s, t, inf, r_add(s, t, r_mul(s, t, ba, c), r_mul(s, t, bb, d))),
                r_mul(s, t, inf, r_sub(s, t, r_mul(s, t, bb, c), r_mul(s, t, ba, d)))};
  /* finite over infinite */
  int over_inf = p_and(s, p_or(s, fc.inf, fd.inf), p_and(s, fa.finite, fb.finite));
  int bc = part_boxed(s, t, &fc), bd = part_boxed(s, t, &fd);
  Pair q_small = {r_mul(s, t, zero, r_add(s, t, r_mul(s, t, a, bc), r_mul(s, t, b, bd))),
                  r_mul(s, t, zero, r_sub(s, t, r_mul(s, t, b, bc), r_mul(s, t, a, bd)))};
  Pair recovered = pair_select(s, t, over_inf, q_small, q);
  recovered = pair_select(s, t, inf_over, q_inf, recovered);
  recovered = pair_select(s, t, by_zero, q_zero, recovered);
  int both_nan = p_and(s, is_nan(s, q.re), is_nan(s, q.im));
  return pair_select(s, t, both_nan, recovered, q);
}

/* ---- magnitude, square root, sign ---- */

/* |z| = hypot(x, y), infinite when either part is (even beside a NaN).
 * c64 squares in f64, where nothing overflows, and rounds once (glibc's
 * hypotf); c128 scales by the larger part first. */
static int complex_abs(Split *s, ElementType t, Pair z) {
  int ax = r_abs(s, t, z.re), ay = r_abs(s, t, z.im), r;
  if (t == TYPE_F32) {
    Pair w = pair_convert(s, TYPE_F64, z);
    int sum = r_add(s, TYPE_F64, r_mul(s, TYPE_F64, w.re, w.re), r_mul(s, TYPE_F64, w.im, w.im));
    r = k_unary(s, OP_CONVERT, TYPE_F32, k_unary(s, OP_SQRT, TYPE_F64, sum));
  } else {
    int big = k_binary(s, OP_MAXIMUM, t, ax, ay), small = k_binary(s, OP_MINIMUM, t, ax, ay);
    int ratio = r_div(s, t, small, big);
    int scaled = r_mul(s, t, big, k_unary(s, OP_SQRT, t, r_add(s, t, k_const(s, t, 1), r_mul(s, t, ratio, ratio))));
    r = r_select(s, t, is_zero(s, t, big), k_const(s, t, 0), scaled);
  }
  int either_inf = p_or(s, is_inf(s, t, ax), is_inf(s, t, ay));
  return r_select(s, t, either_inf, k_const(s, t, INFINITY), r);
}

/* The principal square root (C's csqrt): t = sqrt((|x| + |z|) / 2); for
 * x >= 0 it is t + i y/(2t), else |y|/(2t) + i copysign(t, y). ±0 stays
 * (+0, y); an infinite y gives (+inf, y) whatever x is. c64 runs in f64. */
static Pair complex_sqrt(Split *s, ElementType t, Pair z) {
  ElementType w = TYPE_F64;
  Pair v = pair_convert(s, w, z);
  int magnitude = complex_abs(s, w, v);
  int half = r_mul(s, w, r_add(s, w, r_abs(s, w, v.re), magnitude), k_const(s, w, 0.5));
  int root = k_unary(s, OP_SQRT, w, half), twice = r_add(s, w, root, root);
  Pair right = {root, r_div(s, w, v.im, twice)};
  Pair left = {r_div(s, w, r_abs(s, w, v.im), twice), copy_sign(s, w, root, v.im)};
  Pair r = pair_select(s, w, k_compare(s, CMP_GE, v.re, k_const(s, w, 0)), right, left);
  Pair at_zero = {k_const(s, w, 0), v.im};
  r = pair_select(s, w, p_and(s, is_zero(s, w, v.re), is_zero(s, w, v.im)), at_zero, r);
  Pair at_inf = {k_const(s, w, INFINITY), v.im};
  r = pair_select(s, w, is_inf(s, w, v.im), at_inf, r);
  return pair_convert(s, t, r);
}

/* sign(z) = z / |z|, and 0 for 0 (eval_complex.c's sign_c64/c128). */
static Pair complex_sign(Split *s, ElementType t, Pair z) {
  int r = complex_abs(s, t, z), zero = k_const(s, t, 0);
  int at_zero = is_zero(s, t, r);
  return (Pair){r_select(s, t, at_zero, zero, r_div(s, t, z.re, r)),
                r_select(s, t, at_zero, zero, r_div(s, t, z.im, r))};
}

/* ---- exponentials, logarithms, trigonometry ---- */

/* sinh and cosh of a, from expm1 so that sinh stays accurate near 0:
 * with m = expm1(|a|), sinh|a| = (m + m/(m+1)) / 2, cosh a = (e + 1/e) / 2. */
static void hyperbolic(Split *s, ElementType t, int a, int *sinh_out, int *cosh_out) {
  int m = k_unary(s, OP_EXPONENTIAL_MINUS_ONE, t, r_abs(s, t, a));
  int one = k_const(s, t, 1), half = k_const(s, t, 0.5);
  int e = r_add(s, t, m, one);
  *sinh_out = copy_sign(s, t, r_mul(s, t, half, r_add(s, t, m, r_div(s, t, m, e))), a);
  *cosh_out = r_mul(s, t, half, r_add(s, t, e, r_div(s, t, one, e)));
}

/* exp(x + iy) = e^x (cos y + i sin y); a real z keeps its zero imaginary part. */
static Pair complex_exp(Split *s, ElementType t, Pair z) {
  int e = k_unary(s, OP_EXPONENTIAL, t, z.re);
  int im = r_mul(s, t, e, k_unary(s, OP_SINE, t, z.im));
  return (Pair){r_mul(s, t, e, k_unary(s, OP_COSINE, t, z.im)), r_select(s, t, is_zero(s, t, z.im), z.im, im)};
}

/* expm1(x + iy) = (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y. */
static Pair complex_expm1(Split *s, ElementType t, Pair z) {
  int half = k_unary(s, OP_SINE, t, r_mul(s, t, z.im, k_const(s, t, 0.5)));
  int twice_square = r_mul(s, t, r_mul(s, t, k_const(s, t, 2), half), half);
  int re = r_sub(s, t, r_mul(s, t, k_unary(s, OP_EXPONENTIAL_MINUS_ONE, t, z.re), k_unary(s, OP_COSINE, t, z.im)),
                 twice_square);
  int im = r_mul(s, t, k_unary(s, OP_EXPONENTIAL, t, z.re), k_unary(s, OP_SINE, t, z.im));
  return (Pair){re, im};
}

/* log z = log|z| + i atan2(y, x). Near |z| = 1, where log|z| is small and
 * |z| has lost its low bits, log|z| = log1p((x - 1)(x + 1) + y^2) / 2. */
static Pair complex_log(Split *s, ElementType t, Pair z) {
  int magnitude = complex_abs(s, t, z), one = k_const(s, t, 1);
  int near_one = r_add(s, t, r_mul(s, t, r_sub(s, t, z.re, one), r_add(s, t, z.re, one)), r_mul(s, t, z.im, z.im));
  int near = r_mul(s, t, k_const(s, t, 0.5), k_unary(s, OP_LOG_PLUS_ONE, t, near_one));
  int is_near = p_and(s, k_compare(s, CMP_GE, magnitude, k_const(s, t, 0.5)),
                      k_compare(s, CMP_LE, magnitude, k_const(s, t, 2)));
  int re = r_select(s, t, is_near, near, k_unary(s, OP_LOG, t, magnitude));
  return (Pair){re, k_binary(s, OP_ATAN2, t, z.im, z.re)};
}

/* log1p(z) = log|1 + z| + i arg(1 + z), |1 + z|^2 = 1 + (x(2 + x) + y^2). */
static Pair complex_log1p(Split *s, ElementType t, Pair z) {
  int one = k_const(s, t, 1);
  int inner = r_add(s, t, r_mul(s, t, z.re, r_add(s, t, k_const(s, t, 2), z.re)), r_mul(s, t, z.im, z.im));
  return (Pair){r_mul(s, t, k_const(s, t, 0.5), k_unary(s, OP_LOG_PLUS_ONE, t, inner)),
                k_binary(s, OP_ATAN2, t, z.im, r_add(s, t, one, z.re))};
}

/* sin z = sin x cosh y + i cos x sinh y; cos z = cos x cosh y - i sin x sinh y. */
static Pair complex_sin_cos(Split *s, ElementType t, Pair z, bool cosine) {
  int sh, ch, sx = k_unary(s, OP_SINE, t, z.re), cx = k_unary(s, OP_COSINE, t, z.re);
  hyperbolic(s, t, z.im, &sh, &ch);
  if (!cosine) return (Pair){r_mul(s, t, sx, ch), r_mul(s, t, cx, sh)};
  return (Pair){r_mul(s, t, cx, ch), r_neg(s, t, r_mul(s, t, sx, sh))};
}

/* tanh(x + iy) = (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y);
 * past |x| = big (where sinh^2 would overflow) it is ±1 + i 4 sin y cos y e^(-2|x|). */
static Pair complex_tanh(Split *s, ElementType t, Pair z) {
  int sh, ch, sy = k_unary(s, OP_SINE, t, z.im), cy = k_unary(s, OP_COSINE, t, z.im);
  hyperbolic(s, t, z.re, &sh, &ch);
  int denominator = r_add(s, t, r_mul(s, t, sh, sh), r_mul(s, t, cy, cy));
  Pair near = {r_div(s, t, r_mul(s, t, sh, ch), denominator), r_div(s, t, r_mul(s, t, sy, cy), denominator)};
  int decay = k_unary(s, OP_EXPONENTIAL, t, r_mul(s, t, k_const(s, t, -2), r_abs(s, t, z.re)));
  Pair far = {copy_sign(s, t, k_const(s, t, 1), z.re),
              r_mul(s, t, r_mul(s, t, k_const(s, t, 4), r_mul(s, t, sy, cy)), decay)};
  double big = t == TYPE_F32 ? 40 : 350;
  return pair_select(s, t, k_compare(s, CMP_GT, r_abs(s, t, z.re), k_const(s, t, big)), far, near);
}

/* tan z = -i tanh(iz). */
static Pair complex_tan(Split *s, ElementType t, Pair z) {
  Pair h = complex_tanh(s, t, (Pair){r_neg(s, t, z.im), z.re});
  return (Pair){h.im, r_neg(s, t, h.re)};
}

/* x^y = exp(y log x), with the evaluator's rule for a zero base: 0^0 = 1,
 * 0^y = 0 for a real positive y, NaN otherwise. */
static Pair complex_power(Split *s, ElementType t, Pair x, Pair y) {
  Pair r = complex_exp(s, t, complex_multiply(s, t, y, complex_log(s, t, x)));
  int zero = k_const(s, t, 0), nan = k_const(s, t, NAN);
  int y_zero = p_and(s, is_zero(s, t, y.re), is_zero(s, t, y.im));
  int y_positive = p_and(s, is_zero(s, t, y.im), k_compare(s, CMP_GT, y.re, zero));
  int at_zero = r_select(s, t, y_zero, k_const(s, t, 1), r_select(s, t, y_positive, zero, nan));
  Pair zero_base = {at_zero, r_select(s, t, y_zero, zero, r_select(s, t, y_positive, zero, nan))};
  return pair_select(s, t, p_and(s, is_zero(s, t, x.re), is_zero(s, t, x.im)), zero_base, r);
}

/* The principal cube root, exp(log(z) / 3); 0 stays itself. */
static Pair complex_cbrt(Split *s, ElementType t, Pair z) {
  Pair l = complex_log(s, t, z);
  int third = k_const(s, t, 1.0 / 3.0);
  Pair r = complex_exp(s, t, (Pair){r_mul(s, t, l.re, third), r_mul(s, t, l.im, third)});
  return pair_select(s, t, p_and(s, is_zero(s, t, z.re), is_zero(s, t, z.im)), z, r);
}

/* 1 / (1 + exp(-z)). */
static Pair complex_logistic(Split *s, ElementType t, Pair z) {
  Pair e = complex_exp(s, t, (Pair){r_neg(s, t, z.re), r_neg(s, t, z.im)});
  int one = k_const(s, t, 1);
  return complex_divide(s, t, (Pair){one, k_const(s, t, 0)}, (Pair){r_add(s, t, one, e.re), e.im});
}

/* ---- the rewrite, op by op ---- */

static Pair pair_of(const Split *s, int value) { return (Pair){s->re[value], s->im[value]}; }

static Pair complex_unary(Split *s, Opcode code, ElementType t, Pair z) {
  int one = k_const(s, t, 1), zero = k_const(s, t, 0);
  switch (code) {
  case OP_NEGATE: return (Pair){r_neg(s, t, z.re), r_neg(s, t, z.im)};
  case OP_SQRT: return complex_sqrt(s, t, z);
  case OP_RSQRT: return complex_divide(s, t, (Pair){one, zero}, complex_sqrt(s, t, z));
  case OP_SIGN: return complex_sign(s, t, z);
  case OP_EXPONENTIAL: return complex_exp(s, t, z);
  case OP_EXPONENTIAL_MINUS_ONE: return complex_expm1(s, t, z);
  case OP_LOG: return complex_log(s, t, z);
  case OP_LOG_PLUS_ONE: return complex_log1p(s, t, z);
  case OP_SINE: return complex_sin_cos(s, t, z, false);
  case OP_COSINE: return complex_sin_cos(s, t, z, true);
  case OP_TAN: return complex_tan(s, t, z);
  case OP_TANH: return complex_tanh(s, t, z);
  case OP_LOGISTIC: return complex_logistic(s, t, z);
  case OP_CBRT: return complex_cbrt(s, t, z);
  default: return (Pair){-1, -1};
  }
}

static Pair complex_binary(Split *s, Opcode code, ElementType t, Pair x, Pair y) {
  switch (code) {
  case OP_ADD: return (Pair){r_add(s, t, x.re, y.re), r_add(s, t, x.im, y.im)};
  case OP_SUBTRACT: return (Pair){r_sub(s, t, x.re, y.re), r_sub(s, t, x.im, y.im)};
  case OP_MULTIPLY: return complex_multiply(s, t, x, y);
  case OP_DIVIDE: return complex_divide(s, t, x, y);
  case OP_POWER: return complex_power(s, t, x, y);
  default: return (Pair){-1, -1};
  }
}

/* convert into a complex type: a real value v becomes (v, 0); a complex
 * value converts each part. The evaluator reads a real value as a double
 * first, so a 64-bit integer bound for c64 is rounded twice, as there. */
static Pair complex_convert(Split *s, const KernelOp *op, ElementType t) {
  int x = op->args[0];
  if (s->im[x] >= 0) return pair_convert(s, t, pair_of(s, x));
  int re = s->re[x];
  ElementType from = s->to->ops[re].type;
  if (t == TYPE_F32 && (from == TYPE_S64 || from == TYPE_U64))
    re = k_unary(s, OP_CONVERT, TYPE_F64, re), from = TYPE_F64;
  if (from != t) re = k_unary(s, OP_CONVERT, t, re);
  return (Pair){re, k_const(s, t, 0)};
}

/* An HLO op with a complex operand or result: its real parts. */
static bool split_hlo(Split *s, int i) {
  const KernelOp *op = &s->from->ops[i];
  int x = op->args[0], y = op->arg_count > 1 ? op->args[1] : -1;
  bool complex_operand = s->im[x] >= 0;
  ElementType t = type_is_complex(op->type) ? type_complex_component(op->type)
                  : complex_operand          ? type_complex_component(s->from->ops[x].type)
                                             : op->type;
  Pair r = {-1, -1};
  switch (op->op) {
  case OP_REAL: s->re[i] = s->re[x]; return true;
  case OP_IMAG: s->re[i] = complex_operand ? s->im[x] : k_const(s, t, 0); return true;
  case OP_ABS: s->re[i] = complex_abs(s, t, pair_of(s, x)); return true;
  case OP_COMPLEX: r = (Pair){s->re[x], s->re[y]}; break;
  case OP_CONVERT: r = complex_convert(s, op, t); break;
  case OP_SELECT: r = pair_select(s, t, s->re[x], pair_of(s, y), pair_of(s, op->args[2])); break;
  case OP_COMPARE: {
    int re = k_compare(s, op->direction, s->re[x], s->re[y]), im = k_compare(s, op->direction, s->im[x], s->im[y]);
    /* equal when both parts are; unequal when either is (a NaN part included) */
    s->re[i] = op->direction == CMP_EQ ? p_and(s, re, im) : op->direction == CMP_NE ? p_or(s, re, im) : -1;
    return s->re[i] >= 0 || split_fail(s, "compare other than EQ and NE");
  }
  default:
    r = op->arg_count == 1 ? complex_unary(s, op->op, t, pair_of(s, x))
        : op->arg_count == 2 ? complex_binary(s, op->op, t, pair_of(s, x), pair_of(s, y))
                             : r;
  }
  if (r.re < 0) return split_fail(s, opcode_name(op->op));
  s->re[i] = r.re, s->im[i] = r.im;
  return true;
}

/* Appends `component` (an s64 constant) to a load's or store's indices. */
static void index_append_component(Split *s, KernelOp *op, int component) {
  op->args[op->arg_count++] = k_const(s, TYPE_S64, component);
}

static bool split_op(Split *s, int i) {
  const KernelOp *op = &s->from->ops[i];
  bool complex_value = type_is_complex(op->type);
  bool complex_args = false;
  for (int a = 0; a < op->arg_count; a++) complex_args |= s->im[op->args[a]] >= 0;
  if (op->kop == KOP_HLO && (complex_value || complex_args || op->op == OP_REAL || op->op == OP_IMAG))
    return split_hlo(s, i);
  KernelOp real = *op;
  ElementType t = complex_value ? type_complex_component(op->type) : op->type;
  real.type = t;
  for (int a = 0; a < op->arg_count; a++) real.args[a] = s->re[op->args[a]];
  switch (op->kop) {
  case KOP_CONSTANT:
    if (complex_value) return split_fail(s, "constant in the kernel body");
    break;
  case KOP_LOAD: {
    if (!complex_value) break;
    KernelOp imaginary = real;
    index_append_component(s, &real, 0), index_append_component(s, &imaginary, 1);
    s->re[i] = op_add(s, real);
    s->im[i] = op_add(s, imaginary);
    return true;
  }
  case KOP_STORE:
    if (s->im[op->args[0]] < 0) break;
    for (int part = 0; part < 2; part++) {
      KernelOp store = real;
      store.args[0] = part ? s->im[op->args[0]] : s->re[op->args[0]];
      index_append_component(s, &store, part);
      op_add(s, store);
    }
    return true;
  case KOP_ACC_READ: case KOP_ACC_WRITE: {
    real.acc = s->acc_re[op->acc];
    if (s->acc_im[op->acc] < 0) break;
    KernelOp im = real;
    im.acc = s->acc_im[op->acc];
    if (op->kop == KOP_ACC_WRITE) im.args[0] = s->im[op->args[0]];
    s->re[i] = op_add(s, real);
    s->im[i] = op_add(s, im);
    return true;
  }
  default: break;
  }
  s->re[i] = op_add(s, real);
  return true;
}

/* ---- buffers and accumulators ---- */

/* c64[d0..dn] in layout L is f32[d0..dn, 2] with the new dimension
 * innermost: the real and imaginary parts side by side, as in memory. */
static bool split_shape(Split *s, Shape *shape) {
  if (!type_is_complex(shape->type)) return true;
  if (shape->rank + 1 > AXLE_MAX_RANK) return split_fail(s, "buffer of the largest rank");
  int rank = shape->rank;
  int8_t order[AXLE_MAX_RANK];
  for (int j = 0; j < rank; j++) order[j] = (int8_t)(shape->has_layout ? shape->minor_to_major[j] : rank - 1 - j);
  shape->minor_to_major[0] = (int8_t)rank;
  for (int j = 0; j < rank; j++) shape->minor_to_major[j + 1] = order[j];
  shape->has_layout = true;
  shape->dims[rank] = 2;
  shape->rank = rank + 1;
  shape->type = type_complex_component(shape->type);
  return true;
}

static bool split_buffers_and_accumulators(Split *s) {
  const Kernel *k = s->from;
  Kernel *to = s->to;
  for (int b = 0; b < k->input_count; b++) {
    kernel_add_input(to, &k->inputs[b].shape, k->inputs[b].source, k->inputs[b].constant);
    if (!split_shape(s, &to->inputs[b].shape)) return false;
  }
  for (int b = 0; b < k->output_count; b++) {
    kernel_add_output(to, &k->outputs[b].shape, k->outputs[b].source, k->outputs[b].output_index);
    if (!split_shape(s, &to->outputs[b].shape)) return false;
  }
  to->acc_count = 0;
  for (int a = 0; a < k->acc_count; a++) {
    bool pair = type_is_complex(k->acc_types[a]);
    if (to->acc_count + 1 + pair > AXLE_MAX_RANK) return split_fail(s, "reduction with too many accumulators");
    ElementType t = pair ? type_complex_component(k->acc_types[a]) : k->acc_types[a];
    s->acc_re[a] = to->acc_count, to->acc_types[to->acc_count++] = t;
    s->acc_im[a] = pair ? to->acc_count : -1;
    if (pair) to->acc_types[to->acc_count++] = t;
  }
  return true;
}

/* ---- componentwise kernels ---- */

/* A loop kernel whose buffers are all complex of the loop's own shape, read
 * and written at the loop's own index, and whose ops treat both parts
 * alike (add, subtract, negate, convert between complex types), needs no
 * pairing: the innermost dimension (the fastest in memory in every buffer)
 * doubles, the parts alternating along it, and the loop over it stays
 * contiguous, so the code generator can vectorize it. */
static bool buffer_is_loop_shaped(const Kernel *k, const Shape *s) {
  if (!type_is_complex(s->type) || s->rank != k->rank || s->element_size_bits) return false;
  for (int d = 0; d < k->rank; d++)
    if (s->dims[d] != k->dims[d]) return false;
  int minor = s->has_layout ? s->minor_to_major[0] : s->rank - 1;
  return minor == k->rank - 1;
}

static bool op_is_componentwise(const Kernel *k, const KernelOp *op) {
  switch (op->kop) {
  case KOP_INDEX: return true;
  case KOP_LOAD:
  case KOP_STORE: {
    int first = op->kop == KOP_STORE;
    if (op->arg_count - first != k->rank) return false;
    for (int d = 0; d < k->rank; d++) {
      const KernelOp *index = &k->ops[op->args[first + d]];
      if (index->kop != KOP_INDEX || index->dim != d) return false;
    }
    return true;
  }
  case KOP_HLO:
    if (!type_is_complex(op->type)) return false;
    if (op->op == OP_CONVERT) return type_is_complex(k->ops[op->args[0]].type);
    return op->op == OP_ADD || op->op == OP_SUBTRACT || op->op == OP_NEGATE;
  default: return false;
  }
}

static bool kernel_is_componentwise(const Kernel *k) {
  if (k->kind != KERNEL_LOOP || k->rank == 0) return false;
  for (int b = 0; b < k->input_count; b++)
    if (!buffer_is_loop_shaped(k, &k->inputs[b].shape)) return false;
  for (int b = 0; b < k->output_count; b++)
    if (!buffer_is_loop_shaped(k, &k->outputs[b].shape)) return false;
  for (int i = 0; i < k->op_count; i++)
    if (!op_is_componentwise(k, &k->ops[i])) return false;
  return true;
}

/* c64[..., n] is f32[..., 2n]: the same bytes, in the same layout. */
static Shape shape_with_parts_inline(Shape s) {
  s.dims[s.rank - 1] *= 2;
  s.type = type_complex_component(s.type);
  return s;
}

static Kernel *merge_components(const Kernel *k) {
  Kernel *to = kernel_create(k->name, k->origin, KERNEL_LOOP);
  to->rank = k->rank;
  memcpy(to->dims, k->dims, sizeof k->dims);
  to->dims[k->rank - 1] *= 2;
  for (int b = 0; b < k->input_count; b++) {
    Shape s = shape_with_parts_inline(k->inputs[b].shape);
    kernel_add_input(to, &s, k->inputs[b].source, k->inputs[b].constant);
  }
  for (int b = 0; b < k->output_count; b++) {
    Shape s = shape_with_parts_inline(k->outputs[b].shape);
    kernel_add_output(to, &s, k->outputs[b].source, k->outputs[b].output_index);
  }
  for (int i = 0; i < k->op_count; i++) {
    KernelOp op = k->ops[i];
    if (type_is_complex(op.type)) op.type = type_complex_component(op.type);
    kernel_add_op(to, &op);
  }
  return to;
}

bool kernel_has_complex(const Kernel *k) {
  for (int b = 0; b < k->input_count; b++)
    if (type_is_complex(k->inputs[b].shape.type)) return true;
  for (int b = 0; b < k->output_count; b++)
    if (type_is_complex(k->outputs[b].shape.type)) return true;
  for (int i = 0; i < k->op_count; i++)
    if (type_is_complex(k->ops[i].type)) return true;
  return false;
}

Kernel *kernel_split_complex(const Kernel *k, Status *st) {
  if (kernel_is_componentwise(k)) return merge_components(k);
  Kernel *to = kernel_create(k->name, k->origin, k->kind);
  to->rank = k->rank, to->reduce_rank = k->reduce_rank, to->phase_count = k->phase_count;
  memcpy(to->dims, k->dims, sizeof k->dims);
  memcpy(to->reduce_dims, k->reduce_dims, sizeof k->reduce_dims);
  memcpy(to->phase_blocks, k->phase_blocks, sizeof k->phase_blocks);
  Split s = {.from = k, .to = to, .st = st};
  s.re = mem_calloc((size_t)k->op_count + 1, sizeof *s.re);
  s.im = mem_calloc((size_t)k->op_count + 1, sizeof *s.im);
  for (int i = 0; i < k->op_count; i++) s.re[i] = s.im[i] = -1;
  bool ok = split_buffers_and_accumulators(&s);
  for (int i = 0; i < k->op_count && ok; i++) {
    s.at = &k->ops[i];
    ok = split_op(&s, i);
  }
  mem_free(s.re);
  mem_free(s.im);
  if (!ok) {
    kernel_free(to);
    return NULL;
  }
  kernel_order_blocks(to); /* the new real ops' invariance */
  return to;
}
