/* Ahead-of-time output of the CPU backend: one ELF relocatable object and
 * one C header for a compiled program (axle-aot, axle_compile_to_object;
 * docs/aot.md).
 *
 * There is one compile path. The module is optimized and compiled by
 * executable_compile exactly as for the JIT; the writer takes the
 * CpuProgram that compile made and, instead of running its steps, places
 * them in an object:
 *
 *   .text    NAME_run, a driver generated here with axle's assembler that
 *            does what cpu_frame_run does (binds every binding to an
 *            address, calls the steps in schedule order, copies result
 *            leaves), then the check of the ISA (cpuid), then every
 *            kernel's machine code as compiled, byte for byte
 *   .rodata  the program's constants
 *   .bss     one word: the ISA check passed
 *
 * The code is position-independent: kernels are called rel32 inside .text
 * and constants are reached rip-relative through R_X86_64_PC32
 * relocations, so the object needs no text relocations and no symbol from
 * elsewhere (`nm -u` prints nothing). Each step runs on the calling thread
 * over all its rows at once, which gives the JIT's bytes: kernels and the
 * GEMM split work by shape, never by thread count.
 *
 * What the object cannot hold is refused here, located at the instruction,
 * before anything is written: a step that is a runtime routine in C (sort,
 * scatter, FFT, linear algebra, rng, control flow: CPU_STEP_CALL), a dot
 * past the GEMM's direct path (its blocked path packs panels in C), and a
 * parameter or result in a layout other than row-major (copied between
 * layouts by C code in the JIT). */
#ifndef AXLE_EMIT_X86_CPU_AOT_H
#define AXLE_EMIT_X86_CPU_AOT_H

#include <stdint.h>

#include "emit_x86/cpu_program.h"
#include "runtime/executable.h"

/* The nonzero codes NAME_run returns (the header documents them). */
enum {
  CPU_AOT_ERROR_CPU = 1,       /* this CPU lacks the ISA level the object was compiled for */
  CPU_AOT_ERROR_ARGUMENT = 2,  /* params, results or temp NULL where needed, or temp misaligned */
};
/* The temporary block's alignment, which NAME_run checks. */
enum { CPU_AOT_TEMP_ALIGNMENT = 64 };

typedef struct CpuAotOptions {
  const char *name;         /* a C identifier: NAME_run, NAME_PARAM0_BYTES ... */
  const char *source_name;  /* the module's file, named in the header and the object */
  /* TEST ONLY (axle-aot --test-pretend-cpu): 0, or a CpuLevel at which
   * the object's cpuid check caps what it finds, to see the mismatch code
   * on a machine that has the level. */
  int pretend_cpu_level;
} CpuAotOptions;

/* Whether name is a C identifier that the object's symbols can start with. */
bool cpu_aot_name_valid(const char *name);

/* The object (malloc'd bytes) and the header (malloc'd text) for exe, which
 * the CPU backend compiled. False with a located STATUS_UNSUPPORTED
 * refusal for what an object cannot hold yet. */
bool cpu_aot_write(const Executable *exe, const CpuAotOptions *o, uint8_t **object, size_t *object_size,
                   char **header, Status *st);

/* The one path of axle-aot and axle_compile_to_object: m compiled by
 * executable_compile for the CPU with eo (its cpu_level the target), then
 * the object written to object_path and the header to header_path (NULL:
 * none). With stats (may be NULL), the optimizer's --stats report when
 * eo asked for it (malloc'd, NULL otherwise). */
bool cpu_aot_compile_files(const Module *m, const ExecutableOptions *eo, const CpuAotOptions *o,
                           const char *object_path, const char *header_path, char **stats, Status *st);

/* --------------------------------------------------------- cpu_aot_header.c
 * What the header says about the program (cpu_aot.c works it out). */
typedef struct CpuAotLayout {
  int64_t temp_bytes;       /* the caller's temporary block */
  CpuLevel level;
} CpuAotLayout;

char *cpu_aot_header_create(const Executable *exe, const CpuAotOptions *o, const CpuAotLayout *layout);

#endif
