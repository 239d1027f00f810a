/* Lowering a fusion (or one op) to a kernel: see lower.h.
 *
 * lower_emit(inst, index) returns the kernel value of inst's element at a logical
 * index (one s64 kernel value per dimension of inst's shape). Leaves load
 * from the kernel's inputs; elementwise ops emit their operands at the same
 * index; data-movement ops rewrite the index first. A memo keyed by
 * (instruction, index values) makes a value used twice be computed once.
 *
 * requires: a verified module; fusions as the fusion pass leaves them
 * (a loop body, or reduces at the root). */
#include <stdlib.h>
#include <string.h>

#include "opt/lower_internal.h"

int lower_fail(Lower *L, const Instruction *inst, const char *why) {
  if (L->st->code == STATUS_OK)
    status_error(L->st, STATUS_UNSUPPORTED, "cannot lower %s (%s) to a kernel yet: %s", inst->name,
                 opcode_name(inst->opcode), why);
  return -1;
}

/* ---- building ops ---- */

/* A rank-0 index is NULL: nothing to copy (and memcpy may not see NULL). */
void lower_copy_index(int *dst, const int *src, int rank) {
  if (rank > 0) memcpy(dst, src, sizeof *src * (size_t)rank);
}

int lower_add_op(Lower *L, KernelOp op, const Instruction *origin) {
  op.block = L->block;
  op.phase = L->phase;
  op.origin = origin;
  return kernel_add_op(L->k, &op);
}

static int memo_find(const Lower *L, const Instruction *inst, int rank, const int *index) {
  for (int i = L->memo_count - 1; i >= 0; i--) {
    const MemoEntry *e = &L->memo[i];
    if (e->inst != inst || e->rank != rank) continue;
    /* PRE values hold for the whole point; others only in their own loop. */
    if (e->block != KBLOCK_PRE && (e->block != L->block || e->phase != L->phase)) continue;
    if (rank && memcmp(e->index, index, sizeof *index * (size_t)rank) != 0) continue;
    return e->value;
  }
  return -1;
}

static int memo_add(Lower *L, const Instruction *inst, int rank, const int *index, int value) {
  if (L->memo_count == L->memo_capacity) {
    L->memo_capacity = L->memo_capacity ? 2 * L->memo_capacity : 64;
    L->memo = mem_realloc(L->memo, sizeof *L->memo * (size_t)L->memo_capacity);
  }
  MemoEntry *e = &L->memo[L->memo_count++];
  memset(e, 0, sizeof *e);
  *e = (MemoEntry){.inst = inst, .block = L->block, .phase = L->phase, .rank = rank, .value = value};
  lower_copy_index(e->index, index, rank);
  return value;
}

/* s64 index arithmetic; constants and loop indices are made once, in PRE. */
int lower_k_s64(Lower *L, int64_t v) {
  for (int i = 0; i < L->k->op_count; i++) {
    const KernelOp *op = &L->k->ops[i];
    if (op->kop == KOP_CONSTANT && op->type == TYPE_S64 && op->block == KBLOCK_PRE && op->value.i == v) return i;
  }
  KernelBlock saved = L->block;
  L->block = KBLOCK_PRE;
  KernelOp op = {.kop = KOP_CONSTANT, .type = TYPE_S64, .value.i = v};
  int id = lower_add_op(L, op, NULL);
  L->block = saved;
  return id;
}

/* A loop index: KOP_INDEX once, in PRE; KOP_RINDEX once per phase, in the
 * phase's own loop (the current block). */
int lower_k_index(Lower *L, KernelOpcode kop, int dim) {
  for (int i = 0; i < L->k->op_count; i++) {
    const KernelOp *op = &L->k->ops[i];
    if (op->kop == kop && op->dim == dim && (kop == KOP_INDEX || op->phase == L->phase)) return i;
  }
  KernelBlock saved = L->block;
  if (kop == KOP_INDEX) L->block = KBLOCK_PRE;
  KernelOp op = {.kop = kop, .type = TYPE_S64, .dim = dim};
  int id = lower_add_op(L, op, NULL);
  L->block = saved;
  return id;
}

int lower_k_hlo(Lower *L, Opcode code, ElementType type, int a, int b, int c, const Instruction *origin) {
  KernelOp op = {.kop = KOP_HLO, .type = type, .op = code, .arg_count = b < 0 ? 1 : c < 0 ? 2 : 3};
  op.args[0] = a, op.args[1] = b, op.args[2] = c;
  return lower_add_op(L, op, origin);
}

int lower_k_compare(Lower *L, CompareDirection dir, int a, int b) {
  KernelOp op = {.kop = KOP_HLO, .type = TYPE_PRED, .op = OP_COMPARE, .direction = dir,
                 .compare_type = CMP_TYPE_SIGNED, .arg_count = 2};
  op.args[0] = a, op.args[1] = b;
  return lower_add_op(L, op, NULL);
}

static bool is_s64_constant(const Lower *L, int id, int64_t v) {
  const KernelOp *op = &L->k->ops[id];
  return op->kop == KOP_CONSTANT && op->type == TYPE_S64 && op->value.i == v;
}

/* i + 0 and i * 1 are i itself: a slice of stride 1 starting at 0 indexes
 * with the loop index unchanged, which the emitters read as contiguous
 * (a vector load on x86) rather than as an index computed per lane. */
int lower_k_add(Lower *L, int a, int b) {
  if (is_s64_constant(L, a, 0)) return b;
  if (is_s64_constant(L, b, 0)) return a;
  return lower_k_hlo(L, OP_ADD, TYPE_S64, a, b, -1, NULL);
}
int lower_k_sub(Lower *L, int a, int b) { return lower_k_hlo(L, OP_SUBTRACT, TYPE_S64, a, b, -1, NULL); }
int lower_k_mul(Lower *L, int a, int b) {
  if (is_s64_constant(L, a, 1)) return b;
  if (is_s64_constant(L, b, 1)) return a;
  return lower_k_hlo(L, OP_MULTIPLY, TYPE_S64, a, b, -1, NULL);
}
int lower_k_div(Lower *L, int a, int b) { return lower_k_hlo(L, OP_DIVIDE, TYPE_S64, a, b, -1, NULL); }
int lower_k_rem(Lower *L, int a, int b) { return lower_k_hlo(L, OP_REMAINDER, TYPE_S64, a, b, -1, NULL); }
int lower_k_and(Lower *L, int a, int b) { return lower_k_hlo(L, OP_AND, TYPE_PRED, a, b, -1, NULL); }

