/* The direct convolution: f32, one group, stride 1, at AVX-512 (the other
 * convolutions go through the implicit GEMM of cpu_conv.c).
 *
 * The implicit GEMM copies every input element once per kernel tap into its
 * packed panels (9 times for a 3x3 window); this path copies each input
 * element once, into a zero-padded plane per input feature, and lets the
 * micro-kernel read the taps straight from that plane. The trick that makes
 * every tap one contiguous load is to number the positions of a plane
 * row-major with the padded plane's row length S (the "flat" position
 * q = y * S + x):
 *
 *   out[o][q] = sum over c, tap (ty, tx) of W[o][c][ty][tx] * P[c][q + ty*dy*S + tx*dx]
 *
 * where P is the input of one image, padded, and dy, dx the kernel
 * dilation. So a tap is a constant offset in P, the same for every output
 * position: 32 or 48 consecutive outputs read 32 or 48 consecutive floats
 * of P, a vector load of each, whatever the tap. The positions whose x is
 * past the output width (the S - Wo columns at the end of each flat row)
 * compute values no one reads; they are dropped when the result is copied
 * out. S = W + max(pad_lo, pad_hi) suffices (at least Wo): a row's right
 * padding and the next row's left padding are the same zeros, read through
 * the wrap from one flat row into the next.
 *
 * Where the input's rows are as long as the result's (a "same" window,
 * the input's positions innermost and rows contiguous), the planes need
 * no copy: with S = W, the flat positions are the input's own, and a tap
 * that would read across a row end or above or below the image is a
 * masked load instead ({z}: those lanes read 0, and nothing outside the
 * input is touched). The masks depend on the tile: for most tiles only on
 * the tap's column (the first and last columns of a row), and those few
 * masks stay in k registers for the whole sum; the tiles at the top and
 * bottom of the image load each tap's mask beside its loads.
 *
 * The micro-kernel (JIT, axle's assembler) keeps an MR x (V*16) tile of the
 * result in zmm registers, MR output features by V*16 flat positions: per
 * input feature and tap it loads V vectors of P and broadcasts MR weights,
 * for MR * V multiply-adds (the GEMM kernel's register blocking, with the
 * input as B read in place). The whole sum over features and taps runs in
 * registers, one add order per output element, so the bits do not depend on
 * the thread count: the tasks are cut by the shape (an image and a run of
 * tiles), and each writes only its own outputs. */
#include <assert.h>
#include <stdatomic.h>
#include <string.h>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "emit_x86/cpu_compile.h"
#include "emit_x86/jit_memory.h"

/* The tile: MR output features by VECTORS * 16 flat positions. 24
 * accumulators + 3 input vectors + 2 broadcast registers of the 32 zmm; per
 * step 3 loads and 8 broadcasts feed 24 multiply-adds. */
enum { CONV_MR = 8, CONV_VECTORS = 3, CONV_TILE = CONV_VECTORS * 16 };
/* Past this many taps the unrolled tap loop outgrows the instruction
 * cache; such windows keep the implicit GEMM. */
enum { CONV_MAX_TAPS = 64 };
/* Flat positions per task: about 8 rows of a 56-wide image, so that a
 * task's input rows (all features) sit in L2 beside the weights. */
enum { CONV_TASK_POSITIONS = 448 };

/* Input features summed in one run of the kernel, at most: about this many
 * products per run, each run's sum from zero then added to the tile, as the
 * GEMM does per K block, so that the rounding error grows with the runs'
 * length and not the whole sum's (one chain of 576 products rounded about
 * 1.6 times worse than the GEMM's three blocks of 192). */
enum { CONV_PRODUCTS_PER_RUN = 192 };

/* The generated code's signature (System V):
 *   features  input features to sum over (the loop count)
 *   weights   per feature, per tap, CONV_MR floats (one per output feature)
 *   input     the plane of feature 0 (padded, or the input itself) at the
 *             tile's first position; feature c's is plane_bytes further on
 *   out       the tile's first output; output feature rows out_row_bytes apart
 *   accumulate  0: out = the sum; otherwise out = out + the sum
 *   masks     reading the input in place: the tile's masks, per tap, per
 *             vector, the lanes whose tap lies inside the input
 *   result    NULL, or where out + the sum goes instead of out (the last
 *             run of a tile that writes the result itself): rows
 *             result_row_bytes apart, 64-byte aligned, streamed */
typedef void ConvKernelFn(int64_t features, const float *weights, const float *input, float *out,
                          int64_t out_row_bytes, int64_t plane_bytes, int64_t accumulate, const uint16_t *masks,
                          float *result, int64_t result_row_bytes);

/* How a kernel reads its taps: from a padded plane (every load plain);
 * in place with the masks of the tap's column held in k registers (a tile
 * whose masks depend on the column only); in place loading each tap's
 * masks in the loop (any tile). */
typedef enum ConvReads { CONV_READS_PADDED, CONV_READS_COLUMN_MASKS, CONV_READS_TAP_MASKS } ConvReads;
enum { CONV_KERNELS = 3 };
/* In place, the columns whose taps shift the read (all but one column of
 * a "same" window): their masks fill k1..k6. */
enum { CONV_MAX_SHIFTED_COLUMNS = 2 };

/* The tiles whose masks change from tap to tap (those at the top and
 * bottom of the image) get kernels of their own, up to this many, whose
 * loads follow the tile's masks, known at compile time (ConvLoad); tiles
 * with the same loads share one. Past this many, the other such tiles run
 * the kernel that loads every mask beside its load. */
enum { CONV_MAX_EDGE_KERNELS = 8 };

/* How an edge tile's kernel reads one vector of one tap:
 * - masked: its mask loaded into k1 beside the load, every input feature;
 * - skipped: none of its lanes lies inside the input (a tap above or below
 *   the image, or positions past the last row), so no load and no
 *   multiply-adds: the tap in padding is skipped, as the evaluator skips it.
 *   The masked load read zeros there, and w * 0 added to a sum leaves it as
 *   it was, but for the sign of a sum that is exactly zero; a non-finite
 *   w's outputs are summed again either way (conv_padding_taps_fix);
 * - plain: every lane inside, no mask;
 * - hoisted: its mask held in a k register for the whole sum, loaded once
 *   (CONV_LOAD_HOISTED + h is k2 + h; one register per distinct mask). */
