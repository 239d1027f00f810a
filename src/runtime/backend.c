/* The backend table, and its first entry: the reference evaluator. */
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"

/* The evaluator works on Literals: it reads views of the argument buffers
 * (no copies) and its result's storage becomes the result buffer. */
static HostBuffer *interp_run(void *program, const Module *m, HostBuffer *const *args, int arg_count,
                              Status *st) {
  (void)program;  /* none: the interpreter runs the module itself */
  Literal **views = mem_calloc((size_t)arg_count + 1, sizeof *views);
  for (int i = 0; i < arg_count; i++) views[i] = host_buffer_view(args[i]);
  Literal *out = eval_module(m, views, arg_count, st);
  for (int i = 0; i < arg_count; i++) literal_view_free(views[i]);
  mem_free(views);
  return out ? host_buffer_adopt_literal(out) : NULL;
}

/* The leaves of v, depth first, with their shapes in the default layout:
 * a literal holds its data row-major whatever its shape's layout says. */
static void literal_leaves(const Literal *v, ObservedLeaf *leaves, Shape *shapes, int *n, int most) {
  if (shape_is_tuple(&v->shape)) {
    for (int i = 0; i < v->shape.tuple_count; i++) literal_leaves(v->elements[i], leaves, shapes, n, most);
    return;
  }
  if (*n == most) return;
  shapes[*n] = v->shape;
  shape_set_default_layout(&shapes[*n]);
  shapes[*n].element_size_bits = 0;
  leaves[*n] = (ObservedLeaf){.shape = &shapes[*n], .data = v->data};
  ++*n;
}

/* The evaluator one instruction at a time, showing each computed value
 * (--find-nan on the interpreter). Every value is kept to the end. */
static HostBuffer *interp_run_observed(void *program, const Module *m, HostBuffer *const *args, int arg_count,
                                       StepObserver *observe, void *context, Status *st) {
  (void)program;
  enum { MOST_LEAVES = 256 };
  const Computation *c = m->entry;
  Literal **views = mem_calloc((size_t)arg_count + 1, sizeof *views);
  Literal **values = mem_calloc((size_t)c->instruction_count + 1, sizeof *values);
  Literal **operands = NULL;
  for (int i = 0; i < arg_count; i++) views[i] = host_buffer_view(args[i]);
  bool ok = true;
  for (int i = 0; i < c->instruction_count && ok; i++) {
    const Instruction *inst = c->instructions[i];
    if (inst->opcode == OP_PARAMETER || inst->opcode == OP_CONSTANT) continue;
    operands = mem_realloc(operands, ((size_t)inst->operand_count + 1) * sizeof *operands);
    for (int k = 0; k < inst->operand_count; k++) {
      const Instruction *op = inst->operands[k];
      operands[k] = op->opcode == OP_PARAMETER ? views[op->attrs.parameter_number]
                    : op->opcode == OP_CONSTANT ? op->attrs.literal
                                                : values[op->index];
    }
    values[i] = eval_instruction(inst, operands, st);
    ok = values[i] != NULL;
    ObservedLeaf leaves[MOST_LEAVES];
    Shape shapes[MOST_LEAVES];
    int n = 0;
    if (ok) literal_leaves(values[i], leaves, shapes, &n, MOST_LEAVES);
    if (ok) ok = observe(context, inst, leaves, n, st);
  }
  const Instruction *root = c->root;
  Literal *out = NULL;
  if (ok) {
    const Literal *r = root->opcode == OP_PARAMETER ? views[root->attrs.parameter_number]
                       : root->opcode == OP_CONSTANT ? root->attrs.literal
                                                     : values[root->index];
    out = literal_clone(r);
  }
  for (int i = 0; i < c->instruction_count; i++) literal_free(values[i]);
  for (int i = 0; i < arg_count; i++) literal_view_free(views[i]);
  mem_free(operands);
  mem_free(values);
  mem_free(views);
  return out ? host_buffer_adopt_literal(out) : NULL;
}

static void interp_free_program(void *program) { (void)program; }

const Backend backend_interp = {
    .name = "interp",
    .title = "interpreter",
    .refusal_hint = "",
    .optimizes = false,  /* no hooks: backend_compile checks the module and compiles nothing */
    .run = interp_run,
    .free_program = interp_free_program,
    .run_observed = interp_run_observed,
};

static const Backend *const backend_table[BACKEND_COUNT] = {
    [AXLE_BACKEND_INTERP] = &backend_interp,
    [AXLE_BACKEND_CPU] = &backend_cpu,
    [AXLE_BACKEND_GPU] = &backend_gpu,
};
_Static_assert(sizeof backend_table / sizeof backend_table[0] == 3,
               "one backend table row per axle_backend_t value");

const Backend *backend_get(axle_backend_t id, Status *st) {
  if ((int)id < 0 || (int)id >= BACKEND_COUNT) {
    status_error(st, STATUS_INPUT_ERROR, "unknown backend %d", (int)id);
    return NULL;
  }
  return backend_table[id];
}

bool backend_id_from_name(const char *name, axle_backend_t *id, Status *st) {
  for (int i = 0; i < BACKEND_COUNT; i++)
    if (strcmp(name, backend_table[i]->name) == 0) {
      *id = (axle_backend_t)i;
      return true;
    }
  return status_error(st, STATUS_INPUT_ERROR, "unknown backend '%s' (expected interp, cpu or gpu)", name);
}
