/* The PTX builder, checked without a GPU.
 *
 *   - the builder's own rules: target choice, .reg declarations, labels;
 *   - the op table: chosen instructions, HLO's corner cases, clean refusals;
 *   - ptxas (from PATH or /usr/local/cuda/bin) assembles every table row and
 *     the example kernels (tests/ptx/example_kernels.h) for sm_80 and sm_90a;
 *   - cuobjdump -sass shows 128-bit loads, shuffles and tensor-core ops;
 *   - the vector add's PTX equals the reviewed copy tests/ptx/vector_add.ptx
 *     (AXLE_UPDATE_PTX=1 rewrites it, for review in the diff);
 *   - each module loads through the driver layer against the fake libcuda.
 * A check whose tool is missing prints "SKIP name (why)" and counts neither
 * as passed nor as failed. Run from the repository root (make test does). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit_ptx/ptx_builder.h"
#include "runtime/cuda_driver.h"
#include "../ptx/example_kernels.h"
#include "tool_files.h"
#include "../test.h"

static char fake_driver[4096], work_dir[64], ptxas[4096], cuobjdump[4096];
static int skipped;

static void skip(const char *name, const char *why) {
  skipped++;
  printf("SKIP %s (%s)\n", name, why);
}

/* RUN with a name made at run time, for the per-kernel, per-target checks. */
static void run_named(const char *name, void (*check)(const void *), const void *arg) {
  test_current_name = name;
  test_current_failed = 0;
  check(arg);
  if (test_current_failed) test_failed++;
  else test_passed++, printf("PASS %s\n", name);
  fflush(stdout);
}

/* ---- files and tools ---- */

/* Runs a shell command with its output in work_dir/NAME.log; returns the
 * exit status and, if log is given, the output (malloc'd). */
static int command_run(const char *command, const char *name, char **log) {
  char full[16384], log_path[256];
  snprintf(log_path, sizeof log_path, "%s/%s.log", work_dir, name);
  snprintf(full, sizeof full, "%s >'%s' 2>&1", command, log_path);
  int rc = system(full);
  if (log) *log = file_read(log_path);
  return rc;
}

/* ---- modules ---- */

static PtxTarget target_make(int major, int minor) {
  PtxTarget t;
  Status st;
  bool ok = ptx_target_for_device(major, minor, &t, &st);
  assert(ok);
  (void)ok;
  return t;
}

typedef struct Example {
  const char *name;                  /* the kernel's entry name */
  void (*build)(PtxBuilder *b);
  const char *sass_mark;             /* what its machine code must contain */
  const char *sass_meaning;
} Example;

static const Example examples[] = {
    {"vector_add_f32", example_vector_add_f32, "LDG.E.128", "128-bit global loads"},
    {"row_sum_f32", example_row_sum_f32, "SHFL.DOWN", "warp shuffles"},
    {"mma_bf16_16x8x16", example_mma_bf16, "HMMA", "tensor-core mma"},
};
enum { EXAMPLE_COUNT = sizeof examples / sizeof *examples };

/* The module text of one example for a target (malloc'd). */
static char *example_text(const Example *e, const PtxTarget *target) {
  PtxBuilder b;
  ptx_builder_init(&b, target);
  e->build(&b);
  char *text = strdup(ptx_builder_text(&b));
  ptx_builder_free(&b);
  return text;
}

/* ---- the builder's rules ---- */

TEST(ampere_targets_its_own_sm_with_ptx_isa_8_0) {
  PtxTarget t = target_make(8, 0);
  PtxBuilder b;
  ptx_builder_init(&b, &t);
  const char *text = ptx_builder_text(&b);
  EXPECT(strstr(text, ".version 8.0\n.target sm_80\n.address_size 64\n"), "header:\n%s", text);
  EXPECT(!ptx_target_has_wgmma(&t), "sm_80 claims wgmma");
  ptx_builder_free(&b);
  t = target_make(8, 6);
  EXPECT(strcmp(t.name, "sm_86") == 0, "8.6 gave %s", t.name);
}

