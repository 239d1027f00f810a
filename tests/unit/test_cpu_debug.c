/* Watching a run (src/runtime/executable_debug.c through the backends'
 * run_observed) and the two backend bugs the random differential test
 * found (test_cpu_random.c): a kernel's ops out of run order, a tuple
 * taken for a multi-output fusion it was not, and a result leaf read in
 * the wrong layout. References are plain C. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_program.h"
#include "opt/lower.h"
#include "runtime/executable.h"
#include "../test.h"

static Module *parse_text(const char *text) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "debug.hlo", &st);
  if (!m) printf("  parse: %s\n", st.message);
  return m;
}

static Executable *compile_text(const char *text, axle_backend_t backend, Status *st) {
  status_clear(st);
  Module *m = parse_text(text);
  if (!m) return NULL;
  ExecutableOptions o;
  executable_options_default(&o, backend);
  o.threads = 1;
  Executable *exe = executable_compile(m, &o, st);
  module_free(m);
  return exe;
}

static HostBuffer *f32_filled(int rank, const int64_t *dims, unsigned seed) {
  Status st;
  status_clear(&st);
  Shape s = shape_array(TYPE_F32, rank, dims);
  HostBuffer *b = host_buffer_create(&s, NULL, &st);
  float *v = b->data;
  for (int64_t i = 0; i < shape_element_count(&s); i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
  return b;
}

/* ---- the reduce through a bitcast ---- */

static const char reduce_through_bitcast[] =
    "HloModule reduce_through_bitcast\n"
    "min {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] minimum(a, b)\n}\n"
    "ENTRY main {\n"
    "  p = f32[8,64,1] parameter(0)\n"
    "  q = f32[8,64,1] parameter(1)\n"
    "  m = f32[8,64,1] maximum(p, q)\n"
    "  v = f32[8,64] reshape(m)\n"
    "  c = f32[] constant(inf)\n"
    "  ROOT r = f32[8] reduce(v, c), dimensions={1}, to_apply=min\n"
    "}\n";

/* The lowering makes the reshape's index constants in PRE while it lowers
 * the REDUCE block; they used to share registers with looped values. */
TEST(a_reduce_through_a_bitcast_matches_a_plain_c_minimum) {
  int64_t dims[3] = {8, 64, 1};
  HostBuffer *args[2] = {f32_filled(3, dims, 7), f32_filled(3, dims, 8)};
  Status st;
  Executable *exe = compile_text(reduce_through_bitcast, AXLE_BACKEND_CPU, &st);
  EXPECT(exe, "compiles: %s", st.message);
  HostBuffer *out = exe ? executable_run(exe, args, 2, &st) : NULL;
  EXPECT(!exe || out, "runs: %s", st.message);
  const float *p = args[0]->data, *q = args[1]->data;
  for (int row = 0; out && row < 8; row++) {
    float want = INFINITY;
    for (int k = 0; k < 64; k++) want = fminf(want, fmaxf(p[row * 64 + k], q[row * 64 + k]));
    float got = ((const float *)out->data)[row];
    EXPECT(got == want, "row %d: got %g, want %g", row, got, want);
  }
  host_buffer_free(out);
  executable_free(exe);
  host_buffer_free(args[0]);
  host_buffer_free(args[1]);
}

/* Every finished kernel lists its ops in the order they run. */
TEST(lowered_kernels_list_pre_ops_before_looped_ones_and_post_ops_last) {
  Module *m = parse_text(reduce_through_bitcast);
  if (!m) return;
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_CPU);
  Status st;
  status_clear(&st);
  Executable *exe = executable_compile(m, &o, &st);
  EXPECT(exe, "compiles: %s", st.message);
  const Computation *entry = exe ? executable_module_to_run(exe)->entry : NULL;
  int kernels = 0;
  for (int i = 0; entry && i < entry->instruction_count; i++) {
    const Instruction *inst = entry->instructions[i];
    if (inst->opcode != OP_FUSION) continue;
    Kernel *k = lower_to_kernel(inst, &st);
    EXPECT(k, "lowers %s: %s", inst->name, st.message);
    for (int j = 1; k && j < k->op_count; j++) {
      KernelBlock a = k->ops[j - 1].block, b = k->ops[j].block;
      int rank_a = a == KBLOCK_PRE ? 0 : a == KBLOCK_POST ? 2 : 1, rank_b = b == KBLOCK_PRE ? 0 : b == KBLOCK_POST ? 2 : 1;
      EXPECT(rank_a <= rank_b, "%s: op %%%d (block %d) after op %%%d (block %d)", inst->name, j, b, j - 1, a);
      for (int x = 0; x < k->ops[j].arg_count; x++)
        EXPECT(k->ops[j].args[x] < j, "%s: op %%%d reads %%%d, not made yet", inst->name, j, k->ops[j].args[x]);
    }
    kernels += k != NULL;
    kernel_free(k);
  }
  EXPECT(kernels == 1, "one fused kernel, got %d", kernels);
  executable_free(exe);
  module_free(m);
}

