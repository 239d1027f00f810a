/* axle: a compiler for XLA's HLO, in C.
 *
 * This header is the whole public API. A short tour:
 *
 *   #include <axle.h>
 *
 *   axle_error_t *err = NULL;
 *   axle_module_t *m = axle_module_parse_file("model.hlo", &err);
 *   if (!m) { fprintf(stderr, "%s", axle_error_message(err)); axle_error_free(err); return 1; }
 *
 *   axle_executable_t *exe = axle_compile(m, AXLE_BACKEND_CPU, &err);  // machine code, all cores
 *
 *   int64_t dims[1] = {4};
 *   float x[4] = {1, 2, 3, 4};
 *   axle_buffer_t *arg = axle_buffer_create(AXLE_F32, 1, dims, x, &err);
 *   axle_buffer_t *result = NULL;
 *   if (axle_executable_run(exe, &arg, 1, &result, &err)) {
 *     const float *y = axle_buffer_data(result);   // read the result
 *     ...
 *   }
 *   axle_buffer_free(result); axle_buffer_free(arg);
 *   axle_executable_free(exe); axle_module_free(m);
 *
 * A module can also be built in C with axle_builder_* (see below) instead of
 * parsed from text. examples/api_example.c does both. A deployment that
 * runs in a loop asks the results' shapes once (axle_executable_result_*)
 * and runs into its own memory (axle_executable_run_into); the optimizer's
 * flags, threads and dumps are set per compile (axle_compile_options_t).
 *
 * Conventions: every fallible function takes `axle_error_t **error` last; on
 * failure it returns NULL/false and, if error is not NULL, stores an error
 * the caller frees with axle_error_free. Objects are freed by their
 * axle_*_free function, which accepts NULL. Array data is dense, row-major
 * (C order); bf16 and f16 elements are 16-bit patterns, pred is one byte.
 * Running out of memory never ends the process: the call fails with
 * AXLE_ERROR_OUT_OF_MEMORY ("needs N bytes"), having freed what it
 * allocated, and the library stays usable (a builder call that runs out
 * leaves its builder failed: axle_builder_finish reports it).
 */
#ifndef AXLE_H
#define AXLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks what the library exports: it is built with -fvisibility=hidden, so
 * everything else stays inside it. */
#if defined(__GNUC__) || defined(__clang__)
#define AXLE_API __attribute__((visibility("default")))
#else
#define AXLE_API
#endif

/* ---- version ---- */

/* The version of this header; axle_version() gives the library's. The
 * Makefile reads these three lines (the shared library's soname is
 * libaxle.so.MAJOR). */
#define AXLE_VERSION_MAJOR 0
#define AXLE_VERSION_MINOR 1
#define AXLE_VERSION_PATCH 0

/* The library's version, "MAJOR.MINOR.PATCH" (a static string). */
AXLE_API const char *axle_version(void);

/* ---- errors ---- */

typedef enum axle_status {
  AXLE_OK = 0,
  AXLE_ERROR_PARSE,        /* malformed HLO text */
  AXLE_ERROR_VERIFY,       /* well-formed HLO with wrong shapes or attributes */
  AXLE_ERROR_UNSUPPORTED,  /* valid HLO that axle does not handle */
  AXLE_ERROR_INPUT,        /* wrong arguments at run time */
  AXLE_ERROR_RUNTIME,      /* failure while running */
  AXLE_ERROR_OUT_OF_MEMORY,
} axle_status_t;

typedef struct axle_error axle_error_t;

AXLE_API axle_status_t axle_error_status(const axle_error_t *error);
/* The full message, "FILE:LINE:COL: error: ..." for text, ending in a newline. */
AXLE_API const char *axle_error_message(const axle_error_t *error);
AXLE_API void axle_error_free(axle_error_t *error);

/* ---- element types ---- */

typedef enum axle_type {
  AXLE_PRED, AXLE_S8, AXLE_S16, AXLE_S32, AXLE_S64,
  AXLE_U8, AXLE_U16, AXLE_U32, AXLE_U64,
  AXLE_F16, AXLE_BF16, AXLE_F32, AXLE_F64,
  AXLE_C64, AXLE_C128,   /* complex: real and imaginary parts interleaved */
  /* 8- and 4-bit floats and 4- and 2-bit integers: one byte per element */
  AXLE_F8E4M3FN, AXLE_F8E5M2, AXLE_F8E4M3FNUZ, AXLE_F8E5M2FNUZ, AXLE_F8E4M3B11FNUZ,
  AXLE_F8E4M3, AXLE_F8E3M4, AXLE_F8E8M0FNU, AXLE_F4E2M1FN,
  AXLE_S4, AXLE_U4, AXLE_S2, AXLE_U2,
  AXLE_TOKEN,   /* token[]: orders side effects, holds no data */
  AXLE_TUPLE,
} axle_type_t;

