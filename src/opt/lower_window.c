/* Lowering the windowed ops: reduce-window, and select-and-scatter as two
 * kernels (see lower.h). Each is a reduce kernel whose reduced dimensions
 * are the window's, with padding, strides and both dilations handled by
 * index arithmetic.
 *
 * In the padded, dilated base
 *     P P E h h E h h E P P        (P padding, E element, h dilation hole)
 * window element w of placement o sits at o*stride + w*rhs_dilate, and base
 * element b at pad_lo + b*lhs_dilate. A window position on padding or on a
 * hole holds no element: reductions skip it (the accumulators keep their
 * values) and select never picks it, as XLA's evaluator does. The kernel
 * loads at a clamped index (always in bounds) and selects on `valid`; over
 * an empty base no position is valid and nothing is loaded (lower_emit
 * reads an empty value as a zero). */
#include <stdlib.h>

#include "opt/lower_internal.h"

/* ANDs a condition into *valid (-1: true so far). */
static void valid_and(Lower *L, int *valid, int condition) {
  *valid = *valid < 0 ? condition : lower_k_and(L, *valid, condition);
}

/* v * factor, leaving out a multiplication by 1. */
static int k_scaled(Lower *L, int v, int64_t factor) { return factor == 1 ? v : lower_k_mul(L, v, lower_k_s64(L, factor)); }

/* The base index of window element `window` of placement `placement` along
 * dim d, clamped into the base; *valid learns whether it is an element.
 * Checks that can never fail for these extents are left out. */
static int window_base_index(Lower *L, const WindowDim *wd, int64_t base_dim, int64_t placements, int placement,
                             int window, int *valid) {
  int at = lower_k_add(L, k_scaled(L, placement, wd->stride), k_scaled(L, window, wd->rhs_dilate));
  if (wd->pad_lo) at = lower_k_sub(L, at, lower_k_s64(L, wd->pad_lo));
  int64_t lowest = -wd->pad_lo;
  int64_t highest = (placements - 1) * wd->stride + (wd->size - 1) * wd->rhs_dilate - wd->pad_lo;
  if (wd->lhs_dilate > 1) {
    int step = lower_k_s64(L, wd->lhs_dilate);
    valid_and(L, valid, lower_k_compare(L, CMP_EQ, lower_k_rem(L, at, step), lower_k_s64(L, 0)));
    at = lower_k_div(L, at, step);
    highest /= wd->lhs_dilate;
  }
  if (lowest < 0) valid_and(L, valid, lower_k_compare(L, CMP_GE, at, lower_k_s64(L, 0)));
  if (highest >= base_dim) valid_and(L, valid, lower_k_compare(L, CMP_LT, at, lower_k_s64(L, base_dim)));
  if (lowest >= 0 && highest < base_dim) return at;
  return lower_k_clamp(L, at, 0, base_dim > 0 ? base_dim - 1 : 0);
}

/* A reduce kernel over `space` (the placements) and the window's dims. */
static void window_kernel_shape(Kernel *k, const Shape *space, const Window *w) {
  k->kind = KERNEL_REDUCE;
  k->phase_count = 1;
  k->phase_blocks[0] = KBLOCK_REDUCE;
  k->rank = space->rank;
  for (int d = 0; d < space->rank; d++) k->dims[d] = space->dims[d];
  k->reduce_rank = w->rank;
  for (int d = 0; d < w->rank; d++) k->reduce_dims[d] = w->dims[d].size;
}

/* The base index under window element `window` of placement `placement`
 * (loop values), clamped, with its validity in *valid (-1: always). */
static void window_base_point(Lower *L, const Window *w, const Shape *base, const Shape *space, const int *placement,
                              const int *window, int *base_index, int *valid) {
  *valid = -1;
  for (int d = 0; d < base->rank; d++)
    base_index[d] = window_base_index(L, &w->dims[d], base->dims[d], space->dims[d], placement[d], window[d], valid);
}

static void acc_write(Lower *L, int acc, int value, const Instruction *origin) {
  KernelOp write = {.kop = KOP_ACC_WRITE, .type = L->k->acc_types[acc], .acc = acc, .arg_count = 1};
  write.args[0] = value;
  lower_add_op(L, write, origin);
}

static int acc_read(Lower *L, int acc, const Instruction *origin) {
  KernelOp read = {.kop = KOP_ACC_READ, .type = L->k->acc_types[acc], .acc = acc};
  return lower_add_op(L, read, origin);
}

/* reduce-window(inputs..., inits...): each accumulator starts at its init
 * and, at every window position that is an element, becomes the reducer
 * applied to (accumulators..., elements...). */
