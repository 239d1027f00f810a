/* The CPU backend's entry in the backend table (src/runtime/backend.h).
 *
 * compile builds the program stage's Program of the optimized module
 * (src/opt/program.h: bindings, steps, every kernel already lowered) and
 * walks its steps in order, turning each into steps of a CpuProgram
 * (cpu_program.h): a kernel step's kernel is compiled to x86-64
 * (kernel_x86.h, through cpu_compile_kernel in cpu_compile_support.c); a
 * product is a call of the blocked GEMM (gemm.h) with its epilogue; while,
 * conditional and the like run the programs of their computations,
 * compiled by this same walk (cpu_compile_called, cpu_control.c); the
 * routines are the family files'. Anything else is a compile error that
 * names the instruction and its JAX source line: "must compile" — never a
 * silent fallback to the interpreter. run is cpu_program_run. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "runtime/backend.h"


/* ---- storage ---- */

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
