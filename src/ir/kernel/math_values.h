/* The C-values target of the math programs: see math_values.c. */
#ifndef AXLE_MATH_VALUES_H
#define AXLE_MATH_VALUES_H

#include "kernel/math_program.h"

MathTarget math_values_target(void);
MathVal math_value_f32(float x);
MathVal math_value_f64(double x);
float math_value_as_f32(MathVal v);
double math_value_as_f64(MathVal v);
/* fn run on C values, at f32 and at f64. */
float math_values_run_f32(MathFunction fn, float x);
double math_values_run_f64(MathFunction fn, double x);

#endif
