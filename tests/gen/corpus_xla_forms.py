"""Corpus cases: modules in the forms XLA's optimizer writes, which axle's
own fusion pass never makes. Written for this corpus in the shapes
`jax.jit(f).lower(...).compile().as_text()` gives (old-style `%` names,
layouts on every shape):

- fusions whose root is a variadic reduce (argmax and argmin over a
  (value, iota) pair, as kInput and kLoop fusions), or a tuple holding one;
- a sort whose TOTALORDER comparator XLA rewrote into integer compares over
  an element-type-changing `bitcast` (f32 -> s32, f64 -> s64);
- the fusions XLA wraps around a single op (`wrapped_reduce-window`,
  `wrapped_scatter`) and its `kCustom` fusions (`__ynn_fusion` around a dot
  or a reduce).
"""
import numpy as np

from corpus_common import Case, case
import corpus_reference as ref

# JAX's argmax reducer: the larger value wins, NaN wins over anything, and
# on ties the lower index.
ARGMAX = """%region_argmax (Arg_0: f32[], Arg_1: s32[], Arg_2: f32[], Arg_3: s32[]) -> (f32[], s32[]) {
  %Arg_0 = f32[] parameter(0)
  %Arg_1 = s32[] parameter(1)
  %Arg_2 = f32[] parameter(2)
  %Arg_3 = s32[] parameter(3)
  %compare.0 = pred[] compare(f32[] %Arg_0, f32[] %Arg_2), direction=GT
  %compare.1 = pred[] compare(f32[] %Arg_0, f32[] %Arg_0), direction=NE
  %or.0 = pred[] or(pred[] %compare.0, pred[] %compare.1)
  %compare.2 = pred[] compare(f32[] %Arg_0, f32[] %Arg_2), direction=EQ
  %compare.3 = pred[] compare(s32[] %Arg_1, s32[] %Arg_3), direction=LT
  %and.0 = pred[] and(pred[] %compare.2, pred[] %compare.3)
  %or.1 = pred[] or(pred[] %or.0, pred[] %and.0)
  %select.0 = f32[] select(pred[] %or.1, f32[] %Arg_0, f32[] %Arg_2)
  %select.1 = s32[] select(pred[] %or.1, s32[] %Arg_1, s32[] %Arg_3)
  ROOT %tuple.0 = (f32[], s32[]) tuple(f32[] %select.0, s32[] %select.1)
}"""

ARGMIN = ARGMAX.replace("argmax", "argmin").replace("direction=GT", "direction=LT")

ADD = """%add_f32 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(f32[] %x, f32[] %y)
}"""

MAX = """%max_f32 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %maximum = f32[] maximum(f32[] %x, f32[] %y)
}"""


def argmax_reference(x, axis):
    """JAX's argmax: the first NaN, else the first maximum."""
    nan = np.isnan(x)
    idx = np.where(nan.any(axis=axis), np.argmax(nan, axis=axis), np.argmax(np.where(nan, -np.inf, x), axis=axis))
    return np.take_along_axis(x, np.expand_dims(idx, axis), axis).squeeze(axis), idx.astype(np.int32)


def argmin_reference(x, axis):
    nan = np.isnan(x)
    idx = np.where(nan.any(axis=axis), np.argmax(nan, axis=axis), np.argmin(np.where(nan, np.inf, x), axis=axis))
    return np.take_along_axis(x, np.expand_dims(idx, axis), axis).squeeze(axis), idx.astype(np.int32)


def ties_and_nans(rng, shape):
    # small integers so that rows have ties (the lower index must win),
    # and a NaN in one row (it wins over every number)
    x = rng.integers(0, 4, shape).astype(np.float32)
    x[1, 2] = np.nan
    return x


