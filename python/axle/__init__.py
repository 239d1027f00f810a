"""axle from Python: compile an XLA HLO module, call it on NumPy arrays.

    import axle
    f = axle.compile(hlo_text_or_path, backend="cpu")   # "interp", "cpu", "gpu"
    out = f(x, y)            # a NumPy array, or a tuple of them for several results
    f.time(100)              # median/min/max milliseconds of 100 runs
    f.dump("dumps/")         # the optimizer's dumps, kernels and listings

Errors are axle.Error, whose message is axle's own, located in the module
text. Element types map to NumPy's; those NumPy lacks travel as their bits or
values, as axle's .npy files carry them: bf16 as uint16 bits (an ml_dtypes
bfloat16 array is accepted too), the 8- and 4-bit floats as uint8 bits, s4/s2
as int8 and u4/u2 as uint8 values.

A pure-Python package: libaxle.so does the work (see axle/_capi.py for how
it is found)."""
import ctypes
import os
import time as _time
from collections import namedtuple

import numpy as np

from axle._capi import CompileOptions, Error, check, lib, library_path

__all__ = ["compile", "Function", "Error", "Timing", "version", "library_path", "__version__"]

__version__ = "0.1.0"

BACKENDS = {"interp": 0, "cpu": 1, "gpu": 2}

_DTYPES = {
    "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
    "c64": np.complex64, "c128": np.complex128,
    "s4": np.int8, "s2": np.int8, "u4": np.uint8, "u2": np.uint8,
}
# NumPy's dtype to the axle type it is taken for in a tuple argument: the
# first name above with that dtype (uint16 is u16, not bf16).
_AXLE_TYPE_OF = {}
for _name, _np in _DTYPES.items():
    _AXLE_TYPE_OF.setdefault(np.dtype(_np), _name)
_TYPE_COUNT = 30  # axle_type_t's values, AXLE_PRED .. AXLE_TUPLE
_TYPE_NAMES = [lib.axle_type_name(t).decode() for t in range(_TYPE_COUNT)]
_TYPE_IDS = {name: t for t, name in enumerate(_TYPE_NAMES)}


def _dtype(type_name):
    if type_name in _DTYPES:
        return np.dtype(_DTYPES[type_name])
    if type_name.startswith(("f8", "f4")):
        return np.dtype(np.uint8)  # bits
    return None  # token, tuple: no array


def version():
    """libaxle's version, "MAJOR.MINOR.PATCH"."""
    return lib.axle_version().decode()


Timing = namedtuple("Timing", "median_ms min_ms max_ms runs")
Timing.__doc__ = "Wall-clock milliseconds per run (results written in place, arguments ready)."

_Spec = namedtuple("_Spec", "type_name shape dtype")


def _spec_str(spec):
    return "%s[%s]" % (spec.type_name, ",".join(str(d) for d in spec.shape))


def _parse(hlo):
    """The text or file given, as an axle_module_t pointer."""
    error = ctypes.c_void_p()
    if isinstance(hlo, os.PathLike) or (isinstance(hlo, str) and "\n" not in hlo and "{" not in hlo):
        module = lib.axle_module_parse_file(os.fsencode(hlo), ctypes.byref(error))
    else:
        data = hlo.encode() if isinstance(hlo, str) else bytes(hlo)
        module = lib.axle_module_parse(data, len(data), b"<string>", ctypes.byref(error))
    check(module, error)
    return module


