/* The listing: emitted instructions as AT&T text, spelled the way
 * `objdump -d` spells them, so a listing and a disassembly line up.
 *
 * AT&T order is Intel order reversed (sources first, destination last);
 * registers take '%', immediates '$'; memory is disp(base,index,scale).
 * Where no register operand says the operand size, the mnemonic takes a
 * suffix: b, w, l, q ("addl $0x1,(%rax)"). Immediates print in hex as the
 * unsigned value at the operand size, the way objdump shows a sign-extended
 * imm8: "add $0xffffffffffffff80,%rsp". */
#include <stdarg.h>
#include <string.h>

#include "x86_encode_internal.h"

static const char *const gpr_names[4][16] = {
    {"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil",
     "r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b"},
    {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di",
     "r8w", "r9w", "r10w", "r11w", "r12w", "r13w", "r14w", "r15w"},
    {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
     "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"},
    {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
     "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"},
};
static const char *const vector_names[3][32] = {
#define N32(p) {p "0", p "1", p "2", p "3", p "4", p "5", p "6", p "7", p "8", p "9", \
    p "10", p "11", p "12", p "13", p "14", p "15", p "16", p "17", p "18", p "19",   \
    p "20", p "21", p "22", p "23", p "24", p "25", p "26", p "27", p "28", p "29",   \
    p "30", p "31"}
    N32("xmm"), N32("ymm"), N32("zmm"),
#undef N32
};
static const char *const mask_names[8] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};

const char *x86_reg_name(X86Reg r) {
  int n = x86_reg_number(r);
  switch (x86_reg_kind(r)) {
    case X86_KIND_GPR8: return n < 16 ? gpr_names[0][n] : "?";
    case X86_KIND_GPR16: return n < 16 ? gpr_names[1][n] : "?";
    case X86_KIND_GPR32: return n < 16 ? gpr_names[2][n] : "?";
    case X86_KIND_GPR64: return n < 16 ? gpr_names[3][n] : "?";
    case X86_KIND_XMM: return n < 32 ? vector_names[0][n] : "?";
    case X86_KIND_YMM: return n < 32 ? vector_names[1][n] : "?";
    case X86_KIND_ZMM: return n < 32 ? vector_names[2][n] : "?";
    case X86_KIND_K: return n < 8 ? mask_names[n] : "?";
    case X86_KIND_RIP: return "rip";
    default: return "?";
  }
}

/* Text being built, truncated (never overflowing) at the end of out. */
typedef struct Text {
  char *out;
  size_t size, len;
} Text;

static void add(Text *t, const char *fmt, ...) {
  if (t->len >= t->size) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t->out + t->len, t->size - t->len, fmt, ap);
  va_end(ap);
  if (n > 0) t->len = t->len + (size_t)n < t->size ? t->len + (size_t)n : t->size - 1;
}

static int gpr_size(X86Reg r) {
  switch (x86_reg_kind(r)) {
    case X86_KIND_GPR8: return 1;
    case X86_KIND_GPR16: return 2;
    case X86_KIND_GPR32: return 4;
    case X86_KIND_GPR64: return 8;
    default: return 0;
  }
}

static int vector_bytes(X86Reg r) {
  switch (x86_reg_kind(r)) {
    case X86_KIND_XMM: return 16;
    case X86_KIND_YMM: return 32;
    case X86_KIND_ZMM: return 64;
    default: return 0;
  }
}

static char size_suffix(int bytes) {
  return bytes == 1 ? 'b' : bytes == 2 ? 'w' : bytes == 4 ? 'l' : bytes == 8 ? 'q' : 0;
}

static void add_memory(Text *t, const X86Mem *m, int64_t rip_disp) {
  if (m->base == X86_RIP) {
    int64_t d = m->label >= 0 ? rip_disp : m->disp;
    add(t, d < 0 ? "-0x%llx(%%rip)" : "0x%llx(%%rip)",
        (unsigned long long)(d < 0 ? -d : d));
    return;
  }
  /* objdump shows a displacement whenever the encoding has one: (%rbp) and
   * (%r13) are encoded with a zero disp8, and no-base forms with a disp32. */
  bool has_disp = m->disp != 0 || !m->base || (x86_reg_number(m->base) & 7) == 5;
  if (has_disp)
    add(t, m->disp < 0 ? "-0x%llx" : "0x%llx",
        (unsigned long long)(m->disp < 0 ? -(int64_t)m->disp : m->disp));
  if (!m->base && !m->index) return;
  add(t, "(");
  if (m->base) add(t, "%%%s", x86_reg_name(m->base));
  if (m->index) add(t, ",%%%s,%d", x86_reg_name(m->index), m->scale);
  add(t, ")");
}

