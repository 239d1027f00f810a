/* The CPU backend's control flow, and the ops that only move values.
 *
 * while, conditional, call and async-start run other computations. Each
 * called computation is compiled into a CpuProgram of its own by the same
 * walk as the entry (cpu_compile_called), and a CPU_STEP_CALL routine runs
 * it on the caller's storage: parameters and results are passed as leaf
 * addresses, so no value goes through a host buffer. A loop keeps its state
 * in the while's own leaves and in a scratch block of the same shape, the
 * body reading one and writing the other, trip after trip.
 *
 * On one replica the collectives are identities (all-reduce of one value is
 * the value), and the asynchronous pairs run at once: the start holds
 * (operands, result, context) and the done hands the result on. Those, the
 * wrappers that only order work (add-dependency, domain, opt-barrier) and
 * the size ops on static shapes become leaf copies, from an operand or from
 * a constant the program holds (replica-id is 0, get-dimension-size is the
 * static size). The evaluator (src/ir/eval/eval_async.c) defines each. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"

/* ---- leaves ---- */

/* The array leaves of s, depth first, at out[*n...]. */
static void shape_leaves(const Shape *s, const Shape **out, int *n) {
  if (!shape_is_tuple(s)) {
    out[(*n)++] = s;
    return;
  }
  for (int i = 0; i < s->tuple_count; i++) shape_leaves(&s->tuple_shapes[i], out, n);
}

/* The binding of inst's leaf; a leaf of no bytes (a token, an empty array)
 * may have no storage and gets an empty binding. -1 after a refusal. */
static int leaf_binding(CpuCompile *c, const Instruction *inst, int leaf, const Shape *shape) {
  int b = cpu_binding_of(c, inst, leaf);
  if (b >= 0) return b;
  if (shape_buffer_byte_size(shape) == 0) {
    CpuBinding none = {.kind = BINDING_NONE};
    return cpu_program_add_binding(c->p, &none);
  }
  cpu_refuse(c, inst, "a leaf the buffer plan does not place");
  return -1;
}

/* ---- leaf copies: forwards, identities and constants ---- */

/* What a copy step does: copy i moves bytes[i] from buffer 2i to 2i+1. */
typedef struct LeafCopies {
  int count, capacity;
  int64_t *bytes;
  int *bindings;
} LeafCopies;

static void leaf_copies_free(void *state) {
  LeafCopies *lc = state;
  if (!lc) return;
  mem_free(lc->bytes);
  mem_free(lc->bindings);
  mem_free(lc);
}

static bool leaf_copies_run(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)pool, (void)st;
  const LeafCopies *lc = s->state;
  for (int i = 0; i < lc->count; i++)
    if (lc->bytes[i] > 0 && buffers[2 * i] != buffers[2 * i + 1])
      memmove(buffers[2 * i + 1], buffers[2 * i], (size_t)lc->bytes[i]);
  return true;
}

bool cpu_leaf_copies_parts(const CpuStep *s, int *count, const int64_t **bytes) {
  if (s->kind != CPU_STEP_CALL || s->call != leaf_copies_run) return false;
  const LeafCopies *lc = s->state;
  *count = lc->count;
  *bytes = lc->bytes;
  return true;
}

static void leaf_copies_add(LeafCopies *lc, int from, int to, int64_t bytes) {
  if (bytes <= 0) return;
  if (lc->count == lc->capacity) {
    lc->capacity = lc->capacity ? 2 * lc->capacity : 8;
    lc->bytes = mem_realloc(lc->bytes, (size_t)lc->capacity * sizeof *lc->bytes);
    lc->bindings = mem_realloc(lc->bindings, (size_t)lc->capacity * 2 * sizeof *lc->bindings);
  }
  lc->bytes[lc->count] = bytes;
  lc->bindings[2 * lc->count] = from;
  lc->bindings[2 * lc->count + 1] = to;
  lc->count++;
}

/* The step that makes the copies (none: no step); lc becomes its state. */
static bool leaf_copies_emit(CpuCompile *c, const Instruction *inst, LeafCopies *lc) {
  if (lc->count == 0) {
    leaf_copies_free(lc);
    return true;
  }
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, 2 * lc->count);
  memcpy(s->buffers, lc->bindings, (size_t)(2 * lc->count) * sizeof *s->buffers);
  s->call = leaf_copies_run;
  s->state = lc;
  s->free_state = leaf_copies_free;
  return true;
}

/* A constant binding holding `bytes` bytes of data (zeros when data is NULL). */
static int constant_binding(CpuCompile *c, const void *data, int64_t bytes) {
  CpuBinding b = {.kind = BINDING_CONSTANT, .data = mem_calloc((size_t)bytes + 1, 1), .bytes = bytes};
  if (data) memcpy(b.data, data, (size_t)bytes);
  return cpu_program_add_binding(c->p, &b);
}

/* ---- where a forward's leaves come from ----
 * What a copy can make was decided by the program stage for every target
 * (program_copy_refusal in src/opt/program_refusal.c, before any code is
 * made): each leaf from an operand's leaf of the same shape and layout,
 * zeros or a static size. cpu_compile_forward only lists and binds them. */

/* One leaf of inst's value and the bytes that make it. */
typedef struct LeafSource {
  enum { SOURCE_ZEROS, SOURCE_LEAF, SOURCE_SIZE } kind;
  int to_leaf;
  const Instruction *from;  /* SOURCE_LEAF: from's leaf from_leaf */
  int from_leaf;
  int32_t size;             /* SOURCE_SIZE: this s32 value */
} LeafSource;

