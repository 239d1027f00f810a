/* libFuzzer target for the HLO text parser (and the verifier it calls).
 * Any input must give a module or a located error: never a crash, a leak,
 * a hang, or an unbounded allocation. `make fuzz` builds and runs it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Status st;
  status_clear(&st);
  /* Elided constants are filled, so that path is fuzzed too. */
  ParseOptions options = {.fill_elided_constants = true, .elided_seed = size};
  Module *m = parse_module_with((const char *)data, size, "fuzz.hlo", &options, &st);
  if (m) {
    /* A module that parses must also print and parse again. */
    StrBuf sb = {0};
    print_module(&sb, m);
    Status st2;
    status_clear(&st2);
    Module *again = parse_module(sb.data ? sb.data : "", sb.len, "printed.hlo", &st2);
    if (!again) {
      fprintf(stderr, "printed module does not parse again: %s\n%s\n", st2.message, sb.data);
      abort();
    }
    module_free(again);
    strbuf_free(&sb);
    module_free(m);
  } else if (st.code == STATUS_OK || st.message[0] == '\0') {
    fprintf(stderr, "parse failed without a message\n");
    abort();
  }
  return 0;
}
