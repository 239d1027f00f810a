/* The convolution plan (src/ir/conv_plan.h): groups, sizes and windows it
 * builds from dim_labels and the window, each expectation worked out by
 * hand, and the reasons it gives for what does not fit. */
#include <string.h>

#include "ir/conv_plan.h"
#include "../test.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

/* b01f_01io->b01f over rank 4. */
static ConvDims nhwc(void) {
  return (ConvDims){.spatial_count = 2, .input_batch = 0, .input_feature = 3, .input_spatial = {1, 2},
                    .kernel_input_feature = 2, .kernel_output_feature = 3, .kernel_spatial = {0, 1},
                    .output_batch = 0, .output_feature = 3, .output_spatial = {1, 2}};
}

static Instruction convolution(const ConvDims *cd, const Window *w, const int64_t *out_dims) {
  Instruction inst = {.opcode = OP_CONVOLUTION, .name = "conv", .shape = shape_array(TYPE_F32, 4, out_dims)};
  inst.attrs.conv = cd;
  inst.attrs.window = w;
  inst.attrs.feature_group_count = inst.attrs.batch_group_count = 1;
  return inst;
}

/* Input [2,5,5,4], kernel [3,3,2,6], feature_group_count 2, window 3x3
 * stride 2 pad 1_1: each spatial dim gives ((5-1)+1 + 2 - 3) / 2 + 1 = 3
 * positions; 2 groups of 2 input and 3 output features. */
TEST(feature_groups_and_a_strided_padded_window) {
  ConvDims cd = nhwc();
  WindowDim wd = {.size = 3, .stride = 2, .pad_lo = 1, .pad_hi = 1, .lhs_dilate = 1, .rhs_dilate = 1};
  Window w = {.rank = 2, .dims = {wd, wd}};
  Instruction conv = convolution(&cd, &w, DIMS(2, 3, 3, 6));
  conv.attrs.feature_group_count = 2;
  Shape lhs = shape_array(TYPE_F32, 4, DIMS(2, 5, 5, 4)), rhs = shape_array(TYPE_F32, 4, DIMS(3, 3, 2, 6));
  ConvPlan p;
  char why[200] = "";
  EXPECT(conv_plan_make(&conv, &lhs, &rhs, &p, why, sizeof why), "refused: %s", why);
  EXPECT(p.batch == 2 && p.features == 4 && p.kernel_features == 2 && p.out_features == 6, "B %lld C %lld %lld O %lld",
         (long long)p.batch, (long long)p.features, (long long)p.kernel_features, (long long)p.out_features);
  EXPECT(p.feature_groups == 2 && p.batch_groups == 1 && p.groups == 2 && p.out_batch == 2 &&
             p.group_out_features == 3,
         "groups %lld/%lld/%lld out_batch %lld per group %lld", (long long)p.feature_groups,
         (long long)p.batch_groups, (long long)p.groups, (long long)p.out_batch, (long long)p.group_out_features);
  for (int s = 0; s < 2; s++)
    EXPECT(p.in_size[s] == 5 && p.kernel_size[s] == 3 && p.out_size[s] == 3 && p.window[s].stride == 2,
           "dim %d: in %lld kernel %lld out %lld", s, (long long)p.in_size[s], (long long)p.kernel_size[s],
           (long long)p.out_size[s]);
}

/* Without window={...}: the kernel is the window, stride 1, no padding.
 * Input [4,6,6,3], kernel [2,2,3,6], batch_group_count 2: out batch 4/2,
 * (6-2)+1 = 5 positions a dim, 6 output features in 2 groups of 3. A
 * kernel of 5 output features does not split into 2 groups: refused. */
TEST(batch_groups_and_the_default_window) {
  ConvDims cd = nhwc();
  Instruction conv = convolution(&cd, NULL, DIMS(2, 5, 5, 6));
  conv.attrs.batch_group_count = 2;
  Shape lhs = shape_array(TYPE_F32, 4, DIMS(4, 6, 6, 3)), rhs = shape_array(TYPE_F32, 4, DIMS(2, 2, 3, 6));
  ConvPlan p;
  char why[200] = "";
  EXPECT(conv_plan_make(&conv, &lhs, &rhs, &p, why, sizeof why), "refused: %s", why);
  EXPECT(p.out_batch == 2 && p.groups == 2 && p.group_out_features == 3, "out_batch %lld groups %lld per %lld",
         (long long)p.out_batch, (long long)p.groups, (long long)p.group_out_features);
  EXPECT(p.window[0].size == 2 && p.window[0].stride == 1 && p.window[0].lhs_dilate == 1 && p.out_size[0] == 5,
         "default window: size %lld stride %lld, out %lld", (long long)p.window[0].size,
         (long long)p.window[0].stride, (long long)p.out_size[0]);
  Shape odd = shape_array(TYPE_F32, 4, DIMS(2, 2, 3, 5));
  conv.shape.dims[3] = 5;
  EXPECT(!conv_plan_make(&conv, &lhs, &odd, &p, why, sizeof why) && strstr(why, "divide into the groups"),
         "5 output features in 2 batch groups: %s", why);
}

