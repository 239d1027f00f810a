/* Small PTX helpers for the serial kernels of fft and linear algebra
 * (see ptx_serial.h). */
#include <string.h>

#include "emit_ptx/ptx_serial.h"

PtxReg ptx_serial_s64(PtxBuilder *b, int64_t value) {
  PtxReg r = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "mov.s64 $r, $D", r, value);
  return r;
}

PtxReg ptx_serial_f64(PtxBuilder *b, double value) { return ptx_f64_constant(b, value); }

static void loop_test(PtxBuilder *b, SerialLoop *loop) {
  ptx_label_place(b, loop->top);
  PtxReg past = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "setp.ge.s64 $r, $r, $r", past, loop->var, loop->end);
  ptx_inst(b, "@$r bra $l", past, loop->done);
}

SerialLoop ptx_serial_loop_begin(PtxBuilder *b, PtxReg start, PtxReg end, const PtxReg *step) {
  SerialLoop loop = {.var = ptx_reg_new(b, PTX_S64), .end = end, .has_step = step != NULL};
  if (step) loop.step = *step;
  loop.top = ptx_label_new(b, "loop");
  loop.done = ptx_label_new(b, "loop_done");
  ptx_inst(b, "mov.s64 $r, $r", loop.var, start);
  loop_test(b, &loop);
  return loop;
}

void ptx_serial_loop_end(PtxBuilder *b, SerialLoop *loop) {
  if (loop->has_step) ptx_inst(b, "add.s64 $r, $r, $r", loop->var, loop->var, loop->step);
  else ptx_inst(b, "add.s64 $r, $r, 1", loop->var, loop->var);
  ptx_inst(b, "bra.uni $l", loop->top);
  ptx_label_place(b, loop->done);
}

SerialLoop ptx_serial_grid_loop_begin(PtxBuilder *b, int64_t total) {
  PtxReg first = ptx_global_thread_index(b);
  PtxReg blocks = ptx_reg_new(b, PTX_U32), threads = ptx_reg_new(b, PTX_U32), step = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "mov.u32 $r, %nctaid.x", blocks);
  ptx_inst(b, "mov.u32 $r, %ntid.x", threads);
  ptx_inst(b, "mul.wide.u32 $r, $r, $r", step, blocks, threads);
  PtxReg end = ptx_serial_s64(b, total);
  return ptx_serial_loop_begin(b, first, end, &step);
}

bool ptx_serial_type_ok(ElementType t) {
  return t == TYPE_F32 || t == TYPE_F64 || t == TYPE_C64 || t == TYPE_C128;
}

static bool is_single(ElementType t) { return t == TYPE_F32 || t == TYPE_C64; }

PtxReg ptx_serial_load(PtxBuilder *b, PtxReg base, PtxReg index, ElementType t, int part) {
  int component = is_single(t) ? 4 : 8;
  PtxReg at = ptx_element_address(b, base, index, type_byte_size(t));
  PtxReg value = ptx_reg_new(b, PTX_F64);
  if (is_single(t)) {
    PtxReg single = ptx_reg_new(b, PTX_F32);
    ptx_inst(b, "ld.global.f32 $r, [$r+$d]", single, at, part * component);
    ptx_inst(b, "cvt.f64.f32 $r, $r", value, single);
  } else {
    ptx_inst(b, "ld.global.f64 $r, [$r+$d]", value, at, part * component);
  }
  return value;
}

void ptx_serial_store(PtxBuilder *b, PtxReg base, PtxReg index, ElementType t, int part, PtxReg value) {
  int component = is_single(t) ? 4 : 8;
  PtxReg at = ptx_element_address(b, base, index, type_byte_size(t));
  if (is_single(t)) {
    PtxReg single = ptx_reg_new(b, PTX_F32);
    ptx_inst(b, "cvt.rn.f32.f64 $r, $r", single, value);
    ptx_inst(b, "st.global.f32 [$r+$d], $r", at, part * component, single);
  } else {
    ptx_inst(b, "st.global.f64 [$r+$d], $r", at, part * component, value);
  }
}

PtxReg ptx_serial_mad(PtxBuilder *b, PtxReg a, int64_t scale, PtxReg c) {
  PtxReg r = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "mad.lo.s64 $r, $r, $D, $r", r, a, scale, c);
  return r;
}

PtxReg ptx_serial_mad_reg(PtxBuilder *b, PtxReg a, PtxReg scale, PtxReg c) {
  PtxReg r = ptx_reg_new(b, PTX_S64);
  ptx_inst(b, "mad.lo.s64 $r, $r, $r, $r", r, a, scale, c);
  return r;
}

void ptx_serial_complex_multiply_add(PtxBuilder *b, PtxReg re, PtxReg im, PtxReg ar, PtxReg ai, PtxReg br,
                                     PtxReg bi) {
  PtxReg p = ptx_reg_new(b, PTX_F64), q = ptx_reg_new(b, PTX_F64), t = ptx_reg_new(b, PTX_F64);
  ptx_inst(b, "mul.rn.f64 $r, $r, $r", p, ar, br);
  ptx_inst(b, "mul.rn.f64 $r, $r, $r", q, ai, bi);
  ptx_inst(b, "sub.rn.f64 $r, $r, $r", t, p, q);
  ptx_inst(b, "add.rn.f64 $r, $r, $r", re, re, t);
  PtxReg u = ptx_reg_new(b, PTX_F64), v = ptx_reg_new(b, PTX_F64), w = ptx_reg_new(b, PTX_F64);
  ptx_inst(b, "mul.rn.f64 $r, $r, $r", u, ar, bi);
  ptx_inst(b, "mul.rn.f64 $r, $r, $r", v, ai, br);
  ptx_inst(b, "add.rn.f64 $r, $r, $r", w, u, v);
  ptx_inst(b, "add.rn.f64 $r, $r, $r", im, im, w);
}
