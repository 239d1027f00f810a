/* Complex kernels on the GPU: c64 and c128 are split into real and
 * imaginary parts by the kernel IR's own rewrite (kernel_split_complex,
 * src/ir/kernel/kernel_complex.c), which keeps every buffer's bytes and
 * order, so the launch's bindings are those of the complex kernel. The real
 * kernel is then emitted like any other; what it needs and the emitter
 * lacks (f64 math for c128's transcendental ops, say) is refused there. */
#include "emit_ptx/ptx_kernel_internal.h"

bool ptx_complex_emit(PtxBuilder *b, const Kernel *k, const char *entry, PtxKernelShape *shape, Status *st) {
  Kernel *real = kernel_split_complex(k, st);
  if (!real) return false;
  bool ok = ptx_kernel_emit(b, real, entry, shape, st);
  kernel_free(real);
  return ok;
}
