"""Corpus cases: the LAPACK custom-calls JAX's CPU lowering emits for
jnp.linalg (potrf, geqrf + orgqr/ungqr, syevd/heevd, gesdd, trsm), written
the way that lowering writes them: target lapack_<t><routine>_ffi, typed FFI,
options as an attribute dictionary in backend_config, matrices column-major
({0,1}, batch dimensions major) in operand_layout_constraints, and info
outputs.

Decompositions are unique only up to phases (eigenvectors, singular vectors)
so each module multiplies its factors back (v diag(w) v^H, u diag(s) vt,
q r) and forms the Gram matrices (v^H v, u^H u, vt vt^H, q^H q), as a test
of JAX's results would; eigenvalues, singular values, cholesky factors,
triangular solves and LAPACK's reflectors (geqrf's tau, by larfg's sign rule)
are unique and compared directly. Every golden comes from NumPy's own LAPACK
(np.linalg) or plain NumPy products.

Each routine has a single-precision module (f32 and c64) and a
double-precision one (f64 and c128), one of the two with a batch dimension,
so that each tolerance fits its precision.
"""
import numpy as np

from corpus_common import Case, case, hlo_type

LETTER = {"f32": "s", "f64": "d", "c64": "c", "c128": "z"}
REAL = {"f32": "f32", "f64": "f64", "c64": "f32", "c128": "f64"}
SINGLE = (2e-4, 2e-5)
DOUBLE = (1e-10, 1e-12)


def shape(t, dims, layout=None):
    text = "%s[%s]" % (t, ",".join(str(d) for d in dims))
    return text + ("{%s}" % ",".join(str(d) for d in layout) if layout is not None else "")


def matrix_layout(rank):
    """JAX's LAPACK layout: the two matrix dims column-major, batch major."""
    b = rank - 2
    return [b, b + 1] + list(range(b - 1, -1, -1))


def row_major(rank):
    return list(range(rank - 1, -1, -1))


def lapack(name, results, operands, target, config, aliasing="{0}: (0, {})"):
    """The custom-call line: results [(type, dims, layout)], operands [(name, type, dims)]."""
    result = ", ".join(shape(t, d, l) for t, d, l in results)
    if len(results) > 1:
        result = "(%s)" % result
    constraints = ", ".join(shape(t, d, matrix_layout(len(d)) if len(d) >= 2 else row_major(len(d)))
                            for _, t, d in operands)
    alias = ", output_to_operand_aliasing={%s}" % aliasing
    cfg = ", backend_config={%s}" % config if config else ""
    return ("  %s = %s custom-call(%s), custom_call_target=\"%s\", operand_layout_constraints={%s}%s, "
            "api_version=API_VERSION_TYPED_FFI%s" % (name, result, ", ".join(n for n, _, _ in operands), target,
                                                     constraints, alias, cfg))


def leaf_result(t, dims):
    """A result leaf. JAX's result layouts are column-major too, but a
    layout on a tuple leaf that get-tuple-element drops is the forwarding
    defect of issue 22 item 2 on the CPU backend; until that is fixed the
    results are written in the default layout (the constraint on the
    operands says what the target reads)."""
    return (t, dims, None)