AXLE_API const char *axle_type_name(axle_type_t type);   /* "f32" */
AXLE_API size_t axle_type_size(axle_type_t type);        /* bytes per element; 0 for tuples */

/* ---- modules ---- */

typedef struct axle_module axle_module_t;

/* Parses HLO text as JAX and XLA print it; the module is verified. */
AXLE_API axle_module_t *axle_module_parse(const char *text, size_t length, const char *filename,
                                          axle_error_t **error);
AXLE_API axle_module_t *axle_module_parse_file(const char *path, axle_error_t **error);
AXLE_API void axle_module_free(axle_module_t *module);

/* What the parse functions above accept by default can be widened here;
 * zero-initialize, then set what you need. NULL options are the defaults. */
typedef struct axle_parse_options {
  /* XLA prints large constants elided, as constant({...}); their values are
   * gone. By default such a module is refused. Set this to fill them with
   * values drawn from elided_seed (floats in [-1, 1), small integers): the
   * module runs, but its results are not meaningful. */
  bool fill_elided_constants;
  uint64_t elided_seed;
} axle_parse_options_t;

AXLE_API axle_module_t *axle_module_parse_with(const char *text, size_t length, const char *filename,
                                               const axle_parse_options_t *options, axle_error_t **error);
AXLE_API axle_module_t *axle_module_parse_file_with(const char *path, const axle_parse_options_t *options,
                                                    axle_error_t **error);
/* How many elided constants were filled (0 unless the options asked). */
AXLE_API int axle_module_elided_constant_count(const axle_module_t *module);

/* The entry computation's parameters, and its result shape (for arrays).
 * An unbounded dimension (f32[?]) reads -1; such a module does not compile. */
AXLE_API int axle_module_parameter_count(const axle_module_t *module);
AXLE_API axle_type_t axle_module_parameter_type(const axle_module_t *module, int index);
AXLE_API int axle_module_parameter_rank(const axle_module_t *module, int index);
AXLE_API int64_t axle_module_parameter_dim(const axle_module_t *module, int index, int dim);

/* The module as HLO text; free the string with free(). */
AXLE_API char *axle_module_to_text(const axle_module_t *module);

/* ---- building a module in C ----
 * Values are small integer handles into the builder. Shapes are inferred;
 * a wrong combination is reported by axle_builder_finish (the first error
 * wins, later calls return -1 and do nothing). */

typedef struct axle_builder axle_builder_t;
typedef int axle_value_t;

typedef enum axle_unary_op {
  AXLE_ABS, AXLE_NEGATE, AXLE_EXP, AXLE_LOG, AXLE_TANH, AXLE_SQRT, AXLE_RSQRT,
  AXLE_LOGISTIC, AXLE_FLOOR, AXLE_CEIL, AXLE_SIN, AXLE_COS,
} axle_unary_op_t;

typedef enum axle_binary_op {
  AXLE_ADD, AXLE_SUBTRACT, AXLE_MULTIPLY, AXLE_DIVIDE, AXLE_MAXIMUM, AXLE_MINIMUM,
  AXLE_POWER,
} axle_binary_op_t;

AXLE_API axle_builder_t *axle_builder_create(const char *module_name);
AXLE_API void axle_builder_free(axle_builder_t *builder);

AXLE_API axle_value_t axle_builder_parameter(axle_builder_t *b, axle_type_t type, int rank,
                                             const int64_t *dims, const char *name);
/* A scalar constant of a float or integer type. */
AXLE_API axle_value_t axle_builder_constant(axle_builder_t *b, axle_type_t type, double value);
AXLE_API axle_value_t axle_builder_unary(axle_builder_t *b, axle_unary_op_t op, axle_value_t x);
AXLE_API axle_value_t axle_builder_binary(axle_builder_t *b, axle_binary_op_t op, axle_value_t x,
                                          axle_value_t y);
/* broadcast: operand dimension i becomes result dimension broadcast_dims[i]. */
AXLE_API axle_value_t axle_builder_broadcast(axle_builder_t *b, axle_value_t x, int rank,
                                             const int64_t *dims, const int64_t *broadcast_dims);
