/* The program stage (program.h): bindings from the buffer plan, one step
 * per instruction that does work, each fusion classified and each kernel
 * lowered once, called computations as programs of their own.
 *
 * Both backends compile the kernels lowered here, and both route each step
 * by its kind (src/runtime/backend_compile.c hands every step to the
 * target's hook for its kind). */
#include <string.h>

#include "opt/lower.h"
#include "opt/program.h"

typedef struct ProgramBuild {
  Program *p;
  const ProgramOptions *options;
  int step_capacity, binding_capacity;
} ProgramBuild;

static Program *build_computation(const Computation *c, const BufferPlan *plan, bool called, bool in_branch,
                                  const ProgramOptions *options);

static int binding_add(ProgramBuild *b, const ProgramBinding *binding) {
  Program *p = b->p;
  if (p->binding_count == b->binding_capacity) {
    b->binding_capacity = b->binding_capacity ? 2 * b->binding_capacity : 16;
    p->bindings = mem_realloc(p->bindings, (size_t)b->binding_capacity * sizeof *p->bindings);
  }
  p->bindings[p->binding_count] = *binding;
  return p->binding_count++;
}

static int64_t temp_reserve(Program *p, int64_t bytes) {
  int64_t at = (p->temp_bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
  p->temp_bytes = at + bytes;
  return at;
}

/* ---- bindings ---- */

/* The binding of instruction inst's leaf (bindings 0.. are the plan's
 * slots, in order), following aliases to the slot that owns the storage. */
int program_binding_of(const Program *p, const Instruction *inst, int leaf) {
  const BufferSlot *s = buffer_plan_find(p->plan, inst, leaf);
  if (s && s->kind == BUFFER_ALIAS) s = buffer_plan_find(p->plan, s->source, s->source_index);
  return s ? (int)(s - p->plan->slots) : -1;
}

/* A constant's bytes in the layout `layout` names (row-major data in,
 * the layout's order out). */
bool program_shares_storage(const Program *p, const Instruction *a, int a_leaf, const Instruction *b, int b_leaf) {
  int at = program_binding_of(p, a, a_leaf);
  return at >= 0 && at == program_binding_of(p, b, b_leaf);
}

bool program_storage_overlaps(const Program *p, const Instruction *a, int a_leaf, const Instruction *b, int b_leaf) {
  int i = program_binding_of(p, a, a_leaf), j = program_binding_of(p, b, b_leaf);
  if (i < 0 || j < 0) return false;
  if (i == j) return true;
  const ProgramBinding *x = &p->bindings[i], *y = &p->bindings[j];
  if (x->kind != BINDING_TEMP || y->kind != BINDING_TEMP || x->bytes <= 0 || y->bytes <= 0) return false;
  return x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes;
}

static ProgramBinding constant_binding(const Literal *lit, const Shape *layout, const Instruction *inst,
                                       int64_t inst_leaf) {
  size_t bytes = (size_t)shape_byte_size(&lit->shape);
  ProgramBinding b = {.kind = BINDING_CONSTANT, .bytes = (int64_t)bytes, .data = mem_calloc(bytes ? bytes : 1, 1),
                      .inst = inst, .inst_leaf = inst_leaf, .shape = layout};
  if (!shape_is_row_major(layout)) shape_relayout_copy(layout, lit->data, b.data, true);
  else if (bytes) memcpy(b.data, lit->data, bytes);
  return b;
}

static void bind_slot(ProgramBuild *b, const BufferSlot *s) {
  Program *p = b->p;
  ProgramBinding binding = {.kind = BINDING_NONE, .leaf = s->output_index, .number = s->parameter_number,
                            .inst = s->inst, .inst_leaf = s->output_index, .shape = s->shape};
  bool relayout = s->shape && !shape_is_tuple(s->shape) && !shape_is_row_major(s->shape);
  if (s->shape && !shape_is_tuple(s->shape)) binding.bytes = s->size;
  if (relayout && s->shape->element_size_bits) {
    binding.unsupported = "a packed layout (E(n))";
  } else if (s->kind == BUFFER_PARAMETER) {
    binding.kind = BINDING_PARAMETER;
    for (int64_t k = 0; k < s->parameter_number; k++)
      binding.leaf += shape_leaf_count(&p->computation->parameters[k]->shape);
    /* A called computation's parameters are its caller's values, already
     * in the layouts their shapes name: no copy between layouts. */
    if (relayout && !p->called) {
      binding.layout = s->shape;
      binding.offset = temp_reserve(p, s->size);
    }
  } else if (s->kind == BUFFER_CONSTANT) {
    int64_t leaf = s->output_index;
    const Literal *lit = s->inst->attrs.literal ? literal_leaf(s->inst->attrs.literal, &leaf) : NULL;
    if (lit) binding = constant_binding(lit, relayout ? s->shape : &lit->shape, s->inst, s->output_index);
    else binding.unsupported = "a constant without a value for this leaf";
  } else if (s->kind == BUFFER_TEMP) {
    binding.kind = BINDING_TEMP;
    binding.offset = s->offset;
  } else if (s->kind == BUFFER_OUTPUT) {
    binding.kind = BINDING_OUTPUT;  /* leaf: set by bind_result */
    binding.leaf = -1;
  }
  binding_add(b, &binding);
}

/* Points each leaf of the root at its place in the result: the first root
 * leaf an OUTPUT slot reaches is written in place; every other leaf (a
 * parameter, a constant, a value returned twice) is copied at the end. */
static void bind_result(ProgramBuild *b) {
  Program *p = b->p;
  const Instruction *root = p->computation->root;
  int leaves = 0;
  while (buffer_plan_find(p->plan, root, leaves)) leaves++;
  p->copies = mem_calloc((size_t)leaves + 1, sizeof *p->copies);
  for (int l = 0; l < leaves; l++) {
    int at = program_binding_of(p, root, l);
    if (at < 0) {
      p->unsupported = "a result leaf without storage";
      return;
    }
    ProgramBinding *bind = &p->bindings[at];
    /* The root's leaf names the storage's bytes in its own shape (a bitcast
     * may have changed the layout; the optimizer's layout-copies made every
     * forward name its value's layout): that is the layout to read them in. */
    const Shape *shape = shape_leaf_at(&root->shape, l);
    bool row_major = (p->called && !shape->element_size_bits) || shape_is_row_major(shape);
    if (!row_major && shape->element_size_bits) {
      p->unsupported = "a result in a packed layout (E(n))";
      return;
    }
    if (bind->kind == BINDING_OUTPUT && bind->leaf < 0) {
      if (row_major) {
        bind->leaf = l;
        continue;
      }
      bind->kind = BINDING_TEMP;
      bind->offset = temp_reserve(p, shape_byte_size(shape));
    }
    p->copies[p->copy_count++] =
        (ProgramResultCopy){.binding = at, .leaf = l, .bytes = shape_byte_size(shape), .layout = row_major ? NULL : shape};
  }
}

/* ---- steps ---- */

static ProgramStep *step_add(ProgramBuild *b, ProgramStepKind kind, const Instruction *inst) {
  Program *p = b->p;
  if (p->step_count == b->step_capacity) {
    b->step_capacity = b->step_capacity ? 2 * b->step_capacity : 16;
    p->steps = mem_realloc(p->steps, (size_t)b->step_capacity * sizeof *p->steps);
  }
  ProgramStep *s = &p->steps[p->step_count++];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->inst = inst;
  return s;
}

/* The kernel's buffers: each input's binding (a fused constant gets one
 * of its own, in the layout the kernel reads; the product an epilogue
 * reads is PROGRAM_PRODUCT_INPUT), then each output's. */
static void kernel_buffers(ProgramBuild *b, ProgramStep *s) {
  const Kernel *k = s->kernel;
  s->buffer_count = k->input_count + k->output_count;
  s->buffers = mem_calloc((size_t)s->buffer_count + 1, sizeof *s->buffers);
  for (int i = 0; i < k->input_count; i++) {
    const KernelBuffer *in = &k->inputs[i];
    if (in->constant) {
      ProgramBinding c = constant_binding(in->constant, &in->shape, s->inst, -1);
      if (in->shape.element_size_bits) c.unsupported = "a fused constant in a packed layout (E(n))";
      s->buffers[i] = binding_add(b, &c);
    } else if (s->product && in->source == s->product) {
      s->buffers[i] = PROGRAM_PRODUCT_INPUT;
    } else {
      s->buffers[i] = program_binding_of(b->p, in->source, 0);
    }
  }
  for (int o = 0; o < k->output_count; o++)
    s->buffers[k->input_count + o] = program_binding_of(b->p, s->inst, k->outputs[o].output_index);
}

/* Lowers s's kernel (the epilogue when s has a product), once. */
static bool step_lower(ProgramBuild *b, ProgramStep *s, Status *why) {
  b->p->lowered_count++;
  s->kernel = s->product ? lower_epilogue(s->inst, s->product, why) : lower_to_kernel(s->inst, why);
  if (s->kernel) kernel_buffers(b, s);
  else s->unsupported = mem_strdup(why->message);
  return s->kernel != NULL;
}

/* The binding of v's leaf for a step: a leaf of no bytes (a token, an
 * empty array) the plan does not place gets an empty binding of its own. */
static int leaf_binding(ProgramBuild *b, const Instruction *v, int leaf) {
  int at = program_binding_of(b->p, v, leaf);
  if (at >= 0 || shape_buffer_byte_size(shape_leaf_at(&v->shape, leaf)) != 0) return at;
  ProgramBinding none = {.kind = BINDING_NONE, .inst = v, .inst_leaf = leaf};
  return binding_add(b, &none);
}

/* The kernels a routine applies (program.h), lowered once like the rest. */
static void routine_lower(ProgramBuild *b, ProgramStep *s) {
  const Instruction *inst = s->inst;
  Status why = {0};
  if (inst->opcode == OP_SORT && inst->called_count > 0) {
    s->applied_count = 1;
    s->applied[0] = lower_scalar_computation(inst->called[0], inst, &why);
  } else if (inst->opcode == OP_SCATTER) {
    s->applied_count = 1;
    s->applied[0] = lower_scatter_combiner(inst, &why);
  } else if (inst->opcode == OP_SELECT_AND_SCATTER) {
    s->applied_count = 2;
    s->applied[0] = lower_select_and_scatter(inst, 0, &why);
    s->applied[1] = s->applied[0] ? lower_select_and_scatter(inst, 1, &why) : NULL;
  } else {
    return;
  }
  b->p->lowered_count += s->applied_count;
  if (why.code == STATUS_OK) return;
  for (int k = 0; k < s->applied_count; k++) {
    kernel_free(s->applied[k]);
    s->applied[k] = NULL;
  }
  s->unsupported = mem_strdup(why.message[0] ? why.message : "an applied computation that does not lower");
}

/* Any other step reads its operands' leaves and writes its own. */
static void leaf_buffers(ProgramBuild *b, ProgramStep *s) {
  const Instruction *inst = s->inst;
  int count = shape_leaf_count(&inst->shape);
  for (int i = 0; i < inst->operand_count; i++) count += shape_leaf_count(&inst->operands[i]->shape);
  s->buffers = mem_calloc((size_t)count + 1, sizeof *s->buffers);
  for (int i = 0; i < inst->operand_count; i++)
    for (int l = 0; l < shape_leaf_count(&inst->operands[i]->shape); l++)
      s->buffers[s->buffer_count++] = leaf_binding(b, inst->operands[i], l);
  for (int l = 0; l < shape_leaf_count(&inst->shape); l++) s->buffers[s->buffer_count++] = leaf_binding(b, inst, l);
}

/* Programs for called[first, first + count) of s's instruction. */
static void step_call(ProgramBuild *b, ProgramStep *s, int first, int count) {
  s->called = mem_calloc((size_t)count + 1, sizeof *s->called);
  /* inside a branch, and every program a branch runs */
  bool in_branch = b->p->in_conditional_branch || s->kind == PROGRAM_STEP_CONDITIONAL;
  for (int k = 0; k < count && first + k < s->inst->called_count; k++) {
    Program *callee = build_computation(s->inst->called[first + k], NULL, true, in_branch, b->options);
    b->p->lowered_count += callee->lowered_count;
    s->called[s->called_count++] = callee;
  }
}

static bool is_product(const Instruction *inst) {
  return inst->opcode == OP_DOT || inst->opcode == OP_CONVOLUTION;
}

bool program_fusion_has_product(const Instruction *fusion) {
  if (fusion->opcode != OP_FUSION || fusion->called_count < 1) return false;
  const Computation *body = fusion->called[0];
  for (int i = 0; i < body->instruction_count; i++)
    if (is_product(body->instructions[i])) return true;
  return false;
}

/* The one dot or convolution of a product fusion; NULL when there is none
 * or more than one (the target refuses those with its own words). */
static const Instruction *fusion_product(const Instruction *fusion) {
  const Computation *body = fusion->called[0];
  const Instruction *product = NULL;
  for (int i = 0; i < body->instruction_count; i++) {
    if (!is_product(body->instructions[i])) continue;
    if (product) return NULL;
    product = body->instructions[i];
  }
  return product;
}

/* Whether bitcast v is a relabel the product can read in place: its
 * operand's bytes, the same element type, nothing packed (the bitcasts
 * canonicalize-dots and canonicalize-convolutions write). */
static bool is_relabel(const Instruction *v) {
  if (v->opcode != OP_BITCAST || v->operand_count != 1) return false;
  const Shape *from = &v->operands[0]->shape;
  return !shape_is_tuple(from) && !shape_is_tuple(&v->shape) && from->type == v->shape.type &&
         !from->element_size_bits && !v->shape.element_size_bits;
}

const Instruction *program_fused_operand(const Instruction *fusion, const Instruction *v, const Shape **layout) {
  const Instruction *x = v;
  while (is_relabel(x)) x = x->operands[0];
  int64_t n = x->attrs.parameter_number;
  if (x->opcode != OP_PARAMETER || n < 0 || n >= fusion->operand_count) return NULL;
  const Instruction *operand = fusion->operands[n];
  if (x == v) {
    *layout = &operand->shape;
    return operand;
  }
  /* The relabel's layout is worked out from the parameter's: the bytes
   * are the operand's only where the two layouts are one. */
  if (!shape_identical(&x->shape, &operand->shape)) return NULL;
  *layout = &v->shape;
  return operand;
}

/* The binding holding value v of fusion's body for its product to read:
 * a parameter is the fusion's operand; a constant a binding of its own;
 * a relabel (a bitcast keeping the bytes) the binding of what it relabels;
 * any other value is computed first, into a temporary of its own, by a
 * kernel step of its own (its operands first, the same way), so that a dot
 * or convolution can read values computed inside its fusion. -1, with
 * *why (owned) set, when it cannot be. */
static int product_operand(ProgramBuild *b, const Instruction *fusion, const Instruction *v, int depth, char **why) {
  /* A relabel is its operand's bytes: the product reads them in place,
   * through its own operand's shape. */
  if (is_relabel(v) && depth <= 32) return product_operand(b, fusion, v->operands[0], depth + 1, why);
  int64_t n = v->attrs.parameter_number;
  bool fusion_operand = v->opcode == OP_PARAMETER && n >= 0 && n < fusion->operand_count;
  /* The product reads an operand's bytes in its fused parameter's layout:
   * XLA's fusions give both one layout; text may not. */
  if (fusion_operand && !shape_identical(&v->shape, &fusion->operands[n]->shape)) {
    *why = mem_strdup("a fused product's parameter in another layout than the fusion's operand");
    return -1;
  }
  if (fusion_operand) {
    int at = program_binding_of(b->p, fusion->operands[n], 0);
    if (at >= 0) return at;
  }
  const Literal *lit = v->opcode == OP_CONSTANT ? v->attrs.literal : NULL;
  if (lit && !shape_is_tuple(&lit->shape) && !v->shape.element_size_bits) {
    ProgramBinding c = constant_binding(lit, &v->shape, fusion, -1);
    return binding_add(b, &c);
  }
  if (depth > 32 || v->opcode == OP_PARAMETER || v->opcode == OP_CONSTANT || shape_is_tuple(&v->shape) ||
      v->shape.element_size_bits || is_product(v)) {
    *why = mem_strdup("a fused product whose operand cannot be computed before it");
    return -1;
  }
  Status st = {0};
  b->p->lowered_count++;
  Kernel *k = lower_to_kernel(v, &st);
  if (!k) {
    *why = mem_strdup(st.message);
    return -1;
  }
  int count = k->input_count + k->output_count, *buffers = mem_calloc((size_t)count + 1, sizeof *buffers);
  bool ok = k->output_count == 1;
  for (int i = 0; i < k->input_count && ok && !*why; i++) {
    const KernelBuffer *in = &k->inputs[i];
    if (in->constant && (shape_is_tuple(&in->constant->shape) || in->shape.element_size_bits)) {
      ok = false;
    } else if (in->constant) {
      ProgramBinding c = constant_binding(in->constant, &in->shape, fusion, -1);
      buffers[i] = binding_add(b, &c);
    } else {
      buffers[i] = product_operand(b, fusion, in->source, depth + 1, why);
    }
  }
  if (!ok || *why) {
    if (!*why) *why = mem_strdup("a fused product operand the kernel cannot read");
    kernel_free(k);
    mem_free(buffers);
    return -1;
  }
  ProgramBinding temp = {.kind = BINDING_TEMP, .offset = temp_reserve(b->p, shape_byte_size(&v->shape)),
                         .shape = &v->shape, .inst = v, .inst_leaf = 0};
  buffers[k->input_count] = binding_add(b, &temp);
  ProgramStep *s = step_add(b, PROGRAM_STEP_KERNEL, fusion);
  s->kernel = k;
  s->value = v;
  s->buffers = buffers;
  s->buffer_count = count;
  return buffers[k->input_count];
}

/* A fusion around one dot or convolution: the product's operands (any
 * computed inside first), then the product with its epilogue. */
static void product_fusion_step(ProgramBuild *b, const Instruction *fusion) {
  const Instruction *product = fusion_product(fusion);
  int operands[2] = {-1, -1};
  char *why = NULL;
  if (product) operands[0] = product_operand(b, fusion, product->operands[0], 0, &why);
  if (product && !why) operands[1] = product_operand(b, fusion, product->operands[1], 0, &why);
  ProgramStep *s = step_add(b, PROGRAM_STEP_PRODUCT, fusion);
  s->product = product;
  s->product_operands[0] = operands[0];
  s->product_operands[1] = operands[1];
  s->unsupported = why;
  Status st = {0};
  if (product && !why) step_lower(b, s, &st);
}

/* A fusion is one kernel; an output fusion, or one around a dot or a
 * convolution, is the product then an epilogue kernel. XLA's own fusions
 * may hold what no kernel computes (a scatter, outputs of several shapes):
 * such a fusion (and a kCustom one) runs its computation as a program of
 * its own, as a call does. */
static void fusion_step(ProgramBuild *b, const Instruction *fusion) {
  Status why = {0};
  if (fusion->attrs.fusion_kind == FUSION_OUTPUT || program_fusion_has_product(fusion)) {
    product_fusion_step(b, fusion);
    return;
  }
  if (fusion->attrs.fusion_kind != FUSION_CUSTOM) {
    ProgramStep *s = step_add(b, PROGRAM_STEP_KERNEL, fusion);
    if (step_lower(b, s, &why) || why.code != STATUS_UNSUPPORTED) return;
    mem_free(s->unsupported);
    b->p->step_count--;
  }
  ProgramStep *s = step_add(b, PROGRAM_STEP_CALL, fusion);
  const char *refusal = program_control_refusal(fusion);  /* program_refusal.c */
  if (refusal && !s->unsupported) s->unsupported = mem_strdup(refusal);
  leaf_buffers(b, s);
  step_call(b, s, 0, 1);
}

/* What kind of step inst is (fusions aside); false for what takes none:
 * its storage is named by the plan. */
static bool step_kind_of(const Instruction *inst, const ProgramOptions *o, ProgramStepKind *kind) {
  switch (inst->opcode) {
  case OP_PARAMETER: case OP_CONSTANT: case OP_TUPLE: case OP_GET_TUPLE_ELEMENT: case OP_BITCAST:
    return false;
  case OP_DOT: case OP_CONVOLUTION: case OP_SCALED_DOT: case OP_RAGGED_DOT:
    *kind = PROGRAM_STEP_PRODUCT;
    return true;
  case OP_WHILE: *kind = PROGRAM_STEP_WHILE; return true;
  case OP_CONDITIONAL: *kind = PROGRAM_STEP_CONDITIONAL; return true;
  case OP_CALL: case OP_ASYNC_START: *kind = PROGRAM_STEP_CALL; return true;
  case OP_SCATTER: case OP_SELECT_AND_SCATTER: case OP_SORT: case OP_TOPK: case OP_FFT: case OP_CHOLESKY:
  case OP_TRIANGULAR_SOLVE: case OP_CUSTOM_CALL: case OP_RAGGED_ALL_TO_ALL: case OP_MAP: case OP_SCAN:
  case OP_RNG_BIT_GENERATOR: case OP_RNG: case OP_RNG_GET_AND_UPDATE_STATE:
    *kind = PROGRAM_STEP_ROUTINE;
    return true;
  default: {
    /* The copies (program_copy_op's table): with one device a
     * collective's value is its operand's (or the replica's number). */
    const ProgramCopyOp *copy = program_copy_op(inst->opcode);
    if (copy) {
      *kind = copy->exchanges && o->across_devices ? PROGRAM_STEP_COLLECTIVE : PROGRAM_STEP_COPY;
      return true;
    }
    /* Control ops without a kernel form (send, recv, infeed...): a routine
     * no target has yet, refused there. */
    bool control = opcode_form(inst->opcode) == FORM_OTHER && opcode_cost(inst->opcode) == COST_CONTROL;
    *kind = control ? PROGRAM_STEP_ROUTINE : PROGRAM_STEP_KERNEL;
    return true;
  }
  }
}

static void instruction_step(ProgramBuild *b, const Instruction *inst) {
  if (inst->opcode == OP_FUSION) {
    fusion_step(b, inst);
    return;
  }
  ProgramStepKind kind;
  if (!step_kind_of(inst, b->options, &kind)) return;
  ProgramStep *s = step_add(b, kind, inst);
  Status why = {0};
  if (kind == PROGRAM_STEP_KERNEL) {
    step_lower(b, s, &why);
    return;
  }
  if (kind == PROGRAM_STEP_ROUTINE) routine_lower(b, s);
  /* what no target runs: program_refusal.c */
  const char *refusal = kind == PROGRAM_STEP_COPY ? program_copy_refusal(inst) : program_control_refusal(inst);
  if (refusal && !s->unsupported) s->unsupported = mem_strdup(refusal);
  leaf_buffers(b, s);
  if (kind == PROGRAM_STEP_PRODUCT) {
    s->product = inst;
    for (int i = 0; i < 2 && i < inst->operand_count; i++)
      s->product_operands[i] = program_binding_of(b->p, inst->operands[i], 0);
  }
  if (kind == PROGRAM_STEP_WHILE) step_call(b, s, 0, 2);
  if (kind == PROGRAM_STEP_CONDITIONAL) step_call(b, s, 0, inst->called_count);
  if (kind == PROGRAM_STEP_CALL) step_call(b, s, 0, 1);
  /* map and scan run their computation per element or per step */
  if (inst->opcode == OP_MAP || inst->opcode == OP_SCAN) step_call(b, s, 0, 1);
}

static Program *build_computation(const Computation *c, const BufferPlan *plan, bool called, bool in_branch,
                                  const ProgramOptions *options) {
  Program *p = mem_calloc(1, sizeof *p);
  p->computation = c;
  p->called = called;
  p->in_conditional_branch = in_branch;
  if (!plan) plan = p->owned_plan = buffer_plan_create(c);
  p->plan = plan;
  p->temp_bytes = plan->temp_bytes;
  ProgramBuild b = {.p = p, .options = options};
  for (int i = 0; i < plan->slot_count; i++) bind_slot(&b, &plan->slots[i]);
  bind_result(&b);
  for (int i = 0; i < c->instruction_count; i++) instruction_step(&b, c->instructions[i]);
  return p;
}

Program *program_build(const Module *m, const BufferPlan *plan, const ProgramOptions *options) {
  ProgramOptions none = {0};
  return build_computation(m->entry, plan, false, false, options ? options : &none);
}

void program_free(Program *p) {
  if (!p) return;
  for (int i = 0; i < p->step_count; i++) {
    ProgramStep *s = &p->steps[i];
    kernel_free(s->kernel);
    for (int k = 0; k < s->applied_count; k++) kernel_free(s->applied[k]);
    mem_free(s->unsupported);
    mem_free(s->buffers);
    for (int k = 0; k < s->called_count; k++) program_free(s->called[k]);
    mem_free(s->called);
  }
  for (int i = 0; i < p->binding_count; i++) mem_free(p->bindings[i].data);
  mem_free(p->steps);
  mem_free(p->bindings);
  mem_free(p->copies);
  buffer_plan_free(p->owned_plan);
  mem_free(p);
}

Program *program_step_called(const ProgramStep *s, const Computation *comp) {
  for (int k = 0; k < s->called_count; k++)
    if (s->called[k]->computation == comp) return s->called[k];
  return NULL;
}

const char *program_step_kind_name(ProgramStepKind kind) {
  switch (kind) {
  case PROGRAM_STEP_KERNEL: return "kernel";
  case PROGRAM_STEP_PRODUCT: return "product";
  case PROGRAM_STEP_ROUTINE: return "routine";
  case PROGRAM_STEP_COPY: return "copy";
  case PROGRAM_STEP_WHILE: return "while";
  case PROGRAM_STEP_CONDITIONAL: return "conditional";
  case PROGRAM_STEP_CALL: return "call";
  case PROGRAM_STEP_COLLECTIVE: return "collective";
  }
  return "?";
}
