/* The x86 policy: the schedule of a kernel (kernel.h, KernelSchedule) for
 * one ISA level, chosen here and nowhere else, before any code is written.
 *
 *   loop kernel    SIMD along the innermost dimension where every op has a
 *                  vector form (kernel_x86_vector.c), 4, 8 or 16 f32 lanes
 *                  (sse4, avx2, avx512), unroll 1; the tail masked at
 *                  avx512, else scalar. At avx512, a loop whose trip is
 *                  a long dependent chain (a math function: one trip of
 *                  an LSTM's gates fills the out-of-order window, so
 *                  trips barely overlap) runs two vectors per trip,
 *                  unroll 2, each op of the first followed by the same
 *                  op of the second (loop_interleaves).
 *   reduce kernel  16 partial results (REDUCE_PARTIALS) in vectors of the
 *                  ISA's width, so unroll 16 / lanes, each vector its own
 *                  accumulator; the same partials, in the same order, at
 *                  every level and thread count. A long sum to few points
 *                  is split into chunks of its range.
 *   columns        a reduce or row kernel none of whose phases has a
 *                  vector form (the reduced dims outer, a column sum; or
 *                  rows shorter than a vector, a softmax over 10 classes)
 *                  runs SIMD across 4, 8 or 16 adjacent output points
 *                  (kernel_x86_columns.c) where its ops allow, unroll 1,
 *                  one vector per accumulator; the points past the last
 *                  whole group are scalar rows.
 *   row kernel     each phase on its own, like the above; when the ROW
 *                  phase recomputes a value the REDUCE phase before it
 *                  computed (softmax's exp), that phase stores it into
 *                  the output row and the ROW phase reads it back from
 *                  there (L1: a row is small) instead of computing it again.
 *                  Past the last-level cache (LARGE_BYTES), the ROW phase
 *                  stores non-temporally (the value reused goes through
 *                  a row buffer in the frame instead, so that the output
 *                  is written once) and the second phase prefetches the
 *                  next row, so that the first phase's memory reads
 *                  overlap this row's math. Below it, a ROW phase that
 *                  only divides the value read back by the sum runs in
 *                  the next row's first loop, beside its memory reads.
 */
#include <string.h>

#include "emit_x86/kernel_x86_internal.h"

static int64_t product(const int64_t *dims, int n) {
  int64_t p = 1;
  for (int d = 0; d < n; d++) p *= dims[d];
  return p;
}

static const char *target_name(CpuLevel level) {
  return level == CPU_LEVEL_AVX512 ? "x86 avx512" : level == CPU_LEVEL_AVX2 ? "x86 avx2" : "x86 sse4";
}

/* The chunks of a split sum, by shape only: 0 when the sum stays whole.
 * A chunk is about SPLIT_CHUNK elements: whole groups of 16 elements of a
 * single reduced dimension, or whole slices of reduced dimension 0. */
static int64_t split_chunks_of(KernelX86 *x) {
  const Kernel *k = x->k;
  if (k->kind != KERNEL_REDUCE || !x->phase_lanes[0] || k->reduce_rank == 0 ||
      product(k->reduce_dims, k->reduce_rank) < 2 * (int64_t)SPLIT_CHUNK ||
      product(k->dims, k->rank) > SPLIT_MAX_ROWS)
    return 0;
  int64_t slice = product(k->reduce_dims + 1, k->reduce_rank - 1);
  x->split_chunk = slice >= SPLIT_CHUNK ? 1 : SPLIT_CHUNK / slice;
  int64_t chunks = k->reduce_dims[0] / x->split_chunk;
  return chunks >= 2 ? chunks : 0;
}

static int minor_dim_of(const Shape *s) { return s->has_layout ? s->minor_to_major[0] : s->rank - 1; }

static bool looped_in(const KernelOp *op, int phase) {
  return (op->block == KBLOCK_REDUCE || op->block == KBLOCK_ROW) && op->phase == phase;
}

