/* The HLO text parser: module, computations, instructions and shapes.
 *
 * Reads HLO as XLA prints it, in both of its styles:
 *
 *   modern   HloModule m, entry_computation_layout={...}
 *            add.2 {
 *              x = f32[] parameter(0)  ...  ROOT r = f32[] add(x, y)
 *            }
 *            ENTRY main.1 { ... }
 *   older    %add.2 (x: f32[], y: f32[]) -> f32[] {
 *              %x = f32[] parameter(0)  ...  ROOT %r = f32[] add(f32[] %x, f32[] %y)
 *            }
 *            ENTRY %main.1 (...) -> f32[] { ... }
 *
 * The whole grammar, each rule restated above the function that reads it:
 *
 *   module      = ("HloModule" name ("," name "=" value)*)? debug_table* computation+
 *   computation = "ENTRY"? name signature? "{" instruction+ "}" ("," name "=" value)*
 *   signature   = "(" (name ":" shape ("," ...)*)? ")" "->" shape
 *   instruction = "ROOT"? name "=" shape? opcode operands ("," attribute)*
 *   operands    = "(" (operand ("," operand)*)? ")"   (parameter: int, constant: literal)
 *   operand     = shape? name | shape? opcode operands ("," attribute)*   (nested, unnamed)
 *   shape       = type "[" dims "]" layout? | "(" (shape ("," shape)*)? ")"
 *   attribute   = name "=" value                     (parse_attrs.c)
 *   literal     = scalar | "{" literal, ... "}" | "(" literal, ... ")"   (parse_literal.c)
 *
 * Names may be used before they are defined (operands within a computation,
 * computations anywhere in the module), so the parser first reads all the
 * text, keeping names as tokens, then resolves them: operands, called
 * computations, the root and the parameters; then orders instructions
 * operands-before-users and computations callees-before-callers; then
 * infers the shapes the text left out (XLA lets "ROOT s = add(a, b)" omit
 * the shape wherever inference can find it). Attributes
 * are read by parse_attrs.c, constant literals by parse_literal.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse_internal.h"

/* What the first reading keeps of an instruction until names are resolved. */
typedef struct PendingInst {
  Instruction *inst;
  Token name;              /* for an anonymous instruction: its generated name, at its opcode */
  Token *operand_names;
  int *operand_nested;     /* per operand: index of a nested instruction in insts, or -1 */
  int operand_count;
  bool anonymous;          /* nested as an operand without a name */
  Token *called_names;
  int *called_index;       /* index into ModuleText.comps, once resolved */
  int called_count;
  bool has_dimensions;     /* broadcast only: dimensions= was given */
  bool has_branch_list;    /* conditional only: branch_computations= was given */
  bool has_slice_sizes;    /* collective-permute(-start) only: slice_sizes= was given */
  bool async_sugar_start;  /* X-start: inst is X until wrap_async_sugar makes it async-start */
  Opcode async_sugar_op;   /* X-update, X-done: X; else OP_PARAMETER (no sugar) */
  Token async_thread;      /* async_execution_thread's value; kind TK_EOF when absent */
} PendingInst;

/* An operand written with its shape, "f32[2] %x": checked against x's shape
 * once every shape is known. */
typedef struct DeclaredOperand {
  Token at;                /* the operand's name, where an error points */
  Shape shape;
  int inst;                /* the user's index in PendingComp.insts */
  int operand;
} DeclaredOperand;

typedef struct PendingComp {
  Computation *comp;
  DeclaredOperand *declared;
  int declared_count, declared_capacity;
  Token name;
  Token root_name;         /* when has_root; else the last instruction is the root */
  bool has_root;
  bool has_signature;      /* the older style's "(...) -> shape" was given */
  Shape signature_result;
  PendingInst *insts;      /* nested instructions come after the one they feed */
  int count, cap;
  int last_top;            /* the last instruction not nested: the root when none is marked */
} PendingComp;

typedef struct ModuleText {
  PendingComp *comps;
  int count, cap;
  int entry;               /* index into comps, or -1 */
} ModuleText;

/* Grows an arena array; the old block stays in the arena until module_free. */
static void *grow(Arena *arena, void *items, int *cap, size_t item_size) {
  int new_cap = *cap ? *cap * 2 : 8;
  void *grown = arena_alloc(arena, item_size * (size_t)new_cap);
  if (items) memcpy(grown, items, item_size * (size_t)*cap);
  *cap = new_cap;
  return grown;
}

/* ----------------------------------------------------------------- shapes */

/* layout = "{" (int ("," int)*)? (":" tiling-and-memory-space)? "}"
 * Only minor_to_major and the element size E(n) are kept: E(4) packs two
 * s4 to a byte, which bitcast must honour. Tiles T(..), memory space S(..)
 * and the like after ':' describe storage axle chooses itself. */
/* element_size = "E" "(" int ")": bits per element in a buffer, 0 meaning
 * the type's own size. Only the sub-byte types pack, each at its own
 * width (s4 and u4 at E(4), s2 and u2 at E(2)). */
static bool parse_element_size(Parser *p, Shape *shape) {
  lex_next(p);
  lex_expect(p, "(");
  Token *t = lex_peek(p);
  int64_t bits;
  if (!parse_int64(p, &bits)) return false;
  if (bits != 0 && bits != type_bit_width(shape->type) && bits != 8 * type_byte_size(shape->type))
    return parse_error(p, t, "element size E(%lld) does not fit %s", (long long)bits,
                       type_name(shape->type));
  shape->element_size_bits = bits < type_byte_size(shape->type) * 8 ? (uint8_t)bits : 0;
  return lex_expect(p, ")");
}

/* dim_level_types = "D" "(" level ("," level)* ")", each level one of D
 * (dense), C (compressed), S (singleton), H (loose compressed), followed by
 * "+" (not unique) or "~" (not ordered) as XLA's parser reads them. Sets
 * *sparse when a level is not D. */
static bool parse_dim_level_types(Parser *p, bool *sparse) {
  lex_next(p);
  if (!lex_expect(p, "(")) return false;
  while (!lex_token_is(lex_peek(p), ")")) {
    Token *t = lex_peek(p);
    if (t->kind == TK_EOF) return parse_error(p, t, "unterminated dim level types");
    if (lex_token_is(t, ",") || lex_token_is(t, "+") || lex_token_is(t, "~")) {
      lex_next(p);
      continue;
    }
    bool ok = t->kind == TK_WORD && t->len >= 1 && strchr("DCSH", t->text[0]);
    for (int i = 1; ok && i < t->len; i++) ok = t->text[i] == '+' || t->text[i] == '~';
    if (!ok) return parse_error(p, t, "invalid dim level type '%.*s' (D, C, S or H)", t->len, t->text);
    if (t->text[0] != 'D') *sparse = true;
    lex_next(p);
  }
  lex_next(p);
  return true;
}

