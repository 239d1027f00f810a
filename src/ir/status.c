/* Error values and the small string builder the printer uses. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* Only what a reader looks at: the two text buffers are written whole when
 * an error is set, and zeroing all 1.3 KB on every API call cost as much as
 * running a small module. */
void status_clear(Status *st) {
  st->code = STATUS_OK;
  st->message[0] = '\0';
  st->file = NULL;
  memset(&st->loc, 0, sizeof st->loc);
  st->source_line[0] = '\0';
}

static void status_vset(Status *st, StatusCode code, const char *fmt, va_list ap) {
  st->code = code;
  vsnprintf(st->message, sizeof st->message, fmt, ap);
}

bool status_error(Status *st, StatusCode code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  status_vset(st, code, fmt, ap);
  va_end(ap);
  return false;
}

bool status_error_at(Status *st, StatusCode code, const char *file, SourceLoc loc,
                     const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  status_vset(st, code, fmt, ap);
  va_end(ap);
  st->file = file;
  st->loc = loc;
  return false;
}

void status_print(const Status *st, FILE *out) {
  if (st->loc.line > 0)
    fprintf(out, "%s:%d:%d: ", st->file ? st->file : "<input>", st->loc.line, st->loc.col);
  fprintf(out, "error: %s\n", st->message);
  if (st->source_line[0] && st->loc.col > 0) {
    /* One character per byte keeps the caret under its column; bytes that
     * are not printable ASCII (binary input) show as '?'. */
    fputs("  ", out);
    for (const char *c = st->source_line; *c; c++)
      fputc(*c == '\t' || (*c >= ' ' && *c < 127) ? *c : '?', out);
    fprintf(out, "\n  %*s^\n", st->loc.col - 1, "");
  }
}

int status_exit_code(const Status *st) {
  switch (st->code) {
  case STATUS_PARSE_ERROR:
  case STATUS_VERIFY_ERROR:
  case STATUS_UNSUPPORTED:
    return 2;
  default:
    return 1;
  }
}

void strbuf_printf(StrBuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (sb->len + (size_t)n + 1 > sb->cap) {
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + (size_t)n + 1) cap *= 2;
    sb->data = mem_realloc(sb->data, cap);
    sb->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap);
  va_end(ap);
  sb->len += (size_t)n;
}

void strbuf_free(StrBuf *sb) {
  mem_free(sb->data);
  sb->data = NULL;
  sb->len = sb->cap = 0;
}
