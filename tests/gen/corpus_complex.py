"""Corpus cases: complex numbers (c64, c128) and fft.

Goldens are NumPy's complex arithmetic and numpy.fft, computed in complex128
and rounded to the result type. Where NumPy's definition differs from HLO's
(sign, cbrt and logistic have no complex ufunc, or one of another meaning),
the golden is written from HLO's definition with NumPy operations.
"""
import numpy as np

from corpus_common import Case, case, literal_text, shape_of
from corpus_elementwise import tuple_module
import corpus_reference as ref


def cx(rng, shape, dtype=np.complex64, scale=1.0):
    """Random complex values with both parts uniform in [-scale, scale)."""
    re = rng.uniform(-scale, scale, shape)
    im = rng.uniform(-scale, scale, shape)
    return (re + 1j * im).astype(dtype)


@case("complex_arithmetic_c64")
def _(rng):
    a = cx(rng, (2, 3), scale=4.0)
    b = cx(rng, (2, 3), scale=4.0)
    b[0, 0] = a[0, 0]  # one equal pair, so EQ holds somewhere
    hlo = """HloModule complex_arithmetic_c64

ENTRY main {
  a = c64[2,3] parameter(0)
  b = c64[2,3] parameter(1)
  sum = c64[2,3] add(a, b)
  diff = c64[2,3] subtract(a, b)
  prod = c64[2,3] multiply(a, b)
  quot = c64[2,3] divide(a, b)
  neg = c64[2,3] negate(a)
  mag = f32[2,3] abs(a)
  re = f32[2,3] real(a)
  im = f32[2,3] imag(b)
  joined = c64[2,3] complex(re, im)
  eq = pred[2,3] compare(a, b), direction=EQ
  ne = pred[2,3] compare(a, b), direction=NE
  picked = c64[2,3] select(eq, b, a)
  ROOT out = (c64[2,3], c64[2,3], c64[2,3], c64[2,3], c64[2,3], f32[2,3], f32[2,3], f32[2,3], c64[2,3], pred[2,3], pred[2,3], c64[2,3]) tuple(sum, diff, prod, quot, neg, mag, re, im, joined, eq, ne, picked)
}"""
    a128, b128 = a.astype(np.complex128), b.astype(np.complex128)
    outs = [(a128 + b128).astype(np.complex64), (a128 - b128).astype(np.complex64),
            (a128 * b128).astype(np.complex64), (a128 / b128).astype(np.complex64), -a,
            np.abs(a128).astype(np.float32), a.real.copy(), b.imag.copy(),
            (a.real + 1j * b.imag).astype(np.complex64), a == b, a != b, np.where(a == b, b, a)]
    return Case(hlo, [a, b], outs)


def complex_unary(opcode, z):
    """HLO's unary ops on complex numbers, in complex128."""
    z = z.astype(np.complex128)
    with np.errstate(all="ignore"):
        fn = {
            "exponential": np.exp, "exponential-minus-one": np.expm1, "log": np.log,
            "log-plus-one": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v),
            "cbrt": lambda v: np.exp(np.log(v) / 3),  # the principal cube root
            "sine": np.sin, "cosine": np.cos, "tan": np.tan, "tanh": np.tanh,
            "logistic": lambda v: 1 / (1 + np.exp(-v)),
            "sign": lambda v: np.where(v == 0, 0, v / np.abs(v)),  # z/|z|, not NumPy 1's
        }[opcode]
        return fn(z)


UNARY_OPS = ["exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt", "rsqrt",
             "cbrt", "sine", "cosine", "tan", "tanh", "logistic", "sign"]


def complex_unary_case(name, z, ops, tol=None):
    entries = [("r%d" % i, shape_of(z), op, ["z"]) for i, op in enumerate(ops)]
    outs = [complex_unary(op, z).astype(z.dtype) for op in ops]
    return Case(tuple_module(name, [("z", z)], entries), [z], outs, tol)


