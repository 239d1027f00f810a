"""Corpus cases: empty values the program computes (not only empty
parameters), and start indices at the limits of their integer types.

An empty value has no elements, so a kernel must never read one: a
dynamic-update-slice of an empty update leaves its operand as it was, a pad
of an empty operand is all padding. A start index is clamped into
[0, dim - size] in its own type: an unsigned index of 2^63 or more is large,
not negative."""
import numpy as np

from corpus_common import Case, case
import corpus_reference as ref


@case("empty_computed_dynamic_update_slice")
def _(rng):
    x = rng.standard_normal(4).astype(np.float32)
    e = np.zeros(0, np.float32)
    y = rng.standard_normal((3, 5)).astype(np.float32)
    f = np.zeros((0, 2), np.float32)
    i = np.int32(2)
    hlo = """HloModule empty_computed_dynamic_update_slice

ENTRY main {
  x = f32[4] parameter(0)
  e = f32[0] parameter(1)
  y = f32[3,5] parameter(2)
  f = f32[0,2] parameter(3)
  i = s32[] parameter(4)
  n = f32[0] negate(e)
  a = f32[4] dynamic-update-slice(x, n, i)
  two = s32[] constant(2)
  c = f32[4] dynamic-update-slice(x, n, two)
  m = f32[0,2] exponential(f)
  dus = f32[3,5] dynamic-update-slice(y, m, i, i)
  b = f32[3,5] add(dus, y)
  ROOT out = (f32[4], f32[4], f32[3,5]) tuple(a, c, b)
}"""
    return Case(hlo, [x, e, y, f, np.array(i)], [x, x, y + y])


@case("empty_computed_dynamic_update_slice_root")
def _(rng):
    x = rng.standard_normal(4).astype(np.float32)
    e = np.zeros(0, np.float32)
    hlo = """HloModule empty_computed_dynamic_update_slice_root

ENTRY main {
  x = f32[4] parameter(0)
  e = f32[0] parameter(1)
  n = f32[0] negate(e)
  i = s32[] constant(2)
  ROOT r = f32[4] dynamic-update-slice(x, n, i)
}"""
    return Case(hlo, [x, e], [x])


@case("empty_computed_pad")
def _(rng):
    e = np.zeros(0, np.float32)
    f = np.zeros((2, 0), np.float32)
    hlo = """HloModule empty_computed_pad

less_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ENTRY main {
  e = f32[0] parameter(0)
  f = f32[2,0] parameter(1)
  s = f32[0] sort(e), dimensions={0}, to_apply=less_f32
  seven = f32[] constant(7)
  a = f32[5] pad(s, seven), padding=2_3
  n = f32[2,0] negate(f)
  half = f32[] constant(0.5)
  p = f32[4,3] pad(n, half), padding=1_1x1_2_1
  two = f32[] constant(2)
  twos = f32[4,3] broadcast(two), dimensions={}
  b = f32[4,3] multiply(p, twos)
  ROOT out = (f32[5], f32[4,3]) tuple(a, b)
}"""
    return Case(hlo, [e, f], [np.full(5, 7, np.float32), np.full((4, 3), 1, np.float32)])


# Every integer type's 0, -1 (its maximum, unsigned), minimum and maximum as
# starts; u64 also 2^63: 2^63 and 2^64 - 1 must clamp high, like 255 in u8.
INDEX_TYPES = [("s8", np.int8), ("s16", np.int16), ("s32", np.int32), ("s64", np.int64),
               ("u8", np.uint8), ("u16", np.uint16), ("u32", np.uint32), ("u64", np.uint64)]


def limit_values(dtype):
    info = np.iinfo(dtype)
    values = [0, int(np.array(-1).astype(dtype)), int(info.min), int(info.max)]
    return values + ([2**63] if dtype == np.uint64 else [])


