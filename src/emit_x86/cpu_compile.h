/* What the CPU backend's compile functions share (cpu_backend.c walks the
 * entry computation; cpu_dot.c and the files beside it compile one family
 * of instructions each into steps of the CpuProgram).
 *
 * A compile function takes the CpuCompile and one instruction, adds steps
 * reading and writing through binding numbers (cpu_binding_of), and returns
 * false with the one located message of cpu_refuse for what it finds it
 * cannot encode. What the CPU does not support is decided before: each
 * family's *_refusal(inst) says why the CPU refuses an instruction of its
 * family, from the instruction alone, NULL when it compiles it; cpu_supports
 * (cpu_backend.c) asks them of every step before any code is made, so the
 * compile functions do not ask again. */
#ifndef AXLE_EMIT_X86_CPU_COMPILE_H
#define AXLE_EMIT_X86_CPU_COMPILE_H

#include "emit_x86/cpu_program.h"
#include "ir/conv_plan.h"

/* A kernel compiled so far, kept to compare the next ones with. */
typedef struct CpuKernelMemo {
  const Kernel *kernel;        /* the program stage's kernel */
  CompiledKernel *compiled;    /* owned by the first step that runs it */
  uint64_t hash;               /* kernel_code_hash */
} CpuKernelMemo;

struct Backend;

typedef struct CpuCompile {
  const struct Backend *backend; /* the CPU's hooks, which the walk of a called program calls */
  CpuProgram *p;
  const Program *program;     /* the program stage's program of entry (src/opt/program.h) */
  const ProgramStep *step;    /* the step being compiled */
  const Module *m;
  const Computation *entry;   /* the computation being compiled: the entry or a called one */
  bool called;                /* entry is a called computation (cpu_compile_called) */
  bool across_devices;        /* the run has several devices: collectives exchange (cpu_collective.c) */
  Status *st;
  /* Output fusions' products: each lives only from its GEMM to its
   * epilogue, the next step, so all share one binding of the largest size. */
  int product_binding;
  int64_t product_bytes;
  /* Kernels compiled so far (not while listings are kept: a listing names
   * its instructions), so that a kernel of the same code as an earlier one
   * (an unrolled model's layers) shares its code. slots is a hash table of
   * memo indices + 1, 0 when empty. */
  CpuKernelMemo *memo;
  int memo_count;
  int *memo_slots;
  int memo_slot_count;         /* a power of two, at least twice memo_count */
} CpuCompile;

/* The one message for everything the backend cannot compile, located at
 * the instruction; why (may be NULL) says what stopped it. Returns false. */
bool cpu_refuse(CpuCompile *c, const Instruction *inst, const char *why);
/* The binding of leaf `leaf` of inst's value, following aliases; -1 when
 * the plan does not place it. */
int cpu_binding_of(const CpuCompile *c, const Instruction *inst, int leaf);
/* A kernel step for inst, the current program step, whose kernel the
 * program stage lowered; with `computed` (an output fusion's dot), that
 * kernel is the epilogue, reading its product from computed_binding. */
bool cpu_compile_kernel(CpuCompile *c, const Instruction *inst, const Instruction *computed, int computed_binding);
/* Frees the kernels c compared its kernels with (their code stays the steps'). */
void cpu_compile_memo_free(CpuCompile *c);
/* The CPU program's storage from the program stage's: its bindings first
 * (their constants' data stays the Program's), then its result copies.
 * Called once per program, before its steps. */
void cpu_compile_bind(CpuCompile *c);
/* After the steps: the storage the output fusions' products share. */
void cpu_compile_finish(CpuCompile *c);
/* A program of its own for comp (a loop body, a branch: the current
 * program step's called program), compiled by the same walk as the entry: it reads its parameters from, and writes its
 * result to, leaf addresses its caller gives (cpu_frame_run). NULL after
 * the located error of what it could not compile. */
CpuProgram *cpu_compile_called(CpuCompile *c, const Computation *comp);

/* ------------------------------------------------------------- cpu_dot.c */
/* A product step's instruction: a dot, scaled-dot, ragged-dot or a fusion
 * around one dot or convolution (a convolution's plan: cpu_conv_refusal,
 * its message, naming the attribute, made into `made`). */
