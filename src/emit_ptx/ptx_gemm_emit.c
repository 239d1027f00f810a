/* What the PTX GEMM paths (gemm.simt in ptx_gemm.c, mma and wgmma in
 * ptx_gemm_mma.c and ptx_gemm_wgmma.c, complex products in
 * ptx_gemm_complex.c) share, below all of them: operand offsets from
 * dimension groups, loads converted to the arithmetic of the sum, stores
 * rounded to the result type, the walk over output tiles and the kernel's
 * parameters.
 *
 * Arithmetic follows the evaluator's dot (src/ir/eval/eval_linalg.c): an
 * operand is first converted to the result type, then products are summed:
 * in f32 for f16, bf16 and f32 results (the evaluator sums in double and
 * rounds once; f32 sums are within the dot tolerance, as XLA's are), in
 * f64 for f64, and as wrapping integers (32-bit, or 64-bit for 64-bit
 * results) for integer results, which is exactly the evaluator's sum
 * modulo the result width. The sum is rounded to the result type once. */
#include <string.h>

#include "emit_ptx/ptx_gemm_internal.h"

/* ------------------------------------------------------------ dim groups */

void ptx_gemm_dims_add_blocked(PtxGemmDims *d, int64_t extent, int64_t stride, int64_t block) {
  if (extent == 1) return;
  d->extent[d->count] = extent;
  d->stride[d->count] = stride;
  d->block[d->count] = block;
  d->count++;
}

void ptx_gemm_dims_add(PtxGemmDims *d, int64_t extent, int64_t stride) {
  if (extent == 1) return;
  if (d->count > 0 && d->block[d->count - 1] <= 1) {
    int last = d->count - 1;
    /* The new dim is inner: the last one merges into it when it steps
     * exactly over the new dim's span. */
    if (d->stride[last] == stride * extent) {
      d->extent[last] *= extent;
      d->stride[last] = stride;
      return;
    }
  }
  ptx_gemm_dims_add_blocked(d, extent, stride, 1);
}

int64_t ptx_gemm_dims_inner_stride(const PtxGemmDims *d) { return d->count ? d->stride[d->count - 1] : 0; }

/* ------------------------------------------------------------ arithmetic */

static bool is_int(ElementType t) {
  switch (t) {
  case TYPE_S8: case TYPE_S16: case TYPE_S32: case TYPE_S64:
  case TYPE_U8: case TYPE_U16: case TYPE_U32: case TYPE_U64:
    return true;
  default: return false;
  }
}

static bool is_real_float(ElementType t) {
  return t == TYPE_F16 || t == TYPE_BF16 || t == TYPE_F32 || t == TYPE_F64;
}

static bool is_signed_int(ElementType t) { return t == TYPE_S8 || t == TYPE_S16 || t == TYPE_S32 || t == TYPE_S64; }

/* Whether converting operand type t to result type r, then to the sum's
 * type, is something the loads below do exactly as the evaluator does. */
static bool operand_converts(ElementType t, ElementType r) {
  if (is_int(t) && is_int(r)) return true;  /* wrapping: only the low bits matter */
  if (!is_real_float(t) || !is_real_float(r) || t == r) return t == r;
  if (r == TYPE_F64) return true;                                      /* widening */
  if (r == TYPE_F32) return true;                                      /* widen, or round f64 once */
  return t == TYPE_F32;                                                /* f32 rounded to f16/bf16 */
}

bool ptx_gemm_accumulator_of(const PtxGemm *g, PtxType *acc, Status *st) {
  ElementType r = g->result_type;
  if (!(is_int(r) || is_real_float(r)) || !operand_converts(g->lhs_type, r) || !operand_converts(g->rhs_type, r))
    return status_error(st, STATUS_UNSUPPORTED, "the GPU backend has no GEMM for %s x %s -> %s",
                        type_name(g->lhs_type), type_name(g->rhs_type), type_name(r));
  *acc = r == TYPE_F64                           ? PTX_F64
         : is_real_float(r)                      ? PTX_F32
         : (r == TYPE_S64 || r == TYPE_U64)      ? PTX_S64
                                                 : PTX_S32;
  return true;
}

