/* The CPU backend's entry in the backend table (src/runtime/backend.h).
 *
 * compile walks the optimized entry computation (executable_module_to_run)
 * in its scheduled order and turns each instruction into a step of a
 * CpuProgram (cpu_program.h): parameters, constants, tuples,
 * get-tuple-elements and bitcasts take none (their storage is named by the
 * buffer plan); fusions and unfused elementwise, data-movement and reduce
 * ops are lowered to kernels (src/opt/lower.c) and compiled to x86-64
 * (kernel_x86.h); an unfused f32 dot is a call of the blocked GEMM
 * (gemm.h); while, conditional and the like run computations compiled
 * by the same walk into programs of their own (cpu_compile_called,
 * cpu_control.c). Anything else is a compile error that names the instruction
 * and its JAX source line: "must compile" — never a silent fallback to the
 * interpreter. run is cpu_program_run. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "runtime/backend.h"


/* The one message for everything the backend cannot compile, located at
 * the instruction; why (may be NULL) says what stopped it. */
bool cpu_refuse(CpuCompile *c, const Instruction *inst, const char *why) {
  return backend_refuse(c->st, c->m, inst, "CPU", why, " (the interpreter, --backend interp, runs it)");
}

/* ---- storage ---- */

int cpu_binding_of(const CpuCompile *c, const Instruction *inst, int leaf) {
  return program_binding_of(c->program, inst, leaf);
}

/* The program's bindings become the CPU program's first ones (their
 * constants' data stays the Program's), and its result copies the CPU
 * program's; what the program stage could not bind is refused here. */
static bool bind_program(CpuCompile *c) {
  const Program *program = c->program;
  for (int i = 0; i < program->binding_count; i++) {
    const ProgramBinding *b = &program->bindings[i];
    if (i < program->plan->slot_count && b->unsupported) return cpu_refuse(c, b->inst, b->unsupported);
    cpu_program_add_binding(c->p, b);
  }
  c->p->program_binding_count = program->binding_count;
  c->p->temp_bytes = program->temp_bytes;
  if (program->unsupported) return cpu_refuse(c, program->computation->root, program->unsupported);
  c->p->copies = mem_calloc((size_t)program->copy_count + 1, sizeof *c->p->copies);
  if (program->copy_count) memcpy(c->p->copies, program->copies, sizeof *c->p->copies * (size_t)program->copy_count);
  c->p->copy_count = program->copy_count;
  return true;
}

/* ---- kernels ---- */

static CompiledKernel *kernel_memo_find(const CpuCompile *c, const Kernel *k, uint64_t hash) {
  if (!c->memo_slot_count) return NULL;
  int mask = c->memo_slot_count - 1;
  for (int at = (int)(hash & (uint64_t)mask); c->memo_slots[at]; at = (at + 1) & mask) {
    const CpuKernelMemo *e = &c->memo[c->memo_slots[at] - 1];
    if (e->hash == hash && kernel_same_code(e->kernel, k)) return e->compiled;
  }
  return NULL;
}

static void kernel_memo_place(CpuCompile *c, int index) {
  int mask = c->memo_slot_count - 1;
  int at = (int)(c->memo[index].hash & (uint64_t)mask);
  while (c->memo_slots[at]) at = (at + 1) & mask;
  c->memo_slots[at] = index + 1;
}

static void kernel_memo_add(CpuCompile *c, const Kernel *k, CompiledKernel *ck, uint64_t hash) {
  if (2 * (c->memo_count + 1) > c->memo_slot_count) {
    mem_free(c->memo_slots);
    c->memo_slot_count = c->memo_slot_count ? 2 * c->memo_slot_count : 64;
    c->memo_slots = mem_calloc((size_t)c->memo_slot_count, sizeof *c->memo_slots);
    c->memo = mem_realloc(c->memo, sizeof *c->memo * (size_t)(c->memo_slot_count / 2));
    for (int i = 0; i < c->memo_count; i++) kernel_memo_place(c, i);
  }
  c->memo[c->memo_count] = (CpuKernelMemo){.kernel = k, .compiled = ck, .hash = hash};
  kernel_memo_place(c, c->memo_count++);
}

void cpu_compile_memo_free(CpuCompile *c) {
  mem_free(c->memo);
  mem_free(c->memo_slots);
  c->memo = NULL;
  c->memo_slots = NULL;
  c->memo_count = c->memo_slot_count = 0;
}

/* k's code: an earlier kernel's when it compiles alike, else compiled now
 * (and remembered). k is the program stage's; the target's policy stores
 * its schedule in it first, since kernels scheduled apart compile apart. */
