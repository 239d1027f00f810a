/* What the GPU backend's compile files share (gpu_backend.c's hooks take
 * the program stage's steps from the shared walk, backend_compile.c;
 * gpu_*.c files compile the families that are not one kernel of the
 * kernel IR: GEMMs, sorts, control flow, ...; gpu_compile_support.c holds
 * the helpers they all call).
 *
 * A family's compile function writes its PTX .entry into c->ptx (the one
 * module of the executable) and adds one or more launches to c->p with
 * gpu_add_launch; a refusal goes through gpu_refuse, located at the
 * instruction. Launches run in the order they are added.
 *
 * What the GPU does not support is decided before any of them runs: each
 * family's *_refusal says why the GPU refuses an instruction of its
 * family (from the instruction, and for some the program's buffer plan or
 * the step's applied kernels), NULL when it compiles it; gpu_supports
 * (gpu_backend.c) asks them of every step, so the compile functions keep
 * only what they find while making code (storage the bindings of this
 * compile share, a kernel the PTX emitter cannot write). */
#ifndef AXLE_EMIT_PTX_GPU_COMPILE_H
#define AXLE_EMIT_PTX_GPU_COMPILE_H

#include "emit_ptx/gpu_program.h"
#include "emit_ptx/ptx_builder.h"
#include "opt/program.h"

struct Backend;

typedef struct GpuCompile {
  const struct Backend *backend; /* the GPU's hooks, which the walk of a called program calls */
  GpuProgram *p;
  const Module *m;
  const BufferPlan *plan;   /* of the computation being compiled (the entry's, or a called one's) */
  /* The program stage's program of that computation (src/opt/program.h):
   * its steps hold the kernels, lowered once there; a called computation's
   * is the nested program of the step that calls it. */
  const Program *program;
  const ProgramStep *step;    /* the step being compiled */
  /* A called computation's: the binding of each slot of its plan (NULL for
   * the entry, whose slot i is binding i). gpu_control.c fills it. */
  const int *slot_bindings;
  PtxBuilder *ptx;
  const PtxTarget *target;
  bool no_wgmma;              /* --gpu_no_wgmma: sm_90a's half GEMMs on mma.sync */
  /* Writing PTX for a named target with no device (gpu_write_ptx, and
   * --target with --compile-only): the driver's optional entries (tensor
   * maps) are taken as present. */
  bool no_device;
  /* A run over several GPUs: this device's place in it, and the run's
   * communicators (NULL on one device, where collectives are copies). */
  int64_t replica, partition, replica_count, partition_count;
  struct NcclCliques *nccl;
  Status *st;
} GpuCompile;

/* ---------------------------------------------------- gpu_compile_support.c */

/* The one message for everything the backend cannot compile, located at
 * the instruction; why (may be NULL) says what stopped it. Returns false. */
bool gpu_refuse(GpuCompile *c, const Instruction *inst, const char *why);

/* The step of c->program that does inst's work (not one computing a value
 * inside a product fusion); NULL when the program has none for inst. */
const ProgramStep *gpu_step_of(const GpuCompile *c, const Instruction *inst);

/* The GPU binding of c->program's binding `at` of a plan slot (the
 * entry's GPU bindings 0.. are its program's, in order; a called
 * computation's go through c->slot_bindings); -1 for -1. */
int gpu_binding_at(const GpuCompile *c, int at);
/* The binding of inst's leaf (program_binding_of, then gpu_binding_at);
 * -1 if the plan does not place it. */
int gpu_binding_of(const GpuCompile *c, const Instruction *inst, int leaf);
/* The GPU bindings of step's kernel buffers into out[0..step->buffer_count):
 * its inputs (a fused constant uploaded as a binding of its own; the
 * product an epilogue reads is `product`), then its outputs. False after a
 * refusal. */
bool gpu_step_buffers(GpuCompile *c, const ProgramStep *step, int product, int *out);
/* A GPU binding uploading the bytes of c->program's constant binding `at`
 * (in the layout its reader wants); -1 after a refusal. */
int gpu_bind_constant(GpuCompile *c, int at);

/* A launch of `entry` (already written into c->ptx) over the bindings
 * buffers[0..buffer_count), passed as .u64 pointers in that order, then
 * scalars[0..scalar_count) as .u64 values. A negative binding is refused
 * at inst. Returns the launch (to set shared_bytes, ...) or NULL. */
GpuLaunch *gpu_add_launch(GpuCompile *c, const Instruction *inst, const char *entry, unsigned grid, unsigned block,
                          const int *buffers, int buffer_count, const int64_t *scalars, int scalar_count);

