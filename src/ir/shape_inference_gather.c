/* Shape rules for gather and scatter: every constraint of the StableHLO
 * spec (openxla/stablehlo docs/spec.md, sections "gather" and "scatter")
 * is checked here, at verify time, and a failure names its rule, e.g.
 * "(StableHLO scatter (C9))". The evaluator and both backends index arrays
 * with these dimension lists and trust them, so a rule left unchecked here
 * is a wrong answer or a crash there; modules built in C reach these rules
 * too (builder_add_instruction infers every shape).
 *
 * The two ops share most rules under other names and numbers: gather's
 * offset_dims / collapsed_slice_dims / operand_batching_dims /
 * start_indices_batching_dims / start_index_map are scatter's
 * update_window_dims / inserted_window_dims / input_batching_dims /
 * scatter_indices_batching_dims / scatter_dims_to_operand_dims. IndexDims
 * names them once; shared_rules gives each shared rule its number in each
 * op's section. The result's shape (gather C22-C23, scatter C24-C25) is the
 * one inferred here, which verify.c compares with the declared one. */
#include <stdarg.h>
#include <stdio.h>

#include "shape_inference.h"

typedef enum { OP_KIND_GATHER, OP_KIND_SCATTER } IndexOpKind;

/* The dimension lists gather and scatter share, under one set of names. */
typedef struct IndexDims {
  IndexOpKind kind;
  const IntList *window;           /* offset_dims | update_window_dims */
  const IntList *collapsed;        /* collapsed_slice_dims | inserted_window_dims */
  const IntList *operand_batching; /* operand_batching_dims | input_batching_dims */
  const IntList *index_batching;   /* start_indices_batching_dims | scatter_indices_batching_dims */
  const IntList *index_map;        /* start_index_map | scatter_dims_to_operand_dims */
  int64_t index_vector_dim;
} IndexDims;

typedef enum {
  LIST_WINDOW, LIST_COLLAPSED, LIST_OPERAND_BATCHING, LIST_INDEX_BATCHING, LIST_INDEX_MAP, LIST_COUNT
} IndexList;

static const char *const list_names[LIST_COUNT][2] = {
    /*                        gather                          scatter */
    [LIST_WINDOW]           = {"offset_dims",                 "update_window_dims"},
    [LIST_COLLAPSED]        = {"collapsed_slice_dims",        "inserted_window_dims"},
    [LIST_OPERAND_BATCHING] = {"operand_batching_dims",       "input_batching_dims"},
    [LIST_INDEX_BATCHING]   = {"start_indices_batching_dims", "scatter_indices_batching_dims"},
    [LIST_INDEX_MAP]        = {"start_index_map",             "scatter_dims_to_operand_dims"},
};

/* The rules both ops have, and their numbers in each op's section. */
typedef enum {
  RULE_INDICES_INTEGER,        /* indices are integers */
  RULE_INDEX_VECTOR_DIM_RANGE, /* 0 <= index_vector_dim <= rank(indices) */
  RULE_COLLAPSED_SORTED,
  RULE_COLLAPSED_RANGE,        /* 0 <= collapsed < rank(operand) */
  RULE_BATCHING_SORTED,
  RULE_BATCHING_RANGE,         /* 0 <= operand_batching < rank(operand) */
  RULE_COLLAPSED_BATCHING_UNIQUE, /* is_unique(concatenate(collapsed, operand_batching)) */
  RULE_INDEX_BATCHING_UNIQUE,
  RULE_INDEX_BATCHING_RANGE,   /* 0 <= index_batching < rank(indices) */
  RULE_INDEX_VECTOR_DIM_NOT_BATCHING,
  RULE_BATCHING_COUNT,         /* size(operand_batching) == size(index_batching) */
  RULE_BATCHING_SIZES,         /* dim(operand, operand_batching...) = dim(indices, index_batching...) */
  RULE_INDEX_MAP_RANGE,        /* 0 <= index_map < rank(operand) */
  RULE_INDEX_MAP_BATCHING_UNIQUE, /* is_unique(concatenate(index_map, operand_batching)) */
  RULE_INDEX_MAP_SIZE,         /* size(index_map) = the index vector's size */
  RULE_COVER_OPERAND_RANK,     /* rank(operand) = size(window) + size(collapsed) + size(operand_batching) */
  RULE_WINDOW_SORTED,          /* is_unique(window) and is_sorted(window) */
  RULE_COUNT
} SharedRule;

