/* The GPU backend's entry in the backend table.
 *
 * compile opens the CUDA driver and the device (so that a machine without
 * them gets the message a user needs: "no CUDA driver", "no CUDA device"),
 * lowers every instruction of the entry to a kernel, writes their PTX for
 * the device's target (src/emit_ptx/ptx_kernel.c) and has the driver load
 * it, so a kernel the JIT rejects fails here, with its log. Launching the
 * kernels (device buffers, transfers, the launch order of the schedule) is
 * not written yet: compile then stops with a message saying so rather than
 * fall back silently. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_kernel.h"
#include "opt/lower.h"
#include "runtime/backend.h"
#include "runtime/cuda_driver.h"
#include "runtime/executable.h"

/* The entry instructions that need no kernel of their own: values that
 * arrive (parameters, constants) or are only regrouped (tuples). */
static bool needs_kernel(const Instruction *inst) {
  switch (inst->opcode) {
  case OP_PARAMETER:
  case OP_CONSTANT:
  case OP_TUPLE:
  case OP_GET_TUPLE_ELEMENT: return false;
  default: return true;
  }
}

/* Every kernel of the entry into b; their entry names into names. */
static bool module_ptx_write(const Module *m, PtxBuilder *b, char (*names)[160], int *count, Status *st) {
  const Computation *c = m->entry;
  *count = 0;
  for (int i = 0; i < c->instruction_count; i++) {
    const Instruction *inst = c->instructions[i];
    if (!needs_kernel(inst)) continue;
    Kernel *k = lower_to_kernel(inst, st);
    if (!k) return false;
    char base[128];
    ptx_entry_name(k->name, base, sizeof base);
    snprintf(names[*count], sizeof names[*count], "k%d_%s", *count, base);
    PtxKernelShape shape;
    bool ok = ptx_kernel_emit(b, k, names[*count], &shape, st);
    kernel_free(k);
    if (!ok) return false;
    (*count)++;
  }
  return true;
}

/* Loads the module and looks up each kernel, as a run would. */
static bool module_load_check(GpuDevice *gpu, const char *ptx, char (*names)[160], int count, Status *st) {
  CUmodule module;
  if (!gpu_module_load(gpu, ptx, "the module's kernels", &module, st)) return false;
  bool ok = true;
  for (int i = 0; ok && i < count; i++) {
    CUfunction f;
    ok = gpu_function_get(gpu, module, names[i], &f, st);
  }
  gpu->driver.module_unload(module);
  return ok;
}

static bool gpu_compile(Executable *exe, Status *st) {
  exe->program = NULL;
  const Module *m = executable_module_to_run(exe);
  GpuDevice gpu;
  if (!gpu_device_open(&gpu, st)) return false;
  char device[160];
  snprintf(device, sizeof device, "%s, sm_%d%d", gpu.name, gpu.compute_major, gpu.compute_minor);
  PtxTarget target;
  bool ok = ptx_target_for_device(gpu.compute_major, gpu.compute_minor, &target, st);
  int count = 0;
  char (*names)[160] = calloc_or_exit((size_t)m->entry->instruction_count + 1, sizeof *names);
  if (ok) {
    PtxBuilder b;
    ptx_builder_init(&b, &target);
    ok = module_ptx_write(m, &b, names, &count, st) && module_load_check(&gpu, ptx_builder_text(&b), names, count, st);
    ptx_builder_free(&b);
  }
  free(names);
  gpu_device_close(&gpu);
  if (!ok) return false;
  return status_error(st, STATUS_UNSUPPORTED,
                      "found %s and loaded the PTX of %d kernel%s for %s, but the GPU backend cannot launch "
                      "them yet; use --backend interp",
                      device, count, count == 1 ? "" : "s", target.name);
}

static HostBuffer *gpu_run(const Executable *exe, HostBuffer *const *args, int arg_count, Status *st) {
  (void)exe, (void)args, (void)arg_count;
  status_error(st, STATUS_UNSUPPORTED, "the GPU backend cannot run modules yet");
  return NULL;
}

static void gpu_free_program(void *program) { (void)program; }

const Backend backend_gpu = {
    .name = "gpu",
    .optimizes = true,
    .compile = gpu_compile,
    .run = gpu_run,
    .free_program = gpu_free_program,
};
