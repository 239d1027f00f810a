/* The kernel IR: what both code generators consume.
 *
 * A kernel is one fusion (or one unfused op) made explicit: an iteration
 * space (a loop nest over the output's dimensions) and, for each point of
 * it, a straight-line body of typed scalar operations in SSA form. Loads and
 * stores take one logical index per dimension of their buffer; turning
 * logical indices into an address through the buffer's layout is the only
 * thing a backend adds, so the index arithmetic of broadcast, transpose,
 * reshape, bitcast, slice, pad, concatenate, reverse, iota, dynamic slices
 * and gather is written once, by the lowering (src/opt/lower*.c), as
 * ordinary s64 operations a reader can see in the printed kernel.
 *
 * A reduction kernel has three blocks: PRE runs once per output point (the
 * indices, the initial values), REDUCE runs for every point of the reduced
 * dimensions (the operand elements and the reducer applied to the
 * accumulators), POST runs once after it (the results, any elementwise
 * epilogue, the stores). A loop kernel has PRE only.
 *
 * A row kernel (KERNEL_ROW: softmax, layernorm) walks the reduced
 * dimensions several times per output point, in phases: each phase is a
 * REDUCE loop, or, last, a ROW loop that stores one value per element of
 * the row. A phase reads the accumulators of the phases before it (softmax:
 * phase 0 finds the row's max, phase 1 sums exp(x - max), the ROW phase
 * stores exp(x - max) / sum). Ops carry their phase; KOP_RINDEX is a
 * phase's own loop index.
 *
 *   kernel fusion.add_multiply_reduce (from fusion.add_multiply_reduce)
 *     in0 f32[1024]{0}  in1 f32[1024]{0}  in2 f32[1024]{0}
 *     out0 f32[]
 *     loop [] reduce [1024]
 *     pre:    %0 = f32 const 0
 *             acc0 = %0
 *     reduce: %1 = s64 rindex 0
 *             %2 = f32 load in1[%1]
 *             ...
 *     post:   store out0[] acc0
 */
#ifndef AXLE_IR_KERNEL_KERNEL_H
#define AXLE_IR_KERNEL_KERNEL_H

#include "ir.h"

/* The scalar operations. Arithmetic reuses HLO's opcodes (op), so that its
 * meaning is the evaluator's; the kernel opcodes below add what HLO leaves
 * implicit: where values come from and go to. */
typedef enum KernelOpcode {
  KOP_INDEX,       /* the loop index of dimension `dim` of the iteration space (s64) */
  KOP_RINDEX,      /* the index of reduced dimension `dim` in its phase's loop (REDUCE, ROW) */
  KOP_CONSTANT,    /* a scalar of `type`: value.i for integers and pred, value.f for floats */
  KOP_LOAD,        /* element of input `buffer` at the logical indices args[0..rank) */
  KOP_STORE,       /* args[0] into output `buffer` at args[1..rank] */
  KOP_HLO,         /* HLO opcode `op` on args (FORM_UNARY/FORM_BINARY rows, compare,
                      select, clamp, convert, bitcast-convert); compare keeps its
                      direction and type in `direction`, `compare_type` */
  KOP_ACC_READ,    /* the current value of accumulator `acc` (REDUCE, ROW and POST blocks) */
  KOP_ACC_WRITE,   /* accumulator `acc` = args[0]; in PRE it sets the initial value */
} KernelOpcode;

typedef enum KernelBlock { KBLOCK_PRE, KBLOCK_REDUCE, KBLOCK_ROW, KBLOCK_POST } KernelBlock;

enum { KERNEL_MAX_ARGS = AXLE_MAX_RANK + 1 };

typedef struct KernelOp {
  KernelOpcode kop;
  KernelBlock block;
  int phase;               /* KBLOCK_REDUCE and KBLOCK_ROW: which pass over the reduced dims */
  ElementType type;        /* of the value it produces (STORE, ACC_WRITE: the stored type) */
  Opcode op;               /* KOP_HLO */
  CompareDirection direction;
  CompareType compare_type;
  int dim, buffer, acc;
  int arg_count;
  int args[KERNEL_MAX_ARGS]; /* values: indices of earlier ops */
  union {
    int64_t i;
    double f;
  } value;                 /* KOP_CONSTANT */
  const Instruction *origin; /* the HLO instruction it came from, for listings */
  bool invariant;          /* REDUCE, ROW: the same on every trip of its phase's loop
                              (kernel_order_blocks puts these first in the phase) */
} KernelOp;

