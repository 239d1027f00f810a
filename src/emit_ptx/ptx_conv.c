/* The implicit-GEMM convolution kernel (see ptx_conv.h for the GEMM).
 *
 * A block of 16x16 threads computes a BM x BN tile of one group's output
 * (BM = 16*TM pixels, BN = 16*TN features): thread (tx, ty) holds the
 * TM x TN outputs at rows ty + 16i and columns tx + 16j in registers. The
 * K dimension is walked in steps of BK = 16: the block loads the A tile
 * (BM x BK) and the B tile (BK x BN) into shared memory, every element
 * masked (0 past M, N or K, in padding, in a hole of the lhs dilation),
 * synchronizes, and each thread does its TM x TN x BK multiply-adds.
 * Where the window can leave the input (positive padding, lhs dilation),
 * a flag tile beside A says which of its elements are real, and the
 * multiply-adds of the others are skipped: a tap in padding contributes
 * nothing, as in the evaluator, even for an infinite or NaN weight (0 * inf
 * would be NaN).
 *
 * Loads: a thread's A element is k = k0 + tx for its rows ty + 16i, so
 * lanes run along k, that is along the input features of one tap (the
 * minor dimension of an NHWC lhs); its B elements are column tid % BN
 * (the output features, minor in an HWIO rhs) at rows tid / BN + step*j.
 * A thread's pixels are decomposed once per tile; its k once per step.
 *
 * Arithmetic: f32, f16 and bf16 accumulate in f32 with fma (f16/bf16
 * widened exactly, the sum rounded once at the store), f64 in f64; c64
 * and c128 keep both parts in tiles and sums of their own, in f32 and f64
 * (each complex product is four fma). Each
 * output's sum in increasing k: the same bits every run. XLA sums f16,
 * bf16 and f32 in f32 too; the evaluator sums in double, so results agree
 * within the comparison tolerance, not to the bit.
 *
 * The store: each sum rounded to the result type and written, or, for an
 * output fusion, handed to the fusion's epilogue (a loop kernel of the
 * kernel IR, emitted by ptx_kernel.c's op walk at the output's index),
 * which stores what the fusion stores.
 *
 * The tiles are taken from a grid-stride loop (block-uniform, so the
 * barriers are met by every thread of a block): any grid is correct. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_conv.h"
#include "emit_ptx/ptx_kernel_internal.h"

enum { CONV_SIDE = 16, CONV_THREADS = CONV_SIDE * CONV_SIDE, CONV_BK = 16, CONV_MAX_TILE = 4 };

int64_t ptx_conv_m(const PtxConv *conv) {
  int64_t m = conv->out_batch;
  for (int s = 0; s < conv->spatial_count; s++) m *= conv->out_spatial[s];
  return m;
}

int64_t ptx_conv_n(const PtxConv *conv) { return conv->group_out_features; }

int64_t ptx_conv_k(const PtxConv *conv) {
  int64_t k = conv->group_in_features;
  for (int s = 0; s < conv->spatial_count; s++) k *= conv->kernel_spatial[s];
  return k;
}

typedef struct ConvEmit {
  PtxBuilder *b;
  const PtxConv *conv;
  int tm, tn, bm, bn;           /* register tile and block tile */
  PtxType acc_type;             /* f32, or f64 for f64 and c128 */
  int parts;                    /* 2 for complex: real and imaginary parts */
  int acc_bytes;
  bool skips_outside;           /* a flag tile marks A's elements in padding or holes */
  PtxReg lhs, rhs, out;         /* global pointers */
  PtxReg tx, ty, tid;           /* u32 */
  /* per tile */
  PtxReg row_valid[CONV_MAX_TILE], row_lhs[CONV_MAX_TILE], row_out[CONV_MAX_TILE];
  PtxReg row_start[CONV_MAX_TILE][AXLE_MAX_RANK];
  PtxReg row_coords[CONV_MAX_TILE][AXLE_MAX_RANK + 1];   /* batch, then spatial */
  PtxReg col_rhs, col_valid, n0, group;
  Emit *epilogue;               /* the fused epilogue's emitter, or NULL */
  int epilogue_dim[AXLE_MAX_RANK];  /* the epilogue's dim of each result dim */
  PtxReg acc[2][CONV_MAX_TILE][CONV_MAX_TILE];   /* [part][i][j] */
} ConvEmit;

/* The shared tiles of each part of A and of B. */
static const char *const a_tiles[2] = {"a_tile", "a_tile_im"}, *const b_tiles[2] = {"b_tile", "b_tile_im"};
static const char *const a_inside_tile = "a_inside";  /* u32 per A element, 1 where it is an input element */

/* Whether some window of conv reaches past the input or into a hole of
 * the lhs dilation (negative padding only starts the window inside). */
static bool window_can_leave_input(const PtxConv *conv) {
  for (int s = 0; s < conv->spatial_count; s++) {
    const WindowDim *w = &conv->window[s];
    if (w->pad_lo > 0 || w->pad_hi > 0 || w->lhs_dilate > 1) return true;
  }
  return false;
}

/* ---- small pieces ---- */

