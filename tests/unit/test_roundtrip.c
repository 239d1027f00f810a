/* parse → print → parse → print: the two printed texts are identical and
 * the two parsed modules are the same structure (computations, instructions,
 * opcodes, shapes with layouts, operand and callee names, every attribute).
 *
 * Runs over every .hlo file in tests/hlo and tests/hlo-samples that exists
 * (one PASS line per file), and over inline modules that between them use
 * every attribute the printer knows. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "../test.h"

/* ---- structural equality; on a difference, why names it ---- */

static bool intlist_equal(const IntList *a, const IntList *b) {
  return a->count == b->count &&
         (a->count == 0 || memcmp(a->values, b->values, sizeof(int64_t) * (size_t)a->count) == 0);
}

static bool shape_equal_with_layout(const Shape *a, const Shape *b) {
  if (!shape_equal(a, b)) return false;
  if (shape_is_tuple(a)) {
    for (int i = 0; i < a->tuple_count; i++)
      if (!shape_equal_with_layout(&a->tuple_shapes[i], &b->tuple_shapes[i])) return false;
    return true;
  }
  return memcmp(a->minor_to_major, b->minor_to_major, sizeof a->minor_to_major[0] * (size_t)a->rank) == 0;
}

static bool window_equal(const Window *a, const Window *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++) {
    const WindowDim *x = &a->dims[i], *y = &b->dims[i];
    if (x->size != y->size || x->stride != y->stride || x->pad_lo != y->pad_lo || x->pad_hi != y->pad_hi ||
        x->lhs_dilate != y->lhs_dilate || x->rhs_dilate != y->rhs_dilate || x->reversal != y->reversal)
      return false;
  }
  return true;
}

static bool conv_equal(const ConvDims *a, const ConvDims *b) {
  if (a->spatial_count != b->spatial_count || a->input_batch != b->input_batch ||
      a->input_feature != b->input_feature || a->kernel_input_feature != b->kernel_input_feature ||
      a->kernel_output_feature != b->kernel_output_feature || a->output_batch != b->output_batch ||
      a->output_feature != b->output_feature)
    return false;
  for (int i = 0; i < a->spatial_count && i < AXLE_MAX_RANK; i++)
    if (a->input_spatial[i] != b->input_spatial[i] || a->kernel_spatial[i] != b->kernel_spatial[i] ||
        a->output_spatial[i] != b->output_spatial[i])
      return false;
  return true;
}

static bool pad_equal(const PadDims *a, const PadDims *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->lo[i] != b->lo[i] || a->hi[i] != b->hi[i] || a->interior[i] != b->interior[i]) return false;
  return true;
}

static bool gather_equal(const GatherDims *a, const GatherDims *b) {
  return intlist_equal(&a->offset_dims, &b->offset_dims) &&
         intlist_equal(&a->collapsed_slice_dims, &b->collapsed_slice_dims) &&
         intlist_equal(&a->start_index_map, &b->start_index_map) &&
         intlist_equal(&a->operand_batching_dims, &b->operand_batching_dims) &&
         intlist_equal(&a->start_indices_batching_dims, &b->start_indices_batching_dims) &&
         a->index_vector_dim == b->index_vector_dim && intlist_equal(&a->slice_sizes, &b->slice_sizes) &&
         a->indices_are_sorted == b->indices_are_sorted;
}

static bool scatter_equal(const ScatterDims *a, const ScatterDims *b) {
  return intlist_equal(&a->update_window_dims, &b->update_window_dims) &&
         intlist_equal(&a->inserted_window_dims, &b->inserted_window_dims) &&
         intlist_equal(&a->scatter_dims_to_operand_dims, &b->scatter_dims_to_operand_dims) &&
         intlist_equal(&a->input_batching_dims, &b->input_batching_dims) &&
         intlist_equal(&a->scatter_indices_batching_dims, &b->scatter_indices_batching_dims) &&
         a->index_vector_dim == b->index_vector_dim && a->indices_are_sorted == b->indices_are_sorted &&
         a->unique_indices == b->unique_indices;
}

