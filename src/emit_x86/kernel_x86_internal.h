/* Shared between the files of the kernel compiler (kernel_x86*.c): the
 * compilation context, where each kernel value lives, and the fixed
 * registers of the generated function. Not part of the public API. */
#ifndef AXLE_EMIT_X86_KERNEL_X86_INTERNAL_H
#define AXLE_EMIT_X86_KERNEL_X86_INTERNAL_H

#include "emit_x86/kernel_x86.h"
#include "emit_x86/x86_encode.h"

/* Registers with one job for the whole function. The allocatable ones are
 * listed in kernel_x86_regalloc.c; rax, rcx, rdx, r11 and xmm13..15 are
 * scratch inside one op's code and never hold a value across ops. */
enum {
  KX_BUFFERS = X86_RBX,   /* the buffers argument */
  KX_ROW = X86_R12,       /* the current row */
  KX_ROW_END = X86_R13,   /* first_row + row_count */
  KX_INNER = X86_R14,     /* innermost loop index (loop dim or reduced dim) */
  KX_SCRATCH_ADDRESS = X86_R11,
};
/* Vector registers 0..12 hold the kernel's values (kernel_x86_regalloc.c). */
enum { KX_VECTOR_VALUE_REGISTERS = 13 };
#define KX_XMM_SCRATCH0 x86_xmm(15)
#define KX_XMM_SCRATCH1 x86_xmm(14)
#define KX_XMM_SCRATCH2 x86_xmm(13)

typedef enum ValueClass { VALUE_NONE, VALUE_GPR, VALUE_XMM } ValueClass;

/* Where a value lives for its whole life: a register, or its stack slot. */
typedef struct ValueHome {
  ValueClass value_class;
  bool spilled;
  X86Reg reg;             /* 64-bit GPR or xmm */
  int spill;              /* spilled: its number among the spilled values */
} ValueHome;

typedef enum KernelSplit { SPLIT_NONE, SPLIT_PARTIAL, SPLIT_COMBINE } KernelSplit;

