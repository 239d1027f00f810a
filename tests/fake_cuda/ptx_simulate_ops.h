/* The instructions of ptx_simulate.h, one PTX op at a time: ptxs_step
 * reads an op's name in parts ("ld.global.nc.v4.f32" is ld, the space,
 * the modifiers and the type) and does what the PTX ISA says it does for
 * the forms axle's emitter writes. Included by ptx_simulate.h only.
 *
 * Each rule quotes the sentence of the PTX ISA (version 9.0, the section
 * named) it follows. Where the ISA leaves a result unspecified, the
 * simulator gives a value an emitter must not rely on (and says so), so
 * that a kernel relying on it fails here rather than on a GPU. */

/* IEEE half and bfloat16 to and from float, rounding to nearest even (the
 * host's rounding mode, which nearbyint follows): cvt's ".rn rounding to
 * nearest, with ties to even" (PTX ISA, cvt). Past f16's range the result
 * is infinity, as IEEE 754 rounds it; the ISA's Type Conversion section
 * says such conversions are "represented with the maximum floating-point
 * value (IEEE 754 Inf for f32 and f64, and ~131,000 for f16)", which
 * describes no f16 encoding (the largest finite f16 is 65504) and which
 * this simulator does not follow. A NaN's payload after cvt to f16/bf16:
 * the ISA is silent (only ".relu ... NaN results are converted to
 * canonical NaN"); it keeps the top payload bits, quieted. */
static float ptxs_half_to_float(uint16_t h) {
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float v = exponent == 0    ? ldexpf((float)mantissa, -24)
            : exponent == 31 ? (mantissa ? NAN : INFINITY)
                             : ldexpf((float)(1024 + mantissa), exponent - 25);
  return (h & 0x8000) ? -v : v;
}

static uint16_t ptxs_float_to_half(float f) {
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  double a = fabs((double)f);
  if (a != a) return sign | 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < 0x1p-14) return sign | (uint16_t)nearbyint(a * 0x1p24); /* 1024 is the least normal, as it should */
  int e;
  double fraction = frexp(a, &e); /* a = fraction 2^e, fraction in [1/2, 1) */
  double m = nearbyint((fraction * 2 - 1) * 1024);
  return sign | (uint16_t)(((e - 1 + 15) << 10) + (int)m); /* m = 1024 carries into the exponent */
}

