/* Instruction attributes: the ", name=value" list after the operands.
 *
 * One table row per attribute name says which opcodes take it and which
 * function reads its value into Attrs. A second table lists the attributes
 * an opcode cannot do without. Attributes that do not change what an
 * instruction computes (metadata, sharding, backend_config, ...) are read
 * past with their value's brackets balanced. */
#include <string.h>
#include <strings.h>

#include "parse_internal.h"

/* ----------------------------------------------------------- value forms */

static bool parse_bool(Parser *p, bool *out) {
  Token *t = lex_peek(p);
  if (lex_token_is(t, "true")) *out = true;
  else if (lex_token_is(t, "false")) *out = false;
  else return parse_error(p, t, "expected true or false");
  lex_next(p);
  return true;
}

/* int_list = "{" (int ("," int)*)? "}" */
static bool parse_int_list(Parser *p, IntList *out) {
  if (!lex_expect(p, "{")) return false;
  int64_t small[AXLE_MAX_RANK * 2];
  int64_t *values = small;
  int count = 0, cap = (int)(sizeof small / sizeof small[0]);
  while (!lex_token_is(lex_peek(p), "}")) {
    if (count > 0 && !lex_expect(p, ",")) return false;
    if (count == cap) {
      int64_t *bigger = arena_alloc(&p->module->arena, sizeof(int64_t) * (size_t)cap * 2);
      memcpy(bigger, values, sizeof(int64_t) * (size_t)count);
      values = bigger;
      cap *= 2;
    }
    if (!parse_int64(p, &values[count])) return false;
    count++;
  }
  lex_next(p);
  *out = intlist_copy(&p->module->arena, values, count);
  return true;
}

/* Reads a word of the form A<sep>B<sep>C into at most max integers:
 * "3x3" (sep 'x'), "1_2_0" (sep '_'). Empty pieces and junk are errors. */
static int split_ints(const Token *t, int start, int end, char sep, int64_t *out, int max) {
  int count = 0;
  int i = start;
  while (i <= end) {
    int j = i;
    while (j < end && t->text[j] != sep) j++;
    if (count == max) return -1;
    Token piece = {TK_WORD, t->text + i, j - i, t->loc, false};
    if (!lex_word_to_int64(&piece, &out[count])) return -1;
    count++;
    i = j + 1;
  }
  return count;
}

/* One "lo_hi" or "lo_hi_interior" group of a padding spec; interior
 * defaults to 0 (XLA prints "1_2" for pads without interior padding). */
static bool split_pad_dims(const Token *t, int64_t lo[], int64_t hi[], int64_t interior[],
                           bool allow_interior, int *rank) {
  *rank = 0;
  if (t->len == 0 || t->text[t->len - 1] == 'x') return false;
  int i = 0;
  while (i < t->len) {
    int j = i;
    while (j < t->len && t->text[j] != 'x') j++;
    if (*rank == AXLE_MAX_RANK) return false;
    int64_t v[3] = {0, 0, 0};
    int n = split_ints(t, i, j, '_', v, 3);
    if (n < 2 || (n == 3 && !allow_interior)) return false;
    lo[*rank] = v[0];
    hi[*rank] = v[1];
    if (interior) interior[*rank] = v[2];
    (*rank)++;
    i = j + 1;
  }
  return *rank > 0;
}

/* ------------------------------------------------------- attribute values */

typedef bool (*AttrReader)(Parser *p, Instruction *inst, AttrNotes *notes);

static bool read_dimensions(Parser *p, Instruction *inst, AttrNotes *notes) {
  notes->has_dimensions = true;
  return parse_int_list(p, &inst->attrs.dimensions);
}

static bool read_iota_dimension(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int64(p, &inst->attrs.iota_dimension);
}

static bool read_index(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int64(p, &inst->attrs.tuple_index);
}

/* slice = "{" ("[" start ":" limit (":" stride)? "]" ("," ...)*)? "}" */
static bool read_slice(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  int64_t starts[AXLE_MAX_RANK], limits[AXLE_MAX_RANK], strides[AXLE_MAX_RANK];
  int rank = 0;
  if (!lex_expect(p, "{")) return false;
  while (!lex_token_is(lex_peek(p), "}")) {
    if (rank > 0 && !lex_expect(p, ",")) return false;
    if (rank == AXLE_MAX_RANK) return parse_error(p, lex_peek(p), "slice has more than %d dimensions", AXLE_MAX_RANK);
    strides[rank] = 1;
    if (!lex_expect(p, "[") || !parse_int64(p, &starts[rank]) || !lex_expect(p, ":") ||
        !parse_int64(p, &limits[rank]))
      return false;
    if (lex_consume(p, ":")) {
      Token *t = lex_peek(p);
      if (!parse_int64(p, &strides[rank])) return false;
      if (strides[rank] < 1)
        return parse_error(p, t, "slice stride must be at least 1, found %lld", (long long)strides[rank]);
    }
    if (!lex_expect(p, "]")) return false;
    rank++;
  }
  lex_next(p);
  Arena *arena = &p->module->arena;
  SliceDims *slice = arena_alloc(arena, sizeof *slice);
  slice->starts = intlist_copy(arena, starts, rank);
  slice->limits = intlist_copy(arena, limits, rank);
  slice->strides = intlist_copy(arena, strides, rank);
  inst->attrs.slice = slice;
  return true;
}

static bool read_dynamic_slice_sizes(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int_list(p, &inst->attrs.dynamic_slice_sizes);
}

/* padding = lo_hi(_interior)? ("x" lo_hi(_interior)?)*   e.g. 0_0_0x1_-2_1 */
static bool read_padding(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  Token *t = lex_peek(p);
  PadDims *pad = arena_alloc(&p->module->arena, sizeof *pad);
  if (t->kind != TK_WORD || !split_pad_dims(t, pad->lo, pad->hi, pad->interior, true, &pad->rank))
    return parse_error(p, t, "expected padding as lo_hi_interior per dimension, 'x'-separated");
  inst->attrs.padding = pad;
  lex_next(p);
  return true;
}

/* window = "{" (key "=" value)* "}"
 *   key: size stride pad lhs_dilate rhs_dilate rhs_reversal
 *   value: N ("x" N)*, and for pad lo_hi ("x" lo_hi)* */
static bool read_window(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  Window *w = arena_alloc(&p->module->arena, sizeof *w);
  inst->attrs.window = w;
  if (!lex_expect(p, "{")) return false;
  int rank = -1;
  int64_t size[AXLE_MAX_RANK] = {0}, stride[AXLE_MAX_RANK], lhs[AXLE_MAX_RANK], rhs[AXLE_MAX_RANK];
  int64_t lo[AXLE_MAX_RANK] = {0}, hi[AXLE_MAX_RANK] = {0}, reversal[AXLE_MAX_RANK] = {0};
  for (int i = 0; i < AXLE_MAX_RANK; i++) stride[i] = lhs[i] = rhs[i] = 1;
  while (!lex_token_is(lex_peek(p), "}")) {
    Token *key = lex_peek(p);
    if (key->kind != TK_WORD) return parse_error(p, key, "expected a window field");
    lex_next(p);
    if (!lex_expect(p, "=")) return false;
    Token *v = lex_peek(p);
    if (v->kind != TK_WORD) return parse_error(p, v, "expected a window value");
    int n;
    if (lex_token_is(key, "pad")) {
      if (!split_pad_dims(v, lo, hi, NULL, false, &n))
        return parse_error(p, v, "expected window padding as lo_hi per dimension, 'x'-separated");
    } else {
      int64_t *dest = lex_token_is(key, "size") ? size : lex_token_is(key, "stride") ? stride
                    : lex_token_is(key, "lhs_dilate") ? lhs : lex_token_is(key, "rhs_dilate") ? rhs
                    : lex_token_is(key, "rhs_reversal") ? reversal : NULL;
      if (!dest) return parse_error(p, key, "unknown window field '%.*s'", key->len, key->text);
      n = split_ints(v, 0, v->len, 'x', dest, AXLE_MAX_RANK);
      if (n <= 0) return parse_error(p, v, "expected N or NxM... for window %.*s", key->len, key->text);
    }
    if (rank >= 0 && n != rank)
      return parse_error(p, v, "window field has %d dimensions, earlier fields have %d", n, rank);
    rank = n;
    lex_next(p);
  }
  lex_next(p);
  w->rank = rank < 0 ? 0 : rank;
  for (int i = 0; i < w->rank; i++)
    w->dims[i] = (WindowDim){size[i], stride[i], lo[i], hi[i], lhs[i], rhs[i], reversal[i] != 0};
  return true;
}

