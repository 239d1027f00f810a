/* The dot plan (src/ir/dot_plan.h): the groups, extents and canonical
 * orders it builds from dimension numbers, each expectation worked out by
 * hand, and the stride merge the CPU's GEMM reads operands through. */
#include <string.h>

#include "ir/dot_plan.h"
#include "../test.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define LIST(...) ((IntList){(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}})

static Shape f32(int rank, const int64_t *dims) { return shape_array(TYPE_F32, rank, dims); }

/* Whether got[0..n) is want[0..n); prints both when not. */
static bool same_dims(const char *what, const int64_t *got, const int64_t *want, int n) {
  if (n == 0 || memcmp(got, want, sizeof *got * (size_t)n) == 0) return true;
  printf("  %s: got", what);
  for (int i = 0; i < n; i++) printf(" %lld", (long long)got[i]);
  printf(", want");
  for (int i = 0; i < n; i++) printf(" %lld", (long long)want[i]);
  printf("\n");
  return false;
}

TEST(a_matrix_product_is_one_m_n_and_k_dim_already_canonical) {
  Shape lhs = f32(2, DIMS(2, 3)), rhs = f32(2, DIMS(3, 4));
  DotDims dd = {.lhs_contracting = LIST(1), .rhs_contracting = LIST(0)};
  DotPlan p;
  const char *why = dot_plan_make(&dd, &lhs, &rhs, &p);
  EXPECT(!why, "refused: %s", why);
  EXPECT(p.batch_count == 0 && p.m_count == 1 && p.n_count == 1 && p.k_count == 1, "counts %d %d %d %d",
         p.batch_count, p.m_count, p.n_count, p.k_count);
  EXPECT(p.batch == 1 && p.m == 2 && p.n == 4 && p.k == 3, "extents %lld %lld %lld %lld", (long long)p.batch,
         (long long)p.m, (long long)p.n, (long long)p.k);
  EXPECT(same_dims("lhs_m", p.lhs_m, DIMS(0), 1) && same_dims("rhs_n", p.rhs_n, DIMS(1), 1), "free dims");
  EXPECT(same_dims("out_m", p.out_m, DIMS(0), 1) && same_dims("out_n", p.out_n, DIMS(1), 1), "result dims");
  EXPECT(p.lhs_canonical && p.rhs_canonical, "lhs %d rhs %d", p.lhs_canonical, p.rhs_canonical);
  EXPECT(dot_plan_products(&p) == 24, "products %lld", (long long)dot_plan_products(&p));
}

/* lhs f32[5,3,2,7], batch {3}, contracting {2,0}; rhs f32[2,7,4,5], batch
 * {1}, contracting {0,3}. Free: lhs dim 1 (3), rhs dim 2 (4). Canonical
 * lhs [batch, M, K] = dims 3, 1, 2, 0; rhs [batch, K, N] = 1, 0, 3, 2. */
TEST(batch_last_and_contracting_first_are_grouped_in_list_order) {
  Shape lhs = f32(4, DIMS(5, 3, 2, 7)), rhs = f32(4, DIMS(2, 7, 4, 5));
  DotDims dd = {.lhs_batch = LIST(3), .rhs_batch = LIST(1), .lhs_contracting = LIST(2, 0),
                .rhs_contracting = LIST(0, 3)};
  DotPlan p;
  const char *why = dot_plan_make(&dd, &lhs, &rhs, &p);
  EXPECT(!why, "refused: %s", why);
  EXPECT(p.batch == 7 && p.m == 3 && p.n == 4 && p.k == 10, "extents %lld %lld %lld %lld", (long long)p.batch,
         (long long)p.m, (long long)p.n, (long long)p.k);
  EXPECT(same_dims("lhs_k", p.lhs_k, DIMS(2, 0), 2) && same_dims("rhs_k", p.rhs_k, DIMS(0, 3), 2), "k pairs");
  EXPECT(same_dims("lhs_m", p.lhs_m, DIMS(1), 1) && same_dims("rhs_n", p.rhs_n, DIMS(2), 1), "free dims");
  EXPECT(same_dims("lhs_order", p.lhs_order, DIMS(3, 1, 2, 0), 4), "lhs order");
  EXPECT(same_dims("rhs_order", p.rhs_order, DIMS(1, 0, 3, 2), 4), "rhs order");
  EXPECT(!p.lhs_canonical && !p.rhs_canonical, "lhs %d rhs %d", p.lhs_canonical, p.rhs_canonical);
  EXPECT(same_dims("out", (int64_t[]){p.out_batch[0], p.out_m[0], p.out_n[0]}, DIMS(0, 1, 2), 3), "result dims");
  EXPECT(p.out_rank == 3, "out_rank %d", p.out_rank);
}

