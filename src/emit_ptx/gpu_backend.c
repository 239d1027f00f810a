/* The GPU backend's entry in the backend table (src/runtime/backend.h):
 * its target hooks, which backend_compile calls.
 *
 * begin picks the target: the device's compute capability, or a named
 * one (--target sm_90a), which with --compile-only needs no driver and no
 * device, so a machine without a GPU sees every kernel's PTX (--dump).
 * Otherwise it opens the CUDA driver and the device (so that a machine
 * without them gets the message a user needs: "no CUDA driver", "no CUDA
 * device"), and binds the entry's storage from the program stage's
 * bindings (src/opt/program.h). backend_compile has already asked
 * gpu_supports of every step and refused, located, what the GPU has no
 * routine for: never a silent fallback to the interpreter. The steps come
 * in order, each to the hook of its kind, routed by the stage's step
 * kinds: a kernel step is its kernel written as PTX
 * (src/emit_ptx/ptx_kernel.c); products, routines (sorts, FFTs, ...) and
 * control flow go to their own files (gpu_compile.h lists them). All
 * kernels go into one module, which load hands to the driver when there is
 * a device, so a kernel the JIT rejects fails at compile time with its
 * log; then the device blocks are allocated and the constants uploaded,
 * once. run is gpu_program_run. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_kernel.h"
#include "runtime/backend.h"

/* ---- storage, from the program stage's bindings ---- */

/* Whether binding `at` is a result leaf the stage writes in another layout
 * than the caller's (a temporary it copies out of): on the device it is
 * an output, read back through its layout (bind_result). */
static bool result_in_other_layout(const Program *p, int at) {
  for (int i = 0; i < p->copy_count; i++)
    if (p->copies[i].binding == at && p->copies[i].layout) return true;
  return false;
}

/* The device-side view of the entry program's binding of plan slot `at`
 * (the stage's bindings 0.. are the plan's slots, in order, each with its
 * size): parameters and outputs in the I/O block, constants uploaded,
 * temporaries at their offset in the temporary block. */
static void bind_entry_slot(GpuCompile *c, int at) {
  const ProgramBinding *pb = &c->program->bindings[at];
  if (pb->kind == BINDING_CONSTANT) {
    gpu_bind_constant(c, at);
    return;
  }
  GpuBinding b = {.kind = GPU_BINDING_NONE, .bytes = pb->bytes};
  if (pb->kind == BINDING_PARAMETER) {
    /* the stage's leaf counts across all parameters; the device's, within one */
    b = (GpuBinding){.kind = GPU_BINDING_PARAMETER, .number = pb->number, .leaf = pb->inst_leaf,
                     .bytes = pb->bytes, .layout = pb->layout};
  } else if (pb->kind == BINDING_TEMP && !result_in_other_layout(c->program, at)) {
    b.kind = GPU_BINDING_TEMP;
    b.offset = pb->offset;
  } else if (pb->kind == BINDING_OUTPUT || pb->kind == BINDING_TEMP) {
    b.kind = GPU_BINDING_OUTPUT;
  }
  if (b.kind == GPU_BINDING_NONE) b.bytes = 0;
  gpu_program_add_binding(c->p, b, NULL);
}

/* Every root leaf is copied back from the binding the stage put it in: an
 * output it writes in place, or the source of a result copy (a parameter
 * or constant returned as it is, a leaf written in another layout, which
 * is read back through that layout). */
static void bind_result(GpuCompile *c) {
  const Program *program = c->program;
  int leaves = program->copy_count;
  for (int i = 0; i < program->plan->slot_count; i++)
    if (program->bindings[i].kind == BINDING_OUTPUT && program->bindings[i].leaf >= 0) leaves++;
  c->p->result_leaf_count = leaves;
  c->p->result_bindings = mem_calloc((size_t)leaves + 1, sizeof *c->p->result_bindings);
  c->p->result_layouts = mem_calloc((size_t)leaves + 1, sizeof *c->p->result_layouts);
  for (int i = 0; i < program->plan->slot_count; i++)
    if (program->bindings[i].kind == BINDING_OUTPUT && program->bindings[i].leaf >= 0)
      c->p->result_bindings[program->bindings[i].leaf] = i;
  for (int i = 0; i < program->copy_count; i++) {
    const ProgramResultCopy *copy = &program->copies[i];
    c->p->result_bindings[copy->leaf] = copy->binding;
    c->p->result_layouts[copy->leaf] = copy->layout;
  }
}

