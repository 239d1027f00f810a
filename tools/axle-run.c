/* axle-run: load an HLO module, run it, write or print its results.
 *
 *   axle-run [--backend cpu|interp|gpu] [--in FILE.npy]... [--out DIR] [--seed N]
 *            [--time N] [--threads N] [--check] [--find-nan] [--opt|--no-opt] [--stats]
 *            [--dump DIR] [--dump_passes] [--parse-only] [--compile-only] MODULE.hlo
 *
 * The contract (docs/design.md): one --in per entry parameter, in order; without
 * --in the inputs are drawn from --seed. A tuple parameter takes one --in
 * per leaf, depth first, as --out writes them. --out DIR writes every leaf
 * of the result, depth first through tuples, as DIR/out0.npy, DIR/out1.npy,
 * ... Constants printed elided ({...}) are filled from --seed, with a
 * warning. --parse-only stops after parsing and verifying; --compile-only
 * after compiling (on the GPU backend the kernels are loaded by then, so
 * the fake driver's FAKE_CUDA_SAVE_PTX sees them: tests/gpu/ptxas_corpus.sh).
 * The backend is
 * cpu by default (interp on a machine without SSE4.1).
 * --check compares with the evaluator: on a native backend instruction by
 * instruction, each from the backend's own inputs, naming the first that
 * differs, and then the whole result against the module as written; on
 * the interpreter, the whole result. --find-nan names the first
 * instruction whose value holds a NaN or an infinity (docs/debugging.md).
 * Exit 0 on success, 1 for a run-time or input error, 2 for a usage, parse,
 * verify or compile error. */
#include <complex.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "axle.h"
#include "ir.h"
#include "opt/opt.h"
#include "emit_x86/gemm.h"
#include "runtime/executable.h"
#include "runtime/thread_pool.h"
#include "runtime/npy.h"

enum { MAX_INPUTS = 256 };

typedef struct Options {
  const char *backend, *out_dir, *dump_dir, *module_path;
  const char *inputs[MAX_INPUTS];
  int input_count;
  uint64_t seed;
  int time_runs, threads;
  bool check, find_nan, parse_only, compile_only;
  int opt;            /* 1 --opt, 0 --no-opt, -1 the backend's default */
  bool stats, dump_passes;
} Options;

static const char usage[] =
    "usage: axle-run [--backend cpu|interp|gpu] [--in FILE.npy]... [--out DIR] [--seed N]\n"
    "                [--time N] [--threads N] [--check] [--find-nan] [--opt|--no-opt] [--stats]\n"
    "                [--dump DIR] [--dump_passes] [--parse-only] [--compile-only] MODULE.hlo\n"
    "       axle-run --version\n";

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n%s", usage);
  return 2;
}

static bool parse_count(const char *s, long long min, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || end == s || v < min) return false;
  *out = v;
  return true;
}

/* The fastest backend this machine can use (docs/design.md): the CPU
 * backend wherever the hardware has SSE4.1, else the interpreter. (A bad
 * AXLE_CPU is the CPU backend's error to report, not a reason to switch.) */
static const char *default_backend(void) {
  CpuFeatures cpu;
  cpu_features_detect_hardware(&cpu);
  return cpu.level != CPU_LEVEL_NONE ? "cpu" : "interp";
}

