/* The program stage (src/opt/program.c): small modules written inline,
 * planned as they are (buffer_plan_create, no other pass), checked for the
 * steps' kinds, the bindings they read and write, the called programs, and
 * that each kernel is lowered once; then that the CPU backend runs the
 * stage's kernels rather than lowering its own, and that --dump's
 * program.txt names the steps. */
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_program.h"
#include "ir.h"
#include "opt/program.h"
#include "runtime/executable.h"
#include "../test.h"

static Module *parse_text(const char *text) {
  Status st;
  Module *m = parse_module(text, strlen(text), "inline.hlo", &st);
  if (!m) printf("  parse failed: %s\n%s\n", st.message, text);
  return m;
}

typedef struct Built {
  Module *m;
  BufferPlan *plan;
  Program *p;
} Built;

static Built build_with(const char *text, const ProgramOptions *o) {
  Built b = {parse_text(text), NULL, NULL};
  if (!b.m) return b;
  b.plan = buffer_plan_create(b.m->entry);
  b.p = program_build(b.m, b.plan, o);
  return b;
}

static Built build(const char *text) { return build_with(text, NULL); }

static const ProgramOptions across_devices = {.across_devices = true};

static void built_free(Built *b) {
  program_free(b->p);
  buffer_plan_free(b->plan);
  module_free(b->m);
}

static int kernel_steps(const Program *p) {
  int n = 0;
  for (int i = 0; i < p->step_count; i++) {
    const ProgramStep *s = &p->steps[i];
    n += s->kernel != NULL;
    for (int k = 0; k < s->called_count; k++) n += kernel_steps(s->called[k]);
  }
  return n;
}