static PtxReg pred_and(ConvEmit *E, PtxReg a, PtxReg b) {
  PtxReg p = ptx_reg_new(E->b, PTX_PRED);
  ptx_inst(E->b, "and.pred $r, $r, $r", p, a, b);
  return p;
}

/* p = value < limit (signed 64-bit, limit an immediate). */
static PtxReg less_than(ConvEmit *E, PtxReg value, int64_t limit) {
  PtxReg p = ptx_reg_new(E->b, PTX_PRED);
  ptx_inst(E->b, "setp.lt.s64 $r, $r, $D", p, value, limit);
  return p;
}

/* index split into coordinates over extents[0..count) (the last fastest):
 * out[d], s64. An index may run past the extents' product by less than a
 * tile (masked elements); where that still fits in 32 bits the divisions
 * are 32-bit, which ptxas turns into a multiply and a shift (a 64-bit
 * division by a constant costs tens of instructions, and this runs for
 * every k step). */
static void index_split(ConvEmit *E, PtxReg index, const int64_t *extents, int count, PtxReg *out) {
  PtxBuilder *b = E->b;
  int64_t total = 1;
  for (int d = 0; d < count; d++) total *= extents[d];
  bool narrow = total <= INT32_MAX - (1 << 16);
  PtxReg rest = index;
  if (narrow) {
    rest = ptx_reg_new(b, PTX_U32);
    ptx_inst(b, "cvt.u32.u64 $r, $r", rest, index);
  }
  for (int d = count - 1; d >= 0; d--) {
    out[d] = ptx_reg_new(b, PTX_S64);
    PtxReg part = rest;
    if (d > 0) {
      PtxReg q = ptx_reg_new(b, narrow ? PTX_U32 : PTX_U64);
      part = ptx_reg_new(b, narrow ? PTX_U32 : PTX_U64);
      ptx_inst(b, narrow ? "rem.u32 $r, $r, $D" : "rem.u64 $r, $r, $D", part, rest, extents[d]);
      ptx_inst(b, narrow ? "div.u32 $r, $r, $D" : "div.u64 $r, $r, $D", q, rest, extents[d]);
      rest = q;
    }
    if (narrow) ptx_inst(b, "cvt.u64.u32 $r, $r", out[d], part);
    else ptx_inst(b, "mov.b64 $r, $r", out[d], part);
  }
}

/* The real value of type t at address in the accumulator type, or 0 where
 * p is false (nothing is read then). Every conversion here is exact: f16
 * and bf16 into f32, f32 into f64. */
static PtxReg masked_load_real(ConvEmit *E, ElementType t, PtxReg address, PtxReg p) {
  PtxBuilder *b = E->b;
  if (t == TYPE_F64) {
    PtxReg v = ptx_reg_new(b, PTX_F64);
    ptx_inst(b, "mov.f64 $r, 0d0000000000000000", v);
    ptx_inst(b, "@$r ld.global.f64 $r, [$r]", p, v, address);
    return v;
  }
  PtxReg v = ptx_reg_new(b, PTX_F32);
  if (t == TYPE_F32) {
    ptx_inst(b, "mov.f32 $r, 0f00000000", v);
    ptx_inst(b, "@$r ld.global.f32 $r, [$r]", p, v, address);
  } else {
    /* +0 has all bits clear in f16 and bf16 */
    PtxReg h = ptx_reg_new(b, PTX_B16);
    ptx_inst(b, "mov.b16 $r, 0", h);
    ptx_inst(b, "@$r ld.global.b16 $r, [$r]", p, h, address);
    if (t == TYPE_F16) {
      ptx_inst(b, "cvt.f32.f16 $r, $r", v, h);
    } else {
      /* before sm_90 no cvt reads bf16, whose bits are the top half of an f32 */
      PtxReg u = ptx_reg_new(b, PTX_U32);
      ptx_inst(b, "cvt.u32.u16 $r, $r", u, h);
      ptx_inst(b, "shl.b32 $r, $r, 16", u, u);
      ptx_inst(b, "mov.b32 $r, $r", v, u);
    }
  }
  if (E->acc_type == PTX_F32) return v;
  PtxReg wide = ptx_reg_new(b, PTX_F64);
  ptx_inst(b, "cvt.f64.f32 $r, $r", wide, v);
  return wide;
}

/* pointer[offset] of type t, each part into v[part]: a complex element is
 * its real part, then its imaginary part. */
static void masked_load(ConvEmit *E, ElementType t, PtxReg pointer, PtxReg offset, PtxReg p, PtxReg *v) {
  PtxBuilder *b = E->b;
  PtxReg address = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mad.lo.s64 $r, $r, $d, $r", address, offset, type_byte_size(t), pointer);
  if (E->parts == 1) {
    v[0] = masked_load_real(E, t, address, p);
    return;
  }
  ElementType part_type = type_complex_component(t);
  PtxReg imaginary = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "add.u64 $r, $r, $d", imaginary, address, type_byte_size(part_type));
  v[0] = masked_load_real(E, part_type, address, p);
  v[1] = masked_load_real(E, part_type, imaginary, p);
}