/* v clamped into [lo, hi] (constants). */
int lower_k_clamp(Lower *L, int v, int64_t lo, int64_t hi) {
  return lower_k_hlo(L, OP_MINIMUM, TYPE_S64, lower_k_hlo(L, OP_MAXIMUM, TYPE_S64, v, lower_k_s64(L, lo), -1, NULL), lower_k_s64(L, hi), -1,
               NULL);
}

/* A start index (of any integer type) as s64, clamped into [0, hi]. An
 * unsigned 64-bit index past INT64_MAX is large, not negative: it is
 * clamped in its own type first (narrower types convert exactly). */
int lower_k_clamped_start(Lower *L, int value, ElementType type, int64_t hi) {
  if (type == TYPE_U64) {
    KernelOp bound = {.kop = KOP_CONSTANT, .type = TYPE_U64, .value.i = hi};
    value = lower_k_hlo(L, OP_MINIMUM, TYPE_U64, value, lower_add_op(L, bound, NULL), -1, NULL);
  }
  if (type != TYPE_S64) value = lower_k_hlo(L, OP_CONVERT, TYPE_S64, value, -1, -1, NULL);
  return lower_k_clamp(L, value, 0, hi);
}

int lower_k_select(Lower *L, ElementType type, int p, int a, int b) {
  return lower_k_hlo(L, OP_SELECT, type, p, a, b, NULL);
}

/* ---- leaves ---- */

/* The kernel input an instruction is read from: a fused parameter, or an
 * operand of the single op being lowered. -1 when it is computed here. */
static int leaf_input(const Lower *L, const Instruction *inst) {
  if (L->computed && inst == L->computed) return L->computed_input;
  if (L->body) return inst->opcode == OP_PARAMETER && inst->parent == L->body ? (int)inst->attrs.parameter_number : -1;
  for (int i = 0; i < L->origin->operand_count; i++)
    if (L->origin->operands[i] == inst) return i;
  return -1;
}

static int emit_load(Lower *L, int input, const Instruction *inst, const int *index) {
  KernelOp op = {.kop = KOP_LOAD, .type = inst->shape.type, .buffer = input, .arg_count = inst->shape.rank};
  lower_copy_index(op.args, index, inst->shape.rank);
  return lower_add_op(L, op, inst);
}

/* Scalar constants become kernel constants; arrays (and complex scalars,
 * which a kernel constant cannot hold) become inputs of their own. */
static int emit_constant(Lower *L, const Instruction *inst, const int *index) {
  const Literal *lit = inst->attrs.literal;
  ElementType t = inst->shape.type;
  if (inst->shape.rank == 0 && !type_is_complex(t)) {
    KernelOp op = {.kop = KOP_CONSTANT, .type = t};
    if (type_is_float(t)) op.value.f = literal_get_f64(lit, 0);
    else op.value.i = literal_get_s64(lit, 0);
    return lower_add_op(L, op, inst);
  }
  for (int i = 0; i < L->k->input_count; i++)
    if (L->k->inputs[i].constant == lit) return emit_load(L, i, inst, index);
  int input = kernel_add_input(L->k, &inst->shape, inst, lit);
  return emit_load(L, input, inst, index);
}

/* ---- the walk ---- */

/* A bitcast-convert of a scalar to a scalar (the same width, so one
 * element each): an elementwise op for a scalar computation. A sort that
 * XLA optimized reads its float keys as integers through one. */
static bool scalar_bitcast_convert(const Instruction *inst) {
  return inst->opcode == OP_BITCAST_CONVERT && inst->shape.rank == 0 && inst->operands[0]->shape.rank == 0 &&
         type_is_complex(inst->shape.type) == type_is_complex(inst->operands[0]->shape.type);
}

/* A computation applied to scalars (a reducer, map's to_apply): its
 * instructions become ops, parameters take args, the root's values (one,
 * or the elements of a tuple) go to results. */
bool lower_emit_scalar_call(Lower *L, const Computation *c, const int *args, int *results, int result_count) {
  int *value = mem_calloc((size_t)c->instruction_count + 1, sizeof *value);
  bool ok = true;
  for (int i = 0; i < c->instruction_count && ok; i++) {
    const Instruction *inst = c->instructions[i];
    int operand_values[3] = {-1, -1, -1};
    for (int a = 0; a < inst->operand_count && a < 3; a++) operand_values[a] = value[inst->operands[a]->index];
    if (inst->opcode == OP_PARAMETER) {
      value[i] = args[inst->attrs.parameter_number];
    } else if (inst->opcode == OP_CONSTANT && inst->shape.rank == 0 && !type_is_complex(inst->shape.type)) {
      value[i] = emit_constant(L, inst, NULL);
    } else if (inst->opcode == OP_TUPLE) {
      value[i] = -1;
    } else if ((opcode_is_elementwise(inst->opcode) || scalar_bitcast_convert(inst)) && inst->operand_count <= 3 &&
               inst->shape.rank == 0) {
      KernelOp op = {.kop = KOP_HLO, .type = inst->shape.type, .op = inst->opcode, .arg_count = inst->operand_count,
                     .direction = inst->attrs.direction, .compare_type = inst->attrs.compare_type};
      memcpy(op.args, operand_values, sizeof operand_values);
      value[i] = lower_add_op(L, op, inst);
    } else {
      ok = lower_fail(L, inst, "only scalar elementwise ops can be applied per element") >= 0;
    }
  }
  if (ok) {
    const Instruction *root = c->root;
    if (root->opcode == OP_TUPLE) {
      for (int r = 0; r < result_count; r++) results[r] = value[root->operands[r]->index];
    } else {
      results[0] = value[root->index];
    }
  }
  mem_free(value);
  return ok;
}

