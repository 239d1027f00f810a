/* The public C API (include/axle.h): errors, modules, buffers, executables.
 * A thin layer: each call checks its arguments and hands over to src/ir or
 * to the runtime's one run path (executable.h), whose compile cache is
 * process-wide here. */
#include <stdlib.h>
#include <string.h>

#include "runtime/api_internal.h"
#include "runtime/executable.h"
#include "runtime/npy.h"

_Static_assert((int)AXLE_TUPLE == (int)TYPE_TUPLE, "axle_type_t mirrors ElementType");
_Static_assert((int)AXLE_F64 == (int)TYPE_F64, "axle_type_t mirrors ElementType");
_Static_assert((int)AXLE_U2 == (int)TYPE_U2, "axle_type_t mirrors ElementType");

/* ---- version ---- */

#define AXLE_STRINGIFY(x) #x
#define AXLE_VERSION_STRING(major, minor, patch) \
  AXLE_STRINGIFY(major) "." AXLE_STRINGIFY(minor) "." AXLE_STRINGIFY(patch)

AXLE_API const char *axle_version(void) {
  return AXLE_VERSION_STRING(AXLE_VERSION_MAJOR, AXLE_VERSION_MINOR, AXLE_VERSION_PATCH);
}

/* ---- errors ---- */

static axle_status_t public_status(StatusCode code) {
  switch (code) {
  case STATUS_OK: return AXLE_OK;
  case STATUS_PARSE_ERROR: return AXLE_ERROR_PARSE;
  case STATUS_VERIFY_ERROR: return AXLE_ERROR_VERIFY;
  case STATUS_UNSUPPORTED: return AXLE_ERROR_UNSUPPORTED;
  case STATUS_INPUT_ERROR: return AXLE_ERROR_INPUT;
  case STATUS_OUT_OF_MEMORY: return AXLE_ERROR_OUT_OF_MEMORY;
  default: return AXLE_ERROR_RUNTIME;
  }
}

bool api_set_error(axle_error_t **error, const Status *st) {
  if (!error) return false;
  axle_error_t *e = mem_calloc(1, sizeof *e);
  if (!e) return false;
  e->status = public_status(st->code);
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (f) {
    status_print(st, f);
    fclose(f);
  }
  e->message = text;
  *error = e;
  return false;
}

static bool api_error(axle_error_t **error, StatusCode code, const char *message) {
  Status st;
  status_clear(&st);
  status_error(&st, code, "%s", message);
  return api_set_error(error, &st);
}

/* When even the report of an out-of-memory cannot be allocated. */
static axle_error_t out_of_memory_fallback = {AXLE_ERROR_OUT_OF_MEMORY, "error: out of memory\n"};

/* Runs after the unwind, outside every scope of this call: nothing here may
 * unwind again, so it uses malloc's NULL. */
bool api_out_of_memory(axle_error_t **error, const MemScope *scope) {
  if (!error) return false;
  axle_error_t *e = calloc(1, sizeof *e);
  char *message = malloc(160);
  if (!e || !message) {
    free(e);
    free(message);
    *error = &out_of_memory_fallback;
    return false;
  }
  const char *space = scope->what[0] ? " " : "";
  if (scope->needed == SIZE_MAX)
    snprintf(message, 160, "error: out of memory: %s%sneeds more bytes than a size_t holds\n", scope->what, space);
  else
    snprintf(message, 160, "error: out of memory: %s%sneeds %zu bytes\n", scope->what, space, scope->needed);
  *e = (axle_error_t){AXLE_ERROR_OUT_OF_MEMORY, message};
  *error = e;
  return false;
}

AXLE_API axle_status_t axle_error_status(const axle_error_t *e) { return e ? e->status : AXLE_OK; }
AXLE_API const char *axle_error_message(const axle_error_t *e) {
  return e && e->message ? e->message : "";
}
AXLE_API void axle_error_free(axle_error_t *e) {
  if (!e || e == &out_of_memory_fallback) return;
  mem_free(e->message);
  mem_free(e);
}

/* ---- element types ---- */