/* The shared address of element row * pitch + column + extra of tile. */
static PtxReg shared_address(ConvEmit *E, const char *tile, PtxReg row, PtxReg column, int extra, int pitch) {
  PtxBuilder *b = E->b;
  PtxReg base = ptx_reg_new(b, PTX_U32), element = ptx_reg_new(b, PTX_U32), at = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mov.u32 $r, $s", base, tile);
  ptx_inst(b, "mad.lo.u32 $r, $r, $d, $r", element, row, pitch, column);
  ptx_inst(b, "add.u32 $r, $r, $d", element, element, extra);
  ptx_inst(b, "mad.lo.u32 $r, $r, $d, $r", at, element, E->acc_bytes, base);
  return at;
}

/* ---- per tile: the thread's pixels and its B column ---- */

/* Rows ty + 16i of tile mt: whether each is a pixel, where its lhs batch
 * starts (with group g's offset), where each window starts, and where its
 * output is. */
static void tile_rows_emit(ConvEmit *E, PtxReg mt, PtxReg g) {
  PtxBuilder *b = E->b;
  const PtxConv *cv = E->conv;
  int rank = cv->spatial_count;
  int64_t extents[AXLE_MAX_RANK + 1];
  extents[0] = cv->out_batch;
  for (int s = 0; s < rank; s++) extents[s + 1] = cv->out_spatial[s];
  PtxReg ty64 = ptx_reg_new(b, PTX_U64), m0 = ptx_reg_new(b, PTX_U64);
  PtxReg lhs_g = ptx_reg_new(b, PTX_S64), out_g = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "cvt.u64.u32 $r, $r", ty64, E->ty);
  ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", m0, mt, E->bm, ty64);
  ptx_inst(b, "mul.lo.s64 $r, $r, $D", lhs_g, g, cv->lhs_group);
  ptx_inst(b, "mul.lo.s64 $r, $r, $D", out_g, g, cv->group_out_features * cv->out_feature);
  for (int i = 0; i < E->tm; i++) {
    PtxReg m = ptx_reg_new(b, PTX_U64), coords[AXLE_MAX_RANK + 1];
    ptx_inst(b, "add.u64 $r, $r, $d", m, m0, CONV_SIDE * i);
    E->row_valid[i] = less_than(E, m, ptx_conv_m(cv));
    index_split(E, m, extents, rank + 1, coords);
    memcpy(E->row_coords[i], coords, sizeof coords);
    E->row_lhs[i] = ptx_reg_new(b, PTX_S64);
    E->row_out[i] = ptx_reg_new(b, PTX_S64);
    ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", E->row_lhs[i], coords[0], cv->lhs_batch, lhs_g);
    ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", E->row_out[i], coords[0], cv->out_batch_stride, out_g);
    for (int s = 0; s < rank; s++) {
      PtxReg start = ptx_reg_new(b, PTX_S64);
      /* the window of output o starts at o * stride - pad_lo in the dilated, padded input */
      ptx_inst(b, "mul.lo.s64 $r, $r, $D", start, coords[s + 1], cv->window[s].stride);
      ptx_inst(b, "sub.s64 $r, $r, $D", start, start, cv->window[s].pad_lo);
      E->row_start[i][s] = start;
      ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", E->row_out[i], coords[s + 1], cv->out_spatial_stride[s],
               E->row_out[i]);
    }
  }
}

/* The thread's B column n0 + tid % BN: whether it is a feature, and where
 * its kernel column starts. */
static void tile_column_emit(ConvEmit *E, PtxReg nt, PtxReg g) {
  PtxBuilder *b = E->b;
  const PtxConv *cv = E->conv;
  PtxReg local = ptx_reg_new(b, PTX_U32), local64 = ptx_reg_new(b, PTX_U64), n = ptx_reg_new(b, PTX_S64);
  PtxReg feature = ptx_reg_new(b, PTX_S64);
  E->n0 = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mul.lo.u64 $r, $r, $d", E->n0, nt, E->bn);
  ptx_inst(b, "rem.u32 $r, $r, $d", local, E->tid, E->bn);
  ptx_inst(b, "cvt.u64.u32 $r, $r", local64, local);
  ptx_inst(b, "add.u64 $r, $r, $r", n, E->n0, local64);
  E->col_valid = less_than(E, n, cv->group_out_features);
  ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", feature, g, cv->group_out_features, n);
  E->col_rhs = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "mul.lo.s64 $r, $r, $D", E->col_rhs, feature, cv->rhs_out_feature);
}

/* ---- one step of K ---- */

/* k split into its taps and input feature (k = tap * Cg + c). */
static PtxReg k_split(ConvEmit *E, PtxReg k, PtxReg *taps) {
  const PtxConv *cv = E->conv;
  int64_t extents[AXLE_MAX_RANK + 1];
  PtxReg coords[AXLE_MAX_RANK + 1];
  for (int s = 0; s < cv->spatial_count; s++) extents[s] = cv->kernel_spatial[s];
  extents[cv->spatial_count] = cv->group_in_features;
  index_split(E, k, extents, cv->spatial_count + 1, coords);
  for (int s = 0; s < cv->spatial_count; s++) taps[s] = coords[s];
  return coords[cv->spatial_count];
}

