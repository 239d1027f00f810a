/* The GEMM driver: cache blocking, packing, edge tiles, batches, threads and
 * the small-matrix path, around the generated micro-kernel (gemm_kernel.c).
 *
 * The loops, outermost first, for one product:
 *
 *   pack all of B into NR-column panels     one round of tasks (K block x N
 *                                           block); shared by every task below
 *   macro tiles of C (MC x NC)              one task each, by the thread pool
 *     K blocks (KC)                         in order, inside the task
 *       pack A[MC, KC] into MR-row panels   per task, in a per-thread buffer
 *                                           (or read A in place: N <= 512)
 *       NR-column panels of B               a KC x NR panel stays in L1 ...
 *         MR-row panels of A                ... while A's panels come from L2
 *           micro-kernel: C tile (+)= A panel · B panel
 *
 * Cache blocking, for a core with 64 KiB of L1d and 1 MiB of L2 (this
 * machine's Zen 5 has 48 KiB of L1d; the sizes fit that too):
 *   KC = 256  the B panel the kernel re-reads for every A panel is KC x NR
 *             floats: 256 x 32 x 4 = 32 KiB on avx512, half of L1, leaving
 *             the other half for the A panel streaming through (14 KiB) and
 *             the C tile. Longer K runs also amortise the C tile's load and
 *   or 512    store over more FMAs: where C is wide (N >= 512), K blocks of
 *             512 (gemm_k_block_max).
 *   MC ~ 336  the packed A block is MC x KC floats, re-read once per B panel,
 *             so it must stay in L2: 336 x 256 x 4 = 336 KiB, a third of L2,
 *             leaving room for the B panels passing through and for C.
 *             (With KC = 512 the block is 672 KiB; halving MC there to keep
 *             it at 336 KiB measured no faster, 1.00-1.01x on 1024^3 and
 *             2048^3, and each row block reads B once more.)
 *   NC ~ 1024 each B panel of a task is read once from L2 or L3 and then
 *             used from L1 by MC / MR kernel calls, so NC does not need to fit
 *             a cache; it sets how often A is packed again (N / NC times) and
 *             the size of a task.
 * Blocks are evened out over the extent (1023 rows make four blocks of
 * 266, a quarter rounded up to MR = 14, rather than 336 x 3 + 15) and,
 * when more than one thread runs the product, made smaller until it has at
 * least GEMM_MIN_TASKS tasks (fewer for a small one), so that mid-sized
 * products still spread over the cores. One thread keeps the blocks the
 * caches ask for: there a smaller block only costs, each row block reading
 * all of B again and each column block packing A again.
 * Only the K blocking decides a bit of C, and it depends on the shape alone;
 * the M and N blocks only say which task computes a tile (see gemm.h on
 * determinism).
 *
 * Edge tiles: a tile with fewer than MR rows left runs the kernel generated
 * for exactly its number of rows (the same instructions, minus the rows it
 * lacks). A tile with fewer than NR columns runs, on avx512, the kernel
 * that stores under lane masks; below, it runs into a scratch tile, whose
 * valid part is then copied or added into C in C code: C + tile is the same
 * float as the kernel's tile + C, so an element's bits do not depend on
 * whether its tile was an edge tile. */
#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "emit_x86/gemm.h"
#include "emit_x86/jit_memory.h"

enum {
  GEMM_KC = 256,
  GEMM_KC_WIDE = 512,
  GEMM_WIDE_N = 512,
  GEMM_MC_TARGET = 336,
  GEMM_NC_TARGET = 1024,
  GEMM_MIN_TASKS = 8,
  /* Any thread count above one: the tasks do not depend on how many. */
  GEMM_SEVERAL_THREADS = 2,
  /* multiply-adds: 8 MFLOP, about 40 us on one core. Waking a pool thread
   * and waiting for it costs some microseconds (tens on a busy machine):
   * at 1 << 20 a 128^3 product was two tasks, and 2 threads ran it 1.2-1.35x
   * slower than 1 (the median of run_bench on the development machine,
   * whose two vCPUs share one core (issue 17): a second thread adds no FMA
   * throughput there to pay for its wake-up). */
  GEMM_TASK_VOLUME = 1 << 22,
  /* Below this many multiply-adds packing costs more than it saves. */
  GEMM_DIRECT_VOLUME = 32 * 32 * 32,
  GEMM_MAX_MR = 14,          /* the largest MR and MR x NR of gemm_kernel.c's shapes */
  GEMM_MAX_TILE = 14 * 32,
  /* Packed B of a batch is made this many floats at most (64 MiB) at once. */
  GEMM_PACKED_B_LIMIT = 16 << 20,
  GEMM_PACKED_B_FRESH_LIMIT = 1 << 20,
};

/* One A packing buffer per thread that may run at once. A task takes any
 * free one: which buffer holds a panel cannot change a result. */
typedef struct GemmScratch {
  atomic_bool busy;
  float *a_pack;   /* MC x KC, 64-byte aligned inside memory */
  void *memory;
  size_t floats;   /* what a_pack holds */
} GemmScratch;

/* The memory of one product call: packed B and the A scratch buffers. A
 * plan keeps the last call's workspace for the next, so that a program run
 * again and again allocates nothing and touches no fresh page per run (a
 * fresh mapping costs a page fault per 4 KiB: 2,000 for a 1024^3 product,
 * a sixth of its time). Buffers only grow, up to what the largest product of
 * the plan needs (packed B is at most GEMM_PACKED_B_LIMIT floats). */
typedef struct GemmWorkspace {
  void *b_memory;
  size_t b_floats;           /* what b_memory holds past its 64-byte alignment */
  GemmScratch *scratch;
  int scratch_count;
} GemmWorkspace;

enum { GEMM_KERNEL_KINDS = 8 };
static int kernel_kind(bool column_masked, bool a_in_place, bool narrow) {
  return column_masked + 2 * a_in_place + 4 * narrow;
}

/* A narrow kernel is column-masked: it serves tiles of at most one vector. */
static bool kind_exists(int kind) { return !(kind >> 2) || (kind & 1); }

struct GemmPlan {
  const GemmKernelShape *shape;
  JitCode code;
  /* kernels[kind][r] computes the first r rows of a tile, r in 1..MR;
   * all of them lie in one mapping. kind = kernel_kind(column_masked,
   * a_in_place, narrow): plain; storing only the columns of an edge tile;
   * reading A's rows where they lie; one vector across (masked only). All
   * six on avx512; below, the plain ones only (NULL), an edge tile going
   * through a scratch tile and A always packed. */
  GemmKernelFn *kernels[GEMM_KERNEL_KINDS][GEMM_MAX_MR + 1];
  /* The workspace kept between calls; a call takes it (or makes its own if
   * another call running at the same time holds it) and puts it back. */
  _Atomic(GemmWorkspace *) *idle_workspace;
};

