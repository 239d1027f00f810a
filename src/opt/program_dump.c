/* The program stage for a reader (program.h): --dump's
 * module_NNNN.NAME.program.txt and axle-opt --stage=program.
 *
 *   program of ENTRY (entry): N bindings, N steps, temporary block N bytes
 *     bindings
 *       b0  parameter 0 leaf 0   f32[1024]{0}  of Arg_0.1
 *       ...
 *     steps
 *       0  kernel   reduce.3  reads b0 b1  writes b2
 *            kernel reduce.3: reduce over 1 dims, 2 inputs, 1 output
 *       1  while    while.5  reads b3  writes b4
 *            condition: program of cond (called): ...   (nested, indented;
 *            a branch's, and what it runs: "(called, in a branch)")
 *     result
 *       leaf 0 in place: b2
 *
 * A binding is where a value lives; a step reads and writes only through
 * binding numbers, so a target needs nothing else to run it. */
#include "opt/program.h"

static void indent(StrBuf *sb, int depth) { strbuf_printf(sb, "%*s", 2 * depth, ""); }

static void print_binding(StrBuf *sb, const Program *p, int number, int depth) {
  const ProgramBinding *b = &p->bindings[number];
  indent(sb, depth);
  strbuf_printf(sb, "b%-3d ", number);
  /* A tuple, a get-tuple-element or a bitcast names another's storage. */
  const BufferSlot *slot = number < p->plan->slot_count ? &p->plan->slots[number] : NULL;
  int names = slot && slot->kind == BUFFER_ALIAS ? program_binding_of(p, slot->inst, (int)slot->output_index) : -1;
  switch (b->kind) {
  case BINDING_NONE:
    if (names >= 0 && names != number) strbuf_printf(sb, "alias of b%d", names);
    else strbuf_printf(sb, "none (no storage)");
    break;
  case BINDING_PARAMETER:
    strbuf_printf(sb, "parameter %lld (parameter leaf %lld)", (long long)b->number, (long long)b->leaf);
    if (b->layout) strbuf_printf(sb, ", copied into its layout at temp +%lld", (long long)b->offset);
    break;
  case BINDING_CONSTANT: strbuf_printf(sb, "constant, %lld bytes", (long long)b->bytes); break;
  case BINDING_TEMP: strbuf_printf(sb, "temp +%lld", (long long)b->offset); break;
  case BINDING_OUTPUT: strbuf_printf(sb, "result leaf %lld", (long long)b->leaf); break;
  }
  if (b->shape && b->kind != BINDING_NONE) {
    strbuf_printf(sb, "   ");
    shape_print(sb, b->shape, true);
  }
  if (b->inst) {
    strbuf_printf(sb, "   of %s", b->inst->name);
    if (b->inst_leaf > 0) strbuf_printf(sb, " leaf %lld", (long long)b->inst_leaf);
    if (b->inst_leaf < 0) strbuf_printf(sb, " (a constant its kernel holds)");
  }
  if (b->unsupported) strbuf_printf(sb, "   UNSUPPORTED: %s", b->unsupported);
  strbuf_printf(sb, "\n");
}

static void print_buffer_list(StrBuf *sb, const int *buffers, int from, int to) {
  for (int i = from; i < to; i++) {
    if (buffers[i] == PROGRAM_PRODUCT_INPUT) strbuf_printf(sb, " product");
    else if (buffers[i] < 0) strbuf_printf(sb, " (unplaced)");
    else strbuf_printf(sb, " b%d", buffers[i]);
  }
}

static const char *kernel_kind_words(KernelKind kind) {
  switch (kind) {
  case KERNEL_LOOP: return "loop";
  case KERNEL_REDUCE: return "reduce";
  case KERNEL_ROW: return "row";
  default: return "kernel";
  }
}

static void print_program_at(StrBuf *sb, const Program *p, int depth);

