/* The CPU backend's convolutions, as GEMMs over input patches (im2col).
 *
 * A convolution is a batch of matrix products, one per group:
 *
 *   C[g][row][o] = sum over col of A[g][row][col] * B[g][col][o]
 *   row = (output batch n, output position p_0..p_{S-1})   M = N/bgc * prod P
 *   col = (kernel tap t_0..t_{S-1}, input feature c)        K = prod T * C/fgc
 *   o   = output feature within the group                   N = O / groups
 *
 * where A is the input patch under the window at each output position (a
 * tap that falls in padding or in a hole of the input dilation reads 0), B
 * is the kernel, and the groups are feature groups (group g reads input
 * features g*C/fgc.. and writes output features g*O/fgc..) or batch groups
 * (group g reads input batch entries g*N/bgc.. and writes output features
 * g*O/bgc..). Window reversal reads kernel tap size-1-t for window tap t.
 * Any dim_labels are just strides in the offset tables. B and C are
 * gathered and scattered through per-axis offset tables like a dot's
 * (cpu_product.c). A is never stored whole in f32: the GEMM's packing asks
 * for one MR-row panel at a time and patch_pack reads it straight from the
 * input (the implicit GEMM). In other arithmetic (f64, integers, complex)
 * patch_gather writes A out, patch by patch, for the plain product loop.
 * The meaning of each term is the evaluator's (eval_linalg.c,
 * conv_output_element). */
#include <stdlib.h>

#include "emit_x86/cpu_compile.h"

/* What the patch gather needs: sizes, the window and the input's strides. */
typedef struct ConvGather {
  int spatial_count;
  int64_t groups, feature_groups, batch_groups;
  int64_t batch_per_group, features_per_group, taps;
  int64_t in_size[AXLE_MAX_RANK], out_size[AXLE_MAX_RANK], kernel_size[AXLE_MAX_RANK];
  WindowDim window[AXLE_MAX_RANK];
  int64_t batch_stride, feature_stride, spatial_stride[AXLE_MAX_RANK];
} ConvGather;

typedef struct ConvGatherRun {
  const ProductPlan *plan;
  const ConvGather *g;
  const void *lhs;
  void *a;
} ConvGatherRun;

/* The input position window tap `tap` of output position `out` reads in
 * one spatial dimension, or -1 in padding or a hole of the input dilation:
 * in the dilated input element i sits at i * lhs_dilate; the window of
 * output o starts at o * stride - pad_lo (negative padding starts it inside
 * the input) and its tap t is t * rhs_dilate further on. */
static int64_t input_position(const WindowDim *w, int64_t out, int64_t tap, int64_t in) {
  int64_t at = out * w->stride - w->pad_lo + tap * w->rhs_dilate;
  if (at < 0 || at % w->lhs_dilate != 0) return -1;
  at /= w->lhs_dilate;
  return at < in ? at : -1;
}

/* Where row `row` of group `group` reads: its output position (out) and
 * the input offset of its batch entry and the group's first feature. */
static int64_t patch_row_locate(const ConvGather *g, int64_t group, int64_t row, int64_t out[AXLE_MAX_RANK]) {
  for (int s = g->spatial_count - 1; s >= 0; s--) {
    out[s] = row % g->out_size[s];
    row /= g->out_size[s];
  }
  int64_t batch = (g->batch_groups > 1 ? group : 0) * g->batch_per_group + row;
  int64_t feature = (g->feature_groups > 1 ? group : 0) * g->features_per_group;
  return batch * g->batch_stride + feature * g->feature_stride;
}

/* The input offset window tap t (linear over the kernel's spatial dims)
 * reads for output position out, from the row's base; false when the tap
 * falls outside the input. */
static bool patch_tap_locate(const ConvGather *g, const int64_t *out, int64_t t, int64_t base, int64_t *at) {
  *at = base;
  for (int s = g->spatial_count - 1; s >= 0; s--) {
    int64_t pos = input_position(&g->window[s], out[s], t % g->kernel_size[s], g->in_size[s]);
    if (pos < 0) return false;
    *at += pos * g->spatial_stride[s];
    t /= g->kernel_size[s];
  }
  return true;
}

/* Task (group, row): the row's patch, every tap and feature, into A. The
 * batch was zeroed, so taps outside the input are left alone. */
