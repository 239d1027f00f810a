"""Corpus cases: arrays in non-default layouts passed on unchanged, through
the ops that forward a value (tuple, get-tuple-element, opt-barrier, the
collectives of one replica, copy-start/copy-done) and across the
boundaries of called computations (while, conditional, call), and through
scatter. A layout says where the elements lie in memory, never what they
are: every golden here is the logical array, whatever the layouts the text
names on the way (text without a layout names the default one)."""
import numpy as np

from corpus_common import Case, case
import corpus_reference as ref

ADD_S32 = """add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}"""


@case("layouts_through_while")
def _(rng):
    p = rng.integers(-50, 50, (2, 3)).astype(np.int32)
    # The loop state is written without layouts (the default, row-major)
    # while the parameter is column-major: the loop receives p's bytes and
    # must read them as p.
    hlo = """HloModule layouts_through_while

cond {
  s = (s32[], s32[2,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  ROOT lt = pred[] compare(i, one), direction=LT
}

body {
  s = (s32[], s32[2,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = s32[2,3] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  x2 = s32[2,3] add(x, x)
  ROOT t = (s32[], s32[2,3]) tuple(i2, x2)
}

ENTRY main {
  p = s32[2,3]{0,1} parameter(0)
  z = s32[] constant(0)
  t = (s32[], s32[2,3]) tuple(z, p)
  w = (s32[], s32[2,3]) while(t), condition=cond, body=body
  ROOT r = s32[2,3] get-tuple-element(w), index=1
}"""
    return Case(hlo, [p], [2 * p])


@case("layouts_through_while_state")
def _(rng):
    q = rng.integers(-50, 50, (3, 4, 2)).astype(np.int32)
    # A {1,2,0} array carried in a loop state that names it {0,1,2} in the
    # body's parameter, {1,2,0} in its root and {2,1,0} in the condition
    # and the while itself.
    hlo = """HloModule layouts_through_while_state

cond {
  s = (s32[], s32[3,4,2]{2,1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  two = s32[] constant(2)
  ROOT lt = pred[] compare(i, two), direction=LT
}

body {
  s = (s32[], s32[3,4,2]{0,1,2}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = s32[3,4,2]{0,1,2} get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  three = s32[] constant(3)
  threes = s32[3,4,2]{1,2,0} broadcast(three), dimensions={}
  x2 = s32[3,4,2]{1,2,0} add(x, threes)
  ROOT t = (s32[], s32[3,4,2]{1,2,0}) tuple(i2, x2)
}

ENTRY main {
  q = s32[3,4,2]{1,2,0} parameter(0)
  z = s32[] constant(0)
  t = (s32[], s32[3,4,2]{1,2,0}) tuple(z, q)
  w = (s32[], s32[3,4,2]{2,1,0}) while(t), condition=cond, body=body
  ROOT r = s32[3,4,2]{0,2,1} get-tuple-element(w), index=1
}"""
    return Case(hlo, [q], [q + 6])


@case("layouts_through_opt_barrier")
def _(rng):
    p = rng.integers(-50, 50, (2, 3)).astype(np.int32)
    hlo = """HloModule layouts_through_opt_barrier

ENTRY main {
  p = s32[2,3]{0,1} parameter(0)
  t = (s32[2,3]) tuple(p)
  b = (s32[2,3]) opt-barrier(t)
  g = s32[2,3] get-tuple-element(b), index=0
  t2 = (s32[2,3]{0,1}) tuple(p)
  b2 = (s32[2,3]{0,1}) opt-barrier(t2)
  g2 = s32[2,3]{1,0} get-tuple-element(b2), index=0
  ROOT out = (s32[2,3], s32[2,3]{1,0}, s32[2,3]{0,1}) tuple(g, g2, p)
}"""
    return Case(hlo, [p], [p, p, p])


