/* Every driver constant axle writes down (src/runtime/cuda_constants.h:
 * error codes, device and function attributes, JIT options, stream and
 * event flags, tensor-map enums), checked against NVIDIA's own cuda.h.
 *
 * axle never includes cuda.h itself, so a number copied wrong (once
 * CUDA_ERROR_LAUNCH_FAILED was written 700, which is cuda.h's
 * CUDA_ERROR_ILLEGAL_ADDRESS; LAUNCH_FAILED is 719) would go unnoticed by
 * every other test, the fake driver using the same table. Here the table's
 * names resolve to cuda.h's enumerators and its values are compared with
 * them. Where no cuda.h is installed the check prints SKIP and why. */
#include <stdio.h>

#include "../test.h"
#include "runtime/cuda_constants.h"

#if defined(__has_include)
#if __has_include("/usr/local/cuda/include/cuda.h")
#include "/usr/local/cuda/include/cuda.h"
#define HAVE_CUDA_H 1
#endif
#endif

#ifdef HAVE_CUDA_H
TEST(every_driver_constant_axle_uses_has_cuda_hs_value) {
  int checked = 0;
#define CHECK_CONSTANT(name, value)                                                                              \
  EXPECT((long long)(name) == (long long)(value), "%s: axle says %lld, cuda.h (CUDA_VERSION %d) says %lld", #name, \
         (long long)(value), CUDA_VERSION, (long long)(name));                                                     \
  checked++;
  AXLE_CUDA_CONSTANTS(CHECK_CONSTANT)
#undef CHECK_CONSTANT
  printf("  %d constants checked against /usr/local/cuda/include/cuda.h (CUDA_VERSION %d)\n", checked, CUDA_VERSION);
}

/* The tensor map is 16 8-byte words in cuda.h as in axle (cuda_driver.h's
 * CUtensorMap holds CU_TENSOR_MAP_NUM_QWORDS of them). Its alignment is
 * not compared: cuTensorMapEncodeTiled's documentation in cuda.h requires
 * "tensorMap address must be aligned to 64 bytes", which axle's type
 * gives, while CUDA 13's header declares the type _Alignas(128). */
TEST(the_tensor_map_is_128_bytes) {
  EXPECT(sizeof(CUtensorMap) == 8 * CU_TENSOR_MAP_NUM_QWORDS, "sizeof(CUtensorMap) = %zu", sizeof(CUtensorMap));
}
#endif

int main(void) {
#ifdef HAVE_CUDA_H
  RUN(every_driver_constant_axle_uses_has_cuda_hs_value);
  RUN(the_tensor_map_is_128_bytes);
#else
  printf("SKIP every_driver_constant_axle_uses_has_cuda_hs_value (no /usr/local/cuda/include/cuda.h on this machine)\n");
#endif
  return test_summary();
}
