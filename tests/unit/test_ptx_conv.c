/* The GPU backend's convolutions (src/emit_ptx/gpu_conv.c, ptx_conv.c):
 * each case is compiled by `--backend gpu` on the fake driver with
 * FAKE_CUDA_EXECUTE=1, so every launch runs on the host's SIMT simulator,
 * and its result is compared with the evaluator on the module as written
 * (executable_check) for random arguments. The cases cover odd extents
 * (tiles with ragged edges, several K steps), strides, both dilations,
 * padding that is negative, window reversal, feature and batch groups,
 * 1-D and 3-D windows, operands in non-default layouts, f16/bf16/f64,
 * c64/c128, operands narrower than the result, an
 * output fusion (the epilogue applied at the store: bias and relu, f16,
 * the convolution and its relu both results), and a grid of one
 * block (the kernel loops over its tiles). Each convolution's kernel is
 * also assembled by ptxas for sm_80 and sm_90a (skipped with a message
 * where ptxas is missing). What the kernel does not do is a located
 * refusal at compile. */
#include <sys/stat.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit_ptx/gpu_program.h"
#include "emit_ptx/ptx_conv.h"
#include "opt/opt.h"
#include "runtime/executable.h"
#include "tool_files.h"
#include "../test.h"

static char fake_driver[4096], ptxas[4096], work_dir[64];

typedef struct ConvCase {
  const char *name;
  const char *hlo;
} ConvCase;

#define MODULE(name, params, body) "HloModule " name "\nENTRY e {\n" params body "\n}\n"

