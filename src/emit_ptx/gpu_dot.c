/* The GPU backend's matrix products: dot, scaled-dot, ragged-dot, and fusions around a dot.
 *
 * A dot becomes one batched GEMM (ptx_gemm.h): the dot's plan
 * (src/ir/dot_plan.h) names, for each operand, its batch dims, its
 * contracting dims and its free dims; the result's dims are the batch
 * dims, then lhs's free dims, then rhs's. Each of the four GEMM indices (batch,
 * m, n, k) is described in each operand by the strides of its dims in that
 * operand's physical layout, so transposed operands, several contracting
 * or batch dims and non-row-major layouts need no copy.
 *
 * A fusion around a dot (an output fusion, a dot with its bias add and
 * activation; or a dot alone inside a fusion) runs the GEMM, then the rest
 * of the fused computation as one kernel of the kernel IR
 * (lower_epilogue) reading the product: straight into the fusion's output
 * when the dot is the fusion's root, else through a scratch area of the
 * temporary block (gpu_reserve_temp). ragged-dot is the same GEMM kernel
 * told the group sizes (ptx_gemm.h), launched once per group; scaled-dot
 * multiplies each operand element by its scale as the GEMM loads it. */
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/gpu_compile.h"
#include "emit_ptx/ptx_gemm.h"
#include "emit_ptx/ptx_kernel.h"
#include "ir/dot_plan.h"

/* An operand or result as the GEMM sees it: element type, dims, and the
 * element stride of each dim in its buffer. A view may leave a dim out (a
 * ragged-dot's group dim), which no Shape can say. */
typedef struct View {
  ElementType type;
  int rank;
  int64_t dims[AXLE_MAX_RANK], strides[AXLE_MAX_RANK];
} View;

static View view_of(const Shape *s) {
  View v = {.type = s->type, .rank = s->rank};
  int64_t step = 1;
  for (int i = 0; i < s->rank; i++) {
    int d = s->minor_to_major[i];
    v.dims[d] = s->dims[d];
    v.strides[d] = step;
    step *= s->dims[d];
  }
  return v;
}

static void gemm_index_add(PtxGemmDims *dims, const View *v, int64_t d) {
  ptx_gemm_dims_add(dims, v->dims[d], v->strides[d]);
}

/* The GEMM of a product whose plan is p (src/ir/dot_plan.h) over views
 * lhs, rhs, out; algorithm is the dot's. */
static const char *dot_gemm(const DotPlan *p, DotAlgorithm algorithm, const View *lhs, const View *rhs,
                            const View *out, PtxGemm *g) {
  if (p->out_rank != out->rank) return "a dot whose result rank does not match its dimension numbers";
  memset(g, 0, sizeof *g);
  g->lhs_type = lhs->type;
  g->rhs_type = rhs->type;
  g->result_type = out->type;
  g->batch = g->m = g->n = g->k = 1;
  /* f32 may go through tf32 only where the module says so; _x3 asks for
   * near-f32 accuracy, which the f32 GEMM gives. */
  g->allow_tf32 = algorithm == DOT_ALG_TF32_TF32_F32;
  for (int i = 0; i < p->batch_count; i++) {
    g->batch *= out->dims[p->out_batch[i]];
    gemm_index_add(&g->lhs_batch, lhs, p->lhs_batch[i]);
    gemm_index_add(&g->rhs_batch, rhs, p->rhs_batch[i]);
    gemm_index_add(&g->out_batch, out, p->out_batch[i]);
  }
  for (int i = 0; i < p->m_count; i++) {
    g->m *= lhs->dims[p->lhs_m[i]];
    gemm_index_add(&g->lhs_m, lhs, p->lhs_m[i]);
    gemm_index_add(&g->out_m, out, p->out_m[i]);
  }
  for (int i = 0; i < p->n_count; i++) {
    g->n *= rhs->dims[p->rhs_n[i]];
    gemm_index_add(&g->rhs_n, rhs, p->rhs_n[i]);
    gemm_index_add(&g->out_n, out, p->out_n[i]);
  }
  for (int i = 0; i < p->k_count; i++) {
    g->k *= lhs->dims[p->lhs_k[i]];
    gemm_index_add(&g->lhs_k, lhs, p->lhs_k[i]);
    gemm_index_add(&g->rhs_k, rhs, p->rhs_k[i]);
  }
  return NULL;
}

