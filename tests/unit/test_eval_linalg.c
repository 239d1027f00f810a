/* The evaluator's dot, convolution, cholesky, triangular-solve, batch-norm
 * and rng-bit-generator, each checked against values worked out by hand,
 * the StableHLO spec's own examples, or published known-answer vectors
 * (Random123's for Philox-4x32-10 and Threefry-2x32-20). Instructions are
 * built directly in C and run through the op functions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "../test.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define VALUES(...) ((const double[]){__VA_ARGS__})
#define COUNT(...) ((int)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double)))

/* An array literal of type t filled (row-major) with values, converted. */
static Literal *array(ElementType t, int rank, const int64_t *dims, const double *values) {
  Shape s = shape_array(t, rank, dims);
  Literal *lit = literal_create(&s);
  for (int64_t i = 0; i < shape_element_count(&s); i++) literal_set_f64(lit, i, values[i]);
  return lit;
}

static Literal *u64_vector(int n, const uint64_t *values) {
  Shape s = shape_array(TYPE_U64, 1, DIMS(n));
  Literal *lit = literal_create(&s);
  memcpy(lit->data, values, sizeof *values * (size_t)n);
  return lit;
}

static Instruction instruction(Opcode op, Shape shape) {
  Instruction inst = {.opcode = op, .name = "test", .shape = shape};
  return inst;
}

/* Expects every element of lit to be within tol of want; reports the first miss. */
#define EXPECT_VALUES(lit, want, n, tol)                                                \
  do {                                                                                  \
    for (int i_ = 0; i_ < (n); i_++) {                                                  \
      double got_ = literal_get_f64((lit), i_), want_ = (want)[i_];                     \
      if (!(fabs(got_ - want_) <= (tol) || (isnan(got_) && isnan(want_)))) {            \
        EXPECT(fabs(got_ - want_) <= (tol), "element %d: expected %.9g, got %.9g", i_, \
               want_, got_);                                                            \
        break;                                                                          \
      }                                                                                 \
    }                                                                                   \
  } while (0)

static IntList ints(int count, const int64_t *values) {
  return (IntList){count, (int64_t *)values};
}

/* ------------------------------------------------------------------- dot */

static Literal *run_dot(Literal *lhs, Literal *rhs, Shape result, DotDims dims, Status *st) {
  Instruction inst = instruction(OP_DOT, result);
  inst.attrs.dot = &dims;
  Literal *ops[] = {lhs, rhs};
  Literal *out = eval_dot(&inst, ops, st);
  literal_free(lhs);
  literal_free(rhs);
  return out;
}

TEST(dot_matrix_product_contracts_lhs_dim_1_with_rhs_dim_0) {
  Status st = {0};
  /* [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] = [[4,5],[10,11]] */
  Literal *out = run_dot(array(TYPE_F32, 2, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)),
                         array(TYPE_F32, 2, DIMS(3, 2), VALUES(1, 0, 0, 1, 1, 1)),
                         shape_array(TYPE_F32, 2, DIMS(2, 2)),
                         (DotDims){.lhs_contracting = ints(1, DIMS(1)),
                                   .rhs_contracting = ints(1, DIMS(0))},
                         &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(4, 5, 10, 11), 4, 0);
  literal_free(out);
}

/* lhs [2 free, 3 batch, 2 contracting], rhs [2 contracting, 3 batch, 2 free]:
 * the result is [batch 3, lhs free 2, rhs free 2]. */
TEST(dot_orders_batch_then_lhs_free_then_rhs_free) {
  Status st = {0};
  double lv[12], rv[12];
  /* lhs[i][b][k] = 100 i + 10 b + k; rhs[k][b][j] = 1 when k == j, else 0:
   * so result[b][i][j] = lhs[i][b][j]. */
  for (int i = 0; i < 2; i++)
    for (int b = 0; b < 3; b++)
      for (int k = 0; k < 2; k++) lv[i * 6 + b * 2 + k] = 100 * i + 10 * b + k;
  for (int k = 0; k < 2; k++)
    for (int b = 0; b < 3; b++)
      for (int j = 0; j < 2; j++) rv[k * 6 + b * 2 + j] = k == j;
  Literal *out = run_dot(array(TYPE_F32, 3, DIMS(2, 3, 2), lv), array(TYPE_F32, 3, DIMS(2, 3, 2), rv),
                         shape_array(TYPE_F32, 3, DIMS(3, 2, 2)),
                         (DotDims){.lhs_batch = ints(1, DIMS(1)), .rhs_batch = ints(1, DIMS(1)),
                                   .lhs_contracting = ints(1, DIMS(2)),
                                   .rhs_contracting = ints(1, DIMS(0))},
                         &st);
  EXPECT(out, "%s", st.message);
  if (out)
    EXPECT_VALUES(out, VALUES(0, 1, 100, 101, 10, 11, 110, 111, 20, 21, 120, 121), 12, 0);
  literal_free(out);
}

TEST(dot_without_contracting_dims_is_an_outer_product) {
  Status st = {0};
  Literal *out = run_dot(array(TYPE_S32, 1, DIMS(2), VALUES(1, 2)),
                         array(TYPE_S32, 1, DIMS(3), VALUES(3, 4, 5)),
                         shape_array(TYPE_S32, 2, DIMS(2, 3)), (DotDims){0}, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(3, 4, 5, 6, 8, 10), 6, 0);
  literal_free(out);
}

/* 1 + 2^-8 is not a bf16 but is an f32: the sum is rounded once, to f32. */
TEST(dot_bf16_operands_with_f32_result_round_once_to_f32) {
  Status st = {0};
  Literal *out = run_dot(array(TYPE_BF16, 1, DIMS(2), VALUES(1, 0.00390625)),
                         array(TYPE_BF16, 1, DIMS(2), VALUES(1, 1)), shape_scalar(TYPE_F32),
                         (DotDims){.lhs_contracting = ints(1, DIMS(0)),
                                   .rhs_contracting = ints(1, DIMS(0))},
                         &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(1.00390625), 1, 0);
  literal_free(out);
}

TEST(dot_integers_wrap_in_the_result_type) {
  Status st = {0};
  DotDims vector_dot = {.lhs_contracting = ints(1, DIMS(0)), .rhs_contracting = ints(1, DIMS(0))};
  /* s32: 65536 * 65536 = 2^32 wraps to 0, + 3 * 1 */
  Literal *out = run_dot(array(TYPE_S32, 1, DIMS(2), VALUES(65536, 3)),
                         array(TYPE_S32, 1, DIMS(2), VALUES(65536, 1)), shape_scalar(TYPE_S32),
                         vector_dot, &st);
  EXPECT(out && literal_get_s64(out, 0) == 3, "s32 got %lld", out ? (long long)literal_get_s64(out, 0) : -1);
  literal_free(out);
  /* s8 x s8 -> s32 widens first: -128 * -128 = 16384, no wrap */
  out = run_dot(array(TYPE_S8, 1, DIMS(1), VALUES(-128)), array(TYPE_S8, 1, DIMS(1), VALUES(-128)),
                shape_scalar(TYPE_S32), vector_dot, &st);
  EXPECT(out && literal_get_s64(out, 0) == 16384, "s8->s32 got %lld", out ? (long long)literal_get_s64(out, 0) : -1);
  literal_free(out);
  /* u8: 16 * 16 + 1 = 257 wraps to 1 */
  out = run_dot(array(TYPE_U8, 1, DIMS(2), VALUES(16, 1)), array(TYPE_U8, 1, DIMS(2), VALUES(16, 1)),
                shape_scalar(TYPE_U8), vector_dot, &st);
  EXPECT(out && literal_get_s64(out, 0) == 1, "u8 got %lld", out ? (long long)literal_get_s64(out, 0) : -1);
  literal_free(out);
}

