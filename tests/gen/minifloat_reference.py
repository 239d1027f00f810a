"""A reference for the 8- and 4-bit floats ("minifloats"), in plain Python
with exact fractions, written from the formats' definitions rather than
from axle's C (src/ir/minifloat.c works on bit shifts; this works on a
grid of values), so that each checks the other.

Rounding a magnitude x: its binade's exponent e = floor(log2 x), raised to
the format's smallest normal exponent for subnormals, gives the spacing
q = 2^(e - mantissa_bits); x/q rounds to an integer n, ties to even, and
n*q is the result. The grid continues past the largest finite value, and
a result past it is what the format does with overflow:

  format           exp man bias  sign  past max / inf   NaN            -0
  f8e4m3fn          4   3   7    yes   NaN              S.1111.111     kept
  f8e5m2            5   2   15   yes   inf              S.11111.10     kept
  f8e4m3fnuz        4   3   8    yes   NaN              0x80 only      +0
  f8e5m2fnuz        5   2   16   yes   NaN              0x80 only      +0
  f8e4m3b11fnuz     4   3   11   yes   NaN              0x80 only      +0
  f8e4m3            4   3   7    yes   inf              S.1111.100     kept
  f8e3m4            3   4   3    yes   inf              S.111.1000     kept
  f8e8m0fnu         8   0   127  no    NaN              0xff           NaN
  f4e2m1fn          2   1   1    yes   saturates (6)    none           kept

f8e8m0fnu (a bare exponent, ml_dtypes' and so XLA's rules): no zero, so
zero and negative values give NaN; the bottom of its grid is 0 (spacing
2^-126), encoded 0x00, which reads back as 2^-127. f4e2m1fn has no NaN:
a NaN gives 0b1000 (-0) when its sign is clear and +0 when it is set, as
ml_dtypes does.

Run it to check it against hand-worked values:  python3 minifloat_reference.py
"""
from fractions import Fraction
import functools
import math
import struct

# name: (exponent bits, mantissa bits, bias, has sign, specials)
FORMATS = {
    "f8e4m3fn": (4, 3, 7, True, "fn"),
    "f8e5m2": (5, 2, 15, True, "ieee"),
    "f8e4m3fnuz": (4, 3, 8, True, "fnuz"),
    "f8e5m2fnuz": (5, 2, 16, True, "fnuz"),
    "f8e4m3b11fnuz": (4, 3, 11, True, "fnuz"),
    "f8e4m3": (4, 3, 7, True, "ieee"),
    "f8e3m4": (3, 4, 3, True, "ieee"),
    "f8e8m0fnu": (8, 0, 127, False, "fnu"),
    "f4e2m1fn": (2, 1, 1, True, "none"),
}

NAN = float("nan")


def _fields(name):
    e, m, bias, signed, specials = FORMATS[name]
    return e, m, bias, signed, specials, (1 << (e + m)) if signed else 0


def is_nan_bits(name, bits):
    e, m, _, signed, specials, sign = _fields(name)
    mag = bits & ((1 << (e + m)) - 1)
    all_exp = ((1 << e) - 1) << m
    if specials == "ieee":
        return mag & all_exp == all_exp and mag != all_exp
    if specials in ("fn", "fnu"):
        return mag == (1 << (e + m)) - 1
    if specials == "fnuz":
        return bits == sign
    return False


def decode(name, bits):
    """The value of a bit pattern, as a Python float (exact: every value fits)."""
    e, m, bias, signed, specials, sign = _fields(name)
    negative = signed and bits & sign
    if is_nan_bits(name, bits):
        return -NAN if negative else NAN
    mag = bits & ((1 << (e + m)) - 1)
    exponent, mantissa = mag >> m, mag & ((1 << m) - 1)
    if specials == "ieee" and exponent == (1 << e) - 1:
        value = math.inf
    elif exponent == 0 and specials != "fnu":
        value = float(Fraction(mantissa, 1 << m) * Fraction(2) ** (1 - bias))
    else:
        value = float((1 + Fraction(mantissa, 1 << m)) * Fraction(2) ** (exponent - bias))
    return -value if negative else value