/* The element offset of GEMM index `index` (u64) over dims d. */
PtxReg ptx_gemm_emit_offset(PtxBuilder *b, const PtxGemmDims *d, PtxReg index) {
  PtxReg offset = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u64 $r, 0", offset);
  PtxReg rest = index;
  for (int i = d->count - 1; i >= 0; i--) {
    PtxReg digit = rest;
    if (i > 0) {
      /* digit = rest % extent, rest /= extent */
      PtxReg quotient = ptx_reg_new(b, PTX_U64);
      digit = ptx_reg_new(b, PTX_U64);
      ptx_inst(b, "div.u64 $r, $r, $D", quotient, rest, d->extent[i]);
      ptx_inst(b, "mul.lo.u64 $r, $r, $D", digit, quotient, d->extent[i]);
      ptx_inst(b, "sub.u64 $r, $r, $r", digit, rest, digit);
      rest = quotient;
    }
    if (d->block[i] > 1) {
      PtxReg blocked = ptx_reg_new(b, PTX_U64);
      ptx_inst(b, "div.u64 $r, $r, $D", blocked, digit, d->block[i]);
      digit = blocked;
    }
    PtxReg scaled = ptx_reg_new(b, PTX_U64);
    ptx_inst(b, "mul.lo.u64 $r, $r, $D", scaled, digit, d->stride[i]);
    ptx_inst(b, "add.u64 $r, $r, $r", offset, offset, scaled);
  }
  return offset;
}

/* base + offset * bytes. */
PtxReg ptx_gemm_emit_address(PtxBuilder *b, PtxReg base, PtxReg offset, int bytes) {
  PtxReg address = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mad.lo.u64 $r, $r, $d, $r", address, offset, bytes, base);
  return address;
}

/* f32 value v rounded to f16 or bf16 and back (the operand's conversion to
 * the result type). */
static PtxReg round_through_half(PtxBuilder *b, PtxReg v, ElementType half) {
  PtxReg h = ptx_reg_new(b, PTX_B16), back = ptx_reg_new(b, PTX_F32);
  if (half == TYPE_F16) {
    ptx_inst(b, "cvt.rn.f16.f32 $r, $r", h, v);
    ptx_inst(b, "cvt.f32.f16 $r, $r", back, h);
  } else {
    PtxReg wide = ptx_reg_new(b, PTX_U32);
    ptx_inst(b, "cvt.rn.bf16.f32 $r, $r", h, v);
    ptx_inst(b, "cvt.u32.u16 $r, $r", wide, h);
    ptx_inst(b, "shl.b32 $r, $r, 16", wide, wide);
    ptx_inst(b, "mov.b32 $r, $r", back, wide);
  }
  return back;
}

/* A float operand element at address (when pred; 0 otherwise) in the sum's
 * type acc (f32 or f64), through the result type r. */
static PtxReg load_float(PtxBuilder *b, PtxReg address, PtxReg pred, ElementType t, ElementType r, PtxType acc) {
  PtxReg v;
  if (t == TYPE_F64) {
    v = ptx_reg_new(b, PTX_F64);
    ptx_inst(b, "mov.f64 $r, 0d0000000000000000", v);
    ptx_inst(b, "@$r ld.global.f64 $r, [$r]", pred, v, address);
    if (acc == PTX_F64) return v;
    PtxReg single = ptx_reg_new(b, PTX_F32);
    ptx_inst(b, "cvt.rn.f32.f64 $r, $r", single, v);
    return single;
  }
  v = ptx_reg_new(b, PTX_F32);
  if (t == TYPE_F32) {
    ptx_inst(b, "mov.f32 $r, 0f00000000", v);
    ptx_inst(b, "@$r ld.global.f32 $r, [$r]", pred, v, address);
    if (r == TYPE_F16 || r == TYPE_BF16) v = round_through_half(b, v, r);
  } else if (t == TYPE_F16) {
    PtxReg h = ptx_reg_new(b, PTX_B16);
    ptx_inst(b, "mov.b16 $r, 0", h);
    ptx_inst(b, "@$r ld.global.b16 $r, [$r]", pred, h, address);
    ptx_inst(b, "cvt.f32.f16 $r, $r", v, h);
  } else {  /* bf16: its bits are the top half of an f32's */
    PtxReg wide = ptx_reg_new(b, PTX_U32);
    ptx_inst(b, "mov.u32 $r, 0", wide);
    ptx_inst(b, "@$r ld.global.u16 $r, [$r]", pred, wide, address);
    ptx_inst(b, "shl.b32 $r, $r, 16", wide, wide);
    ptx_inst(b, "mov.b32 $r, $r", v, wide);
  }
  if (acc == PTX_F32) return v;
  PtxReg wide = ptx_reg_new(b, PTX_F64);
  ptx_inst(b, "cvt.f64.f32 $r, $r", wide, v);
  return wide;
}