TEST(hopper_targets_sm_90a_for_wgmma) {
  PtxTarget t = target_make(9, 0);
  EXPECT(strcmp(t.name, "sm_90a") == 0 && ptx_target_has_wgmma(&t), "9.0 gave %s", t.name);
}

TEST(newer_gpus_get_forward_compatible_sm_90) {
  PtxTarget t = target_make(10, 0);
  EXPECT(strcmp(t.name, "sm_90") == 0 && !ptx_target_has_wgmma(&t), "10.0 gave %s", t.name);
}

TEST(gpus_before_ampere_are_refused_with_their_capability) {
  PtxTarget t;
  Status st;
  status_clear(&st);
  EXPECT(!ptx_target_for_device(7, 5, &t, &st), "7.5 accepted");
  EXPECT(st.code == STATUS_UNSUPPORTED && strstr(st.message, "8.0") && strstr(st.message, "7.5"), "message: %s",
         st.message);
}

TEST(registers_are_declared_once_per_class_with_their_count) {
  PtxTarget t = target_make(8, 0);
  PtxBuilder b;
  ptx_builder_init(&b, &t);
  ptx_kernel_begin(&b, "k", "registers");
  PtxReg f0 = ptx_reg_new(&b, PTX_F32), f1 = ptx_reg_new(&b, PTX_F32), f2 = ptx_reg_new(&b, PTX_F32);
  PtxReg p0 = ptx_reg_new(&b, PTX_PRED), h0 = ptx_reg_new(&b, PTX_BF16), h1 = ptx_reg_new(&b, PTX_U16);
  EXPECT(f2.index == 2 && p0.index == 0 && h1.index == 1 && h0.cls == PTX_REG_B16, "numbering");
  ptx_inst(&b, "add.rn.f32 $r, $r, $r", f2, f0, f1);
  ptx_kernel_end(&b);
  const char *text = ptx_builder_text(&b);
  EXPECT(strstr(text, "\t.reg .f32 %f<3>;\n") && strstr(text, "\t.reg .pred %p<1>;\n") &&
             strstr(text, "\t.reg .b16 %h<2>;\n"),
         "declarations:\n%s", text);
  EXPECT(!strstr(text, ".reg .b64"), "declared an unused class:\n%s", text);
  EXPECT(strstr(text, "\tadd.rn.f32 %f2, %f0, %f1;\n"), "instruction:\n%s", text);
  ptx_builder_free(&b);
}

TEST(labels_are_unique_and_counting_restarts_per_kernel) {
  PtxTarget t = target_make(8, 0);
  PtxBuilder b;
  ptx_builder_init(&b, &t);
  ptx_kernel_begin(&b, "k", "labels");
  PtxLabel a = ptx_label_new(&b, "loop"), c = ptx_label_new(&b, "loop");
  EXPECT(a.index != c.index, "two labels share %d", a.index);
  ptx_label_place(&b, a);
  ptx_inst(&b, "bra.uni $l", a);
  ptx_kernel_end(&b);
  ptx_kernel_begin(&b, "k2", "labels again");
  PtxReg r = ptx_reg_new(&b, PTX_U32);
  EXPECT(ptx_label_new(&b, "x").index == 0 && r.index == 0, "counts carried over from the previous kernel");
  ptx_kernel_end(&b);
  EXPECT(strstr(ptx_builder_text(&b), "$L0_loop:\n\tbra.uni $L0_loop;\n"), "%s", ptx_builder_text(&b));
  ptx_builder_free(&b);
}

/* ---- the op table ---- */

/* The text ptx_emit_elementwise writes for e on a target (malloc'd), or
 * NULL with st filled. Operands are fresh registers of the right classes. */