typedef enum ConvLoad { CONV_LOAD_MASKED, CONV_LOAD_SKIPPED, CONV_LOAD_PLAIN, CONV_LOAD_HOISTED } ConvLoad;
enum { CONV_MAX_HOISTED = 6 };

typedef struct ConvDirect {
  JitCode code;
  ConvKernelFn *kernel[CONV_KERNELS];   /* by ConvReads */
  /* In place, the edge tiles' own kernels (CONV_MAX_EDGE_KERNELS), each
   * made from the masks of edge_tile[e]; per tile, its edge kernel or -1. */
  ConvKernelFn *edge_kernel[CONV_MAX_EDGE_KERNELS];
  int64_t edge_tile[CONV_MAX_EDGE_KERNELS];
  int edge_kernels;
  int8_t *tile_edge_kernel;
  bool in_place;               /* the input is read where it lies, masked */
  uint16_t *masks;             /* in place: per tile, per tap, per vector */
  bool *column_masks_only;     /* in place: per tile, its masks depend on the column only */
  int64_t shifted_columns[CONV_MAX_SHIFTED_COLUMNS], shifted_count;
  int64_t batch, features, out_features, out_blocks, taps;
  int64_t in_h, in_w, out_h, out_w, window_h, window_w;
  int64_t pad_top, pad_left, dilate_h, dilate_w;
  bool reverse_h, reverse_w;
  int64_t row;                 /* S: the flat row length of a padded plane */
  int64_t tiles;               /* per image: ceil(out_h * S / CONV_TILE) */
  int64_t tiles_per_task, tasks_per_image;
  int64_t features_per_run;    /* input features per kernel run (CONV_PRODUCTS_PER_RUN) */
  bool stream;                 /* the result is written past the caches (floats_stream) */
  int64_t tap_reach;           /* the farthest tap's offset in a padded plane */
  int64_t band_rows;           /* most padded rows one task reads */
  int64_t band_plane;          /* floats per feature in a task's band, a multiple of 16 */
  int64_t scratch_row;         /* floats per output feature in a task's scratch */
  /* Element strides: input (batch, feature, y, x), kernel (out, in, y, x),
   * output (batch, feature, y, x); y strides are 0 for one spatial dim. */
  int64_t in_stride[4], kernel_stride[4], out_stride[4];
  ConvGather *gather;          /* for the taps in padding (conv_padding_taps_fix) */
} ConvDirect;

/* ------------------------------------------------------------ the kernel */

static X86Reg conv_accumulator(int row, int v) { return x86_zmm(row * CONV_VECTORS + v); }

/* What the kernel emitter needs: the taps' offsets and how they are read. */
typedef struct ConvKernelShape {
  int64_t tap_offset[CONV_MAX_TAPS];   /* floats from the tile's first position */
  int64_t taps, window_w;
  ConvReads reads;
  bool stream;   /* the result is written past the caches */
  /* CONV_READS_COLUMN_MASKS: per column, 0 (no mask) or the first of its
   * CONV_VECTORS k registers. */
  int column_mask[CONV_MAX_TAPS];
  /* CONV_READS_TAP_MASKS: how each vector of each tap is read (all masked
   * but in an edge tile's own kernel); the hoisted masks' places in the
   * tile's masks, loaded into k2.. at the start. */
  bool edge;
  ConvLoad load[CONV_MAX_TAPS][CONV_VECTORS];
  int64_t hoisted_from[CONV_MAX_HOISTED], hoisted;
} ConvKernelShape;

static bool conv_vector_skipped(const ConvKernelShape *k, int64_t t, int v) {
  return k->reads == CONV_READS_TAP_MASKS && k->load[t][v] == CONV_LOAD_SKIPPED;
}

/* One input feature's taps, unrolled: tap t reads P at the constant offset
 * tap_offset[t] (floats) from the tile's first position; in place, masked
 * where the tap can leave the input (r11: the tile's masks). */
static void conv_kernel_taps_emit(X86Buffer *cb, const ConvKernelShape *k) {
  X86Reg input[CONV_VECTORS] = {x86_zmm(24), x86_zmm(25), x86_zmm(26)};
  for (int64_t t = 0; t < k->taps; t++) {
    int read = 0;
    for (int v = 0; v < CONV_VECTORS; v++) {
      if (conv_vector_skipped(k, t, v)) continue;
      read++;
      X86Operand load = x86_reg(input[v]), from = x86_mem(64, X86_RDX, (int32_t)(k->tap_offset[t] * 4 + v * 64));
      ConvLoad how = k->load[t][v];
      if (k->reads == CONV_READS_TAP_MASKS && how == CONV_LOAD_MASKED) {
        x86_emit(cb, X86_KMOVW, x86_reg(X86_K1), x86_mem(2, X86_R11, (int32_t)((t * CONV_VECTORS + v) * 2)));
        load = x86_zero_masked(load, X86_K1);
      } else if (k->reads == CONV_READS_TAP_MASKS && how >= CONV_LOAD_HOISTED) {
        load = x86_zero_masked(load, X86_K2 + (how - CONV_LOAD_HOISTED));
      } else if (k->reads == CONV_READS_COLUMN_MASKS && k->column_mask[t % k->window_w]) {
        load = x86_zero_masked(load, X86_K1 + (k->column_mask[t % k->window_w] - 1) + v);
      }
      x86_emit(cb, X86_VMOVUPS, load, from);
    }
    for (int i = 0; read > 0 && i < CONV_MR; i++) {
      /* Two broadcast registers in turn, so one row's broadcast need not
       * wait for the previous row's multiply-adds to read theirs. */
      X86Reg weight = x86_zmm(27 + i % 2);
      x86_emit(cb, X86_VBROADCASTSS, x86_reg(weight), x86_mem(4, X86_RSI, (int32_t)((t * CONV_MR + i) * 4)));
      for (int v = 0; v < CONV_VECTORS; v++)
        if (!conv_vector_skipped(k, t, v))
          x86_emit(cb, X86_VFMADD231PS, x86_reg(conv_accumulator(i, v)), x86_reg(input[v]), x86_reg(weight));
    }
  }
}

