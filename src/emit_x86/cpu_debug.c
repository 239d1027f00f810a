/* What the CPU backend compiled, written out for a reader (axle-run --dump
 * DIR with --backend cpu; docs/debugging.md).
 *
 *   DIR/kernels/index.txt        every step in schedule order: its kind, the
 *                                HLO instruction, the files written for it
 *   DIR/kernels/NAME.kernel.txt  the kernel IR of instruction NAME's kernel
 *   DIR/kernels/NAME.s           its x86-64 code in objdump's syntax
 *   DIR/kernels/gemm.micro-kernel.s  the GEMM micro-kernel of the product
 *                                steps, whose schedule index.txt gives
 *   DIR/kernels/NAME.s           a direct convolution's micro-kernel (its
 *                                schedule in index.txt)
 *
 * Each file starts with the HLO instruction it came from, its op_name and
 * its JAX source line; inside the listing, each block of instructions is
 * headed by the fused HLO instruction it implements (kernel_x86.c notes
 * them as it emits). The kernel IR is the program stage's (src/opt/program.h),
 * the one the step's code was compiled from. */
#include <errno.h>
#include <string.h>

#include "emit_x86/cpu_compile.h"
#include "runtime/kernel_dump.h"

/* A listing file opened for writing, its first lines `header` (the origin
 * lines); the listing itself is streamed in after. */
static FILE *listing_open(const char *path, const StrBuf *header, Status *st) {
  FILE *f = fopen(path, "w");
  if (!f) {
    status_error(st, STATUS_INPUT_ERROR, "cannot write %s: %s", path, strerror(errno));
    return NULL;
  }
  if (header->len) fwrite(header->data, 1, header->len, f);
  return f;
}

static bool listing_close(FILE *f, const char *path, Status *st) {
  if (fclose(f) != 0) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s", path);
  return true;
}

/* NAME.kernel.txt and NAME.s for one kernel step. */
static bool kernel_step_dump(const CpuStep *s, const Module *m, const char *dir, const char *stem, Status *st) {
  char path[2048];
  StrBuf sb = {0};
  kernel_dump_origin(&sb, s->inst, m, "//");
  const Kernel *k = s->lowered;
  if (k && s->product)
    strbuf_printf(&sb, "// the epilogue of the output fusion, reading the product of %s\n", s->product->name);
  if (k) print_kernel(&sb, k);
  else strbuf_printf(&sb, "// the kernel IR of this step was not kept\n");
  snprintf(path, sizeof path, "%s/%s.kernel.txt", dir, stem);
  bool ok = kernel_dump_write(path, &sb, st);
  strbuf_free(&sb);
  if (!ok) return false;
  kernel_dump_origin(&sb, s->inst, m, "#");
  snprintf(path, sizeof path, "%s/%s.s", dir, stem);
  FILE *f = listing_open(path, &sb, st);
  strbuf_free(&sb);
  if (!f) return false;
  kernel_x86_print_listing(s->kernel, f);
  return listing_close(f, path, st);
}

/* NAME.s: a direct convolution step's micro-kernel. */
static bool conv_direct_dump(const CpuStep *s, const Module *m, const char *dir, const char *stem, Status *st) {
  char path[2048];
  StrBuf sb = {0};
  kernel_dump_origin(&sb, s->inst, m, "#");
  snprintf(path, sizeof path, "%s/%s.s", dir, stem);
  FILE *f = listing_open(path, &sb, st);
  strbuf_free(&sb);
  if (!f) return false;
  bool ok = conv_direct_print_listing(s, f, st);
  return listing_close(f, path, st) && ok;
}

/* The GEMM micro-kernel every product step of the program runs, once. */
static bool gemm_listing_dump(const GemmPlan *plan, const char *kernels, Status *st) {
  char path[1200];
  snprintf(path, sizeof path, "%s/gemm.micro-kernel.s", kernels);
  StrBuf none = {0};
  FILE *f = listing_open(path, &none, st);
  if (!f) return false;
  bool ok = gemm_plan_print_listing(plan, f, st);
  return listing_close(f, path, st) && ok;
}

static const char *step_kind_name(CpuStepKind kind) {
  switch (kind) {
  case CPU_STEP_KERNEL: return "kernel";
  case CPU_STEP_DOT: return "gemm";
  case CPU_STEP_CALL: return "call";
  }
  return "?";
}

bool cpu_program_dump(const CpuProgram *p, const Module *m, const char *dir, Status *st) {
  char kernels[1100];
  if (!kernel_dump_folder(dir, kernels, sizeof kernels, st)) return false;
  StrBuf index = {0};
  strbuf_printf(&index, "# the CPU program of %s at ISA level %s: %d steps in schedule order\n", m->name,
                cpu_level_name(p->cpu.level), p->step_count);
  bool ok = true, gemm_listed = false;
  int repeat = 0;
  for (int i = 0; i < p->step_count && ok; i++) {
    const CpuStep *s = &p->steps[i];
    repeat = i > 0 && p->steps[i - 1].inst == s->inst ? repeat + 1 : 0;
    char stem[512];
    kernel_dump_stem(stem, sizeof stem, s->inst, repeat);
    strbuf_printf(&index, "step %d: %-6s ", i, step_kind_name(s->kind));
    instruction_describe(&index, s->inst);
    if (s->kind == CPU_STEP_KERNEL) {
      strbuf_printf(&index, "  -> %s.kernel.txt %s.s", stem, stem);
      ok = kernel_step_dump(s, m, kernels, stem, st);
    } else if (s->kind == CPU_STEP_DOT) {
      strbuf_printf(&index, "  (batch %lld, m %lld, n %lld, k %lld)  -> gemm.micro-kernel.s\n        schedule: ",
                    (long long)s->dot.batch, (long long)s->dot.m, (long long)s->dot.n, (long long)s->dot.k);
      gemm_schedule_describe(p->gemm, &s->dot, p->pool ? thread_pool_thread_count(p->pool) : 1, &index);
      if (!gemm_listed) ok = gemm_listing_dump(p->gemm, kernels, st);
      gemm_listed = true;
    } else if (conv_direct_step_is(s)) {
      strbuf_printf(&index, "  -> %s.s\n        schedule: ", stem);
      conv_direct_schedule_describe(s, &index);
      ok = conv_direct_dump(s, m, kernels, stem, st);
    }
    strbuf_printf(&index, "\n");
  }
  char path[1200];
  snprintf(path, sizeof path, "%s/index.txt", kernels);
  if (ok) ok = kernel_dump_write(path, &index, st);
  strbuf_free(&index);
  return ok;
}

bool cpu_program_print_listings(const CpuProgram *p, const Module *m, FILE *out, Status *st) {
  fprintf(out, "# the CPU program of %s at ISA level %s: %d steps; the x86-64 listing of each kernel step\n", m->name,
          cpu_level_name(p->cpu.level), p->step_count);
  for (int i = 0; i < p->step_count; i++) {
    const CpuStep *s = &p->steps[i];
    if (s->kind != CPU_STEP_KERNEL) continue;
    StrBuf sb = {0};
    kernel_dump_origin(&sb, s->inst, m, "#");
    fprintf(out, "\n%s", sb.data ? sb.data : "");
    strbuf_free(&sb);
    kernel_x86_print_listing(s->kernel, out);
  }
  if (ferror(out)) return status_error(st, STATUS_INPUT_ERROR, "error writing the listings");
  return true;
}