const char *cpu_product_refusal(const Instruction *inst, Status *made);
bool cpu_compile_dot(CpuCompile *c, const Instruction *inst);
bool cpu_compile_scaled_dot(CpuCompile *c, const Instruction *inst);
bool cpu_compile_ragged_dot(CpuCompile *c, const Instruction *inst);
/* An output fusion, or any fusion around one dot or convolution: the
 * product into a temporary, then the rest as an epilogue kernel. */
bool cpu_compile_output_fusion(CpuCompile *c, const Instruction *fusion);
/* A step that runs a dot's GEMM with its epilogue kernel fused in, run on
 * each block of rows the GEMM finishes (kernel row = batch * M + row): true,
 * with the problem and the kernel, whose buffers are the step's from the
 * fourth on (lhs, rhs and the product come first). For the AOT writer. */
bool cpu_fused_dot_parts(const CpuStep *s, const GemmProblem **dot, const CompiledKernel **epilogue);

/* --------------------------------------------------------- cpu_product.c
 * A dot or convolution the GEMM cannot read in place, as a CPU_STEP_CALL:
 * operands gathered into contiguous batches A[batch][m][k], B[batch][k][n]
 * in the arithmetic of the result, multiplied, and C[batch][m][n]
 * scattered into the result. */
typedef enum ProductArithmetic { PRODUCT_F32, PRODUCT_F64, PRODUCT_INTEGER, PRODUCT_COMPLEX } ProductArithmetic;

typedef struct ProductPlan ProductPlan;
/* Gathers all of A (batch * m * k elements, loaded with
 * product_element_load) from lhs; for gathers that are not a sum of
 * per-axis offsets (a convolution's input patches). */
typedef void ProductGatherFn(const ProductPlan *plan, const void *lhs, void *a, ThreadPool *pool);
/* Fills one panel of A straight from lhs, as GemmPackFn does (gemm.h),
 * when the arithmetic is f32: A is then never stored whole (the implicit
 * GEMM of a convolution). */
typedef void ProductPackFn(const ProductPlan *plan, const void *lhs, int64_t batch, int64_t row0, int rows, int width,
                           int64_t k0, int64_t depth, float *dst);

/* ragged-dot (eval_dot_variants.c): one lhs dimension is cut into groups
 * of group_sizes[g] consecutive coordinates. The product runs once per
 * group: RAGGED_ROWS, the ragged dimension is an lhs row dimension and
 * each row takes its group's rhs (rows in no group are 0); RAGGED_SUMS, it
 * is a contracting dimension and result[g] sums only group g's part. */
typedef enum RaggedMode { RAGGED_NONE, RAGGED_ROWS, RAGGED_SUMS } RaggedMode;
typedef struct RaggedPlan {
  RaggedMode mode;
  int64_t groups, extent;     /* G, and the ragged dimension's size */
  /* group_sizes is [G] (prefix NULL, one row) or [prefix..., G]
   * (ragged_dot_sizes_prefix): the batch dims, then the free dims (ROWS)
   * or contracting dims (SUMS) before the ragged one. Its row for batch b
   * and row i (ROWS) or column k (SUMS) is b * prefix_rows + prefix[i|k]. */
  int64_t rows, prefix_rows;
  int64_t *prefix;
  int64_t *sizes_row_offset;  /* per row, the offset of [row, 0] in group_sizes' layout */
  int64_t sizes_group_stride;
  ElementType sizes_type;
  int64_t *coord;             /* ROWS: per row i, SUMS: per column k: the ragged coordinate */
  int64_t group_stride;       /* ROWS: rhs offset per group; SUMS: result offset per group */
  int64_t result_bytes;       /* ROWS: the result, zeroed first */
} RaggedPlan;

