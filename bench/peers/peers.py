#!/usr/bin/env python3
"""make bench's Python peers: PyTorch eager and NumPy, called as their users
call them, on the workloads of bench/run.sh (one thread: the caller sets the
thread variables and pins the process; torch.set_num_threads(1) here).

    python3 bench/peers/peers.py --serve

reads lines "WORKLOAD RUNS" on stdin and answers, for each implementation
of that workload, "peer IMPL MS" (the median wall time of RUNS calls after a
warm-up) or "missing IMPL WHY", then "end". The inputs of a workload are
made once (random f32, the shapes of its module in bench/hlo) and kept
while the same workload is asked for again, so bench/run.sh can interleave
rounds of axle and the peers without paying Python's start-up each time.
"""
import statistics
import sys
import time


def load(name):
    try:
        return __import__(name), None
    except ImportError as e:
        return None, str(e).replace("\n", " ")


np, np_missing = load("numpy")
torch, torch_missing = load("torch")
if torch:
    torch.set_num_threads(1)
    F = torch.nn.functional


def gemm_shape(name):
    """M, K, N of "gemm_MxKxN"."""
    return tuple(int(d) for d in name.split("_")[1].split("x"))


def torch_impls(name):
    """[(impl, thunk)]: PyTorch eager on the workload's inputs."""
    g = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, generator=g)

    if name.startswith("softmax_"):
        rows, cols = (int(d) for d in name.split("_")[1].split("x"))
        x = randn(rows, cols)

        def composed():
            e = torch.exp(x - x.amax(dim=-1, keepdim=True))
            return e / e.sum(dim=-1, keepdim=True)
        return [("torch.softmax", lambda: torch.softmax(x, dim=-1)), ("torch.composed", composed)]
    if name.startswith("layernorm_"):
        x, gamma, beta = randn(4096, 768), randn(768), randn(768)

        def composed():
            mean = x.mean(dim=-1, keepdim=True)
            centered = x - mean
            var = (centered * centered).mean(dim=-1, keepdim=True)
            return centered * torch.rsqrt(var + 1e-5) * gamma + beta
        return [("F.layer_norm", lambda: F.layer_norm(x, (768,), gamma, beta, 1e-5)), ("torch.composed", composed)]
    if name.startswith("gemm_"):
        m, k, n = gemm_shape(name)
        a, b = randn(m, k), randn(k, n)
        return [("torch.matmul", lambda: torch.matmul(a, b))]
    if name.startswith("dense_"):
        x, w, b = randn(256, 784), randn(784, 512), randn(512)
        return [("torch.eager", lambda: torch.relu(x @ w + b))]
    if name.startswith("mlp_train"):
        x, labels = randn(256, 784), torch.randint(0, 10, (256,), generator=g)
        params = [(randn(784, 512) * 0.05).requires_grad_(), torch.zeros(512, requires_grad=True),
                  (randn(512, 10) * 0.05).requires_grad_(), torch.zeros(10, requires_grad=True)]

        def step():
            w1, b1, w2, b2 = params
            loss = F.cross_entropy(torch.relu(x @ w1 + b1) @ w2 + b2, labels)
            loss.backward()
            with torch.no_grad():
                for p in params:
                    p -= 0.01 * p.grad
                    p.grad = None
            return loss
        return [("torch.autograd", step)]
    if name.startswith("lstm_cell"):
        x, h, c = randn(64, 256), randn(64, 256), randn(64, 256)
        wx, wh, b = randn(256, 1024) * 0.05, randn(256, 1024) * 0.05, randn(1024)
        cell = torch.nn.LSTMCell(256, 256)

        def composed():
            i, f, gg, o = (x @ wx + h @ wh + b).chunk(4, dim=1)
            c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
            return torch.sigmoid(o) * torch.tanh(c_new), c_new

        def module():
            with torch.no_grad():
                return cell(x, (h, c))
        return [("torch.composed", composed), ("nn.LSTMCell", module)]
    if name.startswith("attention_"):
        q, k, v = randn(8, 12, 512, 64), randn(8, 12, 512, 64), randn(8, 12, 512, 64)

        def eager():
            return torch.matmul(torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * 0.125, dim=-1), v)
        return [("torch.eager", eager)]
    if name.startswith("conv3x3_"):
        x, w = randn(32, 64, 56, 56), randn(64, 64, 3, 3)
        return [("F.conv2d", lambda: F.conv2d(x, w, padding=1))]
    if name.startswith("sum_xyz"):
        x, y, z = randn(16 << 20), randn(16 << 20), randn(16 << 20)
        return [("torch.eager", lambda: (x + y * z).sum())]
    return []