static bool dot_equal(const DotDims *a, const DotDims *b) {
  return intlist_equal(&a->lhs_batch, &b->lhs_batch) && intlist_equal(&a->rhs_batch, &b->rhs_batch) &&
         intlist_equal(&a->lhs_contracting, &b->lhs_contracting) &&
         intlist_equal(&a->rhs_contracting, &b->rhs_contracting);
}

/* The name of the first attribute that differs, or NULL. */
static const char *attrs_difference(const Attrs *a, const Attrs *b) {
  if (a->parameter_number != b->parameter_number) return "parameter_number";
  if ((a->literal == NULL) != (b->literal == NULL) || (a->literal && !literal_equal(a->literal, b->literal)))
    return "literal";
  if (!intlist_equal(&a->dimensions, &b->dimensions)) return "dimensions";
  if (a->iota_dimension != b->iota_dimension) return "iota_dimension";
  if (a->tuple_index != b->tuple_index) return "index";
  const SliceDims *sa = attrs_slice(a), *sb = attrs_slice(b);
  if (!intlist_equal(&sa->starts, &sb->starts) || !intlist_equal(&sa->limits, &sb->limits) ||
      !intlist_equal(&sa->strides, &sb->strides))
    return "slice";
  if (!intlist_equal(&a->dynamic_slice_sizes, &b->dynamic_slice_sizes)) return "dynamic_slice_sizes";
  if (!pad_equal(attrs_padding(a), attrs_padding(b))) return "padding";
  if (!window_equal(attrs_window(a), attrs_window(b))) return "window";
  if (!conv_equal(attrs_conv(a), attrs_conv(b))) return "dim_labels";
  if (a->feature_group_count != b->feature_group_count) return "feature_group_count";
  if (a->batch_group_count != b->batch_group_count) return "batch_group_count";
  if (!dot_equal(attrs_dot(a), attrs_dot(b))) return "dot dimensions";
  if (!gather_equal(attrs_gather(a), attrs_gather(b))) return "gather dimensions";
  if (!scatter_equal(attrs_scatter(a), attrs_scatter(b))) return "scatter dimensions";
  if (attrs_fft(a)->type != attrs_fft(b)->type || !intlist_equal(&attrs_fft(a)->length, &attrs_fft(b)->length))
    return "fft_type or fft_length";
  if (a->direction != b->direction) return "direction";
  if (a->compare_type != b->compare_type) return "type";
  if (a->fusion_kind != b->fusion_kind) return "kind";
  if ((a->custom_call_target == NULL) != (b->custom_call_target == NULL) ||
      (a->custom_call_target && strcmp(a->custom_call_target, b->custom_call_target) != 0))
    return "custom_call_target";
  if (a->rng_algorithm != b->rng_algorithm) return "algorithm";
  if (a->exponent_bits != b->exponent_bits || a->mantissa_bits != b->mantissa_bits) return "reduce-precision bits";
  if (memcmp(&a->epsilon, &b->epsilon, sizeof a->epsilon) != 0) return "epsilon";
  if (a->feature_index != b->feature_index) return "feature_index";
  if (a->lower != b->lower || a->left_side != b->left_side || a->unit_diagonal != b->unit_diagonal ||
      a->transpose_a != b->transpose_a)
    return "triangular options";
  if (a->is_stable != b->is_stable) return "is_stable";
  if (a->channel_id != b->channel_id) return "channel_id";
  if (!intlist_equal(&a->source_target_pairs, &b->source_target_pairs)) return "source_target_pairs";
  return NULL;
}

static const char *instruction_difference(const Instruction *a, const Instruction *b) {
  if (strcmp(a->name, b->name) != 0) return "name";
  if (a->opcode != b->opcode) return "opcode";
  if (!shape_equal_with_layout(&a->shape, &b->shape)) return "shape";
  if (a->operand_count != b->operand_count) return "operand count";
  for (int i = 0; i < a->operand_count; i++)
    if (strcmp(a->operands[i]->name, b->operands[i]->name) != 0) return "operand";
  if (a->called_count != b->called_count) return "called count";
  for (int i = 0; i < a->called_count; i++)
    if (strcmp(a->called[i]->name, b->called[i]->name) != 0) return "called computation";
  return attrs_difference(&a->attrs, &b->attrs);
}