static char *op_text(const PtxElementwise *e, int major, Status *st) {
  PtxTarget t = target_make(major, 0);
  PtxBuilder b;
  ptx_builder_init(&b, &t);
  ptx_kernel_begin(&b, "k", "one op");
  PtxType type, result;
  bool typed = ptx_type_of_element(e->type, &type);
  ElementType result_type = e->op == OP_CONVERT ? e->result_type
                            : e->op == OP_COMPARE || e->op == OP_IS_FINITE ? TYPE_PRED
                                                                           : e->type;
  if (!typed || !ptx_type_of_element(result_type, &result)) type = result = PTX_B32;  /* refused below */
  PtxReg operands[3];
  for (int i = 0; i < 3; i++) operands[i] = ptx_reg_new(&b, e->op == OP_SELECT && i == 0 ? PTX_PRED : type);
  PtxReg dst = ptx_reg_new(&b, result);
  size_t before = b.body.len;
  status_clear(st);
  bool ok = ptx_emit_elementwise(&b, e, dst, operands, st);
  char *text = ok ? strdup(b.body.data + before) : NULL;
  if (!ok && b.body.len != before) text = strdup("emitted text although refused");
  ptx_kernel_end(&b);
  ptx_builder_free(&b);
  return text;
}

static void expect_op(const PtxElementwise *e, int major, const char *want) {
  Status st;
  char *text = op_text(e, major, &st);
  EXPECT(text && strstr(text, want), "%s on %s: want '%s', got:\n%s%s", opcode_name(e->op), type_name(e->type), want,
         text ? text : "(refused) ", text ? "" : st.message);
  free(text);
}

static void expect_refused(const PtxElementwise *e, int major, const char *why) {
  Status st;
  char *text = op_text(e, major, &st);
  EXPECT(!text && st.code == STATUS_UNSUPPORTED && strstr(st.message, why), "%s on %s: want a refusal with '%s', got %s%s",
         opcode_name(e->op), type_name(e->type), why, text ? text : "", text ? "" : st.message);
  free(text);
}

TEST(float_arithmetic_rounds_to_nearest_without_approximations) {
  expect_op(&(PtxElementwise){.op = OP_ADD, .type = TYPE_F32}, 8, "add.rn.f32 %f3, %f0, %f1;");
  expect_op(&(PtxElementwise){.op = OP_DIVIDE, .type = TYPE_F32}, 8, "div.rn.f32");
  expect_op(&(PtxElementwise){.op = OP_MULTIPLY, .type = TYPE_F64}, 8, "mul.rn.f64");
  expect_op(&(PtxElementwise){.op = OP_SQRT, .type = TYPE_F32}, 8, "sqrt.rn.f32");
  expect_op(&(PtxElementwise){.op = OP_MULTIPLY, .type = TYPE_S32}, 8, "mul.lo.s32");
}

TEST(maximum_and_minimum_propagate_nan) {
  expect_op(&(PtxElementwise){.op = OP_MAXIMUM, .type = TYPE_F32}, 8, "max.NaN.f32");
  expect_op(&(PtxElementwise){.op = OP_MINIMUM, .type = TYPE_BF16}, 8, "min.NaN.bf16");
  expect_op(&(PtxElementwise){.op = OP_MAXIMUM, .type = TYPE_F64}, 8, "setp.nan.f64");
}

TEST(integer_division_by_zero_gives_all_ones_and_int_min_over_minus_one_wraps) {
  expect_op(&(PtxElementwise){.op = OP_DIVIDE, .type = TYPE_S32}, 8,
            "div.s32 %r3, %r0, %r1;\n\tsetp.eq.s32 %p0, %r1, -1;\n\t@%p0 neg.s32 %r3, %r0;\n"
            "\tsetp.eq.s32 %p0, %r1, 0;\n\t@%p0 mov.b32 %r3, -1;\n");
  expect_op(&(PtxElementwise){.op = OP_DIVIDE, .type = TYPE_U64}, 8, "@%p0 mov.b64 %rd3, -1;");
}

