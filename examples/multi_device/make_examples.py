#!/usr/bin/env python3
"""Writes the multi-device examples: for 1, 2 and 4 devices, the module and
every device's inputs (examples/multi_device/<example>_<n>dev.hlo and
<example>_<n>dev/inK.npy, device by device, as axle-run --devices takes
them). run.sh runs them and compares every device count with 1 device.

mlp_step: one data-parallel training step of a 2-layer MLP, as
  MirroredStrategy (jit_compile=True) produces it: each replica takes its
  share of the global batch of 8, computes its gradients of the global-batch
  mean squared error, and one all-reduce over the replicas (a tuple
  all-reduce of every gradient and the loss, as XLA's all-reduce combiner
  makes it) sums them; every replica then applies the same SGD update.
  replica_count=N, replica_groups={{0,...,N-1}}, no channel_id.

tp_matmul: a tensor-parallel y = x @ w over N partitions, as JAX's shard_map
  lowers it (num_partitions=N; channel_id and use_global_device_ids=true,
  iota replica_groups): (a) all-gather then dot: x sharded by rows is
  gathered, then multiplied by this device's column block of w; (b) dot then
  reduce-scatter: x's column block times w's row block gives a partial
  product, summed and scattered by rows. Both are all-gathered at the end so
  that every device holds the whole y, which the 1-device run computes with
  one dot.

The values are NumPy's, fixed by a seed; the modules are plain text.
Run:  /usr/bin/python3 examples/multi_device/make_examples.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH, IN, HIDDEN, OUT = 8, 4, 8, 2
LR = 0.1

SUM = """%add.f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %a, f32[] %b)
}
"""


def groups(n):
    return "{{" + ",".join(str(i) for i in range(n)) + "}}"


def mlp_module(n):
    b = BATCH // n
    return f"""HloModule a_inference_train_step__XlaMustCompile_true_config_proto_replica_count_{n}, replica_count={n}, entry_computation_layout={{(f32[{IN},{HIDDEN}]{{1,0}}, f32[{HIDDEN}]{{0}}, f32[{HIDDEN},{OUT}]{{1,0}}, f32[{OUT}]{{0}}, f32[{b},{IN}]{{1,0}}, f32[{b},{OUT}]{{1,0}})->(f32[{IN},{HIDDEN}]{{1,0}}, f32[{HIDDEN}]{{0}}, f32[{HIDDEN},{OUT}]{{1,0}}, f32[{OUT}]{{0}}, f32[])}}

