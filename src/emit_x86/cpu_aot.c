/* The CPU backend's program as an ELF relocatable object (cpu_aot.h).
 *
 * NAME_run is generated with axle's assembler. Its frame (System V):
 *
 *   rbx  params   r12  results   r13  temp      (callee-saved: they survive
 *                                               every kernel call)
 *   [rsp + 8*i]  the buffer addresses of the step being called, as
 *                kernel_x86's ABI reads them (void *const *buffers)
 *
 * Per step it does what step_run does in cpu_program.c: for a kernel, its
 * buffers' addresses on the stack, then kernel(buffers, 0, all rows); for a
 * dot, the loop of the GEMM's direct path (gemm.c, direct_task_run) in
 * scalar code, the same multiplies and adds in the same order, so the same
 * bits. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_aot.h"
#include "emit_x86/cpu_compile.h"
#include "emit_x86/elf_writer.h"
#include "runtime/backend.h"

/* gemm.c's threshold for its direct path (GEMM_DIRECT_VOLUME): products
 * smaller than this, or with K = 0, run the plain loop written below. */
enum { AOT_DIRECT_VOLUME = 32 * 32 * 32 };

/* A rip-relative field to relocate: the disp32 at `at` in .text, aimed at
 * `target` bytes into section. Every such field is the instruction's last
 * four bytes, so the addend is target - 4. */
typedef struct AotReference {
  size_t at;
  ElfSectionId section;
  uint64_t target;
} AotReference;

typedef struct Aot {
  const CpuProgram *p;
  const Module *m;
  const CpuAotOptions *o;
  Status *st;
  X86Buffer cb;
  ElfWriter *elf;
  uint64_t *constant_at;          /* per binding: its offset in .rodata */
  AotReference *refs;
  size_t ref_count, ref_capacity;
  X86Label *kernel_labels, *combine_labels;  /* per step */
  int *code_owner;                /* per step: the first step with the same kernel code */
  X86Label check, fail_cpu, fail_argument;
  X86Label task;                  /* the parallel-for's task: TaskContext's rows of a kernel */
  int32_t context_at, parallel_for_at, runner_at;  /* in NAME_run's frame */
  uint64_t parallel_entry;        /* NAME_run_parallel's offset in .text */
  int64_t temp_bytes;             /* the program's (split sums' chunks included: a binding each) */
  int parameter_leaves, result_leaves;
} Aot;

static X86Operand reg(X86Reg r) { return x86_reg(r); }
#define EMIT(...) x86_emit(&a->cb, __VA_ARGS__)

static bool identifier_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool cpu_aot_name_valid(const char *name) {
  if (!name || !identifier_start(name[0]) || strlen(name) >= 200) return false;
  for (const char *c = name; *c; c++)
    if (!identifier_start(*c) && !(*c >= '0' && *c <= '9')) return false;
  return true;
}

static bool aot_refuse(Aot *a, const Instruction *inst, const char *why) {
  return backend_refuse(a->st, a->m, inst, "ahead-of-time CPU", why,
                        " (axle-run runs it; docs/aot.md lists what axle-aot refuses)");
}

/* ---- checking that every step fits in an object ---- */

static bool dot_is_direct(const GemmProblem *d) {
  if (d->batch == 0 || d->m == 0 || d->n == 0 || d->k == 0) return true;
  return (double)d->m * (double)d->n * (double)d->k < AOT_DIRECT_VOLUME && !d->a_pack;
}

static bool fits_int32(int64_t v) { return v >= -(int64_t)INT32_MAX && v <= INT32_MAX; }

/* The byte strides of the direct loop are immediates. */
static bool dot_fits_immediates(const GemmProblem *d) {
  const int64_t v[] = {d->m,
                       d->n,
                       4 * d->a_row_stride,
                       4 * d->a_col_stride,
                       4 * d->a_batch_stride,
                       4 * d->b_row_stride,
                       4 * d->b_col_stride,
                       4 * d->b_batch_stride,
                       4 * d->c_row_stride,
                       4 * d->c_batch_stride};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (!fits_int32(v[i])) return false;
  return true;
}

/* The instruction a plan slot's binding stands for (bindings 0.. are the
 * plan's slots), for a refusal's location. */
static const Instruction *binding_instruction(const Aot *a, int binding) {
  const BufferPlan *plan = a->p->plan;
  return binding < plan->slot_count ? plan->slots[binding].inst : NULL;
}

/* What a step computes, as the object runs it: a dot (the GEMM's problem)
 * and then a kernel over its buffers from first_buffer on, either of them
 * NULL. False for a step that is a routine in C. */
typedef struct AotStep {
  const GemmProblem *dot;
  const CompiledKernel *kernel;
  int first_buffer;
  int copy_count;               /* or copies of leaves, copy_bytes[i] from buffer 2i to 2i+1 */
  const int64_t *copy_bytes;
} AotStep;

