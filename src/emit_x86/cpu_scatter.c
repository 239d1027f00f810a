/* The CPU backend's scatter and select-and-scatter.
 *
 * scatter is a runtime routine (a CPU_STEP_CALL): it copies the operands
 * into the results, then walks the updates in XLA's order (row-major over
 * the updates' scatter dims, each window row-major) on one thread and
 * combines each updated element with the update computation, compiled to a
 * rank-0 kernel (lower_scatter_combiner). One order on every thread count:
 * the same bits. The walk's index arithmetic is the plan the evaluator
 * executes too (src/ir/scatter_plan.c), so the two visit the same elements
 * in the same order, and drop the same windows.
 *
 * select-and-scatter is two kernels (lower_select_and_scatter): the picks
 * of every window placement into a temporary, then the scatter of the
 * source onto the picks, one result element per row. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "ir/scatter_plan.h"

/* ---- scatter ---- */

typedef struct ScatterRoutine {
  ScatterPlan plan;
  CompiledKernel *combiner;
  const Shape *operand, *indices, *updates; /* the shapes, with layouts */
  int64_t element_bytes[AXLE_MAX_RANK];
} ScatterRoutine;

static void scatter_routine_free(void *state) {
  ScatterRoutine *r = state;
  if (r) kernel_x86_free(r->combiner);
  mem_free(r);
}

/* The element offset of a logical index in a dense array of layout s. */
static int64_t layout_offset(const Shape *s, const int64_t *index) {
  int64_t offset = 0;
  for (int j = s->rank - 1; j >= 0; j--) {
    int d = s->minor_to_major[j];
    offset = offset * s->dims[d] + index[d];
  }
  return offset;
}

/* One index value as s64. A u64 past INT64_MAX stays "too large" (its
 * window falls out of bounds), not negative. s4, u4, s2 and u2 sit one to
 * a byte, in its low bits. */
static int64_t index_read(const void *data, ElementType t, int64_t at) {
  int bits = type_bit_width(t);
  if (bits < 8) {
    int64_t low = ((const uint8_t *)data)[at] & ((1 << bits) - 1);
    return type_kind(t) == TYPE_KIND_SINT && low >> (bits - 1) ? low - ((int64_t)1 << bits) : low;
  }
  switch (t) {
  case TYPE_S8: return ((const int8_t *)data)[at];
  case TYPE_S16: return ((const int16_t *)data)[at];
  case TYPE_S32: return ((const int32_t *)data)[at];
  case TYPE_S64: return ((const int64_t *)data)[at];
  case TYPE_U8: return ((const uint8_t *)data)[at];
  case TYPE_U16: return ((const uint16_t *)data)[at];
  case TYPE_U32: return ((const uint32_t *)data)[at];
  default: { /* u64 */
    uint64_t u = ((const uint64_t *)data)[at];
    return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
  }
  }
}

static bool index_advance(int64_t *index, const int64_t *dims, int rank) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

/* scatter_window_start's reader: an entry of the indices buffer, in its
 * layout. */
typedef struct IndicesView {
  const Shape *shape;
  const void *data;
} IndicesView;

static int64_t indices_view_read(const void *context, const int64_t *indices_index) {
  const IndicesView *v = context;
  return index_read(v->data, v->shape->type, layout_offset(v->shape, indices_index));
}

/* The combiner over one scatter index's window, row-major over the
 * window: results = f(results..., updates...). The current values are
 * copied out first, so the kernel may store a result before reading
 * every argument. */
static void scatter_window_apply(const ScatterRoutine *r, void *const *buffers, const int64_t *scatter_index,
                                 const int64_t *start) {
  const ScatterPlan *p = &r->plan;
  int n = p->n;
  int64_t window_index[AXLE_MAX_RANK] = {0}, update_index[AXLE_MAX_RANK], operand_index[AXLE_MAX_RANK];
  uint64_t current[AXLE_MAX_RANK][2]; /* up to 16 bytes: c128 */
  void *args[3 * AXLE_MAX_RANK];
  for (int64_t w = 0; w < p->window_total; w++, index_advance(window_index, p->window_sizes, p->window_count)) {
    scatter_window_element(p, scatter_index, window_index, start, update_index, operand_index);
    int64_t at = layout_offset(r->operand, operand_index), from = layout_offset(r->updates, update_index);
    for (int i = 0; i < n; i++) {
      char *result = (char *)buffers[2 * n + 1 + i] + at * r->element_bytes[i];
      memcpy(current[i], result, (size_t)r->element_bytes[i]);
      args[i] = current[i];
      args[n + i] = (char *)buffers[n + 1 + i] + from * r->element_bytes[i];
      args[2 * n + i] = result;
    }
    kernel_x86_run_rows(r->combiner, args, 0, 1);
  }
}

/* Buffers: operands, indices, updates, results. */
static bool scatter_run(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)pool, (void)st;
  const ScatterRoutine *r = s->state;
  const ScatterPlan *p = &r->plan;
  int n = p->n;
  for (int i = 0; i < n; i++) {
    int64_t bytes = shape_element_count(r->operand) * r->element_bytes[i];
    if (buffers[2 * n + 1 + i] != buffers[i] && bytes > 0) memcpy(buffers[2 * n + 1 + i], buffers[i], (size_t)bytes);
  }
  IndicesView indices = {r->indices, buffers[n]};
  int64_t scatter_index[AXLE_MAX_RANK] = {0}, start[AXLE_MAX_RANK];
  for (int64_t k = 0; k < p->scatter_total; k++, index_advance(scatter_index, p->scatter_sizes, p->scatter_count))
    if (scatter_window_start(p, indices_view_read, &indices, scatter_index, start))
      scatter_window_apply(r, buffers, scatter_index, start);
  return true;
}

