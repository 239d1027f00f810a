"""Corpus cases for the narrow types: f32 to every 8- and 4-bit float and
back, f8 arithmetic (computed in f32, rounded back), s4/u4 arithmetic that
wraps, a packed s4[..]{..:E(4)} bitcast, and stochastic-convert.

NumPy has none of these types. The f8/f4 values travel as their bits in
uint8 arrays and the 4-bit integers as int8/uint8 values (axle-run reads
and writes them the same way); every golden comes from
minifloat_reference.py (exact fractions) or plain integer arithmetic here.
"""
import numpy as np

from corpus_common import Case, case
import minifloat_reference as mf

MINIFLOATS = list(mf.FORMATS)


def f32_array(values):
    return np.array(values, dtype=np.float32)


def edge_values():
    """For every type: its max, the tie just past it and a value beyond,
    its smallest subnormal, half of it (a tie with 0) and 1.5 of it, and a
    tie between two normals; each with both signs."""
    out = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0]
    for name in MINIFLOATS:
        top = mf.decode(name, mf.max_finite(name))
        below_top = mf.decode(name, mf.max_finite(name) - 1)
        tiny = mf.decode(name, 1)
        for v in (top, top + (top - below_top) / 2, top * 1.5, tiny, tiny / 2, tiny * 1.5,
                  1.0 + (mf.decode(name, mf.encode(name, 1.0) + 1) - 1.0) / 2):
            out += [v, -v]
    return [mf.f32(v) if np.isfinite(v) and abs(v) < 3e38 else v for v in out]


def tie_values():
    """Every exact tie of every type: the midpoint of each pair of
    neighbouring finite values (exact in f32), with alternating signs, so
    that rounding to even is checked everywhere, subnormals included."""
    out = []
    for name in MINIFLOATS:
        width = mf.FORMATS[name][0] + mf.FORMATS[name][1]
        values = sorted({mf.decode(name, b) for b in range(1 << width)
                         if not mf.is_nan_bits(name, b) and np.isfinite(mf.decode(name, b))})
        for i, (lo, hi) in enumerate(zip(values, values[1:])):
            out.append((lo + hi) / 2 * (-1 if i % 2 else 1))
    return out


def module(name, params, ops):
    """params: [(var, shape text)]; ops: [(var, shape text, expression)]."""
    lines = ["  %s = %s parameter(%d)" % (v, s, i) for i, (v, s) in enumerate(params)]
    lines += ["  %s = %s %s" % (v, s, e) for v, s, e in ops]
    root = "(%s)" % ", ".join(s for _, s, _ in ops)
    lines.append("  ROOT result = %s tuple(%s)" % (root, ", ".join(v for v, _, _ in ops)))
    return "HloModule %s\n\nENTRY main {\n%s\n}\n" % (name, "\n".join(lines))


@case("convert_f32_to_each_minifloat_and_back")
def convert_minifloats(rng):
    x = edge_values()
    magnitudes = np.exp2(rng.uniform(-20, 20, 64)) * rng.choice([-1.0, 1.0], 64)
    x = f32_array(x + tie_values() + [mf.f32(v) for v in magnitudes])
    n = len(x)
    ops, outs = [], []
    for i, name in enumerate(MINIFLOATS):
        bits = np.array([mf.encode(name, float(v)) for v in x], dtype=np.uint8)
        back = f32_array([mf.decode(name, int(b)) for b in bits])
        ops.append(("n%d" % i, "%s[%d]" % (name, n), "convert(x)"))
        ops.append(("b%d" % i, "f32[%d]" % n, "convert(n%d)" % i))
        outs += [bits, back]
    hlo = module("convert_f32_to_each_minifloat_and_back", [("x", "f32[%d]" % n)], ops)
    return Case(hlo, [x], outs, tol=(0, 0))


def f8_binary(name, a_bits, b_bits, fn):
    """The result bits of an elementwise op on f8 values: computed in float32
    from the decoded operands, then rounded to the type."""
    a = f32_array([mf.decode(name, int(v)) for v in a_bits])
    b = f32_array([mf.decode(name, int(v)) for v in b_bits])
    with np.errstate(all="ignore"):
        r = fn(a, b).astype(np.float32)
    return np.array([mf.encode(name, float(v)) for v in r], dtype=np.uint8)


