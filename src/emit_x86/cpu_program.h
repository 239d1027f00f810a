/* The CPU backend's program: what cpu_backend.c compiles an Executable into
 * and what cpu_program.c runs.
 *
 * Storage is named by bindings, one per slot of the entry's buffer plan
 * (same index) plus one per constant that a kernel holds inside its fused
 * computation. A run turns every binding into a pointer (the caller's
 * arguments, the temporary block at the plan's offsets, the result buffer,
 * the program's constants) and then runs the steps in schedule order, each
 * reading and writing only through binding numbers. Result leaves that the
 * plan did not place in the result (a parameter or a constant returned as
 * it is, a value returned twice) are copied in at the end. */
#ifndef AXLE_EMIT_X86_CPU_PROGRAM_H
#define AXLE_EMIT_X86_CPU_PROGRAM_H

#include <pthread.h>

#include "emit_x86/gemm.h"
#include "emit_x86/kernel_x86.h"
#include "opt/opt.h"
#include "opt/program.h"
#include "runtime/backend.h"

/* Bindings are the program stage's (src/opt/program.h): the first
 * program_binding_count of a CpuProgram are its Program's, in the same
 * order, their constants' data owned by the Program; those the backend
 * adds after (the products of output fusions, constants of its routines)
 * own their data. */
typedef ProgramBinding CpuBinding;

typedef enum CpuStepKind { CPU_STEP_KERNEL, CPU_STEP_DOT, CPU_STEP_CALL } CpuStepKind;

struct CpuStep;
/* A CPU_STEP_CALL's routine: runs the step on its buffers (addresses, in
 * the order of the step's bindings); false with st set on a run-time error
 * (out of memory, an index out of range the op must report). */
typedef bool CpuCallFunction(const struct CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st);

typedef struct CpuStep {
  CpuStepKind kind;
  const Instruction *inst;
  CompiledKernel *kernel;     /* CPU_STEP_KERNEL */
  GemmProblem dot;            /* CPU_STEP_DOT: strides and sizes; pointers set per run */
  CpuCallFunction *call;      /* CPU_STEP_CALL: a runtime routine (sort, fft, while...) */
  void *state;                /* CPU_STEP_CALL: what call needs; freed by free_state */
  void (*free_state)(void *state);
  const Kernel *lowered;      /* CPU_STEP_KERNEL: the program stage's kernel it runs (dumps); NULL when
                                 the backend lowered a kernel of its own */
  const Instruction *product; /* CPU_STEP_KERNEL of an epilogue: the product it reads */
  int buffer_count;           /* kernel: inputs, outputs, a split sum's chunk sums; dot: lhs, rhs, result */
  int *buffers;               /* binding numbers */
} CpuStep;

/* A result leaf whose value lives elsewhere: copied in after the steps. */
typedef ProgramResultCopy CpuResultCopy;

/* One execution's storage for a program: its temporary block and the
 * address of each binding. A step that runs a called computation (a loop
 * body, a branch) makes a frame once and runs it for every trip. */
/* Who is shown each instruction's value after its last step (--check,
 * --find-nan). */
typedef struct CpuWatch {
  StepObserver *observe;
  void *context;
} CpuWatch;

typedef struct CpuFrame {
  const struct CpuProgram *p;
  char *temp;
  void **address;
  void **buffers;
  const CpuWatch *watch;  /* NULL: a plain run, one NULL check per step */
} CpuFrame;

typedef struct CpuProgram {
  CpuFeatures cpu;
  bool listings;              /* kernels keep their listings, for dumps (Executable.listings) */
  const BufferPlan *plan;
  const Shape *result_shape;
  /* The temporary block: the plan's, then the products of output fusions'
   * dots, which the epilogue kernels read. */
  int64_t temp_bytes;
  int binding_count, binding_capacity;
  CpuBinding *bindings;
  int step_count, step_capacity;
  CpuStep *steps;
  int copy_count;
  CpuResultCopy *copies;
  GemmPlan *gemm;             /* created with the first dot */
  /* The program stage's program this one runs, owned by the entry's
   * CpuProgram (a called computation's is nested in it, with its plan). */
  const Program *program;
  Program *owned_program;
  int program_binding_count;  /* bindings [0, this) are the Program's: their data is its */
  /* One run at a time uses the pool; runs from several threads queue. */
  pthread_mutex_t lock;
  int threads;                /* asked for (0: the default count); the pool is started for them or not */
  ThreadPool *pool;           /* NULL: every step runs on the caller's thread */
  /* What a run of the entry needs besides its arguments and result, made
   * by the first run and kept for the next, under lock: the frame (the
   * temporary block, the binding addresses) and the parameters' leaf
   * addresses. A run allocates nothing and touches no fresh page. */
  bool run_frame_made;
  CpuFrame run_frame;
  void **run_parameters;
  int run_parameter_capacity;
} CpuProgram;

/* ----------------------------------------------------------- cpu_program.c */
CpuProgram *cpu_program_create(const BufferPlan *plan, const Shape *result_shape);
/* Once every step is compiled: the pool of p->threads threads (0: the
 * default count) that the entry's runs share, started only when some step has two
 * tasks or more (or a routine that may); otherwise none, and every step
 * runs on the caller's thread. A called computation's program has none: it
 * runs on its caller's pool. */
void cpu_program_threads_start(CpuProgram *p);
void cpu_program_free(CpuProgram *p);
/* A new binding (number returned); data, if any, becomes the program's. */
int cpu_program_add_binding(CpuProgram *p, const CpuBinding *b);
CpuStep *cpu_program_add_step(CpuProgram *p, CpuStepKind kind, const Instruction *inst, int buffer_count);
/* Reserves bytes at the end of the temporary block; returns their offset. */
int64_t cpu_program_reserve_temp(CpuProgram *p, int64_t bytes);
/* A kernel step running ck over buffer_count bindings (the caller fills
 * them); a split sum gets one more, its chunk sums' block in the
 * temporary, so that a run allocates nothing. */
CpuStep *cpu_program_add_kernel_step(CpuProgram *p, const Instruction *inst, CompiledKernel *ck, int buffer_count);
HostBuffer *cpu_program_run(CpuProgram *p, HostBuffer *const *args, int arg_count, Status *st);
/* The same run, calling observe after the last step of each instruction
 * (the backend's run_observed: --check, --find-nan). */
HostBuffer *cpu_program_run_observed(CpuProgram *p, HostBuffer *const *args, int arg_count, StepObserver *observe,
                                     void *context, Status *st);
/* Both write the result's leaves through this: into result_leaves[i]
 * (depth first, row-major, 16-byte aligned), observe may be NULL. */
bool cpu_program_run_into(CpuProgram *p, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                          StepObserver *observe, void *context, Status *st);

bool cpu_frame_create(CpuFrame *f, const CpuProgram *p, Status *st);
void cpu_frame_free(CpuFrame *f);
/* Runs f's program once: parameters are the addresses of its parameters'
 * leaves (depth first across all parameters), results those of its result's
 * leaves; the work is split over pool. */
bool cpu_frame_run(CpuFrame *f, void *const *parameters, void *const *results, ThreadPool *pool, Status *st);

/* cpu_debug.c: every kernel step's x86-64 listing into out, each headed by
 * its HLO instruction, in schedule order, as --dump writes them one to a
 * file (axle-opt --stage=asm). */
bool cpu_program_print_listings(const CpuProgram *p, const Module *m, FILE *out, Status *st);

#endif
