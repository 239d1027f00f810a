/* Shape rules for topk, scan, rng, rng-get-and-update-state, and dot's two
 * variants scaled-dot and ragged-dot. The shared checks and the dispatch
 * table are in shape_inference.c. */
#include <string.h>

#include "shape_inference.h"

/* topk(x), k=K: the K largest (or smallest) entries along the last
 * dimension and their s32 indices: (x with last dim K, s32 of those dims). */
bool infer_topk(Infer *in) {
  if (!infer_expect_array(in, 0)) return false;
  const Shape *x = infer_operand_shape(in, 0);
  int64_t k = attrs_scalars(&in->inst->attrs)->k;
  if (x->rank < 1) return infer_fail(in, "needs an operand of rank 1 or more");
  if (x->type == TYPE_PRED) return infer_fail(in, "does not take pred");
  if (k < 0 || k > x->dims[x->rank - 1])
    return infer_fail(in, "k=%lld is out of range for a last dimension of %lld", (long long)k,
                      (long long)x->dims[x->rank - 1]);
  Shape parts[2];
  parts[0] = shape_array(x->type, x->rank, x->dims);
  parts[0].dims[x->rank - 1] = k;
  parts[1] = parts[0];
  parts[1].type = TYPE_S32;
  return infer_set_tuple(in, 2, parts);
}

/* The k-th element of a computation's result: the root itself when it is
 * not a tuple and count is 1. */
static const Shape *result_part(const Shape *root, int count, int k) {
  if (count == 1 && !shape_is_tuple(root)) return root;
  return shape_is_tuple(root) && k < root->tuple_count ? &root->tuple_shapes[k] : NULL;
}

/* scan(inputs..., inits...), dimensions={d}, num_carries=C, to_apply=f:
 * f takes (the inputs' slices at step i..., the carries...) and returns
 * (outputs..., new carries...). The result is (each output stacked along d
 * over the steps..., the final carries...), one array when that is a single
 * one. Steps run along d, backwards when is_reverse. */
bool infer_scan(Infer *in) {
  const Instruction *inst = in->inst;
  int64_t carries = attrs_scalars(&inst->attrs)->num_carries;
  int n = inst->operand_count;
  if (!infer_expect_called_count(in, 1)) return false;
  if (carries < 0 || carries >= n)
    return infer_fail(in, "num_carries=%lld leaves no input", (long long)carries);
  int inputs = n - (int)carries;
  if (inst->attrs.dimensions.count != 1) return infer_fail(in, "dimensions must hold one dimension");
  int64_t d = inst->attrs.dimensions.values[0];
  for (int i = 0; i < n; i++)
    if (!infer_expect_array(in, i)) return false;
  const Shape *x0 = infer_operand_shape(in, 0);
  if (d < 0 || d >= x0->rank) return infer_fail(in, "dimension %lld is out of range", (long long)d);
  int64_t steps = x0->dims[d];
  const Computation *f = inst->called[0];
  if (f->parameter_count != n)
    return infer_fail(in, "'%s' takes %d parameters, expected %d", f->name, f->parameter_count, n);
  for (int i = 0; i < n; i++) {
    Shape want = *infer_operand_shape(in, i);
    if (i < inputs) {
      const Shape *x = infer_operand_shape(in, i);
      if (x->rank <= d || x->dims[d] != steps)
        return infer_fail(in, "input %d has no dimension %lld of size %lld", i, (long long)d,
                          (long long)steps);
      want.rank = x->rank - 1;
      for (int k = (int)d; k < want.rank; k++) want.dims[k] = x->dims[k + 1];
    }
    const Shape *p = infer_param_shape(f, i);
    char ba[128], bb[128];
    if (!p || !shape_equal(p, &want))
      return infer_fail(in, "'%s' parameter %d should be %s, is %s", f->name, i, infer_shape_text(&want, ba),
                        p ? infer_shape_text(p, bb) : "missing");
  }
  const Shape *root = &f->root->shape;
  int parts_count = shape_is_tuple(root) ? root->tuple_count : 1;
  int outputs = parts_count - (int)carries;
  if (outputs < 0 || parts_count > AXLE_MAX_RANK)
    return infer_fail(in, "'%s' returns too few or too many results", f->name);
  Shape *parts = arena_alloc(in->arena, sizeof(Shape) * (size_t)(parts_count > 0 ? parts_count : 1));
  for (int k = 0; k < parts_count; k++) {
    const Shape *r = result_part(root, parts_count, k);
    if (!r || shape_is_tuple(r) || r->type == TYPE_TOKEN)
      return infer_fail(in, "'%s' result %d must be an array", f->name, k);
    parts[k] = *r;
    shape_set_default_layout(&parts[k]);
    if (k >= outputs) {
      if (!shape_equal(r, infer_operand_shape(in, inputs + k - outputs)))
        return infer_fail(in, "'%s' carry result %d does not match its init", f->name, k - outputs);
      continue;
    }
    if (r->rank + 1 > AXLE_MAX_RANK || d > r->rank)
      return infer_fail(in, "output %d cannot take dimension %lld", k, (long long)d);
    parts[k].rank = r->rank + 1;
    for (int j = parts[k].rank - 1; j > d; j--) parts[k].dims[j] = r->dims[j - 1];
    parts[k].dims[d] = steps;
    shape_set_default_layout(&parts[k]);
  }
  if (parts_count == 1) return infer_set_same_as(in, &parts[0]);
  return infer_set_tuple(in, parts_count, parts);
}

