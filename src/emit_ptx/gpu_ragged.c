/* ragged-all-to-all on one replica, on the GPU (gpu_control.c routes it
 * here). As the evaluator (eval_async.c) does: the result starts as the
 * output buffer (operand 1); then, update by update in order, rows
 * [input_offsets[j], +send_sizes[j]) of the input (dim 0) land at rows
 * [output_offsets[j], +send_sizes[j]) of the result, recv_sizes[j] equal
 * to send_sizes[j].
 *
 * A bad offset or size is a run-time error in the evaluator, and a GPU
 * kernel has no way to report one; so the offsets and sizes must be
 * constants, checked here at compile time (a bad one is the evaluator's
 * error, located, at compile time), and each update is one launch of a
 * row-copy kernel with its offsets as scalars. Offsets computed at run
 * time are a located refusal. */
#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_sort.h"

/* Appends .entry `entry`: out[to + i] = in[from + i] for i < count, in
 * units of `bytes` (1, 2, 4, 8), from and to the .u64 scalars after the
 * two pointers; a grid-stride loop, so any grid is correct. */
static void emit_move(PtxBuilder *b, const char *entry, int64_t count, int bytes) {
  ptx_kernel_begin(b, entry, "ragged-all-to-all: one update's rows moved");
  ptx_kernel_param(b, PTX_U64, "in");
  ptx_kernel_param(b, PTX_U64, "out");
  ptx_kernel_param(b, PTX_U64, "from");
  ptx_kernel_param(b, PTX_U64, "to");
  ptx_kernel_set_max_threads(b, 256);
  PtxReg in = ptx_param_load_global_pointer(b, "in"), out = ptx_param_load_global_pointer(b, "out");
  PtxReg from = ptx_param_load(b, PTX_U64, "from"), to = ptx_param_load(b, PTX_U64, "to");
  PtxSortLoop l = ptx_sort_loop_open(b, count);
  PtxReg src = ptx_reg_new(b, PTX_U64), dst = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "add.u64 $r, $r, $r", src, from, l.i);
  ptx_inst(b, "add.u64 $r, $r, $r", dst, to, l.i);
  ptx_sort_element_copy(b, bytes, ptx_element_address(b, out, dst, bytes), ptx_element_address(b, in, src, bytes));
  ptx_sort_loop_close(b, &l);
  ptx_kernel_end(b);
}

/* One launch of a move of `units` units from binding in at `from` to out at `to`. */
static bool add_move(GpuCompile *c, const Instruction *inst, int in, int out, int64_t from, int64_t to,
                     int64_t units, int unit) {
  if (units == 0) return true;
  char entry[160];
  gpu_entry_name(c, inst, "rows", entry, sizeof entry);
  emit_move(c->ptx, entry, units, unit);
  int buffers[2] = {in, out};
  int64_t scalars[2] = {from, to}, blocks = (units + 255) / 256;
  return gpu_add_launch(c, inst, entry, (unsigned)(blocks < 65535 ? blocks : 65535), 256, buffers, 2, scalars, 2) !=
         NULL;
}

/* The constant operand k's literal, or NULL when it is computed. */
static const Literal *constant_of(const Instruction *inst, int k) {
  const Instruction *o = inst->operands[k];
  return o->opcode == OP_CONSTANT ? o->attrs.literal : NULL;
}

static const char *check_shapes(const Instruction *inst) {
  const Shape *in = &inst->operands[0]->shape, *out = &inst->shape;
  if (shape_is_tuple(in) || shape_is_tuple(out) || !shape_is_row_major(in) || !shape_is_row_major(out) ||
      in->rank < 1 || in->element_size_bits || out->element_size_bits ||
      !shape_identical(out, &inst->operands[1]->shape) || in->type != out->type)
    return "a ragged-all-to-all on other than row-major arrays of one type";
  int64_t in_row = in->dims[0] ? shape_element_count(in) / in->dims[0] : 0;
  int64_t out_row = out->dims[0] ? shape_element_count(out) / out->dims[0] : 0;
  if (in->dims[0] && out->dims[0] && in_row != out_row) return "input and output rows of different sizes";
  int64_t updates = shape_element_count(&inst->operands[2]->shape);
  for (int k = 2; k < 6; k++) {
    const Shape *o = &inst->operands[k]->shape;
    if ((o->type != TYPE_S32 && o->type != TYPE_S64) || shape_element_count(o) != updates)
      return "offsets and sizes that are not s32 or s64 arrays of one length";
    if (!constant_of(inst, k))
      return "a ragged-all-to-all whose offsets or sizes are computed at run time (a GPU kernel cannot report a bad one)";
  }
  return NULL;
}

const char *gpu_ragged_all_to_all_refusal(const Program *program, const Instruction *inst) {
  if (inst->operand_count != 6) return "a malformed ragged-all-to-all";
  const char *why = check_shapes(inst);
  if (why) return why;
  /* the moves read the input while they write the result */
  if (program_shares_storage(program, inst, 0, inst->operands[0], 0))
    return "a ragged-all-to-all whose result shares its input's storage";
  const Shape *in = &inst->operands[0]->shape, *out = &inst->shape;
  int64_t updates = shape_element_count(&inst->operands[2]->shape);
  for (int64_t j = 0; j < updates; j++) {
    int64_t from = literal_get_s64(constant_of(inst, 2), j), count = literal_get_s64(constant_of(inst, 3), j);
    int64_t to = literal_get_s64(constant_of(inst, 4), j), recv = literal_get_s64(constant_of(inst, 5), j);
    /* the evaluator's check, written so that no sum of given values can overflow */
    if (count != recv || count < 0 || from < 0 || to < 0 || from > in->dims[0] - count || to > out->dims[0] - count)
      return "a ragged-all-to-all update that is out of range or unmatched (the evaluator's error)";
  }
  return NULL;
}

bool gpu_compile_ragged_all_to_all(GpuCompile *c, const Instruction *inst) {
  const Shape *out = &inst->shape;
  int bytes = type_byte_size(out->type), unit = bytes > 8 ? 8 : bytes, per = bytes / unit;
  int64_t row = (out->dims[0] ? shape_element_count(out) / out->dims[0] : 0) * per;  /* units */
  int input = gpu_binding_of(c, inst->operands[0], 0), buffer = gpu_binding_of(c, inst->operands[1], 0),
      result = gpu_binding_of(c, inst, 0);
  if (buffer != result && !add_move(c, inst, buffer, result, 0, 0, shape_element_count(out) * per, unit)) return false;
  int64_t updates = shape_element_count(&inst->operands[2]->shape);
  for (int64_t j = 0; j < updates; j++) {
    int64_t from = literal_get_s64(constant_of(inst, 2), j), count = literal_get_s64(constant_of(inst, 3), j);
    int64_t to = literal_get_s64(constant_of(inst, 4), j);
    if (!add_move(c, inst, input, result, from * row, to * row, count * row, unit)) return false;
  }
  return true;
}