static CompiledKernel *kernel_compile_once(CpuCompile *c, Kernel *k, Status *why) {
  kernel_x86_schedule(k, &c->p->cpu);
  if (c->p->listings) return kernel_x86_compile_listed(k, &c->p->cpu, true, why);
  uint64_t hash = kernel_code_hash(k);
  CompiledKernel *ck = kernel_memo_find(c, k, hash);
  if (ck) return kernel_x86_share(ck);
  ck = kernel_x86_compile_listed(k, &c->p->cpu, false, why);
  if (ck) kernel_memo_add(c, k, ck, hash);
  return ck;
}

/* The kernel the program stage lowered for inst (the current step); with
 * `computed` (an output fusion's dot), the epilogue that reads the dot's
 * product from binding computed_binding. */
bool cpu_compile_kernel(CpuCompile *c, const Instruction *inst, const Instruction *computed, int computed_binding) {
  for (int i = 0; i < inst->operand_count; i++)
    if (shape_is_tuple(&inst->operands[i]->shape)) return cpu_refuse(c, inst, "a tuple-shaped operand");
  const ProgramStep *step = c->step;
  if (!step || step->inst != inst) return cpu_refuse(c, inst, "a kernel the program stage did not make");
  Kernel *k = step->kernel;
  if (!k) return cpu_refuse(c, inst, step->unsupported);
  for (int i = 0; i < step->buffer_count; i++) {
    int b = step->buffers[i];
    if (b >= 0 && c->program->bindings[b].unsupported) return cpu_refuse(c, inst, c->program->bindings[b].unsupported);
  }
  Status why = {0};
  CompiledKernel *ck = kernel_compile_once(c, k, &why);
  if (!ck) return cpu_refuse(c, inst, why.message);
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_KERNEL, inst, step->buffer_count);
  s->kernel = ck;
  s->lowered = k;
  s->product = computed;
  for (int i = 0; i < step->buffer_count; i++) {
    int b = step->buffers[i];
    s->buffers[i] = b == PROGRAM_PRODUCT_INPUT && computed ? computed_binding : b;
    if (s->buffers[i] < 0) return cpu_refuse(c, inst, "a kernel buffer the plan does not place");
  }
  return true;
}

/* ---- the walk ---- */

/* How the program stage classified the fusion: one kernel, a product with
 * its epilogue, or its computation run as a program of its own. */
static bool compile_fusion(CpuCompile *c, const Instruction *fusion) {
  switch (c->step->kind) {
  case PROGRAM_STEP_PRODUCT: return cpu_compile_output_fusion(c, fusion);
  case PROGRAM_STEP_CALL: return cpu_compile_call(c, fusion);
  default: return cpu_compile_kernel(c, fusion, NULL, -1);
  }
}

static bool compile_instruction(CpuCompile *c, const Instruction *inst) {
  switch (inst->opcode) {
  case OP_DOT:
    return cpu_compile_dot(c, inst);
  case OP_SCATTER: return cpu_compile_scatter(c, inst);
  case OP_SELECT_AND_SCATTER: return cpu_compile_select_and_scatter(c, inst);
  case OP_SORT: return cpu_compile_sort(c, inst);
  case OP_TOPK: return cpu_compile_topk(c, inst);
  case OP_FFT: return cpu_compile_fft(c, inst);
  case OP_CHOLESKY: return cpu_compile_cholesky(c, inst);
  case OP_TRIANGULAR_SOLVE: return cpu_compile_triangular_solve(c, inst);
  case OP_CUSTOM_CALL: return cpu_compile_custom_call(c, inst);
  case OP_CONVOLUTION: return cpu_compile_convolution(c, inst);
  case OP_SCALED_DOT: return cpu_compile_scaled_dot(c, inst);
  case OP_RAGGED_DOT: return cpu_compile_ragged_dot(c, inst);
  case OP_WHILE: return cpu_compile_while(c, inst);
  case OP_CONDITIONAL: return cpu_compile_conditional(c, inst);
  case OP_CALL: return cpu_compile_call(c, inst);
  case OP_ASYNC_START: return cpu_compile_async_start(c, inst);
  case OP_RAGGED_ALL_TO_ALL: return cpu_compile_ragged_all_to_all(c, inst);
  case OP_MAP: return cpu_compile_map(c, inst);
  case OP_SCAN: return cpu_compile_scan(c, inst);
  case OP_RNG_BIT_GENERATOR: return cpu_compile_rng_bit_generator(c, inst);
  case OP_RNG: return cpu_compile_rng(c, inst);
  case OP_FUSION: return compile_fusion(c, inst);
  default: break;
  }
  /* The rest as the program stage classified it: forwards and one-device
   * collectives copy leaves; a routine the CPU has none for is refused. */
  switch (c->step->kind) {
  case PROGRAM_STEP_KERNEL: return cpu_compile_kernel(c, inst, NULL, -1);
  case PROGRAM_STEP_COPY: return cpu_compile_forward(c, inst);
  case PROGRAM_STEP_COLLECTIVE: return cpu_compile_collective(c, inst);
  default: return cpu_refuse(c, inst, NULL);
  }
}