/* The physical position of a logical index under a layout, and back:
 * minor_to_major[0] is the fastest-varying dimension in memory. */
static int physical_offset(Lower *L, const Shape *s, const int *index) {
  int offset = lower_k_s64(L, 0);
  for (int j = s->rank - 1; j >= 0; j--) {
    int d = s->minor_to_major[j];
    offset = lower_k_add(L, lower_k_mul(L, offset, lower_k_s64(L, s->dims[d])), index[d]);
  }
  return offset;
}

static void logical_index(Lower *L, const Shape *s, int offset, int *index) {
  for (int j = 0; j < s->rank; j++) {
    int d = s->minor_to_major[j];
    index[d] = lower_k_rem(L, offset, lower_k_s64(L, s->dims[d]));
    offset = lower_k_div(L, offset, lower_k_s64(L, s->dims[d]));
  }
}

/* Whether a and b list the same extents from minor to major. */
static bool dims_match_physically(const Shape *a, const Shape *b) {
  if (a->rank != b->rank) return false;
  for (int j = 0; j < a->rank; j++)
    if (a->dims[a->minor_to_major[j]] != b->dims[b->minor_to_major[j]]) return false;
  return true;
}

/* reshape reads the same row-major position; bitcast the same physical one. */
static int emit_relabel(Lower *L, const Instruction *inst, const int *index, bool physical) {
  const Instruction *x = inst->operands[0];
  if (x->shape.type != inst->shape.type) return lower_fail(L, inst, "a bitcast that changes the element type");
  if (x->shape.element_size_bits != inst->shape.element_size_bits)
    return lower_fail(L, inst, "a bitcast that packs or unpacks sub-byte elements");
  Shape out = inst->shape, in = x->shape;
  if (!physical) shape_set_default_layout(&out), shape_set_default_layout(&in);
  int operand_index[AXLE_MAX_RANK];
  if (dims_match_physically(&out, &in)) {
    /* The same extents in the same physical order (the same shape, or a
     * relabel such as canonicalize-convolutions makes): each operand dim
     * is one of ours, no division needed. */
    for (int j = 0; j < out.rank; j++) operand_index[in.minor_to_major[j]] = index[out.minor_to_major[j]];
  } else {
    logical_index(L, &in, physical_offset(L, &out, index), operand_index);
  }
  return lower_emit(L, x, operand_index);
}

static int emit_pad(Lower *L, const Instruction *inst, const int *index) {
  const Instruction *x = inst->operands[0];
  const PadDims *p = attrs_padding(&inst->attrs);
  int operand_index[AXLE_MAX_RANK], valid = -1;
  for (int d = 0; d < inst->shape.rank; d++) {
    /* t = i - lo lands on an operand element when t >= 0, t is a multiple of
     * interior+1, and t / (interior+1) < the operand's extent. */
    int t = lower_k_sub(L, index[d], lower_k_s64(L, p->lo[d]));
    int step = lower_k_s64(L, p->interior[d] + 1);
    int q = lower_k_div(L, t, step);
    int ok = lower_k_and(L, lower_k_compare(L, CMP_GE, t, lower_k_s64(L, 0)), lower_k_compare(L, CMP_LT, q, lower_k_s64(L, x->shape.dims[d])));
    if (p->interior[d]) ok = lower_k_and(L, ok, lower_k_compare(L, CMP_EQ, lower_k_rem(L, t, step), lower_k_s64(L, 0)));
    valid = valid < 0 ? ok : lower_k_and(L, valid, ok);
    operand_index[d] = lower_k_clamp(L, q, 0, x->shape.dims[d] > 0 ? x->shape.dims[d] - 1 : 0);
  }
  int padding = lower_emit(L, inst->operands[1], NULL);
  if (inst->shape.rank == 0) return lower_emit(L, x, NULL);
  int element = lower_emit(L, x, operand_index);
  if (element < 0 || padding < 0) return -1;
  return lower_k_select(L, inst->shape.type, valid, element, padding);
}

static int emit_concatenate(Lower *L, const Instruction *inst, const int *index) {
  int dim = (int)inst->attrs.dimensions.values[0];
  int64_t offsets[1024];
  if (inst->operand_count > 1024) return lower_fail(L, inst, "more than 1024 operands");
  int64_t at = 0;
  for (int j = 0; j < inst->operand_count; j++) offsets[j] = at, at += inst->operands[j]->shape.dims[dim];
  int result = -1;
  /* From the last operand back: each earlier one takes over below its end.
   * Some operand is not empty along dim: were all, the result would be
   * empty, which lower_emit reads without coming here. */
  for (int j = inst->operand_count - 1; j >= 0; j--) {
    const Instruction *x = inst->operands[j];
    if (x->shape.dims[dim] == 0) continue;
    int operand_index[AXLE_MAX_RANK];
    lower_copy_index(operand_index, index, inst->shape.rank);
    operand_index[dim] = lower_k_clamp(L, lower_k_sub(L, index[dim], lower_k_s64(L, offsets[j])), 0, x->shape.dims[dim] - 1);
    int v = lower_emit(L, x, operand_index);
    if (v < 0) return -1;
    result = result < 0 ? v
                        : lower_k_select(L, inst->shape.type,
                                   lower_k_compare(L, CMP_LT, index[dim], lower_k_s64(L, offsets[j] + x->shape.dims[dim])), v,
                                   result);
  }
  return result;
}

/* dynamic-slice and dynamic-update-slice clamp their starts so the window
 * stays inside the operand (HLO's rule). */
static void emit_clamped_starts(Lower *L, const Instruction *inst, int first, const Shape *operand,
                                const int64_t *sizes, int *starts) {
  for (int d = 0; d < operand->rank; d++) {
    const Instruction *s = inst->operands[first + d];
    int v = lower_emit(L, s, NULL);
    starts[d] = v < 0 ? -1 : lower_k_clamped_start(L, v, s->shape.type, operand->dims[d] - sizes[d]);
  }
}

