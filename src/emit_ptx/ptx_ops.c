/* HLO elementwise ops as PTX: one table, read by ptx_emit_elementwise.
 *
 * Each row says how one op is written for a set of element types, as a
 * template of one or more PTX instructions. The first row whose op and
 * types match and whose min_sm the target reaches is used; an op with no
 * such row is refused with a message, never emitted wrong. Types the table
 * does not list on purpose:
 *   - s8/u8/s16/u16: PTX has no 8-bit arithmetic and its 16-bit shifts do
 *     not clamp at the element width; ptx_int.c widens these to 32 bits.
 *   - f16/bf16 arithmetic where PTX lacks it (division, bf16 add before
 *     sm_90): emitters compute in f32 and round once at the end; the f8/f4
 *     minifloats likewise (ptx_minifloat.c).
 *   - complex: split into real ops first (ptx_complex.c).
 *   - s4/u4/s2/u2 and pred arithmetic: ptx_int.c.
 *
 * Row legend:   {op, types, to, min_sm, template}
 *   types     operand element types the row covers (a T_ mask); for
 *             convert, the source types
 *   to        convert only: the destination types covered
 *   min_sm    the oldest target with every instruction of the template
 *   template  PTX instructions separated by ';', with these expansions:
 *     $d  the result register          $a $b $c  the operands
 *     $t  the operand type (.f32)      $T  the result type (convert)
 *     $B  the operand's bit type (.b32; .pred for pred)
 *     $S  $U  the signed / unsigned integer type of the operand's width
 *     $C  the comparison for compare (eq, neu, lt, lo ...)
 *     $q  a fresh predicate    $u  a fresh .u32    $w  a fresh register of
 *         the operand's type (one each per use of the template)
 */
#include <assert.h>
#include <string.h>

#include "emit_ptx/ptx_builder.h"

enum {
  T_PRED = 1 << TYPE_PRED,
  T_S32 = 1 << TYPE_S32, T_U32 = 1 << TYPE_U32, T_S64 = 1 << TYPE_S64, T_U64 = 1 << TYPE_U64,
  T_F16 = 1 << TYPE_F16, T_BF16 = 1 << TYPE_BF16, T_F32 = 1 << TYPE_F32, T_F64 = 1 << TYPE_F64,
  T_SINT = T_S32 | T_S64, T_UINT = T_U32 | T_U64, T_INT = T_SINT | T_UINT,
  T_INT32 = T_S32 | T_U32, T_INT64 = T_S64 | T_U64,
  T_FLOAT = T_F32 | T_F64, T_ANY_FLOAT = T_FLOAT | T_F16 | T_BF16,
  T_VALUE = T_INT | T_ANY_FLOAT,
};
_Static_assert(TYPE_COUNT <= 31, "the T_ masks are int bit sets over ElementType");

typedef struct PtxOpRow {
  Opcode op;
  int types, to;
  int min_sm;
  const char *asm_template;
} PtxOpRow;

