/* What the PTX and GPU tests share to drive external tools: finding a
 * program on PATH (or in /usr/local/cuda/bin, where the CUDA toolkit puts
 * ptxas, or in build/tools/cuda/bin, where `make fetch-cuobjdump` puts
 * cuobjdump), finding the fake CUDA driver beside the test program and
 * counting the calls in its trace, writing and reading whole files,
 * running ptxas, and comparing an emitter's text with its reviewed copy.
 * Header-only, like test.h. */
#ifndef AXLE_TESTS_TOOL_FILES_H
#define AXLE_TESTS_TOOL_FILES_H

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir.h"

/* path gets DIR/name for the first DIR that has it executable; "" if none. */
static inline bool tool_find(const char *name, char *path, size_t size) {
  const char *env = getenv("PATH");
  char dirs[8192];
  snprintf(dirs, sizeof dirs, "%s:/usr/local/cuda/bin:build/tools/cuda/bin", env ? env : "");
  for (char *save = NULL, *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    snprintf(path, size, "%s/%s", dir, name);
    if (access(path, X_OK) == 0) return true;
  }
  path[0] = 0;
  return false;
}

/* path gets the fake CUDA driver (tests/fake_cuda) that make builds
 * beside the test programs: DIR/fake/libcuda.so.1 for the program argv0
 * in DIR. */
static inline void fake_driver_find(const char *argv0, char *path, size_t size) {
  char self[4096];
  snprintf(self, sizeof self, "%s", argv0);
  snprintf(path, size, "%s/fake/libcuda.so.1", dirname(self));
}

/* Lines of the trace the fake driver writes (to the file FAKE_CUDA_TRACE
 * names) that start with prefix: how many times the runtime made that
 * driver call. */
static inline int trace_count(const char *prefix) {
  const char *path = getenv("FAKE_CUDA_TRACE");
  FILE *f = path ? fopen(path, "r") : NULL;
  if (!f) return 0;
  char line[256];
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, prefix, strlen(prefix)) == 0) n++;
  fclose(f);
  return n;
}

static inline bool file_write(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

/* The whole file, malloc'd and NUL-terminated; NULL if unreadable. */
static inline char *file_read(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  StrBuf sb = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) strbuf_printf(&sb, "%.*s", (int)n, chunk);
  fclose(f);
  if (!sb.data) strbuf_printf(&sb, "%s", "");
  return sb.data;
}

/* ptxas (its path, from tool_find) on text for arch, through the files
 * DIR/LABEL.ptx, .cubin and .log; on failure *log gets the log (malloc'd,
 * NULL if unreadable). */
static inline bool ptxas_run(const char *ptxas, const char *dir, const char *label, const char *text, const char *arch,
                             char **log) {
  char ptx_path[256], log_path[256], command[8192];
  snprintf(ptx_path, sizeof ptx_path, "%s/%s.ptx", dir, label);
  snprintf(log_path, sizeof log_path, "%s/%s.log", dir, label);
  *log = NULL;
  if (!file_write(ptx_path, text)) return false;
  snprintf(command, sizeof command, "'%s' -arch=%s -o '%s/%s.cubin' '%s' >'%s' 2>&1", ptxas, arch, dir, label,
           ptx_path, log_path);
  int rc = system(command);
  if (rc != 0) *log = file_read(log_path);
  return rc == 0;
}

/* Whether text equals the reviewed copy at path (kept under tests/ptx/ so
 * that a change to an emitter shows in the diff); AXLE_UPDATE_PTX=1
 * rewrites the copy from text first. why says where they differ. */
static inline bool reviewed_copy_matches(const char *path, const char *text, char *why, size_t size) {
  const char *update = getenv("AXLE_UPDATE_PTX");
  if (update && *update == '1' && !file_write(path, text)) {
    snprintf(why, size, "cannot write %s", path);
    return false;
  }
  char *reviewed = file_read(path);
  if (!reviewed) {
    snprintf(why, size, "cannot read %s (run from the repository root)", path);
    return false;
  }
  bool same = strcmp(reviewed, text) == 0;
  if (!same) {
    int line = 1;
    const char *a = reviewed, *b = text;
    while (*a && *a == *b) line += *a == '\n', a++, b++;
    snprintf(why, size,
             "the emitter's output differs from %s at line %d:\n  reviewed: %.60s\n  now:      %.60s\n"
             "(if the change is meant, rerun with AXLE_UPDATE_PTX=1 and review the diff)",
             path, line, a, b);
  }
  free(reviewed);
  return same;
}

#endif