static void patch_gather_task(void *context, int64_t index) {
  const ConvGatherRun *r = context;
  const ConvGather *g = r->g;
  const ProductPlan *p = r->plan;
  int64_t out[AXLE_MAX_RANK], at;
  int64_t base = patch_row_locate(g, index / p->m, index % p->m, out);
  for (int64_t t = 0; t < g->taps; t++) {
    if (!patch_tap_locate(g, out, t, base, &at)) continue;
    for (int64_t c = 0; c < g->features_per_group; c++)
      product_element_load(p, p->lhs_type, r->lhs, at + c * g->feature_stride, r->a,
                           index * p->k + t * g->features_per_group + c);
  }
}

static void patch_gather(const ProductPlan *plan, const void *lhs, void *a, ThreadPool *pool) {
  ConvGatherRun r = {.plan = plan, .g = plan->gather_context, .lhs = lhs, .a = a};
  thread_pool_run(pool, plan->batch * plan->m, patch_gather_task, &r);
}

/* The implicit GEMM: one GEMM panel of A, rows row0.. and columns k0..,
 * read straight from the input (ProductPackFn). Columns run over a tap's
 * features in turn, so each tap is located once per run of features. */
static void patch_pack(const ProductPlan *p, const void *lhs, int64_t group, int64_t row0, int rows, int width,
                       int64_t k0, int64_t depth, float *dst) {
  const ConvGather *g = p->gather_context;
  int64_t cg = g->features_per_group, out[AXLE_MAX_RANK], at;
  for (int l = 0; l < width; l++) {
    if (l >= rows) {
      for (int64_t k = 0; k < depth; k++) dst[k * width + l] = 0.0f;
      continue;
    }
    int64_t base = patch_row_locate(g, group, row0 + l, out);
    for (int64_t k = 0; k < depth;) {
      int64_t c = (k0 + k) % cg, run = cg - c < depth - k ? cg - c : depth - k, fs = g->feature_stride;
      float *to = dst + k * width + l;
      if (!patch_tap_locate(g, out, (k0 + k) / cg, base, &at)) {
        for (int64_t j = 0; j < run; j++) to[j * width] = 0.0f;
      } else if (p->lhs_type == TYPE_F32) {
        const float *from = (const float *)lhs + at + c * fs;
        for (int64_t j = 0; j < run; j++) to[j * width] = from[j * fs];
      } else {
        for (int64_t j = 0; j < run; j++) product_element_load(p, p->lhs_type, lhs, at + (c + j) * fs, to, j * width);
      }
      k += run;
    }
  }
}

/* The window of spatial dimension s; without window={...} the kernel is
 * the window, with stride 1, no padding and no dilation. */
static WindowDim conv_window(const Instruction *conv, int s, int64_t kernel_size) {
  if (!conv->attrs.window) return (WindowDim){.size = kernel_size, .stride = 1, .lhs_dilate = 1, .rhs_dilate = 1};
  return conv->attrs.window->dims[s];
}

/* Kernel offsets per column (tap, input feature), window reversal applied. */
static int64_t *kernel_column_table(const Shape *kernel, const ConvDims *cd, const ConvGather *g) {
  int64_t strides[AXLE_MAX_RANK], tap[AXLE_MAX_RANK] = {0};
  layout_strides(kernel, strides);
  int64_t *table = mem_calloc((size_t)(g->taps * g->features_per_group) + 1, sizeof *table);
  for (int64_t t = 0; t < g->taps; t++) {
    int64_t at = 0;
    for (int s = 0; s < g->spatial_count; s++) {
      int64_t k = g->window[s].reversal ? g->kernel_size[s] - 1 - tap[s] : tap[s];
      at += k * strides[cd->kernel_spatial[s]];
    }
    for (int64_t c = 0; c < g->features_per_group; c++)
      table[t * g->features_per_group + c] = at + c * strides[cd->kernel_input_feature];
    for (int s = g->spatial_count - 1; s >= 0 && ++tap[s] == g->kernel_size[s]; s--) tap[s] = 0;
  }
  return table;
}

/* A table of count offsets i * stride. */
static int64_t *stride_table(int64_t count, int64_t stride) {
  int64_t *table = mem_calloc((size_t)count + 1, sizeof *table);
  for (int64_t i = 0; i < count; i++) table[i] = i * stride;
  return table;
}

