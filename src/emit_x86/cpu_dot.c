/* The CPU backend's dots: an unfused dot, and an output fusion (a dot or a
 * convolution and the elementwise epilogue the optimizer fused onto it).
 * An f32 dot whose dimensions merge into strides is a call of the blocked
 * GEMM (gemm.h) on the operands where they lie; any other dot (other types,
 * dimensions that need a transpose, a result in another layout) is the
 * gathered product of cpu_product.c. */
#include <string.h>

#include "emit_x86/cpu_compile.h"


/* Merges the dims dims[0..n) of a shape (outermost first) into one extent
 * and one stride; false when they are not evenly spaced in memory. Dims of
 * extent 1 are skipped: any stride serves them. */
static bool dims_merge(const Shape *s, const int64_t *dims, int n, int64_t *extent, int64_t *stride) {
  int64_t strides[AXLE_MAX_RANK];
  layout_strides(s, strides);
  *extent = 1;
  *stride = 0;
  int64_t last = -1;
  for (int i = n - 1; i >= 0; i--) {  /* innermost first */
    int64_t d = dims[i], e = s->dims[d];
    if (e == 1) continue;
    if (last < 0) *stride = strides[d];
    else if (strides[d] != strides[last] * s->dims[last]) return false;
    *extent *= e;
    last = d;
  }
  return true;
}

/* The dims of an operand of rank `rank` that are in neither list. */
static int dims_free(int rank, const IntList *a, const IntList *b, int64_t *out) {
  int n = 0;
  for (int d = 0; d < rank; d++) {
    bool used = false;
    for (int i = 0; i < a->count; i++) used |= a->values[i] == d;
    for (int i = 0; i < b->count; i++) used |= b->values[i] == d;
    if (!used) out[n++] = d;
  }
  return n;
}

static void dims_range(int64_t *out, int from, int count) {
  for (int i = 0; i < count; i++) out[i] = from + i;
}

/* The GEMM problem of dot (sizes and element strides; pointers are set
 * per run); false when it is not f32 or its dimensions do not map to one
 * batch, row, column and contracting stride each. why says which. */
static bool dot_problem(const Instruction *dot, GemmProblem *g, const char **why) {
  const Shape *lhs = &dot->operands[0]->shape, *rhs = &dot->operands[1]->shape, *out = &dot->shape;
  *why = "a dot that is not f32 throughout";
  if (lhs->type != TYPE_F32 || rhs->type != TYPE_F32 || out->type != TYPE_F32) return false;
  const DotDims *dd = attrs_dot(&dot->attrs);
  int64_t lfree[AXLE_MAX_RANK], rfree[AXLE_MAX_RANK], ob[AXLE_MAX_RANK], om[AXLE_MAX_RANK], on[AXLE_MAX_RANK];
  int nb = dd->lhs_batch.count;
  int nm = dims_free(lhs->rank, &dd->lhs_batch, &dd->lhs_contracting, lfree);
  int nn = dims_free(rhs->rank, &dd->rhs_batch, &dd->rhs_contracting, rfree);
  dims_range(ob, 0, nb);
  dims_range(om, nb, nm);
  dims_range(on, nb + nm, nn);
  memset(g, 0, sizeof *g);
  int64_t e, unused, cn_stride;
  *why = "a dot whose dimensions do not map to GEMM strides";
  return dims_merge(lhs, dd->lhs_batch.values, nb, &g->batch, &g->a_batch_stride) &&
         dims_merge(rhs, dd->rhs_batch.values, nb, &e, &g->b_batch_stride) &&
         dims_merge(lhs, lfree, nm, &g->m, &g->a_row_stride) &&
         dims_merge(rhs, rfree, nn, &g->n, &g->b_col_stride) &&
         dims_merge(lhs, dd->lhs_contracting.values, dd->lhs_contracting.count, &g->k, &g->a_col_stride) &&
         dims_merge(rhs, dd->rhs_contracting.values, dd->rhs_contracting.count, &e, &g->b_row_stride) &&
         dims_merge(out, ob, nb, &e, &g->c_batch_stride) && dims_merge(out, om, nm, &e, &g->c_row_stride) &&
         dims_merge(out, on, nn, &unused, &cn_stride) && (g->n <= 1 || cn_stride == 1);
}

/* The gathered product of dot: offset tables over its batch, free and
 * contracting dimensions, for any dimension numbers and types. */
