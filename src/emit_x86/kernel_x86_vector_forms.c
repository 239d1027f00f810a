/* Which ops of a kernel run in SIMD lanes, and how (LaneForm): the
 * analysis half of the x86 SIMD code, the file under the policy
 * (kernel_x86_schedule.c), the column strategy (kernel_x86_columns.c),
 * the allocator (kernel_x86_regalloc.c) and the vector emitter
 * (kernel_x86_vector.c), which all ask it. It emits nothing, and asks
 * only kernel_x86_homes.c for a type's register class and
 * kernel_x86_math.c which math functions have a form in lanes.
 *
 * A loop kernel's ops are classified once (kernel_x86_vector_lanes: the
 * rules are kernel_x86_vector.c's header comment); a reduce or row
 * kernel's loop is classified phase by phase (in_loop), after finding the
 * one accumulator a vectorized sum combines (find_sum). Beside them: the
 * lives a gather extends (it recomputes its index values lane by lane),
 * whether a loop's tail may run under a lane mask, and the row accesses,
 * the loads and stores whose address is a row pointer plus the inner
 * reduced index. */
#include <string.h>

#include "emit_x86/kernel_x86_internal.h"

static bool is_sse(const KernelX86 *x) { return x->cpu->level == CPU_LEVEL_SSE4; }

/* ---- classification ---- */

static int minor_dim(const Shape *s) { return s->has_layout ? s->minor_to_major[0] : s->rank - 1; }

/* The indices args[first..first+rank) of buffer shape s: LANE_BROADCAST
 * when all are uniform, LANE_VECTOR when contiguous, -1 otherwise. */
static int access_form(const KernelX86 *x, const KernelOp *op, const Shape *s, int first) {
  bool uniform = true, contiguous = s->rank > 0;
  for (int d = 0; d < s->rank; d++) {
    int f = x->forms[op->args[first + d]];
    if (f != LANE_UNIFORM) uniform = false;
    if (d == minor_dim(s) ? f != LANE_INNER : f != LANE_UNIFORM) contiguous = false;
  }
  return uniform ? LANE_BROADCAST : contiguous ? LANE_VECTOR : -1;
}

static bool vector_f32_opcode(Opcode op) {
  switch (op) {
  case OP_ADD: case OP_SUBTRACT: case OP_MULTIPLY: case OP_DIVIDE: case OP_SQRT:
  case OP_NEGATE: case OP_ABS: case OP_MAXIMUM: case OP_MINIMUM: case OP_RSQRT:
    return true;
  default:
    return false;
  }
}

/* The math functions with a vector form run in f32 lanes (at sse4, with
 * no FMA, each fused multiply-add emulated in f64 lanes,
 * kernel_x86_math_lanes.c); the others run lane by lane through the
 * scalar code (kernel_x86_is_lane_math). */
static bool vector_math(const KernelX86 *x, Opcode op) {
  return !x->vector_f64 && (x->cpu->fma || is_sse(x)) && kernel_x86_math_has_lanes(x, op);
}

/* f16 vectors hold the f32 of each value, as the scalar code does
 * (kernel_x86_narrow.c): F16C's vcvtph2ps widens them (exactly; like the
 * evaluator's reads through double, it quietens a signalling NaN), and
 * vcvtps2ph rounds an op's f32 result to nearest even as float_to_half
 * does, NaN payloads included. A loaded f16 is never stored unchanged by
 * vector code, since the evaluator keeps a signalling NaN in such a copy. */
static bool half_vectors(const KernelX86 *x) { return x->cpu->f16c && !is_sse(x); }

/* A kernel's vectors are f32 lanes (f32 and f16 values) or, in a kernel
 * whose float values are all f64, f64 lanes (avx2 and up; SSE's two lanes
 * are not worth it). */
static bool vector_float_type(const KernelX86 *x, ElementType t) {
  if (x->vector_f64) return t == TYPE_F64;
  return t == TYPE_F32 || (t == TYPE_F16 && half_vectors(x));
}