static bool parse_layout(Parser *p, Shape *shape) {
  Token open = *lex_peek(p);    /* a copy: skipping the tiling may release tokens */
  lex_expect(p, "{");
  int count = 0;
  int64_t m2m[AXLE_MAX_RANK];
  while (!lex_token_is(lex_peek(p), "}") && !lex_token_is(lex_peek(p), ":")) {
    if (count > 0 && !lex_expect(p, ",")) return false;
    Token *t = lex_peek(p);
    int64_t d;
    if (!parse_int64(p, &d)) return false;
    if (count == shape->rank || d < 0 || d >= shape->rank)
      return parse_error(p, t, "layout does not fit a shape of rank %d", shape->rank);
    m2m[count++] = d;
  }
  if (lex_consume(p, ":")) {
    bool sparse = false;
    while (!lex_token_is(lex_peek(p), "}")) {
      if (lex_peek(p)->kind == TK_EOF) return parse_error(p, &open, "unterminated layout");
      if (lex_token_is(lex_peek(p), "E") && lex_token_is(lex_peek_at(p, 1), "(")) {
        if (!parse_element_size(p, shape)) return false;
      } else if (lex_token_is(lex_peek(p), "D") && lex_token_is(lex_peek_at(p, 1), "(")) {
        if (!parse_dim_level_types(p, &sparse)) return false;
      } else if (lex_token_is(lex_peek(p), "P") && lex_token_is(lex_peek_at(p, 1), "(") && !sparse) {
        /* A physical shape describes how a sparse array is stored. */
        return parse_error(p, lex_peek(p), "a physical shape P(...) needs a sparse layout (dim level types C, S or H)");
      } else if (lex_token_is(lex_peek(p), "(") || lex_token_is(lex_peek(p), "[") ||
                 lex_token_is(lex_peek(p), "{")) {
        if (!lex_skip_balanced(p)) return false;
      } else {
        lex_next(p);
      }
    }
  }
  if (!lex_expect(p, "}")) return false;
  if (count == 0 && shape->rank > 0) return true; /* "{}" on an array: keep the default */
  if (count != shape->rank)
    return parse_error(p, &open, "layout has %d entries, shape has rank %d", count, shape->rank);
  bool seen[AXLE_MAX_RANK] = {false};
  for (int i = 0; i < count; i++) {
    if (seen[m2m[i]]) return parse_error(p, &open, "layout repeats dimension %lld", (long long)m2m[i]);
    seen[m2m[i]] = true;
    shape->minor_to_major[i] = (int)m2m[i];
  }
  shape->has_layout = true;
  return true;
}

/* Sizes past 2^48 elements are refused: no machine holds one, and it
 * keeps every later byte-size product (16 bytes an element at most, summed
 * over a module's buffers) far from overflow. Shapes between 2^40 and 2^48
 * elements, which XLA's own tests write, load and are refused where memory
 * is allocated for them, with the bytes they need. Each dimension stays
 * below 2^40 (AXLE_MAX_EXTENT). */
static const int64_t MAX_ELEMENTS = (int64_t)1 << 48;

/* dims = "[" (int ("," int)*)? "]" */
static bool parse_dims(Parser *p, Shape *shape) {
  if (!lex_expect(p, "[")) return false;
  int64_t elements = 1;
  while (!lex_token_is(lex_peek(p), "]")) {
    if (shape->rank > 0 && !lex_expect(p, ",")) return false;
    Token *t = lex_peek(p);
    if (shape->rank == AXLE_MAX_RANK)
      return parse_error(p, t, "rank exceeds the maximum of %d", AXLE_MAX_RANK);
    /* "?" is an unbounded dynamic dimension (XLA's kUnboundedSize): no
     * size, so it adds nothing to the element count checked here. */
    if (lex_consume(p, "?")) {
      shape->dynamic_dims |= (uint16_t)(1u << shape->rank);
      shape->dims[shape->rank++] = AXLE_UNBOUNDED_DIM;
      continue;
    }
    if (lex_consume(p, "<=")) {
      shape->dynamic_dims |= (uint16_t)(1u << shape->rank);
      t = lex_peek(p);
    }
    int64_t d;
    if (!parse_int64(p, &d)) return false;
    if (d < 0) return parse_error(p, t, "negative dimension %lld", (long long)d);
    if (d > 0 && elements > MAX_ELEMENTS / d)
      return parse_error(p, t, "shape has more than 2^48 elements");
    elements *= d > 0 ? d : 1;
    shape->dims[shape->rank++] = d;
  }
  return lex_expect(p, "]");
}

static bool parse_tuple_shape(Parser *p, Shape *out) {
  lex_expect(p, "(");
  Shape *elements = NULL;
  int count = 0, cap = 0;
  while (!lex_token_is(lex_peek(p), ")")) {
    if (count > 0 && !lex_expect(p, ",")) return false;
    if (count == cap) elements = grow(&p->module->arena, elements, &cap, sizeof(Shape));
    if (!parse_shape(p, &elements[count])) return false;
    count++;
  }
  lex_next(p);
  *out = (Shape){.type = TYPE_TUPLE, .tuple_count = count, .tuple_shapes = elements};
  return true;
}

/* A '{' after a shape opens its layout, unless it opens a computation's
 * body (a signature's result shape is followed by one): a layout holds
 * integers, ':' or nothing, a body starts with an instruction name. */
static bool starts_layout(Parser *p) {
  if (!lex_token_is(lex_peek(p), "{")) return false;
  Token *t = lex_peek_at(p, 1);
  int64_t v;
  if (lex_token_is(t, "}") || lex_token_is(t, ":")) return true;
  return lex_word_to_int64(t, &v) && !lex_token_is(lex_peek_at(p, 2), "=");
}

/* shape = element_type dims layout? | "(" (shape ("," shape)*)? ")" */
bool parse_shape(Parser *p, Shape *out) {
  Token *t = lex_peek(p);
  if (lex_token_is(t, "(")) {
    if (p->depth >= PARSE_MAX_DEPTH) return parse_error(p, t, "shape nested too deeply");
    p->depth++;
    bool ok = parse_tuple_shape(p, out);
    p->depth--;
    return ok;
  }
  if (!parse_array_shape_without_layout(p, out)) return false;
  if (starts_layout(p)) return parse_layout(p, out);
  return true;
}

/* array_shape = element_type dims */
bool parse_array_shape_without_layout(Parser *p, Shape *out) {
  Token *t = lex_peek(p);
  ElementType type;
  if (t->kind != TK_WORD || !lex_token_is(lex_peek_at(p, 1), "["))
    return parse_error(p, t, "expected a shape");
  if (!type_from_name(t->text, (size_t)t->len, &type))
    return parse_error(p, t, "unsupported element type '%.*s'", t->len, t->text);
  lex_next(p);
  *out = (Shape){.type = type};
  if (!parse_dims(p, out)) return false;
  if (type == TYPE_TOKEN && out->rank != 0) return parse_error(p, t, "a token has no dimensions: token[]");
  shape_set_default_layout(out);
  return true;
}

/* ----------------------------------------------------------- instructions */

/* Returns the index of a new pending instruction. Callers keep the index,
 * not a pointer: a nested operand adds instructions, which can move the
 * array. */
static int add_pending_inst(Parser *p, PendingComp *pc) {
  if (pc->count == pc->cap) pc->insts = grow(&p->module->arena, pc->insts, &pc->cap, sizeof(PendingInst));
  PendingInst *pi = &pc->insts[pc->count];
  memset(pi, 0, sizeof *pi);
  pi->inst = arena_alloc(&p->module->arena, sizeof(Instruction));
  pi->async_sugar_op = OP_PARAMETER;
  pi->async_thread.kind = TK_EOF;
  return pc->count++;
}