AXLE_API axle_value_t axle_builder_reshape(axle_builder_t *b, axle_value_t x, int rank,
                                           const int64_t *dims);
AXLE_API axle_value_t axle_builder_transpose(axle_builder_t *b, axle_value_t x,
                                             const int64_t *permutation);
/* Matrix product of [m,k] x [k,n] (or batched [.., m, k] x [.., k, n]). */
AXLE_API axle_value_t axle_builder_matmul(axle_builder_t *b, axle_value_t x, axle_value_t y);
/* Reduces the listed dimensions with op (ADD, MULTIPLY, MAXIMUM, MINIMUM),
 * starting from init (a scalar value). */
AXLE_API axle_value_t axle_builder_reduce(axle_builder_t *b, axle_binary_op_t op, axle_value_t x,
                                          axle_value_t init, int dim_count, const int64_t *dims);
AXLE_API axle_value_t axle_builder_tuple(axle_builder_t *b, int count, const axle_value_t *values);

/* Makes root the result and hands back the verified module. The builder can
 * be freed afterwards; it cannot be used again. */
AXLE_API axle_module_t *axle_builder_finish(axle_builder_t *b, axle_value_t root, axle_error_t **error);

/* ---- buffers (host memory) ---- */

typedef struct axle_buffer axle_buffer_t;

/* An array buffer; data (row-major, may be NULL for zeros) is copied in.
 * Its elements start on a 64-byte boundary. */
AXLE_API axle_buffer_t *axle_buffer_create(axle_type_t type, int rank, const int64_t *dims,
                                           const void *data, axle_error_t **error);
AXLE_API void axle_buffer_free(axle_buffer_t *buffer);
AXLE_API axle_type_t axle_buffer_type(const axle_buffer_t *buffer);
AXLE_API int axle_buffer_rank(const axle_buffer_t *buffer);
AXLE_API int64_t axle_buffer_dim(const axle_buffer_t *buffer, int dim);
AXLE_API size_t axle_buffer_byte_size(const axle_buffer_t *buffer);
/* The elements, row-major; NULL for a tuple. Writable for argument buffers. */
AXLE_API void *axle_buffer_data(axle_buffer_t *buffer);
/* Tuples: the element count and the i-th element, owned by the tuple. */
AXLE_API int axle_buffer_tuple_count(const axle_buffer_t *buffer);
AXLE_API axle_buffer_t *axle_buffer_tuple_element(axle_buffer_t *buffer, int index);
/* A tuple buffer, for a tuple parameter, holding copies of the elements
 * (arrays or tuples); the caller still owns and frees the elements. */
AXLE_API axle_buffer_t *axle_buffer_create_tuple(axle_buffer_t *const *elements, int count,
                                                 axle_error_t **error);

/* NumPy .npy files (format 1.0 and 2.0, little-endian, C order), for
 * feeding and checking a model from Python. The element type follows the
 * dtype (<f4 is f32, <i8 s64, |b1 pred, <c8 c64, ...). Types NumPy lacks are
 * written in a carrier and read back as it: bf16 as <u2 bits, the 8- and
 * 4-bit floats as |u1 bits, s4/s2 as |i1 and u4/u2 as |u1 values. */
AXLE_API axle_buffer_t *axle_npy_read(const char *path, axle_error_t **error);
/* Writes an array buffer (not a tuple); an existing file is replaced. */
AXLE_API bool axle_npy_write(const char *path, const axle_buffer_t *buffer, axle_error_t **error);

/* ---- compiling and running ---- */

typedef enum axle_backend {
  AXLE_BACKEND_INTERP,  /* the reference evaluator */
  AXLE_BACKEND_CPU,     /* x86-64 machine code */
  AXLE_BACKEND_GPU,     /* PTX through the CUDA driver */
} axle_backend_t;

typedef struct axle_executable axle_executable_t;

/* The executable keeps what it needs: the module (and the text it was
 * parsed from) may be freed right after. Compiling a module whose text
 * matches an earlier compile's, for the same backend, returns that
 * executable again from a process-wide cache; each one returned is still
 * freed with axle_executable_free. Thread-safe. */
AXLE_API axle_executable_t *axle_compile(const axle_module_t *module, axle_backend_t backend,
                                         axle_error_t **error);
