/* W^X code pages with mmap and mprotect; see jit_memory.h. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emit_x86/jit_memory.h"

/* The tail of the last page is filled with int3 so that a jump past the end
 * of the code traps at once instead of running whatever follows. */
enum { X86_INT3 = 0xcc };

static size_t page_size(void) {
  long n = sysconf(_SC_PAGESIZE);
  return n > 0 ? (size_t)n : 4096;
}

bool jit_code_create(JitCode *out, const void *code, size_t size, Status *st) {
  memset(out, 0, sizeof *out);
  if (size == 0) return status_error(st, STATUS_INPUT_ERROR, "no code to map (0 bytes)");
  size_t page = page_size();
  if (size > SIZE_MAX - page) return status_error(st, STATUS_OUT_OF_MEMORY, "code too large: %zu bytes", size);
  size_t mapped = (size + page - 1) / page * page;

  void *base = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return status_error(st, STATUS_OUT_OF_MEMORY, "mmap of %zu bytes for code failed: %s", mapped,
                        strerror(errno));
  memcpy(base, code, size);
  memset((char *)base + size, X86_INT3, mapped - size);

  /* x86 keeps instruction fetch coherent with stores: code written by this
   * thread may run after a jump to it, so unlike ARM no cache flush is needed. */
  if (mprotect(base, mapped, PROT_READ | PROT_EXEC) != 0) {
    int err = errno;
    munmap(base, mapped);
    return status_error(st, STATUS_RUNTIME_ERROR, "mprotect(read+execute) of code failed: %s",
                        strerror(err));
  }
  mem_track_mapping(base, mapped);  /* unmapped if the compile unwinds */
  out->base = base;
  out->mapped_size = mapped;
  out->code_size = size;
  return true;
}

JitFunction jit_code_function(const JitCode *jc, size_t offset) {
  assert(jc->base && offset < jc->code_size);
  /* Converting a data pointer to a function pointer is what POSIX (dlsym)
   * relies on; ISO C leaves it to the implementation. */
  return (JitFunction)(void *)((char *)jc->base + offset);
}

static bool perf_map_wanted(void) {
  const char *v = getenv("AXLE_PERF_MAP");
  return v && v[0] && strcmp(v, "0") != 0;
}

void jit_code_name(const JitCode *jc, size_t offset, size_t size, const char *fmt, ...) {
  if (!jc->base || offset >= jc->code_size || !perf_map_wanted()) return;
  if (size > jc->code_size - offset) size = jc->code_size - offset;
  char line[512];
  int n = snprintf(line, sizeof line, "%lx %zx ", (unsigned long)((uintptr_t)jc->base + offset), size);
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  char path[64];
  snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
  /* One write with O_APPEND: lines from several threads never interleave. */
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t written = write(fd, line, (size_t)n);
  (void)written;
  close(fd);
}

void jit_code_free(JitCode *jc) {
  if (jc->base) {
    mem_untrack(jc->base);
    munmap(jc->base, jc->mapped_size);
  }
  memset(jc, 0, sizeof *jc);
}
