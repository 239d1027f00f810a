/* The GPU backend's sort and top-k (gpu_backend.c routes OP_SORT and
 * OP_TOPK here).
 *
 * Both execute the plan of src/ir/sort_plan.c, which the evaluator and the
 * CPU execute too, with its one order: a stable merge sort of positions
 * (ptx_sort.c), here a launch that
 * sorts tiles of up to 256 positions in shared memory, ceil(log2(n / 256))
 * merge launches in global memory for longer rows, over two s32 order
 * arrays in scratch (gpu_reserve_temp), and one gather launch that writes
 * the results. A
 * sort's comparator is the HLO computation itself, written inline
 * (ptx_scalar_call.c); top-k's is compare GT (largest) or LT with floats in
 * total order, and its gather keeps the first k positions and writes them
 * as the index result: ties go to the lower index, as the evaluator and
 * XLA's lowering (a stable sort of (x, iota)) order them. */
#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_sort.h"
#include "ir/sort_plan.h"

typedef struct TopkLess {
  ElementType type;
  bool largest;
} TopkLess;

static bool comparator_less(const void *ctx, PtxBuilder *b, const PtxReg *values, PtxReg *less, Status *st) {
  return ptx_scalar_call_emit(b, ctx, values, less, st);
}

static bool topk_less(const void *ctx, PtxBuilder *b, const PtxReg *values, PtxReg *less, Status *st) {
  (void)st;
  const TopkLess *t = ctx;
  *less = ptx_compare_emit(b, t->type, t->largest ? CMP_GT : CMP_LT, true, values[0], values[1]);
  return true;
}

/* The plan's rows (src/ir/sort_plan.h), as the kernels take them. */
static PtxSortRows sort_rows(const SortPlan *p) {
  return (PtxSortRows){.rows = p->rows, .n = p->length, .inner = p->inner};
}

/* What the sort reads and writes (the refusal decided they are row-major
 * arrays, none of the results over an operand). */
static void bindings_of(GpuCompile *c, const Instruction *inst, int *in, int *out, int outputs) {
  for (int i = 0; i < inst->operand_count; i++) in[i] = gpu_binding_of(c, inst->operands[i], 0);
  for (int o = 0; o < outputs; o++) out[o] = gpu_binding_of(c, inst, o);
}

/* The gather reads every operand while it writes the results, so no
 * result may lie over an operand (as the program's plan may put it). */
static const char *in_place_refusal(const Program *program, const Instruction *inst, int outputs) {
  for (int o = 0; o < outputs; o++)
    for (int i = 0; i < inst->operand_count; i++)
      if (program_shares_storage(program, inst, o, inst->operands[i], 0))
        return "a sort whose result shares storage with its operand";
  return NULL;
}

/* The launches: the tiles, the global merge passes, the gather from the last order. */
static bool sort_launch(GpuCompile *c, const Instruction *inst, const PtxSortRows *rows, const PtxSortOperand *ops,
                        int count, PtxSortLess less, const void *ctx, const int *in, const int *out, int64_t k,
                        bool indices) {
  if (rows->rows * rows->n == 0 || rows->rows * k == 0) return true;
  char tiles[160], merge[160], gather[160];
  int64_t order_bytes = rows->rows * rows->n * 4;
  int order[2] = {gpu_reserve_temp(c, order_bytes), gpu_reserve_temp(c, order_bytes)};
  int64_t blocks = (rows->rows * rows->n + 255) / 256;
  unsigned grid = (unsigned)(blocks < 65535 ? blocks : 65535);
  /* Tiles of up to 256 positions sort in shared memory first: a row that
   * fits takes that one launch; longer rows continue in global memory. */
  int64_t tile = 1;
  while (tile < rows->n && tile < 256) tile *= 2;
  int64_t tile_count = rows->rows * ((rows->n + tile - 1) / tile);
  Status why = {0};
  gpu_entry_name(c, inst, "sort_tiles", tiles, sizeof tiles);
  if (!ptx_sort_emit_tiles(c->ptx, tiles, rows, tile, ops, count, less, ctx, &why)) return gpu_refuse(c, inst, why.message);
  int tile_buffers[65] = {order[0]};
  for (int i = 0; i < count; i++) tile_buffers[1 + i] = in[i];
  if (!gpu_add_launch(c, inst, tiles, (unsigned)(tile_count < 65535 ? tile_count : 65535), (unsigned)tile, tile_buffers,
                      1 + count, NULL, 0))
    return false;
  gpu_entry_name(c, inst, "sort_merge", merge, sizeof merge);
  if (rows->n > tile && !ptx_sort_emit_merge(c->ptx, merge, rows, ops, count, less, ctx, &why))
    return gpu_refuse(c, inst, why.message);
  int current = 0;
  for (int64_t width = tile; width < rows->n; width *= 2, current ^= 1) {
    int buffers[66] = {order[current], order[current ^ 1]};
    for (int i = 0; i < count; i++) buffers[2 + i] = in[i];
    if (!gpu_add_launch(c, inst, merge, grid, 256, buffers, 2 + count, &width, 1)) return false;
  }
  int buffers[130] = {order[current]};
  int outputs = count + (indices ? 1 : 0);
  for (int i = 0; i < count; i++) buffers[1 + i] = in[i];
  for (int o = 0; o < outputs; o++) buffers[1 + count + o] = out[o];
  ElementType types[64];
  for (int i = 0; i < count; i++) types[i] = ops[i].type;
  gpu_entry_name(c, inst, "sort_gather", gather, sizeof gather);
  ptx_sort_emit_gather(c->ptx, gather, rows, k, types, count, indices);
  int64_t gather_blocks = (rows->rows * k + 255) / 256;
  return gpu_add_launch(c, inst, gather, (unsigned)(gather_blocks < 65535 ? gather_blocks : 65535), 256, buffers,
                        1 + count + outputs, NULL, 0) != NULL;
}

