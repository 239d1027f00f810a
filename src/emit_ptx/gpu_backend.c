/* The GPU backend's entry in the backend table (src/runtime/backend.h).
 *
 * compile picks the target: the device's compute capability, or a named
 * one (--target sm_90a), which with --compile-only needs no driver and no
 * device, so a machine without a GPU sees every kernel's PTX (--dump).
 * Otherwise it opens the CUDA driver and the device (so that a machine
 * without them gets the message a user needs: "no CUDA driver", "no CUDA
 * device"). Then it builds the entry's program (src/opt/program.h: every
 * kernel lowered there, once, and the programs of called computations
 * nested) and walks the entry in its scheduled order, turning it into a
 * GpuProgram (gpu_program.h): parameters, constants, tuples,
 * get-tuple-elements and bitcasts take no launch (the buffer plan names
 * their storage); the families that are not one kernel of the kernel IR
 * (dots, convolutions, sorts, control flow, ...) go to their own files
 * (gpu_compile.h lists them); every other instruction is its step's kernel,
 * written as PTX (src/emit_ptx/ptx_kernel.c). All kernels go into one
 * module, which the driver loads when there is a device, so a kernel the
 * JIT rejects fails here with its log. Then the device blocks are
 * allocated and the constants uploaded, once. What has no kernel yet is a
 * located refusal here, at compile time: never a silent fallback to the
 * interpreter. run is gpu_program_run. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_kernel.h"
#include "runtime/backend.h"
#include "runtime/executable.h"

bool gpu_refuse(GpuCompile *c, const Instruction *inst, const char *why) {
  return backend_refuse(c->st, c->m, inst, "GPU", why, "");
}

/* ---- storage ---- */

int gpu_binding_at(const GpuCompile *c, int at) {
  if (at < 0) return -1;
  return c->slot_bindings ? c->slot_bindings[at] : at;
}

int gpu_binding_of(const GpuCompile *c, const Instruction *inst, int leaf) {
  return gpu_binding_at(c, program_binding_of(c->program, inst, leaf));
}

/* A packed (E(n)) array the GPU cannot address in any layout (the stage
 * records only the ones no target can): refused at inst. */
static bool packed_refused(GpuCompile *c, const ProgramBinding *pb, const char *what) {
  if (!pb->shape || shape_is_tuple(pb->shape) || !pb->shape->element_size_bits) return false;
  char why[96];
  snprintf(why, sizeof why, "%s in a packed layout (E(n))", what);
  return !gpu_refuse(c, pb->inst, why);
}

int gpu_bind_constant(GpuCompile *c, int at) {
  const ProgramBinding *pb = &c->program->bindings[at];
  if (pb->unsupported) return gpu_refuse(c, pb->inst, pb->unsupported) - 1;
  if (pb->kind != BINDING_CONSTANT) return gpu_refuse(c, pb->inst, "a constant without storage") - 1;
  if (packed_refused(c, pb, "a constant")) return -1;
  void *data = mem_malloc((size_t)(pb->bytes ? pb->bytes : 1));
  if (pb->bytes) memcpy(data, pb->data, (size_t)pb->bytes);
  GpuBinding b = {.kind = GPU_BINDING_CONSTANT, .bytes = pb->bytes};
  return gpu_program_add_binding(c->p, b, data);
}

/* Whether binding `at` is a result leaf the stage writes in another layout
 * than the caller's (a temporary it copies out of): on the device it is
 * an output, read back through its layout (bind_result). */
static bool result_in_other_layout(const Program *p, int at) {
  for (int i = 0; i < p->copy_count; i++)
    if (p->copies[i].binding == at && p->copies[i].layout) return true;
  return false;
}

/* The device-side view of the entry program's binding of plan slot `at`
 * (the stage's bindings 0.. are the plan's slots, in order): parameters
 * and outputs in the I/O block, constants uploaded, temporaries at their
 * offset in the temporary block. */
