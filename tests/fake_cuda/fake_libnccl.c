/* A fake libnccl.so.2 for tests on machines with no GPU, or one: the
 * collectives of a run over several simulated GPUs (fake_libcuda.c, each
 * device its own context) done by the host, and every call recorded.
 *
 * The fake driver's device memory is host memory, and its streams run each
 * operation when it is enqueued, so here a call does its data movement at
 * once: a collective waits until every rank of its clique has made the
 * same call, then each rank computes its own result from the others'
 * buffers (copied when posted, so that in-place calls read the values
 * before any rank writes). Reductions fold the ranks' values in rank order,
 * ((x0 op x1) op x2) ..., which is the order the CPU backend folds a group
 * in, so that the GPU backend's results can be compared bit for bit.
 * Sends are buffered (a copy), receives wait for their message: any
 * pattern of point-to-point calls completes, as in NCCL's groups.
 *
 * What NCCL checks and the fake checks too: every rank of a collective
 * makes the same call with the same count, type, op and root
 * (ncclInvalidUsage otherwise); the calling thread's current context is the
 * communicator's device, when the fake driver is loaded (real NCCL
 * enqueues on the current device); a stream is given. Nothing waits for
 * ever: after FAKE_NCCL_TIMEOUT seconds (default 60) a call fails with
 * ncclSystemError and a line on stderr, and ncclCommAbort ends the waits on
 * its clique with ncclRemoteError.
 *
 * Controlled by the environment:
 *   FAKE_NCCL_TRACE=FILE   append one line per call to FILE
 *   FAKE_NCCL_FAIL=SYMBOL  that entry point fails with ncclUnhandledCudaError
 *
 * The types, values and signatures are src/runtime/nccl.h's (NCCL's
 * nccl.h.in, restated there). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/runtime/nccl.h"

typedef struct Message {
  int from;
  void *data;
  size_t bytes;
  struct Message *next;
} Message;

/* What a rank posts at a collective. */
typedef struct Slot {
  const char *call;
  size_t count;
  int type, op, root;
  void *staged;               /* a copy of its send buffer */
} Slot;

typedef struct Clique {
  int id, count;
  int live;                   /* communicators not yet destroyed */
  pthread_mutex_t lock;
  pthread_cond_t changed;
  long generation;
  int arrived;
  bool aborted;
  Slot *slots;                /* by rank */
  Message **inbox;            /* by receiving rank: messages sent to it, oldest first */
} Clique;

struct ncclComm {
  Clique *clique;
  int rank, device;
};

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;

static void trace(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *format, ...) {
  const char *path = getenv("FAKE_NCCL_TRACE");
  if (!path || !*path) return;
  pthread_mutex_lock(&trace_lock);
  FILE *f = fopen(path, "a");
  if (f) {
    va_list args;
    va_start(args, format);
    vfprintf(f, format, args);
    va_end(args);
    fputc('\n', f);
    fclose(f);
  }
  pthread_mutex_unlock(&trace_lock);
}

static bool told_to_fail(const char *symbol) {
  const char *fail = getenv("FAKE_NCCL_FAIL");
  return fail && strcmp(fail, symbol) == 0;
}

static const char *nccl_type_name(int type) {
  static const char *names[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32",
                                "float64", "bfloat16"};
  return type >= 0 && type <= 9 ? names[type] : "?";
}
static size_t nccl_type_size(int type) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return type >= 0 && type <= 9 ? sizes[type] : 0;
}
static const char *nccl_op_name(int op) {
  static const char *names[] = {"sum", "prod", "max", "min", "avg"};
  return op >= 0 && op <= 4 ? names[op] : "?";
}

/* The fake driver's current device on this thread, or -1 when it is not
 * loaded (it is opened RTLD_LOCAL, so it is found by its path). */
static int current_device(void) {
  const char *path = getenv("AXLE_CUDA_DRIVER");
  void *driver = path && *path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  if (!driver) return -1;
  int (*current)(void) = NULL;
  void *symbol = dlsym(driver, "fake_cuda_current_device");
  memcpy(&current, &symbol, sizeof symbol);
  int device = current ? current() : -1;
  dlclose(driver);
  return device;
}