GemmPlan *gemm_plan_create(const CpuFeatures *cpu, Status *st) {
  const GemmKernelShape *shape = gemm_kernel_shape_for_level(cpu->level);
  if (!shape) {
    status_error(st, STATUS_UNSUPPORTED, "the GEMM needs SSE4.1 at least; this CPU level is %s",
                 cpu_level_name(cpu->level));
    return NULL;
  }
  assert(shape->mr <= GEMM_MAX_MR && shape->mr * shape->nr <= GEMM_MAX_TILE);
  X86Buffer cb;
  x86_buffer_init(&cb);
  /* offsets[kind][rows], in emission order, and where the code ends */
  size_t offsets[GEMM_KERNEL_KINDS][GEMM_MAX_MR + 1], end[GEMM_KERNEL_KINDS][GEMM_MAX_MR + 1];
  int kinds = shape->level == CPU_LEVEL_AVX512 ? GEMM_KERNEL_KINDS : 1;
  for (int kind = 0; kind < kinds; kind++)
    for (int rows = shape->mr; rows >= 1 && kind_exists(kind); rows--) {
      x86_align(&cb, 64);
      offsets[kind][rows] = cb.size;
      gemm_kernel_emit(&cb, shape, (GemmKernelVariant){rows, kind & 1, kind >> 1 & 1, kind >> 2});
      end[kind][rows] = cb.size;
    }
  GemmPlan *plan = mem_calloc(1, sizeof *plan);
  bool ok = x86_buffer_finish(&cb, st) && jit_code_create(&plan->code, cb.code, cb.size, st);
  for (int kind = 0; ok && kind < kinds; kind++)
    for (int rows = shape->mr; rows >= 1 && kind_exists(kind); rows--)
      jit_code_name(&plan->code, offsets[kind][rows], end[kind][rows] - offsets[kind][rows],
                    "axle gemm micro-kernel %dx%d (%d rows%s%s%s)", shape->mr, shape->nr, rows,
                    kind & 1 ? ", masked columns" : "", kind >> 1 & 1 ? ", A in place" : "",
                    kind >> 2 ? ", one vector" : "");
  x86_buffer_free(&cb);
  if (!ok) {
    mem_free(plan);
    return NULL;
  }
  plan->shape = shape;
  plan->idle_workspace = mem_calloc(1, sizeof *plan->idle_workspace);
  atomic_init(plan->idle_workspace, NULL);
  for (int kind = 0; kind < kinds; kind++)
    for (int rows = 1; rows <= shape->mr && kind_exists(kind); rows++)
      plan->kernels[kind][rows] = (GemmKernelFn *)jit_code_function(&plan->code, offsets[kind][rows]);
  return plan;
}

static void workspace_free(GemmWorkspace *w) {
  if (!w) return;
  for (int i = 0; i < w->scratch_count; i++) mem_free(w->scratch[i].memory);
  mem_free(w->scratch);
  mem_free(w->b_memory);
  mem_free(w);
}

void gemm_plan_free(GemmPlan *plan) {
  if (!plan) return;
  workspace_free(atomic_load(plan->idle_workspace));
  mem_free(plan->idle_workspace);
  jit_code_free(&plan->code);
  mem_free(plan);
}

const GemmKernelShape *gemm_plan_kernel_shape(const GemmPlan *plan) { return plan->shape; }
const void *gemm_plan_kernel_address(const GemmPlan *plan) { return plan->code.base; }

bool gemm_plan_print_listing(const GemmPlan *plan, FILE *out, Status *st) {
  X86Buffer cb;
  x86_buffer_init(&cb);
  x86_buffer_enable_listing(&cb);
  gemm_kernel_emit(&cb, plan->shape, (GemmKernelVariant){plan->shape->mr, false, false, false});
  bool ok = x86_buffer_finish(&cb, st);
  if (ok) x86_listing_print(&cb, out);
  x86_buffer_free(&cb);
  return ok;
}

/* ------------------------------------------------------------- blocking */

/* M is cut into row tiles first (row_tile), then into blocks of m_tiles
 * whole tiles; m_block is their most rows, m_tiles x MR. */
typedef struct GemmBlocks {
  int64_t m_block, m_count, m_tiles;
  int64_t n_block, n_count;
  int64_t k_block, k_count;
} GemmBlocks;