/* Writes the tile through rcx (rows r8 bytes apart), adding what is there
 * first with add; with to_result, the sum goes instead to the result
 * through rax (rows r9 bytes apart), past the caches with stream (then
 * 64-byte aligned). */
static void conv_tile_store_emit(X86Buffer *cb, bool add, bool to_result, bool stream) {
  for (int i = 0; i < CONV_MR; i++) {
    for (int v = 0; v < CONV_VECTORS; v++) {
      X86Reg acc = conv_accumulator(i, v);
      if (add) x86_emit(cb, X86_VADDPS, x86_reg(acc), x86_reg(acc), x86_mem(64, X86_RCX, v * 64));
      X86Operand to = x86_mem(64, to_result ? X86_RAX : X86_RCX, v * 64);
      x86_emit(cb, to_result && stream ? X86_VMOVNTPS : X86_VMOVUPS, to, x86_reg(acc));
    }
    if (i + 1 < CONV_MR) x86_emit(cb, X86_ADD, x86_reg(X86_RCX), x86_reg(X86_R8));
    if (i + 1 < CONV_MR && to_result) x86_emit(cb, X86_ADD, x86_reg(X86_RAX), x86_reg(X86_R9));
  }
}

/* Registers: rdi features (counts down), rsi weights, rdx input, rcx out,
 * r8 out_row_bytes, r9 plane_bytes, r10 accumulate and r11 masks (the 7th
 * and 8th arguments, from the stack), k1..k6 masks; at the store, rax
 * result and r9 result_row_bytes (the 9th and 10th). All caller-saved: no
 * prologue. */
static bool conv_kernel_emit(X86Buffer *cb, const ConvKernelShape *k) {
  static const char *const reads[CONV_KERNELS] = {"from padded planes", "in place, column masks in k registers",
                                                  "in place, each tap's masks loaded"};
  x86_listing_note(cb, "direct convolution: %d output features x %d positions, %lld taps per input feature, %s",
                   CONV_MR, CONV_TILE, (long long)k->taps,
                   k->edge ? "in place, an edge tile's own: its empty taps skipped, its masks held" : reads[k->reads]);
  x86_emit(cb, X86_MOV, x86_reg(X86_R11), x86_mem(8, X86_RSP, 16));
  for (int64_t h = 0; h < k->hoisted; h++)
    x86_emit(cb, X86_KMOVW, x86_reg(X86_K2 + (int)h), x86_mem(2, X86_R11, (int32_t)(k->hoisted_from[h] * 2)));
  if (k->reads == CONV_READS_COLUMN_MASKS)
    for (int64_t tx = 0; tx < k->window_w; tx++)
      for (int v = 0; k->column_mask[tx] && v < CONV_VECTORS; v++)
        x86_emit(cb, X86_KMOVW, x86_reg(X86_K1 + (k->column_mask[tx] - 1) + v),
                 x86_mem(2, X86_R11, (int32_t)((tx * CONV_VECTORS + v) * 2)));
  for (int i = 0; i < CONV_MR; i++)
    for (int v = 0; v < CONV_VECTORS; v++) {
      X86Reg acc = conv_accumulator(i, v);
      x86_emit(cb, X86_VXORPS, x86_reg(acc), x86_reg(acc), x86_reg(acc));
    }
  X86Label loop = x86_label_new(cb), store = x86_label_new(cb), overwrite = x86_label_new(cb),
           done = x86_label_new(cb);
  x86_emit(cb, X86_MOV, x86_reg(X86_R10), x86_mem(8, X86_RSP, 8));
  x86_emit(cb, X86_TEST, x86_reg(X86_RDI), x86_reg(X86_RDI));
  x86_emit(cb, X86_JE, x86_rel(store));
  x86_align(cb, 16);
  x86_label_bind(cb, loop);
  x86_listing_note(cb, "one input feature: every tap, then the next feature's plane and weights");
  conv_kernel_taps_emit(cb, k);
  x86_emit(cb, X86_ADD, x86_reg(X86_RSI), x86_imm(k->taps * CONV_MR * 4));
  x86_emit(cb, X86_ADD, x86_reg(X86_RDX), x86_reg(X86_R9));
  x86_emit(cb, X86_DEC, x86_reg(X86_RDI));
  x86_emit(cb, X86_JNE, x86_rel(loop));
  x86_label_bind(cb, store);
  X86Label final = x86_label_new(cb), final_overwrite = x86_label_new(cb);
  x86_listing_note(cb, "store the tile, one output feature's positions per row: out + sum when accumulate; "
                       "or (out + sum) into the result, streamed");
  x86_emit(cb, X86_MOV, x86_reg(X86_RAX), x86_mem(8, X86_RSP, 24));
  x86_emit(cb, X86_TEST, x86_reg(X86_RAX), x86_reg(X86_RAX));
  x86_emit(cb, X86_JNE, x86_rel(final));
  x86_emit(cb, X86_TEST, x86_reg(X86_R10), x86_reg(X86_R10));
  x86_emit(cb, X86_JE, x86_rel(overwrite));
  conv_tile_store_emit(cb, true, false, false);
  x86_emit(cb, X86_JMP, x86_rel(done));
  x86_label_bind(cb, overwrite);
  conv_tile_store_emit(cb, false, false, false);
  x86_emit(cb, X86_JMP, x86_rel(done));
  x86_label_bind(cb, final);
  x86_emit(cb, X86_MOV, x86_reg(X86_R9), x86_mem(8, X86_RSP, 32));
  x86_emit(cb, X86_TEST, x86_reg(X86_R10), x86_reg(X86_R10));
  x86_emit(cb, X86_JE, x86_rel(final_overwrite));
  conv_tile_store_emit(cb, true, true, k->stream);
  x86_emit(cb, X86_JMP, x86_rel(done));
  x86_label_bind(cb, final_overwrite);
  conv_tile_store_emit(cb, false, true, k->stream);
  x86_label_bind(cb, done);
  x86_emit0(cb, X86_VZEROUPPER);
  x86_emit0(cb, X86_RET);
  return !cb->failed;
}

