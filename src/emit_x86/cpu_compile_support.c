/* What the CPU backend's family files (cpu_dot.c, cpu_sort.c, ...) call
 * while the walk in cpu_backend.c hands them an instruction: the refusal
 * message, a value's binding, and compiling the program stage's kernel of
 * a step (each distinct kernel once per program). The bottom file of the
 * CPU backend: it calls nothing of the walk. */
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
