/* The cleanup passes: simplify, fold-constants, cse and dce.
 *
 * Each rule gets a small module written inline; the test runs the pass (the
 * verifier after it), then dce to sweep what the rule left dead, and checks
 * the structure that results: which instruction the root now is, how many
 * of an opcode remain. The last tests run the four passes over the whole
 * corpus and check that every module computes the same bits as before. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"
#include "runtime/npy.h"
#include "../test.h"

/* ---- helpers ---- */

static Module *parse_text(const char *text) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline.hlo", &st);
  if (!m) status_print(&st, stdout);
  EXPECT(m != NULL, "the inline module parses");
  return m;
}

/* Runs one pass and the verifier after it; a broken module is a failure. */
static bool run_checked(Module *m, OptContext *ctx, PassFn *pass, const char *name) {
  bool failed = false;
  Status st;
  status_clear(&st);
  bool changed = pass(m, ctx, &failed, &st);
  EXPECT(!failed, "pass %s failed: %s", name, st.message);
  status_clear(&st);
  bool ok = verify_module(m, &st);
  EXPECT(ok, "module broken after %s: %s", name, st.message);
  return changed;
}

/* Parses text and runs simplify then dce; NULL when it does not parse. */
static Module *simplified(const char *text) {
  Module *m = parse_text(text);
  if (!m) return NULL;
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  run_checked(m, &ctx, simplify_module, "simplify");
  run_checked(m, &ctx, eliminate_dead_code, "dce");
  opt_context_free(&ctx);
  return m;
}

static int count_opcode(const Computation *c, Opcode op) {
  int n = 0;
  for (int i = 0; i < c->instruction_count; i++) n += c->instructions[i]->opcode == op;
  return n;
}

static const Instruction *entry_root(const Module *m) { return m->entry->root; }

/* The root is entry parameter `number`. */
static bool root_is_parameter(const Module *m, int number) {
  const Instruction *r = entry_root(m);
  return r->opcode == OP_PARAMETER && r->attrs.parameter_number == number;
}

#define EXPECT_ROOT_OPCODE(m, op) \
  EXPECT(entry_root(m)->opcode == (op), "root is %s, expected %s", opcode_name(entry_root(m)->opcode), opcode_name(op))

/* A one-line entry computation: "ENTRY main { x = f32[4] parameter(0) BODY }". */
static Module *simplified_entry(const char *params_and_body) {
  char text[4096];
  snprintf(text, sizeof text, "HloModule t\nENTRY main {\n%s\n}\n", params_and_body);
  return simplified(text);
}

/* ---- simplify: elementwise identities ---- */

TEST(rule_float_add_negative_zero_is_identity) {
  Module *m = simplified_entry("x = f32[4] parameter(0)\n z = f32[] constant(-0)\n"
                               " zs = f32[4] broadcast(z), dimensions={}\n ROOT r = f32[4] add(zs, x)");
  EXPECT(m && root_is_parameter(m, 0), "x + (-0) is x");
  module_free(m);
}

TEST(rule_float_add_positive_zero_is_kept) {
  /* -0 + +0 is +0: replacing it by x would change the sign of zero. */
  Module *m = simplified_entry("x = f32[4] parameter(0)\n z = f32[] constant(0)\n"
                               " zs = f32[4] broadcast(z), dimensions={}\n ROOT r = f32[4] add(x, zs)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_ADD);
  module_free(m);
}

TEST(rule_integer_add_zero_is_identity) {
  Module *m = simplified_entry("x = s32[4] parameter(0)\n z = s32[4] constant({0, 0, 0, 0})\n"
                               " ROOT r = s32[4] add(x, z)");
  EXPECT(m && root_is_parameter(m, 0), "x + 0 is x for integers");
  module_free(m);
}

TEST(rule_multiply_one_is_identity) {
  Module *m = simplified_entry("x = f32[2,3] parameter(0)\n one = f32[] constant(1)\n"
                               " ones = f32[2,3] broadcast(one), dimensions={}\n ROOT r = f32[2,3] multiply(ones, x)");
  EXPECT(m && root_is_parameter(m, 0), "1 * x is x");
  module_free(m);
}

TEST(rule_integer_multiply_zero_is_zero) {
  Module *m = simplified_entry("x = s32[4] parameter(0)\n z = s32[] constant(0)\n"
                               " zs = s32[4] broadcast(z), dimensions={}\n ROOT r = s32[4] multiply(x, zs)");
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_BROADCAST);
    EXPECT(count_opcode(m->entry, OP_MULTIPLY) == 0, "the multiply is gone");
  }
  module_free(m);
}

