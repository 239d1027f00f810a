/* The CPU backend's entry in the backend table (src/runtime/backend.h).
 *
 * compile walks the optimized entry computation (executable_module_to_run)
 * in its scheduled order and turns each instruction into a step of a
 * CpuProgram (cpu_program.h): parameters, constants, tuples,
 * get-tuple-elements and bitcasts take none (their storage is named by the
 * buffer plan); fusions and unfused elementwise, data-movement and reduce
 * ops are lowered to kernels (src/opt/lower.c) and compiled to x86-64
 * (kernel_x86.h); an unfused f32 dot is a call of the blocked GEMM
 * (gemm.h). Anything else is a compile error that names the instruction
 * and its JAX source line: "must compile" — never a silent fallback to the
 * interpreter. run is cpu_program_run. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_program.h"
#include "opt/lower.h"
#include "runtime/backend.h"

typedef struct CpuCompile {
  CpuProgram *p;
  const Module *m;
  const Computation *entry;
  Status *st;
  /* Output fusions' products: each lives only from its GEMM to its
   * epilogue, the next step, so all share one binding of the largest size. */
  int product_binding;
  int64_t product_bytes;
} CpuCompile;

/* The one message for everything the backend cannot compile, located at
 * the instruction; why (may be NULL) says what stopped it. */
static bool refuse(CpuCompile *c, const Instruction *inst, const char *why) {
  StrBuf sb = {0};
  instruction_describe(&sb, inst);
  /* A fusion the optimizer made has no line of its own: point at the line
   * of the instruction whose value it computes. */
  SourceLoc loc = inst->loc;
  if (loc.line == 0 && inst->opcode == OP_FUSION && inst->called_count > 0 && inst->called[0]->root)
    loc = inst->called[0]->root->loc;
  status_error_at(c->st, STATUS_UNSUPPORTED, c->m->filename, loc,
                  "the CPU backend cannot compile %s (%s) yet%s%s", sb.data ? sb.data : inst->name,
                  opcode_name(inst->opcode), why ? ": " : "", why ? why : "");
  strbuf_free(&sb);
  return false;
}

/* Host buffers and literals are row-major; only the layout {rank-1,...,0}
 * holds them as they are. */
static bool layout_is_row_major(const Shape *s) {
  if (s->element_size_bits) return false;
  for (int d = 0; d < s->rank; d++)
    if (s->minor_to_major[d] != s->rank - 1 - d) return false;
  return true;
}

/* ---- storage ---- */

/* Leaf `*leaf` (counting down, depth first) of a literal, or NULL. */
static const Literal *literal_leaf(const Literal *lit, int64_t *leaf) {
  if (!shape_is_tuple(&lit->shape)) return (*leaf)-- == 0 ? lit : NULL;
  for (int i = 0; i < lit->shape.tuple_count; i++) {
    const Literal *found = literal_leaf(lit->elements[i], leaf);
    if (found || *leaf < 0) return found;
  }
  return NULL;
}

/* The binding of instruction inst's leaf (bindings 0.. are the plan's
 * slots, in order), following aliases to the slot that owns the storage. */
static int binding_of(const CpuCompile *c, const Instruction *inst, int leaf) {
  const BufferPlan *plan = c->p->plan;
  const BufferSlot *s = buffer_plan_find(plan, inst, leaf);
  if (s && s->kind == BUFFER_ALIAS) s = buffer_plan_find(plan, s->source, s->source_index);
  return s ? (int)(s - plan->slots) : -1;
}