typedef struct KernelX86 {
  const Kernel *k;
  const CpuFeatures *cpu;
  X86Buffer *cb;
  ValueHome *homes;       /* one per op: of the code being emitted */
  ValueHome *scalar_homes, *vector_homes; /* the scalar code's, the SIMD loop's */
  ValueHome *second_homes; /* an interleaved loop's second vector's (vector_homes moved up a bank) */
  int inner_offset;        /* bytes past r14 of the vector being emitted (the second: one vector) */
  bool allocating_vector; /* the allocation for the SIMD loop: vector forms in vector registers */
  int *last_use;          /* one per op: the last op reading it (intervals) */
  /* Stack slots, 8 bytes each, at [rsp + 8*slot]. */
  int index_slot, rindex_slot, acc_slot, acc_next_slot, value_slot;
  int vector_slot;        /* 8 slots (64 bytes) per spilled value: vectors */
  int spill_count;
  int scratch_slot;
  int math_slot;          /* KX_MATH_SLOTS slots (KX_VECTOR_MATH_SLOTS with lanes): the math functions' values */
  int slot_count;
  /* The SIMD body (kernel_x86_vector.c): lanes is 0 while the scalar code
   * is emitted; forms holds each op's LaneForm. */
  int lanes;
  int vectorized_lanes;   /* what the kernel's vector loop uses, 0 if none */
  bool vector_f64;        /* its lanes are f64 (a kernel of f64 values only), not f32 */
  /* A vectorized sum: its ACC_READ, add and ACC_WRITE ops, and 16 f32
   * partial sums at [rsp + 8*partial_slot]. */
  int reduce_read, reduce_combine, reduce_write;
  int partial_slot;
  /* Below avx512, the registers of 0..12 (a bit each) that the loop being
   * emitted keeps its partial sums in: no vector math value goes there. */
  uint32_t loop_vector_registers;
  /* ...and those it keeps for itself besides (the avx2 fast max/min
   * loop's NaN lanes): no vector math value goes there either. */
  uint32_t loop_reserved_registers;
  /* Row kernels: the phase being classified or emitted, and each phase's
   * lanes (0: scalar); reduce kernels use phase 0. */
  int phase;
  int phase_lanes[AXLE_MAX_RANK];
  /* A long sum split into chunks (kernel_x86.c): SPLIT_PARTIAL code sums
   * one chunk, its range of reduced dimension 0 (r14 when it is the only
   * one) in [rsp + 8*chunk_slot] (first, end); SPLIT_COMBINE code folds
   * the chunks' results into the accumulator. */
  KernelSplit split;
  bool tail_masked;       /* the SIMD body runs the tail: k2 masks its loads and stores */
  int64_t split_chunks, split_chunk;
  int chunk_slot;
  uint8_t *forms;
  /* The vector math's constants after the code, each 32-bit pattern once
   * (kernel_x86_math_lanes.c): read by broadcast, never stored per trip. */
  uint32_t *lane_constants;
  X86Label *lane_constant_labels;
  int lane_constant_count, lane_constant_capacity;
  bool math_dry_run;      /* a vector math function's dry run into a scratch buffer */
  /* Row pointers (kernel_x86_row_pointers.c): a SIMD phase loop's load or store
   * at [row-invariant indices..., the inner reduced index] reads its row's
   * address from slot address_slots[i] (-1: none), set once before the
   * loop, and adds r14: no index arithmetic per trip. */
  int *address_slots;
  int address_slot, address_count;
  /* A loop kernel's row accesses take row pointers too (set before its
   * vector loop over each row); the ops that only computed their indices
   * are left out of that loop. */
  bool *addressing_only;
  /* The row buffer (schedule reuse_in_frame): a row and 64 bytes of
   * frame from row_buffer_slot, its 64-byte-aligned start in slot
   * row_buffer_pointer_slot (set at entry). streaming: the ROW loop
   * being emitted stores non-temporally. */
  int row_buffer_slot, row_buffer_pointer_slot;
  /* In a phase's SIMD loop: the row pointer of address slot
   * pointer_register_slot[r] held in pointer_registers[r] (rbp, r15: no
   * value's home, callee-saved), so its accesses need no reload; -1: none. */
  int pointer_register_slot[2];
  /* schedule in_next_row: the ROW phase's divisor (f32) in slot
   * scaling_slot, its output row's address in the next (0: no row handed
   * on yet), for the next row's loop or the end of the range. */
  int scaling_slot;
  bool streaming;
  /* Tables of minifloat values after the code (kernel_x86_narrow.c). */
  bool narrow_table_used[TYPE_COUNT];
  X86Label narrow_tables[TYPE_COUNT];
  /* The schedule it follows (kernel_x86_schedule.c), and the ROW phase's
   * ops it need not emit (dead: they only feed a value read back from
   * the output, schedule.phases[].reuse_as). */
  KernelSchedule schedule;
  uint8_t *dead;
  /* KSCHED_COLUMNS (kernel_x86_columns.c): the whole row body runs SIMD
   * across vectorized_lanes adjacent output points; accumulator a lives
   * in 64 bytes at [rsp + 8*column_acc_slot + 128a], its next value 64
   * bytes after, or (column_acc_registers) in zmm28 + a, written in
   * place. */
  bool columns, column_acc_registers;
  int column_acc_slot;
  Status *st;
} KernelX86;

/* kernel_x86_schedule.c: the policy. Fills x->schedule (and x's forms,
 * lanes and split chunk size, which the emitter reads);
 * kernel_x86_mark_dead fills x->dead from x->schedule. */
enum { SPLIT_CHUNK = 1 << 16, SPLIT_MAX_ROWS = 64 };
/* A row kernel's buffers of LARGE_BYTES or more are taken to be past the
 * last-level cache (32 MiB on the machines measured): its output is
 * stored past the caches, a reused row value of up to
 * ROW_BUFFER_MAX_BYTES going through a buffer in the frame (L1/L2)
 * instead, and its input's next row is prefetched
 * (kernel_x86_schedule.c). */
enum { ROW_BUFFER_MAX_BYTES = 32 << 10, LARGE_BYTES = 32 << 20 };
void kernel_x86_plan(KernelX86 *x);
void kernel_x86_mark_dead(KernelX86 *x);
/* The ROW phase's one store, or -1. */
int kernel_x86_row_store(const Kernel *k);
/* kernel_x86_vector_forms.c: whether load or store i of a REDUCE or ROW
 * phase is a row access (its address a row pointer plus the inner reduced
 * index: kernel_access_form CONTIGUOUS at offset 0), and the dimension of
 * its buffer the inner reduced index walks (else -1). */
bool kernel_x86_is_row_access(const Kernel *k, int i);
int kernel_x86_row_access_dim(const Kernel *k, int i);

/* kernel_x86_homes.c (below every other file here): a value's register
 * class, the stack slot `slot`, and moving a value between its home
 * (register or stack slot) and a scratch register; canonicalize re-extends
 * r from t's width. */