/* The sources of inst's leaves, at most one a leaf. */
typedef struct LeafSources {
  const Instruction *inst;
  const Shape **to_shapes;
  LeafSource *at;
  int count;
} LeafSources;

static void sources_add(LeafSources *ls, LeafSource s) { ls->at[ls->count++] = s; }

/* `count` leaves of `from` (starting at from_leaf) to inst's leaves
 * starting at to_leaf; a NULL `from` fills them with zeros. A leaf of no
 * bytes needs no source. */
static void sources_add_leaves(LeafSources *ls, int to_leaf, const Instruction *from, int from_leaf, int count) {
  for (int i = 0; i < count; i++) {
    if (shape_buffer_byte_size(ls->to_shapes[to_leaf + i]) == 0) continue;
    if (!from) sources_add(ls, (LeafSource){.kind = SOURCE_ZEROS, .to_leaf = to_leaf + i});
    else sources_add(ls, (LeafSource){.kind = SOURCE_LEAF, .to_leaf = to_leaf + i, .from = from, .from_leaf = from_leaf + i});
  }
}

/* inst's leaves, in order, are the leaves of its operands, in order:
 * forwards and the collectives of one replica. */
static void sources_add_operands(LeafSources *ls, int to_leaf, int count) {
  const Instruction *inst = ls->inst;
  for (int k = 0; k < inst->operand_count && count > 0; k++) {
    int n = shape_leaf_count(&inst->operands[k]->shape);
    if (n > count) n = count;
    sources_add_leaves(ls, to_leaf, inst->operands[k], 0, n);
    to_leaf += n;
    count -= n;
  }
}

/* Zeros for the context elements of a start's tuple (elements 2...). */
static void sources_add_context(LeafSources *ls) {
  const Shape *s = &ls->inst->shape;
  int first = shape_element_first_leaf(s, 2);
  sources_add_leaves(ls, first, NULL, 0, shape_leaf_count(s) - first);
}

/* The sources of inst's leaves, by its form in the program stage's table
 * of copies (program_copy_op). */
static void sources_add_instruction(LeafSources *ls) {
  const Instruction *inst = ls->inst;
  const Shape *s = &inst->shape;
  int leaves = shape_leaf_count(s);
  const ProgramCopyOp *copy = program_copy_op(inst->opcode);
  switch (copy ? copy->form : PROGRAM_COPY_FORWARD) {
  case PROGRAM_COPY_FROM_START: {
    const Instruction *start = inst->operands[0];
    int first = copy->element < 0 ? 0 : shape_element_first_leaf(&start->shape, copy->element);
    sources_add_leaves(ls, 0, start, first, leaves);
    return;
  }
  case PROGRAM_COPY_START: {
    /* one replica: the operands in element 0 and again in element 1 (a
     * permute that sends nothing to replica 0: zeros) */
    sources_add_context(ls);
    int first_result = shape_element_first_leaf(s, 1), after = shape_element_first_leaf(s, 2);
    sources_add_operands(ls, 0, first_result);
    if (inst->opcode == OP_COLLECTIVE_PERMUTE_START && inst->attrs.source_target_pairs.count == 0)
      sources_add_leaves(ls, first_result, NULL, 0, after - first_result);
    else sources_add_operands(ls, first_result, after - first_result);
    return;
  }
  case PROGRAM_COPY_PERMUTE:
    if (inst->attrs.source_target_pairs.count == 0) sources_add_leaves(ls, 0, NULL, 0, leaves);
    else sources_add_operands(ls, 0, leaves);
    return;
  case PROGRAM_COPY_DEVICE_ID:
    sources_add_leaves(ls, 0, NULL, 0, leaves);  /* replica 0 of 1 */
    return;
  case PROGRAM_COPY_DIMENSION_SIZE: {
    const Shape *of = &inst->operands[0]->shape;
    sources_add(ls, (LeafSource){.kind = SOURCE_SIZE, .size = (int32_t)of->dims[inst->attrs.dimensions.values[0]]});
    return;
  }
  case PROGRAM_COPY_DYNAMIC_RESHAPE:
    /* on static shapes, both sides row-major: the bytes stay where they are */
    sources_add(ls, (LeafSource){.kind = SOURCE_LEAF, .from = inst->operands[0]});
    return;
  case PROGRAM_COPY_NOTHING:
    return;
  case PROGRAM_COPY_FORWARD:
    /* forwards of the operands and the one-replica identities */
    sources_add_operands(ls, 0, leaves);
    return;
  }
}

/* ls, ready for inst's sources (freed by sources_free). */
static void sources_begin(const Instruction *inst, LeafSources *ls) {
  int leaves = shape_leaf_count(&inst->shape), n = 0;
  *ls = (LeafSources){.inst = inst, .to_shapes = mem_calloc((size_t)leaves + 1, sizeof *ls->to_shapes),
                      .at = mem_calloc((size_t)leaves + 1, sizeof *ls->at)};
  shape_leaves(&inst->shape, ls->to_shapes, &n);
}

static void sources_free(LeafSources *ls) {
  mem_free(ls->to_shapes);
  mem_free(ls->at);
}

/* An async-start's leaves that its computation does not write: the
 * operands (one as it is, more as a tuple) in element 0, zeros after
 * element 1. */
static void async_start_sources(LeafSources *ls) {
  sources_add_context(ls);
  sources_add_operands(ls, 0, shape_element_first_leaf(&ls->inst->shape, 1));
}

