/* Watching a GPU run (gpu_program.h): axle-run --check and --find-nan
 * through the program's own steps.
 *
 * The observer (src/runtime/executable_debug.c) is one for every backend:
 * it wants the value of each entry instruction once that value is whole,
 * leaf by leaf, in the layout the backend holds it. On the GPU values live
 * in device memory, so the watch copies them back. An instruction may take
 * several steps (a GEMM and its epilogue, the passes of a sort, a call's
 * copies after its callee's steps), so its value is shown after its last
 * step in the entry's list: each leaf's bytes are downloaded from the
 * binding that holds them (an alias slot's from its source's) and handed
 * to the observer. The download waits for the stream, so the bytes are the
 * ones the kernels wrote, and a kernel that failed is reported here, at
 * its instruction. A run without an observer takes no watch and copies
 * back only its result. */
#include <string.h>

#include "emit_ptx/gpu_program.h"

typedef struct GpuObservation {
  GpuWatch watch;          /* first: step_watch is handed it back */
  const BufferPlan *plan;  /* the entry's */
  bool *last;              /* per step of p->steps: the last of its instruction */
  StepObserver *observe;
  void *context;
} GpuObservation;

/* The binding that holds slot's bytes: the slot's own, or for an alias
 * (a bitcast, a get-tuple-element) its source's. The entry's bindings
 * 0.. are its plan's slots, in order. NULL where nothing holds them. */
static const GpuBinding *slot_binding(const BufferPlan *plan, const GpuProgram *p, const BufferSlot *slot) {
  for (int hops = 0; slot && slot->kind == BUFFER_ALIAS && hops < plan->slot_count; hops++)
    slot = buffer_plan_find(plan, slot->source, slot->source_index);
  if (!slot || slot->kind == BUFFER_ALIAS) return NULL;
  int at = (int)(slot - plan->slots);
  return at < p->binding_count ? &p->bindings[at] : NULL;
}

/* A download that failed (or a kernel before it that did) names what it
 * was for, at the instruction's line (a fusion the optimizer made at the
 * line of the value it computes). */
static bool download_fail(const GpuProgram *p, const Instruction *inst, Status *st) {
  char message[sizeof st->message];
  snprintf(message, sizeof message, "%s", st->message);
  SourceLoc loc = instruction_source_loc(inst);
  return status_error_at(st, st->code, p->filename, loc, "%s (copying the value of %s to the host to watch it)",
                         message, inst->name);
}

/* Copies inst's leaves to the host and shows them to the observer. A
 * leaf's shape is its slot's (the layout the kernels wrote), or the
 * parameter layout the device holds an argument in. */
static bool instruction_show(const GpuObservation *o, GpuProgram *p, const Instruction *inst, Status *st) {
  enum { MAX_SHOWN = 256 };
  ObservedLeaf leaves[MAX_SHOWN];
  void *copies[MAX_SHOWN];
  int n = 0;
  bool ok = true;
  for (const BufferSlot *slot; ok && n < MAX_SHOWN && (slot = buffer_plan_find(o->plan, inst, n)); n++) {
    const GpuBinding *b = slot_binding(o->plan, p, slot);
    const Shape *shape = b && b->layout ? b->layout : slot->shape;
    leaves[n] = (ObservedLeaf){.shape = shape, .data = NULL};
    copies[n] = NULL;
    if (!b || b->bytes == 0 || !b->address) continue;
    int64_t whole = shape_is_tuple(shape) ? 0 : shape_byte_size(shape);
    copies[n] = mem_calloc((size_t)(whole > b->bytes ? whole : b->bytes), 1);
    leaves[n].data = copies[n];
    ok = gpu_copy_to_host(&p->gpu, copies[n], b->address, (size_t)b->bytes, st) || download_fail(p, inst, st);
  }
  ok = ok && o->observe(o->context, inst, leaves, n, st);
  for (int i = 0; i < n; i++) mem_free(copies[i]);
  return ok;
}

static bool step_watch(const GpuWatch *watch, GpuProgram *p, int index, Status *st) {
  const GpuObservation *o = (const GpuObservation *)watch;
  if (!o->last[index]) return true;
  return instruction_show(o, p, p->steps.steps[index].inst, st);
}

HostBuffer *gpu_program_run_observed(GpuProgram *p, const BufferPlan *plan, HostBuffer *const *args,
                                     StepObserver *observe, void *context, Status *st) {
  if (!observe) return gpu_program_run_watched(p, args, NULL, st);
  GpuObservation o = {.watch = {.after_step = step_watch}, .plan = plan, .observe = observe, .context = context};
  /* From the end: an entry instruction's last step is the first met.
   * Steps of a callee's instructions (a call runs them in the entry's
   * list) are not the entry's to show. */
  const Computation *entry = plan->computation;
  o.last = mem_calloc((size_t)p->steps.count + 1, sizeof *o.last);
  bool *seen = mem_calloc((size_t)entry->instruction_count + 1, sizeof *seen);
  for (int i = p->steps.count - 1; i >= 0; i--) {
    const Instruction *inst = p->steps.steps[i].inst;
    if (!inst || inst->parent != entry || seen[inst->index]) continue;
    o.last[i] = seen[inst->index] = true;
  }
  mem_free(seen);
  HostBuffer *result = gpu_program_run_watched(p, args, &o.watch, st);
  mem_free(o.last);
  return result;
}
