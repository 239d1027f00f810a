/* gpu_kernels: every corpus kernel the PTX emitter accepts, run on a real
 * GPU and compared with the kernel interpreter (kernel_eval) on the same
 * random inputs. Built and run by tests/gpu/run.sh on a machine with an
 * NVIDIA GPU: the check that src/emit_ptx/ptx_kernel.c computes what the
 * kernel IR means, which ptxas alone cannot show.
 *
 * Each module is optimized (so fusions are included) and evaluated
 * instruction by instruction; every entry instruction that lowers and
 * emits is launched alone on its operands' values. Loop kernels and
 * sequential reductions must match bit for bit (NaNs match any NaN: PTX's
 * max.NaN returns the canonical one); warp, block and row-block
 * reductions add in another order, so they may differ by R rounding errors
 * of the type; and a kernel with a math function (exp, sin ...) computes
 * it as math_reference.c does, which may differ from the interpreter's libm
 * by an ulp, so it may differ by a few ulps relative (gpu_math.c checks the
 * functions bit for bit against math_reference.c).
 * Buffers go to the device in their layout's physical order (literals hold
 * logical order). Prints PASS/FAIL per kernel and one summary line; exits 0
 * when all passed, 1 when one failed, 2 without a usable GPU. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_kernel.h"
#include "opt/lower.h"
#include "opt/opt.h"
#include "runtime/cuda_driver.h"
#include "../unit/output_compare.h"

static int passed, failed, refused;


static size_t buffer_bytes(const Shape *s) { return (size_t)shape_element_count(s) * (size_t)type_byte_size(s->type); }

/* A kernel with a math-library op: its results may differ by ulps. */
static bool kernel_has_math(const Kernel *k) {
  for (int i = 0; i < k->op_count; i++)
    if (k->ops[i].kop == KOP_HLO && ptx_op_needs_math_sequence(k->ops[i].op)) return true;
  return false;
}


typedef struct Launch {
  GpuDevice *gpu;
  const PtxTarget *target;
  CUdeviceptr ptr[64];
  int count;
  Status st;
} Launch;

static bool buffer_upload(Launch *L, const Literal *lit) {
  size_t bytes = buffer_bytes(&lit->shape);
  char *host = mem_calloc(bytes + 1, 1);
  layout_copy(lit, host, true);
  CUdeviceptr *p = &L->ptr[L->count++];
  bool ok = gpu_alloc(L->gpu, bytes, "a kernel buffer", p, &L->st) && gpu_copy_to_device(L->gpu, *p, host, bytes, &L->st);
  free(host);
  return ok;
}

static bool buffer_download(Launch *L, CUdeviceptr ptr, Literal *lit) {
  size_t bytes = buffer_bytes(&lit->shape);
  char *host = mem_calloc(bytes + 1, 1);
  bool ok = gpu_copy_to_host(L->gpu, host, ptr, bytes, &L->st);
  if (ok) layout_copy(lit, host, false);
  free(host);
  return ok;
}

/* Emits, loads and launches k on inputs; results into outs. */
static bool kernel_run(Launch *L, const Kernel *k, Literal *const *inputs, Literal **outs, PtxKernelShape *shape) {
  PtxBuilder b;
  ptx_builder_init(&b, L->target);
  bool ok = ptx_kernel_emit(&b, k, "kernel", shape, &L->st);
  CUmodule module = NULL;
  CUfunction f;
  ok = ok && gpu_module_load(L->gpu, ptx_builder_text(&b), k->name, &module, &L->st) &&
       gpu_function_get(L->gpu, module, "kernel", &f, &L->st);
  ptx_builder_free(&b);
  for (int i = 0; ok && i < k->input_count; i++) ok = buffer_upload(L, inputs[i]);
  for (int o = 0; ok && o < k->output_count; o++) ok = buffer_upload(L, outs[o]);
  void *params[64];
  for (int i = 0; i < L->count; i++) params[i] = &L->ptr[i];
  unsigned grid[3] = {(unsigned)shape->blocks, 1, 1}, block[3] = {(unsigned)shape->block_threads, 1, 1};
  ok = ok && gpu_launch(L->gpu, f, k->name, grid, block, 0, params, &L->st) && gpu_synchronize(L->gpu, &L->st);
  for (int o = 0; ok && o < k->output_count; o++) ok = buffer_download(L, L->ptr[k->input_count + o], outs[o]);
  for (int i = 0; i < L->count; i++) gpu_free(L->gpu, L->ptr[i]);
  L->count = 0;
  if (module) L->gpu->driver.module_unload(module);
  return ok;
}

