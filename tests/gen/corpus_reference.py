"""Independent NumPy reference implementations of HLO ops whose meaning is
more than one NumPy call. Each restates the rule it follows (from XLA's
operation semantics and the StableHLO spec); none of this shares code or
logic with axle's evaluator.
"""
import math
import string

import numpy as np

# ---- integers: HLO's defined corner cases ----


def _bits(dtype):
    return np.dtype(dtype).itemsize * 8


def _signed(dtype):
    return np.issubdtype(np.dtype(dtype), np.signedinteger)


def wrap(v, dtype):
    """A Python int reduced to dtype's width (two's complement)."""
    n = _bits(dtype)
    v &= (1 << n) - 1
    if _signed(dtype) and v >= 1 << (n - 1):
        v -= 1 << n
    return v


def _elementwise_int(fn, a, b, dtype):
    a = np.asarray(a)
    b = np.asarray(b)
    out = [wrap(fn(int(x), int(y)), dtype) for x, y in zip(a.ravel(), b.ravel())]
    return np.array(out, dtype=object).astype(dtype).reshape(a.shape)


def int_divide(a, b, dtype):
    """x/0 = -1 (all bits set); INT_MIN/-1 = INT_MIN; otherwise truncation."""
    def div(x, y):
        if y == 0:
            return -1
        q = abs(x) // abs(y)
        return q if (x >= 0) == (y >= 0) else -q
    return _elementwise_int(div, a, b, dtype)


def int_remainder(a, b, dtype):
    """x%0 = x; INT_MIN%-1 = 0; otherwise the sign follows the dividend."""
    def rem(x, y):
        if y == 0:
            return x
        r = abs(x) % abs(y)
        return r if x >= 0 else -r
    return _elementwise_int(rem, a, b, dtype)


def _shift_count(y, dtype):
    """The count as an unsigned number of the same width: negative counts are huge."""
    return y & ((1 << _bits(dtype)) - 1)


def shift_left(a, b, dtype):
    n = _bits(dtype)
    return _elementwise_int(lambda x, y: 0 if _shift_count(y, dtype) >= n else x << y, a, b, dtype)


def shift_right_logical(a, b, dtype):
    n = _bits(dtype)
    mask = (1 << n) - 1
    return _elementwise_int(
        lambda x, y: 0 if _shift_count(y, dtype) >= n else (x & mask) >> y, a, b, dtype)


def shift_right_arithmetic(a, b, dtype):
    """Shifts the bit pattern as signed, also for unsigned types; counts at or
    past the width fill with the sign bit."""
    n = _bits(dtype)

    def sra(x, y):
        sx = x & ((1 << n) - 1)
        if sx >= 1 << (n - 1):
            sx -= 1 << n
        if _shift_count(y, dtype) >= n:
            return -1 if sx < 0 else 0
        return sx >> y
    return _elementwise_int(sra, a, b, dtype)


def popcount(a, dtype):
    n = _bits(dtype)
    return np.array([bin(int(x) & ((1 << n) - 1)).count("1") for x in np.ravel(a)],
                    dtype=dtype).reshape(np.shape(a))


def count_leading_zeros(a, dtype):
    n = _bits(dtype)
    return np.array([n - (int(x) & ((1 << n) - 1)).bit_length() for x in np.ravel(a)],
                    dtype=dtype).reshape(np.shape(a))


def int_power(a, b, dtype):
    """Non-negative exponents only: repeated multiplication, wrapping."""
    def pw(x, y):
        assert y >= 0
        return wrap(x ** y, dtype)
    return _elementwise_int(pw, a, b, dtype)


# ---- floats ----

def round_half_away(x):
    """round-nearest-afz: halfway cases go away from zero."""
    x64 = np.asarray(x, dtype=np.float64)
    t = np.trunc(x64)
    frac = np.abs(x64 - t)
    r = np.where(frac >= 0.5, t + np.sign(x64), t)
    return np.where(np.isfinite(x64), r, x64).astype(np.asarray(x).dtype)


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, np.float64))


def logistic(x):
    x64 = np.asarray(x, np.float64)
    return 1.0 / (1.0 + np.exp(-x64))


def maximum_nan(a, b):
    """HLO maximum/minimum propagate NaN (unlike C fmax)."""
    return np.maximum(a, b)


