/* The GPU backend's dots (src/emit_ptx/gpu_dot.c, ptx_gemm*.c) without a
 * GPU: each module is compiled for the fake driver (tests/fake_cuda) at
 * compute capability 8.0 and 9.0 and run on its SIMT simulator
 * (FAKE_CUDA_EXECUTE=1), and the results are compared with the evaluator
 * (executable_check). Operands are multiples of 1/8 in [-2, 2], so every
 * f32 sum is exact and a result may differ from the evaluator's only by
 * the one rounding to the result type, which both do the same way. The
 * PTX each compile loads is kept (FAKE_CUDA_SAVE_PTX) and assembled by
 * ptxas for sm_80 and sm_90a (skipped with a message without ptxas); where
 * cuobjdump is found, the tensor-core kernels' SASS must hold HMMA. */
#include "complex_compat.h"
#include <math.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit_ptx/ptx_gemm.h"
#include "runtime/executable.h"
#include "tool_files.h"
#include "../fake_cuda/ptx_simulate.h"
#include "../test.h"

static char fake_driver[4096], work_dir[64], ptxas[4096], cuobjdump[4096];
static int module_number;
static bool no_wgmma;  /* compile with --gpu_no_wgmma */

/* Arguments for the entry's parameters: multiples of 1/8 in [-2, 2]
 * (integers: -16..16), from a fixed sequence. */
static HostBuffer **make_arguments(const Module *m, int *count, Status *st) {
  const Computation *e = m->entry;
  HostBuffer **args = calloc((size_t)e->parameter_count + 1, sizeof *args);
  uint32_t seed = 12345;
  for (int p = 0; p < e->parameter_count; p++) {
    Shape s = e->parameters[p]->shape;
    shape_set_default_layout(&s);
    Literal *lit = literal_create(&s);
    int64_t n = shape_element_count(&s);
    for (int64_t i = 0; i < n; i++) {
      seed = seed * 1664525u + 1013904223u;
      int v = (int)(seed >> 16) % 33 - 16;
      literal_set_f64(lit, i, type_is_float(s.type) ? v / 8.0 : (double)v);
    }
    args[p] = host_buffer_create(&s, lit->data, st);
    literal_free(lit);
  }
  *count = e->parameter_count;
  return args;
}

static bool run_tool(const char *tool, const char *arguments, const char *log_path) {
  char command[16384];
  snprintf(command, sizeof command, "'%s' %s >'%s' 2>&1", tool, arguments, log_path);
  return system(command) == 0;
}

/* ptxas on every module saved in dir for arch; for the tensor-core path,
 * cuobjdump's SASS must show HMMA. */
static void check_saved_ptx(const char *label, const char *dir, const char *arch, const char *want_mma) {
  bool want_hmma = want_mma != NULL;
  for (int n = 0;; n++) {
    char ptx[1024], cubin[1024], log[1024], args[4096];
    snprintf(ptx, sizeof ptx, "%s/%d.ptx", dir, n);
    if (access(ptx, R_OK) != 0) {
      EXPECT(n > 0, "%s: no PTX was loaded", label);
      return;
    }
    char *text = file_read(ptx);
    EXPECT(text && strstr(text, "gemm"), "%s: no .entry named gemm", label);
    EXPECT(!want_hmma || (text && strstr(text, want_mma)), "%s: no %s in the PTX", label, want_mma);
    EXPECT(want_hmma || !text || !strstr(text, "mma.sync"), "%s: mma.sync where none was wanted", label);
    free(text);
    if (!ptxas[0]) continue;
    snprintf(cubin, sizeof cubin, "%s/%d_%s.cubin", dir, n, arch);
    snprintf(log, sizeof log, "%s/%d_%s.log", dir, n, arch);
    snprintf(args, sizeof args, "-arch=%s -o '%s' '%s'", arch, cubin, ptx);
    bool ok = run_tool(ptxas, args, log);
    char *why = ok ? NULL : file_read(log);
    EXPECT(ok, "%s: ptxas -arch=%s:\n%.2000s", label, arch, why ? why : "");
    free(why);
    if (!ok || !want_hmma || !cuobjdump[0]) continue;
    snprintf(args, sizeof args, "-sass '%s'", cubin);
    snprintf(log, sizeof log, "%s/%d_%s.sass", dir, n, arch);
    ok = run_tool(cuobjdump, args, log);
    char *sass = file_read(log);
    const char *tensor = strstr(want_mma, "wgmma") ? "HGMMA" : "HMMA";
    EXPECT(ok && sass && strstr(sass, tensor), "%s: no %s in the SASS for %s", label, tensor, arch);
    free(sass);
  }
}

/* The fake driver, running launches on the simulator at compute
 * capability `capability`, keeping each loaded module's PTX in a new
 * directory under work_dir (its path into dir); leave undoes it. */
static void simulated_device_enter(const char *capability, char *dir, size_t size) {
  snprintf(dir, size, "%s/%d", work_dir, module_number++);
  mkdir(dir, 0700);
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  setenv("FAKE_CUDA_EXECUTE", "1", 1);
  setenv("FAKE_CUDA_CAPABILITY", capability, 1);
  setenv("FAKE_CUDA_SAVE_PTX", dir, 1);
}

