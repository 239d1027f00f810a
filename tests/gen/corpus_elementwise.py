"""Corpus cases: elementwise ops, compare, select, clamp, convert,
bitcast-convert, reduce-precision, over every element type."""
import numpy as np

from corpus_common import Case, bf16, bf16_to_f32, case, shape_of
import corpus_reference as ref

F32_SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5,
                        0.49999997, -0.49999997, 3.7, -3.7, 1e10, 8388609.0, -1e-30],
                       dtype=np.float32)


def tuple_module(name, params, ops, style="modern"):
    """An entry that applies each op to the parameters and returns them all.
    params: [(name, array)]; ops: [(result_var, result_shape, opcode, operand names)].
    Modern style by default; "old" gives %names and typed operands."""
    pshape = {p: shape_of(a) for p, a in params}
    oshape = dict(pshape)
    lines = []
    pct = "%" if style == "old" else ""
    for i, (p, a) in enumerate(params):
        lines.append("  %s%s = %s parameter(%d)" % (pct, p, shape_of(a), i))
    for var, shape, opcode, operands in ops:
        oshape[var] = shape
        if style == "old":
            args = ", ".join("%s %%%s" % (oshape[o], o) for o in operands)
        else:
            args = ", ".join(operands)
        lines.append("  %s%s = %s %s(%s)" % (pct, var, shape, opcode, args))
    root_shape = "(%s)" % ", ".join(s for _, s, _, _ in ops)
    names = ", ".join(pct + v for v, _, _, _ in ops)
    lines.append("  ROOT %sresult = %s tuple(%s)" % (pct, root_shape, names))
    if style == "old":
        sig = ", ".join("%s: %s" % (p, pshape[p]) for p, _ in params)
        head = "ENTRY %%main (%s) -> %s {" % (sig, root_shape)
    else:
        head = "ENTRY main {"
    return "HloModule %s\n\n%s\n%s\n}\n" % (name, head, "\n".join(lines))


def unary_case(name, x, ops, reference, style="modern", tol=None):
    """ops: [(opcode, result dtype or None for x's)]; reference(opcode, x)."""
    entries, outs = [], []
    for i, (opcode, dtype) in enumerate(ops):
        out = reference(opcode, x)
        outs.append(out)
        entries.append(("r%d" % i, shape_of(out), opcode, ["x"]))
    return Case(tuple_module(name, [("x", x)], entries, style), [x], outs, tol)


def float_unary(opcode, x):
    """The reference for float unary ops, in float64 then rounded."""
    x64 = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        fn = {
            "abs": np.abs, "negate": np.negative, "sign": np.sign, "floor": np.floor,
            "ceil": np.ceil, "round-nearest-even": np.rint, "exponential": np.exp,
            "exponential-minus-one": np.expm1, "log": np.log, "log-plus-one": np.log1p,
            "logistic": ref.logistic, "tanh": np.tanh, "sqrt": np.sqrt,
            "rsqrt": lambda v: 1.0 / np.sqrt(v), "cbrt": np.cbrt, "sine": np.sin,
            "cosine": np.cos, "tan": np.tan, "erf": ref.erf,
            "round-nearest-afz": ref.round_half_away, "is-finite": np.isfinite,
        }[opcode]
        r = fn(x64)
    return r if r.dtype == np.bool_ else r.astype(x.dtype)


@case("unary_rounding_f32")
def _(rng):
    x = np.concatenate([F32_SPECIAL, (rng.standard_normal(14) * 4).astype(np.float32)])
    ops = [(op, None) for op in ["abs", "negate", "sign", "floor", "ceil", "round-nearest-afz",
                                 "round-nearest-even", "is-finite"]]
    return unary_case("unary_rounding_f32", x, ops, float_unary)


TRANSCENDENTAL = ["exponential", "exponential-minus-one", "log", "log-plus-one", "logistic",
                  "tanh", "sqrt", "rsqrt", "cbrt", "sine", "cosine", "tan", "erf"]


@case("unary_transcendental_f32")
def _(rng):
    # log, sqrt and friends need positive input; tan stays away from its poles
    x = rng.uniform(0.05, 1.5, 48).astype(np.float32)
    return unary_case("unary_transcendental_f32", x, [(op, None) for op in TRANSCENDENTAL],
                      float_unary)


