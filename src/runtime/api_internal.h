/* What the public API's implementation files share. */
#ifndef AXLE_RUNTIME_API_INTERNAL_H
#define AXLE_RUNTIME_API_INTERNAL_H

#include "axle.h"
#include "ir.h"

struct axle_error {
  axle_status_t status;
  char *message;
};

struct axle_module {
  Module *module;
};

/* An executable as the API hands it out (api.c); api_device.c runs it too. */
typedef struct Executable Executable;
typedef struct DeviceSet DeviceSet;
struct axle_executable {
  Executable *executable;   /* shared with the compile cache; device 0's of devices */
  DeviceSet *devices;       /* compiled with axle_compile_options_t.devices > 1, else NULL */
};

/* Stores st as *error (when error is not NULL). Returns false. */
bool api_set_error(axle_error_t **error, const Status *st);
axle_module_t *api_wrap_module(Module *m);

/* Out of memory inside a public call unwinds to the call (ir.h, memory.c),
 * which frees what it had allocated and reports it here: stores
 * AXLE_ERROR_OUT_OF_MEMORY with the bytes that were asked for. Returns false.
 * Each public call that allocates is a thin guard around an unguarded body:
 *
 *   MemScope scope;
 *   mem_scope_begin(&scope);
 *   if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), NULL;
 *   T result = body(...);
 *   mem_scope_end(&scope);
 *   return result;
 */
bool api_out_of_memory(axle_error_t **error, const MemScope *scope);

#endif
