/* The CPU backend's runtime routines (cpu_sort.c, cpu_fft.c, cpu_linalg.c):
 * sort with its comparator compiled to x86, topk, fft, cholesky,
 * triangular-solve and LAPACK getrf, each run on edge inputs and compared
 * with the reference evaluator (exact for integers, sorts and pivots; a
 * relative tolerance where the arithmetic may round differently), and run
 * at 1 and 2 threads, which must give the same bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/cpu_program.h"
#include "runtime/executable.h"
#include "../test.h"

static Executable *compile_text(const char *text, axle_backend_t backend, int threads, Status *st) {
  status_clear(st);
  Module *m = parse_module(text, strlen(text), "test.hlo", st);
  if (!m) return NULL;
  ExecutableOptions o;
  executable_options_default(&o, backend);
  o.threads = threads;
  Executable *exe = executable_compile(m, &o, st);
  module_free(m);
  return exe;
}

static HostBuffer *array(ElementType t, int rank, const int64_t *dims, const void *data) {
  Status st;
  status_clear(&st);
  Shape s = shape_array(t, rank, dims);
  return host_buffer_create(&s, data, &st);
}

static double element_f64(const HostBuffer *b, int64_t i) {
  switch (b->shape.type) {
  case TYPE_F32: return ((const float *)b->data)[i];
  case TYPE_F64: return ((const double *)b->data)[i];
  case TYPE_C64: return ((const float *)b->data)[i];    /* i counts parts */
  case TYPE_C128: return ((const double *)b->data)[i];
  default: return 0;
  }
}

/* Compares one array leaf: floats within tol relative to 1 + |want|, NaN
 * matching NaN; everything else (and tol 0) byte for byte. */
static void expect_leaf_close(const HostBuffer *got, const HostBuffer *want, double tol, int leaf) {
  size_t bytes = (size_t)shape_byte_size(&want->shape);
  EXPECT(shape_byte_size(&got->shape) == (int64_t)bytes, "leaf %d: same size", leaf);
  bool is_float = type_is_float(want->shape.type) || type_is_complex(want->shape.type);
  if (!is_float || tol == 0) {
    EXPECT(memcmp(got->data, want->data, bytes) == 0, "leaf %d: the evaluator's exact bytes", leaf);
    return;
  }
  int64_t parts = shape_element_count(&want->shape) * (type_is_complex(want->shape.type) ? 2 : 1);
  for (int64_t i = 0; i < parts; i++) {
    double g = element_f64(got, i), w = element_f64(want, i);
    bool same = (isnan(g) && isnan(w)) || fabs(g - w) <= tol * (1 + fabs(w)) || g == w;
    if (!same) {
      EXPECT(same, "leaf %d, part %lld: got %.17g, the evaluator %.17g", leaf, (long long)i, g, w);
      return;
    }
  }
}

/* Every leaf of a (possibly nested) tuple, numbered depth first. */
static void expect_close_from(const HostBuffer *got, const HostBuffer *want, double tol, int *leaf) {
  if (want->shape.type != TYPE_TUPLE) {
    expect_leaf_close(got, want, tol, (*leaf)++);
    return;
  }
  EXPECT(got->shape.type == TYPE_TUPLE && got->shape.tuple_count == want->shape.tuple_count, "the same tuple shape");
  for (int i = 0; i < want->shape.tuple_count && got->shape.type == TYPE_TUPLE; i++)
    expect_close_from(got->elements[i], want->elements[i], tol, leaf);
}

static void expect_close(const HostBuffer *got, const HostBuffer *want, double tol) {
  int leaf = 0;
  expect_close_from(got, want, tol, &leaf);
}

static bool same_bytes(const HostBuffer *a, const HostBuffer *b) {
  if (a->shape.type == TYPE_TUPLE) {
    for (int i = 0; i < a->shape.tuple_count; i++)
      if (!same_bytes(a->elements[i], b->elements[i])) return false;
    return true;
  }
  return memcmp(a->data, b->data, (size_t)shape_byte_size(&a->shape)) == 0;
}

