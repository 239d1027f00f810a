/* Kernels: creation and the text form a reader (and a test) looks at. */
#include <stdlib.h>
#include <string.h>

#include "ir/kernel/kernel.h"

Kernel *kernel_create(const char *name, const Instruction *origin, KernelKind kind) {
  Kernel *k = mem_calloc(1, sizeof *k);
  size_t n = strlen(name);
  char *copy = mem_calloc(n + 1, 1);
  memcpy(copy, name, n);
  k->name = copy;
  k->origin = origin;
  k->kind = kind;
  return k;
}

void kernel_free(Kernel *k) {
  if (!k) return;
  mem_free((char *)k->name);
  mem_free(k->inputs);
  mem_free(k->outputs);
  mem_free(k->ops);
  mem_free(k);
}

static int add_buffer(KernelBuffer **list, int *count, const KernelBuffer *b) {
  *list = mem_realloc(*list, sizeof **list * (size_t)(*count + 1));
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
    k->ops = mem_realloc(k->ops, sizeof *k->ops * (size_t)k->op_capacity);
  }
  k->ops[k->op_count] = *op;
  return k->op_count++;
}

/* Where an op runs: PRE first, then each phase's loop, then POST. */
static int block_rank(const Kernel *k, const KernelOp *op) {
  if (op->block == KBLOCK_PRE) return 0;
  if (op->block == KBLOCK_POST) return k->phase_count + 1;
  return op->phase + 1;
}

/* A stable partition by block rank. It keeps every argument before its
 * user: an op only reads values of its own block or of earlier ones. */
static bool looped(const KernelOp *op) { return op->block == KBLOCK_REDUCE || op->block == KBLOCK_ROW; }

/* Whether accumulator acc is written in the loop of phase `phase`. */
static bool acc_written_in(const Kernel *k, int acc, int phase) {
  for (int i = 0; i < k->op_count; i++)
    if (k->ops[i].kop == KOP_ACC_WRITE && looped(&k->ops[i]) && k->ops[i].phase == phase && k->ops[i].acc == acc)
      return true;
  return false;
}

/* Marks the looped ops whose value is the same on every trip. The
 * lowering makes every argument before its user, so one pass suffices. */
static void mark_invariants(Kernel *k) {
  for (int i = 0; i < k->op_count; i++) {
    KernelOp *op = &k->ops[i];
    op->invariant = false;
    if (!looped(op)) continue;
    if (op->kop == KOP_CONSTANT) op->invariant = true;
    else if (op->kop == KOP_ACC_READ) op->invariant = !acc_written_in(k, op->acc, op->phase);
    else if (op->kop == KOP_HLO) {
      bool fixed = true;
      for (int a = 0; a < op->arg_count && fixed; a++) {
        const KernelOp *arg = &k->ops[op->args[a]];
        fixed = op->args[a] < i && (arg->block == KBLOCK_PRE || (arg->invariant && arg->phase == op->phase));
      }
      op->invariant = fixed;
    }
  }
}

void kernel_order_blocks(Kernel *k) {
  KernelOp *ops = mem_calloc((size_t)k->op_count + 1, sizeof *ops);
  int *renumber = mem_calloc((size_t)k->op_count + 1, sizeof *renumber);
  int n = 0;
  mark_invariants(k);
  for (int rank = 0; rank <= k->phase_count + 1; rank++)
    for (int pass = 0; pass < 2; pass++) /* the invariant ops, then the others */
      for (int i = 0; i < k->op_count; i++)
        if (block_rank(k, &k->ops[i]) == rank && k->ops[i].invariant == (pass == 0))
          renumber[i] = n, ops[n++] = k->ops[i];
  for (int i = 0; i < n; i++)
    for (int a = 0; a < ops[i].arg_count; a++) ops[i].args[a] = renumber[ops[i].args[a]];
  memcpy(k->ops, ops, sizeof *ops * (size_t)n);
  mem_free(ops);
  mem_free(renumber);
}

/* ---- values computed twice ---- */