AXLE_API const char *axle_type_name(axle_type_t t) {
  return (int)t >= 0 && t <= AXLE_TUPLE ? type_name((ElementType)t) : "?";
}
AXLE_API size_t axle_type_size(axle_type_t t) {
  return (int)t >= 0 && t < AXLE_TUPLE ? (size_t)type_byte_size((ElementType)t) : 0;
}

/* ---- modules ---- */

axle_module_t *api_wrap_module(Module *m) {
  axle_module_t *am = mem_calloc(1, sizeof *am);
  if (!am) {
    module_free(m);
    return NULL;
  }
  am->module = m;
  return am;
}

static ParseOptions parse_options_from(const axle_parse_options_t *options) {
  ParseOptions o = {0};
  if (options) {
    o.fill_elided_constants = options->fill_elided_constants;
    o.elided_seed = options->elided_seed;
  }
  return o;
}

static axle_module_t *axle_module_parse_with_body(const char *text, size_t length, const char *filename,
                                               const axle_parse_options_t *options, axle_error_t **error) {
  Status st;
  status_clear(&st);
  if (!text) {
    api_error(error, STATUS_INPUT_ERROR, "no text given");
    return NULL;
  }
  ParseOptions o = parse_options_from(options);
  Module *m = parse_module_with(text, length, filename, &o, &st);
  if (!m) {
    api_set_error(error, &st);
    return NULL;
  }
  return api_wrap_module(m);
}

AXLE_API axle_module_t *axle_module_parse_with(const char *text, size_t length, const char *filename,
                                               const axle_parse_options_t *options, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), NULL;
  axle_module_t *returned = axle_module_parse_with_body(text, length, filename, options, error);
  mem_scope_end(&scope);
  return returned;
}

AXLE_API axle_module_t *axle_module_parse(const char *text, size_t length, const char *filename,
                                          axle_error_t **error) {
  return axle_module_parse_with(text, length, filename, NULL, error);
}

static axle_module_t *axle_module_parse_file_with_body(const char *path, const axle_parse_options_t *options,
                                                    axle_error_t **error) {
  Status st;
  status_clear(&st);
  if (!path) {
    api_error(error, STATUS_INPUT_ERROR, "no path given");
    return NULL;
  }
  ParseOptions o = parse_options_from(options);
  Module *m = parse_module_file_with(path, &o, &st);
  if (!m) {
    api_set_error(error, &st);
    return NULL;
  }
  return api_wrap_module(m);
}

AXLE_API axle_module_t *axle_module_parse_file_with(const char *path, const axle_parse_options_t *options,
                                                    axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), NULL;
  axle_module_t *returned = axle_module_parse_file_with_body(path, options, error);
  mem_scope_end(&scope);
  return returned;
}

AXLE_API axle_module_t *axle_module_parse_file(const char *path, axle_error_t **error) {
  return axle_module_parse_file_with(path, NULL, error);
}

AXLE_API int axle_module_elided_constant_count(const axle_module_t *am) {
  return am ? am->module->elided_constant_count : 0;
}

AXLE_API void axle_module_free(axle_module_t *am) {
  if (!am) return;
  module_free(am->module);
  mem_free(am);
}

static const Instruction *entry_parameter(const axle_module_t *am, int i) {
  if (!am || i < 0 || i >= am->module->entry->parameter_count) return NULL;
  return am->module->entry->parameters[i];
}

AXLE_API int axle_module_parameter_count(const axle_module_t *am) {
  return am ? am->module->entry->parameter_count : 0;
}
AXLE_API axle_type_t axle_module_parameter_type(const axle_module_t *am, int i) {
  const Instruction *p = entry_parameter(am, i);
  return p ? (axle_type_t)p->shape.type : AXLE_TUPLE;
}
AXLE_API int axle_module_parameter_rank(const axle_module_t *am, int i) {
  const Instruction *p = entry_parameter(am, i);
  return p ? p->shape.rank : -1;
}
AXLE_API int64_t axle_module_parameter_dim(const axle_module_t *am, int i, int d) {
  const Instruction *p = entry_parameter(am, i);
  return p && d >= 0 && d < p->shape.rank ? p->shape.dims[d] : -1;
}