static float ptxs_bf16_to_float(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint16_t ptxs_float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

typedef struct PtxsOp {
  char parts[8][16];
  int count;
  int bits;       /* the (last) type's width */
  char kind;      /* 'f' 's' 'u' 'p' 'h' */
} PtxsOp;

static void ptxs_op_split(const char *op, PtxsOp *o) {
  memset(o, 0, sizeof *o);
  char copy[96];
  snprintf(copy, sizeof copy, "%s", op);
  char *rest = NULL;  /* strtok_r: devices simulate on their own threads */
  for (char *p = strtok_r(copy, ".", &rest); p && o->count < 8; p = strtok_r(NULL, ".", &rest)) {
    snprintf(o->parts[o->count++], sizeof o->parts[0], "%s", p);
    int bits;
    char kind;
    if (ptxs_type(p, &bits, &kind)) o->bits = bits, o->kind = kind;
  }
}

static bool ptxs_has(const PtxsOp *o, const char *part) {
  for (int i = 1; i < o->count; i++)
    if (!strcmp(o->parts[i], part)) return true;
  return false;
}

static void ptxs_write(PtxsThread *t, const PtxsOperand *o, uint64_t v) { t->regs[o->cls][o->index] = v; }

/* setp's comparisons (PTX ISA, setp, Floating Point Notes): "The ordered
 * comparisons are eq, ne, lt, le, gt, ge. If either operand is NaN, the
 * result is False." "unordered versions ... equ, neu, ltu, leu, gtu, geu
 * ... If either operand is NaN, then the result of these comparisons is
 * True." "num returns True if both operands are numeric values (not NaN),
 * and nan returns True if either operand is NaN." Integer Notes: "For
 * unsigned values, the comparison operators lo, ls, hi, and hs ..." */
static bool ptxs_compare(const char *how, char kind, int bits, uint64_t a, uint64_t b) {
  if (kind == 'f') {
    double x = ptxs_float(a, bits), y = ptxs_float(b, bits);
    bool nan = x != x || y != y;
    if (!strcmp(how, "nan")) return nan;
    if (!strcmp(how, "num")) return !nan;
    bool unordered = strlen(how) == 3 && how[2] == 'u';
    if (nan) return unordered;
    if (!strncmp(how, "eq", 2)) return x == y;
    if (!strncmp(how, "ne", 2)) return x != y;
    if (!strncmp(how, "lt", 2)) return x < y;
    if (!strncmp(how, "le", 2)) return x <= y;
    if (!strncmp(how, "gt", 2)) return x > y;
    if (!strncmp(how, "ge", 2)) return x >= y;
    return false;
  }
  uint64_t ua = a & ptxs_mask(bits), ub = b & ptxs_mask(bits);
  int64_t sa = ptxs_signed(a, bits), sb = ptxs_signed(b, bits);
  if (!strcmp(how, "eq")) return ua == ub;
  if (!strcmp(how, "ne")) return ua != ub;
  if (!strcmp(how, "lo")) return ua < ub;
  if (!strcmp(how, "ls")) return ua <= ub;
  if (!strcmp(how, "hi")) return ua > ub;
  if (!strcmp(how, "hs")) return ua >= ub;
  bool is_signed = kind == 's';
  if (!strcmp(how, "lt")) return is_signed ? sa < sb : ua < ub;
  if (!strcmp(how, "le")) return is_signed ? sa <= sb : ua <= ub;
  if (!strcmp(how, "gt")) return is_signed ? sa > sb : ua > ub;
  if (!strcmp(how, "ge")) return is_signed ? sa >= sb : ua >= ub;
  return false;
}

/* f64 to f32 under cvt's floating-point rounding modifier (PTX ISA, cvt,
 * Floating Point Notes: ".rn rounding to nearest, with ties to even",
 * ".rz rounding toward zero", ".rm rounding toward negative infinity",
 * ".rp rounding toward positive infinity"). The host's cast rounds to
 * nearest even; the directed modes step back one f32 where it went the
 * wrong way. Past f32's range that gives the largest f32 toward zero, as
 * IEEE's directed roundings do; the ISA's Type Conversion section says
 * only that such results are "represented with the maximum floating-point
 * value (IEEE 754 Inf for f32 and f64 ...)", which read for .rn. */
static float ptxs_f64_to_f32(double x, const char *mode) {
  float f = (float)x;
  if (x != x || (double)f == x) return f;
  if (!strcmp(mode, "rz") && fabs((double)f) > fabs(x)) f = nextafterf(f, 0.0f);
  if (!strcmp(mode, "rm") && (double)f > x) f = nextafterf(f, -INFINITY);
  if (!strcmp(mode, "rp") && (double)f < x) f = nextafterf(f, INFINITY);
  return f;
}

static bool ptxs_convert_half_integer(PtxsRun *r, const PtxsOp *o, uint64_t a, uint64_t *d); /* at the end */
static bool ptxs_convert_tf32(const PtxsOp *o, uint64_t a, uint64_t *d);                        /* at the end */

/* cvt: between integer and float types with PTX's rounding and
 * saturation. Float to integer: "For float-to-integer conversions, the
 * result is clamped to the destination range by default" (PTX ISA, cvt,
 * Integer Notes, Saturation modifier); NaN as the rule below. */
static bool ptxs_convert(PtxsRun *r, const PtxsOp *o, uint64_t a, uint64_t *d) {
  int types = 0, bits[2] = {0, 0};
  char kinds[2] = {0, 0};
  const char *mode = "", *names[2] = {"", ""};
  for (int i = 1; i < o->count; i++) {
    int b;
    char k;
    if (ptxs_type(o->parts[i], &b, &k) && types < 2) names[types] = o->parts[i], bits[types] = b, kinds[types++] = k;
    else mode = o->parts[i];
  }
  if (ptxs_convert_tf32(o, a, d)) return true;
  if (types != 2) return ptxs_fail(r, true, "unsupported", o->parts[0]);
  /* f16 and bf16 to and from f32 only: ptxs_float_to_half and friends
   * round to nearest even, as ".rn rounding to nearest, with ties to even"
   * says; the other modes are not simulated */
  if (kinds[0] == 'h' || kinds[1] == 'h') {
    bool bf16 = !strcmp(names[0], "bf16") || !strcmp(names[1], "bf16");
    if (kinds[0] == 'h' && kinds[1] == 'f' && bits[1] == 32) {
      if (strcmp(mode, "rn")) return ptxs_fail(r, true, "unsupported rounding of", o->parts[0]);
      float x = (float)ptxs_float(a, 32);
      return *d = bf16 ? ptxs_float_to_bf16(x) : ptxs_float_to_half(x), true;
    }
    if (kinds[0] == 'f' && kinds[1] == 'h' && bits[0] == 32) {
      float x = bf16 ? ptxs_bf16_to_float((uint16_t)a) : ptxs_half_to_float((uint16_t)a);
      return *d = ptxs_float_bits(x, 32), true;
    }
    return ptxs_convert_half_integer(r, o, a, d);
  }
  int db = bits[0], sbits = bits[1];
  char dk = kinds[0], sk = kinds[1];
  if (sk == 'f') {
    double x = ptxs_float(a, sbits);
    if (!strcmp(mode, "rni")) x = nearbyint(x);
    else if (!strcmp(mode, "rzi")) x = trunc(x);
    else if (!strcmp(mode, "rmi")) x = floor(x);
    else if (!strcmp(mode, "rpi")) x = ceil(x);
    if (dk == 'f' && db == 32 && sbits == 64) return *d = ptxs_float_bits(ptxs_f64_to_f32(x, mode), 32), true;
    if (dk == 'f') return *d = ptxs_float_bits(x, db), true;
    /* PTX ISA, cvt, Integer Notes: "In float-to-integer conversions,
     * depending upon conversion types, NaN input results in following
     * value: 1. Zero if source is not .f64 and destination is not .s64,
     * .u64. 2. Otherwise 1 << (BitWidth(dst) - 1) corresponding to the value
     * of (MAXINT >> 1) + 1 for unsigned type or MININT for signed type." */
    if (x != x) return *d = sbits != 64 && db != 64 ? 0 : 1ull << (db - 1), true;
    if (dk == 's') {
      double high = ldexp(1.0, db - 1);
      int64_t v = x >= high ? (int64_t)(ptxs_mask(db - 1)) : x < -high ? -(int64_t)ptxs_mask(db - 1) - 1 : (int64_t)x;
      return *d = (uint64_t)v & ptxs_mask(db), true;
    }
    double high = ldexp(1.0, db);
    return *d = x >= high ? ptxs_mask(db) : x <= 0 ? 0 : (uint64_t)x, true;
  }
  /* from an integer: to a float with .rn (the host's conversion rounds to
   * nearest even; the other modes are not simulated) */
  int64_t sv = sk == 's' ? ptxs_signed(a, sbits) : (int64_t)(a & ptxs_mask(sbits));
  uint64_t uv = a & ptxs_mask(sbits);
  if (dk == 'f' && strcmp(mode, "rn")) return ptxs_fail(r, true, "unsupported rounding of", o->parts[0]);
  if (dk == 'f') {
    if (db == 64) return *d = ptxs_float_bits(sk == 's' ? (double)sv : (double)uv, 64), true;
    float f = sk == 's' ? (float)sv : (float)uv;
    return *d = ptxs_float_bits(f, 32), true;
  }
  if (dk == 'p') return ptxs_fail(r, true, "unsupported", "cvt to pred");
  /* integer to integer (PTX ISA, Scalar Conversions, Table 15): "sext =
   * sign-extend; zext = zero-extend; chop = keep only low bits that fit",
   * by the source's signedness; a register here is as wide as its type, so
   * the footnote's extension into a wider register does not arise */
  uint64_t v = sk == 's' ? (uint64_t)sv : uv;
  return *d = v & ptxs_mask(db), true;
}

static uint64_t ptxs_mul_hi(bool is_signed, int bits, uint64_t a, uint64_t b);   /* elt block, below */

/* Integer and float arithmetic of one type.
 * Float: add, sub, mul, div, fma and sqrt with ".rn mantissa LSB rounds to
 * nearest even" (PTX ISA, add, div, sqrt ...), which the host's IEEE
 * arithmetic is; fma: "computes the product of a and b to infinite
 * precision and then adds c to this product, again in infinite
 * precision", as C's fma. "By default, subnormal numbers are supported"
 * (sm_20+). Other rounding modes, .ftz, .sat and the .approx/.full forms
 * are not simulated (the emitter writes none). */
static bool ptxs_arithmetic(PtxsRun *r, const PtxsOp *o, uint64_t a, uint64_t b, uint64_t c, uint64_t *d) {
  const char *name = o->parts[0];
  int bits = o->bits;
  if (o->kind == 'h') return ptxs_fail(r, true, "unsupported", "f16/bf16 arithmetic");
  if (o->kind == 'f') {
    static const char *const unsimulated[] = {"rz", "rm", "rp", "ftz", "sat", "approx", "full"};
    for (size_t i = 0; i < sizeof unsimulated / sizeof *unsimulated; i++)
      if (ptxs_has(o, unsimulated[i])) return ptxs_fail(r, true, "unsupported modifier in", name);
    double x = ptxs_float(a, bits), y = ptxs_float(b, bits), z = ptxs_float(c, bits);
    bool single = bits == 32;
    float xf = (float)x, yf = (float)y, zf = (float)z;
    double v;
    if (!strcmp(name, "add")) v = single ? (double)(xf + yf) : x + y;
    else if (!strcmp(name, "sub")) v = single ? (double)(xf - yf) : x - y;
    else if (!strcmp(name, "mul")) v = single ? (double)(xf * yf) : x * y;
    else if (!strcmp(name, "div")) v = single ? (double)(xf / yf) : x / y;
    else if (!strcmp(name, "fma")) v = single ? (double)fmaf(xf, yf, zf) : fma(x, y, z);
    else if (!strcmp(name, "sqrt")) v = single ? (double)sqrtf(xf) : sqrt(x);
    /* neg: "NaN inputs yield an unspecified NaN"; abs: "For abs.f32, NaN
     * input yields unspecified NaN. For abs.f64, NaN input is passed
     * through unchanged." (PTX ISA, neg, abs). The unspecified NaN is the
     * canonical one here, whatever the input's sign and payload. */
    else if (!strcmp(name, "neg") && x != x) return *d = ptxs_mask(bits - 1), true;
    else if (!strcmp(name, "neg")) return *d = a ^ (1ull << (bits - 1)), true;
    else if (!strcmp(name, "abs") && x != x && single) return *d = ptxs_mask(bits - 1), true;
    else if (!strcmp(name, "abs")) return *d = a & ~(1ull << (bits - 1)), true;
    /* min/max (PTX ISA, min): "If .NaN modifier is specified, then the
     * result is canonical NaN if any of the inputs is NaN"; else min_num:
     * "if (isNaN(x) && isNaN(y)) z = NaN; else if (isNaN(x)) z = y; else
     * if (isNaN(y)) z = x", and "-0.0 < +0.0 here". The canonical NaN is
     * 0x7fffffff for f32 (the ISA's canonical NaN). */
    else if (!strcmp(name, "min") || !strcmp(name, "max")) {
      bool is_min = !strcmp(name, "min");
      if (x != x || y != y) {
        if (ptxs_has(o, "NaN")) return *d = single ? 0x7fffffffu : 0x7fffffffffffffffull, true;
        v = x != x ? y : x;
      } else if (x == 0 && y == 0) {
        bool x_negative = (a >> (bits - 1)) & 1;
        v = (is_min ? x_negative : !x_negative) ? x : y;
      } else {
        v = is_min ? (x < y ? x : y) : (x > y ? x : y);
      }
    } else
      return ptxs_fail(r, true, "unsupported", name);
    return *d = ptxs_float_bits(v, bits), true;
  }
  uint64_t m = ptxs_mask(bits), ua = a & m, ub = b & m;
  int64_t sa = ptxs_signed(a, bits), sb = ptxs_signed(b, bits);
  bool is_signed = o->kind == 's';
  if (!strcmp(name, "add")) *d = (ua + ub) & m;
  else if (!strcmp(name, "sub")) *d = (ua - ub) & m;
  /* mul/mad (PTX ISA, mul): "t = a * b; ... d = t; // for .wide d =
   * t<2n-1..n>; // for .hi variant d = t<n-1..0>; // for .lo variant" */
  else if (!strcmp(name, "mul") || !strcmp(name, "mad")) {
    uint64_t add = !strcmp(name, "mad") ? c : 0;
    if (ptxs_has(o, "wide"))
      *d = (is_signed ? (uint64_t)((int64_t)sa * (int64_t)sb) : ua * ub) + add;
    else if (ptxs_has(o, "hi"))
      *d = ptxs_mul_hi(is_signed, bits, a, b);
    else
      *d = (ua * ub + add) & m;
  } else if (!strcmp(name, "div") || !strcmp(name, "rem")) {
    /* div: "Division by zero yields an unspecified, machine-specific
     * value"; INT_MIN / -1 and INT_MIN % -1 overflow, on which the ISA is
     * silent: all three give an arbitrary pattern here (0x5a..), neither
     * 0 nor all ones, so a kernel that does not fix them up (HLO: x / 0 is
     * -1, x % 0 is x, INT_MIN / -1 is INT_MIN, INT_MIN % -1 is 0) fails.
     * rem: "The behavior for negative numbers is machine-dependent and
     * depends on whether divide rounds towards zero or negative infinity";
     * here, as C, toward zero (what HLO's remainder wants: the emitter
     * relies on it, which the ISA does not promise) */
    bool div = !strcmp(name, "div");
    bool overflows = is_signed && sb == -1 && sa == ptxs_signed(1ull << (bits - 1), bits);
    if (ub == 0 || overflows) *d = 0x5a5a5a5a5a5a5a5aull & m;
    else if (is_signed && sb == -1) *d = div ? (uint64_t)(-(uint64_t)sa) & m : 0;
    else if (is_signed) *d = (uint64_t)(div ? sa / sb : sa % sb) & m;
    else *d = div ? ua / ub : ua % ub;
  } else if (!strcmp(name, "min")) *d = (is_signed ? (uint64_t)(sa < sb ? sa : sb) : (ua < ub ? ua : ub)) & m;
  else if (!strcmp(name, "max")) *d = (is_signed ? (uint64_t)(sa > sb ? sa : sb) : (ua > ub ? ua : ub)) & m;
  /* integer neg and abs: "d = -a", "d = |a|", silent on INT_MIN (wraps here) */
  else if (!strcmp(name, "neg")) *d = (0 - ua) & m;
  else if (!strcmp(name, "abs")) *d = (uint64_t)(sa < 0 ? -(uint64_t)sa : (uint64_t)sa) & m;
  else if (!strcmp(name, "and")) *d = o->kind == 'p' ? (a && b) : ua & ub;
  else if (!strcmp(name, "or")) *d = o->kind == 'p' ? (a || b) : ua | ub;
  else if (!strcmp(name, "xor")) *d = o->kind == 'p' ? (!a != !b) : ua ^ ub;
  else if (!strcmp(name, "not")) *d = o->kind == 'p' ? !a : ~ua & m;
  /* shl, shr: "Shift amounts greater than the register width N are
   * clamped to N"; "Signed shifts fill with the sign bit, unsigned and
   * untyped shifts fill with 0"; "The b operand must be a 32-bit value"
   * (PTX ISA, shl, shr). popc, clz: the count, clz of 0 is the width. */
  else if (!strcmp(name, "shl")) *d = (b & 0xffffffffu) >= (uint64_t)bits ? 0 : (ua << (b & 0xffffffffu)) & m;
  else if (!strcmp(name, "shr")) {
    uint64_t n = b & 0xffffffffu;
    if (is_signed) *d = (uint64_t)(sa >> (n >= (uint64_t)bits ? bits - 1 : (int)n)) & m;
    else *d = n >= (uint64_t)bits ? 0 : ua >> n;
  } else if (!strcmp(name, "popc")) *d = (uint64_t)__builtin_popcountll(ua);
  else if (!strcmp(name, "clz")) *d = ua ? (uint64_t)(__builtin_clzll(ua) - (64 - bits)) : (uint64_t)bits;
  else
    return ptxs_fail(r, true, "unsupported", name);
  return true;
}

/* ld and st: global (checked), shared and param spaces; .v2/.v4 move a
 * vector of registers at consecutive elements. "The value loaded is
 * sign-extended to the destination register width for signed integers,
 * and is zero-extended to the destination register width for unsigned
 * and bit-size types" (PTX ISA, ld). An access outside every buffer (or
 * outside shared memory) fails the run: the ISA does not define it, and
 * the fake driver reports it as CUDA_ERROR_ILLEGAL_ADDRESS. ld.global.nc
 * reads "in the global state space, and optionally cache[s] in
 * non-coherent read-only cache" (PTX ISA, ld.global.nc), so it sees the
 * value here as a plain ld does: the emitter uses it only for the math
 * tables, which no kernel writes. */
static bool ptxs_memory(PtxsRun *r, PtxsThread *t, const PtxsInst *in, const PtxsOp *o, bool load) {
  const PtxsOperand *address = &in->operands[load ? 1 : 0], *value = &in->operands[load ? 0 : 1];
  int bytes = o->bits == 1 ? 1 : o->bits / 8;
  if (o->kind == 'p') return ptxs_fail(r, true, "unsupported", "a pred in memory");
  int lanes = value->kind == PTXS_VECTOR ? value->count : 1;
  char *at;
  if (address->kind == PTXS_MEM_PARAM) {
    if (!load) return ptxs_fail(r, false, "a store to a parameter", "");
    ptxs_write(t, value, r->params[address->symbol]);
    return true;
  } else if (address->kind == PTXS_MEM_SHARED || ptxs_has(o, "shared")) {
    int64_t offset = address->kind == PTXS_MEM_SHARED ? r->k->shared_offsets[address->symbol]
                                                       : (int64_t)t->regs[address->cls][address->index];
    offset += address->offset;
    if (offset < 0 || offset + (int64_t)bytes * lanes > r->shared_limit)
      return ptxs_fail(r, false, "a shared access out of bounds in", in->op);
    at = r->shared + offset;
  } else {
    uint64_t a = t->regs[address->cls][address->index] + (uint64_t)address->offset;
    at = ptxs_global(r, a, (size_t)bytes * (size_t)lanes);
    if (!at) return ptxs_fail(r, false, "a global access outside every buffer in", in->op);
  }
  for (int l = 0; l < lanes; l++) {
    int cls = value->kind == PTXS_VECTOR ? value->vector[l][0] : value->cls;
    int index = value->kind == PTXS_VECTOR ? value->vector[l][1] : value->index;
    uint64_t v = 0;
    if (load) {
      memcpy(&v, at + l * bytes, (size_t)bytes);
      if (o->kind == 's') v = (uint64_t)ptxs_signed(v, o->bits);
      t->regs[cls][index] = v;
    } else {
      v = value->kind == PTXS_IMM ? value->bits : t->regs[cls][index];
      memcpy(at + l * bytes, &v, (size_t)bytes);
    }
  }
  return true;
}

/* mov, with the vector forms that split or join a 64-bit register (PTX
 * ISA, mov): "// pack two 32-bit elements into .b64 d = a.x | (a.y << 32)"
 * and the unpacking the other way; only mov.b64 with two elements is
 * simulated. cvta moves the address unchanged: a generic address here is
 * the host address of global memory. */
static bool ptxs_move(PtxsRun *r, PtxsThread *t, const PtxsInst *in) {
  const PtxsOperand *dst = &in->operands[0], *src = &in->operands[1];
  bool vector = dst->kind == PTXS_VECTOR || src->kind == PTXS_VECTOR;
  if (vector && (strcmp(in->op, "mov.b64") || (dst->kind == PTXS_VECTOR ? dst : src)->count != 2))
    return ptxs_fail(r, true, "unsupported", in->op);
  if (dst->kind == PTXS_VECTOR) {
    uint64_t v = ptxs_read(r, t, src);
    t->regs[dst->vector[0][0]][dst->vector[0][1]] = v & 0xffffffffu;
    t->regs[dst->vector[1][0]][dst->vector[1][1]] = v >> 32;
    return true;
  }
  if (src->kind == PTXS_VECTOR) {
    uint64_t lo = t->regs[src->vector[0][0]][src->vector[0][1]] & 0xffffffffu;
    uint64_t hi = t->regs[src->vector[1][0]][src->vector[1][1]] & 0xffffffffu;
    ptxs_write(t, dst, lo | hi << 32);
    return true;
  }
  ptxs_write(t, dst, ptxs_read(r, t, src));
  return true;
}

/* ---- red.global: the GPU scatter's atomic path (gpu_scatter_apply.c) ----
 * "Performs a reduction operation with operand b and the value in
 * location a, and stores the result of the specified operation at
 * location a" (PTX ISA, red). The simulator runs one thread at a time, so
 * every red is atomic, as reds of one scope (axle's all use the default)
 * are on the device: "performed atomically with respect to each other only
 * if each operation specifies a scope that includes the other".
 * red.global.OP.TYPE [address], value sets memory to OP(memory, value), for
 * the integer add, min and max. The simulator runs one thread at a time,
 * so each update is atomic as on the device. */
static bool ptxs_red_global(PtxsRun *r, PtxsThread *t, const PtxsInst *in, const PtxsOp *o) {
  const PtxsOperand *address = &in->operands[0];
  int bytes = o->bits / 8;
  if (o->count < 4 || (o->kind != 's' && o->kind != 'u') || bytes < 4) return ptxs_fail(r, true, "unsupported", in->op);
  char *at = ptxs_global(r, t->regs[address->cls][address->index] + (uint64_t)address->offset, (size_t)bytes);
  if (!at) return ptxs_fail(r, false, "a global access outside every buffer in", in->op);
  PtxsOp arithmetic = *o;
  snprintf(arithmetic.parts[0], sizeof arithmetic.parts[0], "%s", o->parts[2]);
  uint64_t old = 0, d = 0;
  memcpy(&old, at, (size_t)bytes);
  if (!ptxs_arithmetic(r, &arithmetic, old, ptxs_read(r, t, &in->operands[1]), 0, &d)) return false;
  memcpy(at, &d, (size_t)bytes);
  return true;
}

static bool ptxs_hopper_step(PtxsRun *r, PtxsThread *t, const PtxsInst *in, bool *handled); /* at the end */
static bool ptxs_step(PtxsRun *r, PtxsThread *t, const PtxsInst *in) {
  bool handled, ok = ptxs_hopper_step(r, t, in, &handled);
  if (handled) return ok;
  PtxsOp o;
  ptxs_op_split(in->op, &o);
  const char *name = o.parts[0];
  if (!strcmp(name, "bra")) {
    t->pc = r->k->label_targets[in->operands[0].symbol];
    return true;
  }
  if (!strcmp(name, "ret")) return t->state = PTXS_DONE, true;
  if (!strcmp(name, "bar")) return t->state = PTXS_AT_BARRIER, true;
  if (!strcmp(name, "shfl")) return t->state = PTXS_AT_SHUFFLE, true;
  if (!strcmp(name, "mma")) return t->state = PTXS_AT_SHUFFLE, true;  /* warp-wide too: ptxs_mma_sync */
  ok = true;
  if (!strcmp(name, "ld") || !strcmp(name, "st")) ok = ptxs_memory(r, t, in, &o, name[0] == 'l');
  else if (!strcmp(name, "mov") || !strcmp(name, "cvta")) ok = ptxs_move(r, t, in);
  else if (!strcmp(name, "red") && ptxs_has(&o, "global")) ok = ptxs_red_global(r, t, in, &o);
  else {
    uint64_t a = in->count > 1 ? ptxs_read(r, t, &in->operands[1]) : 0;
    uint64_t b = in->count > 2 ? ptxs_read(r, t, &in->operands[2]) : 0;
    uint64_t c = in->count > 3 ? ptxs_read(r, t, &in->operands[3]) : 0, d = 0;
    /* selp: "If c is True, a is stored in d, b otherwise"; testp.finite:
     * "True if the input is not infinite or NaN" (PTX ISA, selp, testp) */
    if (!strcmp(name, "setp")) d = ptxs_compare(o.parts[1], o.kind, o.bits, a, b);
    else if (!strcmp(name, "selp")) d = c ? a : b;
    else if (!strcmp(name, "testp") && strcmp(o.parts[1], "finite")) ok = ptxs_fail(r, true, "unsupported", in->op);
    else if (!strcmp(name, "testp")) d = ptxs_float(a, o.bits) == ptxs_float(a, o.bits) && !isinf(ptxs_float(a, o.bits));
    else if (!strcmp(name, "cvt")) ok = ptxs_convert(r, &o, a, &d);
    else ok = ptxs_arithmetic(r, &o, a, b, c, &d);
    if (ok) ptxs_write(t, &in->operands[0], d);
  }
  if (ok) t->pc++;
  return ok;
}

/* ---- cvt between an integer and f16/bf16 (the corpus's convert_float_formats) ----
 * Through f32, made exact: an integer is first rounded to the half type's
 * significant bits (11 or 8) in integer arithmetic, so the f32 it becomes
 * holds it exactly and the f32-to-half rounding does not round twice; a
 * half is exact in f32, and f32-to-integer has cvt's rounding modes and
 * saturation. */
static double ptxs_integer_rounded(uint64_t magnitude, int significant) {
  int top = 63;
  while (top > 0 && !(magnitude >> top)) top--;
  if (top < significant) return (double)magnitude;
  int shift = top + 1 - significant;
  uint64_t kept = magnitude >> shift, rest = magnitude & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rest > half || (rest == half && (kept & 1))) kept++;
  return ldexp((double)kept, shift);
}