static const ConvCase cases[] = {
    {"odd_nhwc_many_k_steps",
     MODULE("odd_nhwc_many_k_steps", "  x = f32[2,9,7,19] parameter(0)\n  w = f32[3,3,19,37] parameter(1)\n",
            "  ROOT c = f32[2,9,7,37] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f")},
    {"strided_nchw",
     MODULE("strided_nchw", "  x = f32[3,5,11,8] parameter(0)\n  w = f32[7,5,3,2] parameter(1)\n",
            "  ROOT c = f32[3,7,5,4] convolution(x, w), window={size=3x2 stride=2x2 pad=0_1x1_0}, "
            "dim_labels=bf01_oi01->bf01")},
    {"both_dilations_and_reversal",
     MODULE("both_dilations_and_reversal", "  x = f32[1,4,5,3] parameter(0)\n  w = f32[2,3,3,5] parameter(1)\n",
            "  ROOT c = f32[1,8,2,5] convolution(x, w), window={size=2x3 pad=1_1x0_1 lhs_dilate=2x1 rhs_dilate=1x2 "
            "rhs_reversal=1x0}, dim_labels=b01f_01io->b01f")},
    {"negative_padding_1d",
     MODULE("negative_padding_1d", "  x = f32[3,17,5] parameter(0)\n  w = f32[4,5,6] parameter(1)\n",
            "  ROOT c = f32[3,7,6] convolution(x, w), window={size=4 stride=2 pad=-2_1}, dim_labels=b0f_0io->b0f")},
    {"feature_groups",
     MODULE("feature_groups", "  x = f32[2,6,5,12] parameter(0)\n  w = f32[2,3,4,9] parameter(1)\n",
            "  ROOT c = f32[2,5,3,9] convolution(x, w), window={size=2x3}, dim_labels=b01f_01io->b01f, "
            "feature_group_count=3")},
    {"depthwise",
     MODULE("depthwise", "  x = f32[1,5,7,6] parameter(0)\n  w = f32[10,1,3,3] parameter(1)\n",
            "  ROOT c = f32[1,10,7,6] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, "
            "feature_group_count=5")},
    {"batch_groups",
     MODULE("batch_groups", "  x = f32[6,5,4,3] parameter(0)\n  w = f32[2,2,3,9] parameter(1)\n",
            "  ROOT c = f32[2,4,3,9] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f, "
            "batch_group_count=3")},
    {"conv3d",
     MODULE("conv3d", "  x = f32[2,5,4,6,3] parameter(0)\n  w = f32[2,3,2,3,4] parameter(1)\n",
            "  ROOT c = f32[2,4,4,3,4] convolution(x, w), window={size=2x3x2 pad=0_0x1_1x0_0 stride=1x1x2}, "
            "dim_labels=b012f_012io->b012f")},
    {"kernel_first_labels",
     MODULE("kernel_first_labels", "  x = f32[5,4,2,3] parameter(0)\n  w = f32[2,4,2,2] parameter(1)\n",
            "  ROOT c = f32[2,2,3,3] convolution(x, w), window={size=4x2}, dim_labels=01fb_o01i->f01b")},
    {"column_major_layouts",
     MODULE("column_major_layouts", "  x = f32[2,6,5,3]{0,1,2,3} parameter(0)\n  w = f32[3,2,3,4]{2,3,0,1} parameter(1)\n",
            "  ROOT c = f32[2,4,4,4]{1,0,3,2} convolution(x, w), window={size=3x2}, dim_labels=b01f_01io->b01f")},
    {"no_spatial_dims",
     MODULE("no_spatial_dims", "  x = f32[70,33] parameter(0)\n  w = f32[33,21] parameter(1)\n",
            "  ROOT c = f32[70,21] convolution(x, w), dim_labels=bf_io->bf")},
    {"f16", MODULE("f16", "  x = f16[1,6,6,4] parameter(0)\n  w = f16[3,3,4,5] parameter(1)\n",
                   "  ROOT c = f16[1,4,4,5] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f")},
    {"bf16", MODULE("bf16", "  x = bf16[1,6,6,4] parameter(0)\n  w = bf16[3,3,4,5] parameter(1)\n",
                    "  ROOT c = bf16[1,6,6,5] convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
                    "dim_labels=b01f_01io->b01f")},
    {"f64", MODULE("f64", "  x = f64[2,7,3] parameter(0)\n  w = f64[3,3,4] parameter(1)\n",
                   "  ROOT c = f64[2,3,4] convolution(x, w), window={size=3 stride=2}, dim_labels=b0f_0io->b0f")},
    {"bf16_and_f16_into_f32",
     MODULE("bf16_and_f16_into_f32", "  x = bf16[2,5,5,3] parameter(0)\n  w = f16[2,2,3,4] parameter(1)\n",
            "  ROOT c = f32[2,4,4,4] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f")},
    {"f32_into_f64",
     MODULE("f32_into_f64", "  x = f32[2,5,3] parameter(0)\n  w = f32[2,3,4] parameter(1)\n",
            "  ROOT c = f64[2,4,4] convolution(x, w), window={size=2}, dim_labels=b0f_0io->b0f")},
    {"c64", MODULE("c64", "  x = c64[2,9,3] parameter(0)\n  w = c64[3,3,5] parameter(1)\n",
                   "  ROOT c = c64[2,4,5] convolution(x, w), window={size=3 stride=2 pad=1_0}, dim_labels=b0f_0io->b0f")},
    {"c128", MODULE("c128", "  x = c128[1,5,5,2] parameter(0)\n  w = c128[2,2,2,3] parameter(1)\n",
                    "  ROOT c = c128[1,4,4,3] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f")},
    {"bias_relu_epilogue",
     MODULE("bias_relu_epilogue",
            "  x = f32[2,7,7,3] parameter(0)\n  w = f32[3,3,3,5] parameter(1)\n  bias = f32[5] parameter(2)\n",
            "  c = f32[2,7,7,5] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
            "  b = f32[2,7,7,5] broadcast(bias), dimensions={3}\n"
            "  s = f32[2,7,7,5] add(c, b)\n"
            "  z = f32[] constant(0)\n"
            "  zs = f32[2,7,7,5] broadcast(z), dimensions={}\n"
            "  ROOT r = f32[2,7,7,5] maximum(s, zs)")},
    {"f16_epilogue_in_nchw",
     MODULE("f16_epilogue_in_nchw",
            "  x = f16[2,3,6,5] parameter(0)\n  w = f16[4,3,2,2] parameter(1)\n  y = f16[2,4,5,4] parameter(2)\n",
            "  c = f16[2,4,5,4] convolution(x, w), window={size=2x2}, dim_labels=bf01_oi01->bf01\n"
            "  m = f16[2,4,5,4] multiply(c, y)\n"
            "  ROOT r = f16[2,4,5,4] subtract(m, c)")},
    {"the_convolution_and_its_relu_both_results",
     MODULE("the_convolution_and_its_relu_both_results",
            "  x = f32[3,8,5] parameter(0)\n  w = f32[3,5,7] parameter(1)\n",
            "  c = f32[3,3,7] convolution(x, w), window={size=3 stride=2}, dim_labels=b0f_0io->b0f\n"
            "  z = f32[] constant(0)\n"
            "  zs = f32[3,3,7] broadcast(z), dimensions={}\n"
            "  r = f32[3,3,7] maximum(c, zs)\n"
            "  ROOT t = (f32[3,3,7], f32[3,3,7]) tuple(c, r)")},
    /* fusions given in the input (canonicalize-convolutions rewrites the
     * convolution inside the body, over relabels of its parameters) */
    {"input_fusion_nchw_bias_relu",
     "HloModule input_fusion_nchw_bias_relu\n"
     "fused {\n  p0 = f32[2,3,6,6] parameter(0)\n  p1 = f32[5,3,3,3] parameter(1)\n  p2 = f32[5] parameter(2)\n"
     "  c = f32[2,5,6,6] convolution(p0, p1), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01\n"
     "  b = f32[2,5,6,6] broadcast(p2), dimensions={1}\n  s = f32[2,5,6,6] add(c, b)\n"
     "  z = f32[2,5,6,6] broadcast(f32[] constant(0)), dimensions={}\n  ROOT r = f32[2,5,6,6] maximum(s, z)\n}\n"
     "ENTRY e {\n  x = f32[2,3,6,6] parameter(0)\n  w = f32[5,3,3,3] parameter(1)\n  bias = f32[5] parameter(2)\n"
     "  ROOT f = f32[2,5,6,6] fusion(x, w, bias), kind=kOutput, calls=fused\n}\n"},
    {"input_fusion_root_nchw",
     "HloModule input_fusion_root_nchw\n"
     "fused {\n  p0 = f32[2,3,6,5] parameter(0)\n  p1 = f32[4,3,2,2] parameter(1)\n"
     "  ROOT c = f32[2,4,5,4] convolution(p0, p1), window={size=2x2}, dim_labels=bf01_oi01->bf01\n}\n"
     "ENTRY e {\n  x = f32[2,3,6,5] parameter(0)\n  w = f32[4,3,2,2] parameter(1)\n"
     "  ROOT f = f32[2,4,5,4] fusion(x, w), kind=kLoop, calls=fused\n}\n"},
    {"input_fusion_depthwise",
     "HloModule input_fusion_depthwise\n"
     "fused {\n  p0 = f32[1,4,7,6] parameter(0)\n  p1 = f32[4,1,3,2] parameter(1)\n"
     "  c = f32[1,4,14,6] convolution(p0, p1), window={size=3x2 pad=2_1x1_1 lhs_dilate=2x1 rhs_dilate=1x2}, "
     "dim_labels=bf01_oi01->bf01, feature_group_count=4\n  ROOT n = f32[1,4,14,6] negate(c)\n}\n"
     "ENTRY e {\n  x = f32[1,4,7,6] parameter(0)\n  w = f32[4,1,3,2] parameter(1)\n"
     "  ROOT f = f32[1,4,14,6] fusion(x, w), kind=kOutput, calls=fused\n}\n"},
    {"input_fusion_batch_groups_column_major",
     "HloModule input_fusion_batch_groups_column_major\n"
     "fused {\n  p0 = f32[4,3,9]{0,1,2} parameter(0)\n  p1 = f32[2,3,2] parameter(1)\n"
     "  ROOT c = f32[2,2,4] convolution(p0, p1), window={size=2 stride=2 pad=-1_0}, dim_labels=bf0_oi0->bf0, "
     "batch_group_count=2\n}\n"
     "ENTRY e {\n  x = f32[4,3,9]{0,1,2} parameter(0)\n  w = f32[2,3,2] parameter(1)\n"
     "  ROOT f = f32[2,2,4] fusion(x, w), kind=kOutput, calls=fused\n}\n"},
    /* a complex epilogue does not run at the store: the convolution goes to
     * scratch and the epilogue is a kernel of its own */
    {"complex_epilogue",
     MODULE("complex_epilogue",
            "  x = c64[2,9,3] parameter(0)\n  k = c64[3,3,5] parameter(1)\n  b = c64[5] parameter(2)\n",
            "  c = c64[2,7,5] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f\n"
            "  bb = c64[2,7,5] broadcast(b), dimensions={2}\n"
            "  ROOT s = c64[2,7,5] add(c, bb)")},
};