/* An integer operand element, sign- or zero-extended (as its own type
 * says) to the sum's width; only the low bits of the result width matter. */
static PtxReg load_int(PtxBuilder *b, PtxReg address, PtxReg pred, ElementType t, PtxType acc) {
  int bytes = type_byte_size(t);
  const char *sign = is_signed_int(t) ? "s" : "u";
  PtxReg out = ptx_reg_new(b, acc);
  const char *acc_name = acc == PTX_S64 ? (*sign == 's' ? "s64" : "u64") : (*sign == 's' ? "s32" : "u32");
  if (bytes <= 2) {
    PtxReg h = ptx_reg_new(b, PTX_B16);
    ptx_inst(b, "mov.b16 $r, 0", h);
    ptx_inst(b, "@$r ld.global.$s$d $r, [$r]", pred, sign, bytes * 8, h, address);
    ptx_inst(b, "cvt.$s.$s16 $r, $r", acc_name, sign, out, h);
  } else if (bytes == 4) {
    PtxReg w = ptx_reg_new(b, PTX_B32);
    ptx_inst(b, "mov.b32 $r, 0", w);
    ptx_inst(b, "@$r ld.global.b32 $r, [$r]", pred, w, address);
    if (acc == PTX_S32) return w;
    ptx_inst(b, "cvt.$s.$s32 $r, $r", acc_name, sign, out, w);
  } else {
    PtxReg w = ptx_reg_new(b, PTX_B64);
    ptx_inst(b, "mov.b64 $r, 0", w);
    ptx_inst(b, "@$r ld.global.b64 $r, [$r]", pred, w, address);
    if (acc == PTX_S64) return w;
    ptx_inst(b, "cvt.u32.u64 $r, $r", out, w);
  }
  return out;
}

PtxReg ptx_gemm_emit_load(PtxBuilder *b, PtxReg address, PtxReg pred, ElementType t, ElementType r,
                          PtxType acc) {
  return is_int(t) ? load_int(b, address, pred, t, acc) : load_float(b, address, pred, t, r, acc);
}

/* Stores sum (type acc) rounded to r at address when pred. */
void ptx_gemm_emit_store(PtxBuilder *b, PtxReg address, PtxReg pred, PtxReg sum, ElementType r, PtxType acc) {
  if (acc == PTX_F32 && (r == TYPE_F16 || r == TYPE_BF16)) {
    PtxReg h = ptx_reg_new(b, PTX_B16);
    ptx_inst(b, "cvt.rn.$s.f32 $r, $r", r == TYPE_F16 ? "f16" : "bf16", h, sum);
    ptx_inst(b, "@$r st.global.b16 [$r], $r", pred, address, h);
  } else if (acc == PTX_F32 || acc == PTX_F64) {
    ptx_inst(b, "@$r st.global$s [$r], $r", pred, ptx_type_suffix(acc), address, sum);
  } else if (type_byte_size(r) <= 2) {
    PtxReg h = ptx_reg_new(b, PTX_B16);
    ptx_inst(b, "cvt.u16.u32 $r, $r", h, sum);
    ptx_inst(b, "@$r st.global.u$d [$r], $r", pred, type_byte_size(r) * 8, address, h);
  } else {
    ptx_inst(b, "@$r st.global.b$d [$r], $r", pred, type_byte_size(r) * 8, address, sum);
  }
}

/* sum += x * y in the sum's arithmetic. */
void ptx_gemm_emit_multiply_add(PtxBuilder *b, PtxReg sum, PtxReg x, PtxReg y, PtxType acc) {
  if (acc == PTX_F32 || acc == PTX_F64) ptx_inst(b, "fma.rn$s $r, $r, $r, $r", ptx_type_suffix(acc), sum, x, y, sum);
  else ptx_inst(b, "mad.lo$s $r, $r, $r, $r", ptx_type_suffix(acc), sum, x, y, sum);
}

