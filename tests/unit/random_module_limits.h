/* The random-module families of empty dimensions and index limits, included
 * by random_module.h just before its table of families (they use its Gen,
 * gen_param, gen_begin...): each draws only when its switch is on. */
#ifndef AXLE_TESTS_RANDOM_MODULE_LIMITS_H
#define AXLE_TESTS_RANDOM_MODULE_LIMITS_H

/* ---- empty dimensions and index limits (issue 22): families behind the
 * switches Gen.empty_dimensions and Gen.index_limits, which
 * random_module_text_with sets; switched off, each draws nothing ---- */

static const ElementType gen_index_types[] = {TYPE_S8, TYPE_S16, TYPE_S32, TYPE_S64,
                                              TYPE_U8, TYPE_U16, TYPE_U32, TYPE_U64};

/* An index type's limits, as its bits in an s64: 0, -1 (the maximum of an
 * unsigned type), the minimum and the maximum; and for u64 2^63, which is
 * large, not negative. */
static int gen_limit_values(ElementType t, int64_t *v) {
  int bits = type_bit_width(t);
  bool is_signed = type_kind(t) == TYPE_KIND_SINT;
  int64_t top = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
  v[0] = 0;
  v[1] = -1;
  v[2] = is_signed ? -top - 1 : 0;
  v[3] = is_signed ? top : bits == 64 ? -1 : ((int64_t)1 << bits) - 1;
  if (t != TYPE_U64) return 4;
  v[4] = INT64_MIN;
  return 5;
}

/* A new index parameter of type t whose values the test sets to the
 * type's limits: a scalar takes one, an array all of them in turn. */
static const GenValue *gen_index_param(Gen *g, ElementType t, int rank, const int64_t *dims) {
  GenFixed *f = &g->fixed[g->fixed_count++];
  int64_t limits[5];
  int n = gen_limit_values(t, limits), first = gen_below(g, n);
  f->param = g->param_count;
  f->count = rank == 0 ? 1 : n;
  for (int i = 0; i < f->count; i++) f->values[i] = limits[(first + i) % n];
  return gen_param(g, t, rank, dims);
}

/* A window extent along a dimension of size n: 1..n, or 0..n with empty
 * dimensions switched on (0 when n is). */
static int64_t gen_extent(Gen *g, int64_t n) {
  int64_t lowest = g->empty_dimensions || n == 0 ? 0 : 1;
  return lowest + gen_below(g, (int)(n - lowest + 1));
}

/* The name of a new intermediate value (not one later ops read). */
static void gen_intermediate(Gen *g, char *name, size_t size, ElementType t, int rank, const int64_t *dims) {
  snprintf(name, size, "%s", gen_begin(g, t, rank, dims)->name);
  g->value_count--;
}

/* dynamic-slice of x with each start a scalar parameter at its type's limits. */
static bool gen_dynamic_slice(Gen *g) {
  if (!g->index_limits) return false;
  const GenValue *x = gen_pick(g);
  ElementType t = gen_index_types[gen_below(g, 8)];
  int64_t sizes[GEN_MAX_RANK], none[1] = {0};
  char starts[GEN_MAX_RANK][16], source[16];
  snprintf(source, sizeof source, "%s", x->name);
  int rank = x->rank;
  for (int d = 0; d < rank; d++) sizes[d] = gen_extent(g, x->dims[d]);
  for (int d = 0; d < rank; d++) snprintf(starts[d], sizeof starts[d], "%s", gen_index_param(g, t, 0, none)->name);
  gen_begin(g, TYPE_F32, rank, sizes);
  strbuf_printf(&g->body, "dynamic-slice(%s", source);
  for (int d = 0; d < rank; d++) strbuf_printf(&g->body, ", %s", starts[d]);
  strbuf_printf(&g->body, "), dynamic_slice_sizes=");
  gen_print_list(&g->body, sizes, rank);
  strbuf_printf(&g->body, "\n");
  return true;
}

/* dynamic-update-slice of x by a computed update (a new parameter,
 * negated), each start a scalar parameter at its type's limits. */