static bool parse_instruction_rhs(Parser *p, PendingComp *pc, const Token *name,
                                  const Shape *shape, int *index);

/* Whether the cursor is at a shape: "(" for a tuple or a word before "[". */
static bool at_shape(Parser *p) {
  Token *t = lex_peek(p);
  return lex_token_is(t, "(") || (t->kind == TK_WORD && lex_token_is(lex_peek_at(p, 1), "["));
}

/* Whether the cursor is at an opcode and its operand list. */
static bool at_opcode(Parser *p) {
  return lex_peek(p)->kind == TK_WORD && lex_token_is(lex_peek_at(p, 1), "(");
}

/* operand = name | shape name | shape? opcode operands attributes
 * The older style writes each operand's shape before its name; it only
 * repeats the operand's own shape, so it is read and dropped. An opcode
 * where a name would be starts an instruction nested in place, without a
 * name (XLA's add(f32[] multiply(x, y), z)); its index goes to *nested. */
static bool parse_operand(Parser *p, PendingComp *pc, Token *name, int *nested, Shape *shape, bool *has_shape_out) {
  *nested = -1;
  bool has_shape = at_shape(p);
  *has_shape_out = has_shape;
  if (has_shape && !parse_shape(p, shape)) return false;
  if (at_opcode(p)) {
    *name = *lex_peek(p);  /* where errors about this operand point */
    if (p->depth >= PARSE_MAX_DEPTH) return parse_error(p, lex_peek(p), "operands nested too deeply");
    p->depth++;
    p->nesting++;
    bool ok = parse_instruction_rhs(p, pc, NULL, has_shape ? shape : NULL, nested);
    p->nesting--;
    p->depth--;
    return ok;
  }
  Token *t = lex_peek(p);
  if (t->kind != TK_WORD) return parse_error(p, t, "expected an operand name");
  *name = *lex_next(p);
  return true;
}

/* operands = "(" (operand ("," operand)*)? ")"
 *          | "(" int ")"       for parameter
 *          | "(" literal ")"   for constant */
static bool parse_operands(Parser *p, PendingComp *pc, int index) {
  Instruction *inst = pc->insts[index].inst;
  if (!lex_expect(p, "(")) return false;
  if (inst->opcode == OP_PARAMETER) {
    Token *t = lex_peek(p);
    if (!parse_int64(p, &inst->attrs.parameter_number)) return false;
    if (inst->attrs.parameter_number < 0)
      return parse_error(p, t, "negative parameter number");
    return lex_expect(p, ")");
  }
  if (inst->opcode == OP_CONSTANT) {
    if (shape_has_unbounded_dims(&inst->shape))
      return parse_error(p, lex_peek(p), "a constant has no unbounded dimension (?): its values give its size");
    inst->attrs.literal = parse_literal(p, &inst->shape);
    if (!inst->attrs.literal) return false;
    module_adopt_literal(p->module, inst->attrs.literal);
    return lex_expect(p, ")");
  }
  Token names[64];
  int nested_small[64];
  Token *list = names;
  int *nested = nested_small;
  int cap = 64, count = 0;
  while (!lex_token_is(lex_peek(p), ")")) {
    if (count > 0 && !lex_expect(p, ",")) return false;
    if (count == cap) {
      Token *bigger = arena_alloc(&p->module->arena, sizeof(Token) * (size_t)cap * 2);
      int *bigger_nested = arena_alloc(&p->module->arena, sizeof(int) * (size_t)cap * 2);
      memcpy(bigger, list, sizeof(Token) * (size_t)cap);
      memcpy(bigger_nested, nested, sizeof(int) * (size_t)cap);
      list = bigger;
      nested = bigger_nested;
      cap *= 2;
    }
    Shape declared;
    bool has_declared = false;
    if (!parse_operand(p, pc, &list[count], &nested[count], &declared, &has_declared)) return false;
    if (has_declared && nested[count] < 0) {
      if (pc->declared_count == pc->declared_capacity)
        pc->declared = grow(&p->module->arena, pc->declared, &pc->declared_capacity, sizeof *pc->declared);
      pc->declared[pc->declared_count++] = (DeclaredOperand){list[count], declared, index, count};
    }
    count++;
  }
  lex_next(p);
  PendingInst *pi = &pc->insts[index];
  pi->operand_count = count;
  pi->operand_names = arena_memdup(&p->module->arena, list, sizeof(Token) * (size_t)count);
  pi->operand_nested = arena_memdup(&p->module->arena, nested, sizeof(int) * (size_t)count);
  return true;
}

/* The opcodes whose result shape may be left out of the text, because
 * shape inference finds it from the operands and attributes alone: XLA's
 * list (CanInferShape in its parser), less broadcast, whose result dims
 * only the shape gives. The others (reshape, convert, iota, slice, ...)
 * need it written; an opcode not listed here needs it too. */
static const Opcode inferable_opcodes[] = {
  OP_ABS, OP_ADD, OP_AND, OP_ATAN2, OP_BATCH_NORM_GRAD, OP_BATCH_NORM_INFERENCE,
  OP_BATCH_NORM_TRAINING, OP_CALL, OP_CBRT, OP_CEIL, OP_CHOLESKY, OP_CLAMP, OP_CLZ,
  OP_COMPARE, OP_CONCATENATE, OP_CONDITIONAL, OP_CONVOLUTION, OP_COPY, OP_COSINE, OP_DIVIDE,
  OP_DOT, OP_ERF, OP_EXPONENTIAL, OP_EXPONENTIAL_MINUS_ONE, OP_FLOOR, OP_GATHER,
  OP_GET_TUPLE_ELEMENT, OP_IS_FINITE, OP_LOG, OP_LOG_PLUS_ONE, OP_LOGISTIC, OP_MAP,
  OP_MAXIMUM, OP_MINIMUM, OP_MULTIPLY, OP_NEGATE, OP_NOT, OP_OPTIMIZATION_BARRIER, OP_OR,
  OP_PAD, OP_PARTITION_ID, OP_POPCNT, OP_POWER, OP_REDUCE, OP_REDUCE_WINDOW, OP_REMAINDER,
  OP_REPLICA_ID, OP_REVERSE, OP_ROUND_NEAREST_AFZ, OP_ROUND_NEAREST_EVEN, OP_RSQRT,
  OP_SCATTER, OP_SELECT, OP_SELECT_AND_SCATTER, OP_SHIFT_LEFT, OP_SHIFT_RIGHT_ARITHMETIC,
  OP_SHIFT_RIGHT_LOGICAL, OP_SIGN, OP_SINE, OP_SORT, OP_SQRT, OP_SUBTRACT, OP_TAN, OP_TANH,
  OP_TRANSPOSE, OP_TRIANGULAR_SOLVE, OP_TUPLE, OP_WHILE, OP_XOR,
};

static bool shape_is_inferable(Opcode op) {
  for (size_t i = 0; i < sizeof inferable_opcodes / sizeof inferable_opcodes[0]; i++)
    if (inferable_opcodes[i] == op) return true;
  return false;
}

/* instruction_rhs = shape? opcode operands ("," attribute)*
 * name is NULL for an instruction nested as an operand; shape is NULL when
 * the text left it out (or, nested, gives the one already read). */
