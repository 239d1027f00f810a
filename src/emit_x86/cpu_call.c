/* What the CPU backend's runtime routines share (cpu_sort.c, cpu_fft.c,
 * cpu_linalg.c): a CPU_STEP_CALL step on an instruction's operands and
 * result leaves, each seen by the routine in row-major order.
 *
 * A routine indexes its arrays row-major, the order of the evaluator's
 * literals. An operand or a result in another layout (JAX asks LAPACK's
 * custom-calls for column-major matrices, {0,1}) is copied through a
 * row-major scratch array around the call: operands before it, results
 * after it. The copies cost a pass over the data; the routines stay one
 * loop nest each. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"

enum { CALL_MAX_BUFFERS = 40 };

/* A routine wrapped in the copies its buffers need. */
typedef struct RelayoutCall {
  CpuCallFunction *call;
  void *state;
  void (*free_state)(void *state);
  int buffer_count, operand_count;
  const Shape *layouts[CALL_MAX_BUFFERS];  /* NULL: already row-major */
} RelayoutCall;

static void relayout_call_free(void *state) {
  RelayoutCall *r = state;
  if (r->free_state) r->free_state(r->state);
  mem_free(r);
}

static bool relayout_call_run(const CpuStep *step, void *const *buffers, ThreadPool *pool, Status *st) {
  const RelayoutCall *r = step->state;
  void *seen[CALL_MAX_BUFFERS];
  for (int i = 0; i < r->buffer_count; i++) {
    seen[i] = buffers[i];
    if (!r->layouts[i]) continue;
    size_t bytes = (size_t)shape_byte_size(r->layouts[i]);
    seen[i] = mem_calloc(bytes ? bytes : 1, 1);
    if (i < r->operand_count) shape_relayout_copy(r->layouts[i], buffers[i], seen[i], false);
  }
  CpuStep inner = *step;
  inner.state = r->state;
  inner.call = r->call;
  bool ok = r->call(&inner, seen, pool, st);
  for (int i = 0; i < r->buffer_count; i++) {
    if (!r->layouts[i]) continue;
    if (ok && i >= r->operand_count) shape_relayout_copy(r->layouts[i], seen[i], buffers[i], true);
    mem_free(seen[i]);
  }
  return ok;
}

static const Shape *result_leaf(const Instruction *inst, int leaf) {
  return shape_is_tuple(&inst->shape) ? &inst->shape.tuple_shapes[leaf] : &inst->shape;
}

const char *cpu_call_refusal(const Instruction *inst) {
  const Shape *s = &inst->shape;
  int parts = shape_is_tuple(s) ? s->tuple_count : 1;
  if (inst->operand_count + parts > CALL_MAX_BUFFERS) return "a runtime routine on more than 40 arrays";
  for (int i = 0; i < inst->operand_count + parts; i++) {
    const Shape *a = i < inst->operand_count ? &inst->operands[i]->shape : result_leaf(inst, i - inst->operand_count);
    if (shape_is_tuple(a) || a->element_size_bits) return "a tuple operand, or an array in a packed layout (E(n))";
  }
  return NULL;
}

CpuStep *cpu_add_call_step(CpuCompile *c, const Instruction *inst, int leaf_count, CpuCallFunction *call, void *state,
                           void (*free_state)(void *state)) {
  int n = inst->operand_count, count = n + leaf_count;
  int bindings[CALL_MAX_BUFFERS];
  const Shape *shapes[CALL_MAX_BUFFERS];
  /* cpu_call_refusal refused more arrays, tuples and packed layouts before
   * any code was made; this guards the arrays above. */
  bool ok = count <= CALL_MAX_BUFFERS;
  if (!ok) cpu_refuse(c, inst, "a runtime routine on more than 40 arrays");
  for (int i = 0; ok && i < count; i++) {
    shapes[i] = i < n ? &inst->operands[i]->shape : result_leaf(inst, i - n);
    bindings[i] = i < n ? cpu_binding_of(c, inst->operands[i], 0) : cpu_binding_of(c, inst, i - n);
    if (bindings[i] < 0) ok = cpu_refuse(c, inst, "an operand or a result the plan does not place");
  }
  if (!ok) {
    if (free_state) free_state(state);
    return NULL;
  }
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, count);
  memcpy(s->buffers, bindings, sizeof *bindings * (size_t)count);
  s->call = call;
  s->state = state;
  s->free_state = free_state;
  bool all_row_major = true;
  for (int i = 0; i < count; i++) all_row_major &= shape_is_row_major(shapes[i]);
  if (all_row_major) return s;
  RelayoutCall *r = mem_calloc(1, sizeof *r);
  *r = (RelayoutCall){.call = call, .state = state, .free_state = free_state, .buffer_count = count, .operand_count = n};
  for (int i = 0; i < count; i++) r->layouts[i] = shape_is_row_major(shapes[i]) ? NULL : shapes[i];
  s->call = relayout_call_run;
  s->state = r;
  s->free_state = relayout_call_free;
  return s;
}