static bool ptxs_convert_half_integer(PtxsRun *r, const PtxsOp *o, uint64_t a, uint64_t *d) {
  PtxsOp via = *o;
  int bits, dest = -1, source = -1;
  char kind[2] = {0, 0};
  for (int i = 1; i < o->count; i++) {
    char k;
    if (!ptxs_type(o->parts[i], &bits, &k)) continue;
    if (dest < 0) dest = i, kind[0] = k;
    else source = i, kind[1] = k;
  }
  if (dest < 0 || source < 0) return ptxs_fail(r, true, "unsupported", o->parts[0]);
  bool bf16 = !strcmp(o->parts[dest], "bf16") || !strcmp(o->parts[source], "bf16");
  if (kind[0] == 'h' && (kind[1] == 's' || kind[1] == 'u')) {
    int source_bits = 32;
    char k;
    ptxs_type(o->parts[source], &source_bits, &k);
    int64_t sv = ptxs_signed(a, source_bits);
    bool negative = kind[1] == 's' && sv < 0;
    uint64_t magnitude = kind[1] == 's' ? (negative ? 0 - (uint64_t)sv : (uint64_t)sv) : a & ptxs_mask(source_bits);
    double x = ptxs_integer_rounded(magnitude, bf16 ? 8 : 11);
    float f = (float)(negative ? -x : x);  /* exact below f32's range; beyond, inf either way */
    return *d = bf16 ? ptxs_float_to_bf16(f) : ptxs_float_to_half(f), true;
  }
  if ((kind[0] == 's' || kind[0] == 'u') && kind[1] == 'h') {
    float x = bf16 ? ptxs_bf16_to_float((uint16_t)a) : ptxs_half_to_float((uint16_t)a);
    snprintf(via.parts[source], sizeof via.parts[source], "f32");
    return ptxs_convert(r, &via, ptxs_float_bits(x, 32), d);
  }
  return ptxs_fail(r, true, "unsupported", o->parts[0]);
}