static bool parse_instruction_rhs(Parser *p, PendingComp *pc, const Token *name,
                                  const Shape *shape, int *index) {
  Token first = *lex_peek(p);
  Shape written;
  if (!shape && name && at_shape(p)) {
    if (!parse_shape(p, &written)) return false;
    shape = &written;
  }
  Token op = *lex_peek(p);
  if (op.kind != TK_WORD) return parse_error(p, &op, "expected an opcode");
  *index = add_pending_inst(p, pc);
  PendingInst *pi = &pc->insts[*index];
  Instruction *inst = pi->inst;
  if (name) {
    pi->name = *name;
    inst->name = lex_token_string(p, name);
    inst->loc = name->loc;
  } else {
    /* Named when the computation is complete (name_anonymous), so the
     * name can avoid every name the text uses, even later ones. */
    pi->anonymous = true;
    pi->name = op;
    inst->name = "";
    inst->loc = first.loc;
  }
  AttrNotes notes = {.async_sugar_op = OP_PARAMETER, .async_thread = {.kind = TK_EOF}};
  if (!opcode_from_name(op.text, (size_t)op.len, &inst->opcode) &&
      !opcode_from_async_sugar(&op, &inst->opcode, &notes.async_sugar, &notes.async_sugar_op))
    return parse_error(p, &op, "unknown opcode '%.*s'", op.len > 64 ? 64 : op.len, op.text);
  pi->async_sugar_start = notes.async_sugar == ASYNC_SUGAR_START;
  if (pi->async_sugar_start && !shape)
    return parse_error(p, &op, "the shape of '%.*s' cannot be inferred: write it before the opcode",
                       op.len > 64 ? 64 : op.len, op.text);
  if (shape) {
    inst->shape = *shape;
  } else if (!shape_is_inferable(inst->opcode)) {
    return parse_error(p, &op, "the shape of '%s' cannot be inferred: write it before the opcode",
                       opcode_name(inst->opcode));
  } else {
    inst->shape = (Shape){.type = (ElementType)SHAPE_OMITTED};
  }
  lex_next(p);
  inst->attrs.feature_group_count = 1;
  inst->attrs.batch_group_count = 1;
  if (!parse_operands(p, pc, *index)) return false;
  pi = &pc->insts[*index];
  int arity = opcode_arity(inst->opcode);
  if (arity >= 0 && inst->opcode != OP_PARAMETER && inst->opcode != OP_CONSTANT &&
      pi->operand_count != arity)
    return parse_error(p, &op, "'%s' takes %d operand%s, found %d", opcode_name(inst->opcode),
                       arity, arity == 1 ? "" : "s", pi->operand_count);
  if (!parse_attributes(p, inst, &notes)) return false;
  pi = &pc->insts[*index];
  pi->called_count = notes.count;
  pi->called_names = arena_memdup(&p->module->arena, notes.names, sizeof(Token) * (size_t)notes.count);
  pi->has_dimensions = notes.has_dimensions;
  pi->async_sugar_op = notes.async_sugar > ASYNC_SUGAR_START ? notes.async_sugar_op : OP_PARAMETER;
  pi->async_thread = notes.async_thread;
  pi->has_branch_list = notes.has_branch_list;
  pi->has_slice_sizes = notes.has_slice_sizes;
  return true;
}

/* instruction = "ROOT"? name "=" instruction_rhs */
static bool parse_instruction(Parser *p, PendingComp *pc) {
  lex_release_read_tokens(p);
  bool is_root = false;
  if (lex_token_is(lex_peek(p), "ROOT") && !lex_token_is(lex_peek_at(p, 1), "=")) {
    lex_next(p);
    is_root = true;
  }
  Token name = *lex_peek(p);
  if (name.kind != TK_WORD) return parse_error(p, &name, "expected an instruction name");
  lex_next(p);
  if (!lex_expect(p, "=")) return false;
  if (is_root) {
    if (pc->has_root) return parse_error(p, &name, "computation has a second ROOT");
    pc->root_name = name;
    pc->has_root = true;
  }
  return parse_instruction_rhs(p, pc, &name, NULL, &pc->last_top);
}

/* ----------------------------------------------------------- computations */

/* signature = "(" (name ":" shape ("," name ":" shape)*)? ")" "->" shape
 * The parameter instructions repeat what the parameter list says, so it
 * is checked for form only; the result shape must match the root's
 * (check_signatures, once every shape is known). */
static bool parse_signature(Parser *p, Shape *result) {
  if (!lex_skip_balanced(p)) return false;
  if (!lex_expect(p, "->")) return false;
  return parse_shape(p, result);
}

/* computation = "ENTRY"? name signature? "{" instruction* "}" ("," name "=" value)* */
static bool parse_computation(Parser *p, ModuleText *mt) {
  Token first = *lex_peek(p);   /* copies: the signature may release tokens */
  bool is_entry = false;
  if (lex_token_is(&first, "ENTRY") && lex_peek_at(p, 1)->kind == TK_WORD) {
    lex_next(p);
    is_entry = true;
  }
  Token name = *lex_peek(p);
  if (name.kind != TK_WORD) return parse_error(p, &name, "expected a computation name");
  lex_next(p);
  Shape signature_result;
  bool has_signature = lex_token_is(lex_peek(p), "(");
  if (has_signature && !parse_signature(p, &signature_result)) return false;
  if (!lex_expect(p, "{")) return false;
  if (mt->count == mt->cap) mt->comps = grow(&p->module->arena, mt->comps, &mt->cap, sizeof(PendingComp));
  p->current_comp = mt->count;
  PendingComp *pc = &mt->comps[mt->count++];
  memset(pc, 0, sizeof *pc);
  pc->name = name;
  pc->has_signature = has_signature;
  if (has_signature) pc->signature_result = signature_result;
  pc->comp = arena_alloc(&p->module->arena, sizeof(Computation));
  pc->comp->name = lex_token_string(p, &name);
  pc->comp->loc = name.loc;
  pc->comp->module = p->module;
  pc->comp->is_entry = is_entry;
  if (is_entry) {
    if (mt->entry >= 0) return parse_error(p, &first, "module has a second ENTRY computation");
    mt->entry = mt->count - 1;
  }
  while (!lex_token_is(lex_peek(p), "}")) {
    if (lex_peek(p)->kind == TK_EOF) return parse_error(p, lex_peek(p), "expected '}' to end computation '%s'", pc->comp->name);
    if (!parse_instruction(p, pc)) return false;
  }
  if (pc->count == 0)
    return parse_error(p, lex_peek(p), "computation '%s' has no instructions", pc->comp->name);
  lex_next(p);
  /* A computation on another execution thread ends with
   * "}, execution_thread=\"name\""; axle runs one thread, so it is dropped. */
  while (lex_consume(p, ",")) {
    if (lex_peek(p)->kind != TK_WORD) return parse_error(p, lex_peek(p), "expected a computation attribute");
    lex_next(p);
    if (!lex_expect(p, "=") || !lex_skip_value(p)) return false;
  }
  return true;
}

/* ----------------------------------------------------------------- module */

static bool parse_resolve_module(Parser *p, ModuleText *mt);

/* The wrapped computation of an X-start: one parameter per operand, shaped
 * as element 0 of the start's shape says (a lone operand may be written
 * unwrapped), and X itself as root, shaped as element 1. Returns its index
 * in mt->comps. The start stays where it was, its operands unchanged. */