@case("complex_unary_c128")
def _(rng):
    z = cx(rng, (12,), np.complex128, scale=2.0)
    z[0] = 0  # sign(0) is 0; log and rsqrt of 0 are left to the c64 case's nonzero inputs
    ops = [op for op in UNARY_OPS if op not in ("log", "rsqrt")]
    return complex_unary_case("complex_unary_c128", z, ops)


@case("complex_unary_c64")
def _(rng):
    z = cx(rng, (12,), np.complex64, scale=2.0)
    return complex_unary_case("complex_unary_c64", z, UNARY_OPS, tol=(2e-5, 2e-6))


@case("complex_power_c128")
def _(rng):
    x = cx(rng, (8,), np.complex128, scale=2.0)
    y = cx(rng, (8,), np.complex128, scale=2.0)
    x[0], y[0] = 0, 0          # 0^0 = 1
    x[1], y[1] = 0, 2.5        # 0^y = 0 for a real positive y
    y[2] = 3                   # an integer power of a complex base
    ops = [("p", shape_of(x), "power", ["x", "y"])]
    with np.errstate(all="ignore"):
        out = np.exp(y * np.log(x))
    out[0], out[1] = 1, 0
    return Case(tuple_module("complex_power_c128", [("x", x), ("y", y)], ops), [x, y], [out])


@case("complex_convert")
def _(rng):
    f = rng.uniform(-10, 10, (5,)).astype(np.float32)
    s = rng.integers(-1000, 1000, (5,)).astype(np.int32)
    d = rng.uniform(-10, 10, (5,))
    z = cx(rng, (5,), np.complex64, scale=3.0)
    w = cx(rng, (5,), np.complex128, scale=3.0)
    ops = [("f2c", "c64[5]", "convert", ["f"]), ("s2c", "c64[5]", "convert", ["s"]),
           ("d2c", "c128[5]", "convert", ["d"]), ("up", "c128[5]", "convert", ["z"]),
           ("down", "c64[5]", "convert", ["w"]), ("bits", "f32[5,2]", "bitcast-convert", ["z"])]
    hlo = tuple_module("complex_convert", [("f", f), ("s", s), ("d", d), ("z", z), ("w", w)], ops)
    # bitcast-convert splits each c64 into its two f32 parts, real first.
    outs = [f.astype(np.complex64), s.astype(np.complex64), d.astype(np.complex128),
            z.astype(np.complex128), w.astype(np.complex64), z.view(np.float32).reshape(5, 2)]
    return Case(hlo, [f, s, d, z, w], outs)


@case("complex_fusion_mixed")
def _(rng):
    """Complex ops fused with real ones, a complex reduction, a transposed
    layout and c128 division: what a backend must get right when it splits
    complex values into their parts."""
    z = cx(rng, (8, 16), np.complex64, scale=2.0)
    w = cx(rng, (), np.complex64, scale=2.0)
    r = rng.uniform(-3, 3, (8, 16)).astype(np.float32)
    v = cx(rng, (4, 4), np.complex128, scale=2.0)
    hlo = """HloModule complex_fusion_mixed

add_c64 {
  x = c64[] parameter(0)
  y = c64[] parameter(1)
  ROOT s = c64[] add(x, y)
}

ENTRY main {
  z = c64[8,16] parameter(0)
  w = c64[] parameter(1)
  r = f32[8,16] parameter(2)
  v = c128[4,4]{0,1} parameter(3)
  wb = c64[8,16] broadcast(w), dimensions={}
  rc = c64[8,16] convert(r)
  p = c64[8,16] multiply(z, wb)
  n = c64[8,16] negate(p)
  s = c64[8,16] subtract(n, rc)
  d = c64[8,16] divide(s, z)
  zero = c64[] constant((0, 0))
  rows = c64[8] reduce(d, zero), dimensions={1}, to_apply=add_c64
  mag = f32[8,16] abs(d)
  sq = c64[8,16] sqrt(d)
  t = c64[16,8] transpose(sq), dimensions={1,0}
  sg = c64[8,16] sign(z)
  rs = c64[8,16] rsqrt(z)
  vt = c128[4,4] transpose(v), dimensions={1,0}
  q = c128[4,4] divide(v, vt)
  ROOT out = (c64[8], f32[8,16], c64[16,8], c64[8,16], c64[8,16], c64[8,16], c128[4,4]) tuple(rows, mag, t, sg, rs, s, q)
}"""
    z128, w128 = z.astype(np.complex128), np.complex128(w)
    s = (-(z128 * w128) - r.astype(np.complex128)).astype(np.complex64)
    d = (s.astype(np.complex128) / z128).astype(np.complex64)
    d128 = d.astype(np.complex128)
    outs = [d128.sum(axis=1).astype(np.complex64), np.abs(d128).astype(np.float32),
            np.sqrt(d128).T.astype(np.complex64), (z128 / np.abs(z128)).astype(np.complex64),
            (1 / np.sqrt(z128)).astype(np.complex64), s, v / v.T]
    return Case(hlo, [z, w, r, v], outs)


