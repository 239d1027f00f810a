/* kernel_access_form on hand-built kernels: how a load or store moves
 * along the index a vector loop walks, the one answer both code
 * generators read (kernel_analysis.c). Each kernel is the smallest that
 * shows one rule. */
#include "ir.h"
#include "ir/kernel/kernel.h"
#include "../test.h"

static int add_op(Kernel *k, KernelOp op) { return kernel_add_op(k, &op); }

static int index_op(Kernel *k, int dim) { return add_op(k, (KernelOp){.kop = KOP_INDEX, .type = TYPE_S64, .dim = dim}); }

static int constant_op(Kernel *k, int64_t v) {
  return add_op(k, (KernelOp){.kop = KOP_CONSTANT, .type = TYPE_S64, .value.i = v});
}

static int plus(Kernel *k, int a, int b) {
  return add_op(k, (KernelOp){.kop = KOP_HLO, .op = OP_ADD, .type = TYPE_S64, .arg_count = 2, .args = {a, b}});
}

static int load2(Kernel *k, int buffer, int i0, int i1) {
  return add_op(k, (KernelOp){.kop = KOP_LOAD, .type = TYPE_F32, .buffer = buffer, .arg_count = 2, .args = {i0, i1}});
}

/* A loop kernel over [rows, cols] (row-major output). */
static Kernel *loop_kernel(int64_t rows, int64_t cols) {
  Kernel *k = kernel_create("access", NULL, KERNEL_LOOP);
  k->rank = 2;
  k->dims[0] = rows, k->dims[1] = cols;
  Shape out = shape_array(TYPE_F32, 2, k->dims);
  kernel_add_output(k, &out, NULL, 0);
  return k;
}

static int add_input(Kernel *k, int64_t d0, int64_t d1, bool transposed) {
  int64_t dims[2] = {d0, d1};
  Shape s = shape_array(TYPE_F32, 2, dims);
  if (transposed) s.minor_to_major[0] = 0, s.minor_to_major[1] = 1, s.has_layout = true;
  return kernel_add_input(k, &s, NULL, NULL);
}

static void expect_form(int line, const Kernel *k, int op, int walk_dim, KernelAccessKind kind, int dim, int64_t offset) {
  KernelAccessForm f = kernel_access_form(k, op, walk_dim);
  EXPECT(f.kind == kind && f.dim == dim && f.offset == offset,
         "line %d: op %%%d along dim %d: kind %d dim %d offset %lld, want kind %d dim %d offset %lld", line, op,
         walk_dim, f.kind, f.dim, (long long)f.offset, kind, dim, (long long)offset);
}

/* x[row, col + 256] (an LSTM gate's slice of its row): contiguous along
 * col at offset 256, whichever side of the add the constant is on. */
TEST(a_load_at_the_inner_index_plus_a_constant_is_contiguous_with_that_offset) {
  Kernel *k = loop_kernel(4, 256);
  int in = add_input(k, 4, 1024, false), row = index_op(k, 0), col = index_op(k, 1);
  int plain = load2(k, in, row, col);
  int sliced = load2(k, in, row, plus(k, col, constant_op(k, 256)));
  int swapped = load2(k, in, row, plus(k, constant_op(k, 512), col));
  expect_form(__LINE__, k, plain, 1, KACCESS_CONTIGUOUS, 1, 0);
  expect_form(__LINE__, k, sliced, 1, KACCESS_CONTIGUOUS, 1, 256);
  expect_form(__LINE__, k, swapped, 1, KACCESS_CONTIGUOUS, 1, 512);
  kernel_free(k);
}

/* bias[row, 0] of a [rows, 1] buffer, scale[row, 3]: the same element for
 * the whole row. */
TEST(a_load_that_the_inner_index_does_not_reach_is_invariant) {
  Kernel *k = loop_kernel(4, 8);
  int bias = add_input(k, 4, 1, false), scale = add_input(k, 4, 8, false);
  int row = index_op(k, 0);
  int by_row = load2(k, bias, row, constant_op(k, 0));
  int fixed = load2(k, scale, row, constant_op(k, 3));
  expect_form(__LINE__, k, by_row, 1, KACCESS_INVARIANT, -1, 0);
  expect_form(__LINE__, k, fixed, 1, KACCESS_INVARIANT, -1, 0);
  kernel_free(k);
}

/* w[row + 1, col] of a [1, cols] buffer: a dimension of extent 1 has one
 * valid index, 0, so a computed index there keeps the access contiguous. */
