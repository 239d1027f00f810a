/* CPU feature detection with cpuid and xgetbv; see cpu_features.h. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_features.h"

/* Every feature flag, named as its field, with the level that first needs
 * it (CPU_LEVEL_NONE for extras that no level requires). */
typedef struct FeatureRow {
  const char *name;
  size_t offset;        /* of the bool in CpuFeatures */
  CpuLevel needed_by;
} FeatureRow;

#define FEATURE(field, level) {#field, offsetof(CpuFeatures, field), level}
static const FeatureRow feature_rows[] = {
    FEATURE(sse4_1, CPU_LEVEL_SSE4),
    FEATURE(avx, CPU_LEVEL_AVX2),
    FEATURE(avx2, CPU_LEVEL_AVX2),
    FEATURE(fma, CPU_LEVEL_AVX2),
    FEATURE(f16c, CPU_LEVEL_AVX2),
    FEATURE(avx512f, CPU_LEVEL_AVX512),
    FEATURE(avx512bw, CPU_LEVEL_AVX512),
    FEATURE(avx512dq, CPU_LEVEL_AVX512),
    FEATURE(avx512vl, CPU_LEVEL_AVX512),
    FEATURE(avx512bf16, CPU_LEVEL_NONE),
};
#undef FEATURE
enum { FEATURE_COUNT = sizeof feature_rows / sizeof feature_rows[0] };

static bool *feature_flag(CpuFeatures *f, const FeatureRow *row) {
  return (bool *)((char *)f + row->offset);
}

static bool feature_value(const CpuFeatures *f, const FeatureRow *row) {
  return *(const bool *)((const char *)f + row->offset);
}

/* BF16 is an AVX-512 extension even though no level requires it, so a lower
 * level must clear it too. */
static CpuLevel level_that_clears(const FeatureRow *row) {
  return row->needed_by == CPU_LEVEL_NONE ? CPU_LEVEL_AVX512 : row->needed_by;
}

static const char *const level_names[] = {
    [CPU_LEVEL_NONE] = "none",
    [CPU_LEVEL_SSE4] = "sse4",
    [CPU_LEVEL_AVX2] = "avx2",
    [CPU_LEVEL_AVX512] = "avx512",
};

const char *cpu_level_name(CpuLevel level) {
  if ((unsigned)level > CPU_LEVEL_AVX512) return "?";
  return level_names[level];
}

bool cpu_level_from_name(const char *name, CpuLevel *out) {
  for (int l = CPU_LEVEL_SSE4; l <= CPU_LEVEL_AVX512; l++) {
    if (strcmp(name, level_names[l]) == 0) {
      *out = (CpuLevel)l;
      return true;
    }
  }
  return false;
}

/* The highest level whose features are all present. */
static CpuLevel level_from_features(const CpuFeatures *f) {
  CpuLevel level = CPU_LEVEL_AVX512;
  for (int i = 0; i < FEATURE_COUNT; i++) {
    const FeatureRow *row = &feature_rows[i];
    if (row->needed_by != CPU_LEVEL_NONE && !feature_value(f, row) && row->needed_by <= level)
      level = (CpuLevel)(row->needed_by - 1);
  }
  return level;
}

#if defined(__x86_64__) || defined(__i386__)

typedef struct CpuidResult {
  uint32_t eax, ebx, ecx, edx;
} CpuidResult;

static CpuidResult cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidResult r;
  __asm__ volatile("cpuid"
                   : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
                   : "a"(leaf), "c"(subleaf));
  return r;
}

/* xgetbv raises #UD unless the OS has set CR4.OSXSAVE, which cpuid reports
 * as leaf 1 ECX bit 27; the caller checks that first. */
static uint64_t xgetbv_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static bool bit(uint32_t word, int n) {
  return (word >> n) & 1;
}

/* XCR0 state components: 1 SSE (xmm), 2 AVX (upper ymm), 5 opmask (k0-k7),
 * 6 ZMM_Hi256 (upper halves of zmm0-15), 7 Hi16_ZMM (zmm16-31). */
enum {
  XCR0_YMM = (1u << 1) | (1u << 2),
  XCR0_ZMM = XCR0_YMM | (1u << 5) | (1u << 6) | (1u << 7),
};

