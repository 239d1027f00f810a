/* scan on the GPU (gpu_control.c routes it here), for a step computation
 * that is elementwise: every instruction a parameter, the root tuple or an
 * elementwise op on arrays of the slice's dims (the operands without the
 * scanned dim d). Then element e of a slice depends only on element e of
 * the slices and carries, so one thread per slice element runs the whole
 * scan serially: carries in registers, steps along d in the evaluator's
 * order (eval_control.c: backwards when is_reverse), the computation
 * inline (ptx_scalar_call.c), each output written at its step, the final
 * carries at the end. Results are the evaluator's bits, in any grid.
 * Anything else (a step that mixes elements, layouts other than
 * row-major) is a located refusal. */
#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_sort.h"

enum { SCAN_MAX_VALUES = 16 };

typedef struct ScanPlan {
  int inputs, carries, outputs;
  int64_t outer, steps, inner;        /* an input as [outer, steps, inner] */
  bool reverse;
  ElementType input_types[SCAN_MAX_VALUES], carry_types[SCAN_MAX_VALUES], output_types[SCAN_MAX_VALUES];
} ScanPlan;

static bool same_dims_as(const Shape *s, const Shape *slice) {
  return !shape_is_tuple(s) && shape_same_dims(s, slice);
}

/* Why comp is not elementwise over arrays of the slice's dims, or NULL. */
static const char *step_is_elementwise(const Computation *comp, const Shape *slice) {
  for (int i = 0; i < comp->instruction_count; i++) {
    const Instruction *x = comp->instructions[i];
    if (x->opcode == OP_TUPLE && x == comp->root) continue;
    if (x->opcode != OP_PARAMETER && !opcode_is_elementwise(x->opcode))
      return "a scan whose step is not elementwise (the GPU runs one thread per slice element)";
    if (!same_dims_as(&x->shape, slice)) return "a scan whose step computes on arrays of other dims than a slice's";
  }
  return NULL;
}

static const Shape *leaf_shape(const Shape *s, int k) { return shape_is_tuple(s) ? &s->tuple_shapes[k] : s; }

static const char *scan_plan(const Instruction *inst, ScanPlan *p) {
  const ScalarAttrs *sa = attrs_scalars(&inst->attrs);
  p->carries = (int)sa->num_carries;
  p->inputs = inst->operand_count - p->carries;
  int parts = shape_is_tuple(&inst->shape) ? inst->shape.tuple_count : 1;
  p->outputs = parts - p->carries;
  p->reverse = sa->is_reverse;
  if (p->inputs < 1 || p->outputs < 0 || inst->attrs.dimensions.count != 1 || inst->called_count != 1 ||
      p->inputs > SCAN_MAX_VALUES || p->carries > SCAN_MAX_VALUES || p->outputs > SCAN_MAX_VALUES)
    return "a scan whose inputs, carries and results do not add up (or more than 16 of them)";
  const Shape *x = &inst->operands[0]->shape;
  int d = (int)inst->attrs.dimensions.values[0];
  if (d < 0 || d >= x->rank) return "a scan dimension out of range";
  Shape slice = {.type = x->type, .rank = 0};
  p->outer = p->inner = 1;
  p->steps = x->dims[d];
  for (int i = 0; i < x->rank; i++) {
    if (i != d) slice.dims[slice.rank++] = x->dims[i];
    if (i < d) p->outer *= x->dims[i];
    if (i > d) p->inner *= x->dims[i];
  }
  for (int i = 0; i < inst->operand_count; i++) {
    const Shape *s = &inst->operands[i]->shape;
    bool ok = i < p->inputs ? !shape_is_tuple(s) && shape_same_dims(s, x) : same_dims_as(s, &slice);
    if (!ok || !shape_is_row_major(s) || s->element_size_bits || !ptx_scalar_type_ok(s->type))
      return "a scan operand of other dims than its first input (or its slice), not row-major, or of a type the "
             "GPU's inline computations do not compute on";
    if (i < p->inputs) p->input_types[i] = s->type;
    else p->carry_types[i - p->inputs] = s->type;
  }
  for (int k = 0; k < parts; k++) {
    const Shape *s = leaf_shape(&inst->shape, k);
    bool ok = k < p->outputs ? shape_same_dims(s, x) : same_dims_as(s, &slice);
    if (!ok || !shape_is_row_major(s) || s->element_size_bits) return "a scan result of other dims than expected";
    if (k < p->outputs) p->output_types[k] = s->type;
  }
  return step_is_elementwise(inst->called[0], &slice);
}

