"""The two models of examples/aot (docs/aot.md): the HLO is written the way
JAX lowers the Python beside each function, and the goldens are NumPy's
forward pass in float64.

  aot_mlp_classifier  a 64-32-10 classifier with its weights frozen into
                      the module as constants (tfcompile's way): x f32[4,64]
                      -> (softmax probabilities f32[4,10], argmax s32[4])
  lstm                three stacked LSTM layers of 60 units over a sequence
                      of 8 steps of 32 features, unrolled as a Python loop
                      over time lowers, the weights as parameters (JAX's
                      jit(f)(params, xs)) -> the top layer's h, f32[8,60].
                      Not a corpus case: the GPU simulator takes minutes on
                      its 48 dots. tests/aot/lstm.hlo and tests/aot/lstm/,
                      which tests/aot/aot.sh runs.

examples/aot/mlp_classifier.hlo and lstm.hlo are links to these modules.
`python3 tests/gen/corpus_aot.py` rewrites just these two (gen_corpus.py
writes the corpus case among the others).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpus_common import Case, case, literal_text, rng_for, write_case  # noqa: E402

BATCH, FEATURES, HIDDEN, CLASSES = 4, 64, 32, 10


def f64(a):
    return np.asarray(a, dtype=np.float64)


@case("aot_mlp_classifier")
def mlp_classifier(rng):
    """def classify(x):                                  # x: f32[4, 64]
         h = jax.nn.relu(x @ W1 + b1)                    # W1, b1, W2, b2: constants
         logits = h @ W2 + b2
         return jax.nn.softmax(logits), jnp.argmax(logits, axis=1)"""
    x = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
    w1 = (rng.standard_normal((FEATURES, HIDDEN)) / np.sqrt(FEATURES)).astype(np.float32)
    b1 = (rng.standard_normal(HIDDEN) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, CLASSES)) / np.sqrt(HIDDEN)).astype(np.float32)
    b2 = (rng.standard_normal(CLASSES) * 0.1).astype(np.float32)
    src = 'source_file="classify.py"'
    hlo = f"""HloModule jit_classify, entry_computation_layout={{(f32[{BATCH},{FEATURES}]{{1,0}})->(f32[{BATCH},{CLASSES}]{{1,0}}, s32[{BATCH}]{{0}})}}

%region_max (Arg_0.1: f32[], Arg_1.2: f32[]) -> f32[] {{
  %Arg_0.1 = f32[] parameter(0)
  %Arg_1.2 = f32[] parameter(1)
  ROOT %maximum.3 = f32[] maximum(f32[] %Arg_0.1, f32[] %Arg_1.2)
}}

%region_add (Arg_0.4: f32[], Arg_1.5: f32[]) -> f32[] {{
  %Arg_0.4 = f32[] parameter(0)
  %Arg_1.5 = f32[] parameter(1)
  ROOT %add.6 = f32[] add(f32[] %Arg_0.4, f32[] %Arg_1.5)
}}

%region_argmax (Arg_0.7: f32[], Arg_1.8: s32[], Arg_2.9: f32[], Arg_3.10: s32[]) -> (f32[], s32[]) {{
  %Arg_0.7 = f32[] parameter(0)
  %Arg_2.9 = f32[] parameter(2)
  %compare.11 = pred[] compare(f32[] %Arg_0.7, f32[] %Arg_2.9), direction=GT
  %compare.12 = pred[] compare(f32[] %Arg_0.7, f32[] %Arg_2.9), direction=EQ
  %Arg_1.8 = s32[] parameter(1)
  %Arg_3.10 = s32[] parameter(3)
  %compare.13 = pred[] compare(s32[] %Arg_1.8, s32[] %Arg_3.10), direction=LT
  %and.14 = pred[] and(pred[] %compare.12, pred[] %compare.13)
  %or.15 = pred[] or(pred[] %compare.11, pred[] %and.14)
  %select.16 = f32[] select(pred[] %or.15, f32[] %Arg_0.7, f32[] %Arg_2.9)
  %select.17 = s32[] select(pred[] %or.15, s32[] %Arg_1.8, s32[] %Arg_3.10)
  ROOT %tuple.18 = (f32[], s32[]) tuple(f32[] %select.16, s32[] %select.17)
}}