/* ---- a tuple that is not the fusion's ---- */

/* The fused group's outputs are v0 (read by the slice, in another group)
 * and v10; the root tuple reads v8 and v10: the same count, but not the
 * fusion's outputs. The fusion pass used to take it for the fusion. */
static const char tuple_not_the_fusion[] =
    "HloModule tuple_not_the_fusion\n"
    "min {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] minimum(a, b)\n}\n"
    "ENTRY main {\n"
    "  p0 = f32[17] parameter(0)\n"
    "  v0 = f32[17] negate(p0)\n"
    "  v1 = f32[17] minimum(v0, p0)\n"
    "  v2 = pred[17] compare(v1, v0), direction=GE\n"
    "  v3 = f32[17] select(v2, v1, v0)\n"
    "  v6 = f32[2] slice(v3), slice={[6:12:3]}\n"
    "  c7 = f32[] constant(inf)\n"
    "  v8 = f32[] reduce(v6, c7), dimensions={0}, to_apply=min\n"
    "  v10 = f32[17] add(p0, v3)\n"
    "  ROOT result = (f32[], f32[17]) tuple(v8, v10)\n"
    "}\n";

TEST(a_tuple_of_a_fusion_output_and_another_value_is_kept) {
  int64_t dims[1] = {17};
  HostBuffer *arg = f32_filled(1, dims, 3);
  Status st;
  Executable *exe = compile_text(tuple_not_the_fusion, AXLE_BACKEND_CPU, &st);
  EXPECT(exe, "compiles: %s", st.message);
  HostBuffer *out = exe ? executable_run(exe, &arg, 1, &st) : NULL;
  EXPECT(!exe || out, "runs: %s", st.message);
  const float *p = arg->data;
  float v3[17];
  for (int i = 0; i < 17; i++) {
    float v0 = -p[i], v1 = fminf(v0, p[i]);
    v3[i] = v1 >= v0 ? v1 : v0;
  }
  if (out) {
    float want8 = fminf(v3[6], v3[9]), got8 = *(const float *)out->elements[0]->data;
    EXPECT(got8 == want8, "the reduce: got %g, want %g", got8, want8);
    for (int i = 0; i < 17; i++) {
      float got = ((const float *)out->elements[1]->data)[i];
      EXPECT(got == p[i] + v3[i], "v10[%d]: got %g, want %g", i, got, p[i] + v3[i]);
    }
  }
  host_buffer_free(out);
  executable_free(exe);
  host_buffer_free(arg);
}

/* ---- a parameter in another layout, returned through a tuple ---- */

/* The tuple's text gives no layout, so its element has the default one;
 * the bytes are the parameter's, in {0,1}. They used to be copied out as
 * if row-major. */
TEST(a_parameter_in_another_layout_comes_back_through_a_tuple_unchanged) {
  int64_t dims[2] = {16, 3};
  HostBuffer *arg = f32_filled(2, dims, 9);
  Status st;
  Executable *exe = compile_text("HloModule t\nENTRY main {\n  p = f32[16,3]{0,1} parameter(0)\n"
                                 "  n = f32[16,3] negate(p)\n  ROOT t = (f32[16,3], f32[16,3]) tuple(p, n)\n}\n",
                                 AXLE_BACKEND_CPU, &st);
  EXPECT(exe, "compiles: %s", st.message);
  HostBuffer *out = exe ? executable_run(exe, &arg, 1, &st) : NULL;
  EXPECT(!exe || out, "runs: %s", st.message);
  const float *p = arg->data;
  for (int i = 0; out && i < 48; i++) {
    float got = ((const float *)out->elements[0]->data)[i], neg = ((const float *)out->elements[1]->data)[i];
    EXPECT(got == p[i], "element %d of p: got %g, want %g", i, got, p[i]);
    EXPECT(neg == -p[i], "element %d of n: got %g, want %g", i, neg, -p[i]);
  }
  host_buffer_free(out);
  executable_free(exe);
  host_buffer_free(arg);
}

/* A get-tuple-element without a layout names bytes in its tuple
 * parameter's element layout, {0,1}: the kernel must read them in it. */