def complex_dot(a, b, lb, rb, lc, rc, dtype):
    """dot_general of complex arrays from four real ones: (ar + i ai)(br + i bi)."""
    d = lambda x, y: ref.dot_general(x, y, lb, rb, lc, rc, np.float64)  # noqa: E731
    ar, ai = a.real.astype(np.float64), a.imag.astype(np.float64)
    br, bi = b.real.astype(np.float64), b.imag.astype(np.float64)
    return (d(ar, br) - d(ai, bi) + 1j * (d(ar, bi) + d(ai, br))).astype(dtype)


@case("complex_dot_and_convolution")
def _(rng):
    a = cx(rng, (3, 4))
    b = cx(rng, (4, 5))
    p = cx(rng, (2, 3, 4), np.complex128)
    q = cx(rng, (2, 4, 2), np.complex128)
    x = cx(rng, (1, 6, 2))     # b0f: batch, 6 positions, 2 features
    k = cx(rng, (3, 2, 2))     # 0io: window 3, 2 in, 2 out
    hlo = """HloModule complex_dot_and_convolution

ENTRY main {
  a = c64[3,4] parameter(0)
  b = c64[4,5] parameter(1)
  p = c128[2,3,4] parameter(2)
  q = c128[2,4,2] parameter(3)
  x = c64[1,6,2] parameter(4)
  k = c64[3,2,2] parameter(5)
  mm = c64[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bmm = c128[2,3,2] dot(p, q), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  conv = c64[1,4,2] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f
  ROOT out = (c64[3,5], c128[2,3,2], c64[1,4,2]) tuple(mm, bmm, conv)
}"""
    conv = lambda u, v: ref.convolution(u, v, "b0f_0io->b0f")  # noqa: E731
    xr, xi = x.real.astype(np.float64), x.imag.astype(np.float64)
    kr, ki = k.real.astype(np.float64), k.imag.astype(np.float64)
    conv_out = (conv(xr, kr) - conv(xi, ki) + 1j * (conv(xr, ki) + conv(xi, kr))).astype(np.complex64)
    outs = [complex_dot(a, b, [], [], [1], [0], np.complex64),
            complex_dot(p, q, [0], [0], [2], [1], np.complex128), conv_out]
    return Case(hlo, [a, b, p, q, x, k], outs)


@case("complex_reduce")
def _(rng):
    z = cx(rng, (3, 5))
    hlo = """HloModule complex_reduce

add {
  x = c64[] parameter(0)
  y = c64[] parameter(1)
  ROOT s = c64[] add(x, y)
}

mul {
  x = c64[] parameter(0)
  y = c64[] parameter(1)
  ROOT s = c64[] multiply(x, y)
}

ENTRY main {
  z = c64[3,5] parameter(0)
  zero = c64[] constant((0, 0))
  one = c64[] constant((1, 0))
  rows = c64[3] reduce(z, zero), dimensions={1}, to_apply=add
  all = c64[] reduce(z, zero), dimensions={0,1}, to_apply=add
  cols = c64[5] reduce(z, one), dimensions={0}, to_apply=mul
  ROOT out = (c64[3], c64[], c64[5]) tuple(rows, all, cols)
}"""
    z128 = z.astype(np.complex128)
    outs = [z128.sum(axis=1).astype(np.complex64), np.complex64(z128.sum()),
            z128.prod(axis=0).astype(np.complex64)]
    return Case(hlo, [z], outs)


