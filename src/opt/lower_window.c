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
 * loads at a clamped index (always in bounds) and selects on `valid`. */
#include "opt/lower_internal.h"

/* ANDs a condition into *valid (-1: true so far). */
static void valid_and(Lower *L, int *valid, int condition) {
  *valid = *valid < 0 ? condition : k_and(L, *valid, condition);
}

/* The base index of window element `window` of placement `placement` along
 * dim d, clamped into the base; *valid learns whether it is an element.
 * Checks that can never fail for these extents are left out. */
static int window_base_index(Lower *L, const WindowDim *wd, int64_t base_dim, int64_t placements, int placement,
                             int window, int *valid) {
  int at = k_add(L, k_mul(L, placement, k_s64(L, wd->stride)), k_mul(L, window, k_s64(L, wd->rhs_dilate)));
  if (wd->pad_lo) at = k_sub(L, at, k_s64(L, wd->pad_lo));
  int64_t lowest = -wd->pad_lo;
  int64_t highest = (placements - 1) * wd->stride + (wd->size - 1) * wd->rhs_dilate - wd->pad_lo;
  if (wd->lhs_dilate > 1) {
    int step = k_s64(L, wd->lhs_dilate);
    valid_and(L, valid, k_compare(L, CMP_EQ, k_rem(L, at, step), k_s64(L, 0)));
    at = k_div(L, at, step);
    highest /= wd->lhs_dilate;
  }
  if (lowest < 0) valid_and(L, valid, k_compare(L, CMP_GE, at, k_s64(L, 0)));
  if (highest >= base_dim) valid_and(L, valid, k_compare(L, CMP_LT, at, k_s64(L, base_dim)));
  if (lowest >= 0 && highest < base_dim) return at;
  return k_clamp(L, at, 0, base_dim > 0 ? base_dim - 1 : 0);
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
  add_op(L, write, origin);
}

static int acc_read(Lower *L, int acc, const Instruction *origin) {
  KernelOp read = {.kop = KOP_ACC_READ, .type = L->k->acc_types[acc], .acc = acc};
  return add_op(L, read, origin);
}

/* reduce-window(inputs..., inits...): each accumulator starts at its init
 * and, at every window position that is an element, becomes the reducer
 * applied to (accumulators..., elements...). */
bool lower_reduce_window(Lower *L) {
  const Instruction *inst = L->origin;
  if (L->body) return fail(L, inst, "a reduce-window inside a fusion") >= 0;
  int n = inst->operand_count / 2;
  const Window *w = attrs_window(&inst->attrs);
  const Shape *base = &inst->operands[0]->shape;
  const Shape *space = shape_is_tuple(&inst->shape) ? &inst->shape.tuple_shapes[0] : &inst->shape;
  if (n > AXLE_MAX_RANK) return fail(L, inst, "too many accumulators") >= 0;
  /* Every window position must have an element to load (clamped) from. */
  if (shape_element_count(base) == 0) return fail(L, inst, "an empty operand") >= 0;
  Kernel *k = L->k;
  window_kernel_shape(k, space, w);
  for (int o = 0; o < n; o++)
    kernel_add_output(k, shape_is_tuple(&inst->shape) ? &inst->shape.tuple_shapes[o] : &inst->shape, inst, o);
  int placement[AXLE_MAX_RANK], window[AXLE_MAX_RANK], base_index[AXLE_MAX_RANK], valid;
  for (int d = 0; d < space->rank; d++) placement[d] = k_index(L, KOP_INDEX, d);
  L->reduces[0] = inst, L->reduce_count = 1;
  if (!emit_initial_values(L)) return false;

  L->block = KBLOCK_REDUCE, L->phase = 0;
  for (int d = 0; d < w->rank; d++) window[d] = k_index(L, KOP_RINDEX, d);
  window_base_point(L, w, base, space, placement, window, base_index, &valid);
  int args[2 * AXLE_MAX_RANK], results[AXLE_MAX_RANK];
  for (int i = 0; i < n; i++) {
    args[i] = acc_read(L, i, inst);
    if ((args[n + i] = emit(L, inst->operands[i], base_index)) < 0) return false;
  }
  if (!emit_scalar_call(L, inst->called[0], args, results, n)) return false;
  for (int i = 0; i < n; i++)
    acc_write(L, i, valid < 0 ? results[i] : k_select(L, k->acc_types[i], valid, results[i], args[i]), inst);

  L->block = KBLOCK_POST;
  for (int i = 0; i < n; i++) emit_store(L, i, acc_read(L, i, inst), placement, space->rank, inst);
  return true;
}