static bool cpu_compile_program(CpuCompile *c) {
  if (!bind_program(c)) return false;
  for (int i = 0; i < c->program->step_count; i++) {
    c->step = &c->program->steps[i];
    if (!compile_instruction(c, c->step->inst)) return false;
  }
  if (c->product_binding >= 0)
    c->p->bindings[c->product_binding].offset = cpu_program_reserve_temp(c->p, c->product_bytes);
  return true;
}

CpuProgram *cpu_compile_called(CpuCompile *c, const Computation *comp) {
  const Program *program = c->step ? program_step_called(c->step, comp) : NULL;
  if (!program) {
    cpu_refuse(c, c->step ? c->step->inst : comp->root, "a computation the program stage did not make a program of");
    return NULL;
  }
  CpuProgram *p = cpu_program_create(program->plan, &comp->root->shape, 1);
  p->program = program;
  p->cpu = c->p->cpu;
  p->listings = c->p->listings;
  CpuCompile inner = {.p = p, .program = program, .m = c->m, .entry = comp, .st = c->st, .product_binding = -1,
                      .called = true, .across_devices = c->across_devices};
  bool ok = cpu_compile_program(&inner);
  cpu_compile_memo_free(&inner);
  if (!ok) {
    cpu_program_free(p);
    return NULL;
  }
  return p;
}

static bool cpu_compile(Executable *exe, Status *st) {
  exe->program = NULL;
  const Module *m = executable_module_to_run(exe);
  if (!exe->plan)
    return status_error(st, STATUS_UNSUPPORTED,
                        "the CPU backend compiles optimized modules only (drop --no-opt)");
  if (!eval_check_supported_on(m, exe->replica_count, exe->partition_count, st)) return false;
  CpuProgram *p = cpu_program_create(exe->plan, &m->entry->root->shape, exe->threads);
  p->listings = exe->listings;
  bool across_devices = exe->replica_count * exe->partition_count > 1;
  ProgramOptions options = {.across_devices = across_devices};
  p->owned_program = program_build(m, exe->plan, &options);
  p->program = p->owned_program;
  CpuCompile c = {.p = p, .program = p->program, .m = m, .entry = m->entry, .st = st, .product_binding = -1,
                  .across_devices = across_devices};
  bool ok = true;
  if (exe->cpu_level) cpu_features_for_level(&p->cpu, (CpuLevel)exe->cpu_level);
  else ok = cpu_features_detect(&p->cpu, st);
  if (ok && p->cpu.level == CPU_LEVEL_NONE)
    ok = status_error(st, STATUS_UNSUPPORTED, "the CPU backend needs SSE4.1, which this machine lacks");
  if (ok) ok = cpu_compile_program(&c);
  cpu_compile_memo_free(&c);
  if (!ok) {
    cpu_program_free(p);
    return false;
  }
  exe->program = p;
  return true;
}

static HostBuffer *cpu_run(const Executable *exe, HostBuffer *const *args, int arg_count, Status *st) {
  return cpu_program_run(exe->program, args, arg_count, st);
}

static bool cpu_run_into(const Executable *exe, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                         Status *st) {
  return cpu_program_run_into(exe->program, args, arg_count, result_leaves, NULL, NULL, st);
}

static HostBuffer *cpu_run_observed(const Executable *exe, HostBuffer *const *args, int arg_count,
                                    StepObserver *observe, void *context, Status *st) {
  return cpu_program_run_observed(exe->program, args, arg_count, observe, context, st);
}

static void cpu_free_program(void *program) { cpu_program_free(program); }

static bool cpu_dump(const Executable *exe, const char *dir, Status *st) {
  return cpu_program_dump(exe->program, executable_module_to_run(exe), dir, st);
}

const Backend backend_cpu = {
    .name = "cpu",
    .optimizes = true,
    .compile = cpu_compile,
    .run = cpu_run,
    .run_into = cpu_run_into,
    .free_program = cpu_free_program,
    .run_observed = cpu_run_observed,
    .dump = cpu_dump,
};
