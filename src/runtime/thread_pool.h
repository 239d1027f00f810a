/* A thread pool for running one kernel's work on every core.
 *
 * Determinism is the point of its shape: a caller splits its work into
 * tasks by the SHAPE of the data (rows, tiles, blocks of a reduction),
 * never by the number of threads, and each task writes only its own part
 * of the output. Which thread runs which task then cannot change a single
 * bit of the result; a reduction that needs partial results keeps one per
 * task and combines them in task order afterwards. So every thread count,
 * 1 included, gives the same bits.
 *
 * The pool's threads sleep between calls. thread_pool_run blocks until every
 * task has run; the calling thread works too. */
#ifndef AXLE_RUNTIME_THREAD_POOL_H
#define AXLE_RUNTIME_THREAD_POOL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ThreadPool ThreadPool;

/* A task: run(context, index) for index in [0, task_count). */
typedef void TaskFn(void *context, int64_t index);

/* thread_count counts the caller: 1 means no extra threads. 0 means all
 * cores, or AXLE_THREADS when it is set. NULL only when thread creation
 * fails (the caller then runs with thread_count 1). */
ThreadPool *thread_pool_create(int thread_count);
void thread_pool_free(ThreadPool *pool);
int thread_pool_thread_count(const ThreadPool *pool);
/* AXLE_THREADS when it is set, else all cores of this machine (sysconf),
 * at least 1. */
int thread_pool_default_count(void);
/* False with a message when AXLE_THREADS is set to anything but a count
 * from 1 to 1024 (as --threads 0 is refused): executable_compile asks. */
typedef struct Status Status;
bool thread_count_check_env(Status *st);
/* Runs every task once, in any order across threads, and returns when all
 * are done. A NULL pool runs them on the calling thread, in order. */
void thread_pool_run(ThreadPool *pool, int64_t task_count, TaskFn *run, void *context);

#endif
