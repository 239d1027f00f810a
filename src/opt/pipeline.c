/* The pass pipeline: the whole optimizer in one short driver function.
 *
 * Every pass is a plain call through run_pass, which times it, verifies the
 * module after it when asked, and dumps the module after it when asked and
 * when the pass changed something (unchanged passes write nothing, so a dump
 * folder holds a handful of files, not thousands). */
#include <string.h>
#include <time.h>

#include "opt/opt.h"

void opt_context_init(OptContext *ctx, const OptOptions *options) {
  memset(ctx, 0, sizeof *ctx);
  if (options) ctx->options = *options;
  else opt_options_default(&ctx->options);
}

void opt_context_free(OptContext *ctx) {
  strbuf_free(&ctx->notes);
  buffer_plan_free(ctx->plan);
  ctx->plan = NULL;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Runs one pass; returns false when the pass failed or broke the module. */
static bool run_pass(Module *m, OptContext *ctx, const char *name, PassFn *pass, bool *changed,
                     Status *st) {
  bool failed = false;
  double start = now_ms();
  bool did_change = pass(m, ctx, &failed, st);
  double ms = now_ms() - start;
  if (ctx->run_count < OPT_MAX_PASS_RUNS)
    ctx->runs[ctx->run_count++] = (PassRun){name, ms, did_change};
  if (failed) return false;
  if (did_change && ctx->options.verify_each_pass) {
    Status vst;
    status_clear(&vst);
    if (!verify_module(m, &vst))
      return status_error(st, STATUS_VERIFY_ERROR, "the module is broken after pass '%s': %s", name,
                          vst.message);
  }
  if (did_change && ctx->options.dump_passes && ctx->options.dump_dir[0]) {
    char suffix[128];
    snprintf(suffix, sizeof suffix, "%04d.%s.after", ++ctx->dump_sequence, name);
    if (!dump_module_text(ctx, m, suffix, st)) return false;
  }
  if (changed) *changed |= did_change;
  return true;
}

/* Simplification, folding, CSE and DCE feed each other (a folded constant
 * makes a select simplifiable, a simplified op leaves dead code ...), so
 * they run as a group until none changes anything, a few rounds at most. */
static bool run_cleanup(Module *m, OptContext *ctx, Status *st) {
  for (int round = 0; round < 4; round++) {
    bool changed = false;
    if (!run_pass(m, ctx, "simplify", simplify_module, &changed, st)) return false;
    if (!run_pass(m, ctx, "fold-constants", fold_constants, &changed, st)) return false;
    if (!run_pass(m, ctx, "cse", eliminate_common_subexpressions, &changed, st)) return false;
    if (!run_pass(m, ctx, "dce", eliminate_dead_code, &changed, st)) return false;
    if (!changed) break;
  }
  return true;
}

bool optimize_module(Module *m, OptContext *ctx, Status *st) {
  const bool dumping = ctx->options.dump_dir[0] != 0;
  ctx->instructions_before = count_instructions(m);
  ctx->temp_bytes_before = naive_temp_bytes(m);
  if (dumping && !dump_module_text(ctx, m, "before_optimizations", st)) return false;

  if (!run_cleanup(m, ctx, st)) return false;
  if (!ctx->options.no_fusion) {
    if (!run_pass(m, ctx, "fusion", fuse_module, NULL, st)) return false;
    if (!run_pass(m, ctx, "cse", eliminate_common_subexpressions, NULL, st)) return false;
    if (!run_pass(m, ctx, "dce", eliminate_dead_code, NULL, st)) return false;
  }
  if (!run_pass(m, ctx, "schedule", schedule_module, NULL, st)) return false;
  if (!run_pass(m, ctx, "buffer-assignment", assign_buffers, NULL, st)) return false;

  if (dumping) {
    if (!dump_module_text(ctx, m, "after_optimizations", st)) return false;
    if (!dump_module_dot(ctx, m, st)) return false;
    if (!dump_buffer_assignment(ctx, m, st)) return false;
  }
  return true;
}

/* ---- counting, for --stats ---- */

static bool is_fusion_body(const Module *m, const Computation *c) {
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *caller = m->computations[k];
    for (int i = 0; i < caller->instruction_count; i++) {
      const Instruction *inst = caller->instructions[i];
      if (inst->opcode == OP_FUSION && inst->called_count > 0 && inst->called[0] == c) return true;
    }
  }
  return false;
}

int count_instructions(const Module *m) {
  int n = 0;
  for (int k = 0; k < m->computation_count; k++)
    if (!is_fusion_body(m, m->computations[k])) n += m->computations[k]->instruction_count;
  return n;
}

int count_fusions(const Module *m) {
  int n = 0;
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *c = m->computations[k];
    for (int i = 0; i < c->instruction_count; i++) n += c->instructions[i]->opcode == OP_FUSION;
  }
  return n;
}

static bool does_work(Opcode op) {
  switch (op) {
  case OP_PARAMETER: case OP_CONSTANT: case OP_TUPLE: case OP_GET_TUPLE_ELEMENT: case OP_BITCAST:
    return false;
  default:
    return true;
  }
}

/* Kernels are counted in the computations that run (not fusion bodies, not
 * reducer computations, whose instructions run inside a kernel). */
int count_kernels(const Module *m) {
  int n = 0;
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *c = m->computations[k];
    if (is_fusion_body(m, c)) continue;
    bool is_applied = false;
    for (int j = 0; j < m->computation_count && !is_applied; j++) {
      const Computation *caller = m->computations[j];
      for (int i = 0; i < caller->instruction_count; i++) {
        const Instruction *inst = caller->instructions[i];
        Opcode op = inst->opcode;
        if (op == OP_CALL || op == OP_WHILE || op == OP_CONDITIONAL || op == OP_FUSION) continue;
        for (int q = 0; q < inst->called_count; q++) is_applied |= inst->called[q] == c;
      }
    }
    if (is_applied) continue;
    for (int i = 0; i < c->instruction_count; i++) n += does_work(c->instructions[i]->opcode);
  }
  return n;
}

void print_opt_stats(StrBuf *sb, const Module *m, const OptContext *ctx) {
  int64_t temp_after = ctx->plan ? ctx->plan->temp_bytes : naive_temp_bytes(m);
  strbuf_printf(sb, "module %s\n", m->name);
  strbuf_printf(sb, "  instructions: %d -> %d\n", ctx->instructions_before, count_instructions(m));
  strbuf_printf(sb, "  fusions: %d   kernels: %d\n", count_fusions(m), count_kernels(m));
  strbuf_printf(sb, "  temporary bytes: %lld -> %lld\n", (long long)ctx->temp_bytes_before,
                (long long)temp_after);
  strbuf_printf(sb, "  passes (ms, * = changed the module):\n");
  double total = 0;
  for (int i = 0; i < ctx->run_count; i++) {
    const PassRun *r = &ctx->runs[i];
    strbuf_printf(sb, "    %-18s %8.3f %s\n", r->pass, r->ms, r->changed ? "*" : "");
    total += r->ms;
  }
  strbuf_printf(sb, "    %-18s %8.3f\n", "total", total);
  if (ctx->notes.len) strbuf_printf(sb, "  notes:\n%s", ctx->notes.data);
  if (ctx->plan) {
    strbuf_printf(sb, "  largest live temporaries:\n");
    print_largest_buffers(sb, ctx->plan, 5);
  }
}
