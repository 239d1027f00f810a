/* The HLO lexer: splits text into words, strings and punctuation, and the
 * cursor helpers the parser walks them with.
 *
 * XLA's own lexer knows many token kinds (shapes, dim labels, padding specs,
 * "name=" attribute names). Here a single "word" kind covers all of those,
 * and the parser reads a word according to where it stands; that keeps the
 * lexer context-free and short.
 *
 * Tokens are made only when the cursor looks at them, so an error stops
 * the lexing where it is found, and tokens already read are dropped a block
 * at a time (release_read_tokens): the tokens held at once are those of
 * the longest instruction, not of the whole text. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "parse_internal.h"

static bool is_word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.';
}

static bool is_word_char(char c) { return is_word_start(c) || c == '-'; }

/* A word is letters, digits and _ . - after an optional sign: names like
 * "get-tuple-element.1", numbers like "-1.5e-05", padding like "0_-1x2_2".
 * '+' belongs to a word only as an exponent's sign ("1e+10"), and a word
 * stops before "->", so that dim_labels "b01f_01io->b01f" splits in three. */
static size_t word_length(const char *s, size_t n) {
  size_t i = 0;
  if (i < n && (s[i] == '-' || s[i] == '+')) i++;
  while (i < n) {
    char c = s[i];
    if (c == '-' && i + 1 < n && s[i + 1] == '>') break;
    if (c == '+' && i > 0 && (s[i - 1] == 'e' || s[i - 1] == 'E')) {
      i++;
      continue;
    }
    if (!is_word_char(c)) break;
    i++;
  }
  return i;
}

static void lexer_advance(Parser *p, size_t n) {
  LexState *lx = &p->lex;
  for (size_t k = 0; k < n; k++) {
    /* A line ends at \n, or at a \r not before one (old Mac files). */
    char c = p->source[lx->offset];
    bool lone_cr = c == '\r' && (lx->offset + 1 >= p->source_length || p->source[lx->offset + 1] != '\n');
    if (c == '\n' || lone_cr) {
      lx->line++;
      lx->col = 1;
      lx->line_start = true;
    } else {
      lx->col++;
    }
    lx->offset++;
  }
}

static Token *token_at(Parser *p, int index) {
  int i = index - p->first_token;
  return &p->blocks[i / TOKEN_BLOCK][i % TOKEN_BLOCK];
}

static void lexer_push(Parser *p, TokenKind kind, const char *text, size_t len, SourceLoc loc) {
  if (p->token_count - p->first_token == p->block_count * TOKEN_BLOCK) {
    if (p->block_count == p->block_cap) {
      p->block_cap = p->block_cap ? p->block_cap * 2 : 8;
      p->blocks = mem_realloc(p->blocks, sizeof(Token *) * (size_t)p->block_cap);
    }
    p->blocks[p->block_count] = mem_realloc(NULL, sizeof(Token) * TOKEN_BLOCK);
    p->block_count++;
  }
  *token_at(p, p->token_count++) = (Token){kind, text, (int)len, loc, p->lex.line_start};
  p->lex.line_start = false;
}

static void lexer_push_eof(Parser *p) {
  p->lex.line_start = true;
  lexer_push(p, TK_EOF, p->source + p->lex.offset, 0, (SourceLoc){p->lex.line, p->lex.col});
  p->lex.done = true;
}

/* Reports a lexing error at `at`, then ends the token stream: every later
 * token is TK_EOF, and the first error is the one kept. */
static void lex_error(Parser *p, LexState at, const char *fmt, const char *what) {
  Token t = {TK_EOF, p->source + at.offset, 0, {at.line, at.col}, false};
  parse_error(p, &t, fmt, what);
  p->lex_failed = true;
  lexer_push_eof(p);
}

/* Skips blanks and comments. XLA prints "/ *index=5* /"-style comments in
 * long operand and tuple lists; "//" comments appear in hand-written tests. */