def reduce_precision_f32(x, exponent_bits, mantissa_bits):
    """Rounds float32 values to a format with the given bit counts, following
    XLA's definition: round the mantissa to nearest even, then values whose
    exponent is too large become infinity and too small (denormals included)
    become zero; NaN stays NaN when mantissa_bits > 0."""
    x = np.asarray(x, np.float32)
    v = x.view(np.uint32).astype(np.uint64)
    if mantissa_bits < 23:
        last = 1 << (23 - mantissa_bits)
        bias = (last >> 1) - 1 + ((v & last) >> (23 - mantissa_bits))
        v = (v + bias) & (~(last - 1) & 0xFFFFFFFF)
    if exponent_bits < 8:
        exp_mask = 0xFF << 23
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        max_exp = 127 + reduced_bias
        min_exp = 127 - reduced_bias
        e = v & exp_mask
        signed_zero = v & 0x80000000
        v = np.where(e > (max_exp << 23), signed_zero | exp_mask, v)
        v = np.where(e <= (min_exp << 23), signed_zero, v)
    out = (v & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x if mantissa_bits > 0 else np.float32(np.inf), out)


def totalorder_key(x):
    """float32 -> int64 key whose order is IEEE totalOrder:
    -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN."""
    b = np.asarray(x, np.float32).view(np.int32).astype(np.int64)
    return np.where(b < 0, -(b & 0x7FFFFFFF) - 1, b)


def totalorder_key_f64(x):
    """float64 -> Python int key whose order is IEEE totalOrder (the f32
    rule on 64 bits; object dtype, as int64 cannot hold every key)."""
    b = np.asarray(x, np.float64).view(np.int64)
    return np.array([-(int(v) & 0x7FFFFFFFFFFFFFFF) - 1 if v < 0 else int(v) for v in b.ravel()],
                    dtype=object).reshape(b.shape)


def float_to_int_saturating(x, dtype):
    """convert float -> integer: truncate toward zero, saturate at the type's
    limits, NaN -> 0."""
    info = np.iinfo(dtype)
    out = []
    for v in np.ravel(np.asarray(x, np.float64)):
        if math.isnan(v):
            out.append(0)
        elif v >= info.max:
            out.append(info.max)
        elif v <= info.min:
            out.append(info.min)
        else:
            out.append(int(math.trunc(v)))
    return np.array(out, dtype=object).astype(dtype).reshape(np.shape(x))


def int_to_int(x, dtype):
    """convert between integer types keeps the low bits (two's complement)."""
    return np.array([wrap(int(v), dtype) for v in np.ravel(x)], dtype=object).astype(
        dtype).reshape(np.shape(x))


# ---- data movement ----

def pad(x, value, config):
    """config: (lo, hi, interior) per dimension; lo/hi may be negative (crop)."""
    out = np.asarray(x)
    for d, (lo, hi, interior) in enumerate(config):
        n = out.shape[d]
        size = n + max(n - 1, 0) * interior
        shape = list(out.shape)
        shape[d] = size
        dilated = np.full(shape, value, dtype=out.dtype)
        index = [slice(None)] * out.ndim
        index[d] = slice(0, size, interior + 1)
        dilated[tuple(index)] = out
        shape[d] = size + max(lo, 0) + max(hi, 0)
        padded = np.full(shape, value, dtype=out.dtype)
        index[d] = slice(max(lo, 0), max(lo, 0) + size)
        padded[tuple(index)] = dilated
        index[d] = slice(max(-lo, 0), shape[d] - max(-hi, 0))
        out = padded[tuple(index)]
    return out


def dynamic_start(starts, operand_shape, sizes):
    """dynamic-slice and dynamic-update-slice clamp each start into
    [0, dim - size] so the window always fits."""
    return [int(min(max(int(s), 0), d - z)) for s, d, z in zip(starts, operand_shape, sizes)]


def dot_general(lhs, rhs, lb, rb, lc, rc, dtype=None):
    """dot: result dims are batch, then lhs free dims, then rhs free dims."""
    letters = iter(string.ascii_letters)
    ls = [None] * lhs.ndim
    rs = [None] * rhs.ndim
    for a, b in zip(lb, rb):
        ls[a] = rs[b] = next(letters)
    for a, b in zip(lc, rc):
        ls[a] = rs[b] = next(letters)
    for i in range(lhs.ndim):
        ls[i] = ls[i] or next(letters)
    for i in range(rhs.ndim):
        rs[i] = rs[i] or next(letters)
    out = [ls[a] for a in lb]
    out += [ls[i] for i in range(lhs.ndim) if i not in lb and i not in lc]
    out += [rs[i] for i in range(rhs.ndim) if i not in rb and i not in rc]
    spec = "%s,%s->%s" % ("".join(ls), "".join(rs), "".join(out))
    acc = np.float64 if np.issubdtype(lhs.dtype, np.floating) else np.int64
    r = np.einsum(spec, lhs.astype(acc), rhs.astype(acc))
    return r.astype(dtype or lhs.dtype)


