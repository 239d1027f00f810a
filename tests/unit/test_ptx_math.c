/* The f32 math functions in PTX (src/emit_ptx/ptx_math.c): each HLO math
 * op becomes a kernel whose text is checked for what can be checked
 * without a GPU: the sequence, run on the host by a small PTX
 * interpreter (ptx_interpret.h), gives math_reference.c's bits for every
 * input of a sweep over all exponents; ptxas assembles every one for sm_80 and sm_90a; no
 * instruction is .approx or .ftz (the reference keeps IEEE rounding and
 * subnormals); every coefficient of the function's table in
 * math_reference.c appears in it as an f32 (or f64) immediate, so both
 * backends use the very same numbers; and the PTX of exp and sin matches
 * the reviewed copy in tests/ptx/math_exp_sin.ptx. That the bits equal
 * the reference on a device is checked by tests/gpu/gpu_kernels.c
 * (tests/gpu/run.sh), which runs every emitted corpus kernel against the
 * kernel interpreter. */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit_ptx/ptx_kernel.h"
#include "kernel/math_reference.h"
#include "opt/lower.h"
#include "ptx_interpret.h"
#include "tool_files.h"
#include "../test.h"

static char work_dir[64], ptxas[4096];

typedef struct MathCase {
  const char *op;
  Opcode opcode;
  float (*unary)(float);
  float (*binary)(float, float);
  bool two_operands;
  const float *table;   /* the f32 coefficients it must load (NULL: none) */
  int table_count;
  const double *table64;
  int table64_count;
} MathCase;

static const MathCase math_cases[] = {
    {"exponential", OP_EXPONENTIAL, mathref_expf, NULL, false, mathref_exp_table, MATHREF_EXP_COUNT, NULL, 0},
    {"exponential-minus-one", OP_EXPONENTIAL_MINUS_ONE, mathref_expm1f, NULL, false, mathref_expm1_table,
     MATHREF_EXPM1_COUNT, NULL, 0},
    {"log", OP_LOG, mathref_logf, NULL, false, mathref_log_table, MATHREF_LOG_COUNT, NULL, 0},
    {"log-plus-one", OP_LOG_PLUS_ONE, mathref_log1pf, NULL, false, mathref_log_table, MATHREF_LOG_COUNT, NULL, 0},
    {"tanh", OP_TANH, mathref_tanhf, NULL, false, mathref_tanh_table, MATHREF_TANH_COUNT, NULL, 0},
    {"logistic", OP_LOGISTIC, mathref_logisticf, NULL, false, mathref_exp_table, MATHREF_EXP_COUNT, NULL, 0},
    {"erf", OP_ERF, mathref_erff, NULL, false, mathref_erf_table, MATHREF_ERF_COUNT, NULL, 0},
    {"sine", OP_SINE, mathref_sinf, NULL, false, mathref_sin_table, MATHREF_SIN_COUNT, NULL, 0},
    {"cosine", OP_COSINE, mathref_cosf, NULL, false, mathref_cos_table, MATHREF_COS_COUNT, NULL, 0},
    {"tan", OP_TAN, mathref_tanf, NULL, false, mathref_tan_table, MATHREF_TAN_COUNT, NULL, 0},
    {"atan2", OP_ATAN2, NULL, mathref_atan2f, true, mathref_atan_table, MATHREF_ATAN_COUNT, NULL, 0},
    {"power", OP_POWER, NULL, mathref_powf, true, NULL, 0, mathref_pow_table, MATHREF_POW_COUNT},
    {"cbrt", OP_CBRT, mathref_cbrtf, NULL, false, mathref_cbrt_table, MATHREF_CBRT_COUNT, NULL, 0},
    {"rsqrt", OP_RSQRT, mathref_rsqrtf, NULL, false, NULL, 0, NULL, 0},
    {"atan", OP_ATAN, mathref_atanf, NULL, false, mathref_atan_table, MATHREF_ATAN_COUNT, NULL, 0},
    {"asin", OP_ASIN, mathref_asinf, NULL, false, mathref_atan_table, MATHREF_ATAN_COUNT, NULL, 0},
    {"acos", OP_ACOS, mathref_acosf, NULL, false, mathref_atan_table, MATHREF_ATAN_COUNT, NULL, 0},
    {"sinh", OP_SINH, mathref_sinhf, NULL, false, mathref_expm1_table, MATHREF_EXPM1_COUNT, NULL, 0},
    {"cosh", OP_COSH, mathref_coshf, NULL, false, mathref_exp_table, MATHREF_EXP_COUNT, NULL, 0},
    {"asinh", OP_ASINH, mathref_asinhf, NULL, false, mathref_log_table, MATHREF_LOG_COUNT, NULL, 0},
    {"acosh", OP_ACOSH, mathref_acoshf, NULL, false, mathref_log_table, MATHREF_LOG_COUNT, NULL, 0},
    {"atanh", OP_ATANH, mathref_atanhf, NULL, false, mathref_log_table, MATHREF_LOG_COUNT, NULL, 0},
};
enum { MATH_CASE_COUNT = sizeof math_cases / sizeof *math_cases };

