/* The runtime's Executable, its argument check, backend table and compile
 * cache (src/runtime/executable.h), through the internal interface. */
#include <stdlib.h>
#include <string.h>

#include "runtime/executable.h"
#include "../test.h"

static const char scale_text[] =
    "HloModule scale\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  two = f32[] constant(2)\n"
    "  twos = f32[4] broadcast(two), dimensions={}\n"
    "  y = f32[4] multiply(x, twos)\n"
    "  ROOT z = f32[4] add(y, x)\n"
    "}\n";

static Module *module_parse_text(const char *text) {
  Status st;
  status_clear(&st);
  Module *m = parse_module(text, strlen(text), "test.hlo", &st);
  if (!m) status_print(&st, stdout);
  return m;
}

static HostBuffer *f32_buffer(int64_t n, const float *values) {
  Status st;
  status_clear(&st);
  Shape s = shape_array(TYPE_F32, 1, &n);
  return host_buffer_create(&s, values, &st);
}

TEST(optimized_executable_keeps_its_plan_after_the_module_is_freed) {
  Status st;
  status_clear(&st);
  Module *m = module_parse_text(scale_text);
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_INTERP);
  o.optimize = 1;
  Executable *exe = m ? executable_compile(m, &o, &st) : NULL;
  module_free(m);
  EXPECT(exe != NULL, "compiles: %s", st.message);
  if (!exe) return;
  EXPECT(exe->optimized && exe->plan && exe->plan->computation == exe->optimized->entry,
         "the plan belongs to the executable's own optimized module");
  float xv[4] = {1, -2, 0.5f, 3};
  HostBuffer *x = f32_buffer(4, xv);
  HostBuffer *out = executable_run(exe, &x, 1, &st);
  EXPECT(out != NULL, "runs: %s", st.message);
  if (out) {
    const float *z = out->data;
    EXPECT(z[0] == 3 && z[1] == -6 && z[2] == 1.5f && z[3] == 9, "3x gives %g %g %g %g", z[0], z[1], z[2], z[3]);
    EXPECT(executable_check(exe, &x, 1, out, &st), "matches the evaluator on the module as written: %s", st.message);
    ((float *)out->data)[2] = 100;
    EXPECT(!executable_check(exe, &x, 1, out, &st) && strstr(st.message, "disagrees with the evaluator"),
           "a wrong result is caught: %s", st.message);
  }
  host_buffer_free(out);
  host_buffer_free(x);
  executable_free(exe);
}

TEST(interpreter_runs_the_module_as_written_and_native_backends_optimize) {
  Status st;
  status_clear(&st);
  Module *m = module_parse_text(scale_text);
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_INTERP);
  Executable *exe = m ? executable_compile(m, &o, &st) : NULL;
  EXPECT(exe && !exe->optimized && !exe->plan && executable_module_to_run(exe) == exe->module,
         "the interpreter's default is no optimization");
  executable_free(exe);
  module_free(m);
  const Backend *cpu = backend_get(AXLE_BACKEND_CPU, &st), *gpu = backend_get(AXLE_BACKEND_GPU, &st);
  EXPECT(cpu && gpu && cpu->optimizes && gpu->optimizes, "native backends optimize by default");
}

TEST(backend_table_follows_the_public_enum) {
  Status st;
  status_clear(&st);
  const char *names[] = {"interp", "cpu", "gpu"};
  for (int i = 0; i < 3; i++) {
    const Backend *be = backend_get((axle_backend_t)i, &st);
    axle_backend_t id = AXLE_BACKEND_GPU;
    EXPECT(be && strcmp(be->name, names[i]) == 0, "row %d is %s", i, names[i]);
    EXPECT(backend_id_from_name(names[i], &id, &st) && (int)id == i, "'%s' is value %d", names[i], i);
  }
  axle_backend_t id;
  EXPECT(!backend_id_from_name("tpu", &id, &st) && strstr(st.message, "expected interp, cpu or gpu"),
         "an unknown name lists the choices: %s", st.message);
  EXPECT(backend_get((axle_backend_t)3, &st) == NULL, "no row past the enum");
}

TEST(one_argument_check_covers_count_type_dims_and_tuples) {
  static const char text[] = "HloModule t\nENTRY main {\n  p = (f32[2], s32[]) parameter(0)\n"
                             "  ROOT a = f32[2] get-tuple-element(p), index=0\n}\n";
  Status st;
  status_clear(&st);
  Module *m = module_parse_text(text);
  if (!m) return;
  float v[2] = {1, 2};
  HostBuffer *a = f32_buffer(2, v), *b = f32_buffer(2, v);
  Shape s32 = shape_scalar(TYPE_S32), s64 = shape_scalar(TYPE_S64);
  HostBuffer *k = host_buffer_create(&s32, NULL, &st), *k64 = host_buffer_create(&s64, NULL, &st);
  HostBuffer *good = host_buffer_create_tuple((HostBuffer *[]){a, k}, 2, &st);
  HostBuffer *wrong_type = host_buffer_create_tuple((HostBuffer *[]){a, k64}, 2, &st);
  HostBuffer *too_long = host_buffer_create_tuple((HostBuffer *[]){a, k, b}, 3, &st);
  const Computation *entry = m->entry;
  EXPECT(host_buffer_check_arguments(entry, &good, 1, &st), "(f32[2], s32[]) fits: %s", st.message);
  EXPECT(!host_buffer_check_arguments(entry, &good, 2, &st) && strstr(st.message, "takes 1 parameter, got 2"),
         "count: %s", st.message);
  EXPECT(!host_buffer_check_arguments(entry, &wrong_type, 1, &st) &&
             strstr(st.message, "parameter 0 (p) expects (f32[2], s32[]), got (f32[2], s64[])"),
         "element type: %s", st.message);
  EXPECT(!host_buffer_check_arguments(entry, &too_long, 1, &st) && strstr(st.message, "got (f32[2], s32[], f32[2])"),
         "tuple structure: %s", st.message);
  EXPECT(!host_buffer_check_arguments(entry, &a, 1, &st) && strstr(st.message, "got f32[2]"),
         "an array for a tuple: %s", st.message);
  HostBuffer *bufs[] = {good, wrong_type, too_long, a, b, k, k64};
  for (int i = 0; i < 7; i++) host_buffer_free(bufs[i]);
  module_free(m);
}