/* ---- mma.sync (the GEMM kernels' tensor-core path, src/emit_ptx/ptx_gemm_mma.c) ----
 * mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 d, a, b, c
 * as the PTX ISA's "Matrix Fragments for mma.m16n8k16 with floating point
 * type" lay the fragments over the warp (g = lane / 4, t = lane % 4):
 *   a (4 x .b32, 2 halves each, low half first): element i of lane l is
 *     row g + 8 ((i / 2) % 2), column 2t + (i % 2) + 8 (i / 4)
 *   b (2 x .b32): element i is row (k) 2t + (i % 2) + 8 (i / 2), column g
 *   c, d (4 x .f32): element i is row g + 8 (i / 2), column 2t + (i % 2)
 * Products of halves are exact in f32; the sum of the 16 products and c is
 * formed in double and rounded once (the ISA is silent on the order and
 * rounding of the accumulation; the hardware's are its own). The
 * op name is read as written (the simulator keeps its first 95 characters). Every lane of the warp waits here, as at
 * a shuffle, and all 32 must. */
/* The accumulator fragment c of an m16n8 mma (both forms): element i of
 * lane l is row l/4 + 8 (i / 2), column 2 (l % 4) + (i % 2). */
static void ptxs_mma_read_c(const PtxsRun *r, unsigned first, const PtxsInst *in, double c[16][8]) {
  for (unsigned l = 0; l < 32; l++) {
    const PtxsThread *t = &r->thread[first + l];
    for (int i = 0; i < 4; i++)
      c[l / 4 + 8 * (i / 2)][2 * (l % 4) + i % 2] =
          ptxs_float(t->regs[in->operands[3].vector[i][0]][in->operands[3].vector[i][1]], 32);
  }
}