/* The A tile: the thread's k = k0 + tx for rows ty + 16i, into
 * a_tile[tx][ty + 16i]. The lhs position of a tap, per spatial dim:
 * at = start + tap * rhs_dilate in the dilated input, which holds an lhs
 * element only where at is a multiple of lhs_dilate (negative padding is
 * a start inside the input, nothing more). */
static void a_tile_load(ConvEmit *E, PtxReg k0) {
  PtxBuilder *b = E->b;
  const PtxConv *cv = E->conv;
  PtxReg tx64 = ptx_reg_new(b, PTX_U64), k = ptx_reg_new(b, PTX_U64), taps[AXLE_MAX_RANK];
  ptx_inst(b, "cvt.u64.u32 $r, $r", tx64, E->tx);
  ptx_inst(b, "add.u64 $r, $r, $r", k, k0, tx64);
  PtxReg k_valid = less_than(E, k, ptx_conv_k(cv));
  PtxReg c = k_split(E, k, taps);
  for (int i = 0; i < E->tm; i++) {
    PtxReg p = pred_and(E, E->row_valid[i], k_valid), offset = ptx_reg_new(b, PTX_S64);
    ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", offset, c, cv->lhs_feature, E->row_lhs[i]);
    for (int s = 0; s < cv->spatial_count; s++) {
      const WindowDim *w = &cv->window[s];
      PtxReg at = ptx_reg_new(b, PTX_S64), inside = ptx_reg_new(b, PTX_PRED);
      ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", at, taps[s], w->rhs_dilate, E->row_start[i][s]);
      ptx_inst(b, "setp.ge.s64 $r, $r, 0", inside, at);
      p = pred_and(E, p, inside);
      if (w->lhs_dilate > 1) {
        PtxReg hole = ptx_reg_new(b, PTX_S64), on_element = ptx_reg_new(b, PTX_PRED);
        ptx_inst(b, "rem.s64 $r, $r, $D", hole, at, w->lhs_dilate);
        ptx_inst(b, "setp.eq.s64 $r, $r, 0", on_element, hole);
        p = pred_and(E, p, on_element);
        ptx_inst(b, "div.s64 $r, $r, $D", at, at, w->lhs_dilate);
      }
      p = pred_and(E, p, less_than(E, at, cv->in_spatial[s]));
      ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", offset, at, cv->lhs_spatial[s], offset);
    }
    PtxReg v[2];
    masked_load(E, cv->lhs_type, E->lhs, offset, p, v);
    for (int part = 0; part < E->parts; part++)
      ptx_inst(b, "st.shared$s [$r], $r", ptx_type_suffix(E->acc_type),
               shared_address(E, a_tiles[part], E->tx, E->ty, CONV_SIDE * i, E->bm + 1), v[part]);
    if (E->skips_outside) {
      PtxReg flag = ptx_reg_new(b, PTX_U32);
      ptx_inst(b, "selp.u32 $r, 1, 0, $r", flag, p);
      ptx_inst(b, "st.shared.u32 [$r], $r", shared_address(E, a_inside_tile, E->tx, E->ty, CONV_SIDE * i, E->bm + 1),
               flag);
    }
  }
}

/* The B tile: the thread's column at k rows k0 + tid / BN + step*j, into
 * b_tile[row][tid % BN]. Window reversal pairs window tap t with kernel
 * tap size-1-t. */
static void b_tile_load(ConvEmit *E, PtxReg k0) {
  PtxBuilder *b = E->b;
  const PtxConv *cv = E->conv;
  int step = CONV_THREADS / E->bn;
  PtxReg row = ptx_reg_new(b, PTX_U32), column = ptx_reg_new(b, PTX_U32), row64 = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "div.u32 $r, $r, $d", row, E->tid, E->bn);
  ptx_inst(b, "rem.u32 $r, $r, $d", column, E->tid, E->bn);
  ptx_inst(b, "cvt.u64.u32 $r, $r", row64, row);
  for (int j = 0; j * step < CONV_BK; j++) {
    PtxReg k = ptx_reg_new(b, PTX_U64), taps[AXLE_MAX_RANK];
    ptx_inst(b, "add.u64 $r, $r, $r", k, k0, row64);
    ptx_inst(b, "add.u64 $r, $r, $d", k, k, step * j);
    PtxReg p = pred_and(E, E->col_valid, less_than(E, k, ptx_conv_k(cv)));
    PtxReg c = k_split(E, k, taps), offset = ptx_reg_new(b, PTX_S64);
    ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", offset, c, cv->rhs_in_feature, E->col_rhs);
    for (int s = 0; s < cv->spatial_count; s++) {
      PtxReg tap = taps[s];
      if (cv->window[s].reversal) {
        tap = ptx_reg_new(b, PTX_S64);
        ptx_inst(b, "mul.lo.s64 $r, $r, -1", tap, taps[s]);
        ptx_inst(b, "add.s64 $r, $r, $D", tap, tap, cv->kernel_spatial[s] - 1);
      }
      ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", offset, tap, cv->rhs_spatial[s], offset);
    }
    PtxReg v[2];
    masked_load(E, cv->rhs_type, E->rhs, offset, p, v);
    for (int part = 0; part < E->parts; part++)
      ptx_inst(b, "st.shared$s [$r], $r", ptx_type_suffix(E->acc_type),
               shared_address(E, b_tiles[part], row, column, step * j * E->bn, E->bn), v[part]);
  }
}

