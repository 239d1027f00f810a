"""Corpus cases for convert between every pair of float types (f64, f32,
f16, bf16 and the nine 8- and 4-bit types), at the values where a
conversion can go wrong: ties of the narrower type, the values just above
and below each tie (in the source type's own precision, and within 2^-30
of it, where a conversion that rounds twice through a middle type, f64 to
f32 to f16 say, lands on the tie and picks the wrong side), the ends of the
subnormals, the largest finite value and the overflow threshold, zeros,
infinities and NaNs of both signs.

One module per source type ("convert_f64_to_every_float", ...); the 8- and
4-bit sources take all their bit patterns. Every golden is computed here
with exact rational arithmetic (fractions.Fraction): the value is rounded
once, to nearest with ties to even, onto the destination's grid, and what
lies past its largest finite value becomes infinity (f16, bf16, f32) or
what minifloat_reference.py says of the minifloats (NaN, infinity or
saturation). Neither NumPy nor axle computes a golden.
"""
import math
import struct
from fractions import Fraction

import numpy as np

from corpus_common import Bf16, Case, case
import minifloat_reference as mf

# name: (exponent bits, mantissa bits, bias) of the IEEE types
IEEE = {"f64": (11, 52, 1023), "f32": (8, 23, 127), "f16": (5, 10, 15), "bf16": (8, 7, 127)}
MINIFLOATS = list(mf.FORMATS)
TYPES = list(IEEE) + MINIFLOATS
TINY = Fraction(1, 2 ** 1100)  # below every f64 value: steps off a grid point


def floor_log2(x):
    k = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** k > x:
        k -= 1
    while Fraction(2) ** (k + 1) <= x:
        k += 1
    return k


def layout(t):
    if t in IEEE:
        return IEEE[t]
    e, m, bias, _, _ = mf.FORMATS[t]
    return e, m, bias


def max_finite(t):
    if t in IEEE:
        e, m, bias = IEEE[t]
        return (2 - Fraction(1, 2 ** m)) * Fraction(2) ** ((1 << e) - 2 - bias)
    return Fraction(mf.decode(t, mf.max_finite(t)))


def grid_round(t, x, mode="even"):
    """Positive Fraction x onto t's grid (unbounded above): to nearest even,
    or down/up."""
    e, m, bias = layout(t)
    emin = 1 - bias
    q = Fraction(2) ** (max(floor_log2(x), emin) - m)
    n = x / q
    whole = math.floor(n)
    if mode == "down":
        return whole * q
    if mode == "up":
        return math.ceil(n) * q
    rest = n - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1):
        whole += 1
    return whole * q


def ieee_convert(t, v):
    """A Python float v converted to IEEE type t: the value as a Python
    float (inf past the largest finite value; NaN keeps its sign)."""
    if math.isnan(v) or math.isinf(v) or v == 0:
        return v
    x = grid_round(t, Fraction(abs(v)))
    r = math.inf if x > max_finite(t) else float(x)
    return -r if v < 0 else r


def representable(t, v):
    """v (a Fraction, finite) exactly, if type t holds it, else None."""
    if v == 0:
        return v
    a = abs(v)
    if a > max_finite(t) or grid_round(t, a) != a:
        return None
    return v


def neighbours(t, x):
    """The values of t just below and just above positive x."""
    below = grid_round(t, x - TINY, "down") if x > TINY else Fraction(0)
    return [below, grid_round(t, x + TINY, "up")]


def grid_points(t):
    """Pairs of neighbouring finite non-negative values of t whose midpoints
    are worth testing: all of a minifloat's, and for the IEEE types the
    pairs at the bottom of the subnormals, across the smallest normal,
    around 1 and 1.5, at the top and past it (the overflow threshold)."""
    if t in MINIFLOATS:
        width = mf.FORMATS[t][0] + mf.FORMATS[t][1]
        values = sorted({Fraction(mf.decode(t, b)) for b in range(1 << width)
                         if not mf.is_nan_bits(t, b) and math.isfinite(mf.decode(t, b))
                         and mf.decode(t, b) >= 0})
        pairs = list(zip(values, values[1:]))
    else:
        e, m, bias = IEEE[t]
        tiny = Fraction(2) ** (1 - bias - m)
        normal = Fraction(2) ** (1 - bias)
        ulp1 = Fraction(1, 2 ** m)
        top = max_finite(t)
        top_ulp = Fraction(2) ** ((1 << e) - 2 - bias - m)
        pairs = [(0, tiny), (tiny, 2 * tiny), (normal - tiny, normal), (normal, normal + tiny),
                 (1, 1 + ulp1), (1 + ulp1, 1 + 2 * ulp1), (1 - ulp1 / 2, 1),
                 (Fraction(3, 2), Fraction(3, 2) + ulp1), (top - top_ulp, top), (top, top + top_ulp)]
    # the largest value past the top: the overflow threshold is its midpoint with top
    if t in MINIFLOATS and mf.FORMATS[t][4] != "none":
        top = max_finite(t)
        below = pairs[-1][0] if pairs else 0
        pairs.append((top, top + (top - below)))
    return pairs


