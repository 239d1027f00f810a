#!/usr/bin/env python3
"""Writes the malformed-input suite: tests/malformed/NAME.hlo, each of which
axle-run must refuse with exit code 2 and a located "FILE:LINE:COL: error:"
message, and NAME.expect holding text that message must contain.

Regenerate with (Python 3 only):   python3 tests/gen/gen_malformed.py
"""
import os
import random
import shutil

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "malformed")

CASES = {}


def bad(name, text, expect):
    CASES[name] = (text, expect)


def entry(body, head="HloModule m\n\n", comps=""):
    """A module whose entry holds the given instruction lines."""
    return "%s%sENTRY main {\n%s\n}\n" % (head, comps, body)


ADD = """add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

"""

GOOD = entry("  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)")

# ---- lexical: empty, truncated, garbage ----
bad("empty_file", "", "expected 'HloModule'")
bad("only_header", "HloModule m\n", "module has no computations")
bad("missing_module_name", "HloModule \n\nENTRY main {\n  ROOT c = f32[] constant(1)\n}\n",
    "expected a module name")
bad("truncated_mid_instruction", GOOD[:GOOD.index("negate") + 4], "unknown opcode 'nega'")
bad("truncated_after_operands", GOOD[:GOOD.index("negate(p)") + 7], "expected")
bad("truncated_no_closing_brace", GOOD.rstrip("}\n") + "\n", "to end computation 'main'")
bad("binary_garbage", bytes(random.Random(7).randrange(256) for _ in range(300)) + b"\0\0\x93",
    "unexpected character")
bad("nul_inside_text", GOOD.replace("negate", "neg\0ate").encode(), "unexpected character")

# ---- what JAX and XLA hand a user that is not HLO text ----
# JAX's default jax.jit(f).lower(x).as_text() is StableHLO (MLIR).
STABLEHLO_HINT = ('this is StableHLO (MLIR); axle reads HLO text: use '
                  'jax.jit(f).lower(...).as_text(dialect="hlo") or .compile().as_text()')
bad("stablehlo_from_jax_lower", """module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = ""}) {
    %0 = stablehlo.sine %arg0 : tensor<4xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
""", "stablehlo_from_jax_lower.hlo:1:1: error: " + STABLEHLO_HINT)
# With debug_info=True location aliases come first; a comment may precede.
bad("stablehlo_with_locations", """// lowered with debug_info=True
#loc1 = loc("/tmp/model.py":12:0)
module @jit_g {
  func.func public @main(%arg0: tensor<f32> loc("x")) -> tensor<f32> {
    return %arg0 : tensor<f32>
  }
}
""", "stablehlo_with_locations.hlo:2:1: error: " + STABLEHLO_HINT)


def proto_field(number, payload):
    """One length-delimited protobuf field: the tag (wire type 2), a varint length, the bytes."""
    data = payload if isinstance(payload, bytes) else payload.encode()
    key, length, out = (number << 3) | 2, len(data), bytearray()
    out.append(key)
    while length >= 0x80:
        out.append(length & 0x7F | 0x80)
        length >>= 7
    out.append(length)
    return bytes(out) + data


# An HloModuleProto as --xla_dump_hlo_as_proto writes it (inside an HloProto):
# name=1, entry_computation_name=2, computations=3; a computation's name=1 and
# instructions=2; an instruction's name=1 and opcode=2.
HLO_MODULE_PROTO = (proto_field(1, "jit_f") + proto_field(2, "main.3") + proto_field(3, (
    proto_field(1, "main.3") + proto_field(2, proto_field(1, "Arg_0.1") + proto_field(2, "parameter")))))
PROTO_HINT = ("this is a binary HloModuleProto or HloProto (what --xla_dump_hlo_as_proto writes); axle reads "
              "HLO text: dump with --xla_dump_hlo_as_text, or use jax.jit(f).lower(...).as_text(dialect=\"hlo\")")
bad("hlo_module_proto_binary", HLO_MODULE_PROTO, "hlo_module_proto_binary.hlo:1:1: error: " + PROTO_HINT)
bad("hlo_proto_dump_binary", proto_field(1, HLO_MODULE_PROTO), "hlo_proto_dump_binary.hlo:1:1: error: " + PROTO_HINT)
bad("unterminated_string", entry('  ROOT c = f32[] constant(1), metadata={op_name="abc\n'),
    "unterminated string")
bad("unterminated_comment", "HloModule m\n/* a comment that never ends\nENTRY main {\n}\n",
    "unterminated comment")
bad("unterminated_brace", entry("  p = f32[2,3] parameter(0)\n"
                                "  ROOT t = f32[3,2] transpose(p), dimensions={1,0\n"),
    "expected '}' to end computation")
bad("mismatched_parenthesis", entry("  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p]"),
    "found ']'")
bad("deep_nesting", entry("  ROOT p = %sf32[]%s parameter(0)" % ("(" * 5000, ")" * 5000)),
    "too deep")

# ---- shapes ----
bad("absurd_size", entry("  ROOT p = f32[99999999999,99999999999] parameter(0)"),
    "more than 2^48 elements")
bad("rank_over_16", entry("  ROOT p = f32[%s] parameter(0)" % ",".join(["1"] * 17)),
    "rank exceeds the maximum of 16")
bad("negative_dimension", entry("  ROOT p = f32[-3] parameter(0)"), "negative dimension")
# f32[?] loads through parameters and elementwise ops; a broadcast of one
# has no rule here (refused at load).
bad("dynamic_shape_unbounded", entry("  p = f32[?] parameter(0)\n  ROOT b = f32[?,2] broadcast(p), dimensions={0}"),
    "unbounded dynamic dimensions are not supported")