static bool skip_space(Parser *p) {
  const char *s = p->source;
  size_t n = p->source_length;
  LexState *lx = &p->lex;
  while (lx->offset < n) {
    char c = s[lx->offset];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      lexer_advance(p, 1);
    } else if (c == '/' && lx->offset + 1 < n && s[lx->offset + 1] == '/') {
      while (lx->offset < n && s[lx->offset] != '\n' && s[lx->offset] != '\r') lexer_advance(p, 1);
    } else if (c == '/' && lx->offset + 1 < n && s[lx->offset + 1] == '*') {
      LexState start = *lx;
      lexer_advance(p, 2);
      while (lx->offset < n && !(s[lx->offset] == '*' && lx->offset + 1 < n && s[lx->offset + 1] == '/'))
        lexer_advance(p, 1);
      if (lx->offset >= n) {
        lex_error(p, start, "%s", "unterminated comment");
        return false;
      }
      lexer_advance(p, 2);
    } else {
      break;
    }
  }
  return true;
}

static void lex_string(Parser *p) {
  const char *s = p->source;
  size_t n = p->source_length;
  LexState start = p->lex;
  lexer_advance(p, 1);
  size_t begin = p->lex.offset;
  /* A string may span lines: XLA embeds whole modules in some (the
   * module attribute origin_recovery_table). */
  while (p->lex.offset < n && s[p->lex.offset] != '"') {
    size_t i = p->lex.offset;
    lexer_advance(p, s[i] == '\\' && i + 1 < n ? 2 : 1);
  }
  if (p->lex.offset >= n || s[p->lex.offset] != '"') {
    lex_error(p, start, "%s", "unterminated string");
    return;
  }
  lexer_push(p, TK_STRING, s + begin, p->lex.offset - begin, (SourceLoc){start.line, start.col});
  lexer_advance(p, 1);
}