static void mark_needed(const Kernel *k, int v, int phase, int stop, uint8_t *needed) {
  if (needed[v] || !looped_in(&k->ops[v], phase)) return;
  needed[v] = 1;
  if (v == stop) return;
  for (int a = 0; a < k->ops[v].arg_count; a++) mark_needed(k, k->ops[v].args[a], phase, stop, needed);
}

void kernel_x86_mark_dead(KernelX86 *x) {
  const Kernel *k = x->k;
  memset(x->dead, 0, (size_t)k->op_count + 1);
  if (k->kind != KERNEL_ROW) return;
  int row = k->phase_count - 1;
  int stop = x->schedule.phases[row].reuse_as;
  if (stop < 0) return;
  uint8_t *needed = mem_calloc((size_t)k->op_count + 1, 1);
  for (int i = 0; i < k->op_count; i++)
    if (looped_in(&k->ops[i], row) && (k->ops[i].kop == KOP_STORE || k->ops[i].kop == KOP_ACC_WRITE))
      mark_needed(k, i, row, stop, needed);
  for (int i = 0; i < k->op_count; i++) x->dead[i] = looped_in(&k->ops[i], row) && !needed[i];
  mem_free(needed);
}

int kernel_x86_row_store(const Kernel *k) {
  int store = -1, row = k->phase_count - 1;
  for (int i = 0; i < k->op_count; i++)
    if (looped_in(&k->ops[i], row) && k->ops[i].kop == KOP_STORE) {
      if (store >= 0) return -1;
      store = i;
    }
  return store;
}

/* Whether the loads of `phase` read, of an input shaped like the store's
 * output (which may be the same memory, a donated buffer), only the
 * element the store writes: the phase may then write it after its loads. */
static bool loads_stay_on_the_stored_element(const Kernel *k, int phase, const KernelOp *store) {
  const Shape *out = &k->outputs[store->buffer].shape;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (!looped_in(op, phase) || op->kop != KOP_LOAD) continue;
    const Shape *in = &k->inputs[op->buffer].shape;
    if (in->type != out->type || !shape_same_dims(in, out)) continue;
    for (int d = 0; d < out->rank; d++) {
      const KernelOp *a = &k->ops[op->args[d]], *b = &k->ops[store->args[1 + d]];
      bool both_inner = a->kop == KOP_RINDEX && b->kop == KOP_RINDEX && a->dim == b->dim;
      if (!both_inner && op->args[d] != store->args[1 + d]) return false;
    }
  }
  return true;
}

/* Softmax's exp computed once: see the head of the file. Both phases
 * vectorized with no tail (the stored vectors cover the row), the ROW
 * phase's one store an f32 row access whose other indices are PRE values
 * (known before the phase before it), and nothing else of the ROW phase
 * loads (the output may be an input's donated buffer). */
static void choose_reuse(KernelX86 *x) {
  KernelSchedule *s = &x->schedule;
  const Kernel *k = x->k;
  int earlier, later = kernel_find_recomputed(k, &earlier);
  if (later < 0 || k->reduce_rank != 1) return;
  int row = k->phase_count - 1;
  KernelPhaseSchedule *rp = &s->phases[row], *pp = &s->phases[row - 1];
  if (!rp->lanes || !pp->lanes || rp->tail != KTAIL_NONE || pp->tail != KTAIL_NONE || x->forms[earlier] != LANE_VECTOR ||
      x->forms[later] != LANE_VECTOR || k->ops[later].type != TYPE_F32)
    return;
  int store = kernel_x86_row_store(k);
  if (store < 0 || k->outputs[k->ops[store].buffer].shape.type != TYPE_F32 || !kernel_x86_is_row_access(k, store))
    return;
  const KernelOp *st = &k->ops[store];
  for (int d = 1; d < st->arg_count; d++) {
    const KernelOp *index = &k->ops[st->args[d]];
    if (index->kop != KOP_RINDEX && index->block != KBLOCK_PRE) return;
  }
  if (!loads_stay_on_the_stored_element(k, row - 1, st)) return;
  rp->reuse = earlier;
  rp->reuse_as = later;
  kernel_x86_mark_dead(x);
  for (int i = 0; i < k->op_count; i++)
    if (!x->dead[i] && looped_in(&k->ops[i], row) && k->ops[i].kop == KOP_LOAD) {
      rp->reuse = rp->reuse_as = -1;
      kernel_x86_mark_dead(x);
      return;
    }
}