static bool step_parts(const CpuStep *s, AotStep *out) {
  *out = (AotStep){0};
  if (s->kind == CPU_STEP_KERNEL) out->kernel = s->kernel;
  else if (s->kind == CPU_STEP_DOT) out->dot = &s->dot;
  else if (cpu_fused_dot_parts(s, &out->dot, &out->kernel)) out->first_buffer = 3;
  else if (!cpu_leaf_copies_parts(s, &out->copy_count, &out->copy_bytes)) return false;
  return true;
}

static bool check_program(Aot *a) {
  const CpuProgram *p = a->p;
  for (int i = 0; i < p->step_count; i++) {
    const CpuStep *s = &p->steps[i];
    AotStep parts;
    if (!step_parts(s, &parts))
      return aot_refuse(a, s->inst, "it runs as a runtime routine in C (a CPU_STEP_CALL), which an object "
                                    "cannot carry yet");
    if (parts.dot && !dot_is_direct(parts.dot))
      return aot_refuse(a, s->inst, "a product of 32768 or more multiply-adds takes the blocked GEMM, whose "
                                    "packing runs in C; only the GEMM's direct path is generated code");
    if (parts.dot && !dot_fits_immediates(parts.dot))
      return aot_refuse(a, s->inst, "a dot whose strides pass 2 GiB");
  }
  for (int b = 0; b < p->binding_count; b++) {
    const CpuBinding *bind = &p->bindings[b];
    if (bind->kind == BINDING_PARAMETER && bind->layout) {
      const Instruction *inst = binding_instruction(a, b);
      return inst ? aot_refuse(a, inst, "a parameter in a layout other than row-major (the JIT copies it "
                                        "between layouts in C)")
                  : status_error(a->st, STATUS_UNSUPPORTED, "a parameter in a layout other than row-major");
    }
  }
  for (int i = 0; i < p->copy_count; i++)
    if (p->copies[i].layout)
      return aot_refuse(a, a->m->entry->root,
                        "a result in a layout other than row-major (the JIT copies it between layouts in C)");
  return true;
}

/* ---- the layout of the object ---- */

static void reference_add(Aot *a, ElfSectionId section, uint64_t target) {
  if (a->ref_count == a->ref_capacity) {
    a->ref_capacity = a->ref_capacity ? 2 * a->ref_capacity : 64;
    a->refs = mem_realloc(a->refs, a->ref_capacity * sizeof *a->refs);
  }
  a->refs[a->ref_count++] = (AotReference){.at = a->cb.size - 4, .section = section, .target = target};
}

static void place_constants(Aot *a) {
  const CpuProgram *p = a->p;
  a->constant_at = mem_calloc((size_t)p->binding_count + 1, sizeof *a->constant_at);
  for (int b = 0; b < p->binding_count; b++) {
    const CpuBinding *bind = &p->bindings[b];
    if (bind->kind != BINDING_CONSTANT) continue;
    /* an empty constant still gets an address of its own, as malloc gives one */
    size_t bytes = bind->bytes > 0 ? (size_t)bind->bytes : 1;
    a->constant_at[b] = elf_append(a->elf, ELF_SECTION_RODATA, bind->bytes > 0 ? bind->data : NULL, bytes, 64);
  }
}

/* ---- NAME_run ---- */

/* dst = temp + offset */
static void temp_address(Aot *a, X86Reg dst, int64_t offset) {
  if (fits_int32(offset)) {
    EMIT(X86_LEA, reg(dst), x86_mem(8, X86_R13, (int32_t)offset));
    return;
  }
  EMIT(X86_MOV, reg(dst), x86_imm(offset));
  EMIT(X86_ADD, reg(dst), reg(X86_R13));
}

/* dst = the address of binding b, as binding_address gives it in cpu_program.c. */
static void binding_load(Aot *a, int b, X86Reg dst) {
  const CpuBinding *bind = &a->p->bindings[b];
  switch (bind->kind) {
  case BINDING_PARAMETER: EMIT(X86_MOV, reg(dst), x86_mem(8, X86_RBX, (int32_t)(8 * bind->leaf))); return;
  case BINDING_OUTPUT: EMIT(X86_MOV, reg(dst), x86_mem(8, X86_R12, (int32_t)(8 * bind->leaf))); return;
  case BINDING_TEMP: temp_address(a, dst, bind->offset); return;
  case BINDING_CONSTANT:
    EMIT(X86_LEA, reg(dst), x86_mem_rip(8, 0));
    reference_add(a, ELF_SECTION_RODATA, a->constant_at[b]);
    return;
  case BINDING_NONE: break;
  }
  EMIT(X86_XOR, reg(x86_gpr(X86_KIND_GPR32, x86_reg_number(dst))), reg(x86_gpr(X86_KIND_GPR32, x86_reg_number(dst))));
}

/* The kernel's buffers, s's from `first` on, at [rsp], [rsp + 8] ... */
static void buffers_store(Aot *a, const CpuStep *s, int first) {
  for (int i = first; i < s->buffer_count; i++) {
    binding_load(a, s->buffers[i], X86_RAX);
    EMIT(X86_MOV, x86_mem(8, X86_RSP, 8 * (i - first)), reg(X86_RAX));
  }
}

