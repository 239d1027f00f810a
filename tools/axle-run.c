/* axle-run: load an HLO module, run it, write or print its results.
 *
 *   axle-run [--backend cpu|interp|gpu] [--in FILE.npy]... [--out DIR] [--seed N]
 *            [--time N [--peak]] [--threads N] [--check] [--find-nan] [--opt|--no-opt] [--stats]
 *            [--dump DIR] [--dump_passes] [--parse-only] [--compile-only] [--target sm_90a]
 *            MODULE.hlo
 *
 * The contract (docs/design.md): one --in per entry parameter, in order; without
 * --in the inputs are drawn from --seed. A tuple parameter takes one --in
 * per leaf, depth first, as --out writes them. --out DIR writes every leaf
 * of the result, depth first through tuples, as DIR/out0.npy, DIR/out1.npy,
 * ... Constants printed elided ({...}) are filled from --seed, with a
 * warning. --parse-only stops after parsing and verifying; --compile-only
 * after compiling (on the GPU backend the kernels are loaded by then, so
 * the fake driver's FAKE_CUDA_SAVE_PTX sees them: tests/gpu/ptxas_corpus.sh;
 * with --target the PTX is written for that target with no device opened,
 * and nothing is loaded).
 * The backend is
 * cpu by default (interp on a machine without SSE4.1).
 * --check compares with the evaluator: on a native backend instruction by
 * instruction, each from the backend's own inputs, naming the first that
 * differs, and then the whole result against the module as written; on
 * the interpreter, the whole result. --find-nan names the first
 * instruction whose value holds a NaN or an infinity (docs/debugging.md).
 * --devices N runs the module on N devices in one process (CPU threads, or
 * GPUs 0..N-1 through NCCL)
 * (docs/multi-device.md): the inputs are one set for every device, or N
 * sets one after another (device 0's first); --out DIR writes device d's
 * leaves as DIR/device<d>/out<k>.npy.
 * Exit 0 on success, 1 for a run-time or input error, 2 for a usage, parse,
 * verify or compile error. */
#include <complex.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>

#include "axle.h"
#include "ir.h"
#include "opt/opt.h"
#include "emit_ptx/ptx_builder.h"
#include "emit_x86/gemm.h"
#include "runtime/executable.h"
#include "runtime/thread_pool.h"
#include "runtime/npy.h"
#include "runtime/npz.h"

enum { MAX_INPUTS = 256 };

/* An input as given: a file (.npy, or .npz holding several leaves) or an
 * inline value (--input f32[2]=1,2). */
typedef struct InputArg {
  const char *text;
  bool is_inline;
} InputArg;

typedef struct Options {
  const char *backend, *out_path, *dump_dir, *module_path, *expected_path, *json_path;
  const char *target;  /* --target: the GPU target, NULL for the device's own */
  InputArg inputs[MAX_INPUTS];
  int input_count;
  uint64_t seed;
  int time_runs, threads;
  int devices;        /* --devices N; 0: one device; -1: --devices mpi, one per rank */
  double rtol, atol;
  bool check, find_nan, parse_only, compile_only, print_all, time_kernels, peak, version;
  int opt;            /* 1 --opt, 0 --no-opt, -1 the backend's default */
  OptOptions optimizer;  /* AXLE_FLAGS, then the optimizer flags given here */
} Options;

/* The tool's own flags, one line each in --help. A name is written with
 * '-'; '_' is accepted in its place (--dump_passes), and a value may follow
 * as the next word or after '=' (--seed 3, --seed=3). The optimizer's flags
 * (opt_flag_help) are accepted too and listed after these. */
typedef enum FlagId {
  FLAG_BACKEND, FLAG_IN, FLAG_INPUT, FLAG_SEED, FLAG_OUT, FLAG_EXPECTED, FLAG_RTOL, FLAG_ATOL, FLAG_PRINT_ALL,
  FLAG_TIME, FLAG_TIME_KERNELS, FLAG_PEAK, FLAG_JSON, FLAG_THREADS, FLAG_CHECK, FLAG_FIND_NAN, FLAG_OPT, FLAG_NO_OPT,
  FLAG_DUMP, FLAG_PARSE_ONLY, FLAG_COMPILE_ONLY, FLAG_VERSION, FLAG_HELP, FLAG_DEVICES, FLAG_TARGET,
} FlagId;

typedef struct Flag {
  FlagId id;
  const char *name, *value, *help;   /* value: the placeholder, NULL for a switch */
} Flag;

