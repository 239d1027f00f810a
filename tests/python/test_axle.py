"""The Python package (python/axle) against libaxle.so: each test prints
PASS or FAIL with the reason, as the unit tests do; goldens are NumPy's
(computed here, or the corpus's out*.npy that tests/gen made with NumPy).

    AXLE_LIBRARY=build/libaxle.so PYTHONPATH=python python3 tests/python/test_axle.py

Run from the repository root (tests/python.sh does, for make test)."""
import os
import re
import subprocess
import sys
import tempfile
import traceback

import numpy as np

import axle

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def expect_error(fn, status, *texts):
    """fn() must raise axle.Error of that status whose message holds every text."""
    try:
        fn()
    except axle.Error as e:
        message = str(e)
        assert e.status == status, "status %s, expected %s: %s" % (e.status, status, message)
        for t in texts:
            assert t in message, "message lacks %r:\n%s" % (t, message)
        return message
    raise AssertionError("no axle.Error raised")


ADD_ONE = """HloModule add_one
ENTRY main {
  x = f32[3] parameter(0)
  one = f32[] constant(1)
  ones = f32[3] broadcast(one), dimensions={}
  ROOT y = f32[3] add(x, ones)
}
"""

PAIR = """HloModule pair
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[2,3] parameter(0)
  doubled = f32[2,3] add(x, x)
  zero = f32[] constant(0)
  sum = f32[] reduce(x, zero), dimensions={0,1}, to_apply=add
  count = s32[] constant(6)
  ROOT r = (f32[2,3], (f32[], s32[])) tuple(doubled, (f32[], s32[]) tuple(sum, count))
}
"""


@test
def text_module_runs_on_numpy_arrays():
    for backend in ("interp", "cpu"):
        f = axle.compile(ADD_ONE, backend=backend)
        x = np.array([1, 2, -4], np.float32)
        y = f(x)
        assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (3,), repr(y)
        assert np.array_equal(y, x + 1), "%s: %r" % (backend, y)
        assert np.array_equal(f([0.5, 0, 1]), np.array([1.5, 1, 2], np.float32)), "a list is converted"


@test
def several_results_come_back_as_a_tuple_depth_first():
    f = axle.compile(PAIR)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    out = f(x)
    assert isinstance(out, tuple) and len(out) == 3, repr(out)
    doubled, total, count = out
    assert np.array_equal(doubled, 2 * x) and doubled.shape == (2, 3)
    assert total.shape == () and total == np.float32(x.sum()), total
    assert count.dtype == np.int32 and count == 6, count
    assert [r.type_name for r in f.results] == ["f32", "f32", "s32"], f.results


@test
def file_modules_match_numpys_goldens():
    # Corpus modules on their NumPy-made inputs, on the CPU backend.
    for name in ("demo_reduce_sum", "custom_call_sharding_is_identity", "sort_keys_values_descending_stable"):
        folder = os.path.join("tests", "hlo", name)
        inputs = [np.load(os.path.join(folder, "in%d.npy" % i)) for i in range(16)
                  if os.path.exists(os.path.join(folder, "in%d.npy" % i))]
        goldens = [np.load(os.path.join(folder, "out%d.npy" % i)) for i in range(16)
                   if os.path.exists(os.path.join(folder, "out%d.npy" % i))]
        rtol, atol = 0, 0
        if os.path.exists(os.path.join(folder, "tolerance")):
            rtol, atol = (float(w) for w in open(os.path.join(folder, "tolerance")).read().split()[:2])
        out = axle.compile(os.path.join("tests", "hlo", name + ".hlo"), backend="cpu")(*inputs)
        out = out if isinstance(out, tuple) else (out,)
        assert len(out) == len(goldens), "%s: %d results, %d goldens" % (name, len(out), len(goldens))
        for got, want in zip(out, goldens):
            assert got.dtype == want.dtype and got.shape == want.shape, "%s: %s%s vs %s%s" % (
                name, got.dtype, got.shape, want.dtype, want.shape)
            assert np.allclose(got, want, rtol=rtol, atol=atol), "%s: %r\nvs NumPy %r" % (name, got, want)


@test
def tuple_parameters_take_tuples_of_arrays():
    f = axle.compile("tests/hlo/syntax_tuple_parameter.hlo", backend="interp")
    a = np.array([1, 2, 3], np.float32)
    k = np.array([5, -7], np.int32)
    b = np.array([0.5, 0.25, -1], np.float32)
    s, twice = f(((a, k), b))
    assert np.array_equal(s, a + b) and np.array_equal(twice, 2 * k), (s, twice)


