/* The public API's runs into the caller's memory (include/axle.h): the
 * results' shapes, known from the compiled module before any run, and a
 * run that writes each result array where the caller says, so that a
 * deployment's loop allocates nothing for its values. */
#include <stdlib.h>
#include <string.h>

#include "runtime/api_internal.h"
#include "runtime/executable.h"

/* The result's index-th array. The module as given is asked, not the
 * optimized one: a result's dims and type are the module's, whatever
 * layout the backend keeps it in. */
static const Shape *result_leaf(const axle_executable_t *ae, int index) {
  if (!ae || index < 0) return NULL;
  return shape_leaf_at(&ae->executable->module->entry->root->shape, index);
}

AXLE_API axle_type_t axle_executable_result_type(const axle_executable_t *ae, int index) {
  const Shape *s = result_leaf(ae, index);
  return s ? (axle_type_t)s->type : AXLE_TUPLE;
}

AXLE_API int axle_executable_result_rank(const axle_executable_t *ae, int index) {
  const Shape *s = result_leaf(ae, index);
  return s ? s->rank : -1;
}

AXLE_API int64_t axle_executable_result_dim(const axle_executable_t *ae, int index, int dim) {
  const Shape *s = result_leaf(ae, index);
  return s && dim >= 0 && dim < s->rank ? s->dims[dim] : -1;
}

/* Row-major bytes, one byte per element for the sub-byte types, as a
 * host buffer of the shape holds them. */
AXLE_API size_t axle_executable_result_byte_size(const axle_executable_t *ae, int index) {
  const Shape *s = result_leaf(ae, index);
  return s ? (size_t)shape_byte_size(s) : 0;  /* whatever its layout: the count times the type's size */
}

/* The count, each size and each pointer's alignment, before anything runs.
 * 16 bytes is what malloc gives and what the native backends' code may
 * assume of a result it writes in place. */
static bool results_check(const axle_executable_t *ae, void *const *results, const size_t *result_sizes,
                          int result_count, Status *st) {
  int leaves = axle_executable_result_count(ae);
  if (result_count != leaves)
    return status_error(st, STATUS_INPUT_ERROR, "axle_executable_run_into: the result has %d arrays, not %d",
                        leaves, result_count);
  if (result_count > 0 && (!results || !result_sizes))
    return status_error(st, STATUS_INPUT_ERROR, "axle_executable_run_into: no results or no result sizes given");
  for (int i = 0; i < result_count; i++) {
    size_t need = axle_executable_result_byte_size(ae, i);
    if (result_sizes[i] < need)
      return status_error(st, STATUS_INPUT_ERROR, "axle_executable_run_into: result %d needs %zu bytes, given %zu",
                          i, need, result_sizes[i]);
    if (need > 0 && !results[i])
      return status_error(st, STATUS_INPUT_ERROR, "axle_executable_run_into: result %d is NULL", i);
    if (need > 0 && (uintptr_t)results[i] % 16 != 0)
      return status_error(st, STATUS_INPUT_ERROR,
                          "axle_executable_run_into: result %d is not aligned to 16 bytes (as malloc's memory is)", i);
  }
  return true;
}

static bool axle_executable_run_into_body(axle_executable_t *ae, axle_buffer_t *const *args, int arg_count,
                                       void *const *results, const size_t *result_sizes, int result_count,
                                       axle_error_t **error) {
  Status st;
  status_clear(&st);
  if (!ae) status_error(&st, STATUS_INPUT_ERROR, "axle_executable_run_into: no executable given");
  else if (results_check(ae, results, result_sizes, result_count, &st) &&
           executable_run_into(ae->executable, args, arg_count, results, &st))
    return true;
  return api_set_error(error, &st);
}

AXLE_API bool axle_executable_run_into(axle_executable_t *ae, axle_buffer_t *const *args, int arg_count,
                                       void *const *results, const size_t *result_sizes, int result_count,
                                       axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), false;
  bool returned = axle_executable_run_into_body(ae, args, arg_count, results, result_sizes, result_count, error);
  mem_scope_end(&scope);
  return returned;
}
