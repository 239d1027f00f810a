/* The GPU backend's program: what gpu_backend.c compiles an Executable
 * into and what gpu_program.c runs.
 *
 * It is the entry's schedule as a list of host steps over device buffers:
 * kernel launches, and for control flow device-to-device copies, loops and
 * conditionals (GpuStep). Storage is named by bindings, as in the CPU backend: one per
 * slot of the entry's buffer plan (same index), then one per constant that
 * a kernel holds inside its fused computation. Every binding is a fixed
 * device address, decided at compile time:
 *   parameters, outputs   a place in the executable's I/O block
 *   temporaries           the plan's offset in the one temporary block
 *   constants             a place in the constant block, uploaded once
 * so a run allocates nothing: it stages the arguments up (TransferManager),
 * launches every kernel in schedule order on the one stream, copies each
 * result leaf back, and synchronizes once. A run holds the program's lock:
 * runs of one executable from several threads queue. */
#ifndef AXLE_EMIT_PTX_GPU_PROGRAM_H
#define AXLE_EMIT_PTX_GPU_PROGRAM_H

#include <pthread.h>

#include "emit_ptx/ptx_builder.h"
#include "opt/opt.h"
#include "runtime/backend.h"
#include "runtime/buffer.h"
#include "runtime/transfer_manager.h"

typedef enum GpuBindingKind {
  GPU_BINDING_NONE,        /* no storage (tokens, empty arrays, alias slots) */
  GPU_BINDING_PARAMETER,   /* leaf `leaf` of argument `number`, in the I/O block */
  GPU_BINDING_OUTPUT,      /* in the I/O block */
  GPU_BINDING_TEMP,        /* the temporary block at offset */
  GPU_BINDING_CONSTANT,    /* the constant block at offset; data uploaded at compile */
} GpuBindingKind;

typedef struct GpuBinding {
  GpuBindingKind kind;
  int64_t number, leaf;
  int64_t offset, bytes;   /* in its block */
  /* Parameters: the device holds the array in this layout, not row-major
   * (NULL: row-major); the upload goes through it. */
  const Shape *layout;
  CUdeviceptr address;     /* set once the blocks are allocated */
} GpuBinding;

enum { GPU_LAUNCH_MAX_SCALARS = 8, GPU_LAUNCH_MAX_TENSOR_MAPS = 2 };

/* A kernel parameter that is a tensor map (the TMA's description of an
 * operand) over the launch's buffers[buffer]: encoded at each launch,
 * because a run may place its parameters at the caller's device memory. */
typedef struct GpuLaunchTensorMap {
  int buffer;
  GpuTensorMapShape shape;
} GpuLaunchTensorMap;

typedef struct GpuLaunch {
  const Instruction *inst;  /* for located run-time errors */
  char entry[160];          /* the PTX .entry name */
  CUfunction function;
  unsigned grid, block;     /* one-dimensional */
  int buffer_count;         /* the kernel's inputs, then its outputs */
  int *buffers;             /* binding numbers */
  /* Passed after the buffers, as .u64 (a pass number, a stride, ...). */
  int scalar_count;
  int64_t scalars[GPU_LAUNCH_MAX_SCALARS];
  unsigned shared_bytes;    /* dynamic shared memory */
  /* Passed after the scalars, by value (128 bytes each). */
  int tensor_map_count;
  GpuLaunchTensorMap tensor_maps[GPU_LAUNCH_MAX_TENSOR_MAPS];
} GpuLaunch;

/* What a run does, in order: host steps. Most are launches; control flow
 * (gpu_control.c) adds device-to-device copies and steps that download a
 * scalar (a loop's pred, a conditional's branch index) and pick which of
 * their own step lists to run. */
typedef enum GpuStepKind {
  GPU_STEP_LAUNCH,        /* launches[launch] */
  GPU_STEP_COPY,          /* bytes from binding `from` to binding `to`, on the stream */
  GPU_STEP_WHILE,         /* lists[0] (the condition), download the pred at `selector`;
                             while it is true: lists[1] (the body), then lists[0] again */
  GPU_STEP_CONDITIONAL,   /* download the index at `selector`, run lists[index]; a pred
                             picks 0 when true; an s32 out of range picks the last */
  GPU_STEP_COLLECTIVE,    /* a collective across GPUs: `collective`'s copies and NCCL calls */
} GpuStepKind;

