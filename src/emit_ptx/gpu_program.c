/* Running a GPU program (gpu_program.h): place its device blocks once,
 * then per run stage the arguments up, launch in schedule order, copy the
 * result leaves back and synchronize once. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/gpu_program.h"

GpuProgram *gpu_program_create(const Shape *result_shape, const char *filename) {
  GpuProgram *p = mem_calloc(1, sizeof *p);
  p->result_shape = result_shape;
  p->filename = filename;
  p->current = &p->steps;
  pthread_mutex_init(&p->lock, NULL);
  return p;
}

void gpu_program_free(GpuProgram *p) {
  if (!p) return;
  for (int i = 0; i < p->launch_count; i++) mem_free(p->launches[i].buffers);
  for (int i = 0; i < p->binding_count; i++) mem_free(p->constant_data ? p->constant_data[i] : NULL);
  if (p->gpu.driver.library) {
    Status ignored = {0};
    gpu_context_enter(&p->gpu, &ignored);
    transfer_manager_free(&p->transfers);
    gpu_free(&p->gpu, p->io_block);
    gpu_free(&p->gpu, p->temp_block);
    gpu_free(&p->gpu, p->constant_block);
    if (p->module) p->gpu.driver.module_unload(p->module);
    gpu_device_close(&p->gpu);
  }
  if (p->ptx) ptx_builder_free(p->ptx);
  mem_free(p->ptx);
  mem_free(p->constant_data);
  mem_free(p->bindings);
  mem_free(p->launches);
  gpu_steps_free(&p->steps);
  mem_free(p->result_bindings);
  mem_free(p->result_layouts);
  pthread_mutex_destroy(&p->lock);
  mem_free(p);
}

static int64_t block_reserve(int64_t *block_bytes, int64_t bytes) {
  int64_t at = (*block_bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  *block_bytes = at + bytes;
  return at;
}

/* Parameters, outputs and constants take their place in their block here;
 * temporaries come with the plan's offset. */
int gpu_program_add_binding(GpuProgram *p, GpuBinding b, void *data) {
  if (p->binding_count == p->binding_capacity) {
    p->binding_capacity = p->binding_capacity ? 2 * p->binding_capacity : 16;
    p->bindings = mem_realloc(p->bindings, (size_t)p->binding_capacity * sizeof *p->bindings);
    p->constant_data = mem_realloc(p->constant_data, (size_t)p->binding_capacity * sizeof *p->constant_data);
  }
  if (b.kind == GPU_BINDING_PARAMETER || b.kind == GPU_BINDING_OUTPUT) b.offset = block_reserve(&p->io_bytes, b.bytes);
  if (b.kind == GPU_BINDING_CONSTANT) b.offset = block_reserve(&p->constant_bytes, b.bytes);
  if (b.kind == GPU_BINDING_TEMP && b.offset + b.bytes > p->temp_bytes) p->temp_bytes = b.offset + b.bytes;
  p->bindings[p->binding_count] = b;
  p->constant_data[p->binding_count] = data;
  return p->binding_count++;
}

GpuLaunch *gpu_program_add_launch(GpuProgram *p, const Instruction *inst, int buffer_count) {
  if (p->launch_count == p->launch_capacity) {
    p->launch_capacity = p->launch_capacity ? 2 * p->launch_capacity : 16;
    p->launches = mem_realloc(p->launches, (size_t)p->launch_capacity * sizeof *p->launches);
  }
  GpuLaunch *l = &p->launches[p->launch_count++];
  memset(l, 0, sizeof *l);
  l->inst = inst;
  l->buffer_count = buffer_count;
  l->buffers = mem_calloc((size_t)buffer_count + 1, sizeof *l->buffers);
  gpu_steps_add(p->current, GPU_STEP_LAUNCH, inst)->launch = p->launch_count - 1;
  return l;
}

GpuStep *gpu_steps_add(GpuSteps *list, GpuStepKind kind, const Instruction *inst) {
  if (list->count == list->capacity) {
    list->capacity = list->capacity ? 2 * list->capacity : 16;
    list->steps = mem_realloc(list->steps, (size_t)list->capacity * sizeof *list->steps);
  }
  GpuStep *s = &list->steps[list->count++];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->inst = inst;
  return s;
}

