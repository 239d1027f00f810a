/* LAPACK's routines as JAX's CPU lowering calls them for jnp.linalg:
 * custom-calls named lapack_<t><routine>_ffi (t = s, d, c, z for f32, f64,
 * c64, c128), with the routine's options in backend_config
 * ({uplo = 76 : ui8}, the ASCII code of LAPACK's character argument) and
 * the matrices column-major (operand_layout_constraints {0,1}). A layout is
 * how the bytes lie, not what the array is, so the routines here see each
 * matrix row-major, as every axle array is read.
 *
 * Shared by the evaluator (src/ir/eval/eval_custom_call.c) and the CPU
 * backend (src/emit_x86/cpu_linalg.c): lapack_call.c reads an instruction
 * into a LapackCall (which routine, which options, the shapes checked) and
 * runs one batch element of it; lapack_routines.c holds the algorithms, in
 * double complex for every element type (a real matrix stays real through
 * each of them, bit for bit: its imaginary parts stay zero). Each caller
 * only loads and stores its own memory. getrf (jnp.linalg.lu) predates
 * this file and keeps its real-only routine (linalg_lu_factor, ir.h). */
#ifndef AXLE_IR_LAPACK_H
#define AXLE_IR_LAPACK_H

#include "ir.h"

/* double _Complex, spelled without <complex.h>, whose `complex` macro
 * would clash with includers' own names. */
typedef double _Complex LapackValue;

typedef enum LapackRoutine {
  LAPACK_GETRF,   /* jnp.linalg.lu: run by linalg_lu_factor */
  LAPACK_POTRF,   /* jnp.linalg.cholesky */
  LAPACK_GEQRF,   /* jnp.linalg.qr: the reflectors */
  LAPACK_ORGQR,   /* jnp.linalg.qr: q from the reflectors (ungqr for complex) */
  LAPACK_SYEVD,   /* jnp.linalg.eigh (heevd for complex) */
  LAPACK_GESDD,   /* jnp.linalg.svd */
  LAPACK_TRSM,    /* jax.scipy.linalg.solve_triangular */
  LAPACK_REFUSED, /* one JAX emits that axle does not run: named in the refusal */
} LapackRoutine;

enum { LAPACK_MAX_OPERANDS = 3, LAPACK_MAX_RESULTS = 8 };

/* One custom-call, read and checked. Per batch element, operand i holds
 * operand_count[i] values (0 batch stride for the scalar alpha of trsm's
 * older form: operand_batched[i] false) and result leaf j result_count[j]
 * values of result_type[j] (written by batch element 0 only when
 * result_batched[j] is false: the workspace leaves of JAX's 2024 forms,
 * which come out as zeros); info_leaf is the s32 info leaf or -1. */
typedef struct LapackCall {
  LapackRoutine routine;
  ElementType type;                  /* the matrices' element type */
  int64_t batches;
  int64_t m, n, k;                   /* a is m x n; k: taus or singular values */
  int64_t rows, cols;                /* trsm: b is rows x cols */
  int64_t u_cols, vt_rows;           /* gesdd: u is m x u_cols, vt vt_rows x n */
  bool lower, left_side, unit_diagonal, vectors;
  char transpose;                    /* trsm: 'N', 'T' or 'C' */
  char svd_mode;                     /* gesdd: 'A', 'S' or 'N' */
  int operand_count, result_count, info_leaf;
  int64_t operand_values[LAPACK_MAX_OPERANDS], result_values[LAPACK_MAX_RESULTS];
  bool operand_batched[LAPACK_MAX_OPERANDS], result_batched[LAPACK_MAX_RESULTS];
  ElementType result_type[LAPACK_MAX_RESULTS];
} LapackCall;

/* ------------------------------------------------------------ lapack_call.c */
/* Reads a custom-call: false with a message (STATUS_UNSUPPORTED for a
 * target axle does not run, naming the JAX function behind a LAPACK one;
 * STATUS_VERIFY_ERROR for shapes or options that do not fit the routine).
 * getrf is named (LAPACK_GETRF) but its shapes are its callers' to check. */
bool lapack_call_read(const Instruction *inst, LapackCall *call, Status *st);
/* One batch element: operands[i] and results[j] point at its values
 * (row-major; real leaves hold real values); the info leaf's value is
 * returned (0 when there is none). */
int32_t lapack_call_run(const LapackCall *call, const LapackValue *const *operands, LapackValue *const *results);

/* ------------------------------------------------------- lapack_routines.c
 * Each on row-major matrices in place, as LAPACK defines the routine. */
/* Cholesky a = L L^H (lower) or U^H U, reading and writing only that
 * triangle; info = first column whose pivot is not positive (or NaN),
 * where the factorization stops, as potf2 does. */
int32_t lapack_potrf(LapackValue *a, int64_t n, bool lower);
/* Householder QR of m x n a: R on and above the diagonal, the reflectors
 * v (v[0] = 1 implied) below it, tau[min(m,n)], by larfg's rule. */
void lapack_geqrf(LapackValue *a, int64_t m, int64_t n, LapackValue *tau);
/* The first n columns of H(0) ... H(k-1) (k reflectors of geqrf), n <= m. */
void lapack_orgqr(LapackValue *a, int64_t m, int64_t n, int64_t k, const LapackValue *tau);
/* op(a) x = b or x op(a) = b (left_side false) in place in b (rows x cols);
 * a is m x m, read in its `lower` triangle, 1 on the diagonal when
 * unit_diagonal; op is 'N', 'T' or 'C' (conjugate transpose). */
void lapack_trsm(const LapackValue *a, LapackValue *b, int64_t rows, int64_t cols, bool left_side, bool lower,
                 char transpose, bool unit_diagonal);
/* Eigenvalues w (ascending) of the Hermitian n x n matrix whose `lower` (or
 * upper) triangle a holds, and, when vectors, the eigenvectors as the
 * columns of a. Returns info. */
int32_t lapack_heev(LapackValue *a, int64_t n, bool lower, bool vectors, double *w);
/* Singular values s (descending, min(m,n)) of m x n a, and u (m x u_cols)
 * and vt (vt_rows x n) when u_cols, vt_rows > 0. Returns info. Both
 * allocate their scratch (mem_calloc). */
int32_t lapack_gesdd(const LapackValue *a, int64_t m, int64_t n, double *s, LapackValue *u, int64_t u_cols,
                     LapackValue *vt, int64_t vt_rows);

#endif
