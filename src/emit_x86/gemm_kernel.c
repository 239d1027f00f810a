/* The GEMM micro-kernel generator, and the FMA peak probe that tells how
 * close the kernel gets to the machine.
 *
 * The micro-kernel keeps an MR x NR tile of C in vector registers for the
 * whole K loop, so each loaded value of A or B is used many times from a
 * register: per K step it loads one row of the B panel (`vectors` vector
 * loads) and broadcasts MR values of A, for MR * vectors multiply-adds. The
 * tile's shape is picked per ISA level to fill the register file, leaving
 * just enough registers for the B row and the broadcasts:
 *
 *   avx512  14 x 32  28 zmm accumulators + 2 for B + 2 broadcasts of A = all
 *                    32 registers. 28 independent FMAs per K step cover the
 *                    FMA latency (4 cycles x 2 pipes = 8) with room, and 16
 *                    loads per 28 FMAs keep the load ports below the FMA
 *                    ports. (Broadcasting A inside each FMA, EVEX {1to16},
 *                    would free the 2 registers but load every A value
 *                    twice: 30 loads per 28 FMAs, measured 10% slower.)
 *   avx2     6 x 16  12 ymm accumulators + 2 for B + 2 broadcasts = all 16.
 *   sse4     6 x  8  12 xmm accumulators + 2 for B + broadcast + product =
 *                    all 16: no FMA before AVX2, so mulps into a scratch
 *                    register and addps into the accumulator. (4 x 8, with
 *                    8 accumulators, measured 10% slower.)
 *
 * B's rows are b_step_bytes apart: NR floats in a packed panel, or B's own
 * row stride when the kernel reads a row-major B where it lies (gemm.c
 * does that where packing B would cost more than the multiply saves: on
 * avx512 for every row-major B). rdx steps by that register once per K
 * step, an add beside 28 FMAs. The full-width avx512 kernels also
 * prefetch, each K step, the row of the panel NR columns on, which a B read
 * in place needs next (prefetches_next_panel).
 *
 * A tile at C's right edge, with fewer than NR columns to write: on avx512
 * a second set of kernels stores (and, when adding, loads) C under lane
 * masks, k1 for the tile's first vector and k2 for its second, made from
 * the column_mask argument, so the kernel writes C's valid columns itself
 * and no float past them (AVX-512 masked loads and stores do not fault on
 * masked-off lanes). Below avx512, and before, such a tile ran into a
 * scratch tile that C code copied out element by element.
 *
 * A masked tile of at most 16 columns (C's last columns, or the columns
 * before C's first cache line) runs a narrow kernel on avx512: the same
 * shape with one vector across (14 accumulators), half the multiply-adds.
 *
 * A narrow product (N up to 512) on avx512 skips packing A: a third set of
 * kernels broadcasts A's elements from its rows where they lie, a_row_bytes
 * apart (the 9th argument), through three base registers (rows 0-4, 5-9,
 * 10-13) and an index of one or three rows' bytes, scaled by 1, 2 or 4.
 * Those kernels save and restore the four callee-saved registers they take
 * (rbx, rbp, r12, r13); the others need no prologue.
 *
 * Registers (System V):
 *   rdi kc   rsi a_panel   rdx b_panel   rcx c   r8 c_row_bytes
 *   r9 accumulate   r10 b_step_bytes (the 7th argument, from the stack)
 *   rax loop counter (first the column mask, the 8th argument)
 *   r11 the C row being stored   k1, k2 the column masks */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emit_x86/gemm.h"
#include "emit_x86/jit_memory.h"

static const GemmKernelShape gemm_kernel_shapes[] = {
  /* level             mr  vectors lanes  nr  unroll */
  {CPU_LEVEL_SSE4,      6,  2,      4,     8,  4},
  {CPU_LEVEL_AVX2,      6,  2,      8,    16,  4},
  {CPU_LEVEL_AVX512,   14,  2,     16,    32,  4},
};

const GemmKernelShape *gemm_kernel_shape_for_level(CpuLevel level) {
  for (size_t i = 0; i < sizeof gemm_kernel_shapes / sizeof gemm_kernel_shapes[0]; i++)
    if (gemm_kernel_shapes[i].level == level) return &gemm_kernel_shapes[i];
  return NULL;
}