/* clang-format off */
static const PtxOpRow ptx_op_rows[] = {
  /* arithmetic: IEEE round-to-nearest, as HLO means it (no .approx, no .ftz) */
  {OP_ADD,      T_FLOAT,          0, 80, "add.rn$t $d, $a, $b"},
  {OP_ADD,      T_F16,            0, 80, "add.rn.f16 $d, $a, $b"},
  {OP_ADD,      T_BF16,           0, 90, "add.rn.bf16 $d, $a, $b"},
  {OP_ADD,      T_INT,            0, 80, "add$t $d, $a, $b"},
  {OP_SUBTRACT, T_FLOAT,          0, 80, "sub.rn$t $d, $a, $b"},
  {OP_SUBTRACT, T_F16,            0, 80, "sub.rn.f16 $d, $a, $b"},
  {OP_SUBTRACT, T_BF16,           0, 90, "sub.rn.bf16 $d, $a, $b"},
  {OP_SUBTRACT, T_INT,            0, 80, "sub$t $d, $a, $b"},
  {OP_MULTIPLY, T_FLOAT,          0, 80, "mul.rn$t $d, $a, $b"},
  {OP_MULTIPLY, T_F16,            0, 80, "mul.rn.f16 $d, $a, $b"},
  {OP_MULTIPLY, T_BF16,           0, 90, "mul.rn.bf16 $d, $a, $b"},
  {OP_MULTIPLY, T_INT,            0, 80, "mul.lo$t $d, $a, $b"},
  {OP_MULHI,    T_INT,            0, 80, "mul.hi$t $d, $a, $b"},
  {OP_DIVIDE,   T_FLOAT,          0, 80, "div.rn$t $d, $a, $b"},
  /* HLO integer division never traps: x / 0 is all ones (-1, or the
   * maximum unsigned), INT_MIN / -1 is INT_MIN (-x wraps). PTX leaves both
   * unspecified, so the answer is fixed up after the divide. */
  {OP_DIVIDE,   T_UINT,           0, 80, "div$t $d, $a, $b; setp.eq$t $q, $b, 0; @$q mov$B $d, -1"},
  {OP_DIVIDE,   T_SINT,           0, 80, "div$t $d, $a, $b; setp.eq$t $q, $b, -1; @$q neg$t $d, $a; "
                                         "setp.eq$t $q, $b, 0; @$q mov$B $d, -1"},
  /* maximum/minimum propagate NaN in HLO; PTX's plain max returns the other
   * operand, and max.NaN has no f64 form, hence the f64 fix-up. Of two
   * equal operands (-0 and +0) the evaluator returns the left one, where
   * PTX orders -0 below +0: the setp.eq fix-up. */
  {OP_MAXIMUM,  T_F32,            0, 80, "max.NaN$t $d, $a, $b; setp.eq$t $q, $a, $b; @$q mov$B $d, $a"},
  {OP_MAXIMUM,  T_F16|T_BF16,     0, 80, "max.NaN$t $d, $a, $b"},   /* unused: halves compute in f32 */
  {OP_MAXIMUM,  T_F64,            0, 80, "max.f64 $d, $a, $b; setp.nan.f64 $q, $a, $b; @$q add.f64 $d, $a, $b; "
                                         "setp.eq.f64 $q, $a, $b; @$q mov.b64 $d, $a"},
  {OP_MAXIMUM,  T_INT,            0, 80, "max$t $d, $a, $b"},
  {OP_MINIMUM,  T_F32,            0, 80, "min.NaN$t $d, $a, $b; setp.eq$t $q, $a, $b; @$q mov$B $d, $a"},
  {OP_MINIMUM,  T_F16|T_BF16,     0, 80, "min.NaN$t $d, $a, $b"},   /* unused: halves compute in f32 */
  {OP_MINIMUM,  T_F64,            0, 80, "min.f64 $d, $a, $b; setp.nan.f64 $q, $a, $b; @$q add.f64 $d, $a, $b; "
                                         "setp.eq.f64 $q, $a, $b; @$q mov.b64 $d, $a"},
  {OP_MINIMUM,  T_INT,            0, 80, "min$t $d, $a, $b"},
  /* negate and abs flip or clear the sign bit, NaNs included, as the
   * evaluator does (a bitcast-convert or an f4e2m1fn convert sees a NaN's
   * sign): PTX's neg and abs.f32 leave a NaN's result unspecified ("NaN
   * inputs yield an unspecified NaN", PTX ISA, neg and abs), so f32 and f64
   * work on the bits (a .b32 instruction takes an .f32 register: "The
   * bit-size type is compatible with any fundamental type having the same
   * size"). */
  {OP_NEGATE,   T_F32,            0, 80, "xor.b32 $d, $a, 0x80000000"},
  {OP_NEGATE,   T_F64,            0, 80, "xor.b64 $d, $a, 0x8000000000000000"},
  {OP_NEGATE,   T_F16|T_BF16,     0, 80, "neg$t $d, $a"},   /* unused: halves compute in f32 */
  {OP_NEGATE,   T_INT,            0, 80, "neg$S $d, $a"},
  {OP_ABS,      T_F32,            0, 80, "and.b32 $d, $a, 0x7FFFFFFF"},
  {OP_ABS,      T_F64,            0, 80, "and.b64 $d, $a, 0x7FFFFFFFFFFFFFFF"},
  {OP_ABS,      T_F16|T_BF16,     0, 80, "abs$t $d, $a"},   /* unused: halves compute in f32 */
  /* abs(INT_MIN) = INT_MIN, as in HLO; the ISA's abs says only "d = |a|",
   * silent on INT_MIN (the simulator wraps, as two's complement does) */
  {OP_ABS,      T_SINT,           0, 80, "abs$t $d, $a"},
  {OP_ABS,      T_UINT,           0, 80, "mov$B $d, $a"},
  {OP_SQRT,     T_FLOAT,          0, 80, "sqrt.rn$t $d, $a"},
  /* rounding to an integral value in the float type: exact, no range issue */
  {OP_FLOOR,    T_FLOAT|T_F16,    0, 80, "cvt.rmi$t$t $d, $a"},
  {OP_CEIL,     T_FLOAT|T_F16,    0, 80, "cvt.rpi$t$t $d, $a"},
  {OP_ROUND_NEAREST_EVEN, T_FLOAT|T_F16, 0, 80, "cvt.rni$t$t $d, $a"},
  {OP_IS_FINITE, T_FLOAT,         0, 80, "testp.finite$t $d, $a"},

  /* bitwise and shifts. PTX clamps a shift count at the width, as HLO
   * wants (a count read as unsigned; at or past the width: 0, or the sign
   * fill for the arithmetic shift), but takes the count as a .u32, so a
   * 64-bit count is clamped to 64 first rather than truncated. */
  {OP_AND,      T_INT|T_PRED,     0, 80, "and$B $d, $a, $b"},
  {OP_OR,       T_INT|T_PRED,     0, 80, "or$B $d, $a, $b"},
  {OP_XOR,      T_INT|T_PRED,     0, 80, "xor$B $d, $a, $b"},
  {OP_NOT,      T_INT|T_PRED,     0, 80, "not$B $d, $a"},
  {OP_SHIFT_LEFT,             T_INT32, 0, 80, "shl$B $d, $a, $b"},
  {OP_SHIFT_LEFT,             T_INT64, 0, 80, "min.u64 $w, $b, 64; cvt.u32.u64 $u, $w; shl$B $d, $a, $u"},
  {OP_SHIFT_RIGHT_LOGICAL,    T_INT32, 0, 80, "shr$U $d, $a, $b"},
  {OP_SHIFT_RIGHT_LOGICAL,    T_INT64, 0, 80, "min.u64 $w, $b, 64; cvt.u32.u64 $u, $w; shr$U $d, $a, $u"},
  {OP_SHIFT_RIGHT_ARITHMETIC, T_INT32, 0, 80, "shr$S $d, $a, $b"},
  {OP_SHIFT_RIGHT_ARITHMETIC, T_INT64, 0, 80, "min.u64 $w, $b, 64; cvt.u32.u64 $u, $w; shr$S $d, $a, $u"},
  {OP_POPCNT,   T_INT32,          0, 80, "popc$B $d, $a"},
  {OP_POPCNT,   T_INT64,          0, 80, "popc$B $u, $a; cvt.u64.u32 $d, $u"},
  {OP_CLZ,      T_INT32,          0, 80, "clz$B $d, $a"},
  {OP_CLZ,      T_INT64,          0, 80, "clz$B $u, $a; cvt.u64.u32 $d, $u"},

  /* compare gives a predicate; select chooses with one ($a is the pred) */
  {OP_COMPARE,  T_FLOAT|T_INT|T_F16, 0, 80, "setp$C$t $d, $a, $b"},
  {OP_COMPARE,  T_BF16,           0, 90, "setp$C$t $d, $a, $b"},
  {OP_SELECT,   T_VALUE,          0, 80, "selp$B $d, $b, $c, $a"},

  /* convert: float to integer truncates toward zero and PTX saturates at
   * the integer's range ("For float-to-integer conversions, the result is
   * clamped to the destination range by default", PTX ISA, cvt), which is
   * HLO's rule; HLO's NaN gives 0, which cvt gives only where "source is
   * not .f64 and destination is not .s64, .u64" (else "1 << (BitWidth(dst)
   * - 1)", same section), so the other forms select 0 for NaN. Narrowing
   * float conversions round to nearest even; integer narrowing wraps. */
  {OP_CONVERT,  T_F32,  T_F64,            80, "cvt$T$t $d, $a"},
  {OP_CONVERT,  T_F16,  T_FLOAT,          80, "cvt$T$t $d, $a"},
  {OP_CONVERT,  T_F64,  T_F32|T_F16,      80, "cvt.rn$T$t $d, $a"},
  {OP_CONVERT,  T_F32,  T_F16,            80, "cvt.rn$T$t $d, $a"},
  {OP_CONVERT,  T_F32,  T_BF16,           80, "cvt.rn$T$t $d, $a"},
  {OP_CONVERT,  T_F64,  T_BF16,           90, "cvt.rn$T$t $d, $a"},
  {OP_CONVERT,  T_BF16, T_FLOAT,          90, "cvt$T$t $d, $a"},
  /* before sm_90 no cvt reads bf16; its bits are the top half of an f32 */
  {OP_CONVERT,  T_BF16, T_F32,            80, "cvt.u32.u16 $u, $a; shl.b32 $u, $u, 16; mov.b32 $d, $u"},
  {OP_CONVERT,  T_F32|T_F16, T_INT32,     80, "cvt.rzi$T$t $d, $a"},
  {OP_CONVERT,  T_F32|T_F16, T_INT64,     80, "cvt.rzi$T$t $d, $a; setp.nan$t $q, $a, $a; @$q mov$T $d, 0"},
  {OP_CONVERT,  T_F64,  T_INT,            80, "cvt.rzi$T$t $d, $a; setp.nan$t $q, $a, $a; @$q mov$T $d, 0"},
  {OP_CONVERT,  T_INT,  T_FLOAT|T_F16,    80, "cvt.rn$T$t $d, $a"},
  {OP_CONVERT,  T_INT,  T_INT,            80, "cvt$T$t $d, $a"},
  /* x != 0, so NaN converts to true */
  {OP_CONVERT,  T_INT,  T_PRED,           80, "setp.ne$t $d, $a, 0"},
  {OP_CONVERT,  T_F32,  T_PRED,           80, "setp.neu$t $d, $a, 0f00000000"},
  {OP_CONVERT,  T_F64,  T_PRED,           80, "setp.neu$t $d, $a, 0d0000000000000000"},
  {OP_CONVERT,  T_PRED, T_INT,            80, "selp$T $d, 1, 0, $a"},
  {OP_CONVERT,  T_PRED, T_F32,            80, "selp.f32 $d, 0f3F800000, 0f00000000, $a"},
  {OP_CONVERT,  T_PRED, T_F64,            80, "selp.f64 $d, 0d3FF0000000000000, 0d0000000000000000, $a"},
  {OP_CONVERT,  T_PRED, T_PRED,           80, "mov.pred $d, $a"},
};
/* clang-format on */

