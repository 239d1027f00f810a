/* The HLO printer: a module as text in the modern style XLA prints today,
 *
 *   HloModule name, entry_computation_layout={(f32[2]{0})->f32[2]{0}}
 *
 *   add {
 *     x = f32[] parameter(0)
 *     ...
 *   }
 *
 *   ENTRY main {
 *     p = f32[2]{0} parameter(0)
 *     ROOT r = f32[] reduce(p, zero), dimensions={0}, to_apply=add
 *   }
 *
 * Every attribute an opcode uses is printed in XLA's spelling, defaults left
 * out as XLA leaves them out, so that parse(print(m)) is the same module.
 * Floats are printed with the fewest digits that read back to the same bits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* ---- names ---- */

static bool is_name_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
         ch == '.' || ch == '-';
}

/* Names are [A-Za-z_][A-Za-z0-9_.-]*; anything else (possible from the C
 * builder) is replaced by '_' the same way everywhere, so references stay
 * consistent. */
static void print_name(StrBuf *sb, const char *name) {
  if (!name || !*name) {
    strbuf_printf(sb, "_");
    return;
  }
  char first = name[0];
  bool first_ok = (first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_';
  bool all_ok = first_ok;
  for (const char *p = name; all_ok && *p; p++) all_ok = is_name_char(*p);
  if (all_ok) {
    strbuf_printf(sb, "%s", name);
    return;
  }
  if (!first_ok) strbuf_printf(sb, "_");
  for (const char *p = name; *p; p++) strbuf_printf(sb, "%c", is_name_char(*p) ? *p : '_');
}

/* ---- numbers ---- */

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static uint64_t f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

/* inf, -inf, nan, -nan as XLA spells them; false for finite values. */
static bool print_special_float(StrBuf *sb, double v) {
  if (isnan(v)) {
    strbuf_printf(sb, "%s", signbit(v) ? "-nan" : "nan");
    return true;
  }
  if (isinf(v)) {
    strbuf_printf(sb, "%s", v < 0 ? "-inf" : "inf");
    return true;
  }
  return false;
}

/* Whether text reads back to bits, for the element type, by both strtof and
 * strtod-then-narrow (a parser may use either; axle's rounds the double
 * once, double_to_half). */
static bool reads_back(const char *text, ElementType t, uint64_t bits) {
  double d = strtod(text, NULL);
  float f = strtof(text, NULL);
  switch (t) {
  case TYPE_F64: return f64_bits(d) == bits;
  case TYPE_F32: return f32_bits(f) == bits && f32_bits((float)d) == bits;
  case TYPE_F16: return float_to_half(f) == bits && double_to_half(d) == bits;
  default: return float_to_bf16(f) == bits && double_to_bf16(d) == bits;
  }
}

/* The shortest %g form that reads back to the same bits. More digits never
 * read back worse, so the digit count is found by bisection; the longest
 * form (9 digits for f32 and narrower, 17 for f64) always reads back. */
static void print_float(StrBuf *sb, double value, ElementType t, uint64_t bits) {
  /* A NaN with other than the default quiet payload prints its payload,
   * nan(0x7f), as XLA does; the parser reads it back bit for bit. */
  int mantissa = t == TYPE_F64 ? 52 : t == TYPE_F32 ? 23 : t == TYPE_F16 ? 10 : 7;
  uint64_t payload = bits & ((1ull << mantissa) - 1);
  if (isnan(value) && payload != 1ull << (mantissa - 1)) {
    int width = t == TYPE_F64 ? 64 : t == TYPE_F32 ? 32 : 16;
    strbuf_printf(sb, "%snan(0x%llx)", (bits >> (width - 1)) & 1 ? "-" : "", (unsigned long long)payload);
    return;
  }
  if (print_special_float(sb, value)) return;
  char text[320]; /* %g of a double never needs more; the compiler cannot tell */
  int lo = 1, hi = t == TYPE_F64 ? 17 : 9;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    snprintf(text, sizeof text, "%.*g", mid, value);
    if (reads_back(text, t, bits)) hi = mid;
    else lo = mid + 1;
  }
  snprintf(text, sizeof text, "%.*g", lo, value);
  strbuf_printf(sb, "%s", text);
}