/* Vector register n in the width of the shape's level. */
static X86Reg vector_reg(const GemmKernelShape *s, int n) {
  if (s->lanes == 16) return x86_zmm(n);
  return s->lanes == 8 ? x86_ymm(n) : x86_xmm(n);
}
static int vector_bytes(const GemmKernelShape *s) { return s->lanes * 4; }
static X86Reg accumulator(const GemmKernelShape *s, int row, int v) {
  return vector_reg(s, row * s->vectors + v);
}
static X86Reg b_reg(const GemmKernelShape *s, int v) {
  return vector_reg(s, s->mr * s->vectors + v);
}
/* The registers after B's: broadcasts of A (avx2, sse4) and sse4's product. */
static X86Reg spare_reg(const GemmKernelShape *s, int n) {
  return vector_reg(s, s->mr * s->vectors + s->vectors + n);
}
static bool is_vex(const GemmKernelShape *s) { return s->level != CPU_LEVEL_SSE4; }

/* Where the kernel that reads A in place finds row i of the tile at K
 * step `step`: rows 0-4 from rsi, 5-9 from r12 (rsi + 5 rows), 10-13 from
 * r13 (rsi + 10 rows), each at 0, 1, 2, 3 or 4 rows on (rbx one row's
 * bytes, rbp three rows'), since x86 addressing scales an index by 1, 2, 4
 * or 8 only. */
static X86Operand a_in_place_element(int i, int step) {
  static const X86Reg bases[] = {X86_RSI, X86_R12, X86_R13};
  X86Reg base = bases[i / 5];
  int disp = step * 4;
  switch (i % 5) {
    case 0: return x86_mem(4, base, disp);
    case 1: return x86_mem_index(4, base, X86_RBX, 1, disp);
    case 2: return x86_mem_index(4, base, X86_RBX, 2, disp);
    case 3: return x86_mem_index(4, base, X86_RBP, 1, disp);
    default: return x86_mem_index(4, base, X86_RBX, 4, disp);
  }
}

/* Whether a kernel prefetches, each K step, the B row NR floats on: the
 * same row of the next panel when B is read where it lies (gemm.c,
 * b_in_place_pays), where a large B's rows come from memory a page or so
 * apart and the hardware prefetchers do not follow; in a packed panel it
 * is the next step's row, already on its way, and the two prefetches cost
 * two load slots beside 16 loads and 28 FMAs. The full-width avx512
 * kernels only: a column-masked tile is C's last, with no panel after it. */
static bool prefetches_next_panel(const GemmKernelShape *s, GemmKernelVariant variant) {
  return s->level == CPU_LEVEL_AVX512 && s->vectors == 2 && !variant.column_masked;
}

/* C tile += one row of A's panel (broadcast) times one row of B's panel, for
 * the tile's first `rows` rows: K step `step` of the unrolled loop, addressed
 * by displacement from rsi (or A's rows in place) and rdx. */