/* A register copy of v, whatever its class. */
static void move_into(PtxBuilder *b, PtxReg to, PtxReg from) {
  static const char *const suffix[PTX_REG_CLASS_COUNT] = {[PTX_REG_PRED] = ".pred", [PTX_REG_B16] = ".b16",
                                                          [PTX_REG_B32] = ".b32",   [PTX_REG_B64] = ".b64",
                                                          [PTX_REG_F32] = ".f32",   [PTX_REG_F64] = ".f64"};
  ptx_inst(b, "mov$s $r, $r", suffix[to.cls], to, from);
}

/* A fresh register of r's class. */
static PtxReg ptx_reg_like(PtxBuilder *b, PtxReg r) {
  static const PtxType type[PTX_REG_CLASS_COUNT] = {[PTX_REG_PRED] = PTX_PRED, [PTX_REG_B16] = PTX_B16,
                                                    [PTX_REG_B32] = PTX_B32,   [PTX_REG_B64] = PTX_B64,
                                                    [PTX_REG_F32] = PTX_F32,   [PTX_REG_F64] = PTX_F64};
  return ptx_reg_new(b, type[r.cls]);
}

/* The walk over the steps of slice element `e` (u64): carries in regs. */
static bool emit_steps(PtxBuilder *b, const ScanPlan *p, const Computation *step, const PtxReg *in, const PtxReg *out,
                       PtxReg e, PtxReg *carry, Status *st) {
  /* element e = o * inner + i sits at (o * steps + s) * inner + i of a full array */
  PtxReg o, i, base = ptx_reg_new(b, PTX_U64), s = ptx_reg_new(b, PTX_U64), past = ptx_reg_new(b, PTX_PRED);
  ptx_sort_divide(b, e, p->inner, &o, &i);
  ptx_inst(b, "mul.lo.u64 $r, $r, $D", base, o, p->steps * p->inner);
  ptx_inst(b, "add.u64 $r, $r, $r", base, base, i);
  ptx_inst(b, "mov.u64 $r, 0", s);
  PtxLabel next = ptx_label_new(b, "step"), done = ptx_label_new(b, "steps_done");
  ptx_label_place(b, next);
  ptx_inst(b, "setp.ge.u64 $r, $r, $D", past, s, p->steps);
  ptx_inst(b, "@$r bra $l", past, done);
  PtxReg at = ptx_reg_new(b, PTX_U64), position = ptx_reg_new(b, PTX_U64);
  if (p->reverse) ptx_inst(b, "sub.u64 $r, $D, $r", at, p->steps - 1, s);
  else ptx_inst(b, "mov.u64 $r, $r", at, s);
  ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", position, at, p->inner, base);
  PtxReg args[2 * SCAN_MAX_VALUES], results[2 * SCAN_MAX_VALUES];
  for (int k = 0; k < p->inputs; k++) {
    int bytes = type_byte_size(p->input_types[k]);
    args[k] = ptx_sort_value_load(b, p->input_types[k], ptx_element_address(b, in[k], position, bytes));
  }
  for (int c = 0; c < p->carries; c++) args[p->inputs + c] = carry[c];
  if (!ptx_scalar_call_emit_results(b, step, args, results, p->outputs + p->carries, st)) return false;
  for (int k = 0; k < p->outputs; k++) {
    int bytes = type_byte_size(p->output_types[k]);
    ptx_sort_value_store(b, p->output_types[k], ptx_element_address(b, out[k], position, bytes), results[k]);
  }
  /* through copies: a new carry may be another carry's old value */
  PtxReg next_carry[SCAN_MAX_VALUES];
  for (int c = 0; c < p->carries; c++) {
    next_carry[c] = ptx_reg_like(b, carry[c]);
    move_into(b, next_carry[c], results[p->outputs + c]);
  }
  for (int c = 0; c < p->carries; c++) move_into(b, carry[c], next_carry[c]);
  ptx_inst(b, "add.u64 $r, $r, 1", s, s);
  ptx_inst(b, "bra $l", next);
  ptx_label_place(b, done);
  return true;
}

