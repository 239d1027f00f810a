/* What the CPU backend's family files (cpu_dot.c, cpu_sort.c, ...) call
 * while the hooks in cpu_backend.c hand them a step: the refusal message,
 * a value's binding, a program's storage, compiling the program stage's
 * kernel of a step (each distinct kernel once per program), and the
 * program of a called computation, through the shared walk
 * (backend_compile_steps) and the hooks it finds in c->backend. The bottom
 * file of the CPU backend: it calls nothing above it. */
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "runtime/backend.h"

/* The one message for everything the backend cannot compile, located at
 * the instruction; why (may be NULL) says what stopped it. */
bool cpu_refuse(CpuCompile *c, const Instruction *inst, const char *why) {
  return backend_refuse(c->st, c->m, inst, "CPU", why, " (the interpreter, --backend interp, runs it)");
}

int cpu_binding_of(const CpuCompile *c, const Instruction *inst, int leaf) {
  return program_binding_of(c->program, inst, leaf);
}

/* ---- storage ---- */

void cpu_compile_bind(CpuCompile *c) {
  const Program *program = c->program;
  for (int i = 0; i < program->binding_count; i++) cpu_program_add_binding(c->p, &program->bindings[i]);
  c->p->program_binding_count = program->binding_count;
  c->p->temp_bytes = program->temp_bytes;
  c->p->copies = mem_calloc((size_t)program->copy_count + 1, sizeof *c->p->copies);
  if (program->copy_count) memcpy(c->p->copies, program->copies, sizeof *c->p->copies * (size_t)program->copy_count);
  c->p->copy_count = program->copy_count;
}

void cpu_compile_finish(CpuCompile *c) {
  if (c->product_binding >= 0)
    c->p->bindings[c->product_binding].offset = cpu_program_reserve_temp(c->p, c->product_bytes);
}

CpuProgram *cpu_compile_called(CpuCompile *c, const Computation *comp) {
  const Program *program = c->step ? program_step_called(c->step, comp) : NULL;
  if (!program) {
    cpu_refuse(c, c->step ? c->step->inst : comp->root, "a computation the program stage did not make a program of");
    return NULL;
  }
  CpuProgram *p = cpu_program_create(program->plan, &comp->root->shape);
  p->program = program;
  p->cpu = c->p->cpu;
  p->listings = c->p->listings;
  CpuCompile inner = {.backend = c->backend, .p = p, .program = program, .m = c->m, .entry = comp, .st = c->st,
                      .product_binding = -1, .called = true, .across_devices = c->across_devices};
  cpu_compile_bind(&inner);
  bool ok = backend_compile_steps(c->backend, &inner, program, c->st);
  if (ok) cpu_compile_finish(&inner);
  cpu_compile_memo_free(&inner);
  if (!ok) {
    cpu_program_free(p);
    return NULL;
  }
  return p;
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
  /* what the stage could not lower or bind was refused before the walk
   * (backend_compile.c) */
  const ProgramStep *step = c->step;
  Kernel *k = step && step->inst == inst ? step->kernel : NULL;
  if (!k) return cpu_refuse(c, inst, "a kernel the program stage did not make");
  Status why = {0};
  CompiledKernel *ck = kernel_compile_once(c, k, &why);
  if (!ck) return cpu_refuse(c, inst, why.message);
  CpuStep *s = cpu_program_add_kernel_step(c->p, inst, ck, step->buffer_count);
  s->lowered = k;
  s->product = computed;
  for (int i = 0; i < step->buffer_count; i++) {
    int b = step->buffers[i];
    s->buffers[i] = b == PROGRAM_PRODUCT_INPUT && computed ? computed_binding : b;
    if (s->buffers[i] < 0) return cpu_refuse(c, inst, "a kernel buffer the plan does not place");
  }
  return true;
}
