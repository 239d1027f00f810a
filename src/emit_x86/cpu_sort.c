/* The CPU backend's sort and topk: runtime routines (CPU_STEP_CALL steps)
 * that call compiled code for the part HLO lets a program choose.
 *
 * sort(operands..., dimensions={d}, to_apply=comparator) sorts every 1-D
 * slice along d; all operands move together. The comparator is lowered to a
 * rank-0 kernel (lower_scalar_computation) and compiled to x86 once; the
 * routine calls it for every comparison through the kernel ABI, with the
 * 2n buffer pointers aimed at the two elements of each operand. The sort is
 * a stable bottom-up merge sort of a permutation of the slice positions,
 * taking the right element only when comparator(right, left) holds: a valid
 * answer for is_stable=false too, the evaluator's exact order, and a
 * comparator that is no strict weak order still gives a permutation. Every
 * operand is then gathered by the permutation.
 *
 * topk(x), k, largest: along the last dimension, the k largest (smallest)
 * elements and their s32 indices, ties to the lower index, floats by the
 * total order (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN), as the
 * evaluator defines it: the same merge sort on order keys.
 *
 * Slices are independent, so they run as tasks on the pool, a fixed number
 * of slices per task (chosen by the shape): every thread count writes the
 * same bytes. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"

/* Slices of about this many elements make one task. */
enum { SORT_ELEMENTS_PER_TASK = 1 << 13, SORT_MAX_OPERANDS = 16 };

/* Where the 1-D slices along dimension `dim` of a row-major array lie:
 * slice s starts at (s / inner) * length * inner + s % inner, step inner. */
typedef struct SliceSpace {
  int64_t slices, length, inner;
} SliceSpace;

static SliceSpace slice_space(const Shape *s, int dim) {
  SliceSpace sp = {.slices = 1, .length = s->dims[dim], .inner = 1};
  for (int d = 0; d < s->rank; d++)
    if (d > dim) sp.inner *= s->dims[d];
    else if (d < dim) sp.slices *= s->dims[d];
  sp.slices *= sp.inner;
  return sp;
}

static int64_t slice_base(const SliceSpace *sp, int64_t slice) {
  return (slice / sp->inner) * sp->length * sp->inner + slice % sp->inner;
}

static int64_t slices_per_task(const SliceSpace *sp) {
  int64_t per = sp->length > 0 ? SORT_ELEMENTS_PER_TASK / sp->length : 1;
  return per > 0 ? per : 1;
}

/* ---- the merge sort, over any "comes before" test ---- */

typedef bool SortLess(void *context, int64_t a, int64_t b);

/* Merges the sorted runs from[lo, mid) and from[mid, hi) into to[lo, hi);
 * ties keep the left run first, which makes the sort stable. */
static void merge_runs(SortLess *less, void *context, const int64_t *from, int64_t *to, int64_t lo, int64_t mid,
                       int64_t hi) {
  int64_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) to[k++] = less(context, from[j], from[i]) ? from[j++] : from[i++];
  while (i < mid) to[k++] = from[i++];
  while (j < hi) to[k++] = from[j++];
}

/* Sorts the positions 0..length-1 with scratch a and b (length each);
 * returns the one that holds the order. */
static int64_t *merge_sort(SortLess *less, void *context, int64_t length, int64_t *a, int64_t *b) {
  for (int64_t k = 0; k < length; k++) a[k] = k;
  for (int64_t width = 1; width < length; width *= 2) {
    for (int64_t lo = 0; lo < length; lo += 2 * width) {
      int64_t mid = lo + width < length ? lo + width : length;
      int64_t hi = lo + 2 * width < length ? lo + 2 * width : length;
      merge_runs(less, context, a, b, lo, mid, hi);
    }
    int64_t *t = a;
    a = b;
    b = t;
  }
  return a;
}

/* ---- sort ---- */