{SUM}
ENTRY %train_step (w1: f32[{IN},{HIDDEN}], b1: f32[{HIDDEN}], w2: f32[{HIDDEN},{OUT}], b2: f32[{OUT}], x: f32[{b},{IN}], y: f32[{b},{OUT}]) -> (f32[{IN},{HIDDEN}], f32[{HIDDEN}], f32[{HIDDEN},{OUT}], f32[{OUT}], f32[]) {{
  %w1 = f32[{IN},{HIDDEN}]{{1,0}} parameter(0), metadata={{op_name="w1"}}
  %b1 = f32[{HIDDEN}]{{0}} parameter(1), metadata={{op_name="b1"}}
  %w2 = f32[{HIDDEN},{OUT}]{{1,0}} parameter(2), metadata={{op_name="w2"}}
  %b2 = f32[{OUT}]{{0}} parameter(3), metadata={{op_name="b2"}}
  %x = f32[{b},{IN}]{{1,0}} parameter(4), metadata={{op_name="x"}}
  %y = f32[{b},{OUT}]{{1,0}} parameter(5), metadata={{op_name="y"}}
  %dot.1 = f32[{b},{HIDDEN}]{{1,0}} dot(%x, %w1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="sequential/dense/MatMul"}}
  %broadcast.1 = f32[{b},{HIDDEN}]{{1,0}} broadcast(%b1), dimensions={{1}}
  %z1 = f32[{b},{HIDDEN}]{{1,0}} add(%dot.1, %broadcast.1), metadata={{op_name="sequential/dense/BiasAdd"}}
  %zero = f32[] constant(0)
  %zeros.h = f32[{b},{HIDDEN}]{{1,0}} broadcast(%zero), dimensions={{}}
  %h = f32[{b},{HIDDEN}]{{1,0}} maximum(%z1, %zeros.h), metadata={{op_name="sequential/dense/Relu"}}
  %dot.2 = f32[{b},{OUT}]{{1,0}} dot(%h, %w2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="sequential/dense_1/MatMul"}}
  %broadcast.2 = f32[{b},{OUT}]{{1,0}} broadcast(%b2), dimensions={{1}}
  %out = f32[{b},{OUT}]{{1,0}} add(%dot.2, %broadcast.2), metadata={{op_name="sequential/dense_1/BiasAdd"}}
  %diff = f32[{b},{OUT}]{{1,0}} subtract(%out, %y), metadata={{op_name="mean_squared_error/sub"}}
  %square = f32[{b},{OUT}]{{1,0}} multiply(%diff, %diff)
  %sum.sq = f32[] reduce(%square, %zero), dimensions={{0,1}}, to_apply=%add.f32
  %inv.n = f32[] constant({1.0 / (BATCH * OUT)!r})
  %loss.local = f32[] multiply(%sum.sq, %inv.n), metadata={{op_name="mean_squared_error/value"}}
  %two.inv.n = f32[] constant({2.0 / (BATCH * OUT)!r})
  %scale.out = f32[{b},{OUT}]{{1,0}} broadcast(%two.inv.n), dimensions={{}}
  %dout = f32[{b},{OUT}]{{1,0}} multiply(%diff, %scale.out), metadata={{op_name="gradient_tape/mean_squared_error/mul"}}
  %gw2 = f32[{HIDDEN},{OUT}]{{1,0}} dot(%h, %dout), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}, metadata={{op_name="gradient_tape/sequential/dense_1/MatMul_1"}}
  %gb2 = f32[{OUT}]{{0}} reduce(%dout, %zero), dimensions={{0}}, to_apply=%add.f32, metadata={{op_name="gradient_tape/sequential/dense_1/BiasAdd/BiasAddGrad"}}
  %dh = f32[{b},{HIDDEN}]{{1,0}} dot(%dout, %w2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}, metadata={{op_name="gradient_tape/sequential/dense_1/MatMul"}}
  %positive = pred[{b},{HIDDEN}]{{1,0}} compare(%z1, %zeros.h), direction=GT
  %dz1 = f32[{b},{HIDDEN}]{{1,0}} select(%positive, %dh, %zeros.h), metadata={{op_name="gradient_tape/sequential/dense/ReluGrad"}}
  %gw1 = f32[{IN},{HIDDEN}]{{1,0}} dot(%x, %dz1), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}, metadata={{op_name="gradient_tape/sequential/dense/MatMul"}}
  %gb1 = f32[{HIDDEN}]{{0}} reduce(%dz1, %zero), dimensions={{0}}, to_apply=%add.f32, metadata={{op_name="gradient_tape/sequential/dense/BiasAdd/BiasAddGrad"}}
  %all-reduce = (f32[{IN},{HIDDEN}]{{1,0}}, f32[{HIDDEN}]{{0}}, f32[{HIDDEN},{OUT}]{{1,0}}, f32[{OUT}]{{0}}, f32[]) all-reduce(%gw1, %gb1, %gw2, %gb2, %loss.local), replica_groups={groups(n)}, to_apply=%add.f32, metadata={{op_name="CrossReplicaSum"}}
  %g.w1 = f32[{IN},{HIDDEN}]{{1,0}} get-tuple-element(%all-reduce), index=0
  %g.b1 = f32[{HIDDEN}]{{0}} get-tuple-element(%all-reduce), index=1
  %g.w2 = f32[{HIDDEN},{OUT}]{{1,0}} get-tuple-element(%all-reduce), index=2
  %g.b2 = f32[{OUT}]{{0}} get-tuple-element(%all-reduce), index=3
  %loss = f32[] get-tuple-element(%all-reduce), index=4
  %lr = f32[] constant({LR})
  %lr.w1 = f32[{IN},{HIDDEN}]{{1,0}} broadcast(%lr), dimensions={{}}
  %step.w1 = f32[{IN},{HIDDEN}]{{1,0}} multiply(%g.w1, %lr.w1)
  %new.w1 = f32[{IN},{HIDDEN}]{{1,0}} subtract(%w1, %step.w1), metadata={{op_name="SGD/update/ResourceApplyGradientDescent"}}
  %lr.b1 = f32[{HIDDEN}]{{0}} broadcast(%lr), dimensions={{}}
  %step.b1 = f32[{HIDDEN}]{{0}} multiply(%g.b1, %lr.b1)
  %new.b1 = f32[{HIDDEN}]{{0}} subtract(%b1, %step.b1)
  %lr.w2 = f32[{HIDDEN},{OUT}]{{1,0}} broadcast(%lr), dimensions={{}}
  %step.w2 = f32[{HIDDEN},{OUT}]{{1,0}} multiply(%g.w2, %lr.w2)
  %new.w2 = f32[{HIDDEN},{OUT}]{{1,0}} subtract(%w2, %step.w2)
  %lr.b2 = f32[{OUT}]{{0}} broadcast(%lr), dimensions={{}}
  %step.b2 = f32[{OUT}]{{0}} multiply(%g.b2, %lr.b2)
  %new.b2 = f32[{OUT}]{{0}} subtract(%b2, %step.b2)
  ROOT %tuple = (f32[{IN},{HIDDEN}]{{1,0}}, f32[{HIDDEN}]{{0}}, f32[{HIDDEN},{OUT}]{{1,0}}, f32[{OUT}]{{0}}, f32[]) tuple(%new.w1, %new.b1, %new.w2, %new.b2, %loss)
}}
"""


def tp_module(n):
    B, K, M = 8, 16, 8
    return f"""HloModule jit_tp_matmul, is_scheduled=true, num_partitions={n}