TEST(compare_ne_is_unordered_and_unsigned_compares_use_lo_hi) {
  expect_op(&(PtxElementwise){.op = OP_COMPARE, .type = TYPE_F32, .direction = CMP_NE}, 8, "setp.neu.f32 %p0, %f0, %f1;");
  expect_op(&(PtxElementwise){.op = OP_COMPARE, .type = TYPE_F32, .direction = CMP_LT}, 8, "setp.lt.f32");
  expect_op(&(PtxElementwise){.op = OP_COMPARE, .type = TYPE_U32, .direction = CMP_LT}, 8, "setp.lo.u32");
  expect_op(&(PtxElementwise){.op = OP_COMPARE, .type = TYPE_S64, .direction = CMP_GE}, 8, "setp.ge.s64");
  expect_refused(&(PtxElementwise){.op = OP_COMPARE, .type = TYPE_F32, .compare_type = CMP_TYPE_TOTALORDER}, 8,
                 "TOTALORDER");
}

TEST(select_is_selp_with_the_predicate_last) {
  expect_op(&(PtxElementwise){.op = OP_SELECT, .type = TYPE_F32}, 8, "selp.b32 %f2, %f0, %f1, %p0;");
}

TEST(shifts_clamp_64_bit_counts_instead_of_truncating_them) {
  expect_op(&(PtxElementwise){.op = OP_SHIFT_LEFT, .type = TYPE_U32}, 8, "shl.b32 %r3, %r0, %r1;");
  expect_op(&(PtxElementwise){.op = OP_SHIFT_RIGHT_ARITHMETIC, .type = TYPE_U32}, 8, "shr.s32");
  expect_op(&(PtxElementwise){.op = OP_SHIFT_RIGHT_LOGICAL, .type = TYPE_S64}, 8, "min.u64 %rd4, %rd1, 64;");
}

TEST(convert_truncates_to_integers_and_rounds_narrowing_floats) {
  expect_op(&(PtxElementwise){.op = OP_CONVERT, .type = TYPE_F32, .result_type = TYPE_S32}, 8, "cvt.rzi.s32.f32");
  expect_op(&(PtxElementwise){.op = OP_CONVERT, .type = TYPE_F64, .result_type = TYPE_F32}, 8, "cvt.rn.f32.f64");
  expect_op(&(PtxElementwise){.op = OP_CONVERT, .type = TYPE_F32, .result_type = TYPE_F64}, 8, "cvt.f64.f32");
  expect_op(&(PtxElementwise){.op = OP_CONVERT, .type = TYPE_S32, .result_type = TYPE_F32}, 8, "cvt.rn.f32.s32");
  expect_op(&(PtxElementwise){.op = OP_CONVERT, .type = TYPE_F32, .result_type = TYPE_PRED}, 8, "setp.neu.f32");
  expect_op(&(PtxElementwise){.op = OP_CONVERT, .type = TYPE_BF16, .result_type = TYPE_F32}, 8, "shl.b32");
  expect_op(&(PtxElementwise){.op = OP_CONVERT, .type = TYPE_BF16, .result_type = TYPE_F32}, 9, "cvt.f32.bf16");
}

TEST(bf16_arithmetic_needs_sm_90_and_is_refused_before) {
  expect_op(&(PtxElementwise){.op = OP_ADD, .type = TYPE_BF16}, 9, "add.rn.bf16");
  expect_refused(&(PtxElementwise){.op = OP_ADD, .type = TYPE_BF16}, 8, "needs a newer GPU than sm_80");
}

/* f32 and f64 take the sequences of math_algorithms.c (test_ptx_math.c,
 * test_ptx_math_f64.c); remainder has no sequence yet and is refused. */
TEST(math_functions_take_the_f32_and_f64_sequences) {
  static const Opcode math[] = {OP_EXPONENTIAL, OP_LOG, OP_TANH, OP_SINE, OP_RSQRT, OP_POWER, OP_LOGISTIC};
  for (size_t i = 0; i < sizeof math / sizeof *math; i++) {
    EXPECT(ptx_op_needs_math_sequence(math[i]), "%s not listed", opcode_name(math[i]));
    expect_op(&(PtxElementwise){.op = math[i], .type = TYPE_F32}, 9, "on f32, math_algorithms.c");
    expect_op(&(PtxElementwise){.op = math[i], .type = TYPE_F64}, 9, "on f64, math_algorithms.c");
  }
  expect_refused(&(PtxElementwise){.op = OP_REMAINDER, .type = TYPE_F64}, 9, "software math sequence");
  EXPECT(!ptx_op_needs_math_sequence(OP_SQRT), "sqrt.rn is exact; it needs no sequence");
}