typedef struct SortState {
  int operand_count;
  SliceSpace space;
  int element_bytes[SORT_MAX_OPERANDS];
  CompiledKernel *compare;
  int constant_count;          /* the comparator's own constants, after the 2n scalars */
  void **constants;
} SortState;

static void sort_state_free(void *state) {
  SortState *s = state;
  if (!s) return;
  kernel_x86_free(s->compare);
  for (int i = 0; i < s->constant_count; i++) mem_free(s->constants[i]);
  mem_free(s->constants);
  mem_free(s);
}

/* One slice being sorted: the comparator's buffer table is aimed at the
 * two elements compared before each call. */
typedef struct SortSlice {
  const SortState *state;
  void *const *operands;
  int64_t base, stride;
  void **compare_buffers;      /* 2n scalars, the constants, the pred */
} SortSlice;

static bool sort_slice_less(void *context, int64_t a, int64_t b) {
  SortSlice *s = context;
  const SortState *st = s->state;
  for (int i = 0; i < st->operand_count; i++) {
    char *data = s->operands[i];
    s->compare_buffers[2 * i] = data + (s->base + a * s->stride) * st->element_bytes[i];
    s->compare_buffers[2 * i + 1] = data + (s->base + b * s->stride) * st->element_bytes[i];
  }
  uint8_t *pred = s->compare_buffers[2 * st->operand_count + st->constant_count];
  *pred = 0;
  kernel_x86_run_rows(st->compare, s->compare_buffers, 0, 1);
  return *pred != 0;
}

typedef struct SortRun {
  const SortState *state;
  void *const *buffers;        /* operands, then results */
} SortRun;

static void sort_task_run(void *context, int64_t task) {
  const SortRun *run = context;
  const SortState *st = run->state;
  const SliceSpace *sp = &st->space;
  int n = st->operand_count;
  int64_t per = slices_per_task(sp), first = task * per, last = first + per < sp->slices ? first + per : sp->slices;
  int64_t *a = mem_calloc((size_t)sp->length, sizeof *a), *b = mem_calloc((size_t)sp->length, sizeof *b);
  void **table = mem_calloc((size_t)(2 * n + st->constant_count + 1), sizeof *table);
  uint8_t pred = 0;
  for (int c = 0; c < st->constant_count; c++) table[2 * n + c] = st->constants[c];
  table[2 * n + st->constant_count] = &pred;
  for (int64_t slice = first; slice < last; slice++) {
    SortSlice s = {st, run->buffers, slice_base(sp, slice), sp->inner, table};
    const int64_t *order = merge_sort(sort_slice_less, &s, sp->length, a, b);
    for (int i = 0; i < n; i++) {
      const char *from = run->buffers[i];
      char *to = run->buffers[n + i];
      int64_t size = st->element_bytes[i];
      for (int64_t j = 0; j < sp->length; j++)
        memcpy(to + (s.base + j * s.stride) * size, from + (s.base + order[j] * s.stride) * size, (size_t)size);
    }
  }
  mem_free(a);
  mem_free(b);
  mem_free(table);
}

static bool sort_call(const CpuStep *step, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)st;
  const SortState *state = step->state;
  SortRun run = {state, buffers};
  int64_t per = slices_per_task(&state->space);
  thread_pool_run(pool, (state->space.slices + per - 1) / per, sort_task_run, &run);
  return true;
}