static int emit_dynamic_update_slice(Lower *L, const Instruction *inst, const int *index) {
  const Instruction *x = inst->operands[0], *update = inst->operands[1];
  int starts[AXLE_MAX_RANK], update_index[AXLE_MAX_RANK], inside = -1;
  emit_clamped_starts(L, inst, 2, &x->shape, update->shape.dims, starts);
  for (int d = 0; d < x->shape.rank; d++) {
    int t = lower_k_sub(L, index[d], starts[d]);
    int ok = lower_k_and(L, lower_k_compare(L, CMP_GE, t, lower_k_s64(L, 0)), lower_k_compare(L, CMP_LT, t, lower_k_s64(L, update->shape.dims[d])));
    inside = inside < 0 ? ok : lower_k_and(L, inside, ok);
    update_index[d] = lower_k_clamp(L, t, 0, update->shape.dims[d] > 0 ? update->shape.dims[d] - 1 : 0);
  }
  int old = lower_emit(L, x, index);
  if (inside < 0) return lower_emit(L, update, update_index);
  int fresh = lower_emit(L, update, update_index);
  if (old < 0 || fresh < 0) return -1;
  return lower_k_select(L, inst->shape.type, inside, fresh, old);
}

/* A reduce read inside the kernel: its accumulator, once its phase is over
 * (in POST, or in a later phase: softmax's sum reads the max), and only at
 * the kernel's own output point (a broadcast back over the row gets there). */
static int emit_reduce_result(Lower *L, const Instruction *reduce, int element, const int *index) {
  for (int r = 0; r < L->reduce_count; r++) {
    if (L->reduces[r] != reduce) continue;
    for (int d = 0; d < L->k->rank; d++)
      if (index[d] != lower_k_index(L, KOP_INDEX, d)) return lower_fail(L, reduce, "its result is read at another index");
    if (L->block == KBLOCK_PRE || (L->block != KBLOCK_POST && L->reduce_phase[r] >= L->phase))
      return lower_fail(L, reduce, "its result is read before the reduction ends");
    KernelOp op = {.kop = KOP_ACC_READ, .type = L->k->acc_types[L->acc_base[r] + element],
                   .acc = L->acc_base[r] + element};
    return lower_add_op(L, op, reduce);
  }
  return lower_fail(L, reduce, "a reduce outside the kernel's reductions");
}

/* bitcast-convert between c64 [d...] and f32 [d..., 2] (c128 and f64):
 * the parts side by side, the last dimension picking one, as real and
 * imag (exact) read them. */
static int emit_complex_bitcast(Lower *L, const Instruction *inst, const int *index) {
  const Instruction *x = inst->operands[0];
  int rank = inst->shape.rank, operand_index[AXLE_MAX_RANK];
  if (type_is_complex(x->shape.type)) {
    if (type_complex_component(x->shape.type) != inst->shape.type)
      return lower_fail(L, inst, "a bitcast-convert of complex to another width");
    int z = lower_emit(L, x, index);
    if (z < 0) return -1;
    int re = lower_k_hlo(L, OP_REAL, inst->shape.type, z, -1, -1, inst);
    int im = lower_k_hlo(L, OP_IMAG, inst->shape.type, z, -1, -1, inst);
    return lower_k_select(L, inst->shape.type, lower_k_compare(L, CMP_EQ, index[rank - 1], lower_k_s64(L, 0)), re, im);
  }
  if (type_complex_component(inst->shape.type) != x->shape.type)
    return lower_fail(L, inst, "a bitcast-convert to complex from another width");
  lower_copy_index(operand_index, index, rank);
  operand_index[rank] = lower_k_s64(L, 0);
  int re = lower_emit(L, x, operand_index);
  operand_index[rank] = lower_k_s64(L, 1);
  int im = lower_emit(L, x, operand_index);
  if (re < 0 || im < 0) return -1;
  return lower_k_hlo(L, OP_COMPLEX, inst->shape.type, re, im, -1, inst);
}

/* The unsigned integer type of a width (2, 4, 8, 16, 32 or 64 bits). */
static ElementType unsigned_of_width(int bits) {
  return bits == 2 ? TYPE_U2 : bits == 4 ? TYPE_U4 : bits == 8 ? TYPE_U8 : bits == 16 ? TYPE_U16 : bits == 32 ? TYPE_U32 : TYPE_U64;
}

static int k_unsigned(Lower *L, ElementType t, int64_t v) {
  KernelOp op = {.kop = KOP_CONSTANT, .type = t, .value.i = v};
  return lower_add_op(L, op, NULL);
}

/* The bits of value v of type `from` as type `to` of the same width. A
 * sub-byte integer (s4, u2, ...) sits one a byte, sign- or zero-extended;
 * between such types of one width, convert wraps to the same bits. */
static int same_width_bits(Lower *L, const Instruction *inst, ElementType from, ElementType to, int v) {
  Opcode op = type_bit_width(from) < 8 ? OP_CONVERT : OP_BITCAST_CONVERT;
  return from == to ? v : lower_k_hlo(L, op, to, v, -1, -1, inst);
}

/* bitcast-convert between widths, on a little-endian machine as XLA's is:
 * a wide element is k narrow ones along a new last dimension of size k,
 * element 0 its lowest bits. Narrow to wide ORs the k parts, each shifted
 * to its place; wide to narrow shifts part j (the last index) down and
 * keeps the low bits. The bits travel as unsigned integers; a sub-byte
 * side must be an integer type (s2, s4, u2, u4: its bits are its value
 * wrapped), as the corpus's s4 -> s8 is. */