/* An input or an output: its shape (with layout) and where it comes from. */
typedef struct KernelBuffer {
  Shape shape;
  const Instruction *source; /* inputs: the fusion's operand; outputs: the fusion */
  int output_index;          /* outputs: leaf of a tuple-shaped result */
  const Literal *constant;   /* inputs that are constants of the fused computation */
} KernelBuffer;

typedef enum KernelKind {
  KERNEL_LOOP,       /* one body per output point */
  KERNEL_REDUCE,     /* PRE / REDUCE / POST, see above */
  KERNEL_ROW,        /* PRE / REDUCE phases / an optional ROW phase / POST */
} KernelKind;

/* The schedule: how a target runs the kernel's loops. One small policy
 * function per target chooses it before any code is written
 * (kernel_x86_schedule for x86); the emitter follows it, the kernel dump
 * prints it, and kernels of the same code compare it. Strategy KSCHED_NONE:
 * not chosen yet (the emitter then asks its policy itself). */
typedef enum KernelStrategy {
  KSCHED_NONE,
  KSCHED_LOOP,          /* a loop kernel: rows of the inner dimension */
  KSCHED_REDUCE,        /* one output point per row, its reduction sequential or in partials */
  KSCHED_SPLIT_REDUCE,  /* a long sum cut into chunks (split_chunks), folded in order */
  KSCHED_ROW,           /* a row kernel: its phases over each row in turn */
  KSCHED_COLUMNS,       /* reduce or row kernel: SIMD across adjacent output points, one per lane */
} KernelStrategy;

typedef enum KernelTail {
  KTAIL_NONE,           /* the vectors cover the loop */
  KTAIL_SCALAR,         /* the last elements one by one */
  KTAIL_MASKED,         /* one more trip of the vector body under a lane mask */
} KernelTail;

typedef struct KernelPhaseSchedule {
  int lanes;            /* vector width in elements; 0: scalar code */
  int lane_bits;        /* 32 (f32 lanes) or 64 (f64) */
  int unroll;           /* vectors per trip of the loop */
  int accumulators;     /* a reduction: independent partial vectors */
  /* A maximum or minimum with a plain max/min per element: a test for NaN
   * (which needs the blends of the exact loop) reruns the row in the
   * exact loop. With rerun_on_zero (several accumulators: a NaN or a zero
   * may land in another partial than in one accumulator's order) the test
   * is once per row, on any NaN or any ±0 result lane; without, once per
   * row too, on NaN lanes or'ed over the row (once per vector where the
   * target has no register free for them), the partials the exact loop's
   * own. */
  bool rerun_exact, rerun_on_zero;
  KernelTail tail;
  /* A ROW phase: value `reuse_as` of this phase equals value `reuse` of the
   * phase before it (a softmax's exp): that phase stores it into this
   * phase's output, where this phase reads it back instead of computing
   * it again (-1, -1: none). */
  int reuse, reuse_as;
  /* ...through a row buffer in the kernel's frame (cache-resident)
   * instead of the output, so the output is written once. */
  bool reuse_in_frame;
  /* A ROW phase: its store bypasses the caches (non-temporal) on rows
   * whose address is aligned to the vector: a large output that nothing
   * here reads again, written without first reading each line. */
  bool stream_stores;
  /* A ROW phase run inside the loop of the REDUCE phase before it (the
   * column strategy): each trip does that phase's work for one reduced
   * index, then this phase's, so the rows are walked once, not twice. */
  bool in_previous_loop;
  /* A ROW phase that only divides the value the phase before stored by
   * an accumulator (softmax's exp / sum): it runs in the next row's first
   * loop, a vector of this row beside each vector of that row, so its
   * divides overlap that row's reads from memory; the last row of a range
   * runs it after the rows. */
  bool in_next_row;
  /* A REDUCE phase after the first: each trip prefetches the same place
   * this many bytes on in its row loads' buffer: the next row, which the
   * first phase then finds in cache (0: none). */
  int prefetch_row_bytes;
} KernelPhaseSchedule;

