"""Corpus cases for the forms of HLO text XLA accepts beyond the fully
written one: modules without a header, instructions without a shape,
instructions nested as operands, order= on compare, bitcasts that change
the element type, and tuple parameters. Goldens are NumPy's."""
import numpy as np

from corpus_common import Case, case


@case("syntax_headerless_module")
def _(rng):
    # No HloModule line and no ENTRY marker: the last computation is the entry.
    x = rng.standard_normal((3, 5)).astype(np.float32)
    hlo = """// XLA accepts a module without its header line.
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

main {
  x = f32[3,5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={1}, to_apply=add
}"""
    return Case(hlo, [x], [x.sum(axis=1, dtype=np.float32)], tol=(1e-5, 1e-6))


@case("syntax_shapes_inferred")
def _(rng):
    # Shapes left out wherever shape inference can find them.
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal((3, 4)).astype(np.float32)
    hlo = """HloModule syntax_shapes_inferred

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = maximum(a, b)
}

ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[3,4] parameter(1)
  d = dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = transpose(d), dimensions={1,0}
  n = negate(t)
  lt = compare(t, n), direction=LT
  s = select(lt, t, n)
  lo = f32[] constant(-inf)
  r = reduce(s, lo), dimensions={1}, to_apply=max
  c = concatenate(r, r), dimensions={0}
  pair = tuple(c, s)
  ROOT g = get-tuple-element(pair), index=0
}"""
    d = (x.astype(np.float64) @ y.astype(np.float64)).astype(np.float32)
    t = d.T
    s = np.where(t < -t, t, -t)
    r = s.max(axis=1)
    return Case(hlo, [x, y], [np.concatenate([r, r])], tol=(1e-5, 1e-6))


@case("syntax_nested_operands")
def _(rng):
    # Instructions written inside another's operand list, without names,
    # with and without shapes, one of them with an attribute of its own.
    a = rng.standard_normal(4).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    m = rng.standard_normal((2, 4)).astype(np.float32)
    hlo = """HloModule syntax_nested_operands

ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  m = f32[2,4] parameter(2)
  sum = add(f32[4] multiply(a, b), negate(a))
  row = add(m, f32[2,4] broadcast(sum), dimensions={1})
  ROOT out = tuple(sum, row, multiply(f32[] constant(2), f32[] constant(3)))
}"""
    s = a * b + (-a)
    return Case(hlo, [a, b, m], [s, m + s[None, :], np.float32(6)])


def total_order_key(x):
    """XLA's total order of f32: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN,
    as an integer key of the bits (negative values have their order flipped)."""
    bits = np.asarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)


@case("syntax_compare_order")
def _(rng):
    # order=TOTAL orders -0 before +0 and NaN after +inf; PARTIAL is IEEE.
    x = np.array([-0.0, 0.0, np.nan, 1.0, -np.inf, np.nan, 2.0, -1.0], np.float32)
    y = np.array([0.0, -0.0, 1.0, np.nan, -np.inf, np.inf, 2.0, np.nan], np.float32)
    hlo = """HloModule syntax_compare_order

ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  total_lt = pred[8] compare(x, y), direction=LT, order=TOTAL
  total_eq = pred[8] compare(x, y), direction=EQ, order=TOTAL
  partial_lt = pred[8] compare(x, y), direction=LT, order=PARTIAL
  ROOT out = (pred[8], pred[8], pred[8]) tuple(total_lt, total_eq, partial_lt)
}"""
    kx, ky = total_order_key(x), total_order_key(y)
    with np.errstate(invalid="ignore"):
        partial = x < y
    return Case(hlo, [x, y], [kx < ky, kx == ky, partial])