ValueClass kernel_x86_value_class_of(ElementType t);
X86Operand kernel_x86_slot(int slot, int size);
/* A value as an operand: its register, or its stack slot. */
X86Operand kernel_x86_value_operand(const KernelX86 *x, int v);
void kernel_x86_gpr_fetch(KernelX86 *x, X86Reg into, int v);
void kernel_x86_gpr_define(KernelX86 *x, int v, X86Reg from);
void kernel_x86_xmm_fetch(KernelX86 *x, X86Reg into, int v);
void kernel_x86_xmm_define(KernelX86 *x, int v, X86Reg from);
void kernel_x86_canonicalize(KernelX86 *x, X86Reg r, ElementType t);

/* kernel_x86_regalloc.c: live intervals, and a home per value. */
bool kernel_x86_allocate(KernelX86 *x);

/* kernel_x86_ops.c: the scalar code of one kernel op; false (st set) when
 * the op or its type has no code yet. kernel_x86_note_origin: a listing
 * note naming op i's HLO instruction (and its op_name and source line)
 * when it differs from *last. */
bool kernel_x86_emit_scalar_op(KernelX86 *x, int i);
void kernel_x86_note_origin(KernelX86 *x, int i, const Instruction **last);
/* kernel_x86_narrow.c: f16, bf16 and the minifloats live as f32 values;
 * decode widens the bits in eax to f32 in scratch0, encode rounds scratch0
 * to the type's bits in edx (quiet_nan: as an op's result, not a copy's),
 * round does both; the tables go after the function's code. All use rax,
 * rcx, rdx, r11 and the xmm scratch registers. */
bool kernel_x86_type_is_narrow(ElementType t);
/* f8e5m2, f8e4m3, f8e3m4: NaNs that carry their encoding in the f32 payload */
bool kernel_x86_minifloat_nan_has_bits(ElementType t);
float kernel_x86_narrow_value(ElementType t, double v);
void kernel_x86_emit_narrow_decode(KernelX86 *x, ElementType t);
void kernel_x86_emit_narrow_encode(KernelX86 *x, ElementType t, bool quiet_nan);
void kernel_x86_emit_narrow_round(KernelX86 *x, ElementType t);
bool kernel_x86_narrow_rounds_after(const KernelOp *op);
void kernel_x86_emit_narrow_tables(KernelX86 *x);
/* kernel_x86_remainder.c: float remainder (C's fmod), exact. */
void kernel_x86_emit_float_remainder(KernelX86 *x, int i);
/* kernel_x86_integer.c: shifts, mulhi, power, popcnt and
 * count-leading-zeros on the integer types. */
bool kernel_x86_integer_handles(Opcode op);
bool kernel_x86_emit_integer(KernelX86 *x, int i);
/* kernel_x86_convert.c: compare, select, convert, bitcast-convert. */
bool kernel_x86_emit_hlo_mixed(KernelX86 *x, int i);
bool kernel_x86_element_address(KernelX86 *x, int i, int buffer, const Shape *s, int first, X86Operand *out);
/* Element strides of a kernel buffer in its layout (kernel_x86_ops.c):
 * without a layout, row-major. */
void kernel_x86_layout_strides(const Shape *s, int64_t *stride);
/* The same address without the index of dimension skip_dim (0 there). */
bool kernel_x86_element_address_without(KernelX86 *x, int i, int buffer, const Shape *s, int first, int skip_dim,
                                        X86Operand *out);
/* kernel_x86_vector_forms.c: numbers the loads and stores that take a
 * row pointer (address_slots). */
void kernel_x86_assign_row_pointers(KernelX86 *x);
/* A loop kernel's: whether load or store i is a row access of its vector
 * loop (kernel_access_form CONTIGUOUS along the inner loop index, at any
 * constant offset); kernel_x86_row_pointers.c: set each one's row pointer
 * before the loop. */
bool kernel_x86_is_loop_row_access(const KernelX86 *x, int i);
/* An s64 index, a constant or a sum of them: what a row access's address
 * is made of. */
bool kernel_x86_index_like(const KernelOp *op);
/* Marks the index ops (kernel_x86_index_like) whose every use is an index
 * of a row access (row_access[i]) or of such an op: the vector loop leaves
 * them out, the row pointers holding what they computed. */
void kernel_x86_mark_addressing_only(const Kernel *k, const bool *row_access, bool *addressing_only);
/* A loop kernel's interleaved SIMD loop (schedule unroll 2): each vector
 * value's register for the first vector is 0..5, the second's 6 above it. */
enum { KX_INTERLEAVED_BANK = KX_VECTOR_VALUE_REGISTERS / 2 };
ValueHome *kernel_x86_second_homes(const KernelX86 *x);
/* kernel_x86_row_pointers.c: each row access's address set once before
 * its SIMD loop (a row kernel's phase, a loop kernel's row), read in the
 * loop as that pointer plus r14; the first two held in rbp and r15. */
