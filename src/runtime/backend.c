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

/* Whether a value fits a parameter shape: element type and dims of every
 * array, and for tuples the same structure (layouts are the module's). */
static bool value_fits(const Shape *want, const Literal *got) {
  if (shape_is_tuple(want) != shape_is_tuple(&got->shape)) return false;
  if (!shape_is_tuple(want)) return shape_equal(want, &got->shape);
  if (got->shape.tuple_count != want->tuple_count) return false;
  for (int i = 0; i < want->tuple_count; i++)
    if (!value_fits(&want->tuple_shapes[i], got->elements[i])) return false;
  return true;
}

/* A tuple literal keeps its element shapes on its elements; this prints
 * either kind. */
static void value_shape_print(StrBuf *sb, const Literal *v) {
  if (!shape_is_tuple(&v->shape)) {
    shape_print(sb, &v->shape, false);
    return;
  }
  strbuf_printf(sb, "(");
  for (int i = 0; i < v->shape.tuple_count; i++) {
    if (i) strbuf_printf(sb, ", ");
    value_shape_print(sb, v->elements[i]);
  }
  strbuf_printf(sb, ")");
}

bool backend_check_arguments(const Module *m, Literal *const *args, int arg_count, Status *st) {
  const Computation *entry = m->entry;
  if (arg_count != entry->parameter_count)
    return status_error(st, STATUS_INPUT_ERROR, "the entry computation takes %d parameter%s, got %d",
                        entry->parameter_count, entry->parameter_count == 1 ? "" : "s", arg_count);
  for (int i = 0; i < arg_count; i++) {
    const Instruction *p = entry->parameters[i];
    if (!args[i]) return status_error(st, STATUS_INPUT_ERROR, "parameter %d (%s) was given no value", i, p->name);
    if (!value_fits(&p->shape, args[i])) {
      char want[256];
      shape_text(want, sizeof want, &p->shape);
      StrBuf got = {0};
      value_shape_print(&got, args[i]);
      status_error(st, STATUS_INPUT_ERROR, "parameter %d (%s) expects %s, got %s", i, p->name, want,
                   got.data ? got.data : "?");
      strbuf_free(&got);
      return false;
    }
  }
  return true;
}