@case("f8_arithmetic_rounds_each_f32_result")
def f8_arithmetic(rng):
    ops, outs, params, inputs = [], [], [], []
    for k, name in enumerate(["f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f4e2m1fn"]):
        width = 4 if name == "f4e2m1fn" else 8
        a = rng.integers(0, 1 << width, 24).astype(np.uint8)
        b = rng.integers(0, 1 << width, 24).astype(np.uint8)
        params += [("a%d" % k, "%s[24]" % name), ("b%d" % k, "%s[24]" % name)]
        inputs += [a, b]
        for opcode, fn in (("add", np.add), ("subtract", np.subtract),
                           ("multiply", np.multiply), ("divide", np.divide)):
            ops.append(("%s%d" % (opcode, k), "%s[24]" % name, "%s(a%d, b%d)" % (opcode, k, k)))
            outs.append(f8_binary(name, a, b, fn))
    return Case(module("f8_arithmetic_rounds_each_f32_result", params, ops), inputs, outs)


def wrap(v, bits, signed):
    v = np.asarray(v, dtype=np.int64) & ((1 << bits) - 1)
    if signed:
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


@case("s4_and_u4_arithmetic_wraps")
def narrow_int_arithmetic(rng):
    a = rng.integers(-8, 8, 32).astype(np.int8)
    b = rng.integers(-8, 8, 32).astype(np.int8)
    c = rng.integers(0, 16, 32).astype(np.uint8)
    d = rng.integers(0, 16, 32).astype(np.uint8)
    a64, b64, c64, d64 = (v.astype(np.int64) for v in (a, b, c, d))
    ops = [
        ("s_add", "s4[32]", "add(a, b)", wrap(a64 + b64, 4, True).astype(np.int8)),
        ("s_sub", "s4[32]", "subtract(a, b)", wrap(a64 - b64, 4, True).astype(np.int8)),
        ("s_mul", "s4[32]", "multiply(a, b)", wrap(a64 * b64, 4, True).astype(np.int8)),
        ("s_neg", "s4[32]", "negate(a)", wrap(-a64, 4, True).astype(np.int8)),
        ("u_add", "u4[32]", "add(c, d)", wrap(c64 + d64, 4, False).astype(np.uint8)),
        ("u_mul", "u4[32]", "multiply(c, d)", wrap(c64 * d64, 4, False).astype(np.uint8)),
        ("s_wide", "s32[32]", "convert(a)", a64.astype(np.int32)),
        ("u_narrow", "u2[32]", "convert(c)", wrap(c64, 2, False).astype(np.uint8)),
        ("s_narrow", "s2[32]", "convert(a)", wrap(a64, 2, True).astype(np.int8)),
    ]
    params = [("a", "s4[32]"), ("b", "s4[32]"), ("c", "u4[32]"), ("d", "u4[32]")]
    hlo = module("s4_and_u4_arithmetic_wraps", params, [o[:3] for o in ops])
    return Case(hlo, [a, b, c, d], [o[3] for o in ops])


@case("packed_s4_bitcast_and_bitcast_convert")
def packed_bitcast(rng):
    x = rng.integers(-8, 8, 16).astype(np.int8)
    nibbles = x.astype(np.int64) & 0xF
    packed = nibbles[0::2] | (nibbles[1::2] << 4)  # element k in nibble k of the buffer
    # s4[4,4]{0,1:E(4)}: the buffer's nibbles fill columns first
    column_major = x.reshape(4, 4).T.copy()
    # unpacked s4[8]: one element a byte, its low nibble
    unpacked = wrap(packed, 4, True).astype(np.int8)
    as_bytes = wrap(packed, 8, True).astype(np.int8)
    ops = [
        ("t", "s4[4,4]{0,1:E(4)}", "bitcast(x)"),
        ("u", "s4[8]{0}", "bitcast(x)"),
        ("r", "s4[8,2]", "reshape(x)"),
        ("v", "s8[8]", "bitcast-convert(r)"),
    ]
    hlo = module("packed_s4_bitcast_and_bitcast_convert", [("x", "s4[16]{0:E(4)}")], ops)
    return Case(hlo, [x], [column_major, unpacked, x.reshape(8, 2), as_bytes])