static void emit_k_step(X86Buffer *cb, const GemmKernelShape *s, GemmKernelVariant variant, int step) {
  int rows = variant.rows, a_disp = step * s->mr * 4;
  for (int v = 0; v < s->vectors; v++)
    x86_emit(cb, is_vex(s) ? X86_VMOVUPS : X86_MOVUPS, x86_reg(b_reg(s, v)),
             x86_mem(vector_bytes(s), X86_RDX, v * vector_bytes(s)));
  if (prefetches_next_panel(s, variant))
    for (int line = 0; line < s->nr * 4; line += 64)
      x86_emit(cb, X86_PREFETCHT0, x86_mem(1, X86_RDX, s->nr * 4 + line));
  x86_emit(cb, X86_ADD, x86_reg(X86_RDX), x86_reg(X86_R10));
  for (int i = 0; i < rows; i++) {
    X86Operand a_elem = variant.a_in_place ? a_in_place_element(i, step) : x86_mem(4, X86_RSI, a_disp + i * 4);
    if (s->level == CPU_LEVEL_AVX2 || s->level == CPU_LEVEL_AVX512) {
      /* Two broadcast registers in turn, so one row's broadcast need not
       * wait for the previous row's FMAs to have read theirs. */
      X86Reg a = spare_reg(s, i % 2);
      x86_emit(cb, X86_VBROADCASTSS, x86_reg(a), a_elem);
      for (int v = 0; v < s->vectors; v++)
        x86_emit(cb, X86_VFMADD231PS, x86_reg(accumulator(s, i, v)), x86_reg(b_reg(s, v)),
                 x86_reg(a));
    } else {
      X86Reg a = spare_reg(s, 0), product = spare_reg(s, 1);
      x86_emit(cb, X86_MOVSS, x86_reg(a), a_elem);
      x86_emit(cb, X86_SHUFPS, x86_reg(a), x86_reg(a), x86_imm(0));
      for (int v = 0; v < s->vectors; v++) {
        /* The last product may overwrite the broadcast: it is not read again. */
        X86Reg p = v + 1 < s->vectors ? product : a;
        if (p != a) x86_emit(cb, X86_MOVAPS, x86_reg(p), x86_reg(a));
        x86_emit(cb, X86_MULPS, x86_reg(p), x86_reg(b_reg(s, v)));
        x86_emit(cb, X86_ADDPS, x86_reg(accumulator(s, i, v)), x86_reg(p));
      }
    }
  }
}

/* Starts loading the C tile into L1 while the K loop runs: C's rows are
 * often a multiple of 4 KiB apart, so they compete for the same L1 sets and
 * are rarely still there from the last K block. */
static void emit_tile_prefetch(X86Buffer *cb, const GemmKernelShape *s, int rows) {
  int row_bytes = s->nr * 4;
  x86_emit(cb, X86_MOV, x86_reg(X86_R11), x86_reg(X86_RCX));
  for (int i = 0; i < rows; i++) {
    for (int offset = 0; offset < row_bytes; offset += 64)
      x86_emit(cb, X86_PREFETCHT0, x86_mem(1, X86_R11, offset));
    /* The row's last byte: an unaligned row spans one more line. */
    x86_emit(cb, X86_PREFETCHT0, x86_mem(1, X86_R11, row_bytes - 1));
    if (i + 1 < rows) x86_emit(cb, X86_ADD, x86_reg(X86_R11), x86_reg(X86_R8));
  }
}

/* The avx512 kernels fetch the C tile again when this many iterations of
 * the main loop are left (the 28 K steps after it are some 400 cycles of
 * work: time for a line to come from L2 or L3). The fetch at the kernel's
 * start is often lost by the time the tile is stored: C's rows a multiple
 * of 4 KiB apart (1024^2, 2048^2) fall into the same L1 sets as each other
 * and as the rows of a B read in place, which stream through those sets for
 * the whole K loop, and the stores then missed L1. Measured on one thread
 * (paired medians of thread CPU time, two or three rounds): 512^3
 * 1.02x, 2048^3 1.01x, 128x3072x768 1.01x, 512x768x768 and 256x512x784
 * 1.01x, 1024^3 0.99-1.01x, 128^3 and 256^3 1.00x. A kernel of fewer
 * iterations keeps the first fetch only. */
enum { C_REFETCH_ITERATIONS_LEFT = 8 };

static bool refetches_tile(const GemmKernelShape *s) { return s->level == CPU_LEVEL_AVX512; }

/* One loop over K: rax iterations of `steps` K steps each. */
static void emit_k_loop(X86Buffer *cb, const GemmKernelShape *s, GemmKernelVariant variant, int steps,
                        X86Label done) {
  x86_emit(cb, X86_JE, x86_rel(done));
  x86_align(cb, 16);
  X86Label loop = x86_label_new(cb);
  x86_label_bind(cb, loop);
  for (int step = 0; step < steps; step++) emit_k_step(cb, s, variant, step);
  if (variant.a_in_place) {
    static const X86Reg bases[] = {X86_RSI, X86_R12, X86_R13};
    for (int b = 0; b < 3 && b * 5 < variant.rows; b++) x86_emit(cb, X86_ADD, x86_reg(bases[b]), x86_imm(steps * 4));
  } else {
    x86_emit(cb, X86_ADD, x86_reg(X86_RSI), x86_imm(steps * s->mr * 4));
  }
  if (steps > 1 && refetches_tile(s)) {
    X86Label skip = x86_label_new(cb);
    x86_emit(cb, X86_CMP, x86_reg(X86_RAX), x86_imm(C_REFETCH_ITERATIONS_LEFT));
    x86_emit(cb, X86_JNE, x86_rel(skip));
    emit_tile_prefetch(cb, s, variant.rows);
    x86_label_bind(cb, skip);
  }
  x86_emit(cb, X86_DEC, x86_reg(X86_RAX));
  x86_emit(cb, X86_JNE, x86_rel(loop));
}

