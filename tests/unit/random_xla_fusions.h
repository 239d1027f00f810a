/* The random modules' families in the forms XLA's optimizer gives
 * (random_module.h includes this before its table of families). axle's own
 * fusion pass never makes these, so without them the random test checks
 * only what axle writes itself:
 *
 *   xla-variadic-root     argmax/argmin as a fusion whose root is a reduce
 *                         over (value, iota), alone, beside a sum in a
 *                         tuple root, or nested inside the tuple root
 *   xla-multi-output      a kLoop fusion whose tuple root holds several
 *                         results, of the same shape or not
 *   xla-input-consumer    a kInput reduction with an elementwise consumer
 *                         at the root
 *   xla-in-place-dus      a dynamic-update-slice fusion that updates its
 *                         operand 0 in place (output_to_operand_aliasing)
 *   xla-bitcast-sort      a sort whose TOTALORDER comparator compares
 *                         integers read through element-type-changing
 *                         bitcasts, as XLA's comparison expander leaves it
 *   xla-wrapped-op        a single op in a kLoop fusion of its own
 *                         (wrapped_reduce-window, wrapped_concatenate,
 *                         wrapped_scatter)
 *   xla-custom-fusion     a kCustom __ynn_fusion around a dot or a reduce
 *
 * The switch: AXLE_RANDOM_XLA_FUSIONS=0 turns them off (on by default);
 * off, each family returns false before writing anything, so the draw
 * goes on as if it were not there. The fused computations (and their
 * reducers and comparators) go to Gen.computations, printed before ENTRY. */
#ifndef AXLE_TESTS_RANDOM_XLA_FUSIONS_H
#define AXLE_TESTS_RANDOM_XLA_FUSIONS_H

#include <stdlib.h>

static bool gen_xla_fusion_forms_enabled(void) {
  const char *s = getenv("AXLE_RANDOM_XLA_FUSIONS");
  return !s || strcmp(s, "0") != 0;
}

/* A name no other line of the module uses: PREFIX_N. */
static void gen_xla_name(Gen *g, char *name, size_t size, const char *prefix) {
  snprintf(name, size, "%s_%d", prefix, g->name_count++);
}

/* "TYPE[DIMS]" of x with dimension `drop` left out (-1: none). */
static int gen_xla_drop_dim(const GenValue *x, int drop, int64_t *dims) {
  int n = 0;
  for (int d = 0; d < x->rank; d++)
    if (d != drop) dims[n++] = x->dims[d];
  return n;
}

/* The entry's next value: "vN = TYPE[DIMS] " written, its name in `name`. */
static void gen_xla_value(Gen *g, ElementType t, int rank, const int64_t *dims, char *name, size_t size) {
  GenValue *v = gen_begin(g, t, rank, dims);
  snprintf(name, size, "%s", v->name);
}

/* A temporary of the entry (not read by later families). */
static void gen_xla_temp(Gen *g, ElementType t, int rank, const int64_t *dims, char *name, size_t size) {
  gen_xla_value(g, t, rank, dims, name, size);
  g->value_count--;
}

/* v, or a copy of it in the default layout when it is a parameter (which
 * may have another layout: a fused parameter carries its operand's layout
 * in XLA's modules, and the text below writes every fused shape with the
 * default one). Called once a family has decided to write. */
static const GenValue *gen_xla_default_layout(Gen *g, const GenValue *v, GenValue *copy) {
  if (v->name[0] != 'p') return v;
  *copy = *v;
  gen_xla_temp(g, v->type, v->rank, v->dims, copy->name, sizeof copy->name);
  strbuf_printf(&g->body, "copy(%s)\n", v->name);
  return copy;
}

/* JAX's argmax (GT) or argmin (LT) reducer over (value, index) pairs: NaN
 * wins, then the larger (smaller) value, then the lower index. */
