/* The C header beside an ahead-of-time object (cpu_aot.h): plain C that
 * says, in place, how to call NAME_run, and describes every parameter and
 * result array twice, as macros (for sizes known at compile time) and as a
 * const table (for code that walks them). Everything it declares starts
 * with NAME or NAME in capitals, so two headers go in one file. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "axle.h"
#include "emit_x86/cpu_aot.h"

/* One array the caller passes or receives. */
typedef struct AotArray {
  const Shape *shape;
  const char *what;   /* the instruction it comes from */
  int parameter;      /* its parameter, or -1 for a result */
} AotArray;

typedef struct AotArrays {
  AotArray *items;
  int count, capacity;
} AotArrays;

/* The array leaves of s, depth first, as the runs count them. */
static void arrays_collect(AotArrays *list, const Shape *s, const char *what, int parameter) {
  if (shape_is_tuple(s)) {
    for (int i = 0; i < s->tuple_count; i++) arrays_collect(list, &s->tuple_shapes[i], what, parameter);
    return;
  }
  if (list->count == list->capacity) {
    list->capacity = list->capacity ? 2 * list->capacity : 8;
    list->items = mem_realloc(list->items, (size_t)list->capacity * sizeof *list->items);
  }
  list->items[list->count++] = (AotArray){.shape = s, .what = what, .parameter = parameter};
}

static const char *const level_features[] = {
    [CPU_LEVEL_NONE] = "",
    [CPU_LEVEL_SSE4] = "SSE4.1",
    [CPU_LEVEL_AVX2] = "AVX2, FMA and F16C (x86-64-v3)",
    [CPU_LEVEL_AVX512] = "AVX-512 F, BW, DQ and VL (x86-64-v4)",
};

static void dims_print(StrBuf *sb, const Shape *s) {
  strbuf_printf(sb, "{");
  for (int d = 0; d < s->rank; d++) strbuf_printf(sb, "%s%lld", d ? ", " : "", (long long)s->dims[d]);
  strbuf_printf(sb, "}");
}

static void array_macros(StrBuf *sb, const char *prefix, const char *kind, int index, const AotArray *a) {
  StrBuf shape = {0};
  shape_print(&shape, a->shape, true);
  if (a->parameter >= 0)
    strbuf_printf(sb, "\n/* params[%d]: parameter %d (%s), %s */\n", index, a->parameter, a->what, shape.data);
  else
    strbuf_printf(sb, "\n/* results[%d]: of %s, %s */\n", index, a->what, shape.data);
  strbuf_free(&shape);
  strbuf_printf(sb, "#define %s_%s%d_TYPE \"%s\"\n", prefix, kind, index, type_name(a->shape->type));
  strbuf_printf(sb, "#define %s_%s%d_ELEMENT_BYTES %d\n", prefix, kind, index, type_byte_size(a->shape->type));
  strbuf_printf(sb, "#define %s_%s%d_RANK %d\n", prefix, kind, index, a->shape->rank);
  if (a->shape->rank > 0) {
    strbuf_printf(sb, "#define %s_%s%d_DIMS ", prefix, kind, index);
    dims_print(sb, a->shape);
    strbuf_printf(sb, "\n");
  }
  strbuf_printf(sb, "#define %s_%s%d_ELEMENTS %lld\n", prefix, kind, index,
                (long long)shape_element_count(a->shape));
  strbuf_printf(sb, "#define %s_%s%d_BYTES %lld\n", prefix, kind, index, (long long)shape_byte_size(a->shape));
}

static void array_row(StrBuf *sb, const AotArray *a) {
  strbuf_printf(sb, "    {\"%s\", \"%s\", %d, %d, ", a->what, type_name(a->shape->type), type_byte_size(a->shape->type),
                a->shape->rank);
  if (a->shape->rank == 0) strbuf_printf(sb, "{0}");
  else dims_print(sb, a->shape);
  strbuf_printf(sb, ", {");
  for (int d = 0; d < a->shape->rank; d++) strbuf_printf(sb, "%s%d", d ? ", " : "", a->shape->minor_to_major[d]);
  if (a->shape->rank == 0) strbuf_printf(sb, "0");
  strbuf_printf(sb, "}, %lld, %lld},\n", (long long)shape_element_count(a->shape),
                (long long)shape_byte_size(a->shape));
}

