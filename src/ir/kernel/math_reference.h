/* The inline f32 math functions, written once in C as the definition that
 * the code generators transcribe (emit_x86 into SIMD lanes, emit_ptx into
 * PTX): generated code never calls libm.
 *
 * Each function is branch-free: every lane runs the same sequence of IEEE
 * operations (fmaf is the hardware FMA), and where a scalar program would
 * branch, this code computes both sides and selects. A range reduction, a
 * polynomial from one coefficient table per function (fitted by
 * tests/gen/math_coefficients.py) and a few selects for the special cases
 * (±0, ±inf, NaN, subnormals, overflow, underflow) make each function.
 *
 * The accuracy of each, in ulps against the C library's double function
 * rounded to f32, is measured by tests/unit/test_math_ulp.c and listed in
 * docs/math.md; the bounds there are what the test enforces. */
#ifndef AXLE_MATH_REFERENCE_H
#define AXLE_MATH_REFERENCE_H

float mathref_expf(float x);
float mathref_expm1f(float x);
float mathref_logf(float x);
float mathref_log1pf(float x);
float mathref_tanhf(float x);
float mathref_logisticf(float x);
float mathref_erff(float x);
float mathref_sinf(float x);
float mathref_cosf(float x);
float mathref_tanf(float x);
float mathref_atan2f(float y, float x);
float mathref_powf(float x, float y);
float mathref_cbrtf(float x);
float mathref_sqrtf(float x);
float mathref_rsqrtf(float x);

#endif