/* The binding a source's bytes come from; -1 after a refusal. */
static int source_binding(CpuCompile *c, const LeafSource *s, const Shape *to_shape) {
  switch (s->kind) {
  case SOURCE_ZEROS: return constant_binding(c, NULL, shape_buffer_byte_size(to_shape));
  case SOURCE_SIZE: return constant_binding(c, &s->size, sizeof s->size);
  default: return leaf_binding(c, s->from, s->from_leaf, to_shape);
  }
}

/* The copy step that makes ls's leaves (freeing ls). */
static bool sources_emit(CpuCompile *c, LeafSources *ls) {
  LeafCopies *lc = mem_calloc(1, sizeof *lc);
  bool ok = true;
  for (int i = 0; i < ls->count && ok; i++) {
    const LeafSource *s = &ls->at[i];
    const Shape *to_shape = ls->to_shapes[s->to_leaf];
    int to = leaf_binding(c, ls->inst, s->to_leaf, to_shape), from = to < 0 ? -1 : source_binding(c, s, to_shape);
    ok = to >= 0 && from >= 0;
    if (ok) leaf_copies_add(lc, from, to, shape_buffer_byte_size(to_shape));
  }
  sources_free(ls);
  if (!ok) {
    leaf_copies_free(lc);
    return false;
  }
  return leaf_copies_emit(c, ls->inst, lc);
}

bool cpu_compile_forward(CpuCompile *c, const Instruction *inst) {
  LeafSources ls;
  sources_begin(inst, &ls);
  sources_add_instruction(&ls);
  return sources_emit(c, &ls);
}

/* ---- running called computations ---- */

/* A step that runs one of `count` programs (a conditional's branches; one
 * for call and async-start). Its buffers: the branch index (when count > 1),
 * then each program's parameter leaves (program i's start at first[i]),
 * then the result leaves (at first[count]). */
typedef struct CalledPrograms {
  int count;
  CpuProgram **programs;
  int *first;
  bool index_is_pred;
} CalledPrograms;

static void called_programs_free(void *state) {
  CalledPrograms *cp = state;
  if (!cp) return;
  for (int i = 0; i < cp->count; i++) cpu_program_free(cp->programs[i]);
  mem_free(cp->programs);
  mem_free(cp->first);
  mem_free(cp);
}

/* conditional: a pred picks branch 0 when true; an s32 index out of
 * [0, count) runs the last branch, as XLA does. */
static int branch_pick(const CalledPrograms *cp, const void *index) {
  if (cp->count == 1) return 0;
  if (cp->index_is_pred) return *(const uint8_t *)index ? 0 : 1;
  int32_t i = *(const int32_t *)index;
  return i < 0 || i >= cp->count ? cp->count - 1 : i;
}

static bool called_programs_run(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  const CalledPrograms *cp = s->state;
  int k = branch_pick(cp, buffers[0]);
  CpuFrame frame;
  if (!cpu_frame_create(&frame, cp->programs[k], st)) return false;
  bool ok = cpu_frame_run(&frame, buffers + cp->first[k], buffers + cp->first[cp->count], pool, st);
  cpu_frame_free(&frame);
  return ok;
}

/* The program stage's binding of leaf `leaf` of v, the step's instruction
 * or one of its operands: the step's buffers are its operands' leaves, then
 * its own (src/opt/program.h). -2 when v is neither. */
static int step_leaf_binding(const CpuCompile *c, const Instruction *v, int leaf) {
  const ProgramStep *s = c->step;
  if (!s || s->kernel) return -2;
  int at = 0;
  for (int q = 0; q < s->inst->operand_count; q++) {
    if (s->inst->operands[q] == v) return at + leaf < s->buffer_count ? s->buffers[at + leaf] : -2;
    at += shape_leaf_count(&s->inst->operands[q]->shape);
  }
  return v == s->inst && at + leaf < s->buffer_count ? s->buffers[at + leaf] : -2;
}

/* Appends the bindings of inst's leaves [first, first + count) to
 * s->buffers at *at: the program stage's. */
static bool step_add_leaves(CpuCompile *c, CpuStep *s, int *at, const Instruction *inst, int first, int count) {
  for (int l = 0; l < count; l++) {
    int b = step_leaf_binding(c, inst, first + l);
    if (b < 0) return cpu_refuse(c, inst, "a leaf the buffer plan does not place");
    s->buffers[(*at)++] = b;
  }
  return true;
}

/* The step that runs one of cp's programs: branch k reads operand
 * first_operand + k (a call, all_operands, reads them all) and writes inst's
 * leaves [result_first, result_first + result_count). */
static bool compile_called_step(CpuCompile *c, const Instruction *inst, CalledPrograms *cp, int first_operand,
                                bool all_operands, int result_first, int result_count) {
  int total = (cp->count > 1) + result_count;
  int from = all_operands ? 0 : first_operand;
  for (int k = from; k < inst->operand_count; k++) total += shape_leaf_count(&inst->operands[k]->shape);
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, total);
  s->call = called_programs_run;
  s->state = cp;
  s->free_state = called_programs_free;
  int at = 0;
  bool ok = true;
  if (cp->count > 1) ok = step_add_leaves(c, s, &at, inst->operands[0], 0, 1);
  for (int k = 0; k < cp->count && ok; k++) {
    cp->first[k] = at;
    int lo = all_operands ? 0 : first_operand + k, hi = all_operands ? inst->operand_count : lo + 1;
    for (int q = lo; q < hi && ok; q++)
      ok = step_add_leaves(c, s, &at, inst->operands[q], 0, shape_leaf_count(&inst->operands[q]->shape));
  }
  cp->first[cp->count] = at;
  if (ok) ok = step_add_leaves(c, s, &at, inst, result_first, result_count);
  return ok;
}