@case("syntax_bitcast_changes_type")
def _(rng):
    # bitcast to another element type of the same byte count reads the same
    # bytes: per element (f32 -> s32), split (f32 -> u16 pairs, low half
    # first), and through layouts (the transpose below is a layout change
    # only, so its bitcast sees x's bytes in x's row-major order).
    x = rng.standard_normal((2, 3)).astype(np.float32)
    hlo = """HloModule syntax_bitcast_changes_type

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  same = s32[2,3]{1,0} bitcast(x)
  halves = u16[12]{0} bitcast(x)
  t = f32[3,2]{0,1} transpose(x), dimensions={1,0}
  flat = u32[6]{0} bitcast(t)
  ROOT out = (s32[2,3], u16[12], u32[6]) tuple(same, halves, flat)
}"""
    return Case(hlo, [x], [x.view(np.int32), x.reshape(-1).view(np.uint16), x.reshape(-1).view(np.uint32)])


@case("syntax_tuple_parameter")
def _(rng):
    # A tuple parameter takes its leaves depth first, one input file each.
    a = rng.standard_normal(3).astype(np.float32)
    k = rng.integers(-5, 5, size=2).astype(np.int32)
    b = rng.standard_normal(3).astype(np.float32)
    hlo = """HloModule syntax_tuple_parameter

ENTRY main {
  p = ((f32[3], s32[2]), f32[3]) parameter(0)
  inner = (f32[3], s32[2]) get-tuple-element(p), index=0
  a = f32[3] get-tuple-element(inner), index=0
  k = s32[2] get-tuple-element(inner), index=1
  b = f32[3] get-tuple-element(p), index=1
  s = f32[3] add(a, b)
  twice = s32[2] add(k, k)
  ROOT out = (f32[3], s32[2]) tuple(s, twice)
}"""
    return Case(hlo, [a, k, b], [a + b, k + k])


@case("jax_argsort_total_order")
def _(rng):
    # jnp.sort(x) and jnp.argsort(x) as JAX lowers them: one stable sort of
    # (x, iota) whose comparator compares with order=TOTAL, so NaNs sort last
    # and -0 before +0. The input holds NaNs, both zeros and repeats.
    x = rng.standard_normal(16).astype(np.float32)
    x[[2, 9]] = np.nan
    x[4], x[11] = np.float32(-0.0), np.float32(0.0)
    x[6] = x[13] = np.float32(1.5)
    hlo = """HloModule jit_sort_and_argsort, entry_computation_layout={(f32[16]{0})->(f32[16]{0}, s32[16]{0})}

region_0.4 {
  Arg_0.5 = f32[] parameter(0)
  Arg_1.6 = f32[] parameter(1)
  Arg_2.7 = s32[] parameter(2)
  Arg_3.8 = s32[] parameter(3)
  ROOT compare.9 = pred[] compare(Arg_0.5, Arg_1.6), direction=LT, order=TOTAL, metadata={op_name="jit(sort_and_argsort)/jit(main)/sort" source_file="argsort.py" source_line=4}
}

ENTRY main.12 {
  Arg_0.1 = f32[16]{0} parameter(0)
  iota.2 = s32[16]{0} iota(), iota_dimension=0, metadata={op_name="jit(sort_and_argsort)/jit(main)/iota" source_file="argsort.py" source_line=4}
  sort.10 = (f32[16]{0}, s32[16]{0}) sort(Arg_0.1, iota.2), dimensions={0}, is_stable=true, to_apply=region_0.4, metadata={op_name="jit(sort_and_argsort)/jit(main)/sort" source_file="argsort.py" source_line=4}
  get-tuple-element.11 = f32[16]{0} get-tuple-element(sort.10), index=0
  get-tuple-element.12 = s32[16]{0} get-tuple-element(sort.10), index=1
  ROOT tuple.13 = (f32[16]{0}, s32[16]{0}) tuple(get-tuple-element.11, get-tuple-element.12)
}"""
    # Total order on f32 bits: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
    bits = x.view(np.int32).astype(np.int64)
    key = np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)
    order = np.argsort(key, kind="stable").astype(np.int32)
    return Case(hlo, [x], [x[order], order], tol=(0, 0))
