#!/usr/bin/env python3
"""Writes axle's HLO test corpus: tests/hlo/NAME.hlo, its inputs
tests/hlo/NAME/in0.npy.., the golden outputs tests/hlo/NAME/out0.npy.. and,
where needed, tests/hlo/NAME/tolerance ("rtol atol" [bf16]).

Regenerate with (Python 3 and NumPy only):   python3 tests/gen/gen_corpus.py
`--coverage` prints which opcodes and attributes each module uses.

Every golden is computed here with NumPy by reference code written for this
corpus (corpus_reference.py), never by axle. Inputs come from a generator
seeded by each case's name, so the output is the same on every run.
"""
import os
import re
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus_common  # noqa: E402
import corpus_elementwise  # noqa: E402,F401
import corpus_movement  # noqa: E402,F401
import corpus_control  # noqa: E402,F401
import corpus_reduce  # noqa: E402,F401
import corpus_linalg  # noqa: E402,F401
import corpus_models  # noqa: E402,F401
import corpus_complex  # noqa: E402,F401
import corpus_lowp  # noqa: E402,F401
import corpus_float_conversions  # noqa: E402,F401
import corpus_ops2  # noqa: E402,F401
import corpus_lapack  # noqa: E402,F401
import corpus_syntax  # noqa: E402,F401
import corpus_xla_forms  # noqa: E402,F401
import corpus_empty_index  # noqa: E402,F401
import corpus_layouts  # noqa: E402,F401
import corpus_aot  # noqa: E402,F401

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hlo")

OPCODE_RE = re.compile(r"=\s*(?:\([^=]*?\)|[a-z0-9]+\[[^\]]*\](?:\{[^}]*\})?)\s+([a-z][a-z0-9-]*)\(")
ATTR_RE = re.compile(r",\s*([a-z_]+)=")


TYPE_RE = re.compile(r"\b(pred|[suf](?:2|4|8|16|32|64)|bf16|c64|c128|f8e[0-9a-z]+|f4e2m1fn)\[")


def coverage(text):
    """(style, opcodes, attributes, element types) a module's text uses."""
    ops = set(OPCODE_RE.findall(text))
    attrs = set(ATTR_RE.findall(text)) - {"metadata", "backend_config"}
    style = "old" if re.search(r"^\s*(ROOT )?%", text, re.M) else "modern"
    return style, sorted(ops), sorted(attrs), sorted(set(TYPE_RE.findall(text)))


def main():
    np.seterr(all="ignore")
    names = [n for n, _ in corpus_common.CASES]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit("duplicate case names: %s" % ", ".join(sorted(dup)))
    if "--coverage" in sys.argv:
        print("| module | style | opcodes | attributes | types |")
        print("| --- | --- | --- | --- | --- |")
        for name, fn in corpus_common.CASES:
            style, ops, attrs, types = coverage(fn(corpus_common.rng_for(name)).hlo)
            print("| %s | %s | %s | %s | %s |" % (name, style, ", ".join(ops), ", ".join(attrs),
                                                 ", ".join(types)))
        return
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    for name, fn in corpus_common.CASES:
        corpus_common.write_case(ROOT, name, fn(corpus_common.rng_for(name)))
    print("wrote %d modules to %s" % (len(corpus_common.CASES), os.path.normpath(ROOT)))


if __name__ == "__main__":
    main()