@test
def a_parse_error_is_an_exception_with_the_located_message():
    message = expect_error(lambda: axle.compile("HloModule m\nENTRY main {\n  x = f32[3] frobnicate()\n}\n"),
                           "parse", "<string>:3:", "error:")
    assert re.search(r"^<string>:3:\d+: error: ", message), message
    expect_error(lambda: axle.compile("tests/malformed/acos_on_integers.hlo"), "verify",
                 "acos_on_integers.hlo:5:8: error: instruction 'm' (acos): needs a floating-point type")
    expect_error(lambda: axle.compile("no/such/module.hlo"), "parse", "cannot read no/such/module.hlo")


@test
def stablehlo_and_protos_are_refused_with_the_way_out():
    mlir = open("tests/malformed/stablehlo_from_jax_lower.hlo").read()
    expect_error(lambda: axle.compile(mlir), "parse", "<string>:1:1: error: this is StableHLO (MLIR)",
                 'as_text(dialect="hlo")')
    proto = open("tests/malformed/hlo_proto_dump_binary.hlo", "rb").read()
    expect_error(lambda: axle.compile(proto), "parse", "binary HloModuleProto or HloProto")


@test
def wrong_arguments_are_refused_clearly():
    f = axle.compile(ADD_ONE)
    expect_error(lambda: f(np.zeros(4, np.float32)), "input", "parameter 0 (x) expects f32[3], got f32[4]")
    for call, says in ((lambda: f(np.zeros(3)), "expects f32[3] (NumPy float32), got a float64 array"),
                       (lambda: f(), "the module takes 1 arguments (f32[3]), 0 given")):
        try:
            call()
            raise AssertionError("no TypeError")
        except TypeError as e:
            assert says in str(e), str(e)


@test
def compile_flags_reach_the_optimizer():
    expect_error(lambda: axle.compile(ADD_ONE, flags="--no_fusion --fuse_harder"), "input",
                 "unknown optimizer flag '--fuse_harder'")
    f = axle.compile(ADD_ONE, flags=["--no_fusion", "--verify_each_pass"], threads=1)
    assert np.array_equal(f(np.zeros(3, np.float32)), np.ones(3, np.float32))
    with tempfile.TemporaryDirectory() as d:
        fused = axle.compile("examples/reduce_sum.hlo").dump(os.path.join(d, "fused"))
        plain = axle.compile("examples/reduce_sum.hlo", flags="--no_fusion").dump(os.path.join(d, "plain"))
        after = [n for n in fused if n.endswith("after_optimizations.txt")]
        assert after, "no after_optimizations dump among %s" % fused
        assert "fusion(" in open(os.path.join(d, "fused", after[0])).read(), "reduce_sum fuses by default"
        after = [n for n in plain if n.endswith("after_optimizations.txt")]
        assert after and "fusion(" not in open(os.path.join(d, "plain", after[0])).read(), "--no_fusion: no fusion"


@test
def time_reports_the_runs_it_made():
    f = axle.compile("examples/reduce_sum.hlo")
    t = f.time(5)  # zeros: f was never called
    assert t.runs == 5 and 0 < t.min_ms <= t.median_ms <= t.max_ms, t
    x = np.ones(1024, np.float32)
    assert f(x, x, x) == 2048
    t = f.time(3)
    assert t.runs == 3, t
    try:
        f.time(0)
        raise AssertionError("time(0) must be refused")
    except ValueError:
        pass


@test
def versions_agree():
    header = open("include/axle.h").read()
    numbers = [re.search(r"#define AXLE_VERSION_%s (\d+)" % part, header).group(1)
               for part in ("MAJOR", "MINOR", "PATCH")]
    project = re.search(r'^version = "([^"]+)"', open("python/pyproject.toml").read(), re.M).group(1)
    assert axle.version() == axle.__version__ == project == ".".join(numbers), (
        axle.version(), axle.__version__, project, numbers)


@test
def a_missing_library_is_an_import_error_naming_axle_library():
    env = dict(os.environ, AXLE_LIBRARY="/nonexistent/libaxle.so")
    run = subprocess.run([sys.executable, "-c", "import axle"], env=env, capture_output=True, text=True)
    assert run.returncode != 0 and "set AXLE_LIBRARY to its path" in run.stderr, run.stderr[-400:]


def main():
    failed = 0
    for fn in TESTS:
        try:
            fn()
            print("PASS python/%s" % fn.__name__)
        except Exception as e:  # a failed expectation or anything unexpected
            failed += 1
            print("FAIL python/%s" % fn.__name__)
            where = traceback.extract_tb(e.__traceback__)[-1]
            for line in ("%s: %s" % (type(e).__name__, e)).splitlines() + ["at line %d" % where.lineno]:
                print("  " + line)
        sys.stdout.flush()
    print("%d passed, %d failed" % (len(TESTS) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
