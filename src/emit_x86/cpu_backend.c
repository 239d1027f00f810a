/* The CPU backend's entry in the backend table (src/runtime/backend.h):
 * its target hooks, which backend_compile calls.
 *
 * backend_compile builds the program stage's Program of the optimized
 * module (src/opt/program.h: bindings, steps, every kernel already
 * lowered), asks cpu_supports of every step and refuses what the CPU has
 * no routine for, located, before anything is compiled: "must compile",
 * never a silent fallback to the interpreter. Then it hands the steps in
 * order to the hooks here, which turn each into steps of a CpuProgram
 * (cpu_program.h): a kernel step's kernel is compiled to x86-64
 * (kernel_x86.h, through cpu_compile_kernel in cpu_compile_support.c); a
 * product is a call of the blocked GEMM (gemm.h) with its epilogue; while,
 * conditional and the like run the programs of their computations,
 * compiled by the same walk (cpu_compile_called); the routines are the
 * family files'. run is cpu_program_run. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "runtime/backend.h"


/* ---- the hooks ---- */

/* The routines the CPU has (cpu_compile.h lists their files); the program
 * stage makes a routine step of every op without a kernel form, and the
 * ones outside this list (send, recv, infeed ...) the CPU refuses. */
static bool cpu_has_routine(Opcode op) {
  switch (op) {
  case OP_SCATTER: case OP_SELECT_AND_SCATTER: case OP_SORT: case OP_TOPK: case OP_FFT: case OP_CHOLESKY:
  case OP_TRIANGULAR_SOLVE: case OP_CUSTOM_CALL: case OP_RAGGED_ALL_TO_ALL: case OP_MAP: case OP_SCAN:
  case OP_RNG_BIT_GENERATOR: case OP_RNG:
    return true;
  default: return false;
  }
}

/* Why the CPU refuses a routine it has, asked of the family file that
 * compiles it; NULL when it compiles it. */
static const char *cpu_routine_refusal(const Instruction *inst, Status *made) {
  const char *why = NULL;
  switch (inst->opcode) {
  case OP_SORT: why = cpu_sort_refusal(inst); break;
  case OP_TOPK: why = cpu_topk_refusal(inst); break;
  case OP_FFT: why = cpu_fft_refusal(inst); break;
  case OP_CHOLESKY: case OP_TRIANGULAR_SOLVE: case OP_CUSTOM_CALL: why = cpu_linalg_refusal(inst, made); break;
  case OP_RNG: why = cpu_rng_refusal(inst); break;
  case OP_SCATTER: return cpu_scatter_refusal(inst);
  default: return cpu_control_refusal(inst);
  }
  return why ? why : cpu_call_refusal(inst);  /* these run as a call step (cpu_add_call_step) */
}

static bool cpu_supports(const Program *program, const ProgramStep *step, StepReason *why) {
  (void)program;
  const Instruction *inst = step->inst;
  switch (step->kind) {
  case PROGRAM_STEP_KERNEL:
    for (int i = 0; i < inst->operand_count; i++)
      if (shape_is_tuple(&inst->operands[i]->shape)) return why->text = "a tuple-shaped operand", false;
    return true;
  case PROGRAM_STEP_PRODUCT: return !(why->text = cpu_product_refusal(inst, &why->made));
  case PROGRAM_STEP_ROUTINE:
    if (!cpu_has_routine(inst->opcode)) return false;
    return !(why->text = cpu_routine_refusal(inst, &why->made));
  case PROGRAM_STEP_COLLECTIVE:
    if ((why->text = cpu_collective_refusal(inst))) return false;
    return !(why->text = cpu_call_refusal(inst));
  case PROGRAM_STEP_COPY: return true;  /* what no copy makes: the program stage's program_copy_refusal */
  case PROGRAM_STEP_WHILE:
  case PROGRAM_STEP_CONDITIONAL:
  case PROGRAM_STEP_CALL:
    return !(why->text = cpu_control_refusal(inst));
  default: return true;
  }
}

static void *cpu_begin(const Module *m, Program *program, const BackendOptions *o, Status *st) {
  CpuProgram *p = cpu_program_create(program->plan, &m->entry->root->shape);
  p->threads = o->threads;
  p->listings = o->listings;
  p->owned_program = program;
  p->program = program;
  bool ok = true;
  if (o->cpu_level) cpu_features_for_level(&p->cpu, (CpuLevel)o->cpu_level);
  else ok = cpu_features_detect(&p->cpu, st);
  if (ok && p->cpu.level == CPU_LEVEL_NONE)
    ok = status_error(st, STATUS_UNSUPPORTED, "the CPU backend needs SSE4.1, which this machine lacks");
  if (!ok) {
    cpu_program_free(p);
    return NULL;
  }
  CpuCompile *c = mem_calloc(1, sizeof *c);
  *c = (CpuCompile){.backend = &backend_cpu, .p = p, .program = program, .m = m, .entry = m->entry, .st = st,
                    .product_binding = -1, .across_devices = o->replica_count * o->partition_count > 1};
  cpu_compile_bind(c);
  return c;
}

