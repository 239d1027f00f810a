#!/usr/bin/env python3
"""Goldens for the collectives over several devices (tests/devices/).

Each case is a module, a device count (replica_count x num_partitions) and,
for every device, its inputs and the outputs NumPy computes for it. The
semantics are written here a second time, from XLA's documents and its
collective_ops_utils (group modes, flattened ids), independently of
src/ir/eval/eval_collective.c:

  - no channel_id: replica_groups name replicas (within a partition);
    channel_id: partitions (within a replica), except on all-reduce,
    all-gather and reduce-scatter, where use_global_device_ids=false names
    replicas across every partition, and true names flattened ids
    replica * num_partitions + partition;
  - empty replica_groups: every id;
  - device d (the order of --in sets and of --out folders) is replica
    d % replica_count, partition d // replica_count;
  - a reduction folds the group's operands in group order, left to right,
    in the operands' type (float32 here: NumPy's float32 add is IEEE's).

Writes tests/devices/NAME.hlo and tests/devices/NAME/{devices, inN.npy,
deviceD/outK.npy}; the inputs are numbered device by device, as axle-run
--devices takes them. Run:  /usr/bin/python3 tests/gen/gen_collectives.py
"""
import os
import shutil
import zlib

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "devices")
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


# ---- device ids and groups ----

def expand_iota(groups, size, dims, perm):
    """[groups,size]<=[dims]T(perm) as a list of lists."""
    ids = np.arange(int(np.prod(dims))).reshape(dims)
    if perm is not None:
        ids = ids.transpose(perm)
    return ids.reshape(groups, size).tolist()


def group_text(groups):
    if groups is None:
        return ""
    return ", replica_groups={" + ",".join("{" + ",".join(map(str, g)) + "}" for g in groups) + "}"


def mode_of(op, channel, global_ids):
    if not channel:
        return "replica"
    if op in ("all-reduce", "all-gather", "reduce-scatter"):
        return "flattened" if global_ids else "replica_and_partition"
    return "partition"


def members(mode, groups, r, p, R, P):
    """The flattened ids of device (r, p)'s group, in group order."""
    space = {"replica": R, "partition": P, "flattened": R * P, "replica_and_partition": R}[mode]
    own = {"replica": r, "partition": p, "flattened": r * P + p, "replica_and_partition": r}[mode]
    groups = groups if groups else [list(range(space))]
    group = next(g for g in groups if own in g)
    if mode == "replica":
        return [i * P + p for i in group]
    if mode == "partition":
        return [r * P + i for i in group]
    if mode == "flattened":
        return list(group)
    return [i * P + q for i in group for q in range(P)]


