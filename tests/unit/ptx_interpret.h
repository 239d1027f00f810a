/* A small interpreter for the straight-line PTX that ptx_math.c writes, so
 * that tests can run the transcription on the host and compare it with
 * math_reference.c bit for bit without a GPU.
 *
 * It knows the instructions the math sequences use and no others (an
 * unknown one fails the parse, so a new form in ptx_math.c shows up here):
 * mov, the .rn float arithmetic and fma in f32 and f64 (the host's IEEE
 * arithmetic: C's float ops, fmaf and fma round to nearest, as .rn does),
 * setp, selp, predicate logic, 32- and 64-bit integer ops, cvt, mul.wide,
 * mad.wide and ld.global from the one .global table the module declares.
 * Registers hold raw bits; every register class has its own file. The
 * test harness includes it into one test file only. */
#ifndef AXLE_TESTS_PTX_INTERPRET_H
#define AXLE_TESTS_PTX_INTERPRET_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PTXI_CLASSES = 6, PTXI_REGS = 4096, PTXI_MAX_OPERANDS = 4 };

/* An operand: a register (class, index), an immediate's bits, or memory
 * at a register plus an offset. */
typedef struct PtxiOperand {
  enum { PTXI_REG, PTXI_IMM, PTXI_MEM } kind;
  int cls, index;
  uint64_t bits;
  int64_t offset;
} PtxiOperand;

typedef struct PtxiInst {
  char op[40];
  int code;           /* index in ptxi_names, decoded once */
  int count;
  PtxiOperand operands[PTXI_MAX_OPERANDS];
} PtxiInst;

typedef struct PtxiProgram {
  int count, capacity;
  PtxiInst *insts;
  const uint32_t *table;    /* the .global array's words */
  int table_words;
  uint64_t regs[PTXI_CLASSES][PTXI_REGS];
  char error[256];
} PtxiProgram;

static int ptxi_decode(const char *op);

/* Register classes, longest prefix first: %rd before %r, %fd before %f. */
static int ptxi_class(const char *s, int *length) {
  static const char *const prefixes[] = {"%rd", "%fd", "%p", "%h", "%r", "%f"};
  for (int i = 0; i < 6; i++) {
    size_t n = strlen(prefixes[i]);
    if (strncmp(s, prefixes[i], n) == 0 && s[n] >= '0' && s[n] <= '9') {
      *length = (int)n;
      return i;
    }
  }
  return -1;
}

/* The table symbol's address: it is the only one the sequences name. */
enum { PTXI_TABLE_ADDRESS = 0x1000 };

static bool ptxi_operand_parse(PtxiProgram *p, char *text, PtxiOperand *o) {
  while (*text == ' ') text++;
  memset(o, 0, sizeof *o);
  int n;
  if (text[0] == '[') {
    o->kind = PTXI_MEM;
    char *plus = strchr(text, '+');
    o->offset = plus ? strtoll(plus + 1, NULL, 10) : 0;
    o->cls = ptxi_class(text + 1, &n);
    o->index = atoi(text + 1 + n);
    return o->cls >= 0;
  }
  if (text[0] == '%') {
    o->kind = PTXI_REG;
    o->cls = ptxi_class(text, &n);
    o->index = atoi(text + n);
    return o->cls >= 0 && o->index < PTXI_REGS;
  }
  o->kind = PTXI_IMM;
  if (text[0] == '0' && (text[1] == 'f' || text[1] == 'd' || text[1] == 'x')) o->bits = strtoull(text + 2, NULL, 16);
  else if ((text[0] >= '0' && text[0] <= '9') || text[0] == '-') o->bits = (uint64_t)strtoll(text, NULL, 10);
  else if (strncmp(text, "axle_math_two_over_pi", 21) == 0) o->bits = PTXI_TABLE_ADDRESS;
  else if (strncmp(text, "axle_math_erfc_rows", 19) == 0) o->bits = PTXI_TABLE_ADDRESS; /* the test sets the table */
  else {
    snprintf(p->error, sizeof p->error, "unknown operand '%s'", text);
    return false;
  }
  return true;
}