/* The operand size an immediate is shown at: the first general register or
 * memory operand's, or 64 bits (push). */
static int immediate_bits(const X86Instr *in) {
  for (int i = 0; i < in->count; i++) {
    const X86Operand *o = &in->operands[i];
    if (o->kind == X86_OPERAND_REG && gpr_size(o->reg)) return 8 * gpr_size(o->reg);
    if (o->kind == X86_OPERAND_MEM && o->mem.size <= 8 && o->mem.size) return 8 * o->mem.size;
  }
  return 64;
}

static void add_operand(Text *t, const X86Instr *in, const X86Operand *o, int64_t label_value,
                        int broadcast_lanes) {
  switch (o->kind) {
    case X86_OPERAND_REG: add(t, "%%%s", x86_reg_name(o->reg)); break;
    case X86_OPERAND_MEM:
      add_memory(t, &o->mem, label_value);
      if (o->mem.broadcast) add(t, "{1to%d}", broadcast_lanes);
      break;
    case X86_OPERAND_IMM: {
      int bits = immediate_bits(in);
      uint64_t v = (uint64_t)o->imm;
      if (bits < 64) v &= ((uint64_t)1 << bits) - 1;
      add(t, "$0x%llx", (unsigned long long)v);
      break;
    }
    case X86_OPERAND_LABEL: add(t, "%llx", (unsigned long long)label_value); break;
    default: break;
  }
  if (o->mask) add(t, "{%%%s}", mask_names[o->mask & 7]);
  if (o->zeroing) add(t, "{z}");
}

/* The predicates of cmpps/vcmpps (and the pd forms), which objdump folds
 * into the mnemonic ("vcmpltps"); legacy cmpps has only the first 8. */
static const char *const compare_predicates[32] = {
    "eq", "lt", "le", "unord", "neq", "nlt", "nle", "ord",
    "eq_uq", "nge", "ngt", "false", "neq_oq", "ge", "gt", "true",
    "eq_os", "lt_oq", "le_oq", "unord_s", "neq_us", "nlt_uq", "nle_uq", "ord_s",
    "eq_us", "nge_uq", "ngt_uq", "false_os", "neq_os", "ge_oq", "gt_oq", "true_us",
};

static bool is_general_purpose(X86Mnemonic m) { return m <= X86_CMOVG; }

static int operand_size(const X86Operand *o) {
  if (o->kind == X86_OPERAND_REG) return gpr_size(o->reg);
  if (o->kind == X86_OPERAND_MEM) return o->mem.size;
  return 0;
}

/* Does a general-purpose instruction need a size suffix? Only when no
 * register operand shows the size (CL as a shift count does not). */
static char general_suffix(const X86Instr *in) {
  switch (in->mnemonic) {
    case X86_JMP: case X86_CALL: case X86_PUSH: case X86_POP: case X86_LEA:
    case X86_PREFETCHT0: case X86_PREFETCHT1: case X86_PREFETCHNTA:
      return 0;
    default:
      if (in->mnemonic >= X86_SETO && in->mnemonic <= X86_SETG) return 0;
      break;
  }
  bool shift = in->mnemonic == X86_SHL || in->mnemonic == X86_SHR || in->mnemonic == X86_SAR ||
               in->mnemonic == X86_ROL || in->mnemonic == X86_ROR;
  int mem_size = 0;
  for (int i = 0; i < in->count; i++) {
    const X86Operand *o = &in->operands[i];
    bool count_register = shift && i == 1;
    if (o->kind == X86_OPERAND_REG && gpr_size(o->reg) && !count_register) return 0;
    if (o->kind == X86_OPERAND_MEM) mem_size = o->mem.size;
  }
  return size_suffix(mem_size);
}