/* As XLA does for a result type unlike the operands': f32 2.5 becomes s32 2,
 * and s32 16777217 becomes f32 16777216, before any product is taken. */
TEST(dot_operands_are_converted_to_the_result_type_first) {
  Status st = {0};
  DotDims vector_dot = {.lhs_contracting = ints(1, DIMS(0)), .rhs_contracting = ints(1, DIMS(0))};
  Literal *out = run_dot(array(TYPE_F32, 1, DIMS(1), VALUES(2.5)), array(TYPE_F32, 1, DIMS(1), VALUES(2)),
                         shape_scalar(TYPE_S32), vector_dot, &st);
  EXPECT(out && literal_get_s64(out, 0) == 4, "f32->s32 got %lld",
         out ? (long long)literal_get_s64(out, 0) : -1);
  literal_free(out);
  out = run_dot(array(TYPE_S32, 1, DIMS(2), VALUES(16777217, 16777216)),
                array(TYPE_S32, 1, DIMS(2), VALUES(1, -1)), shape_scalar(TYPE_F32), vector_dot, &st);
  EXPECT(out && literal_get_f64(out, 0) == 0, "s32->f32 got %g", out ? literal_get_f64(out, 0) : -1);
  literal_free(out);
}

TEST(dot_rejects_contracting_dims_of_different_sizes) {
  Status st = {0};
  Literal *out = run_dot(array(TYPE_F32, 1, DIMS(2), VALUES(1, 2)),
                         array(TYPE_F32, 1, DIMS(3), VALUES(1, 2, 3)), shape_scalar(TYPE_F32),
                         (DotDims){.lhs_contracting = ints(1, DIMS(0)),
                                   .rhs_contracting = ints(1, DIMS(0))},
                         &st);
  EXPECT(!out && st.code != STATUS_OK, "expected an error");
  literal_free(out);
}

TEST(dot_rejects_a_result_shape_that_does_not_follow_the_dims) {
  Status st = {0};
  Literal *out = run_dot(array(TYPE_F32, 1, DIMS(2), VALUES(1, 2)),
                         array(TYPE_F32, 1, DIMS(3), VALUES(1, 2, 3)),
                         shape_array(TYPE_F32, 2, DIMS(3, 2)), (DotDims){0}, &st);
  EXPECT(!out && st.code != STATUS_OK, "expected an error");
  literal_free(out);
}

/* Two rank-9 operands with no contraction would give rank 18: an error,
 * not a write past the end of a dims array. */
TEST(dot_rejects_a_result_rank_above_the_limit) {
  Status st = {0};
  const int64_t ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  Literal *out = run_dot(array(TYPE_F32, 9, ones, VALUES(2)), array(TYPE_F32, 9, ones, VALUES(3)),
                         shape_scalar(TYPE_F32), (DotDims){0}, &st);
  EXPECT(!out && st.code != STATUS_OK, "expected an error");
  literal_free(out);
}

/* ----------------------------------------------------------- convolution */

/* dim_labels=b0f_0io->b0f */
static ConvDims conv_b0f(void) {
  ConvDims c = {.spatial_count = 1, .input_batch = 0, .input_feature = 2,
                .kernel_input_feature = 1, .kernel_output_feature = 2,
                .output_batch = 0, .output_feature = 2};
  c.input_spatial[0] = 1;
  c.kernel_spatial[0] = 0;
  c.output_spatial[0] = 1;
  return c;
}

static Window window_1d(WindowDim d) {
  Window w = {.rank = 1};
  w.dims[0] = d;
  return w;
}

typedef struct ConvCase {
  ConvDims dims;
  Window window;
  int64_t feature_groups, batch_groups;
} ConvCase;

static Literal *run_conv(Literal *lhs, Literal *rhs, Shape result, ConvCase c, Status *st) {
  Instruction inst = instruction(OP_CONVOLUTION, result);
  inst.attrs.conv = &c.dims;
  inst.attrs.window = c.window.rank > 0 ? &c.window : NULL;
  inst.attrs.feature_group_count = c.feature_groups ? c.feature_groups : 1;
  inst.attrs.batch_group_count = c.batch_groups ? c.batch_groups : 1;
  Literal *ops[] = {lhs, rhs};
  Literal *out = eval_convolution(&inst, ops, st);
  literal_free(lhs);
  literal_free(rhs);
  return out;
}

/* A 1-D, one-feature convolution of x (width n) with kernel k (width kn). */
static Literal *run_conv_1d(int n, const double *x, int kn, const double *k, int out_n,
                            WindowDim w, Status *st) {
  w.size = kn;
  return run_conv(array(TYPE_F32, 3, DIMS(1, n, 1), x), array(TYPE_F32, 3, DIMS(kn, 1, 1), k),
                  shape_array(TYPE_F32, 3, DIMS(1, out_n, 1)),
                  (ConvCase){.dims = conv_b0f(), .window = window_1d(w)}, st);
}

static const WindowDim plain = {.stride = 1, .lhs_dilate = 1, .rhs_dilate = 1};

/* The StableHLO spec's example: 4x4 input, lhs_dilate 2x2, stride 4x4, 3x3 ones. */
TEST(convolution_lhs_dilation) {
  Status st = {0};
  ConvDims d = {.spatial_count = 2, .input_batch = 0, .input_feature = 3,
                .kernel_input_feature = 2, .kernel_output_feature = 3,
                .output_batch = 0, .output_feature = 3,
                .input_spatial = {1, 2}, .kernel_spatial = {0, 1}, .output_spatial = {1, 2}};
  Window w = {.rank = 2};
  for (int s = 0; s < 2; s++)
    w.dims[s] = (WindowDim){.size = 3, .stride = 4, .lhs_dilate = 2, .rhs_dilate = 1};
  double ones[9];
  for (int i = 0; i < 9; i++) ones[i] = 1;
  Literal *out = run_conv(
      array(TYPE_S64, 4, DIMS(1, 4, 4, 1),
            VALUES(1, 2, 5, 6, 3, 4, 7, 8, 10, 11, 14, 15, 12, 13, 16, 17)),
      array(TYPE_S64, 4, DIMS(3, 3, 1, 1), ones), shape_array(TYPE_S64, 4, DIMS(1, 2, 2, 1)),
      (ConvCase){.dims = d, .window = w}, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(10, 26, 46, 62), 4, 0);
  literal_free(out);
}