@case("complex_shape_ops")
def _(rng):
    z = cx(rng, (2, 3))
    v = cx(rng, (6,))
    c = np.array([[1 + 2j, -3.5 + 0.25j]], dtype=np.complex64)
    hlo = """HloModule complex_shape_ops

less_real {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ra = f32[] real(a)
  rb = f32[] real(b)
  ROOT lt = pred[] compare(ra, rb), direction=LT
}

ENTRY main {
  z = c64[2,3] parameter(0)
  v = c64[6] parameter(1)
  c = c64[1,2] constant(%s)
  pad_value = c64[] constant((9, -9))
  t = c64[3,2] transpose(z), dimensions={1,0}
  b = c64[2,2,3] broadcast(z), dimensions={1,2}
  s = c64[2,2] slice(z), slice={[0:2], [1:3]}
  j = c64[2,5] concatenate(z, s), dimensions={1}
  r = c64[3,2] reshape(z)
  p = c64[4,3] pad(z, pad_value), padding=1_1x0_0
  rev = c64[6] reverse(v), dimensions={0}
  sorted = c64[6] sort(v), dimensions={0}, to_apply=less_real
  ROOT out = (c64[3,2], c64[2,2,3], c64[2,2], c64[2,5], c64[3,2], c64[4,3], c64[6], c64[6], c64[1,2]) tuple(t, b, s, j, r, p, rev, sorted, c)
}""" % literal_text(c)
    padded = np.full((4, 3), 9 - 9j, dtype=np.complex64)
    padded[1:3] = z
    outs = [z.T.copy(), np.broadcast_to(z, (2, 2, 3)).copy(), z[:, 1:3].copy(),
            np.concatenate([z, z[:, 1:3]], axis=1), z.reshape(3, 2), padded, v[::-1].copy(),
            v[np.argsort(v.real, kind="stable")], c]
    return Case(hlo, [z, v], outs)


@case("complex_gather_scatter")
def _(rng):
    table = cx(rng, (5, 2))
    rows = np.array([4, 0, 4], dtype=np.int32)
    acc = cx(rng, (5,))
    updates = cx(rng, (3,))
    hlo = """HloModule complex_gather_scatter

add {
  x = c64[] parameter(0)
  y = c64[] parameter(1)
  ROOT s = c64[] add(x, y)
}

ENTRY main {
  table = c64[5,2] parameter(0)
  rows = s32[3] parameter(1)
  acc = c64[5] parameter(2)
  updates = c64[3] parameter(3)
  picked = c64[3,2] gather(table, rows), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
  summed = c64[5] scatter(acc, rows, updates), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT out = (c64[3,2], c64[5]) tuple(picked, summed)
}"""
    summed = acc.astype(np.complex128)
    np.add.at(summed, rows, updates.astype(np.complex128))  # row 4 receives two updates
    return Case(hlo, [table, rows, acc, updates], [table[rows], summed.astype(np.complex64)])


# ---- fft ----

def fft_module(name, x, fft_type, lengths, out):
    """One fft instruction on one parameter."""
    hlo = """HloModule %s

ENTRY main {
  x = %s parameter(0)
  ROOT f = %s fft(x), fft_type=%s, fft_length={%s}
}""" % (name, shape_of(x), shape_of(out), fft_type, ",".join(str(n) for n in lengths))
    return hlo


def fft_reference(x, fft_type, lengths, out_dtype):
    """numpy.fft in complex128 / float64 over the last len(lengths) axes."""
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if fft_type == "FFT":
        r = np.fft.fftn(x.astype(np.complex128), axes=axes)
    elif fft_type == "IFFT":
        r = np.fft.ifftn(x.astype(np.complex128), axes=axes)
    elif fft_type == "RFFT":
        r = np.fft.rfftn(x.astype(np.float64), s=lengths, axes=axes)
    else:
        r = np.fft.irfftn(x.astype(np.complex128), s=lengths, axes=axes)
    return r.astype(out_dtype)