ENTRY %main.40 (Arg_0.19: f32[{BATCH},{FEATURES}]) -> (f32[{BATCH},{CLASSES}], s32[{BATCH}]) {{
  %Arg_0.19 = f32[{BATCH},{FEATURES}]{{1,0}} parameter(0)
  %constant.20 = f32[{FEATURES},{HIDDEN}]{{1,0}} constant({literal_text(w1)})
  %dot.21 = f32[{BATCH},{HIDDEN}]{{1,0}} dot(f32[{BATCH},{FEATURES}]{{1,0}} %Arg_0.19, f32[{FEATURES},{HIDDEN}]{{1,0}} %constant.20), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="jit(classify)/jit(main)/dot_general" {src} source_line=2}}
  %constant.22 = f32[{HIDDEN}]{{0}} constant({literal_text(b1)})
  %broadcast.23 = f32[{BATCH},{HIDDEN}]{{1,0}} broadcast(f32[{HIDDEN}]{{0}} %constant.22), dimensions={{1}}
  %add.24 = f32[{BATCH},{HIDDEN}]{{1,0}} add(f32[{BATCH},{HIDDEN}]{{1,0}} %dot.21, f32[{BATCH},{HIDDEN}]{{1,0}} %broadcast.23), metadata={{op_name="jit(classify)/jit(main)/add" {src} source_line=2}}
  %constant.25 = f32[] constant(0)
  %broadcast.26 = f32[{BATCH},{HIDDEN}]{{1,0}} broadcast(f32[] %constant.25), dimensions={{}}
  %maximum.27 = f32[{BATCH},{HIDDEN}]{{1,0}} maximum(f32[{BATCH},{HIDDEN}]{{1,0}} %add.24, f32[{BATCH},{HIDDEN}]{{1,0}} %broadcast.26), metadata={{op_name="jit(classify)/jit(main)/relu/max" {src} source_line=2}}
  %constant.28 = f32[{HIDDEN},{CLASSES}]{{1,0}} constant({literal_text(w2)})
  %dot.29 = f32[{BATCH},{CLASSES}]{{1,0}} dot(f32[{BATCH},{HIDDEN}]{{1,0}} %maximum.27, f32[{HIDDEN},{CLASSES}]{{1,0}} %constant.28), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="jit(classify)/jit(main)/dot_general" {src} source_line=3}}
  %constant.30 = f32[{CLASSES}]{{0}} constant({literal_text(b2)})
  %broadcast.31 = f32[{BATCH},{CLASSES}]{{1,0}} broadcast(f32[{CLASSES}]{{0}} %constant.30), dimensions={{1}}
  %add.32 = f32[{BATCH},{CLASSES}]{{1,0}} add(f32[{BATCH},{CLASSES}]{{1,0}} %dot.29, f32[{BATCH},{CLASSES}]{{1,0}} %broadcast.31), metadata={{op_name="jit(classify)/jit(main)/add" {src} source_line=3}}
  %constant.33 = f32[] constant(-inf)
  %reduce.34 = f32[{BATCH}]{{0}} reduce(f32[{BATCH},{CLASSES}]{{1,0}} %add.32, f32[] %constant.33), dimensions={{1}}, to_apply=%region_max, metadata={{op_name="jit(classify)/jit(main)/reduce_max" {src} source_line=4}}
  %broadcast.35 = f32[{BATCH},{CLASSES}]{{1,0}} broadcast(f32[{BATCH}]{{0}} %reduce.34), dimensions={{0}}
  %subtract.36 = f32[{BATCH},{CLASSES}]{{1,0}} subtract(f32[{BATCH},{CLASSES}]{{1,0}} %add.32, f32[{BATCH},{CLASSES}]{{1,0}} %broadcast.35), metadata={{op_name="jit(classify)/jit(main)/sub" {src} source_line=4}}
  %exponential.37 = f32[{BATCH},{CLASSES}]{{1,0}} exponential(f32[{BATCH},{CLASSES}]{{1,0}} %subtract.36), metadata={{op_name="jit(classify)/jit(main)/exp" {src} source_line=4}}
  %constant.38 = f32[] constant(0)
  %reduce.39 = f32[{BATCH}]{{0}} reduce(f32[{BATCH},{CLASSES}]{{1,0}} %exponential.37, f32[] %constant.38), dimensions={{1}}, to_apply=%region_add, metadata={{op_name="jit(classify)/jit(main)/reduce_sum" {src} source_line=4}}
  %broadcast.41 = f32[{BATCH},{CLASSES}]{{1,0}} broadcast(f32[{BATCH}]{{0}} %reduce.39), dimensions={{0}}
  %divide.42 = f32[{BATCH},{CLASSES}]{{1,0}} divide(f32[{BATCH},{CLASSES}]{{1,0}} %exponential.37, f32[{BATCH},{CLASSES}]{{1,0}} %broadcast.41), metadata={{op_name="jit(classify)/jit(main)/div" {src} source_line=4}}
  %iota.43 = s32[{BATCH},{CLASSES}]{{1,0}} iota(), iota_dimension=1, metadata={{op_name="jit(classify)/jit(main)/argmax" {src} source_line=4}}
  %constant.44 = s32[] constant(0)
  %reduce.45 = (f32[{BATCH}]{{0}}, s32[{BATCH}]{{0}}) reduce(f32[{BATCH},{CLASSES}]{{1,0}} %add.32, s32[{BATCH},{CLASSES}]{{1,0}} %iota.43, f32[] %constant.33, s32[] %constant.44), dimensions={{1}}, to_apply=%region_argmax, metadata={{op_name="jit(classify)/jit(main)/argmax" {src} source_line=4}}
  %get-tuple-element.46 = s32[{BATCH}]{{0}} get-tuple-element((f32[{BATCH}]{{0}}, s32[{BATCH}]{{0}}) %reduce.45), index=1
  ROOT %tuple.47 = (f32[{BATCH},{CLASSES}]{{1,0}}, s32[{BATCH}]{{0}}) tuple(f32[{BATCH},{CLASSES}]{{1,0}} %divide.42, s32[{BATCH}]{{0}} %get-tuple-element.46)
}}"""
    logits = np.maximum(f64(x) @ f64(w1) + b1, 0) @ f64(w2) + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    return Case(hlo, [x], [probs.astype(np.float32), logits.argmax(axis=1).astype(np.int32)], tol=(1e-4, 1e-6))


STEPS, INPUTS, UNITS, LAYERS = 8, 32, 60, 3


class HloWriter:
    """Instructions numbered as JAX numbers them (%op.N), with metadata."""

    def __init__(self):
        self.lines, self.n = [], 0

    def add(self, shape, text, op=None, line=None):
        self.n += 1
        name = "%%%s.%d" % (text.split("(")[0], self.n)
        meta = ""
        if op:
            meta = ', metadata={op_name="jit(lstm)/jit(main)/%s" source_file="lstm.py" source_line=%d}' % (op, line)
        self.lines.append("  %s = %s %s%s" % (name, shape, text, meta))
        return name


def lstm(rng):
    """def cell(p, h, c, x):                             # lstm.py
         z = x @ p.wx + h @ p.wh + p.b                   # line 3
         i, f, g, o = jnp.split(z, 4, axis=1)            # line 4
         c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)   # line 5
         return jax.nn.sigmoid(o) * jnp.tanh(c), c       # line 6

       def lstm(params, xs):                             # xs: f32[8, 32]
         h = [jnp.zeros((1, 60))] * 3; c = list(h)
         outs = []
         for t in range(8):                              # unrolled by Python
           x = xs[t:t + 1]
           for l in range(3):
             h[l], c[l] = cell(params[l], h[l], c[l], x); x = h[l]
           outs.append(x)
         return jnp.concatenate(outs)                    # line 14"""
    G = 4 * UNITS
    xs = rng.standard_normal((STEPS, INPUTS)).astype(np.float32)
    weights = []
    for layer in range(LAYERS):
        fan_in = INPUTS if layer == 0 else UNITS
        wx = (rng.standard_normal((fan_in, G)) / np.sqrt(fan_in)).astype(np.float32)
        wh = (rng.standard_normal((UNITS, G)) / np.sqrt(UNITS)).astype(np.float32)
        b = (rng.standard_normal(G) * 0.1).astype(np.float32)
        weights += [wx, wh, b]
    w = HloWriter()
    params = ["%%Arg_0.0 = f32[%d,%d]{1,0} parameter(0)" % (STEPS, INPUTS)]
    shapes = ["f32[%d,%d]" % (STEPS, INPUTS)]
    names = []
    for k, a in enumerate(weights):
        shape = "f32[%s]" % ",".join(str(d) for d in a.shape)
        layout = "{1,0}" if a.ndim == 2 else "{0}"
        params.append("%%Arg_%d.%d = %s%s parameter(%d)" % (k + 1, k + 1, shape, layout, k + 1))
        shapes.append(shape)
        names.append("%%Arg_%d.%d" % (k + 1, k + 1))
    w.n = len(weights) + 1
    row = "f32[1,%d]{1,0}" % UNITS
    zero = w.add("f32[]", "constant(0)")
    h = [w.add(row, "broadcast(f32[] %s), dimensions={}" % zero)] * LAYERS
    c = list(h)
    outs = []
    for t in range(STEPS):
        x = w.add("f32[1,%d]{1,0}" % INPUTS, "slice(f32[%d,%d]{1,0} %%Arg_0.0), slice={[%d:%d], [0:%d]}"
                  % (STEPS, INPUTS, t, t + 1, INPUTS), "slice", 10)
        width = INPUTS
        for layer in range(LAYERS):
            wx, wh, b = names[3 * layer:3 * layer + 3]
            gates = "f32[1,%d]{1,0}" % G
            xw = w.add(gates, "dot(f32[1,%d]{1,0} %s, f32[%d,%d]{1,0} %s), lhs_contracting_dims={1}, "
                       "rhs_contracting_dims={0}" % (width, x, width, G, wx), "dot_general", 3)
            hw = w.add(gates, "dot(%s %s, f32[%d,%d]{1,0} %s), lhs_contracting_dims={1}, rhs_contracting_dims={0}"
                       % (row, h[layer], UNITS, G, wh), "dot_general", 3)
            s = w.add(gates, "add(%s %s, %s %s)" % (gates, xw, gates, hw), "add", 3)
            bb = w.add(gates, "broadcast(f32[%d]{0} %s), dimensions={1}" % (G, b))
            z = w.add(gates, "add(%s %s, %s %s)" % (gates, s, gates, bb), "add", 3)
            part = [w.add(row, "slice(%s %s), slice={[0:1], [%d:%d]}" % (gates, z, k * UNITS, (k + 1) * UNITS),
                          "split", 4) for k in range(4)]
            i = w.add(row, "logistic(%s %s)" % (row, part[0]), "logistic", 5)
            f = w.add(row, "logistic(%s %s)" % (row, part[1]), "logistic", 5)
            g = w.add(row, "tanh(%s %s)" % (row, part[2]), "tanh", 5)
            fc = w.add(row, "multiply(%s %s, %s %s)" % (row, f, row, c[layer]), "mul", 5)
            ig = w.add(row, "multiply(%s %s, %s %s)" % (row, i, row, g), "mul", 5)
            c[layer] = w.add(row, "add(%s %s, %s %s)" % (row, fc, row, ig), "add", 5)
            o = w.add(row, "logistic(%s %s)" % (row, part[3]), "logistic", 6)
            tc = w.add(row, "tanh(%s %s)" % (row, c[layer]), "tanh", 6)
            h[layer] = w.add(row, "multiply(%s %s, %s %s)" % (row, o, row, tc), "mul", 6)
            x, width = h[layer], UNITS
        outs.append(x)
    out = "f32[%d,%d]{1,0}" % (STEPS, UNITS)
    root = "concatenate(%s), dimensions={0}" % ", ".join("%s %s" % (row, o) for o in outs)
    w.add(out, root, "concatenate", 14)
    w.lines[-1] = "  ROOT" + w.lines[-1][1:]
    layout = ", ".join(s + ("{1,0}" if "," in s else "{0}") for s in shapes)
    hlo = ("HloModule jit_lstm, entry_computation_layout={(%s)->%s{1,0}}\n\n" % (layout, out[:-5])
           + "ENTRY %%main (%s) -> %s {\n" % (", ".join("Arg_%d.%d: %s" % (k, k, s) for k, s in enumerate(shapes)),
                                             out[:-5])
           + "\n".join("  " + p for p in params) + "\n" + "\n".join(w.lines) + "\n}")

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))
    hs = [np.zeros((1, UNITS))] * LAYERS
    cs = list(hs)
    tops = []
    for t in range(STEPS):
        x = f64(xs[t:t + 1])
        for layer in range(LAYERS):
            wx, wh, b = (f64(a) for a in weights[3 * layer:3 * layer + 3])
            z = x @ wx + hs[layer] @ wh + b
            i, f, g, o = (z[:, k * UNITS:(k + 1) * UNITS] for k in range(4))
            cs[layer] = sigmoid(f) * cs[layer] + sigmoid(i) * np.tanh(g)
            hs[layer] = sigmoid(o) * np.tanh(cs[layer])
            x = hs[layer]
        tops.append(x)
    return Case(hlo, [xs] + weights, [np.concatenate(tops).astype(np.float32)], tol=(1e-4, 1e-5))


if __name__ == "__main__":
    tests = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    for root, name, fn in ((os.path.join(tests, "hlo"), "aot_mlp_classifier", mlp_classifier),
                           (os.path.join(tests, "aot"), "lstm", lstm)):
        write_case(root, name, fn(rng_for("aot_" + name if name == "lstm" else name)))
        print("wrote", os.path.normpath(os.path.join(root, name + ".hlo")))