/* .entry with pointers in0.., init0.., out0.., carry_out0.. */
static bool emit_scan(PtxBuilder *b, const char *entry, const ScanPlan *p, const Computation *step, Status *st) {
  char name[24];
  PtxReg in[SCAN_MAX_VALUES], init[SCAN_MAX_VALUES], out[SCAN_MAX_VALUES], last[SCAN_MAX_VALUES];
  PtxReg carry[SCAN_MAX_VALUES];
  ptx_kernel_begin(b, entry, "scan: one thread per slice element walks every step");
  const char *prefixes[4] = {"in", "init", "out", "final"};
  int counts[4] = {p->inputs, p->carries, p->outputs, p->carries};
  PtxReg *regs[4] = {in, init, out, last};
  for (int g = 0; g < 4; g++)
    for (int k = 0; k < counts[g]; k++) snprintf(name, sizeof name, "%s%d", prefixes[g], k), ptx_kernel_param(b, PTX_U64, name);
  ptx_kernel_set_max_threads(b, 256);
  for (int g = 0; g < 4; g++)
    for (int k = 0; k < counts[g]; k++)
      snprintf(name, sizeof name, "%s%d", prefixes[g], k), regs[g][k] = ptx_param_load_global_pointer(b, name);
  PtxSortLoop l = ptx_sort_loop_open(b, p->outer * p->inner);
  for (int c = 0; c < p->carries; c++) {
    int bytes = type_byte_size(p->carry_types[c]);
    PtxReg v = ptx_sort_value_load(b, p->carry_types[c], ptx_element_address(b, init[c], l.i, bytes));
    carry[c] = v;   /* a register of its own, reassigned at each step */
  }
  if (!emit_steps(b, p, step, in, out, l.i, carry, st)) {
    ptx_kernel_abandon(b);
    return false;
  }
  for (int c = 0; c < p->carries; c++) {
    int bytes = type_byte_size(p->carry_types[c]);
    ptx_sort_value_store(b, p->carry_types[c], ptx_element_address(b, last[c], l.i, bytes), carry[c]);
  }
  ptx_sort_loop_close(b, &l);
  ptx_kernel_end(b);
  return true;
}

const char *gpu_scan_refusal(const Program *program, const Instruction *inst) {
  ScanPlan p = {0};
  const char *why = scan_plan(inst, &p);
  if (why) return why;
  /* A result may share an operand's storage (as the program's plan puts
   * it) only where element positions match: a stacked output over an
   * input, a final carry over its init. */
  for (int k = 0; k < p.outputs + p.carries; k++)
    for (int i = 0; i < inst->operand_count; i++)
      if (program_shares_storage(program, inst, k, inst->operands[i], 0) && (k < p.outputs) != (i < p.inputs))
        return "a scan result sharing storage with an operand of other dims";
  return NULL;
}

bool gpu_compile_scan(GpuCompile *c, const Instruction *inst) {
  ScanPlan p = {0};
  scan_plan(inst, &p);  /* gpu_scan_refusal found no problem */
  int n = inst->operand_count, parts = p.outputs + p.carries, buffers[4 * SCAN_MAX_VALUES];
  for (int i = 0; i < n; i++) buffers[i] = gpu_binding_of(c, inst->operands[i], 0);
  for (int k = 0; k < parts; k++) buffers[n + k] = gpu_binding_of(c, inst, k);  /* shared where gpu_scan_refusal allows */
  int64_t total = p.outer * p.inner;
  if (total == 0) return true;
  char entry[160];
  Status st = {0};
  gpu_entry_name(c, inst, "scan", entry, sizeof entry);
  if (!emit_scan(c->ptx, entry, &p, inst->called[0], &st)) return gpu_refuse(c, inst, st.message);
  int64_t blocks = (total + 255) / 256;
  return gpu_add_launch(c, inst, entry, (unsigned)(blocks < 65535 ? blocks : 65535), 256, buffers, n + parts, NULL,
                        0) != NULL;
}
