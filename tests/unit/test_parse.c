/* The HLO text parser: what it accepts, where each attribute lands, how
 * names resolve, and where it points when the text is wrong. */
#include <math.h>
#include <string.h>

#include "ir.h"
#include "../test.h"

/* Parses text that must be valid; prints the error when it is not. */
static Module *parse_ok(const char *text) {
  Status st;
  Module *m = parse_module(text, strlen(text), "test.hlo", &st);
  if (!m) status_print(&st, stdout);
  return m;
}

/* Parses text that must fail with a parse error at line:col whose message
 * contains want. Returns whether all of that held, printing what did not. */
static bool fails_at(const char *text, int line, int col, const char *want) {
  Status st;
  Module *m = parse_module(text, strlen(text), "test.hlo", &st);
  if (m) {
    module_free(m);
    printf("  parsed, expected an error '%s' at %d:%d\n", want, line, col);
    return false;
  }
  bool ok = st.code == STATUS_PARSE_ERROR && st.loc.line == line && st.loc.col == col &&
            strstr(st.message, want) != NULL;
  if (!ok) {
    printf("  expected '%s' at %d:%d (code %d), got:\n  ", want, line, col, STATUS_PARSE_ERROR);
    status_print(&st, stdout);
  }
  return ok;
}

static Instruction *find(const Module *m, const char *comp, const char *name) {
  Computation *c = comp ? module_find_computation(m, comp) : m->entry;
  return c ? computation_find_instruction(c, name) : NULL;
}

static bool list_is(IntList l, int count, const int64_t *want) {
  if (l.count != count) return false;
  for (int i = 0; i < count; i++)
    if (l.values[i] != want[i]) return false;
  return true;
}
#define LIST_IS(l, ...) list_is((l), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

TEST(sample_modern_style_parses) {
  Status st;
  Module *m = parse_module_file("tests/hlo-samples/jax_einsum.hlo", &st);
  if (!m) status_print(&st, stdout);
  EXPECT(m != NULL, "parse failed");
  if (!m) return;
  EXPECT(strcmp(m->name, "jit_einsums") == 0, "name %s", m->name);
  EXPECT(m->computation_count == 1 && m->entry == m->computations[0], "computations %d", m->computation_count);
  Computation *e = m->entry;
  EXPECT(e->instruction_count == 8, "count %d", e->instruction_count);
  EXPECT(e->parameter_count == 2, "params %d", e->parameter_count);
  EXPECT(strcmp(e->root->name, "tuple.1") == 0, "root %s", e->root->name);
  Instruction *dot = find(m, NULL, "dot_general.1");
  EXPECT(dot && dot->opcode == OP_DOT, "dot");
  if (dot) {
    const DotDims *d = attrs_dot(&dot->attrs);
    EXPECT(dot->attrs.dot != NULL, "dot dimension numbers are kept");
    EXPECT(LIST_IS(d->lhs_contracting, 2, 3), "lhs_contracting");
    EXPECT(LIST_IS(d->rhs_contracting, 1, 2), "rhs_contracting");
    EXPECT(LIST_IS(d->lhs_batch, 0) && LIST_IS(d->rhs_batch, 0), "batch");
    EXPECT(dot->shape.rank == 3 && dot->shape.dims[2] == 7, "shape");
  }
  Instruction *tr = find(m, NULL, "transpose.1");
  EXPECT(tr && LIST_IS(tr->attrs.dimensions, 3, 0, 2, 1), "transpose dims");
  EXPECT(tr && tr->shape.has_layout && tr->shape.minor_to_major[0] == 0 && tr->shape.minor_to_major[1] == 2,
         "layout {0,2,3,1}");
  Instruction *c = find(m, NULL, "constant.1");
  EXPECT(c && c->attrs.literal && literal_get_f64(c->attrs.literal, 0) == 2.0, "constant 2");
  Instruction *b = find(m, NULL, "mul.2");
  EXPECT(b && b->opcode == OP_BROADCAST && b->attrs.dimensions.count == 0, "broadcast dims {}");
  for (int i = 0; i < e->instruction_count; i++) {
    Instruction *inst = e->instructions[i];
    EXPECT(inst->index == i && inst->parent == e, "index/parent of %s", inst->name);
    for (int k = 0; k < inst->operand_count; k++)
      EXPECT(inst->operands[k]->index < i, "%s used before defined", inst->name);
  }
  module_free(m);
}

TEST(sample_older_style_with_debug_tables_parses) {
  Status st;
  Module *m = parse_module_file("tests/hlo-samples/jax_einsum.optimized.hlo", &st);
  if (!m) status_print(&st, stdout);
  EXPECT(m != NULL, "parse failed");
  if (!m) return;
  EXPECT(m->computation_count == 4, "computations %d", m->computation_count);
  EXPECT(m->computations[3] == m->entry && strcmp(m->entry->name, "main.1") == 0, "entry last");
  Instruction *f = find(m, NULL, "ynn_fusion");
  EXPECT(f && f->opcode == OP_FUSION && f->attrs.fusion_kind == FUSION_CUSTOM, "fusion kind");
  EXPECT(f && f->called_count == 1 && strcmp(f->called[0]->name, "fused_computation") == 0, "calls");
  Instruction *w = find(m, NULL, "wrapped_copy");
  EXPECT(w && w->attrs.fusion_kind == FUSION_LOOP, "kLoop");
  Computation *fc = module_find_computation(m, "fused_computation.1");
  EXPECT(fc && fc->parameter_count == 1 && strcmp(fc->root->name, "transpose.7") == 0, "fused comp");
  module_free(m);
}

TEST(unreadable_file_names_the_file) {
  Status st;
  Module *m = parse_module_file("tests/hlo-samples/no-such-file.hlo", &st);
  EXPECT(m == NULL && strstr(st.message, "cannot read tests/hlo-samples/no-such-file.hlo") != NULL,
         "message %s", st.message);
  m = parse_module_file("tests/hlo-samples", &st);
  EXPECT(m == NULL && strstr(st.message, "cannot read tests/hlo-samples: ") != NULL, "directory: %s", st.message);
}