/* The comparator, compiled; its constants copied into the state. */
static bool sort_compile_comparator(CpuCompile *c, const Instruction *inst, SortState *state) {
  /* The routine aims parameters 2i and 2i+1 at elements of operand i. */
  const Computation *compare = inst->called[0];
  bool params_fit = compare->parameter_count == 2 * inst->operand_count;
  for (int i = 0; params_fit && i < compare->parameter_count; i++)
    params_fit = compare->parameters[i] && compare->parameters[i]->shape.type == inst->operands[i / 2]->shape.type;
  if (!params_fit) return cpu_refuse(c, inst, "a comparator without two parameters per operand, of its type");
  Status why = {0};
  const Kernel *k = c->step->applied[0];  /* the program stage's */
  if (!k) return cpu_refuse(c, inst, c->step->unsupported);
  CompiledKernel *ck = kernel_x86_compile_listed(k, &c->p->cpu, c->p->listings, &why);
  if (!ck) return cpu_refuse(c, inst, why.message[0] ? why.message : "a comparator that does not compile");
  state->compare = ck;
  state->constant_count = k->input_count - 2 * inst->operand_count;
  state->constants = mem_calloc((size_t)state->constant_count + 1, sizeof *state->constants);
  for (int i = 0; i < state->constant_count; i++) {
    const Literal *lit = k->inputs[2 * inst->operand_count + i].constant;
    size_t bytes = lit ? (size_t)shape_byte_size(&lit->shape) : 0;
    state->constants[i] = mem_calloc(bytes ? bytes : 1, 1);
    if (bytes) memcpy(state->constants[i], lit->data, bytes);
  }
  return true;
}

bool cpu_compile_sort(CpuCompile *c, const Instruction *inst) {
  int n = inst->operand_count;
  if (n < 1 || n > SORT_MAX_OPERANDS || inst->called_count < 1 || inst->attrs.dimensions.count != 1)
    return cpu_refuse(c, inst, "a sort of more than 16 operands or without one dimension");
  const Shape *shape = &inst->operands[0]->shape;
  int dim = (int)inst->attrs.dimensions.values[0];
  if (shape_is_tuple(shape) || dim < 0 || dim >= shape->rank) return cpu_refuse(c, inst, "a sort dimension out of range");
  for (int i = 0; i < n; i++)
    if (shape_is_tuple(&inst->operands[i]->shape) || !shape_same_dims(&inst->operands[i]->shape, shape) ||
        type_byte_size(inst->operands[i]->shape.type) <= 0)
      return cpu_refuse(c, inst, "a sort operand that is not an array of operand 0's dims, of whole-byte elements");
  if (shape_element_count(shape) == 0) return true;  /* nothing to sort */
  SortState *state = mem_calloc(1, sizeof *state);
  state->operand_count = n;
  state->space = slice_space(shape, dim);
  for (int i = 0; i < n; i++) state->element_bytes[i] = type_byte_size(inst->operands[i]->shape.type);
  if (!sort_compile_comparator(c, inst, state)) {
    sort_state_free(state);
    return false;
  }
  return cpu_add_call_step(c, inst, n, sort_call, state, sort_state_free) != NULL;
}

/* ---- topk ---- */

typedef struct TopkState {
  ElementType type;
  int element_bytes;
  int64_t rows, n, k;
  bool largest;
} TopkState;

/* An order key per element (see the top of the file): floats through their
 * double's bits, flipped below zero so that one signed comparison orders
 * them totally; unsigned integers flipped at the top bit. */
static int64_t topk_key(ElementType t, const void *p) {
  double v;
  switch (t) {
  case TYPE_F32: { float f; memcpy(&f, p, sizeof f); v = f; break; }
  case TYPE_F64: memcpy(&v, p, sizeof v); break;
  case TYPE_F16: { uint16_t h; memcpy(&h, p, sizeof h); v = half_to_float(h); break; }
  case TYPE_BF16: { uint16_t h; memcpy(&h, p, sizeof h); v = bf16_to_float(h); break; }
  case TYPE_S8: return *(const int8_t *)p;
  case TYPE_S16: { int16_t x; memcpy(&x, p, sizeof x); return x; }
  case TYPE_S32: { int32_t x; memcpy(&x, p, sizeof x); return x; }
  case TYPE_S64: { int64_t x; memcpy(&x, p, sizeof x); return x; }
  case TYPE_U8: return *(const uint8_t *)p;
  case TYPE_U16: { uint16_t x; memcpy(&x, p, sizeof x); return x; }
  case TYPE_U32: { uint32_t x; memcpy(&x, p, sizeof x); return x; }
  case TYPE_U64: { uint64_t x; memcpy(&x, p, sizeof x); return (int64_t)(x ^ (UINT64_C(1) << 63)); }
  default: return 0;
  }
  int64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits < 0 ? bits ^ INT64_MAX : bits;
}

