/* A collective across GPUs as the run sees it: its list of actions
 * (gpu_collective.h), made by the compile half (gpu_collective.c) and run
 * on the program's stream, in order, by gpu_program.c's run loop. Below
 * both: it calls nothing of the compile and nothing of the run loop. */
#include <stdint.h>

#include "emit_ptx/gpu_collective.h"

void gpu_collective_free(GpuCollective *k) {
  if (!k) return;
  mem_free(k->actions);
  mem_free(k);
}

GpuAction *gpu_collective_action_add(GpuCollective *k, GpuActionKind kind) {
  if (k->count == k->capacity) {
    k->capacity = k->capacity ? 2 * k->capacity : 8;
    k->actions = mem_realloc(k->actions, (size_t)k->capacity * sizeof *k->actions);
  }
  GpuAction *a = &k->actions[k->count++];
  *a = (GpuAction){.kind = kind, .type = ncclUint8, .op = ncclSum};
  return a;
}

void gpu_collective_copy_add(GpuCollective *k, int from, int64_t from_offset, int to, int64_t to_offset, int64_t bytes) {
  if (bytes == 0 || (from == to && from_offset == to_offset)) return;
  GpuAction *a = gpu_collective_action_add(k, GPU_ACTION_COPY);
  a->from = from, a->from_offset = from_offset, a->to = to, a->to_offset = to_offset, a->bytes = bytes;
}

/* ---- run ---- */

static void *at(const GpuProgram *p, const CUdeviceptr *addresses, int binding, int64_t offset) {
  CUdeviceptr base = addresses ? addresses[binding] : p->bindings[binding].address;
  return (void *)(uintptr_t)(base + (CUdeviceptr)offset);
}

static bool action_run(GpuProgram *p, const GpuCollective *k, const GpuAction *a, const CUdeviceptr *addresses,
                       Status *st) {
  const NcclLibrary *n = nccl_cliques_library(k->cliques);
  CUstream s = p->gpu.stream;
  void *from = at(p, addresses, a->from, a->from_offset), *to = at(p, addresses, a->to, a->to_offset);
  switch (a->kind) {
  case GPU_ACTION_COPY:
    return gpu_copy_on_device(&p->gpu, (CUdeviceptr)(uintptr_t)to, (CUdeviceptr)(uintptr_t)from, (size_t)a->bytes, st);
  case GPU_ACTION_ALL_REDUCE:
    return nccl_check(n, n->all_reduce(from, to, (size_t)a->count, a->type, a->op, k->comm, s), "ncclAllReduce", st);
  case GPU_ACTION_ALL_GATHER:
    return nccl_check(n, n->all_gather(from, to, (size_t)a->bytes, ncclUint8, k->comm, s), "ncclAllGather", st);
  case GPU_ACTION_REDUCE_SCATTER:
    return nccl_check(n, n->reduce_scatter(from, to, (size_t)a->count, a->type, a->op, k->comm, s),
                      "ncclReduceScatter", st);
  case GPU_ACTION_BROADCAST:
    return nccl_check(n, n->broadcast(from, to, (size_t)a->bytes, ncclUint8, 0, k->comm, s), "ncclBroadcast", st);
  case GPU_ACTION_SEND:
    return nccl_check(n, n->send(from, (size_t)a->bytes, ncclUint8, a->peer, k->comm, s), "ncclSend", st);
  case GPU_ACTION_RECV:
    return nccl_check(n, n->recv(to, (size_t)a->bytes, ncclUint8, a->peer, k->comm, s), "ncclRecv", st);
  case GPU_ACTION_GROUP_START: return nccl_check(n, n->group_start(), "ncclGroupStart", st);
  case GPU_ACTION_GROUP_END: return nccl_check(n, n->group_end(), "ncclGroupEnd", st);
  }
  return false;
}

bool gpu_collective_run(GpuProgram *p, const GpuCollective *k, const CUdeviceptr *addresses, Status *st) {
  if (nccl_cliques_aborted(k->cliques))
    return status_error(st, STATUS_RUNTIME_ERROR, "another device failed and NCCL's communicators were aborted");
  bool in_group = false;
  for (int i = 0; i < k->count; i++) {
    const GpuAction *a = &k->actions[i];
    if (!action_run(p, k, a, addresses, st)) {
      /* a group begun must be ended, even when a call in it failed */
      if (in_group && a->kind != GPU_ACTION_GROUP_END) nccl_cliques_library(k->cliques)->group_end();
      return false;
    }
    in_group = a->kind == GPU_ACTION_GROUP_START ? true : a->kind == GPU_ACTION_GROUP_END ? false : in_group;
  }
  return true;
}