/* Kernel taps 2 apart (rhs_dilate 2), windows 2 apart: x0+x2, x2+x4, x4+x6. */
TEST(convolution_rhs_dilation_and_stride) {
  Status st = {0};
  WindowDim w = plain;
  w.stride = 2;
  w.rhs_dilate = 2;
  Literal *out = run_conv_1d(7, VALUES(1, 2, 3, 4, 5, 6, 7), 2, VALUES(1, 1), 3, w, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(4, 8, 12), 3, 0);
  literal_free(out);
}

TEST(convolution_negative_padding_crops_the_input) {
  Status st = {0};
  WindowDim w = plain;
  w.pad_lo = w.pad_hi = -1;
  Literal *out = run_conv_1d(5, VALUES(1, 2, 3, 4, 5), 1, VALUES(1), 3, w, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(2, 3, 4), 3, 0);
  literal_free(out);
}

/* Padded input 0,1,2,3,4,5 under kernel (1, 10). */
TEST(convolution_positive_padding_reads_zeros) {
  Status st = {0};
  WindowDim w = plain;
  w.pad_lo = 1;
  Literal *out = run_conv_1d(5, VALUES(1, 2, 3, 4, 5), 2, VALUES(1, 10), 5, w, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(10, 21, 32, 43, 54), 5, 0);
  literal_free(out);
}

/* Reversal pairs the window's first tap with the kernel's last. */
TEST(convolution_window_reversal_flips_the_kernel) {
  Status st = {0};
  WindowDim w = plain;
  Literal *out = run_conv_1d(3, VALUES(1, 2, 3), 2, VALUES(1, 10), 2, w, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(21, 32), 2, 0);
  literal_free(out);
  w.reversal = true;
  out = run_conv_1d(3, VALUES(1, 2, 3), 2, VALUES(1, 10), 2, w, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(12, 23), 2, 0);
  literal_free(out);
}

/* Input features (1,2 | 3,4) in two groups; outputs 0,1 see group 0 only,
 * outputs 2,3 group 1 only. kernel[i][o] = (1 2 3 4 / 5 6 7 8). */
TEST(convolution_with_feature_groups) {
  Status st = {0};
  WindowDim w = plain;
  w.size = 1;
  Literal *out = run_conv(array(TYPE_F32, 3, DIMS(1, 1, 4), VALUES(1, 2, 3, 4)),
                          array(TYPE_F32, 3, DIMS(1, 2, 4), VALUES(1, 2, 3, 4, 5, 6, 7, 8)),
                          shape_array(TYPE_F32, 3, DIMS(1, 1, 4)),
                          (ConvCase){.dims = conv_b0f(), .window = window_1d(w),
                                     .feature_groups = 2},
                          &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(1 * 1 + 2 * 5, 1 * 2 + 2 * 6, 3 * 3 + 4 * 7, 3 * 4 + 4 * 8),
                         4, 0);
  literal_free(out);
}

/* feature_group_count = features: each output feature filters its own input
 * feature, (1,1) on feature 0 and (1,-1) on feature 1. */
TEST(convolution_depthwise_filters_each_feature_alone) {
  Status st = {0};
  WindowDim w = plain;
  w.size = 2;
  Literal *out = run_conv(array(TYPE_F32, 3, DIMS(1, 3, 2), VALUES(1, 10, 2, 20, 3, 30)),
                          array(TYPE_F32, 3, DIMS(2, 1, 2), VALUES(1, 1, 1, -1)),
                          shape_array(TYPE_F32, 3, DIMS(1, 2, 2)),
                          (ConvCase){.dims = conv_b0f(), .window = window_1d(w),
                                     .feature_groups = 2},
                          &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(3, -10, 5, -10), 4, 0);
  literal_free(out);
}

/* batch_group_count 2 over batch 4: batches (0,1) go with output feature 0,
 * (2,3) with output feature 1 (spec: split both, convolve, concatenate). */
TEST(convolution_with_batch_groups) {
  Status st = {0};
  WindowDim w = plain;
  w.size = 1;
  Literal *out = run_conv(array(TYPE_F32, 3, DIMS(4, 1, 1), VALUES(1, 2, 3, 4)),
                          array(TYPE_F32, 3, DIMS(1, 1, 2), VALUES(10, 100)),
                          shape_array(TYPE_F32, 3, DIMS(2, 1, 2)),
                          (ConvCase){.dims = conv_b0f(), .window = window_1d(w),
                                     .batch_groups = 2},
                          &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(10, 300, 20, 400), 4, 0);
  literal_free(out);
}

/* dim_labels=bf0_oi0->bf0 (NCW): the same arithmetic, other positions. */
TEST(convolution_dim_labels_place_batch_feature_and_spatial_dims) {
  Status st = {0};
  ConvDims d = {.spatial_count = 1, .input_batch = 0, .input_feature = 1,
                .kernel_output_feature = 0, .kernel_input_feature = 1,
                .output_batch = 0, .output_feature = 1,
                .input_spatial = {2}, .kernel_spatial = {2}, .output_spatial = {2}};
  WindowDim w = plain;
  w.size = 2;
  Literal *out = run_conv(array(TYPE_F32, 3, DIMS(1, 2, 3), VALUES(1, 2, 3, 10, 20, 30)),
                          array(TYPE_F32, 3, DIMS(1, 2, 2), VALUES(1, 2, 3, 4)),
                          shape_array(TYPE_F32, 3, DIMS(1, 1, 2)),
                          (ConvCase){.dims = d, .window = window_1d(w)}, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(1 + 4 + 30 + 80, 2 + 6 + 60 + 120), 2, 0);
  literal_free(out);
}

TEST(convolution_rejects_a_result_width_the_window_does_not_give) {
  Status st = {0};
  Literal *out = run_conv_1d(3, VALUES(1, 2, 3), 2, VALUES(1, 1), 3, plain, &st);
  EXPECT(!out && st.code != STATUS_OK, "expected an error");
  literal_free(out);
}

TEST(convolution_rejects_features_that_do_not_divide_into_groups) {
  Status st = {0};
  WindowDim w = plain;
  w.size = 1;
  Literal *out = run_conv(array(TYPE_F32, 3, DIMS(1, 1, 3), VALUES(1, 2, 3)),
                          array(TYPE_F32, 3, DIMS(1, 1, 2), VALUES(1, 1)),
                          shape_array(TYPE_F32, 3, DIMS(1, 1, 2)),
                          (ConvCase){.dims = conv_b0f(), .window = window_1d(w),
                                     .feature_groups = 2},
                          &st);
  EXPECT(!out && st.code != STATUS_OK, "expected an error");
  literal_free(out);
}

/* -------------------------------------------------------------- cholesky */