/* Runs text on the evaluator and on the CPU backend at 1 and 2 threads;
 * the CPU result must match the evaluator's within tol and be the same
 * bytes at both thread counts. Returns the 1-thread result (the caller
 * frees it) for further checks, or NULL. */
static HostBuffer *expect_matches_evaluator(const char *text, HostBuffer **args, int n, double tol) {
  Status st;
  Executable *ref = compile_text(text, AXLE_BACKEND_INTERP, 1, &st);
  EXPECT(ref != NULL, "the evaluator compiles it: %s", st.message);
  Executable *e1 = compile_text(text, AXLE_BACKEND_CPU, 1, &st);
  EXPECT(e1 != NULL, "the CPU backend compiles it: %s", st.message);
  Executable *e2 = compile_text(text, AXLE_BACKEND_CPU, 2, &st);
  HostBuffer *want = ref ? executable_run(ref, args, n, &st) : NULL;
  HostBuffer *r1 = e1 ? executable_run(e1, args, n, &st) : NULL;
  HostBuffer *r2 = e2 ? executable_run(e2, args, n, &st) : NULL;
  if (want && r1 && r2) {
    expect_close(r1, want, tol);
    EXPECT(same_bytes(r1, r2), "1 and 2 threads give the same bytes");
  } else {
    EXPECT(false, "all three run: %s", st.message);
  }
  if (e1) EXPECT(e1->program && ((CpuProgram *)e1->program)->step_count > 0, "the CPU program has steps");
  host_buffer_free(want);
  host_buffer_free(r2);
  executable_free(ref);
  executable_free(e1);
  executable_free(e2);
  return r1;
}

/* ---- sort ---- */

static const char stable_sort_text[] =
    "HloModule stable\n"
    "greater {\n"
    "  k0 = s32[] parameter(0)\n"
    "  k1 = s32[] parameter(1)\n"
    "  v0 = f32[] parameter(2)\n"
    "  v1 = f32[] parameter(3)\n"
    "  ROOT gt = pred[] compare(k0, k1), direction=GT\n"
    "}\n"
    "ENTRY main {\n"
    "  k = s32[3,37] parameter(0)\n"
    "  v = f32[3,37] parameter(1)\n"
    "  ROOT s = (s32[3,37], f32[3,37]) sort(k, v), dimensions={1}, is_stable=true, to_apply=greater\n"
    "}\n";

TEST(sort_keeps_equal_keys_in_input_order_and_moves_every_operand) {
  int32_t keys[3 * 37];
  float values[3 * 37];
  for (int i = 0; i < 3 * 37; i++) {
    keys[i] = (i * 7919) % 5 - 2;  /* five distinct keys, many ties */
    values[i] = (float)i;          /* each value names its position */
  }
  int64_t dims[2] = {3, 37};
  HostBuffer *args[2] = {array(TYPE_S32, 2, dims, keys), array(TYPE_F32, 2, dims, values)};
  HostBuffer *r = expect_matches_evaluator(stable_sort_text, args, 2, 0);
  if (r) {
    const int32_t *k = r->elements[0]->data;
    const float *v = r->elements[1]->data;
    for (int row = 0; row < 3; row++)
      for (int j = 1; j < 37; j++) {
        int i = row * 37 + j;
        EXPECT(k[i - 1] > k[i] || (k[i - 1] == k[i] && v[i - 1] < v[i]), "row %d, %d: (%d, %g) then (%d, %g)", row, j,
               k[i - 1], v[i - 1], k[i], v[i]);
        EXPECT(keys[(int)v[i]] == k[i], "value %g travelled with its key", v[i]);
      }
  }
  host_buffer_free(r);
  for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
}

/* NaN last, by the comparator's own logic: (a < b) or (b is NaN and a is
 * not), the form older JAX emitted. */
static const char nan_last_text[] =
    "HloModule nan_last\n"
    "lt_nan_last {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  lt = pred[] compare(a, b), direction=LT\n"
    "  a_nan = pred[] compare(a, a), direction=NE\n"
    "  b_nan = pred[] compare(b, b), direction=NE\n"
    "  a_num = pred[] not(a_nan)\n"
    "  nan_after = pred[] and(a_num, b_nan)\n"
    "  ROOT r = pred[] or(lt, nan_after)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[4,11] parameter(0)\n"
    "  ROOT s = f32[4,11] sort(x), dimensions={0}, to_apply=lt_nan_last\n"
    "}\n";

