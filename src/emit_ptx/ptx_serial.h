/* Small PTX helpers for the serial kernels of the fft and linear-algebra
 * families (gpu_fft.c, gpu_linalg.c): kernels where one thread walks one
 * line or one matrix in the reference evaluator's order, in f64, so that
 * results agree with src/ir/eval closely (often to the bit).
 *
 * Every index is an .s64 register; every value is computed in .f64 and
 * converted from / to the element type at the load / store. */
#ifndef AXLE_EMIT_PTX_PTX_SERIAL_H
#define AXLE_EMIT_PTX_PTX_SERIAL_H

#include "emit_ptx/ptx_builder.h"

PtxReg ptx_serial_s64(PtxBuilder *b, int64_t value);   /* mov.s64 of an immediate */
PtxReg ptx_serial_f64(PtxBuilder *b, double value);    /* mov.f64 of the exact bits */

/* for (var = start; var < end; var += step): begin places the test, end
 * the increment and the back edge. step NULL means 1. */
typedef struct SerialLoop {
  PtxReg var, end, step;
  bool has_step;
  PtxLabel top, done;
} SerialLoop;

SerialLoop ptx_serial_loop_begin(PtxBuilder *b, PtxReg start, PtxReg end, const PtxReg *step);
void ptx_serial_loop_end(PtxBuilder *b, SerialLoop *loop);
/* The grid-stride loop over [0, total): var is the item this thread takes,
 * so any grid the launch is capped to is correct. */
SerialLoop ptx_serial_grid_loop_begin(PtxBuilder *b, int64_t total);

/* Element `index` of an array of element type t at base (a global
 * address), as f64; part 1 is the imaginary part of a complex element
 * (part 0 its real part; a real element has only part 0). */
PtxReg ptx_serial_load(PtxBuilder *b, PtxReg base, PtxReg index, ElementType t, int part);
void ptx_serial_store(PtxBuilder *b, PtxReg base, PtxReg index, ElementType t, int part, PtxReg value);
/* The types ptx_serial_load and ptx_serial_store handle: f32, f64, c64, c128. */
bool ptx_serial_type_ok(ElementType t);

/* a * b + c on .s64 registers, into a new register. */
PtxReg ptx_serial_mad(PtxBuilder *b, PtxReg a, int64_t scale, PtxReg c);
PtxReg ptx_serial_mad_reg(PtxBuilder *b, PtxReg a, PtxReg scale, PtxReg c);

/* re += ar*br - ai*bi; im += ar*bi + ai*br in f64, each product and sum
 * rounded on its own, as C's complex multiply rounds (no fused
 * multiply-add): the complex FFT's and the complex GEMM's accumulation. */
void ptx_serial_complex_multiply_add(PtxBuilder *b, PtxReg re, PtxReg im, PtxReg ar, PtxReg ai, PtxReg br,
                                     PtxReg bi);

#endif