/* The kernel shape that reads as `reads` says. In place, the tile's first
 * position reads itself at tap (pad_top, pad_left) of an undilated window:
 * a tap's offset is its shift from there. */
static ConvKernelShape conv_kernel_shape(const ConvDirect *d, ConvReads reads) {
  ConvKernelShape k = {.taps = d->taps, .window_w = d->window_w, .reads = reads, .stream = d->stream};
  int64_t origin = d->in_place ? d->pad_top * d->row + d->pad_left : 0;
  for (int64_t ty = 0; ty < d->window_h; ty++)
    for (int64_t tx = 0; tx < d->window_w; tx++)
      k.tap_offset[ty * d->window_w + tx] = ty * d->dilate_h * d->row + tx * d->dilate_w - origin;
  for (int64_t i = 0; i < d->shifted_count; i++) k.column_mask[d->shifted_columns[i]] = 1 + (int)i * CONV_VECTORS;
  return k;
}

/* The kernel of edge tile `tile` (reading in place): each vector of each
 * tap read as the tile's masks say (ConvLoad), the first CONV_MAX_HOISTED
 * distinct partial masks held in k registers. */
static ConvKernelShape conv_edge_kernel_shape(const ConvDirect *d, int64_t tile) {
  ConvKernelShape k = conv_kernel_shape(d, CONV_READS_TAP_MASKS);
  k.edge = true;
  const uint16_t *masks = d->masks + tile * d->taps * CONV_VECTORS;
  for (int64_t t = 0; t < d->taps; t++)
    for (int v = 0; v < CONV_VECTORS; v++) {
      uint16_t mask = masks[t * CONV_VECTORS + v];
      k.load[t][v] = mask == 0 ? CONV_LOAD_SKIPPED : mask == 0xFFFF ? CONV_LOAD_PLAIN : CONV_LOAD_MASKED;
      if (k.load[t][v] != CONV_LOAD_MASKED) continue;
      int64_t h = 0;
      while (h < k.hoisted && masks[k.hoisted_from[h]] != mask) h++;
      if (h == k.hoisted && k.hoisted < CONV_MAX_HOISTED) k.hoisted_from[k.hoisted++] = t * CONV_VECTORS + v;
      if (h < k.hoisted) k.load[t][v] = (ConvLoad)(CONV_LOAD_HOISTED + h);
    }
  return k;
}

/* Whether two edge kernels are the same code. */
static bool conv_edge_kernels_equal(const ConvKernelShape *a, const ConvKernelShape *b) {
  if (a->hoisted != b->hoisted) return false;
  for (int64_t h = 0; h < a->hoisted; h++)
    if (a->hoisted_from[h] != b->hoisted_from[h]) return false;
  for (int64_t t = 0; t < a->taps; t++)
    for (int v = 0; v < CONV_VECTORS; v++)
      if (a->load[t][v] != b->load[t][v]) return false;
  return true;
}

/* Reading in place: the edge kernels, one per distinct edge tile's loads
 * (at most CONV_MAX_EDGE_KERNELS), and each tile's. */
static void conv_direct_edge_kernels_choose(ConvDirect *d) {
  d->tile_edge_kernel = mem_malloc((size_t)d->tiles * sizeof *d->tile_edge_kernel);
  for (int64_t tile = 0; tile < d->tiles; tile++) {
    d->tile_edge_kernel[tile] = -1;
    if (d->column_masks_only[tile]) continue;
    ConvKernelShape k = conv_edge_kernel_shape(d, tile);
    int e = 0;
    while (e < d->edge_kernels) {
      ConvKernelShape other = conv_edge_kernel_shape(d, d->edge_tile[e]);
      if (conv_edge_kernels_equal(&k, &other)) break;
      e++;
    }
    if (e == d->edge_kernels && e < CONV_MAX_EDGE_KERNELS) d->edge_tile[d->edge_kernels++] = tile;
    if (e < d->edge_kernels) d->tile_edge_kernel[tile] = (int8_t)e;
  }
}

/* The kernels the plan runs, by index: the ConvReads ones (the padded one,
 * or the two that read in place), then the edge kernels. */
static int conv_direct_kernel_count(const ConvDirect *d) { return CONV_KERNELS + d->edge_kernels; }
static bool conv_direct_kernel_used(const ConvDirect *d, int r) {
  return r >= CONV_KERNELS || (d->in_place ? r != CONV_READS_PADDED : r == CONV_READS_PADDED);
}
static ConvKernelShape conv_direct_kernel_shape(const ConvDirect *d, int r) {
  return r < CONV_KERNELS ? conv_kernel_shape(d, (ConvReads)r) : conv_edge_kernel_shape(d, d->edge_tile[r - CONV_KERNELS]);
}

/* Every kernel the plan runs, in one mapping. */
static bool conv_direct_compile(ConvDirect *d, Status *st) {
  static const char *const names[CONV_KERNELS] = {"", ", column masks", ", tap masks"};
  size_t start[CONV_KERNELS + CONV_MAX_EDGE_KERNELS + 1] = {0};
  X86Buffer cb;
  x86_buffer_init(&cb);
  for (int r = 0; r < conv_direct_kernel_count(d); r++) {
    x86_align(&cb, 64);
    start[r] = cb.size;
    ConvKernelShape k = conv_direct_kernel_shape(d, r);
    if (conv_direct_kernel_used(d, r)) conv_kernel_emit(&cb, &k);
    start[r + 1] = cb.size;
  }
  bool ok = x86_buffer_finish(&cb, st) && jit_code_create(&d->code, cb.code, cb.size, st);
  for (int r = 0; ok && r < conv_direct_kernel_count(d); r++) {
    if (!conv_direct_kernel_used(d, r)) continue;
    ConvKernelFn *kernel = (ConvKernelFn *)jit_code_function(&d->code, start[r]);
    if (r < CONV_KERNELS) {
      jit_code_name(&d->code, start[r], start[r + 1] - start[r], "axle direct convolution %dx%d, %lld taps%s", CONV_MR,
                    CONV_TILE, (long long)d->taps, names[r]);
      d->kernel[r] = kernel;
    } else {
      jit_code_name(&d->code, start[r], start[r + 1] - start[r], "axle direct convolution %dx%d, %lld taps, edge tile %lld",
                    CONV_MR, CONV_TILE, (long long)d->taps, (long long)d->edge_tile[r - CONV_KERNELS]);
      d->edge_kernel[r - CONV_KERNELS] = kernel;
    }
  }
  x86_buffer_free(&cb);
  return ok;
}