class Module:
    """Builds an HLO module a line at a time; each helper returns the name it defined."""

    def __init__(self, name):
        self.name, self.lines, self.params, self.outs, self.count = name, [], [], [], 0

    def fresh(self, base):
        self.count += 1
        return "%s.%d" % (base, self.count)

    def line(self, name, t, dims, text):
        self.lines.append("  %s = %s %s" % (name, shape(t, dims), text))
        return name

    def param(self, t, dims):
        name = "p%d" % len(self.params)
        self.params.append(name)
        return self.line(name, t, dims, "parameter(%d)" % (len(self.params) - 1))

    def gte(self, tuple_name, index, t, dims):
        return self.line(self.fresh("gte"), t, dims, "get-tuple-element(%s), index=%d" % (tuple_name, index))

    def transpose_last(self, x, t, dims, conjugate):
        """x^T (or x^H) over the two minor dims."""
        rank = len(dims)
        perm = list(range(rank - 2)) + [rank - 1, rank - 2]
        out_dims = dims[:-2] + [dims[-1], dims[-2]]
        y = self.line(self.fresh("tr"), t, out_dims, "transpose(%s), dimensions={%s}" % (x, ",".join(map(str, perm))))
        if not conjugate or t not in ("c64", "c128"):
            return y
        r = REAL[t]
        re = self.line(self.fresh("re"), r, out_dims, "real(%s)" % y)
        im = self.line(self.fresh("im"), r, out_dims, "imag(%s)" % y)
        neg = self.line(self.fresh("neg"), r, out_dims, "negate(%s)" % im)
        return self.line(self.fresh("conj"), t, out_dims, "complex(%s, %s)" % (re, neg))

    def matmul(self, x, y, t, xd, yd):
        b = len(xd) - 2
        batch = ",".join(map(str, range(b)))
        dims = xd[:-1] + [yd[-1]]
        attrs = "lhs_contracting_dims={%d}, rhs_contracting_dims={%d}" % (b + 1, b)
        if b:
            attrs = "lhs_batch_dims={%s}, lhs_contracting_dims={%d}, rhs_batch_dims={%s}, rhs_contracting_dims={%d}" % (
                batch, b + 1, batch, b)
        return self.line(self.fresh("dot"), t, dims, "dot(%s, %s), %s" % (x, y, attrs))

    def scale_columns(self, x, w, t, xd, wt):
        """x[..., i, j] * w[..., j]: w (real) converted to x's type."""
        wd = xd[:-2] + [xd[-1]]
        if wt != t:
            w = self.line(self.fresh("cv"), t, wd, "convert(%s)" % w)
        dims = ",".join(map(str, list(range(len(xd) - 2)) + [len(xd) - 1]))
        wb = self.line(self.fresh("bc"), t, xd, "broadcast(%s), dimensions={%s}" % (w, dims))
        return self.line(self.fresh("mul"), t, xd, "multiply(%s, %s)" % (x, wb))

    def triangle(self, x, t, dims, lower):
        """The lower (or upper) triangle of x, zero elsewhere, as jnp.tril/triu."""
        n_rows, n_cols = dims[-2], dims[-1]
        rank = len(dims)
        rows = self.line(self.fresh("row"), "s32", dims, "iota(), iota_dimension=%d" % (rank - 2))
        cols = self.line(self.fresh("col"), "s32", dims, "iota(), iota_dimension=%d" % (rank - 1))
        keep = self.line(self.fresh("keep"), "pred", dims,
                         "compare(%s, %s), direction=%s" % (rows, cols, "GE" if lower else "LE"))
        zero = self.line(self.fresh("zero"), t, [], "constant(%s)" % ("(0, 0)" if t in ("c64", "c128") else "0"))
        zeros = self.line(self.fresh("zeros"), t, dims, "broadcast(%s), dimensions={}" % zero)
        del n_rows, n_cols
        return self.line(self.fresh("tri"), t, dims, "select(%s, %s, %s)" % (keep, x, zeros))

    def nan_unless_ok(self, x, info, t, dims, batch):
        """x where info == 0, NaN where not: JAX's check of LAPACK's info."""
        zero = self.line(self.fresh("izero"), "s32", [], "constant(0)")
        zeros = self.line(self.fresh("izeros"), "s32", batch, "broadcast(%s), dimensions={}" % zero)
        ok = self.line(self.fresh("ok"), "pred", batch, "compare(%s, %s), direction=EQ" % (info, zeros))
        okb = self.line(self.fresh("okb"), "pred", dims,
                        "broadcast(%s), dimensions={%s}" % (ok, ",".join(map(str, range(len(batch))))))
        nan = self.line(self.fresh("nan"), t, [], "constant(%s)" % ("(nan, nan)" if t in ("c64", "c128") else "nan"))
        nans = self.line(self.fresh("nans"), t, dims, "broadcast(%s), dimensions={}" % nan)
        return self.line(self.fresh("checked"), t, dims, "select(%s, %s, %s)" % (okb, x, nans))

    def out(self, name, t, dims):
        self.outs.append((name, shape(t, dims)))

    def text(self):
        root = "  ROOT out = (%s) tuple(%s)" % (", ".join(s for _, s in self.outs), ", ".join(n for n, _ in self.outs))
        return "HloModule %s\n\nENTRY main {\n%s\n%s\n}\n" % (self.name, "\n".join(self.lines), root)