@case("unary_transcendental_signed_f32")
def _(rng):
    x = rng.uniform(-4, 4, 40).astype(np.float32)
    ops = ["exponential", "exponential-minus-one", "logistic", "tanh", "cbrt", "sine", "cosine",
           "erf", "abs"]
    return unary_case("unary_transcendental_signed_f32", x, [(op, None) for op in ops],
                      float_unary, style="old")


@case("unary_transcendental_f64")
def _(rng):
    x = rng.uniform(0.05, 1.5, 32).astype(np.float64)
    return unary_case("unary_transcendental_f64", x, [(op, None) for op in TRANSCENDENTAL],
                      float_unary)


@case("unary_special_values_f32")
def _(rng):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 1.0, -2.0, 1e-30, 100.0, -100.0,
                  -8.0], dtype=np.float32)
    return unary_case("unary_special_values_f32", x, [(op, None) for op in TRANSCENDENTAL],
                      float_unary)


@case("unary_tiny_inputs_f32")
def _(rng):
    # exp(x) - 1 and log(1 + x) lose every digit here; expm1 and log1p must not
    x = np.array([1e-10, -1e-10, 1e-7, -3e-8, 1e-20, 2e-6, -5e-5], np.float32)
    ops = ["exponential-minus-one", "log-plus-one", "tanh", "sine", "tan", "erf", "cbrt"]
    return unary_case("unary_tiny_inputs_f32", x, [(op, None) for op in ops], float_unary,
                      tol=(1e-5, 0))


def binary_tuple_case(name, a, b, ops, reference, style="modern", tol=None):
    entries, outs = [], []
    for i, opcode in enumerate(ops):
        out = reference(opcode, a, b)
        outs.append(out)
        entries.append(("r%d" % i, shape_of(out), opcode, ["a", "b"]))
    hlo = tuple_module(name, [("a", a), ("b", b)], entries, style)
    return Case(hlo, [a, b], outs, tol)


def float_binary(opcode, a, b):
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(all="ignore"):
        fn = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
              "divide": np.divide, "maximum": np.maximum, "minimum": np.minimum,
              "power": np.power, "remainder": np.fmod, "atan2": np.arctan2}[opcode]
        return fn(a64, b64).astype(a.dtype)


FLOAT_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
                "remainder", "atan2"]
SPECIAL_PAIRS = [(np.nan, 1), (1, np.nan), (np.inf, -np.inf), (0, 0), (-0.0, 0), (1, 0),
                 (-1, 0), (np.inf, 2), (2, np.inf), (-8, 1 / 3), (0, -1), (-2, 3), (2, 0.5),
                 (5.5, -2), (-5.5, 2), (1e30, 1e30), (1e-30, 1e30), (-np.inf, -np.inf),
                 (7, 2.5), (-7, 2.5), (np.nan, np.nan), (3, -np.inf), (0.0, -0.0),
                 (-0.0, -0.0), (-1, -np.inf)]


@case("binary_float_f32")
def _(rng):
    a = np.concatenate([np.array([p[0] for p in SPECIAL_PAIRS], np.float32),
                        rng.uniform(0.1, 3, 10).astype(np.float32)])
    b = np.concatenate([np.array([p[1] for p in SPECIAL_PAIRS], np.float32),
                        rng.uniform(-3, 3, 10).astype(np.float32)])
    return binary_tuple_case("binary_float_f32", a, b, FLOAT_BINARY, float_binary)


@case("binary_float_f64")
def _(rng):
    a = rng.uniform(0.1, 4, (3, 5))
    b = rng.uniform(-4, 4, (3, 5))
    return binary_tuple_case("binary_float_f64", a, b, FLOAT_BINARY, float_binary, style="old")


def half_reference(cast):
    """f16/bf16 ops compute in f32 and round the result to the narrow type."""
    def reference(opcode, a, b=None):
        fa = a.f32() if hasattr(a, "f32") else a.astype(np.float32)
        if b is None:
            r = float_unary(opcode, fa)
        else:
            fb = b.f32() if hasattr(b, "f32") else b.astype(np.float32)
            r = float_binary(opcode, fa, fb)
        return r if r.dtype == np.bool_ else cast(r)
    return reference