static Executable *compile_gpu(const char *name, const char *text, Status *st) {
  status_clear(st);
  Module *m = parse_module(text, strlen(text), name, st);
  if (!m) return NULL;
  ExecutableOptions options;
  executable_options_default(&options, AXLE_BACKEND_GPU);
  Executable *exe = executable_compile(m, &options, st);
  module_free(m);
  return exe;
}

/* Random arguments for the entry's parameters (row-major, as host buffers are). */
static HostBuffer **random_arguments(const Module *m, int *count) {
  const Computation *entry = m->entry;
  uint64_t state = 12345;
  HostBuffer **args = mem_calloc((size_t)entry->parameter_count + 1, sizeof *args);
  for (int i = 0; i < entry->parameter_count; i++) {
    const Shape *s = &entry->parameters[i]->shape;
    Shape row_major = shape_array(s->type, s->rank, s->dims);
    Literal *lit = literal_create(&row_major);
    literal_fill_random(lit, &state);
    args[i] = host_buffer_adopt_literal(lit);
  }
  *count = entry->parameter_count;
  return args;
}

static void arguments_free(HostBuffer **args, int count) {
  for (int i = 0; i < count; i++) host_buffer_free(args[i]);
  free(args);
}

static bool program_has_conv_launch(const Executable *exe) {
  const GpuProgram *p = exe->program;
  for (int i = 0; p && i < p->launch_count; i++)
    if (strstr(p->launches[i].entry, "conv")) return true;
  return false;
}