# ---- windows ----

def _window_positions(in_shape, size, stride, pad_lo, win_dil, out_shape):
    """For each output index, the list of input indices its window covers
    (None for positions in padding)."""
    for out_idx in np.ndindex(*out_shape):
        cells = []
        for k in np.ndindex(*size):
            idx = []
            for d in range(len(in_shape)):
                p = out_idx[d] * stride[d] + k[d] * win_dil[d] - pad_lo[d]
                idx.append(p if 0 <= p < in_shape[d] else None)
            cells.append(None if None in idx else tuple(idx))
        yield out_idx, cells


def reduce_window(x, init, fn, size, stride=None, pads=None, base_dil=None, win_dil=None):
    """reduce-window. Base dilation puts holes between input elements; holes
    and padding hold nothing and contribute the init value, which the cases
    choose to be fn's identity."""
    r = x.ndim
    stride = stride or [1] * r
    pads = pads or [(0, 0)] * r
    base_dil = base_dil or [1] * r
    win_dil = win_dil or [1] * r
    dil_shape = [(n - 1) * b + 1 for n, b in zip(x.shape, base_dil)]
    dilated = np.full(dil_shape, np.nan, dtype=np.float64)
    present = np.zeros(dil_shape, dtype=bool)
    index = tuple(slice(None, None, b) for b in base_dil)
    dilated[index] = x
    present[index] = True
    padded = [n + lo + hi for n, (lo, hi) in zip(dil_shape, pads)]
    out_shape = [(p - ((s - 1) * w + 1)) // st + 1
                 for p, s, w, st in zip(padded, size, win_dil, stride)]
    out = np.empty(out_shape, dtype=np.float64)
    lo = [p[0] for p in pads]
    for out_idx, cells in _window_positions(dil_shape, size, stride, lo, win_dil, out_shape):
        acc = init
        for c in cells:
            if c is not None and present[c]:
                acc = fn(acc, dilated[c])
        out[out_idx] = acc
    return out.astype(x.dtype)


def select_and_scatter(operand, source, init, size, stride, pads, select, scatter):
    """select-and-scatter: in each window (padding is never selected), pick
    one element by keeping the current choice while select(current,
    candidate) holds, then combine the source value into that position."""
    out = np.full(operand.shape, init, dtype=np.float64)
    lo = [p[0] for p in pads]
    win_dil = [1] * operand.ndim
    for out_idx, cells in _window_positions(operand.shape, size, stride, lo, win_dil,
                                            source.shape):
        chosen = None
        for c in cells:
            if c is None:
                continue
            if chosen is None or not select(operand[chosen], operand[c]):
                chosen = c
        if chosen is not None:
            out[chosen] = scatter(out[chosen], source[out_idx])
    return out.astype(operand.dtype)


# ---- gather and scatter ----

def _index_vector(indices, batch_index, index_vector_dim):
    if index_vector_dim == indices.ndim:
        return [int(indices[tuple(batch_index)])]
    idx = list(batch_index)
    idx.insert(index_vector_dim, slice(None))
    return [int(v) for v in indices[tuple(idx)]]