/* rng(a, b), distribution=...: an array of the declared shape, of a's and
 * b's type; uniform takes floats or integers, normal floats only. */
bool infer_rng(Infer *in) {
  const Shape *decl = &in->inst->shape;
  /* A third operand, the result's dimensions as a rank-1 integer array,
   * comes from StableHLO's rng(a, b, shape) (XLA's rng_expander tests write
   * it). The declared shape is the result's, as in XLA; the operand's
   * values are not read. XLA's verifier takes two operands only; its
   * parser takes any, and its rng expander, which reads a and b alone,
   * converts every operand of an f16 rng to f32, so its test writes the
   * third one in the rng's own type (f16[3]): that type is taken too. */
  if (in->inst->operand_count == 3) {
    const Shape *dims = infer_operand_shape(in, 2), *a = infer_operand_shape(in, 0);
    if (shape_is_tuple(dims) || dims->rank != 1 || !(type_is_integer(dims->type) || dims->type == a->type))
      return infer_fail(in, "the third operand (the result's dimensions) must be a rank-1 array of an integer "
                        "type or of a's and b's");
  } else if (!infer_expect_operand_count(in, 2)) {
    return false;
  }
  if (!infer_expect_scalar(in, 0, "a") ||
      !infer_expect_scalar(in, 1, "b") || !infer_expect_same_type(in, 0, 1))
    return false;
  ElementType t = infer_operand_shape(in, 0)->type;
  if (shape_is_tuple(decl) || decl->type != t)
    return infer_fail(in, "result must be an array of %s", type_name(t));
  bool normal = attrs_scalars(&in->inst->attrs)->distribution == RNG_NORMAL;
  if (normal ? !type_is_float(t) : !(type_is_float(t) || type_is_integer(t)))
    return infer_fail(in, "%s does not take %s", normal ? "rng_normal" : "rng_uniform", type_name(t));
  return infer_set_array(in, t, decl->rank, decl->dims);
}

/* rng-get-and-update-state: the 128-bit generator state as u64[2]. */
bool infer_rng_get_and_update_state(Infer *in) {
  int64_t two = 2;
  return infer_set_array(in, TYPE_U64, 1, &two);
}

/* A scale has its operand's rank; each scale dimension divides the
 * operand's, which is cut into blocks of that many elements. */
static bool check_scale(const Infer *in, int operand, int scale) {
  const Shape *x = infer_operand_shape(in, operand), *s = infer_operand_shape(in, scale);
  if (!infer_expect_array(in, scale)) return false;
  if (!type_is_float(s->type)) return infer_fail(in, "scale %d must be floating point", scale);
  if (s->rank != x->rank) return infer_fail(in, "scale %d must have its operand's rank %d", scale, x->rank);
  for (int d = 0; d < x->rank; d++)
    if (s->dims[d] < 1 || x->dims[d] % s->dims[d] != 0)
      return infer_fail(in, "scale %d dimension %d (%lld) must divide %lld", scale, d, (long long)s->dims[d],
                        (long long)x->dims[d]);
  return true;
}

