/* A module run over several devices in one process: one thread per device,
 * and the rendezvous where they meet at each collective.
 *
 * Every device runs the same program, so every device reaches the same
 * collectives in the same order. The rendezvous is one barrier over all
 * devices per collective, in two halves: exchange (each device leaves its
 * operands; the last to arrive checks that all wait at the same
 * instruction and opens the round) and exchange_done (each has computed its
 * own result from everyone's operands; the last to finish reading lets all
 * go on and free their operands). Groups only choose which of the operands
 * a device reads (src/ir/eval/eval_collective.c).
 *
 * Nothing may hang: a device that fails, or ends its run while others wait
 * at a collective, or waits at a different collective than the others
 * (control flow that differs between devices), breaks the rendezvous, and
 * every device waiting or arriving later ends its run with an error. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/executable.h"
#include "runtime/nccl.h"
#include "runtime/thread_pool.h"

typedef struct DeviceSlot {
  const Instruction *inst;          /* the collective it waits at */
  Literal *const *operands;
} DeviceSlot;

typedef struct Rendezvous {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int count;                 /* devices */
  int arrived;               /* at the open round's exchange */
  int finished;              /* devices whose run has ended */
  int reading;               /* devices still reading the round's operands */
  int64_t rounds_opened, rounds_read;
  bool broken;
  int broken_by;             /* the device whose failure broke it, or -1 */
  char why[512];
  DeviceSlot *slots;         /* by flattened id */
  Literal *const **all;      /* the open round's operands, by flattened id */
} Rendezvous;

/* One device's thread. */
typedef struct DeviceThread {
  EvalDevice device;
  int index;                 /* d: replica d % R, partition d / R */
  Rendezvous *rendezvous;
  const Executable *executable;
  HostBuffer *const *args;
  int arg_count;
  HostBuffer *result;
  Status st;
  NcclCliques *nccl;         /* a GPU run's communicators, else NULL */
} DeviceThread;

static int flattened_id(const EvalDevice *d) { return (int)(d->replica * d->partition_count + d->partition); }

/* Under the lock, when the last device has arrived (or ended): every device
 * must wait at the same instruction. */
static void rendezvous_open_round(Rendezvous *r) {
  const DeviceSlot *first = NULL;
  for (int f = 0; f < r->count && !r->broken; f++) {
    const DeviceSlot *s = &r->slots[f];
    if (!s->inst) {
      r->broken = true;
      snprintf(r->why, sizeof r->why, "device with flattened id %d ended its run while the others wait at a collective",
               f);
    } else if (!first) {
      first = s;
    } else if (strcmp(s->inst->name, first->inst->name) != 0 || s->inst->opcode != first->inst->opcode) {
      r->broken = true;
      snprintf(r->why, sizeof r->why, "devices reached different collectives: '%s' and '%s'", first->inst->name,
               s->inst->name);
    }
  }
  for (int f = 0; f < r->count; f++) r->all[f] = r->slots[f].operands;
  r->arrived = 0;
  r->reading = r->count;
  r->rounds_opened++;
  pthread_cond_broadcast(&r->changed);
}

static bool rendezvous_exchange(void *run, const EvalDevice *self, const Instruction *inst, Literal *const *operands,
                                Literal *const *const **all, Status *st) {
  Rendezvous *r = run;
  int f = flattened_id(self);
  pthread_mutex_lock(&r->lock);
  int64_t round = r->rounds_opened;
  if (!r->broken) {
    r->slots[f] = (DeviceSlot){.inst = inst, .operands = operands};
    if (++r->arrived + r->finished == r->count) rendezvous_open_round(r);
    while (r->rounds_opened == round && !r->broken) pthread_cond_wait(&r->changed, &r->lock);
  }
  bool ok = !r->broken;
  if (ok) *all = (Literal *const *const *)r->all;
  else status_error(st, STATUS_RUNTIME_ERROR, "%s %s: %s", opcode_name(inst->opcode), inst->name, r->why);
  pthread_mutex_unlock(&r->lock);
  return ok;
}

/* Every device reads the others' operands between exchange and here; the
 * last one lets all go on. */
static void rendezvous_exchange_done(void *run, const EvalDevice *self) {
  (void)self;
  Rendezvous *r = run;
  pthread_mutex_lock(&r->lock);
  int64_t round = r->rounds_opened;
  if (--r->reading == 0) {
    r->rounds_read = round;
    pthread_cond_broadcast(&r->changed);
  }
  while (r->rounds_read < round) pthread_cond_wait(&r->changed, &r->lock);
  pthread_mutex_unlock(&r->lock);
}

/* A device's run has ended: a failure breaks the rendezvous; a success
 * while others wait at a collective opens the round, which then breaks. */
static void rendezvous_finish(Rendezvous *r, const EvalDevice *self, int index, const Status *failure) {
  pthread_mutex_lock(&r->lock);
  r->finished++;
  r->slots[flattened_id(self)] = (DeviceSlot){0};
  if (failure && !r->broken) {
    r->broken = true;
    r->broken_by = index;
    snprintf(r->why, sizeof r->why, "device %d failed: %.400s", index, failure->message);
  } else if (r->arrived > 0 && r->arrived + r->finished == r->count) {
    rendezvous_open_round(r);
  }
  pthread_cond_broadcast(&r->changed);
  pthread_mutex_unlock(&r->lock);
}

/* A device's run is its thread's only work: out of memory in it unwinds to
 * here (ir.h, memory.c) and ends the device like any failure, so the others
 * do not wait for it at a collective. */