/* d = a b + c over k products in double, rounded once, into each lane's
 * fragment of d (c's layout); the warp goes on past the mma. */
static void ptxs_mma_write_d(PtxsRun *r, unsigned first, const PtxsInst *in, double a[16][16], double b[16][8],
                             double c[16][8], int k_count) {
  for (unsigned l = 0; l < 32; l++) {
    PtxsThread *t = &r->thread[first + l];
    for (int i = 0; i < 4; i++) {
      unsigned row = l / 4 + 8 * (i / 2), column = 2 * (l % 4) + i % 2;
      double sum = c[row][column];
      for (int k = 0; k < k_count; k++) sum += a[row][k] * b[k][column];
      t->regs[in->operands[0].vector[i][0]][in->operands[0].vector[i][1]] = ptxs_float_bits(sum, 32);
    }
    t->state = PTXS_RUNNING;
    t->pc++;
  }
}

static bool ptxs_mma_sync_tf32(PtxsRun *r, unsigned first, unsigned lanes); /* at the end */
static bool ptxs_mma_sync(PtxsRun *r, unsigned first, unsigned lanes) {
  const PtxsInst *in = &r->k->insts[r->thread[first].pc];
  if (strstr(in->op, ".m16n8k8.row.col.f32.tf32.")) return ptxs_mma_sync_tf32(r, first, lanes);
  if (lanes != 32 || !strstr(in->op, ".m16n8k16.row.col.f32.") || in->count != 4)
    return ptxs_fail(r, true, "unsupported", in->op);
  bool bf16 = strstr(in->op, "bf16") != NULL;
  double a[16][16], b[16][8], c[16][8];
  for (unsigned l = 0; l < 32; l++) {
    PtxsThread *t = &r->thread[first + l];
    unsigned g = l / 4, tg = l % 4;
    for (int i = 0; i < 8; i++) {
      uint64_t word = t->regs[in->operands[1].vector[i / 2][0]][in->operands[1].vector[i / 2][1]];
      uint16_t h = (uint16_t)(word >> (16 * (i % 2)));
      a[g + 8 * ((i / 2) % 2)][2 * tg + i % 2 + 8 * (i / 4)] = bf16 ? ptxs_bf16_to_float(h) : ptxs_half_to_float(h);
    }
    for (int i = 0; i < 4; i++) {
      uint64_t word = t->regs[in->operands[2].vector[i / 2][0]][in->operands[2].vector[i / 2][1]];
      uint16_t h = (uint16_t)(word >> (16 * (i % 2)));
      b[2 * tg + i % 2 + 8 * (i / 2)][g] = bf16 ? ptxs_bf16_to_float(h) : ptxs_half_to_float(h);
    }
  }
  ptxs_mma_read_c(r, first, in, c);
  ptxs_mma_write_d(r, first, in, a, b, c, 16);
  return true;
}