static Literal *run_cholesky(Literal *a, bool lower, Status *st) {
  Instruction inst = instruction(OP_CHOLESKY, a->shape);
  inst.attrs.lower = lower;
  Literal *ops[] = {a};
  Literal *out = eval_cholesky(&inst, ops, st);
  literal_free(a);
  return out;
}

/* The textbook example: (4 12 -16 / 12 37 -43 / -16 -43 98) = L L^T with
 * L = (2 0 0 / 6 1 0 / -8 5 3). */
TEST(cholesky_lower) {
  Status st = {0};
  Literal *out = run_cholesky(
      array(TYPE_F32, 2, DIMS(3, 3), VALUES(4, 12, -16, 12, 37, -43, -16, -43, 98)), true, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(2, 0, 0, 6, 1, 0, -8, 5, 3), 9, 1e-5);
  literal_free(out);
}

/* lower=false: U with a = U^T U, U = L^T; the lower triangle is zero. */
TEST(cholesky_upper_is_the_transpose_of_lower) {
  Status st = {0};
  Literal *out = run_cholesky(
      array(TYPE_F64, 2, DIMS(3, 3), VALUES(4, 12, -16, 12, 37, -43, -16, -43, 98)), false, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(2, 6, -8, 0, 1, 5, 0, 0, 3), 9, 1e-12);
  literal_free(out);
}

TEST(cholesky_reads_only_the_named_triangle) {
  Status st = {0};
  /* the upper triangle holds garbage; lower=true must not read it */
  Literal *out = run_cholesky(array(TYPE_F32, 2, DIMS(2, 2), VALUES(4, 999, 2, 5)), true, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(2, 0, 1, 2), 4, 1e-6);
  literal_free(out);
}

/* Batch element 1, (1 2 / 2 1), is indefinite: it alone becomes NaN. */
TEST(cholesky_not_positive_definite_gives_nan_for_that_matrix_only) {
  Status st = {0};
  Literal *out = run_cholesky(
      array(TYPE_F32, 3, DIMS(2, 2, 2), VALUES(4, 2, 2, 5, 1, 2, 2, 1)), true, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(2, 0, 1, 2, NAN, NAN, NAN, NAN), 8, 1e-6);
  literal_free(out);
}

TEST(cholesky_rejects_a_non_square_matrix) {
  Status st = {0};
  Literal *out = run_cholesky(array(TYPE_F32, 2, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)), true, &st);
  EXPECT(!out && st.code != STATUS_OK, "expected an error");
  literal_free(out);
}

/* ------------------------------------------------------ triangular-solve */

typedef struct SolveCase {
  bool left_side, lower, unit_diagonal;
  TransposeA transpose_a;
} SolveCase;

static Literal *run_solve(Literal *a, Literal *b, SolveCase c, Status *st) {
  Instruction inst = instruction(OP_TRIANGULAR_SOLVE, b->shape);
  inst.attrs.left_side = c.left_side;
  inst.attrs.lower = c.lower;
  inst.attrs.unit_diagonal = c.unit_diagonal;
  inst.attrs.transpose_a = c.transpose_a;
  Literal *ops[] = {a, b};
  Literal *out = eval_triangular_solve(&inst, ops, st);
  literal_free(a);
  literal_free(b);
  return out;
}

/* (2 0 / 1 1) x = (2 / 3): x = (1, 2). The upper corner is garbage, unread. */
TEST(triangular_solve_left_lower_substitutes_forward) {
  Status st = {0};
  Literal *out = run_solve(array(TYPE_F32, 2, DIMS(2, 2), VALUES(2, 77, 1, 1)),
                           array(TYPE_F32, 2, DIMS(2, 1), VALUES(2, 3)),
                           (SolveCase){.left_side = true, .lower = true}, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(1, 2), 2, 1e-6);
  literal_free(out);
}

/* x a^T = b with a = (2 0 / 1 4): a^T = (2 1 / 0 4); x = (1 2) gives b = (2 9). */
TEST(triangular_solve_right_side_transposed) {
  Status st = {0};
  Literal *out = run_solve(array(TYPE_F32, 2, DIMS(2, 2), VALUES(2, -5, 1, 4)),
                           array(TYPE_F32, 2, DIMS(1, 2), VALUES(2, 9)),
                           (SolveCase){.lower = true, .transpose_a = TRANSPOSE_A_YES}, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(1, 2), 2, 1e-6);
  literal_free(out);
}

/* x a = b with a = (2 1 / 0 4) upper: x = (1 2) gives b = (2, 1 + 8). */
TEST(triangular_solve_right_side_upper) {
  Status st = {0};
  Literal *out = run_solve(array(TYPE_F64, 2, DIMS(2, 2), VALUES(2, 1, -5, 4)),
                           array(TYPE_F64, 2, DIMS(1, 2), VALUES(2, 9)),
                           (SolveCase){.lower = false}, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(1, 2), 2, 1e-12);
  literal_free(out);
}

/* a^T x = b, a = (2 1 / 0 4) upper so a^T = (2 0 / 1 4); adjoint is the
 * same for reals. x = (1, 2) gives b = (2, 9). */
TEST(triangular_solve_left_adjoint_is_transpose_for_reals) {
  Status st = {0};
  Literal *out = run_solve(array(TYPE_F32, 2, DIMS(2, 2), VALUES(2, 1, 123, 4)),
                           array(TYPE_F32, 2, DIMS(2, 1), VALUES(2, 9)),
                           (SolveCase){.left_side = true, .transpose_a = TRANSPOSE_A_ADJOINT},
                           &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(1, 2), 2, 1e-6);
  literal_free(out);
}

/* The diagonal (100s) is not read: x0 = b0, x1 = b1 - 3 x0. Two batches and
 * two right-hand sides. */
TEST(triangular_solve_unit_diagonal_ignores_the_diagonal) {
  Status st = {0};
  Literal *out = run_solve(
      array(TYPE_F32, 3, DIMS(2, 2, 2), VALUES(100, 0, 3, 100, 100, 0, -1, 100)),
      array(TYPE_F32, 3, DIMS(2, 2, 2), VALUES(1, 2, 10, 20, 1, 2, 10, 20)),
      (SolveCase){.left_side = true, .lower = true, .unit_diagonal = true}, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(1, 2, 7, 14, 1, 2, 11, 22), 8, 1e-5);
  literal_free(out);
}

TEST(triangular_solve_rejects_b_of_the_wrong_height) {
  Status st = {0};
  Literal *out = run_solve(array(TYPE_F32, 2, DIMS(2, 2), VALUES(1, 0, 0, 1)),
                           array(TYPE_F32, 2, DIMS(3, 1), VALUES(1, 2, 3)),
                           (SolveCase){.left_side = true, .lower = true}, &st);
  EXPECT(!out && st.code != STATUS_OK, "expected an error");
  literal_free(out);
}

/* ------------------------------------------------------------ batch norm */

