/* The math builder's vector mode (kernel_x86_math_builder.h): the same
 * transcribed functions, each value a slot of the vector width (32 bytes
 * at avx2, 64 at avx512) and each C operation the packed instruction that
 * does it in every lane. Every lane runs the scalar code's IEEE operation
 * (packed and scalar instructions round alike, cvttps2dq gives
 * 0x80000000 out of range as cvttss2si does), so each lane's bits are
 * the scalar code's, which are mathref's.
 *
 * Masks are 0 or all ones per lane where the scalar builder's are 0 or 1;
 * math_select_value and math_not_mask test "nonzero", so the transcriptions' mixes
 * of masks and 0/1 integers mean the same. At avx512 a compare goes to k1
 * and is widened into a vector of all ones; the VEX-only integer forms
 * have their EVEX d-suffixed twins. Only f32 and i32 lanes exist: an f64
 * or u64 operation in vector mode is a located compile error (the vector
 * classifier only admits the functions that use none, and sin, cos and
 * tan run their u64 Payne-Hanek reduction lane by lane, through a nested
 * scalar builder). At sse4 (16 bytes, 4 lanes) each operation is the
 * legacy SSE instruction, two-operand (the result's register takes the
 * left operand first), constants read by movss and shufps, and the FMA
 * is emulated in f64 lanes exactly as the scalar builder does it
 * (lanes_fma_emulated). */
#include "emit_x86/kernel_x86_math_builder.h"

#define EMIT(...) x86_emit(b->x->cb, __VA_ARGS__)

enum { S0 = 15, S1 = 14, S2 = 13 }; /* the scratch vector registers */

static bool wide512(const MathBuilder *b) { return b->width == 64; }
static bool legacy(const MathBuilder *b) { return b->width == 16; }