/* ---- tf32 (the GEMM's f32 path where a dot's algorithm allows tf32, ptx_gemm_mma.c) ----
 * cvt.rna.tf32.f32 d, a: a rounded to tf32's 10 fraction bits with ".rna
 * rounding to nearest, with ties away from zero" (PTX ISA, cvt). "The
 * internal layout of tf32 format is implementation defined" (PTX ISA,
 * Alternate Floating-Point Data Formats): the simulator keeps it in the
 * f32 layout with the low 13 bits zero, and the mma reads only the top 19
 * bits, so a kernel that read the register as an f32 would be wrong on a
 * device whose layout differs; NaN and infinity pass through (the ISA says
 * so only for .satfinite). Returns false for any other cvt. */
static bool ptxs_convert_tf32(const PtxsOp *o, uint64_t a, uint64_t *d) {
  if (o->count != 4 || strcmp(o->parts[1], "rna") || strcmp(o->parts[2], "tf32") || strcmp(o->parts[3], "f32"))
    return false;
  uint32_t bits = (uint32_t)a;
  if ((bits & 0x7f800000u) == 0x7f800000u) return *d = bits, true;
  uint32_t sign = bits & 0x80000000u, magnitude = bits & 0x7fffffffu;
  magnitude = (magnitude + 0x1000u) & ~0x1fffu;  /* a carry into the exponent is the right rounding */
  return *d = sign | magnitude, true;
}

/* mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 d, a, b, c as the PTX
 * ISA's "Matrix Fragments for mma.m16n8k8" (.tf32) lay them over the warp
 * (g = lane / 4, t = lane % 4), one element per .b32:
 *   a (4 regs): element i is row g + 8 (i % 2), column t + 4 (i / 2)
 *   b (2 regs): element i is row (k) t + 4 i, column g
 *   c, d (4 x .f32): element i is row g + 8 (i / 2), column 2t + (i % 2)
 * The hardware reads only the tf32 bits of each operand (the low 13 are
 * dropped here); products of tf32 values are exact in double and the sum
 * of the 8 products and c is rounded once. */
static bool ptxs_mma_sync_tf32(PtxsRun *r, unsigned first, unsigned lanes) {
  const PtxsInst *in = &r->k->insts[r->thread[first].pc];
  if (lanes != 32 || in->count != 4) return ptxs_fail(r, true, "unsupported", in->op);
  double a[16][16], b[16][8], c[16][8];
  for (unsigned l = 0; l < 32; l++) {
    PtxsThread *t = &r->thread[first + l];
    unsigned g = l / 4, tg = l % 4;
    for (int i = 0; i < 4; i++) {
      uint64_t word = t->regs[in->operands[1].vector[i][0]][in->operands[1].vector[i][1]];
      a[g + 8 * (i % 2)][tg + 4 * (i / 2)] = ptxs_float(word & 0xffffe000u, 32);
    }
    for (int i = 0; i < 2; i++) {
      uint64_t word = t->regs[in->operands[2].vector[i][0]][in->operands[2].vector[i][1]];
      b[tg + 4 * i][g] = ptxs_float(word & 0xffffe000u, 32);
    }
  }
  ptxs_mma_read_c(r, first, in, c);
  ptxs_mma_write_d(r, first, in, a, b, c, 8);
  return true;
}

/* ---- elt: mul.hi (the high half of the double-width product) ---- */
static uint64_t ptxs_mul_hi(bool is_signed, int bits, uint64_t a, uint64_t b) {
  uint64_t m = ptxs_mask(bits);
  if (is_signed) {
    __int128 p = (__int128)ptxs_signed(a, bits) * (__int128)ptxs_signed(b, bits);
    return (uint64_t)(p >> bits) & m;
  }
  unsigned __int128 p = (unsigned __int128)(a & m) * (b & m);
  return (uint64_t)(p >> bits) & m;
}

/* ---- Hopper: mbarrier, the TMA and wgmma (the GEMM's sm_90a path, src/emit_ptx/ptx_gemm_wgmma.c) ----
 * Bulk copies complete when they are issued, so a barrier's phase flips
 * as soon as its arrivals and its expected bytes are all in; a thread
 * whose try_wait finds its phase not yet complete waits
 * (PTXS_AT_MBARRIER) until another thread's copy or arrival completes it.
 * wgmma runs per thread: each computes its own fragment of D from shared
 * memory, which no thread changes between the warpgroup's wgmma and the
 * barrier after it. Completing at issue is one order the ISA allows (an
 * asynchronous copy may complete at any time before the mbarrier phase
 * that tracks it: "The tx-count has reached zero" is a condition of
 * "Phase completion of the mbarrier object"); a kernel that read the
 * copy's destination before waiting would pass here and fail on a GPU. */