def source_values(s, d):
    """Values of source type s that test conversion to d."""
    out = set()
    for lo, hi in grid_points(d):
        mid = (Fraction(lo) + Fraction(hi)) / 2
        for v in [Fraction(lo), Fraction(hi), mid, mid * (1 + Fraction(1, 2 ** 30)),
                  mid * (1 - Fraction(1, 2 ** 30))] + (neighbours(s, mid) if mid > 0 else []):
            if v > 0:
                v = grid_round(s, v)  # the nearest value s holds
            if representable(s, v) is not None:
                out.add(v)
    return sorted(out)


def exact_float(v):
    """A Fraction that f64 holds, as a Python float (exactly)."""
    f = float(v)
    assert Fraction(f) == v
    return f


def array_of(t, values):
    """Python floats (each exact in t) as the npy array axle-run reads for t."""
    if t == "f64":
        return np.array(values, np.float64)
    if t == "f32":
        return np.array(values, np.float32)
    if t == "f16":
        return np.array(values, np.float16)
    if t == "bf16":
        bits = []
        for v in values:
            b = struct.unpack("<I", struct.pack("<f", v))[0]
            assert math.isnan(v) or (b & 0xFFFF) == 0, v
            bits.append(b >> 16 | (0x40 if math.isnan(v) else 0))
        return Bf16(bits)
    return np.array([mf.encode(t, v) for v in values], np.uint8)


def convert(d, v):
    """The golden: v (a Python float) converted to d, as the value (IEEE
    types) or the bits (minifloats)."""
    return ieee_convert(d, v) if d in IEEE else mf.encode(d, v)


SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 1.0, -1.0]


def inputs_for(s):
    """The source values: all bit patterns of a minifloat; for the IEEE
    types every value source_values finds for any destination, both signs,
    and the specials."""
    if s in MINIFLOATS:
        return [mf.decode(s, b) for b in range(1 << (4 if s == "f4e2m1fn" else 8))]
    found = set()
    for d in TYPES:
        if d != s:
            found.update(source_values(s, d))
    values = []
    for i, v in enumerate(sorted(found)):
        f = exact_float(v)
        values.append(-f if i % 2 else f)
        values.append(f if i % 2 else -f)
    return SPECIALS + values


def conversion_module(s):
    name = "convert_%s_to_every_float" % s
    values = inputs_for(s)
    n = len(values)
    if s in MINIFLOATS:  # every bit pattern, NaNs and -0 included, as they are
        x = np.arange(n, dtype=np.uint8)
    else:
        x = array_of(s, values)
    lines, shapes, names, outs = ["  x = %s[%d] parameter(0)" % (s, n)], [], [], []
    for d in TYPES:
        if d == s:
            continue
        names.append("to_" + d)
        shapes.append("%s[%d]" % (d, n))
        lines.append("  %s = %s convert(x)" % (names[-1], shapes[-1]))
        golden = [convert(d, v) for v in values]
        outs.append(np.array(golden, np.uint8) if d in MINIFLOATS else array_of(d, golden))
    lines.append("  ROOT r = (%s) tuple(%s)" % (", ".join(shapes), ", ".join(names)))
    hlo = "HloModule %s\n\nENTRY main {\n%s\n}\n" % (name, "\n".join(lines))
    # exact: every output must be the one correct rounding
    return Case(hlo, [x], outs, tol=(0, 0))


def register(s):
    case("convert_%s_to_every_float" % s)(lambda rng: conversion_module(s))


for source in TYPES:
    register(source)


INTEGERS = [("s8", np.int8), ("s16", np.int16), ("s32", np.int32), ("s64", np.int64),
            ("u8", np.uint8), ("u16", np.uint16), ("u32", np.uint32), ("u64", np.uint64)]


def saturating_int(v, dtype):
    """HLO's float to integer: NaN gives 0, the rest truncates toward zero
    and saturates at the type's range (exact, in Python integers)."""
    if math.isnan(v):
        return 0
    info = np.iinfo(dtype)
    if math.isinf(v):
        return info.max if v > 0 else info.min
    return max(info.min, min(info.max, int(Fraction(v))))