/* The one-op module y = op(x) (or op(x, w)) over f32[1000]. */
static Module *math_module(const MathCase *c) {
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  x = f32[1000] parameter(0)\n  w = f32[1000] parameter(1)\n"
           "  ROOT y = f32[1000] %s(x%s)\n}\n",
           c->op, c->two_operands ? ", w" : "");
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "math.hlo", &st);
  EXPECT(m != NULL, "%s: %s", c->op, st.message);
  return m;
}

/* Appends the kernel of case c to b; false with the reason printed. */
static bool math_kernel_emit(PtxBuilder *b, const MathCase *c) {
  Module *m = math_module(c);
  if (!m) return false;
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL, "%s: %s", c->op, st.message);
  bool ok = false;
  if (k) {
    char entry[160];
    snprintf(entry, sizeof entry, "math_%s", c->op);
    for (char *p = entry; *p; p++)
      if (*p == '-') *p = '_';
    PtxKernelShape shape;
    ok = ptx_kernel_emit(b, k, entry, &shape, &st);
    EXPECT(ok, "%s: refused: %s", c->op, st.message);
  }
  kernel_free(k);
  module_free(m);
  return ok;
}

/* The module with the kernels of the named cases (NULL: all) for sm. */
static char *math_ptx(int major, const char *const *only) {
  PtxTarget t;
  Status st;
  if (!ptx_target_for_device(major, 0, &t, &st)) return NULL;
  PtxBuilder b;
  ptx_builder_init(&b, &t);
  for (int i = 0; i < MATH_CASE_COUNT; i++) {
    bool wanted = !only;
    for (int j = 0; only && only[j]; j++) wanted |= strcmp(only[j], math_cases[i].op) == 0;
    if (wanted) math_kernel_emit(&b, &math_cases[i]);
  }
  char *text = strdup(ptx_builder_text(&b));
  ptx_builder_free(&b);
  return text;
}

/* The text of kernel `name` within a module: from its .entry to the next. */
static char *kernel_text(const char *module, const char *op) {
  char entry[160];
  snprintf(entry, sizeof entry, ".entry math_%s(", op);
  for (char *p = entry; *p; p++)
    if (*p == '-') *p = '_';
  const char *start = strstr(module, entry);
  if (!start) return NULL;
  const char *end = strstr(start + 1, ".entry ");
  size_t n = end ? (size_t)(end - start) : strlen(start);
  char *text = malloc(n + 1);
  memcpy(text, start, n);
  text[n] = 0;
  return text;
}


/* ---- the sequences run on the host ---- */

/* Input i of a sweep: special values first, then bit patterns spread over
 * every float by an odd multiplier (so all exponents, both signs). */
