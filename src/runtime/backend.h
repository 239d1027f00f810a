/* A backend is a small table of functions: compile a module into an opaque
 * program, run it on host literals, free it. The interpreter, the CPU and
 * the GPU are entries of the same table; a new target is a new entry. */
#ifndef AXLE_RUNTIME_BACKEND_H
#define AXLE_RUNTIME_BACKEND_H

#include "ir.h"

typedef struct Backend {
  const char *name;
  /* Prepares m for running; *program is the backend's own state. */
  bool (*compile)(const Module *m, void **program, Status *st);
  /* Runs with arguments already checked against the entry's parameters. */
  Literal *(*run)(void *program, const Module *m, Literal *const *args, int arg_count,
                  Status *st);
  void (*free_program)(void *program);
} Backend;

/* The entries: the interpreter here in backend.c, the GPU in
 * src/emit_ptx/gpu_backend.c. */
extern const Backend backend_gpu;

/* "interp", "cpu", "gpu": NULL with a message when the name is unknown or the
 * backend is not available in this build. */
const Backend *backend_find(const char *name, Status *st);

/* Checks one argument per entry parameter: count, element type and dims.
 * The message names the parameter and what was expected. */
bool backend_check_arguments(const Module *m, Literal *const *args, int arg_count, Status *st);

#endif