TEST(what_does_not_fit_is_refused_with_a_reason) {
  ConvDims cd = nhwc();
  Shape lhs = shape_array(TYPE_F32, 4, DIMS(1, 5, 5, 2)), rhs = shape_array(TYPE_F32, 4, DIMS(3, 3, 2, 4));
  ConvPlan p;
  char why[200] = "";
  Instruction wrong_result = convolution(&cd, NULL, DIMS(1, 4, 3, 4));
  EXPECT(!conv_plan_make(&wrong_result, &lhs, &rhs, &p, why, sizeof why) && strstr(why, "result dim 1 is 4"),
         "result: %s", why);
  ConvDims twice = cd;
  twice.input_feature = 0;
  Instruction labels = convolution(&twice, NULL, DIMS(1, 3, 3, 4));
  EXPECT(!conv_plan_make(&labels, &lhs, &rhs, &p, why, sizeof why) && strstr(why, "not permutations"),
         "labels: %s", why);
  WindowDim wd = {.size = 2, .stride = 1, .lhs_dilate = 1, .rhs_dilate = 1};
  Window w = {.rank = 2, .dims = {wd, wd}};
  Instruction window = convolution(&cd, &w, DIMS(1, 3, 3, 4));
  EXPECT(!conv_plan_make(&window, &lhs, &rhs, &p, why, sizeof why) && strstr(why, "differs from the kernel"),
         "window: %s", why);
}

/* Window stride 2, pad_lo 1, lhs_dilate 2: output 3's tap 1 sits at
 * 3*2 - 1 + 1 = 6 of the dilated input, element 3; tap 0 at 5, a hole. */
TEST(the_input_position_of_a_tap_skips_padding_and_holes) {
  WindowDim w = {.size = 3, .stride = 2, .pad_lo = 1, .lhs_dilate = 2, .rhs_dilate = 1};
  EXPECT(conv_input_position(&w, 3, 1, 8) == 3, "tap 1: %lld", (long long)conv_input_position(&w, 3, 1, 8));
  EXPECT(conv_input_position(&w, 3, 0, 8) == -1, "a hole: %lld", (long long)conv_input_position(&w, 3, 0, 8));
  EXPECT(conv_input_position(&w, 0, 0, 8) == -1, "padding: %lld", (long long)conv_input_position(&w, 0, 0, 8));
  EXPECT(conv_input_position(&w, 3, 1, 3) == -1, "past the end: %lld", (long long)conv_input_position(&w, 3, 1, 3));
}

/* The canonical form is b01f_01io->b01f for any number of spatial dims;
 * anything else is the backends' one refusal. */
TEST(the_canonical_form_is_b01f_01io_to_b01f) {
  ConvDims two = conv_dims_canonical(2), none = conv_dims_canonical(0);
  EXPECT(two.input_batch == 0 && two.input_spatial[0] == 1 && two.input_spatial[1] == 2 && two.input_feature == 3,
         "input b01f");
  EXPECT(two.kernel_spatial[0] == 0 && two.kernel_spatial[1] == 1 && two.kernel_input_feature == 2 &&
             two.kernel_output_feature == 3,
         "kernel 01io");
  EXPECT(two.output_batch == 0 && two.output_spatial[1] == 2 && two.output_feature == 3, "result b01f");
  EXPECT(none.input_feature == 1 && none.kernel_input_feature == 0 && none.kernel_output_feature == 1, "bf_io->bf");
  EXPECT(conv_dims_are_canonical(&two) && conv_dims_order_refusal(&two) == NULL, "canonical: no refusal");
  ConvDims nchw = two;
  nchw.input_feature = 1;
  nchw.input_spatial[0] = 2;
  nchw.input_spatial[1] = 3;
  const char *why = conv_dims_order_refusal(&nchw);
  EXPECT(!conv_dims_are_canonical(&nchw) && why && strstr(why, "b01f_01io->b01f"), "an NCHW input is refused: %s",
         why ? why : "(none)");
  ConvDims kernel_oi = two;
  kernel_oi.kernel_input_feature = 3;
  kernel_oi.kernel_output_feature = 2;
  EXPECT(!conv_dims_are_canonical(&kernel_oi), "a kernel with out before in is not canonical");
}

int main(void) {
  RUN(feature_groups_and_a_strided_padded_window);
  RUN(batch_groups_and_the_default_window);
  RUN(what_does_not_fit_is_refused_with_a_reason);
  RUN(the_input_position_of_a_tap_skips_padding_and_holes);
  RUN(the_canonical_form_is_b01f_01io_to_b01f);
  return test_summary();
}