/* A new device scratch area of `bytes` for one instruction's kernels
 * (a sort's keys, an FFT's work array, a split-k partial sum): a binding
 * of its own in the temporary block, after the plan's temporaries, never
 * shared with another instruction. Returns the binding number. */
int gpu_reserve_temp(GpuCompile *c, int64_t bytes);

/* A unique .entry name for inst's kernel: "k<launch number>_<name>". */
void gpu_entry_name(const GpuCompile *c, const Instruction *inst, const char *suffix, char *out, size_t size);

/* The one kernel of the kernel IR that inst lowers to (its step's, lowered
 * by the program stage), written as PTX by ptx_kernel.c and launched over
 * inst's buffers. */
bool gpu_compile_kernel(GpuCompile *c, const Instruction *inst);

/* ---- the instruction families (gpu_backend.c's hooks route each step here) ----
 * Each returns false after gpu_refuse (or another located error in c->st). */

/* gpu_control.c: while, conditional, call, async wrappers: driven from the host; the
 * collectives of one replica and the ops that only order work: copies. */
bool gpu_compile_control(GpuCompile *c, const Instruction *inst);
/* Why the GPU refuses a collective step (a run over several devices) of
 * program: an exchange inside a conditional's branch, the starts' form and
 * ids, then gpu_collective.c's word; NULL when it compiles it. (What no
 * copy step makes, the program stage refused for every target:
 * program_copy_refusal.) */
const char *gpu_collective_step_refusal(const Program *program, const ProgramStep *step);
/* gpu_collective.c: a collective across GPUs (c->nccl set), through NCCL,
 * its results from inst's leaf `first` on (a start form's element 1). */
bool gpu_collective_is_across(Opcode op);  /* the ops without a start tuple it takes */
bool gpu_compile_collective_across(GpuCompile *c, const Instruction *inst, int first);
/* Why the GPU refuses that collective, its results from leaf `first` on,
 * from the instruction alone; NULL when it compiles it. */
const char *gpu_collective_refusal(const Instruction *inst, int first);
/* gpu_ragged.c: ragged-all-to-all on one replica (constant offsets and sizes). */
const char *gpu_ragged_all_to_all_refusal(const Program *program, const Instruction *inst);
bool gpu_compile_ragged_all_to_all(GpuCompile *c, const Instruction *inst);
/* gpu_scan.c: scan whose step computation is elementwise over a slice. */
const char *gpu_scan_refusal(const Program *program, const Instruction *inst);
bool gpu_compile_scan(GpuCompile *c, const Instruction *inst);
/* gpu_dot.c: dot, scaled-dot, ragged-dot, and fusions around a dot (epilogues). */
const char *gpu_dot_refusal(const ProgramStep *step);
bool gpu_compile_dot(GpuCompile *c, const Instruction *inst);
bool gpu_compile_dot_fusion(GpuCompile *c, const Instruction *inst);
/* gpu_conv.c: convolution, and fusions around one (the convolution's
 * dimensions as ptx_conv_describe reads them, its message naming what does
 * not fit made into `made`). */
const char *gpu_conv_refusal(const Instruction *inst, Status *made);
bool gpu_compile_convolution(GpuCompile *c, const Instruction *inst);
bool gpu_compile_convolution_fusion(GpuCompile *c, const Instruction *inst);
/* gpu_sort.c: sort and top-k (row-major arrays: program's plan says
 * where the results lie). */
const char *gpu_sort_refusal(const Program *program, const Instruction *inst);
bool gpu_compile_sort(GpuCompile *c, const Instruction *inst);
/* gpu_scatter.c: scatter and select-and-scatter (step: its applied kernels). */
const char *gpu_scatter_refusal(const Program *program, const ProgramStep *step);
bool gpu_compile_scatter(GpuCompile *c, const Instruction *inst);
/* gpu_rng.c: rng-bit-generator (rng and rng-get-and-update-state are
 * refused by gpu_supports). */
const char *gpu_rng_refusal(const Program *program, const Instruction *inst);
bool gpu_compile_rng(GpuCompile *c, const Instruction *inst);
/* gpu_fft.c: fft. */
const char *gpu_fft_refusal(const Program *program, const Instruction *inst);
bool gpu_compile_fft(GpuCompile *c, const Instruction *inst);
/* gpu_linalg.c: cholesky, triangular-solve, and the linear-algebra custom
 * calls (another LAPACK routine than getrf and trsm is refused, its
 * message, naming the call's target, made into `made`). */
const char *gpu_linalg_refusal(const Program *program, const Instruction *inst, Status *made);
bool gpu_compile_linalg(GpuCompile *c, const Instruction *inst);
bool gpu_compile_custom_call(GpuCompile *c, const Instruction *inst);

#endif
