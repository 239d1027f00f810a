/* The products of dots and convolutions that the GEMM cannot read where
 * they lie: operands of another type than f32, dimensions whose strides do
 * not merge, convolution windows, scaled-dot's scales, ragged-dot's groups.
 * A CPU_STEP_CALL routine gathers the operands into contiguous batches of
 * matrices A[b][M][K] and B[b][K][N] in the arithmetic of the result (the
 * evaluator's rules, eval_linalg.c), multiplies them (the blocked GEMM for
 * f32 and narrower floats; a plain row-by-row loop in C for f64, integers
 * and complex numbers) and scatters C[b][M][N] into the result's type and
 * layout. An operand or result that is f32 and evenly spaced after all is
 * left where it lies for the GEMM (in_place_choose); a convolution's A in
 * f32 is never stored, the GEMM's packing reads it (ProductPlan.pack_a).
 *
 * Where an element lies is a sum of one offset per axis: offset(b, i, k) =
 * batch[b] + row[i] + column[k], each table precomputed at compile time
 * from the operand's layout. A convolution's A (its input patches, which
 * padding and dilation make not separable) comes from cpu_conv.c instead
 * (ProductPlan.gather_a, pack_a).
 *
 * Arithmetic, as eval_linalg.c defines it:
 *   f32, f16, bf16, f8 results  operands rounded to the result type (exact
 *                               in float), products summed in f32 by the GEMM
 *                               (the evaluator sums in double: results agree
 *                               to rounding), the sum rounded to the result
 *   f64                         summed in double
 *   integers, pred              operands as integers (floats converted with
 *                               saturation), sums wrapping modulo 2^64, then
 *                               truncated to the result: exact
 *   c64, c128                   double complex, parts rounded to the type
 * Every element of C is summed in K order by one task: the bits do not
 * depend on the thread count. */
#include "complex_compat.h"
#include <math.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"

static int arithmetic_bytes(ProductArithmetic a) {
  switch (a) {
  case PRODUCT_F32: return 4;
  case PRODUCT_F64: return 8;
  case PRODUCT_INTEGER: return 8;
  case PRODUCT_COMPLEX: return 16;
  }
  return 8;
}

ProductArithmetic product_arithmetic_of(ElementType result) {
  if (type_is_complex(result)) return PRODUCT_COMPLEX;
  if (!type_is_float(result)) return PRODUCT_INTEGER;
  return result == TYPE_F64 ? PRODUCT_F64 : PRODUCT_F32;
}

/* ---- elements ---- */

/* A buffer read and written through the literal accessors, which know
 * every element type; offsets count elements in the buffer's layout. */
static Literal buffer_view(ElementType type, const void *data) {
  return (Literal){.shape = {.type = type}, .data = (void *)data};
}

/* A real value v (an operand times its scale) into dst[at], in the
 * arithmetic of the plan's result, as an f64 operand would be loaded. */
static void value_load(const ProductPlan *p, double v, void *dst, int64_t at) {
  switch (p->arithmetic) {
  case PRODUCT_F32: ((float *)dst)[at] = (float)float_round_to_type(v, p->result_type); break;
  case PRODUCT_F64: ((double *)dst)[at] = v; break;
  case PRODUCT_INTEGER: ((uint64_t *)dst)[at] = float_convert_to_integer(v, p->result_type); break;
  case PRODUCT_COMPLEX:
    ((double *)dst)[2 * at] = float_round_to_type(v, type_complex_component(p->result_type));
    ((double *)dst)[2 * at + 1] = 0;
    break;
  }
}

/* Element `offset` of src (of type from) into dst[at], in the arithmetic of
 * the plan's result. */