/* acc = a * c + acc, only where inside holds when it is given. */
static void fma_where(ConvEmit *E, const PtxReg *inside, PtxReg acc, PtxReg a, PtxReg c) {
  const char *suffix = ptx_type_suffix(E->acc_type);
  if (inside) ptx_inst(E->b, "@$r fma.rn$s $r, $r, $r, $r", *inside, suffix, acc, a, c, acc);
  else ptx_inst(E->b, "fma.rn$s $r, $r, $r, $r", suffix, acc, a, c, acc);
}

/* acc += a * b for one pair of (real or complex) values, only where
 * inside holds when it is given: no conjugation, as HLO's convolution;
 * (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br). */
static void multiply_add(ConvEmit *E, const PtxReg *inside, const PtxReg *a, const PtxReg *bv, int i, int j) {
  PtxBuilder *b = E->b;
  PtxReg re = E->acc[0][i][j], im = E->acc[1][i][j];
  fma_where(E, inside, re, a[0], bv[0]);
  if (E->parts == 1) return;
  PtxReg minus_ai = ptx_reg_new(b, E->acc_type);
  ptx_inst(b, "neg$s $r, $r", ptx_type_suffix(E->acc_type), minus_ai, a[1]);
  fma_where(E, inside, re, minus_ai, bv[1]);
  fma_where(E, inside, im, a[0], bv[1]);
  fma_where(E, inside, im, a[1], bv[0]);
}

/* acc[i][j] += a_tile[kk][ty + 16i] * b_tile[kk][tx + 16j] for the BK kk. */
static void tile_multiply(ConvEmit *E) {
  PtxBuilder *b = E->b;
  const char *suffix = ptx_type_suffix(E->acc_type);
  PtxReg zero = ptx_reg_new(b, PTX_U32), a_at[2], b_at[2], inside_at = zero;
  ptx_inst(b, "mov.u32 $r, 0", zero);
  for (int part = 0; part < E->parts; part++) {
    a_at[part] = shared_address(E, a_tiles[part], zero, E->ty, 0, E->bm + 1);
    b_at[part] = shared_address(E, b_tiles[part], zero, E->tx, 0, E->bn);
  }
  if (E->skips_outside) inside_at = shared_address(E, a_inside_tile, zero, E->ty, 0, E->bm + 1);
  PtxReg a[CONV_MAX_TILE][2], bv[CONV_MAX_TILE][2], inside[CONV_MAX_TILE], flag = ptx_reg_new(b, PTX_U32);
  for (int part = 0; part < E->parts; part++) {
    for (int i = 0; i < E->tm; i++) a[i][part] = ptx_reg_new(b, E->acc_type);
    for (int j = 0; j < E->tn; j++) bv[j][part] = ptx_reg_new(b, E->acc_type);
  }
  for (int i = 0; i < E->tm; i++) inside[i] = ptx_reg_new(b, PTX_PRED);
  for (int kk = 0; kk < CONV_BK; kk++) {
    for (int i = 0; E->skips_outside && i < E->tm; i++) {
      ptx_inst(b, "ld.shared.u32 $r, [$r+$d]", flag, inside_at, (kk * (E->bm + 1) + CONV_SIDE * i) * E->acc_bytes);
      ptx_inst(b, "setp.ne.u32 $r, $r, 0", inside[i], flag);
    }
    for (int part = 0; part < E->parts; part++) {
      for (int i = 0; i < E->tm; i++)
        ptx_inst(b, "ld.shared$s $r, [$r+$d]", suffix, a[i][part], a_at[part],
                 (kk * (E->bm + 1) + CONV_SIDE * i) * E->acc_bytes);
      for (int j = 0; j < E->tn; j++)
        ptx_inst(b, "ld.shared$s $r, [$r+$d]", suffix, bv[j][part], b_at[part],
                 (kk * E->bn + CONV_SIDE * j) * E->acc_bytes);
    }
    for (int i = 0; i < E->tm; i++)
      for (int j = 0; j < E->tn; j++) multiply_add(E, E->skips_outside ? &inside[i] : NULL, a[i], bv[j], i, j);
  }
}

/* The K loop: tiles loaded, a barrier, the multiply, a barrier (the tiles
 * are written again by the next step). Uniform across the block. */
static void k_loop_emit(ConvEmit *E) {
  PtxBuilder *b = E->b;
  PtxReg k0 = ptx_reg_new(b, PTX_U64), done = ptx_reg_new(b, PTX_PRED);
  PtxLabel top = ptx_label_new(b, "k_step"), end = ptx_label_new(b, "k_done");
  ptx_inst(b, "mov.u64 $r, 0", k0);
  ptx_label_place(b, top);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", done, k0, ptx_conv_k(E->conv));
  ptx_inst(b, "@$r bra $l", done, end);
  a_tile_load(E, k0);
  b_tile_load(E, k0);
  ptx_inst(b, "bar.sync 0");
  tile_multiply(E);
  ptx_inst(b, "bar.sync 0");
  ptx_inst(b, "add.u64 $r, $r, $d", k0, k0, CONV_BK);
  ptx_inst(b, "bra $l", top);
  ptx_label_place(b, end);
}

