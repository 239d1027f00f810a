/* The complex GEMM kernel (gemm.complex, see ptx_gemm.h): c64 x c64 -> c64
 * and c128 x c128 -> c128.
 *
 * One thread per output element (a grid-stride loop over batch * m * n, so
 * any grid is correct), summing over k in increasing order straight from
 * global memory. The arithmetic is the evaluator's dot (eval_linalg.c,
 * sum_add_product) to the bit: both parts in f64 (a c64 operand's parts
 * widened exactly), each product's parts as
 *   re += ar*br - ai*bi,  im += ar*bi + ai*br
 * with every multiply, add and subtract rounded on its own (.rn: no fma
 * contraction), and the sums rounded once to the result's part type at
 * the store. Complex dots are rare and small in the corpus; this favours
 * exact agreement over speed. */
#include "emit_ptx/ptx_gemm.h"

#include "emit_ptx/ptx_gemm_internal.h"
#include "emit_ptx/ptx_serial.h"

enum { COMPLEX_THREADS = 256 };

bool ptx_gemm_complex_fits(const PtxGemm *g) {
  return (g->result_type == TYPE_C64 || g->result_type == TYPE_C128) && g->lhs_type == g->result_type &&
         g->rhs_type == g->result_type && !g->scaled && g->ragged.kind == PTX_GEMM_PLAIN;
}

/* The two parts of the complex element at base + offset, in f64. */
static void load_parts(PtxBuilder *b, PtxReg base, PtxReg offset, bool single, PtxReg *re, PtxReg *im) {
  PtxReg address = ptx_gemm_emit_address(b, base, offset, single ? 8 : 16);
  *re = ptx_reg_new(b, PTX_F64);
  *im = ptx_reg_new(b, PTX_F64);
  if (!single) {
    ptx_inst(b, "ld.global.v2.f64 {$r, $r}, [$r]", *re, *im, address);
    return;
  }
  PtxReg r32 = ptx_reg_new(b, PTX_F32), i32 = ptx_reg_new(b, PTX_F32);
  ptx_inst(b, "ld.global.v2.f32 {$r, $r}, [$r]", r32, i32, address);
  ptx_inst(b, "cvt.f64.f32 $r, $r", *re, r32);
  ptx_inst(b, "cvt.f64.f32 $r, $r", *im, i32);
}

/* The sum over k of output (batch, m, n), stored at out. */
static void emit_one_output(PtxBuilder *b, const PtxGemm *g, PtxReg lhs, PtxReg rhs, PtxReg out, PtxReg index) {
  bool single = g->result_type == TYPE_C64;
  /* index = (batch * m + row) * n + column */
  PtxReg rest = ptx_reg_new(b, PTX_U64), column = ptx_reg_new(b, PTX_U64), row = ptx_reg_new(b, PTX_U64),
         batch = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "div.u64 $r, $r, $D", rest, index, g->n);
  ptx_inst(b, "mul.lo.u64 $r, $r, $D", column, rest, g->n);
  ptx_inst(b, "sub.u64 $r, $r, $r", column, index, column);
  ptx_inst(b, "div.u64 $r, $r, $D", batch, rest, g->m);
  ptx_inst(b, "mul.lo.u64 $r, $r, $D", row, batch, g->m);
  ptx_inst(b, "sub.u64 $r, $r, $r", row, rest, row);
  PtxReg lhs_base = ptx_reg_new(b, PTX_U64), rhs_base = ptx_reg_new(b, PTX_U64), out_at = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "add.u64 $r, $r, $r", lhs_base, ptx_gemm_emit_offset(b, &g->lhs_batch, batch),
           ptx_gemm_emit_offset(b, &g->lhs_m, row));
  ptx_inst(b, "add.u64 $r, $r, $r", rhs_base, ptx_gemm_emit_offset(b, &g->rhs_batch, batch),
           ptx_gemm_emit_offset(b, &g->rhs_n, column));
  ptx_inst(b, "add.u64 $r, $r, $r", out_at, ptx_gemm_emit_offset(b, &g->out_batch, batch),
           ptx_gemm_emit_offset(b, &g->out_m, row));
  ptx_inst(b, "add.u64 $r, $r, $r", out_at, out_at, ptx_gemm_emit_offset(b, &g->out_n, column));
  PtxReg re = ptx_reg_new(b, PTX_F64), im = ptx_reg_new(b, PTX_F64), k = ptx_reg_new(b, PTX_U64),
         past = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "mov.f64 $r, 0d0000000000000000", re);
  ptx_inst(b, "mov.f64 $r, 0d0000000000000000", im);
  ptx_inst(b, "mov.u64 $r, 0", k);
  PtxLabel step = ptx_label_new(b, "k_step"), done = ptx_label_new(b, "k_done");
  ptx_label_place(b, step);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", past, k, g->k);
  ptx_inst(b, "@$r bra $l", past, done);
  PtxReg lhs_at = ptx_reg_new(b, PTX_U64), rhs_at = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "add.u64 $r, $r, $r", lhs_at, lhs_base, ptx_gemm_emit_offset(b, &g->lhs_k, k));
  ptx_inst(b, "add.u64 $r, $r, $r", rhs_at, rhs_base, ptx_gemm_emit_offset(b, &g->rhs_k, k));
  PtxReg ar, ai, br, bi;
  load_parts(b, lhs, lhs_at, single, &ar, &ai);
  load_parts(b, rhs, rhs_at, single, &br, &bi);
  ptx_serial_complex_multiply_add(b, re, im, ar, ai, br, bi);
  ptx_inst(b, "add.u64 $r, $r, 1", k, k);
  ptx_inst(b, "bra $l", step);
  ptx_label_place(b, done);
  PtxReg address = ptx_gemm_emit_address(b, out, out_at, single ? 8 : 16);
  if (!single) {
    ptx_inst(b, "st.global.v2.f64 [$r], {$r, $r}", address, re, im);
    return;
  }
  PtxReg r32 = ptx_reg_new(b, PTX_F32), i32 = ptx_reg_new(b, PTX_F32);
  ptx_inst(b, "cvt.rn.f32.f64 $r, $r", r32, re);
  ptx_inst(b, "cvt.rn.f32.f64 $r, $r", i32, im);
  ptx_inst(b, "st.global.v2.f32 [$r], {$r, $r}", address, r32, i32);
}