@case("xla_fusion_argmax_variadic_root")
def _(rng):
    x = ties_and_nans(rng, (5, 7))
    hlo = """HloModule jit_argmax, entry_computation_layout={(f32[5,7]{1,0})->(f32[5]{0}, s32[5]{0})}

%s

%%fused_reduce (param_0.1: f32[5,7]) -> (f32[5], s32[5]) {
  %%param_0.1 = f32[5,7]{1,0} parameter(0)
  %%iota.0 = s32[5,7]{1,0} iota(), iota_dimension=1
  %%constant.0 = f32[] constant(-inf)
  %%constant.1 = s32[] constant(0)
  ROOT %%reduce.0 = (f32[5]{0}, s32[5]{0}) reduce(f32[5,7]{1,0} %%param_0.1, s32[5,7]{1,0} %%iota.0, f32[] %%constant.0, s32[] %%constant.1), dimensions={1}, to_apply=%%region_argmax
}

ENTRY %%main.2 (x.1: f32[5,7]) -> (f32[5], s32[5]) {
  %%x.1 = f32[5,7]{1,0} parameter(0)
  %%reduce_fusion = (f32[5]{0}, s32[5]{0}) fusion(f32[5,7]{1,0} %%x.1), kind=kInput, calls=%%fused_reduce
  %%get-tuple-element.0 = f32[5]{0} get-tuple-element((f32[5]{0}, s32[5]{0}) %%reduce_fusion), index=0
  %%get-tuple-element.1 = s32[5]{0} get-tuple-element((f32[5]{0}, s32[5]{0}) %%reduce_fusion), index=1
  ROOT %%tuple.1 = (f32[5]{0}, s32[5]{0}) tuple(f32[5]{0} %%get-tuple-element.0, s32[5]{0} %%get-tuple-element.1)
}""" % ARGMAX
    values, indices = argmax_reference(x, 1)
    return Case(hlo, [x], [values, indices])


@case("xla_fusion_argmin_loop_variadic_root")
def _(rng):
    # argmin over dimension 0 of a negated input, in a kLoop fusion whose
    # root is the variadic reduce; the entry returns the fusion itself
    x = ties_and_nans(rng, (6, 4))
    hlo = """HloModule jit_argmin, entry_computation_layout={(f32[6,4]{1,0})->(f32[4]{0}, s32[4]{0})}

%s

%%fused_computation (param_0.2: f32[6,4]) -> (f32[4], s32[4]) {
  %%param_0.2 = f32[6,4]{1,0} parameter(0)
  %%negate.0 = f32[6,4]{1,0} negate(f32[6,4]{1,0} %%param_0.2)
  %%iota.1 = s32[6,4]{1,0} iota(), iota_dimension=0
  %%constant.2 = f32[] constant(inf)
  %%constant.3 = s32[] constant(0)
  ROOT %%reduce.1 = (f32[4]{0}, s32[4]{0}) reduce(f32[6,4]{1,0} %%negate.0, s32[6,4]{1,0} %%iota.1, f32[] %%constant.2, s32[] %%constant.3), dimensions={0}, to_apply=%%region_argmin
}

ENTRY %%main.3 (x.2: f32[6,4]) -> (f32[4], s32[4]) {
  %%x.2 = f32[6,4]{1,0} parameter(0)
  ROOT %%loop_reduce_fusion = (f32[4]{0}, s32[4]{0}) fusion(f32[6,4]{1,0} %%x.2), kind=kLoop, calls=%%fused_computation
}""" % ARGMIN
    values, indices = argmin_reference(-x, 0)
    return Case(hlo, [x], [values, indices])