void product_element_load(const ProductPlan *p, ElementType from, const void *src, int64_t offset, void *dst,
                          int64_t at) {
  if (p->arithmetic == PRODUCT_F32 && from == TYPE_F32 && p->result_type == TYPE_F32) {
    ((float *)dst)[at] = ((const float *)src)[offset];
    return;
  }
  Literal view = buffer_view(from, src);
  switch (p->arithmetic) {
  case PRODUCT_F32: ((float *)dst)[at] = (float)float_round_to_type(literal_get_f64(&view, offset), p->result_type); break;
  case PRODUCT_F64: ((double *)dst)[at] = literal_get_f64(&view, offset); break;
  case PRODUCT_INTEGER:
    ((uint64_t *)dst)[at] = type_is_float(from) ? float_convert_to_integer(literal_get_f64(&view, offset), p->result_type)
                                                : (uint64_t)literal_get_s64(&view, offset);
    break;
  case PRODUCT_COMPLEX: {
    double _Complex z = literal_get_complex(&view, offset);
    ElementType part = type_complex_component(p->result_type);
    ((double *)dst)[2 * at] = float_round_to_type(creal(z), part);
    ((double *)dst)[2 * at + 1] = float_round_to_type(cimag(z), part);
    break;
  }
  }
}

/* src[at], a sum in the plan's arithmetic, into element `offset` of dst. */
static void element_store(const ProductPlan *p, const void *src, int64_t at, void *dst, int64_t offset) {
  if (p->arithmetic == PRODUCT_F32 && p->result_type == TYPE_F32) {
    ((float *)dst)[offset] = ((const float *)src)[at];
    return;
  }
  Literal view = buffer_view(p->result_type, dst);
  switch (p->arithmetic) {
  case PRODUCT_F32:
    if (p->result_type == TYPE_F32) ((float *)dst)[offset] = ((const float *)src)[at];
    else literal_set_f64(&view, offset, ((const float *)src)[at]);
    break;
  case PRODUCT_F64: literal_set_f64(&view, offset, ((const double *)src)[at]); break;
  case PRODUCT_INTEGER: literal_set_s64(&view, offset, (int64_t)((const uint64_t *)src)[at]); break;
  case PRODUCT_COMPLEX: {
    const double *z = src;
    literal_set_complex(&view, offset, CMPLX(z[2 * at], z[2 * at + 1]));
    break;
  }
  }
}

/* ---- tables ---- */

int64_t *product_offset_table_create(const Shape *s, const int64_t *dims, int n, int64_t *count) {
  int64_t strides[AXLE_MAX_RANK], extents[AXLE_MAX_RANK], index[AXLE_MAX_RANK] = {0};
  shape_layout_strides(s, strides);
  *count = 1;
  for (int i = 0; i < n; i++) *count *= (extents[i] = s->dims[dims[i]]);
  int64_t *table = mem_calloc((size_t)*count + 1, sizeof *table);
  for (int64_t at = 0; at < *count; at++) {
    for (int i = 0; i < n; i++) table[at] += index[i] * strides[dims[i]];
    for (int i = n - 1; i >= 0 && ++index[i] == extents[i]; i--) index[i] = 0;
  }
  return table;
}

void product_plan_free(void *state) {
  ProductPlan *p = state;
  if (!p) return;
  for (int i = 0; i < 3; i++) {
    mem_free(p->a[i]);
    mem_free(p->b[i]);
    mem_free(p->c[i]);
    mem_free(p->a_scale[i]);
    mem_free(p->b_scale[i]);
  }
  mem_free(p->ragged.coord);
  mem_free(p->ragged.prefix);
  mem_free(p->ragged.sizes_row_offset);
  kernel_x86_free(p->epilogue);
  if (p->gather_free) p->gather_free(p->gather_context);
  mem_free(p);
}

/* ---- running ---- */

typedef struct ProductRun {
  const ProductPlan *plan;
  const void *lhs, *rhs, *lhs_scale, *rhs_scale;
  void *out;
  char *a, *b, *c;   /* the contiguous batches, in the plan's arithmetic */
  /* ragged-dot: group[row * ragged_extent + r], the group of ragged
   * coordinate r for row `row` of group_sizes (-1: past the last group),
   * and the group this pass computes. */
  int64_t *group;
  int64_t pass;
  /* The epilogue's buffers, and whether it runs after the whole product
   * rather than per block: the GEMM split the columns, or the plan's fix
   * must come first. */
  void *const *kernel_buffers;
  atomic_bool deferred;
  bool fixed;  /* the plan's fix runs on this product's result */
} ProductRun;

