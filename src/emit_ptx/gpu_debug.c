/* What the GPU backend compiled, written out for a reader (axle-run --dump
 * DIR with --backend gpu; docs/debugging.md), as the CPU backend writes its
 * listings (src/emit_x86/cpu_debug.c):
 *
 *   DIR/kernels/index.txt   every launch in the order compiled: its .entry,
 *                           grid and block, the HLO instruction, its file
 *   DIR/kernels/NAME.ptx    the PTX of instruction NAME's kernels (a sort's
 *                           passes, a GEMM and its reduction: all of them),
 *                           a module of its own that ptxas compiles alone
 *
 * With --target and --compile-only nothing here needs a device: a machine
 * without a GPU sees every kernel the GPU would run. */
#include <string.h>

#include "emit_ptx/gpu_program.h"
#include "runtime/kernel_dump.h"

/* The distinct .entry names of inst's launches, from launch `first` on. */
static int instruction_entries(const GpuProgram *p, int first, const char **entries) {
  int count = 0;
  for (int i = first; i < p->launch_count; i++) {
    const GpuLaunch *l = &p->launches[i];
    if (l->inst != p->launches[first].inst) continue;
    bool seen = false;
    for (int e = 0; e < count && !seen; e++) seen = strcmp(entries[e], l->entry) == 0;
    if (!seen) entries[count++] = l->entry;
  }
  return count;
}

/* Each launch's first launch of the same instruction (whose file holds
 * its kernels), and that instruction's file stem: its name, made unique
 * among the instructions before it (a called computation may reuse one). */
static void launch_files(const GpuProgram *p, int *first, char (*stems)[512]) {
  for (int i = 0; i < p->launch_count; i++) {
    first[i] = i;
    for (int j = 0; j < i && first[i] == i; j++)
      if (p->launches[j].inst == p->launches[i].inst) first[i] = first[j];
    if (first[i] != i) continue;
    int repeat = 0;
    for (int j = 0; j < i; j++)
      repeat += first[j] == j && strcmp(p->launches[j].inst->name, p->launches[i].inst->name) == 0;
    kernel_dump_stem(stems[i], sizeof stems[i], p->launches[i].inst, repeat);
  }
}

static bool instruction_ptx_write(const GpuProgram *p, const Module *m, int first, const char *path, Status *st) {
  const char **entries = mem_calloc((size_t)p->launch_count + 1, sizeof *entries);
  int count = instruction_entries(p, first, entries);
  StrBuf sb = {0};
  kernel_dump_origin(&sb, p->launches[first].inst, m, "//");
  bool ok = ptx_builder_kernel_module(p->ptx, entries, count, &sb);
  if (!ok) status_error(st, STATUS_UNSUPPORTED, "the PTX of %s is not in the module", p->launches[first].entry);
  ok = ok && kernel_dump_write(path, &sb, st);
  strbuf_free(&sb);
  mem_free(entries);
  return ok;
}

bool gpu_program_dump(const GpuProgram *p, const Module *m, const char *dir, Status *st) {
  char kernels[1100];
  if (!p->ptx) return true;  /* compiled without keeping its PTX: nothing to write */
  if (!kernel_dump_folder(dir, kernels, sizeof kernels, st)) return false;
  StrBuf index = {0};
  strbuf_printf(&index, "# the GPU program of %s for %s: %d launch%s in the order compiled\n", m->name,
                p->ptx->target.name, p->launch_count, p->launch_count == 1 ? "" : "es");
  int *first = mem_calloc((size_t)p->launch_count + 1, sizeof *first);
  char (*stems)[512] = mem_calloc((size_t)p->launch_count + 1, sizeof *stems);
  launch_files(p, first, stems);
  bool ok = true;
  for (int i = 0; i < p->launch_count && ok; i++) {
    const GpuLaunch *l = &p->launches[i];
    strbuf_printf(&index, "launch %d: %s grid %u block %u ", i, l->entry, l->grid, l->block);
    instruction_describe(&index, l->inst);
    strbuf_printf(&index, "  -> %s.ptx\n", stems[first[i]]);
    char path[1700];
    snprintf(path, sizeof path, "%s/%s.ptx", kernels, stems[i]);
    if (first[i] == i) ok = instruction_ptx_write(p, m, i, path, st);
  }
  mem_free(stems);
  mem_free(first);
  char path[1200];
  snprintf(path, sizeof path, "%s/index.txt", kernels);
  ok = ok && kernel_dump_write(path, &index, st);
  strbuf_free(&index);
  return ok;
}