/* The form of op i, or -1 when it has no vector form. */
static int op_form(const KernelX86 *x, int i) {
  const Kernel *k = x->k;
  const KernelOp *op = &k->ops[i];
  ValueClass c = kernel_x86_value_class_of(op->type);
  if (c == VALUE_XMM && !vector_float_type(x, op->type)) return -1;
  switch (op->kop) {
  case KOP_INDEX: return op->dim == k->rank - 1 ? LANE_INNER : LANE_UNIFORM;
  case KOP_CONSTANT: return c == VALUE_XMM ? LANE_VECTOR : LANE_UNIFORM;
  case KOP_LOAD: {
    int f = access_form(x, op, &k->inputs[op->buffer].shape, 0);
    if (op->type == TYPE_F16) return f == LANE_VECTOR ? LANE_VECTOR : -1;
    if (c == VALUE_XMM) return f >= 0 ? f : LANE_GATHER;
    return f == LANE_BROADCAST ? LANE_UNIFORM : -1;
  }
  case KOP_STORE: {
    int value = x->forms[op->args[0]];
    if (op->type == TYPE_F16 && k->ops[op->args[0]].kop == KOP_LOAD) return -1;
    bool vector_value = value == LANE_VECTOR || value == LANE_BROADCAST || value == LANE_GATHER;
    return c == VALUE_XMM && vector_value && access_form(x, op, &k->outputs[op->buffer].shape, 1) == LANE_VECTOR
               ? LANE_VECTOR : -1;
  }
  case KOP_HLO: {
    if (op->op == OP_COMPARE && k->ops[op->args[0]].type == (x->vector_f64 ? TYPE_F64 : TYPE_F32))
      return op->compare_type == CMP_TYPE_TOTALORDER ? -1 : LANE_MASK;
    if (op->op == OP_SELECT && c == VALUE_XMM)
      return x->forms[op->args[0]] == LANE_MASK && k->ops[op->args[1]].type == op->type ? LANE_VECTOR : -1;
    if (c == VALUE_XMM && op->op == OP_CONVERT) { /* between f32 and f16 */
      ElementType from = k->ops[op->args[0]].type;
      return vector_float_type(x, from) && from != op->type ? LANE_VECTOR : -1;
    }
    if (c == VALUE_XMM) {
      for (int a = 0; a < op->arg_count; a++)
        if (k->ops[op->args[a]].type != op->type) return -1;
      bool math = vector_math(x, op->op) || kernel_x86_is_lane_math(x, op->op);
      return vector_f32_opcode(op->op) || math ? LANE_VECTOR : -1;
    }
    int inner = 0, uniform = 0;
    for (int a = 0; a < op->arg_count; a++) {
      int f = x->forms[op->args[a]];
      if (kernel_x86_value_class_of(k->ops[op->args[a]].type) != VALUE_GPR || f == LANE_MASK) return -1;
      inner += f == LANE_INNER, uniform += f == LANE_UNIFORM;
    }
    if (uniform == op->arg_count) return LANE_UNIFORM;
    /* innermost index + uniform stays contiguous; anything else varies
     * some other way, and only a gather may use it */
    bool shifted = op->op == OP_ADD && op->type == TYPE_S64 && inner == 1 && uniform == 1;
    return shifted ? LANE_INNER : LANE_PER_LANE;
  }
  default: return -1;
  }
}

int kernel_x86_op_form(const KernelX86 *x, int i) { return op_form(x, i); }

/* f64 lanes when every float value of the kernel is f64. */
static bool kernel_floats_are_f64(const Kernel *k) {
  bool f64 = false;
  for (int i = 0; i < k->op_count; i++) {
    ElementType t = k->ops[i].kop == KOP_STORE ? k->outputs[k->ops[i].buffer].shape.type : k->ops[i].type;
    if (kernel_x86_value_class_of(t) != VALUE_XMM) continue;
    if (t != TYPE_F64) return false;
    f64 = true;
  }
  return f64;
}