/* The plan of a product; NULL, or what does not fit. */
static const char *plan_of(const Instruction *dot, DotPlan *p) {
  return dot_plan_make(attrs_dot(&dot->attrs), &dot->operands[0]->shape, &dot->operands[1]->shape, p);
}

/* A scale of scaled-dot, as the GEMM index groups of its operand: each
 * dim of x (view v) maps to the scale's dim in blocks (view s). */
static const char *scale_gemm(const DotPlan *p, const View *l, const View *ls, const View *r, const View *rs,
                              PtxGemm *g) {
  if (ls->rank != l->rank || rs->rank != r->rank) return "a scaled-dot whose scales do not tile their operands";
  int64_t lblock[AXLE_MAX_RANK], rblock[AXLE_MAX_RANK];
  for (int d = 0; d < l->rank; d++) {
    if (ls->dims[d] <= 0 || l->dims[d] % ls->dims[d]) return "a scaled-dot whose scales do not tile their operands";
    lblock[d] = l->dims[d] / ls->dims[d];
  }
  for (int d = 0; d < r->rank; d++) {
    if (rs->dims[d] <= 0 || r->dims[d] % rs->dims[d]) return "a scaled-dot whose scales do not tile their operands";
    rblock[d] = r->dims[d] / rs->dims[d];
  }
#define SCALE_ADD(group, x, s, block, d) ptx_gemm_dims_add_blocked(group, (x)->dims[d], (s)->strides[d], (block)[d])
  for (int i = 0; i < p->batch_count; i++) {
    SCALE_ADD(&g->lhs_scale_batch, l, ls, lblock, p->lhs_batch[i]);
    SCALE_ADD(&g->rhs_scale_batch, r, rs, rblock, p->rhs_batch[i]);
  }
  for (int i = 0; i < p->m_count; i++) SCALE_ADD(&g->lhs_scale_m, l, ls, lblock, p->lhs_m[i]);
  for (int i = 0; i < p->n_count; i++) SCALE_ADD(&g->rhs_scale_n, r, rs, rblock, p->rhs_n[i]);
  for (int i = 0; i < p->k_count; i++) {
    SCALE_ADD(&g->lhs_scale_k, l, ls, lblock, p->lhs_k[i]);
    SCALE_ADD(&g->rhs_scale_k, r, rs, rblock, p->rhs_k[i]);
  }
#undef SCALE_ADD
  g->scaled = true;
  g->lhs_scale_type = ls->type;
  g->rhs_scale_type = rs->type;
  return NULL;
}

/* An operand of gemm.wgmma as the TMA reads it: the binding itself when
 * it lies as a [batch][rows][k] array with 16-byte aligned rows, else a
 * packed copy in scratch (a pack kernel launched first); and its tensor
 * map. Returns the binding the GEMM reads, -1 on a refusal. */
static int tma_operand(GpuCompile *c, const Instruction *inst, const PtxGemm *g, bool lhs, int binding,
                       GpuTensorMapShape *map) {
  const PtxGemmDims *batch = lhs ? &g->lhs_batch : &g->rhs_batch, *rows = lhs ? &g->lhs_m : &g->rhs_n,
                    *k = lhs ? &g->lhs_k : &g->rhs_k;
  int64_t row_count = lhs ? g->m : g->n, pitch, batch_stride;
  if (!ptx_gemm_wgmma_operand_direct(batch, rows, k, &pitch, &batch_stride)) {
    PtxGemmPack p = {.type = g->lhs_type, .batches = g->batch, .rows = row_count, .k = g->k,
                     .pitch = (g->k + 7) / 8 * 8, .batch_dims = *batch, .row_dims = *rows, .k_dims = *k};
    char entry[160];
    gpu_entry_name(c, inst, lhs ? "pack_lhs" : "pack_rhs", entry, sizeof entry);
    PtxGemmShape shape;
    ptx_gemm_pack_emit(c->ptx, entry, &p, &shape);
    int buffers[2] = {binding, gpu_reserve_temp(c, p.batches * p.rows * p.pitch * 2)};
    unsigned grid = (unsigned)(shape.blocks < (1 << 30) ? shape.blocks : (1 << 30));
    if (!gpu_add_launch(c, inst, entry, grid, (unsigned)shape.block_threads, buffers, 2, NULL, 0)) return -1;
    binding = buffers[1], pitch = p.pitch, batch_stride = p.rows * p.pitch;
  }
  if (batch_stride == 0) batch_stride = pitch * row_count;
  *map = (GpuTensorMapShape){
      .data_type = g->lhs_type == TYPE_F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
      .rank = 3, .swizzle = CU_TENSOR_MAP_SWIZZLE_128B,
      .dims = {(unsigned long long)g->k, (unsigned long long)row_count, (unsigned long long)g->batch},
      .strides = {(unsigned long long)pitch * 2, (unsigned long long)batch_stride * 2},
      .box = {PTX_GEMM_WGMMA_BOX_K, PTX_GEMM_WGMMA_BOX_ROWS, 1}};
  return binding;
}

