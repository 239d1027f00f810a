/* Running a CPU program (cpu_program.h): bind storage, run the steps in
 * schedule order, hand back the result buffer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_program.h"

CpuProgram *cpu_program_create(const BufferPlan *plan, const Shape *result_shape, int threads) {
  CpuProgram *p = calloc_or_exit(1, sizeof *p);
  p->plan = plan;
  p->result_shape = result_shape;
  p->temp_bytes = plan ? plan->temp_bytes : 0;
  pthread_mutex_init(&p->lock, NULL);
  /* A pool that cannot start threads runs everything on the caller. */
  p->pool = thread_pool_create(threads);
  return p;
}

void cpu_program_free(CpuProgram *p) {
  if (!p) return;
  for (int i = 0; i < p->step_count; i++) {
    kernel_x86_free(p->steps[i].kernel);
    if (p->steps[i].free_state) p->steps[i].free_state(p->steps[i].state);
    free(p->steps[i].buffers);
  }
  for (int i = 0; i < p->binding_count; i++) free(p->bindings[i].data);
  free(p->steps);
  free(p->bindings);
  free(p->copies);
  gemm_plan_free(p->gemm);
  thread_pool_free(p->pool);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

int cpu_program_add_binding(CpuProgram *p, const CpuBinding *b) {
  if (p->binding_count == p->binding_capacity) {
    p->binding_capacity = p->binding_capacity ? 2 * p->binding_capacity : 16;
    p->bindings = realloc_or_exit(p->bindings, (size_t)p->binding_capacity * sizeof *p->bindings);
  }
  p->bindings[p->binding_count] = *b;
  return p->binding_count++;
}

CpuStep *cpu_program_add_step(CpuProgram *p, CpuStepKind kind, const Instruction *inst, int buffer_count) {
  if (p->step_count == p->step_capacity) {
    p->step_capacity = p->step_capacity ? 2 * p->step_capacity : 16;
    p->steps = realloc_or_exit(p->steps, (size_t)p->step_capacity * sizeof *p->steps);
  }
  CpuStep *s = &p->steps[p->step_count++];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->inst = inst;
  s->buffer_count = buffer_count;
  s->buffers = calloc_or_exit((size_t)buffer_count + 1, sizeof *s->buffers);
  return s;
}

int64_t cpu_program_reserve_temp(CpuProgram *p, int64_t bytes) {
  int64_t at = (p->temp_bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  p->temp_bytes = at + bytes;
  return at;
}

void relayout_copy(const Shape *s, const void *src, void *dst, bool into_layout) {
  int64_t stride[AXLE_MAX_RANK], step = 1, index[AXLE_MAX_RANK] = {0};
  for (int i = 0; i < s->rank; i++) {
    stride[s->minor_to_major[i]] = step;
    step *= s->dims[s->minor_to_major[i]];
  }
  size_t size = (size_t)type_byte_size(s->type);
  int64_t count = shape_element_count(s);
  for (int64_t i = 0; i < count; i++) {
    int64_t at = 0;
    for (int d = 0; d < s->rank; d++) at += index[d] * stride[d];
    const char *from = (const char *)src + (size_t)(into_layout ? i : at) * size;
    memcpy((char *)dst + (size_t)(into_layout ? at : i) * size, from, size);
    for (int d = s->rank - 1; d >= 0 && ++index[d] == s->dims[d]; d--) index[d] = 0;
  }
}

/* ---- the result buffer and the arguments' leaves ---- */

static int shape_leaf_total(const Shape *s) {
  if (!shape_is_tuple(s)) return 1;
  int n = 0;
  for (int i = 0; i < s->tuple_count; i++) n += shape_leaf_total(&s->tuple_shapes[i]);
  return n;
}

/* A zeroed buffer of shape s; its array leaves' data, depth first, go to
 * leaves[*n...]. */
static HostBuffer *result_buffer_create(const Shape *s, void **leaves, int *n, Status *st) {
  if (!shape_is_tuple(s)) {
    HostBuffer *b = host_buffer_create(s, NULL, st);
    if (b) leaves[(*n)++] = b->data;
    return b;
  }
  HostBuffer *t = calloc(1, sizeof *t);
  if (t) t->elements = calloc((size_t)s->tuple_count + 1, sizeof *t->elements);
  if (!t || !t->elements) {
    free(t);
    status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  t->shape.type = TYPE_TUPLE;
  t->shape.tuple_count = s->tuple_count;
  for (int i = 0; i < s->tuple_count; i++) {
    t->elements[i] = result_buffer_create(&s->tuple_shapes[i], leaves, n, st);
    if (!t->elements[i]) {
      host_buffer_free(t);
      return NULL;
    }
  }
  return t;
}

/* Leaf `*leaf` (counting down, depth first) of b, or NULL. */
static void *buffer_leaf(const HostBuffer *b, int64_t *leaf) {
  if (!shape_is_tuple(&b->shape)) return (*leaf)-- == 0 ? b->data : NULL;
  for (int i = 0; i < b->shape.tuple_count; i++) {
    void *d = buffer_leaf(b->elements[i], leaf);
    if (d || *leaf < 0) return d;
  }
  return NULL;
}

/* ---- running ---- */

static void *binding_address(const CpuBinding *b, HostBuffer *const *args, char *temp, void **result_leaves) {
  int64_t leaf = b->leaf;
  switch (b->kind) {
  case BINDING_PARAMETER:
    if (!b->layout) return buffer_leaf(args[b->number], &leaf);
    relayout_copy(b->layout, buffer_leaf(args[b->number], &leaf), temp + b->offset, true);
    return temp + b->offset;
  case BINDING_CONSTANT: return b->data;
  case BINDING_TEMP: return temp + b->offset;
  case BINDING_OUTPUT: return result_leaves[b->leaf];
  case BINDING_NONE: return NULL;
  }
  return NULL;
}

static bool step_run(const CpuProgram *p, const CpuStep *s, void **address, void **buffers, Status *st) {
  for (int i = 0; i < s->buffer_count; i++) buffers[i] = address[s->buffers[i]];
  switch (s->kind) {
  case CPU_STEP_KERNEL:
    kernel_x86_run(s->kernel, buffers, p->pool);
    return true;
  case CPU_STEP_CALL:
    return s->call(s, buffers, p->pool, st);
  case CPU_STEP_DOT: break;
  }
  GemmProblem problem = s->dot;
  problem.a = buffers[0];
  problem.b = buffers[1];
  problem.c = buffers[2];
  gemm_f32_batched(p->gemm, p->pool, &problem, NULL);
  return true;
}

/* ---- showing each instruction's value to an observer (--check, --find-nan) ---- */

typedef struct Watch {
  StepObserver *observe;
  void *context;
} Watch;

/* An instruction may take several steps (an output fusion: its GEMM, then
 * its epilogue); its value is whole after the last. */
static bool step_ends_instruction(const CpuProgram *p, int i) {
  return i + 1 == p->step_count || p->steps[i + 1].inst != p->steps[i].inst;
}

/* TEST ONLY: AXLE_TEST_CORRUPT_STEP=NAME changes the first element of
 * instruction NAME's first leaf when it is observed (later steps read the
 * changed value), so that tests can see --check name a wrong kernel.
 * Plain runs never read it. */
static void leaf_corrupt_for_test(const Instruction *inst, const ObservedLeaf *leaf) {
  const char *name = getenv("AXLE_TEST_CORRUPT_STEP");
  if (!name || strcmp(name, inst->name) != 0 || shape_element_count(leaf->shape) == 0) return;
  void *data = (void *)leaf->data;
  switch (leaf->shape->type) {
  case TYPE_F32: *(float *)data = isfinite(*(float *)data) ? *(float *)data * 2 + 1 : 0; break;
  case TYPE_F64: *(double *)data = isfinite(*(double *)data) ? *(double *)data * 2 + 1 : 0; break;
  default: *(unsigned char *)data ^= 1; break;
  }
}

/* Hands the observer the leaves of the step's instruction, each where the
 * plan put it (an alias slot names its source's storage). */
static bool step_show(const CpuProgram *p, const CpuStep *s, void **address, const Watch *watch, Status *st) {
  enum { MAX_SHOWN = 256 };
  ObservedLeaf leaves[MAX_SHOWN];
  int n = 0;
  for (const BufferSlot *slot; n < MAX_SHOWN && (slot = buffer_plan_find(p->plan, s->inst, n)); n++) {
    const BufferSlot *owner = slot;
    if (owner->kind == BUFFER_ALIAS) owner = buffer_plan_find(p->plan, owner->source, owner->source_index);
    leaves[n] = (ObservedLeaf){.shape = slot->shape, .data = owner ? address[owner - p->plan->slots] : NULL};
  }
  if (n > 0 && leaves[0].data) leaf_corrupt_for_test(s->inst, &leaves[0]);
  return watch->observe(watch->context, s->inst, leaves, n, st);
}

/* Runs the steps with every binding at its address, showing each
 * instruction's value to watch if there is one; false when the temporary
 * block cannot be had or the observer stops the run. */
static bool program_run_steps(CpuProgram *p, HostBuffer *const *args, void **result_leaves, const Watch *watch,
                              Status *st) {
  int64_t temp_bytes = p->temp_bytes;
  size_t rounded = (size_t)(temp_bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  char *temp = rounded ? aligned_alloc(BUFFER_ALIGNMENT, rounded) : NULL;
  if (rounded && !temp)
    return status_error(st, STATUS_OUT_OF_MEMORY,
                        "out of memory: the temporary block needs %lld bytes", (long long)temp_bytes);
  void **address = calloc_or_exit((size_t)p->binding_count + 1, sizeof *address);
  int most = 1;
  for (int i = 0; i < p->step_count; i++)
    if (p->steps[i].buffer_count > most) most = p->steps[i].buffer_count;
  void **buffers = calloc_or_exit((size_t)most, sizeof *buffers);
  for (int i = 0; i < p->binding_count; i++)
    address[i] = binding_address(&p->bindings[i], args, temp, result_leaves);
  bool ok = true;
  pthread_mutex_lock(&p->lock);
  for (int i = 0; i < p->step_count && ok; i++) {
    ok = step_run(p, &p->steps[i], address, buffers, st);
    if (ok && watch && step_ends_instruction(p, i)) ok = step_show(p, &p->steps[i], address, watch, st);
  }
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->copy_count && ok; i++) {
    const CpuResultCopy *c = &p->copies[i];
    if (c->bytes <= 0) continue;
    if (c->layout) relayout_copy(c->layout, address[c->binding], result_leaves[c->leaf], false);
    else memcpy(result_leaves[c->leaf], address[c->binding], (size_t)c->bytes);
  }
  free(buffers);
  free(address);
  free(temp);
  return ok;
}

HostBuffer *cpu_program_run(CpuProgram *p, HostBuffer *const *args, int arg_count, Status *st) {
  return cpu_program_run_observed(p, args, arg_count, NULL, NULL, st);
}

HostBuffer *cpu_program_run_observed(CpuProgram *p, HostBuffer *const *args, int arg_count, StepObserver *observe,
                                     void *context, Status *st) {
  (void)arg_count;  /* checked against the entry by executable_run */
  Watch watch = {observe, context};
  int leaf_count = shape_leaf_total(p->result_shape), n = 0;
  void **result_leaves = calloc_or_exit((size_t)leaf_count + 1, sizeof *result_leaves);
  HostBuffer *result = result_buffer_create(p->result_shape, result_leaves, &n, st);
  if (result && !program_run_steps(p, args, result_leaves, observe ? &watch : NULL, st)) {
    host_buffer_free(result);
    result = NULL;
  }
  free(result_leaves);
  return result;
}