TEST(sort_along_the_outer_dimension_runs_a_nan_aware_comparator_as_compiled) {
  float x[44];
  const float specials[6] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY, 1e-40f};
  for (int i = 0; i < 44; i++) x[i] = i % 5 == 0 ? specials[(i / 5) % 6] : (float)((i * 37) % 13) - 6.0f;
  int64_t dims[2] = {4, 11};
  HostBuffer *arg = array(TYPE_F32, 2, dims, x);
  HostBuffer *r = expect_matches_evaluator(nan_last_text, &arg, 1, 0);
  if (r) {
    const float *s = r->data;
    for (int col = 0; col < 11; col++)
      for (int row = 1; row < 4; row++) {
        float a = s[(row - 1) * 11 + col], b = s[row * 11 + col];
        EXPECT(isnan(b) || (!isnan(a) && a <= b), "column %d: %g before %g", col, a, b);
      }
  }
  host_buffer_free(r);
  host_buffer_free(arg);
}

static const char total_order_text[] =
    "HloModule total\n"
    "lt_total {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[9] parameter(0)\n"
    "  ROOT s = f32[9] sort(x), dimensions={0}, is_stable=true, to_apply=lt_total\n"
    "}\n";

/* The kernel emitter may not have total-order compares at every build of
 * this branch: the backend must then refuse, located, never answer wrong. */
TEST(sort_with_a_total_order_comparator_matches_or_is_a_located_refusal) {
  float x[9] = {NAN, -0.0f, 0.0f, -NAN, INFINITY, -INFINITY, 1.0f, -0.0f, -1.0f};
  int64_t dims[1] = {9};
  HostBuffer *arg = array(TYPE_F32, 1, dims, x);
  Status st;
  Executable *e = compile_text(total_order_text, AXLE_BACKEND_CPU, 1, &st);
  if (!e) {
    EXPECT(st.code == STATUS_UNSUPPORTED && strstr(st.message, "the CPU backend cannot compile s (sort) yet"),
           "a located refusal: %s", st.message);
    EXPECT(st.loc.line == 9, "at the sort's line, got %d", st.loc.line);
  } else {
    HostBuffer *r = expect_matches_evaluator(total_order_text, &arg, 1, 0);
    if (r) {
      const float *s = r->data;
      EXPECT(isnan(s[0]) && signbit(s[0]) && isnan(s[8]) && !signbit(s[8]), "-NaN first, NaN last");
      EXPECT(signbit(s[3]) && signbit(s[4]) && s[5] == 0 && !signbit(s[5]), "-0, -0, +0 in order");
    }
    host_buffer_free(r);
  }
  executable_free(e);
  host_buffer_free(arg);
}

/* The same sort as XLA's optimizer leaves it: the comparison expander
 * turned the TOTALORDER compare into integer compares, and its simplifier
 * wrote the bitcast-converts as element-type-changing bitcasts. Every sort
 * XLA has optimized looks like this; the CPU backend must run it. */
static const char xla_total_order_text[] =
    "HloModule xla_total\n"
    "lt_total {\n"
    "  a = f32[] parameter(0)\n"
    "  ai = s32[] bitcast(a)\n"
    "  zero = s32[] constant(0)\n"
    "  a_negative = pred[] compare(ai, zero), direction=LT\n"
    "  magnitude = s32[] constant(2147483647)\n"
    "  a_flipped = s32[] xor(magnitude, ai)\n"
    "  a_key = s32[] select(a_negative, a_flipped, ai)\n"
    "  b = f32[] parameter(1)\n"
    "  bi = s32[] bitcast(b)\n"
    "  b_negative = pred[] compare(bi, zero), direction=LT\n"
    "  b_flipped = s32[] xor(magnitude, bi)\n"
    "  b_key = s32[] select(b_negative, b_flipped, bi)\n"
    "  ROOT lt = pred[] compare(a_key, b_key), direction=LT\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[9] parameter(0)\n"
    "  ROOT s = f32[9] sort(x), dimensions={0}, is_stable=true, to_apply=lt_total\n"
    "}\n";