TEST(rule_float_multiply_zero_is_not_simplified) {
  /* NaN * 0 is NaN and -1 * 0 is -0: x * 0 is not 0 for floats. */
  Module *m = simplified_entry("x = f32[4] parameter(0)\n z = f32[] constant(0)\n"
                               " zs = f32[4] broadcast(z), dimensions={}\n ROOT r = f32[4] multiply(x, zs)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_MULTIPLY);
  module_free(m);
}

TEST(rule_subtract_zero_and_divide_one_are_identity) {
  Module *m = simplified_entry("x = f32[4] parameter(0)\n z = f32[4] constant({0, 0, 0, 0})\n"
                               " one = f32[4] constant({1, 1, 1, 1})\n d = f32[4] subtract(x, z)\n"
                               " ROOT r = f32[4] divide(d, one)");
  EXPECT(m && root_is_parameter(m, 0), "(x - 0) / 1 is x");
  module_free(m);
}

TEST(rule_subtract_from_zero_is_kept) {
  Module *m = simplified_entry("x = f32[4] parameter(0)\n z = f32[4] constant({0, 0, 0, 0})\n"
                               " ROOT r = f32[4] subtract(z, x)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_SUBTRACT);
  module_free(m);
}

TEST(rule_max_with_lowest_and_min_with_highest_are_identity) {
  Module *m = simplified_entry("x = f32[4] parameter(0)\n lo = f32[] constant(-inf)\n"
                               " los = f32[4] broadcast(lo), dimensions={}\n hi = f32[] constant(inf)\n"
                               " his = f32[4] broadcast(hi), dimensions={}\n a = f32[4] maximum(x, los)\n"
                               " ROOT r = f32[4] minimum(his, a)");
  EXPECT(m && root_is_parameter(m, 0), "min(+inf, max(x, -inf)) is x");
  module_free(m);
}

TEST(rule_and_with_all_ones_and_or_with_zero_are_identity) {
  Module *m = simplified_entry("x = u8[4] parameter(0)\n ones = u8[] constant(255)\n"
                               " b = u8[4] broadcast(ones), dimensions={}\n z = u8[] constant(0)\n"
                               " zs = u8[4] broadcast(z), dimensions={}\n a = u8[4] and(x, b)\n"
                               " o = u8[4] or(zs, a)\n ROOT r = u8[4] xor(o, zs)");
  EXPECT(m && root_is_parameter(m, 0), "((x & 255) | 0) ^ 0 is x");
  module_free(m);
}

TEST(rule_pred_and_true_is_identity) {
  Module *m = simplified_entry("p = pred[3] parameter(0)\n t = pred[] constant(true)\n"
                               " ts = pred[3] broadcast(t), dimensions={}\n ROOT r = pred[3] and(ts, p)");
  EXPECT(m && root_is_parameter(m, 0), "true & p is p");
  module_free(m);
}

TEST(rule_value_identities_skip_complex_and_minifloats) {
  /* complex: (inf + 0i) * 0 is NaN; f8e4m3fn has no infinity, so its
   * "-inf" is NaN and max(x, NaN) is not x. */
  Module *m = simplified_entry("x = c64[2] parameter(0)\n z = c64[2] constant({(0, 0), (0, 0)})\n"
                               " ROOT r = c64[2] multiply(x, z)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_MULTIPLY);
  module_free(m);
  m = simplified_entry("x = f8e4m3fn[2] parameter(0)\n lo = f8e4m3fn[] constant(-inf)\n"
                       " los = f8e4m3fn[2] broadcast(lo), dimensions={}\n ROOT r = f8e4m3fn[2] maximum(x, los)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_MAXIMUM);
  module_free(m);
}

TEST(rule_sub_byte_integer_bounds_are_identities) {
  Module *m = simplified_entry("x = s4[4] parameter(0)\n lo = s4[] constant(-8)\n"
                               " los = s4[4] broadcast(lo), dimensions={}\n hi = s4[] constant(7)\n"
                               " his = s4[4] broadcast(hi), dimensions={}\n a = s4[4] maximum(x, los)\n"
                               " ROOT r = s4[4] minimum(a, his)");
  EXPECT(m && root_is_parameter(m, 0), "min(max(x, -8), 7) is x for s4");
  module_free(m);
}

TEST(rule_min_max_of_equal_operands_is_operand) {
  Module *m = simplified_entry("x = f32[4] parameter(0)\n a = f32[4] maximum(x, x)\n ROOT r = f32[4] minimum(a, a)");
  EXPECT(m && root_is_parameter(m, 0), "min(max(x, x), ...) is x");
  module_free(m);
}

TEST(rule_integer_subtract_self_is_zero) {
  Module *m = simplified_entry("x = s32[4] parameter(0)\n ROOT r = s32[4] subtract(x, x)");
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_BROADCAST);
    const Instruction *c = entry_root(m)->operands[0];
    EXPECT(c->opcode == OP_CONSTANT && literal_get_s64(c->attrs.literal, 0) == 0, "x - x is 0");
  }
  module_free(m);
}

TEST(rule_float_subtract_self_is_kept) {
  /* inf - inf is NaN, not 0. */
  Module *m = simplified_entry("x = f32[4] parameter(0)\n ROOT r = f32[4] subtract(x, x)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_SUBTRACT);
  module_free(m);
}

TEST(rule_integer_compare_with_itself_is_constant) {
  Module *m = simplified_entry("x = s32[] parameter(0)\n ROOT r = pred[] compare(x, x), direction=LE");
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_CONSTANT);
    EXPECT(literal_get_s64(entry_root(m)->attrs.literal, 0) == 1, "x <= x is true");
  }
  module_free(m);
}

TEST(rule_float_compare_with_itself_is_kept) {
  /* NaN == NaN is false. */
  Module *m = simplified_entry("x = f32[] parameter(0)\n ROOT r = pred[] compare(x, x), direction=EQ");
  if (m) EXPECT_ROOT_OPCODE(m, OP_COMPARE);
  module_free(m);
}

/* with_sharding_constraint's custom-call is its operand on one device; a
 * layout that differs becomes a copy; other custom-calls stay. */
TEST(rule_sharding_custom_call_is_its_operand) {
  Module *m = simplified_entry("x = f32[4,2]{1,0} parameter(0)\n"
                               " ROOT s = f32[4,2]{1,0} custom-call(x), custom_call_target=\"Sharding\", "
                               "sharding={devices=[2,1]<=[2]}");
  EXPECT(m && root_is_parameter(m, 0), "Sharding(x) is x");
  module_free(m);
  m = simplified_entry("x = f32[4,2]{1,0} parameter(0)\n"
                       " ROOT s = f32[4,2]{0,1} custom-call(x), custom_call_target=\"SPMDFullToShardShape\", "
                       "sharding={manual}");
  if (m) EXPECT_ROOT_OPCODE(m, OP_COPY);
  module_free(m);
  m = simplified_entry("x = f32[4,2] parameter(0)\n"
                       " ROOT s = f32[4,2] custom-call(x), custom_call_target=\"my_kernel\"");
  if (m) EXPECT_ROOT_OPCODE(m, OP_CUSTOM_CALL);
  module_free(m);
}

TEST(rule_double_negation_is_identity) {
  Module *m = simplified_entry("x = s32[4] parameter(0)\n n = s32[4] negate(x)\n nn = s32[4] negate(n)\n"
                               " a = s32[4] not(nn)\n ROOT r = s32[4] not(a)");
  EXPECT(m && root_is_parameter(m, 0), "not(not(-(-x))) is x");
  module_free(m);
}

TEST(rule_select_on_constant_predicate_picks_operand) {
  Module *m = simplified_entry("a = f32[4] parameter(0)\n b = f32[4] parameter(1)\n t = pred[] constant(false)\n"
                               " ts = pred[4] broadcast(t), dimensions={}\n ROOT r = f32[4] select(ts, a, b)");
  EXPECT(m && root_is_parameter(m, 1), "select(false, a, b) is b");
  module_free(m);
}

TEST(rule_select_of_same_operands_is_operand) {
  Module *m = simplified_entry("p = pred[4] parameter(0)\n a = f32[4] parameter(1)\n"
                               " ROOT r = f32[4] select(p, a, a)");
  EXPECT(m && root_is_parameter(m, 1), "select(p, a, a) is a");
  module_free(m);
}

/* ---- simplify: shape changes ---- */

TEST(rule_broadcast_of_broadcast_composes) {
  Module *m = simplified_entry("x = f32[3] parameter(0)\n b = f32[2,3] broadcast(x), dimensions={1}\n"
                               " ROOT r = f32[4,2,5,3] broadcast(b), dimensions={1,3}");
  if (m) {
    const Instruction *r = entry_root(m);
    EXPECT(r->opcode == OP_BROADCAST && r->operands[0]->opcode == OP_PARAMETER, "one broadcast of x");
    EXPECT(r->attrs.dimensions.count == 1 && r->attrs.dimensions.values[0] == 3, "x lands in dimension 3");
  }
  module_free(m);
}

TEST(rule_reshape_chain_collapses_to_one) {
  Module *m = simplified_entry("x = f32[2,3,4] parameter(0)\n a = f32[6,4] reshape(x)\n"
                               " ROOT r = f32[24] reshape(a)");
  if (m) {
    const Instruction *r = entry_root(m);
    EXPECT(r->operands[0]->opcode == OP_PARAMETER, "one reshape (or bitcast) of x");
    EXPECT(count_opcode(m->entry, OP_RESHAPE) + count_opcode(m->entry, OP_BITCAST) == 1, "one left");
  }
  module_free(m);
}

TEST(rule_transpose_chain_composes_and_identity_vanishes) {
  Module *m = simplified_entry("x = f32[2,3,4] parameter(0)\n a = f32[3,4,2] transpose(x), dimensions={1,2,0}\n"
                               " ROOT r = f32[2,3,4] transpose(a), dimensions={2,0,1}");
  EXPECT(m && root_is_parameter(m, 0), "two transposes that undo each other are x");
  module_free(m);
}

TEST(rule_reshape_to_same_shape_and_convert_to_same_type_vanish) {
  Module *m = simplified_entry("x = f32[2,3] parameter(0)\n a = f32[2,3] reshape(x)\n"
                               " ROOT r = f32[2,3] convert(a)");
  EXPECT(m && root_is_parameter(m, 0), "no-op reshape and convert are x");
  module_free(m);
}

TEST(rule_convert_chain_collapses_only_when_exact) {
  Module *m = simplified_entry("x = f32[4] parameter(0)\n w = f64[4] convert(x)\n back = f32[4] convert(w)\n"
                               " h = f16[4] convert(back)\n ROOT r = f32[4] convert(h)");
  if (m) {
    const Instruction *r = entry_root(m);
    /* f32 -> f64 -> f32 is exact; f32 -> f16 -> f32 rounds, so it stays. */
    EXPECT(r->opcode == OP_CONVERT && r->operands[0]->opcode == OP_CONVERT, "the rounding pair remains");
    EXPECT(r->operands[0]->operands[0]->opcode == OP_PARAMETER, "the exact pair is gone");
  }
  module_free(m);
}

TEST(rule_integer_to_float_to_integer_is_kept) {
  /* f32 -> s8 saturates where s32 -> s8 would wrap. */
  Module *m = simplified_entry("x = s16[4] parameter(0)\n f = f32[4] convert(x)\n ROOT r = s8[4] convert(f)");
  if (m) EXPECT(entry_root(m)->operands[0]->opcode == OP_CONVERT, "two converts remain");
  module_free(m);
}

TEST(rule_slice_of_slice_composes) {
  Module *m = simplified_entry("x = f32[20] parameter(0)\n a = f32[9] slice(x), slice={[2:19:2]}\n"
                               " ROOT r = f32[3] slice(a), slice={[1:8:3]}");
  if (m) {
    const Instruction *r = entry_root(m);
    const SliceDims *s = attrs_slice(&r->attrs);
    EXPECT(r->opcode == OP_SLICE && r->operands[0]->opcode == OP_PARAMETER, "one slice of x");
    /* elements 1, 4, 7 of x[2::2] are x[4], x[10], x[16] */
    EXPECT(s->starts.values[0] == 4 && s->strides.values[0] == 6 && s->limits.values[0] == 17,
           "slice [%lld:%lld:%lld]", (long long)s->starts.values[0], (long long)s->limits.values[0],
           (long long)s->strides.values[0]);
  }
  module_free(m);
}

TEST(rule_full_slice_empty_pad_and_single_concatenate_vanish) {
  Module *m = simplified_entry("x = f32[3,4] parameter(0)\n s = f32[3,4] slice(x), slice={[0:3], [0:4]}\n"
                               " z = f32[] constant(0)\n p = f32[3,4] pad(s, z), padding=0_0x0_0\n"
                               " ROOT r = f32[3,4] concatenate(p), dimensions={0}");
  EXPECT(m && root_is_parameter(m, 0), "slice of all, pad of nothing, concatenate of one are x");
  module_free(m);
}

TEST(rule_reduce_over_no_dimensions_is_elementwise) {
  Module *m = simplified("HloModule t\nsum {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                         " ROOT s = f32[] add(a, b)\n}\nENTRY main {\n x = f32[4] parameter(0)\n"
                         " z = f32[] constant(-0)\n ROOT r = f32[4] reduce(x, z), dimensions={}, to_apply=sum\n}\n");
  EXPECT(m && root_is_parameter(m, 0), "reduce over nothing with init -0 under add is x");
  module_free(m);
  m = simplified("HloModule t\nmx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                 " ROOT s = f32[] maximum(a, b)\n}\nENTRY main {\n x = f32[4] parameter(0)\n"
                 " z = f32[] constant(1)\n ROOT r = f32[4] reduce(x, z), dimensions={}, to_apply=mx\n}\n");
  if (m) EXPECT_ROOT_OPCODE(m, OP_MAXIMUM);
  module_free(m);
}

TEST(rule_row_major_reshape_is_bitcast) {
  Module *m = simplified_entry("x = f32[2,3]{1,0} parameter(0)\n ROOT r = f32[6]{0} reshape(x)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_BITCAST);
  module_free(m);
  /* a column-major operand: reshape reorders the bytes, so it stays */
  m = simplified_entry("x = f32[2,3]{0,1} parameter(0)\n ROOT r = f32[6]{0} reshape(x)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_RESHAPE);
  module_free(m);
}

TEST(rule_transpose_that_only_relabels_is_bitcast) {
  Module *m = simplified_entry("x = f32[2,3]{1,0} parameter(0)\n ROOT r = f32[3,2]{0,1} transpose(x), dimensions={1,0}");
  if (m) EXPECT_ROOT_OPCODE(m, OP_BITCAST);
  module_free(m);
  m = simplified_entry("x = f32[2,3]{1,0} parameter(0)\n ROOT r = f32[3,2]{1,0} transpose(x), dimensions={1,0}");
  if (m) EXPECT_ROOT_OPCODE(m, OP_TRANSPOSE);
  module_free(m);
}

/* XLA's optimized sorts read float keys as integers through a bitcast. */
TEST(rule_bitcast_changing_element_type_is_bitcast_convert) {
  Module *m = simplified_entry("x = f32[] parameter(0)\n ROOT r = s32[] bitcast(x)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_BITCAST_CONVERT);
  module_free(m);
  /* new dims too: a bitcast to x's type first, then the element type */
  m = simplified_entry("x = f64[2,3]{1,0} parameter(0)\n ROOT r = u64[6]{0} bitcast(x)");
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_BITCAST_CONVERT);
    const Instruction *inner = entry_root(m)->operands[0];
    EXPECT(inner->opcode == OP_BITCAST && inner->shape.type == TYPE_F64 && inner->shape.rank == 1,
           "the relabelling is an f64[6] bitcast, got %s %s", opcode_name(inner->opcode), type_name(inner->shape.type));
  }
  module_free(m);
  /* the same type: a plain relabelling stays a bitcast */
  m = simplified_entry("x = f32[2,3]{1,0} parameter(0)\n ROOT r = f32[6]{0} bitcast(x)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_BITCAST);
  module_free(m);
}

TEST(rule_dot_absorbs_transposed_operands) {
  Module *m = simplified_entry("a = f32[3,2] parameter(0)\n b = f32[3,4] parameter(1)\n"
                               " t = f32[2,3] transpose(a), dimensions={1,0}\n"
                               " ROOT r = f32[2,4] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  if (m) {
    const Instruction *r = entry_root(m);
    EXPECT(r->opcode == OP_DOT && r->operands[0]->opcode == OP_PARAMETER, "the dot reads a directly");
    const DotDims *d = attrs_dot(&r->attrs);
    EXPECT(d->lhs_contracting.count == 1 && d->lhs_contracting.values[0] == 0, "contracts a's dimension 0");
  }
  module_free(m);
}

TEST(rule_dot_keeps_transpose_that_reorders_free_dimensions) {
  Module *m = simplified_entry("a = f32[2,3,5] parameter(0)\n b = f32[5,4] parameter(1)\n"
                               " t = f32[3,2,5] transpose(a), dimensions={1,0,2}\n"
                               " ROOT r = f32[3,2,4] dot(t, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}");
  if (m) EXPECT(entry_root(m)->operands[0]->opcode == OP_TRANSPOSE, "the transpose stays");
  module_free(m);
}

TEST(rule_get_tuple_element_of_tuple_forwards) {
  Module *m = simplified_entry("a = f32[4] parameter(0)\n b = s32[] parameter(1)\n t = (f32[4], s32[]) tuple(a, b)\n"
                               " ROOT r = s32[] get-tuple-element(t), index=1");
  EXPECT(m && root_is_parameter(m, 1), "element 1 of tuple(a, b) is b");
  if (m) EXPECT(count_opcode(m->entry, OP_TUPLE) == 0, "the tuple is swept");
  module_free(m);
}

TEST(rule_tuple_of_its_elements_is_the_tuple) {
  Module *m = simplified_entry("t = (f32[4], s32[]) parameter(0)\n a = f32[4] get-tuple-element(t), index=0\n"
                               " b = s32[] get-tuple-element(t), index=1\n ROOT r = (f32[4], s32[]) tuple(a, b)");
  EXPECT(m && root_is_parameter(m, 0), "tuple(t.0, t.1) is t");
  module_free(m);
}

TEST(rule_copy_with_same_layout_and_reverse_of_reverse_vanish) {
  Module *m = simplified_entry("x = f32[2,3] parameter(0)\n c = f32[2,3] copy(x)\n"
                               " a = f32[2,3] reverse(c), dimensions={0,1}\n ROOT r = f32[2,3] reverse(a), dimensions={1,0}");
  EXPECT(m && root_is_parameter(m, 0), "reverse(reverse(copy(x))) is x");
  module_free(m);
  m = simplified_entry("x = f32[2,3]{1,0} parameter(0)\n ROOT c = f32[2,3]{0,1} copy(x)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_COPY); /* a copy that changes the layout stays */
  module_free(m);
}

TEST(rule_moved_broadcast_scalar_is_a_broadcast) {
  Module *m = simplified_entry("s = f32[] parameter(0)\n b = f32[6,4] broadcast(s), dimensions={}\n"
                               " t = f32[4,6] transpose(b), dimensions={1,0}\n r1 = f32[24] reshape(t)\n"
                               " ROOT r = f32[10] slice(r1), slice={[3:13]}");
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_BROADCAST);
    EXPECT(entry_root(m)->operands[0]->opcode == OP_PARAMETER, "of the scalar itself");
  }
  module_free(m);
}

TEST(rule_dynamic_slice_with_constant_starts_is_a_clamped_slice) {
  Module *m = simplified_entry("x = f32[10,4] parameter(0)\n i = s32[] constant(8)\n j = s32[] constant(-3)\n"
                               " ROOT r = f32[5,2] dynamic-slice(x, i, j), dynamic_slice_sizes={5,2}");
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_SLICE);
    const SliceDims *s = attrs_slice(&entry_root(m)->attrs);
    EXPECT(s->starts.values[0] == 5 && s->starts.values[1] == 0, "starts clamped to 5 and 0");
  }
  module_free(m);
}