static const char *reduce_modern =
    "HloModule reduce_sum, entry_computation_layout={(f32[2,3]{1,0})->f32[2]{0}}\n"
    "\n"
    "add.1 {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(x, y)\n"
    "}\n"
    "\n"
    "ENTRY main {\n"
    "  p = f32[2,3]{1,0} parameter(0)\n"
    "  zero = f32[] constant(0)\n"
    "  e = f32[2,3]{1,0} exponential(p)\n"
    "  ROOT r = f32[2]{0} reduce(e, zero), dimensions={1}, to_apply=add.1\n"
    "}\n";

static const char *reduce_older =
    "HloModule reduce_sum\n"
    "\n"
    "%add.1 (x: f32[], y: f32[]) -> f32[] {\n"
    "  %x = f32[] parameter(0)\n"
    "  %y = f32[] parameter(1)\n"
    "  ROOT %s = f32[] add(f32[] %x, f32[] %y)\n"
    "}\n"
    "\n"
    "ENTRY %main (p: f32[2,3]) -> f32[2] {\n"
    "  %p = f32[2,3]{1,0} parameter(0)\n"
    "  %zero = f32[] constant(0)\n"
    "  %e = f32[2,3]{1,0} exponential(f32[2,3]{1,0} %p)\n"
    "  ROOT %r = f32[2]{0} reduce(f32[2,3]{1,0} %e, f32[] %zero), dimensions={1}, to_apply=%add.1\n"
    "}\n";

/* Same structure: names, opcodes, shapes, operands, called computations. */
static bool same_structure(const Module *a, const Module *b) {
  if (a->computation_count != b->computation_count) return false;
  for (int c = 0; c < a->computation_count; c++) {
    const Computation *x = a->computations[c], *y = b->computations[c];
    if (strcmp(x->name, y->name) || x->instruction_count != y->instruction_count ||
        x->parameter_count != y->parameter_count || strcmp(x->root->name, y->root->name))
      return false;
    for (int i = 0; i < x->instruction_count; i++) {
      const Instruction *p = x->instructions[i], *q = y->instructions[i];
      if (strcmp(p->name, q->name) || p->opcode != q->opcode || !shape_equal(&p->shape, &q->shape) ||
          p->operand_count != q->operand_count || p->called_count != q->called_count)
        return false;
      for (int k = 0; k < p->operand_count; k++)
        if (strcmp(p->operands[k]->name, q->operands[k]->name)) return false;
      for (int k = 0; k < p->called_count; k++)
        if (strcmp(p->called[k]->name, q->called[k]->name)) return false;
    }
  }
  return true;
}

TEST(both_styles_give_identical_structure) {
  Module *a = parse_ok(reduce_modern), *b = parse_ok(reduce_older);
  EXPECT(a && b, "parse failed");
  if (a && b) {
    EXPECT(same_structure(a, b), "structures differ");
    Instruction *r = find(a, NULL, "r");
    EXPECT(r && r->called_count == 1 && r->called[0] == a->computations[0], "to_apply");
    EXPECT(r && LIST_IS(r->attrs.dimensions, 1), "dimensions");
  }
  module_free(a);
  module_free(b);
}

TEST(unknown_opcode_is_located) {
  EXPECT(fails_at("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT q = f32[] frobnicate(p)\n}\n",
                  4, 18, "unknown opcode 'frobnicate'"), "see above");
}


#define HEADER_OK "HloModule ok\nENTRY main {\n"

static const char *attrs_module =
    "HloModule attrs\n"
    "\n"
    "add {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(x, y)\n"
    "}\n"
    "\n"
    "ge {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT c = pred[] compare(x, y), direction=GE\n"
    "}\n"
    "\n"
    "less {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER\n"
    "}\n"
    "\n"
    "ENTRY main {\n"
    "  p = f32[4,6]{1,0} parameter(0), parameter_replication={false}\n"
    "  zero = f32[] constant(0)\n"
    "  io = s32[4,6]{1,0} iota(), iota_dimension=1\n"
    "  sl = f32[2,2]{1,0} slice(p), slice={[0:4:2], [1:3]}\n"
    "  i0 = s32[] constant(1)\n"
    "  ds = f32[2,3]{1,0} dynamic-slice(p, i0, i0), dynamic_slice_sizes={2,3}\n"
    "  pd = f32[7,17]{1,0} pad(p, zero), padding=1_2x-1_2_2\n"
    "  rw = f32[2,3]{1,0} reduce-window(p, zero), window={size=2x2 stride=2x2}, to_apply=add\n"
    "  src = f32[2,3]{1,0} parameter(1)\n"
    "  ss = f32[4,6]{1,0} select-and-scatter(p, src, zero), window={size=2x2 stride=2x2}, select=ge, scatter=add\n"
    "  img = f32[1,5,5,2]{3,2,1,0} parameter(2)\n"
    "  ker = f32[3,3,2,4]{3,2,1,0} parameter(3)\n"
    "  conv = f32[1,3,3,4]{3,2,1,0} convolution(img, ker), window={size=3x3 stride=2x2 pad=1_1x0_2 "
    "lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, "
    "operand_precision={default,default}\n"
    "  q = f32[6,5]{1,0} parameter(4)\n"
    "  dt = f32[4,5]{1,0} dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
    "algorithm=dot_f32_f32_f32\n"
    "  idx = s32[3,1]{1,0} parameter(5)\n"
    "  g = f32[3,6]{1,0} gather(p, idx), offset_dims={1}, collapsed_slice_dims={0}, "
    "start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}, indices_are_sorted=true\n"
    "  upd = f32[3,6]{1,0} parameter(6)\n"
    "  sc = f32[4,6]{1,0} scatter(p, idx, upd), update_window_dims={1}, inserted_window_dims={0}, "
    "scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=add\n"
    "  cmp = pred[4,6]{1,0} compare(p, p), direction=NE\n"
    "  srt = f32[4,6]{1,0} sort(p), dimensions={1}, is_stable=true, to_apply=less\n"
    "  rp = f32[4,6]{1,0} reduce-precision(p), exponent_bits=5, mantissa_bits=10\n"
    "  tr = f32[6,4]{0,1} transpose(p), dimensions={1,0}\n"
    "  rv = f32[4,6]{1,0} reverse(p), dimensions={0,1}\n"
    "  cc = f32[4,6]{1,0} custom-call(p), custom_call_target=\"my_target\", "
    "api_version=API_VERSION_STATUS_RETURNING, backend_config=\"x\"\n"
    "  state = u64[2]{0} parameter(7)\n"
    "  rng = (u64[2]{0}, u32[4,6]{1,0}) rng-bit-generator(state), algorithm=rng_three_fry\n"
    "  bx = f32[2,3,4]{2,1,0} parameter(8)\n"
    "  bs = f32[4]{0} parameter(9)\n"
    "  bn = (f32[2,3,4]{2,1,0}, f32[4]{0}, f32[4]{0}) batch-norm-training(bx, bs, bs), "
    "epsilon=0.001, feature_index=2\n"
    "  sq = f32[4,4]{1,0} parameter(10)\n"
    "  ch = f32[4,4]{1,0} cholesky(sq), lower=true\n"
    "  ts = f32[4,6]{1,0} triangular-solve(sq, p), left_side=true, lower=true, unit_diagonal=true, "
    "transpose_a=ADJOINT\n"
    "  ar = f32[4,6]{1,0} all-reduce(p), channel_id=3, replica_groups={{0}}, "
    "use_global_device_ids=true, to_apply=add\n"
    "  ag = f32[4,6]{1,0} all-gather(p), channel_id=4, replica_groups=[1,1]<=[1], dimensions={0}\n"
    "  cp = f32[4,6]{1,0} collective-permute(p), channel_id=5, source_target_pairs={{0,0}}\n"
    "  gte = u64[2]{0} get-tuple-element(rng), index=0\n"
    "  ROOT out = f32[4,6]{1,0} add(sc, ss), metadata={op_name=\"x\" source_file=\"a.py\" source_line=3}, "
    "sharding={replicated}, frontend_attributes={a=\"b\"}\n"
    "}\n";

