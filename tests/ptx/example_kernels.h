/* Example kernels built by hand through the PTX builder, to prove it: the
 * three shapes every GPU backend needs (a streaming elementwise kernel, a
 * reduction across a block, a tensor-core tile).
 *
 *   vector_add_f32    out[i] = x[i] + y[i]; four elements per thread with
 *                     128-bit loads and stores, the last n % 4 one by one
 *   row_sum_f32       out[r] = sum of in[r, :] over f32[rows, cols]; one block
 *                     of 256 threads per row, warp shuffles, then the eight
 *                     warps' partial sums through shared memory
 *   mma_bf16_16x8x16  c = a * b for one 16x8x16 tile on the tensor cores:
 *                     a bf16[16,16] row-major, b given as b^T (bf16[8,16]
 *                     row-major, i.e. b column-major), c f32[16,8] row-major;
 *                     one warp
 *
 * Used by tests/unit/test_ptx.c (ptxas, SASS, a reviewed copy, the fake
 * driver) and tests/gpu/gpu_smoke.c (runs them on a real GPU). Included
 * rather than linked, since the Makefile builds each test from one file;
 * the functions are static inline so a user may take only some. */
#ifndef AXLE_TESTS_PTX_EXAMPLE_KERNELS_H
#define AXLE_TESTS_PTX_EXAMPLE_KERNELS_H

#include <assert.h>

#include "emit_ptx/ptx_builder.h"

enum { ROW_SUM_THREADS = 256, VECTOR_ADD_THREADS = 256 };

/* One f32 add through the op table (not hand-written), so the examples use
 * the mapping an emitter would. */
static inline PtxReg example_add_f32(PtxBuilder *b, PtxReg x, PtxReg y) {
  PtxElementwise add = {.op = OP_ADD, .type = TYPE_F32};
  PtxReg sum = ptx_reg_new(b, PTX_F32);
  PtxReg operands[2] = {x, y};
  Status st;
  bool ok = ptx_emit_elementwise(b, &add, sum, operands, &st);
  assert(ok && "add.f32 is in every target's table");
  (void)ok;
  return sum;
}

/* Launch: ceil(ceil(n / 4) / 256) blocks of 256 threads. x, y and out must
 * be 16-byte aligned (cuMemAlloc's are). */