/* The caller's parallel-for (NAME_run_parallel) runs a kernel's rows as
 * tasks of the JIT's size (kernel_x86.c: about 16K elements each; a split
 * sum, one chunk each): every task is `task(context, index)`, the
 * trampoline emitted by task_emit, reading the frame's TaskContext
 *   +0 buffers   +8 the kernel   +16 rows per task   +24 rows
 * Rows are independent, so any order on any threads gives one thread's
 * bytes. Without a parallel-for, or with one task, the kernel runs here. */
enum { ELEMENTS_PER_TASK = 1 << 14, TASK_CONTEXT_BYTES = 32 };

static void kernel_call_emit(Aot *a, X86Label function, int64_t rows);

static void kernel_tasks_emit(Aot *a, X86Label function, int64_t rows, int64_t rows_per_task) {
  int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  X86Label serial = x86_label_new(&a->cb), done = x86_label_new(&a->cb);
  EMIT(X86_MOV, reg(X86_RAX), x86_mem(8, X86_RSP, a->parallel_for_at));
  EMIT(X86_TEST, reg(X86_RAX), reg(X86_RAX));
  EMIT(X86_JE, x86_rel(serial));
  EMIT(X86_MOV, x86_mem(8, X86_RSP, a->context_at), reg(X86_RSP));
  EMIT(X86_LEA, reg(X86_RCX), x86_mem_label(8, function));
  EMIT(X86_MOV, x86_mem(8, X86_RSP, a->context_at + 8), reg(X86_RCX));
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(rows_per_task));
  EMIT(X86_MOV, x86_mem(8, X86_RSP, a->context_at + 16), reg(X86_RCX));
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(rows));
  EMIT(X86_MOV, x86_mem(8, X86_RSP, a->context_at + 24), reg(X86_RCX));
  /* parallel_for(runner, tasks, task, context) */
  EMIT(X86_MOV, reg(X86_RDI), x86_mem(8, X86_RSP, a->runner_at));
  EMIT(X86_MOV, reg(X86_RSI), x86_imm(tasks));
  EMIT(X86_LEA, reg(X86_RDX), x86_mem_label(8, a->task));
  EMIT(X86_LEA, reg(X86_RCX), x86_mem(8, X86_RSP, a->context_at));
  EMIT(X86_CALL, reg(X86_RAX));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(&a->cb, serial);
  kernel_call_emit(a, function, rows);
  x86_label_bind(&a->cb, done);
}

/* void task(void *context, int64_t index): rows [index * per_task, + per_task)
 * of the context's kernel, the last task's cut at its rows; a tail call. */
static void task_emit(Aot *a) {
  x86_label_bind(&a->cb, a->task);
  EMIT(X86_MOV, reg(X86_RAX), x86_mem(8, X86_RDI, 16));
  EMIT(X86_IMUL, reg(X86_RSI), reg(X86_RAX));
  EMIT(X86_MOV, reg(X86_RDX), x86_mem(8, X86_RDI, 24));
  EMIT(X86_SUB, reg(X86_RDX), reg(X86_RSI));
  EMIT(X86_CMP, reg(X86_RDX), reg(X86_RAX));
  EMIT(X86_CMOVG, reg(X86_RDX), reg(X86_RAX));
  EMIT(X86_MOV, reg(X86_RAX), x86_mem(8, X86_RDI, 8));
  EMIT(X86_MOV, reg(X86_RDI), x86_mem(8, X86_RDI, 0));
  EMIT(X86_JMP, reg(X86_RAX));
}

/* kernel(buffers = rsp, first_row = 0, row_count = rows) */
static void kernel_call_emit(Aot *a, X86Label function, int64_t rows) {
  EMIT(X86_MOV, reg(X86_RDI), reg(X86_RSP));
  EMIT(X86_XOR, reg(X86_ESI), reg(X86_ESI));
  EMIT(X86_MOV, reg(X86_RDX), x86_imm(rows));
  EMIT(X86_CALL, x86_rel(function));
}

/* rep stosb / rep movsb: not in the encoder's tables, and needed only here. */
static void rep_movsb(Aot *a) { x86_emit_bytes(&a->cb, (const uint8_t[]){0xf3, 0xa4}, 2); }

/* As kernel_x86_run on one thread: all rows in one call, which gives the
 * bytes of any split into tasks (rows are independent). A split sum runs
 * every chunk, then the fold, over its step's buffers, which end with the
 * chunks' block (a binding in the temporary, cpu_program_add_kernel_step). */
static void kernel_step_emit(Aot *a, int i, const CompiledKernel *kernel, int first_buffer) {
  const CpuStep *s = &a->p->steps[i];
  int64_t rows = kernel_x86_row_count(kernel), chunks = kernel_x86_split_chunks(kernel);
  if (rows <= 0) return;
  buffers_store(a, s, first_buffer);
  if (!chunks) {
    int64_t per_row = kernel_x86_elements_per_row(kernel) > 0 ? kernel_x86_elements_per_row(kernel) : 1;
    int64_t rows_per_task = ELEMENTS_PER_TASK / per_row > 0 ? ELEMENTS_PER_TASK / per_row : 1;
    if (rows > rows_per_task) kernel_tasks_emit(a, a->kernel_labels[i], rows, rows_per_task);
    else kernel_call_emit(a, a->kernel_labels[i], rows);
    return;
  }
  kernel_tasks_emit(a, a->kernel_labels[i], rows * chunks, 1);
  kernel_call_emit(a, a->combine_labels[i], rows);
}

