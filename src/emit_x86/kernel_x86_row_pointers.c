/* Row pointers: a SIMD loop addresses each load and store along its row
 * (kernel_access_form CONTIGUOUS along the loop's index) as a pointer set
 * once before the loop plus r14, instead of computing every index on every
 * trip. The pointers live in frame slots; the first two a loop uses are
 * held in rbp and r15 where no value of the kernel lives (row kernels).
 * kernel_x86_vector.c emits the loops that read them. */
#include "emit_x86/kernel_x86_internal.h"

#define EMIT(...) x86_emit(x->cb, __VA_ARGS__)

static X86Operand reg(X86Reg r) { return x86_reg(r); }

/* The ROW phase's store when phase x->phase stores a value for it to read
 * back (schedule.phases[].reuse), else -1. */
int kernel_x86_reuse_store(const KernelX86 *x) {
  const Kernel *k = x->k;
  if (k->kind != KERNEL_ROW || x->phase + 1 >= k->phase_count || x->schedule.phases[x->phase + 1].reuse < 0) return -1;
  return kernel_x86_row_store(k);
}

X86Operand kernel_x86_row_pointer_slot(const KernelX86 *x, int i) {
  return kernel_x86_slot(x->address_slot + x->address_slots[i], 8);
}

/* The loop's inner index (KOP_RINDEX) where every op that reads it is a
 * row access, addressed by its row pointer plus r14 (emit_vector_memory):
 * nothing reads the register it would be copied into, so the SIMD loops
 * leave it out (the scalar loops still compute it). */
bool kernel_x86_index_only_addresses_rows(const KernelX86 *x, int i) {
  const Kernel *k = x->k;
  if (k->ops[i].kop != KOP_RINDEX) return false;
  for (int j = i + 1; j < k->op_count; j++) {
    const KernelOp *op = &k->ops[j];
    bool row_access = (op->kop == KOP_LOAD || op->kop == KOP_STORE) && x->address_slots[j] >= 0;
    for (int a = 0; a < op->arg_count; a++)
      if (op->args[a] == i && !x->dead[j] && (!row_access || (op->kop == KOP_STORE && a == 0))) return false;
  }
  return true;
}

/* The ROW phase reads its value back from a row buffer in the frame
 * (schedule reuse_in_frame), not from the output. */
bool kernel_x86_reuse_in_frame(const KernelX86 *x) {
  return x->k->kind == KERNEL_ROW && x->schedule.phases[x->k->phase_count - 1].reuse_in_frame;
}

/* Before the loop: each row access's address at inner index 0. */
bool kernel_x86_emit_row_pointers(KernelX86 *x) {
  const Kernel *k = x->k;
  int early_store = kernel_x86_reuse_in_frame(x) ? -1 : kernel_x86_reuse_store(x);
  for (int i = 0; i < k->op_count; i++) {
    if ((!kernel_x86_in_vector_loop(x, &k->ops[i]) && i != early_store) || x->address_slots[i] < 0 || x->dead[i])
      continue;
    const KernelOp *op = &k->ops[i];
    bool store = op->kop == KOP_STORE;
    const Shape *s = store ? &k->outputs[op->buffer].shape : &k->inputs[op->buffer].shape;
    X86Operand m;
    if (!kernel_x86_element_address_without(x, i, store ? k->input_count + op->buffer : op->buffer, s, store ? 1 : 0,
                                            kernel_x86_row_access_dim(k, i), &m))
      return false;
    m.mem.size = 8;
    EMIT(X86_LEA, reg(KX_SCRATCH_ADDRESS), m);
    EMIT(X86_MOV, kernel_x86_row_pointer_slot(x, i), reg(KX_SCRATCH_ADDRESS));
  }
  return true;
}

/* Before a loop kernel's vector loop over one row (r14 = 0, the outer
 * indices in their slots): each row access's address at inner index 0,
 * the outer indices times their strides and the constants folded in, so
 * that the loop's load or store is one move of the pointer and the access
 * at it plus r14, where it recomputed every index from scratch (117 of the
 * LSTM gate kernel's 390 instructions per trip). */