static int64_t round_up(int64_t x, int64_t unit) { return (x + unit - 1) / unit * unit; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Cuts extent (> 0) into the fewest blocks of at most max_block (a multiple
 * of unit), of even size rounded up to unit; the last block may be shorter. */
static void extent_split(int64_t extent, int64_t max_block, int64_t unit, int64_t *block,
                         int64_t *count) {
  int64_t pieces = (extent + max_block - 1) / max_block;
  *block = round_up((extent + pieces - 1) / pieces, unit);
  *count = (extent + *block - 1) / *block;
}

/* How many tasks a product is cut into on `threads` threads: on more than
 * one, GEMM_MIN_TASKS, so that mid-sized products spread over the cores,
 * but no task smaller than GEMM_TASK_VOLUME multiply-adds, where waking a
 * thread would cost more than it saves (a 128^3 product is one task, 256^3
 * four, not eight). On one thread, one: every cut then costs a pass over an
 * operand and saves nothing. 128 x 3072 x 768 was cut into 4 row blocks of
 * 3 tiles at most, and so read its 9 MiB B four times from L3, each B panel
 * feeding 3 kernel calls or one; whole, it ran 2-12% faster on one thread
 * (paired medians on the busy development machine). */
static int64_t tasks_wanted(const GemmProblem *p, int64_t threads) {
  if (threads <= 1) return 1;
  double volume = (double)p->batch * (double)p->m * (double)p->n * (double)p->k;
  double by_volume = volume / GEMM_TASK_VOLUME;
  return by_volume >= GEMM_MIN_TASKS ? GEMM_MIN_TASKS : by_volume >= 1 ? (int64_t)by_volume : 1;
}

/* The row tiles of C's M rows: as few as MR allows, their heights evened
 * out (128 rows are 8 tiles of 13 and 2 of 12, not 9 of 14 and one of 2).
 * A tile of 2 rows has 4 accumulators, one multiply-add per K step on
 * each: it waits out the FMA latency (4 cycles a step where 2 would issue
 * its FMAs), and at M = 128 it took 7% of the run for 1.6% of the work.
 * Tile t starts at row *row0 and has *rows rows. Which kernel height
 * computes a row never changes its bits: every height runs the same
 * instructions per row. */
static int64_t row_tile_count(int64_t m, int mr) { return (m + mr - 1) / mr; }
static int64_t row_tile_start(int64_t m, int mr, int64_t t) {
  int64_t tiles = row_tile_count(m, mr);
  return t * (m / tiles) + min64(t, m % tiles);
}
static void row_tile(int64_t m, int mr, int64_t t, int64_t *row0, int64_t *rows) {
  *row0 = row_tile_start(m, mr, t);
  *rows = row_tile_start(m, mr, t + 1) - *row0;
}

/* The longest K block: GEMM_KC, or GEMM_KC_WIDE where C is wide (N >=
 * GEMM_WIDE_N). Each kernel call loads its C tile (after the first K block)
 * and stores it once per K block. In a wide product a task's block of C
 * (MC rows of N or NC columns: 336 x 1024 floats, 1.3 MiB) outgrows L2
 * beside the packed A block, so those loads come from L3, and C's rows,
 * 2 KiB or more apart (a multiple of 4 KiB in 1024^3 and 2048^3), fall
 * into a few sets of L1, where the tile's stores miss. Half as many K
 * blocks halve that traffic. Measured on one thread (in-process
 * alternation of the two choices, thread CPU time, medians of 15-60
 * calls): 1024^3 1.03-1.05x, 2048^3 1.03x, 256 x 784 x 512 1.02x, 512^3
 * and 512 x 768 x 768 1.01x, 128 x 3072 x 768 1.00x; a B panel of 512 x 32
 * floats (64 KiB) no longer fits L1, but a B read in place with rows a
 * multiple of 2 KiB apart never did (its rows share L1 sets), and a packed
 * one streams from L2 as fast (packed 1024^3 1.04x). A narrow C gains
 * nothing: attention's P·V (96 x 512x512 · 512x64) ran 3% slower with
 * 512, so it keeps 256. The choice depends on the shape alone, as every
 * K blocking must (gemm.h, determinism). */
static int64_t gemm_k_block_max(const GemmProblem *p) { return p->n >= GEMM_WIDE_N ? GEMM_KC_WIDE : GEMM_KC; }

static GemmBlocks gemm_blocks_choose(const GemmKernelShape *s, const GemmProblem *p, int64_t threads) {
  GemmBlocks b;
  int64_t m_max_tiles = GEMM_MC_TARGET / s->mr, n_max = GEMM_NC_TARGET / s->nr * s->nr;
  int64_t wanted = tasks_wanted(p, threads);
  extent_split(p->k, gemm_k_block_max(p), 1, &b.k_block, &b.k_count);
  for (;;) {
    extent_split(row_tile_count(p->m, s->mr), m_max_tiles, 1, &b.m_tiles, &b.m_count);
    b.m_block = b.m_tiles * s->mr;
    extent_split(p->n, n_max, s->nr, &b.n_block, &b.n_count);
    if (p->batch * b.m_count * b.n_count >= wanted) break;
    /* Halve a block while both halves keep at least two tiles: M's first,
     * since B is packed once for all row blocks while every column block
     * packs its own copy of A. */
    if (b.m_tiles >= 4) m_max_tiles = (b.m_tiles + 1) / 2;
    else if (b.n_block >= 4 * s->nr) n_max = round_up(b.n_block / 2, s->nr);
    else break;
  }
  return b;
}

/* -------------------------------------------------------------- packing */

#if defined(__SSE2__)
/* Stores the first `count` (1..4) floats of v at dst. */
static void store_first_lanes(float *dst, __m128 v, int count) {
  if (count == 4) {
    _mm_storeu_ps(dst, v);
    return;
  }
  if (count >= 2) _mm_storel_pi((__m64 *)dst, v);
  if (count == 1) _mm_store_ss(dst, v);
  if (count == 3) _mm_store_ss(dst + 2, _mm_movehl_ps(v, v));
}

/* Lanes l..l+count (count 1..4) of a transposing panel copy, 4 steps at a
 * time as 4 x 4 blocks transposed in SSE registers; a group of fewer than
 * 4 lanes reads its last lane again in place of the missing ones and
 * stores only its own. Each block also prefetches one cache line of the
 * lanes `ahead` (up to 4 of them, NULL for none), so that a group's lanes
 * are arriving when it starts: each lane is a short run (a K block, 1 KiB)
 * at a large stride, too short for the hardware prefetchers to follow, and
 * an operand read from memory (attention's probabilities, 1 MiB per head)
 * otherwise waits out the memory latency line by line. Returns the number
 * of steps done (a multiple of 4). */
static int64_t lanes_transpose4(float *restrict dst, const float *restrict src, int64_t lane_stride, int l,
                                int count, int width, int64_t depth, const float *ahead, int ahead_count) {
  const float *r[4];
  for (int i = 0; i < 4; i++) r[i] = src + (l + (i < count ? i : count - 1)) * lane_stride;
  int64_t d = 0;
  for (; d + 4 <= depth; d += 4) {
    if (ahead) {  /* block d / 4 fetches line (d / 4) / 4 of lane (d / 4) % 4 */
      int64_t block = d / 4;
      if (block % 4 < ahead_count) _mm_prefetch((const char *)(ahead + (block % 4) * lane_stride + block / 4 * 16),
                                                _MM_HINT_T0);
    }
    __m128 a = _mm_loadu_ps(r[0] + d), b = _mm_loadu_ps(r[1] + d), c = _mm_loadu_ps(r[2] + d),
           e = _mm_loadu_ps(r[3] + d);
    _MM_TRANSPOSE4_PS(a, b, c, e);
    store_first_lanes(dst + d * width + l, a, count);
    store_first_lanes(dst + (d + 1) * width + l, b, count);
    store_first_lanes(dst + (d + 2) * width + l, c, count);
    store_first_lanes(dst + (d + 3) * width + l, e, count);
  }
  return d;
}
#endif

/* A panel whose steps are contiguous in each lane (row-major A: lane =
 * row, step = k): dst[step*width + lane] = src[lane*lane_stride + step],
 * a transpose. Four lanes at a time, as 4 x 4 blocks transposed in SSE
 * registers (every x86-64 has SSE2): four contiguous loads and four stores
 * where element by element it took sixteen of each, the stores strided.
 * This was most of the packing time of a small product (128^3: a third of
 * the run); the 2 rows of a 14-row panel past its three groups of 4 take
 * the same path. Only moves floats, so the panel holds the same bits. */
static void panel_pack_transposed(float *restrict dst, const float *restrict src, int64_t lane_stride,
                                  int lanes, int width, int64_t depth, int64_t readable_lanes, bool zero_padding) {
  enum { PREFETCH_LANES_AHEAD = 8 };  /* two groups: about a memory latency of work */
  for (int l = 0; l < lanes; l += 4) {
    int count = lanes - l < 4 ? lanes - l : 4;
    int64_t d = 0;
#if defined(__SSE2__)
    int64_t ahead_lane = l + PREFETCH_LANES_AHEAD, ahead_count = readable_lanes - ahead_lane;
    const float *ahead = ahead_count > 0 ? src + ahead_lane * lane_stride : NULL;
    d = lanes_transpose4(dst, src, lane_stride, l, count, width, depth, ahead, ahead_count > 4 ? 4 : (int)ahead_count);
#else
    (void)readable_lanes;
#endif
    for (; d < depth; d++)
      for (int i = 0; i < count; i++) dst[d * width + l + i] = src[(l + i) * lane_stride + d];
  }
  for (int64_t d = 0; d < depth && lanes < width && zero_padding; d++)
    memset(dst + d * width + lanes, 0, (size_t)(width - lanes) * sizeof *dst);
}

/* Copies a panel of `width` lanes by `depth` steps into dst[step*width +
 * lane]; lane l at step d is src[l*lane_stride + d*depth_stride], and with
 * zero_padding the lanes from `lanes` up to width are zero (a B panel's:
 * the kernel loads whole rows of B; an A panel's extra rows are never read,
 * a tile of r rows running the kernel of r rows, and zeroing them, a libc
 * call of 4 bytes per step under a 13-row tile, took 3% of 128 x 3072 x
 * 768). Contiguous lanes (row-major B,
 * column-major A) are one memcpy per step; contiguous steps (row-major A)
 * a transpose, which prefetches the lanes that follow in the same block
 * (readable_lanes counts them from the first, this panel's included);
 * otherwise each float is gathered on its own. */
static void panel_pack(float *restrict dst, const float *restrict src, int64_t lane_stride,
                       int64_t depth_stride, int lanes, int width, int64_t depth, int64_t readable_lanes,
                       bool zero_padding) {
  if (depth_stride == 1 && lane_stride != 1) {
    panel_pack_transposed(dst, src, lane_stride, lanes, width, depth, readable_lanes, zero_padding);
    return;
  }
  for (int64_t d = 0; d < depth; d++) {
    const float *from = src + d * depth_stride;
    float *to = dst + d * width;
    if (lane_stride == 1) {
      memcpy(to, from, (size_t)lanes * sizeof *to);
    } else {
      for (int l = 0; l < lanes; l++) to[l] = from[l * lane_stride];
    }
    for (int l = lanes; l < width && zero_padding; l++) to[l] = 0.0f;
  }
}

/* ------------------------------------------------------- one product call */

typedef struct GemmCall {
  const GemmPlan *plan;
  const GemmProblem *problem;
  const GemmEpilogue *epilogue;
  GemmBlocks blocks;
  int64_t n_padded;         /* NR times the column tiles (packed_panel_offset) */
  /* B of the products [batch0, batch0 + group) packed, each K x n_padded
   * floats: K block k0 starts at k0 * n_padded, and within it the panel of
   * column tile t (kc x NR floats) at t * NR * kc. */
  int64_t batch0, group;
  float *b_packed;
  /* B's full NR-column panels are read where they lie (row-major B, short
   * product: b_in_place_pays); only partial panels are packed. */
  bool b_in_place;
  /* The kernel reads A's rows where they lie: row-major A (a_in_place_pays). */
  bool a_in_place;
  /* The columns of a leading edge tile, [0, column_lead), that move the
   * full tiles after it onto C's cache lines; 0 for none (column_lead). */
  int64_t column_lead;
  GemmScratch *scratch;
  int scratch_count;
} GemmCall;

static float *align64(void *p) { return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

/* Where the column tile that starts at column j ends: NR columns on, or
 * at N, or at column_lead for the leading tile. */
static int64_t column_tile_end(const GemmCall *call, int64_t j) {
  if (j < call->column_lead) return call->column_lead;
  return min64(j + call->plan->shape->nr, call->problem->n);
}

/* The column tiles of N columns whose first full tile starts at column
 * lead (0: tiles start at multiples of NR; else a leading edge tile of
 * lead columns comes first), and the number of the one starting at j. */
static int64_t column_tile_count(int64_t n, int64_t lead, int nr) { return (lead > 0) + (n - lead + nr - 1) / nr; }
static int64_t column_tile_index(int64_t j, int64_t lead, int nr) { return j < lead ? 0 : (lead > 0) + (j - lead) / nr; }

/* Where the packed panel of the column tile starting at j lies in a packed
 * K block of kc rows: one NR-column slot per column tile, in order. */
static int64_t packed_panel_offset(const GemmCall *call, int64_t j, int64_t kc) {
  int64_t nr = call->plan->shape->nr;
  return column_tile_index(j, call->column_lead, (int)nr) * nr * kc;
}

static GemmScratch *scratch_acquire(GemmCall *call) {
  /* At most scratch_count tasks run at once, so a free buffer exists. */
  for (;;) {
    for (int i = 0; i < call->scratch_count; i++) {
      GemmScratch *s = &call->scratch[i];
      if (atomic_exchange(&s->busy, true)) continue;
      return s;
    }
  }
}

static void scratch_release(GemmScratch *s) { atomic_store(&s->busy, false); }

/* Pack task `index`: the NR-column panels of one K block and one N block of
 * one product's B. B is packed once per product, before any multiply, so
 * that the macro tiles of every row block share it. */
static void b_pack_task_run(void *context, int64_t index) {
  GemmCall *call = context;
  const GemmProblem *p = call->problem;
  const GemmBlocks *b = &call->blocks;
  int nr = call->plan->shape->nr;
  int64_t per_batch = b->k_count * b->n_count, rest = index % per_batch;
  int64_t local = index / per_batch;
  int64_t k0 = rest / b->n_count * b->k_block, kc = min64(b->k_block, p->k - k0);
  int64_t n0 = rest % b->n_count * b->n_block, n_end = min64(n0 + b->n_block, p->n);
  float *dst = call->b_packed + (local * p->k + k0) * call->n_padded;
  const float *src = p->b ? p->b + (call->batch0 + local) * p->b_batch_stride + k0 * p->b_row_stride : NULL;
  for (int64_t j = n0, next; j < n_end; j = next) {
    next = column_tile_end(call, j);
    if (call->b_in_place && next - j == nr) continue;
    float *panel = dst + packed_panel_offset(call, j, kc);
    if (p->b_pack) {
      p->b_pack(p->b_pack_context, call->batch0 + local, j, (int)(next - j), nr, k0, kc, panel);
      continue;
    }
    panel_pack(panel, src + j * p->b_col_stride, p->b_col_stride, p->b_row_stride, (int)(next - j), nr, kc,
               n_end - j, true);
  }
}

/* ----------------------------------------------------------- macro tiles */

/* The part of one task's work that one K block covers. */
typedef struct MacroTile {
  int64_t batch, m0, n0, mc, nc, kc;
  int64_t tile0, tiles;   /* its row tiles (row_tile) */
  float *c;               /* C[batch][m0, n0] */
  const float *b_block;   /* the packed K block of B */
  const float *b_rows;    /* B[batch][k0, 0] when B is read in place, else NULL */
  const float *a_rows;    /* A[batch][m0, k0] when A is read in place, else NULL */
  bool first_k, last_k;   /* the first K block stores C, later ones add */
} MacroTile;

/* Copies count floats (at most GEMM_MAX_MR) from src to dst, inline and
 * without a loop: a libc memcpy call per 56-byte piece cost more than the
 * copy (below), and the compiler turns a copying loop back into that call. */
static void lanes_copy(float *restrict dst, const float *restrict src, int count) {
  assert(count <= GEMM_MAX_MR && GEMM_MAX_MR < 16);
  int l = 0;
#if defined(__SSE2__)
  if (count >= 4) _mm_storeu_ps(dst, _mm_loadu_ps(src)), l = 4;
  if (count >= 8) _mm_storeu_ps(dst + 4, _mm_loadu_ps(src + 4)), l = 8;
  if (count >= 12) _mm_storeu_ps(dst + 8, _mm_loadu_ps(src + 8)), l = 12;
  if (l + 2 <= count) _mm_storel_pi((__m64 *)(dst + l), _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(src + l))), l += 2;
  if (l < count) dst[l] = src[l];
#else
  for (; l < count; l++) dst[l] = src[l];
#endif
}

/* A block of column-major A (its rows contiguous at each k: A read
 * transposed, as in x^T . dz of a weight gradient): every panel of the
 * block takes its piece of one line of A per K step, so A is read line by
 * line, each line once, where panel by panel it took a memcpy of MR floats
 * per K step and read every cache line again for the panel beside
 * (the dw1 product of the MLP step: 6% of its samples in memmove). Only
 * moves floats: the panels hold the same bits as panel_pack's. */
static void a_block_pack_column_major(const GemmCall *call, const MacroTile *t, int64_t k0, float *a_pack) {
  const GemmProblem *p = call->problem;
  int mr = call->plan->shape->mr;
  const float *a = p->a + t->batch * p->a_batch_stride + t->m0 + k0 * p->a_col_stride;
  int64_t row0[GEMM_MC_TARGET / 4], rows[GEMM_MC_TARGET / 4];
  assert(t->tiles <= (int64_t)(sizeof row0 / sizeof *row0));
  for (int64_t tile = 0; tile < t->tiles; tile++) {
    row_tile(p->m, mr, t->tile0 + tile, &row0[tile], &rows[tile]);
    row0[tile] -= t->m0;
  }
  for (int64_t d = 0; d < t->kc; d++) {
    const float *line = a + d * p->a_col_stride;
    for (int64_t tile = 0; tile < t->tiles; tile++)
      lanes_copy(a_pack + (tile * t->kc + d) * mr, line + row0[tile], (int)rows[tile]);
  }
}

static void a_block_pack(const GemmCall *call, const MacroTile *t, int64_t k0, float *a_pack) {
  const GemmProblem *p = call->problem;
  int mr = call->plan->shape->mr;
  if (!p->a_pack && p->a_row_stride == 1 && p->a_col_stride != 1 && t->tiles <= GEMM_MC_TARGET / 4) {
    a_block_pack_column_major(call, t, k0, a_pack);
    return;
  }
  for (int64_t tile = 0; tile < t->tiles; tile++) {
    int64_t i, rows;
    row_tile(p->m, mr, t->tile0 + tile, &i, &rows);
    i -= t->m0;
    float *panel = a_pack + tile * mr * t->kc;
    if (p->a_pack) {
      p->a_pack(p->a_pack_context, t->batch, t->m0 + i, (int)rows, mr, k0, t->kc, panel);
      continue;
    }
    const float *a = p->a + t->batch * p->a_batch_stride + (t->m0 + i) * p->a_row_stride + k0 * p->a_col_stride;
    panel_pack(panel, a, p->a_row_stride, p->a_col_stride, (int)rows, mr, t->kc, t->mc - i, false);
  }
}

/* A tile with fewer than NR columns: on avx512 the column-masked kernel of
 * its height; else that kernel writes whole rows of a scratch tile, of which
 * the valid part is stored or added (the same float either way: C + tile is
 * tile + C). */
static void edge_tile_run(const GemmPlan *plan, const MacroTile *t, const float *a_panel, int64_t a_row_bytes,
                          const float *b_panel, float *c, int64_t ldc, int64_t rows, int64_t cols) {
  int nr = plan->shape->nr;
  GemmKernelFn *masked = plan->kernels[kernel_kind(true, t->a_rows, cols <= plan->shape->lanes)][rows];
  if (masked) {
    masked(t->kc, a_panel, b_panel, c, ldc * (int64_t)sizeof(float), !t->first_k, (int64_t)(nr * sizeof(float)),
           (int64_t)((UINT64_C(1) << cols) - 1), a_row_bytes);
    return;
  }
  alignas(64) float tile[GEMM_MAX_TILE];
  plan->kernels[kernel_kind(false, t->a_rows, false)][rows](t->kc, a_panel, b_panel, tile, (int64_t)(nr * sizeof(float)),
                                                      0, (int64_t)(nr * sizeof(float)), 0, a_row_bytes);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      c[i * ldc + j] = t->first_k ? tile[i * nr + j] : c[i * ldc + j] + tile[i * nr + j];
}

static void macro_tile_multiply(const GemmCall *call, const MacroTile *t, const float *a_pack) {
  const GemmPlan *plan = call->plan;
  const GemmKernelShape *sh = plan->shape;
  int64_t ldc = call->problem->c_row_stride;
  const GemmEpilogue *e = call->epilogue;
  for (int64_t j = 0, next; j < t->nc; j = next) {
    next = min64(column_tile_end(call, t->n0 + j), t->n0 + t->nc) - t->n0;
    int64_t cols = next - j;
    const float *b_panel = t->b_block + packed_panel_offset(call, t->n0 + j, t->kc);
    int64_t b_step = sh->nr * (int64_t)sizeof(float);
    if (t->b_rows && cols == sh->nr) {
      b_panel = t->b_rows + t->n0 + j;
      b_step = call->problem->b_row_stride * (int64_t)sizeof(float);
    }
    int64_t a_row_stride = call->problem->a_row_stride, a_row_bytes = a_row_stride * (int64_t)sizeof(float);
    GemmKernelFn *const *kernels = plan->kernels[kernel_kind(false, t->a_rows, false)];
    for (int64_t tile = 0; tile < t->tiles; tile++) {
      int64_t i, rows;
      row_tile(call->problem->m, sh->mr, t->tile0 + tile, &i, &rows);
      i -= t->m0;
      const float *a_panel = t->a_rows ? t->a_rows + i * a_row_stride : a_pack + tile * sh->mr * t->kc;
      float *c = t->c + i * ldc + j;
      if (cols == sh->nr)
        kernels[rows](t->kc, a_panel, b_panel, c, ldc * (int64_t)sizeof(float), !t->first_k, b_step, 0,
                      a_row_bytes);
      else
        edge_tile_run(plan, t, a_panel, a_row_bytes, b_panel, c, ldc, rows, cols);
      if (t->last_k && e && e->apply)
        e->apply(e->context, c, ldc, rows, cols, t->m0 + i, t->n0 + j, t->batch);
    }
  }
}

/* Multiply task `index`: one macro tile of C, its whole K loop in order. */
static void gemm_task_run(void *context, int64_t index) {
  GemmCall *call = context;
  const GemmProblem *p = call->problem;
  const GemmBlocks *b = &call->blocks;
  int64_t per_batch = b->m_count * b->n_count, rest = index % per_batch;
  int64_t local = index / per_batch;
  MacroTile t;
  t.batch = call->batch0 + local;
  t.tile0 = rest / b->n_count * b->m_tiles;
  t.tiles = min64(b->m_tiles, row_tile_count(p->m, call->plan->shape->mr) - t.tile0);
  t.m0 = row_tile_start(p->m, call->plan->shape->mr, t.tile0);
  t.n0 = rest % b->n_count * b->n_block;
  t.mc = row_tile_start(p->m, call->plan->shape->mr, t.tile0 + t.tiles) - t.m0;
  t.nc = min64(b->n_block, p->n - t.n0);
  t.c = p->c + t.batch * p->c_batch_stride + t.m0 * p->c_row_stride + t.n0;
  GemmScratch *s = scratch_acquire(call);
  for (int64_t kb = 0; kb < b->k_count; kb++) {
    int64_t k0 = kb * b->k_block;
    t.kc = min64(b->k_block, p->k - k0);
    t.b_block = call->b_packed + (local * p->k + k0) * call->n_padded;
    t.b_rows = call->b_in_place ? p->b + t.batch * p->b_batch_stride + k0 * p->b_row_stride : NULL;
    t.a_rows = call->a_in_place ? p->a + t.batch * p->a_batch_stride + t.m0 * p->a_row_stride + k0 : NULL;
    t.first_k = kb == 0;
    t.last_k = kb + 1 == b->k_count;
    if (!t.a_rows) a_block_pack(call, &t, k0, s->a_pack);
    macro_tile_multiply(call, &t, s->a_pack);
  }
  scratch_release(s);
  const GemmEpilogue *e = call->epilogue;
  if (e && e->finish_block) e->finish_block(e->context, t.batch, t.m0, t.mc, t.n0, t.nc);
}

/* ---------------------------------------------------------- direct path */

/* Small products: a plain loop over the operands where they lie, one task
 * per product of the batch. Also K = 0, where every sum is empty. */
typedef struct DirectCall {
  const GemmProblem *problem;
  const GemmEpilogue *epilogue;
} DirectCall;

static void direct_task_run(void *context, int64_t batch) {
  const DirectCall *call = context;
  const GemmProblem *p = call->problem;
  const GemmEpilogue *e = call->epilogue;
  /* An empty operand (K = 0) may have no storage at all: NULL, to which C
   * allows no offset, not even 0. */
  const float *a = p->a ? p->a + batch * p->a_batch_stride : NULL;
  const float *b = p->b ? p->b + batch * p->b_batch_stride : NULL;
  float *c = p->c ? p->c + batch * p->c_batch_stride : NULL;
  for (int64_t i = 0; i < p->m; i++)
    for (int64_t j = 0; j < p->n; j++) {
      float sum = 0.0f;
      for (int64_t k = 0; k < p->k; k++)
        sum += a[i * p->a_row_stride + k * p->a_col_stride] *
               b[k * p->b_row_stride + j * p->b_col_stride];
      c[i * p->c_row_stride + j] = sum;
    }
  if (e && e->apply) e->apply(e->context, c, p->c_row_stride, p->m, p->n, 0, 0, batch);
  if (e && e->finish_block) e->finish_block(e->context, batch, 0, p->m, 0, p->n);
}

/* ------------------------------------------------------------ workspace */

/* The plan's idle workspace (or a new one), grown to hold b_floats of
 * packed B and at least scratch_count A buffers. Packed B is not zeroed:
 * packing writes every float, the padding included. */
/* While a call holds the workspace, the call's memory scope owns its blocks
 * (the plan no longer points to it, so an unwind of the call frees them);
 * back in the plan, the plan owns them (ir.h, memory.c). */
static void workspace_owned_by_call(GemmWorkspace *w, bool by_call) {
  void *blocks[3] = {w, w->b_memory, w->scratch};
  for (int i = 0; i < 3; i++) by_call ? (void)mem_adopt(blocks[i]) : mem_untrack(blocks[i]);
  for (int i = 0; i < w->scratch_count; i++) by_call ? (void)mem_adopt(w->scratch[i].memory) : mem_untrack(w->scratch[i].memory);
}

/* The plan's workspace (or a new one), grown to b_floats of packed B and
 * scratch_count A buffers of a_floats each: made here, on the calling
 * thread, so that no task allocates. */
static GemmWorkspace *workspace_take(const GemmPlan *plan, size_t b_floats, int scratch_count, size_t a_floats) {
  GemmWorkspace *w = atomic_exchange(plan->idle_workspace, NULL);
  if (w) workspace_owned_by_call(w, true);
  else w = mem_calloc(1, sizeof *w);
  if (w->b_floats < b_floats) {
    mem_free(w->b_memory);
    w->b_memory = NULL;
    w->b_floats = 0;
    w->b_memory = mem_malloc((b_floats + 16) * sizeof(float));  /* not zeroed: packing writes every float */
    w->b_floats = b_floats;
  }
  if (w->scratch_count < scratch_count) {
    w->scratch = mem_realloc(w->scratch, (size_t)scratch_count * sizeof *w->scratch);
    memset(w->scratch + w->scratch_count, 0, (size_t)(scratch_count - w->scratch_count) * sizeof *w->scratch);
    for (int i = w->scratch_count; i < scratch_count; i++) atomic_init(&w->scratch[i].busy, false);
    w->scratch_count = scratch_count;
  }
  for (int i = 0; i < w->scratch_count; i++) {
    GemmScratch *s = &w->scratch[i];
    if (s->floats >= a_floats) continue;
    mem_free(s->memory);
    s->memory = NULL;
    s->floats = 0;
    s->memory = mem_malloc((a_floats + 16) * sizeof(float));
    s->a_pack = align64(s->memory);
    s->floats = a_floats;
  }
  return w;
}

/* Keeps w for the next call; if a call running alongside put its own back
 * first, the one displaced is freed. */
static void workspace_give_back(const GemmPlan *plan, GemmWorkspace *w) {
  workspace_owned_by_call(w, false);
  workspace_free(atomic_exchange(plan->idle_workspace, w));
}

/* ---------------------------------------------------------------- entry */

/* A product of at most GEMM_SHORT_K steps of K stores its C tile after a
 * few multiply-adds per element (256 x 10 x 512: 28 stores per 280), so
 * where the stores go decides its rate. Such a product always packs B:
 * read in place, B's rows and C's lie at their own row strides (2 KiB
 * each in 256 x 10 x 512), and where the caller's C happens to start at
 * B's offset in a 4 KiB page (or a line or two before it), every C tile
 * falls into the L1 sets of the B panel the next tile reads and each of
 * its stores shares its low 12 address bits with a B row: B's lines are
 * evicted and its loads wait on the stores (4 KiB aliasing). That
 * placement ran 1.17-1.30x slower than the others (bench/run_bench
 * --result-near-argument 1: 0.032-0.036 ms against 0.027-0.029, min of 15
 * samples), and which one a run got depended on the allocator's layout
 * (0.027 or 0.037 ms per process, always 0.037 without address
 * randomization). A packed panel is one contiguous run of lines, one or
 * two in any L1 set, and starts on a line; packing it costs about 4% of
 * that product (B is 20 KiB, read and written once per run). The panels
 * then follow C's column tiles, a shifted grid (column_lead) included. */
enum { GEMM_LINE_FLOATS = 16, GEMM_SHORT_K = 64 };

/* Whether the kernel reads B's full panels where they lie instead of from a
 * packed copy. Packing B reads and writes all of it once per product so
 * that each panel is contiguous; but a B that stays in the caches between
 * its uses (a dense layer's or an LSTM step's weights, up to a few MiB)
 * is read as fast at its own row stride, and there the copy was pure cost:
 * a sixth of an LSTM cell's run (libc's memmove, called per panel row, in
 * the profile); reading in place made the cell 10% faster, a 256 x 784 x
 * 512 product 2-4%. A larger B (9 MiB: 128 x 3072 · 3072 x 768) comes from
 * memory, a new 4 KiB page every row or so, which the hardware prefetchers
 * do not follow: without help, reading it in place measured 1.5x slower
 * than packing. The avx512 kernel helps: each K step prefetches the same
 * row of the next panel, NR floats on (gemm_kernel.c), so a panel has
 * arrived by the time the kernels move to it, and packing (17% of that
 * product's run, memory-bound: B read, written and read again) is gone:
 * in place, 128 x 3072 x 768 ran 1.25x faster, 512 x 768 x 768 1.05x,
 * 2048^3 (B rows 8 KiB apart) 1.01x (thread CPU time, medians). Below
 * avx512 the kernels do not prefetch, and B reads in place up to 2 MiB.
 * Needs B's columns contiguous (row-major B), so that a row of a panel is
 * NR floats in a row. The same FMAs in the same order either way: the
 * choice cannot change a bit of C. */
static bool b_in_place_pays(const GemmPlan *plan, const GemmProblem *p) {
  enum { B_IN_PLACE_MAX_BYTES = 2 << 20 };
  if (p->k <= GEMM_SHORT_K) return false;
  /* by the layout alone, not the address: the dump asks before a run */
  bool fits = (double)p->k * (double)p->n * sizeof(float) <= B_IN_PLACE_MAX_BYTES;
  return p->b_col_stride == 1 && !p->b_pack && (fits || plan->shape->level == CPU_LEVEL_AVX512);
}

/* The leading edge tile's columns that put every full tile of C on whole
 * 64-byte lines, or 0. A C row that starts inside a line (a caller's
 * result at malloc's 16-byte alignment) makes each 64-byte store of the
 * kernel straddle two lines; where K is short the stores are a large part
 * of the work (256 x 10 x 512: 28 stores per 280 multiply-adds), and that
 * product ran 20-29% slower than into aligned memory. Starting the tiles
 * on a line instead costs one masked edge tile per row of tiles. Needs the
 * masked kernels (avx512), every row (and product) of C at the same offset
 * in its line, a short K (GEMM_SHORT_K: so B is packed, its panels following
 * the shifted tiles), one block of columns, and a full tile after the
 * leading one. Moving tiles changes which kernel computes a column, never
 * its bits. column_lead_fits holds all of these conditions but the address
 * (for the dump, which is written before a run). */
static bool column_lead_fits(const GemmPlan *plan, const GemmProblem *p, const GemmBlocks *b) {
  bool rows_share_offset = p->c_row_stride % GEMM_LINE_FLOATS == 0 &&
                           (p->batch == 1 || p->c_batch_stride % GEMM_LINE_FLOATS == 0);
  return plan->kernels[kernel_kind(true, false, false)][1] && b->n_count == 1 && p->k <= GEMM_SHORT_K &&
         rows_share_offset;
}

static int64_t column_lead(const GemmPlan *plan, const GemmProblem *p, const GemmBlocks *b) {
  uintptr_t address = (uintptr_t)p->c;
  if (!column_lead_fits(plan, p, b) || address % sizeof(float) != 0) return 0;
  int64_t lead = (int64_t)((GEMM_LINE_FLOATS - address / sizeof(float) % GEMM_LINE_FLOATS) % GEMM_LINE_FLOATS);
  return p->n >= lead + plan->shape->nr ? lead : 0;
}

/* Whether the kernel reads A's rows where they lie instead of from packed
 * panels. Packing A reads and writes the A block once per block of columns,
 * for N / NR tiles to use: in a narrow product it was a tenth of the run
 * (128^3: 10% of the samples, the kernel 83%); reading in place made 128^3
 * 8% faster, 256^3 4% (run_bench, min of 31, three rounds). Wider products
 * (N > 512) keep packing: there it is a few percent, and the kernel's MR
 * streams of A at a large stride measured no faster on this busy machine.
 * The kernel broadcasts from MR rows at A's row stride; rows a multiple of
 * 2 KiB apart would fall into one or two sets of L1 (8 ways) and evict each
 * other, so those stay packed too. Needs the A-in-place kernels (avx512)
 * and A's columns contiguous. The same FMAs in the same order either way:
 * the choice cannot change a bit of C. */
static bool a_in_place_pays(const GemmPlan *plan, const GemmProblem *p) {
  enum { L1_WAY_BYTES = 4096, MOST_ALIASED_ROW_BYTES = 1024, A_IN_PLACE_MAX_N = 512 };
  int64_t row_bytes = p->a_row_stride * (int64_t)sizeof(float), g = L1_WAY_BYTES;
  for (int64_t r = row_bytes; r != 0;) {   /* g = gcd(row_bytes, 4096) */
    int64_t next = g % r;
    g = r;
    r = next;
  }
  return plan->kernels[kernel_kind(false, true, false)][1] && !p->a_pack && p->a_col_stride == 1 &&
         row_bytes > 0 && g <= MOST_ALIASED_ROW_BYTES && p->n <= A_IN_PLACE_MAX_N;
}

/* Whether p runs on the direct path: too small to pay for packing (and
 * with neither operand computed by a packer), or K = 0. */
static bool direct_path_pays(const GemmProblem *p) {
  bool small = (double)p->m * (double)p->n * (double)p->k < GEMM_DIRECT_VOLUME;
  return p->k == 0 || (small && !p->a_pack && !p->b_pack);
}

/* How many products of the batch share one round of B packing: as many as
 * keep the packed B under its limit. A packer's B is made afresh each
 * run: packed one product at a time, it is still in the caches when the
 * multiply reads it. */
static int64_t products_per_group(const GemmProblem *p, int64_t b_floats) {
  int64_t b_limit = p->b_pack ? GEMM_PACKED_B_FRESH_LIMIT : GEMM_PACKED_B_LIMIT;
  return b_floats >= b_limit ? 1 : min64(p->batch, b_limit / b_floats);
}

void gemm_f32_batched(const GemmPlan *plan, ThreadPool *pool, const GemmProblem *p,
                      const GemmEpilogue *epilogue) {
  assert(plan && p->batch >= 0 && p->m >= 0 && p->n >= 0 && p->k >= 0);
  if (p->batch == 0 || p->m == 0 || p->n == 0) return;
  if (direct_path_pays(p)) {
    DirectCall call = {p, epilogue};
    thread_pool_run(pool, p->batch, direct_task_run, &call);
    return;
  }
  GemmCall call = {.plan = plan, .problem = p, .epilogue = epilogue};
  int64_t threads = pool ? thread_pool_thread_count(pool) : 1;
  call.blocks = gemm_blocks_choose(plan->shape, p, threads);
  const GemmBlocks *b = &call.blocks;
  call.column_lead = column_lead(plan, p, b);
  call.n_padded = column_tile_count(p->n, call.column_lead, plan->shape->nr) * plan->shape->nr;
  /* Products are run in groups whose packed B stays under a limit, each
   * group in two rounds: pack B, then multiply. */
  int64_t b_floats = p->k * call.n_padded;
  call.group = products_per_group(p, b_floats);
  GemmWorkspace *w = workspace_take(plan, (size_t)(call.group * b_floats),
                                    (int)min64(threads, call.group * b->m_count * b->n_count),
                                    (size_t)(b->m_block * b->k_block));
  call.b_packed = align64(w->b_memory);
  call.b_in_place = b_in_place_pays(plan, p);
  call.a_in_place = a_in_place_pays(plan, p);
  call.scratch = w->scratch;
  call.scratch_count = w->scratch_count;
  for (call.batch0 = 0; call.batch0 < p->batch; call.batch0 += call.group) {
    int64_t group = min64(call.group, p->batch - call.batch0);
    thread_pool_run(pool, group * b->k_count * b->n_count, b_pack_task_run, &call);
    thread_pool_run(pool, group * b->m_count * b->n_count, gemm_task_run, &call);
  }
  workspace_give_back(plan, w);
}

int64_t gemm_task_count(const GemmPlan *plan, const GemmProblem *p) {
  if (p->batch == 0 || p->m == 0 || p->n == 0) return 0;
  if (direct_path_pays(p)) return p->batch;
  GemmBlocks b = gemm_blocks_choose(plan->shape, p, GEMM_SEVERAL_THREADS);
  int64_t group = min64(products_per_group(p, p->k * round_up(p->n, plan->shape->nr)), p->batch);
  int64_t pack = group * b.k_count * b.n_count, multiply = group * b.m_count * b.n_count;
  return pack > multiply ? pack : multiply;
}

/* The decisions gemm_f32_batched takes for p, in words, by the same
 * functions: the path, the micro-kernel's tile, the cache blocks, the tasks
 * and the packing. */
void gemm_schedule_describe(const GemmPlan *plan, const GemmProblem *p, int threads, StrBuf *sb) {
  const GemmKernelShape *s = plan->shape;
  if (p->batch == 0 || p->m == 0 || p->n == 0) {
    strbuf_printf(sb, "empty product: nothing runs");
    return;
  }
  if (direct_path_pays(p)) {
    strbuf_printf(sb, "direct: under %d multiply-adds, A and B read where they lie, no packing; one task per product",
                  GEMM_DIRECT_VOLUME);
    return;
  }
  GemmBlocks b = gemm_blocks_choose(s, p, threads);
  int64_t group = products_per_group(p, p->k * round_up(p->n, s->nr));
  strbuf_printf(sb, "micro-kernel %dx%d (%s: %d vectors of %d f32 lanes, %d accumulators, K unrolled %d); ", s->mr,
                s->nr, cpu_level_name(s->level), s->vectors, s->lanes, s->mr * s->vectors, s->unroll);
  int64_t tiles = row_tile_count(p->m, s->mr), shortest = p->m / tiles;
  strbuf_printf(sb, "M in %lld row tiles of %lld", (long long)tiles, (long long)shortest);
  if (p->m % tiles) strbuf_printf(sb, " to %lld", (long long)shortest + 1);
  strbuf_printf(sb, " rows; blocks MC %lld x NC %lld x KC %lld; ", (long long)b.m_block, (long long)b.n_block,
                (long long)b.k_block);
  strbuf_printf(sb, "%lld tasks (%lld x %lld macro tiles x %lld products) for %d thread%s, each running its K blocks in order; ",
                (long long)(p->batch * b.m_count * b.n_count), (long long)b.m_count, (long long)b.n_count,
                (long long)p->batch, threads, threads == 1 ? "" : "s");
  if (b_in_place_pays(plan, p))
    strbuf_printf(sb, "B read where it lies (row-major%s)", s->level == CPU_LEVEL_AVX512 ? ", the next panel prefetched" : ", at most 2 MiB");
  else
    strbuf_printf(sb, "B %s into %dx%lld panels, %lld product%s at a time", p->b_pack ? "computed" : "packed", s->nr,
                  (long long)b.k_block, (long long)group, group == 1 ? "" : "s");
  if (column_lead_fits(plan, p, &b))
    strbuf_printf(sb, "; a C not on a 64-byte line gets a masked leading tile, so the full tiles store whole lines");
  if (a_in_place_pays(plan, p))
    strbuf_printf(sb, "; A read where it lies (row-major, N at most 512), %d rows at a time", s->mr);
  else
    strbuf_printf(sb, "; A %s into %d-row panels per task",
                  p->a_pack ? "computed (implicit GEMM)" : p->a_col_stride == 1 ? "packed (transposed)" : "packed",
                  s->mr);
}

void gemm_f32(const GemmPlan *plan, ThreadPool *pool, int64_t m, int64_t n, int64_t k,
              const float *a, int64_t a_row_stride, int64_t a_col_stride, const float *b,
              int64_t b_row_stride, int64_t b_col_stride, float *c, int64_t ldc,
              const GemmEpilogue *epilogue) {
  GemmProblem p = {
    .batch = 1, .m = m, .n = n, .k = k,
    .a = a, .a_row_stride = a_row_stride, .a_col_stride = a_col_stride,
    .b = b, .b_row_stride = b_row_stride, .b_col_stride = b_col_stride,
    .c = c, .c_row_stride = ldc,
  };
  gemm_f32_batched(plan, pool, &p, epilogue);
}