static bool bind_entry_slot(GpuCompile *c, int at) {
  const ProgramBinding *pb = &c->program->bindings[at];
  if (pb->kind == BINDING_CONSTANT || pb->unsupported) return gpu_bind_constant(c, at) >= 0;
  bool array = pb->shape && !shape_is_tuple(pb->shape);
  GpuBinding b = {.kind = GPU_BINDING_NONE, .bytes = array ? c->plan->slots[at].size : 0};
  if (pb->kind == BINDING_PARAMETER) {
    if (packed_refused(c, pb, "a parameter")) return false;
    /* the stage's leaf counts across all parameters; the device's, within one */
    b = (GpuBinding){.kind = GPU_BINDING_PARAMETER, .number = pb->number, .leaf = pb->inst_leaf,
                     .bytes = b.bytes, .layout = pb->layout};
  } else if (pb->kind == BINDING_TEMP && !result_in_other_layout(c->program, at)) {
    b.kind = GPU_BINDING_TEMP;
    b.offset = pb->offset;
  } else if (pb->kind == BINDING_OUTPUT || pb->kind == BINDING_TEMP) {
    b.kind = GPU_BINDING_OUTPUT;
  }
  if (b.kind == GPU_BINDING_NONE) b.bytes = 0;
  gpu_program_add_binding(c->p, b, NULL);
  return true;
}

/* Every root leaf is copied back from the binding that holds it (an
 * output, or a parameter or constant returned as it is). */
static bool bind_result(GpuCompile *c) {
  const Instruction *root = c->m->entry->root;
  int leaves = 0;
  while (buffer_plan_find(c->plan, root, leaves)) leaves++;
  c->p->result_leaf_count = leaves;
  c->p->result_bindings = mem_calloc((size_t)leaves + 1, sizeof *c->p->result_bindings);
  c->p->result_layouts = mem_calloc((size_t)leaves + 1, sizeof *c->p->result_layouts);
  for (int l = 0; l < leaves; l++) {
    int b = gpu_binding_of(c, root, l);
    if (b < 0) return gpu_refuse(c, root, "a result leaf without storage");
    /* The root's leaf names the storage's bytes in its own shape (a bitcast
     * may have changed the layout): that is the layout to read them in. */
    const Shape *shape = buffer_plan_find(c->plan, root, l)->shape;
    if (shape->element_size_bits) return gpu_refuse(c, root, "a result in a packed layout (E(n))");
    if (!shape_is_row_major(shape)) c->p->result_layouts[l] = shape;
    c->p->result_bindings[l] = b;
  }
  return true;
}

/* ---- kernels ---- */

const ProgramStep *gpu_step_of(const GpuCompile *c, const Instruction *inst) {
  const Program *p = c->program;
  for (int i = 0; p && i < p->step_count; i++)
    if (p->steps[i].inst == inst && !p->steps[i].value) return &p->steps[i];
  return NULL;
}

GpuLaunch *gpu_add_launch(GpuCompile *c, const Instruction *inst, const char *entry, unsigned grid, unsigned block,
                          const int *buffers, int buffer_count, const int64_t *scalars, int scalar_count) {
  if (scalar_count > GPU_LAUNCH_MAX_SCALARS) {
    gpu_refuse(c, inst, "a kernel with more scalar parameters than a launch holds");
    return NULL;
  }
  for (int i = 0; i < buffer_count; i++)
    if (buffers[i] < 0) {
      gpu_refuse(c, inst, "a kernel buffer the plan does not place");
      return NULL;
    }
  GpuLaunch *l = gpu_program_add_launch(c->p, inst, buffer_count);
  snprintf(l->entry, sizeof l->entry, "%s", entry);
  l->grid = grid ? grid : 1;
  l->block = block;
  memcpy(l->buffers, buffers, (size_t)buffer_count * sizeof *buffers);
  l->scalar_count = scalar_count;
  if (scalar_count) memcpy(l->scalars, scalars, (size_t)scalar_count * sizeof *scalars);
  return l;
}

