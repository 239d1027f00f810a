/* axle-opt: show what the optimizer and the backends make of a module, one
 * stage at a time (as XLA's hlo-opt --stage does).
 *
 *   axle-opt [--stage=hlo|buffer-assignment|kernel|asm|ptx|program] [--target sm_80|sm_90a]
 *            [-o FILE] [optimizer flags] MODULE.hlo
 *
 *   hlo                the optimized module as HLO text (the default), which
 *                      axle-run and axle-opt read back
 *   buffer-assignment  the entry's buffer plan: every value's slot, offset, size
 *   kernel             the kernel IR of every kernel (what both backends compile)
 *   asm                the CPU backend's x86-64 listing of each kernel, at the
 *                      ISA level AXLE_CPU names
 *                      (default: the best this CPU has)
 *   ptx                the PTX the GPU backend would load for --target
 *                      (default sm_80), written with no driver or device
 *   program            the program stage (src/opt/program.h): bindings and
 *                      steps of the entry and of every called computation
 *
 * The stage goes to stdout or FILE. --stats prints, on stderr, the
 * instruction, fusion and kernel counts and the temporary bytes before and
 * after, the time of every pass, what constant folding refused, and the
 * largest buffers. AXLE_FLAGS is read first, as by every axle tool. Flags
 * are spelled with '-' or '_' alike; a value follows as the next word or
 * after '='. Exit 0 on success, 2 for a usage, parse, verify or compile
 * error. */
#include <stdio.h>
#include <string.h>

#include "axle.h"
#include "ir.h"
#include "opt/opt.h"
#include "opt/program.h"
#include "emit_ptx/gpu_program.h"
#include "emit_x86/cpu_program.h"
#include "runtime/executable.h"

typedef enum Stage { STAGE_HLO, STAGE_BUFFERS, STAGE_KERNEL, STAGE_ASM, STAGE_PTX, STAGE_PROGRAM } Stage;

static const char *const stage_names[] = {"hlo", "buffer-assignment", "kernel", "asm", "ptx", "program"};

typedef struct Options {
  Stage stage;
  const char *module, *out, *target;
  bool version;
  OptOptions optimizer;
} Options;

static void print_help(FILE *f) {
  fputs("usage: axle-opt [FLAG]... MODULE.hlo\n\n"
        "Prints one stage of what axle makes of an HLO module.\n\n"
        "flags:\n"
        "  --stage NAME             hlo (default): the optimized module; buffer-assignment: the buffer plan;\n"
        "                           kernel: every kernel's kernel IR; asm: the CPU backend's x86-64 listings;\n"
        "                           ptx: the GPU backend's PTX (no GPU or driver needed);\n"
        "                           program: the program stage's bindings and steps\n"
        "  --target NAME            the GPU target of --stage=ptx: sm_80 (default), sm_86, sm_89, sm_90a, sm_90\n"
        "  -o FILE                  write the stage into FILE instead of stdout\n"
        "  --version                print the version and exit\n"
        "  --help                   print this help and exit (also -h)\n"
        "\noptimizer flags (docs/optimizer.md; also read from AXLE_FLAGS):\n",
        f);
  for (const OptFlagHelp *o = opt_flag_help; o->name; o++) {
    char left[64];
    snprintf(left, sizeof left, "--%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
    fprintf(f, "  %-24s %s\n", left, o->help);
  }
  fputs("  --dump DIR               the same as --dump-to DIR\n"
        "\nenvironment:\n"
        "  AXLE_FLAGS         optimizer flags, read before the command line's\n"
        "  AXLE_CPU           the ISA level of --stage=asm: sse4, avx2, avx512\n"
        "\nexit codes:\n"
        "  0  success\n"
        "  2  a usage, parse, verify or compile error\n",
        f);
}

static int usage_error(const char *what, const char *arg) {
  fprintf(stderr, "error: %s%s\n(axle-opt --help lists the flags)\n", what, arg);
  return 2;
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
    bool takes_value = strcmp(name, "-o") == 0 || strcmp(name, "--stage") == 0 || strcmp(name, "--target") == 0 ||
                       strcmp(name, "--dump") == 0;
    if (takes_value && !value) {
      if (i + 1 >= argc) return usage_error(a, " needs a value");
      value = argv[++i];
    }
    if (strcmp(name, "-o") == 0) {
      o->out = value;
    } else if (strcmp(name, "--target") == 0) {
      o->target = value;
    } else if (strcmp(name, "--version") == 0) {
      o->version = true;
    } else if (strcmp(name, "--stage") == 0) {
      size_t s = 0;
      while (s < sizeof stage_names / sizeof stage_names[0] && strcmp(stage_names[s], value) != 0) s++;
      if (s == sizeof stage_names / sizeof stage_names[0])
        return usage_error("--stage takes hlo, buffer-assignment, kernel, asm, ptx or program, not ", value);
      o->stage = (Stage)s;
    } else if (strcmp(name, "--dump") == 0) {
      char flag[1200];
      snprintf(flag, sizeof flag, "--dump_to=%s", value);
      if (!opt_options_parse_flag(&o->optimizer, flag, st)) return usage_error(st->message, "");
    } else if (name[1] == '-') {
      if (!opt_options_parse_flag(&o->optimizer, a, st)) {
        /* an unknown name is the tool's unknown flag, wherever it stands */
        if (strstr(st->message, "unknown optimizer flag")) return usage_error("unknown flag ", a);
        return usage_error(st->message, "");
      }
    } else {
      return usage_error("unknown flag ", a);
    }
  }
  if (o->version) return 0;
  if (!o->module) return usage_error("no module given", "");
  if (o->target && o->stage != STAGE_PTX) return usage_error("--target goes with --stage=ptx", "");
  return 0;
}

