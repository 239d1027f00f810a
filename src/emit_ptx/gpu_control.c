/* The GPU backend's control flow: while, conditional, call and the async
 * wrappers, driven from the host.
 *
 * A computation that these run (a loop's condition and body, a branch, a
 * call's to_apply, an async wrapper's computation) is compiled by the same
 * walk as the entry (backend_compile_steps, through the GPU's hooks in
 * c->backend), into a step list of its own
 * (GpuStep in gpu_program.h), from its program, the one the program stage
 * nested in the calling step (its kernels lowered there). Its storage comes
 * from that program's buffer plan, one of its own:
 *   parameters     the caller's bindings of the operand leaves, read only
 *                  (a plan never writes over a parameter)
 *   temporaries    the plan's offsets inside a region of the temporary
 *                  block kept for this computation alone
 *   root leaves    a scratch binding each (gpu_reserve_temp)
 *   constants      uploaded once, like the entry's
 * and then device-to-device copies move the root's leaves to where the
 * caller wants them. A loop keeps its state in the while's own leaves: the
 * init is copied in, the condition and the body read it, and after each
 * trip the body's result is copied over it. Each trip the host downloads
 * the pred (a synchronous copy of one byte) and decides; a conditional
 * downloads its index the same way. Every region is the computation's own,
 * never shared with another call site, so nothing is reused wrongly, at
 * the price of some device memory. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/gpu_compile.h"
#include "runtime/backend.h"

/* ---- leaves ---- */

static int64_t leaf_bytes(const Shape *s) { return s && !shape_is_tuple(s) ? shape_byte_size(s) : 0; }

/* The bindings of inst's leaves [first, first + count) into out; a leaf of
 * no bytes (a token, an empty array) may have no storage and gets an empty
 * binding. False after a refusal. */
static bool leaves_bind(GpuCompile *c, const Instruction *inst, int first, int count, int *out) {
  for (int l = 0; l < count; l++) {
    out[l] = gpu_binding_of(c, inst, first + l);
    if (out[l] >= 0) continue;
    if (leaf_bytes(shape_leaf_at(&inst->shape, first + l)) != 0)
      return gpu_refuse(c, inst, "a leaf the buffer plan does not place");
    out[l] = gpu_program_add_binding(c->p, (GpuBinding){.kind = GPU_BINDING_NONE}, NULL);
  }
  return true;
}

/* A copy of `bytes` from binding `from` to binding `to` at the end of list
 * (none when they are one binding or the leaf is empty). */
static bool copy_add(GpuCompile *c, GpuSteps *list, const Instruction *inst, int from, int to, int64_t bytes) {
  if (from == to || bytes == 0) return true;
  if (c->p->bindings[from].bytes < bytes || c->p->bindings[to].bytes < bytes)
    return gpu_refuse(c, inst, "a value copied between storage of different sizes");
  GpuStep *s = gpu_steps_add(list, GPU_STEP_COPY, inst);
  s->from = from;
  s->to = to;
  s->bytes = bytes;
  return true;
}

/* Copies leaves from[0..count) to inst's leaves [first, first + count). */
static bool copies_add(GpuCompile *c, GpuSteps *list, const Instruction *inst, const int *from, int first, int count) {
  int *to = mem_calloc((size_t)count + 1, sizeof *to);
  bool ok = leaves_bind(c, inst, first, count, to);
  for (int l = 0; l < count && ok; l++)
    ok = copy_add(c, list, inst, from[l], to[l], leaf_bytes(shape_leaf_at(&inst->shape, first + l)));
  mem_free(to);
  return ok;
}

/* Zeros into inst's leaves [first, first + count): an async start's context. */
static bool zeros_add(GpuCompile *c, GpuSteps *list, const Instruction *inst, int first, int count) {
  int *zeros = mem_calloc((size_t)count + 1, sizeof *zeros);
  for (int l = 0; l < count; l++) {
    int64_t bytes = leaf_bytes(shape_leaf_at(&inst->shape, first + l));
    GpuBinding b = {.kind = bytes ? GPU_BINDING_CONSTANT : GPU_BINDING_NONE, .bytes = bytes};
    zeros[l] = gpu_program_add_binding(c->p, b, bytes ? mem_calloc((size_t)bytes, 1) : NULL);
  }
  bool ok = copies_add(c, list, inst, zeros, first, count);
  mem_free(zeros);
  return ok;
}

/* The bindings of every leaf of inst's operands [lo, hi), in order, into a
 * new array (its length in *count). NULL after a refusal. */
