/* Which x86-64 vector extensions the code generator may use.
 *
 * The CPU backend picks one ISA level for a module and emits code for it:
 *
 *   sse4    SSE4.1 on 128-bit xmm registers (every x86-64 CPU since ~2008)
 *   avx2    AVX, AVX2, FMA and F16C on 256-bit ymm registers (x86-64-v3)
 *   avx512  AVX-512 F, BW, DQ and VL on 512-bit zmm registers with mask
 *           registers (x86-64-v4); BF16 is reported apart, as an extra
 *
 * A CPU may advertise an extension that the operating system has not
 * enabled: the kernel must save the wider registers on a context switch, and
 * says so in XCR0. AVX and AVX-512 (and FMA and F16C, which are VEX encoded
 * and live in the same registers) count only when XCR0 enables their state.
 *
 * The environment variable AXLE_CPU=sse4|avx2|avx512 lowers the level, to
 * test the narrower code paths on a wide machine. Asking for more than the
 * machine has is an error, as is an unknown name. */
#ifndef AXLE_CPU_FEATURES_H
#define AXLE_CPU_FEATURES_H

#include <stdbool.h>
#include <stdio.h>

#include "ir.h"

typedef enum CpuLevel {
  CPU_LEVEL_NONE,    /* below SSE4.1: the CPU backend cannot run here */
  CPU_LEVEL_SSE4,
  CPU_LEVEL_AVX2,
  CPU_LEVEL_AVX512,
} CpuLevel;

typedef struct CpuFeatures {
  bool sse4_1;
  bool avx, avx2, fma, f16c;              /* each only if the OS saves ymm state */
  bool avx512f, avx512bw, avx512dq, avx512vl, avx512bf16; /* only if the OS saves zmm and k state */
  bool os_saves_ymm;                      /* XCR0 bits 1-2 */
  bool os_saves_zmm;                      /* XCR0 bits 1-2 and 5-7 */
  CpuLevel hardware_level;                /* what the CPU and OS allow */
  CpuLevel level;                         /* what code generation uses (after AXLE_CPU) */
  bool level_forced;                      /* AXLE_CPU lowered it */
} CpuFeatures;

/* What the CPU and the operating system support, ignoring AXLE_CPU. On a
 * non-x86 host every feature is false and the level is CPU_LEVEL_NONE. */
void cpu_features_detect_hardware(CpuFeatures *out);

/* Applies an AXLE_CPU value ("sse4", "avx2", "avx512"; NULL or "" changes
 * nothing): sets the level and clears the features above it, so that code
 * checking a single flag also sees the lowered machine. Fails on an unknown
 * name or a level the hardware lacks, naming the missing features. */
bool cpu_features_force_level(CpuFeatures *f, const char *request, Status *st);

/* The features a level promises and nothing more (no BF16), whatever this
 * machine has: the target of code that runs elsewhere (axle-aot --cpu). */
void cpu_features_for_level(CpuFeatures *out, CpuLevel level);

/* Hardware detection followed by the AXLE_CPU environment variable. */
bool cpu_features_detect(CpuFeatures *out, Status *st);

/* "sse4", "avx2", "avx512"; "none" for CPU_LEVEL_NONE. */
const char *cpu_level_name(CpuLevel level);
bool cpu_level_from_name(const char *name, CpuLevel *out);

/* One line per fact, e.g.
 *   isa level: avx512 (hardware avx512)
 *   avx512f: yes  ... */
void cpu_features_print(const CpuFeatures *f, FILE *out);

#endif