/* Returns 0 when the options are good, else the exit code. */
static int parse_options(int argc, char **argv, Options *o) {
  *o = (Options){.backend = default_backend(), .seed = 0, .threads = 0, .opt = -1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    long long n;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      exit(0);
    } else if (strcmp(a, "--version") == 0) {
      printf("axle-run %s\n", axle_version());
      exit(0);
    } else if (strcmp(a, "--check") == 0) {
      o->check = true;
    } else if (strcmp(a, "--find-nan") == 0) {
      o->find_nan = true;
    } else if (strcmp(a, "--opt") == 0 || strcmp(a, "--no-opt") == 0) {
      o->opt = a[2] == 'o';
    } else if (strcmp(a, "--stats") == 0) {
      o->stats = true;
    } else if (strcmp(a, "--dump_passes") == 0) {
      o->dump_passes = true;
    } else if (strcmp(a, "--parse-only") == 0) {
      o->parse_only = true;
    } else if (strcmp(a, "--compile-only") == 0) {
      o->compile_only = true;
    } else if (a[0] == '-' && a[1] == '-' && !has_value) {
      return usage_error("%s needs a value", a);
    } else if (strcmp(a, "--backend") == 0) {
      o->backend = argv[++i];
    } else if (strcmp(a, "--in") == 0) {
      if (o->input_count == MAX_INPUTS) return usage_error("too many --in files%s", "");
      o->inputs[o->input_count++] = argv[++i];
    } else if (strcmp(a, "--out") == 0) {
      o->out_dir = argv[++i];
    } else if (strcmp(a, "--dump") == 0) {
      o->dump_dir = argv[++i];
    } else if (strcmp(a, "--seed") == 0) {
      if (!parse_count(argv[++i], 0, &n)) return usage_error("--seed takes a number, not '%s'", argv[i]);
      o->seed = (uint64_t)n;
    } else if (strcmp(a, "--time") == 0) {
      if (!parse_count(argv[++i], 1, &n) || n > 1000000)
        return usage_error("--time takes a run count from 1 to 1000000, not '%s'", argv[i]);
      o->time_runs = (int)n;
    } else if (strcmp(a, "--threads") == 0) {
      if (!parse_count(argv[++i], 1, &n) || n > 1024)
        return usage_error("--threads takes a count from 1 to 1024, not '%s'", argv[i]);
      o->threads = (int)n;
    } else if (a[0] == '-' && a[1] != '\0') {
      return usage_error("unknown option '%s'", a);
    } else if (o->module_path) {
      return usage_error("more than one module given ('%s')", a);
    } else {
      o->module_path = a;
    }
  }
  if (!o->module_path) return usage_error("no module given%s", "");
  return 0;
}

/* ---- inputs ---- */

/* Types NumPy lacks come in the type carrying them (npy_carrier_type): a
 * <u2 array stands for a bf16 parameter, |u1 bits for an f8 one, |i1
 * values for an s4 one. A 4- or 2-bit value must fit. */
static bool adopt_carried_type(Literal *lit, const Shape *param, int index, Status *st) {
  if (param->type == lit->shape.type || npy_carrier_type(param->type) != lit->shape.type)
    return true;
  ElementType carrier = lit->shape.type;
  lit->shape.type = param->type;
  if (!type_is_integer(param->type)) return true;
  for (int64_t i = 0; i < shape_element_count(&lit->shape); i++) {
    int64_t v = ((const int8_t *)lit->data)[i];
    if (carrier == TYPE_U8) v = ((const uint8_t *)lit->data)[i];
    literal_set_s64(lit, i, v);
    if (literal_get_s64(lit, i) != v)
      return status_error(st, STATUS_INPUT_ERROR, "input %d: value %lld does not fit in %s", index,
                          (long long)v, type_name(param->type));
  }
  return true;
}

/* A value for a parameter of shape s: a tuple is built from its leaves,
 * depth first, each from the next --in file (as --out writes them), or
 * drawn from the seed when no files are given. */
static Literal *load_value(const Options *o, const Shape *s, int *next_file, uint64_t *state,
                           Status *st) {
  if (shape_is_tuple(s)) {
    Literal **elements = calloc((size_t)s->tuple_count + 1, sizeof *elements);
    if (!elements) {
      status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
      return NULL;
    }
    for (int i = 0; i < s->tuple_count; i++) {
      elements[i] = load_value(o, &s->tuple_shapes[i], next_file, state, st);
      if (!elements[i]) {
        for (int k = 0; k < i; k++) literal_free(elements[k]);
        free(elements);
        return NULL;
      }
    }
    Literal *tuple = literal_create_tuple(elements, s->tuple_count);
    free(elements);
    return tuple;
  }
  if (o->input_count == 0) {
    Literal *lit = literal_create(s);
    literal_fill_random(lit, state);
    return lit;
  }
  int file = (*next_file)++;
  Literal *lit = npy_read(o->inputs[file], st);
  if (lit && !adopt_carried_type(lit, s, file, st)) {
    literal_free(lit);
    return NULL;
  }
  return lit;
}

