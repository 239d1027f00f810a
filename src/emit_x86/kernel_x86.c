/* The kernel compiler's driver: the function's frame, the loops around
 * the body's blocks, the listing, and running rows on the thread pool.
 * The body's ops go through kernel_x86_emit_op (kernel_x86_vector.c): their
 * vector form in a SIMD loop, else their scalar code (kernel_x86_ops.c /
 * kernel_x86_convert.c); where their values live is kernel_x86_regalloc.c.
 *
 * The generated function, for a loop kernel of rank R (rows = the product
 * of dims[0..R-1), inner = dims[R-1]):
 *
 *   for row in [first_row, first_row + row_count):
 *     index[0..R-1) = row split over dims[0..R-1)   (stack slots)
 *     for r14 in steps of lanes while r14 + lanes <= inner: PRE as SIMD
 *     for r14 in [what is left, inner): PRE as scalar code
 *
 * (the SIMD loop only where kernel_x86_vector.c finds a vector form), and
 * for a reduce kernel (rows = every output point):
 *
 *   for row ...: index[0..R) = row split; PRE;
 *     for rindex[0] ... for r14 in [0, reduce_dims[last]): REDUCE; acc = next
 *     POST
 *
 * The column strategy (kernel_x86_columns.c) runs that row body for
 * `lanes` rows at once, SIMD across them, where the group stays inside
 * the innermost loop dim and the rows given; other rows run alone.
 *
 * Each output value's reduction runs inside its own row, in an order fixed
 * by the shape (the evaluator's index order, or kernel_x86_vector.c's 16
 * partial results), so the result does not depend on how rows are split
 * among threads. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/jit_memory.h"
#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

struct CompiledKernel {
  JitCode code;
  X86Buffer listing;      /* kept for kernel_x86_print_listing */
  KernelX86Function *function;
  /* A split sum (split_chunks > 0): function is the SPLIT_PARTIAL code,
   * combine the SPLIT_COMBINE code, with a temporary after the outputs. */
  KernelX86Function *combine;
  size_t combine_offset;  /* of combine in the code */
  int64_t split_chunks;
  int buffer_count;
  int64_t row_count;
  int64_t elements_per_row;
  int lanes;              /* of the vector loop; 0 for scalar code only */
  int owners;             /* kernel_x86_share adds one; the last kernel_x86_free frees */
};

static X86Operand reg(X86Reg r) { return x86_reg(r); }

static int64_t product(const int64_t *dims, int n) {
  int64_t p = 1;
  for (int d = 0; d < n; d++) p *= dims[d];
  return p;
}

/* Splits the row number in rax into the stack slots of dims [0, count). */
static void emit_row_split_rax(KernelX86 *x, int count) {
  for (int d = count - 1; d >= 0; d--) {
    if (x->k->dims[d] == 1) {
      EMIT(X86_MOV, kernel_x86_slot(x->index_slot + d, 8), x86_imm(0));
      continue;
    }
    EMIT(X86_XOR, reg(X86_EDX), reg(X86_EDX));
    EMIT(X86_MOV, reg(X86_RCX), x86_imm(x->k->dims[d]));
    EMIT(X86_DIV, reg(X86_RCX));
    EMIT(X86_MOV, kernel_x86_slot(x->index_slot + d, 8), reg(X86_RDX));
  }
}

static void emit_row_split(KernelX86 *x, int count) {
  EMIT(X86_MOV, reg(X86_RAX), reg(KX_ROW));
  emit_row_split_rax(x, count);
}

/* The ops of one block (of one phase, for the looped blocks of a row kernel). */
static bool emit_block(KernelX86 *x, KernelBlock block, int phase) {
  const Instruction *last = NULL;
  static const char *const names[] = {"pre", "reduce", "row", "post"};
  if (x->k->kind == KERNEL_ROW && (block == KBLOCK_REDUCE || block == KBLOCK_ROW))
    x86_listing_note(x->cb, "%s, phase %d", names[block], phase);
  else
    x86_listing_note(x->cb, "%s", names[block]);
  for (int i = 0; i < x->k->op_count; i++) {
    const KernelOp *op = &x->k->ops[i];
    bool looped = op->block == KBLOCK_REDUCE || op->block == KBLOCK_ROW;
    if (op->block != block || (looped && op->phase != phase)) continue;
    if (x->lanes && x->addressing_only[i]) continue; /* in the row pointers */
    kernel_x86_note_origin(x, i, &last);
    if (!kernel_x86_emit_op(x, i)) return false;
  }
  return true;
}

/* The interleaved loop's trip (schedule unroll 2): two vectors, at r14
 * and one vector further, each op of the first followed by the same op of
 * the second, so that the two dependent chains overlap in the out-of-order
 * window; the second's values live a register bank up. */
static bool emit_interleaved_trip(KernelX86 *x) {
  const Instruction *last = NULL;
  x86_listing_note(x->cb, "pre, two vectors interleaved");
  for (int i = 0; i < x->k->op_count; i++) {
    if (x->k->ops[i].block != KBLOCK_PRE || x->addressing_only[i]) continue;
    kernel_x86_note_origin(x, i, &last);
    for (int v = 0; v < 2; v++) {
      x->homes = v ? x->second_homes : x->vector_homes;
      x->inner_offset = v * x->lanes * 4;
      bool ok = kernel_x86_emit_op(x, i);
      x->homes = x->vector_homes;
      x->inner_offset = 0;
      if (!ok) return false;
    }
  }
  return true;
}

