/* The HLO text parser's internals, shared by lex.c, parse.c,
 * parse_attrs.c and parse_literal.c. Not part of the public IR header.
 *
 * The parser reads the whole text into an array of tokens first (lex.c),
 * then walks it with a cursor (Parser.pos). Every parse function takes the
 * Parser and leaves the cursor just past what it read; on failure it
 * returns false (or NULL) with the Status filled in. */
#ifndef AXLE_IR_PARSE_INTERNAL_H
#define AXLE_IR_PARSE_INTERNAL_H

#include "ir.h"

/* ------------------------------------------------------------------ lex.c
 * HLO text has few token kinds. A "word" is anything made of letters,
 * digits and _ . - (names, opcodes, numbers, padding specs like 0_0x1_2,
 * window sizes like 3x3, dim labels like b01f); its meaning depends on where
 * the parser meets it. A leading % on a name (the older style) is dropped. */
typedef enum TokenKind {
  TK_WORD,    /* add.1  f32  -1.5e-05  0_0x1_1  kLoop  (% already removed) */
  TK_STRING,  /* "..." : text holds the contents between the quotes, escapes kept */
  TK_PUNCT,   /* = , ( ) { } [ ] : < > ? * # ! @ | -> <= and so on */
  TK_EOF,
} TokenKind;

typedef struct Token {
  TokenKind kind;
  const char *text;  /* points into the source */
  int len;
  SourceLoc loc;
  bool at_line_start; /* first token on its line: ends an attribute list */
} Token;

/* Where the lexer stands in the source. */
typedef struct LexState {
  size_t offset;      /* next unread byte */
  int line, col;
  bool line_start;    /* nothing but blanks since the last newline */
  bool done;          /* TK_EOF made: the end, or a lexing error */
} LexState;

/* Tokens are made on demand as the cursor reaches them, into fixed blocks
 * (so a Token * never moves), and blocks already read are freed at points
 * where nothing refers to them (release_read_tokens): memory follows the
 * longest instruction rather than the whole text. */
enum { TOKEN_BLOCK = 1024 };
typedef struct Parser {
  const char *source;
  size_t source_length;
  const char *filename;
  Token **blocks;    /* malloc'd; blocks[0] holds tokens first_token.. */
  int block_count, block_cap;
  int first_token;   /* index of blocks[0][0] */
  int token_count;   /* tokens made so far, read or not */
  int pos;           /* the cursor: index of the next unread token */
  LexState lex;
  bool lex_failed;   /* a lexing error is in st; later errors must not replace it */
  int depth;         /* nesting of recursive rules, bounded by PARSE_MAX_DEPTH */
  int nesting;       /* > 0 while reading an instruction nested as an operand */
  const ParseOptions *options;
  Module *module;
  Status *st;
  /* control-predecessors={...} names, resolved with the operands: each must
   * name an instruction of the computation being read (current_comp). */
  Token *control_names;
  int *control_comps;
  int control_count, control_cap;
  int current_comp;
  /* custom-call operand_layout_constraints={shapes}: checked against the
   * operands once their shapes are known. */
  struct LayoutConstraints *constraints;
  int constraint_count, constraint_cap;
} Parser;

typedef struct LayoutConstraints {
  Token at;
  Instruction *inst;
  Shape *shapes;
  int count;
} LayoutConstraints;

enum { PARSE_MAX_DEPTH = 64 };

/* Starts the lexer; false if the text is too large to be HLO. */
bool lex_start(Parser *p);

/* A Token * from peek/next stays valid until release_read_tokens, which
 * the parser calls only where no caller holds one: before each instruction
 * and between the elements of a constant. Keep a copy (Token t = *lex_peek(p))
 * of a token needed for longer. */
void lex_release_read_tokens(Parser *p);
void lex_free_tokens(Parser *p);
/* Bytes of source from the cursor to the end. */
size_t lex_bytes_left(Parser *p);