static bool bind_slot(CpuCompile *c, const BufferSlot *s) {
  CpuBinding b = {.kind = BINDING_NONE, .leaf = s->output_index, .number = s->parameter_number};
  bool relayout = s->shape && !shape_is_tuple(s->shape) && !layout_is_row_major(s->shape);
  if (relayout && s->shape->element_size_bits)
    return refuse(c, s->inst, "a packed layout (E(n))");
  if (s->kind == BUFFER_PARAMETER) {
    b.kind = BINDING_PARAMETER;
    if (relayout) {
      b.layout = s->shape;
      b.offset = cpu_program_reserve_temp(c->p, s->size);
    }
  } else if (s->kind == BUFFER_CONSTANT) {
    int64_t leaf = s->output_index;
    const Literal *lit = s->inst->attrs.literal ? literal_leaf(s->inst->attrs.literal, &leaf) : NULL;
    if (!lit) return refuse(c, s->inst, "a constant without a value for this leaf");
    size_t bytes = (size_t)shape_byte_size(&lit->shape);
    b.kind = BINDING_CONSTANT;
    b.data = malloc(bytes ? bytes : 1);
    if (!b.data) return status_error(c->st, STATUS_OUT_OF_MEMORY, "out of memory: a constant of %zu bytes", bytes);
    if (relayout) relayout_copy(s->shape, lit->data, b.data, true);
    else if (bytes) memcpy(b.data, lit->data, bytes);
  } else if (s->kind == BUFFER_TEMP) {
    b.kind = BINDING_TEMP;
    b.offset = s->offset;
  } else if (s->kind == BUFFER_OUTPUT) {
    b.kind = BINDING_OUTPUT;  /* leaf: set by bind_result */
    b.leaf = -1;
  }
  cpu_program_add_binding(c->p, &b);
  return true;
}

/* Points each leaf of the root at its place in the result: the first root
 * leaf an OUTPUT slot reaches is written in place; every other leaf (a
 * parameter, a constant, a value returned twice) is copied at the end. */
static bool bind_result(CpuCompile *c) {
  const Instruction *root = c->entry->root;
  const BufferPlan *plan = c->p->plan;
  int leaves = 0;
  while (buffer_plan_find(plan, root, leaves)) leaves++;
  c->p->copies = calloc_or_exit((size_t)leaves + 1, sizeof *c->p->copies);
  for (int l = 0; l < leaves; l++) {
    int b = binding_of(c, root, l);
    if (b < 0) return refuse(c, root, "a result leaf without storage");
    CpuBinding *bind = &c->p->bindings[b];
    /* The root's leaf names the storage's bytes in its own shape (a bitcast
     * may have changed the layout): that is the layout to read them in. */
    const Shape *shape = buffer_plan_find(plan, root, l)->shape;
    bool row_major = layout_is_row_major(shape);
    if (!row_major && shape->element_size_bits) return refuse(c, root, "a result in a packed layout (E(n))");
    if (bind->kind == BINDING_OUTPUT && bind->leaf < 0) {
      if (row_major) {
        bind->leaf = l;
        continue;
      }
      *bind = (CpuBinding){.kind = BINDING_TEMP, .offset = cpu_program_reserve_temp(c->p, shape_byte_size(shape))};
    }
    c->p->copies[c->p->copy_count++] =
        (CpuResultCopy){.binding = b, .leaf = l, .bytes = shape_byte_size(shape), .layout = row_major ? NULL : shape};
  }
  return true;
}

/* ---- kernels ---- */

/* A kernel for inst; with `computed` (an output fusion's dot), the
 * epilogue that reads the dot's product from binding computed_binding. */