/* ---- the hooks ---- */

/* The routines the GPU has (gpu_compile.h lists their files); the program
 * stage makes a routine step of every op without a kernel form, and the
 * ones outside this list (map, send, recv, infeed ...) the GPU refuses. */
static bool gpu_has_routine(Opcode op) {
  switch (op) {
  case OP_SORT: case OP_TOPK: case OP_SCATTER: case OP_SELECT_AND_SCATTER: case OP_RNG_BIT_GENERATOR: case OP_FFT:
  case OP_CHOLESKY: case OP_TRIANGULAR_SOLVE: case OP_CUSTOM_CALL: case OP_SCAN: case OP_RAGGED_ALL_TO_ALL:
    return true;
  default: return false;
  }
}

/* Why the GPU refuses a routine it has, asked of the family file that
 * compiles it; NULL when it compiles it. */
static const char *gpu_routine_refusal(const Program *program, const ProgramStep *step, Status *made) {
  const Instruction *inst = step->inst;
  switch (inst->opcode) {
  case OP_SORT: case OP_TOPK: return gpu_sort_refusal(program, inst);
  case OP_SCATTER: case OP_SELECT_AND_SCATTER: return gpu_scatter_refusal(program, step);
  case OP_FFT: return gpu_fft_refusal(program, inst);
  case OP_CHOLESKY: case OP_TRIANGULAR_SOLVE: case OP_CUSTOM_CALL: return gpu_linalg_refusal(program, inst, made);
  case OP_SCAN: return gpu_scan_refusal(program, inst);
  case OP_RAGGED_ALL_TO_ALL: return gpu_ragged_all_to_all_refusal(program, inst);
  default: return gpu_rng_refusal(program, inst);  /* rng-bit-generator: gpu_has_routine lets no other through */
  }
}

static bool gpu_supports(const Program *program, const ProgramStep *step, StepReason *why) {
  const Instruction *inst = step->inst;
  switch (step->kind) {
  case PROGRAM_STEP_KERNEL:
    for (int i = 0; i < inst->operand_count && !step->value; i++)
      if (shape_is_tuple(&inst->operands[i]->shape)) return why->text = "a tuple-shaped operand", false;
    return true;
  case PROGRAM_STEP_PRODUCT:
    if (step->product && step->product->opcode == OP_CONVOLUTION) return !(why->text = gpu_conv_refusal(inst, &why->made));
    return !(why->text = gpu_dot_refusal(step));
  case PROGRAM_STEP_ROUTINE:
    if (inst->opcode == OP_RNG || inst->opcode == OP_RNG_GET_AND_UPDATE_STATE)
      why->text = "rng and rng-get-and-update-state draw from a module-wide generator the GPU backend does not model yet "
             "(rng-bit-generator is supported)";
    if (!gpu_has_routine(inst->opcode)) return false;
    return !(why->text = gpu_routine_refusal(program, step, &why->made));
  case PROGRAM_STEP_WHILE:
  case PROGRAM_STEP_CONDITIONAL:
  case PROGRAM_STEP_CALL: return true;  /* what no target runs: the program stage's program_control_refusal */
  case PROGRAM_STEP_COPY: return true;  /* what no copy makes: the program stage's program_copy_refusal */
  case PROGRAM_STEP_COLLECTIVE: return !(why->text = gpu_collective_step_refusal(program, step));
  default: return true;
  }
}

static bool gpu_compile_kernel_step(void *target, const ProgramStep *step) {
  GpuCompile *c = target;
  /* A value a product fusion computes before its product: the GPU's
   * products read the fusion's operands only (gpu_dot.c refuses others). */
  if (step->value) return true;
  c->step = step;
  return gpu_compile_kernel(c, step->inst);
}

static bool gpu_compile_product(void *target, const ProgramStep *step) {
  GpuCompile *c = target;
  c->step = step;
  const Instruction *inst = step->inst;
  bool convolution = step->product && step->product->opcode == OP_CONVOLUTION;
  if (inst->opcode == OP_FUSION)
    return convolution ? gpu_compile_convolution_fusion(c, inst) : gpu_compile_dot_fusion(c, inst);
  return convolution ? gpu_compile_convolution(c, inst) : gpu_compile_dot(c, inst);
}