/* An output past the last-level cache goes past the caches: a plain
 * store first reads the line it writes (read for ownership), a third
 * stream of memory traffic beside the input and the output. The ROW
 * phase's one f32 row store, whole vectors (no tail); a value reused
 * from the phase before goes through the row buffer in the frame, not
 * the output, so the phase reads nothing back from it. The bytes are the
 * same either way. (An output that fits the cache stays there, for the
 * next kernel, and a plain store to a line in cache costs no read.) */
static void choose_streaming(KernelX86 *x) {
  const Kernel *k = x->k;
  int row = k->phase_count - 1, store = kernel_x86_row_store(k);
  KernelPhaseSchedule *rp = &x->schedule.phases[row];
  if (k->phase_blocks[row] != KBLOCK_ROW || !rp->lanes || rp->lane_bits != 32 || rp->tail != KTAIL_NONE ||
      store < 0 || !kernel_x86_is_row_access(k, store))
    return;
  const Shape *out = &k->outputs[k->ops[store].buffer].shape;
  if (out->type != TYPE_F32 || shape_byte_size(out) < LARGE_BYTES) return;
  if (rp->reuse_as >= 0 && 4 * k->reduce_dims[k->reduce_rank - 1] > ROW_BUFFER_MAX_BYTES) return;
  rp->reuse_in_frame = rp->reuse_as >= 0;
  rp->stream_stores = true;
}

/* Phase 1 of a row kernel runs over a row the first phase brought into
 * cache; where its input is past the last-level cache, its trips
 * prefetch the next row of the same loads, so that the next row's first
 * phase reads from cache, not memory, and the memory reads overlap this
 * row's math. Only where each of its row loads reads [row, inner] of a
 * row-major [rows, n] buffer: the next row is n elements on. */
/* The bytes of a row of phase p's row loads when each reads [row, inner]
 * of a row-major [rows, n] buffer, the same n for all (a phase that loads
 * nothing: -1); else 0. Such a phase reads only its own row. */
static int row_load_bytes(const Kernel *k, int p) {
  if (k->rank != 1 || k->reduce_rank != 1) return 0;
  int bytes = -1;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (!looped_in(op, p) || op->kop != KOP_LOAD) continue;
    const Shape *in = &k->inputs[op->buffer].shape;
    const KernelOp *row = &k->ops[op->args[0]];
    if (!kernel_x86_is_row_access(k, i) || in->rank != 2 || minor_dim_of(in) != 1 || row->kop != KOP_INDEX ||
        row->dim != 0 || in->dims[0] != k->dims[0] || in->dims[1] != k->reduce_dims[0])
      return 0;
    int row_bytes = (int)(in->dims[1] * type_byte_size(in->type));
    if (bytes >= 0 && bytes != row_bytes) return 0;
    bytes = row_bytes;
  }
  return bytes;
}

static bool loads_past_the_cache(const Kernel *k, int p) {
  for (int i = 0; i < k->op_count; i++)
    if (looped_in(&k->ops[i], p) && k->ops[i].kop == KOP_LOAD && shape_byte_size(&k->inputs[k->ops[i].buffer].shape) < LARGE_BYTES)
      return false;
  return true;
}

static void choose_prefetch(KernelX86 *x) {
  const Kernel *k = x->k;
  KernelPhaseSchedule *ps = &x->schedule.phases[1];
  if (k->phase_count < 3 || k->phase_blocks[1] != KBLOCK_REDUCE || !ps->lanes) return;
  int bytes = row_load_bytes(k, 1);
  if (bytes > 0 && loads_past_the_cache(k, 1)) ps->prefetch_row_bytes = bytes;
}