/* The HLO math functions that PTX has no accurate instruction for: only
 * .approx forms (ex2, lg2, sin, cos, tanh, rsqrt) with errors far beyond a
 * few ulp at the ends of their ranges, or nothing at all. Each needs a
 * software sequence (range reduction, a polynomial, special cases) shared
 * with the CPU backend's vector math; until one is written, the op is
 * refused rather than computed badly. */
static const Opcode ptx_math_sequence_ops[] = {
    OP_EXPONENTIAL, OP_EXPONENTIAL_MINUS_ONE, OP_LOG, OP_LOG_PLUS_ONE, OP_LOGISTIC, OP_TANH,
    OP_SINE,        OP_COSINE,                OP_TAN, OP_ATAN2,       OP_POWER,    OP_ERF,
    OP_CBRT,        OP_RSQRT,                 OP_REMAINDER,
    OP_ATAN,        OP_ASIN,                  OP_ACOS,        OP_SINH,        OP_COSH,     OP_ASINH,
    OP_ACOSH,       OP_ATANH,
};

bool ptx_op_needs_math_sequence(Opcode op) {
  for (size_t i = 0; i < sizeof ptx_math_sequence_ops / sizeof *ptx_math_sequence_ops; i++)
    if (ptx_math_sequence_ops[i] == op) return true;
  return false;
}