struct ProductPlan {
  ElementType lhs_type, rhs_type, result_type;
  ProductArithmetic arithmetic;
  int64_t batch, m, n, k;
  /* Element offsets per axis, malloc'd: a[0][batch] + a[1][i] + a[2][k] in
   * lhs, b[0][batch] + b[1][k] + b[2][j] in rhs, c[0][batch] + c[1][i] +
   * c[2][j] in the result. a is unused with gather_a. */
  int64_t *a[3], *b[3], *c[3];
  /* scaled-dot: offsets of each element's scale, per axis like a and b
   * (NULL otherwise); the operand times its scale, in double, is loaded. */
  int64_t *a_scale[3], *b_scale[3];
  ElementType scale_type[2];
  RaggedPlan ragged;
  ProductGatherFn *gather_a;
  ProductPackFn *pack_a;
  /* Fills one panel of B straight from rhs (rows -> columns: dst[k * width
   * + l] = B[batch][k0 + k][row0 + l]), f32 only: a convolution whose
   * product's columns are output positions (cpu_conv.c). */
  ProductPackFn *pack_b;
  void *gather_context;
  void (*gather_free)(void *context);
  const GemmPlan *gemm;   /* the program's; set by product_step_add */
  /* Set by product_step_add: A, B, C (0, 1, 2) read or written by the
   * GEMM where they lie, with these batch, row and column strides. */
  bool in_place[3];
  int64_t strides[3][3];
  /* An epilogue kernel run per block of rows; its buffers follow the
   * step's first three (product_step_take_epilogue). */
  CompiledKernel *epilogue;
  /* A correction of the result, NULL for most products: when fix_needed
   * says so for the operands, fix runs on the result after the product and
   * before the epilogue (a convolution's taps in padding, cpu_conv.c). */
  bool (*fix_needed)(const ProductPlan *plan, const void *lhs, const void *rhs);
  void (*fix)(const ProductPlan *plan, const void *lhs, const void *rhs, void *out, ThreadPool *pool);
};

ProductArithmetic product_arithmetic_of(ElementType result);
/* The offsets, in s's layout, of every index over dims[0..n) (row-major
 * over that list); *count of them. malloc'd. */
int64_t *product_offset_table_create(const Shape *s, const int64_t *dims, int n, int64_t *count);
/* Element `offset` of src (type from) into element `at` of a gathered
 * batch, converted to the plan's arithmetic. */
void product_element_load(const ProductPlan *p, ElementType from, const void *src, int64_t offset, void *dst,
                          int64_t at);
void product_plan_free(void *plan);
/* Adds the call step computing plan (which it takes, freed on failure too)
 * from bindings lhs, rhs into out; a scaled-dot's scales and a
 * ragged-dot's group sizes are inst's operands 2 and 3. */
bool product_step_add(CpuCompile *c, const Instruction *inst, ProductPlan *plan, int lhs, int rhs, int out);
/* Makes kernel_step's epilogue kernel run inside product_step, on each
 * block of rows the GEMM finishes (GEMM row = kernel row), when the plan
 * writes its result in place with one batch in f32; takes the kernel and
 * its buffers (the caller drops kernel_step) and returns true, or changes
 * nothing and returns false. */
bool product_step_take_epilogue(CpuStep *product_step, CpuStep *kernel_step);

/* ------------------------------------------------------------ cpu_conv.c */
bool cpu_compile_convolution(CpuCompile *c, const Instruction *inst);
/* --------------------------------------------------------- conv_gather.c
 * A convolution's taps walked one by one, for the implicit GEMM's patches
 * and for the fix of the taps in padding (shared by cpu_conv.c and
 * conv_direct.c). */
/* What the patch gather needs: sizes, the window and the input's strides;
 * and what the padding fix needs besides: the element types and the
 * kernel's and the result's strides. */
typedef struct ConvGather {
  int spatial_count;
  int64_t groups, feature_groups, batch_groups;
  int64_t batch_per_group, features_per_group, taps;
  int64_t in_size[AXLE_MAX_RANK], out_size[AXLE_MAX_RANK], kernel_size[AXLE_MAX_RANK];
  WindowDim window[AXLE_MAX_RANK];
  int64_t batch_stride, feature_stride, spatial_stride[AXLE_MAX_RANK];
  ElementType in_type, kernel_type, out_type;
  int64_t kernel_elements, group_out_features, positions;
  int64_t kernel_out_stride, kernel_in_stride, kernel_spatial_stride[AXLE_MAX_RANK];
  int64_t out_batch_stride, out_feature_stride, out_spatial_stride[AXLE_MAX_RANK];
  bool kernel_first;  /* the turned-around product: its lhs is the kernel */
} ConvGather;
ConvGather *conv_gather_create(const Instruction *conv, const ConvPlan *plan);
/* Where product row `row` of group `group` reads: its output position
 * (out) and the input offset of its batch entry and the group's first
 * feature. */
