/* A backend is a small table of functions, in the manner of QBE's Target:
 * the hooks a compile calls, then run, free and the optional extras. The
 * interpreter, the CPU and the GPU are entries of one table, indexed by
 * the public enum axle_backend_t; a new target is a new entry.
 *
 *   entry                  file
 *   AXLE_BACKEND_INTERP    src/runtime/backend.c   (the reference evaluator)
 *   AXLE_BACKEND_CPU       src/emit_x86/cpu_backend.c
 *   AXLE_BACKEND_GPU       src/emit_ptx/gpu_backend.c
 *
 * A compile is one function for every target, backend_compile
 * (backend_compile.c): build the program stage's Program of the module
 * (src/opt/program.h), ask the target whether it supports each step,
 * nested programs included, and refuse the first it does not, before any
 * code is made; then begin, one compile hook per step in order (the walk,
 * backend_compile_steps, which control flow calls again for the programs
 * it runs), and load. executable.c is the only caller: it clones and
 * optimizes the module, checks the arguments once, and runs. */
#ifndef AXLE_RUNTIME_BACKEND_H
#define AXLE_RUNTIME_BACKEND_H

#include "axle.h"
#include "ir.h"
#include "opt/program.h"
#include "runtime/buffer.h"

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

/* What a compile takes besides the module and its buffer plan: the
 * caller's options (executable.c fills them from ExecutableOptions). */
typedef struct BackendOptions {
  /* Threads of the CPU's run, the caller's included: 0 means AXLE_THREADS
   * when set, else all cores. Results do not depend on it. */
  int threads;
  int cpu_level;               /* a CpuLevel; 0: this machine's */
  bool listings;               /* keep what a reader of the code needs (listings, the PTX) */
  int64_t replica_count, partition_count; /* the run's devices (1 x 1 on one device) */
  int device_index;            /* which of them this executable is (GPU d runs device d) */
  struct NcclCliques *nccl;    /* a run over several GPUs: its communicators (not owned) */
  char gpu_target[16];         /* "sm_80", "sm_90a" (docs/gpu.md), or "" for the device's own */
  bool gpu_no_wgmma;           /* sm_90a's half GEMMs on mma.sync */
  bool compile_only;           /* the caller will not run: a named GPU target opens no device */
} BackendOptions;

