/* Executables: what a compile produces and what a run runs.
 *
 * An Executable owns everything it needs: a clone of the module as given,
 * the optimized clone when the optimizer ran, the entry's buffer plan, and
 * the backend's program (code and constants). The caller may free its
 * module, and the text it came from, as soon as executable_compile
 * returns.
 *
 * The one run path, shared by the C API (api.c) and axle-run:
 *
 *   executable_compile   clone → optimize (if asked, or the backend's
 *                        default) → backend compile
 *   executable_run       host_buffer_check_arguments → backend run → result
 *   executable_check     the evaluator on the module as written, compared
 *   executable_time      N timed runs into one result after a warm-up
 *   executable_run_debug a run watched instruction by instruction (--check,
 *                        --find-nan: executable_debug.c)
 *
 * compile_cache_get in front of executable_compile makes a second compile
 * of the same module text with the same options free. */
#ifndef AXLE_RUNTIME_EXECUTABLE_H
#define AXLE_RUNTIME_EXECUTABLE_H

#include <pthread.h>
#include <stdatomic.h>

#include "opt/opt.h"
#include "runtime/backend.h"
#include "runtime/buffer.h"

/* ------------------------------------------------------------ executable.c */
typedef struct ExecutableOptions {
  axle_backend_t backend;
  int optimize;         /* 1: run the optimizer, 0: not, -1: the backend's default */
  OptOptions opt;       /* dumps, --stats, limits */
  /* Threads of native backends, the caller's included: 0 means
   * AXLE_THREADS when set, else all cores. Results do not depend on it. */
  int threads;
  /* Devices of a run (device_set_compile): 0 or 1, one device; N, a run of
   * the module's replica_count x num_partitions devices, which must be N
   * (a module that says neither runs as N replicas). */
  int devices;
  /* The CPU backend's ISA level (a CpuLevel): 0 compiles for this machine
   * (AXLE_CPU may lower it); otherwise for that level whatever this machine
   * has, as axle-aot does for a program that runs elsewhere. */
  int cpu_level;
  /* The backend keeps what a reader of its code needs (the CPU's kernel
   * listings: axle-opt --stage=asm); a dump folder asks for it too. */
  bool listings;
  /* A run over several GPUs compiles one executable per device: which one
   * this is (device d runs on GPU d), and the run's NCCL communicators
   * (nccl.h; NULL elsewhere). */
  int device_index;
  struct NcclCliques *nccl;
  /* The GPU backend's target, as ptxas -arch names it ("sm_80", "sm_90a";
   * docs/gpu.md), or "" for the device's own compute capability. */
  char gpu_target[16];
  /* The caller compiles and will not run (axle-run --compile-only): given
   * a gpu_target, the GPU backend writes its PTX without opening a device
   * and loads nothing, so the executable cannot run. */
  bool compile_only;
} ExecutableOptions;

/* The backend given, its default optimization, the optimizer's defaults. */
void executable_options_default(ExecutableOptions *o, axle_backend_t backend);

typedef struct Executable Executable;
struct Executable {
  const Backend *backend;
  Module *module;       /* the module as given (a clone): what --check evaluates */
  Module *optimized;    /* the optimizer's result (another clone), or NULL */
  BufferPlan *plan;     /* the entry's buffer plan when optimized, else NULL */
  void *program;        /* the backend's: code, constants */
  char *stats;          /* the optimizer's --stats report when asked, else NULL */
  double compile_ms;    /* optimizer and backend together */
  /* What the backend compiled with (from ExecutableOptions; listings also
   * when a dump folder was given; the run's devices from
   * executable_device_counts). */
  BackendOptions options;
  atomic_int references; /* the compile cache shares executables */
};

Executable *executable_compile(const Module *m, const ExecutableOptions *o, Status *st);
/* Another owner of e; each owner calls executable_free once. */
Executable *executable_share(Executable *e);
void executable_free(Executable *e);
/* The module the backend runs: the optimized one if any, else the clone
 * (what the run hooks are handed with the program). */