int64_t conv_gather_row_locate(const ConvGather *g, int64_t group, int64_t row, int64_t out[AXLE_MAX_RANK]);
/* The input offset window tap t (linear over the kernel's spatial dims)
 * reads for output position out, from the row's base; false when the tap
 * falls outside the input. */
bool conv_gather_tap_locate(const ConvGather *g, const int64_t *out, int64_t t, int64_t base, int64_t *at);
/* Whether a fast path's result needs conv_padding_taps_fix: a tap can
 * fall outside the input and the kernel holds a weight that is not finite
 * (a finite weight times the 0 read there adds nothing, as if skipped). */
bool conv_padding_fix_needed(const ConvGather *g, const void *kernel);
/* Sums again, skipping the taps outside the input, every output of an
 * output feature with a weight that is not finite whose window meets the
 * padding or a hole of the input dilation. */
void conv_padding_taps_fix(const ConvGather *g, const void *in, const void *kernel, void *out, ThreadPool *pool);
/* Why the CPU refuses convolution conv: its plan cannot be made (the
 * message, naming the attribute, made into `made`); NULL when it compiles
 * it. */
const char *cpu_conv_refusal(const Instruction *conv, Status *made);
/* The convolution conv (inst names it in messages) from bindings lhs and
 * rhs into out, through the GEMM on its input patches. */
bool cpu_conv_step_add(CpuCompile *c, const Instruction *inst, const Instruction *conv, int lhs, int rhs, int out);

/* --------------------------------------------------------- conv_direct.c
 * The direct convolution (f32, one group, stride 1, AVX-512): adds its
 * step and sets *added, or leaves *added false for the implicit GEMM; false
 * after a located refusal or a failure to map its code. */
bool conv_direct_step_add(CpuCompile *c, const Instruction *inst, const Instruction *conv, const ConvPlan *plan,
                          int lhs, int rhs, int out, bool *added);
/* Whether s is a direct convolution's step. */
bool conv_direct_step_is(const CpuStep *s);
/* For the dumps: such a step's micro-kernel in objdump's format, and its
 * schedule in words. */
bool conv_direct_print_listing(const CpuStep *s, FILE *out, Status *st);
void conv_direct_schedule_describe(const CpuStep *s, StrBuf *sb);

/* --------------------------------------------------------- cpu_scatter.c */
const char *cpu_scatter_refusal(const Instruction *inst);
bool cpu_compile_scatter(CpuCompile *c, const Instruction *inst);
bool cpu_compile_select_and_scatter(CpuCompile *c, const Instruction *inst);
/* ------------------------------------------------------------ cpu_call.c
 * Runtime-routine steps (CPU_STEP_CALL). */
/* Why the CPU refuses inst as a call step (a routine that
 * cpu_add_call_step makes): a tuple or packed (E(n)) array among its
 * operands and result elements, or more than it passes. From the
 * instruction alone; NULL when it makes one. */
const char *cpu_call_refusal(const Instruction *inst);
/* A call step whose buffers are inst's operands (leaf 0 of each), then its
 * result leaves 0..leaf_count-1; call sees each of them row-major (another
 * layout is copied through scratch around it). The step owns state from
 * here on, freed by free_state, also when this refuses (NULL). */
CpuStep *cpu_add_call_step(CpuCompile *c, const Instruction *inst, int leaf_count, CpuCallFunction *call, void *state,
                           void (*free_state)(void *state));

/* ------------------------------------------------------------ cpu_sort.c
 * sort (a compiled comparator called by a merge-sort routine) and topk. */