@case("dynamic_slice_index_limits")
def _(rng):
    x = rng.standard_normal((8, 6)).astype(np.float32)
    u = rng.standard_normal((3, 2)).astype(np.float32)
    params = ["  x = f32[8,6] parameter(0)", "  u = f32[3,2] parameter(1)"]
    inputs, lines, names, shapes, outs = [x, u], [], [], [], []
    for t, dtype in INDEX_TYPES:
        values = limit_values(dtype)
        for k, v in enumerate(values):
            params.append("  %s_%d = %s[] parameter(%d)" % (t, k, t, len(inputs)))
            inputs.append(np.array(v, dtype))
        # Each value as the row start, the next one as the column start.
        for k in range(len(values)):
            row, col = "%s_%d" % (t, k), "%s_%d" % (t, (k + 1) % len(values))
            s = ref.dynamic_start([values[k], values[(k + 1) % len(values)]], x.shape, u.shape)
            lines.append("  ds_%s = f32[3,2] dynamic-slice(x, %s, %s), dynamic_slice_sizes={3,2}" % (row, row, col))
            outs.append(x[s[0]:s[0] + 3, s[1]:s[1] + 2])
            # The update added to x: a dynamic-update-slice fused with its consumer.
            lines.append("  dus_%s = f32[8,6] dynamic-update-slice(x, u, %s, %s)" % (row, row, col))
            lines.append("  sum_%s = f32[8,6] add(dus_%s, x)" % (row, row))
            updated = x.copy()
            updated[s[0]:s[0] + 3, s[1]:s[1] + 2] = u
            outs += [updated, updated + x]
            names += ["ds_" + row, "dus_" + row, "sum_" + row]
            shapes += ["f32[3,2]", "f32[8,6]", "f32[8,6]"]
    hlo = "HloModule dynamic_slice_index_limits\n\nENTRY main {\n%s\n%s\n  ROOT out = (%s) tuple(%s)\n}" % (
        "\n".join(params), "\n".join(lines), ", ".join(shapes), ", ".join(names))
    return Case(hlo, inputs, outs)


@case("gather_scatter_index_limits")
def _(rng):
    x = rng.standard_normal((6, 3)).astype(np.float32)
    big = np.array([[0], [2**63], [2**64 - 1], [4], [2**63 - 1]], np.uint64)
    small = np.array([[-128], [-1], [127], [3], [0]], np.int8)
    upd = rng.standard_normal((5, 3)).astype(np.float32)
    hlo = """HloModule gather_scatter_index_limits

add_f32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT sum = f32[] add(lhs, rhs)
}

ENTRY main {
  x = f32[6,3] parameter(0)
  big = u64[5,1] parameter(1)
  small = s8[5,1] parameter(2)
  upd = f32[5,3] parameter(3)
  g1 = f32[5,2,3] gather(x, big), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,3}
  g2 = f32[5,3] gather(x, small), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  s1 = f32[6,3] scatter(x, big, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
  s2 = f32[6,3] scatter(x, small, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
  nibbles = s4[5,1] constant({{-8}, {-1}, {7}, {3}, {5}})
  g3 = f32[5,3] gather(x, nibbles), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  s3 = f32[6,3] scatter(x, nibbles, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
  ROOT out = (f32[5,2,3], f32[5,3], f32[6,3], f32[6,3], f32[5,3], f32[6,3]) tuple(g1, g2, s1, s2, g3, s3)
}"""
    add = lambda a, b: a + b  # noqa: E731
    outs = [ref.gather(x, big, [1, 2], [], [0], 1, [2, 3]),
            ref.gather(x, small, [1], [0], [0], 1, [1, 3]),
            ref.scatter(x, big, upd, [1], [0], [0], 1, add),
            ref.scatter(x, small, upd, [1], [0], [0], 1, add)]
    nibbles = np.array([[-8], [-1], [7], [3], [5]], np.int8)  # the s4 constant's values
    outs += [ref.gather(x, nibbles, [1], [0], [0], 1, [1, 3]),
             ref.scatter(x, nibbles, upd, [1], [0], [0], 1, add)]
    return Case(hlo, [x, big, small, upd], outs)