static void gen_xla_arg_reducer(Gen *g, const char *name, const char *direction) {
  StrBuf *c = &g->computations;
  strbuf_printf(c, "%s {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  b = f32[] parameter(2)\n"
                   "  bi = s32[] parameter(3)\n  better = pred[] compare(a, b), direction=%s\n"
                   "  a_nan = pred[] compare(a, a), direction=NE\n  wins = pred[] or(better, a_nan)\n"
                   "  same = pred[] compare(a, b), direction=EQ\n  lower = pred[] compare(ai, bi), direction=LT\n"
                   "  tie = pred[] and(same, lower)\n  take_a = pred[] or(wins, tie)\n"
                   "  v = f32[] select(take_a, a, b)\n  i = s32[] select(take_a, ai, bi)\n"
                   "  ROOT r = (f32[], s32[]) tuple(v, i)\n}\n\n",
                name, direction);
}

/* argmax or argmin of x along one dimension in a fusion whose root is
 * the variadic reduce (form 0), a tuple of its elements and a sum (form
 * 1), or a tuple holding the reduce itself and a sum (form 2). The entry
 * adds the value, the index (converted) and the sum. */
static bool gen_xla_variadic_root(Gen *g) {
  if (!g->xla_fusion_forms) return false;
  GenValue x_copy;
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  int d = gen_below(g, x->rank), form = gen_below(g, 3);
  bool argmax = gen_below(g, 2);
  int64_t kept[GEN_MAX_RANK];
  int nk = gen_xla_drop_dim(x, d, kept);
  x = gen_xla_default_layout(g, x, &x_copy);
  char reducer[32], fused[32], fusion[16], value[16], index[16], sum[16], back[16];
  gen_xla_name(g, reducer, sizeof reducer, argmax ? "xla_argmax" : "xla_argmin");
  gen_xla_name(g, fused, sizeof fused, "fused_reduce");
  gen_xla_arg_reducer(g, reducer, argmax ? "GT" : "LT");
  StrBuf *c = &g->computations;
  StrBuf pair = {0};  /* "(f32[K], s32[K])" */
  strbuf_printf(&pair, "(");
  gen_print_shape(&pair, TYPE_F32, nk, kept);
  strbuf_printf(&pair, ", ");
  gen_print_shape(&pair, TYPE_S32, nk, kept);
  strbuf_printf(&pair, ")");
  strbuf_printf(c, "%s {\n  p = ", fused);
  gen_print_shape(c, TYPE_F32, x->rank, x->dims);
  strbuf_printf(c, " parameter(0)\n  iota = ");
  gen_print_shape(c, TYPE_S32, x->rank, x->dims);
  strbuf_printf(c, " iota(), iota_dimension=%d\n  init = f32[] constant(%s)\n  zero_i = s32[] constant(0)\n", d,
                argmax ? "-inf" : "inf");
  strbuf_printf(c, "  %sr = %s reduce(p, iota, init, zero_i), dimensions={%d}, to_apply=%s\n", form ? "" : "ROOT ",
                pair.data, d, reducer);
  StrBuf result = {0};  /* the fusion's shape */
  if (form) {
    strbuf_printf(c, "  zero = f32[] constant(0)\n  s = ");
    gen_print_shape(c, TYPE_F32, nk, kept);
    strbuf_printf(c, " reduce(p, zero), dimensions={%d}, to_apply=sum\n", d);
    if (form == 1) {
      strbuf_printf(&result, "(");
      gen_print_shape(&result, TYPE_F32, nk, kept);
      strbuf_printf(&result, ", ");
      gen_print_shape(&result, TYPE_S32, nk, kept);
      strbuf_printf(&result, ", ");
      gen_print_shape(&result, TYPE_F32, nk, kept);
      strbuf_printf(&result, ")");
      strbuf_printf(c, "  r0 = ");
      gen_print_shape(c, TYPE_F32, nk, kept);
      strbuf_printf(c, " get-tuple-element(r), index=0\n  r1 = ");
      gen_print_shape(c, TYPE_S32, nk, kept);
      strbuf_printf(c, " get-tuple-element(r), index=1\n  ROOT t = %s tuple(r0, r1, s)\n}\n\n", result.data);
    } else {
      strbuf_printf(&result, "(%s, ", pair.data);
      gen_print_shape(&result, TYPE_F32, nk, kept);
      strbuf_printf(&result, ")");
      strbuf_printf(c, "  ROOT t = %s tuple(r, s)\n}\n\n", result.data);
    }
  } else {
    strbuf_printf(&result, "%s", pair.data);
    strbuf_printf(c, "}\n\n");
  }
  gen_xla_name(g, fusion, sizeof fusion, "fusion");
  strbuf_printf(&g->body, "  %s = %s fusion(%s), kind=%s, calls=%s\n", fusion, result.data, x->name,
                form == 0 && gen_below(g, 2) ? "kLoop" : "kInput", fused);
  char pair_name[24];
  snprintf(pair_name, sizeof pair_name, "%s", fusion);
  if (form == 2) {
    gen_xla_name(g, pair_name, sizeof pair_name, "pair");
    strbuf_printf(&g->body, "  %s = %s get-tuple-element(%s), index=0\n", pair_name, pair.data, fusion);
  }
  gen_xla_temp(g, TYPE_F32, nk, kept, value, sizeof value);
  strbuf_printf(&g->body, "get-tuple-element(%s), index=0\n", pair_name);
  gen_xla_temp(g, TYPE_S32, nk, kept, index, sizeof index);
  strbuf_printf(&g->body, "get-tuple-element(%s), index=1\n", pair_name);
  gen_xla_temp(g, TYPE_F32, nk, kept, back, sizeof back);
  strbuf_printf(&g->body, "convert(%s)\n", index);
  if (form) {
    gen_xla_temp(g, TYPE_F32, nk, kept, sum, sizeof sum);
    strbuf_printf(&g->body, "get-tuple-element(%s), index=%d\n", fusion, form == 1 ? 2 : 1);
    char partial[16];
    gen_xla_temp(g, TYPE_F32, nk, kept, partial, sizeof partial);
    strbuf_printf(&g->body, "add(%s, %s)\n", value, sum);
    snprintf(value, sizeof value, "%s", partial);
  }
  char out[16];
  gen_xla_value(g, TYPE_F32, nk, kept, out, sizeof out);
  strbuf_printf(&g->body, "add(%s, %s)\n", value, back);
  strbuf_free(&pair);
  strbuf_free(&result);
  return true;
}