static bool gen_dynamic_update_slice(Gen *g) {
  if (!g->index_limits) return false;
  const GenValue *x = gen_pick(g);
  ElementType t = gen_index_types[gen_below(g, 8)];
  int64_t sizes[GEN_MAX_RANK], dims[GEN_MAX_RANK], none[1] = {0};
  char starts[GEN_MAX_RANK][16], source[16], update[16];
  int rank = x->rank;
  snprintf(source, sizeof source, "%s", x->name);
  memcpy(dims, x->dims, sizeof dims);
  for (int d = 0; d < rank; d++) sizes[d] = gen_extent(g, x->dims[d]);
  const GenValue *u = gen_param(g, TYPE_F32, rank, sizes);
  for (int d = 0; d < rank; d++) snprintf(starts[d], sizeof starts[d], "%s", gen_index_param(g, t, 0, none)->name);
  gen_intermediate(g, update, sizeof update, TYPE_F32, rank, sizes);
  strbuf_printf(&g->body, "negate(%s)\n", u->name);
  gen_begin(g, TYPE_F32, rank, dims);
  strbuf_printf(&g->body, "dynamic-update-slice(%s, %s", source, update);
  for (int d = 0; d < rank; d++) strbuf_printf(&g->body, ", %s", starts[d]);
  strbuf_printf(&g->body, ")\n");
  return true;
}

/* gather of windows of x (every dimension an offset dimension) at n
 * starts along one dimension, the indices [n,1] at their type's limits. */
static bool gen_gather(Gen *g) {
  if (!g->index_limits) return false;
  const GenValue *x = gen_pick(g);
  if (x->rank > 3) return false;
  ElementType t = gen_index_types[gen_below(g, 8)];
  int rank = x->rank, along = gen_below(g, rank);
  int64_t n = g->empty_dimensions && gen_below(g, 8) == 0 ? 0 : 1 + gen_below(g, 5);
  int64_t sizes[GEN_MAX_RANK], out[GEN_MAX_RANK], offsets[GEN_MAX_RANK], index_dims[2] = {n, 1};
  char source[16];
  snprintf(source, sizeof source, "%s", x->name);
  out[0] = n;
  for (int d = 0; d < rank; d++) out[d + 1] = sizes[d] = gen_extent(g, x->dims[d]), offsets[d] = d + 1;
  if (gen_count(rank + 1, out) > GEN_MAX_ELEMENTS) return false;
  const GenValue *indices = gen_index_param(g, t, 2, index_dims);
  gen_begin(g, TYPE_F32, rank + 1, out);
  strbuf_printf(&g->body, "gather(%s, %s), offset_dims=", source, indices->name);
  gen_print_list(&g->body, offsets, rank);
  strbuf_printf(&g->body, ", collapsed_slice_dims={}, start_index_map={%d}, index_vector_dim=1, slice_sizes=", along);
  gen_print_list(&g->body, sizes, rank);
  strbuf_printf(&g->body, "\n");
  return true;
}

/* A scatter's operand: x negated, a computed value in the default layout
 * (a parameter may have another, which the backends do not scatter into
 * yet: issue 22 gives that to its layouts part). */
static void gen_scatter_operand(Gen *g, char *name, size_t size, int rank, const int64_t *dims) {
  char x[16];
  snprintf(x, sizeof x, "%s", name);
  gen_intermediate(g, name, size, TYPE_F32, rank, dims);
  strbuf_printf(&g->body, "negate(%s)\n", x);
}

/* scatter-add into x of n computed update windows at starts along one
 * dimension, the indices [n,1] at their type's limits (a window that does
 * not fit is dropped whole). */
