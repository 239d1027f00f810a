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
 *   module      = "HloModule" name ("," name "=" value)* debug_table* computation+
 *   computation = "ENTRY"? name signature? "{" instruction+ "}" ("," name "=" value)*
 *   signature   = "(" (name ":" shape ("," ...)*)? ")" "->" shape
 *   instruction = "ROOT"? name "=" shape opcode operands ("," attribute)*
 *   operands    = "(" (shape? name ("," shape? name)*)? ")"     (parameter: int,
 *                                                               constant: literal)
 *   shape       = type "[" dims "]" layout? | "(" (shape ("," shape)*)? ")"
 *   attribute   = name "=" value                     (parse_attrs.c)
 *   literal     = scalar | "{" literal, ... "}" | "(" literal, ... ")"   (parse_literal.c)
 *
 * Names may be used before they are defined (operands within a computation,
 * computations anywhere in the module), so the parser first reads all the
 * text, keeping names as tokens, then resolves them: operands, called
 * computations, the root and the parameters; then orders instructions
 * operands-before-users and computations callees-before-callers. Attributes
 * are read by parse_attrs.c, constant literals by parse_literal.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse_internal.h"

/* What the first reading keeps of an instruction until names are resolved. */
typedef struct PendingInst {
  Instruction *inst;
  Token name;
  Token *operand_names;
  int operand_count;
  Token *called_names;
  int *called_index;       /* index into ModuleText.comps, once resolved */
  int called_count;
  bool has_dimensions;     /* broadcast only: dimensions= was given */
} PendingInst;

typedef struct PendingComp {
  Computation *comp;
  Token name;
  Token root_name;         /* when has_root; else the last instruction is the root */
  bool has_root;
  PendingInst *insts;
  int count, cap;
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
  next(p);
  expect(p, "(");
  Token *t = peek(p);
  int64_t bits;
  if (!parse_int64(p, &bits)) return false;
  if (bits != 0 && bits != type_bit_width(shape->type) && bits != 8 * type_byte_size(shape->type))
    return parse_error(p, t, "element size E(%lld) does not fit %s", (long long)bits,
                       type_name(shape->type));
  shape->element_size_bits = bits < type_byte_size(shape->type) * 8 ? (uint8_t)bits : 0;
  return expect(p, ")");
}