TEST(types_without_gpu_arithmetic_are_refused) {
  expect_refused(&(PtxElementwise){.op = OP_ADD, .type = TYPE_S8}, 9, "no PTX for add on s8");
  expect_refused(&(PtxElementwise){.op = OP_ADD, .type = TYPE_C64}, 9, "no PTX for add on c64");
  expect_refused(&(PtxElementwise){.op = OP_DIVIDE, .type = TYPE_F16}, 9, "no PTX for divide on f16");
  expect_refused(&(PtxElementwise){.op = OP_CONVERT, .type = TYPE_F16, .result_type = TYPE_BF16}, 8,
                 "no PTX for convert from f16 to bf16 on sm_80");
}

/* Every (op, type) the table accepts, in one kernel: ptxas then checks each
 * row's template for every type it claims. */
static const ElementType gpu_types[] = {TYPE_PRED, TYPE_S32, TYPE_U32, TYPE_S64, TYPE_U64,
                                        TYPE_F16,  TYPE_BF16, TYPE_F32, TYPE_F64};
enum { GPU_TYPE_COUNT = sizeof gpu_types / sizeof *gpu_types };

/* Gives r a defined value, so that ptxas sees no use of an unset register. */
static void register_zero(PtxBuilder *b, PtxReg r, int i) {
  static const char *const zero[PTX_REG_CLASS_COUNT] = {
      [PTX_REG_B16] = "mov.b16 $r, 0", [PTX_REG_B32] = "mov.b32 $r, 0", [PTX_REG_B64] = "mov.b64 $r, 0",
      [PTX_REG_F32] = "mov.f32 $r, 0f00000000", [PTX_REG_F64] = "mov.f64 $r, 0d0000000000000000"};
  if (r.cls == PTX_REG_PRED) {
    PtxReg tid = ptx_reg_new(b, PTX_U32);
    ptx_inst(b, "mov.u32 $r, %tid.x", tid);
    ptx_inst(b, "setp.ne.u32 $r, $r, $d", r, tid, i);
  } else {
    ptx_inst(b, zero[r.cls], r);
  }
}

static int table_kernel_add(PtxBuilder *b, const PtxElementwise *e) {
  PtxType type, result;
  ElementType result_type = e->op == OP_CONVERT ? e->result_type
                            : e->op == OP_COMPARE || e->op == OP_IS_FINITE ? TYPE_PRED
                                                                           : e->type;
  if (!ptx_type_of_element(e->type, &type) || !ptx_type_of_element(result_type, &result)) return 0;
  PtxReg operands[3];
  for (int i = 0; i < 3; i++) {
    operands[i] = ptx_reg_new(b, e->op == OP_SELECT && i == 0 ? PTX_PRED : type);
    register_zero(b, operands[i], i);
  }
  Status st;
  return ptx_emit_elementwise(b, e, ptx_reg_new(b, result), operands, &st) ? 1 : 0;
}

/* The text of a module whose one kernel uses every accepted row; *count
 * says how many (op, type) pairs went in. */