/* r += bytes, left out when 0 (a stride of a broadcast operand, or of a
 * dimension of 1). */
static void pointer_advance(Aot *a, X86Reg r, int64_t bytes) {
  if (bytes) EMIT(X86_ADD, reg(r), x86_imm(bytes));
}

/* gemm.c's direct path, C[b][i][j] = sum over k of A[b][i][k] * B[b][k][j]
 * with `sum += a * b` from 0.0f in k order: mulss then addss, each
 * rounded, as the C compiles without contraction (-std=c11).
 *   rdi A, rsi B, rdx C (per batch)   r8 batches left
 *   r9 A's row, r10 C's row, rcx rows left   r11 B's column, rax j
 *   r14 A's element, r15 B's element, rbp k steps left */
static void dot_step_emit(Aot *a, const CpuStep *s, const GemmProblem *d) {
  if (d->batch == 0 || d->m == 0 || d->n == 0) return;
  binding_load(a, s->buffers[0], X86_RDI);
  binding_load(a, s->buffers[1], X86_RSI);
  binding_load(a, s->buffers[2], X86_RDX);
  X86Label batch = x86_label_new(&a->cb), row = x86_label_new(&a->cb), column = x86_label_new(&a->cb),
           step = x86_label_new(&a->cb);
  EMIT(X86_MOV, reg(X86_R8), x86_imm(d->batch));
  x86_label_bind(&a->cb, batch);
  EMIT(X86_MOV, reg(X86_R9), reg(X86_RDI));
  EMIT(X86_MOV, reg(X86_R10), reg(X86_RDX));
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(d->m));
  x86_label_bind(&a->cb, row);
  EMIT(X86_MOV, reg(X86_R11), reg(X86_RSI));
  EMIT(X86_XOR, reg(X86_EAX), reg(X86_EAX));
  x86_label_bind(&a->cb, column);
  EMIT(X86_XORPS, reg(X86_XMM0), reg(X86_XMM0));
  if (d->k > 0) {
    EMIT(X86_MOV, reg(X86_R14), reg(X86_R9));
    EMIT(X86_MOV, reg(X86_R15), reg(X86_R11));
    EMIT(X86_MOV, reg(X86_RBP), x86_imm(d->k));
    x86_label_bind(&a->cb, step);
    EMIT(X86_MOVSS, reg(X86_XMM1), x86_mem(4, X86_R14, 0));
    EMIT(X86_MULSS, reg(X86_XMM1), x86_mem(4, X86_R15, 0));
    EMIT(X86_ADDSS, reg(X86_XMM0), reg(X86_XMM1));
    pointer_advance(a, X86_R14, 4 * d->a_col_stride);
    pointer_advance(a, X86_R15, 4 * d->b_row_stride);
    EMIT(X86_DEC, reg(X86_RBP));
    EMIT(X86_JNE, x86_rel(step));
  }
  EMIT(X86_MOVSS, x86_mem_index(4, X86_R10, X86_RAX, 4, 0), reg(X86_XMM0));
  pointer_advance(a, X86_R11, 4 * d->b_col_stride);
  EMIT(X86_INC, reg(X86_RAX));
  EMIT(X86_CMP, reg(X86_RAX), x86_imm(d->n));
  EMIT(X86_JNE, x86_rel(column));
  pointer_advance(a, X86_R9, 4 * d->a_row_stride);
  pointer_advance(a, X86_R10, 4 * d->c_row_stride);
  EMIT(X86_DEC, reg(X86_RCX));
  EMIT(X86_JNE, x86_rel(row));
  pointer_advance(a, X86_RDI, 4 * d->a_batch_stride);
  pointer_advance(a, X86_RSI, 4 * d->b_batch_stride);
  pointer_advance(a, X86_RDX, 4 * d->c_batch_stride);
  EMIT(X86_DEC, reg(X86_R8));
  EMIT(X86_JNE, x86_rel(batch));
}

/* bytes from rsi to rdi, unless they are the same place (memmove's
 * semantics for the copies the JIT makes: two places are the same or
 * apart, never overlapping). */
static void bytes_copy_emit(Aot *a, int64_t bytes) {
  X86Label skip = x86_label_new(&a->cb);
  EMIT(X86_CMP, reg(X86_RSI), reg(X86_RDI));
  EMIT(X86_JE, x86_rel(skip));
  EMIT(X86_MOV, reg(X86_RCX), x86_imm(bytes));
  rep_movsb(a);
  x86_label_bind(&a->cb, skip);
}

/* A step that copies leaves (a forward: opt-barrier, a collective of one
 * replica ...), as leaf_copies_run does. */
static void leaf_copies_emit(Aot *a, const CpuStep *s, const AotStep *parts) {
  for (int i = 0; i < parts->copy_count; i++) {
    if (parts->copy_bytes[i] <= 0) continue;
    binding_load(a, s->buffers[2 * i], X86_RSI);
    binding_load(a, s->buffers[2 * i + 1], X86_RDI);
    bytes_copy_emit(a, parts->copy_bytes[i]);
  }
}

