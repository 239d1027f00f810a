/* What the encoder's files share: the encoding-row format and its legend.
 *
 * An encoding row is one line of an Intel manual instruction table:
 *
 *   {X86_ADD, "r/m64, imm8", "MI", "REX.W 83 /0 ib"}
 *    mnemonic  operands       Op/En  encoding
 *
 * x86_emit takes the first row of the mnemonic whose operand patterns fit
 * the operands, so within a mnemonic the rows are ordered by preference.
 *
 * Operands (Intel order, destination first; a trailing digit or letter
 * such as xmm1 or r32a only names the operand, as in the manual):
 *   r8 r16 r32 r64       a general register of that width
 *   r/m8 ... r/m64       that register, or memory of that size
 *   m                    memory of any size (lea, prefetch)
 *   m8 m16 m32 m64 m128 m256 m512   memory of that size
 *   AL AX EAX RAX CL     exactly that register
 *   1                    exactly the immediate 1
 *   imm8 imm16 imm32     an immediate that fits in that many bits once
 *                        sign-extended to the operand size
 *   imm64                any immediate
 *   imm8u                an 8-bit count or selector, 0..255, taken as is
 *                        (the manual writes imm8 for it too)
 *   rel8 rel32           a label; rel8 only when already bound and in reach
 *   xmm ymm zmm          a vector register: 0..15 in legacy and VEX rows,
 *                        0..31 in EVEX rows
 *   xmm/m32 ... zmm/m512 that register or memory of that size
 *   .../m32bcst          or one 32-bit element broadcast to every lane
 *                        (.../m64bcst: a 64-bit element)
 *   k  k/m8 .. k/m64     an opmask register, or memory of that size
 *   {k}  {k}{z}          written after a destination: EVEX masking by k1..k7
 *                        is allowed, merging ({k}) or merging or zeroing
 *
 * Op/En, one letter per operand, says where the operand is encoded:
 *   R  ModRM.reg           M  ModRM.r/m, register or memory
 *   V  VEX/EVEX.vvvv       I  an immediate
 *   O  opcode low 3 bits   D  a relative displacement (rel8, rel32)
 *   L  a register in imm8[7:4] (/is4)   -  implied by the opcode (AL, CL, 1)
 *
 * Encoding, tokens in order:
 *   66 F2 F3             mandatory prefixes, emitted before REX
 *   REX.W                64-bit operand size
 *   hex byte             an opcode byte; "+rb +rw +rd +ro" after the last
 *                        one adds the O operand's low 3 bits
 *   /0 .. /7             ModRM.reg holds the digit (an opcode extension)
 *   /r                   ModRM.reg holds the R operand
 *   ib iw id io          a 1, 2, 4 or 8-byte immediate
 *   cb cd                a rel8 or rel32 displacement
 *   /is4                 the L operand's register number in imm8[7:4]
 *   VEX.L.pp.map.W       a VEX prefix. L: 128, 256, LIG, LZ or L0 (LIG, LZ
 *                        and L0 encode 0), L1 (encodes 1); pp: 66, F2, F3 or
 *                        absent; map: 0F, 0F38, 0F3A; W: W0, W1 or WIG
 *                        (encoded 0, as GNU as does)
 *   EVEX.L.pp.map.W      an EVEX prefix; L also 512. An 8-bit displacement
 *                        is scaled by N, the size of the memory operand
 *                        (the element size under broadcast), Intel's
 *                        "compressed disp8*N".
 */
#ifndef AXLE_X86_ENCODE_INTERNAL_H
#define AXLE_X86_ENCODE_INTERNAL_H

#include "x86_encode.h"

typedef struct X86Row {
  X86Mnemonic mnemonic;
  const char *operands;
  const char *openc;
  const char *encoding;
} X86Row;

typedef struct X86RowTable {
  const X86Row *rows;
  size_t count;
} X86RowTable;

extern const X86RowTable x86_gpr_table, x86_sse_table, x86_avx_table, x86_avx512_table;

/* One operand pattern of a row, parsed. */
typedef struct X86Pattern {
  X86RegKind reg_kind;   /* a register of this kind fits; NONE: no register */
  X86Reg fixed;          /* only this register fits (AL, CL, ...) */
  bool mem_ok;           /* memory fits */
  int mem_size;          /* its size in bytes; 0: any */
  int bcst_size;         /* EVEX broadcast of an element of this size fits */
  int imm_bits;          /* an immediate of this many bits fits */
  bool imm_unsigned;     /* imm8u */
  bool imm_one;          /* only the immediate 1 */
  int rel_bits;          /* a label fits, as rel8 or rel32 */
  bool maskable, zeroable;
} X86Pattern;

/* A row's encoding column, parsed. */
typedef struct X86Encoding {
  uint8_t prefixes[3];
  int prefix_count;
  bool rex_w;
  uint8_t opcode[4];
  int opcode_count;
  bool plus_reg;          /* +rb/+rw/+rd/+ro */
  int modrm_digit;        /* 0..7, or -1 for /r, or -2 for no ModRM */
  int imm_bytes;
  int rel_bytes;
  bool is4;
  int vex;                /* 0 legacy, 1 VEX, 2 EVEX */
  int vex_l, vex_pp, vex_map, vex_w;
} X86Encoding;

/* A row as the encoder reads it: its text parsed once per process (see
 * the row index in x86_emit.c). */
typedef struct X86RowForm {
  const X86Row *row;
  int pattern_count;        /* -1: the operand column does not parse; the row never matches */
  X86Pattern patterns[4];
  bool evex;
  int operand_bits;         /* the operand size its immediates are taken at */
  bool encoding_ok;         /* false: the encoding column does not parse */
  X86Encoding encoding;
} X86RowForm;

static inline int atoi_prefix(const char *s) {
  int v = 0;
  while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
  return v;
}

/* x86_emit.c */
int x86_parse_patterns(const char *list, X86Pattern *out, int max);
const X86Row *x86_find_row(X86Buffer *cb, const X86Instr *in);

/* x86_operand.c: reads a row's encoding column; assembles one instruction
 * by a chosen row. */
bool x86_parse_encoding(const char *text, X86Encoding *e);
bool x86_encode_row(X86Buffer *cb, const X86RowForm *form, const X86Instr *in);

/* x86_buffer.c: byte output and fix-up recording for the encoder. */
void x86_buffer_put(X86Buffer *cb, const uint8_t *bytes, size_t count);
void x86_buffer_add_fixup(X86Buffer *cb, X86Fixup fixup);
bool x86_buffer_fail(X86Buffer *cb, const char *fmt, ...);
void x86_buffer_record(X86Buffer *cb, const X86Instr *instr, size_t offset, int broadcast_lanes);

/* x86_emit.c: the N of an instruction's {1toN} broadcast under row (the
 * full memory size over the element size; vcvtps2pd zmm reads {1to8}). */
int x86_broadcast_lanes(const X86Row *row, const X86Instr *in);

/* x86_listing.c */
void x86_instr_att_text_lanes(const X86Instr *in, int64_t label_value, int broadcast_lanes,
                              char *out, size_t out_size);

#endif
