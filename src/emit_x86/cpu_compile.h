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

/* ----------------------------------------------------------- cpu_debug.c */
/* --dump for the CPU backend: under dir/kernels, per kernel step,
 * NAME.kernel.txt (its kernel IR) and NAME.s (its x86 listing), each headed
 * by the HLO instruction with its op_name and source line, and index.txt
 * naming every step in schedule order. */
bool cpu_program_dump(const CpuProgram *p, const Module *m, const char *dir, Status *st);

#endif