def random_matrix(rng, dtype, dims):
    x = rng.standard_normal(dims)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(dims)
    return x.astype(dtype)


def hermitian_from(a, lower):
    """The Hermitian matrix a's lower (or upper) triangle stands for."""
    t = np.tril(a) if lower else np.triu(a)
    d = np.real(np.diagonal(a, axis1=-2, axis2=-1))
    full = t + np.conj(np.swapaxes(t, -1, -2))
    idx = np.arange(a.shape[-1])
    full[..., idx, idx] = d
    return full


def identity_like(dims, dtype):
    return np.broadcast_to(np.eye(dims[-1], dtype=dtype), tuple(dims[:-2]) + (dims[-1], dims[-1])).copy()


# ---- potrf (jnp.linalg.cholesky) ----

def add_cholesky(mod, rng, dtype, batch, n, lower, fail=()):
    t = hlo_type(np.zeros(1, dtype))
    dims = list(batch) + [n, n]
    b = rng.standard_normal(dims) + (1j * rng.standard_normal(dims) if t in ("c64", "c128") else 0)
    spd = b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)
    flat = spd.reshape((-1, n, n))
    for k in fail:  # an indefinite matrix: the leading 2 x 2 block has a negative eigenvalue
        bad = np.diag(np.arange(1.0, n + 1))
        bad[1, 1] = -1.0
        bad[0, 1] = bad[1, 0] = 0.5
        flat[k] = bad
    spd = flat.reshape(dims)
    # The triangle LAPACK does not read holds noise.
    noise = random_matrix(rng, dtype, dims) * 7
    a = np.where(np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool)), spd, noise).astype(dtype)
    p = mod.param(t, dims)
    c = mod.fresh("potrf")
    mod.lines.append(lapack(c, [leaf_result(t, dims), leaf_result("s32", list(batch))], [(p, t, dims)],
                            "lapack_%spotrf_ffi" % LETTER[t], "uplo = %d : ui8" % ord("L" if lower else "U")))
    factor = mod.gte(c, 0, t, dims)
    info = mod.gte(c, 1, "s32", list(batch))
    checked = mod.nan_unless_ok(mod.triangle(factor, t, dims, lower), info, t, dims, list(batch))
    mod.out(checked, t, dims)
    mod.out(info, "s32", list(batch))
    want, infos = [], []
    for k, m in enumerate(hermitian_from(a.astype(np.complex128), lower).reshape((-1, n, n))):
        leading = [np.linalg.eigvalsh(m[:j, :j]).min() for j in range(1, n + 1)]
        bad = [j + 1 for j, v in enumerate(leading) if v <= 0]
        infos.append(bad[0] if bad else 0)
        if bad:
            want.append(np.full((n, n), np.nan * (1 + 1j)))
        else:
            low = np.linalg.cholesky(m)
            want.append(low if lower else np.conj(low.T))
    want = np.array(want).reshape(dims)
    if t in ("f32", "f64"):
        want = want.real
    return a, [want.astype(dtype), np.array(infos, np.int32).reshape(batch)]