/* Compiles the `count` computations of inst's called list from `first`
 * (whose parameters and roots fit inst's operands and result: the
 * program stage's program_control_refusal). */
static CalledPrograms *called_programs_compile(CpuCompile *c, const Instruction *inst, int first, int count) {
  CalledPrograms *cp = mem_calloc(1, sizeof *cp);
  cp->count = count;
  cp->programs = mem_calloc((size_t)count, sizeof *cp->programs);
  cp->first = mem_calloc((size_t)count + 1, sizeof *cp->first);
  for (int k = 0; k < count; k++) {
    const Computation *callee = inst->called[first + k];
    cp->programs[k] = cpu_compile_called(c, callee);
    if (!cp->programs[k]) {
      called_programs_free(cp);
      return NULL;
    }
  }
  return cp;
}

bool cpu_compile_conditional(CpuCompile *c, const Instruction *inst) {
  int count = inst->called_count;
  bool is_pred = inst->operands[0]->shape.type == TYPE_PRED;
  CalledPrograms *cp = called_programs_compile(c, inst, 0, count);
  if (!cp) return false;
  cp->index_is_pred = is_pred;
  return compile_called_step(c, inst, cp, 1, false, 0, shape_leaf_count(&inst->shape));
}

bool cpu_compile_call(CpuCompile *c, const Instruction *inst) {
  CalledPrograms *cp = called_programs_compile(c, inst, 0, 1);
  return cp && compile_called_step(c, inst, cp, 0, true, 0, shape_leaf_count(&inst->shape));
}

/* async-start: the wrapped computation's result goes to element 1; the
 * operands (one as it is, more as a tuple) to element 0; zeros after. */
bool cpu_compile_async_start(CpuCompile *c, const Instruction *inst) {
  const Shape *s = &inst->shape;
  int result_first = shape_element_first_leaf(s, 1), result_count = shape_leaf_count(&s->tuple_shapes[1]);
  CalledPrograms *cp = called_programs_compile(c, inst, 0, 1);
  if (!cp || !compile_called_step(c, inst, cp, 0, true, result_first, result_count)) return false;
  LeafSources ls;
  sources_begin(inst, &ls);
  async_start_sources(&ls);
  return sources_emit(c, &ls);
}

/* ---- while ---- */

/* A loop's step. Buffers: the init leaves, then the while's own leaves
 * (the state, and where the result is left). */
typedef struct Loop {
  CpuProgram *condition, *body;
  int leaf_count;
  int64_t *bytes;
} Loop;

static void loop_free(void *state) {
  Loop *w = state;
  if (!w) return;
  cpu_program_free(w->condition);
  cpu_program_free(w->body);
  mem_free(w->bytes);
  mem_free(w);
}

/* Runs the trips with the state in `state`; the body writes the next state
 * to `other` and the two swap, so no trip copies the state back. */
static bool loop_run_trips(const Loop *w, CpuFrame *condition, CpuFrame *body, void **state, void **other,
                           ThreadPool *pool, Status *st) {
  for (;;) {
    uint8_t more = 0;
    void *pred[1] = {&more};
    if (!cpu_frame_run(condition, state, pred, pool, st)) return false;
    if (!more) return true;
    if (!cpu_frame_run(body, state, other, pool, st)) return false;
    for (int l = 0; l < w->leaf_count; l++) {
      void *t = state[l];
      state[l] = other[l];
      other[l] = t;
    }
  }
}

static bool loop_run(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  const Loop *w = s->state;
  int n = w->leaf_count;
  void *const *init = buffers, *const *result = buffers + n;
  int64_t scratch_bytes = 0;
  for (int l = 0; l < n; l++) scratch_bytes += (w->bytes[l] + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  char *scratch = scratch_bytes ? mem_try_aligned_alloc(BUFFER_ALIGNMENT, (size_t)scratch_bytes) : NULL;
  if (scratch_bytes && !scratch)
    return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory: a loop's state needs %lld bytes",
                        (long long)scratch_bytes);
  void **state = mem_calloc((size_t)n + 1, sizeof *state), **other = mem_calloc((size_t)n + 1, sizeof *other);
  int64_t at = 0;
  for (int l = 0; l < n; l++) {
    if (init[l] != result[l] && w->bytes[l]) memmove(result[l], init[l], (size_t)w->bytes[l]);
    state[l] = result[l];
    other[l] = scratch + at;
    at += (w->bytes[l] + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  }
  CpuFrame condition, body;
  bool ok = cpu_frame_create(&condition, w->condition, st);
  if (ok) {
    ok = cpu_frame_create(&body, w->body, st);
    if (ok) {
      ok = loop_run_trips(w, &condition, &body, state, other, pool, st);
      cpu_frame_free(&body);
    }
    cpu_frame_free(&condition);
  }
  /* An odd number of trips leaves the state in the scratch block. */
  for (int l = 0; l < n && ok; l++)
    if (state[l] != result[l] && w->bytes[l]) memcpy(result[l], state[l], (size_t)w->bytes[l]);
  mem_free(state);
  mem_free(other);
  mem_free(scratch);
  return ok;
}

bool cpu_compile_while(CpuCompile *c, const Instruction *inst) {
  const Computation *condition = inst->called[0], *body = inst->called[1];
  const Shape *s = &inst->shape;
  Loop *w = mem_calloc(1, sizeof *w);
  w->leaf_count = shape_leaf_count(s);
  w->bytes = mem_calloc((size_t)w->leaf_count, sizeof *w->bytes);
  const Shape **shapes = mem_calloc((size_t)w->leaf_count, sizeof *shapes);
  int n = 0;
  shape_leaves(s, shapes, &n);
  for (int l = 0; l < n; l++) w->bytes[l] = shape_buffer_byte_size(shapes[l]);
  mem_free(shapes);
  w->condition = cpu_compile_called(c, condition);
  w->body = w->condition ? cpu_compile_called(c, body) : NULL;
  if (!w->body) {
    loop_free(w);
    return false;
  }
  CpuStep *step = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, 2 * w->leaf_count);
  step->call = loop_run;
  step->state = w;
  step->free_state = loop_free;
  int at = 0;
  return step_add_leaves(c, step, &at, inst->operands[0], 0, w->leaf_count) &&
         step_add_leaves(c, step, &at, inst, 0, w->leaf_count);
}