static bool gen_scatter(Gen *g) {
  if (!g->index_limits) return false;
  const GenValue *x = gen_pick(g);
  if (x->rank > 3) return false;
  ElementType t = gen_index_types[gen_below(g, 8)];
  int rank = x->rank, along = gen_below(g, rank);
  int64_t n = g->empty_dimensions && gen_below(g, 8) == 0 ? 0 : 1 + gen_below(g, 5);
  int64_t windows[GEN_MAX_RANK], dims[GEN_MAX_RANK], window_dims[GEN_MAX_RANK], index_dims[2] = {n, 1};
  char source[16], updates[16];
  snprintf(source, sizeof source, "%s", x->name);
  memcpy(dims, x->dims, sizeof dims);
  windows[0] = n;
  for (int d = 0; d < rank; d++) windows[d + 1] = gen_extent(g, x->dims[d]), window_dims[d] = d + 1;
  if (gen_count(rank + 1, windows) > GEN_MAX_ELEMENTS) return false;
  const GenValue *indices = gen_index_param(g, t, 2, index_dims);
  const GenValue *u = gen_param(g, TYPE_F32, rank + 1, windows);
  gen_intermediate(g, updates, sizeof updates, TYPE_F32, rank + 1, windows);
  strbuf_printf(&g->body, "negate(%s)\n", u->name);
  gen_scatter_operand(g, source, sizeof source, rank, dims);
  gen_begin(g, TYPE_F32, rank, dims);
  strbuf_printf(&g->body, "scatter(%s, %s, %s), update_window_dims=", source, indices->name, updates);
  gen_print_list(&g->body, window_dims, rank);
  strbuf_printf(&g->body, ", inserted_window_dims={}, scatter_dims_to_operand_dims={%d}, index_vector_dim=1, "
                "to_apply=sum\n", along);
  return true;
}

/* The consumers of an empty value e that the program computes (a slice of
 * x to nothing along one dimension): each reads e where its result does
 * not depend on e's (absent) elements. */
typedef enum GenEmptyUse {
  EMPTY_UPDATE, EMPTY_PAD, EMPTY_CONCATENATE, EMPTY_REDUCE, EMPTY_REDUCE_WINDOW, EMPTY_SELECT_AND_SCATTER,
  EMPTY_SORT, EMPTY_DOT, EMPTY_GATHER, EMPTY_SCATTER, EMPTY_USE_COUNT
} GenEmptyUse;

/* reduce-window of e: windows of 1 to 3 with padding enough to place at
 * least one, so every result element is a window over padding alone. */
static void gen_empty_reduce_window(Gen *g, const char *e, const GenValue *x, int along) {
  int64_t size[GEN_MAX_RANK], lo[GEN_MAX_RANK], hi[GEN_MAX_RANK], out[GEN_MAX_RANK];
  for (int d = 0; d < x->rank; d++) {
    int64_t n = d == along ? 0 : x->dims[d];
    size[d] = 1 + gen_below(g, 3);
    lo[d] = gen_below(g, 3);
    hi[d] = n + lo[d] >= size[d] ? gen_below(g, 3) : size[d] - n - lo[d] + gen_below(g, 2);
    out[d] = n + lo[d] + hi[d] - size[d] + 1;
  }
  char init[16];
  gen_scalar(g, init, sizeof init, "-inf");
  gen_begin(g, TYPE_F32, x->rank, out);
  strbuf_printf(&g->body, "reduce-window(%s, %s), window={size=", e, init);
  for (int d = 0; d < x->rank; d++) strbuf_printf(&g->body, "%s%lld", d ? "x" : "", (long long)size[d]);
  strbuf_printf(&g->body, " pad=");
  for (int d = 0; d < x->rank; d++) strbuf_printf(&g->body, "%s%lld_%lld", d ? "x" : "", (long long)lo[d], (long long)hi[d]);
  strbuf_printf(&g->body, "}, to_apply=max\n");
}

/* select-and-scatter over x whose window, one longer than x along one
 * dimension, has no placement: the source is empty (computed from a new
 * parameter) and every result element is init. */
