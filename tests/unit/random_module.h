/* A generator of random HLO modules for differential tests
 * (test_cpu_random.c): a short chain of ops, each from one family of the
 * table `families` below, over parameters of odd sizes (1, 7, 17, 1023...).
 *
 * A module is HLO text built from a seed alone, so a failure is replayed
 * from its seed. Each value knows its shape; every op computes its result
 * shape by HLO's rules, and the verifier checks the text when it is parsed.
 * The families a module used come back as a bit set, so the test can tell
 * a refusal of an op the backend compiles from one it does not yet. */
#ifndef AXLE_TESTS_RANDOM_MODULE_H
#define AXLE_TESTS_RANDOM_MODULE_H

#include <stdarg.h>
#include <string.h>

#include "ir.h"

enum { GEN_MAX_VALUES = 48, GEN_MAX_RANK = 4, GEN_MAX_ELEMENTS = 40000 };

typedef struct GenValue {
  char name[16];
  ElementType type;
  int rank;
  int64_t dims[GEN_MAX_RANK];
} GenValue;

/* A parameter whose values the generator chose (an index at its type's
 * limits): element i holds values[i % count], as the type's bits. */
typedef struct GenFixed {
  int param, count;
  int64_t values[5];
} GenFixed;

typedef struct Gen {
  uint64_t state;
  StrBuf params, body;
  int param_count, name_count;
  GenValue values[GEN_MAX_VALUES];
  int value_count;
  uint64_t families_used;   /* bit f: families[f] made an instruction */
  StrBuf computations;      /* fused computations and their reducers (random_xla_fusions.h) */
  bool xla_fusion_forms;    /* draw XLA's fusion forms (AXLE_RANDOM_XLA_FUSIONS) */
  /* The switches of random_module_text_with (off in random_module_text). */
  bool empty_dimensions, index_limits;
  int fixed_count;
  GenFixed fixed[GEN_MAX_VALUES];
  bool layouts;             /* the layout switch: see "layouts" below */
} Gen;