static const Flag flags[] = {
    {FLAG_BACKEND, "backend", "NAME", "interp, cpu or gpu (default: cpu where the CPU has SSE4.1)"},
    {FLAG_IN, "in", "FILE", "the next input(s): FILE.npy is one array, FILE.npz its arrays in order"},
    {FLAG_INPUT, "input", "SPEC", "the next input inline: TYPE[DIMS]=V,V,... (f32[2,2]=1,2,3,4; one V fills all)"},
    {FLAG_SEED, "seed", "N", "without inputs, draw them (and elided constants) from seed N (default 0)"},
    {FLAG_OUT, "out", "PATH", "write the results: PATH.npz, or a folder (made if missing) of out0.npy, ..."},
    {FLAG_EXPECTED, "expected", "PATH", "compare the results with out*.npy in a folder or a .npz (exit 1 if not)"},
    {FLAG_RTOL, "rtol", "X", "--expected's relative tolerance for floats (default 1e-5; 1e-2 for 16-bit types)"},
    {FLAG_ATOL, "atol", "X", "--expected's absolute tolerance for floats (default 1e-6)"},
    {FLAG_PRINT_ALL, "print-all", NULL, "print every element of every result (default: a summary)"},
    {FLAG_TIME, "time", "N", "time N runs after a warm-up: median, min, max, compile time"},
    {FLAG_TIME_KERNELS, "time-kernels", NULL, "with --time: each instruction's median time, slowest first"},
    {FLAG_PEAK, "peak", NULL, "with --time, on the CPU: also measure the FMA peak now (about 1 s) and print\n"
     "                           the dots' and convolutions' rate as a fraction of it"},
    {FLAG_JSON, "json", "FILE", "with --time: the times as JSON into FILE ('-': stdout)"},
    {FLAG_THREADS, "threads", "N", "threads of the native backends (default: AXLE_THREADS, else all cores)"},
    {FLAG_DEVICES, "devices", "N", "run on N devices in one process (replica_count x num_partitions, or N\n"
     "                           replicas): the inputs are one set for all, or N sets in device order; --out\n"
     "                           DIR writes DIR/device<d>/out<k>.npy (cpu, interp, or gpu: GPU d through\n"
     "                           NVIDIA's libnccl.so.2; docs/multi-device.md);\n"
     "                           --devices mpi under mpirun: one device per rank (Open MPI's libmpi)"},
    {FLAG_CHECK, "check", NULL, "compare with the evaluator, naming the first instruction that differs"},
    {FLAG_FIND_NAN, "find-nan", NULL, "name the first instruction that produces a NaN or an infinity"},
    {FLAG_OPT, "opt", NULL, "optimize (the interpreter's default is the module as written)"},
    {FLAG_NO_OPT, "no-opt", NULL, "do not optimize (the native backends' default is to optimize)"},
    {FLAG_DUMP, "dump", "DIR", "write dumps under DIR: HLO per stage, buffers, kernel IR, listings"},
    {FLAG_PARSE_ONLY, "parse-only", NULL, "stop after parsing and verifying"},
    {FLAG_COMPILE_ONLY, "compile-only", NULL, "stop after compiling"},
    {FLAG_TARGET, "target", "NAME", "--backend gpu: write the PTX for NAME (sm_80, sm_86, sm_89, sm_90a, sm_90), not\n"
     "                           for the device's own compute capability; with --compile-only no GPU or\n"
     "                           driver is needed (--dump DIR writes each kernel's PTX under DIR/kernels);\n"
     "                           a run needs a device that runs NAME's PTX (docs/gpu.md)"},
    {FLAG_VERSION, "version", NULL, "print the version and exit"},
    {FLAG_HELP, "help", NULL, "print this help and exit (also -h)"},
};

static void print_flag_line(FILE *f, const char *name, const char *value, const char *help) {
  char left[64];
  snprintf(left, sizeof left, "--%s%s%s", name, value ? " " : "", value ? value : "");
  fprintf(f, "  %-24s %s\n", left, help);
}

static void print_help(FILE *f) {
  fputs("usage: axle-run [FLAG]... MODULE.hlo       (MODULE '-': read it from stdin)\n\n"
        "Runs an HLO module: parse, optimize, compile, run on the inputs, print or write the results.\n\n"
        "flags:\n",
        f);
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    print_flag_line(f, flags[i].name, flags[i].value, flags[i].help);
  fputs("\noptimizer flags (docs/optimizer.md; also read from AXLE_FLAGS):\n", f);
  for (const OptFlagHelp *o = opt_flag_help; o->name; o++) print_flag_line(f, o->name, o->value, o->help);
  fputs("\nenvironment:\n"
        "  AXLE_FLAGS         optimizer flags, read before the command line's (\"--dump-to=DIR --stats\")\n"
        "  AXLE_THREADS       the thread count when --threads is not given (1 to 1024)\n"
        "  AXLE_CPU           the CPU backend's ISA level: sse4, avx2, avx512 (default: the best this CPU has)\n"
        "  AXLE_CUDA_DRIVER   the CUDA driver library to open (default: libcuda.so.1)\n"
        "  AXLE_NCCL_LIBRARY  the NCCL library for --devices on GPUs (default: libnccl.so.2)\n"
        "  AXLE_MPI_LIBRARY   the MPI library for --devices mpi (default: Open MPI's libmpi.so.40)\n"
        "\nexit codes:\n"
        "  0  success\n"
        "  1  a run-time or input error (bad inputs, --check or --expected found a difference)\n"
        "  2  a usage, parse, verify or compile error\n",
        f);
}

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(axle-run --help lists the flags)\n");
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

static bool parse_tolerance(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || end == s || !(v >= 0)) return false;
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

/* A flag's name as written, '_' read as '-', without "--" and "=value". */
static void flag_name(const char *arg, char *name, size_t size) {
  size_t n = strcspn(arg + 2, "=");
  if (n >= size) n = size - 1;
  for (size_t i = 0; i < n; i++) name[i] = arg[2 + i] == '_' ? '-' : arg[2 + i];
  name[n] = 0;
}

static const Flag *find_flag(const char *name) {
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    if (strcmp(flags[i].name, name) == 0) return &flags[i];
  return NULL;
}

static const OptFlagHelp *find_optimizer_flag(const char *name) {
  for (const OptFlagHelp *o = opt_flag_help; o->name; o++)
    if (strcmp(o->name, name) == 0) return o;
  return NULL;
}

/* One of the tool's flags with its value (NULL for a switch). Returns 0
 * or the exit code. */
