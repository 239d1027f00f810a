/* The GPU backend's control flow: while, conditional, call and async wrappers.
 * Not written yet: refused, located. */
#include "emit_ptx/gpu_compile.h"

bool gpu_compile_control(GpuCompile *c, const Instruction *inst) { return gpu_refuse(c, inst, NULL); }