TEST(sort_with_xla_bitcast_total_order_comparator_matches_the_evaluator) {
  float x[9] = {NAN, -0.0f, 0.0f, -NAN, INFINITY, -INFINITY, 1.0f, -0.0f, -1.0f};
  int64_t dims[1] = {9};
  HostBuffer *arg = array(TYPE_F32, 1, dims, x);
  HostBuffer *r = expect_matches_evaluator(xla_total_order_text, &arg, 1, 0);
  if (r) {
    const float *s = r->data;
    EXPECT(isnan(s[0]) && signbit(s[0]) && isnan(s[8]) && !signbit(s[8]), "-NaN first, NaN last");
    EXPECT(signbit(s[3]) && signbit(s[4]) && s[5] == 0 && !signbit(s[5]), "-0, -0, +0 in order");
  }
  host_buffer_free(r);
  host_buffer_free(arg);
}

static const char length_one_text[] =
    "HloModule length_one\n"
    "lt {\n"
    "  a = u8[] parameter(0)\n"
    "  b = u8[] parameter(1)\n"
    "  ROOT lt = pred[] compare(a, b), direction=LT\n"
    "}\n"
    "ENTRY main {\n"
    "  x = u8[6,1] parameter(0)\n"
    "  ROOT s = u8[6,1] sort(x), dimensions={1}, to_apply=lt\n"
    "}\n";

TEST(sort_of_slices_of_length_one_returns_them_unchanged) {
  uint8_t x[6] = {9, 255, 0, 7, 7, 128};
  int64_t dims[2] = {6, 1};
  HostBuffer *arg = array(TYPE_U8, 2, dims, x);
  HostBuffer *r = expect_matches_evaluator(length_one_text, &arg, 1, 0);
  if (r) EXPECT(memcmp(r->data, x, 6) == 0, "unchanged");
  host_buffer_free(r);
  host_buffer_free(arg);
}

/* ---- topk ---- */

static const char topk_text[] =
    "HloModule topk\n"
    "ENTRY main {\n"
    "  x = f32[3,10] parameter(0)\n"
    "  u = u32[2,7] parameter(1)\n"
    "  t = (f32[3,4], s32[3,4]) topk(x), k=4, largest=true\n"
    "  b = (f32[3,4], s32[3,4]) topk(x), k=4, largest=false\n"
    "  w = (u32[2,3], s32[2,3]) topk(u), k=3, largest=true\n"
    "  ROOT r = ((f32[3,4], s32[3,4]), (f32[3,4], s32[3,4]), (u32[2,3], s32[2,3])) tuple(t, b, w)\n"
    "}\n";

TEST(topk_orders_floats_totally_and_gives_ties_to_the_lower_index) {
  float x[30] = {1, 5, 5, NAN, -0.0f, 0.0f, 5, -INFINITY, 2, 2,
                 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
                 -NAN, -1, -1, 0.0f, -0.0f, INFINITY, -2, 4, 4, -1};
  uint32_t u[14] = {0, 4000000000u, 7, 4000000000u, 1, 2147483648u, 7, 5, 5, 5, 0, 0, 4294967295u, 3};
  int64_t dx[2] = {3, 10}, du[2] = {2, 7};
  HostBuffer *args[2] = {array(TYPE_F32, 2, dx, x), array(TYPE_U32, 2, du, u)};
  HostBuffer *r = expect_matches_evaluator(topk_text, args, 2, 0);
  if (r) {
    const int32_t *largest = r->elements[0]->elements[1]->data, *smallest = r->elements[1]->elements[1]->data;
    EXPECT(largest[0] == 3 && largest[1] == 1 && largest[2] == 2 && largest[3] == 6, "row 0: NaN, then the 5s in "
           "index order: %d %d %d %d", largest[0], largest[1], largest[2], largest[3]);
    EXPECT(largest[4] == 0 && largest[7] == 3, "row 1: all ties, indices 0..3");
    EXPECT(smallest[8] == 0 && smallest[9] == 6, "row 2: -NaN smallest, then -2 (index 6)");
  }
  host_buffer_free(r);
  for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
}

