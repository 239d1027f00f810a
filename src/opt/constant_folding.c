/* Pass "fold-constants": computes at compile time what depends only on
 * constants.
 *
 * An instruction whose operands are all known (constants, iotas, whose
 * values the shape alone fixes, and broadcasts of those) is evaluated by the reference evaluator
 * (eval_instruction, the definition of what every op means, so folding
 * cannot change a result) and replaced by a constant holding its value.
 *
 * What is not folded, and why:
 *   - anything larger than options.fold_limit elements, result or operand:
 *     the constant would bloat the module and the executable, and evaluating
 *     it would slow the compile. Each such refusal leaves a note in
 *     ctx->notes ("fold-constants: kept NAME (N elements > limit L)");
 *   - broadcast of a scalar: the broadcast costs nothing at run time, the
 *     constant it would become costs memory;
 *   - a lone iota: it is cheaper to generate than to load;
 *   - instructions with effects, parameters, replica-id and partition-id
 *     (their value depends on where the module runs), while loops (which may
 *     not end), tuples (kept as tuples so that get-tuple-element forwarding
 *     still sees through them), and anything whose result is a tuple;
 *   - anything the evaluator refuses: an evaluator error means "do not
 *     fold", never a failed compile.
 *
 * requires: verified. breaks: schedule. Leaves the folded instructions dead
 * for dce.
 */
#include <stdio.h>
#include <string.h>

#include "opt/opt.h"

/* Known values: constants, iotas, and broadcasts of constants (which are
 * themselves never folded when the constant is a scalar, but whose users
 * may be). */
static bool instruction_is_known(const Instruction *inst) {
  if (inst->opcode == OP_BROADCAST) inst = inst->operands[0];
  return inst->opcode == OP_CONSTANT || inst->opcode == OP_IOTA;
}

static bool opcode_is_foldable(Opcode op) {
  switch (op) {
  case OP_PARAMETER: case OP_CONSTANT: case OP_IOTA: case OP_REPLICA_ID: case OP_PARTITION_ID:
  case OP_WHILE: case OP_TUPLE:
    return false;
  default:
    return true;
  }
}

static bool instruction_is_candidate(const Instruction *inst) {
  if (!opcode_is_foldable(inst->opcode) || shape_is_tuple(&inst->shape) || instruction_has_effects(inst))
    return false;
  if (inst->operand_count == 0) return false;
  for (int k = 0; k < inst->operand_count; k++)
    if (!instruction_is_known(inst->operands[k])) return false;
  if (inst->opcode == OP_BROADCAST && inst->operands[0]->shape.rank == 0) return false;
  return true;
}

/* The largest array among the result and the operands, in elements. */
static int64_t instruction_largest_array(const Instruction *inst) {
  int64_t largest = shape_element_count(&inst->shape);
  for (int k = 0; k < inst->operand_count; k++) {
    int64_t n = shape_element_count(&inst->operands[k]->shape);
    if (n > largest) largest = n;
  }
  return largest;
}

/* The value of a known operand: a constant's literal (borrowed), or an
 * iota or a broadcast evaluated now (owned: *owned is set). */
static const Literal *operand_value(const Instruction *operand, Literal **owned, Status *st) {
  *owned = NULL;
  if (operand->opcode == OP_CONSTANT) return operand->attrs.literal;
  if (operand->opcode == OP_BROADCAST) {
    Literal *inner;
    const Literal *value = operand_value(operand->operands[0], &inner, st);
    *owned = value ? eval_instruction(operand, (Literal *const *)&value, st) : NULL;
    literal_free(inner);
    return *owned;
  }
  *owned = eval_instruction(operand, NULL, st);
  return *owned;
}

/* Evaluates inst on its known operands; NULL when the evaluator refuses. */
static Literal *instruction_evaluate(const Instruction *inst) {
  enum { MAX_OPERANDS = 64 };
  if (inst->operand_count > MAX_OPERANDS) return NULL;
  Literal *values[MAX_OPERANDS];
  Literal *owned[MAX_OPERANDS];
  Status st;
  status_clear(&st);
  bool ok = true;
  for (int k = 0; k < inst->operand_count; k++) {
    values[k] = (Literal *)operand_value(inst->operands[k], &owned[k], &st);
    ok &= values[k] != NULL;
  }
  Literal *result = ok ? eval_instruction(inst, values, &st) : NULL;
  for (int k = 0; k < inst->operand_count; k++) literal_free(owned[k]);
  return result;
}

static bool instruction_fold(Computation *c, Instruction *inst) {
  Literal *value = instruction_evaluate(inst);
  if (!value) return false;
  /* The literal keeps the instruction's layout: data is row-major whatever
   * the layout, and the shape printed with the constant is the
   * instruction's. */
  value->shape = inst->shape;
  Attrs attrs = {0};
  attrs.literal = value;
  Instruction *folded = computation_add_instruction(c, OP_CONSTANT, NULL, 0, NULL, 0, &attrs, &inst->shape,
                                                    "constant");
  folded->metadata = inst->metadata;
  computation_move_before(c, folded, inst);
  instruction_replace_all_uses(inst, folded);
  return true;
}

/* The cleanup passes run in rounds, so the same refusal is noted once. */
static void note_kept(OptContext *ctx, const Instruction *inst, int64_t size, int64_t limit) {
  char line[512];
  snprintf(line, sizeof line, "fold-constants: kept %s (%lld elements > limit %lld)\n", inst->name,
           (long long)size, (long long)limit);
  if (ctx->notes.data && strstr(ctx->notes.data, line)) return;
  strbuf_printf(&ctx->notes, "%s", line);
}

static bool computation_fold_constants(Computation *c, OptContext *ctx) {
  const int64_t limit = ctx->options.fold_limit;
  bool changed = false;
  for (int i = 0; i < c->instruction_count; i++) {
    Instruction *inst = c->instructions[i];
    if (!instruction_is_candidate(inst)) continue;
    if (inst->user_count == 0 && inst != c->root) continue; /* dead: dce's job */
    int64_t size = instruction_largest_array(inst);
    if (size > limit) {
      note_kept(ctx, inst, size, limit);
      continue;
    }
    /* The folded constant goes in before inst, so inst moves one on. */
    if (instruction_fold(c, inst)) {
      changed = true;
      i++;
    }
  }
  return changed;
}

bool fold_constants(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)failed, (void)st;
  bool changed = false;
  for (int k = 0; k < m->computation_count; k++) changed |= computation_fold_constants(m->computations[k], ctx);
  return changed;
}