int kernel_x86_vector_lanes(KernelX86 *x) {
  const Kernel *k = x->k;
  int lanes = x->cpu->level == CPU_LEVEL_AVX512 ? 16 : x->cpu->level == CPU_LEVEL_AVX2 ? 8 : 4;
  x->vector_f64 = kernel_floats_are_f64(k);
  if (x->vector_f64 && is_sse(x)) return 0;
  if (x->vector_f64) lanes /= 2;
  if (k->kind != KERNEL_LOOP || k->rank == 0 || k->dims[k->rank - 1] < lanes) return 0;
  for (int i = 0; i < k->op_count; i++) {
    int f = op_form(x, i);
    if (f < 0) return 0;
    x->forms[i] = (uint8_t)f;
  }
  return lanes;
}

bool kernel_x86_op_is_vector(const KernelX86 *x, int i) {
  const KernelOp *op = &x->k->ops[i];
  int f = x->forms[op->kop == KOP_STORE ? op->args[0] : i];
  if (op->kop == KOP_ACC_WRITE) return x->columns;
  return f == LANE_VECTOR || f == LANE_BROADCAST || f == LANE_GATHER || f == LANE_MASK;
}

bool kernel_x86_is_vector_math(const KernelX86 *x, Opcode op) { return vector_math(x, op); }

/* ---- the loop of a reduce kernel or of a row kernel's phase ---- */

static int uses_of(const Kernel *k, int v) {
  int n = 0;
  for (int i = 0; i < k->op_count; i++)
    for (int a = 0; a < k->ops[i].arg_count; a++) n += k->ops[i].args[a] == v;
  return n;
}

/* Whether op belongs to the loop being vectorized: the REDUCE block of a
 * reduce kernel, phase x->phase of a row kernel. */
static bool in_loop(const KernelX86 *x, const KernelOp *op) {
  if (op->block != KBLOCK_REDUCE && op->block != KBLOCK_ROW) return false;
  return x->k->kind != KERNEL_ROW || op->phase == x->phase;
}

/* Finds acc = add/maximum/minimum(acc, element) in the loop: its one
 * accumulator write, and the one read of that accumulator. */
static bool find_sum(KernelX86 *x) {
  const Kernel *k = x->k;
  x->reduce_read = x->reduce_combine = x->reduce_write = -1;
  for (int i = 0; i < k->op_count; i++) {
    if (!in_loop(x, &k->ops[i]) || k->ops[i].kop != KOP_ACC_WRITE) continue;
    if (x->reduce_write >= 0) return false;
    x->reduce_write = i;
    x->reduce_combine = k->ops[i].args[0];
  }
  if (x->reduce_write < 0) return false;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (!in_loop(x, op) || op->kop != KOP_ACC_READ || op->acc != k->ops[x->reduce_write].acc) continue;
    if (x->reduce_read >= 0) return false;
    x->reduce_read = i;
  }
  if (x->reduce_read < 0) return false;
  const KernelOp *add = &k->ops[x->reduce_combine];
  bool reducer = add->op == OP_ADD || add->op == OP_MAXIMUM || add->op == OP_MINIMUM;
  return add->kop == KOP_HLO && reducer && add->type == TYPE_F32 && in_loop(x, add) &&
         k->acc_types[k->ops[x->reduce_write].acc] == TYPE_F32 &&
         (add->args[0] == x->reduce_read || add->args[1] == x->reduce_read) && add->args[0] != add->args[1] &&
         uses_of(k, x->reduce_read) == 1 && uses_of(k, x->reduce_combine) == 1;
}

/* The form of op i inside the loop (not the sum's own three ops), or -1.
 * Another accumulator's f32 value, fixed during this loop, is read into
 * every lane. */
static int loop_op_form(const KernelX86 *x, int i) {
  const Kernel *k = x->k;
  const KernelOp *op = &k->ops[i];
  for (int a = 0; a < op->arg_count; a++) {
    const KernelOp *arg = &k->ops[op->args[a]];
    if (!in_loop(x, arg) && kernel_x86_value_class_of(arg->type) == VALUE_XMM) return -1;
    if (op->args[a] == x->reduce_read || op->args[a] == x->reduce_combine) return -1;
  }
  int f;
  if (op->kop == KOP_RINDEX) f = op->dim == k->reduce_rank - 1 ? LANE_INNER : LANE_UNIFORM;
  else if (op->kop == KOP_ACC_READ && k->kind == KERNEL_ROW) f = op->type == TYPE_F32 ? LANE_BROADCAST : -1;
  else if (op->kop == KOP_INDEX || op->kop == KOP_ACC_READ || op->kop == KOP_ACC_WRITE) f = -1;
  else if (op->kop == KOP_STORE && op->block != KBLOCK_ROW) f = -1;
  else f = op_form(x, i);
  /* the gather buffer is the partials'; masks need the SIMD allocation */
  return f == LANE_GATHER || f == LANE_MASK ? -1 : f;
}