static void print_step(StrBuf *sb, const ProgramStep *s, int number, int depth) {
  indent(sb, depth);
  strbuf_printf(sb, "%-3d %-11s ", number, program_step_kind_name(s->kind));
  instruction_describe(sb, s->inst);
  /* A kernel's buffers are its inputs then outputs; other steps' are the
   * operands' leaves then the result's. */
  int inputs = s->kernel ? s->kernel->input_count : s->buffer_count - shape_leaf_count(&s->inst->shape);
  if (s->buffer_count) {
    strbuf_printf(sb, "  reads");
    print_buffer_list(sb, s->buffers, 0, inputs);
    strbuf_printf(sb, "  writes");
    print_buffer_list(sb, s->buffers, inputs, s->buffer_count);
  }
  strbuf_printf(sb, "\n");
  if (s->kind == PROGRAM_STEP_PRODUCT && s->product) {
    indent(sb, depth + 3);
    strbuf_printf(sb, "product: %s %s of", opcode_name(s->product->opcode), s->product->name);
    print_buffer_list(sb, s->product_operands, 0, 2);
    strbuf_printf(sb, "\n");
  }
  if (s->value) {
    indent(sb, depth + 3);
    strbuf_printf(sb, "computes %s, which the fusion's product reads, first\n", s->value->name);
  }
  if (s->kernel) {
    indent(sb, depth + 3);
    strbuf_printf(sb, "%s %s: %s kernel, rank %d, %d inputs, %d outputs, %d ops\n",
                  s->kind == PROGRAM_STEP_PRODUCT ? "epilogue" : "kernel", s->kernel->name,
                  kernel_kind_words(s->kernel->kind), s->kernel->rank, s->kernel->input_count,
                  s->kernel->output_count, s->kernel->op_count);
  }
  for (int k = 0; k < s->applied_count; k++) {
    if (!s->applied[k]) continue;
    indent(sb, depth + 3);
    strbuf_printf(sb, "applies kernel %s: %s kernel, rank %d, %d inputs, %d outputs, %d ops\n", s->applied[k]->name,
                  kernel_kind_words(s->applied[k]->kind), s->applied[k]->rank, s->applied[k]->input_count,
                  s->applied[k]->output_count, s->applied[k]->op_count);
  }
  if (s->unsupported) {
    indent(sb, depth + 3);
    strbuf_printf(sb, "not lowered: %s\n", s->unsupported);
  }
  static const char *const while_roles[] = {"condition", "body"};
  for (int k = 0; k < s->called_count; k++) {
    indent(sb, depth + 3);
    if (s->kind == PROGRAM_STEP_WHILE && k < 2) strbuf_printf(sb, "%s: ", while_roles[k]);
    else if (s->kind == PROGRAM_STEP_CONDITIONAL) strbuf_printf(sb, "branch %d: ", k);
    else strbuf_printf(sb, "calls: ");
    print_program_at(sb, s->called[k], depth + 3);
  }
}

static void print_program_at(StrBuf *sb, const Program *p, int depth) {
  strbuf_printf(sb, "program of %s (%s): %d bindings, %d steps, temporary block %lld bytes\n",
                p->computation->name, !p->called ? "entry" : p->in_conditional_branch ? "called, in a branch" : "called",
                p->binding_count, p->step_count,
                (long long)p->temp_bytes);
  indent(sb, depth + 1);
  strbuf_printf(sb, "bindings\n");
  for (int i = 0; i < p->binding_count; i++) print_binding(sb, p, i, depth + 2);
  indent(sb, depth + 1);
  strbuf_printf(sb, "steps\n");
  for (int i = 0; i < p->step_count; i++) print_step(sb, &p->steps[i], i, depth + 2);
  indent(sb, depth + 1);
  strbuf_printf(sb, "result\n");
  if (p->unsupported) {
    indent(sb, depth + 2);
    strbuf_printf(sb, "UNSUPPORTED: %s\n", p->unsupported);
  }
  for (int i = 0; i < p->binding_count; i++) {
    const ProgramBinding *b = &p->bindings[i];
    if (b->kind != BINDING_OUTPUT || b->leaf < 0) continue;
    indent(sb, depth + 2);
    strbuf_printf(sb, "leaf %lld written in place: b%d\n", (long long)b->leaf, i);
  }
  for (int i = 0; i < p->copy_count; i++) {
    indent(sb, depth + 2);
    strbuf_printf(sb, "leaf %d copied from b%d%s\n", p->copies[i].leaf, p->copies[i].binding,
                  p->copies[i].layout ? " (out of its layout)" : "");
  }
}

void print_program(StrBuf *sb, const Program *p) {
  strbuf_printf(sb, "// The program stage (src/opt/program.h): bN is a binding, the storage of a value;\n"
                    "// each step, in schedule order, reads and writes bindings only.\n");
  print_program_at(sb, p, 0);
}