/* -------------------------------------------------------------- the plan */

static int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

/* Strides of four roles of s (a spatial role of -1 has stride 0). */
static void role_strides(const Shape *s, int64_t batch, int64_t feature, int64_t y, int64_t x, int64_t out[4]) {
  int64_t strides[AXLE_MAX_RANK];
  shape_layout_strides(s, strides);
  int64_t roles[4] = {batch, feature, y, x};
  for (int i = 0; i < 4; i++) out[i] = roles[i] < 0 ? 0 : strides[roles[i]];
}

/* Whether conv is one this path computes: f32 throughout, one or two
 * spatial dims, one feature and batch group, stride 1, no input dilation,
 * no negative padding, a window of at most CONV_MAX_TAPS taps, the result's
 * positions innermost. */
static bool conv_direct_applies(const Instruction *conv, const ConvPlan *plan, const CpuFeatures *cpu) {
  const ConvDims *cd = attrs_conv(&conv->attrs);
  const Shape *in = &conv->operands[0]->shape, *kernel = &conv->operands[1]->shape;
  if (cpu->level != CPU_LEVEL_AVX512 || in->type != TYPE_F32 || kernel->type != TYPE_F32 ||
      conv->shape.type != TYPE_F32 || plan->spatial_count < 1 || plan->spatial_count > 2 || plan->groups > 1)
    return false;
  int64_t taps = 1;
  for (int s = 0; s < plan->spatial_count; s++) {
    taps *= plan->kernel_size[s];
    const WindowDim *w = &plan->window[s];
    if (w->stride != 1 || w->lhs_dilate != 1 || w->pad_lo < 0 || w->pad_hi < 0) return false;
  }
  if (taps < 1 || taps > CONV_MAX_TAPS) return false;
  /* Only where the result holds each feature's positions together, in
   * order (NCHW and the like): there the implicit GEMM is turned around and
   * cannot fuse an epilogue either; elsewhere (NHWC) its rows are the
   * result's and it runs a fused bias and activation on each block of them,
   * which this path does not. */
  int64_t strides[AXLE_MAX_RANK], extent = 1;
  shape_layout_strides(&conv->shape, strides);
  for (int s = cd->spatial_count - 1; s >= 0; s--) {
    int64_t d = cd->output_spatial[s];
    if (conv->shape.dims[d] > 1 && strides[d] != extent) return false;
    extent *= conv->shape.dims[d];
  }
  return true;
}

/* Whether the kernels can read the input where it lies (see the top of the
 * file): its rows contiguous and as long as the result's (then S = W and
 * a flat position is the input's own), at most CONV_MAX_SHIFTED_COLUMNS
 * columns of the window reading off their position. */
static void conv_direct_in_place_choose(ConvDirect *d) {
  d->shifted_count = 0;
  bool rows = d->in_stride[3] == 1 && (d->in_h == 1 || d->in_stride[2] == d->in_w) && d->out_w == d->in_w;
  for (int64_t tx = 0; rows && tx < d->window_w; tx++) {
    if (tx * d->dilate_w == d->pad_left) continue;
    if (d->shifted_count == CONV_MAX_SHIFTED_COLUMNS) return;
    d->shifted_columns[d->shifted_count++] = tx;
  }
  d->in_place = rows;
  if (d->in_place) d->row = d->in_w;
}

/* The sizes, window and strides of conv, y first; with one spatial dim, y
 * is a dimension of size 1. */
static void conv_direct_describe(ConvDirect *d, const Instruction *conv, const ConvPlan *plan) {
  const ConvDims *cd = attrs_conv(&conv->attrs);
  const Shape *in = &conv->operands[0]->shape, *kernel = &conv->operands[1]->shape, *out = &conv->shape;
  bool two = plan->spatial_count == 2;
  int sy = 0, sx = two ? 1 : 0;
  WindowDim plain = {.stride = 1, .lhs_dilate = 1, .rhs_dilate = 1};
  WindowDim wy = two ? plan->window[sy] : plain, wx = plan->window[sx];
  d->batch = plan->batch;
  d->features = plan->features;
  d->out_features = plan->out_features;
  d->out_blocks = (d->out_features + CONV_MR - 1) / CONV_MR;
  d->in_h = two ? plan->in_size[sy] : 1;
  d->in_w = plan->in_size[sx];
  d->out_h = two ? plan->out_size[sy] : 1;
  d->out_w = plan->out_size[sx];
  d->window_h = two ? plan->kernel_size[sy] : 1;
  d->window_w = plan->kernel_size[sx];
  d->taps = d->window_h * d->window_w;
  d->pad_top = wy.pad_lo;
  d->pad_left = wx.pad_lo;
  d->dilate_h = wy.rhs_dilate;
  d->dilate_w = wx.rhs_dilate;
  d->reverse_h = wy.reversal;
  d->reverse_w = wx.reversal;
  int64_t pad_max = wx.pad_lo > wx.pad_hi ? wx.pad_lo : wx.pad_hi;
  d->row = d->in_w + pad_max > d->out_w ? d->in_w + pad_max : d->out_w;
  role_strides(in, cd->input_batch, cd->input_feature, two ? cd->input_spatial[sy] : -1, cd->input_spatial[sx],
               d->in_stride);
  role_strides(kernel, cd->kernel_output_feature, cd->kernel_input_feature, two ? cd->kernel_spatial[sy] : -1,
               cd->kernel_spatial[sx], d->kernel_stride);
  role_strides(out, cd->output_batch, cd->output_feature, two ? cd->output_spatial[sy] : -1, cd->output_spatial[sx],
               d->out_stride);
  conv_direct_in_place_choose(d);
}