/* Whether a column group's trip of phase p also runs phase p + 1's
 * (schedule in_previous_loop; never in the scalar rows). */
static bool merges_next_phase(const KernelX86 *x, int p) {
  return x->columns && x->lanes && p + 1 < x->k->phase_count && x->schedule.phases[p + 1].in_previous_loop;
}

/* One pass over the reduced dims (the only one of a reduce kernel, one
 * phase of a row kernel): rindex slots for the outer reduced dims, r14 for
 * the innermost; after each trip the accumulators take their next values. */
static bool emit_reduce_nest(KernelX86 *x, int phase) {
  const Kernel *k = x->k;
  if (product(k->reduce_dims, k->reduce_rank) == 0) return true;
  KernelBlock block = k->kind == KERNEL_ROW ? k->phase_blocks[phase] : KBLOCK_REDUCE;
  X86Label heads[AXLE_MAX_RANK + 1];
  int n = k->reduce_rank;
  int lanes = x->phase_lanes[phase];
  x->phase = phase;
  /* one chunk of a split sum: reduced dimension 0 over the chunk's range */
  bool chunked = x->split == SPLIT_PARTIAL;
  for (int d = 0; d < n - 1; d++) {
    heads[d] = x86_label_new(x->cb);
    if (d == 0 && chunked) {
      EMIT(X86_MOV, reg(X86_RAX), kernel_x86_slot(x->chunk_slot, 8));
      EMIT(X86_MOV, kernel_x86_slot(x->rindex_slot, 8), reg(X86_RAX));
    } else {
      EMIT(X86_MOV, kernel_x86_slot(x->rindex_slot + d, 8), x86_imm(0));
    }
    x86_label_bind(x->cb, heads[d]);
  }
  int64_t inner = n > 0 ? k->reduce_dims[n - 1] : 1;
  /* the vector loop covers whole vectors (ROW) or groups of partials */
  int64_t step = block == KBLOCK_ROW ? lanes : REDUCE_PARTIALS;
  if (lanes && block == KBLOCK_ROW && !kernel_x86_emit_vector_row(x, lanes)) return false;
  if (lanes && block != KBLOCK_ROW && !kernel_x86_emit_vector_reduce(x, lanes)) return false;
  if (!lanes) EMIT(X86_XOR, reg(X86_R14D), reg(X86_R14D));
  if (!lanes || inner % step != 0) {
    /* the scalar loop: every element, or the tail after the vectors */
    X86Label head = x86_label_new(x->cb);
    x86_label_bind(x->cb, head);
    if (!emit_block(x, block, phase)) return false;
    if (merges_next_phase(x, phase)) {
      x->phase = phase + 1;
      if (!emit_block(x, KBLOCK_ROW, phase + 1)) return false;
      x->phase = phase;
    }
    if (x->columns && x->lanes) kernel_x86_column_acc_copy(x, false);
    for (int a = 0; a < k->acc_count && !(x->columns && x->lanes); a++) {
      EMIT(X86_MOV, reg(X86_RAX), kernel_x86_slot(x->acc_next_slot + a, 8));
      EMIT(X86_MOV, kernel_x86_slot(x->acc_slot + a, 8), reg(X86_RAX));
    }
    if (n > 0) {
      EMIT(X86_INC, reg(KX_INNER));
      EMIT(X86_CMP, reg(KX_INNER), x86_imm(inner));
      EMIT(X86_JL, x86_rel(head));
    }
  }
  for (int d = n - 2; d >= 0; d--) {
    X86Operand slot = kernel_x86_slot(x->rindex_slot + d, 8);
    EMIT(X86_INC, slot);
    if (d == 0 && chunked) {
      EMIT(X86_MOV, reg(X86_RAX), slot);
      EMIT(X86_CMP, reg(X86_RAX), kernel_x86_slot(x->chunk_slot + 1, 8));
    } else {
      EMIT(X86_CMP, slot, x86_imm(k->reduce_dims[d]));
    }
    EMIT(X86_JL, x86_rel(heads[d]));
  }
  return true;
}

/* Accumulators a REDUCE block does not write keep their value: next must
 * start equal to it. */
static void emit_acc_next_reset(KernelX86 *x) {
  if (x->columns && x->lanes) {
    kernel_x86_column_acc_copy(x, true);
    return;
  }
  for (int a = 0; a < x->k->acc_count; a++) {
    EMIT(X86_MOV, reg(X86_RAX), kernel_x86_slot(x->acc_slot + a, 8));
    EMIT(X86_MOV, kernel_x86_slot(x->acc_next_slot + a, 8), reg(X86_RAX));
  }
}

/* ---- a long sum split into chunks ----
 *
 * A reduce kernel with few output points and a long vectorized sum (an
 * f32[16M] summed to a scalar) would run on one thread: rows are output
 * points. Its innermost reduced range is cut into chunks of SPLIT_CHUNK
 * elements (the last takes the remainder), a fixed function of the shape.
 * The SPLIT_PARTIAL function's rows are (output point, chunk) tasks: each
 * sums its chunk from the reducer's identity into a temporary (the buffer
 * after the outputs); the SPLIT_COMBINE function then folds each point's
 * chunks into the accumulator in chunk order and runs POST. The result is
 * the same at every thread count; like the 16 partial sums, it is within
 * rounding of the evaluator's sequential sum. */