void gpu_steps_free(GpuSteps *list) {
  for (int i = 0; i < list->count; i++) {
    GpuStep *s = &list->steps[i];
    for (int k = 0; k < s->list_count; k++) gpu_steps_free(&s->lists[k]);
    mem_free(s->lists);
    gpu_collective_free(s->collective);
  }
  mem_free(list->steps);
  memset(list, 0, sizeof *list);
}

/* Bytes that one run moves each way, for the staging buffer. */
static void program_transfer_sizes(const GpuProgram *p, size_t *up, size_t *down) {
  *up = *down = 0;
  for (int i = 0; i < p->binding_count; i++)
    if (p->bindings[i].kind == GPU_BINDING_PARAMETER) *up += (size_t)p->bindings[i].bytes + 256;
  for (int l = 0; l < p->result_leaf_count; l++)
    if (p->result_bindings[l] >= 0) *down += (size_t)p->bindings[p->result_bindings[l]].bytes + 256;
}

bool gpu_program_place(GpuProgram *p, Status *st) {
  /* The whole need first, so that the message says what the module needs,
   * not which of its blocks happened to be allocated last. */
  char what[256];
  snprintf(what, sizeof what, "the module (arguments and results %lld bytes, temporaries %lld, constants %lld)",
           (long long)p->io_bytes, (long long)p->temp_bytes, (long long)p->constant_bytes);
  if (!gpu_check_free(&p->gpu, (size_t)(p->io_bytes + p->temp_bytes + p->constant_bytes), what, st)) return false;
  if ((p->io_bytes && !gpu_alloc(&p->gpu, (size_t)p->io_bytes, "the block of arguments and results", &p->io_block, st)) ||
      (p->temp_bytes && !gpu_alloc(&p->gpu, (size_t)p->temp_bytes, "the temporary block", &p->temp_block, st)) ||
      (p->constant_bytes && !gpu_alloc(&p->gpu, (size_t)p->constant_bytes, "the constants", &p->constant_block, st)))
    return false;
  const CUdeviceptr base[] = {
      [GPU_BINDING_NONE] = 0, [GPU_BINDING_PARAMETER] = p->io_block, [GPU_BINDING_OUTPUT] = p->io_block,
      [GPU_BINDING_TEMP] = p->temp_block, [GPU_BINDING_CONSTANT] = p->constant_block};
  for (int i = 0; i < p->binding_count; i++) {
    GpuBinding *b = &p->bindings[i];
    b->address = b->kind == GPU_BINDING_NONE || b->bytes == 0 ? 0 : base[b->kind] + (CUdeviceptr)b->offset;
  }
  size_t up, down;
  program_transfer_sizes(p, &up, &down);
  if (!transfer_manager_create(&p->transfers, &p->gpu, up, down, st)) return false;
  /* Constants go up once, through pageable memory: this is compile time,
   * and they are then the device's for the executable's life. */
  for (int i = 0; i < p->binding_count; i++) {
    const GpuBinding *b = &p->bindings[i];
    if (b->kind != GPU_BINDING_CONSTANT || b->bytes == 0) continue;
    if (!gpu_copy_to_device(&p->gpu, b->address, p->constant_data[i], (size_t)b->bytes, st)) return false;
  }
  if (!gpu_synchronize(&p->gpu, st)) return false;
  for (int i = 0; i < p->binding_count; i++) {
    mem_free(p->constant_data[i]);
    p->constant_data[i] = NULL;
  }
  return true;
}

/* ---- running ---- */

/* Leaf `*leaf` (counting down, depth first) of b, or NULL. */
static const void *argument_leaf(const HostBuffer *b, int64_t *leaf) {
  if (!shape_is_tuple(&b->shape)) return (*leaf)-- == 0 ? b->data : NULL;
  for (int i = 0; i < b->shape.tuple_count; i++) {
    const void *d = argument_leaf(b->elements[i], leaf);
    if (d || *leaf < 0) return d;
  }
  return NULL;
}

