/* The CPU backend's sort and topk: runtime routines (CPU_STEP_CALL steps)
 * that call compiled code for the part HLO lets a program choose.
 *
 * sort(operands..., dimensions={d}, to_apply=comparator) sorts every 1-D
 * slice along d; all operands move together. The plan, the merge sort and
 * topk's order keys are src/ir/sort_plan.c's, which the evaluator and the
 * GPU execute too: the same order, bit for bit. The comparator is lowered
 * to a rank-0 kernel (lower_scalar_computation) and compiled to x86 once;
 * the routine calls it for every comparison through the kernel ABI, with
 * the 2n buffer pointers aimed at the two elements of each operand. Every
 * operand is then gathered by the permutation.
 *
 * Slices are independent, so they run as tasks on the pool, a fixed number
 * of slices per task (chosen by the shape): every thread count writes the
 * same bytes. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "ir/sort_plan.h"

/* Slices of about this many elements make one task. */
enum { SORT_ELEMENTS_PER_TASK = 1 << 13, SORT_MAX_OPERANDS = 16 };

static int64_t rows_per_task(const SortPlan *p) {
  int64_t per = p->length > 0 ? SORT_ELEMENTS_PER_TASK / p->length : 1;
  return per > 0 ? per : 1;
}

/* ---- sort ---- */