static uint64_t gen_next(Gen *g) {
  /* splitmix64: a good stream from any seed, the same on every host. */
  uint64_t z = (g->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int gen_below(Gen *g, int n) { return n <= 1 ? 0 : (int)(gen_next(g) % (uint64_t)n); }

/* Sizes that find edge cases: 1 (a dimension that vanishes), primes that
 * leave SIMD tails, a power of two, one more than a vector multiple. */
static int64_t gen_size(Gen *g) {
  static const int64_t sizes[] = {1, 2, 3, 5, 7, 8, 16, 17, 33, 64, 1023};
  if (g->empty_dimensions && gen_below(g, 10) == 0) return 0;
  return sizes[gen_below(g, (int)(sizeof sizes / sizeof sizes[0]))];
}

static int64_t gen_count(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= dims[d];
  return n;
}

static void gen_print_shape(StrBuf *sb, ElementType t, int rank, const int64_t *dims) {
  strbuf_printf(sb, "%s[", type_name(t));
  for (int d = 0; d < rank; d++) strbuf_printf(sb, "%s%lld", d ? "," : "", (long long)dims[d]);
  strbuf_printf(sb, "]");
}

static void gen_print_list(StrBuf *sb, const int64_t *v, int n) {
  strbuf_printf(sb, "{");
  for (int i = 0; i < n; i++) strbuf_printf(sb, "%s%lld", i ? "," : "", (long long)v[i]);
  strbuf_printf(sb, "}");
}

/* With the layout switch on, a value's shape is written, half the time,
 * with a random minor-to-major order ({0,1}, {1,2,0}, ... the default one
 * included); else without one, which names the default. Off: nothing is
 * drawn, so every seed gives the module it always gave. */
static void gen_print_random_layout(Gen *g, StrBuf *sb, int rank) {
  if (rank < 2 || gen_below(g, 2) == 0) return;
  int64_t minor_to_major[GEN_MAX_RANK];
  for (int d = 0; d < rank; d++) minor_to_major[d] = d;
  for (int d = rank - 1; d > 0; d--) {
    int k = gen_below(g, d + 1);
    int64_t swap = minor_to_major[d];
    minor_to_major[d] = minor_to_major[k];
    minor_to_major[k] = swap;
  }
  gen_print_list(sb, minor_to_major, rank);
}

/* A new value named vN: the line's start "vN = TYPE[DIMS] " is written;
 * the caller writes the rest of the line. */
static GenValue *gen_begin(Gen *g, ElementType t, int rank, const int64_t *dims) {
  GenValue *v = &g->values[g->value_count++];
  snprintf(v->name, sizeof v->name, "v%d", g->name_count++);
  v->type = t;
  v->rank = rank;
  memcpy(v->dims, dims, sizeof(int64_t) * (size_t)rank);
  strbuf_printf(&g->body, "  %s = ", v->name);
  gen_print_shape(&g->body, t, rank, dims);
  if (g->layouts) gen_print_random_layout(g, &g->body, rank);
  strbuf_printf(&g->body, " ");
  return v;
}

static const GenValue *gen_param(Gen *g, ElementType t, int rank, const int64_t *dims) {
  GenValue *v = &g->values[g->value_count++];
  snprintf(v->name, sizeof v->name, "p%d", g->param_count);
  v->type = t;
  v->rank = rank;
  memcpy(v->dims, dims, sizeof(int64_t) * (size_t)rank);
  strbuf_printf(&g->params, "  %s = ", v->name);
  gen_print_shape(&g->params, t, rank, dims);
  /* Now and then a layout other than row-major, which the backend copies
   * into the layout its kernels read. */
  if (rank >= 2 && gen_below(g, g->layouts ? 2 : 4) == 0) {
    int64_t minor_to_major[GEN_MAX_RANK];
    for (int d = 0; d < rank; d++) minor_to_major[d] = d;
    for (int d = rank - 1; d > 0; d--) {
      int k = gen_below(g, d + 1);
      int64_t swap = minor_to_major[d];
      minor_to_major[d] = minor_to_major[k];
      minor_to_major[k] = swap;
    }
    gen_print_list(&g->params, minor_to_major, rank);
  }
  strbuf_printf(&g->params, " parameter(%d)\n", g->param_count++);
  return v;
}

/* A scalar constant of type f32, named cN. */
static void gen_scalar(Gen *g, char *name, size_t size, const char *value) {
  snprintf(name, size, "c%d", g->name_count++);
  strbuf_printf(&g->body, "  %s = f32[] constant(%s)\n", name, value);
}

/* The operand of the next op: mostly the newest value (a chain), sometimes
 * an older one (a graph); an f32 array, never a scalar or an integer
 * parameter (parameter 0 is an f32 array). */
static const GenValue *gen_pick(Gen *g) {
  const GenValue *v = &g->values[g->value_count - 1];
  if (gen_below(g, 4) == 0) v = &g->values[gen_below(g, g->value_count)];
  return v->rank > 0 && v->type == TYPE_F32 ? v : &g->values[0];
}

/* A value of x's shape and type: an older one if any, else a new parameter. */
static const GenValue *gen_partner(Gen *g, const GenValue *x) {
  for (int tries = 0; tries < 4; tries++) {
    const GenValue *y = &g->values[gen_below(g, g->value_count)];
    if (y != x && y->type == x->type && y->rank == x->rank &&
        memcmp(y->dims, x->dims, sizeof(int64_t) * (size_t)x->rank) == 0)
      return y;
  }
  return gen_param(g, x->type, x->rank, x->dims);
}

/* ---- the families: each adds one op (or a few) reading existing values;
 * false when it cannot apply to what it drew (the caller draws again) ---- */

/* negate, abs, copy on any value; floor, ceil, sign (which jump) on a new
 * parameter of its shape. */
static bool gen_unary_exact(Gen *g) {
  static const char *ops[] = {"negate", "abs", "copy", "floor", "ceil", "sign"};
  const GenValue *x = gen_pick(g);
  int which = gen_below(g, 6);
  const char *op = ops[which];
  if (which >= 3) x = gen_param(g, x->type, x->rank, x->dims);
  gen_begin(g, x->type, x->rank, x->dims);
  strbuf_printf(&g->body, "%s(%s)\n", op, x->name);
  return true;
}

/* The inline math. log, log-plus-one, sqrt and rsqrt read |x| + 0.5,
 * where they are well conditioned: fused after a dot or a sum (rounded in
 * another order than the evaluator's), a log near 0 would turn an ulp of
 * its input into any difference at all. */
static bool gen_unary_math(Gen *g) {
  static const char *ops[] = {"exponential", "tanh", "logistic", "exponential-minus-one", "log", "sqrt", "rsqrt",
                              "log-plus-one"};
  const GenValue *x = gen_pick(g);
  int which = gen_below(g, 8);
  char operand[16];
  snprintf(operand, sizeof operand, "%s", x->name);
  if (which >= 4) {
    char half[16], magnitude[16];
    gen_scalar(g, half, sizeof half, "0.5");
    strbuf_printf(&g->body, "  %s.b = ", half);
    gen_print_shape(&g->body, TYPE_F32, x->rank, x->dims);
    strbuf_printf(&g->body, " broadcast(%s), dimensions={}\n", half);
    snprintf(magnitude, sizeof magnitude, "%s", gen_begin(g, TYPE_F32, x->rank, x->dims)->name);
    g->value_count--;
    strbuf_printf(&g->body, "abs(%s)\n", x->name);
    snprintf(operand, sizeof operand, "%s", gen_begin(g, TYPE_F32, x->rank, x->dims)->name);
    g->value_count--;
    strbuf_printf(&g->body, "add(%s, %s.b)\n", magnitude, half);
  }
  gen_begin(g, x->type, x->rank, x->dims);
  strbuf_printf(&g->body, "%s(%s)\n", ops[which], operand);
  return true;
}

static bool gen_binary(Gen *g) {
  static const char *ops[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};
  const GenValue *x = gen_pick(g);
  const GenValue *y = gen_partner(g, x);
  const char *op = ops[gen_below(g, 6)];
  gen_begin(g, x->type, x->rank, x->dims);
  strbuf_printf(&g->body, "%s(%s, %s)\n", op, x->name, y->name);
  return true;
}

/* select(compare(x, y), x, y): a predicate kernel and a select. */
static bool gen_compare_select(Gen *g) {
  static const char *directions[] = {"GT", "GE", "LT", "LE", "EQ", "NE"};
  const GenValue *x = gen_pick(g);
  const GenValue *y = gen_partner(g, x);
  GenValue *p = gen_begin(g, TYPE_PRED, x->rank, x->dims);
  strbuf_printf(&g->body, "compare(%s, %s), direction=%s\n", x->name, y->name, directions[gen_below(g, 6)]);
  char pred[16];
  snprintf(pred, sizeof pred, "%s", p->name);
  g->value_count--;  /* the predicate is not a value later ops read */
  gen_begin(g, x->type, x->rank, x->dims);
  strbuf_printf(&g->body, "select(%s, %s, %s)\n", pred, x->name, y->name);
  return true;
}

/* A new parameter q of x's shape: convert(q * 37) to s32 (scaled so the
 * integers are not all 0), integer arithmetic, convert back, added to x. */
static bool gen_integer_roundtrip(Gen *g) {
  static const char *ops[] = {"multiply", "add", "subtract", "maximum", "and", "xor"};
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  char scale[16], scaled[16], ints[16], mixed[16], back[16], source[16];
  snprintf(source, sizeof source, "%s", x->name);
  x = gen_param(g, TYPE_F32, x->rank, x->dims);
  gen_scalar(g, scale, sizeof scale, "37");
  strbuf_printf(&g->body, "  %s.b = ", scale);
  gen_print_shape(&g->body, TYPE_F32, x->rank, x->dims);
  strbuf_printf(&g->body, " broadcast(%s), dimensions={}\n", scale);
  /* The intermediates are not values later ops read: their slots go back. */
  snprintf(scaled, sizeof scaled, "%s", gen_begin(g, TYPE_F32, x->rank, x->dims)->name);
  g->value_count--;
  strbuf_printf(&g->body, "multiply(%s, %s.b)\n", x->name, scale);
  snprintf(ints, sizeof ints, "%s", gen_begin(g, TYPE_S32, x->rank, x->dims)->name);
  g->value_count--;
  strbuf_printf(&g->body, "convert(%s)\n", scaled);
  snprintf(mixed, sizeof mixed, "%s", gen_begin(g, TYPE_S32, x->rank, x->dims)->name);
  g->value_count--;
  strbuf_printf(&g->body, "%s(%s, %s)\n", ops[gen_below(g, 6)], ints, ints);
  snprintf(back, sizeof back, "%s", gen_begin(g, TYPE_F32, x->rank, x->dims)->name);
  g->value_count--;
  strbuf_printf(&g->body, "convert(%s)\n", mixed);
  gen_begin(g, TYPE_F32, x->rank, x->dims);
  strbuf_printf(&g->body, "add(%s, %s)\n", source, back);
  return true;
}

/* Two new s32 parameters of x's shape (values -8..8, zero included, so
 * HLO's rules for division by zero and shifts past the width are hit),
 * one integer op, converted and added to x. */
static bool gen_integer_ops(Gen *g, const char *const *ops, int op_count) {
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  char source[16], done[16], back[16];
  snprintf(source, sizeof source, "%s", x->name);
  const GenValue *a = gen_param(g, TYPE_S32, x->rank, x->dims);
  const GenValue *b = gen_param(g, TYPE_S32, x->rank, x->dims);
  snprintf(done, sizeof done, "%s", gen_begin(g, TYPE_S32, x->rank, x->dims)->name);
  g->value_count--;
  strbuf_printf(&g->body, "%s(%s, %s)\n", ops[gen_below(g, op_count)], a->name, b->name);
  snprintf(back, sizeof back, "%s", gen_begin(g, TYPE_F32, x->rank, x->dims)->name);
  g->value_count--;
  strbuf_printf(&g->body, "convert(%s)\n", done);
  gen_begin(g, TYPE_F32, x->rank, x->dims);
  strbuf_printf(&g->body, "add(%s, %s)\n", source, back);
  return true;
}

static bool gen_integer_arithmetic(Gen *g) {
  static const char *const ops[] = {"divide", "remainder", "multiply", "or", "maximum", "minimum"};
  return gen_integer_ops(g, ops, 6);
}

static bool gen_integer_shifts(Gen *g) {
  static const char *const ops[] = {"shift-left", "shift-right-arithmetic", "shift-right-logical", "power"};
  return gen_integer_ops(g, ops, 4);
}

/* x and a partner in f64: converted, one op, converted back. */
static bool gen_f64_roundtrip(Gen *g) {
  static const char *ops[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  const GenValue *y = gen_partner(g, x);
  char wide_x[16], wide_y[16], done[16];
  snprintf(wide_x, sizeof wide_x, "%s", gen_begin(g, TYPE_F64, x->rank, x->dims)->name);
  g->value_count--;
  strbuf_printf(&g->body, "convert(%s)\n", x->name);
  snprintf(wide_y, sizeof wide_y, "%s", gen_begin(g, TYPE_F64, x->rank, x->dims)->name);
  g->value_count--;
  strbuf_printf(&g->body, "convert(%s)\n", y->name);
  snprintf(done, sizeof done, "%s", gen_begin(g, TYPE_F64, x->rank, x->dims)->name);
  g->value_count--;
  strbuf_printf(&g->body, "%s(%s, %s)\n", ops[gen_below(g, 6)], wide_x, wide_y);
  gen_begin(g, TYPE_F32, x->rank, x->dims);
  strbuf_printf(&g->body, "convert(%s)\n", done);
  return true;
}

static bool gen_broadcast(Gen *g) {
  const GenValue *x = gen_pick(g);
  if (x->rank >= GEN_MAX_RANK) return false;
  int at = gen_below(g, x->rank + 1);
  int64_t dims[GEN_MAX_RANK], map[GEN_MAX_RANK], size = gen_size(g);
  for (int d = 0, k = 0; d <= x->rank; d++) {
    if (d == at) {
      dims[d] = size;
      continue;
    }
    map[k] = d;
    dims[d] = x->dims[k++];
  }
  if (gen_count(x->rank + 1, dims) > GEN_MAX_ELEMENTS) return false;
  gen_begin(g, x->type, x->rank + 1, dims);
  strbuf_printf(&g->body, "broadcast(%s), dimensions=", x->name);
  gen_print_list(&g->body, map, x->rank);
  strbuf_printf(&g->body, "\n");
  return true;
}

static bool gen_transpose(Gen *g) {
  const GenValue *x = gen_pick(g);
  if (x->rank < 2) return false;
  int64_t perm[GEN_MAX_RANK], dims[GEN_MAX_RANK];
  for (int d = 0; d < x->rank; d++) perm[d] = d;
  for (int d = x->rank - 1; d > 0; d--) {
    int k = gen_below(g, d + 1);
    int64_t t = perm[d];
    perm[d] = perm[k];
    perm[k] = t;
  }
  for (int d = 0; d < x->rank; d++) dims[d] = x->dims[perm[d]];
  gen_begin(g, x->type, x->rank, dims);
  strbuf_printf(&g->body, "transpose(%s), dimensions=", x->name);
  gen_print_list(&g->body, perm, x->rank);
  strbuf_printf(&g->body, "\n");
  return true;
}

static bool gen_slice(Gen *g) {
  const GenValue *x = gen_pick(g);
  int64_t start[GEN_MAX_RANK], limit[GEN_MAX_RANK], stride[GEN_MAX_RANK], dims[GEN_MAX_RANK];
  for (int d = 0; d < x->rank; d++) {
    if (x->dims[d] == 0) { start[d] = limit[d] = dims[d] = 0, stride[d] = 1; continue; }
    start[d] = gen_below(g, (int)x->dims[d]);
    limit[d] = start[d] + 1 + gen_below(g, (int)(x->dims[d] - start[d]));
    stride[d] = 1 + gen_below(g, 3);
    dims[d] = (limit[d] - start[d] + stride[d] - 1) / stride[d];
  }
  gen_begin(g, x->type, x->rank, dims);
  strbuf_printf(&g->body, "slice(%s), slice={", x->name);
  for (int d = 0; d < x->rank; d++)
    strbuf_printf(&g->body, "%s[%lld:%lld:%lld]", d ? ", " : "", (long long)start[d], (long long)limit[d],
                  (long long)stride[d]);
  strbuf_printf(&g->body, "}\n");
  return true;
}

/* A sum, maximum or minimum over a random non-empty proper subset of the
 * dimensions (rank 1: all of them, to a scalar). */
static bool gen_reduce(Gen *g) {
  static const char *kinds[] = {"sum", "max", "min"}, *inits[] = {"0", "-inf", "inf"};
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  int64_t reduced[GEN_MAX_RANK], dims[GEN_MAX_RANK];
  int nr = 0, nk = 0;
  unsigned mask = x->rank == 1 ? 1u : 1u + (unsigned)gen_below(g, (1 << x->rank) - 2);
  for (int d = 0; d < x->rank; d++) {
    if (mask >> d & 1) reduced[nr++] = d;
    else dims[nk++] = x->dims[d];
  }
  int kind = gen_below(g, 3);
  char init[16];
  gen_scalar(g, init, sizeof init, inits[kind]);
  gen_begin(g, x->type, nk, dims);
  strbuf_printf(&g->body, "reduce(%s, %s), dimensions=", x->name, init);
  gen_print_list(&g->body, reduced, nr);
  strbuf_printf(&g->body, ", to_apply=%s\n", kinds[kind]);
  return true;
}

/* x · w for a new parameter w: one contracting dimension of x, maybe one
 * batch dimension, w's dimensions in a random order. `general`: x keeps
 * two or more free dimensions, which the GEMM cannot take as one matrix
 * unless they are adjacent; else at most one. */
static bool gen_dot_with(Gen *g, bool general) {
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32 || x->rank > 3) return false;
  int c = gen_below(g, x->rank), b = -1;
  if (x->rank >= 2 && gen_below(g, 2)) {
    b = gen_below(g, x->rank - 1);
    if (b >= c) b++;
  }
  int free_dims = x->rank - 1 - (b >= 0);
  if ((free_dims >= 2) != general) return false;
  int64_t n = gen_size(g);
  if (n > 64) n = 17;
  /* w holds [batch?] k n in a random order. */
  int64_t wdims[3], order[3] = {0, 1, 2}, sizes[3] = {b >= 0 ? x->dims[b] : 0, x->dims[c], n};
  int wrank = b >= 0 ? 3 : 2, first = b >= 0 ? 0 : 1;
  for (int i = wrank - 1; i > 0; i--) {
    int k = gen_below(g, i + 1);
    int64_t t = order[first + i];
    order[first + i] = order[first + k];
    order[first + k] = t;
  }
  int64_t wb = -1, wc = -1;
  for (int i = 0; i < wrank; i++) {
    int64_t role = order[first + i];
    wdims[i] = sizes[role];
    if (role == 0) wb = i;
    if (role == 1) wc = i;
  }
  int64_t out[GEN_MAX_RANK];
  int nout = 0;
  if (b >= 0) out[nout++] = x->dims[b];
  for (int d = 0; d < x->rank; d++)
    if (d != b && d != c) out[nout++] = x->dims[d];
  out[nout++] = n;
  if (nout > GEN_MAX_RANK || gen_count(nout, out) > GEN_MAX_ELEMENTS) return false;
  const GenValue *w = gen_param(g, TYPE_F32, wrank, wdims);
  gen_begin(g, TYPE_F32, nout, out);
  strbuf_printf(&g->body, "dot(%s, %s), ", x->name, w->name);
  if (b >= 0) strbuf_printf(&g->body, "lhs_batch_dims={%d}, rhs_batch_dims={%lld}, ", b, (long long)wb);
  strbuf_printf(&g->body, "lhs_contracting_dims={%d}, rhs_contracting_dims={%lld}\n", c, (long long)wc);
  return true;
}

static bool gen_dot(Gen *g) { return gen_dot_with(g, false); }
static bool gen_dot_general(Gen *g) { return gen_dot_with(g, true); }

/* Merges two adjacent dimensions. */
static bool gen_reshape(Gen *g) {
  const GenValue *x = gen_pick(g);
  if (x->rank < 2) return false;
  int at = gen_below(g, x->rank - 1);
  int64_t dims[GEN_MAX_RANK];
  int n = 0;
  for (int d = 0; d < x->rank; d++) {
    if (d == at + 1) dims[n - 1] *= x->dims[d];
    else dims[n++] = x->dims[d];
  }
  gen_begin(g, x->type, n, dims);
  strbuf_printf(&g->body, "reshape(%s)\n", x->name);
  return true;
}

static bool gen_concatenate(Gen *g) {
  const GenValue *x = gen_pick(g);
  int d = gen_below(g, x->rank);
  int64_t dims[GEN_MAX_RANK];
  memcpy(dims, x->dims, sizeof dims);
  dims[d] *= 2;
  if (gen_count(x->rank, dims) > GEN_MAX_ELEMENTS) return false;
  const GenValue *y = gen_partner(g, x);
  gen_begin(g, x->type, x->rank, dims);
  strbuf_printf(&g->body, "concatenate(%s, %s), dimensions={%d}\n", x->name, y->name, d);
  return true;
}

static bool gen_reverse(Gen *g) {
  const GenValue *x = gen_pick(g);
  int64_t dims[GEN_MAX_RANK];
  int n = 0;
  for (int d = 0; d < x->rank; d++)
    if (gen_below(g, 2)) dims[n++] = d;
  if (n == 0) dims[n++] = 0;
  gen_begin(g, x->type, x->rank, x->dims);
  strbuf_printf(&g->body, "reverse(%s), dimensions=", x->name);
  gen_print_list(&g->body, dims, n);
  strbuf_printf(&g->body, "\n");
  return true;
}

/* Edge padding from -1 to 2 on each side and interior padding 0 or 1. */
static bool gen_pad(Gen *g) {
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  int64_t lo[GEN_MAX_RANK], hi[GEN_MAX_RANK], in[GEN_MAX_RANK], dims[GEN_MAX_RANK];
  for (int d = 0; d < x->rank; d++) {
    in[d] = gen_below(g, 2);
    int64_t inner = x->dims[d] + (x->dims[d] > 0 ? x->dims[d] - 1 : 0) * in[d];
    lo[d] = gen_below(g, 4) - (inner > 2 ? 1 : 0);
    hi[d] = gen_below(g, 4) - (inner > 2 ? 1 : 0);
    dims[d] = inner + lo[d] + hi[d];
  }
  if (gen_count(x->rank, dims) > GEN_MAX_ELEMENTS) return false;
  char zero[16];
  gen_scalar(g, zero, sizeof zero, "0.5");
  gen_begin(g, x->type, x->rank, dims);
  strbuf_printf(&g->body, "pad(%s, %s), padding=", x->name, zero);
  for (int d = 0; d < x->rank; d++)
    strbuf_printf(&g->body, "%s%lld_%lld_%lld", d ? "x" : "", (long long)lo[d], (long long)hi[d], (long long)in[d]);
  strbuf_printf(&g->body, "\n");
  return true;
}

/* A 1-D convolution over a rank-3 value read as [batch, width, features]
 * or [batch, features, width], with a new kernel parameter [window,
 * features, out] or [out, features, window], its result in either order
 * (canonicalize-convolutions makes every order b0f_0io->b0f). */
static bool gen_convolution(Gen *g) {
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32 || x->rank != 3) return false;
  bool features_first = gen_below(g, 2), kernel_out_first = gen_below(g, 2), result_features_first = gen_below(g, 2);
  int64_t in_width = x->dims[features_first ? 2 : 1], features = x->dims[features_first ? 1 : 2];
  if (features > 64) return false;
  int64_t window = 1 + gen_below(g, 3), pad = gen_below(g, (int)window), out_features = 1 + gen_below(g, 8);
  int64_t width = in_width + 2 * pad - window + 1;
  if (width < 1) return false;
  int64_t wdims[3] = {window, features, out_features}, out[3] = {x->dims[0], width, out_features};
  if (kernel_out_first) wdims[0] = out_features, wdims[2] = window;
  if (result_features_first) out[1] = out_features, out[2] = width;
  const GenValue *w = gen_param(g, TYPE_F32, 3, wdims);
  gen_begin(g, TYPE_F32, 3, out);
  strbuf_printf(&g->body, "convolution(%s, %s), window={size=%lld pad=%lld_%lld}, dim_labels=%s_%s->%s\n", x->name,
                w->name, (long long)window, (long long)pad, (long long)pad, features_first ? "bf0" : "b0f",
                kernel_out_first ? "oi0" : "0io", result_features_first ? "bf0" : "b0f");
  return true;
}

#include "random_xla_fusions.h"
#include "random_module_limits.h"

/* ---- layouts: values passed on unchanged, in random layouts ----
 *
 * Drawn only with the layout switch on (Gen.layouts). Each carries the
 * value x it picks through a forward or a called-computation boundary, and
 * names a random layout at every shape it writes, so the layout a value is
 * in and the one its receiver names differ as often as they agree: the
 * result of each is x's value computed on (doubled, negated) or as it was,
 * which the evaluator checks leaf by leaf. */

/* x's shape with a random layout, at sb. */
static void gen_print_value_shape(Gen *g, StrBuf *sb, const GenValue *x) {
  gen_print_shape(sb, x->type, x->rank, x->dims);
  gen_print_random_layout(g, sb, x->rank);
}

/* A name for a called computation: NAME_N, unique in the module. */
static void gen_computation_name(Gen *g, char *name, size_t size, const char *base) {
  snprintf(name, size, "%s_%d", base, g->name_count++);
}

/* while: a state (s32[] counter, x) run 1 to 3 trips, the body doubling or
 * negating x; init, condition, body parameter, body root, the while and
 * the element read from it each name their own layout for x. */
static bool gen_layouts_while(Gen *g) {
  const GenValue *x = gen_pick(g);
  char cond[32], body[32], init[16], loop[16];
  gen_computation_name(g, cond, sizeof cond, "loop_condition");
  gen_computation_name(g, body, sizeof body, "loop_body");
  int trips = 1 + gen_below(g, 3);
  StrBuf *c = &g->computations;
  strbuf_printf(c, "%s {\n  s = (s32[], ", cond);
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, ") parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n");
  strbuf_printf(c, "  n = s32[] constant(%d)\n  ROOT more = pred[] compare(i, n), direction=LT\n}\n\n", trips);
  strbuf_printf(c, "%s {\n  s = (s32[], ", body);
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, ") parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  v = ");
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, " get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  next_i = s32[] add(i, one)\n");
  strbuf_printf(c, "  next_v = ");
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, gen_below(g, 2) ? " add(v, v)\n" : " negate(v)\n");
  strbuf_printf(c, "  ROOT next = (s32[], ");
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, ") tuple(next_i, next_v)\n}\n\n");
  snprintf(init, sizeof init, "i%d", g->name_count);
  snprintf(loop, sizeof loop, "w%d", g->name_count++);
  strbuf_printf(&g->body, "  %s.zero = s32[] constant(0)\n  %s = (s32[], ", init, init);
  gen_print_value_shape(g, &g->body, x);
  strbuf_printf(&g->body, ") tuple(%s.zero, %s)\n  %s = (s32[], ", init, x->name, loop);
  gen_print_value_shape(g, &g->body, x);
  strbuf_printf(&g->body, ") while(%s), condition=%s, body=%s\n", init, cond, body);
  gen_begin(g, x->type, x->rank, x->dims);
  strbuf_printf(&g->body, "get-tuple-element(%s), index=1\n", loop);
  return true;
}