static int *operand_leaves(GpuCompile *c, const Instruction *inst, int lo, int hi, int *count) {
  *count = 0;
  for (int k = lo; k < hi; k++) *count += shape_leaf_count(&inst->operands[k]->shape);
  int *out = mem_calloc((size_t)*count + 1, sizeof *out);
  for (int k = lo, at = 0; k < hi; k++) {
    int n = shape_leaf_count(&inst->operands[k]->shape);
    if (!leaves_bind(c, inst->operands[k], 0, n, out + at)) {
      mem_free(out);
      return NULL;
    }
    at += n;
  }
  return out;
}

/* ---- called computations ---- */

/* The GPU binding of each of the called program's slot bindings (its
 * plan's slots, in order); args are the caller's bindings of its
 * parameters' leaves, counted across its parameters as the stage counts
 * them. */
static bool called_bind(GpuCompile *inner, const int *args, int arg_count, int *slots) {
  const Program *program = inner->program;
  GpuProgram *p = inner->p;
  int64_t region = (p->temp_bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  if (p->temp_bytes < region + program->temp_bytes) p->temp_bytes = region + program->temp_bytes;
  for (int i = 0; i < program->plan->slot_count; i++) {
    const ProgramBinding *pb = &program->bindings[i];
    int64_t bytes = leaf_bytes(pb->shape);
    slots[i] = -1;
    if (pb->kind == BINDING_CONSTANT) {
      if ((slots[i] = gpu_bind_constant(inner, i)) < 0) return false;
    } else if (pb->kind == BINDING_PARAMETER) {
      if (pb->leaf < 0 || pb->leaf >= arg_count) return gpu_refuse(inner, pb->inst, "a parameter the caller does not pass");
      slots[i] = args[pb->leaf];
    } else if (pb->kind == BINDING_TEMP) {
      GpuBinding b = {.kind = bytes ? GPU_BINDING_TEMP : GPU_BINDING_NONE, .offset = region + pb->offset, .bytes = bytes};
      slots[i] = gpu_program_add_binding(p, b, NULL);
    } else if (pb->kind == BINDING_OUTPUT) {
      slots[i] = bytes ? gpu_reserve_temp(inner, bytes)
                       : gpu_program_add_binding(p, (GpuBinding){.kind = GPU_BINDING_NONE}, NULL);
    }
  }
  return true;
}

/* Compiles comp, called by inst, into `into`: its parameters' leaves are
 * the bindings args[0..arg_count); the bindings of its root's leaves come
 * back in results (as many as the root has). */
static bool called_compile(GpuCompile *c, const Instruction *inst, const Computation *comp, const int *args,
                           int arg_count, GpuSteps *into, int *results) {
  if (!comp || !comp->root) return gpu_refuse(c, inst, "a called computation without a root");
  /* comp's program: the one the program stage nested in inst's step */
  const ProgramStep *step = gpu_step_of(c, inst);
  const Program *program = step ? program_step_called(step, comp) : NULL;
  if (!program) return gpu_refuse(c, inst, "a called computation the program does not run");
  const BufferPlan *plan = program->plan;
  int *slots = mem_calloc((size_t)plan->slot_count + 1, sizeof *slots);
  GpuCompile inner = *c;
  inner.plan = plan;
  inner.program = program;
  inner.slot_bindings = slots;
  bool ok = called_bind(&inner, args, arg_count, slots);
  inner.step = NULL;
  GpuSteps *outer = c->p->current;
  c->p->current = into;
  /* the same walk as the entry's, through the hooks (backend_compile.c) */
  ok = ok && backend_compile_steps(c->backend, &inner, program, c->st);
  c->p->current = outer;
  if (ok) ok = leaves_bind(&inner, comp->root, 0, shape_leaf_count(&comp->root->shape), results);
  mem_free(slots);
  return ok;
}

/* Runs `callee` on all of inst's operands into `into` and copies its root
 * to inst's leaves [first, first + count): call and async-start (they fit:
 * program_control_refusal). */
static bool call_compile(GpuCompile *c, const Instruction *inst, const Computation *callee, GpuSteps *into, int first,
                         int count) {
  int arg_count = 0;
  int *args = operand_leaves(c, inst, 0, inst->operand_count, &arg_count);
  int *results = mem_calloc((size_t)count + 1, sizeof *results);
  bool ok = args && called_compile(c, inst, callee, args, arg_count, into, results) &&
            copies_add(c, into, inst, results, first, count);
  mem_free(args);
  mem_free(results);
  return ok;
}

/* ---- while ---- */

/* After a trip the body's root becomes the state. A root leaf that is
 * another leaf of the state (a loop that swaps two values) is saved to a
 * scratch first, so that no copy reads a leaf already overwritten. */
static bool body_result_copies(GpuCompile *c, const Instruction *inst, GpuSteps *body, const int *state,
                               const int *results, int n) {
  int *from = mem_calloc((size_t)n + 1, sizeof *from);
  bool ok = true;
  for (int l = 0; l < n && ok; l++) {
    from[l] = results[l];
    bool reads_state = false;
    for (int j = 0; j < n; j++) reads_state |= j != l && results[l] == state[j];
    int64_t bytes = leaf_bytes(shape_leaf_at(&inst->shape, l));
    if (!reads_state || bytes == 0) continue;
    from[l] = gpu_reserve_temp(c, bytes);
    ok = copy_add(c, body, inst, results[l], from[l], bytes);
  }
  if (ok) ok = copies_add(c, body, inst, from, 0, n);
  mem_free(from);
  return ok;
}

static bool compile_while(GpuCompile *c, const Instruction *inst) {
  int n = shape_leaf_count(&inst->shape), pred = -1;
  int *state = mem_calloc((size_t)n + 1, sizeof *state), *results = mem_calloc((size_t)n + 1, sizeof *results);
  GpuSteps *lists = mem_calloc(2, sizeof *lists);
  int init_count = 0;
  int *init = operand_leaves(c, inst, 0, 1, &init_count);
  bool ok = init && leaves_bind(c, inst, 0, n, state) && copies_add(c, c->p->current, inst, init, 0, n) &&
            called_compile(c, inst, inst->called[0], state, n, &lists[0], &pred) &&
            called_compile(c, inst, inst->called[1], state, n, &lists[1], results) &&
            body_result_copies(c, inst, &lists[1], state, results, n);
  if (ok) {
    GpuStep *s = gpu_steps_add(c->p->current, GPU_STEP_WHILE, inst);
    s->selector = pred;
    s->list_count = 2;
    s->lists = lists;
  } else {
    gpu_steps_free(&lists[0]);
    gpu_steps_free(&lists[1]);
    mem_free(lists);
  }
  mem_free(init);
  mem_free(state);
  mem_free(results);
  return ok;
}

/* ---- conditional ---- */

/* (branch k runs on operand k + 1 and its root is copied to inst's leaves;
 * they fit: program_control_refusal) */
static bool branch_compile(GpuCompile *c, const Instruction *inst, int k, GpuSteps *into) {
  const Computation *branch = inst->called[k];
  int arg_count = 0, n = shape_leaf_count(&inst->shape);
  int *args = operand_leaves(c, inst, k + 1, k + 2, &arg_count);
  int *results = mem_calloc((size_t)n + 1, sizeof *results);
  bool ok = args && called_compile(c, inst, branch, args, arg_count, into, results) &&
            copies_add(c, into, inst, results, 0, n);
  mem_free(args);
  mem_free(results);
  return ok;
}

static bool compile_conditional(GpuCompile *c, const Instruction *inst) {
  int count = inst->called_count;
  bool is_pred = inst->operands[0]->shape.type == TYPE_PRED;
  int selector = gpu_binding_of(c, inst->operands[0], 0);
  if (selector < 0) return gpu_refuse(c, inst, "a branch index the plan does not place");
  GpuSteps *lists = mem_calloc((size_t)count, sizeof *lists);
  bool ok = true;
  for (int k = 0; k < count && ok; k++) ok = branch_compile(c, inst, k, &lists[k]);
  if (!ok) {
    for (int k = 0; k < count; k++) gpu_steps_free(&lists[k]);
    mem_free(lists);
    return false;
  }
  GpuStep *s = gpu_steps_add(c->p->current, GPU_STEP_CONDITIONAL, inst);
  s->selector = selector;
  s->selector_is_pred = is_pred;
  s->list_count = count;
  s->lists = lists;
  return true;
}

/* ---- async wrappers ----
 * One stream runs everything in order, so the pair runs at once: the
 * start runs the wrapped computation into element 1 of its tuple, the
 * operands go to element 0 and zeros to the context elements after; an
 * update hands the tuple on and the done takes element 1. */

static bool compile_async_start(GpuCompile *c, const Instruction *inst) {
  const Shape *s = &inst->shape;
  int result_first = shape_element_first_leaf(s, 1), context_first = shape_element_first_leaf(s, 2);
  int operand_count = 0;
  int *operands = operand_leaves(c, inst, 0, inst->operand_count, &operand_count);
  if (!operands) return false;
  bool ok = copies_add(c, c->p->current, inst, operands, 0, operand_count) &&
       call_compile(c, inst, inst->called[0], c->p->current, result_first, context_first - result_first) &&
       zeros_add(c, c->p->current, inst, context_first, shape_leaf_count(s) - context_first);
  mem_free(operands);
  return ok;
}

/* async-update: all the leaves; a done: one element of the start's tuple
 * (the copy table's `element`; the operand is a start's tuple whose
 * element fits the result: program_copy_refusal). */
static bool compile_from_start(GpuCompile *c, const Instruction *inst, int element) {
  const Instruction *start = inst->operands[0];
  int first = element >= 0 ? shape_element_first_leaf(&start->shape, element) : 0, n = shape_leaf_count(&inst->shape);
  int *from = mem_calloc((size_t)n + 1, sizeof *from);
  bool ok = leaves_bind(c, start, first, n, from) && copies_add(c, c->p->current, inst, from, 0, n);
  mem_free(from);
  return ok;
}

/* ---- collectives of one replica, and the ops that only order work ----
 * add-dependency, domain and opt-barrier hand their operand on, and so does
 * set-dimension-size on a static shape. One device
 * runs one replica, so a collective hands its operand on (an
 * all-reduce of one value is the value); the start/done pairs run at
 * once, like the async wrappers. The evaluator (src/ir/eval/eval_async.c)
 * defines each; the CPU backend's cpu_compile_forward does the same. */

/* inst's leaves [to_leaf, to_leaf + count) are the leaves of its operands
 * from operand `first` on, in order, each in the same shape and layout. */
/* (that they are: program_forward_refusal) */
static bool forward_operands(GpuCompile *c, const Instruction *inst, int first, int to_leaf, int count) {
  for (int k = first; k < inst->operand_count && count > 0; k++) {
    const Instruction *op = inst->operands[k];
    int n = shape_leaf_count(&op->shape);
    if (n > count) n = count;
    int *leaves = mem_calloc((size_t)n + 1, sizeof *leaves);
    bool ok = leaves_bind(c, op, 0, n, leaves) && copies_add(c, c->p->current, inst, leaves, to_leaf, n);
    mem_free(leaves);
    if (!ok) return false;
    to_leaf += n;
    count -= n;
  }
  return true;
}

/* The collectives run across GPUs: a step of a run over several devices
 * (the program stage's kind, decided by the run's device count). */
static bool runs_across(const GpuCompile *c, const Instruction *inst) {
  return c->step->kind == PROGRAM_STEP_COLLECTIVE && gpu_collective_is_across(inst->opcode);
}

/* A start's tuple: the operand in element 0, the result in element 1
 * (the operand again, or zeros for a permute that sends nothing to
 * replica 0), zeros in the context elements after. */
/* (its form and the replicas it sends to: program_copy_refusal, start_across_refusal) */
static bool compile_collective_start(GpuCompile *c, const Instruction *inst) {
  const Shape *s = &inst->shape;
  int result_first = shape_element_first_leaf(s, 1), context_first = shape_element_first_leaf(s, 2);
  int result_count = context_first - result_first;
  bool ok = zeros_add(c, c->p->current, inst, context_first, shape_leaf_count(s) - context_first) &&
            forward_operands(c, inst, 0, 0, result_first);
  if (ok && c->step->kind == PROGRAM_STEP_COLLECTIVE && inst->opcode != OP_COPY_START)
    return gpu_compile_collective_across(c, inst, result_first);
  if (!ok || inst->opcode != OP_COLLECTIVE_PERMUTE_START) return ok && forward_operands(c, inst, 0, result_first, result_count);
  return inst->attrs.source_target_pairs.count ? forward_operands(c, inst, 0, result_first, result_count)
                      : zeros_add(c, c->p->current, inst, result_first, result_count);
}

/* replica-id and partition-id across GPUs: each device has its own
 * program, so its ids are constants. */
static bool device_id_add(GpuCompile *c, const Instruction *inst) {
  uint32_t *id = mem_calloc(1, sizeof *id);
  *id = (uint32_t)(inst->opcode == OP_REPLICA_ID ? c->replica : c->partition);
  int from = gpu_program_add_binding(c->p, (GpuBinding){.kind = GPU_BINDING_CONSTANT, .bytes = sizeof *id}, id);
  return copies_add(c, c->p->current, inst, &from, 0, 1);
}

/* get-dimension-size on a static shape: the size, from a constant. */
static bool compile_dimension_size(GpuCompile *c, const Instruction *inst) {
  int32_t *size = mem_calloc(1, sizeof *size);
  *size = (int32_t)inst->operands[0]->shape.dims[inst->attrs.dimensions.values[0]];
  int from = gpu_program_add_binding(c->p, (GpuBinding){.kind = GPU_BINDING_CONSTANT, .bytes = sizeof *size}, size);
  return copies_add(c, c->p->current, inst, &from, 0, 1);
}

/* dynamic-reshape on static shapes is a reshape: with both sides
 * row-major the bytes stay in order (program_copy_refusal). */
static bool compile_dynamic_reshape(GpuCompile *c, const Instruction *inst) {
  int source = -1;
  return leaves_bind(c, inst->operands[0], 0, 1, &source) && copies_add(c, c->p->current, inst, &source, 0, 1);
}

/* A copy step (or a collective step across GPUs), by its form in the
 * program stage's table of copies (program_copy_op). */
static bool compile_copy(GpuCompile *c, const Instruction *inst) {
  int leaves = shape_leaf_count(&inst->shape);
  if (runs_across(c, inst)) return gpu_compile_collective_across(c, inst, 0);
  const ProgramCopyOp *copy = program_copy_op(inst->opcode);
  switch (copy ? copy->form : PROGRAM_COPY_FORWARD) {
  case PROGRAM_COPY_FROM_START: return compile_from_start(c, inst, copy->element);
  case PROGRAM_COPY_START: return compile_collective_start(c, inst);
  case PROGRAM_COPY_PERMUTE:
    return inst->attrs.source_target_pairs.count ? forward_operands(c, inst, 0, 0, leaves)
                                                 : zeros_add(c, c->p->current, inst, 0, leaves);
  case PROGRAM_COPY_NOTHING: return true;  /* a token: no storage */
  case PROGRAM_COPY_DEVICE_ID:
    if (c->step->kind == PROGRAM_STEP_COLLECTIVE) return device_id_add(c, inst);
    return zeros_add(c, c->p->current, inst, 0, leaves);  /* replica 0 of 1 */
  case PROGRAM_COPY_DIMENSION_SIZE: return compile_dimension_size(c, inst);
  case PROGRAM_COPY_DYNAMIC_RESHAPE: return compile_dynamic_reshape(c, inst);
  case PROGRAM_COPY_FORWARD: return forward_operands(c, inst, 0, 0, leaves);
  }
  return true;
}

bool gpu_compile_control(GpuCompile *c, const Instruction *inst) {
  switch (inst->opcode) {
  case OP_WHILE: return compile_while(c, inst);
  case OP_CONDITIONAL: return compile_conditional(c, inst);
  case OP_CALL:
  case OP_FUSION:  /* one that no kernel computes (gpu_backend.c) */
    return call_compile(c, inst, inst->called[0], c->p->current, 0, shape_leaf_count(&inst->shape));
  case OP_ASYNC_START: return compile_async_start(c, inst);
  default: return compile_copy(c, inst);
  }
}

/* ---- what the GPU refuses of the collectives across GPUs ----
 * What no copy can make (a forward into another layout, a permute between
 * replicas when one runs, a dynamic-reshape between layouts) the program
 * stage refused for every target (program_copy_refusal); what is the
 * GPU's own is a step of a run over several devices: the exchanges are
 * gpu_collective.c's, replica-id and partition-id its constants. */

/* A start's operand goes to element 0; across GPUs the exchange fills
 * element 1 (gpu_collective.c). */
static const char *start_across_refusal(const Instruction *inst) {
  const char *why = program_start_form_refusal(inst);
  if (why) return why;
  int result_first = shape_element_first_leaf(&inst->shape, 1);
  if ((why = program_forward_refusal(inst, 0, 0, result_first))) return why;
  return gpu_collective_refusal(inst, result_first);
}

/* Devices could take different branches, and NCCL would wait for ever for
 * a device that never comes: XLA would deadlock there too. */
static const char *exchange_refusal(const Program *program) {
  return program->in_conditional_branch ? "a collective across GPUs inside a conditional's branch (devices may take "
                                          "different branches, and NCCL would wait for ever)"
                                        : NULL;
}

const char *gpu_collective_step_refusal(const Program *program, const ProgramStep *step) {
  const Instruction *inst = step->inst;
  const char *why = NULL;
  if (gpu_collective_is_across(inst->opcode))
    return (why = exchange_refusal(program)) ? why : gpu_collective_refusal(inst, 0);
  switch (inst->opcode) {
  case OP_ALL_GATHER_START:
  case OP_COLLECTIVE_PERMUTE_START:
    return (why = exchange_refusal(program)) ? why : start_across_refusal(inst);
  case OP_REPLICA_ID:
  case OP_PARTITION_ID:
    return inst->shape.type != TYPE_U32 || inst->shape.rank != 0 ? "an id that is not u32[]" : NULL;
  default: return NULL;
  }
}