/* ---- fft ---- */

static const char fft_text[] =
    "HloModule ffts\n"
    "ENTRY main {\n"
    "  a = c64[2,7] parameter(0)\n"
    "  b = c64[13] parameter(1)\n"
    "  c = c64[3,16] parameter(2)\n"
    "  d = c128[4,1,12] parameter(3)\n"
    "  e = f32[2,11] parameter(4)\n"
    "  f = c64[2,5] parameter(5)\n"
    "  fa = c64[2,7] fft(a), fft_type=FFT, fft_length={7}\n"
    "  fb = c64[13] fft(b), fft_type=IFFT, fft_length={13}\n"
    "  fc = c64[3,16] fft(c), fft_type=FFT, fft_length={3,16}\n"
    "  fd = c128[4,1,12] fft(d), fft_type=IFFT, fft_length={4,1,12}\n"
    "  fe = c64[2,6] fft(e), fft_type=RFFT, fft_length={11}\n"
    "  ff = f32[2,9] fft(f), fft_type=IRFFT, fft_length={9}\n"
    "  fg = f32[2,8] fft(f), fft_type=IRFFT, fft_length={8}\n"
    "  ROOT r = (c64[2,7], c64[13], c64[3,16], c128[4,1,12], c64[2,6], f32[2,9], f32[2,8]) "
    "tuple(fa, fb, fc, fd, fe, ff, fg)\n"
    "}\n";

static float wave(int i) { return (float)sin(0.7 * i + 0.3) + (float)((i * 31) % 7) * 0.25f; }

TEST(fft_of_prime_composite_power_of_two_and_unit_lengths_matches_the_evaluator) {
  float a[28], b[26], c[96], e[22], f[20];
  double d[96];
  for (int i = 0; i < 28; i++) a[i] = wave(i);
  for (int i = 0; i < 26; i++) b[i] = wave(i + 100);
  for (int i = 0; i < 96; i++) c[i] = wave(i + 200), d[i] = sin(0.37 * i) * 3 - cos(1.3 * i);
  for (int i = 0; i < 22; i++) e[i] = wave(i + 300);
  for (int i = 0; i < 20; i++) f[i] = wave(i + 400);
  int64_t da[2] = {2, 7}, db[1] = {13}, dc[2] = {3, 16}, dd[3] = {4, 1, 12}, de[2] = {2, 11}, df[2] = {2, 5};
  HostBuffer *args[6] = {array(TYPE_C64, 2, da, a), array(TYPE_C64, 1, db, b), array(TYPE_C64, 2, dc, c),
                         array(TYPE_C128, 3, dd, d), array(TYPE_F32, 2, de, e), array(TYPE_C64, 2, df, f)};
  HostBuffer *r = expect_matches_evaluator(fft_text, args, 6, 2e-6);
  host_buffer_free(r);
  /* c128 to double precision: the same module's fd leaf, at a tight bound. */
  Status st;
  Executable *ref = compile_text(fft_text, AXLE_BACKEND_INTERP, 1, &st);
  Executable *cpu = compile_text(fft_text, AXLE_BACKEND_CPU, 1, &st);
  HostBuffer *want = ref ? executable_run(ref, args, 6, &st) : NULL;
  HostBuffer *got = cpu ? executable_run(cpu, args, 6, &st) : NULL;
  if (want && got) expect_leaf_close(got->elements[3], want->elements[3], 1e-13, 3);
  /* One plan and one host algorithm (src/ir/fft_plan.c): the same bytes. */
  EXPECT(want && got && same_bytes(got, want), "the CPU's fft gives the evaluator's bytes for every length");
  host_buffer_free(want);
  host_buffer_free(got);
  executable_free(ref);
  executable_free(cpu);
  for (int i = 0; i < 6; i++) host_buffer_free(args[i]);
}

/* ---- linear algebra ---- */

