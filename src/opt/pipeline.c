/* The pass pipeline: the whole optimizer in one short driver function.
 *
 * Every pass is a plain call through run_pass, which times it, verifies the
 * module after it when asked, and dumps the module after it when asked and
 * when the pass changed something (unchanged passes write nothing, so a dump
 * folder holds a handful of files, not thousands). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/dot_plan.h"
#include "opt/opt.h"
#include "opt/program.h"

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
  if (!module_refuse_unbounded_dims(m, st)) return false;  /* f32[?]: no pass can size it */
  ctx->instructions_before = opt_count_instructions(m);
  ctx->temp_bytes_before = buffer_plan_naive_temp_bytes(m);
  if (dumping && !dump_module_text(ctx, m, "before_optimizations", st)) return false;

  if (!run_pass(m, ctx, "unpack-layouts", unpack_layouts, NULL, st)) return false;
  if (!run_pass(m, ctx, "layout-copies", insert_layout_copies, NULL, st)) return false;
  if (!run_pass(m, ctx, "expand-batch-norm", expand_batch_norm, NULL, st)) return false;
  if (!run_pass(m, ctx, "inline-map", inline_map, NULL, st)) return false;
  if (!run_cleanup(m, ctx, st)) return false;
  /* After the cleanup, whose simplifier folds transposes into dots: the
   * canonical operands are free relabels that nothing folds back. */
  if (!run_pass(m, ctx, "canonicalize-dots", canonicalize_dots, NULL, st)) return false;
  if (!run_pass(m, ctx, "canonicalize-convolutions", canonicalize_convolutions, NULL, st)) return false;
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
    if (!dump_module_kernels(ctx, m, st)) return false;
    if (!dump_program(ctx, m, st)) return false;
  }
  return true;
}

/* ---- counting, for --stats ---- */

/* What each computation is to the module: a fusion body, a computation
 * applied per element inside another op (a reducer, a comparator), or one
 * that runs as a program of its own (the entry, while bodies, branches). */
typedef enum ComputationRole { ROLE_PROGRAM, ROLE_FUSION_BODY, ROLE_APPLIED } ComputationRole;

typedef struct RoleEntry {
  const Computation *computation;
  ComputationRole role;
} RoleEntry;

static int compare_role_entries(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const RoleEntry *)a)->computation;
  uintptr_t y = (uintptr_t)((const RoleEntry *)b)->computation;
  return (x > y) - (x < y);
}

/* A table sorted by computation pointer, so each lookup is a binary search
 * and counting stays linear in the module's size. */
static RoleEntry *computation_roles(const Module *m) {
  RoleEntry *roles = mem_calloc((size_t)m->computation_count + 1, sizeof *roles);
  for (int k = 0; k < m->computation_count; k++) roles[k] = (RoleEntry){m->computations[k], ROLE_PROGRAM};
  qsort(roles, (size_t)m->computation_count, sizeof *roles, compare_role_entries);
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *caller = m->computations[k];
    for (int i = 0; i < caller->instruction_count; i++) {
      const Instruction *inst = caller->instructions[i];
      Opcode op = inst->opcode;
      if (op == OP_CALL || op == OP_WHILE || op == OP_CONDITIONAL) continue;
      for (int q = 0; q < inst->called_count; q++) {
        RoleEntry key = {inst->called[q], ROLE_PROGRAM};
        RoleEntry *e = bsearch(&key, roles, (size_t)m->computation_count, sizeof *roles,
                               compare_role_entries);
        if (e) e->role = op == OP_FUSION ? ROLE_FUSION_BODY : ROLE_APPLIED;
      }
    }
  }
  return roles;
}

static bool does_work(Opcode op) {
  switch (op) {
  case OP_PARAMETER: case OP_CONSTANT: case OP_TUPLE: case OP_GET_TUPLE_ELEMENT: case OP_BITCAST:
    return false;
  default:
    return true;
  }
}

typedef struct ModuleCounts {
  int instructions;   /* outside fusion bodies */
  int fusions;
  int kernels;        /* fusions plus unfused ops that do work, in programs */
} ModuleCounts;

static ModuleCounts count_module(const Module *m) {
  ModuleCounts n = {0, 0, 0};
  RoleEntry *roles = computation_roles(m);
  for (int k = 0; k < m->computation_count; k++) {
    const RoleEntry *e = &roles[k];
    const Computation *c = e->computation;
    if (e->role == ROLE_FUSION_BODY) continue;
    n.instructions += c->instruction_count;
    for (int i = 0; i < c->instruction_count; i++) {
      Opcode op = c->instructions[i]->opcode;
      n.fusions += op == OP_FUSION;
      if (e->role == ROLE_PROGRAM) n.kernels += does_work(op);
    }
  }
  mem_free(roles);
  return n;
}

int opt_count_instructions(const Module *m) { return count_module(m).instructions; }
int opt_count_fusions(const Module *m) { return count_module(m).fusions; }
int opt_count_kernels(const Module *m) { return count_module(m).kernels; }

/* 2 flops (a multiply and an add) per product term: a dot's output
 * elements times its contracted extent; a convolution's output elements
 * times the kernel elements that feed one of them. */
static int64_t instruction_matmul_flops(const Instruction *inst) {
  int64_t out = shape_is_tuple(&inst->shape) ? 0 : shape_element_count(&inst->shape);
  DotPlan p;
  if (inst->opcode == OP_DOT)
    return dot_plan_make(attrs_dot(&inst->attrs), &inst->operands[0]->shape, &inst->operands[1]->shape, &p)
               ? 0
               : 2 * out * p.k;
  if (inst->opcode == OP_CONVOLUTION && inst->attrs.conv) {
    const Shape *kernel = &inst->operands[1]->shape;
    int64_t per_output = kernel->dims[inst->attrs.conv->kernel_output_feature];
    return per_output ? 2 * out * (shape_element_count(kernel) / per_output) : 0;
  }
  return 0;
}

int64_t opt_count_matmul_flops(const Module *m) {
  int64_t flops = 0;
  for (int k = 0; k < m->computation_count; k++) {
    const Computation *c = m->computations[k];
    for (int i = 0; i < c->instruction_count; i++) flops += instruction_matmul_flops(c->instructions[i]);
  }
  return flops;
}

void print_opt_stats(StrBuf *sb, const Module *m, const OptContext *ctx) {
  int64_t temp_after = ctx->plan ? ctx->plan->temp_bytes : buffer_plan_naive_temp_bytes(m);
  ModuleCounts n = count_module(m);
  strbuf_printf(sb, "module %s\n", m->name);
  strbuf_printf(sb, "  instructions: %d -> %d\n", ctx->instructions_before, n.instructions);
  strbuf_printf(sb, "  fusions: %d   kernels: %d\n", n.fusions, n.kernels);
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
  if (ctx->notes.len) {
    strbuf_printf(sb, "  notes:\n");
    for (const char *line = ctx->notes.data; *line;) {
      size_t n = strcspn(line, "\n");
      strbuf_printf(sb, "    %.*s\n", (int)n, line);
      line += n + (line[n] == '\n');
    }
  }
  if (ctx->plan) {
    if (ctx->plan->called_temp_bytes)
      strbuf_printf(sb, "  temporary bytes of called computations (loop bodies, branches): %lld\n",
                    (long long)ctx->plan->called_temp_bytes);
    strbuf_printf(sb, "  largest live temporaries:\n");
    if (ctx->plan->temp_bytes) print_largest_buffers(sb, ctx->plan, 5);
    else strbuf_printf(sb, "    none: every value lives in a parameter, a constant or the result\n");
  }
}