static float sweep_input(uint32_t i, uint32_t shift) {
  static const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 0.5f, 2.0f, 1e-45f,
                                   -1e-45f, 3.4028235e38f, 0x1p22f, -0x1p22f, 0x1p-126f, 88.7f, -103.9f,
                                   3.14159265f, 1e30f, -7.5f, 0x1.8p23f, 0x1p24f, -3.0f, 1e-30f};
  uint32_t n = sizeof specials / sizeof *specials;
  if (i < n) return specials[(i + shift) % n];
  uint32_t bits = (i + shift) * 2654435761u;
  float x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

static uint32_t float_bits(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

/* The register file slot of r, as the interpreter names registers. */
static uint64_t *interpreter_reg(PtxiProgram *p, PtxReg r) {
  char name[16];
  int length;
  ptx_reg_name(r, name, sizeof name);
  int cls = ptxi_class(name, &length);
  return &p->regs[cls][atoi(name + length)];
}

enum { SWEEP_COUNT = 1 << 16 };

/* ptx_math_emit's sequence for c, parsed for the interpreter; the
 * registers of x, w and the result in *x, *w, *y. */
static bool sequence_parse(const MathCase *c, PtxiProgram *p, PtxReg *x, PtxReg *w, PtxReg *y) {
  PtxTarget t;
  Status st;
  if (!ptx_target_for_device(8, 0, &t, &st)) return false;
  PtxBuilder b;
  ptx_builder_init(&b, &t);
  ptx_kernel_begin(&b, "sequence", "one math function");
  *x = ptx_reg_new(&b, PTX_F32), *w = ptx_reg_new(&b, PTX_F32), *y = ptx_reg_new(&b, PTX_F32);
  PtxReg operands[2] = {*x, *w};
  bool ok = ptx_math_emit(&b, c->opcode, *y, operands);
  EXPECT(ok, "%s: no sequence", c->op);
  ok = ok && ptxi_parse(p, b.body.data ? b.body.data : "");
  EXPECT(ok, "%s: the interpreter cannot read the sequence: %s", c->op, p->error);
  ptx_builder_free(&b);
  return ok;
}

TEST(each_sequence_run_on_the_host_gives_the_reference_bits) {
  for (int i = 0; i < MATH_CASE_COUNT; i++) {
    const MathCase *c = &math_cases[i];
    PtxiProgram *p = calloc(1, sizeof *p);
    p->table = &mathref_two_over_pi_windows[0][0];
    p->table_words = 106 * 3;
    PtxReg x, w, y;
    if (sequence_parse(c, p, &x, &w, &y)) {
      int wrong = 0;
      for (uint32_t j = 0; j < SWEEP_COUNT && wrong < 3; j++) {
        float a = sweep_input(j, 0), b = sweep_input(j, 7);
        float want = c->unary ? c->unary(a) : c->binary(a, b);
        *interpreter_reg(p, x) = float_bits(a);
        *interpreter_reg(p, w) = float_bits(b);
        bool ran = ptxi_run(p);
        float got;
        uint32_t got_bits = (uint32_t)*interpreter_reg(p, y);
        memcpy(&got, &got_bits, sizeof got);
        if (ran && (float_bits(want) == got_bits || (isnan(want) && isnan(got)))) continue;
        wrong++;
        char at[64];
        if (c->binary) snprintf(at, sizeof at, "%.9g, %.9g", a, b);
        else snprintf(at, sizeof at, "%.9g", a);
        EXPECT(false, "%s(%s): wanted %.9g (0x%08x), got %.9g (0x%08x)%s%s", c->op, at, want, float_bits(want), got,
               got_bits, ran ? "" : ": ", ran ? "" : p->error);
      }
    }
    free(p->insts);
    free(p);
  }
}

TEST(every_f32_math_function_has_a_kernel_that_keeps_ieee_rounding) {
  char *text = math_ptx(8, NULL);
  EXPECT(text != NULL, "no sm_80 target");
  if (!text) return;
  for (int i = 0; i < MATH_CASE_COUNT; i++) {
    char *k = kernel_text(text, math_cases[i].op);
    EXPECT(k != NULL, "%s: no kernel", math_cases[i].op);
    if (!k) continue;
    EXPECT(strstr(k, "on f32, math_algorithms.c"), "%s: not the math sequence", math_cases[i].op);
    EXPECT(!strstr(k, ".approx") && !strstr(k, ".ftz"), "%s: an .approx or .ftz instruction", math_cases[i].op);
    free(k);
  }
  free(text);
}

TEST(each_kernel_loads_every_coefficient_of_its_reference_table) {
  char *text = math_ptx(8, NULL);
  if (!text) return;
  for (int i = 0; i < MATH_CASE_COUNT; i++) {
    const MathCase *c = &math_cases[i];
    char *k = kernel_text(text, c->op);
    if (!k) continue;
    for (int j = 0; j < c->table_count; j++) {
      uint32_t bits;
      memcpy(&bits, &c->table[j], sizeof bits);
      char immediate[16];
      snprintf(immediate, sizeof immediate, "0f%08X", bits);
      EXPECT(strstr(k, immediate), "%s: coefficient %d (%.9g, %s) is missing", c->op, j, c->table[j], immediate);
    }
    for (int j = 0; j < c->table64_count; j++) {
      uint64_t bits;
      memcpy(&bits, &c->table64[j], sizeof bits);
      char immediate[24];
      snprintf(immediate, sizeof immediate, "0d%016llX", (unsigned long long)bits);
      EXPECT(strstr(k, immediate), "%s: coefficient %d (%.17g) is missing", c->op, j, c->table64[j]);
    }
    free(k);
  }
  free(text);
}

TEST(ptxas_assembles_every_math_kernel_for_sm_80_and_sm_90a) {
  static const struct { int major; const char *arch; } targets[] = {{8, "sm_80"}, {9, "sm_90a"}};
  for (int i = 0; i < 2; i++) {
    char *text = math_ptx(targets[i].major, NULL);
    EXPECT(text != NULL, "no %s target", targets[i].arch);
    if (!text) continue;
    char label[32];
    snprintf(label, sizeof label, "math_%s", targets[i].arch);
    char *log = NULL;
    EXPECT(ptxas_run(ptxas, work_dir, label, text, targets[i].arch, &log),
           "ptxas rejected the math kernels for %s (%s/%s.ptx):\n%.2000s", targets[i].arch, work_dir, label,
           log ? log : "(no log)");
    free(log);
    free(text);
  }
}

/* A change to the transcription shows in this file's diff. */
TEST(exp_and_sin_ptx_match_the_reviewed_copy) {
  static const char *const only[] = {"exponential", "sine", NULL};
  static const char path[] = "tests/ptx/math_exp_sin.ptx";
  char *text = math_ptx(8, only);
  if (!text) return;
  char why[512];
  EXPECT(reviewed_copy_matches(path, text, why, sizeof why), "%s", why);
  free(text);
}

int main(void) {
  snprintf(work_dir, sizeof work_dir, "/tmp/axle-ptxmath-XXXXXX");
  if (!mkdtemp(work_dir)) {
    printf("FAIL test_ptx_math_setup\n  cannot make a temporary directory\n");
    return 1;
  }
  RUN(each_sequence_run_on_the_host_gives_the_reference_bits);
  RUN(every_f32_math_function_has_a_kernel_that_keeps_ieee_rounding);
  RUN(each_kernel_loads_every_coefficient_of_its_reference_table);
  RUN(exp_and_sin_ptx_match_the_reviewed_copy);
  if (tool_find("ptxas", ptxas, sizeof ptxas)) RUN(ptxas_assembles_every_math_kernel_for_sm_80_and_sm_90a);
  else printf("SKIP ptxas_assembles_every_math_kernel_for_sm_80_and_sm_90a (ptxas not found)\n");
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", work_dir);
  if (system(command) != 0) printf("  could not remove %s\n", work_dir);
  return test_summary();
}