void ptx_gemm_emit_zero(PtxBuilder *b, PtxReg r, PtxType acc) {
  static const char *const zero[] = {[PTX_F32] = "0f00000000", [PTX_F64] = "0d0000000000000000", [PTX_S32] = "0",
                                     [PTX_S64] = "0"};
  ptx_inst(b, "mov$s $r, $s", acc == PTX_S32 ? ".b32" : acc == PTX_S64 ? ".b64" : ptx_type_suffix(acc), r, zero[acc]);
}

/* ------------------------------------------------------------ the tile walk */

void ptx_gemm_tiles_begin(PtxBuilder *b, PtxGemmTiles *t, const PtxGemm *g, int tile_m, int tile_n) {
  t->tiles_m = (g->m + tile_m - 1) / tile_m;
  t->tiles_n = (g->n + tile_n - 1) / tile_n;
  t->count = g->batch * t->tiles_m * t->tiles_n;
  t->tile = ptx_reg_new(b, PTX_U64);
  PtxReg block = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mov.u32 $r, %ctaid.x", block);
  ptx_inst(b, "cvt.u64.u32 $r, $r", t->tile, block);
  t->next = ptx_label_new(b, "tile");
  t->done = ptx_label_new(b, "done");
  ptx_label_place(b, t->next);
  PtxReg past = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", past, t->tile, t->count);
  ptx_inst(b, "@$r bra $l", past, t->done);
  /* tile = (batch * tiles_m + tm) * tiles_n + tn */
  PtxReg rest = ptx_reg_new(b, PTX_U64), tm = ptx_reg_new(b, PTX_U64), tn = ptx_reg_new(b, PTX_U64);
  t->batch = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "div.u64 $r, $r, $D", rest, t->tile, t->tiles_n);
  ptx_inst(b, "mul.lo.u64 $r, $r, $D", tn, rest, t->tiles_n);
  ptx_inst(b, "sub.u64 $r, $r, $r", tn, t->tile, tn);
  ptx_inst(b, "div.u64 $r, $r, $D", t->batch, rest, t->tiles_m);
  ptx_inst(b, "mul.lo.u64 $r, $r, $D", tm, t->batch, t->tiles_m);
  ptx_inst(b, "sub.u64 $r, $r, $r", tm, rest, tm);
  t->m0 = ptx_reg_new(b, PTX_U64);
  t->n0 = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mul.lo.u64 $r, $r, $d", t->m0, tm, tile_m);
  ptx_inst(b, "mul.lo.u64 $r, $r, $d", t->n0, tn, tile_n);
}

void ptx_gemm_tiles_end(PtxBuilder *b, PtxGemmTiles *t) {
  PtxReg grid = ptx_reg_new(b, PTX_U32), grid64 = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u32 $r, %nctaid.x", grid);
  ptx_inst(b, "cvt.u64.u32 $r, $r", grid64, grid);
  ptx_inst(b, "add.u64 $r, $r, $r", t->tile, t->tile, grid64);
  ptx_inst(b, "bra $l", t->next);
  ptx_label_place(b, t->done);
  ptx_inst(b, "ret");
}

/* `p = index < limit` for a u64 index. */
PtxReg ptx_gemm_emit_below(PtxBuilder *b, PtxReg index, int64_t limit) {
  PtxReg p = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "setp.lt.u64 $r, $r, $D", p, index, limit);
  return p;
}

/* index + constant, u64. */
PtxReg ptx_gemm_emit_add(PtxBuilder *b, PtxReg index, int64_t add) {
  PtxReg r = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "add.u64 $r, $r, $D", r, index, add);
  return r;
}

void ptx_gemm_kernel_begin(PtxBuilder *b, const char *entry, const char *what, int threads,
                           const PtxGemm *g) {
  ptx_kernel_begin(b, entry, what);
  ptx_kernel_param(b, PTX_U64, "lhs");
  ptx_kernel_param(b, PTX_U64, "rhs");
  ptx_kernel_param(b, PTX_U64, "out");
  if (g->scaled) {
    ptx_kernel_param(b, PTX_U64, "lhs_scale");
    ptx_kernel_param(b, PTX_U64, "rhs_scale");
  }
  if (g->ragged.kind != PTX_GEMM_PLAIN) {
    ptx_kernel_param(b, PTX_U64, "sizes");
    ptx_kernel_param(b, PTX_U64, "group");
  }
  ptx_kernel_set_max_threads(b, threads);
}