/* conditional: a pred from a new scalar parameter picks a branch that
 * negates x or returns its parameter as it is (a root that is a
 * parameter); branches, operands and result name their own layouts. */
static bool gen_layouts_conditional(Gen *g) {
  const GenValue *x = gen_pick(g);
  char negate[32], keep[32], pred[16];
  gen_computation_name(g, negate, sizeof negate, "branch_negate");
  gen_computation_name(g, keep, sizeof keep, "branch_keep");
  StrBuf *c = &g->computations;
  strbuf_printf(c, "%s {\n  a = ", negate);
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, " parameter(0)\n  ROOT n = ");
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, " negate(a)\n}\n\n%s {\n  ROOT a = ", keep);
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, " parameter(0)\n}\n\n");
  const int64_t scalar[1] = {0};
  const GenValue *selector = gen_param(g, TYPE_F32, 0, scalar);
  snprintf(pred, sizeof pred, "b%d", g->name_count++);
  strbuf_printf(&g->body, "  %s.zero = f32[] constant(0)\n", pred);
  strbuf_printf(&g->body, "  %s = pred[] compare(%s, %s.zero), direction=GT\n", pred, selector->name, pred);
  gen_begin(g, x->type, x->rank, x->dims);
  strbuf_printf(&g->body, "conditional(%s, %s, %s), true_computation=%s, false_computation=%s\n", pred, x->name,
                x->name, negate, keep);
  return true;
}

