/* The pieces of a backend's --dump (kernel_dump.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/kernel_dump.h"

void kernel_dump_origin(StrBuf *sb, const Instruction *inst, const Module *m, const char *prefix) {
  StrBuf text = {0};
  print_instruction(&text, inst);
  strbuf_printf(sb, "%s %s\n", prefix, text.data ? text.data : inst->name);
  strbuf_free(&text);
  const Metadata *md = inst->metadata;
  if (md && md->op_name) strbuf_printf(sb, "%s op_name: %s\n", prefix, md->op_name);
  if (md && md->source_file)
    strbuf_printf(sb, "%s source: %s:%lld\n", prefix, md->source_file, (long long)md->source_line);
  SourceLoc loc = instruction_source_loc(inst);
  if (loc.line > 0) strbuf_printf(sb, "%s hlo: %s:%d\n", prefix, m->filename ? m->filename : "<input>", loc.line);
}

void kernel_dump_stem(char *out, size_t size, const Instruction *inst, int repeat) {
  snprintf(out, size, repeat ? "%s.%d" : "%s", inst->name, repeat);
  for (char *c = out; *c; c++)
    if (!(*c == '.' || *c == '_' || *c == '-' || (*c >= '0' && *c <= '9') || ((*c | 32) >= 'a' && (*c | 32) <= 'z')))
      *c = '_';
}

static bool dir_make(const char *dir, Status *st) {
  if (mkdir(dir, 0777) == 0 || errno == EEXIST) return true;
  return status_error(st, STATUS_INPUT_ERROR, "cannot create %s: %s", dir, strerror(errno));
}

bool kernel_dump_folder(const char *dir, char *out, size_t size, Status *st) {
  if (snprintf(out, size, "%s/kernels", dir) >= (int)size)
    return status_error(st, STATUS_INPUT_ERROR, "dump folder name too long");
  return dir_make(dir, st) && dir_make(out, st);
}

bool kernel_dump_write(const char *path, const StrBuf *sb, Status *st) {
  FILE *f = fopen(path, "w");
  if (!f) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s: %s", path, strerror(errno));
  if (sb->len) fwrite(sb->data, 1, sb->len, f);
  if (fclose(f) != 0) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s", path);
  return true;
}
