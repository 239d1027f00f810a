/* The CPU backend's dots: an unfused dot, and an output fusion (a dot and
 * the elementwise epilogue the optimizer fused onto it), each as a call of
 * the blocked GEMM (gemm.h) on strides read from the operands' layouts. */
#include <string.h>

#include "emit_x86/cpu_compile.h"


/* Element strides of s's dimensions in its layout. */
static void layout_strides(const Shape *s, int64_t strides[AXLE_MAX_RANK]) {
  int64_t step = 1;
  for (int i = 0; i < s->rank; i++) {
    strides[s->minor_to_major[i]] = step;
    step *= s->dims[s->minor_to_major[i]];
  }
}

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

/* A GEMM step computing dot (inst names it in messages) from the bindings
 * lhs and rhs into out. */
static bool add_dot_step(CpuCompile *c, const Instruction *inst, const Instruction *dot, int lhs, int rhs, int out) {
  GemmProblem g;
  const char *why;
  if (!dot_problem(dot, &g, &why)) return cpu_refuse(c, inst, why);
  if (lhs < 0 || rhs < 0 || out < 0) return cpu_refuse(c, inst, "a dot operand the plan does not place");
  if (!c->p->gemm) {
    c->p->gemm = gemm_plan_create(&c->p->cpu, c->st);
    if (!c->p->gemm) return false;
  }
  if (shape_element_count(&dot->shape) == 0) return true;  /* nothing to write */
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

/* An output fusion: its dot through the GEMM into a temporary placed after
 * the plan's block, then the rest of the fused computation as a loop kernel
 * that reads the product. */
bool cpu_compile_output_fusion(CpuCompile *c, const Instruction *fusion) {
  const Computation *body = fusion->called[0];
  const Instruction *dot = NULL;
  for (int i = 0; i < body->instruction_count; i++) {
    const Instruction *inst = body->instructions[i];
    if (inst->opcode != OP_DOT) continue;
    if (dot) return cpu_refuse(c, fusion, "an output fusion with more than one dot");
    dot = inst;
  }
  if (!dot) return cpu_refuse(c, fusion, "an output fusion around an op other than a dot");
  int lhs = fused_operand_binding(c, fusion, dot->operands[0]);
  int rhs = fused_operand_binding(c, fusion, dot->operands[1]);
  if (lhs < 0 || rhs < 0) return cpu_refuse(c, fusion, "an output fusion whose dot reads values computed inside it");
  if (c->product_binding < 0) {
    CpuBinding product = {.kind = BINDING_TEMP};  /* offset: cpu_compile_program */
    c->product_binding = cpu_program_add_binding(c->p, &product);
  }
  if (shape_byte_size(&dot->shape) > c->product_bytes) c->product_bytes = shape_byte_size(&dot->shape);
  int out = c->product_binding;
  return add_dot_step(c, fusion, dot, lhs, rhs, out) && cpu_compile_kernel(c, fusion, dot, out);
}