/* call, or an async-start/async-done pair, of a callee multiplying its two
 * parameters, x and a partner, each named in its own layout, as is the
 * callee's root, the start's tuple and the result. */
static bool gen_layouts_call(Gen *g) {
  const GenValue *x = gen_pick(g);
  const GenValue *y = gen_partner(g, x);
  char callee[32];
  gen_computation_name(g, callee, sizeof callee, "callee");
  StrBuf *c = &g->computations;
  strbuf_printf(c, "%s {\n  a = ", callee);
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, " parameter(0)\n  b = ");
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, " parameter(1)\n  ROOT m = ");
  gen_print_value_shape(g, c, x);
  strbuf_printf(c, " multiply(a, b)\n}\n\n");
  if (gen_below(g, 2)) {
    gen_begin(g, x->type, x->rank, x->dims);
    strbuf_printf(&g->body, "call(%s, %s), to_apply=%s\n", x->name, y->name, callee);
    return true;
  }
  char start[16];
  snprintf(start, sizeof start, "as%d", g->name_count++);
  strbuf_printf(&g->body, "  %s = ((", start);
  gen_print_value_shape(g, &g->body, x);
  strbuf_printf(&g->body, ", ");
  gen_print_value_shape(g, &g->body, x);
  strbuf_printf(&g->body, "), ");
  gen_print_value_shape(g, &g->body, x);
  strbuf_printf(&g->body, ", s32[]) async-start(%s, %s), calls=%s\n", x->name, y->name, callee);
  gen_begin(g, x->type, x->rank, x->dims);
  strbuf_printf(&g->body, "async-done(%s)\n", start);
  return true;
}