static bool compile_kernel(CpuCompile *c, const Instruction *inst, const Instruction *computed, int computed_binding) {
  for (int i = 0; i < inst->operand_count; i++)
    if (shape_is_tuple(&inst->operands[i]->shape)) return refuse(c, inst, "a tuple-shaped operand");
  Status why = {0};
  Kernel *k = computed ? lower_epilogue(inst, computed, &why) : lower_to_kernel(inst, &why);
  CompiledKernel *ck = k ? kernel_x86_compile(k, &c->p->cpu, &why) : NULL;
  if (!ck) {
    kernel_free(k);
    return refuse(c, inst, why.message);
  }
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_KERNEL, inst, k->input_count + k->output_count);
  s->kernel = ck;
  bool ok = true;
  for (int i = 0; i < k->input_count && ok; i++) {
    const KernelBuffer *in = &k->inputs[i];
    if (in->constant) {
      if (in->shape.element_size_bits) ok = refuse(c, inst, "a fused constant in a packed layout (E(n))");
      size_t bytes = (size_t)shape_byte_size(&in->constant->shape);
      CpuBinding b = {.kind = BINDING_CONSTANT, .data = calloc_or_exit(bytes ? bytes : 1, 1)};
      if (!layout_is_row_major(&in->shape)) relayout_copy(&in->shape, in->constant->data, b.data, true);
      else if (bytes) memcpy(b.data, in->constant->data, bytes);
      s->buffers[i] = cpu_program_add_binding(c->p, &b);
    } else if (computed && in->source == computed) {
      s->buffers[i] = computed_binding;
    } else {
      s->buffers[i] = binding_of(c, in->source, 0);
    }
  }
  for (int o = 0; o < k->output_count && ok; o++)
    s->buffers[k->input_count + o] = binding_of(c, inst, k->outputs[o].output_index);
  for (int i = 0; i < s->buffer_count && ok; i++)
    if (s->buffers[i] < 0) ok = refuse(c, inst, "a kernel buffer the plan does not place");
  kernel_free(k);
  return ok;
}

/* ---- dots ---- */

/* Element strides of s's dimensions in its layout. */
static void layout_strides(const Shape *s, int64_t strides[AXLE_MAX_RANK]) {
  int64_t step = 1;
  for (int i = 0; i < s->rank; i++) {
    strides[s->minor_to_major[i]] = step;
    step *= s->dims[s->minor_to_major[i]];
  }
}

/* Merges the dims dims[0..n) of a shape (outermost first) into one extent
 * and one stride; false when they are not evenly spaced in memory. Dims of
 * extent 1 are skipped: any stride serves them. */
static bool dims_merge(const Shape *s, const int64_t *dims, int n, int64_t *extent, int64_t *stride) {
  int64_t strides[AXLE_MAX_RANK];
  layout_strides(s, strides);
  *extent = 1;
  *stride = 0;
  int64_t last = -1;
  for (int i = n - 1; i >= 0; i--) {  /* innermost first */
    int64_t d = dims[i], e = s->dims[d];
    if (e == 1) continue;
    if (last < 0) *stride = strides[d];
    else if (strides[d] != strides[last] * s->dims[last]) return false;
    *extent *= e;
    last = d;
  }
  return true;
}

/* The dims of an operand of rank `rank` that are in neither list. */
static int dims_free(int rank, const IntList *a, const IntList *b, int64_t *out) {
  int n = 0;
  for (int d = 0; d < rank; d++) {
    bool used = false;
    for (int i = 0; i < a->count; i++) used |= a->values[i] == d;
    for (int i = 0; i < b->count; i++) used |= b->values[i] == d;
    if (!used) out[n++] = d;
  }
  return n;
}

static void dims_range(int64_t *out, int from, int count) {
  for (int i = 0; i < count; i++) out[i] = from + i;
}

/* The GEMM problem of dot (sizes and element strides; pointers are set
 * per run); false when it is not f32 or its dimensions do not map to one
 * batch, row, column and contracting stride each. why says which. */