def gather(operand, indices, offset_dims, collapsed_slice_dims, start_index_map,
           index_vector_dim, slice_sizes, operand_batching_dims=(),
           start_indices_batching_dims=()):
    """gather: each batch position reads a slice_sizes window whose start
    comes from indices (clamped so the window fits); collapsed dims (size 1)
    are dropped and the rest appear at offset_dims of the output. An operand
    batching dim starts at the batch position's coordinate along the paired
    indices batching dim (and is dropped like a collapsed one)."""
    batch_shape = [n for d, n in enumerate(indices.shape) if d != index_vector_dim]
    indices_batch_dims = [d for d in range(indices.ndim) if d != index_vector_dim]
    kept = [d for d in range(operand.ndim)
            if d not in collapsed_slice_dims and d not in operand_batching_dims]
    out_rank = len(batch_shape) + len(kept)
    out_shape = [0] * out_rank
    batch_dims = [d for d in range(out_rank) if d not in offset_dims]
    for d, n in zip(batch_dims, batch_shape):
        out_shape[d] = n
    for d, k in zip(offset_dims, kept):
        out_shape[d] = slice_sizes[k]
    out = np.empty(out_shape, dtype=operand.dtype)
    for out_idx in np.ndindex(*out_shape):
        batch_index = [out_idx[d] for d in batch_dims]
        start = [0] * operand.ndim
        for k, v in zip(start_index_map, _index_vector(indices, batch_index, index_vector_dim)):
            start[k] = v
        for od, idim in zip(operand_batching_dims, start_indices_batching_dims):
            start[od] = batch_index[indices_batch_dims.index(idim)]
        start = dynamic_start(start, operand.shape, slice_sizes)
        full = list(start)
        for d, k in zip(offset_dims, kept):
            full[k] += out_idx[d]
        out[out_idx] = operand[tuple(full)]
    return out


def scatter(operand, indices, updates, update_window_dims, inserted_window_dims,
            scatter_dims_to_operand_dims, index_vector_dim, combine,
            input_batching_dims=(), scatter_indices_batching_dims=()):
    """scatter: each update element lands at its scatter start plus its
    window offset; a whole update window is skipped when any part of it
    would fall outside the operand (XLA's rule for out-of-bounds indices).
    An input batching dim starts at the update's coordinate along the paired
    indices batching dim."""
    out = operand.copy()
    scatter_dims = [d for d in range(updates.ndim) if d not in update_window_dims]
    indices_batch_dims = [d for d in range(indices.ndim) if d != index_vector_dim]
    window_operand_dims = [d for d in range(operand.ndim)
                           if d not in inserted_window_dims and d not in input_batching_dims]
    window_size = [1] * operand.ndim
    for od, ud in zip(window_operand_dims, update_window_dims):
        window_size[od] = updates.shape[ud]
    for u_idx in np.ndindex(*updates.shape):
        batch_index = [u_idx[d] for d in scatter_dims]
        start = [0] * operand.ndim
        for k, v in zip(scatter_dims_to_operand_dims,
                        _index_vector(indices, batch_index, index_vector_dim)):
            start[k] = v
        for od, idim in zip(input_batching_dims, scatter_indices_batching_dims):
            start[od] = batch_index[indices_batch_dims.index(idim)]
        if any(s < 0 or s > n - w for s, n, w in zip(start, operand.shape, window_size)):
            continue
        full = list(start)
        for od, ud in zip(window_operand_dims, update_window_dims):
            full[od] += u_idx[ud]
        full = tuple(full)
        out[full] = combine(out[full], updates[u_idx])
    return out


# ---- convolution ----

def _parse_labels(labels):
    """'b01f_01io->b01f' -> per-operand permutations into canonical order
    (batch, feature, spatial...) / (out feature, in feature, spatial...)."""
    lhs, rest = labels.split("_")
    rhs, out = rest.split("->")
    n = len(lhs) - 2

    def perm(s, first, second):
        return [s.index(first), s.index(second)] + [s.index(str(i)) for i in range(n)]
    return perm(lhs, "b", "f"), perm(rhs, "o", "i"), perm(out, "b", "f")