@case("packed_bitcasts_both_ways_and_sub_byte_bitcast_converts")
def packed_both_ways(rng):
    """A bitcast into a packed layout: s4[8] one a byte is 8 bytes, each
    element sign-extended, so nibble 2k is x[k] and nibble 2k+1 its sign
    (-1 or 0). Out of one: u4 packed read one a byte takes each byte's low
    nibble. bitcast-convert between a sub-byte integer and u8/s8 splits a
    byte low bits first, and joins the parts back."""
    x = rng.integers(-8, 8, 8).astype(np.int8)
    xp = rng.integers(0, 16, 16).astype(np.uint8)
    y = rng.integers(0, 256, 6).astype(np.uint8)
    z = rng.integers(-128, 128, 6).astype(np.int8)
    spread = np.stack([x, np.where(x < 0, -1, 0)], axis=1).reshape(16).astype(np.int8)
    nibbles = np.stack([y & 0xF, y >> 4], axis=1).astype(np.uint8)
    z_bits = z.astype(np.int64) & 0xFF
    crumbs = wrap(np.stack([(z_bits >> (2 * j)) & 3 for j in range(4)], axis=1), 2, True).astype(np.int8)
    ops = [
        ("p", "s4[16]{0:E(4)}", "bitcast(x)"),
        ("q", "u4[8]{0}", "bitcast(xp)"),
        ("n", "u4[6,2]", "bitcast-convert(y)"),
        ("m", "u8[6]", "bitcast-convert(n)"),
        ("t", "s2[6,4]", "bitcast-convert(z)"),
        ("b", "s8[6]", "bitcast-convert(t)"),
    ]
    params = [("x", "s4[8]"), ("xp", "u4[16]{0:E(4)}"), ("y", "u8[6]"), ("z", "s8[6]")]
    hlo = module("packed_bitcasts_both_ways_and_sub_byte_bitcast_converts", params, ops)
    return Case(hlo, [x, xp, y, z], [spread, xp[0::2].copy(), nibbles, y, crumbs, z])


def stochastic_round(x, random, random_bits, result_bits):
    """XLA's evaluator: saturate, NaN to 0, else round the magnitude up when
    random < fraction * 2^random_bits."""
    hi, lo = (1 << (result_bits - 1)) - 1, -(1 << (result_bits - 1))
    out = []
    for v, r in zip(x.astype(np.float64), random.astype(np.uint64)):
        if np.isnan(v):
            out.append(0)
        elif v >= hi:
            out.append(hi)
        elif v <= lo:
            out.append(lo)
        else:
            t = np.floor(abs(v))
            up = int(r) < int((abs(v) - t) * 2.0 ** random_bits)
            out.append(int(np.copysign(t + up, v)))
    return np.array(out, dtype=np.int64)


@case("stochastic_convert_rounds_by_random_bits")
def stochastic_convert(rng):
    x = f32_array(list(rng.uniform(-20, 20, 40)) + [2.5, -2.5, 3.0, np.nan, 1e10, -1e10, 127.5, -0.25])
    random = rng.integers(0, 1 << 32, x.size, dtype=np.uint64).astype(np.uint32)
    h = rng.uniform(-300, 300, 16).astype(np.float16)
    h_random = rng.integers(0, 1 << 16, 16).astype(np.uint16)
    ops = [
        ("r32", "s32[%d]" % x.size, "stochastic-convert(x, z)",
         stochastic_round(x, random, 32, 32).astype(np.int32)),
        ("r8", "s8[%d]" % x.size, "stochastic-convert(x, z)",
         stochastic_round(x, random, 32, 8).astype(np.int8)),
        ("r16", "s16[16]", "stochastic-convert(h, w)",
         stochastic_round(h, h_random, 16, 16).astype(np.int16)),
    ]
    params = [("x", "f32[%d]" % x.size), ("z", "u32[%d]" % x.size), ("h", "f16[16]"),
              ("w", "u16[16]")]
    hlo = module("stochastic_convert_rounds_by_random_bits", params, [o[:3] for o in ops])
    return Case(hlo, [x, random, h, h_random], [o[3] for o in ops])