def _aligned_empty(shape, dtype):
    """An uninitialized C-order array at a 64-byte boundary (axle writes
    results in place and asks for 16)."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    return raw[start:start + nbytes].view(dtype).reshape(shape)


class Function:
    """A compiled module, callable on NumPy arrays. Made by axle.compile."""

    def __init__(self, module, backend, threads, flags):
        self._module, self._exe = module, None
        self.backend, self._threads, self._flags = backend, threads, flags
        self._exe = self._compile(None)
        self.parameters = [self._parameter(i) for i in range(lib.axle_module_parameter_count(module))]
        self.results = [self._result(i) for i in range(lib.axle_executable_result_count(self._exe))]
        self._last_args = None

    def _compile(self, dump_dir):
        options = CompileOptions(self._threads, self._flags.encode() if self._flags else None,
                                 os.fsencode(dump_dir) if dump_dir else None)
        error = ctypes.c_void_p()
        exe = lib.axle_compile_with(self._module, BACKENDS[self.backend], ctypes.byref(options),
                                    ctypes.byref(error))
        check(exe, error)
        return exe

    def _parameter(self, i):
        name = _TYPE_NAMES[lib.axle_module_parameter_type(self._module, i)]
        shape = tuple(lib.axle_module_parameter_dim(self._module, i, d)
                      for d in range(max(lib.axle_module_parameter_rank(self._module, i), 0)))
        return _Spec(name, shape, _dtype(name))

    def _result(self, i):
        name = _TYPE_NAMES[lib.axle_executable_result_type(self._exe, i)]
        shape = tuple(lib.axle_executable_result_dim(self._exe, i, d)
                      for d in range(lib.axle_executable_result_rank(self._exe, i)))
        return _Spec(name, shape, _dtype(name))

    def __del__(self):
        if lib is None:  # the interpreter is shutting down: the process frees it all
            return
        if getattr(self, "_exe", None):
            lib.axle_executable_free(self._exe)
        if getattr(self, "_module", None):
            lib.axle_module_free(self._module)

    def __repr__(self):
        return "<axle.Function on %s: (%s) -> (%s)>" % (
            self.backend, ", ".join(map(_spec_str, self.parameters)), ", ".join(map(_spec_str, self.results)))

    # ---- arguments ----

    def _buffer(self, value, spec, index):
        """A new axle_buffer_t holding value, for parameter index."""
        if spec.type_name == "tuple":
            if not isinstance(value, (tuple, list)):
                raise TypeError("parameter %d is a tuple: pass a tuple of arrays" % index)
            return self._tuple_buffer(value, index)
        if spec.dtype is None:
            raise TypeError("parameter %d is %s, which takes no array" % (index, spec.type_name))
        if isinstance(value, np.ndarray):
            if spec.type_name == "bf16" and value.dtype.name == "bfloat16":
                value = value.view(np.uint16)
            if value.dtype != spec.dtype:
                raise TypeError("parameter %d expects %s (NumPy %s), got a %s array: convert it with "
                                ".astype(np.%s)" % (index, _spec_str(spec), spec.dtype.name, value.dtype.name,
                                                    spec.dtype.name))
        else:
            value = np.asarray(value, dtype=spec.dtype)
        return self._buffer_of(np.ascontiguousarray(value), _TYPE_IDS[spec.type_name])

    def _tuple_buffer(self, values, index):
        """A tuple buffer of values (arrays, typed by their dtype, or tuples);
        axle checks it against the parameter's shape."""
        elements = []
        try:
            for v in values:
                if isinstance(v, (tuple, list)):
                    elements.append(self._tuple_buffer(v, index))
                    continue
                a = np.ascontiguousarray(v)
                if a.dtype not in _AXLE_TYPE_OF:
                    raise TypeError("parameter %d: NumPy %s has no axle element type" % (index, a.dtype.name))
                elements.append(self._buffer_of(a, _TYPE_IDS[_AXLE_TYPE_OF[a.dtype]]))
            handles = (ctypes.c_void_p * max(len(elements), 1))(*elements)
            error = ctypes.c_void_p()
            made = lib.axle_buffer_create_tuple(handles, len(elements), ctypes.byref(error))
            check(made, error)
            return made
        finally:
            for e in elements:  # the tuple holds copies
                lib.axle_buffer_free(e)

    @staticmethod
    def _buffer_of(array, type_id):
        dims = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        error = ctypes.c_void_p()
        buffer = lib.axle_buffer_create(type_id, array.ndim, dims, array.ctypes.data_as(ctypes.c_void_p),
                                        ctypes.byref(error))
        check(buffer, error)
        return buffer

    def _buffers(self, args):
        if len(args) != len(self.parameters):
            raise TypeError("the module takes %d arguments (%s), %d given" % (
                len(self.parameters), ", ".join(map(_spec_str, self.parameters)), len(args)))
        made = []
        try:
            for i, (value, spec) in enumerate(zip(args, self.parameters)):
                made.append(self._buffer(value, spec, i))
        except BaseException:
            for b in made:
                lib.axle_buffer_free(b)
            raise
        return made

    # ---- running ----

    def _outputs(self):
        return [_aligned_empty(r.shape, r.dtype) if r.dtype is not None else None for r in self.results]

    def _run_into(self, handles, outputs):
        count = len(outputs)
        pointers = (ctypes.c_void_p * max(count, 1))(*[o.ctypes.data if o is not None else None for o in outputs])
        sizes = (ctypes.c_size_t * max(count, 1))(*[o.nbytes if o is not None else 0 for o in outputs])
        error = ctypes.c_void_p()
        ok = lib.axle_executable_run_into(self._exe, handles, len(self.parameters), pointers, sizes, count,
                                          ctypes.byref(error))
        check(ok, error)

    def __call__(self, *args):
        """Runs on args (one per parameter; arrays of the parameter's dtype,
        or scalars and lists, converted). Returns a new array, or a tuple of
        arrays when the module has several results (a tuple result's arrays,
        depth first)."""
        buffers = self._buffers(args)
        try:
            handles = (ctypes.c_void_p * max(len(buffers), 1))(*buffers)
            outputs = self._outputs()
            self._run_into(handles, outputs)
        finally:
            for b in buffers:
                lib.axle_buffer_free(b)
        self._last_args = args
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def time(self, runs=100, *args):
        """Times runs runs after one warm-up, on args, else the last call's
        arguments, else zeros. The arguments are made once and the results
        written into the same arrays every run, so the time is axle's."""
        if runs < 1:
            raise ValueError("time: runs must be 1 or more")
        if not args:
            args = self._last_args if self._last_args is not None else tuple(
                np.zeros(p.shape, p.dtype) for p in self.parameters)
        buffers = self._buffers(args)
        try:
            handles = (ctypes.c_void_p * max(len(buffers), 1))(*buffers)
            outputs = self._outputs()
            self._run_into(handles, outputs)  # warm-up
            ms = []
            for _ in range(runs):
                t0 = _time.perf_counter()
                self._run_into(handles, outputs)
                ms.append((_time.perf_counter() - t0) * 1e3)
        finally:
            for b in buffers:
                lib.axle_buffer_free(b)
        ms.sort()
        median = ms[runs // 2] if runs % 2 else (ms[runs // 2 - 1] + ms[runs // 2]) / 2
        return Timing(median, ms[0], ms[-1], runs)

    def dump(self, directory):
        """Compiles again, writing the optimizer's dumps (HLO text before and
        after, the buffer assignment, the kernels) and the backend's code
        listings into directory (created if needed). Returns the files, sorted."""
        directory = os.fspath(directory)
        lib.axle_executable_free(self._compile(directory))
        return sorted(os.listdir(directory))


def compile(hlo, backend="cpu", *, threads=0, flags=None):
    """Compiles an HLO module: hlo is its text (str or bytes) or a path to a
    .hlo file. backend: "cpu" (x86-64 code, all cores), "interp" (the
    reference evaluator) or "gpu" (PTX through the CUDA driver). threads: the
    native backends' threads (0: AXLE_THREADS, else every core). flags: the
    optimizer's flags as docs/optimizer.md lists them ("--no_fusion
    --fold_limit=0", or a list of them). Raises axle.Error with axle's located
    message when the module is malformed or cannot be compiled."""
    if backend not in BACKENDS:
        raise ValueError("backend must be one of %s, not %r" % (", ".join(BACKENDS), backend))
    if isinstance(flags, (list, tuple)):
        flags = " ".join(flags)
    return Function(_parse(hlo), backend, threads, flags)  # the Function owns the module, even if it fails