/* scaled-dot(lhs, rhs, lhs_scale, rhs_scale): dot(lhs * lhs_scale, rhs *
 * rhs_scale), each scale repeated over its blocks; dims as for dot. */
bool infer_scaled_dot(Infer *in) {
  if (!infer_expect_array(in, 0) || !infer_expect_array(in, 1)) return false;
  if (!type_is_float(infer_operand_shape(in, 0)->type) || !type_is_float(infer_operand_shape(in, 1)->type))
    return infer_fail(in, "lhs and rhs must be floating point");
  if (!check_scale(in, 0, 2) || !check_scale(in, 1, 3)) return false;
  Instruction probe = *in->inst; /* dot's rule on lhs and rhs alone */
  probe.operand_count = 2;
  Infer sub = {&probe, in->out, in->arena, in->st};
  return infer_dot(&sub);
}

/* XLA's InferRaggedDotOpShape: the lhs dims that index group_sizes' rows
 * are all of lhs's batch dims in their listed order, then, by the kind of
 * the ragged dim: lhs's free dims before it (ascending), or the contracting
 * dims listed before it; a ragged batch dim takes only the batch dims
 * listed before it. */
int ragged_dot_sizes_prefix(const DotDims *dd, int lhs_rank, int64_t prefix[AXLE_MAX_RANK]) {
  int64_t ragged = dd->lhs_ragged.values[0];
  int n = 0;
  for (int i = 0; i < dd->lhs_batch.count && dd->lhs_batch.values[i] != ragged; i++)
    prefix[n++] = dd->lhs_batch.values[i];
  if (infer_list_contains(&dd->lhs_batch, ragged)) return n;
  if (infer_list_contains(&dd->lhs_contracting, ragged)) {
    for (int i = 0; i < dd->lhs_contracting.count && dd->lhs_contracting.values[i] != ragged; i++)
      prefix[n++] = dd->lhs_contracting.values[i];
    return n;
  }
  for (int d = 0; d < ragged && d < lhs_rank; d++)
    if (!infer_list_contains(&dd->lhs_batch, d) && !infer_list_contains(&dd->lhs_contracting, d)) prefix[n++] = d;
  return n;
}

/* group_sizes is [G], or [prefix..., G] with lhs's sizes on the prefix. */
static bool check_sizes_prefix(const Infer *in, const DotDims *dd, const Shape *l, const Shape *g) {
  int64_t prefix[AXLE_MAX_RANK];
  int n = ragged_dot_sizes_prefix(dd, l->rank, prefix);
  bool fits = g->rank == 1 || g->rank == n + 1;
  for (int i = 0; fits && g->rank > 1 && i < n; i++) fits = g->dims[i] == l->dims[prefix[i]];
  if (fits) return true;
  char want[AXLE_MAX_RANK * 24] = "";
  size_t used = 0;
  for (int i = 0; i < n; i++)
    used += (size_t)snprintf(want + used, sizeof want - used, "%lld, ", (long long)l->dims[prefix[i]]);
  return infer_fail(in, "group_sizes must be [%sG] or [G] (lhs's batch dims, then the free or contracting dims "
                    "before the ragged one), got %s", want, infer_shape_text(g, (char[128]){0}));
}

/* ragged-dot(lhs, rhs, group_sizes): lhs_ragged_dims names one lhs
 * dimension cut into groups of group_sizes[g] consecutive entries. Three
 * modes, by the kind of that dimension:
 *   - non-contracting: rhs has a group dimension (rhs_group_dims); each
 *     group of lhs rows is multiplied by its own rhs; dims as for dot
 *     without rhs's group dimension;
 *   - contracting: no rhs group dimension; the result gains a leading
 *     dimension of size G, one partial sum per group;
 *   - batch: no rhs group dimension; the result is the plain dot.
 * group_sizes is an integer array [G], the same sizes everywhere, or
 * [prefix..., G] (ragged_dot_sizes_prefix). */
