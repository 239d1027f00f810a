/* Executable memory for JIT-compiled code.
 *
 * Code is copied into freshly mapped read+write pages, which are then
 * switched to read+execute. The pages are never writable and executable at
 * the same time (W^X), so a stray write cannot turn into code and a hardened
 * kernel (PaX, SELinux execmem rules) accepts them. The owner, normally an
 * Executable, frees them with jit_code_free. */
#ifndef AXLE_JIT_MEMORY_H
#define AXLE_JIT_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "ir.h"

typedef struct JitCode {
  void *base;         /* start of the mapping; NULL when empty */
  size_t mapped_size; /* a whole number of pages */
  size_t code_size;   /* bytes of code copied in */
} JitCode;

/* Maps pages, copies size bytes of code in, and makes them read+execute.
 * On failure out is left empty and nothing stays mapped. */
bool jit_code_create(JitCode *out, const void *code, size_t size, Status *st);

/* The address of the byte at offset inside the code, as a function pointer
 * of a generic type; cast it to the real signature before calling. */
typedef void (*JitFunction)(void);
JitFunction jit_code_function(const JitCode *jc, size_t offset);

/* Names bytes [offset, offset + size) of the code for profilers: when the
 * environment sets AXLE_PERF_MAP=1, appends "address size name" to
 * /tmp/perf-PID.map, the file `perf report` reads to name anonymous JIT
 * code (docs/debugging.md). Does nothing otherwise, or if the file cannot be
 * written: a profile without names is still a profile. */
void jit_code_name(const JitCode *jc, size_t offset, size_t size, const char *name);

/* Unmaps the pages; safe to call on an empty or already freed JitCode. */
void jit_code_free(JitCode *jc);

#endif