@functools.lru_cache(maxsize=None)
def max_finite(name):
    """The largest finite value's bit pattern (positive)."""
    candidates = [b for b in range(1 << (FORMATS[name][0] + FORMATS[name][1]))
                  if not is_nan_bits(name, b) and not math.isinf(decode(name, b))]
    return max(candidates, key=lambda b: decode(name, b))


def nan_bits(name, negative):
    e, m, _, signed, specials, sign = _fields(name)
    s = sign if negative else 0
    if specials == "ieee":
        return s | (((1 << e) - 1) << m) | (1 << (m - 1))
    if specials == "fn":
        return s | ((1 << (e + m)) - 1)
    if specials == "fnuz":
        return sign
    if specials == "fnu":
        return 0xFF
    return 0 if negative else sign  # f4e2m1fn: no NaN (see above)


def overflow_bits(name, negative):
    e, m, _, signed, specials, sign = _fields(name)
    s = sign if negative else 0
    if specials == "ieee":
        return s | (((1 << e) - 1) << m)
    if specials == "none":
        return s | max_finite(name)
    return nan_bits(name, negative)


def _floor_log2(x):
    """floor(log2 x) for a positive Fraction, exactly."""
    k = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** k > x:
        k -= 1
    elif Fraction(2) ** (k + 1) <= x:
        k += 1
    return k


def _round_half_even(x):
    n = math.floor(x)
    rest = x - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    return n


def _grid_round(name, x):
    """x > 0 (a Fraction) rounded to the format's grid: (value, bits) or
    None past the largest finite value."""
    e, m, bias, _, _, _ = _fields(name)
    emin = 1 - bias
    exponent = max(_floor_log2(x), emin)
    q = Fraction(2) ** (exponent - m)
    value = _round_half_even(x / q) * q
    if value == 0:
        return 0
    if value < Fraction(2) ** emin:
        bits = int(value / Fraction(2) ** (emin - m))  # subnormal: the mantissa alone
    else:
        ev = _floor_log2(value)
        bits = ((ev + bias) << m) | int((value / Fraction(2) ** ev - 1) * (1 << m))
    if decode(name, max_finite(name)) < value:
        return None
    return bits


def encode(name, v):
    """A Python float (or int) to the format's bits, one rounding."""
    e, m, bias, signed, specials, sign = _fields(name)
    v = float(v)
    negative = math.copysign(1.0, v) < 0
    if math.isnan(v):
        return nan_bits(name, negative)
    if not signed and negative and v != 0:
        return nan_bits(name, negative)
    if math.isinf(v):
        return overflow_bits(name, negative)
    if v == 0:
        if specials == "fnu":
            return nan_bits(name, negative)
        return sign if negative and specials != "fnuz" else 0
    bits = _grid_round(name, Fraction(abs(v)))
    if bits is None:
        return overflow_bits(name, negative)
    if bits == 0 and specials == "fnuz":
        return 0
    return (sign if negative else 0) | bits