typedef struct SortState {
  SortPlan plan;
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

static int sort_slice_less(void *context, int64_t a, int64_t b) {
  SortSlice *s = context;
  const SortState *st = s->state;
  for (int i = 0; i < st->plan.operand_count; i++) {
    char *data = s->operands[i];
    s->compare_buffers[2 * i] = data + (s->base + a * s->stride) * st->element_bytes[i];
    s->compare_buffers[2 * i + 1] = data + (s->base + b * s->stride) * st->element_bytes[i];
  }
  uint8_t *pred = s->compare_buffers[2 * st->plan.operand_count + st->constant_count];
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
  const SortPlan *p = &st->plan;
  int n = p->operand_count;
  int64_t per = rows_per_task(p), first = task * per, last = first + per < p->rows ? first + per : p->rows;
  int64_t *a = mem_calloc((size_t)p->length, sizeof *a), *b = mem_calloc((size_t)p->length, sizeof *b);
  void **table = mem_calloc((size_t)(2 * n + st->constant_count + 1), sizeof *table);
  uint8_t pred = 0;
  for (int c = 0; c < st->constant_count; c++) table[2 * n + c] = st->constants[c];
  table[2 * n + st->constant_count] = &pred;
  for (int64_t row = first; row < last; row++) {
    SortSlice s = {st, run->buffers, sort_row_base(p, row), p->inner, table};
    const int64_t *order = sort_merge_positions(sort_slice_less, &s, p->length, a, b);
    for (int i = 0; i < n; i++) {
      const char *from = run->buffers[i];
      char *to = run->buffers[n + i];
      int64_t size = st->element_bytes[i];
      for (int64_t j = 0; j < p->length; j++)
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
  int64_t per = rows_per_task(&state->plan);
  thread_pool_run(pool, (state->plan.rows + per - 1) / per, sort_task_run, &run);
  return true;
}

const char *cpu_sort_refusal(const Instruction *inst) {
  SortPlan plan;
  const char *problem = sort_plan_make(inst, &plan);
  if (problem) return problem;
  if (plan.operand_count > SORT_MAX_OPERANDS) return "a sort of more than 16 operands";
  for (int i = 0; i < plan.operand_count; i++)
    if (type_byte_size(inst->operands[i]->shape.type) <= 0) return "a sort operand that is not of whole-byte elements";
  if (plan.rows * plan.length == 0) return NULL;  /* nothing to sort, no comparator to call */
  /* The routine aims parameters 2i and 2i+1 at elements of operand i. */
  const Computation *compare = inst->called[0];
  bool params_fit = compare->parameter_count == 2 * inst->operand_count;
  for (int i = 0; params_fit && i < compare->parameter_count; i++)
    params_fit = compare->parameters[i] && compare->parameters[i]->shape.type == inst->operands[i / 2]->shape.type;
  return params_fit ? NULL : "a comparator without two parameters per operand, of its type";
}

/* The comparator, compiled; its constants copied into the state. */
static bool sort_compile_comparator(CpuCompile *c, const Instruction *inst, SortState *state) {
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
  SortPlan plan;
  sort_plan_make(inst, &plan);  /* cpu_sort_refusal found no problem */
  int n = plan.operand_count;
  if (plan.rows * plan.length == 0) return true;  /* nothing to sort */
  SortState *state = mem_calloc(1, sizeof *state);
  state->plan = plan;
  for (int i = 0; i < n; i++) state->element_bytes[i] = type_byte_size(inst->operands[i]->shape.type);
  if (!sort_compile_comparator(c, inst, state)) {
    sort_state_free(state);
    return false;
  }
  return cpu_add_call_step(c, inst, n, sort_call, state, sort_state_free) != NULL;
}

/* ---- topk ---- */

typedef struct TopkState {
  SortPlan plan;
  Shape shape;                 /* x, row-major: the literal view keys are read through */
  int element_bytes;
} TopkState;

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

typedef struct TopkRun {
  const TopkState *state;
  void *const *buffers;        /* x, values, indices */
} TopkRun;

static void topk_task_run(void *context, int64_t task) {
  const TopkRun *run = context;
  const TopkState *st = run->state;
  const SortPlan *p = &st->plan;
  int64_t n = p->length, k = p->k;
  int64_t per = rows_per_task(p), first = task * per, last = first + per < p->rows ? first + per : p->rows;
  int64_t *keys = mem_calloc((size_t)n, sizeof *keys);
  int64_t *a = mem_calloc((size_t)n, sizeof *a), *b = mem_calloc((size_t)n, sizeof *b);
  Literal x = {.shape = st->shape, .data = run->buffers[0]};
  const char *from = run->buffers[0];
  char *values = run->buffers[1];
  int32_t *indices = run->buffers[2];
  size_t size = (size_t)st->element_bytes;
  for (int64_t r = first; r < last; r++) {
    for (int64_t j = 0; j < n; j++) keys[j] = sort_order_key(&x, r * n + j);
    const int64_t *order = sort_topk_order(p, keys, a, b);
    for (int64_t j = 0; j < k; j++) {
      memcpy(values + (r * k + j) * (int64_t)size, from + (r * n + order[j]) * (int64_t)size, size);
      indices[r * k + j] = (int32_t)order[j];
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
  int64_t per = rows_per_task(&state->plan);
  thread_pool_run(pool, (state->plan.rows + per - 1) / per, topk_task_run, &run);
  return true;
}

const char *cpu_topk_refusal(const Instruction *inst) {
  SortPlan plan;
  const char *problem = sort_plan_make(inst, &plan);
  if (problem || !shape_is_tuple(&inst->shape) || inst->shape.tuple_count != 2)
    return problem ? problem : "a topk whose result is not (values, indices)";
  return topk_type_supported(inst->operands[0]->shape.type) ? NULL : "a topk of this element type";
}

bool cpu_compile_topk(CpuCompile *c, const Instruction *inst) {
  const Shape *x = &inst->operands[0]->shape;
  TopkState st = {.element_bytes = type_byte_size(x->type)};
  sort_plan_make(inst, &st.plan);  /* cpu_topk_refusal found no problem */
  if (st.plan.rows * st.plan.length == 0 || st.plan.k == 0) return true;  /* nothing to write */
  st.shape = shape_array(x->type, x->rank, x->dims);
  TopkState *state = mem_calloc(1, sizeof *state);
  *state = st;
  return cpu_add_call_step(c, inst, 2, topk_call, state, mem_free) != NULL;
}
