/* Dumps in the style XLA users know (XLA_FLAGS=--xla_dump_to=DIR): a few
 * files per module whose names sort into pass order, each in HLO text that
 * axle parses back, plus a Graphviz drawing with a cluster per fusion. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "opt/lower.h"
#include "opt/opt.h"
#include "opt/program.h"

/* mkdir -p: the folder and every missing parent. */
static bool make_dirs(const char *dir, Status *st) {
  char path[1100];
  if (strlen(dir) >= sizeof path) return status_error(st, STATUS_INPUT_ERROR, "dump folder name too long");
  strcpy(path, dir);
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
      return status_error(st, STATUS_INPUT_ERROR, "cannot create %s: %s", path, strerror(errno));
    *p = '/';
  }
  if (mkdir(path, 0777) != 0 && errno != EEXIST)
    return status_error(st, STATUS_INPUT_ERROR, "cannot create %s: %s", path, strerror(errno));
  return true;
}

/* Writes DIR/module_NNNN.NAME.SUFFIX. */
static bool write_dump_file(OptContext *ctx, const Module *m, const char *suffix, const StrBuf *text,
                            Status *st) {
  if (!make_dirs(ctx->options.dump_dir, st)) return false;
  char path[2048];
  snprintf(path, sizeof path, "%s/module_%04d.%s.%s", ctx->options.dump_dir, ctx->module_id, m->name,
           suffix);
  FILE *f = fopen(path, "w");
  if (!f) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s: %s", path, strerror(errno));
  if (text->len) fwrite(text->data, 1, text->len, f);
  if (fclose(f) != 0) return status_error(st, STATUS_INPUT_ERROR, "cannot write %s", path);
  return true;
}

bool dump_module_text(OptContext *ctx, const Module *m, const char *suffix, Status *st) {
  StrBuf sb = {0};
  print_module(&sb, m);
  char name[160];
  snprintf(name, sizeof name, "%s.txt", suffix);
  bool ok = write_dump_file(ctx, m, name, &sb, st);
  strbuf_free(&sb);
  return ok;
}

bool dump_module_dot(OptContext *ctx, const Module *m, Status *st) {
  StrBuf sb = {0};
  print_module_dot(&sb, m);
  bool ok = write_dump_file(ctx, m, "after_optimizations.dot", &sb, st);
  strbuf_free(&sb);
  return ok;
}

bool dump_buffer_assignment(OptContext *ctx, const Module *m, Status *st) {
  if (!ctx->plan) return true;
  StrBuf sb = {0};
  print_buffer_plan(&sb, m, ctx->plan);
  bool ok = write_dump_file(ctx, m, "buffer-assignment.txt", &sb, st);
  strbuf_free(&sb);
  return ok;
}

/* The kernel IR of every instruction of the entry that does work, each
 * headed by the HLO instruction it computes and its JAX source line; what
 * has no kernel form yet says so, with the reason. */
void print_module_kernels(StrBuf *sb, const Module *m) {
  const Computation *c = m->entry;
  for (int i = 0; c && i < c->instruction_count; i++) {
    const Instruction *inst = c->instructions[i];
    switch (inst->opcode) {
    case OP_PARAMETER: case OP_CONSTANT: case OP_TUPLE: case OP_GET_TUPLE_ELEMENT: case OP_BITCAST:
      continue;
    default: break;
    }
    strbuf_printf(sb, "// ");
    instruction_describe(sb, inst);
    strbuf_printf(sb, "\n");
    Status st;
    status_clear(&st);
    /* select-and-scatter is two kernels; a scatter is a routine that calls
     * its update computation's kernel once per updated element. */
    Kernel *k[2] = {NULL, NULL};
    if (inst->opcode == OP_SELECT_AND_SCATTER) {
      k[0] = lower_select_and_scatter(inst, 0, &st);
      k[1] = k[0] ? lower_select_and_scatter(inst, 1, &st) : NULL;
    } else if (inst->opcode == OP_SCATTER) {
      k[0] = lower_scatter_combiner(inst, &st);
      if (k[0]) strbuf_printf(sb, "// the update computation, run once per updated element in update order\n");
    } else {
      k[0] = lower_to_kernel(inst, &st);
    }
    if (st.code != STATUS_OK) strbuf_printf(sb, "// not lowered: %s\n", st.message);
    for (int j = 0; j < 2 && st.code == STATUS_OK; j++) {
      if (!k[j]) continue;
      print_kernel(sb, k[j]);
      if (!kernel_has_complex(k[j])) continue;
      /* what the x86 code runs, and what its listing's op numbers name */
      Kernel *real = kernel_split_complex(k[j], &st);
      strbuf_printf(sb, "// on real pairs (kernel_complex.c):\n");
      if (real) print_kernel(sb, real);
      else strbuf_printf(sb, "// not split: %s\n", st.message);
      kernel_free(real);
    }
    strbuf_printf(sb, "\n");
    kernel_free(k[0]);
    kernel_free(k[1]);
  }
}