/* How the work is cut: tiles of flat positions, a run of them per task,
 * and the band of padded rows such a run reads. */
static void conv_direct_block(ConvDirect *d) {
  d->tiles = (d->out_h * d->row + CONV_TILE - 1) / CONV_TILE;
  d->tiles_per_task = CONV_TASK_POSITIONS / CONV_TILE;
  if (d->tiles_per_task > d->tiles) d->tiles_per_task = d->tiles;
  d->tasks_per_image = (d->tiles + d->tiles_per_task - 1) / d->tiles_per_task;
  /* A run's positions, plus the farthest tap, span this many flat rows
   * (one more for a start in the middle of a row). */
  d->tap_reach = (d->window_h - 1) * d->dilate_h * d->row + (d->window_w - 1) * d->dilate_w;
  d->band_rows = (d->tiles_per_task * CONV_TILE + d->tap_reach) / d->row + 2;
  /* An odd multiple of 16 floats: planes a multiple of 4 KiB apart would
   * meet in the same L1 sets. */
  d->band_plane = round_up(d->band_rows * d->row, 16);
  enum { CONV_STREAM_MIN_BYTES = 8 << 20 };
  d->stream = (double)d->batch * (double)d->out_features * (double)d->out_h * (double)d->out_w * 4 >= CONV_STREAM_MIN_BYTES;
  if (d->band_plane % 1024 == 0) d->band_plane += 16;
  d->scratch_row = d->tiles_per_task * CONV_TILE + 16;
  int64_t most = CONV_PRODUCTS_PER_RUN / d->taps > 1 ? CONV_PRODUCTS_PER_RUN / d->taps : 1;
  int64_t runs = (d->features + most - 1) / most;
  d->features_per_run = runs > 0 ? (d->features + runs - 1) / runs : 1;
}

/* Reading in place: the lanes of tile `tile`, tap (ty, tx), vector v
 * whose position is a real one and whose tap lies inside the input. */
static uint16_t conv_lanes_inside(const ConvDirect *d, int64_t tile, int64_t ty, int64_t tx, int v) {
  uint16_t mask = 0;
  for (int lane = 0; lane < 16; lane++) {
    int64_t q = tile * CONV_TILE + v * 16 + lane, y = q / d->row, x = q % d->row;
    int64_t iy = y + ty * d->dilate_h - d->pad_top, ix = x + tx * d->dilate_w - d->pad_left;
    if (y < d->out_h && iy >= 0 && iy < d->in_h && ix >= 0 && ix < d->in_w) mask |= (uint16_t)(1u << lane);
  }
  return mask;
}

/* Reading in place: every tile's masks, and whether they depend on the
 * column only: all lanes for the columns that read their own position,
 * the same for every row of the window in the shifted ones. */
static void conv_direct_masks(ConvDirect *d) {
  d->masks = mem_calloc((size_t)(d->tiles * d->taps * CONV_VECTORS), sizeof *d->masks);
  d->column_masks_only = mem_calloc((size_t)d->tiles, sizeof *d->column_masks_only);
  bool shifted[CONV_MAX_TAPS] = {false};
  for (int64_t i = 0; i < d->shifted_count; i++) shifted[d->shifted_columns[i]] = true;
  for (int64_t tile = 0; tile < d->tiles; tile++) {
    uint16_t *m = d->masks + tile * d->taps * CONV_VECTORS;
    bool column_only = true;
    for (int64_t ty = 0; ty < d->window_h; ty++)
      for (int64_t tx = 0; tx < d->window_w; tx++)
        for (int v = 0; v < CONV_VECTORS; v++) {
          uint16_t mask = conv_lanes_inside(d, tile, ty, tx, v);
          m[(ty * d->window_w + tx) * CONV_VECTORS + v] = mask;
          column_only = column_only && mask == (shifted[tx] ? m[tx * CONV_VECTORS + v] : 0xFFFF);
        }
    d->column_masks_only[tile] = column_only;
  }
}

static void conv_direct_free(void *state) {
  ConvDirect *d = state;
  jit_code_free(&d->code);
  mem_free(d->masks);
  mem_free(d->column_masks_only);
  mem_free(d->tile_edge_kernel);
  mem_free(d->gather);
  mem_free(d);
}

/* --------------------------------------------------------------- the run */

/* A task's buffers: its band of padded input planes and its output tile
 * rows, one set per thread, taken by the task that finds it free. */
typedef struct ConvScratch {
  float *band, *out;
  atomic_bool busy;
} ConvScratch;

typedef struct ConvRun {
  const ConvDirect *d;
  const float *in, *kernel;
  float *out, *weights;   /* weights packed: [out block][feature][tap][CONV_MR] */
  ConvScratch *scratch;
  int scratch_count;
  bool writes_result;     /* conv_writes_result */
} ConvRun;