static void simulated_device_leave(void) {
  unsetenv("FAKE_CUDA_SAVE_PTX");
  unsetenv("FAKE_CUDA_CAPABILITY");
  unsetenv("FAKE_CUDA_EXECUTE");
}

/* Compiles hlo for the simulated device of capability `capability`, runs
 * it, compares with the evaluator, and checks the PTX it loaded. */
static void dot_case_at(const char *label, const char *hlo, const char *capability, const char *want_mma) {
  char dir[512];
  simulated_device_enter(capability, dir, sizeof dir);
  Status st;
  status_clear(&st);
  Module *m = parse_module(hlo, strlen(hlo), label, &st);
  EXPECT(m != NULL, "%s: %s", label, st.message);
  if (!m) return;
  ExecutableOptions options;
  executable_options_default(&options, AXLE_BACKEND_GPU);
  options.opt.gpu_no_wgmma = no_wgmma;
  Executable *exe = executable_compile(m, &options, &st);
  EXPECT(exe != NULL, "%s at %s: %s", label, capability, st.message);
  int count = 0;
  HostBuffer **args = exe ? make_arguments(m, &count, &st) : NULL;
  HostBuffer *r = exe ? executable_run(exe, args, count, &st) : NULL;
  EXPECT(!exe || r != NULL, "%s at %s: %s", label, capability, st.message);
  if (r) {
    status_clear(&st);
    EXPECT(executable_check(exe, args, count, r, &st), "%s at %s: %s", label, capability, st.message);
  }
  if (exe) check_saved_ptx(label, dir, capability[0] == '8' ? "sm_80" : "sm_90a", want_mma);
  host_buffer_free(r);
  for (int i = 0; args && i < count; i++) host_buffer_free(args[i]);
  free(args);
  executable_free(exe);
  module_free(m);
  simulated_device_leave();
}

static void dot_case(const char *label, const char *hlo) {
  dot_case_at(label, hlo, "8.0", NULL);
  dot_case_at(label, hlo, "9.0", NULL);
}

/* f16/bf16: mma.sync on sm_80; on sm_90a, wgmma fed by the TMA (with a
 * pack kernel first for an operand whose k is not contiguous). */
static void mma_case(const char *label, const char *hlo) {
  dot_case_at(label, hlo, "8.0", "mma.sync.aligned.m16n8k16");
  dot_case_at(label, hlo, "9.0", "wgmma.mma_async.sync.aligned.m64n128k16");
}

#define ENTRY2(lhs, rhs, out, dims)                                                              \
  "HloModule m\nENTRY e {\n  a = " lhs " parameter(0)\n  b = " rhs " parameter(1)\n  ROOT d = " out \
  " dot(a, b), " dims "\n}\n"