bool lower_reduce_window(Lower *L) {
  const Instruction *inst = L->origin;
  if (L->body) return lower_fail(L, inst, "a reduce-window inside a fusion") >= 0;
  int n = inst->operand_count / 2;
  const Window *w = attrs_window(&inst->attrs);
  const Shape *base = &inst->operands[0]->shape;
  const Shape *space = shape_is_tuple(&inst->shape) ? &inst->shape.tuple_shapes[0] : &inst->shape;
  if (n > AXLE_MAX_RANK) return lower_fail(L, inst, "too many accumulators") >= 0;
  Kernel *k = L->k;
  window_kernel_shape(k, space, w);
  for (int o = 0; o < n; o++)
    kernel_add_output(k, shape_is_tuple(&inst->shape) ? &inst->shape.tuple_shapes[o] : &inst->shape, inst, o);
  int placement[AXLE_MAX_RANK], window[AXLE_MAX_RANK], base_index[AXLE_MAX_RANK], valid;
  for (int d = 0; d < space->rank; d++) placement[d] = lower_k_index(L, KOP_INDEX, d);
  L->reduces[0] = inst, L->reduce_count = 1;
  if (!lower_emit_initial_values(L)) return false;

  L->block = KBLOCK_REDUCE, L->phase = 0;
  for (int d = 0; d < w->rank; d++) window[d] = lower_k_index(L, KOP_RINDEX, d);
  window_base_point(L, w, base, space, placement, window, base_index, &valid);
  int args[2 * AXLE_MAX_RANK], results[AXLE_MAX_RANK];
  for (int i = 0; i < n; i++) {
    args[i] = acc_read(L, i, inst);
    if ((args[n + i] = lower_emit(L, inst->operands[i], base_index)) < 0) return false;
  }
  if (!lower_emit_scalar_call(L, inst->called[0], args, results, n)) return false;
  for (int i = 0; i < n; i++)
    acc_write(L, i, valid < 0 ? results[i] : lower_k_select(L, k->acc_types[i], valid, results[i], args[i]), inst);

  L->block = KBLOCK_POST;
  for (int i = 0; i < n; i++) lower_emit_store(L, i, acc_read(L, i, inst), placement, space->rank, inst);
  return true;
}

/* ---- select-and-scatter ---- */

/* The row-major position of a logical index in shape s (s64 values). */
static int row_major_position(Lower *L, const Shape *s, const int *index) {
  if (s->rank == 0) return lower_k_s64(L, 0);
  int at = index[0];
  for (int d = 1; d < s->rank; d++) at = lower_k_add(L, k_scaled(L, at, s->dims[d]), index[d]);
  return at;
}

/* Part 0: for each placement, the window position select picks. The first
 * element of the window is picked at first; each element (the first
 * included, as XLA does) replaces the pick when select(pick, element) is
 * false. acc0 holds the picked value, acc1 its position (-1: none yet). */
static bool lower_selection(Lower *L, const Shape *selection) {
  const Instruction *inst = L->origin;
  const Instruction *operand = inst->operands[0];
  const Window *w = attrs_window(&inst->attrs);
  Kernel *k = L->k;
  window_kernel_shape(k, selection, w);
  kernel_add_output(k, selection, inst, 0);
  int placement[AXLE_MAX_RANK], window[AXLE_MAX_RANK], base_index[AXLE_MAX_RANK], valid;
  for (int d = 0; d < selection->rank; d++) placement[d] = lower_k_index(L, KOP_INDEX, d);
  k->acc_count = 2;
  k->acc_types[0] = operand->shape.type, k->acc_types[1] = TYPE_S64;
  int placeholder = lower_emit(L, inst->operands[2], NULL); /* never compared: acc1 says none */
  if (placeholder < 0) return false;
  acc_write(L, 0, placeholder, inst);
  acc_write(L, 1, lower_k_s64(L, -1), inst);

  L->block = KBLOCK_REDUCE, L->phase = 0;
  for (int d = 0; d < w->rank; d++) window[d] = lower_k_index(L, KOP_RINDEX, d);
  window_base_point(L, w, &operand->shape, selection, placement, window, base_index, &valid);
  int args[2] = {acc_read(L, 0, inst), lower_emit(L, operand, base_index)}, keep;
  int picked = acc_read(L, 1, inst);
  if (args[1] < 0 || !lower_emit_scalar_call(L, inst->called[0], args, &keep, 1)) return false;
  int none_yet = lower_k_compare(L, CMP_LT, picked, lower_k_s64(L, 0));
  int take = lower_k_hlo(L, OP_OR, TYPE_PRED, none_yet, lower_k_hlo(L, OP_NOT, TYPE_PRED, keep, -1, -1, NULL), -1, NULL);
  if (valid >= 0) take = lower_k_and(L, valid, take);
  acc_write(L, 0, lower_k_select(L, k->acc_types[0], take, args[1], args[0]), inst);
  int position = row_major_position(L, &operand->shape, base_index);
  acc_write(L, 1, lower_k_select(L, TYPE_S64, take, position, picked), inst);

  L->block = KBLOCK_POST;
  lower_emit_store(L, 0, acc_read(L, 1, inst), placement, selection->rank, inst);
  return true;
}

/* The placement along dim d whose window element (size-1-r) lands on base
 * element `at`, clamped; *valid learns whether there is one. Walking r up
 * walks placements up, so the scatter meets them in row-major order. */