TEST(rule_divide_by_power_of_two_is_multiply) {
  Module *m = simplified_entry("x = f32[4] parameter(0)\n c = f32[] constant(4)\n"
                               " cs = f32[4] broadcast(c), dimensions={}\n ROOT r = f32[4] divide(x, cs)");
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_MULTIPLY);
    const Instruction *k = entry_root(m)->operands[1]->operands[0];
    EXPECT(k->opcode == OP_CONSTANT && literal_get_f64(k->attrs.literal, 0) == 0.25, "by 0.25");
  }
  module_free(m);
  m = simplified_entry("x = f32[4] parameter(0)\n c = f32[] constant(3)\n"
                       " cs = f32[4] broadcast(c), dimensions={}\n ROOT r = f32[4] divide(x, cs)");
  if (m) EXPECT_ROOT_OPCODE(m, OP_DIVIDE); /* 1/3 is not exact */
  module_free(m);
}

/* ---- simplify: control flow ---- */

TEST(rule_call_is_inlined) {
  Module *m = simplified("HloModule t\nsq {\n v = f32[4] parameter(0)\n ROOT s = f32[4] multiply(v, v)\n}\n"
                         "ENTRY main {\n x = f32[4] parameter(0)\n c = f32[4] call(x), to_apply=sq\n"
                         " ROOT r = f32[4] negate(c)\n}\n");
  if (m) {
    EXPECT(count_opcode(m->entry, OP_CALL) == 0, "no call left");
    EXPECT(entry_root(m)->operands[0]->opcode == OP_MULTIPLY, "the multiply is in the entry");
    EXPECT(m->computation_count == 1, "the callee is swept (%d computations)", m->computation_count);
  }
  module_free(m);
}