@case("elementwise_f16")
def _(rng):
    a = np.concatenate([rng.uniform(0.1, 4, 20), [65504, np.nan, -np.inf, 1e-7]]).astype(np.float16)
    b = np.concatenate([rng.uniform(-4, 4, 20), [2, 1, 1, 1]]).astype(np.float16)
    refn = half_reference(lambda r: r.astype(np.float16))
    entries, outs = [], []
    for i, opcode in enumerate(["add", "subtract", "multiply", "divide", "maximum", "minimum"]):
        outs.append(refn(opcode, a, b))
        entries.append(("b%d" % i, shape_of(outs[-1]), opcode, ["a", "b"]))
    for i, opcode in enumerate(["exponential", "sqrt", "tanh", "negate", "floor"]):
        outs.append(refn(opcode, a))
        entries.append(("u%d" % i, shape_of(outs[-1]), opcode, ["a"]))
    hlo = tuple_module("elementwise_f16", [("a", a), ("b", b)], entries)
    # f16's own default (1e-2) would hide a wrong last digit: allow 1 ulp
    return Case(hlo, [a, b], outs, tol=(1e-3, 1e-4))


@case("elementwise_bf16")
def _(rng):
    a = bf16(np.concatenate([rng.uniform(0.1, 4, 20), [3e38, np.nan, -np.inf, 1e-7]]))
    b = bf16(np.concatenate([rng.uniform(-4, 4, 20), [2, 1, 1, 1]]))
    refn = half_reference(lambda r: bf16(r))
    entries, outs = [], []
    for i, opcode in enumerate(["add", "subtract", "multiply", "divide", "maximum", "minimum"]):
        outs.append(refn(opcode, a, b))
        entries.append(("b%d" % i, shape_of(outs[-1]), opcode, ["a", "b"]))
    for i, opcode in enumerate(["exponential", "log", "tanh", "negate", "round-nearest-even"]):
        outs.append(refn(opcode, a))
        entries.append(("u%d" % i, shape_of(outs[-1]), opcode, ["a"]))
    hlo = tuple_module("elementwise_bf16", [("a", a), ("b", b)], entries)
    return Case(hlo, [a, b], outs)


# ---- integers ----

