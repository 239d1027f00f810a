/* The tensor-core GEMM (gemm.mma): not written yet. */
#include "emit_ptx/ptx_gemm_internal.h"

bool ptx_gemm_mma_fits(const PtxBuilder *b, const PtxGemm *g) {
  (void)b;
  (void)g;
  return false;
}

bool ptx_gemm_mma_emit(PtxBuilder *b, const PtxGemm *g, const char *entry, PtxGemmShape *shape, Status *st) {
  (void)b, (void)g, (void)entry, (void)shape;
  return status_error(st, STATUS_UNSUPPORTED, "no tensor-core GEMM yet");
}
