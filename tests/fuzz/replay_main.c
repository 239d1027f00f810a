/* A main for a libFuzzer target built without libFuzzer: runs each file
 * named on the command line through LLVMFuzzerTestOneInput once, so a
 * finding replays (and the target builds) with the ordinary compiler:
 *   build/tests/fuzz_compile_replay crash-FILE ...
 * A finding aborts, as under libFuzzer; otherwise it prints a count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *file_read(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *data = NULL;
  size_t used = 0, capacity = 0, n;
  do {
    if (used == capacity) {
      capacity = capacity ? 2 * capacity : 4096;
      unsigned char *grown = realloc(data, capacity);
      if (!grown) break;
      data = grown;
    }
    n = fread(data + used, 1, capacity - used, f);
    used += n;
  } while (n > 0);
  fclose(f);
  *size = used;
  return data;
}

int main(int argc, char **argv) {
  int ran = 0;
  for (int i = 1; i < argc; i++) {
    size_t size = 0;
    unsigned char *data = file_read(argv[i], &size);
    if (!data) {
      fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
      return 2;
    }
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    ran++;
  }
  printf("%d inputs ran without a finding\n", ran);
  return 0;
}