static bool uses_evex_feature(const X86Instr *in) {
  for (int i = 0; i < in->count; i++) {
    const X86Operand *o = &in->operands[i];
    if (o->mask || o->zeroing) return true;
    if (o->kind == X86_OPERAND_MEM && o->mem.broadcast) return true;
    if (o->kind == X86_OPERAND_REG && (vector_bytes(o->reg) == 64 || x86_reg_number(o->reg) >= 16))
      return true;
  }
  return false;
}

/* Writes the AT&T mnemonic; *skip_last is set when the last Intel operand
 * (a predicate, or the shift count 1) is folded into the mnemonic. */
static void add_mnemonic(Text *t, const X86Instr *in, bool *skip_last) {
  X86Mnemonic m = in->mnemonic;
  const char *name = x86_mnemonic_name(m);
  const X86Operand *last = in->count ? &in->operands[in->count - 1] : NULL;
  *skip_last = false;
  switch (m) {
    case X86_MOVZX: case X86_MOVSX:
      add(t, "%s%c%c", m == X86_MOVZX ? "movz" : "movs", size_suffix(operand_size(last)),
          size_suffix(operand_size(&in->operands[0])));
      return;
    case X86_MOVSXD: add(t, "movslq"); return;
    case X86_CQO: add(t, "cqto"); return;
    case X86_CDQ: add(t, "cltd"); return;
    case X86_CDQE: add(t, "cltq"); return;
    case X86_MOV:
      if (last->kind == X86_OPERAND_IMM && x86_reg_kind(in->operands[0].reg) == X86_KIND_GPR64 &&
          in->operands[0].kind == X86_OPERAND_REG && (last->imm < INT32_MIN || last->imm > INT32_MAX)) {
        add(t, "movabs");
        return;
      }
      break;
    case X86_CMPPS: case X86_CMPPD: case X86_VCMPPS: case X86_VCMPPD: {
      bool legacy = m == X86_CMPPS || m == X86_CMPPD;
      int limit = legacy ? 8 : 32;
      if (last->kind == X86_OPERAND_IMM && last->imm >= 0 && last->imm < limit) {
        add(t, "%.*s%s%s", legacy ? 3 : 4, name, compare_predicates[last->imm],
            name + strlen(name) - 2);
        *skip_last = true;
        return;
      }
      break;
    }
    case X86_VCVTPD2PS:
      /* The memory form's size says whether the source is 2 or 4 doubles. */
      if (last->kind == X86_OPERAND_MEM && !last->mem.broadcast && last->mem.size <= 32) {
        add(t, "%s%c", name, last->mem.size == 16 ? 'x' : 'y');
        return;
      }
      break;
    case X86_VPSLLD: case X86_VPSRLD: case X86_VPSRAD: case X86_VPSLLQ: case X86_VPSRLQ:
      /* Shift by an immediate from memory has only an EVEX form; objdump
       * marks it "{evex}" when nothing else (mask, zmm, register 16..31)
       * shows that it is EVEX. */
      if (in->count == 3 && in->operands[1].kind == X86_OPERAND_MEM && !uses_evex_feature(in)) {
        add(t, "{evex} %s", name);
        return;
      }
      break;
    case X86_CVTSI2SS: case X86_CVTSI2SD: case X86_VCVTSI2SS: case X86_VCVTSI2SD:
      if (last->kind == X86_OPERAND_MEM) {
        add(t, "%s%c", name, size_suffix(last->mem.size));
        return;
      }
      break;
    default: break;
  }
  if (is_general_purpose(m)) {
    if (last && last->kind == X86_OPERAND_IMM && last->imm == 1 && in->count == 2 &&
        (m == X86_SHL || m == X86_SHR || m == X86_SAR || m == X86_ROL || m == X86_ROR))
      *skip_last = true;
    char suffix = general_suffix(in);
    add(t, suffix ? "%s%c" : "%s", name, suffix);
    return;
  }
  add(t, "%s", name);
}

void x86_instr_att_text(const X86Instr *in, int64_t label_value, char *out, size_t out_size) {
  x86_instr_att_text_lanes(in, label_value, 0, out, out_size);
}