/* One buffer per entry parameter. Their shapes are checked by
 * executable_run, the check every run path shares. */
static bool load_inputs(const Options *o, const Module *m, HostBuffer **args, Status *st) {
  const Computation *entry = m->entry;
  int leaves = 0;
  for (int i = 0; i < entry->parameter_count; i++) leaves += shape_leaf_count(&entry->parameters[i]->shape);
  if (o->input_count > 0 && o->input_count != leaves) {
    if (leaves == entry->parameter_count)
      return status_error(st, STATUS_INPUT_ERROR, "the module takes %d parameter%s, got %d --in file%s",
                          entry->parameter_count, entry->parameter_count == 1 ? "" : "s",
                          o->input_count, o->input_count == 1 ? "" : "s");
    return status_error(st, STATUS_INPUT_ERROR,
                        "the module's %d parameter%s hold %d arrays (tuples count each leaf), got %d --in file%s",
                        entry->parameter_count, entry->parameter_count == 1 ? "" : "s", leaves,
                        o->input_count, o->input_count == 1 ? "" : "s");
  }
  uint64_t state = o->seed;
  int next_file = 0;
  for (int i = 0; i < entry->parameter_count; i++) {
    Literal *value = load_value(o, &entry->parameters[i]->shape, &next_file, &state, st);
    if (!value) return false;
    args[i] = host_buffer_adopt_literal(value);
  }
  return true;
}

/* ---- outputs ---- */

static void print_array_summary(const Literal *lit, int index) {
  StrBuf sb = {0};
  shape_print(&sb, &lit->shape, false);
  printf("out%d: %s", index, sb.data);
  strbuf_free(&sb);
  int64_t n = shape_element_count(&lit->shape), shown = n <= 16 ? n : 8;
  printf(" [");
  for (int64_t i = 0; i < shown; i++) {
    if (type_is_complex(lit->shape.type)) {
      double _Complex z = literal_get_complex(lit, i);
      printf("%s(%.9g, %.9g)", i ? ", " : "", creal(z), cimag(z));
    } else if (type_is_float(lit->shape.type)) printf("%s%.9g", i ? ", " : "", literal_get_f64(lit, i));
    else if (lit->shape.type == TYPE_U64) printf("%s%llu", i ? ", " : "", (unsigned long long)literal_get_u64(lit, i));
    else printf("%s%lld", i ? ", " : "", (long long)literal_get_s64(lit, i));
  }
  printf("%s]\n", shown < n ? ", ..." : "");
}