static bool parse_layout(Parser *p, Shape *shape) {
  Token open = *peek(p);    /* a copy: skipping the tiling may release tokens */
  expect(p, "{");
  int count = 0;
  int64_t m2m[AXLE_MAX_RANK];
  while (!token_is(peek(p), "}") && !token_is(peek(p), ":")) {
    if (count > 0 && !expect(p, ",")) return false;
    Token *t = peek(p);
    int64_t d;
    if (!parse_int64(p, &d)) return false;
    if (count == shape->rank || d < 0 || d >= shape->rank)
      return parse_error(p, t, "layout does not fit a shape of rank %d", shape->rank);
    m2m[count++] = d;
  }
  if (consume(p, ":")) {
    while (!token_is(peek(p), "}")) {
      if (peek(p)->kind == TK_EOF) return parse_error(p, &open, "unterminated layout");
      if (token_is(peek(p), "E") && token_is(peek_at(p, 1), "(")) {
        if (!parse_element_size(p, shape)) return false;
      } else if (token_is(peek(p), "(") || token_is(peek(p), "[") || token_is(peek(p), "{")) {
        if (!skip_balanced(p)) return false;
      } else {
        next(p);
      }
    }
  }
  if (!expect(p, "}")) return false;
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

/* Sizes past 2^40 elements are refused: no real module has them, and it
 * keeps every later byte-size product far from overflow. */
static const int64_t MAX_ELEMENTS = (int64_t)1 << 40;

/* dims = "[" (int ("," int)*)? "]" */
static bool parse_dims(Parser *p, Shape *shape) {
  if (!expect(p, "[")) return false;
  int64_t elements = 1;
  while (!token_is(peek(p), "]")) {
    if (shape->rank > 0 && !expect(p, ",")) return false;
    Token *t = peek(p);
    if (token_is(t, "<=") || token_is(t, "?"))
      return parse_error(p, t, "dynamic shapes are not supported");
    if (shape->rank == AXLE_MAX_RANK)
      return parse_error(p, t, "rank exceeds the maximum of %d", AXLE_MAX_RANK);
    int64_t d;
    if (!parse_int64(p, &d)) return false;
    if (d < 0) return parse_error(p, t, "negative dimension %lld", (long long)d);
    if (d > 0 && elements > MAX_ELEMENTS / d)
      return parse_error(p, t, "shape has more than 2^40 elements");
    elements *= d > 0 ? d : 1;
    shape->dims[shape->rank++] = d;
  }
  return expect(p, "]");
}

static bool parse_tuple_shape(Parser *p, Shape *out) {
  expect(p, "(");
  Shape *elements = NULL;
  int count = 0, cap = 0;
  while (!token_is(peek(p), ")")) {
    if (count > 0 && !expect(p, ",")) return false;
    if (count == cap) elements = grow(&p->module->arena, elements, &cap, sizeof(Shape));
    if (!parse_shape(p, &elements[count])) return false;
    count++;
  }
  next(p);
  *out = (Shape){.type = TYPE_TUPLE, .tuple_count = count, .tuple_shapes = elements};
  return true;
}

/* A '{' after a shape opens its layout, unless it opens a computation's
 * body (a signature's result shape is followed by one): a layout holds
 * integers, ':' or nothing, a body starts with an instruction name. */
static bool starts_layout(Parser *p) {
  if (!token_is(peek(p), "{")) return false;
  Token *t = peek_at(p, 1);
  int64_t v;
  if (token_is(t, "}") || token_is(t, ":")) return true;
  return word_to_int64(t, &v) && !token_is(peek_at(p, 2), "=");
}

/* shape = element_type dims layout? | "(" (shape ("," shape)*)? ")" */
bool parse_shape(Parser *p, Shape *out) {
  Token *t = peek(p);
  if (token_is(t, "(")) {
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
  Token *t = peek(p);
  ElementType type;
  if (t->kind != TK_WORD || !token_is(peek_at(p, 1), "["))
    return parse_error(p, t, "expected a shape");
  if (!type_from_name(t->text, (size_t)t->len, &type))
    return parse_error(p, t, "unsupported element type '%.*s'", t->len, t->text);
  next(p);
  *out = (Shape){.type = type};
  if (!parse_dims(p, out)) return false;
  if (type == TYPE_TOKEN && out->rank != 0) return parse_error(p, t, "a token has no dimensions: token[]");
  shape_set_default_layout(out);
  return true;
}

/* ----------------------------------------------------------- instructions */

static PendingInst *add_pending_inst(Parser *p, PendingComp *pc) {
  if (pc->count == pc->cap) pc->insts = grow(&p->module->arena, pc->insts, &pc->cap, sizeof(PendingInst));
  PendingInst *pi = &pc->insts[pc->count++];
  memset(pi, 0, sizeof *pi);
  pi->inst = arena_alloc(&p->module->arena, sizeof(Instruction));
  return pi;
}

/* operand = shape? name
 * The older style writes each operand's shape before its name; it only
 * repeats the operand's own shape, so it is read and dropped. */
static bool parse_operand(Parser *p, Token *name) {
  Token *t = peek(p);
  if (token_is(t, "(") || (t->kind == TK_WORD && token_is(peek_at(p, 1), "["))) {
    Shape ignored;
    if (!parse_shape(p, &ignored)) return false;
    t = peek(p);
  }
  if (t->kind != TK_WORD) return parse_error(p, t, "expected an operand name");
  *name = *next(p);
  return true;
}

/* operands = "(" (operand ("," operand)*)? ")"
 *          | "(" int ")"       for parameter
 *          | "(" literal ")"   for constant */
static bool parse_operands(Parser *p, PendingInst *pi) {
  Instruction *inst = pi->inst;
  if (!expect(p, "(")) return false;
  if (inst->opcode == OP_PARAMETER) {
    Token *t = peek(p);
    if (!parse_int64(p, &inst->attrs.parameter_number)) return false;
    if (inst->attrs.parameter_number < 0)
      return parse_error(p, t, "negative parameter number");
    return expect(p, ")");
  }
  if (inst->opcode == OP_CONSTANT) {
    inst->attrs.literal = parse_literal(p, &inst->shape);
    if (!inst->attrs.literal) return false;
    module_adopt_literal(p->module, inst->attrs.literal);
    return expect(p, ")");
  }
  Token names[64];
  Token *list = names;
  int cap = 64;
  while (!token_is(peek(p), ")")) {
    if (pi->operand_count > 0 && !expect(p, ",")) return false;
    if (pi->operand_count == cap) {
      Token *bigger = arena_alloc(&p->module->arena, sizeof(Token) * (size_t)cap * 2);
      memcpy(bigger, list, sizeof(Token) * (size_t)cap);
      list = bigger;
      cap *= 2;
    }
    if (!parse_operand(p, &list[pi->operand_count])) return false;
    pi->operand_count++;
  }
  next(p);
  pi->operand_names = arena_memdup(&p->module->arena, list, sizeof(Token) * (size_t)pi->operand_count);
  return true;
}

/* instruction = "ROOT"? name "=" shape opcode operands ("," attribute)* */
static bool parse_instruction(Parser *p, PendingComp *pc) {
  release_read_tokens(p);
  bool is_root = false;
  if (token_is(peek(p), "ROOT") && !token_is(peek_at(p, 1), "=")) {
    next(p);
    is_root = true;
  }
  Token *name = peek(p);
  if (name->kind != TK_WORD) return parse_error(p, name, "expected an instruction name");
  next(p);
  if (!expect(p, "=")) return false;
  PendingInst *pi = add_pending_inst(p, pc);
  Instruction *inst = pi->inst;
  pi->name = *name;
  inst->name = token_string(p, name);
  inst->loc = name->loc;
  if (is_root) {
    if (pc->has_root) return parse_error(p, name, "computation has a second ROOT");
    pc->root_name = *name;
    pc->has_root = true;
  }
  if (!parse_shape(p, &inst->shape)) return false;
  Token op = *peek(p);
  if (op.kind != TK_WORD) return parse_error(p, &op, "expected an opcode");
  if (!opcode_from_name(op.text, (size_t)op.len, &inst->opcode))
    return parse_error(p, &op, "unknown opcode '%.*s'", op.len > 64 ? 64 : op.len, op.text);
  next(p);
  inst->attrs.feature_group_count = 1;
  inst->attrs.batch_group_count = 1;
  if (!parse_operands(p, pi)) return false;
  int arity = opcode_arity(inst->opcode);
  if (arity >= 0 && inst->opcode != OP_PARAMETER && inst->opcode != OP_CONSTANT &&
      pi->operand_count != arity)
    return parse_error(p, &op, "'%s' takes %d operand%s, found %d", opcode_name(inst->opcode),
                       arity, arity == 1 ? "" : "s", pi->operand_count);
  AttrNotes notes = {0};
  if (!parse_attributes(p, inst, &notes)) return false;
  pi->called_count = notes.count;
  pi->called_names = arena_memdup(&p->module->arena, notes.names, sizeof(Token) * (size_t)notes.count);
  pi->has_dimensions = notes.has_dimensions;
  return true;
}

/* ----------------------------------------------------------- computations */

/* signature = "(" (name ":" shape ("," name ":" shape)*)? ")" "->" shape
 * The parameter instructions repeat everything the signature says, so it
 * is checked for form only. */
static bool parse_signature(Parser *p) {
  if (!skip_balanced(p)) return false;
  if (!expect(p, "->")) return false;
  Shape ignored;
  return parse_shape(p, &ignored);
}

/* computation = "ENTRY"? name signature? "{" instruction* "}" ("," name "=" value)* */
static bool parse_computation(Parser *p, ModuleText *mt) {
  Token first = *peek(p);   /* copies: the signature may release tokens */
  bool is_entry = false;
  if (token_is(&first, "ENTRY") && peek_at(p, 1)->kind == TK_WORD) {
    next(p);
    is_entry = true;
  }
  Token name = *peek(p);
  if (name.kind != TK_WORD) return parse_error(p, &name, "expected a computation name");
  next(p);
  if (token_is(peek(p), "(") && !parse_signature(p)) return false;
  if (!expect(p, "{")) return false;
  if (mt->count == mt->cap) mt->comps = grow(&p->module->arena, mt->comps, &mt->cap, sizeof(PendingComp));
  PendingComp *pc = &mt->comps[mt->count++];
  memset(pc, 0, sizeof *pc);
  pc->name = name;
  pc->comp = arena_alloc(&p->module->arena, sizeof(Computation));
  pc->comp->name = token_string(p, &name);
  pc->comp->loc = name.loc;
  pc->comp->module = p->module;
  pc->comp->is_entry = is_entry;
  if (is_entry) {
    if (mt->entry >= 0) return parse_error(p, &first, "module has a second ENTRY computation");
    mt->entry = mt->count - 1;
  }
  while (!token_is(peek(p), "}")) {
    if (peek(p)->kind == TK_EOF) return parse_error(p, peek(p), "expected '}' to end computation '%s'", pc->comp->name);
    if (!parse_instruction(p, pc)) return false;
  }
  if (pc->count == 0) return parse_error(p, peek(p), "computation '%s' has no instructions", pc->comp->name);
  next(p);
  /* A computation on another execution thread ends with
   * "}, execution_thread=\"name\""; axle runs one thread, so it is dropped. */
  while (consume(p, ",")) {
    if (peek(p)->kind != TK_WORD) return parse_error(p, peek(p), "expected a computation attribute");
    next(p);
    if (!expect(p, "=") || !skip_value(p)) return false;
  }
  return true;
}

/* ----------------------------------------------------------------- module */

/* The debug-information tables a module may carry before its computations:
 *   FileNames / FunctionNames:  1 "file.py"
 *   FileLocations / StackFrames: 1 {file_name_id=1 ...}
 * They only feed metadata, which axle does not keep. */
static bool is_debug_table(Parser *p) {
  Token *t = peek(p);
  if (!(token_is(t, "FileNames") || token_is(t, "FunctionNames") ||
        token_is(t, "FileLocations") || token_is(t, "StackFrames")))
    return false;
  Token *after = peek_at(p, 1);
  return !token_is(after, "{") && !token_is(after, "(");
}

static bool skip_debug_table(Parser *p) {
  next(p);
  int64_t id;
  while (word_to_int64(peek(p), &id)) {
    next(p);
    if (!skip_value(p)) return false;
  }
  return true;
}

/* header = "HloModule" name ("," name "=" value)* */
static bool parse_module_header(Parser *p) {
  if (!token_is(peek(p), "HloModule")) return parse_error(p, peek(p), "expected 'HloModule'");
  next(p);
  Token *name = peek(p);
  /* The name shares the header's line; a word on the next line is the
   * first computation ("ENTRY"), not a name. */
  if (name->kind != TK_WORD || name->at_line_start) return parse_error(p, name, "expected a module name");
  next(p);
  p->module->name = token_string(p, name);
  while (consume(p, ",")) {
    if (peek(p)->kind != TK_WORD) return parse_error(p, peek(p), "expected a module attribute");
    next(p);
    if (!expect(p, "=") || !skip_value(p)) return false;
  }
  return true;
}

static bool parse_resolve_module(Parser *p, ModuleText *mt);

/* module = header debug_table* computation+ */
static bool parse_module_text(Parser *p, ModuleText *mt) {
  if (!parse_module_header(p)) return false;
  while (is_debug_table(p))
    if (!skip_debug_table(p)) return false;
  while (peek(p)->kind != TK_EOF)
    if (!parse_computation(p, mt)) return false;
  if (mt->count == 0) return parse_error(p, peek(p), "module has no computations");
  return parse_resolve_module(p, mt);
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

static bool link_operands(Parser *p, PendingComp *pc) {
  NameTable names;
  table_init(&p->module->arena, &names, pc->count);
  for (int i = 0; i < pc->count; i++) {
    const Token *name = &pc->insts[i].name;
    int slot = table_slot(&names, name);
    if (names.keys[slot])
      return parse_error(p, name, "duplicate instruction name '%s'", pc->insts[i].inst->name);
    names.keys[slot] = name;
    names.values[slot] = i;
    pc->insts[i].inst->index = i;
  }
  for (int i = 0; i < pc->count; i++) {
    PendingInst *pi = &pc->insts[i];
    pi->inst->operand_count = pi->operand_count;
    pi->inst->operands = arena_alloc(&p->module->arena, sizeof(Instruction *) * (size_t)(pi->operand_count + 1));
    for (int k = 0; k < pi->operand_count; k++) {
      const Token *operand = &pi->operand_names[k];
      int found = table_find(&names, operand);
      if (found < 0)
        return parse_error(p, operand, "use of undefined instruction '%.*s'", operand->len, operand->text);
      pi->inst->operands[k] = pc->insts[found].inst;
    }
    /* XLA lets a broadcast of a scalar leave out dimensions={}. */
    if (pi->inst->opcode == OP_BROADCAST && !pi->has_dimensions &&
        !(pi->inst->operands[0]->shape.type != TYPE_TUPLE && pi->inst->operands[0]->shape.rank == 0))
      return parse_error(p, &pi->name, "'broadcast' of a non-scalar needs the attribute dimensions=");
  }
  int root = pc->count - 1;
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
    if (!link_operands(p, &mt->comps[c]) || !collect_parameters(p, &mt->comps[c])) return false;
  if (!link_called(p, mt, &comps)) return false;
  if (!sort_computations(p, mt)) return false;
  for (int c = 0; c < mt->count; c++)
    if (!sort_instructions(p, &mt->comps[c])) return false;
  register_names(p, mt);
  p->module->entry = mt->comps[mt->entry].comp;
  return true;
}

/* --------------------------------------------------------------- entries */

Module *parse_module(const char *text, size_t length, const char *filename, Status *st) {
  status_clear(st);
  if (!text) {
    text = "";
    length = 0;
  }
  Module *m = module_create("module");
  m->filename = filename ? arena_strdup(&m->arena, filename) : NULL;
  Parser p = {.source = text, .source_length = length, .filename = filename, .module = m, .st = st};
  ModuleText mt = {.entry = -1};
  /* A lexing error ends the tokens early, which can look like a clean end
   * of the module: it fails the parse whatever the parser made of it. */
  bool ok = lex_start(&p) && parse_module_text(&p, &mt) && !p.lex_failed;
  free_tokens(&p);
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
  status_clear(st);
  FILE *f = fopen(path, "rb");
  if (!f) {
    status_error(st, STATUS_PARSE_ERROR, "cannot read %s: %s", path, strerror(errno));
    return NULL;
  }
  char *text = NULL;
  size_t length = 0, cap = 0;
  for (;;) {
    if (length == cap) {
      cap = cap ? cap * 2 : 1 << 16;
      char *grown = realloc(text, cap);
      if (!grown) {
        free(text);
        fclose(f);
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
  fclose(f);
  if (failed) {
    free(text);
    status_error(st, STATUS_PARSE_ERROR, "cannot read %s: %s", path, strerror(saved_errno));
    return NULL;
  }
  Module *m = parse_module(text, length, path, st);
  free(text);
  return m;
}
