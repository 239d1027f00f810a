#!/usr/bin/env python3
"""bench/gpu's peers: PyTorch and JAX (XLA:GPU) on the workloads of
bench/gpu/run.sh, each skipped with a line where it is not installed or has
no GPU.

    python3 bench/gpu/peers.py --runs N --hlo-dir DIR WORKLOAD...

DIR holds WORKLOAD.hlo, the module axle runs (maybe shrunk); the shapes
come from its entry parameters, so the peers compute the same thing at the
same size. Prints one line per measurement, "peer WORKLOAD IMPL MS" (the
median of N runs after warm-up), and lines starting "skip" otherwise.

PyTorch: times by CUDA events. Eager composed versions beside its own
hand-written ops (torch.softmax, F.layer_norm), cuBLAS for the GEMMs (tf32
off for f32), and copy_ (device to device) as the copy ceiling.
JAX: XLA itself on the same HLO text (shared/ANCHORS.md: parse the text,
convert to StableHLO, compile, execute); timed by the host's clock around
execute and block_until_ready.
"""
import argparse
import re
import statistics
import sys
import time


def entry_parameters(text):
    """[(dtype, shape)] of the ENTRY computation's parameters, in order."""
    entry = text[text.index("\nENTRY"):]
    found = {}
    for m in re.finditer(r"=\s*(\w+)\[([\d,]*)\](?:\{[\d,]*\})?\s+parameter\((\d+)\)", entry):
        dims = tuple(int(d) for d in m.group(2).split(",") if d)
        found[int(m.group(3))] = (m.group(1), dims)
    return [found[i] for i in sorted(found)]


def median_ms(samples):
    return statistics.median(samples)


# ---- PyTorch ----

def torch_workloads(torch, name, params):
    """[(impl, thunk)] for one workload, on inputs made on the GPU."""
    F = torch.nn.functional
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    gen = torch.Generator(device="cuda").manual_seed(1)
    xs = [torch.randn(shape, dtype=dtypes[t], device="cuda", generator=gen) for t, shape in params]
    if name == "copy":
        out = torch.empty_like(xs[0])
        return [("torch.copy_", lambda: out.copy_(xs[0])), ("torch.neg", lambda: torch.neg(xs[0], out=out))]
    if name == "sum_xyz":
        x, y, z = xs
        return [("torch eager", lambda: (x + y * z).sum())]
    if name == "softmax":
        x = xs[0]

        def composed():
            e = torch.exp(x - x.amax(dim=-1, keepdim=True))
            return e / e.sum(dim=-1, keepdim=True)
        return [("torch.softmax", lambda: torch.softmax(x, dim=-1)), ("torch composed", composed)]
    if name == "layernorm":
        x, g, b = xs
        c = x.shape[-1]

        def composed():
            mean = x.mean(dim=-1, keepdim=True)
            centered = x - mean
            var = (centered * centered).mean(dim=-1, keepdim=True)
            return centered * torch.rsqrt(var + 1e-5) * g + b
        return [("F.layer_norm", lambda: F.layer_norm(x, (c,), g, b, 1e-5)), ("torch composed", composed)]
    if name.startswith("gemm"):
        a, b = xs
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        return [("torch.matmul", lambda: torch.matmul(a, b))]
    return []


def run_torch(args, modules):
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means no peer
        print(f"skip torch: not importable ({type(e).__name__}: {e})")
        return
    if not torch.cuda.is_available():
        print("skip torch: no CUDA device")
        return
    for name, params in modules:
        for impl, thunk in torch_workloads(torch, name, params):
            for _ in range(3):
                thunk()
            torch.cuda.synchronize()
            times = []
            for _ in range(args.runs):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                thunk()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
            print(f"peer {name} {impl.replace(' ', '_')} {median_ms(times):.4f}", flush=True)
        torch.cuda.empty_cache()


# ---- JAX: XLA on the same HLO text ----

def first_attribute(candidates):
    """The first of (object, dotted path) pairs that resolves, or None."""
    for base, path in candidates:
        value = base
        for part in path.split("."):
            value = getattr(value, part, None)
            if value is None:
                break
        if value is not None:
            return value
    return None


def jax_compile(jax, text, device):
    """XLA's executable for HLO text, by the route in shared/ANCHORS.md
    (jaxlib 0.11; the other spellings are older or newer jaxlibs')."""
    import jax._src.lib as jaxlib
    from jax._src.lib import xla_client
    parse = first_attribute([(xla_client, "hlo.hlo_module_from_text"), (xla_client, "_xla.hlo_module_from_text"),
                             (jaxlib, "_jax.hlo_module_from_text")])
    convert = first_attribute([(xla_client, "_xla.mlir.hlo_to_stablehlo"), (jaxlib, "_jax.mlir.hlo_to_stablehlo")])
    if parse is None or convert is None:
        raise RuntimeError("this jaxlib has no hlo_module_from_text or hlo_to_stablehlo")
    module = parse(text)
    mlir = convert(module.as_serialized_hlo_module_proto())
    return device.client.compile_and_load(mlir, xla_client.DeviceList((device,)), xla_client.CompileOptions())


def run_jax(args, modules, texts):
    try:
        import jax
        import numpy as np
    except Exception as e:  # noqa: BLE001
        print(f"skip jax: not importable ({type(e).__name__}: {e})")
        return
    try:
        device = jax.devices("gpu")[0]
    except Exception as e:  # noqa: BLE001
        print(f"skip jax: no GPU device ({e})")
        return
    import ml_dtypes  # installed with jax
    np_types = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}
    rng = np.random.default_rng(1)
    for (name, params), text in zip(modules, texts):
        try:
            exe = jax_compile(jax, text, device)
            xs = [jax.device_put(rng.standard_normal(shape, dtype=np.float32).astype(np_types[t]), device)
                  for t, shape in params]

            def once():
                outs = exe.execute(xs)
                for o in outs:
                    o.block_until_ready()
            for _ in range(3):
                once()
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                once()
                times.append((time.perf_counter() - t0) * 1e3)
            print(f"peer {name} jax/XLA {median_ms(times):.4f}", flush=True)
            del xs
        except Exception as e:  # noqa: BLE001 - one workload's failure is a line, not the end
            print(f"skip jax {name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--hlo-dir", required=True)
    ap.add_argument("workloads", nargs="+")
    args = ap.parse_args()
    texts = [open(f"{args.hlo_dir}/{w}.hlo").read() for w in args.workloads]
    modules = [(w, entry_parameters(t)) for w, t in zip(args.workloads, texts)]
    run_torch(args, modules)
    run_jax(args, modules, texts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