/* A failed launch names the kernel and points at the instruction's line. */
static bool launch_run(GpuProgram *p, const GpuLaunch *l, const CUdeviceptr *addresses, CUdeviceptr *pointers,
                       void **params, Status *st) {
  for (int i = 0; i < l->buffer_count; i++) {
    pointers[i] = addresses ? addresses[l->buffers[i]] : p->bindings[l->buffers[i]].address;
    params[i] = &pointers[i];
  }
  for (int i = 0; i < l->scalar_count; i++) params[l->buffer_count + i] = (void *)&l->scalars[i];
  CUtensorMap maps[GPU_LAUNCH_MAX_TENSOR_MAPS];
  bool ok = true;
  for (int i = 0; ok && i < l->tensor_map_count; i++) {
    const GpuLaunchTensorMap *m = &l->tensor_maps[i];
    ok = gpu_tensor_map_encode(&p->gpu, &m->shape, pointers[m->buffer], &maps[i], l->entry, st);
    params[l->buffer_count + l->scalar_count + i] = &maps[i];
  }
  const unsigned grid[3] = {l->grid, 1, 1}, block[3] = {l->block, 1, 1};
  if (ok && gpu_launch(&p->gpu, l->function, l->entry, grid, block, l->shared_bytes, params, st)) return true;
  return gpu_launch_locate(p, l, st);
}

bool gpu_launch_locate(const GpuProgram *p, const GpuLaunch *l, Status *st) {
  char message[sizeof st->message];
  snprintf(message, sizeof message, "%s", st->message);
  SourceLoc loc = instruction_source_loc(l->inst);
  return status_error_at(st, st->code, p->filename, loc, "%s (for %s)", message, l->inst->name);
}

/* What running a step list needs besides the steps. */
typedef struct StepRun {
  GpuProgram *p;
  const CUdeviceptr *addresses;
  CUdeviceptr *pointers;
  void **params;
  const GpuWatch *watch;  /* NULL but in a watched run (gpu_observe.c) */
  Status *st;
} StepRun;

static bool steps_run(const StepRun *r, const GpuSteps *list);

static CUdeviceptr step_address(const StepRun *r, int binding) {
  return r->addresses ? r->addresses[binding] : r->p->bindings[binding].address;
}

/* A control step's failure names what it was doing and points at its line. */
static bool step_fail(const StepRun *r, const GpuStep *s, const char *doing) {
  char message[sizeof r->st->message];
  snprintf(message, sizeof message, "%s", r->st->message);
  return status_error_at(r->st, r->st->code, r->p->filename, s->inst->loc, "%s (%s for %s)", message, doing,
                         s->inst->name);
}

/* The loop's pred or the conditional's branch index, waited for: the host
 * decides what runs next. */
static bool selector_download(const StepRun *r, const GpuStep *s, int64_t *value) {
  bool is_pred = s->kind == GPU_STEP_WHILE || s->selector_is_pred;
  uint8_t pred = 0;
  int32_t index = 0;
  CUdeviceptr at = step_address(r, s->selector);
  bool ok = is_pred ? gpu_copy_to_host(&r->p->gpu, &pred, at, sizeof pred, r->st)
                    : gpu_copy_to_host(&r->p->gpu, &index, at, sizeof index, r->st);
  if (!ok) return step_fail(r, s, is_pred && s->kind == GPU_STEP_WHILE ? "downloading the loop's condition"
                                                                       : "downloading the branch index");
  *value = is_pred ? pred != 0 : index;
  return true;
}

static bool loop_run(const StepRun *r, const GpuStep *s) {
  for (;;) {
    int64_t more = 0;
    if (!steps_run(r, &s->lists[0]) || !selector_download(r, s, &more)) return false;
    if (!more) return true;
    if (!steps_run(r, &s->lists[1])) return false;
  }
}

/* A pred picks branch 0 when true; an index out of range the last branch,
 * as XLA does. */
static bool conditional_run(const StepRun *r, const GpuStep *s) {
  int64_t index = 0;
  if (!selector_download(r, s, &index)) return false;
  int last = s->list_count - 1;
  int pick = s->selector_is_pred ? (index ? 0 : 1) : index < 0 || index > last ? last : (int)index;
  return steps_run(r, &s->lists[pick]);
}

static bool step_run(const StepRun *r, const GpuStep *s) {
  switch (s->kind) {
  case GPU_STEP_LAUNCH:
    return launch_run(r->p, &r->p->launches[s->launch], r->addresses, r->pointers, r->params, r->st);
  case GPU_STEP_COPY: {
    CUdeviceptr from = step_address(r, s->from), to = step_address(r, s->to);
    if (s->bytes == 0 || from == to) return true;
    return gpu_copy_on_device(&r->p->gpu, to, from, (size_t)s->bytes, r->st) || step_fail(r, s, "copying a value");
  }
  case GPU_STEP_WHILE: return loop_run(r, s);
  case GPU_STEP_CONDITIONAL: return conditional_run(r, s);
  case GPU_STEP_COLLECTIVE:
    return gpu_collective_run(r->p, s->collective, r->addresses, r->st) || step_fail(r, s, "running a collective");
  }
  return false;
}