static int apply_flag(Options *o, const Flag *f, const char *value) {
  long long n;
  switch (f->id) {
  case FLAG_BACKEND: o->backend = value; break;
  case FLAG_IN:
  case FLAG_INPUT:
    if (o->input_count == MAX_INPUTS) return usage_error("more than 256 inputs%s", "");
    o->inputs[o->input_count++] = (InputArg){value, f->id == FLAG_INPUT};
    break;
  case FLAG_SEED:
    if (!parse_count(value, 0, &n)) return usage_error("--seed takes a number, not '%s'", value);
    o->seed = (uint64_t)n;
    break;
  case FLAG_OUT: o->out_path = value; break;
  case FLAG_EXPECTED: o->expected_path = value; break;
  case FLAG_RTOL:
  case FLAG_ATOL:
    if (!parse_tolerance(value, f->id == FLAG_RTOL ? &o->rtol : &o->atol))
      return usage_error(f->id == FLAG_RTOL ? "--rtol takes a number >= 0, not '%s'" : "--atol takes a number >= 0, not '%s'",
                         value);
    break;
  case FLAG_PRINT_ALL: o->print_all = true; break;
  case FLAG_TIME:
    if (!parse_count(value, 1, &n) || n > 1000000)
      return usage_error("--time takes a run count from 1 to 1000000, not '%s'", value);
    o->time_runs = (int)n;
    break;
  case FLAG_TIME_KERNELS: o->time_kernels = true; break;
  case FLAG_PEAK: o->peak = true; break;
  case FLAG_JSON: o->json_path = value; break;
  case FLAG_THREADS:
    if (!parse_count(value, 1, &n) || n > 1024) return usage_error("--threads takes a count from 1 to 1024, not '%s'", value);
    o->threads = (int)n;
    break;
  case FLAG_DEVICES:
    if (strcmp(value, "mpi") == 0) {
      o->devices = -1;
      break;
    }
    if (!parse_count(value, 1, &n) || n > 1024)
      return usage_error("--devices takes a count from 1 to 1024 or 'mpi', not '%s'", value);
    o->devices = (int)n;
    break;
  case FLAG_CHECK: o->check = true; break;
  case FLAG_FIND_NAN: o->find_nan = true; break;
  case FLAG_OPT: o->opt = 1; break;
  case FLAG_NO_OPT: o->opt = 0; break;
  case FLAG_DUMP: o->dump_dir = value; break;
  case FLAG_PARSE_ONLY: o->parse_only = true; break;
  case FLAG_COMPILE_ONLY: o->compile_only = true; break;
  case FLAG_TARGET: {
    PtxTarget target;
    Status why = {0};
    if (!ptx_target_from_name(value, &target, &why)) return usage_error("--target: %s", why.message);
    o->target = value;
    break;
  }
  case FLAG_VERSION: o->version = true; break;
  case FLAG_HELP: print_help(stdout); return -1;
  }
  return 0;
}

/* Returns 0 when the options are good, -1 after --help, else the exit code. */
static int parse_options(int argc, char **argv, Options *o, Status *st) {
  *o = (Options){.backend = default_backend(), .opt = -1, .rtol = -1, .atol = -1};
  opt_options_default(&o->optimizer);
  if (!opt_options_from_env(&o->optimizer, st)) {
    status_print(st, stderr);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0) return apply_flag(o, find_flag("help"), NULL);
    if (a[0] != '-' || strcmp(a, "-") == 0) {
      if (o->module_path) return usage_error("more than one module given ('%s')", a);
      o->module_path = a;
      continue;
    }
    if (a[1] != '-') return usage_error("unknown flag '%s'", a);
    char name[64];
    flag_name(a, name, sizeof name);
    const char *eq = strchr(a, '=');
    const Flag *f = find_flag(name);
    const OptFlagHelp *of = f ? NULL : find_optimizer_flag(name);
    if (!f && !of) return usage_error("unknown flag '%s'", a);
    const char *value_name = f ? f->value : of->value;
    const char *value = eq ? eq + 1 : NULL;
    if (value_name && !value) {
      if (i + 1 >= argc) return usage_error("%s needs a value", a);
      value = argv[++i];
    } else if (!value_name && value && f) {
      return usage_error("%s takes no value", a);
    }
    if (f) {
      int rc = apply_flag(o, f, value);
      if (rc) return rc;
      continue;
    }
    char flag[1200];
    snprintf(flag, sizeof flag, "--%s%s%s", name, value ? "=" : "", value ? value : "");
    if (!opt_options_parse_flag(&o->optimizer, flag, st)) return usage_error("%s", st->message);
  }
  if (o->version) return 0;
  if (!o->module_path) return usage_error("no module given%s", "");
  if ((o->time_kernels || o->json_path || o->peak) && !o->time_runs)
    return usage_error("--time-kernels, --peak and --json need --time N%s", "");
  if (o->devices != 0 && (o->check || o->find_nan || o->time_runs || o->expected_path))
    return usage_error("--check, --find-nan, --time and --expected run one device, not --devices%s", "");
  if (o->expected_path && o->out_path && strcmp(o->expected_path, o->out_path) == 0)
    return usage_error("--expected and --out name the same path '%s'", o->out_path);
  if (o->target && strcmp(o->backend, "gpu") != 0)
    return usage_error("--target names a GPU target: it goes with --backend gpu, not --backend %s", o->backend);
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

/* An inline input, TYPE[DIMS]=V,V,...: the values in row-major order, or
 * one value for every element. Complex types take .npy files. */
