/* The kernels of the GPU's scatter (gpu_scatter_apply.c drives them).
 *
 * copy: the results start as the inputs. apply: the walk over the
 * updates, element by element in the evaluator's order (scatter index
 * major, then the window row-major); each element finds its scatter
 * index's window start in the operand (the index vector, and the batching
 * dims' own coordinates), drops the element when that window reaches past
 * the operand anywhere (XLA drops the whole window), and otherwise
 * replaces the result element by combiner(results..., updates...), the
 * update computation written inline (ptx_scalar_call.c). */
#include "emit_ptx/gpu_scatter.h"
#include "emit_ptx/ptx_sort.h"

void ptx_scatter_emit_copy(PtxBuilder *b, const char *name, int64_t count, int bytes) {
  ptx_kernel_begin(b, name, "scatter: the result starts as the input");
  ptx_kernel_param(b, PTX_U64, "in");
  ptx_kernel_param(b, PTX_U64, "out");
  ptx_kernel_set_max_threads(b, 256);
  PtxReg in = ptx_param_load_global_pointer(b, "in"), out = ptx_param_load_global_pointer(b, "out");
  PtxSortLoop l = ptx_sort_loop_open(b, count);
  ptx_sort_element_copy(b, bytes, ptx_element_address(b, out, l.i, bytes), ptx_element_address(b, in, l.i, bytes));
  ptx_sort_loop_close(b, &l);
  ptx_kernel_end(b);
}

/* The components of a row-major index over sizes[0..count) from its linear value. */
static void components(PtxBuilder *b, PtxReg linear, int count, const int64_t *sizes, PtxReg *out) {
  PtxReg rest = linear;
  for (int j = count - 1; j >= 0; j--) {
    PtxReg q;
    ptx_sort_divide(b, rest, sizes[j], &q, &out[j]);
    rest = q;
  }
}

/* sum of parts[j] * strides[j] (u64). */
static PtxReg dot_strides(PtxBuilder *b, int count, const PtxReg *parts, const int64_t *strides) {
  PtxReg sum = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u64 $r, 0", sum);
  for (int j = 0; j < count; j++) ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", sum, parts[j], strides[j], sum);
  return sum;
}

/* One index value widened to s64: signed types sign-extend, unsigned ones
 * zero-extend, and a u64 keeps its bits (one past INT64_MAX reads as
 * negative, which the unsigned bound check below drops, as it must). An
 * ld of a narrow type into a 32-bit register extends by the type; s4, u4,
 * s2 and u2 sit one to a byte, in its low bits. */
static PtxReg index_load(PtxBuilder *b, ElementType t, PtxReg indices, PtxReg at) {
  PtxReg wide = ptx_reg_new(b, PTX_S64);
  int bits = type_bit_width(t), bytes = bits < 8 ? 1 : bits / 8;
  bool is_signed = type_kind(t) == TYPE_KIND_SINT;
  PtxReg address = ptx_element_address(b, indices, at, bytes);
  if (bytes == 8) {
    ptx_inst(b, "ld.global.s64 $r, [$r]", wide, address);
    return wide;
  }
  PtxType load = bits < 8 ? PTX_U8 : bits == 8 ? (is_signed ? PTX_S8 : PTX_U8)
               : bits == 16 ? (is_signed ? PTX_S16 : PTX_U16) : (is_signed ? PTX_S32 : PTX_U32);
  PtxReg v = ptx_reg_new(b, is_signed ? PTX_S32 : PTX_U32);
  ptx_inst(b, "ld.global$s $r, [$r]", ptx_type_suffix(load), v, address);
  if (bits < 8 && is_signed) {
    ptx_inst(b, "shl.b32 $r, $r, $D", v, v, (int64_t)(32 - bits));
    ptx_inst(b, "shr.s32 $r, $r, $D", v, v, (int64_t)(32 - bits));
  } else if (bits < 8) {
    ptx_inst(b, "and.b32 $r, $r, $D", v, v, (int64_t)((1 << bits) - 1));
  }
  ptx_inst(b, is_signed ? "cvt.s64.s32 $r, $r" : "cvt.u64.u32 $r, $r", wide, v);
  return wide;
}

/* The operand position of this walk element, or a branch to skip when
 * its scatter index's window does not fit. */