static void array_table(StrBuf *sb, const char *name, const char *table, const AotArrays *list) {
  strbuf_printf(sb, "static const %s_array_t %s_%s[%d] AXLE_AOT_UNUSED = {\n", name, name, table,
                list->count ? list->count : 1);
  for (int i = 0; i < list->count; i++) array_row(sb, &list->items[i]);
  if (list->count == 0) strbuf_printf(sb, "    {0}, /* none: a placeholder, as C has no empty arrays */\n");
  strbuf_printf(sb, "};\n");
}

static void usage_comment(StrBuf *sb, const char *name, const char *prefix, const CpuAotOptions *o,
                          const Module *m, const CpuAotLayout *layout) {
  strbuf_printf(sb,
                "/* %s.h: how to call %s_run, written by axle-aot %s from %s (module %s).\n"
                " * Do not edit: run axle-aot again.\n"
                " *\n"
                " * The object beside it holds the module compiled ahead of time for x86-64\n"
                " * at ISA level %s (%s). It needs nothing else:\n"
                " * no libc, no libaxle, no executable memory made at run time.\n"
                " *\n"
                " *   int %s_run(const void *const *params, void *const *results, void *temp);\n"
                " *\n"
                " * params   %s_PARAM_COUNT pointers, one per parameter array (a tuple\n"
                " *          parameter's arrays depth first), each to its data, row-major,\n"
                " *          aligned to 16 bytes as malloc's memory is. Only read.\n"
                " * results  %s_RESULT_COUNT pointers, one per result array (a tuple\n"
                " *          result's arrays depth first), each to %s_RESULTi_BYTES\n"
                " *          writable bytes, aligned to 16; the result is written there,\n"
                " *          row-major. They must not overlap the parameters or each other.\n"
                " * temp     %s_TEMP_BYTES bytes of scratch, aligned to\n"
                " *          %s_TEMP_ALIGNMENT bytes (C11 aligned_alloc with 64); may be NULL\n"
                " *          when %s_TEMP_BYTES is 0. Nothing needs to be in it before and\n"
                " *          nothing is left in it after. Runs on different temps may run\n"
                " *          at the same time on different threads.\n"
                " *\n"
                " * Returns %s_OK (0), or, having run nothing:\n"
                " *   %s_ERROR_CPU (1)       this CPU or its operating system lacks %s\n"
                " *                          (cpuid is asked at the first call, until it passes)\n"
                " *   %s_ERROR_ARGUMENT (2)  params, results or temp is NULL where it is\n"
                " *                          needed, or temp is not aligned\n"
                " * A run itself cannot fail: every HLO corner case has its defined answer.\n"
                " * The results are the bytes axle-run gives for the same inputs. */\n",
                name, name, axle_version(), o->source_name ? o->source_name : "?", m->name,
                cpu_level_name(layout->level), level_features[layout->level], name, prefix, prefix, prefix, prefix,
                prefix, prefix, prefix, prefix, cpu_level_name(layout->level), prefix);
}