@case("lapack_potrf_single_runs_as_jax_cholesky")
def _(rng):
    mod = Module("lapack_potrf_single_runs_as_jax_cholesky")
    a1, g1 = add_cholesky(mod, rng, np.float32, (), 4, True)
    a2, g2 = add_cholesky(mod, rng, np.complex64, (2,), 3, False)
    return Case(mod.text(), [a1, a2], g1 + g2, SINGLE)


@case("lapack_potrf_double_reports_info")
def _(rng):
    mod = Module("lapack_potrf_double_reports_info")
    a1, g1 = add_cholesky(mod, rng, np.float64, (3,), 4, False, fail=(1,))
    a2, g2 = add_cholesky(mod, rng, np.complex128, (2,), 3, True, fail=(0,))
    return Case(mod.text(), [a1, a2], g1 + g2, DOUBLE)


# ---- geqrf + orgqr/ungqr (jnp.linalg.qr) ----

def add_qr(mod, rng, dtype, batch, m, n):
    """geqrf's reflectors and tau (unique by larfg's rule), then q from
    orgqr on the first min(m, n) columns, r = triu, and q r, q^H q."""
    t = hlo_type(np.zeros(1, dtype))
    k = min(m, n)
    dims, tau_dims = list(batch) + [m, n], list(batch) + [k]
    a = random_matrix(rng, dtype, dims)
    p = mod.param(t, dims)
    g = mod.fresh("geqrf")
    mod.lines.append(lapack(g, [leaf_result(t, dims), leaf_result(t, tau_dims)], [(p, t, dims)],
                            "lapack_%sgeqrf_ffi" % LETTER[t], None))
    packed = mod.gte(g, 0, t, dims)
    tau = mod.gte(g, 1, t, tau_dims)
    qdims = list(batch) + [m, k]
    if n > k:  # JAX slices the square part for orgqr
        starts = ",".join("[0:%d]" % d for d in qdims)
        sliced = mod.line(mod.fresh("sl"), t, qdims, "slice(%s), slice={%s}" % (packed, starts))
    else:
        sliced = packed
    orgqr = "lapack_%s%s_ffi" % (LETTER[t], "ungqr" if t in ("c64", "c128") else "orgqr")
    q = mod.fresh("q")
    mod.lines.append(lapack(q, [leaf_result(t, qdims)], [(sliced, t, qdims), (tau, t, tau_dims)], orgqr, None,
                            aliasing="{}: (0, {})"))
    rdims = list(batch) + [k, n]
    if m > k:
        starts = ",".join("[0:%d]" % d for d in rdims)
        rtop = mod.line(mod.fresh("sl"), t, rdims, "slice(%s), slice={%s}" % (packed, starts))
    else:
        rtop = packed
    r = mod.triangle(rtop, t, rdims, lower=False)
    qr = mod.matmul(q, r, t, qdims, rdims)
    qh = mod.transpose_last(q, t, qdims, conjugate=True)
    gram = mod.matmul(qh, q, t, list(batch) + [k, m], qdims)
    mod.out(r, t, rdims)
    mod.out(tau, t, tau_dims)
    mod.out(qr, t, dims)
    mod.out(gram, t, list(batch) + [k, k])
    flat = a.reshape((-1, m, n))
    rs, taus = [], []
    for x in flat:
        h, tau_x = np.linalg.qr(x, mode="raw")  # LAPACK's geqrf, h transposed
        rs.append(np.triu(h.T[:k, :]))
        taus.append(tau_x)
    return a, [np.array(rs).reshape(rdims).astype(dtype), np.array(taus).reshape(tau_dims).astype(dtype),
               a, identity_like(list(batch) + [k, k], dtype)]


@case("lapack_geqrf_orgqr_single_runs_as_jax_qr")
def _(rng):
    mod = Module("lapack_geqrf_orgqr_single_runs_as_jax_qr")
    a1, g1 = add_qr(mod, rng, np.float32, (2,), 5, 3)
    a2, g2 = add_qr(mod, rng, np.complex64, (), 3, 4)
    return Case(mod.text(), [a1, a2], g1 + g2, SINGLE)


