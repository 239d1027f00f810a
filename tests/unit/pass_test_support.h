/* Helpers the unit tests of single optimizer passes share: a module
 * parsed from inline text, one pass run with the verifier after it, and
 * the entry's values on arguments drawn from a fixed seed (to compare a
 * module before and after a pass). Static inline: each test program takes
 * what it uses. */
#ifndef AXLE_TESTS_PASS_TEST_SUPPORT_H
#define AXLE_TESTS_PASS_TEST_SUPPORT_H

#include <string.h>

#include "opt/opt.h"
#include "../test.h"

static inline Module *parse_text(const char *text) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "inline.hlo", &st);
  EXPECT(m != NULL, "the inline module parses: %s", st.message);
  return m;
}

/* Runs pass on m and the verifier after it; returns whether it changed m. */
static inline bool run_pass_verified(PassFn *pass, Module *m) {
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  bool failed = false;
  Status st;
  status_clear(&st);
  bool changed = pass(m, &ctx, &failed, &st);
  EXPECT(!failed, "the pass failed: %s", st.message);
  status_clear(&st);
  EXPECT(verify_module(m, &st), "the module is broken after the pass: %s", st.message);
  opt_context_free(&ctx);
  return changed;
}

/* The entry's values on the same arguments (drawn from seed 7). */
static inline Literal *evaluate_seeded(const Module *m) {
  Literal *args[8];
  uint64_t seed = 7;
  int n = m->entry->parameter_count;
  EXPECT(n <= 8, "at most 8 parameters, not %d", n);
  if (n > 8) return NULL;
  for (int p = 0; p < n; p++) {
    args[p] = literal_create(&m->entry->parameters[p]->shape);
    literal_fill_random(args[p], &seed);
  }
  Status st;
  status_clear(&st);
  Literal *out = eval_module(m, args, n, &st);
  EXPECT(out != NULL, "evaluates: %s", st.message);
  for (int p = 0; p < n; p++) literal_free(args[p]);
  return out;
}

#endif