/* ---- template expansion ---- */

/* setp's comparison: NE is unordered (true when a NaN is involved, as HLO's
 * compare NE is); the others are ordered (false with a NaN). Unsigned
 * integers compare with lo/ls/hi/hs. */
static const char *compare_name(CompareDirection dir, ElementType t) {
  static const char *const ordered[] = {[CMP_EQ] = ".eq", [CMP_NE] = ".neu", [CMP_LT] = ".lt",
                                        [CMP_LE] = ".le", [CMP_GT] = ".gt",   [CMP_GE] = ".ge"};
  static const char *const signed_names[] = {[CMP_EQ] = ".eq", [CMP_NE] = ".ne", [CMP_LT] = ".lt",
                                     [CMP_LE] = ".le", [CMP_GT] = ".gt", [CMP_GE] = ".ge"};
  static const char *const unsigned_names[] = {[CMP_EQ] = ".eq", [CMP_NE] = ".ne", [CMP_LT] = ".lo",
                                     [CMP_LE] = ".ls", [CMP_GT] = ".hi", [CMP_GE] = ".hs"};
  switch (type_kind(t)) {
  case TYPE_KIND_FLOAT: return ordered[dir];
  case TYPE_KIND_UINT: return unsigned_names[dir];
  default: return signed_names[dir];
  }
}