@case("lapack_geqrf_orgqr_double_runs_as_jax_qr")
def _(rng):
    mod = Module("lapack_geqrf_orgqr_double_runs_as_jax_qr")
    a1, g1 = add_qr(mod, rng, np.float64, (), 4, 4)
    a2, g2 = add_qr(mod, rng, np.complex128, (2,), 4, 3)
    return Case(mod.text(), [a1, a2], g1 + g2, DOUBLE)


# ---- syevd/heevd (jnp.linalg.eigh) ----

def add_eigh(mod, rng, dtype, batch, n, lower):
    """w directly; v diag(w) v^H (the matrix the named triangle stands for)
    and v^H v (the identity)."""
    t = hlo_type(np.zeros(1, dtype))
    r = REAL[t]
    dims, wdims = list(batch) + [n, n], list(batch) + [n]
    a = random_matrix(rng, dtype, dims)
    p = mod.param(t, dims)
    e = mod.fresh("syevd")
    routine = "heevd" if t in ("c64", "c128") else "syevd"
    mod.lines.append(lapack(e, [leaf_result(t, dims), leaf_result(r, wdims), leaf_result("s32", list(batch))],
                            [(p, t, dims)], "lapack_%s%s_ffi" % (LETTER[t], routine),
                            "mode = %d : ui8, uplo = %d : ui8" % (ord("V"), ord("L" if lower else "U"))))
    v = mod.gte(e, 0, t, dims)
    w = mod.gte(e, 1, r, wdims)
    info = mod.gte(e, 2, "s32", list(batch))
    vh = mod.transpose_last(v, t, dims, conjugate=True)
    rebuilt = mod.matmul(mod.scale_columns(v, w, t, dims, r), vh, t, dims, dims)
    gram = mod.matmul(vh, v, t, dims, dims)
    for name, tt, d in ((w, r, wdims), (rebuilt, t, dims), (gram, t, dims), (info, "s32", list(batch))):
        mod.out(name, tt, d)
    h = hermitian_from(a.astype(np.complex128 if t in ("c64", "c128") else np.float64), lower)
    rdtype = np.float32 if r == "f32" else np.float64
    return a, [np.linalg.eigvalsh(h).astype(rdtype), h.astype(dtype), identity_like(dims, dtype),
               np.zeros(batch, np.int32)]


@case("lapack_syevd_heevd_single_runs_as_jax_eigh")
def _(rng):
    mod = Module("lapack_syevd_heevd_single_runs_as_jax_eigh")
    a1, g1 = add_eigh(mod, rng, np.float32, (2,), 5, True)
    a2, g2 = add_eigh(mod, rng, np.complex64, (), 4, False)
    return Case(mod.text(), [a1, a2], g1 + g2, SINGLE)


@case("lapack_syevd_heevd_double_runs_as_jax_eigh")
def _(rng):
    mod = Module("lapack_syevd_heevd_double_runs_as_jax_eigh")
    a1, g1 = add_eigh(mod, rng, np.float64, (), 6, False)
    a2, g2 = add_eigh(mod, rng, np.complex128, (3,), 3, True)
    return Case(mod.text(), [a1, a2], g1 + g2, DOUBLE)


# ---- gesdd (jnp.linalg.svd) ----