static inline void example_vector_add_f32(PtxBuilder *b) {
  ptx_kernel_begin(b, "vector_add_f32", "out[i] = x[i] + y[i] for i < n: 4 elements per thread, 128-bit accesses");
  ptx_kernel_param(b, PTX_U64, "x");
  ptx_kernel_param(b, PTX_U64, "y");
  ptx_kernel_param(b, PTX_U64, "out");
  ptx_kernel_param(b, PTX_U64, "n");
  ptx_kernel_set_max_threads(b, VECTOR_ADD_THREADS);
  ptx_comment(b, "parameters");
  PtxReg x = ptx_param_load_global_pointer(b, "x"), y = ptx_param_load_global_pointer(b, "y");
  PtxReg out = ptx_param_load_global_pointer(b, "out"), n = ptx_param_load(b, PTX_U64, "n");
  ptx_comment(b, "this thread's first element: 4 * (ctaid.x * ntid.x + tid.x)");
  PtxReg thread = ptx_global_thread_index(b);
  PtxReg first = ptx_reg_new(b, PTX_U64), end = ptx_reg_new(b, PTX_U64);
  PtxReg partial = ptx_reg_new(b, PTX_PRED);
  PtxLabel tail = ptx_label_new(b, "tail"), done = ptx_label_new(b, "done");
  ptx_inst(b, "shl.b64 $r, $r, 2", first, thread);
  ptx_inst(b, "add.s64 $r, $r, 4", end, first);
  ptx_inst(b, "setp.gt.u64 $r, $r, $r", partial, end, n);
  ptx_inst(b, "@$r bra $l", partial, tail);

  ptx_comment(b, "four whole elements: one 128-bit load from each input, one store");
  PtxReg xa = ptx_element_address(b, x, first, 4), ya = ptx_element_address(b, y, first, 4);
  PtxReg oa = ptx_element_address(b, out, first, 4);
  PtxReg xv[4], yv[4], sum[4];
  for (int i = 0; i < 4; i++) xv[i] = ptx_reg_new(b, PTX_F32);
  for (int i = 0; i < 4; i++) yv[i] = ptx_reg_new(b, PTX_F32);
  ptx_inst(b, "ld.global.v4.f32 {$r, $r, $r, $r}, [$r]", xv[0], xv[1], xv[2], xv[3], xa);
  ptx_inst(b, "ld.global.v4.f32 {$r, $r, $r, $r}, [$r]", yv[0], yv[1], yv[2], yv[3], ya);
  for (int i = 0; i < 4; i++) sum[i] = example_add_f32(b, xv[i], yv[i]);
  ptx_inst(b, "st.global.v4.f32 [$r], {$r, $r, $r, $r}", oa, sum[0], sum[1], sum[2], sum[3]);
  ptx_inst(b, "bra.uni $l", done);

  ptx_comment(b, "the last n %% 4 elements, one at a time (threads past n skip the loop)");
  ptx_label_place(b, tail);
  PtxLabel loop = ptx_label_new(b, "tail_loop");
  PtxReg i = ptx_reg_new(b, PTX_U64), past = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "mov.u64 $r, $r", i, first);
  ptx_label_place(b, loop);
  ptx_inst(b, "setp.ge.u64 $r, $r, $r", past, i, n);
  ptx_inst(b, "@$r bra $l", past, done);
  PtxReg xs = ptx_reg_new(b, PTX_F32), ys = ptx_reg_new(b, PTX_F32);
  PtxReg xe = ptx_element_address(b, x, i, 4), ye = ptx_element_address(b, y, i, 4);
  PtxReg oe = ptx_element_address(b, out, i, 4);
  ptx_inst(b, "ld.global.f32 $r, [$r]", xs, xe);
  ptx_inst(b, "ld.global.f32 $r, [$r]", ys, ye);
  ptx_inst(b, "st.global.f32 [$r], $r", oe, example_add_f32(b, xs, ys));
  ptx_inst(b, "add.s64 $r, $r, 1", i, i);
  ptx_inst(b, "bra.uni $l", loop);
  ptx_label_place(b, done);
  ptx_inst(b, "ret");
  ptx_kernel_end(b);
}

/* acc += the value `offset` lanes up, for offset 16, 8, 4, 2, 1: lane 0
 * ends with the warp's sum, added in a fixed order (deterministic). */
static inline void example_warp_sum(PtxBuilder *b, PtxReg acc) {
  PtxReg other = ptx_reg_new(b, PTX_F32);
  for (int offset = 16; offset >= 1; offset /= 2) {
    ptx_inst(b, "shfl.sync.down.b32 $r, $r, $d, 31, 0xffffffff", other, acc, offset);
    ptx_inst(b, "add.rn.f32 $r, $r, $r", acc, acc, other);
  }
}

