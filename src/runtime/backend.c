/* The backend table, and its first entry: the reference evaluator. */
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/executable.h"

static bool interp_compile(Executable *exe, Status *st) {
  exe->program = NULL;
  return eval_check_supported(executable_module_to_run(exe), st);
}

/* The evaluator works on Literals: it reads views of the argument buffers
 * (no copies) and its result's storage becomes the result buffer. */
static HostBuffer *interp_run(const Executable *exe, HostBuffer *const *args, int arg_count,
                              Status *st) {
  Literal **views = calloc_or_exit((size_t)arg_count + 1, sizeof *views);
  for (int i = 0; i < arg_count; i++) views[i] = host_buffer_view(args[i]);
  Literal *out = eval_module(executable_module_to_run(exe), views, arg_count, st);
  for (int i = 0; i < arg_count; i++) literal_view_free(views[i]);
  free(views);
  return out ? host_buffer_adopt_literal(out) : NULL;
}

static void interp_free_program(void *program) { (void)program; }

const Backend backend_interp = {
    .name = "interp",
    .optimizes = false,
    .compile = interp_compile,
    .run = interp_run,
    .free_program = interp_free_program,
};

static const Backend *const backend_table[BACKEND_COUNT] = {
    [AXLE_BACKEND_INTERP] = &backend_interp,
    [AXLE_BACKEND_CPU] = &backend_cpu,
    [AXLE_BACKEND_GPU] = &backend_gpu,
};
_Static_assert(sizeof backend_table / sizeof backend_table[0] == 3,
               "one backend table row per axle_backend_t value");

const Backend *backend_get(axle_backend_t id, Status *st) {
  if ((int)id < 0 || (int)id >= BACKEND_COUNT) {
    status_error(st, STATUS_INPUT_ERROR, "unknown backend %d", (int)id);
    return NULL;
  }
  return backend_table[id];
}

bool backend_id_from_name(const char *name, axle_backend_t *id, Status *st) {
  for (int i = 0; i < BACKEND_COUNT; i++)
    if (strcmp(name, backend_table[i]->name) == 0) {
      *id = (axle_backend_t)i;
      return true;
    }
  return status_error(st, STATUS_INPUT_ERROR, "unknown backend '%s' (expected interp, cpu or gpu)", name);
}