TEST(rule_conditional_with_constant_selector_is_inlined) {
  Module *m = simplified("HloModule t\nb0 {\n v = f32[4] parameter(0)\n ROOT s = f32[4] negate(v)\n}\n"
                         "b1 {\n v = f32[4] parameter(0)\n ROOT s = f32[4] exponential(v)\n}\n"
                         "ENTRY main {\n x = f32[4] parameter(0)\n i = s32[] constant(7)\n"
                         " ROOT r = f32[4] conditional(i, x, x), branch_computations={b0, b1}\n}\n");
  if (m) EXPECT_ROOT_OPCODE(m, OP_EXPONENTIAL); /* out of range: the last branch */
  module_free(m);
}

TEST(rule_conditional_with_constant_pred_is_inlined) {
  Module *m = simplified("HloModule t\non_true {\n v = f32[4] parameter(0)\n ROOT s = f32[4] negate(v)\n}\n"
                         "on_false {\n v = s32[4] parameter(0)\n ROOT s = f32[4] convert(v)\n}\n"
                         "ENTRY main {\n x = f32[4] parameter(0)\n n = s32[4] parameter(1)\n p = pred[] constant(true)\n"
                         " ROOT r = f32[4] conditional(p, x, n), true_computation=on_true, false_computation=on_false\n}\n");
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_NEGATE);
    EXPECT(m->computation_count == 1, "both branches are swept");
  }
  module_free(m);
}

/* The while loops below count i from 0 to 5 over state (i, x, ...). */
static const char *loop_with_unread_state =
    "HloModule t\n"
    "cond {\n s = (s32[], f32[4], f32[4]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
    " n = s32[] constant(5)\n ROOT more = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n s = (s32[], f32[4], f32[4]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
    " x = f32[4] get-tuple-element(s), index=1\n junk = f32[4] get-tuple-element(s), index=2\n"
    " one = s32[] constant(1)\n i1 = s32[] add(i, one)\n x1 = f32[4] multiply(x, x)\n"
    " j1 = f32[4] add(junk, x)\n ROOT next = (s32[], f32[4], f32[4]) tuple(i1, x1, j1)\n}\n"
    "ENTRY main {\n x = f32[4] parameter(0)\n z = s32[] constant(0)\n"
    " init = (s32[], f32[4], f32[4]) tuple(z, x, x)\n"
    " w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body\n"
    " ROOT r = f32[4] get-tuple-element(w), index=1\n}\n";