/* Launch: `rows` blocks of 256 threads; cols is a u32. */
static inline void example_row_sum_f32(PtxBuilder *b) {
  ptx_kernel_begin(b, "row_sum_f32", "out[r] = sum(in[r, 0:cols]): a block per row, warp shuffles, shared memory");
  ptx_kernel_param(b, PTX_U64, "in");
  ptx_kernel_param(b, PTX_U64, "out");
  ptx_kernel_param(b, PTX_U32, "cols");
  ptx_kernel_set_max_threads(b, ROW_SUM_THREADS);
  ptx_shared_declare(b, "warp_sums", PTX_F32, ROW_SUM_THREADS / 32, 4);
  ptx_comment(b, "parameters; this block's row starts at in + ctaid.x * cols * 4");
  PtxReg in = ptx_param_load_global_pointer(b, "in"), out = ptx_param_load_global_pointer(b, "out");
  PtxReg cols = ptx_param_load(b, PTX_U32, "cols");
  PtxReg row = ptx_reg_new(b, PTX_U32), tid = ptx_reg_new(b, PTX_U32), row_offset = ptx_reg_new(b, PTX_U64);
  PtxReg row_start = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u32 $r, %ctaid.x", row);
  ptx_inst(b, "mov.u32 $r, %tid.x", tid);
  ptx_inst(b, "mul.wide.u32 $r, $r, $r", row_offset, row, cols);
  ptx_inst(b, "mad.lo.s64 $r, $r, 4, $r", row_start, row_offset, in);

  ptx_comment(b, "each thread sums columns tid, tid + 256, ...");
  PtxReg acc = ptx_reg_new(b, PTX_F32), j = ptx_reg_new(b, PTX_U32), past = ptx_reg_new(b, PTX_PRED);
  PtxReg column_offset = ptx_reg_new(b, PTX_U64), address = ptx_reg_new(b, PTX_U64), value = ptx_reg_new(b, PTX_F32);
  PtxLabel loop = ptx_label_new(b, "columns"), reduce = ptx_label_new(b, "reduce");
  ptx_inst(b, "mov.f32 $r, 0f00000000", acc);
  ptx_inst(b, "mov.u32 $r, $r", j, tid);
  ptx_label_place(b, loop);
  ptx_inst(b, "setp.ge.u32 $r, $r, $r", past, j, cols);
  ptx_inst(b, "@$r bra $l", past, reduce);
  ptx_inst(b, "mul.wide.u32 $r, $r, 4", column_offset, j);
  ptx_inst(b, "add.s64 $r, $r, $r", address, row_start, column_offset);
  ptx_inst(b, "ld.global.f32 $r, [$r]", value, address);
  ptx_inst(b, "add.rn.f32 $r, $r, $r", acc, acc, value);
  ptx_inst(b, "add.u32 $r, $r, $d", j, j, ROW_SUM_THREADS);
  ptx_inst(b, "bra.uni $l", loop);

  ptx_comment(b, "sum within each warp; lane 0 leaves its warp's sum in shared memory");
  ptx_label_place(b, reduce);
  example_warp_sum(b, acc);
  PtxReg lane = ptx_reg_new(b, PTX_U32), warp = ptx_reg_new(b, PTX_U32), sums = ptx_reg_new(b, PTX_U32);
  PtxReg slot = ptx_reg_new(b, PTX_U32), is_lane0 = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "and.b32 $r, $r, 31", lane, tid);
  ptx_inst(b, "shr.u32 $r, $r, 5", warp, tid);
  ptx_inst(b, "mov.u32 $r, warp_sums", sums);
  ptx_inst(b, "mad.lo.u32 $r, $r, 4, $r", slot, warp, sums);
  ptx_inst(b, "setp.eq.u32 $r, $r, 0", is_lane0, lane);
  ptx_inst(b, "@$r st.shared.f32 [$r], $r", is_lane0, slot, acc);
  ptx_inst(b, "bar.sync 0");

  ptx_comment(b, "warp 0 sums the %d warp sums; thread 0 writes the row's total", ROW_SUM_THREADS / 32);
  PtxLabel done = ptx_label_new(b, "done");
  PtxReg not_warp0 = ptx_reg_new(b, PTX_PRED), has_sum = ptx_reg_new(b, PTX_PRED);
  PtxReg lane_slot = ptx_reg_new(b, PTX_U32), total = ptx_reg_new(b, PTX_F32), out_address = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "setp.ne.u32 $r, $r, 0", not_warp0, warp);
  ptx_inst(b, "@$r bra $l", not_warp0, done);
  ptx_inst(b, "mov.f32 $r, 0f00000000", total);
  ptx_inst(b, "setp.lt.u32 $r, $r, $d", has_sum, lane, ROW_SUM_THREADS / 32);
  ptx_inst(b, "mad.lo.u32 $r, $r, 4, $r", lane_slot, lane, sums);
  ptx_inst(b, "@$r ld.shared.f32 $r, [$r]", has_sum, total, lane_slot);
  example_warp_sum(b, total);
  ptx_inst(b, "mul.wide.u32 $r, $r, 4", out_address, row);
  ptx_inst(b, "add.s64 $r, $r, $r", out_address, out_address, out);
  ptx_inst(b, "@$r st.global.f32 [$r], $r", is_lane0, out_address, total);
  ptx_label_place(b, done);
  ptx_inst(b, "ret");
  ptx_kernel_end(b);
}

/* Launch: one block of 32 threads. The fragment layout of mma.m16n8k16
 * with 16-bit inputs, per lane (group = lane / 4, t = lane % 4):
 *   a regs 0..3: a[group][2t..2t+1], a[group+8][2t..], a[group][2t+8..], a[group+8][2t+8..]
 *   b regs 0..1: b[2t..2t+1][group], b[2t+8..2t+9][group]  (contiguous in b^T)
 *   c regs 0..3: c[group][2t], c[group][2t+1], c[group+8][2t], c[group+8][2t+1] */