/* Element `offset` of an operand, times its scale when the plan has one. */
static void operand_load(const ProductRun *r, int side, int64_t offset, int64_t scale_offset, void *dst, int64_t at) {
  const ProductPlan *p = r->plan;
  ElementType type = side == 0 ? p->lhs_type : p->rhs_type;
  const void *x = side == 0 ? r->lhs : r->rhs, *scale = side == 0 ? r->lhs_scale : r->rhs_scale;
  if (!scale) {
    product_element_load(p, type, x, offset, dst, at);
    return;
  }
  Literal xv = buffer_view(type, x), sv = buffer_view(p->scale_type[side], scale);
  value_load(p, literal_get_f64(&xv, offset) * literal_get_f64(&sv, scale_offset), dst, at);
}

/* The group of row i (ROWS) or column k (SUMS) `at` in batch `batch`. */
static int64_t group_find(const ProductRun *r, int64_t batch, int64_t at) {
  const RaggedPlan *rp = &r->plan->ragged;
  int64_t row = rp->prefix ? batch * rp->prefix_rows + rp->prefix[at] : 0;
  return r->group[row * rp->extent + rp->coord[at]];
}

/* Gathers and scatters run in tasks of BLOCK_ROWS rows of one batch
 * entry; inside a block, columns go outermost when the operand's columns
 * lie further apart than its rows (a transposed operand), so that memory
 * is walked nearly in order either way. */
enum { BLOCK_ROWS = 16 };

typedef struct RowBlock {
  int64_t batch, first, end;
} RowBlock;

static int64_t row_block_count(int64_t batch, int64_t rows) { return batch * ((rows + BLOCK_ROWS - 1) / BLOCK_ROWS); }

static RowBlock row_block_of(int64_t index, int64_t rows) {
  int64_t per_batch = (rows + BLOCK_ROWS - 1) / BLOCK_ROWS;
  RowBlock b = {.batch = index / per_batch, .first = index % per_batch * BLOCK_ROWS};
  b.end = b.first + BLOCK_ROWS < rows ? b.first + BLOCK_ROWS : rows;
  return b;
}

/* Whether columns lie further apart than rows in a table pair. */
static bool columns_are_outer(const int64_t *rows, int64_t row_count, const int64_t *columns, int64_t column_count) {
  int64_t row_step = row_count > 1 ? rows[1] - rows[0] : 0, column_step = column_count > 1 ? columns[1] - columns[0] : 0;
  return llabs(column_step) > llabs(row_step);
}

/* A[batch][i][k]; on a ragged-dot's contracting groups only the columns
 * of this pass's group (the rest stay 0). */
static inline void a_gather_one(const ProductRun *r, int64_t batch, int64_t i, int64_t k) {
  const ProductPlan *p = r->plan;
  if (p->ragged.mode == RAGGED_SUMS && group_find(r, batch, k) != r->pass) return;
  int64_t scale = p->a_scale[0] ? p->a_scale[0][batch] + p->a_scale[1][i] + p->a_scale[2][k] : 0;
  operand_load(r, 0, p->a[0][batch] + p->a[1][i] + p->a[2][k], scale, r->a, (batch * p->m + i) * p->k + k);
}

static void a_gather_task(void *context, int64_t index) {
  const ProductRun *r = context;
  const ProductPlan *p = r->plan;
  RowBlock b = row_block_of(index, p->m);
  if (columns_are_outer(p->a[1], p->m, p->a[2], p->k)) {
    for (int64_t k = 0; k < p->k; k++)
      for (int64_t i = b.first; i < b.end; i++) a_gather_one(r, b.batch, i, k);
  } else {
    for (int64_t i = b.first; i < b.end; i++)
      for (int64_t k = 0; k < p->k; k++) a_gather_one(r, b.batch, i, k);
  }
}

/* B[batch][k][j]; on a ragged-dot's row groups, from this pass's group's rhs. */
static inline void b_gather_one(const ProductRun *r, int64_t batch, int64_t k, int64_t j) {
  const ProductPlan *p = r->plan;
  int64_t at = p->b[0][batch] + p->b[1][k] + p->b[2][j];
  if (p->ragged.mode == RAGGED_ROWS) at += r->pass * p->ragged.group_stride;
  int64_t scale = p->b_scale[0] ? p->b_scale[0][batch] + p->b_scale[1][k] + p->b_scale[2][j] : 0;
  operand_load(r, 1, at, scale, r->b, (batch * p->k + k) * p->n + j);
}