/* ---- ragged-all-to-all ---- */

/* One replica sends to itself: update j moves rows [input_offsets[j],
 * +send_sizes[j]) of the input to rows [output_offsets[j], +send_sizes[j])
 * of a copy of the output operand; recv_sizes must equal send_sizes. Rows
 * run along dimension 0 of row-major arrays. Buffers: input, output,
 * input_offsets, send_sizes, output_offsets, recv_sizes, result. */
typedef struct RaggedMoves {
  int64_t row_bytes, in_rows, out_rows, updates;
  ElementType index_type;
  const char *name;
} RaggedMoves;

static int64_t index_read(const void *data, ElementType t, int64_t i) {
  return t == TYPE_S64 ? ((const int64_t *)data)[i] : ((const int32_t *)data)[i];
}

static bool ragged_moves_run(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)pool;
  const RaggedMoves *r = s->state;
  char *out = buffers[6];
  if (out != buffers[1]) memmove(out, buffers[1], (size_t)(r->out_rows * r->row_bytes));
  for (int64_t j = 0; j < r->updates; j++) {
    int64_t from = index_read(buffers[2], r->index_type, j), count = index_read(buffers[3], r->index_type, j);
    int64_t to = index_read(buffers[4], r->index_type, j), recv = index_read(buffers[5], r->index_type, j);
    /* written so that no sum of user-given values can overflow */
    if (count != recv || count < 0 || from < 0 || to < 0 || from > r->in_rows - count || to > r->out_rows - count)
      return status_error(st, STATUS_RUNTIME_ERROR,
                          "ragged-all-to-all %s: update %lld (offsets %lld -> %lld, sizes %lld/%lld) is out of "
                          "range or unmatched",
                          r->name, (long long)j, (long long)from, (long long)to, (long long)count, (long long)recv);
    memcpy(out + to * r->row_bytes, (const char *)buffers[0] + from * r->row_bytes, (size_t)(count * r->row_bytes));
  }
  return true;
}

bool cpu_compile_ragged_all_to_all(CpuCompile *c, const Instruction *inst) {
  const Shape *in = &inst->operands[0]->shape, *out = &inst->shape, *index = &inst->operands[2]->shape;
  RaggedMoves *r = mem_calloc(1, sizeof *r);
  r->in_rows = in->dims[0];
  r->out_rows = out->dims[0];
  r->row_bytes = out->dims[0] ? shape_byte_size(out) / out->dims[0] : 0;  /* in's too: ragged_all_to_all_refusal */
  r->updates = shape_element_count(index);
  r->index_type = index->type;
  r->name = inst->name;
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, 7);
  s->call = ragged_moves_run;
  s->state = r;
  s->free_state = mem_free;
  int at = 0;
  bool ok = true;
  for (int k = 0; k < 6 && ok; k++) ok = step_add_leaves(c, s, &at, inst->operands[k], 0, 1);
  return ok && step_add_leaves(c, s, &at, inst, 0, 1);
}

/* ---- map and scan: a program run per element or per step ---- */

/* map applies its scalar computation at every element: the program runs
 * once per element, on the addresses of that element of each operand. All
 * operands and the result share one layout, so element i sits at offset
 * i * size in each. Buffers: the operands, then the result. */
typedef struct ElementMap {
  CpuProgram *program;
  int operand_count;
  int64_t element_count;
  int64_t *sizes;   /* per operand, then the result's */
} ElementMap;

static void element_map_free(void *state) {
  ElementMap *em = state;
  if (!em) return;
  cpu_program_free(em->program);
  mem_free(em->sizes);
  mem_free(em);
}

static bool element_map_run(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  const ElementMap *em = s->state;
  int n = em->operand_count;
  CpuFrame frame;
  if (!cpu_frame_create(&frame, em->program, st)) return false;
  void **parameters = mem_calloc((size_t)n + 1, sizeof *parameters);
  bool ok = true;
  for (int64_t i = 0; i < em->element_count && ok; i++) {
    for (int k = 0; k < n; k++) parameters[k] = (char *)buffers[k] + i * em->sizes[k];
    void *result[1] = {(char *)buffers[n] + i * em->sizes[n]};
    ok = cpu_frame_run(&frame, parameters, result, pool, st);
  }
  mem_free(parameters);
  cpu_frame_free(&frame);
  return ok;
}

