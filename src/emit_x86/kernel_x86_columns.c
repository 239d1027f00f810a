/* Column reductions: SIMD across adjacent output points (KSCHED_COLUMNS).
 *
 * A reduce or row kernel whose reduced dims are the outer dims of its
 * input (a bias gradient, reduce f32[256,512] over {0}) walks each output
 * point's elements down a column, one float per 2 KiB. Here the row body
 * instead runs for `lanes` adjacent output points at once, along the
 * innermost loop dim (contiguous in every buffer it touches): the loop
 * index of that dim is LANE_INNER, every reduced index is uniform, each
 * f32 value (accumulators included) a vector, so a trip of the reduce
 * loop loads a row segment of 16 contiguous floats (avx512; 8 avx2, 4
 * sse4) and a ROW phase stores one. Each lane runs the scalar code's IEEE
 * operations on its own output point in the scalar code's order (reduced
 * index 0, 1, 2, ...), so the results are the scalar code's bits, at
 * every level and thread count. Output points whose group would cross the
 * end of the innermost loop dim or of the rows given run as scalar rows
 * (kernel_x86.c).
 *
 * A load or store may also walk across the lanes with a stride instead
 * (softmax over 10 classes: each lane one row of a [256, 10] input, the
 * reduced index along the row), its loop index the index of some outer
 * dim: it moves lane by lane through the frame (kernel_x86_vector.c),
 * still each lane's own elements in the scalar code's order.
 *
 * A lane touches only its own column: a load from a buffer shaped like an
 * output (possibly the same memory, a donated buffer) must index its
 * minor dim by the loop index itself, or, where that load or a store to
 * the output is strided, index by the loop index itself the dim that
 * every such store indexes by it; so reading a lane's elements never
 * sees another lane's stores, as in the scalar code's order. */
#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static int isa_lanes(const KernelX86 *x) {
  return x->cpu->level == CPU_LEVEL_AVX512 ? 16 : x->cpu->level == CPU_LEVEL_AVX2 ? 8 : 4;
}

static int minor_dim(const Shape *s) { return s->has_layout ? s->minor_to_major[0] : s->rank - 1; }

/* Whether index first + d of op is the loop's innermost index itself. */
static bool indexed_by_the_lane(const Kernel *k, const KernelOp *op, int first, int d) {
  const KernelOp *index = &k->ops[op->args[first + d]];
  return index->kop == KOP_INDEX && index->dim == k->rank - 1;
}

static bool is_memory(const KernelOp *op) { return op->kop == KOP_LOAD || op->kop == KOP_STORE; }

int64_t kernel_x86_column_stride(const KernelX86 *x, int i) {
  const Kernel *k = x->k;
  const KernelOp *op = &k->ops[i];
  if (!is_memory(op)) return 0;
  bool store = op->kop == KOP_STORE;
  const Shape *s = store ? &k->outputs[op->buffer].shape : &k->inputs[op->buffer].shape;
  int first = store ? 1 : 0;
  if (s->type != TYPE_F32) return 0;
  int64_t strides[AXLE_MAX_RANK], stride = 0;
  kernel_x86_layout_strides(s, strides);
  for (int d = 0; d < s->rank; d++) {
    int f = x->forms[op->args[first + d]];
    if (f == LANE_UNIFORM) continue;
    if (f != LANE_INNER) return 0;
    if (d == minor_dim(s) && strides[d] == 1) return 0; /* contiguous: a vector */
    stride += strides[d] * 4;
  }
  return stride;
}

/* Whether a load or store that is strided indexes by the loop index
 * itself every dim whose index varies across the lanes (not the loop
 * index plus an offset, whose lanes could meet each other's elements). */
static bool strided_access_allowed(const KernelX86 *x, int i) {
  const Kernel *k = x->k;
  const KernelOp *op = &k->ops[i];
  int64_t stride = kernel_x86_column_stride(x, i);
  if (stride <= 0 || stride * isa_lanes(x) > INT32_MAX) return false;
  bool store = op->kop == KOP_STORE;
  const Shape *s = store ? &k->outputs[op->buffer].shape : &k->inputs[op->buffer].shape;
  for (int d = 0; d < s->rank; d++)
    if (x->forms[op->args[(store ? 1 : 0) + d]] == LANE_INNER && !indexed_by_the_lane(k, op, store ? 1 : 0, d))
      return false;
  return true;
}