/* The same bits in every leaf. */
static bool buffers_identical(const HostBuffer *a, const HostBuffer *b) {
  if (shape_is_tuple(&a->shape) || shape_is_tuple(&b->shape)) {
    if (!shape_is_tuple(&a->shape) || !shape_is_tuple(&b->shape) || a->shape.tuple_count != b->shape.tuple_count)
      return false;
    for (int i = 0; i < a->shape.tuple_count; i++)
      if (!buffers_identical(a->elements[i], b->elements[i])) return false;
    return true;
  }
  size_t bytes = (size_t)shape_byte_size(&a->shape);
  return bytes == (size_t)shape_byte_size(&b->shape) && (bytes == 0 || memcmp(a->data, b->data, bytes) == 0);
}

/* Runs c on the simulated device; its result matches the evaluator, and a
 * second run gives the same bits. With one_block, every launch is cut to
 * a grid of one block first. */
static void case_check(const ConvCase *c, bool one_block) {
  Status st;
  Executable *exe = compile_gpu(c->name, c->hlo, &st);
  EXPECT(exe != NULL, "%s: %s", c->name, st.message);
  if (!exe) return;
  EXPECT(program_has_conv_launch(exe), "%s: no launch of a convolution kernel", c->name);
  GpuProgram *p = exe->program;
  for (int i = 0; one_block && i < p->launch_count; i++) p->launches[i].grid = 1;
  int count = 0;
  HostBuffer **args = random_arguments(exe->module, &count);
  status_clear(&st);
  HostBuffer *first = executable_run(exe, args, count, &st);
  EXPECT(first != NULL, "%s: %s", c->name, st.message);
  if (first) {
    status_clear(&st);
    EXPECT(executable_check(exe, args, count, first, &st), "%s: %s", c->name, st.message);
    HostBuffer *second = executable_run(exe, args, count, &st);
    EXPECT(second && buffers_identical(first, second), "%s: two runs differ", c->name);
    host_buffer_free(second);
  }
  host_buffer_free(first);
  arguments_free(args, count);
  executable_free(exe);
}

