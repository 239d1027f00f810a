/* Kernels: creation and the text form a reader (and a test) looks at. */
#include <stdlib.h>
#include <string.h>

#include "ir/kernel/kernel.h"

Kernel *kernel_create(const char *name, const Instruction *origin, KernelKind kind) {
  Kernel *k = calloc_or_exit(1, sizeof *k);
  size_t n = strlen(name);
  char *copy = calloc_or_exit(n + 1, 1);
  memcpy(copy, name, n);
  k->name = copy;
  k->origin = origin;
  k->kind = kind;
  return k;
}

void kernel_free(Kernel *k) {
  if (!k) return;
  free((char *)k->name);
  free(k->inputs);
  free(k->outputs);
  free(k->ops);
  free(k);
}

static int add_buffer(KernelBuffer **list, int *count, const KernelBuffer *b) {
  *list = realloc_or_exit(*list, sizeof **list * (size_t)(*count + 1));
  (*list)[*count] = *b;
  return (*count)++;
}

int kernel_add_input(Kernel *k, const Shape *shape, const Instruction *source, const Literal *constant) {
  KernelBuffer b = {*shape, source, 0, constant};
  return add_buffer(&k->inputs, &k->input_count, &b);
}

int kernel_add_output(Kernel *k, const Shape *shape, const Instruction *source, int output_index) {
  KernelBuffer b = {*shape, source, output_index, NULL};
  return add_buffer(&k->outputs, &k->output_count, &b);
}

int kernel_add_op(Kernel *k, const KernelOp *op) {
  if (k->op_count == k->op_capacity) {
    k->op_capacity = k->op_capacity ? k->op_capacity * 2 : 64;
    k->ops = realloc_or_exit(k->ops, sizeof *k->ops * (size_t)k->op_capacity);
  }
  k->ops[k->op_count] = *op;
  return k->op_count++;
}

/* Where an op runs: PRE first, then each phase's loop, then POST. */
static int op_run_order(const Kernel *k, const KernelOp *op) {
  switch (op->block) {
  case KBLOCK_PRE: return 0;
  case KBLOCK_REDUCE: case KBLOCK_ROW: return 1 + op->phase;
  case KBLOCK_POST: break;
  }
  return 2 + (k->phase_count > 0 ? k->phase_count : 1);
}

/* The lowering makes a PRE constant or index when a REDUCE op first needs
 * it, after REDUCE ops already made. A register allocator that walks the
 * ops in order would then let a looped value share a register with a PRE
 * value the loop still reads. A stable sort by run order restores "PRE
 * ops, then REDUCE, then POST"; an op reads only ops that run before it,
 * so every argument stays ahead of its user. */
void kernel_order_ops(Kernel *k) {
  int n = k->op_count, *new_index = calloc_or_exit((size_t)n + 1, sizeof *new_index);
  KernelOp *sorted = calloc_or_exit((size_t)n + 1, sizeof *sorted);
  int last = 2 + (k->phase_count > 0 ? k->phase_count : 1), at = 0;
  for (int order = 0; order <= last; order++)
    for (int i = 0; i < n; i++)
      if (op_run_order(k, &k->ops[i]) == order) {
        new_index[i] = at;
        sorted[at++] = k->ops[i];
      }
  for (int i = 0; i < n; i++)
    for (int a = 0; a < sorted[i].arg_count; a++) sorted[i].args[a] = new_index[sorted[i].args[a]];
  memcpy(k->ops, sorted, sizeof *sorted * (size_t)n);
  free(sorted);
  free(new_index);
}

/* ---- printing ---- */

static const char *const block_names[] = {"pre", "reduce", "row", "post"};
static const char *const direction_names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};

static void print_dims(StrBuf *sb, int rank, const int64_t *dims) {
  strbuf_printf(sb, "[");
  for (int d = 0; d < rank; d++) strbuf_printf(sb, "%s%lld", d ? "," : "", (long long)dims[d]);
  strbuf_printf(sb, "]");
}

