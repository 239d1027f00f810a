/* The compile every target shares (backend.h): the program stage's
 * Program of the module, every refusal decided in one walk over it before
 * any code is made, then the target's hooks, step by step.
 *
 * A target refuses what it does not support in its supports hook; what
 * the program stage could not make (a packed layout, a kernel the lowering
 * refuses) is recorded on the binding or step and refused here with that
 * reason, for every target alike. The emitters the hooks call keep only
 * what they find they cannot encode. This file calls the targets through
 * their tables only, so the walk sits below every backend's files. */
#include "runtime/backend.h"

static bool refuse(const Backend *b, const Module *m, const Instruction *inst, const char *why, Status *st) {
  return backend_refuse(st, m, inst, b->title, why, b->refusal_hint);
}

/* The one walk of refusals: p's storage, then each step in order (the
 * target's word first, then what the stage could not make of it), a step
 * that runs programs of its own followed by theirs (depth first, the order
 * the steps compile in). */
static bool program_check(const Backend *b, const Module *m, const Program *p, Status *st) {
  for (int i = 0; i < p->plan->slot_count; i++)
    if (p->bindings[i].unsupported) return refuse(b, m, p->bindings[i].inst, p->bindings[i].unsupported, st);
  if (p->unsupported) return refuse(b, m, p->computation->root, p->unsupported, st);
  for (int i = 0; i < p->step_count; i++) {
    const ProgramStep *s = &p->steps[i];
    StepReason why = {0};
    if (!b->supports(p, s, &why)) return refuse(b, m, s->inst, why.text, st);
    if (s->unsupported) return refuse(b, m, s->inst, s->unsupported, st);
    for (int k = 0; k < s->buffer_count; k++)
      if (s->buffers[k] >= 0 && p->bindings[s->buffers[k]].unsupported)
        return refuse(b, m, s->inst, p->bindings[s->buffers[k]].unsupported, st);
    for (int k = 0; k < s->called_count; k++)
      if (!program_check(b, m, s->called[k], st)) return false;
  }
  return true;
}

bool backend_compile_steps(const Backend *b, void *target, const Program *p, Status *st) {
  (void)st;  /* each hook reports through its target's status */
  for (int i = 0; i < p->step_count; i++) {
    const ProgramStep *s = &p->steps[i];
    bool ok = false;
    switch (s->kind) {
    case PROGRAM_STEP_KERNEL: ok = b->compile_kernel(target, s); break;
    case PROGRAM_STEP_PRODUCT: ok = b->compile_product(target, s); break;
    case PROGRAM_STEP_ROUTINE:
    case PROGRAM_STEP_COPY:
    case PROGRAM_STEP_COLLECTIVE:
      ok = b->compile_routine(target, s);
      break;
    case PROGRAM_STEP_WHILE:
    case PROGRAM_STEP_CONDITIONAL:
    case PROGRAM_STEP_CALL:
      ok = b->compile_control(target, s);
      break;
    }
    if (!ok) return false;
  }
  return true;
}

bool backend_compile(const Backend *b, const Module *m, const BufferPlan *plan, const BackendOptions *o,
                     void **program, Status *st) {
  *program = NULL;
  if (b->begin && !plan)
    return status_error(st, STATUS_UNSUPPORTED, "the %s backend compiles optimized modules only (drop --no-opt)",
                        b->title);
  if (!eval_check_supported_on(m, o->replica_count, o->partition_count, st)) return false;
  if (!b->begin) return true;  /* the interpreter runs the module itself */
  ProgramOptions options = {.across_devices = o->replica_count * o->partition_count > 1};
  Program *p = program_build(m, plan, &options);
  if (!program_check(b, m, p, st)) {
    program_free(p);
    return false;
  }
  void *target = b->begin(m, p, o, st);
  if (!target) return false;
  bool compiled = backend_compile_steps(b, target, p, st);
  *program = b->load(target, compiled, st);
  return *program != NULL;
}