/* A kLoop fusion of x and a partner whose tuple root holds their sum and
 * product, and sometimes a slice of the sum (a result of another shape). */
static bool gen_xla_multi_output(Gen *g) {
  if (!g->xla_fusion_forms) return false;
  GenValue x_copy, y_copy;
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  bool sliced = gen_below(g, 2);
  int64_t part[GEN_MAX_RANK];
  memcpy(part, x->dims, sizeof part);
  part[0] = (x->dims[0] + 1) / 2;
  const GenValue *y = gen_xla_default_layout(g, gen_partner(g, x), &y_copy);
  x = gen_xla_default_layout(g, x, &x_copy);
  char fused[32], fusion[16], a[16], b[16];
  gen_xla_name(g, fused, sizeof fused, "fused_multi");
  StrBuf shape = {0}, part_shape = {0}, result = {0};
  gen_print_shape(&shape, TYPE_F32, x->rank, x->dims);
  gen_print_shape(&part_shape, TYPE_F32, x->rank, part);
  strbuf_printf(&result, "(%s, %s%s%s)", shape.data, shape.data, sliced ? ", " : "", sliced ? part_shape.data : "");
  StrBuf *c = &g->computations;
  strbuf_printf(c, "%s {\n  p0 = %s parameter(0)\n  p1 = %s parameter(1)\n  s = %s add(p0, p1)\n"
                   "  m = %s multiply(p0, p1)\n", fused, shape.data, shape.data, shape.data, shape.data);
  if (sliced) {
    strbuf_printf(c, "  h = %s slice(s), slice={[0:%lld]", part_shape.data, (long long)part[0]);
    for (int d = 1; d < x->rank; d++) strbuf_printf(c, ", [0:%lld]", (long long)x->dims[d]);
    strbuf_printf(c, "}\n");
  }
  strbuf_printf(c, "  ROOT t = %s tuple(s, m%s)\n}\n\n", result.data, sliced ? ", h" : "");
  gen_xla_name(g, fusion, sizeof fusion, "fusion");
  strbuf_printf(&g->body, "  %s = %s fusion(%s, %s), kind=kLoop, calls=%s\n", fusion, result.data, x->name, y->name,
                fused);
  gen_xla_temp(g, TYPE_F32, x->rank, x->dims, a, sizeof a);
  strbuf_printf(&g->body, "get-tuple-element(%s), index=0\n", fusion);
  gen_xla_temp(g, TYPE_F32, x->rank, x->dims, b, sizeof b);
  strbuf_printf(&g->body, "get-tuple-element(%s), index=1\n", fusion);
  char out[16];
  gen_xla_value(g, TYPE_F32, x->rank, x->dims, out, sizeof out);
  strbuf_printf(&g->body, "subtract(%s, %s)\n", a, b);
  if (sliced) {
    gen_xla_value(g, TYPE_F32, x->rank, part, out, sizeof out);
    strbuf_printf(&g->body, "get-tuple-element(%s), index=2\n", fusion);
  }
  strbuf_free(&shape);
  strbuf_free(&part_shape);
  strbuf_free(&result);
  return true;
}