static const char *loop_with_invariant_work =
    "HloModule t\n"
    "cond {\n s = (s32[], f32[4], f32[4]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
    " n = s32[] constant(5)\n ROOT more = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n s = (s32[], f32[4], f32[4]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
    " x = f32[4] get-tuple-element(s), index=1\n w = f32[4] get-tuple-element(s), index=2\n"
    " one = s32[] constant(1)\n i1 = s32[] add(i, one)\n e = f32[4] exponential(w)\n"
    " t = f32[4] tanh(e)\n x1 = f32[4] add(x, t)\n ROOT next = (s32[], f32[4], f32[4]) tuple(i1, x1, w)\n}\n"
    "ENTRY main {\n x = f32[4] parameter(0)\n v = f32[4] parameter(1)\n z = s32[] constant(0)\n"
    " init = (s32[], f32[4], f32[4]) tuple(z, x, v)\n"
    " w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body\n"
    " ROOT r = f32[4] get-tuple-element(w), index=1\n}\n";

/* The invariant work here is on a scalar, broadcast before use: the
 * broadcast stays in the body, the exponential leaves it. */
static const char *loop_with_invariant_scalar =
    "HloModule t\n"
    "cond {\n s = (s32[], f32[4], f32[]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
    " n = s32[] constant(5)\n ROOT more = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n s = (s32[], f32[4], f32[]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
    " x = f32[4] get-tuple-element(s), index=1\n w = f32[] get-tuple-element(s), index=2\n"
    " one = s32[] constant(1)\n i1 = s32[] add(i, one)\n e = f32[] exponential(w)\n"
    " eb = f32[4] broadcast(e), dimensions={}\n x1 = f32[4] add(x, eb)\n"
    " ROOT next = (s32[], f32[4], f32[]) tuple(i1, x1, w)\n}\n"
    "ENTRY main {\n x = f32[4] parameter(0)\n z = s32[] constant(0)\n h = f32[] constant(0.5)\n"
    " init = (s32[], f32[4], f32[]) tuple(z, x, h)\n"
    " w = (s32[], f32[4], f32[]) while(init), condition=cond, body=body\n"
    " ROOT r = f32[4] get-tuple-element(w), index=1\n}\n";

static const Computation *loop_body(const Module *m) {
  for (int i = 0; i < m->entry->instruction_count; i++)
    if (m->entry->instructions[i]->opcode == OP_WHILE) return m->entry->instructions[i]->called[1];
  return NULL;
}

/* Evaluates text and m on the same f32[4] arguments; true when the bits agree. */
static bool same_result(const char *text, const Module *m, int arg_count) {
  Module *original = parse_text(text);
  Shape shape = shape_array(TYPE_F32, 1, (int64_t[]){4});
  Literal *args[2];
  for (int a = 0; a < arg_count; a++) {
    args[a] = literal_create(&shape);
    for (int i = 0; i < 4; i++) literal_set_f64(args[a], i, 0.25 * (i + 1) - 0.5 * a);
  }
  Status st;
  status_clear(&st);
  Literal *want = original ? eval_module(original, args, arg_count, &st) : NULL;
  Literal *got = eval_module(m, args, arg_count, &st);
  bool same = want && got && literal_equal(want, got);
  literal_free(want);
  literal_free(got);
  for (int a = 0; a < arg_count; a++) literal_free(args[a]);
  module_free(original);
  return same;
}

static int cleanup_to_fixpoint(Module *m, OptContext *ctx);

/* After the cleanup passes settle, another run of each changes nothing. */
static bool cleanup_settles(Module *m) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  bool settled = cleanup_to_fixpoint(m, &ctx) <= 8;
  bool failed = false;
  Status st;
  settled &= !simplify_module(m, &ctx, &failed, &st) && !fold_constants(m, &ctx, &failed, &st) &&
             !eliminate_common_subexpressions(m, &ctx, &failed, &st) && !eliminate_dead_code(m, &ctx, &failed, &st);
  opt_context_free(&ctx);
  return settled;
}

TEST(rule_while_drops_state_nobody_reads) {
  Module *m = simplified(loop_with_unread_state);
  if (m) {
    const Computation *body = loop_body(m);
    EXPECT(body && body->parameters[0]->shape.tuple_count == 2, "the loop carries (i, x) only");
    EXPECT(body && count_opcode(body, OP_ADD) == 1, "junk's add is gone, i's stays");
    EXPECT(same_result(loop_with_unread_state, m, 1), "the same result");
    EXPECT(cleanup_settles(m) && same_result(loop_with_unread_state, m, 1), "settles, still the same");
  }
  module_free(m);
}

TEST(rule_while_hoists_invariant_work) {
  Module *m = simplified(loop_with_invariant_work);
  if (m) {
    const Computation *body = loop_body(m);
    EXPECT(body && count_opcode(body, OP_EXPONENTIAL) == 0 && count_opcode(body, OP_TANH) == 0,
           "exp and tanh of the unchanging element leave the body");
    EXPECT(count_opcode(m->entry, OP_TANH) == 1, "and are computed once before the loop");
    EXPECT(same_result(loop_with_invariant_work, m, 2), "the same result");
    EXPECT(cleanup_settles(m) && same_result(loop_with_invariant_work, m, 2), "settles, still the same");
  }
  module_free(m);
}

TEST(rule_while_hoists_invariant_work_read_through_a_broadcast) {
  Module *m = simplified(loop_with_invariant_scalar);
  if (m) {
    const Computation *body = loop_body(m);
    EXPECT(body && count_opcode(body, OP_EXPONENTIAL) == 0, "the exponential leaves the body");
    EXPECT(body && count_opcode(body, OP_BROADCAST) == 1, "the broadcast stays");
    EXPECT(same_result(loop_with_invariant_scalar, m, 1), "the same result");
    EXPECT(cleanup_settles(m) && same_result(loop_with_invariant_scalar, m, 1), "settles, still the same");
  }
  module_free(m);
}

/* ---- fold-constants ---- */

static Module *folded(const char *text, OptContext *ctx) {
  Module *m = parse_text(text);
  if (!m) return NULL;
  run_checked(m, ctx, fold_constants, "fold-constants");
  run_checked(m, ctx, eliminate_dead_code, "dce");
  return m;
}

TEST(fold_replaces_instructions_of_constants_by_their_value) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = folded("HloModule t\nENTRY main {\n a = s32[3] constant({1, 2, 3})\n"
                     " b = s32[3] constant({10, 20, 30})\n s = s32[3] add(a, b)\n"
                     " ROOT r = s32[3] multiply(s, s)\n}\n", &ctx);
  if (m) {
    const Instruction *r = entry_root(m);
    EXPECT(r->opcode == OP_CONSTANT, "root folded to a constant");
    EXPECT(literal_get_s64(r->attrs.literal, 2) == 33 * 33, "value %lld", (long long)literal_get_s64(r->attrs.literal, 2));
    EXPECT(m->entry->instruction_count == 1, "only the constant is left");
  }
  module_free(m);
  opt_context_free(&ctx);
}