/* The opmask register of the tile's vector v in a column-masked kernel. */
static X86Reg column_mask_reg(int v) { return v == 0 ? X86_K1 : X86_K2; }

/* Writes the accumulators to C, row by row through r11; with add, C's old
 * value is added first. Column-masked: only the lanes of k1/k2, through B's
 * first register (free once the K loop is done). */
static void emit_tile_store(X86Buffer *cb, const GemmKernelShape *s, int rows, bool add, bool masked) {
  int vb = vector_bytes(s);
  x86_emit(cb, X86_MOV, x86_reg(X86_R11), x86_reg(X86_RCX));
  for (int i = 0; i < rows; i++) {
    for (int v = 0; v < s->vectors; v++) {
      X86Reg acc = accumulator(s, i, v);
      X86Operand c = x86_mem(vb, X86_R11, v * vb);
      if (masked) {
        X86Reg k = column_mask_reg(v), old = b_reg(s, 0);
        if (add) {
          x86_emit(cb, X86_VMOVUPS, x86_zero_masked(x86_reg(old), k), c);
          x86_emit(cb, X86_VADDPS, x86_reg(acc), x86_reg(acc), x86_reg(old));
        }
        x86_emit(cb, X86_VMOVUPS, x86_merge_masked(c, k), x86_reg(acc));
        continue;
      }
      if (add && is_vex(s)) {
        x86_emit(cb, X86_VADDPS, x86_reg(acc), x86_reg(acc), c);
      } else if (add) {
        /* addps would fault on a C row that is not 16-byte aligned. */
        x86_emit(cb, X86_MOVUPS, x86_reg(spare_reg(s, 0)), c);
        x86_emit(cb, X86_ADDPS, x86_reg(acc), x86_reg(spare_reg(s, 0)));
      }
      x86_emit(cb, is_vex(s) ? X86_VMOVUPS : X86_MOVUPS, c, x86_reg(acc));
    }
    if (i + 1 < rows) x86_emit(cb, X86_ADD, x86_reg(X86_R11), x86_reg(X86_R8));
  }
}

/* The A-in-place kernel's own registers (callee-saved in System V). */
static const X86Reg a_in_place_saved[] = {X86_RBX, X86_RBP, X86_R12, X86_R13};
enum { A_IN_PLACE_SAVED = 4 };