static int emit_width_bitcast(Lower *L, const Instruction *inst, const int *index) {
  const Instruction *x = inst->operands[0];
  int in_bits = type_bit_width(x->shape.type), out_bits = type_bit_width(inst->shape.type);
  ElementType in_u = unsigned_of_width(in_bits), out_u = unsigned_of_width(out_bits);
  for (int i = 0; i < 2; i++) {
    ElementType t = i ? inst->shape.type : x->shape.type;
    int bits = type_bit_width(t);
    bool sub_byte_integer = (bits == 2 || bits == 4) && type_is_integer(t);
    if (t == TYPE_PRED || (bits != 8 && bits != 16 && bits != 32 && bits != 64 && !sub_byte_integer))
      return lower_fail(L, inst, "a bitcast-convert between widths of pred or sub-byte float types");
  }
  int rank = inst->shape.rank, operand_index[AXLE_MAX_RANK], result;
  if (in_bits > out_bits) {
    int v = lower_emit(L, x, index);
    if (v < 0) return -1;
    int bits = same_width_bits(L, inst, x->shape.type, in_u, v);
    int shift = lower_k_hlo(L, OP_CONVERT, in_u, lower_k_mul(L, index[rank - 1], lower_k_s64(L, out_bits)), -1, -1, NULL);
    int part = lower_k_hlo(L, OP_SHIFT_RIGHT_LOGICAL, in_u, bits, shift, -1, inst);
    result = lower_k_hlo(L, OP_CONVERT, out_u, part, -1, -1, inst);
  } else {
    result = -1;
    lower_copy_index(operand_index, index, rank);
    for (int j = 0; j < out_bits / in_bits; j++) {
      operand_index[rank] = lower_k_s64(L, j);
      int v = lower_emit(L, x, operand_index);
      if (v < 0) return -1;
      int part = lower_k_hlo(L, OP_CONVERT, out_u, same_width_bits(L, inst, x->shape.type, in_u, v), -1, -1, inst);
      if (j) part = lower_k_hlo(L, OP_SHIFT_LEFT, out_u, part, k_unsigned(L, out_u, (int64_t)j * in_bits), -1, inst);
      result = result < 0 ? part : lower_k_hlo(L, OP_OR, out_u, result, part, -1, inst);
    }
  }
  return same_width_bits(L, inst, out_u, inst->shape.type, result);
}

static int emit_computed(Lower *L, const Instruction *inst, const int *index) {
  const IntList *dims = &inst->attrs.dimensions;
  int operand_index[AXLE_MAX_RANK];
  const Instruction *x = inst->operand_count ? inst->operands[0] : NULL;
  switch (inst->opcode) {
  case OP_CONSTANT: return emit_constant(L, inst, index);
  case OP_BROADCAST:
    for (int i = 0; i < dims->count; i++) operand_index[i] = index[dims->values[i]];
    return lower_emit(L, x, operand_index);
  case OP_TRANSPOSE:
    for (int i = 0; i < dims->count; i++) operand_index[dims->values[i]] = index[i];
    return lower_emit(L, x, operand_index);
  case OP_RESHAPE: return emit_relabel(L, inst, index, false);
  case OP_BITCAST: return emit_relabel(L, inst, index, true);
  case OP_COPY: return lower_emit(L, x, index);
  case OP_REVERSE:
    lower_copy_index(operand_index, index, inst->shape.rank);
    for (int i = 0; i < dims->count; i++) {
      int d = (int)dims->values[i];
      operand_index[d] = lower_k_sub(L, lower_k_s64(L, inst->shape.dims[d] - 1), index[d]);
    }
    return lower_emit(L, x, operand_index);
  case OP_SLICE: {
    const SliceDims *s = attrs_slice(&inst->attrs);
    for (int d = 0; d < inst->shape.rank; d++)
      operand_index[d] = lower_k_add(L, lower_k_s64(L, s->starts.values[d]), lower_k_mul(L, index[d], lower_k_s64(L, s->strides.values[d])));
    return lower_emit(L, x, operand_index);
  }
  case OP_IOTA: {
    int i = index[inst->attrs.iota_dimension];
    return inst->shape.type == TYPE_S64 ? i : lower_k_hlo(L, OP_CONVERT, inst->shape.type, i, -1, -1, inst);
  }
  case OP_PAD: return emit_pad(L, inst, index);
  case OP_CONCATENATE: return emit_concatenate(L, inst, index);
  case OP_DYNAMIC_SLICE: {
    int starts[AXLE_MAX_RANK];
    emit_clamped_starts(L, inst, 1, &x->shape, inst->shape.dims, starts);
    for (int d = 0; d < inst->shape.rank; d++) operand_index[d] = lower_k_add(L, starts[d], index[d]);
    return lower_emit(L, x, operand_index);
  }
  case OP_DYNAMIC_UPDATE_SLICE: return emit_dynamic_update_slice(L, inst, index);
  case OP_GATHER: return lower_emit_gather(L, inst, index);
  case OP_REDUCE: return emit_reduce_result(L, inst, 0, index);
  case OP_GET_TUPLE_ELEMENT:
    if (x->opcode == OP_REDUCE) return emit_reduce_result(L, x, (int)inst->attrs.tuple_index, index);
    return lower_fail(L, inst, "a tuple inside a kernel");
  case OP_MAP: {
    int args[AXLE_MAX_RANK], result;
    if (inst->operand_count > AXLE_MAX_RANK) return lower_fail(L, inst, "too many operands");
    for (int i = 0; i < inst->operand_count; i++)
      if ((args[i] = lower_emit(L, inst->operands[i], index)) < 0) return -1;
    return lower_emit_scalar_call(L, inst->called[0], args, &result, 1) ? result : -1;
  }
  default: break;
  }
  if (inst->opcode == OP_BITCAST_CONVERT && type_is_complex(x->shape.type) != type_is_complex(inst->shape.type))
    return emit_complex_bitcast(L, inst, index);
  if (opcode_is_elementwise(inst->opcode) || inst->opcode == OP_BITCAST_CONVERT) {
    if (inst->opcode == OP_BITCAST_CONVERT && type_bit_width(x->shape.type) != type_bit_width(inst->shape.type))
      return emit_width_bitcast(L, inst, index);
    KernelOp op = {.kop = KOP_HLO, .type = inst->shape.type, .op = inst->opcode, .arg_count = inst->operand_count,
                   .direction = inst->attrs.direction, .compare_type = inst->attrs.compare_type};
    for (int i = 0; i < inst->operand_count; i++) {
      /* clamp's bounds (and select's predicate) may be scalars. */
      const Instruction *operand = inst->operands[i];
      op.args[i] = lower_emit(L, operand, operand->shape.rank ? index : NULL);
      if (op.args[i] < 0) return -1;
    }
    return lower_add_op(L, op, inst);
  }
  return lower_fail(L, inst, "no kernel form for this op yet");
}