/* Cursor helpers. */
Token *lex_peek(Parser *p);                 /* the next token */
Token *lex_peek_at(Parser *p, int ahead);   /* ahead = 0 is lex_peek() */
Token *lex_next(Parser *p);                 /* consume and return */
bool lex_token_is(const Token *t, const char *text);  /* exact text, any kind but string */
bool lex_consume(Parser *p, const char *text);        /* if next is text, take it */
bool lex_expect(Parser *p, const char *text);         /* take text or fail */
/* Fails with a located error at tok; fills st->source_line for the caret. */
bool parse_error(Parser *p, const Token *tok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Copies source line `line` into p->st->source_line (for errors found
 * after parsing, by the verifier). */
void parse_fill_source_line(Parser *p, int line);
/* parse_foreign.c: false, with a located error naming what to use instead,
 * when the input is StableHLO (MLIR) or a binary HloProto, not HLO text. */
bool parse_refuse_foreign_input(Parser *p);
/* The token's text as a NUL-terminated arena string. */
char *lex_token_string(Parser *p, const Token *t);

/* Numbers from word tokens: whole word must be the number. */
bool parse_int64(Parser *p, int64_t *out);       /* consumes one word */
/* The most device ids a replica_groups list or a device count may name. */
#define MAX_REPLICA_IDS 65536
bool lex_word_to_int64(const Token *t, int64_t *out);
bool lex_word_to_double(const Token *t, double *out);
/* Skips one attribute value whatever its form: a braced/bracketed group
 * (balanced, across lines), a string, or words and groups glued together on
 * one line (replica_groups=[2,2]<=[4], {1,0:T(8,128)}), up to a ',' or the
 * end of the line. */
bool lex_skip_value(Parser *p);
/* Skips one balanced (...) {...} or [...] group starting at the cursor. */
bool lex_skip_balanced(Parser *p);

/* ----------------------------------------------------------------- parse.c */
/* shape = element_type "[" dims "]" layout? | "(" (shape ("," shape)*)? ")" */
bool parse_shape(Parser *p, Shape *out);
/* array_shape = element_type dims     (no layout: "f32[2] {1, 2}" is a value) */
bool parse_array_shape_without_layout(Parser *p, Shape *out);

/* --------------------------------------------------------- parse_header.c */
/* header = "HloModule" name ":"? ("," name "=" value)*    (sets module->name) */
bool parse_module_header(Parser *p);
/* The debug-information tables XLA may print before the computations;
 * they feed metadata only, which axle does not keep. */
bool parse_debug_tables(Parser *p);

/* ---------------------------------------------------------- parse_attrs.c */
/* Parses the ", name=value" list after an instruction's operands into inst.
 * What cannot be settled until names are resolved goes into AttrNotes: the
 * called computations by name, and whether broadcast gave its dimensions
 * (XLA lets a broadcast of a scalar leave them out). Also checks that the
 * attributes the opcode needs are present. */
enum { PARSE_MAX_CALLED = 64 };
/* Which part of XLA's async sugar (X-start, X-update, X-done) an
 * instruction was written as: its async attributes are dropped, and
 * X-update and X-done drop the wrapped op's attributes too. */
typedef enum AsyncSugar { ASYNC_SUGAR_NONE, ASYNC_SUGAR_START, ASYNC_SUGAR_UPDATE, ASYNC_SUGAR_DONE } AsyncSugar;
typedef struct AttrNotes {
  int count;
  Token names[PARSE_MAX_CALLED]; /* computation names, in called[] order */
  bool has_dimensions;
  bool has_branch_list;          /* conditional: branch_computations= was given */
  bool has_slice_sizes;          /* collective-permute(-start): slice_sizes= was given */
  Token order;                   /* compare's order=TOTAL|PARTIAL, kind TK_EOF when absent */
  Token attribute;               /* the name of the attribute being read, for messages */
  AsyncSugar async_sugar;        /* set by the caller */
  Opcode async_sugar_op;         /* X of X-start/X-update/X-done; set by the caller */
  Token async_thread;            /* async_execution_thread's value; kind TK_EOF when absent */
} AttrNotes;
bool parse_attributes(Parser *p, Instruction *inst, AttrNotes *notes);

/* The element type a shape written nowhere carries until shape inference
 * fills it in (parse.c): never a real type, so nothing can mistake it. */
enum { SHAPE_OMITTED = TYPE_COUNT };

/* -------------------------------------------------------- parse_literal.c */
/* literal = scalar | "{" ... "}" nested to the shape's rank | "(" literal, ... ")"
 * Returns a malloc'd literal of the given shape, or NULL with an error. */
Literal *parse_literal(Parser *p, const Shape *shape);

/* ------------------------------------------------------ parse_xla_forms.c
 * Readers for parse_attrs.c's table, and the checks parse.c runs after
 * shape inference. */
bool parse_api_version(Parser *p, Instruction *inst, AttrNotes *notes);
bool parse_operand_layout_constraints(Parser *p, Instruction *inst, AttrNotes *notes);
bool parse_control_predecessors(Parser *p, Instruction *inst, AttrNotes *notes);
/* X-start, X-update, X-done (XLA's async sugar): the opcode parse.c gives
 * the instruction (X for X-start, wrapped later; async-update, async-done)
 * and which form it was. False when the word is not one. */
bool opcode_from_async_sugar(const Token *op, Opcode *out, AsyncSugar *sugar, Opcode *wrapped_out);
bool parse_check_layout_constraints(Parser *p);
void parse_broadcast_scalar_select_predicates(Module *m);
/* dynamic-(update-)slice with one vector of start indices (the legacy
 * form) rewritten to one scalar per dimension. */
void split_vector_start_indices(Module *m);

#endif
