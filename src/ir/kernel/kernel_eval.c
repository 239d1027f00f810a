/* The kernel interpreter: runs a kernel point by point, each scalar op
 * through the reference evaluator (eval_instruction on rank-0 literals), so
 * that an op means exactly what it means in eval/ — one owner for every
 * op's meaning. It is the oracle for the lowering, not a way to run fast. */
#include <stdlib.h>
#include <string.h>

#include "ir/kernel/kernel.h"

typedef struct KernelRun {
  const Kernel *k;
  Literal *const *inputs;
  Literal **outputs;
  Literal **values;            /* one rank-0 literal per op, or NULL */
  Literal **accs, **next_accs;
  int64_t index[AXLE_MAX_RANK], rindex[AXLE_MAX_RANK];
} KernelRun;

static Literal *scalar_s64(int64_t v) {
  Shape s = shape_scalar(TYPE_S64);
  Literal *lit = literal_create(&s);
  literal_set_s64(lit, 0, v);
  return lit;
}

/* Row-major position of a logical index in a literal (literals are stored
 * in logical order whatever the layout). */
static int64_t literal_offset(const Shape *shape, const KernelRun *run, const KernelOp *op, int first) {
  int64_t offset = 0;
  for (int d = 0; d < shape->rank; d++) {
    int64_t i = literal_get_s64(run->values[op->args[first + d]], 0);
    offset = offset * shape->dims[d] + i;
  }
  return offset;
}

static bool index_in_bounds(const Shape *shape, const KernelRun *run, const KernelOp *op, int first) {
  for (int d = 0; d < shape->rank; d++) {
    int64_t i = literal_get_s64(run->values[op->args[first + d]], 0);
    if (i < 0 || i >= shape->dims[d]) return false;
  }
  return true;
}

static Literal *load_element(const Literal *from, int64_t offset) {
  Shape s = shape_scalar(from->shape.type);
  Literal *lit = literal_create(&s);
  size_t size = (size_t)type_byte_size(from->shape.type);
  memcpy(lit->data, (const char *)from->data + (size_t)offset * size, size);
  return lit;
}

/* An HLO op on scalars: a throwaway instruction whose operands are
 * throwaway instructions of the argument types, handed to the evaluator. */
static Literal *eval_scalar_hlo(const KernelOp *op, Literal *const *args, Status *st) {
  Instruction operands[3];
  Instruction *operand_ptrs[3];
  memset(operands, 0, sizeof operands);
  for (int a = 0; a < op->arg_count && a < 3; a++) {
    operands[a].opcode = OP_PARAMETER;
    operands[a].name = "kernel-value";
    operands[a].shape = args[a]->shape;
    operand_ptrs[a] = &operands[a];
  }
  Instruction inst;
  memset(&inst, 0, sizeof inst);
  inst.opcode = op->op;
  inst.name = "kernel-op";
  inst.shape = shape_scalar(op->type);
  inst.operands = operand_ptrs;
  inst.operand_count = op->arg_count;
  /* Attributes other than a compare's (reduce-precision's bits, ...) are
   * the originating instruction's. */
  if (op->origin && op->origin->opcode == op->op) inst.attrs = op->origin->attrs;
  inst.attrs.direction = op->direction;
  inst.attrs.compare_type = op->compare_type;
  return eval_instruction(&inst, args, st);
}

