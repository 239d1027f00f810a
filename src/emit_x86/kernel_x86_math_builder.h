/* A small builder for the math functions' scalar code: each value of a
 * math program (src/ir/kernel/math_algorithms*.c, run by the x86 target
 * in kernel_x86_math_program.c) is an 8-byte stack slot of the kernel's
 * math area, and each builder call emits the few instructions of one
 * primitive (load into a scratch register, operate, store), so that it
 * computes the bits of the C values target.
 *
 * Types live in the caller's head, as in the C: f32 and i32 values use a
 * slot's low 4 bytes, f64 and u64 values all 8; a reinterpretation of bits
 * (bits_from_f32, f32_from_bits) is the same slot. Masks (the C's int
 * conditions) are i32 0 or 1.
 *
 * math_fma_f32 and math_fma_f64 are one fused rounding at every ISA level: vfmadd
 * where the CPU has FMA, else an exact emulation (docs/math.md, "Without
 * FMA"). Only scratch registers are used (xmm13..15, rax, rcx, rdx). */
#ifndef AXLE_EMIT_X86_KERNEL_X86_MATH_BUILDER_H
#define AXLE_EMIT_X86_KERNEL_X86_MATH_BUILDER_H

#include "emit_x86/kernel_x86_internal.h"

typedef int MathValue; /* a slot of the math area */

/* Vector mode: registers hold the values instead of their slots. At
 * avx512 they are zmm16..27 (the kernel's own values use zmm0..15, the
 * row kernels' partial results the last few; kernel_x86_internal.h); at
 * avx2 the ymm registers of 0..12 that hold no kernel value live across
 * the op (kernel_x86_math.c picks them). A function is
 * built twice: a dry run into a scratch buffer records, for each value
 * made (an instance: a slot is reused after a scope ends), the number of
 * values made before its last use; the real run gives each new value a
 * register whose owner is past its last use, else its slot (linear scan
 * over the straight-line code: its only jumps skip forward). Constants
 * are 4 bytes in a pool after the code, read by broadcast (no store per
 * trip of the loop). Code that reads single lanes
 * (math_lanes_element) keeps every value in its slot. */
enum { MATH_HOME_FIRST = 16, MATH_HOME_COUNT = 12 };
typedef struct MathHomes {
  bool assigning;       /* false: the dry run, recording last uses */
  bool needs_memory;    /* the dry run read single lanes */
  int instance_count, instance_capacity;
  int *last_use;        /* per instance: instance_count at its last use */
  int8_t *home;         /* per instance: its zmm number, or -1 (its slot) */
  int slot_instance[KX_VECTOR_MATH_SLOTS * 8 / 32];
  int8_t registers[MATH_HOME_COUNT]; /* the vector registers it may use */
  int register_count;
  int owner[MATH_HOME_COUNT]; /* the instance in each register, or -1 */
} MathHomes;

typedef struct MathBuilder {
  KernelX86 *x;
  int width; /* 0: scalar slots; 32 or 64: vector mode (kernel_x86_math_lanes.c) */
  int first_slot; /* scalar mode: where its slots start in the math area (8-byte units) */
  /* Vector mode: the slots that hold a constant, as its 4 bytes only. */
  bool lane_constant[KX_VECTOR_MATH_SLOTS * 8 / 32];
  X86Label lane_constant_label[KX_VECTOR_MATH_SLOTS * 8 / 32]; /* its 4 bytes in the pool after the code */
  int next_slot;
  int peak_slots; /* the most slots live at once */
  MathHomes *homes; /* vector mode: register homes, or NULL (every value in its slot) */
  /* avx512: the mask value whose lanes k1 still holds (the compare that
   * made it was the last write of k1), or -1. */
  MathValue k1_mask;
  /* avx2: the mask value a compare made last (all ones or zero in each
   * lane, so vblendvps reads it as it is), or -1. */
  MathValue compare_mask;
} MathBuilder;

/* ---- kernel_x86_math_values.c: the builder's state and its values'
 * homes (slots, vector mode's registers), under both the operations and
 * their vector mode ---- */
