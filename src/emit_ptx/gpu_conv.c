/* The GPU backend's convolutions, and fusions around one.
 * Not written yet: the kernel IR's convolution, one thread per output. */
#include "emit_ptx/gpu_compile.h"

bool gpu_compile_convolution(GpuCompile *c, const Instruction *inst) { return gpu_compile_kernel(c, inst); }

bool gpu_compile_convolution_fusion(GpuCompile *c, const Instruction *inst) { return gpu_compile_kernel(c, inst); }