/* g's kernel (gemm.wgmma, or the path ptx_gemm_emit chooses) written into
 * c->ptx as `entry` (160 bytes), and the grid that covers its tiles. */
static bool gemm_kernel(GpuCompile *c, const Instruction *inst, const PtxGemm *g, bool wgmma, char *entry,
                        PtxGemmShape *shape, unsigned *grid) {
  gpu_entry_name(c, inst, "gemm", entry, 160);
  Status st = {0};
  bool ok = wgmma ? ptx_gemm_wgmma_emit(c->ptx, g, entry, shape, &st) : ptx_gemm_emit(c->ptx, g, entry, shape, &st);
  if (!ok) return gpu_refuse(c, inst, st.message);
  *grid = (unsigned)(shape->blocks < (1 << 30) ? shape->blocks : (1 << 30));
  return true;
}

/* gemm.wgmma over bindings lhs, rhs, out: the TMA's tensor maps are
 * encoded at each launch, over whatever addresses the run gives. */
static bool launch_gemm_wgmma(GpuCompile *c, const Instruction *inst, const PtxGemm *g, const int *bindings) {
  GpuTensorMapShape maps[2];
  int buffers[3] = {tma_operand(c, inst, g, true, bindings[0], &maps[0]),
                    tma_operand(c, inst, g, false, bindings[1], &maps[1]), bindings[2]};
  char entry[160];
  PtxGemmShape shape;
  unsigned grid;
  if (buffers[0] < 0 || buffers[1] < 0 || !gemm_kernel(c, inst, g, true, entry, &shape, &grid)) return false;
  GpuLaunch *l = gpu_add_launch(c, inst, entry, grid, (unsigned)shape.block_threads, buffers, 3, NULL, 0);
  if (!l) return false;
  l->shared_bytes = shape.shared_bytes;
  l->tensor_map_count = 2;
  for (int i = 0; i < 2; i++) l->tensor_maps[i] = (GpuLaunchTensorMap){i, maps[i]};
  return true;
}

/* Whether g takes gemm.wgmma: on sm_90a, with a driver that encodes
 * tensor maps, something to read (a tensor map has no empty dims), and
 * no --gpu_no_wgmma (which keeps mma.sync, to compare or to work around). */
static bool takes_wgmma(const GpuCompile *c, const PtxGemm *g) {
  return ptx_gemm_wgmma_fits(c->ptx, g) && (c->no_device || gpu_has_tensor_maps(&c->p->gpu)) && g->k > 0 &&
         !c->no_wgmma;
}

/* g's kernel, launched over bindings[0..3) (lhs, rhs, out; then the two
 * scales of a scaled GEMM; or sizes for a ragged GEMM, launched once per
 * group: G + 1 launches for ROWS, whose last writes the rows past every
 * group, G for SUMS). */