static Literal *parse_inline_input(const char *spec, Status *st) {
  const char *bracket = strchr(spec, '['), *eq = strchr(spec, '=');
  ElementType t;
  if (!bracket || !eq || eq < bracket || !type_from_name(spec, (size_t)(bracket - spec), &t) || t == TYPE_TUPLE ||
      t == TYPE_TOKEN || type_is_complex(t)) {
    status_error(st, STATUS_INPUT_ERROR, "--input '%s': expected TYPE[DIMS]=V,V,... with a real or integer TYPE", spec);
    return NULL;
  }
  int64_t dims[AXLE_MAX_RANK];
  int rank = 0;
  const char *p = bracket + 1;
  while (*p != ']') {
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p || d < 0 || rank == AXLE_MAX_RANK || (*end != ',' && *end != ']')) {
      status_error(st, STATUS_INPUT_ERROR, "--input '%s': the dimensions are not a list of sizes", spec);
      return NULL;
    }
    dims[rank++] = d;
    p = *end == ',' ? end + 1 : end;
  }
  if (p + 1 != eq) {
    status_error(st, STATUS_INPUT_ERROR, "--input '%s': expected '=' after the shape", spec);
    return NULL;
  }
  Shape shape = shape_array(t, rank, dims);
  Literal *lit = literal_create(&shape);
  int64_t count = shape_element_count(&shape), given = 0;
  for (const char *v = eq + 1; *v; given++) {
    size_t n = strcspn(v, ",");
    char word[64];
    char *end;
    snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word - 1 ? n : sizeof word - 1), v);
    bool ok = n > 0 && n < sizeof word - 1;
    if (ok && t == TYPE_PRED) {
      ok = strcmp(word, "true") == 0 || strcmp(word, "false") == 0 || strcmp(word, "1") == 0 || strcmp(word, "0") == 0;
      if (ok && given < count) literal_set_s64(lit, given, word[0] == 't' || word[0] == '1');
    } else if (ok && type_is_float(t)) {
      double x = strtod(word, &end);
      ok = *end == 0;
      if (ok && given < count) literal_set_f64(lit, given, x);
    } else if (ok) {
      errno = 0;
      long long x = t == TYPE_U64 ? (long long)strtoull(word, &end, 0) : strtoll(word, &end, 0);
      ok = *end == 0 && errno == 0;
      if (ok && given < count) literal_set_s64(lit, given, x);
      if (ok && given < count && t != TYPE_U64 && literal_get_s64(lit, given) != x) ok = false;
    }
    if (!ok) {
      status_error(st, STATUS_INPUT_ERROR, "--input '%s': '%s' is not a %s value", spec, word, type_name(t));
      literal_free(lit);
      return NULL;
    }
    v += n + (v[n] == ',');
  }
  if (given == 1 && count > 1) {  /* one value fills the array */
    for (int64_t i = 1; i < count; i++)
      memcpy((char *)lit->data + i * type_byte_size(t), lit->data, (size_t)type_byte_size(t));
  } else if (given != count) {
    status_error(st, STATUS_INPUT_ERROR, "--input '%s': %lld value%s for %lld element%s", spec, (long long)given,
                 given == 1 ? "" : "s", (long long)count, count == 1 ? "" : "s");
    literal_free(lit);
    return NULL;
  }
  return lit;
}

/* Every array the inputs give, in order: an .npz file gives its arrays,
 * an .npy file or an inline value one each. */
static bool read_input_arrays(const Options *o, Literal ***arrays, int *count, Status *st) {
  int n = 0, capacity = 16;
  Literal **list = calloc((size_t)capacity, sizeof *list);
  bool ok = list != NULL;
  for (int i = 0; ok && i < o->input_count; i++) {
    const InputArg *in = &o->inputs[i];
    size_t length = strlen(in->text);
    NpzMember *members = NULL;
    int member_count = 0;
    if (in->is_inline) {
      Literal *lit = parse_inline_input(in->text, st);
      ok = lit != NULL;
      members = ok ? calloc(1, sizeof *members) : NULL;
      if (members) members[0].array = lit, member_count = 1;
      else literal_free(lit);
      ok = members != NULL;
    } else if (length > 4 && strcmp(in->text + length - 4, ".npz") == 0) {
      ok = npz_read(in->text, &members, &member_count, st);
    } else {
      Literal *lit = npy_read(in->text, st);
      members = lit ? calloc(1, sizeof *members) : NULL;
      if (members) members[0].array = lit, member_count = 1;
      else literal_free(lit);
      ok = members != NULL;
    }
    for (int k = 0; ok && k < member_count; k++) {
      if (n + 1 >= capacity) {
        capacity *= 2;
        list = mem_realloc(list, (size_t)capacity * sizeof *list);
      }
      list[n++] = members[k].array;
      members[k].array = NULL;
    }
    if (members) npz_members_free(members, member_count);
  }
  if (!ok) {
    for (int i = 0; i < n; i++) literal_free(list[i]);
    free(list);
    if (st->code == STATUS_OK) status_error(st, STATUS_OUT_OF_MEMORY, "out of memory reading the inputs");
    return false;
  }
  *arrays = list;
  *count = n;
  return true;
}

/* A value for a parameter of shape s: a tuple is built from its leaves,
 * depth first, each from the next input array (as --out writes them), or
 * drawn from the seed when no inputs are given. */