static char *axle_module_to_text_body(const axle_module_t *am) {
  StrBuf sb = {0};
  print_module(&sb, am->module);
  return sb.data;
}

AXLE_API char *axle_module_to_text(const axle_module_t *am) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(NULL, &scope), NULL;
  char *returned = axle_module_to_text_body(am);
  mem_scope_end(&scope);
  return returned;
}

/* ---- buffers ---- */

/* axle_buffer_t is the runtime's HostBuffer (runtime/buffer.h). */

static axle_buffer_t *axle_buffer_create_body(axle_type_t type, int rank, const int64_t *dims,
                                           const void *data, axle_error_t **error) {
  if ((int)type < 0 || type >= AXLE_TUPLE) {
    api_error(error, STATUS_INPUT_ERROR, "axle_buffer_create: not an array element type");
    return NULL;
  }
  if (rank < 0 || rank > AXLE_MAX_RANK || (rank > 0 && !dims)) {
    api_error(error, STATUS_INPUT_ERROR, "axle_buffer_create: rank must be 0..16 with dims given");
    return NULL;
  }
  int64_t count = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0 || (dims[i] > 0 && count > ((int64_t)1 << 40) / dims[i])) {
      api_error(error, STATUS_INPUT_ERROR, "axle_buffer_create: dimensions out of range");
      return NULL;
    }
    count *= dims[i];
  }
  Status st;
  status_clear(&st);
  Shape shape = shape_array((ElementType)type, rank, dims);
  HostBuffer *b = host_buffer_create(&shape, data, &st);
  if (!b) api_set_error(error, &st);
  return b;
}

AXLE_API axle_buffer_t *axle_buffer_create(axle_type_t type, int rank, const int64_t *dims,
                                           const void *data, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), NULL;
  axle_buffer_t *returned = axle_buffer_create_body(type, rank, dims, data, error);
  mem_scope_end(&scope);
  return returned;
}

AXLE_API void axle_buffer_free(axle_buffer_t *b) { host_buffer_free(b); }

AXLE_API axle_type_t axle_buffer_type(const axle_buffer_t *b) { return (axle_type_t)b->shape.type; }
AXLE_API int axle_buffer_rank(const axle_buffer_t *b) {
  return shape_is_tuple(&b->shape) ? 0 : b->shape.rank;
}
AXLE_API int64_t axle_buffer_dim(const axle_buffer_t *b, int d) {
  return !shape_is_tuple(&b->shape) && d >= 0 && d < b->shape.rank ? b->shape.dims[d] : -1;
}
AXLE_API size_t axle_buffer_byte_size(const axle_buffer_t *b) {
  return shape_is_tuple(&b->shape) ? 0 : (size_t)shape_byte_size(&b->shape);
}
AXLE_API void *axle_buffer_data(axle_buffer_t *b) { return b->data; }
AXLE_API int axle_buffer_tuple_count(const axle_buffer_t *b) {
  return shape_is_tuple(&b->shape) ? b->shape.tuple_count : 0;
}

static axle_buffer_t *axle_buffer_create_tuple_body(axle_buffer_t *const *elements, int count,
                                                 axle_error_t **error) {
  if (count < 0 || (count > 0 && !elements)) {
    api_error(error, STATUS_INPUT_ERROR, "axle_buffer_create_tuple: no elements given");
    return NULL;
  }
  for (int i = 0; i < count; i++)
    if (!elements[i]) {
      api_error(error, STATUS_INPUT_ERROR, "axle_buffer_create_tuple: an element is NULL");
      return NULL;
    }
  Status st;
  status_clear(&st);
  HostBuffer *b = host_buffer_create_tuple(elements, count, &st);
  if (!b) api_set_error(error, &st);
  return b;
}

AXLE_API axle_buffer_t *axle_buffer_create_tuple(axle_buffer_t *const *elements, int count,
                                                 axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), NULL;
  axle_buffer_t *returned = axle_buffer_create_tuple_body(elements, count, error);
  mem_scope_end(&scope);
  return returned;
}