static void b_gather_task(void *context, int64_t index) {
  const ProductRun *r = context;
  const ProductPlan *p = r->plan;
  RowBlock b = row_block_of(index, p->k);
  if (columns_are_outer(p->b[1], p->k, p->b[2], p->n)) {
    for (int64_t j = 0; j < p->n; j++)
      for (int64_t k = b.first; k < b.end; k++) b_gather_one(r, b.batch, k, j);
  } else {
    for (int64_t k = b.first; k < b.end; k++)
      for (int64_t j = 0; j < p->n; j++) b_gather_one(r, b.batch, k, j);
  }
}

/* C[batch][i][j] into the result: on a ragged-dot's row groups only rows
 * of this pass's group, on its contracting groups into this pass's group
 * of the result. */
static inline void c_scatter_one(const ProductRun *r, int64_t batch, int64_t i, int64_t j) {
  const ProductPlan *p = r->plan;
  int64_t at = p->c[0][batch] + p->c[1][i] + p->c[2][j];
  if (p->ragged.mode == RAGGED_ROWS && group_find(r, batch, i) != r->pass) return;
  if (p->ragged.mode == RAGGED_SUMS) at += r->pass * p->ragged.group_stride;
  element_store(p, r->c, (batch * p->m + i) * p->n + j, r->out, at);
}

static void c_scatter_task(void *context, int64_t index) {
  const ProductRun *r = context;
  const ProductPlan *p = r->plan;
  RowBlock b = row_block_of(index, p->m);
  if (columns_are_outer(p->c[1], p->m, p->c[2], p->n)) {
    for (int64_t j = 0; j < p->n; j++)
      for (int64_t i = b.first; i < b.end; i++) c_scatter_one(r, b.batch, i, j);
  } else {
    for (int64_t i = b.first; i < b.end; i++)
      for (int64_t j = 0; j < p->n; j++) c_scatter_one(r, b.batch, i, j);
  }
}

/* Task (batch, row) of C = A·B outside the GEMM: row i of C summed over k
 * in order, each k adding A[i][k] times row k of B. */
static void row_multiply_task(void *context, int64_t index) {
  const ProductRun *r = context;
  const ProductPlan *p = r->plan;
  int64_t batch = index / p->m, n = p->n, k_count = p->k;
  int64_t a_row = index * k_count, b_base = batch * k_count * n, c_row = index * n;
  if (p->arithmetic == PRODUCT_F64) {
    const double *a = (const double *)r->a + a_row, *b = (const double *)r->b + b_base;
    double *c = (double *)r->c + c_row;
    for (int64_t j = 0; j < n; j++) c[j] = 0;
    for (int64_t k = 0; k < k_count; k++)
      for (int64_t j = 0; j < n; j++) c[j] += a[k] * b[k * n + j];
  } else if (p->arithmetic == PRODUCT_INTEGER) {
    const uint64_t *a = (const uint64_t *)r->a + a_row, *b = (const uint64_t *)r->b + b_base;
    uint64_t *c = (uint64_t *)r->c + c_row;
    for (int64_t j = 0; j < n; j++) c[j] = 0;
    for (int64_t k = 0; k < k_count; k++)
      for (int64_t j = 0; j < n; j++) c[j] += a[k] * b[k * n + j];
  } else {
    /* (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br) */
    const double *a = (const double *)r->a + 2 * a_row, *b = (const double *)r->b + 2 * b_base;
    double *c = (double *)r->c + 2 * c_row;
    for (int64_t j = 0; j < 2 * n; j++) c[j] = 0;
    for (int64_t k = 0; k < k_count; k++)
      for (int64_t j = 0; j < n; j++) {
        double ar = a[2 * k], ai = a[2 * k + 1], br = b[2 * (k * n + j)], bi = b[2 * (k * n + j) + 1];
        c[2 * j] += ar * br - ai * bi;
        c[2 * j + 1] += ar * bi + ai * br;
      }
  }
}

