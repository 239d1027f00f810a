/* The GPU backend's scatter and select-and-scatter (gpu_backend.c routes
 * OP_SCATTER and OP_SELECT_AND_SCATTER here).
 *
 * select-and-scatter is the kernel IR's two kernels
 * (lower_select_and_scatter), as on the CPU: the first stores, for every
 * window placement, the operand position that select picks into scratch
 * (gpu_reserve_temp); the second computes each result element from the
 * source values whose picks land on it, in the evaluator's order. Both are
 * kernels over an index space with one writer per element: deterministic.
 *
 * scatter is in gpu_scatter_apply.c. */
#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/gpu_scatter.h"
#include "emit_ptx/ptx_kernel.h"

bool gpu_launch_lowered_kernel(GpuCompile *c, const Instruction *inst, const Kernel *k, const char *suffix,
                               const int *bindings, int count) {
  char entry[160];
  gpu_entry_name(c, inst, suffix, entry, sizeof entry);
  PtxKernelShape shape;
  Status why = {0};
  if (!ptx_kernel_emit(c->ptx, k, entry, &shape, &why)) return gpu_refuse(c, inst, why.message);
  /* The kernels loop grid-stride, so a capped grid is still correct. */
  unsigned grid = (unsigned)(shape.blocks < (1 << 30) ? shape.blocks : (1 << 30));
  return gpu_add_launch(c, inst, entry, grid, (unsigned)shape.block_threads, bindings, count, NULL, 0) != NULL;
}

static bool compile_select_and_scatter(GpuCompile *c, const Instruction *inst) {
  /* its two kernels, lowered by the program stage (src/opt/lower_window.c) */
  const ProgramStep *step = gpu_step_of(c, inst);
  const Kernel *pick = step && step->applied_count == 2 ? step->applied[0] : NULL;
  const Kernel *scatter = pick ? step->applied[1] : NULL;
  if (!scatter)
    return gpu_refuse(c, inst, step && step->unsupported ? step->unsupported : "a select-and-scatter without its kernels");
  /* The picks live only from the first kernel to the second. */
  int bindings[5];
  for (int i = 0; i < 3; i++) bindings[i] = gpu_binding_of(c, inst->operands[i], 0);
  bindings[3] = gpu_reserve_temp(c, shape_byte_size(&pick->outputs[0].shape));
  bindings[4] = gpu_binding_of(c, inst, 0);
  return gpu_launch_lowered_kernel(c, inst, pick, "pick", bindings, 4) &&
         gpu_launch_lowered_kernel(c, inst, scatter, "scatter", bindings, 5);
}

/* A kernel of select-and-scatter's reads its operands only: a constant
 * fused into it would need a binding of its own. */
static const char *select_and_scatter_refusal(const ProgramStep *step) {
  for (int k = 0; k < step->applied_count; k++)
    for (int i = 0; step->applied[k] && i < step->applied[k]->input_count; i++)
      if (step->applied[k]->inputs[i].constant) return "a kernel with a fused constant input";
  return NULL;
}

const char *gpu_scatter_refusal(const Program *program, const ProgramStep *step) {
  if (step->inst->opcode == OP_SELECT_AND_SCATTER) return select_and_scatter_refusal(step);
  return gpu_scatter_apply_refusal(program, step->inst);
}

bool gpu_compile_scatter(GpuCompile *c, const Instruction *inst) {
  if (inst->opcode == OP_SELECT_AND_SCATTER) return compile_select_and_scatter(c, inst);
  return gpu_compile_scatter_apply(c, inst);
}