static void detect_x86(CpuFeatures *f) {
  uint32_t max_leaf = cpuid(0, 0).eax;
  if (max_leaf < 1) return;
  CpuidResult l1 = cpuid(1, 0);
  f->sse4_1 = bit(l1.ecx, 19);
  uint64_t xcr0 = bit(l1.ecx, 27) ? xgetbv_xcr0() : 0;
  f->os_saves_ymm = (xcr0 & XCR0_YMM) == XCR0_YMM;
  f->os_saves_zmm = (xcr0 & XCR0_ZMM) == XCR0_ZMM;
  if (f->os_saves_ymm) {
    f->avx = bit(l1.ecx, 28);
    f->fma = bit(l1.ecx, 12);
    f->f16c = bit(l1.ecx, 29);
  }
  if (max_leaf < 7) return;
  CpuidResult l7 = cpuid(7, 0);
  if (f->os_saves_ymm) f->avx2 = bit(l7.ebx, 5);
  if (!f->os_saves_zmm) return;
  f->avx512f = bit(l7.ebx, 16);
  f->avx512dq = bit(l7.ebx, 17);
  f->avx512bw = bit(l7.ebx, 30);
  f->avx512vl = bit(l7.ebx, 31);
  /* Leaf 7 subleaf 1 exists when subleaf 0 reports EAX >= 1. */
  if (l7.eax >= 1) f->avx512bf16 = bit(cpuid(7, 1).eax, 5);
}

#else

static void detect_x86(CpuFeatures *f) {
  (void)f;
}

#endif

void cpu_features_detect_hardware(CpuFeatures *out) {
  memset(out, 0, sizeof *out);
  detect_x86(out);
  out->hardware_level = level_from_features(out);
  out->level = out->hardware_level;
}

/* "avx512bw, avx512vl": the features a level needs that f lacks. */
static void missing_features(const CpuFeatures *f, CpuLevel level, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < FEATURE_COUNT; i++) {
    const FeatureRow *row = &feature_rows[i];
    if (row->needed_by == CPU_LEVEL_NONE || row->needed_by > level || feature_value(f, row)) continue;
    int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", row->name);
    if (n < 0 || (size_t)n >= size - used) break;
    used += (size_t)n;
  }
}

bool cpu_features_force_level(CpuFeatures *f, const char *request, Status *st) {
  if (!request || !request[0]) return true;
  CpuLevel wanted;
  if (!cpu_level_from_name(request, &wanted))
    return status_error(st, STATUS_INPUT_ERROR,
                        "AXLE_CPU=%s is not a known ISA level (use sse4, avx2 or avx512)", request);
  if (wanted > f->hardware_level) {
    char missing[256];
    missing_features(f, wanted, missing, sizeof missing);
    return status_error(st, STATUS_INPUT_ERROR,
                        "AXLE_CPU=%s asks for more than this machine has (level %s; missing %s)",
                        request, cpu_level_name(f->hardware_level), missing);
  }
  for (int i = 0; i < FEATURE_COUNT; i++) {
    if (level_that_clears(&feature_rows[i]) > wanted) *feature_flag(f, &feature_rows[i]) = false;
  }
  f->level = wanted;
  f->level_forced = wanted < f->hardware_level;
  return true;
}

void cpu_features_for_level(CpuFeatures *out, CpuLevel level) {
  memset(out, 0, sizeof *out);
  for (int i = 0; i < FEATURE_COUNT; i++)
    if (feature_rows[i].needed_by != CPU_LEVEL_NONE && feature_rows[i].needed_by <= level)
      *feature_flag(out, &feature_rows[i]) = true;
  out->os_saves_ymm = level >= CPU_LEVEL_AVX2;
  out->os_saves_zmm = level >= CPU_LEVEL_AVX512;
  out->hardware_level = out->level = level;
}

bool cpu_features_detect(CpuFeatures *out, Status *st) {
  cpu_features_detect_hardware(out);
  return cpu_features_force_level(out, getenv("AXLE_CPU"), st);
}

void cpu_features_print(const CpuFeatures *f, FILE *out) {
  fprintf(out, "isa level: %s", cpu_level_name(f->level));
  if (f->level_forced) fprintf(out, " (forced by AXLE_CPU; hardware %s)", cpu_level_name(f->hardware_level));
  fprintf(out, "\nos saves ymm state: %s\nos saves zmm state: %s\n", f->os_saves_ymm ? "yes" : "no",
          f->os_saves_zmm ? "yes" : "no");
  for (int i = 0; i < FEATURE_COUNT; i++)
    fprintf(out, "%s: %s\n", feature_rows[i].name, feature_value(f, &feature_rows[i]) ? "yes" : "no");
}