/* Softmax's last phase, out = exp / sum, is a divide per vector, and the
 * divide unit, which takes several cycles per vector, is most of that
 * loop's time (a fifth of a softmax's at avx512), while the first phase
 * (the maximum) mostly waits for the row to come from memory. So the ROW
 * phase runs in the next row's first loop: each trip divides a vector of
 * the row before beside its own work, and the range's last row is divided
 * after the rows. Beside the exp's loop instead it gains nothing: the
 * divides and the exp's multiplies share the same units. Only where the
 * ROW phase reads back the value the phase before stored in the output
 * (not a row buffer in the frame, which the next row overwrites), at the
 * first phase's width, neither with a tail, and does nothing but divide it
 * by an accumulator (final once the phase before is done) and store it;
 * no POST op; and every phase's loads read only their own row (apart
 * from the output's row in a donated buffer), so that row r's stores may
 * come after row r + 1's loads. */
static void choose_next_row_scaling(KernelX86 *x) {
  const Kernel *k = x->k;
  int row = k->phase_count - 1, store = kernel_x86_row_store(k);
  KernelPhaseSchedule *rp = &x->schedule.phases[row], *first = &x->schedule.phases[0];
  if (x->cpu->level < CPU_LEVEL_AVX2 || row < 1 || k->phase_blocks[row] != KBLOCK_ROW ||
      k->phase_blocks[0] != KBLOCK_REDUCE || rp->reuse_as < 0 || rp->reuse_in_frame || rp->stream_stores ||
      rp->lanes != first->lanes || rp->lane_bits != 32 || rp->tail != KTAIL_NONE || first->tail != KTAIL_NONE ||
      store < 0)
    return;
  for (int p = 0; p < row; p++)
    if (!row_load_bytes(k, p)) return;
  const KernelOp *st = &k->ops[store], *quotient = &k->ops[st->args[0]];
  if (quotient->kop != KOP_HLO || quotient->op != OP_DIVIDE || quotient->args[0] != rp->reuse_as) return;
  const KernelOp *divisor = &k->ops[quotient->args[1]];
  if (divisor->kop != KOP_ACC_READ || !looped_in(divisor, row) || !divisor->invariant) return;
  /* the accumulator is final when the ROW phase starts: no phase after it writes it */
  for (int i = 0; i < k->op_count; i++)
    if (k->ops[i].kop == KOP_ACC_WRITE && k->ops[i].acc == divisor->acc && looped_in(&k->ops[i], row)) return;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->block == KBLOCK_POST) return;
    bool allowed = i == store || i == st->args[0] || i == quotient->args[1] || i == rp->reuse_as ||
                   op->kop == KOP_RINDEX || op->kop == KOP_INDEX || op->kop == KOP_CONSTANT;
    if (looped_in(op, row) && !x->dead[i] && !allowed) return;
  }
  rp->in_next_row = true;
}

/* A maximum or minimum at avx512 is one vmaxps per 16 elements, but each
 * waits for the one before through its accumulator: four accumulators
 * (zmm28..31) over whole groups of 64, with the NaN blends out of the
 * loop (they only matter where a NaN is: the row then runs again in one
 * accumulator's order). At avx2 the NaN blends are most of the loop (a
 * compare and three logic ops per operand): its two partial vectors take
 * a plain vmaxps, and their NaN lanes, or'ed over the row and tested
 * once, send the row to the exact loop. Sums keep their 16 partials, whose order fixes their rounding;
 * their loops wait on the math, not on the add. */
static void choose_accumulators(KernelX86 *x, int p) {
  const Kernel *k = x->k;
  KernelPhaseSchedule *ps = &x->schedule.phases[p];
  bool avx2 = x->cpu->level == CPU_LEVEL_AVX2 && ps->lanes == 8 && ps->lane_bits == 32;
  if ((ps->lanes != 16 && !avx2) || ps->tail != KTAIL_NONE || k->reduce_rank != 1 ||
      (k->kind == KERNEL_ROW && k->phase_blocks[p] != KBLOCK_REDUCE))
    return;
  x->phase = p;
  /* finds this phase's sum again */
  if (k->kind == KERNEL_ROW) kernel_x86_vector_phase_lanes(x);
  else kernel_x86_vector_reduce_lanes(x);
  Opcode reducer = k->ops[x->reduce_combine].op;
  int64_t inner = k->reduce_dims[k->reduce_rank - 1];
  if (reducer != OP_MAXIMUM && reducer != OP_MINIMUM) return;
  if (avx2) {
    ps->rerun_exact = true;
    return;
  }
  if (inner % (4 * REDUCE_PARTIALS) != 0) return;
  ps->accumulators = ps->unroll = 4;
  ps->rerun_exact = ps->rerun_on_zero = true;
}

