/* The GPU backend's linear algebra: cholesky, triangular-solve, linear-algebra custom calls.
 * Not written yet: what the kernel IR lowers, else refused. */
#include "emit_ptx/gpu_compile.h"

bool gpu_compile_linalg(GpuCompile *c, const Instruction *inst) { return gpu_compile_kernel(c, inst); }

bool gpu_compile_custom_call(GpuCompile *c, const Instruction *inst) { return gpu_compile_kernel(c, inst); }