/* A (x, [n], [n]) tuple shape; parts must outlive its use. */
static Shape norm_tuple_shape(ElementType t, const Shape *x, int64_t n, Shape parts[3]) {
  parts[0] = *x;
  parts[1] = parts[2] = shape_array(t, 1, DIMS(n));
  Shape s = {.type = TYPE_TUPLE, .tuple_count = 3, .tuple_shapes = parts};
  return s;
}

static Literal *run_norm(Opcode op, Shape result, Literal **ops, int count, int64_t feature_index,
                         double epsilon, Status *st) {
  Instruction inst = instruction(op, result);
  inst.attrs.feature_index = feature_index;
  inst.attrs.epsilon = epsilon;
  Literal *out = op == OP_BATCH_NORM_INFERENCE ? eval_batch_norm_inference(&inst, ops, st)
                 : op == OP_BATCH_NORM_TRAINING ? eval_batch_norm_training(&inst, ops, st)
                                                : eval_batch_norm_grad(&inst, ops, st);
  for (int i = 0; i < count; i++) literal_free(ops[i]);
  return out;
}

static const double spec_operand[] = {1, 2, 3, 4, 3, 4, 1, 2}; /* the spec's [2,2,2] example */

TEST(batch_norm_inference_normalizes_with_given_statistics) {
  Status st = {0};
  Literal *ops[] = {array(TYPE_F64, 3, DIMS(2, 2, 2), spec_operand),
                    array(TYPE_F64, 1, DIMS(2), VALUES(1, 1)), array(TYPE_F64, 1, DIMS(2), VALUES(1, 1)),
                    array(TYPE_F64, 1, DIMS(2), VALUES(2, 3)), array(TYPE_F64, 1, DIMS(2), VALUES(1, 1))};
  Literal *out = run_norm(OP_BATCH_NORM_INFERENCE, ops[0]->shape, ops, 5, 2, 0, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(0, 0, 2, 2, 2, 2, 0, 0), 8, 1e-12);
  literal_free(out);
}

/* feature_index 0 of a [2,3]: row 0 is feature 0, row 1 feature 1.
 * y = scale (x - mean) / sqrt(var + eps) + offset with var + eps = 4. */