const Module *executable_module_to_run(const Executable *e);
/* The replicas and partitions of a run of m on `devices` devices (see
 * ExecutableOptions.devices); false with a message when they disagree. */
bool executable_device_counts(const Module *m, int devices, int64_t *replicas, int64_t *partitions, Status *st);

/* Checks the arguments against the entry's parameters, then runs. The
 * result is new; free it with host_buffer_free. */
HostBuffer *executable_run(const Executable *e, HostBuffer *const *args, int arg_count, Status *st);
/* executable_run writing the result's array leaves (depth first, row-major)
 * to result_leaves[i], which the caller sized from the entry's root shape:
 * through the backend's run_into, else a run and a copy. */
bool executable_run_into(const Executable *e, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                         Status *st);
/* Runs the evaluator on the module as written and compares its result with
 * result: exact for integers, a relative tolerance for floats (1e-2 for
 * 16-bit types, 1e-4 otherwise), widened by sum_rounding_allowance for the
 * longest sum in the module. False with a message when they differ. */
/* How many terms one element of inst's value sums, at most (1 for no sum). */
int64_t instruction_summed_terms(const Instruction *inst);
/* How far a sum of `terms` terms of type t may be from the exact one, the
 * largest |value| among the sums compared being `largest`. */
double sum_rounding_allowance(ElementType t, int64_t terms, double largest);
bool executable_check(const Executable *e, HostBuffer *const *args, int arg_count,
                      const HostBuffer *result, Status *st);

typedef struct RunTimes {
  double median_ms, min_ms, max_ms;
  int runs;
  /* The backend's device time (Backend.time_device), device_runs of them;
   * device_runs is 0 on a backend without one. */
  double device_median_ms, device_min_ms, device_max_ms;
  int device_runs;
} RunTimes;
/* One warm-up run, then runs timed runs, all into one result allocated
 * first (executable_run_into); then, where the backend has a
 * device clock, runs runs timed by it. */
bool executable_time(const Executable *e, HostBuffer *const *args, int arg_count, int runs,
                     RunTimes *times, Status *st);

/* ---------------------------------------------------- executable_profile.c
 * Each instruction of the entry timed on its own, over runs runs after a
 * warm-up (axle-run --time-kernels): the time from the previous step's end
 * to its end, as run_observed shows the steps. A backend without
 * run_observed, or with a device clock (time_device: the GPU):
 * STATUS_UNSUPPORTED. */
typedef struct StepTime {
  const Instruction *inst;   /* of executable_module_to_run(e)'s entry */
  double median_ms, min_ms;
} StepTime;

typedef struct StepTimes {
  StepTime *steps;           /* in schedule order */
  int count;
} StepTimes;

bool executable_time_steps(const Executable *e, HostBuffer *const *args, int arg_count, int runs, StepTimes *times,
                           Status *st);
void step_times_free(StepTimes *times);

/* ------------------------------------------------------ executable_debug.c
 * A run watched instruction by instruction through the backend's
 * run_observed (axle-run --check and --find-nan). find_nan stops at the
 * first instruction whose float value holds a NaN or an infinity; check
 * evaluates each instruction the backend computed, on the backend's own
 * values of its operands, and stops at the first whose value differs
 * (exact for integers; floats within the type's rounding). Either failure
 * is a run-time error located at the instruction, naming it with its
 * op_name and source line, the index and the values. A backend without
 * run_observed: STATUS_UNSUPPORTED. */
typedef struct DebugOptions {
  bool check, find_nan;
} DebugOptions;

typedef struct DebugReport {
  int instructions;   /* values the backend showed and that were examined */
  int unread;         /* values in a layout this cannot read (packed E(n)) */
} DebugReport;