static void gen_empty_select_and_scatter(Gen *g, const GenValue *x, int along) {
  int64_t size[GEN_MAX_RANK], source_dims[GEN_MAX_RANK], dims[GEN_MAX_RANK];
  char operand[16], source[16], init[16];
  snprintf(operand, sizeof operand, "%s", x->name);
  memcpy(dims, x->dims, sizeof dims);
  for (int d = 0; d < x->rank; d++) {
    size[d] = d == along ? x->dims[d] + 1 : 1;
    source_dims[d] = d == along ? 0 : x->dims[d];
  }
  int rank = x->rank;
  const GenValue *s = gen_param(g, TYPE_F32, rank, source_dims);
  gen_intermediate(g, source, sizeof source, TYPE_F32, rank, source_dims);
  strbuf_printf(&g->body, "negate(%s)\n", s->name);
  gen_scalar(g, init, sizeof init, "0.25");
  gen_begin(g, TYPE_F32, rank, dims);
  strbuf_printf(&g->body, "select-and-scatter(%s, %s, %s), window={size=", operand, source, init);
  for (int d = 0; d < rank; d++) strbuf_printf(&g->body, "%s%lld", d ? "x" : "", (long long)size[d]);
  strbuf_printf(&g->body, "}, select=ge, scatter=sum\n");
}

