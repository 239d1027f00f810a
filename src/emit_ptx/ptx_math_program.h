/* The math algorithms of src/ir/kernel/math_algorithms*.c with PTX
 * primitives (ptx_math_program.c): each takes an f32 (f64) register and
 * returns a fresh one. ptx_math.c calls them. */
#ifndef AXLE_EMIT_PTX_PTX_MATH_PROGRAM_H
#define AXLE_EMIT_PTX_PTX_MATH_PROGRAM_H

#include "emit_ptx/ptx_builder.h"

PtxReg ptx_math_exp_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_exp_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_expm1_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_expm1_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_log_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_log_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_log1p_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_log1p_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_logistic_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_logistic_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_tanh_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_tanh_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_sinh_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_sinh_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_cosh_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_cosh_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_asinh_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_asinh_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_acosh_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_acosh_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_atanh_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_atanh_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_rsqrt_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_rsqrt_f64(PtxBuilder *b, PtxReg x);

PtxReg ptx_math_atan2_f32(PtxBuilder *b, PtxReg y, PtxReg x);
PtxReg ptx_math_atan2_f64(PtxBuilder *b, PtxReg y, PtxReg x);
PtxReg ptx_math_atan_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_atan_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_asin_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_asin_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_acos_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_acos_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_sin_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_sin_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_cos_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_cos_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_tan_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_tan_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_erf_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_erf_f64(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_pow_f32(PtxBuilder *b, PtxReg x, PtxReg y);
PtxReg ptx_math_pow_f64(PtxBuilder *b, PtxReg x, PtxReg y);
PtxReg ptx_math_cbrt_f32(PtxBuilder *b, PtxReg x);
PtxReg ptx_math_cbrt_f64(PtxBuilder *b, PtxReg x);

#endif
