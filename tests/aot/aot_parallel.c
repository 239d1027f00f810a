/* NAME_run_parallel against NAME_run (tests/aot/aot.sh): the same bytes
 * when a parallel-for of four threads runs the tasks, taken from a shared
 * counter in whatever order the threads reach it.
 *
 *   cc -pthread -DAOT_HEADER='"DIR/m.h"' -DAOT_NAME=m -DAOT_PREFIX=M aot_parallel.c DIR/m.o
 *
 * Exit 0 when every result is byte-identical and the callback ran more
 * than one task; 1 otherwise, saying which. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include AOT_HEADER

#define PASTE2(a, b) a##b
#define PASTE(a, b) PASTE2(a, b)
#define AOT(suffix) PASTE(AOT_NAME, suffix)
#define AOT_MACRO(suffix) PASTE(AOT_PREFIX, suffix)

enum { THREADS = 4 };

typedef struct Work {
  int64_t tasks;
  AOT(_task_t) *task;
  void *context;
  atomic_llong next;
} Work;

static atomic_llong tasks_run;

static void *worker(void *arg) {
  Work *w = arg;
  for (long long i; (i = atomic_fetch_add(&w->next, 1)) < w->tasks;) {
    w->task(w->context, i);
    atomic_fetch_add(&tasks_run, 1);
  }
  return NULL;
}

static void parallel_for(void *runner, int64_t tasks, AOT(_task_t) *task, void *context) {
  (void)runner;
  Work w = {.tasks = tasks, .task = task, .context = context};
  atomic_init(&w.next, 0);
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, worker, &w);
  for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
}

static void *block(int64_t bytes) { return aligned_alloc(64, (size_t)(bytes + 64) / 64 * 64); }

int main(void) {
  enum { PARAMS = AOT_MACRO(_PARAM_COUNT), RESULTS = AOT_MACRO(_RESULT_COUNT) };
  void *params[PARAMS + 1] = {0}, *one[RESULTS + 1] = {0}, *many[RESULTS + 1] = {0};
  unsigned state = 7;
  for (int i = 0; i < PARAMS; i++) {
    float *p = params[i] = block(AOT(_params)[i].bytes);
    for (int64_t k = 0; k < AOT(_params)[i].elements; k++, state = state * 1664525u + 1013904223u)
      p[k] = (float)(state >> 8) / 8388608.0f - 1.0f;
  }
  for (int i = 0; i < RESULTS; i++) {
    one[i] = block(AOT(_results)[i].bytes);
    many[i] = block(AOT(_results)[i].bytes);
  }
  void *temp = block(AOT_MACRO(_TEMP_BYTES));
  int rc = AOT(_run)((const void *const *)params, one, temp);
  int rc_parallel = AOT(_run_parallel)((const void *const *)params, many, temp, parallel_for, NULL);
  int same = 1;
  for (int i = 0; i < RESULTS; i++)
    if (memcmp(one[i], many[i], (size_t)AOT(_results)[i].bytes) != 0) {
      printf("result %d differs between one thread and %d\n", i, THREADS);
      same = 0;
    }
  printf("run %d, run_parallel %d, %lld tasks on %d threads\n", rc, rc_parallel, (long long)tasks_run, THREADS);
  return rc == 0 && rc_parallel == 0 && same && tasks_run > 1 ? 0 : 1;
}