/* What a compile may be told; zero-initialize, then set what you need. */
typedef struct axle_compile_options {
  /* Threads of the native backends, the caller's included; 0 means
   * AXLE_THREADS when set, else every core. Results are the same bits at
   * every thread count. */
  int threads;
  /* The optimizer's flags, space separated, as docs/optimizer.md lists them
   * and AXLE_FLAGS spells them for the tools ("--no_fusion --fold_limit=0");
   * NULL or "" for none. An unknown flag fails the compile (AXLE_ERROR_INPUT,
   * naming it). The API itself never reads AXLE_FLAGS. */
  const char *flags;
  /* NULL, or a folder (created if needed) where the compile writes the
   * optimizer's dumps and the backend's kernels and listings, as
   * --dump_to=DIR does; a compile that dumps always compiles afresh. */
  const char *dump_dir;
  /* 0 or 1: one device. N: the module runs on N devices in one process
   * (docs/multi-device.md), its replica_count x num_partitions, which must
   * be N (a module that says neither runs as N replicas). On
   * AXLE_BACKEND_CPU or AXLE_BACKEND_INTERP each device gets threads / N of
   * the threads; on AXLE_BACKEND_GPU device d is GPU d and the collectives
   * go through NVIDIA's libnccl.so.2, opened at run time. Such an
   * executable runs with axle_executable_run_devices only. Executables are
   * then compiled afresh, not cached. */
  int devices;
  /* AXLE_BACKEND_GPU only: NULL or "" compiles for the device's own compute
   * capability; "sm_80", "sm_86", "sm_89", "sm_90a" or "sm_90" writes the
   * PTX for that target (docs/gpu.md), which then runs on a device whose
   * capability runs it (an unknown name or a device that cannot run it
   * fails the compile). */
  const char *gpu_target;
} axle_compile_options_t;

/* axle_compile with options (NULL: the defaults). Executables compiled
 * with different options are cached apart. */
AXLE_API axle_executable_t *axle_compile_with(const axle_module_t *module, axle_backend_t backend,
                                              const axle_compile_options_t *options, axle_error_t **error);
AXLE_API void axle_executable_free(axle_executable_t *exe);
/* Runs with one buffer per entry parameter, checked against its shape. The
 * result (an array or a tuple buffer) is new; free it with axle_buffer_free.
 * On the CPU a run allocates that result and nothing else, one block per
 * buffer of it (axle_executable_run_into allocates none). */
AXLE_API bool axle_executable_run(axle_executable_t *exe, axle_buffer_t *const *args, int arg_count,
                                  axle_buffer_t **result, axle_error_t **error);

/* Runs an executable compiled with options.devices = N on its N devices at
 * once, one thread each, meeting at every collective. args holds N sets of
 * arg_count buffers, device 0's first (device d is replica d % replica_count,
 * partition d / replica_count); results[d] receives device d's result, to
 * free with axle_buffer_free. device_count must be N. On the CPU the
 * results are the same bits run after run: reductions across devices add
 * in group order (on GPUs, NCCL's order: docs/multi-device.md). */
AXLE_API bool axle_executable_run_devices(axle_executable_t *exe, axle_buffer_t *const *args, int arg_count,
                                          axle_buffer_t **results, int device_count, axle_error_t **error);

/* The results' shapes, known before a run. A run gives
 * axle_executable_result_count(exe) arrays (declared below: 1 for an array
 * result, a tuple's leaves depth first); result i has this type, rank,
 * dims and size in bytes (row-major, as axle_buffer_byte_size counts).
 * Out of range: AXLE_TUPLE, -1, -1 and 0. */
AXLE_API axle_type_t axle_executable_result_type(const axle_executable_t *exe, int index);
AXLE_API int axle_executable_result_rank(const axle_executable_t *exe, int index);
AXLE_API int64_t axle_executable_result_dim(const axle_executable_t *exe, int index, int dim);
AXLE_API size_t axle_executable_result_byte_size(const axle_executable_t *exe, int index);

/* axle_executable_run writing into the caller's memory: results[i] receives
 * result i, row-major, and holds result_sizes[i] bytes, at least
 * axle_executable_result_byte_size(exe, i), aligned to 16 bytes as malloc's
 * memory is (NULL is allowed for a result of 0 bytes). No result buffer is
 * allocated, so a loop that refills its argument buffers in place
 * (axle_buffer_data) and runs into the same memory allocates nothing for
 * its values (the CPU backend keeps its temporaries from the first run to
 * the next: a run of a module without loops or calls allocates nothing at
 * all). The
 * count, every size and every alignment are checked before anything runs;
 * on a failure later, the results' contents are unspecified. Thread-safe
 * per executable. */
