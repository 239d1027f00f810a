/* The row interpreter: x86_emit picks an encoding row and assembles it.
 *
 * Matching reads a row's operand patterns (see the legend in
 * x86_encode_internal.h) and checks each operand against them; encoding
 * reads the row's Op/En letters to place each operand, and its encoding
 * tokens for prefixes, opcode bytes, ModRM extension and immediates.
 * Memory operands and the REX/VEX/EVEX prefixes are built in x86_operand.c. */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "x86_encode_internal.h"

/* ------------------------------------------------------ operand patterns */

/* Parses one operand pattern such as "r/m64", "xmm2/m128/m32bcst",
 * "zmm1 {k1}{z}", "imm8" or "AL". */
static bool parse_pattern(const char *text, size_t len, X86Pattern *p) {
  memset(p, 0, sizeof *p);
  char buf[48];
  if (len >= sizeof buf) return false;
  memcpy(buf, text, len);
  buf[len] = 0;
  char *deco = strchr(buf, '{');
  if (deco) {
    p->maskable = true;
    p->zeroable = strstr(deco, "{z}") != NULL;
    *deco = 0;
  }
  for (char *end = buf + strlen(buf); end > buf && end[-1] == ' '; end--) end[-1] = 0;
  static const struct { const char *name; X86Reg reg; } fixed[] = {
      {"AL", X86_AL}, {"AX", X86_AX}, {"EAX", X86_EAX}, {"RAX", X86_RAX}, {"CL", X86_CL},
  };
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (strcmp(buf, fixed[i].name) == 0) { p->fixed = fixed[i].reg; return true; }
  if (strcmp(buf, "1") == 0) { p->imm_one = true; return true; }
  if (strncmp(buf, "imm", 3) == 0) {
    p->imm_bits = atoi_prefix(buf + 3);
    p->imm_unsigned = strchr(buf + 3, 'u') != NULL;
    return p->imm_bits > 0;
  }
  if (strncmp(buf, "rel", 3) == 0) { p->rel_bits = atoi_prefix(buf + 3); return true; }
  /* The rest is a '/'-separated list of alternatives: a register class, a
   * memory size, a broadcast element size. "r/m64" is one register class. */
  char *save = NULL;
  bool gpr_rm = strncmp(buf, "r/m", 3) == 0;
  if (gpr_rm) {
    int bits = atoi_prefix(buf + 3);
    p->reg_kind = bits == 8 ? X86_KIND_GPR8 : bits == 16 ? X86_KIND_GPR16
                : bits == 32 ? X86_KIND_GPR32 : X86_KIND_GPR64;
    p->mem_ok = true;
    p->mem_size = bits / 8;
    return true;
  }
  for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
    if (tok[0] == 'r' && isdigit((unsigned char)tok[1])) {
      int bits = atoi_prefix(tok + 1);
      p->reg_kind = bits == 8 ? X86_KIND_GPR8 : bits == 16 ? X86_KIND_GPR16
                  : bits == 32 ? X86_KIND_GPR32 : X86_KIND_GPR64;
    } else if (strncmp(tok, "xmm", 3) == 0) {
      p->reg_kind = X86_KIND_XMM;
    } else if (strncmp(tok, "ymm", 3) == 0) {
      p->reg_kind = X86_KIND_YMM;
    } else if (strncmp(tok, "zmm", 3) == 0) {
      p->reg_kind = X86_KIND_ZMM;
    } else if (tok[0] == 'k') {
      p->reg_kind = X86_KIND_K;
    } else if (tok[0] == 'm' && strstr(tok, "bcst")) {
      p->bcst_size = atoi_prefix(tok + 1) / 8;
    } else if (tok[0] == 'm') {
      p->mem_ok = true;
      p->mem_size = atoi_prefix(tok + 1) / 8;
    } else {
      return false;
    }
  }
  return true;
}

/* Splits a row's operand list; returns the number of patterns, or -1. */
int x86_parse_patterns(const char *list, X86Pattern *out, int max) {
  int n = 0;
  const char *s = list;
  while (*s) {
    while (*s == ' ') s++;
    const char *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    if (n == max || !parse_pattern(s, len, &out[n])) return -1;
    n++;
    s += len;
    if (*s == ',') s++;
  }
  return n;
}

static int gpr_bits(X86RegKind kind) {
  switch (kind) {
    case X86_KIND_GPR8: return 8;
    case X86_KIND_GPR16: return 16;
    case X86_KIND_GPR32: return 32;
    case X86_KIND_GPR64: return 64;
    default: return 0;
  }
}

/* Does value fit a pattern's immediate of bits bits, once taken at the
 * instruction's operand size? "add $0xffffffff,%eax" is an imm8 (-1) at
 * operand size 32, as GNU as reads it; at size 64 it is not. */