static bool cpu_compile_kernel_step(void *target, const ProgramStep *step) {
  CpuCompile *c = target;
  c->step = step;
  return cpu_compile_kernel(c, step->inst, NULL, -1);
}

static bool cpu_compile_product(void *target, const ProgramStep *step) {
  CpuCompile *c = target;
  c->step = step;
  const Instruction *inst = step->inst;
  switch (inst->opcode) {
  case OP_DOT: return cpu_compile_dot(c, inst);
  case OP_CONVOLUTION: return cpu_compile_convolution(c, inst);
  case OP_SCALED_DOT: return cpu_compile_scaled_dot(c, inst);
  case OP_RAGGED_DOT: return cpu_compile_ragged_dot(c, inst);
  default: return cpu_compile_output_fusion(c, inst);  /* a fusion around one */
  }
}

/* A routine by its op; the copies (forwards, one-device collectives) and
 * the collectives of a run over several devices. */
static bool cpu_compile_routine(void *target, const ProgramStep *step) {
  CpuCompile *c = target;
  c->step = step;
  const Instruction *inst = step->inst;
  if (step->kind == PROGRAM_STEP_COPY) return cpu_compile_forward(c, inst);
  if (step->kind == PROGRAM_STEP_COLLECTIVE) return cpu_compile_collective(c, inst);
  switch (inst->opcode) {
  case OP_SCATTER: return cpu_compile_scatter(c, inst);
  case OP_SELECT_AND_SCATTER: return cpu_compile_select_and_scatter(c, inst);
  case OP_SORT: return cpu_compile_sort(c, inst);
  case OP_TOPK: return cpu_compile_topk(c, inst);
  case OP_FFT: return cpu_compile_fft(c, inst);
  case OP_CHOLESKY: return cpu_compile_cholesky(c, inst);
  case OP_TRIANGULAR_SOLVE: return cpu_compile_triangular_solve(c, inst);
  case OP_CUSTOM_CALL: return cpu_compile_custom_call(c, inst);
  case OP_RAGGED_ALL_TO_ALL: return cpu_compile_ragged_all_to_all(c, inst);
  case OP_MAP: return cpu_compile_map(c, inst);
  case OP_SCAN: return cpu_compile_scan(c, inst);
  case OP_RNG_BIT_GENERATOR: return cpu_compile_rng_bit_generator(c, inst);
  default: return cpu_compile_rng(c, inst);  /* OP_RNG: cpu_has_routine lets no other through */
  }
}

static bool cpu_compile_control(void *target, const ProgramStep *step) {
  CpuCompile *c = target;
  c->step = step;
  const Instruction *inst = step->inst;
  switch (inst->opcode) {
  case OP_WHILE: return cpu_compile_while(c, inst);
  case OP_CONDITIONAL: return cpu_compile_conditional(c, inst);
  case OP_ASYNC_START: return cpu_compile_async_start(c, inst);
  default: return cpu_compile_call(c, inst);  /* a call, or a fusion no kernel computes */
  }
}

static void *cpu_load(void *target, bool compiled, Status *st) {
  (void)st;
  CpuCompile *c = target;
  CpuProgram *p = c->p;
  if (compiled) cpu_compile_finish(c);
  cpu_compile_memo_free(c);
  mem_free(c);
  if (compiled) cpu_program_threads_start(p);
  if (compiled) return p;
  cpu_program_free(p);
  return NULL;
}

static HostBuffer *cpu_run(void *program, const Module *m, HostBuffer *const *args, int arg_count, Status *st) {
  (void)m;  /* the program holds what it runs */
  return cpu_program_run(program, args, arg_count, st);
}

static bool cpu_run_into(void *program, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                         Status *st) {
  return cpu_program_run_into(program, args, arg_count, result_leaves, NULL, NULL, st);
}

static HostBuffer *cpu_run_observed(void *program, const Module *m, HostBuffer *const *args, int arg_count,
                                    StepObserver *observe, void *context, Status *st) {
  (void)m;
  return cpu_program_run_observed(program, args, arg_count, observe, context, st);
}

static void cpu_free_program(void *program) { cpu_program_free(program); }

static bool cpu_dump(void *program, const Module *m, const char *dir, Status *st) {
  return cpu_program_dump(program, m, dir, st);
}

const Backend backend_cpu = {
    .name = "cpu",
    .title = "CPU",
    .refusal_hint = " (the interpreter, --backend interp, runs it)",
    .optimizes = true,
    .supports = cpu_supports,
    .begin = cpu_begin,
    .compile_kernel = cpu_compile_kernel_step,
    .compile_product = cpu_compile_product,
    .compile_routine = cpu_compile_routine,
    .compile_control = cpu_compile_control,
    .load = cpu_load,
    .run = cpu_run,
    .run_into = cpu_run_into,
    .free_program = cpu_free_program,
    .run_observed = cpu_run_observed,
    .dump = cpu_dump,
};