def add_svd(mod, rng, dtype, batch, m, n, mode, rank_deficient=False):
    """s directly; u[:, :k] diag(s) vt[:k] (a itself), u^H u and vt vt^H."""
    t = hlo_type(np.zeros(1, dtype))
    r = REAL[t]
    k = min(m, n)
    dims = list(batch) + [m, n]
    a = random_matrix(rng, dtype, dims)
    if rank_deficient and m >= n:  # a column (or row) repeated: a zero singular value
        a[..., :, -1] = a[..., :, 0]
    elif rank_deficient:
        a[..., -1, :] = a[..., 0, :]
    ucols, vtrows = (m, n) if mode == "A" else (k, k)
    udims, vtdims, sdims = list(batch) + [m, ucols], list(batch) + [vtrows, n], list(batch) + [k]
    p = mod.param(t, dims)
    g = mod.fresh("gesdd")
    mod.lines.append(lapack(g, [leaf_result(t, dims), leaf_result(r, sdims), leaf_result(t, udims),
                                leaf_result(t, vtdims), leaf_result("s32", list(batch))],
                            [(p, t, dims)], "lapack_%sgesdd_ffi" % LETTER[t], "mode = %d : ui8" % ord(mode)))
    s = mod.gte(g, 1, r, sdims)
    u = mod.gte(g, 2, t, udims)
    vt = mod.gte(g, 3, t, vtdims)
    info = mod.gte(g, 4, "s32", list(batch))
    uk, vtk = u, vt
    if ucols > k:
        uk = mod.line(mod.fresh("sl"), t, list(batch) + [m, k], "slice(%s), slice={%s}" % (
            u, ",".join("[0:%d]" % d for d in list(batch) + [m, k])))
    if vtrows > k:
        vtk = mod.line(mod.fresh("sl"), t, list(batch) + [k, n], "slice(%s), slice={%s}" % (
            vt, ",".join("[0:%d]" % d for d in list(batch) + [k, n])))
    us = mod.scale_columns(uk, s, t, list(batch) + [m, k], r)
    rebuilt = mod.matmul(us, vtk, t, list(batch) + [m, k], list(batch) + [k, n])
    uh = mod.transpose_last(u, t, udims, conjugate=True)
    ugram = mod.matmul(uh, u, t, list(batch) + [ucols, m], udims)
    vth = mod.transpose_last(vt, t, vtdims, conjugate=True)
    vgram = mod.matmul(vt, vth, t, vtdims, list(batch) + [n, vtrows])
    for name, tt, d in ((s, r, sdims), (rebuilt, t, dims), (ugram, t, list(batch) + [ucols, ucols]),
                        (vgram, t, list(batch) + [vtrows, vtrows]), (info, "s32", list(batch))):
        mod.out(name, tt, d)
    rdtype = np.float32 if r == "f32" else np.float64
    sv = np.linalg.svd(a.astype(np.complex128 if t in ("c64", "c128") else np.float64), compute_uv=False)
    if rank_deficient:
        sv[..., -1] = 0  # exactly, as the duplicated column makes it
    return a, [sv.astype(rdtype), a, identity_like(list(batch) + [ucols, ucols], dtype),
               identity_like(list(batch) + [vtrows, vtrows], dtype), np.zeros(batch, np.int32)]


@case("lapack_gesdd_single_runs_as_jax_svd")
def _(rng):
    mod = Module("lapack_gesdd_single_runs_as_jax_svd")
    a1, g1 = add_svd(mod, rng, np.float32, (2,), 4, 3, "A")
    a2, g2 = add_svd(mod, rng, np.complex64, (), 3, 5, "S")
    return Case(mod.text(), [a1, a2], g1 + g2, SINGLE)


@case("lapack_gesdd_double_runs_as_jax_svd")
def _(rng):
    mod = Module("lapack_gesdd_double_runs_as_jax_svd")
    a1, g1 = add_svd(mod, rng, np.float64, (), 3, 5, "A", rank_deficient=True)
    a2, g2 = add_svd(mod, rng, np.complex128, (2,), 5, 3, "A")
    return Case(mod.text(), [a1, a2], g1 + g2, DOUBLE)


# ---- trsm (jax.scipy.linalg.solve_triangular) ----

