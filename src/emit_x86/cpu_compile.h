/* What the CPU backend's compile functions share (cpu_backend.c walks the
 * entry computation; cpu_dot.c and the files beside it compile one family
 * of instructions each into steps of the CpuProgram).
 *
 * A compile function takes the CpuCompile and one instruction, adds steps
 * reading and writing through binding numbers (cpu_binding_of), and returns
 * false with the one located message of cpu_refuse for what it cannot do. */
#ifndef AXLE_EMIT_X86_CPU_COMPILE_H
#define AXLE_EMIT_X86_CPU_COMPILE_H

#include "emit_x86/cpu_program.h"

typedef struct CpuCompile {
  CpuProgram *p;
  const Module *m;
  const Computation *entry;
  Status *st;
  /* Output fusions' products: each lives only from its GEMM to its
   * epilogue, the next step, so all share one binding of the largest size. */
  int product_binding;
  int64_t product_bytes;
} CpuCompile;

/* The one message for everything the backend cannot compile, located at
 * the instruction; why (may be NULL) says what stopped it. Returns false. */
bool cpu_refuse(CpuCompile *c, const Instruction *inst, const char *why);
/* The binding of leaf `leaf` of inst's value, following aliases; -1 when
 * the plan does not place it. */
int cpu_binding_of(const CpuCompile *c, const Instruction *inst, int leaf);
/* A kernel step for inst (lowered by src/opt/lower.c); with `computed` (an
 * output fusion's dot), the epilogue reading its product from
 * computed_binding. */
bool cpu_compile_kernel(CpuCompile *c, const Instruction *inst, const Instruction *computed, int computed_binding);

/* ------------------------------------------------------------- cpu_dot.c */
bool cpu_compile_dot(CpuCompile *c, const Instruction *inst);
bool cpu_compile_output_fusion(CpuCompile *c, const Instruction *fusion);

/* --------------------------------------------------------- cpu_scatter.c */
bool cpu_compile_scatter(CpuCompile *c, const Instruction *inst);
bool cpu_compile_select_and_scatter(CpuCompile *c, const Instruction *inst);
/* ------------------------------------------------------------ cpu_call.c
 * Runtime-routine steps (CPU_STEP_CALL). */
/* Whether s is an array in row-major layout {rank-1,...,0}, unpacked. */
bool cpu_layout_is_row_major(const Shape *s);
/* A call step whose buffers are inst's operands (leaf 0 of each), then its
 * result leaves 0..leaf_count-1; call sees each of them row-major (another
 * layout is copied through scratch around it). The step owns state from
 * here on, freed by free_state, also when this refuses (NULL). */
CpuStep *cpu_add_call_step(CpuCompile *c, const Instruction *inst, int leaf_count, CpuCallFunction *call, void *state,
                           void (*free_state)(void *state));

/* ------------------------------------------------------------ cpu_sort.c
 * sort (a compiled comparator called by a merge-sort routine) and topk. */
bool cpu_compile_sort(CpuCompile *c, const Instruction *inst);
bool cpu_compile_topk(CpuCompile *c, const Instruction *inst);

/* ------------------------------------------------------------- cpu_fft.c */
bool cpu_compile_fft(CpuCompile *c, const Instruction *inst);

/* ---------------------------------------------------------- cpu_linalg.c
 * cholesky, triangular-solve, and the LAPACK getrf custom-calls JAX emits
 * (lapack_sgetrf_ffi, lapack_dgetrf_ffi); other custom-calls are refused. */
bool cpu_compile_cholesky(CpuCompile *c, const Instruction *inst);
bool cpu_compile_triangular_solve(CpuCompile *c, const Instruction *inst);
bool cpu_compile_custom_call(CpuCompile *c, const Instruction *inst);

#endif
