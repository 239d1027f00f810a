/* The GPU backend's matrix products: dot, and fusions around a dot.
 *
 * A dot becomes one batched GEMM (ptx_gemm.h): HLO's dimension numbers
 * name, for each operand, its batch dims, its contracting dims and (the
 * rest, in order) its free dims; the result's dims are the batch dims,
 * then lhs's free dims, then rhs's. Each of the four GEMM indices (batch,
 * m, n, k) is described in each operand by the strides of its dims in that
 * operand's physical layout, so transposed operands, several contracting
 * or batch dims and non-row-major layouts need no copy.
 *
 * A fusion around a dot (an output fusion, a dot with its bias add and
 * activation; or a dot alone inside a fusion) runs the GEMM, then the rest
 * of the fused computation as one kernel of the kernel IR
 * (lower_epilogue) reading the product: straight into the fusion's output
 * when the dot is the fusion's root, else through a scratch area of the
 * temporary block (gpu_reserve_temp). scaled-dot and ragged-dot are
 * refused, located. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_gemm.h"
#include "emit_ptx/ptx_kernel.h"
#include "opt/lower.h"

/* Element strides of each logical dim in s's layout. */
static void physical_strides(const Shape *s, int64_t *strides) {
  int64_t step = 1;
  for (int i = 0; i < s->rank; i++) {
    int d = s->minor_to_major[i];
    strides[d] = step;
    step *= s->dims[d];
  }
}

/* The dims of an operand of rank `rank` in neither list, in order. */
static int free_dims(int rank, const IntList *batch, const IntList *contracting, int *out) {
  bool used[AXLE_MAX_RANK] = {0};
  for (int i = 0; i < batch->count; i++) used[batch->values[i]] = true;
  for (int i = 0; i < contracting->count; i++) used[contracting->values[i]] = true;
  int n = 0;
  for (int d = 0; d < rank; d++)
    if (!used[d]) out[n++] = d;
  return n;
}

/* The GEMM of dot, whose operands hold their bytes in the layouts lhs and
 * rhs and whose product goes out in layout out. */
static const char *dot_gemm(const Instruction *dot, const Shape *lhs, const Shape *rhs, const Shape *out, PtxGemm *g) {
  if (dot->opcode != OP_DOT) return "scaled-dot and ragged-dot have no GPU kernel yet";
  if (lhs->element_size_bits || rhs->element_size_bits || out->element_size_bits)
    return "a dot in a packed layout (E(n))";
  const DotDims *dd = attrs_dot(&dot->attrs);
  int64_t ls[AXLE_MAX_RANK], rs[AXLE_MAX_RANK], os[AXLE_MAX_RANK];
  physical_strides(lhs, ls);
  physical_strides(rhs, rs);
  physical_strides(out, os);
  int lfree[AXLE_MAX_RANK], rfree[AXLE_MAX_RANK];
  int nb = dd->lhs_batch.count;
  int nm = free_dims(lhs->rank, &dd->lhs_batch, &dd->lhs_contracting, lfree);
  int nn = free_dims(rhs->rank, &dd->rhs_batch, &dd->rhs_contracting, rfree);
  if (nb + nm + nn != out->rank) return "a dot whose result rank does not match its dimension numbers";
  memset(g, 0, sizeof *g);
  g->lhs_type = lhs->type;
  g->rhs_type = rhs->type;
  g->result_type = out->type;
  g->batch = g->m = g->n = g->k = 1;
  for (int i = 0; i < nb; i++) {
    int l = (int)dd->lhs_batch.values[i], r = (int)dd->rhs_batch.values[i];
    g->batch *= out->dims[i];
    ptx_gemm_dims_add(&g->lhs_batch, lhs->dims[l], ls[l]);
    ptx_gemm_dims_add(&g->rhs_batch, rhs->dims[r], rs[r]);
    ptx_gemm_dims_add(&g->out_batch, out->dims[i], os[i]);
  }
  for (int i = 0; i < nm; i++) {
    g->m *= lhs->dims[lfree[i]];
    ptx_gemm_dims_add(&g->lhs_m, lhs->dims[lfree[i]], ls[lfree[i]]);
    ptx_gemm_dims_add(&g->out_m, out->dims[nb + i], os[nb + i]);
  }
  for (int i = 0; i < nn; i++) {
    g->n *= rhs->dims[rfree[i]];
    ptx_gemm_dims_add(&g->rhs_n, rhs->dims[rfree[i]], rs[rfree[i]]);
    ptx_gemm_dims_add(&g->out_n, out->dims[nb + nm + i], os[nb + nm + i]);
  }
  for (int i = 0; i < dd->lhs_contracting.count; i++) {
    int l = (int)dd->lhs_contracting.values[i], r = (int)dd->rhs_contracting.values[i];
    g->k *= lhs->dims[l];
    ptx_gemm_dims_add(&g->lhs_k, lhs->dims[l], ls[l]);
    ptx_gemm_dims_add(&g->rhs_k, rhs->dims[r], rs[r]);
  }
  return NULL;
}

