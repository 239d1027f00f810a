/* The one description of a convolution's dimensions, groups and window
 * (conv_plan.h), checked once. */
#include <stdio.h>
#include <string.h>

#include "ir/conv_plan.h"

/* Dimension numbers must be a permutation of 0..rank-1. */
static bool dims_are_permutation(int64_t first, const int64_t *spatial, int spatial_count, int64_t last,
                                 int rank) {
  bool used[AXLE_MAX_RANK] = {0};
  int64_t all[AXLE_MAX_RANK + 2];
  int n = 0;
  all[n++] = first;
  for (int s = 0; s < spatial_count && n < AXLE_MAX_RANK + 1; s++) all[n++] = spatial[s];
  all[n++] = last;
  if (n != rank) return false;
  for (int i = 0; i < n; i++) {
    if (all[i] < 0 || all[i] >= rank || used[all[i]]) return false;
    used[all[i]] = true;
  }
  return true;
}

/* The number of window positions along one spatial dim (the spec's
 * num_windows): the input dilated and padded, the kernel dilated. */
static int64_t window_count(int64_t in, int64_t kernel, const WindowDim *w) {
  int64_t dilated_in = in == 0 ? 0 : (in - 1) * w->lhs_dilate + 1;
  int64_t padded = w->pad_lo + dilated_in + w->pad_hi;
  int64_t dilated_kernel = kernel == 0 ? 0 : (kernel - 1) * w->rhs_dilate + 1;
  if (padded <= 0 || dilated_kernel > padded) return 0;
  return (padded - dilated_kernel) / w->stride + 1;
}

static bool refuse(char *why, size_t size, const char *message) {
  snprintf(why, size, "%s", message);
  return false;
}

static bool plan_groups(const Instruction *conv, ConvPlan *p, char *why, size_t size) {
  p->feature_groups = conv->attrs.feature_group_count ? conv->attrs.feature_group_count : 1;
  p->batch_groups = conv->attrs.batch_group_count ? conv->attrs.batch_group_count : 1;
  if (p->feature_groups < 1 || p->batch_groups < 1 || (p->feature_groups > 1 && p->batch_groups > 1))
    return refuse(why, size, "group counts must be positive and not both above 1");
  if (p->features % p->feature_groups != 0 || p->kernel_features * p->feature_groups != p->features) {
    snprintf(why, size, "kernel input features (%lld) times feature_group_count (%lld) must equal the input features "
             "(%lld)", (long long)p->kernel_features, (long long)p->feature_groups, (long long)p->features);
    return false;
  }
  if (p->out_features % p->feature_groups != 0 || p->out_features % p->batch_groups != 0 ||
      p->batch % p->batch_groups != 0)
    return refuse(why, size, "output features or batch do not divide into the groups");
  p->groups = p->feature_groups * p->batch_groups;
  p->out_batch = p->batch / p->batch_groups;
  p->group_out_features = p->out_features / p->groups;
  return true;
}

/* The window of spatial dim s, defaults filled in. */
static bool plan_window(const Instruction *conv, int s, ConvPlan *p, char *why, size_t size) {
  WindowDim w = {.size = p->kernel_size[s], .stride = 1, .lhs_dilate = 1, .rhs_dilate = 1};
  if (conv->attrs.window) w = conv->attrs.window->dims[s];
  if (w.size != p->kernel_size[s]) {
    snprintf(why, size, "window size %lld differs from the kernel's %lld in dim %d", (long long)w.size,
             (long long)p->kernel_size[s], s);
    return false;
  }
  if (w.stride < 1 || w.lhs_dilate < 1 || w.rhs_dilate < 1)
    return refuse(why, size, "window stride and dilations must be positive");
  p->window[s] = w;
  return true;
}

bool conv_plan_make(const Instruction *conv, const Shape *lhs, const Shape *rhs, ConvPlan *p, char *why,
                    size_t why_size) {
  memset(p, 0, sizeof *p);
  const ConvDims *cd = attrs_conv(&conv->attrs);
  const Shape *out = &conv->shape;
  int rank = lhs->rank;
  if (rhs->rank != rank || shape_is_tuple(out) || out->rank != rank || rank < 2 || cd->spatial_count != rank - 2 ||
      (conv->attrs.window && conv->attrs.window->rank != rank - 2))
    return refuse(why, why_size, "operands, result, dim_labels and window disagree in rank");
  if (!dims_are_permutation(cd->input_batch, cd->input_spatial, cd->spatial_count, cd->input_feature, rank) ||
      !dims_are_permutation(cd->kernel_input_feature, cd->kernel_spatial, cd->spatial_count,
                            cd->kernel_output_feature, rank) ||
      !dims_are_permutation(cd->output_batch, cd->output_spatial, cd->spatial_count, cd->output_feature, rank))
    return refuse(why, why_size, "dim_labels are not permutations");
  p->spatial_count = cd->spatial_count;
  p->batch = lhs->dims[cd->input_batch];
  p->features = lhs->dims[cd->input_feature];
  p->kernel_features = rhs->dims[cd->kernel_input_feature];
  p->out_features = rhs->dims[cd->kernel_output_feature];
  if (!plan_groups(conv, p, why, why_size)) return false;
  int64_t expect[AXLE_MAX_RANK];
  expect[cd->output_batch] = p->out_batch;
  expect[cd->output_feature] = p->out_features;
  for (int s = 0; s < p->spatial_count; s++) {
    p->in_size[s] = lhs->dims[cd->input_spatial[s]];
    p->kernel_size[s] = rhs->dims[cd->kernel_spatial[s]];
    if (!plan_window(conv, s, p, why, why_size)) return false;
    p->out_size[s] = window_count(p->in_size[s], p->kernel_size[s], &p->window[s]);
    expect[cd->output_spatial[s]] = p->out_size[s];
  }
  for (int d = 0; d < rank; d++)
    if (out->dims[d] != expect[d]) {
      snprintf(why, why_size, "result dim %d is %lld, the convolution gives %lld", d, (long long)out->dims[d],
               (long long)expect[d]);
      return false;
    }
  return true;
}

ConvDims conv_dims_canonical(int spatial_count) {
  ConvDims cd = {.spatial_count = spatial_count};
  cd.input_batch = cd.output_batch = 0;
  cd.input_feature = cd.output_feature = spatial_count + 1;
  cd.kernel_input_feature = spatial_count;
  cd.kernel_output_feature = spatial_count + 1;
  for (int s = 0; s < spatial_count; s++) {
    cd.input_spatial[s] = cd.output_spatial[s] = 1 + s;
    cd.kernel_spatial[s] = s;
  }
  return cd;
}

bool conv_dims_are_canonical(const ConvDims *cd) {
  ConvDims want = conv_dims_canonical(cd->spatial_count);
  bool same = cd->input_batch == want.input_batch && cd->input_feature == want.input_feature &&
              cd->output_batch == want.output_batch && cd->output_feature == want.output_feature &&
              cd->kernel_input_feature == want.kernel_input_feature &&
              cd->kernel_output_feature == want.kernel_output_feature;
  for (int s = 0; same && s < cd->spatial_count; s++)
    same = cd->input_spatial[s] == want.input_spatial[s] && cd->output_spatial[s] == want.output_spatial[s] &&
           cd->kernel_spatial[s] == want.kernel_spatial[s];
  return same;
}

const char *conv_dims_order_refusal(const ConvDims *cd) {
  return conv_dims_are_canonical(cd) ? NULL
                                     : "a convolution in another dimension order than b01f_01io->b01f (one "
                                       "canonicalize-convolutions leaves: a packed or dynamic operand)";
}