def f32(v):
    """v rounded to float32, as a Python float."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


# ---- hand-worked values: (format, input, expected bits) ----
HAND_WORKED = [
    ("f8e4m3fn", 448.0, 0x7E),      # max finite: 1.75 * 2^8
    ("f8e4m3fn", 464.0, 0x7E),      # tie between 448 and (NaN's) 480: even mantissa 110
    ("f8e4m3fn", 465.0, 0x7F),      # rounds to 480, past max: NaN
    ("f8e4m3fn", -1e9, 0xFF),       # overflow keeps the sign on NaN
    ("f8e4m3fn", math.inf, 0x7F),   # no infinity: NaN
    ("f8e4m3fn", 2.0 ** -9, 0x01),  # smallest subnormal
    ("f8e4m3fn", 2.0 ** -10, 0x00), # tie between 0 and 2^-9: even is 0
    ("f8e4m3fn", 3 * 2.0 ** -11, 0x01),   # 1.5 * 2^-10 is past the tie: 2^-9
    ("f8e4m3fn", 1.0625, 0x38),     # 1 + 1/16: tie between 1 and 1.125, even is 1
    ("f8e4m3fn", 1.1875, 0x3A),     # 1 + 3/16: tie between 1.125 and 1.25, even is 1.25
    ("f8e4m3fn", -0.0, 0x80),
    ("f8e5m2", 57344.0, 0x7B),      # max finite: 1.75 * 2^15
    ("f8e5m2", 61440.0, 0x7C),      # tie between max and 2^16: odd max, so up: inf
    ("f8e5m2", 61439.0, 0x7B),
    ("f8e5m2", -math.inf, 0xFC),
    ("f8e5m2", NAN, 0x7E),
    ("f8e5m2", 2.0 ** -16, 0x01),   # smallest subnormal
    ("f8e4m3fnuz", 240.0, 0x7F),    # max finite: 1.875 * 2^7
    ("f8e4m3fnuz", 248.0, 0x80),    # tie up to 256: past max, NaN
    ("f8e4m3fnuz", -0.0, 0x00),     # no -0
    ("f8e4m3fnuz", -2.0 ** -12, 0x00),  # a tie that rounds to 0 loses the sign too
    ("f8e4m3fnuz", 2.0 ** -10, 0x01),   # smallest subnormal: 2^-7 * 2^-3
    ("f8e4m3fnuz", -NAN, 0x80),
    ("f8e5m2fnuz", 57344.0, 0x7F),
    ("f8e5m2fnuz", 2.0 ** -17, 0x01),
    ("f8e5m2fnuz", math.inf, 0x80),
    ("f8e4m3b11fnuz", 30.0, 0x7F),  # max finite: 1.875 * 2^4
    ("f8e4m3b11fnuz", 31.0, 0x80),  # tie up to 32: NaN
    ("f8e4m3b11fnuz", 2.0 ** -13, 0x01),
    ("f8e4m3", 240.0, 0x77),        # IEEE: exponent 1111 is inf/NaN
    ("f8e4m3", 248.0, 0x78),        # tie to 256: inf
    ("f8e4m3", NAN, 0x7C),
    ("f8e3m4", 15.5, 0x6F),         # max finite: 1.9375 * 2^3
    ("f8e3m4", 15.75, 0x70),        # tie, odd max: inf
    ("f8e3m4", 2.0 ** -6, 0x01),
    ("f8e8m0fnu", 1.0, 0x7F),
    ("f8e8m0fnu", 1.5, 0x80),       # tie: the significand 1 is odd, so up to 2
    ("f8e8m0fnu", 1.4, 0x7F),
    ("f8e8m0fnu", 2.0 ** 127, 0xFE),
    ("f8e8m0fnu", 2.0 ** 128 * 0.75, 0xFF),  # tie up past 2^127: NaN
    ("f8e8m0fnu", 0.0, 0xFF),       # no zero
    ("f8e8m0fnu", -1.0, 0xFF),      # no sign
    ("f8e8m0fnu", 2.0 ** -127, 0x00),
    ("f8e8m0fnu", 2.0 ** -140, 0x00),   # below the bottom: the bottom's bits
    ("f4e2m1fn", 6.0, 0x7),         # max
    ("f4e2m1fn", 100.0, 0x7),       # saturates
    ("f4e2m1fn", -math.inf, 0xF),
    ("f4e2m1fn", 0.25, 0x0),        # tie between 0 and 0.5: 0
    ("f4e2m1fn", 0.75, 0x2),        # tie between 0.5 and 1: even is 1 (0b010)
    ("f4e2m1fn", 2.5, 0x4),         # tie between 2 (0b100) and 3 (0b101)
    ("f4e2m1fn", -0.0, 0x8),
    ("f4e2m1fn", NAN, 0x8),
    ("f4e2m1fn", -NAN, 0x0),
]


def self_check():
    bad = 0
    for name, v, want in HAND_WORKED:
        got = encode(name, v)
        if got != want:
            bad += 1
            print("%s(%r): expected 0x%02x, got 0x%02x" % (name, v, want, got))
    for name in FORMATS:
        width = FORMATS[name][0] + FORMATS[name][1] + (1 if FORMATS[name][3] else 0)
        for b in range(1 << width):
            back = encode(name, decode(name, b))
            want = nan_bits(name, math.copysign(1, decode(name, b)) < 0) if is_nan_bits(name, b) else b
            if back != want:
                bad += 1
                print("%s: 0x%02x -> %r -> 0x%02x" % (name, b, decode(name, b), back))
    print("minifloat reference: %d hand-worked values, %s" % (len(HAND_WORKED),
                                                             "all agree" if not bad else "%d wrong" % bad))
    return bad == 0


if __name__ == "__main__":
    raise SystemExit(0 if self_check() else 1)