/* Checks common to every call on a communicator. */
static ncclResult_t call_check(const char *call, ncclComm_t comm, CUstream stream) {
  if (told_to_fail(call)) return ncclUnhandledCudaError;
  if (!comm || !stream) return ncclInvalidArgument;
  int device = current_device();
  if (device >= 0 && device != comm->device) {
    fprintf(stderr, "fake NCCL: %s on rank %d (device %d) while device %d's context is current\n", call, comm->rank,
            comm->device, device);
    return ncclInvalidUsage;
  }
  return comm->clique->aborted ? ncclRemoteError : ncclSuccess;
}

static long timeout_seconds(void) {
  const char *v = getenv("FAKE_NCCL_TIMEOUT");
  return v && *v ? atol(v) : 60;
}

/* Waits on the clique's condition (lock held) until the deadline; false
 * when it has passed. */
static bool wait_until(Clique *k, const struct timespec *deadline) {
  return pthread_cond_timedwait(&k->changed, &k->lock, deadline) != ETIMEDOUT;
}

static struct timespec deadline_from_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += timeout_seconds();
  return t;
}

/* Every rank of the clique reaches here before any leaves. */
static ncclResult_t clique_barrier(ncclComm_t comm, const char *call) {
  Clique *k = comm->clique;
  struct timespec deadline = deadline_from_now();
  pthread_mutex_lock(&k->lock);
  long generation = k->generation;
  bool timed_out = false;
  if (++k->arrived == k->count) {
    k->arrived = 0;
    k->generation++;
    pthread_cond_broadcast(&k->changed);
  }
  while (k->generation == generation && !k->aborted && !timed_out) timed_out = !wait_until(k, &deadline);
  ncclResult_t r = k->aborted ? ncclRemoteError : timed_out ? ncclSystemError : ncclSuccess;
  pthread_mutex_unlock(&k->lock);
  if (timed_out) fprintf(stderr, "fake NCCL: %s on rank %d waited %ld s for the other ranks\n", call, comm->rank,
                         timeout_seconds());
  return r;
}

/* Phase one of a collective: post this rank's slot and wait for all. */
static ncclResult_t collective_enter(ncclComm_t comm, Slot mine, const void *send, size_t send_bytes) {
  Clique *k = comm->clique;
  mine.staged = send_bytes ? malloc(send_bytes) : NULL;
  if (send_bytes && !mine.staged) return ncclSystemError;
  if (send_bytes) memcpy(mine.staged, send, send_bytes);
  k->slots[comm->rank] = mine;  /* only this rank writes its slot, between barriers */
  ncclResult_t r = clique_barrier(comm, mine.call);
  if (r != ncclSuccess) return r;
  for (int q = 0; q < k->count; q++) {
    const Slot *s = &k->slots[q];
    if (strcmp(s->call, mine.call) != 0 || s->count != mine.count || s->type != mine.type || s->op != mine.op ||
        s->root != mine.root) {
      fprintf(stderr, "fake NCCL: rank %d called %s (count %zu) while rank %d called %s (count %zu)\n", comm->rank,
              mine.call, mine.count, q, s->call, s->count);
      return ncclInvalidUsage;
    }
  }
  return ncclSuccess;
}

/* Phase two: every rank has read the others' slots; free this one's copy. */
static ncclResult_t collective_leave(ncclComm_t comm, ncclResult_t r) {
  ncclResult_t left = clique_barrier(comm, comm->clique->slots[comm->rank].call);
  free(comm->clique->slots[comm->rank].staged);
  comm->clique->slots[comm->rank].staged = NULL;
  return r != ncclSuccess ? r : left;
}

/* acc[i] = acc[i] op x[i], in the element type. */
#define FAKE_FOLD(T)                                                  \
  {                                                                   \
    T *a = acc;                                                       \
    const T *b = x;                                                   \
    for (size_t i = 0; i < count; i++)                                \
      a[i] = op == ncclSum ? a[i] + b[i] : op == ncclProd ? a[i] * b[i] \
           : op == ncclMax ? (a[i] > b[i] ? a[i] : b[i])              \
                           : (a[i] < b[i] ? a[i] : b[i]);             \
    return true;                                                      \
  }
