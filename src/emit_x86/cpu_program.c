/* Running a CPU program (cpu_program.h): bind storage, run the steps in
 * schedule order, hand back the result buffer. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_program.h"

CpuProgram *cpu_program_create(const BufferPlan *plan, const Shape *result_shape) {
  CpuProgram *p = mem_calloc(1, sizeof *p);
  p->plan = plan;
  p->result_shape = result_shape;
  p->temp_bytes = plan ? plan->temp_bytes : 0;
  pthread_mutex_init(&p->lock, NULL);
  return p;
}

/* The most tasks step s hands the pool at once, from what its compile
 * fixed; a routine (sort, a loop's body, ...) does not say, and may use
 * every thread. */
static int64_t step_task_count(const CpuProgram *p, const CpuStep *s) {
  switch (s->kind) {
  case CPU_STEP_KERNEL: return kernel_x86_task_count(s->kernel);
  case CPU_STEP_DOT: return gemm_task_count(p->gemm, &s->dot);
  case CPU_STEP_CALL: break;
  }
  return INT64_MAX;
}

void cpu_program_threads_start(CpuProgram *p) {
  int threads = p->threads ? p->threads : thread_pool_default_count();
  bool shared = false;
  for (int i = 0; i < p->step_count && !shared; i++) shared = step_task_count(p, &p->steps[i]) > 1;
  /* No step has two tasks to share: a second thread could only wait for
   * its wake-up. The steps run on the caller's thread (a NULL pool); so
   * does every step when the threads cannot be started. */
  if (threads > 1 && shared) p->pool = thread_pool_create(threads);
}

void cpu_program_free(CpuProgram *p) {
  if (!p) return;
  for (int i = 0; i < p->step_count; i++) {
    kernel_x86_free(p->steps[i].kernel);
    if (p->steps[i].free_state) p->steps[i].free_state(p->steps[i].state);
    mem_free(p->steps[i].buffers);
  }
  for (int i = p->program_binding_count; i < p->binding_count; i++) mem_free(p->bindings[i].data);
  mem_free(p->steps);
  mem_free(p->bindings);
  mem_free(p->copies);
  if (p->run_frame_made) cpu_frame_free(&p->run_frame);
  mem_free(p->run_parameters);
  gemm_plan_free(p->gemm);
  program_free(p->owned_program);
  thread_pool_free(p->pool);
  pthread_mutex_destroy(&p->lock);
  mem_free(p);
}

int cpu_program_add_binding(CpuProgram *p, const CpuBinding *b) {
  if (p->binding_count == p->binding_capacity) {
    p->binding_capacity = p->binding_capacity ? 2 * p->binding_capacity : 16;
    p->bindings = mem_realloc(p->bindings, (size_t)p->binding_capacity * sizeof *p->bindings);
  }
  p->bindings[p->binding_count] = *b;
  return p->binding_count++;
}

CpuStep *cpu_program_add_step(CpuProgram *p, CpuStepKind kind, const Instruction *inst, int buffer_count) {
  if (p->step_count == p->step_capacity) {
    p->step_capacity = p->step_capacity ? 2 * p->step_capacity : 16;
    p->steps = mem_realloc(p->steps, (size_t)p->step_capacity * sizeof *p->steps);
  }
  CpuStep *s = &p->steps[p->step_count++];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->inst = inst;
  s->buffer_count = buffer_count;
  s->buffers = mem_calloc((size_t)buffer_count + 1, sizeof *s->buffers);
  return s;
}