TEST(a_kernel_reads_a_tuple_element_in_the_layout_of_its_bytes) {
  int64_t dims[2] = {4, 3}, two[1] = {2};
  HostBuffer *leaves[2] = {f32_filled(2, dims, 4), f32_filled(1, two, 5)};
  Status st;
  status_clear(&st);
  HostBuffer *arg = host_buffer_create_tuple(leaves, 2, &st);
  Executable *exe = compile_text("HloModule g\nENTRY main {\n  p = (f32[4,3]{0,1}, f32[2]) parameter(0)\n"
                                 "  e = f32[4,3] get-tuple-element(p), index=0\n  ROOT n = f32[4,3] negate(e)\n}\n",
                                 AXLE_BACKEND_CPU, &st);
  EXPECT(exe, "compiles: %s", st.message);
  HostBuffer *out = exe && arg ? executable_run(exe, &arg, 1, &st) : NULL;
  EXPECT(!exe || out, "runs: %s", st.message);
  const float *p = leaves[0]->data;
  for (int i = 0; out && i < 12; i++) {
    float got = ((const float *)out->data)[i];
    EXPECT(got == -p[i], "element %d: got %g, want %g", i, got, -p[i]);
  }
  host_buffer_free(out);
  executable_free(exe);
  host_buffer_free(arg);
  host_buffer_free(leaves[0]);
  host_buffer_free(leaves[1]);
}

/* ---- find-nan and check through the API ---- */

static const char log_of_negative[] =
    "HloModule log_of_negative\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  a = f32[4] abs(x)\n"
    "  n = f32[4] negate(a), metadata={op_name=\"jit(f)/neg\" source_file=\"m.py\" source_line=3}\n"
    "  l = f32[4] log(n), metadata={op_name=\"jit(f)/log\" source_file=\"m.py\" source_line=4}\n"
    "  ROOT r = f32[4] multiply(l, x)\n"
    "}\n";

static void find_nan_expect(axle_backend_t backend, const char *want) {
  int64_t dims[1] = {4};
  HostBuffer *arg = f32_filled(1, dims, 5);
  Status st;
  Executable *exe = compile_text(log_of_negative, backend, &st);
  EXPECT(exe, "compiles: %s", st.message);
  DebugOptions o = {.find_nan = true};
  DebugReport report;
  status_clear(&st);
  HostBuffer *out = exe ? executable_run_debug(exe, &arg, 1, &o, &report, &st) : NULL;
  EXPECT(exe == NULL || out == NULL, "the run stops at the NaN");
  EXPECT(strstr(st.message, want) != NULL, "message names %s: %s", want, st.message);
  EXPECT(status_exit_code(&st) == 1, "a run-time error (exit 1), got code %d", st.code);
  host_buffer_free(out);
  executable_free(exe);
  host_buffer_free(arg);
}

TEST(find_nan_names_the_first_instruction_with_its_source_line_on_the_interpreter) {
  find_nan_expect(AXLE_BACKEND_INTERP, "l (jit(f)/log at m.py:4) is the first instruction to produce a NaN");
}

TEST(find_nan_names_the_first_instruction_inside_a_cpu_fusion) {
  find_nan_expect(AXLE_BACKEND_CPU, "the first is l.1 (jit(f)/log at m.py:4)");
}

TEST(check_passes_every_instruction_of_a_correct_cpu_run) {
  int64_t da[2] = {37, 19}, db[2] = {19, 41};
  HostBuffer *args[2] = {f32_filled(2, da, 1), f32_filled(2, db, 2)};
  Status st;
  Executable *exe = compile_text("HloModule d\nENTRY main {\n  a = f32[37,19] parameter(0)\n"
                                 "  b = f32[19,41] parameter(1)\n  e = f32[37,19] exponential(a)\n"
                                 "  ROOT ab = f32[37,41] dot(e, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
                                 AXLE_BACKEND_CPU, &st);
  EXPECT(exe, "compiles: %s", st.message);
  DebugOptions o = {.check = true, .find_nan = true};
  DebugReport report;
  status_clear(&st);
  HostBuffer *out = exe ? executable_run_debug(exe, args, 2, &o, &report, &st) : NULL;
  EXPECT(!exe || out, "runs and matches: %s", st.message);
  EXPECT(!out || report.instructions == 2, "the exponential's kernel and the GEMM are checked, got %d",
         report.instructions);
  host_buffer_free(out);
  executable_free(exe);
  host_buffer_free(args[0]);
  host_buffer_free(args[1]);
}

int main(void) {
  RUN(a_reduce_through_a_bitcast_matches_a_plain_c_minimum);
  RUN(lowered_kernels_list_pre_ops_before_looped_ones_and_post_ops_last);
  RUN(a_tuple_of_a_fusion_output_and_another_value_is_kept);
  RUN(a_parameter_in_another_layout_comes_back_through_a_tuple_unchanged);
  RUN(a_kernel_reads_a_tuple_element_in_the_layout_of_its_bytes);
  RUN(find_nan_names_the_first_instruction_with_its_source_line_on_the_interpreter);
  RUN(find_nan_names_the_first_instruction_inside_a_cpu_fusion);
  RUN(check_passes_every_instruction_of_a_correct_cpu_run);
  return test_summary();
}