static int wrap_async_start(Parser *p, ModuleText *mt, int c, int i) {
  Instruction *op = mt->comps[c].insts[i].inst;
  Shape start_shape = op->shape;
  int n = mt->comps[c].insts[i].operand_count;
  const Shape *operands = start_shape.type == TYPE_TUPLE && start_shape.tuple_count >= 2 ? &start_shape.tuple_shapes[0] : NULL;
  bool lone = operands && n == 1 && operands->type != TYPE_TUPLE;
  if (!operands || (!lone && (operands->type != TYPE_TUPLE || operands->tuple_count != n))) {
    parse_error(p, &mt->comps[c].insts[i].name, "the shape of '%s-start' must be a tuple whose element 0 "
                "holds its %d operand shape%s, and element 1 its result", opcode_name(op->opcode), n, n == 1 ? "" : "s");
    return -1;
  }
  if (mt->count == mt->cap) mt->comps = grow(&p->module->arena, mt->comps, &mt->cap, sizeof(PendingComp));
  PendingComp *wc = &mt->comps[mt->count];
  memset(wc, 0, sizeof *wc);
  const char *base = op->name[0] ? op->name : opcode_name(op->opcode);
  char *name = arena_alloc(&p->module->arena, strlen(base) + sizeof ".async_computation");
  sprintf(name, "%s.async_computation", base);
  wc->name = (Token){TK_WORD, name, (int)strlen(name), op->loc, false};
  wc->comp = arena_alloc(&p->module->arena, sizeof(Computation));
  *wc->comp = (Computation){.name = name, .loc = op->loc, .module = p->module};
  Token *params = arena_alloc(&p->module->arena, sizeof(Token) * (size_t)(n + 1));
  int *not_nested = arena_alloc(&p->module->arena, sizeof(int) * (size_t)(n + 1));
  for (int k = 0; k < n; k++) {
    int at = add_pending_inst(p, wc);
    Instruction *param = wc->insts[at].inst;
    *param = (Instruction){.opcode = OP_PARAMETER, .loc = op->loc, .shape = lone ? *operands : operands->tuple_shapes[k]};
    param->attrs.parameter_number = k;
    char *param_name = arena_alloc(&p->module->arena, 32);
    sprintf(param_name, "param.%d", k);
    param->name = param_name;
    params[k] = (Token){TK_WORD, param->name, (int)strlen(param->name), op->loc, false};
    wc->insts[k].name = params[k];
    not_nested[k] = -1;
  }
  int w = add_pending_inst(p, wc);
  Instruction *start = wc->insts[w].inst;
  wc->insts[w] = mt->comps[c].insts[i];
  wc->insts[w].async_sugar_start = false;
  wc->insts[w].anonymous = false;
  wc->insts[w].name = (Token){TK_WORD, opcode_name(op->opcode), (int)strlen(opcode_name(op->opcode)), op->loc, false};
  wc->insts[w].operand_names = params;
  wc->insts[w].operand_nested = not_nested;
  wc->last_top = w;
  *start = (Instruction){.opcode = OP_ASYNC_START, .name = op->name, .loc = op->loc, .shape = start_shape};
  start->attrs.feature_group_count = start->attrs.batch_group_count = 1;
  op->name = wc->insts[w].name.text;
  op->shape = start_shape.tuple_shapes[1];
  PendingInst *pi = &mt->comps[c].insts[i];
  pi->inst = start;
  pi->called_count = 1;
  pi->called_names = arena_memdup(&p->module->arena, &wc->name, sizeof(Token));
  return mt->count++;
}

/* Turns every X-start the text wrote into async-start calls=(a computation
 * around X). Runs before names are resolved, so that the new computations
 * are resolved with the rest. */
static bool wrap_async_sugar(Parser *p, ModuleText *mt) {
  int count = mt->count;
  for (int c = 0; c < count; c++)
    for (int i = 0; i < mt->comps[c].count; i++)
      if (mt->comps[c].insts[i].async_sugar_start && wrap_async_start(p, mt, c, i) < 0) return false;
  return true;
}

/* module = header? debug_table* computation+
 * Without the header (XLA accepts that too) the module is named
 * "module_" and the entry's name. */
static bool parse_module_text(Parser *p, ModuleText *mt) {
  bool has_header = lex_token_is(lex_peek(p), "HloModule");
  if (has_header && !parse_module_header(p)) return false;
  if (!has_header && lex_peek(p)->kind != TK_WORD)
    return parse_error(p, lex_peek(p), "expected 'HloModule' or a computation");
  if (!parse_debug_tables(p)) return false;
  while (lex_peek(p)->kind != TK_EOF)
    if (!parse_computation(p, mt)) return false;
  if (mt->count == 0)
    return parse_error(p, lex_peek(p), has_header ? "module has no computations" : "expected 'HloModule' or a computation");
  if (!wrap_async_sugar(p, mt) || !parse_resolve_module(p, mt)) return false;
  if (!has_header) {
    StrBuf sb = {0};
    strbuf_printf(&sb, "module_%s", p->module->entry->name);
    p->module->name = arena_strdup(&p->module->arena, sb.data);
    strbuf_free(&sb);
  }
  return true;
}

/* -------------------------------------------------------------- resolving */

/* A name table for one scope: open addressing over token texts. */
typedef struct NameTable {
  const Token **keys;
  int *values;
  int cap;
} NameTable;

static uint64_t hash_token(const Token *t) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < t->len; i++) h = (h ^ (unsigned char)t->text[i]) * 1099511628211ull;
  return h;
}

static bool same_text(const Token *a, const Token *b) {
  return a->len == b->len && memcmp(a->text, b->text, (size_t)a->len) == 0;
}

static void table_init(Arena *arena, NameTable *nt, int count) {
  nt->cap = 16;
  while (nt->cap < count * 2) nt->cap *= 2;
  nt->keys = arena_alloc(arena, sizeof(Token *) * (size_t)nt->cap);
  nt->values = arena_alloc(arena, sizeof(int) * (size_t)nt->cap);
}

/* Returns the slot for key: holding it, or empty. */
static int table_slot(const NameTable *nt, const Token *key) {
  int i = (int)(hash_token(key) & (uint64_t)(nt->cap - 1));
  while (nt->keys[i] && !same_text(nt->keys[i], key)) i = (i + 1) & (nt->cap - 1);
  return i;
}

static int table_find(const NameTable *nt, const Token *key) {
  int slot = table_slot(nt, key);
  return nt->keys[slot] ? nt->values[slot] : -1;
}

/* Names each anonymous (nested) instruction "<opcode>.anon", or
 * "<opcode>.anon.N" with the first N that no instruction of the
 * computation uses, as XLA's parser does; names holds the named ones. */
static void name_anonymous(Parser *p, PendingComp *pc, NameTable *names) {
  for (int i = 0; i < pc->count; i++) {
    PendingInst *pi = &pc->insts[i];
    if (!pi->anonymous) continue;
    char text[96];
    Token candidate = {TK_WORD, text, 0, pi->name.loc, false};
    for (int n = 0;; n++) {
      if (n == 0) snprintf(text, sizeof text, "%s.anon", opcode_name(pi->inst->opcode));
      else snprintf(text, sizeof text, "%s.anon.%d", opcode_name(pi->inst->opcode), n);
      candidate.len = (int)strlen(text);
      if (table_find(names, &candidate) < 0) break;
    }
    pi->inst->name = arena_strdup(&p->module->arena, text);
    pi->name.text = pi->inst->name;
    pi->name.len = candidate.len;
    int slot = table_slot(names, &pi->name);
    names->keys[slot] = &pi->name;
    names->values[slot] = i;
  }
}