/* Parses the body's instructions (comments and blank lines skipped). */
static bool ptxi_parse(PtxiProgram *p, const char *body) {
  const char *line = body;
  while (line && *line) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    char text[512];
    snprintf(text, sizeof text, "%.*s", (int)(n < 511 ? n : 511), line);
    line = end ? end + 1 : NULL;
    char *t = text;
    while (*t == '\t' || *t == ' ') t++;
    if (!*t || strncmp(t, "//", 2) == 0) continue;
    char *semicolon = strchr(t, ';');
    if (semicolon) *semicolon = 0;
    if (p->count == p->capacity) {
      p->capacity = p->capacity ? 2 * p->capacity : 256;
      p->insts = realloc(p->insts, (size_t)p->capacity * sizeof *p->insts);
    }
    PtxiInst *inst = &p->insts[p->count++];
    memset(inst, 0, sizeof *inst);
    char *space = strchr(t, ' ');
    if (!space) {
      snprintf(p->error, sizeof p->error, "no operands: %.200s", t);
      return false;
    }
    *space = 0;
    snprintf(inst->op, sizeof inst->op, "%.39s", t);
    inst->code = ptxi_decode(inst->op);
    if (inst->code < 0) {
      snprintf(p->error, sizeof p->error, "unknown instruction %s", inst->op);
      return false;
    }
    for (char *arg = strtok(space + 1, ","); arg; arg = strtok(NULL, ",")) {
      if (inst->count == PTXI_MAX_OPERANDS || !ptxi_operand_parse(p, arg, &inst->operands[inst->count++])) {
        if (!p->error[0]) snprintf(p->error, sizeof p->error, "bad operands in %s", inst->op);
        return false;
      }
    }
    if (inst->count == 0 || inst->operands[0].kind != PTXI_REG) {
      snprintf(p->error, sizeof p->error, "%s writes no register", inst->op);
      return false;
    }
  }
  return true;
}

static uint64_t ptxi_read(PtxiProgram *p, const PtxiOperand *o) {
  return o->kind == PTXI_REG ? p->regs[o->cls][o->index] : o->bits;
}
static float ptxi_f32(uint64_t bits) {
  uint32_t b = (uint32_t)bits;
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}
static double ptxi_f64(uint64_t bits) {
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}
static uint64_t ptxi_bits32(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}
static uint64_t ptxi_bits64(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

/* PTX's float-to-integer conversions saturate ("For float-to-integer
 * conversions, the result is clamped to the destination range by
 * default", PTX ISA, cvt, Integer Notes). NaN: "In float-to-integer
 * conversions, depending upon conversion types, NaN input results in
 * following value: 1. Zero if source is not .f64 and destination is not
 * .s64, .u64. 2. Otherwise 1 << (BitWidth(dst) - 1) corresponding to the
 * value of (MAXINT >> 1) + 1 for unsigned type or MININT for signed
 * type." (same section): 0 for cvt.rzi.s32.f32, INT64_MIN for
 * cvt.rzi.s64.f64. */
static int32_t ptxi_s32_of(double x) {
  if (x != x) return 0;
  if (x >= 2147483647.0) return INT32_MAX;
  if (x <= -2147483648.0) return INT32_MIN;
  return (int32_t)x;
}
static int64_t ptxi_s64_of(double x) {
  if (x != x) return INT64_MIN;
  if (x >= 9223372036854775807.0) return INT64_MAX;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)x;
}

/* The instructions it knows, by their full PTX spelling; a setp is
 * decoded into its comparison and type instead. */