def add_trsm(mod, rng, dtype, batch, m, cols, side, uplo, trans, diag):
    t = hlo_type(np.zeros(1, dtype))
    adims = list(batch) + [m, m]
    bdims = list(batch) + ([m, cols] if side == "L" else [cols, m])
    a = random_matrix(rng, dtype, adims)
    idx = np.arange(m)
    a[..., idx, idx] += 4  # well conditioned
    b = random_matrix(rng, dtype, bdims)
    pa, pb = mod.param(t, adims), mod.param(t, bdims)
    x = mod.fresh("trsm")
    config = "diag = %d : ui8, side = %d : ui8, trans_x = %d : ui8, uplo = %d : ui8" % (
        ord(diag), ord(side), ord(trans), ord(uplo))
    mod.lines.append(lapack(x, [leaf_result(t, bdims)], [(pa, t, adims), (pb, t, bdims)],
                            "lapack_%strsm_ffi" % LETTER[t], config, aliasing="{}: (1, {})"))
    mod.out(x, t, bdims)
    tri = np.tril(a) if uplo == "L" else np.triu(a)
    if diag == "U":
        tri[..., idx, idx] = 1
    op = {"N": tri, "T": np.swapaxes(tri, -1, -2), "C": np.conj(np.swapaxes(tri, -1, -2))}[trans]
    if side == "L":
        want = np.linalg.solve(op.astype(np.complex128), b.astype(np.complex128))
    else:  # x op = b  <=>  op^T x^T = b^T
        want = np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2).astype(np.complex128),
                                           np.swapaxes(b, -1, -2).astype(np.complex128)), -1, -2)
    if t in ("f32", "f64"):
        want = want.real
    return [a, b], [want.astype(dtype)]


@case("lapack_trsm_single_runs_as_jax_solve_triangular")
def _(rng):
    mod = Module("lapack_trsm_single_runs_as_jax_solve_triangular")
    i1, g1 = add_trsm(mod, rng, np.float32, (), 4, 3, "L", "L", "N", "N")
    i2, g2 = add_trsm(mod, rng, np.float32, (2,), 3, 2, "R", "U", "T", "U")
    i3, g3 = add_trsm(mod, rng, np.complex64, (), 3, 4, "L", "U", "C", "N")
    return Case(mod.text(), i1 + i2 + i3, g1 + g2 + g3, SINGLE)


@case("lapack_trsm_double_runs_as_jax_solve_triangular")
def _(rng):
    mod = Module("lapack_trsm_double_runs_as_jax_solve_triangular")
    i1, g1 = add_trsm(mod, rng, np.float64, (2,), 3, 3, "L", "U", "T", "N")
    i2, g2 = add_trsm(mod, rng, np.complex128, (2,), 4, 2, "R", "L", "C", "N")
    i3, g3 = add_trsm(mod, rng, np.complex128, (), 3, 2, "L", "L", "N", "U")
    return Case(mod.text(), i1 + i2 + i3, g1 + g2 + g3, DOUBLE)


# ---- the other forms JAX has emitted ----

