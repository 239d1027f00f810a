/* The backend table, and the argument checks every backend shares. */
#include <string.h>

#include "runtime/backend.h"

static bool interp_compile(const Module *m, void **program, Status *st) {
  *program = NULL;
  return eval_check_supported(m, st);
}

static Literal *interp_run(void *program, const Module *m, Literal *const *args, int arg_count,
                           Status *st) {
  (void)program;
  return eval_module(m, args, arg_count, st);
}

static void interp_free(void *program) { (void)program; }

static const Backend backend_interp = {
    .name = "interp",
    .compile = interp_compile,
    .run = interp_run,
    .free_program = interp_free,
};

const Backend *backend_find(const char *name, Status *st) {
  if (strcmp(name, "interp") == 0) return &backend_interp;
  if (strcmp(name, "gpu") == 0) return &backend_gpu;
  if (strcmp(name, "cpu") == 0) {
    status_error(st, STATUS_UNSUPPORTED,
                 "backend '%s' is not built yet; use --backend interp", name);
    return NULL;
  }
  status_error(st, STATUS_INPUT_ERROR, "unknown backend '%s' (expected interp, cpu or gpu)", name);
  return NULL;
}

static void shape_text(char *buf, size_t size, const Shape *s) {
  StrBuf sb = {0};
  shape_print(&sb, s, false);
  snprintf(buf, size, "%s", sb.data ? sb.data : "?");
  strbuf_free(&sb);
}

bool backend_check_arguments(const Module *m, Literal *const *args, int arg_count, Status *st) {
  const Computation *entry = m->entry;
  if (arg_count != entry->parameter_count)
    return status_error(st, STATUS_INPUT_ERROR, "the entry computation takes %d parameter%s, got %d",
                        entry->parameter_count, entry->parameter_count == 1 ? "" : "s", arg_count);
  for (int i = 0; i < arg_count; i++) {
    const Instruction *p = entry->parameters[i];
    if (shape_is_tuple(&p->shape))
      return status_error(st, STATUS_UNSUPPORTED,
                          "parameter %d (%s) is a tuple; pass arrays only", i, p->name);
    if (!shape_equal(&p->shape, &args[i]->shape)) {
      char want[256], got[256];
      shape_text(want, sizeof want, &p->shape);
      shape_text(got, sizeof got, &args[i]->shape);
      return status_error(st, STATUS_INPUT_ERROR, "parameter %d (%s) expects %s, got %s", i,
                          p->name, want, got);
    }
  }
  return true;
}
