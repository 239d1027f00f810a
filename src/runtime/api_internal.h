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

#endif