HostBuffer *executable_run_debug(const Executable *e, HostBuffer *const *args, int arg_count, const DebugOptions *o,
                                 DebugReport *report, Status *st);

/* ------------------------------------------------------------ device_run.c
 * A module run over several devices in one process (axle-run --devices N,
 * axle_compile_options_t.devices; docs/multi-device.md): one thread per
 * device, each running its own executable (a CPU program runs one run at a
 * time, with a share of the cores), meeting the others at each collective.
 *
 * Device d is XLA's default assignment: replica d % replica_count,
 * partition d / replica_count. */
typedef struct DeviceSet {
  int count;                 /* replica_count * partition_count */
  int64_t replica_count, partition_count;
  Executable **executables;  /* one per device */
  struct NcclCliques *nccl;  /* the GPU backend's communicators (owned), else NULL */
} DeviceSet;

/* Compiles m once per device of o->devices (at least 2) for o->backend;
 * on the CPU each device's native code gets threads / devices threads, at
 * least 1; on the GPU device d is GPU d, its collectives NCCL's. */
DeviceSet *device_set_compile(const Module *m, const ExecutableOptions *o, Status *st);
void device_set_free(DeviceSet *s);
/* Runs every device at once: args[d * arg_count + i] is argument i of
 * device d; results[d] receives device d's result. On a failure nothing is
 * left in results, and st is the first failing device's error, prefixed
 * with "device d: ". Never hangs on a device that fails or that skips a
 * collective the others wait at: those end the run with an error. */
bool device_set_run(const DeviceSet *s, HostBuffer *const *args, int arg_count, HostBuffer **results, Status *st);

/* ------------------------------------------------------------------- mpi.c
 * One device per MPI rank (axle-run --devices mpi under mpirun): Open MPI's
 * libmpi opened at run time (AXLE_MPI_LIBRARY, else libmpi.so.40). Rank r
 * is device r; the executable is compiled for the communicator's size
 * (ExecutableOptions.devices). A rank that fails, or ends while another
 * waits at a collective, makes every rank return an error, never wait. */
typedef struct MpiRun MpiRun;
/* Opens the library and MPI_Init; NULL with a message when there is none. */
MpiRun *mpi_run_open(Status *st);
int mpi_run_rank(const MpiRun *m);
int mpi_run_size(const MpiRun *m);
/* Runs e as this rank's device; the result is new (host_buffer_free). */
HostBuffer *mpi_run_device(MpiRun *m, const Executable *e, HostBuffer *const *args, int arg_count, Status *st);
/* MPI_Finalize. */
void mpi_run_close(MpiRun *m);

/* ---------------------------------------------------------- compile_cache.c
 * Compiled executables keyed by the module's printed text and the options
 * that change what is compiled (backend, optimization, the optimizer's
 * limits). A compile that asks for dumps or --stats always compiles: the
 * caller wants to see the optimizer run. The least recently used entry
 * goes when the cache is full; executables still held elsewhere live on.
 * Thread-safe. */
enum { COMPILE_CACHE_CAPACITY = 32 };

typedef struct CompileCacheEntry {
  char *key;
  uint64_t hash;
  Executable *executable;
  uint64_t last_use;
} CompileCacheEntry;

typedef struct CompileCache {
  pthread_mutex_t lock;
  CompileCacheEntry entries[COMPILE_CACHE_CAPACITY];
  int count;
  uint64_t clock;
  int64_t hits, misses;
} CompileCache;

#define COMPILE_CACHE_INIT {.lock = PTHREAD_MUTEX_INITIALIZER}

/* The cached executable (a new reference) or a fresh compile, which is
 * then cached. *hit (may be NULL) says which. */
Executable *compile_cache_get(CompileCache *cache, const Module *m, const ExecutableOptions *o,
                              bool *hit, Status *st);
/* Drops every entry (executables still held elsewhere live on). */
void compile_cache_clear(CompileCache *cache);

#endif