TEST(fold_and_simplify_keep_the_source_line) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = folded("HloModule t\nENTRY main {\n a = s32[] constant(1)\n b = s32[] constant(2)\n"
                     " ROOT r = s32[] add(a, b), metadata={op_name=\"jit(f)/add\" source_file=\"f.py\" source_line=7}\n}\n",
                     &ctx);
  if (m) {
    const Metadata *md = entry_root(m)->metadata;
    EXPECT(md && md->source_line == 7 && md->op_name && strcmp(md->op_name, "jit(f)/add") == 0,
           "the folded constant names f.py:7");
  }
  module_free(m);
  opt_context_free(&ctx);
  m = simplified_entry("x = f32[4,6] parameter(0)\n a = f32[4,3,2] reshape(x)\n"
                       " ROOT r = f32[2,12] reshape(a), metadata={source_file=\"g.py\" source_line=9}");
  if (m) {
    const Metadata *md = entry_root(m)->metadata;
    EXPECT(md && md->source_line == 9, "the collapsed reshape names g.py:9");
  }
  module_free(m);
}

TEST(fold_turns_compare_of_constants_into_a_constant_that_picks_the_select) {
  /* fold makes the predicate a constant; simplify then picks the operand. */
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = folded("HloModule t\nENTRY main {\n a = f32[4] parameter(0)\n b = f32[4] parameter(1)\n"
                     " two = s32[] constant(2)\n three = s32[] constant(3)\n"
                     " lt = pred[] compare(two, three), direction=LT\n lts = pred[4] broadcast(lt), dimensions={}\n"
                     " ROOT r = f32[4] select(lts, a, b)\n}\n", &ctx);
  if (m) {
    EXPECT(entry_root(m)->operands[0]->operands[0]->opcode == OP_CONSTANT, "the compare is a constant");
    run_checked(m, &ctx, simplify_module, "simplify");
    EXPECT(root_is_parameter(m, 0), "select(2 < 3, a, b) is a");
  }
  module_free(m);
  opt_context_free(&ctx);
}

TEST(fold_keeps_operands_over_the_limit) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  ctx.options.fold_limit = 8;
  Module *m = folded("HloModule t\nENTRY main {\n a = s32[16] iota(), iota_dimension=0\n"
                     " ROOT r = s32[4] slice(a), slice={[0:4]}\n}\n", &ctx);
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_SLICE);
    EXPECT(ctx.notes.data && strstr(ctx.notes.data, "kept r (16 elements > limit 8)"), "note: %s",
           ctx.notes.data ? ctx.notes.data : "(none)");
  }
  module_free(m);
  opt_context_free(&ctx);
}

TEST(fold_keeps_results_over_the_limit_and_notes_them) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = folded("HloModule t\nENTRY main {\n i = s32[100000] iota(), iota_dimension=0\n"
                     " two = s32[] constant(2)\n twos = s32[100000] broadcast(two), dimensions={}\n"
                     " ROOT r = s32[100000] multiply(i, twos)\n}\n", &ctx);
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_MULTIPLY);
    EXPECT(count_opcode(m->entry, OP_BROADCAST) == 1, "a broadcast of a scalar is never folded");
    EXPECT(ctx.notes.data && strstr(ctx.notes.data, "fold-constants: kept r (100000 elements > limit 65536)"),
           "note: %s", ctx.notes.data ? ctx.notes.data : "(none)");
  }
  module_free(m);
  opt_context_free(&ctx);
}

TEST(fold_evaluates_small_iota_expressions) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = folded("HloModule t\nENTRY main {\n i = s32[4] iota(), iota_dimension=0\n"
                     " ROOT r = s32[4] add(i, i)\n}\n", &ctx);
  if (m) {
    EXPECT_ROOT_OPCODE(m, OP_CONSTANT);
    EXPECT(literal_get_s64(entry_root(m)->attrs.literal, 3) == 6, "iota+iota at 3 is 6");
  }
  module_free(m);
  opt_context_free(&ctx);
}

TEST(fold_never_touches_effects) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = folded("HloModule t\nENTRY main {\n s = u64[2] constant({1, 2})\n"
                     " ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n", &ctx);
  if (m) EXPECT_ROOT_OPCODE(m, OP_RNG_BIT_GENERATOR);
  module_free(m);
  opt_context_free(&ctx);
}

/* ---- cse ---- */

TEST(cse_merges_identical_instructions_transitively) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = parse_text("HloModule t\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] parameter(1)\n"
                         " a1 = f32[4] add(x, y)\n a2 = f32[4] add(x, y)\n m1 = f32[4] multiply(a1, x)\n"
                         " m2 = f32[4] multiply(a2, x)\n ROOT r = (f32[4], f32[4]) tuple(m1, m2)\n}\n");
  if (m) {
    EXPECT(run_checked(m, &ctx, eliminate_common_subexpressions, "cse"), "reports a change");
    run_checked(m, &ctx, eliminate_dead_code, "dce");
    const Instruction *r = entry_root(m);
    EXPECT(r->operands[0] == r->operands[1], "both tuple elements read one multiply");
    EXPECT(count_opcode(m->entry, OP_ADD) == 1 && count_opcode(m->entry, OP_MULTIPLY) == 1, "one of each");
  }
  module_free(m);
  opt_context_free(&ctx);
}

TEST(cse_merges_identical_reducers) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = parse_text("HloModule t\nadd1 {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                         " ROOT s = f32[] add(a, b)\n}\nadd2 {\n p = f32[] parameter(0)\n q = f32[] parameter(1)\n"
                         " ROOT t = f32[] add(p, q)\n}\nENTRY main {\n x = f32[4,3] parameter(0)\n"
                         " z = f32[] constant(0)\n r1 = f32[4] reduce(x, z), dimensions={1}, to_apply=add1\n"
                         " r2 = f32[4] reduce(x, z), dimensions={1}, to_apply=add2\n"
                         " ROOT r = (f32[4], f32[4]) tuple(r1, r2)\n}\n");
  if (m) {
    run_checked(m, &ctx, eliminate_common_subexpressions, "cse");
    run_checked(m, &ctx, eliminate_dead_code, "dce");
    EXPECT(m->computation_count == 2, "one reducer left (%d computations)", m->computation_count);
    EXPECT(count_opcode(m->entry, OP_REDUCE) == 1, "and then one reduce");
  }
  module_free(m);
  opt_context_free(&ctx);
}

TEST(cse_never_merges_effects) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = parse_text("HloModule t\nENTRY main {\n s = u64[2] parameter(0)\n"
                         " g1 = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry\n"
                         " g2 = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry\n"
                         " ROOT r = ((u64[2], u32[4]), (u64[2], u32[4])) tuple(g1, g2)\n}\n");
  if (m) {
    EXPECT(!run_checked(m, &ctx, eliminate_common_subexpressions, "cse"), "no change");
    EXPECT(count_opcode(m->entry, OP_RNG_BIT_GENERATOR) == 2, "both generators stay");
  }
  module_free(m);
  opt_context_free(&ctx);
}

/* ---- dce ---- */

TEST(dce_removes_dead_instructions_and_computations) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = parse_text("HloModule t\nunused {\n a = f32[] parameter(0)\n ROOT n = f32[] negate(a)\n}\n"
                         "ENTRY main {\n x = f32[4] parameter(0)\n d1 = f32[4] exponential(x)\n"
                         " d2 = f32[4] add(d1, d1)\n ROOT r = f32[4] negate(x)\n}\n");
  if (m) {
    EXPECT(run_checked(m, &ctx, eliminate_dead_code, "dce"), "reports a change");
    EXPECT(m->entry->instruction_count == 2, "x and r remain (%d)", m->entry->instruction_count);
    EXPECT(m->computation_count == 1, "the uncalled computation is gone");
    EXPECT(!run_checked(m, &ctx, eliminate_dead_code, "dce"), "a second run changes nothing");
  }
  module_free(m);
  opt_context_free(&ctx);
}