int gpu_reserve_temp(GpuCompile *c, int64_t bytes) {
  GpuProgram *p = c->p;
  int64_t at = (p->temp_bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  GpuBinding b = {.kind = GPU_BINDING_TEMP, .offset = at, .bytes = bytes};
  return gpu_program_add_binding(p, b, NULL);
}

void gpu_entry_name(const GpuCompile *c, const Instruction *inst, const char *suffix, char *out, size_t size) {
  char base[128];
  ptx_entry_name(inst->name, base, sizeof base);
  snprintf(out, size, "k%d_%s%s%s", c->p->launch_count, base, suffix && *suffix ? "_" : "", suffix ? suffix : "");
}

bool gpu_step_buffers(GpuCompile *c, const ProgramStep *step, int product, int *out) {
  const Kernel *k = step->kernel;
  for (int i = 0; i < step->buffer_count; i++) {
    int at = step->buffers[i];
    bool constant = i < k->input_count && k->inputs[i].constant;
    out[i] = at == PROGRAM_PRODUCT_INPUT ? product : constant ? gpu_bind_constant(c, at) : gpu_binding_at(c, at);
    if (out[i] < 0) return constant ? false : gpu_refuse(c, step->inst, "a kernel buffer the plan does not place");
  }
  return true;
}

bool gpu_compile_kernel(GpuCompile *c, const Instruction *inst) {
  for (int i = 0; i < inst->operand_count; i++)
    if (shape_is_tuple(&inst->operands[i]->shape)) return gpu_refuse(c, inst, "a tuple-shaped operand");
  /* only a kernel step's buffers are its kernel's (program.h) */
  const ProgramStep *step = gpu_step_of(c, inst);
  const Kernel *k = step && step->kind == PROGRAM_STEP_KERNEL ? step->kernel : NULL;
  if (!k) return gpu_refuse(c, inst, step && step->unsupported ? step->unsupported : "an instruction no kernel computes");
  GpuLaunch *l = gpu_program_add_launch(c->p, inst, k->input_count + k->output_count);
  char base[128];
  ptx_entry_name(k->name, base, sizeof base);
  snprintf(l->entry, sizeof l->entry, "k%d_%s", c->p->launch_count - 1, base);
  PtxKernelShape shape;
  Status why = {0};
  if (!ptx_kernel_emit(c->ptx, k, l->entry, &shape, &why)) return gpu_refuse(c, inst, why.message);
  /* Kernels loop grid-stride, so a grid capped below the limit of
   * gridDim.x (2^31 - 1) is still correct. */
  l->grid = (unsigned)(shape.blocks < (1 << 30) ? shape.blocks : (1 << 30));
  l->block = (unsigned)shape.block_threads;
  return gpu_step_buffers(c, step, -1, l->buffers);
}

/* ---- the walk ---- */

static bool fusion_contains(const Instruction *fusion, Opcode opcode) {
  const Computation *f = fusion->called_count ? fusion->called[0] : NULL;
  for (int i = 0; f && i < f->instruction_count; i++)
    if (f->instructions[i]->opcode == opcode) return true;
  return false;
}

static bool compile_fusion(GpuCompile *c, const Instruction *inst) {
  if (fusion_contains(inst, OP_CONVOLUTION)) return gpu_compile_convolution_fusion(c, inst);
  if (inst->attrs.fusion_kind == FUSION_OUTPUT || fusion_contains(inst, OP_DOT) ||
      fusion_contains(inst, OP_SCALED_DOT) || fusion_contains(inst, OP_RAGGED_DOT))
    return gpu_compile_dot_fusion(c, inst);
  /* A fusion is one kernel. XLA's own fusions may hold what no kernel
   * computes (the single op of a wrapped_scatter or wrapped_reduce-window;
   * a kCustom __ynn_fusion): the program stage makes such a fusion a call,
   * which runs its computation as steps of its own, as on the CPU. */
  const ProgramStep *step = gpu_step_of(c, inst);
  if (step && step->kind == PROGRAM_STEP_CALL) return gpu_compile_control(c, inst);
  return gpu_compile_kernel(c, inst);
}

bool gpu_compile_instruction(GpuCompile *c, const Instruction *inst) {
  switch (inst->opcode) {
  case OP_PARAMETER:
  case OP_CONSTANT:
  case OP_TUPLE:
  case OP_GET_TUPLE_ELEMENT:
  case OP_BITCAST:
    return true;  /* storage only: the plan names it */
  case OP_FUSION: return compile_fusion(c, inst);
  case OP_WHILE:
  case OP_CONDITIONAL:
  case OP_CALL:
  case OP_ASYNC_START:
  case OP_ASYNC_UPDATE:
  case OP_ASYNC_DONE:
  case OP_COPY_START:
  case OP_COPY_DONE:
  case OP_ADD_DEPENDENCY:
  case OP_AFTER_ALL:
  case OP_DOMAIN:
  case OP_OPTIMIZATION_BARRIER:
  case OP_REPLICA_ID:
  case OP_PARTITION_ID:
  case OP_GET_DIMENSION_SIZE:
  case OP_SET_DIMENSION_SIZE:
  case OP_DYNAMIC_RESHAPE:
    return gpu_compile_control(c, inst);
  case OP_DOT:
  case OP_SCALED_DOT:
  case OP_RAGGED_DOT:
    return gpu_compile_dot(c, inst);
  case OP_CONVOLUTION: return gpu_compile_convolution(c, inst);
  case OP_SORT:
  case OP_TOPK:
    return gpu_compile_sort(c, inst);
  case OP_SCATTER:
  case OP_SELECT_AND_SCATTER:
    return gpu_compile_scatter(c, inst);
  case OP_RNG:
  case OP_RNG_BIT_GENERATOR:
  case OP_RNG_GET_AND_UPDATE_STATE:
    return gpu_compile_rng(c, inst);
  case OP_FFT: return gpu_compile_fft(c, inst);
  case OP_CHOLESKY:
  case OP_TRIANGULAR_SOLVE:
    return gpu_compile_linalg(c, inst);
  case OP_CUSTOM_CALL: return gpu_compile_custom_call(c, inst);
  default:
    /* the collectives of one replica, and what no family takes (refused there) */
    if (opcode_form(inst->opcode) == FORM_OTHER && opcode_cost(inst->opcode) == COST_CONTROL)
      return gpu_compile_control(c, inst);
    return gpu_compile_kernel(c, inst);
  }
}

/* The module's kernels loaded, and each launch's function found. */
static bool program_load(GpuProgram *p, const char *ptx, Status *st) {
  if (!gpu_module_load(&p->gpu, ptx, "the module's kernels", &p->module, st)) return false;
  for (int i = 0; i < p->launch_count; i++) {
    GpuLaunch *l = &p->launches[i];
    if (!gpu_function_get(&p->gpu, p->module, l->entry, &l->function, st)) return false;
    /* past 48 KB a kernel's dynamic shared memory has to be asked for */
    if (l->shared_bytes > 48 * 1024 && !gpu_function_allow_shared(&p->gpu, l->function, l->entry, l->shared_bytes, st))
      return gpu_launch_locate(p, l, st);
  }
  return true;
}

/* Every binding and launch of the entry, and the PTX of its kernels in
 * c->ptx, from the entry's program (src/opt/program.h: the kernels lowered
 * there, once); nothing touches a device yet. */
static bool gpu_compile_steps(GpuCompile *c) {
  const Computation *entry = c->m->entry;
  ProgramOptions options = {.across_devices = c->nccl != NULL};
  Program *program = program_build(c->m, c->plan, &options);
  c->program = program;
  bool ok = true;
  for (int i = 0; ok && i < c->plan->slot_count; i++) ok = bind_entry_slot(c, i);
  ok = ok && bind_result(c);
  for (int i = 0; ok && i < entry->instruction_count; i++) ok = gpu_compile_instruction(c, entry->instructions[i]);
  c->program = NULL;
  program_free(program);
  return ok;
}

bool gpu_write_ptx(const Module *m, const BufferPlan *plan, const char *target_name, bool no_wgmma, StrBuf *out,
                   Status *st) {
  PtxTarget target;
  if (!ptx_target_from_name(target_name, &target, st) || !eval_check_supported(m, st)) return false;
  GpuProgram *p = gpu_program_create(&m->entry->root->shape, m->filename);
  PtxBuilder ptx;
  ptx_builder_init(&ptx, &target);
  GpuCompile c = {.p = p, .m = m, .plan = plan, .ptx = &ptx, .target = &target, .no_wgmma = no_wgmma,
                  .no_device = true, .st = st};
  bool ok = gpu_compile_steps(&c);
  if (ok) strbuf_printf(out, "%s", ptx_builder_text(&ptx));
  ptx_builder_free(&ptx);
  gpu_program_free(p);
  return ok;
}

/* A device that cannot be opened, when the caller only compiles: the
 * message says how to compile with none. */
static bool device_missing_hint(Status *st) {
  char message[sizeof st->message];
  snprintf(message, sizeof message, "%s", st->message);
  return status_error(st, st->code,
                      "%s; to compile without a GPU, name the target: --target sm_80, sm_86, sm_89, sm_90a or sm_90",
                      message);
}

/* The target the PTX is written for and, unless the caller only compiles
 * for a named target, the device it runs on (docs/gpu.md):
 *   gpu_target T and compile_only   T; no driver, no device opened
 *   gpu_target T                    T, on a device whose capability runs T's PTX
 *   neither                         the device's own compute capability
 * Without a device and without a target there is no default: the PTX of
 * sm_80 and sm_90a differ (mma.sync or wgmma), so the caller names it. */
static bool target_choose(const Executable *exe, GpuProgram *p, PtxTarget *target, Status *st) {
  bool named = exe->gpu_target[0] != 0;
  if (named && !ptx_target_from_name(exe->gpu_target, target, st)) return false;
  if (named && exe->compile_only) return true;
  if (!gpu_device_open_ordinal(&p->gpu, exe->device_index, st)) {
    if (exe->compile_only) device_missing_hint(st);
    return false;
  }
  const GpuDevice *gpu = &p->gpu;
  if (!named) return ptx_target_for_device(gpu->compute_major, gpu->compute_minor, target, st);
  if (ptx_target_runs_on(target, gpu->compute_major, gpu->compute_minor)) return true;
  return status_error(st, STATUS_UNSUPPORTED,
                      "PTX for --target %s does not run on device %d (%s, compute capability %d.%d)%s; "
                      "name a target it runs, or leave --target out to compile for the device",
                      target->name, exe->device_index, gpu->name, gpu->compute_major, gpu->compute_minor,
                      target->arch_specific ? ": an 'a' target runs on its own capability only" : "");
}

/* Steps and PTX for the target; then, with a device open, the module
 * loaded (a kernel the JIT rejects fails here, with its log) and the
 * device blocks placed. The PTX stays with the program for --dump. */
static bool compile_for_target(const Executable *exe, const Module *m, GpuProgram *p, const PtxTarget *target,
                               Status *st) {
  PtxBuilder ptx;
  ptx_builder_init(&ptx, target);
  GpuCompile c = {.p = p, .m = m, .plan = exe->plan, .ptx = &ptx, .target = target, .no_wgmma = exe->gpu_no_wgmma,
                  .no_device = !p->gpu.driver.library, .replica = exe->device_index % exe->replica_count,
                  .partition = exe->device_index / exe->replica_count, .replica_count = exe->replica_count,
                  .partition_count = exe->partition_count, .nccl = exe->nccl, .st = st};
  bool ok = gpu_compile_steps(&c);
  if (ok && !c.no_device) ok = p->loaded = program_load(p, ptx_builder_text(&ptx), st) && gpu_program_place(p, st);
  if (ok && exe->listings) {
    p->ptx = mem_calloc(1, sizeof *p->ptx);
    *p->ptx = ptx;  /* the program's now */
  } else {
    ptx_builder_free(&ptx);
  }
  return ok;
}

static bool gpu_compile(Executable *exe, Status *st) {
  exe->program = NULL;
  const Module *m = executable_module_to_run(exe);
  if (!exe->plan)
    return status_error(st, STATUS_UNSUPPORTED, "the GPU backend compiles optimized modules only (drop --no-opt)");
  if (!eval_check_supported_on(m, exe->replica_count, exe->partition_count, st)) return false;
  GpuProgram *p = gpu_program_create(&m->entry->root->shape, m->filename);
  PtxTarget target;
  if (!target_choose(exe, p, &target, st) || !compile_for_target(exe, m, p, &target, st)) {
    gpu_program_free(p);
    return false;
  }
  exe->program = p;
  return true;
}

/* A program compiled for a target with no device holds no kernels to run. */
static bool program_runs(const Executable *exe, Status *st) {
  const GpuProgram *p = exe->program;
  if (p->loaded) return true;
  return status_error(st, STATUS_INPUT_ERROR,
                      "this executable was compiled for %s without a device (compile only): it cannot run",
                      exe->gpu_target);
}

static HostBuffer *gpu_run(const Executable *exe, HostBuffer *const *args, int arg_count, Status *st) {
  if (!program_runs(exe, st)) return NULL;
  return gpu_program_run(exe->program, args, arg_count, st);
}

static bool gpu_run_into(const Executable *exe, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                         Status *st) {
  (void)arg_count;  /* checked against the entry by executable_run_into */
  return program_runs(exe, st) && gpu_program_run_into(exe->program, args, result_leaves, st);
}

/* --check, --find-nan: the same run, watched (gpu_observe.c). */
static HostBuffer *gpu_run_observed(const Executable *exe, HostBuffer *const *args, int arg_count,
                                    StepObserver *observe, void *context, Status *st) {
  (void)arg_count;  /* checked against the entry by executable_run_debug */
  if (!program_runs(exe, st)) return NULL;
  return gpu_program_run_observed(exe->program, exe->plan, args, observe, context, st);
}

static bool gpu_dump(const Executable *exe, const char *dir, Status *st) {
  return gpu_program_dump(exe->program, executable_module_to_run(exe), dir, st);
}

static void gpu_free_program(void *program) { gpu_program_free(program); }

const Backend backend_gpu = {
    .name = "gpu",
    .optimizes = true,
    .compile = gpu_compile,
    .run = gpu_run,
    .run_into = gpu_run_into,
    .free_program = gpu_free_program,
    .run_observed = gpu_run_observed,
    .dump = gpu_dump, /* gpu_debug.c */
    /* gpu_device_buffers.c */
    .device_upload = gpu_device_upload,
    .device_download = gpu_device_download,
    .device_release = gpu_device_release,
    .run_on_device = gpu_run_on_device,
    .time_device = gpu_time_device, /* gpu_timing.c */
};