TEST(a_one_by_one_by_one_product) {
  dot_case("1x1x1", ENTRY2("f32[1,1]", "f32[1,1]", "f32[1,1]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
}

TEST(odd_shapes_have_their_edges_masked) {
  dot_case("33x65x17",
           ENTRY2("f32[33,17]", "f32[17,65]", "f32[33,65]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  dot_case("several tiles and k steps",
           ENTRY2("f32[130,40]", "f32[40,70]", "f32[130,70]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
}

TEST(transposed_operands_and_column_major_layouts) {
  dot_case("lhs^T rhs^T",
           ENTRY2("f32[17,33]", "f32[65,17]", "f32[33,65]", "lhs_contracting_dims={0}, rhs_contracting_dims={1}"));
  dot_case("column-major", "HloModule m, entry_computation_layout={(f32[33,17]{0,1}, f32[17,9]{0,1})->f32[33,9]{0,1}}\n"
                           "ENTRY e {\n  a = f32[33,17]{0,1} parameter(0)\n  b = f32[17,9]{0,1} parameter(1)\n"
                           "  ROOT d = f32[33,9]{0,1} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
}

TEST(batch_dims_and_several_contracting_dims) {
  dot_case("batch", ENTRY2("f32[3,5,7]", "f32[3,7,4]", "f32[3,5,4]",
                           "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"));
  dot_case("batch in the middle",
           ENTRY2("f32[4,2,6,3]", "f32[3,6,5,2]", "f32[2,4,5]",
                  "lhs_batch_dims={1}, lhs_contracting_dims={2,3}, rhs_batch_dims={3}, rhs_contracting_dims={1,0}"));
  dot_case("empty contraction", ENTRY2("f32[3,0]", "f32[0,4]", "f32[3,4]",
                                       "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
}

/* Dims in odd orders, which canonicalize-dots reads through relabels of
 * the operands' own bytes: batch last, contracting first, several
 * contracting dims in reverse order, a column-major operand, a fused
 * epilogue, and f16 through the tensor cores. */
TEST(odd_dimension_orders_after_canonicalization) {
  dot_case("batch last, contracting first",
           ENTRY2("f32[6,4,3]", "f32[6,5,3]", "f32[3,4,5]",
                  "lhs_batch_dims={2}, lhs_contracting_dims={0}, rhs_batch_dims={2}, rhs_contracting_dims={0}"));
  dot_case("contracting pairs reversed",
           ENTRY2("f32[5,3,2,7]", "f32[2,7,4,5]", "f32[7,3,4]",
                  "lhs_batch_dims={3}, lhs_contracting_dims={2,0}, rhs_batch_dims={1}, rhs_contracting_dims={0,3}"));
  dot_case("column-major lhs", ENTRY2("f32[3,7,9]{0,1,2}", "f32[3,9,5]", "f32[3,7,5]",
                                      "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                                      "rhs_contracting_dims={1}"));
  dot_case("fused bias, rhs transposed",
           "HloModule m\nENTRY e {\n  x = f32[19,24] parameter(0)\n  w = f32[37,24] parameter(1)\n"
           "  bias = f32[37] parameter(2)\n"
           "  d = f32[19,37] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
           "  bb = f32[19,37] broadcast(bias), dimensions={1}\n  ROOT s = f32[19,37] add(d, bb)\n}\n");
  mma_case("f16 batch last", ENTRY2("f16[32,16,2]", "f16[32,24,2]", "f32[2,16,24]",
                                    "lhs_batch_dims={2}, lhs_contracting_dims={0}, rhs_batch_dims={2}, "
                                    "rhs_contracting_dims={0}"));
}

/* Random dots: 0-2 batch, 1-2 contracting and 0-2 free dims a side, each
 * operand's dims in a random order and every array in a random layout
 * (the CPU's test_cpu_products draws the same kind). */
static uint64_t random_state = 2026;
static int64_t pick(int64_t n) { return (int64_t)(literal_random_next(&random_state) % (uint64_t)n); }

static void shuffle(int64_t *v, int n) {
  for (int i = n - 1; i > 0; i--) {
    int64_t j = pick(i + 1), t = v[i];
    v[i] = v[j];
    v[j] = t;
  }
}

/* "f32[2,3]{0,1}": dims as given, a random layout. */
static int shape_text(char *out, const int64_t *dims, int rank) {
  int64_t layout[8];
  for (int i = 0; i < rank; i++) layout[i] = i;
  shuffle(layout, rank);
  int n = sprintf(out, "f32[");
  for (int i = 0; i < rank; i++) n += sprintf(out + n, "%s%lld", i ? "," : "", (long long)dims[i]);
  n += sprintf(out + n, "]{");
  for (int i = 0; i < rank; i++) n += sprintf(out + n, "%s%lld", i ? "," : "", (long long)layout[i]);
  return n + sprintf(out + n, "}");
}

static int list_text(char *out, const int64_t *v, int n) {
  int at = 0;
  for (int i = 0; i < n; i++) at += sprintf(out + at, "%s%lld", i ? "," : "", (long long)v[i]);
  out[at] = 0;
  return at;
}

static void random_dot_text(char *text) {
  static const int64_t sizes[4] = {1, 2, 5, 9};
  int nb = (int)pick(3), nk = 1 + (int)pick(2), nm = (int)pick(3), nn = (int)pick(3);
  int lrank = nb + nk + nm, rrank = nb + nk + nn, r = 0;
  int64_t shared[4], lpos[8], rpos[8], ldims[8], rdims[8], odims[8];
  for (int i = 0; i < 4; i++) shared[i] = sizes[pick(4)];
  for (int i = 0; i < lrank; i++) lpos[i] = i;  /* where logical dim i (batch, contracting, free) sits */
  for (int i = 0; i < rrank; i++) rpos[i] = i;
  shuffle(lpos, lrank);
  shuffle(rpos, rrank);
  for (int i = 0; i < lrank; i++) ldims[lpos[i]] = i < nb + nk ? shared[i] : sizes[pick(4)];
  for (int i = 0; i < rrank; i++) rdims[rpos[i]] = i < nb + nk ? shared[i] : sizes[pick(4)];
  for (int i = 0; i < nb; i++) odims[r++] = shared[i];
  for (int d = 0; d < lrank; d++)  /* free dims in increasing order */
    for (int i = nb + nk; i < lrank; i++)
      if (lpos[i] == d) odims[r++] = ldims[d];
  for (int d = 0; d < rrank; d++)
    for (int i = nb + nk; i < rrank; i++)
      if (rpos[i] == d) odims[r++] = rdims[d];
  int n = sprintf(text, "HloModule random_dot\nENTRY e {\n  a = ");
  n += shape_text(text + n, ldims, lrank);
  n += sprintf(text + n, " parameter(0)\n  b = ");
  n += shape_text(text + n, rdims, rrank);
  n += sprintf(text + n, " parameter(1)\n  ROOT d = ");
  n += shape_text(text + n, odims, r);
  n += sprintf(text + n, " dot(a, b), lhs_batch_dims={");
  n += list_text(text + n, lpos, nb);
  n += sprintf(text + n, "}, rhs_batch_dims={");
  n += list_text(text + n, rpos, nb);
  n += sprintf(text + n, "}, lhs_contracting_dims={");
  n += list_text(text + n, lpos + nb, nk);
  n += sprintf(text + n, "}, rhs_contracting_dims={");
  n += list_text(text + n, rpos + nb, nk);
  sprintf(text + n, "}\n}\n");
}

TEST(random_dimension_orders_and_layouts_match_the_evaluator) {
  char text[1024];
  for (int i = 0; i < 8; i++) {
    random_dot_text(text);
    dot_case(text, text);
  }
}

TEST(other_element_types_on_cuda_cores) {
  dot_case("f64", ENTRY2("f64[9,13]", "f64[13,5]", "f64[9,5]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  dot_case("s32", ENTRY2("s32[9,13]", "s32[13,5]", "s32[9,5]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  dot_case("s8 to s32",
           ENTRY2("s8[9,13]", "s8[13,5]", "s32[9,5]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  dot_case("u8", ENTRY2("u8[9,13]", "u8[13,5]", "u8[9,5]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  dot_case("s64", ENTRY2("s64[9,13]", "s64[13,5]", "s64[9,5]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  dot_case("f32 to f16", ENTRY2("f32[9,13]", "f32[13,5]", "f16[9,5]",
                                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
}

TEST(an_output_fusion_applies_its_epilogue) {
  dot_case("bias and relu",
           "HloModule m\nENTRY e {\n  x = f32[19,24] parameter(0)\n  w = f32[24,37] parameter(1)\n"
           "  bias = f32[37] parameter(2)\n"
           "  d = f32[19,37] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "  bb = f32[19,37] broadcast(bias), dimensions={1}\n  s = f32[19,37] add(d, bb)\n"
           "  zero = f32[] constant(0)\n  zb = f32[19,37] broadcast(zero), dimensions={}\n"
           "  ROOT r = f32[19,37] maximum(s, zb)\n}\n");
}

/* Fusions given in the input around dots in other orders: the dot inside
 * the body is made canonical over relabels of the fusion's parameters,
 * which the GEMM reads where they lie. */
TEST(input_fusions_around_dots_in_other_orders_match_the_evaluator) {
  dot_case("input kOutput, contracting dims first",
           "HloModule m\n"
           "fused {\n  p0 = f32[16,8] parameter(0)\n  p1 = f32[4,16] parameter(1)\n  p2 = f32[4] parameter(2)\n"
           "  d = f32[8,4] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n"
           "  b = f32[8,4] broadcast(p2), dimensions={1}\n  s = f32[8,4] add(d, b)\n"
           "  z = f32[8,4] broadcast(f32[] constant(0)), dimensions={}\n  ROOT r = f32[8,4] maximum(s, z)\n}\n"
           "ENTRY e {\n  a = f32[16,8] parameter(0)\n  w = f32[4,16] parameter(1)\n  bias = f32[4] parameter(2)\n"
           "  ROOT f = f32[8,4] fusion(a, w, bias), kind=kOutput, calls=fused\n}\n");
  dot_case("input kLoop root dot, batch dims last and in the middle",
           "HloModule m\n"
           "fused {\n  p0 = f32[6,5,3] parameter(0)\n  p1 = f32[7,3,6] parameter(1)\n"
           "  ROOT d = f32[3,5,7] dot(p0, p1), lhs_batch_dims={2}, rhs_batch_dims={1}, "
           "lhs_contracting_dims={0}, rhs_contracting_dims={2}\n}\n"
           "ENTRY e {\n  a = f32[6,5,3] parameter(0)\n  b = f32[7,3,6] parameter(1)\n"
           "  ROOT f = f32[3,5,7] fusion(a, b), kind=kLoop, calls=fused\n}\n");
  dot_case("input kOutput, column-major lhs, two contracting dims",
           "HloModule m\n"
           "fused {\n  p0 = f32[3,4,6]{0,1,2} parameter(0)\n  p1 = f32[4,5,3] parameter(1)\n"
           "  d = f32[6,5] dot(p0, p1), lhs_contracting_dims={1,0}, rhs_contracting_dims={0,2}\n"
           "  ROOT n = f32[6,5] negate(d)\n}\n"
           "ENTRY e {\n  a = f32[3,4,6]{0,1,2} parameter(0)\n  b = f32[4,5,3] parameter(1)\n"
           "  ROOT f = f32[6,5] fusion(a, b), kind=kOutput, calls=fused\n}\n");
}

TEST(half_precision_products) {
  mma_case("f16", ENTRY2("f16[33,40]", "f16[40,17]", "f16[33,17]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  mma_case("bf16 to f32", ENTRY2("bf16[21,70]", "bf16[70,130]", "f32[21,130]",
                                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  mma_case("f16 batched, transposed",
           ENTRY2("f16[2,24,9]", "f16[2,11,24]", "f32[2,9,11]",
                  "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={2}"));
}

/* Shapes for sm_90a's stage ring: k past four stages of 64 (the ring wraps
 * and refills), several 128x128 tiles, batches read in place by the TMA
 * (k contiguous in both), and k of no multiple of 8 (both packed). */
TEST(hopper_stage_ring_tiles_and_packing) {
  mma_case("bf16 batched, k = 320 in place",
           ENTRY2("bf16[2,130,320]", "bf16[2,129,320]", "f32[2,130,129]",
                  "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}"));
  mma_case("f16, k = 37, three column tiles",
           ENTRY2("f16[40,37]", "f16[37,300]", "f16[40,300]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  /* --gpu_no_wgmma keeps Hopper on mma.sync */
  no_wgmma = true;
  dot_case_at("bf16 with --gpu_no_wgmma",
              ENTRY2("bf16[21,70]", "bf16[70,130]", "f32[21,130]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
              "9.0", "mma.sync.aligned.m16n8k16");
  no_wgmma = false;
}

/* f32 goes through tf32 only where the module's algorithm= says so; the
 * arguments (multiples of 1/8 up to 2) are exact in tf32, so the result
 * matches the evaluator's exactly. Without the algorithm (or with
 * dot_f32_f32_f32) the PTX must hold no mma.sync (dot_case checks). */
TEST(f32_through_tf32_only_where_the_algorithm_allows) {
  const char *tf32 = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
  dot_case_at("tf32 33x65x17", ENTRY2("f32[33,17]", "f32[17,65]", "f32[33,65]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_tf32_tf32_f32"), "8.0", tf32);
  dot_case_at("tf32 33x65x17", ENTRY2("f32[33,17]", "f32[17,65]", "f32[33,65]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_tf32_tf32_f32"), "9.0", tf32);
  dot_case_at("tf32 batched, transposed",
              ENTRY2("f32[2,24,9]", "f32[2,70,24]", "f32[2,9,70]",
                     "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={2}, "
                     "algorithm=dot_tf32_tf32_f32"),
              "8.0", tf32);
  dot_case("f32 algorithm", ENTRY2("f32[33,17]", "f32[17,65]", "f32[33,65]",
                                   "lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_f32_f32_f32"));
  dot_case("tf32_x3 stays f32", ENTRY2("f32[9,17]", "f32[17,5]", "f32[9,5]",
                                       "lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                                       "algorithm=dot_tf32_tf32_f32_x3"));
}

/* The algorithm survives a print and a reparse; a tf32 algorithm on
 * non-f32 operands is rejected by the verifier. */
TEST(the_dot_algorithm_round_trips_and_is_checked) {
  Status st;
  status_clear(&st);
  const char *hlo = ENTRY2("f32[2,3]", "f32[3,4]", "f32[2,4]",
                           "lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_tf32_tf32_f32");
  Module *m = parse_module(hlo, strlen(hlo), "algorithm", &st);
  EXPECT(m != NULL, "%s", st.message);
  StrBuf sb = {0};
  if (m) print_module(&sb, m);
  const char *text = sb.data;
  EXPECT(text && strstr(text, "algorithm=dot_tf32_tf32_f32"), "printed: %s", text ? text : "");
  Module *again = text ? parse_module(text, strlen(text), "again", &st) : NULL;
  EXPECT(again && attrs_dot(&again->entry->root->attrs)->algorithm == DOT_ALG_TF32_TF32_F32, "%s", st.message);
  strbuf_free(&sb);
  module_free(again);
  module_free(m);
  status_clear(&st);
  const char *wrong = ENTRY2("f16[2,3]", "f16[3,4]", "f32[2,4]",
                             "lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_tf32_tf32_f32");
  m = parse_module(wrong, strlen(wrong), "wrong", &st);
  bool rejected = !m || !verify_module(m, &st);
  EXPECT(rejected && strstr(st.message, "f32 operands"), "tf32 on f16 was accepted: %s", st.message);
  module_free(m);
}

/* Group sizes as constants: arguments are random, sizes must not be. */
TEST(ragged_dots_take_their_groups) {
  dot_case("ragged rows", "HloModule m\nENTRY e {\n  a = f32[70,9] parameter(0)\n  b = f32[3,9,5] parameter(1)\n"
                          "  sizes = s32[3] constant({20, 0, 41})\n"
                          "  ROOT d = f32[70,5] ragged-dot(a, b, sizes), lhs_contracting_dims={1}, "
                          "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}\n}\n");
  dot_case("ragged sums", "HloModule m\nENTRY e {\n  a = f32[9,40] parameter(0)\n  b = f32[40,5] parameter(1)\n"
                          "  sizes = s64[2] constant({13, 20})\n"
                          "  ROOT d = f32[2,9,5] ragged-dot(a, b, sizes), lhs_contracting_dims={1}, "
                          "rhs_contracting_dims={0}, lhs_ragged_dims={1}\n}\n");
}

/* group_sizes of XLA's [batch..., prefix..., G] forms (ragged_dot_sizes_prefix),
 * in a non-default layout: the group range is per row (ragged rows with
 * a leading free dim, and a free dim after the ragged one) or per k (a
 * ragged contraction over several dims). A negative size moves the running
 * end back: a row is in the first group whose end passes it, as the
 * evaluator's group_of says ({10, -5, 30}: rows 5..9 are group 0's alone). */
TEST(ragged_dots_with_sizes_per_index_in_any_layout) {
  dot_case("ragged rows, sizes per batch and leading free dim, column-major",
           "HloModule m\nENTRY e {\n  a = f32[2,3,40,2,9] parameter(0)\n  b = f32[2,9,3,5] parameter(1)\n"
           "  sizes = s32[2,3,3]{0,1,2} constant({{{10, -5, 30}, {40, 0, 0}, {0, 0, 7}}, "
           "{{3, 3, 3}, {20, 30, 5}, {1, 38, 1}}})\n"
           "  ROOT d = f32[2,3,40,2,5] ragged-dot(a, b, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, "
           "lhs_contracting_dims={4}, rhs_contracting_dims={1}, lhs_ragged_dims={2}, rhs_group_dims={2}\n}\n");
  dot_case("ragged sums over two contracting dims, sizes per batch and earlier contracting dim",
           "HloModule m\nENTRY e {\n  a = f32[2,6,3,40] parameter(0)\n  b = f32[2,6,40,5] parameter(1)\n"
           "  sizes = s64[2,6,2] constant({{{13, 20}, {0, 40}, {40, 0}, {5, 5}, {39, 1}, {20, 20}}, "
           "{{1, 2}, {30, 30}, {7, -3}, {0, 0}, {17, 23}, {40, 40}}})\n"
           "  ROOT d = f32[2,2,3,5] ragged-dot(a, b, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, "
           "lhs_contracting_dims={1,3}, rhs_contracting_dims={1,2}, lhs_ragged_dims={3}\n}\n");
}

/* A ragged contraction zeroes lhs outside the group and takes the dot, as
 * the evaluator does: rhs is not masked, so its infinity at k = 3 (group
 * 1's) makes group 0's sums NaN (0 * inf). */
TEST(a_ragged_contraction_masks_lhs_alone) {
  dot_case("ragged sums, an infinity in rhs outside the group",
           "HloModule m\nENTRY e {\n  a = f32[3,4] parameter(0)\n"
           "  b = f32[4,2] constant({{1, 2}, {3, 4}, {5, 6}, {inf, 7}})\n  sizes = s32[2] constant({2, 2})\n"
           "  ROOT d = f32[2,3,2] ragged-dot(a, b, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
           "lhs_ragged_dims={1}\n}\n");
}

/* A negative group size moves the running end back: sizes {10, -5, 30}
 * end at 10, 5 and 35, and a row is in the first group whose end passes
 * it (eval_dot_variants.c's group_of), so rows 5..9 are group 0's alone
 * and group 2 starts at row 10, not 5. */
TEST(a_negative_group_size_moves_the_end_back) {
  dot_case("ragged rows, a negative size",
           "HloModule m\nENTRY e {\n  a = f32[70,9] parameter(0)\n  b = f32[3,9,5] parameter(1)\n"
           "  sizes = s32[3] constant({10, -5, 30})\n"
           "  ROOT d = f32[70,5] ragged-dot(a, b, sizes), lhs_contracting_dims={1}, "
           "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}\n}\n");
}

TEST(a_scaled_dot_scales_each_block) {
  dot_case("scaled, batched",
           "HloModule m\nENTRY e {\n  a = f32[2,70,24] parameter(0)\n  b = f32[2,24,9] parameter(1)\n"
           "  sa = f32[2,35,3] parameter(2)\n  sb = f32[1,3,9] parameter(3)\n"
           "  ROOT d = f32[2,70,9] scaled-dot(a, b, sa, sb), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
           "rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n");
}

/* A complex dot runs gemm.complex, whose arithmetic is the evaluator's to
 * the bit (both parts summed in f64, each step rounded): operands with
 * sevenths (inexact in binary) in both parts must give the evaluator's
 * exact bytes, at both capabilities; the PTX assembles. A scaled complex
 * GEMM is still refused with a reason. */
static void complex_case(const char *label, const char *hlo, const char *capability) {
  char dir[512];
  simulated_device_enter(capability, dir, sizeof dir);
  Status st;
  status_clear(&st);
  Module *m = parse_module(hlo, strlen(hlo), label, &st);
  EXPECT(m != NULL, "%s: %s", label, st.message);
  if (!m) return;
  Literal *lits[2];
  HostBuffer *args[2];
  uint32_t seed = 777;
  for (int p = 0; p < 2; p++) {
    Shape s = m->entry->parameters[p]->shape;
    shape_set_default_layout(&s);
    lits[p] = literal_create(&s);
    for (int64_t i = 0; i < shape_element_count(&s); i++) {
      seed = seed * 1664525u + 1013904223u;
      double re = (int)(seed >> 16) % 41 - 20, im = (int)(seed >> 8) % 37 - 18;
      literal_set_complex(lits[p], i, CMPLX(re / 7.0, im / 7.0));
    }
    args[p] = host_buffer_create(&s, lits[p]->data, &st);
  }
  Literal *want = eval_module(m, lits, 2, &st);
  EXPECT(want != NULL, "%s: evaluator: %s", label, st.message);
  ExecutableOptions options;
  executable_options_default(&options, AXLE_BACKEND_GPU);
  Executable *exe = executable_compile(m, &options, &st);
  EXPECT(exe != NULL, "%s at %s: %s", label, capability, st.message);
  HostBuffer *r = exe ? executable_run(exe, args, 2, &st) : NULL;
  EXPECT(!exe || r != NULL, "%s at %s: %s", label, capability, st.message);
  if (r && want) {
    size_t bytes = (size_t)shape_byte_size(&want->shape);
    EXPECT(shape_byte_size(&r->shape) == (int64_t)bytes && memcmp(r->data, want->data, bytes) == 0,
           "%s at %s: not the evaluator's bits", label, capability);
  }
  if (exe) check_saved_ptx(label, dir, capability[0] == '8' ? "sm_80" : "sm_90a", false);
  host_buffer_free(r);
  literal_free(want);
  for (int p = 0; p < 2; p++) host_buffer_free(args[p]), literal_free(lits[p]);
  executable_free(exe);
  module_free(m);
  simulated_device_leave();
}

TEST(complex_products_match_the_evaluator_bit_for_bit) {
  const char *c64 = ENTRY2("c64[2,3,7]", "c64[2,5,7]", "c64[2,3,5]",
                           "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}");
  const char *c128 = ENTRY2("c128[9,4]", "c128[9,70]", "c128[4,70]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}");
  const char *empty = ENTRY2("c64[3,0]", "c64[0,2]", "c64[3,2]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  for (int at = 0; at < 2; at++) {
    const char *capability = at ? "9.0" : "8.0";
    complex_case("c64 batched, rhs transposed", c64, capability);
    complex_case("c128 lhs transposed, 280 outputs", c128, capability);
    complex_case("c64 with k = 0", empty, capability);
  }
  PtxGemm g = {.batch = 1, .m = 2, .n = 2, .k = 2, .lhs_type = TYPE_C64, .rhs_type = TYPE_C64,
               .result_type = TYPE_C64, .scaled = true, .lhs_scale_type = TYPE_F32, .rhs_scale_type = TYPE_F32};
  PtxTarget target;
  Status st;
  status_clear(&st);
  ptx_target_for_device(8, 0, &target, &st);
  PtxBuilder b;
  ptx_builder_init(&b, &target);
  PtxGemmShape shape;
  EXPECT(!ptx_gemm_emit(&b, &g, "scaled_gemm", &shape, &st) && strstr(st.message, "c64"), "%s", st.message);
  ptx_builder_free(&b);
}

/* The kernel loops over tiles, so a grid smaller than the tile count (as a
 * capped launch gives) computes the same: here one block does all 6. */
TEST(one_block_computes_every_tile) {
  PtxGemm g = {.batch = 1, .m = 130, .n = 70, .k = 20, .lhs_type = TYPE_F32, .rhs_type = TYPE_F32,
               .result_type = TYPE_F32};
  ptx_gemm_dims_add(&g.lhs_m, 130, 20);
  ptx_gemm_dims_add(&g.lhs_k, 20, 1);
  ptx_gemm_dims_add(&g.rhs_k, 20, 70);
  ptx_gemm_dims_add(&g.rhs_n, 70, 1);
  ptx_gemm_dims_add(&g.out_m, 130, 70);
  ptx_gemm_dims_add(&g.out_n, 70, 1);
  PtxTarget target;
  Status st;
  status_clear(&st);
  ptx_target_for_device(8, 0, &target, &st);
  PtxBuilder b;
  ptx_builder_init(&b, &target);
  PtxGemmShape shape;
  EXPECT(ptx_gemm_emit(&b, &g, "one_gemm", &shape, &st), "%s", st.message);
  EXPECT(shape.blocks == 6, "%lld blocks", (long long)shape.blocks);
  float *lhs = calloc(130 * 20, 4), *rhs = calloc(20 * 70, 4), *out = calloc(130 * 70, 4);
  for (int i = 0; i < 130 * 20; i++) lhs[i] = (float)(i % 7 - 3);
  for (int i = 0; i < 20 * 70; i++) rhs[i] = (float)(i % 5 - 2);
  PtxsKernel *k = calloc(1, sizeof *k);
  PtxsRun *run = calloc(1, sizeof *run);
  bool ok = ptxs_parse(k, ptx_builder_text(&b));
  EXPECT(ok, "the simulator cannot read the kernel: %s", k->error);
  run->k = k;
  float *buffers[3] = {lhs, rhs, out};
  size_t bytes[3] = {130 * 20 * 4, 20 * 70 * 4, 130 * 70 * 4};
  for (int i = 0; i < 3; i++) {
    run->buffers[run->buffer_count++] = (PtxsBuffer){(char *)buffers[i], bytes[i]};
    run->params[i] = (uint64_t)(uintptr_t)buffers[i];
  }
  ok = ok && ptxs_run(run, 1, (unsigned)shape.block_threads);
  EXPECT(ok, "simulator: %s", run->error);
  int wrong = 0;
  for (int i = 0; ok && i < 130; i++)
    for (int j = 0; j < 70; j++) {
      float sum = 0;
      for (int p = 0; p < 20; p++) sum += lhs[i * 20 + p] * rhs[p * 70 + j];
      wrong += out[i * 70 + j] != sum;
    }
  EXPECT(wrong == 0, "%d of %d elements differ", wrong, 130 * 70);
  ptxs_free(k);
  free(k), free(run), free(lhs), free(rhs), free(out);
  ptx_builder_free(&b);
}

/* x rounded to tf32 (11 significant bits, ties away from zero), computed
 * here through frexp and round, not as the simulator does it. */
static double tf32_round(float x) {
  int e;
  double m = frexp((double)x, &e);
  return ldexp(round(ldexp(m, 11)), e - 11);
}

/* The tf32 kernel on operands that tf32 cannot hold: with k = 8 (one mma
 * step) each sum is the exact sum of the tf32-rounded products rounded
 * once to f32, and must differ from the f32 product somewhere. */
TEST(tf32_rounds_its_inputs_to_nearest_away) {
  enum { M = 20, N = 9, K = 8 };
  PtxGemm g = {.batch = 1, .m = M, .n = N, .k = K, .lhs_type = TYPE_F32, .rhs_type = TYPE_F32,
               .result_type = TYPE_F32, .allow_tf32 = true};
  ptx_gemm_dims_add(&g.lhs_m, M, K);
  ptx_gemm_dims_add(&g.lhs_k, K, 1);
  ptx_gemm_dims_add(&g.rhs_k, K, N);
  ptx_gemm_dims_add(&g.rhs_n, N, 1);
  ptx_gemm_dims_add(&g.out_m, M, N);
  ptx_gemm_dims_add(&g.out_n, N, 1);
  PtxTarget target;
  Status st;
  status_clear(&st);
  ptx_target_for_device(8, 0, &target, &st);
  PtxBuilder b;
  ptx_builder_init(&b, &target);
  PtxGemmShape shape;
  EXPECT(ptx_gemm_emit(&b, &g, "tf32_gemm", &shape, &st), "%s", st.message);
  EXPECT(strstr(ptx_builder_text(&b), "cvt.rna.tf32.f32") != NULL, "no tf32 rounding in the kernel");
  float lhs[M * K], rhs[K * N], out[M * N];
  uint32_t seed = 777;
  for (int i = 0; i < M * K + K * N; i++) {
    seed = seed * 1664525u + 1013904223u;
    float v = (float)((int)(seed >> 8) % 2000001 - 1000000) / 65536.0f;
    if (i < M * K) lhs[i] = v;
    else rhs[i - M * K] = v;
  }
  lhs[0] = 1.0f + 0x1p-11f;  /* a tie: away from zero gives 1 + 2^-10 */
  lhs[1] = -(1.0f + 0x1p-11f);
  PtxsKernel *k = calloc(1, sizeof *k);
  PtxsRun *run = calloc(1, sizeof *run);
  bool ok = ptxs_parse(k, ptx_builder_text(&b));
  EXPECT(ok, "the simulator cannot read the kernel: %s", k->error);
  run->k = k;
  float *buffers[3] = {lhs, rhs, out};
  size_t bytes[3] = {sizeof lhs, sizeof rhs, sizeof out};
  for (int i = 0; i < 3; i++) {
    run->buffers[run->buffer_count++] = (PtxsBuffer){(char *)buffers[i], bytes[i]};
    run->params[i] = (uint64_t)(uintptr_t)buffers[i];
  }
  ok = ok && ptxs_run(run, (unsigned)shape.blocks, (unsigned)shape.block_threads);
  EXPECT(ok, "simulator: %s", run->error);
  int wrong = 0, unlike_f32 = 0;
  for (int i = 0; ok && i < M; i++)
    for (int j = 0; j < N; j++) {
      double sum = 0, exact = 0;
      for (int p = 0; p < K; p++) {
        sum += tf32_round(lhs[i * K + p]) * tf32_round(rhs[p * N + j]);
        exact += (double)lhs[i * K + p] * rhs[p * N + j];
      }
      wrong += out[i * N + j] != (float)sum;
      unlike_f32 += out[i * N + j] != (float)exact;
    }
  EXPECT(wrong == 0, "%d of %d elements differ from the tf32 golden", wrong, M * N);
  EXPECT(!ok || unlike_f32 > 0, "no element shows tf32 rounding");
  ptxs_free(k);
  free(k), free(run);
  ptx_builder_free(&b);
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  snprintf(work_dir, sizeof work_dir, "/tmp/axle-gemm-XXXXXX");
  if (!mkdtemp(work_dir)) return 2;
  if (!tool_find("ptxas", ptxas, sizeof ptxas)) printf("SKIP ptxas checks (no ptxas on PATH or in /usr/local/cuda/bin)\n");
  if (!tool_find("cuobjdump", cuobjdump, sizeof cuobjdump) && access("build/tools/cuda/cuobjdump", X_OK) == 0)
    snprintf(cuobjdump, sizeof cuobjdump, "build/tools/cuda/cuobjdump");
  if (!cuobjdump[0]) printf("SKIP cuobjdump -sass checks (no cuobjdump on PATH, in /usr/local/cuda/bin or build/tools/cuda)\n");
  RUN(a_one_by_one_by_one_product);
  RUN(odd_shapes_have_their_edges_masked);
  RUN(transposed_operands_and_column_major_layouts);
  RUN(batch_dims_and_several_contracting_dims);
  RUN(odd_dimension_orders_after_canonicalization);
  RUN(random_dimension_orders_and_layouts_match_the_evaluator);
  RUN(other_element_types_on_cuda_cores);
  RUN(an_output_fusion_applies_its_epilogue);
  RUN(input_fusions_around_dots_in_other_orders_match_the_evaluator);
  RUN(half_precision_products);
  RUN(hopper_stage_ring_tiles_and_packing);
  RUN(f32_through_tf32_only_where_the_algorithm_allows);
  RUN(the_dot_algorithm_round_trips_and_is_checked);
  RUN(ragged_dots_take_their_groups);
  RUN(ragged_dots_with_sizes_per_index_in_any_layout);
  RUN(a_ragged_contraction_masks_lhs_alone);
  RUN(a_negative_group_size_moves_the_end_back);
  RUN(a_scaled_dot_scales_each_block);
  RUN(complex_products_match_the_evaluator_bit_for_bit);
  RUN(one_block_computes_every_tile);
  RUN(tf32_rounds_its_inputs_to_nearest_away);
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", work_dir);
  if (system(command) != 0) printf("note: could not remove %s\n", work_dir);
  return test_summary();
}