/* An empty value (a dimension of size 0) has no elements, and when the
 * program computes it, no storage either. Every read of one is discarded by
 * a select (a dynamic-update-slice of an empty update, a pad or concatenate
 * of an empty operand, a window over padding alone): it reads as a zero of
 * its type, and nothing is loaded or computed. */
static int emit_empty(Lower *L, const Instruction *inst) {
  ElementType t = inst->shape.type;
  KernelOp zero = {.kop = KOP_CONSTANT, .type = type_is_complex(t) ? type_complex_component(t) : t};
  int v = lower_add_op(L, zero, inst);
  return type_is_complex(t) ? lower_k_hlo(L, OP_COMPLEX, t, v, v, -1, inst) : v;
}

int lower_emit(Lower *L, const Instruction *inst, const int *index) {
  if (L->st->code != STATUS_OK) return -1;
  int rank = shape_is_tuple(&inst->shape) ? 0 : inst->shape.rank;
  int memo = memo_find(L, inst, rank, index);
  if (memo >= 0) return memo;
  /* (A token is of rank 0 and no bytes, not an empty array.) */
  if (rank > 0 && shape_element_count(&inst->shape) == 0) return memo_add(L, inst, rank, index, emit_empty(L, inst));
  int input = leaf_input(L, inst);
  int v = input >= 0 ? emit_load(L, input, inst, index) : emit_computed(L, inst, index);
  return v < 0 ? -1 : memo_add(L, inst, rank, index, v);
}

/* ---- kernels ---- */

static void add_inputs(Lower *L) {
  for (int i = 0; i < L->origin->operand_count; i++) {
    const Instruction *operand = L->origin->operands[i];
    kernel_add_input(L->k, &operand->shape, operand, NULL);
  }
}

/* The values the kernel stores, one for each leaf of the root's shape in
 * depth-first order (the leaf numbers the buffer plan gives the fusion's
 * results): a root that is no tuple; the elements of a tuple root, each in
 * turn and nested tuples within them; and every element of a variadic
 * reduce, at the root or inside a tuple root (XLA's argmax fusions: a
 * reduce over (value, iota) is two leaves). Element e of a variadic reduce
 * is outputs[o] = the reduce with L->output_element[o] = e. Returns the new
 * count, or -1 after lower_fail. */
static int root_outputs(Lower *L, const Instruction *v, const Instruction **outputs, int count) {
  if (v->opcode == OP_TUPLE) {
    for (int i = 0; i < v->operand_count && count >= 0; i++) count = root_outputs(L, v->operands[i], outputs, count);
    return count;
  }
  bool variadic = shape_is_tuple(&v->shape);
  if (variadic && v->opcode != OP_REDUCE) return lower_fail(L, v, "a tuple-valued result that is not a reduce");
  for (int e = 0; e < (variadic ? v->shape.tuple_count : 1); e++) {
    if (count == AXLE_MAX_RANK) return lower_fail(L, v, "more than 16 outputs");
    outputs[count] = v;
    L->output_element[count++] = variadic ? e : -1;
  }
  return count;
}

void lower_emit_store(Lower *L, int buffer, int value, const int *index, int rank, const Instruction *origin) {
  KernelOp op = {.kop = KOP_STORE, .type = L->k->outputs[buffer].shape.type, .buffer = buffer, .arg_count = rank + 1};
  op.args[0] = value;
  lower_copy_index(op.args + 1, index, rank);
  lower_add_op(L, op, origin);
}

bool lower_loop(Lower *L, const Instruction **outputs, int count) {
  const Shape *space = &outputs[0]->shape;
  L->k->rank = space->rank;
  memcpy(L->k->dims, space->dims, sizeof space->dims);
  int index[AXLE_MAX_RANK];
  for (int d = 0; d < space->rank; d++) index[d] = lower_k_index(L, KOP_INDEX, d);
  for (int o = 0; o < count; o++) {
    if (shape_is_tuple(&outputs[o]->shape) || !shape_same_dims(&outputs[o]->shape, space))
      return lower_fail(L, outputs[o], "outputs of different shapes in one loop") >= 0;
    kernel_add_output(L->k, &outputs[o]->shape, L->origin, o);
  }
  for (int o = 0; o < count; o++) {
    int v = lower_emit(L, outputs[o], index);
    if (v < 0) return false;
    lower_emit_store(L, o, v, index, space->rank, outputs[o]);
  }
  return true;
}

/* The phase of every reduce: one more than the latest phase any reduce it
 * reads belongs to (softmax's sum reads the max: phase 1 after phase 0).
 * Reduces of one phase share one loop. Returns the number of phases. */
static int assign_phases(Lower *L, const Computation *body) {
  int phases = 1;
  if (!body) {
    L->reduce_phase[0] = 0;
    return 1;
  }
  int *depth = mem_calloc((size_t)body->instruction_count + 1, sizeof *depth);
  for (int i = 0; i < body->instruction_count; i++) {
    const Instruction *inst = body->instructions[i];
    int d = 0;
    for (int a = 0; a < inst->operand_count; a++)
      if (depth[inst->operands[a]->index] > d) d = depth[inst->operands[a]->index];
    if (inst->opcode == OP_REDUCE) {
      for (int r = 0; r < L->reduce_count; r++)
        if (L->reduces[r] == inst) L->reduce_phase[r] = d;
      if (d + 1 > phases) phases = d + 1;
      d++;
    }
    depth[i] = d;
  }
  mem_free(depth);
  return phases;
}

/* Every reduce of the kernel, in order: those of the fused computation, or
 * the op itself. They must reduce the same dimensions of operands of the
 * same dims: they then share the loops and stack their accumulators. */