static const char *const shared_rules[RULE_COUNT][2] = {
    /*                                     gather scatter */
    [RULE_INDICES_INTEGER]               = {"I2",  "I2"},
    [RULE_INDEX_VECTOR_DIM_RANGE]        = {"C2",  "C22"},
    [RULE_COLLAPSED_SORTED]              = {"C7",  "C10"},
    [RULE_COLLAPSED_RANGE]               = {"C8",  "C11"},
    [RULE_BATCHING_SORTED]               = {"C10", "C12"},
    [RULE_BATCHING_RANGE]                = {"C11", "C13"},
    [RULE_COLLAPSED_BATCHING_UNIQUE]     = {"C6",  "C9"},
    [RULE_INDEX_BATCHING_UNIQUE]         = {"C13", "C14"},
    [RULE_INDEX_BATCHING_RANGE]          = {"C14", "C15"},
    [RULE_INDEX_VECTOR_DIM_NOT_BATCHING] = {"C15", "C16"},
    [RULE_BATCHING_COUNT]                = {"C16", "C17"},
    [RULE_BATCHING_SIZES]                = {"C17", "C18"},
    [RULE_INDEX_MAP_RANGE]               = {"C19", "C21"},
    [RULE_INDEX_MAP_BATCHING_UNIQUE]     = {"C18", "C20"},
    [RULE_INDEX_MAP_SIZE]                = {"C3",  "C19"},
    [RULE_COVER_OPERAND_RANK]            = {"C1",  "C2"},
    [RULE_WINDOW_SORTED]                 = {"C4",  "C7"},
};

static const char *const op_names[2] = {"gather", "scatter"};