bool ptx_gemm_complex_emit(PtxBuilder *b, const PtxGemm *g, const char *entry, PtxGemmShape *shape, Status *st) {
  if (!ptx_gemm_complex_fits(g))
    return status_error(st, STATUS_UNSUPPORTED, "the GPU backend has no GEMM for %s x %s -> %s%s",
                        type_name(g->lhs_type), type_name(g->rhs_type), type_name(g->result_type),
                        g->scaled || g->ragged.kind != PTX_GEMM_PLAIN ? " (scaled or ragged)" : "");
  char what[160];
  snprintf(what, sizeof what, "gemm.complex: %s, batch %lld, %lld x %lld x %lld", type_name(g->result_type),
           (long long)g->batch, (long long)g->m, (long long)g->n, (long long)g->k);
  ptx_gemm_kernel_begin(b, entry, what, COMPLEX_THREADS, g);
  PtxReg lhs = ptx_param_load_global_pointer(b, "lhs"), rhs = ptx_param_load_global_pointer(b, "rhs"),
         out = ptx_param_load_global_pointer(b, "out");
  int64_t total = g->batch * g->m * g->n;
  PtxReg index = ptx_global_thread_index(b), past = ptx_reg_new(b, PTX_PRED);
  PtxReg threads = ptx_reg_new(b, PTX_U32), blocks = ptx_reg_new(b, PTX_U32), stride = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u32 $r, %ntid.x", threads);
  ptx_inst(b, "mov.u32 $r, %nctaid.x", blocks);
  ptx_inst(b, "mul.wide.u32 $r, $r, $r", stride, threads, blocks);
  PtxLabel next = ptx_label_new(b, "element"), done = ptx_label_new(b, "done");
  ptx_label_place(b, next);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", past, index, total);
  ptx_inst(b, "@$r bra $l", past, done);
  emit_one_output(b, g, lhs, rhs, out, index);
  ptx_inst(b, "add.u64 $r, $r, $r", index, index, stride);
  ptx_inst(b, "bra $l", next);
  ptx_label_place(b, done);
  ptx_inst(b, "ret");
  ptx_kernel_end(b);
  int64_t blocks_needed = (total + COMPLEX_THREADS - 1) / COMPLEX_THREADS;
  *shape = (PtxGemmShape){"gemm.complex", COMPLEX_THREADS, blocks_needed < 1 ? 1 : blocks_needed, 0};
  return true;
}
