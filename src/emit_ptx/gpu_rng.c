/* The GPU backend's random numbers.
 * Not written yet: what the kernel IR lowers, else refused. */
#include "emit_ptx/gpu_compile.h"

bool gpu_compile_rng(GpuCompile *c, const Instruction *inst) { return gpu_compile_kernel(c, inst); }