typedef struct GpuSteps {
  int count, capacity;
  struct GpuStep *steps;
} GpuSteps;

typedef struct GpuStep {
  GpuStepKind kind;
  const Instruction *inst;  /* for located run-time errors */
  int launch;               /* LAUNCH */
  int from, to;             /* COPY: bindings */
  int64_t bytes;            /* COPY */
  int selector;             /* WHILE, CONDITIONAL: the binding downloaded */
  bool selector_is_pred;    /* CONDITIONAL: a pred (1 byte), else an s32 */
  int list_count;           /* WHILE: 2; CONDITIONAL: the branches */
  GpuSteps *lists;          /* owned */
  struct GpuCollective *collective; /* COLLECTIVE: owned (gpu_collective.c) */
} GpuStep;

typedef struct GpuProgram {
  GpuDevice gpu;
  CUmodule module;
  const char *filename;     /* the module's, for located errors (not owned) */
  int binding_count, binding_capacity;
  GpuBinding *bindings;
  int launch_count, launch_capacity;
  GpuLaunch *launches;
  GpuSteps steps;           /* what a run does */
  GpuSteps *current;        /* where gpu_program_add_launch appends its step (compile time) */
  int result_leaf_count;
  int *result_bindings;     /* the binding each root leaf is copied back from */
  const Shape **result_layouts; /* each root leaf's layout on the device (NULL: row-major) */
  const Shape *result_shape;
  /* The device blocks, each one cuMemAlloc, and their sizes. */
  int64_t io_bytes, temp_bytes, constant_bytes;
  CUdeviceptr io_block, temp_block, constant_block;
  /* Constants' host bytes until they are uploaded at the end of compile. */
  void **constant_data;
  TransferManager transfers;
  pthread_mutex_t lock;
  /* Whether the kernels are on a device: false after a compile for a named
   * target that opened none (--target with --compile-only), which cannot run. */
  bool loaded;
  char target_name[16];     /* the --target it was compiled for ("" for the device's own) */
  const BufferPlan *plan;   /* the entry's (the caller's), which --check reads values through */
  PtxBuilder *ptx;          /* the module's PTX, kept for --dump (gpu_debug.c); else NULL */
} GpuProgram;

/* ------------------------------------------------------------ gpu_backend.c */
/* The PTX of every kernel of an optimized module (plan: the entry's buffer
 * plan) for the named target ("sm_80", "sm_90a"), written with no driver or
 * device: what the GPU backend would load (axle-opt --stage=ptx). */
bool gpu_write_ptx(const Module *m, const BufferPlan *plan, const char *target_name, bool no_wgmma, StrBuf *out,
                   Status *st);

/* -------------------------------------------------------------- gpu_debug.c
 * --dump: DIR/kernels/index.txt (every launch) and DIR/kernels/NAME.ptx,
 * the PTX of instruction NAME's kernels as a module of its own. Writes
 * nothing for a program that did not keep its PTX (p->ptx NULL). */
bool gpu_program_dump(const GpuProgram *p, const Module *m, const char *dir, Status *st);

/* ------------------------------------------------------------ gpu_program.c */
/* Someone watching a run (gpu_observe.c): after_step is called after step
 * `index` of the entry's own list (p->steps) has been enqueued, not after
 * the steps inside a loop or a conditional, which belong to theirs.
 * Returning false stops the run. A run without a watch pays nothing. */
typedef struct GpuWatch GpuWatch;
struct GpuWatch {
  bool (*after_step)(const GpuWatch *watch, GpuProgram *p, int index, Status *st);
};