static int isa_lanes(const KernelX86 *x) {
  return x->cpu->level == CPU_LEVEL_AVX512 ? 16 : x->cpu->level == CPU_LEVEL_AVX2 ? 8 : 4;
}

/* Forms for the ops outside the loop (scalars) and in it; false when one
 * has no vector form. */
static bool classify_loop(KernelX86 *x, bool summed) {
  const Kernel *k = x->k;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->block == KBLOCK_PRE || op->block == KBLOCK_POST) {
      /* PRE values are scalars: integers are uniform, an f32 one would
       * need a broadcast (not written). */
      x->forms[i] = LANE_UNIFORM;
      continue;
    }
    if (!in_loop(x, op)) continue;
    if (summed && (i == x->reduce_read || i == x->reduce_combine || i == x->reduce_write)) continue;
    int f = loop_op_form(x, i);
    if (f < 0) return false;
    x->forms[i] = (uint8_t)f;
  }
  return true;
}

int kernel_x86_vector_reduce_lanes(KernelX86 *x) {
  const Kernel *k = x->k;
  if (k->kind == KERNEL_LOOP || k->reduce_rank == 0 || k->reduce_dims[k->reduce_rank - 1] < REDUCE_PARTIALS ||
      (k->kind == KERNEL_REDUCE && k->acc_count != 1) || !find_sum(x) || !classify_loop(x, true))
    return 0;
  const KernelOp *add = &k->ops[x->reduce_combine];
  int element = add->args[0] == x->reduce_read ? add->args[1] : add->args[0];
  int f = x->forms[element];
  return in_loop(x, &k->ops[element]) && (f == LANE_VECTOR || f == LANE_BROADCAST) ? isa_lanes(x) : 0;
}

int kernel_x86_vector_phase_lanes(KernelX86 *x) {
  const Kernel *k = x->k;
  if (k->phase_blocks[x->phase] == KBLOCK_REDUCE) return kernel_x86_vector_reduce_lanes(x);
  x->reduce_read = x->reduce_combine = x->reduce_write = -1;
  int lanes = isa_lanes(x);
  if (k->reduce_rank == 0 || k->reduce_dims[k->reduce_rank - 1] < lanes || !classify_loop(x, false)) return 0;
  return lanes;
}

bool kernel_x86_in_vector_loop(const KernelX86 *x, const KernelOp *op) { return in_loop(x, op); }
bool kernel_x86_find_sum(KernelX86 *x) { return find_sum(x); }

/* ---- gathers, the masked tail, row accesses ---- */

/* Marks the integer ops that feed op i's indices and vary across lanes
 * (in op order, so emitting the marked ones in order recomputes them). */
static void mark_index_slice(const KernelX86 *x, int i, bool *marked) {
  const KernelOp *op = &x->k->ops[i];
  for (int a = 0; a < op->arg_count; a++) {
    int v = op->args[a];
    if (marked[v] || (x->forms[v] != LANE_INNER && x->forms[v] != LANE_PER_LANE)) continue;
    marked[v] = true;
    mark_index_slice(x, v, marked);
  }
}

void kernel_x86_extend_gather_lives(KernelX86 *x) {
  const Kernel *k = x->k;
  bool *marked = mem_calloc((size_t)k->op_count + 1, sizeof *marked);
  for (int i = 0; i < k->op_count; i++) {
    if (x->forms[i] != LANE_GATHER || k->ops[i].kop != KOP_LOAD) continue;
    memset(marked, 0, (size_t)k->op_count + 1);
    mark_index_slice(x, i, marked);
    /* the recomputed values and every argument they read (uniform ones
     * included) */
    for (int v = 0; v < i; v++) {
      if (!marked[v]) continue;
      if (x->last_use[v] < i) x->last_use[v] = i;
      for (int a = 0; a < k->ops[v].arg_count; a++)
        if (x->last_use[k->ops[v].args[a]] < i) x->last_use[k->ops[v].args[a]] = i;
    }
  }
  mem_free(marked);
}

