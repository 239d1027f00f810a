/* The CPU backend's dots and the fusions around a dot or a convolution.
 *
 * An f32 dot whose dimensions merge into strides is a call of the blocked
 * GEMM (gemm.h) on the operands where they lie; any other dot (other types,
 * dimensions that need a transpose, a result in another layout), and
 * scaled-dot and ragged-dot, are gathered products (cpu_product.c).
 *
 * A fusion around one dot or convolution (an output fusion, or a loop
 * fusion as JAX writes one) computes the product into a temporary, then
 * the rest of its computation as an epilogue kernel reading it; operands
 * the fusion computes itself are computed first, each by a kernel of its
 * own. An epilogue that reads the product only where it writes runs on
 * each block of rows as the GEMM finishes it. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "ir/dot_plan.h"


/* The GEMM problem of dot, whose plan is p (sizes and element strides;
 * pointers are set per run); false when it is not f32 or its groups do
 * not each merge into one stride. why says which. */
static bool dot_problem(const Instruction *dot, const DotPlan *p, GemmProblem *g, const char **why) {
  const Shape *lhs = &dot->operands[0]->shape, *rhs = &dot->operands[1]->shape, *out = &dot->shape;
  *why = "a dot that is not f32 throughout";
  if (lhs->type != TYPE_F32 || rhs->type != TYPE_F32 || out->type != TYPE_F32) return false;
  memset(g, 0, sizeof *g);
  int64_t e, unused, cn_stride;
  *why = "a dot whose dimensions do not map to GEMM strides";
  return dot_dims_merge(lhs, p->lhs_batch, p->batch_count, &g->batch, &g->a_batch_stride) &&
         dot_dims_merge(rhs, p->rhs_batch, p->batch_count, &e, &g->b_batch_stride) &&
         dot_dims_merge(lhs, p->lhs_m, p->m_count, &g->m, &g->a_row_stride) &&
         dot_dims_merge(rhs, p->rhs_n, p->n_count, &g->n, &g->b_col_stride) &&
         dot_dims_merge(lhs, p->lhs_k, p->k_count, &g->k, &g->a_col_stride) &&
         dot_dims_merge(rhs, p->rhs_k, p->k_count, &e, &g->b_row_stride) &&
         dot_dims_merge(out, p->out_batch, p->batch_count, &e, &g->c_batch_stride) &&
         dot_dims_merge(out, p->out_m, p->m_count, &e, &g->c_row_stride) &&
         dot_dims_merge(out, p->out_n, p->n_count, &unused, &cn_stride) && (g->n <= 1 || cn_stride == 1);
}

/* The gathered product of dot, whose plan is plan: offset tables over its
 * batch, free and contracting groups, for any dimension numbers and types
 * (a ragged-dot's rhs group dim is in no group; its contracting groups put
 * the group dim first in the result). */
static ProductPlan *dot_product_plan(const Instruction *dot, const DotPlan *plan) {
  const Shape *lhs = &dot->operands[0]->shape, *rhs = &dot->operands[1]->shape, *out = &dot->shape;
  int nb = plan->batch_count, nm = plan->m_count, nn = plan->n_count, nk = plan->k_count;
  ProductPlan *p = mem_calloc(1, sizeof *p);
  p->lhs_type = lhs->type;
  p->rhs_type = rhs->type;
  p->result_type = out->type;
  p->arithmetic = product_arithmetic_of(out->type);
  int64_t unused;
  p->a[0] = product_offset_table_create(lhs, plan->lhs_batch, nb, &p->batch);
  p->a[1] = product_offset_table_create(lhs, plan->lhs_m, nm, &p->m);
  p->a[2] = product_offset_table_create(lhs, plan->lhs_k, nk, &p->k);
  p->b[0] = product_offset_table_create(rhs, plan->rhs_batch, nb, &unused);
  p->b[1] = product_offset_table_create(rhs, plan->rhs_k, nk, &unused);
  p->b[2] = product_offset_table_create(rhs, plan->rhs_n, nn, &p->n);
  p->c[0] = product_offset_table_create(out, plan->out_batch, nb, &unused);
  p->c[1] = product_offset_table_create(out, plan->out_m, nm, &unused);
  p->c[2] = product_offset_table_create(out, plan->out_n, nn, &unused);
  return p;
}

/* The plan of a product (src/ir/dot_plan.h); its problem when its
 * dimension numbers do not fit its operands (which cpu_product_refusal
 * refuses, so the compile functions have none). */