static ProductPlan *dot_product_plan(const Instruction *dot) {
  const Shape *lhs = &dot->operands[0]->shape, *rhs = &dot->operands[1]->shape, *out = &dot->shape;
  const DotDims *dd = attrs_dot(&dot->attrs);
  int64_t lfree[AXLE_MAX_RANK], rfree[AXLE_MAX_RANK], ob[AXLE_MAX_RANK], om[AXLE_MAX_RANK], on[AXLE_MAX_RANK];
  int nb = dd->lhs_batch.count, nk = dd->lhs_contracting.count;
  int nm = dims_free(lhs->rank, &dd->lhs_batch, &dd->lhs_contracting, lfree);
  int nn = dims_free(rhs->rank, &dd->rhs_batch, &dd->rhs_contracting, rfree);
  dims_range(ob, 0, nb);
  dims_range(om, nb, nm);
  dims_range(on, nb + nm, nn);
  ProductPlan *p = calloc_or_exit(1, sizeof *p);
  p->lhs_type = lhs->type;
  p->rhs_type = rhs->type;
  p->result_type = out->type;
  p->arithmetic = product_arithmetic_of(out->type);
  int64_t unused;
  p->a[0] = offset_table_create(lhs, dd->lhs_batch.values, nb, &p->batch);
  p->a[1] = offset_table_create(lhs, lfree, nm, &p->m);
  p->a[2] = offset_table_create(lhs, dd->lhs_contracting.values, nk, &p->k);
  p->b[0] = offset_table_create(rhs, dd->rhs_batch.values, nb, &unused);
  p->b[1] = offset_table_create(rhs, dd->rhs_contracting.values, nk, &unused);
  p->b[2] = offset_table_create(rhs, rfree, nn, &p->n);
  p->c[0] = offset_table_create(out, ob, nb, &unused);
  p->c[1] = offset_table_create(out, om, nm, &unused);
  p->c[2] = offset_table_create(out, on, nn, &unused);
  return p;
}

/* A step computing dot (inst names it in messages) from the bindings lhs
 * and rhs into out: the GEMM on the operands where they lie when the dot
 * is f32 and its dimensions merge into GEMM strides, else the gathered
 * product (cpu_product.c). */
static bool add_dot_step(CpuCompile *c, const Instruction *inst, const Instruction *dot, int lhs, int rhs, int out) {
  GemmProblem g;
  const char *why;
  if (shape_element_count(&dot->shape) == 0) return true;  /* nothing to write */
  if (!dot_problem(dot, &g, &why)) return product_step_add(c, inst, dot_product_plan(dot), lhs, rhs, out);
  if (lhs < 0 || rhs < 0 || out < 0) return cpu_refuse(c, inst, "a dot operand the plan does not place");
  if (!c->p->gemm) {
    c->p->gemm = gemm_plan_create(&c->p->cpu, c->st);
    if (!c->p->gemm) return false;
  }
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_DOT, inst, 3);
  s->dot = g;
  s->buffers[0] = lhs;
  s->buffers[1] = rhs;
  s->buffers[2] = out;
  return true;
}

bool cpu_compile_dot(CpuCompile *c, const Instruction *inst) {
  return add_dot_step(c, inst, inst, cpu_binding_of(c, inst->operands[0], 0), cpu_binding_of(c, inst->operands[1], 0),
                      cpu_binding_of(c, inst, 0));
}

/* The binding of an operand of a fused dot: a parameter of the fused
 * computation is the fusion's operand; anything else is computed inside. */
static int fused_operand_binding(const CpuCompile *c, const Instruction *fusion, const Instruction *operand) {
  if (operand->opcode != OP_PARAMETER) return -1;
  int64_t n = operand->attrs.parameter_number;
  if (n < 0 || n >= fusion->operand_count) return -1;
  return cpu_binding_of(c, fusion->operands[n], 0);
}

static bool is_product(const Instruction *inst) {
  return inst->opcode == OP_DOT || inst->opcode == OP_CONVOLUTION;
}

bool cpu_fusion_has_product(const Instruction *fusion) {
  if (fusion->opcode != OP_FUSION || fusion->called_count < 1) return false;
  const Computation *body = fusion->called[0];
  for (int i = 0; i < body->instruction_count; i++)
    if (is_product(body->instructions[i])) return true;
  return false;
}

/* An output fusion (or any fusion around one dot or convolution): the
 * product through the GEMM into a temporary placed after the plan's block,
 * then the rest of the fused computation as a loop kernel that reads it. */
bool cpu_compile_output_fusion(CpuCompile *c, const Instruction *fusion) {
  const Computation *body = fusion->called[0];
  const Instruction *product = NULL;
  for (int i = 0; i < body->instruction_count; i++) {
    const Instruction *inst = body->instructions[i];
    if (!is_product(inst)) continue;
    if (product) return cpu_refuse(c, fusion, "a fusion with more than one dot or convolution");
    product = inst;
  }
  if (!product) return cpu_refuse(c, fusion, "an output fusion around an op other than a dot or convolution");
  int lhs = fused_operand_binding(c, fusion, product->operands[0]);
  int rhs = fused_operand_binding(c, fusion, product->operands[1]);
  if (lhs < 0 || rhs < 0) return cpu_refuse(c, fusion, "an output fusion whose dot reads values computed inside it");
  if (c->product_binding < 0) {
    CpuBinding temp = {.kind = BINDING_TEMP};  /* offset: cpu_compile_program */
    c->product_binding = cpu_program_add_binding(c->p, &temp);
  }
  if (shape_byte_size(&product->shape) > c->product_bytes) c->product_bytes = shape_byte_size(&product->shape);
  int out = c->product_binding;
  bool ok = product->opcode == OP_DOT ? add_dot_step(c, fusion, product, lhs, rhs, out)
                                      : cpu_conv_step_add(c, fusion, product, lhs, rhs, out);
  return ok && cpu_compile_kernel(c, fusion, product, out);
}