@case("xla_fusion_variadic_reduce_in_tuple_root")
def _(rng):
    # a multi-output fusion: the argmax pair and a sum over the same rows,
    # with an elementwise consumer of the sum; the tuple lists the variadic
    # reduce's elements through get-tuple-element
    x = ties_and_nans(rng, (4, 9))
    x[1, 2] = 3.0  # the sum stays finite
    hlo = """HloModule jit_argmax_and_sum, entry_computation_layout={(f32[4,9]{1,0})->(s32[4]{0}, f32[4]{0}, f32[4]{0})}

%s

%s

%%fused_multi (param_0.3: f32[4,9]) -> (f32[4], s32[4], f32[4]) {
  %%param_0.3 = f32[4,9]{1,0} parameter(0)
  %%iota.2 = s32[4,9]{1,0} iota(), iota_dimension=1
  %%constant.4 = f32[] constant(-inf)
  %%constant.5 = s32[] constant(0)
  %%reduce.2 = (f32[4]{0}, s32[4]{0}) reduce(f32[4,9]{1,0} %%param_0.3, s32[4,9]{1,0} %%iota.2, f32[] %%constant.4, s32[] %%constant.5), dimensions={1}, to_apply=%%region_argmax
  %%get-tuple-element.2 = f32[4]{0} get-tuple-element((f32[4]{0}, s32[4]{0}) %%reduce.2), index=0
  %%get-tuple-element.3 = s32[4]{0} get-tuple-element((f32[4]{0}, s32[4]{0}) %%reduce.2), index=1
  %%constant.6 = f32[] constant(0)
  %%reduce.3 = f32[4]{0} reduce(f32[4,9]{1,0} %%param_0.3, f32[] %%constant.6), dimensions={1}, to_apply=%%add_f32
  %%constant.7 = f32[] constant(2)
  %%broadcast.0 = f32[4]{0} broadcast(f32[] %%constant.7), dimensions={}
  %%multiply.0 = f32[4]{0} multiply(f32[4]{0} %%reduce.3, f32[4]{0} %%broadcast.0)
  ROOT %%tuple.2 = (f32[4]{0}, s32[4]{0}, f32[4]{0}) tuple(f32[4]{0} %%get-tuple-element.2, s32[4]{0} %%get-tuple-element.3, f32[4]{0} %%multiply.0)
}

ENTRY %%main.4 (x.3: f32[4,9]) -> (s32[4], f32[4], f32[4]) {
  %%x.3 = f32[4,9]{1,0} parameter(0)
  %%input_fusion = (f32[4]{0}, s32[4]{0}, f32[4]{0}) fusion(f32[4,9]{1,0} %%x.3), kind=kInput, calls=%%fused_multi
  %%get-tuple-element.4 = f32[4]{0} get-tuple-element((f32[4]{0}, s32[4]{0}, f32[4]{0}) %%input_fusion), index=0
  %%get-tuple-element.5 = s32[4]{0} get-tuple-element((f32[4]{0}, s32[4]{0}, f32[4]{0}) %%input_fusion), index=1
  %%get-tuple-element.6 = f32[4]{0} get-tuple-element((f32[4]{0}, s32[4]{0}, f32[4]{0}) %%input_fusion), index=2
  ROOT %%tuple.3 = (s32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(s32[4]{0} %%get-tuple-element.5, f32[4]{0} %%get-tuple-element.4, f32[4]{0} %%get-tuple-element.6)
}""" % (ARGMAX, ADD)
    values, indices = argmax_reference(x, 1)
    sums = (x.astype(np.float64).sum(axis=1) * 2).astype(np.float32)
    return Case(hlo, [x], [indices, values, sums])


def totalorder_comparator(name, ftype, itype, highest):
    """XLA's comparison expander on a TOTALORDER LT, after the simplifier
    turned its bitcast-converts into bitcasts: negative floats have their
    magnitude bits flipped, then the integers compare signed."""
    lines = ["%%%s (Arg_0.1: %s[], Arg_1.1: %s[]) -> pred[] {" % (name, ftype, ftype)]
    for side in (0, 1):
        n = "%s_%d" % (name, side)
        lines += [
            "  %%Arg_%d.1 = %s[] parameter(%d)" % (side, ftype, side),
            "  %%bitcast.%s = %s[] bitcast(%s[] %%Arg_%d.1)" % (n, itype, ftype, side),
            "  %%constant.%s = %s[] constant(0)" % (n, itype),
            "  %%compare.%s = pred[] compare(%s[] %%bitcast.%s, %s[] %%constant.%s), direction=LT" % (n, itype, n, itype,
                                                                                                      n),
            "  %%constant.h%s = %s[] constant(%d)" % (n, itype, highest),
            "  %%xor.%s = %s[] xor(%s[] %%constant.h%s, %s[] %%bitcast.%s)" % (n, itype, itype, n, itype, n),
            "  %%select.%s = %s[] select(pred[] %%compare.%s, %s[] %%xor.%s, %s[] %%bitcast.%s)" % (n, itype, n, itype, n,
                                                                                                    itype, n),
        ]
    lines.append("  ROOT %%compare.%s = pred[] compare(%s[] %%select.%s_0, %s[] %%select.%s_1), direction=LT" %
                 (name, itype, name, itype, name))
    lines.append("}")
    return "\n".join(lines)