TEST(any_index_of_a_dimension_of_extent_one_is_fixed) {
  Kernel *k = loop_kernel(1, 8);
  int w = add_input(k, 1, 8, false), row = index_op(k, 0), col = index_op(k, 1);
  int load = load2(k, w, plus(k, row, constant_op(k, 1)), col);
  expect_form(__LINE__, k, load, 1, KACCESS_CONTIGUOUS, 1, 0);
  kernel_free(k);
}

/* x[col, row] with x row-major walks a strided dimension; the same load of
 * a column-major x is contiguous; x[col, col] walks two dimensions;
 * x[row + 1, col] needs an index computed per row, which a loop kernel
 * does not mark as fixed. */
TEST(transposed_doubly_walked_and_computed_accesses_are_other) {
  Kernel *k = loop_kernel(8, 8);
  int row_major = add_input(k, 8, 8, false), column_major = add_input(k, 8, 8, true);
  int row = index_op(k, 0), col = index_op(k, 1);
  int transposed = load2(k, row_major, col, row);
  int columns = load2(k, column_major, col, row);
  int diagonal = load2(k, row_major, col, col);
  int computed = load2(k, row_major, plus(k, row, constant_op(k, 1)), col);
  expect_form(__LINE__, k, transposed, 1, KACCESS_OTHER, -1, 0);
  expect_form(__LINE__, k, columns, 1, KACCESS_CONTIGUOUS, 0, 0);
  expect_form(__LINE__, k, diagonal, 1, KACCESS_OTHER, -1, 0);
  expect_form(__LINE__, k, computed, 1, KACCESS_OTHER, -1, 0);
  /* along the outer loop index: x[row + 1, col] walks dim 0, strided */
  expect_form(__LINE__, k, computed, 0, KACCESS_OTHER, -1, 0);
  expect_form(__LINE__, k, transposed, 0, KACCESS_CONTIGUOUS, 1, 0);
  kernel_free(k);
}

/* A reduction over [rows, n]: in the REDUCE phase x[row, r] is contiguous
 * along r (the row is a PRE value), x[r, row] is not, a store of the
 * result in POST runs once per row and has no walk. */
TEST(a_reduce_phase_walks_its_own_reduced_index_and_post_has_none) {
  Kernel *k = kernel_create("reduce", NULL, KERNEL_REDUCE);
  k->rank = 1, k->dims[0] = 4;
  k->reduce_rank = 1, k->reduce_dims[0] = 16;
  k->phase_count = 1, k->phase_blocks[0] = KBLOCK_REDUCE;
  k->acc_count = 1, k->acc_types[0] = TYPE_F32;
  int in = add_input(k, 4, 16, false), square = add_input(k, 16, 16, false);
  Shape out = shape_array(TYPE_F32, 1, k->dims);
  kernel_add_output(k, &out, NULL, 0);
  int row = index_op(k, 0);
  int r = add_op(k, (KernelOp){.kop = KOP_RINDEX, .block = KBLOCK_REDUCE, .type = TYPE_S64, .dim = 0});
  int along = add_op(k, (KernelOp){.kop = KOP_LOAD, .block = KBLOCK_REDUCE, .type = TYPE_F32, .buffer = in,
                                   .arg_count = 2, .args = {row, r}});
  int across = add_op(k, (KernelOp){.kop = KOP_LOAD, .block = KBLOCK_REDUCE, .type = TYPE_F32, .buffer = square,
                                    .arg_count = 2, .args = {r, row}});
  int acc = add_op(k, (KernelOp){.kop = KOP_ACC_READ, .block = KBLOCK_POST, .type = TYPE_F32});
  int store = add_op(k, (KernelOp){.kop = KOP_STORE, .block = KBLOCK_POST, .type = TYPE_F32, .arg_count = 2,
                                   .args = {acc, row}});
  expect_form(__LINE__, k, along, 0, KACCESS_CONTIGUOUS, 1, 0);
  expect_form(__LINE__, k, across, 0, KACCESS_OTHER, -1, 0);
  expect_form(__LINE__, k, store, 0, KACCESS_OTHER, -1, 0);
  kernel_free(k);
}

int main(void) {
  RUN(a_load_at_the_inner_index_plus_a_constant_is_contiguous_with_that_offset);
  RUN(a_load_that_the_inner_index_does_not_reach_is_invariant);
  RUN(any_index_of_a_dimension_of_extent_one_is_fixed);
  RUN(transposed_doubly_walked_and_computed_accesses_are_other);
  RUN(a_reduce_phase_walks_its_own_reduced_index_and_post_has_none);
  return test_summary();
}