static PtxReg operand_position(PtxBuilder *b, const PtxScatterPlan *p, PtxReg indices, const PtxReg *scatter,
                               const PtxReg *window, PtxLabel skip) {
  PtxReg start[AXLE_MAX_RANK];
  for (int d = 0; d < p->plan.operand_rank; d++) {
    start[d] = ptx_reg_new(b, PTX_S64);
    ptx_inst(b, "mov.s64 $r, 0", start[d]);
  }
  PtxReg base = dot_strides(b, p->plan.scatter_count, scatter, p->scatter_indices_stride);
  for (int v = 0; v < p->plan.vector_length; v++) {
    PtxReg at = ptx_reg_new(b, PTX_U64);
    ptx_inst(b, "add.u64 $r, $r, $D", at, base, (int64_t)v * p->vector_stride);
    start[p->plan.vector_operand_dim[v]] = index_load(b, p->index_type, indices, at);
  }
  for (int k = 0; k < p->plan.batching_count; k++)
    ptx_inst(b, "mov.s64 $r, $r", start[p->plan.batching_operand_dim[k]], scatter[p->plan.batching_scatter_axis[k]]);
  PtxReg bad = ptx_reg_new(b, PTX_PRED), position = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u64 $r, 0", position);
  for (int d = 0; d < p->plan.operand_rank; d++) {
    /* unsigned: a negative start is out of bounds too */
    ptx_inst(b, "setp.gt.u64 $r, $r, $D", bad, start[d], p->plan.operand_dims[d] - p->plan.window_extent_of_operand[d]);
    ptx_inst(b, "@$r bra $l", bad, skip);
    PtxReg at = start[d];
    if (p->plan.window_of_operand[d] >= 0) {
      at = ptx_reg_new(b, PTX_U64);
      ptx_inst(b, "add.u64 $r, $r, $r", at, start[d], window[p->plan.window_of_operand[d]]);
    }
    ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", position, at, p->operand_stride[d], position);
  }
  return position;
}

bool ptx_scatter_emit_apply(PtxBuilder *b, const char *name, const PtxScatterPlan *p, const Computation *combiner,
                            Status *st) {
  char param[16];
  PtxReg updates[AXLE_MAX_RANK], results[AXLE_MAX_RANK];
  ptx_kernel_begin(b, name, "scatter: every update element combined into the result, in the evaluator's order");
  ptx_kernel_param(b, PTX_U64, "indices");
  for (int i = 0; i < p->plan.n; i++) snprintf(param, sizeof param, "upd%d", i), ptx_kernel_param(b, PTX_U64, param);
  for (int i = 0; i < p->plan.n; i++) snprintf(param, sizeof param, "out%d", i), ptx_kernel_param(b, PTX_U64, param);
  ptx_kernel_set_max_threads(b, 256);
  PtxReg indices = ptx_param_load_global_pointer(b, "indices");
  for (int i = 0; i < p->plan.n; i++) snprintf(param, sizeof param, "upd%d", i), updates[i] = ptx_param_load_global_pointer(b, param);
  for (int i = 0; i < p->plan.n; i++) snprintf(param, sizeof param, "out%d", i), results[i] = ptx_param_load_global_pointer(b, param);
  PtxSortLoop l = ptx_sort_loop_open(b, p->plan.scatter_total * p->plan.window_total);
  PtxLabel skip = ptx_label_new(b, "skip");
  PtxReg k, w, scatter[AXLE_MAX_RANK], window[AXLE_MAX_RANK];
  ptx_sort_divide(b, l.i, p->plan.window_total, &k, &w);
  components(b, k, p->plan.scatter_count, p->plan.scatter_sizes, scatter);
  components(b, w, p->plan.window_count, p->plan.window_sizes, window);
  PtxReg from = dot_strides(b, p->plan.scatter_count, scatter, p->scatter_update_stride);
  PtxReg window_from = dot_strides(b, p->plan.window_count, window, p->window_update_stride);
  ptx_inst(b, "add.u64 $r, $r, $r", from, from, window_from);
  PtxReg at = operand_position(b, p, indices, scatter, window, skip);
  if (p->atomic) {
    int bytes = type_byte_size(p->types[0]);
    PtxReg update = ptx_sort_value_load(b, p->types[0], ptx_element_address(b, updates[0], from, bytes));
    ptx_inst(b, "red.global.$s [$r], $r", p->atomic, ptx_element_address(b, results[0], at, bytes), update);
    ptx_label_place(b, skip);
    ptx_sort_loop_close(b, &l);
    ptx_kernel_end(b);
    return true;
  }
  PtxReg args[2 * AXLE_MAX_RANK], values[AXLE_MAX_RANK], addresses[AXLE_MAX_RANK];
  for (int i = 0; i < p->plan.n; i++) {
    int bytes = type_byte_size(p->types[i]);
    addresses[i] = ptx_element_address(b, results[i], at, bytes);
    args[i] = ptx_sort_value_load(b, p->types[i], addresses[i]);
    args[p->plan.n + i] = ptx_sort_value_load(b, p->types[i], ptx_element_address(b, updates[i], from, bytes));
  }
  if (!ptx_scalar_call_emit_results(b, combiner, args, values, p->plan.n, st)) {
    ptx_kernel_abandon(b);
    return false;
  }
  for (int i = 0; i < p->plan.n; i++) ptx_sort_value_store(b, p->types[i], addresses[i], values[i]);
  ptx_label_place(b, skip);
  ptx_sort_loop_close(b, &l);
  ptx_kernel_end(b);
  return true;
}