static const Instruction *collect_reduces(Lower *L) {
  const Computation *body = L->body;
  int n = body ? body->instruction_count : 1;
  for (int i = 0; i < n; i++) {
    const Instruction *r = body ? body->instructions[i] : L->origin;
    if (r->opcode != OP_REDUCE) continue;
    const Instruction *first = L->reduce_count ? L->reduces[0] : r;
    const IntList *dims = &first->attrs.dimensions;
    if (!shape_same_dims(&r->operands[0]->shape, &first->operands[0]->shape) || r->attrs.dimensions.count != dims->count ||
        memcmp(r->attrs.dimensions.values, dims->values, sizeof *dims->values * (size_t)dims->count) != 0) {
      lower_fail(L, r, "reduces of different dimensions in one kernel");
      return NULL;
    }
    if (L->reduce_count == AXLE_MAX_RANK) {
      lower_fail(L, r, "too many reduces in one kernel");
      return NULL;
    }
    L->reduces[L->reduce_count++] = r;
  }
  return L->reduce_count ? L->reduces[0] : NULL;
}

/* PRE: each reduce's initial values into its accumulators. */
bool lower_emit_initial_values(Lower *L) {
  Kernel *k = L->k;
  for (int r = 0; r < L->reduce_count; r++) {
    const Instruction *reduce = L->reduces[r];
    int n = reduce->operand_count / 2;
    if (k->acc_count + n > AXLE_MAX_RANK) return lower_fail(L, reduce, "too many accumulators") >= 0;
    L->acc_base[r] = k->acc_count;
    for (int i = 0; i < n; i++) {
      int init = lower_emit(L, reduce->operands[n + i], NULL);
      if (init < 0) return false;
      k->acc_types[k->acc_count] = reduce->operands[n + i]->shape.type;
      KernelOp write = {.kop = KOP_ACC_WRITE, .type = k->acc_types[k->acc_count], .acc = k->acc_count, .arg_count = 1};
      write.args[0] = init;
      lower_add_op(L, write, reduce);
      k->acc_count++;
    }
  }
  return true;
}

/* One REDUCE phase: each of its reduces reads its operands' elements and
 * applies the reducer to (accumulators, elements). */
static bool emit_reduce_phase(Lower *L, int phase, const int *operand_index) {
  Kernel *k = L->k;
  for (int r = 0; r < L->reduce_count; r++) {
    if (L->reduce_phase[r] != phase) continue;
    const Instruction *reduce = L->reduces[r];
    int n = reduce->operand_count / 2, args[2 * AXLE_MAX_RANK], results[AXLE_MAX_RANK];
    for (int i = 0; i < n; i++) {
      KernelOp read = {.kop = KOP_ACC_READ, .type = k->acc_types[L->acc_base[r] + i], .acc = L->acc_base[r] + i};
      args[i] = lower_add_op(L, read, reduce);
      if ((args[n + i] = lower_emit(L, reduce->operands[i], operand_index)) < 0) return false;
    }
    if (!lower_emit_scalar_call(L, reduce->called[0], args, results, n)) return false;
    for (int i = 0; i < n; i++) {
      KernelOp write = {.kop = KOP_ACC_WRITE, .type = k->acc_types[L->acc_base[r] + i], .acc = L->acc_base[r] + i,
                        .arg_count = 1};
      write.args[0] = results[i];
      lower_add_op(L, write, reduce);
    }
  }
  return true;
}

/* The operand index of the reduces in the current phase: kept dims are the
 * outer loop's, reduced dims (in increasing order) the phase's own loop. */
static void reduce_operand_index(Lower *L, const int *outer_of, const int *inner_of, const int *outer, int rank,
                                 int *operand_index) {
  for (int d = 0; d < rank; d++)
    operand_index[d] = outer_of[d] >= 0 ? outer[outer_of[d]] : lower_k_index(L, KOP_RINDEX, inner_of[d]);
}

/* The shape output o stores: element output_element[o] of a variadic reduce. */
static const Shape *output_shape(const Lower *L, const Instruction **outputs, int o) {
  const Instruction *output = outputs[o];
  return shape_is_tuple(&output->shape) ? &output->shape.tuple_shapes[L->output_element[o]] : &output->shape;
}

/* Reduce and row kernels. Outputs of the reduced shape are stored in POST;
 * outputs of the row's shape (softmax's result) in a last ROW phase. */
static bool lower_reduce(Lower *L, const Instruction **outputs, int count) {
  const Instruction *first = collect_reduces(L);
  if (!first) return false;
  const Shape *in = &first->operands[0]->shape;
  const Shape *reduced = shape_is_tuple(&first->shape) ? &first->shape.tuple_shapes[0] : &first->shape;
  const IntList *dims = &first->attrs.dimensions;
  Kernel *k = L->k;
  int outer_of[AXLE_MAX_RANK], inner_of[AXLE_MAX_RANK];
  for (int d = 0; d < in->rank; d++) {
    bool reduced = false;
    for (int j = 0; j < dims->count; j++) reduced |= dims->values[j] == d;
    if (reduced) inner_of[d] = k->reduce_rank, outer_of[d] = -1, k->reduce_dims[k->reduce_rank++] = in->dims[d];
    else outer_of[d] = k->rank, inner_of[d] = -1, k->dims[k->rank++] = in->dims[d];
  }
  bool has_row_output = false;
  for (int o = 0; o < count; o++) {
    const Shape *s = output_shape(L, outputs, o);
    if (shape_is_tuple(s) || (!shape_same_dims(s, reduced) && !shape_same_dims(s, in)))
      return lower_fail(L, outputs[o], "an output of neither the row's nor the reduced shape") >= 0;
    has_row_output |= !shape_same_dims(s, reduced);
    kernel_add_output(k, s, L->origin, o);
  }
  int phases = assign_phases(L, L->body);
  k->phase_count = phases + has_row_output;
  if (k->phase_count > AXLE_MAX_RANK) return lower_fail(L, first, "too many passes over the row") >= 0;
  for (int p = 0; p < k->phase_count; p++) k->phase_blocks[p] = p < phases ? KBLOCK_REDUCE : KBLOCK_ROW;
  k->kind = k->phase_count == 1 ? KERNEL_REDUCE : KERNEL_ROW;

  int outer[AXLE_MAX_RANK], operand_index[AXLE_MAX_RANK];
  for (int d = 0; d < k->rank; d++) outer[d] = lower_k_index(L, KOP_INDEX, d);
  if (!lower_emit_initial_values(L)) return false;
  for (int p = 0; p < phases; p++) {
    L->block = KBLOCK_REDUCE, L->phase = p;
    reduce_operand_index(L, outer_of, inner_of, outer, in->rank, operand_index);
    if (!emit_reduce_phase(L, p, operand_index)) return false;
  }
  if (has_row_output) {
    L->block = KBLOCK_ROW, L->phase = phases;
    reduce_operand_index(L, outer_of, inner_of, outer, in->rank, operand_index);
    for (int o = 0; o < count; o++) {
      if (shape_same_dims(output_shape(L, outputs, o), reduced)) continue;
      int v = lower_emit(L, outputs[o], operand_index);
      if (v < 0) return false;
      lower_emit_store(L, o, v, operand_index, in->rank, outputs[o]);
    }
  }
  L->block = KBLOCK_POST, L->phase = 0;
  for (int o = 0; o < count; o++) {
    if (!shape_same_dims(output_shape(L, outputs, o), reduced)) continue;
    int v = shape_is_tuple(&outputs[o]->shape) ? emit_reduce_result(L, outputs[o], L->output_element[o], outer)
                                                : lower_emit(L, outputs[o], outer);
    if (v < 0) return false;
    lower_emit_store(L, o, v, outer, k->rank, outputs[o]);
  }
  return true;
}