static char *table_module(const PtxTarget *t, int *count) {
  PtxBuilder b;
  ptx_builder_init(&b, t);
  ptx_kernel_begin(&b, "every_table_row", "each op of the table on each type it accepts");
  *count = 0;
  for (int op = 0; op < OP_COUNT; op++) {
    for (int i = 0; i < GPU_TYPE_COUNT; i++) {
      PtxElementwise e = {.op = (Opcode)op, .type = gpu_types[i], .direction = CMP_LT};
      if (op == OP_CONVERT) {
        for (int j = 0; j < GPU_TYPE_COUNT; j++) e.result_type = gpu_types[j], *count += table_kernel_add(&b, &e);
      } else if (op == OP_COMPARE) {
        for (int d = CMP_EQ; d <= CMP_GE; d++) e.direction = (CompareDirection)d, *count += table_kernel_add(&b, &e);
      } else if (opcode_is_elementwise((Opcode)op)) {
        *count += table_kernel_add(&b, &e);
      }
    }
  }
  ptx_inst(&b, "ret");
  ptx_kernel_end(&b);
  char *text = strdup(ptx_builder_text(&b));
  ptx_builder_free(&b);
  return text;
}

/* ---- ptxas, SASS, the reviewed copy, the fake driver ---- */

typedef struct AssembleCheck {
  const char *label;      /* file stem: "vector_add_f32.sm_80" */
  const char *text;
  const char *arch;
} AssembleCheck;

static void assemble_check(const void *arg) {
  const AssembleCheck *c = arg;
  char ptx_path[256], command[8192];
  snprintf(ptx_path, sizeof ptx_path, "%s/%s.ptx", work_dir, c->label);
  EXPECT(file_write(ptx_path, c->text), "cannot write %s", ptx_path);
  snprintf(command, sizeof command, "'%s' -arch=%s -o '%s/%s.cubin' '%s'", ptxas, c->arch, work_dir, c->label, ptx_path);
  char *log = NULL;
  int rc = command_run(command, c->label, &log);
  EXPECT(rc == 0, "%s\nptxas said:\n%.3000s", command, log ? log : "");
  free(log);
}

typedef struct SassCheck {
  const char *label;
  const Example *example;
} SassCheck;

static void sass_check(const void *arg) {
  const SassCheck *c = arg;
  char command[8192], name[160];
  snprintf(command, sizeof command, "'%s' -sass '%s/%s.cubin'", cuobjdump, work_dir, c->label);
  snprintf(name, sizeof name, "%s.sass", c->label);
  char *sass = NULL;
  int rc = command_run(command, name, &sass);
  EXPECT(rc == 0 && sass && strstr(sass, c->example->sass_mark), "%s: no %s (%s) in\n%s", c->label,
         c->example->sass_mark, c->example->sass_meaning, sass ? sass : "");
  free(sass);
}

static void assemble_all(void) {
  static const char *const arch[2] = {"sm_80", "sm_90a"};
  static const int major[2] = {8, 9};
  char name[256], label[128];
  for (int a = 0; a < 2; a++) {
    PtxTarget t = target_make(major[a], 0);
    int count = 0;
    char *table = table_module(&t, &count);
    snprintf(label, sizeof label, "every_table_row.%s", arch[a]);
    snprintf(name, sizeof name, "ptxas_assembles_every_op_table_row_for_%s", arch[a]);
    AssembleCheck table_check = {label, table, arch[a]};
    if (ptxas[0]) run_named(name, assemble_check, &table_check);
    else skip(name, "no ptxas on PATH or in /usr/local/cuda/bin");
    printf("  (%d op/type pairs in the table kernel for %s)\n", count, arch[a]);
    free(table);
    for (int i = 0; i < EXAMPLE_COUNT; i++) {
      char *text = example_text(&examples[i], &t);
      snprintf(label, sizeof label, "%s.%s", examples[i].name, arch[a]);
      AssembleCheck check = {label, text, arch[a]};
      snprintf(name, sizeof name, "ptxas_assembles_%s_for_%s", examples[i].name, arch[a]);
      if (!ptxas[0]) {
        skip(name, "no ptxas on PATH or in /usr/local/cuda/bin");
      } else {
        int failed_before = test_failed;
        run_named(name, assemble_check, &check);
        SassCheck sass = {label, &examples[i]};
        snprintf(name, sizeof name, "sass_of_%s_for_%s_has_%s", examples[i].name, arch[a], examples[i].sass_mark);
        if (!cuobjdump[0]) skip(name, "no cuobjdump on PATH or in /usr/local/cuda/bin");
        else if (test_failed != failed_before) skip(name, "ptxas failed");
        else run_named(name, sass_check, &sass);
      }
      free(text);
    }
  }
}

