"""Corpus cases for the opcodes added to match XLA's current list: inverse
and hyperbolic trigonometry, mulhi, topk, scan, scaled-dot and ragged-dot,
tokens, the asynchronous pairs, the single-replica collectives and the
dimension-size ops. Goldens are computed here with NumPy and Python
integers, never by axle."""
import numpy as np

from corpus_common import Case, case, literal_text, shape_of
from corpus_elementwise import tuple_module

ADD_F32 = """add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
"""


def trig_case(name, dtype, rng, tol):
    inner = rng.uniform(-0.95, 0.95, 12).astype(dtype)   # acos, asin, atanh need |x| < 1
    wide = rng.uniform(-4, 4, 12).astype(dtype)
    above_one = rng.uniform(1.0, 6.0, 12).astype(dtype)  # acosh needs x >= 1
    ops = [("acos", inner), ("asin", inner), ("atanh", inner), ("atan", wide), ("asinh", wide),
           ("sinh", wide), ("cosh", wide), ("acosh", above_one)]
    fns = {"acos": np.arccos, "asin": np.arcsin, "atanh": np.arctanh, "atan": np.arctan,
           "asinh": np.arcsinh, "sinh": np.sinh, "cosh": np.cosh, "acosh": np.arccosh}
    params = [("inner", inner), ("wide", wide), ("above", above_one)]
    pname = {id(inner): "inner", id(wide): "wide", id(above_one): "above"}
    entries, outs = [], []
    for i, (op, x) in enumerate(ops):
        out = fns[op](x.astype(np.float64)).astype(dtype)
        outs.append(out)
        entries.append(("r%d" % i, shape_of(out), op, [pname[id(x)]]))
    return Case(tuple_module(name, params, entries), [a for _, a in params], outs, tol)


@case("trig_inverse_hyperbolic_f32")
def _(rng):
    return trig_case("trig_inverse_hyperbolic_f32", np.float32, rng, (2e-6, 1e-6))


@case("trig_inverse_hyperbolic_f64")
def _(rng):
    return trig_case("trig_inverse_hyperbolic_f64", np.float64, rng, (1e-13, 1e-14))


def mulhi_reference(a, b, bits, signed):
    """The high half of the exact double-width product, in Python integers."""
    out = []
    for x, y in zip(a.tolist(), b.tolist()):
        hi = (int(x) * int(y)) >> bits  # floor shift: arithmetic for negative products
        hi &= (1 << bits) - 1
        if signed and hi >= 1 << (bits - 1):
            hi -= 1 << bits
        out.append(hi)
    return np.array(out, dtype=a.dtype)