GpuProgram *gpu_program_create(const Shape *result_shape, const char *filename);
void gpu_program_free(GpuProgram *p);
/* A new binding; for a constant, data (bytes long) becomes the program's. */
int gpu_program_add_binding(GpuProgram *p, GpuBinding b, void *data);
/* A launch, and its step at the end of p->current. */
GpuLaunch *gpu_program_add_launch(GpuProgram *p, const Instruction *inst, int buffer_count);
/* A step at the end of `list` (zeroed but for kind and inst); valid until
 * the next step is added to that list. */
GpuStep *gpu_steps_add(GpuSteps *list, GpuStepKind kind, const Instruction *inst);
void gpu_steps_free(GpuSteps *list);
/* Allocates the three device blocks, uploads the constants (once, here)
 * and pins the staging buffer; out of memory says how many bytes. */
bool gpu_program_place(GpuProgram *p, Status *st);
HostBuffer *gpu_program_run(GpuProgram *p, HostBuffer *const *args, int arg_count, Status *st);
/* The same run writing the result's leaves (depth first, row-major) into
 * the caller's memory at result_leaves[i]. */
bool gpu_program_run_into(GpuProgram *p, HostBuffer *const *args, void *const *result_leaves, Status *st);
/* The same two runs, watched (watch NULL: as above). */
HostBuffer *gpu_program_run_watched(GpuProgram *p, HostBuffer *const *args, const GpuWatch *watch, Status *st);
bool gpu_program_run_watched_into(GpuProgram *p, HostBuffer *const *args, void *const *result_leaves,
                                  const GpuWatch *watch, Status *st);
/* Runs every step in order on the stream, each buffer at addresses[its
 * binding] (NULL: the bindings' own addresses), so a run can put
 * parameters and results at the caller's device memory. Loops and
 * conditionals wait for the stream to download their scalar. The caller
 * holds p->lock and has entered the context. */
bool gpu_program_launch_all(GpuProgram *p, const CUdeviceptr *addresses, Status *st);
/* Rewrites st's message as located at l's instruction (a fusion's at its
 * root's line) and returns false. */
bool gpu_launch_locate(const GpuProgram *p, const GpuLaunch *l, Status *st);

/* ------------------------------------------------------------ gpu_observe.c
 * Backend.run_observed (axle-run --check, --find-nan): the program's own
 * run, watched; after the last step of each entry instruction its leaves
 * (plan: the entry's buffer plan) are copied to the host and handed to
 * observe, as the CPU backend hands its own (src/runtime/backend.h). */
HostBuffer *gpu_program_run_observed(GpuProgram *p, const BufferPlan *plan, HostBuffer *const *args,
                                     StepObserver *observe, void *context, Status *st);

/* --------------------------------------------------------- gpu_collective.c
 * A collective across GPUs is a short list of actions run on the stream:
 * device-to-device copies that lay blocks out for NCCL, and NCCL calls on
 * the group's communicator. */
typedef struct GpuCollective GpuCollective;
bool gpu_collective_run(GpuProgram *p, const GpuCollective *k, const CUdeviceptr *addresses, Status *st);
void gpu_collective_free(GpuCollective *k);

/* ------------------------------------------------------ gpu_device_buffers.c
 * Arrays kept on the device between runs (backend.h's device_* entries,
 * the C API's axle_run_on_device): a run whose parameters are the
 * caller's device pointers and whose results are new device memory, so
 * that nothing crosses the bus. */
bool gpu_device_upload(GpuProgram *p, const void *data, size_t bytes, uint64_t *address, Status *st);
bool gpu_device_download(GpuProgram *p, uint64_t address, void *data, size_t bytes, Status *st);
void gpu_device_release(GpuProgram *p, uint64_t address);
bool gpu_run_on_device(GpuProgram *p, const uint64_t *args, int arg_count, uint64_t *results, int result_count,
                       Status *st);

/* ------------------------------------------------------------- gpu_timing.c
 * Backend.time_device: one ordinary run stages the arguments into the
 * parameters' device memory, then each timed run is the launches alone
 * between two CUDA events on the stream (no transfers, no host work). */
bool gpu_time_device(GpuProgram *p, HostBuffer *const *args, int arg_count, int runs, double *ms, Status *st);

#endif
