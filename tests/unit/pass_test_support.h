/* Helpers the unit tests of single optimizer passes share: a module
 * parsed from inline text, one pass run with the verifier after it, the
 * entry's values on arguments drawn from a fixed seed (to compare a
 * module before and after a pass), a pass checked on an input fusion's
 * body, and the CPU checked against the evaluator on a module as written.
 * Static inline: each test program takes what it uses. */
#ifndef AXLE_TESTS_PASS_TEST_SUPPORT_H
#define AXLE_TESTS_PASS_TEST_SUPPORT_H

#include <string.h>

#include "opt/opt.h"
#include "runtime/executable.h"
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

/* Module i (text) holds an input fusion at its root. rewrite (a pass run
 * verified) must change it so that done(m) holds, keep the fusion's body,
 * the body's parameters and root shape, and the entry's bits, and find
 * nothing to do a second time. */
static inline void check_fusion_body_rewritten(const char *text, size_t i, bool (*rewrite)(Module *),
                                               bool (*done)(const Module *)) {
  Module *m = parse_text(text);
  if (!m) return;
  const Computation *body = m->entry->root->called[0];
  int parameters = body->parameter_count;
  Shape root = body->root->shape, params[4];
  for (int p = 0; p < parameters && p < 4; p++) params[p] = body->parameters[p]->shape;
  Literal *before = evaluate_seeded(m);
  EXPECT(rewrite(m), "module %zu: the pass changes it", i);
  EXPECT(done(m), "module %zu: every product is canonical", i);
  EXPECT(m->entry->root->called[0] == body && body->parameter_count == parameters &&
             shape_identical(&body->root->shape, &root),
         "module %zu: the fusion calls the same body, its parameters and root shape unchanged", i);
  for (int p = 0; p < parameters && p < 4; p++)
    EXPECT(shape_identical(&body->parameters[p]->shape, &params[p]), "module %zu: parameter %d unchanged", i, p);
  Literal *after = evaluate_seeded(m);
  EXPECT(before && after && literal_equal(before, after), "module %zu: the same bits before and after", i);
  EXPECT(!rewrite(m), "module %zu: a second run finds nothing to do", i);
  literal_free(before);
  literal_free(after);
  module_free(m);
}

/* Module i (text) compiled for the CPU, the whole pipeline, run on
 * arguments drawn from seed, gives the evaluator's answer on the module as
 * written; then compiled(e, i), where given, checks what the pipeline
 * made. */
static inline void check_cpu_matches_the_evaluator(const char *text, size_t i, uint64_t seed,
                                                   void (*compiled)(const Executable *, size_t)) {
  Module *m = parse_text(text);
  if (!m) return;
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_CPU);
  Status st;
  status_clear(&st);
  Executable *e = executable_compile(m, &o, &st);
  EXPECT(e != NULL, "module %zu compiles: %s", i, st.message);
  HostBuffer *args[8];
  int n = m->entry->parameter_count;
  EXPECT(n <= 8, "module %zu: at most 8 parameters, not %d", i, n);
  for (int p = 0; p < n && p < 8; p++) {
    Literal *lit = literal_create(&m->entry->parameters[p]->shape);
    literal_fill_random(lit, &seed);
    args[p] = host_buffer_adopt_literal(lit);
  }
  HostBuffer *r = e && n <= 8 ? executable_run(e, args, n, &st) : NULL;
  EXPECT(!e || r, "module %zu runs: %s", i, st.message);
  if (r) EXPECT(executable_check(e, args, n, r, &st), "module %zu matches the evaluator: %s", i, st.message);
  if (e && compiled) compiled(e, i);
  host_buffer_free(r);
  for (int p = 0; p < n && p < 8; p++) host_buffer_free(args[p]);
  executable_free(e);
  module_free(m);
}

#endif