static void print_element(StrBuf *sb, const Literal *lit, int64_t i) {
  const void *p = (const char *)lit->data + i * type_byte_size(lit->shape.type);
  uint16_t h;
  float f;
  double d;
  switch (lit->shape.type) {
  case TYPE_PRED: strbuf_printf(sb, "%s", *(const uint8_t *)p ? "true" : "false"); break;
  case TYPE_F16:
    memcpy(&h, p, 2);
    print_float(sb, half_to_float(h), TYPE_F16, h);
    break;
  case TYPE_BF16:
    memcpy(&h, p, 2);
    print_float(sb, bf16_to_float(h), TYPE_BF16, h);
    break;
  case TYPE_F32:
    memcpy(&f, p, 4);
    print_float(sb, f, TYPE_F32, f32_bits(f));
    break;
  case TYPE_F64:
    memcpy(&d, p, 8);
    print_float(sb, d, TYPE_F64, f64_bits(d));
    break;
  /* A complex element is printed as XLA does: (real, imaginary). */
  case TYPE_C64: {
    float parts[2];
    memcpy(parts, p, 8);
    strbuf_printf(sb, "(");
    print_float(sb, parts[0], TYPE_F32, f32_bits(parts[0]));
    strbuf_printf(sb, ", ");
    print_float(sb, parts[1], TYPE_F32, f32_bits(parts[1]));
    strbuf_printf(sb, ")");
    break;
  }
  case TYPE_C128: {
    double parts[2];
    memcpy(parts, p, 16);
    strbuf_printf(sb, "(");
    print_float(sb, parts[0], TYPE_F64, f64_bits(parts[0]));
    strbuf_printf(sb, ", ");
    print_float(sb, parts[1], TYPE_F64, f64_bits(parts[1]));
    strbuf_printf(sb, ")");
    break;
  }
  case TYPE_U64: strbuf_printf(sb, "%llu", (unsigned long long)literal_get_u64(lit, i)); break;
  default:
    if (type_is_minifloat(lit->shape.type)) {
      /* Every minifloat value is a float, so its shortest float form
       * reads back exactly: 448 rather than the shorter 4.5e+02. */
      f = minifloat_to_float(lit->shape.type, *(const uint8_t *)p);
      print_float(sb, f, TYPE_F32, f32_bits(f));
    } else {
      strbuf_printf(sb, "%lld", (long long)literal_get_s64(lit, i));
    }
    break;
  }
}

/* ---- literals ---- */

/* One level of nested braces: {1, 2} innermost, { {..}, {..} } above. */
static void print_array_level(StrBuf *sb, const Literal *lit, int dim, int64_t *next) {
  int64_t n = lit->shape.dims[dim];
  if (n == 0) {
    strbuf_printf(sb, "{}");
    return;
  }
  bool inner = dim == lit->shape.rank - 1;
  strbuf_printf(sb, inner ? "{" : "{ ");
  for (int64_t i = 0; i < n; i++) {
    if (i) strbuf_printf(sb, ", ");
    if (inner)
      print_element(sb, lit, (*next)++);
    else
      print_array_level(sb, lit, dim + 1, next);
  }
  strbuf_printf(sb, inner ? "}" : " }");
}

void print_literal(StrBuf *sb, const Literal *lit) {
  if (shape_is_tuple(&lit->shape)) {
    strbuf_printf(sb, "(");
    for (int i = 0; i < lit->shape.tuple_count; i++) {
      if (i) strbuf_printf(sb, ", ");
      print_literal(sb, lit->elements[i]);
    }
    strbuf_printf(sb, ")");
    return;
  }
  if (lit->shape.type == TYPE_TOKEN) {
    strbuf_printf(sb, "token");
    return;
  }
  if (lit->shape.rank == 0) {
    print_element(sb, lit, 0);
    return;
  }
  int64_t next = 0;
  print_array_level(sb, lit, 0, &next);
}

/* ---- attributes ---- */

static void print_int_list(StrBuf *sb, const IntList *list) {
  strbuf_printf(sb, "{");
  for (int i = 0; i < list->count; i++) strbuf_printf(sb, "%s%lld", i ? "," : "", (long long)list->values[i]);
  strbuf_printf(sb, "}");
}

static void print_list_attr(StrBuf *sb, const char *name, const IntList *list) {
  strbuf_printf(sb, ", %s=", name);
  print_int_list(sb, list);
}

static void print_list_attr_if_any(StrBuf *sb, const char *name, const IntList *list) {
  if (list->count > 0) print_list_attr(sb, name, list);
}