const char *cpu_sort_refusal(const Instruction *inst);
const char *cpu_topk_refusal(const Instruction *inst);
bool cpu_compile_sort(CpuCompile *c, const Instruction *inst);
bool cpu_compile_topk(CpuCompile *c, const Instruction *inst);

/* ------------------------------------------------------------- cpu_fft.c */
const char *cpu_fft_refusal(const Instruction *inst);
bool cpu_compile_fft(CpuCompile *c, const Instruction *inst);

/* ---------------------------------------------------------- cpu_linalg.c
 * cholesky, triangular-solve, and the LAPACK custom-calls JAX emits for
 * jnp.linalg (src/ir/lapack.h); other custom-calls are refused. */
/* cholesky, triangular-solve and custom-call: their shapes and types (a
 * custom-call lapack_call_read cannot read: its message, naming the
 * call's target, made into `made`). */
const char *cpu_linalg_refusal(const Instruction *inst, Status *made);
bool cpu_compile_cholesky(CpuCompile *c, const Instruction *inst);
bool cpu_compile_triangular_solve(CpuCompile *c, const Instruction *inst);
bool cpu_compile_custom_call(CpuCompile *c, const Instruction *inst);

/* ------------------------------------------------------------- cpu_rng.c */
bool cpu_compile_rng(CpuCompile *c, const Instruction *inst);
/* Why the CPU refuses an rng (cpu_supports asks); NULL when it compiles it. */
const char *cpu_rng_refusal(const Instruction *inst);

/* --------------------------------------------------------- cpu_control.c */
/* Why the CPU refuses inst, one of this file's ops (while, conditional,
 * call, async-start, ragged-all-to-all, map, scan, rng-bit-generator),
 * from the instruction alone; NULL when it compiles it. cpu_supports
 * asks before any code is made, so the compile functions do not. */
const char *cpu_control_refusal(const Instruction *inst);
bool cpu_compile_while(CpuCompile *c, const Instruction *inst);
bool cpu_compile_conditional(CpuCompile *c, const Instruction *inst);
bool cpu_compile_call(CpuCompile *c, const Instruction *inst);
bool cpu_compile_async_start(CpuCompile *c, const Instruction *inst);
/* Ops whose value is copied from operand leaves or constants: forwards
 * (add-dependency, domain, opt-barrier, async-update ...), the collectives
 * and asynchronous pairs of one replica, and the ops on static sizes. What
 * no copy can make the program stage refused for every target
 * (program_copy_refusal), so the CPU adds no refusal of its own. */
bool cpu_compile_forward(CpuCompile *c, const Instruction *inst);
/* A step that only copies leaves (what cpu_compile_forward and the like
 * make): true, with its count of copies; copy i moves bytes[i] bytes from
 * the step's buffer 2i to its buffer 2i+1 unless they are the same. For
 * the AOT writer. */
bool cpu_leaf_copies_parts(const CpuStep *s, int *count, const int64_t **bytes);
bool cpu_compile_ragged_all_to_all(CpuCompile *c, const Instruction *inst);
bool cpu_compile_map(CpuCompile *c, const Instruction *inst);
bool cpu_compile_scan(CpuCompile *c, const Instruction *inst);
bool cpu_compile_rng_bit_generator(CpuCompile *c, const Instruction *inst);

/* ------------------------------------------------------ cpu_collective.c
 * A collective, replica-id or partition-id in a run over several devices:
 * the evaluator's rule on the step's buffers, exchanging with the other
 * devices' threads. */
bool cpu_compile_collective(CpuCompile *c, const Instruction *inst);
/* Why the CPU refuses a collective across devices (cpu_supports asks);
 * NULL when it compiles it. */
const char *cpu_collective_refusal(const Instruction *inst);

/* ----------------------------------------------------------- cpu_debug.c */
/* --dump for the CPU backend: under dir/kernels, per kernel step,
 * NAME.kernel.txt (its kernel IR) and NAME.s (its x86 listing), each headed
 * by the HLO instruction with its op_name and source line, and index.txt
 * naming every step in schedule order. */
bool cpu_program_dump(const CpuProgram *p, const Module *m, const char *dir, Status *st);

#endif