/* tuple, opt-barrier (half the time) and get-tuple-element: x beside a
 * partner, nested one tuple deeper half the time, every shape in its own
 * layout. */
static bool gen_layouts_tuple(Gen *g) {
  const GenValue *x = gen_pick(g);
  const GenValue *y = gen_partner(g, x);
  bool nested = gen_below(g, 2), barrier = gen_below(g, 2);
  char t[16], from[32];
  snprintf(t, sizeof t, "t%d", g->name_count++);
  StrBuf *b = &g->body;
  if (nested) {
    strbuf_printf(b, "  %s.inner = (", t);
    gen_print_value_shape(g, b, x);
    strbuf_printf(b, ") tuple(%s)\n", x->name);
  }
  /* (y, x) or (y, (x)): the tuple, then the barrier over it. */
  for (int line = 0; line <= (int)barrier; line++) {
    strbuf_printf(b, "  %s%s = (", t, line ? ".barrier" : "");
    gen_print_value_shape(g, b, y);
    strbuf_printf(b, nested ? ", (" : ", ");
    gen_print_value_shape(g, b, x);
    strbuf_printf(b, nested ? "))" : ")");
    if (line == 0) strbuf_printf(b, " tuple(%s, %s%s)\n", y->name, nested ? t : x->name, nested ? ".inner" : "");
    else strbuf_printf(b, " opt-barrier(%s)\n", t);
  }
  snprintf(from, sizeof from, "%s%s", t, barrier ? ".barrier" : "");
  if (nested) {
    strbuf_printf(b, "  %s.x = (", t);
    gen_print_value_shape(g, b, x);
    strbuf_printf(b, ") get-tuple-element(%s), index=1\n", from);
    snprintf(from, sizeof from, "%s.x", t);
  }
  gen_begin(g, x->type, x->rank, x->dims);
  strbuf_printf(b, "get-tuple-element(%s), index=%d\n", from, nested ? 0 : 1);
  return true;
}