bool dump_module_kernels(OptContext *ctx, const Module *m, Status *st) {
  StrBuf sb = {0};
  print_module_kernels(&sb, m);
  bool ok = write_dump_file(ctx, m, "kernels.txt", &sb, st);
  strbuf_free(&sb);
  return ok;
}

/* The program stage (program.h) of the entry with the plan buffer
 * assignment made, for one device. */
bool dump_program(OptContext *ctx, const Module *m, Status *st) {
  if (!ctx->plan) return true;
  Program *p = program_build(m, ctx->plan, NULL);
  StrBuf sb = {0};
  print_program(&sb, p);
  program_free(p);
  bool ok = write_dump_file(ctx, m, "program.txt", &sb, st);
  strbuf_free(&sb);
  return ok;
}

/* ---- Graphviz ---- */

/* A node label: the name, the opcode and the shape, and the JAX source
 * line when the metadata has one. Quotes are escaped for dot. */
static void print_dot_label(StrBuf *sb, const Instruction *inst) {
  StrBuf shape = {0};
  shape_print(&shape, &inst->shape, false);
  strbuf_printf(sb, "\"%s\\n%s %s\"", inst->name, opcode_name(inst->opcode), shape.data ? shape.data : "");
  strbuf_free(&shape);
}

static void print_dot_node_id(StrBuf *sb, const Instruction *inst) {
  strbuf_printf(sb, "\"%s/%s\"", inst->parent->name, inst->name);
}

static const char *dot_fill(const Instruction *inst) {
  switch (opcode_cost(inst->opcode)) {
  case COST_HEAVY: return "#f4b183";
  case COST_REDUCE: return "#a9d18e";
  case COST_MATH: return "#ffe699";
  default: return inst->opcode == OP_PARAMETER ? "#bdd7ee" : "#ffffff";
  }
}

static void print_dot_computation(StrBuf *sb, const Computation *c, int depth);

/* A fusion is a cluster that holds its fused computation; the fusion's own
 * node stands for its result, drawn inside the cluster. */
static void print_dot_instruction(StrBuf *sb, const Instruction *inst, int depth) {
  if (inst->opcode == OP_FUSION && inst->called_count == 1 && depth < 4) {
    strbuf_printf(sb, "  subgraph \"cluster_%s\" {\n    label=\"%s (kind=%s)\"; style=rounded; color=\"#4472c4\";\n",
                  inst->name, inst->name,
                  inst->attrs.fusion_kind == FUSION_INPUT    ? "kInput"
                  : inst->attrs.fusion_kind == FUSION_OUTPUT ? "kOutput"
                  : inst->attrs.fusion_kind == FUSION_CUSTOM ? "kCustom"
                                                              : "kLoop");
    print_dot_computation(sb, inst->called[0], depth + 1);
    strbuf_printf(sb, "  }\n");
    /* The fused root feeds the fusion's result node. */
    print_dot_node_id(sb, inst->called[0]->root);
    strbuf_printf(sb, " -> ");
    print_dot_node_id(sb, inst);
    strbuf_printf(sb, " [style=dashed];\n");
  }
  print_dot_node_id(sb, inst);
  strbuf_printf(sb, " [label=");
  print_dot_label(sb, inst);
  strbuf_printf(sb, ", style=filled, fillcolor=\"%s\"%s];\n", dot_fill(inst),
                inst->opcode == OP_FUSION ? ", shape=box" : "");
  for (int i = 0; i < inst->operand_count; i++) {
    print_dot_node_id(sb, inst->operands[i]);
    strbuf_printf(sb, " -> ");
    print_dot_node_id(sb, inst);
    strbuf_printf(sb, ";\n");
  }
}

static void print_dot_computation(StrBuf *sb, const Computation *c, int depth) {
  for (int i = 0; i < c->instruction_count; i++) print_dot_instruction(sb, c->instructions[i], depth);
}

void print_module_dot(StrBuf *sb, const Module *m) {
  strbuf_printf(sb, "digraph \"%s\" {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n",
                m->name);
  if (m->entry) print_dot_computation(sb, m->entry, 0);
  strbuf_printf(sb, "}\n");
}