typedef struct KernelSchedule {
  KernelStrategy strategy;
  const char *target;   /* what it was chosen for, a static string ("x86 avx512") */
  int64_t split_chunks; /* KSCHED_SPLIT_REDUCE */
  int threads_per_block;/* GPU targets: 0 here */
  KernelPhaseSchedule phases[AXLE_MAX_RANK]; /* loop and reduce kernels: phases[0] */
} KernelSchedule;

typedef struct Kernel {
  const char *name;
  const Instruction *origin;  /* the fusion or op it computes */
  KernelKind kind;
  int input_count, output_count;
  KernelBuffer *inputs, *outputs;
  int rank;                   /* the iteration space */
  int64_t dims[AXLE_MAX_RANK];
  int reduce_rank;            /* KERNEL_REDUCE: the reduced dimensions' extents */
  int64_t reduce_dims[AXLE_MAX_RANK];
  int acc_count;
  ElementType acc_types[AXLE_MAX_RANK];
  int phase_count;            /* KERNEL_REDUCE: 1; KERNEL_ROW: the passes over the row */
  KernelBlock phase_blocks[AXLE_MAX_RANK]; /* KBLOCK_REDUCE or KBLOCK_ROW, per phase */
  int op_count, op_capacity;
  KernelOp *ops;              /* PRE ops, then REDUCE, then POST */
  KernelSchedule schedule;    /* chosen by a target's policy (see above) */
} Kernel;

/* ---------------------------------------------------------------- kernel.c
 * Building and printing. A kernel is malloc'd and owns its arrays. */
Kernel *kernel_create(const char *name, const Instruction *origin, KernelKind kind);
void kernel_free(Kernel *k);
int kernel_add_input(Kernel *k, const Shape *shape, const Instruction *source, const Literal *constant);
int kernel_add_output(Kernel *k, const Shape *shape, const Instruction *source, int output_index);
/* Appends an op and returns its value number. */
int kernel_add_op(Kernel *k, const KernelOp *op);
/* Puts the ops in the order they run (PRE, each phase, POST), as code
 * generators expect, whatever order the lowering made them in; within a
 * phase, the loop-invariant ops first (constants, reads of accumulators
 * the phase does not write, and arithmetic on those and PRE values),
 * marked `invariant`, so that a code generator may compute them once
 * before the phase's loop (the printed kernel marks them "inv"). */
void kernel_order_blocks(Kernel *k);
void print_kernel(StrBuf *sb, const Kernel *k);
/* The schedule's lines, each after `prefix` (the dump's indent, a
 * listing's "# "); nothing when none was chosen. */
void print_kernel_schedule(StrBuf *sb, const Kernel *k, const KernelSchedule *s, const char *prefix);
bool kernel_schedule_equal(const KernelSchedule *a, const KernelSchedule *b);

/* A value of a row kernel's ROW phase (the last) that the REDUCE phase
 * before it computes too, from the same elements of the same inputs: the
 * last such value that is an HLO op, and in *earlier its twin there; -1
 * when none. The accumulators it reads keep their values from that phase
 * on. (Softmax: the ROW phase's exp(x - max), summed by the phase before.) */
int kernel_find_recomputed(const Kernel *k, int *earlier);

/* -------------------------------------------------------- kernel_compare.c
 * Kernels that compile to the same code: equal but for their names and the
 * instructions they read and write (kernel_compare.c says what counts). A
 * code generator compiles such kernels once. */
bool kernel_same_code(const Kernel *a, const Kernel *b);
uint64_t kernel_code_hash(const Kernel *k);  /* equal for kernels of the same code */

/* ----------------------------------------------------------- kernel_eval.c
 * Runs a kernel on host literals, one point at a time, each scalar op
 * through the reference evaluator: slow, and the oracle that checks the
 * lowering (every corpus fusion lowered and run must match eval_module). */
bool kernel_eval(const Kernel *k, Literal *const *inputs, Literal **outputs, Status *st);