/* Fills where/why and returns false at the first difference. */
static bool modules_equal(const Module *a, const Module *b, char *where, size_t n) {
  if (a->computation_count != b->computation_count) {
    snprintf(where, n, "computation count %d vs %d", a->computation_count, b->computation_count);
    return false;
  }
  for (int c = 0; c < a->computation_count; c++) {
    const Computation *x = a->computations[c], *y = b->computations[c];
    if (strcmp(x->name, y->name) != 0 || x->is_entry != y->is_entry ||
        x->instruction_count != y->instruction_count || x->parameter_count != y->parameter_count ||
        strcmp(x->root->name, y->root->name) != 0) {
      snprintf(where, n, "computation %s differs in name, entry, root or counts", x->name);
      return false;
    }
    for (int i = 0; i < x->instruction_count; i++) {
      const char *why = instruction_difference(x->instructions[i], y->instructions[i]);
      if (why) {
        snprintf(where, n, "%s.%s: %s differs", x->name, x->instructions[i]->name, why);
        return false;
      }
    }
  }
  return true;
}

/* ---- the round trip ---- */

static char *module_text(const Module *m) {
  StrBuf sb = {0};
  print_module(&sb, m);
  return sb.data;
}

/* Prints why the round trip failed, or nothing. */
static bool round_trip(const char *text, size_t length, const char *filename) {
  Status st;
  status_clear(&st);
  Module *first = parse_module(text, length, filename, &st);
  if (!first) {
    printf("  %s: the original does not parse: %s\n", filename, st.message);
    return false;
  }
  char *printed = module_text(first);
  Module *second = parse_module(printed, strlen(printed), "printed", &st);
  bool ok = second != NULL;
  if (!ok) printf("  %s: the printed text does not parse: %s (line %d)\n%s", filename, st.message, st.loc.line, printed);
  char *reprinted = ok ? module_text(second) : NULL;
  if (ok && strcmp(printed, reprinted) != 0) {
    printf("  %s: printing twice differs:\n%s\n----\n%s", filename, printed, reprinted);
    ok = false;
  }
  char where[256];
  if (ok && !modules_equal(first, second, where, sizeof where)) {
    printf("  %s: modules differ: %s\n", filename, where);
    ok = false;
  }
  free(printed);
  free(reprinted);
  module_free(first);
  module_free(second);
  return ok;
}

static char *read_whole_file(const char *path, size_t *length) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  StrBuf sb = {0};
  char chunk[4096];
  size_t n;
  strbuf_printf(&sb, "%s", "");
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) strbuf_printf(&sb, "%.*s", (int)n, chunk);
  fclose(f);
  *length = sb.len;
  return sb.data;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One PASS/FAIL line per .hlo file in dir, in name order. */
static void round_trip_directory(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  char **names = NULL;
  int count = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".hlo") != 0) continue;
    if (count == cap) {
      cap = cap ? 2 * cap : 64;
      names = realloc(names, sizeof(char *) * (size_t)cap);
    }
    names[count++] = strdup(e->d_name);
  }
  closedir(d);
  if (count > 0) qsort(names, (size_t)count, sizeof(char *), compare_names);
  for (int i = 0; i < count; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    size_t length = 0;
    char *text = read_whole_file(path, &length);
    test_current_name = path;
    test_current_failed = 0;
    bool ok = text && round_trip(text, length, path);
    if (ok) {
      test_passed++;
      printf("PASS roundtrip %s\n", path);
    } else {
      test_failed++;
      printf("FAIL roundtrip %s\n", path);
    }
    free(text);
    free(names[i]);
  }
  free(names);
}

/* ---- inline modules: every attribute at least once ---- */

static const char reducers[] =
    "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
    "ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }\n";

static void expect_round_trip(const char *body) {
  char text[8192];
  snprintf(text, sizeof text, "HloModule m\n%s%s", reducers, body);
  EXPECT(round_trip(text, strlen(text), "inline.hlo"), "round trip failed for\n%s", text);
}

