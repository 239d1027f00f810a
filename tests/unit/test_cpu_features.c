/* CPU feature detection: agrees with the kernel's view, and AXLE_CPU can only
 * lower the ISA level. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_features.h"
#include "../test.h"

/* Our field and the name Linux prints in /proc/cpuinfo's "flags" line. Linux
 * also hides AVX and AVX-512 flags when XCR0 does not enable their state, so
 * both sides apply the same OS check. */
static const struct {
  const char *linux_name;
  size_t offset;
} cpuinfo_flags[] = {
    {"sse4_1", offsetof(CpuFeatures, sse4_1)},     {"avx", offsetof(CpuFeatures, avx)},
    {"avx2", offsetof(CpuFeatures, avx2)},         {"fma", offsetof(CpuFeatures, fma)},
    {"f16c", offsetof(CpuFeatures, f16c)},         {"avx512f", offsetof(CpuFeatures, avx512f)},
    {"avx512bw", offsetof(CpuFeatures, avx512bw)}, {"avx512dq", offsetof(CpuFeatures, avx512dq)},
    {"avx512vl", offsetof(CpuFeatures, avx512vl)}, {"avx512_bf16", offsetof(CpuFeatures, avx512bf16)},
};

/* The first "flags" line of /proc/cpuinfo, with a space on each side so that
 * " avx " matches the word only. Returns false when there is none. */
static bool read_cpuinfo_flags(char *buf, size_t size) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return false;
  char line[8192];
  bool found = false;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) != 0) continue;
    char *colon = strchr(line, ':');
    if (!colon) continue;
    line[strcspn(line, "\n")] = '\0';
    snprintf(buf, size, "%s ", colon + 1);
    found = true;
    break;
  }
  fclose(f);
  return found;
}

static bool has_word(const char *flags, const char *word) {
  char needle[64];
  snprintf(needle, sizeof needle, " %s ", word);
  return strstr(flags, needle) != NULL;
}

TEST(detection_agrees_with_proc_cpuinfo) {
  char flags[8192];
  if (!read_cpuinfo_flags(flags, sizeof flags)) {
    printf("  skipped: no flags line in /proc/cpuinfo\n");
    return;
  }
  CpuFeatures f;
  cpu_features_detect_hardware(&f);
  for (size_t i = 0; i < sizeof cpuinfo_flags / sizeof cpuinfo_flags[0]; i++) {
    bool ours = *(const bool *)((const char *)&f + cpuinfo_flags[i].offset);
    bool linux_says = has_word(flags, cpuinfo_flags[i].linux_name);
    EXPECT(ours == linux_says, "%s: detected %d, /proc/cpuinfo says %d", cpuinfo_flags[i].linux_name, ours,
           linux_says);
  }
}

TEST(level_is_the_highest_whose_features_are_all_present) {
  CpuFeatures f;
  cpu_features_detect_hardware(&f);
  bool sse4 = f.sse4_1;
  bool avx2 = sse4 && f.avx && f.avx2 && f.fma && f.f16c && f.os_saves_ymm;
  bool avx512 = avx2 && f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.os_saves_zmm;
  CpuLevel expected = avx512 ? CPU_LEVEL_AVX512 : avx2 ? CPU_LEVEL_AVX2 : sse4 ? CPU_LEVEL_SSE4 : CPU_LEVEL_NONE;
  EXPECT(f.hardware_level == expected, "hardware level %s, expected %s", cpu_level_name(f.hardware_level),
         cpu_level_name(expected));
  EXPECT(f.level == f.hardware_level && !f.level_forced, "unforced level %s", cpu_level_name(f.level));
}

TEST(axle_cpu_lowers_the_level_and_clears_wider_features) {
  CpuFeatures hw;
  cpu_features_detect_hardware(&hw);
  Status st;
  status_clear(&st);
  setenv("AXLE_CPU", "sse4", 1);
  CpuFeatures f;
  bool ok = cpu_features_detect(&f, &st);
  if (hw.hardware_level >= CPU_LEVEL_SSE4) {
    EXPECT(ok, "AXLE_CPU=sse4 refused: %s", st.message);
    EXPECT(f.level == CPU_LEVEL_SSE4, "level %s", cpu_level_name(f.level));
    EXPECT(f.hardware_level == hw.hardware_level, "hardware level kept");
    EXPECT(f.level_forced == (hw.hardware_level > CPU_LEVEL_SSE4), "forced flag");
    EXPECT(f.sse4_1 && !f.avx && !f.avx2 && !f.fma && !f.f16c && !f.avx512f && !f.avx512bf16,
           "features above sse4 cleared");
  }
  setenv("AXLE_CPU", "avx2", 1);
  ok = cpu_features_detect(&f, &st);
  if (hw.hardware_level >= CPU_LEVEL_AVX2) {
    EXPECT(ok, "AXLE_CPU=avx2 refused: %s", st.message);
    EXPECT(f.level == CPU_LEVEL_AVX2, "level %s", cpu_level_name(f.level));
    EXPECT(f.avx2 && f.fma && !f.avx512f && !f.avx512bw && !f.avx512vl && !f.avx512bf16,
           "avx2 kept, avx512 cleared");
  }
  setenv("AXLE_CPU", "", 1);
  ok = cpu_features_detect(&f, &st);
  EXPECT(ok && f.level == hw.hardware_level && !f.level_forced, "empty AXLE_CPU changes nothing");
  unsetenv("AXLE_CPU");
}