static X86Operand temporary_pointer(const KernelX86 *x) {
  return x86_mem(8, KX_BUFFERS, 8 * (x->k->input_count + x->k->output_count));
}

/* The chunk's range of reduced dimension 0: first = chunk * split_chunk,
 * end = first + split_chunk, or the dimension's end for the last chunk.
 * The chunk number is in rdx. */
static void emit_chunk_range(KernelX86 *x) {
  X86Label bounded = x86_label_new(x->cb);
  EMIT(X86_IMUL, reg(X86_RCX), reg(X86_RDX), x86_imm(x->split_chunk));
  EMIT(X86_MOV, kernel_x86_slot(x->chunk_slot, 8), reg(X86_RCX));
  EMIT(X86_ADD, reg(X86_RCX), x86_imm(x->split_chunk));
  EMIT(X86_CMP, reg(X86_RDX), x86_imm(x->split_chunks - 1));
  EMIT(X86_JNE, x86_rel(bounded));
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(x->k->reduce_dims[0]));
  x86_label_bind(x->cb, bounded);
  EMIT(X86_MOV, kernel_x86_slot(x->chunk_slot + 1, 8), reg(X86_RCX));
}

/* The chunk's sum (accumulator a) to its place in the temporary. */
static bool emit_chunk_store(KernelX86 *x, int a) {
  EMIT(X86_MOV, reg(X86_RAX), temporary_pointer(x));
  EMIT(X86_MOVSS, reg(KX_XMM_SCRATCH0), kernel_x86_slot(x->acc_slot + a, 4));
  EMIT(X86_MOVSS, x86_mem_index(4, X86_RAX, KX_ROW, 4, 0), reg(KX_XMM_SCRATCH0));
  return true;
}

static bool emit_chunk_sum(KernelX86 *x) {
  const Kernel *k = x->k;
  x86_listing_note(x->cb, "one chunk of a split sum");
  EMIT(X86_MOV, reg(X86_RAX), reg(KX_ROW));
  EMIT(X86_XOR, reg(X86_EDX), reg(X86_EDX));
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(x->split_chunks));
  EMIT(X86_DIV, reg(X86_RCX));
  emit_chunk_range(x);
  emit_row_split_rax(x, k->rank);
  if (!emit_block(x, KBLOCK_PRE, 0)) return false;
  /* the chunk starts from the reducer's identity, not the init value */
  Opcode reducer = k->ops[x->reduce_combine].op;
  int a = k->ops[x->reduce_write].acc;
  EMIT(X86_MOV, kernel_x86_slot(x->acc_slot + a, 4),
       x86_imm(reducer == OP_ADD ? 0x80000000u : reducer == OP_MAXIMUM ? 0xff800000u : 0x7f800000u));
  emit_acc_next_reset(x);
  x->phase = 0;
  if (k->reduce_rank > 1) {
    if (!emit_reduce_nest(x, 0)) return false;
    return emit_chunk_store(x, a);
  }
  if (!kernel_x86_emit_vector_reduce(x, x->phase_lanes[0])) return false;
  /* the scalar tail of the last chunk, when it is not whole groups */
  X86Label head = x86_label_new(x->cb), done = x86_label_new(x->cb);
  EMIT(X86_CMP, reg(KX_INNER), kernel_x86_slot(x->chunk_slot + 1, 8));
  EMIT(X86_JGE, x86_rel(done));
  x86_label_bind(x->cb, head);
  if (!emit_block(x, KBLOCK_REDUCE, 0)) return false;
  EMIT(X86_MOV, reg(X86_RAX), kernel_x86_slot(x->acc_next_slot + a, 8));
  EMIT(X86_MOV, kernel_x86_slot(x->acc_slot + a, 8), reg(X86_RAX));
  EMIT(X86_INC, reg(KX_INNER));
  EMIT(X86_CMP, reg(KX_INNER), kernel_x86_slot(x->chunk_slot + 1, 8));
  EMIT(X86_JL, x86_rel(head));
  x86_label_bind(x->cb, done);
  return emit_chunk_store(x, a);
}

/* acc = reducer(acc, chunk c) for c in order: the split sum's result. */
static void emit_chunk_fold(KernelX86 *x) {
  x86_listing_note(x->cb, "fold %lld chunk sums in order", (long long)x->split_chunks);
  X86Label head = x86_label_new(x->cb);
  EMIT(X86_XOR, reg(X86_R14D), reg(X86_R14D));
  x86_label_bind(x->cb, head);
  EMIT(X86_MOV, reg(X86_RAX), temporary_pointer(x));
  EMIT(X86_IMUL, reg(X86_RCX), reg(KX_ROW), x86_imm(x->split_chunks));
  EMIT(X86_ADD, reg(X86_RCX), reg(KX_INNER));
  kernel_x86_emit_acc_combine(x, x86_mem_index(4, X86_RAX, X86_RCX, 4, 0));
  EMIT(X86_INC, reg(KX_INNER));
  EMIT(X86_CMP, reg(KX_INNER), x86_imm(x->split_chunks));
  EMIT(X86_JL, x86_rel(head));
}