/* One entry instruction: its kernel on the GPU against kernel_eval. */
static void instruction_check(GpuDevice *gpu, const PtxTarget *t, const char *module, const Instruction *inst,
                              Literal *const *operands) {
  Status st;
  status_clear(&st);
  Kernel *k = lower_to_kernel(inst, &st);
  if (!k) return;
  Literal **inputs = mem_calloc((size_t)k->input_count + 1, sizeof *inputs);
  for (int i = 0; i < k->input_count; i++) inputs[i] = k->inputs[i].constant ? (Literal *)k->inputs[i].constant : operands[i];
  Literal **want = mem_calloc((size_t)k->output_count + 1, sizeof *want), **got = mem_calloc((size_t)k->output_count + 1, sizeof *got);
  for (int o = 0; o < k->output_count; o++) want[o] = literal_create(&k->outputs[o].shape), got[o] = literal_create(&k->outputs[o].shape);
  Launch L = {.gpu = gpu, .target = t};
  status_clear(&L.st);
  PtxKernelShape shape = {0};
  char why[1200] = "";
  bool evaluated = kernel_eval(k, inputs, want, &st);
  bool ran = evaluated && kernel_run(&L, k, inputs, got, &shape);
  if (!evaluated) {
    refused++;
  } else if (!ran && L.st.code == STATUS_UNSUPPORTED) {
    refused++;
  } else {
    const char *strategy = shape.strategy ? shape.strategy : "";
    bool reordered = strcmp(strategy, "reduce.warp") == 0 || strcmp(strategy, "reduce.block") == 0 ||
                     strcmp(strategy, "row.block") == 0;
    int64_t r = 1;
    for (int d = 0; d < k->reduce_rank; d++) r *= k->reduce_dims[d];
    bool ok = ran;
    if (!ran) snprintf(why, sizeof why, "%.1000s", L.st.message);
    /* reordered sums differ by up to r + 1 roundings, math functions (and
     * complex ones, per part of the magnitude) by ulps */
    OutputTolerance tol = {.any_nan = true, .sum_roundings = reordered ? r + 1 : 0,
                           .math_roundings = kernel_has_math(k) ? 8 : 0, .complex_roundings = 16};
    for (int o = 0; ok && o < k->output_count; o++) ok = outputs_match(want[o], got[o], &tol, why, sizeof why);
    ok ? passed++ : failed++;
    printf("%s %s/%s (%s)%s%s\n", ok ? "PASS" : "FAIL", module, inst->name, shape.strategy ? shape.strategy : "-",
           ok ? "" : ": ", ok ? "" : why);
  }
  for (int o = 0; o < k->output_count; o++) literal_free(want[o]), literal_free(got[o]);
  free(want), free(got), free(inputs);
  kernel_free(k);
}

static void module_check(GpuDevice *gpu, const PtxTarget *t, const char *path, const char *name) {
  Status st;
  status_clear(&st);
  Module *m = parse_module_file(path, &st);
  if (!m) return;
  OptContext ctx;
  opt_context_init(&ctx, NULL);
  bool ok = optimize_module(m, &ctx, &st);
  opt_context_free(&ctx);
  const Computation *c = m->entry;
  Literal **values = mem_calloc((size_t)c->instruction_count + 1, sizeof *values);
  uint64_t state = 1;
  for (int i = 0; ok && i < c->instruction_count; i++) {
    const Instruction *inst = c->instructions[i];
    status_clear(&st);
    if (inst->opcode == OP_PARAMETER) {
      values[i] = literal_create(&inst->shape);
      literal_fill_random(values[i], &state);
      continue;
    }
    Literal *operands[64];
    for (int a = 0; a < inst->operand_count && a < 64; a++) operands[a] = values[inst->operands[a]->index];
    values[i] = inst->opcode == OP_CONSTANT ? literal_clone(inst->attrs.literal) : eval_instruction(inst, operands, &st);
    if (!values[i]) break;
    if (inst->opcode != OP_CONSTANT && inst->opcode != OP_TUPLE && inst->opcode != OP_GET_TUPLE_ELEMENT &&
        inst->operand_count <= 64)
      instruction_check(gpu, t, name, inst, operands);
  }
  for (int i = 0; i < c->instruction_count; i++) literal_free(values[i]);
  free(values);
  module_free(m);
}

int main(void) {
  GpuDevice gpu;
  Status st;
  status_clear(&st);
  if (!gpu_device_open(&gpu, &st)) {
    printf("gpu_kernels: %s\n", st.message);
    return 2;
  }
  PtxTarget target;
  if (!ptx_target_for_device(gpu.compute_major, gpu.compute_minor, &target, &st)) {
    printf("gpu_kernels: %s\n", st.message);
    gpu_device_close(&gpu);
    return 2;
  }
  DIR *dir = opendir("tests/hlo");
  if (!dir) {
    printf("gpu_kernels: run from the repository root\n");
    gpu_device_close(&gpu);
    return 2;
  }
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".hlo") != 0) continue;
    char path[600], name[300];
    snprintf(path, sizeof path, "tests/hlo/%s", e->d_name);
    snprintf(name, sizeof name, "%.*s", (int)(n - 4), e->d_name);
    module_check(&gpu, &target, path, name);
  }
  closedir(dir);
  gpu_device_close(&gpu);
  printf("gpu_kernels: %d passed, %d failed, %d not emitted (on %s)\n", passed, failed, refused, target.name);
  return failed ? 1 : 0;
}