{SUM}
ENTRY %main.1 (x_rows: f32[{B // n},{K}], w_cols: f32[{K},{M // n}], x_cols: f32[{B},{K // n}], w_rows: f32[{K // n},{M}]) -> (f32[{B},{M}], f32[{B},{M}]) {{
  %x_rows = f32[{B // n},{K}]{{1,0}} parameter(0), sharding={{devices=[{n},1]<=[{n}]}}, metadata={{op_name="x"}}
  %w_cols = f32[{K},{M // n}]{{1,0}} parameter(1), sharding={{devices=[1,{n}]<=[{n}]}}, metadata={{op_name="w"}}
  %x_cols = f32[{B},{K // n}]{{1,0}} parameter(2), sharding={{devices=[1,{n}]<=[{n}]}}, metadata={{op_name="x"}}
  %w_rows = f32[{K // n},{M}]{{1,0}} parameter(3), sharding={{devices=[{n},1]<=[{n}]}}, metadata={{op_name="w"}}
  %all-gather = f32[{B},{K}]{{1,0}} all-gather(%x_rows), channel_id=1, replica_groups=[1,{n}]<=[{n}], dimensions={{0}}, use_global_device_ids=true, metadata={{op_name="jit(tp_matmul)/shard_map/all_gather"}}
  %dot = f32[{B},{M // n}]{{1,0}} dot(%all-gather, %w_cols), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="jit(tp_matmul)/shard_map/dot_general"}}
  %all-gather.1 = f32[{B},{M}]{{1,0}} all-gather(%dot), channel_id=2, replica_groups=[1,{n}]<=[{n}], dimensions={{1}}, use_global_device_ids=true
  %dot.1 = f32[{B},{M}]{{1,0}} dot(%x_cols, %w_rows), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="jit(tp_matmul)/shard_map/dot_general"}}
  %reduce-scatter = f32[{B // n},{M}]{{1,0}} reduce-scatter(%dot.1), channel_id=3, replica_groups=[1,{n}]<=[{n}], dimensions={{0}}, use_global_device_ids=true, to_apply=%add.f32, metadata={{op_name="jit(tp_matmul)/shard_map/psum_scatter"}}
  %all-gather.2 = f32[{B},{M}]{{1,0}} all-gather(%reduce-scatter), channel_id=4, replica_groups=[1,{n}]<=[{n}], dimensions={{0}}, use_global_device_ids=true
  ROOT %tuple = (f32[{B},{M}]{{1,0}}, f32[{B},{M}]{{1,0}}) tuple(%all-gather.1, %all-gather.2)
}}
""", (B, K, M)


def write(name, hlo, per_device):
    with open(os.path.join(HERE, name + ".hlo"), "w") as f:
        f.write(hlo)
    folder = os.path.join(HERE, name)
    os.makedirs(folder, exist_ok=True)
    for old in os.listdir(folder):
        os.remove(os.path.join(folder, old))
    k = 0
    for arrays in per_device:
        for a in arrays:
            np.save(os.path.join(folder, f"in{k}.npy"), np.asarray(a, dtype=np.float32))
            k += 1


def main():
    rng = np.random.default_rng(21)
    w1 = rng.standard_normal((IN, HIDDEN)) * 0.5
    b1 = rng.standard_normal(HIDDEN) * 0.1
    w2 = rng.standard_normal((HIDDEN, OUT)) * 0.5
    b2 = rng.standard_normal(OUT) * 0.1
    x = rng.standard_normal((BATCH, IN))
    y = rng.standard_normal((BATCH, OUT))
    xt = rng.standard_normal((8, 16))
    wt = rng.standard_normal((16, 8))
    for n in (1, 2, 4):
        b = BATCH // n
        write(f"mlp_step_{n}dev", mlp_module(n),
              [[w1, b1, w2, b2, x[d * b:(d + 1) * b], y[d * b:(d + 1) * b]] for d in range(n)])
        hlo, (B, K, M) = tp_module(n)
        write(f"tp_matmul_{n}dev", hlo,
              [[xt[d * B // n:(d + 1) * B // n], wt[:, d * M // n:(d + 1) * M // n],
                xt[:, d * K // n:(d + 1) * K // n], wt[d * K // n:(d + 1) * K // n]] for d in range(n)])
    # The reference: NumPy's float64 step and product, for run.sh's last check.
    z1 = x @ w1 + b1
    h = np.maximum(z1, 0)
    diff = h @ w2 + b2 - y
    dout = diff * 2 / (BATCH * OUT)
    dz1 = (dout @ w2.T) * (z1 > 0)
    reference = [w1 - LR * (x.T @ dz1), b1 - LR * dz1.sum(0), w2 - LR * (h.T @ dout), b2 - LR * dout.sum(0),
                 np.float64((diff ** 2).mean())]
    folder = os.path.join(HERE, "numpy")
    os.makedirs(folder, exist_ok=True)
    for k, r in enumerate(reference):
        np.save(os.path.join(folder, f"mlp_step_out{k}.npy"), np.asarray(r, dtype=np.float32))
    for k in range(2):
        np.save(os.path.join(folder, f"tp_matmul_out{k}.npy"), np.asarray(xt @ wt, dtype=np.float32))


if __name__ == "__main__":
    main()
