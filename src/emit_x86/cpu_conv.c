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
 * Its dim_labels are always b01f_01io->b01f (canonicalize-convolutions,
 * conv_plan.h), so which dim is which is fixed; the layouts are just
 * strides (ConvGather's) in the offset tables. B and C are
 * gathered and scattered through per-axis offset tables like a dot's
 * (cpu_product.c). A is never stored whole in f32: the GEMM's packing asks
 * for one MR-row panel at a time and patch_pack reads it straight from the
 * input (the implicit GEMM). In other arithmetic (f64, integers, complex)
 * patch_gather writes A out, patch by patch, for the plain product loop.
 * The meaning of each term is the evaluator's (eval_linalg.c,
 * conv_output_element).
 *
 * An f32 convolution of one group whose result holds each output feature's
 * positions together, in order (an NCHW result, relabelled to b01f over
 * the same bytes, and the like), is turned around:
 *
 *   C[n][o][pos] = sum over col of W[o][col] * P[n][col][pos]
 *   col = (input feature c, kernel tap t)                   K = C * prod T
 *
 * so that C is the result itself, written in place by the GEMM (the other
 * way round, a scatter into that layout and the strided reads of a patch
 * row cost more than the multiply). A is the kernel, read in place when
 * its (feature, tap) columns are evenly spaced; B, the patches, is packed
 * panel by panel from the input by positions_patch_pack: along the
 * innermost spatial dimension a panel row is a run of consecutive input
 * elements (stride 1) cut only by padding and the end of a row of
 * positions. */
#include <assert.h>
#include <stdlib.h>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "emit_x86/cpu_compile.h"
#include "ir/conv_plan.h"

typedef struct ConvGatherRun {
  const ProductPlan *plan;
  const ConvGather *g;
  const void *lhs;
  void *a;
} ConvGatherRun;

/* Task (group, row): the row's patch, every tap and feature, into A. The
 * batch was zeroed, so taps outside the input are left alone. */