TEST(each_attribute_lands_in_its_field) {
  Module *m = parse_ok(attrs_module);
  EXPECT(m != NULL, "parse failed");
  if (!m) return;
  Instruction *i;
  i = find(m, NULL, "io");
  EXPECT(i && i->attrs.iota_dimension == 1, "iota_dimension");
  i = find(m, NULL, "sl");
  const SliceDims *sl = i ? i->attrs.slice : NULL;
  EXPECT(sl && LIST_IS(sl->starts, 0, 1) && LIST_IS(sl->limits, 4, 3) && LIST_IS(sl->strides, 2, 1),
         "slice, stride defaults to 1");
  i = find(m, NULL, "ds");
  EXPECT(i && LIST_IS(i->attrs.dynamic_slice_sizes, 2, 3), "dynamic_slice_sizes");
  i = find(m, NULL, "pd");
  const PadDims *pad = i ? i->attrs.padding : NULL;
  EXPECT(pad && pad->rank == 2 && pad->lo[0] == 1 && pad->hi[0] == 2 && pad->interior[0] == 0 &&
         pad->lo[1] == -1 && pad->hi[1] == 2 && pad->interior[1] == 2, "padding");
  i = find(m, NULL, "rw");
  const Window *win = i ? i->attrs.window : NULL;
  EXPECT(win && win->rank == 2 && win->dims[1].size == 2 && win->dims[1].stride == 2 &&
         win->dims[0].pad_lo == 0 && win->dims[0].lhs_dilate == 1 && win->dims[0].rhs_dilate == 1,
         "window with defaults");
  EXPECT(i && i->called_count == 1 && strcmp(i->called[0]->name, "add") == 0, "reduce-window to_apply");
  i = find(m, NULL, "ss");
  EXPECT(i && i->called_count == 2 && strcmp(i->called[0]->name, "ge") == 0 &&
         strcmp(i->called[1]->name, "add") == 0, "select, scatter");
  i = find(m, NULL, "conv");
  EXPECT(i && i->attrs.conv && i->attrs.window, "convolution keeps dim_labels and window");
  if (i && i->attrs.conv && i->attrs.window) {
    const ConvDims *d = i->attrs.conv;
    const WindowDim *w = i->attrs.window->dims;
    EXPECT(d->spatial_count == 2 && d->input_batch == 0 && d->input_feature == 3 &&
           d->input_spatial[0] == 1 && d->input_spatial[1] == 2, "input labels");
    EXPECT(d->kernel_input_feature == 2 && d->kernel_output_feature == 3 && d->kernel_spatial[1] == 1,
           "kernel labels");
    EXPECT(d->output_batch == 0 && d->output_feature == 3 && d->output_spatial[0] == 1, "output labels");
    EXPECT(w[0].size == 3 && w[0].stride == 2 && w[1].pad_lo == 0 && w[1].pad_hi == 2 &&
           !w[0].reversal && w[1].reversal, "conv window");
    EXPECT(i->attrs.feature_group_count == 1 && i->attrs.batch_group_count == 1, "group counts default 1");
  }
  i = find(m, NULL, "dt");
  const DotDims *dd = i ? i->attrs.dot : NULL;
  EXPECT(dd && LIST_IS(dd->lhs_contracting, 1) && LIST_IS(dd->rhs_contracting, 0) && dd->lhs_batch.count == 0,
         "dot dims");
  i = find(m, NULL, "g");
  EXPECT(i && i->attrs.gather, "gather dimension numbers are kept");
  if (i && i->attrs.gather) {
    const GatherDims *g = i->attrs.gather;
    EXPECT(LIST_IS(g->offset_dims, 1) && LIST_IS(g->collapsed_slice_dims, 0) &&
           LIST_IS(g->start_index_map, 0) && g->index_vector_dim == 1 &&
           LIST_IS(g->slice_sizes, 1, 6) && g->indices_are_sorted, "gather dims");
  }
  i = find(m, NULL, "sc");
  EXPECT(i && i->attrs.scatter, "scatter dimension numbers are kept");
  if (i && i->attrs.scatter) {
    const ScatterDims *s = i->attrs.scatter;
    EXPECT(LIST_IS(s->update_window_dims, 1) && LIST_IS(s->inserted_window_dims, 0) &&
           LIST_IS(s->scatter_dims_to_operand_dims, 0) && s->index_vector_dim == 1 &&
           s->unique_indices && !s->indices_are_sorted, "scatter dims");
    EXPECT(i->called_count == 1 && strcmp(i->called[0]->name, "add") == 0, "scatter to_apply");
  }
  i = find(m, NULL, "cmp");
  EXPECT(i && i->attrs.direction == CMP_NE && i->attrs.compare_type == CMP_TYPE_DEFAULT, "compare NE");
  /* The entry also has a 'c': names are unique module-wide, so the
   * comparator's, which comes second, is read as c.1. */
  i = find(m, "less", "c.1");
  EXPECT(i && i->attrs.direction == CMP_LT && i->attrs.compare_type == CMP_TYPE_TOTALORDER, "compare type");
  i = find(m, NULL, "srt");
  EXPECT(i && i->attrs.is_stable && LIST_IS(i->attrs.dimensions, 1) && i->called_count == 1, "sort");
  i = find(m, NULL, "rp");
  EXPECT(i && i->attrs.exponent_bits == 5 && i->attrs.mantissa_bits == 10, "reduce-precision");
  i = find(m, NULL, "tr");
  EXPECT(i && LIST_IS(i->attrs.dimensions, 1, 0) && i->shape.minor_to_major[0] == 0, "transpose");
  i = find(m, NULL, "cc");
  EXPECT(i && i->attrs.custom_call_target && strcmp(i->attrs.custom_call_target, "my_target") == 0,
         "custom_call_target");
  i = find(m, NULL, "rng");
  EXPECT(i && i->attrs.rng_algorithm == RNG_THREE_FRY && i->shape.tuple_count == 2, "rng algorithm");
  i = find(m, NULL, "bn");
  EXPECT(i && fabs(i->attrs.epsilon - 0.001) < 1e-12 && i->attrs.feature_index == 2, "batch-norm");
  i = find(m, NULL, "ch");
  EXPECT(i && i->attrs.lower, "cholesky lower");
  i = find(m, NULL, "ts");
  EXPECT(i && i->attrs.left_side && i->attrs.lower && i->attrs.unit_diagonal &&
         i->attrs.transpose_a == TRANSPOSE_A_ADJOINT, "triangular-solve");
  i = find(m, NULL, "ar");
  EXPECT(i && i->attrs.channel_id == 3 && i->called_count == 1, "all-reduce");
  i = find(m, NULL, "ag");
  EXPECT(i && i->attrs.channel_id == 4 && LIST_IS(i->attrs.dimensions, 0), "all-gather");
  i = find(m, NULL, "cp");
  EXPECT(i && LIST_IS(i->attrs.source_target_pairs, 0, 0), "source_target_pairs");
  i = find(m, NULL, "gte");
  EXPECT(i && i->attrs.tuple_index == 0 && i->operands[0] == find(m, NULL, "rng"), "gte index");
  module_free(m);
}