static bool fold(void *acc, const void *x, size_t count, int type, int op) {
  if (op < ncclSum || op > ncclMin) return false;
  switch (type) {
  case ncclInt8: FAKE_FOLD(int8_t)
  case ncclUint8: FAKE_FOLD(uint8_t)
  case ncclInt32: FAKE_FOLD(int32_t)
  case ncclUint32: FAKE_FOLD(uint32_t)
  case ncclInt64: FAKE_FOLD(int64_t)
  case ncclUint64: FAKE_FOLD(uint64_t)
  case ncclFloat32: FAKE_FOLD(float)
  case ncclFloat64: FAKE_FOLD(double)
  default: return false;  /* the 16-bit floats are not simulated */
  }
}

/* The fold over every rank's staged values from element `first`, count
 * elements, into out. */
static ncclResult_t reduce_ranks(const Clique *k, size_t first, size_t count, int type, int op, void *out) {
  size_t size = nccl_type_size(type);
  memcpy(out, (const char *)k->slots[0].staged + first * size, count * size);
  for (int q = 1; q < k->count; q++)
    if (!fold(out, (const char *)k->slots[q].staged + first * size, count, type, op)) return ncclInvalidArgument;
  return ncclSuccess;
}

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
  static int cliques;
  char list[256] = "";
  for (int i = 0; i < ndev && strlen(list) < 200; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", devlist ? devlist[i] : i);
  pthread_mutex_lock(&trace_lock);
  int id = cliques++;
  pthread_mutex_unlock(&trace_lock);
  trace("ncclCommInitAll clique=%d ndev=%d devlist=%s", id, ndev, list);
  if (told_to_fail("ncclCommInitAll")) return ncclUnhandledCudaError;
  if (ndev < 1 || !comms) return ncclInvalidArgument;
  Clique *k = calloc(1, sizeof *k);
  k->id = id, k->count = ndev, k->live = ndev;
  pthread_mutex_init(&k->lock, NULL);
  pthread_cond_init(&k->changed, NULL);
  k->slots = calloc((size_t)ndev, sizeof *k->slots);
  k->inbox = calloc((size_t)ndev, sizeof *k->inbox);
  for (int i = 0; i < ndev; i++) {
    comms[i] = calloc(1, sizeof *comms[i]);
    *comms[i] = (struct ncclComm){.clique = k, .rank = i, .device = devlist ? devlist[i] : i};
  }
  return ncclSuccess;
}

/* A clique goes with its last communicator. */
static void comm_release(ncclComm_t comm) {
  Clique *k = comm->clique;
  pthread_mutex_lock(&k->lock);
  bool last = --k->live == 0;
  pthread_mutex_unlock(&k->lock);
  free(comm);
  if (!last) return;
  for (int q = 0; q < k->count; q++)
    while (k->inbox && k->inbox[q]) {
      Message *m = k->inbox[q];
      k->inbox[q] = m->next;
      free(m->data);
      free(m);
    }
  free(k->slots);
  free(k->inbox);
  pthread_mutex_destroy(&k->lock);
  pthread_cond_destroy(&k->changed);
  free(k);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm) return ncclInvalidArgument;
  trace("ncclCommDestroy clique=%d rank=%d", comm->clique->id, comm->rank);
  comm_release(comm);
  return ncclSuccess;
}

/* Ends every wait on the clique. The communicators stay allocated: another
 * thread may still be inside a call on one (reachable, not leaked). */
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!comm) return ncclInvalidArgument;
  trace("ncclCommAbort clique=%d rank=%d", comm->clique->id, comm->rank);
  pthread_mutex_lock(&comm->clique->lock);
  comm->clique->aborted = true;
  pthread_cond_broadcast(&comm->clique->changed);
  pthread_mutex_unlock(&comm->clique->lock);
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
  case ncclSuccess: return "no error";
  case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError: return "remote process exited or there was a network error";
  default: return "unknown result code";
  }
}