static bool run_op(KernelRun *run, int i, Status *st) {
  const Kernel *k = run->k;
  const KernelOp *op = &k->ops[i];
  Literal *value = NULL;
  switch (op->kop) {
  case KOP_INDEX: value = scalar_s64(run->index[op->dim]); break;
  case KOP_RINDEX: value = scalar_s64(run->rindex[op->dim]); break;
  case KOP_CONSTANT: {
    Shape s = shape_scalar(op->type);
    value = literal_create(&s);
    if (type_is_float(op->type)) literal_set_f64(value, 0, op->value.f);
    else literal_set_s64(value, 0, op->value.i);
    break;
  }
  case KOP_LOAD: {
    const Literal *in = run->inputs[op->buffer];
    if (!index_in_bounds(&in->shape, run, op, 0))
      return status_error(st, STATUS_RUNTIME_ERROR, "kernel %s: op %%%d loads in%d out of bounds", k->name, i,
                          op->buffer);
    value = load_element(in, literal_offset(&in->shape, run, op, 0));
    break;
  }
  case KOP_STORE: {
    Literal *out = run->outputs[op->buffer];
    if (!index_in_bounds(&out->shape, run, op, 1))
      return status_error(st, STATUS_RUNTIME_ERROR, "kernel %s: op %%%d stores out%d out of bounds", k->name, i,
                          op->buffer);
    size_t size = (size_t)type_byte_size(out->shape.type);
    memcpy((char *)out->data + (size_t)literal_offset(&out->shape, run, op, 1) * size,
           run->values[op->args[0]]->data, size);
    return true;
  }
  case KOP_HLO: {
    Literal *args[KERNEL_MAX_ARGS];
    for (int a = 0; a < op->arg_count; a++) args[a] = run->values[op->args[a]];
    value = eval_scalar_hlo(op, args, st);
    if (!value) return false;
    break;
  }
  case KOP_ACC_READ: value = literal_clone(run->accs[op->acc]); break;
  case KOP_ACC_WRITE: {
    /* In REDUCE every accumulator is read before any is written (a variadic
     * reducer sees the old values), so writes wait in next_accs. */
    Literal **slot = op->block == KBLOCK_REDUCE ? &run->next_accs[op->acc] : &run->accs[op->acc];
    literal_free(*slot);
    *slot = literal_clone(run->values[op->args[0]]);
    return true;
  }
  }
  literal_free(run->values[i]);
  run->values[i] = value;
  return true;
}

static bool run_block(KernelRun *run, KernelBlock block, int phase, Status *st) {
  for (int i = 0; i < run->k->op_count; i++) {
    const KernelOp *op = &run->k->ops[i];
    bool looped = op->block == KBLOCK_REDUCE || op->block == KBLOCK_ROW;
    if (op->block == block && (!looped || op->phase == phase) && !run_op(run, i, st)) return false;
  }
  if (block == KBLOCK_REDUCE) {
    for (int a = 0; a < run->k->acc_count; a++) {
      if (!run->next_accs[a]) continue;
      literal_free(run->accs[a]);
      run->accs[a] = run->next_accs[a];
      run->next_accs[a] = NULL;
    }
  }
  return true;
}

/* Advances a multi-dimensional counter, last dimension fastest; false when
 * it wraps around. */
static bool next_index(int64_t *index, int rank, const int64_t *dims) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

static int64_t product(const int64_t *dims, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= dims[d];
  return n;
}

/* One pass over the reduced dimensions. */
static bool run_phase(KernelRun *run, KernelBlock block, int phase, Status *st) {
  const Kernel *k = run->k;
  memset(run->rindex, 0, sizeof run->rindex);
  if (product(k->reduce_dims, k->reduce_rank) == 0) return true;
  do {
    if (!run_block(run, block, phase, st)) return false;
  } while (next_index(run->rindex, k->reduce_rank, k->reduce_dims));
  return true;
}

static bool run_point(KernelRun *run, Status *st) {
  const Kernel *k = run->k;
  if (!run_block(run, KBLOCK_PRE, 0, st)) return false;
  if (k->kind == KERNEL_LOOP) return true;
  for (int p = 0; p < k->phase_count; p++)
    if (!run_phase(run, k->phase_blocks[p], p, st)) return false;
  return run_block(run, KBLOCK_POST, 0, st);
}

bool kernel_eval(const Kernel *k, Literal *const *inputs, Literal **outputs, Status *st) {
  KernelRun run = {.k = k, .inputs = inputs, .outputs = outputs};
  run.values = mem_calloc((size_t)k->op_count + 1, sizeof *run.values);
  run.accs = mem_calloc((size_t)k->acc_count + 1, sizeof *run.accs);
  run.next_accs = mem_calloc((size_t)k->acc_count + 1, sizeof *run.next_accs);
  bool ok = true;
  if (product(k->dims, k->rank) > 0) {
    do {
      ok = run_point(&run, st);
    } while (ok && next_index(run.index, k->rank, k->dims));
  }
  for (int i = 0; i < k->op_count; i++) literal_free(run.values[i]);
  for (int a = 0; a < k->acc_count; a++) literal_free(run.accs[a]), literal_free(run.next_accs[a]);
  mem_free(run.values);
  mem_free(run.accs);
  mem_free(run.next_accs);
  return ok;
}