void kernel_x86_mark_index_slice(const KernelX86 *x, int i, bool *marked) { mark_index_slice(x, i, marked); }

bool kernel_x86_vector_tail_maskable(const KernelX86 *x) {
  /* f16 moves through vcvtps2ph/vcvtph2ps, f64 in 8 lanes: only f32
   * loads and stores take the lane mask */
  if (x->cpu->level != CPU_LEVEL_AVX512 || x->vector_f64) return false;
  for (int b = 0; b < x->k->input_count + x->k->output_count; b++) {
    const KernelBuffer *buffer = b < x->k->input_count ? &x->k->inputs[b] : &x->k->outputs[b - x->k->input_count];
    if (buffer->shape.type == TYPE_F16) return false;
  }
  for (int i = 0; i < x->k->op_count; i++)
    if (x->forms[i] == LANE_GATHER) return false;
  return true;
}

/* Row accesses (kernel_access_form, CONTIGUOUS): a REDUCE or ROW phase's
 * along its inner reduced index, at offset 0 (its row pointer is the
 * element's address without that index); a loop kernel's along its inner
 * loop index, at any constant offset (folded into the row pointer). */
int kernel_x86_row_access_dim(const Kernel *k, int i) {
  if (k->kind == KERNEL_LOOP) return -1;
  KernelAccessForm form = kernel_access_form(k, i, k->reduce_rank - 1);
  return form.kind == KACCESS_CONTIGUOUS && form.offset == 0 ? form.dim : -1;
}

bool kernel_x86_is_row_access(const Kernel *k, int i) { return kernel_x86_row_access_dim(k, i) >= 0; }

bool kernel_x86_is_loop_row_access(const KernelX86 *x, int i) {
  const Kernel *k = x->k;
  return k->kind == KERNEL_LOOP && k->rank > 0 && x->vectorized_lanes && kernel_x86_op_is_vector(x, i) &&
         x->forms[i] != LANE_GATHER && kernel_access_form(k, i, k->rank - 1).kind == KACCESS_CONTIGUOUS;
}

bool kernel_x86_index_like(const KernelOp *op) {
  return op->type == TYPE_S64 &&
         (op->kop == KOP_INDEX || op->kop == KOP_CONSTANT || (op->kop == KOP_HLO && op->op == OP_ADD));
}

void kernel_x86_mark_addressing_only(const Kernel *k, const bool *row_access, bool *addressing_only) {
  bool *needed = mem_calloc((size_t)k->op_count + 1, sizeof *needed);
  for (int i = k->op_count - 1; i >= 0; i--) {
    const KernelOp *op = &k->ops[i];
    addressing_only[i] = kernel_x86_index_like(op) && !needed[i];
    if (addressing_only[i]) continue;
    for (int a = 0; a < op->arg_count; a++)
      if (!row_access[i] || (op->kop == KOP_STORE && a == 0)) needed[op->args[a]] = true;
  }
  mem_free(needed);
}

void kernel_x86_assign_row_pointers(KernelX86 *x) {
  const Kernel *k = x->k;
  x->address_count = 0;
  for (int i = 0; i < k->op_count; i++) {
    bool row_access = k->kind == KERNEL_LOOP ? kernel_x86_is_loop_row_access(x, i)
                                             : !x->columns && kernel_x86_row_access_dim(k, i) >= 0;
    x->address_slots[i] = row_access ? x->address_count++ : -1;
  }
  if (k->kind != KERNEL_LOOP || !x->address_count) return;
  bool *row_access = mem_calloc((size_t)k->op_count + 1, sizeof *row_access);
  for (int i = 0; i < k->op_count; i++) row_access[i] = x->address_slots[i] >= 0;
  kernel_x86_mark_addressing_only(k, row_access, x->addressing_only);
  mem_free(row_access);
}
