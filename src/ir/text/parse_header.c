/* The module header and what may come before the first computation:
 *
 *   HloModule name, entry_computation_layout={(f32[2]{0})->f32[2]{0}}, ...
 *   FileNames 1 "model.py"  FunctionNames ...  FileLocations ...  StackFrames ...
 *
 * The header's attributes are XLA's module attribute list, each known by
 * name; none changes what the module computes on one device, so their
 * values are checked for form where they have one, and dropped. */
#include <string.h>

#include "parse_internal.h"

/* The debug-information tables a module may carry before its computations:
 *   FileNames / FunctionNames:  1 "file.py"
 *   FileLocations / StackFrames: 1 {file_name_id=1 ...}
 * They only feed metadata, which axle does not keep. */
static bool is_debug_table(Parser *p) {
  Token *t = lex_peek(p);
  if (!(lex_token_is(t, "FileNames") || lex_token_is(t, "FunctionNames") ||
        lex_token_is(t, "FileLocations") || lex_token_is(t, "StackFrames")))
    return false;
  Token *after = lex_peek_at(p, 1);
  return !lex_token_is(after, "{") && !lex_token_is(after, "(");
}

static bool skip_debug_table(Parser *p) {
  lex_next(p);
  int64_t id;
  while (lex_word_to_int64(lex_peek(p), &id)) {
    lex_next(p);
    if (!lex_skip_value(p)) return false;
  }
  return true;
}

/* shape_index = "{" (int ("," int)*)? "}" */
static bool check_shape_index(Parser *p) {
  if (!lex_expect(p, "{")) return false;
  for (int n = 0; !lex_token_is(lex_peek(p), "}"); n++) {
    int64_t v;
    if ((n > 0 && !lex_expect(p, ",")) || !parse_int64(p, &v)) return false;
  }
  lex_next(p);
  return true;
}

/* shape_index = "{" (int ("," int)*)? "}"   (a path into a tuple shape) */
static bool parse_shape_index(Parser *p, IntList *out) {
  int64_t path[AXLE_MAX_RANK];
  int n = 0;
  if (!lex_expect(p, "{")) return false;
  while (!lex_consume(p, "}")) {
    if (n > 0 && !lex_expect(p, ",")) return false;
    if (n == AXLE_MAX_RANK) return parse_error(p, lex_peek(p), "shape index nested too deep");
    Token at = *lex_peek(p);
    if (!parse_int64(p, &path[n])) return false;
    if (path[n++] < 0) return parse_error(p, &at, "a shape index cannot be negative");
  }
  *out = intlist_copy(&p->module->arena, path, n);
  return true;
}

/* io_alias = shape_index ":" "(" int "," shape_index ("," kind)? ")"
 * kind     = "may-alias" | "must-alias"
 * XLA's older form "shape_index : int" means (int, {}, may-alias). */
static bool parse_io_alias(Parser *p, IoAlias *alias) {
  alias->loc = lex_peek(p)->loc;
  if (!parse_shape_index(p, &alias->output_index) || !lex_expect(p, ":")) return false;
  if (!lex_consume(p, "(")) return parse_int64(p, &alias->parameter_number);
  if (!parse_int64(p, &alias->parameter_number) || !lex_expect(p, ",") ||
      !parse_shape_index(p, &alias->parameter_index))
    return false;
  if (lex_consume(p, ",")) {
    Token *kind = lex_peek(p);
    if (!lex_token_is(kind, "may-alias") && !lex_token_is(kind, "must-alias"))
      return parse_error(p, kind, "expected may-alias or must-alias");
    alias->must_alias = lex_token_is(kind, "must-alias");
    lex_next(p);
  }
  return lex_expect(p, ")");
}

/* input_output_alias = "{" (io_alias ("," io_alias)*)? "}"
 * Which output may reuse which parameter's buffer: kept in the module, and
 * honoured by buffer assignment. */
static bool parse_io_aliases(Parser *p) {
  Module *m = p->module;
  if (m->io_alias_count > 0) return parse_error(p, lex_peek(p), "input_output_alias given twice");
  int capacity = 0;
  if (!lex_expect(p, "{")) return false;
  while (!lex_consume(p, "}")) {
    if (m->io_alias_count > 0 && !lex_expect(p, ",")) return false;
    if (m->io_alias_count == capacity) {
      /* Arena memory is not reallocated: the old array is left behind, a
       * few bytes for a header that has a handful of entries. */
      capacity = capacity ? capacity * 2 : 8;
      IoAlias *grown = arena_alloc(&m->arena, sizeof(IoAlias) * (size_t)capacity);
      if (m->io_alias_count) memcpy(grown, m->io_aliases, sizeof(IoAlias) * (size_t)m->io_alias_count);
      m->io_aliases = grown;
    }
    if (!parse_io_alias(p, &m->io_aliases[m->io_alias_count++])) return false;
  }
  return true;
}

