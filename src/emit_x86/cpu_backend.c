/* The CPU backend's entry in the backend table (src/runtime/backend.h).
 *
 * compile walks the optimized entry computation (executable_module_to_run)
 * in its scheduled order and turns each instruction into a step of a
 * CpuProgram (cpu_program.h): parameters, constants, tuples,
 * get-tuple-elements and bitcasts take none (their storage is named by the
 * buffer plan); fusions and unfused elementwise, data-movement and reduce
 * ops are lowered to kernels (src/opt/lower.c) and compiled to x86-64
 * (kernel_x86.h); an unfused f32 dot is a call of the blocked GEMM
 * (gemm.h); while, conditional and the like run computations compiled
 * by the same walk into programs of their own (cpu_compile_called,
 * cpu_control.c). Anything else is a compile error that names the instruction
 * and its JAX source line: "must compile" — never a silent fallback to the
 * interpreter. run is cpu_program_run. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "opt/lower.h"
#include "runtime/backend.h"


/* The one message for everything the backend cannot compile, located at
 * the instruction; why (may be NULL) says what stopped it. */
bool cpu_refuse(CpuCompile *c, const Instruction *inst, const char *why) {
  return backend_refuse(c->st, c->m, inst, "CPU", why, " (the interpreter, --backend interp, runs it)");
}

/* ---- storage ---- */

/* The binding of instruction inst's leaf (bindings 0.. are the plan's
 * slots, in order), following aliases to the slot that owns the storage. */
int cpu_binding_of(const CpuCompile *c, const Instruction *inst, int leaf) {
  const BufferPlan *plan = c->p->plan;
  const BufferSlot *s = buffer_plan_find(plan, inst, leaf);
  if (s && s->kind == BUFFER_ALIAS) s = buffer_plan_find(plan, s->source, s->source_index);
  return s ? (int)(s - plan->slots) : -1;
}

