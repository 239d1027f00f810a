"""The C API of libaxle.so (include/axle.h) through ctypes: finding and
loading the library, the prototypes of the functions the package calls, and
turning an axle_error_t into a Python exception.

Nothing here knows NumPy; axle/__init__.py builds on it."""
import ctypes
import ctypes.util
import os

__all__ = ["Error", "lib", "check", "library_path"]


class Error(Exception):
    """An error from axle. str(e) is axle's message, located in the module
    ("FILE:LINE:COL: error: ..." with the source line and a caret) when it
    is about the text; e.status names the kind: "parse", "verify",
    "unsupported", "input", "runtime" or "out_of_memory"."""

    STATUS_NAMES = {1: "parse", 2: "verify", 3: "unsupported", 4: "input", 5: "runtime",
                    6: "out_of_memory"}

    __module__ = "axle"  # raised and caught as axle.Error

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = self.STATUS_NAMES.get(status, "runtime")


def _candidates():
    """Where libaxle.so may be, in the order tried."""
    given = os.environ.get("AXLE_LIBRARY")
    if given:
        return [given]  # an explicit choice: nothing else is tried
    here = os.path.dirname(os.path.abspath(__file__))
    found = [os.path.join(here, name) for name in ("libaxle.so", "libaxle.so.0")]
    try:
        from axle import _install  # written by `make install`
        found.append(os.path.join(_install.LIBDIR, "libaxle.so.%s" % _install.SOVERSION))
    except ImportError:
        pass
    # Run from the source tree: python/axle/ beside build/.
    found.append(os.path.join(here, "..", "..", "build", "libaxle.so"))
    found.append(ctypes.util.find_library("axle") or "libaxle.so.0")
    return found


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append("%s (absent)" % path)
            continue
        try:
            return ctypes.CDLL(path), os.path.normpath(path) if os.sep in path else path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("axle: cannot load libaxle.so; set AXLE_LIBRARY to its path, or build it with "
                      "'make' (build/libaxle.so) or install it with 'make install'. Tried: " + "; ".join(tried))


lib, library_path = _load()

_p = ctypes.c_void_p
_error_out = ctypes.POINTER(ctypes.c_void_p)


class CompileOptions(ctypes.Structure):
    """axle_compile_options_t."""
    _fields_ = [("threads", ctypes.c_int), ("flags", ctypes.c_char_p), ("dump_dir", ctypes.c_char_p),
                ("devices", ctypes.c_int), ("gpu_target", ctypes.c_char_p)]


def _declare(name, result, *args):
    fn = getattr(lib, name)
    fn.restype = result
    fn.argtypes = list(args)


_declare("axle_version", ctypes.c_char_p)
_declare("axle_error_status", ctypes.c_int, _p)
_declare("axle_error_message", ctypes.c_char_p, _p)
_declare("axle_error_free", None, _p)
_declare("axle_type_name", ctypes.c_char_p, ctypes.c_int)
_declare("axle_module_parse", _p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, _error_out)
_declare("axle_module_parse_file", _p, ctypes.c_char_p, _error_out)
_declare("axle_module_free", None, _p)
_declare("axle_module_parameter_count", ctypes.c_int, _p)
_declare("axle_module_parameter_type", ctypes.c_int, _p, ctypes.c_int)
_declare("axle_module_parameter_rank", ctypes.c_int, _p, ctypes.c_int)
_declare("axle_module_parameter_dim", ctypes.c_int64, _p, ctypes.c_int, ctypes.c_int)
_declare("axle_compile_with", _p, _p, ctypes.c_int, ctypes.POINTER(CompileOptions), _error_out)
_declare("axle_executable_free", None, _p)
_declare("axle_executable_result_count", ctypes.c_int, _p)
_declare("axle_executable_result_type", ctypes.c_int, _p, ctypes.c_int)
_declare("axle_executable_result_rank", ctypes.c_int, _p, ctypes.c_int)
_declare("axle_executable_result_dim", ctypes.c_int64, _p, ctypes.c_int, ctypes.c_int)
_declare("axle_executable_result_byte_size", ctypes.c_size_t, _p, ctypes.c_int)
_declare("axle_executable_run_into", ctypes.c_bool, _p, ctypes.POINTER(_p), ctypes.c_int, ctypes.POINTER(_p),
         ctypes.POINTER(ctypes.c_size_t), ctypes.c_int, _error_out)
_declare("axle_buffer_create", _p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int64), _p, _error_out)
_declare("axle_buffer_create_tuple", _p, ctypes.POINTER(_p), ctypes.c_int, _error_out)
_declare("axle_buffer_free", None, _p)
_declare("axle_buffer_data", _p, _p)
_declare("axle_buffer_byte_size", ctypes.c_size_t, _p)


def check(ok, error):
    """Raises Error from an axle_error_t * (a c_void_p) when ok is false."""
    if ok:
        return
    if not error.value:
        raise Error("axle: the call failed without a message")
    message = lib.axle_error_message(error).decode("utf-8", "replace").rstrip("\n")
    status = lib.axle_error_status(error)
    lib.axle_error_free(error)
    error.value = None
    raise Error(message, status)