static void device_run_guarded(DeviceThread *t) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) {
    t->result = NULL;
    status_error(&t->st, STATUS_OUT_OF_MEMORY, "out of memory: %s%sneeds %zu bytes", scope.what,
                 scope.what[0] ? " " : "", scope.needed);
    return;
  }
  t->result = executable_run(t->executable, t->args, t->arg_count, &t->st);
  mem_scope_end(&scope);
}

static void *device_thread_main(void *arg) {
  DeviceThread *t = arg;
  status_clear(&t->st);
  eval_device_set(&t->device);
  device_run_guarded(t);
  eval_device_set(NULL);
  rendezvous_finish(t->rendezvous, &t->device, t->index, t->result ? NULL : &t->st);
  /* On GPUs the devices meet in NCCL, not at the rendezvous: a device that
   * failed aborts the communicators, so that no other waits for it. */
  if (!t->result) nccl_cliques_abort(t->nccl);
  return NULL;
}

DeviceSet *device_set_compile(const Module *m, const ExecutableOptions *o, Status *st) {
  int64_t replicas, partitions;
  if (!executable_device_counts(m, o->devices, &replicas, &partitions, st)) return NULL;
  /* On GPUs the collectives are NCCL's, over communicators the devices'
   * compiles make (src/emit_ptx/gpu_collective.c). */
  NcclCliques *nccl = o->backend == AXLE_BACKEND_GPU ? nccl_cliques_open(st) : NULL;
  if (o->backend == AXLE_BACKEND_GPU && !nccl) return NULL;
  DeviceSet *s = mem_calloc(1, sizeof *s);
  Executable **executables = mem_calloc((size_t)o->devices, sizeof *executables);
  if (!s || !executables) {
    mem_free(s);
    mem_free(executables);
    status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  *s = (DeviceSet){.count = o->devices, .replica_count = replicas, .partition_count = partitions,
                   .executables = executables, .nccl = nccl};
  ExecutableOptions each = *o;
  each.nccl = nccl;
  int threads = o->threads > 0 ? o->threads : thread_pool_default_count();
  each.threads = threads / o->devices > 1 ? threads / o->devices : 1;
  for (int d = 0; d < s->count; d++) {
    each.device_index = d;
    s->executables[d] = executable_compile(m, &each, st);
    if (!s->executables[d]) {
      device_set_free(s);
      return NULL;
    }
    each.opt.dump_dir[0] = 0;  /* device 0's compile wrote the dumps */
    each.opt.stats = false;
  }
  return s;
}

void device_set_free(DeviceSet *s) {
  if (!s) return;
  for (int d = 0; d < s->count; d++) executable_free(s->executables[d]);
  nccl_cliques_free(s->nccl);  /* after the programs that use them */
  mem_free(s->executables);
  mem_free(s);
}

/* The first device whose error is its own (not another device's failure
 * seen at a collective) names the run's error. */
static void device_set_error(const DeviceThread *threads, int count, const Rendezvous *r, Status *st) {
  int origin = r->broken_by;
  for (int d = 0; d < count && origin < 0; d++)
    if (!threads[d].result) origin = d;
  status_error(st, threads[origin].st.code, "device %d: %s", origin, threads[origin].st.message);
  st->file = threads[origin].st.file;
  st->loc = threads[origin].st.loc;
}

static bool device_threads_run(DeviceThread *threads, int count, Rendezvous *r) {
  pthread_t *ids = count > 0 ? mem_calloc((size_t)count, sizeof *ids) : NULL;
  int started = 0;
  for (; ids && started < count; started++)
    if (pthread_create(&ids[started], NULL, device_thread_main, &threads[started]) != 0) break;
  /* A device that could not start ends at once, so that none waits for it. */
  for (int d = started; d < count; d++) {
    status_error(&threads[d].st, STATUS_OUT_OF_MEMORY, "its thread could not be started");
    rendezvous_finish(r, &threads[d].device, d, &threads[d].st);
  }
  for (int d = 0; d < started; d++) pthread_join(ids[d], NULL);
  mem_free(ids);
  return started == count;
}

bool device_set_run(const DeviceSet *s, HostBuffer *const *args, int arg_count, HostBuffer **results, Status *st) {
  Rendezvous r = {.count = s->count, .broken_by = -1};
  DeviceThread *threads = mem_calloc((size_t)s->count, sizeof *threads);
  r.slots = mem_calloc((size_t)s->count, sizeof *r.slots);
  r.all = mem_calloc((size_t)s->count, sizeof *r.all);
  if (!threads || !r.slots || !r.all) {
    mem_free(threads);
    mem_free(r.slots);
    mem_free(r.all);
    return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  }
  pthread_mutex_init(&r.lock, NULL);
  pthread_cond_init(&r.changed, NULL);
  for (int d = 0; d < s->count; d++) {
    EvalDevice device = {.replica = d % s->replica_count, .partition = d / s->replica_count,
                         .replica_count = s->replica_count, .partition_count = s->partition_count,
                         .exchange = rendezvous_exchange, .exchange_done = rendezvous_exchange_done, .run = &r};
    threads[d] = (DeviceThread){.device = device, .index = d, .rendezvous = &r, .executable = s->executables[d],
                                .args = args + (size_t)d * (size_t)arg_count, .arg_count = arg_count,
                                .nccl = s->nccl};
  }
  device_threads_run(threads, s->count, &r);
  bool ok = true;
  for (int d = 0; d < s->count; d++) ok &= threads[d].result != NULL;
  if (!ok) device_set_error(threads, s->count, &r, st);
  for (int d = 0; d < s->count; d++) {
    if (ok) results[d] = threads[d].result;
    else host_buffer_free(threads[d].result);
  }
  pthread_mutex_destroy(&r.lock);
  pthread_cond_destroy(&r.changed);
  mem_free(threads);
  mem_free(r.slots);
  mem_free(r.all);
  return ok;
}