def device_ids(R, P):
    """(replica, partition, flattened id) of device d = 0, 1, ..."""
    return [(d % R, d // R, (d % R) * P + d // R) for d in range(R * P)]


def fold(values, op):
    acc = values[0].copy()
    for v in values[1:]:
        acc = op(acc, v)
    return acc


# ---- the cases ----
# Each returns (name, hlo, R, P, inputs[d], outputs[d]).

def header(name, R, P):
    parts = f"HloModule {name}"
    if R > 1:
        parts += f", replica_count={R}"
    if P > 1:
        parts += f", num_partitions={P}"
    return parts + "\n\n"


SUM = """sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

"""
MAX_S32 = """max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}

"""


def group_forms(n):
    """(label, groups as written, groups as lists or None) for n devices."""
    forms = [("empty", "", None)]
    if n == 1:
        forms += [("list", "{{0}}", [[0]]), ("iota", "[1,1]<=[1]", [[0]])]
    elif n == 2:
        forms += [("list", "{{1,0}}", [[1, 0]]), ("iota", "[1,2]<=[2]", [[0, 1]])]
    else:
        forms += [("list", "{{0,2},{3,1}}", [[0, 2], [3, 1]]),
                  ("iota", "[2,2]<=[2,2]T(1,0)", expand_iota(2, 2, [2, 2], [1, 0]))]
    return forms


def with_groups(text):
    return f", replica_groups={text}" if text else ""


def random_inputs(name, n, shape):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


def replicas_case(name, n, body, shapes_in, compute):
    """A module over n replicas with one f32 input per device."""
    xs = random_inputs(name, n, shapes_in)
    hlo = header(name, n, 1) + body
    outs = []
    for d, (r, p, f) in enumerate(device_ids(n, 1)):
        outs.append(compute(d, r, p, xs))
    return name, hlo, n, 1, [[x] for x in xs], outs


def add_group_cases(n):
    for label, text, groups in group_forms(n):
        g = with_groups(text)
        size = len(groups[0]) if groups else n

        def by_group(d, xs, groups=groups):
            return [xs[m] for m in members("replica", groups, d, 0, n, 1)]

        def all_reduce(d, r, p, xs, by_group=by_group):
            return [fold(by_group(d, xs), np.add)]
        CASES.append(lambda n=n, label=label, g=g, f=all_reduce: replicas_case(
            f"all_reduce_{label}_{n}dev", n,
            SUM + f"ENTRY main {{\n  x = f32[3,5] parameter(0)\n"
            f"  ROOT r = f32[3,5] all-reduce(x){g}, to_apply=sum\n}}\n", (3, 5), f))

        def all_gather(d, r, p, xs, by_group=by_group):
            return [np.concatenate(by_group(d, xs), axis=1)]
        CASES.append(lambda n=n, label=label, g=g, size=size, f=all_gather: replicas_case(
            f"all_gather_{label}_{n}dev", n,
            f"ENTRY main {{\n  x = f32[2,3] parameter(0)\n"
            f"  ROOT r = f32[2,{3 * size}] all-gather(x){g}, dimensions={{1}}\n}}\n", (2, 3), f))

        def reduce_scatter(d, r, p, xs, by_group=by_group, groups=groups):
            ms = members("replica", groups, d, 0, n, 1)
            total = fold(by_group(d, xs), np.add)
            k = total.shape[0] // len(ms)
            i = ms.index(d)
            return [total[i * k:(i + 1) * k]]
        CASES.append(lambda n=n, label=label, g=g, size=size, f=reduce_scatter: replicas_case(
            f"reduce_scatter_{label}_{n}dev", n,
            SUM + f"ENTRY main {{\n  x = f32[{2 * size},3] parameter(0)\n"
            f"  ROOT r = f32[2,3] reduce-scatter(x){g}, dimensions={{0}}, to_apply=sum\n}}\n", (2 * size, 3), f))

        def all_to_all(d, r, p, xs, groups=groups):
            ms = members("replica", groups, d, 0, n, 1)
            i, k = ms.index(d), xs[0].shape[1] // len(ms)
            return [np.concatenate([xs[m][:, i * k:(i + 1) * k] for m in ms], axis=1)]
        CASES.append(lambda n=n, label=label, g=g, size=size, f=all_to_all: replicas_case(
            f"all_to_all_{label}_{n}dev", n,
            f"ENTRY main {{\n  x = f32[3,{2 * size}] parameter(0)\n"
            f"  ROOT r = f32[3,{2 * size}] all-to-all(x){g}, dimensions={{1}}\n}}\n", (3, 2 * size), f))

        def broadcast(d, r, p, xs, groups=groups):
            return [xs[members("replica", groups, d, 0, n, 1)[0]]]
        CASES.append(lambda n=n, label=label, g=g, f=broadcast: replicas_case(
            f"collective_broadcast_{label}_{n}dev", n,
            f"ENTRY main {{\n  x = f32[4] parameter(0)\n"
            f"  ROOT r = f32[4] collective-broadcast(x){g}\n}}\n", (4,), f))


for _n in (1, 2, 4):
    add_group_cases(_n)


def permute_pairs(n):
    return [(i, (i + 1) % n) for i in range(n)] if n > 1 else [(0, 0)]


def pairs_text(pairs):
    return "{" + ",".join(f"{{{s},{t}}}" for s, t in pairs) + "}"


for _n in (1, 2, 4):
    def permute(d, r, p, xs, n=_n):
        src = [s for s, t in permute_pairs(n) if t == d]
        return [xs[src[0]] if src else np.zeros_like(xs[0])]
    CASES.append(lambda n=_n, f=permute: replicas_case(
        f"collective_permute_cycle_{n}dev", n,
        f"ENTRY main {{\n  x = f32[2,2] parameter(0)\n"
        f"  ROOT r = f32[2,2] collective-permute(x), source_target_pairs={pairs_text(permute_pairs(n))}\n}}\n",
        (2, 2), f))


@case
def permute_partial_and_combined():
    """Device 3 receives nothing (zeros); the combined form permutes two operands."""
    n, name = 4, "collective_permute_combined_4dev"
    xs = random_inputs(name, n, (3,))
    ys = [x * 2 for x in xs]
    pairs = [(0, 1), (1, 2), (2, 0)]
    hlo = header(name, n, 1) + (
        "ENTRY main {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n"
        f"  ROOT r = (f32[3], f32[3]) collective-permute(x, y), source_target_pairs={pairs_text(pairs)}\n}}\n")
    outs = []
    for d in range(n):
        src = [s for s, t in pairs if t == d]
        outs.append([xs[src[0]] if src else np.zeros(3, np.float32), ys[src[0]] if src else np.zeros(3, np.float32)])
    return name, hlo, n, 1, [[xs[d], ys[d]] for d in range(n)], outs


@case
def async_pairs():
    """all-reduce-start/done, all-gather-start/done, collective-permute-start/done
    and an async-start wrapping an all-reduce, over 2 replicas."""
    n, name = 2, "async_pairs_2dev"
    xs = random_inputs(name, n, (4,))
    hlo = header(name, n, 1) + SUM + (
        "wrapped {\n  w = f32[4] parameter(0)\n"
        "  ROOT wr = f32[4] all-reduce(w), replica_groups={{0,1}}, to_apply=sum\n}\n\n"
        "ENTRY main {\n  x = f32[4] parameter(0)\n"
        "  ars = f32[4] all-reduce-start(x), replica_groups={{0,1}}, to_apply=sum\n"
        "  ard = f32[4] all-reduce-done(ars)\n"
        "  ags = (f32[4], f32[8]) all-gather-start(x), replica_groups={{0,1}}, dimensions={0}\n"
        "  agd = f32[8] all-gather-done(ags)\n"
        "  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1},{1,0}}\n"
        "  cpd = f32[4] collective-permute-done(cps)\n"
        "  as = ((f32[4]), f32[4]) async-start(x), calls=wrapped\n"
        "  ad = f32[4] async-done(as)\n"
        "  ROOT t = (f32[4], f32[8], f32[4], f32[4]) tuple(ard, agd, cpd, ad)\n}\n")
    outs = []
    for d in range(n):
        s = fold(xs, np.add)
        outs.append([s, np.concatenate(xs), xs[1 - d], s])
    return name, hlo, n, 1, [[x] for x in xs], outs


@case
def partitions_and_ids():
    """2 replicas x 2 partitions: replica-id and partition-id, an all-reduce
    in each of its group modes (no channel_id: replicas; channel_id:
    replicas across every partition, with use_global_device_ids absent or
    false; flattened ids with it true), an all-gather over flattened ids,
    and the partition mode of the ops without use_global_device_ids: a
    collective-permute and a collective-broadcast with a channel_id."""
    R, P, name = 2, 2, "group_modes_2x2"
    xs = random_inputs(name, R * P, (3,))
    hlo = header(name, R, P) + SUM + (
        "ENTRY main {\n  x = f32[3] parameter(0)\n"
        "  rid = u32[] replica-id()\n  pid = u32[] partition-id()\n"
        "  cr = f32[3] all-reduce(x), replica_groups={{0,1}}, to_apply=sum\n"
        "  cp = f32[3] all-reduce(x), channel_id=1, replica_groups={{1,0}}, to_apply=sum\n"
        "  crp = f32[3] all-reduce(x), channel_id=2, replica_groups={{0},{1}}, use_global_device_ids=false, to_apply=sum\n"
        "  fl = f32[3] all-reduce(x), channel_id=3, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=sum\n"
        "  ag = f32[6] all-gather(x), channel_id=4, replica_groups={{1,2},{3,0}}, use_global_device_ids=true, dimensions={0}\n"
        "  pp = f32[3] collective-permute(x), channel_id=5, source_target_pairs={{0,1}}\n"
        "  cb = f32[3] collective-broadcast(x), channel_id=6, replica_groups={{1,0}}\n"
        "  ROOT t = (u32[], u32[], f32[3], f32[3], f32[3], f32[3], f32[6], f32[3], f32[3]) "
        "tuple(rid, pid, cr, cp, crp, fl, ag, pp, cb)\n}\n")
    # inputs are per device d; the groups name flattened ids, so index by id
    by_id = {}
    for d, (r, p, f) in enumerate(device_ids(R, P)):
        by_id[f] = xs[d]
    outs = []
    for d, (r, p, f) in enumerate(device_ids(R, P)):
        def red(mode, groups):
            return fold([by_id[m] for m in members(mode, groups, r, p, R, P)], np.add)
        gathered = np.concatenate([by_id[m] for m in members("flattened", [[1, 2], [3, 0]], r, p, R, P)])
        permuted = by_id[r * P + 0] if p == 1 else np.zeros(3, np.float32)  # partition 0 sends to 1
        broadcast = by_id[r * P + 1]                                         # the group's first: partition 1
        outs.append([np.uint32(r), np.uint32(p), red("replica", [[0, 1]]), red("replica_and_partition", [[1, 0]]),
                     red("replica_and_partition", [[0], [1]]), red("flattened", [[0, 3], [1, 2]]), gathered,
                     permuted, broadcast])
    return name, hlo, R, P, [[x] for x in xs], outs


@case
def all_to_all_tuple_and_max():
    """The tuple form of all-to-all over 4 partitions (channel_id), and an
    s32 all-reduce with maximum."""
    P, name = 4, "all_to_all_tuple_4dev"
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    xs = [[rng.standard_normal(2).astype(np.float32) for _ in range(4)] for _ in range(P)]
    ks = [rng.integers(-100, 100, size=5).astype(np.int32) for _ in range(P)]
    hlo = header(name, 1, P) + MAX_S32 + (
        "ENTRY main {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
        "  c = f32[2] parameter(2)\n  d = f32[2] parameter(3)\n  k = s32[5] parameter(4)\n"
        "  t = (f32[2], f32[2], f32[2], f32[2]) all-to-all(a, b, c, d), channel_id=1, replica_groups={{0,1,2,3}}\n"
        "  m = s32[5] all-reduce(k), channel_id=2, replica_groups={}, use_global_device_ids=false, to_apply=max\n"
        "  t0 = f32[2] get-tuple-element(t), index=0\n  t1 = f32[2] get-tuple-element(t), index=1\n"
        "  t2 = f32[2] get-tuple-element(t), index=2\n  t3 = f32[2] get-tuple-element(t), index=3\n"
        "  ROOT r = (f32[2], f32[2], f32[2], f32[2], s32[5]) tuple(t0, t1, t2, t3, m)\n}\n")
    # channel_id without use_global_device_ids on all-to-all: partitions
    outs = [[xs[j][d] for j in range(P)] + [fold(ks, np.maximum)] for d in range(P)]
    return name, hlo, 1, P, [xs[d] + [ks[d]] for d in range(P)], outs


@case
def collectives_in_a_loop():
    """An all-reduce and a permute inside a while loop's body (the CPU
    backend compiles the body as a program of its own), three trips."""
    n, name = 2, "loop_body_collectives_2dev"
    xs = random_inputs(name, n, (3,))
    hlo = header(name, n, 1) + SUM + (
        "cond {\n  c = (s32[], f32[3]) parameter(0)\n  i = s32[] get-tuple-element(c), index=0\n"
        "  three = s32[] constant(3)\n  ROOT lt = pred[] compare(i, three), direction=LT\n}\n\n"
        "body {\n  b = (s32[], f32[3]) parameter(0)\n  i = s32[] get-tuple-element(b), index=0\n"
        "  v = f32[3] get-tuple-element(b), index=1\n"
        "  s = f32[3] all-reduce(v), replica_groups={{0,1}}, to_apply=sum\n"
        "  p = f32[3] collective-permute(s), source_target_pairs={{0,1},{1,0}}\n"
        "  h = f32[3] constant({0.5, 0.25, 2})\n  m = f32[3] multiply(p, h)\n"
        "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f32[3]) tuple(j, m)\n}\n\n"
        "ENTRY main {\n  x = f32[3] parameter(0)\n  zero = s32[] constant(0)\n"
        "  init = (s32[], f32[3]) tuple(zero, x)\n"
        "  w = (s32[], f32[3]) while(init), condition=cond, body=body\n"
        "  ROOT r = f32[3] get-tuple-element(w), index=1\n}\n")
    vs = [x.copy() for x in xs]
    h = np.array([0.5, 0.25, 2], np.float32)
    for _ in range(3):
        s = fold(vs, np.add)
        vs = [s * h for _ in range(n)]  # the permute swaps two equal sums
    return name, hlo, n, 1, [[x] for x in xs], [[v] for v in vs]


@case
def column_major_layouts():
    """Collectives on arrays laid out column-major ({0,1}): the values are
    the same; the CPU backend copies them through row-major around the
    exchange."""
    n, name = 2, "column_major_layouts_2dev"
    xs = random_inputs(name, n, (2, 3))
    hlo = header(name, n, 1) + SUM + (
        "ENTRY main {\n  x = f32[2,3]{0,1} parameter(0)\n"
        "  t = f32[3,2]{0,1} transpose(x), dimensions={1,0}\n"
        "  ar = f32[3,2]{0,1} all-reduce(t), replica_groups={{0,1}}, to_apply=sum\n"
        "  ag = f32[6,2]{0,1} all-gather(t), replica_groups={{0,1}}, dimensions={0}\n"
        "  ROOT r = (f32[3,2]{0,1}, f32[6,2]{0,1}) tuple(ar, ag)\n}\n")
    ts = [x.T for x in xs]
    return name, hlo, n, 1, [[x] for x in xs], [[ts[0] + ts[1], np.concatenate(ts)] for _ in range(n)]


@case
def partition_id_picks_a_shard():
    """partition-id feeding a dynamic-slice and arithmetic, as JAX's SPMD
    modules take a device's shard of a replicated value."""
    P, name = 4, "partition_id_slices_4dev"
    x = random_inputs(name, 1, (8,))[0]
    hlo = header(name, 1, P) + (
        "ENTRY main {\n  x = f32[8] parameter(0)\n  pid = u32[] partition-id()\n"
        "  two = u32[] constant(2)\n  off = u32[] multiply(pid, two)\n"
        "  s = f32[2] dynamic-slice(x, off), dynamic_slice_sizes={2}\n"
        "  c = f32[] convert(pid)\n  b = f32[2] broadcast(c), dimensions={}\n"
        "  ROOT r = f32[2] add(s, b)\n}\n")
    return name, hlo, 1, P, [[x] for _ in range(P)], [[x[2 * d:2 * d + 2] + np.float32(d)] for d in range(P)]


def write(name, hlo, R, P, inputs, outputs):
    folder = os.path.join(ROOT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(ROOT, name + ".hlo"), "w") as f:
        f.write(hlo)
    with open(os.path.join(folder, "devices"), "w") as f:
        f.write(f"{R * P}\n")
    k = 0
    for per_device in inputs:
        for x in per_device:
            np.save(os.path.join(folder, f"in{k}.npy"), np.array(x, order="C"))
            k += 1
    for d, outs in enumerate(outputs):
        os.makedirs(os.path.join(folder, f"device{d}"))
        for j, y in enumerate(outs):
            np.save(os.path.join(folder, f"device{d}", f"out{j}.npy"), np.array(y, order="C"))


def main():
    os.makedirs(ROOT, exist_ok=True)
    for old in os.listdir(ROOT):
        path = os.path.join(ROOT, old)
        if old.endswith(".hlo"):
            os.remove(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)
    for make in CASES:
        write(*make())
    print(f"{len(CASES)} cases in {os.path.relpath(ROOT)}")


if __name__ == "__main__":
    main()
