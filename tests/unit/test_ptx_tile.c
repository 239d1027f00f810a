/* The shared-memory tile kernels (src/emit_ptx/ptx_tile.c): column
 * reductions (reduce.column) and transposes (transpose.tile).
 *
 * Each case is a small HLO module whose root is lowered to a kernel,
 * written as PTX for sm_80, run on the host's SIMT simulator
 * (tests/fake_cuda/ptx_simulate.h) on random inputs and compared with the
 * kernel interpreter (kernel_eval): transposes bit for bit (they only move
 * values), column reductions within R + 1 roundings of the type (R the
 * reduced length: the slices add in another order), integers exactly.
 * The shapes are chosen odd: 1x1, 33x65, edges that are not multiples of
 * 32, a middle reduced dimension, more tiles than one block. The PTX is
 * also assembled by ptxas for sm_80 and sm_90a (skipped with a message
 * where ptxas is missing). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit_ptx/ptx_kernel.h"
#include "opt/lower.h"
#include "corpus_walk.h"
#include "tool_files.h"
#include "gpu_test_support.h"
#include "../test.h"

static char work_dir[64], ptxas[4096];

/* The root of hlo: its strategy is want_strategy, it assembles for sm_80
 * and sm_90a, and it computes what the interpreter computes. */
static void tile_case_check(const char *label, const char *hlo, const char *want_strategy) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(hlo, strlen(hlo), label, &st);
  EXPECT(m != NULL, "%s: %s", label, st.message);
  if (!m) return;
  Kernel *k = lower_to_kernel(m->entry->root, &st);
  EXPECT(k != NULL, "%s: %s", label, st.message);
  for (int major = 8; k && major <= 9; major++) {
    PtxTarget target;
    ptx_target_for_device(major, 0, &target, &st);
    PtxBuilder b;
    ptx_builder_init(&b, &target);
    PtxKernelShape shape;
    bool emitted = ptx_kernel_emit(&b, k, "kernel", &shape, &st);
    EXPECT(emitted, "%s: %s", label, st.message);
    if (emitted) EXPECT(!strcmp(shape.strategy, want_strategy), "%s: strategy %s, wanted %s", label, shape.strategy, want_strategy);
    char *log = NULL, name[128];
    snprintf(name, sizeof name, "%s_%s", label, target.name);
    if (emitted && ptxas[0])
      EXPECT(ptxas_run(ptxas, work_dir, name, ptx_builder_text(&b), target.name, &log),
             "%s: ptxas -arch=%s:\n%.3000s\n%s", label, target.name, log ? log : "", ptx_builder_text(&b));
    free(log);
    if (emitted && major == 8) {
      uint64_t state = 11;
      Literal *inputs[8] = {0};
      /* a constant (a reduce's init) keeps its value: the emitter reads it when compiling */
      for (int i = 0; i < k->input_count && i < 8; i++) {
        const Instruction *source = k->inputs[i].source;
        const Literal *fixed = k->inputs[i].constant ? k->inputs[i].constant
                               : source && source->opcode == OP_CONSTANT ? source->attrs.literal : NULL;
        inputs[i] = fixed ? literal_clone(fixed) : corpus_random_literal(&k->inputs[i].shape, &state, 3);
      }
      int64_t reduced = 1;
      for (int d = 0; d < k->reduce_rank; d++) reduced *= k->reduce_dims[d];
      char why[512] = "";
      /* transposes only move values: the same bits; a column reduction adds in another order */
      OutputTolerance tolerance = {.sum_roundings = k->reduce_rank && reduced > 0 ? reduced + 1 : 0};
      SimulateOutcome outcome = kernel_simulate(k, ptx_builder_text(&b), (unsigned)shape.blocks,
                                                (unsigned)shape.block_threads, inputs, &tolerance, why, sizeof why);
      EXPECT(outcome == SIMULATE_MATCHED, "%s (%s): %s", label, shape.strategy, why);
      for (int i = 0; i < k->input_count && i < 8; i++) literal_free(inputs[i]);
    }
    ptx_builder_free(&b);
  }
  kernel_free(k);
  module_free(m);
}

/* A module reducing TYPE[IN] over DIMS to TYPE[OUT] with OP from INIT. */
static void reduce_case_check(const char *label, const char *type, const char *in, const char *out, const char *dims,
                              const char *op, const char *init, const char *want_strategy) {
  char hlo[1024];
  snprintf(hlo, sizeof hlo,
           "HloModule %s\nr { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ROOT s = %s[] %s(a, b) }\n"
           "ENTRY e { x = %s[%s] parameter(0)\n c = %s[] constant(%s)\n"
           "  ROOT y = %s[%s] reduce(x, c), dimensions={%s}, to_apply=r }\n",
           label, type, type, type, op, type, in, type, init, type, out, dims);
  tile_case_check(label, hlo, want_strategy);
}

/* ---- column reductions ---- */

TEST(a_column_sum_of_33x65_takes_column_tiles_and_matches_within_the_reduction_tolerance) {
  reduce_case_check("column_33x65", "f32", "33,65", "65", "0", "add", "0", "reduce.column");
}

TEST(a_column_sum_of_one_element_takes_one_slice_and_matches) {
  reduce_case_check("column_1x1", "f32", "1,1", "1", "0", "add", "0", "reduce.column");
}

TEST(a_middle_reduced_dimension_of_three_is_a_column_reduction_and_matches) {
  reduce_case_check("column_middle", "f32", "5,70,33", "5,33", "1", "add", "0", "reduce.column");
}

TEST(a_column_reduction_over_two_leading_dimensions_matches) {
  reduce_case_check("column_two_dims", "f32", "3,41,40", "40", "0,1", "add", "0", "reduce.column");
}