/* The GEMM kernel of dot and its launch over bindings lhs, rhs, out. */
static bool add_gemm(GpuCompile *c, const Instruction *inst, const Instruction *dot, const Shape *lhs_layout,
                     const Shape *rhs_layout, const Shape *out_layout, int lhs, int rhs, int out) {
  PtxGemm g;
  const char *why = dot_gemm(dot, lhs_layout, rhs_layout, out_layout, &g);
  if (why) return gpu_refuse(c, inst, why);
  if (g.batch * g.m * g.n == 0) return true;  /* nothing to write */
  char entry[160];
  gpu_entry_name(c, inst, "gemm", entry, sizeof entry);
  PtxGemmShape shape;
  Status st = {0};
  if (!ptx_gemm_emit(c->ptx, &g, entry, &shape, &st)) return gpu_refuse(c, inst, st.message);
  int buffers[3] = {lhs, rhs, out};
  unsigned grid = (unsigned)(shape.blocks < (1 << 30) ? shape.blocks : (1 << 30));
  return gpu_add_launch(c, inst, entry, grid, (unsigned)shape.block_threads, buffers, 3, NULL, 0) != NULL;
}

bool gpu_compile_dot(GpuCompile *c, const Instruction *inst) {
  if (inst->operand_count != 2) return gpu_refuse(c, inst, "scaled-dot and ragged-dot have no GPU kernel yet");
  const Instruction *lhs = inst->operands[0], *rhs = inst->operands[1];
  return add_gemm(c, inst, inst, &lhs->shape, &rhs->shape, &inst->shape, gpu_binding_of(c, lhs, 0),
                  gpu_binding_of(c, rhs, 0), gpu_binding_of(c, inst, 0));
}

/* ---- fusions around a dot ---- */

/* The one dot (or scaled/ragged dot) of the fused computation, or NULL. */
static const Instruction *fused_product(const Computation *f, const char **why) {
  const Instruction *found = NULL;
  for (int i = 0; i < f->instruction_count; i++) {
    Opcode op = f->instructions[i]->opcode;
    if (op != OP_DOT && op != OP_SCALED_DOT && op != OP_RAGGED_DOT) continue;
    if (found) return *why = "a fusion with more than one dot", NULL;
    found = f->instructions[i];
  }
  if (!found) *why = "an output fusion without a dot";
  return found;
}

/* The fusion operand a fused dot operand reads: it must be a parameter. */
static const Instruction *fusion_operand(const Instruction *fusion, const Instruction *operand) {
  if (operand->opcode != OP_PARAMETER) return NULL;
  int64_t n = operand->attrs.parameter_number;
  return n >= 0 && n < fusion->operand_count ? fusion->operands[n] : NULL;
}

/* A fused constant's bytes in the layout the kernel reads. */
static void *constant_bytes(const Literal *lit, const Shape *layout) {
  size_t bytes = (size_t)shape_byte_size(&lit->shape);
  void *data = calloc_or_exit(bytes ? bytes : 1, 1);
  if (!shape_is_row_major(layout)) relayout_copy(layout, lit->data, data, true);
  else if (bytes) memcpy(data, lit->data, bytes);
  return data;
}

