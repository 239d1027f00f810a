/* The CPU backend's entry in the backend table (src/runtime/backend.h).
 *
 * This is where x86-64 code generation plugs into the runtime: compile
 * lowers each kernel of the optimized module (executable_module_to_run,
 * with its buffer plan in exe->plan) to machine code and keeps the code
 * pages and constants in exe->program; run binds the argument buffers and
 * one temporary block to the plan's slots and calls the kernels in
 * schedule order. Until the kernel emitter lands, compile says so: a
 * clear compile error, never a silent fallback to the interpreter. */
#include "runtime/backend.h"
#include "runtime/executable.h"

static bool cpu_compile(Executable *exe, Status *st) {
  exe->program = NULL;
  return status_error(st, STATUS_UNSUPPORTED,
                      "backend 'cpu' is not built yet: the CPU backend's code generator has not "
                      "landed; use --backend interp");
}

static HostBuffer *cpu_run(const Executable *exe, HostBuffer *const *args, int arg_count, Status *st) {
  (void)exe, (void)args, (void)arg_count;
  status_error(st, STATUS_UNSUPPORTED, "the CPU backend cannot run modules yet");
  return NULL;
}

static void cpu_free_program(void *program) { (void)program; }

const Backend backend_cpu = {
    .name = "cpu",
    .optimizes = true,
    .compile = cpu_compile,
    .run = cpu_run,
    .free_program = cpu_free_program,
};