def _conv_canonical(lhs, rhs, stride, pads, lhs_dil, rhs_dil):
    """lhs [B, C, s...], rhs [O, C, k...] -> [B, O, o...], one group."""
    n = lhs.ndim - 2
    for d in range(n):
        dil = lhs_dil[d]
        if dil > 1:
            shape = list(lhs.shape)
            shape[2 + d] = (shape[2 + d] - 1) * dil + 1
            z = np.zeros(shape)
            idx = [slice(None)] * lhs.ndim
            idx[2 + d] = slice(None, None, dil)
            z[tuple(idx)] = lhs
            lhs = z
    lhs = pad(lhs, 0.0, [(0, 0, 0), (0, 0, 0)] + [(lo, hi, 0) for lo, hi in pads])
    for d in range(n):
        dil = rhs_dil[d]
        if dil > 1:
            shape = list(rhs.shape)
            shape[2 + d] = (shape[2 + d] - 1) * dil + 1
            z = np.zeros(shape)
            idx = [slice(None)] * rhs.ndim
            idx[2 + d] = slice(None, None, dil)
            z[tuple(idx)] = rhs
            rhs = z
    out_sp = [(lhs.shape[2 + d] - rhs.shape[2 + d]) // stride[d] + 1 for d in range(n)]
    out = np.zeros([lhs.shape[0], rhs.shape[0]] + out_sp)
    for o in np.ndindex(*out_sp):
        window = tuple([slice(None), slice(None)] +
                       [slice(o[d] * stride[d], o[d] * stride[d] + rhs.shape[2 + d])
                        for d in range(n)])
        patch = lhs[window]  # [B, C, k...]
        out[(slice(None), slice(None)) + o] = np.tensordot(
            patch, rhs, axes=(list(range(1, lhs.ndim)), list(range(1, rhs.ndim))))
    return out


def convolution(lhs, rhs, labels, stride=None, pads=None, lhs_dil=None, rhs_dil=None,
                feature_group_count=1, batch_group_count=1):
    """HLO convolution. Groups follow the StableHLO spec: with
    feature_group_count G, lhs features and rhs output features are each
    split into G consecutive chunks, convolved pairwise and concatenated along
    output features; batch_group_count splits the lhs batch instead."""
    lp, rp, op = _parse_labels(labels)
    n = lhs.ndim - 2
    stride = stride or [1] * n
    pads = pads or [(0, 0)] * n
    lhs_dil = lhs_dil or [1] * n
    rhs_dil = rhs_dil or [1] * n
    lc = np.transpose(lhs.astype(np.float64), lp)
    rc = np.transpose(rhs.astype(np.float64), rp)
    if feature_group_count > 1:
        ls = np.split(lc, feature_group_count, axis=1)
        rs = np.split(rc, feature_group_count, axis=0)
        oc = np.concatenate([_conv_canonical(a, b, stride, pads, lhs_dil, rhs_dil)
                             for a, b in zip(ls, rs)], axis=1)
    elif batch_group_count > 1:
        ls = np.split(lc, batch_group_count, axis=0)
        rs = np.split(rc, batch_group_count, axis=0)
        oc = np.concatenate([_conv_canonical(a, b, stride, pads, lhs_dil, rhs_dil)
                             for a, b in zip(ls, rs)], axis=1)
    else:
        oc = _conv_canonical(lc, rc, stride, pads, lhs_dil, rhs_dil)
    return np.transpose(oc, np.argsort(op)).astype(lhs.dtype)


# ---- linear algebra ----

def triangular_solve(a, b, left_side, lower, unit_diagonal, transpose_a):
    """Only the chosen triangle of a is read; with unit_diagonal its diagonal
    is taken as 1. Solves op(a) x = b (left) or x op(a) = b (right)."""
    a64 = np.tril(a.astype(np.float64)) if lower else np.triu(a.astype(np.float64))
    if unit_diagonal:
        np.fill_diagonal(a64, 1.0)
    op = a64.T if transpose_a else a64
    b64 = b.astype(np.float64)
    if left_side:
        x = np.linalg.solve(op, b64)
    else:
        x = np.linalg.solve(op.T, b64.T).T
    return x.astype(a.dtype)


def batch_norm_training(x, scale, offset, eps, feature_index):
    axes = tuple(d for d in range(x.ndim) if d != feature_index)
    shape = [1] * x.ndim
    shape[feature_index] = -1
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes)
    var = ((x64 - mean.reshape(shape)) ** 2).mean(axis=axes)
    y = (x64 - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    y = y * scale.reshape(shape) + offset.reshape(shape)
    return y.astype(x.dtype), mean.astype(x.dtype), var.astype(x.dtype)


def batch_norm_inference(x, scale, offset, mean, var, eps, feature_index):
    shape = [1] * x.ndim
    shape[feature_index] = -1
    x64 = x.astype(np.float64)
    y = (x64 - mean.reshape(shape)) / np.sqrt(var.reshape(shape).astype(np.float64) + eps)
    return (y * scale.reshape(shape) + offset.reshape(shape)).astype(x.dtype)


def batch_norm_grad(x, scale, mean, var, grad, eps, feature_index):
    """Gradients of batch-norm-training's output with respect to its operand,
    scale and offset, with mean and var the batch statistics."""
    axes = tuple(d for d in range(x.ndim) if d != feature_index)
    shape = [1] * x.ndim
    shape[feature_index] = -1
    count = x.size // x.shape[feature_index]
    x64, g64 = x.astype(np.float64), grad.astype(np.float64)
    centered = x64 - mean.reshape(shape)
    inv_std = 1.0 / np.sqrt(var.astype(np.float64) + eps)
    grad_offset = g64.sum(axis=axes)
    grad_scale = (g64 * centered).sum(axis=axes) * inv_std
    grad_x = (scale * inv_std).reshape(shape) * (
        g64 - grad_offset.reshape(shape) / count
        - centered * ((g64 * centered).sum(axis=axes) / count).reshape(shape)
        * (inv_std ** 2).reshape(shape))
    return grad_x.astype(x.dtype), grad_scale.astype(x.dtype), grad_offset.astype(x.dtype)


# ---- rng-bit-generator, algorithm=rng_three_fry ----

_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)