/* The epilogue kernel k of fusion, reading the product from binding
 * `product`: its other inputs are the fusion's operands (or constants). */
static bool add_epilogue(GpuCompile *c, const Instruction *fusion, const Instruction *dot, const Kernel *k,
                         int product) {
  char base[128], entry[160];
  ptx_entry_name(k->name, base, sizeof base);
  snprintf(entry, sizeof entry, "k%d_%s_epilogue", c->p->launch_count, base);
  PtxKernelShape shape;
  Status why = {0};
  if (!ptx_kernel_emit(c->ptx, k, entry, &shape, &why)) return gpu_refuse(c, fusion, why.message);
  int n = k->input_count + k->output_count;
  int *buffers = calloc_or_exit((size_t)n, sizeof *buffers);
  bool ok = true;
  for (int i = 0; ok && i < k->input_count; i++) {
    const KernelBuffer *in = &k->inputs[i];
    if (in->constant) {
      if (in->shape.element_size_bits) ok = gpu_refuse(c, fusion, "a constant in a packed layout (E(n))");
      GpuBinding b = {.kind = GPU_BINDING_CONSTANT, .bytes = shape_byte_size(&in->constant->shape)};
      if (ok) buffers[i] = gpu_program_add_binding(c->p, b, constant_bytes(in->constant, &in->shape));
    } else {
      buffers[i] = in->source == dot ? product : gpu_binding_of(c, in->source, 0);
    }
  }
  for (int o = 0; o < k->output_count; o++)
    buffers[k->input_count + o] = gpu_binding_of(c, fusion, k->outputs[o].output_index);
  unsigned grid = (unsigned)(shape.blocks < (1 << 30) ? shape.blocks : (1 << 30));
  ok = ok && gpu_add_launch(c, fusion, entry, grid, (unsigned)shape.block_threads, buffers, n, NULL, 0);
  free(buffers);
  return ok;
}

/* The epilogue's read of the product must see the layout the GEMM wrote. */
static bool epilogue_reads_layout(const Kernel *k, const Instruction *dot, const Shape *written) {
  for (int i = 0; i < k->input_count; i++)
    if (k->inputs[i].source == dot && !k->inputs[i].constant &&
        (!shape_equal(&k->inputs[i].shape, written) ||
         memcmp(k->inputs[i].shape.minor_to_major, written->minor_to_major, (size_t)written->rank) != 0))
      return false;
  return true;
}

bool gpu_compile_dot_fusion(GpuCompile *c, const Instruction *inst) {
  const Computation *f = inst->called_count ? inst->called[0] : NULL;
  const char *why = "a fusion without a computation";
  const Instruction *dot = f ? fused_product(f, &why) : NULL;
  if (!dot) return gpu_refuse(c, inst, why);
  if (dot->operand_count != 2) return gpu_refuse(c, inst, "scaled-dot and ragged-dot have no GPU kernel yet");
  const Instruction *lhs = fusion_operand(inst, dot->operands[0]), *rhs = fusion_operand(inst, dot->operands[1]);
  if (!lhs || !rhs) return gpu_refuse(c, inst, "a fused dot whose operand the fusion computes itself");
  int lhs_binding = gpu_binding_of(c, lhs, 0), rhs_binding = gpu_binding_of(c, rhs, 0);
  if (dot == f->root)
    return add_gemm(c, inst, dot, &lhs->shape, &rhs->shape, &inst->shape, lhs_binding, rhs_binding,
                    gpu_binding_of(c, inst, 0));
  Status st = {0};
  Kernel *k = lower_epilogue(inst, dot, &st);
  if (!k) return gpu_refuse(c, inst, st.message);
  bool ok = epilogue_reads_layout(k, dot, &dot->shape) ||
            gpu_refuse(c, inst, "an epilogue that reads the product in another layout");
  int scratch = ok ? gpu_reserve_temp(c, shape_byte_size(&dot->shape)) : -1;
  ok = ok && add_gemm(c, inst, dot, &lhs->shape, &rhs->shape, &dot->shape, lhs_binding, rhs_binding, scratch);
  ok = ok && add_epilogue(c, inst, dot, k, scratch);
  kernel_free(k);
  return ok;
}