static const char linalg_text[] =
    "HloModule linalg\n"
    "ENTRY main {\n"
    "  a = f64[3,3,3] parameter(0)\n"
    "  z = c128[1,1] parameter(1)\n"
    "  t = f32[2,4,4] parameter(2)\n"
    "  b = f32[2,4,3] parameter(3)\n"
    "  lo = f64[3,3,3] cholesky(a), lower=true\n"
    "  up = f64[3,3,3] cholesky(a), lower=false\n"
    "  one = c128[1,1] cholesky(z), lower=true\n"
    "  s1 = f32[2,4,3] triangular-solve(t, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE\n"
    "  s2 = f32[2,4,3] triangular-solve(t, b), left_side=true, lower=false, unit_diagonal=true, transpose_a=TRANSPOSE\n"
    "  s3 = f32[2,3,4] transpose(b), dimensions={0,2,1}\n"
    "  s4 = f32[2,3,4] triangular-solve(t, s3), left_side=false, lower=true, transpose_a=ADJOINT\n"
    "  ROOT r = (f64[3,3,3], f64[3,3,3], c128[1,1], f32[2,4,3], f32[2,4,3], f32[2,3,4]) "
    "tuple(lo, up, one, s1, s2, s4)\n"
    "}\n";

TEST(cholesky_and_triangular_solve_match_the_evaluator_including_non_definite_input) {
  /* Batch 0 and 2 positive definite; batch 1 indefinite (all NaN). */
  double a[27] = {4, 2, -2, 2, 10, 1, -2, 1, 6,
                  1, 2, 0, 2, 1, 0, 0, 0, 1,
                  9, -3, 3, -3, 5, 1, 3, 1, 11};
  double z[2] = {2.25, 0};
  float t[32], b[24];
  for (int i = 0; i < 32; i++) t[i] = (i % 16) % 5 == 0 ? 3.0f + (float)(i % 3) : wave(i) * 0.5f;
  for (int i = 0; i < 24; i++) b[i] = wave(i + 50);
  int64_t da[3] = {3, 3, 3}, dz[2] = {1, 1}, dt[3] = {2, 4, 4}, db[3] = {2, 4, 3};
  HostBuffer *args[4] = {array(TYPE_F64, 3, da, a), array(TYPE_C128, 2, dz, z), array(TYPE_F32, 3, dt, t),
                         array(TYPE_F32, 3, db, b)};
  HostBuffer *r = expect_matches_evaluator(linalg_text, args, 4, 1e-6);
  if (r) {
    const double *lo = r->elements[0]->data;
    EXPECT(lo[0] == 2 && isnan(lo[9]) && isnan(lo[17]), "sqrt(4) = 2; the indefinite batch is NaN");
    EXPECT(((const double *)r->elements[2]->data)[0] == 1.5, "a 1x1 factor is the plain sqrt");
  }
  host_buffer_free(r);
  for (int i = 0; i < 4; i++) host_buffer_free(args[i]);
}

static const char getrf_text[] =
    "HloModule getrf\n"
    "ENTRY main {\n"
    "  a = f64[2,4,3] parameter(0)\n"
    "  s = f32[3,3] parameter(1)\n"
    "  l = (f64[2,4,3], s32[2,3], s32[2]) custom-call(a), custom_call_target=\"lapack_dgetrf_ffi\", "
    "api_version=API_VERSION_TYPED_FFI\n"
    "  m = (f32[3,3], s32[3], s32[]) custom-call(s), custom_call_target=\"lapack_sgetrf_ffi\", "
    "api_version=API_VERSION_TYPED_FFI\n"
    "  ROOT r = ((f64[2,4,3], s32[2,3], s32[2]), (f32[3,3], s32[3], s32[])) tuple(l, m)\n"
    "}\n";