#define TRACE_COMM(comm) (comm)->clique->id, (comm)->rank, (comm)->clique->count, (comm)->device

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, CUstream stream) {
  ncclResult_t r = call_check("ncclAllReduce", comm, stream);
  if (r != ncclSuccess) return r;
  trace("ncclAllReduce clique=%d rank=%d/%d device=%d count=%zu type=%s op=%s", TRACE_COMM(comm), count,
        nccl_type_name(type), nccl_op_name(op));
  Slot mine = {.call = "ncclAllReduce", .count = count, .type = type, .op = op};
  r = collective_enter(comm, mine, send, count * nccl_type_size(type));
  if (r == ncclSuccess) r = reduce_ranks(comm->clique, 0, count, type, op, recv);
  return collective_leave(comm, r);
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recv_count, ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, CUstream stream) {
  ncclResult_t r = call_check("ncclReduceScatter", comm, stream);
  if (r != ncclSuccess) return r;
  trace("ncclReduceScatter clique=%d rank=%d/%d device=%d recvcount=%zu type=%s op=%s", TRACE_COMM(comm),
        recv_count, nccl_type_name(type), nccl_op_name(op));
  Slot mine = {.call = "ncclReduceScatter", .count = recv_count, .type = type, .op = op};
  r = collective_enter(comm, mine, send, recv_count * (size_t)comm->clique->count * nccl_type_size(type));
  if (r == ncclSuccess) r = reduce_ranks(comm->clique, (size_t)comm->rank * recv_count, recv_count, type, op, recv);
  return collective_leave(comm, r);
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t send_count, ncclDataType_t type, ncclComm_t comm,
                           CUstream stream) {
  ncclResult_t r = call_check("ncclAllGather", comm, stream);
  if (r != ncclSuccess) return r;
  trace("ncclAllGather clique=%d rank=%d/%d device=%d sendcount=%zu type=%s", TRACE_COMM(comm), send_count,
        nccl_type_name(type));
  size_t bytes = send_count * nccl_type_size(type);
  r = collective_enter(comm, (Slot){.call = "ncclAllGather", .count = send_count, .type = type}, send, bytes);
  for (int q = 0; r == ncclSuccess && q < comm->clique->count; q++)
    memcpy((char *)recv + (size_t)q * bytes, comm->clique->slots[q].staged, bytes);
  return collective_leave(comm, r);
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                           CUstream stream) {
  ncclResult_t r = call_check("ncclBroadcast", comm, stream);
  if (r != ncclSuccess) return r;
  trace("ncclBroadcast clique=%d rank=%d/%d device=%d count=%zu type=%s root=%d", TRACE_COMM(comm), count,
        nccl_type_name(type), root);
  if (root < 0 || root >= comm->clique->count) return ncclInvalidArgument;
  size_t bytes = count * nccl_type_size(type);
  Slot mine = {.call = "ncclBroadcast", .count = count, .type = type, .root = root};
  r = collective_enter(comm, mine, send, comm->rank == root ? bytes : 0);
  if (r == ncclSuccess) memcpy(recv, comm->clique->slots[root].staged, bytes);
  return collective_leave(comm, r);
}

/* ---- point to point, in groups ----
 * Between ncclGroupStart and ncclGroupEnd the calls are kept (per thread,
 * as NCCL keeps them); ncclGroupEnd posts every send, then waits for every
 * receive. */
typedef struct Pending {
  bool is_send;
  ncclComm_t comm;
  void *buffer;
  size_t bytes;
  int peer;
} Pending;

enum { MAX_PENDING = 256 };
static _Thread_local int group_depth;
static _Thread_local int pending_count;
static _Thread_local Pending pending[MAX_PENDING];

ncclResult_t ncclGroupStart(void) {
  trace("ncclGroupStart device=%d", current_device());
  if (told_to_fail("ncclGroupStart")) return ncclUnhandledCudaError;
  group_depth++;
  return ncclSuccess;
}