@case("layouts_through_calls")
def _(rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((2, 3, 4)).astype(np.float32)
    # call, conditional (both branches, one chosen by a parameter), tuple
    # and get-tuple-element, copy-start/copy-done, the collectives of one
    # replica and an async pair wrapping a computation, each receiving an
    # array in another layout than the one its shape names.
    hlo = """HloModule layouts_through_calls

%s

twice {
  a = f32[3,4] parameter(0)
  ROOT d = f32[3,4]{0,1} add(a, a)
}

negate_branch {
  a = (f32[3,4], f32[2,3,4]{0,1,2}) parameter(0)
  x = f32[3,4] get-tuple-element(a), index=0
  ROOT n = f32[3,4]{0,1} negate(x)
}

keep_branch {
  a = (f32[3,4]{0,1}, f32[2,3,4]) parameter(0)
  ROOT x = f32[3,4]{0,1} get-tuple-element(a), index=0
}

wrapped_negate {
  a = f32[3,4] parameter(0)
  ROOT n = f32[3,4]{0,1} negate(a)
}

ENTRY main {
  x = f32[3,4]{0,1} parameter(0)
  y = f32[2,3,4]{1,2,0} parameter(1)
  which = pred[] parameter(2)
  c = f32[3,4]{1,0} call(x), to_apply=twice
  t = (f32[3,4]{1,0}, f32[2,3,4]) tuple(x, y)
  k = f32[3,4] conditional(which, t, t), true_computation=negate_branch, false_computation=keep_branch
  cs = (f32[2,3,4], f32[2,3,4]{0,2,1}, u32[]) copy-start(y)
  cd = f32[2,3,4]{2,0,1} copy-done(cs)
  ar = f32[2,3,4] all-reduce(y), replica_groups={}, to_apply=add_f32
  cp = f32[3,4] collective-permute(x), source_target_pairs={{0,0}}
  as = ((f32[3,4]), f32[3,4], s32[]) async-start(x), calls=wrapped_negate
  ad = f32[3,4]{0,1} async-done(as)
  ROOT out = (f32[3,4], f32[3,4]{0,1}, f32[2,3,4]{0,1,2}, f32[2,3,4], f32[3,4], f32[3,4]) tuple(c, k, cd, ar, cp, ad)
}""" % """add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}"""
    which = np.array(True)
    return Case(hlo, [x, y, which], [x + x, -x, y, y, x, -x])


@case("all_reduce_non_default_layout")
def _(rng):
    p = rng.integers(-50, 50, (2, 3)).astype(np.int32)
    q = rng.integers(-50, 50, (4, 2, 3)).astype(np.int32)
    hlo = """HloModule all_reduce_non_default_layout

%s

ENTRY main {
  p = s32[2,3]{0,1} parameter(0)
  q = s32[4,2,3]{1,2,0} parameter(1)
  ar = s32[2,3] all-reduce(p), replica_groups={}, to_apply=add_s32
  ar2 = s32[2,3]{0,1} all-reduce(p), replica_groups={{0}}, to_apply=add_s32
  ar3 = (s32[2,3], s32[4,2,3]{0,2,1}) all-reduce(p, q), replica_groups={}, to_apply=add_s32
  ROOT out = (s32[2,3], s32[2,3]{0,1}, (s32[2,3], s32[4,2,3]{0,2,1})) tuple(ar, ar2, ar3)
}""" % ADD_S32
    return Case(hlo, [p, q], [p, p, p, q])


@case("scatter_non_default_layout")
def _(rng):
    p = rng.integers(-50, 50, (4, 3)).astype(np.int32)
    idx = np.array([[2], [0], [2]], np.int32)
    upd = rng.integers(-50, 50, (3, 3)).astype(np.int32)
    hlo = """HloModule scatter_non_default_layout

%s

ENTRY main {
  p = s32[4,3]{0,1} parameter(0)
  i = s32[3,1] parameter(1)
  u = s32[3,3]{0,1} parameter(2)
  same = s32[4,3]{0,1} scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_s32
  mixed = s32[4,3] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_s32
  ROOT out = (s32[4,3]{0,1}, s32[4,3]) tuple(same, mixed)
}""" % ADD_S32
    want = ref.scatter(p, idx, upd, [1], [0], [0], 1, lambda a, b: a + b)
    return Case(hlo, [p, idx, upd], [want, want])


@case("sort_and_linalg_non_default_layout")
def _(rng):
    keys = rng.standard_normal((3, 5)).astype(np.float32)
    m = rng.standard_normal((4, 4))
    a = (m @ m.T + 4 * np.eye(4)).astype(np.float32)
    t = rng.standard_normal((4, 4)) * 0.3
    t[np.diag_indices(4)] = rng.uniform(2, 3, 4)
    t = t.astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    # Ops a backend computes in row-major order only, on column-major
    # arrays: a two-operand sort (values and their column), cholesky and
    # triangular-solve.
    hlo = """HloModule sort_and_linalg_non_default_layout

less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ai = s32[] parameter(2)
  bi = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ENTRY main {
  keys = f32[3,5]{0,1} parameter(0)
  a = f32[4,4]{0,1} parameter(1)
  t = f32[4,4]{0,1} parameter(2)
  b = f32[4,3]{0,1} parameter(3)
  cols = s32[3,5]{0,1} iota(), iota_dimension=1
  sorted = (f32[3,5]{0,1}, s32[3,5]) sort(keys, cols), dimensions={1}, is_stable=true, to_apply=less
  l = f32[4,4]{0,1} cholesky(a), lower=true
  rows = s32[4,4] iota(), iota_dimension=0
  columns = s32[4,4] iota(), iota_dimension=1
  in_lower = pred[4,4] compare(rows, columns), direction=GE
  zero = f32[] constant(0)
  zeros = f32[4,4] broadcast(zero), dimensions={}
  l_masked = f32[4,4] select(in_lower, l, zeros)
  x = f32[4,3] triangular-solve(t, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  ROOT out = ((f32[3,5]{0,1}, s32[3,5]), f32[4,4], f32[4,3]{0,1}) tuple(sorted, l_masked, x)
}"""
    order = np.argsort(keys, axis=1, kind="stable").astype(np.int32)
    lo = np.linalg.cholesky(a.astype(np.float64)).astype(np.float32)
    x = ref.triangular_solve(t, b, True, True, False, False)
    return Case(hlo, [keys, a, t, b], [np.take_along_axis(keys, order, 1), order, lo, x], tol=(1e-4, 1e-5))