static bool immediate_fits(int64_t value, const X86Pattern *p, int operand_bits) {
  if (p->imm_unsigned) return value >= 0 && value <= 255;
  if (p->imm_bits >= 64) return true;
  if (operand_bits > 0 && operand_bits < 64) {
    int64_t lo = -((int64_t)1 << (operand_bits - 1));
    int64_t hi = ((int64_t)1 << operand_bits) - 1;
    if (value < lo || value > hi) return false;
    uint64_t m = ((uint64_t)1 << operand_bits) - 1;
    uint64_t u = (uint64_t)value & m;
    value = (u >> (operand_bits - 1)) ? (int64_t)(u | ~m) : (int64_t)u;
  }
  int64_t half = (int64_t)1 << (p->imm_bits - 1);
  return value >= -half && value < half;
}

static bool operand_matches(const X86Buffer *cb, const X86Operand *o, const X86Pattern *p,
                            bool evex, int operand_bits) {
  if (o->mask && !p->maskable) return false;
  if (o->zeroing && !p->zeroable) return false;
  switch (o->kind) {
    case X86_OPERAND_REG: {
      if (p->fixed) return o->reg == p->fixed;
      X86RegKind kind = x86_reg_kind(o->reg);
      if (!p->reg_kind || kind != p->reg_kind) return false;
      bool vector = kind == X86_KIND_XMM || kind == X86_KIND_YMM || kind == X86_KIND_ZMM;
      return x86_reg_number(o->reg) < (vector && evex ? 32 : kind == X86_KIND_K ? 8 : 16);
    }
    case X86_OPERAND_MEM:
      if (o->mem.broadcast) return evex && p->bcst_size && p->bcst_size == o->mem.size;
      return p->mem_ok && (p->mem_size == 0 || p->mem_size == o->mem.size);
    case X86_OPERAND_IMM:
      if (p->imm_one) return o->imm == 1;
      return p->imm_bits && immediate_fits(o->imm, p, operand_bits);
    case X86_OPERAND_LABEL: {
      if (p->rel_bits == 32) return true;
      if (p->rel_bits != 8) return false;
      /* A short jump only to a label already bound: both rel8 forms
       * (EB cb, 7x cb) are 2 bytes long, so the distance is known now. */
      int64_t target = x86_label_offset(cb, o->label);
      int64_t rel = target - (int64_t)(cb->size + 2);
      return target >= 0 && rel >= -128 && rel <= 127;
    }
    default:
      return false;
  }
}

/* The operand size that immediates are taken at: the width of the first
 * general register or r/m operand. */
static int row_operand_bits(const X86Pattern *p, int n) {
  for (int i = 0; i < n; i++) {
    if (p[i].fixed) return gpr_bits(x86_reg_kind(p[i].fixed));
    if (gpr_bits(p[i].reg_kind)) return gpr_bits(p[i].reg_kind);
  }
  return 64;
}

static bool form_matches(const X86Buffer *cb, const X86RowForm *form, const X86Instr *in) {
  if (form->pattern_count != in->count) return false;
  for (int i = 0; i < in->count; i++)
    if (!operand_matches(cb, &in->operands[i], &form->patterns[i], form->evex, form->operand_bits)) return false;
  return true;
}

/* ------------------------------------------------------------ the row index */

/* Every encoding row grouped by mnemonic (a counting sort that keeps table
 * order, which is the order of preference), each with its text parsed. The
 * tables are text, and reading a mnemonic's rows again for every
 * instruction emitted was most of the compiler's time; they are constant,
 * so they are read once per process, into static storage (nothing is
 * allocated, so nothing can unwind, and no compile owns it). The grouping
 * is made once; a mnemonic's rows are parsed when it is first emitted
 * (under a lock, published by its ready flag), since a compile uses a
 * tenth of the mnemonics. */
enum { X86_ROW_CAPACITY = 2048 };

static const X86RowTable *const all_tables[] = {
    &x86_gpr_table, &x86_sse_table, &x86_avx_table, &x86_avx512_table,
};

static struct {
  pthread_once_t once;
  bool complete;                               /* every row fit in the capacity */
  uint32_t first[X86_MNEMONIC_COUNT + 1];      /* a mnemonic's forms are first[m] .. first[m + 1] - 1 */
  X86RowForm forms[X86_ROW_CAPACITY];          /* .row set by the grouping, the rest when parsed */
  pthread_mutex_t parse_lock;
  atomic_bool parsed[X86_MNEMONIC_COUNT];      /* its forms are parsed */
} row_index = {.once = PTHREAD_ONCE_INIT, .parse_lock = PTHREAD_MUTEX_INITIALIZER};

static void parse_row(X86RowForm *form) {
  const X86Row *row = form->row;
  form->pattern_count = x86_parse_patterns(row->operands, form->patterns, 4);
  form->evex = strncmp(row->encoding, "EVEX", 4) == 0;
  form->operand_bits = form->pattern_count > 0 ? row_operand_bits(form->patterns, form->pattern_count) : 64;
  form->encoding_ok = x86_parse_encoding(row->encoding, &form->encoding);
}

