/* The baseline of the AOT examples' footprint (docs/aot.md): a program
 * built exactly as they are, with nothing of axle's, whose stripped size
 * is subtracted from theirs. */
#include <stdio.h>

int main(void) {
  printf("hello\n");
  return 0;
}