static void a_pack_run(void *context, int64_t batch, int64_t row0, int rows, int width, int64_t k0, int64_t depth,
                       float *dst) {
  const ProductRun *r = context;
  r->plan->pack_a(r->plan, r->lhs, batch, row0, rows, width, k0, depth, dst);
}

static void b_pack_run(void *context, int64_t batch, int64_t col0, int cols, int width, int64_t k0, int64_t depth,
                       float *dst) {
  const ProductRun *r = context;
  r->plan->pack_b(r->plan, r->rhs, batch, col0, cols, width, k0, depth, dst);
}

/* Whether A goes to the GEMM panel by panel, never stored whole. */
static bool a_is_packed(const ProductPlan *p) { return p->pack_a && p->arithmetic == PRODUCT_F32; }

/* GEMM rows are kernel rows: a block spanning every column is final. */
static void epilogue_block_finish(void *context, int64_t batch, int64_t row0, int64_t rows, int64_t col0,
                                  int64_t cols) {
  ProductRun *r = context;
  (void)batch;  /* one batch: product_step_take_epilogue */
  if (col0 != 0 || cols != r->plan->n) atomic_store(&r->deferred, true);
  else kernel_x86_run_rows(r->plan->epilogue, r->kernel_buffers, row0, rows);
}

static void product_multiply(const ProductPlan *p, ThreadPool *pool, ProductRun *r) {
  if (p->arithmetic != PRODUCT_F32) {
    thread_pool_run(pool, p->batch * p->m, row_multiply_task, r);
    return;
  }
  GemmProblem g = {
    .batch = p->batch, .m = p->m, .n = p->n, .k = p->k,
    .a = (const float *)r->a, .a_row_stride = p->k, .a_col_stride = 1, .a_batch_stride = p->m * p->k,
    .b = (const float *)r->b, .b_row_stride = p->n, .b_col_stride = 1, .b_batch_stride = p->k * p->n,
    .c = (float *)r->c, .c_row_stride = p->n, .c_batch_stride = p->m * p->n,
  };
  if (p->in_place[0]) {
    g.a = (const float *)r->lhs + p->a[0][0] + p->a[1][0] + p->a[2][0];
    g.a_batch_stride = p->strides[0][0];
    g.a_row_stride = p->strides[0][1];
    g.a_col_stride = p->strides[0][2];
  }
  if (p->in_place[1]) {
    g.b = (const float *)r->rhs + p->b[0][0] + p->b[1][0] + p->b[2][0];
    g.b_batch_stride = p->strides[1][0];
    g.b_row_stride = p->strides[1][1];
    g.b_col_stride = p->strides[1][2];
  }
  if (p->in_place[2]) {
    g.c = (float *)r->out + p->c[0][0] + p->c[1][0] + p->c[2][0];
    g.c_batch_stride = p->strides[2][0];
    g.c_row_stride = p->strides[2][1];
  }
  if (a_is_packed(p)) {
    g.a = NULL;
    g.a_pack = a_pack_run;
    g.a_pack_context = r;
  }
  if (p->pack_b) {
    g.b = NULL;
    g.b_pack = b_pack_run;
    g.b_pack_context = r;
  }
  GemmEpilogue hook = {.finish_block = epilogue_block_finish, .context = r};
  gemm_f32_batched(p->gemm, pool, &g, p->epilogue && !r->fixed ? &hook : NULL);
}

/* Contiguous space for count elements of the arithmetic, or NULL. */
static char *batch_allocate(const ProductPlan *p, int64_t count) {
  double bytes = (double)count * arithmetic_bytes(p->arithmetic);
  if (bytes > (double)(INT64_MAX / 2)) return NULL;
  return mem_malloc((size_t)bytes + 64);
}

/* The group of every ragged coordinate, for every row of group_sizes:
 * groups take group_sizes[row][g] consecutive coordinates in turn. */
