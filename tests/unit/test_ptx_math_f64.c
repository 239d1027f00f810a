/* The f64 math functions in PTX (src/emit_ptx/ptx_math_f64.c), checked as
 * test_ptx_math.c checks the f32 ones: each sequence, run on the host by
 * the small PTX interpreter (ptx_interpret.h), gives math_reference_f64.c's
 * bits for every input of a sweep (special values, bit patterns over all
 * doubles, and values spread over the ranges where the functions change);
 * every op's kernel keeps IEEE rounding (no .approx, no .ftz) and loads
 * its reference table's coefficients; ptxas assembles all of them for
 * sm_80 and sm_90a (SKIP without ptxas). */
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
  double (*unary)(double);
  double (*binary)(double, double);
  const double *table; /* coefficients it must load (NULL: none) */
  int table_count;
} MathCase;

static const MathCase math_cases[] = {
    {"exponential", OP_EXPONENTIAL, mathref_exp, NULL, mathref_exp_f64_table, MATHREF_EXP_F64_COUNT},
    {"exponential-minus-one", OP_EXPONENTIAL_MINUS_ONE, mathref_expm1, NULL, mathref_exp_f64_table,
     MATHREF_EXP_F64_COUNT},
    {"log", OP_LOG, mathref_log, NULL, mathref_log_f64_table, MATHREF_LOG_F64_COUNT},
    {"log-plus-one", OP_LOG_PLUS_ONE, mathref_log1p, NULL, mathref_log_f64_table, MATHREF_LOG_F64_COUNT},
    {"tanh", OP_TANH, mathref_tanh, NULL, mathref_exp_f64_table, MATHREF_EXP_F64_COUNT},
    {"logistic", OP_LOGISTIC, mathref_logistic, NULL, mathref_exp_f64_table, MATHREF_EXP_F64_COUNT},
    {"rsqrt", OP_RSQRT, mathref_rsqrt, NULL, NULL, 0},
    {"atan2", OP_ATAN2, NULL, mathref_atan2, mathref_atan_f64_table, MATHREF_ATAN_F64_COUNT},
    {"power", OP_POWER, NULL, mathref_pow, mathref_pow_log_f64_table, MATHREF_POW_LOG_F64_COUNT},
    {"atan", OP_ATAN, mathref_atan, NULL, mathref_atan_f64_table, MATHREF_ATAN_F64_COUNT},
    {"asin", OP_ASIN, mathref_asin, NULL, mathref_atan_f64_table, MATHREF_ATAN_F64_COUNT},
    {"acos", OP_ACOS, mathref_acos, NULL, mathref_atan_f64_table, MATHREF_ATAN_F64_COUNT},
    {"sinh", OP_SINH, mathref_sinh, NULL, mathref_exp_f64_table, MATHREF_EXP_F64_COUNT},
    {"cosh", OP_COSH, mathref_cosh, NULL, mathref_exp_f64_table, MATHREF_EXP_F64_COUNT},
    {"asinh", OP_ASINH, mathref_asinh, NULL, mathref_log_f64_table, MATHREF_LOG_F64_COUNT},
    {"acosh", OP_ACOSH, mathref_acosh, NULL, mathref_log_f64_table, MATHREF_LOG_F64_COUNT},
    {"atanh", OP_ATANH, mathref_atanh, NULL, mathref_log_f64_table, MATHREF_LOG_F64_COUNT},
    {"sine", OP_SINE, mathref_sin, NULL, mathref_sin_f64_table, MATHREF_SIN_F64_COUNT},
    {"cosine", OP_COSINE, mathref_cos, NULL, mathref_cos_f64_table, MATHREF_COS_F64_COUNT},
    {"tan", OP_TAN, mathref_tan, NULL, mathref_sin_f64_table, MATHREF_SIN_F64_COUNT},
    {"cbrt", OP_CBRT, mathref_cbrt, NULL, NULL, 0}, /* its f32 guess: test_ptx_math.c */
    {"erf", OP_ERF, mathref_erf, NULL, mathref_erf_small_f64_table, MATHREF_ERF_SMALL_F64_COUNT},
};
enum { MATH_CASE_COUNT = sizeof math_cases / sizeof *math_cases };

static uint64_t double_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

