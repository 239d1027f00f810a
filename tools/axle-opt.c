/* axle-opt: show what the optimizer does to a module.
 *
 *   axle-opt [--stats] [--dump DIR] [--dump_passes] [--verify_each_pass]
 *            [--no_fusion] [--max_temp_bytes N] [-o FILE] MODULE.hlo
 *
 * Prints the optimized module as HLO text (which axle-run and axle-opt read
 * back) on stdout or into FILE. --stats prints, on stderr, the instruction,
 * fusion and kernel counts and the temporary bytes before and after, the time
 * of every pass, what constant folding refused, and the largest buffers.
 * AXLE_FLAGS is read first, as by every axle tool.
 * Exit 0 on success, 2 for a usage, parse, verify or compile error. */
#include <stdio.h>
#include <string.h>

#include "axle.h"
#include "ir.h"
#include "opt/opt.h"

static const char usage[] =
    "usage: axle-opt [--stats] [--dump DIR] [--dump_passes] [--verify_each_pass]\n"
    "                [--no_fusion] [--max_temp_bytes N] [-o FILE] MODULE.hlo\n"
    "       axle-opt --version\n";

static int usage_error(const char *what, const char *arg) {
  fprintf(stderr, "error: %s%s\n%s", what, arg, usage);
  return 2;
}

/* Tool options become optimizer flags ("--dump DIR" is "--dump_to=DIR"). */
static int parse_args(int argc, char **argv, OptOptions *opts, const char **module,
                      const char **out, Status *st) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    char flag[1200];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return -1;
    } else if (strcmp(a, "--version") == 0) {
      printf("axle-opt %s\n", axle_version());
      return -1;
    } else if (strcmp(a, "-o") == 0 || strcmp(a, "--dump") == 0 || strcmp(a, "--max_temp_bytes") == 0) {
      if (i + 1 >= argc) return usage_error(a, " needs a value");
      const char *value = argv[++i];
      if (strcmp(a, "-o") == 0) {
        *out = value;
        continue;
      }
      snprintf(flag, sizeof flag, "%s=%s", strcmp(a, "--dump") == 0 ? "--dump_to" : a, value);
      if (!opt_options_parse_flag(opts, flag, st)) return usage_error(st->message, "");
    } else if (a[0] == '-' && a[1] == '-') {
      if (!opt_options_parse_flag(opts, a, st)) return usage_error(st->message, "");
    } else if (a[0] == '-' && a[1]) {
      return usage_error("unknown option ", a);
    } else if (*module) {
      return usage_error("more than one module given: ", a);
    } else {
      *module = a;
    }
  }
  if (!*module) return usage_error("no module given", "");
  return 0;
}

static bool write_text(const char *path, const StrBuf *sb, Status *st) {
  FILE *f = path ? fopen(path, "w") : stdout;
  if (!f) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s", path);
  if (sb->len) fwrite(sb->data, 1, sb->len, f);
  if (path && fclose(f) != 0) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s", path);
  return true;
}

int main(int argc, char **argv) {
  Status st;
  status_clear(&st);
  OptOptions opts;
  opt_options_default(&opts);
  if (!opt_options_from_env(&opts, &st)) {
    status_print(&st, stderr);
    return 2;
  }
  const char *module_path = NULL, *out_path = NULL;
  int rc = parse_args(argc, argv, &opts, &module_path, &out_path, &st);
  if (rc) return rc < 0 ? 0 : rc;

  Module *m = parse_module_file(module_path, &st);
  if (!m) {
    status_print(&st, stderr);
    return status_exit_code(&st);
  }
  OptContext ctx;
  opt_context_init(&ctx, &opts);
  rc = 2;
  if (optimize_module(m, &ctx, &st)) {
    StrBuf sb = {0};
    print_module(&sb, m);
    if (write_text(out_path, &sb, &st)) rc = 0;
    strbuf_free(&sb);
    if (rc == 0 && opts.stats) {
      StrBuf stats = {0};
      print_opt_stats(&stats, m, &ctx);
      fputs(stats.data ? stats.data : "", stderr);
      strbuf_free(&stats);
    }
  }
  if (rc) status_print(&st, stderr);
  opt_context_free(&ctx);
  module_free(m);
  return rc;
}