TEST(an_integer_column_maximum_over_more_outputs_than_one_block_is_exact) {
  reduce_case_check("column_max_s32", "s32", "100,77", "77", "0", "maximum", "-2147483648", "reduce.column");
}

TEST(an_f64_column_sum_keeps_its_partials_in_64_bit_shared_slots) {
  reduce_case_check("column_f64", "f64", "37,45", "45", "0", "add", "0", "reduce.column");
}

TEST(a_column_maximum_over_an_empty_dimension_gives_the_init) {
  /* The kernel loads nothing (the lowering reads an empty value as a zero),
   * so no load along an output dimension asks for the column form. */
  reduce_case_check("column_empty", "f32", "0,5", "5", "0", "maximum", "-inf", "reduce.thread");
}

TEST(a_column_sum_from_a_non_identity_init_stays_one_thread_per_output) {
  /* each slice starting from 1 would add it eight times */
  reduce_case_check("column_init_one", "f32", "40,50", "50", "0", "add", "1", "reduce.thread");
}

TEST(a_row_sum_is_not_a_column_reduction) {
  reduce_case_check("row_sum", "f32", "8,4096", "8", "1", "add", "0", "reduce.block");
}

/* ---- transposes ---- */

TEST(a_transpose_of_33x65_goes_through_a_padded_tile_and_matches_exactly) {
  tile_case_check("transpose_33x65",
                  "HloModule t\nENTRY e { x = f32[33,65] parameter(0)\n"
                  "  ROOT y = f32[65,33] transpose(x), dimensions={1,0} }\n",
                  "transpose.tile");
}

TEST(a_copy_to_the_other_layout_is_a_tiled_transpose) {
  tile_case_check("copy_layout",
                  "HloModule t\nENTRY e { x = f32[64,48]{1,0} parameter(0)\n"
                  "  ROOT c = f32[64,48]{0,1} copy(x) }\n",
                  "transpose.tile");
}

TEST(a_three_dimensional_transpose_tiles_the_two_swapped_dims_per_leading_index) {
  tile_case_check("transpose_3d",
                  "HloModule t\nENTRY e { x = f32[3,40,50] parameter(0)\n"
                  "  ROOT y = f32[3,50,40] transpose(x), dimensions={0,2,1} }\n",
                  "transpose.tile");
}

TEST(a_transpose_with_a_dimension_between_the_swapped_ones_matches) {
  tile_case_check("transpose_around",
                  "HloModule t\nENTRY e { x = s64[20,3,45] parameter(0)\n"
                  "  ROOT y = s64[45,3,20] transpose(x), dimensions={2,1,0} }\n",
                  "transpose.tile");
}

TEST(a_fusion_adding_a_transposed_operand_to_a_direct_one_tiles_only_the_transposed) {
  tile_case_check("transpose_fusion",
                  "HloModule t\nfused { x = f16[70,40] parameter(0)\n y = f16[40,70] parameter(1)\n"
                  "  xt = f16[40,70] transpose(x), dimensions={1,0}\n ROOT s = f16[40,70] add(xt, y) }\n"
                  "ENTRY e { x = f16[70,40] parameter(0)\n y = f16[40,70] parameter(1)\n"
                  "  ROOT f = f16[40,70] fusion(x, y), kind=kLoop, calls=fused }\n",
                  "transpose.tile");
}

TEST(a_transpose_of_one_element_stays_a_plain_loop_and_matches) {
  tile_case_check("transpose_1x1",
                  "HloModule t\nENTRY e { x = f32[1,1] parameter(0)\n"
                  "  ROOT y = f32[1,1] transpose(x), dimensions={1,0} }\n",
                  "loop");
}

int main(void) {
  snprintf(work_dir, sizeof work_dir, "/tmp/axle-ptxtile-XXXXXX");
  if (!mkdtemp(work_dir)) {
    printf("FAIL test_ptx_tile_setup\n  cannot make a temporary directory\n");
    return 1;
  }
  if (!tool_find("ptxas", ptxas, sizeof ptxas)) printf("SKIP ptxas checks (no ptxas on PATH or in /usr/local/cuda/bin)\n");
  RUN(a_column_sum_of_33x65_takes_column_tiles_and_matches_within_the_reduction_tolerance);
  RUN(a_column_sum_of_one_element_takes_one_slice_and_matches);
  RUN(a_middle_reduced_dimension_of_three_is_a_column_reduction_and_matches);
  RUN(a_column_reduction_over_two_leading_dimensions_matches);
  RUN(an_integer_column_maximum_over_more_outputs_than_one_block_is_exact);
  RUN(an_f64_column_sum_keeps_its_partials_in_64_bit_shared_slots);
  RUN(a_column_maximum_over_an_empty_dimension_gives_the_init);
  RUN(a_column_sum_from_a_non_identity_init_stays_one_thread_per_output);
  RUN(a_row_sum_is_not_a_column_reduction);
  RUN(a_transpose_of_33x65_goes_through_a_padded_tile_and_matches_exactly);
  RUN(a_copy_to_the_other_layout_is_a_tiled_transpose);
  RUN(a_three_dimensional_transpose_tiles_the_two_swapped_dims_per_leading_index);
  RUN(a_transpose_with_a_dimension_between_the_swapped_ones_matches);
  RUN(a_fusion_adding_a_transposed_operand_to_a_direct_one_tiles_only_the_transposed);
  RUN(a_transpose_of_one_element_stays_a_plain_loop_and_matches);
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", work_dir);
  if (!getenv("AXLE_KEEP_PTX") && system(command) != 0) printf("  (could not remove %s)\n", work_dir);
  return test_summary();
}