/* A kInput fusion: a sum or maximum over some dimensions, then an
 * elementwise consumer at the root (times 0.5, plus 1). */
static bool gen_xla_input_consumer(Gen *g) {
  if (!g->xla_fusion_forms) return false;
  GenValue x_copy;
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  int64_t reduced[GEN_MAX_RANK], kept[GEN_MAX_RANK];
  int nr = 0, nk = 0;
  unsigned mask = x->rank == 1 ? 1u : 1u + (unsigned)gen_below(g, (1 << x->rank) - 2);
  for (int d = 0; d < x->rank; d++) {
    if (mask >> d & 1) reduced[nr++] = d;
    else kept[nk++] = x->dims[d];
  }
  bool maximum = gen_below(g, 2), times = gen_below(g, 2);
  x = gen_xla_default_layout(g, x, &x_copy);
  char fused[32], out[16];
  gen_xla_name(g, fused, sizeof fused, "fused_reduce");
  StrBuf kept_shape = {0};
  gen_print_shape(&kept_shape, TYPE_F32, nk, kept);
  StrBuf *c = &g->computations;
  strbuf_printf(c, "%s {\n  p = ", fused);
  gen_print_shape(c, TYPE_F32, x->rank, x->dims);
  strbuf_printf(c, " parameter(0)\n  init = f32[] constant(%s)\n  r = %s reduce(p, init), dimensions=",
                maximum ? "-inf" : "0", kept_shape.data);
  gen_print_list(c, reduced, nr);
  strbuf_printf(c, ", to_apply=%s\n  k = f32[] constant(%s)\n  kb = %s broadcast(k), dimensions={}\n"
                   "  ROOT e = %s %s(r, kb)\n}\n\n",
                maximum ? "max" : "sum", times ? "0.5" : "1", kept_shape.data, kept_shape.data,
                times ? "multiply" : "add");
  gen_xla_value(g, TYPE_F32, nk, kept, out, sizeof out);
  strbuf_printf(&g->body, "fusion(%s), kind=kInput, calls=%s\n", x->name, fused);
  strbuf_free(&kept_shape);
  return true;
}

/* dynamic-update-slice(x, 2 * u, starts...) in a kLoop fusion that writes
 * its operand 0 in place, with starts from -2 to past the end (clamped). */
static bool gen_xla_in_place_dus(Gen *g) {
  if (!g->xla_fusion_forms) return false;
  GenValue x_copy, y_copy;
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  int64_t udims[GEN_MAX_RANK];
  /* an empty dimension (the empty-dimension switch) takes an empty update */
  for (int d = 0; d < x->rank; d++) udims[d] = x->dims[d] ? 1 + gen_below(g, (int)(x->dims[d] < 8 ? x->dims[d] : 8)) : 0;
  const GenValue *u = gen_xla_default_layout(g, gen_param(g, TYPE_F32, x->rank, udims), &y_copy);
  x = gen_xla_default_layout(g, x, &x_copy);
  char fused[32], out[16];
  gen_xla_name(g, fused, sizeof fused, "fused_dynamic_update_slice");
  StrBuf shape = {0}, ushape = {0};
  gen_print_shape(&shape, TYPE_F32, x->rank, x->dims);
  gen_print_shape(&ushape, TYPE_F32, x->rank, udims);
  StrBuf *c = &g->computations;
  strbuf_printf(c, "%s {\n  p0 = %s parameter(0)\n  p1 = %s parameter(1)\n  two = f32[] constant(2)\n"
                   "  twos = %s broadcast(two), dimensions={}\n  doubled = %s multiply(p1, twos)\n",
                fused, shape.data, ushape.data, ushape.data, ushape.data);
  for (int d = 0; d < x->rank; d++)
    strbuf_printf(c, "  i%d = s32[] constant(%d)\n", d, gen_below(g, (int)(x->dims[d] + 5)) - 2);
  strbuf_printf(c, "  ROOT dus = %s dynamic-update-slice(p0, doubled", shape.data);
  for (int d = 0; d < x->rank; d++) strbuf_printf(c, ", i%d", d);
  strbuf_printf(c, ")\n}\n\n");
  gen_xla_value(g, TYPE_F32, x->rank, x->dims, out, sizeof out);
  strbuf_printf(&g->body, "fusion(%s, %s), kind=kLoop, calls=%s, output_to_operand_aliasing={{}: (0, {})}\n", x->name,
                u->name, fused);
  strbuf_free(&shape);
  strbuf_free(&ushape);
  return true;
}