TEST(elementwise_and_constants_round_trip) {
  expect_round_trip("ENTRY e { a = f32[2,2]{0,1} parameter(0)  c = f32[2,2] constant({ {0.1, -0}, {inf, nan} })\n"
                    "  h = f16[3] constant({65504, 6e-08, -1.5})  b = bf16[2] constant({1.0078125, -3e+38})\n"
                    "  t = (pred[], s64[2], u64[]) constant((true, {-9223372036854775808, 7}, 18446744073709551615))\n"
                    "  s = f32[2,2] add(a, c)  lt = pred[2,2] compare(s, c), direction=LT, type=TOTALORDER\n"
                    "  x = f32[2,2] select(lt, s, c)  r = f32[2,2] reduce-precision(x), exponent_bits=5, mantissa_bits=10\n"
                    "  i = s32[2,2] convert(r)  u = u8[2,2,4] bitcast-convert(r)\n"
                    "  ROOT out = (f32[2,2], s32[2,2], u8[2,2,4]) tuple(r, i, u) }\n");
}

TEST(data_movement_attributes_round_trip) {
  expect_round_trip("ENTRY e { a = f32[4,6] parameter(0)  z = f32[] constant(0)  k = s32[] parameter(1)\n"
                    "  b = f32[4,6,2] broadcast(a), dimensions={0,1}  t = f32[6,4] transpose(a), dimensions={1,0}\n"
                    "  s = f32[2,2] slice(a), slice={[0:2], [1:5:2]}  r = f32[24] reshape(a)\n"
                    "  d = f32[2,3] dynamic-slice(a, k, k), dynamic_slice_sizes={2,3}\n"
                    "  u = f32[4,6] dynamic-update-slice(a, d, k, k)  v = f32[4,6] reverse(a), dimensions={1}\n"
                    "  p = f32[5,17] pad(a, z), padding=1_0_0x-1_2_2  c = f32[8,6] concatenate(a, a), dimensions={0}\n"
                    "  io = s32[3,5] iota(), iota_dimension=1  tp = (f32[4,6]) tuple(a)  g = f32[4,6] get-tuple-element(tp), index=0\n"
                    "  ROOT o = (f32[4,6,2], f32[6,4], f32[2,2], f32[24], f32[4,6], f32[4,6], f32[5,17], f32[8,6], s32[3,5])"
                    " tuple(b, t, s, r, u, v, p, c, io) }\n");
}

TEST(window_and_reduction_attributes_round_trip) {
  expect_round_trip("ENTRY e { a = f32[4,6] parameter(0)  z = f32[] constant(0)  src = f32[2,3] parameter(1)\n"
                    "  r = f32[6] reduce(a, z), dimensions={0}, to_apply=add\n"
                    "  w = f32[2,10] reduce-window(a, z), window={size=2x2 stride=2x1 pad=1_0x0_1 lhs_dilate=1x2 rhs_dilate=1x2}, to_apply=add\n"
                    "  ss = f32[4,6] select-and-scatter(a, src, z), window={size=2x2 stride=2x2}, select=ge, scatter=add\n"
                    "  m = f32[4,6] map(a, a), dimensions={0,1}, to_apply=add\n"
                    "  srt = f32[4,6] sort(a), dimensions={1}, is_stable=true, to_apply=ge\n"
                    "  ROOT o = (f32[6], f32[2,10], f32[4,6], f32[4,6], f32[4,6]) tuple(r, w, ss, m, srt) }\n");
}

TEST(dot_convolution_gather_scatter_round_trip) {
  expect_round_trip("ENTRY e { a = f32[7,2,3] parameter(0)  b = f32[3,7,5] parameter(1)\n"
                    "  d = f32[7,2,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}\n"
                    "  x = f32[2,4,5,5] parameter(2)  k = f32[6,2,3,3] parameter(3)\n"
                    "  c = f32[2,6,3,5] convolution(x, k), window={size=3x3 stride=2x1 pad=1_1x1_1 rhs_reversal=1x0},"
                    " dim_labels=bf01_oi01->bf01, feature_group_count=2\n"
                    "  op = f32[3,3] parameter(4)  i = s32[2] parameter(5)\n"
                    "  g = f32[2,3] gather(op, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0},"
                    " index_vector_dim=1, slice_sizes={1,3}, indices_are_sorted=true\n"
                    "  s = f32[3,3] scatter(op, i, g), update_window_dims={1}, inserted_window_dims={0},"
                    " scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=add\n"
                    "  ROOT o = (f32[7,2,5], f32[2,6,3,5], f32[3,3]) tuple(d, c, s) }\n");
}

