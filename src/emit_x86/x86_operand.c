/* Assembling one instruction from its encoding row: prefixes (legacy, REX,
 * VEX, EVEX), opcode, ModRM, SIB, displacement, immediate.
 *
 * The byte layout of an instruction, outermost first:
 *   [66/F2/F3] [REX | VEX | EVEX] opcode [ModRM [SIB] [disp8/disp32]] [imm]
 * REX, VEX and EVEX carry the high bits of register numbers that ModRM and
 * SIB have only 3 bits for: R extends ModRM.reg, X the SIB index, B the
 * ModRM.r/m or SIB base (or the opcode register); EVEX adds R' and V' for
 * registers 16..31 (and reuses X for a register in ModRM.r/m). */
#include <string.h>

#include "x86_encode_internal.h"

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* "VEX.256.66.0F38.W0" or "EVEX.512.0F.W1" */
static bool parse_vex_token(const char *tok, X86Encoding *e) {
  e->vex = tok[0] == 'E' ? 2 : 1;
  char buf[40];
  strncpy(buf, tok, sizeof buf - 1);
  buf[sizeof buf - 1] = 0;
  char *save = NULL;
  strtok_r(buf, ".", &save);
  for (char *f = strtok_r(NULL, ".", &save); f; f = strtok_r(NULL, ".", &save)) {
    if (!strcmp(f, "128") || !strcmp(f, "LIG") || !strcmp(f, "LZ") || !strcmp(f, "L0")) e->vex_l = 0;
    else if (!strcmp(f, "256") || !strcmp(f, "L1")) e->vex_l = 1;
    else if (!strcmp(f, "512")) e->vex_l = 2;
    else if (!strcmp(f, "66")) e->vex_pp = 1;
    else if (!strcmp(f, "F3")) e->vex_pp = 2;
    else if (!strcmp(f, "F2")) e->vex_pp = 3;
    else if (!strcmp(f, "0F")) e->vex_map = 1;
    else if (!strcmp(f, "0F38")) e->vex_map = 2;
    else if (!strcmp(f, "0F3A")) e->vex_map = 3;
    else if (!strcmp(f, "W0") || !strcmp(f, "WIG")) e->vex_w = 0;
    else if (!strcmp(f, "W1")) e->vex_w = 1;
    else if (strcmp(f, "NDS") && strcmp(f, "NDD") && strcmp(f, "DDS")) return false;
  }
  return e->vex_map != 0;
}

bool x86_parse_encoding(const char *text, X86Encoding *e) {
  memset(e, 0, sizeof *e);
  e->modrm_digit = -2;
  char buf[96];
  strncpy(buf, text, sizeof buf - 1);
  buf[sizeof buf - 1] = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    size_t len = strlen(tok);
    if (!strncmp(tok, "VEX.", 4) || !strncmp(tok, "EVEX.", 5)) {
      if (!parse_vex_token(tok, e)) return false;
    } else if (!strcmp(tok, "REX.W")) {
      e->rex_w = true;
    } else if (len == 5 && tok[2] == '+' && tok[3] == 'r' && hex_value(tok[0]) >= 0) {
      /* "B8+rd": the opcode byte plus the register number. */
      if (e->opcode_count == 4) return false;
      e->opcode[e->opcode_count++] = (uint8_t)(hex_value(tok[0]) * 16 + hex_value(tok[1]));
      e->plus_reg = true;
    } else if (tok[0] == '/' && tok[1] >= '0' && tok[1] <= '7') {
      e->modrm_digit = tok[1] - '0';
    } else if (!strcmp(tok, "/r")) {
      e->modrm_digit = -1;
    } else if (!strcmp(tok, "/is4")) {
      e->is4 = true;
      e->imm_bytes = 1;
    } else if (len == 2 && tok[0] == 'i') {
      e->imm_bytes = tok[1] == 'b' ? 1 : tok[1] == 'w' ? 2 : tok[1] == 'd' ? 4 : 8;
    } else if (len == 2 && tok[0] == 'c') {
      e->rel_bytes = tok[1] == 'b' ? 1 : 4;
    } else if (len == 2 && hex_value(tok[0]) >= 0 && hex_value(tok[1]) >= 0) {
      uint8_t byte = (uint8_t)(hex_value(tok[0]) * 16 + hex_value(tok[1]));
      bool prefix = e->opcode_count == 0 && !e->rex_w && e->vex == 0 &&
                    (byte == 0x66 || byte == 0xF2 || byte == 0xF3);
      if (prefix && e->prefix_count < 3) e->prefixes[e->prefix_count++] = byte;
      else if (e->opcode_count < 4) e->opcode[e->opcode_count++] = byte;
      else return false;
    } else {
      return false;
    }
  }
  return e->opcode_count > 0;
}