static bool launch_gemm(GpuCompile *c, const Instruction *inst, const PtxGemm *g, const int *bindings) {
  if (g->batch * g->m * g->n == 0) return true;  /* nothing to write */
  if (takes_wgmma(c, g)) return launch_gemm_wgmma(c, inst, g, bindings);
  char entry[160];
  PtxGemmShape shape;
  unsigned grid;
  if (!gemm_kernel(c, inst, g, false, entry, &shape, &grid)) return false;
  if (g->ragged.kind == PTX_GEMM_PLAIN)
    return gpu_add_launch(c, inst, entry, grid, (unsigned)shape.block_threads, bindings, g->scaled ? 5 : 3, NULL,
                          0) != NULL;
  int64_t launches = g->ragged.groups + (g->ragged.kind == PTX_GEMM_RAGGED_ROWS);
  for (int64_t group = 0; group < launches; group++)
    if (!gpu_add_launch(c, inst, entry, grid, (unsigned)shape.block_threads, bindings, 4, &group, 1)) return false;
  return true;
}

static bool packed(const Shape *s) { return s->element_size_bits != 0; }

/* The GEMM of dot over operands and result in the layouts given; NULL,
 * or why the GPU has none (gpu_dot_refusal asks, before any code is made;
 * the compile functions then make the same GEMM). */
static const char *gemm_of(const Instruction *dot, const Shape *lhs_layout, const Shape *rhs_layout,
                           const Shape *out_layout, PtxGemm *g) {
  if (dot->opcode != OP_DOT) return "a scaled-dot (no GPU kernel yet)";
  if (packed(lhs_layout) || packed(rhs_layout) || packed(out_layout)) return "a dot in a packed layout (E(n))";
  View l = view_of(lhs_layout), r = view_of(rhs_layout), o = view_of(out_layout);
  DotPlan p;
  const char *why = plan_of(dot, &p);
  return why ? why : dot_gemm(&p, attrs_dot(&dot->attrs)->algorithm, &l, &r, &o, g);
}

/* The GEMM kernel of dot and its launch over bindings lhs, rhs, out. */
static bool add_gemm(GpuCompile *c, const Instruction *inst, const Instruction *dot, const Shape *lhs_layout,
                     const Shape *rhs_layout, const Shape *out_layout, int lhs, int rhs, int out) {
  PtxGemm g;
  gemm_of(dot, lhs_layout, rhs_layout, out_layout, &g);  /* gpu_dot_refusal found one */
  int bindings[3] = {lhs, rhs, out};
  return launch_gemm(c, inst, &g, bindings);
}

/* Where the kernel finds group_sizes' entries (ptx_gemm.h): the ragged
 * index runs over lhs's dims index_dims[0..n) (the free dims for ROWS, the
 * contracting dims for SUMS), index_dims[which] the ragged one. A sizes
 * array [batch..., prefix..., G] (ragged_dot_sizes_prefix) has a row per
 * batch index and per index over the dims before the ragged one; [G] one
 * row for all. Any layout: each dim is read through its stride. */
static const char *ragged_sizes(const Shape *lhs, const DotPlan *p, const Shape *sizes, const int64_t *index_dims,
                                int n, int which, PtxGemmRagged *r) {
  if (sizes->type != TYPE_S32 && sizes->type != TYPE_S64) return "a ragged-dot whose group sizes are not s32 or s64";
  if (packed(sizes)) return "a ragged-dot whose group sizes are in a packed layout (E(n))";
  View s = view_of(sizes);
  int nb = p->batch_count;
  bool per_row = sizes->rank > 1;
  for (int i = 0; per_row && i < nb; i++) ptx_gemm_dims_add(&r->sizes_batch, s.dims[i], s.strides[i]);
  for (int i = 0; i < n; i++) {
    int64_t extent = lhs->dims[index_dims[i]];
    bool prefix = per_row && i < which;
    ptx_gemm_dims_add(&r->sizes_prefix, extent, prefix ? s.strides[nb + i] : 0);
    ptx_gemm_dims_add(&r->coordinate, extent, i == which);
    if (prefix && extent != 1) r->sizes_per_index = true;
  }
  r->sizes_group_stride = s.strides[sizes->rank - 1];
  r->sizes_type = sizes->type;
  return NULL;
}

/* ragged-dot in its three modes (eval_dot_variants.c): a ragged batch dim
 * is a plain dot; a ragged free dim (rhs_group_dims) takes each row's
 * group of rhs; a ragged contracting dim gives one partial sum per group.
 * The plan leaves rhs's group dim out of every group and starts the
 * result's groups after the group dim of a ragged contracting dim. */