/* The last inner % lanes points as one more trip of the SIMD body, its
 * loads and stores masked by k2 to the lanes inside the row. Each lane
 * runs the same IEEE operation as the scalar code would. */
static bool emit_masked_tail(KernelX86 *x, int remaining) {
  x86_listing_note(x->cb, "masked tail, %d lanes", remaining);
  EMIT(X86_MOV, reg(X86_EAX), x86_imm((1 << remaining) - 1));
  EMIT(X86_KMOVW, reg(X86_K2), reg(X86_EAX));
  x->lanes = x->vectorized_lanes;
  x->homes = x->vector_homes;
  x->tail_masked = true;
  bool ok = emit_block(x, KBLOCK_PRE, 0);
  x->tail_masked = false;
  x->homes = x->scalar_homes;
  x->lanes = 0;
  return ok;
}

static bool emit_row_body(KernelX86 *x) {
  const Kernel *k = x->k;
  if (k->kind == KERNEL_REDUCE || k->kind == KERNEL_ROW) {
    emit_row_split(x, k->rank);
    if (!emit_block(x, KBLOCK_PRE, 0)) return false;
    emit_acc_next_reset(x);
    int phases = k->kind == KERNEL_ROW ? k->phase_count : 1;
    if (x->split == SPLIT_COMBINE) emit_chunk_fold(x);
    for (int p = 0; p < phases && x->split != SPLIT_COMBINE; p++) {
      if (k->kind == KERNEL_ROW && x->schedule.phases[p].in_next_row) kernel_x86_hand_on_row_scaling(x);
      else if (!emit_reduce_nest(x, p)) return false;
    }
    return emit_block(x, KBLOCK_POST, 0);
  }
  int outer = k->rank > 0 ? k->rank - 1 : 0;
  int64_t inner = k->rank > 0 ? k->dims[k->rank - 1] : 1;
  int lanes = x->vectorized_lanes;
  emit_row_split(x, outer);
  EMIT(X86_XOR, reg(X86_R14D), reg(X86_R14D));
  if (lanes && !kernel_x86_emit_loop_row_pointers(x)) return false;
  if (lanes) {
    /* r14 steps by lanes while r14 + lanes <= inner. */
    x86_listing_note(x->cb, "vector loop, %d %s lanes", lanes, x->vector_f64 ? "f64" : "f32");
    X86Label vector_head = x86_label_new(x->cb);
    x86_label_bind(x->cb, vector_head);
    int step = lanes * x->schedule.phases[0].unroll;
    x->lanes = lanes;
    x->homes = x->vector_homes;
    bool ok = step > lanes ? emit_interleaved_trip(x) : emit_block(x, KBLOCK_PRE, 0);
    x->homes = x->scalar_homes;
    x->lanes = 0;
    if (!ok) return false;
    EMIT(X86_ADD, reg(KX_INNER), x86_imm(step));
    EMIT(X86_CMP, reg(KX_INNER), x86_imm(inner - step));
    EMIT(X86_JLE, x86_rel(vector_head));
    if (inner % step >= lanes) { /* one vector left before the tail */
      x86_listing_note(x->cb, "the last whole vector");
      x->lanes = lanes;
      x->homes = x->vector_homes;
      ok = emit_block(x, KBLOCK_PRE, 0);
      x->homes = x->scalar_homes;
      x->lanes = 0;
      if (!ok) return false;
      EMIT(X86_ADD, reg(KX_INNER), x86_imm(lanes));
    }
    if (inner % lanes == 0) return true;
    if (kernel_x86_vector_tail_maskable(x)) return emit_masked_tail(x, (int)(inner % lanes));
    x86_listing_note(x->cb, "scalar tail");
    /* SSE code after 256/512-bit code: clear the upper halves first (the
     * vector loop's values are dead here), or every SSE op pays a merge. */
    if (x->cpu->level >= CPU_LEVEL_AVX2) x86_emit0(x->cb, X86_VZEROUPPER);
  }
  X86Label head = x86_label_new(x->cb);
  x86_label_bind(x->cb, head);
  if (!emit_block(x, KBLOCK_PRE, 0)) return false;
  if (inner > 1) {
    EMIT(X86_INC, reg(KX_INNER));
    EMIT(X86_CMP, reg(KX_INNER), x86_imm(inner));
    EMIT(X86_JL, x86_rel(head));
  }
  return true;
}

/* The column strategy: rows row .. row + lanes - 1 as one SIMD group when
 * they lie in one run of the innermost loop dim and among the rows given,
 * else row alone as scalar code; KX_ROW steps past what ran. */