static bool dot_problem(const Instruction *dot, GemmProblem *g, const char **why) {
  const Shape *lhs = &dot->operands[0]->shape, *rhs = &dot->operands[1]->shape, *out = &dot->shape;
  *why = "a dot that is not f32 throughout";
  if (lhs->type != TYPE_F32 || rhs->type != TYPE_F32 || out->type != TYPE_F32) return false;
  const DotDims *dd = attrs_dot(&dot->attrs);
  int64_t lfree[AXLE_MAX_RANK], rfree[AXLE_MAX_RANK], ob[AXLE_MAX_RANK], om[AXLE_MAX_RANK], on[AXLE_MAX_RANK];
  int nb = dd->lhs_batch.count;
  int nm = dims_free(lhs->rank, &dd->lhs_batch, &dd->lhs_contracting, lfree);
  int nn = dims_free(rhs->rank, &dd->rhs_batch, &dd->rhs_contracting, rfree);
  dims_range(ob, 0, nb);
  dims_range(om, nb, nm);
  dims_range(on, nb + nm, nn);
  memset(g, 0, sizeof *g);
  int64_t e, unused, cn_stride;
  *why = "a dot whose dimensions do not map to GEMM strides";
  return dims_merge(lhs, dd->lhs_batch.values, nb, &g->batch, &g->a_batch_stride) &&
         dims_merge(rhs, dd->rhs_batch.values, nb, &e, &g->b_batch_stride) &&
         dims_merge(lhs, lfree, nm, &g->m, &g->a_row_stride) &&
         dims_merge(rhs, rfree, nn, &g->n, &g->b_col_stride) &&
         dims_merge(lhs, dd->lhs_contracting.values, dd->lhs_contracting.count, &g->k, &g->a_col_stride) &&
         dims_merge(rhs, dd->rhs_contracting.values, dd->rhs_contracting.count, &e, &g->b_row_stride) &&
         dims_merge(out, ob, nb, &e, &g->c_batch_stride) && dims_merge(out, om, nm, &e, &g->c_row_stride) &&
         dims_merge(out, on, nn, &unused, &cn_stride) && (g->n <= 1 || cn_stride == 1);
}

/* A GEMM step computing dot (inst names it in messages) from the bindings
 * lhs and rhs into out. */
static bool add_dot_step(CpuCompile *c, const Instruction *inst, const Instruction *dot, int lhs, int rhs, int out) {
  GemmProblem g;
  const char *why;
  if (!dot_problem(dot, &g, &why)) return refuse(c, inst, why);
  if (lhs < 0 || rhs < 0 || out < 0) return refuse(c, inst, "a dot operand the plan does not place");
  if (!c->p->gemm) {
    c->p->gemm = gemm_plan_create(&c->p->cpu, c->st);
    if (!c->p->gemm) return false;
  }
  if (shape_element_count(&dot->shape) == 0) return true;  /* nothing to write */
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_DOT, inst, 3);
  s->dot = g;
  s->buffers[0] = lhs;
  s->buffers[1] = rhs;
  s->buffers[2] = out;
  return true;
}

static bool compile_dot(CpuCompile *c, const Instruction *inst) {
  return add_dot_step(c, inst, inst, binding_of(c, inst->operands[0], 0), binding_of(c, inst->operands[1], 0),
                      binding_of(c, inst, 0));
}

/* The binding of an operand of a fused dot: a parameter of the fused
 * computation is the fusion's operand; anything else is computed inside. */
static int fused_operand_binding(const CpuCompile *c, const Instruction *fusion, const Instruction *operand) {
  if (operand->opcode != OP_PARAMETER) return -1;
  int64_t n = operand->attrs.parameter_number;
  if (n < 0 || n >= fusion->operand_count) return -1;
  return binding_of(c, fusion->operands[n], 0);
}

/* An output fusion: its dot through the GEMM into a temporary placed after
 * the plan's block, then the rest of the fused computation as a loop kernel
 * that reads the product. */
