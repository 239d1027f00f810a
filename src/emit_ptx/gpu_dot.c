/* The GPU backend's matrix products: dot, scaled-dot, ragged-dot, and fusions around a dot.
 * Not written yet: refused, located. */
#include "emit_ptx/gpu_compile.h"

bool gpu_compile_dot(GpuCompile *c, const Instruction *inst) {
  return gpu_refuse(c, inst, "dots need a GEMM kernel, not written yet");
}

bool gpu_compile_dot_fusion(GpuCompile *c, const Instruction *inst) {
  return gpu_refuse(c, inst, "an output fusion (a dot's epilogue)");
}