/* The fake driver's tensor map (cuTensorMapEncodeTiled) in the 128 bytes:
 * the fake's own layout, since cuda.h declares the map only as "cuuint64_t
 * opaque[CU_TENSOR_MAP_NUM_QWORDS]". */
enum { PTXS_TENSOR_MAP_MAGIC = 0x544d4150 };
typedef struct PtxsTensorMap {
  uint32_t magic;
  uint8_t element_bytes, rank, swizzle, unused;  /* swizzle: 0 none, 3 128-byte */
  uint64_t address;
  uint64_t dims[5], strides[4];                  /* elements; bytes, of dims 1.. */
  uint32_t box[5];
} PtxsTensorMap;

/* An mbarrier's 8 bytes: arrivals pending and expected (bit 15 of the
 * second is the phase's parity), bytes still expected. The ISA's object
 * is opaque ("An opaque mbarrier object keeps track of ... Current phase
 * ... Count of pending arrivals for the current phase ... Count of
 * expected arrivals for the next phase ... tx-count", PTX ISA, Contents
 * of the mbarrier object); this is the simulator's own layout. */
typedef struct PtxsMbarrier {
  uint16_t pending, expected_and_phase;
  int32_t tx;
} PtxsMbarrier;

/* The shared bytes an operand ([%r+off] or [name+off]) addresses. */
static char *ptxs_shared_at(PtxsRun *r, PtxsThread *t, const PtxsOperand *o, int64_t bytes) {
  int64_t at = o->kind == PTXS_MEM_SHARED ? r->k->shared_offsets[o->symbol] : (int64_t)t->regs[o->cls][o->index];
  at += o->offset;
  return at >= 0 && at + bytes <= r->shared_limit ? r->shared + at : NULL;
}

/* "An mbarrier object completes the current phase when all of the
 * following conditions are met: The count of the pending arrivals has
 * reached zero. The tx-count has reached zero." Then "The mbarrier object
 * transitions to the next phase. The pending arrival count is
 * reinitialized to the expected arrival count." (PTX ISA, Phase
 * completion of the mbarrier object) */
static void ptxs_mbarrier_settle(PtxsMbarrier *m) {
  if (m->pending || m->tx) return;
  m->expected_and_phase ^= 0x8000;
  m->pending = m->expected_and_phase & 0x7fff;
}

/* try_wait.parity: "test for the completion of the phase indicated by the
 * operand phaseParity, which is the integer parity of either the current
 * phase or the immediately preceding phase" (PTX ISA, mbarrier.try_wait):
 * the parity of the current phase means not yet complete. */
static bool ptxs_mbarrier_phase_done(PtxsRun *r, PtxsThread *t) {
  const PtxsInst *in = &r->k->insts[t->pc];
  char *at = ptxs_shared_at(r, t, &in->operands[1], 8);
  if (!at) return true;  /* the retry fails with the out-of-bounds error */
  PtxsMbarrier m;
  memcpy(&m, at, sizeof m);
  return (unsigned)(m.expected_and_phase >> 15) != (unsigned)(ptxs_read(r, t, &in->operands[2]) & 1);
}

/* mbarrier.init / arrive[.expect_tx] / try_wait.parity. init: "Initializing
 * the current phase to 0. Initializing the expected arrival count to
 * count." The object is ".b64 | 8 | .shared" (type, alignment in bytes,
 * memory space: PTX ISA, Size and alignment of mbarrier object). */
static bool ptxs_mbarrier(PtxsRun *r, PtxsThread *t, const PtxsInst *in) {
  bool init = strstr(in->op, ".init") != NULL, wait = strstr(in->op, ".try_wait.parity") != NULL;
  const PtxsOperand *address = &in->operands[init ? 0 : 1];
  char *at = ptxs_shared_at(r, t, address, 8);
  if (!at) return ptxs_fail(r, false, "an mbarrier out of shared memory in", in->op);
  if ((at - r->shared) % 8) return ptxs_fail(r, false, "an mbarrier not aligned to 8 bytes in", in->op);
  PtxsMbarrier m;
  memcpy(&m, at, sizeof m);
  if (init) {
    uint64_t count = ptxs_read(r, t, &in->operands[1]);
    m = (PtxsMbarrier){(uint16_t)count, (uint16_t)count, 0};
  } else if (wait) {
    if (!ptxs_mbarrier_phase_done(r, t)) return t->state = PTXS_AT_MBARRIER, true;
    ptxs_write(t, &in->operands[0], 1);
  } else if (strstr(in->op, ".arrive")) {
    if (strstr(in->op, ".expect_tx")) m.tx += (int32_t)ptxs_read(r, t, &in->operands[2]);
    if (m.pending == 0) return ptxs_fail(r, false, "an arrival past the expected count in", in->op);
    m.pending--;
    ptxs_mbarrier_settle(&m);
  } else {
    return ptxs_fail(r, true, "unsupported", in->op);
  }
  memcpy(at, &m, sizeof m);
  t->pc++;
  return true;
}

/* Byte offset L of a box, at shared address `at`, with the map's swizzle:
 * the 16-byte chunk (bits 4-6) XOR the 128-byte row within 1024 (bits 7-9).
 * The ISA gives the 128B pattern only as a figure ("Swizzling Modes": the
 * 16-byte chunks of each 128-byte row permuted, "1024 bytes aligned",
 * "Pattern repeats"); this formula is read from it. */
static int64_t ptxs_swizzled(int swizzle, int64_t at) { return swizzle == 3 ? at ^ (((at >> 7) & 7) << 4) : at; }

/* cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
 * [dst], [map, {c0, ...}], [mbar]: the box at the coordinates, zeros where
 * it lies outside the tensor ("Zero fill mode: Elements in the Bounding Box
 * which fall outside of the tensor boundary are set to 0", PTX ISA, Out of
 * Boundary Access; the map's CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), then the
 * bytes complete on mbar. */