TEST(several_free_dims_keep_their_increasing_order) {
  Shape lhs = f32(3, DIMS(2, 6, 3)), rhs = f32(3, DIMS(6, 4, 5));
  DotDims dd = {.lhs_contracting = LIST(1), .rhs_contracting = LIST(0)};
  DotPlan p;
  EXPECT(!dot_plan_make(&dd, &lhs, &rhs, &p), "refused");
  EXPECT(p.m == 6 && p.n == 20 && p.k == 6, "extents %lld %lld %lld", (long long)p.m, (long long)p.n,
         (long long)p.k);
  EXPECT(same_dims("lhs_m", p.lhs_m, DIMS(0, 2), 2) && same_dims("rhs_n", p.rhs_n, DIMS(1, 2), 2), "free dims");
  EXPECT(same_dims("out_n", p.out_n, DIMS(2, 3), 2), "out_n");
  EXPECT(same_dims("lhs_order", p.lhs_order, DIMS(0, 2, 1), 3), "lhs order");
  EXPECT(!p.lhs_canonical && p.rhs_canonical, "lhs %d rhs %d", p.lhs_canonical, p.rhs_canonical);
}

TEST(dimension_numbers_that_do_not_fit_are_refused_with_a_reason) {
  Shape lhs = f32(2, DIMS(2, 3)), rhs = f32(2, DIMS(3, 4));
  DotPlan p;
  DotDims counts = {.lhs_contracting = LIST(1), .rhs_contracting = LIST(0, 1)};
  DotDims twice = {.lhs_batch = LIST(1), .rhs_batch = LIST(0), .lhs_contracting = LIST(1), .rhs_contracting = LIST(1)};
  DotDims range = {.lhs_contracting = LIST(2), .rhs_contracting = LIST(0)};
  DotDims sizes = {.lhs_contracting = LIST(0), .rhs_contracting = LIST(0)};
  const char *why = dot_plan_make(&counts, &lhs, &rhs, &p);
  EXPECT(why && strstr(why, "different numbers"), "counts: %s", why ? why : "(accepted)");
  why = dot_plan_make(&twice, &lhs, &rhs, &p);
  EXPECT(why && strstr(why, "named twice"), "twice: %s", why ? why : "(accepted)");
  why = dot_plan_make(&range, &lhs, &rhs, &p);
  EXPECT(why && strstr(why, "out of range"), "range: %s", why ? why : "(accepted)");
  why = dot_plan_make(&sizes, &lhs, &rhs, &p);
  EXPECT(why && strstr(why, "differs in size"), "sizes: %s", why ? why : "(accepted)");
}

/* ragged-dot, lhs [4,6] with dim 1 ragged and contracting: one partial
 * sum per group, the group dim first in the result [G, 4, 3]. */