/* The kernel of y = op(x) (or op(x, w)) over f64[1000], appended to b. */
static bool math_kernel_emit(PtxBuilder *b, const MathCase *c) {
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  x = f64[1000] parameter(0)\n  w = f64[1000] parameter(1)\n"
           "  ROOT y = f64[1000] %s(x%s)\n}\n",
           c->op, c->binary ? ", w" : "");
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "math.hlo", &st);
  EXPECT(m != NULL, "%s: %s", c->op, st.message);
  if (!m) return false;
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL, "%s: %s", c->op, st.message);
  bool ok = false;
  if (k) {
    char entry[160];
    snprintf(entry, sizeof entry, "math64_%s", c->op);
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

static char *math_ptx(int major) {
  PtxTarget t;
  Status st;
  if (!ptx_target_for_device(major, 0, &t, &st)) return NULL;
  PtxBuilder b;
  ptx_builder_init(&b, &t);
  for (int i = 0; i < MATH_CASE_COUNT; i++) math_kernel_emit(&b, &math_cases[i]);
  char *text = strdup(ptx_builder_text(&b));
  ptx_builder_free(&b);
  return text;
}

static char *kernel_text(const char *module, const char *op) {
  char entry[160];
  snprintf(entry, sizeof entry, ".entry math64_%s(", op);
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

/* Input i of a sweep: special values first; then, alternately, bit
 * patterns spread over every double by an odd multiplier and values of
 * magnitude 2^-40 .. 2^12 (where exp, log, the trig functions and pow's
 * results change most), both signs. */
static double sweep_input(uint64_t i, uint64_t shift) {
  static const double specials[] = {
      0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 0.5, -0.5, 2.0, 4.9e-324, -4.9e-324, 1.7976931348623157e308,
      -1.7976931348623157e308, 0x1p-1022, 0x1.fffffffffffffp-1023, 709.7, -745.1, 710.0, -746.0, 3.141592653589793,
      1.5707963267948966, 0x1p20, -0x1p20, 0x1p52, 0x1p53, -3.0, 1e-300, 1e300, 0.9999999999999999, 1.0000000000000002,
      22.0, 0x1p28, -0x1p-54, 0x1p-27, 1e22, 6.0, 0.25, 0.75, 1e-10, 123456.789, -0x1p-900, 0x1p-1000};
  uint64_t n = sizeof specials / sizeof *specials;
  if (i < n) return specials[(i + shift) % n];
  uint64_t h = (i + shift) * UINT64_C(0x9E3779B97F4A7C15);
  if (i & 1) {
    double x;
    memcpy(&x, &h, sizeof x);
    return x;
  }
  double mantissa = 1.0 + (double)(h >> 12) * 0x1p-52;
  int exponent = (int)((h >> 4) % 53) - 40;
  return (h & 1 ? -1.0 : 1.0) * ldexp(mantissa, exponent);
}

static uint64_t *interpreter_reg(PtxiProgram *p, PtxReg r) {
  char name[16];
  int length;
  ptx_reg_name(r, name, sizeof name);
  int cls = ptxi_class(name, &length);
  return &p->regs[cls][atoi(name + length)];
}

enum { SWEEP_COUNT = 1 << 15 };

static bool sequence_parse(const MathCase *c, PtxiProgram *p, PtxReg *x, PtxReg *w, PtxReg *y) {
  PtxTarget t;
  Status st;
  if (!ptx_target_for_device(8, 0, &t, &st)) return false;
  PtxBuilder b;
  ptx_builder_init(&b, &t);
  ptx_kernel_begin(&b, "sequence", "one math function");
  *x = ptx_reg_new(&b, PTX_F64), *w = ptx_reg_new(&b, PTX_F64), *y = ptx_reg_new(&b, PTX_F64);
  PtxReg operands[2] = {*x, *w};
  bool ok = ptx_math_f64_emit(&b, c->opcode, *y, operands);
  EXPECT(ok, "%s: no sequence", c->op);
  ok = ok && ptxi_parse(p, b.body.data ? b.body.data : "");
  EXPECT(ok, "%s: the interpreter cannot read the sequence: %s", c->op, p->error);
  ptx_builder_free(&b);
  return ok;
}

static void sweep_case(const MathCase *c) {
  PtxiProgram *p = calloc(1, sizeof *p);
  /* the one .global the sequence reads (the interpreter knows one) */
  bool erf = c->opcode == OP_ERF;
  p->table = erf ? (const uint32_t *)(const void *)mathref_erfc_f64_rows
                 : (const uint32_t *)(const void *)mathref_two_over_pi_words;
  p->table_words = erf ? 2 * MATHREF_ERFC_F64_ROWS * MATHREF_ERFC_F64_COUNT : 2 * MATHREF_TWO_OVER_PI_WORDS;
  PtxReg x, w, y;
  if (sequence_parse(c, p, &x, &w, &y)) {
    int wrong = 0;
    for (uint64_t j = 0; j < SWEEP_COUNT && wrong < 3; j++) {
      double a = sweep_input(j, 0), b = sweep_input(j, 7);
      double want = c->unary ? c->unary(a) : c->binary(a, b);
      *interpreter_reg(p, x) = double_bits(a);
      *interpreter_reg(p, w) = double_bits(b);
      bool ran = ptxi_run(p);
      uint64_t got_bits = *interpreter_reg(p, y);
      double got;
      memcpy(&got, &got_bits, sizeof got);
      if (ran && (double_bits(want) == got_bits || (isnan(want) && isnan(got)))) continue;
      wrong++;
      char at[80];
      if (c->binary) snprintf(at, sizeof at, "%.17g, %.17g", a, b);
      else snprintf(at, sizeof at, "%.17g", a);
      EXPECT(false, "%s(%s): wanted %.17g (0x%016llx), got %.17g (0x%016llx)%s%s", c->op, at, want,
             (unsigned long long)double_bits(want), got, (unsigned long long)got_bits, ran ? "" : ": ",
             ran ? "" : p->error);
    }
  }
  free(p->insts);
  free(p);
}

TEST(each_f64_sequence_run_on_the_host_gives_the_reference_bits) {
  for (int i = 0; i < MATH_CASE_COUNT; i++) sweep_case(&math_cases[i]);
}

TEST(every_f64_math_kernel_keeps_ieee_rounding_and_loads_its_table) {
  char *text = math_ptx(8);
  EXPECT(text != NULL, "no sm_80 target");
  if (!text) return;
  for (int i = 0; i < MATH_CASE_COUNT; i++) {
    const MathCase *c = &math_cases[i];
    char *k = kernel_text(text, c->op);
    EXPECT(k != NULL, "%s: no kernel", c->op);
    if (!k) continue;
    EXPECT(strstr(k, "on f64, math_algorithms.c"), "%s: not the math sequence", c->op);
    EXPECT(!strstr(k, ".approx") && !strstr(k, ".ftz"), "%s: an .approx or .ftz instruction", c->op);
    for (int j = 0; j < c->table_count; j++) {
      char immediate[24];
      snprintf(immediate, sizeof immediate, "0d%016llX", (unsigned long long)double_bits(c->table[j]));
      EXPECT(strstr(k, immediate), "%s: coefficient %d (%.17g) is missing", c->op, j, c->table[j]);
    }
    free(k);
  }
  free(text);
}

TEST(ptxas_assembles_every_f64_math_kernel_for_sm_80_and_sm_90a) {
  static const struct { int major; const char *arch; } targets[] = {{8, "sm_80"}, {9, "sm_90a"}};
  for (int i = 0; i < 2; i++) {
    char *text = math_ptx(targets[i].major);
    EXPECT(text != NULL, "no %s target", targets[i].arch);
    if (!text) continue;
    char label[32];
    snprintf(label, sizeof label, "math64_%s", targets[i].arch);
    char *log = NULL;
    EXPECT(ptxas_run(ptxas, work_dir, label, text, targets[i].arch, &log),
           "ptxas rejected the f64 math kernels for %s (%s/%s.ptx):\n%.2000s", targets[i].arch, work_dir, label,
           log ? log : "(no log)");
    free(log);
    free(text);
  }
}

int main(void) {
  snprintf(work_dir, sizeof work_dir, "/tmp/axle-ptxmath64-XXXXXX");
  if (!mkdtemp(work_dir)) {
    printf("FAIL test_ptx_math_f64_setup\n  cannot make a temporary directory\n");
    return 1;
  }
  RUN(each_f64_sequence_run_on_the_host_gives_the_reference_bits);
  RUN(every_f64_math_kernel_keeps_ieee_rounding_and_loads_its_table);
  if (tool_find("ptxas", ptxas, sizeof ptxas)) RUN(ptxas_assembles_every_f64_math_kernel_for_sm_80_and_sm_90a);
  else printf("SKIP ptxas_assembles_every_f64_math_kernel_for_sm_80_and_sm_90a (ptxas not found)\n");
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", work_dir);
  if (system(command) != 0) printf("  could not remove %s\n", work_dir);
  return test_summary();
}