bool kernel_x86_emit_loop_row_pointers(KernelX86 *x) {
  const Kernel *k = x->k;
  bool noted = false;
  for (int i = 0; i < k->op_count; i++) {
    if (x->address_slots[i] < 0) continue;
    if (!noted) x86_listing_note(x->cb, "row pointers, once per row");
    noted = true;
    const KernelOp *op = &k->ops[i];
    bool store = op->kop == KOP_STORE;
    const Shape *s = store ? &k->outputs[op->buffer].shape : &k->inputs[op->buffer].shape;
    int first = store ? 1 : 0;
    KernelAccessForm form = kernel_access_form(k, i, k->rank - 1); /* CONTIGUOUS (kernel_x86_is_loop_row_access) */
    int64_t stride[AXLE_MAX_RANK], constant_offset = 0;
    kernel_x86_layout_strides(s, stride);
    EMIT(X86_MOV, reg(KX_SCRATCH_ADDRESS), x86_mem(8, KX_BUFFERS, 8 * (store ? k->input_count + op->buffer : op->buffer)));
    EMIT(X86_XOR, reg(X86_EAX), reg(X86_EAX));
    for (int d = 0; d < s->rank; d++) {
      const KernelOp *index = &k->ops[op->args[first + d]];
      if (s->dims[d] == 1) continue; /* the only valid index is 0 */
      if (d == form.dim) {
        constant_offset += form.offset * stride[d]; /* the walked index + a constant */
        continue;
      }
      if (index->kop == KOP_CONSTANT) {
        constant_offset += index->value.i * stride[d];
        continue;
      }
      EMIT(X86_MOV, reg(X86_RCX), kernel_x86_slot(x->index_slot + index->dim, 8));
      if (stride[d] > INT32_MAX) return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: op %%%d: a buffer stride past 2^31 elements", k->name, i);
      if (stride[d] != 1) EMIT(X86_IMUL, reg(X86_RCX), reg(X86_RCX), x86_imm(stride[d]));
      EMIT(X86_ADD, reg(X86_RAX), reg(X86_RCX));
    }
    int size = type_byte_size(s->type);
    int64_t disp = constant_offset * size;
    if (disp > INT32_MAX || disp < INT32_MIN) return status_error(x->st, STATUS_UNSUPPORTED, "kernel %s: op %%%d: a constant offset past 2 GiB", k->name, i);
    EMIT(X86_LEA, reg(KX_SCRATCH_ADDRESS), x86_mem_index(8, KX_SCRATCH_ADDRESS, X86_RAX, size, (int32_t)disp));
    EMIT(X86_MOV, kernel_x86_row_pointer_slot(x, i), reg(KX_SCRATCH_ADDRESS));
  }
  return true;
}

/* Row pointers in registers (x->pointer_register_slot): rbp and r15 where
 * no value of the kernel lives in them. Both are callee-saved and written
 * by nothing else in a kernel, so they keep a loop's row pointers through
 * its trips and the loops of its phase (the exact rerun of a maximum). */
static const X86Reg pointer_registers[2] = {X86_RBP, X86_R15};

static bool pointer_register_free(const KernelX86 *x, X86Reg r) {
  for (int v = 0; v < x->k->op_count; v++) {
    const ValueHome *s = &x->scalar_homes[v], *w = &x->vector_homes[v];
    if ((s->value_class == VALUE_GPR && !s->spilled && s->reg == r) ||
        (w->value_class == VALUE_GPR && !w->spilled && w->reg == r))
      return false;
  }
  return true;
}

void kernel_x86_forget_pointer_registers(KernelX86 *x) { x->pointer_register_slot[0] = x->pointer_register_slot[1] = -1; }

/* The first two row pointers of the loop's accesses into free pointer
 * registers, after kernel_x86_emit_row_pointers wrote their slots. */
void kernel_x86_load_pointer_registers(KernelX86 *x) {
  const Kernel *k = x->k;
  kernel_x86_forget_pointer_registers(x);
  int early_store = kernel_x86_reuse_in_frame(x) ? -1 : kernel_x86_reuse_store(x);
  int next = 0;
  for (int i = 0; i < k->op_count && next < 2; i++) {
    if ((!kernel_x86_in_vector_loop(x, &k->ops[i]) && i != early_store) || x->address_slots[i] < 0 || x->dead[i])
      continue;
    int slot = x->address_slots[i];
    if (slot == x->pointer_register_slot[0] || slot == x->pointer_register_slot[1]) continue;
    while (next < 2 && !pointer_register_free(x, pointer_registers[next])) next++;
    if (next == 2) break;
    x->pointer_register_slot[next] = slot;
    EMIT(X86_MOV, reg(pointer_registers[next]), kernel_x86_row_pointer_slot(x, i));
    next++;
  }
}

/* Row access i's row pointer: its register, or r11 loaded from its slot. */
X86Reg kernel_x86_row_pointer(KernelX86 *x, int i) {
  for (int r = 0; r < 2; r++)
    if (x->pointer_register_slot[r] == x->address_slots[i]) return pointer_registers[r];
  EMIT(X86_MOV, reg(KX_SCRATCH_ADDRESS), kernel_x86_row_pointer_slot(x, i));
  return KX_SCRATCH_ADDRESS;
}
