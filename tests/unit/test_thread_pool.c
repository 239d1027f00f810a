/* The thread pool: every task runs exactly once, at every thread count, and
 * work split by shape gives the same bits whatever the thread count. */
#include <stdlib.h>
#include <string.h>

#include "runtime/thread_pool.h"
#include "../test.h"

typedef struct Counts {
  int *runs;
} Counts;

static void count_task(void *context, int64_t i) {
  Counts *c = context;
  __atomic_fetch_add(&c->runs[i], 1, __ATOMIC_RELAXED);
}

TEST(every_task_runs_exactly_once_at_every_thread_count) {
  enum { TASKS = 10007 };
  int *runs = calloc(TASKS, sizeof *runs);
  for (int threads = 1; threads <= 8; threads *= 2) {
    ThreadPool *pool = thread_pool_create(threads);
    EXPECT(pool != NULL, "no pool of %d threads", threads);
    if (!pool) break;
    for (int round = 0; round < 50; round++) {
      memset(runs, 0, TASKS * sizeof *runs);
      Counts c = {runs};
      int64_t tasks = 1 + (round * 997) % TASKS;
      thread_pool_run(pool, tasks, count_task, &c);
      for (int64_t i = 0; i < TASKS; i++) {
        int want = i < tasks ? 1 : 0;
        if (runs[i] != want) {
          EXPECT(runs[i] == want, "threads %d, round %d, %lld tasks: task %lld ran %d times", threads, round,
                 (long long)tasks, (long long)i, runs[i]);
          break;
        }
      }
    }
    thread_pool_free(pool);
  }
  free(runs);
}

/* A float sum split into fixed blocks of 1000 (by shape), combined in block
 * order: the same bits for every thread count. */
typedef struct SumJob {
  const float *x;
  int64_t n;
  float *partial;
} SumJob;

static void sum_block(void *context, int64_t block) {
  SumJob *job = context;
  float s = 0;
  for (int64_t i = block * 1000; i < (block + 1) * 1000 && i < job->n; i++) s += job->x[i];
  job->partial[block] = s;
}

static float blocked_sum(ThreadPool *pool, const float *x, int64_t n) {
  int64_t blocks = (n + 999) / 1000;
  float *partial = calloc((size_t)blocks, sizeof *partial);
  SumJob job = {x, n, partial};
  thread_pool_run(pool, blocks, sum_block, &job);
  float s = 0;
  for (int64_t b = 0; b < blocks; b++) s += partial[b];
  free(partial);
  return s;
}

TEST(a_reduction_split_by_shape_gives_the_same_bits_for_every_thread_count) {
  enum { N = 1000003 };
  float *x = malloc(N * sizeof *x);
  uint32_t r = 12345;
  for (int i = 0; i < N; i++) {
    r = r * 1664525u + 1013904223u;
    x[i] = (float)(r >> 8) * 0x1p-24f * ((i & 1) ? 1e3f : -1e-3f);
  }
  float want = blocked_sum(NULL, x, N);
  for (int threads = 1; threads <= 8; threads++) {
    ThreadPool *pool = thread_pool_create(threads);
    float got = blocked_sum(pool, x, N);
    EXPECT(memcmp(&got, &want, sizeof got) == 0, "%d threads: %.9g, 1 thread: %.9g", threads, got, want);
    thread_pool_free(pool);
  }
  free(x);
}

TEST(axle_threads_sets_the_default_count) {
  setenv("AXLE_THREADS", "3", 1);
  EXPECT(thread_pool_default_count() == 3, "got %d", thread_pool_default_count());
  ThreadPool *pool = thread_pool_create(0);
  EXPECT(pool && thread_pool_thread_count(pool) == 3, "pool has %d threads", thread_pool_thread_count(pool));
  thread_pool_free(pool);
  unsetenv("AXLE_THREADS");
  EXPECT(thread_pool_default_count() >= 1, "got %d", thread_pool_default_count());
}

int main(void) {
  RUN(every_task_runs_exactly_once_at_every_thread_count);
  RUN(a_reduction_split_by_shape_gives_the_same_bits_for_every_thread_count);
  RUN(axle_threads_sets_the_default_count);
  return test_summary();
}