void math_builder_begin(MathBuilder *b, KernelX86 *x);
/* Vector mode: every value is `width` bytes of f32 or i32 lanes. */
void math_builder_begin_lanes(MathBuilder *b, KernelX86 *x, int width);
/* A scalar builder for one lane's work inside vector mode: its slots lie
 * past the vector ones. */
void math_builder_begin_nested(MathBuilder *nested, MathBuilder *b);
/* Whether the program stayed inside KX_MATH_SLOTS (else st is set). */
bool math_builder_end(MathBuilder *b);
X86Operand math_slot_operand(const MathBuilder *b, MathValue v, int size);
MathValue math_value_new(MathBuilder *b);
/* A value that keeps its slot even with register homes (a constant). */
MathValue math_value_new_in_slot(MathBuilder *b);
/* Vector mode: v's register (its number) when it has one, else -1; a use of v. */
int math_value_register(const MathBuilder *b, MathValue v);
/* Vector mode, real run: whether v has a register and the op being built
 * reads it for the last time; then math_value_take_register gives the
 * op's result (made last) v's register, to be written in place. */
bool math_value_dies_here(const MathBuilder *b, MathValue v);
int math_value_take_register(MathBuilder *b, MathValue v, MathValue from);
/* Vector mode, real run: nothing reads v after the op that made it. */
bool math_value_unread(const MathBuilder *b, MathValue v);
/* A new instance for slot v (a scope's result moving into its first slot). */
void math_value_renew(MathBuilder *b, MathValue v);
/* A scope: the values made after math_scope_begin die at math_scope_end
 * (kernel_x86_math_builder.c), all but `result`, which moves to the
 * scope's first slot (returned). */
int math_scope_begin(const MathBuilder *b);

/* ---- kernel_x86_math_builder.c: the operations, each one primitive;
 * in vector mode each hands its work to math_lanes_* ---- */
MathValue math_scope_end(MathBuilder *b, int scope, MathValue result);
MathValue math_input(MathBuilder *b, X86Operand input, bool f64);
void math_output(MathBuilder *b, MathValue v, X86Reg into, bool f64);

MathValue math_constant_f32(MathBuilder *b, float c);
MathValue math_constant_f64(MathBuilder *b, double c);
MathValue math_constant_i32(MathBuilder *b, int32_t c);
MathValue math_constant_u64(MathBuilder *b, uint64_t c);

/* f32 and f64 arithmetic, each one IEEE operation; min is "a < c ? a : c". */
MathValue math_add_f32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_sub_f32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_mul_f32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_div_f32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_min_f32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_max_f32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_sqrt_f32(MathBuilder *b, MathValue a);
MathValue math_fma_f32(MathBuilder *b, MathValue a, MathValue c, MathValue d);
MathValue math_add_f64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_sub_f64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_mul_f64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_div_f64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_min_f64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_max_f64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_sqrt_f64(MathBuilder *b, MathValue a);
MathValue math_fma_f64(MathBuilder *b, MathValue a, MathValue c, MathValue d);
MathValue math_abs_f32(MathBuilder *b, MathValue a);
MathValue math_negate_f32(MathBuilder *b, MathValue a);
MathValue math_copysign_f32(MathBuilder *b, MathValue a, MathValue sign);
MathValue math_abs_f64(MathBuilder *b, MathValue a);
MathValue math_negate_f64(MathBuilder *b, MathValue a);
MathValue math_copysign_f64(MathBuilder *b, MathValue a, MathValue sign);
MathValue math_round_f32(MathBuilder *b, MathValue a, int mode); /* roundss's immediate */
MathValue math_round_f64(MathBuilder *b, MathValue a, int mode);

/* Comparisons, i32 masks; false when unordered, except not_equal. */
MathValue math_less_f32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_less_equal_f32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_equal_f32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_is_nan_f32(MathBuilder *b, MathValue a);
MathValue math_less_f64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_less_equal_f64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_equal_f64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_is_nan_f64(MathBuilder *b, MathValue a);