/* Where each operand goes, from the row's Op/En letters. */
typedef struct Placement {
  const X86Operand *reg, *rm, *vvvv, *imm, *opreg, *rel, *is4;
} Placement;

static void place_operands(const X86Row *row, const X86Instr *in, Placement *pl) {
  memset(pl, 0, sizeof *pl);
  for (int i = 0; i < in->count && row->openc[i]; i++) {
    const X86Operand *o = &in->operands[i];
    switch (row->openc[i]) {
      case 'R': pl->reg = o; break;
      case 'M': pl->rm = o; break;
      case 'V': pl->vvvv = o; break;
      case 'I': pl->imm = o; break;
      case 'O': pl->opreg = o; break;
      case 'D': pl->rel = o; break;
      case 'L': pl->is4 = o; break;
      default: break;
    }
  }
}

/* GNU as prefers the 2-byte VEX prefix (C5), which has no B bit: for a
 * register-to-register move whose source alone is r8..r15 it swaps the
 * operands and uses the store form (vmovaps %xmm8,%xmm0 is C5 78 29 C0,
 * not C4 C1 78 28 C0). The store opcode is the load opcode with bit 0 set
 * (10/11, 28/29) or, for the integer moves, bit 4 (6F/7F). */
static void prefer_two_byte_vex(const X86Instr *in, X86Encoding *e, Placement *pl) {
  static const X86Mnemonic swappable[] = {
      X86_VMOVAPS, X86_VMOVUPS, X86_VMOVAPD, X86_VMOVUPD, X86_VMOVDQA, X86_VMOVDQU,
      X86_VMOVSS, X86_VMOVSD,
  };
  bool listed = in->mnemonic == X86_VMOVQ;
  for (size_t i = 0; i < sizeof swappable / sizeof swappable[0]; i++)
    listed |= in->mnemonic == swappable[i];
  if (!listed || e->vex != 1 || e->vex_map != 1 || e->vex_w || !pl->reg || !pl->rm) return;
  if (pl->rm->kind != X86_OPERAND_REG || pl->reg->kind != X86_OPERAND_REG) return;
  if (!(x86_reg_number(pl->rm->reg) & 8) || (x86_reg_number(pl->reg->reg) & 8)) return;
  if (x86_reg_kind(pl->rm->reg) != x86_reg_kind(pl->reg->reg)) return;
  const X86Operand *t = pl->reg;
  pl->reg = pl->rm;
  pl->rm = t;
  uint8_t *op = &e->opcode[e->opcode_count - 1];
  if (in->mnemonic == X86_VMOVQ) {
    /* vmovq's load is VEX.F3 7E, its store VEX.66 D6. */
    e->vex_pp = 1;
    *op = 0xD6;
    return;
  }
  *op ^= (*op & 0xEE) == 0x6E ? 0x10 : 0x01;
}

/* Instruction bytes under construction. */
typedef struct Bytes {
  uint8_t b[32];
  int n;
  int rip_disp_at;         /* index of a label-relative disp32, or -1 */
} Bytes;

static void put(Bytes *out, uint8_t byte) { out->b[out->n++] = byte; }
static void put_le(Bytes *out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) put(out, (uint8_t)(v >> (8 * i)));
}

static bool fits_int8(int64_t v) { return v >= -128 && v <= 127; }

/* ModRM (and SIB and displacement) for a memory operand. disp8_scale is
 * EVEX's N: an 8-bit displacement counts in units of N bytes, so a
 * displacement that is not a multiple of N needs the 32-bit form. */