static void declarations(StrBuf *sb, const char *name, const char *prefix, const AotArrays *params,
                         const AotArrays *results, const CpuAotLayout *layout) {
  int max_rank = 1;
  for (int i = 0; i < params->count; i++)
    if (params->items[i].shape->rank > max_rank) max_rank = params->items[i].shape->rank;
  for (int i = 0; i < results->count; i++)
    if (results->items[i].shape->rank > max_rank) max_rank = results->items[i].shape->rank;
  strbuf_printf(sb,
                "\n#define %s_OK 0\n#define %s_ERROR_CPU %d\n#define %s_ERROR_ARGUMENT %d\n"
                "#define %s_ISA \"%s\"\n#define %s_PARAM_COUNT %d\n#define %s_RESULT_COUNT %d\n"
                "/* the scratch block %s_run needs; 0: none */\n"
                "#define %s_TEMP_BYTES %lld\n#define %s_TEMP_ALIGNMENT %d\n#define %s_MAX_RANK %d\n",
                prefix, prefix, CPU_AOT_ERROR_CPU, prefix, CPU_AOT_ERROR_ARGUMENT, prefix,
                cpu_level_name(layout->level), prefix, params->count, prefix, results->count, name, prefix,
                (long long)layout->temp_bytes, prefix, CPU_AOT_TEMP_ALIGNMENT, prefix, max_rank);
  for (int i = 0; i < params->count; i++) array_macros(sb, prefix, "PARAM", i, &params->items[i]);
  for (int i = 0; i < results->count; i++) array_macros(sb, prefix, "RESULT", i, &results->items[i]);
  strbuf_printf(sb,
                "\n/* The same facts as a table: %s_params[i] describes params[i],\n"
                " * %s_results[i] results[i]. minor_to_major is the module's layout\n"
                " * (HLO's {1,0} for a row-major matrix); the bytes are row-major either way. */\n"
                "typedef struct %s_array {\n"
                "  const char *name;        /* the HLO instruction it is the value of */\n"
                "  const char *type;        /* the element type as HLO spells it: \"f32\" */\n"
                "  int element_bytes;\n"
                "  int rank;\n"
                "  int64_t dims[%s_MAX_RANK];\n"
                "  int minor_to_major[%s_MAX_RANK];\n"
                "  int64_t elements;\n"
                "  int64_t bytes;\n"
                "} %s_array_t;\n\n",
                name, name, name, prefix, prefix, name);
  array_table(sb, name, "params", params);
  array_table(sb, name, "results", results);
  strbuf_printf(sb, "\nint %s_run(const void *const *params, void *const *results, void *temp);\n", name);
  strbuf_printf(sb,
                "\n/* Threads, if you want them: %s_run_parallel is %s_run with each large\n"
                " * kernel's rows cut into tasks (by shape, as axle's JIT cuts them) and\n"
                " * handed to parallel_for, which must call task(context, i) once for every\n"
                " * i in [0, tasks), on any threads in any order, and return when all are\n"
                " * done; runner is passed to it as it is. The results are the bytes of\n"
                " * %s_run (every row is computed alone). NULL parallel_for: %s_run. */\n"
                "typedef void %s_task_t(void *context, int64_t index);\n"
                "typedef void %s_parallel_for_t(void *runner, int64_t tasks, %s_task_t *task, void *context);\n"
                "int %s_run_parallel(const void *const *params, void *const *results, void *temp,\n"
                "                    %s_parallel_for_t *parallel_for, void *runner);\n",
                name, name, name, name, name, name, name, name, name);
}

char *cpu_aot_header_create(const Executable *exe, const CpuAotOptions *o, const CpuAotLayout *layout) {
  const Module *m = exe->module;  /* the parameters and result as the caller knows them */
  AotArrays params = {0}, results = {0};
  for (int i = 0; i < m->entry->parameter_count; i++)
    arrays_collect(&params, &m->entry->parameters[i]->shape, m->entry->parameters[i]->name, i);
  arrays_collect(&results, &m->entry->root->shape, m->entry->root->name, -1);
  char *prefix = mem_strdup(o->name);
  for (char *c = prefix; *c; c++) *c = (char)toupper((unsigned char)*c);
  StrBuf sb = {0};
  usage_comment(&sb, o->name, prefix, o, m, layout);
  strbuf_printf(&sb,
                "#ifndef %s_AOT_H\n#define %s_AOT_H\n\n#include <stdint.h>\n\n"
                "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
                "#ifndef AXLE_AOT_UNUSED\n#if defined(__GNUC__)\n#define AXLE_AOT_UNUSED __attribute__((unused))\n"
                "#else\n#define AXLE_AOT_UNUSED\n#endif\n#endif\n",
                prefix, prefix);
  declarations(&sb, o->name, prefix, &params, &results, layout);
  strbuf_printf(&sb, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
  mem_free(params.items);
  mem_free(results.items);
  mem_free(prefix);
  return sb.data;
}
