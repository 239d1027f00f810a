/* Kernels that compile to the same code: what lets a code generator compile
 * a kernel once for every fusion that lowers to it (an unrolled model's
 * layers fuse alike, and each layer's fusion is the same kernel reading
 * other buffers).
 *
 * Two kernels compile alike when everything but their names and the
 * instructions their buffers come from is the same: the iteration space,
 * the accumulators, the phases, every buffer's shape and layout, and every
 * op. An HLO op's origin is compared by what a code generator may read from
 * it (its opcode, shape and attributes: reduce-precision's bit counts),
 * never by identity. A new field of Kernel, KernelOp or KernelBuffer needs a line
 * here (the static_asserts say so), or two kernels that differ in it would
 * share one compiled code. The schedule counts: kernels scheduled apart
 * compile apart. */
#include <assert.h>
#include <string.h>

#include "ir/kernel/kernel.h"

static_assert(sizeof(Kernel) == 472 + sizeof(KernelSchedule), "Kernel changed: update kernel_same_code and kernel_code_hash");
static_assert(sizeof(KernelOp) == 136, "KernelOp changed: update kernel_same_code and kernel_code_hash");
static_assert(sizeof(KernelSchedule) == 672 && sizeof(KernelPhaseSchedule) == 40,
              "KernelSchedule changed: update kernel_schedule_equal (kernel.c)");
static_assert(sizeof(KernelBuffer) == sizeof(Shape) + 24, "KernelBuffer changed: update kernel_same_code");

static bool origins_alike(const Instruction *a, const Instruction *b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->opcode == b->opcode && shape_identical(&a->shape, &b->shape) && attrs_equal(&a->attrs, &b->attrs);
}

static bool ops_alike(const KernelOp *a, const KernelOp *b) {
  if (a->kop != b->kop || a->block != b->block || a->phase != b->phase || a->type != b->type || a->op != b->op ||
      a->direction != b->direction || a->compare_type != b->compare_type || a->dim != b->dim ||
      a->buffer != b->buffer || a->acc != b->acc || a->arg_count != b->arg_count || a->invariant != b->invariant ||
      memcmp(&a->value, &b->value, sizeof a->value) != 0)
    return false;
  for (int i = 0; i < a->arg_count; i++)
    if (a->args[i] != b->args[i]) return false;
  /* A load's or a store's origin names the instruction read or written,
   * which differs between kernels of the same code (parameter(0) and
   * parameter(1)); only an HLO op's origin carries what code may read. */
  return a->kop != KOP_HLO || origins_alike(a->origin, b->origin);
}

static bool buffers_alike(const KernelBuffer *a, const KernelBuffer *b, int count) {
  for (int i = 0; i < count; i++)
    if (!shape_identical(&a[i].shape, &b[i].shape) || a[i].output_index != b[i].output_index ||
        (a[i].constant == NULL) != (b[i].constant == NULL))
      return false;
  return true;
}

static bool dims_equal(const int64_t *a, const int64_t *b, int rank) {
  return rank == 0 || memcmp(a, b, sizeof *a * (size_t)rank) == 0;
}

bool kernel_same_code(const Kernel *a, const Kernel *b) {
  if (a->kind != b->kind || a->input_count != b->input_count || a->output_count != b->output_count ||
      a->rank != b->rank || a->reduce_rank != b->reduce_rank || a->acc_count != b->acc_count ||
      a->phase_count != b->phase_count || a->op_count != b->op_count)
    return false;
  if (!dims_equal(a->dims, b->dims, a->rank) || !dims_equal(a->reduce_dims, b->reduce_dims, a->reduce_rank) ||
      memcmp(a->acc_types, b->acc_types, sizeof a->acc_types[0] * (size_t)a->acc_count) != 0 ||
      memcmp(a->phase_blocks, b->phase_blocks, sizeof a->phase_blocks[0] * (size_t)a->phase_count) != 0)
    return false;
  if (!kernel_schedule_equal(&a->schedule, &b->schedule)) return false;
  if (!origins_alike(a->origin, b->origin) || !buffers_alike(a->inputs, b->inputs, a->input_count) ||
      !buffers_alike(a->outputs, b->outputs, a->output_count))
    return false;
  for (int i = 0; i < a->op_count; i++)
    if (!ops_alike(&a->ops[i], &b->ops[i])) return false;
  return true;
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

uint64_t kernel_code_hash(const Kernel *k) {
  uint64_t h = mix((uint64_t)k->kind, (uint64_t)k->op_count);
  h = mix(mix(h, (uint64_t)k->input_count), (uint64_t)k->output_count);
  h = mix(h, (uint64_t)k->schedule.strategy << 8 | (uint64_t)k->schedule.phases[0].lanes);
  for (int i = 0; i < k->rank; i++) h = mix(h, (uint64_t)k->dims[i]);
  for (int i = 0; i < k->reduce_rank; i++) h = mix(h, (uint64_t)k->reduce_dims[i]);
  for (int i = 0; i < k->op_count; i++) {
    const KernelOp *op = &k->ops[i];
    h = mix(h, (uint64_t)op->kop << 32 | (uint64_t)op->op << 8 | (uint64_t)op->type);
    for (int j = 0; j < op->arg_count; j++) h = mix(h, (uint64_t)op->args[j]);
  }
  return h;
}