static Literal *load_value(const Shape *s, Literal **arrays, int array_count, int *next, uint64_t *state,
                           Status *st) {
  if (shape_is_tuple(s)) {
    Literal **elements = calloc((size_t)s->tuple_count + 1, sizeof *elements);
    if (!elements) {
      status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
      return NULL;
    }
    for (int i = 0; i < s->tuple_count; i++) {
      elements[i] = load_value(&s->tuple_shapes[i], arrays, array_count, next, state, st);
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
  if (array_count == 0) {
    Literal *lit = literal_create(s);
    literal_fill_random(lit, state);
    return lit;
  }
  int at = (*next)++;
  Literal *lit = arrays[at];
  arrays[at] = NULL;
  if (!adopt_carried_type(lit, s, at, st)) {
    literal_free(lit);
    return NULL;
  }
  return lit;
}

static Literal *buffer_copy(const HostBuffer *b) {
  Literal *view = host_buffer_view(b), *copy = literal_clone(view);
  literal_view_free(view);
  return copy;
}

/* One buffer per entry parameter for each of `devices` devices, device d's
 * at args[d * parameters]: the inputs give one set, copied to every device,
 * or one set per device in device order. Their shapes are checked by
 * executable_run, the check every run path shares. */
static bool load_inputs(const Options *o, const Module *m, int devices, HostBuffer **args, Status *st) {
  const Computation *entry = m->entry;
  int leaves = 0, n = entry->parameter_count;
  for (int i = 0; i < n; i++) leaves += shape_leaf_count(&entry->parameters[i]->shape);
  Literal **arrays = NULL;
  int count = 0;
  if (o->input_count > 0 && !read_input_arrays(o, &arrays, &count, st)) return false;
  bool ok = true, per_device = devices > 1 && count == leaves * devices;
  if (o->input_count > 0 && count != leaves && !per_device && devices > 1) {
    ok = status_error(st, STATUS_INPUT_ERROR,
                      "the module's %d parameter%s hold %d arrays: the inputs must give %d (one set for every "
                      "device) or %d (one per device), not %d",
                      n, n == 1 ? "" : "s", leaves, leaves, leaves * devices, count);
  } else if (o->input_count > 0 && count != leaves && !per_device) {
    if (leaves == entry->parameter_count)
      ok = status_error(st, STATUS_INPUT_ERROR, "the module takes %d parameter%s, the inputs give %d arra%s",
                        entry->parameter_count, entry->parameter_count == 1 ? "" : "s", count, count == 1 ? "y" : "ys");
    else
      ok = status_error(st, STATUS_INPUT_ERROR,
                        "the module's %d parameter%s hold %d arrays (tuples count each leaf), the inputs give %d",
                        entry->parameter_count, entry->parameter_count == 1 ? "" : "s", leaves, count);
  }
  if (ok && o->input_count == 0 && entry->parameter_count > 0)
    fprintf(stderr, "note: no inputs given: the %d parameter%s drawn from --seed %llu\n", entry->parameter_count,
            entry->parameter_count == 1 ? " is" : "s are", (unsigned long long)o->seed);
  uint64_t state = o->seed;
  int next = 0;
  for (int d = 0; ok && d < devices; d++) {
    for (int i = 0; ok && i < n; i++) {
      Literal *value = d > 0 && !per_device ? buffer_copy(args[i])
                                            : load_value(&entry->parameters[i]->shape, arrays, count, &next, &state, st);
      ok = value != NULL;
      if (ok) args[d * n + i] = host_buffer_adopt_literal(value);
    }
  }
  for (int i = 0; i < count; i++) literal_free(arrays[i]);
  free(arrays);
  return ok;
}

/* ---- outputs ---- */

static void print_element(const Literal *lit, int64_t i) {
  if (type_is_complex(lit->shape.type)) {
    double _Complex z = literal_get_complex(lit, i);
    printf("(%.9g, %.9g)", creal(z), cimag(z));
  } else if (type_is_float(lit->shape.type)) printf("%.9g", literal_get_f64(lit, i));
  else if (lit->shape.type == TYPE_U64) printf("%llu", (unsigned long long)literal_get_u64(lit, i));
  else printf("%lld", (long long)literal_get_s64(lit, i));
}

/* A result leaf: its shape, then its elements in row-major order, all of
 * them with --print-all, else the first 8 of a longer array. */
static void print_array(const Literal *lit, int index, bool all) {
  StrBuf sb = {0};
  shape_print(&sb, &lit->shape, false);
  printf("out%d: %s", index, sb.data);
  strbuf_free(&sb);
  int64_t n = shape_element_count(&lit->shape), shown = all || n <= 16 ? n : 8;
  printf(" [");
  for (int64_t i = 0; i < shown; i++) {
    if (i) printf(", ");
    print_element(lit, i);
  }
  printf("%s]\n", shown < n ? ", ..." : "");
}

/* The array leaves of a result, depth first (the order --out numbers
 * them); leaves NULL counts them. (A tuple literal's shape holds only its
 * tuple_count: the elements carry the shapes.) */
static void collect_leaves(const Literal *lit, const Literal **leaves, int *n) {
  if (shape_is_tuple(&lit->shape)) {
    for (int i = 0; i < lit->shape.tuple_count; i++) collect_leaves(lit->elements[i], leaves, n);
    return;
  }
  if (leaves) leaves[*n] = lit;
  ++*n;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* mkdir -p: every missing folder on the way. */
static bool make_dirs(const char *dir, Status *st) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
    return status_error(st, STATUS_INPUT_ERROR, "the path %s is too long", dir);
  for (char *p = path + 1;; p++) {
    char c = *p;
    if (c != '/' && c != 0) continue;
    *p = 0;
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
      return status_error(st, STATUS_INPUT_ERROR, "cannot create directory %s: %s", path, strerror(errno));
    *p = c;
    if (c == 0) return true;
  }
}

/* --out PATH: an .npz archive (its folder made if missing), or a folder of
 * out0.npy, out1.npy, ... */
static bool write_outputs(const char *path, const Literal *const *leaves, int count, Status *st) {
  if (ends_with(path, ".npz")) {
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
      char dir[4096];
      snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
      if (!make_dirs(dir, st)) return false;
    }
    return npz_write(path, leaves, count, st);
  }
  if (!make_dirs(path, st)) return false;
  for (int i = 0; i < count; i++) {
    char file[4200];
    snprintf(file, sizeof file, "%s/out%d.npy", path, i);
    if (!npy_write(file, leaves[i], st)) return false;
  }
  return true;
}

/* ---- --expected ---- */

/* The expected arrays: an .npz's members, or a folder's out0.npy, out1.npy,
 * ... up to the first missing one. */
static bool read_expected(const char *path, NpzMember **members, int *count, Status *st) {
  if (ends_with(path, ".npz")) return npz_read(path, members, count, st);
  int n = 0;
  NpzMember *list = NULL;
  for (;; n++) {
    char file[4200];
    snprintf(file, sizeof file, "%s/out%d.npy", path, n);
    if (access(file, F_OK) != 0) break;
    list = mem_realloc(list, (size_t)(n + 1) * sizeof *list);
    memset(&list[n], 0, sizeof list[n]);
    snprintf(list[n].name, sizeof list[n].name, "out%d.npy", n);
    list[n].array = npy_read(file, st);
    if (!list[n].array) {
      npz_members_free(list, n + 1);
      return false;
    }
  }
  if (n == 0) return status_error(st, STATUS_INPUT_ERROR, "--expected %s: no out0.npy there", path);
  *members = list;
  *count = n;
  return true;
}

/* Whether got is within tolerance of want: integers and pred exactly,
 * floats within atol + rtol * |want| (NaN matches NaN, an infinity only
 * itself), complex numbers part by part. */
static bool element_close(const Literal *got, const Literal *want, int64_t i, double rtol, double atol) {
  if (!type_is_float(want->shape.type) && !type_is_complex(want->shape.type))
    return want->shape.type == TYPE_U64 ? literal_get_u64(got, i) == literal_get_u64(want, i)
                                        : literal_get_s64(got, i) == literal_get_s64(want, i);
  double g[2], w[2];
  if (type_is_complex(want->shape.type)) {
    double _Complex a = literal_get_complex(got, i), b = literal_get_complex(want, i);
    g[0] = creal(a), g[1] = cimag(a), w[0] = creal(b), w[1] = cimag(b);
  } else {
    g[0] = literal_get_f64(got, i), w[0] = literal_get_f64(want, i), g[1] = w[1] = 0;
  }
  for (int k = 0; k < 2; k++) {
    if (isnan(w[k]) || isnan(g[k])) {
      if (isnan(w[k]) != isnan(g[k])) return false;
    } else if (isinf(w[k]) || isinf(g[k])) {
      if (g[k] != w[k]) return false;
    } else if (!(fabs(g[k] - w[k]) <= atol + rtol * fabs(w[k]))) {
      return false;
    }
  }
  return true;
}

/* Compares every result leaf with its expected array; the first mismatch
 * is a run-time error naming the leaf, the index and both values. */
static bool compare_expected(const Options *o, const Literal *const *leaves, int count, Status *st) {
  NpzMember *want = NULL;
  int want_count = 0;
  if (!read_expected(o->expected_path, &want, &want_count, st)) return false;
  bool ok = want_count == count ||
            status_error(st, STATUS_INPUT_ERROR, "--expected %s holds %d arrays; the module gives %d results",
                         o->expected_path, want_count, count);
  int checked = 0;
  for (int i = 0; ok && i < count; i++) {
    const Literal *got = leaves[i], *w = want[i].array;
    ElementType carried = npy_carrier_type(got->shape.type);
    bool same_type = w->shape.type == got->shape.type || w->shape.type == carried;
    bool same_dims = w->shape.rank == got->shape.rank &&
                     memcmp(w->shape.dims, got->shape.dims, sizeof w->shape.dims[0] * (size_t)w->shape.rank) == 0;
    if (!same_type || !same_dims) {
      StrBuf a = {0}, b = {0};
      shape_print(&a, &got->shape, false);
      shape_print(&b, &w->shape, false);
      ok = status_error(st, STATUS_RUNTIME_ERROR, "out%d is %s; --expected's %s is %s", i, a.data, want[i].name, b.data);
      strbuf_free(&a);
      strbuf_free(&b);
      break;
    }
    /* bf16, f8 and f4 expectations come as their bits (npy_carrier_type):
     * compare those bits exactly. */
    bool bits = w->shape.type != got->shape.type;
    bool sixteen = got->shape.type == TYPE_F16 || got->shape.type == TYPE_BF16;
    double rtol = o->rtol >= 0 ? o->rtol : sixteen ? 1e-2 : 1e-5, atol = o->atol >= 0 ? o->atol : 1e-6;
    int64_t n = shape_element_count(&got->shape);
    for (int64_t e = 0; e < n; e++) {
      bool close = bits ? memcmp((const char *)got->data + e * type_byte_size(got->shape.type),
                                 (const char *)w->data + e * type_byte_size(w->shape.type),
                                 (size_t)type_byte_size(w->shape.type)) == 0
                        : element_close(got, w, e, rtol, atol);
      if (close) continue;
      printf("expected: out%d[%lld] = ", i, (long long)e);
      print_element(got, e);
      printf(", expected ");
      print_element(w, e);
      printf("\n");
      ok = status_error(st, STATUS_RUNTIME_ERROR, "out%d differs from --expected %s at element %lld (rtol %g, atol %g)",
                        i, o->expected_path, (long long)e, rtol, atol);
      break;
    }
    checked += ok;
  }
  if (ok) printf("expected: %d result%s match %s\n", checked, checked == 1 ? "" : "s", o->expected_path);
  npz_members_free(want, want_count);
  return ok;
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
  eo->opt = o->optimizer;
  eo->compile_only = o->compile_only;
  if (o->target) snprintf(eo->gpu_target, sizeof eo->gpu_target, "%s", o->target);
  if (o->dump_dir) {
    char flag[1100];
    snprintf(flag, sizeof flag, "--dump_to=%s", o->dump_dir);
    if (!opt_options_parse_flag(&eo->opt, flag, st)) return false;
  }
  return true;
}

/* ---- timing ---- */

/* The dots' and convolutions' rate; with --peak, on the CPU backend,
 * beside the FMA peak measured now, on this machine, for the threads the
 * run used, so that the fraction compares like with like under the same
 * load. The probe runs only then: it takes about a second of CPU, more
 * than most timed runs (make bench measures its floor once, bench/floor). */
static void print_matmul_rate(const Executable *exe, int64_t flops, double median_ms, bool peak_asked) {
  double gflops = (double)flops / (median_ms * 1e6);
  if (flops >= 100000000) printf("matmul: %.3f GFLOP per run, %.1f GFLOP/s", (double)flops * 1e-9, gflops);
  else printf("matmul: %.0f FLOP per run, %.2f GFLOP/s", (double)flops, gflops);
  CpuFeatures cpu;
  Status ignored = {0};
  if (peak_asked && strcmp(exe->backend->name, "cpu") == 0 && cpu_features_detect(&cpu, &ignored)) {
    int threads = exe->options.threads > 0 ? exe->options.threads : thread_pool_default_count();
    double peak = gemm_peak_gflops_measure(cpu.level, 0.2, 3, &ignored) * threads;
    if (peak > 0)
      printf(", %.0f%% of the FMA peak measured now in CPU time (%.1f GFLOP/s = %d thread%s x %s)", 100 * gflops / peak, peak,
             threads, threads == 1 ? "" : "s", cpu_level_name(cpu.level));
  }
  printf("\n");
}

/* A JSON string: the characters JSON escapes, escaped. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static int compare_step_time(const void *a, const void *b) {
  double x = ((const StepTime *)a)->median_ms, y = ((const StepTime *)b)->median_ms;
  return (x < y) - (x > y);
}

/* --time-kernels: the slowest steps first, each with its share of the sum. */
static void print_step_times(const StepTimes *steps) {
  StepTime *sorted = mem_calloc((size_t)steps->count + 1, sizeof *sorted);
  memcpy(sorted, steps->steps, (size_t)steps->count * sizeof *sorted);
  qsort(sorted, (size_t)steps->count, sizeof *sorted, compare_step_time);
  double total = 0;
  for (int i = 0; i < steps->count; i++) total += sorted[i].median_ms;
  printf("kernels: %d step%s, %.4f ms in all (medians)\n", steps->count, steps->count == 1 ? "" : "s", total);
  for (int i = 0; i < steps->count; i++)
    printf("  %10.4f ms %5.1f%%  %s (%s)\n", sorted[i].median_ms, total > 0 ? 100 * sorted[i].median_ms / total : 0,
           sorted[i].inst->name, opcode_name(sorted[i].inst->opcode));
  free(sorted);
}

static bool write_json(const Options *o, const Executable *exe, const RunTimes *t, const StepTimes *steps, Status *st) {
  FILE *f = strcmp(o->json_path, "-") == 0 ? stdout : fopen(o->json_path, "w");
  if (!f) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s: %s", o->json_path, strerror(errno));
  fprintf(f, "{\"module\": ");
  json_string(f, executable_module_to_run(exe)->name);
  fprintf(f, ", \"backend\": ");
  json_string(f, exe->backend->name);
  fprintf(f, ", \"runs\": %d, \"median_ms\": %.6f, \"min_ms\": %.6f, \"max_ms\": %.6f, \"compile_ms\": %.6f", t->runs,
          t->median_ms, t->min_ms, t->max_ms, exe->compile_ms);
  if (t->device_runs)
    fprintf(f, ", \"device_median_ms\": %.6f, \"device_min_ms\": %.6f", t->device_median_ms, t->device_min_ms);
  if (steps) {
    fprintf(f, ", \"steps\": [");
    for (int i = 0; i < steps->count; i++) {
      const Instruction *inst = steps->steps[i].inst;
      fprintf(f, "%s{\"instruction\": ", i ? ", " : "");
      json_string(f, inst->name);
      fprintf(f, ", \"opcode\": ");
      json_string(f, opcode_name(inst->opcode));
      if (inst->metadata && inst->metadata->op_name) {
        fprintf(f, ", \"op_name\": ");
        json_string(f, inst->metadata->op_name);
      }
      fprintf(f, ", \"median_ms\": %.6f, \"min_ms\": %.6f}", steps->steps[i].median_ms, steps->steps[i].min_ms);
    }
    fprintf(f, "]");
  }
  fprintf(f, "}\n");
  if (f != stdout && fclose(f) != 0) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s", o->json_path);
  return true;
}

static bool print_times(const Options *o, const Executable *exe, HostBuffer *const *args, int n, Status *st) {
  RunTimes t;
  if (!executable_time(exe, args, n, o->time_runs, &t, st)) return false;
  StepTimes steps = {0};
  if (o->time_kernels && !executable_time_steps(exe, args, n, o->time_runs, &steps, st)) return false;
  bool json_to_stdout = o->json_path && strcmp(o->json_path, "-") == 0;
  if (!json_to_stdout) {
    printf("time: median_ms=%.4f min_ms=%.4f max_ms=%.4f runs=%d\n", t.median_ms, t.min_ms, t.max_ms, t.runs);
    if (t.device_runs)  /* the kernels alone, by the device's clock, the arguments already there */
      printf("device: median_ms=%.4f min_ms=%.4f max_ms=%.4f runs=%d\n", t.device_median_ms, t.device_min_ms,
             t.device_max_ms, t.device_runs);
    printf("compile_ms=%.4f\n", exe->compile_ms);
    int64_t flops = opt_count_matmul_flops(executable_module_to_run(exe));
    double rate_ms = t.device_runs ? t.device_median_ms : t.median_ms;  /* the device's clock where there is one */
    if (flops > 0 && rate_ms > 0) print_matmul_rate(exe, flops, rate_ms, o->peak);
    if (o->time_kernels) print_step_times(&steps);
  }
  bool ok = !o->json_path || write_json(o, exe, &t, o->time_kernels ? &steps : NULL, st);
  step_times_free(&steps);
  return ok;
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
  Module *m = parse_module_file_with(o->module_path, &parse, st);  /* "-": stdin */
  if (m && m->elided_constant_count > 0)
    fprintf(stderr, "warning: %d constant%s elided ({...}) and filled with random values; "
                    "results are not meaningful\n",
            m->elided_constant_count, m->elided_constant_count == 1 ? " was" : "s were");
  return m;
}

/* The results: printed, written (--out), compared (--expected). */
static bool emit_results(const Options *o, const Literal *result, Status *st) {
  int count = 0, n = 0;
  collect_leaves(result, NULL, &count);
  const Literal **leaves = mem_calloc((size_t)count + 1, sizeof *leaves);
  collect_leaves(result, leaves, &n);
  bool ok = true;
  /* --json - keeps stdout for the report alone */
  bool json_to_stdout = o->json_path && strcmp(o->json_path, "-") == 0;
  if ((!o->out_path && !json_to_stdout) || o->print_all)
    for (int i = 0; i < n; i++) print_array(leaves[i], i, o->print_all);
  if (o->out_path) ok = write_outputs(o->out_path, leaves, n, st);
  if (ok && o->expected_path) ok = compare_expected(o, leaves, n, st);
  free(leaves);
  return ok;
}

/* --devices N: compile once per device, run all at once, each device's
 * results printed under "device d:" or written to OUT/device<d>/. */
static int run_devices(const Options *o, const Module *m, Status *st) {
  int rc = 2, n = m->entry->parameter_count, devices = o->devices;
  HostBuffer **args = calloc((size_t)(n * devices) + 1, sizeof *args);
  HostBuffer **results = calloc((size_t)devices, sizeof *results);
  ExecutableOptions compile_options;
  DeviceSet *set = NULL;
  if (!compile_options_for(o, &compile_options, st)) goto done;
  compile_options.devices = devices;
  set = device_set_compile(m, &compile_options, st);
  if (!set) goto done;
  if (o->compile_only) {
    printf("compiled: %s for %d devices (%lld replicas x %lld partitions), --backend %s\n", m->name, devices,
           (long long)set->replica_count, (long long)set->partition_count, set->executables[0]->backend->name);
    rc = 0;
    goto done;
  }
  rc = 1;
  if (!load_inputs(o, m, devices, args, st) || !device_set_run(set, args, n, results, st)) goto done;
  Options each = *o;
  char out[4200];
  for (int d = 0; d < devices; d++) {
    if (o->out_path) snprintf(out, sizeof out, "%s/device%d", o->out_path, d), each.out_path = out;
    else printf("device %d:\n", d);
    Literal *view = host_buffer_view(results[d]);
    bool ok = emit_results(&each, view, st);
    literal_view_free(view);
    if (!ok) goto done;
  }
  rc = 0;
done:
  if (rc) status_print(st, stderr);
  for (int i = 0; i < n * devices; i++) host_buffer_free(args[i]);
  for (int d = 0; d < devices; d++) host_buffer_free(results[d]);
  free(args);
  free(results);
  device_set_free(set);
  return rc;
}

/* --devices mpi: this process is the device of its rank; it loads every
 * device's inputs (as --devices N does) and keeps its own. */
static int run_mpi(const Options *o, const Module *m, Status *st) {
  MpiRun *mpi = mpi_run_open(st);
  if (!mpi) {
    status_print(st, stderr);
    return 2;
  }
  int rc = 2, n = m->entry->parameter_count, devices = mpi_run_size(mpi), rank = mpi_run_rank(mpi);
  HostBuffer **args = calloc((size_t)(n * devices) + 1, sizeof *args);
  HostBuffer *result = NULL;
  ExecutableOptions compile_options;
  Executable *exe = NULL;
  if (!compile_options_for(o, &compile_options, st)) goto done;
  compile_options.devices = devices;
  exe = executable_compile(m, &compile_options, st);
  if (!exe) goto done;
  rc = 1;
  if (!load_inputs(o, m, devices, args, st)) goto done;
  result = mpi_run_device(mpi, exe, args + (size_t)rank * (size_t)n, n, st);
  if (!result) goto done;
  Options each = *o;
  char out[4200];
  if (o->out_path) snprintf(out, sizeof out, "%s/device%d", o->out_path, rank), each.out_path = out;
  else printf("device %d:\n", rank);
  Literal *view = host_buffer_view(result);
  bool ok = emit_results(&each, view, st);
  literal_view_free(view);
  if (ok) rc = 0;
done:
  if (rc) {  /* one write, so that the ranks' lines do not interleave */
    char prefixed[sizeof st->message];
    snprintf(prefixed, sizeof prefixed, "rank %d: %.1000s", rank, st->message);
    memcpy(st->message, prefixed, sizeof prefixed);
    status_print(st, stderr);
  }
  for (int i = 0; i < n * devices; i++) host_buffer_free(args[i]);
  free(args);
  host_buffer_free(result);
  executable_free(exe);
  mpi_run_close(mpi);
  return rc;
}

/* parse → compile (optimizing as asked) → load inputs → run (the
 * arguments checked there) → --check → outputs → --expected → --time. */
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
  if (o->devices != 0) {
    int devices_rc = o->devices < 0 ? run_mpi(o, m, st) : run_devices(o, m, st);
    module_free(m);
    return devices_rc;
  }
  int rc = 2, n = m->entry->parameter_count;
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
  if (!load_inputs(o, m, 1, args, st)) goto done;
  result = o->check || o->find_nan ? run_watched(o, exe, args, n, st) : executable_run(exe, args, n, st);
  if (!result) goto done;
  result_view = host_buffer_view(result);
  if (!emit_results(o, result_view, st)) goto done;
  if (o->time_runs && !print_times(o, exe, args, n, st)) goto done;
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
  Status st;
  status_clear(&st);
  int rc = parse_options(argc, argv, &o, &st);
  if (rc) return rc < 0 ? 0 : rc;
  if (o.version) {
    printf("axle-run %s\n", axle_version());
    return 0;
  }
  return run(&o, &st);
}