def mulhi_case(name, dtype, rng):
    info = np.iinfo(dtype)
    signed = info.min < 0
    edges = [info.min, info.max, 0, 1, -1 if signed else 2, info.max // 2 + 1, info.min + 1 if signed else 3]
    a = np.array(edges + edges + list(rng.integers(info.min, info.max, 6, dtype=dtype, endpoint=True)), dtype=dtype)
    b = np.array(edges + edges[::-1] + list(rng.integers(info.min, info.max, 6, dtype=dtype, endpoint=True)), dtype=dtype)
    out = mulhi_reference(a, b, info.bits, signed)
    text = tuple_module(name, [("a", a), ("b", b)], [("r0", shape_of(out), "mulhi", ["a", "b"])])
    return Case(text, [a, b], [out])


for _dtype in (np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64):
    _name = "mulhi_%s_edges" % np.dtype(_dtype).name
    case(_name)(lambda rng, n=_name, t=_dtype: mulhi_case(n, t, rng))


def topk_reference(x, k, largest):
    """A stable sort of each row (lower index first among ties), sliced."""
    keys = -x.astype(np.float64) if largest else x.astype(np.float64)
    order = np.argsort(keys, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)


def topk_module(name, x, k, largest):
    values, indices = topk_reference(x, k, largest)
    text = """HloModule %s

ENTRY main {
  x = %s parameter(0)
  t = (%s, %s) topk(x), k=%d, largest=%s
  v = %s get-tuple-element(t), index=0
  i = %s get-tuple-element(t), index=1
  ROOT r = (%s, %s) tuple(v, i)
}
""" % (name, shape_of(x), shape_of(values), shape_of(indices), k, "true" if largest else "false",
       shape_of(values), shape_of(indices), shape_of(values), shape_of(indices))
    return Case(text, [x], [values, indices])


@case("topk_ties_go_to_the_lower_index")
def _(rng):
    x = np.array([[3, 1, 3, 2, 3, 1], [0, 0, 0, 0, 0, 0], [-1, 5, 5, -1, 4, 5]], dtype=np.float32)
    return topk_module("topk_ties_go_to_the_lower_index", x, 4, True)


@case("topk_smallest_s32")
def _(rng):
    x = rng.integers(-3, 3, (2, 3, 7)).astype(np.int32)
    return topk_module("topk_smallest_s32", x, 3, False)


@case("topk_largest_random_f32")
def _(rng):
    x = rng.standard_normal((4, 9)).astype(np.float32)
    return topk_module("topk_largest_random_f32", x, 9, True)


@case("scan_cumulative_sum_with_carry")
def _(rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    init = rng.standard_normal(3).astype(np.float32)
    fwd = init[:, None] + np.cumsum(x.astype(np.float64), axis=1)
    rev = init[:, None] + np.cumsum(x[:, ::-1].astype(np.float64), axis=1)[:, ::-1]
    body = """step {
  slice = f32[3] parameter(0)
  carry = f32[3] parameter(1)
  sum = f32[3] add(carry, slice)
  ROOT out = (f32[3], f32[3]) tuple(sum, sum)
}
"""
    text = """HloModule scan_cumulative_sum_with_carry

%s
ENTRY main {
  x = f32[3,5] parameter(0)
  init = f32[3] parameter(1)
  fwd = (f32[3,5], f32[3]) scan(x, init), dimensions={1}, num_carries=1, is_associative=true, to_apply=step
  rev = (f32[3,5], f32[3]) scan(x, init), dimensions={1}, num_carries=1, is_reverse=true, to_apply=step
  f0 = f32[3,5] get-tuple-element(fwd), index=0
  f1 = f32[3] get-tuple-element(fwd), index=1
  r0 = f32[3,5] get-tuple-element(rev), index=0
  r1 = f32[3] get-tuple-element(rev), index=1
  ROOT r = (f32[3,5], f32[3], f32[3,5], f32[3]) tuple(f0, f1, r0, r1)
}
""" % body
    outs = [fwd.astype(np.float32), fwd[:, -1].astype(np.float32), rev.astype(np.float32),
            rev[:, 0].astype(np.float32)]
    return Case(text, [x, init], outs, (1e-5, 1e-6))


def group_of(sizes, at):
    end = 0
    for g, s in enumerate(sizes):
        end += s
        if at < end:
            return g
    return -1


@case("ragged_dot_rows_take_their_groups_rhs")
def _(rng):
    lhs = rng.standard_normal((7, 4)).astype(np.float32)
    rhs = rng.standard_normal((3, 4, 5)).astype(np.float32)
    sizes = np.array([2, 0, 4], dtype=np.int32)  # an empty group; row 6 belongs to none
    out = np.zeros((7, 5))
    for m in range(7):
        g = group_of(sizes, m)
        if g >= 0:
            out[m] = lhs[m].astype(np.float64) @ rhs[g].astype(np.float64)
    text = """HloModule ragged_dot_rows_take_their_groups_rhs

ENTRY main {
  lhs = f32[7,4] parameter(0)
  rhs = f32[3,4,5] parameter(1)
  sizes = s32[3] parameter(2)
  ROOT d = f32[7,5] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
}
"""
    return Case(text, [lhs, rhs, sizes], [out.astype(np.float32)], (1e-5, 1e-5))


@case("ragged_dot_contracting_groups_give_partial_sums")
def _(rng):
    lhs = rng.standard_normal((3, 6)).astype(np.float32)
    rhs = rng.standard_normal((6, 2)).astype(np.float32)
    sizes = np.array([2, 3], dtype=np.int32)
    out = np.zeros((2, 3, 2))
    for g, (lo, hi) in enumerate([(0, 2), (2, 5)]):
        out[g] = lhs[:, lo:hi].astype(np.float64) @ rhs[lo:hi].astype(np.float64)
    text = """HloModule ragged_dot_contracting_groups_give_partial_sums

ENTRY main {
  lhs = f32[3,6] parameter(0)
  rhs = f32[6,2] parameter(1)
  sizes = s32[2] parameter(2)
  ROOT d = f32[2,3,2] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
}
"""
    return Case(text, [lhs, rhs, sizes], [out.astype(np.float32)], (1e-5, 1e-5))


@case("scaled_dot_repeats_each_scale_over_its_block")
def _(rng):
    lhs = rng.standard_normal((4, 8)).astype(np.float32)
    rhs = rng.standard_normal((8, 3)).astype(np.float32)
    ls = rng.uniform(0.5, 2, (4, 2)).astype(np.float32)   # blocks of 4 along k
    rs = rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    a = lhs.astype(np.float64) * np.repeat(ls.astype(np.float64), 4, axis=1)
    b = rhs.astype(np.float64) * np.repeat(rs.astype(np.float64), 4, axis=0)
    text = """HloModule scaled_dot_repeats_each_scale_over_its_block

ENTRY main {
  lhs = f32[4,8] parameter(0)
  rhs = f32[8,3] parameter(1)
  ls = f32[4,2] parameter(2)
  rs = f32[2,3] parameter(3)
  ROOT d = f32[4,3] scaled-dot(lhs, rhs, ls, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
    return Case(text, [lhs, rhs, ls, rs], [(a @ b).astype(np.float32)], (1e-5, 1e-5))


@case("dimension_sizes_on_static_shapes")
def _(rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    text = """HloModule dimension_sizes_on_static_shapes

ENTRY main {
  x = f32[3,5] parameter(0)
  d0 = s32[] get-dimension-size(x), dimensions={0}
  d1 = s32[] get-dimension-size(x), dimensions={1}
  n = s32[] constant(3)
  same = f32[3,5] set-dimension-size(x, n), dimensions={0}
  five = s32[] constant(5)
  three = s32[] constant(3)
  flat = f32[5,3] dynamic-reshape(x, five, three)
  ROOT r = (s32[], s32[], f32[3,5], f32[5,3]) tuple(d0, d1, same, flat)
}
"""
    return Case(text, [x], [np.int32(3), np.int32(5), x, x.reshape(5, 3)])


@case("async_wrappers_run_their_op")
def _(rng):
    x = rng.standard_normal(6).astype(np.float32)
    y = rng.standard_normal(6).astype(np.float32)
    text = """HloModule async_wrappers_run_their_op

%s
wrapped {
  a = f32[6] parameter(0)
  b = f32[6] parameter(1)
  ROOT m = f32[6] multiply(a, b)
}

ENTRY main {
  x = f32[6] parameter(0)
  y = f32[6] parameter(1)
  start = ((f32[6], f32[6]), f32[6], s32[]) async-start(x, y), calls=wrapped
  update = ((f32[6], f32[6]), f32[6], s32[]) async-update(start), calls=wrapped
  done = f32[6] async-done(update), calls=wrapped
  ars = f32[6] all-reduce-start(x), replica_groups={}, to_apply=add
  ard = f32[6] all-reduce-done(ars)
  ags = (f32[6], f32[6]) all-gather-start(y), replica_groups={}, dimensions={0}
  agd = f32[6] all-gather-done(ags)
  cps = (f32[6], f32[6], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,0}}
  cpd = f32[6] collective-permute-done(cps)
  cs = (f32[6], f32[6], u32[]) copy-start(y)
  cd = f32[6] copy-done(cs)
  a2a = f32[6] all-to-all(x), replica_groups={{0}}, dimensions={0}
  cb = f32[6] collective-broadcast(y), replica_groups={{0}}
  cr = f32[6] collective-reduce(x), replica_groups={{0}}, to_apply=add
  tok = token[] after-all()
  tok2 = token[] after-all(tok, tok)
  dep = f32[6] add-dependency(done, tok2)
  dom = f32[6] domain(dep), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=0}}
  ROOT r = (f32[6], f32[6], f32[6], f32[6], f32[6], f32[6], f32[6], f32[6]) tuple(dom, ard, agd, cpd, cd, a2a, cb, cr)
}
""" % ADD_F32
    prod = (x.astype(np.float64) * y).astype(np.float32)
    return Case(text, [x, y], [prod, x, y, x, y, x, y, x])


@case("ragged_all_to_all_one_replica_moves_rows")
def _(rng):
    src = rng.standard_normal((5, 2)).astype(np.float32)
    dst = rng.standard_normal((6, 2)).astype(np.float32)
    out = dst.copy()
    out[3:6] = src[1:4]
    text = """HloModule ragged_all_to_all_one_replica_moves_rows