def int_binary(opcode, a, b):
    t = a.dtype
    simple = {"add": lambda x, y: x + y, "subtract": lambda x, y: x - y,
              "multiply": lambda x, y: x * y, "maximum": max, "minimum": min,
              "and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y}
    if opcode in simple:
        return ref._elementwise_int(simple[opcode], a, b, t)
    return {"divide": ref.int_divide, "remainder": ref.int_remainder,
            "shift-left": ref.shift_left, "shift-right-logical": ref.shift_right_logical,
            "shift-right-arithmetic": ref.shift_right_arithmetic,
            "power": ref.int_power}[opcode](a, b, t)


def int_unary(opcode, x):
    t = x.dtype
    if opcode == "popcnt":
        return ref.popcount(x, t)
    if opcode == "count-leading-zeros":
        return ref.count_leading_zeros(x, t)
    fn = {"abs": abs, "negate": lambda v: -v, "not": lambda v: ~v,
          "sign": lambda v: (v > 0) - (v < 0)}[opcode]
    return np.array([ref.wrap(fn(int(v)), t) for v in x.ravel()], dtype=object).astype(t).reshape(
        x.shape)


def int_operands(rng, dtype, n=12):
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    pairs = [(lo, -1), (lo, 1), (hi, 1), (hi, hi), (7, 0), (0, 0), (lo, 0), (7, -2), (-7, 2),
             (-7, -2), (hi, -1), (lo, lo), (5, 3)]
    if lo == 0:
        pairs = [(hi, 0), (7, 0), (0, 0), (hi, 1), (hi, hi), (7, 2), (1, hi), (5, 3), (hi, 2)]
    a = [p[0] for p in pairs] + [int(v) for v in rng.integers(lo, hi, n, dtype=dtype, endpoint=True)]
    b = [p[1] for p in pairs] + [int(v) for v in rng.integers(lo, hi, n, dtype=dtype, endpoint=True)]
    return np.array(a, dtype=dtype), np.array(b, dtype=dtype)


def int_arith_case(name, dtype, style):
    rng = np.random.default_rng(len(name))
    a, b = int_operands(rng, dtype)
    binops = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum"]
    entries, outs = [], []
    for i, opcode in enumerate(binops):
        outs.append(int_binary(opcode, a, b))
        entries.append(("b%d" % i, shape_of(outs[-1]), opcode, ["a", "b"]))
    if np.issubdtype(dtype, np.signedinteger):
        for i, opcode in enumerate(["abs", "negate", "sign"]):
            outs.append(int_unary(opcode, a))
            entries.append(("u%d" % i, shape_of(outs[-1]), opcode, ["a"]))
    return Case(tuple_module(name, [("a", a), ("b", b)], entries, style), [a, b], outs)


for _t, _style in [(np.int8, "modern"), (np.int16, "old"), (np.int32, "modern"),
                   (np.int64, "modern"), (np.uint8, "old"), (np.uint16, "modern"),
                   (np.uint32, "modern"), (np.uint64, "modern")]:
    _name = "int_arith_" + {np.int8: "s8", np.int16: "s16", np.int32: "s32", np.int64: "s64",
                            np.uint8: "u8", np.uint16: "u16", np.uint32: "u32",
                            np.uint64: "u64"}[_t]
    case(_name)(lambda rng, _n=_name, _d=_t, _s=_style: int_arith_case(_n, _d, _s))


def int_bitwise_case(name, dtype):
    rng = np.random.default_rng(len(name) + 100)
    bits = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    counts = [0, 1, 3, bits - 1, bits, bits + 1, 100 % (1 << min(bits, 16)), bits * 2]
    if info.min < 0:
        counts += [-1, -bits]
    values = [int(info.min), int(info.max), 0, 1, -1 if info.min < 0 else 255, 0x5A]
    n = len(counts) + 6
    a = np.array((values * n)[:n], dtype=object)
    a[len(values):] = [int(v) for v in rng.integers(info.min, info.max, n - len(values),
                                                    dtype=dtype, endpoint=True)]
    a = a.astype(dtype)
    b = np.array(counts + [int(v) for v in rng.integers(0, bits, n - len(counts))],
                 dtype=object).astype(dtype)
    entries, outs = [], []
    for i, opcode in enumerate(["and", "or", "xor", "shift-left", "shift-right-arithmetic",
                                "shift-right-logical"]):
        outs.append(int_binary(opcode, a, b))
        entries.append(("b%d" % i, shape_of(outs[-1]), opcode, ["a", "b"]))
    for i, opcode in enumerate(["not", "popcnt", "count-leading-zeros"]):
        outs.append(int_unary(opcode, a))
        entries.append(("u%d" % i, shape_of(outs[-1]), opcode, ["a"]))
    return Case(tuple_module(name, [("a", a), ("b", b)], entries), [a, b], outs)


for _t, _n in [(np.int8, "s8"), (np.uint16, "u16"), (np.int32, "s32"), (np.uint32, "u32"),
               (np.int64, "s64"), (np.uint64, "u64"), (np.int16, "s16"), (np.uint8, "u8")]:
    case("int_bitwise_" + _n)(lambda rng, _n="int_bitwise_" + _n, _d=_t: int_bitwise_case(_n, _d))


@case("int_power_s32")
def _(rng):
    a = np.array([2, -3, 0, 1, -1, 7, 10, -2, 3, 65536], dtype=np.int32)
    b = np.array([10, 3, 0, 100, 7, 0, 9, 31, 20, 2], dtype=np.int32)
    return binary_tuple_case("int_power_s32", a, b, ["power"], int_binary)


@case("pred_logic")
def _(rng):
    a = np.array([True, True, False, False, True, False])
    b = np.array([True, False, True, False, False, True])
    entries = [("r0", "pred[6]", "and", ["a", "b"]), ("r1", "pred[6]", "or", ["a", "b"]),
               ("r2", "pred[6]", "xor", ["a", "b"]), ("r3", "pred[6]", "not", ["a"])]
    outs = [a & b, a | b, a ^ b, ~a]
    return Case(tuple_module("pred_logic", [("a", a), ("b", b)], entries), [a, b], outs)


@case("pred_arithmetic")
def _(rng):
    # HLO's multiply, maximum and minimum on pred are C++ bool's: and, or, and
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    entries = [("r0", "pred[4]", "multiply", ["a", "b"]), ("r1", "pred[4]", "maximum", ["a", "b"]),
               ("r2", "pred[4]", "minimum", ["a", "b"])]
    outs = [a & b, a | b, a & b]
    return Case(tuple_module("pred_arithmetic", [("a", a), ("b", b)], entries), [a, b], outs)


# ---- compare, select, clamp ----

DIRECTIONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
              "GT": np.greater, "GE": np.greater_equal}