/* XLA's TOTALORDER less-than on f32 as its optimizer leaves it: each side
 * read as s32 through a bitcast, negative ones with their magnitude bits
 * flipped, then a signed compare. With values: the second pair unread. */
static void gen_xla_totalorder_comparator(Gen *g, const char *name, bool with_values) {
  StrBuf *c = &g->computations;
  strbuf_printf(c, "%s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n", name);
  if (with_values) strbuf_printf(c, "  va = f32[] parameter(2)\n  vb = f32[] parameter(3)\n");
  strbuf_printf(c, "  zero = s32[] constant(0)\n  magnitude = s32[] constant(2147483647)\n");
  static const char *const sides[] = {"a", "b"};
  for (int s = 0; s < 2; s++) {
    const char *x = sides[s];
    strbuf_printf(c, "  %si = s32[] bitcast(%s)\n  %sn = pred[] compare(%si, zero), direction=LT\n"
                     "  %sf = s32[] xor(magnitude, %si)\n  %sk = s32[] select(%sn, %sf, %si)\n",
                  x, x, x, x, x, x, x, x, x, x);
  }
  strbuf_printf(c, "  ROOT lt = pred[] compare(ak, bk), direction=LT\n}\n\n");
}

/* x sorted along its last dimension (alone, or as keys moving a partner)
 * by XLA's rewritten TOTALORDER comparator. */
static bool gen_xla_bitcast_sort(Gen *g) {
  if (!g->xla_fusion_forms) return false;
  GenValue x_copy, y_copy;
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  bool with_values = gen_below(g, 2);
  const GenValue *y = with_values ? gen_partner(g, x) : NULL;
  (void)x_copy, (void)y_copy;
  char comparator[32], out[16], sorted[24];
  gen_xla_name(g, comparator, sizeof comparator, "xla_total_order");
  gen_xla_totalorder_comparator(g, comparator, with_values);
  if (!with_values) {
    gen_xla_value(g, TYPE_F32, x->rank, x->dims, out, sizeof out);
    strbuf_printf(&g->body, "sort(%s), dimensions={%d}, is_stable=true, to_apply=%s\n", x->name, x->rank - 1,
                  comparator);
    return true;
  }
  StrBuf shape = {0};
  gen_print_shape(&shape, TYPE_F32, x->rank, x->dims);
  gen_xla_name(g, sorted, sizeof sorted, "sorted");
  strbuf_printf(&g->body, "  %s = (%s, %s) sort(%s, %s), dimensions={%d}, is_stable=true, to_apply=%s\n", sorted,
                shape.data, shape.data, x->name, y->name, x->rank - 1, comparator);
  char keys[16];
  gen_xla_temp(g, TYPE_F32, x->rank, x->dims, keys, sizeof keys);
  strbuf_printf(&g->body, "get-tuple-element(%s), index=0\n", sorted);
  gen_xla_value(g, TYPE_F32, x->rank, x->dims, out, sizeof out);
  strbuf_printf(&g->body, "get-tuple-element(%s), index=1\n", sorted);
  strbuf_free(&shape);
  return true;
}

/* One op alone in a kLoop fusion, as XLA's CPU compiler wraps what it
 * does not fuse: a windowed maximum or sum along one dimension, a
 * concatenation with a partner, or a scatter-add of a new update
 * parameter at clamped rows. */