/* -------------------------------------------------------- kernel_complex.c
 * Complex numbers in pairs. kernel_split_complex rewrites a kernel with c64
 * (c128) buffers or values into one on f32 (f64) only:
 *   - a complex buffer of dims [d0..dn) is a real buffer [d0..dn, 2] whose
 *     new dimension is innermost (component 0 real, 1 imaginary): the same
 *     bytes, so bindings and layouts are unchanged;
 *   - a complex load, store or accumulator becomes two, one per component;
 *   - add, subtract, negate, select, complex, real, imag, convert and
 *     compare EQ/NE work part by part; multiply and divide follow C's
 *     Annex G (libgcc), abs is hypot; sqrt, rsqrt, sign, exp, expm1, log,
 *     log1p, sin, cos, tan, tanh, logistic, cbrt and power are written with
 *     real ops (exp, expm1, log, log1p, sine, cosine, atan2, sqrt), with the
 *     evaluator's (C's complex.h) special cases where they matter.
 * A loop whose buffers are all complex of the loop's shape, read at the
 * loop's index, with only add, subtract, negate and complex converts, is
 * rewritten more simply: its innermost extent doubles (c64[n] is f32[2n])
 * and each op stays one op, so the loop vectorizes.
 * The result means what the original means (kernel_eval on both agrees,
 * within rounding); a code generator needs real ops only. NULL with
 * STATUS_UNSUPPORTED for what has no pair form (none in verified HLO but a
 * buffer already of rank 16). The caller frees the result. */
bool kernel_has_complex(const Kernel *k);
Kernel *kernel_split_complex(const Kernel *k, Status *st);

/* ------------------------------------------------------- kernel_analysis.c
 * Whether a reduction may be split among threads or vector lanes, each
 * folding a part of the reduced space into its own accumulators, the
 * partials combined afterwards: every accumulator must be written by one
 * plain combiner (add, multiply, maximum, minimum, and, or) of itself and
 * a value free of accumulators, start at that combiner's identity, and be
 * read by nothing else inside the loop. Both code generators ask these
 * questions here, and the form of each access (below). */

/* An initial value known when compiling, as a KOP_CONSTANT: a kernel
 * constant, or a load of a scalar input that is a constant of the module
 * (an unfused reduce's init operand). */
bool kernel_init_value(const Kernel *k, const KernelOp *init, KernelOp *out);
/* Whether constant c is op's identity (the op table's identity column). */
bool kernel_constant_is_identity(const KernelOp *c, Opcode op);
/* dependent[i] (op_count entries): op i reads an accumulator, directly or
 * through its arguments. */
void kernel_mark_acc_dependent(const Kernel *k, bool *dependent);
/* Accumulator a's combiner: its non-PRE writes are all OP(acc a, v) with v
 * not dependent, and its PRE writes OP's identity. */
bool kernel_acc_combiner(const Kernel *k, const bool *dependent, int a, Opcode *combiner);
/* Whether the only ops reading a dependent value are the combiners,
 * reading the accumulator itself. */
bool kernel_only_combiners_read(const Kernel *k, const bool *dependent);
/* All of the above for every accumulator of k (none a pred): the
 * combiners in combiners[0..acc_count). */
bool kernel_reduction_splits(const Kernel *k, Opcode *combiners);

/* How a load or store moves along the index a code generator's innermost
 * loop walks: a loop kernel's index of dimension walk_dim, or, in a
 * REDUCE or ROW phase, that phase's index of reduced dimension walk_dim.
 * Both code generators vectorize along it and ask here which accesses a
 * vector can read or write at one address per row:
 *   CONTIGUOUS  the walked index, plus a constant, on the buffer's
 *               stride-1 dimension, and fixed indices elsewhere: the
 *               address is a row pointer plus the walked index
 *   INVARIANT   fixed indices only: one element for the whole row
 *   OTHER       the rest (a gather, the walk on a strided dimension of a
 *               transpose, on two dimensions, a PRE or POST access)
 * An index is fixed when it is a constant, another loop index (loop
 * kernels), or a PRE or loop-invariant value (phases); whatever indexes a
 * dimension of extent 1 is 0. What else an access must be (its type, its
 * extents, the form of its indices) is the code generator's policy. */
typedef enum KernelAccessKind { KACCESS_OTHER, KACCESS_CONTIGUOUS, KACCESS_INVARIANT } KernelAccessKind;
typedef struct KernelAccessForm {
  KernelAccessKind kind;
  int dim;         /* CONTIGUOUS: the buffer dimension the walked index runs on; else -1 */
  int64_t offset;  /* CONTIGUOUS: the constant added to the walked index there */
} KernelAccessForm;
KernelAccessForm kernel_access_form(const Kernel *k, int i, int walk_dim);

#endif
