/* Device-resident buffers of the GPU backend (gpu_program.h): the C API's
 * axle_buffer_to_device, axle_buffer_to_host and axle_run_on_device.
 *
 * A device buffer is one cuMemAlloc of a row-major array in the device's
 * primary context, which every executable of the process shares, so a
 * buffer made for one executable can feed another. A run on device
 * buffers binds addresses per run instead of the program's I/O block:
 * each parameter's binding points at the caller's array, each result
 * leaf's output binding at a new allocation the caller then owns, and the
 * launches run over those addresses (gpu_program_launch_all). Nothing is
 * copied up or down. A result leaf that is not an output of a kernel (a
 * parameter or constant returned as it is, or an output returned twice)
 * is copied into its own allocation after the launches, through the host:
 * rare, and it keeps the driver table free of device-to-device copies.
 *
 * Arrays whose device layout is not row-major, and tuple parameters, are
 * refused with a message (axle_executable_run handles them). */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/gpu_program.h"

bool gpu_device_upload(GpuProgram *p, const void *data, size_t bytes, uint64_t *address, Status *st) {
  CUdeviceptr at = 0;
  pthread_mutex_lock(&p->lock);
  bool ok = gpu_context_enter(&p->gpu, st) && gpu_alloc(&p->gpu, bytes, "a device buffer", &at, st);
  /* the copy reads pageable memory the caller may change after we return */
  if (ok && bytes) ok = gpu_copy_to_device(&p->gpu, at, data, bytes, st) && gpu_synchronize(&p->gpu, st);
  if (!ok && at) gpu_free(&p->gpu, at);
  pthread_mutex_unlock(&p->lock);
  *address = ok ? (uint64_t)at : 0;
  return ok;
}

bool gpu_device_download(GpuProgram *p, uint64_t address, void *data, size_t bytes, Status *st) {
  pthread_mutex_lock(&p->lock);
  bool ok = gpu_context_enter(&p->gpu, st) && (!bytes || gpu_copy_to_host(&p->gpu, data, address, bytes, st));
  pthread_mutex_unlock(&p->lock);
  return ok;
}

void gpu_device_release(GpuProgram *p, uint64_t address) {
  Status ignored = {0};
  pthread_mutex_lock(&p->lock);
  if (address && gpu_context_enter(&p->gpu, &ignored)) gpu_free(&p->gpu, address);
  pthread_mutex_unlock(&p->lock);
}

/* Each parameter binding at its argument's address; the device must hold
 * it row-major, as a device buffer does. */
static bool parameters_bind(const GpuProgram *p, const uint64_t *args, int arg_count, CUdeviceptr *addresses,
                            Status *st) {
  for (int i = 0; i < p->binding_count; i++) {
    const GpuBinding *b = &p->bindings[i];
    if (b->kind != GPU_BINDING_PARAMETER) continue;
    if (b->number >= arg_count || b->leaf != 0)
      return status_error(st, STATUS_INPUT_ERROR, "parameter %lld is a tuple: device buffers are arrays only",
                          (long long)b->number);
    if (b->layout)
      return status_error(st, STATUS_UNSUPPORTED,
                          "parameter %lld is not row-major on the device: run it with axle_executable_run",
                          (long long)b->number);
    if (b->bytes) addresses[i] = args[b->number];
  }
  return true;
}

/* A new allocation per result leaf; an output binding seen first here is
 * bound to it, so the kernels write the caller's memory. copy_after[l]:
 * leaf l must be copied in once the launches are done. */
static bool results_bind(GpuProgram *p, CUdeviceptr *addresses, uint64_t *results, bool *copy_after, Status *st) {
  bool *rebound = mem_calloc((size_t)p->binding_count + 1, sizeof *rebound);
  bool ok = true;
  for (int l = 0; l < p->result_leaf_count && ok; l++) {
    int binding = p->result_bindings[l];
    const GpuBinding *b = &p->bindings[binding];
    if (p->result_layouts[l]) {
      ok = status_error(st, STATUS_UNSUPPORTED,
                        "result %d is not row-major on the device: run it with axle_executable_run", l);
      break;
    }
    CUdeviceptr at = 0;
    if (b->bytes && !gpu_alloc(&p->gpu, (size_t)b->bytes, "a result on the device", &at, st)) ok = false;
    results[l] = at;
    copy_after[l] = b->bytes && (b->kind != GPU_BINDING_OUTPUT || rebound[binding]);
    if (ok && b->bytes && !copy_after[l]) addresses[binding] = at, rebound[binding] = true;
  }
  mem_free(rebound);
  return ok;
}

/* Leaves that no kernel wrote into their own allocation: through the host. */
static bool results_copy_in(GpuProgram *p, const CUdeviceptr *addresses, const uint64_t *results,
                            const bool *copy_after, Status *st) {
  for (int l = 0; l < p->result_leaf_count; l++) {
    if (!copy_after[l]) continue;
    int binding = p->result_bindings[l];
    size_t bytes = (size_t)p->bindings[binding].bytes;
    void *staging = mem_calloc(bytes, 1);
    bool ok = gpu_copy_to_host(&p->gpu, staging, addresses[binding], bytes, st) &&
              gpu_copy_to_device(&p->gpu, results[l], staging, bytes, st) && gpu_synchronize(&p->gpu, st);
    mem_free(staging);
    if (!ok) return false;
  }
  return true;
}

bool gpu_run_on_device(GpuProgram *p, const uint64_t *args, int arg_count, uint64_t *results, int result_count,
                       Status *st) {
  if (result_count != p->result_leaf_count)
    return status_error(st, STATUS_INPUT_ERROR, "the result has %d leaves, not %d", p->result_leaf_count,
                        result_count);
  CUdeviceptr *addresses = mem_calloc((size_t)p->binding_count + 1, sizeof *addresses);
  bool *copy_after = mem_calloc((size_t)result_count + 1, sizeof *copy_after);
  for (int i = 0; i < p->binding_count; i++) addresses[i] = p->bindings[i].address;
  for (int l = 0; l < result_count; l++) results[l] = 0;
  pthread_mutex_lock(&p->lock);
  MemScope scope;  /* out of memory unwinds past the lock: release it first */
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) {
    pthread_mutex_unlock(&p->lock);
    mem_scope_rethrow(&scope);
  }
  bool ok = gpu_context_enter(&p->gpu, st) && parameters_bind(p, args, arg_count, addresses, st) &&
            results_bind(p, addresses, results, copy_after, st) && gpu_program_launch_all(p, addresses, st) &&
            gpu_synchronize(&p->gpu, st) && results_copy_in(p, addresses, results, copy_after, st);
  if (!ok) {
    Status ignored = {0};
    gpu_synchronize(&p->gpu, &ignored);
    for (int l = 0; l < result_count; l++)
      if (results[l]) gpu_free(&p->gpu, results[l]), results[l] = 0;
  }
  mem_scope_end(&scope);
  pthread_mutex_unlock(&p->lock);
  mem_free(copy_after);
  mem_free(addresses);
  return ok;
}