/* ---- the store ---- */

/* The epilogue at output (row i, feature n of the group): the logical
 * index of the point, the sum (rounded to the result type) as the
 * epilogue's accumulator 0, then its ops, stores included. */
static bool epilogue_emit(ConvEmit *E, int i, PtxReg n, int j) {
  PtxBuilder *b = E->b;
  const PtxConv *cv = E->conv;
  Emit *epi = E->epilogue;
  const int *at = E->epilogue_dim;
  /* The result is [batch, spatial.., feature] (conv_dims_canonical): its
   * dims are a row's coordinates in order, then the feature. */
  for (int d = 0; d <= cv->spatial_count; d++) epi->index[at[d]] = E->row_coords[i][d];
  PtxReg feature = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", feature, E->group, cv->group_out_features, n);
  epi->index[at[cv->spatial_count + 1]] = feature;
  ElementType t = cv->type;
  epi->acc[0] = ptx_emit_is_half(t) ? ptx_emit_half_round(epi, t, E->acc[0][i][j]) : E->acc[0][i][j];
  return ptx_emit_block_phase(epi, KBLOCK_PRE, -1);
}

static bool tile_store(ConvEmit *E) {
  PtxBuilder *b = E->b;
  const PtxConv *cv = E->conv;
  ElementType t = cv->type;
  PtxReg tx64 = ptx_reg_new(b, PTX_U64), n = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "cvt.u64.u32 $r, $r", tx64, E->tx);
  for (int j = 0; j < E->tn; j++) {
    ptx_inst(b, "add.u64 $r, $r, $r", n, E->n0, tx64);
    ptx_inst(b, "add.u64 $r, $r, $d", n, n, CONV_SIDE * j);
    PtxReg n_valid = less_than(E, n, cv->group_out_features);
    for (int i = 0; i < E->tm; i++) {
      PtxReg p = pred_and(E, E->row_valid[i], n_valid);
      if (E->epilogue) {
        PtxLabel skip = ptx_label_new(b, "no_output");
        ptx_inst(b, "@!$r bra $l", p, skip);
        if (!epilogue_emit(E, i, n, j)) return false;
        ptx_label_place(b, skip);
        continue;
      }
      PtxReg offset = ptx_reg_new(b, PTX_S64), address = ptx_reg_new(b, PTX_U64);
      ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", offset, n, cv->out_feature, E->row_out[i]);
      ptx_inst(b, "mad.lo.s64 $r, $r, $d, $r", address, offset, type_byte_size(t), E->out);
      if (t == TYPE_F16 || t == TYPE_BF16) {
        PtxReg h = ptx_reg_new(b, PTX_B16);
        ptx_inst(b, t == TYPE_F16 ? "cvt.rn.f16.f32 $r, $r" : "cvt.rn.bf16.f32 $r, $r", h, E->acc[0][i][j]);
        ptx_inst(b, "@$r st.global.b16 [$r], $r", p, address, h);
        continue;
      }
      for (int part = 0; part < E->parts; part++)
        ptx_inst(b, "@$r st.global$s [$r+$d], $r", p, ptx_type_suffix(E->acc_type), address, part * E->acc_bytes,
                 E->acc[part][i][j]);
    }
  }
  return true;
}

/* ---- the kernel ---- */

bool ptx_conv_types_fit(ElementType result, ElementType operand) {
  bool half = operand == TYPE_F16 || operand == TYPE_BF16;
  switch (result) {
  case TYPE_F16:
  case TYPE_BF16: return operand == result;
  case TYPE_F32: return operand == TYPE_F32 || half;
  case TYPE_F64: return operand == TYPE_F64 || operand == TYPE_F32 || half;
  case TYPE_C64:
  case TYPE_C128: return operand == result;
  default: return false;
  }
}

/* The register tile: 4 wide where the extent fills it, narrower for
 * small M or N so that few threads idle. */
static int tile_side(int64_t extent) { return extent > 2 * CONV_SIDE ? 4 : extent > CONV_SIDE ? 2 : 1; }

/* The tile loop's body for tile id `tile`: (group, row tile, column tile). */
static bool tile_emit(ConvEmit *E, PtxReg tile, int64_t row_tiles, int64_t column_tiles) {
  PtxBuilder *b = E->b;
  PtxReg nt = ptx_reg_new(b, PTX_U64), q = ptx_reg_new(b, PTX_U64), mt = ptx_reg_new(b, PTX_U64);
  PtxReg g = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "rem.u64 $r, $r, $D", nt, tile, column_tiles);
  ptx_inst(b, "div.u64 $r, $r, $D", q, tile, column_tiles);
  ptx_inst(b, "rem.u64 $r, $r, $D", mt, q, row_tiles);
  ptx_inst(b, "div.u64 $r, $r, $D", g, q, row_tiles);
  E->group = g;
  tile_rows_emit(E, mt, g);
  tile_column_emit(E, nt, g);
  for (int part = 0; part < E->parts; part++)
    for (int i = 0; i < E->tm; i++)
      for (int j = 0; j < E->tn; j++)
        ptx_inst(b, E->acc_type == PTX_F64 ? "mov.f64 $r, 0d0000000000000000" : "mov.f32 $r, 0f00000000",
                 E->acc[part][i][j]);
  k_loop_emit(E);
  return tile_store(E);
}