static bool link_operands(Parser *p, PendingComp *pc, int comp_index) {
  NameTable names;
  table_init(&p->module->arena, &names, pc->count);
  for (int i = 0; i < pc->count; i++) {
    pc->insts[i].inst->index = i;
    if (pc->insts[i].anonymous) continue;
    const Token *name = &pc->insts[i].name;
    int slot = table_slot(&names, name);
    if (names.keys[slot])
      return parse_error(p, name, "duplicate instruction name '%s'", pc->insts[i].inst->name);
    names.keys[slot] = name;
    names.values[slot] = i;
  }
  name_anonymous(p, pc, &names);
  for (int i = 0; i < pc->count; i++) {
    PendingInst *pi = &pc->insts[i];
    pi->inst->operand_count = pi->operand_count;
    pi->inst->operands = arena_alloc(&p->module->arena, sizeof(Instruction *) * (size_t)(pi->operand_count + 1));
    for (int k = 0; k < pi->operand_count; k++) {
      if (pi->operand_nested[k] >= 0) {
        pi->inst->operands[k] = pc->insts[pi->operand_nested[k]].inst;
        continue;
      }
      const Token *operand = &pi->operand_names[k];
      int found = table_find(&names, operand);
      if (found < 0)
        return parse_error(p, operand, "use of undefined instruction '%.*s'", operand->len, operand->text);
      pi->inst->operands[k] = pc->insts[found].inst;
    }
  }
  for (int i = 0; i < p->control_count; i++)
    if (p->control_comps[i] == comp_index && table_find(&names, &p->control_names[i]) < 0)
      return parse_error(p, &p->control_names[i], "control predecessor '%.*s' is not defined",
                         p->control_names[i].len, p->control_names[i].text);
  int root = pc->last_top;
  if (pc->has_root) root = table_find(&names, &pc->root_name);
  pc->comp->root = pc->insts[root].inst;
  return true;
}

/* Links use lists and orders instructions operands-before-users with the
 * editing core's stable sort (text order is kept wherever the text already
 * respects it). A cycle is reported at the operand that closes it. */
static bool sort_instructions(Parser *p, PendingComp *pc) {
  Computation *comp = pc->comp;
  comp->instructions = arena_alloc(&p->module->arena, sizeof(Instruction *) * (size_t)pc->count);
  comp->instruction_capacity = pc->count;
  for (int i = 0; i < pc->count; i++) computation_append_instruction(comp, pc->insts[i].inst);
  computation_link_users(comp);
  Instruction *user = NULL;
  int k = 0;
  if (computation_sort_or_find_cycle(comp, &user, &k)) return true;
  /* On failure the order is untouched: user->index is still its text position. */
  return parse_error(p, &pc->insts[user->index].operand_names[k], "instruction '%s' is part of a cycle through '%s'",
                     user->name, user->operands[k]->name);
}

/* Instruction names are unique module-wide, as in XLA. A name that an
 * earlier computation already used is renamed (x -> x.1), as XLA does when
 * it adds a parsed computation to a module, the entry's names going first; computation names are kept
 * (the parser refused duplicates). All names go into the module's name set,
 * so that module_unique_name never hands out one of them. */
static void register_names(Parser *p, ModuleText *mt) {
  Module *m = p->module;
  int renamed_capacity = 0, renamed_count = 0;
  Instruction **renamed = NULL;
  for (int n = 0; n < mt->count; n++) {
    /* The entry's names are the ones users see: they are kept first. */
    int c = n == 0 ? mt->entry : n <= mt->entry ? n - 1 : n;
    for (int i = 0; i < mt->comps[c].count; i++) {
      Instruction *inst = mt->comps[c].insts[i].inst;
      if (module_register_name(m, inst->name)) continue;
      if (renamed_count == renamed_capacity) renamed = grow(&m->arena, renamed, &renamed_capacity, sizeof *renamed);
      renamed[renamed_count++] = inst;
    }
  }
  /* Renamed only now, so that a new name never takes one written later in the text. */
  for (int i = 0; i < renamed_count; i++) renamed[i]->name = module_unique_name(m, renamed[i]->name);
  for (int c = 0; c < mt->count; c++) module_register_name(m, mt->comps[c].comp->name);
}

/* Parameter numbers must be exactly 0..n-1, each once. */
static bool collect_parameters(Parser *p, PendingComp *pc) {
  Computation *comp = pc->comp;
  int n = 0;
  for (int i = 0; i < pc->count; i++) n += pc->insts[i].inst->opcode == OP_PARAMETER;
  comp->parameter_count = n;
  comp->parameter_capacity = n + 1;
  comp->parameters = arena_alloc(&p->module->arena, sizeof(Instruction *) * (size_t)(n + 1));
  for (int i = 0; i < pc->count; i++) {
    Instruction *inst = pc->insts[i].inst;
    if (inst->opcode != OP_PARAMETER) continue;
    int64_t number = inst->attrs.parameter_number;
    if (number >= n)
      return parse_error(p, &pc->insts[i].name, "parameter number %lld out of range: computation '%s' has %d parameters",
                         (long long)number, comp->name, n);
    if (comp->parameters[number])
      return parse_error(p, &pc->insts[i].name, "parameter number %lld is used twice", (long long)number);
    comp->parameters[number] = inst;
  }
  return true;
}

static bool link_called(Parser *p, ModuleText *mt, const NameTable *comps) {
  for (int c = 0; c < mt->count; c++) {
    PendingComp *pc = &mt->comps[c];
    for (int i = 0; i < pc->count; i++) {
      PendingInst *pi = &pc->insts[i];
      pi->inst->called_count = pi->called_count;
      pi->inst->called = arena_alloc(&p->module->arena, sizeof(Computation *) * (size_t)(pi->called_count + 1));
      pi->called_index = arena_alloc(&p->module->arena, sizeof(int) * (size_t)(pi->called_count + 1));
      for (int k = 0; k < pi->called_count; k++) {
        const Token *callee = &pi->called_names[k];
        int found = table_find(comps, callee);
        if (found < 0)
          return parse_error(p, callee, "use of undefined computation '%.*s'", callee->len, callee->text);
        if (found == mt->entry)
          return parse_error(p, callee, "the entry computation cannot be called");
        pi->inst->called[k] = mt->comps[found].comp;
        pi->called_index[k] = found;
      }
    }
  }
  return true;
}

/* Orders computations callees-before-callers, entry last, by the same
 * depth-first walk as instructions; a computation that calls itself, even
 * through others, is an error (HLO has no recursion). */