def fft_case(name, x, fft_type, lengths, tol=None):
    cdtype = np.complex128 if x.dtype in (np.float64, np.complex128) else np.complex64
    out_dtype = np.float64 if cdtype == np.complex128 else np.float32
    out = fft_reference(x, fft_type, lengths, out_dtype if fft_type == "IRFFT" else cdtype)
    return Case(fft_module(name, x, fft_type, lengths, out), [x], [out], tol)


# Lengths: powers of two, a prime (7), and mixed factors (12 = 2*2*3, 15 = 3*5).
@case("fft_1d_lengths")
def _(rng):
    x = cx(rng, (3, 12))
    return fft_case("fft_1d_lengths", x, "FFT", [12], tol=(1e-5, 1e-5))


@case("fft_1d_prime_length")
def _(rng):
    return fft_case("fft_1d_prime_length", cx(rng, (2, 7)), "FFT", [7], tol=(1e-5, 1e-5))


@case("ifft_1d_power_of_two")
def _(rng):
    return fft_case("ifft_1d_power_of_two", cx(rng, (4, 16)), "IFFT", [16], tol=(1e-5, 1e-6))


@case("fft_2d_c128")
def _(rng):
    return fft_case("fft_2d_c128", cx(rng, (2, 6, 10), np.complex128), "FFT", [6, 10],
                    tol=(1e-12, 1e-12))


@case("ifft_3d")
def _(rng):
    return fft_case("ifft_3d", cx(rng, (4, 6, 5)), "IFFT", [4, 6, 5], tol=(1e-5, 1e-6))


@case("rfft_1d_even_and_odd")
def _(rng):
    x = rng.uniform(-1, 1, (3, 10)).astype(np.float32)
    return fft_case("rfft_1d_even_and_odd", x, "RFFT", [10], tol=(1e-5, 1e-5))


@case("rfft_1d_odd_length")
def _(rng):
    x = rng.uniform(-1, 1, (2, 9)).astype(np.float32)
    return fft_case("rfft_1d_odd_length", x, "RFFT", [9], tol=(1e-5, 1e-5))


@case("irfft_1d_even_length")
def _(rng):
    # Arbitrary spectra: the imaginary parts of X[0] and X[n/2] are ignored.
    x = cx(rng, (2, 5))
    return fft_case("irfft_1d_even_length", x, "IRFFT", [8], tol=(1e-5, 1e-6))


@case("irfft_1d_odd_length")
def _(rng):
    return fft_case("irfft_1d_odd_length", cx(rng, (3, 5)), "IRFFT", [9], tol=(1e-5, 1e-6))


@case("rfft_3d_f64")
def _(rng):
    x = rng.uniform(-1, 1, (4, 3, 6))
    return fft_case("rfft_3d_f64", x, "RFFT", [4, 3, 6], tol=(1e-12, 1e-12))


@case("irfft_2d")
def _(rng):
    return fft_case("irfft_2d", cx(rng, (2, 6, 4)), "IRFFT", [6, 6], tol=(1e-5, 1e-6))


@case("cholesky_hermitian_c64")
def _(rng):
    # Hermitian positive definite: m m^H plus a diagonal shift.
    m = cx(rng, (2, 3, 3), np.complex128)
    a = (m @ np.conj(np.transpose(m, (0, 2, 1))) + 2 * np.eye(3)).astype(np.complex64)
    ops = [("l", "c64[2,3,3]", "cholesky", ["a"]), ("u", "c64[2,3,3]", "cholesky", ["a"])]
    hlo = tuple_module("cholesky_hermitian_c64", [("a", a)], ops)
    hlo = hlo.replace("cholesky(a)\n", "cholesky(a), lower=true\n", 1)
    hlo = hlo.replace("cholesky(a)\n", "cholesky(a), lower=false\n", 1)
    # a = L L^H with L lower; the upper factor U with a = U^H U is L^H.
    low = np.linalg.cholesky(a.astype(np.complex128))
    up = np.conj(np.transpose(low, (0, 2, 1)))
    return Case(hlo, [a], [low.astype(np.complex64), up.astype(np.complex64)], tol=(1e-5, 1e-6))