static void print_buffer_list(StrBuf *sb, const char *prefix, const KernelBuffer *list, int count) {
  strbuf_printf(sb, "   ");
  for (int i = 0; i < count; i++) {
    strbuf_printf(sb, " %s%d ", prefix, i);
    shape_print(sb, &list[i].shape, true);
    if (list[i].constant) strbuf_printf(sb, " (constant)");
  }
  strbuf_printf(sb, "\n");
}

static void print_args(StrBuf *sb, const KernelOp *op, int first) {
  for (int a = first; a < op->arg_count; a++) strbuf_printf(sb, "%s%%%d", a > first ? ", " : "", op->args[a]);
}

static void print_op(StrBuf *sb, const KernelOp *op, int value) {
  switch (op->kop) {
  case KOP_INDEX:
  case KOP_RINDEX:
    strbuf_printf(sb, "%%%d = s64 %s %d", value, op->kop == KOP_INDEX ? "index" : "rindex", op->dim);
    break;
  case KOP_CONSTANT:
    if (type_is_float(op->type)) strbuf_printf(sb, "%%%d = %s const %.17g", value, type_name(op->type), op->value.f);
    else strbuf_printf(sb, "%%%d = %s const %lld", value, type_name(op->type), (long long)op->value.i);
    break;
  case KOP_LOAD:
    strbuf_printf(sb, "%%%d = %s load in%d[", value, type_name(op->type), op->buffer);
    print_args(sb, op, 0);
    strbuf_printf(sb, "]");
    break;
  case KOP_STORE:
    strbuf_printf(sb, "store out%d[", op->buffer);
    print_args(sb, op, 1);
    strbuf_printf(sb, "] %%%d", op->args[0]);
    break;
  case KOP_HLO:
    strbuf_printf(sb, "%%%d = %s %s", value, type_name(op->type), opcode_name(op->op));
    if (op->op == OP_COMPARE) strbuf_printf(sb, ".%s", direction_names[op->direction]);
    strbuf_printf(sb, " ");
    print_args(sb, op, 0);
    break;
  case KOP_ACC_READ:
    strbuf_printf(sb, "%%%d = %s acc%d", value, type_name(op->type), op->acc);
    break;
  case KOP_ACC_WRITE:
    strbuf_printf(sb, "acc%d = %%%d", op->acc, op->args[0]);
    break;
  }
}

void print_kernel(StrBuf *sb, const Kernel *k) {
  strbuf_printf(sb, "kernel %s", k->name);
  if (k->origin) strbuf_printf(sb, " (from %s)", k->origin->name);
  strbuf_printf(sb, "\n");
  print_buffer_list(sb, "in", k->inputs, k->input_count);
  print_buffer_list(sb, "out", k->outputs, k->output_count);
  strbuf_printf(sb, "    loop ");
  print_dims(sb, k->rank, k->dims);
  if (k->kind != KERNEL_LOOP) {
    strbuf_printf(sb, " reduce ");
    print_dims(sb, k->reduce_rank, k->reduce_dims);
    if (k->kind == KERNEL_ROW) strbuf_printf(sb, " in %d phases", k->phase_count);
  }
  strbuf_printf(sb, "\n");
  const Instruction *last_origin = NULL;
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    bool first_of_block = i == 0 || k->ops[i - 1].block != op->block || k->ops[i - 1].phase != op->phase;
    char label[24] = "";
    if (first_of_block && k->kind == KERNEL_ROW && (op->block == KBLOCK_REDUCE || op->block == KBLOCK_ROW))
      snprintf(label, sizeof label, "%s%d", block_names[op->block], op->phase);
    else if (first_of_block)
      snprintf(label, sizeof label, "%s", block_names[op->block]);
    strbuf_printf(sb, "    %-8s", label);
    print_op(sb, op, i);
    /* Each run of ops is labelled with the HLO instruction it came from. */
    if (op->origin && op->origin != last_origin) strbuf_printf(sb, "    ; %s", op->origin->name);
    last_origin = op->origin;
    strbuf_printf(sb, "\n");
  }
}