def compare_case(name, a, b, type_attr, key=None):
    """Every direction; key maps values to an order (for TOTALORDER)."""
    ka, kb = (key(a), key(b)) if key else (a, b)
    lines = ["HloModule %s" % name, "", "ENTRY main {",
             "  a = %s parameter(0)" % shape_of(a), "  b = %s parameter(1)" % shape_of(b)]
    outs = []
    pred = "pred[%s]" % ",".join(str(d) for d in a.shape)
    for d, fn in DIRECTIONS.items():
        attr = ", type=%s" % type_attr if type_attr else ""
        lines.append("  %s = %s compare(a, b), direction=%s%s" % (d.lower(), pred, d, attr))
        with np.errstate(invalid="ignore"):
            outs.append(fn(ka, kb))
    lines.append("  ROOT r = (%s) tuple(%s)" % (", ".join([pred] * 6),
                                               ", ".join(d.lower() for d in DIRECTIONS)))
    lines.append("}")
    return Case("\n".join(lines), [a, b], outs)


@case("compare_float_f32")
def _(rng):
    a = np.array([1, 2, np.nan, np.nan, -0.0, np.inf, -np.inf, 3, 5, 1e-30], np.float32)
    b = np.array([2, 2, 1, np.nan, 0.0, np.inf, 1, np.nan, 4, 0], np.float32)
    return compare_case("compare_float_f32", a, b, None)


@case("compare_float_typed_f64")
def _(rng):
    a = np.array([1, 2, np.nan, -0.0, 3], np.float64)
    b = np.array([2, 2, 1, 0.0, 3.0000000001], np.float64)
    return compare_case("compare_float_typed_f64", a, b, "FLOAT")


@case("compare_totalorder_f32")
def _(rng):
    neg_nan = np.array([0xFFC00000], np.uint32).view(np.float32)[0]
    a = np.array([-0.0, 0.0, np.nan, neg_nan, np.nan, -np.inf, 1, neg_nan, np.inf, 2],
                 np.float32)
    b = np.array([0.0, -0.0, np.nan, -np.inf, np.inf, neg_nan, 1, neg_nan, np.nan, -2],
                 np.float32)
    return compare_case("compare_totalorder_f32", a, b, "TOTALORDER", ref.totalorder_key)


@case("compare_signed_s32")
def _(rng):
    a = np.array([-1, 0, 2147483647, -2147483648, 5, 5], np.int32)
    b = np.array([1, 0, -2147483648, 2147483647, 4, 6], np.int32)
    return compare_case("compare_signed_s32", a, b, "SIGNED")


@case("compare_unsigned_u32")
def _(rng):
    a = np.array([0xFFFFFFFF, 0, 1, 0x80000000, 5, 7], np.uint32)
    b = np.array([1, 0, 0xFFFFFFFF, 0x7FFFFFFF, 5, 8], np.uint32)
    return compare_case("compare_unsigned_u32", a, b, "UNSIGNED")