static PtxType width_type(PtxType t, char kind) {
  int bytes = ptx_type_byte_size(t);
  if (t == PTX_PRED) return PTX_PRED;
  if (bytes <= 2) return kind == 'b' ? PTX_B16 : kind == 's' ? PTX_S16 : PTX_U16;
  if (bytes == 4) return kind == 'b' ? PTX_B32 : kind == 's' ? PTX_S32 : PTX_U32;
  return kind == 'b' ? PTX_B64 : kind == 's' ? PTX_S64 : PTX_U64;
}

typedef struct Expansion {
  const PtxElementwise *e;
  PtxType type, result_type;
  PtxReg dst;
  const PtxReg *operands;
  PtxReg temps[3];   /* $q $u $w, made on first use */
  bool temp_made[3];
} Expansion;

/* which: 0 for $q, 1 for $u, 2 for $w */
static PtxReg expansion_temp(PtxBuilder *b, Expansion *x, int which) {
  if (!x->temp_made[which]) {
    PtxType t = which == 0 ? PTX_PRED : which == 1 ? PTX_U32 : x->type;
    x->temps[which] = ptx_reg_new(b, t);
    x->temp_made[which] = true;
  }
  return x->temps[which];
}

/* Writes one instruction of the template (text up to ';'), expanded. */
static const char *expand_instruction(PtxBuilder *b, Expansion *x, const char *p) {
  StrBuf line = {0};
  char reg[32];
  for (; *p && *p != ';'; p++) {
    if (*p != '$') {
      strbuf_printf(&line, "%c", *p);
      continue;
    }
    const char *text = NULL;
    switch (*++p) {
    case 'd': ptx_reg_name(x->dst, reg, sizeof reg), text = reg; break;
    case 'a': case 'b': case 'c': ptx_reg_name(x->operands[*p - 'a'], reg, sizeof reg), text = reg; break;
    case 't': text = ptx_type_suffix(x->type); break;
    case 'T': text = ptx_type_suffix(x->result_type); break;
    case 'B': text = ptx_type_suffix(width_type(x->type, 'b')); break;
    case 'S': text = ptx_type_suffix(width_type(x->type, 's')); break;
    case 'U': text = ptx_type_suffix(width_type(x->type, 'u')); break;
    case 'C': text = compare_name(x->e->direction, x->e->type); break;
    case 'q': ptx_reg_name(expansion_temp(b, x, 0), reg, sizeof reg), text = reg; break;
    case 'u': ptx_reg_name(expansion_temp(b, x, 1), reg, sizeof reg), text = reg; break;
    case 'w': ptx_reg_name(expansion_temp(b, x, 2), reg, sizeof reg), text = reg; break;
    default: assert(!"ptx_op_rows: unknown $ in a template"); break;
    }
    if (text) strbuf_printf(&line, "%s", text);
  }
  /* ptx_inst reads '$' as a directive: the text goes in through $s. */
  ptx_inst(b, "$s", line.data ? line.data : "");
  strbuf_free(&line);
  if (*p == ';') p++;
  while (*p == ' ') p++;
  return p;
}