static KernelTail tail_of(int64_t n, int step, bool maskable) {
  return n % step == 0 ? KTAIL_NONE : maskable ? KTAIL_MASKED : KTAIL_SCALAR;
}

/* Whether the column strategy's last phase, a ROW phase after a REDUCE
 * phase, may run in that phase's loop: it reads no accumulator (nothing
 * that phase is still summing) and computes nothing once per row, and
 * every load of an input shaped like its store's output (the same memory
 * if donated), in both phases, reads only the element the store writes on
 * the same trip, so storing earlier than the scalar code changes no value
 * read. Each lane then runs each phase's operations in the scalar code's
 * order; only the two phases' trips interleave. */
static bool row_phase_fits_in_previous_loop(const Kernel *k) {
  int row = k->phase_count - 1;
  if (k->kind != KERNEL_ROW || row < 1 || k->phase_blocks[row] != KBLOCK_ROW ||
      k->phase_blocks[row - 1] != KBLOCK_REDUCE)
    return false;
  int store = kernel_x86_row_store(k);
  if (store < 0) return false;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (looped_in(op, row) && (op->kop == KOP_ACC_READ || op->kop == KOP_ACC_WRITE || op->invariant)) return false;
  }
  return loads_stay_on_the_stored_element(k, row - 1, &k->ops[store]) &&
         loads_stay_on_the_stored_element(k, row, &k->ops[store]);
}

/* The column strategy where no phase has lanes of its own. */
static bool choose_columns(KernelX86 *x, int phases) {
  const Kernel *k = x->k;
  for (int p = 0; p < phases; p++)
    if (x->phase_lanes[p]) return false;
  int lanes = kernel_x86_column_lanes(x);
  if (!lanes) return false;
  x->columns = true;
  x->vectorized_lanes = lanes;
  KernelSchedule *s = &x->schedule;
  s->strategy = KSCHED_COLUMNS;
  for (int p = 0; p < phases; p++) {
    bool row = k->kind == KERNEL_ROW && k->phase_blocks[p] == KBLOCK_ROW;
    s->phases[p] = (KernelPhaseSchedule){lanes, 32, 1, row ? 0 : k->acc_count, false, false,
                                         tail_of(k->dims[k->rank - 1], lanes, false), -1, -1, false, false, false, false, 0};
  }
  s->phases[phases - 1].in_previous_loop = row_phase_fits_in_previous_loop(k);
  return true;
}

/* Whether a loop kernel's SIMD loop runs two vectors interleaved: at
 * avx512 (32 registers: the values of each vector in its own bank of 6,
 * the math functions' scratch shared, renamed by the hardware), f32, a
 * row of at least two vectors, a math function in the trip (a long
 * dependent chain), every load and store a row access (its address the
 * row pointer plus r14, the second vector's one vector further) and every
 * other op an f32 value or an index that only addresses them. */
static bool loop_interleaves(const KernelX86 *x, int lanes, int64_t n) {
  const Kernel *k = x->k;
  if (x->cpu->level != CPU_LEVEL_AVX512 || !lanes || x->vector_f64 || n < 2 * lanes) return false;
  bool math = false;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->kop == KOP_LOAD || op->kop == KOP_STORE) {
      if (!kernel_x86_is_loop_row_access(x, i)) return false;
    } else if (!kernel_x86_index_like(op)) {
      if (op->type != TYPE_F32 || (op->kop != KOP_HLO && op->kop != KOP_CONSTANT)) return false;
      if (op->kop == KOP_HLO && kernel_x86_is_vector_math(x, op->op)) math = true;
    }
  }
  if (!math) return false;
  /* every load and store is a row access: each index must only address them */
  bool *row_access = mem_calloc((size_t)k->op_count + 1, sizeof *row_access);
  bool *addressing_only = mem_calloc((size_t)k->op_count + 1, sizeof *addressing_only);
  for (int i = 0; i < k->op_count; i++) row_access[i] = k->ops[i].kop == KOP_LOAD || k->ops[i].kop == KOP_STORE;
  kernel_x86_mark_addressing_only(k, row_access, addressing_only);
  bool only_addressing = true;
  for (int i = 0; i < k->op_count; i++)
    if (kernel_x86_index_like(&k->ops[i]) && !addressing_only[i]) only_addressing = false;
  mem_free(row_access);
  mem_free(addressing_only);
  return only_addressing;
}

