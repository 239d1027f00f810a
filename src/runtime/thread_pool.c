/* The thread pool (see thread_pool.h for the determinism rule it serves).
 *
 * One job at a time: thread_pool_run publishes the job under the mutex,
 * bumps a generation counter and wakes the workers; everyone, the caller
 * included, then takes task indices from one atomic counter until none are
 * left. The caller returns only when every task has run AND every worker
 * that joined the job has left it, so no straggler can take an index of
 * the next job before that job's counter is reset. */
#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "ir.h"
#include "runtime/thread_pool.h"

struct ThreadPool {
  pthread_mutex_t mutex;
  pthread_cond_t wake, done;
  pthread_t *threads;
  int thread_count;            /* including the caller */
  int started;                 /* worker threads actually created */
  bool stopping;
  uint64_t generation;         /* bumped for every job */
  /* The current job. */
  TaskFn *run;
  void *context;
  int64_t task_count;
  atomic_int_fast64_t next_task;
  int64_t finished_tasks;      /* under the mutex */
  int active;                  /* workers inside the current job, under the mutex */
  atomic_size_t out_of_memory; /* the bytes a task of the job failed to get; 0: none */
};

/* AXLE_THREADS as a count from 1 to 1024; 0 when unset or empty, -1 when
 * it holds anything else. */
static int threads_from_env(void) {
  const char *env = getenv("AXLE_THREADS");
  if (!env || !*env) return 0;
  char *end;
  errno = 0;
  long n = strtol(env, &end, 10);
  return errno || *end || n < 1 || n > 1024 ? -1 : (int)n;
}

bool thread_count_check_env(Status *st) {
  if (threads_from_env() >= 0) return true;
  return status_error(st, STATUS_INPUT_ERROR, "AXLE_THREADS takes a count from 1 to 1024, not '%s'",
                      getenv("AXLE_THREADS"));
}

int thread_pool_default_count(void) {
  int from_env = threads_from_env();
  if (from_env > 0) return from_env;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n >= 1 ? (int)(n > 1024 ? 1024 : n) : 1;
}

/* Runs task i. Out of memory in a task must not unwind this thread out of
 * the job while the others still run it: the task's scope catches it, the
 * job is marked, and thread_pool_run unwinds the caller once all are done.
 * The tasks left after a failure are taken but not run. */
static void run_task_guarded(ThreadPool *pool, int64_t i) {
  if (atomic_load(&pool->out_of_memory) != 0) return;
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) {
    atomic_store(&pool->out_of_memory, scope.needed ? scope.needed : 1);
    return;
  }
  pool->run(pool->context, i);
  mem_scope_end(&scope);
}

/* Takes tasks until the job has none left; returns how many this thread took. */
static int64_t run_tasks(ThreadPool *pool) {
  int64_t ran = 0;
  for (;;) {
    int64_t i = atomic_fetch_add(&pool->next_task, 1);
    if (i >= pool->task_count) return ran;
    run_task_guarded(pool, i);
    ran++;
  }
}

static void *worker_main(void *arg) {
  ThreadPool *pool = arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&pool->mutex);
  for (;;) {
    while (!pool->stopping && pool->generation == seen) pthread_cond_wait(&pool->wake, &pool->mutex);
    if (pool->stopping) break;
    seen = pool->generation;
    pool->active++;
    pthread_mutex_unlock(&pool->mutex);
    int64_t ran = run_tasks(pool);
    pthread_mutex_lock(&pool->mutex);
    pool->finished_tasks += ran;
    pool->active--;
    pthread_cond_broadcast(&pool->done);
  }
  pthread_mutex_unlock(&pool->mutex);
  return NULL;
}

static void thread_pool_release(void *object);

ThreadPool *thread_pool_create(int thread_count) {
  if (thread_count <= 0) thread_count = thread_pool_default_count();
  ThreadPool *pool = calloc(1, sizeof *pool);
  if (!pool) return NULL;
  pool->thread_count = thread_count;
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  if (thread_count > 1) {
    pool->threads = calloc((size_t)thread_count - 1, sizeof *pool->threads);
    if (!pool->threads) {
      thread_pool_free(pool);
      return NULL;
    }
    for (int i = 0; i < thread_count - 1; i++) {
      if (pthread_create(&pool->threads[i], NULL, worker_main, pool) != 0) {
        thread_pool_free(pool);
        return NULL;
      }
      pool->started++;
    }
  }
  /* Its threads must be stopped if the compile that made it unwinds. */
  mem_track_object(pool, thread_pool_release);
  return pool;
}

void thread_pool_free(ThreadPool *pool) {
  if (!pool) return;
  mem_untrack(pool);
  thread_pool_release(pool);
}

/* Stops the threads and frees the pool (malloc's memory, not kept in a
 * memory scope: the pool is kept as one object, released here). */
static void thread_pool_release(void *object) {
  ThreadPool *pool = object;
  pthread_mutex_lock(&pool->mutex);
  pool->stopping = true;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (int i = 0; i < pool->started; i++) pthread_join(pool->threads[i], NULL);
  pthread_cond_destroy(&pool->wake);
  pthread_cond_destroy(&pool->done);
  pthread_mutex_destroy(&pool->mutex);
  free(pool->threads);
  free(pool);
}

int thread_pool_thread_count(const ThreadPool *pool) { return pool ? pool->thread_count : 1; }

void thread_pool_run(ThreadPool *pool, int64_t task_count, TaskFn *run, void *context) {
  if (task_count <= 0) return;
  if (!pool || pool->thread_count == 1 || task_count == 1) {
    for (int64_t i = 0; i < task_count; i++) run(context, i);
    return;
  }
  pthread_mutex_lock(&pool->mutex);
  /* A worker woken for the last job may join it only after it ended (it
   * finds no task left). Until it has left, the job must not change under
   * it: an index it took from the old counter could pass the new job's
   * count and run a task that the reset counter hands out again. */
  while (pool->active > 0) pthread_cond_wait(&pool->done, &pool->mutex);
  pool->run = run;
  pool->context = context;
  pool->task_count = task_count;
  pool->finished_tasks = 0;
  atomic_store(&pool->next_task, 0);
  atomic_store(&pool->out_of_memory, 0);
  pool->generation++;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);

  int64_t ran = run_tasks(pool);

  pthread_mutex_lock(&pool->mutex);
  pool->finished_tasks += ran;
  while (pool->finished_tasks < task_count || pool->active > 0) pthread_cond_wait(&pool->done, &pool->mutex);
  pthread_mutex_unlock(&pool->mutex);
  size_t needed = atomic_load(&pool->out_of_memory);
  if (needed) mem_fail(1, needed);
}