/* Result leaves stored elsewhere (a parameter, a constant, a value returned
 * twice), copied in at the end as cpu_frame_run does. */
static void result_copies_emit(Aot *a) {
  for (int i = 0; i < a->p->copy_count; i++) {
    const CpuResultCopy *c = &a->p->copies[i];
    if (c->bytes <= 0) continue;
    binding_load(a, c->binding, X86_RSI);
    EMIT(X86_MOV, reg(X86_RDI), x86_mem(8, X86_R12, 8 * c->leaf));
    bytes_copy_emit(a, c->bytes);
  }
}

/* The arguments NAME_run needs: NULL arrays only where nothing is read, a
 * temporary block where one is used, aligned as the JIT's is. */
static void arguments_check_emit(Aot *a) {
  if (a->parameter_leaves > 0) {
    EMIT(X86_TEST, reg(X86_RBX), reg(X86_RBX));
    EMIT(X86_JE, x86_rel(a->fail_argument));
  }
  if (a->result_leaves > 0) {
    EMIT(X86_TEST, reg(X86_R12), reg(X86_R12));
    EMIT(X86_JE, x86_rel(a->fail_argument));
  }
  if (a->temp_bytes > 0) {
    EMIT(X86_TEST, reg(X86_R13), reg(X86_R13));
    EMIT(X86_JE, x86_rel(a->fail_argument));
    EMIT(X86_TEST, reg(X86_R13), x86_imm(CPU_AOT_TEMP_ALIGNMENT - 1));
    EMIT(X86_JNE, x86_rel(a->fail_argument));
  }
}

static int most_buffers(const CpuProgram *p) {
  int most = 1;
  for (int i = 0; i < p->step_count; i++)
    if (p->steps[i].buffer_count + 1 > most) most = p->steps[i].buffer_count + 1;
  return most;
}

/* int NAME_run(const void *const *params, void *const *results, void *temp)
 * is NAME_run_parallel(params, results, temp, NULL, NULL): it clears the
 * last two and falls through. The ISA check runs until it has passed once
 * (a word in .bss). The frame: the buffers of a step, the TaskContext,
 * parallel_for and runner. */
static void run_emit(Aot *a) {
  static const X86Reg saved[] = {X86_RBX, X86_RBP, X86_R12, X86_R13, X86_R14, X86_R15};
  enum { SAVED = sizeof saved / sizeof saved[0] };
  a->context_at = (int32_t)(8 * most_buffers(a->p));
  a->parallel_for_at = a->context_at + TASK_CONTEXT_BYTES;
  a->runner_at = a->parallel_for_at + 8;
  /* After the return address and the six pushes rsp is 8 off a multiple
   * of 16: the frame takes the other 8 so that every call sees it aligned. */
  int32_t frame = a->runner_at + 8;
  if ((frame + 8 * (SAVED + 1)) % 16) frame += 8;
  X86Label done = x86_label_new(&a->cb), checked = x86_label_new(&a->cb);
  a->fail_cpu = x86_label_new(&a->cb);
  a->fail_argument = x86_label_new(&a->cb);
  EMIT(X86_XOR, reg(X86_ECX), reg(X86_ECX));
  EMIT(X86_XOR, reg(X86_R8D), reg(X86_R8D));
  a->parallel_entry = a->cb.size;
  for (int i = 0; i < SAVED; i++) EMIT(X86_PUSH, reg(saved[i]));
  EMIT(X86_SUB, reg(X86_RSP), x86_imm(frame));
  EMIT(X86_MOV, x86_mem(8, X86_RSP, a->parallel_for_at), reg(X86_RCX));
  EMIT(X86_MOV, x86_mem(8, X86_RSP, a->runner_at), reg(X86_R8));
  EMIT(X86_MOV, reg(X86_RBX), reg(X86_RDI));
  EMIT(X86_MOV, reg(X86_R12), reg(X86_RSI));
  EMIT(X86_MOV, reg(X86_R13), reg(X86_RDX));
  EMIT(X86_MOV, reg(X86_EAX), x86_mem_rip(4, 0));
  reference_add(a, ELF_SECTION_BSS, 0);
  EMIT(X86_TEST, reg(X86_EAX), reg(X86_EAX));
  EMIT(X86_JNE, x86_rel(checked));
  EMIT(X86_CALL, x86_rel(a->check));
  EMIT(X86_TEST, reg(X86_EAX), reg(X86_EAX));
  EMIT(X86_JNE, x86_rel(a->fail_cpu));
  EMIT(X86_MOV, reg(X86_ECX), x86_imm(1));
  EMIT(X86_MOV, x86_mem_rip(4, 0), reg(X86_ECX));
  reference_add(a, ELF_SECTION_BSS, 0);
  x86_label_bind(&a->cb, checked);
  arguments_check_emit(a);
  /* A dot with a fused epilogue: the direct path runs the epilogue on each
   * product of the batch as it is done, kernel rows b * M .. b * M + M - 1;
   * rows are independent, so all of them after the whole batch is the same. */
  for (int i = 0; i < a->p->step_count; i++) {
    AotStep parts;
    step_parts(&a->p->steps[i], &parts);
    if (parts.dot) dot_step_emit(a, &a->p->steps[i], parts.dot);
    if (parts.kernel) kernel_step_emit(a, i, parts.kernel, parts.first_buffer);
    if (parts.copy_count) leaf_copies_emit(a, &a->p->steps[i], &parts);
  }
  result_copies_emit(a);
  EMIT(X86_XOR, reg(X86_EAX), reg(X86_EAX));
  x86_label_bind(&a->cb, done);
  EMIT(X86_ADD, reg(X86_RSP), x86_imm(frame));
  for (int i = SAVED - 1; i >= 0; i--) EMIT(X86_POP, reg(saved[i]));
  x86_emit0(&a->cb, X86_RET);
  x86_label_bind(&a->cb, a->fail_cpu);
  EMIT(X86_MOV, reg(X86_EAX), x86_imm(CPU_AOT_ERROR_CPU));
  EMIT(X86_JMP, x86_rel(done));
  x86_label_bind(&a->cb, a->fail_argument);
  EMIT(X86_MOV, reg(X86_EAX), x86_imm(CPU_AOT_ERROR_ARGUMENT));
  EMIT(X86_JMP, x86_rel(done));
}