void kernel_x86_plan(KernelX86 *x) {
  const Kernel *k = x->k;
  KernelSchedule *s = &x->schedule;
  memset(s, 0, sizeof *s);
  x->columns = x->column_acc_registers = false;
  s->target = target_name(x->cpu->level);
  for (int p = 0; p < AXLE_MAX_RANK; p++) s->phases[p].reuse = s->phases[p].reuse_as = -1;
  int64_t inner = k->reduce_rank > 0 ? k->reduce_dims[k->reduce_rank - 1] : 1;
  if (k->kind == KERNEL_LOOP) {
    s->strategy = KSCHED_LOOP;
    int lanes = x->vectorized_lanes = kernel_x86_vector_lanes(x);
    int64_t n = k->rank > 0 ? k->dims[k->rank - 1] : 1;
    s->phases[0] = (KernelPhaseSchedule){lanes, x->vector_f64 ? 64 : 32, lanes ? 1 : 0, 0, false, false,
                                         lanes ? tail_of(n, lanes, kernel_x86_vector_tail_maskable(x)) : KTAIL_NONE,
                                         -1, -1, false, false, false, false, 0};
    if (loop_interleaves(x, lanes, n)) s->phases[0].unroll = 2;
    return;
  }
  int phases = k->kind == KERNEL_ROW ? k->phase_count : 1;
  s->strategy = k->kind == KERNEL_ROW ? KSCHED_ROW : KSCHED_REDUCE;
  for (int p = 0; p < phases; p++) {
    x->phase = p;
    int lanes = k->kind == KERNEL_ROW ? kernel_x86_vector_phase_lanes(x) : kernel_x86_vector_reduce_lanes(x);
    x->phase_lanes[p] = lanes;
    if (lanes) x->vectorized_lanes = lanes;
    KernelPhaseSchedule *ps = &s->phases[p];
    ps->lanes = lanes;
    ps->lane_bits = 32;
    if (!lanes) continue;
    bool row = k->kind == KERNEL_ROW && k->phase_blocks[p] == KBLOCK_ROW;
    ps->unroll = row ? 1 : REDUCE_PARTIALS / lanes;
    ps->accumulators = row ? 0 : REDUCE_PARTIALS / lanes;
    ps->tail = tail_of(inner, row ? lanes : REDUCE_PARTIALS, false);
  }
  if (choose_columns(x, phases)) return;
  s->split_chunks = split_chunks_of(x);
  if (s->split_chunks) s->strategy = KSCHED_SPLIT_REDUCE;
  for (int p = 0; p < phases && !s->split_chunks; p++) choose_accumulators(x, p);
  if (k->kind == KERNEL_ROW) {
    choose_reuse(x);
    choose_streaming(x);
    choose_prefetch(x);
    choose_next_row_scaling(x);
  }
}

void kernel_x86_schedule(Kernel *k, const CpuFeatures *cpu) {
  if (cpu->level < CPU_LEVEL_SSE4 || kernel_has_complex(k)) return;
  KernelX86 x = {.k = k, .cpu = cpu};
  x.forms = mem_calloc((size_t)k->op_count + 1, sizeof *x.forms);
  x.dead = mem_calloc((size_t)k->op_count + 1, 1);
  kernel_x86_plan(&x);
  k->schedule = x.schedule;
  mem_free(x.forms);
  mem_free(x.dead);
}