/* Control bytes and bytes past ASCII appear in HLO only inside strings. */
static bool is_stray_byte(char c) {
  unsigned char u = (unsigned char)c;
  return (u < 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') ||
         u >= 0x7f;
}

static void lex_stray_byte(Parser *p) {
  char c = p->source[p->lex.offset];
  char what[32];
  if (c >= 0x20 && c < 0x7f) snprintf(what, sizeof what, "'%c'", c);
  else snprintf(what, sizeof what, "byte 0x%02x", (unsigned char)c);
  lex_error(p, p->lex, "unexpected character %s", what);
}

/* Makes the next token and appends it to the token blocks. */
static void lex_one(Parser *p) {
  const char *s = p->source;
  size_t n = p->source_length;
  if (!skip_space(p)) return;
  size_t i = p->lex.offset;
  if (i >= n) {
    lexer_push_eof(p);
    return;
  }
  char c = s[i];
  SourceLoc loc = {p->lex.line, p->lex.col};
  if (c == '"') {
    lex_string(p);
  } else if (c == '%' && i + 1 < n && is_word_start(s[i + 1])) {
    size_t len = word_length(s + i + 1, n - i - 1);
    lexer_push(p, TK_WORD, s + i + 1, len, loc);
    lexer_advance(p, len + 1);
  } else if (is_word_start(c) || ((c == '-' || c == '+') && i + 1 < n && is_word_start(s[i + 1]))) {
    size_t len = word_length(s + i, n - i);
    lexer_push(p, TK_WORD, s + i, len, loc);
    lexer_advance(p, len);
    /* A stray byte glued to a word ("para\0meter") is the real fault;
     * report it rather than the word cut short before it. */
    if (i + len < n && is_stray_byte(s[i + len])) lex_stray_byte(p);
  } else if (i + 1 < n && ((c == '-' && s[i + 1] == '>') || (c == '<' && s[i + 1] == '='))) {
    lexer_push(p, TK_PUNCT, s + i, 2, loc);
    lexer_advance(p, 2);
  } else if (c != '\0' && strchr("=,(){}[]:<>?*#!@|&^~;$+-'\\`/", c)) {
    lexer_push(p, TK_PUNCT, s + i, 1, loc);
    lexer_advance(p, 1);
  } else {
    lex_stray_byte(p);
  }
}

bool lex_start(Parser *p) {
  p->lex = (LexState){0, 1, 1, true, false};
  /* Token lengths and columns are ints; texts this large are not HLO. */
  if (p->source_length > (size_t)1 << 30) {
    Token t = {TK_EOF, p->source, 0, {1, 1}, true};
    return parse_error(p, &t, "input too large (%zu bytes)", p->source_length);
  }
  /* A UTF-8 byte-order mark, as some editors save files, is not text. */
  if (p->source_length >= 3 && memcmp(p->source, "\xef\xbb\xbf", 3) == 0) p->lex.offset = 3;
  return true;
}

/* ---------------------------------------------------------------- cursor */

Token *lex_peek_at(Parser *p, int ahead) {
  while (p->token_count <= p->pos + ahead && !p->lex.done) lex_one(p);
  int i = p->pos + ahead;
  return token_at(p, i < p->token_count ? i : p->token_count - 1);
}

Token *lex_peek(Parser *p) { return lex_peek_at(p, 0); }

Token *lex_next(Parser *p) {
  Token *t = lex_peek(p);
  if (t->kind != TK_EOF) p->pos++;
  return t;
}

void lex_release_read_tokens(Parser *p) {
  int read_blocks = (p->pos - p->first_token) / TOKEN_BLOCK;
  if (read_blocks == 0) return;
  for (int b = 0; b < read_blocks; b++) mem_free(p->blocks[b]);
  memmove(p->blocks, p->blocks + read_blocks, sizeof(Token *) * (size_t)(p->block_count - read_blocks));
  p->block_count -= read_blocks;
  p->first_token += read_blocks * TOKEN_BLOCK;
}

void lex_free_tokens(Parser *p) {
  for (int b = 0; b < p->block_count; b++) mem_free(p->blocks[b]);
  mem_free(p->blocks);
  p->blocks = NULL;
  p->block_count = p->block_cap = 0;
}

size_t lex_bytes_left(Parser *p) {
  return p->source_length - (size_t)(lex_peek(p)->text - p->source);
}

/* strncmp stops at the first differing byte, so a miss (the parser tries
 * tables of names in turn) costs a byte or two; strlen runs on a match. */
bool lex_token_is(const Token *t, const char *text) {
  return t->kind != TK_STRING && t->kind != TK_EOF && strncmp(text, t->text, (size_t)t->len) == 0 &&
         strlen(text) == (size_t)t->len;
}

bool lex_consume(Parser *p, const char *text) {
  if (!lex_token_is(lex_peek(p), text)) return false;
  lex_next(p);
  return true;
}

static void describe_token(const Token *t, char *buf, size_t size) {
  if (t->kind == TK_EOF) snprintf(buf, size, "end of input");
  else if (t->kind == TK_STRING) snprintf(buf, size, "a string");
  else snprintf(buf, size, "'%.*s'", t->len > 40 ? 40 : t->len, t->text);
}

bool lex_expect(Parser *p, const char *text) {
  if (lex_consume(p, text)) return true;
  char got[64];
  describe_token(lex_peek(p), got, sizeof got);
  return parse_error(p, lex_peek(p), "expected '%s', found %s", text, got);
}

/* Copies line `line` of the source into st->source_line, tabs as spaces and
 * other control bytes as '?', so the caret lines up under the column. */
void parse_fill_source_line(Parser *p, int line) {
  const char *s = p->source, *end = s + p->source_length;
  for (int l = 1; l < line && s < end; s++)
    if (*s == '\n') l++;
  size_t k = 0, cap = sizeof p->st->source_line - 1;
  for (; s < end && *s != '\n' && *s != '\r' && k < cap; s++) {
    unsigned char c = (unsigned char)*s;
    p->st->source_line[k++] = c == '\t' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
  }
  p->st->source_line[k] = '\0';
}

bool parse_error(Parser *p, const Token *tok, const char *fmt, ...) {
  /* After a lexing error the parser sees a premature end of input; the
   * lexing error is the one to report. */
  if (p->lex_failed) return false;
  Status *st = p->st;
  st->code = STATUS_PARSE_ERROR;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->message, sizeof st->message, fmt, ap);
  va_end(ap);
  st->file = p->filename;
  st->loc = tok->loc;
  parse_fill_source_line(p, tok->loc.line);
  return false;
}