static bool gen_xla_wrapped_op(Gen *g) {
  if (!g->xla_fusion_forms) return false;
  GenValue x_copy, y_copy;
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32) return false;
  int which = gen_below(g, 3), d = gen_below(g, x->rank);
  int64_t dims[GEN_MAX_RANK];
  memcpy(dims, x->dims, sizeof dims);
  char fused[40], out[16];
  StrBuf *c = &g->computations;
  StrBuf shape = {0};
  gen_print_shape(&shape, TYPE_F32, x->rank, x->dims);
  if (which == 0) {
    int64_t size = 1 + gen_below(g, 3), stride = 1 + gen_below(g, 2), pad = gen_below(g, 2);
    dims[d] = (x->dims[d] + 2 * pad - size) / stride + 1;
    if (x->dims[d] + 2 * pad < size) {
      strbuf_free(&shape);
      return false;
    }
    bool maximum = gen_below(g, 2);
    x = gen_xla_default_layout(g, x, &x_copy);
    gen_xla_name(g, fused, sizeof fused, "wrapped_reduce-window_computation");
    strbuf_printf(c, "%s {\n  p0 = %s parameter(0)\n  p1 = f32[] parameter(1)\n  ROOT w = ", fused, shape.data);
    gen_print_shape(c, TYPE_F32, x->rank, dims);
    strbuf_printf(c, " reduce-window(p0, p1), window={size=");
    for (int k = 0; k < x->rank; k++) strbuf_printf(c, "%s%lld", k ? "x" : "", (long long)(k == d ? size : 1));
    strbuf_printf(c, " stride=");
    for (int k = 0; k < x->rank; k++) strbuf_printf(c, "%s%lld", k ? "x" : "", (long long)(k == d ? stride : 1));
    strbuf_printf(c, " pad=");
    for (int k = 0; k < x->rank; k++) strbuf_printf(c, "%s%lld_%lld", k ? "x" : "", (long long)(k == d ? pad : 0),
                                                    (long long)(k == d ? pad : 0));
    strbuf_printf(c, "}, to_apply=%s\n}\n\n", maximum ? "max" : "sum");
    char init[16];
    gen_scalar(g, init, sizeof init, maximum ? "-inf" : "0");
    gen_xla_value(g, TYPE_F32, x->rank, dims, out, sizeof out);
    strbuf_printf(&g->body, "fusion(%s, %s), kind=kLoop, calls=%s\n", x->name, init, fused);
  } else if (which == 1) {
    dims[d] *= 2;
    if (gen_count(x->rank, dims) > GEN_MAX_ELEMENTS) {
      strbuf_free(&shape);
      return false;
    }
    const GenValue *y = gen_xla_default_layout(g, gen_partner(g, x), &y_copy);
    x = gen_xla_default_layout(g, x, &x_copy);
    gen_xla_name(g, fused, sizeof fused, "wrapped_concatenate_computation");
    strbuf_printf(c, "%s {\n  p0 = %s parameter(0)\n  p1 = %s parameter(1)\n  ROOT cat = ", fused, shape.data,
                  shape.data);
    gen_print_shape(c, TYPE_F32, x->rank, dims);
    strbuf_printf(c, " concatenate(p0, p1), dimensions={%d}\n}\n\n", d);
    gen_xla_value(g, TYPE_F32, x->rank, dims, out, sizeof out);
    strbuf_printf(&g->body, "fusion(%s, %s), kind=kLoop, calls=%s\n", x->name, y->name, fused);
  } else {
    /* rows of dimension 0 at indices -1..dims[0] (out-of-range ones are
     * skipped); the update holds one row per index */
    int64_t n = 1 + gen_below(g, 4), idims[2] = {n, 1}, udims[GEN_MAX_RANK];
    udims[0] = n;
    for (int k = 1; k < x->rank; k++) udims[k] = x->dims[k];
    const GenValue *u = gen_xla_default_layout(g, gen_param(g, TYPE_F32, x->rank, udims), &y_copy);
    x = gen_xla_default_layout(g, x, &x_copy);
    char indices[16];
    gen_xla_temp(g, TYPE_S32, 2, idims, indices, sizeof indices);
    strbuf_printf(&g->body, "constant({");
    for (int64_t i = 0; i < n; i++)
      strbuf_printf(&g->body, "%s{%d}", i ? ", " : "", gen_below(g, (int)x->dims[0] + 2) - 1);
    strbuf_printf(&g->body, "})\n");
    gen_xla_name(g, fused, sizeof fused, "wrapped_scatter_computation");
    strbuf_printf(c, "%s {\n  p0 = %s parameter(0)\n  p1 = s32[%lld,1] parameter(1)\n  p2 = ", fused, shape.data,
                  (long long)n);
    gen_print_shape(c, TYPE_F32, x->rank, udims);
    strbuf_printf(c, " parameter(2)\n  ROOT s = %s scatter(p0, p1, p2), update_window_dims=", shape.data);
    int64_t window[GEN_MAX_RANK];
    for (int k = 1; k < x->rank; k++) window[k - 1] = k;
    gen_print_list(c, window, x->rank - 1);
    strbuf_printf(c, ", inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
                     "to_apply=sum\n}\n\n");
    gen_xla_value(g, TYPE_F32, x->rank, x->dims, out, sizeof out);
    strbuf_printf(&g->body, "fusion(%s, %s, %s), kind=kLoop, calls=%s\n", x->name, indices, u->name, fused);
  }
  strbuf_free(&shape);
  return true;
}

