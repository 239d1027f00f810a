/* Inputs that are not HLO text, recognised before lexing so that a user
 * holding one is told what to hand axle instead of where the lexer gave
 * up. Two come up with JAX and XLA:
 *
 *   StableHLO (MLIR)   jax.jit(f).lower(x).as_text() by default: a line
 *                      "module @jit_f ..." or "func.func ...", perhaps
 *                      after "#loc" aliases and comments.
 *   HloProto /         --xla_dump_hlo_as_proto writes an HloProto (field 1
 *   HloModuleProto     is the HloModuleProto) to *.hlo.pb; either message
 *                      starts with field 1 as length-delimited bytes, the
 *                      tag 0x0a, then a varint length that fits the file,
 *                      and holds bytes that text never does.
 *
 * Anything else goes to the lexer, which locates the first bad character. */
#include <string.h>

#include "parse_internal.h"

/* The first line that is neither blank nor a // comment: its number (1-based)
 * and where it starts past its indentation; 0 when there is none. */
static int first_meaningful_line(const char *s, size_t length, const char **start) {
  const char *end = s + length;
  for (int line = 1; s < end; line++) {
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    if (s < end && *s != '\n' && !(end - s >= 2 && s[0] == '/' && s[1] == '/')) {
      *start = s;
      return line;
    }
    while (s < end && *s != '\n') s++;
    s++;
  }
  return 0;
}

static bool starts_with_word(const char *s, const char *end, const char *word) {
  size_t n = strlen(word);
  return (size_t)(end - s) >= n && memcmp(s, word, n) == 0 &&
         ((size_t)(end - s) == n || strchr(" \t\r\n{@(\"", s[n]) != NULL);
}

static bool contains(const char *s, const char *end, const char *word) {
  size_t n = strlen(word);
  for (; (size_t)(end - s) >= n; s++)
    if (memcmp(s, word, n) == 0) return true;
  return false;
}

/* MLIR's top level: a module (named or not, generic form too), a bare
 * function, or the location aliases printed above them. A headerless HLO
 * module may name its first computation "module", so that word counts
 * only with MLIR's functions or dialects somewhere below it. */
static bool looks_like_mlir(const char *s, const char *end) {
  if (starts_with_word(s, end, "func.func") || (end - s >= 4 && memcmp(s, "#loc", 4) == 0)) return true;
  bool module = starts_with_word(s, end, "module") || starts_with_word(s, end, "builtin.module") ||
                starts_with_word(s, end, "\"builtin.module\"");
  return module && (contains(s, end, "func.func") || contains(s, end, "stablehlo.") || contains(s, end, "mhlo."));
}

/* Field 1, length-delimited, whose varint length fits the input, and a
 * control byte (other than whitespace) among the first bytes. */
static bool looks_like_hlo_proto(const unsigned char *s, size_t length) {
  if (length < 3 || s[0] != 0x0a) return false;
  uint64_t field_length = 0;
  size_t i = 1;
  for (int shift = 0; i < length && i < 11; shift += 7) {
    field_length |= (uint64_t)(s[i] & 0x7f) << shift;
    if (!(s[i++] & 0x80)) break;
  }
  if (field_length == 0 || field_length > length - i) return false;
  for (size_t k = 0; k < length && k < 256; k++)
    if (s[k] < 0x20 && !strchr("\t\n\r\f\v", s[k])) return true;
  return false;
}

bool parse_refuse_foreign_input(Parser *p) {
  const char *start = NULL;
  if (looks_like_hlo_proto((const unsigned char *)p->source, p->source_length)) {
    status_error_at(p->st, STATUS_PARSE_ERROR, p->filename, (SourceLoc){1, 1},
                    "this is a binary HloModuleProto or HloProto (what --xla_dump_hlo_as_proto writes); axle "
                    "reads HLO text: dump with --xla_dump_hlo_as_text, or use "
                    "jax.jit(f).lower(...).as_text(dialect=\"hlo\")");
    return false;
  }
  int line = first_meaningful_line(p->source, p->source_length, &start);
  if (line > 0 && looks_like_mlir(start, p->source + p->source_length)) {
    int column = 1;  /* past the line's indentation */
    for (const char *s = start; s > p->source && s[-1] != '\n'; s--) column++;
    status_error_at(p->st, STATUS_PARSE_ERROR, p->filename, (SourceLoc){line, column},
                    "this is StableHLO (MLIR); axle reads HLO text: use "
                    "jax.jit(f).lower(...).as_text(dialect=\"hlo\") or .compile().as_text()");
    parse_fill_source_line(p, line);
    return false;
  }
  return true;
}