/* Conversions: i32/i64 from floats truncate (cvtt*). */
MathValue math_f32_from_i32(MathBuilder *b, MathValue a);
MathValue math_i32_from_f32(MathBuilder *b, MathValue a);
MathValue math_f64_from_f32(MathBuilder *b, MathValue a);
MathValue math_f32_from_f64(MathBuilder *b, MathValue a);
MathValue math_f64_from_i32(MathBuilder *b, MathValue a);
MathValue math_i64_from_f64(MathBuilder *b, MathValue a);
MathValue math_i32_from_f64_truncated(MathBuilder *b, MathValue a);
MathValue math_u64_from_u32(MathBuilder *b, MathValue a);
MathValue math_f64_from_i64(MathBuilder *b, MathValue a);
MathValue math_u64_sign_extended(MathBuilder *b, MathValue a); /* i32 -> i64 */

/* Integer lanes: 32-bit (i32) and 64-bit (u64) two's complement. */
MathValue math_add_i32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_sub_i32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_mul_i32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_and_i32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_or_i32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_xor_i32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_shift_left_i32(MathBuilder *b, MathValue a, int count);
MathValue math_shift_right_u32(MathBuilder *b, MathValue a, int count);
MathValue math_shift_right_i32(MathBuilder *b, MathValue a, int count);
MathValue math_less_i32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_equal_i32(MathBuilder *b, MathValue a, MathValue c);
MathValue math_add_u64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_sub_u64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_and_u64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_or_u64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_shift_left_u64(MathBuilder *b, MathValue a, int count);
MathValue math_shift_right_u64(MathBuilder *b, MathValue a, int count);
MathValue math_shift_right_i64(MathBuilder *b, MathValue a, int count);
MathValue math_multiply_wide_u32(MathBuilder *b, MathValue a, MathValue c); /* u32 x u32 -> u64 */
/* u64 x u64: the high 64 bits of the product, the low ones in *low */
MathValue math_multiply_high_u64(MathBuilder *b, MathValue a, MathValue c, MathValue *low);
MathValue math_mul_u64(MathBuilder *b, MathValue a, MathValue c);
MathValue math_less_u64(MathBuilder *b, MathValue a, MathValue c); /* unsigned */
MathValue math_less_i64(MathBuilder *b, MathValue a, MathValue c); /* signed */
MathValue math_equal_u64(MathBuilder *b, MathValue a, MathValue c);

/* mask ? a : c, for values of any type (all 8 bytes move). */
MathValue math_select_value(MathBuilder *b, MathValue mask, MathValue a, MathValue c);
MathValue math_not_mask(MathBuilder *b, MathValue mask);

/* A jump over the code emitted until math_skip_end when `mask` is
 * nonzero: for a side of a select that this mask then discards (its
 * slots hold stale bits when skipped, and only that select may read them).
 * The bits are the C's; only the work is saved. In vector mode: when
 * every lane's mask is nonzero. */
X86Label math_skip_if(MathBuilder *b, MathValue mask);
void math_skip_end(MathBuilder *b, X86Label skip);

/* c[0] + c[1] v + ..., Horner's rule with fma. */
MathValue math_polynomial_f32(MathBuilder *b, const float *c, int count, MathValue v);
MathValue math_polynomial_f64(MathBuilder *b, const double *c, int count, MathValue v);

/* kernel_x86_math_lanes.c: the vector mode's operations, which the
 * operations above call when b->width is set. */
void math_lanes_move(MathBuilder *b, MathValue to, MathValue from);
MathValue math_lanes_scope_end(MathBuilder *b, int scope, MathValue result);
MathValue math_lanes_input(MathBuilder *b, X86Operand input);
void math_lanes_output(MathBuilder *b, MathValue v, int into);
MathValue math_lanes_unsupported(MathBuilder *b, const char *what);
MathValue math_lanes_constant(MathBuilder *b, uint32_t bits);
MathValue math_lanes_binary(MathBuilder *b, X86Mnemonic m, MathValue a, MathValue c);
MathValue math_lanes_bitwise(MathBuilder *b, char op, MathValue a, MathValue c); /* '&', '|', '^' */
MathValue math_lanes_unary(MathBuilder *b, X86Mnemonic m, MathValue a);
MathValue math_lanes_round(MathBuilder *b, MathValue a, int mode);
MathValue math_lanes_shift(MathBuilder *b, X86Mnemonic m, MathValue a, int count);
MathValue math_lanes_fma(MathBuilder *b, MathValue a, MathValue c, MathValue d);
MathValue math_lanes_compare(MathBuilder *b, MathValue a, MathValue c, int predicate);
MathValue math_lanes_integer_compare(MathBuilder *b, X86Mnemonic m, MathValue a, MathValue c);
MathValue math_lanes_select(MathBuilder *b, MathValue mask, MathValue a, MathValue c);
MathValue math_lanes_value_new(MathBuilder *b);
/* The 4-byte element `index` (a register holding a lane number) of v. */
X86Operand math_lanes_element(const MathBuilder *b, MathValue v, X86Reg index);
/* The jump of math_skip_if: taken when every lane of mask is nonzero
 * (vmovmskps at avx2, kortestw at avx512). */
