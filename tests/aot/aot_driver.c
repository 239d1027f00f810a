/* The C driver the AOT tests link with an object axle-aot wrote (tests/aot/aot.sh).
 *
 *   cc -DAOT_HEADER='"DIR/m.h"' -DAOT_NAME=m -DAOT_PREFIX=M aot_driver.c DIR/m.o -o DIR/run
 *   DIR/run OUT_DIR IN0.npy IN1.npy ...     writes OUT_DIR/out0.bin, out1.bin, ...
 *
 * It knows the module only through its header: it reads each parameter's
 * data from a .npy file (checking the byte count against the header's
 * table), calls NAME_run once, and writes each result's raw bytes. The
 * test puts the .npy header of axle-run's output in front of them, so that
 * npycmp compares them with the goldens and cmp with the JIT's bytes.
 * Exit: 0, or NAME_run's code + 10, or 3 for a bad file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include AOT_HEADER

#define PASTE2(a, b) a##b
#define PASTE(a, b) PASTE2(a, b)
#define AOT(suffix) PASTE(AOT_NAME, suffix)
#define AOT_MACRO(suffix) PASTE(AOT_PREFIX, suffix)

/* The data of a version 1, 2 or 3 .npy file, which must hold `bytes` bytes. */
static void *npy_read(const char *path, int64_t bytes) {
  FILE *f = fopen(path, "rb");
  unsigned char head[12];
  if (!f || fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "%s: not a .npy file\n", path);
    if (f) fclose(f);
    return NULL;
  }
  long header = head[8] | head[9] << 8, start = 10;
  if (head[6] >= 2) {
    if (fread(head + 10, 1, 2, f) != 2) header = -1;
    header = head[8] | head[9] << 8 | (long)head[10] << 16 | (long)head[11] << 24;
    start = 12;
  }
  void *data = aligned_alloc(64, (size_t)(bytes + 64) / 64 * 64);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  if (header < 0 || !data || size - start - header != bytes || fseek(f, start + header, SEEK_SET) != 0 ||
      (bytes > 0 && fread(data, 1, (size_t)bytes, f) != (size_t)bytes)) {
    fprintf(stderr, "%s: %ld data bytes, the header wants %lld\n", path, size - start - header, (long long)bytes);
    free(data);
    data = NULL;
  }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  enum { PARAMS = AOT_MACRO(_PARAM_COUNT), RESULTS = AOT_MACRO(_RESULT_COUNT) };
  if (argc != 2 + PARAMS) {
    fprintf(stderr, "usage: %s OUT_DIR, then %d .npy files\n", argv[0], PARAMS);
    return 3;
  }
  void *params[PARAMS + 1] = {0}, *results[RESULTS + 1] = {0};
  for (int i = 0; i < PARAMS; i++)
    if (!(params[i] = npy_read(argv[2 + i], AOT(_params)[i].bytes))) return 3;
  for (int i = 0; i < RESULTS; i++) results[i] = aligned_alloc(64, (size_t)(AOT(_results)[i].bytes + 64) / 64 * 64);
  void *temp = AOT_MACRO(_TEMP_BYTES) ? aligned_alloc(64, (AOT_MACRO(_TEMP_BYTES) + 63) / 64 * 64) : NULL;
  int rc = AOT(_run)((const void *const *)params, results, temp);
  if (rc != AOT_MACRO(_OK)) {
    fprintf(stderr, "%s_run returned %d\n", AOT_MACRO(_ISA), rc);
    return 10 + rc;
  }
  for (int i = 0; i < RESULTS; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/out%d.bin", argv[1], i);
    FILE *f = fopen(path, "wb");
    size_t bytes = (size_t)AOT(_results)[i].bytes;
    if (!f || (bytes && fwrite(results[i], 1, bytes, f) != bytes) || fclose(f) != 0) {
      fprintf(stderr, "cannot write %s\n", path);
      return 3;
    }
  }
  for (int i = 0; i < PARAMS; i++) free(params[i]);
  for (int i = 0; i < RESULTS; i++) free(results[i]);
  free(temp);
  return 0;
}