TEST(dce_removes_unused_parameters_of_called_computations) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = parse_text("HloModule t\nf {\n a = f32[4] parameter(0)\n b = f32[4] parameter(1)\n"
                         " c = f32[4] parameter(2)\n ROOT n = f32[4] add(a, c)\n}\n"
                         "ENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] parameter(1)\n"
                         " e = f32[4] exponential(y)\n ROOT r = f32[4] call(x, e, y), to_apply=f\n}\n");
  if (m) {
    run_checked(m, &ctx, eliminate_dead_code, "dce");
    const Computation *f = module_find_computation(m, "f");
    EXPECT(f && f->parameter_count == 2, "f keeps two parameters");
    EXPECT(entry_root(m)->operand_count == 2, "the call passes two");
    EXPECT(count_opcode(m->entry, OP_EXPONENTIAL) == 0, "the dropped argument's exponential is swept");
  }
  module_free(m);
  opt_context_free(&ctx);
}

TEST(dce_keeps_effects_without_users) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  Module *m = parse_text("HloModule t\nENTRY main {\n x = f32[4] parameter(0)\n"
                         " c = f32[4] custom-call(x), custom_call_target=\"log_it\"\n ROOT r = f32[4] negate(x)\n}\n");
  if (m) {
    run_checked(m, &ctx, eliminate_dead_code, "dce");
    EXPECT(count_opcode(m->entry, OP_CUSTOM_CALL) == 1, "the custom-call stays");
  }
  module_free(m);
  opt_context_free(&ctx);
}

/* ---- the whole corpus ---- */

/* The four passes in the pipeline's order until none changes anything;
 * returns how many rounds that took. */
static int cleanup_to_fixpoint(Module *m, OptContext *ctx) {
  for (int round = 1; round <= 8; round++) {
    bool changed = run_checked(m, ctx, simplify_module, "simplify");
    changed |= run_checked(m, ctx, fold_constants, "fold-constants");
    changed |= run_checked(m, ctx, eliminate_common_subexpressions, "cse");
    changed |= run_checked(m, ctx, eliminate_dead_code, "dce");
    if (!changed) return round;
  }
  return 9;
}