TEST(axle_cpu_above_the_hardware_is_an_error_naming_what_is_missing) {
  /* This machine may have all of AVX-512 or none of it: take a copy that
   * has only part of it, so the message must name exactly the missing part. */
  CpuFeatures f;
  cpu_features_detect_hardware(&f);
  if (f.hardware_level < CPU_LEVEL_AVX2) {
    printf("  skipped: the CPU lacks avx2\n");
    return;
  }
  f.avx512f = f.avx512dq = true;
  f.avx512bw = f.avx512vl = false;
  f.hardware_level = f.level = CPU_LEVEL_AVX2;
  Status st;
  status_clear(&st);
  EXPECT(!cpu_features_force_level(&f, "avx512", &st), "avx512 accepted on an avx2 machine");
  EXPECT(strstr(st.message, "avx512bw, avx512vl") != NULL, "message: %s", st.message);
  EXPECT(f.level == CPU_LEVEL_AVX2, "level unchanged after the error");

  /* The same through the environment, when the real CPU lacks a level. */
  CpuFeatures hw;
  cpu_features_detect_hardware(&hw);
  if (hw.hardware_level < CPU_LEVEL_AVX512) {
    setenv("AXLE_CPU", "avx512", 1);
    status_clear(&st);
    EXPECT(!cpu_features_detect(&hw, &st), "AXLE_CPU=avx512 accepted without avx512");
    unsetenv("AXLE_CPU");
  }
}

TEST(axle_cpu_unknown_value_is_refused) {
  static const char *const bad[] = {"avx3", "AVX2x", "sse2", "none", " avx2"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("AXLE_CPU", bad[i], 1);
    CpuFeatures f;
    Status st;
    status_clear(&st);
    EXPECT(!cpu_features_detect(&f, &st), "AXLE_CPU='%s' accepted", bad[i]);
    EXPECT(st.code == STATUS_INPUT_ERROR && strstr(st.message, bad[i]), "'%s' message: %s", bad[i], st.message);
  }
  unsetenv("AXLE_CPU");
}

TEST(level_names_round_trip) {
  for (int l = CPU_LEVEL_SSE4; l <= CPU_LEVEL_AVX512; l++) {
    CpuLevel back;
    EXPECT(cpu_level_from_name(cpu_level_name((CpuLevel)l), &back) && back == (CpuLevel)l, "level %d", l);
  }
}

TEST(printout_lists_level_and_every_feature) {
  CpuFeatures f;
  cpu_features_detect_hardware(&f);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  cpu_features_print(&f, out);
  fclose(out);
  char want[64];
  snprintf(want, sizeof want, "isa level: %s\n", cpu_level_name(f.level));
  EXPECT(strstr(text, want) == text, "first line: %.40s", text);
  snprintf(want, sizeof want, "avx512f: %s\n", f.avx512f ? "yes" : "no");
  EXPECT(strstr(text, want) != NULL, "avx512f line missing:\n%s", text);
  EXPECT(strstr(text, "avx512bf16: ") && strstr(text, "sse4_1: ") && strstr(text, "f16c: "), "%s", text);
  free(text);
}

int main(void) {
  unsetenv("AXLE_CPU");
  RUN(detection_agrees_with_proc_cpuinfo);
  RUN(level_is_the_highest_whose_features_are_all_present);
  RUN(axle_cpu_lowers_the_level_and_clears_wider_features);
  RUN(axle_cpu_above_the_hardware_is_an_error_naming_what_is_missing);
  RUN(axle_cpu_unknown_value_is_refused);
  RUN(level_names_round_trip);
  RUN(printout_lists_level_and_every_feature);
  return test_summary();
}
