/* One device per MPI rank (axle-run --devices mpi under mpirun;
 * docs/multi-device.md), MPI opened at run time as the CUDA driver is, so
 * that the build needs nothing but a C compiler.
 *
 * The ABI is Open MPI's (Debian's libmpi.so.40): a handle (MPI_Comm,
 * MPI_Datatype) is the address of a global object the library exports,
 * MPI_COMM_WORLD being &ompi_mpi_comm_world and MPI_BYTE &ompi_mpi_byte.
 * MPICH's handles are integers; it is not supported here, and opening it
 * fails with a message naming the missing symbol.
 *
 * A collective is an exchange between the ranks, then the same computation
 * as in one process (src/ir/eval/eval_collective.c): every rank gathers
 * every rank's operands (MPI_Allgather of their bytes) and computes its own
 * result from them, folding reductions in group order. This moves G times
 * the data a ring all-reduce would, and in exchange gives the same bits as
 * the in-process run, whatever the rank count or the network's timing.
 *
 * Each exchange starts with a header from every rank: which collective it
 * waits at (a hash of its name), or that its run has ended, well or with an
 * error. When the headers disagree every rank sees it, and every rank
 * returns an error instead of waiting: a rank that fails before a
 * collective still joins the exchange (mpi_device_finish), so no rank
 * waits for ever; after that the exchange is broken and no rank starts
 * another. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/executable.h"

typedef int MpiInitFn(int *argc, char ***argv);
typedef int MpiFlagFn(int *flag);
typedef int MpiFinalizeFn(void);
typedef int MpiCommIntFn(void *comm, int *value);
typedef int MpiAllgatherFn(const void *send, int send_count, void *send_type, void *recv, int recv_count,
                           void *recv_type, void *comm);

struct MpiRun {
  void *library;
  MpiInitFn *init;
  MpiFlagFn *initialized;
  MpiFinalizeFn *finalize;
  MpiCommIntFn *comm_rank, *comm_size;
  MpiAllgatherFn *allgather;
  void *comm_world, *byte;
  int rank, size;
  bool broken;
  EvalDevice device;
  char *gathered;            /* the open exchange's bytes, every rank's */
  Literal *views;            /* size x operand_count views into gathered */
  Literal **pointers;        /* views by rank */
  Literal ***all;            /* by flattened id */
};

/* The header every rank sends at each exchange. */
typedef struct MpiHeader {
  uint64_t what;             /* a collective's name hash, or one of below */
  int64_t bytes;             /* its operands' bytes */
} MpiHeader;
enum { MPI_HEADER_FINISHED = 1, MPI_HEADER_FAILED = 2 };

static bool mpi_symbol(MpiRun *m, const char *path, const char *name, void *field, size_t size, Status *st) {
  void *p = dlsym(m->library, name);
  if (!p) return status_error(st, STATUS_UNSUPPORTED, "%s is not Open MPI's libmpi (it lacks %s)", path, name);
  memcpy(field, &p, size);
  return true;
}

static bool mpi_call(int rc, const char *what, Status *st) {
  return rc == 0 || status_error(st, STATUS_RUNTIME_ERROR, "%s failed (MPI error %d)", what, rc);
}

