"""Shared pieces of the corpus generator: the case registry, element types
(including bf16, which NumPy lacks), HLO literal text, and the file writer.

A case is a function registered with @case("name"). It receives a NumPy
random generator seeded from its own name (so adding a case never changes
another) and returns a Case: the HLO text, the input arrays, the golden
output arrays (every leaf of the result, depth first through tuples) and,
where needed, a tolerance.
"""
import os
import zlib

import numpy as np

CASES = []


class Case:
    def __init__(self, hlo, inputs, outputs, tol=None):
        self.hlo = hlo.strip("\n") + "\n"
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.tol = tol  # (rtol, atol) or None for npycmp's defaults


def case(name):
    def register(fn):
        CASES.append((name, fn))
        return fn
    return register


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


# ---- bf16: NumPy has no bfloat16, so its values travel as uint16 bits ----

class Bf16:
    """A bfloat16 array held as its uint16 bit patterns."""

    def __init__(self, bits):
        self.bits = np.array(bits, dtype=np.uint16, order="C")
        self.shape = self.bits.shape

    def f32(self):
        return bf16_to_f32(self.bits)


def f32_to_bf16_bits(x):
    """Rounds float32 values to bfloat16 (nearest, ties to even); NaN stays NaN."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    quiet = ((bits >> 16) | 0x40).astype(np.uint16)
    return np.where(nan, quiet, rounded).astype(np.uint16)


def bf16(x):
    return Bf16(f32_to_bf16_bits(x))


def bf16_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


# ---- element types ----

HLO_TYPE = {
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16",
    np.dtype(np.int8): "s8", np.dtype(np.int16): "s16", np.dtype(np.int32): "s32",
    np.dtype(np.int64): "s64", np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32", np.dtype(np.uint64): "u64", np.dtype(np.bool_): "pred",
    np.dtype(np.complex64): "c64", np.dtype(np.complex128): "c128",
}


def hlo_type(a):
    if isinstance(a, Bf16):
        return "bf16"
    return HLO_TYPE[np.asarray(a).dtype]


def shape_of(a, layout=None):
    """HLO shape text of an array, e.g. f32[2,3] or f32[2,3]{0,1}."""
    dims = ",".join(str(d) for d in a.shape)
    text = "%s[%s]" % (hlo_type(a), dims)
    if layout is not None:
        text += "{%s}" % ",".join(str(d) for d in layout)
    return text


def format_scalar(v, t):
    if t in ("c64", "c128"):  # XLA's complex literal: (real, imaginary)
        part = "f32" if t == "c64" else "f64"
        return "(%s, %s)" % (format_scalar(v.real, part), format_scalar(v.imag, part))
    if t == "pred":
        return "true" if v else "false"
    if t in ("f16", "bf16", "f32", "f64"):
        v = float(v)
        if np.isnan(v):
            return "nan"
        if np.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v == int(v) and abs(v) < 1e15:
            return "%d" % int(v) if not (v == 0 and np.signbit(v)) else "-0"
        # enough digits to name the value exactly once rounded to its type
        digits = "%.17g" if t == "f64" else "%.9g"
        return digits % v
    return str(int(v))


def literal_text(a):
    """The constant(...) payload for an array: 5, {1, 2}, {{1, 2}, {3, 4}}."""
    t = hlo_type(a)
    values = a.f32() if isinstance(a, Bf16) else np.asarray(a)

    def nest(x):
        if x.ndim == 0:
            return format_scalar(x[()], t)
        return "{" + ", ".join(nest(x[i]) for i in range(x.shape[0])) + "}"
    return nest(values)


# ---- writing ----

def write_npy(path, a):
    arr = a.bits if isinstance(a, Bf16) else np.array(a, order="C")  # keeps 0-d arrays 0-d
    np.save(path, arr, allow_pickle=False)


def write_case(root, name, c):
    with open(os.path.join(root, name + ".hlo"), "w") as f:
        f.write(c.hlo)
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    for i, a in enumerate(c.inputs):
        write_npy(os.path.join(d, "in%d.npy" % i), a)
    for i, a in enumerate(c.outputs):
        write_npy(os.path.join(d, "out%d.npy" % i), a)
    bf16_out = [isinstance(a, Bf16) for a in c.outputs]
    if any(bf16_out) and not all(bf16_out):
        # npycmp applies one "bf16" reading to every output of a module
        if any(hlo_type(a) == "u16" for a in c.outputs):
            raise ValueError("%s mixes bf16 and u16 outputs" % name)
    words = []
    if c.tol is not None:
        words += ["%g" % c.tol[0], "%g" % c.tol[1]]
    elif any(bf16_out):
        words += ["1e-2", "1e-2"]
    if any(bf16_out):
        words.append("bf16")
    if words:
        with open(os.path.join(d, "tolerance"), "w") as f:
            f.write(" ".join(words) + "\n")