/* buffer_donor = "{" ("(" int "," shape_index ")" ("," ...)*)? "}" */
static bool check_buffer_donor(Parser *p) {
  if (!lex_expect(p, "{")) return false;
  for (int n = 0; !lex_token_is(lex_peek(p), "}"); n++) {
    int64_t param;
    if ((n > 0 && !lex_expect(p, ",")) || !lex_expect(p, "(") || !parse_int64(p, &param) ||
        !lex_expect(p, ",") || !check_shape_index(p) || !lex_expect(p, ")"))
      return false;
  }
  lex_next(p);
  return true;
}

/* entry_computation_layout = "{" "(" (shape ("," shape)*)? ")" "->" shape "}"
 * The entry's parameters carry the same shapes; axle takes layouts from
 * them, so these are checked for form only. */
static bool check_entry_layout(Parser *p) {
  Shape ignored;
  if (!lex_expect(p, "{") || !lex_expect(p, "(")) return false;
  for (int n = 0; !lex_token_is(lex_peek(p), ")"); n++)
    if ((n > 0 && !lex_expect(p, ",")) || !parse_shape(p, &ignored)) return false;
  lex_next(p);
  return lex_expect(p, "->") && parse_shape(p, &ignored) && lex_expect(p, "}");
}

/* replica_count = int, num_partitions = int: how many devices a run of
 * the module takes (replica_count * num_partitions, docs/multi-device.md). */
static bool read_device_count(Parser *p, int64_t *count, const char *what) {
  Token *at = lex_peek(p);
  if (!parse_int64(p, count)) return false;
  if (*count < 1 || *count > MAX_REPLICA_IDS) return parse_error(p, at, "%s must be from 1 to %d", what, MAX_REPLICA_IDS);
  return true;
}
static bool read_replica_count(Parser *p) { return read_device_count(p, &p->module->replica_count, "replica_count"); }
static bool read_partition_count(Parser *p) {
  return read_device_count(p, &p->module->partition_count, "num_partitions");
}

/* The attributes a module header may carry: XLA's module attribute list.
 * None changes what the module computes on one device: the entry's
 * layouts (the parameters say them too), aliasing (kept: buffer
 * assignment honours it) and donation, scheduling, replica and partition counts,
 * sharding propagation, debug tables. Those with a structured value are
 * checked for form; the others are read past. A name not in the list is
 * refused rather than skipped, in case it does change something. */
static const struct {
  const char *name;
  bool (*check)(Parser *p);  /* NULL: any value, read past */
} module_attributes[] = {
  {"is_scheduled", NULL},
  {"replica_count", read_replica_count},
  {"num_partitions", read_partition_count},
  {"input_output_alias", parse_io_aliases},
  {"buffer_donor", check_buffer_donor},
  {"alias_passthrough_params", NULL},
  {"entry_computation_layout", check_entry_layout},
  {"frontend_attributes", NULL},
  {"allow_spmd_sharding_propagation_to_parameters", NULL},
  {"allow_spmd_sharding_propagation_to_output", NULL},
  {"origin_recovery_table", NULL},
};

/* header = "HloModule" name ":"? ("," name "=" value)*
 * (XLA's lexer reads "name:" as a name, so "HloModule m:" is m.) */
bool parse_module_header(Parser *p) {
  if (!lex_token_is(lex_peek(p), "HloModule")) return parse_error(p, lex_peek(p), "expected 'HloModule'");
  lex_next(p);
  Token *name = lex_peek(p);
  /* The name shares the header's line; a word on the next line is the
   * first computation ("ENTRY"), not a name. */
  if (name->kind != TK_WORD || name->at_line_start) return parse_error(p, name, "expected a module name");
  lex_next(p);
  p->module->name = lex_token_string(p, name);
  if (lex_token_is(lex_peek(p), ":") && !lex_peek(p)->at_line_start) lex_next(p);
  while (lex_consume(p, ",")) {
    Token attr = *lex_peek(p);
    if (attr.kind != TK_WORD) return parse_error(p, &attr, "expected a module attribute");
    int found = -1;
    for (size_t i = 0; i < sizeof module_attributes / sizeof module_attributes[0]; i++)
      if (lex_token_is(&attr, module_attributes[i].name)) found = (int)i;
    if (found < 0)
      return parse_error(p, &attr, "unknown module attribute '%.*s'", attr.len > 64 ? 64 : attr.len, attr.text);
    lex_next(p);
    if (!lex_expect(p, "=")) return false;
    if (!(module_attributes[found].check ? module_attributes[found].check(p) : lex_skip_value(p)))
      return false;
  }
  return true;
}

/* debug_tables = (("FileNames" | "FunctionNames" | "FileLocations" | "StackFrames") entry*)* */
bool parse_debug_tables(Parser *p) {
  while (is_debug_table(p))
    if (!skip_debug_table(p)) return false;
  return true;
}