TEST(linear_algebra_and_misc_attributes_round_trip) {
  expect_round_trip("ENTRY e { a = f32[3,3] parameter(0)  b = f32[3,2] parameter(1)\n"
                    "  l = f32[3,3] cholesky(a), lower=true\n"
                    "  x = f32[3,2] triangular-solve(a, b), left_side=true, lower=true, unit_diagonal=true, transpose_a=TRANSPOSE\n"
                    "  sc = f32[3] parameter(2)  bn = (f32[3,3], f32[3], f32[3]) batch-norm-training(a, sc, sc), epsilon=0.001, feature_index=1\n"
                    "  st = u64[2] parameter(3)  rng = (u64[2], u32[4]) rng-bit-generator(st), algorithm=rng_philox\n"
                    "  cc = f32[5] custom-call(b), custom_call_target=\"some\\\"target\"\n"
                    "  ar = f32[3,2] all-reduce(b), channel_id=3, to_apply=add\n"
                    "  cp = f32[3,2] collective-permute(b), channel_id=4, source_target_pairs={{0,0}}\n"
                    "  ag = f32[3,2] all-gather(b), dimensions={0}\n"
                    "  ROOT o = (f32[3,3], f32[3,2], (f32[3,3], f32[3], f32[3]), (u64[2], u32[4]), f32[5], f32[3,2], f32[3,2], f32[3,2])"
                    " tuple(l, x, bn, rng, cc, ar, cp, ag) }\n");
}

TEST(calls_and_control_flow_round_trip) {
  expect_round_trip("neg { x = f32[] parameter(0)  ROOT y = f32[] negate(x) }\n"
                    "fused { p = f32[4] parameter(0)  ROOT q = f32[4] exponential(p) }\n"
                    "c { s = (s32[]) parameter(0)  i = s32[] get-tuple-element(s), index=0  n = s32[] constant(3)\n"
                    "    ROOT lt = pred[] compare(i, n), direction=LT }\n"
                    "b { s = (s32[]) parameter(0)  i = s32[] get-tuple-element(s), index=0  one = s32[] constant(1)\n"
                    "    j = s32[] add(i, one)  ROOT t = (s32[]) tuple(j) }\n"
                    "ENTRY e { v = f32[4] parameter(0)  x = f32[] parameter(1)  p = pred[] parameter(2)  ix = s32[] parameter(3)\n"
                    "  f = f32[4] fusion(v), kind=kLoop, calls=fused  cl = f32[] call(x), to_apply=neg\n"
                    "  z = s32[] constant(0)  s = (s32[]) tuple(z)  w = (s32[]) while(s), condition=c, body=b\n"
                    "  k1 = f32[] conditional(p, x, x), true_computation=neg, false_computation=neg\n"
                    "  k2 = f32[] conditional(ix, x, x, x), branch_computations={neg, neg, neg}\n"
                    "  ROOT o = (f32[4], f32[], (s32[]), f32[], f32[]) tuple(f, cl, w, k1, k2) }\n");
}

