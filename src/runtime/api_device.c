/* The public API's device buffers (include/axle.h): arrays kept where an
 * executable's backend computes, so that a loop of runs copies its weights
 * and state once instead of every step.
 *
 * A backend with memory of its own (the GPU: backend.h's device_* entries)
 * holds the array at an address; for the others (the CPU backend, the
 * interpreter) a device buffer is a host buffer and a run on device
 * buffers is an ordinary run whose result is split into its leaves, so
 * the same calls work on every backend. A device buffer holds a reference
 * to the executable it was made for, whose backend keeps the device open:
 * it may outlive the caller's handle on that executable. */
#include <stdlib.h>
#include <string.h>

#include "runtime/api_internal.h"
#include "runtime/executable.h"

struct axle_device_buffer {
  Shape shape;          /* an array, row-major */
  Executable *owner;    /* a shared reference */
  uint64_t address;     /* backends with device memory */
  HostBuffer *host;     /* backends without: the values */
};

static bool device_error(axle_error_t **error, StatusCode code, const char *message) {
  Status st;
  status_clear(&st);
  status_error(&st, code, "%s", message);
  return api_set_error(error, &st);
}

static axle_device_buffer_t *device_buffer_new(Executable *owner, const Shape *shape) {
  axle_device_buffer_t *d = mem_calloc(1, sizeof *d);
  d->shape = shape_array(shape->type, shape->rank, shape->dims);
  d->owner = executable_share(owner);
  return d;
}

AXLE_API void axle_device_buffer_free(axle_device_buffer_t *d) {
  if (!d) return;
  if (d->host) host_buffer_free(d->host);
  else if (d->owner->backend->device_release) d->owner->backend->device_release(d->owner->program, d->address);
  executable_free(d->owner);
  mem_free(d);
}

static axle_device_buffer_t *axle_buffer_to_device_body(axle_executable_t *ae, const axle_buffer_t *buffer,
                                                     axle_error_t **error) {
  if (!ae || !buffer) {
    device_error(error, STATUS_INPUT_ERROR, "axle_buffer_to_device: no executable or no buffer given");
    return NULL;
  }
  if (shape_is_tuple(&buffer->shape)) {
    device_error(error, STATUS_INPUT_ERROR, "axle_buffer_to_device: device buffers hold arrays, not tuples");
    return NULL;
  }
  Status st;
  status_clear(&st);
  axle_device_buffer_t *d = device_buffer_new(ae->executable, &buffer->shape);
  const Backend *backend = d->owner->backend;
  bool ok = backend->device_upload
                ? backend->device_upload(d->owner->program, buffer->data, (size_t)shape_byte_size(&buffer->shape),
                                         &d->address, &st)
                : (d->host = host_buffer_clone(buffer, &st)) != NULL;
  if (!ok) {
    executable_free(d->owner);
    mem_free(d);
    api_set_error(error, &st);
    return NULL;
  }
  return d;
}

AXLE_API axle_device_buffer_t *axle_buffer_to_device(axle_executable_t *ae, const axle_buffer_t *buffer,
                                                     axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), NULL;
  axle_device_buffer_t *returned = axle_buffer_to_device_body(ae, buffer, error);
  mem_scope_end(&scope);
  return returned;
}

static axle_buffer_t *axle_buffer_to_host_body(const axle_device_buffer_t *d, axle_error_t **error) {
  if (!d) {
    device_error(error, STATUS_INPUT_ERROR, "axle_buffer_to_host: no device buffer given");
    return NULL;
  }
  Status st;
  status_clear(&st);
  if (d->host) {
    HostBuffer *copy = host_buffer_clone(d->host, &st);
    if (!copy) api_set_error(error, &st);
    return copy;
  }
  HostBuffer *h = host_buffer_create(&d->shape, NULL, &st);
  if (h && !d->owner->backend->device_download(d->owner->program, d->address, h->data, (size_t)shape_byte_size(&d->shape), &st)) {
    host_buffer_free(h);
    h = NULL;
  }
  if (!h) api_set_error(error, &st);
  return h;
}

AXLE_API axle_buffer_t *axle_buffer_to_host(const axle_device_buffer_t *d, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), NULL;
  axle_buffer_t *returned = axle_buffer_to_host_body(d, error);
  mem_scope_end(&scope);
  return returned;
}

/* The array leaves of s, depth first, into leaves[*n...] (NULL: count only). */
static void result_leaves_collect(const Shape *s, const Shape **leaves, int *n) {
  if (!shape_is_tuple(s)) {
    if (leaves) leaves[*n] = s;
    (*n)++;
    return;
  }
  for (int i = 0; i < s->tuple_count; i++) result_leaves_collect(&s->tuple_shapes[i], leaves, n);
}

AXLE_API int axle_executable_result_count(const axle_executable_t *ae) {
  if (!ae) return 0;
  int n = 0;
  result_leaves_collect(&executable_module_to_run(ae->executable)->entry->root->shape, NULL, &n);
  return n;
}

/* The arguments against the entry's parameters (host_buffer_check_arguments,
 * through views that carry the shapes only) and against the backend. */
