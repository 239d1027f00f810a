/* The GPU backend's convolutions, and the output fusions around one.
 *
 * A convolution is one launch of the implicit-GEMM kernel (ptx_conv.c);
 * this file turns the HLO op into the GEMM's description (PtxConv): each
 * buffer's strides in its layout, the window, and the groups. Its
 * dim_labels are always canonical, b01f_01io->b01f (canonicalize-
 * convolutions, conv_plan.h): which dim is which is fixed.
 *
 * An output fusion (kOutput: a convolution with an elementwise epilogue,
 * src/opt/fusion.c, or one given in the input; the convolution's operands
 * are parameters of the fused computation or relabels of them,
 * program_fused_operand) is one launch where the epilogue (lower_epilogue)
 * can run at the convolution's store (ptx_conv_epilogue_fits), else two:
 * the convolution into a scratch area of its own (gpu_reserve_temp), then
 * the epilogue as a kernel of the kernel IR reading the scratch. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_conv.h"
#include "emit_ptx/ptx_kernel.h"
#include "ir/conv_plan.h"

/* ---- HLO convolution -> PtxConv ---- */

static bool describe_types(const Instruction *conv, const Shape *lhs, const Shape *rhs, const Shape *result,
                           Status *st) {
  ElementType t = result->type;
  if (t != TYPE_F32 && t != TYPE_F64 && t != TYPE_F16 && t != TYPE_BF16 && t != TYPE_C64 && t != TYPE_C128)
    return status_error(st, STATUS_UNSUPPORTED,
                        "a convolution of %s (the kernel takes f32, f64, f16, bf16, c64 and c128)", type_name(t));
  if (!ptx_conv_types_fit(t, lhs->type) || !ptx_conv_types_fit(t, rhs->type))
    return status_error(st, STATUS_UNSUPPORTED,
                        "a convolution of %s and %s into %s (mixed element types: the operands must be of the "
                        "result type or one it holds exactly)",
                        type_name(lhs->type), type_name(rhs->type), type_name(t));
  if (lhs->element_size_bits || rhs->element_size_bits || result->element_size_bits)
    return status_error(st, STATUS_UNSUPPORTED, "a convolution in a packed layout (E(n))");
  if (lhs->rank != result->rank || rhs->rank != result->rank || result->rank < 2 ||
      attrs_conv(&conv->attrs)->spatial_count != result->rank - 2)
    return status_error(st, STATUS_UNSUPPORTED, "a convolution whose operands and dim_labels disagree in rank");
  const char *order = conv_dims_order_refusal(attrs_conv(&conv->attrs));
  if (order) return status_error(st, STATUS_UNSUPPORTED, "%s", order);
  return true;
}

bool ptx_conv_describe(const Instruction *conv, const Shape *lhs, const Shape *rhs, const Shape *result,
                       PtxConv *d, Status *st) {
  memset(d, 0, sizeof *d);
  if (!describe_types(conv, lhs, rhs, result, st)) return false;
  int64_t ls[AXLE_MAX_RANK], rs[AXLE_MAX_RANK], os[AXLE_MAX_RANK];
  shape_layout_strides(lhs, ls);
  shape_layout_strides(rhs, rs);
  shape_layout_strides(result, os);
  d->type = result->type;
  d->lhs_type = lhs->type;
  d->rhs_type = rhs->type;
  int n = d->spatial_count = attrs_conv(&conv->attrs)->spatial_count;
  /* The groups and the window, as every implementation reads them. */
  ConvPlan plan;
  char why[200];
  if (!conv_plan_make(conv, lhs, rhs, &plan, why, sizeof why))
    return status_error(st, STATUS_UNSUPPORTED, "a convolution that does not fit its dimensions: %s", why);
  d->groups = plan.groups;
  d->group_in_features = plan.kernel_features;
  d->group_out_features = plan.group_out_features;
  d->out_batch = plan.out_batch;
  /* input and result [batch, spatial.., feature], kernel [spatial.., in, out] */
  d->lhs_batch = ls[0];
  d->lhs_feature = ls[n + 1];
  bool batch_grouped = plan.batch_groups > 1;
  d->lhs_group = batch_grouped ? d->out_batch * d->lhs_batch : d->group_in_features * d->lhs_feature;
  d->rhs_in_feature = rs[n];
  d->rhs_out_feature = rs[n + 1];
  d->out_batch_stride = os[0];
  d->out_feature = os[n + 1];
  for (int s = 0; s < n; s++) {
    d->in_spatial[s] = plan.in_size[s];
    d->kernel_spatial[s] = plan.kernel_size[s];
    d->out_spatial[s] = plan.out_size[s];
    d->lhs_spatial[s] = ls[1 + s];
    d->rhs_spatial[s] = rs[s];
    d->out_spatial_stride[s] = os[1 + s];
    d->window[s] = plan.window[s];
  }
  return true;
}