static float *align64(void *p) { return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

/* The kernel's weights, out block by out block; output features past the
 * last (in the last block) are 0. Window reversal reads the window's tap
 * size-1-t for tap t. */
static void weights_pack(const ConvRun *r) {
  const ConvDirect *d = r->d;
  const int64_t *ks = d->kernel_stride;
  float *to = r->weights;
  for (int64_t b = 0; b < d->out_blocks; b++)
    for (int64_t c = 0; c < d->features; c++)
      for (int64_t ty = 0; ty < d->window_h; ty++)
        for (int64_t tx = 0; tx < d->window_w; tx++) {
          int64_t ky = d->reverse_h ? d->window_h - 1 - ty : ty, kx = d->reverse_w ? d->window_w - 1 - tx : tx;
          for (int i = 0; i < CONV_MR; i++) {
            int64_t o = b * CONV_MR + i;
            *to++ = o < d->out_features ? r->kernel[o * ks[0] + c * ks[1] + ky * ks[2] + kx * ks[3]] : 0.0f;
          }
        }
}

/* Padded rows first_row.. of every input feature of image n into band:
 * padded row r holds input row r - pad_top at columns pad_left.., zeros
 * around it (and below the image, for the reads past its last row). Only
 * the zeros are written besides the rows: the kernel reads nothing past
 * the band's rows. */
static void band_fill(const ConvRun *r, int64_t n, int64_t first_row, float *band) {
  const ConvDirect *d = r->d;
  const int64_t *is = d->in_stride;
  size_t right = (size_t)(d->row - d->pad_left - d->in_w) * sizeof(float);
  for (int64_t c = 0; c < d->features; c++)
    for (int64_t row = 0; row < d->band_rows; row++) {
      int64_t y = first_row + row - d->pad_top;
      float *to = band + c * d->band_plane + row * d->row;
      if (y < 0 || y >= d->in_h) {
        memset(to, 0, (size_t)d->row * sizeof *to);
        continue;
      }
      const float *from = r->in + n * is[0] + c * is[1] + y * is[2];
      memset(to, 0, (size_t)d->pad_left * sizeof *to);
      to += d->pad_left;
      if (is[3] == 1) memcpy(to, from, (size_t)d->in_w * sizeof *to);
      else for (int64_t x = 0; x < d->in_w; x++) to[x] = from[x * is[3]];
      memset(to + d->in_w, 0, right);
    }
}

/* dst[0..n) = src[0..n) with stores that bypass the caches where SSE2
 * has them (movntps, from dst's first 16-byte boundary on): a result
 * larger than the caches is written once and read by no one in this call,
 * and a plain store would first read each line of it from memory (the 3x3
 * convolution 32x64x56x56: about 5% faster). */
static void floats_stream(float *restrict dst, const float *restrict src, int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  for (; i < n && ((uintptr_t)(dst + i) & 15) != 0; i++) dst[i] = src[i];
  for (; i + 4 <= n; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
#endif
  for (; i < n; i++) dst[i] = src[i];
}

/* The real outputs among flat positions first.. (count of them) of image n,
 * from the scratch rows to the result. */
static void outputs_copy(const ConvRun *r, int64_t n, int64_t first, int64_t count, const float *scratch,
                         int64_t first_feature) {
  const ConvDirect *d = r->d;
  const int64_t *os = d->out_stride;
  for (int64_t o = first_feature; o < d->out_features; o++)
    for (int64_t q = first; q < first + count;) {
      int64_t y = q / d->row, x = q % d->row, run = d->row - x < first + count - q ? d->row - x : first + count - q;
      if (y >= d->out_h) break;
      int64_t real = x < d->out_w ? (d->out_w - x < run ? d->out_w - x : run) : 0;
      const float *from = scratch + o * d->scratch_row + (q - first);
      float *to = r->out + n * os[0] + o * os[1] + y * os[2] + x * os[3];
      if (os[3] == 1 && d->stream) floats_stream(to, from, real);
      else if (os[3] == 1) memcpy(to, from, (size_t)real * sizeof *to);
      else for (int64_t i = 0; i < real; i++) to[i * os[3]] = from[i];
      q += run;
    }
}

/* Whether the kernels write their tiles into the result themselves rather
 * than into scratch rows copied out after: read in place (so a flat
 * position is the result's own) into contiguous rows; for the streaming
 * stores of a result larger than the caches, every output feature's
 * positions 64-byte aligned. */
static bool conv_writes_result(const ConvDirect *d, const float *out) {
  const int64_t *os = d->out_stride;
  bool aligned = (uintptr_t)out % 64 == 0 && os[0] % 16 == 0 && os[1] % 16 == 0;
  return d->in_place && os[3] == 1 && (d->out_h == 1 || os[2] == d->out_w) && (!d->stream || aligned);
}

static ConvScratch *scratch_acquire(const ConvRun *r) {
  /* At most scratch_count tasks run at once, so a free set exists. */
  for (;;)
    for (int i = 0; i < r->scratch_count; i++)
      if (!atomic_exchange(&r->scratch[i].busy, true)) return &r->scratch[i];
}

/* Task (image, run of tiles): pad the band, every out block over every
 * tile of the run (a block's weights stay in L1 across its tiles), copy the
 * outputs out. */
static void conv_task(void *context, int64_t index) {
  const ConvRun *r = context;
  const ConvDirect *d = r->d;
  int64_t n = index / d->tasks_per_image, first_tile = index % d->tasks_per_image * d->tiles_per_task;
  int64_t tiles = d->tiles - first_tile < d->tiles_per_task ? d->tiles - first_tile : d->tiles_per_task;
  int64_t first = first_tile * CONV_TILE, first_row = first / d->row;
  ConvScratch *s = scratch_acquire(r);
  const float *input = r->in + n * d->in_stride[0] + first;
  int64_t plane = d->in_stride[1];
  if (!d->in_place) {
    band_fill(r, n, first_row, s->band);
    input = s->band + (first - first_row * d->row);
    plane = d->band_plane;
    /* The kernel's last load ends inside the band (it reads no further). */
    assert(first - first_row * d->row + tiles * CONV_TILE + d->tap_reach <= d->band_rows * d->row);
  }
  /* The blocks of CONV_MR real output features whose tiles, all of them
   * real positions, the kernel's last run writes into the result itself. */
  const int64_t *os = d->out_stride;
  bool whole = (first_tile + tiles) * CONV_TILE <= d->out_h * d->out_w;
  int64_t result_blocks = r->writes_result && whole ? d->out_features / CONV_MR : 0;
  for (int64_t b = 0; b < d->out_blocks; b++) {
    const float *weights = r->weights + b * d->features * d->taps * CONV_MR;
    float *out = s->out + b * CONV_MR * d->scratch_row;
    float *result = b < result_blocks ? r->out + n * os[0] + b * CONV_MR * os[1] + first : NULL;
    for (int64_t t = 0; t < tiles; t++) {
      int64_t tile = first_tile + t;
      ConvKernelFn *kernel = d->kernel[CONV_READS_PADDED];
      const uint16_t *masks = NULL;
      if (d->in_place) {
        int edge = d->tile_edge_kernel[tile];
        masks = d->masks + tile * d->taps * CONV_VECTORS;
        kernel = d->column_masks_only[tile] ? d->kernel[CONV_READS_COLUMN_MASKS]
                 : edge >= 0                ? d->edge_kernel[edge]
                                            : d->kernel[CONV_READS_TAP_MASKS];
      }
      for (int64_t c = 0; c < d->features; c += d->features_per_run) {
        int64_t count = d->features - c < d->features_per_run ? d->features - c : d->features_per_run;
        bool last = c + count == d->features;
        kernel(count, weights + c * d->taps * CONV_MR, input + c * plane + t * CONV_TILE, out + t * CONV_TILE,
               d->scratch_row * 4, plane * 4, c > 0, masks, last && result ? result + t * CONV_TILE : NULL, os[1] * 4);
      }
    }
  }
  outputs_copy(r, n, first, tiles * CONV_TILE, s->out, result_blocks * CONV_MR);
#if defined(__SSE2__)
  _mm_sfence();  /* the streamed stores reach memory before the task is seen done */
#endif
  atomic_store(&s->busy, false);
}

/* The CPU_STEP_CALL routine: buffers are the input, the kernel, the result. */
static bool conv_direct_call(const CpuStep *step, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)st;  /* out of memory unwinds */
  const ConvDirect *d = step->state;
  ConvRun r = {.d = d, .in = buffers[0], .kernel = buffers[1], .out = buffers[2]};
  r.scratch_count = pool ? thread_pool_thread_count(pool) : 1;
  size_t weight_floats = (size_t)(d->out_blocks * d->features * d->taps * CONV_MR);
  size_t band_floats = d->in_place ? 0 : (size_t)(d->features * d->band_plane), out_floats = (size_t)(d->out_blocks * CONV_MR * d->scratch_row);
  void *weight_memory = mem_malloc((weight_floats + 16) * sizeof(float));
  r.weights = align64(weight_memory);
  r.scratch = mem_calloc((size_t)r.scratch_count, sizeof *r.scratch);
  void **memory = mem_calloc((size_t)r.scratch_count * 2, sizeof *memory);
  for (int i = 0; i < r.scratch_count; i++) {
    memory[2 * i] = mem_malloc((band_floats + 16) * sizeof(float));
    memory[2 * i + 1] = mem_malloc((out_floats + 16) * sizeof(float));
    r.scratch[i].band = align64(memory[2 * i]);
    r.scratch[i].out = align64(memory[2 * i + 1]);
    atomic_init(&r.scratch[i].busy, false);
  }
  weights_pack(&r);
  r.writes_result = conv_writes_result(d, r.out);
  thread_pool_run(pool, d->batch * d->tasks_per_image, conv_task, &r);
  /* The kernel multiplied the taps in padding by the zeros there. */
  if (conv_padding_fix_needed(d->gather, r.kernel)) conv_padding_taps_fix(d->gather, r.in, r.kernel, r.out, pool);
  for (int i = 0; i < 2 * r.scratch_count; i++) mem_free(memory[i]);
  mem_free(memory);
  mem_free(r.scratch);
  mem_free(weight_memory);
  return true;
}

bool conv_direct_step_add(CpuCompile *c, const Instruction *inst, const Instruction *conv, const ConvPlan *plan,
                          int lhs, int rhs, int out, bool *added) {
  *added = false;
  if (!conv_direct_applies(conv, plan, &c->p->cpu)) return true;
  ConvDirect *d = mem_calloc(1, sizeof *d);
  d->gather = conv_gather_create(conv, plan);
  conv_direct_describe(d, conv, plan);
  conv_direct_block(d);
  if (d->in_place) conv_direct_masks(d);
  if (d->in_place) conv_direct_edge_kernels_choose(d);
  /* The taps' displacements must fit the instructions' 32 bits. */
  if ((double)d->band_plane * 4 > (double)INT32_MAX) {
    conv_direct_free(d);
    return true;
  }
  if (lhs < 0 || rhs < 0 || out < 0) {
    conv_direct_free(d);
    return cpu_refuse(c, inst, "a convolution operand the plan does not place");
  }
  if (!conv_direct_compile(d, c->st)) {
    conv_direct_free(d);
    return false;
  }
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, 3);
  s->call = conv_direct_call;
  s->state = d;
  s->free_state = conv_direct_free;
  s->buffers[0] = lhs;
  s->buffers[1] = rhs;
  s->buffers[2] = out;
  *added = true;
  return true;
}