@case("compare_small_ints")
def _(rng):
    a8 = np.array([-128, 127, 0, -1], np.int8)
    b8 = np.array([127, -128, 0, 1], np.int8)
    u64a = np.array([2 ** 64 - 1, 0, 2 ** 63, 5], np.uint64)
    u64b = np.array([1, 0, 2 ** 63 - 1, 5], np.uint64)
    pa = np.array([True, False, True, False])
    pb = np.array([True, True, False, False])
    hlo = """HloModule compare_small_ints

ENTRY main {
  a8 = s8[4] parameter(0)
  b8 = s8[4] parameter(1)
  ua = u64[4] parameter(2)
  ub = u64[4] parameter(3)
  pa = pred[4] parameter(4)
  pb = pred[4] parameter(5)
  lt8 = pred[4] compare(a8, b8), direction=LT
  ge64 = pred[4] compare(ua, ub), direction=GE
  eqp = pred[4] compare(pa, pb), direction=EQ
  nep = pred[4] compare(pa, pb), direction=NE
  ROOT r = (pred[4], pred[4], pred[4], pred[4]) tuple(lt8, ge64, eqp, nep)
}"""
    return Case(hlo, [a8, b8, u64a, u64b, pa, pb], [a8 < b8, u64a >= u64b, pa == pb, pa != pb])


@case("select_clamp")
def _(rng):
    p = rng.random((3, 4)) < 0.5
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    lo = rng.uniform(-1, 0, (3, 4)).astype(np.float32)
    hi = rng.uniform(0, 1, (3, 4)).astype(np.float32)
    ia = rng.integers(-100, 100, (3, 4)).astype(np.int32)
    hlo = """HloModule select_clamp

ENTRY main {
  p = pred[3,4] parameter(0)
  a = f32[3,4] parameter(1)
  b = f32[3,4] parameter(2)
  lo = f32[3,4] parameter(3)
  hi = f32[3,4] parameter(4)
  ia = s32[3,4] parameter(5)
  sel = f32[3,4] select(p, a, b)
  clamped = f32[3,4] clamp(lo, a, hi)
  smin = f32[] constant(-0.5)
  smax = f32[] constant(0.25)
  clamped_scalar = f32[3,4] clamp(smin, b, smax)
  imin = s32[] constant(-10)
  imax = s32[] constant(20)
  clamped_int = s32[3,4] clamp(imin, ia, imax)
  sel_int = s32[3,4] select(p, ia, clamped_int)
  ROOT r = (f32[3,4], f32[3,4], f32[3,4], s32[3,4], s32[3,4]) tuple(sel, clamped, clamped_scalar, clamped_int, sel_int)
}"""
    ci = np.clip(ia, -10, 20).astype(np.int32)
    outs = [np.where(p, a, b), np.minimum(np.maximum(a, lo), hi),
            np.clip(b, np.float32(-0.5), np.float32(0.25)), ci, np.where(p, ia, ci)]
    return Case(hlo, [p, a, b, lo, hi, ia], outs)


# ---- conversions ----

@case("convert_float_to_int")
def _(rng):
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7, 255.9, 256, -0.5, -1, 127.5,
                  -128.9, -129, 1e20, 2147483520.0, 4294967040.0, 0.0], np.float32)
    d = np.array([np.nan, 9.3e18, -9.3e18, 9.2233720368547748e18, 1.8e19, 2e19, -1.5, 42.9],
                 np.float64)
    targets = [np.int32, np.uint8, np.int8, np.uint32, np.int16, np.uint16]
    lines = ["HloModule convert_float_to_int", "", "ENTRY main {", "  x = f32[18] parameter(0)",
             "  d = f64[8] parameter(1)"]
    outs, names, shapes = [], [], []
    for t in targets:
        out = ref.float_to_int_saturating(x, t)
        outs.append(out)
        names.append("x_%s" % shape_of(out)[:3].strip("["))
        shapes.append(shape_of(out))
        lines.append("  %s = %s convert(x)" % (names[-1], shapes[-1]))
    for t in [np.int64, np.uint64]:
        out = ref.float_to_int_saturating(d, t)
        outs.append(out)
        names.append("d_%s" % shape_of(out)[:3])
        shapes.append(shape_of(out))
        lines.append("  %s = %s convert(d)" % (names[-1], shapes[-1]))
    outs.append(x != 0)
    names.append("x_pred")
    shapes.append("pred[18]")
    lines.append("  x_pred = pred[18] convert(x)")
    lines.append("  ROOT r = (%s) tuple(%s)" % (", ".join(shapes), ", ".join(names)))
    lines.append("}")
    return Case("\n".join(lines), [x, d], outs)