/* The legacy SSE form of a VEX mnemonic the builder passes (sse4). */
static X86Mnemonic legacy_of(X86Mnemonic m) {
  static const X86Mnemonic pairs[][2] = {
      {X86_VADDPS, X86_ADDPS},         {X86_VSUBPS, X86_SUBPS},   {X86_VMULPS, X86_MULPS},
      {X86_VDIVPS, X86_DIVPS},         {X86_VMINPS, X86_MINPS},   {X86_VMAXPS, X86_MAXPS},
      {X86_VSQRTPS, X86_SQRTPS},       {X86_VPAND, X86_PAND},     {X86_VPOR, X86_POR},
      {X86_VPXOR, X86_PXOR},           {X86_VPADDD, X86_PADDD},   {X86_VPSUBD, X86_PSUBD},
      {X86_VPMULLD, X86_PMULLD},       {X86_VPCMPEQD, X86_PCMPEQD}, {X86_VPCMPGTD, X86_PCMPGTD},
      {X86_VPSLLD, X86_PSLLD},         {X86_VPSRLD, X86_PSRLD},   {X86_VPSRAD, X86_PSRAD},
      {X86_VCVTDQ2PS, X86_CVTDQ2PS},   {X86_VCVTTPS2DQ, X86_CVTTPS2DQ},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    if (pairs[i][0] == m) return pairs[i][1];
  return m; /* already legacy (the emulated FMA's own) */
}

/* n = left m src: VEX's three operands, or at sse4 a move into n first
 * (n is never src's register: a new value's register is no operand's). */
static void emit_op(MathBuilder *b, X86Mnemonic m, X86Operand n, X86Operand left, X86Operand src) {
  if (!legacy(b)) {
    EMIT(m, n, left, src);
    return;
  }
  if (n.reg != left.reg) EMIT(X86_MOVAPS, n, left);
  EMIT(legacy_of(m), n, src);
}

static void emit_op_imm(MathBuilder *b, X86Mnemonic m, X86Operand n, X86Operand left, X86Operand src, int imm) {
  if (!legacy(b)) {
    EMIT(m, n, left, src, x86_imm(imm));
    return;
  }
  if (n.reg != left.reg) EMIT(X86_MOVAPS, n, left);
  EMIT(m == X86_VCMPPS ? X86_CMPPS : m, n, src, x86_imm(imm));
}

static X86Operand lane_reg(const MathBuilder *b, int n) {
  return x86_reg(wide512(b) ? x86_zmm(n) : b->width == 32 ? x86_ymm(n) : x86_xmm(n));
}

static X86Operand whole_slot(const MathBuilder *b, MathValue v) { return math_slot_operand(b, v, b->width); }

static bool is_constant(const MathBuilder *b, MathValue v) {
  return v < (int)(sizeof b->lane_constant / sizeof b->lane_constant[0]) && b->lane_constant[v];
}

static void constant_mark(MathBuilder *b, MathValue v, bool constant) {
  if (v < (int)(sizeof b->lane_constant / sizeof b->lane_constant[0])) b->lane_constant[v] = constant;
}

/* A constant's 4 bytes in the pool after the code. */
static X86Operand constant_element(const MathBuilder *b, MathValue v) {
  return x86_mem_label(4, b->lane_constant_label[v]);
}

/* At sse4 and avx2 the pool holds each constant 4 or 8 times, aligned
 * (kernel_x86_emit_lane_constants): the whole vector in memory. */
static X86Operand constant_vector(const MathBuilder *b, MathValue v) {
  return x86_mem_label(b->width, b->lane_constant_label[v]);
}

/* A constant's 4 bytes into every lane of register n. */
static void broadcast(MathBuilder *b, int n, MathValue v) {
  if (legacy(b)) EMIT(X86_MOVAPS, lane_reg(b, n), constant_vector(b, v));
  else EMIT(X86_VBROADCASTSS, lane_reg(b, n), constant_element(b, v));
}

/* A constant is read into every lane where it is used, as the memory
 * operand of the op that reads it: an EVEX embedded broadcast of its 4
 * bytes at avx512, the pool's aligned 16 or 32 bytes holding it in every
 * lane at sse4 and avx2 (a separate vbroadcastss per use was a third of
 * the avx2 exp's instructions). The bits are the same; nothing is stored
 * in the loop. At sse4 a value in its slot is loaded
 * into S2 (legacy operands in memory must be aligned; the slots need not
 * be). */
static X86Operand slot(MathBuilder *b, MathValue v) {
  if (!is_constant(b, v)) {
    X86Operand whole = whole_slot(b, v);
    if (!legacy(b) || whole.kind == X86_OPERAND_REG) return whole;
    EMIT(X86_MOVUPS, lane_reg(b, S2), whole);
    return lane_reg(b, S2);
  }
  if (wide512(b)) return x86_broadcast(constant_element(b, v));
  if (b->width <= 4 * kernel_x86_lane_constant_copies(b->x)) return constant_vector(b, v);
  broadcast(b, S2, v);
  return lane_reg(b, S2);
}

static void load(MathBuilder *b, int n, MathValue v) {
  if (!is_constant(b, v)) {
    EMIT(legacy(b) ? X86_MOVUPS : X86_VMOVUPS, lane_reg(b, n), whole_slot(b, v));
    return;
  }
  broadcast(b, n, v);
}

/* The register holding v: its home, or scratch n after a load. */
static int source(MathBuilder *b, MathValue v, int n) {
  if (!is_constant(b, v)) {
    int home = math_value_register(b, v);
    if (home >= 0) return home;
  }
  load(b, n, v);
  return n;
}

/* A new value, made before its operands are read (so its register is
 * none of theirs), and where to compute it: its home register, or S0,
 * which finish then stores to its slot. */
static MathValue result_begin(MathBuilder *b, int *n) {
  MathValue v = math_value_new(b);
  constant_mark(b, v, false);
  int home = math_value_register(b, v);
  *n = home >= 0 ? home : S0;
  return v;
}

static X86Mnemonic move_of(const MathBuilder *b) { return legacy(b) ? X86_MOVUPS : X86_VMOVUPS; }

static MathValue finish(MathBuilder *b, MathValue v, int n) {
  if (n == S0) EMIT(move_of(b), whole_slot(b, v), lane_reg(b, S0));
  return v;
}

/* `to` was made last (a scope's result moving into the scope's first
 * slot): it takes from's register where from dies here (no code), or
 * is loaded straight into its own register. */
void math_lanes_move(MathBuilder *b, MathValue to, MathValue from) {
  bool constant = is_constant(b, from);
  constant_mark(b, to, false);
  if (!legacy(b) && !constant && math_value_dies_here(b, from)) {
    math_value_take_register(b, to, from);
    return;
  }
  int home = !legacy(b) ? math_value_register(b, to) : -1;
  if (home >= 0) {
    load(b, home, from);
    return;
  }
  load(b, S0, from);
  EMIT(move_of(b), whole_slot(b, to), lane_reg(b, S0));
}

/* math_scope_end in vector mode: the result moves into the scope's first
 * slot as a new instance of it (math_value_renew). */
MathValue math_lanes_scope_end(MathBuilder *b, int scope, MathValue result) {
  if (result != scope) {
    math_value_renew(b, scope);
    math_lanes_move(b, scope, result);
  }
  b->next_slot = scope + 1;
  return scope;
}

MathValue math_lanes_input(MathBuilder *b, X86Operand input) {
  int n;
  MathValue v = result_begin(b, &n);
  EMIT(move_of(b), lane_reg(b, n), input);
  return finish(b, v, n);
}

void math_lanes_output(MathBuilder *b, MathValue v, int into) { load(b, into, v); }

MathValue math_lanes_unsupported(MathBuilder *b, const char *what) {
  if (b->x->st->code == STATUS_OK)
    status_error(b->x->st, STATUS_UNSUPPORTED, "kernel %s: %s has no vector form in the math builder", b->x->k->name,
                 what);
  return math_value_new(b);
}

MathValue math_lanes_constant(MathBuilder *b, uint32_t bits) {
  MathValue v = math_value_new_in_slot(b);
  if (v >= (int)(sizeof b->lane_constant / sizeof b->lane_constant[0]))
    return math_lanes_unsupported(b, "a constant past the builder's table");
  constant_mark(b, v, true);
  if (v < (int)(sizeof b->lane_constant_label / sizeof b->lane_constant_label[0]))
    b->lane_constant_label[v] = kernel_x86_lane_constant(b->x, bits);
  return v;
}

/* v = a m c. */
MathValue math_lanes_binary(MathBuilder *b, X86Mnemonic m, MathValue a, MathValue c) {
  int n;
  MathValue v = result_begin(b, &n);
  int left = source(b, a, S0);
  emit_op(b, m, lane_reg(b, n), lane_reg(b, left), slot(b, c));
  return finish(b, v, n);
}

/* The bitwise operations: VEX at avx2, their EVEX d-forms at avx512
 * (the EVEX vandps family needs AVX512DQ). */
MathValue math_lanes_bitwise(MathBuilder *b, char op, MathValue a, MathValue c) {
  X86Mnemonic m = op == '&' ? (wide512(b) ? X86_VPANDD : X86_VPAND)
                  : op == '|' ? (wide512(b) ? X86_VPORD : X86_VPOR)
                              : (wide512(b) ? X86_VPXORD : X86_VPXOR);
  return math_lanes_binary(b, m, a, c);
}

MathValue math_lanes_unary(MathBuilder *b, X86Mnemonic m, MathValue a) {
  int n;
  MathValue v = result_begin(b, &n);
  EMIT(legacy(b) ? legacy_of(m) : m, lane_reg(b, n), lane_reg(b, source(b, a, S0)));
  return finish(b, v, n);
}

MathValue math_lanes_round(MathBuilder *b, MathValue a, int mode) {
  int n;
  MathValue v = result_begin(b, &n);
  int from = source(b, a, S0);
  X86Mnemonic m = wide512(b) ? X86_VRNDSCALEPS : legacy(b) ? X86_ROUNDPS : X86_VROUNDPS;
  EMIT(m, lane_reg(b, n), lane_reg(b, from), x86_imm(mode & 15));
  return finish(b, v, n);
}

MathValue math_lanes_shift(MathBuilder *b, X86Mnemonic m, MathValue a, int count) {
  int n;
  MathValue v = result_begin(b, &n);
  int from = source(b, a, S0);
  if (from != n && (legacy(b) || !count)) EMIT(move_of(b), lane_reg(b, n), lane_reg(b, from));
  if (count && legacy(b)) EMIT(legacy_of(m), lane_reg(b, n), x86_imm(count));
  else if (count) EMIT(m, lane_reg(b, n), lane_reg(b, from), x86_imm(count));
  return finish(b, v, n);
}

static MathValue lanes_fma_emulated(MathBuilder *b, MathValue a, MathValue c, MathValue d);

/* With register homes (avx512, avx2): v = a * c + d written in place into the
 * register of an operand this op reads last, so no copy: vfmadd231 into
 * d's (n = a c + n), else into a factor's (the product commutes, bit for
 * bit), vfmadd132 (n = n c + d) when the other factor is a constant read
 * by broadcast, vfmadd213 (n = c n + d) otherwise. False when no operand
 * dies here. */
static bool fma_in_place(MathBuilder *b, MathValue v, MathValue a, MathValue c, MathValue d) {
  if (!is_constant(b, d) && math_value_dies_here(b, d)) {
    if (is_constant(b, a)) { /* the constant factor as the broadcast operand */
      MathValue t = a;
      a = c;
      c = t;
    }
    int n = math_value_take_register(b, v, d);
    int left = source(b, a, S0);
    EMIT(X86_VFMADD231PS, lane_reg(b, n), lane_reg(b, left), slot(b, c));
    return true;
  }
  MathValue dying = !is_constant(b, a) && math_value_dies_here(b, a)   ? a
                    : !is_constant(b, c) && math_value_dies_here(b, c) ? c
                                                                       : -1;
  if (dying < 0) return false;
  MathValue other = dying == a ? c : a;
  int n = math_value_take_register(b, v, dying);
  if (is_constant(b, other) && !is_constant(b, d)) {
    int addend = source(b, d, S1);
    EMIT(X86_VFMADD132PS, lane_reg(b, n), lane_reg(b, addend), slot(b, other));
  } else {
    int factor = source(b, other, S1);
    EMIT(X86_VFMADD213PS, lane_reg(b, n), lane_reg(b, factor), slot(b, d));
  }
  return true;
}

/* v = a * c + d, one rounding: in place where an operand dies here;
 * else vfmadd231 (n = a c + n) from a constant addend, read by
 * broadcast, or vfmadd213 (n = c n + d) from a copy of a. */
MathValue math_lanes_fma(MathBuilder *b, MathValue a, MathValue c, MathValue d) {
  if (legacy(b)) return lanes_fma_emulated(b, a, c, d);
  int n;
  MathValue v = result_begin(b, &n);
  if (!legacy(b) && fma_in_place(b, v, a, c, d)) return v;
  if (!legacy(b) && is_constant(b, d) && !is_constant(b, a)) {
    load(b, n, d);
    int left = source(b, a, S1);
    EMIT(X86_VFMADD231PS, lane_reg(b, n), lane_reg(b, left), slot(b, c));
    return finish(b, v, n);
  }
  load(b, n, a);
  int right = source(b, c, S1);
  EMIT(X86_VFMADD213PS, lane_reg(b, n), lane_reg(b, right), slot(b, d));
  return finish(b, v, n);
}

/* avx512: the lanes of k1 as all ones in n, the others 0 (not written
 * where only a select right after reads the mask, from k1); k1 now
 * holds mask v's lanes (math_lanes_select reads them there). */
static void widen_k1(MathBuilder *b, MathValue v, int n) {
  if (!math_value_unread(b, v)) EMIT(X86_VPMOVM2D, lane_reg(b, n), x86_reg(X86_K1));
  b->k1_mask = v;
}

/* A float compare of a with c by vcmpps predicate (ordered ones false on
 * NaN, as the scalar code's). */
MathValue math_lanes_compare(MathBuilder *b, MathValue a, MathValue c, int predicate) {
  int n;
  MathValue v = result_begin(b, &n);
  int left = source(b, a, S0);
  if (!wide512(b)) {
    emit_op_imm(b, X86_VCMPPS, lane_reg(b, n), lane_reg(b, left), slot(b, c), predicate);
    if (!legacy(b)) b->compare_mask = v;
    return finish(b, v, n);
  }
  EMIT(X86_VCMPPS, x86_reg(X86_K1), lane_reg(b, left), slot(b, c), x86_imm(predicate));
  widen_k1(b, v, n);
  return finish(b, v, n);
}

/* vpcmpeqd or vpcmpgtd of a with c: a == c, a > c (signed). */
MathValue math_lanes_integer_compare(MathBuilder *b, X86Mnemonic m, MathValue a, MathValue c) {
  int n;
  MathValue v = result_begin(b, &n);
  int left = source(b, a, S0);
  if (!wide512(b)) {
    emit_op(b, m, lane_reg(b, n), lane_reg(b, left), slot(b, c));
    if (!legacy(b)) b->compare_mask = v;
    return finish(b, v, n);
  }
  EMIT(m, x86_reg(X86_K1), lane_reg(b, left), slot(b, c));
  widen_k1(b, v, n);
  return finish(b, v, n);
}

/* mask ? a : c lane by lane, "mask" meaning any nonzero bits. */
MathValue math_lanes_select(MathBuilder *b, MathValue mask, MathValue a, MathValue c) {
  int n;
  MathValue v = result_begin(b, &n);
  int left = source(b, a, S0);
  if (legacy(b)) {
    /* n = (a & ~z) | (c & z), z the lanes where the mask is 0 */
    EMIT(X86_PXOR, lane_reg(b, S1), lane_reg(b, S1));
    EMIT(X86_PCMPEQD, lane_reg(b, S1), slot(b, mask));
    X86Operand right = slot(b, c);
    if (right.kind != X86_OPERAND_REG || right.reg != lane_reg(b, S2).reg) EMIT(X86_MOVAPS, lane_reg(b, S2), right);
    EMIT(X86_ANDPS, lane_reg(b, S2), lane_reg(b, S1));
    EMIT(X86_ANDNPS, lane_reg(b, S1), lane_reg(b, left));
    EMIT(X86_ORPS, lane_reg(b, S1), lane_reg(b, S2));
    EMIT(X86_MOVAPS, lane_reg(b, n), lane_reg(b, S1));
    return finish(b, v, n);
  }
  if (!wide512(b) && b->compare_mask == mask) { /* a compare's lanes: where set, a */
    int right = source(b, c, S1), lanes = source(b, mask, S2);
    EMIT(X86_VBLENDVPS, lane_reg(b, n), lane_reg(b, right), lane_reg(b, left), lane_reg(b, lanes));
    return finish(b, v, n);
  }
  if (!wide512(b)) {
    EMIT(X86_VPXOR, lane_reg(b, S1), lane_reg(b, S1), lane_reg(b, S1));
    EMIT(X86_VPCMPEQD, lane_reg(b, S1), lane_reg(b, S1), slot(b, mask)); /* mask == 0 */
    EMIT(X86_VBLENDVPS, lane_reg(b, n), lane_reg(b, left), slot(b, c), lane_reg(b, S1));
    return finish(b, v, n);
  }
  if (b->k1_mask == mask) { /* k1 holds mask's lanes: where set, a */
    int right = source(b, c, S1);
    EMIT(X86_VBLENDMPS, x86_merge_masked(lane_reg(b, n), X86_K1), lane_reg(b, right), lane_reg(b, left));
    return finish(b, v, n);
  }
  EMIT(X86_VPXORD, lane_reg(b, S1), lane_reg(b, S1), lane_reg(b, S1));
  EMIT(X86_VPCMPEQD, x86_reg(X86_K1), lane_reg(b, S1), slot(b, mask));
  b->k1_mask = -1;
  EMIT(X86_VBLENDMPS, x86_merge_masked(lane_reg(b, n), X86_K1), lane_reg(b, left), slot(b, c));
  return finish(b, v, n);
}

MathValue math_lanes_value_new(MathBuilder *b) {
  MathValue v = math_value_new(b);
  constant_mark(b, v, false);
  return v;
}

X86Operand math_lanes_element(const MathBuilder *b, MathValue v, X86Reg index) {
  if (b->homes) b->homes->needs_memory = true;
  if (is_constant(b, v)) return constant_element(b, v); /* the same in every lane */
  X86Operand whole = whole_slot(b, v);
  return x86_mem_index(4, X86_RSP, index, 4, whole.mem.disp);
}

void math_lanes_skip_if_all(MathBuilder *b, MathValue mask, X86Label skip) {
  if (legacy(b)) {
    EMIT(X86_PXOR, lane_reg(b, S1), lane_reg(b, S1));
    EMIT(X86_PCMPEQD, lane_reg(b, S1), slot(b, mask)); /* the lanes where mask is 0 */
    EMIT(X86_MOVMSKPS, x86_reg(X86_EAX), lane_reg(b, S1));
    EMIT(X86_TEST, x86_reg(X86_EAX), x86_reg(X86_EAX));
    EMIT(X86_JE, x86_rel(skip));
    return;
  }
  if (!wide512(b)) {
    EMIT(X86_VPXOR, lane_reg(b, S1), lane_reg(b, S1), lane_reg(b, S1));
    EMIT(X86_VPCMPEQD, lane_reg(b, S1), lane_reg(b, S1), slot(b, mask)); /* the lanes where mask is 0 */
    EMIT(X86_VMOVMSKPS, x86_reg(X86_EAX), lane_reg(b, S1));
    EMIT(X86_TEST, x86_reg(X86_EAX), x86_reg(X86_EAX));
    EMIT(X86_JE, x86_rel(skip));
    return;
  }
  EMIT(X86_VPXORD, lane_reg(b, S1), lane_reg(b, S1), lane_reg(b, S1));
  EMIT(X86_VPCMPEQD, x86_reg(X86_K1), lane_reg(b, S1), slot(b, mask)); /* the lanes where mask is 0 */
  b->k1_mask = -1;
  EMIT(X86_KORTESTW, x86_reg(X86_K1), x86_reg(X86_K1));
  EMIT(X86_JE, x86_rel(skip));
}

/* ---- the FMA without FMA (sse4) ----
 *
 * The scalar builder's emulation (fma_f32_emulated in
 * kernel_x86_math_builder.c, docs/math.md "Without FMA") on two lanes at
 * a time, as f64. The product of two floats is exact in f64, and the sum
 * s = p + d rounded to nearest in f64 then to f32 is already fmaf's one
 * rounding unless s is doubtful: only an f32 rounding midpoint can sit
 * between p + d and s, and one that did would be the nearer f64, so s
 * rounds like p + d unless s is itself a midpoint (its low 29 mantissa
 * bits 1 then 28 zeros) or lies where f32 rounds on a coarser grid
 * (below 2^-125: the subnormals, zero, the smallest normal binade). Each
 * FMA takes that fast path, and jumps over the exact one when no lane is
 * doubtful; the exact path rounds s to odd (when the two-sum error e is
 * nonzero and s's last bit even, s moves one unit toward p + d), which
 * rounded once to f32 is fmaf's one rounding. Integer steps are on the
 * 64-bit lanes: a lane's sign or last bit becomes a mask of all ones by
 * psrad 31 and pshufd (each 64-bit lane's high half copied down). */

/* All ones in each 64-bit lane whose bit 63 is set. */
static MathValue sign_mask_q(MathBuilder *b, MathValue a) {
  MathValue dwords = math_lanes_shift(b, X86_PSRAD, a, 31);
  int n;
  MathValue v = result_begin(b, &n);
  EMIT(X86_PSHUFD, lane_reg(b, n), lane_reg(b, source(b, dwords, S0)), x86_imm(0xf5));
  return finish(b, v, n);
}

static MathValue compare_pd(MathBuilder *b, MathValue a, MathValue c, int predicate) {
  int n;
  MathValue v = result_begin(b, &n);
  int left = source(b, a, S0);
  emit_op_imm(b, X86_CMPPD, lane_reg(b, n), lane_reg(b, left), slot(b, c), predicate);
  return finish(b, v, n);
}

/* A constant's f64 in both lanes: cvtps2pd straight from the pool. */
static MathValue widened_constant(MathBuilder *b, MathValue c) {
  int n;
  MathValue v = result_begin(b, &n);
  EMIT(X86_CVTPS2PD, lane_reg(b, n), x86_mem_label(8, b->lane_constant_label[c]));
  return finish(b, v, n);
}

/* The f64 product p and sum s of the two f32 lanes of in[0..2] (a, c, d)
 * that `half` selects (0: lanes 0 and 1, 1: lanes 2 and 3), d as f64 in
 * *dd. A constant's f64 (wide[k], else -1) is the same in both halves:
 * converted once. */
static MathValue sum_half(MathBuilder *b, const MathValue *in, const MathValue *wide, int half, MathValue *p,
                          MathValue *dd) {
  MathValue f64[3];
  for (int k = 0; k < 3; k++)
    f64[k] = wide[k] >= 0 ? wide[k]
                          : math_lanes_unary(b, X86_CVTPS2PD, half ? math_lanes_unary(b, X86_MOVHLPS, in[k]) : in[k]);
  *p = math_lanes_binary(b, X86_MULPD, f64[0], f64[1]);
  *dd = f64[2];
  return math_lanes_binary(b, X86_ADDPD, *p, *dd);
}

/* The sums of both halves (sums[0] lanes 0 and 1, sums[1] lanes 2 and 3),
 * and of each its product and addend when p and dd are not NULL. */
static void sums_of(MathBuilder *b, const MathValue *in, MathValue *sums, MathValue *p, MathValue *dd) {
  MathValue wide[3], product, addend;
  for (int k = 0; k < 3; k++) wide[k] = is_constant(b, in[k]) ? widened_constant(b, in[k]) : -1;
  for (int half = 0; half < 2; half++) {
    sums[half] = sum_half(b, in, wide, half, &product, &addend);
    if (p) p[half] = product, dd[half] = addend;
  }
}

/* p + dd (= s rounded to nearest) rounded to odd, as f32 in the two low
 * lanes. */
static MathValue round_to_odd_half(MathBuilder *b, MathValue p, MathValue dd, MathValue s, MathValue zero) {
  MathValue back = math_lanes_binary(b, X86_SUBPD, s, p);
  MathValue e = math_lanes_binary(b, X86_ADDPD, math_lanes_binary(b, X86_SUBPD, p, math_lanes_binary(b, X86_SUBPD, s, back)),
                                  math_lanes_binary(b, X86_SUBPD, dd, back));
  /* ordered compares: a NaN e (infinite operands) is not inexact */
  MathValue inexact = math_lanes_binary(b, X86_POR, compare_pd(b, zero, e, 1), compare_pd(b, e, zero, 1));
  MathValue odd = sign_mask_q(b, math_lanes_shift(b, X86_PSLLQ, s, 63));
  MathValue moves = math_lanes_binary(b, X86_PANDN, odd, inexact); /* inexact and even */
  /* toward p + d: +1 on the bits where e has s's sign, else -1 */
  MathValue differ = sign_mask_q(b, math_lanes_binary(b, X86_PXOR, e, s));
  MathValue up = math_lanes_binary(b, X86_PANDN, differ, moves), down = math_lanes_binary(b, X86_PAND, differ, moves);
  s = math_lanes_binary(b, X86_PADDQ, math_lanes_binary(b, X86_PSUBQ, s, up), down);
  return math_lanes_unary(b, X86_CVTPD2PS, s);
}

/* shufps: v's low lanes picked from a, its high lanes from c, by imm. */
static MathValue shuffle(MathBuilder *b, MathValue a, MathValue c, int imm) {
  int n;
  MathValue v = result_begin(b, &n);
  emit_op_imm(b, X86_SHUFPS, lane_reg(b, n), lane_reg(b, source(b, a, S0)), slot(b, c), imm);
  return finish(b, v, n);
}

/* Nonzero in each f32 lane whose f64 sum (sums[0] lanes 0 and 1,
 * sums[1] lanes 2 and 3) is doubtful: low 29 bits 0x10000000, or the f32
 * result below 2^-125 (exponent field 0 or 1). */
static MathValue doubtful_lanes(MathBuilder *b, const MathValue *sums, MathValue result) {
  MathValue low_words = shuffle(b, sums[0], sums[1], 0x88); /* each f64's low 32 bits */
  MathValue low_bits = math_lanes_binary(b, X86_PAND, low_words, math_lanes_constant(b, 0x1fffffff));
  MathValue midpoint = math_lanes_binary(b, X86_PCMPEQD, low_bits, math_lanes_constant(b, 0x10000000));
  MathValue exponent_high = math_lanes_binary(b, X86_PAND, result, math_lanes_constant(b, 0x7f000000));
  MathValue tiny = math_lanes_binary(b, X86_PCMPEQD, exponent_high, math_lanes_constant(b, 0));
  return math_lanes_binary(b, X86_POR, midpoint, tiny);
}

/* v's register or slot now holds from's lanes. */
static void overwrite(MathBuilder *b, MathValue v, MathValue from) {
  int n = source(b, from, S0);
  EMIT(X86_MOVUPS, whole_slot(b, v), lane_reg(b, n));
}

static MathValue lanes_fma_emulated(MathBuilder *b, MathValue a, MathValue c, MathValue d) {
  int scope = math_scope_begin(b);
  MathValue in[3] = {a, c, d}, s[2];
  sums_of(b, in, s, NULL, NULL);
  MathValue result =
      math_lanes_binary(b, X86_MOVLHPS, math_lanes_unary(b, X86_CVTPD2PS, s[0]), math_lanes_unary(b, X86_CVTPD2PS, s[1]));
  MathValue doubtful = doubtful_lanes(b, s, result);
  X86Label exact = x86_label_new(b->x->cb);
  EMIT(X86_MOVMSKPS, x86_reg(X86_EAX), lane_reg(b, source(b, doubtful, S0)));
  EMIT(X86_TEST, x86_reg(X86_EAX), x86_reg(X86_EAX));
  EMIT(X86_JE, x86_rel(exact));
  /* rare: some lane is doubtful, so all four are made again, rounded to
   * odd (only a, c and d live across the jump) */
  MathValue p[2], dd[2];
  sums_of(b, in, s, p, dd);
  MathValue zero = math_lanes_constant(b, 0);
  MathValue low = round_to_odd_half(b, p[0], dd[0], s[0], zero);
  MathValue high = round_to_odd_half(b, p[1], dd[1], s[1], zero);
  overwrite(b, result, math_lanes_binary(b, X86_MOVLHPS, low, high));
  x86_label_bind(b->x->cb, exact);
  return math_lanes_scope_end(b, scope, result);
}
