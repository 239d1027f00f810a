/* The random differential test of the CPU backend: a thousand modules from
 * random_module.h, each compiled at every ISA level this machine has
 * (AXLE_CPU=sse4, avx2, avx512) and checked instruction by instruction
 * against the reference evaluator (executable_run_debug, the machinery of
 * axle-run --check: each instruction from the backend's own inputs, and
 * the result exactly what the root computed); at 1 and 2 threads the
 * results must be the same bytes.
 *
 * The whole result is not held to the evaluator's on the module as
 * written: a sum rounded in another order one instruction earlier may
 * legitimately grow (a log near 0, a cancelling dot) beyond any fixed
 * tolerance. Instruction by instruction nothing can grow.
 *
 * A refusal fails only when every op family the module used is one the
 * backend compiles at that level (the table in random_module.h says which).
 * Every failure prints the module's seed; replay one with
 *   AXLE_RANDOM_SEED=S build/tests/test_cpu_random
 * and change the number of modules with AXLE_RANDOM_MODULES=N (from seed
 * S, or 1). The modules include the fusion forms XLA's optimizer gives
 * (random_xla_fusions.h) unless AXLE_RANDOM_XLA_FUSIONS=0.
 *
 * The generator's switches (random_module.h, GenSwitches) are on unless
 * the environment turns one off: AXLE_RANDOM_LAYOUTS=0 draws no layouts
 * beyond parameters' and none of the layouts-* families;
 * AXLE_RANDOM_EMPTY=0 no empty dimensions; AXLE_RANDOM_INDEX_LIMITS=0 no
 * start indices at their type's limits. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_features.h"
#include "runtime/executable.h"
#include "random_module.h"
#include "../test.h"

/* Under AddressSanitizer (make check) everything runs several times
 * slower: fewer modules keep the test near a minute. */
#if defined(__SANITIZE_ADDRESS__)
enum { DEFAULT_MODULES = 500 };
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
enum { DEFAULT_MODULES = 500 };
#else
enum { DEFAULT_MODULES = 1000 };
#endif
#else
enum { DEFAULT_MODULES = 1000 };
#endif

enum { SHOWN_FAILURES = 3 };  /* of each kind, in full */

typedef struct Tally {
  int modules, runs, refused_allowed;
  int invalid, refused_wrongly, mismatched, thread_differences;
  int family_modules[GEN_FAMILY_COUNT];
  int shown[4], shown_text;
} Tally;

static Tally tally;
static GenSwitches switches;

typedef enum FailureKind { INVALID, REFUSED, MISMATCHED, THREADS } FailureKind;

/* Prints one failure: the first few of each kind, and the text of the
 * very first module that failed. */
static void failure_show(FailureKind kind, uint64_t seed, const char *level, const char *what, const char *message,
                         const char *text) {
  if (tally.shown[kind]++ >= SHOWN_FAILURES) return;
  printf("  seed %llu (AXLE_RANDOM_SEED=%llu), %s: %s: %s\n", (unsigned long long)seed, (unsigned long long)seed,
         level, what, message);
  if (tally.shown_text++ == 0) printf("%s\n", text);
}

static bool refusal_allowed(uint64_t used, CpuLevel level) {
  for (int f = 0; f < GEN_FAMILY_COUNT; f++) {
    if (!(used >> f & 1)) continue;
    if (families[f].refusable == REFUSED_ANYWHERE) return true;
    if (families[f].refusable == REFUSED_AT_SSE4 && level == CPU_LEVEL_SSE4) return true;
  }
  return false;
}

static bool buffers_same_bytes(const HostBuffer *a, const HostBuffer *b) {
  if (shape_is_tuple(&a->shape) != shape_is_tuple(&b->shape)) return false;
  if (shape_is_tuple(&a->shape)) {
    for (int i = 0; i < a->shape.tuple_count; i++)
      if (!buffers_same_bytes(a->elements[i], b->elements[i])) return false;
    return true;
  }
  size_t bytes = (size_t)shape_byte_size(&a->shape);
  return bytes == (size_t)shape_byte_size(&b->shape) && (bytes == 0 || memcmp(a->data, b->data, bytes) == 0);
}