/* A routine by its op; the copies (forwards, one-device collectives) and
 * the collectives across GPUs go with control flow (gpu_control.c). */
static bool gpu_compile_routine(void *target, const ProgramStep *step) {
  GpuCompile *c = target;
  c->step = step;
  const Instruction *inst = step->inst;
  if (step->kind != PROGRAM_STEP_ROUTINE) return gpu_compile_control(c, inst);
  switch (inst->opcode) {
  case OP_SORT: case OP_TOPK: return gpu_compile_sort(c, inst);
  case OP_SCATTER: case OP_SELECT_AND_SCATTER: return gpu_compile_scatter(c, inst);
  case OP_FFT: return gpu_compile_fft(c, inst);
  case OP_CHOLESKY: case OP_TRIANGULAR_SOLVE: return gpu_compile_linalg(c, inst);
  case OP_CUSTOM_CALL: return gpu_compile_custom_call(c, inst);
  case OP_SCAN: return gpu_compile_scan(c, inst);
  case OP_RAGGED_ALL_TO_ALL: return gpu_compile_ragged_all_to_all(c, inst);
  default: return gpu_compile_rng(c, inst);  /* rng-bit-generator: gpu_has_routine lets no other through */
  }
}

static bool gpu_compile_control_step(void *target, const ProgramStep *step) {
  GpuCompile *c = target;
  c->step = step;
  return gpu_compile_control(c, step->inst);
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
static bool target_choose(const BackendOptions *exe, GpuProgram *p, PtxTarget *target, Status *st) {
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

/* One compile: the GpuCompile the hooks see first, with what it points at. */
typedef struct GpuTarget {
  GpuCompile c;
  Program *program;            /* owned */
  PtxTarget target;
  PtxBuilder ptx;
  bool listings;
} GpuTarget;

/* The target's state for a program of the entry: its device chosen (or
 * none, compiling for a named target only), the entry's bindings and
 * result leaves from the stage's. */
static void *gpu_begin(const Module *m, Program *program, const BackendOptions *o, Status *st) {
  GpuProgram *p = gpu_program_create(&m->entry->root->shape, m->filename);
  GpuTarget *t = mem_calloc(1, sizeof *t);
  t->program = program;
  t->listings = o->listings;
  if (!target_choose(o, p, &t->target, st)) {
    gpu_program_free(p);
    program_free(program);
    mem_free(t);
    return NULL;
  }
  ptx_builder_init(&t->ptx, &t->target);
  p->plan = program->plan;
  snprintf(p->target_name, sizeof p->target_name, "%s", o->gpu_target);
  int64_t replicas = o->replica_count ? o->replica_count : 1;
  t->c = (GpuCompile){.backend = &backend_gpu, .p = p, .m = m, .plan = program->plan, .program = program,
                      .ptx = &t->ptx, .target = &t->target, .no_wgmma = o->gpu_no_wgmma,
                      .no_device = !p->gpu.driver.library, .replica = o->device_index % replicas,
                      .partition = o->device_index / replicas, .replica_count = replicas,
                      .partition_count = o->partition_count ? o->partition_count : 1, .nccl = o->nccl, .st = st};
  for (int i = 0; i < program->plan->slot_count; i++) bind_entry_slot(&t->c, i);
  bind_result(&t->c);
  return t;
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

/* With a device open, the module loaded (a kernel the JIT rejects fails
 * here, with its log) and the device blocks placed, once. The PTX stays
 * with the program for --dump. */
static void *gpu_load(void *target, bool compiled, Status *st) {
  GpuTarget *t = target;
  GpuProgram *p = t->c.p;
  bool ok = compiled;
  if (ok && !t->c.no_device) ok = p->loaded = program_load(p, ptx_builder_text(&t->ptx), st) && gpu_program_place(p, st);
  if (ok && t->listings) {
    p->ptx = mem_calloc(1, sizeof *p->ptx);
    *p->ptx = t->ptx;  /* the program's now */
  } else {
    ptx_builder_free(&t->ptx);
  }
  program_free(t->program);
  mem_free(t);
  if (ok) return p;
  gpu_program_free(p);
  return NULL;
}

bool gpu_write_ptx(const Module *m, const BufferPlan *plan, const char *target_name, bool no_wgmma, StrBuf *out,
                   Status *st) {
  BackendOptions o = {.replica_count = 1, .partition_count = 1, .listings = true, .gpu_no_wgmma = no_wgmma,
                      .compile_only = true};
  snprintf(o.gpu_target, sizeof o.gpu_target, "%s", target_name);
  PtxTarget target;
  void *program = NULL;
  if (!ptx_target_from_name(target_name, &target, st) || !backend_compile(&backend_gpu, m, plan, &o, &program, st))
    return false;
  GpuProgram *p = program;
  strbuf_printf(out, "%s", ptx_builder_text(p->ptx));
  gpu_program_free(p);
  return true;
}

/* A program compiled for a target with no device holds no kernels to run. */
static bool program_runs(const GpuProgram *p, Status *st) {
  if (p->loaded) return true;
  return status_error(st, STATUS_INPUT_ERROR,
                      "this executable was compiled for %s without a device (compile only): it cannot run",
                      p->target_name);
}

static HostBuffer *gpu_run(void *program, const Module *m, HostBuffer *const *args, int arg_count, Status *st) {
  (void)m;  /* the program holds what it runs */
  if (!program_runs(program, st)) return NULL;
  return gpu_program_run(program, args, arg_count, st);
}

static bool gpu_run_into(void *program, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                         Status *st) {
  (void)arg_count;  /* checked against the entry by executable_run_into */
  return program_runs(program, st) && gpu_program_run_into(program, args, result_leaves, st);
}

/* --check, --find-nan: the same run, watched (gpu_observe.c). */
static HostBuffer *gpu_run_observed(void *program, const Module *m, HostBuffer *const *args, int arg_count,
                                    StepObserver *observe, void *context, Status *st) {
  (void)m;
  (void)arg_count;  /* checked against the entry by executable_run_debug */
  GpuProgram *p = program;
  if (!program_runs(p, st)) return NULL;
  return gpu_program_run_observed(p, p->plan, args, observe, context, st);
}

static bool gpu_dump(void *program, const Module *m, const char *dir, Status *st) {
  return gpu_program_dump(program, m, dir, st);
}

static void gpu_free_program(void *program) { gpu_program_free(program); }

/* The device-buffer hooks (gpu_device_buffers.c) and the device clock
 * (gpu_timing.c), on the program load made. */
static bool gpu_upload(void *program, const void *data, size_t bytes, uint64_t *address, Status *st) {
  return gpu_device_upload(program, data, bytes, address, st);
}

static bool gpu_download(void *program, uint64_t address, void *data, size_t bytes, Status *st) {
  return gpu_device_download(program, address, data, bytes, st);
}

static void gpu_release(void *program, uint64_t address) { gpu_device_release(program, address); }

static bool gpu_run_on_device_hook(void *program, const uint64_t *args, int arg_count, uint64_t *results,
                                   int result_count, Status *st) {
  return gpu_run_on_device(program, args, arg_count, results, result_count, st);
}

static bool gpu_time(void *program, HostBuffer *const *args, int arg_count, int runs, double *ms, Status *st) {
  return gpu_time_device(program, args, arg_count, runs, ms, st);
}

const Backend backend_gpu = {
    .name = "gpu",
    .title = "GPU",
    .refusal_hint = "",
    .optimizes = true,
    .supports = gpu_supports,
    .begin = gpu_begin,
    .compile_kernel = gpu_compile_kernel_step,
    .compile_product = gpu_compile_product,
    .compile_routine = gpu_compile_routine,
    .compile_control = gpu_compile_control_step,
    .load = gpu_load,
    .run = gpu_run,
    .run_into = gpu_run_into,
    .free_program = gpu_free_program,
    .run_observed = gpu_run_observed,
    .dump = gpu_dump, /* gpu_debug.c */
    .device_upload = gpu_upload,
    .device_download = gpu_download,
    .device_release = gpu_release,
    .run_on_device = gpu_run_on_device_hook,
    .time_device = gpu_time,
};