static bool topk_type_supported(ElementType t) {
  switch (t) {
  case TYPE_F32: case TYPE_F64: case TYPE_F16: case TYPE_BF16:
  case TYPE_S8: case TYPE_S16: case TYPE_S32: case TYPE_S64:
  case TYPE_U8: case TYPE_U16: case TYPE_U32: case TYPE_U64:
    return true;
  default:
    return false;
  }
}

typedef struct TopkRow {
  const int64_t *keys;
  bool largest;
} TopkRow;

static bool topk_less(void *context, int64_t a, int64_t b) {
  const TopkRow *r = context;
  return r->largest ? r->keys[a] > r->keys[b] : r->keys[a] < r->keys[b];
}

typedef struct TopkRun {
  const TopkState *state;
  void *const *buffers;        /* x, values, indices */
} TopkRun;

static void topk_task_run(void *context, int64_t task) {
  const TopkRun *run = context;
  const TopkState *st = run->state;
  SliceSpace sp = {.slices = st->rows, .length = st->n, .inner = 1};
  int64_t per = slices_per_task(&sp), first = task * per, last = first + per < st->rows ? first + per : st->rows;
  int64_t *keys = mem_calloc((size_t)st->n, sizeof *keys);
  int64_t *a = mem_calloc((size_t)st->n, sizeof *a), *b = mem_calloc((size_t)st->n, sizeof *b);
  const char *x = run->buffers[0];
  char *values = run->buffers[1];
  int32_t *indices = run->buffers[2];
  size_t size = (size_t)st->element_bytes;
  for (int64_t r = first; r < last; r++) {
    const char *row = x + r * st->n * (int64_t)size;
    for (int64_t j = 0; j < st->n; j++) keys[j] = topk_key(st->type, row + j * (int64_t)size);
    TopkRow context_row = {keys, st->largest};
    const int64_t *order = merge_sort(topk_less, &context_row, st->n, a, b);
    for (int64_t j = 0; j < st->k; j++) {
      memcpy(values + (r * st->k + j) * (int64_t)size, row + order[j] * (int64_t)size, size);
      indices[r * st->k + j] = (int32_t)order[j];
    }
  }
  mem_free(keys);
  mem_free(a);
  mem_free(b);
}

static bool topk_call(const CpuStep *step, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)st;
  const TopkState *state = step->state;
  TopkRun run = {state, buffers};
  SliceSpace sp = {.slices = state->rows, .length = state->n, .inner = 1};
  int64_t per = slices_per_task(&sp);
  thread_pool_run(pool, (state->rows + per - 1) / per, topk_task_run, &run);
  return true;
}

bool cpu_compile_topk(CpuCompile *c, const Instruction *inst) {
  const Shape *x = &inst->operands[0]->shape;
  const ScalarAttrs *sa = attrs_scalars(&inst->attrs);
  int rank = x->rank;
  if (shape_is_tuple(x) || rank < 1 || !shape_is_tuple(&inst->shape) || inst->shape.tuple_count != 2 ||
      sa->k < 0 || sa->k > x->dims[rank - 1])
    return cpu_refuse(c, inst, "a topk whose k does not fit the last dimension");
  if (!topk_type_supported(x->type)) return cpu_refuse(c, inst, "a topk of this element type");
  TopkState st = {.type = x->type, .element_bytes = type_byte_size(x->type), .n = x->dims[rank - 1], .k = sa->k,
                  .largest = sa->largest};
  st.rows = st.n ? shape_element_count(x) / st.n : 0;
  if (st.rows == 0 || st.k == 0) return true;  /* nothing to write */
  TopkState *state = mem_calloc(1, sizeof *state);
  *state = st;
  return cpu_add_call_step(c, inst, 2, topk_call, state, mem_free) != NULL;
}