static const char *control_module =
    "HloModule control\n"
    "\n"
    "cond {\n"
    "  s = (s32[], f32[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(10)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "\n"
    "body {\n"
    "  s = (s32[], f32[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  x = f32[] get-tuple-element(s), index=1\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[]) tuple(i2, x)\n"
    "}\n"
    "\n"
    "ENTRY main {\n"
    "  zero = s32[] constant(0)\n"
    "  x = f32[] parameter(0)\n"
    "  init = (s32[], f32[]) tuple(zero, x)\n"
    "  w = (s32[], f32[]) while(init), body=body, condition=cond\n"
    "  b = pred[] parameter(1)\n"
    "  c1 = f32[] conditional(b, x, x), false_computation=neg, true_computation=ident\n"
    "  k = s32[] parameter(2)\n"
    "  c2 = f32[] conditional(k, x, x, x), branch_computations={neg, ident, neg}\n"
    "  v = f32[3] parameter(3)\n"
    "  m = f32[3] map(v, v), dimensions={0}, to_apply=add\n"
    "  cl = f32[] call(x), to_apply=neg\n"
    "  ROOT r = f32[] add(c1, c2)\n"
    "}\n"
    "\n"
    "neg {\n"
    "  a = f32[] parameter(0)\n"
    "  ROOT n = f32[] negate(a)\n"
    "}\n"
    "\n"
    "ident {\n"
    "  a = f32[] parameter(0)\n"
    "  ROOT c = f32[] copy(a)\n"
    "}\n"
    "\n"
    "add {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(x, y)\n"
    "}\n";

static int position_of(const Module *m, const char *name) {
  for (int i = 0; i < m->computation_count; i++)
    if (strcmp(m->computations[i]->name, name) == 0) return i;
  return -1;
}

TEST(called_computations_resolve_in_slot_order_and_before_callers) {
  Module *m = parse_ok(control_module);
  EXPECT(m != NULL, "parse failed");
  if (!m) return;
  Instruction *w = find(m, NULL, "w");
  EXPECT(w && w->called_count == 2 && strcmp(w->called[0]->name, "cond") == 0 &&
         strcmp(w->called[1]->name, "body") == 0, "while: [condition, body]");
  Instruction *c1 = find(m, NULL, "c1");
  EXPECT(c1 && c1->called_count == 2 && strcmp(c1->called[0]->name, "ident") == 0 &&
         strcmp(c1->called[1]->name, "neg") == 0, "conditional: [true, false]");
  Instruction *c2 = find(m, NULL, "c2");
  EXPECT(c2 && c2->called_count == 3 && strcmp(c2->called[1]->name, "ident") == 0, "branches");
  Instruction *mp = find(m, NULL, "m");
  EXPECT(mp && mp->called_count == 1 && LIST_IS(mp->attrs.dimensions, 0), "map");
  EXPECT(m->entry == m->computations[m->computation_count - 1] && m->entry->is_entry, "entry last");
  for (int c = 0; c < m->computation_count; c++) {
    Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++)
      for (int k = 0; k < comp->instructions[i]->called_count; k++) {
        int callee = position_of(m, comp->instructions[i]->called[k]->name);
        EXPECT(callee >= 0 && callee < c, "%s called by %s is not earlier", 
               comp->instructions[i]->called[k]->name, comp->name);
      }
  }
  EXPECT(position_of(m, "cond") < position_of(m, "body") && position_of(m, "body") < position_of(m, "neg"),
         "text order kept where calls allow");
  module_free(m);
}