@case("convert_nan_and_limits_to_every_integer")
def nan_to_integers(rng):
    """NaN of both signs, infinities and values at and past each integer
    type's limits, from f16, f32 and f64 to every integer width. On the GPU
    cvt.rzi gives 0 for NaN only from a source other than f64 into a
    destination under 64 bits (PTX ISA, cvt); everywhere else the NaN must
    be turned into 0 explicitly."""
    values = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5, -1.5, 127.9, -128.9, 255.5, 65535.5,
              -32769.0, 2.0 ** 31, -2.0 ** 31 - 4096, 2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 1e30, -1e30]
    lines, shapes, names, outs, inputs = [], [], [], [], []
    for k, (t, dtype) in enumerate([("f16", np.float16), ("f32", np.float32), ("f64", np.float64)]):
        x = np.array(values, dtype)
        inputs.append(x)
        lines.append("  x%d = %s[%d] parameter(%d)" % (k, t, len(values), k))
        for name, idtype in INTEGERS:
            names.append("%s_%s" % (t, name))
            shapes.append("%s[%d]" % (name, len(values)))
            lines.append("  %s = %s convert(x%d)" % (names[-1], shapes[-1], k))
            outs.append(np.array([saturating_int(float(v), idtype) for v in x], idtype))
    lines.append("  ROOT r = (%s) tuple(%s)" % (", ".join(shapes), ", ".join(names)))
    hlo = "HloModule convert_nan_and_limits_to_every_integer\n\nENTRY main {\n%s\n}\n" % "\n".join(lines)
    return Case(hlo, inputs, outs, tol=(0, 0))


@case("negate_and_abs_set_the_sign_bit_of_nans")
def negate_abs_nan_bits(rng):
    """negate flips and abs clears the sign bit of every value, NaNs with
    their payloads included, as the evaluator does; seen through
    bitcast-convert. (PTX's neg and abs.f32 leave a NaN's result
    unspecified, so the GPU must work on the bits.) Quiet NaNs only: the
    evaluator reads an f32 through double, which quiets a signalling one."""
    f32_bits = np.array([0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFC12345, 0x7FFFFFFF, 0x3F800000, 0x80000000,
                         0x00000001, 0x7F800000], np.uint32)
    f64_bits = np.array([0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000012345678, 0xFFF8000000000001,
                         0x3FF0000000000000, 0x8000000000000000, 0x0000000000000001, 0xFFF0000000000000],
                        np.uint64)
    hlo = """HloModule negate_and_abs_set_the_sign_bit_of_nans

ENTRY main {
  a = u32[9] parameter(0)
  b = u64[8] parameter(1)
  x = f32[9] bitcast-convert(a)
  y = f64[8] bitcast-convert(b)
  nx = f32[9] negate(x)
  ax = f32[9] abs(x)
  ny = f64[8] negate(y)
  ay = f64[8] abs(y)
  nx_bits = u32[9] bitcast-convert(nx)
  ax_bits = u32[9] bitcast-convert(ax)
  ny_bits = u64[8] bitcast-convert(ny)
  ay_bits = u64[8] bitcast-convert(ay)
  ROOT r = (u32[9], u32[9], u64[8], u64[8]) tuple(nx_bits, ax_bits, ny_bits, ay_bits)
}
"""
    outs = [f32_bits ^ np.uint32(0x80000000), f32_bits & np.uint32(0x7FFFFFFF),
            f64_bits ^ np.uint64(0x8000000000000000), f64_bits & np.uint64(0x7FFFFFFFFFFFFFFF)]
    return Case(hlo, [f32_bits, f64_bits], outs, tol=(0, 0))


if __name__ == "__main__":
    # hand-worked checks of the reference: the values issue 22 names
    v = 1 + 2.0 ** -11 + 2.0 ** -40
    assert ieee_convert("f16", v) == 1.0009765625, ieee_convert("f16", v)
    assert ieee_convert("f16", 1 + 2.0 ** -11) == 1.0  # the tie itself: to even
    b = ieee_convert("bf16", 1 + 2.0 ** -8 + 2.0 ** -40)
    assert struct.unpack("<I", struct.pack("<f", b))[0] >> 16 == 0x3F81, b
    assert ieee_convert("f16", 65520.0) == math.inf and ieee_convert("f16", 65519.99) == 65504.0
    assert ieee_convert("f32", 2.0 ** -150) == 0.0 and ieee_convert("f32", 2.0 ** -150 * 1.5) == 2.0 ** -149
    for s in TYPES:
        print(s, len(inputs_for(s)), "inputs")
