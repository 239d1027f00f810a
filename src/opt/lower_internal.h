/* What the lowering's files share (lower.c walks a fusion; lower_gather.c
 * and lower_window.c add the index arithmetic of gather, reduce-window and
 * select-and-scatter; lower_scatter.c the combiners of scatter).
 *
 * lower_emit(L, inst, index) is the walk: the kernel value of inst's element at
 * a logical index (one s64 value per dimension), -1 after lower_fail() has set
 * L->st. The k_* helpers build s64 index arithmetic; constants and loop
 * indices are made once, in PRE. */
#ifndef AXLE_OPT_LOWER_INTERNAL_H
#define AXLE_OPT_LOWER_INTERNAL_H

#include "opt/lower.h"

typedef struct MemoEntry {
  const Instruction *inst;
  KernelBlock block;
  int phase;
  int rank;
  int index[AXLE_MAX_RANK];
  int value;
} MemoEntry;

typedef struct Lower {
  Kernel *k;
  const Instruction *origin;      /* the fusion, or the single op */
  const Computation *body;        /* the fused computation; NULL for a single op */
  KernelBlock block;
  int phase;                      /* of the REDUCE or ROW block being emitted */
  MemoEntry *memo;
  int memo_count, memo_capacity;
  /* Reduce kernels: the reduces at the root and their first accumulator. */
  const Instruction *reduces[AXLE_MAX_RANK];
  int acc_base[AXLE_MAX_RANK];
  int reduce_phase[AXLE_MAX_RANK];
  int reduce_count;
  /* The kernel's outputs that are elements of a variadic reduce: output o
   * stores element output_element[o] of it (-1: the whole value). */
  int output_element[AXLE_MAX_RANK];
  /* lower_epilogue: an instruction of the body computed elsewhere (a dot),
   * read from input `computed_input` like a parameter. */
  const Instruction *computed;
  int computed_input;
  Status *st;
} Lower;

/* ---------------------------------------------------------------- lower.c */
int lower_fail(Lower *L, const Instruction *inst, const char *why);
void lower_copy_index(int *dst, const int *src, int rank);
int lower_add_op(Lower *L, KernelOp op, const Instruction *origin);
int lower_k_s64(Lower *L, int64_t v);
int lower_k_index(Lower *L, KernelOpcode kop, int dim);
int lower_k_hlo(Lower *L, Opcode code, ElementType type, int a, int b, int c, const Instruction *origin);
int lower_k_compare(Lower *L, CompareDirection dir, int a, int b);
int lower_k_add(Lower *L, int a, int b);
int lower_k_sub(Lower *L, int a, int b);
int lower_k_mul(Lower *L, int a, int b);
int lower_k_div(Lower *L, int a, int b);
int lower_k_rem(Lower *L, int a, int b);
int lower_k_and(Lower *L, int a, int b);
int lower_k_clamp(Lower *L, int v, int64_t lo, int64_t hi);
int lower_k_clamped_start(Lower *L, int value, ElementType type, int64_t hi);
int lower_k_select(Lower *L, ElementType type, int p, int a, int b);
int lower_emit(Lower *L, const Instruction *inst, const int *index);
bool lower_emit_scalar_call(Lower *L, const Computation *c, const int *args, int *results, int result_count);
void lower_emit_store(Lower *L, int buffer, int value, const int *index, int rank, const Instruction *origin);
bool lower_loop(Lower *L, const Instruction **outputs, int count);
/* The end of every lowering: frees the memo; on failure (ok false or an
 * error in L->st) frees the kernel and returns NULL with L->st set ("cannot
 * lower NAME" when nothing more precise was said), else puts the kernel's
 * ops in the order they run and returns it. */
Kernel *lower_finish(Lower *L, const char *name, bool ok);
bool lower_emit_initial_values(Lower *L);

/* ---------------------------------------------------------- lower_gather.c */
/* gather's element at index: start indices loaded and clamped as HLO does. */
int lower_emit_gather(Lower *L, const Instruction *inst, const int *index);

/* ---------------------------------------------------------- lower_window.c */
/* A reduce-window alone: a reduce kernel over the window's dimensions. */
bool lower_reduce_window(Lower *L);

#endif