@case("bitcast_convert_widths")
def _(rng):
    h = rng.integers(0, 2**16, (3, 2)).astype(np.uint16)
    h[:, 1] &= 0x3FFF  # finite f32 values: the high halves keep the exponent below 255
    f = rng.standard_normal(3).astype(np.float32)
    d = rng.standard_normal(2)
    hlo = """HloModule bitcast_convert_widths

ENTRY main {
  h = u16[3,2] parameter(0)
  f = f32[3] parameter(1)
  d = f64[2] parameter(2)
  wide = f32[3] bitcast-convert(h)
  narrow = u16[3,2] bitcast-convert(f)
  bytes = u8[2,8] bitcast-convert(d)
  back = f64[2] bitcast-convert(bytes)
  neg = f32[3] negate(wide)
  ROOT out = (f32[3], u16[3,2], u8[2,8], f64[2], f32[3]) tuple(wide, narrow, bytes, back, neg)
}"""
    # On a little-endian machine, as XLA's bitcast-convert is: the narrow
    # type's last dimension runs from the low bytes to the high.
    wide = h.view(np.float32).reshape(3)
    outs = [wide, f.view(np.uint16).reshape(3, 2), d.view(np.uint8).reshape(2, 8), d, -wide]
    return Case(hlo, [h, f, d], outs)


@case("concatenate_all_empty")
def _(rng):
    e = np.zeros((3, 0), np.float32)
    y = rng.standard_normal((3, 2)).astype(np.float32)
    hlo = """HloModule concatenate_all_empty

ENTRY main {
  e = f32[3,0] parameter(0)
  y = f32[3,2] parameter(1)
  n = f32[3,0] negate(e)
  a = f32[3,0] concatenate(n, e, n), dimensions={1}
  b = f32[3,2] concatenate(n, y, e), dimensions={1}
  t = f32[0,3] transpose(n), dimensions={1,0}
  c = f32[0,3] concatenate(t, t), dimensions={0}
  ROOT out = (f32[3,0], f32[3,2], f32[0,3]) tuple(a, b, c)
}"""
    return Case(hlo, [e, y], [e, y, np.zeros((0, 3), np.float32)])


@case("reduce_window_empty_padded")
def _(rng):
    e = np.zeros(0, np.float32)
    f = np.zeros((0, 3), np.float32)
    hlo = """HloModule reduce_window_empty_padded

add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

ENTRY main {
  e = f32[0] parameter(0)
  f = f32[0,3] parameter(1)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  a = f32[1] reduce-window(e, zero), window={size=2 pad=1_1}, to_apply=add_f32
  n = f32[0,3] negate(f)
  b = f32[2,2] reduce-window(n, ninf), window={size=2x2 stride=2x1 pad=2_2x0_0}, to_apply=max_f32
  ROOT out = (f32[1], f32[2,2]) tuple(a, b)
}"""
    outs = [ref.reduce_window(e, 0.0, lambda p, q: p + q, [2], pads=[(1, 1)]),
            ref.reduce_window(-f, -np.inf, max, [2, 2], stride=[2, 1], pads=[(2, 2), (0, 0)])]
    return Case(hlo, [e, f], outs)


@case("select_and_scatter_empty_source")
def _(rng):
    x = rng.standard_normal((1, 4)).astype(np.float32)
    s = np.zeros((0, 2), np.float32)
    hlo = """HloModule select_and_scatter_empty_source

ge_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT ge = pred[] compare(a, b), direction=GE
}

add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[1,4] parameter(0)
  s = f32[0,2] parameter(1)
  n = f32[0,2] negate(s)
  init = f32[] constant(2.5)
  ROOT out = f32[1,4] select-and-scatter(x, n, init), window={size=2x2 stride=2x2}, select=ge_f32, scatter=add_f32
}"""
    out = ref.select_and_scatter(x, s, 2.5, [2, 2], [2, 2], [(0, 0), (0, 0)],
                                 lambda a, b: a >= b, lambda a, b: a + b)
    return Case(hlo, [x, s], [out])