static ConvGather *conv_gather_create(const Instruction *conv) {
  const ConvDims *cd = attrs_conv(&conv->attrs);
  const Shape *in = &conv->operands[0]->shape, *kernel = &conv->operands[1]->shape;
  ConvGather *g = mem_calloc(1, sizeof *g);
  g->spatial_count = cd->spatial_count;
  g->feature_groups = conv->attrs.feature_group_count > 1 ? conv->attrs.feature_group_count : 1;
  g->batch_groups = conv->attrs.batch_group_count > 1 ? conv->attrs.batch_group_count : 1;
  g->groups = g->feature_groups * g->batch_groups;
  g->batch_per_group = in->dims[cd->input_batch] / g->batch_groups;
  g->features_per_group = kernel->dims[cd->kernel_input_feature];
  int64_t strides[AXLE_MAX_RANK];
  layout_strides(in, strides);
  g->batch_stride = strides[cd->input_batch];
  g->feature_stride = strides[cd->input_feature];
  g->taps = 1;
  for (int s = 0; s < g->spatial_count; s++) {
    g->in_size[s] = in->dims[cd->input_spatial[s]];
    g->out_size[s] = conv->shape.dims[cd->output_spatial[s]];
    g->kernel_size[s] = kernel->dims[cd->kernel_spatial[s]];
    g->window[s] = conv_window(conv, s, g->kernel_size[s]);
    g->spatial_stride[s] = strides[cd->input_spatial[s]];
    g->taps *= g->kernel_size[s];
  }
  return g;
}

/* The gathered product of conv: its groups as the batch. */
static ProductPlan *conv_product_plan(const Instruction *conv) {
  const ConvDims *cd = attrs_conv(&conv->attrs);
  const Shape *kernel = &conv->operands[1]->shape, *out = &conv->shape;
  ConvGather *g = conv_gather_create(conv);
  ProductPlan *p = mem_calloc(1, sizeof *p);
  p->lhs_type = conv->operands[0]->shape.type;
  p->rhs_type = kernel->type;
  p->result_type = out->type;
  p->arithmetic = product_arithmetic_of(out->type);
  p->gather_a = patch_gather;
  p->pack_a = patch_pack;
  p->gather_context = g;
  p->gather_free = mem_free;
  int64_t kernel_strides[AXLE_MAX_RANK], out_strides[AXLE_MAX_RANK];
  layout_strides(kernel, kernel_strides);
  layout_strides(out, out_strides);
  p->batch = g->groups;
  p->n = kernel->dims[cd->kernel_output_feature] / g->groups;
  p->k = g->taps * g->features_per_group;
  p->b[0] = stride_table(p->batch, p->n * kernel_strides[cd->kernel_output_feature]);
  p->b[1] = kernel_column_table(kernel, cd, g);
  p->b[2] = stride_table(p->n, kernel_strides[cd->kernel_output_feature]);
  /* Rows: the output batch, then its spatial positions, outermost first. */
  int64_t row_dims[AXLE_MAX_RANK];
  row_dims[0] = cd->output_batch;
  for (int s = 0; s < g->spatial_count; s++) row_dims[1 + s] = cd->output_spatial[s];
  p->c[0] = stride_table(p->batch, p->n * out_strides[cd->output_feature]);
  p->c[1] = product_offset_table_create(out, row_dims, 1 + g->spatial_count, &p->m);
  p->c[2] = stride_table(p->n, out_strides[cd->output_feature]);
  return p;
}

bool cpu_conv_step_add(CpuCompile *c, const Instruction *inst, const Instruction *conv, int lhs, int rhs, int out) {
  if (shape_element_count(&conv->shape) == 0) return true;  /* nothing to write */
  const Shape *in = &conv->operands[0]->shape, *kernel = &conv->operands[1]->shape;
  if (in->rank != conv->shape.rank || kernel->rank != in->rank || attrs_conv(&conv->attrs)->spatial_count != in->rank - 2)
    return cpu_refuse(c, inst, "a convolution whose operands disagree in rank");
  return product_step_add(c, inst, conv_product_plan(conv), lhs, rhs, out);
}

bool cpu_compile_convolution(CpuCompile *c, const Instruction *inst) {
  return cpu_conv_step_add(c, inst, inst, cpu_binding_of(c, inst->operands[0], 0),
                           cpu_binding_of(c, inst->operands[1], 0), cpu_binding_of(c, inst, 0));
}