int64_t cpu_program_reserve_temp(CpuProgram *p, int64_t bytes) {
  int64_t at = (p->temp_bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  p->temp_bytes = at + bytes;
  return at;
}

CpuStep *cpu_program_add_kernel_step(CpuProgram *p, const Instruction *inst, CompiledKernel *ck, int buffer_count) {
  int64_t chunk_bytes = kernel_x86_chunk_sum_bytes(ck);
  CpuStep *s = cpu_program_add_step(p, CPU_STEP_KERNEL, inst, buffer_count + (chunk_bytes > 0));
  s->kernel = ck;
  if (chunk_bytes > 0) {
    CpuBinding chunk_sums = {.kind = BINDING_TEMP, .offset = cpu_program_reserve_temp(p, chunk_bytes)};
    int binding = cpu_program_add_binding(p, &chunk_sums);
    p->steps[p->step_count - 1].buffers[buffer_count] = binding;
  }
  return &p->steps[p->step_count - 1];
}

/* ---- the result buffer and the arguments' leaves ---- */

/* A host buffer's tuple shape may leave tuple_shapes NULL: count through
 * its elements. */
static int buffer_leaf_total(const HostBuffer *b) {
  if (!shape_is_tuple(&b->shape)) return 1;
  int n = 0;
  for (int i = 0; i < b->shape.tuple_count; i++) n += buffer_leaf_total(b->elements[i]);
  return n;
}

/* Puts b's array leaves' data, depth first, at leaves[*n...]. */
static void buffer_leaves(const HostBuffer *b, void **leaves, int *n) {
  if (!shape_is_tuple(&b->shape)) {
    leaves[(*n)++] = b->data;
    return;
  }
  for (int i = 0; i < b->shape.tuple_count; i++) buffer_leaves(b->elements[i], leaves, n);
}

/* ---- running ---- */

static void *binding_address(const CpuBinding *b, void *const *parameters, char *temp, void *const *results) {
  /* A program whose values are all empty has no temporary block: temp is
   * NULL, and NULL + 0 is undefined in C. */
  if (!temp && (b->kind == BINDING_TEMP || (b->kind == BINDING_PARAMETER && b->layout))) return NULL;
  switch (b->kind) {
  case BINDING_PARAMETER:
    if (!b->layout) return parameters[b->leaf];
    shape_relayout_copy(b->layout, parameters[b->leaf], temp + b->offset, true);
    return temp + b->offset;
  case BINDING_CONSTANT: return b->data;
  case BINDING_TEMP: return temp + b->offset;
  case BINDING_OUTPUT: return results[b->leaf];
  case BINDING_NONE: return NULL;
  }
  return NULL;
}

static bool step_run(const CpuProgram *p, const CpuStep *s, void **address, void **buffers, ThreadPool *pool,
                     Status *st) {
  for (int i = 0; i < s->buffer_count; i++) buffers[i] = address[s->buffers[i]];
  switch (s->kind) {
  case CPU_STEP_KERNEL:
    kernel_x86_run_with_chunk_sums(s->kernel, buffers, pool);
    return true;
  case CPU_STEP_CALL:
    return s->call(s, buffers, pool, st);
  case CPU_STEP_DOT: break;
  }
  GemmProblem problem = s->dot;
  problem.a = buffers[0];
  problem.b = buffers[1];
  problem.c = buffers[2];
  gemm_f32_batched(p->gemm, pool, &problem, NULL);
  return true;
}

/* ---- showing each instruction's value to an observer (--check, --find-nan) ---- */


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
static bool step_show(const CpuProgram *p, const CpuStep *s, void **address, const CpuWatch *watch, Status *st) {
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

bool cpu_frame_create(CpuFrame *f, const CpuProgram *p, Status *st) {
  memset(f, 0, sizeof *f);
  f->p = p;
  size_t rounded = (size_t)(p->temp_bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  f->temp = rounded ? mem_try_aligned_alloc(BUFFER_ALIGNMENT, rounded) : NULL;
  if (rounded && !f->temp)
    return status_error(st, STATUS_OUT_OF_MEMORY,
                        "out of memory: the temporary block needs %lld bytes", (long long)p->temp_bytes);
  f->address = mem_calloc((size_t)p->binding_count + 1, sizeof *f->address);
  int most = 1;
  for (int i = 0; i < p->step_count; i++)
    if (p->steps[i].buffer_count > most) most = p->steps[i].buffer_count;
  f->buffers = mem_calloc((size_t)most, sizeof *f->buffers);
  return true;
}

void cpu_frame_free(CpuFrame *f) {
  mem_free(f->buffers);
  mem_free(f->address);
  mem_free(f->temp);
  memset(f, 0, sizeof *f);
}

bool cpu_frame_run(CpuFrame *f, void *const *parameters, void *const *results, ThreadPool *pool, Status *st) {
  const CpuProgram *p = f->p;
  for (int i = 0; i < p->binding_count; i++)
    f->address[i] = binding_address(&p->bindings[i], parameters, f->temp, results);
  bool ok = true;
  for (int i = 0; i < p->step_count && ok; i++) {
    ok = step_run(p, &p->steps[i], f->address, f->buffers, pool, st);
    if (ok && f->watch && step_ends_instruction(p, i)) ok = step_show(p, &p->steps[i], f->address, f->watch, st);
  }
  for (int i = 0; i < p->copy_count && ok; i++) {
    const CpuResultCopy *c = &p->copies[i];
    if (c->bytes <= 0 || f->address[c->binding] == results[c->leaf]) continue;
    if (c->layout) shape_relayout_copy(c->layout, f->address[c->binding], results[c->leaf], false);
    else memmove(results[c->leaf], f->address[c->binding], (size_t)c->bytes);
  }
  return ok;
}

HostBuffer *cpu_program_run(CpuProgram *p, HostBuffer *const *args, int arg_count, Status *st) {
  return cpu_program_run_observed(p, args, arg_count, NULL, NULL, st);
}

/* The parameters' leaf addresses, depth first, into the program's array
 * (grown on the first run; the arguments' shapes were checked, so later
 * runs have as many leaves). Called under p->lock. The array is the
 * program's, not the run's: out of memory later in this run must not free
 * it (mem_untrack). */
static void **run_parameters_fill(CpuProgram *p, HostBuffer *const *args, int arg_count) {
  int leaf_count = 0;
  for (int i = 0; i < arg_count; i++) leaf_count += buffer_leaf_total(args[i]);
  if (leaf_count + 1 > p->run_parameter_capacity) {
    mem_free(p->run_parameters);
    p->run_parameters = NULL;
    p->run_parameter_capacity = 0;
    void **grown = mem_calloc((size_t)leaf_count + 1, sizeof *grown);
    mem_untrack(grown);
    p->run_parameters = grown;
    p->run_parameter_capacity = leaf_count + 1;
  }
  int at = 0;
  for (int i = 0; i < arg_count; i++) buffer_leaves(args[i], p->run_parameters, &at);
  return p->run_parameters;
}

/* The program's frame, made by its first run and kept for the next ones
 * (owned by the program: untracked, so that an unwind of a later step of
 * this run leaves it whole). Called under p->lock. */
static bool run_frame_ready(CpuProgram *p, Status *st) {
  if (p->run_frame_made) return true;
  if (!cpu_frame_create(&p->run_frame, p, st)) return false;
  mem_untrack(p->run_frame.temp);
  mem_untrack(p->run_frame.address);
  mem_untrack(p->run_frame.buffers);
  p->run_frame_made = true;
  return true;
}

/* Runs under the program's lock, on its kept frame. Out of memory while
 * running unwinds through here, so the lock is released before the unwind
 * goes on. */
static bool run_locked(CpuProgram *p, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                       const CpuWatch *watch, Status *st) {
  pthread_mutex_lock(&p->lock);
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) {
    p->run_frame.watch = NULL;
    pthread_mutex_unlock(&p->lock);
    mem_scope_rethrow(&scope);
  }
  bool ok = run_frame_ready(p, st);
  if (ok) {
    p->run_frame.watch = watch;
    ok = cpu_frame_run(&p->run_frame, run_parameters_fill(p, args, arg_count), result_leaves, p->pool, st);
    p->run_frame.watch = NULL;
  }
  mem_scope_end(&scope);
  pthread_mutex_unlock(&p->lock);
  return ok;
}

bool cpu_program_run_into(CpuProgram *p, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                          StepObserver *observe, void *context, Status *st) {
  CpuWatch watch = {observe, context};
  bool ok = run_locked(p, args, arg_count, result_leaves, observe ? &watch : NULL, st);
  return ok;
}

/* A run returning a new result allocates that result and nothing else:
 * the list of its leaves is on the stack unless it is long. The result is
 * not zeroed first: the program writes every byte of it, as a run into the
 * caller's memory must (a memset of the result was a second pass over it
 * every run). */
enum { RESULT_LEAVES_ON_STACK = 16 };

HostBuffer *cpu_program_run_observed(CpuProgram *p, HostBuffer *const *args, int arg_count, StepObserver *observe,
                                     void *context, Status *st) {
  int leaf_count = shape_leaf_count(p->result_shape), n = 0;
  void *on_stack[RESULT_LEAVES_ON_STACK];
  void **result_leaves =
      leaf_count <= RESULT_LEAVES_ON_STACK ? on_stack : mem_calloc((size_t)leaf_count + 1, sizeof *result_leaves);
  HostBuffer *result = host_buffer_create_leaves(p->result_shape, false, result_leaves, &n, st);
  if (result && !cpu_program_run_into(p, args, arg_count, result_leaves, observe, context, st)) {
    host_buffer_free(result);
    result = NULL;
  }
  if (result_leaves != on_stack) mem_free(result_leaves);
  return result;
}