bad("unknown_element_type", entry("  ROOT p = f31[2] parameter(0)"), "unsupported element type")
bad("token_with_dimensions", entry("  ROOT t = token[2] after-all()"), "a token has no dimensions")
bad("layout_repeats_dimension", entry("  ROOT p = f32[2,3]{0,0} parameter(0)"),
    "layout repeats dimension 0")
bad("layout_wrong_rank", entry("  ROOT p = f32[2,3]{2,1,0} parameter(0)"),
    "layout does not fit a shape of rank 2")

# ---- names and structure ----
bad("unknown_opcode", entry("  p = f32[4] parameter(0)\n  ROOT r = f32[4] frobnicate(p)"),
    "unknown opcode 'frobnicate'")
bad("undefined_operand", entry("  p = f32[4] parameter(0)\n  ROOT r = f32[4] add(p, q)"),
    "use of undefined instruction 'q'")
bad("duplicate_instruction_name", entry("  x = f32[4] parameter(0)\n"
                                        "  x = f32[4] negate(x)\n  ROOT y = f32[4] abs(x)"),
    "duplicate instruction name 'x'")
bad("cycle", entry("  p = f32[4] parameter(0)\n  a = f32[4] add(b, p)\n"
                   "  b = f32[4] add(a, p)\n  ROOT r = f32[4] negate(b)"), "is part of a cycle")
bad("self_reference", entry("  p = f32[4] parameter(0)\n  ROOT a = f32[4] add(a, p)"),
    "instruction 'a' is part of a cycle through 'a'")
bad("second_root", entry("  p = f32[4] parameter(0)\n  ROOT a = f32[4] negate(p)\n"
                         "  ROOT b = f32[4] abs(p)"), "second ROOT")
# Without an ENTRY mark the last computation is the entry (as in XLA), so
# here the entry would be 'add', which 'main' calls.
bad("missing_entry_last_is_called", "HloModule m\n\nmain {\n  p = f32[] parameter(0)\n"
    "  ROOT c = f32[] call(p, p), to_apply=add\n}\n\n" + ADD,
    "entry computation cannot be called")
bad("two_entries", GOOD + "\nENTRY other {\n  ROOT c = f32[] constant(1)\n}\n",
    "second ENTRY")
bad("duplicate_computation", entry("  ROOT c = f32[] constant(0)", comps=ADD + ADD),
    "duplicate computation name 'add'")
bad("unknown_to_apply", entry("  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                              "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=nope",
                              comps=ADD), "use of undefined computation 'nope'")
bad("recursive_call", entry("  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=loop",
                            comps="loop {\n  x = f32[] parameter(0)\n"
                                  "  ROOT y = f32[] call(x), to_apply=loop\n}\n\n"),
    "calls itself")
bad("entry_called", "HloModule m\n\nENTRY main {\n  p = f32[] parameter(0)\n"
    "  ROOT c = f32[] call(p), to_apply=main\n}\n", "entry computation cannot be called")
bad("parameter_out_of_range", entry("  ROOT p = f32[4] parameter(5)"),
    "parameter number 5 out of range")
bad("parameter_used_twice", entry("  p = f32[4] parameter(0)\n  q = f32[4] parameter(0)\n"
                                  "  ROOT a = f32[4] add(p, q)"), "used twice")
bad("wrong_operand_count", entry("  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p, p)"),
    "'negate' takes 1 operand, found 2")
bad("wrong_operand_count_select", entry("  p = pred[4] parameter(0)\n  x = f32[4] parameter(1)\n"
                                        "  ROOT s = f32[4] select(p, x)"),
    "'select' takes 3 operands, found 2")

# ---- constants ----
bad("constant_wrong_count", entry("  ROOT c = f32[3] constant({1, 2})"),
    "dimension 0 of the constant has 2 elements, the shape says 3")
bad("constant_too_many", entry("  ROOT c = f32[2] constant({1, 2, 3})"), "too many elements")
bad("constant_garbage_number", entry("  ROOT c = f32[2] constant({1, 2x5})"), "expected")
bad("constant_out_of_range", entry("  ROOT c = s8[2] constant({1, 300})"),
    "value 300 does not fit in s8")
bad("constant_bad_pred", entry("  ROOT c = pred[2] constant({true, maybe})"),
    "expected true or false")

# ---- attributes ----
bad("unknown_attribute", entry("  p = f32[4] parameter(0)\n"
                               "  ROOT a = f32[4] add(p, p), frobs={1}"),
    "unknown attribute 'frobs'")
bad("attribute_not_for_op", entry("  p = f32[4] parameter(0)\n"
                                  "  ROOT a = f32[4] add(p, p), dimensions={0}"),
    "does not apply to 'add'")
bad("attribute_given_twice", entry("  p = f32[2,3] parameter(0)\n  ROOT t = f32[3,2] "
                                   "transpose(p), dimensions={1,0}, dimensions={1,0}"),
    "given twice")
bad("missing_required_attribute", entry("  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                                        "  ROOT r = f32[] reduce(p, z), dimensions={0}",
                                        comps=ADD), "needs the attribute to_apply=")
bad("compare_missing_direction", entry("  p = f32[4] parameter(0)\n"
                                       "  ROOT c = pred[4] compare(p, p)"),
    "needs the attribute direction=")