static bool write_text(const char *path, const StrBuf *sb, Status *st) {
  FILE *f = path ? fopen(path, "w") : stdout;
  if (!f) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s", path);
  if (sb->len) fwrite(sb->data, 1, sb->len, f);
  if (path && fclose(f) != 0) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s", path);
  return true;
}

/* asm: what the CPU backend compiled, as its --dump shows it. */
static bool print_cpu_stage(const Options *o, const Module *m, Status *st) {
  ExecutableOptions eo;
  executable_options_default(&eo, AXLE_BACKEND_CPU);
  eo.opt = o->optimizer;
  eo.listings = true;
  Executable *exe = executable_compile(m, &eo, st);
  if (!exe) return false;
  FILE *f = o->out ? fopen(o->out, "w") : stdout;
  bool ok = f ? cpu_program_print_listings(exe->program, executable_module_to_run(exe), f, st)
              : status_error(st, STATUS_INPUT_ERROR, "cannot write %s", o->out);
  if (f && o->out && fclose(f) != 0) ok = status_error(st, STATUS_INPUT_ERROR, "cannot write %s", o->out);
  if (ok && exe->stats) fputs(exe->stats, stderr);
  executable_free(exe);
  return ok;
}

/* hlo, buffer-assignment, kernel and ptx: the optimizer's result, then the
 * stage. */
static bool print_optimized_stage(const Options *o, Module *m, Status *st) {
  OptContext ctx;
  opt_context_init(&ctx, &o->optimizer);
  bool ok = optimize_module(m, &ctx, st);
  StrBuf sb = {0};
  if (ok && o->stage == STAGE_HLO) print_module(&sb, m);
  if (ok && o->stage == STAGE_BUFFERS) print_buffer_plan(&sb, m, ctx.plan);
  if (ok && o->stage == STAGE_KERNEL) print_module_kernels(&sb, m);
  if (ok && o->stage == STAGE_PROGRAM && ctx.plan) {
    Program *p = program_build(m, ctx.plan, NULL);
    print_program(&sb, p);
    program_free(p);
  }
  if (ok && o->stage == STAGE_PTX)
    ok = gpu_write_ptx(m, ctx.plan, o->target ? o->target : "sm_80", o->optimizer.gpu_no_wgmma, &sb, st);
  if (ok) ok = write_text(o->out, &sb, st);
  strbuf_free(&sb);
  if (ok && o->optimizer.stats) {
    StrBuf stats = {0};
    print_opt_stats(&stats, m, &ctx);
    fputs(stats.data ? stats.data : "", stderr);
    strbuf_free(&stats);
  }
  opt_context_free(&ctx);
  return ok;
}

int main(int argc, char **argv) {
  Status st;
  status_clear(&st);
  Options o = {.stage = STAGE_HLO};
  opt_options_default(&o.optimizer);
  if (!opt_options_from_env(&o.optimizer, &st)) {
    status_print(&st, stderr);
    return 2;
  }
  int rc = parse_args(argc, argv, &o, &st);
  if (rc) return rc < 0 ? 0 : rc;
  if (o.version) {
    printf("axle-opt %s\n", axle_version());
    return 0;
  }
  Module *m = parse_module_file(o.module, &st);
  if (!m) {
    status_print(&st, stderr);
    return status_exit_code(&st);
  }
  rc = (o.stage == STAGE_ASM ? print_cpu_stage(&o, m, &st) : print_optimized_stage(&o, m, &st)) ? 0 : 2;
  if (rc) status_print(&st, stderr);
  module_free(m);
  return rc;
}