TEST(batch_norm_inference_feature_index_picks_the_dimension) {
  Status st = {0};
  Literal *ops[] = {array(TYPE_F32, 2, DIMS(2, 3), VALUES(1, 3, 5, 10, 20, 30)),
                    array(TYPE_F32, 1, DIMS(2), VALUES(2, 1)), array(TYPE_F32, 1, DIMS(2), VALUES(0, 100)),
                    array(TYPE_F32, 1, DIMS(2), VALUES(3, 20)), array(TYPE_F32, 1, DIMS(2), VALUES(3.5, 3.5))};
  Literal *out = run_norm(OP_BATCH_NORM_INFERENCE, ops[0]->shape, ops, 5, 0, 0.5, &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_VALUES(out, VALUES(-2, 0, 2, 95, 100, 105), 6, 1e-5);
  literal_free(out);
}

/* feature 0 holds 1,3,3,1: mean 2, biased variance 1 (unbiased would be 4/3). */
TEST(batch_norm_training_uses_biased_variance) {
  Status st = {0};
  Literal *ops[] = {array(TYPE_F64, 3, DIMS(2, 2, 2), spec_operand),
                    array(TYPE_F64, 1, DIMS(2), VALUES(1, 1)), array(TYPE_F64, 1, DIMS(2), VALUES(1, 1))};
  Shape parts[3];
  Shape result = norm_tuple_shape(TYPE_F64, &ops[0]->shape, 2, parts);
  Literal *out = run_norm(OP_BATCH_NORM_TRAINING, result, ops, 3, 2, 0, &st);
  EXPECT(out, "%s", st.message);
  if (out) {
    EXPECT_VALUES(out->elements[0], VALUES(0, 0, 2, 2, 2, 2, 0, 0), 8, 1e-12);
    EXPECT_VALUES(out->elements[1], VALUES(2, 3), 2, 1e-12);
    EXPECT_VALUES(out->elements[2], VALUES(1, 1), 2, 1e-12);
  }
  literal_free(out);
}

/* The spec's example: a constant grad_output gives zero grad_operand and
 * grad_scale, and grad_offset = the sum of grad_output per feature. */
TEST(batch_norm_grad_spec_example) {
  Status st = {0};
  double dy[8];
  for (int i = 0; i < 8; i++) dy[i] = 0.1;
  Literal *ops[] = {array(TYPE_F64, 3, DIMS(2, 2, 2), spec_operand),
                    array(TYPE_F64, 1, DIMS(2), VALUES(1, 1)), array(TYPE_F64, 1, DIMS(2), VALUES(2, 3)),
                    array(TYPE_F64, 1, DIMS(2), VALUES(1, 1)), array(TYPE_F64, 3, DIMS(2, 2, 2), dy)};
  Shape parts[3];
  Shape result = norm_tuple_shape(TYPE_F64, &ops[0]->shape, 2, parts);
  Literal *out = run_norm(OP_BATCH_NORM_GRAD, result, ops, 5, 2, 0, &st);
  EXPECT(out, "%s", st.message);
  if (out) {
    EXPECT_VALUES(out->elements[0], VALUES(0, 0, 0, 0, 0, 0, 0, 0), 8, 1e-12);
    EXPECT_VALUES(out->elements[1], VALUES(0, 0), 2, 1e-12);
    EXPECT_VALUES(out->elements[2], VALUES(0.4, 0.4), 2, 1e-12);
  }
  literal_free(out);
}

/* One feature, x = (0 1 5), given mean 2 and variance 4, scale 2, dy = (1 0 0):
 * n = 3, xc = (-2 -1 3), sum dy = 1, sum dy xc = -2, sqrt(s) = 2:
 * grad_operand = 2/2/3 (3 dy - 1 + xc/2) = (1/3, -1/2, 1/6),
 * grad_scale = -2/2 = -1, grad_offset = 1. */
TEST(batch_norm_grad_follows_the_spec_formula) {
  Status st = {0};
  Literal *ops[] = {array(TYPE_F64, 2, DIMS(3, 1), VALUES(0, 1, 5)),
                    array(TYPE_F64, 1, DIMS(1), VALUES(2)), array(TYPE_F64, 1, DIMS(1), VALUES(2)),
                    array(TYPE_F64, 1, DIMS(1), VALUES(4)), array(TYPE_F64, 2, DIMS(3, 1), VALUES(1, 0, 0))};
  Shape parts[3];
  Shape result = norm_tuple_shape(TYPE_F64, &ops[0]->shape, 1, parts);
  Literal *out = run_norm(OP_BATCH_NORM_GRAD, result, ops, 5, 1, 0, &st);
  EXPECT(out, "%s", st.message);
  if (out) {
    EXPECT_VALUES(out->elements[0], VALUES(1.0 / 3, -0.5, 1.0 / 6), 3, 1e-12);
    EXPECT_VALUES(out->elements[1], VALUES(-1), 1, 1e-12);
    EXPECT_VALUES(out->elements[2], VALUES(1), 1, 1e-12);
  }
  literal_free(out);
}

/* epsilon is an f32 attribute: f64 math adds (double)0.1f, not 0.1. */
TEST(batch_norm_epsilon_is_rounded_to_f32) {
  Status st = {0};
  Literal *ops[] = {array(TYPE_F64, 1, DIMS(1), VALUES(1)), array(TYPE_F64, 1, DIMS(1), VALUES(1)),
                    array(TYPE_F64, 1, DIMS(1), VALUES(0)), array(TYPE_F64, 1, DIMS(1), VALUES(0)),
                    array(TYPE_F64, 1, DIMS(1), VALUES(0))};
  Literal *out = run_norm(OP_BATCH_NORM_INFERENCE, ops[0]->shape, ops, 5, 0, 0.1, &st);
  EXPECT(out, "%s", st.message);
  double want = 1 / sqrt((double)0.1f);
  if (out) EXPECT(literal_get_f64(out, 0) == want, "got %.17g, want %.17g", literal_get_f64(out, 0), want);
  literal_free(out);
}

TEST(batch_norm_rejects_a_feature_index_outside_the_operand) {
  Status st = {0};
  Literal *ops[] = {array(TYPE_F32, 1, DIMS(2), VALUES(1, 2)), array(TYPE_F32, 1, DIMS(2), VALUES(1, 1)),
                    array(TYPE_F32, 1, DIMS(2), VALUES(0, 0))};
  Shape parts[3];
  Shape result = norm_tuple_shape(TYPE_F32, &ops[0]->shape, 2, parts);
  Literal *out = run_norm(OP_BATCH_NORM_TRAINING, result, ops, 3, 3, 0, &st);
  EXPECT(!out && st.code != STATUS_OK, "expected an error");
  literal_free(out);
}

/* ------------------------------------------------------ rng-bit-generator */

static Literal *run_rng(RngAlgorithm algorithm, int state_n, const uint64_t *state, ElementType t,
                        int rank, const int64_t *dims, Status *st) {
  Literal *s = u64_vector(state_n, state);
  Shape parts[2] = {s->shape, shape_array(t, rank, dims)};
  Shape result = {.type = TYPE_TUPLE, .tuple_count = 2, .tuple_shapes = parts};
  Instruction inst = instruction(OP_RNG_BIT_GENERATOR, result);
  inst.attrs.rng_algorithm = algorithm;
  Literal *ops[] = {s};
  Literal *out = eval_rng_bit_generator(&inst, ops, st);
  literal_free(s);
  return out;
}

static uint64_t bits_at(const Literal *lit, int64_t i) {
  return literal_get_u64(lit, i) & (type_bit_width(lit->shape.type) == 64
                                        ? UINT64_MAX
                                        : (UINT64_C(1) << type_bit_width(lit->shape.type)) - 1);
}

#define EXPECT_BITS(lit, ...)                                                               \
  do {                                                                                      \
    const uint64_t want_[] = {__VA_ARGS__};                                                 \
    for (int i_ = 0; i_ < (int)(sizeof want_ / sizeof want_[0]); i_++)                      \
      if (bits_at((lit), i_) != want_[i_]) {                                                \
        EXPECT(bits_at((lit), i_) == want_[i_], "element %d: expected 0x%llx, got 0x%llx", \
               i_, (unsigned long long)want_[i_], (unsigned long long)bits_at((lit), i_));  \
        break;                                                                              \
      }                                                                                     \
  } while (0)

/* Random123's kat_vectors for philox4x32-10: with state [key, ctr_lo, ctr_hi]
 * the first block enciphers the counter words (ctr_lo low, ctr_lo high,
 * ctr_hi low, ctr_hi high) under key (low, high); u32[4] is that block. */
TEST(philox_known_answer) {
  static const struct { uint64_t state[3]; uint32_t want[4]; } cases[] = {
      {{0, 0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{UINT64_MAX, UINT64_MAX, UINT64_MAX}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x299f31d0a4093822, 0x85a308d3243f6a88, 0x0370734413198a2e},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (int c = 0; c < 3; c++) {
    Status st = {0};
    Literal *out = run_rng(RNG_PHILOX, 3, cases[c].state, TYPE_U32, 1, DIMS(4), &st);
    EXPECT(out, "%s", st.message);
    if (!out) continue;
    EXPECT_BITS(out->elements[1], cases[c].want[0], cases[c].want[1], cases[c].want[2],
                cases[c].want[3]);
    literal_free(out);
  }
}

/* With a u64[2] state XLA reads the 128-bit counter as [state[1], state[0]]:
 * the key doubles as the counter's high word. All-ones key and counter low
 * therefore give Random123's all-ones vector, and the counter low wraps to 0. */
TEST(philox_two_word_state_takes_counter_high_from_the_key) {
  Status st = {0};
  Literal *out = run_rng(RNG_PHILOX, 2, (const uint64_t[]){UINT64_MAX, UINT64_MAX}, TYPE_U32, 1,
                         DIMS(4), &st);
  EXPECT(out, "%s", st.message);
  if (!out) return;
  EXPECT_BITS(out->elements[1], 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd);
  EXPECT_BITS(out->elements[0], UINT64_MAX, 0);
  literal_free(out);
}

/* u32[6] takes blocks 0 and 1 (6 of 8 words); the counter advances by 2. */
TEST(philox_u32_takes_words_in_block_order_and_advances_by_blocks) {
  Status st = {0};
  Literal *out = run_rng(RNG_PHILOX, 3, (const uint64_t[]){0, 0, 0}, TYPE_U32, 2, DIMS(2, 3), &st);
  EXPECT(out, "%s", st.message);
  if (!out) return;
  EXPECT_BITS(out->elements[1], 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8);
  EXPECT_BITS(out->elements[0], 0, 2, 0);
  literal_free(out);
}

/* u64 elements join word pairs, low word first: two per block. */
TEST(philox_u64_joins_word_pairs_low_word_first) {
  Status st = {0};
  Literal *out = run_rng(RNG_PHILOX, 3, (const uint64_t[]){0, 0, 0}, TYPE_U64, 1, DIMS(2), &st);
  EXPECT(out, "%s", st.message);
  if (!out) return;
  EXPECT_BITS(out->elements[1], 0xe169c58d6627e8d5, 0x9b00dbd8bc57ac4c);
  EXPECT_BITS(out->elements[0], 0, 1, 0);
  literal_free(out);
}

/* XLA's CPU and GPU compilers expand rng_default as Philox. */
TEST(rng_default_is_philox) {
  Status st = {0};
  Literal *out = run_rng(RNG_DEFAULT, 3, (const uint64_t[]){0, 0, 0}, TYPE_U32, 1, DIMS(4), &st);
  EXPECT(out, "%s", st.message);
  if (!out) return;
  EXPECT_BITS(out->elements[1], 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8);
  literal_free(out);
}

/* Random123's kat_vectors for threefry2x32-20, read through u64 output:
 * element 0 is word 0 | word 1 << 32 of the block at counter state[1]. */
TEST(threefry_known_answer) {
  static const struct { uint64_t state[2]; uint64_t want; } cases[] = {
      {{0, 0}, 0x99ba4efe6b200159},
      {{UINT64_MAX, UINT64_MAX}, 0xbb002be71cb996fc},
      {{0x0370734413198a2e, 0x85a308d3243f6a88}, 0x483df7a0c4923a9c},
  };
  for (int c = 0; c < 3; c++) {
    Status st = {0};
    Literal *out = run_rng(RNG_THREE_FRY, 2, cases[c].state, TYPE_U64, 1, DIMS(1), &st);
    EXPECT(out, "%s", st.message);
    if (!out) continue;
    EXPECT_BITS(out->elements[1], cases[c].want);
    EXPECT_BITS(out->elements[0], cases[c].state[0], cases[c].state[1] + 1);
    literal_free(out);
  }
}

/* XLA on CPU (as printed, to 5 digits, in the r-xla/anvil documentation of
 * nvl_rng_bit_generator) turns state [0, 0] into u32[3,2]
 *   1.7973e9 2.5791e9 / 1.3515e9 3.2358e9 / 1.6886e9 4.2293e9, new state [0, 3]:
 * dim 1 is split, so row r holds both words of the block at counter r.
 * Row 0 is Random123's zero vector exactly. */
TEST(threefry_u32_splits_the_first_even_dimension_as_xla_does) {
  Status st = {0};
  Literal *out = run_rng(RNG_THREE_FRY, 2, (const uint64_t[]){0, 0}, TYPE_U32, 2, DIMS(3, 2), &st);
  EXPECT(out, "%s", st.message);
  if (!out) return;
  EXPECT_BITS(out->elements[1], 0x6b200159, 0x99ba4efe);
  EXPECT_VALUES(out->elements[1], VALUES(1.7973e9, 2.5791e9, 1.3515e9, 3.2358e9, 1.6886e9, 4.2293e9),
                6, 5e4);
  EXPECT_BITS(out->elements[0], 0, 3);
  literal_free(out);
}

/* u32[3] has no even dimension: the longest (dim 0) is split into halves of
 * 2 blocks; elements 0,1 are block 0's words and element 2 block 1's word 0. */
TEST(threefry_u32_odd_shape_splits_the_longest_dimension) {
  Status st = {0};
  Literal *out = run_rng(RNG_THREE_FRY, 2, (const uint64_t[]){0, 0}, TYPE_U32, 1, DIMS(3), &st);
  EXPECT(out, "%s", st.message);
  if (!out) return;
  EXPECT_BITS(out->elements[1], 0x6b200159, 0x99ba4efe);
  EXPECT_VALUES(out->elements[1], VALUES(1.7973e9, 2.5791e9, 1.3515e9), 3, 5e4);
  EXPECT_BITS(out->elements[0], 0, 2);
  literal_free(out);
}

/* Narrow types keep the low bits of the 32-bit elements of the same shape. */
TEST(rng_narrow_types_truncate_32_bit_elements) {
  Status st = {0};
  Literal *out = run_rng(RNG_THREE_FRY, 2, (const uint64_t[]){0, 0}, TYPE_U16, 1, DIMS(2), &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_BITS(out->elements[1], 0x0159, 0x4efe);
  literal_free(out);
  out = run_rng(RNG_THREE_FRY, 2, (const uint64_t[]){0, 0}, TYPE_S8, 1, DIMS(2), &st);
  EXPECT(out, "%s", st.message);
  if (out) EXPECT_BITS(out->elements[1], 0x59, 0xfe);
  literal_free(out);
}

TEST(rng_rejects_a_three_word_state_for_three_fry) {
  Status st = {0};
  Literal *out = run_rng(RNG_THREE_FRY, 3, (const uint64_t[]){0, 0, 0}, TYPE_U32, 1, DIMS(4), &st);
  EXPECT(!out && st.code != STATUS_OK, "expected an error");
  literal_free(out);
}

/* ------------------------------------------------- through the HLO text */

/* Parses text, runs its entry on args (borrowed) and returns the result, or
 * NULL with the error printed. */
static Literal *run_hlo(const char *text, Literal *const *args, int count) {
  Status st = {0};
  Module *m = parse_module(text, strlen(text), "test.hlo", &st);
  Literal *out = m ? eval_module(m, args, count, &st) : NULL;
  if (!out) status_print(&st, stdout);
  module_free(m);
  return out;
}

static void free_all(Literal **lits, int count) {
  for (int i = 0; i < count; i++) literal_free(lits[i]);
}

TEST(hlo_dot_with_batch_dims_runs_from_text) {
  Literal *args[] = {array(TYPE_F32, 3, DIMS(2, 1, 2), VALUES(1, 2, 3, 4)),
                     array(TYPE_F32, 3, DIMS(2, 2, 1), VALUES(5, 6, 7, 8))};
  Literal *out = run_hlo("HloModule m\n"
                         "ENTRY e {\n"
                         "  a = f32[2,1,2] parameter(0)\n"
                         "  b = f32[2,2,1] parameter(1)\n"
                         "  ROOT d = f32[2,1,1] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2},"
                         " rhs_batch_dims={0}, rhs_contracting_dims={1}\n"
                         "}\n",
                         args, 2);
  EXPECT(out, "no result");
  if (out) EXPECT_VALUES(out, VALUES(1 * 5 + 2 * 6, 3 * 7 + 4 * 8), 2, 0);
  literal_free(out);
  free_all(args, 2);
}

/* The spec's lhs_dilation example again, written as XLA prints it. */
TEST(hlo_convolution_window_and_dim_labels_run_from_text) {
  double ones[9];
  for (int i = 0; i < 9; i++) ones[i] = 1;
  Literal *args[] = {array(TYPE_F32, 4, DIMS(1, 4, 4, 1),
                           VALUES(1, 2, 5, 6, 3, 4, 7, 8, 10, 11, 14, 15, 12, 13, 16, 17)),
                     array(TYPE_F32, 4, DIMS(3, 3, 1, 1), ones)};
  Literal *out = run_hlo("HloModule m\n"
                         "ENTRY e {\n"
                         "  x = f32[1,4,4,1] parameter(0)\n"
                         "  k = f32[3,3,1,1] parameter(1)\n"
                         "  ROOT c = f32[1,2,2,1] convolution(x, k), window={size=3x3 stride=4x4 "
                         "lhs_dilate=2x2}, dim_labels=b01f_01io->b01f\n"
                         "}\n",
                         args, 2);
  EXPECT(out, "no result");
  if (out) EXPECT_VALUES(out, VALUES(10, 26, 46, 62), 4, 0);
  literal_free(out);
  free_all(args, 2);
}

TEST(hlo_cholesky_and_triangular_solve_run_from_text) {
  Literal *args[] = {array(TYPE_F32, 2, DIMS(2, 2), VALUES(4, 2, 2, 5))};
  Literal *out = run_hlo("HloModule m\n"
                         "ENTRY e {\n"
                         "  a = f32[2,2] parameter(0)\n"
                         "  ROOT l = f32[2,2] cholesky(a), lower=true\n"
                         "}\n",
                         args, 1);
  EXPECT(out, "no result");
  if (out) EXPECT_VALUES(out, VALUES(2, 0, 1, 2), 4, 1e-6);
  literal_free(out);
  free_all(args, 1);
  /* x (2 0 / 1 4)^T = (2 9): x = (1 2) */
  Literal *solve_args[] = {array(TYPE_F32, 2, DIMS(2, 2), VALUES(2, 0, 1, 4)),
                           array(TYPE_F32, 2, DIMS(1, 2), VALUES(2, 9))};
  out = run_hlo("HloModule m\n"
                "ENTRY e {\n"
                "  a = f32[2,2] parameter(0)\n"
                "  b = f32[1,2] parameter(1)\n"
                "  ROOT x = f32[1,2] triangular-solve(a, b), left_side=false, lower=true,"
                " transpose_a=TRANSPOSE\n"
                "}\n",
                solve_args, 2);
  EXPECT(out, "no result");
  if (out) EXPECT_VALUES(out, VALUES(1, 2), 2, 1e-6);
  literal_free(out);
  free_all(solve_args, 2);
}

TEST(hlo_batch_norm_training_runs_from_text) {
  Literal *args[] = {array(TYPE_F32, 3, DIMS(2, 2, 2), spec_operand),
                     array(TYPE_F32, 1, DIMS(2), VALUES(1, 1)), array(TYPE_F32, 1, DIMS(2), VALUES(1, 1))};
  Literal *out = run_hlo("HloModule m\n"
                         "ENTRY e {\n"
                         "  x = f32[2,2,2] parameter(0)\n"
                         "  s = f32[2] parameter(1)\n"
                         "  o = f32[2] parameter(2)\n"
                         "  ROOT t = (f32[2,2,2], f32[2], f32[2]) batch-norm-training(x, s, o),"
                         " epsilon=0, feature_index=2\n"
                         "}\n",
                         args, 3);
  EXPECT(out, "no result");
  if (out && out->shape.type == TYPE_TUPLE) {
    EXPECT_VALUES(out->elements[0], VALUES(0, 0, 2, 2, 2, 2, 0, 0), 8, 1e-6);
    EXPECT_VALUES(out->elements[1], VALUES(2, 3), 2, 1e-6);
    EXPECT_VALUES(out->elements[2], VALUES(1, 1), 2, 1e-6);
  }
  literal_free(out);
  free_all(args, 3);
}

TEST(hlo_rng_bit_generator_runs_from_text) {
  Literal *args[] = {u64_vector(2, (const uint64_t[]){0, 0})};
  Literal *out = run_hlo("HloModule m\n"
                         "ENTRY e {\n"
                         "  s = u64[2] parameter(0)\n"
                         "  ROOT r = (u64[2], u32[3,2]) rng-bit-generator(s), algorithm=rng_three_fry\n"
                         "}\n",
                         args, 1);
  EXPECT(out, "no result");
  if (out && out->shape.type == TYPE_TUPLE) {
    EXPECT_BITS(out->elements[1], 0x6b200159, 0x99ba4efe);
    EXPECT_BITS(out->elements[0], 0, 3);
  }
  literal_free(out);
  free_all(args, 1);
}

int main(void) {
  RUN(dot_matrix_product_contracts_lhs_dim_1_with_rhs_dim_0);
  RUN(dot_orders_batch_then_lhs_free_then_rhs_free);
  RUN(dot_without_contracting_dims_is_an_outer_product);
  RUN(dot_bf16_operands_with_f32_result_round_once_to_f32);
  RUN(dot_integers_wrap_in_the_result_type);
  RUN(dot_operands_are_converted_to_the_result_type_first);
  RUN(dot_rejects_contracting_dims_of_different_sizes);
  RUN(dot_rejects_a_result_shape_that_does_not_follow_the_dims);
  RUN(dot_rejects_a_result_rank_above_the_limit);
  RUN(convolution_lhs_dilation);
  RUN(convolution_rhs_dilation_and_stride);
  RUN(convolution_negative_padding_crops_the_input);
  RUN(convolution_positive_padding_reads_zeros);
  RUN(convolution_window_reversal_flips_the_kernel);
  RUN(convolution_with_feature_groups);
  RUN(convolution_depthwise_filters_each_feature_alone);
  RUN(convolution_with_batch_groups);
  RUN(convolution_dim_labels_place_batch_feature_and_spatial_dims);
  RUN(convolution_rejects_a_result_width_the_window_does_not_give);
  RUN(convolution_rejects_features_that_do_not_divide_into_groups);
  RUN(cholesky_lower);
  RUN(cholesky_upper_is_the_transpose_of_lower);
  RUN(cholesky_reads_only_the_named_triangle);
  RUN(cholesky_not_positive_definite_gives_nan_for_that_matrix_only);
  RUN(cholesky_rejects_a_non_square_matrix);
  RUN(triangular_solve_left_lower_substitutes_forward);
  RUN(triangular_solve_right_side_transposed);
  RUN(triangular_solve_right_side_upper);
  RUN(triangular_solve_left_adjoint_is_transpose_for_reals);
  RUN(triangular_solve_unit_diagonal_ignores_the_diagonal);
  RUN(triangular_solve_rejects_b_of_the_wrong_height);
  RUN(batch_norm_inference_normalizes_with_given_statistics);
  RUN(batch_norm_inference_feature_index_picks_the_dimension);
  RUN(batch_norm_training_uses_biased_variance);
  RUN(batch_norm_grad_spec_example);
  RUN(batch_norm_grad_follows_the_spec_formula);
  RUN(batch_norm_epsilon_is_rounded_to_f32);
  RUN(batch_norm_rejects_a_feature_index_outside_the_operand);
  RUN(philox_known_answer);
  RUN(philox_two_word_state_takes_counter_high_from_the_key);
  RUN(philox_u32_takes_words_in_block_order_and_advances_by_blocks);
  RUN(philox_u64_joins_word_pairs_low_word_first);
  RUN(rng_default_is_philox);
  RUN(threefry_known_answer);
  RUN(threefry_u32_splits_the_first_even_dimension_as_xla_does);
  RUN(threefry_u32_odd_shape_splits_the_longest_dimension);
  RUN(rng_narrow_types_truncate_32_bit_elements);
  RUN(rng_rejects_a_three_word_state_for_three_fry);
  RUN(hlo_dot_with_batch_dims_runs_from_text);
  RUN(hlo_convolution_window_and_dim_labels_run_from_text);
  RUN(hlo_cholesky_and_triangular_solve_run_from_text);
  RUN(hlo_batch_norm_training_runs_from_text);
  RUN(hlo_rng_bit_generator_runs_from_text);
  return test_summary();
}