/* slice={[0:2], [1:5:2]}: the stride only when it is not 1. */
static void print_slice(StrBuf *sb, const SliceDims *slice) {
  strbuf_printf(sb, ", slice={");
  for (int i = 0; i < slice->starts.count && i < slice->limits.count; i++) {
    strbuf_printf(sb, "%s[%lld:%lld", i ? ", " : "", (long long)slice->starts.values[i],
                  (long long)slice->limits.values[i]);
    if (i < slice->strides.count && slice->strides.values[i] != 1)
      strbuf_printf(sb, ":%lld", (long long)slice->strides.values[i]);
    strbuf_printf(sb, "]");
  }
  strbuf_printf(sb, "}");
}

/* padding=lo_hi per dim, 'x'-separated; lo_hi_interior when any interior is not 0. */
static void print_padding(StrBuf *sb, const PadDims *p) {
  bool interior = false;
  for (int i = 0; i < p->rank; i++) interior |= p->interior[i] != 0;
  strbuf_printf(sb, ", padding=");
  for (int i = 0; i < p->rank; i++) {
    strbuf_printf(sb, "%s%lld_%lld", i ? "x" : "", (long long)p->lo[i], (long long)p->hi[i]);
    if (interior) strbuf_printf(sb, "_%lld", (long long)p->interior[i]);
  }
  if (p->rank == 0) strbuf_printf(sb, "{}");
}

typedef enum WindowField {
  WF_SIZE,
  WF_STRIDE,
  WF_PAD,
  WF_LHS_DILATE,
  WF_RHS_DILATE,
  WF_REVERSAL
} WindowField;

static void print_window_field(StrBuf *sb, const Window *w, WindowField field, const char *name) {
  bool needed = field == WF_SIZE;
  for (int i = 0; i < w->rank; i++) {
    const WindowDim *d = &w->dims[i];
    needed |= (field == WF_STRIDE && d->stride != 1) || (field == WF_PAD && (d->pad_lo || d->pad_hi)) ||
              (field == WF_LHS_DILATE && d->lhs_dilate != 1) ||
              (field == WF_RHS_DILATE && d->rhs_dilate != 1) || (field == WF_REVERSAL && d->reversal);
  }
  if (!needed) return;
  strbuf_printf(sb, "%s%s=", field == WF_SIZE ? "" : " ", name);
  for (int i = 0; i < w->rank; i++) {
    const WindowDim *d = &w->dims[i];
    const char *sep = i ? "x" : "";
    switch (field) {
    case WF_SIZE: strbuf_printf(sb, "%s%lld", sep, (long long)d->size); break;
    case WF_STRIDE: strbuf_printf(sb, "%s%lld", sep, (long long)d->stride); break;
    case WF_PAD: strbuf_printf(sb, "%s%lld_%lld", sep, (long long)d->pad_lo, (long long)d->pad_hi); break;
    case WF_LHS_DILATE: strbuf_printf(sb, "%s%lld", sep, (long long)d->lhs_dilate); break;
    case WF_RHS_DILATE: strbuf_printf(sb, "%s%lld", sep, (long long)d->rhs_dilate); break;
    case WF_REVERSAL: strbuf_printf(sb, "%s%d", sep, d->reversal ? 1 : 0); break;
    }
  }
}

/* window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..};
 * only size always, the rest when not all default (window_util::ToString). */
static void print_window(StrBuf *sb, const Window *w) {
  strbuf_printf(sb, ", window={");
  if (w->rank > 0) {
    print_window_field(sb, w, WF_SIZE, "size");
    print_window_field(sb, w, WF_STRIDE, "stride");
    print_window_field(sb, w, WF_PAD, "pad");
    print_window_field(sb, w, WF_LHS_DILATE, "lhs_dilate");
    print_window_field(sb, w, WF_RHS_DILATE, "rhs_dilate");
    print_window_field(sb, w, WF_REVERSAL, "rhs_reversal");
  }
  strbuf_printf(sb, "}");
}

/* One operand's labels: position p gets the letter of the role dim p plays. */
static void print_labels(StrBuf *sb, int rank, int64_t first, char first_letter, int64_t second,
                         char second_letter, const int64_t *spatial) {
  char text[AXLE_MAX_RANK + 1];
  memset(text, '?', sizeof text);
  if (first >= 0 && first < rank) text[first] = first_letter;
  if (second >= 0 && second < rank) text[second] = second_letter;
  for (int i = 0; i < rank - 2; i++)
    if (spatial[i] >= 0 && spatial[i] < rank) text[spatial[i]] = (char)('0' + i);
  text[rank] = 0;
  strbuf_printf(sb, "%s", text);
}

