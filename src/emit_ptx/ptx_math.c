/* The math functions in PTX: which HLO op, on f32 and on f64, is which
 * algorithm of src/ir/kernel/math_algorithms*.c, run with the PTX
 * primitives of ptx_math_program.c, so that a GPU thread computes the
 * reference's bits (and the CPU backend's). */
#include "emit_ptx/ptx_builder.h"
#include "emit_ptx/ptx_math_program.h"

typedef struct PtxMathRow {
  Opcode op;
  PtxReg (*unary)(PtxBuilder *b, PtxReg x);
  PtxReg (*binary)(PtxBuilder *b, PtxReg x, PtxReg y);
} PtxMathRow;

static const PtxMathRow ptx_math_rows[] = {
    {OP_EXPONENTIAL, ptx_math_exp_f32, NULL},   {OP_EXPONENTIAL_MINUS_ONE, ptx_math_expm1_f32, NULL},
    {OP_LOG, ptx_math_log_f32, NULL},           {OP_LOG_PLUS_ONE, ptx_math_log1p_f32, NULL},
    {OP_TANH, ptx_math_tanh_f32, NULL},         {OP_LOGISTIC, ptx_math_logistic_f32, NULL},
    {OP_ERF, ptx_math_erf_f32, NULL},           {OP_SINE, ptx_math_sin_f32, NULL},
    {OP_COSINE, ptx_math_cos_f32, NULL},        {OP_TAN, ptx_math_tan_f32, NULL},
    {OP_CBRT, ptx_math_cbrt_f32, NULL},         {OP_RSQRT, ptx_math_rsqrt_f32, NULL},
    {OP_ATAN2, NULL, ptx_math_atan2_f32},       {OP_POWER, NULL, ptx_math_pow_f32},
    {OP_ATAN, ptx_math_atan_f32, NULL},         {OP_ASIN, ptx_math_asin_f32, NULL},
    {OP_ACOS, ptx_math_acos_f32, NULL},         {OP_SINH, ptx_math_sinh_f32, NULL},
    {OP_COSH, ptx_math_cosh_f32, NULL},         {OP_ASINH, ptx_math_asinh_f32, NULL},
    {OP_ACOSH, ptx_math_acosh_f32, NULL},       {OP_ATANH, ptx_math_atanh_f32, NULL},
};

static const PtxMathRow ptx_math_f64_rows[] = {
    {OP_EXPONENTIAL, ptx_math_exp_f64, NULL},   {OP_EXPONENTIAL_MINUS_ONE, ptx_math_expm1_f64, NULL},
    {OP_LOG, ptx_math_log_f64, NULL},           {OP_LOG_PLUS_ONE, ptx_math_log1p_f64, NULL},
    {OP_TANH, ptx_math_tanh_f64, NULL},         {OP_LOGISTIC, ptx_math_logistic_f64, NULL},
    {OP_RSQRT, ptx_math_rsqrt_f64, NULL},       {OP_ATAN2, NULL, ptx_math_atan2_f64},
    {OP_POWER, NULL, ptx_math_pow_f64},         {OP_SINE, ptx_math_sin_f64, NULL},
    {OP_COSINE, ptx_math_cos_f64, NULL},        {OP_TAN, ptx_math_tan_f64, NULL},
    {OP_CBRT, ptx_math_cbrt_f64, NULL},         {OP_ERF, ptx_math_erf_f64, NULL},
    {OP_ATAN, ptx_math_atan_f64, NULL},         {OP_ASIN, ptx_math_asin_f64, NULL},
    {OP_ACOS, ptx_math_acos_f64, NULL},         {OP_SINH, ptx_math_sinh_f64, NULL},
    {OP_COSH, ptx_math_cosh_f64, NULL},         {OP_ASINH, ptx_math_asinh_f64, NULL},
    {OP_ACOSH, ptx_math_acosh_f64, NULL},       {OP_ATANH, ptx_math_atanh_f64, NULL},
};

/* op's row of rows into dst, from operands; false when op has none. */
static bool emit_row(PtxBuilder *b, const PtxMathRow *rows, size_t count, const char *type, Opcode op, PtxReg dst,
                     const PtxReg *operands) {
  for (size_t i = 0; i < count; i++) {
    const PtxMathRow *row = &rows[i];
    if (row->op != op) continue;
    ptx_comment(b, "%s on %s, math_algorithms.c", opcode_name(op), type);
    PtxReg y = row->unary ? row->unary(b, operands[0]) : row->binary(b, operands[0], operands[1]);
    ptx_inst(b, "mov.$s $r, $r", type, dst, y);
    return true;
  }
  return false;
}

bool ptx_math_emit(PtxBuilder *b, Opcode op, PtxReg dst, const PtxReg *operands) {
  return emit_row(b, ptx_math_rows, sizeof ptx_math_rows / sizeof *ptx_math_rows, "f32", op, dst, operands);
}

bool ptx_math_f64_emit(PtxBuilder *b, Opcode op, PtxReg dst, const PtxReg *operands) {
  return emit_row(b, ptx_math_f64_rows, sizeof ptx_math_f64_rows / sizeof *ptx_math_f64_rows, "f64", op, dst,
                  operands);
}