int kernel_x86_reuse_store(const KernelX86 *x);
bool kernel_x86_reuse_in_frame(const KernelX86 *x);
X86Operand kernel_x86_row_pointer_slot(const KernelX86 *x, int i);
bool kernel_x86_index_only_addresses_rows(const KernelX86 *x, int i);
bool kernel_x86_emit_row_pointers(KernelX86 *x);
bool kernel_x86_emit_loop_row_pointers(KernelX86 *x);
void kernel_x86_forget_pointer_registers(KernelX86 *x);
void kernel_x86_load_pointer_registers(KernelX86 *x);
X86Reg kernel_x86_row_pointer(KernelX86 *x, int i);
/* kernel_x86_math.c: an f32 math function (mathref_*) of `input` (or of
 * `left`, `right`) in scalar code, leaving the result in *result (a
 * scratch xmm); false (st set) for a function or type it has no code for.
 * kernel_x86_is_math: whether op is one of those functions. */
bool kernel_x86_is_math(Opcode op);
bool kernel_x86_emit_math(KernelX86 *x, int i, X86Operand input, X86Reg *result);
bool kernel_x86_emit_math_binary(KernelX86 *x, int i, X86Operand left, X86Operand right, X86Reg *result);
/* The functions with a vector form (f32 lanes, avx2 and up with FMA), and
 * that form: op i's function of the vector `left` (and `right`, binary
 * ones) into vector register number `into`, in the SIMD loop (x->lanes
 * set). */
bool kernel_x86_math_has_lanes(const KernelX86 *x, Opcode op);
bool kernel_x86_emit_vector_math(KernelX86 *x, int i, X86Operand left, X86Operand right, int into);
/* kernel_x86_lane_constants.c: the label of the 4 bytes `bits` in the
 * constant pool after the code, and the pool itself (emit_function
 * writes it after the ret). */
X86Label kernel_x86_lane_constant(KernelX86 *x, uint32_t bits);
void kernel_x86_emit_lane_constants(KernelX86 *x);
/* How many times the pool holds each constant (4 at sse4, 8 at avx2, 1):
 * a memory operand of up to 4 times that many bytes reads it in every lane. */
int kernel_x86_lane_constant_copies(const KernelX86 *x);
/* Any other math function in the SIMD loop: lane by lane through the
 * scalar code. left, right (unused for a unary op) and into are vector
 * registers of the loop's width. */
bool kernel_x86_is_lane_math(const KernelX86 *x, Opcode op);
bool kernel_x86_emit_math_per_lane(KernelX86 *x, int i, X86Operand left, X86Operand right, X86Operand into);

/* SIMD along the innermost dimension: kernel_x86_vector_forms.c decides
 * which ops run in lanes and how, kernel_x86_vector.c emits them.
 * How each value behaves across the lanes of one vector iteration: */
typedef enum LaneForm {
  LANE_UNIFORM,     /* the same in every lane: computed once, in scalar code */
  LANE_INNER,       /* s64 innermost index + a uniform value: lane 0's in scalar code */
  LANE_VECTOR,      /* f32 (or f64), one value per lane, in a vector register */
  LANE_BROADCAST,   /* an f32 load from a uniform address, read into every lane */
  LANE_PER_LANE,    /* an integer that varies otherwise: only a gather's index */
  LANE_GATHER,      /* an f32 load lane by lane (its indices recomputed per lane) */
  LANE_MASK,        /* pred of an f32 compare: all-ones lanes in a vector register */
} LaneForm;
/* Lanes for this ISA (4, 8, 16 f32; 4, 8 f64 from avx2 in a kernel whose
 * float values are all f64), or 0 when some op cannot be vectorized (then
 * the kernel runs as scalar code); fills x->forms and x->vector_f64. */
int kernel_x86_vector_lanes(KernelX86 *x);
/* Whether op i is computed by the SIMD code (a STORE: its value). */
bool kernel_x86_op_is_vector(const KernelX86 *x, int i);
bool kernel_x86_emit_vector_op(KernelX86 *x, int i);
/* The code of op i: its vector form (above) when x->lanes is set and the
 * op is vector, else kernel_x86_emit_scalar_op; false (st set) when the
 * op or its type has no code yet. */
bool kernel_x86_emit_op(KernelX86 *x, int i);
/* Whether op's math function runs in f32 lanes (kernel_x86_math_lanes.c). */
bool kernel_x86_is_vector_math(const KernelX86 *x, Opcode op);
/* A reduce kernel whose one f32 accumulator sums elements loaded along the
 * innermost reduced dimension: the lanes, or 0 (then it stays scalar). */