/* The operands as the kernels take them: their types, and whether the
 * comparator reads each (it is never loaded if not). */
static void sort_operands(const Instruction *inst, int count, PtxSortOperand *ops) {
  const Computation *comparator = inst->called[0];
  for (int i = 0; i < count; i++) {
    ops[i].type = inst->operands[i]->shape.type;
    ops[i].read = false;
    for (int side = 0; side < 2; side++) {
      const Instruction *param = 2 * i + side < comparator->parameter_count ? comparator->parameters[2 * i + side] : NULL;
      if (param && param->user_count > 0) ops[i].read = true;
    }
  }
}

/* Row-major arrays in and out, rows the kernels' s32 positions index. */
static const char *storage_refusal(const BufferPlan *plan, const Instruction *inst, const SortPlan *sort, int outputs) {
  for (int i = 0; i < inst->operand_count; i++) {
    const Shape *s = &inst->operands[i]->shape;
    if (shape_is_tuple(s) || !shape_is_row_major(s)) return "a sort operand that is not a row-major array";
  }
  for (int o = 0; o < outputs; o++) {
    const BufferSlot *slot = buffer_plan_find(plan, inst, o);
    if (!slot || !slot->shape || !shape_is_row_major(slot->shape)) return "a sort result that is not a row-major array";
  }
  bool empty = sort->rows * sort->length == 0 || sort->rows * sort->k == 0;
  if (!empty && sort->length > INT32_MAX) return "a sort of rows longer than 2^31 elements";
  return NULL;
}

static const char *sort_refusal(const BufferPlan *plan, const Instruction *inst) {
  SortPlan sort;
  const char *problem = sort_plan_make(inst, &sort);
  if (problem) return problem;
  int count = sort.operand_count;
  if (count > 64) return "a sort of more than 64 operands";
  PtxSortOperand ops[64];
  sort_operands(inst, count, ops);
  for (int i = 0; i < count; i++)
    if (ops[i].read && !ptx_scalar_type_ok(ops[i].type))
      return "a sort comparator that reads an operand of a type the GPU's comparators do not yet";
  return storage_refusal(plan, inst, &sort, count);
}

static const char *topk_refusal(const BufferPlan *plan, const Instruction *inst) {
  const Shape *x = &inst->operands[0]->shape;
  SortPlan sort;
  const char *problem = sort_plan_make(inst, &sort);
  if (problem) return problem;
  if (x->type == TYPE_PRED || type_is_complex(x->type) || !ptx_scalar_type_ok(x->type))
    return "a top-k of a type the GPU's comparators do not yet compute on";
  return storage_refusal(plan, inst, &sort, 2);
}

const char *gpu_sort_refusal(const Program *program, const Instruction *inst) {
  bool topk = inst->opcode == OP_TOPK;
  const char *why = topk ? topk_refusal(program->plan, inst) : sort_refusal(program->plan, inst);
  return why ? why : in_place_refusal(program, inst, topk ? 2 : inst->operand_count);
}

static bool compile_sort(GpuCompile *c, const Instruction *inst) {
  SortPlan plan;
  sort_plan_make(inst, &plan);  /* gpu_sort_refusal found no problem */
  int count = plan.operand_count;
  const Computation *comparator = inst->called[0];
  PtxSortOperand ops[64];
  sort_operands(inst, count, ops);
  int in[64], out[64];
  bindings_of(c, inst, in, out, count);
  PtxSortRows rows = sort_rows(&plan);
  return sort_launch(c, inst, &rows, ops, count, comparator_less, comparator, in, out, plan.k, false);
}

static bool compile_topk(GpuCompile *c, const Instruction *inst) {
  const Shape *x = &inst->operands[0]->shape;
  SortPlan plan;
  sort_plan_make(inst, &plan);  /* gpu_sort_refusal found no problem */
  PtxSortOperand op = {.type = x->type, .read = true};
  TopkLess less = {.type = x->type, .largest = plan.largest};
  int in[1], out[2];
  bindings_of(c, inst, in, out, 2);
  PtxSortRows rows = sort_rows(&plan);
  return sort_launch(c, inst, &rows, &op, 1, topk_less, &less, in, out, plan.k, true);
}

bool gpu_compile_sort(GpuCompile *c, const Instruction *inst) {
  if (inst->opcode == OP_TOPK) return compile_topk(c, inst);
  return compile_sort(c, inst);
}