/* ---- the fused epilogue ---- */

/* The epilogue kernel's dim that each dim of the convolution's result is
 * (index_dim[d]), read off its loads of the convolution, which must all
 * read it at a permutation of the kernel's index: the identity, or the
 * permutation of a relabel (canonicalize-convolutions makes each
 * convolution in its canonical dim order and its users read it through a
 * bitcast to their own order). */
static bool epilogue_index_dims(const Kernel *k, int conv_input, int rank, int *index_dim) {
  bool found = false;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->kop != KOP_LOAD || op->buffer != conv_input) continue;
    if (op->arg_count != rank) return false;
    bool used[AXLE_MAX_RANK] = {0};
    for (int d = 0; d < rank; d++) {
      const KernelOp *arg = &k->ops[op->args[d]];
      if (arg->kop != KOP_INDEX || arg->dim < 0 || arg->dim >= rank || used[arg->dim]) return false;
      if (found && index_dim[d] != arg->dim) return false;
      used[arg->dim] = true;
      index_dim[d] = arg->dim;
    }
    found = true;
  }
  for (int d = 0; !found && d < rank; d++) index_dim[d] = d;
  return true;
}

bool ptx_conv_epilogue_fits(const PtxConv *conv, const PtxConvEpilogue *epilogue) {
  const Kernel *k = epilogue->kernel;
  int rank = conv->spatial_count + 2, index_dim[AXLE_MAX_RANK];
  if (type_is_complex(conv->type) || k->kind != KERNEL_LOOP || k->rank != rank || k->acc_count != 0 ||
      k->input_count + k->output_count > 62 || epilogue->conv_input < 0 || epilogue->conv_input >= k->input_count)
    return false;
  for (int i = 0; i < k->op_count; i++)
    if (k->ops[i].block != KBLOCK_PRE) return false;
  return epilogue_index_dims(k, epilogue->conv_input, rank, index_dim);
}

/* The epilogue with its loads of the convolution turned into reads of
 * accumulator 0, which the store sets to each sum (the trick ptx_tile.c
 * plays with its tiles). ops is the copy's own array. */
static Kernel epilogue_derive(const PtxConv *conv, const PtxConvEpilogue *epilogue) {
  Kernel k = *epilogue->kernel;
  k.ops = mem_calloc((size_t)k.op_count + 1, sizeof *k.ops);
  memcpy(k.ops, epilogue->kernel->ops, (size_t)k.op_count * sizeof *k.ops);
  for (int i = 0; i < k.op_count; i++) {
    KernelOp *op = &k.ops[i];
    if (op->kop != KOP_LOAD || op->buffer != epilogue->conv_input) continue;
    op->kop = KOP_ACC_READ;
    op->acc = 0;
    op->arg_count = 0;
  }
  k.acc_count = 1;
  k.acc_types[0] = conv->type;
  return k;
}

/* ---- the kernel ---- */

/* The parameters: (lhs, rhs, out), or (lhs, rhs, in0.., out0..) with an
 * epilogue, whose emitter gets the buffers' addresses. */
static void parameters_emit(ConvEmit *E, Emit *epi) {
  PtxBuilder *b = E->b;
  char name[16];
  ptx_kernel_param(b, PTX_U64, "lhs");
  ptx_kernel_param(b, PTX_U64, "rhs");
  if (!epi) ptx_kernel_param(b, PTX_U64, "out");
  for (int i = 0; epi && i < epi->k->input_count; i++) snprintf(name, sizeof name, "in%d", i), ptx_kernel_param(b, PTX_U64, name);
  for (int o = 0; epi && o < epi->k->output_count; o++) snprintf(name, sizeof name, "out%d", o), ptx_kernel_param(b, PTX_U64, name);
  E->lhs = ptx_param_load_global_pointer(b, "lhs");
  E->rhs = ptx_param_load_global_pointer(b, "rhs");
  if (!epi) E->out = ptx_param_load_global_pointer(b, "out");
  for (int i = 0; epi && i < epi->k->input_count; i++)
    snprintf(name, sizeof name, "in%d", i), epi->inputs[i] = ptx_param_load_global_pointer(b, name);
  for (int o = 0; epi && o < epi->k->output_count; o++)
    snprintf(name, sizeof name, "out%d", o), epi->outputs[o] = ptx_param_load_global_pointer(b, name);
}

/* The grid-stride loop over the tiles (block-uniform: every thread of a
 * block takes the same tiles, so the barriers inside are met by all). */