static void patch_gather_task(void *context, int64_t index) {
  const ConvGatherRun *r = context;
  const ConvGather *g = r->g;
  const ProductPlan *p = r->plan;
  int64_t out[AXLE_MAX_RANK], at;
  int64_t base = conv_gather_row_locate(g, index / p->m, index % p->m, out);
  for (int64_t t = 0; t < g->taps; t++) {
    if (!conv_gather_tap_locate(g, out, t, base, &at)) continue;
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
    int64_t base = conv_gather_row_locate(g, group, row0 + l, out);
    for (int64_t k = 0; k < depth;) {
      int64_t c = (k0 + k) % cg, run = cg - c < depth - k ? cg - c : depth - k, fs = g->feature_stride;
      float *to = dst + k * width + l;
      if (!conv_gather_tap_locate(g, out, (k0 + k) / cg, base, &at)) {
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

/* dst[0..n) = src[0..n), four floats at a time where SSE2 allows (the
 * compiler left this loop scalar, and it was half of the packing time). */
static void floats_copy(float *restrict dst, const float *restrict src, int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(dst + i, _mm_loadu_ps(src + i));
#endif
  for (; i < n; i++) dst[i] = src[i];
}

/* The implicit GEMM turned around: one GEMM panel of B, columns (output
 * positions of batch entry `batch`) col0.. and rows (feature, tap) k0..,
 * read straight from the input (ProductPackFn). The panel's columns are
 * cut into segments that share every spatial coordinate but the innermost
 * one; where that one has stride 1 and no input dilation, a segment of a
 * row of B is a run of consecutive input elements with zeros for the taps
 * in padding, copied as such; otherwise element by element. */
enum { POSITION_PANEL_MAX = 64 };
static void positions_patch_pack(const ProductPlan *p, const void *rhs, int64_t batch, int64_t col0, int cols,
                                 int width, int64_t k0, int64_t depth, float *dst) {
  const ConvGather *g = p->gather_context;
  const float *in = (const float *)rhs + batch * g->batch_stride;
  int inner = g->spatial_count - 1;
  const WindowDim *wi = &g->window[inner];
  bool runs = g->spatial_stride[inner] == 1 && wi->stride == 1 && wi->lhs_dilate == 1;
  assert(width <= POSITION_PANEL_MAX);  /* a panel is NR <= 32 columns wide */
  /* The segments: first column, length, output position. */
  int seg_first[POSITION_PANEL_MAX], seg_length[POSITION_PANEL_MAX], segments = 0;
  int64_t seg_out[POSITION_PANEL_MAX][AXLE_MAX_RANK];
  for (int l = 0; l < cols;) {
    int64_t pos = col0 + l, *out = seg_out[segments];
    for (int s = inner; s >= 0; s--) {
      out[s] = pos % g->out_size[s];
      pos /= g->out_size[s];
    }
    int64_t left = g->out_size[inner] - out[inner];
    seg_first[segments] = l;
    seg_length[segments] = !runs ? 1 : left < cols - l ? (int)left : cols - l;
    l += seg_length[segments++];
  }
  /* Row k is feature c, tap (tap[0], ...): counted up row by row, as an
   * odometer, rather than divided out (a division costs more than a copy
   * of a segment). */
  int64_t c = k0 / g->taps, t = k0 % g->taps, tap[AXLE_MAX_RANK];
  for (int s = inner; s >= 0; s--) {
    tap[s] = t % g->kernel_size[s];
    t /= g->kernel_size[s];
  }
  for (int64_t k = 0; k < depth; k++) {
    if (k > 0) {
      int s = inner;
      while (s >= 0 && ++tap[s] == g->kernel_size[s]) tap[s--] = 0;
      if (s < 0) c++;
    }
    const float *plane = in + c * g->feature_stride;
    float *to = dst + k * width;
    for (int e = 0; e < segments; e++) {
      const int64_t *out = seg_out[e];
      float *seg = to + seg_first[e];
      int64_t at = 0, length = seg_length[e];
      bool inside = true;
      for (int s = 0; s < inner && inside; s++) {
        int64_t i = conv_input_position(&g->window[s], out[s], tap[s], g->in_size[s]);
        inside = i >= 0;
        at += i * g->spatial_stride[s];
      }
      if (!runs) {
        int64_t i = inside ? conv_input_position(wi, out[inner], tap[inner], g->in_size[inner]) : -1;
        seg[0] = i < 0 ? 0.0f : plane[at + i * g->spatial_stride[inner]];
        continue;
      }
      /* Output x reads input x + shift; inside the input for x in [lo, hi). */
      int64_t shift = tap[inner] * wi->rhs_dilate - wi->pad_lo, x0 = out[inner];
      int64_t lo = x0 > -shift ? x0 : -shift, hi = g->in_size[inner] - shift;
      if (hi > x0 + length) hi = x0 + length;
      if (!inside || hi < lo) lo = hi = x0 + length;
      for (int64_t x = x0; x < lo; x++) seg[x - x0] = 0.0f;
      const float *from = plane + at + shift;
      floats_copy(seg + (lo - x0), from + lo, hi - lo);
      for (int64_t x = hi; x < x0 + length; x++) seg[x - x0] = 0.0f;
    }
    for (int l = cols; l < width; l++) to[l] = 0.0f;
  }
}

/* Kernel offsets per column (tap, input feature), window reversal applied. */
static int64_t *kernel_column_table(const ConvGather *g) {
  int64_t tap[AXLE_MAX_RANK] = {0};
  int64_t *table = mem_calloc((size_t)(g->taps * g->features_per_group) + 1, sizeof *table);
  for (int64_t t = 0; t < g->taps; t++) {
    int64_t at = 0;
    for (int s = 0; s < g->spatial_count; s++) {
      int64_t k = g->window[s].reversal ? g->kernel_size[s] - 1 - tap[s] : tap[s];
      at += k * g->kernel_spatial_stride[s];
    }
    for (int64_t c = 0; c < g->features_per_group; c++)
      table[t * g->features_per_group + c] = at + c * g->kernel_in_stride;
    for (int s = g->spatial_count - 1; s >= 0 && ++tap[s] == g->kernel_size[s]; s--) tap[s] = 0;
  }
  return table;
}

/* Kernel offsets per column (input feature, tap), window reversal applied:
 * the columns of the turned-around product. */
static int64_t *kernel_feature_major_table(const ConvGather *g) {
  int64_t *table = mem_calloc((size_t)(g->taps * g->features_per_group) + 1, sizeof *table);
  for (int64_t c = 0; c < g->features_per_group; c++)
    for (int64_t t = 0; t < g->taps; t++) {
      int64_t at = c * g->kernel_in_stride, rest = t;
      for (int s = g->spatial_count - 1; s >= 0; s--) {
        int64_t tap = rest % g->kernel_size[s];
        rest /= g->kernel_size[s];
        at += (g->window[s].reversal ? g->kernel_size[s] - 1 - tap : tap) * g->kernel_spatial_stride[s];
      }
      table[c * g->taps + t] = at;
    }
  return table;
}

/* A table of count offsets i * stride. */
static int64_t *stride_table(int64_t count, int64_t stride) {
  int64_t *table = mem_calloc((size_t)count + 1, sizeof *table);
  for (int64_t i = 0; i < count; i++) table[i] = i * stride;
  return table;
}

/* The product plan's fix hooks (ProductPlan.fix): the kernel is the lhs of
 * the turned-around product, the rhs of the other. */
static bool product_padding_fix_needed(const ProductPlan *p, const void *lhs, const void *rhs) {
  const ConvGather *g = p->gather_context;
  return conv_padding_fix_needed(g, g->kernel_first ? lhs : rhs);
}

static void product_padding_fix(const ProductPlan *p, const void *lhs, const void *rhs, void *out, ThreadPool *pool) {
  const ConvGather *g = p->gather_context;
  conv_padding_taps_fix(g, g->kernel_first ? rhs : lhs, g->kernel_first ? lhs : rhs, out, pool);
}

static void product_padding_fix_add(ProductPlan *p) {
  p->fix_needed = product_padding_fix_needed;
  p->fix = product_padding_fix;
}

/* The result's dims that make a product row: the batch, then the spatial
 * dims outermost first, [0, S] in the canonical order (conv_plan.h). */
static void row_dims_of(int spatial_count, int64_t *dims) {
  for (int d = 0; d <= spatial_count; d++) dims[d] = d;
}

/* The gathered product of conv: its groups as the batch. */
static ProductPlan *conv_product_plan(const Instruction *conv, const ConvPlan *plan) {
  const Shape *out = &conv->shape;
  ConvGather *g = conv_gather_create(conv, plan);
  ProductPlan *p = mem_calloc(1, sizeof *p);
  p->lhs_type = conv->operands[0]->shape.type;
  p->rhs_type = conv->operands[1]->shape.type;
  p->result_type = out->type;
  p->arithmetic = product_arithmetic_of(out->type);
  p->gather_a = patch_gather;
  p->pack_a = patch_pack;
  p->gather_context = g;
  p->gather_free = mem_free;
  p->batch = g->groups;
  p->n = plan->group_out_features;
  p->k = g->taps * g->features_per_group;
  p->b[0] = stride_table(p->batch, p->n * g->kernel_out_stride);
  p->b[1] = kernel_column_table(g);
  p->b[2] = stride_table(p->n, g->kernel_out_stride);
  int64_t row_dims[AXLE_MAX_RANK];
  row_dims_of(g->spatial_count, row_dims);
  p->c[0] = stride_table(p->batch, p->n * g->out_feature_stride);
  p->c[1] = product_offset_table_create(out, row_dims, 1 + g->spatial_count, &p->m);
  p->c[2] = stride_table(p->n, g->out_feature_stride);
  product_padding_fix_add(p);
  return p;
}

/* Whether conv's result holds each (batch, feature)'s output positions
 * together and in order, the innermost spatial dimension contiguous: then
 * the turned-around product writes it in place. */
static bool positions_are_minor(const Instruction *conv, int spatial_count) {
  const Shape *out = &conv->shape;
  int64_t strides[AXLE_MAX_RANK], extent = 1;
  shape_layout_strides(out, strides);
  for (int d = spatial_count; d >= 1; d--) {
    if (out->dims[d] > 1 && strides[d] != extent) return false;
    extent *= out->dims[d];
  }
  return true;
}

/* The turned-around product (see the top of the file), or NULL where it
 * does not apply: other types, groups, spatial dims apart in the result. */
static ProductPlan *conv_positions_plan(const Instruction *conv, const ConvPlan *plan) {
  const Shape *in = &conv->operands[0]->shape, *kernel = &conv->operands[1]->shape, *out = &conv->shape;
  if (in->type != TYPE_F32 || kernel->type != TYPE_F32 || out->type != TYPE_F32 || plan->spatial_count < 1 ||
      plan->groups > 1 || !positions_are_minor(conv, plan->spatial_count))
    return NULL;
  ConvGather *g = conv_gather_create(conv, plan);
  g->kernel_first = true;
  ProductPlan *p = mem_calloc(1, sizeof *p);
  p->lhs_type = kernel->type;   /* the plan's lhs is the kernel, its rhs the input */
  p->rhs_type = in->type;
  p->result_type = out->type;
  p->arithmetic = PRODUCT_F32;
  p->pack_b = positions_patch_pack;
  p->gather_context = g;
  p->gather_free = mem_free;
  p->batch = plan->batch;
  p->m = plan->out_features;
  p->k = g->taps * g->features_per_group;
  p->a[0] = stride_table(p->batch, 0);
  p->a[1] = stride_table(p->m, g->kernel_out_stride);
  p->a[2] = kernel_feature_major_table(g);
  p->c[0] = stride_table(p->batch, g->out_batch_stride);
  p->c[1] = stride_table(p->m, g->out_feature_stride);
  int64_t spatial_dims[AXLE_MAX_RANK];
  for (int s = 0; s < g->spatial_count; s++) spatial_dims[s] = 1 + s;
  p->c[2] = product_offset_table_create(out, spatial_dims, g->spatial_count, &p->n);
  product_padding_fix_add(p);
  return p;
}

const char *cpu_conv_refusal(const Instruction *conv, Status *made) {
  ConvPlan plan;
  return conv_plan_make(conv, &conv->operands[0]->shape, &conv->operands[1]->shape, &plan, made->message,
                        sizeof made->message)
             ? NULL
             : made->message;
}

bool cpu_conv_step_add(CpuCompile *c, const Instruction *inst, const Instruction *conv, int lhs, int rhs, int out) {
  if (shape_element_count(&conv->shape) == 0) return true;  /* nothing to write */
  ConvPlan plan;
  char unused[200];
  /* cpu_conv_refusal made it before any code was made */
  conv_plan_make(conv, &conv->operands[0]->shape, &conv->operands[1]->shape, &plan, unused, sizeof unused);
  /* No input features: every sum is empty. The GEMM writes the zeros (its
   * K = 0); the direct path would run no kernel and store nothing. */
  bool direct = false;
  if (plan.kernel_features > 0 && !conv_direct_step_add(c, inst, conv, &plan, lhs, rhs, out, &direct)) return false;
  if (direct) return true;
  ProductPlan *positions = conv_positions_plan(conv, &plan);
  if (positions) return product_step_add(c, inst, positions, rhs, lhs, out);
  return product_step_add(c, inst, conv_product_plan(conv, &plan), lhs, rhs, out);
}

bool cpu_compile_convolution(CpuCompile *c, const Instruction *inst) {
  return cpu_conv_step_add(c, inst, inst, cpu_binding_of(c, inst->operands[0], 0),
                           cpu_binding_of(c, inst->operands[1], 0), cpu_binding_of(c, inst, 0));
}