/* Visits the array leaves depth first, numbering them. */
static bool emit_outputs(const Literal *lit, const char *dir, int *index, Status *st) {
  if (shape_is_tuple(&lit->shape)) {
    for (int i = 0; i < lit->shape.tuple_count; i++)
      if (!emit_outputs(lit->elements[i], dir, index, st)) return false;
    return true;
  }
  int at = (*index)++;
  if (!dir) {
    print_array_summary(lit, at);
    return true;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/out%d.npy", dir, at);
  return npy_write(path, lit, st);
}

static bool make_dir(const char *dir, Status *st) {
  if (mkdir(dir, 0777) == 0 || errno == EEXIST) return true;
  return status_error(st, STATUS_RUNTIME_ERROR, "cannot create directory %s: %s", dir, strerror(errno));
}

/* What to compile for: the backend, whether to optimize (the interpreter
 * runs the module as written unless --opt; native backends optimize unless
 * --no-opt), and the optimizer's options: AXLE_FLAGS first, then this
 * tool's own flags. */
static bool compile_options_for(const Options *o, ExecutableOptions *eo, Status *st) {
  axle_backend_t backend;
  if (!backend_id_from_name(o->backend, &backend, st)) return false;
  executable_options_default(eo, backend);
  eo->optimize = o->opt;
  eo->threads = o->threads;  /* 0: AXLE_THREADS, else every core */
  if (!opt_options_from_env(&eo->opt, st)) return false;
  if (o->dump_dir) {
    char flag[1100];
    snprintf(flag, sizeof flag, "--dump_to=%s", o->dump_dir);
    if (!opt_options_parse_flag(&eo->opt, flag, st)) return false;
  }
  if (o->dump_passes) eo->opt.dump_passes = true;
  if (o->stats) eo->opt.stats = true;
  return true;
}

/* ---- timing ---- */

/* The dots' and convolutions' rate; on the CPU backend beside the FMA peak
 * measured now, on this machine, for the threads the run used, so that the
 * fraction compares like with like under the same load. */
static void print_matmul_rate(const Executable *exe, int64_t flops, double median_ms) {
  double gflops = (double)flops / (median_ms * 1e6);
  if (flops >= 100000000) printf("matmul: %.3f GFLOP per run, %.1f GFLOP/s", (double)flops * 1e-9, gflops);
  else printf("matmul: %.0f FLOP per run, %.2f GFLOP/s", (double)flops, gflops);
  CpuFeatures cpu;
  Status ignored = {0};
  if (strcmp(exe->backend->name, "cpu") == 0 && cpu_features_detect(&cpu, &ignored)) {
    int threads = exe->threads > 0 ? exe->threads : thread_pool_default_count();
    double peak = gemm_peak_gflops_measure(cpu.level, 0.2, 3, &ignored) * threads;
    if (peak > 0)
      printf(", %.0f%% of the FMA peak measured now in CPU time (%.1f GFLOP/s = %d thread%s x %s)", 100 * gflops / peak, peak,
             threads, threads == 1 ? "" : "s", cpu_level_name(cpu.level));
  }
  printf("\n");
}

static bool print_times(const Executable *exe, HostBuffer *const *args, int n, int runs, Status *st) {
  RunTimes t;
  if (!executable_time(exe, args, n, runs, &t, st)) return false;
  printf("time: median_ms=%.4f min_ms=%.4f max_ms=%.4f runs=%d\n", t.median_ms, t.min_ms, t.max_ms, t.runs);
  if (t.device_runs)  /* the kernels alone, by the device's clock, the arguments already there */
    printf("device: median_ms=%.4f min_ms=%.4f max_ms=%.4f runs=%d\n", t.device_median_ms, t.device_min_ms,
           t.device_max_ms, t.device_runs);
  printf("compile_ms=%.4f\n", exe->compile_ms);
  int64_t flops = count_matmul_flops(executable_module_to_run(exe));
  double rate_ms = t.device_runs ? t.device_median_ms : t.median_ms;  /* the device's clock where there is one */
  if (flops > 0 && rate_ms > 0) print_matmul_rate(exe, flops, rate_ms);
  return true;
}

/* ---- --check and --find-nan ---- */

/* A run watched instruction by instruction (executable_run_debug), then
 * the whole result against the evaluator on the module as written. On
 * the interpreter, which is the evaluator, --check compares only the whole
 * result (meaningful with --opt); --find-nan watches it all the same. */
static HostBuffer *run_watched(const Options *o, const Executable *exe, HostBuffer *const *args, int n, Status *st) {
  bool interp = exe->backend == &backend_interp;
  DebugOptions debug = {.check = o->check && !interp, .find_nan = o->find_nan};
  HostBuffer *result = NULL;
  DebugReport report;
  if (debug.check || debug.find_nan) {
    result = executable_run_debug(exe, args, n, &debug, &report, st);
    if (!result) return NULL;
    if (debug.find_nan)
      printf("find-nan: no NaN or infinity in the values of %d instruction%s\n", report.instructions,
             report.instructions == 1 ? "" : "s");
    if (debug.check)
      printf("check: %d instruction%s match%s the evaluator's on the same inputs%s\n", report.instructions,
             report.instructions == 1 ? "" : "s", report.instructions == 1 ? "es" : "",
             report.unread ? " (some values were in a layout it cannot read)" : "");
  } else {
    result = executable_run(exe, args, n, st);
    if (!result) return NULL;
  }
  if (o->check && !executable_check(exe, args, n, result, st)) {
    host_buffer_free(result);
    return NULL;
  }
  if (o->check) printf("check: %s matches the evaluator\n", exe->backend->name);
  return result;
}

/* ---- main ---- */

/* Parses and verifies the module. Constants XLA printed elided get values
 * from --seed; that they are made up is said once, on stderr. */
static Module *load_module(const Options *o, Status *st) {
  ParseOptions parse = {.fill_elided_constants = true, .elided_seed = o->seed};
  Module *m = parse_module_file_with(o->module_path, &parse, st);
  if (m && m->elided_constant_count > 0)
    fprintf(stderr, "warning: %d constant%s elided ({...}) and filled with random values; "
                    "results are not meaningful\n",
            m->elided_constant_count, m->elided_constant_count == 1 ? " was" : "s were");
  return m;
}

/* parse → compile (optimizing as asked) → load inputs → run (the
 * arguments checked there) → --check → outputs → --time. */
static int run(const Options *o, Status *st) {
  Module *m = load_module(o, st);
  if (!m) {
    status_print(st, stderr);
    return status_exit_code(st);
  }
  if (o->parse_only) {
    int instructions = 0;
    for (int c = 0; c < m->computation_count; c++) instructions += m->computations[c]->instruction_count;
    printf("parsed: %s, %d computation%s, %d instructions\n", m->name, m->computation_count,
           m->computation_count == 1 ? "" : "s", instructions);
    module_free(m);
    return 0;
  }
  int rc = 2, n = m->entry->parameter_count, outputs = 0;
  HostBuffer **args = calloc((size_t)n + 1, sizeof *args);
  HostBuffer *result = NULL;
  Literal *result_view = NULL;
  ExecutableOptions compile_options;
  Executable *exe = NULL;
  if (!compile_options_for(o, &compile_options, st)) goto done;
  exe = executable_compile(m, &compile_options, st);
  if (!exe) goto done;
  if (exe->stats) fputs(exe->stats, stderr);
  if (o->compile_only) {
    printf("compiled: %s for --backend %s in %.1f ms\n", m->name, exe->backend->name, exe->compile_ms);
    rc = 0;
    goto done;
  }
  rc = 1;
  if (!load_inputs(o, m, args, st)) goto done;
  result = o->check || o->find_nan ? run_watched(o, exe, args, n, st) : executable_run(exe, args, n, st);
  if (!result) goto done;
  if (o->out_dir && !make_dir(o->out_dir, st)) goto done;
  result_view = host_buffer_view(result);
  if (!emit_outputs(result_view, o->out_dir, &outputs, st)) goto done;
  if (o->time_runs && !print_times(exe, args, n, o->time_runs, st)) goto done;
  rc = 0;
done:
  /* The message may point into the module (its file name): print it first. */
  if (rc) status_print(st, stderr);
  literal_view_free(result_view);
  host_buffer_free(result);
  for (int i = 0; i < n; i++) host_buffer_free(args[i]);
  free(args);
  executable_free(exe);
  module_free(m);
  return rc;
}

int main(int argc, char **argv) {
  Options o;
  int rc = parse_options(argc, argv, &o);
  if (rc) return rc;
  Status st;
  status_clear(&st);
  return run(&o, &st);
}
