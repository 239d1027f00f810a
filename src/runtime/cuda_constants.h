/* The CUDA driver's constants that axle and its fake driver use, one row
 * each: CUDA_CONSTANT(name, value), with the name and value of cuda.h.
 *
 * axle does not include cuda.h (it builds without CUDA), so these values
 * are written here once: cuda_driver.h makes them an enum for the runtime,
 * tests/fake_cuda/fake_libcuda.c the same enum for the fake driver, and
 * tests/unit/test_cuda_header.c checks every row against the real cuda.h
 * wherever one is installed. A constant used anywhere else must be added
 * here, never written as a bare number. */
#ifndef AXLE_RUNTIME_CUDA_CONSTANTS_H
#define AXLE_RUNTIME_CUDA_CONSTANTS_H

/* CUresult: the errors axle names or the fake driver returns. */
#define AXLE_CUDA_ERRORS(CUDA_CONSTANT)                                                         \
  CUDA_CONSTANT(CUDA_SUCCESS, 0)                                                                 \
  CUDA_CONSTANT(CUDA_ERROR_INVALID_VALUE, 1)                                                     \
  CUDA_CONSTANT(CUDA_ERROR_OUT_OF_MEMORY, 2)                                                     \
  CUDA_CONSTANT(CUDA_ERROR_NOT_INITIALIZED, 3)                                                   \
  CUDA_CONSTANT(CUDA_ERROR_NO_DEVICE, 100)                                                       \
  CUDA_CONSTANT(CUDA_ERROR_INVALID_DEVICE, 101)                                                  \
  CUDA_CONSTANT(CUDA_ERROR_INVALID_CONTEXT, 201)                                                 \
  CUDA_CONSTANT(CUDA_ERROR_INVALID_PTX, 218)                                                     \
  CUDA_CONSTANT(CUDA_ERROR_NOT_FOUND, 500)                                                       \
  CUDA_CONSTANT(CUDA_ERROR_ILLEGAL_ADDRESS, 700)                                                 \
  CUDA_CONSTANT(CUDA_ERROR_LAUNCH_FAILED, 719)

#define AXLE_CUDA_CONSTANTS(CUDA_CONSTANT)                                                      \
  AXLE_CUDA_ERRORS(CUDA_CONSTANT)                                                                \
  /* CUdevice_attribute (cuDeviceGetAttribute) */                                                \
  CUDA_CONSTANT(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16)                                    \
  CUDA_CONSTANT(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)                                \
  CUDA_CONSTANT(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)                                \
  /* CUfunction_attribute (cuFuncSetAttribute) */                                                \
  CUDA_CONSTANT(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)                              \
  /* CUjit_option (cuModuleLoadDataEx): where the JIT writes its logs */                         \
  CUDA_CONSTANT(CU_JIT_INFO_LOG_BUFFER, 3)                                                       \
  CUDA_CONSTANT(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 4)                                            \
  CUDA_CONSTANT(CU_JIT_ERROR_LOG_BUFFER, 5)                                                      \
  CUDA_CONSTANT(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6)                                           \
  CUDA_CONSTANT(CU_JIT_LOG_VERBOSE, 12)                                                          \
  /* flags of cuStreamCreate and cuEventCreate */                                                \
  CUDA_CONSTANT(CU_STREAM_DEFAULT, 0)                                                            \
  CUDA_CONSTANT(CU_EVENT_DEFAULT, 0)                                                             \
  /* cuTensorMapEncodeTiled: the map's size in 8-byte words, and its enums */                  \
  CUDA_CONSTANT(CU_TENSOR_MAP_NUM_QWORDS, 16)                                                    \
  CUDA_CONSTANT(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 6)                                              \
  CUDA_CONSTANT(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 9)                                             \
  CUDA_CONSTANT(CU_TENSOR_MAP_INTERLEAVE_NONE, 0)                                                \
  CUDA_CONSTANT(CU_TENSOR_MAP_SWIZZLE_NONE, 0)                                                   \
  CUDA_CONSTANT(CU_TENSOR_MAP_SWIZZLE_128B, 3)                                                   \
  CUDA_CONSTANT(CU_TENSOR_MAP_L2_PROMOTION_L2_128B, 2)                                           \
  CUDA_CONSTANT(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, 0) /* out-of-bounds elements read as zeros */

/* The rows as enumerators: enum { AXLE_CUDA_CONSTANTS(AXLE_CUDA_ENUMERATOR) }; */
#define AXLE_CUDA_ENUMERATOR(name, value) name = value,

#endif
