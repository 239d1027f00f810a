/* Executables (executable.h): compile a module into something that owns
 * what it runs, then run, check and time it on host buffers. The C API and
 * axle-run both come through here, so there is one argument check and one
 * order of stages. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/executable.h"
#include "runtime/thread_pool.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void executable_options_default(ExecutableOptions *o, axle_backend_t backend) {
  memset(o, 0, sizeof *o);
  o->backend = backend;
  o->optimize = -1;
  opt_options_default(&o->opt);
}

bool executable_device_counts(const Module *m, int devices, int64_t *replicas, int64_t *partitions, Status *st) {
  *replicas = *partitions = 1;
  if (devices <= 1) return true;
  int64_t r = module_replica_count(m), p = module_partition_count(m);
  if (r * p == 1) {
    *replicas = devices;  /* a module that says nothing runs as that many replicas */
    return true;
  }
  if (r * p != devices)
    return status_error(st, STATUS_INPUT_ERROR,
                        "module '%s' runs on replica_count=%lld x num_partitions=%lld = %lld devices, not %d",
                        m->name, (long long)r, (long long)p, (long long)(r * p), devices);
  *replicas = r;
  *partitions = p;
  return true;
}

/* Optimizes a clone of exe->module and keeps the entry's buffer plan,
 * which names instructions of that clone. Without optimization, a dump
 * still writes the module as given. */
static bool executable_optimize(Executable *exe, const OptOptions *opts, bool optimize, Status *st) {
  OptContext ctx;
  opt_context_init(&ctx, opts);
  bool ok = true;
  if (optimize) {
    exe->optimized = module_clone(exe->module);
    ok = optimize_module(exe->optimized, &ctx, st);
    if (ok && opts->stats) {
      StrBuf sb = {0};
      print_opt_stats(&sb, exe->optimized, &ctx);
      exe->stats = sb.data;
    }
    exe->plan = ctx.plan;
    ctx.plan = NULL;
  } else if (opts->dump_dir[0]) {
    ok = dump_module_text(&ctx, exe->module, "before_optimizations", st);
  }
  opt_context_free(&ctx);
  return ok;
}

const Module *executable_module_to_run(const Executable *e) {
  return e->optimized ? e->optimized : e->module;
}