static bool sort_computations(Parser *p, ModuleText *mt) {
  int n = mt->count;
  Arena *arena = &p->module->arena;
  char *state = arena_alloc(arena, (size_t)n);
  int *stack = arena_alloc(arena, sizeof(int) * (size_t)n);
  int *next_inst = arena_alloc(arena, sizeof(int) * (size_t)n);
  int *next_call = arena_alloc(arena, sizeof(int) * (size_t)n);
  Module *m = p->module;
  m->computations = arena_alloc(arena, sizeof(Computation *) * (size_t)n);
  m->computation_capacity = n;
  int emitted = 0;
  for (int round = 0; round < 2; round++) {
    for (int start = 0; start < n; start++) {
      /* First every computation but the entry, then the entry, so it is last. */
      if (state[start] || (round == 0) == (start == mt->entry)) continue;
      int top = 0;
      stack[top++] = start;
      state[start] = 1;
      while (top > 0) {
        int c = stack[top - 1];
        PendingComp *pc = &mt->comps[c];
        if (next_inst[c] < pc->count) {
          PendingInst *pi = &pc->insts[next_inst[c]];
          if (next_call[c] == pi->called_count) {
            next_inst[c]++;
            next_call[c] = 0;
            continue;
          }
          int k = next_call[c]++;
          int callee = pi->called_index[k];
          if (state[callee] == 1)
            return parse_error(p, &pi->called_names[k], "computation '%s' calls itself", pi->inst->called[k]->name);
          if (state[callee] == 0) {
            state[callee] = 1;
            stack[top++] = callee;
          }
          continue;
        }
        state[c] = 2;
        top--;
        m->computations[emitted++] = pc->comp;
      }
    }
  }
  m->computation_count = emitted;
  return true;
}

/* The shapes the text left out, from shape inference: computations
 * callees first and instructions operands first, so that every shape a
 * rule reads (operands, a callee's root) is known when it runs. dot and
 * convolution take their element type from the lhs, as XLA's inference
 * does without a preferred type. */
static bool infer_omitted_shapes(Parser *p) {
  Module *m = p->module;
  for (int c = 0; c < m->computation_count; c++) {
    Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++) {
      Instruction *inst = comp->instructions[i];
      if (inst->shape.type != (ElementType)SHAPE_OMITTED) continue;
      Shape declared = {.type = TYPE_F32};
      if ((inst->opcode == OP_DOT || inst->opcode == OP_CONVOLUTION) && inst->operand_count > 0)
        declared.type = inst->operands[0]->shape.type;
      inst->shape = declared;
      if (!infer_shape(inst, &inst->shape, &m->arena, p->st)) {
        p->st->file = p->filename;
        parse_fill_source_line(p, p->st->loc.line);
        return false;
      }
    }
  }
  return true;
}

/* A signature's result shape must be the root's (layouts aside). */
static bool check_signatures(Parser *p, ModuleText *mt) {
  for (int c = 0; c < mt->count; c++) {
    PendingComp *pc = &mt->comps[c];
    if (!pc->has_signature || shape_equal(&pc->signature_result, &pc->comp->root->shape)) continue;
    StrBuf want = {0}, got = {0};
    shape_print(&want, &pc->signature_result, false);
    shape_print(&got, &pc->comp->root->shape, false);
    parse_error(p, &pc->name, "computation '%s' is declared to return %s, but its root '%s' is %s",
                pc->comp->name, want.data, pc->comp->root->name, got.data);
    strbuf_free(&want);
    strbuf_free(&got);
    return false;
  }
  return true;
}

/* An operand's written shape must be its operand's (layouts aside), as
 * XLA's parser checks. */
static bool check_declared_operands(Parser *p, ModuleText *mt) {
  for (int c = 0; c < mt->count; c++) {
    PendingComp *pc = &mt->comps[c];
    for (int i = 0; i < pc->declared_count; i++) {
      const DeclaredOperand *d = &pc->declared[i];
      const Instruction *operand = pc->insts[d->inst].inst->operands[d->operand];
      if (shape_equal(&d->shape, &operand->shape)) continue;
      StrBuf want = {0}, got = {0};
      shape_print(&want, &d->shape, false);
      shape_print(&got, &operand->shape, false);
      parse_error(p, &d->at, "the operand is written as %s, but '%s' is %s", want.data, operand->name, got.data);
      strbuf_free(&want);
      strbuf_free(&got);
      return false;
    }
  }
  return true;
}

/* XLA lets a broadcast of a scalar leave out dimensions={}; whether the
 * operand is a scalar is known once every shape is. */
static bool check_broadcast_dimensions(Parser *p, ModuleText *mt) {
  for (int c = 0; c < mt->count; c++)
    for (int i = 0; i < mt->comps[c].count; i++) {
      PendingInst *pi = &mt->comps[c].insts[i];
      if (pi->inst->opcode != OP_BROADCAST || pi->has_dimensions) continue;
      const Shape *operand = &pi->inst->operands[0]->shape;
      if (!(operand->type != TYPE_TUPLE && operand->rank == 0))
        return parse_error(p, &pi->name, "'broadcast' of a non-scalar needs the attribute dimensions=");
    }
  return true;
}

/* A conditional chosen by a pred names its two branches
 * true_computation= and false_computation=; branch_computations= is for
 * an s32 index (XLA's parser refuses the list with a pred). */
static bool check_predicated_conditionals(Parser *p, ModuleText *mt) {
  for (int c = 0; c < mt->count; c++)
    for (int i = 0; i < mt->comps[c].count; i++) {
      PendingInst *pi = &mt->comps[c].insts[i];
      if (pi->inst->opcode != OP_CONDITIONAL || !pi->has_branch_list || pi->inst->operand_count < 1) continue;
      if (pi->inst->operands[0]->shape.type == TYPE_PRED)
        return parse_error(p, &pi->name, "a conditional chosen by a pred needs true_computation= and "
                                         "false_computation=, not branch_computations=");
    }
  return true;
}

/* The thread an async op runs on: its async_execution_thread, "main" when
 * absent (XLA's default). */
static void async_thread_name(const PendingInst *pi, const char **text, int *len) {
  const Token *t = &pi->async_thread;
  *text = "main", *len = 4;
  if (t->kind == TK_EOF) return;
  *text = t->text, *len = t->len;
  if (*len >= 2 && t->text[0] == '"') *text = t->text + 1, *len -= 2;
}

static const PendingInst *pending_of(const PendingComp *pc, const Instruction *inst) {
  for (int i = 0; i < pc->count; i++)
    if (pc->insts[i].inst == inst) return &pc->insts[i];
  return NULL;
}

/* An async-update or async-done belongs to the async-start its operand
 * chain leads to: what it says of the wrapped op must be what the start
 * says (XLA's parser refuses the rest): the same computation and thread if
 * it names them, and for X-update/X-done the same X. And an
 * async-start's computation is its own: no two starts share one. */