/* Whether looped values a (phase pa) and b (a later phase) are the same
 * function of the row's element index: the same op on equal arguments,
 * rindex of the same dimension, the same PRE value, or a read of an
 * accumulator no phase from pa on writes. */
static bool same_value(const Kernel *k, int a, int b, int depth) {
  if (a == b) return true;
  const KernelOp *x = &k->ops[a], *y = &k->ops[b];
  if (depth > 32 || !looped(x) || !looped(y) || x->kop != y->kop || x->type != y->type || x->op != y->op ||
      x->direction != y->direction || x->compare_type != y->compare_type || x->dim != y->dim ||
      x->buffer != y->buffer || x->acc != y->acc || x->arg_count != y->arg_count ||
      memcmp(&x->value, &y->value, sizeof x->value) != 0)
    return false;
  switch (x->kop) {
  case KOP_RINDEX:
  case KOP_CONSTANT:
    return true;
  case KOP_ACC_READ:
    for (int p = x->phase; p < k->phase_count; p++)
      if (acc_written_in(k, x->acc, p)) return false;
    return true;
  case KOP_LOAD:
    break;
  case KOP_HLO:
    if (x->origin != y->origin) return false; /* its attributes (reduce-precision's bits) */
    break;
  default:
    return false;
  }
  for (int i = 0; i < x->arg_count; i++)
    if (!same_value(k, x->args[i], y->args[i], depth + 1)) return false;
  return true;
}