static Executable *compile_at(const Module *m, int threads, Status *st) {
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_CPU);
  o.threads = threads;
  status_clear(st);
  return executable_compile(m, &o, st);
}

/* One module at one ISA level (AXLE_CPU is set by the caller). */
static void module_run_at(const Module *m, HostBuffer **args, int n, uint64_t seed, uint64_t used, CpuLevel level,
                          const char *text) {
  const char *name = cpu_level_name(level);
  Status st;
  Executable *e1 = compile_at(m, 1, &st);
  if (!e1) {
    if (st.code == STATUS_UNSUPPORTED && refusal_allowed(used, level)) {
      tally.refused_allowed++;
      return;
    }
    tally.refused_wrongly++;
    failure_show(REFUSED, seed, name, "refused", st.message, text);
    return;
  }
  tally.runs++;
  DebugOptions check = {.check = true};
  DebugReport report;
  status_clear(&st);
  HostBuffer *r1 = executable_run_debug(e1, args, n, &check, &report, &st);
  if (!r1) {
    tally.mismatched++;
    failure_show(MISMATCHED, seed, name, "an instruction differs", st.message, text);
  }
  Executable *e2 = compile_at(m, 2, &st);
  HostBuffer *r2 = e2 ? executable_run(e2, args, n, &st) : NULL;
  if (r1 && (!r2 || !buffers_same_bytes(r1, r2))) {
    tally.thread_differences++;
    failure_show(THREADS, seed, name, "1 and 2 threads", r2 ? "the results differ" : st.message, text);
  }
  host_buffer_free(r1);
  host_buffer_free(r2);
  executable_free(e1);
  executable_free(e2);
}

/* The generator's switches: on unless AXLE_RANDOM_EMPTY=0 or
 * AXLE_RANDOM_INDEX_LIMITS=0. */
static GenSwitches switches_from_environment(void) {
  const char *empty = getenv("AXLE_RANDOM_EMPTY"), *limits = getenv("AXLE_RANDOM_INDEX_LIMITS");
  return (GenSwitches){.empty_dimensions = !empty || strcmp(empty, "0") != 0,
                       .index_limits = !limits || strcmp(limits, "0") != 0};
}

/* A parameter whose values the generator chose (indices at their type's
 * limits) takes them. */
static void argument_fix(Literal *lit, int param, const GenFixed *fixed, int fixed_count) {
  for (int f = 0; f < fixed_count; f++) {
    if (fixed[f].param != param) continue;
    for (int64_t i = 0; i < shape_element_count(&lit->shape); i++)
      literal_set_s64(lit, i, fixed[f].values[i % fixed[f].count]);
  }
}

static void module_test(uint64_t seed, CpuLevel hardware) {
  uint64_t used = 0;
  static GenFixed fixed[GEN_MAX_VALUES];
  int fixed_count = 0;
  char *text = random_module_text_with(seed, &switches, &used, fixed, &fixed_count);
  tally.modules++;
  for (int f = 0; f < GEN_FAMILY_COUNT; f++) tally.family_modules[f] += used >> f & 1;
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "random.hlo", &st);
  if (!m) {
    tally.invalid++;
    failure_show(INVALID, seed, "-", "the generator wrote an invalid module", st.message, text);
    free(text);
    return;
  }
  int n = m->entry->parameter_count;
  HostBuffer **args = calloc((size_t)n + 1, sizeof *args);
  uint64_t state = seed;
  for (int i = 0; i < n; i++) {
    Literal *lit = literal_create(&m->entry->parameters[i]->shape);
    literal_fill_random(lit, &state);
    argument_fix(lit, i, fixed, fixed_count);
    args[i] = host_buffer_adopt_literal(lit);
  }
  for (CpuLevel level = CPU_LEVEL_SSE4; level <= hardware; level++) {
    setenv("AXLE_CPU", cpu_level_name(level), 1);
    module_run_at(m, args, n, seed, used, level, text);
  }
  for (int i = 0; i < n; i++) host_buffer_free(args[i]);
  free(args);
  module_free(m);
  free(text);
}