static bool check_async_chains(Parser *p, ModuleText *mt) {
  for (int c = 0; c < mt->count; c++) {
    const PendingComp *pc = &mt->comps[c];
    for (int i = 0; i < pc->count; i++) {
      const PendingInst *pi = &pc->insts[i];
      Instruction *inst = pi->inst;
      if (inst->opcode == OP_ASYNC_START && inst->called_count > 0) {
        for (int j = 0; j < i; j++) {
          const Instruction *other = pc->insts[j].inst;
          if (other->opcode == OP_ASYNC_START && other->called_count > 0 && other->called[0] == inst->called[0])
            return parse_error(p, &pi->name, "async-starts '%s' and '%s' share the computation '%s'", other->name,
                               inst->name, inst->called[0]->name);
        }
      }
      if (inst->opcode != OP_ASYNC_UPDATE && inst->opcode != OP_ASYNC_DONE) continue;
      const Instruction *start = inst->operand_count > 0 ? inst->operands[0] : NULL;
      while (start && start->opcode == OP_ASYNC_UPDATE && start->operand_count > 0) start = start->operands[0];
      if (!start || start->opcode != OP_ASYNC_START || start->called_count < 1) continue;
      const Computation *wrapped = start->called[0];
      if (inst->called_count > 0 && inst->called[0] != wrapped)
        return parse_error(p, &pi->name, "'%s' calls '%s', but its async-start '%s' calls '%s'", inst->name,
                           inst->called[0]->name, start->name, wrapped->name);
      if (pi->async_sugar_op != OP_PARAMETER && (!wrapped->root || wrapped->root->opcode != pi->async_sugar_op))
        return parse_error(p, &pi->name, "'%s-%s' follows an async-start of '%s'", opcode_name(pi->async_sugar_op),
                           inst->opcode == OP_ASYNC_DONE ? "done" : "update",
                           wrapped->root ? opcode_name(wrapped->root->opcode) : "nothing");
      const PendingInst *start_pi = pending_of(pc, start);
      const char *mine, *theirs;
      int mine_len, theirs_len;
      async_thread_name(pi, &mine, &mine_len);
      /* One that names no thread runs on its start's. */
      if (start_pi && pi->async_thread.kind != TK_EOF) {
        async_thread_name(start_pi, &theirs, &theirs_len);
        if (mine_len != theirs_len || memcmp(mine, theirs, (size_t)mine_len) != 0)
          return parse_error(p, &pi->name, "'%s' runs on thread \"%.*s\", its async-start '%s' on \"%.*s\"",
                             inst->name, mine_len, mine, start->name, theirs_len, theirs);
      }
    }
  }
  return true;
}

/* slice_sizes= belongs to collective-permute's in-place form only. */
static bool check_permute_slice_sizes(Parser *p, ModuleText *mt) {
  for (int c = 0; c < mt->count; c++)
    for (int i = 0; i < mt->comps[c].count; i++) {
      PendingInst *pi = &mt->comps[c].insts[i];
      if (pi->has_slice_sizes && !collective_permute_is_in_place(pi->inst))
        return parse_error(p, &pi->name, "slice_sizes= applies only to the in-place collective-permute "
                                         "(input, output, input_starts, output_starts)");
    }
  return true;
}

static bool parse_resolve_module(Parser *p, ModuleText *mt) {
  if (mt->entry < 0) {
    /* Without an ENTRY marker XLA takes the last computation as the entry. */
    mt->entry = mt->count - 1;
    mt->comps[mt->entry].comp->is_entry = true;
  }
  NameTable comps;
  table_init(&p->module->arena, &comps, mt->count);
  for (int c = 0; c < mt->count; c++) {
    int slot = table_slot(&comps, &mt->comps[c].name);
    if (comps.keys[slot])
      return parse_error(p, &mt->comps[c].name, "duplicate computation name '%s'", mt->comps[c].comp->name);
    comps.keys[slot] = &mt->comps[c].name;
    comps.values[slot] = c;
  }
  for (int c = 0; c < mt->count; c++)
    if (!link_operands(p, &mt->comps[c], c) || !collect_parameters(p, &mt->comps[c])) return false;
  if (!link_called(p, mt, &comps)) return false;
  if (!sort_computations(p, mt)) return false;
  for (int c = 0; c < mt->count; c++)
    if (!sort_instructions(p, &mt->comps[c])) return false;
  register_names(p, mt);
  p->module->entry = mt->comps[mt->entry].comp;
  if (!infer_omitted_shapes(p) || !check_broadcast_dimensions(p, mt) || !check_predicated_conditionals(p, mt) ||
      !check_permute_slice_sizes(p, mt) || !check_async_chains(p, mt) ||
      !check_signatures(p, mt) ||
      !check_declared_operands(p, mt) || !parse_check_layout_constraints(p))
    return false;
  parse_broadcast_scalar_select_predicates(p->module);
  split_vector_start_indices(p->module);
  return true;
}

/* --------------------------------------------------------------- entries */

Module *parse_module(const char *text, size_t length, const char *filename, Status *st) {
  return parse_module_with(text, length, filename, NULL, st);
}

Module *parse_module_with(const char *text, size_t length, const char *filename,
                          const ParseOptions *options, Status *st) {
  static const ParseOptions defaults = {0};
  status_clear(st);
  if (!text) {
    text = "";
    length = 0;
  }
  Module *m = module_create("module");
  m->filename = filename ? arena_strdup(&m->arena, filename) : NULL;
  Parser p = {.source = text, .source_length = length, .filename = filename, .module = m, .st = st,
              .options = options ? options : &defaults};
  ModuleText mt = {.entry = -1};
  /* A lexing error ends the tokens early, which can look like a clean end
   * of the module: it fails the parse whatever the parser made of it. */
  bool ok = parse_refuse_foreign_input(&p) && lex_start(&p) && parse_module_text(&p, &mt) && !p.lex_failed;
  lex_free_tokens(&p);
  if (!ok) {
    module_free(m);   /* it owns the literals read so far */
    return NULL;
  }
  if (!verify_module(m, st)) {
    /* The verifier names m->filename, which dies with the module: point at
     * the caller's string instead, and keep the line for the caret. */
    if (st->loc.line > 0) {
      st->file = filename;
      parse_fill_source_line(&p, st->loc.line);
    } else if (st->file) {
      st->file = filename;
    }
    module_free(m);
    return NULL;
  }
  return m;
}

Module *parse_module_file(const char *path, Status *st) {
  return parse_module_file_with(path, NULL, st);
}

/* The path "-" is standard input (the tools' MODULE argument), named
 * "<stdin>" in messages. */
Module *parse_module_file_with(const char *path, const ParseOptions *options, Status *st) {
  status_clear(st);
  bool from_stdin = strcmp(path, "-") == 0;
  if (from_stdin) path = "<stdin>";
  FILE *f = from_stdin ? stdin : fopen(path, "rb");
  if (!f) {
    status_error(st, STATUS_PARSE_ERROR, "cannot read %s: %s", path, strerror(errno));
    return NULL;
  }
  char *text = NULL;
  size_t length = 0, cap = 0;
  for (;;) {
    if (length == cap) {
      cap = cap ? cap * 2 : 1 << 16;
      char *grown = realloc(text, cap);  /* not mem_realloc: an unwind would leave f open */
      if (!grown) {
        free(text);
        if (!from_stdin) fclose(f);
        status_error(st, STATUS_OUT_OF_MEMORY, "out of memory reading %s", path);
        return NULL;
      }
      text = grown;
    }
    size_t got = fread(text + length, 1, cap - length, f);
    length += got;
    if (got == 0) break;
  }
  bool failed = ferror(f);
  int saved_errno = errno;
  if (!from_stdin) fclose(f);
  mem_adopt(text);
  if (failed) {
    mem_free(text);
    status_error(st, STATUS_PARSE_ERROR, "cannot read %s: %s", path, strerror(saved_errno));
    return NULL;
  }
  Module *m = parse_module_with(text, length, path, options, st);
  mem_free(text);
  return m;
}