/* A kCustom fusion as XLA's CPU compiler gives its YNNPACK ops: a dot of
 * x [m, k] with a new [k, n] parameter, or a sum of squares over x's last
 * dimension. */
static bool gen_xla_custom_fusion(Gen *g) {
  if (!g->xla_fusion_forms) return false;
  GenValue x_copy, y_copy;
  const GenValue *x = gen_pick(g);
  if (x->type != TYPE_F32 || x->rank > 3) return false;
  bool dot = x->rank == 2 && x->dims[1] <= 64 && gen_below(g, 2);
  char fused[32], out[16];
  gen_xla_name(g, fused, sizeof fused, "fused_computation");
  StrBuf *c = &g->computations;
  StrBuf shape = {0};
  gen_print_shape(&shape, TYPE_F32, x->rank, x->dims);
  if (dot) {
    int64_t wdims[2] = {x->dims[1], 1 + gen_below(g, 17)}, odims[2] = {x->dims[0], wdims[1]};
    const GenValue *w = gen_xla_default_layout(g, gen_param(g, TYPE_F32, 2, wdims), &y_copy);
    x = gen_xla_default_layout(g, x, &x_copy);
    strbuf_printf(c, "%s {\n  p0 = %s parameter(0)\n  p1 = ", fused, shape.data);
    gen_print_shape(c, TYPE_F32, 2, wdims);
    strbuf_printf(c, " parameter(1)\n  ROOT d = ");
    gen_print_shape(c, TYPE_F32, 2, odims);
    strbuf_printf(c, " dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n\n");
    gen_xla_value(g, TYPE_F32, 2, odims, out, sizeof out);
    strbuf_printf(&g->body, "fusion(%s, %s), kind=kCustom, calls=%s", x->name, w->name, fused);
  } else {
    int64_t kept[GEN_MAX_RANK];
    int nk = gen_xla_drop_dim(x, x->rank - 1, kept);
    x = gen_xla_default_layout(g, x, &x_copy);
    strbuf_printf(c, "%s {\n  p0 = %s parameter(0)\n  sq = %s multiply(p0, p0)\n  zero = f32[] constant(0)\n"
                     "  ROOT r = ", fused, shape.data, shape.data);
    gen_print_shape(c, TYPE_F32, nk, kept);
    strbuf_printf(c, " reduce(sq, zero), dimensions={%d}, to_apply=sum\n}\n\n", x->rank - 1);
    gen_xla_value(g, TYPE_F32, nk, kept, out, sizeof out);
    strbuf_printf(&g->body, "fusion(%s), kind=kCustom, calls=%s", x->name, fused);
  }
  strbuf_printf(&g->body, ", backend_config={\"fusion_config\":{\"kind\":\"__ynn_fusion\"},"
                          "\"outer_dimension_partitions\":[]}\n");
  strbuf_free(&shape);
  return true;
}

#endif