/* What one replica passes on as it is: all-reduce (a sum over one value),
 * collective-permute from replica 0 to itself, copy-start/copy-done. */
static bool gen_layouts_one_replica(Gen *g) {
  const GenValue *x = gen_pick(g);
  int which = gen_below(g, 3);
  char start[16];
  if (which == 2) {
    snprintf(start, sizeof start, "cs%d", g->name_count++);
    strbuf_printf(&g->body, "  %s = (", start);
    gen_print_value_shape(g, &g->body, x);
    strbuf_printf(&g->body, ", ");
    gen_print_value_shape(g, &g->body, x);
    strbuf_printf(&g->body, ", u32[]) copy-start(%s)\n", x->name);
  }
  gen_begin(g, x->type, x->rank, x->dims);
  if (which == 0) strbuf_printf(&g->body, "all-reduce(%s), replica_groups={}, to_apply=sum\n", x->name);
  if (which == 1) strbuf_printf(&g->body, "collective-permute(%s), source_target_pairs={{0,0}}\n", x->name);
  if (which == 2) strbuf_printf(&g->body, "copy-done(%s)\n", start);
  return true;
}

/* ---- the table ----
 *   name        the family, as failures name it
 *   make        adds its op(s); false: does not apply to what it drew
 *   weight      how often it is drawn (0: never)
 *   refusable   the backend may refuse it at the given ISA levels without
 *               that counting as a failure: REFUSED_AT_SSE4 for the inline
 *               math, which needs FMA; REFUSED_ANYWHERE for what the
 *               backend does not compile yet
 *
 * Ops whose result jumps under a rounding-sized change of their input
 * (floor, ceil, sign, a float-to-integer convert) read only parameters:
 * the backend may round a sum or a dot differently from the evaluator (in
 * another order, with FMA), and one ulp must not become a jump of 1. */