@case("xla_sort_totalorder_bitcast_comparator")
def _(rng):
    x = rng.standard_normal((3, 8)).astype(np.float32)
    neg_nan = np.array([0xFFC00000], np.uint32).view(np.float32)[0]
    x[0, :4] = [np.nan, -0.0, 0.0, -np.inf]
    x[1, :3] = [neg_nan, np.inf, 1e-45]
    d = rng.standard_normal(10)
    d[:4] = [-0.0, np.nan, 0.0, -np.inf]
    hlo = """HloModule jit_sort, entry_computation_layout={(f32[3,8]{1,0}, f64[10]{0})->(f32[3,8]{1,0}, f64[10]{0})}

%s

%s

ENTRY %%main.5 (x.4: f32[3,8], d.1: f64[10]) -> (f32[3,8], f64[10]) {
  %%x.4 = f32[3,8]{1,0} parameter(0)
  %%d.1 = f64[10]{0} parameter(1)
  %%sort.0 = f32[3,8]{1,0} sort(f32[3,8]{1,0} %%x.4), dimensions={1}, is_stable=true, to_apply=%%compare_f32
  %%sort.1 = f64[10]{0} sort(f64[10]{0} %%d.1), dimensions={0}, is_stable=true, to_apply=%%compare_f64
  ROOT %%tuple.4 = (f32[3,8]{1,0}, f64[10]{0}) tuple(f32[3,8]{1,0} %%sort.0, f64[10]{0} %%sort.1)
}""" % (totalorder_comparator("compare_f32", "f32", "s32", 2**31 - 1),
        totalorder_comparator("compare_f64", "f64", "s64", 2**63 - 1))
    order = np.argsort(ref.totalorder_key(x), axis=1, kind="stable")
    dorder = sorted(range(len(d)), key=lambda i: ref.totalorder_key_f64(d)[i])
    return Case(hlo, [x, d], [np.take_along_axis(x, order, axis=1), d[dorder]], tol=(0, 0))