bad("bad_comparison_direction", entry("  p = f32[4] parameter(0)\n"
                                      "  ROOT c = pred[4] compare(p, p), direction=LTE"),
    "unknown comparison direction 'LTE'")
bad("bad_dim_labels", entry("  l = f32[1,4,4,1] parameter(0)\n  r = f32[2,2,1,1] parameter(1)\n"
                            "  ROOT c = f32[1,3,3,1] convolution(l, r), window={size=2x2}, "
                            "dim_labels=bxyf_01io->b01f"), "bad dimension labels")
bad("window_rank_mismatch", entry("  p = f32[4,4] parameter(0)\n  z = f32[] constant(0)\n"
                                  "  ROOT r = f32[3,3] reduce-window(p, z), "
                                  "window={size=2x2 stride=1}, to_apply=add", comps=ADD),
    "window field has 1 dimensions")
bad("bad_padding_syntax", entry("  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                                "  ROOT r = f32[7] pad(p, z), padding=1-2"),
    "expected padding as lo_hi_interior")

# ---- verifier: well-formed text, wrong shapes ----
bad("shape_mismatch_add", entry("  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n"
                                "  ROOT a = f32[2] add(p, q)"), "must have the same dimensions")
bad("declared_shape_wrong", entry("  p = f32[2] parameter(0)\n  ROOT a = f32[3] add(p, p)"),
    "declared shape f32[3] does not match the inferred shape f32[2]")
bad("wrong_reducer_signature", entry(
    "  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
    "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=bad_add",
    comps="bad_add {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}\n\n"), "reducer 'bad_add' takes 1 parameters, expected 2")
bad("dot_contracting_mismatch", entry("  a = f32[2,3] parameter(0)\n  b = f32[4,5] parameter(1)\n"
                                      "  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, "
                                      "rhs_contracting_dims={0}"), "contracting dimension 0 has size 3 on lhs and 4 on rhs")
bad("transpose_not_permutation", entry("  p = f32[2,3] parameter(0)\n"
                                       "  ROOT t = f32[2,2] transpose(p), dimensions={0,0}"),
    "repeats dimension 0")
bad("tuple_index_out_of_range", entry("  p = f32[2] parameter(0)\n  t = (f32[2]) tuple(p)\n"
                                      "  ROOT g = f32[2] get-tuple-element(t), index=3"), "index 3 is out of range")
bad("slice_out_of_bounds", entry("  p = f32[3] parameter(0)\n"
                                 "  ROOT s = f32[5] slice(p), slice={[0:5]}"), "out of bounds for dimension 0 of size 3")
bad("select_predicate_not_pred", entry("  p = f32[4] parameter(0)\n"
                                       "  ROOT s = f32[4] select(p, p, p)"), "predicate must be pred")
bad("dimension_overflows_int64", entry("  ROOT p = f32[99999999999999999999999] parameter(0)"),
    "found '99999999999999999999999'")
bad("parameter_number_overflows", entry("  ROOT p = f32[2] parameter(99999999999999999999999)"),
    "found '99999999999999999999999'")
bad("broadcast_dimension_out_of_range", entry("  p = f32[3] parameter(0)\n"
                                              "  ROOT b = f32[2,3] broadcast(p), dimensions={7}"),
    "dimensions entry 7 is out of range")
bad("iota_dimension_out_of_range", entry("  ROOT i = s32[2,3] iota(), iota_dimension=5"), "iota_dimension 5 is out of range")
bad("reshape_count_mismatch", entry("  p = f32[2,3] parameter(0)\n  ROOT r = f32[7] reshape(p)"),
    "cannot reshape 6 elements into 7")
bad("slice_step_zero", entry("  p = f32[4] parameter(0)\n"
                               "  ROOT s = f32[2] slice(p), slice={[0:4:0]}"), "stride")
bad("pad_negative_interior", entry("  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                                   "  ROOT r = f32[4] pad(p, z), padding=0_0_-1"), "interior padding must not be negative")
bad("feature_group_count_zero", entry(
    "  l = f32[1,4,4,2] parameter(0)\n  r = f32[2,2,2,2] parameter(1)\n"
    "  ROOT c = f32[1,3,3,2] convolution(l, r), window={size=2x2}, dim_labels=b01f_01io->b01f, "
    "feature_group_count=0"), "group count must be at least 1, found 0")
bad("dynamic_slice_size_too_big", entry(
    "  p = f32[4] parameter(0)\n  i = s32[] parameter(1)\n"
    "  ROOT d = f32[6] dynamic-slice(p, i), dynamic_slice_sizes={6}"), "slice size 6 exceeds dimension 0 of size 4")
bad("while_body_wrong_shape", entry(
    "  p = s32[] parameter(0)\n  ROOT w = s32[] while(p), condition=cond, body=body",
    comps="cond {\n  c = s32[] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n\n"
          "body {\n  b = s32[] parameter(0)\n  ROOT f = f32[] convert(b)\n}\n\n"), "body 'body' returns f32[] but the loop state is s32[]")
bad("conditional_index_not_integer", entry(
    "  i = f32[] parameter(0)\n  x = f32[2] parameter(1)\n"
    "  ROOT c = f32[2] conditional(i, x), branch_computations={b0}",
    comps="b0 {\n  v = f32[2] parameter(0)\n  ROOT n = f32[2] negate(v)\n}\n\n"), "selector must be")
bad("sort_comparator_not_pred", entry(
    "  p = f32[4] parameter(0)\n  ROOT s = f32[4] sort(p), dimensions={0}, to_apply=cmp",
    comps="cmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
          "  ROOT m = f32[] maximum(a, b)\n}\n\n"), "computation 'cmp' returns f32[]")
bad("gather_bad_dims", entry(
    "  p = f32[5,4] parameter(0)\n  i = s32[3] parameter(1)\n"
    "  ROOT g = f32[3,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={7}, "
    "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"),
    "collapsed_slice_dims entry 7 is out of range [0, 2) (StableHLO gather (C8))")
bad("operand_name_is_a_computation", entry("  p = f32[] parameter(0)\n  ROOT a = f32[] add(p, add)",
                                           comps=ADD), "use of undefined instruction 'add'")

bad("reducer_type_mismatch", entry(
    "  p = s32[4] parameter(0)\n  z = s32[] constant(0)\n"
    "  ROOT r = s32[] reduce(p, z), dimensions={0}, to_apply=add", comps=ADD), "reducer 'add' parameter 0 must be s32[]")
bad("reduce_dimension_out_of_range", entry(
    "  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
    "  ROOT r = f32[] reduce(p, z), dimensions={3}, to_apply=add", comps=ADD), "dimensions entry 3 is out of range")
bad("dot_batch_count_mismatch", entry(
    "  a = f32[2,3,4] parameter(0)\n  b = f32[2,4,5] parameter(1)\n"
    "  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
    "rhs_batch_dims={}, rhs_contracting_dims={1}"), "need as many batch and contracting dimensions")
bad("conv_labels_rank_mismatch", entry(
    "  l = f32[1,4,4] parameter(0)\n  r = f32[2,2,1,1] parameter(1)\n"
    "  ROOT c = f32[1,3,3,1] convolution(l, r), window={size=2x2}, dim_labels=b01f_01io->b01f"),
    "dim_labels describe rank 4 but the operands have ranks 3 and 4")
bad("conditional_branch_count_mismatch", entry(
    "  i = s32[] parameter(0)\n  x = f32[2] parameter(1)\n"
    "  ROOT c = f32[2] conditional(i, x), branch_computations={b0, b0}",
    comps="b0 {\n  v = f32[2] parameter(0)\n  ROOT n = f32[2] negate(v)\n}\n\n"), "needs one argument per branch")
bad("while_condition_not_pred", entry(
    "  p = s32[] parameter(0)\n  ROOT w = s32[] while(p), condition=cond, body=body",
    comps="cond {\n  c = s32[] parameter(0)\n  ROOT t = s32[] constant(1)\n}\n\n"
          "body {\n  b = s32[] parameter(0)\n  ROOT n = s32[] negate(b)\n}\n\n"), "condition 'cond' must return pred[], returns s32[]")
bad("broadcast_wrong_element_type", entry(
    "  p = f32[3] parameter(0)\n  ROOT b = s32[2,3] broadcast(p), dimensions={1}"), "declared shape s32[2,3] does not match the inferred shape f32[2,3]")
bad("gather_slice_sizes_rank", entry(
    "  p = f32[5,4] parameter(0)\n  i = s32[3] parameter(1)\n"
    "  ROOT g = f32[3,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
    "start_index_map={0}, index_vector_dim=1, slice_sizes={1}"),
    "slice_sizes has 1 entries, the operand rank is 2 (StableHLO gather (C20))")


# ---- ops that are parsed and refused ----
bad("infeed_refused", entry("  t = token[] after-all()\n  ROOT i = (f32[2], token[]) infeed(t)"),
    "host transfer ops are not supported")
bad("outfeed_refused", entry("  p = f32[2] parameter(0)\n  t = token[] after-all()\n"
                             "  ROOT o = token[] outfeed(p, t), outfeed_shape=f32[2]"),
    "host transfer ops are not supported")
bad("send_refused", entry("  p = f32[2] parameter(0)\n  t = token[] after-all()\n"
                          "  s = (f32[2], u32[], token[]) send(p, t), channel_id=1\n"
                          "  ROOT d = token[] send-done(s), channel_id=1"),
    "host transfer ops are not supported")
bad("recv_refused", entry("  t = token[] after-all()\n  r = (f32[2], u32[], token[]) recv(t), channel_id=2\n"
                          "  ROOT d = (f32[2], token[]) recv-done(r), channel_id=2"),
    "host transfer ops are not supported")
bad("lapack_geev_names_jax_eig", entry(
    "  p = f32[3,3] parameter(0)\n"
    "  ROOT c = (f32[3], f32[3], f32[3,3], f32[3,3], s32[]) custom-call(p), custom_call_target=\"lapack_sgeev_ffi\""),
    "lapack_sgeev_ffi (LAPACK, which JAX emits for jnp.linalg.eig)")
bad("lapack_getrf_wrong_result_shape", entry(
    "  p = f32[3,3] parameter(0)\n"
    "  ROOT c = (f32[3,3], s32[2], s32[]) custom-call(p), custom_call_target=\"lapack_sgetrf_ffi\""),
    "returns (the same shape, s32[batch..., min(m,n)], s32[batch...])")
bad("lapack_gesvd_names_jax_svd", entry(
    "  p = f64[3,3] parameter(0)\n"
    "  ROOT c = (f64[3,3], f64[3], f64[3,3], f64[3,3], s32[]) custom-call(p), custom_call_target=\"lapack_dgesvd_ffi\""),
    "which JAX emits for jnp.linalg.svd")
bad("lapack_potrf_wrong_info_shape", entry(
    "  p = f64[2,3,3] parameter(0)\n"
    "  ROOT c = (f64[2,3,3], s32[]) custom-call(p), custom_call_target=\"lapack_dpotrf_ffi\","
    " backend_config={uplo = 76 : ui8}"),
    "expects a (batch..., n, n) -> (a's shape, s32[batch...]) of f64")
bad("lapack_gesdd_u_does_not_fit_mode", entry(
    "  p = f32[4,3] parameter(0)\n"
    "  ROOT c = (f32[4,3], f32[3], f32[4,3], f32[3,3], s32[]) custom-call(p), custom_call_target=\"lapack_sgesdd_ffi\","
    " backend_config={mode = 65 : ui8}"),
    "with u and vt as mode asks")
bad("lapack_trsm_unknown_side", entry(
    "  a = c64[3,3] parameter(0)\n  b = c64[3,2] parameter(1)\n"
    "  ROOT x = c64[3,2] custom-call(a, b), custom_call_target=\"lapack_ctrsm_ffi\","
    " backend_config={diag = 78 : ui8, side = 88 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}"),
    "names an option LAPACK does not have")
bad("lapack_syevd_of_complex_is_heevd", entry(
    "  p = c64[3,3] parameter(0)\n"
    "  ROOT c = (c64[3,3], f32[3], s32[]) custom-call(p), custom_call_target=\"lapack_csyevd_ffi\""),
    "lapack_csyevd_ffi (LAPACK, which JAX emits for jnp.linalg.eigh) is not supported")
bad("shuffle_refused", entry("  p = f32[4] parameter(0)\n  ROOT s = f32[4] shuffle(p)"),
    "shuffle is not supported")
bad("scan_carry_does_not_match_init", entry(
    "  x = f32[3,4] parameter(0)\n  c = f32[3] parameter(1)\n"
    "  ROOT s = (f32[3,4], s32[3]) scan(x, c), dimensions={1}, num_carries=1, to_apply=step",
    comps="step {\n  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n"
          "  k = s32[3] convert(a)\n  ROOT t = (f32[3], s32[3]) tuple(a, k)\n}\n\n"),
    "carry result 0 does not match its init")
bad("ragged_dot_needs_a_group_dimension", entry(
    "  l = f32[6,4] parameter(0)\n  r = f32[2,4,5] parameter(1)\n  g = s32[2] parameter(2)\n"
    "  ROOT d = f32[6,5] ragged-dot(l, r, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
    "lhs_ragged_dims={0}"),
    "rhs_group_dims must name one dimension")
# group_sizes' leading dims (XLA's InferRaggedDotOpShape): a ragged batch
# dim takes only the batch dims listed before it, [b0, G] here, not all of
# them; the leading sizes must be lhs's.
bad("ragged_dot_batch_sizes_name_only_earlier_batch_dims", entry(
    "  l = f32[2,3,2,4] parameter(0)\n  r = f32[2,3,4,5] parameter(1)\n  g = s64[2,3,2] parameter(2)\n"
    "  ROOT d = f32[2,3,2,5] ragged-dot(l, r, g), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, "
    "lhs_contracting_dims={3}, rhs_contracting_dims={2}, lhs_ragged_dims={1}"),
    "group_sizes must be [2, G]")
bad("ragged_dot_sizes_prefix_differs_from_lhs", entry(
    "  l = f32[3,5,4] parameter(0)\n  r = f32[2,4,6] parameter(1)\n  g = s64[4,2] parameter(2)\n"
    "  ROOT d = f32[3,5,6] ragged-dot(l, r, g), lhs_contracting_dims={2}, rhs_contracting_dims={1}, "
    "lhs_ragged_dims={1}, rhs_group_dims={0}"),
    "group_sizes must be [3, G]")
bad("async_start_result_mismatch", entry(
    "  x = f32[4] parameter(0)\n  s = ((f32[4]), f32[5], s32[]) async-start(x), calls=w\n"
    "  ROOT d = f32[5] async-done(s)",
    comps="w {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n\n"),
    "result element 1 is f32[5], expected f32[4]")
bad("get_dimension_size_out_of_range", entry(
    "  x = f32[4] parameter(0)\n  ROOT d = s32[] get-dimension-size(x), dimensions={1}"),
    "out of range")
# XLA's text may give rng-bit-generator a longer state than axle's
# generators take: refused when compiled, located, not when run.
bad("rng_bit_generator_long_three_fry_state", entry(
    "  s = u64[4] parameter(0)\n"
    "  ROOT r = (u64[4], u32[8]) rng-bit-generator(s), algorithm=rng_three_fry"),
    "the state of rng_three_fry must be u64[2], not u64[4]")
bad("rng_normal_on_integers", entry(
    "  a = s32[] constant(0)\n  b = s32[] constant(1)\n"
    "  ROOT r = s32[4] rng(a, b), distribution=rng_normal"),
    "rng_normal does not take s32")
bad("scaled_dot_scale_must_divide", entry(
    "  l = f32[4,8] parameter(0)\n  r = f32[8,3] parameter(1)\n  ls = f32[4,3] parameter(2)\n"
    "  rs = f32[2,3] parameter(3)\n"
    "  ROOT d = f32[4,3] scaled-dot(l, r, ls, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
    "scale 2 dimension 1 (3) must divide 8")
bad("topk_k_too_large", entry("  p = f32[2,3] parameter(0)\n"
                              "  ROOT t = (f32[2,4], s32[2,4]) topk(p), k=4, largest=true"),
    "k=4 is out of range")
bad("mulhi_on_floats", entry("  p = f32[2] parameter(0)\n  ROOT m = f32[2] mulhi(p, p)"),
    "needs an integer type")
bad("acos_on_integers", entry("  p = s32[2] parameter(0)\n  ROOT m = s32[2] acos(p)"),
    "needs a floating-point type")
bad("add_dependency_needs_a_token", entry("  p = f32[2] parameter(0)\n  ROOT d = f32[2] add-dependency(p, p)"),
    "must be a token")
# ---- forms XLA accepts beyond the fully written one, and their limits ----
bad("shape_omitted_not_inferable", entry("  p = f32[4] parameter(0)\n  ROOT r = reshape(p)"),
    "the shape of 'reshape' cannot be inferred")
bad("shape_omitted_broadcast", entry("  p = f32[] parameter(0)\n  ROOT b = broadcast(p), dimensions={}"),
    "the shape of 'broadcast' cannot be inferred")
bad("shape_omitted_inference_fails", entry("  p = f32[4] parameter(0)\n  q = f32[3] parameter(1)\n"
                                           "  ROOT a = add(p, q)"), "instruction 'a' (add)")
bad("nested_operand_not_inferable", entry("  p = f32[4] parameter(0)\n"
                                          "  ROOT a = f32[4] add(p, convert(p))"),
    "the shape of 'convert' cannot be inferred")
bad("nested_operand_undefined", entry("  p = f32[4] parameter(0)\n"
                                      "  ROOT a = f32[4] add(p, negate(q))"),
    "use of undefined instruction 'q'")
bad("nested_parameter_without_shape", entry("  ROOT a = add(parameter(0), parameter(1))"),
    "the shape of 'parameter' cannot be inferred")
bad("compare_order_unknown", entry("  p = f32[4] parameter(0)\n"
                                   "  ROOT c = pred[4] compare(p, p), direction=LT, order=WEAK"),
    "unknown comparison order 'WEAK'")
bad("compare_order_contradicts_type", entry("  p = f32[4] parameter(0)\n  ROOT c = pred[4] "
                                            "compare(p, p), direction=LT, order=TOTAL, type=FLOAT"),
    "order=TOTAL contradicts the comparison's type=")
bad("bitcast_byte_count_differs", entry("  p = f32[4] parameter(0)\n  ROOT b = s16[4] bitcast(p)"),
    "result must keep the byte count of the operand (16 bytes, not 8)")
bad("constant_elided_scalar", entry("  ROOT c = f32[] constant({...})"),
    "a scalar constant cannot be elided")
bad("headerless_garbage_start", "= main {\n  ROOT c = f32[] constant(1)\n}\n",
    "expected 'HloModule' or a computation")
bad("unknown_module_attribute", "HloModule m, frobnicate=true\n\n" + GOOD[len("HloModule m\n\n"):],
    "unknown module attribute 'frobnicate'")
bad("module_alias_malformed", "HloModule m, input_output_alias={ {0}: (zero, {0}) }\n\n"
    + GOOD[len("HloModule m\n\n"):], "expected an integer")
bad("signature_result_mismatch", "HloModule m\n\nENTRY %main (p: f32[4]) -> f32[5] {\n"
    "  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(f32[4] %p)\n}\n",
    "computation 'main' is declared to return f32[5], but its root 'n' is f32[4]")
bad("constant_float_out_of_range", entry("  ROOT c = f16[] constant(-65520)"),
    "value -65520 is out of range for f16")
bad("nan_payload_too_wide", entry("  ROOT c = bf16[1] constant({nan(0x3ff)})"),
    "NaN payload 0x3ff does not fit the 7 mantissa bits of bf16")
bad("collective_permute_slice_sizes_without_in_place", entry(
    "  p = f32[4] parameter(0)\n  ROOT c = f32[4] collective-permute(p), "
    "source_target_pairs={{0,0}}, slice_sizes={{4}}"),
    "slice_sizes= applies only to the in-place collective-permute")


# ---- gather and scatter: one module per rule of the StableHLO spec ----
# (openxla/stablehlo docs/spec.md, "gather" C1-C22 and "scatter" C1-C23;
# the verifier names the rule). Each starts from a valid batched module and
# breaks one rule; the ones before it in shape_inference_gather.c's order
# still hold.
GATHER = """HloModule m

ENTRY main {{
  x = {x} parameter(0)
  idx = {i} parameter(1)
  ROOT g = {r} gather(x, idx), {dims}
}}
"""


def gather(name, rule, x="f32[2,5,3]", i="s32[2,4,1]", r="f32[2,4,3]", offset="{2}", collapsed="{1}",
           batching="{0}", ibatching="{0}", smap="{1}", ivd="2", sizes="{1,1,3}", expect=None):
    dims = ("offset_dims=%s, collapsed_slice_dims=%s, operand_batching_dims=%s, start_indices_batching_dims=%s, "
            "start_index_map=%s, index_vector_dim=%s, slice_sizes=%s"
            % (offset, collapsed, batching, ibatching, smap, ivd, sizes))
    bad(name, GATHER.format(x=x, i=i, r=r, dims=dims), expect or "StableHLO gather (%s)" % rule)


SCATTER = """HloModule m

add {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT s = {t}[] add(a, b)
}}

ENTRY main {{
  x = {x} parameter(0)
  idx = {i} parameter(1)
  u = {u} parameter(2)
  ROOT s = {x} scatter(x, idx, u), {dims}, to_apply=add
}}
"""


def scatter(name, rule, x="f32[2,5,3]", i="s32[2,4,1]", u="f32[2,4,3]", window="{2}", inserted="{1}",
            batching="{0}", ibatching="{0}", smap="{1}", ivd="2", reducer_type="f32"):
    dims = ("update_window_dims=%s, inserted_window_dims=%s, input_batching_dims=%s, "
            "scatter_indices_batching_dims=%s, scatter_dims_to_operand_dims=%s, index_vector_dim=%s"
            % (window, inserted, batching, ibatching, smap, ivd))
    bad(name, SCATTER.format(t=reducer_type, x=x, i=i, u=u, dims=dims), "StableHLO scatter (%s)" % rule)


gather("gather_c1_dims_cover_operand_rank", "C1", x="f32[2,5,3,1]", sizes="{1,1,3,1}")
gather("gather_c2_index_vector_dim_range", "C2", ivd="4")
gather("gather_c3_start_index_map_size", "C3", smap="{1,2}")
gather("gather_c4_offset_dims_sorted", "C4", x="f32[2,5,3,4]", sizes="{1,1,3,4}", offset="{3,2}", r="f32[2,4,4,3]")
gather("gather_c5_offset_dims_range", "C5", offset="{5}")
gather("gather_c6_collapsed_also_batching", "C6", collapsed="{0}")
gather("gather_c7_collapsed_sorted", "C7", i="s32[4,1]", r="f32[4,3]", offset="{1}", collapsed="{1,0}",
       batching="{}", ibatching="{}", ivd="1")
gather("gather_c9_collapsed_slice_size", "C9", sizes="{1,2,3}")
gather("gather_c10_batching_sorted", "C10", x="f32[2,2,5,3]", i="s32[2,2,4,1]", r="f32[2,2,4,3]", offset="{3}",
       collapsed="{2}", batching="{1,0}", ibatching="{1,0}", smap="{2}", ivd="3", sizes="{1,1,1,3}")
gather("gather_c11_batching_range", "C11", batching="{3}")
gather("gather_c12_batching_slice_size", "C12", sizes="{2,1,3}")
gather("gather_c13_index_batching_unique", "C13", x="f32[2,2,5,3]", i="s32[2,2,4,1]", r="f32[2,2,4,3]",
       offset="{3}", collapsed="{2}", batching="{0,1}", ibatching="{1,1}", smap="{2}", ivd="3", sizes="{1,1,1,3}")
gather("gather_c14_index_batching_range", "C14", ibatching="{5}")
gather("gather_c15_index_vector_dim_batching", "C15", ibatching="{2}")
gather("gather_c16_batching_counts", "C16", ibatching="{}")
gather("gather_c17_batching_sizes", "C17", x="f32[3,5,3]")
gather("gather_c18_start_index_map_batching", "C18", smap="{0}")
gather("gather_c19_start_index_map_range", "C19", smap="{7}")
gather("gather_c21_slice_size_range", "C21", sizes="{1,1,4}")
gather("gather_c22_result_shape", "C22", r="f32[2,4,2]",
       expect="declared shape f32[2,4,2] does not match the inferred shape f32[2,4,3]")
gather("gather_i2_indices_integer", "I2", i="f32[2,4,1]")

scatter("scatter_c2_dims_cover_operand_rank", "C2", x="f32[2,5,3,1]", u="f32[2,4,3,1]", window="{2,3}",
        inserted="{}")
scatter("scatter_c4_update_window_size", "C4", u="f32[2,4,4]")
scatter("scatter_c4_update_scatter_size", "C4", u="f32[2,3,3]")
scatter("scatter_c4_update_rank", "C4", window="{}", inserted="{1,2}")
scatter("scatter_c6_update_element_type", "C6", u="s32[2,4,3]")
scatter("scatter_c7_update_window_dims_sorted", "C7", x="f32[2,5,3,4]", u="f32[2,4,3,4]", window="{3,2}")
scatter("scatter_c8_update_window_dims_range", "C8", window="{3}")
# The module that crashed the CPU backend (issue 22): operand dimension 0
# both inserted and batching, and no update window dimension.
scatter("scatter_c9_inserted_also_batching", "C9", x="f32[2,3]", u="f32[2,4]", window="{}", inserted="{0}")
scatter("scatter_c10_inserted_sorted", "C10", x="f32[5,3,2]", i="s32[4,2]", u="f32[4,2]", window="{1}",
        inserted="{1,0}", batching="{}", ibatching="{}", smap="{0,1}", ivd="1")
scatter("scatter_c11_inserted_range", "C11", inserted="{3}")
scatter("scatter_c12_batching_sorted", "C12", x="f32[2,2,5,3]", i="s32[2,2,4,1]", u="f32[2,2,4,3]", window="{3}",
        inserted="{2}", batching="{1,0}", ibatching="{1,0}", smap="{2}", ivd="3")
scatter("scatter_c13_batching_range", "C13", batching="{4}")
scatter("scatter_c14_index_batching_unique", "C14", x="f32[2,2,5,3]", i="s32[2,2,4,1]", u="f32[2,2,4,3]",
        window="{3}", inserted="{2}", batching="{0,1}", ibatching="{0,0}", smap="{2}", ivd="3")
scatter("scatter_c15_index_batching_range", "C15", ibatching="{3}")
scatter("scatter_c16_index_vector_dim_batching", "C16", ibatching="{2}")
scatter("scatter_c17_batching_counts", "C17", ibatching="{}")
scatter("scatter_c18_batching_sizes", "C18", x="f32[3,5,3]")
scatter("scatter_c19_index_map_size", "C19", smap="{1,2}")
scatter("scatter_c20_index_map_also_batching", "C20", smap="{0}")
scatter("scatter_c21_index_map_range", "C21", smap="{3}")
scatter("scatter_c22_index_vector_dim_range", "C22", ivd="4")
scatter("scatter_c23_update_computation", "C23", reducer_type="s32")
scatter("scatter_i2_indices_integer", "I2", i="f32[2,4,1]")

TWO_INPUTS = """HloModule m

add2 {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  s = f32[] add(a, c)
  t = f32[] add(b, d)
  ROOT r = (f32[], f32[]) tuple(s, t)
}}

ENTRY main {{
  x = f32[5] parameter(0)
  y = {y} parameter(1)
  idx = s32[4,1] parameter(2)
  u = f32[4] parameter(3)
  v = {v} parameter(4)
  ROOT s = (f32[5], {y}) scatter(x, y, idx, u, v), update_window_dims={{}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add2
}}
"""
bad("scatter_c1_inputs_same_shape", TWO_INPUTS.format(y="f32[6]", v="f32[4]"), "StableHLO scatter (C1)")
bad("scatter_c3_updates_same_shape", TWO_INPUTS.format(y="f32[5]", v="f32[3]"), "StableHLO scatter (C3)")
bad("scatter_c5_operand_count", "HloModule m\n\n" + ADD + "\n" + entry(
    "  x = f32[5] parameter(0)\n  idx = s32[4,1] parameter(1)\n"
    "  ROOT s = f32[5] scatter(x, idx), update_window_dims={}, inserted_window_dims={0}, "
    "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add", head=""),
    "StableHLO scatter (C5)")

# ---- XLA's negative parser tests (docs/xla-check.md), written anew ----
bad("conditional_pred_with_branch_list", """HloModule m

yes {
  x = f32[4] parameter(0)
  ROOT c = f32[4] ceil(x)
}

no {
  x = f32[4] parameter(0)
  ROOT f = f32[4] floor(x)
}

ENTRY main {
  p = f32[4] parameter(0)
  b = pred[] parameter(1)
  ROOT r = f32[4] conditional(b, p, p), branch_computations={yes, no}
}
""", "a conditional chosen by a pred needs true_computation= and false_computation=")
bad("layout_invalid_dim_level_type", entry("  ROOT p = f32[4,4]{1,0:D(D,X)} parameter(0)"),
    "invalid dim level type 'X'")
bad("layout_physical_shape_of_a_dense_array", entry("  ROOT p = f32[4,4]{1,0:D(D,D)P(f32[4,4])} parameter(0)"),
    "a physical shape P(...) needs a sparse layout")
for name, value, message in [
        ("result_accuracy_unknown_field", "foo=1.5", "result_accuracy takes mode= or tolerance=, not 'foo'"),
        ("result_accuracy_unknown_mode", "mode=fast", "result_accuracy mode must be default or highest, not 'fast'"),
        ("result_accuracy_bare_value", "0.25", "result_accuracy takes mode= or tolerance=, not '0.25'"),
        ("result_accuracy_unknown_tolerance", "tolerance={eps=1}",
         "result_accuracy tolerance takes atol, rtol and ulps, not 'eps'")]:
    bad(name, entry("  x = f32[] parameter(0)\n  ROOT e = f32[] exponential(x), result_accuracy={%s}" % value),
        message)
bad("reduce_scatter_does_not_split", "HloModule m\n\n" + ADD + "\n" + entry(
    "  p = f32[6] parameter(0)\n"
    "  ROOT rs = f32[1] reduce-scatter(p), dimensions={0}, replica_groups={{0,1,2,3}}, to_apply=add", head=""),
    "dimension 0 (size 6) does not split into 4 parts")

# An async-update or async-done says of the wrapped op what its start says.
WRAPPED = """HloModule m

w0 {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}

w1 {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}

"""
bad("async_done_calls_another_computation", WRAPPED + entry(
    "  p = f32[4] parameter(0)\n  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=w0\n"
    "  ROOT d = f32[4] async-done(s), calls=w1", head=""),
    "'d' calls 'w1', but its async-start 's' calls 'w0'")
bad("async_update_on_another_thread", WRAPPED + entry(
    "  p = f32[4] parameter(0)\n  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=w0\n"
    "  u = ((f32[4]), f32[4], s32[]) async-update(s), async_execution_thread=\"other\"\n"
    "  ROOT d = f32[4] async-done(u)", head=""),
    "'u' runs on thread \"other\", its async-start 's' on \"main\"")
bad("async_starts_share_a_computation", WRAPPED + entry(
    "  p = f32[4] parameter(0)\n  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=w0\n"
    "  d = f32[4] async-done(s)\n  t = ((f32[4]), f32[4], s32[]) async-start(d), calls=w0\n"
    "  ROOT e = f32[4] async-done(t)", head=""),
    "async-starts 's' and 't' share the computation 'w0'")
bad("async_sugar_done_of_another_op", entry(
    "  p = f32[4] parameter(0)\n  s = ((f32[4]), f32[4], s32[]) negate-start(p)\n"
    "  ROOT d = f32[4] abs-done(s)"),
    "'abs-done' follows an async-start of 'negate'")


def main():
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    for name, (text, expect) in CASES.items():
        data = text if isinstance(text, bytes) else text.encode()
        with open(os.path.join(ROOT, name + ".hlo"), "wb") as f:
            f.write(data)
        with open(os.path.join(ROOT, name + ".expect"), "w") as f:
            f.write(expect)
    print("wrote %d malformed modules to %s" % (len(CASES), os.path.normpath(ROOT)))


if __name__ == "__main__":
    main()