static bool compile_output_fusion(CpuCompile *c, const Instruction *fusion) {
  const Computation *body = fusion->called[0];
  const Instruction *dot = NULL;
  for (int i = 0; i < body->instruction_count; i++) {
    const Instruction *inst = body->instructions[i];
    if (inst->opcode != OP_DOT) continue;
    if (dot) return refuse(c, fusion, "an output fusion with more than one dot");
    dot = inst;
  }
  if (!dot) return refuse(c, fusion, "an output fusion around an op other than a dot");
  int lhs = fused_operand_binding(c, fusion, dot->operands[0]);
  int rhs = fused_operand_binding(c, fusion, dot->operands[1]);
  if (lhs < 0 || rhs < 0) return refuse(c, fusion, "an output fusion whose dot reads values computed inside it");
  if (c->product_binding < 0) {
    CpuBinding product = {.kind = BINDING_TEMP};  /* offset: cpu_compile_program */
    c->product_binding = cpu_program_add_binding(c->p, &product);
  }
  if (shape_byte_size(&dot->shape) > c->product_bytes) c->product_bytes = shape_byte_size(&dot->shape);
  int out = c->product_binding;
  return add_dot_step(c, fusion, dot, lhs, rhs, out) && compile_kernel(c, fusion, dot, out);
}

/* ---- the walk ---- */

static bool compile_instruction(CpuCompile *c, const Instruction *inst) {
  switch (inst->opcode) {
  case OP_PARAMETER:
  case OP_CONSTANT:
  case OP_TUPLE:
  case OP_GET_TUPLE_ELEMENT:
  case OP_BITCAST:
    return true;  /* storage only: the plan names it */
  case OP_DOT:
    return compile_dot(c, inst);
  case OP_FUSION:
    if (inst->attrs.fusion_kind == FUSION_OUTPUT) return compile_output_fusion(c, inst);
    if (inst->attrs.fusion_kind == FUSION_CUSTOM) return refuse(c, inst, "a custom fusion");
    return compile_kernel(c, inst, NULL, -1);
  default:
    if (opcode_form(inst->opcode) == FORM_OTHER && opcode_cost(inst->opcode) == COST_CONTROL)
      return refuse(c, inst, NULL);
    return compile_kernel(c, inst, NULL, -1);
  }
}

static bool cpu_compile_program(CpuCompile *c) {
  for (int i = 0; i < c->p->plan->slot_count; i++)
    if (!bind_slot(c, &c->p->plan->slots[i])) return false;
  if (!bind_result(c)) return false;
  for (int i = 0; i < c->entry->instruction_count; i++)
    if (!compile_instruction(c, c->entry->instructions[i])) return false;
  if (c->product_binding >= 0)
    c->p->bindings[c->product_binding].offset = cpu_program_reserve_temp(c->p, c->product_bytes);
  return true;
}

static bool cpu_compile(Executable *exe, Status *st) {
  exe->program = NULL;
  const Module *m = executable_module_to_run(exe);
  if (!exe->plan)
    return status_error(st, STATUS_UNSUPPORTED,
                        "the CPU backend compiles optimized modules only (drop --no-opt)");
  if (!eval_check_supported(m, st)) return false;
  CpuProgram *p = cpu_program_create(exe->plan, &m->entry->root->shape, exe->threads);
  CpuCompile c = {.p = p, .m = m, .entry = m->entry, .st = st, .product_binding = -1};
  bool ok = cpu_features_detect(&p->cpu, st);
  if (ok && p->cpu.level == CPU_LEVEL_NONE)
    ok = status_error(st, STATUS_UNSUPPORTED, "the CPU backend needs SSE4.1, which this machine lacks");
  if (ok) ok = cpu_compile_program(&c);
  if (!ok) {
    cpu_program_free(p);
    return false;
  }
  exe->program = p;
  return true;
}

static HostBuffer *cpu_run(const Executable *exe, HostBuffer *const *args, int arg_count, Status *st) {
  return cpu_program_run(exe->program, args, arg_count, st);
}

static void cpu_free_program(void *program) { cpu_program_free(program); }

const Backend backend_cpu = {
    .name = "cpu",
    .optimizes = true,
    .compile = cpu_compile,
    .run = cpu_run,
    .free_program = cpu_free_program,
};