bool infer_ragged_dot(Infer *in) {
  const DotDims *dd = attrs_dot(&in->inst->attrs);
  for (int i = 0; i < 3; i++)
    if (!infer_expect_array(in, i)) return false;
  const Shape *l = infer_operand_shape(in, 0), *r = infer_operand_shape(in, 1),
              *g = infer_operand_shape(in, 2);
  if (!type_is_integer(g->type) || g->rank < 1) return infer_fail(in, "group_sizes must be an integer array");
  int64_t groups = g->dims[g->rank - 1];
  if (dd->lhs_ragged.count != 1) return infer_fail(in, "lhs_ragged_dims must hold one dimension");
  if (!infer_check_dim_list(in, "lhs_ragged_dims", &dd->lhs_ragged, l->rank, false) ||
      !infer_check_dim_list(in, "rhs_group_dims", &dd->rhs_group, r->rank, false))
    return false;
  if (!infer_check_dim_list(in, "lhs_batch_dims", &dd->lhs_batch, l->rank, false) ||
      !infer_check_dim_list(in, "lhs_contracting_dims", &dd->lhs_contracting, l->rank, false) ||
      !check_sizes_prefix(in, dd, l, g))
    return false;
  int64_t ragged = dd->lhs_ragged.values[0];
  bool contracting = infer_list_contains(&dd->lhs_contracting, ragged);
  bool batch = infer_list_contains(&dd->lhs_batch, ragged);
  bool grouped = !contracting && !batch;
  if (grouped != (dd->rhs_group.count == 1))
    return infer_fail(in,
                      "rhs_group_dims must name one dimension exactly when the ragged dimension is "
                      "not contracting or batch");
  if (grouped) {
    int64_t gd = dd->rhs_group.values[0];
    if (infer_list_contains(&dd->rhs_batch, gd) || infer_list_contains(&dd->rhs_contracting, gd))
      return infer_fail(in, "the rhs group dimension cannot be batch or contracting");
    if (r->dims[gd] != groups)
      return infer_fail(in, "rhs group dimension has %lld groups, group_sizes %lld", (long long)r->dims[gd],
                        (long long)groups);
  }
  /* The dot without rhs's group dimension gives the rest of the dims. */
  Shape rhs_view = *r;
  DotDims view = *dd;
  int64_t rb[AXLE_MAX_RANK], rc[AXLE_MAX_RANK];
  if (grouped) {
    int64_t gd = dd->rhs_group.values[0];
    rhs_view.rank = r->rank - 1;
    for (int k = (int)gd; k < rhs_view.rank; k++) rhs_view.dims[k] = r->dims[k + 1];
    for (int i = 0; i < dd->rhs_batch.count; i++)
      rb[i] = dd->rhs_batch.values[i] - (dd->rhs_batch.values[i] > gd);
    for (int i = 0; i < dd->rhs_contracting.count; i++)
      rc[i] = dd->rhs_contracting.values[i] - (dd->rhs_contracting.values[i] > gd);
    view.rhs_batch = (IntList){dd->rhs_batch.count, rb};
    view.rhs_contracting = (IntList){dd->rhs_contracting.count, rc};
  }
  Instruction probe = *in->inst;
  Instruction lhs_inst = *in->inst->operands[0], rhs_inst = *in->inst->operands[1];
  rhs_inst.shape = rhs_view;
  Instruction *ops[2] = {&lhs_inst, &rhs_inst};
  probe.operands = ops;
  probe.operand_count = 2;
  probe.attrs.dot = &view;
  Infer sub = {&probe, in->out, in->arena, in->st};
  if (!infer_dot(&sub)) return false;
  if (!contracting) return true;
  Shape dot = *in->out;
  if (dot.rank + 1 > AXLE_MAX_RANK) return infer_fail(in, "result rank exceeds %d", AXLE_MAX_RANK);
  int64_t dims[AXLE_MAX_RANK];
  dims[0] = groups;
  memcpy(dims + 1, dot.dims, sizeof(int64_t) * (size_t)dot.rank);
  return infer_set_array(in, dot.type, dot.rank + 1, dims);
}