bool cpu_compile_map(CpuCompile *c, const Instruction *inst) {
  const Shape *out = &inst->shape;
  const Computation *f = inst->called[0];
  ElementMap *em = mem_calloc(1, sizeof *em);
  em->operand_count = inst->operand_count;
  em->element_count = shape_element_count(out);
  em->sizes = mem_calloc((size_t)inst->operand_count + 1, sizeof *em->sizes);
  for (int k = 0; k < inst->operand_count; k++) em->sizes[k] = type_byte_size(inst->operands[k]->shape.type);
  em->sizes[inst->operand_count] = type_byte_size(out->type);
  em->program = cpu_compile_called(c, f);
  if (!em->program) {
    element_map_free(em);
    return false;
  }
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, inst->operand_count + 1);
  s->call = element_map_run;
  s->state = em;
  s->free_state = element_map_free;
  int at = 0;
  bool ok = true;
  for (int k = 0; k < inst->operand_count && ok; k++) ok = step_add_leaves(c, s, &at, inst->operands[k], 0, 1);
  return ok && step_add_leaves(c, s, &at, inst, 0, 1);
}

/* scan runs its computation once per step along dimension d (backwards
 * with is_reverse) on the inputs' slices at that step and the carries; its
 * outputs are stacked along d, its carries replace the old ones. Arrays are
 * row-major, seen as [outer, steps, inner] around d. Buffers: the inputs,
 * the initial carries, then the result's leaves: outputs, final carries. */
typedef struct ScanPart {
  int64_t outer, inner, bytes;  /* inner: bytes of one step's run; bytes: of the slice */
} ScanPart;

typedef struct Scan {
  CpuProgram *program;
  int inputs, carries, outputs;
  int64_t steps;
  bool reverse;
  ScanPart *parts;              /* inputs, then outputs */
  int64_t *carry_bytes;
} Scan;

static void scan_free(void *state) {
  Scan *sc = state;
  if (!sc) return;
  cpu_program_free(sc->program);
  mem_free(sc->parts);
  mem_free(sc->carry_bytes);
  mem_free(sc);
}

/* Copies step `at` of a stacked array to or from its slice. */
static void scan_part_copy(const ScanPart *p, int64_t steps, char *full, char *slice, int64_t at, bool to_slice) {
  for (int64_t o = 0; o < p->outer; o++) {
    char *f = full + (o * steps + at) * p->inner, *s = slice + o * p->inner;
    memcpy(to_slice ? s : f, to_slice ? f : s, (size_t)p->inner);
  }
}