int kernel_x86_vector_reduce_lanes(KernelX86 *x);
/* Whether op belongs to the loop being vectorized: the REDUCE block of a
 * reduce kernel, phase x->phase of a row kernel. */
bool kernel_x86_in_vector_loop(const KernelX86 *x, const KernelOp *op);
/* Finds acc = add/maximum/minimum(acc, element) in that loop (sets
 * x->reduce_read, reduce_combine, reduce_write); false when there is none. */
bool kernel_x86_find_sum(KernelX86 *x);
/* The innermost reduce loop over whole groups of REDUCE_PARTIALS elements,
 * leaving r14 at the first element it did not cover. */
bool kernel_x86_emit_vector_reduce(KernelX86 *x, int lanes);
/* Whether a loop kernel's tail may run as its SIMD body under a lane mask
 * (AVX-512, and no gather, whose lanes past the end would read outside). */
bool kernel_x86_vector_tail_maskable(const KernelX86 *x);
/* acc = reducer(acc, partial) for the vectorized sum's accumulator (and
 * its next value), NaN first for maximum and minimum. */
void kernel_x86_emit_acc_combine(KernelX86 *x, X86Operand partial);
/* Phase x->phase of a row kernel: a REDUCE phase with one f32
 * add/maximum/minimum accumulator (the partial sums above), or the ROW
 * phase as a SIMD loop; the lanes, or 0 (then the phase stays scalar). */
int kernel_x86_vector_phase_lanes(KernelX86 *x);
/* The ROW phase's SIMD loop over whole vectors, leaving r14 at the first
 * element it did not cover. */
bool kernel_x86_emit_vector_row(KernelX86 *x, int lanes);
/* kernel_x86_row_scaling.c: the ROW phase run in the next row's first
 * loop (schedule in_next_row). At entry no row is handed on; after the
 * phase before the ROW phase a row hands on its divisor and output row;
 * the next row's first loop (kernel_x86_scales_previous_row) divides one
 * vector of it at r14 beside each of its own (the scaling vector, in
 * scratch registers), or in a loop of its own (the scaling loop); after
 * the rows the last row handed on is divided. The loops' copy with the
 * vectors runs where a row is handed on (kernel_x86_emit_unless_row_handed_on
 * jumps to the copy without them). */
void kernel_x86_clear_row_scaling(KernelX86 *x);
void kernel_x86_hand_on_row_scaling(KernelX86 *x);
bool kernel_x86_scales_previous_row(const KernelX86 *x);
void kernel_x86_emit_unless_row_handed_on(KernelX86 *x, X86Label skip);
void kernel_x86_emit_row_scaling_vector(KernelX86 *x);
void kernel_x86_emit_row_scaling_loop(KernelX86 *x);
void kernel_x86_emit_last_row_scaling(KernelX86 *x);
/* A gather recomputes its index values lane by lane, so none of their
 * registers may be reused before it: their lives extend to the gather
 * (kernel_x86_mark_index_slice marks them, in marked[0..i)). */
void kernel_x86_extend_gather_lives(KernelX86 *x);
void kernel_x86_mark_index_slice(const KernelX86 *x, int i, bool *marked);
enum { REDUCE_PARTIALS = 16 };
enum { KX_MATH_SLOTS = 512 };
/* A kernel with a SIMD loop has a larger math area: the vector math
 * (kernel_x86_math_lanes.c) holds 64-byte values at avx512. */
enum { KX_VECTOR_MATH_SLOTS = 1536 };

/* kernel_x86_columns.c: the lanes of the column strategy for a reduce or
 * row kernel (each lane one output point along the contiguous innermost
 * loop dim, every reduced index uniform), or 0; fills x->forms. The
 * accumulators' homes, and copying them (next into the accumulator, or
 * back with `reset`) in the SIMD code. kernel_x86_op_form (vector_forms.c):
 * op i's LaneForm as in a loop kernel, or -1. */
int kernel_x86_column_lanes(KernelX86 *x);
/* A column group's load or store whose lanes' elements lie apart, not
 * side by side (a [rows, n] input read down its rows): the bytes from
 * one lane's element to the next, or 0 for a contiguous or uniform one. */
int64_t kernel_x86_column_stride(const KernelX86 *x, int i);
X86Operand kernel_x86_column_acc(const KernelX86 *x, int acc, bool next);
void kernel_x86_column_acc_copy(KernelX86 *x, bool reset);
int kernel_x86_op_form(const KernelX86 *x, int i);
enum { KX_COLUMN_ACC_SLOTS = 16 };

#endif