typedef enum GenRefusal { NEVER_REFUSED, REFUSED_AT_SSE4, REFUSED_ANYWHERE } GenRefusal;

typedef struct GenFamily {
  const char *name;
  bool (*make)(Gen *g);
  int weight;
  GenRefusal refusable;
} GenFamily;

static const GenFamily families[] = {
    {"unary-exact", gen_unary_exact, 3, NEVER_REFUSED},
    {"unary-math", gen_unary_math, 3, NEVER_REFUSED},
    {"binary", gen_binary, 5, NEVER_REFUSED},
    {"compare-select", gen_compare_select, 2, NEVER_REFUSED},
    {"integer-roundtrip", gen_integer_roundtrip, 1, NEVER_REFUSED},
    {"integer-arithmetic", gen_integer_arithmetic, 1, NEVER_REFUSED},
    {"integer-shifts", gen_integer_shifts, 1, NEVER_REFUSED},
    {"f64-roundtrip", gen_f64_roundtrip, 1, NEVER_REFUSED},
    {"broadcast", gen_broadcast, 3, NEVER_REFUSED},
    {"transpose", gen_transpose, 3, NEVER_REFUSED},
    {"slice", gen_slice, 2, NEVER_REFUSED},
    {"reduce", gen_reduce, 3, NEVER_REFUSED},
    {"dot", gen_dot, 3, NEVER_REFUSED},
    {"dot-general", gen_dot_general, 1, NEVER_REFUSED},
    {"reshape", gen_reshape, 2, NEVER_REFUSED},
    {"concatenate", gen_concatenate, 1, NEVER_REFUSED},
    {"reverse", gen_reverse, 1, NEVER_REFUSED},
    {"pad", gen_pad, 1, NEVER_REFUSED},
    {"convolution", gen_convolution, 1, NEVER_REFUSED},
    {"xla-variadic-root", gen_xla_variadic_root, 1, NEVER_REFUSED},
    {"xla-multi-output", gen_xla_multi_output, 1, NEVER_REFUSED},
    {"xla-input-consumer", gen_xla_input_consumer, 1, NEVER_REFUSED},
    {"xla-in-place-dus", gen_xla_in_place_dus, 1, NEVER_REFUSED},
    {"xla-bitcast-sort", gen_xla_bitcast_sort, 1, NEVER_REFUSED},
    {"xla-wrapped-op", gen_xla_wrapped_op, 1, NEVER_REFUSED},
    {"xla-custom-fusion", gen_xla_custom_fusion, 1, NEVER_REFUSED},
    {"empty-consumer", gen_empty_consumer, 3, NEVER_REFUSED},
    {"dynamic-slice", gen_dynamic_slice, 2, NEVER_REFUSED},
    {"dynamic-update-slice", gen_dynamic_update_slice, 2, NEVER_REFUSED},
    {"gather", gen_gather, 2, NEVER_REFUSED},
    {"scatter", gen_scatter, 2, NEVER_REFUSED},
    {"layouts-while", gen_layouts_while, 2, NEVER_REFUSED},
    {"layouts-conditional", gen_layouts_conditional, 2, NEVER_REFUSED},
    {"layouts-call", gen_layouts_call, 2, NEVER_REFUSED},
    {"layouts-tuple", gen_layouts_tuple, 3, NEVER_REFUSED},
    {"layouts-one-replica", gen_layouts_one_replica, 2, NEVER_REFUSED},
};
enum { GEN_FAMILY_COUNT = (int)(sizeof families / sizeof families[0]) };
_Static_assert(GEN_FAMILY_COUNT <= 64, "Gen.families_used has a bit per family");