static const char *dot_plan_of(const Instruction *dot, DotPlan *p) {
  return dot_plan_make(attrs_dot(&dot->attrs), &dot->operands[0]->shape, &dot->operands[1]->shape, p);
}

/* A step computing dot (inst names it in messages) from the bindings lhs
 * and rhs into out: the GEMM on the operands where they lie when the dot
 * is f32 and its dimensions merge into GEMM strides, else the gathered
 * product (cpu_product.c). */
static bool add_dot_step(CpuCompile *c, const Instruction *inst, const Instruction *dot, int lhs, int rhs, int out) {
  GemmProblem g;
  const char *why;
  DotPlan plan;
  if (shape_element_count(&dot->shape) == 0) return true;  /* nothing to write */
  dot_plan_of(dot, &plan);
  if (!dot_problem(dot, &plan, &g, &why)) return product_step_add(c, inst, dot_product_plan(dot, &plan), lhs, rhs, out);
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

static bool is_product(const Instruction *inst) {
  return inst->opcode == OP_DOT || inst->opcode == OP_CONVOLUTION;
}

/* The one dot or convolution in a fusion's body; NULL with *why when it
 * holds none or more than one. */
static const Instruction *fused_product(const Instruction *fusion, const char **why) {
  const Computation *body = fusion->called[0];
  const Instruction *product = NULL;
  for (int i = 0; i < body->instruction_count; i++) {
    const Instruction *inst = body->instructions[i];
    if (!is_product(inst)) continue;
    if (product) return *why = "a fusion with more than one dot or convolution", NULL;
    product = inst;
  }
  if (!product) *why = "an output fusion around an op other than a dot or convolution";
  return product;
}

/* Whether a scaled-dot's scales tile its operands, which are real. */
static const char *scaled_dot_refusal(const Instruction *inst) {
  for (int k = 0; k < 2; k++) {
    const Shape *x = &inst->operands[k]->shape, *s = &inst->operands[k + 2]->shape;
    bool fits = x->rank == s->rank && !type_is_complex(x->type) && !type_is_complex(s->type);
    for (int d = 0; fits && d < x->rank; d++) fits = s->dims[d] > 0 && x->dims[d] % s->dims[d] == 0;
    if (!fits) return "a scale that does not tile its real operand";
  }
  if (type_is_complex(inst->shape.type)) return "a complex scaled-dot";
  return NULL;
}

const char *cpu_product_refusal(const Instruction *inst, Status *made) {
  const Instruction *product = inst;
  const char *why = NULL;
  if (inst->opcode == OP_FUSION && !(product = fused_product(inst, &why))) return why;
  if (product->opcode == OP_CONVOLUTION && (why = conv_dims_order_refusal(attrs_conv(&product->attrs)))) return why;
  if (shape_element_count(&product->shape) == 0) return NULL;  /* nothing to write */
  if (product->opcode == OP_CONVOLUTION) return cpu_conv_refusal(product, made);
  if (product->opcode == OP_SCALED_DOT && (why = scaled_dot_refusal(product))) return why;
  if (product->opcode == OP_RAGGED_DOT && attrs_dot(&product->attrs)->lhs_ragged.count != 1)
    return "a ragged-dot without one ragged dimension";
  DotPlan plan;
  return dot_plan_of(product, &plan);
}

/* ---- the epilogue per block of rows ---- */

/* A fused dot and the epilogue kernel run on each block of rows the GEMM
 * finishes, while the block is still in the cache. */
typedef struct FusedDot {
  GemmProblem dot;
  const GemmPlan *gemm;
  CompiledKernel *epilogue;
} FusedDot;

typedef struct FusedDotRun {
  const FusedDot *f;
  void *const *kernel_buffers;
  atomic_bool deferred;   /* the GEMM split the columns: run the epilogue after it */
} FusedDotRun;

static void fused_dot_free(void *state) {
  FusedDot *f = state;
  kernel_x86_free(f->epilogue);
  mem_free(f);
}

/* Kernel row r is the dot's (batch, row) b * M + i: the block's rows are
 * final once it spans every column. Column splits depend on the shape
 * only, so either every block runs its rows or none does. */
static void fused_block_finish(void *context, int64_t batch, int64_t row0, int64_t rows, int64_t col0, int64_t cols) {
  FusedDotRun *r = context;
  if (col0 != 0 || cols != r->f->dot.n) {
    atomic_store(&r->deferred, true);
    return;
  }
  kernel_x86_run_rows(r->f->epilogue, r->kernel_buffers, batch * r->f->dot.m + row0, rows);
}

/* Buffers: lhs, rhs, the product, then the epilogue kernel's. */
static bool fused_dot_call(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  (void)st;
  const FusedDot *f = s->state;
  FusedDotRun r = {.f = f, .kernel_buffers = buffers + 3};
  atomic_init(&r.deferred, false);
  GemmProblem g = f->dot;
  g.a = buffers[0];
  g.b = buffers[1];
  g.c = buffers[2];
  GemmEpilogue hook = {.finish_block = fused_block_finish, .context = &r};
  gemm_f32_batched(f->gemm, pool, &g, &hook);
  if (atomic_load(&r.deferred)) kernel_x86_run(f->epilogue, buffers + 3, pool);
  return true;
}

bool cpu_fused_dot_parts(const CpuStep *s, const GemmProblem **dot, const CompiledKernel **epilogue) {
  if (s->kind != CPU_STEP_CALL || s->call != fused_dot_call) return false;
  const FusedDot *f = s->state;
  *dot = &f->dot;
  *epilogue = f->epilogue;
  return true;
}

/* Whether product's result, as the GEMM lays its rows, is rows of the
 * epilogue kernel: a dot whose one column dim is the last (kernel row =
 * batch * M + row); a convolution of one group, whose result is batch,
 * spatial dims in order, then the feature, as every compiled one is
 * (conv_plan.h; kernel row = the GEMM row). */
static bool product_rows_are_kernel_rows(const Instruction *product) {
  if (product->shape.rank < 1) return false;
  if (product->opcode == OP_CONVOLUTION)
    return product->attrs.feature_group_count <= 1 && product->attrs.batch_group_count <= 1;
  DotPlan p;
  return !dot_plan_make(attrs_dot(&product->attrs), &product->operands[0]->shape, &product->operands[1]->shape, &p) &&
         p.n_count == 1;
}

/* Whether the epilogue k (the program stage's) of product can run per
 * block of its rows: a loop kernel over the product's own dims, its rows
 * the GEMM's, reading the product only at the point it computes. */
static bool epilogue_runs_per_block(const Kernel *k, const Instruction *product) {
  if (!product_rows_are_kernel_rows(product)) return false;
  bool fits = k && k->kind == KERNEL_LOOP && k->rank == product->shape.rank &&
              memcmp(k->dims, product->shape.dims, sizeof *k->dims * (size_t)k->rank) == 0;
  int input = -1;
  for (int i = 0; fits && i < k->input_count; i++)
    if (k->inputs[i].source == product && !k->inputs[i].constant) input = i;
  fits = fits && input >= 0;
  for (int i = 0; fits && i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    if (op->kop != KOP_LOAD || op->buffer != input) continue;
    fits = op->arg_count == k->rank;
    for (int d = 0; fits && d < k->rank; d++)
      fits = k->ops[op->args[d]].kop == KOP_INDEX && k->ops[op->args[d]].dim == d;
  }
  return fits;
}

/* Merges the last two steps, the dot's GEMM and its epilogue kernel, into
 * one call that runs the epilogue on each block of rows the GEMM finishes,
 * when the epilogue allows it; otherwise leaves them as they are. */
static void epilogue_fuse_into_product(CpuCompile *c, const Instruction *fusion, const Instruction *product) {
  CpuProgram *p = c->p;
  if (p->step_count < 2) return;
  CpuStep *d = &p->steps[p->step_count - 2], *k = &p->steps[p->step_count - 1];
  if (d->inst != fusion || k->kind != CPU_STEP_KERNEL || k->inst != fusion) return;
  if (d->kind == CPU_STEP_CALL) {
    /* A gathered product: it takes the kernel if its plan allows. */
    if (epilogue_runs_per_block(c->step->kernel, product) && product_step_take_epilogue(d, k)) p->step_count--;
    return;
  }
  if (d->kind != CPU_STEP_DOT || !epilogue_runs_per_block(c->step->kernel, product)) return;
  FusedDot *f = mem_calloc(1, sizeof *f);
  f->dot = d->dot;
  f->gemm = p->gemm;
  f->epilogue = k->kernel;
  int *buffers = mem_calloc((size_t)(3 + k->buffer_count) + 1, sizeof *buffers);
  memcpy(buffers, d->buffers, 3 * sizeof *buffers);
  memcpy(buffers + 3, k->buffers, (size_t)k->buffer_count * sizeof *buffers);
  mem_free(d->buffers);
  mem_free(k->buffers);
  d->kind = CPU_STEP_CALL;
  d->call = fused_dot_call;
  d->state = f;
  d->free_state = fused_dot_free;
  d->buffers = buffers;
  d->buffer_count += k->buffer_count;
  p->step_count--;
}

/* An output fusion (or any fusion around one dot or convolution): the
 * product through the GEMM into a temporary placed after the plan's block,
 * then the rest of the fused computation as a loop kernel that reads it. */
bool cpu_compile_output_fusion(CpuCompile *c, const Instruction *fusion) {
  const char *why;
  const Instruction *product = fused_product(fusion, &why);  /* one: cpu_product_refusal */
  /* The program stage placed the product's operands; those computed inside
   * the fusion were the kernel steps before this one. */
  int lhs = c->step->product_operands[0], rhs = c->step->product_operands[1];
  if (lhs < 0 || rhs < 0)
    return cpu_refuse(c, fusion, c->step->unsupported ? c->step->unsupported : "a fused product without operands");
  if (c->product_binding < 0) {
    CpuBinding temp = {.kind = BINDING_TEMP};  /* offset: cpu_compile_finish */
    c->product_binding = cpu_program_add_binding(c->p, &temp);
  }
  if (shape_byte_size(&product->shape) > c->product_bytes) c->product_bytes = shape_byte_size(&product->shape);
  int out = c->product_binding;
  bool ok = product->opcode == OP_DOT ? add_dot_step(c, fusion, product, lhs, rhs, out)
                                      : cpu_conv_step_add(c, fusion, product, lhs, rhs, out);
  ok = ok && cpu_compile_kernel(c, fusion, product, out);
  if (ok) epilogue_fuse_into_product(c, fusion, product);
  return ok;
}

/* ---- scaled-dot and ragged-dot: the gathered product with more ---- */

/* For each index over x's dims[0..n) (row-major over the list), the
 * offset of its scale: scale dim d covers x's dim d in blocks of
 * x.dims[d] / scale.dims[d]. */
static int64_t *scale_table_create(const Shape *x, const Shape *scale, const int64_t *dims, int n) {
  int64_t strides[AXLE_MAX_RANK], index[AXLE_MAX_RANK] = {0}, count = 1;
  shape_layout_strides(scale, strides);
  for (int i = 0; i < n; i++) count *= x->dims[dims[i]];
  int64_t *table = mem_calloc((size_t)count + 1, sizeof *table);
  for (int64_t at = 0; at < count; at++) {
    for (int i = 0; i < n; i++) {
      int64_t d = dims[i], block = x->dims[d] / scale->dims[d];
      table[at] += index[i] / block * strides[d];
    }
    for (int i = n - 1; i >= 0 && ++index[i] == x->dims[dims[i]]; i--) index[i] = 0;
  }
  return table;
}

/* scaled-dot(lhs, rhs, lhs_scale, rhs_scale): each operand element times
 * its block's scale, in double, then the dot. */
bool cpu_compile_scaled_dot(CpuCompile *c, const Instruction *inst) {
  if (shape_element_count(&inst->shape) == 0) return true;
  DotPlan plan;
  dot_plan_of(inst, &plan);  /* cpu_product_refusal found no problem */
  ProductPlan *p = dot_product_plan(inst, &plan);
  const Shape *lhs = &inst->operands[0]->shape, *rhs = &inst->operands[1]->shape;
  int nb = plan.batch_count, nm = plan.m_count, nn = plan.n_count, nk = plan.k_count;
  const Shape *ls = &inst->operands[2]->shape, *rs = &inst->operands[3]->shape;
  p->a_scale[0] = scale_table_create(lhs, ls, plan.lhs_batch, nb);
  p->a_scale[1] = scale_table_create(lhs, ls, plan.lhs_m, nm);
  p->a_scale[2] = scale_table_create(lhs, ls, plan.lhs_k, nk);
  p->b_scale[0] = scale_table_create(rhs, rs, plan.rhs_batch, nb);
  p->b_scale[1] = scale_table_create(rhs, rs, plan.rhs_k, nk);
  p->b_scale[2] = scale_table_create(rhs, rs, plan.rhs_n, nn);
  p->scale_type[0] = ls->type;
  p->scale_type[1] = rs->type;
  return product_step_add(c, inst, p, cpu_binding_of(c, inst->operands[0], 0), cpu_binding_of(c, inst->operands[1], 0),
                          cpu_binding_of(c, inst, 0));
}

/* For each index over s's dims[0..n), its coordinate along dims[which]. */
static int64_t *coordinate_table_create(const Shape *s, const int64_t *dims, int n, int which) {
  int64_t count = 1, index[AXLE_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) count *= s->dims[dims[i]];
  int64_t *table = mem_calloc((size_t)count + 1, sizeof *table);
  for (int64_t at = 0; at < count; at++) {
    table[at] = index[which];
    for (int i = n - 1; i >= 0 && ++index[i] == s->dims[dims[i]]; i--) index[i] = 0;
  }
  return table;
}

/* For each index over s's dims[0..n) (row-major over the list), its
 * index over the first `which` of them alone; *rows of those. */
static int64_t *prefix_table_create(const Shape *s, const int64_t *dims, int n, int which, int64_t *rows) {
  int64_t count = 1, tail = 1;
  for (int i = 0; i < n; i++) count *= s->dims[dims[i]];
  for (int i = which; i < n; i++) tail *= s->dims[dims[i]];
  int64_t *table = mem_calloc((size_t)count + 1, sizeof *table);
  for (int64_t at = 0; tail > 0 && at < count; at++) table[at] = at / tail;
  *rows = tail > 0 ? count / tail : 0;
  return table;
}

/* Where the rows of group_sizes lie: one per index over its leading dims
 * (one row for [G]), the groups `stride` apart, in its own layout. */
static void ragged_sizes_place(RaggedPlan *rp, const Shape *sizes) {
  int64_t leading[AXLE_MAX_RANK], strides[AXLE_MAX_RANK], count;
  for (int d = 0; d + 1 < sizes->rank; d++) leading[d] = d;
  rp->sizes_row_offset = product_offset_table_create(sizes, leading, sizes->rank - 1, &count);
  shape_layout_strides(sizes, strides);
  rp->sizes_group_stride = strides[sizes->rank - 1];
}

/* ragged-dot(lhs, rhs, group_sizes): see RaggedPlan (cpu_compile.h). A
 * ragged batch dimension changes nothing: the plain dot. */
bool cpu_compile_ragged_dot(CpuCompile *c, const Instruction *inst) {
  if (shape_element_count(&inst->shape) == 0) return true;
  DotPlan plan;
  dot_plan_of(inst, &plan);  /* one ragged dimension, no problem: cpu_product_refusal */
  const DotDims *dd = attrs_dot(&inst->attrs);
  const Shape *lhs = &inst->operands[0]->shape, *rhs = &inst->operands[1]->shape, *sizes = &inst->operands[2]->shape;
  RaggedPlan rp = {.groups = sizes->dims[sizes->rank - 1], .extent = lhs->dims[dd->lhs_ragged.values[0]],
                   .sizes_type = sizes->type};
  bool per_row = sizes->rank > 1;  /* [prefix..., G], not [G] */
  int64_t strides[AXLE_MAX_RANK];
  ProductPlan *p = dot_product_plan(inst, &plan);
  if (plan.ragged == DOT_RAGGED_ROWS) {
    rp.mode = RAGGED_ROWS;
    rp.coord = coordinate_table_create(lhs, plan.lhs_m, plan.m_count, plan.ragged_index);
    if (per_row) rp.prefix = prefix_table_create(lhs, plan.lhs_m, plan.m_count, plan.ragged_index, &rp.prefix_rows);
    shape_layout_strides(rhs, strides);
    rp.group_stride = strides[plan.rhs_group_dim];
    rp.result_bytes = shape_byte_size(&inst->shape);
  } else if (plan.ragged == DOT_RAGGED_SUMS) {
    rp.mode = RAGGED_SUMS;
    rp.coord = coordinate_table_create(lhs, plan.lhs_k, plan.k_count, plan.ragged_index);
    if (per_row) rp.prefix = prefix_table_create(lhs, plan.lhs_k, plan.k_count, plan.ragged_index, &rp.prefix_rows);
    shape_layout_strides(&inst->shape, strides);
    rp.group_stride = strides[0];
  }
  if (rp.mode != RAGGED_NONE) {
    rp.rows = per_row ? p->batch * rp.prefix_rows : 1;
    ragged_sizes_place(&rp, sizes);
  }
  p->ragged = rp;
  return product_step_add(c, inst, p, cpu_binding_of(c, inst->operands[0], 0), cpu_binding_of(c, inst->operands[1], 0),
                          cpu_binding_of(c, inst, 0));
}