static inline void example_mma_bf16(PtxBuilder *b) {
  ptx_kernel_begin(b, "mma_bf16_16x8x16", "c = a * b on the tensor cores: one mma.sync m16n8k16 bf16 tile, f32 sums");
  ptx_kernel_param(b, PTX_U64, "a");
  ptx_kernel_param(b, PTX_U64, "b_transposed");
  ptx_kernel_param(b, PTX_U64, "c");
  ptx_kernel_set_max_threads(b, 32);
  ptx_comment(b, "parameters; this lane's group (lane / 4) and place in it (lane %% 4)");
  PtxReg a = ptx_param_load_global_pointer(b, "a"), bt = ptx_param_load_global_pointer(b, "b_transposed");
  PtxReg c = ptx_param_load_global_pointer(b, "c");
  PtxReg lane = ptx_reg_new(b, PTX_U32), group = ptx_reg_new(b, PTX_U32), t = ptx_reg_new(b, PTX_U32);
  ptx_inst(b, "mov.u32 $r, %laneid", lane);
  ptx_inst(b, "shr.u32 $r, $r, 2", group, lane);
  ptx_inst(b, "and.b32 $r, $r, 3", t, lane);

  ptx_comment(b, "a and b^T fragments: rows of 16 bf16 (32 bytes); this lane's pair at group * 32 + t * 4");
  PtxReg pair = ptx_reg_new(b, PTX_U32), pair64 = ptx_reg_new(b, PTX_U64);
  PtxReg a_at = ptx_reg_new(b, PTX_U64), b_at = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "shl.b32 $r, $r, 2", t, t);
  ptx_inst(b, "mad.lo.u32 $r, $r, 32, $r", pair, group, t);
  ptx_inst(b, "cvt.u64.u32 $r, $r", pair64, pair);
  ptx_inst(b, "add.s64 $r, $r, $r", a_at, a, pair64);
  ptx_inst(b, "add.s64 $r, $r, $r", b_at, bt, pair64);
  PtxReg af[4], bf[2];
  static const int a_offsets[4] = {0, 8 * 32, 16, 8 * 32 + 16};   /* row + 8 is 256 bytes on, col + 8 is 16 */
  for (int i = 0; i < 4; i++) {
    af[i] = ptx_reg_new(b, PTX_B32);
    ptx_inst(b, "ld.global.b32 $r, [$r+$d]", af[i], a_at, a_offsets[i]);
  }
  for (int i = 0; i < 2; i++) {
    bf[i] = ptx_reg_new(b, PTX_B32);
    ptx_inst(b, "ld.global.b32 $r, [$r+$d]", bf[i], b_at, 16 * i);
  }

  ptx_comment(b, "the tile: d = a * b + 0, sums in f32");
  PtxReg zero = ptx_reg_new(b, PTX_F32), d[4];
  ptx_inst(b, "mov.f32 $r, 0f00000000", zero);
  for (int i = 0; i < 4; i++) d[i] = ptx_reg_new(b, PTX_F32);
  ptx_inst(b,
           "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$r, $r, $r, $r}, {$r, $r, $r, $r}, {$r, $r}, "
           "{$r, $r, $r, $r}",
           d[0], d[1], d[2], d[3], af[0], af[1], af[2], af[3], bf[0], bf[1], zero, zero, zero, zero);

  ptx_comment(b, "c rows of 8 f32 (32 bytes): this lane's pairs at group * 32 + t * 8, and 8 rows on");
  PtxReg c_pair = ptx_reg_new(b, PTX_U32), c_pair64 = ptx_reg_new(b, PTX_U64), c_at = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "shl.b32 $r, $r, 1", t, t);
  ptx_inst(b, "mad.lo.u32 $r, $r, 32, $r", c_pair, group, t);
  ptx_inst(b, "cvt.u64.u32 $r, $r", c_pair64, c_pair);
  ptx_inst(b, "add.s64 $r, $r, $r", c_at, c, c_pair64);
  ptx_inst(b, "st.global.v2.f32 [$r], {$r, $r}", c_at, d[0], d[1]);
  ptx_inst(b, "st.global.v2.f32 [$r+256], {$r, $r}", c_at, d[2], d[3]);
  ptx_inst(b, "ret");
  ptx_kernel_end(b);
}

#endif