/* See the head of the file. */
static bool load_keeps_to_its_column(const KernelX86 *x, int load_index) {
  const Kernel *k = x->k;
  const KernelOp *load = &k->ops[load_index];
  const Shape *in = &k->inputs[load->buffer].shape;
  for (int b = 0; b < k->output_count; b++) {
    const Shape *out = &k->outputs[b].shape;
    if (in->type != out->type || !shape_same_dims(in, out)) continue;
    bool strided = kernel_x86_column_stride(x, load_index) != 0;
    for (int i = 0; i < k->op_count; i++)
      if (k->ops[i].kop == KOP_STORE && k->ops[i].buffer == b && kernel_x86_column_stride(x, i)) strided = true;
    if (!strided) {
      if (!indexed_by_the_lane(k, load, 0, minor_dim(in))) return false;
      continue;
    }
    bool shared_dim = false;
    for (int d = 0; d < in->rank && !shared_dim; d++) {
      shared_dim = indexed_by_the_lane(k, load, 0, d);
      for (int i = 0; i < k->op_count && shared_dim; i++)
        if (k->ops[i].kop == KOP_STORE && k->ops[i].buffer == b) shared_dim = indexed_by_the_lane(k, &k->ops[i], 1, d);
    }
    if (!shared_dim) return false;
  }
  return true;
}

/* Whether every looped write of an accumulator comes after every read of
 * it in its phase: then the write may go to the accumulator itself, not
 * to its next value (the scalar code's rule for a variadic reducer, which
 * reads every old value first). */
static bool accumulators_written_after_read(const Kernel *k) {
  for (int w = 0; w < k->op_count; w++) {
    const KernelOp *write = &k->ops[w];
    if (write->kop != KOP_ACC_WRITE || write->block != KBLOCK_REDUCE) continue;
    for (int r = w + 1; r < k->op_count; r++) {
      const KernelOp *read = &k->ops[r];
      if (read->kop == KOP_ACC_READ && read->acc == write->acc && read->block == KBLOCK_REDUCE &&
          read->phase == write->phase)
        return false;
    }
  }
  return true;
}

/* At avx512 up to four accumulators live in zmm28..31 (past the vector
 * math's zmm16..27) for the whole group: no store in a reduce trip. */
enum { COLUMN_ACC_REGISTER = 28, COLUMN_ACC_REGISTERS = 4 };

int kernel_x86_column_lanes(KernelX86 *x) {
  const Kernel *k = x->k;
  int lanes = isa_lanes(x);
  if (k->kind == KERNEL_LOOP || k->rank == 0 || k->dims[k->rank - 1] < lanes) return 0;
  for (int a = 0; a < k->acc_count; a++)
    if (k->acc_types[a] != TYPE_F32) return 0;
  x->vector_f64 = false;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    int f;
    if (op->kop == KOP_RINDEX) {
      f = LANE_UNIFORM;
    } else if (op->kop == KOP_ACC_READ) {
      f = LANE_VECTOR;
    } else if (op->kop == KOP_ACC_WRITE) {
      int value = x->forms[op->args[0]];
      f = value == LANE_VECTOR || value == LANE_BROADCAST ? LANE_VECTOR : -1;
    } else {
      f = kernel_x86_op_form(x, i);
    }
    /* a strided store of a vector value: lane by lane */
    if (f < 0 && op->kop == KOP_STORE && strided_access_allowed(x, i)) {
      int value = x->forms[op->args[0]];
      if (value == LANE_VECTOR || value == LANE_BROADCAST || value == LANE_GATHER) f = LANE_VECTOR;
    }
    /* a gather's lanes are other points' indices: only strided ones here */
    if (f < 0 || f == LANE_PER_LANE || (f == LANE_GATHER && !strided_access_allowed(x, i))) return 0;
    x->forms[i] = (uint8_t)f;
  }
  for (int i = 0; i < k->op_count; i++)
    if (k->ops[i].kop == KOP_LOAD && !load_keeps_to_its_column(x, i)) return 0;
  x->column_acc_registers = x->cpu->level == CPU_LEVEL_AVX512 && k->acc_count <= COLUMN_ACC_REGISTERS &&
                            accumulators_written_after_read(k);
  return lanes;
}

X86Operand kernel_x86_column_acc(const KernelX86 *x, int acc, bool next) {
  if (x->column_acc_registers) return x86_reg(x86_zmm(COLUMN_ACC_REGISTER + acc));
  return x86_mem(4 * x->lanes, X86_RSP, 8 * (x->column_acc_slot + KX_COLUMN_ACC_SLOTS * acc + (next ? 8 : 0)));
}

void kernel_x86_column_acc_copy(KernelX86 *x, bool reset) {
  if (x->column_acc_registers) return; /* written in place */
  bool sse = x->cpu->level == CPU_LEVEL_SSE4;
  X86Reg scratch = x->cpu->level == CPU_LEVEL_AVX512 ? x86_zmm(15) : x->cpu->level == CPU_LEVEL_AVX2 ? x86_ymm(15)
                                                                                                   : x86_xmm(15);
  for (int a = 0; a < x->k->acc_count; a++) {
    EMIT(sse ? X86_MOVUPS : X86_VMOVUPS, x86_reg(scratch), kernel_x86_column_acc(x, a, !reset));
    EMIT(sse ? X86_MOVUPS : X86_VMOVUPS, kernel_x86_column_acc(x, a, reset), x86_reg(scratch));
  }
}