typedef struct Backend {
  const char *name;            /* "interp", as --backend spells it */
  const char *title;           /* "CPU", as its refusals name it */
  const char *refusal_hint;    /* after each refusal ("" or what runs it instead) */
  /* Whether the optimizer runs by default (native backends: yes; the
   * interpreter runs the module as written). */
  bool optimizes;

  /* ---- the target hooks (NULL begin: the backend compiles nothing, as
   * the interpreter; backend_compile.c calls them in this order) ---- */
  /* Whether the target can compile step of program (its kernel lowered,
   * its op one the target has a routine for ...); false with why->text
   * (which may stay NULL) the reason, which backend_refuse gives located
   * at the step's instruction; a reason made for this step is written into
   * why->made (src/opt/program.h). Called for every step before anything
   * is made. */
  bool (*supports)(const Program *program, const ProgramStep *step, StepReason *why);
  /* The target's compile state for program, the entry's: its storage from
   * the program's bindings. Takes program (keeps or frees it). NULL after
   * an error. */
  void *(*begin)(const Module *m, Program *program, const BackendOptions *o, Status *st);
  /* One step each: a kernel (a loop, reduce or row kernel), a product with
   * its epilogue, a routine (and the copies and collectives), control flow
   * (while, conditional, call: their programs compiled through
   * backend_compile_steps). False after a located error. */
  bool (*compile_kernel)(void *target, const ProgramStep *step);
  bool (*compile_product)(void *target, const ProgramStep *step);
  bool (*compile_routine)(void *target, const ProgramStep *step);
  bool (*compile_control)(void *target, const ProgramStep *step);
  /* The program run runs (code loaded, device memory placed), made from
   * target, which it frees; compiled false (a step failed): frees target
   * only and returns NULL. */
  void *(*load)(void *target, bool compiled, Status *st);
  /* ---- the run hooks: each takes the program load returned (NULL for
   * the interpreter, which has no hooks) and what else it needs, never
   * the runtime's Executable; executable.c and api_device.c call them.
   * m, where a hook takes it, is the module the program was compiled
   * from: what the interpreter runs, what a dump names. ---- */
  /* Runs with arguments already checked against the entry's parameters;
   * the result is a new buffer. */
  HostBuffer *(*run)(void *program, const Module *m, HostBuffer *const *args, int arg_count, Status *st);
  /* Optional (NULL: run, then a copy out of its result). run writing the
   * result's array leaves, depth first and row-major, to the caller's
   * memory at result_leaves[i] (each sized for its leaf, 16-byte aligned):
   * axle_executable_run_into. */
  bool (*run_into)(void *program, HostBuffer *const *args, int arg_count, void *const *result_leaves, Status *st);
  void (*free_program)(void *program);
  /* Optional (NULL: the backend cannot show its work). run, calling
   * observe after each instruction it computes: --check and --find-nan. */
  HostBuffer *(*run_observed)(void *program, const Module *m, HostBuffer *const *args, int arg_count,
                              StepObserver *observe, void *context, Status *st);
  /* Optional: writes what the backend compiled (kernels, listings) under
   * dir, for --dump. */
  bool (*dump)(void *program, const Module *m, const char *dir, Status *st);
  /* Optional (NULL: the backend computes in host memory, and a device
   * buffer is a host buffer run through run). Arrays kept in the backend's
   * own memory between runs, named by an address: upload (bytes row-major),
   * download, release; run_on_device takes one address per entry
   * parameter (arrays only) and gives one new address per result leaf,
   * depth first, each released by the caller (src/runtime/api_device.c). */
  bool (*device_upload)(void *program, const void *data, size_t bytes, uint64_t *address, Status *st);
  bool (*device_download)(void *program, uint64_t address, void *data, size_t bytes, Status *st);
  void (*device_release)(void *program, uint64_t address);
  bool (*run_on_device)(void *program, const uint64_t *args, int arg_count, uint64_t *results, int result_count,
                        Status *st);
  /* Optional (NULL: the host's clock is the only one). The device's own
   * time of each of runs runs, in ms[runs]: the work alone, the arguments
   * already in place (executable_time, axle-run --time). */
  bool (*time_device)(void *program, HostBuffer *const *args, int arg_count, int runs, double *ms, Status *st);
} Backend;

enum { BACKEND_COUNT = AXLE_BACKEND_GPU + 1 };

extern const Backend backend_interp, backend_cpu, backend_gpu;

/* The entry for id; NULL with a message for a value outside the enum. */
const Backend *backend_get(axle_backend_t id, Status *st);
/* ---------------------------------------------------- backend_compile.c
 * The compile every target shares (see the top): the program of m with
 * plan, refused or compiled through b's hooks into *program (NULL for a
 * backend without hooks). */
bool backend_compile(const Backend *b, const Module *m, const BufferPlan *plan, const BackendOptions *o,
                     void **program, Status *st);
/* The walk: each step of p, in order, handed to b's hook for its kind.
 * Control flow calls it again, with a target of its own, for the programs
 * its step runs. */
bool backend_compile_steps(const Backend *b, void *target, const Program *p, Status *st);

/* (backend_support.c) The one message a native backend gives for an instruction it cannot
 * compile, located at it (a fusion the optimizer made at the line of the
 * value it computes): "the NAME backend cannot compile INST (op) yet: why"
 * then `after` (may be ""). Returns false. */
bool backend_refuse(Status *st, const Module *m, const Instruction *inst, const char *backend_name,
                    const char *why, const char *after);
/* "interp", "cpu", "gpu" to the enum; a message naming the choices else. */
bool backend_id_from_name(const char *name, axle_backend_t *id, Status *st);

#endif
