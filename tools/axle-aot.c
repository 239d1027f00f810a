/* axle-aot: compile an HLO module ahead of time into one ELF object and a
 * C header, which a program links with nothing else (docs/aot.md).
 *
 *   axle-aot MODULE.hlo -o NAME.o [--header NAME.h] [--name NAME]
 *            [--cpu sse4|avx2|avx512|native] [optimizer flags]
 *
 * The module is optimized and compiled exactly as axle-run compiles it for
 * the CPU; the object holds that program (src/emit_x86/cpu_aot.h). What an
 * object cannot hold yet is refused with the located message the backends
 * use. AXLE_FLAGS is read first, as by every axle tool. Exit 0 on success,
 * 2 for a usage, parse, verify or compile error (a refusal included). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axle.h"
#include "emit_x86/cpu_aot.h"
#include "ir.h"
#include "opt/opt.h"

typedef struct Options {
  const char *module, *object, *header, *name, *cpu, *pretend_cpu;
  bool version;
  OptOptions optimizer;
} Options;

static void print_help(FILE *f) {
  fputs("usage: axle-aot MODULE.hlo -o NAME.o [--header NAME.h] [FLAG]...\n\n"
        "Compiles an HLO module ahead of time for x86-64: NAME.o holds its machine code\n"
        "and constants and needs no other library; NAME.h declares\n"
        "  int NAME_run(const void *const *params, void *const *results, void *temp);\n"
        "and the type, dimensions and bytes of every parameter and result.\n\n"
        "flags:\n"
        "  -o FILE                  the object to write (required)\n"
        "  --header FILE            the C header to write (default: none)\n"
        "  --name NAME              the C identifier the symbols start with (default: the\n"
        "                           object's file name without .o)\n"
        "  --cpu LEVEL              sse4, avx2, avx512, or native (default): this machine's\n"
        "                           level (AXLE_CPU lowers it); the object refuses to run\n"
        "                           (NAME_ERROR_CPU) on a CPU without the level\n"
        "  --version                print the version and exit\n"
        "  --help                   print this help and exit (also -h)\n"
        "\noptimizer flags (docs/optimizer.md; also read from AXLE_FLAGS):\n",
        f);
  for (const OptFlagHelp *o = opt_flag_help; o->name; o++) {
    char left[64];
    snprintf(left, sizeof left, "--%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
    fprintf(f, "  %-24s %s\n", left, o->help);
  }
  fputs("\nwhat it refuses, located: docs/aot.md\n"
        "\nexit codes:\n"
        "  0  success\n"
        "  2  a usage, parse, verify or compile error, or a module an object cannot hold yet\n",
        f);
}

static int usage_error(const char *what, const char *arg) {
  fprintf(stderr, "error: %s%s\n(axle-aot --help lists the flags)\n", what, arg);
  return 2;
}

static bool takes_value(const char *name) {
  static const char *const valued[] = {"-o", "--header", "--name", "--cpu", "--test-pretend-cpu"};
  for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++)
    if (strcmp(name, valued[i]) == 0) return true;
  return false;
}

/* Returns 0 when the options are good, -1 after --help, else the exit code. */
static int parse_args(int argc, char **argv, Options *o, Status *st) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      print_help(stdout);
      return -1;
    }
    if (a[0] != '-' || strcmp(a, "-") == 0) {
      if (o->module) return usage_error("more than one module given: ", a);
      o->module = a;
      continue;
    }
    char name[64];
    const char *value = opt_flag_split(a, name, sizeof name);
    if (takes_value(name) && !value) {
      if (i + 1 >= argc) return usage_error(a, " needs a value");
      value = argv[++i];
    }
    if (strcmp(name, "-o") == 0) o->object = value;
    else if (strcmp(name, "--header") == 0) o->header = value;
    else if (strcmp(name, "--name") == 0) o->name = value;
    else if (strcmp(name, "--cpu") == 0) o->cpu = value;
    else if (strcmp(name, "--test-pretend-cpu") == 0) o->pretend_cpu = value;  /* TEST ONLY: cpu_aot.h */
    else if (strcmp(name, "--version") == 0) o->version = true;
    else if (name[1] == '-') {
      if (!opt_options_parse_flag(&o->optimizer, a, st)) {
        if (strstr(st->message, "unknown optimizer flag")) return usage_error("unknown flag ", a);
        return usage_error(st->message, "");
      }
    } else {
      return usage_error("unknown flag ", a);
    }
  }
  if (o->version) return 0;
  if (!o->module) return usage_error("no module given", "");
  if (!o->object) return usage_error("no object given (-o NAME.o)", "");
  return 0;
}

/* The default name: the object's file name up to its first '.'. */
static char *name_from_object(const char *object) {
  const char *base = strrchr(object, '/');
  base = base ? base + 1 : object;
  return strndup(base, strcspn(base, "."));
}

/* --cpu: a level by name, or native: this machine's (after AXLE_CPU). */
static bool level_from_option(const char *cpu, int *level, Status *st) {
  if (!cpu || strcmp(cpu, "native") == 0) {
    CpuFeatures f;
    if (!cpu_features_detect(&f, st)) return false;
    if (f.level == CPU_LEVEL_NONE)
      return status_error(st, STATUS_UNSUPPORTED, "this machine lacks SSE4.1: name a --cpu");
    *level = (int)f.level;
    return true;
  }
  CpuLevel l;
  if (!cpu_level_from_name(cpu, &l))
    return status_error(st, STATUS_INPUT_ERROR, "--cpu takes sse4, avx2, avx512 or native, not %s", cpu);
  *level = (int)l;
  return true;
}

int main(int argc, char **argv) {
  Status st;
  status_clear(&st);
  Options o = {0};
  opt_options_default(&o.optimizer);
  if (!opt_options_from_env(&o.optimizer, &st)) {
    status_print(&st, stderr);
    return 2;
  }
  int rc = parse_args(argc, argv, &o, &st);
  if (rc) return rc < 0 ? 0 : rc;
  if (o.version) {
    printf("axle-aot %s\n", axle_version());
    return 0;
  }
  ExecutableOptions eo;
  executable_options_default(&eo, AXLE_BACKEND_CPU);
  eo.opt = o.optimizer;
  int pretend = 0;
  if (!level_from_option(o.cpu, &eo.cpu_level, &st) ||
      (o.pretend_cpu && !level_from_option(o.pretend_cpu, &pretend, &st))) {
    status_print(&st, stderr);
    return 2;
  }
  char *name = o.name ? strdup(o.name) : name_from_object(o.object);
  if (!cpu_aot_name_valid(name)) {
    free(name);
    return usage_error(o.name ? "--name is not a C identifier: " : "the object's file name is not a C identifier "
                                                                   "(give --name): ",
                       o.name ? o.name : o.object);
  }
  Module *m = parse_module_file(o.module, &st);
  if (!m) {
    free(name);
    status_print(&st, stderr);
    return status_exit_code(&st);
  }
  CpuAotOptions ao = {.name = name, .source_name = o.module, .pretend_cpu_level = pretend};
  char *stats = NULL;
  rc = cpu_aot_compile_files(m, &eo, &ao, o.object, o.header, &stats, &st) ? 0 : 2;
  if (stats) fputs(stats, stderr);
  if (rc) status_print(&st, stderr);
  free(stats);
  module_free(m);
  free(name);
  return rc;
}
