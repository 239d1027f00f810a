/* The helpers every GPU compile file shares, below the dispatcher
 * (gpu_backend.c) and the family files (gpu_dot.c, gpu_sort.c, ...) that
 * call them: the one refusal, the GPU bindings of the program stage's
 * bindings, launches and their entry names, scratch in the temporary
 * block, and a kernel step compiled to PTX. As cpu_compile_support.c is
 * for the CPU, this is the file of src/emit_ptx's compile half a reader
 * can start from: it calls nothing above it. */
#include <stdio.h>
#include <string.h>

#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_kernel.h"
#include "runtime/backend.h"

bool gpu_refuse(GpuCompile *c, const Instruction *inst, const char *why) {
  return backend_refuse(c->st, c->m, inst, "GPU", why, "");
}

/* ---- storage ---- */

int gpu_binding_at(const GpuCompile *c, int at) {
  if (at < 0) return -1;
  return c->slot_bindings ? c->slot_bindings[at] : at;
}

int gpu_binding_of(const GpuCompile *c, const Instruction *inst, int leaf) {
  return gpu_binding_at(c, program_binding_of(c->program, inst, leaf));
}

int gpu_bind_constant(GpuCompile *c, int at) {
  /* what the stage could not bind was refused before the walk (backend_compile.c) */
  const ProgramBinding *pb = &c->program->bindings[at];
  if (pb->kind != BINDING_CONSTANT) return gpu_refuse(c, pb->inst, "a constant without storage") - 1;
  void *data = mem_malloc((size_t)(pb->bytes ? pb->bytes : 1));
  if (pb->bytes) memcpy(data, pb->data, (size_t)pb->bytes);
  GpuBinding b = {.kind = GPU_BINDING_CONSTANT, .bytes = pb->bytes};
  return gpu_program_add_binding(c->p, b, data);
}

/* ---- kernels ---- */

const ProgramStep *gpu_step_of(const GpuCompile *c, const Instruction *inst) {
  if (c->step && c->step->inst == inst && !c->step->value) return c->step;
  const Program *p = c->program;
  for (int i = 0; p && i < p->step_count; i++)
    if (p->steps[i].inst == inst && !p->steps[i].value) return &p->steps[i];
  return NULL;
}

GpuLaunch *gpu_add_launch(GpuCompile *c, const Instruction *inst, const char *entry, unsigned grid, unsigned block,
                          const int *buffers, int buffer_count, const int64_t *scalars, int scalar_count) {
  if (scalar_count > GPU_LAUNCH_MAX_SCALARS) {
    gpu_refuse(c, inst, "a kernel with more scalar parameters than a launch holds");
    return NULL;
  }
  for (int i = 0; i < buffer_count; i++)
    if (buffers[i] < 0) {
      gpu_refuse(c, inst, "a kernel buffer the plan does not place");
      return NULL;
    }
  GpuLaunch *l = gpu_program_add_launch(c->p, inst, buffer_count);
  snprintf(l->entry, sizeof l->entry, "%s", entry);
  l->grid = grid ? grid : 1;
  l->block = block;
  memcpy(l->buffers, buffers, (size_t)buffer_count * sizeof *buffers);
  l->scalar_count = scalar_count;
  if (scalar_count) memcpy(l->scalars, scalars, (size_t)scalar_count * sizeof *scalars);
  return l;
}

int gpu_reserve_temp(GpuCompile *c, int64_t bytes) {
  GpuProgram *p = c->p;
  int64_t at = (p->temp_bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  GpuBinding b = {.kind = GPU_BINDING_TEMP, .offset = at, .bytes = bytes};
  return gpu_program_add_binding(p, b, NULL);
}

void gpu_entry_name(const GpuCompile *c, const Instruction *inst, const char *suffix, char *out, size_t size) {
  char base[128];
  ptx_entry_name(inst->name, base, sizeof base);
  snprintf(out, size, "k%d_%s%s%s", c->p->launch_count, base, suffix && *suffix ? "_" : "", suffix ? suffix : "");
}

bool gpu_step_buffers(GpuCompile *c, const ProgramStep *step, int product, int *out) {
  const Kernel *k = step->kernel;
  for (int i = 0; i < step->buffer_count; i++) {
    int at = step->buffers[i];
    bool constant = i < k->input_count && k->inputs[i].constant;
    out[i] = at == PROGRAM_PRODUCT_INPUT ? product : constant ? gpu_bind_constant(c, at) : gpu_binding_at(c, at);
    if (out[i] < 0) return constant ? false : gpu_refuse(c, step->inst, "a kernel buffer the plan does not place");
  }
  return true;
}

bool gpu_compile_kernel(GpuCompile *c, const Instruction *inst) {
  /* only a kernel step's buffers are its kernel's (program.h); a kernel
   * the stage could not lower was refused before the walk */
  const ProgramStep *step = gpu_step_of(c, inst);
  const Kernel *k = step && step->kind == PROGRAM_STEP_KERNEL ? step->kernel : NULL;
  if (!k) return gpu_refuse(c, inst, "an instruction no kernel computes");
  GpuLaunch *l = gpu_program_add_launch(c->p, inst, k->input_count + k->output_count);
  char base[128];
  ptx_entry_name(k->name, base, sizeof base);
  snprintf(l->entry, sizeof l->entry, "k%d_%s", c->p->launch_count - 1, base);
  PtxKernelShape shape;
  Status why = {0};
  if (!ptx_kernel_emit(c->ptx, k, l->entry, &shape, &why)) return gpu_refuse(c, inst, why.message);
  /* Kernels loop grid-stride, so a grid capped below the limit of
   * gridDim.x (2^31 - 1) is still correct. */
  l->grid = (unsigned)(shape.blocks < (1 << 30) ? shape.blocks : (1 << 30));
  l->block = (unsigned)shape.block_threads;
  return gpu_step_buffers(c, step, -1, l->buffers);
}

