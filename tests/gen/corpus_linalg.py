"""Corpus cases: dot, convolution, cholesky, triangular-solve, batch-norm."""
import numpy as np

from corpus_common import Case, bf16, case, shape_of
import corpus_reference as ref


@case("dot_matmul")
def _(rng):
    a = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((8, 5)).astype(np.float32)
    v = rng.standard_normal(8).astype(np.float32)
    hlo = """HloModule dot_matmul

ENTRY main {
  a = f32[4,8] parameter(0)
  b = f32[8,5] parameter(1)
  v = f32[8] parameter(2)
  mm = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  mv = f32[4] dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  vv = f32[] dot(v, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  outer = f32[8,8] dot(v, v), lhs_contracting_dims={}, rhs_contracting_dims={}
  ROOT out = (f32[4,5], f32[4], f32[], f32[8,8]) tuple(mm, mv, vv, outer)
}"""
    d = lambda x, y, lc, rc: ref.dot_general(x, y, [], [], lc, rc)  # noqa: E731
    outs = [d(a, b, [1], [0]), d(a, v, [1], [0]), d(v, v, [0], [0]), d(v, v, [], [])]
    return Case(hlo, [a, b, v], outs)


@case("dot_batch_and_multi_contracting")
def _(rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((2, 4, 5)).astype(np.float32)
    c = rng.standard_normal((3, 4, 5)).astype(np.float32)
    e = rng.standard_normal((5, 4, 6)).astype(np.float32)
    p = rng.standard_normal((4, 2, 3)).astype(np.float32)
    q = rng.standard_normal((3, 4, 2)).astype(np.float32)
    hlo = """HloModule dot_batch_and_multi_contracting

ENTRY main {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  c = f32[3,4,5] parameter(2)
  e = f32[5,4,6] parameter(3)
  p = f32[4,2,3] parameter(4)
  q = f32[3,4,2] parameter(5)
  batched = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  two = f32[3,6] dot(c, e), lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}
  odd = f32[2,4,4] dot(p, q), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={2}, rhs_contracting_dims={0}
  ROOT out = (f32[2,3,5], f32[3,6], f32[2,4,4]) tuple(batched, two, odd)
}"""
    outs = [ref.dot_general(a, b, [0], [0], [2], [1]), ref.dot_general(c, e, [], [], [1, 2], [1, 0]),
            ref.dot_general(p, q, [1], [2], [2], [0])]
    return Case(hlo, [a, b, c, e, p, q], outs)


@case("dot_integer_and_half")
def _(rng):
    a = rng.integers(-50, 50, (3, 4)).astype(np.int32)
    b = rng.integers(-50, 50, (4, 2)).astype(np.int32)
    h = rng.uniform(-1, 1, (3, 8)).astype(np.float16)
    k = rng.uniform(-1, 1, (8, 2)).astype(np.float16)
    x = bf16(rng.uniform(-1, 1, (2, 8)))
    y = bf16(rng.uniform(-1, 1, (8, 3)))
    hlo = """HloModule dot_integer_and_half

ENTRY main {
  a = s32[3,4] parameter(0)
  b = s32[4,2] parameter(1)
  h = f16[3,8] parameter(2)
  k = f16[8,2] parameter(3)
  x = bf16[2,8] parameter(4)
  y = bf16[8,3] parameter(5)
  ints = s32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  halves = f16[3,2] dot(h, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  brains = bf16[2,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  brains_f32 = f32[2,3] convert(brains)
  ROOT out = (s32[3,2], f16[3,2], f32[2,3]) tuple(ints, halves, brains_f32)
}"""
    xb = ref.dot_general(x.f32(), y.f32(), [], [], [1], [0])
    outs = [ref.dot_general(a, b, [], [], [1], [0]),
            ref.dot_general(h.astype(np.float32), k.astype(np.float32), [], [], [1], [0]).astype(
                np.float16), bf16(xb).f32()]
    return Case(hlo, [a, b, h, k, x, y], outs, tol=(1e-2, 1e-2))


def conv_case(name, lhs, rhs, labels, window, **kw):
    out = ref.convolution(lhs, rhs, labels, **kw)
    attrs = "window={%s}, dim_labels=%s" % (window, labels) if window else "dim_labels=%s" % labels
    if kw.get("feature_group_count", 1) > 1:
        attrs += ", feature_group_count=%d" % kw["feature_group_count"]
    if kw.get("batch_group_count", 1) > 1:
        attrs += ", batch_group_count=%d" % kw["batch_group_count"]
    hlo = """HloModule %s

ENTRY main {
  lhs = %s parameter(0)
  rhs = %s parameter(1)
  ROOT conv = %s convolution(lhs, rhs), %s
}""" % (name, shape_of(lhs), shape_of(rhs), shape_of(out), attrs)
    return Case(hlo, [lhs, rhs], [out], tol=(1e-4, 1e-5))


@case("conv2d_nhwc_same")
def _(rng):
    x = rng.standard_normal((2, 5, 5, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    return conv_case("conv2d_nhwc_same", x, w, "b01f_01io->b01f", "size=3x3 pad=1_1x1_1",
                     pads=[(1, 1), (1, 1)])


@case("conv2d_nchw_strided")
def _(rng):
    x = rng.standard_normal((1, 2, 7, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 2)).astype(np.float32)
    return conv_case("conv2d_nchw_strided", x, w, "bf01_oi01->bf01",
                     "size=3x2 stride=2x2 pad=0_1x1_0", stride=[2, 2], pads=[(0, 1), (1, 0)])


@case("conv2d_dilations")
def _(rng):
    x = rng.standard_normal((1, 4, 5, 2)).astype(np.float32)
    w = rng.standard_normal((2, 2, 2, 3)).astype(np.float32)
    return conv_case("conv2d_dilations", x, w, "b01f_01io->b01f",
                     "size=2x2 pad=1_1x0_1 lhs_dilate=2x1 rhs_dilate=1x2",
                     pads=[(1, 1), (0, 1)], lhs_dil=[2, 1], rhs_dil=[1, 2])


@case("conv2d_feature_groups")
def _(rng):
    x = rng.standard_normal((2, 4, 4, 4)).astype(np.float32)
    w = rng.standard_normal((2, 2, 2, 6)).astype(np.float32)  # 2 groups of 2 -> 3
    return conv_case("conv2d_feature_groups", x, w, "b01f_01io->b01f", "size=2x2",
                     feature_group_count=2)


@case("conv2d_depthwise")
def _(rng):
    x = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    w = rng.standard_normal((6, 1, 3, 3)).astype(np.float32)
    return conv_case("conv2d_depthwise", x, w, "bf01_oi01->bf01", "size=3x3 pad=1_1x1_1",
                     pads=[(1, 1), (1, 1)], feature_group_count=3)


@case("conv2d_batch_groups")
def _(rng):
    # the shape of a weight gradient: the batch is split across output features
    x = rng.standard_normal((4, 5, 5, 2)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2, 4)).astype(np.float32)
    return conv_case("conv2d_batch_groups", x, w, "b01f_01io->b01f", "size=3x3",
                     batch_group_count=2)


@case("conv1d_negative_padding")
def _(rng):
    x = rng.standard_normal((2, 10, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2)).astype(np.float32)
    return conv_case("conv1d_negative_padding", x, w, "b0f_0io->b0f", "size=3 stride=2 pad=-1_2",
                     stride=[2], pads=[(-1, 2)])


@case("conv2d_kernel_first_labels")
def _(rng):
    # dim_labels that put the spatial dims first and the batch last
    x = rng.standard_normal((5, 4, 2, 3)).astype(np.float32)   # 0 1 f b
    w = rng.standard_normal((2, 4, 2, 2)).astype(np.float32)   # o 0 1 i? see labels
    return conv_case("conv2d_kernel_first_labels", x, w, "01fb_o01i->f01b", "size=4x2",
                     )


@case("cholesky")
def _(rng):
    m = rng.standard_normal((4, 4))
    a = (m @ m.T + 4 * np.eye(4)).astype(np.float32)
    bm = rng.standard_normal((2, 3, 3))
    batch = (bm @ np.transpose(bm, (0, 2, 1)) + 3 * np.eye(3)).astype(np.float64)
    hlo = """HloModule cholesky

ENTRY main {
  a = f32[4,4] parameter(0)
  b = f64[2,3,3] parameter(1)
  l = f32[4,4] cholesky(a), lower=true
  u = f64[2,3,3] cholesky(b), lower=false
  rows = s32[4,4] iota(), iota_dimension=0
  cols = s32[4,4] iota(), iota_dimension=1
  in_lower = pred[4,4] compare(rows, cols), direction=GE
  zero = f32[] constant(0)
  zeros = f32[4,4] broadcast(zero), dimensions={}
  l_masked = f32[4,4] select(in_lower, l, zeros)
  brows = s32[2,3,3] iota(), iota_dimension=1
  bcols = s32[2,3,3] iota(), iota_dimension=2
  in_upper = pred[2,3,3] compare(brows, bcols), direction=LE
  dzero = f64[] constant(0)
  dzeros = f64[2,3,3] broadcast(dzero), dimensions={}
  u_masked = f64[2,3,3] select(in_upper, u, dzeros)
  ROOT out = (f32[4,4], f64[2,3,3]) tuple(l_masked, u_masked)
}"""
    # The triangle not asked for is implementation-defined, so the module
    # zeroes it before returning.
    lo = np.linalg.cholesky(a.astype(np.float64)).astype(np.float32)
    up = np.transpose(np.linalg.cholesky(batch), (0, 2, 1))
    return Case(hlo, [a, batch], [lo, up], tol=(1e-4, 1e-5))


def well_conditioned(rng, n):
    """A random matrix with a dominant diagonal; the other triangle holds
    junk that triangular-solve must ignore."""
    m = rng.standard_normal((n, n)) * 0.3
    m[np.diag_indices(n)] = rng.uniform(2, 3, n)
    return m.astype(np.float32)


@case("triangular_solve_left")
def _(rng):
    a = well_conditioned(rng, 4)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    hlo = """HloModule triangular_solve_left

ENTRY main {
  a = f32[4,4] parameter(0)
  b = f32[4,3] parameter(1)
  lower = f32[4,3] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  upper_t = f32[4,3] triangular-solve(a, b), left_side=true, lower=false, transpose_a=TRANSPOSE
  unit = f32[4,3] triangular-solve(a, b), left_side=true, lower=true, unit_diagonal=true, transpose_a=NO_TRANSPOSE
  upper = f32[4,3] triangular-solve(a, b), left_side=true, lower=false, unit_diagonal=false, transpose_a=NO_TRANSPOSE
  ROOT out = (f32[4,3], f32[4,3], f32[4,3], f32[4,3]) tuple(lower, upper_t, unit, upper)
}"""
    outs = [ref.triangular_solve(a, b, True, True, False, False),
            ref.triangular_solve(a, b, True, False, False, True),
            ref.triangular_solve(a, b, True, True, True, False),
            ref.triangular_solve(a, b, True, False, False, False)]
    return Case(hlo, [a, b], outs, tol=(1e-4, 1e-5))


@case("triangular_solve_right_batched")
def _(rng):
    a = np.stack([well_conditioned(rng, 3) for _ in range(2)])
    b = rng.standard_normal((2, 4, 3)).astype(np.float32)
    hlo = """HloModule triangular_solve_right_batched

ENTRY main {
  a = f32[2,3,3] parameter(0)
  b = f32[2,4,3] parameter(1)
  lower = f32[2,4,3] triangular-solve(a, b), lower=true, transpose_a=NO_TRANSPOSE
  lower_t = f32[2,4,3] triangular-solve(a, b), lower=true, transpose_a=TRANSPOSE
  upper_unit = f32[2,4,3] triangular-solve(a, b), left_side=false, lower=false, unit_diagonal=true, transpose_a=TRANSPOSE
  upper_adjoint = f32[2,4,3] triangular-solve(a, b), left_side=false, lower=false, transpose_a=ADJOINT
  ROOT out = (f32[2,4,3], f32[2,4,3], f32[2,4,3], f32[2,4,3]) tuple(lower, lower_t, upper_unit, upper_adjoint)
}"""

    def solve(lower, unit, trans):
        return np.stack([ref.triangular_solve(a[i], b[i], False, lower, unit, trans)
                         for i in range(2)])
    # left_side defaults to false; ADJOINT of a real matrix is its transpose
    outs = [solve(True, False, False), solve(True, False, True), solve(False, True, True),
            solve(False, False, True)]
    return Case(hlo, [a, b], outs, tol=(1e-4, 1e-5))


@case("batch_norm_inference")
def _(rng):
    x = rng.standard_normal((2, 3, 3, 4)).astype(np.float32)
    scale = rng.uniform(0.5, 2, 4).astype(np.float32)
    offset = rng.standard_normal(4).astype(np.float32)
    mean = rng.standard_normal(4).astype(np.float32)
    var = rng.uniform(0.5, 2, 4).astype(np.float32)
    hlo = """HloModule batch_norm_inference

ENTRY main {
  x = f32[2,3,3,4] parameter(0)
  scale = f32[4] parameter(1)
  offset = f32[4] parameter(2)
  mean = f32[4] parameter(3)
  var = f32[4] parameter(4)
  ROOT y = f32[2,3,3,4] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.001, feature_index=3
}"""
    out = ref.batch_norm_inference(x, scale, offset, mean, var, np.float32(0.001), 3)
    return Case(hlo, [x, scale, offset, mean, var], [out], tol=(1e-4, 1e-5))


@case("batch_norm_training")
def _(rng):
    x = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
    scale = rng.uniform(0.5, 2, 3).astype(np.float32)
    offset = rng.standard_normal(3).astype(np.float32)
    hlo = """HloModule batch_norm_training

ENTRY main {
  x = f32[4,3,2,2] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  ROOT bn = (f32[4,3,2,2], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=1e-05, feature_index=1
}"""
    outs = ref.batch_norm_training(x, scale, offset, np.float32(1e-5), 1)
    return Case(hlo, [x, scale, offset], list(outs), tol=(1e-4, 1e-5))


@case("batch_norm_grad")
def _(rng):
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)
    scale = rng.uniform(0.5, 2, 4).astype(np.float32)
    mean = x.astype(np.float64).mean(axis=(0, 1)).astype(np.float32)
    var = x.astype(np.float64).var(axis=(0, 1)).astype(np.float32)
    grad = rng.standard_normal((3, 2, 4)).astype(np.float32)
    hlo = """HloModule batch_norm_grad

ENTRY main {
  x = f32[3,2,4] parameter(0)
  scale = f32[4] parameter(1)
  mean = f32[4] parameter(2)
  var = f32[4] parameter(3)
  grad = f32[3,2,4] parameter(4)
  ROOT g = (f32[3,2,4], f32[4], f32[4]) batch-norm-grad(x, scale, mean, var, grad), epsilon=0.001, feature_index=2
}"""
    outs = ref.batch_norm_grad(x, scale, mean, var, grad, np.float32(0.001), 2)
    return Case(hlo, [x, scale, mean, var, grad], list(outs), tol=(1e-4, 1e-4))


@case("dot_half_tiles")
def _(rng):
    # half-precision dots big enough for several 128x128 output tiles and
    # k steps of 64: on Hopper the GPU backend's wgmma path, a [k][n] rhs
    # packed for the TMA (bf16, batched) and both operands k-contiguous (f16)
    x = bf16(rng.uniform(-1, 1, (2, 130, 136)))
    y = bf16(rng.uniform(-1, 1, (2, 136, 260)))
    h = rng.uniform(-1, 1, (96, 40)).astype(np.float16)
    k = rng.uniform(-1, 1, (300, 40)).astype(np.float16)
    hlo = """HloModule dot_half_tiles

ENTRY main {
  x = bf16[2,130,136] parameter(0)
  y = bf16[2,136,260] parameter(1)
  h = f16[96,40] parameter(2)
  k = f16[300,40] parameter(3)
  xy = f32[2,130,260] dot(x, y), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  hk = f16[96,300] dot(h, k), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT out = (f32[2,130,260], f16[96,300]) tuple(xy, hk)
}"""
    outs = [ref.dot_general(x.f32(), y.f32(), [0], [0], [2], [1]),
            ref.dot_general(h.astype(np.float32), k.astype(np.float32), [], [], [1], [1], dtype=np.float16)]
    return Case(hlo, [x, y, h, k], outs, tol=(2e-3, 2e-3))


@case("dot_mixed_precision")
def _(rng):
    # dot's result type may be wider than its operands (JAX's
    # preferred_element_type): products are summed in the result type
    x = bf16(rng.uniform(-1, 1, (2, 8)))
    y = bf16(rng.uniform(-1, 1, (8, 3)))
    h = rng.uniform(-1, 1, (3, 8)).astype(np.float16)
    k = rng.uniform(-1, 1, (8, 2)).astype(np.float16)
    a = rng.integers(-128, 128, (3, 16)).astype(np.int8)
    b = rng.integers(-128, 128, (16, 2)).astype(np.int8)
    hlo = """HloModule dot_mixed_precision

ENTRY main {
  x = bf16[2,8] parameter(0)
  y = bf16[8,3] parameter(1)
  h = f16[3,8] parameter(2)
  k = f16[8,2] parameter(3)
  a = s8[3,16] parameter(4)
  b = s8[16,2] parameter(5)
  xy = f32[2,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  hk = f32[3,2] dot(h, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ab = s32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (f32[2,3], f32[3,2], s32[3,2]) tuple(xy, hk, ab)
}"""
    outs = [ref.dot_general(x.f32(), y.f32(), [], [], [1], [0]),
            ref.dot_general(h.astype(np.float32), k.astype(np.float32), [], [], [1], [0]),
            ref.dot_general(a.astype(np.int32), b.astype(np.int32), [], [], [1], [0])]
    return Case(hlo, [x, y, h, k, a, b], outs)