static const char *ragged_gemm_of(const Instruction *inst, PtxGemm *g) {
  const DotDims *dd = attrs_dot(&inst->attrs);
  const Shape *ls = &inst->operands[0]->shape, *rs = &inst->operands[1]->shape, *sizes = &inst->operands[2]->shape;
  if (packed(ls) || packed(rs) || packed(&inst->shape)) return "a dot in a packed layout (E(n))";
  if (dd->lhs_ragged.count != 1) return "a ragged-dot without one ragged dim";
  View l = view_of(ls), r = view_of(rs), o = view_of(&inst->shape);
  DotPlan p;
  const char *why = plan_of(inst, &p);
  if (why) return why;
  PtxGemmRagged mode = {.kind = PTX_GEMM_PLAIN};
  if (p.ragged == DOT_RAGGED_ROWS)
    mode = (PtxGemmRagged){.kind = PTX_GEMM_RAGGED_ROWS, .groups = rs->dims[p.rhs_group_dim],
                           .rhs_group_stride = r.strides[p.rhs_group_dim]};
  else if (p.ragged == DOT_RAGGED_SUMS)
    mode = (PtxGemmRagged){.kind = PTX_GEMM_RAGGED_SUMS, .groups = o.dims[0], .out_group_stride = o.strides[0]};
  why = dot_gemm(&p, dd->algorithm, &l, &r, &o, g);
  if (!why && p.ragged == DOT_RAGGED_ROWS) why = ragged_sizes(ls, &p, sizes, p.lhs_m, p.m_count, p.ragged_index, &mode);
  if (!why && p.ragged == DOT_RAGGED_SUMS) why = ragged_sizes(ls, &p, sizes, p.lhs_k, p.k_count, p.ragged_index, &mode);
  g->ragged = mode;
  return why;
}

static bool compile_ragged_dot(GpuCompile *c, const Instruction *inst) {
  int bindings[4] = {gpu_binding_of(c, inst->operands[0], 0), gpu_binding_of(c, inst->operands[1], 0),
                     gpu_binding_of(c, inst, 0), gpu_binding_of(c, inst->operands[2], 0)};
  PtxGemm g;
  ragged_gemm_of(inst, &g);  /* gpu_dot_refusal found one */
  return launch_gemm(c, inst, &g, bindings);
}

/* scaled-dot(lhs, rhs, lhs_scale, rhs_scale): the GEMM multiplies each
 * operand element by its scale as it loads it. */
static const char *scaled_gemm_of(const Instruction *inst, PtxGemm *g) {
  for (int i = 0; i < 4; i++)
    if (packed(&inst->operands[i]->shape)) return "a dot in a packed layout (E(n))";
  if (packed(&inst->shape)) return "a dot in a packed layout (E(n))";
  View l = view_of(&inst->operands[0]->shape), r = view_of(&inst->operands[1]->shape), o = view_of(&inst->shape);
  View ls = view_of(&inst->operands[2]->shape), rs = view_of(&inst->operands[3]->shape);
  DotPlan p;
  const char *why = plan_of(inst, &p);
  if (!why) why = dot_gemm(&p, attrs_dot(&inst->attrs)->algorithm, &l, &r, &o, g);
  if (!why) why = scale_gemm(&p, &l, &ls, &r, &rs, g);
  return why;
}

static bool compile_scaled_dot(GpuCompile *c, const Instruction *inst) {
  PtxGemm g;
  scaled_gemm_of(inst, &g);  /* gpu_dot_refusal found one */
  int bindings[5] = {gpu_binding_of(c, inst->operands[0], 0), gpu_binding_of(c, inst->operands[1], 0),
                     gpu_binding_of(c, inst, 0), gpu_binding_of(c, inst->operands[2], 0),
                     gpu_binding_of(c, inst->operands[3], 0)};
  return launch_gemm(c, inst, &g, bindings);
}