/* dim_labels=b01f_01io->b01f */
static void print_dim_labels(StrBuf *sb, const ConvDims *c) {
  int rank = c->spatial_count + 2;
  if (rank > AXLE_MAX_RANK) rank = AXLE_MAX_RANK;
  if (rank < 2) rank = 2;
  strbuf_printf(sb, ", dim_labels=");
  print_labels(sb, rank, c->input_batch, 'b', c->input_feature, 'f', c->input_spatial);
  strbuf_printf(sb, "_");
  print_labels(sb, rank, c->kernel_input_feature, 'i', c->kernel_output_feature, 'o', c->kernel_spatial);
  strbuf_printf(sb, "->");
  print_labels(sb, rank, c->output_batch, 'b', c->output_feature, 'f', c->output_spatial);
}

static void print_convolution_attrs(StrBuf *sb, const Attrs *a) {
  if (a->window) print_window(sb, a->window);
  print_dim_labels(sb, attrs_conv(a));
  if (a->feature_group_count > 1)
    strbuf_printf(sb, ", feature_group_count=%lld", (long long)a->feature_group_count);
  if (a->batch_group_count > 1)
    strbuf_printf(sb, ", batch_group_count=%lld", (long long)a->batch_group_count);
}

static void print_dot_attrs(StrBuf *sb, const DotDims *d) {
  print_list_attr_if_any(sb, "lhs_batch_dims", &d->lhs_batch);
  print_list_attr_if_any(sb, "lhs_contracting_dims", &d->lhs_contracting);
  print_list_attr_if_any(sb, "rhs_batch_dims", &d->rhs_batch);
  print_list_attr_if_any(sb, "rhs_contracting_dims", &d->rhs_contracting);
  print_list_attr_if_any(sb, "lhs_ragged_dims", &d->lhs_ragged);
  print_list_attr_if_any(sb, "rhs_group_dims", &d->rhs_group);
  if (d->algorithm != DOT_ALG_UNSET && (unsigned)d->algorithm < DOT_ALG_COUNT)
    strbuf_printf(sb, ", algorithm=%s", dot_algorithm_names[d->algorithm]);
}

static void print_gather_attrs(StrBuf *sb, const GatherDims *g) {
  print_list_attr(sb, "offset_dims", &g->offset_dims);
  print_list_attr(sb, "collapsed_slice_dims", &g->collapsed_slice_dims);
  print_list_attr(sb, "start_index_map", &g->start_index_map);
  print_list_attr_if_any(sb, "operand_batching_dims", &g->operand_batching_dims);
  print_list_attr_if_any(sb, "start_indices_batching_dims", &g->start_indices_batching_dims);
  strbuf_printf(sb, ", index_vector_dim=%lld", (long long)g->index_vector_dim);
  print_list_attr(sb, "slice_sizes", &g->slice_sizes);
  if (g->indices_are_sorted) strbuf_printf(sb, ", indices_are_sorted=true");
}

static void print_scatter_attrs(StrBuf *sb, const ScatterDims *s) {
  print_list_attr(sb, "update_window_dims", &s->update_window_dims);
  print_list_attr(sb, "inserted_window_dims", &s->inserted_window_dims);
  print_list_attr(sb, "scatter_dims_to_operand_dims", &s->scatter_dims_to_operand_dims);
  print_list_attr_if_any(sb, "input_batching_dims", &s->input_batching_dims);
  print_list_attr_if_any(sb, "scatter_indices_batching_dims", &s->scatter_indices_batching_dims);
  strbuf_printf(sb, ", index_vector_dim=%lld", (long long)s->index_vector_dim);
  if (s->indices_are_sorted) strbuf_printf(sb, ", indices_are_sorted=true");
  if (s->unique_indices) strbuf_printf(sb, ", unique_indices=true");
}

