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

/* One leaf of a value as a backend holds it: dense in shape's layout
 * (minor_to_major), element 0 first. */
typedef struct ObservedLeaf {
  const Shape *shape;
  const void *data;
} ObservedLeaf;

/* Called by run_observed after each instruction of the entry the backend
 * computes, in schedule order, with the leaves of its value (depth first).
 * Returning false stops the run; st then says why (executable_debug.c). */
typedef bool StepObserver(void *context, const Instruction *inst, const ObservedLeaf *leaves,
                          int leaf_count, Status *st);

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
  /* Optional (NULL: run, then a copy out of its result). run writing the
   * result's array leaves, depth first and row-major, to the caller's
   * memory at result_leaves[i] (each sized for its leaf, 16-byte aligned):
   * axle_executable_run_into. */
  bool (*run_into)(const Executable *exe, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                   Status *st);
  void (*free_program)(void *program);
  /* Optional (NULL: the backend cannot show its work). run, calling
   * observe after each instruction it computes: --check and --find-nan. */
  HostBuffer *(*run_observed)(const Executable *exe, HostBuffer *const *args, int arg_count,
                              StepObserver *observe, void *context, Status *st);
  /* Optional: writes what the backend compiled (kernels, listings) under
   * dir, for --dump. */
  bool (*dump)(const Executable *exe, const char *dir, Status *st);
  /* Optional (NULL: the backend computes in host memory, and a device
   * buffer is a host buffer run through run). Arrays kept in the backend's
   * own memory between runs, named by an address: upload (bytes row-major),
   * download, release; run_on_device takes one address per entry
   * parameter (arrays only) and gives one new address per result leaf,
   * depth first, each released by the caller (src/runtime/api_device.c). */
  bool (*device_upload)(const Executable *exe, const void *data, size_t bytes, uint64_t *address, Status *st);
  bool (*device_download)(const Executable *exe, uint64_t address, void *data, size_t bytes, Status *st);
  void (*device_release)(const Executable *exe, uint64_t address);
  bool (*run_on_device)(const Executable *exe, const uint64_t *args, int arg_count, uint64_t *results,
                        int result_count, Status *st);
  /* Optional (NULL: the host's clock is the only one). The device's own
   * time of each of runs runs, in ms[runs]: the work alone, the arguments
   * already in place (executable_time, axle-run --time). */
  bool (*time_device)(const Executable *exe, HostBuffer *const *args, int arg_count, int runs, double *ms,
                      Status *st);
} Backend;

enum { BACKEND_COUNT = AXLE_BACKEND_GPU + 1 };

extern const Backend backend_interp, backend_cpu, backend_gpu;

/* The entry for id; NULL with a message for a value outside the enum. */
const Backend *backend_get(axle_backend_t id, Status *st);
/* (backend_support.c) The one message a native backend gives for an instruction it cannot
 * compile, located at it (a fusion the optimizer made at the line of the
 * value it computes): "the NAME backend cannot compile INST (op) yet: why"
 * then `after` (may be ""). Returns false. */
bool backend_refuse(Status *st, const Module *m, const Instruction *inst, const char *backend_name,
                    const char *why, const char *after);
/* "interp", "cpu", "gpu" to the enum; a message naming the choices else. */
bool backend_id_from_name(const char *name, axle_backend_t *id, Status *st);

#endif