static int64_t bytes_aligned(int64_t bytes) { return (bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT; }

/* The steps, with the carries in `carry` and the next ones written to
 * `other` (the two swap each step); slices hold the inputs' and outputs'
 * slices of one step. */
static bool scan_run_steps(const Scan *sc, void *const *buffers, void **slices, void **carry, void **other,
                           ThreadPool *pool, Status *st) {
  int in = sc->inputs, nc = sc->carries, no = sc->outputs;
  void **parameters = mem_calloc((size_t)(in + nc) + 1, sizeof *parameters);
  void **results = mem_calloc((size_t)(no + nc) + 1, sizeof *results);
  CpuFrame frame;
  bool ok = cpu_frame_create(&frame, sc->program, st);
  for (int64_t step = 0; step < sc->steps && ok; step++) {
    int64_t at = sc->reverse ? sc->steps - 1 - step : step;
    for (int i = 0; i < in; i++) {
      scan_part_copy(&sc->parts[i], sc->steps, buffers[i], slices[i], at, true);
      parameters[i] = slices[i];
    }
    for (int k = 0; k < no; k++) results[k] = slices[in + k];
    for (int q = 0; q < nc; q++) parameters[in + q] = carry[q], results[no + q] = other[q];
    ok = cpu_frame_run(&frame, parameters, results, pool, st);
    for (int k = 0; k < no && ok; k++)
      scan_part_copy(&sc->parts[in + k], sc->steps, buffers[in + nc + k], slices[in + k], at, false);
    for (int q = 0; q < nc; q++) {
      void *t = carry[q];
      carry[q] = other[q];
      other[q] = t;
    }
  }
  cpu_frame_free(&frame);
  mem_free(parameters);
  mem_free(results);
  return ok;
}

static bool scan_run(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  const Scan *sc = s->state;
  int in = sc->inputs, nc = sc->carries, no = sc->outputs;
  int64_t total = 0;
  for (int k = 0; k < in + no; k++) total += bytes_aligned(sc->parts[k].bytes);
  for (int q = 0; q < nc; q++) total += bytes_aligned(sc->carry_bytes[q]);
  char *scratch = total ? mem_try_aligned_alloc(BUFFER_ALIGNMENT, (size_t)total) : NULL;
  if (total && !scratch) return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory: a scan needs %lld bytes", (long long)total);
  void **slices = mem_calloc((size_t)(in + no) + 1, sizeof *slices);
  void **carry = mem_calloc((size_t)nc + 1, sizeof *carry), **other = mem_calloc((size_t)nc + 1, sizeof *other);
  int64_t at = 0;
  for (int k = 0; k < in + no; k++) {
    slices[k] = scratch + at;
    at += bytes_aligned(sc->parts[k].bytes);
  }
  void *const *final = buffers + in + nc + no;
  for (int q = 0; q < nc; q++) {
    if (sc->carry_bytes[q] && buffers[in + q] != final[q])
      memmove(final[q], buffers[in + q], (size_t)sc->carry_bytes[q]);
    carry[q] = final[q];
    other[q] = scratch + at;
    at += bytes_aligned(sc->carry_bytes[q]);
  }
  bool ok = scan_run_steps(sc, buffers, slices, carry, other, pool, st);
  for (int q = 0; q < nc && ok; q++)
    if (carry[q] != final[q] && sc->carry_bytes[q]) memcpy(final[q], carry[q], (size_t)sc->carry_bytes[q]);
  mem_free(slices);
  mem_free(carry);
  mem_free(other);
  mem_free(scratch);
  return ok;
}

/* The [outer, steps, inner] view of a row-major array around d. */
static ScanPart scan_part_of(const Shape *s, int d) {
  ScanPart p = {1, type_byte_size(s->type), 0};
  for (int i = 0; i < d; i++) p.outer *= s->dims[i];
  for (int i = d + 1; i < s->rank; i++) p.inner *= s->dims[i];
  p.bytes = p.outer * p.inner;
  return p;
}

/* The shapes scan's parts must have: inputs and outputs row-major arrays
 * with d, carries arrays; the computation's parameters and results the
 * slices and carries in the same layouts. */
static bool scan_fits(const Instruction *inst, int inputs, int carries, int outputs, int d) {
  const Computation *f = inst->called[0];
  const Shape *result = &inst->shape, *root = &f->root->shape;
  int parts = outputs + carries;
  if (f->parameter_count != inputs + carries) return false;
  if (parts == 1 ? shape_is_tuple(root) || shape_is_tuple(result) : !shape_is_tuple(root) || root->tuple_count != parts)
    return false;
  for (int k = 0; k < inputs + carries; k++) {
    const Shape *o = &inst->operands[k]->shape;
    if (!shape_is_row_major(o) || (k < inputs && o->rank <= d)) return false;
    if (k >= inputs && !shape_identical(o, &f->parameters[k]->shape)) return false;
  }
  for (int k = 0; k < parts; k++) {
    const Shape *r = parts == 1 ? result : &result->tuple_shapes[k];
    const Shape *fr = parts == 1 ? root : &root->tuple_shapes[k];
    if (!shape_is_row_major(r) || !shape_is_row_major(fr) || (k < outputs && r->rank <= d)) return false;
    if (k >= outputs && !shape_identical(r, fr)) return false;
  }
  for (int k = 0; k < inputs; k++)
    if (!shape_is_row_major(&f->parameters[k]->shape)) return false;
  return true;
}

bool cpu_compile_scan(CpuCompile *c, const Instruction *inst) {
  const ScalarAttrs *sa = attrs_scalars(&inst->attrs);
  int carries = (int)sa->num_carries, inputs = inst->operand_count - carries;
  int parts = shape_is_tuple(&inst->shape) ? inst->shape.tuple_count : 1, outputs = parts - carries;
  int d = (int)inst->attrs.dimensions.values[0];
  Scan *sc = mem_calloc(1, sizeof *sc);
  sc->inputs = inputs, sc->carries = carries, sc->outputs = outputs;
  sc->steps = inst->operands[0]->shape.dims[d];
  sc->reverse = sa->is_reverse;
  sc->parts = mem_calloc((size_t)(inputs + outputs) + 1, sizeof *sc->parts);
  sc->carry_bytes = mem_calloc((size_t)carries + 1, sizeof *sc->carry_bytes);
  for (int i = 0; i < inputs; i++) sc->parts[i] = scan_part_of(&inst->operands[i]->shape, d);
  for (int k = 0; k < outputs; k++)
    sc->parts[inputs + k] = scan_part_of(parts == 1 ? &inst->shape : &inst->shape.tuple_shapes[k], d);
  for (int q = 0; q < carries; q++) sc->carry_bytes[q] = shape_buffer_byte_size(&inst->operands[inputs + q]->shape);
  sc->program = cpu_compile_called(c, inst->called[0]);
  if (!sc->program) {
    scan_free(sc);
    return false;
  }
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, inst->operand_count + parts);
  s->call = scan_run;
  s->state = sc;
  s->free_state = scan_free;
  int at = 0;
  bool ok = true;
  for (int k = 0; k < inst->operand_count && ok; k++) ok = step_add_leaves(c, s, &at, inst->operands[k], 0, 1);
  return ok && step_add_leaves(c, s, &at, inst, 0, parts);
}

/* ---- rng-bit-generator ---- */

/* The bits come from rng_bits_generate (src/ir/rng_bits.c), the function the
 * evaluator calls, so both give the same bits. Buffers: the state, then the
 * result's new state and bits (row-major). */
typedef struct RandomBits {
  RngAlgorithm algorithm;
  const Shape *shape;           /* the bits' array, in the module */
  int state_count;
} RandomBits;

static bool random_bits_run(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)pool;
  const RandomBits *r = s->state;
  int64_t count = shape_element_count(r->shape);
  uint64_t *bits = mem_malloc((size_t)(count ? count : 1) * sizeof *bits);
  if (!bits) return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory: %lld random values", (long long)count);
  uint64_t state[3] = {0}, next[3] = {0};
  memcpy(state, buffers[0], (size_t)r->state_count * sizeof *state);
  rng_bits_generate(r->algorithm, r->shape, state, r->state_count, next, bits);
  memcpy(buffers[1], next, (size_t)r->state_count * sizeof *next);
  for (int64_t i = 0; i < count; i++) rng_bits_store(buffers[2], r->shape->type, i, bits[i]);
  mem_free(bits);
  return true;
}