static int window_placement(Lower *L, const WindowDim *wd, int64_t base_dim, int64_t placements, int at, int r,
                            int *valid) {
  int element = lower_k_sub(L, lower_k_s64(L, wd->size - 1), r);
  int t = k_scaled(L, at, wd->lhs_dilate);
  if (wd->pad_lo) t = lower_k_add(L, t, lower_k_s64(L, wd->pad_lo));
  t = lower_k_sub(L, t, k_scaled(L, element, wd->rhs_dilate));
  int64_t lowest = wd->pad_lo - (wd->size - 1) * wd->rhs_dilate;
  int64_t highest = (base_dim - 1) * wd->lhs_dilate + wd->pad_lo;
  if (wd->stride > 1) {
    int step = lower_k_s64(L, wd->stride);
    valid_and(L, valid, lower_k_compare(L, CMP_EQ, lower_k_rem(L, t, step), lower_k_s64(L, 0)));
    t = lower_k_div(L, t, step);
    highest = highest < 0 ? highest : highest / wd->stride;
  }
  if (lowest < 0) valid_and(L, valid, lower_k_compare(L, CMP_GE, t, lower_k_s64(L, 0)));
  if (highest >= placements) valid_and(L, valid, lower_k_compare(L, CMP_LT, t, lower_k_s64(L, placements)));
  return lower_k_clamp(L, t, 0, placements - 1);
}

/* Part 1: each operand position starts at init and, for every placement
 * whose pick it is (in the placements' row-major order), becomes
 * scatter(itself, source element). */
static bool lower_selected_scatter(Lower *L, const Shape *selection) {
  const Instruction *inst = L->origin;
  const Instruction *operand = inst->operands[0], *source = inst->operands[1];
  const Window *w = attrs_window(&inst->attrs);
  Kernel *k = L->k;
  int picks = kernel_add_input(k, selection, inst, NULL);
  window_kernel_shape(k, &operand->shape, w);
  kernel_add_output(k, &inst->shape, inst, 0);
  int at[AXLE_MAX_RANK], window[AXLE_MAX_RANK], placement[AXLE_MAX_RANK], valid = -1;
  for (int d = 0; d < operand->shape.rank; d++) at[d] = lower_k_index(L, KOP_INDEX, d);
  int position = row_major_position(L, &operand->shape, at);
  k->acc_count = 1;
  k->acc_types[0] = inst->shape.type;
  int init = lower_emit(L, inst->operands[2], NULL);
  if (init < 0) return false;
  acc_write(L, 0, init, inst);
  /* An empty source (no placements) scatters nothing: every position keeps init. */
  if (shape_element_count(selection) == 0) {
    L->block = KBLOCK_POST;
    lower_emit_store(L, 0, acc_read(L, 0, inst), at, operand->shape.rank, inst);
    return true;
  }

  L->block = KBLOCK_REDUCE, L->phase = 0;
  for (int d = 0; d < w->rank; d++) window[d] = lower_k_index(L, KOP_RINDEX, d);
  for (int d = 0; d < w->rank; d++)
    placement[d] = window_placement(L, &w->dims[d], operand->shape.dims[d], selection->dims[d], at[d], window[d],
                                    &valid);
  KernelOp load = {.kop = KOP_LOAD, .type = TYPE_S64, .buffer = picks, .arg_count = selection->rank};
  lower_copy_index(load.args, placement, selection->rank);
  int mine = lower_k_compare(L, CMP_EQ, lower_add_op(L, load, inst), position);
  if (valid >= 0) mine = lower_k_and(L, valid, mine);
  int args[2] = {acc_read(L, 0, inst), lower_emit(L, source, placement)}, sum;
  if (args[1] < 0 || !lower_emit_scalar_call(L, inst->called[1], args, &sum, 1)) return false;
  acc_write(L, 0, lower_k_select(L, k->acc_types[0], mine, sum, args[0]), inst);

  L->block = KBLOCK_POST;
  lower_emit_store(L, 0, acc_read(L, 0, inst), at, operand->shape.rank, inst);
  return true;
}

Kernel *lower_select_and_scatter(const Instruction *inst, int part, Status *st) {
  Lower L = {.origin = inst, .st = st, .block = KBLOCK_PRE};
  L.k = kernel_create(inst->name, inst, KERNEL_REDUCE);
  for (int i = 0; i < inst->operand_count; i++)
    kernel_add_input(L.k, &inst->operands[i]->shape, inst->operands[i], NULL);
  Shape selection = shape_array(TYPE_S64, inst->operands[1]->shape.rank, inst->operands[1]->shape.dims);
  bool ok;
  if (inst->opcode != OP_SELECT_AND_SCATTER || inst->operand_count != 3)
    ok = lower_fail(&L, inst, "not a select-and-scatter") >= 0;
  else
    ok = part == 0 ? lower_selection(&L, &selection) : lower_selected_scatter(&L, &selection);
  return lower_finish(&L, inst->name, ok);
}