bool gemm_kernel_emit(X86Buffer *cb, const GemmKernelShape *shape, GemmKernelVariant variant) {
  /* A narrow kernel is the shape with one vector across the tile: the same
   * panels, its first `lanes` columns. */
  GemmKernelShape one_vector = *shape;
  one_vector.vectors = 1;
  one_vector.nr = one_vector.lanes;
  const GemmKernelShape *s = variant.narrow ? &one_vector : shape;
  int rows = variant.rows;
  bool column_masked = variant.column_masked;
  assert(!column_masked || s->level == CPU_LEVEL_AVX512);
  assert(!variant.a_in_place || s->mr <= 15);
  assert(!variant.narrow || column_masked);
  x86_listing_note(cb, "gemm micro-kernel %s: %d of %d rows x %d columns of C%s%s, K unrolled %d times",
                   cpu_level_name(s->level), rows, s->mr, s->nr,
                   column_masked ? " (the columns of column_mask)" : "",
                   variant.a_in_place ? ", A read in place (rows a_row_bytes apart)" : "", s->unroll);
  /* The 7th to 9th arguments lie above the return address (and above the
   * registers this kernel saves). */
  int args = 8;
  if (variant.a_in_place) {
    for (int r = 0; r < A_IN_PLACE_SAVED; r++) x86_emit(cb, X86_PUSH, x86_reg(a_in_place_saved[r]));
    args += 8 * A_IN_PLACE_SAVED;
    x86_emit(cb, X86_MOV, x86_reg(X86_RBX), x86_mem(8, X86_RSP, args + 16));
    x86_emit(cb, X86_LEA, x86_reg(X86_RBP), x86_mem_index(8, X86_RBX, X86_RBX, 2, 0));
    x86_emit(cb, X86_LEA, x86_reg(X86_R12), x86_mem_index(8, X86_RSI, X86_RBX, 4, 0));
    x86_emit(cb, X86_ADD, x86_reg(X86_R12), x86_reg(X86_RBX));
    x86_emit(cb, X86_LEA, x86_reg(X86_R13), x86_mem_index(8, X86_R12, X86_RBX, 4, 0));
    x86_emit(cb, X86_ADD, x86_reg(X86_R13), x86_reg(X86_RBX));
  }
  x86_emit(cb, X86_MOV, x86_reg(X86_R10), x86_mem(8, X86_RSP, args));
  if (column_masked) {
    x86_emit(cb, X86_MOV, x86_reg(X86_RAX), x86_mem(8, X86_RSP, args + 8));
    x86_emit(cb, X86_KMOVW, x86_reg(column_mask_reg(0)), x86_reg(X86_EAX));
    x86_emit(cb, X86_SHR, x86_reg(X86_RAX), x86_imm(16));
    x86_emit(cb, X86_KMOVW, x86_reg(column_mask_reg(1)), x86_reg(X86_EAX));
  }
  emit_tile_prefetch(cb, s, rows);
  for (int i = 0; i < rows; i++)
    for (int v = 0; v < s->vectors; v++) {
      X86Reg acc = accumulator(s, i, v);
      if (is_vex(s)) x86_emit(cb, X86_VXORPS, x86_reg(acc), x86_reg(acc), x86_reg(acc));
      else x86_emit(cb, X86_XORPS, x86_reg(acc), x86_reg(acc));
    }
  int shift = 0;
  while ((1 << shift) < s->unroll) shift++;
  X86Label tail = x86_label_new(cb), store = x86_label_new(cb), overwrite = x86_label_new(cb),
           done = x86_label_new(cb);
  x86_listing_note(cb, "main loop: %d K steps per iteration, kc / %d iterations", s->unroll,
                   s->unroll);
  x86_emit(cb, X86_MOV, x86_reg(X86_RAX), x86_reg(X86_RDI));
  x86_emit(cb, X86_SHR, x86_reg(X86_RAX), x86_imm(shift));
  emit_k_loop(cb, s, variant, s->unroll, tail);
  x86_label_bind(cb, tail);
  x86_listing_note(cb, "tail loop: the kc %% %d remaining K steps", s->unroll);
  x86_emit(cb, X86_MOV, x86_reg(X86_RAX), x86_reg(X86_RDI));
  x86_emit(cb, X86_AND, x86_reg(X86_RAX), x86_imm(s->unroll - 1));
  emit_k_loop(cb, s, variant, 1, store);
  x86_label_bind(cb, store);
  x86_listing_note(cb, "store the tile: C = C + AB when accumulate, else C = AB");
  x86_emit(cb, X86_TEST, x86_reg(X86_R9), x86_reg(X86_R9));
  x86_emit(cb, X86_JE, x86_rel(overwrite));
  emit_tile_store(cb, s, rows, true, column_masked);
  x86_emit(cb, X86_JMP, x86_rel(done));
  x86_label_bind(cb, overwrite);
  emit_tile_store(cb, s, rows, false, column_masked);
  x86_label_bind(cb, done);
  /* Dirty upper halves of ymm/zmm registers slow down later SSE code. */
  if (is_vex(s)) x86_emit0(cb, X86_VZEROUPPER);
  for (int r = A_IN_PLACE_SAVED - 1; variant.a_in_place && r >= 0; r--)
    x86_emit(cb, X86_POP, x86_reg(a_in_place_saved[r]));
  x86_emit0(cb, X86_RET);
  return !cb->failed;
}

/* ------------------------------------------------------------- FMA peak */