/* ---- the ISA check ---- */

/* cpuid and xgetbv: not in the encoder's tables, and needed only here. */
static void cpuid_emit(Aot *a, int32_t leaf) {
  EMIT(X86_MOV, reg(X86_EAX), x86_imm(leaf));
  EMIT(X86_XOR, reg(X86_ECX), reg(X86_ECX));
  x86_emit_bytes(&a->cb, (const uint8_t[]){0x0f, 0xa2}, 2);
}

/* eax &= mask; jump to `to` unless every bit of mask was set. */
static void require_bits(Aot *a, X86Reg from, uint32_t mask, X86Label to) {
  EMIT(X86_MOV, reg(X86_EAX), reg(from));
  EMIT(X86_AND, reg(X86_EAX), x86_imm((int32_t)mask));
  EMIT(X86_CMP, reg(X86_EAX), x86_imm((int32_t)mask));
  EMIT(X86_JNE, x86_rel(to));
}

/* A local function: eax = 0 when this CPU (and its operating system) has
 * the object's level, 1 when not. It reads the facts cpu_features.c reads
 * (detect_x86), the same bits, and finds the level in r10d:
 *   sse4    leaf 1 ecx 19 (SSE4.1)
 *   avx2    leaf 1 ecx 27 (OSXSAVE), 28 (AVX), 12 (FMA), 29 (F16C); XCR0
 *           bits 1-2 (xmm and ymm state); leaf 7 ebx 5 (AVX2)
 *   avx512  XCR0 bits 5-7 too (opmask and zmm state); leaf 7 ebx 16 (F),
 *           17 (DQ), 30 (BW), 31 (VL) */
static void check_emit(Aot *a, CpuLevel level) {
  X86Label found = x86_label_new(&a->cb);
  x86_label_bind(&a->cb, a->check);
  EMIT(X86_PUSH, reg(X86_RBX));  /* cpuid writes ebx */
  EMIT(X86_XOR, reg(X86_R10D), reg(X86_R10D));
  cpuid_emit(a, 0);
  EMIT(X86_MOV, reg(X86_R8D), reg(X86_EAX));  /* the highest leaf */
  EMIT(X86_CMP, reg(X86_R8D), x86_imm(1));
  EMIT(X86_JB, x86_rel(found));
  cpuid_emit(a, 1);
  EMIT(X86_MOV, reg(X86_R9D), reg(X86_ECX));
  require_bits(a, X86_R9D, 1u << 19, found);
  EMIT(X86_MOV, reg(X86_R10D), x86_imm(CPU_LEVEL_SSE4));
  require_bits(a, X86_R9D, 1u << 27 | 1u << 28 | 1u << 12 | 1u << 29, found);
  EMIT(X86_XOR, reg(X86_ECX), reg(X86_ECX));
  x86_emit_bytes(&a->cb, (const uint8_t[]){0x0f, 0x01, 0xd0}, 3);  /* xgetbv: XCR0 in edx:eax */
  EMIT(X86_MOV, reg(X86_R11D), reg(X86_EAX));
  require_bits(a, X86_R11D, 0x6, found);
  EMIT(X86_CMP, reg(X86_R8D), x86_imm(7));
  EMIT(X86_JB, x86_rel(found));
  cpuid_emit(a, 7);
  require_bits(a, X86_EBX, 1u << 5, found);
  EMIT(X86_MOV, reg(X86_R10D), x86_imm(CPU_LEVEL_AVX2));
  require_bits(a, X86_R11D, 0xe6, found);
  require_bits(a, X86_EBX, 1u << 16 | 1u << 17 | 1u << 30 | 1u << 31, found);
  EMIT(X86_MOV, reg(X86_R10D), x86_imm(CPU_LEVEL_AVX512));
  x86_label_bind(&a->cb, found);
  if (a->o->pretend_cpu_level) {
    EMIT(X86_MOV, reg(X86_EAX), x86_imm(a->o->pretend_cpu_level));
    EMIT(X86_CMP, reg(X86_R10D), reg(X86_EAX));
    EMIT(X86_CMOVA, reg(X86_R10D), reg(X86_EAX));
  }
  EMIT(X86_XOR, reg(X86_EAX), reg(X86_EAX));
  EMIT(X86_CMP, reg(X86_R10D), x86_imm(level));
  EMIT(X86_SETB, reg(X86_AL));
  EMIT(X86_POP, reg(X86_RBX));
  x86_emit0(&a->cb, X86_RET);
}