TEST(operands_may_be_used_before_their_definition) {
  Module *m = parse_ok("HloModule fwd\n"
                       "ENTRY main {\n"
                       "  ROOT r = f32[] add(a, b)\n"
                       "  b = f32[] negate(a)\n"
                       "  a = f32[] parameter(0)\n"
                       "}\n");
  EXPECT(m != NULL, "parse failed");
  if (!m) return;
  Computation *e = m->entry;
  EXPECT(e->instruction_count == 3 && strcmp(e->instructions[0]->name, "a") == 0 &&
         strcmp(e->instructions[1]->name, "b") == 0 && strcmp(e->instructions[2]->name, "r") == 0,
         "order a, b, r");
  EXPECT(strcmp(e->root->name, "r") == 0 && e->parameters[0] == e->instructions[0], "root, parameters");
  module_free(m);
}

TEST(without_root_the_last_instruction_is_root_and_entry_last_computation) {
  Module *m = parse_ok("HloModule noroot\n"
                       "main {\n"
                       "  a = f32[] parameter(0)\n"
                       "  b = f32[] negate(a)\n"
                       "}\n");
  EXPECT(m && strcmp(m->entry->root->name, "b") == 0 && m->entry->is_entry, "root b");
  module_free(m);
}

TEST(instruction_order_keeps_text_order_when_already_sorted) {
  Module *m = parse_ok(reduce_modern);
  EXPECT(m != NULL, "parse failed");
  if (!m) return;
  const char *want[] = {"p", "zero", "e", "r"};
  for (int i = 0; i < 4; i++)
    EXPECT(strcmp(m->entry->instructions[i]->name, want[i]) == 0, "[%d] = %s", i,
           m->entry->instructions[i]->name);
  module_free(m);
}

TEST(broadcast_of_a_scalar_may_leave_out_dimensions) {
  Module *m = parse_ok(HEADER_OK "  p = f32[] parameter(0)\n  ROOT q = f32[2,3] broadcast(p)\n}\n");
  EXPECT(m && m->entry->root->attrs.dimensions.count == 0, "dimensions {}");
  module_free(m);
}

TEST(cycle_is_an_error_at_the_closing_reference) {
  EXPECT(fails_at("HloModule cyc\n"
                  "ENTRY main {\n"
                  "  p = f32[] parameter(0)\n"
                  "  a = f32[] add(p, b)\n"
                  "  b = f32[] negate(a)\n"
                  "  ROOT r = f32[] copy(b)\n"
                  "}\n",
                  5, 20, "cycle"), "see above");
}

TEST(recursive_call_is_an_error) {
  EXPECT(fails_at("HloModule rec\n"
                  "f {\n"
                  "  a = f32[] parameter(0)\n"
                  "  ROOT c = f32[] call(a), to_apply=f\n"
                  "}\n"
                  "ENTRY main {\n"
                  "  a = f32[] parameter(0)\n"
                  "  ROOT c = f32[] call(a), to_apply=f\n"
                  "}\n",
                  4, 36, "calls itself"), "see above");
}

static Literal *constant_of(const char *shape_and_value, Module **m_out) {
  char text[512];
  snprintf(text, sizeof text, "HloModule c\nENTRY main {\n  ROOT c = %s\n}\n", shape_and_value);
  Module *m = parse_ok(text);
  *m_out = m;
  return m ? m->entry->root->attrs.literal : NULL;
}

TEST(constants_of_every_form_parse_into_row_major_literals) {
  Module *m;
  Literal *l = constant_of("f32[2,2]{1,0} constant({ {1, 2}, {3, 4.5} })", &m);
  EXPECT(l && literal_get_f64(l, 1) == 2 && literal_get_f64(l, 3) == 4.5, "nested");
  module_free(m);
  l = constant_of("f32[3] constant({-inf, inf, nan})", &m);
  EXPECT(l && isinf(literal_get_f64(l, 0)) && literal_get_f64(l, 0) < 0 && isnan(literal_get_f64(l, 2)),
         "inf/nan");
  module_free(m);
  l = constant_of("pred[2] constant({true, false})", &m);
  EXPECT(l && literal_get_s64(l, 0) == 1 && literal_get_s64(l, 1) == 0, "pred");
  module_free(m);
  l = constant_of("f16[2] constant({1.5, -2})", &m);
  EXPECT(l && literal_get_f64(l, 0) == 1.5 && literal_get_f64(l, 1) == -2, "f16");
  module_free(m);
  l = constant_of("bf16[] constant(1e-05)", &m);
  EXPECT(l && fabs(literal_get_f64(l, 0) - 1e-05) < 1e-7, "bf16 exponent");
  module_free(m);
  l = constant_of("f64[] constant(0x1.8p1)", &m);
  EXPECT(l && literal_get_f64(l, 0) == 3.0, "hex float");
  module_free(m);
  l = constant_of("u64[] constant(18446744073709551615)", &m);
  EXPECT(l && literal_get_u64(l, 0) == UINT64_MAX, "u64 max");
  module_free(m);
  l = constant_of("s8[2] constant({-128, 127})", &m);
  EXPECT(l && literal_get_s64(l, 0) == -128 && literal_get_s64(l, 1) == 127, "s8 range");
  module_free(m);
  l = constant_of("s32[0] constant({})", &m);
  EXPECT(l && shape_element_count(&l->shape) == 0, "empty");
  module_free(m);
  l = constant_of("(f32[], (s32[2], pred[])) constant((1, ({2, 3}, true)))", &m);
  EXPECT(l && l->shape.type == TYPE_TUPLE && l->shape.tuple_count == 2 &&
         literal_get_f64(l->elements[0], 0) == 1 &&
         literal_get_s64(l->elements[1]->elements[0], 1) == 3 &&
         literal_get_s64(l->elements[1]->elements[1], 0) == 1, "tuple constant");
  module_free(m);
  /* XLA's payload is the mantissa alone (nan(0x3ff) on bf16 is an error). */
  l = constant_of("f32[] constant(-nan(0x400001))", &m);
  uint32_t bits = 0;
  if (l) memcpy(&bits, l->data, 4);
  EXPECT(l && bits == 0xffc00001u, "nan with payload keeps its bits, got 0x%08x", bits);
  module_free(m);
}