void math_lanes_skip_if_all(MathBuilder *b, MathValue mask, X86Label skip);

/* ---- The math functions: math_<name>_f32 is mathref_<name>f, and
 * math_<name>_f64 is mathref_<name> ---- */

/* kernel_x86_math_program.c: the algorithms of math_algorithms.c */
MathValue math_exp_f32(MathBuilder *b, MathValue x);
MathValue math_exp_f64(MathBuilder *b, MathValue x);
MathValue math_expm1_f32(MathBuilder *b, MathValue x);
MathValue math_expm1_f64(MathBuilder *b, MathValue x);
MathValue math_log_f32(MathBuilder *b, MathValue x);
MathValue math_log_f64(MathBuilder *b, MathValue x);
MathValue math_log1p_f32(MathBuilder *b, MathValue x);
MathValue math_log1p_f64(MathBuilder *b, MathValue x);
MathValue math_tanh_f32(MathBuilder *b, MathValue x);
MathValue math_tanh_f64(MathBuilder *b, MathValue x);
MathValue math_logistic_f32(MathBuilder *b, MathValue x);
MathValue math_logistic_f64(MathBuilder *b, MathValue x);
MathValue math_erf_f32(MathBuilder *b, MathValue x);
MathValue math_erf_f64(MathBuilder *b, MathValue x);
MathValue math_pow_f32(MathBuilder *b, MathValue x, MathValue y);
MathValue math_pow_f64(MathBuilder *b, MathValue x, MathValue y);
MathValue math_cbrt_f32(MathBuilder *b, MathValue x);
MathValue math_cbrt_f64(MathBuilder *b, MathValue x);
MathValue math_rsqrt_f32(MathBuilder *b, MathValue x);
MathValue math_rsqrt_f64(MathBuilder *b, MathValue x);
MathValue math_atan2_f32(MathBuilder *b, MathValue y, MathValue x);
MathValue math_atan2_f64(MathBuilder *b, MathValue y, MathValue x);
MathValue math_atan_f32(MathBuilder *b, MathValue x);
MathValue math_atan_f64(MathBuilder *b, MathValue x);
MathValue math_asin_f32(MathBuilder *b, MathValue x);
MathValue math_asin_f64(MathBuilder *b, MathValue x);
MathValue math_acos_f32(MathBuilder *b, MathValue x);
MathValue math_acos_f64(MathBuilder *b, MathValue x);
MathValue math_sinh_f32(MathBuilder *b, MathValue x);
MathValue math_sinh_f64(MathBuilder *b, MathValue x);
MathValue math_cosh_f32(MathBuilder *b, MathValue x);
MathValue math_cosh_f64(MathBuilder *b, MathValue x);
MathValue math_asinh_f32(MathBuilder *b, MathValue x);
MathValue math_asinh_f64(MathBuilder *b, MathValue x);
MathValue math_acosh_f32(MathBuilder *b, MathValue x);
MathValue math_acosh_f64(MathBuilder *b, MathValue x);
MathValue math_atanh_f32(MathBuilder *b, MathValue x);
MathValue math_atanh_f64(MathBuilder *b, MathValue x);
MathValue math_sin_f32(MathBuilder *b, MathValue x);
MathValue math_sin_f64(MathBuilder *b, MathValue x);
MathValue math_cos_f32(MathBuilder *b, MathValue x);
MathValue math_cos_f64(MathBuilder *b, MathValue x);
MathValue math_tan_f32(MathBuilder *b, MathValue x);
MathValue math_tan_f64(MathBuilder *b, MathValue x);

#endif