/* ---- the object ---- */

/* .text: NAME_run, the check, then every kernel as compiled, 64-byte
 * aligned (their code aligns loops and tables to 16 from its start). */
/* The code of step i's kernel, NULL for a step without one. */
static const uint8_t *step_code(const Aot *a, int i, size_t *size, size_t *combine) {
  AotStep parts;
  if (!step_parts(&a->p->steps[i], &parts) || !parts.kernel) return NULL;
  return kernel_x86_code(parts.kernel, size, combine);
}

/* Kernels are code of their shapes and ops only (buffers come through the
 * ABI), so a model unrolled over time (an LSTM's steps) compiles the same
 * kernel many times: the object keeps one copy of each distinct code. */
static void code_owners_find(Aot *a) {
  a->code_owner = mem_calloc((size_t)a->p->step_count + 1, sizeof *a->code_owner);
  for (int i = 0; i < a->p->step_count; i++) {
    a->code_owner[i] = i;
    size_t size, combine, other_size, other_combine;
    const uint8_t *code = step_code(a, i, &size, &combine);
    for (int j = 0; code && j < i; j++) {
      const uint8_t *other = a->code_owner[j] == j ? step_code(a, j, &other_size, &other_combine) : NULL;
      if (other && other_size == size && other_combine == combine && memcmp(other, code, size) == 0) {
        a->code_owner[i] = j;
        break;
      }
    }
  }
}

static bool text_emit(Aot *a) {
  const CpuProgram *p = a->p;
  a->kernel_labels = mem_calloc((size_t)p->step_count + 1, sizeof *a->kernel_labels);
  a->combine_labels = mem_calloc((size_t)p->step_count + 1, sizeof *a->combine_labels);
  a->check = x86_label_new(&a->cb);
  a->task = x86_label_new(&a->cb);
  code_owners_find(a);
  for (int i = 0; i < p->step_count; i++) {
    int owner = a->code_owner[i];
    a->kernel_labels[i] = owner == i ? x86_label_new(&a->cb) : a->kernel_labels[owner];
    a->combine_labels[i] = owner == i ? x86_label_new(&a->cb) : a->combine_labels[owner];
  }
  run_emit(a);
  x86_align(&a->cb, 16);
  check_emit(a, p->cpu.level);
  x86_align(&a->cb, 16);
  task_emit(a);
  for (int i = 0; i < p->step_count; i++) {
    size_t size, combine;
    const uint8_t *code = a->code_owner[i] == i ? step_code(a, i, &size, &combine) : NULL;
    if (!code) continue;
    x86_align(&a->cb, 64);
    x86_label_bind(&a->cb, a->kernel_labels[i]);
    x86_emit_bytes(&a->cb, code, combine);
    x86_label_bind(&a->cb, a->combine_labels[i]);
    x86_emit_bytes(&a->cb, code + combine, size - combine);
  }
  return x86_buffer_finish(&a->cb, a->st);
}

/* Symbols: NAME_run, global; the check and each kernel, local (so that two
 * objects never clash), named for objdump and perf. */
static bool symbols_define(Aot *a, uint64_t text) {
  char name[512];
  int64_t check_at = x86_label_offset(&a->cb, a->check);
  snprintf(name, sizeof name, "%s_run", a->o->name);
  bool ok = elf_define_symbol(a->elf, name, ELF_SECTION_TEXT, text, a->parallel_entry, ELF_SYMBOL_FUNCTION,
                              ELF_BINDING_GLOBAL, a->st) >= 0;
  snprintf(name, sizeof name, "%s_run_parallel", a->o->name);
  ok = ok && elf_define_symbol(a->elf, name, ELF_SECTION_TEXT, text + a->parallel_entry,
                               (uint64_t)check_at - a->parallel_entry, ELF_SYMBOL_FUNCTION, ELF_BINDING_GLOBAL,
                               a->st) >= 0;
  snprintf(name, sizeof name, "%s.cpu_check", a->o->name);
  ok = ok && elf_define_symbol(a->elf, name, ELF_SECTION_TEXT, text + (uint64_t)check_at, 0, ELF_SYMBOL_FUNCTION,
                               ELF_BINDING_LOCAL, a->st) >= 0;
  snprintf(name, sizeof name, "%s.task", a->o->name);
  ok = ok && elf_define_symbol(a->elf, name, ELF_SECTION_TEXT, text + (uint64_t)x86_label_offset(&a->cb, a->task), 0,
                               ELF_SYMBOL_FUNCTION, ELF_BINDING_LOCAL, a->st) >= 0;
  for (int i = 0; i < a->p->step_count && ok; i++) {
    const CpuStep *s = &a->p->steps[i];
    size_t size, combine;
    if (a->code_owner[i] != i || !step_code(a, i, &size, &combine)) continue;
    snprintf(name, sizeof name, "%s.%d.%s", a->o->name, i, s->inst->name);
    uint64_t at = text + (uint64_t)x86_label_offset(&a->cb, a->kernel_labels[i]);
    ok = elf_define_symbol(a->elf, name, ELF_SECTION_TEXT, at, size, ELF_SYMBOL_FUNCTION, ELF_BINDING_LOCAL,
                           a->st) >= 0;
  }
  for (size_t i = 0; i < a->ref_count && ok; i++) {
    const AotReference *r = &a->refs[i];
    ok = elf_add_relocation(a->elf, ELF_SECTION_TEXT, text + r->at, ELF_RELOC_PC32,
                            elf_section_symbol(a->elf, r->section), (int64_t)r->target - 4, a->st);
  }
  return ok;
}