TEST(each_convolution_matches_the_evaluator_on_the_simulated_device) {
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) case_check(&cases[i], false);
  unsetenv("FAKE_CUDA_EXECUTE");
}

TEST(a_grid_of_one_block_still_computes_every_tile) {
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  case_check(&cases[0], true);   /* odd_nhwc_many_k_steps: several tiles */
  case_check(&cases[5], true);   /* depthwise: five groups */
  unsetenv("FAKE_CUDA_EXECUTE");
}

/* canonicalize-convolutions makes an NCHW convolution in b01f order and
 * its epilogue reads it through a relabel back: the epilogue still runs at
 * the convolution's store, one launch (its loads of the convolution are a
 * permutation of the loop's index). */
TEST(an_nchw_epilogue_read_through_a_relabel_runs_at_the_store) {
  const ConvCase *c = NULL;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (strcmp(cases[i].name, "f16_epilogue_in_nchw") == 0) c = &cases[i];
  EXPECT(c != NULL, "the case f16_epilogue_in_nchw is there");
  if (!c) return;
  Status st;
  Executable *exe = compile_gpu(c->name, c->hlo, &st);
  EXPECT(exe != NULL, "%s: %s", c->name, st.message);
  if (!exe) return;
  const GpuProgram *p = exe->program;
  EXPECT(p->launch_count == 1 && program_has_conv_launch(exe), "%s: one launch of the convolution, not %d launches",
         c->name, p->launch_count);
  executable_free(exe);
}

/* With zero input features every sum is empty: the result is all zeros
 * (the evaluator's), whatever the kernel decides to launch for it. The
 * CPU's twin is test_cpu_products a_convolution_over_zero_input_features_is_all_zeros. */
TEST(a_convolution_over_zero_input_features_is_all_zeros) {
  static const ConvCase zero_cases[] = {
      {"zero_features_b0f", MODULE("zero_features_b0f", "  x = f32[2,3,0] parameter(0)\n  w = f32[3,0,7] parameter(1)\n",
                                   "  ROOT c = f32[2,1,7] convolution(x, w), window={size=3}, dim_labels=b0f_0io->b0f")},
      {"zero_features_bf0", MODULE("zero_features_bf0", "  x = f32[2,0,3] parameter(0)\n  w = f32[3,0,7] parameter(1)\n",
                                   "  ROOT c = f32[2,7,1] convolution(x, w), window={size=3}, dim_labels=bf0_0io->bf0")},
      {"zero_features_nchw",
       MODULE("zero_features_nchw", "  x = f32[1,0,9,9] parameter(0)\n  w = f32[16,0,3,3] parameter(1)\n",
              "  ROOT c = f32[1,16,9,9] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01")},
  };
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  for (size_t i = 0; i < sizeof zero_cases / sizeof zero_cases[0]; i++) {
    const ConvCase *c = &zero_cases[i];
    Status st;
    Executable *exe = compile_gpu(c->name, c->hlo, &st);
    EXPECT(exe != NULL, "%s: %s", c->name, st.message);
    if (!exe) continue;
    int count = 0;
    HostBuffer **args = random_arguments(exe->module, &count);
    status_clear(&st);
    HostBuffer *r = executable_run(exe, args, count, &st);
    EXPECT(r != NULL, "%s: %s", c->name, st.message);
    if (r) {
      const float *out = r->data;
      int64_t n = shape_element_count(&r->shape), nonzero = 0;
      for (int64_t e = 0; e < n; e++) nonzero += out[e] != 0.0f;
      EXPECT(nonzero == 0, "%s: %lld of %lld results are not zero (first %g)", c->name, (long long)nonzero,
             (long long)n, (double)out[0]);
      status_clear(&st);
      EXPECT(executable_check(exe, args, count, r, &st), "%s: %s", c->name, st.message);
    }
    host_buffer_free(r);
    arguments_free(args, count);
    executable_free(exe);
  }
  unsetenv("FAKE_CUDA_EXECUTE");
}