bool gpu_compile_dot(GpuCompile *c, const Instruction *inst) {
  if (inst->opcode == OP_RAGGED_DOT) return compile_ragged_dot(c, inst);
  if (inst->opcode == OP_SCALED_DOT) return compile_scaled_dot(c, inst);
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

/* The epilogue kernel of fusion's step, reading the product from binding
 * `product`: its other inputs are the fusion's operands (or constants). */
static bool add_epilogue(GpuCompile *c, const Instruction *fusion, const ProgramStep *step, int product) {
  const Kernel *k = step->kernel;
  char base[128], entry[160];
  ptx_entry_name(k->name, base, sizeof base);
  snprintf(entry, sizeof entry, "k%d_%s_epilogue", c->p->launch_count, base);
  PtxKernelShape shape;
  Status why = {0};
  if (!ptx_kernel_emit(c->ptx, k, entry, &shape, &why)) return gpu_refuse(c, fusion, why.message);
  int n = step->buffer_count;
  int *buffers = mem_calloc((size_t)n + 1, sizeof *buffers);
  bool ok = gpu_step_buffers(c, step, product, buffers);
  unsigned grid = (unsigned)(shape.blocks < (1 << 30) ? shape.blocks : (1 << 30));
  ok = ok && gpu_add_launch(c, fusion, entry, grid, (unsigned)shape.block_threads, buffers, n, NULL, 0);
  mem_free(buffers);
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

/* A fusion around one dot whose operands are the fusion's, its epilogue
 * (when the dot is not the root) reading the product as the GEMM writes
 * it. An epilogue the program stage did not lower is refused with the
 * stage's reason (backend_compile.c). */
static const char *dot_fusion_refusal(const ProgramStep *step) {
  const Instruction *inst = step->inst;
  const Computation *f = inst->called_count ? inst->called[0] : NULL;
  const char *why = "a fusion without a computation";
  const Instruction *dot = f ? fused_product(f, &why) : NULL;
  if (!dot) return why;
  if (dot->opcode != OP_DOT) return "a scaled-dot or ragged-dot inside a fusion";
  const Shape *ls, *rs;
  if (!program_fused_operand(inst, dot->operands[0], &ls) || !program_fused_operand(inst, dot->operands[1], &rs))
    return "a fused dot whose operand the fusion computes itself";
  PtxGemm g;
  if (dot == f->root) return gemm_of(dot, ls, rs, &inst->shape, &g);
  if (!step->kernel) return NULL;
  if (!epilogue_reads_layout(step->kernel, dot, &dot->shape))
    return "an epilogue that reads the product in another layout";
  return gemm_of(dot, ls, rs, &dot->shape, &g);
}

const char *gpu_dot_refusal(const ProgramStep *step) {
  const Instruction *inst = step->inst;
  PtxGemm g;
  switch (inst->opcode) {
  case OP_FUSION: return dot_fusion_refusal(step);
  case OP_RAGGED_DOT: return ragged_gemm_of(inst, &g);
  case OP_SCALED_DOT: return scaled_gemm_of(inst, &g);
  default: return gemm_of(inst, &inst->operands[0]->shape, &inst->operands[1]->shape, &inst->shape, &g);
  }
}

bool gpu_compile_dot_fusion(GpuCompile *c, const Instruction *inst) {
  /* one dot, reading the fusion's operands: gpu_dot_refusal */
  const Computation *f = inst->called[0];
  const char *why;
  const Instruction *dot = fused_product(f, &why);
  const Shape *ls, *rs;
  const Instruction *lhs = program_fused_operand(inst, dot->operands[0], &ls);
  const Instruction *rhs = program_fused_operand(inst, dot->operands[1], &rs);
  int lhs_binding = gpu_binding_of(c, lhs, 0), rhs_binding = gpu_binding_of(c, rhs, 0);
  if (dot == f->root)
    return add_gemm(c, inst, dot, ls, rs, &inst->shape, lhs_binding, rhs_binding, gpu_binding_of(c, inst, 0));
  const ProgramStep *step = gpu_step_of(c, inst);
  const Kernel *k = step ? step->kernel : NULL;
  if (!k) return gpu_refuse(c, inst, step && step->unsupported ? step->unsupported : "a fused dot without its epilogue");
  int scratch = gpu_reserve_temp(c, shape_byte_size(&dot->shape));
  bool ok = add_gemm(c, inst, dot, ls, rs, &dot->shape, lhs_binding, rhs_binding, scratch);
  return ok && add_epilogue(c, inst, step, scratch);
}