TEST(a_ragged_contracting_dim_puts_the_group_dim_first) {
  Shape lhs = f32(2, DIMS(4, 6)), rhs = f32(2, DIMS(6, 3));
  DotDims dd = {.lhs_contracting = LIST(1), .rhs_contracting = LIST(0), .lhs_ragged = LIST(1)};
  DotPlan p;
  EXPECT(!dot_plan_make(&dd, &lhs, &rhs, &p), "refused");
  EXPECT(p.ragged == DOT_RAGGED_SUMS && p.ragged_index == 0 && p.out_first == 1, "ragged %d index %d first %d",
         p.ragged, p.ragged_index, p.out_first);
  EXPECT(p.out_m[0] == 1 && p.out_n[0] == 2 && p.out_rank == 3, "out_m %lld out_n %lld rank %d",
         (long long)p.out_m[0], (long long)p.out_n[0], p.out_rank);
}

/* ragged-dot, lhs [4,6] with free dim 0 ragged, rhs [G=2,6,3] with group
 * dim 0: the group dim is in no group, so N is rhs dim 2 alone. */
TEST(a_ragged_free_dim_leaves_the_rhs_group_dim_out_of_every_group) {
  Shape lhs = f32(2, DIMS(4, 6)), rhs = f32(3, DIMS(2, 6, 3));
  DotDims dd = {.lhs_contracting = LIST(1), .rhs_contracting = LIST(1), .lhs_ragged = LIST(0),
                .rhs_group = LIST(0)};
  DotPlan p;
  EXPECT(!dot_plan_make(&dd, &lhs, &rhs, &p), "refused");
  EXPECT(p.ragged == DOT_RAGGED_ROWS && p.ragged_index == 0 && p.rhs_group_dim == 0, "ragged %d index %d group %lld",
         p.ragged, p.ragged_index, (long long)p.rhs_group_dim);
  EXPECT(p.n_count == 1 && p.rhs_n[0] == 2 && p.n == 3 && p.out_rank == 2, "n_count %d rhs_n %lld n %lld rank %d",
         p.n_count, (long long)p.rhs_n[0], (long long)p.n, p.out_rank);
  EXPECT(!p.rhs_canonical, "an rhs with a group dim is not canonical");
}

/* f32[2,3,4] row-major: strides 12, 4, 1. Column-major ({0,1,2}):
 * strides 1, 2, 6. */
TEST(dims_merge_into_one_stride_only_when_evenly_spaced) {
  Shape s = f32(3, DIMS(2, 3, 4));
  int64_t extent, stride;
  EXPECT(dot_dims_merge(&s, DIMS(1, 2), 2, &extent, &stride) && extent == 12 && stride == 1, "{1,2}: %lld %lld",
         (long long)extent, (long long)stride);
  EXPECT(dot_dims_merge(&s, DIMS(0, 1), 2, &extent, &stride) && extent == 6 && stride == 4, "{0,1}: %lld %lld",
         (long long)extent, (long long)stride);
  EXPECT(!dot_dims_merge(&s, DIMS(2, 1), 2, &extent, &stride), "{2,1} merged");
  Shape column = s;
  column.minor_to_major[0] = 0, column.minor_to_major[1] = 1, column.minor_to_major[2] = 2;
  EXPECT(dot_dims_merge(&column, DIMS(2, 1), 2, &extent, &stride) && extent == 12 && stride == 2,
         "column-major {2,1}: %lld %lld", (long long)extent, (long long)stride);
  Shape unit = f32(3, DIMS(3, 1, 4));
  EXPECT(dot_dims_merge(&unit, DIMS(0, 1, 2), 3, &extent, &stride) && extent == 12 && stride == 1,
         "a dim of extent 1 is skipped: %lld %lld", (long long)extent, (long long)stride);
}

int main(void) {
  RUN(a_matrix_product_is_one_m_n_and_k_dim_already_canonical);
  RUN(batch_last_and_contracting_first_are_grouped_in_list_order);
  RUN(several_free_dims_keep_their_increasing_order);
  RUN(dimension_numbers_that_do_not_fit_are_refused_with_a_reason);
  RUN(a_ragged_contracting_dim_puts_the_group_dim_first);
  RUN(a_ragged_free_dim_leaves_the_rhs_group_dim_out_of_every_group);
  RUN(dims_merge_into_one_stride_only_when_evenly_spaced);
  return test_summary();
}