/* ---- ptxas ---- */

/* A tap in padding adds nothing, as in the evaluator, even where its
 * weight is infinite or NaN (0 * inf is NaN). Each output here sees the
 * one input pixel through the kernel's centre tap; the corner taps meet
 * only padding and hold inf and NaN. */
TEST(an_infinite_or_nan_weight_facing_only_padding_adds_nothing) {
  static const char hlo[] =
      MODULE("weight_in_padding", "  x = f32[2,1,1,4] parameter(0)\n  w = f32[3,3,4,5] parameter(1)\n",
             "  ROOT c = f32[2,1,1,5] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f");
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  Status st;
  Executable *exe = compile_gpu("weight_in_padding", hlo, &st);
  EXPECT(exe != NULL, "weight_in_padding: %s", st.message);
  if (exe) {
    int count = 0;
    HostBuffer **args = random_arguments(exe->module, &count);
    float *w = args[1]->data;
    for (int e = 0; e < 20; e++) w[e] = e % 2 ? NAN : INFINITY;   /* tap (0, 0) */
    for (int e = 0; e < 20; e++) w[8 * 20 + e] = -INFINITY;       /* tap (2, 2) */
    status_clear(&st);
    HostBuffer *r = executable_run(exe, args, count, &st);
    EXPECT(r != NULL, "weight_in_padding: %s", st.message);
    if (r) {
      const float *out = r->data;
      bool finite = true;
      for (int e = 0; e < 10; e++) finite = finite && isfinite(out[e]);
      EXPECT(finite, "every output is finite (out[0] = %g)", (double)out[0]);
      status_clear(&st);
      EXPECT(executable_check(exe, args, count, r, &st), "matches the evaluator: %s", st.message);
    }
    host_buffer_free(r);
    arguments_free(args, count);
    executable_free(exe);
  }
  unsetenv("FAKE_CUDA_EXECUTE");
}

/* The first convolution of m, in the entry or a fusion's body. */
static const Instruction *first_convolution(const Module *m) {
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *c = m->computations[k];
    for (int i = 0; i < c->instruction_count; i++)
      if (c->instructions[i]->opcode == OP_CONVOLUTION) return c->instructions[i];
  }
  return NULL;
}

TEST(each_convolution_kernel_assembles_for_sm_80_and_sm_90a) {
  if (!ptxas[0]) return;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    Status st;
    status_clear(&st);
    Module *m = parse_module(cases[i].hlo, strlen(cases[i].hlo), cases[i].name, &st);
    /* The backend sees only canonical dim_labels: the pipeline's pass first. */
    OptContext ctx;
    opt_context_init(&ctx, NULL);
    bool failed = false;
    if (m) canonicalize_convolutions(m, &ctx, &failed, &st);
    opt_context_free(&ctx);
    const Instruction *conv = m && !failed ? first_convolution(m) : NULL;
    EXPECT(conv != NULL, "%s: %s", cases[i].name, st.message);
    for (int major = 8; conv && major <= 9; major++) {
      PtxTarget target;
      ptx_target_for_device(major, 0, &target, &st);
      PtxConv d;
      bool described = ptx_conv_describe(conv, &conv->operands[0]->shape, &conv->operands[1]->shape, &conv->shape,
                                         &d, &st);
      EXPECT(described, "%s: %s", cases[i].name, st.message);
      PtxBuilder b;
      ptx_builder_init(&b, &target);
      int64_t blocks;
      int threads;
      char label[96], *log = NULL;
      snprintf(label, sizeof label, "%s_%s", cases[i].name, target.name);
      if (described && ptx_conv_emit(&b, &d, NULL, "conv_kernel", &blocks, &threads, &st))
        EXPECT(ptxas_run(ptxas, work_dir, label, ptx_builder_text(&b), target.name, &log),
               "%s: ptxas -arch=%s:\n%.3000s", cases[i].name, target.name, log ? log : "");
      free(log);
      ptx_builder_free(&b);
    }
    module_free(m);
  }
}

