/* What the optimizer is asked to do: defaults, AXLE_FLAGS, single flags.
 * XLA users set XLA_FLAGS="--xla_dump_to=DIR ..."; axle reads AXLE_FLAGS the
 * same way, with the same flag names less the xla_ prefix. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"

void opt_options_default(OptOptions *o) {
  memset(o, 0, sizeof *o);
  o->fold_limit = 65536;
}

static bool parse_size(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < 0) return false;
  *out = v;
  return true;
}

const OptFlagHelp opt_flag_help[] = {
    {"dump-to", "DIR", "write the optimizer's dumps (and the backend's kernels) under DIR"},
    {"dump-passes", NULL, "with a dump folder: the module after every pass that changed it"},
    {"verify-each-pass", NULL, "run the verifier after every pass that changed the module"},
    {"stats", NULL, "print what each pass did, its time and the largest buffers (stderr)"},
    {"no-fusion", NULL, "skip the fusion pass"},
    {"gpu-no-wgmma", NULL, "GPU: keep sm_90a's half-precision GEMMs on mma.sync"},
    {"max-temp-bytes", "N", "refuse a module whose temporaries need more than N bytes"},
    {"fold-limit", "N", "fold constants of at most N elements (default 65536)"},
    {NULL, NULL, NULL},
};

/* "--name" or "--name=value"; the value of a boolean flag may be true/false.
 * A name is spelled with '-' or '_' alike (--dump-to, XLA's --dump_to). */
const char *opt_flag_split(const char *arg, char *name, size_t cap) {
  size_t n = strcspn(arg, "=");
  snprintf(name, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), arg);
  for (char *c = name + 2; name[0] == '-' && name[1] == '-' && *c; c++)
    if (*c == '_') *c = '-';
  return arg[n] == '=' ? arg + n + 1 : NULL;
}

bool opt_options_parse_flag(OptOptions *o, const char *flag, Status *st) {
  const char *given = flag[0] == '-' && flag[1] == '-' ? flag + 2 : flag;
  const char *eq = strchr(given, '=');
  size_t n = eq ? (size_t)(eq - given) : strlen(given);
  const char *value = eq ? eq + 1 : NULL;
  char name[64];
  if (n >= sizeof name) return status_error(st, STATUS_INPUT_ERROR, "unknown optimizer flag '%s'", flag);
  for (size_t i = 0; i < n; i++) name[i] = given[i] == '-' ? '_' : given[i];
  name[n] = 0;
  bool on = !value || strcmp(value, "true") == 0 || strcmp(value, "1") == 0;
#define IS(s) (n == strlen(s) && memcmp(name, s, n) == 0)
  if (IS("dump_to")) {
    if (!value || !*value) return status_error(st, STATUS_INPUT_ERROR, "--dump_to needs a folder");
    if (strlen(value) >= sizeof o->dump_dir)
      return status_error(st, STATUS_INPUT_ERROR, "--dump_to: the folder name is too long");
    strcpy(o->dump_dir, value);
  } else if (IS("dump_passes")) {
    o->dump_passes = on;
  } else if (IS("verify_each_pass")) {
    o->verify_each_pass = on;
  } else if (IS("stats")) {
    o->stats = on;
  } else if (IS("no_fusion")) {
    o->no_fusion = on;
  } else if (IS("gpu_no_wgmma")) {
    o->gpu_no_wgmma = on;
  } else if (IS("max_temp_bytes")) {
    if (!value || !parse_size(value, &o->max_temp_bytes))
      return status_error(st, STATUS_INPUT_ERROR, "--max_temp_bytes takes a byte count, not '%s'",
                          value ? value : "");
  } else if (IS("fold_limit")) {
    if (!value || !parse_size(value, &o->fold_limit))
      return status_error(st, STATUS_INPUT_ERROR, "--fold_limit takes an element count, not '%s'",
                          value ? value : "");
  } else {
    return status_error(st, STATUS_INPUT_ERROR, "unknown optimizer flag '%s'", flag);
  }
#undef IS
  return true;
}

/* The list is split on spaces; each flag is copied out before parsing,
 * since the options keep no pointer into the caller's text. */
bool opt_options_parse_flags(OptOptions *o, const char *flags, const char *source, Status *st) {
  const char *p = flags;
  while (p && *p) {
    while (*p == ' ' || *p == '\t') p++;
    size_t n = strcspn(p, " \t");
    if (n == 0) break;
    char flag[1100];
    if (n >= sizeof flag) return status_error(st, STATUS_INPUT_ERROR, "%s: a flag is too long", source);
    memcpy(flag, p, n);
    flag[n] = 0;
    if (!opt_options_parse_flag(o, flag, st)) return false;
    p += n;
  }
  return true;
}

bool opt_options_from_env(OptOptions *o, Status *st) {
  return opt_options_parse_flags(o, getenv("AXLE_FLAGS"), "AXLE_FLAGS", st);
}