bool conv_direct_step_is(const CpuStep *s) { return s->kind == CPU_STEP_CALL && s->call == conv_direct_call; }

bool conv_direct_print_listing(const CpuStep *s, FILE *out, Status *st) {
  const ConvDirect *d = s->state;
  X86Buffer cb;
  x86_buffer_init(&cb);
  x86_buffer_enable_listing(&cb);
  for (int r = 0; r < conv_direct_kernel_count(d); r++) {
    ConvKernelShape k = conv_direct_kernel_shape(d, r);
    if (conv_direct_kernel_used(d, r)) conv_kernel_emit(&cb, &k);
  }
  bool ok = x86_buffer_finish(&cb, st);
  if (ok) x86_listing_print(&cb, out);
  x86_buffer_free(&cb);
  return ok;
}

void conv_direct_schedule_describe(const CpuStep *s, StrBuf *sb) {
  const ConvDirect *d = s->state;
  int64_t column_only = 0;
  for (int64_t t = 0; d->in_place && t < d->tiles; t++) column_only += d->column_masks_only[t];
  if (d->in_place)
    strbuf_printf(sb, "direct, tile %d features x %d positions, input read in place in rows of %lld (%lld of %lld tiles "
                      "with column masks, %d edge kernels), ",
                  CONV_MR, CONV_TILE, (long long)d->row, (long long)column_only, (long long)d->tiles, d->edge_kernels);
  else
    strbuf_printf(sb, "direct, tile %d features x %d positions, padded rows of %lld, ", CONV_MR, CONV_TILE,
                  (long long)d->row);
  strbuf_printf(sb, "%lld tasks per image of %lld tiles, %lld input features per kernel run",
                (long long)d->tasks_per_image, (long long)d->tiles_per_task, (long long)d->features_per_run);
}