ENTRY main {
  src = f32[5,2] parameter(0)
  dst = f32[6,2] parameter(1)
  in_off = s32[1] constant({1})
  send = s32[1] constant({3})
  out_off = s32[1] constant({3})
  recv = s32[1] constant({3})
  ROOT r = f32[6,2] ragged-all-to-all(src, dst, in_off, send, out_off, recv), replica_groups={{0}}
}
"""
    return Case(text, [src, dst], [out])


@case("ragged_dot_groups_per_batch")
def _(rng):
    lhs = rng.standard_normal((2, 5, 3)).astype(np.float32)
    rhs = rng.standard_normal((2, 2, 3, 4)).astype(np.float32)   # [batch, group, k, n]
    sizes = np.array([[2, 3], [4, 0]], dtype=np.int32)          # [batch, G]
    out = np.zeros((2, 5, 4))
    for b in range(2):
        for m in range(5):
            g = group_of(sizes[b], m)
            if g >= 0:
                out[b, m] = lhs[b, m].astype(np.float64) @ rhs[b, g].astype(np.float64)
    text = """HloModule ragged_dot_groups_per_batch

ENTRY main {
  lhs = f32[2,5,3] parameter(0)
  rhs = f32[2,2,3,4] parameter(1)
  sizes = s32[2,2] parameter(2)
  ROOT d = f32[2,5,4] ragged-dot(lhs, rhs, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={1}
}
"""
    return Case(text, [lhs, rhs, sizes], [out.astype(np.float32)], (1e-5, 1e-5))


@case("ragged_dot_ragged_batch_is_a_plain_dot")
def _(rng):
    lhs = rng.standard_normal((3, 2, 4)).astype(np.float32)
    rhs = rng.standard_normal((3, 4, 5)).astype(np.float32)
    sizes = np.array([1, 2], dtype=np.int32)
    out = np.einsum("bmk,bkn->bmn", lhs.astype(np.float64), rhs.astype(np.float64))
    text = """HloModule ragged_dot_ragged_batch_is_a_plain_dot

ENTRY main {
  lhs = f32[3,2,4] parameter(0)
  rhs = f32[3,4,5] parameter(1)
  sizes = s32[2] parameter(2)
  ROOT d = f32[3,2,5] ragged-dot(lhs, rhs, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}
}
"""
    return Case(text, [lhs, rhs, sizes], [out.astype(np.float32)], (1e-5, 1e-5))


# group_sizes may carry leading dims (XLA's InferRaggedDotOpShape): all of
# lhs's batch dims, then, by mode, the lhs free dims before the ragged one
# (rows), the contracting dims listed before it (sums), or only the batch
# dims listed before it (a ragged batch dim). Each prefix index has its own
# row of G sizes.


@case("ragged_dot_rows_sizes_per_batch_and_leading_free_dim")
def _(rng):
    # lhs [b=2, x=3, m=5 (ragged), k=4]; rhs [b=2, k=4, G=2, n=6] (group dim 2)
    lhs = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    rhs = rng.standard_normal((2, 4, 2, 6)).astype(np.float32)
    sizes = np.array([[[2, 3], [0, 5], [1, 1]],
                      [[5, 0], [3, 1], [4, 2]]], dtype=np.int64)  # [b, x, G]; rows past the sum: none
    out = np.zeros((2, 3, 5, 6))
    for b in range(2):
        for x in range(3):
            for m in range(5):
                g = group_of(sizes[b, x], m)
                if g >= 0:
                    out[b, x, m] = lhs[b, x, m].astype(np.float64) @ rhs[b, :, g, :].astype(np.float64)
    text = """HloModule ragged_dot_rows_sizes_per_batch_and_leading_free_dim

ENTRY main {
  lhs = f32[2,3,5,4] parameter(0)
  rhs = f32[2,4,2,6] parameter(1)
  sizes = s64[2,3,2] parameter(2)
  ROOT d = f32[2,3,5,6] ragged-dot(lhs, rhs, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={3}, rhs_contracting_dims={1}, lhs_ragged_dims={2}, rhs_group_dims={2}
}
"""
    return Case(text, [lhs, rhs, sizes], [out.astype(np.float32)], (1e-5, 1e-5))


@case("ragged_dot_sizes_in_column_major_layout")
def _(rng):
    # group_sizes s32[2,3]{0,1}: its rows are read through its layout.
    lhs = rng.standard_normal((2, 6, 3)).astype(np.float32)
    rhs = rng.standard_normal((2, 3, 3, 4)).astype(np.float32)   # [batch, G, k, n]
    sizes = np.array([[1, 2, 3], [4, 0, 1]], dtype=np.int32)
    out = np.zeros((2, 6, 4))
    for b in range(2):
        for m in range(6):
            g = group_of(sizes[b], m)
            if g >= 0:
                out[b, m] = lhs[b, m].astype(np.float64) @ rhs[b, g].astype(np.float64)
    text = """HloModule ragged_dot_sizes_in_column_major_layout

ENTRY main {
  lhs = f32[2,6,3] parameter(0)
  rhs = f32[2,3,3,4] parameter(1)
  sizes = s32[2,3]{0,1} parameter(2)
  ROOT d = f32[2,6,4] ragged-dot(lhs, rhs, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={1}
}
"""
    return Case(text, [lhs, rhs, sizes], [out.astype(np.float32)], (1e-5, 1e-5))


@case("ragged_dot_group_sizes_past_int64_saturate")
def _(rng):
    # Group 1 is 2^63 - 1 rows long: rows 1.. are all its. The running sum
    # of sizes saturates rather than wrapping (1 + (2^63 - 1) would be
    # negative), so no row falls out of its group.
    lhs = rng.standard_normal((5, 3)).astype(np.float32)
    rhs = rng.standard_normal((3, 3, 2)).astype(np.float32)
    big = 2**63 - 1
    sizes = np.array([1, big, big], dtype=np.int64)
    out = np.zeros((5, 2))
    for m in range(5):
        g = 0 if m < 1 else 1   # exact: group 1 ends at 1 + big, past every row
        out[m] = lhs[m].astype(np.float64) @ rhs[g].astype(np.float64)
    text = """HloModule ragged_dot_group_sizes_past_int64_saturate

ENTRY main {
  lhs = f32[5,3] parameter(0)
  rhs = f32[3,3,2] parameter(1)
  sizes = s64[3] parameter(2)
  ROOT d = f32[5,2] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
}
"""
    return Case(text, [lhs, rhs, sizes], [out.astype(np.float32)], (1e-5, 1e-5))


@case("ragged_dot_sums_sizes_past_int64_saturate")
def _(rng):
    # Contracting groups of sizes [2, 2^63 - 1, 5]: group 1 takes k from 2
    # to the end; group 2 starts past the end (the saturated sum) and is 0.
    lhs = rng.standard_normal((2, 6)).astype(np.float32)
    rhs = rng.standard_normal((6, 3)).astype(np.float32)
    sizes = np.array([2, 2**63 - 1, 5], dtype=np.int64)
    out = np.zeros((3, 2, 3))
    out[0] = lhs[:, :2].astype(np.float64) @ rhs[:2].astype(np.float64)
    out[1] = lhs[:, 2:].astype(np.float64) @ rhs[2:].astype(np.float64)
    text = """HloModule ragged_dot_sums_sizes_past_int64_saturate

ENTRY main {
  lhs = f32[2,6] parameter(0)
  rhs = f32[6,3] parameter(1)
  sizes = s64[3] parameter(2)
  ROOT d = f32[3,2,3] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
}
"""
    return Case(text, [lhs, rhs, sizes], [out.astype(np.float32)], (1e-5, 1e-5))


def ragged_sums_reference(lhs, rhs, sizes, groups):
    """lhs [b, m, c, k], rhs [b, c, k, n], sizes [b, c, G]: for each group,
    the sum over c and over group g's part of k (for that b and c)."""
    nb, nm, nc, nk = lhs.shape
    out = np.zeros((groups, nb, nm, rhs.shape[3]))
    for b in range(nb):
        for c in range(nc):
            for k in range(nk):
                g = group_of(sizes[b, c], k)
                if g >= 0:
                    out[g, b] += np.outer(lhs[b, :, c, k].astype(np.float64), rhs[b, c, k].astype(np.float64))
    return out


@case("ragged_dot_sums_sizes_per_batch_and_earlier_contracting_dim")
def _(rng):
    # lhs [b=2, k=6 (ragged), m=3, c=4], contracting dims listed {3, 1}: c
    # comes before the ragged k in the list, so group_sizes is [b, c, G].
    lhs = rng.standard_normal((2, 6, 3, 4)).astype(np.float32)
    rhs = rng.standard_normal((2, 5, 4, 6)).astype(np.float32)   # [b, n, c, k]
    sizes = rng.integers(0, 4, (2, 4, 3)).astype(np.int32)      # sums from 0 to 9: some past k's 6
    lhs_bmck = lhs.transpose(0, 2, 3, 1)                        # [b, m, c, k]
    rhs_bckn = rhs.transpose(0, 2, 3, 1)                        # [b, c, k, n]
    out = ragged_sums_reference(lhs_bmck, rhs_bckn, sizes, 3)
    text = """HloModule ragged_dot_sums_sizes_per_batch_and_earlier_contracting_dim

ENTRY main {
  lhs = f32[2,6,3,4] parameter(0)
  rhs = f32[2,5,4,6] parameter(1)
  sizes = s32[2,4,3] parameter(2)
  ROOT d = f32[3,2,3,5] ragged-dot(lhs, rhs, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={3,1}, rhs_contracting_dims={2,3}, lhs_ragged_dims={1}
}
"""
    return Case(text, [lhs, rhs, sizes], [out.astype(np.float32)], (1e-5, 1e-5))


@case("ragged_dot_ragged_batch_sizes_per_outer_batch_dim")
def _(rng):
    # Batch dims {0, 1}, the ragged one is 1: group_sizes is [b0, G]; the
    # result is the plain dot, as XLA's ragged-dot rewriter makes it.
    lhs = rng.standard_normal((2, 3, 2, 4)).astype(np.float32)
    rhs = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    sizes = np.array([[1, 2], [3, 0]], dtype=np.int64)
    out = np.einsum("abmk,abkn->abmn", lhs.astype(np.float64), rhs.astype(np.float64))
    text = """HloModule ragged_dot_ragged_batch_sizes_per_outer_batch_dim

ENTRY main {
  lhs = f32[2,3,2,4] parameter(0)
  rhs = f32[2,3,4,5] parameter(1)
  sizes = s64[2,2] parameter(2)
  ROOT d = f32[2,3,2,5] ragged-dot(lhs, rhs, sizes), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_contracting_dims={2}, lhs_ragged_dims={1}
}
"""
    return Case(text, [lhs, rhs, sizes], [out.astype(np.float32)], (1e-5, 1e-5))


@case("async_start_old_style_dump")
def _(rng):
    """An async call as XLA prints it after scheduling: %names, typed
    operands, execution threads, calls= on every part of the pair."""
    a = rng.standard_normal(8).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    t = "((f32[8]{0}, f32[8]{0}), f32[8]{0}, u32[])"
    text = """HloModule async_start_old_style_dump, entry_computation_layout={(f32[8]{0}, f32[8]{0})->f32[8]{0}}

%%called_computation (param_0: f32[8], param_1: f32[8]) -> f32[8] {
  %%param_0 = f32[8]{0} parameter(0)
  %%param_1 = f32[8]{0} parameter(1)
  ROOT %%add = f32[8]{0} add(f32[8]{0} %%param_0, f32[8]{0} %%param_1)
}, execution_thread="parallel_thread"

%%async_wrapped (async_param: f32[8], async_param.1: f32[8]) -> f32[8] {
  %%async_param = f32[8]{0} parameter(0)
  %%async_param.1 = f32[8]{0} parameter(1)
  ROOT %%call = f32[8]{0} call(f32[8]{0} %%async_param, f32[8]{0} %%async_param.1), to_apply=%%called_computation
}, execution_thread="parallel_thread"

ENTRY %%main (a: f32[8], b: f32[8]) -> f32[8] {
  %%a = f32[8]{0} parameter(0)
  %%b = f32[8]{0} parameter(1)
  %%async-start = %(t)s async-start(f32[8]{0} %%a, f32[8]{0} %%b), async_execution_thread="parallel_thread", calls=%%async_wrapped
  %%negate_2 = f32[8]{0} negate(f32[8]{0} %%a)
  %%async-update = %(t)s async-update(%(t)s %%async-start), async_execution_thread="parallel_thread", calls=%%async_wrapped
  %%async-done = f32[8]{0} async-done(%(t)s %%async-update), async_execution_thread="parallel_thread", calls=%%async_wrapped
  ROOT %%add_1 = f32[8]{0} add(f32[8]{0} %%async-done, f32[8]{0} %%negate_2)
}
""" % {"t": t}
    return Case(text, [a, b], [(a + b) + (-a)])


@case("async_start_with_a_lone_unwrapped_operand")
def _(rng):
    x = rng.standard_normal(4).astype(np.float32)
    text = """HloModule async_start_with_a_lone_unwrapped_operand

wrapped {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}

ENTRY main {
  x = f32[4] parameter(0)
  start = (f32[4], f32[4], s32[]) async-start(x), calls=wrapped
  ROOT done = f32[4] async-done(start)
}
"""
    return Case(text, [x], [-x])


def lu_reference(a):
    """LAPACK getrf on one matrix: partial pivoting (first largest |a| in the
    column), 1-based pivots, info = first zero pivot column (1-based) or 0."""
    a = np.array(a, dtype=np.float64)
    m, n = a.shape
    steps = min(m, n)
    ipiv = np.zeros(steps, dtype=np.int32)
    info = 0
    for j in range(steps):
        p = j + int(np.argmax(np.abs(a[j:, j])))  # argmax keeps the first of equal values
        ipiv[j] = p + 1
        if a[p, j] != 0:
            a[[j, p]] = a[[p, j]]
            a[j + 1:, j] /= a[j, j]
        elif info == 0:
            info = j + 1
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, ipiv, np.int32(info)


def getrf_case(name, a, target, tol):
    batch = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    parts = [lu_reference(x) for x in flat]
    lu = np.stack([p[0] for p in parts]).reshape(a.shape).astype(a.dtype)
    ipiv = np.stack([p[1] for p in parts]).reshape(batch + (min(a.shape[-2:]),))
    info = np.array([p[2] for p in parts], dtype=np.int32).reshape(batch)
    t = "(%s, %s, %s)" % (shape_of(lu), shape_of(ipiv), shape_of(info))
    text = """HloModule %s

ENTRY main {
  a = %s parameter(0)
  ROOT lu = %s custom-call(a), custom_call_target="%s", operand_layout_constraints={%s}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI
}
""" % (name, shape_of(a), t, target, shape_of(a))
    return Case(text, [a], [lu, ipiv, info], tol)


@case("lapack_sgetrf_runs_as_jax_lu")
def _(rng):
    a = rng.standard_normal((5, 5)).astype(np.float32)
    return getrf_case("lapack_sgetrf_runs_as_jax_lu", a, "lapack_sgetrf_ffi", (1e-4, 1e-5))


@case("lapack_dgetrf_batched_rectangular")
def _(rng):
    a = rng.standard_normal((2, 4, 3))
    return getrf_case("lapack_dgetrf_batched_rectangular", a, "lapack_dgetrf_ffi", (1e-12, 1e-13))


@case("lapack_dgetrf_singular_reports_info")
def _(rng):
    a = np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 4.0], [0.0, 3.0, 7.0]])
    return getrf_case("lapack_dgetrf_singular_reports_info", a, "lapack_dgetrf_ffi", None)


