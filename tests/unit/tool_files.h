/* What the PTX tests share to drive external tools: finding a program on
 * PATH (or in /usr/local/cuda/bin, where the CUDA toolkit puts ptxas, or in
 * build/tools/cuda/bin, where `make fetch-cuobjdump` puts cuobjdump) and
 * writing and reading whole files. Header-only, like test.h. */
#ifndef AXLE_TESTS_TOOL_FILES_H
#define AXLE_TESTS_TOOL_FILES_H

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

#endif
