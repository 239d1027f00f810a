/* gemm.wgmma (src/emit_ptx/ptx_gemm_wgmma.c) run directly on the SIMT
 * simulator, without the driver: one block walks every output tile of a
 * batched product, so the stage ring's mbarrier phases carry from tile to
 * tile, and k spans more stages than the ring holds. Operands are small
 * integers in bf16, so every sum is exact and must equal the host's. The
 * tensor maps are the fake driver's (tests/fake_cuda), filled in here as
 * cuTensorMapEncodeTiled would. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_gemm.h"
#include "../fake_cuda/ptx_simulate.h"
#include "../test.h"

enum { BATCH = 2, M = 130, N = 140, K = 300, PITCH = 304 };

static uint16_t bf16_of(int v) {
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16);  /* small integers are exact in bf16 */
}

static PtxsTensorMap operand_map(const uint16_t *data, int64_t rows) {
  PtxsTensorMap m = {.magic = PTXS_TENSOR_MAP_MAGIC, .element_bytes = 2, .rank = 3, .swizzle = 3,
                     .address = (uint64_t)(uintptr_t)data, .dims = {K, (uint64_t)rows, BATCH},
                     .strides = {PITCH * 2, (uint64_t)(rows * PITCH * 2)},
                     .box = {PTX_GEMM_WGMMA_BOX_K, PTX_GEMM_WGMMA_BOX_ROWS, 1}};
  return m;
}

static PtxGemm batched_product(void) {
  PtxGemm g = {.batch = BATCH, .m = M, .n = N, .k = K, .lhs_type = TYPE_BF16, .rhs_type = TYPE_BF16,
               .result_type = TYPE_F32};
  ptx_gemm_dims_add(&g.lhs_batch, BATCH, M * PITCH);
  ptx_gemm_dims_add(&g.lhs_m, M, PITCH);
  ptx_gemm_dims_add(&g.lhs_k, K, 1);
  ptx_gemm_dims_add(&g.rhs_batch, BATCH, N * PITCH);
  ptx_gemm_dims_add(&g.rhs_n, N, PITCH);
  ptx_gemm_dims_add(&g.rhs_k, K, 1);
  ptx_gemm_dims_add(&g.out_batch, BATCH, M * N);
  ptx_gemm_dims_add(&g.out_m, M, N);
  ptx_gemm_dims_add(&g.out_n, N, 1);
  return g;
}

TEST(one_block_walks_every_tile_through_the_stage_ring) {
  PtxGemm g = batched_product();
  int64_t pitch, batch_stride;
  EXPECT(ptx_gemm_wgmma_operand_direct(&g.lhs_batch, &g.lhs_m, &g.lhs_k, &pitch, &batch_stride) && pitch == PITCH &&
             batch_stride == M * PITCH,
         "lhs is not read in place (pitch %lld)", (long long)pitch);
  PtxTarget target;
  Status st;
  status_clear(&st);
  ptx_target_for_device(9, 0, &target, &st);
  PtxBuilder b;
  ptx_builder_init(&b, &target);
  PtxGemmShape shape;
  EXPECT(ptx_gemm_wgmma_fits(&b, &g) && ptx_gemm_wgmma_emit(&b, &g, "ring_gemm", &shape, &st), "%s", st.message);
  EXPECT(shape.blocks == BATCH * 2 * 2 && shape.shared_bytes > 48 * 1024, "%lld blocks, %u bytes", (long long)shape.blocks,
         shape.shared_bytes);
  uint16_t *lhs = calloc(BATCH * M * PITCH, 2), *rhs = calloc(BATCH * N * PITCH, 2);
  float *out = calloc(BATCH * M * N, 4);
  for (int i = 0; i < BATCH * M * PITCH; i++) lhs[i] = bf16_of(i % PITCH < K ? i % 7 - 3 : 99);  /* 99: never read */
  for (int i = 0; i < BATCH * N * PITCH; i++) rhs[i] = bf16_of(i % PITCH < K ? i % 5 - 2 : 99);
  PtxsTensorMap maps[2] = {operand_map(lhs, M), operand_map(rhs, N)};
  PtxsKernel *k = calloc(1, sizeof *k);
  PtxsRun *run = calloc(1, sizeof *run);
  bool ok = ptxs_parse(k, ptx_builder_text(&b));
  EXPECT(ok, "the simulator cannot read the kernel: %s", k->error);
  run->k = k;
  void *buffers[3] = {lhs, rhs, out};
  size_t bytes[3] = {BATCH * M * PITCH * 2, BATCH * N * PITCH * 2, BATCH * M * N * 4};
  for (int i = 0; i < 3; i++) {
    run->buffers[run->buffer_count++] = (PtxsBuffer){buffers[i], bytes[i]};
    run->params[i] = (uint64_t)(uintptr_t)buffers[i];
  }
  run->params[3] = (uint64_t)(uintptr_t)&maps[0];
  run->params[4] = (uint64_t)(uintptr_t)&maps[1];
  run->dynamic_shared = shape.shared_bytes;
  ok = ok && ptxs_run(run, 1, (unsigned)shape.block_threads);
  EXPECT(ok, "simulator: %s", run->error);
  int wrong = 0;
  for (int p = 0; ok && p < BATCH; p++)
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double sum = 0;
        for (int q = 0; q < K; q++)
          sum += (double)((p * M * PITCH + i * PITCH + q) % 7 - 3) * ((p * N * PITCH + j * PITCH + q) % 5 - 2);
        wrong += out[(p * M + i) * N + j] != (float)sum;
      }
  EXPECT(wrong == 0, "%d of %d outputs differ from the host's", wrong, BATCH * M * N);
  ptxs_free(k);
  free(k);
  free(run);
  free(lhs), free(rhs), free(out);
  ptx_builder_free(&b);
}

int main(void) {
  RUN(one_block_walks_every_tile_through_the_stage_ring);
  return test_summary();
}