static const char *const ptxi_names[] = {
    "mov",          "add.rn.f32",   "sub.rn.f32",      "mul.rn.f32",     "div.rn.f32",      "fma.rn.f32",
    "sqrt.rn.f32",  "neg.f32",      "add.rn.f64",      "sub.rn.f64",     "mul.rn.f64",      "div.rn.f64",
    "fma.rn.f64",   "selp",         "and",             "or",             "xor.pred",        "not.pred",
    "shl.b32",      "shr.u32",      "shr.s32",         "add.s32",        "add.u32",         "sub.s32",
    "mul.lo.s32",   "mul.lo.u32",   "min.s32",         "max.s32",        "shl.b64",         "shr.u64",
    "add.s64",      "sub.s64",      "mul.wide.u32",    "mad.wide.s32",   "cvt.rzi.s32.f32", "cvt.rn.f32.s32",
    "cvt.u32.u64",  "cvt.u64.u32",  "cvt.f64.f32",     "cvt.rn.f64.s32", "cvt.rzi.s64.f64", "cvt.rn.f32.f64",
    "ld.global.nc.u32",
    /* ptx_math_f64.c's */
    "neg.f64",      "sqrt.rn.f64",  "shr.s64",         "cvt.rn.f64.s64", "ld.global.nc.u64", "mul.lo.u64",
    "ld.global.nc.f64", "mul.lo.s64",
};
enum { PTXI_NAME_COUNT = sizeof ptxi_names / sizeof *ptxi_names, PTXI_SETP = 1000 };

/* setp.HOW.TYPE as PTXI_SETP + 10 * how + type. */
static int ptxi_decode(const char *op) {
  if (!strncmp(op, "setp.", 5)) {
    static const char *const hows[] = {"lt", "gt", "eq", "ne", "nan", "le"};
    static const char *const types[] = {"f32", "f64", "s32", "u64", "s64"};
    for (int h = 0; h < 6; h++)
      for (int t = 0; t < 5; t++) {
        char name[32];
        snprintf(name, sizeof name, "setp.%s.%s", hows[h], types[t]);
        if (!strcmp(op, name)) return PTXI_SETP + 10 * h + t;
      }
    return -1;
  }
  for (int i = 0; i < PTXI_NAME_COUNT; i++) {
    size_t n = strlen(ptxi_names[i]);
    bool prefix = i == 0 || i == 13 || i == 14 || i == 15; /* mov.*, selp.*, and.*, or.* */
    if (prefix ? !strncmp(op, ptxi_names[i], n) && op[n] == '.' : !strcmp(op, ptxi_names[i])) return i;
  }
  return -1;
}

static bool ptxi_compare(int how, double a, double b) {
  switch (how) {
  case 0: return a < b;
  case 1: return a > b;
  case 2: return a == b;
  case 3: return a != b;
  case 5: return a <= b;
  default: return a != a || b != b;
  }
}

