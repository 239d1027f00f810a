/* libFuzzer target for the whole compile path: parse, verify, optimize
 * (the verifier after every pass), compile for the CPU, run on inputs
 * drawn from the input's own bytes, and compare every instruction with the
 * reference evaluator on the same inputs (executable_run_debug, the
 * machinery of axle-run --check). `make fuzz` builds it with ASan and
 * UBSan beside fuzz_parse.c and runs it.
 *
 * A refusal is not a failure: text that does not parse or verify, and a
 * module the backend refuses at compile time with a reason, are fine. What
 * aborts (a finding) is a crash, a sanitizer report, a leak, a refusal
 * without a message, or a module the evaluator runs but the compiled code
 * does not match or does not run.
 *
 * Kept out so that every input stays quick: modules with a value of more
 * than MAX_ELEMENTS elements (a shape in the text can ask for 2^40), while
 * loops (a valid loop may never end), and entry parameters that are
 * tuples or tokens (no random input is drawn for them). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "runtime/executable.h"

enum { MAX_ELEMENTS = 1 << 14, MAX_TOTAL_ELEMENTS = 1 << 18 };

/* Every leaf's elements, or -1 past the limits. */
static int64_t shape_elements_within(const Shape *s) {
  if (shape_is_tuple(s)) {
    int64_t total = 0;
    for (int i = 0; i < s->tuple_count && total >= 0; i++) {
      int64_t n = shape_elements_within(&s->tuple_shapes[i]);
      total = n < 0 ? -1 : total + n;
    }
    return total;
  }
  int64_t n = 1;
  for (int d = 0; d < s->rank; d++) {
    if (s->dims[d] < 0 || s->dims[d] > MAX_ELEMENTS) return -1;
    n *= s->dims[d];
    if (n > MAX_ELEMENTS) return -1;
  }
  return n;
}

static bool module_is_quick(const Module *m) {
  int64_t total = 0;
  for (int c = 0; c < m->computation_count; c++) {
    const Computation *comp = m->computations[c];
    for (int i = 0; i < comp->instruction_count; i++) {
      const Instruction *inst = comp->instructions[i];
      if (inst->opcode == OP_WHILE) return false;
      int64_t n = shape_elements_within(&inst->shape);
      if (n < 0 || (total += n) > MAX_TOTAL_ELEMENTS) return false;
    }
  }
  for (int i = 0; i < m->entry->parameter_count; i++) {
    const Shape *s = &m->entry->parameters[i]->shape;
    if (shape_is_tuple(s) || s->type == TYPE_TOKEN) return false;
  }
  return true;
}

/* FNV-1a of the input: the seed of its random arguments. */
static uint64_t input_hash(const uint8_t *data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

/* AXLE_FUZZ_VERBOSE=1: one line per input saying how far it went. */
static void progress(const char *how, const Status *st) {
  static int verbose = -1;
  if (verbose < 0) verbose = getenv("AXLE_FUZZ_VERBOSE") != NULL;
  if (verbose) fprintf(stderr, "fuzz_compile: %s%s%s\n", how, st ? ": " : "", st ? st->message : "");
}

static void finding(const char *what, const Status *st, const uint8_t *data, size_t size) {
  fprintf(stderr, "fuzz_compile: %s: %s\n--- the module:\n%.*s\n", what, st->message, (int)size, (const char *)data);
  abort();
}

/* The module compiled for the CPU and run on args, every instruction
 * checked against the evaluator. */
static void compile_run_check(const Module *m, HostBuffer **args, int n, const uint8_t *data, size_t size) {
  Status st;
  status_clear(&st);
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_CPU);
  o.threads = 1;
  o.opt.verify_each_pass = true;
  Executable *e = executable_compile(m, &o, &st);
  if (!e) {
    /* A refusal (or a module the optimizer's verifier finds wrong after a
     * pass, which is a finding) must say why. */
    if (st.code == STATUS_OK || !st.message[0]) finding("a compile failed without a message", &st, data, size);
    if (strstr(st.message, "broken after pass")) finding("a pass broke the module", &st, data, size);
    progress("refused", &st);
    return;
  }
  DebugOptions check = {.check = true};
  DebugReport report;
  status_clear(&st);
  HostBuffer *r = executable_run_debug(e, args, n, &check, &report, &st);
  if (!r) finding("the compiled module differs from the evaluator or fails where it runs", &st, data, size);
  progress("compiled, ran and matched the evaluator", NULL);
  host_buffer_free(r);
  executable_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Status st;
  status_clear(&st);
  ParseOptions options = {.fill_elided_constants = true, .elided_seed = size};
  Module *m = parse_module_with((const char *)data, size, "fuzz.hlo", &options, &st);
  if (!m) {
    if (st.code == STATUS_OK || !st.message[0]) finding("parse failed without a message", &st, data, size);
    progress("does not parse", &st);
    return 0;
  }
  if (!module_is_quick(m)) {
    progress("left out (a while loop, a large value or a tuple parameter)", NULL);
    module_free(m);
    return 0;
  }
  int n = m->entry->parameter_count;
  HostBuffer **args = mem_calloc((size_t)n + 1, sizeof *args);
  Literal **values = mem_calloc((size_t)n + 1, sizeof *values);
  uint64_t state = input_hash(data, size);
  for (int i = 0; i < n; i++) {
    values[i] = literal_create(&m->entry->parameters[i]->shape);
    literal_fill_random(values[i], &state);
  }
  /* Only a module the evaluator runs on these inputs is compared. */
  status_clear(&st);
  Literal *want = eval_module(m, values, n, &st);
  if (want) {
    for (int i = 0; i < n; i++) args[i] = host_buffer_adopt_literal(values[i]), values[i] = NULL;
    compile_run_check(m, args, n, data, size);
  } else {
    progress("the evaluator does not run it", &st);
  }
  literal_free(want);
  for (int i = 0; i < n; i++) {
    host_buffer_free(args[i]);
    literal_free(values[i]);
  }
  free(args);
  free(values);
  module_free(m);
  return 0;
}