TEST(shapes_keep_minor_to_major_and_drop_tiling) {
  Module *m = parse_ok("HloModule s\nENTRY main {\n"
                       "  a = f32[8,128]{0,1:T(8,128)S(1)} parameter(0)\n"
                       "  b = (f32[], (s32[2]{0}, pred[])) parameter(1)\n"
                       "  ROOT c = f32[8,128]{0,1} copy(a)\n}\n");
  EXPECT(m != NULL, "parse failed");
  if (!m) return;
  Instruction *a = find(m, NULL, "a"), *b = find(m, NULL, "b");
  EXPECT(a && a->shape.has_layout && a->shape.minor_to_major[0] == 0 && a->shape.minor_to_major[1] == 1,
         "layout");
  EXPECT(b && b->shape.type == TYPE_TUPLE && b->shape.tuple_count == 2 &&
         b->shape.tuple_shapes[1].tuple_count == 2 && b->shape.tuple_shapes[1].tuple_shapes[0].dims[0] == 2,
         "nested tuple");
  module_free(m);
}

TEST(every_element_type_parses) {
  const char *types[] = {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
                         "f16", "bf16", "f32", "f64"};
  for (int t = 0; t < 13; t++) {
    char text[256];
    snprintf(text, sizeof text, "HloModule t\nENTRY main {\n  ROOT a = %s[2]{0} parameter(0)\n}\n", types[t]);
    Module *m = parse_ok(text);
    EXPECT(m && (int)m->entry->root->shape.type == t, "%s", types[t]);
    module_free(m);
  }
}

#define HEADER "HloModule bad\nENTRY main {\n"