static void put_memory(Bytes *out, int reg_field, const X86Mem *m, int disp8_scale) {
  int disp = m->disp;
  if (m->base == X86_RIP) {
    /* mod=00 r/m=101 is RIP-relative in 64-bit mode, not [rbp]. */
    put(out, (uint8_t)(reg_field << 3 | 5));
    out->rip_disp_at = m->label >= 0 ? out->n : -1;
    put_le(out, (uint32_t)disp, 4);
    return;
  }
  int scale_bits = m->scale == 8 ? 3 : m->scale == 4 ? 2 : m->scale == 2 ? 1 : 0;
  int index = m->index ? x86_reg_number(m->index) & 7 : 4;  /* 100 = no index */
  if (!m->base) {
    /* No base: SIB with base=101 and mod=00 means disp32 alone (a plain
     * r/m=101 would be RIP-relative). */
    put(out, (uint8_t)(reg_field << 3 | 4));
    put(out, (uint8_t)(scale_bits << 6 | index << 3 | 5));
    put_le(out, (uint32_t)disp, 4);
    return;
  }
  int base = x86_reg_number(m->base) & 7;
  int mod;
  bool disp8 = disp % disp8_scale == 0 && fits_int8(disp / disp8_scale);
  /* base 101 (rbp, r13) with mod=00 would mean RIP or no base: they always
   * take a displacement, 0 as a disp8. */
  if (disp == 0 && base != 5) mod = 0;
  else if (disp8) mod = 1;
  else mod = 2;
  /* r/m=100 means "a SIB follows", so rsp and r12 as a base need a SIB. */
  bool sib = m->index || base == 4;
  put(out, (uint8_t)(mod << 6 | reg_field << 3 | (sib ? 4 : base)));
  if (sib) put(out, (uint8_t)(scale_bits << 6 | index << 3 | base));
  if (mod == 1) put(out, (uint8_t)(int8_t)(disp / disp8_scale));
  if (mod == 2) put_le(out, (uint32_t)disp, 4);
}

static int reg_num(const X86Operand *o) {
  return o && o->kind == X86_OPERAND_REG ? x86_reg_number(o->reg) : 0;
}

/* Does a legacy-encoded instruction need a REX prefix only to reach spl,
 * bpl, sil or dil (without REX those numbers mean ah, ch, dh, bh)? */
static bool needs_rex_for_byte_register(const X86Instr *in) {
  for (int i = 0; i < in->count; i++) {
    const X86Operand *o = &in->operands[i];
    if (o->kind == X86_OPERAND_REG && x86_reg_kind(o->reg) == X86_KIND_GPR8) {
      int n = x86_reg_number(o->reg);
      if (n >= 4 && n <= 7) return true;
    }
  }
  return false;
}

typedef struct RegBits {
  int r, x, b;        /* bit 3 of ModRM.reg, SIB index, r/m or base */
  int r4, x4, v4;     /* bit 4 (EVEX): reg, r/m register, vvvv */
} RegBits;

static RegBits register_bits(const Placement *pl) {
  RegBits rb = {0};
  int reg = reg_num(pl->reg);
  rb.r = reg >> 3 & 1;
  rb.r4 = reg >> 4 & 1;
  if (pl->rm && pl->rm->kind == X86_OPERAND_MEM) {
    const X86Mem *m = &pl->rm->mem;
    if (m->index) rb.x = x86_reg_number(m->index) >> 3 & 1;
    if (m->base && m->base != X86_RIP) rb.b = x86_reg_number(m->base) >> 3 & 1;
  } else if (pl->rm) {
    rb.b = reg_num(pl->rm) >> 3 & 1;
    rb.x4 = reg_num(pl->rm) >> 4 & 1;
  }
  if (pl->opreg) rb.b = reg_num(pl->opreg) >> 3 & 1;
  rb.v4 = reg_num(pl->vvvv) >> 4 & 1;
  return rb;
}

static void put_vex(Bytes *out, const X86Encoding *e, const Placement *pl, RegBits rb) {
  int vvvv = (~reg_num(pl->vvvv)) & 15;
  if (e->vex_map == 1 && !e->vex_w && !rb.x && !rb.b) {
    put(out, 0xC5);
    put(out, (uint8_t)(!rb.r << 7 | vvvv << 3 | e->vex_l << 2 | e->vex_pp));
    return;
  }
  put(out, 0xC4);
  put(out, (uint8_t)(!rb.r << 7 | !rb.x << 6 | !rb.b << 5 | e->vex_map));
  put(out, (uint8_t)(e->vex_w << 7 | vvvv << 3 | e->vex_l << 2 | e->vex_pp));
}