AXLE_API bool axle_executable_run_into(axle_executable_t *exe, axle_buffer_t *const *args, int arg_count,
                                       void *const *results, const size_t *result_sizes, int result_count,
                                       axle_error_t **error);

/* ---- ahead of time (docs/aot.md) ----
 * A module compiled once, at build time, into an object file that a
 * program links with nothing else: no libaxle, no libc, no executable
 * memory at run time. The header written beside it declares
 *   int NAME_run(const void *const *params, void *const *results, void *temp);
 * and describes every parameter and result (axle-aot is the same as a tool). */
typedef struct axle_aot_options {
  /* The C identifier the object's symbols and the header's names start
   * with (NAME_run, NAME_PARAM0_BYTES); NULL: "model". */
  const char *name;
  /* The ISA level of the code: "sse4", "avx2", "avx512", or NULL or
   * "native" for this machine's. The object checks it (cpuid) at its first
   * call and returns NAME_ERROR_CPU on a CPU without it. */
  const char *cpu;
  /* The optimizer's flags, as in axle_compile_options_t. */
  const char *flags;
} axle_aot_options_t;

/* Compiles module for the CPU exactly as axle_compile does, then writes
 * the program as an ELF relocatable object at object_path and, unless
 * header_path is NULL, its C header. A module holding what an object
 * cannot carry yet (a runtime routine in C: sort, scatter, FFT, linear
 * algebra, control flow, rng) fails with AXLE_ERROR_UNSUPPORTED and a
 * located message. options may be NULL. */
AXLE_API bool axle_compile_to_object(const axle_module_t *module, const axle_aot_options_t *options,
                                     const char *object_path, const char *header_path, axle_error_t **error);

/* ---- device buffers ----
 * Arrays kept where an executable's backend computes, so that a loop of
 * steps copies its weights (and its state) once, not every step:
 *
 *   axle_device_buffer_t *w = axle_buffer_to_device(exe, weights, &err);  // up once
 *   axle_device_buffer_t *state = axle_buffer_to_device(exe, state0, &err);
 *   for (int step = 0; step < steps; step++) {
 *     axle_device_buffer_t *args[2] = {w, state}, *out[1];
 *     if (!axle_run_on_device(exe, args, 2, out, 1, &err)) break;  // nothing crosses the bus
 *     axle_device_buffer_free(state);
 *     state = out[0];
 *   }
 *   axle_buffer_t *final = axle_buffer_to_host(state, &err);           // down once
 *
 * On the GPU backend a device buffer is device memory, in the context that
 * every executable of the process shares: one made for one executable may
 * be an argument of another of the same backend. On the CPU backend and
 * the interpreter it is host memory, and the same calls work. Device
 * buffers hold arrays only (a tuple parameter takes axle_executable_run);
 * a tuple result comes back as its arrays, depth first. A device buffer
 * keeps its executable's backend alive, so it may outlive the executable
 * handle it was made with. On the GPU, parameters and results that the
 * compiled module keeps in another layout than row-major are refused:
 * run those with axle_executable_run. */
typedef struct axle_device_buffer axle_device_buffer_t;

/* A copy of an array buffer in exe's backend's memory. */
AXLE_API axle_device_buffer_t *axle_buffer_to_device(axle_executable_t *exe, const axle_buffer_t *buffer,
                                                     axle_error_t **error);
/* A new host buffer with the device buffer's values (row-major). */
AXLE_API axle_buffer_t *axle_buffer_to_host(const axle_device_buffer_t *buffer, axle_error_t **error);
AXLE_API void axle_device_buffer_free(axle_device_buffer_t *buffer);
/* How many arrays a run gives: 1 for an array result, a tuple's leaves. */
AXLE_API int axle_executable_result_count(const axle_executable_t *exe);
/* Runs with one device buffer per entry parameter (checked against its
 * shape, and made for exe's backend); results[0..result_count) receive new
 * device buffers, result_count being axle_executable_result_count(exe).
 * Free each with axle_device_buffer_free. Thread-safe per executable. */
AXLE_API bool axle_run_on_device(axle_executable_t *exe, axle_device_buffer_t *const *args, int arg_count,
                                 axle_device_buffer_t **results, int result_count, axle_error_t **error);

/* The compile cache's counts since the process started: compiles answered
 * from the cache (hits) and compiles that ran (misses). Either may be NULL. */
AXLE_API void axle_compile_cache_counts(int64_t *hits, int64_t *misses);
/* Forgets every cached executable (those still held by callers live on). */
AXLE_API void axle_compile_cache_clear(void);

#ifdef __cplusplus
}
#endif

#endif
