/* The GPU backend's scatter and select-and-scatter.
 * Not written yet: the kernel IR's in-order loops. */
#include "emit_ptx/gpu_compile.h"

bool gpu_compile_scatter(GpuCompile *c, const Instruction *inst) { return gpu_compile_kernel(c, inst); }