/* Fails with MESSAGE (StableHLO OP (RULE)). */
static bool violates(const Infer *in, IndexOpKind kind, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool violates(const Infer *in, IndexOpKind kind, const char *rule, const char *fmt, ...) {
  char body[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  return infer_fail(in, "%s (StableHLO %s (%s))", body, op_names[kind], rule);
}

static const char *rule_of(const IndexDims *d, SharedRule r) { return shared_rules[r][d->kind]; }
static const char *name_of(const IndexDims *d, IndexList l) { return list_names[l][d->kind]; }

static bool check_in_range(const Infer *in, IndexOpKind kind, const char *rule, const char *name,
                           const IntList *list, int64_t bound) {
  for (int i = 0; i < list->count; i++)
    if (list->values[i] < 0 || list->values[i] >= bound)
      return violates(in, kind, rule, "%s entry %lld is out of range [0, %lld)", name,
                      (long long)list->values[i], (long long)bound);
  return true;
}

static bool check_sorted(const Infer *in, IndexOpKind kind, const char *rule, const char *name,
                         const IntList *list) {
  for (int i = 1; i < list->count; i++)
    if (list->values[i - 1] > list->values[i]) return violates(in, kind, rule, "%s must be sorted", name);
  return true;
}

/* No dimension twice in a, nor in both a and b (b may be NULL). */
static bool check_unique(const Infer *in, IndexOpKind kind, const char *rule, const char *name_a,
                         const IntList *a, const char *name_b, const IntList *b) {
  for (int i = 0; i < a->count; i++) {
    for (int j = 0; j < i; j++)
      if (a->values[j] == a->values[i])
        return violates(in, kind, rule, "%s repeats dimension %lld", name_a, (long long)a->values[i]);
    if (b && infer_list_contains(b, a->values[i]))
      return violates(in, kind, rule, "dimension %lld is in both %s and %s", (long long)a->values[i], name_a,
                      name_b);
  }
  return true;
}

/* The indices and their index vector: integers, index_vector_dim in
 * [0, rank], the vector's size that dim's extent or 1 when it is one past
 * the last (an implicit trailing 1). */
static bool check_indices(const Infer *in, const IndexDims *d, const Shape *idx, int64_t *vector_size) {
  if (!type_is_integer(idx->type))
    return violates(in, d->kind, rule_of(d, RULE_INDICES_INTEGER), "indices must be integers, not %s",
                    type_name(idx->type));
  int64_t ivd = d->index_vector_dim;
  if (ivd < 0 || ivd > idx->rank)
    return violates(in, d->kind, rule_of(d, RULE_INDEX_VECTOR_DIM_RANGE),
                    "index_vector_dim %lld is out of range [0, %d]", (long long)ivd, idx->rank);
  *vector_size = ivd < idx->rank ? idx->dims[ivd] : 1;
  return true;
}

/* The operand-side lists: each in range and sorted, and no dimension both
 * collapsed and batching (a batching dimension is indexed by the batch, a
 * collapsed one by the index vector: one dimension cannot be both). */
static bool check_operand_lists(const Infer *in, const IndexDims *d, int operand_rank) {
  IndexOpKind k = d->kind;
  return check_in_range(in, k, rule_of(d, RULE_COLLAPSED_RANGE), name_of(d, LIST_COLLAPSED), d->collapsed,
                        operand_rank) &&
         check_sorted(in, k, rule_of(d, RULE_COLLAPSED_SORTED), name_of(d, LIST_COLLAPSED), d->collapsed) &&
         check_in_range(in, k, rule_of(d, RULE_BATCHING_RANGE), name_of(d, LIST_OPERAND_BATCHING),
                        d->operand_batching, operand_rank) &&
         check_sorted(in, k, rule_of(d, RULE_BATCHING_SORTED), name_of(d, LIST_OPERAND_BATCHING),
                      d->operand_batching) &&
         check_unique(in, k, rule_of(d, RULE_COLLAPSED_BATCHING_UNIQUE), name_of(d, LIST_COLLAPSED),
                      d->collapsed, name_of(d, LIST_OPERAND_BATCHING), d->operand_batching) &&
         check_unique(in, k, rule_of(d, RULE_COLLAPSED_BATCHING_UNIQUE), name_of(d, LIST_OPERAND_BATCHING),
                      d->operand_batching, NULL, NULL);
}

/* Batching dimensions pair an operand dimension with an indices dimension
 * of the same size; the index vector dimension is never one of them. */
static bool check_batching_pairs(const Infer *in, const IndexDims *d, const Shape *x, const Shape *idx) {
  IndexOpKind k = d->kind;
  const char *index_name = name_of(d, LIST_INDEX_BATCHING);
  if (!check_unique(in, k, rule_of(d, RULE_INDEX_BATCHING_UNIQUE), index_name, d->index_batching, NULL, NULL) ||
      !check_in_range(in, k, rule_of(d, RULE_INDEX_BATCHING_RANGE), index_name, d->index_batching, idx->rank))
    return false;
  if (infer_list_contains(d->index_batching, d->index_vector_dim))
    return violates(in, k, rule_of(d, RULE_INDEX_VECTOR_DIM_NOT_BATCHING), "%s contains index_vector_dim %lld",
                    index_name, (long long)d->index_vector_dim);
  if (d->operand_batching->count != d->index_batching->count)
    return violates(in, k, rule_of(d, RULE_BATCHING_COUNT), "%s has %d entries and %s %d",
                    name_of(d, LIST_OPERAND_BATCHING), d->operand_batching->count, index_name,
                    d->index_batching->count);
  for (int i = 0; i < d->operand_batching->count; i++) {
    int64_t od = d->operand_batching->values[i], id = d->index_batching->values[i];
    if (x->dims[od] != idx->dims[id])
      return violates(in, k, rule_of(d, RULE_BATCHING_SIZES),
                      "batching pair %d: operand dimension %lld (size %lld) and indices dimension %lld "
                      "(size %lld) differ in size",
                      i, (long long)od, (long long)x->dims[od], (long long)id, (long long)idx->dims[id]);
  }
  return true;
}

/* Every rule on the shared lists, in an order where each check reads only
 * what the checks before it bounded. */
static bool check_index_dims(const Infer *in, const IndexDims *d, const Shape *x, const Shape *idx) {
  IndexOpKind k = d->kind;
  int64_t vector_size = 0;
  if (!check_indices(in, d, idx, &vector_size) || !check_operand_lists(in, d, x->rank) ||
      !check_batching_pairs(in, d, x, idx))
    return false;
  /* A dimension the index vector picks is not also picked by the batch. */
  const char *map_name = name_of(d, LIST_INDEX_MAP);
  if (!check_in_range(in, k, rule_of(d, RULE_INDEX_MAP_RANGE), map_name, d->index_map, x->rank) ||
      !check_unique(in, k, rule_of(d, RULE_INDEX_MAP_BATCHING_UNIQUE), map_name, d->index_map,
                    name_of(d, LIST_OPERAND_BATCHING), d->operand_batching))
    return false;
  if (d->index_map->count != vector_size)
    return violates(in, k, rule_of(d, RULE_INDEX_MAP_SIZE), "%s has %d entries but the index vector has %lld",
                    map_name, d->index_map->count, (long long)vector_size);
  if (d->window->count + d->collapsed->count + d->operand_batching->count != x->rank)
    return violates(in, k, rule_of(d, RULE_COVER_OPERAND_RANK), "%s, %s and %s must cover the operand rank %d",
                    name_of(d, LIST_WINDOW), name_of(d, LIST_COLLAPSED), name_of(d, LIST_OPERAND_BATCHING),
                    x->rank);
  return true;
}

/* The window dims: sorted without repeats (C4 / C7), each below the rank of
 * the gather's result or the scatter's updates (C5 / C8). */
static bool check_window_dims(const Infer *in, const IndexDims *d, const char *range_rule, int rank) {
  const char *name = name_of(d, LIST_WINDOW);
  return check_unique(in, d->kind, rule_of(d, RULE_WINDOW_SORTED), name, d->window, NULL, NULL) &&
         check_sorted(in, d->kind, rule_of(d, RULE_WINDOW_SORTED), name, d->window) &&
         check_in_range(in, d->kind, range_rule, name, d->window, rank);
}

/* ---- gather ---- */

/* slice_sizes: one per operand dimension (C20), within it (C21), and at
 * most 1 where the dimension is collapsed (C9) or batching (C12). */
static bool check_slice_sizes(const Infer *in, const GatherDims *g, const Shape *x) {
  if (g->slice_sizes.count != x->rank)
    return violates(in, OP_KIND_GATHER, "C20", "slice_sizes has %d entries, the operand rank is %d",
                    g->slice_sizes.count, x->rank);
  for (int i = 0; i < x->rank; i++) {
    int64_t s = g->slice_sizes.values[i];
    if (s < 0 || s > x->dims[i])
      return violates(in, OP_KIND_GATHER, "C21", "slice size %lld is outside operand dimension %d (size %lld)",
                      (long long)s, i, (long long)x->dims[i]);
    if (s > 1 && infer_list_contains(&g->collapsed_slice_dims, i))
      return violates(in, OP_KIND_GATHER, "C9", "collapsed dimension %d has slice size %lld, more than 1", i,
                      (long long)s);
    if (s > 1 && infer_list_contains(&g->operand_batching_dims, i))
      return violates(in, OP_KIND_GATHER, "C12", "batching dimension %d has slice size %lld, more than 1", i,
                      (long long)s);
  }
  return true;
}

/* Result dims (C22): offset_dims positions take the kept slice sizes in
 * order, the others take the indices' batch dims (all but index_vector_dim). */
bool infer_gather(Infer *in) {
  if (!infer_expect_operand_count(in, 2) || !infer_expect_array(in, 0) || !infer_expect_array(in, 1))
    return false;
  const Shape *x = infer_operand_shape(in, 0), *idx = infer_operand_shape(in, 1);
  const GatherDims *g = attrs_gather(&in->inst->attrs);
  IndexDims d = {OP_KIND_GATHER,           &g->offset_dims,     &g->collapsed_slice_dims,
                 &g->operand_batching_dims, &g->start_indices_batching_dims, &g->start_index_map,
                 g->index_vector_dim};
  if (!check_index_dims(in, &d, x, idx) || !check_slice_sizes(in, g, x)) return false;
  int batch_rank = g->index_vector_dim < idx->rank ? idx->rank - 1 : idx->rank;
  int rank = g->offset_dims.count + batch_rank;
  if (rank > AXLE_MAX_RANK) return infer_fail(in, "result rank %d exceeds %d", rank, AXLE_MAX_RANK);
  if (!check_window_dims(in, &d, "C5", rank)) return false;
  int64_t dims[AXLE_MAX_RANK];
  int next_offset = 0, next_batch = 0;
  for (int i = 0; i < rank; i++) {
    if (infer_list_contains(&g->offset_dims, i)) {
      while (infer_list_contains(&g->collapsed_slice_dims, next_offset) ||
             infer_list_contains(&g->operand_batching_dims, next_offset))
        next_offset++;
      dims[i] = g->slice_sizes.values[next_offset++];
    } else {
      if (next_batch == g->index_vector_dim) next_batch++;
      dims[i] = idx->dims[next_batch++];
    }
  }
  return infer_set_array(in, x->type, rank, dims);
}

/* ---- scatter ---- */

/* updates[0] (C4): its window dims, in order, no larger than the operand
 * dims that are neither inserted nor batching; its other dims, in order,
 * the indices' batch dims. */
static bool check_update_shape(const Infer *in, const IndexDims *d, const Shape *x, const Shape *idx,
                               const Shape *upd) {
  int batch_rank = d->index_vector_dim < idx->rank ? idx->rank - 1 : idx->rank;
  if (upd->rank != d->window->count + batch_rank)
    return violates(in, OP_KIND_SCATTER, "C4", "updates rank %d should be %d", upd->rank,
                    d->window->count + batch_rank);
  if (!check_window_dims(in, d, "C8", upd->rank)) return false;
  int next_operand = 0, next_index = 0;
  for (int i = 0; i < upd->rank; i++) {
    if (infer_list_contains(d->window, i)) {
      while (infer_list_contains(d->collapsed, next_operand) || infer_list_contains(d->operand_batching, next_operand))
        next_operand++;
      if (upd->dims[i] > x->dims[next_operand])
        return violates(in, OP_KIND_SCATTER, "C4", "update window dimension %d exceeds operand dimension %d", i,
                        next_operand);
      next_operand++;
    } else {
      if (next_index == d->index_vector_dim) next_index++;
      if (upd->dims[i] != idx->dims[next_index])
        return violates(in, OP_KIND_SCATTER, "C4", "update scatter dimension %d must match indices dimension %d",
                        i, next_index);
      next_index++;
    }
  }
  return true;
}

/* N inputs of one shape (C1), N updates of one shape (C3), each update of
 * its input's element type (C6). */
static bool check_scatter_operands(const Infer *in, int n) {
  for (int i = 0; i < 2 * n + 1; i++)
    if (!infer_expect_array(in, i)) return false;
  for (int i = 1; i < n; i++) {
    if (!shape_same_dims(infer_operand_shape(in, 0), infer_operand_shape(in, i)))
      return violates(in, OP_KIND_SCATTER, "C1", "input %d has other dimensions than input 0", i);
    if (!shape_same_dims(infer_operand_shape(in, n + 1), infer_operand_shape(in, n + 1 + i)))
      return violates(in, OP_KIND_SCATTER, "C3", "update %d has other dimensions than update 0", i);
  }
  for (int i = 0; i < n; i++) {
    ElementType input = infer_operand_shape(in, i)->type, update = infer_operand_shape(in, n + 1 + i)->type;
    if (input != update)
      return violates(in, OP_KIND_SCATTER, "C6", "update %d is %s, its input %s", i, type_name(update),
                      type_name(input));
  }
  return true;
}

/* scatter(inputs..., indices, updates...): N inputs, N updates (C5); the
 * results have the inputs' shapes in the default layout (C24, C25). */
bool infer_scatter(Infer *in) {
  int count = in->inst->operand_count;
  if (count < 3 || count % 2 == 0)
    return violates(in, OP_KIND_SCATTER, "C5", "needs N inputs, the indices and N updates, not %d operands",
                    count);
  if (!infer_expect_called_count(in, 1)) return false;
  int n = (count - 1) / 2;
  if (n > AXLE_MAX_RANK) return infer_fail(in, "too many operands (%d)", n);
  if (!check_scatter_operands(in, n)) return false;
  const ScatterDims *s = attrs_scatter(&in->inst->attrs);
  IndexDims d = {OP_KIND_SCATTER,          &s->update_window_dims, &s->inserted_window_dims,
                 &s->input_batching_dims, &s->scatter_indices_batching_dims, &s->scatter_dims_to_operand_dims,
                 s->index_vector_dim};
  const Shape *x = infer_operand_shape(in, 0), *idx = infer_operand_shape(in, n);
  if (!check_index_dims(in, &d, x, idx) || !check_update_shape(in, &d, x, idx, infer_operand_shape(in, n + 1)))
    return false;
  ElementType types[AXLE_MAX_RANK];
  Shape results[AXLE_MAX_RANK];
  for (int i = 0; i < n; i++) {
    types[i] = infer_operand_shape(in, i)->type;
    results[i] = *infer_operand_shape(in, i);
    shape_set_default_layout(&results[i]);
  }
  /* update_computation (C23): (E0..EN-1, E0..EN-1) -> (E0..EN-1). */
  if (!infer_check_reducer(in, in->inst->called[0], types, types, n)) return infer_note_rule(in, "scatter (C23)");
  return n == 1 ? infer_set_same_as(in, &results[0]) : infer_set_tuple(in, n, results);
}
