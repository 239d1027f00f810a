/* A convolution's taps walked one by one: where each tap of each output
 * position reads in the input (the implicit GEMM's patches, cpu_conv.c),
 * and the fix for the taps in padding that the fast paths (the implicit
 * GEMM and the direct convolution, conv_direct.c) multiply by zero. The
 * file sits below both, so neither calls into the other's. */
#include "complex_compat.h"
#include <math.h>

#include "emit_x86/cpu_compile.h"
#include "ir/conv_plan.h"

/* Where row `row` of group `group` reads: its output position (out) and
 * the input offset of its batch entry and the group's first feature. */
int64_t conv_gather_row_locate(const ConvGather *g, int64_t group, int64_t row, int64_t out[AXLE_MAX_RANK]) {
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
bool conv_gather_tap_locate(const ConvGather *g, const int64_t *out, int64_t t, int64_t base, int64_t *at) {
  *at = base;
  for (int s = g->spatial_count - 1; s >= 0; s--) {
    int64_t pos = conv_input_position(&g->window[s], out[s], t % g->kernel_size[s], g->in_size[s]);
    if (pos < 0) return false;
    *at += pos * g->spatial_stride[s];
    t /= g->kernel_size[s];
  }
  return true;
}

/* The gather of conv, whose plan (src/ir/conv_plan.h) is plan. */
ConvGather *conv_gather_create(const Instruction *conv, const ConvPlan *plan) {
  const ConvDims *cd = attrs_conv(&conv->attrs);
  const Shape *in = &conv->operands[0]->shape, *kernel = &conv->operands[1]->shape, *out = &conv->shape;
  ConvGather *g = mem_calloc(1, sizeof *g);
  int64_t kernel_strides[AXLE_MAX_RANK], out_strides[AXLE_MAX_RANK];
  shape_layout_strides(kernel, kernel_strides);
  shape_layout_strides(out, out_strides);
  g->in_type = in->type;
  g->kernel_type = kernel->type;
  g->out_type = out->type;
  g->kernel_elements = shape_element_count(kernel);
  g->group_out_features = plan->group_out_features;
  g->kernel_out_stride = kernel_strides[cd->kernel_output_feature];
  g->kernel_in_stride = kernel_strides[cd->kernel_input_feature];
  g->out_batch_stride = out_strides[cd->output_batch];
  g->out_feature_stride = out_strides[cd->output_feature];
  g->positions = 1;
  g->spatial_count = plan->spatial_count;
  g->feature_groups = plan->feature_groups;
  g->batch_groups = plan->batch_groups;
  g->groups = plan->groups;
  g->batch_per_group = plan->out_batch;
  g->features_per_group = plan->kernel_features;
  int64_t strides[AXLE_MAX_RANK];
  shape_layout_strides(in, strides);
  g->batch_stride = strides[cd->input_batch];
  g->feature_stride = strides[cd->input_feature];
  g->taps = 1;
  for (int s = 0; s < g->spatial_count; s++) {
    g->in_size[s] = plan->in_size[s];
    g->out_size[s] = plan->out_size[s];
    g->kernel_size[s] = plan->kernel_size[s];
    g->window[s] = plan->window[s];
    g->spatial_stride[s] = strides[cd->input_spatial[s]];
    g->kernel_spatial_stride[s] = kernel_strides[cd->kernel_spatial[s]];
    g->out_spatial_stride[s] = out_strides[cd->output_spatial[s]];
    g->taps *= g->kernel_size[s];
    g->positions *= g->out_size[s];
  }
  return g;
}

/* ------------------------------------------------------ taps in padding
 *
 * HLO's convolution sums over the taps inside the (dilated) input only:
 * XLA's HloEvaluator, and axle's (eval_linalg.c), visit no tap in the
 * padding or in a hole of the input dilation. The fast paths (the implicit
 * GEMM, the direct convolution) multiply such a tap's weight by a 0 read
 * there instead. For a finite weight that adds a zero, which leaves the
 * sum's bits as they were (x + 0 = x for either zero, and every sum starts
 * from +0): the same as skipping the tap. But 0 times an infinity or a NaN
 * is NaN. So after a fast path, when the kernel holds such a weight (a
 * scan of the kernel, cheap beside the product), the outputs of that
 * weight's output feature whose window leaves the input are summed again
 * here, skipping the taps outside; the others are right as they are. */

/* Whether a tap of conv can fall outside the input at all. */
static bool conv_meets_padding(const ConvGather *g) {
  for (int s = 0; s < g->spatial_count; s++)
    if (g->window[s].pad_lo > 0 || g->window[s].pad_hi > 0 || g->window[s].lhs_dilate > 1) return true;
  return false;
}

static Literal element_view(ElementType type, const void *data) {
  return (Literal){.shape = {.type = type}, .data = (void *)data};
}

static bool element_is_finite(const Literal *v, int64_t at) {
  if (!type_is_complex(v->shape.type)) return isfinite(literal_get_f64(v, at));
  double _Complex z = literal_get_complex(v, at);
  return isfinite(creal(z)) && isfinite(cimag(z));
}

bool conv_padding_fix_needed(const ConvGather *g, const void *kernel) {
  if (!conv_meets_padding(g) || (!type_is_float(g->kernel_type) && !type_is_complex(g->kernel_type))) return false;
  if (g->kernel_type == TYPE_F32) {
    const float *w = kernel;
    for (int64_t i = 0; i < g->kernel_elements; i++)
      if (!isfinite(w[i])) return true;
    return false;
  }
  Literal w = element_view(g->kernel_type, kernel);
  for (int64_t i = 0; i < g->kernel_elements; i++)
    if (!element_is_finite(&w, i)) return true;
  return false;
}

/* The kernel offset of output feature o, input feature c (of its group)
 * and window tap t, window reversal applied. */
static int64_t kernel_weight_offset(const ConvGather *g, int64_t o, int64_t c, int64_t t) {
  int64_t at = o * g->kernel_out_stride + c * g->kernel_in_stride;
  for (int s = g->spatial_count - 1; s >= 0; s--) {
    int64_t tap = t % g->kernel_size[s];
    t /= g->kernel_size[s];
    at += (g->window[s].reversal ? g->kernel_size[s] - 1 - tap : tap) * g->kernel_spatial_stride[s];
  }
  return at;
}

typedef struct PaddingFix {
  const ConvGather *g;
  Literal in, kernel, out;
} PaddingFix;

/* One output element (output feature o, product row `row` of its group)
 * summed over the taps inside the input, as the evaluator sums it. */
static void padding_fix_element(const PaddingFix *f, int64_t o, int64_t group, int64_t row) {
  const ConvGather *g = f->g;
  int64_t pos[AXLE_MAX_RANK], at;
  int64_t base = conv_gather_row_locate(g, group, row, pos);
  double real = 0;
  double _Complex sum = 0;
  bool is_complex = type_is_complex(g->out_type);
  for (int64_t t = 0; t < g->taps; t++) {
    if (!conv_gather_tap_locate(g, pos, t, base, &at)) continue;
    for (int64_t c = 0; c < g->features_per_group; c++) {
      int64_t in_at = at + c * g->feature_stride, weight_at = kernel_weight_offset(g, o, c, t);
      if (is_complex) sum += literal_get_complex(&f->in, in_at) * literal_get_complex(&f->kernel, weight_at);
      else real += literal_get_f64(&f->in, in_at) * literal_get_f64(&f->kernel, weight_at);
    }
  }
  int64_t to = row / g->positions * g->out_batch_stride + o * g->out_feature_stride;
  for (int s = 0; s < g->spatial_count; s++) to += pos[s] * g->out_spatial_stride[s];
  Literal out = f->out;
  if (is_complex) literal_set_complex(&out, to, sum);
  else literal_set_f64(&out, to, real);
}

/* Task o: output feature o's outputs whose window leaves the input, when
 * one of its weights is not finite. */
static void padding_fix_task(void *context, int64_t o) {
  const PaddingFix *f = context;
  const ConvGather *g = f->g;
  bool finite = true;
  for (int64_t c = 0; c < g->features_per_group && finite; c++)
    for (int64_t t = 0; t < g->taps && finite; t++) finite = element_is_finite(&f->kernel, kernel_weight_offset(g, o, c, t));
  if (finite) return;
  int64_t group = o / g->group_out_features, pos[AXLE_MAX_RANK], at;
  for (int64_t row = 0; row < g->batch_per_group * g->positions; row++) {
    int64_t base = conv_gather_row_locate(g, group, row, pos);
    bool inside = true;
    for (int64_t t = 0; t < g->taps && inside; t++) inside = conv_gather_tap_locate(g, pos, t, base, &at);
    if (!inside) padding_fix_element(f, o, group, row);
  }
}

void conv_padding_taps_fix(const ConvGather *g, const void *in, const void *kernel, void *out, ThreadPool *pool) {
  PaddingFix f = {.g = g, .in = element_view(g->in_type, in), .kernel = element_view(g->kernel_type, kernel),
                  .out = element_view(g->out_type, out)};
  thread_pool_run(pool, g->groups * g->group_out_features, padding_fix_task, &f);
}