/* void peak(int64_t iterations): each iteration runs `chains` independent
 * multiply-adds on full vectors, enough to keep every FMA pipe busy through
 * the instruction's latency (sse4: a mulps into a fresh copy, then an addps
 * into the chain). Returns the flops of one iteration. */
static int64_t peak_loop_emit(X86Buffer *cb, const GemmKernelShape *s) {
  int chains = s->level == CPU_LEVEL_AVX512 ? 24 : s->level == CPU_LEVEL_AVX2 ? 12 : 6;
  X86Reg x = vector_reg(s, is_vex(s) ? chains : 2 * chains);
  X86Reg y = vector_reg(s, is_vex(s) ? chains + 1 : 2 * chains + 1);
  for (int i = 0; i < chains + 2; i++) {
    X86Reg r = i < chains ? vector_reg(s, i) : i == chains ? x : y;
    if (is_vex(s)) x86_emit(cb, X86_VXORPS, x86_reg(r), x86_reg(r), x86_reg(r));
    else x86_emit(cb, X86_XORPS, x86_reg(r), x86_reg(r));
  }
  x86_align(cb, 16);
  X86Label loop = x86_label_new(cb);
  x86_label_bind(cb, loop);
  for (int i = 0; i < chains; i++) {
    if (is_vex(s)) {
      x86_emit(cb, X86_VFMADD231PS, x86_reg(vector_reg(s, i)), x86_reg(x), x86_reg(y));
    } else {
      X86Reg product = vector_reg(s, chains + i);
      x86_emit(cb, X86_MOVAPS, x86_reg(product), x86_reg(x));
      x86_emit(cb, X86_MULPS, x86_reg(product), x86_reg(y));
      x86_emit(cb, X86_ADDPS, x86_reg(vector_reg(s, i)), x86_reg(product));
    }
  }
  x86_emit(cb, X86_DEC, x86_reg(X86_RDI));
  x86_emit(cb, X86_JNE, x86_rel(loop));
  if (is_vex(s)) x86_emit0(cb, X86_VZEROUPPER);
  x86_emit0(cb, X86_RET);
  return (int64_t)chains * s->lanes * 2;
}

/* CPU time of this thread: on a shared machine, the time the probe was
 * descheduled must not count against the core. */
static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double gemm_peak_gflops_measure(CpuLevel level, double seconds, int repeats, Status *st) {
  const GemmKernelShape *s = gemm_kernel_shape_for_level(level);
  if (!s) {
    status_error(st, STATUS_UNSUPPORTED, "no FMA peak probe for level %s", cpu_level_name(level));
    return 0.0;
  }
  X86Buffer cb;
  x86_buffer_init(&cb);
  int64_t flops_per_iteration = peak_loop_emit(&cb, s);
  JitCode jc;
  bool ok = x86_buffer_finish(&cb, st) && jit_code_create(&jc, cb.code, cb.size, st);
  if (ok) jit_code_name(&jc, 0, cb.size, "axle FMA peak probe (%s)", cpu_level_name(level));
  x86_buffer_free(&cb);
  if (!ok) return 0.0;
  void (*peak)(int64_t) = (void (*)(int64_t))jit_code_function(&jc, 0);
  /* Calibrate the iteration count to about `seconds` per timing. */
  int64_t iterations = 1 << 16;
  for (;;) {
    double t0 = seconds_now();
    peak(iterations);
    double t = seconds_now() - t0;
    if (t >= seconds / 4 || iterations > (INT64_C(1) << 40)) {
      if (t > 0) iterations = (int64_t)((double)iterations * seconds / t) + 1;
      break;
    }
    iterations *= 4;
  }
  if (repeats < 1) repeats = 1;
  double *rates = mem_calloc((size_t)repeats, sizeof *rates);
  for (int r = 0; r < repeats; r++) {
    double t0 = seconds_now();
    peak(iterations);
    double t = seconds_now() - t0;
    rates[r] = (double)iterations * (double)flops_per_iteration / t * 1e-9;
  }
  qsort(rates, (size_t)repeats, sizeof *rates, compare_doubles);
  double median = rates[repeats / 2];
  mem_free(rates);
  jit_code_free(&jc);
  return median;
}