static bool gen_empty_consumer(Gen *g) {
  if (!g->empty_dimensions) return false;
  const GenValue *x = gen_pick(g);
  int rank = x->rank, along = gen_below(g, rank), use = gen_below(g, EMPTY_USE_COUNT);
  if ((use == EMPTY_DOT || use == EMPTY_GATHER || use == EMPTY_SCATTER) && rank > 3) return false;
  /* A pad, reduce-window or dot grows each dimension by at most this. */
  int64_t grown = 1;
  for (int d = 0; d < rank; d++) grown *= d == along ? 4 : 2 * x->dims[d] + 4;
  if (grown > GEN_MAX_ELEMENTS) return false;
  int64_t edims[GEN_MAX_RANK], dims[GEN_MAX_RANK], cut = gen_below(g, (int)x->dims[along] + 1);
  memcpy(edims, x->dims, sizeof edims);
  memcpy(dims, x->dims, sizeof dims);
  edims[along] = 0;
  char source[16], e[16], negated[16];
  snprintf(source, sizeof source, "%s", x->name);
  gen_intermediate(g, e, sizeof e, TYPE_F32, rank, edims);
  strbuf_printf(&g->body, "slice(%s), slice={", source);
  for (int d = 0; d < rank; d++) {
    int64_t start = d == along ? cut : 0, limit = d == along ? cut : x->dims[d];
    strbuf_printf(&g->body, "%s[%lld:%lld]", d ? ", " : "", (long long)start, (long long)limit);
  }
  strbuf_printf(&g->body, "}\n");
  gen_intermediate(g, negated, sizeof negated, TYPE_F32, rank, edims);
  strbuf_printf(&g->body, "negate(%s)\n", e);
  switch ((GenEmptyUse)use) {
  case EMPTY_UPDATE: {
    char start[16];
    snprintf(start, sizeof start, "c%d", g->name_count++);
    strbuf_printf(&g->body, "  %s = s32[] constant(%d)\n", start, gen_below(g, 3) - 1);
    gen_begin(g, TYPE_F32, rank, dims);
    strbuf_printf(&g->body, "dynamic-update-slice(%s, %s", source, negated);
    for (int d = 0; d < rank; d++) strbuf_printf(&g->body, ", %s", start);
    strbuf_printf(&g->body, ")\n");
    return true;
  }
  case EMPTY_PAD: {
    int64_t lo[GEN_MAX_RANK], hi[GEN_MAX_RANK], in[GEN_MAX_RANK], out[GEN_MAX_RANK];
    for (int d = 0; d < rank; d++) {
      in[d] = gen_below(g, 2), lo[d] = gen_below(g, 3), hi[d] = gen_below(g, 3);
      out[d] = edims[d] + (edims[d] > 0 ? edims[d] - 1 : 0) * in[d] + lo[d] + hi[d];
    }
    char padding[16];
    gen_scalar(g, padding, sizeof padding, "1.5");
    gen_begin(g, TYPE_F32, rank, out);
    strbuf_printf(&g->body, "pad(%s, %s), padding=", negated, padding);
    for (int d = 0; d < rank; d++)
      strbuf_printf(&g->body, "%s%lld_%lld_%lld", d ? "x" : "", (long long)lo[d], (long long)hi[d], (long long)in[d]);
    strbuf_printf(&g->body, "\n");
    return true;
  }
  case EMPTY_CONCATENATE:
    gen_begin(g, TYPE_F32, rank, dims);
    strbuf_printf(&g->body, "concatenate(%s, %s, %s), dimensions={%d}\n", negated, source, e, along);
    return true;
  case EMPTY_REDUCE: {
    char init[16];
    int64_t out[GEN_MAX_RANK];
    for (int d = 0, k = 0; d < rank; d++)
      if (d != along) out[k++] = dims[d];
    gen_scalar(g, init, sizeof init, "0.5");
    gen_begin(g, TYPE_F32, rank - 1, out);
    strbuf_printf(&g->body, "reduce(%s, %s), dimensions={%d}, to_apply=sum\n", negated, init, along);
    return true;
  }
  case EMPTY_REDUCE_WINDOW: gen_empty_reduce_window(g, negated, x, along); return true;
  case EMPTY_SELECT_AND_SCATTER: gen_empty_select_and_scatter(g, x, along); return true;
  case EMPTY_SORT:
    gen_begin(g, TYPE_F32, rank, edims);
    strbuf_printf(&g->body, "sort(%s), dimensions={%d}, to_apply=lt\n", negated, gen_below(g, rank));
    return true;
  case EMPTY_DOT: {
    /* Contracting over the empty dimension: every element is a sum of nothing. */
    int64_t n = 1 + gen_below(g, 4), wdims[2] = {0, n}, out[GEN_MAX_RANK];
    int k = 0;
    for (int d = 0; d < rank; d++)
      if (d != along) out[k++] = dims[d];
    out[k++] = n;
    const GenValue *w = gen_param(g, TYPE_F32, 2, wdims);
    gen_begin(g, TYPE_F32, k, out);
    strbuf_printf(&g->body, "dot(%s, %s), lhs_contracting_dims={%d}, rhs_contracting_dims={0}\n", negated, w->name,
                  along);
    return true;
  }
  case EMPTY_GATHER: {
    /* Windows of x at no starts. */
    int64_t index_dims[2] = {0, 1}, out[GEN_MAX_RANK], offsets[GEN_MAX_RANK];
    out[0] = 0;
    for (int d = 0; d < rank; d++) out[d + 1] = dims[d], offsets[d] = d + 1;
    const GenValue *indices = gen_param(g, TYPE_S32, 2, index_dims);
    gen_begin(g, TYPE_F32, rank + 1, out);
    strbuf_printf(&g->body, "gather(%s, %s), offset_dims=", source, indices->name);
    gen_print_list(&g->body, offsets, rank);
    strbuf_printf(&g->body, ", collapsed_slice_dims={}, start_index_map={%d}, index_vector_dim=1, slice_sizes=", along);
    gen_print_list(&g->body, dims, rank);
    strbuf_printf(&g->body, "\n");
    return true;
  }
  case EMPTY_SCATTER: {
    /* No update windows: the result is x. */
    int64_t index_dims[2] = {0, 1}, windows[GEN_MAX_RANK], window_dims[GEN_MAX_RANK];
    windows[0] = 0;
    for (int d = 0; d < rank; d++) windows[d + 1] = dims[d], window_dims[d] = d + 1;
    const GenValue *indices = gen_param(g, TYPE_S32, 2, index_dims);
    const GenValue *u = gen_param(g, TYPE_F32, rank + 1, windows);
    char updates[16];
    gen_intermediate(g, updates, sizeof updates, TYPE_F32, rank + 1, windows);
    strbuf_printf(&g->body, "negate(%s)\n", u->name);
    gen_scatter_operand(g, source, sizeof source, rank, dims);
    gen_begin(g, TYPE_F32, rank, dims);
    strbuf_printf(&g->body, "scatter(%s, %s, %s), update_window_dims=", source, indices->name, updates);
    gen_print_list(&g->body, window_dims, rank);
    strbuf_printf(&g->body, ", inserted_window_dims={}, scatter_dims_to_operand_dims={%d}, index_vector_dim=1, "
                  "to_apply=sum\n", along);
    return true;
  }
  case EMPTY_USE_COUNT: break;
  }
  return false;
}

#endif