static int entry_parameter_leaves(const Module *m) {
  int n = 0;
  for (int i = 0; i < m->entry->parameter_count; i++) n += shape_leaf_count(&m->entry->parameters[i]->shape);
  return n;
}

bool cpu_aot_write(const Executable *exe, const CpuAotOptions *o, uint8_t **object, size_t *object_size,
                   char **header, Status *st) {
  *object = NULL;
  *object_size = 0;
  *header = NULL;
  if (!cpu_aot_name_valid(o->name))
    return status_error(st, STATUS_INPUT_ERROR, "'%s' is not a C identifier to name the object's symbols by",
                        o->name ? o->name : "");
  if (!exe->program || exe->backend != &backend_cpu)
    return status_error(st, STATUS_INPUT_ERROR, "an object is written from what the CPU backend compiled");
  Aot a = {.p = exe->program, .m = executable_module_to_run(exe), .o = o, .st = st};
  if (!check_program(&a)) return false;
  a.parameter_leaves = entry_parameter_leaves(a.m);
  a.result_leaves = shape_leaf_count(&a.m->entry->root->shape);
  a.elf = elf_writer_new(o->source_name);
  x86_buffer_init(&a.cb);
  place_constants(&a);
  a.temp_bytes = a.p->temp_bytes;
  elf_append(a.elf, ELF_SECTION_BSS, NULL, 4, 4);
  bool ok = text_emit(&a);
  if (ok) ok = symbols_define(&a, elf_append(a.elf, ELF_SECTION_TEXT, a.cb.code, a.cb.size, 64));
  if (ok) ok = elf_write_bytes(a.elf, object, object_size, st);
  if (ok) {
    CpuAotLayout layout = {.temp_bytes = a.temp_bytes, .level = a.p->cpu.level};
    *header = cpu_aot_header_create(exe, o, &layout);
  }
  x86_buffer_free(&a.cb);
  elf_writer_free(a.elf);
  mem_free(a.constant_at);
  mem_free(a.refs);
  mem_free(a.kernel_labels);
  mem_free(a.combine_labels);
  mem_free(a.code_owner);
  return ok;
}

static bool file_write(const char *path, const void *bytes, size_t size, Status *st) {
  FILE *f = fopen(path, "wb");
  if (!f) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s", path);
  bool ok = fwrite(bytes, 1, size, f) == size;
  if (fclose(f) != 0) ok = false;
  return ok || status_error(st, STATUS_INPUT_ERROR, "cannot write %s", path);
}

bool cpu_aot_compile_files(const Module *m, const ExecutableOptions *eo, const CpuAotOptions *o,
                           const char *object_path, const char *header_path, char **stats, Status *st) {
  if (stats) *stats = NULL;
  if (!cpu_aot_name_valid(o->name))
    return status_error(st, STATUS_INPUT_ERROR, "'%s' is not a C identifier to name the object's symbols by",
                        o->name ? o->name : "");
  ExecutableOptions options = *eo;
  options.backend = AXLE_BACKEND_CPU;
  options.threads = 1;  /* the program is written, never run: no pool of threads */
  Executable *exe = executable_compile(m, &options, st);
  if (!exe) return false;
  if (stats && exe->stats) *stats = mem_strdup(exe->stats);
  uint8_t *object = NULL;
  size_t object_size = 0;
  char *header = NULL;
  bool ok = cpu_aot_write(exe, o, &object, &object_size, &header, st);
  if (ok) ok = file_write(object_path, object, object_size, st);
  if (ok && header_path) ok = file_write(header_path, header, strlen(header), st);
  /* A refusal names the file through a pointer into the executable's
   * clones, which go now: point it at the caller's module instead, as
   * executable_compile does. */
  if (!ok && st->file && m->filename && strcmp(st->file, m->filename) == 0) st->file = m->filename;
  else if (!ok) st->file = NULL;
  mem_free(object);
  mem_free(header);
  executable_free(exe);
  return ok;
}