static bool emit_column_group(KernelX86 *x) {
  const Kernel *k = x->k;
  int lanes = x->vectorized_lanes;
  X86Label scalar = x86_label_new(x->cb), next = x86_label_new(x->cb);
  emit_row_split(x, k->rank);
  EMIT(X86_MOV, reg(X86_RAX), kernel_x86_slot(x->index_slot + k->rank - 1, 8));
  EMIT(X86_ADD, reg(X86_RAX), x86_imm(lanes));
  EMIT(X86_CMP, reg(X86_RAX), x86_imm(k->dims[k->rank - 1]));
  EMIT(X86_JG, x86_rel(scalar));
  EMIT(X86_LEA, reg(X86_RAX), x86_mem(8, KX_ROW, lanes));
  EMIT(X86_CMP, reg(X86_RAX), reg(KX_ROW_END));
  EMIT(X86_JG, x86_rel(scalar));
  x86_listing_note(x->cb, "SIMD across %d loop points, one output point per lane%s", lanes,
                   x->column_acc_registers ? ", accumulators in zmm28.." : "");
  x->lanes = lanes;
  x->homes = x->vector_homes;
  bool ok = emit_block(x, KBLOCK_PRE, 0);
  if (ok) emit_acc_next_reset(x);
  int phases = k->kind == KERNEL_ROW ? k->phase_count : 1;
  for (int p = 0; ok && p < phases; p++)
    if (p == 0 || !merges_next_phase(x, p - 1)) ok = emit_reduce_nest(x, p);
  ok = ok && emit_block(x, KBLOCK_POST, 0);
  x->homes = x->scalar_homes;
  x->lanes = 0;
  if (!ok) return false;
  EMIT(X86_ADD, reg(KX_ROW), x86_imm(lanes));
  EMIT(X86_JMP, x86_rel(next));
  x86_label_bind(x->cb, scalar);
  x86_listing_note(x->cb, "scalar row");
  if (x->cpu->level >= CPU_LEVEL_AVX2) x86_emit0(x->cb, X86_VZEROUPPER);
  if (!emit_row_body(x)) return false;
  EMIT(X86_INC, reg(KX_ROW));
  x86_label_bind(x->cb, next);
  return true;
}

/* The kernel's schedule (kernel_x86_schedule.c) at the head of its
 * listing, and what the loops compute once per row. */
static void note_schedule(KernelX86 *x) {
  const Kernel *k = x->k;
  StrBuf sb = {0};
  print_kernel_schedule(&sb, k, &x->schedule, "");
  for (char *line = sb.data, *end; line && *line; line = end + 1) {
    end = strchr(line, '\n');
    *end = 0;
    x86_listing_note(x->cb, "%s", line);
  }
  strbuf_free(&sb);
  int phases = k->kind == KERNEL_ROW ? k->phase_count : k->kind == KERNEL_REDUCE ? 1 : 0;
  for (int p = 0; p < phases; p++) {
    KernelBlock block = k->kind == KERNEL_ROW ? k->phase_blocks[p] : KBLOCK_REDUCE;
    int invariants = 0, row_pointers = 0;
    for (int i = 0; i < k->op_count; i++) {
      const KernelOp *op = &k->ops[i];
      if (op->block != block || op->phase != p || x->dead[i]) continue;
      invariants += op->invariant;
      row_pointers += x->address_slots[i] >= 0;
    }
    if (x->phase_lanes[p])
      x86_listing_note(x->cb, "loops: phase %d: %d invariant ops once per row, %d row pointers", p, invariants,
                       row_pointers);
  }
}

static bool uses_row_buffer(const KernelX86 *x) {
  return x->k->kind == KERNEL_ROW && x->schedule.phases[x->k->phase_count - 1].reuse_in_frame;
}

/* The row buffer's frame slots: a row of f32, and 64 bytes to align it. */
static int row_buffer_slots(const KernelX86 *x) {
  return uses_row_buffer(x) ? (int)((4 * x->k->reduce_dims[0] + 64 + 7) / 8) : 0;
}

static bool streams_stores(const KernelX86 *x) {
  return x->k->kind == KERNEL_ROW && x->schedule.phases[x->k->phase_count - 1].stream_stores;
}

static const X86Reg saved_registers[] = {X86_RBX, X86_RBP, X86_R12, X86_R13, X86_R14, X86_R15};
enum { SAVED_COUNT = sizeof saved_registers / sizeof saved_registers[0] };