/* Reads one side of dim_labels ("b01f", "01io", "bf"), recording where each
 * letter stands. Digits name spatial dimensions in order. */
static bool read_labels(Parser *p, const Token *t, const char *letters, int64_t *first,
                        int64_t *second, int64_t *spatial, int *spatial_count) {
  bool seen_first = false, seen_second = false;
  int seen_spatial = 0;
  *spatial_count = 0;
  if (t->kind != TK_WORD || t->len > AXLE_MAX_RANK + 2)
    return parse_error(p, t, "expected dimension labels such as b01f");
  for (int i = 0; i < t->len; i++) {
    char ch = t->text[i];
    if (ch == letters[0] && !seen_first) {
      *first = i;
      seen_first = true;
    } else if (ch == letters[1] && !seen_second) {
      *second = i;
      seen_second = true;
    } else if (ch >= '0' && ch <= '9' && !(seen_spatial & (1 << (ch - '0')))) {
      spatial[ch - '0'] = i;
      seen_spatial |= 1 << (ch - '0');
      (*spatial_count)++;
    } else {
      return parse_error(p, t, "bad dimension labels '%.*s'", t->len, t->text);
    }
  }
  if (!seen_first || !seen_second || seen_spatial != (1 << *spatial_count) - 1)
    return parse_error(p, t, "bad dimension labels '%.*s'", t->len, t->text);
  return true;
}

/* dim_labels = input "_" kernel "->" output    e.g. b01f_01io->b01f, bf_io->bf */
static bool read_dim_labels(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  /* On a custom-call they only describe the target's operands to it, and
   * may hold '?' for dimensions of no role: read past. */
  if (inst->opcode == OP_CUSTOM_CALL) return lex_skip_value(p);
  ConvDims *d = arena_alloc(&p->module->arena, sizeof *d);
  inst->attrs.conv = d;
  Token *lhs = lex_peek(p);
  const char *underscore = lhs->kind == TK_WORD ? memchr(lhs->text, '_', (size_t)lhs->len) : NULL;
  if (!underscore) return parse_error(p, lhs, "expected dim_labels such as b01f_01io->b01f");
  int split = (int)(underscore - lhs->text);
  Token input = {TK_WORD, lhs->text, split, lhs->loc, false};
  Token kernel = {TK_WORD, underscore + 1, lhs->len - split - 1, lhs->loc, false};
  kernel.loc.col += split + 1;
  lex_next(p);
  if (!lex_expect(p, "->")) return false;
  Token *output = lex_peek(p);
  int n_in, n_kernel, n_out;
  if (!read_labels(p, &input, "bf", &d->input_batch, &d->input_feature, d->input_spatial, &n_in) ||
      !read_labels(p, &kernel, "io", &d->kernel_input_feature, &d->kernel_output_feature,
                   d->kernel_spatial, &n_kernel) ||
      !read_labels(p, output, "bf", &d->output_batch, &d->output_feature, d->output_spatial, &n_out))
    return false;
  if (n_in != n_kernel || n_in != n_out)
    return parse_error(p, lhs, "dim_labels sides have different numbers of spatial dimensions");
  d->spatial_count = n_in;
  lex_next(p);
  return true;
}

/* A group count divides a dimension size: zero or less can mean nothing. */
static bool parse_group_count(Parser *p, int64_t *out) {
  Token *t = lex_peek(p);
  if (!parse_int64(p, out)) return false;
  if (*out < 1) return parse_error(p, t, "a group count must be at least 1, found %lld", (long long)*out);
  return true;
}

static bool read_feature_group_count(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_group_count(p, &inst->attrs.feature_group_count);
}

static bool read_batch_group_count(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_group_count(p, &inst->attrs.batch_group_count);
}

/* dot, gather and scatter dimension numbers live out of line (see Attrs);
 * the first of their attributes read allocates the group, which this
 * parser owns until the module is built, so writing through it is safe. */
static DotDims *dot_dims(Parser *p, Instruction *inst) {
  if (!inst->attrs.dot) inst->attrs.dot = arena_alloc(&p->module->arena, sizeof(DotDims));
  return (DotDims *)inst->attrs.dot;
}

static GatherDims *gather_dims(Parser *p, Instruction *inst) {
  if (!inst->attrs.gather) inst->attrs.gather = arena_alloc(&p->module->arena, sizeof(GatherDims));
  return (GatherDims *)inst->attrs.gather;
}

static ScatterDims *scatter_dims(Parser *p, Instruction *inst) {
  if (!inst->attrs.scatter) inst->attrs.scatter = arena_alloc(&p->module->arena, sizeof(ScatterDims));
  return (ScatterDims *)inst->attrs.scatter;
}