static bool ptxs_tensor_copy(PtxsRun *r, PtxsThread *t, const PtxsInst *in) {
  const PtxsOperand *tensor = &in->operands[1];
  const PtxsTensorMap *map = (const PtxsTensorMap *)(uintptr_t)t->regs[tensor->cls][tensor->index];
  if (!map || map->magic != PTXS_TENSOR_MAP_MAGIC || map->rank != tensor->count)
    return ptxs_fail(r, false, "not a tensor map of that rank in", in->op);
  if (map->swizzle != 0 && map->swizzle != 3) return ptxs_fail(r, true, "unsupported swizzle in", in->op);
  int64_t dst = (int64_t)t->regs[in->operands[0].cls][in->operands[0].index], volume = 1;
  if (map->swizzle == 3 && dst % 1024) return ptxs_fail(r, false, "a 128-byte swizzle into a shared address not 1024-aligned in", in->op);
  for (int d = 0; d < map->rank; d++) volume *= map->box[d];
  int eb = map->element_bytes;
  if (dst < 0 || dst + volume * eb > r->shared_limit) return ptxs_fail(r, false, "a tensor copy out of shared memory in", in->op);
  for (int64_t i = 0; i < volume; i++) {
    int64_t rest = i, offset = 0;
    bool inside = true;
    for (int d = 0; d < map->rank; d++) {
      int64_t g = (int32_t)t->regs[tensor->vector[d][0]][tensor->vector[d][1]] + rest % map->box[d];
      rest /= map->box[d];
      inside = inside && g >= 0 && (uint64_t)g < map->dims[d];
      offset += d ? g * (int64_t)map->strides[d - 1] : g * eb;
    }
    char *to = r->shared + ptxs_swizzled(map->swizzle, dst + i * eb);
    memset(to, 0, (size_t)eb);
    if (!inside) continue;
    void *from = ptxs_global(r, map->address + (uint64_t)offset, (size_t)eb);
    if (!from) return ptxs_fail(r, false, "a tensor copy outside every buffer in", in->op);
    memcpy(to, from, (size_t)eb);
  }
  char *bar = ptxs_shared_at(r, t, &in->operands[2], 8);
  if (!bar) return ptxs_fail(r, false, "an mbarrier out of shared memory in", in->op);
  PtxsMbarrier m;
  memcpy(&m, bar, sizeof m);
  m.tx -= (int32_t)(volume * eb);
  ptxs_mbarrier_settle(&m);
  memcpy(bar, &m, sizeof m);
  t->pc++;
  return true;
}

/* Element (row, k) of a K-major wgmma operand with the 128-byte swizzle:
 * rows 128 bytes apart within 8-row groups, groups `sbo` apart. The
 * descriptor (PTX ISA, Matrix Descriptor Format): "13–0 ...
 * matrix-descriptor-encode(Matrix start address)", "45–32 ... (Stride
 * dimension byte offset)", "51–49 ... Matrix base offset", "63–62 ...
 * swizzling mode ... 1: 128-Byte swizzle", where matrix-descriptor-encode(x)
 * is (x & 0x3FFFF) >> 4. */
static bool ptxs_wgmma_element(PtxsRun *r, uint64_t desc, int row, int k, bool bf16, float *v) {
  int64_t start = (int64_t)(desc & 0x3fff) << 4, sbo = (int64_t)((desc >> 32) & 0x3fff) << 4;
  if (desc >> 62 != 1 || ((desc >> 49) & 7)) return ptxs_fail(r, true, "unsupported wgmma descriptor layout", "");
  int64_t at = ptxs_swizzled(3, start + (row / 8) * sbo + (row % 8) * 128 + k * 2);
  if (at < 0 || at + 2 > r->shared_limit) return ptxs_fail(r, false, "a wgmma operand out of shared memory", "");
  uint16_t h;
  memcpy(&h, r->shared + at, 2);
  *v = bf16 ? ptxs_bf16_to_float(h) : ptxs_half_to_float(h);
  return true;
}

/* wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16} d, adesc,
 * bdesc, scale-d, scale-a, scale-b, 0, 0 for this thread's fragment of D:
 * lane l of warp v (of the warpgroup) holds rows 16v + l/4 (+ 8), columns
 * 8i + 2(l%4) (+ 1); element 4i + e is row + 8(e/2), column + e%2. */
static bool ptxs_wgmma(PtxsRun *r, PtxsThread *t, const PtxsInst *in) {
  int n = 0;
  const char *shape = strstr(in->op, ".m64n");
  bool bf16 = strstr(in->op, ".f32.bf16.bf16") != NULL;
  if (!shape || sscanf(shape, ".m64n%dk16", &n) != 1 || n % 8 || n > 256 || !(bf16 || strstr(in->op, ".f32.f16.f16")))
    return ptxs_fail(r, true, "unsupported", in->op);
  const PtxsOperand *d = &in->operands[0];
  if (in->count != 8 || d->kind != PTXS_VECTOR || d->count != n / 2) return ptxs_fail(r, false, "malformed", in->op);
  if (ptxs_read(r, t, &in->operands[6]) || ptxs_read(r, t, &in->operands[7]))
    return ptxs_fail(r, true, "unsupported transposed operand in", in->op);
  uint64_t adesc = ptxs_read(r, t, &in->operands[1]), bdesc = ptxs_read(r, t, &in->operands[2]);
  bool accumulate = ptxs_read(r, t, &in->operands[3]) != 0;
  double sign = (int64_t)ptxs_read(r, t, &in->operands[4]) * (int64_t)ptxs_read(r, t, &in->operands[5]) < 0 ? -1 : 1;
  unsigned within = (unsigned)(t - r->thread) % 128, lane = within % 32;
  int row0 = 16 * (int)(within / 32) + (int)lane / 4, column0 = 2 * (int)(lane % 4);
  float a[2][16], b[64][16];  /* the thread's 2 rows of A and n/4 columns of B */
  for (int k = 0; k < 16; k++) {
    for (int i = 0; i < 2; i++)
      if (!ptxs_wgmma_element(r, adesc, row0 + 8 * i, k, bf16, &a[i][k])) return false;
    for (int j = 0; j < n / 4; j++)
      if (!ptxs_wgmma_element(r, bdesc, column0 + 8 * (j / 2) + j % 2, k, bf16, &b[j][k])) return false;
  }
  for (int i = 0; i < n / 2; i++) {
    const int *reg = &r->k->wide[2 * (d->wide + i)];
    const float *x = a[(i % 4) / 2], *y = b[2 * (i / 4) + i % 2];
    double sum = accumulate ? ptxs_float(t->regs[reg[0]][reg[1]], 32) : 0;
    for (int k = 0; k < 16; k++) sum += sign * x[k] * y[k];
    t->regs[reg[0]][reg[1]] = ptxs_float_bits(sum, 32);
  }
  t->pc++;
  return true;
}

/* The Hopper instructions; *handled is false for every other op. */
static bool ptxs_hopper_step(PtxsRun *r, PtxsThread *t, const PtxsInst *in, bool *handled) {
  *handled = true;
  if (!strncmp(in->op, "mbarrier.", 9)) return ptxs_mbarrier(r, t, in);
  if (!strncmp(in->op, "cp.async.bulk.tensor.", 21)) return ptxs_tensor_copy(r, t, in);
  if (!strncmp(in->op, "wgmma.mma_async.", 16)) return ptxs_wgmma(r, t, in);
  /* completion is immediate here: fences and wgmma's group bookkeeping order nothing */
  if (!strncmp(in->op, "fence.", 6) || !strncmp(in->op, "wgmma.", 6)) return t->pc++, true;
  *handled = false;
  return true;
}
