/* A collective across GPUs (docs/multi-device.md, "Across GPUs"): a short
 * list of actions on the program's stream, NCCL calls on the group's
 * communicator and device-to-device copies that lay the blocks out the
 * way NCCL reads and writes them. gpu_collective.c compiles an
 * instruction into one; gpu_collective_run.c keeps and runs the list
 * (gpu_program.h declares the run and free the run loop calls). */
#ifndef AXLE_EMIT_PTX_GPU_COLLECTIVE_H
#define AXLE_EMIT_PTX_GPU_COLLECTIVE_H

#include "emit_ptx/gpu_compile.h"
#include "runtime/nccl.h"

typedef enum GpuActionKind {
  GPU_ACTION_COPY,            /* bytes from (from, from_offset) to (to, to_offset) */
  GPU_ACTION_ALL_REDUCE,      /* count elements of type, op */
  GPU_ACTION_ALL_GATHER,      /* bytes from each rank */
  GPU_ACTION_REDUCE_SCATTER,  /* count elements received, of type, op */
  GPU_ACTION_BROADCAST,       /* bytes, from rank 0 */
  GPU_ACTION_SEND,            /* bytes to peer */
  GPU_ACTION_RECV,            /* bytes from peer */
  GPU_ACTION_GROUP_START,
  GPU_ACTION_GROUP_END,
} GpuActionKind;

typedef struct GpuAction {
  GpuActionKind kind;
  int from, to;                /* bindings */
  int64_t from_offset, to_offset;
  int64_t bytes, count;
  ncclDataType_t type;
  ncclRedOp_t op;
  int peer;
} GpuAction;

struct GpuCollective {
  const NcclCliques *cliques;
  ncclComm_t comm;
  int count, capacity;
  GpuAction *actions;
};

/* ---------------------------------------------------- gpu_collective_run.c */
/* A new action of kind at the end of k's list (type ncclUint8, op ncclSum). */
GpuAction *gpu_collective_action_add(GpuCollective *k, GpuActionKind kind);
/* A device-to-device copy of bytes, unless it is empty or in place. */
void gpu_collective_copy_add(GpuCollective *k, int from, int64_t from_offset, int to, int64_t to_offset, int64_t bytes);

#endif