static bool emit_function(KernelX86 *x) {
  /* Six pushes leave rsp 8 below a 16-byte boundary; an odd slot count
   * realigns it (nothing here needs it, but a debugger likes it). */
  int frame_slots = x->slot_count | 1;
  x->pointer_register_slot[0] = x->pointer_register_slot[1] = -1; /* no row pointer in a register yet */
  for (int r = 0; r < SAVED_COUNT; r++) EMIT(X86_PUSH, reg(saved_registers[r]));
  EMIT(X86_SUB, reg(X86_RSP), x86_imm(8 * (int64_t)frame_slots));
  if (x->cpu->level >= CPU_LEVEL_AVX2) x86_emit0(x->cb, X86_VZEROUPPER);
  if (uses_row_buffer(x)) {
    x86_listing_note(x->cb, "the row buffer's start, aligned to a cache line");
    EMIT(X86_LEA, reg(X86_RAX), x86_mem(8, X86_RSP, 8 * x->row_buffer_slot + 63));
    EMIT(X86_AND, reg(X86_RAX), x86_imm(-64));
    EMIT(X86_MOV, kernel_x86_slot(x->row_buffer_pointer_slot, 8), reg(X86_RAX));
  }
  EMIT(X86_MOV, reg(KX_BUFFERS), reg(X86_RDI));
  EMIT(X86_MOV, reg(KX_ROW), reg(X86_RSI));
  EMIT(X86_LEA, reg(KX_ROW_END), x86_mem_index(8, X86_RSI, X86_RDX, 1, 0));
  bool next_row_scaling = x->k->kind == KERNEL_ROW && x->schedule.phases[x->k->phase_count - 1].in_next_row;
  if (next_row_scaling) kernel_x86_clear_row_scaling(x);
  X86Label exit = x86_label_new(x->cb), row = x86_label_new(x->cb);
  EMIT(X86_CMP, reg(KX_ROW), reg(KX_ROW_END));
  EMIT(X86_JGE, x86_rel(exit));
  x86_label_bind(x->cb, row);
  if (x->columns) {
    if (!emit_column_group(x)) return false;
  } else {
    if (!(x->split == SPLIT_PARTIAL ? emit_chunk_sum(x) : emit_row_body(x))) return false;
    EMIT(X86_INC, reg(KX_ROW));
  }
  EMIT(X86_CMP, reg(KX_ROW), reg(KX_ROW_END));
  EMIT(X86_JL, x86_rel(row));
  x86_label_bind(x->cb, exit);
  if (next_row_scaling) kernel_x86_emit_last_row_scaling(x);
  /* non-temporal stores are weakly ordered: all of them before the
   * thread says it is done */
  if (streams_stores(x)) x86_emit0(x->cb, X86_SFENCE);
  if (x->cpu->level >= CPU_LEVEL_AVX2) x86_emit0(x->cb, X86_VZEROUPPER);
  EMIT(X86_ADD, reg(X86_RSP), x86_imm(8 * (int64_t)frame_slots));
  for (int r = SAVED_COUNT - 1; r >= 0; r--) EMIT(X86_POP, reg(saved_registers[r]));
  x86_emit0(x->cb, X86_RET);
  kernel_x86_emit_lane_constants(x);
  kernel_x86_emit_narrow_tables(x);
  return true;
}

static bool check_buffers(const Kernel *k, Status *st) {
  for (int b = 0; b < k->input_count + k->output_count; b++) {
    const Shape *s = b < k->input_count ? &k->inputs[b].shape : &k->outputs[b - k->input_count].shape;
    if (kernel_x86_value_class_of(s->type) == VALUE_NONE || s->element_size_bits)
      return status_error(st, STATUS_UNSUPPORTED, "kernel %s: buffers of %s have no x86 code yet", k->name,
                          type_name(s->type));
  }
  return true;
}

static CompiledKernel *compile_real_kernel(const Kernel *k, const CpuFeatures *cpu, bool keep_listing, Status *st);

CompiledKernel *kernel_x86_compile(const Kernel *k, const CpuFeatures *cpu, Status *st) {
  return kernel_x86_compile_listed(k, cpu, true, st);
}

/* Complex kernels run as kernels on real pairs (kernel_complex.c). */
CompiledKernel *kernel_x86_compile_listed(const Kernel *k, const CpuFeatures *cpu, bool keep_listing, Status *st) {
  if (!kernel_has_complex(k)) return compile_real_kernel(k, cpu, keep_listing, st);
  Kernel *real = kernel_split_complex(k, st);
  CompiledKernel *ck = real ? compile_real_kernel(real, cpu, keep_listing, st) : NULL;
  if (real && !ck) {
    /* the op named is one of the real ops the complex ones became */
    size_t n = strlen(st->message);
    snprintf(st->message + n, sizeof st->message - n, " (in the kernel's real-pair form of its complex ops)");
  }
  kernel_free(real);
  return ck;
}

