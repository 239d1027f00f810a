/* A backend is a small table of functions: compile an Executable's module
 * into the backend's program, run that program on host buffers, free it.
 * The interpreter, the CPU and the GPU are entries of one table, indexed
 * by the public enum axle_backend_t; a new target is a new entry.
 *
 *   entry                  file
 *   AXLE_BACKEND_INTERP    src/runtime/backend.c   (the reference evaluator)
 *   AXLE_BACKEND_CPU       src/emit_x86/cpu_backend.c
 *   AXLE_BACKEND_GPU       src/emit_ptx/gpu_backend.c
 *
 * executable.c is the only caller: it clones and optimizes the module,
 * checks the arguments once, and then calls these. */
#ifndef AXLE_RUNTIME_BACKEND_H
#define AXLE_RUNTIME_BACKEND_H

#include "axle.h"
#include "ir.h"
#include "runtime/buffer.h"

typedef struct Executable Executable;

typedef struct Backend {
  const char *name;            /* "interp", as --backend spells it */
  /* Whether the optimizer runs by default (native backends: yes; the
   * interpreter runs the module as written). */
  bool optimizes;
  /* Fills exe->program from executable_module_to_run(exe) and, when the
   * module was optimized, exe->plan. */
  bool (*compile)(Executable *exe, Status *st);
  /* Runs with arguments already checked against the entry's parameters;
   * the result is a new buffer. */
  HostBuffer *(*run)(const Executable *exe, HostBuffer *const *args, int arg_count, Status *st);
  void (*free_program)(void *program);
} Backend;

enum { BACKEND_COUNT = AXLE_BACKEND_GPU + 1 };

extern const Backend backend_interp, backend_cpu, backend_gpu;

/* The entry for id; NULL with a message for a value outside the enum. */
const Backend *backend_get(axle_backend_t id, Status *st);
/* "interp", "cpu", "gpu" to the enum; a message naming the choices else. */
bool backend_id_from_name(const char *name, axle_backend_t *id, Status *st);

#endif