@case("lapack_jax_2024_forms_workspaces_alpha_and_no_vectors")
def _(rng):
    """JAX's 2024 forms: syevd and gesdd with workspace leaves after info
    (their contents are LAPACK's scratch; nothing reads them), trsm with a
    third operand alpha (x = alpha op(a)^-1 b); and mode 'N' (eigenvalues,
    singular values only: u and vt keep their shapes for full_matrices);
    a 1 x 1 potrf and an empty batch."""
    mod = Module("lapack_jax_2024_forms_workspaces_alpha_and_no_vectors")
    n, m = 3, 4
    a = random_matrix(rng, np.float64, [n, n])
    pa = mod.param("f64", [n, n])
    e = mod.fresh("syevd")
    mod.lines.append(lapack(e, [leaf_result("f64", [n, n]), leaf_result("f64", [n]), leaf_result("s32", []),
                                leaf_result("f64", [37]), leaf_result("s32", [18])], [(pa, "f64", [n, n])],
                            "lapack_dsyevd_ffi", "mode = %d : ui8, uplo = %d : ui8" % (ord("N"), ord("L"))))
    mod.out(mod.gte(e, 1, "f64", [n]), "f64", [n])
    mod.out(mod.gte(e, 2, "s32", []), "s32", [])
    g_in = random_matrix(rng, np.complex64, [m, n])
    pg = mod.param("c64", [m, n])
    g = mod.fresh("gesdd")
    mod.lines.append(lapack(g, [leaf_result("c64", [m, n]), leaf_result("f32", [n]), leaf_result("c64", [m, m]),
                                leaf_result("c64", [n, n]), leaf_result("s32", []), leaf_result("f32", [40]),
                                leaf_result("s32", [24]), leaf_result("c64", [30])], [(pg, "c64", [m, n])],
                            "lapack_cgesdd_ffi", "mode = %d : ui8" % ord("N")))
    mod.out(mod.gte(g, 1, "f32", [n]), "f32", [n])
    mod.out(mod.gte(g, 4, "s32", []), "s32", [])
    t = random_matrix(rng, np.float64, [n, n]) + 4 * np.eye(n)
    b = random_matrix(rng, np.float64, [n, 2])
    pt, pb = mod.param("f64", [n, n]), mod.param("f64", [n, 2])
    alpha = mod.line(mod.fresh("alpha"), "f64", [], "constant(2.5)")
    x = mod.fresh("trsm")
    mod.lines.append(lapack(x, [leaf_result("f64", [n, 2])], [(pt, "f64", [n, n]), (pb, "f64", [n, 2]),
                                                            (alpha, "f64", [])],
                            "lapack_dtrsm_ffi", "diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8",
                            aliasing="{}: (1, {})"))
    mod.out(x, "f64", [n, 2])
    one = np.array([[6.25]], np.float32)
    p1 = mod.param("f32", [1, 1])
    c1 = mod.fresh("potrf")
    mod.lines.append(lapack(c1, [leaf_result("f32", [1, 1]), leaf_result("s32", [])], [(p1, "f32", [1, 1])],
                            "lapack_spotrf_ffi", "uplo = 76 : ui8"))
    mod.out(mod.gte(c1, 0, "f32", [1, 1]), "f32", [1, 1])
    empty = np.zeros((0, 2, 2), np.complex128)
    p0 = mod.param("c128", [0, 2, 2])
    c0 = mod.fresh("potrf")
    mod.lines.append(lapack(c0, [leaf_result("c128", [0, 2, 2]), leaf_result("s32", [0])], [(p0, "c128", [0, 2, 2])],
                            "lapack_zpotrf_ffi", "uplo = 76 : ui8"))
    mod.out(mod.gte(c0, 0, "c128", [0, 2, 2]), "c128", [0, 2, 2])
    mod.out(mod.gte(c0, 1, "s32", [0]), "s32", [0])
    goldens = [np.linalg.eigvalsh(a, UPLO="L"), np.int32(0),
               np.linalg.svd(g_in.astype(np.complex128), compute_uv=False).astype(np.float32), np.int32(0),
               2.5 * np.linalg.solve(np.triu(t), b), np.array([[2.5]], np.float32), empty, np.zeros(0, np.int32)]
    return Case(mod.text(), [a, g_in, t, b, one, empty], goldens, SINGLE)


@case("lapack_trsm_real_runs_on_every_backend")
def _(rng):
    """Real trsm alone (the GPU backend runs it as a triangular-solve):
    every side, triangle, op ('C' is 'T' for reals) and diagonal."""
    mod = Module("lapack_trsm_real_runs_on_every_backend")
    ins, outs = [], []
    forms = [(np.float32, (2,), "L", "U", "N", "U"), (np.float32, (), "R", "L", "C", "N"),
             (np.float64, (), "L", "L", "T", "N"), (np.float64, (3,), "R", "U", "N", "U")]
    for dtype, batch, side, uplo, trans, diag in forms:
        i, g = add_trsm(mod, rng, dtype, batch, 3, 2, side, uplo, trans, diag)
        ins += i
        outs += g
    return Case(mod.text(), ins, outs, SINGLE)