MpiRun *mpi_run_open(Status *st) {
  MpiRun *m = mem_calloc(1, sizeof *m);
  if (!m) {
    status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  const char *path = getenv("AXLE_MPI_LIBRARY");
  if (!path || !*path) path = "libmpi.so.40";
  /* Open MPI loads its components with dlopen; they find libmpi's symbols
   * only when it was loaded RTLD_GLOBAL. */
  m->library = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!m->library && strcmp(path, "libmpi.so.40") == 0) m->library = dlopen(path = "libmpi.so", RTLD_NOW | RTLD_GLOBAL);
  bool ok = m->library != NULL;
  if (!ok) {
    const char *why = dlerror();
    status_error(st, STATUS_UNSUPPORTED, "no MPI library (%s); Debian's is in openmpi-bin and libopenmpi-dev",
                 why ? why : path);
  }
  ok = ok && mpi_symbol(m, path, "MPI_Init", &m->init, sizeof m->init, st) &&
       mpi_symbol(m, path, "MPI_Initialized", &m->initialized, sizeof m->initialized, st) &&
       mpi_symbol(m, path, "MPI_Finalize", &m->finalize, sizeof m->finalize, st) &&
       mpi_symbol(m, path, "MPI_Comm_rank", &m->comm_rank, sizeof m->comm_rank, st) &&
       mpi_symbol(m, path, "MPI_Comm_size", &m->comm_size, sizeof m->comm_size, st) &&
       mpi_symbol(m, path, "MPI_Allgather", &m->allgather, sizeof m->allgather, st) &&
       (m->comm_world = dlsym(m->library, "ompi_mpi_comm_world")) != NULL && (m->byte = dlsym(m->library, "ompi_mpi_byte")) != NULL;
  if (ok) {
    int already = 0;
    ok = mpi_call(m->initialized(&already), "MPI_Initialized", st) &&
         (already || mpi_call(m->init(NULL, NULL), "MPI_Init", st)) &&
         mpi_call(m->comm_rank(m->comm_world, &m->rank), "MPI_Comm_rank", st) &&
         mpi_call(m->comm_size(m->comm_world, &m->size), "MPI_Comm_size", st);
  } else if (m->library && st->code == STATUS_OK) {
    status_error(st, STATUS_UNSUPPORTED, "%s is not Open MPI's libmpi (it lacks ompi_mpi_comm_world)", path);
  }
  if (ok) return m;
  if (m->library) dlclose(m->library);
  mem_free(m);
  return NULL;
}

int mpi_run_rank(const MpiRun *m) { return m->rank; }
int mpi_run_size(const MpiRun *m) { return m->size; }

void mpi_run_close(MpiRun *m) {
  if (!m) return;
  m->finalize();
  /* Open MPI's components stay loaded past MPI_Finalize: the library is
   * left open, as the process ends soon after. */
  mem_free(m);
}

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h | 4;  /* never MPI_HEADER_FINISHED or _FAILED */
}

/* Every rank's header; false with st set when they disagree (the exchange
 * is then broken on every rank alike). */
static bool headers_agree(MpiRun *m, const MpiHeader *mine, const char *waiting_at, Status *st) {
  MpiHeader *all = mem_calloc((size_t)m->size, sizeof *all);
  if (!all) return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  bool ok = mpi_call(m->allgather(mine, (int)sizeof *mine, m->byte, all, (int)sizeof *mine, m->byte, m->comm_world),
                     "MPI_Allgather", st);
  for (int r = 0; ok && r < m->size; r++) {
    if (all[r].what == mine->what && all[r].bytes == mine->bytes) continue;
    m->broken = true;
    if (all[r].what == MPI_HEADER_FAILED)
      ok = status_error(st, STATUS_RUNTIME_ERROR, "rank %d failed", r);
    else if (mine->what == MPI_HEADER_FAILED)
      ok = false;  /* this rank's own error stands */
    else if (all[r].what == MPI_HEADER_FINISHED || mine->what == MPI_HEADER_FINISHED)
      ok = status_error(st, STATUS_RUNTIME_ERROR, "a rank ended its run while another waits at %s",
                        waiting_at ? waiting_at : "a collective");
    else
      ok = status_error(st, STATUS_RUNTIME_ERROR, "ranks %d and %d reached different collectives", m->rank, r);
  }
  mem_free(all);
  return ok;
}

static int64_t operands_bytes(const Instruction *inst, Literal *const *operands) {
  int64_t bytes = 0;
  for (int j = 0; j < inst->operand_count; j++) bytes += shape_byte_size(&operands[j]->shape);
  return bytes;
}