static void print_compare_attrs(StrBuf *sb, const Attrs *a) {
  static const char *const directions[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  static const char *const types[] = {"", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  strbuf_printf(sb, ", direction=%s", (unsigned)a->direction <= CMP_GE ? directions[a->direction] : "?");
  if (a->compare_type != CMP_TYPE_DEFAULT && (unsigned)a->compare_type <= CMP_TYPE_UNSIGNED)
    strbuf_printf(sb, ", type=%s", types[a->compare_type]);
}

/* custom_call_target="...". The parser keeps a string's text as written,
 * escapes included, so it is printed as it is; only a bare '"' (possible
 * from the C builder) gets a backslash so that the text stays readable. */
static void print_quoted(StrBuf *sb, const char *s) {
  strbuf_printf(sb, "\"");
  bool escaped = false;
  for (const char *p = s ? s : ""; *p; p++) {
    if (*p == '"' && !escaped) strbuf_printf(sb, "\\");
    strbuf_printf(sb, "%c", *p);
    escaped = *p == '\\' && !escaped;
  }
  if (escaped) strbuf_printf(sb, "\\");
  strbuf_printf(sb, "\"");
}

static void print_double_attr(StrBuf *sb, const char *name, double v) {
  strbuf_printf(sb, ", %s=", name);
  print_float(sb, v, TYPE_F64, f64_bits(v));
}

static void print_called(StrBuf *sb, const char *attr, const Instruction *inst, int i) {
  strbuf_printf(sb, ", %s=", attr);
  print_name(sb, i < inst->called_count && inst->called[i] ? inst->called[i]->name : "?");
}

/* name={a, b, c}: every called computation. */
static void print_called_list(StrBuf *sb, const char *attr, const Instruction *inst) {
  strbuf_printf(sb, ", %s={", attr);
  for (int i = 0; i < inst->called_count; i++) {
    if (i) strbuf_printf(sb, ", ");
    print_name(sb, inst->called[i] ? inst->called[i]->name : "?");
  }
  strbuf_printf(sb, "}");
}

/* fusion, call, while and conditional: what they call. A conditional's
 * branches are true_computation/false_computation for a pred selector,
 * branch_computations={..} for an index. */
static void print_control_flow_attrs(StrBuf *sb, const Instruction *inst) {
  static const char *const fusion_kinds[] = {"kLoop", "kInput", "kOutput", "kCustom"};
  FusionKind kind = inst->attrs.fusion_kind;
  bool pred = inst->operand_count > 0 && inst->operands[0] && inst->operands[0]->shape.type == TYPE_PRED;
  switch (inst->opcode) {
  case OP_FUSION:
    strbuf_printf(sb, ", kind=%s", (unsigned)kind <= FUSION_CUSTOM ? fusion_kinds[kind] : "?");
    print_called(sb, "calls", inst, 0);
    break;
  case OP_CALL: print_called(sb, "to_apply", inst, 0); break;
  case OP_WHILE:
    print_called(sb, "condition", inst, 0);
    print_called(sb, "body", inst, 1);
    break;
  default:
    if (pred && inst->called_count == 2) {
      print_called(sb, "true_computation", inst, 0);
      print_called(sb, "false_computation", inst, 1);
    } else {
      print_called_list(sb, "branch_computations", inst);
    }
  }
}

static void print_collective_attrs(StrBuf *sb, const Instruction *inst) {
  const Attrs *a = &inst->attrs;
  Opcode op = inst->opcode;
  if (a->channel_id) strbuf_printf(sb, ", channel_id=%lld", (long long)a->channel_id);
  const ReplicaGroups *groups = attrs_replica_groups(a);
  if (groups->use_global_device_ids) strbuf_printf(sb, ", use_global_device_ids=true");
  if (groups->ids.count > 0) {
    strbuf_printf(sb, ", replica_groups={");
    /* group g holds the next sizes[g] ids (group_size each when uniform) */
    for (int i = 0, g = 0; i < groups->ids.count; g++) {
      int64_t size = groups->sizes.count > g ? groups->sizes.values[g] : groups->group_size;
      strbuf_printf(sb, "%s{", g ? "," : "");
      for (int64_t k = 0; k < size && i < groups->ids.count; k++, i++)
        strbuf_printf(sb, "%s%lld", k ? "," : "", (long long)groups->ids.values[i]);
      strbuf_printf(sb, "}");
    }
    strbuf_printf(sb, "}");
  }
  if (op == OP_ALL_GATHER || op == OP_REDUCE_SCATTER || op == OP_ALL_GATHER_START ||
      (op == OP_ALL_TO_ALL && a->dimensions.count > 0))
    print_list_attr(sb, "dimensions", &a->dimensions);
  if (op == OP_COLLECTIVE_PERMUTE || op == OP_COLLECTIVE_PERMUTE_START) {
    strbuf_printf(sb, ", source_target_pairs={");
    for (int i = 0; i + 1 < a->source_target_pairs.count; i += 2)
      strbuf_printf(sb, "%s{%lld,%lld}", i ? "," : "", (long long)a->source_target_pairs.values[i],
                    (long long)a->source_target_pairs.values[i + 1]);
    strbuf_printf(sb, "}");
  }
  if (op == OP_ALL_REDUCE || op == OP_REDUCE_SCATTER || op == OP_ALL_REDUCE_START ||
      op == OP_COLLECTIVE_REDUCE)
    print_called(sb, "to_apply", inst, 0);
}

/* topk, scan, rng and rng-get-and-update-state: their scalar attributes. */
static void print_scalar_attrs(StrBuf *sb, const Instruction *inst) {
  static const char *const distributions[] = {"rng_uniform", "rng_normal"};
  const ScalarAttrs *s = attrs_scalars(&inst->attrs);
  switch (inst->opcode) {
  case OP_TOPK:
    strbuf_printf(sb, ", k=%lld, largest=%s", (long long)s->k, s->largest ? "true" : "false");
    break;
  case OP_SCAN:
    print_list_attr(sb, "dimensions", &inst->attrs.dimensions);
    strbuf_printf(sb, ", num_carries=%lld", (long long)s->num_carries);
    if (s->is_reverse) strbuf_printf(sb, ", is_reverse=true");
    print_called(sb, "to_apply", inst, 0);
    break;
  case OP_RNG:
    strbuf_printf(sb, ", distribution=%s",
                  (unsigned)s->distribution <= RNG_NORMAL ? distributions[s->distribution] : "?");
    break;
  default: strbuf_printf(sb, ", delta=%lld", (long long)s->delta); break;
  }
}

static void print_linalg_attrs(StrBuf *sb, const Instruction *inst) {
  static const char *const transpose_names[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  const Attrs *a = &inst->attrs;
  if (inst->opcode == OP_CHOLESKY) {
    if (a->lower) strbuf_printf(sb, ", lower=true");
    return;
  }
  if (a->left_side) strbuf_printf(sb, ", left_side=true");
  if (a->lower) strbuf_printf(sb, ", lower=true");
  if (a->unit_diagonal) strbuf_printf(sb, ", unit_diagonal=true");
  if ((unsigned)a->transpose_a <= TRANSPOSE_A_ADJOINT)
    strbuf_printf(sb, ", transpose_a=%s", transpose_names[a->transpose_a]);
}

/* The ops that exchange values (collectives, their asynchronous starts,
 * async wrappers, send and recv): their attributes. */
static void print_exchange_attrs(StrBuf *sb, const Instruction *inst) {
  switch (inst->opcode) {
  case OP_ALL_REDUCE:
  case OP_ALL_GATHER:
  case OP_REDUCE_SCATTER:
  case OP_COLLECTIVE_PERMUTE:
  case OP_ALL_TO_ALL:
  case OP_RAGGED_ALL_TO_ALL:
  case OP_COLLECTIVE_BROADCAST:
  case OP_COLLECTIVE_REDUCE:
  case OP_ALL_REDUCE_START:
  case OP_ALL_GATHER_START:
  case OP_COLLECTIVE_PERMUTE_START: print_collective_attrs(sb, inst); break;
  case OP_SEND:
  case OP_SEND_DONE:
  case OP_RECV:
  case OP_RECV_DONE:
    if (inst->attrs.channel_id) strbuf_printf(sb, ", channel_id=%lld", (long long)inst->attrs.channel_id);
    break;
  case OP_ASYNC_START:
  case OP_ASYNC_UPDATE:
  case OP_ASYNC_DONE:
    if (inst->called_count > 0) print_called(sb, "calls", inst, 0);
    break;
  default: break;
  }
}

/* The attributes after the operand list, in XLA's order. */
static void print_attributes(StrBuf *sb, const Instruction *inst) {
  static const char *const rng_names[] = {"rng_default", "rng_three_fry", "rng_philox"};
  const Attrs *a = &inst->attrs;
  switch (inst->opcode) {
  case OP_BROADCAST:
  case OP_TRANSPOSE:
  case OP_REVERSE:
  case OP_CONCATENATE: print_list_attr(sb, "dimensions", &a->dimensions); break;
  case OP_REDUCE:
  case OP_MAP:
    print_list_attr(sb, "dimensions", &a->dimensions);
    print_called(sb, "to_apply", inst, 0);
    break;
  case OP_SORT:
    print_list_attr(sb, "dimensions", &a->dimensions);
    if (a->is_stable) strbuf_printf(sb, ", is_stable=true");
    print_called(sb, "to_apply", inst, 0);
    break;
  case OP_IOTA: strbuf_printf(sb, ", iota_dimension=%lld", (long long)a->iota_dimension); break;
  case OP_GET_TUPLE_ELEMENT: strbuf_printf(sb, ", index=%lld", (long long)a->tuple_index); break;
  case OP_SLICE: print_slice(sb, attrs_slice(a)); break;
  case OP_DYNAMIC_SLICE: print_list_attr(sb, "dynamic_slice_sizes", &a->dynamic_slice_sizes); break;
  case OP_PAD: print_padding(sb, attrs_padding(a)); break;
  case OP_REDUCE_WINDOW:
    print_window(sb, attrs_window(a));
    print_called(sb, "to_apply", inst, 0);
    break;
  case OP_SELECT_AND_SCATTER:
    print_window(sb, attrs_window(a));
    print_called(sb, "select", inst, 0);
    print_called(sb, "scatter", inst, 1);
    break;
  case OP_CONVOLUTION: print_convolution_attrs(sb, a); break;
  case OP_DOT:
  case OP_SCALED_DOT:
  case OP_RAGGED_DOT: print_dot_attrs(sb, attrs_dot(a)); break;
  case OP_TOPK:
  case OP_SCAN:
  case OP_RNG:
  case OP_RNG_GET_AND_UPDATE_STATE: print_scalar_attrs(sb, inst); break;
  case OP_GET_DIMENSION_SIZE:
  case OP_SET_DIMENSION_SIZE: print_list_attr(sb, "dimensions", &a->dimensions); break;
  case OP_GATHER: print_gather_attrs(sb, attrs_gather(a)); break;
  case OP_SCATTER:
    print_scatter_attrs(sb, attrs_scatter(a));
    print_called(sb, "to_apply", inst, 0);
    break;
  case OP_COMPARE: print_compare_attrs(sb, a); break;
  case OP_FFT: {
    static const char *const fft_names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    const FftDims *fft = attrs_fft(a);
    strbuf_printf(sb, ", fft_type=%s", (unsigned)fft->type <= FFT_TYPE_IRFFT ? fft_names[fft->type] : "?");
    print_list_attr(sb, "fft_length", &fft->length);
    break;
  }
  case OP_FUSION:
  case OP_CALL:
  case OP_WHILE:
  case OP_CONDITIONAL: print_control_flow_attrs(sb, inst); break;
  case OP_CUSTOM_CALL:
    strbuf_printf(sb, ", custom_call_target=");
    print_quoted(sb, a->custom_call_target);
    if (inst->called_count > 0) print_called_list(sb, "called_computations", inst);
    /* An attribute dictionary is printed bare, as XLA prints it. */
    if (a->backend_config && a->backend_config[0] == '{') strbuf_printf(sb, ", backend_config=%s", a->backend_config);
    else if (a->backend_config) {
      strbuf_printf(sb, ", backend_config=");
      print_quoted(sb, a->backend_config);
    }
    break;
  case OP_RNG_BIT_GENERATOR:
    strbuf_printf(sb, ", algorithm=%s",
                  (unsigned)a->rng_algorithm <= RNG_PHILOX ? rng_names[a->rng_algorithm] : "?");
    break;
  case OP_REDUCE_PRECISION:
    strbuf_printf(sb, ", exponent_bits=%lld, mantissa_bits=%lld", (long long)a->exponent_bits,
                  (long long)a->mantissa_bits);
    break;
  case OP_BATCH_NORM_TRAINING:
  case OP_BATCH_NORM_INFERENCE:
  case OP_BATCH_NORM_GRAD:
    print_double_attr(sb, "epsilon", a->epsilon);
    strbuf_printf(sb, ", feature_index=%lld", (long long)a->feature_index);
    break;
  case OP_CHOLESKY:
  case OP_TRIANGULAR_SOLVE: print_linalg_attrs(sb, inst); break;
  default: print_exchange_attrs(sb, inst); break;
  }
}

/* ---- instructions, computations, the module ---- */

/* metadata={op_name="..." source_file="..." source_line=N}: the fields axle keeps. */
static void print_metadata(StrBuf *sb, const Metadata *md) {
  if (!md) return;
  strbuf_printf(sb, ", metadata={");
  const char *gap = "";
  if (md->op_name) {
    strbuf_printf(sb, "op_name=");
    print_quoted(sb, md->op_name);
    gap = " ";
  }
  if (md->source_file) {
    strbuf_printf(sb, "%ssource_file=", gap);
    print_quoted(sb, md->source_file);
    gap = " ";
  }
  if (md->source_line) strbuf_printf(sb, "%ssource_line=%lld", gap, (long long)md->source_line);
  strbuf_printf(sb, "}");
}

/* "name = shape opcode(operands), attributes"; the computation printer
 * adds "ROOT " before its root, as XLA does. */
void print_instruction(StrBuf *sb, const Instruction *inst) {
  print_name(sb, inst->name);
  strbuf_printf(sb, " = ");
  shape_print(sb, &inst->shape, true);
  strbuf_printf(sb, " %s(", opcode_name(inst->opcode));
  if (inst->opcode == OP_PARAMETER) {
    strbuf_printf(sb, "%lld", (long long)inst->attrs.parameter_number);
  } else if (inst->opcode == OP_CONSTANT) {
    if (inst->attrs.literal) print_literal(sb, inst->attrs.literal);
  } else {
    for (int i = 0; i < inst->operand_count; i++) {
      if (i) strbuf_printf(sb, ", ");
      print_name(sb, inst->operands[i] ? inst->operands[i]->name : "?");
    }
  }
  strbuf_printf(sb, ")");
  print_attributes(sb, inst);
  print_metadata(sb, inst->metadata);
}

static void print_computation(StrBuf *sb, const Computation *c) {
  if (c->is_entry) strbuf_printf(sb, "ENTRY ");
  print_name(sb, c->name);
  strbuf_printf(sb, " {\n");
  for (int i = 0; i < c->instruction_count; i++) {
    strbuf_printf(sb, c->instructions[i] == c->root ? "  ROOT " : "  ");
    print_instruction(sb, c->instructions[i]);
    strbuf_printf(sb, "\n");
  }
  strbuf_printf(sb, "}\n");
}

/* entry_computation_layout={(param shapes)->root shape}, with layouts. */
static void print_entry_layout(StrBuf *sb, const Computation *entry) {
  strbuf_printf(sb, ", entry_computation_layout={(");
  for (int i = 0; i < entry->parameter_count; i++) {
    if (i) strbuf_printf(sb, ", ");
    if (entry->parameters[i]) shape_print(sb, &entry->parameters[i]->shape, true);
  }
  strbuf_printf(sb, ")->");
  if (entry->root) shape_print(sb, &entry->root->shape, true);
  strbuf_printf(sb, "}");
}

/* input_output_alias={ {0}: (1, {}, may-alias), ... } */
static void print_io_aliases(StrBuf *sb, const Module *m) {
  if (m->io_alias_count == 0) return;
  strbuf_printf(sb, ", input_output_alias={ ");
  for (int i = 0; i < m->io_alias_count; i++) {
    const IoAlias *a = &m->io_aliases[i];
    if (i) strbuf_printf(sb, ", ");
    print_int_list(sb, &a->output_index);
    strbuf_printf(sb, ": (%lld, ", (long long)a->parameter_number);
    print_int_list(sb, &a->parameter_index);
    strbuf_printf(sb, ", %s)", a->must_alias ? "must-alias" : "may-alias");
  }
  strbuf_printf(sb, " }");
}

void print_module(StrBuf *sb, const Module *m) {
  strbuf_printf(sb, "HloModule ");
  print_name(sb, m->name);
  if (m->entry) print_entry_layout(sb, m->entry);
  print_io_aliases(sb, m);
  if (m->replica_count > 0) strbuf_printf(sb, ", replica_count=%lld", (long long)m->replica_count);
  if (m->partition_count > 0) strbuf_printf(sb, ", num_partitions=%lld", (long long)m->partition_count);
  strbuf_printf(sb, "\n");
  for (int i = 0; i < m->computation_count; i++) {
    strbuf_printf(sb, "\n");
    print_computation(sb, m->computations[i]);
  }
}