/* What a module may draw beyond the plain families; all off, every seed
 * gives the module it always gave. */
typedef struct GenSwitches {
  bool layouts;           /* random layouts everywhere, and the families layouts-* */
  bool empty_dimensions;  /* zero-sized dimensions, in parameters and computed values */
  bool index_limits;      /* index-taking ops with start indices at their type's limits */
} GenSwitches;

/* The families named layouts-* are drawn only with the layout switch on. */
static bool gen_family_drawable(bool layouts, int f) {
  return layouts || strncmp(families[f].name, "layouts-", 8) != 0;
}

static int gen_family_weight(const Gen *g, int f) {
  return gen_family_drawable(g->layouts, f) ? families[f].weight : 0;
}

static int gen_family_draw(Gen *g) {
  int total = 0;
  for (int f = 0; f < GEN_FAMILY_COUNT; f++) total += gen_family_weight(g, f);
  int r = gen_below(g, total);
  for (int f = 0; f < GEN_FAMILY_COUNT; f++) {
    if (r < gen_family_weight(g, f)) return f;
    r -= gen_family_weight(g, f);
  }
  return 0;
}

/* The module for seed: 1 or 2 parameters of rank 1 to 3, then 2 to 7 ops.
 * The result is the last value, or a tuple of the last two. The text is
 * new (free it); *used gets the families' bits. */
static char *random_module_text_with(uint64_t seed, const GenSwitches *on, uint64_t *used, GenFixed *fixed,
                                     int *fixed_count) {
  Gen g = {.state = seed, .xla_fusion_forms = gen_xla_fusion_forms_enabled(), .layouts = on->layouts,
           .empty_dimensions = on->empty_dimensions, .index_limits = on->index_limits};
  int inputs = 1 + gen_below(&g, 2);
  for (int i = 0; i < inputs; i++) {
    int64_t dims[3];
    int rank = 1 + gen_below(&g, 3);
    do {
      for (int d = 0; d < rank; d++) dims[d] = gen_size(&g);
    } while (gen_count(rank, dims) > GEN_MAX_ELEMENTS / 8);
    gen_param(&g, TYPE_F32, rank, dims);
  }
  int ops = 2 + gen_below(&g, 6);
  for (int made = 0, tries = 0; made < ops && tries < 50 && g.value_count < GEN_MAX_VALUES - 8; tries++) {
    int f = gen_family_draw(&g);
    size_t body_len = g.body.len;
    int values = g.value_count, params = g.param_count;
    if (!families[f].make(&g)) {
      /* Nothing was written: families decide before they write. */
      if (g.body.len != body_len || g.value_count != values || g.param_count != params) break;
      continue;
    }
    g.families_used |= 1ull << f;
    made++;
  }
  const GenValue *last = &g.values[g.value_count - 1];
  StrBuf text = {0};
  strbuf_printf(&text, "HloModule random_%llu\n\n", (unsigned long long)seed);
  strbuf_printf(&text, "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\n");
  strbuf_printf(&text, "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(a, b)\n}\n\n");
  strbuf_printf(&text, "min {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] minimum(a, b)\n}\n\n");
  if (g.computations.data) strbuf_printf(&text, "%s", g.computations.data);
  strbuf_printf(&text, "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=GE\n}\n\n");
  strbuf_printf(&text, "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n\n");
  strbuf_printf(&text, "ENTRY main {\n%s%s", g.params.data ? g.params.data : "", g.body.data ? g.body.data : "");
  if (g.value_count >= 2 && gen_below(&g, 4) == 0) {
    const GenValue *other = &g.values[g.value_count - 2];
    strbuf_printf(&text, "  ROOT result = (");
    gen_print_shape(&text, other->type, other->rank, other->dims);
    if (g.layouts) gen_print_random_layout(&g, &text, other->rank);
    strbuf_printf(&text, ", ");
    gen_print_shape(&text, last->type, last->rank, last->dims);
    if (g.layouts) gen_print_random_layout(&g, &text, last->rank);
    strbuf_printf(&text, ") tuple(%s, %s)\n}\n", other->name, last->name);
  } else {
    strbuf_printf(&text, "  ROOT result = ");
    gen_print_shape(&text, last->type, last->rank, last->dims);
    if (g.layouts) gen_print_random_layout(&g, &text, last->rank);
    strbuf_printf(&text, " copy(%s)\n}\n", last->name);
  }
  strbuf_free(&g.params);
  strbuf_free(&g.body);
  strbuf_free(&g.computations);
  *used = g.families_used;
  if (fixed) memcpy(fixed, g.fixed, sizeof g.fixed), *fixed_count = g.fixed_count;
  return text.data;
}

static inline char *random_module_text(uint64_t seed, uint64_t *used) {
  GenSwitches off = {0};
  return random_module_text_with(seed, &off, used, NULL, NULL);
}

#endif