@case("custom_call_sharding_is_identity")
def _(rng):
    # jax.lax.with_sharding_constraint leaves custom_call_target="Sharding" in
    # the HLO, and shard_map the SPMDFullToShardShape / SPMDShardToFullShape
    # pair: on one device each is its operand (XLA's ShardingRemover drops
    # them). Here in the entry and in a while body.
    x = rng.standard_normal((8, 4)).astype(np.float32)
    text = """HloModule custom_call_sharding_is_identity, entry_computation_layout={(f32[8,4]{1,0})->(f32[8,4]{1,0}, f32[8,4]{1,0})}

body {
  p = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[8,4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  h = f32[8,4] tanh(v)
  hs = f32[8,4] custom-call(h), custom_call_target="Sharding", sharding={replicated}
  ROOT t = (s32[], f32[8,4]) tuple(next, hs)
}

cond {
  p = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}

ENTRY main {
  x = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  s = f32[8,4]{1,0} sine(x)
  c = f32[8,4]{1,0} custom-call(s), custom_call_target="Sharding", sharding={devices=[2,1]<=[2]}
  m = f32[8,4]{1,0} multiply(c, c)
  shard = f32[8,4]{1,0} custom-call(m), custom_call_target="SPMDFullToShardShape", sharding={manual}
  full = f32[8,4]{1,0} custom-call(shard), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1]<=[2]}
  zero = s32[] constant(0)
  init = (s32[], f32[8,4]) tuple(zero, c)
  w = (s32[], f32[8,4]) while(init), condition=cond, body=body
  wv = f32[8,4] get-tuple-element(w), index=1
  ROOT r = (f32[8,4], f32[8,4]) tuple(full, wv)
}
"""
    s = np.sin(x)
    return Case(text, [x], [s * s, np.tanh(np.tanh(np.tanh(s)))], tol=(1e-5, 1e-6))