Executable *executable_compile(const Module *m, const ExecutableOptions *o, Status *st) {
  const Backend *be = backend_get(o->backend, st);
  if (!be || (o->threads == 0 && !thread_count_check_env(st))) return NULL;
  Executable *exe = mem_calloc(1, sizeof *exe);
  if (!exe) {
    status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  atomic_init(&exe->references, 1);
  exe->backend = be;
  BackendOptions *bo = &exe->options;
  bo->threads = o->threads;
  bo->gpu_no_wgmma = o->opt.gpu_no_wgmma;
  bo->listings = o->listings || o->opt.dump_dir[0];
  bo->cpu_level = o->cpu_level;
  bo->device_index = o->device_index;
  bo->nccl = o->nccl;
  memcpy(bo->gpu_target, o->gpu_target, sizeof bo->gpu_target);
  bo->compile_only = o->compile_only;
  if (!executable_device_counts(m, o->devices, &bo->replica_count, &bo->partition_count, st)) {
    mem_free(exe);
    return NULL;
  }
  double t0 = now_ms();  /* compile time includes the optimizer's */
  exe->module = module_clone(m);
  bool optimize = o->optimize >= 0 ? o->optimize != 0 : be->optimizes;
  bool ok = executable_optimize(exe, &o->opt, optimize, st) &&
            backend_compile(be, executable_module_to_run(exe), exe->plan, bo, &exe->program, st);
  /* What the backend made of it (kernels, listings), beside the optimizer's dumps. */
  if (ok && o->opt.dump_dir[0] && be->dump)
    ok = be->dump(exe->program, executable_module_to_run(exe), o->opt.dump_dir, st);
  exe->compile_ms = now_ms() - t0;
  if (ok) return exe;
  /* A located error names the file through a pointer into the clones,
   * which go now: point it at the caller's module instead. */
  if (st->file && m->filename && strcmp(st->file, m->filename) == 0) st->file = m->filename;
  else if (st->file) st->file = NULL;
  executable_free(exe);
  return NULL;
}

Executable *executable_share(Executable *e) {
  atomic_fetch_add(&e->references, 1);
  return e;
}

void executable_free(Executable *e) {
  if (!e || atomic_fetch_sub(&e->references, 1) != 1) return;
  e->backend->free_program(e->program);
  buffer_plan_free(e->plan);
  module_free(e->optimized);
  module_free(e->module);
  mem_free(e->stats);
  mem_free(e);
}

/* An executable compiled for several devices runs only as one of them, on
 * a thread device_set_run made: alone, its collectives would see one. */
static bool executable_device_check(const Executable *e, Status *st) {
  int64_t devices = e->options.replica_count * e->options.partition_count;
  if (devices <= 1 || eval_device_get()) return true;
  return status_error(st, STATUS_INPUT_ERROR,
                      "this executable was compiled for %lld devices: run it with axle_executable_run_devices",
                      (long long)devices);
}

HostBuffer *executable_run(const Executable *e, HostBuffer *const *args, int arg_count, Status *st) {
  if (!executable_device_check(e, st)) return NULL;
  if (arg_count < 0 || (arg_count > 0 && !args)) {
    status_error(st, STATUS_INPUT_ERROR, "no arguments given");
    return NULL;
  }
  if (!host_buffer_check_arguments(e->module->entry, args, arg_count, st)) return NULL;
  return e->backend->run(e->program, executable_module_to_run(e), args, arg_count, st);
}

/* Copies b's array leaves, depth first, to leaves[*n...]. */
static void host_leaves_copy_out(const HostBuffer *b, void *const *leaves, int *n) {
  if (!shape_is_tuple(&b->shape)) {
    size_t bytes = (size_t)shape_byte_size(&b->shape);
    if (bytes) memcpy(leaves[*n], b->data, bytes);
    ++*n;
    return;
  }
  for (int i = 0; i < b->shape.tuple_count; i++) host_leaves_copy_out(b->elements[i], leaves, n);
}

bool executable_run_into(const Executable *e, HostBuffer *const *args, int arg_count, void *const *result_leaves,
                         Status *st) {
  if (!executable_device_check(e, st)) return false;
  if (arg_count < 0 || (arg_count > 0 && !args)) return status_error(st, STATUS_INPUT_ERROR, "no arguments given");
  if (!host_buffer_check_arguments(e->module->entry, args, arg_count, st)) return false;
  if (e->backend->run_into) return e->backend->run_into(e->program, args, arg_count, result_leaves, st);
  HostBuffer *result = e->backend->run(e->program, executable_module_to_run(e), args, arg_count, st);
  if (!result) return false;
  int n = 0;
  host_leaves_copy_out(result, result_leaves, &n);
  host_buffer_free(result);
  return true;
}

/* ---- checking against the evaluator ---- */

/* How many terms one element of inst's value sums, at most: a dot's
 * contracting size, a convolution's input features (of a group) times its
 * taps, a reduce's or a reduce-window's inputs per output; for an
 * instruction that calls computations (a fusion), the most of any
 * instruction in them; 1 otherwise. */
int64_t instruction_summed_terms(const Instruction *inst) {
  int64_t terms = 1;
  switch (inst->opcode) {
  case OP_DOT:
  case OP_RAGGED_DOT:
  case OP_SCALED_DOT: {
    const IntList *k = &attrs_dot(&inst->attrs)->lhs_contracting;
    for (int i = 0; i < k->count; i++) terms *= inst->operands[0]->shape.dims[k->values[i]];
    break;
  }
  case OP_CONVOLUTION: {
    const Shape *kernel = &inst->operands[1]->shape;
    int64_t outputs = kernel->dims[attrs_conv(&inst->attrs)->kernel_output_feature];
    terms = outputs > 0 ? shape_element_count(kernel) / outputs : 1;
    break;
  }
  case OP_REDUCE: {
    const Shape *out = shape_is_tuple(&inst->shape) ? &inst->shape.tuple_shapes[0] : &inst->shape;
    int64_t outputs = shape_element_count(out);
    terms = outputs > 0 ? shape_element_count(&inst->operands[0]->shape) / outputs : 1;
    break;
  }
  case OP_REDUCE_WINDOW: {
    const Window *w = attrs_window(&inst->attrs);
    for (int i = 0; w && i < w->rank; i++) terms *= w->dims[i].size;
    break;
  }
  default: break;
  }
  for (int c = 0; c < inst->called_count; c++)
    for (int i = 0; i < inst->called[c]->instruction_count; i++) {
      int64_t inner = instruction_summed_terms(inst->called[c]->instructions[i]);
      if (inner > terms) terms = inner;
    }
  return terms < 1 ? 1 : terms;
}

/* A sum's rounding grows with its terms, not with its result: summed in
 * any order, sum x_i is off by at most (terms - 1) u sum |x_i| (Higham,
 * Accuracy and Stability of Numerical Algorithms, 2nd ed., chapter 4), u
 * the unit roundoff, and a dot product by about terms * u sum |a_i b_i|
 * (chapter 3). sum |x_i| is not at hand where results are compared; the
 * largest |value| of the result stands in for it (terms of random signs
 * sum to about sum |x_i| / sqrt(terms), and the largest of many such sums
 * is a few times the typical one). u is f64's, or f32's for every
 * narrower float (axle and XLA sum f16 and bf16 in f32). */
double sum_rounding_allowance(ElementType t, int64_t terms, double largest) {
  ElementType real = type_is_complex(t) ? type_complex_component(t) : t;
  double u = type_bit_width(real) > 32 ? 0x1p-53 : 0x1p-24;
  return (double)terms * u * largest;
}

/* The largest finite |element| of a float leaf (each part of a complex). */
static double leaf_largest(const Literal *l, bool is_complex) {
  double largest = 0;
  for (int64_t i = 0; i < shape_element_count(&l->shape); i++) {
    double _Complex z = is_complex ? literal_get_complex(l, i) : literal_get_f64(l, i);
    double parts[2] = {fabs(creal(z)), fabs(cimag(z))};
    for (int part = 0; part < 2; part++)
      if (isfinite(parts[part]) && parts[part] > largest) largest = parts[part];
  }
  return largest;
}

/* Whether got is want within the tolerance of each element's type, its
 * elements sums of up to `terms` terms (sum_rounding_allowance). */
static bool values_close(const Literal *want, const Literal *got, int64_t terms) {
  if (shape_is_tuple(&want->shape)) {
    if (!shape_is_tuple(&got->shape) || got->shape.tuple_count != want->shape.tuple_count) return false;
    for (int i = 0; i < want->shape.tuple_count; i++)
      if (!values_close(want->elements[i], got->elements[i], terms)) return false;
    return true;
  }
  if (want->shape.type != got->shape.type || !shape_same_dims(&want->shape, &got->shape)) return false;
  bool is_complex = type_is_complex(want->shape.type);
  if (!type_is_float(want->shape.type) && !is_complex) return literal_equal(want, got);
  double rtol = type_byte_size(want->shape.type) == 2 ? 1e-2 : 1e-4;
  double growth = sum_rounding_allowance(want->shape.type, terms, leaf_largest(want, is_complex));
  /* a complex element is two such numbers, its real and imaginary parts */
  for (int64_t i = 0; i < shape_element_count(&want->shape); i++) {
    for (int part = 0; part < 1 + is_complex; part++) {
      double _Complex wz = is_complex ? literal_get_complex(want, i) : literal_get_f64(want, i);
      double _Complex gz = is_complex ? literal_get_complex(got, i) : literal_get_f64(got, i);
      double w = part ? cimag(wz) : creal(wz), g = part ? cimag(gz) : creal(gz);
      if (isnan(w) != isnan(g)) return false;
      if (!isnan(w) && fabs(w - g) > 1e-5 + rtol * fabs(w) + growth && w != g) return false;
    }
  }
  return true;
}

bool executable_check(const Executable *e, HostBuffer *const *args, int arg_count,
                      const HostBuffer *result, Status *st) {
  if (!host_buffer_check_arguments(e->module->entry, args, arg_count, st)) return false;
  Literal **views = mem_calloc((size_t)arg_count + 1, sizeof *views);
  for (int i = 0; i < arg_count; i++) views[i] = host_buffer_view(args[i]);
  Literal *want = eval_module(e->module, views, arg_count, st);
  for (int i = 0; i < arg_count; i++) literal_view_free(views[i]);
  mem_free(views);
  if (!want) return false;
  Literal *got = host_buffer_view(result);
  /* The result may have gone through every sum of the program. */
  int64_t terms = 1;
  for (int i = 0; i < e->module->entry->instruction_count; i++) {
    int64_t inner = instruction_summed_terms(e->module->entry->instructions[i]);
    if (inner > terms) terms = inner;
  }
  bool same = values_close(want, got, terms);
  literal_view_free(got);
  literal_free(want);
  if (!same)
    return status_error(st, STATUS_RUNTIME_ERROR, "backend %s disagrees with the evaluator",
                        e->backend->name);
  return true;
}

/* ---- timing ---- */

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

bool executable_time(const Executable *e, HostBuffer *const *args, int arg_count, int runs,
                     RunTimes *times, Status *st) {
  if (runs < 1) return status_error(st, STATUS_INPUT_ERROR, "a timing needs at least one run");
  /* Every run writes into one result made here, as a deployment's loop
   * does (executable_run_into): a result allocated per run would add the
   * allocator's and the kernel's page zeroing to the time, which depend on
   * what the process allocated before, not on the program. */
  const Shape *result_shape = &e->module->entry->root->shape;
  int leaf_count = shape_leaf_count(result_shape), n = 0;
  void **leaves = mem_calloc((size_t)leaf_count + 1, sizeof *leaves);
  HostBuffer *result = host_buffer_create_leaves(result_shape, false, leaves, &n, st);
  double *ms = mem_calloc((size_t)runs, sizeof *ms);
  bool ok = result && ms;
  if (result && !ms) status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  for (int r = -1; ok && r < runs; r++) {  /* run -1 is the warm-up */
    double t0 = now_ms();
    ok = executable_run_into(e, args, arg_count, leaves, st);
    if (r >= 0) ms[r] = now_ms() - t0;
  }
  host_buffer_free(result);
  mem_free(leaves);
  if (!ok) {
    mem_free(ms);
    return false;
  }
  qsort(ms, (size_t)runs, sizeof *ms, compare_doubles);
  times->runs = runs;
  times->median_ms = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
  times->min_ms = ms[0];
  times->max_ms = ms[runs - 1];
  times->device_runs = 0;
  if (e->backend->time_device) {
    if (!e->backend->time_device(e->program, args, arg_count, runs, ms, st)) {
      mem_free(ms);
      return false;
    }
    qsort(ms, (size_t)runs, sizeof *ms, compare_doubles);
    times->device_runs = runs;
    times->device_median_ms = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
    times->device_min_ms = ms[0];
    times->device_max_ms = ms[runs - 1];
  }
  mem_free(ms);
  return true;
}