static ncclResult_t point_to_point(const char *call, bool is_send, void *buffer, size_t count, ncclDataType_t type,
                                   int peer, ncclComm_t comm, CUstream stream) {
  ncclResult_t r = call_check(call, comm, stream);
  if (r != ncclSuccess) return r;
  trace("%s clique=%d rank=%d/%d device=%d count=%zu type=%s peer=%d", call, TRACE_COMM(comm), count, nccl_type_name(type),
        peer);
  if (group_depth == 0) {
    fprintf(stderr, "fake NCCL: %s outside ncclGroupStart/ncclGroupEnd is not simulated\n", call);
    return ncclInvalidUsage;
  }
  if (peer < 0 || peer >= comm->clique->count || pending_count == MAX_PENDING) return ncclInvalidArgument;
  pending[pending_count++] = (Pending){is_send, comm, buffer, count * nccl_type_size(type), peer};
  return ncclSuccess;
}

ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      CUstream stream) {
  return point_to_point("ncclSend", true, (void *)send, count, type, peer, comm, stream);
}

ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, CUstream stream) {
  return point_to_point("ncclRecv", false, recv, count, type, peer, comm, stream);
}

static ncclResult_t message_post(const Pending *p) {
  Clique *k = p->comm->clique;
  Message *m = calloc(1, sizeof *m);
  if (!m) return ncclSystemError;
  *m = (Message){.from = p->comm->rank, .data = malloc(p->bytes ? p->bytes : 1), .bytes = p->bytes};
  if (!m->data) return free(m), ncclSystemError;
  memcpy(m->data, p->buffer, p->bytes);
  pthread_mutex_lock(&k->lock);
  Message **tail = &k->inbox[p->peer];
  while (*tail) tail = &(*tail)->next;
  *tail = m;
  pthread_cond_broadcast(&k->changed);
  pthread_mutex_unlock(&k->lock);
  return ncclSuccess;
}

/* The oldest message from p->peer to this rank, waited for. */
static ncclResult_t message_take(const Pending *p) {
  Clique *k = p->comm->clique;
  struct timespec deadline = deadline_from_now();
  pthread_mutex_lock(&k->lock);
  Message *m = NULL;
  bool timed_out = false;
  while (!m && !k->aborted && !timed_out) {
    for (Message **at = &k->inbox[p->comm->rank]; *at; at = &(*at)->next)
      if ((*at)->from == p->peer) {
        m = *at;
        *at = m->next;
        break;
      }
    if (!m) timed_out = !wait_until(k, &deadline);
  }
  ncclResult_t r = m ? ncclSuccess : k->aborted ? ncclRemoteError : ncclSystemError;
  pthread_mutex_unlock(&k->lock);
  if (timed_out && !m) fprintf(stderr, "fake NCCL: rank %d waited %ld s for a message from rank %d\n", p->comm->rank,
                               timeout_seconds(), p->peer);
  if (m && m->bytes != p->bytes) {
    fprintf(stderr, "fake NCCL: rank %d receives %zu bytes from rank %d, which sent %zu\n", p->comm->rank, p->bytes,
            p->peer, m->bytes);
    r = ncclInvalidUsage;
  }
  if (m && r == ncclSuccess) memcpy(p->buffer, m->data, m->bytes);
  if (m) free(m->data), free(m);
  return r;
}

ncclResult_t ncclGroupEnd(void) {
  trace("ncclGroupEnd device=%d", current_device());
  if (group_depth == 0) return ncclInvalidUsage;
  if (--group_depth > 0) return ncclSuccess;
  ncclResult_t r = told_to_fail("ncclGroupEnd") ? ncclUnhandledCudaError : ncclSuccess;
  for (int i = 0; i < pending_count && r == ncclSuccess; i++)
    if (pending[i].is_send) r = message_post(&pending[i]);
  for (int i = 0; i < pending_count && r == ncclSuccess; i++)
    if (!pending[i].is_send) r = message_take(&pending[i]);
  pending_count = 0;
  return r;
}