static CompiledKernel *compile_real_kernel(const Kernel *k, const CpuFeatures *cpu, bool keep_listing, Status *st) {
  if (cpu->level < CPU_LEVEL_SSE4) {
    status_error(st, STATUS_UNSUPPORTED, "kernel %s: x86 kernels need SSE4.1", k->name);
    return NULL;
  }
  if (!check_buffers(k, st)) return NULL;
  CompiledKernel *ck = mem_calloc(1, sizeof *ck);
  ck->owners = 1;
  x86_buffer_init(&ck->listing);
  if (keep_listing) x86_buffer_enable_listing(&ck->listing);
  KernelX86 x = {.k = k, .cpu = cpu, .cb = &ck->listing, .st = st};
  x.scalar_homes = mem_calloc((size_t)k->op_count + 1, sizeof *x.homes);
  x.vector_homes = mem_calloc((size_t)k->op_count + 1, sizeof *x.homes);
  x.homes = x.scalar_homes;
  x.last_use = mem_calloc((size_t)k->op_count + 1, sizeof *x.last_use);
  x.index_slot = 0;
  x.rindex_slot = x.index_slot + AXLE_MAX_RANK;
  x.acc_slot = x.rindex_slot + AXLE_MAX_RANK;
  x.acc_next_slot = x.acc_slot + AXLE_MAX_RANK;
  x.partial_slot = x.acc_next_slot + AXLE_MAX_RANK;
  x.chunk_slot = x.partial_slot + REDUCE_PARTIALS / 2;
  x.scratch_slot = x.chunk_slot + 2;
  x.value_slot = x.scratch_slot + 1;
  x.forms = mem_calloc((size_t)k->op_count + 1, sizeof *x.forms);
  x86_listing_note(x.cb, "kernel %s (%s)", k->name, cpu_level_name(cpu->level));
  x.dead = mem_calloc((size_t)k->op_count + 1, 1);
  /* The schedule first: its vector forms decide the values' homes (a
   * gather stretches the lives of its index values). */
  kernel_x86_plan(&x);
  kernel_x86_mark_dead(&x);
  /* a schedule stored for another level (or another policy) is refused,
   * not followed halfway */
  bool ok = k->schedule.strategy == KSCHED_NONE || kernel_schedule_equal(&k->schedule, &x.schedule) ||
            status_error(st, STATUS_UNSUPPORTED, "kernel %s: its stored schedule is not the one chosen for %s",
                         k->name, x.schedule.target);
  ok = ok && kernel_x86_allocate(&x);
  if (ok && x.vectorized_lanes && (k->kind == KERNEL_LOOP || x.columns)) {
    x.homes = x.vector_homes;
    x.allocating_vector = true;
    ok = kernel_x86_allocate(&x);
    x.allocating_vector = false;
    x.homes = x.scalar_homes;
    if (ok && x.schedule.phases[0].unroll == 2 && k->kind == KERNEL_LOOP) x.second_homes = kernel_x86_second_homes(&x);
  }
  x.address_slots = mem_calloc((size_t)k->op_count + 1, sizeof *x.address_slots);
  x.addressing_only = mem_calloc((size_t)k->op_count + 1, sizeof *x.addressing_only);
  kernel_x86_assign_row_pointers(&x);
  x.address_slot = x.value_slot + x.spill_count;
  x.vector_slot = x.address_slot + x.address_count;
  x.math_slot = x.vector_slot + 8 * x.spill_count;
  x.column_acc_slot = x.math_slot + (x.vectorized_lanes ? KX_VECTOR_MATH_SLOTS : KX_MATH_SLOTS);
  x.row_buffer_pointer_slot = x.column_acc_slot + (x.columns ? KX_COLUMN_ACC_SLOTS * k->acc_count : 0);
  x.row_buffer_slot = x.row_buffer_pointer_slot + 1;
  x.scaling_slot = x.row_buffer_slot + row_buffer_slots(&x);
  x.slot_count = x.scaling_slot + 2;
  /* The frame lives on the calling thread's stack. */
  if (ok && x.slot_count > (1 << 17))
    ok = status_error(st, STATUS_UNSUPPORTED, "kernel %s: %d spilled values need a stack frame past 1 MiB", k->name,
                      x.spill_count);
  x.split_chunks = x.schedule.split_chunks;
  if (ok) note_schedule(&x);
  size_t combine_offset = 0;
  if (x.split_chunks) {
    x.split = SPLIT_PARTIAL;
    ok = ok && emit_function(&x);
    x86_listing_note(x.cb, "kernel %s: the chunks' fold", k->name);
    combine_offset = x.cb->size;
    x.split = SPLIT_COMBINE;
  }
  ok = ok && emit_function(&x) && x86_buffer_finish(x.cb, st) &&
       jit_code_create(&ck->code, x.cb->code, x.cb->size, st);
  if (ok) jit_code_name(&ck->code, 0, x.cb->size, "axle kernel %s (%s)", k->name, cpu_level_name(cpu->level));
  mem_free(x.scalar_homes);
  mem_free(x.vector_homes);
  mem_free(x.second_homes);
  mem_free(x.last_use);
  mem_free(x.forms);
  mem_free(x.dead);
  mem_free(x.lane_constants);
  mem_free(x.address_slots);
  mem_free(x.addressing_only);
  mem_free(x.lane_constant_labels);
  if (!ok) {
    kernel_x86_free(ck);
    return NULL;
  }
  /* The only way from JIT memory's generic pointer to the kernel's type. */
  JitFunction f = jit_code_function(&ck->code, 0);
  memcpy(&ck->function, &f, sizeof f);
  if (x.split_chunks) {
    f = jit_code_function(&ck->code, combine_offset);
    memcpy(&ck->combine, &f, sizeof f);
  }
  ck->split_chunks = x.split_chunks;
  ck->combine_offset = combine_offset;
  ck->buffer_count = k->input_count + k->output_count;
  ck->lanes = x.vectorized_lanes;
  if (k->kind != KERNEL_LOOP) {
    ck->row_count = product(k->dims, k->rank);
    ck->elements_per_row = product(k->reduce_dims, k->reduce_rank);
  } else {
    ck->row_count = k->rank > 0 ? product(k->dims, k->rank - 1) : 1;
    ck->elements_per_row = k->rank > 0 ? k->dims[k->rank - 1] : 1;
    if (ck->elements_per_row == 0) ck->row_count = 0;
  }
  return ck;
}

CompiledKernel *kernel_x86_share(CompiledKernel *ck) {
  ck->owners++;
  return ck;
}

void kernel_x86_free(CompiledKernel *ck) {
  if (!ck || --ck->owners > 0) return;
  jit_code_free(&ck->code);
  x86_buffer_free(&ck->listing);
  mem_free(ck);
}