/* As JAX dumps it: %names, computation signatures, metadata, and a softmax. */
TEST(legacy_style_jax_dump_round_trips) {
  static const char text[] =
      "HloModule jit_softmax, entry_computation_layout={(f32[2,8]{1,0})->f32[2,8]{1,0}}\n\n"
      "%region_0.4 (Arg_0.5: f32[], Arg_1.6: f32[]) -> f32[] {\n"
      "  %Arg_0.5 = f32[] parameter(0)\n  %Arg_1.6 = f32[] parameter(1)\n"
      "  ROOT %maximum.7 = f32[] maximum(f32[] %Arg_0.5, f32[] %Arg_1.6)\n}\n\n"
      "%region_1.15 (Arg_0.16: f32[], Arg_1.17: f32[]) -> f32[] {\n"
      "  %Arg_0.16 = f32[] parameter(0)\n  %Arg_1.17 = f32[] parameter(1)\n"
      "  ROOT %add.18 = f32[] add(f32[] %Arg_0.16, f32[] %Arg_1.17)\n}\n\n"
      "ENTRY %main.25 (Arg_0.1: f32[2,8]) -> f32[2,8] {\n"
      "  %Arg_0.1 = f32[2,8]{1,0} parameter(0), metadata={op_name=\"x\"}\n"
      "  %constant.3 = f32[] constant(-inf)\n"
      "  %reduce.8 = f32[2]{0} reduce(f32[2,8]{1,0} %Arg_0.1, f32[] %constant.3), dimensions={1}, to_apply=%region_0.4\n"
      "  %broadcast.9 = f32[2,8]{1,0} broadcast(f32[2]{0} %reduce.8), dimensions={0}\n"
      "  %subtract.10 = f32[2,8]{1,0} subtract(f32[2,8]{1,0} %Arg_0.1, f32[2,8]{1,0} %broadcast.9)\n"
      "  %exponential.11 = f32[2,8]{1,0} exponential(f32[2,8]{1,0} %subtract.10)\n"
      "  %constant.2 = f32[] constant(0)\n"
      "  %reduce.19 = f32[2]{0} reduce(f32[2,8]{1,0} %exponential.11, f32[] %constant.2), dimensions={1}, to_apply=%region_1.15\n"
      "  %broadcast.20 = f32[2,8]{1,0} broadcast(f32[2]{0} %reduce.19), dimensions={0}\n"
      "  ROOT %divide.21 = f32[2,8]{1,0} divide(f32[2,8]{1,0} %exponential.11, f32[2,8]{1,0} %broadcast.20)\n"
      "}\n";
  EXPECT(round_trip(text, strlen(text), "jax.hlo"), "round trip failed");
}

/* The forms XLA accepts beyond the fully written one print back written
 * out, and that text parses to the same module. */
TEST(headerless_shapeless_and_nested_forms_round_trip) {
  static const char text[] =
      "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = add(a, b) }\n"
      "main { x = f32[4] parameter(0)  m = f32[2,4] parameter(1)\n"
      "  y = add(f32[4] multiply(x, x), negate(x))\n"
      "  z = add(m, f32[2,4] broadcast(y), dimensions={1})\n"
      "  r = reduce(z, f32[] constant(0)), dimensions={0}, to_apply=add\n"
      "  ROOT t = tuple(r, compare(r, r), direction=LT, order=TOTAL) }\n";
  EXPECT(round_trip(text, strlen(text), "forms.hlo"), "round trip failed");
}

TEST(type_changing_bitcast_tuple_parameter_and_nan_payload_round_trip) {
  expect_round_trip("ENTRY e { p = ((f32[2,3]{0,1}, s32[]), u8[4]) parameter(0)\n"
                    "  q = (f32[2,3]{0,1}, s32[]) get-tuple-element(p), index=0\n"
                    "  x = f32[2,3]{0,1} get-tuple-element(q), index=0\n"
                    "  i = u32[3,2]{1,0} bitcast(x)  h = u16[12]{0} bitcast(x)\n"
                    "  n = f32[2] constant({-nan(0x1), nan(0x400001)})\n"
                    "  ROOT o = (u32[3,2], u16[12], f32[2]) tuple(i, h, n) }\n");
}

int main(void) {
  RUN(elementwise_and_constants_round_trip);
  RUN(data_movement_attributes_round_trip);
  RUN(window_and_reduction_attributes_round_trip);
  RUN(dot_convolution_gather_scatter_round_trip);
  RUN(linear_algebra_and_misc_attributes_round_trip);
  RUN(calls_and_control_flow_round_trip);
  RUN(legacy_style_jax_dump_round_trips);
  RUN(headerless_shapeless_and_nested_forms_round_trip);
  RUN(type_changing_bitcast_tuple_parameter_and_nan_payload_round_trip);
  round_trip_directory("tests/hlo");
  round_trip_directory("tests/hlo-samples");
  return test_summary();
}
