/* Where a run's time goes: each instruction of the entry timed on its own
 * (axle-run --time N --time-kernels, and its --json report).
 *
 * The time of an instruction is the wall time from the end of the one
 * before it (or the start of the run) to its end, as the backend's
 * run_observed reports each step. That is the time a step costs inside a
 * real run, with caches as the schedule leaves them; the observer itself
 * only reads the clock. A backend without run_observed cannot be profiled
 * this way, nor can one with a device clock (the GPU): its steps run
 * apart from the host, whose clock between two observed steps would time
 * the copy of each value back to the host rather than the kernels; its
 * --time is the device's own time of the whole run. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/executable.h"

static double clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct ProfileRun {
  double last;            /* the clock at the previous step's end */
  int step, capacity;     /* steps seen this run; the arrays' size */
  const Instruction **insts;
  double *ms;             /* ms[step * runs + run] */
  int run, runs;
} ProfileRun;

static bool profile_observe(void *context, const Instruction *inst, const ObservedLeaf *leaves, int leaf_count,
                            Status *st) {
  (void)leaves, (void)leaf_count;
  ProfileRun *r = context;
  double now = clock_ms();
  if (r->step == r->capacity) {
    if (r->run > 0) {  /* more steps than the first run: the schedule cannot change */
      return status_error(st, STATUS_RUNTIME_ERROR, "the steps of a run changed between runs");
    }
    r->capacity = r->capacity ? 2 * r->capacity : 64;
    r->insts = mem_realloc(r->insts, (size_t)r->capacity * sizeof *r->insts);
    r->ms = mem_realloc(r->ms, (size_t)r->capacity * (size_t)r->runs * sizeof *r->ms);
  }
  if (r->run == 0) r->insts[r->step] = inst;
  else if (r->insts[r->step] != inst) {
    return status_error(st, STATUS_RUNTIME_ERROR, "the steps of a run changed between runs");
  }
  r->ms[(size_t)r->step * (size_t)r->runs + (size_t)r->run] = now - r->last;
  r->step++;
  r->last = clock_ms();  /* the observer's own time is not the next step's */
  return true;
}

static int compare_ms(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

bool executable_time_steps(const Executable *e, HostBuffer *const *args, int arg_count, int runs, StepTimes *times,
                           Status *st) {
  memset(times, 0, sizeof *times);
  if (runs < 1) return status_error(st, STATUS_INPUT_ERROR, "a timing needs at least one run");
  if (!e->backend->run_observed || e->backend->time_device)
    return status_error(st, STATUS_UNSUPPORTED, "the %s backend cannot time its kernels one by one%s",
                        e->backend->name,
                        e->backend->time_device ? " (its --time is the device's, of the whole run)" : "");
  if (!host_buffer_check_arguments(e->module->entry, args, arg_count, st)) return false;
  ProfileRun r = {.runs = runs};
  int steps = 0;
  bool ok = true;
  for (int run = -1; ok && run < runs; run++) {  /* run -1 is the warm-up, not kept */
    r.run = run < 0 ? 0 : run;
    r.step = 0;
    r.last = clock_ms();
    HostBuffer *out = e->backend->run_observed(e->program, executable_module_to_run(e), args, arg_count, profile_observe, &r, st);
    ok = out != NULL;
    host_buffer_free(out);
    if (ok && run > 0 && r.step != steps)
      ok = status_error(st, STATUS_RUNTIME_ERROR, "the steps of a run changed between runs");
    if (run <= 0) steps = r.step;
  }
  if (ok) {
    times->steps = mem_calloc((size_t)steps + 1, sizeof *times->steps);
    times->count = steps;
    for (int s = 0; s < steps; s++) {
      double *ms = r.ms + (size_t)s * (size_t)runs;
      qsort(ms, (size_t)runs, sizeof *ms, compare_ms);
      times->steps[s] = (StepTime){.inst = r.insts[s],
                                   .median_ms = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2,
                                   .min_ms = ms[0]};
    }
  }
  mem_free(r.insts);
  mem_free(r.ms);
  return ok;
}

void step_times_free(StepTimes *times) {
  mem_free(times->steps);
  memset(times, 0, sizeof *times);
}