static const char reduce_sum[] =
    "HloModule reduce_sum\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "ENTRY main {\n"
    "  x = f32[1024] parameter(0)\n"
    "  zero = f32[] constant(0)\n"
    "  ROOT r = f32[] reduce(x, zero), dimensions={0}, to_apply=add\n"
    "}\n";

TEST(reduce_is_one_kernel_step_reading_the_parameter_and_writing_the_result) {
  Built b = build(reduce_sum);
  if (!b.m) return;
  const Program *p = b.p;
  EXPECT(p->step_count == 1, "%d steps", p->step_count);
  const ProgramStep *s = &p->steps[0];
  EXPECT(s->kind == PROGRAM_STEP_KERNEL, "kind %s", program_step_kind_name(s->kind));
  EXPECT(s->kernel && s->kernel->kind == KERNEL_REDUCE, "not a reduce kernel");
  EXPECT(s->kernel && s->buffer_count == s->kernel->input_count + s->kernel->output_count, "%d buffers",
         s->buffer_count);
  int x = program_binding_of(p, computation_find_instruction(b.m->entry, "x"), 0);
  EXPECT(x >= 0 && p->bindings[x].kind == BINDING_PARAMETER && p->bindings[x].number == 0, "x's binding %d", x);
  EXPECT(s->buffer_count >= 2 && s->buffers[0] == x, "the kernel reads b%d first, not x (b%d)", s->buffers[0], x);
  int out = s->buffers[s->buffer_count - 1];
  EXPECT(out >= 0 && p->bindings[out].kind == BINDING_OUTPUT && p->bindings[out].leaf == 0,
         "the kernel writes b%d, not result leaf 0", out);
  EXPECT(p->copy_count == 0, "%d result copies for a result written in place", p->copy_count);
  EXPECT(p->lowered_count == 1, "lowered %d times for 1 kernel", p->lowered_count);
  built_free(&b);
}

static const char while_loop[] =
    "HloModule while_counter\n"
    "cond {\n  state = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(state), index=0\n"
    "  limit = s32[] constant(10)\n  ROOT more = pred[] compare(i, limit), direction=LT\n}\n"
    "body {\n  state = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(state), index=0\n"
    "  x = f32[4] get-tuple-element(state), index=1\n  one = s32[] constant(1)\n"
    "  next_i = s32[] add(i, one)\n  next_x = f32[4] negate(x)\n"
    "  ROOT next = (s32[], f32[4]) tuple(next_i, next_x)\n}\n"
    "ENTRY main {\n  x = f32[4] parameter(0)\n  zero = s32[] constant(0)\n"
    "  init = (s32[], f32[4]) tuple(zero, x)\n"
    "  ROOT loop = (s32[], f32[4]) while(init), condition=cond, body=body\n}\n";

TEST(while_is_a_step_with_condition_and_body_programs_of_their_own) {
  Built b = build(while_loop);
  if (!b.m) return;
  const Program *p = b.p;
  EXPECT(p->step_count == 1 && p->steps[0].kind == PROGRAM_STEP_WHILE, "%d steps, first %s", p->step_count,
         p->step_count ? program_step_kind_name(p->steps[0].kind) : "-");
  if (p->step_count != 1) goto done;
  const ProgramStep *s = &p->steps[0];
  EXPECT(s->called_count == 2, "%d called programs", s->called_count);
  if (s->called_count != 2) goto done;
  const Program *cond = s->called[0], *body = s->called[1];
  EXPECT(strcmp(cond->computation->name, "cond") == 0 && cond->called, "called[0] is %s", cond->computation->name);
  EXPECT(strcmp(body->computation->name, "body") == 0 && body->called, "called[1] is %s", body->computation->name);
  EXPECT(program_step_called(s, b.m->entry) == NULL, "the entry found among the called programs");
  /* the init's two leaves (a constant and the parameter), then the loop's two */
  EXPECT(s->buffer_count == 4, "%d buffers", s->buffer_count);
  if (s->buffer_count == 4) {
    EXPECT(p->bindings[s->buffers[0]].kind == BINDING_CONSTANT, "init leaf 0 is not the constant");
    EXPECT(p->bindings[s->buffers[1]].kind == BINDING_PARAMETER, "init leaf 1 is not the parameter");
    EXPECT(p->bindings[s->buffers[2]].kind == BINDING_OUTPUT && p->bindings[s->buffers[3]].kind == BINDING_OUTPUT,
           "the loop's leaves are not the result's");
  }
  EXPECT(cond->step_count == 1 && cond->steps[0].kind == PROGRAM_STEP_KERNEL, "cond: %d steps", cond->step_count);
  EXPECT(body->step_count == 2, "body: %d steps (add, negate)", body->step_count);
  /* A called program reads its caller's leaves: parameters, no relayout. */
  for (int i = 0; i < body->binding_count; i++)
    EXPECT(body->bindings[i].kind != BINDING_PARAMETER || !body->bindings[i].layout, "b%d copied to a layout", i);
  EXPECT(p->lowered_count == 3 && kernel_steps(p) == 3, "lowered %d times for %d kernels", p->lowered_count,
         kernel_steps(p));
done:
  built_free(&b);
}

static const char conditional[] =
    "HloModule conditional_pred\n"
    "on_true {\n  x = f32[5] parameter(0)\n  ROOT y = f32[5] multiply(x, x)\n}\n"
    "on_false {\n  n = s32[5] parameter(0)\n  ROOT y = f32[5] convert(n)\n}\n"
    "ENTRY main {\n  p = pred[] parameter(0)\n  x = f32[5] parameter(1)\n  n = s32[5] parameter(2)\n"
    "  ROOT taken = f32[5] conditional(p, x, n), true_computation=on_true, false_computation=on_false\n}\n";

TEST(conditional_is_a_step_with_a_program_per_branch) {
  Built b = build(conditional);
  if (!b.m) return;
  const Program *p = b.p;
  EXPECT(p->step_count == 1 && p->steps[0].kind == PROGRAM_STEP_CONDITIONAL, "%d steps", p->step_count);
  if (p->step_count != 1) goto done;
  const ProgramStep *s = &p->steps[0];
  EXPECT(s->called_count == 2, "%d branches", s->called_count);
  if (s->called_count == 2) {
    EXPECT(strcmp(s->called[0]->computation->name, "on_true") == 0, "branch 0 is %s", s->called[0]->computation->name);
    EXPECT(strcmp(s->called[1]->computation->name, "on_false") == 0, "branch 1 is %s", s->called[1]->computation->name);
    EXPECT(s->called[0]->steps[0].kind == PROGRAM_STEP_KERNEL && s->called[1]->steps[0].kind == PROGRAM_STEP_KERNEL,
           "the branches are not one kernel each");
  }
  /* index, x, n, then the result */
  EXPECT(s->buffer_count == 4, "%d buffers", s->buffer_count);
  /* the dump says which programs are branches (a device may skip them) */
  StrBuf sb = {0};
  print_program(&sb, p);
  EXPECT(sb.data && strstr(sb.data, "branch 0: program of on_true (called, in a branch)"), "dump:\n%s",
         sb.data ? sb.data : "");
  strbuf_free(&sb);
  EXPECT(p->lowered_count == 2, "lowered %d times for 2 kernels", p->lowered_count);
done:
  built_free(&b);
}

static const char output_fusion[] =
    "HloModule output_fusion\n"
    "fused {\n  x = f32[8,5] parameter(0)\n  w = f32[5,6] parameter(1)\n  b = f32[6] parameter(2)\n"
    "  d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  bb = f32[8,6] broadcast(b), dimensions={1}\n  ROOT s = f32[8,6] add(d, bb)\n}\n"
    "ENTRY main {\n  x = f32[8,5] parameter(0)\n  w = f32[5,6] parameter(1)\n  b = f32[6] parameter(2)\n"
    "  ROOT f = f32[8,6] fusion(x, w, b), kind=kOutput, calls=fused\n}\n";

TEST(output_fusion_is_a_product_step_whose_epilogue_reads_the_product) {
  Built b = build(output_fusion);
  if (!b.m) return;
  const Program *p = b.p;
  EXPECT(p->step_count == 1 && p->steps[0].kind == PROGRAM_STEP_PRODUCT, "%d steps", p->step_count);
  if (p->step_count != 1) goto done;
  const ProgramStep *s = &p->steps[0];
  EXPECT(s->product && s->product->opcode == OP_DOT, "no dot recorded as the product");
  EXPECT(s->kernel && s->kernel->kind == KERNEL_LOOP, "no loop epilogue");
  if (!s->kernel) goto done;
  int product_inputs = 0;
  for (int i = 0; i < s->kernel->input_count; i++) product_inputs += s->buffers[i] == PROGRAM_PRODUCT_INPUT;
  EXPECT(product_inputs == 1, "%d epilogue inputs are the product", product_inputs);
  EXPECT(s->buffers[s->kernel->input_count - 1] == PROGRAM_PRODUCT_INPUT, "the product is not the last input");
  EXPECT(p->lowered_count == 1, "lowered %d times", p->lowered_count);
done:
  built_free(&b);
}

TEST(a_value_a_fused_product_reads_is_computed_first_by_a_kernel_step_of_its_own) {
  Built b = build("HloModule inner\n"
                  "fused {\n  x = f32[8,5] parameter(0)\n  w = f32[6,5] parameter(1)\n"
                  "  w2 = f32[6,5] multiply(w, w)\n"
                  "  ROOT d = f32[8,6] dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}\n"
                  "ENTRY main {\n  x = f32[8,5] parameter(0)\n  w = f32[6,5] parameter(1)\n"
                  "  ROOT f = f32[8,6] fusion(x, w), kind=kOutput, calls=fused\n}\n");
  if (!b.m) return;
  const Program *p = b.p;
  EXPECT(p->step_count == 2, "%d steps", p->step_count);
  if (p->step_count != 2) goto done;
  const ProgramStep *first = &p->steps[0], *product = &p->steps[1];
  EXPECT(first->kind == PROGRAM_STEP_KERNEL && first->value && strcmp(first->value->name, "w2") == 0,
         "step 0 does not compute w2");
  EXPECT(product->kind == PROGRAM_STEP_PRODUCT, "step 1 is a %s", program_step_kind_name(product->kind));
  int w2 = first->buffer_count > 0 ? first->buffers[first->buffer_count - 1] : -1;
  EXPECT(w2 >= 0 && p->bindings[w2].kind == BINDING_TEMP, "w2 is not in a temporary");
  EXPECT(product->product_operands[1] == w2, "the product reads b%d, not w2's b%d", product->product_operands[1], w2);
  int x = program_binding_of(p, computation_find_instruction(b.m->entry, "x"), 0);
  EXPECT(product->product_operands[0] == x, "the product reads b%d, not x's b%d", product->product_operands[0], x);
  EXPECT(p->lowered_count == kernel_steps(p) && kernel_steps(p) == 2, "lowered %d for %d kernels", p->lowered_count,
         kernel_steps(p));
done:
  built_free(&b);
}

TEST(a_fused_constant_gets_a_binding_in_the_layout_its_kernel_reads) {
  /* {0,1}: column-major; the kernel reads the constant's bytes in it. */
  Built b = build("HloModule c\nfused {\n  p = f32[2,3]{0,1} parameter(0)\n"
                  "  c = f32[2,3]{0,1} constant({{1,2,3},{4,5,6}})\n  ROOT a = f32[2,3]{0,1} add(p, c)\n}\n"
                  "ENTRY main {\n  p = f32[2,3]{0,1} parameter(0)\n"
                  "  ROOT f = f32[2,3]{0,1} fusion(p), kind=kLoop, calls=fused\n}\n");
  if (!b.m) return;
  const Program *p = b.p;
  const ProgramBinding *c = NULL;
  for (int i = 0; i < p->binding_count; i++)
    if (p->bindings[i].kind == BINDING_CONSTANT && p->bindings[i].inst_leaf < 0) c = &p->bindings[i];
  EXPECT(c != NULL, "no binding for the fused constant");
  if (c) {
    const float *v = c->data, want[6] = {1, 4, 2, 5, 3, 6};
    EXPECT(c->bytes == 24 && memcmp(v, want, sizeof want) == 0, "bytes %lld, first %g %g %g", (long long)c->bytes,
           v[0], v[1], v[2]);
  }
  built_free(&b);
}

TEST(routines_carry_the_kernels_they_apply_lowered_once) {
  Built b = build("HloModule r\n"
                  "less {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                  "  ROOT l = pred[] compare(a, b), direction=LT\n}\n"
                  "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                  "ENTRY main {\n  x = f32[8] parameter(0)\n  i = s32[2,1] parameter(1)\n"
                  "  u = f32[2] parameter(2)\n  s = f32[8] sort(x), dimensions={0}, to_apply=less\n"
                  "  ROOT t = f32[8] scatter(s, i, u), update_window_dims={}, inserted_window_dims={0},"
                  " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n");
  if (!b.m) return;
  const Program *p = b.p;
  EXPECT(p->step_count == 2, "%d steps", p->step_count);
  for (int i = 0; i < p->step_count; i++) {
    const ProgramStep *s = &p->steps[i];
    EXPECT(s->kind == PROGRAM_STEP_ROUTINE, "step %d is a %s", i, program_step_kind_name(s->kind));
    EXPECT(s->applied_count == 1 && s->applied[0] && s->applied[0]->rank == 0,
           "step %d (%s): %d applied kernels, not one rank-0 kernel", i, s->inst->name, s->applied_count);
  }
  EXPECT(p->lowered_count == 2, "lowered %d times for 2 applied kernels", p->lowered_count);
  built_free(&b);
}

/* The CPU backend compiles the program stage's kernels: each kernel step
 * runs the very Kernel the stage lowered (none lowered a second time). */
TEST(cpu_kernel_steps_run_the_kernels_the_stage_lowered) {
  const char *texts[] = {reduce_sum, while_loop, output_fusion};
  for (int t = 0; t < 3; t++) {
    Status st;
    status_clear(&st);
    Module *m = parse_text(texts[t]);
    if (!m) continue;
    ExecutableOptions o;
    executable_options_default(&o, AXLE_BACKEND_CPU);
    Executable *exe = executable_compile(m, &o, &st);
    EXPECT(exe != NULL, "compile: %s", st.message);
    if (exe) {
      const CpuProgram *cp = exe->program;
      const Program *p = cp->program;
      EXPECT(p != NULL && p->lowered_count == kernel_steps(p), "module %d: lowered %d for %d kernels", t,
             p ? p->lowered_count : -1, p ? kernel_steps(p) : -1);
      for (int i = 0; p && i < cp->step_count; i++) {
        const CpuStep *s = &cp->steps[i];
        if (s->kind != CPU_STEP_KERNEL) continue;
        bool found = false;
        for (int j = 0; j < p->step_count; j++) found |= p->steps[j].kernel == s->lowered;
        EXPECT(found, "module %d: step %d runs a kernel the stage did not lower", t, i);
      }
      executable_free(exe);
    }
    module_free(m);
  }
}

static const char complex_topk[] =
    "HloModule complex_topk\n"
    "ENTRY main {\n"
    "  x = c64[2,4] parameter(0)\n"
    "  ROOT t = (c64[2,2], s32[2,2]) topk(x), k=2, largest=true\n"
    "}\n";

/* What a target refuses is its supports hook's decision, asked of every
 * step before any code is made (backend_compile.c): the hook asks the
 * family file of the step's op, and each target gives its own reason. */
TEST(each_target_refuses_a_routine_in_its_supports_hook_with_its_family_reason) {
  Built b = build(complex_topk);
  if (!b.m) return;
  const ProgramStep *topk = NULL;
  for (int i = 0; i < b.p->step_count; i++)
    if (b.p->steps[i].inst->opcode == OP_TOPK) topk = &b.p->steps[i];
  EXPECT(topk && topk->kind == PROGRAM_STEP_ROUTINE, "no routine step for the topk");
  if (topk) {
    StepReason why = {0};
    bool supported = backend_cpu.supports(b.p, topk, &why);
    EXPECT(!supported && why.text && strcmp(why.text, "a topk of this element type") == 0, "CPU: %s, %s",
           supported ? "supported" : "refused", why.text ? why.text : "(no reason)");
    why = (StepReason){0};
    supported = backend_gpu.supports(b.p, topk, &why);
    EXPECT(!supported && why.text && strcmp(why.text, "a top-k of a type the GPU's comparators do not yet compute on") == 0,
           "GPU: %s, %s", supported ? "supported" : "refused", why.text ? why.text : "(no reason)");
  }
  built_free(&b);
}

static const char column_major_dynamic_reshape[] =
    "HloModule column_major_dynamic_reshape\n"
    "ENTRY main {\n"
    "  x = f32[2,3]{0,1} parameter(0)\n"
    "  a = s32[] constant(3)\n"
    "  b = s32[] constant(2)\n"
    "  ROOT r = f32[3,2] dynamic-reshape(x, a, b)\n"
    "}\n";

/* The step of kind `kind` whose instruction is `op` in p; NULL if none. */
static const ProgramStep *step_of(const Program *p, Opcode op, ProgramStepKind kind) {
  for (int i = 0; i < p->step_count; i++)
    if (p->steps[i].inst->opcode == op && p->steps[i].kind == kind) return &p->steps[i];
  return NULL;
}

/* What a forward or a collective of one replica can copy is the same for
 * every target, so the program stage decides it once and records it on
 * the step; the targets' supports hooks have nothing of their own to add. */
static void expect_refused_by_the_stage(const char *text, Opcode op, ProgramStepKind kind, const char *reason) {
  Built b = build(text);
  if (!b.m) return;
  const ProgramStep *step = step_of(b.p, op, kind);
  EXPECT(step != NULL, "no step of its kind for the %s", opcode_name(op));
  if (step) {
    EXPECT(step->unsupported && strcmp(step->unsupported, reason) == 0, "the stage: %s (want %s)",
           step->unsupported ? step->unsupported : "(no reason)", reason);
    StepReason why = {0};
    EXPECT(backend_cpu.supports(b.p, step, &why), "the CPU's hook refuses it itself: %s", why.text ? why.text : "");
    why = (StepReason){0};
    EXPECT(backend_gpu.supports(b.p, step, &why), "the GPU's hook refuses it itself: %s", why.text ? why.text : "");
  }
  built_free(&b);
}

static void expect_copy_refused_by_the_stage(const char *text, Opcode op, const char *reason) {
  expect_refused_by_the_stage(text, op, PROGRAM_STEP_COPY, reason);
}

TEST(the_program_stage_refuses_a_forward_no_target_can_copy_once_for_every_target) {
  expect_copy_refused_by_the_stage(column_major_dynamic_reshape, OP_DYNAMIC_RESHAPE,
                                   "a dynamic-reshape between layouts");
}

static const char permute_between_replicas[] =
    "HloModule permute_between_replicas\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  ROOT p = f32[4] collective-permute(x), source_target_pairs={{0,1},{1,0}}\n"
    "}\n";

TEST(the_program_stage_refuses_a_permute_between_replicas_when_one_replica_runs) {
  expect_copy_refused_by_the_stage(permute_between_replicas, OP_COLLECTIVE_PERMUTE,
                                   "a permute between replicas (one replica runs)");
}

/* A called computation runs on the caller's storage as it lies: a loop
 * state, a branch's or a callee's parameter in another layout than the
 * value it stands for would be read scrambled. Every target relies on
 * it, so the program stage refuses it once, for all. */
static const char while_state_in_two_layouts[] =
    "HloModule while_state_in_two_layouts\n"
    "cond { s = f32[2,3]{0,1} parameter(0)\n ROOT t = pred[] constant(false) }\n"
    "body { s = f32[2,3]{0,1} parameter(0)\n ROOT n = f32[2,3]{0,1} negate(s) }\n"
    "ENTRY main {\n"
    "  x = f32[2,3]{1,0} parameter(0)\n"
    "  ROOT w = f32[2,3]{1,0} while(x), condition=cond, body=body\n"
    "}\n";

static const char call_in_another_layout[] =
    "HloModule call_in_another_layout\n"
    "f { p = f32[2,3]{0,1} parameter(0)\n ROOT n = f32[2,3]{0,1} negate(p) }\n"
    "ENTRY main {\n"
    "  x = f32[2,3]{1,0} parameter(0)\n"
    "  ROOT c = f32[2,3]{0,1} call(x), to_apply=f\n"
    "}\n";

static const char branch_in_another_layout[] =
    "HloModule branch_in_another_layout\n"
    "yes { p = f32[2,3]{0,1} parameter(0)\n ROOT n = f32[2,3]{1,0} negate(p) }\n"
    "no { p = f32[2,3]{1,0} parameter(0)\n ROOT n = f32[2,3]{1,0} abs(p) }\n"
    "ENTRY main {\n"
    "  b = pred[] parameter(0)\n"
    "  x = f32[2,3]{1,0} parameter(1)\n"
    "  ROOT c = f32[2,3]{1,0} conditional(b, x, x), true_computation=yes, false_computation=no\n"
    "}\n";

TEST(the_program_stage_refuses_called_computations_that_do_not_fit_their_storage_once_for_every_target) {
  expect_refused_by_the_stage(while_state_in_two_layouts, OP_WHILE, PROGRAM_STEP_WHILE,
                              "a loop state whose shapes or layouts differ between init, condition and body");
  expect_refused_by_the_stage(call_in_another_layout, OP_CALL, PROGRAM_STEP_CALL,
                              "a called computation whose parameters or result differ in shape or layout");
  expect_refused_by_the_stage(branch_in_another_layout, OP_CONDITIONAL, PROGRAM_STEP_CONDITIONAL,
                              "a branch whose parameter or result differs in shape or layout");
}

static const char all_reduce_subtract[] =
    "HloModule all_reduce_subtract\n"
    "sub { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] subtract(a, b) }\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  ROOT r = f32[4] all-reduce(x), replica_groups={}, to_apply=sub\n"
    "}\n";

/* In a run over several devices the collective is a step of its own,
 * and what NCCL cannot reduce is refused by the supports hook too. */
TEST(the_gpu_refuses_a_reduction_nccl_does_not_have_in_its_supports_hook) {
  Built b = build_with(all_reduce_subtract, &across_devices);
  if (!b.m) return;
  const Program *p = b.p;
  const ProgramStep *reduce = NULL;
  for (int i = 0; i < p->step_count; i++)
    if (p->steps[i].inst->opcode == OP_ALL_REDUCE) reduce = &p->steps[i];
  EXPECT(reduce && reduce->kind == PROGRAM_STEP_COLLECTIVE, "no collective step for the all-reduce");
  if (reduce) {
    StepReason why = {0};
    bool supported = backend_gpu.supports(p, reduce, &why);
    EXPECT(!supported && why.text &&
               strcmp(why.text, "a reduction across GPUs whose to_apply is not add, multiply, maximum or minimum") == 0,
           "GPU: %s, %s", supported ? "supported" : "refused", why.text ? why.text : "(no reason)");
  }
  built_free(&b);
}

static const char all_reduce_in_a_branch[] =
    "HloModule all_reduce_in_a_branch\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "reduce_it { x = f32[2] parameter(0)\n"
    "  ROOT r = f32[2] all-reduce(x), replica_groups={}, to_apply=add }\n"
    "keep_it { x = f32[2] parameter(0)\n ROOT r = f32[2] negate(x) }\n"
    "ENTRY main {\n"
    "  x = f32[2] parameter(0)\n"
    "  p = pred[] parameter(1)\n"
    "  ROOT c = f32[2] conditional(p, x, x), true_computation=reduce_it, false_computation=keep_it\n"
    "}\n";

/* Devices may take different branches, and NCCL waits for ever for a
 * device that never comes: the branch's program records that it is one, so
 * the GPU's hook refuses a collective across GPUs there before any code
 * is made, not while the branch is compiled. */
TEST(a_branch_program_knows_it_is_one_and_the_gpu_refuses_a_collective_there) {
  Built b = build_with(all_reduce_in_a_branch, &across_devices);
  if (!b.m) return;
  const Program *p = b.p;
  const ProgramStep *cond = step_of(p, OP_CONDITIONAL, PROGRAM_STEP_CONDITIONAL);
  EXPECT(cond && cond->called_count == 2, "no conditional step with two branches");
  EXPECT(!p->in_conditional_branch, "the entry says it is a branch");
  if (cond && cond->called_count == 2) {
    const Program *branch = cond->called[0];
    EXPECT(branch->in_conditional_branch, "the branch program does not say it is one");
    const ProgramStep *reduce = step_of(branch, OP_ALL_REDUCE, PROGRAM_STEP_COLLECTIVE);
    EXPECT(reduce != NULL, "no collective step in the branch");
    if (reduce) {
      StepReason why = {0};
      bool supported = backend_gpu.supports(branch, reduce, &why);
      EXPECT(!supported && why.text && strstr(why.text, "a collective across GPUs inside a conditional's branch") == why.text,
             "GPU: %s, %s", supported ? "supported" : "refused", why.text ? why.text : "(no reason)");
    }
  }
  built_free(&b);
}

static const char potrf_of_the_wrong_type[] =
    "HloModule potrf_of_the_wrong_type\n"
    "ENTRY main {\n"
    "  a = f64[2,2] parameter(0)\n"
    "  ROOT potrf = (f64[2,2], s32[]) custom-call(a), custom_call_target=\"lapack_spotrf_ffi\", "
    "backend_config={uplo = 76 : ui8}\n"
    "}\n";

static const char potrf[] =
    "HloModule potrf\n"
    "ENTRY main {\n"
    "  a = f32[2,2] parameter(0)\n"
    "  ROOT potrf = (f32[2,2], s32[]) custom-call(a), custom_call_target=\"lapack_spotrf_ffi\", "
    "backend_config={uplo = 76 : ui8}\n"
    "}\n";

/* A reason made for the step (here naming the custom-call's target) is
 * written by the supports hook into the reason's buffer, so it too is
 * decided before any code is made, not found while the step compiles. */
TEST(a_supports_hook_names_the_custom_call_target_it_refuses) {
  Built b = build(potrf_of_the_wrong_type);
  if (!b.m) return;
  const ProgramStep *call = step_of(b.p, OP_CUSTOM_CALL, PROGRAM_STEP_ROUTINE);
  EXPECT(call != NULL, "no routine step for the custom-call");
  if (call) {
    StepReason why = {0};
    bool supported = backend_cpu.supports(b.p, call, &why);
    EXPECT(!supported && why.text && strstr(why.text, "lapack_spotrf_ffi") && strstr(why.text, "expects"),
           "CPU: %s, %s", supported ? "supported" : "refused", why.text ? why.text : "(no reason)");
  }
  built_free(&b);
  b = build(potrf);
  if (!b.m) return;
  call = step_of(b.p, OP_CUSTOM_CALL, PROGRAM_STEP_ROUTINE);
  if (call) {
    StepReason why = {0};
    bool supported = backend_cpu.supports(b.p, call, &why);
    EXPECT(supported, "CPU refuses potrf: %s", why.text ? why.text : "(no reason)");
    why = (StepReason){0};
    supported = backend_gpu.supports(b.p, call, &why);
    EXPECT(!supported && why.text &&
               strcmp(why.text, "LAPACK custom-call lapack_spotrf_ffi: no GPU kernel for this routine yet (the CPU "
                                "backend and the interpreter run it)") == 0,
           "GPU: %s, %s", supported ? "supported" : "refused", why.text ? why.text : "(no reason)");
  }
  built_free(&b);
}

TEST(program_text_names_every_step_and_nests_called_programs) {
  Built b = build(while_loop);
  if (!b.m) return;
  StrBuf sb = {0};
  print_program(&sb, b.p);
  const char *text = sb.data ? sb.data : "";
  EXPECT(strstr(text, "program of main (entry)") != NULL, "no entry header:\n%s", text);
  EXPECT(strstr(text, "while       loop") != NULL, "no while step:\n%s", text);
  EXPECT(strstr(text, "condition: program of cond (called)") != NULL, "no condition program:\n%s", text);
  EXPECT(strstr(text, "body: program of body (called)") != NULL, "no body program:\n%s", text);
  EXPECT(strstr(text, "kernel next_x") != NULL, "no kernel name:\n%s", text);
  strbuf_free(&sb);
  built_free(&b);
}

int main(void) {
  RUN(reduce_is_one_kernel_step_reading_the_parameter_and_writing_the_result);
  RUN(while_is_a_step_with_condition_and_body_programs_of_their_own);
  RUN(conditional_is_a_step_with_a_program_per_branch);
  RUN(output_fusion_is_a_product_step_whose_epilogue_reads_the_product);
  RUN(a_value_a_fused_product_reads_is_computed_first_by_a_kernel_step_of_its_own);
  RUN(a_fused_constant_gets_a_binding_in_the_layout_its_kernel_reads);
  RUN(routines_carry_the_kernels_they_apply_lowered_once);
  RUN(cpu_kernel_steps_run_the_kernels_the_stage_lowered);
  RUN(each_target_refuses_a_routine_in_its_supports_hook_with_its_family_reason);
  RUN(the_program_stage_refuses_a_forward_no_target_can_copy_once_for_every_target);
  RUN(the_program_stage_refuses_a_permute_between_replicas_when_one_replica_runs);
  RUN(the_program_stage_refuses_called_computations_that_do_not_fit_their_storage_once_for_every_target);
  RUN(the_gpu_refuses_a_reduction_nccl_does_not_have_in_its_supports_hook);
  RUN(a_branch_program_knows_it_is_one_and_the_gpu_refuses_a_collective_there);
  RUN(a_supports_hook_names_the_custom_call_target_it_refuses);
  RUN(program_text_names_every_step_and_nests_called_programs);
  return test_summary();
}
