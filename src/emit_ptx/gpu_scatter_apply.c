/* The GPU backend's scatter.
 *
 * The results start as copies of the inputs (no copy when the plan has a
 * result update its input in place), then one kernel walks the updates
 * (ptx_scatter.c). By default that kernel runs on ONE thread: updates may
 * land on one element many times, and only the evaluator's order gives the
 * evaluator's bits for every combiner (a float add is not associative; a
 * "replace" keeps the last). With unique_indices=true the module promises
 * that no two updates meet, and an integer add, min or max combiner gives
 * the same bits in any order through red.global atomics: then the walk is
 * spread over the grid. */
#include "emit_ptx/gpu_scatter.h"
#include "emit_ptx/ptx_sort.h"

/* The GPU's part of the plan: its arrays' row-major strides. */
static void scatter_strides(const Instruction *inst, PtxScatterPlan *p) {
  const ScatterPlan *q = &p->plan;
  int n = q->n;
  const Shape *in = &inst->operands[0]->shape, *indices = &inst->operands[n]->shape;
  const Shape *updates = &inst->operands[n + 1]->shape;
  int64_t in_strides[AXLE_MAX_RANK], up_strides[AXLE_MAX_RANK], ix_strides[AXLE_MAX_RANK];
  shape_strides(in, in_strides);
  shape_strides(updates, up_strides);
  shape_strides(indices, ix_strides);
  p->index_type = indices->type;
  for (int j = 0; j < q->window_count; j++) p->window_update_stride[j] = up_strides[q->window_axes[j]];
  for (int j = 0; j < q->scatter_count; j++) {
    p->scatter_update_stride[j] = up_strides[q->scatter_axes[j]];
    p->scatter_indices_stride[j] = ix_strides[q->scatter_indices_dim[j]];
  }
  p->vector_stride = q->index_vector_dim < indices->rank ? ix_strides[q->index_vector_dim] : 0;
  for (int d = 0; d < in->rank; d++) p->operand_stride[d] = in_strides[d];
}

/* The red.global operation that applies the combiner when it is one
 * integer add, minimum or maximum of the current value and the update:
 * exact, associative and commutative, so atomics in any order give the
 * evaluator's bits. NULL otherwise (floats: a sum's rounding depends on
 * the order). */
static const char *atomic_combiner(const Instruction *inst, int n) {
  const Instruction *root = inst->called[0]->root;
  ElementType t = inst->operands[0]->shape.type;
  if (n != 1 || root->operand_count != 2 || root->operands[0]->opcode != OP_PARAMETER ||
      root->operands[1]->opcode != OP_PARAMETER || root->operands[0] == root->operands[1])
    return NULL;
  static const struct {
    Opcode op;
    ElementType type;
    const char *red;
  } rows[] = {
      {OP_ADD, TYPE_S32, "add.u32"},     {OP_ADD, TYPE_U32, "add.u32"},     {OP_ADD, TYPE_S64, "add.u64"},
      {OP_ADD, TYPE_U64, "add.u64"},     {OP_MINIMUM, TYPE_S32, "min.s32"}, {OP_MINIMUM, TYPE_U32, "min.u32"},
      {OP_MINIMUM, TYPE_S64, "min.s64"}, {OP_MINIMUM, TYPE_U64, "min.u64"}, {OP_MAXIMUM, TYPE_S32, "max.s32"},
      {OP_MAXIMUM, TYPE_U32, "max.u32"}, {OP_MAXIMUM, TYPE_S64, "max.s64"}, {OP_MAXIMUM, TYPE_U64, "max.u64"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    if (rows[i].op == root->opcode && rows[i].type == t) return rows[i].red;
  return NULL;
}

/* The apply kernel reads the indices and updates while it writes the
 * results, so no result may lie over one of those (or over another
 * input), as the program's plan may put it. */
static const char *in_place_refusal(const Program *program, const Instruction *inst, const ScatterPlan *scatter) {
  int n = scatter->n;
  if (scatter->scatter_total * scatter->window_total == 0 || shape_element_count(&inst->operands[0]->shape) == 0)
    return NULL;  /* no apply kernel runs */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2 * n + 1; j++)
      if (j != i && program_shares_storage(program, inst, i, inst->operands[j], 0))
        return "a scatter result sharing storage with its indices or updates";
  return NULL;
}

const char *gpu_scatter_apply_refusal(const Program *program, const Instruction *inst) {
  const BufferPlan *plan = program->plan;
  ScatterPlan scatter;
  const char *problem = scatter_plan_make(inst, &scatter);
  if (problem) return problem;
  for (int i = 0; i < inst->operand_count; i++)
    if (!shape_is_row_major(&inst->operands[i]->shape)) return "a scatter operand that is not a row-major array";
  for (int i = 0; i < scatter.n; i++) {
    if (!ptx_scalar_type_ok(inst->operands[i]->shape.type))
      return "a scatter of an element type the GPU's inline combiners do not compute on yet";
    const BufferSlot *slot = buffer_plan_find(plan, inst, i);
    if (!slot || !slot->shape || !shape_is_row_major(slot->shape)) return "a scatter result that is not a row-major array";
  }
  return in_place_refusal(program, inst, &scatter);
}

bool gpu_compile_scatter_apply(GpuCompile *c, const Instruction *inst) {
  PtxScatterPlan p = {0};
  scatter_plan_make(inst, &p.plan);  /* gpu_scatter_apply_refusal found no problem */
  for (int i = 0; i < p.plan.n; i++) p.types[i] = inst->operands[i]->shape.type;
  scatter_strides(inst, &p);
  p.atomic = atomic_combiner(inst, p.plan.n);
  int n = p.plan.n, bindings[2 * AXLE_MAX_RANK + 1];
  char entry[160];
  int64_t count = shape_element_count(&inst->operands[0]->shape);
  for (int i = 0; i < n; i++) {
    int in = gpu_binding_of(c, inst->operands[i], 0), out = gpu_binding_of(c, inst, i);
    bindings[1 + n + i] = out;
    if (in == out || count == 0) continue;
    int pair[2] = {in, out};
    int bytes = type_byte_size(p.types[i]);
    gpu_entry_name(c, inst, "copy", entry, sizeof entry);
    ptx_scatter_emit_copy(c->ptx, entry, count, bytes);
    int64_t blocks = (count + 255) / 256;
    if (!gpu_add_launch(c, inst, entry, (unsigned)(blocks < 65535 ? blocks : 65535), 256, pair, 2, NULL, 0)) return false;
  }
  int64_t walk = p.plan.scatter_total * p.plan.window_total;
  if (walk == 0 || count == 0) return true;
  bindings[0] = gpu_binding_of(c, inst->operands[n], 0);
  for (int i = 0; i < n; i++) bindings[1 + i] = gpu_binding_of(c, inst->operands[n + 1 + i], 0);
  Status why = {0};
  gpu_entry_name(c, inst, "apply", entry, sizeof entry);
  if (!ptx_scatter_emit_apply(c->ptx, entry, &p, inst->called[0], &why)) return gpu_refuse(c, inst, why.message);
  /* One thread walks in order unless the order cannot matter. */
  bool parallel = attrs_scatter(&inst->attrs)->unique_indices || p.atomic;
  int64_t blocks = parallel ? (walk + 255) / 256 : 1;
  unsigned block = parallel ? 256 : 1;
  return gpu_add_launch(c, inst, entry, (unsigned)(blocks < 65535 ? blocks : 65535), block, bindings, 1 + 2 * n, NULL,
                        0) != NULL;
}