def numpy_impls(name):
    """[(impl, thunk)]: NumPy on the workload's inputs, f32 throughout."""
    rng = np.random.default_rng(1)

    def randn(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    if name.startswith("softmax_"):
        rows, cols = (int(d) for d in name.split("_")[1].split("x"))
        x = randn(rows, cols)

        def softmax():
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
        return [("numpy", softmax)]
    if name.startswith("layernorm_"):
        x, gamma, beta = randn(4096, 768), randn(768), randn(768)

        def layernorm():
            centered = x - x.mean(axis=-1, keepdims=True)
            var = (centered * centered).mean(axis=-1, keepdims=True)
            return centered / np.sqrt(var + np.float32(1e-5)) * gamma + beta
        return [("numpy", layernorm)]
    if name.startswith("gemm_"):
        m, k, n = gemm_shape(name)
        a, b = randn(m, k), randn(k, n)
        return [("numpy", lambda: a @ b)]
    if name.startswith("dense_"):
        x, w, b = randn(256, 784), randn(784, 512), randn(512)
        return [("numpy", lambda: np.maximum(x @ w + b, np.float32(0)))]
    if name.startswith("sum_xyz"):
        x, y, z = randn(16 << 20), randn(16 << 20), randn(16 << 20)
        return [("numpy", lambda: np.sum(x + y * z))]
    return []


def median_ms(thunk, runs):
    thunk()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        thunk()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


# The implementations each workload has, whether or not installed (so an
# absent library is a "missing" row, not a silent gap).
TORCH_NAMES = {"softmax_": ["torch.softmax", "torch.composed"], "layernorm_": ["F.layer_norm", "torch.composed"],
               "gemm_": ["torch.matmul"], "dense_": ["torch.eager"], "mlp_train": ["torch.autograd"],
               "lstm_cell": ["torch.composed", "nn.LSTMCell"], "attention_": ["torch.eager"],
               "conv3x3_": ["F.conv2d"], "sum_xyz": ["torch.eager"]}
NUMPY_PREFIXES = ("softmax_", "layernorm_", "gemm_", "dense_", "sum_xyz")


def serve():
    current, impls = None, []
    for line in sys.stdin:
        fields = line.split()
        if len(fields) != 2:
            print(f"error: expected 'WORKLOAD RUNS', got {line.strip()!r}", flush=True)
            print("end", flush=True)
            continue
        name, runs = fields[0], int(fields[1])
        if name != current:
            current, impls = name, []
            for prefix, names in TORCH_NAMES.items():
                if name.startswith(prefix):
                    impls += torch_impls(name) if torch else [(n, torch_missing) for n in names]
            if name.startswith(NUMPY_PREFIXES):
                impls += numpy_impls(name) if np else [("numpy", np_missing)]
        for impl, thunk in impls:
            if isinstance(thunk, str):
                print(f"missing {impl} {thunk}", flush=True)
            else:
                print(f"peer {impl} {median_ms(thunk, runs):.4f}", flush=True)
        print("end", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] != ["--serve"]:
        sys.exit("usage: peers.py --serve  (then 'WORKLOAD RUNS' lines on stdin)")
    serve()