TEST(malformed_inputs_report_the_offending_line_and_column) {
  struct {
    const char *text;
    int line, col;
    const char *message;
  } cases[] = {
    {HEADER "  p = f32[] parameter(0)\n  ROOT q = f32[] add(p, x)\n}\n", 4, 25,
     "use of undefined instruction 'x'"},
    {HEADER "  p = f32[] parameter(0)\n  p = f32[] negate(p)\n}\n", 4, 3, "duplicate instruction name 'p'"},
    {HEADER "  p = f32[] parameter(0)\n  ROOT q = f32[] add(p)\n}\n", 4, 18, "takes 2 operands"},
    {HEADER "  p = f32[2] parameter(0)\n  ROOT q = f32[2,2] broadcast(p)\n}\n", 4, 8, "dimensions="},
    {HEADER "  p = f32[2] parameter(0)\n  ROOT q = f32[2] transpose(p)\n}\n", 4, 8, "needs the attribute dimensions="},
    {HEADER "  p = f32[] parameter(0)\n  ROOT q = f32[] add(p, p), foo=1\n}\n", 4, 29,
     "unknown attribute 'foo' on 'add'"},
    {HEADER "  p = f32[] parameter(0)\n  ROOT q = f32[] add(p, p), dimensions={0}\n}\n", 4, 29,
     "attribute 'dimensions' does not apply to 'add'"},
    {HEADER "  ROOT c = f32[?] constant({1})\n}\n", 3, 28, "a constant has no unbounded dimension"},
    {HEADER "  ROOT p = token[2] parameter(0)\n}\n", 3, 12, "a token has no dimensions"},
    {HEADER "  ROOT p = c32[2] parameter(0)\n}\n", 3, 12, "unsupported element type 'c32'"},
    {HEADER "  ROOT p = f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1] parameter(0)\n}\n", 3, 48, "rank exceeds"},
    {HEADER "  ROOT p = f32[2,-3] parameter(0)\n}\n", 3, 18, "negative dimension"},
    {HEADER "  ROOT p = f32[1048576,1048576,1048576] parameter(0)\n}\n", 3, 32, "2^48"},
    {HEADER "  ROOT p = f32[99999999999999999999] parameter(0)\n}\n", 3, 16, "expected an integer"},
    {HEADER "  ROOT c = s32[] custom-call(), custom_call_target=\"abc\n}\n", 3, 52, "unterminated string"},
    {HEADER "  ROOT p = f32[] parameter(0)\x01\n}\n", 3, 30, "byte 0x01"},
    {HEADER "  ROOT c = f32[3] constant({1, 2})\n}\n", 3, 33, "has 2 elements, the shape says 3"},
    {HEADER "  ROOT c = f32[2] constant({1, 2, 3})\n}\n", 3, 35, "too many elements"},
    {HEADER "  ROOT c = f32[1000] constant({...})\n}\n", 3, 31, "elided"},
    {HEADER "  ROOT c = s8[] constant(300)\n}\n", 3, 26, "does not fit in s8"},
    {HEADER "  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(2)\n}\n", 4, 8, "parameter number 2"},
    {HEADER "  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(0)\n}\n", 4, 8, "used twice"},
    {HEADER "  a = f32[2] parameter(0)\n  z = f32[] constant(0)\n"
            "  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=nope\n}\n", 5, 57,
     "use of undefined computation 'nope'"},
    {"= main {\n  ROOT a = f32[] parameter(0)\n}\n", 1, 1, "expected 'HloModule' or a computation"},
    {HEADER "  ROOT a = f32[] parameter(0)\n}\n\x7f\n", 5, 1, "unexpected character byte 0x7f"},
    {"HloModule\nENTRY main {\n  ROOT a = f32[] parameter(0)\n}\n", 2, 1, "expected a module name"},
    {HEADER "  a = f32[1,2,2,1] parameter(0)\n  k = f32[1,1,1,1] parameter(1)\n"
            "  ROOT c = f32[1,2,2,1] convolution(a, k), dim_labels=b01f_01io->b01f, feature_group_count=0\n}\n",
     5, 92, "group count must be at least 1"},
    {HEADER "  a = f32[] parameter(0)\n  ROOT b = f32[] negate(a", 4, 26, "expected ','"},
    {HEADER "  ROOT a = f32[2,2]{0,0} parameter(0)\n}\n", 3, 20, "repeats dimension"},
    {HEADER "  a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n  ROOT c = f32[] negate(a)\n}\n", 5, 8,
     "second ROOT"},
    {HEADER "  a = f32[1,3,3,1] parameter(0)\n  k = f32[1,1,1,1] parameter(1)\n"
            "  ROOT c = f32[1,3,3,1] convolution(a, k), dim_labels=b01f_01xo->b01f\n}\n", 5, 60,
     "bad dimension labels"},
    {"HloModule e\nempty {\n}\nENTRY main {\n  ROOT a = f32[] parameter(0)\n}\n", 3, 1, "no instructions"},
    {HEADER "  ROOT p = f32[] parameter(0)\n}\nENTRY other {\n  ROOT p = f32[] parameter(0)\n}\n", 5, 1,
     "second ENTRY"},
    {HEADER "  a = f32[] parameter(0)\n  ROOT b = pred[] compare(a, a), direction=XX\n}\n", 4, 44,
     "unknown comparison direction 'XX'"},
    {HEADER "  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
            "  ROOT b = f32[5] pad(a, z), padding=1_2_3_4\n}\n", 5, 38, "padding"},
    {HEADER "  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
            "  ROOT b = f32[7] pad(a, z), padding=1_2x\n}\n", 5, 38, "padding"},
    {HEADER "  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
            "  ROOT b = f32[2] reduce-window(a, z), window={size=2x2 stride=2}, to_apply=add\n}\n", 5, 64,
     "window field has 1 dimensions, earlier fields have 2"},
    {HEADER "  a = f32[4] parameter(0)\n  ROOT b = f32[2] slice(a), slice={[0:2:1}\n}\n", 4, 42, "expected ']'"},
    {HEADER "  a = f32[4] parameter(0)\n  ROOT b = f32[2] slice(a), slice={[0:4:0]}\n}\n", 4, 41,
     "slice stride must be at least 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    EXPECT(fails_at(cases[i].text, cases[i].line, cases[i].col, cases[i].message), "case %zu: %s", i,
           cases[i].message);
}

TEST(error_keeps_the_source_line_for_the_caret) {
  const char *text = HEADER "  ROOT q = f32[] frob(p)\n}\n";
  Status st;
  Module *m = parse_module(text, strlen(text), "t.hlo", &st);
  EXPECT(!m && strcmp(st.source_line, "  ROOT q = f32[] frob(p)") == 0 && strcmp(st.file, "t.hlo") == 0,
         "source_line '%s'", st.source_line);
}

TEST(nul_bytes_and_deep_nesting_are_located_errors) {
  const char text[] = HEADER "  ROOT p = f32[] para\0meter(0)\n}\n";
  Status st;
  Module *m = parse_module(text, sizeof text - 1, "t.hlo", &st);
  EXPECT(!m && st.code == STATUS_PARSE_ERROR && st.loc.line == 3 && st.loc.col == 22, "NUL: %d:%d %s",
         st.loc.line, st.loc.col, st.message);
  char deep[4096] = HEADER "  ROOT p = ";
  size_t n = strlen(deep);
  for (int i = 0; i < 1000; i++) deep[n++] = '(';
  deep[n] = '\0';
  m = parse_module(deep, strlen(deep), "t.hlo", &st);
  EXPECT(!m && st.code == STATUS_PARSE_ERROR && strstr(st.message, "nested too deeply"), "deep: %s",
         st.message);
  char braces[8192] = "HloModule m, attr=";
  n = strlen(braces);
  for (int i = 0; i < 5000; i++) braces[n++] = '{';
  braces[n] = '\0';
  m = parse_module(braces, strlen(braces), "t.hlo", &st);
  EXPECT(!m && st.code == STATUS_PARSE_ERROR, "deep braces");
}

/* Every prefix of a real module, and the module with bytes flipped: the
 * parser must answer with a module or a located error, never crash. */
TEST(truncated_and_corrupted_text_never_crashes) {
  Status st;
  Module *m = parse_module_file("tests/hlo-samples/jax_einsum.optimized.hlo", &st);
  EXPECT(m != NULL, "sample");
  module_free(m);
  FILE *f = fopen("tests/hlo-samples/jax_einsum.optimized.hlo", "rb");
  static char text[16384];
  size_t len = f ? fread(text, 1, sizeof text, f) : 0;
  if (f) fclose(f);
  int unlocated = 0;
  for (size_t cut = 0; cut < len; cut += 3) {
    m = parse_module(text, cut, "t.hlo", &st);
    if (!m && st.loc.line == 0) unlocated++;
    module_free(m);
  }
  uint32_t seed = 12345;
  static char copy[16384];
  for (int round = 0; round < 300; round++) {
    memcpy(copy, text, len);
    for (int k = 0; k < 4; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = (seed >> 8) % len;
      seed = seed * 1103515245u + 12345u;
      copy[at] = "{}()[],=%:\" \n0x-<"[(seed >> 8) % 17];
    }
    m = parse_module(copy, len, "t.hlo", &st);
    if (!m && st.loc.line == 0) unlocated++;
    module_free(m);
  }
  EXPECT(unlocated == 0, "%d errors without a location", unlocated);
}

/* What XLA dumps carry besides the computation: header attributes,
 * comments in long lists, skipped instruction attributes of every shape,
 * a computation on another execution thread. */
TEST(xla_dump_decorations_are_accepted) {
  Module *m = parse_ok(
      "\xef\xbb\xbfHloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2]{0})->(f32[2]{0}, f32[2]{0})}, "
      "input_output_alias={ {0}: (0, {}, may-alias) }, replica_count=1, frontend_attributes={fingerprint=\"abc\"}\n"
      "\n"
      "%helper (x: f32[2]) -> f32[2] {\n"
      "  %x = f32[2]{0:T(256)S(1)} parameter(0)\n"
      "  ROOT %n = f32[2]{0} negate(f32[2]{0} %x), origin={{\"n\"}}\n"
      "}, execution_thread=\"side\"\n"
      "\n"
      "ENTRY %main.3 (p: f32[2]) -> (f32[2], f32[2]) {\n"
      "  // a hand-written note\n"
      "  %p = f32[2]{0} parameter(0), sharding={devices=[2]<=[2]}, "
      "metadata={op_name=\"jit(f)/x\" source_file=\"f.py\" source_line=3 deduplicated_name=\"x\"}\n"
      "  %c = f32[2]{0} call(f32[2]{0} %p), to_apply=%helper, "
      "backend_config={\"a\":[1,{\"b\":\"}\"}],\"c\":null}, control-predecessors={%p}\n"
      "  %k = f32[2]{0} constant(f32[2] {1, 2}), statistics={visualizing_index=1,stat-index-0=5}\n"
      "  ROOT %t = (f32[2]{0}, /*index=1*/f32[2]{0}) tuple(f32[2]{0} %c, /*index=1*/f32[2]{0} %k), "
      "sharding={{replicated}, {maximal device=0}}\n"
      "}\n"
      "\n");
  EXPECT(m != NULL, "parse failed");
  if (!m) return;
  EXPECT(strcmp(m->name, "jit_f") == 0 && m->computation_count == 2, "module");
  Instruction *k = find(m, NULL, "k");
  EXPECT(k && literal_get_f64(k->attrs.literal, 1) == 2, "shape-prefixed constant");
  Instruction *c = find(m, NULL, "c");
  EXPECT(c && c->called_count == 1 && c->called[0] == m->computations[0], "call to_apply");
  module_free(m);
}

/* Tokens are made on demand and dropped once read (1024 at a time): a long
 * signature, a long operand list, a long skipped attribute and a long
 * constant all cross several of those drops. */
TEST(long_modules_parse_while_tokens_are_dropped) {
  enum { PARAMS = 700, VALUES = 5000 };
  StrBuf sb = {0};
  strbuf_printf(&sb, "HloModule long\n\nENTRY %%main (");
  for (int i = 0; i < PARAMS; i++) strbuf_printf(&sb, "%sp%d: f32[2]", i ? ", " : "", i);
  strbuf_printf(&sb, ") -> (f32[%d], f32[2]) {\n", VALUES);
  for (int i = 0; i < PARAMS; i++) strbuf_printf(&sb, "  %%p%d = f32[2]{0} parameter(%d)\n", i, i);
  strbuf_printf(&sb, "  %%c = f32[%d]{0} constant({", VALUES);
  for (int i = 0; i < VALUES; i++) strbuf_printf(&sb, "%s%d.5", i ? ", " : "", i);
  strbuf_printf(&sb, "}), backend_config={\"list\":[");
  for (int i = 0; i < VALUES; i++) strbuf_printf(&sb, "%s{\"k\":%d}", i ? "," : "", i);
  strbuf_printf(&sb, "]}\n  %%s = f32[2]{0} add(f32[2]{0} %%p0, f32[2]{0} %%p%d)\n", PARAMS - 1);
  strbuf_printf(&sb, "  ROOT %%t = (f32[%d]{0}, f32[2]{0}) tuple(f32[%d]{0} %%c, f32[2]{0} %%s)\n}\n", VALUES, VALUES);
  Status st;
  Module *m = parse_module(sb.data, sb.len, "long.hlo", &st);
  if (!m) status_print(&st, stdout);
  EXPECT(m && m->entry->parameter_count == PARAMS, "parameters");
  Instruction *c = m ? find(m, NULL, "c") : NULL;
  EXPECT(c && literal_get_f64(c->attrs.literal, VALUES - 1) == VALUES - 1 + 0.5, "last constant value");
  Instruction *sum = m ? find(m, NULL, "s") : NULL;
  EXPECT(sum && strcmp(sum->operands[1]->name, "p699") == 0, "operand after the long lines");
  module_free(m);
  /* The same text cut inside the constant: the error still points into it. */
  const char *cut = strstr(sb.data, "4000.5");
  m = parse_module(sb.data, (size_t)(cut - sb.data), "long.hlo", &st);
  EXPECT(!m && st.loc.line == PARAMS + 4, "cut constant: %d:%d %s", st.loc.line, st.loc.col, st.message);
  strbuf_free(&sb);
}
int main(void) {
  RUN(sample_modern_style_parses);
  RUN(sample_older_style_with_debug_tables_parses);
  RUN(unreadable_file_names_the_file);
  RUN(both_styles_give_identical_structure);
  RUN(unknown_opcode_is_located);
  RUN(each_attribute_lands_in_its_field);
  RUN(called_computations_resolve_in_slot_order_and_before_callers);
  RUN(operands_may_be_used_before_their_definition);
  RUN(without_root_the_last_instruction_is_root_and_entry_last_computation);
  RUN(instruction_order_keeps_text_order_when_already_sorted);
  RUN(broadcast_of_a_scalar_may_leave_out_dimensions);
  RUN(cycle_is_an_error_at_the_closing_reference);
  RUN(recursive_call_is_an_error);
  RUN(constants_of_every_form_parse_into_row_major_literals);
  RUN(shapes_keep_minor_to_major_and_drop_tiling);
  RUN(every_element_type_parses);
  RUN(malformed_inputs_report_the_offending_line_and_column);
  RUN(error_keeps_the_source_line_for_the_caret);
  RUN(nul_bytes_and_deep_nesting_are_located_errors);
  RUN(truncated_and_corrupted_text_never_crashes);
  RUN(xla_dump_decorations_are_accepted);
  RUN(long_modules_parse_while_tokens_are_dropped);
  return test_summary();
}