/* ---- launches ---- */

/* The kernel of d (with epilogue e, or NULL) launched over bindings[0..count)
 * (lhs, rhs, out; or lhs, rhs, the epilogue's inputs and outputs); at =
 * where a refusal points. */
static bool conv_launch(GpuCompile *c, const Instruction *at, const PtxConv *d, const PtxConvEpilogue *e,
                        const int *bindings, int count) {
  if (d->groups * ptx_conv_m(d) * ptx_conv_n(d) == 0) return true;  /* an empty result: nothing to write */
  char entry[160];
  gpu_entry_name(c, at, "conv", entry, sizeof entry);
  int64_t blocks = 0;
  int threads = 0;
  Status why = {0};
  if (!ptx_conv_emit(c->ptx, d, e, entry, &blocks, &threads, &why)) return gpu_refuse(c, at, why.message);
  /* the kernel loops over its tiles, so a capped grid is still correct */
  unsigned grid = (unsigned)(blocks < (1 << 30) ? blocks : (1 << 30));
  return gpu_add_launch(c, at, entry, grid, (unsigned)threads, bindings, count, NULL, 0) != NULL;
}

bool gpu_compile_convolution(GpuCompile *c, const Instruction *inst) {
  PtxConv d;
  Status unused = {0};
  /* gpu_conv_refusal described it before any code was made */
  ptx_conv_describe(inst, &inst->operands[0]->shape, &inst->operands[1]->shape, &inst->shape, &d, &unused);
  int bindings[3] = {gpu_binding_of(c, inst->operands[0], 0), gpu_binding_of(c, inst->operands[1], 0),
                     gpu_binding_of(c, inst, 0)};
  return conv_launch(c, inst, &d, NULL, bindings, 3);
}

/* ---- output fusions ---- */

/* The epilogue kernel k of fusion as a launch of its own, reading the
 * convolution's value from scratch. */
static bool epilogue_launch(GpuCompile *c, const Instruction *fusion, const ProgramStep *step, int scratch) {
  const Kernel *k = step->kernel;
  char entry[160];
  gpu_entry_name(c, fusion, "epilogue", entry, sizeof entry);
  Status why = {0};
  PtxKernelShape shape;
  if (!ptx_kernel_emit(c->ptx, k, entry, &shape, &why)) return gpu_refuse(c, fusion, why.message);
  int *buffers = mem_calloc((size_t)step->buffer_count + 1, sizeof *buffers);
  unsigned grid = (unsigned)(shape.blocks < (1 << 30) ? shape.blocks : (1 << 30));
  bool ok = gpu_step_buffers(c, step, scratch, buffers) &&
            gpu_add_launch(c, fusion, entry, grid, (unsigned)shape.block_threads, buffers, step->buffer_count, NULL,
                           0) != NULL;
  mem_free(buffers);
  return ok;
}

/* One launch when the epilogue can run at the convolution's store (the
 * convolution's own input binding is then never read: it gets the lhs's);
 * else the convolution into scratch, then the epilogue. */