static int load_inputs(const char *name, Literal **inputs, int most) {
  int n = 0;
  for (; n < most; n++) {
    char path[512];
    snprintf(path, sizeof path, "tests/hlo/%s/in%d.npy", name, n);
    FILE *f = fopen(path, "rb");
    if (!f) break;
    fclose(f);
    Status st;
    status_clear(&st);
    inputs[n] = npy_read(path, &st);
    if (!inputs[n]) break;
  }
  return n;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every corpus module, on its own inputs, gives the same bits before and
 * after the cleanup passes; and once they settle, a further run of each
 * pass reports no change. */
static void corpus_check_module(const char *file) {
  char path[512], name[256];
  snprintf(path, sizeof path, "tests/hlo/%s", file);
  snprintf(name, sizeof name, "%.*s", (int)(strlen(file) - 4), file);
  Status st;
  status_clear(&st);
  Module *m = parse_module_file(path, &st);
  if (!m) return; /* the corpus test reports parse failures */
  Literal *inputs[64];
  int count = load_inputs(name, inputs, 64);
  Literal *before = eval_module(m, inputs, count, &st);
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  int rounds = cleanup_to_fixpoint(m, &ctx);
  EXPECT(rounds <= 8, "%s: the passes keep changing it", name);
  /* Each pass runs once more, in order, whatever the ones before it did. */
  bool again = simplify_module(m, &ctx, &(bool){false}, &st);
  again |= fold_constants(m, &ctx, &(bool){false}, &st);
  again |= eliminate_common_subexpressions(m, &ctx, &(bool){false}, &st);
  again |= eliminate_dead_code(m, &ctx, &(bool){false}, &st);
  EXPECT(!again, "%s: a run after the fixpoint still changed it", name);
  status_clear(&st);
  Literal *after = before ? eval_module(m, inputs, count, &st) : NULL;
  EXPECT(!before || after, "%s: evaluation failed after cleanup: %s", name, st.message);
  EXPECT(!before || !after || literal_equal(before, after), "%s: result differs after cleanup", name);
  literal_free(before);
  literal_free(after);
  for (int i = 0; i < count; i++) literal_free(inputs[i]);
  opt_context_free(&ctx);
  module_free(m);
}

TEST(corpus_computes_the_same_bits_after_cleanup_and_cleanup_settles) {
  DIR *dir = opendir("tests/hlo");
  EXPECT(dir != NULL, "tests/hlo is readable from the repository root");
  if (!dir) return;
  char *files[512];
  int n = 0;
  for (struct dirent *e; (e = readdir(dir)) && n < 512;) {
    size_t len = strlen(e->d_name);
    if (len > 4 && strcmp(e->d_name + len - 4, ".hlo") == 0) files[n++] = strdup(e->d_name);
  }
  closedir(dir);
  qsort(files, (size_t)n, sizeof *files, compare_names);
  EXPECT(n > 100, "the corpus has %d modules", n);
  for (int i = 0; i < n; i++) {
    corpus_check_module(files[i]);
    free(files[i]);
  }
}

/* ---- unpack-layouts ---- */

static const char packed_negate_text[] =
    "HloModule packed\n"
    "ENTRY main {\n"
    "  x = s4[16]{0:E(4)} parameter(0)\n"
    "  t = s4[4,4]{0,1:E(4)} bitcast(x)\n"
    "  ROOT n = s4[4,4]{0,1:E(4)} negate(t)\n"
    "}\n";

/* A bitcast that reinterprets the packed bytes (16 nibbles as 8 bytes of s4). */
static const char packed_reinterpreted_text[] =
    "HloModule packed_read\n"
    "ENTRY main {\n"
    "  x = s4[16]{0:E(4)} parameter(0)\n"
    "  ROOT u = s4[8]{0} bitcast(x)\n"
    "}\n";

static bool module_has_packing(const Module *m) {
  for (int c = 0; c < m->computation_count; c++)
    for (int i = 0; i < m->computations[c]->instruction_count; i++)
      if (m->computations[c]->instructions[i]->shape.element_size_bits) return true;
  return false;
}

TEST(unpack_layouts_drops_packing_nothing_reads) {
  Module *m = parse_text(packed_negate_text);
  if (!m) return;
  OptContext ctx;
  OptOptions o;
  opt_options_default(&o);
  opt_context_init(&ctx, &o);
  EXPECT(run_checked(m, &ctx, unpack_layouts, "unpack-layouts"), "the pass changes the module");
  EXPECT(!module_has_packing(m), "no E(n) is left");
  EXPECT(m->entry->root->shape.minor_to_major[0] == 0, "the layout's order stays: {0,1}");
  opt_context_free(&ctx);
  module_free(m);
}

/* Packed on both sides with different counts (s4[3] packed is 2 bytes,
 * as s4[4] is): not a form the pass spells out, so the packing stays. */
static const char packed_padding_read_text[] =
    "HloModule packed_padding\n"
    "ENTRY main {\n"
    "  x = s4[3]{0:E(4)} parameter(0)\n"
    "  ROOT u = s4[4]{0:E(4)} bitcast(x)\n"
    "}\n";

TEST(unpack_layouts_keeps_packing_a_bitcast_of_another_form_reads) {
  Module *m = parse_text(packed_padding_read_text);
  if (!m) return;
  OptContext ctx;
  OptOptions o;
  opt_options_default(&o);
  opt_context_init(&ctx, &o);
  EXPECT(!run_checked(m, &ctx, unpack_layouts, "unpack-layouts"), "the pass leaves the module alone");
  EXPECT(module_has_packing(m), "the parameter stays packed");
  opt_context_free(&ctx);
  module_free(m);
}

/* s4[4] one a byte read as packed s4[8]: nibble 2k is x[k], 2k+1 its sign. */
static const char packed_written_text[] =
    "HloModule packed_write\n"
    "ENTRY main {\n"
    "  x = s4[4]{0} parameter(0)\n"
    "  ROOT p = s4[8]{0:E(4)} bitcast(x)\n"
    "}\n";

/* The module's value on an s4[n] argument of -8, -7, ... wrapped. */
static Literal *eval_on_nibbles(const Module *m, int64_t n) {
  Shape shape = shape_array(TYPE_S4, 1, &n);
  Literal *arg = literal_create(&shape);
  for (int64_t i = 0; i < n; i++) literal_set_s64(arg, i, (i * 5 + 8) % 16 - 8);
  Status st;
  status_clear(&st);
  Literal *out = eval_module(m, &arg, 1, &st);
  EXPECT(out != NULL, "the evaluator runs it: %s", st.message);
  literal_free(arg);
  return out;
}

/* A bitcast that reads the packing, both ways, becomes ops on values
 * (a strided slice; each element and its sign), with the evaluator's
 * answer, and no E(n) is left for a backend to store. */
TEST(unpack_layouts_spells_out_a_bitcast_that_reads_packing) {
  const char *texts[2] = {packed_reinterpreted_text, packed_written_text};
  int64_t counts[2] = {16, 4};
  for (int k = 0; k < 2; k++) {
    Module *original = parse_text(texts[k]), *m = parse_text(texts[k]);
    if (!original || !m) return;
    OptContext ctx;
    OptOptions o;
    opt_options_default(&o);
    opt_context_init(&ctx, &o);
    EXPECT(run_checked(m, &ctx, unpack_layouts, "unpack-layouts"), "%s: the pass changes the module", m->name);
    EXPECT(!module_has_packing(m), "%s: no E(n) is left", m->name);
    EXPECT(count_opcode(m->entry, OP_SLICE) + count_opcode(m->entry, OP_CONCATENATE) == 1,
           "%s: a slice or a concatenate spells it out", m->name);
    Literal *want = eval_on_nibbles(original, counts[k]), *got = eval_on_nibbles(m, counts[k]);
    EXPECT(want && got && literal_equal(want, got), "%s: the evaluator's answer is kept", m->name);
    literal_free(want);
    literal_free(got);
    opt_context_free(&ctx);
    module_free(m);
    module_free(original);
  }
}

int main(void) {
  RUN(unpack_layouts_drops_packing_nothing_reads);
  RUN(unpack_layouts_keeps_packing_a_bitcast_of_another_form_reads);
  RUN(unpack_layouts_spells_out_a_bitcast_that_reads_packing);
  RUN(rule_float_add_negative_zero_is_identity);
  RUN(rule_float_add_positive_zero_is_kept);
  RUN(rule_integer_add_zero_is_identity);
  RUN(rule_multiply_one_is_identity);
  RUN(rule_integer_multiply_zero_is_zero);
  RUN(rule_float_multiply_zero_is_not_simplified);
  RUN(rule_subtract_zero_and_divide_one_are_identity);
  RUN(rule_subtract_from_zero_is_kept);
  RUN(rule_max_with_lowest_and_min_with_highest_are_identity);
  RUN(rule_and_with_all_ones_and_or_with_zero_are_identity);
  RUN(rule_pred_and_true_is_identity);
  RUN(rule_value_identities_skip_complex_and_minifloats);
  RUN(rule_sub_byte_integer_bounds_are_identities);
  RUN(rule_min_max_of_equal_operands_is_operand);
  RUN(rule_integer_subtract_self_is_zero);
  RUN(rule_float_subtract_self_is_kept);
  RUN(rule_integer_compare_with_itself_is_constant);
  RUN(rule_float_compare_with_itself_is_kept);
  RUN(rule_double_negation_is_identity);
  RUN(rule_sharding_custom_call_is_its_operand);
  RUN(rule_select_on_constant_predicate_picks_operand);
  RUN(rule_select_of_same_operands_is_operand);
  RUN(rule_broadcast_of_broadcast_composes);
  RUN(rule_reshape_chain_collapses_to_one);
  RUN(rule_transpose_chain_composes_and_identity_vanishes);
  RUN(rule_reshape_to_same_shape_and_convert_to_same_type_vanish);
  RUN(rule_convert_chain_collapses_only_when_exact);
  RUN(rule_integer_to_float_to_integer_is_kept);
  RUN(rule_slice_of_slice_composes);
  RUN(rule_full_slice_empty_pad_and_single_concatenate_vanish);
  RUN(rule_reduce_over_no_dimensions_is_elementwise);
  RUN(rule_row_major_reshape_is_bitcast);
  RUN(rule_transpose_that_only_relabels_is_bitcast);
  RUN(rule_bitcast_changing_element_type_is_bitcast_convert);
  RUN(rule_dot_absorbs_transposed_operands);
  RUN(rule_dot_keeps_transpose_that_reorders_free_dimensions);
  RUN(rule_get_tuple_element_of_tuple_forwards);
  RUN(rule_tuple_of_its_elements_is_the_tuple);
  RUN(rule_copy_with_same_layout_and_reverse_of_reverse_vanish);
  RUN(rule_moved_broadcast_scalar_is_a_broadcast);
  RUN(rule_dynamic_slice_with_constant_starts_is_a_clamped_slice);
  RUN(rule_divide_by_power_of_two_is_multiply);
  RUN(rule_call_is_inlined);
  RUN(rule_conditional_with_constant_selector_is_inlined);
  RUN(rule_conditional_with_constant_pred_is_inlined);
  RUN(rule_while_drops_state_nobody_reads);
  RUN(rule_while_hoists_invariant_work);
  RUN(rule_while_hoists_invariant_work_read_through_a_broadcast);
  RUN(fold_replaces_instructions_of_constants_by_their_value);
  RUN(fold_and_simplify_keep_the_source_line);
  RUN(fold_turns_compare_of_constants_into_a_constant_that_picks_the_select);
  RUN(fold_keeps_operands_over_the_limit);
  RUN(fold_keeps_results_over_the_limit_and_notes_them);
  RUN(fold_evaluates_small_iota_expressions);
  RUN(fold_never_touches_effects);
  RUN(cse_merges_identical_instructions_transitively);
  RUN(cse_merges_identical_reducers);
  RUN(cse_never_merges_effects);
  RUN(dce_removes_dead_instructions_and_computations);
  RUN(dce_removes_unused_parameters_of_called_computations);
  RUN(dce_keeps_effects_without_users);
  RUN(corpus_computes_the_same_bits_after_cleanup_and_cleanup_settles);
  return test_summary();
}