TEST(getrf_pivots_on_the_largest_and_reports_the_first_zero_pivot) {
  double a[24] = {1, 2, 3, 4, 5, 6, 7, 8, 10, -9, 0, 1,
                  0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4};  /* batch 1: two zero columns */
  float s[9] = {2, 4, 6, 1, 2, 3, 0, 1, 5};             /* rank 2: a zero pivot at column 3 */
  int64_t da[3] = {2, 4, 3}, ds[2] = {3, 3};
  HostBuffer *args[2] = {array(TYPE_F64, 3, da, a), array(TYPE_F32, 2, ds, s)};
  HostBuffer *r = expect_matches_evaluator(getrf_text, args, 2, 1e-12);
  if (r) {
    const int32_t *ipiv = r->elements[0]->elements[1]->data, *info = r->elements[0]->elements[2]->data;
    EXPECT(ipiv[0] == 4 && info[0] == 0, "batch 0 pivots on -9 (row 4), info 0: %d %d", ipiv[0], info[0]);
    EXPECT(info[1] == 1, "batch 1: the first zero pivot is column 1, got %d", info[1]);
    EXPECT(*(const int32_t *)r->elements[1]->elements[2]->data == 3, "the f32 matrix: info 3");
  }
  host_buffer_free(r);
  for (int i = 0; i < 2; i++) host_buffer_free(args[i]);
}

/* ---- layouts ---- */

/* JAX asks LAPACK for column-major matrices ({0,1}); every routine sees
 * its arrays row-major through copies around the call. */
static const char layouts_text[] =
    "HloModule layouts\n"
    "lt {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT r = pred[] compare(a, b), direction=LT\n"
    "}\n"
    "ENTRY main {\n"
    "  a = f32[5,5]{0,1} parameter(0)\n"
    "  lu = (f32[5,5]{0,1}, s32[5]{0}, s32[]) custom-call(a), custom_call_target=\"lapack_sgetrf_ffi\", "
    "operand_layout_constraints={f32[5,5]{0,1}}, api_version=API_VERSION_TYPED_FFI\n"
    "  x = f32[4,6]{0,1} parameter(1)\n"
    "  s = f32[4,6]{0,1} sort(x), dimensions={1}, to_apply=lt\n"
    "  c = c64[3,8]{0,1} parameter(2)\n"
    "  f = c64[3,8]{0,1} fft(c), fft_type=FFT, fft_length={8}\n"
    "  ROOT t = ((f32[5,5]{0,1}, s32[5]{0}, s32[]), f32[4,6]{0,1}, c64[3,8]{0,1}) tuple(lu, s, f)\n"
    "}\n";

TEST(routines_on_column_major_arrays_compute_on_the_logical_arrays) {
  float a[25], x[24], c[48];
  for (int i = 0; i < 25; i++) a[i] = wave(i + 500);
  for (int i = 0; i < 24; i++) x[i] = wave(i + 600);
  for (int i = 0; i < 48; i++) c[i] = wave(i + 700);
  int64_t da[2] = {5, 5}, dx[2] = {4, 6}, dc[2] = {3, 8};
  HostBuffer *args[3] = {array(TYPE_F32, 2, da, a), array(TYPE_F32, 2, dx, x), array(TYPE_C64, 2, dc, c)};
  HostBuffer *r = expect_matches_evaluator(layouts_text, args, 3, 1e-5);
  if (r) {
    const float *s = r->elements[1]->data;
    for (int row = 0; row < 4; row++)
      for (int j = 1; j < 6; j++) EXPECT(s[row * 6 + j - 1] <= s[row * 6 + j], "row %d sorted at %d", row, j);
  }
  host_buffer_free(r);
  for (int i = 0; i < 3; i++) host_buffer_free(args[i]);
}

int main(void) {
  RUN(sort_keeps_equal_keys_in_input_order_and_moves_every_operand);
  RUN(sort_along_the_outer_dimension_runs_a_nan_aware_comparator_as_compiled);
  RUN(sort_with_a_total_order_comparator_matches_or_is_a_located_refusal);
  RUN(sort_with_xla_bitcast_total_order_comparator_matches_the_evaluator);
  RUN(sort_of_slices_of_length_one_returns_them_unchanged);
  RUN(topk_orders_floats_totally_and_gives_ties_to_the_lower_index);
  RUN(fft_of_prime_composite_power_of_two_and_unit_lengths_matches_the_evaluator);
  RUN(cholesky_and_triangular_solve_match_the_evaluator_including_non_definite_input);
  RUN(getrf_pivots_on_the_largest_and_reports_the_first_zero_pivot);
  RUN(routines_on_column_major_arrays_compute_on_the_logical_arrays);
  return test_summary();
}