static bool fusion_launch(GpuCompile *c, const Instruction *fusion, const Instruction *conv, const PtxConv *d,
                          const ProgramStep *step, const int operands[2]) {
  const Kernel *k = step->kernel;
  PtxConvEpilogue e = {.kernel = k, .conv_input = -1};
  for (int i = 0; i < k->input_count; i++)
    if (k->inputs[i].source == conv) e.conv_input = i;
  if (ptx_conv_epilogue_fits(d, &e)) {
    int count = 2 + k->input_count + k->output_count;
    int *buffers = mem_calloc((size_t)count, sizeof *buffers);
    buffers[0] = operands[0];
    buffers[1] = operands[1];
    bool ok = gpu_step_buffers(c, step, operands[0], buffers + 2) && conv_launch(c, fusion, d, &e, buffers, count);
    mem_free(buffers);
    return ok;
  }
  int scratch = gpu_reserve_temp(c, shape_byte_size(&conv->shape));
  int bindings[3] = {operands[0], operands[1], scratch};
  return conv_launch(c, fusion, d, NULL, bindings, 3) && epilogue_launch(c, fusion, step, scratch);
}

/* The one convolution of a fusion's computation; NULL with *why when it
 * holds none or more than one. */
static const Instruction *fused_convolution(const Instruction *fusion, const char **why) {
  const Computation *f = fusion->called_count ? fusion->called[0] : NULL;
  const Instruction *conv = NULL;
  for (int i = 0; f && i < f->instruction_count; i++) {
    if (f->instructions[i]->opcode != OP_CONVOLUTION) continue;
    if (conv) return *why = "a fusion holding two convolutions", NULL;
    conv = f->instructions[i];
  }
  if (!conv || conv->operand_count != 2) return *why = "a fusion without one two-operand convolution", NULL;
  return conv;
}

const char *gpu_conv_refusal(const Instruction *inst, Status *made) {
  PtxConv d;
  const char *why = NULL;
  if (inst->opcode != OP_FUSION) {
    if (inst->operand_count != 2) return "a convolution without two operands";
    if ((why = conv_dims_order_refusal(attrs_conv(&inst->attrs)))) return why;
    return ptx_conv_describe(inst, &inst->operands[0]->shape, &inst->operands[1]->shape, &inst->shape, &d, made)
               ? NULL
               : made->message;
  }
  const Instruction *conv = fused_convolution(inst, &why);
  if (!conv) return why;
  if ((why = conv_dims_order_refusal(attrs_conv(&conv->attrs)))) return why;
  const Shape *ls, *rs;
  if (!program_fused_operand(inst, conv->operands[0], &ls) || !program_fused_operand(inst, conv->operands[1], &rs))
    return "a convolution whose operands are computed inside its fusion";
  return ptx_conv_describe(conv, ls, rs, &conv->shape, &d, made) ? NULL : made->message;
}

bool gpu_compile_convolution_fusion(GpuCompile *c, const Instruction *inst) {
  /* one convolution, reading the fusion's operands: gpu_conv_refusal */
  const char *unused;
  const Instruction *conv = fused_convolution(inst, &unused);
  const Shape *ls, *rs;
  const Instruction *lhs = program_fused_operand(inst, conv->operands[0], &ls);
  const Instruction *rhs = program_fused_operand(inst, conv->operands[1], &rs);
  PtxConv d;
  Status described = {0};
  ptx_conv_describe(conv, ls, rs, &conv->shape, &d, &described);  /* as gpu_conv_refusal did */
  const ProgramStep *step = gpu_step_of(c, inst);
  const Kernel *k = step ? step->kernel : NULL;
  if (!k)
    return gpu_refuse(c, inst, step && step->unsupported ? step->unsupported : "a fused convolution without its epilogue");
  int operands[2] = {gpu_binding_of(c, lhs, 0), gpu_binding_of(c, rhs, 0)};
  return fusion_launch(c, inst, conv, &d, step, operands);
}