@case("convert_int_to_int")
def _(rng):
    s = np.array([-1, 0, 127, 128, 255, 256, -129, 65535, 65536, -2147483648, 2147483647, 300],
                 np.int32)
    s8 = np.array([-128, -1, 0, 1, 127, 5], np.int8)
    u64 = np.array([2 ** 64 - 1, 2 ** 63, 65535, 32768, 0, 123456789012], np.uint64)
    p = np.array([True, False, True, True, False, False])
    hlo = """HloModule convert_int_to_int

ENTRY main {
  s = s32[12] parameter(0)
  s8 = s8[6] parameter(1)
  u = u64[6] parameter(2)
  p = pred[6] parameter(3)
  to_s8 = s8[12] convert(s)
  to_u16 = u16[12] convert(s)
  to_u8 = u8[12] convert(s)
  to_s64 = s64[12] convert(s)
  to_pred = pred[12] convert(s)
  widen_u32 = u32[6] convert(s8)
  widen_s16 = s16[6] convert(s8)
  narrow_s16 = s16[6] convert(u)
  u_to_s64 = s64[6] convert(u)
  p_to_s32 = s32[6] convert(p)
  p_to_u8 = u8[6] convert(p)
  ROOT r = (s8[12], u16[12], u8[12], s64[12], pred[12], u32[6], s16[6], s16[6], s64[6], s32[6], u8[6]) tuple(to_s8, to_u16, to_u8, to_s64, to_pred, widen_u32, widen_s16, narrow_s16, u_to_s64, p_to_s32, p_to_u8)
}"""
    outs = [ref.int_to_int(s, np.int8), ref.int_to_int(s, np.uint16), ref.int_to_int(s, np.uint8),
            s.astype(np.int64), s != 0, ref.int_to_int(s8, np.uint32), s8.astype(np.int16),
            ref.int_to_int(u64, np.int16), ref.int_to_int(u64, np.int64), p.astype(np.int32),
            p.astype(np.uint8)]
    return Case(hlo, [s, s8, u64, p], outs)


@case("convert_float_formats")
def _(rng):
    x = np.concatenate([[65519, 65520, 1e-8, 3e-5, 1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, np.nan,
                         -np.inf, 1.00390625, 1.01171875, 3.4e38, 1e-40],
                        rng.standard_normal(8) * 100]).astype(np.float32)
    i = np.array([16777217, -16777217, 2147483647, 0, 7, -3], np.int32)
    u = np.array([2 ** 64 - 1, 2 ** 53 + 1, 0, 12345], np.uint64)
    h = np.array([1.5, -65504, 6e-8, np.inf], np.float16)
    hlo = """HloModule convert_float_formats

ENTRY main {
  x = f32[20] parameter(0)
  i = s32[6] parameter(1)
  u = u64[4] parameter(2)
  h = f16[4] parameter(3)
  x_f16 = f16[20] convert(x)
  x_bf16 = bf16[20] convert(x)
  x_bf16_f32 = f32[20] convert(x_bf16)
  x_f64 = f64[20] convert(x)
  x_f64_f32 = f32[20] convert(x_f64)
  i_f32 = f32[6] convert(i)
  i_f64 = f64[6] convert(i)
  u_f32 = f32[4] convert(u)
  u_f64 = f64[4] convert(u)
  h_f32 = f32[4] convert(h)
  h_bf16 = bf16[4] convert(h)
  h_bf16_f32 = f32[4] convert(h_bf16)
  i_f16 = f16[6] convert(i)
  ROOT r = (f16[20], f32[20], f64[20], f32[20], f32[6], f64[6], f32[4], f64[4], f32[4], f32[4], f16[6]) tuple(x_f16, x_bf16_f32, x_f64, x_f64_f32, i_f32, i_f64, u_f32, u_f64, h_f32, h_bf16_f32, i_f16)
}"""
    outs = [x.astype(np.float16), bf16(x).f32(), x.astype(np.float64), x.copy(),
            i.astype(np.float32), i.astype(np.float64), u.astype(np.float32),
            u.astype(np.float64), h.astype(np.float32), bf16(h.astype(np.float32)).f32(),
            i.astype(np.float32).astype(np.float16)]
    # bf16 rounding must be exact here: compare bit for bit through f32
    return Case(hlo, [x, i, u, h], outs, tol=(0, 0))