AXLE_API axle_buffer_t *axle_buffer_tuple_element(axle_buffer_t *b, int i) {
  if (!shape_is_tuple(&b->shape) || i < 0 || i >= b->shape.tuple_count) return NULL;
  return b->elements[i];
}

/* ---- .npy files ---- */

static axle_buffer_t *axle_npy_read_body(const char *path, axle_error_t **error) {
  Status st;
  status_clear(&st);
  if (!path) {
    api_error(error, STATUS_INPUT_ERROR, "axle_npy_read: no path given");
    return NULL;
  }
  Literal *lit = npy_read(path, &st);
  if (!lit) {
    api_set_error(error, &st);
    return NULL;
  }
  return host_buffer_adopt_literal(lit);
}

AXLE_API axle_buffer_t *axle_npy_read(const char *path, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), NULL;
  axle_buffer_t *returned = axle_npy_read_body(path, error);
  mem_scope_end(&scope);
  return returned;
}

static bool axle_npy_write_body(const char *path, const axle_buffer_t *b, axle_error_t **error) {
  if (!path || !b) return api_error(error, STATUS_INPUT_ERROR, "axle_npy_write: no path or no buffer given");
  if (shape_is_tuple(&b->shape))
    return api_error(error, STATUS_INPUT_ERROR, "axle_npy_write: a tuple has no .npy form; write its elements");
  Status st;
  status_clear(&st);
  Literal *view = host_buffer_view(b);
  bool ok = npy_write(path, view, &st);
  literal_view_free(view);
  return ok ? true : api_set_error(error, &st);
}

AXLE_API bool axle_npy_write(const char *path, const axle_buffer_t *b, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), false;
  bool returned = axle_npy_write_body(path, b, error);
  mem_scope_end(&scope);
  return returned;
}

/* ---- executables ---- */

/* Every axle_compile of the process goes through this cache. */
static CompileCache api_compile_cache = COMPILE_CACHE_INIT;

AXLE_API axle_executable_t *axle_compile(const axle_module_t *am, axle_backend_t backend,
                                         axle_error_t **error) {
  return axle_compile_with(am, backend, NULL, error);
}

/* The caller's options over the defaults: the threads, the optimizer's
 * flags as a tool's AXLE_FLAGS would give them, the dump folder. */
static bool compile_options_apply(const axle_compile_options_t *given, ExecutableOptions *options, Status *st) {
  options->threads = given->threads;
  if (given->devices < 0 || given->devices > 1024)
    return status_error(st, STATUS_INPUT_ERROR, "axle_compile_options_t.devices must be from 0 to 1024, not %d",
                        given->devices);
  options->devices = given->devices;
  if (!opt_options_parse_flags(&options->opt, given->flags, "axle_compile_options_t.flags", st)) return false;
  if (given->dump_dir) {
    if (!given->dump_dir[0] || strlen(given->dump_dir) >= sizeof options->opt.dump_dir)
      return status_error(st, STATUS_INPUT_ERROR, "axle_compile_options_t.dump_dir: the folder name is %s",
                          given->dump_dir[0] ? "too long" : "empty");
    strcpy(options->opt.dump_dir, given->dump_dir);
  }
  if (given->gpu_target && given->gpu_target[0]) {
    if (options->backend != AXLE_BACKEND_GPU)
      return status_error(st, STATUS_INPUT_ERROR, "axle_compile_options_t.gpu_target is for AXLE_BACKEND_GPU only");
    if (strlen(given->gpu_target) >= sizeof options->gpu_target)
      return status_error(st, STATUS_INPUT_ERROR, "axle_compile_options_t.gpu_target: unknown GPU target '%.40s'",
                          given->gpu_target);
    strcpy(options->gpu_target, given->gpu_target);
  }
  return true;
}