TEST(compile_cache_keys_on_text_and_options) {
  CompileCache cache = COMPILE_CACHE_INIT;
  Status st;
  status_clear(&st);
  Module *m1 = module_parse_text(scale_text), *m2 = module_parse_text(scale_text);
  if (!m1 || !m2) return;
  ExecutableOptions plain, optimized;
  executable_options_default(&plain, AXLE_BACKEND_INTERP);
  optimized = plain;
  optimized.optimize = 1;
  bool hit1, hit2, hit3;
  Executable *e1 = compile_cache_get(&cache, m1, &plain, &hit1, &st);
  Executable *e2 = compile_cache_get(&cache, m2, &plain, &hit2, &st);
  Executable *e3 = compile_cache_get(&cache, m2, &optimized, &hit3, &st);
  EXPECT(e1 && e2 && e3, "all compile: %s", st.message);
  EXPECT(!hit1 && hit2 && e1 == e2, "the same text with the same options is the same executable");
  EXPECT(!hit3 && e3 != e1, "other options compile anew");
  EXPECT(cache.hits == 1 && cache.misses == 2, "1 hit and 2 misses, got %lld and %lld",
         (long long)cache.hits, (long long)cache.misses);
  ExecutableOptions stats = plain;
  stats.opt.stats = true;
  stats.optimize = 1;
  Executable *e4 = compile_cache_get(&cache, m1, &stats, &hit1, &st);
  EXPECT(e4 && !hit1 && e4->stats && cache.misses == 2, "--stats compiles outside the cache");
  executable_free(e4);
  executable_free(e1);
  executable_free(e2);
  executable_free(e3);
  compile_cache_clear(&cache);
  module_free(m1);
  module_free(m2);
}

TEST(compile_cache_drops_the_least_recently_used) {
  CompileCache cache = COMPILE_CACHE_INIT;
  Status st;
  status_clear(&st);
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_INTERP);
  bool hit = false, ok = true;
  for (int i = 0; i <= COMPILE_CACHE_CAPACITY; i++) {
    char text[160];
    snprintf(text, sizeof text, "HloModule m%d\nENTRY main {\n  ROOT c = f32[] constant(%d)\n}\n", i, i);
    Module *m = module_parse_text(text);
    Executable *e = m ? compile_cache_get(&cache, m, &o, &hit, &st) : NULL;
    ok = ok && e && !hit;
    executable_free(e);
    module_free(m);
  }
  EXPECT(ok && cache.count == COMPILE_CACHE_CAPACITY, "%d distinct modules, %d kept",
         COMPILE_CACHE_CAPACITY + 1, cache.count);
  Module *first = module_parse_text("HloModule m0\nENTRY main {\n  ROOT c = f32[] constant(0)\n}\n");
  Module *last = module_parse_text("HloModule m32\nENTRY main {\n  ROOT c = f32[] constant(32)\n}\n");
  bool first_hit = true, last_hit = false;
  Executable *e0 = first ? compile_cache_get(&cache, first, &o, &first_hit, &st) : NULL;
  Executable *e32 = last ? compile_cache_get(&cache, last, &o, &last_hit, &st) : NULL;
  EXPECT(!first_hit && last_hit, "the oldest was dropped, the newest kept");
  executable_free(e0);
  executable_free(e32);
  module_free(first);
  module_free(last);
  compile_cache_clear(&cache);
}

TEST(timing_reports_ordered_times) {
  Status st;
  status_clear(&st);
  Module *m = module_parse_text(scale_text);
  ExecutableOptions o;
  executable_options_default(&o, AXLE_BACKEND_INTERP);
  Executable *exe = m ? executable_compile(m, &o, &st) : NULL;
  float xv[4] = {0};
  HostBuffer *x = f32_buffer(4, xv);
  RunTimes t = {0};
  EXPECT(exe && executable_time(exe, &x, 1, 5, &t, &st), "times: %s", st.message);
  EXPECT(t.runs == 5 && t.min_ms <= t.median_ms && t.median_ms <= t.max_ms, "min %g median %g max %g",
         t.min_ms, t.median_ms, t.max_ms);
  host_buffer_free(x);
  executable_free(exe);
  module_free(m);
}

int main(void) {
  RUN(optimized_executable_keeps_its_plan_after_the_module_is_freed);
  RUN(interpreter_runs_the_module_as_written_and_native_backends_optimize);
  RUN(backend_table_follows_the_public_enum);
  RUN(one_argument_check_covers_count_type_dims_and_tuples);
  RUN(compile_cache_keys_on_text_and_options);
  RUN(compile_cache_drops_the_least_recently_used);
  RUN(timing_reports_ordered_times);
  return test_summary();
}
