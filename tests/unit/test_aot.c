/* axle_compile_to_object (include/axle.h, src/emit_x86/cpu_aot.c): what
 * it writes and what it refuses. tests/aot/aot.sh links and runs the
 * objects (the corpus, two objects in one program, the ISA check). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "axle.h"
#include "../test.h"

static char dir[64];

static const char add_module[] =
    "HloModule add_one\n"
    "ENTRY main {\n"
    "  x = f32[2,2]{1,0} parameter(0)\n"
    "  one = f32[] constant(1)\n"
    "  ones = f32[2,2]{1,0} broadcast(one), dimensions={}\n"
    "  ROOT sum = f32[2,2]{1,0} add(x, ones)\n"
    "}\n";

static const char sort_module[] =
    "HloModule sorts\n"
    "less {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT lt = pred[] compare(a, b), direction=LT\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[8]{0} parameter(0)\n"
    "  ROOT s = f32[8]{0} sort(x), dimensions={0}, to_apply=less\n"
    "}\n";

static char *file_read(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = calloc((size_t)n + 1, 1);
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) n = 0;
  fclose(f);
  *size = (size_t)n;
  return data;
}

static axle_module_t *module_parse(const char *text) {
  axle_error_t *error = NULL;
  axle_module_t *m = axle_module_parse(text, strlen(text), "unit.hlo", &error);
  EXPECT(m, "parse: %s", axle_error_message(error));
  axle_error_free(error);
  return m;
}

TEST(compile_to_object_writes_a_relocatable_object_and_its_header) {
  axle_module_t *m = module_parse(add_module);
  char object[128], header[128];
  snprintf(object, sizeof object, "%s/add.o", dir);
  snprintf(header, sizeof header, "%s/add.h", dir);
  axle_aot_options_t o = {.name = "unit_add", .cpu = "sse4"};
  axle_error_t *error = NULL;
  bool ok = axle_compile_to_object(m, &o, object, header, &error);
  EXPECT(ok, "%s", axle_error_message(error));
  size_t size = 0, text_size = 0;
  char *bytes = file_read(object, &size), *text = file_read(header, &text_size);
  /* ELF64, little-endian, e_type 1 (ET_REL), e_machine 62 (x86-64) */
  EXPECT(bytes && size > 64 && memcmp(bytes, "\x7f" "ELF\x02\x01", 6) == 0 && bytes[16] == 1 && bytes[18] == 62,
         "%zu bytes without the header of an x86-64 relocatable object", size);
  EXPECT(text && strstr(text, "int unit_add_run(const void *const *params, void *const *results, void *temp);"),
         "the header declares no unit_add_run:\n%s", text ? text : "(none)");
  EXPECT(text && strstr(text, "#define UNIT_ADD_PARAM0_BYTES 16\n") && strstr(text, "#define UNIT_ADD_RESULT0_DIMS {2, 2}\n") &&
             strstr(text, "#define UNIT_ADD_ISA \"sse4\"\n"),
         "the header's macros:\n%s", text ? text : "(none)");
  free(bytes);
  free(text);
  axle_error_free(error);
  axle_module_free(m);
}

TEST(compile_to_object_refuses_a_runtime_routine_located) {
  axle_module_t *m = module_parse(sort_module);
  char object[128];
  snprintf(object, sizeof object, "%s/sort.o", dir);
  axle_error_t *error = NULL;
  bool ok = axle_compile_to_object(m, NULL, object, NULL, &error);
  const char *message = axle_error_message(error);
  EXPECT(!ok && axle_error_status(error) == AXLE_ERROR_UNSUPPORTED, "status %d: %s", axle_error_status(error), message);
  EXPECT(strstr(message, "unit.hlo:9:8: error: the ahead-of-time CPU backend cannot compile s") &&
             strstr(message, "runtime routine in C"),
         "message: %s", message);
  EXPECT(access(object, F_OK) != 0, "a refused module left %s behind", object);
  axle_error_free(error);
  axle_module_free(m);
}

TEST(compile_to_object_rejects_bad_options) {
  axle_module_t *m = module_parse(add_module);
  char object[128];
  snprintf(object, sizeof object, "%s/bad.o", dir);
  const axle_aot_options_t bad[] = {{.cpu = "avx3"}, {.name = "9lives"}, {.name = "a-b"}, {.flags = "--frob"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    axle_error_t *error = NULL;
    bool ok = axle_compile_to_object(m, &bad[i], object, NULL, &error);
    EXPECT(!ok && axle_error_status(error) == AXLE_ERROR_INPUT, "options %zu: status %d: %s", i,
           axle_error_status(error), axle_error_message(error));
    axle_error_free(error);
  }
  axle_error_t *error = NULL;
  EXPECT(!axle_compile_to_object(m, NULL, NULL, NULL, &error) && axle_error_status(error) == AXLE_ERROR_INPUT,
         "no object path: status %d", axle_error_status(error));
  axle_error_free(error);
  axle_module_free(m);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/axle_test_aot_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  RUN(compile_to_object_writes_a_relocatable_object_and_its_header);
  RUN(compile_to_object_refuses_a_runtime_routine_located);
  RUN(compile_to_object_rejects_bad_options);
  char command[128];
  snprintf(command, sizeof command, "rm -rf %s", dir);
  if (system(command) != 0) printf("note: could not remove %s\n", dir);
  return test_summary();
}