def threefry2x32(key, x0, x1):
    """Threefry-2x32 with 20 rounds (Salmon et al., SC 2011) on uint32 arrays;
    key is a pair of Python ints."""
    m = 0xFFFFFFFF
    ks = [key[0] & m, key[1] & m, 0x1BD11BDA ^ key[0] ^ key[1]]
    x0 = (x0.astype(np.uint64) + ks[0]) & m
    x1 = (x1.astype(np.uint64) + ks[1]) & m
    for block in range(5):
        for r in range(4):
            rot = _ROTATIONS[(block % 2) * 4 + r]
            x0 = (x0 + x1) & m
            x1 = ((x1 << rot) | (x1 >> (32 - rot))) & m
            x1 = x0 ^ x1
        x0 = (x0 + ks[(block + 1) % 3]) & m
        x1 = (x1 + ks[(block + 2) % 3] + block + 1) & m
    return x0.astype(np.uint32), x1.astype(np.uint32)


# Known answers from the Random123 distribution (also JAX's tests).
assert [int(v[0]) for v in threefry2x32((0, 0), np.zeros(1, np.uint32), np.zeros(1, np.uint32))] \
    == [0x6B200159, 0x99BA4EFE]
assert [int(v[0]) for v in threefry2x32((0x13198A2E, 0x03707344),
                                        np.array([0x243F6A88], np.uint32),
                                        np.array([0x85A308D3], np.uint32))] \
    == [0xC4923A9C, 0x483DF7A0]


def _threefry_blocks(key, counter, count):
    """Enciphers counter + 0 .. counter + count-1 (u64, wrapping): the block
    input is the low and high 32-bit halves of each counter value."""
    c = np.array([(counter + i) % 2 ** 64 for i in range(count)], dtype=np.uint64)
    return threefry2x32((key & 0xFFFFFFFF, key >> 32), (c & 0xFFFFFFFF).astype(np.uint32),
                        (c >> np.uint64(32)).astype(np.uint32))


def rng_three_fry(state, shape, bits):
    """XLA's RngBitGeneratorExpander with ThreeFry: state = [key, counter].
    64-bit elements: element i (row-major) is block counter+i, word 0 low.
    32-bit elements: the shape is halved along its first even dimension (or
    else its first largest one); block i gives the two elements 2i and 2i+1
    along that dimension at the half shape's row-major position i.
    Returns (new_state, values); the counter advances by the blocks used."""
    key, counter = int(state[0]), int(state[1])
    if bits == 64:
        n = int(np.prod(shape))
        w0, w1 = _threefry_blocks(key, counter, n)
        values = (w0.astype(np.uint64) | (w1.astype(np.uint64) << np.uint64(32))).reshape(shape)
        used = n
    else:
        if len(shape) == 0:
            split, half = 0, [1]
            full = [1]
        else:
            evens = [d for d in range(len(shape)) if shape[d] % 2 == 0]
            split = evens[0] if evens else int(np.argmax(shape))
            half = list(shape)
            half[split] = (shape[split] + 1) // 2
            full = list(shape)
        used = int(np.prod(half))
        w0, w1 = _threefry_blocks(key, counter, used)
        pair = np.stack([w0.reshape(half), w1.reshape(half)], axis=split + 1)
        merged = list(half)
        merged[split] = half[split] * 2
        values = pair.reshape(merged)
        values = values[tuple(slice(0, n) for n in full)].reshape(shape)
    new_state = np.array([key, (counter + used) % 2 ** 64], dtype=np.uint64)
    return new_state, values