static int64_t *group_table_create(const ProductPlan *p, const void *sizes) {
  const RaggedPlan *rp = &p->ragged;
  Literal view = buffer_view(rp->sizes_type, sizes);
  int64_t *table = mem_malloc((size_t)(rp->rows * rp->extent + 1) * sizeof *table);
  for (int64_t row = 0; table && row < rp->rows; row++) {
    int64_t first = rp->sizes_row_offset[row], stride = rp->sizes_group_stride;
    int64_t g = 0, end = rp->groups > 0 ? literal_get_s64(&view, first) : 0;
    for (int64_t at = 0; at < rp->extent; at++) {
      while (g < rp->groups && at >= end && ++g < rp->groups)
        end = s64_add_saturating(end, literal_get_s64(&view, first + g * stride));
      table[row * rp->extent + at] = g < rp->groups ? g : -1;
    }
  }
  return table;
}

/* One pass per ragged group (one pass for any other product): gather,
 * multiply, scatter. A is gathered once unless the pass masks it. */
static void product_passes(const ProductPlan *p, ThreadPool *pool, ProductRun *r) {
  int64_t passes = p->ragged.mode == RAGGED_NONE ? 1 : p->ragged.groups;
  size_t a_bytes = (size_t)(p->batch * p->m * p->k * arithmetic_bytes(p->arithmetic));
  if (p->ragged.mode == RAGGED_ROWS) memset(r->out, 0, (size_t)p->ragged.result_bytes);  /* rows in no group */
  for (r->pass = 0; r->pass < passes; r->pass++) {
    if (!a_is_packed(p) && !p->in_place[0] && (r->pass == 0 || p->ragged.mode == RAGGED_SUMS)) {
      /* Zero bits are zero in every arithmetic: what a gather skips. */
      memset(r->a, 0, a_bytes);
      if (p->gather_a) p->gather_a(p, r->lhs, r->a, pool);
      else thread_pool_run(pool, row_block_count(p->batch, p->m), a_gather_task, r);
    }
    if (!p->in_place[1] && !p->pack_b && (r->pass == 0 || p->ragged.mode == RAGGED_ROWS))
      thread_pool_run(pool, row_block_count(p->batch, p->k), b_gather_task, r);
    product_multiply(p, pool, r);
    if (!p->in_place[2]) thread_pool_run(pool, row_block_count(p->batch, p->m), c_scatter_task, r);
  }
}

/* The CPU_STEP_CALL routine: buffers are lhs, rhs, result, then
 * scaled-dot's two scales or ragged-dot's group sizes. */
static bool product_call(const CpuStep *s, void *const *buffers, ThreadPool *pool, Status *st) {
  const ProductPlan *p = s->state;
  ProductRun r = {.plan = p, .lhs = buffers[0], .rhs = buffers[1], .out = buffers[2], .kernel_buffers = buffers + 3};
  atomic_init(&r.deferred, false);
  if (p->batch == 0 || p->m == 0 || p->n == 0) return true;
  if (p->a_scale[0]) {
    r.lhs_scale = buffers[3];
    r.rhs_scale = buffers[4];
  }
  r.a = batch_allocate(p, a_is_packed(p) || p->in_place[0] ? 0 : p->batch * p->m * p->k);
  r.b = batch_allocate(p, p->in_place[1] || p->pack_b ? 0 : p->batch * p->k * p->n);
  r.c = batch_allocate(p, p->in_place[2] ? 0 : p->batch * p->m * p->n);
  if (p->ragged.mode != RAGGED_NONE) r.group = group_table_create(p, buffers[3]);
  bool ok = r.a && r.b && r.c && (p->ragged.mode == RAGGED_NONE || r.group);
  r.fixed = ok && p->fix && p->fix_needed(p, r.lhs, r.rhs);
  if (ok) product_passes(p, pool, &r);
  if (r.fixed) p->fix(p, r.lhs, r.rhs, r.out, pool);
  if (ok && p->epilogue && (r.fixed || atomic_load(&r.deferred))) kernel_x86_run(p->epilogue, r.kernel_buffers, pool);
  else status_error(st, STATUS_OUT_OF_MEMORY, "out of memory: the operands of %s gathered for its product", s->inst->name);
  mem_free(r.a);
  mem_free(r.b);
  mem_free(r.c);
  mem_free(r.group);
  return ok;
}

/* Whether table t (count offsets) is evenly spaced; its spacing in
 * *stride (`single` for a table of one offset, where any stride serves). */