/* How often XLA's fusion forms (random_xla_fusions.h) came up. */
static void xla_fusion_forms_report(void) {
  if (!gen_xla_fusion_forms_enabled()) {
    printf("XLA fusion forms: off (AXLE_RANDOM_XLA_FUSIONS=0)\n");
    return;
  }
  printf("XLA fusion forms: on;");
  for (int f = 0; f < GEN_FAMILY_COUNT; f++)
    if (strncmp(families[f].name, "xla-", 4) == 0) printf(" %s in %d,", families[f].name, tally.family_modules[f]);
  printf(" modules\n");
}

/* Runs every module once; the tests below read the tally. */
static void modules_sweep(void) {
  CpuFeatures hw;
  cpu_features_detect_hardware(&hw);
  const char *replay = getenv("AXLE_RANDOM_SEED"), *count = getenv("AXLE_RANDOM_MODULES");
  int modules = count ? atoi(count) : DEFAULT_MODULES;
  uint64_t first = replay ? strtoull(replay, NULL, 10) : 1;
  if (replay && !count) modules = 1;
  const char *layouts = getenv("AXLE_RANDOM_LAYOUTS");
  switches = switches_from_environment();
  switches = switches_from_environment();
  switches.layouts = !layouts || atoi(layouts) != 0;
  if (hw.hardware_level == CPU_LEVEL_NONE) return;
  for (int i = 0; i < modules; i++) module_test(first + (uint64_t)i, hw.hardware_level);
  unsetenv("AXLE_CPU");
  printf("random modules: %d modules, %d compiled runs checked, %d refusals allowed (ops the backend does not "
         "compile at that level); layouts %s\n",
         tally.modules, tally.runs, tally.refused_allowed, switches.layouts ? "on" : "off");
  xla_fusion_forms_report();
  printf("switches: empty dimensions %s, index limits %s\n", switches.empty_dimensions ? "on" : "off",
         switches.index_limits ? "on" : "off");
}

TEST(random_modules_are_valid_hlo) {
  EXPECT(tally.invalid == 0, "%d of %d generated modules did not parse and verify", tally.invalid, tally.modules);
}

TEST(random_modules_of_supported_ops_compile) {
  EXPECT(tally.refused_wrongly == 0, "%d compiles refused a module whose ops the backend supports",
         tally.refused_wrongly);
}

TEST(random_modules_match_the_evaluator_at_every_isa_level) {
  EXPECT(tally.runs > 0, "no module compiled");
  EXPECT(tally.mismatched == 0, "%d of %d runs differ from the evaluator", tally.mismatched, tally.runs);
}

TEST(random_modules_give_the_same_bytes_at_1_and_2_threads) {
  EXPECT(tally.thread_differences == 0, "%d of %d runs differ between 1 and 2 threads", tally.thread_differences,
         tally.runs);
}

/* The generator is not stuck on a few families: every family it may draw
 * appears in some module (checked on the full sweep of 1,000 only: the
 * rarest families need a few hundred modules to come up). */
TEST(random_modules_use_every_family) {
  if (tally.modules < 1000) return;
  for (int f = 0; f < GEN_FAMILY_COUNT; f++)
    EXPECT(families[f].weight == 0 || !gen_family_drawable(switches.layouts, f) || tally.family_modules[f] > 0,
           "family %s never drawn", families[f].name);
}

int main(void) {
  modules_sweep();
  RUN(random_modules_are_valid_hlo);
  RUN(random_modules_of_supported_ops_compile);
  RUN(random_modules_match_the_evaluator_at_every_isa_level);
  RUN(random_modules_give_the_same_bytes_at_1_and_2_threads);
  RUN(random_modules_use_every_family);
  return test_summary();
}