/* One instruction. */
static bool ptxi_step(PtxiProgram *p, const PtxiInst *in) {
  uint64_t a = in->count > 1 ? ptxi_read(p, &in->operands[1]) : 0;
  uint64_t b = in->count > 2 ? ptxi_read(p, &in->operands[2]) : 0;
  uint64_t c = in->count > 3 ? ptxi_read(p, &in->operands[3]) : 0;
  uint64_t d = 0;
  float fa = ptxi_f32(a), fb = ptxi_f32(b), fc = ptxi_f32(c);
  double da = ptxi_f64(a), db = ptxi_f64(b), dc = ptxi_f64(c);
  int32_t sa = (int32_t)a, sb = (int32_t)b;
  uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
  if (in->code >= PTXI_SETP) {
    int how = (in->code - PTXI_SETP) / 10, type = (in->code - PTXI_SETP) % 10;
    if (type == 0) d = ptxi_compare(how, fa, fb);
    else if (type == 1) d = ptxi_compare(how, da, db);
    else if (type == 2) d = ptxi_compare(how, sa, sb);
    else if (type == 4) d = how == 0 ? (int64_t)a < (int64_t)b : how == 1 ? (int64_t)a > (int64_t)b
                          : how == 2 ? a == b : how == 3 ? a != b : how == 5 ? (int64_t)a <= (int64_t)b : 0;
    else d = how == 2 ? a == b : how == 3 ? a != b : how == 0 ? a < b : 0; /* u64: lt is unsigned */
  } else {
    switch (in->code) {
    case 0: d = a; break;
    case 1: d = ptxi_bits32(fa + fb); break;
    case 2: d = ptxi_bits32(fa - fb); break;
    case 3: d = ptxi_bits32(fa * fb); break;
    case 4: d = ptxi_bits32(fa / fb); break;
    case 5: d = ptxi_bits32(fmaf(fa, fb, fc)); break;
    case 6: d = ptxi_bits32(sqrtf(fa)); break;
    case 7: d = ua ^ 0x80000000u; break;
    case 8: d = ptxi_bits64(da + db); break;
    case 9: d = ptxi_bits64(da - db); break;
    case 10: d = ptxi_bits64(da * db); break;
    case 11: d = ptxi_bits64(da / db); break;
    case 12: d = ptxi_bits64(fma(da, db, dc)); break;
    case 13: d = c ? a : b; break;
    case 14: d = a & b; break;
    case 15: d = a | b; break;
    case 16: d = a ^ b; break;
    case 17: d = !a; break;
    case 18: d = ub >= 32 ? 0 : (uint32_t)(ua << ub); break;
    case 19: d = ub >= 32 ? 0 : ua >> ub; break;
    case 20: d = (uint32_t)(sa >> (ub >= 32 ? 31 : ub)); break;
    case 21: case 22: d = (uint32_t)(ua + ub); break;
    case 23: d = (uint32_t)(ua - ub); break;
    case 24: case 25: d = (uint32_t)(ua * ub); break;
    case 26: d = (uint32_t)(sa < sb ? sa : sb); break;
    case 27: d = (uint32_t)(sa > sb ? sa : sb); break;
    case 28: d = b >= 64 ? 0 : a << b; break;
    case 29: d = b >= 64 ? 0 : a >> b; break;
    case 30: d = a + b; break;
    case 31: d = a - b; break;
    case 32: d = (uint64_t)ua * ub; break;
    case 33: d = (uint64_t)((int64_t)sa * (int64_t)sb) + c; break;
    case 34: d = (uint32_t)ptxi_s32_of(fa); break;
    case 35: d = ptxi_bits32((float)sa); break;
    case 36: d = (uint32_t)a; break;
    case 37: d = ua; break;
    case 38: d = ptxi_bits64((double)fa); break;
    case 39: d = ptxi_bits64((double)sa); break;
    case 40: d = (uint64_t)ptxi_s64_of(da); break;
    case 41: d = ptxi_bits32((float)da); break;
    case 42: {
      const PtxiOperand *m = &in->operands[1];
      int64_t at = (int64_t)p->regs[m->cls][m->index] + m->offset - PTXI_TABLE_ADDRESS;
      if (at < 0 || at % 4 || at / 4 >= p->table_words) {
        snprintf(p->error, sizeof p->error, "load outside the table at %lld", (long long)at);
        return false;
      }
      d = p->table[at / 4];
      break;
    }
    case 43: d = a ^ (UINT64_C(1) << 63); break;
    case 44: d = ptxi_bits64(sqrt(da)); break;
    case 45: d = (uint64_t)((int64_t)a >> (b >= 64 ? 63 : b)); break;
    case 46: d = ptxi_bits64((double)(int64_t)a); break;
    case 47: case 49: {
      const PtxiOperand *m = &in->operands[1];
      int64_t at = (int64_t)p->regs[m->cls][m->index] + m->offset - PTXI_TABLE_ADDRESS;
      if (at < 0 || at % 8 || at / 4 + 1 >= p->table_words) {
        snprintf(p->error, sizeof p->error, "load outside the table at %lld", (long long)at);
        return false;
      }
      d = p->table[at / 4] | (uint64_t)p->table[at / 4 + 1] << 32; /* little-endian, as the device */
      break;
    }
    case 48: case 50: d = a * b; break;
    }
  }
  p->regs[in->operands[0].cls][in->operands[0].index] = d;
  return true;
}

static bool ptxi_run(PtxiProgram *p) {
  for (int i = 0; i < p->count; i++)
    if (!ptxi_step(p, &p->insts[i])) return false;
  return true;
}

#endif