static void build_row_index(void) {
  size_t total = 0;
  for (size_t t = 0; t < sizeof all_tables / sizeof all_tables[0]; t++) total += all_tables[t]->count;
  if (total > X86_ROW_CAPACITY) return;  /* complete stays false: every emit fails, naming the capacity */
  uint32_t *first = row_index.first;
  for (size_t t = 0; t < sizeof all_tables / sizeof all_tables[0]; t++)
    for (size_t i = 0; i < all_tables[t]->count; i++) first[all_tables[t]->rows[i].mnemonic + 1]++;
  for (int m = 0; m < X86_MNEMONIC_COUNT; m++) first[m + 1] += first[m];
  uint32_t next[X86_MNEMONIC_COUNT];
  memcpy(next, first, sizeof next);
  for (size_t t = 0; t < sizeof all_tables / sizeof all_tables[0]; t++)
    for (size_t i = 0; i < all_tables[t]->count; i++) {
      const X86Row *row = &all_tables[t]->rows[i];
      row_index.forms[next[row->mnemonic]++].row = row;
    }
  row_index.complete = true;
}

/* Parses mnemonic m's rows once; another thread may be reading other
 * mnemonics' forms meanwhile, never these until the flag is set. */
static void parse_mnemonic(X86Mnemonic m) {
  pthread_mutex_lock(&row_index.parse_lock);
  if (!atomic_load_explicit(&row_index.parsed[m], memory_order_relaxed)) {
    for (uint32_t i = row_index.first[m]; i < row_index.first[m + 1]; i++) parse_row(&row_index.forms[i]);
    atomic_store_explicit(&row_index.parsed[m], true, memory_order_release);
  }
  pthread_mutex_unlock(&row_index.parse_lock);
}

/* The first form of in's mnemonic whose patterns fit its operands. */
static const X86RowForm *find_form(X86Buffer *cb, const X86Instr *in) {
  pthread_once(&row_index.once, build_row_index);
  if (!row_index.complete) {
    x86_buffer_fail(cb, "the encoding tables hold more than %d rows", X86_ROW_CAPACITY);
    return NULL;
  }
  if ((unsigned)in->mnemonic >= X86_MNEMONIC_COUNT) return NULL;
  if (!atomic_load_explicit(&row_index.parsed[in->mnemonic], memory_order_acquire)) parse_mnemonic(in->mnemonic);
  for (uint32_t i = row_index.first[in->mnemonic]; i < row_index.first[in->mnemonic + 1]; i++)
    if (form_matches(cb, &row_index.forms[i], in)) return &row_index.forms[i];
  return NULL;
}

const X86Row *x86_find_row(X86Buffer *cb, const X86Instr *in) {
  const X86RowForm *form = find_form(cb, in);
  return form ? form->row : NULL;
}

/* The N of {1toN} under a row's patterns: the full memory size over the
 * element size. */
static int form_broadcast_lanes(const X86Pattern *patterns, int n, const X86Instr *in) {
  for (int i = 0; i < n && i < in->count; i++)
    if (in->operands[i].kind == X86_OPERAND_MEM && in->operands[i].mem.broadcast && patterns[i].bcst_size)
      return patterns[i].mem_size / patterns[i].bcst_size;
  return 0;
}

int x86_broadcast_lanes(const X86Row *row, const X86Instr *in) {
  X86Pattern patterns[4];
  int n = x86_parse_patterns(row->operands, patterns, 4);
  return form_broadcast_lanes(patterns, n, in);
}

bool x86_emit_instr(X86Buffer *cb, const X86Instr *in) {
  if (in->count < 0 || in->count > 4)
    return x86_buffer_fail(cb, "%s: %d operands", x86_mnemonic_name(in->mnemonic), in->count);
  const X86RowForm *form = find_form(cb, in);
  if (!form) {
    if (cb->failed) return false;
    char text[160];
    x86_instr_att_text(in, -1, text, sizeof text);
    return x86_buffer_fail(cb, "no encoding of %s (AT&T: %s)", x86_mnemonic_name(in->mnemonic),
                           text);
  }
  size_t offset = cb->size;
  if (!x86_encode_row(cb, form, in)) return false;
  int lanes = cb->listing_enabled ? form_broadcast_lanes(form->patterns, form->pattern_count, in) : 0;
  x86_buffer_record(cb, in, offset, lanes);
  return !cb->failed;
}

bool x86_emit_operands(X86Buffer *cb, X86Mnemonic m, int count, const X86Operand *operands) {
  X86Instr in = {.mnemonic = m, .count = count};
  for (int i = 0; i < count && i < 4; i++) in.operands[i] = operands[i];
  return x86_emit_instr(cb, &in);
}