int kernel_find_recomputed(const Kernel *k, int *earlier) {
  *earlier = -1;
  if (k->kind != KERNEL_ROW || k->phase_count < 2 || k->phase_blocks[k->phase_count - 1] != KBLOCK_ROW ||
      k->phase_blocks[k->phase_count - 2] != KBLOCK_REDUCE)
    return -1;
  int row = k->phase_count - 1;
  for (int b = k->op_count - 1; b >= 0; b--) {
    const KernelOp *y = &k->ops[b];
    if (!looped(y) || y->phase != row || y->kop != KOP_HLO || y->invariant) continue;
    for (int a = 0; a < k->op_count; a++)
      if (looped(&k->ops[a]) && k->ops[a].phase == row - 1 && !k->ops[a].invariant && same_value(k, a, b, 0)) {
        *earlier = a;
        return b;
      }
  }
  return -1;
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

static const char *const strategy_names[] = {"none", "loop", "reduce", "split reduce", "row", "columns"};
static const char *const tail_names[] = {"none", "scalar", "masked"};

static void print_phase_schedule(StrBuf *sb, const Kernel *k, const KernelSchedule *s, int p, const char *prefix) {
  const KernelPhaseSchedule *ps = &s->phases[p];
  KernelBlock block = k->kind == KERNEL_ROW ? k->phase_blocks[p] : k->kind == KERNEL_REDUCE ? KBLOCK_REDUCE : KBLOCK_PRE;
  strbuf_printf(sb, "%s  phase %d %s: ", prefix, p, block_names[block]);
  if (!ps->lanes) {
    strbuf_printf(sb, "scalar, sequential\n");
    return;
  }
  if (s->strategy == KSCHED_COLUMNS) {
    strbuf_printf(sb, "SIMD across %d loop points (f%d lanes), reduced elements in order", ps->lanes, ps->lane_bits);
    if (block == KBLOCK_REDUCE)
      strbuf_printf(sb, ", %d accumulator vector%s", ps->accumulators, ps->accumulators == 1 ? "" : "s");
    strbuf_printf(sb, ", tail %s", tail_names[ps->tail]);
    if (ps->in_previous_loop) strbuf_printf(sb, ", in phase %d's loop (one pass over the rows)", p - 1);
    strbuf_printf(sb, "\n");
    return;
  }
  strbuf_printf(sb, "SIMD %d f%d lanes, unroll %d", ps->lanes, ps->lane_bits, ps->unroll);
  if (block == KBLOCK_REDUCE)
    strbuf_printf(sb, ", %d accumulator%s", ps->accumulators, ps->accumulators == 1 ? "" : "s");
  if (ps->rerun_exact && ps->rerun_on_zero)
    strbuf_printf(sb, " (a NaN or zero test per row, rerun in one accumulator's order when hit)");
  else if (ps->rerun_exact)
    strbuf_printf(sb, " (NaN lanes or'ed and tested once per row, no blends; the row rerun with them when hit)");
  strbuf_printf(sb, ", tail %s", tail_names[ps->tail]);
  if (p + 1 < k->phase_count && s->phases[p + 1].reuse >= 0)
    strbuf_printf(sb, ", stores %%%d to the %s for phase %d", s->phases[p + 1].reuse,
                  s->phases[p + 1].reuse_in_frame ? "row buffer" : "output", p + 1);
  if (ps->reuse_as >= 0)
    strbuf_printf(sb, ", reads %%%d back from the %s (%%%d of phase %d)", ps->reuse_as,
                  ps->reuse_in_frame ? "row buffer" : "output", ps->reuse, p - 1);
  if (ps->prefetch_row_bytes) strbuf_printf(sb, ", prefetches the next row (+%d bytes)", ps->prefetch_row_bytes);
  if (ps->stream_stores) strbuf_printf(sb, ", non-temporal stores on aligned rows");
  if (ps->in_next_row) strbuf_printf(sb, ", runs in the next row's phase 0 loop (its divides beside that row's reads)");
  strbuf_printf(sb, "\n");
}

void print_kernel_schedule(StrBuf *sb, const Kernel *k, const KernelSchedule *s, const char *prefix) {
  if (s->strategy == KSCHED_NONE) return;
  int phases = k->kind == KERNEL_ROW ? k->phase_count : 1;
  strbuf_printf(sb, "%sschedule for %s: %s", prefix, s->target ? s->target : "?", strategy_names[s->strategy]);
  if (k->kind == KERNEL_ROW) strbuf_printf(sb, ", %d phases", phases);
  if (s->strategy == KSCHED_SPLIT_REDUCE) strbuf_printf(sb, ", split into %lld chunks", (long long)s->split_chunks);
  if (s->threads_per_block) strbuf_printf(sb, ", %d threads per block", s->threads_per_block);
  strbuf_printf(sb, "\n");
  for (int p = 0; p < phases; p++) print_phase_schedule(sb, k, s, p, prefix);
}

bool kernel_schedule_equal(const KernelSchedule *a, const KernelSchedule *b) {
  if (a->strategy != b->strategy || a->split_chunks != b->split_chunks || a->threads_per_block != b->threads_per_block ||
      (a->target != b->target && (!a->target || !b->target || strcmp(a->target, b->target) != 0)))
    return false;
  for (int p = 0; p < AXLE_MAX_RANK; p++) {
    const KernelPhaseSchedule *x = &a->phases[p], *y = &b->phases[p];
    if (x->lanes != y->lanes || x->lane_bits != y->lane_bits || x->unroll != y->unroll ||
        x->accumulators != y->accumulators || x->rerun_exact != y->rerun_exact ||
        x->rerun_on_zero != y->rerun_on_zero || x->tail != y->tail || x->reuse != y->reuse || x->reuse_as != y->reuse_as ||
        x->reuse_in_frame != y->reuse_in_frame || x->stream_stores != y->stream_stores ||
        x->in_previous_loop != y->in_previous_loop || x->prefetch_row_bytes != y->prefetch_row_bytes ||
        x->in_next_row != y->in_next_row)
      return false;
  }
  return true;
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
  print_kernel_schedule(sb, k, &k->schedule, "    ");
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
    if (k->kind != KERNEL_LOOP) strbuf_printf(sb, "%s", op->invariant ? "inv " : "    ");
    print_op(sb, op, i);
    /* Each run of ops is labelled with the HLO instruction it came from. */
    if (op->origin && op->origin != last_origin) strbuf_printf(sb, "    ; %s", op->origin->name);
    last_origin = op->origin;
    strbuf_printf(sb, "\n");
  }
}