static bool tile_loop_emit(ConvEmit *E, int64_t row_tiles, int64_t column_tiles) {
  PtxBuilder *b = E->b;
  PtxReg tile = ptx_reg_new(b, PTX_U64), grid = ptx_reg_new(b, PTX_U32), grid64 = ptx_reg_new(b, PTX_U64);
  PtxReg block = ptx_reg_new(b, PTX_U32), finished = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "mov.u32 $r, %ctaid.x", block);
  ptx_inst(b, "cvt.u64.u32 $r, $r", tile, block);
  ptx_inst(b, "mov.u32 $r, %nctaid.x", grid);
  ptx_inst(b, "cvt.u64.u32 $r, $r", grid64, grid);
  PtxLabel top = ptx_label_new(b, "tile"), done = ptx_label_new(b, "done");
  ptx_label_place(b, top);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", finished, tile, E->conv->groups * row_tiles * column_tiles);
  ptx_inst(b, "@$r bra $l", finished, done);
  if (!tile_emit(E, tile, row_tiles, column_tiles)) return false;
  ptx_inst(b, "add.u64 $r, $r, $r", tile, tile, grid64);
  ptx_inst(b, "bra $l", top);
  ptx_label_place(b, done);
  return true;
}

bool ptx_conv_emit(PtxBuilder *b, const PtxConv *conv, const PtxConvEpilogue *epilogue, const char *name,
                   int64_t *blocks, int *threads, Status *st) {
  ElementType t = conv->type;
  if (!ptx_conv_types_fit(t, conv->lhs_type) || !ptx_conv_types_fit(t, conv->rhs_type))
    return status_error(st, STATUS_UNSUPPORTED, "a convolution of %s and %s into %s", type_name(conv->lhs_type),
                        type_name(conv->rhs_type), type_name(t));
  if (epilogue && !ptx_conv_epilogue_fits(conv, epilogue))
    return status_error(st, STATUS_UNSUPPORTED, "an epilogue that cannot run at the convolution's store");
  ConvEmit E = {.b = b, .conv = conv, .tm = tile_side(ptx_conv_m(conv)), .tn = tile_side(ptx_conv_n(conv))};
  E.bm = CONV_SIDE * E.tm;
  E.bn = CONV_SIDE * E.tn;
  E.acc_type = t == TYPE_F64 || t == TYPE_C128 ? PTX_F64 : PTX_F32;
  E.parts = type_is_complex(t) ? 2 : 1;
  E.acc_bytes = ptx_type_byte_size(E.acc_type);
  E.skips_outside = window_can_leave_input(conv);
  Kernel derived = {0};
  Emit epi = {.b = b, .st = st};
  if (epilogue) {
    epilogue_index_dims(epilogue->kernel, epilogue->conv_input, conv->spatial_count + 2, E.epilogue_dim);
    derived = epilogue_derive(conv, epilogue);
    epi.k = &derived;
    epi.values = mem_calloc((size_t)derived.op_count + 1, sizeof *epi.values);
    E.epilogue = &epi;
  }
  int64_t row_tiles = (ptx_conv_m(conv) + E.bm - 1) / E.bm, column_tiles = (ptx_conv_n(conv) + E.bn - 1) / E.bn;
  char what[200];
  snprintf(what, sizeof what, "convolution as implicit GEMM: %lld groups of M=%lld N=%lld K=%lld, %dx%d tiles%s",
           (long long)conv->groups, (long long)ptx_conv_m(conv), (long long)ptx_conv_n(conv),
           (long long)ptx_conv_k(conv), E.bm, E.bn, epilogue ? ", the epilogue at the store" : "");
  ptx_kernel_begin(b, name, what);
  ptx_kernel_set_max_threads(b, CONV_THREADS);
  for (int part = 0; part < E.parts; part++) {
    ptx_shared_declare(b, a_tiles[part], E.acc_type, CONV_BK * (E.bm + 1), 8);
    ptx_shared_declare(b, b_tiles[part], E.acc_type, CONV_BK * E.bn, 8);
  }
  /* addressed as A is (acc_bytes apart), so the same offsets serve both */
  if (E.skips_outside) ptx_shared_declare(b, a_inside_tile, E.acc_type, CONV_BK * (E.bm + 1), 8);
  parameters_emit(&E, epilogue ? &epi : NULL);
  E.tid = ptx_reg_new(b, PTX_U32);
  E.tx = ptx_reg_new(b, PTX_U32);
  E.ty = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mov.u32 $r, %tid.x", E.tid);
  ptx_inst(b, "and.b32 $r, $r, $d", E.tx, E.tid, CONV_SIDE - 1);
  ptx_inst(b, "shr.u32 $r, $r, 4", E.ty, E.tid);
  for (int i = 0; i < E.tm; i++)
    for (int j = 0; j < E.tn; j++)
      for (int part = 0; part < E.parts; part++) E.acc[part][i][j] = ptx_reg_new(b, E.acc_type);
  bool ok = tile_loop_emit(&E, row_tiles, column_tiles);
  mem_free(epi.values);
  mem_free(derived.ops);
  if (!ok) {
    ptx_kernel_abandon(b);
    return false;
  }
  ptx_inst(b, "ret");
  ptx_kernel_end(b);
  *blocks = conv->groups * row_tiles * column_tiles;
  *threads = CONV_THREADS;
  return true;
}