/* A kernel reduces when the op is a reduce or its fused computation holds one. */
static bool has_reduce(const Lower *L) {
  if (!L->body) return L->origin->opcode == OP_REDUCE;
  for (int i = 0; i < L->body->instruction_count; i++)
    if (L->body->instructions[i]->opcode == OP_REDUCE) return true;
  return false;
}

Kernel *lower_finish(Lower *L, const char *name, bool ok) {
  mem_free(L->memo);
  L->memo = NULL;
  if (!ok || L->st->code != STATUS_OK) {
    if (L->st->code == STATUS_OK) status_error(L->st, STATUS_UNSUPPORTED, "cannot lower %s", name);
    kernel_free(L->k);
    return NULL;
  }
  kernel_order_blocks(L->k);
  return L->k;
}

static Kernel *lower_kernel(const Instruction *inst, const Instruction *computed, Status *st) {
  Lower L = {.origin = inst, .st = st, .block = KBLOCK_PRE, .computed = computed};
  L.body = inst->opcode == OP_FUSION ? inst->called[0] : NULL;
  L.k = kernel_create(inst->name, inst, KERNEL_LOOP);
  add_inputs(&L);
  if (computed) L.computed_input = kernel_add_input(L.k, &computed->shape, computed, NULL);
  const Instruction *outputs[AXLE_MAX_RANK];
  int count;
  if (L.body) {
    count = root_outputs(&L, L.body->root, outputs, 0);
  } else if (inst->opcode == OP_REDUCE && shape_is_tuple(&inst->shape)) {
    count = root_outputs(&L, inst, outputs, 0);  /* a variadic reduce alone: its elements */
  } else if (inst->opcode == OP_REDUCE_WINDOW) {
    count = 0;  /* lower_reduce_window (lower_window.c) makes its own outputs */
  } else if (shape_is_tuple(&inst->shape)) {
    lower_fail(&L, inst, "no kernel form for this op yet");
    count = -1;
  } else {
    outputs[0] = inst;
    count = 1;
  }
  bool ok = count > 0 && st->code == STATUS_OK;
  if (count < 0 && st->code == STATUS_OK) lower_fail(&L, inst, "more than 16 outputs");
  if (inst->opcode == OP_REDUCE_WINDOW && st->code == STATUS_OK) ok = lower_reduce_window(&L);
  else if (ok) ok = has_reduce(&L) ? lower_reduce(&L, outputs, count) : lower_loop(&L, outputs, count);
  return lower_finish(&L, inst->name, ok);
}

Kernel *lower_to_kernel(const Instruction *inst, Status *st) { return lower_kernel(inst, NULL, st); }

Kernel *lower_epilogue(const Instruction *fusion, const Instruction *dot, Status *st) {
  if (fusion->opcode != OP_FUSION || dot->parent != fusion->called[0]) {
    status_error(st, STATUS_UNSUPPORTED, "cannot lower %s: %s is not in its fused computation", fusion->name,
                 dot->name);
    return NULL;
  }
  return lower_kernel(fusion, dot, st);
}

/* A computation on scalars as a rank-0 kernel (a sort's comparator): one
 * input per parameter, in parameter order, then any constants the body
 * holds; one output, the root. The kernel computes one application, so a
 * runtime routine can call it once per pair of elements it compares. */
Kernel *lower_scalar_computation(const Computation *c, const Instruction *origin, Status *st) {
  Lower L = {.origin = origin, .body = c, .st = st, .block = KBLOCK_PRE};
  L.k = kernel_create(c->name ? c->name : origin->name, origin, KERNEL_LOOP);
  const Instruction *root = c->root;
  bool ok = root && !shape_is_tuple(&root->shape) && root->shape.rank == 0;
  if (!ok) lower_fail(&L, origin, "a computation whose root is not a scalar");
  for (int i = 0; ok && i < c->parameter_count; i++) {
    const Instruction *param = c->parameters[i];
    ok = param && !shape_is_tuple(&param->shape) && param->shape.rank == 0;
    if (!ok) lower_fail(&L, origin, "a computation with a parameter that is not a scalar");
    else kernel_add_input(L.k, &param->shape, param, NULL);
  }
  int *args = mem_calloc((size_t)c->parameter_count + 1, sizeof *args);
  for (int i = 0; ok && i < c->parameter_count; i++) args[i] = emit_load(&L, i, c->parameters[i], NULL);
  int result = -1;
  if (ok) ok = lower_emit_scalar_call(&L, c, args, &result, 1) && result >= 0;
  if (ok) {
    kernel_add_output(L.k, &root->shape, origin, 0);
    lower_emit_store(&L, 0, result, NULL, 0, root);
  }
  mem_free(args);
  return lower_finish(&L, c->name ? c->name : "a computation", ok);
}