TEST(vector_add_ptx_matches_the_reviewed_copy) {
  static const char *path = "tests/ptx/vector_add.ptx";
  PtxTarget t = target_make(8, 0);
  char *text = example_text(&examples[0], &t);
  char why[512];
  EXPECT(reviewed_copy_matches(path, text, why, sizeof why), "%s", why);
  free(text);
}

TEST(every_example_module_loads_through_the_driver_layer) {
  setenv("AXLE_CUDA_DRIVER", fake_driver, 1);
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_DEVICES");
  GpuDevice gpu;
  Status st;
  status_clear(&st);
  bool opened = gpu_device_open(&gpu, &st);
  EXPECT(opened, "%s", st.message);
  if (!opened) return;
  PtxTarget t;
  EXPECT(ptx_target_for_device(gpu.compute_major, gpu.compute_minor, &t, &st), "%s", st.message);
  for (int i = 0; i < EXAMPLE_COUNT; i++) {
    char *text = example_text(&examples[i], &t);
    CUmodule module;
    CUfunction f;
    bool ok = gpu_module_load(&gpu, text, examples[i].name, &module, &st) &&
              gpu_function_get(&gpu, module, examples[i].name, &f, &st);
    EXPECT(ok, "%s: %s", examples[i].name, st.message);
    if (ok) gpu.driver.module_unload(module);
    free(text);
  }
  gpu_device_close(&gpu);
}

static void work_dir_remove(void) {
  char command[256];
  snprintf(command, sizeof command, "rm -rf '%s'", work_dir);
  if (system(command) != 0) printf("  (could not remove %s)\n", work_dir);
}

int main(int argc, char **argv) {
  (void)argc;
  fake_driver_find(argv[0], fake_driver, sizeof fake_driver);
  snprintf(work_dir, sizeof work_dir, "/tmp/axle-ptx-XXXXXX");
  if (!mkdtemp(work_dir)) {
    printf("FAIL test_ptx_setup\n  cannot make a temporary directory\n");
    return 1;
  }
  tool_find("ptxas", ptxas, sizeof ptxas);
  tool_find("cuobjdump", cuobjdump, sizeof cuobjdump);
  RUN(ampere_targets_its_own_sm_with_ptx_isa_8_0);
  RUN(hopper_targets_sm_90a_for_wgmma);
  RUN(newer_gpus_get_forward_compatible_sm_90);
  RUN(gpus_before_ampere_are_refused_with_their_capability);
  RUN(registers_are_declared_once_per_class_with_their_count);
  RUN(labels_are_unique_and_counting_restarts_per_kernel);
  RUN(float_arithmetic_rounds_to_nearest_without_approximations);
  RUN(maximum_and_minimum_propagate_nan);
  RUN(integer_division_by_zero_gives_all_ones_and_int_min_over_minus_one_wraps);
  RUN(compare_ne_is_unordered_and_unsigned_compares_use_lo_hi);
  RUN(select_is_selp_with_the_predicate_last);
  RUN(shifts_clamp_64_bit_counts_instead_of_truncating_them);
  RUN(convert_truncates_to_integers_and_rounds_narrowing_floats);
  RUN(bf16_arithmetic_needs_sm_90_and_is_refused_before);
  RUN(math_functions_take_the_f32_and_f64_sequences);
  RUN(types_without_gpu_arithmetic_are_refused);
  assemble_all();
  RUN(vector_add_ptx_matches_the_reviewed_copy);
  RUN(every_example_module_loads_through_the_driver_layer);
  printf("ptx: %d passed, %d failed, %d skipped (ptxas: %s; cuobjdump: %s)\n", test_passed, test_failed, skipped,
         ptxas[0] ? ptxas : "absent", cuobjdump[0] ? cuobjdump : "absent");
  work_dir_remove();
  return test_summary();
}