int64_t kernel_x86_row_count(const CompiledKernel *ck) { return ck->row_count; }
int kernel_x86_lanes(const CompiledKernel *ck) { return ck->lanes; }
int64_t kernel_x86_split_chunks(const CompiledKernel *ck) { return ck->split_chunks; }
int64_t kernel_x86_elements_per_row(const CompiledKernel *ck) { return ck->elements_per_row; }

const uint8_t *kernel_x86_code(const CompiledKernel *ck, size_t *size, size_t *combine_offset) {
  *size = ck->listing.size;
  *combine_offset = ck->combine_offset;
  return ck->listing.code;
}

int64_t kernel_x86_chunk_sum_bytes(const CompiledKernel *ck) {
  return ck->split_chunks ? ck->row_count * ck->split_chunks * (int64_t)sizeof(float) : 0;
}

/* A split sum's buffers: the kernel's, then a new block for its chunk sums
 * (kernel_x86_run_with_chunk_sums takes the caller's instead). */
static void **split_buffers(const CompiledKernel *ck, void *const *buffers) {
  void **all = mem_calloc((size_t)ck->buffer_count + 1, sizeof *all);
  memcpy(all, buffers, (size_t)ck->buffer_count * sizeof *all);
  all[ck->buffer_count] = mem_calloc((size_t)(ck->row_count * ck->split_chunks), sizeof(float));
  return all;
}

static void split_buffers_free(const CompiledKernel *ck, void **all) {
  mem_free(all[ck->buffer_count]);
  mem_free(all);
}

/* Rows of a split sum over buffers that end with its chunk sums' block
 * (one float per row and chunk, at row * split_chunks + chunk): the
 * partial code writes every chunk's sum there, the fold reads them. */
static void split_rows_run(const CompiledKernel *ck, void *const *buffers, int64_t first_row, int64_t row_count) {
  ck->function(buffers, first_row * ck->split_chunks, row_count * ck->split_chunks);
  ck->combine(buffers, first_row, row_count);
}

void kernel_x86_run_rows(const CompiledKernel *ck, void *const *buffers, int64_t first_row, int64_t row_count) {
  if (row_count <= 0) return;
  if (!ck->split_chunks) {
    ck->function(buffers, first_row, row_count);
    return;
  }
  void **all = split_buffers(ck, buffers);
  split_rows_run(ck, all, first_row, row_count);
  split_buffers_free(ck, all);
}

typedef struct ChunkTasks {
  const CompiledKernel *ck;
  void *const *buffers;
} ChunkTasks;

static void chunk_task_run(void *context, int64_t task) {
  const ChunkTasks *t = context;
  t->ck->function(t->buffers, task, 1);
}

/* Tasks of about this many elements: a fixed function of the shape, so the
 * split (and so the result) is the same for every thread count. */
enum { ELEMENTS_PER_TASK = 1 << 14 };

static int64_t rows_per_task(const CompiledKernel *ck) {
  int64_t per_row = ck->elements_per_row > 0 ? ck->elements_per_row : 1;
  return ELEMENTS_PER_TASK / per_row > 0 ? ELEMENTS_PER_TASK / per_row : 1;
}

int64_t kernel_x86_task_count(const CompiledKernel *ck) {
  if (ck->row_count <= 0) return 0;
  if (ck->split_chunks) return ck->row_count * ck->split_chunks;
  return (ck->row_count + rows_per_task(ck) - 1) / rows_per_task(ck);
}

typedef struct RowTasks {
  const CompiledKernel *ck;
  void *const *buffers;
  int64_t rows_per_task;
} RowTasks;

static void row_task_run(void *context, int64_t task) {
  const RowTasks *t = context;
  int64_t first = task * t->rows_per_task;
  int64_t count = t->ck->row_count - first < t->rows_per_task ? t->ck->row_count - first : t->rows_per_task;
  kernel_x86_run_rows(t->ck, t->buffers, first, count);
}

void kernel_x86_run_with_chunk_sums(const CompiledKernel *ck, void *const *buffers, ThreadPool *pool) {
  if (ck->row_count <= 0) return;
  if (ck->split_chunks) {
    /* every chunk a task, then the fold on this thread (few rows) */
    ChunkTasks t = {.ck = ck, .buffers = buffers};
    thread_pool_run(pool, kernel_x86_task_count(ck), chunk_task_run, &t);
    ck->combine(buffers, 0, ck->row_count);
    return;
  }
  RowTasks t = {.ck = ck, .buffers = buffers, .rows_per_task = rows_per_task(ck)};
  thread_pool_run(pool, kernel_x86_task_count(ck), row_task_run, &t);
}

void kernel_x86_run(const CompiledKernel *ck, void *const *buffers, ThreadPool *pool) {
  if (ck->row_count <= 0 || !ck->split_chunks) {
    kernel_x86_run_with_chunk_sums(ck, buffers, pool);
    return;
  }
  void **all = split_buffers(ck, buffers);
  kernel_x86_run_with_chunk_sums(ck, all, pool);
  split_buffers_free(ck, all);
}

void kernel_x86_print_listing(const CompiledKernel *ck, FILE *out) {
  if (!ck->listing.listing_enabled) fprintf(out, "# compiled without its listing\n");
  else x86_listing_print(&ck->listing, out);
}
