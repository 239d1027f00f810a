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

/* shape_index = "{" (int ("," int)*)? "}" */
static bool check_shape_index(Parser *p) {
  if (!expect(p, "{")) return false;
  for (int n = 0; !token_is(peek(p), "}"); n++) {
    int64_t v;
    if ((n > 0 && !expect(p, ",")) || !parse_int64(p, &v)) return false;
  }
  next(p);
  return true;
}

/* input_output_alias = "{" (shape_index ":" "(" int "," shape_index
 *                      ("," ("must-alias" | "may-alias"))? ")" ("," ...)*)? "}"
 * Which output may reuse which parameter's buffer: axle decides buffer
 * reuse itself, so the value is checked for form and dropped. */
static bool check_input_output_alias(Parser *p) {
  if (!expect(p, "{")) return false;
  for (int n = 0; !token_is(peek(p), "}"); n++) {
    int64_t param;
    if ((n > 0 && !expect(p, ",")) || !check_shape_index(p) || !expect(p, ":") || !expect(p, "(") ||
        !parse_int64(p, &param) || !expect(p, ",") || !check_shape_index(p))
      return false;
    if (consume(p, ",") && !consume(p, "must-alias") && !consume(p, "may-alias"))
      return parse_error(p, peek(p), "expected must-alias or may-alias");
    if (!expect(p, ")")) return false;
  }
  next(p);
  return true;
}

/* buffer_donor = "{" ("(" int "," shape_index ")" ("," ...)*)? "}" */
static bool check_buffer_donor(Parser *p) {
  if (!expect(p, "{")) return false;
  for (int n = 0; !token_is(peek(p), "}"); n++) {
    int64_t param;
    if ((n > 0 && !expect(p, ",")) || !expect(p, "(") || !parse_int64(p, &param) || !expect(p, ",") ||
        !check_shape_index(p) || !expect(p, ")"))
      return false;
  }
  next(p);
  return true;
}

/* entry_computation_layout = "{" "(" (shape ("," shape)*)? ")" "->" shape "}"
 * The entry's parameters carry the same shapes; axle takes layouts from
 * them, so these are checked for form only. */
static bool check_entry_layout(Parser *p) {
  Shape ignored;
  if (!expect(p, "{") || !expect(p, "(")) return false;
  for (int n = 0; !token_is(peek(p), ")"); n++)
    if ((n > 0 && !expect(p, ",")) || !parse_shape(p, &ignored)) return false;
  next(p);
  return expect(p, "->") && parse_shape(p, &ignored) && expect(p, "}");
}

/* The attributes a module header may carry: XLA's module attribute list.
 * None changes what the module computes on one device: the entry's
 * layouts (the parameters say them too), aliasing and donation (buffer
 * reuse, axle's own choice), scheduling, replica and partition counts,
 * sharding propagation, debug tables. Those with a structured value are
 * checked for form; the others are read past. A name not in the list is
 * refused rather than skipped, in case it does change something. */
static const struct {
  const char *name;
  bool (*check)(Parser *p);  /* NULL: any value, read past */
} module_attributes[] = {
  {"is_scheduled", NULL},
  {"replica_count", NULL},
  {"num_partitions", NULL},
  {"input_output_alias", check_input_output_alias},
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
  if (!token_is(peek(p), "HloModule")) return parse_error(p, peek(p), "expected 'HloModule'");
  next(p);
  Token *name = peek(p);
  /* The name shares the header's line; a word on the next line is the
   * first computation ("ENTRY"), not a name. */
  if (name->kind != TK_WORD || name->at_line_start) return parse_error(p, name, "expected a module name");
  next(p);
  p->module->name = token_string(p, name);
  if (token_is(peek(p), ":") && !peek(p)->at_line_start) next(p);
  while (consume(p, ",")) {
    Token attr = *peek(p);
    if (attr.kind != TK_WORD) return parse_error(p, &attr, "expected a module attribute");
    int found = -1;
    for (size_t i = 0; i < sizeof module_attributes / sizeof module_attributes[0]; i++)
      if (token_is(&attr, module_attributes[i].name)) found = (int)i;
    if (found < 0)
      return parse_error(p, &attr, "unknown module attribute '%.*s'", attr.len > 64 ? 64 : attr.len, attr.text);
    next(p);
    if (!expect(p, "=")) return false;
    if (!(module_attributes[found].check ? module_attributes[found].check(p) : skip_value(p))) return false;
  }
  return true;
}

/* debug_tables = (("FileNames" | "FunctionNames" | "FileLocations" | "StackFrames") entry*)* */
bool parse_debug_tables(Parser *p) {
  while (is_debug_table(p))
    if (!skip_debug_table(p)) return false;
  return true;
}