static bool table_is_even(const int64_t *t, int64_t count, int64_t single, int64_t *stride) {
  *stride = count > 1 ? t[1] - t[0] : single;
  for (int64_t i = 2; i < count; i++)
    if (t[i] - t[i - 1] != *stride) return false;
  return true;
}

/* Which of A, B and C the GEMM can use where they lie: f32 in f32
 * arithmetic, evenly spaced on every axis, nothing applied on the way (no
 * scale, no ragged groups, no patches); C's columns must be contiguous and
 * its rows must not overlap. */
static void in_place_choose(ProductPlan *p) {
  bool plain = p->arithmetic == PRODUCT_F32 && p->ragged.mode == RAGGED_NONE && !p->a_scale[0];
  int64_t counts[3][3] = {{p->batch, p->m, p->k}, {p->batch, p->k, p->n}, {p->batch, p->m, p->n}};
  ElementType types[3] = {p->lhs_type, p->rhs_type, p->result_type};
  int64_t *const *tables[3] = {p->a, p->b, p->c};
  for (int o = 0; o < 3; o++) {
    bool even = plain && types[o] == TYPE_F32 && !(o == 0 && (p->gather_a || p->pack_a)) && !(o == 1 && p->pack_b);
    for (int axis = 0; axis < 3 && even; axis++)
      even = table_is_even(tables[o][axis], counts[o][axis], axis == 1 && o == 2 ? p->n : 0, &p->strides[o][axis]);
    if (o == 2) even = even && p->strides[2][2] == 1 && (p->m <= 1 || p->strides[2][1] >= p->n);
    p->in_place[o] = even;
  }
}

bool product_step_add(CpuCompile *c, const Instruction *inst, ProductPlan *plan, int lhs, int rhs, int out) {
  in_place_choose(plan);
  int extra[2] = {-1, -1}, extra_count = plan->a_scale[0] ? 2 : plan->ragged.mode != RAGGED_NONE ? 1 : 0;
  for (int i = 0; i < extra_count; i++) {
    extra[i] = cpu_binding_of(c, inst->operands[2 + i], 0);
    if (extra[i] < 0) lhs = -1;
  }
  if (lhs < 0 || rhs < 0 || out < 0) {
    product_plan_free(plan);
    return cpu_refuse(c, inst, "a product operand the plan does not place");
  }
  if (!c->p->gemm) {
    c->p->gemm = gemm_plan_create(&c->p->cpu, c->st);
    if (!c->p->gemm) {
      product_plan_free(plan);
      return false;
    }
  }
  plan->gemm = c->p->gemm;
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_CALL, inst, 3 + extra_count);
  s->call = product_call;
  s->state = plan;
  s->free_state = product_plan_free;
  s->buffers[0] = lhs;
  s->buffers[1] = rhs;
  s->buffers[2] = out;
  for (int i = 0; i < extra_count; i++) s->buffers[3 + i] = extra[i];
  return true;
}

bool product_step_take_epilogue(CpuStep *product_step, CpuStep *kernel_step) {
  ProductPlan *p = product_step->state;
  /* With packed B (a convolution whose columns are output positions) the
   * GEMM's rows are not the epilogue's rows. */
  if (product_step->call != product_call || p->epilogue || p->batch != 1 || p->arithmetic != PRODUCT_F32 || p->pack_b ||
      p->ragged.mode != RAGGED_NONE || !p->in_place[2] || product_step->buffer_count != 3)
    return false;
  int *buffers = mem_calloc((size_t)(3 + kernel_step->buffer_count) + 1, sizeof *buffers);
  memcpy(buffers, product_step->buffers, 3 * sizeof *buffers);
  memcpy(buffers + 3, kernel_step->buffers, (size_t)kernel_step->buffer_count * sizeof *buffers);
  mem_free(product_step->buffers);
  mem_free(kernel_step->buffers);
  product_step->buffers = buffers;
  product_step->buffer_count += kernel_step->buffer_count;
  p->epilogue = kernel_step->kernel;
  kernel_step->kernel = NULL;
  kernel_step->buffers = NULL;
  return true;
}