static axle_executable_t *axle_compile_with_body(const axle_module_t *am, axle_backend_t backend,
                                              const axle_compile_options_t *given, axle_error_t **error) {
  Status st;
  status_clear(&st);
  if (!am) {
    api_error(error, STATUS_INPUT_ERROR, "axle_compile: no module given");
    return NULL;
  }
  if (given && given->threads < 0) {
    api_error(error, STATUS_INPUT_ERROR, "axle_compile_with: threads must be 0 (the default) or more");
    return NULL;
  }
  ExecutableOptions options;
  executable_options_default(&options, backend);
  if (given && !compile_options_apply(given, &options, &st)) {
    api_set_error(error, &st);
    return NULL;
  }
  /* Allocated first: once the cache holds the new executable, nothing of
   * this call may unwind (the unwind would free what the cache points to).
   * Several devices compile one executable each (device_run.c), uncached. */
  axle_executable_t *ae = mem_calloc(1, sizeof *ae);
  ae->devices = options.devices > 1 ? device_set_compile(am->module, &options, &st) : NULL;
  ae->executable = ae->devices          ? executable_share(ae->devices->executables[0])
                   : options.devices > 1 ? NULL
                                         : compile_cache_get(&api_compile_cache, am->module, &options, NULL, &st);
  if (!ae->executable) {
    device_set_free(ae->devices);
    mem_free(ae);
    api_set_error(error, &st);
    return NULL;
  }
  return ae;
}

AXLE_API axle_executable_t *axle_compile_with(const axle_module_t *am, axle_backend_t backend,
                                              const axle_compile_options_t *given, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), NULL;
  axle_executable_t *returned = axle_compile_with_body(am, backend, given, error);
  mem_scope_end(&scope);
  return returned;
}

AXLE_API void axle_executable_free(axle_executable_t *ae) {
  if (!ae) return;
  executable_free(ae->executable);
  device_set_free(ae->devices);
  mem_free(ae);
}

static bool axle_executable_run_body(axle_executable_t *ae, axle_buffer_t *const *args, int arg_count,
                                  axle_buffer_t **result, axle_error_t **error) {
  Status st;
  status_clear(&st);
  if (!ae || !result)
    return api_error(error, STATUS_INPUT_ERROR, "axle_executable_run: no executable or no result pointer");
  *result = executable_run(ae->executable, args, arg_count, &st);
  return *result ? true : api_set_error(error, &st);
}

AXLE_API bool axle_executable_run(axle_executable_t *ae, axle_buffer_t *const *args, int arg_count,
                                  axle_buffer_t **result, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), false;
  bool returned = axle_executable_run_body(ae, args, arg_count, result, error);
  mem_scope_end(&scope);
  return returned;
}

static bool axle_executable_run_devices_body(axle_executable_t *ae, axle_buffer_t *const *args, int arg_count,
                                          axle_buffer_t **results, int device_count, axle_error_t **error) {
  Status st;
  status_clear(&st);
  if (!ae || !results || (arg_count > 0 && !args) || arg_count < 0)
    return api_error(error, STATUS_INPUT_ERROR, "axle_executable_run_devices: no executable, arguments or results");
  int compiled_for = ae->devices ? ae->devices->count : 1;
  if (device_count != compiled_for) {
    status_error(&st, STATUS_INPUT_ERROR, "axle_executable_run_devices: the executable runs on %d devices, not %d",
                 compiled_for, device_count);
    return api_set_error(error, &st);
  }
  if (!ae->devices) {
    results[0] = executable_run(ae->executable, args, arg_count, &st);
    return results[0] ? true : api_set_error(error, &st);
  }
  return device_set_run(ae->devices, args, arg_count, results, &st) ? true : api_set_error(error, &st);
}

AXLE_API bool axle_executable_run_devices(axle_executable_t *ae, axle_buffer_t *const *args, int arg_count,
                                          axle_buffer_t **results, int device_count, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), false;
  bool returned = axle_executable_run_devices_body(ae, args, arg_count, results, device_count, error);
  mem_scope_end(&scope);
  return returned;
}

AXLE_API void axle_compile_cache_counts(int64_t *hits, int64_t *misses) {
  pthread_mutex_lock(&api_compile_cache.lock);
  if (hits) *hits = api_compile_cache.hits;
  if (misses) *misses = api_compile_cache.misses;
  pthread_mutex_unlock(&api_compile_cache.lock);
}

AXLE_API void axle_compile_cache_clear(void) { compile_cache_clear(&api_compile_cache); }