char *lex_token_string(Parser *p, const Token *t) {
  return arena_strndup(&p->module->arena, t->text, (size_t)t->len);
}

/* --------------------------------------------------------------- numbers */

bool lex_word_to_int64(const Token *t, int64_t *out) {
  if (t->kind != TK_WORD || t->len == 0 || t->len > 40) return false;
  char buf[48];
  memcpy(buf, t->text, (size_t)t->len);
  buf[t->len] = '\0';
  const char *digits = buf[0] == '-' || buf[0] == '+' ? buf + 1 : buf;
  if (*digits < '0' || *digits > '9') return false;
  errno = 0;
  char *end;
  long long v = strtoll(buf, &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;
  *out = v;
  return true;
}

bool lex_word_to_double(const Token *t, double *out) {
  if (t->kind != TK_WORD || t->len == 0 || t->len > 400) return false;
  char buf[408];
  memcpy(buf, t->text, (size_t)t->len);
  buf[t->len] = '\0';
  const char *body = buf[0] == '-' || buf[0] == '+' ? buf + 1 : buf;
  bool negative = buf[0] == '-';
  if (strcmp(body, "inf") == 0) {
    *out = negative ? -INFINITY : INFINITY;
    return true;
  }
  if (strcmp(body, "nan") == 0) {
    *out = negative ? -NAN : NAN;
    return true;
  }
  if (!((*body >= '0' && *body <= '9') || *body == '.')) return false;
  char *end;
  *out = strtod(buf, &end);
  return *end == '\0';
}

bool parse_int64(Parser *p, int64_t *out) {
  Token *t = lex_peek(p);
  if (!lex_word_to_int64(t, out)) {
    char got[64];
    describe_token(t, got, sizeof got);
    return parse_error(p, t, "expected an integer, found %s", got);
  }
  lex_next(p);
  return true;
}

/* --------------------------------------------------------------- skipping */

static char closer_of(const Token *t) {
  if (t->kind != TK_PUNCT || t->len != 1) return 0;
  switch (t->text[0]) {
  case '(': return ')';
  case '{': return '}';
  case '[': return ']';
  default: return 0;
  }
}

bool lex_skip_balanced(Parser *p) {
  /* An explicit stack of expected closers: no recursion, whatever the depth. */
  char stack[256];
  int depth = 0;
  Token open = *lex_peek(p);
  do {
    /* A skipped value can be long (a backend_config, a debug table): its
     * tokens are dropped as they are read. */
    lex_release_read_tokens(p);
    Token *t = lex_next(p);
    if (t->kind == TK_EOF) return parse_error(p, &open, "unbalanced '%.1s'", open.text);
    char closer = closer_of(t);
    if (closer) {
      if (depth == (int)sizeof stack) return parse_error(p, t, "nesting too deep");
      stack[depth++] = closer;
    } else if (t->kind == TK_PUNCT && t->len == 1 && strchr(")}]", t->text[0])) {
      if (depth == 0 || stack[depth - 1] != t->text[0])
        return parse_error(p, t, "mismatched '%c'", t->text[0]);
      depth--;
    }
  } while (depth > 0);
  return true;
}

bool lex_skip_value(Parser *p) {
  Token *first = lex_peek(p);
  if (first->kind == TK_EOF || lex_token_is(first, ",") || lex_token_is(first, "}") ||
      lex_token_is(first, ")") || lex_token_is(first, "]"))
    return parse_error(p, first, "expected an attribute value");
  do {
    Token *t = lex_peek(p);
    if (closer_of(t)) {
      if (!lex_skip_balanced(p)) return false;
    } else {
      lex_next(p);
    }
    t = lex_peek(p);
    if (t->kind == TK_EOF || t->at_line_start || lex_token_is(t, ",") || lex_token_is(t, "}") ||
        lex_token_is(t, ")") || lex_token_is(t, "]"))
      break;
  } while (true);
  return true;
}