/* A watch sees the entry's own list, step by step; the lists inside a
 * loop or a conditional are part of their step. */
static bool steps_run(const StepRun *r, const GpuSteps *list) {
  bool watched = r->watch && list == &r->p->steps;
  for (int i = 0; i < list->count; i++) {
    if (!step_run(r, &list->steps[i])) return false;
    if (watched && !r->watch->after_step(r->watch, r->p, i, r->st)) return false;
  }
  return true;
}

static bool launch_all(GpuProgram *p, const CUdeviceptr *addresses, const GpuWatch *watch, Status *st) {
  int most = 1;
  for (int i = 0; i < p->launch_count; i++) {
    const GpuLaunch *l = &p->launches[i];
    if (l->buffer_count + l->scalar_count + l->tensor_map_count > most)
      most = l->buffer_count + l->scalar_count + l->tensor_map_count;
  }
  StepRun r = {.p = p, .addresses = addresses, .watch = watch, .st = st};
  r.pointers = mem_calloc((size_t)most, sizeof *r.pointers);
  r.params = mem_calloc((size_t)most, sizeof *r.params);
  bool ok = steps_run(&r, &p->steps);
  mem_free(r.params);
  mem_free(r.pointers);
  return ok;
}

bool gpu_program_launch_all(GpuProgram *p, const CUdeviceptr *addresses, Status *st) {
  return launch_all(p, addresses, NULL, st);
}

static bool program_run_launches(GpuProgram *p, HostBuffer *const *args, void *const *result_leaves,
                                 const GpuWatch *watch, Status *st) {
  bool ok = true;
  for (int i = 0; i < p->binding_count && ok; i++) {
    const GpuBinding *b = &p->bindings[i];
    if (b->kind != GPU_BINDING_PARAMETER || b->bytes == 0) continue;
    int64_t leaf = b->leaf;
    ok = transfer_to_device(&p->transfers, b->address, argument_leaf(args[b->number], &leaf), (size_t)b->bytes,
                            b->layout, st);
  }
  ok = ok && launch_all(p, NULL, watch, st);
  for (int l = 0; l < p->result_leaf_count && ok; l++) {
    const GpuBinding *b = &p->bindings[p->result_bindings[l]];
    if (b->bytes)
      ok = transfer_to_host(&p->transfers, result_leaves[l], b->address, (size_t)b->bytes, p->result_layouts[l], st);
  }
  /* Always wait: the stream must be idle before the staging is reused. */
  Status wait = {0};
  bool finished = transfer_manager_finish(&p->transfers, ok ? st : &wait);
  return ok && finished;
}

bool gpu_program_run_into(GpuProgram *p, HostBuffer *const *args, void *const *result_leaves, Status *st) {
  return gpu_program_run_watched_into(p, args, result_leaves, NULL, st);
}

bool gpu_program_run_watched_into(GpuProgram *p, HostBuffer *const *args, void *const *result_leaves,
                                  const GpuWatch *watch, Status *st) {
  pthread_mutex_lock(&p->lock);
  MemScope scope;  /* out of memory unwinds past the lock: release it first */
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) {
    pthread_mutex_unlock(&p->lock);
    mem_scope_rethrow(&scope);
  }
  bool ok = gpu_context_enter(&p->gpu, st) && program_run_launches(p, args, result_leaves, watch, st);
  mem_scope_end(&scope);
  pthread_mutex_unlock(&p->lock);
  return ok;
}

HostBuffer *gpu_program_run(GpuProgram *p, HostBuffer *const *args, int arg_count, Status *st) {
  (void)arg_count;  /* checked against the entry by executable_run */
  return gpu_program_run_watched(p, args, NULL, st);
}

HostBuffer *gpu_program_run_watched(GpuProgram *p, HostBuffer *const *args, const GpuWatch *watch, Status *st) {
  void **result_leaves = mem_calloc((size_t)p->result_leaf_count + 1, sizeof *result_leaves);
  int n = 0;
  HostBuffer *result = host_buffer_create_leaves(p->result_shape, true, result_leaves, &n, st);
  if (result && !gpu_program_run_watched_into(p, args, result_leaves, watch, st)) {
    host_buffer_free(result);
    result = NULL;
  }
  mem_free(result_leaves);
  return result;
}