static bool device_arguments_check(const Executable *e, axle_device_buffer_t *const *args, int arg_count,
                                   Status *st) {
  if (arg_count < 0 || (arg_count > 0 && !args))
    return status_error(st, STATUS_INPUT_ERROR, "axle_run_on_device: no arguments given");
  HostBuffer *views = mem_calloc((size_t)arg_count + 1, sizeof *views);
  HostBuffer **pointers = mem_calloc((size_t)arg_count + 1, sizeof *pointers);
  bool ok = true;
  for (int i = 0; i < arg_count && ok; i++) {
    if (!args[i]) ok = status_error(st, STATUS_INPUT_ERROR, "axle_run_on_device: argument %d is NULL", i);
    else if (args[i]->owner->backend != e->backend)
      ok = status_error(st, STATUS_INPUT_ERROR, "axle_run_on_device: argument %d was made for the %s backend, not %s",
                        i, args[i]->owner->backend->name, e->backend->name);
    else views[i].shape = args[i]->shape, pointers[i] = &views[i];
  }
  ok = ok && host_buffer_check_arguments(executable_module_to_run(e)->entry, pointers, arg_count, st);
  mem_free(pointers);
  mem_free(views);
  return ok;
}

/* The array leaves of b, depth first, as device buffers holding copies. */
static bool host_leaves_take(Executable *e, const HostBuffer *b, const Shape **shapes, axle_device_buffer_t **results,
                             int *n, int count, Status *st) {
  if (shape_is_tuple(&b->shape)) {
    for (int i = 0; i < b->shape.tuple_count; i++)
      if (!host_leaves_take(e, b->elements[i], shapes, results, n, count, st)) return false;
    return true;
  }
  if (*n >= count) return status_error(st, STATUS_RUNTIME_ERROR, "the result has more leaves than its shape");
  results[*n] = device_buffer_new(e, shapes[*n]);
  results[*n]->host = host_buffer_clone(b, st);
  return results[(*n)++]->host != NULL;
}

/* Without device memory: an ordinary run, its result split into leaves. */
static bool host_run_split(Executable *e, axle_device_buffer_t *const *args, int arg_count, const Shape **shapes,
                           axle_device_buffer_t **results, int result_count, Status *st) {
  HostBuffer **hosts = mem_calloc((size_t)arg_count + 1, sizeof *hosts);
  for (int i = 0; i < arg_count; i++) hosts[i] = args[i]->host;
  HostBuffer *r = executable_run(e, hosts, arg_count, st);
  mem_free(hosts);
  if (!r) return false;
  int n = 0;
  bool ok = host_leaves_take(e, r, shapes, results, &n, result_count, st);
  host_buffer_free(r);
  return ok;
}

static bool axle_run_on_device_body(axle_executable_t *ae, axle_device_buffer_t *const *args, int arg_count,
                                 axle_device_buffer_t **results, int result_count, axle_error_t **error) {
  if (!ae || !results)
    return device_error(error, STATUS_INPUT_ERROR, "axle_run_on_device: no executable or no results array");
  Executable *e = ae->executable;
  int leaves = axle_executable_result_count(ae);
  if (result_count != leaves) {
    char message[160];
    snprintf(message, sizeof message, "axle_run_on_device: the result has %d arrays, not %d", leaves, result_count);
    return device_error(error, STATUS_INPUT_ERROR, message);
  }
  for (int l = 0; l < result_count; l++) results[l] = NULL;
  Status st;
  status_clear(&st);
  if (!device_arguments_check(e, args, arg_count, &st)) return api_set_error(error, &st);
  const Shape **shapes = mem_calloc((size_t)leaves + 1, sizeof *shapes);
  int n = 0;
  result_leaves_collect(&executable_module_to_run(e)->entry->root->shape, shapes, &n);
  bool ok;
  if (e->backend->run_on_device) {
    uint64_t *addresses = mem_calloc((size_t)arg_count + 1, sizeof *addresses);
    uint64_t *outs = mem_calloc((size_t)leaves + 1, sizeof *outs);
    for (int i = 0; i < arg_count; i++) addresses[i] = args[i]->address;
    ok = e->backend->run_on_device(e->program, addresses, arg_count, outs, leaves, &st);
    for (int l = 0; ok && l < leaves; l++) results[l] = device_buffer_new(e, shapes[l]), results[l]->address = outs[l];
    mem_free(outs);
    mem_free(addresses);
  } else {
    ok = host_run_split(e, args, arg_count, shapes, results, leaves, &st);
  }
  mem_free(shapes);
  if (ok) return true;
  for (int l = 0; l < result_count; l++) axle_device_buffer_free(results[l]), results[l] = NULL;
  return api_set_error(error, &st);
}

AXLE_API bool axle_run_on_device(axle_executable_t *ae, axle_device_buffer_t *const *args, int arg_count,
                                 axle_device_buffer_t **results, int result_count, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), false;
  bool returned = axle_run_on_device_body(ae, args, arg_count, results, result_count, error);
  mem_scope_end(&scope);
  return returned;
}
