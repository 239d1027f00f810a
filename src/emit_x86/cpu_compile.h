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
  const Computation *entry;   /* the computation being compiled: the entry or a called one */
  bool called;                /* entry is a called computation (cpu_compile_called) */
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
/* A program of its own for comp (a loop body, a branch), compiled by the
 * same walk as the entry: it reads its parameters from, and writes its
 * result to, leaf addresses its caller gives (cpu_frame_run). NULL after
 * the located refusal of what it could not compile. */
CpuProgram *cpu_compile_called(CpuCompile *c, const Computation *comp);

/* ------------------------------------------------------------- cpu_dot.c */
bool cpu_compile_dot(CpuCompile *c, const Instruction *inst);
bool cpu_compile_output_fusion(CpuCompile *c, const Instruction *fusion);

/* --------------------------------------------------------- cpu_control.c */
bool cpu_compile_while(CpuCompile *c, const Instruction *inst);
bool cpu_compile_conditional(CpuCompile *c, const Instruction *inst);
bool cpu_compile_call(CpuCompile *c, const Instruction *inst);
bool cpu_compile_async_start(CpuCompile *c, const Instruction *inst);
/* Ops whose value is copied from operand leaves or constants: forwards
 * (add-dependency, domain, opt-barrier, async-update ...), the collectives
 * and asynchronous pairs of one replica, and the ops on static sizes. */
bool cpu_compile_forward(CpuCompile *c, const Instruction *inst);
bool cpu_compile_ragged_all_to_all(CpuCompile *c, const Instruction *inst);
bool cpu_compile_map(CpuCompile *c, const Instruction *inst);
bool cpu_compile_scan(CpuCompile *c, const Instruction *inst);
bool cpu_compile_rng_bit_generator(CpuCompile *c, const Instruction *inst);

#endif
