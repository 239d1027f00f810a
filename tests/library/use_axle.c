/* A program that uses axle the way one outside this tree would: only
 * <axle.h> and what pkg-config says (tests/library.sh builds it against the
 * installed shared and static libraries). It checks the library's version
 * against the header's, that a parse error comes back located, and that a
 * module compiled for the CPU computes what plain C computes; it prints
 * "ok VERSION" and exits 0, or says what went wrong and exits 1. */
#include <axle.h>
#include <stdio.h>
#include <string.h>

static const char module_text[] =
    "HloModule use_axle\n"
    "\n"
    "sum {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "\n"
    "ENTRY main {\n"
    "  x = f32[8] parameter(0)\n"
    "  y = f32[8] parameter(1)\n"
    "  m = f32[8] multiply(x, y)\n"
    "  zero = f32[] constant(0)\n"
    "  ROOT r = f32[] reduce(m, zero), dimensions={0}, to_apply=sum\n"
    "}\n";

static int fail(const char *what, axle_error_t *error) {
  fprintf(stderr, "use_axle: %s: %s", what, error ? axle_error_message(error) : "\n");
  axle_error_free(error);
  return 1;
}

/* The header's version as the library should spell it. */
static int version_matches(void) {
  char expected[64];
  snprintf(expected, sizeof expected, "%d.%d.%d", AXLE_VERSION_MAJOR, AXLE_VERSION_MINOR,
           AXLE_VERSION_PATCH);
  if (strcmp(axle_version(), expected) == 0) return 1;
  fprintf(stderr, "use_axle: axle_version() is %s, the header says %s\n", axle_version(), expected);
  return 0;
}

int main(void) {
  if (!version_matches()) return 1;

  axle_error_t *error = NULL;
  static const char bad_text[] = "HloModule m\nENTRY e {\n  ROOT r = f32[] frob()\n}\n";
  if (axle_module_parse(bad_text, strlen(bad_text), "bad.hlo", &error)) {
    fprintf(stderr, "use_axle: a module with an unknown opcode parsed\n");
    return 1;
  }
  if (strncmp(axle_error_message(error), "bad.hlo:3:", 10) != 0) return fail("unlocated parse error", error);
  axle_error_free(error);
  error = NULL;

  axle_module_t *module = axle_module_parse(module_text, strlen(module_text), "use_axle.hlo", &error);
  if (!module) return fail("parse", error);
  axle_executable_t *exe = axle_compile(module, AXLE_BACKEND_CPU, &error);
  if (!exe) return fail("compile", error);

  float x[8], y[8], expected = 0;
  for (int i = 0; i < 8; i++) {
    x[i] = (float)(i + 1);
    y[i] = (float)(2 * i - 3);
    expected += x[i] * y[i];   /* small integers: exact in any order */
  }
  int64_t dims[1] = {8};
  axle_buffer_t *args[2] = {axle_buffer_create(AXLE_F32, 1, dims, x, &error), NULL};
  if (args[0]) args[1] = axle_buffer_create(AXLE_F32, 1, dims, y, &error);
  if (!args[1]) return fail("buffer", error);
  axle_buffer_t *result = NULL;
  if (!axle_executable_run(exe, args, 2, &result, &error)) return fail("run", error);
  float got = *(const float *)axle_buffer_data(result);
  int rc = 0;
  if (got != expected) {
    fprintf(stderr, "use_axle: sum of x*y is %g, expected %g\n", got, expected);
    rc = 1;
  } else {
    printf("ok %s: sum(x*y) = %g on the CPU backend\n", axle_version(), got);
  }
  axle_buffer_free(result);
  axle_buffer_free(args[0]);
  axle_buffer_free(args[1]);
  axle_executable_free(exe);
  axle_module_free(module);
  return rc;
}
