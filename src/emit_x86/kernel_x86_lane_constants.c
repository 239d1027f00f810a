/* The vector math's constant pool: each 4-byte constant a vector math
 * function reads (broadcast to every lane, kernel_x86_math_lanes.c) is
 * placed once after the kernel's code, and read rip-relative (at sse4
 * and avx2, which have no embedded broadcast, as 16 or 32 bytes holding
 * it in every lane). Below the
 * math builder and its vector mode, which ask it for labels, and
 * kernel_x86.c, which places the pool. */
#include "emit_x86/kernel_x86_internal.h"

X86Label kernel_x86_lane_constant(KernelX86 *x, uint32_t bits) {
  /* the dry run's labels are the scratch buffer's: never pooled */
  if (x->math_dry_run) return x86_label_new(x->cb);
  for (int c = 0; c < x->lane_constant_count; c++)
    if (x->lane_constants[c] == bits) return x->lane_constant_labels[c];
  if (x->lane_constant_count == x->lane_constant_capacity) {
    x->lane_constant_capacity = x->lane_constant_capacity ? 2 * x->lane_constant_capacity : 32;
    x->lane_constants = mem_realloc(x->lane_constants, (size_t)x->lane_constant_capacity * sizeof *x->lane_constants);
    x->lane_constant_labels =
        mem_realloc(x->lane_constant_labels, (size_t)x->lane_constant_capacity * sizeof *x->lane_constant_labels);
  }
  x->lane_constants[x->lane_constant_count] = bits;
  return x->lane_constant_labels[x->lane_constant_count++] = x86_label_new(x->cb);
}

/* Each constant once, 4 bytes, read by embedded broadcast at avx512; at
 * sse4, which has no broadcast, 16 bytes of it at a 16-byte boundary, so
 * that a legacy instruction reads it whole as its memory operand; at avx2,
 * which has no embedded broadcast, 32 bytes, read whole the same way. */
int kernel_x86_lane_constant_copies(const KernelX86 *x) {
  return x->cpu->level == CPU_LEVEL_SSE4 ? 4 : x->cpu->level == CPU_LEVEL_AVX2 ? 8 : 1;
}

void kernel_x86_emit_lane_constants(KernelX86 *x) {
  if (!x->lane_constant_count) return;
  int copies = kernel_x86_lane_constant_copies(x);
  x86_align(x->cb, 4 * copies);
  x86_listing_note(x->cb, "the vector math's constants");
  for (int c = 0; c < x->lane_constant_count; c++) {
    x86_label_bind(x->cb, x->lane_constant_labels[c]);
    for (int k = 0; k < copies; k++) x86_emit_bytes(x->cb, &x->lane_constants[c], 4);
  }
  x->lane_constant_count = 0; /* a second function in the buffer makes its own */
}
