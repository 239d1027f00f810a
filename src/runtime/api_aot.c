/* The public API's ahead-of-time compile (include/axle.h,
 * axle_compile_to_object): the CPU backend's one compile path, then the
 * object and header of src/emit_x86/cpu_aot.c, as axle-aot writes them. */
#include <string.h>

#include "emit_x86/cpu_aot.h"
#include "runtime/api_internal.h"
#include "runtime/executable.h"

static bool axle_compile_to_object_body(const axle_module_t *am, const axle_aot_options_t *given,
                                     const char *object_path, const char *header_path, axle_error_t **error) {
  Status st;
  status_clear(&st);
  const axle_aot_options_t none = {0};
  if (!given) given = &none;
  if (!am || !object_path) {
    status_error(&st, STATUS_INPUT_ERROR, "axle_compile_to_object: no %s given", am ? "object path" : "module");
    return api_set_error(error, &st);
  }
  ExecutableOptions options;
  executable_options_default(&options, AXLE_BACKEND_CPU);
  if (!opt_options_parse_flags(&options.opt, given->flags, "axle_aot_options_t.flags", &st))
    return api_set_error(error, &st);
  CpuLevel level = CPU_LEVEL_NONE;
  if (!given->cpu || strcmp(given->cpu, "native") == 0) {
    CpuFeatures f;
    if (!cpu_features_detect(&f, &st)) return api_set_error(error, &st);
    level = f.level;
  } else if (!cpu_level_from_name(given->cpu, &level)) {
    status_error(&st, STATUS_INPUT_ERROR, "axle_aot_options_t.cpu: sse4, avx2, avx512 or native, not %s",
                 given->cpu);
    return api_set_error(error, &st);
  }
  if (level == CPU_LEVEL_NONE) {
    status_error(&st, STATUS_UNSUPPORTED, "this machine lacks SSE4.1: name a level in axle_aot_options_t.cpu");
    return api_set_error(error, &st);
  }
  options.cpu_level = (int)level;
  CpuAotOptions o = {.name = given->name ? given->name : "model",
                     .source_name = am->module->filename ? am->module->filename : am->module->name};
  return cpu_aot_compile_files(am->module, &options, &o, object_path, header_path, NULL, &st) || api_set_error(error, &st);
}

AXLE_API bool axle_compile_to_object(const axle_module_t *am, const axle_aot_options_t *given,
                                     const char *object_path, const char *header_path, axle_error_t **error) {
  MemScope scope;
  mem_scope_begin(&scope);
  if (setjmp(scope.unwind) != 0) return api_out_of_memory(error, &scope), false;
  bool returned = axle_compile_to_object_body(am, given, object_path, header_path, error);
  mem_scope_end(&scope);
  return returned;
}