static bool layouts_equal(const Shape *a, const Shape *b) {
  return a->rank == b->rank && memcmp(a->minor_to_major, b->minor_to_major, sizeof(int) * (size_t)a->rank) == 0;
}

/* The step's buffers: operands, indices, updates, then results. */
static bool scatter_step_bind(CpuCompile *c, const Instruction *inst, CpuStep *s, int n) {
  for (int i = 0; i < 2 * n + 1; i++) s->buffers[i] = cpu_binding_of(c, inst->operands[i], 0);
  for (int o = 0; o < n; o++) s->buffers[2 * n + 1 + o] = cpu_binding_of(c, inst, o);
  for (int i = 0; i < s->buffer_count; i++)
    if (s->buffers[i] < 0) return cpu_refuse(c, inst, "a buffer the plan does not place");
  return true;
}

const char *cpu_scatter_refusal(const Instruction *inst) {
  ScatterPlan plan;
  const char *problem = scatter_plan_make(inst, &plan);
  if (problem) return problem;
  int n = plan.n;
  for (int i = 0; i < inst->operand_count; i++) {
    const Shape *s = &inst->operands[i]->shape;
    if (s->element_size_bits || type_byte_size(s->type) > 16) return "a packed element type";
  }
  if (!type_is_integer(inst->operands[n]->shape.type)) return "indices that are not integers";
  for (int i = 0; i < n; i++) {
    const Shape *result = shape_is_tuple(&inst->shape) ? &inst->shape.tuple_shapes[i] : &inst->shape;
    if (!layouts_equal(result, &inst->operands[i]->shape) || !layouts_equal(&inst->operands[0]->shape, result) ||
        !layouts_equal(&inst->operands[n + 1 + i]->shape, &inst->operands[n + 1]->shape))
      return "operands, updates or results in different layouts";
  }
  return NULL;
}

bool cpu_compile_scatter(CpuCompile *c, const Instruction *inst) {
  ScatterPlan plan;
  scatter_plan_make(inst, &plan);  /* cpu_scatter_refusal found no problem */
  int n = plan.n;
  const Shape *indices = &inst->operands[n]->shape;
  Status why = {0};
  const Kernel *k = c->step->applied[0];  /* the program stage's */
  if (!k) return cpu_refuse(c, inst, c->step->unsupported);
  CompiledKernel *ck = kernel_x86_compile_listed(k, &c->p->cpu, c->p->listings, &why);
  if (!ck) return cpu_refuse(c, inst, why.message);
  ScatterRoutine *r = mem_calloc(1, sizeof *r);
  *r = (ScatterRoutine){.plan = plan, .combiner = ck, .operand = &inst->operands[0]->shape, .indices = indices,
                        .updates = &inst->operands[n + 1]->shape};
  for (int i = 0; i < n; i++) r->element_bytes[i] = type_byte_size(inst->operands[i]->shape.type);
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, 3 * n + 1);
  s->call = scatter_run;
  s->state = r;
  s->free_state = scatter_routine_free;
  return scatter_step_bind(c, inst, s, n);
}

/* ---- select-and-scatter ---- */

/* A kernel step over the given bindings (inputs then outputs). */
static bool kernel_step_add(CpuCompile *c, const Instruction *inst, const Kernel *k, const int *bindings) {
  Status why = {0};
  CompiledKernel *ck = kernel_x86_compile_listed(k, &c->p->cpu, c->p->listings, &why);
  int count = k->input_count + k->output_count;
  if (!ck) return cpu_refuse(c, inst, why.message);
  CpuStep *s = cpu_program_add_kernel_step(c->p, inst, ck, count);
  s->lowered = k;
  for (int i = 0; i < count; i++) {
    s->buffers[i] = bindings[i];
    if (bindings[i] < 0) return cpu_refuse(c, inst, "a kernel buffer the plan does not place");
  }
  return true;
}

bool cpu_compile_select_and_scatter(CpuCompile *c, const Instruction *inst) {
  /* the program stage's two kernels */
  const Kernel *pick = c->step->applied[0], *scatter = c->step->applied[1];
  if (!pick || !scatter) return cpu_refuse(c, inst, c->step->unsupported);
  /* The picks live only from the first kernel to the second: a binding of
   * their own at the end of the temporary block. */
  int64_t bytes = shape_byte_size(&pick->outputs[0].shape);
  CpuBinding b = {.kind = BINDING_TEMP, .offset = cpu_program_reserve_temp(c->p, bytes)};
  int picks = cpu_program_add_binding(c->p, &b);
  int bindings[5];
  for (int i = 0; i < 3; i++) bindings[i] = cpu_binding_of(c, inst->operands[i], 0);
  bindings[3] = picks;
  if (!kernel_step_add(c, inst, pick, bindings)) return false;
  bindings[4] = cpu_binding_of(c, inst, 0);
  return kernel_step_add(c, inst, scatter, bindings);
}
