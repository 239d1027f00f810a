/* Pass "canonicalize-convolutions": every convolution reads and writes its
 * dims in one order, dim_labels b01f_01io->b01f (NHWC / HWIO / NHWC for two
 * spatial dims):
 *
 *   input  [batch, spatial 0..S-1, feature]
 *   kernel [spatial 0..S-1, input feature, output feature]
 *   result [batch, spatial 0..S-1, feature]
 *
 * the order XLA's CPU convolution canonicalization picks, and the one the
 * backends' products read with the least work: a result row (batch entry,
 * position) is a GEMM row, the kernel a [taps * C, O] matrix.
 *
 * As in canonicalize-dots (canonicalize_dots.c), each transpose to that
 * order is a bitcast whose layout is the operand's own layout permuted, so
 * the bytes stay where they are: the backends find every stride where they
 * found it before (an NCHW input is still read plane by plane, an NCHW
 * result still written position-minor), and no copy is made. The result is
 * made in the canonical order over the original result's bytes, and a
 * bitcast gives its users the dims they read before. The window, the group
 * counts and each sum's order are unchanged: every value is bit for bit
 * what it was.
 *
 * Convolutions inside fusion bodies (fusions given in the input) are
 * rewritten the same way, inside the body: its parameters and its root
 * keep their shapes (a root convolution becomes the relabel back), and
 * the program stage reads a relabelled parameter where it lies
 * (program_fused_operand, src/opt/program.c).
 *
 * Left alone: operands or results with packed (E(n)) or dynamic dims, and
 * dim_labels that are no permutation (the verifier's to report).
 *
 * requires: verified. breaks: nothing (new instructions sit beside the
 * convolution they replace). */
#include <string.h>

#include "ir/conv_plan.h"
#include "opt/opt.h"

static bool relabels(const Shape *s) { return !shape_is_tuple(s) && !s->element_size_bits && !s->dynamic_dims; }

/* order[0..rank): first, spatial[0..count), last. */
static void role_order(int64_t *order, int64_t first, const int64_t *spatial, int count, int64_t last) {
  order[0] = first;
  for (int s = 0; s < count; s++) order[1 + s] = spatial[s];
  order[count + 1] = last;
}

static bool is_identity(const int64_t *order, int rank) {
  for (int i = 0; i < rank; i++)
    if (order[i] != i) return false;
  return true;
}

/* Whether order holds each of 0..rank-1 once. */
static bool is_permutation(const int64_t *order, int rank) {
  bool seen[AXLE_MAX_RANK] = {0};
  for (int i = 0; i < rank; i++) {
    if (order[i] < 0 || order[i] >= rank || seen[order[i]]) return false;
    seen[order[i]] = true;
  }
  return true;
}

/* conv in canonical form, in its place; false when it already was (or is
 * left alone). */
static bool canonicalize_convolution(Computation *c, Instruction *conv) {
  Instruction *input = conv->operands[0], *kernel = conv->operands[1];
  const ConvDims *cd = attrs_conv(&conv->attrs);
  int rank = conv->shape.rank, count = cd->spatial_count;
  if (!relabels(&input->shape) || !relabels(&kernel->shape) || !relabels(&conv->shape) || count != rank - 2 ||
      input->shape.rank != rank || kernel->shape.rank != rank)
    return false;
  int64_t input_order[AXLE_MAX_RANK], kernel_order[AXLE_MAX_RANK], result_order[AXLE_MAX_RANK];
  role_order(input_order, cd->input_batch, cd->input_spatial, count, cd->input_feature);
  /* The kernel's roles in canonical order: spatial dims, then in, out. */
  for (int s = 0; s < count; s++) kernel_order[s] = cd->kernel_spatial[s];
  kernel_order[count] = cd->kernel_input_feature;
  kernel_order[count + 1] = cd->kernel_output_feature;
  role_order(result_order, cd->output_batch, cd->output_spatial, count, cd->output_feature);
  if (!is_permutation(input_order, rank) || !is_permutation(kernel_order, rank) ||
      !is_permutation(result_order, rank))
    return false;
  if (is_identity(input_order, rank) && is_identity(kernel_order, rank) && is_identity(result_order, rank))
    return false;
  Instruction *operands[2] = {
      is_identity(input_order, rank) ? input : relabel_instruction(c, conv, input, input_order),
      is_identity(kernel_order, rank) ? kernel : relabel_instruction(c, conv, kernel, kernel_order)};
  ConvDims canonical = conv_dims_canonical(count);
  Attrs attrs = conv->attrs;
  attrs.conv = &canonical;
  bool result_canonical = is_identity(result_order, rank);
  Shape result = result_canonical ? conv->shape : relabel_shape(&conv->shape, result_order);
  Instruction *made =
      computation_add_instruction(c, OP_CONVOLUTION, operands, 2, NULL, 0, &attrs, &result, conv->name);
  made->metadata = conv->metadata;
  made->loc = conv->loc;
  computation_move_before(c, made, conv);
  /* The users read the result in its old dims: a bitcast back, over the
   * same bytes (none when the result was in canonical order already). */
  Instruction *back = made;
  if (!result_canonical) {
    Attrs none = {0};
    back = computation_add_instruction(c, OP_BITCAST, &made, 1, NULL, 0, &none, &conv->shape, NULL);
    back->metadata = conv->metadata;
    back->loc = conv->loc;
    computation_move_before(c, back, conv);
  }
  instruction_replace_all_uses(conv, back);
  /* The convolution keeps its name (kernels, dumps and messages are named
   * after it): free again once the old one is gone, and still the module's. */
  const char *name = conv->name;
  computation_remove_instruction(c, conv);
  made->name = name;
  return true;
}

bool canonicalize_convolutions(Module *m, OptContext *ctx, bool *failed, Status *st) {
  (void)ctx, (void)failed, (void)st;
  bool changed = false;
  for (int k = 0; k < m->computation_count; k++) {
    Computation *c = m->computations[k];
    bool has_convolution = false;
    for (int i = 0; i < c->instruction_count && !has_convolution; i++)
      has_convolution = c->instructions[i]->opcode == OP_CONVOLUTION;
    if (!has_convolution) continue;
    for (int i = 0; i < c->instruction_count; i++) {
      Instruction *inst = c->instructions[i];
      if (inst->opcode == OP_CONVOLUTION && inst->operand_count == 2 && inst->attrs.conv &&
          canonicalize_convolution(c, inst))
        changed = true;
    }
  }
  return changed;
}