@case("bitcast_convert")
def _(rng):
    x = np.array([1.0, -2.5, np.inf, 0.0, -0.0, 3.4e38], np.float32)
    s = np.array([0x7FC00001, 1, -1, 0x3F800000, 0, -8388608], np.int32)
    d = np.array([1.0, -1.0, 2.0 ** -1074], np.float64)
    u16 = np.array([0x3C00, 0xC000, 0x7BFF, 0x0001, 0x3F80], np.uint16)
    hlo = """HloModule bitcast_convert

ENTRY main {
  x = f32[6] parameter(0)
  s = s32[6] parameter(1)
  d = f64[3] parameter(2)
  h = u16[5] parameter(3)
  x_bits = s32[6] bitcast-convert(x)
  x_ubits = u32[6] bitcast-convert(x)
  s_float = f32[6] bitcast-convert(s)
  d_bits = u64[3] bitcast-convert(d)
  d_back = s64[3] bitcast-convert(d)
  h_half = f16[5] bitcast-convert(h)
  h_bf16 = bf16[5] bitcast-convert(h)
  h_bf16_f32 = f32[5] convert(h_bf16)
  h_s16 = s16[5] bitcast-convert(h_half)
  ROOT r = (s32[6], u32[6], f32[6], u64[3], s64[3], f16[5], f32[5], s16[5]) tuple(x_bits, x_ubits, s_float, d_bits, d_back, h_half, h_bf16_f32, h_s16)
}"""
    outs = [x.view(np.int32), x.view(np.uint32), s.view(np.float32), d.view(np.uint64),
            d.view(np.int64), u16.view(np.float16), bf16_to_f32(u16), u16.view(np.int16)]
    return Case(hlo, [x, s, d, u16], outs, tol=(0, 0))


@case("reduce_precision")
def _(rng):
    x = np.concatenate([[np.nan, np.inf, -np.inf, 0.0, 65504, 65520, 70000, 1e-5, 6e-5, 1e-8,
                         1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 3e38, -1e-39, 1.00390625,
                         1.01171875],
                        rng.standard_normal(8) * 50]).astype(np.float32)
    hlo = """HloModule reduce_precision

ENTRY main {
  x = f32[24] parameter(0)
  as_f16 = f32[24] reduce-precision(x), exponent_bits=5, mantissa_bits=10
  as_bf16 = f32[24] reduce-precision(x), exponent_bits=8, mantissa_bits=7
  tiny = f32[24] reduce-precision(x), exponent_bits=3, mantissa_bits=2
  ROOT r = (f32[24], f32[24], f32[24]) tuple(as_f16, as_bf16, tiny)
}"""
    outs = [ref.reduce_precision_f32(x, 5, 10), ref.reduce_precision_f32(x, 8, 7),
            ref.reduce_precision_f32(x, 3, 2)]
    return Case(hlo, [x], outs, tol=(0, 0))


@case("clamp_crossed_bounds")
def _(rng):
    # clamp is min(max(x, lo), hi), so when lo > hi every result is hi
    x = rng.uniform(-3, 3, 6).astype(np.float32)
    n = np.array([-5, 0, 5, 10, -10, 3], np.int32)
    hlo = """HloModule clamp_crossed_bounds

ENTRY main {
  x = f32[6] parameter(0)
  n = s32[6] parameter(1)
  lo = f32[] constant(2)
  hi = f32[] constant(1)
  a = f32[6] clamp(lo, x, hi)
  ilo = s32[] constant(4)
  ihi = s32[] constant(-4)
  b = s32[6] clamp(ilo, n, ihi)
  ROOT out = (f32[6], s32[6]) tuple(a, b)
}"""
    return Case(hlo, [x, n], [np.minimum(np.maximum(x, np.float32(2)), np.float32(1)),
                              np.minimum(np.maximum(n, 4), -4).astype(np.int32)])