/* broadcast_lanes 0: guess N from the widest vector register. */
void x86_instr_att_text_lanes(const X86Instr *in, int64_t label_value, int broadcast_lanes,
                              char *out, size_t out_size) {
  Text t = {out, out_size, 0};
  if (out_size) out[0] = 0;
  bool skip_last;
  add_mnemonic(&t, in, &skip_last);
  int count = in->count - (skip_last ? 1 : 0);
  if (count == 0) return;
  size_t pad = t.len < 6 ? 6 - t.len : 0;
  add(&t, "%*s ", (int)pad, "");
  int lanes = 0;
  int element = 0;
  for (int i = 0; i < in->count; i++) {
    if (vector_bytes(in->operands[i].reg) > lanes && in->operands[i].kind == X86_OPERAND_REG)
      lanes = vector_bytes(in->operands[i].reg);
    if (in->operands[i].kind == X86_OPERAND_MEM && in->operands[i].mem.broadcast)
      element = in->operands[i].mem.size;
  }
  bool indirect = in->mnemonic == X86_JMP || in->mnemonic == X86_CALL;
  /* test is symmetric; "test reg, mem" is encoded (and disassembled) as
   * "test mem, reg". */
  bool swap = in->mnemonic == X86_TEST && in->operands[0].kind == X86_OPERAND_REG &&
              in->operands[1].kind == X86_OPERAND_MEM;
  for (int i = count - 1; i >= 0; i--) {
    const X86Operand *o = &in->operands[swap ? 1 - i : i];
    if (indirect && o->kind != X86_OPERAND_LABEL) add(&t, "*");
    add_operand(&t, in, o, label_value,
                broadcast_lanes ? broadcast_lanes : element ? lanes / element : 0);
    if (i) add(&t, ",");
  }
}

/* The value a line's label stands for: a jump's target offset, or a
 * RIP-relative operand's displacement from the end of the instruction. */
static int64_t line_label_value(const X86Buffer *cb, const X86ListingLine *line) {
  const X86Instr *in = &line->instr;
  for (int i = 0; i < in->count; i++) {
    const X86Operand *o = &in->operands[i];
    if (o->kind == X86_OPERAND_LABEL) return x86_label_offset(cb, o->label);
    if (o->kind == X86_OPERAND_MEM && o->mem.base == X86_RIP && o->mem.label >= 0)
      return x86_label_offset(cb, o->mem.label) - (int64_t)(line->offset + line->length);
  }
  return 0;
}

void x86_listing_text(const X86Buffer *cb, size_t i, char *out, size_t out_size) {
  if (out_size) out[0] = 0;
  if (i >= cb->listing_count) return;
  const X86ListingLine *line = &cb->listing[i];
  if (line->note) {
    snprintf(out, out_size, "# %s", line->note);
    return;
  }
  if (line->instr.mnemonic == X86_NOP && line->length > 1 && line->length <= 11) {
    /* Padding NOPs (x86_emit_nops), named as objdump names them. */
    static const char *const nops[12] = {
        "", "nop", "xchg   %ax,%ax", "nopl   (%rax)", "nopl   0x0(%rax)",
        "nopl   0x0(%rax,%rax,1)", "nopw   0x0(%rax,%rax,1)", "nopl   0x0(%rax)",
        "nopl   0x0(%rax,%rax,1)", "nopw   0x0(%rax,%rax,1)", "cs nopw 0x0(%rax,%rax,1)",
        "data16 cs nopw 0x0(%rax,%rax,1)",
    };
    snprintf(out, out_size, "%s", nops[line->length]);
    return;
  }
  x86_instr_att_text_lanes(&line->instr, line_label_value(cb, line), line->broadcast_lanes, out,
                           out_size);
}

void x86_listing_print(const X86Buffer *cb, FILE *out) {
  char text[256];
  for (size_t i = 0; i < cb->listing_count; i++) {
    const X86ListingLine *line = &cb->listing[i];
    x86_listing_text(cb, i, text, sizeof text);
    if (line->note) {
      fprintf(out, "%s\n", text);
      continue;
    }
    char hex[3 * 16 + 1] = "";
    for (size_t b = 0; b < line->length && b < 15; b++)
      snprintf(hex + 3 * b, 4, "%02x ", line->offset + b < cb->size ? cb->code[line->offset + b] : 0);
    fprintf(out, "%4zx:\t%-21s\t%s\n", line->offset, hex, text);
  }
}