bool cpu_compile_rng_bit_generator(CpuCompile *c, const Instruction *inst) {
  const Shape *state = &inst->operands[0]->shape, *s = &inst->shape;
  RngAlgorithm algorithm = inst->attrs.rng_algorithm == RNG_DEFAULT ? RNG_PHILOX : inst->attrs.rng_algorithm;
  int64_t n = state->dims[0];
  const Shape *bits = &s->tuple_shapes[1];
  RandomBits *r = mem_calloc(1, sizeof *r);
  *r = (RandomBits){.algorithm = algorithm, .shape = bits, .state_count = (int)n};
  CpuStep *step = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, 3);
  step->call = random_bits_run;
  step->state = r;
  step->free_state = mem_free;
  int at = 0;
  return step_add_leaves(c, step, &at, inst->operands[0], 0, 1) && step_add_leaves(c, step, &at, inst, 0, 2);
}

/* ---- what the CPU refuses of these ops ----
 * Decided from the instruction alone, before any code is made: the
 * compile functions above take what passes as given. */

static const char *ragged_all_to_all_refusal(const Instruction *inst) {
  if (inst->operand_count != 6) return "a malformed ragged-all-to-all";
  const Shape *in = &inst->operands[0]->shape, *out = &inst->shape, *index = &inst->operands[2]->shape;
  if (!shape_is_row_major(in) || !shape_is_row_major(out) || in->rank < 1 || out->rank < 1 ||
      !shape_identical(out, &inst->operands[1]->shape))
    return "a ragged-all-to-all on other than row-major arrays";
  for (int k = 2; k < 6; k++) {
    const Shape *o = &inst->operands[k]->shape;
    if (!shape_is_row_major(o) || (o->type != TYPE_S32 && o->type != TYPE_S64) || o->type != index->type ||
        shape_element_count(o) != shape_element_count(index))
      return "offsets and sizes that are not s32 or s64 arrays of one length";
  }
  int64_t row_bytes = out->dims[0] ? shape_byte_size(out) / out->dims[0] : 0;
  if (in->dims[0] && shape_byte_size(in) / in->dims[0] != row_bytes) return "input and output rows of different sizes";
  return NULL;
}

static const char *map_refusal(const Instruction *inst) {
  const Shape *out = &inst->shape;
  if (inst->called_count != 1 || shape_is_tuple(out) || out->element_size_bits) return "a map that is not of arrays";
  const Computation *f = inst->called[0];
  bool fits = f->parameter_count == inst->operand_count && !shape_is_tuple(&f->root->shape) &&
              f->root->shape.rank == 0 && f->root->shape.type == out->type;
  for (int k = 0; k < inst->operand_count && fits; k++) {
    const Shape *o = &inst->operands[k]->shape, *p = &f->parameters[k]->shape;
    fits = !shape_is_tuple(o) && !o->element_size_bits && shape_same_dims(o, out) && o->rank == out->rank &&
           memcmp(o->minor_to_major, out->minor_to_major, (size_t)out->rank * sizeof *out->minor_to_major) == 0 &&
           !shape_is_tuple(p) && p->rank == 0 && p->type == o->type;
  }
  return fits ? NULL : "a map whose operands differ in layout from its result, or not scalar-wise";
}

static const char *scan_refusal(const Instruction *inst) {
  const ScalarAttrs *sa = attrs_scalars(&inst->attrs);
  int carries = (int)sa->num_carries, inputs = inst->operand_count - carries;
  int parts = shape_is_tuple(&inst->shape) ? inst->shape.tuple_count : 1, outputs = parts - carries;
  if (inst->called_count != 1 || inputs < 1 || outputs < 0 || inst->attrs.dimensions.count != 1)
    return "a malformed scan";
  int d = (int)inst->attrs.dimensions.values[0];
  if (d < 0 || !scan_fits(inst, inputs, carries, outputs, d)) return "a scan of other than row-major arrays";
  return NULL;
}

static const char *rng_bit_generator_refusal(const Instruction *inst) {
  const Shape *state = &inst->operands[0]->shape, *s = &inst->shape;
  RngAlgorithm algorithm = inst->attrs.rng_algorithm == RNG_DEFAULT ? RNG_PHILOX : inst->attrs.rng_algorithm;
  if (!shape_is_tuple(s) || s->tuple_count != 2 || shape_is_tuple(state) || state->type != TYPE_U64 ||
      state->rank != 1 || !shape_identical(state, &s->tuple_shapes[0]))
    return "a state that is not u64[2] or u64[3]";
  int64_t n = state->dims[0];
  if (algorithm == RNG_THREE_FRY ? n != 2 : n != 2 && n != 3) return "a state of the wrong length for its algorithm";
  const Shape *bits = &s->tuple_shapes[1];
  if (!shape_is_row_major(bits) || bits->type == TYPE_PRED || type_bit_width(bits->type) < 8)
    return "random bits that are not a row-major array of 8 to 64-bit elements";
  return NULL;
}

const char *cpu_control_refusal(const Instruction *inst) {
  switch (inst->opcode) {
  case OP_RAGGED_ALL_TO_ALL: return ragged_all_to_all_refusal(inst);
  case OP_MAP: return map_refusal(inst);
  case OP_SCAN: return scan_refusal(inst);
  case OP_RNG_BIT_GENERATOR: return rng_bit_generator_refusal(inst);
  /* while, conditional, call (a fusion run as one), async-start: whether
   * their computations fit is the program stage's program_control_refusal */
  default: return NULL;
  }
}