static const PtxOpRow *row_find(const PtxElementwise *e, int sm, bool *needs_newer_target) {
  int type_bit = 1 << e->type, to_bit = 1 << e->result_type;
  *needs_newer_target = false;
  for (size_t i = 0; i < sizeof ptx_op_rows / sizeof *ptx_op_rows; i++) {
    const PtxOpRow *row = &ptx_op_rows[i];
    if (row->op != e->op || !(row->types & type_bit)) continue;
    if (e->op == OP_CONVERT && !(row->to & to_bit)) continue;
    if (row->min_sm > sm) {
      *needs_newer_target = true;
      continue;
    }
    return row;
  }
  return NULL;
}

static bool refuse(const PtxElementwise *e, const PtxTarget *target, bool needs_newer_target, Status *st) {
  const char *op = opcode_name(e->op), *type = type_name(e->type);
  if (ptx_op_needs_math_sequence(e->op) && e->type == TYPE_F64)
    return status_error(st, STATUS_UNSUPPORTED,
                        "%s on f64 on the GPU needs a software math sequence (the f64 paths of "
                        "src/ir/kernel/math_reference_f64.c), not transcribed to PTX yet (PTX has only approximate "
                        "instructions for it)",
                        op);
  if (ptx_op_needs_math_sequence(e->op))
    return status_error(st, STATUS_UNSUPPORTED,
                        "%s on the GPU needs a software math sequence, which axle does not have yet "
                        "(PTX has only approximate instructions for it)",
                        op);
  if (e->op == OP_CONVERT)
    return status_error(st, STATUS_UNSUPPORTED, "the GPU backend has no PTX for convert from %s to %s on %s", type,
                        type_name(e->result_type), target->name);
  if (needs_newer_target)
    return status_error(st, STATUS_UNSUPPORTED, "%s on %s needs a newer GPU than %s; compute it in f32", op, type,
                        target->name);
  return status_error(st, STATUS_UNSUPPORTED, "the GPU backend has no PTX for %s on %s", op, type);
}

bool ptx_emit_elementwise(PtxBuilder *b, const PtxElementwise *e, PtxReg dst, const PtxReg *operands,
                          Status *st) {
  bool needs_newer_target;
  if (e->op == OP_COMPARE && e->compare_type == CMP_TYPE_TOTALORDER)
    return status_error(st, STATUS_UNSUPPORTED, "the GPU backend has no PTX for compare with type=TOTALORDER yet");
  /* f16 and bf16 arrive here as f32 (ptx_kernel.c computes them in f32). */
  if (e->type == TYPE_F32 && ptx_op_needs_math_sequence(e->op) && ptx_math_emit(b, e->op, dst, operands)) return true;
  if (e->type == TYPE_F64 && ptx_op_needs_math_sequence(e->op) && ptx_math_f64_emit(b, e->op, dst, operands)) return true;
  const PtxOpRow *row = row_find(e, b->target.sm, &needs_newer_target);
  Expansion x = {.e = e, .dst = dst, .operands = operands};
  if (!row || !ptx_type_of_element(e->type, &x.type)) return refuse(e, &b->target, needs_newer_target, st);
  ElementType result = e->op == OP_CONVERT ? e->result_type
                       : e->op == OP_COMPARE || e->op == OP_IS_FINITE ? TYPE_PRED
                                                                      : e->type;
  bool known = ptx_type_of_element(result, &x.result_type);
  assert(known && ptx_type_reg_class(x.result_type) == dst.cls && "the destination's class must fit the result");
  (void)known;
  int arity = opcode_arity(e->op);
  for (int i = 0; i < arity; i++)
    assert(!(operands[i].cls == dst.cls && operands[i].index == dst.index) && "the destination must be fresh");
  for (const char *p = row->asm_template; *p;) p = expand_instruction(b, &x, p);
  return true;
}
