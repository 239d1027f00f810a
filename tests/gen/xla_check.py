#!/usr/bin/env python3
"""Checks axle's front end against HLO text from XLA's own repository.

A development script, not part of `make test`: XLA's files are not copied
into this project. Fetch them yourself into a folder (e.g. /tmp/xla-check):

  DIR/hlo/*.hlo           .hlo files from openxla/xla (tests, benchmarks, tools)
  DIR/parser_test/pos_*.hlo   module strings hlo_parser_test.cc parses
  DIR/parser_test/neg_*.hlo   module strings hlo_parser_test.cc expects to fail

then run   python3 tests/gen/xla_check.py DIR [build/axle-run]

Each file goes through `axle-run --parse-only` (load) and, if it loads,
`axle-run --backend interp --seed 1` (run). Positive files should load; a
negative file should be refused with a located FILE:LINE:COL error. The
summary counts each outcome and groups refusals by reason, marking the
reasons that belong to work elsewhere (element types, opcodes not built
yet) apart from syntax the parser should accept.
"""
import collections
import glob
import os
import re
import subprocess
import sys

# Refusal messages, first match wins: (pattern, class, label).
# class "later": an element type or opcode other work adds; "scope": outside
# what axle means to run (tokens, dynamic shapes, multi-device, legacy
# forms); "invalid": a module XLA's verifier refuses too; "syntax":
# something the front end itself should accept.
REASONS = [
    (r"unsupported element type '(f8\w*|f4\w*|s4|u4|s2|u2|s1|u1|c64|c128)'", "later", "element type {0}"),
    (r"unsupported element type '(\w+)'", "later", "element type {0}"),
    (r"unknown opcode '(\w[\w-]*)'", "later", "opcode {0}"),
    (r"token shapes are not supported", "scope", "token shapes"),
    (r"needs (\d+) devices; this run has 1", "scope", "needs {0} devices"),
    (r"unbounded dynamic dimensions are not supported", "scope", "unbounded dynamic dimensions (f32[?])"),
    (r"shape has more than 2\^40 elements", "scope", "more than 2^40 elements"),
    (r"expected 'HloModule' or a computation", "invalid", "not an HLO module (MLIR or another input format)"),
    (r"'collective-permute' takes 1 operand, found 4", "scope", "in-place collective-permute (4 operands)"),
    (r"'dynamic-(update-)?slice' \(dynamic-(update-)?slice\): (needs \d+ scalar)", "scope",
     "dynamic-slice with one vector of start indices (old form)"),
    (r"dynamic shapes are not supported", "scope", "dynamic shapes"),
    (r"attribute '(\w[\w-]*)' on '([\w-]+)' is not supported", "scope", "attribute {0} on {1}"),
    (r"unknown attribute '([\w-]+)' on '([\w-]+)'", "syntax", "unknown attribute {0} on {1}"),
    (r"unknown module attribute '(\w+)'", "syntax", "unknown module attribute {0}"),
    (r"attribute '(\w+)' does not apply to '([\w-]+)'", "syntax", "attribute {0} on {1}"),
    (r"the shape of '([\w-]+)' cannot be inferred", "syntax", "shape left out on {0}"),
    (r"\((all-gather|reduce-scatter|all-to-all)\): declared shape", "scope",
     "{0} over several devices (axle runs one device)"),
    (r"declared shape (\S+) does not match the inferred shape (\S+)", "invalid",
     "declared shape {0} is not the inferred {1} (XLA's verifier refuses it too)"),
    (r"error: (.{0,60})", "other", "{0}"),
]


def classify(message):
    for pattern, kind, label in REASONS:
        m = re.search(pattern, message)
        if m:
            return kind, label.format(*m.groups())
    return "other", message.strip()[:60]


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, "error: timed out after 120 s"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    axle = sys.argv[2] if len(sys.argv) > 2 else "build/axle-run"
    groups = {
        "xla .hlo files": sorted(glob.glob(os.path.join(root, "hlo", "**", "*.hlo"), recursive=True)),
        "parser test, positive": sorted(glob.glob(os.path.join(root, "parser_test", "pos_*.hlo"))),
        "parser test, negative": sorted(glob.glob(os.path.join(root, "parser_test", "neg_*.hlo"))),
    }
    for group, files in groups.items():
        if not files:
            continue
        negative = "negative" in group
        counts = collections.Counter()
        reasons = collections.Counter()
        print("== %s (%d files)" % (group, len(files)))
        for path in files:
            name = os.path.relpath(path, root)
            rc, out = run([axle, "--parse-only", path])
            first_error = next((l for l in out.splitlines() if "error:" in l), "")
            located = re.match(r"^[^ ]+:\d+:\d+: error: ", first_error) is not None
            if negative:
                if rc == 0:
                    counts["accepted (should be refused)"] += 1
                    print("  ACCEPTED %s" % name)
                elif located:
                    counts["refused, located"] += 1
                    print("  refused  %s: %s" % (name, first_error.split("error: ", 1)[1][:90]))
                else:
                    counts["refused, not located"] += 1
                    print("  UNLOCATED %s (rc %d): %s" % (name, rc, first_error[:90]))
                continue
            if rc != 0:
                kind, label = classify(first_error or out)
                counts["refused"] += 1
                reasons[(kind, label)] += 1
                print("  refused  %s: [%s] %s" % (name, kind, label))
                continue
            counts["loaded"] += 1
            rc, out = run([axle, "--backend", "interp", "--seed", "1", path])
            if rc == 0:
                counts["loaded and ran"] += 1
            else:
                first_error = next((l for l in out.splitlines() if "error:" in l), out.strip()[:80])
                # Exit 2 with FILE:LINE:COL: refused when compiled, with a reason.
                if rc == 2 and re.match(r"^[^ ]+:\d+:\d+: error: ", first_error):
                    counts["loaded, refused when compiled"] += 1
                    print("  compile refused %s: %s" % (name, first_error.split("error: ", 1)[1][:100]))
                else:
                    counts["loaded, run failed"] += 1
                    print("  run failed %s: %s" % (name, first_error[:100]))
        print("  -- " + ", ".join("%s: %d" % kv for kv in sorted(counts.items())))
        for (kind, label), n in sorted(reasons.items(), key=lambda kv: (kv[0][0], -kv[1])):
            print("     %-6s %3d  %s" % (kind, n, label))


if __name__ == "__main__":
    main()