static bool bind_slot(CpuCompile *c, const BufferSlot *s) {
  CpuBinding b = {.kind = BINDING_NONE, .leaf = s->output_index, .number = s->parameter_number};
  bool relayout = s->shape && !shape_is_tuple(s->shape) && !shape_is_row_major(s->shape);
  if (relayout && s->shape->element_size_bits)
    return cpu_refuse(c, s->inst, "a packed layout (E(n))");
  if (s->kind == BUFFER_PARAMETER) {
    b.kind = BINDING_PARAMETER;
    for (int64_t k = 0; k < s->parameter_number; k++) b.leaf += shape_leaf_count(&c->entry->parameters[k]->shape);
    /* A called computation's parameters are its caller's values, already
     * in the layouts their shapes name: no copy between layouts. */
    if (relayout && !c->called) {
      b.layout = s->shape;
      b.offset = cpu_program_reserve_temp(c->p, s->size);
    }
  } else if (s->kind == BUFFER_CONSTANT) {
    int64_t leaf = s->output_index;
    const Literal *lit = s->inst->attrs.literal ? literal_leaf(s->inst->attrs.literal, &leaf) : NULL;
    if (!lit) return cpu_refuse(c, s->inst, "a constant without a value for this leaf");
    size_t bytes = (size_t)shape_byte_size(&lit->shape);
    b.kind = BINDING_CONSTANT;
    b.bytes = (int64_t)bytes;
    b.data = mem_malloc(bytes ? bytes : 1);
    if (!b.data) return status_error(c->st, STATUS_OUT_OF_MEMORY, "out of memory: a constant of %zu bytes", bytes);
    if (relayout) host_buffer_relayout_copy(s->shape, lit->data, b.data, true);
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

static int shape_leaves(const Shape *s) {
  if (!shape_is_tuple(s)) return 1;
  int n = 0;
  for (int i = 0; i < s->tuple_count; i++) n += shape_leaves(&s->tuple_shapes[i]);
  return n;
}

/* Leaf `leaf` (depth first) of shape s. */
static const Shape *shape_leaf(const Shape *s, int leaf) {
  for (int i = 0; shape_is_tuple(s) && i < s->tuple_count; i++) {
    int n = shape_leaves(&s->tuple_shapes[i]);
    if (leaf < n) return shape_leaf(&s->tuple_shapes[i], leaf);
    leaf -= n;
  }
  return s;
}

/* Points each leaf of the root at its place in the result: the first root
 * leaf an OUTPUT slot reaches is written in place; every other leaf (a
 * parameter, a constant, a value returned twice) is copied at the end. */
static bool bind_result(CpuCompile *c) {
  const Instruction *root = c->entry->root;
  const BufferPlan *plan = c->p->plan;
  int leaves = 0;
  while (buffer_plan_find(plan, root, leaves)) leaves++;
  c->p->copies = mem_calloc((size_t)leaves + 1, sizeof *c->p->copies);
  for (int l = 0; l < leaves; l++) {
    int b = cpu_binding_of(c, root, l);
    if (b < 0) return cpu_refuse(c, root, "a result leaf without storage");
    CpuBinding *bind = &c->p->bindings[b];
    /* The root's leaf names the storage's bytes in its own shape (a bitcast
     * may have changed the layout; the optimizer's layout-copies made every
     * forward name its value's layout): that is the layout to read them in. */
    const Shape *shape = shape_leaf(&root->shape, l);
    bool row_major = (c->called && !shape->element_size_bits) || shape_is_row_major(shape);
    if (!row_major && shape->element_size_bits) return cpu_refuse(c, root, "a result in a packed layout (E(n))");
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

static CompiledKernel *kernel_memo_find(const CpuCompile *c, const Kernel *k, uint64_t hash) {
  if (!c->memo_slot_count) return NULL;
  int mask = c->memo_slot_count - 1;
  for (int at = (int)(hash & (uint64_t)mask); c->memo_slots[at]; at = (at + 1) & mask) {
    const CpuKernelMemo *e = &c->memo[c->memo_slots[at] - 1];
    if (e->hash == hash && kernel_same_code(e->kernel, k)) return e->compiled;
  }
  return NULL;
}

static void kernel_memo_place(CpuCompile *c, int index) {
  int mask = c->memo_slot_count - 1;
  int at = (int)(c->memo[index].hash & (uint64_t)mask);
  while (c->memo_slots[at]) at = (at + 1) & mask;
  c->memo_slots[at] = index + 1;
}

/* Takes k. */
static void kernel_memo_add(CpuCompile *c, Kernel *k, CompiledKernel *ck, uint64_t hash) {
  if (2 * (c->memo_count + 1) > c->memo_slot_count) {
    mem_free(c->memo_slots);
    c->memo_slot_count = c->memo_slot_count ? 2 * c->memo_slot_count : 64;
    c->memo_slots = mem_calloc((size_t)c->memo_slot_count, sizeof *c->memo_slots);
    c->memo = mem_realloc(c->memo, sizeof *c->memo * (size_t)(c->memo_slot_count / 2));
    for (int i = 0; i < c->memo_count; i++) kernel_memo_place(c, i);
  }
  c->memo[c->memo_count] = (CpuKernelMemo){.kernel = k, .compiled = ck, .hash = hash};
  kernel_memo_place(c, c->memo_count++);
}

void cpu_compile_memo_free(CpuCompile *c) {
  for (int i = 0; i < c->memo_count; i++) kernel_free(c->memo[i].kernel);
  mem_free(c->memo);
  mem_free(c->memo_slots);
  c->memo = NULL;
  c->memo_slots = NULL;
  c->memo_count = c->memo_slot_count = 0;
}

/* k's code: an earlier kernel's when it compiles alike (*kept false), else
 * compiled now, and then the memo keeps k (*kept true). */
static CompiledKernel *kernel_compile_once(CpuCompile *c, Kernel *k, bool *kept, Status *why) {
  *kept = false;
  kernel_x86_schedule(k, &c->p->cpu); /* before comparing: kernels scheduled apart compile apart */
  if (c->p->listings) return kernel_x86_compile_listed(k, &c->p->cpu, true, why);
  uint64_t hash = kernel_code_hash(k);
  CompiledKernel *ck = kernel_memo_find(c, k, hash);
  if (ck) return kernel_x86_share(ck);
  ck = kernel_x86_compile_listed(k, &c->p->cpu, false, why);
  if (ck) {
    kernel_memo_add(c, k, ck, hash);
    *kept = true;
  }
  return ck;
}

/* A kernel for inst; with `computed` (an output fusion's dot), the
 * epilogue that reads the dot's product from binding computed_binding. */
bool cpu_compile_kernel(CpuCompile *c, const Instruction *inst, const Instruction *computed, int computed_binding) {
  for (int i = 0; i < inst->operand_count; i++)
    if (shape_is_tuple(&inst->operands[i]->shape)) return cpu_refuse(c, inst, "a tuple-shaped operand");
  Status why = {0};
  Kernel *k = computed ? lower_epilogue(inst, computed, &why) : lower_to_kernel(inst, &why);
  bool kept = false;
  CompiledKernel *ck = k ? kernel_compile_once(c, k, &kept, &why) : NULL;
  if (!ck) {
    kernel_free(k);
    return cpu_refuse(c, inst, why.message);
  }
  CpuStep *s = cpu_program_add_step(c->p, CPU_STEP_KERNEL, inst, k->input_count + k->output_count);
  s->kernel = ck;
  bool ok = true;
  for (int i = 0; i < k->input_count && ok; i++) {
    const KernelBuffer *in = &k->inputs[i];
    if (in->constant) {
      if (in->shape.element_size_bits) ok = cpu_refuse(c, inst, "a fused constant in a packed layout (E(n))");
      size_t bytes = (size_t)shape_byte_size(&in->constant->shape);
      CpuBinding b = {.kind = BINDING_CONSTANT, .data = mem_calloc(bytes ? bytes : 1, 1), .bytes = (int64_t)bytes};
      if (!shape_is_row_major(&in->shape))
        host_buffer_relayout_copy(&in->shape, in->constant->data, b.data, true);
      else if (bytes) memcpy(b.data, in->constant->data, bytes);
      s->buffers[i] = cpu_program_add_binding(c->p, &b);
    } else if (computed && in->source == computed) {
      s->buffers[i] = computed_binding;
    } else {
      s->buffers[i] = cpu_binding_of(c, in->source, 0);
    }
  }
  for (int o = 0; o < k->output_count && ok; o++)
    s->buffers[k->input_count + o] = cpu_binding_of(c, inst, k->outputs[o].output_index);
  for (int i = 0; i < s->buffer_count && ok; i++)
    if (s->buffers[i] < 0) ok = cpu_refuse(c, inst, "a kernel buffer the plan does not place");
  if (!kept) kernel_free(k);
  return ok;
}

/* ---- the walk ---- */

/* A fusion is one kernel. XLA's own fusions may hold what no kernel
 * computes (a scatter, outputs of several shapes): such a fusion runs its
 * computation as a program of its own steps, as a call does. */
static bool compile_fusion(CpuCompile *c, const Instruction *fusion) {
  Status why = {0};
  Kernel *k = lower_to_kernel(fusion, &why);
  if (!k) return why.code == STATUS_UNSUPPORTED ? cpu_compile_call(c, fusion) : cpu_refuse(c, fusion, why.message);
  kernel_free(k);
  return cpu_compile_kernel(c, fusion, NULL, -1);
}

static bool compile_instruction(CpuCompile *c, const Instruction *inst) {
  switch (inst->opcode) {
  case OP_PARAMETER:
  case OP_CONSTANT:
  case OP_TUPLE:
  case OP_GET_TUPLE_ELEMENT:
  case OP_BITCAST:
    return true;  /* storage only: the plan names it */
  case OP_DOT:
    return cpu_compile_dot(c, inst);
  case OP_SCATTER: return cpu_compile_scatter(c, inst);
  case OP_SELECT_AND_SCATTER: return cpu_compile_select_and_scatter(c, inst);
  case OP_SORT: return cpu_compile_sort(c, inst);
  case OP_TOPK: return cpu_compile_topk(c, inst);
  case OP_FFT: return cpu_compile_fft(c, inst);
  case OP_CHOLESKY: return cpu_compile_cholesky(c, inst);
  case OP_TRIANGULAR_SOLVE: return cpu_compile_triangular_solve(c, inst);
  case OP_CUSTOM_CALL: return cpu_compile_custom_call(c, inst);
  case OP_CONVOLUTION: return cpu_compile_convolution(c, inst);
  case OP_SCALED_DOT: return cpu_compile_scaled_dot(c, inst);
  case OP_RAGGED_DOT: return cpu_compile_ragged_dot(c, inst);
  case OP_WHILE: return cpu_compile_while(c, inst);
  case OP_CONDITIONAL: return cpu_compile_conditional(c, inst);
  case OP_CALL: return cpu_compile_call(c, inst);
  case OP_ASYNC_START: return cpu_compile_async_start(c, inst);
  case OP_RAGGED_ALL_TO_ALL: return cpu_compile_ragged_all_to_all(c, inst);
  case OP_MAP: return cpu_compile_map(c, inst);
  case OP_SCAN: return cpu_compile_scan(c, inst);
  case OP_RNG_BIT_GENERATOR: return cpu_compile_rng_bit_generator(c, inst);
  case OP_RNG: return cpu_compile_rng(c, inst);
  case OP_ALL_REDUCE: case OP_ALL_GATHER: case OP_REDUCE_SCATTER: case OP_COLLECTIVE_PERMUTE: case OP_ALL_TO_ALL:
  case OP_COLLECTIVE_BROADCAST: case OP_ALL_REDUCE_START: case OP_ALL_GATHER_START: case OP_COLLECTIVE_PERMUTE_START:
  case OP_REPLICA_ID: case OP_PARTITION_ID:
    if (c->across_devices) return cpu_compile_collective(c, inst);
    return cpu_compile_forward(c, inst);
  case OP_ASYNC_UPDATE: case OP_ASYNC_DONE: case OP_ADD_DEPENDENCY: case OP_DOMAIN: case OP_AFTER_ALL:
  case OP_OPTIMIZATION_BARRIER: case OP_COLLECTIVE_REDUCE:
  case OP_ALL_REDUCE_DONE: case OP_ALL_GATHER_DONE:
  case OP_COLLECTIVE_PERMUTE_DONE: case OP_COPY_START: case OP_COPY_DONE:
  case OP_GET_DIMENSION_SIZE: case OP_SET_DIMENSION_SIZE:
  case OP_DYNAMIC_RESHAPE: return cpu_compile_forward(c, inst);
  case OP_FUSION:
    if (inst->attrs.fusion_kind == FUSION_OUTPUT || cpu_fusion_has_product(inst))
      return cpu_compile_output_fusion(c, inst);
    if (inst->attrs.fusion_kind == FUSION_CUSTOM) return cpu_compile_call(c, inst);
    return compile_fusion(c, inst);
  default:
    if (opcode_form(inst->opcode) == FORM_OTHER && opcode_cost(inst->opcode) == COST_CONTROL)
      return cpu_refuse(c, inst, NULL);
    return cpu_compile_kernel(c, inst, NULL, -1);
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

CpuProgram *cpu_compile_called(CpuCompile *c, const Computation *comp) {
  BufferPlan *plan = buffer_plan_create(comp);
  CpuProgram *p = cpu_program_create(plan, &comp->root->shape, 1);
  p->owned_plan = plan;
  p->cpu = c->p->cpu;
  p->listings = c->p->listings;
  CpuCompile inner = {.p = p, .m = c->m, .entry = comp, .st = c->st, .product_binding = -1, .called = true,
                      .across_devices = c->across_devices};
  bool ok = cpu_compile_program(&inner);
  cpu_compile_memo_free(&inner);
  if (!ok) {
    cpu_program_free(p);
    return NULL;
  }
  return p;
}

static bool cpu_compile(Executable *exe, Status *st) {
  exe->program = NULL;
  const Module *m = executable_module_to_run(exe);
  if (!exe->plan)
    return status_error(st, STATUS_UNSUPPORTED,
                        "the CPU backend compiles optimized modules only (drop --no-opt)");
  if (!eval_check_supported_on(m, exe->replica_count, exe->partition_count, st)) return false;
  CpuProgram *p = cpu_program_create(exe->plan, &m->entry->root->shape, exe->threads);
  p->listings = exe->listings;
  CpuCompile c = {.p = p, .m = m, .entry = m->entry, .st = st, .product_binding = -1,
                  .across_devices = exe->replica_count * exe->partition_count > 1};
  bool ok = true;
  if (exe->cpu_level) cpu_features_for_level(&p->cpu, (CpuLevel)exe->cpu_level);
  else ok = cpu_features_detect(&p->cpu, st);
  if (ok && p->cpu.level == CPU_LEVEL_NONE)
    ok = status_error(st, STATUS_UNSUPPORTED, "the CPU backend needs SSE4.1, which this machine lacks");
  if (ok) ok = cpu_compile_program(&c);
  cpu_compile_memo_free(&c);
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

static bool cpu_run_into(const Executable *exe, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                         Status *st) {
  return cpu_program_run_into(exe->program, args, arg_count, result_leaves, NULL, NULL, st);
}

static HostBuffer *cpu_run_observed(const Executable *exe, HostBuffer *const *args, int arg_count,
                                    StepObserver *observe, void *context, Status *st) {
  return cpu_program_run_observed(exe->program, args, arg_count, observe, context, st);
}

static void cpu_free_program(void *program) { cpu_program_free(program); }

static bool cpu_dump(const Executable *exe, const char *dir, Status *st) {
  return cpu_program_dump(exe->program, executable_module_to_run(exe), dir, st);
}

const Backend backend_cpu = {
    .name = "cpu",
    .optimizes = true,
    .compile = cpu_compile,
    .run = cpu_run,
    .run_into = cpu_run_into,
    .free_program = cpu_free_program,
    .run_observed = cpu_run_observed,
    .dump = cpu_dump,
};