/* Every kernel of each case's module (the convolutions with their
 * epilogues at the store) as the backend writes it for compute
 * capability major.0, saved by the fake driver, through ptxas. */
TEST(each_module_with_its_epilogues_assembles_for_sm_80_and_sm_90a) {
  if (!ptxas[0]) return;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int major = 8; major <= 9; major++) {
      char dir[128], path[192], label[128], capability[16], *log = NULL;
      snprintf(dir, sizeof dir, "%s/%s_%d", work_dir, cases[i].name, major);
      snprintf(path, sizeof path, "%s/0.ptx", dir);
      snprintf(capability, sizeof capability, "%d.0", major);
      snprintf(label, sizeof label, "module_%s_%d", cases[i].name, major);
      EXPECT(mkdir(dir, 0700) == 0, "%s: cannot make %s", cases[i].name, dir);
      setenv("FAKE_CUDA_SAVE_PTX", dir, 1);
      setenv("FAKE_CUDA_CAPABILITY", capability, 1);
      Status st;
      Executable *exe = compile_gpu(cases[i].name, cases[i].hlo, &st);
      unsetenv("FAKE_CUDA_SAVE_PTX");
      unsetenv("FAKE_CUDA_CAPABILITY");
      EXPECT(exe != NULL, "%s: %s", cases[i].name, st.message);
      char *text = exe ? file_read(path) : NULL;
      EXPECT(!exe || text, "%s: the fake driver saved no %s", cases[i].name, path);
      if (text)
        EXPECT(ptxas_run(ptxas, work_dir, label, text, major == 8 ? "sm_80" : "sm_90a", &log),
               "%s: ptxas for %s:\n%.3000s", cases[i].name, capability, log ? log : "");
      free(log);
      free(text);
      executable_free(exe);
    }
  }
}

/* ---- refusals ---- */

static void refusal_check(const char *name, const char *hlo, const char *reason) {
  Status st;
  Executable *exe = compile_gpu(name, hlo, &st);
  EXPECT(exe == NULL, "%s: compiled", name);
  EXPECT(strstr(st.message, "the GPU backend cannot compile") && strstr(st.message, reason),
         "%s: message '%s' lacks '%s'", name, st.message, reason);
  executable_free(exe);
}

TEST(a_convolution_the_kernel_does_not_do_is_a_located_refusal) {
  refusal_check("narrowing",
                MODULE("narrowing", "  x = f32[1,6,2] parameter(0)\n  k = f32[3,2,2] parameter(1)\n",
                       "  ROOT c = bf16[1,4,2] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f"),
                "mixed element types");
  refusal_check("integer",
                MODULE("integer", "  x = s32[1,6,2] parameter(0)\n  k = s32[3,2,2] parameter(1)\n",
                       "  ROOT c = s32[1,4,2] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f"),
                "a convolution of s32");
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_TRACE");
  snprintf(work_dir, sizeof work_dir, "/tmp/axle-ptxconv-XXXXXX");
  if (!mkdtemp(work_dir)) {
    printf("FAIL could not make a work directory\n");
    return 1;
  }
  if (!tool_find("ptxas", ptxas, sizeof ptxas)) printf("SKIP ptxas checks (no ptxas on PATH or in /usr/local/cuda/bin)\n");
  RUN(each_convolution_matches_the_evaluator_on_the_simulated_device);
  RUN(a_grid_of_one_block_still_computes_every_tile);
  RUN(an_nchw_epilogue_read_through_a_relabel_runs_at_the_store);
  RUN(an_infinite_or_nan_weight_facing_only_padding_adds_nothing);
  RUN(a_convolution_over_zero_input_features_is_all_zeros);
  RUN(each_convolution_kernel_assembles_for_sm_80_and_sm_90a);
  RUN(each_module_with_its_epilogues_assembles_for_sm_80_and_sm_90a);
  RUN(a_convolution_the_kernel_does_not_do_is_a_located_refusal);
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", work_dir);
  if (system(command) != 0) printf("  (could not remove %s)\n", work_dir);
  return test_summary();
}