#define INT_LIST_READER(fn, group, field)                           \
  static bool fn(Parser *p, Instruction *inst, AttrNotes *notes) {    \
    (void)notes;                                                        \
    return parse_int_list(p, &group##_dims(p, inst)->field);        \
  }
INT_LIST_READER(read_lhs_batch_dims, dot, lhs_batch)
INT_LIST_READER(read_rhs_batch_dims, dot, rhs_batch)
INT_LIST_READER(read_lhs_contracting_dims, dot, lhs_contracting)
INT_LIST_READER(read_rhs_contracting_dims, dot, rhs_contracting)
INT_LIST_READER(read_lhs_ragged_dims, dot, lhs_ragged)
INT_LIST_READER(read_rhs_group_dims, dot, rhs_group)
INT_LIST_READER(read_offset_dims, gather, offset_dims)
INT_LIST_READER(read_collapsed_slice_dims, gather, collapsed_slice_dims)
INT_LIST_READER(read_start_index_map, gather, start_index_map)
INT_LIST_READER(read_operand_batching_dims, gather, operand_batching_dims)
INT_LIST_READER(read_start_indices_batching_dims, gather, start_indices_batching_dims)
INT_LIST_READER(read_slice_sizes, gather, slice_sizes)
INT_LIST_READER(read_update_window_dims, scatter, update_window_dims)
INT_LIST_READER(read_inserted_window_dims, scatter, inserted_window_dims)
INT_LIST_READER(read_scatter_dims_to_operand_dims, scatter, scatter_dims_to_operand_dims)
INT_LIST_READER(read_input_batching_dims, scatter, input_batching_dims)
INT_LIST_READER(read_scatter_indices_batching_dims, scatter, scatter_indices_batching_dims)
#undef INT_LIST_READER

/* index_vector_dim and indices_are_sorted are spelled the same on gather
 * and scatter but live in each op's own struct. */
static bool read_index_vector_dim(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int64(p, inst->opcode == OP_GATHER ? &gather_dims(p, inst)->index_vector_dim
                                                  : &scatter_dims(p, inst)->index_vector_dim);
}

static bool read_indices_are_sorted(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_bool(p, inst->opcode == OP_GATHER ? &gather_dims(p, inst)->indices_are_sorted
                                                 : &scatter_dims(p, inst)->indices_are_sorted);
}

static bool read_unique_indices(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_bool(p, &scatter_dims(p, inst)->unique_indices);
}

/* Reads a word that must be one of names[]; stores its position. */
static bool parse_keyword(Parser *p, const char *const names[], int count, const char *what, int *out) {
  Token *t = lex_peek(p);
  for (int i = 0; i < count; i++) {
    if (lex_token_is(t, names[i])) {
      *out = i;
      lex_next(p);
      return true;
    }
  }
  return parse_error(p, t, "unknown %s '%.*s'", what, t->len > 40 ? 40 : t->len, t->text);
}

static bool read_direction(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  static const char *const names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  int v = 0;
  if (!parse_keyword(p, names, 6, "comparison direction", &v)) return false;
  inst->attrs.direction = (CompareDirection)v;
  return true;
}

static bool read_compare_type(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  static const char *const names[] = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  int v = 0;
  if (!parse_keyword(p, names, 4, "comparison type", &v)) return false;
  inst->attrs.compare_type = (CompareType)(v + CMP_TYPE_FLOAT);
  return true;
}

/* order=TOTAL|PARTIAL: newer spelling of the comparison's ordering of
 * floats. TOTAL is type=TOTALORDER (-NaN < -inf < ... < -0 < +0 < ... <
 * +inf < NaN); PARTIAL is IEEE comparison, the default. Settled against
 * type= once all attributes are read (resolve_compare_order). */
static bool read_compare_order(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  static const char *const names[] = {"TOTAL", "PARTIAL"};
  int v = 0;
  Token at = *lex_peek(p);
  if (!parse_keyword(p, names, 2, "comparison order", &v)) return false;
  notes->order = at;
  return true;
}

static bool resolve_compare_order(Parser *p, Instruction *inst, const AttrNotes *notes) {
  if (notes->order.kind == TK_EOF) return true;
  bool total = lex_token_is(&notes->order, "TOTAL");
  CompareType t = inst->attrs.compare_type;
  if (total && (t == CMP_TYPE_DEFAULT || t == CMP_TYPE_TOTALORDER)) {
    inst->attrs.compare_type = CMP_TYPE_TOTALORDER;
    return true;
  }
  if (!total && t != CMP_TYPE_TOTALORDER) return true;
  return parse_error(p, &notes->order, "order=%s contradicts the comparison's type=",
                     total ? "TOTAL" : "PARTIAL");
}

static bool read_fusion_kind(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  static const char *const names[] = {"kLoop", "kInput", "kOutput", "kCustom"};
  int v = 0;
  if (!parse_keyword(p, names, 4, "fusion kind", &v)) return false;
  inst->attrs.fusion_kind = (FusionKind)v;
  return true;
}

static bool read_custom_call_target(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  Token *t = lex_peek(p);
  if (t->kind != TK_STRING) return parse_error(p, t, "expected a quoted custom_call_target");
  inst->attrs.custom_call_target = lex_token_string(p, t);
  lex_next(p);
  return true;
}

/* backend_config= on a custom-call: the target's options, kept as written
 * (JAX's LAPACK calls give them as an attribute dictionary printed bare,
 * {uplo = 76 : ui8}; a quoted string is kept without its quotes). Other
 * ops' backend_config are XLA's hints and are skipped. */
static bool read_custom_call_backend_config(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  Token *t = lex_peek(p);
  if (t->kind == TK_STRING) {
    inst->attrs.backend_config = lex_token_string(p, t);
    lex_next(p);
    return true;
  }
  if (!lex_token_is(t, "{")) return lex_skip_value(p);
  Token open = *t;
  const char *end = open.text;
  int depth = 0;
  do {
    Token *u = lex_next(p);
    if (u->kind == TK_EOF) return parse_error(p, &open, "unbalanced '{'");
    depth += lex_token_is(u, "{") - lex_token_is(u, "}");
    end = u->text + u->len;
  } while (depth > 0);
  inst->attrs.backend_config = arena_strndup(&p->module->arena, open.text, (size_t)(end - open.text));
  return true;
}

static bool read_rng_algorithm(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  static const char *const names[] = {"rng_default", "rng_three_fry", "rng_philox"};
  int v = 0;
  if (!parse_keyword(p, names, 3, "rng algorithm", &v)) return false;
  inst->attrs.rng_algorithm = (RngAlgorithm)v;
  return true;
}

static bool read_dot_algorithm(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  int v = 0;
  if (!parse_keyword(p, dot_algorithm_names + 1, DOT_ALG_COUNT - 1, "dot algorithm", &v)) return false;
  dot_dims(p, inst)->algorithm = (DotAlgorithm)(v + 1);
  return true;
}

static bool read_exponent_bits(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int64(p, &inst->attrs.exponent_bits);
}

static bool read_mantissa_bits(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int64(p, &inst->attrs.mantissa_bits);
}

static bool read_epsilon(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  Token *t = lex_peek(p);
  if (!lex_word_to_double(t, &inst->attrs.epsilon)) return parse_error(p, t, "expected a number for epsilon");
  lex_next(p);
  return true;
}

static bool read_feature_index(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int64(p, &inst->attrs.feature_index);
}

static bool read_lower(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_bool(p, &inst->attrs.lower);
}

static bool read_left_side(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_bool(p, &inst->attrs.left_side);
}

static bool read_unit_diagonal(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_bool(p, &inst->attrs.unit_diagonal);
}

static bool read_transpose_a(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  static const char *const names[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  int v = 0;
  if (!parse_keyword(p, names, 3, "transpose_a value", &v)) return false;
  inst->attrs.transpose_a = (TransposeA)v;
  return true;
}

static bool read_is_stable(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_bool(p, &inst->attrs.is_stable);
}

static bool read_channel_id(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int64(p, &inst->attrs.channel_id);
}

/* topk, scan and the rng ops keep their scalars out of line too. topk's
 * largest= defaults to true, so the group starts that way. */
static ScalarAttrs *scalar_attrs(Parser *p, Instruction *inst) {
  if (!inst->attrs.scalars) {
    ScalarAttrs *group = arena_alloc(&p->module->arena, sizeof(ScalarAttrs));
    group->largest = true;
    inst->attrs.scalars = group;
  }
  return (ScalarAttrs *)inst->attrs.scalars;
}

static bool read_k(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int64(p, &scalar_attrs(p, inst)->k);
}

static bool read_largest(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_bool(p, &scalar_attrs(p, inst)->largest);
}

static bool read_num_carries(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int64(p, &scalar_attrs(p, inst)->num_carries);
}

static bool read_is_reverse(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_bool(p, &scalar_attrs(p, inst)->is_reverse);
}

static bool read_delta(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int64(p, &scalar_attrs(p, inst)->delta);
}

static bool read_distribution(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  static const char *const names[] = {"rng_uniform", "rng_normal"};
  int v = 0;
  if (!parse_keyword(p, names, 2, "rng distribution", &v)) return false;
  scalar_attrs(p, inst)->distribution = (RngDistribution)v;
  return true;
}

static bool read_ignored_bool(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  (void)notes;
  bool ignored;
  return parse_bool(p, &ignored);
}

static ReplicaGroups *replica_groups_of(Parser *p, Instruction *inst);

static bool read_use_global_device_ids(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  bool value;
  if (!parse_bool(p, &value)) return false;
  replica_groups_of(p, inst)->use_global_device_ids = value;
  return true;
}

static FftDims *fft_dims(Parser *p, Instruction *inst) {
  if (!inst->attrs.fft) inst->attrs.fft = arena_alloc(&p->module->arena, sizeof(FftDims));
  return (FftDims *)inst->attrs.fft;
}

/* fft_type = "FFT" | "IFFT" | "RFFT" | "IRFFT" */
static bool read_fft_type(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  static const char *const names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  int v = 0;
  if (!parse_keyword(p, names, 4, "fft_type value", &v)) return false;
  fft_dims(p, inst)->type = (FftType)v;
  return true;
}

/* fft_length = int_list; the 1-3 lengths are checked by shape inference. */
static bool read_fft_length(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  return parse_int_list(p, &fft_dims(p, inst)->length);
}

/* replica_groups = "{" ("{" ints "}" ("," ...)*)? "}"
 *                | "[" ints "]" "<=" "[" ints "]" ("T" "(" ints ")")?
 * The second, "iota" form says: reshape iota(prod) to the dims after <=,
 * transpose by T, reshape to the dims before ([groups, group size]). Both
 * are kept as the flattened ids and the group size; shape inference reads
 * the size (all-gather multiplies by it), and running refuses groups that
 * name more devices than the run has (eval_check_supported_on). */

/* The instruction's groups, made empty on first use (use_global_device_ids
 * may come before replica_groups). */
static ReplicaGroups *replica_groups_of(Parser *p, Instruction *inst) {
  if (!inst->attrs.replica_groups) inst->attrs.replica_groups = arena_alloc(&p->module->arena, sizeof(ReplicaGroups));
  return (ReplicaGroups *)inst->attrs.replica_groups;
}

static ReplicaGroups *set_replica_groups(Parser *p, Instruction *inst, int64_t *ids, int count, int64_t group_size) {
  ReplicaGroups *g = replica_groups_of(p, inst);
  bool global_ids = g->use_global_device_ids;
  *g = (ReplicaGroups){.ids = {.count = count, .values = ids}, .group_size = count > 0 ? group_size : 0,
                       .use_global_device_ids = global_ids};
  return g;
}

/* "[" ints "]" into dims, at most AXLE_MAX_RANK of them, each >= 1. */
static bool read_bracketed_dims(Parser *p, int64_t *dims, int *rank) {
  if (!lex_expect(p, "[")) return false;
  for (*rank = 0; !lex_token_is(lex_peek(p), "]"); (*rank)++) {
    if (*rank >= AXLE_MAX_RANK) return parse_error(p, lex_peek(p), "too many dimensions in replica_groups");
    if ((*rank > 0 && !lex_expect(p, ",")) || !parse_int64(p, &dims[*rank])) return false;
    if (dims[*rank] < 1 || dims[*rank] > MAX_REPLICA_IDS) return parse_error(p, lex_peek(p), "replica_groups dimension out of range");
  }
  lex_next(p);
  return true;
}

/* The iota form: ids = transpose(reshape(iota(n), source), perm), read out
 * in row-major order into groups of dims[1]. */
static bool read_iota_replica_groups(Parser *p, Instruction *inst) {
  int64_t shape[AXLE_MAX_RANK], source[AXLE_MAX_RANK], perm[AXLE_MAX_RANK];
  int shape_rank, source_rank, perm_rank = 0;
  if (!read_bracketed_dims(p, shape, &shape_rank) || !lex_expect(p, "<=") ||
      !read_bracketed_dims(p, source, &source_rank))
    return false;
  if (lex_consume(p, "T")) {
    if (!lex_expect(p, "(")) return false;
    for (; !lex_token_is(lex_peek(p), ")"); perm_rank++) {
      if (perm_rank >= AXLE_MAX_RANK)
        return parse_error(p, lex_peek(p), "too many dimensions in replica_groups");
      if ((perm_rank > 0 && !lex_expect(p, ",")) || !parse_int64(p, &perm[perm_rank])) return false;
    }
    lex_next(p);
  } else {
    for (; perm_rank < source_rank; perm_rank++) perm[perm_rank] = perm_rank;
  }
  int64_t n = 1, m = 1;
  for (int i = 0; i < source_rank; i++) n *= source[i];
  for (int i = 0; i < shape_rank; i++) m *= shape[i];
  if (shape_rank != 2 || n != m || n > MAX_REPLICA_IDS || perm_rank != source_rank)
    return parse_error(p, lex_peek(p),
                       "replica_groups [groups,size]<=[dims] needs as many ids on both sides");
  bool seen[AXLE_MAX_RANK] = {false};
  for (int i = 0; i < perm_rank; i++) {
    if (perm[i] < 0 || perm[i] >= source_rank || seen[perm[i]])
      return parse_error(p, lex_peek(p), "replica_groups T(...) must be a permutation");
    seen[perm[i]] = true;
  }
  int64_t *ids = arena_alloc(&p->module->arena, sizeof(int64_t) * (size_t)n);
  int64_t index[AXLE_MAX_RANK] = {0};  /* over the transposed dims source[perm[i]] */
  for (int64_t k = 0; k < n; k++) {
    int64_t id = 0;  /* row-major position of the element in the source dims */
    for (int d = 0; d < source_rank; d++) {
      int64_t stride = 1;
      for (int e = perm[d] + 1; e < source_rank; e++) stride *= source[e];
      id += index[d] * stride;
    }
    ids[k] = id;
    for (int d = source_rank - 1; d >= 0 && ++index[d] == source[perm[d]]; d--) index[d] = 0;
  }
  set_replica_groups(p, inst, ids, (int)n, shape[1]);
  return true;
}

static bool read_replica_groups(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  if (!lex_token_is(lex_peek(p), "{")) return read_iota_replica_groups(p, inst);
  lex_next(p);
  int64_t *flat = NULL, *sizes = NULL;
  int count = 0, capacity = 0, groups = 0, sizes_capacity = 0;
  int64_t size = 0;
  bool uniform = true;
  while (!lex_token_is(lex_peek(p), "}")) {
    Token at = *lex_peek(p);
    IntList group;
    if (!parse_int_list(p, &group)) return false;
    if (group.count == 0) return parse_error(p, &at, "an empty replica group");
    if (size == 0) size = group.count;
    /* Groups may differ in size (XLA's all-reduce allows it); ops whose
     * shape depends on the group's size refuse that in shape inference. */
    uniform = uniform && group.count == size;
    if (count + group.count > MAX_REPLICA_IDS) return parse_error(p, &at, "too many replica ids");
    if (count + group.count > capacity) {
      int64_t *grown = arena_alloc(&p->module->arena, sizeof(int64_t) * (size_t)(2 * (count + group.count)));
      if (count) memcpy(grown, flat, sizeof(int64_t) * (size_t)count);
      flat = grown;
      capacity = 2 * (count + group.count);
    }
    memcpy(flat + count, group.values, sizeof(int64_t) * (size_t)group.count);
    count += group.count;
    if (groups == sizes_capacity) {
      int64_t *grown = arena_alloc(&p->module->arena, sizeof(int64_t) * (size_t)(2 * groups + 8));
      if (groups) memcpy(grown, sizes, sizeof(int64_t) * (size_t)groups);
      sizes = grown;
      sizes_capacity = 2 * groups + 8;
    }
    sizes[groups++] = group.count;
    if (!lex_token_is(lex_peek(p), "}") && !lex_expect(p, ",")) return false;
  }
  lex_next(p);
  ReplicaGroups *g = set_replica_groups(p, inst, flat, count, uniform ? size : 0);
  if (!uniform) g->sizes = intlist_copy(&p->module->arena, sizes, groups);
  return true;
}

/* source_target_pairs = "{" ("{" int "," int "}" ("," ...)*)? "}" */
static bool read_source_target_pairs(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  if (!lex_expect(p, "{")) return false;
  int64_t small[64];
  int64_t *flat = small;
  int count = 0, cap = 64;
  while (!lex_token_is(lex_peek(p), "}")) {
    if (count > 0 && !lex_expect(p, ",")) return false;
    if (count + 2 > cap) {
      int64_t *bigger = arena_alloc(&p->module->arena, sizeof(int64_t) * (size_t)cap * 2);
      memcpy(bigger, flat, sizeof(int64_t) * (size_t)count);
      flat = bigger;
      cap *= 2;
    }
    if (!lex_expect(p, "{") || !parse_int64(p, &flat[count]) || !lex_expect(p, ",") ||
        !parse_int64(p, &flat[count + 1]) || !lex_expect(p, "}"))
      return false;
    count += 2;
  }
  lex_next(p);
  inst->attrs.source_target_pairs = intlist_copy(&p->module->arena, flat, count);
  return true;
}

/* ------------------------------------------------------ called computations
 * Each attribute naming a computation puts it in a fixed slot of
 * inst->called, so attribute order in the text does not matter. */

static bool read_called_into(Parser *p, AttrNotes *notes, int slot) {
  Token *t = lex_peek(p);
  if (t->kind != TK_WORD) return parse_error(p, t, "expected a computation name");
  if (slot >= PARSE_MAX_CALLED) return parse_error(p, t, "too many called computations");
  notes->names[slot] = *t;
  if (notes->count <= slot) notes->count = slot + 1;
  lex_next(p);
  return true;
}

static bool read_first_called(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  return read_called_into(p, notes, 0);
}

static bool read_second_called(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  return read_called_into(p, notes, 1);
}

/* branch_computations = "{" name ("," name)* "}" */
static bool read_called_list(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  notes->has_branch_list = true;
  if (!lex_expect(p, "{")) return false;
  int base = notes->count;
  for (int n = 0; !lex_token_is(lex_peek(p), "}"); n++) {
    if (n > 0 && !lex_expect(p, ",")) return false;
    if (!read_called_into(p, notes, base + n)) return false;
  }
  lex_next(p);
  return true;
}

/* metadata = "{" (field "=" value ","?)* "}"   (fields separated by blanks or commas)
 * op_name, source_file and source_line are kept: the provenance that every
 * pass carries and every message can name. The other fields (op_type,
 * source_end_line, source_column, stack_frame_id, profile_type={...}, ...)
 * are read past, one word, string or bracketed group each. */
static bool read_metadata(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)notes;
  Token open = *lex_peek(p);
  if (!lex_expect(p, "{")) return false;
  Metadata md = {0};
  while (!lex_token_is(lex_peek(p), "}")) {
    Token field = *lex_peek(p);
    if (field.kind == TK_EOF) return parse_error(p, &open, "unterminated metadata");
    if (field.kind != TK_WORD) return parse_error(p, &field, "expected a metadata field name");
    lex_next(p);
    if (!lex_expect(p, "=")) return false;
    Token *value = lex_peek(p);
    bool keeps_string = lex_token_is(&field, "op_name") || lex_token_is(&field, "source_file");
    if (keeps_string && value->kind != TK_STRING)
      return parse_error(p, value, "expected a quoted %.*s", field.len, field.text);
    if (lex_token_is(&field, "op_name")) md.op_name = lex_token_string(p, value);
    if (lex_token_is(&field, "source_file")) md.source_file = lex_token_string(p, value);
    if (lex_token_is(&field, "source_line")) {
      if (!parse_int64(p, &md.source_line)) return false;
    } else if (value->kind == TK_STRING || value->kind == TK_WORD) {
      lex_next(p);
    } else if (lex_token_is(value, "{") || lex_token_is(value, "[") || lex_token_is(value, "(")) {
      if (!lex_skip_balanced(p)) return false;
    } else {
      return parse_error(p, value, "expected a metadata value");
    }
    /* XLA also takes the fields comma-separated: {source_line=5, op_type="x"}. */
    if (lex_token_is(lex_peek(p), ",") && !lex_token_is(lex_peek_at(p, 1), "}")) lex_next(p);
  }
  lex_next(p);
  if (md.op_name || md.source_file || md.source_line)
    inst->metadata = arena_memdup(&p->module->arena, &md, sizeof md);
  return true;
}

static bool read_and_ignore(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  (void)notes;
  return lex_skip_value(p);
}

/* result_accuracy = "{" "mode" "=" ("default" | "highest") "}"
 *                 | "{" "tolerance" "=" "{" (("atol" | "rtol" | "ulps") "=" number ","?)* "}" "}"
 * XLA's two forms (any case for the mode); anything else is refused as
 * XLA's parser refuses it. The value itself is not kept: axle's evaluator
 * is always as exact as it can be, which every mode and tolerance allows. */
static bool read_result_accuracy(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  (void)notes;
  if (!lex_expect(p, "{")) return false;
  Token field = *lex_peek(p);
  if (lex_token_is(&field, "mode")) {
    lex_next(p);
    if (!lex_expect(p, "=")) return false;
    Token mode = *lex_peek(p);
    bool known = mode.kind == TK_WORD && ((mode.len == 7 && strncasecmp(mode.text, "default", 7) == 0) ||
                                          (mode.len == 7 && strncasecmp(mode.text, "highest", 7) == 0));
    if (!known)
      return parse_error(p, &mode, "result_accuracy mode must be default or highest, not '%.*s'", mode.len,
                         mode.text);
    lex_next(p);
    return lex_expect(p, "}");
  }
  if (!lex_token_is(&field, "tolerance"))
    return parse_error(p, &field, "result_accuracy takes mode= or tolerance=, not '%.*s'", field.len, field.text);
  lex_next(p);
  if (!lex_expect(p, "=") || !lex_expect(p, "{")) return false;
  while (!lex_token_is(lex_peek(p), "}")) {
    Token name = *lex_peek(p);
    if (!lex_token_is(&name, "atol") && !lex_token_is(&name, "rtol") && !lex_token_is(&name, "ulps"))
      return parse_error(p, &name, "result_accuracy tolerance takes atol, rtol and ulps, not '%.*s'", name.len,
                         name.text);
    lex_next(p);
    if (!lex_expect(p, "=")) return false;
    Token value = *lex_peek(p);
    double v;
    if (!lex_word_to_double(&value, &v))
      return parse_error(p, &value, "result_accuracy %.*s needs a number", name.len, name.text);
    lex_next(p);
    lex_consume(p, ",");
  }
  lex_next(p);
  return lex_expect(p, "}");
}

/* slice_sizes={{...}, ...} on collective-permute: the in-place form's
 * slice sizes, read past (running that form is refused); noted so that
 * the parser can refuse them on the other forms. */
static bool read_permute_slice_sizes(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  notes->has_slice_sizes = true;
  return lex_skip_value(p);
}

/* custom-call may name computations through to_apply= and
 * called_computations={...}; they are kept in text order. */
static bool read_appended_called(Parser *p, Instruction *inst, AttrNotes *notes) {
  (void)inst;
  if (lex_token_is(lex_peek(p), "{")) return read_called_list(p, inst, notes);
  return read_called_into(p, notes, notes->count);
}

/* ------------------------------------------------------------ the tables */

/* Opcode sets, each ending with OP_COUNT. ANY_OP (NULL) means every opcode. */
#define OPS(...) ((const Opcode[]){__VA_ARGS__, OP_COUNT})
#define ANY_OP NULL

/* One row per attribute an instruction may carry:
 *   name     the HLO spelling, before '='
 *   read     reads the value into Attrs (or past it)
 *   ops      the opcodes that take it; another opcode with it is an error
 * A name may have several rows for different opcodes (algorithm= is the rng
 * algorithm on rng-bit-generator but a precision hint on dot). */
typedef struct AttrRule {
  const char *name;
  AttrReader read;
  const Opcode *ops;
} AttrRule;

#define COLLECTIVES OP_ALL_GATHER, OP_ALL_REDUCE, OP_REDUCE_SCATTER, OP_COLLECTIVE_PERMUTE, \
    OP_ALL_TO_ALL, OP_RAGGED_ALL_TO_ALL, OP_COLLECTIVE_BROADCAST, OP_COLLECTIVE_REDUCE, \
    OP_ALL_REDUCE_START, OP_ALL_GATHER_START, OP_COLLECTIVE_PERMUTE_START
/* The collectives that take replica groups (collective-permute names pairs). */
#define GROUPED_COLLECTIVES OP_ALL_GATHER, OP_ALL_REDUCE, OP_REDUCE_SCATTER, OP_ALL_TO_ALL, \
    OP_RAGGED_ALL_TO_ALL, OP_COLLECTIVE_BROADCAST, OP_COLLECTIVE_REDUCE, OP_ALL_REDUCE_START, \
    OP_ALL_GATHER_START
#define DOTS OP_DOT, OP_SCALED_DOT, OP_RAGGED_DOT
#define HOST_TRANSFERS OP_SEND, OP_SEND_DONE, OP_RECV, OP_RECV_DONE
#define ASYNC_OPS OP_ASYNC_START, OP_ASYNC_UPDATE, OP_ASYNC_DONE

static const AttrRule attr_rules[] = {
  {"dimensions", read_dimensions, OPS(OP_BROADCAST, OP_TRANSPOSE, OP_REDUCE, OP_REVERSE,
      OP_CONCATENATE, OP_MAP, OP_SORT, OP_ALL_GATHER, OP_REDUCE_SCATTER, OP_ALL_GATHER_START,
      OP_ALL_TO_ALL, OP_SCAN, OP_GET_DIMENSION_SIZE, OP_SET_DIMENSION_SIZE)},
  {"iota_dimension", read_iota_dimension, OPS(OP_IOTA)},
  {"index", read_index, OPS(OP_GET_TUPLE_ELEMENT)},
  {"slice", read_slice, OPS(OP_SLICE)},
  {"dynamic_slice_sizes", read_dynamic_slice_sizes, OPS(OP_DYNAMIC_SLICE)},
  {"padding", read_padding, OPS(OP_PAD)},
  {"window", read_window, OPS(OP_REDUCE_WINDOW, OP_SELECT_AND_SCATTER, OP_CONVOLUTION, OP_CUSTOM_CALL)},
  {"dim_labels", read_dim_labels, OPS(OP_CONVOLUTION, OP_CUSTOM_CALL)},
  {"feature_group_count", read_feature_group_count, OPS(OP_CONVOLUTION, OP_CUSTOM_CALL)},
  {"batch_group_count", read_batch_group_count, OPS(OP_CONVOLUTION, OP_CUSTOM_CALL)},
  {"lhs_batch_dims", read_lhs_batch_dims, OPS(DOTS)},
  {"rhs_batch_dims", read_rhs_batch_dims, OPS(DOTS)},
  {"lhs_contracting_dims", read_lhs_contracting_dims, OPS(DOTS)},
  {"rhs_contracting_dims", read_rhs_contracting_dims, OPS(DOTS)},
  {"lhs_ragged_dims", read_lhs_ragged_dims, OPS(OP_RAGGED_DOT)},
  {"rhs_group_dims", read_rhs_group_dims, OPS(OP_RAGGED_DOT)},
  {"offset_dims", read_offset_dims, OPS(OP_GATHER)},
  {"collapsed_slice_dims", read_collapsed_slice_dims, OPS(OP_GATHER)},
  {"start_index_map", read_start_index_map, OPS(OP_GATHER)},
  {"operand_batching_dims", read_operand_batching_dims, OPS(OP_GATHER)},
  {"start_indices_batching_dims", read_start_indices_batching_dims, OPS(OP_GATHER)},
  {"slice_sizes", read_slice_sizes, OPS(OP_GATHER)},
  {"index_vector_dim", read_index_vector_dim, OPS(OP_GATHER, OP_SCATTER)},
  {"indices_are_sorted", read_indices_are_sorted, OPS(OP_GATHER, OP_SCATTER)},
  {"update_window_dims", read_update_window_dims, OPS(OP_SCATTER)},
  {"inserted_window_dims", read_inserted_window_dims, OPS(OP_SCATTER)},
  {"scatter_dims_to_operand_dims", read_scatter_dims_to_operand_dims, OPS(OP_SCATTER)},
  {"input_batching_dims", read_input_batching_dims, OPS(OP_SCATTER)},
  {"scatter_indices_batching_dims", read_scatter_indices_batching_dims, OPS(OP_SCATTER)},
  {"unique_indices", read_unique_indices, OPS(OP_SCATTER)},
  {"fft_type", read_fft_type, OPS(OP_FFT)},
  {"fft_length", read_fft_length, OPS(OP_FFT)},
  {"direction", read_direction, OPS(OP_COMPARE)},
  {"type", read_compare_type, OPS(OP_COMPARE)},
  {"order", read_compare_order, OPS(OP_COMPARE)},
  {"kind", read_fusion_kind, OPS(OP_FUSION)},
  {"custom_call_target", read_custom_call_target, OPS(OP_CUSTOM_CALL)},
  {"algorithm", read_rng_algorithm, OPS(OP_RNG_BIT_GENERATOR)},
  {"exponent_bits", read_exponent_bits, OPS(OP_REDUCE_PRECISION)},
  {"mantissa_bits", read_mantissa_bits, OPS(OP_REDUCE_PRECISION)},
  {"epsilon", read_epsilon, OPS(OP_BATCH_NORM_GRAD, OP_BATCH_NORM_INFERENCE, OP_BATCH_NORM_TRAINING)},
  {"feature_index", read_feature_index, OPS(OP_BATCH_NORM_GRAD, OP_BATCH_NORM_INFERENCE, OP_BATCH_NORM_TRAINING)},
  {"lower", read_lower, OPS(OP_CHOLESKY, OP_TRIANGULAR_SOLVE)},
  {"left_side", read_left_side, OPS(OP_TRIANGULAR_SOLVE)},
  {"unit_diagonal", read_unit_diagonal, OPS(OP_TRIANGULAR_SOLVE)},
  {"transpose_a", read_transpose_a, OPS(OP_TRIANGULAR_SOLVE)},
  {"is_stable", read_is_stable, OPS(OP_SORT)},
  {"channel_id", read_channel_id, OPS(COLLECTIVES, HOST_TRANSFERS)},
  {"replica_groups", read_replica_groups, OPS(GROUPED_COLLECTIVES)},
  {"use_global_device_ids", read_use_global_device_ids, OPS(OP_ALL_GATHER, OP_ALL_REDUCE, OP_REDUCE_SCATTER,
      OP_ALL_REDUCE_START, OP_ALL_GATHER_START)},
  {"constrain_layout", read_ignored_bool, OPS(COLLECTIVES)},
  {"source_target_pairs", read_source_target_pairs, OPS(OP_COLLECTIVE_PERMUTE, OP_COLLECTIVE_PERMUTE_START)},
  {"is_host_transfer", read_ignored_bool, OPS(HOST_TRANSFERS)},
  {"k", read_k, OPS(OP_TOPK)},
  {"largest", read_largest, OPS(OP_TOPK)},
  {"num_carries", read_num_carries, OPS(OP_SCAN)},
  {"is_reverse", read_is_reverse, OPS(OP_SCAN)},
  {"is_associative", read_ignored_bool, OPS(OP_SCAN)},
  {"distribution", read_distribution, OPS(OP_RNG)},
  {"delta", read_delta, OPS(OP_RNG_GET_AND_UPDATE_STATE)},
  /* Called computations. */
  {"to_apply", read_first_called, OPS(OP_REDUCE, OP_REDUCE_WINDOW, OP_MAP, OP_SORT, OP_SCATTER,
      OP_ALL_REDUCE, OP_REDUCE_SCATTER, OP_CALL, OP_SCAN, OP_COLLECTIVE_REDUCE, OP_ALL_REDUCE_START)},
  {"to_apply", read_appended_called, OPS(OP_CUSTOM_CALL)},
  {"called_computations", read_appended_called, OPS(OP_CUSTOM_CALL)},
  {"calls", read_first_called, OPS(OP_FUSION, ASYNC_OPS)},
  {"condition", read_first_called, OPS(OP_WHILE)},
  {"body", read_second_called, OPS(OP_WHILE)},
  {"select", read_first_called, OPS(OP_SELECT_AND_SCATTER)},
  {"scatter", read_second_called, OPS(OP_SELECT_AND_SCATTER)},
  {"true_computation", read_first_called, OPS(OP_CONDITIONAL)},
  {"false_computation", read_second_called, OPS(OP_CONDITIONAL)},
  {"branch_computations", read_called_list, OPS(OP_CONDITIONAL)},
  /* Accepted and skipped: they guide XLA's own compiler or carry debug
   * information, and do not change what the instruction computes. */
  /* On every opcode in XLA: debug information (metadata, origin,
   * statistics), hints to XLA's own passes and backends (backend_config,
   * frontend_attributes), placement on devices (sharding: axle runs one),
   * and ordering without data flow (control-predecessors). */
  {"metadata", read_metadata, ANY_OP},
  {"backend_config", read_custom_call_backend_config, OPS(OP_CUSTOM_CALL)},
  {"backend_config", read_and_ignore, ANY_OP},
  {"raw_backend_config", read_and_ignore, ANY_OP},
  {"frontend_attributes", read_and_ignore, ANY_OP},
  {"sharding", read_and_ignore, ANY_OP},
  {"statistics", read_and_ignore, ANY_OP},
  {"origin", read_and_ignore, ANY_OP},
  {"control-predecessors", parse_control_predecessors, ANY_OP},
  {"parameter_replication", read_and_ignore, OPS(OP_PARAMETER)},
  /* The accuracy a transcendental function may trade for speed. */
  {"result_accuracy", read_result_accuracy, OPS(OP_CBRT, OP_COSINE, OP_ERF, OP_EXPONENTIAL,
      OP_EXPONENTIAL_MINUS_ONE, OP_LOG, OP_LOG_PLUS_ONE, OP_LOGISTIC, OP_RSQRT, OP_SINE,
      OP_SQRT, OP_TAN, OP_TANH)},
  /* Collectives: how the groups were derived (one device: no groups). */
  {"mode", read_and_ignore, OPS(OP_ALL_REDUCE, OP_REDUCE_SCATTER)},
  /* The in-place collective-permute's slice sizes: read past, since that
   * form moves data between devices and running it is refused
   * (eval_check_supported); shape inference tells the form by its operands. */
  {"slice_sizes", read_permute_slice_sizes, OPS(OP_COLLECTIVE_PERMUTE, OP_COLLECTIVE_PERMUTE_START)},
  /* Which direction of the training step a convolution is (forward,
   * backward filter, ...): a hint, the dimension numbers say everything. */
  {"conv_kind", read_and_ignore, OPS(OP_CONVOLUTION)},
  {"schedule", read_and_ignore, OPS(OP_CUSTOM_CALL)},
  {"operand_precision", read_and_ignore, OPS(DOTS, OP_CONVOLUTION, OP_CUSTOM_CALL)},
  {"precision_config", read_and_ignore, OPS(DOTS, OP_CONVOLUTION)},
  {"algorithm", read_dot_algorithm, OPS(DOTS)},
  {"algorithm", read_and_ignore, OPS(OP_CONVOLUTION)},
  {"output_to_operand_aliasing", read_and_ignore, OPS(OP_CUSTOM_CALL, OP_FUSION, OP_ASYNC_START)},
  {"api_version", parse_api_version, OPS(OP_CUSTOM_CALL)},
  {"custom_call_has_side_effect", read_and_ignore, OPS(OP_CUSTOM_CALL)},
  {"operand_layout_constraints", parse_operand_layout_constraints, OPS(OP_CUSTOM_CALL)},
  {"custom_call_schedule", read_and_ignore, OPS(OP_CUSTOM_CALL)},
  {"padding_type", read_and_ignore, OPS(OP_CUSTOM_CALL)},
  {"literal", read_and_ignore, OPS(OP_CUSTOM_CALL)},
  {"inferred_dimension", read_and_ignore, OPS(OP_RESHAPE)},
  {"is_composite", read_and_ignore, OPS(OP_CALL)},
  {"async_execution_thread", read_and_ignore, OPS(ASYNC_OPS)},
  {"async_group_id", read_and_ignore, OPS(ASYNC_OPS)},
  {"domain", read_and_ignore, OPS(OP_DOMAIN)},
  {"infeed_config", read_and_ignore, OPS(OP_INFEED)},
  {"outfeed_config", read_and_ignore, OPS(OP_OUTFEED)},
  {"outfeed_shape", read_and_ignore, OPS(OP_OUTFEED)},
  {"cross_program_prefetch_index", read_and_ignore, OPS(OP_COPY_START)},
  {"split_count", read_and_ignore, OPS(OP_ALL_TO_ALL)},
};
enum { ATTR_RULE_COUNT = sizeof attr_rules / sizeof attr_rules[0] };

/* The attributes an opcode cannot do without. conditional is checked in
 * code: it needs branch_computations, or true_ and false_computation.
 * broadcast is checked once its operand is known (parse.c). */
static const struct {
  Opcode op;
  const char *name;
} required_attrs[] = {
  {OP_TRANSPOSE, "dimensions"},
  {OP_REDUCE, "dimensions"},           {OP_REDUCE, "to_apply"},
  {OP_REVERSE, "dimensions"},          {OP_CONCATENATE, "dimensions"},
  {OP_MAP, "to_apply"},                {OP_SORT, "dimensions"},
  {OP_SORT, "to_apply"},               {OP_IOTA, "iota_dimension"},
  {OP_GET_TUPLE_ELEMENT, "index"},     {OP_SLICE, "slice"},
  {OP_DYNAMIC_SLICE, "dynamic_slice_sizes"}, {OP_PAD, "padding"},
  {OP_REDUCE_WINDOW, "to_apply"},      {OP_CONVOLUTION, "dim_labels"},
  {OP_SELECT_AND_SCATTER, "select"},   {OP_SELECT_AND_SCATTER, "scatter"},
  {OP_GATHER, "offset_dims"},          {OP_GATHER, "collapsed_slice_dims"},
  {OP_GATHER, "start_index_map"},      {OP_GATHER, "index_vector_dim"},
  {OP_GATHER, "slice_sizes"},          {OP_SCATTER, "update_window_dims"},
  {OP_SCATTER, "inserted_window_dims"}, {OP_SCATTER, "scatter_dims_to_operand_dims"},
  {OP_SCATTER, "index_vector_dim"},    {OP_SCATTER, "to_apply"},
  {OP_COMPARE, "direction"},           {OP_FUSION, "kind"},
  {OP_FUSION, "calls"},                {OP_CUSTOM_CALL, "custom_call_target"},
  {OP_RNG_BIT_GENERATOR, "algorithm"}, {OP_REDUCE_PRECISION, "exponent_bits"},
  {OP_REDUCE_PRECISION, "mantissa_bits"}, {OP_BATCH_NORM_GRAD, "epsilon"},
  {OP_BATCH_NORM_GRAD, "feature_index"}, {OP_BATCH_NORM_INFERENCE, "epsilon"},
  {OP_BATCH_NORM_INFERENCE, "feature_index"}, {OP_BATCH_NORM_TRAINING, "epsilon"},
  {OP_BATCH_NORM_TRAINING, "feature_index"}, {OP_WHILE, "condition"},
  {OP_WHILE, "body"},                  {OP_CALL, "to_apply"},
  {OP_ALL_REDUCE, "to_apply"},         {OP_REDUCE_SCATTER, "to_apply"},
  {OP_REDUCE_SCATTER, "dimensions"},   {OP_ALL_GATHER, "dimensions"},
  {OP_COLLECTIVE_PERMUTE, "source_target_pairs"},
  {OP_FFT, "fft_type"},                {OP_FFT, "fft_length"},
  {OP_COLLECTIVE_PERMUTE_START, "source_target_pairs"},
  {OP_ALL_REDUCE_START, "to_apply"},   {OP_ALL_GATHER_START, "dimensions"},
  {OP_COLLECTIVE_REDUCE, "to_apply"},  {OP_ASYNC_START, "calls"},
  {OP_SCAN, "dimensions"},             {OP_SCAN, "to_apply"},
  {OP_SCAN, "num_carries"},            {OP_TOPK, "k"},
  {OP_RNG, "distribution"},            {OP_RNG_GET_AND_UPDATE_STATE, "delta"},
  {OP_GET_DIMENSION_SIZE, "dimensions"}, {OP_SET_DIMENSION_SIZE, "dimensions"},
};

static bool rule_applies(const AttrRule *rule, Opcode op) {
  if (!rule->ops) return true;
  for (const Opcode *o = rule->ops; *o != OP_COUNT; o++)
    if (*o == op) return true;
  return false;
}

/* Finds the row for name on op; -1 with an error naming the attribute. */
static int find_rule(Parser *p, const Token *name, Opcode op) {
  bool known = false;
  for (int r = 0; r < ATTR_RULE_COUNT; r++) {
    if (!lex_token_is(name, attr_rules[r].name)) continue;
    known = true;
    if (rule_applies(&attr_rules[r], op)) return r;
  }
  int len = name->len > 64 ? 64 : name->len;
  if (known)
    parse_error(p, name, "attribute '%.*s' does not apply to '%s'", len, name->text, opcode_name(op));
  else
    parse_error(p, name, "unknown attribute '%.*s' on '%s'", len, name->text, opcode_name(op));
  return -1;
}

static bool seen_name(const bool seen[], const char *name) {
  for (int r = 0; r < ATTR_RULE_COUNT; r++)
    if (seen[r] && strcmp(attr_rules[r].name, name) == 0) return true;
  return false;
}

static bool check_required(Parser *p, const Instruction *inst, const bool seen[], const Token *at) {
  for (size_t i = 0; i < sizeof required_attrs / sizeof required_attrs[0]; i++) {
    if (required_attrs[i].op == inst->opcode && !seen_name(seen, required_attrs[i].name))
      return parse_error(p, at, "'%s' needs the attribute %s=", opcode_name(inst->opcode),
                         required_attrs[i].name);
  }
  if (inst->opcode == OP_CONDITIONAL) {
    bool list = seen_name(seen, "branch_computations");
    bool pair = seen_name(seen, "true_computation") && seen_name(seen, "false_computation");
    bool half = seen_name(seen, "true_computation") || seen_name(seen, "false_computation");
    if (list == half || (half && !pair))
      return parse_error(p, at, "'conditional' needs branch_computations= or both "
                                "true_computation= and false_computation=");
  }
  return true;
}

/* Whether a "," at the cursor starts an attribute. Inside an instruction
 * nested as an operand, a "," may instead separate the enclosing
 * instruction's operands: add(negate(x), dimensions=..., y) has an
 * attribute, add(negate(x), y) does not; only "name =" tells them apart. */
static bool at_attribute(Parser *p) {
  if (!lex_token_is(lex_peek(p), ",")) return false;
  return p->nesting == 0 || (lex_peek_at(p, 1)->kind == TK_WORD && lex_token_is(lex_peek_at(p, 2), "="));
}

/* attributes = ("," name "=" value)* */
bool parse_attributes(Parser *p, Instruction *inst, AttrNotes *notes) {
  bool seen[ATTR_RULE_COUNT] = {false};
  if (inst->opcode == OP_TOPK) scalar_attrs(p, inst); /* largest= may be left out */
  notes->order.kind = TK_EOF;
  while (at_attribute(p)) {
    lex_next(p);
    Token *name = lex_peek(p);
    if (name->kind != TK_WORD) return parse_error(p, name, "expected an attribute name");
    lex_next(p);
    if (!lex_expect(p, "=")) return false;
    /* axle runs async ops in place: their thread and group do not matter,
     * and X-update/X-done repeat what X-start said of X. */
    bool async_name = lex_token_is(name, "async_execution_thread") || lex_token_is(name, "async_group_id");
    /* The thread is compared between an async op and its start (parse.c). */
    if (lex_token_is(name, "async_execution_thread")) notes->async_thread = *lex_peek(p);
    if ((notes->async_sugar && async_name) || notes->async_sugar > ASYNC_SUGAR_START) {
      if (!lex_skip_value(p)) return false;
      continue;
    }
    int r = find_rule(p, name, inst->opcode);
    if (r < 0) return false;
    if (seen[r]) return parse_error(p, name, "attribute '%s' given twice", attr_rules[r].name);
    seen[r] = true;
    notes->attribute = *name;
    if (!attr_rules[r].read(p, inst, notes)) return false;
  }
  Token at = {TK_WORD, inst->name, 0, inst->loc, false};
  return check_required(p, inst, seen, &at) && resolve_compare_order(p, inst, notes);
}