static void put_evex(Bytes *out, const X86Encoding *e, const Placement *pl, RegBits rb,
                     const X86Instr *in) {
  int vvvv = (~reg_num(pl->vvvv)) & 15;
  /* For a register in r/m, EVEX.X holds its bit 4; for memory it is the
   * SIB index's bit 3. */
  int x = pl->rm && pl->rm->kind == X86_OPERAND_REG ? rb.x4 : rb.x;
  const X86Operand *dest = &in->operands[0];
  bool broadcast = pl->rm && pl->rm->kind == X86_OPERAND_MEM && pl->rm->mem.broadcast;
  put(out, 0x62);
  put(out, (uint8_t)(!rb.r << 7 | !x << 6 | !rb.b << 5 | !rb.r4 << 4 | e->vex_map));
  put(out, (uint8_t)(e->vex_w << 7 | vvvv << 3 | 1 << 2 | e->vex_pp));
  put(out, (uint8_t)(dest->zeroing << 7 | e->vex_l << 5 | broadcast << 4 | !rb.v4 << 3 |
                     (dest->mask & 7)));
}

bool x86_encode_row(X86Buffer *cb, const X86RowForm *form, const X86Instr *in) {
  const X86Row *row = form->row;
  if (!form->encoding_ok) return x86_buffer_fail(cb, "bad encoding row \"%s\"", row->encoding);
  X86Encoding e = form->encoding;
  Placement pl;
  place_operands(row, in, &pl);
  prefer_two_byte_vex(in, &e, &pl);
  RegBits rb = register_bits(&pl);
  Bytes out = {.n = 0, .rip_disp_at = -1};
  for (int i = 0; i < e.prefix_count; i++) put(&out, e.prefixes[i]);
  if (e.vex == 1) {
    put_vex(&out, &e, &pl, rb);
  } else if (e.vex == 2) {
    put_evex(&out, &e, &pl, rb, in);
  } else if (e.rex_w || rb.r || rb.x || rb.b || needs_rex_for_byte_register(in)) {
    put(&out, (uint8_t)(0x40 | e.rex_w << 3 | rb.r << 2 | rb.x << 1 | rb.b));
  }
  for (int i = 0; i < e.opcode_count; i++) put(&out, e.opcode[i]);
  if (e.plus_reg) out.b[out.n - 1] |= (uint8_t)(reg_num(pl.opreg) & 7);
  if (e.modrm_digit != -2) {
    int reg_field = e.modrm_digit >= 0 ? e.modrm_digit : reg_num(pl.reg) & 7;
    if (!pl.rm) return x86_buffer_fail(cb, "row \"%s\" has no r/m operand", row->encoding);
    if (pl.rm->kind == X86_OPERAND_MEM) {
      int scale = e.vex == 2 ? pl.rm->mem.size : 1;
      put_memory(&out, reg_field, &pl.rm->mem, scale > 0 ? scale : 1);
    } else {
      put(&out, (uint8_t)(0xC0 | reg_field << 3 | (reg_num(pl.rm) & 7)));
    }
  }
  int rel_at = -1;
  if (e.rel_bytes) {
    rel_at = out.n;
    put_le(&out, 0, e.rel_bytes);
  }
  if (e.is4) put(&out, (uint8_t)(reg_num(pl.is4) << 4));
  else if (e.imm_bytes) put_le(&out, pl.imm ? (uint64_t)pl.imm->imm : 0, e.imm_bytes);

  size_t start = cb->size;
  size_t end = start + (size_t)out.n;
  if (rel_at >= 0)
    x86_buffer_add_fixup(cb, (X86Fixup){start + (size_t)rel_at, end, (uint8_t)e.rel_bytes,
                                        pl.rel->label});
  if (out.rip_disp_at >= 0)
    x86_buffer_add_fixup(cb, (X86Fixup){start + (size_t)out.rip_disp_at, end, 4,
                                        pl.rm->mem.label});
  x86_buffer_put(cb, out.b, (size_t)out.n);
  return !cb->failed;
}