@case("xla_wrapped_reduce_window")
def _(rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    hlo = """HloModule jit_max_pool, entry_computation_layout={(f32[4,6]{1,0})->f32[4,3]{1,0}}

%s

%%wrapped_reduce-window_computation (param_0.4: f32[4,6], param_1.1: f32[]) -> f32[4,3] {
  %%param_0.4 = f32[4,6]{1,0} parameter(0)
  %%param_1.1 = f32[] parameter(1)
  ROOT %%reduce-window.0 = f32[4,3]{1,0} reduce-window(f32[4,6]{1,0} %%param_0.4, f32[] %%param_1.1), window={size=1x2 stride=1x2}, to_apply=%%max_f32
}

ENTRY %%main.6 (x.5: f32[4,6]) -> f32[4,3] {
  %%x.5 = f32[4,6]{1,0} parameter(0)
  %%constant.8 = f32[] constant(-inf)
  ROOT %%wrapped_reduce-window = f32[4,3]{1,0} fusion(f32[4,6]{1,0} %%x.5, f32[] %%constant.8), kind=kLoop, calls=%%wrapped_reduce-window_computation
}""" % MAX
    return Case(hlo, [x], [x.reshape(4, 3, 2).max(axis=2)])


@case("xla_wrapped_scatter")
def _(rng):
    x = rng.standard_normal((8, 4)).astype(np.float32)
    idx = np.array([[1], [6], [1]], np.int32)
    upd = rng.standard_normal((3, 4)).astype(np.float32)
    hlo = """HloModule jit_scatter_add, entry_computation_layout={(f32[8,4]{1,0}, s32[3,1]{1,0}, f32[3,4]{1,0})->f32[8,4]{1,0}}

%s

%%wrapped_scatter_computation (param_0.5: f32[8,4], param_1.2: s32[3,1], param_2.1: f32[3,4]) -> f32[8,4] {
  %%param_0.5 = f32[8,4]{1,0} parameter(0)
  %%param_1.2 = s32[3,1]{1,0} parameter(1)
  %%param_2.1 = f32[3,4]{1,0} parameter(2)
  ROOT %%scatter.0 = f32[8,4]{1,0} scatter(f32[8,4]{1,0} %%param_0.5, s32[3,1]{1,0} %%param_1.2, f32[3,4]{1,0} %%param_2.1), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%%add_f32
}

ENTRY %%main.7 (x.6: f32[8,4], i.1: s32[3,1], u.1: f32[3,4]) -> f32[8,4] {
  %%x.6 = f32[8,4]{1,0} parameter(0)
  %%i.1 = s32[3,1]{1,0} parameter(1)
  %%u.1 = f32[3,4]{1,0} parameter(2)
  ROOT %%wrapped_scatter = f32[8,4]{1,0} fusion(f32[8,4]{1,0} %%x.6, s32[3,1]{1,0} %%i.1, f32[3,4]{1,0} %%u.1), kind=kLoop, calls=%%wrapped_scatter_computation, output_to_operand_aliasing={{}: (0, {})}
}""" % ADD
    out = x.astype(np.float64).copy()
    for k in range(3):
        out[idx[k, 0]] += upd[k]
    return Case(hlo, [x, idx, upd], [out.astype(np.float32)])


@case("xla_custom_fusion_dot_and_reduce")
def _(rng):
    a = rng.standard_normal((3, 5, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4, 7)).astype(np.float32)
    c = rng.standard_normal((6, 10)).astype(np.float32)
    hlo = """HloModule jit_ynn, entry_computation_layout={(f32[3,5,4]{2,1,0}, f32[3,4,7]{2,1,0}, f32[6,10]{1,0})->(f32[3,5,7]{2,1,0}, f32[6]{0})}

%s

%%fused_dot (param_0.6: f32[3,5,4], param_1.3: f32[3,4,7]) -> f32[3,5,7] {
  %%param_0.6 = f32[3,5,4]{2,1,0} parameter(0)
  %%param_1.3 = f32[3,4,7]{2,1,0} parameter(1)
  ROOT %%dot.0 = f32[3,5,7]{2,1,0} dot(f32[3,5,4]{2,1,0} %%param_0.6, f32[3,4,7]{2,1,0} %%param_1.3), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}

%%fused_sum (param_0.7: f32[6,10]) -> f32[6] {
  %%param_0.7 = f32[6,10]{1,0} parameter(0)
  %%multiply.1 = f32[6,10]{1,0} multiply(f32[6,10]{1,0} %%param_0.7, f32[6,10]{1,0} %%param_0.7)
  %%constant.9 = f32[] constant(0)
  ROOT %%reduce.4 = f32[6]{0} reduce(f32[6,10]{1,0} %%multiply.1, f32[] %%constant.9), dimensions={1}, to_apply=%%add_f32
}

ENTRY %%main.8 (a.2: f32[3,5,4], b.2: f32[3,4,7], c.1: f32[6,10]) -> (f32[3,5,7], f32[6]) {
  %%a.2 = f32[3,5,4]{2,1,0} parameter(0)
  %%b.2 = f32[3,4,7]{2,1,0} parameter(1)
  %%c.1 = f32[6,10]{1,0} parameter(2)
  %%ynn_fusion = f32[3,5,7]{2,1,0} fusion(f32[3,5,4]{2,1,0} %%a.2, f32[3,4,7]{2,1,0} %%b.2), kind=kCustom, calls=%%fused_dot, backend_config={"fusion_config":{"kind":"__ynn_fusion"},"outer_dimension_partitions":[]}
  %%ynn_fusion.1 = f32[6]{0} fusion(f32[6,10]{1,0} %%c.1), kind=kCustom, calls=%%fused_sum, backend_config={"fusion_config":{"kind":"__ynn_fusion"},"outer_dimension_partitions":[]}
  ROOT %%tuple.5 = (f32[3,5,7]{2,1,0}, f32[6]{0}) tuple(f32[3,5,7]{2,1,0} %%ynn_fusion, f32[6]{0} %%ynn_fusion.1)
}""" % ADD
    dot = np.einsum("bij,bjk->bik", a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    sums = (c.astype(np.float64) ** 2).sum(axis=1).astype(np.float32)
    return Case(hlo, [a, b, c], [dot, sums], tol=(1e-5, 1e-5))


@case("xla_fusion_nested_variadic_reduce_root")
def _(rng):
    # a multi-output fusion whose root tuple holds the variadic reduce
    # itself (a nested tuple) beside a max over the same rows
    x = ties_and_nans(rng, (3, 5))
    hlo = """HloModule jit_argmax_and_max, entry_computation_layout={(f32[3,5]{1,0})->(s32[3]{0}, f32[3]{0})}

%s

%s

%%fused_nested (param_0.8: f32[3,5]) -> ((f32[3], s32[3]), f32[3]) {
  %%param_0.8 = f32[3,5]{1,0} parameter(0)
  %%iota.3 = s32[3,5]{1,0} iota(), iota_dimension=1
  %%constant.10 = f32[] constant(-inf)
  %%constant.11 = s32[] constant(0)
  %%reduce.5 = (f32[3]{0}, s32[3]{0}) reduce(f32[3,5]{1,0} %%param_0.8, s32[3,5]{1,0} %%iota.3, f32[] %%constant.10, s32[] %%constant.11), dimensions={1}, to_apply=%%region_argmax
  %%reduce.6 = f32[3]{0} reduce(f32[3,5]{1,0} %%param_0.8, f32[] %%constant.10), dimensions={1}, to_apply=%%max_f32
  ROOT %%tuple.6 = ((f32[3]{0}, s32[3]{0}), f32[3]{0}) tuple((f32[3]{0}, s32[3]{0}) %%reduce.5, f32[3]{0} %%reduce.6)
}

ENTRY %%main.9 (x.7: f32[3,5]) -> (s32[3], f32[3]) {
  %%x.7 = f32[3,5]{1,0} parameter(0)
  %%input_fusion.1 = ((f32[3]{0}, s32[3]{0}), f32[3]{0}) fusion(f32[3,5]{1,0} %%x.7), kind=kInput, calls=%%fused_nested
  %%get-tuple-element.7 = (f32[3]{0}, s32[3]{0}) get-tuple-element(((f32[3]{0}, s32[3]{0}), f32[3]{0}) %%input_fusion.1), index=0
  %%get-tuple-element.8 = s32[3]{0} get-tuple-element((f32[3]{0}, s32[3]{0}) %%get-tuple-element.7), index=1
  %%get-tuple-element.9 = f32[3]{0} get-tuple-element(((f32[3]{0}, s32[3]{0}), f32[3]{0}) %%input_fusion.1), index=1
  ROOT %%tuple.7 = (s32[3]{0}, f32[3]{0}) tuple(s32[3]{0} %%get-tuple-element.8, f32[3]{0} %%get-tuple-element.9)
}""" % (ARGMAX, MAX)
    _, indices = argmax_reference(x, 1)
    # maximum propagates NaN, as the argmax's value does
    return Case(hlo, [x], [indices, np.where(np.isnan(x).any(axis=1), np.nan, np.nanmax(x, axis=1)).astype(np.float32)])


@case("xla_fusion_outputs_of_different_shapes")
def _(rng):
    # a multi-output loop fusion whose results differ in shape (XLA fuses a
    # value with a reshape and a reduce-free slice of it): no one loop
    # covers both, so a backend runs the fused computation as steps
    x = rng.standard_normal((4, 6)).astype(np.float32)
    y = rng.standard_normal((4, 6)).astype(np.float32)
    hlo = """HloModule jit_multi_shapes, entry_computation_layout={(f32[4,6]{1,0}, f32[4,6]{1,0})->(f32[4,6]{1,0}, f32[24]{0}, f32[2,6]{1,0})}

%fused_multi_shapes (param_0.9: f32[4,6], param_1.4: f32[4,6]) -> (f32[4,6], f32[24], f32[2,6]) {
  %param_0.9 = f32[4,6]{1,0} parameter(0)
  %param_1.4 = f32[4,6]{1,0} parameter(1)
  %add.1 = f32[4,6]{1,0} add(f32[4,6]{1,0} %param_0.9, f32[4,6]{1,0} %param_1.4)
  %reshape.0 = f32[24]{0} reshape(f32[4,6]{1,0} %add.1)
  %slice.0 = f32[2,6]{1,0} slice(f32[4,6]{1,0} %add.1), slice={[1:3], [0:6]}
  ROOT %tuple.8 = (f32[4,6]{1,0}, f32[24]{0}, f32[2,6]{1,0}) tuple(f32[4,6]{1,0} %add.1, f32[24]{0} %reshape.0, f32[2,6]{1,0} %slice.0)
}

ENTRY %main.10 (x.8: f32[4,6], y.1: f32[4,6]) -> (f32[4,6], f32[24], f32[2,6]) {
  %x.8 = f32[4,6]{1,0} parameter(0)
  %y.1 = f32[4,6]{1,0} parameter(1)
  ROOT %loop_fusion = (f32[4,6]{1,0}, f32[24]{0}, f32[2,6]{1,0}) fusion(f32[4,6]{1,0} %x.8, f32[4,6]{1,0} %y.1), kind=kLoop, calls=%fused_multi_shapes
}"""
    s = x + y
    return Case(hlo, [x, y], [s, s.reshape(24), s[1:3]])