static bool mpi_exchange(void *run, const EvalDevice *self, const Instruction *inst, Literal *const *operands,
                         Literal *const *const **all, Status *st) {
  (void)self;
  MpiRun *m = run;
  if (m->broken) return status_error(st, STATUS_RUNTIME_ERROR, "%s: an earlier exchange failed", inst->name);
  int n = inst->operand_count;
  int64_t bytes = operands_bytes(inst, operands);
  MpiHeader mine = {.what = name_hash(inst->name), .bytes = bytes};
  if (!headers_agree(m, &mine, inst->name, st)) return false;
  if (bytes > 0x7fffffff) return status_error(st, STATUS_UNSUPPORTED, "%s: more than 2 GB of operands", inst->name);
  char *send = mem_malloc((size_t)bytes + 1);
  m->gathered = mem_malloc((size_t)(bytes * m->size) + 1);
  m->views = mem_calloc((size_t)(m->size * n) + 1, sizeof *m->views);
  m->pointers = mem_calloc((size_t)(m->size * n) + 1, sizeof *m->pointers);
  m->all = mem_calloc((size_t)m->size, sizeof *m->all);
  if (!send || !m->gathered || !m->views || !m->pointers || !m->all) {
    mem_free(send);
    m->device.exchange_done(m, self);
    return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (int64_t j = 0, at = 0; j < n; at += shape_byte_size(&operands[j]->shape), j++)
    memcpy(send + at, operands[j]->data, (size_t)shape_byte_size(&operands[j]->shape));
  bool ok = mpi_call(m->allgather(send, (int)bytes, m->byte, m->gathered, (int)bytes, m->byte, m->comm_world),
                     "MPI_Allgather", st);
  mem_free(send);
  for (int r = 0; ok && r < m->size; r++) {
    /* rank r is device r: replica r % R, partition r / R */
    int64_t replica = r % m->device.replica_count, partition = r / m->device.replica_count;
    int64_t flattened = replica * m->device.partition_count + partition;
    char *at = m->gathered + (int64_t)r * bytes;
    for (int j = 0; j < n; j++) {
      Literal *v = &m->views[r * n + j];
      *v = (Literal){.shape = operands[j]->shape, .data = at};
      at += shape_byte_size(&v->shape);
      m->pointers[r * n + j] = v;
    }
    m->all[flattened] = &m->pointers[r * n];
  }
  if (ok) *all = (Literal *const *const *)m->all;
  return ok;
}

static void mpi_exchange_done(void *run, const EvalDevice *self) {
  (void)self;
  MpiRun *m = run;
  mem_free(m->gathered);
  mem_free(m->views);
  mem_free(m->pointers);
  mem_free(m->all);
  m->gathered = NULL;
  m->views = NULL;
  m->pointers = NULL;
  m->all = NULL;
}

/* The run's last exchange: this rank has ended, well or not. */
static bool mpi_device_finish(MpiRun *m, bool failed, Status *st) {
  if (m->broken) return false;
  MpiHeader mine = {.what = failed ? MPI_HEADER_FAILED : MPI_HEADER_FINISHED};
  return headers_agree(m, &mine, NULL, st);
}

HostBuffer *mpi_run_device(MpiRun *m, const Executable *e, HostBuffer *const *args, int arg_count, Status *st) {
  m->device = (EvalDevice){.replica = m->rank % e->options.replica_count, .partition = m->rank / e->options.replica_count,
                           .replica_count = e->options.replica_count, .partition_count = e->options.partition_count,
                           .exchange = mpi_exchange, .exchange_done = mpi_exchange_done, .run = m};
  eval_device_set(&m->device);
  HostBuffer *result = executable_run(e, args, arg_count, st);
  eval_device_set(NULL);
  Status finish;
  status_clear(&finish);
  if (!mpi_device_finish(m, result == NULL, &finish) && result) {
    *st = finish;
    host_buffer_free(result);
    result = NULL;
  }
  return result;
}
