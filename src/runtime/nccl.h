/* NCCL, opened at run time (docs/multi-device.md, "Across GPUs").
 *
 * axle links against nothing from NCCL, as it links nothing from CUDA:
 * this header declares the few types and entry points the GPU backend's
 * collectives use, and nccl.c finds them with dlopen("libnccl.so.2").
 * Without the library a run over several GPUs says "no NCCL library".
 *
 * The values and signatures are those of NCCL's public header,
 * src/nccl.h.in in github.com/NVIDIA/nccl (types, ncclResult_t,
 * ncclRedOp_t, ncclDataType_t, and the collective and point-to-point
 * calls), restated here: only what axle calls (one process drives every
 * GPU, so ncclCommInitAll makes a clique without ncclGetUniqueId). NCCL
 * keeps them stable across 2.x, the soname of libnccl.so.2. A cudaStream_t is a CUstream (the runtime's streams are the
 * driver's). */
#ifndef AXLE_RUNTIME_NCCL_H
#define AXLE_RUNTIME_NCCL_H

#include <stddef.h>

#include "runtime/cuda_driver.h"

typedef struct ncclComm *ncclComm_t;

typedef enum ncclResult_t {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
} ncclResult_t;

typedef enum ncclRedOp_t { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;

typedef enum ncclDataType_t {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
} ncclDataType_t;

/* The entry points, one row each: NCCL_ENTRY(field, "symbol", args). All
 * return ncclResult_t but ncclGetErrorString. Counts are elements of the
 * datatype; the calls are enqueued on the stream and return at once. */
#define AXLE_NCCL_ENTRIES(NCCL_ENTRY)                                                                  \
  NCCL_ENTRY(comm_init_all, "ncclCommInitAll", (ncclComm_t * comms, int ndev, const int *devlist))     \
  NCCL_ENTRY(comm_destroy, "ncclCommDestroy", (ncclComm_t comm))                                       \
  NCCL_ENTRY(comm_abort, "ncclCommAbort", (ncclComm_t comm))                                           \
  NCCL_ENTRY(all_reduce, "ncclAllReduce",                                                              \
             (const void *send, void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op,         \
              ncclComm_t comm, CUstream stream))                                                       \
  NCCL_ENTRY(all_gather, "ncclAllGather",                                                              \
             (const void *send, void *recv, size_t send_count, ncclDataType_t type, ncclComm_t comm,   \
              CUstream stream))                                                                        \
  NCCL_ENTRY(reduce_scatter, "ncclReduceScatter",                                                      \
             (const void *send, void *recv, size_t recv_count, ncclDataType_t type, ncclRedOp_t op,    \
              ncclComm_t comm, CUstream stream))                                                       \
  NCCL_ENTRY(broadcast, "ncclBroadcast",                                                               \
             (const void *send, void *recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm, \
              CUstream stream))                                                                        \
  NCCL_ENTRY(send, "ncclSend",                                                                         \
             (const void *send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, CUstream stream)) \
  NCCL_ENTRY(recv, "ncclRecv",                                                                         \
             (void *recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, CUstream stream)) \
  NCCL_ENTRY(group_start, "ncclGroupStart", (void))                                                    \
  NCCL_ENTRY(group_end, "ncclGroupEnd", (void))

typedef struct NcclLibrary {
  void *library;  /* the dlopen handle */
#define AXLE_NCCL_FIELD(field, symbol, args) ncclResult_t(*field) args;
  AXLE_NCCL_ENTRIES(AXLE_NCCL_FIELD)
#undef AXLE_NCCL_FIELD
  const char *(*get_error_string)(ncclResult_t result);
} NcclLibrary;

/* ---- the communicators of one run over several GPUs ----
 * One communicator per replica group: the devices of a group, in group
 * order, are ranks 0.. of a clique made by ncclCommInitAll (one process,
 * one GPU per device), made the first time a device's compile meets the
 * group and shared by every collective over it. Rank order is group order,
 * which is the order of an all-gather's blocks and of a reduction's
 * operands. */
typedef struct NcclCliques NcclCliques;

/* No cliques yet; the library is opened at the first nccl_cliques_get. */
NcclCliques *nccl_cliques_open(Status *st);
/* The communicator of rank `position` of the clique over the GPUs
 * ordinals[0..count) (in rank order), made with its clique on first use;
 * the first call opens $AXLE_NCCL_LIBRARY, else libnccl.so.2, and fails
 * with "no NCCL library (...)" when there is none. */
ncclComm_t nccl_cliques_get(NcclCliques *c, const int *ordinals, int count, int position, Status *st);
const NcclLibrary *nccl_cliques_library(const NcclCliques *c);
/* Aborts every communicator (a device failed: the others must not wait for
 * it at a collective); later collectives fail at once. */
void nccl_cliques_abort(NcclCliques *c);
bool nccl_cliques_aborted(const NcclCliques *c);
void nccl_cliques_free(NcclCliques *c);
/* "ncclAllReduce failed: ncclInvalidUsage (5): NCCL's sentence". */
bool nccl_check(const NcclLibrary *nccl, ncclResult_t r, const char *call, Status *st);

#endif
