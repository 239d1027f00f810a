/* The GPU backend's device clock (gpu_program.h, Backend.time_device): what
 * axle-run --time prints as "device:", and what bench/gpu compares with
 * the peers' CUDA-event times. */
#include "emit_ptx/gpu_program.h"

bool gpu_time_device(GpuProgram *p, HostBuffer *const *args, int arg_count, int runs, double *ms, Status *st) {
  /* An ordinary run leaves the arguments in the parameters' device memory,
   * where every launch below reads them (and warms the caches and clocks). */
  HostBuffer *warm = gpu_program_run(p, args, arg_count, st);
  if (!warm) return false;
  host_buffer_free(warm);
  pthread_mutex_lock(&p->lock);
  GpuTimer timer = {0};
  bool ok = gpu_context_enter(&p->gpu, st) && gpu_timer_create(&p->gpu, &timer, st);
  for (int r = 0; r < runs && ok; r++)
    ok = gpu_timer_start(&p->gpu, &timer, st) && gpu_program_launch_all(p, NULL, st) &&
         gpu_timer_stop(&p->gpu, &timer, &ms[r], st);
  if (!ok) {
    Status ignored = {0};
    gpu_synchronize(&p->gpu, &ignored);
  }
  gpu_timer_destroy(&p->gpu, &timer);
  pthread_mutex_unlock(&p->lock);
  return ok;
}
