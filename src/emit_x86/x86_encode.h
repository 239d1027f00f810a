/* The x86-64 assembler: the table of contents of src/emit_x86's encoder.
 *
 * The CPU backend builds machine code by calling x86_emit with a mnemonic
 * and operands in Intel order (destination first):
 *
 *   X86Buffer cb;
 *   x86_buffer_init(&cb);
 *   X86Label loop = x86_label_new(&cb);
 *   x86_label_bind(&cb, loop);
 *   x86_emit(&cb, X86_VFMADD231PS, x86_reg(X86_YMM0), x86_reg(X86_YMM1),
 *            x86_mem(32, X86_RSI, 0));
 *   x86_emit(&cb, X86_ADD, x86_reg(X86_RSI), x86_imm(32));
 *   x86_emit(&cb, X86_JNE, x86_rel(loop));
 *   x86_emit0(&cb, X86_RET);
 *   if (!x86_buffer_finish(&cb, &status)) ...   (resolves label fix-ups)
 *   ... cb.code, cb.size ...
 *   x86_buffer_free(&cb);
 *
 * x86_emit looks the mnemonic up in tables of encoding rows written in the
 * notation of the Intel manual (x86_gpr.c, x86_sse.c, x86_avx.c,
 * x86_avx512.c; the legend is in x86_encode_internal.h) and takes the first
 * row whose operand pattern fits, so the rows' order is the choice of
 * encoding: the shortest form first, the same choices GNU as makes (the
 * tests compare every form with GNU as byte for byte).
 *
 * Errors: an operand combination no row encodes is a bug in the caller, not
 * bad user input; x86_emit then returns false and the buffer keeps the first
 * such error, reported by x86_buffer_finish. Nothing aborts.
 */
#ifndef AXLE_X86_ENCODE_H
#define AXLE_X86_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir.h"

/* ------------------------------------------------------------ registers
 * A register is its kind (which file, which width) and its number 0..31.
 * The number is what the encoding uses; the kind picks the operand size. */
typedef enum X86RegKind {
  X86_KIND_NONE, X86_KIND_GPR8, X86_KIND_GPR16, X86_KIND_GPR32, X86_KIND_GPR64,
  X86_KIND_XMM, X86_KIND_YMM, X86_KIND_ZMM, X86_KIND_K, X86_KIND_RIP,
} X86RegKind;

typedef uint16_t X86Reg;
#define X86_REG(kind, number) ((X86Reg)((unsigned)(kind) << 8 | (unsigned)(number)))
static inline X86RegKind x86_reg_kind(X86Reg r) { return (X86RegKind)(r >> 8); }
static inline int x86_reg_number(X86Reg r) { return r & 0xff; }

enum {
  X86_NOREG = 0,
  X86_RIP = X86_REG(X86_KIND_RIP, 0),
  X86_RAX = X86_REG(X86_KIND_GPR64, 0), X86_RCX, X86_RDX, X86_RBX, X86_RSP, X86_RBP,
  X86_RSI, X86_RDI, X86_R8, X86_R9, X86_R10, X86_R11, X86_R12, X86_R13, X86_R14, X86_R15,
  X86_EAX = X86_REG(X86_KIND_GPR32, 0), X86_ECX, X86_EDX, X86_EBX, X86_ESP, X86_EBP,
  X86_ESI, X86_EDI, X86_R8D, X86_R9D, X86_R10D, X86_R11D, X86_R12D, X86_R13D, X86_R14D,
  X86_R15D,
  X86_AX = X86_REG(X86_KIND_GPR16, 0), X86_CX, X86_DX, X86_BX, X86_SP, X86_BP, X86_SI,
  X86_DI, X86_R8W, X86_R9W, X86_R10W, X86_R11W, X86_R12W, X86_R13W, X86_R14W, X86_R15W,
  /* spl, bpl, sil, dil need a REX prefix; ah..bh are not offered. */
  X86_AL = X86_REG(X86_KIND_GPR8, 0), X86_CL, X86_DL, X86_BL, X86_SPL, X86_BPL, X86_SIL,
  X86_DIL, X86_R8B, X86_R9B, X86_R10B, X86_R11B, X86_R12B, X86_R13B, X86_R14B, X86_R15B,
  X86_K0 = X86_REG(X86_KIND_K, 0), X86_K1, X86_K2, X86_K3, X86_K4, X86_K5, X86_K6, X86_K7,
};
/* Vector registers by number: 0..15 with SSE/AVX, 0..31 with AVX-512. */
static inline X86Reg x86_xmm(int n) { return X86_REG(X86_KIND_XMM, n); }
static inline X86Reg x86_ymm(int n) { return X86_REG(X86_KIND_YMM, n); }
static inline X86Reg x86_zmm(int n) { return X86_REG(X86_KIND_ZMM, n); }
static inline X86Reg x86_gpr(X86RegKind kind, int n) { return X86_REG(kind, n); }
enum {
  X86_XMM0 = X86_REG(X86_KIND_XMM, 0), X86_XMM1, X86_XMM2, X86_XMM3, X86_XMM4, X86_XMM5,
  X86_XMM6, X86_XMM7, X86_XMM8, X86_XMM9, X86_XMM10, X86_XMM11, X86_XMM12, X86_XMM13,
  X86_XMM14, X86_XMM15,
  X86_YMM0 = X86_REG(X86_KIND_YMM, 0), X86_YMM1, X86_YMM2, X86_YMM3, X86_YMM4, X86_YMM5,
  X86_YMM6, X86_YMM7, X86_YMM8, X86_YMM9, X86_YMM10, X86_YMM11, X86_YMM12, X86_YMM13,
  X86_YMM14, X86_YMM15,
  X86_ZMM0 = X86_REG(X86_KIND_ZMM, 0), X86_ZMM1, X86_ZMM2, X86_ZMM3, X86_ZMM4, X86_ZMM5,
  X86_ZMM6, X86_ZMM7, X86_ZMM8, X86_ZMM9, X86_ZMM10, X86_ZMM11, X86_ZMM12, X86_ZMM13,
  X86_ZMM14, X86_ZMM15,
};

/* The AT&T name of a register as objdump prints it, without the '%'. */
const char *x86_reg_name(X86Reg r);

/* ------------------------------------------------------------ mnemonics
 * Every instruction the encoder knows, with its GNU spelling. The 16
 * condition codes come in encoding order (o no b ae e ne be a s ns p np l ge
 * le g), so X86_JO + cc is the jump on condition cc. */
#define X86_MNEMONICS(X) \
  /* general purpose */ \
  X(MOV, "mov") X(MOVZX, "movzx") X(MOVSX, "movsx") X(MOVSXD, "movsxd") X(LEA, "lea") \
  X(ADD, "add") X(OR, "or") X(ADC, "adc") X(SBB, "sbb") X(AND, "and") X(SUB, "sub") \
  X(XOR, "xor") X(CMP, "cmp") X(TEST, "test") X(INC, "inc") X(DEC, "dec") \
  X(NEG, "neg") X(NOT, "not") X(IMUL, "imul") X(MUL, "mul") X(DIV, "div") \
  X(IDIV, "idiv") X(CQO, "cqo") X(CDQ, "cdq") X(CDQE, "cdqe") X(SHL, "shl") \
  X(SHR, "shr") X(SAR, "sar") X(ROL, "rol") X(ROR, "ror") X(SHLX, "shlx") \
  X(SHRX, "shrx") X(SARX, "sarx") X(BT, "bt") X(JMP, "jmp") X(CALL, "call") \
  X(RET, "ret") X(PUSH, "push") X(POP, "pop") X(PREFETCHT0, "prefetcht0") \
  X(PREFETCHT1, "prefetcht1") X(PREFETCHNTA, "prefetchnta") X(LZCNT, "lzcnt") \
  X(TZCNT, "tzcnt") X(POPCNT, "popcnt") X(UD2, "ud2") X(INT3, "int3") X(NOP, "nop") X(SFENCE, "sfence") \
  /* conditional: the 16 condition codes in encoding order, for each of jcc, setcc, cmovcc */ \
  X(JO, "jo") X(JNO, "jno") X(JB, "jb") X(JAE, "jae") X(JE, "je") X(JNE, "jne") \
  X(JBE, "jbe") X(JA, "ja") X(JS, "js") X(JNS, "jns") X(JP, "jp") X(JNP, "jnp") \
  X(JL, "jl") X(JGE, "jge") X(JLE, "jle") X(JG, "jg") X(SETO, "seto") \
  X(SETNO, "setno") X(SETB, "setb") X(SETAE, "setae") X(SETE, "sete") \
  X(SETNE, "setne") X(SETBE, "setbe") X(SETA, "seta") X(SETS, "sets") \
  X(SETNS, "setns") X(SETP, "setp") X(SETNP, "setnp") X(SETL, "setl") \
  X(SETGE, "setge") X(SETLE, "setle") X(SETG, "setg") X(CMOVO, "cmovo") \
  X(CMOVNO, "cmovno") X(CMOVB, "cmovb") X(CMOVAE, "cmovae") X(CMOVE, "cmove") \
  X(CMOVNE, "cmovne") X(CMOVBE, "cmovbe") X(CMOVA, "cmova") X(CMOVS, "cmovs") \
  X(CMOVNS, "cmovns") X(CMOVP, "cmovp") X(CMOVNP, "cmovnp") X(CMOVL, "cmovl") \
  X(CMOVGE, "cmovge") X(CMOVLE, "cmovle") X(CMOVG, "cmovg") \
  /* SSE, SSE2, SSE4.1 */ \
  X(MOVSS, "movss") X(MOVSD, "movsd") X(MOVAPS, "movaps") X(MOVUPS, "movups") \
  X(MOVAPD, "movapd") X(MOVUPD, "movupd") X(MOVD, "movd") X(MOVQ, "movq") \
  X(MOVDQA, "movdqa") X(MOVDQU, "movdqu") X(MOVNTPS, "movntps") X(ADDSS, "addss") X(ADDSD, "addsd") \
  X(ADDPS, "addps") X(ADDPD, "addpd") X(SUBSS, "subss") X(SUBSD, "subsd") \
  X(SUBPS, "subps") X(SUBPD, "subpd") X(MULSS, "mulss") X(MULSD, "mulsd") \
  X(MULPS, "mulps") X(MULPD, "mulpd") X(DIVSS, "divss") X(DIVSD, "divsd") \
  X(DIVPS, "divps") X(DIVPD, "divpd") X(MINSS, "minss") X(MINSD, "minsd") \
  X(MINPS, "minps") X(MINPD, "minpd") X(MAXSS, "maxss") X(MAXSD, "maxsd") \
  X(MAXPS, "maxps") X(MAXPD, "maxpd") X(SQRTSS, "sqrtss") X(SQRTSD, "sqrtsd") \
  X(SQRTPS, "sqrtps") X(SQRTPD, "sqrtpd") X(CVTSI2SS, "cvtsi2ss") \
  X(CVTSI2SD, "cvtsi2sd") X(CVTSS2SI, "cvtss2si") X(CVTSD2SI, "cvtsd2si") \
  X(CVTTSS2SI, "cvttss2si") X(CVTTSD2SI, "cvttsd2si") X(CVTSS2SD, "cvtss2sd") \
  X(CVTSD2SS, "cvtsd2ss") X(CVTDQ2PS, "cvtdq2ps") X(CVTPS2DQ, "cvtps2dq") \
  X(CVTTPS2DQ, "cvttps2dq") X(CVTPS2PD, "cvtps2pd") X(CVTPD2PS, "cvtpd2ps") \
  X(CVTDQ2PD, "cvtdq2pd") X(CVTTPD2DQ, "cvttpd2dq") X(ROUNDPS, "roundps") \
  X(ROUNDPD, "roundpd") X(ROUNDSS, "roundss") X(ROUNDSD, "roundsd") \
  X(COMISS, "comiss") X(UCOMISS, "ucomiss") X(COMISD, "comisd") X(UCOMISD, "ucomisd") \
  X(PAND, "pand") X(PANDN, "pandn") X(POR, "por") X(PXOR, "pxor") X(ANDPS, "andps") \
  X(ANDNPS, "andnps") X(ORPS, "orps") X(XORPS, "xorps") X(ANDPD, "andpd") \
  X(ANDNPD, "andnpd") X(ORPD, "orpd") X(XORPD, "xorpd") X(SHUFPS, "shufps") \
  X(MOVHLPS, "movhlps") X(MOVLHPS, "movlhps") X(UNPCKLPS, "unpcklps") \
  X(UNPCKHPS, "unpckhps") X(PSHUFD, "pshufd") X(PADDD, "paddd") X(PSUBD, "psubd") \
  X(PMULLD, "pmulld") X(PCMPEQD, "pcmpeqd") X(PCMPGTD, "pcmpgtd") X(CMPPS, "cmpps") \
  X(CMPPD, "cmppd") X(PADDQ, "paddq") X(PSUBQ, "psubq") X(PSLLD, "pslld") X(PSRLD, "psrld") \
  X(PSRAD, "psrad") X(PSLLQ, "psllq") X(MOVMSKPS, "movmskps") \
  /* AVX, AVX2, FMA, F16C */ \
  X(VMOVUPS, "vmovups") X(VMOVAPS, "vmovaps") X(VMOVUPD, "vmovupd") \
  X(VMOVAPD, "vmovapd") X(VMOVDQU, "vmovdqu") X(VMOVDQA, "vmovdqa") X(VMOVNTPS, "vmovntps") \
  X(VMOVSS, "vmovss") X(VMOVSD, "vmovsd") X(VMOVD, "vmovd") X(VMOVQ, "vmovq") \
  X(VADDPS, "vaddps") X(VADDPD, "vaddpd") X(VSUBPS, "vsubps") X(VSUBPD, "vsubpd") \
  X(VMULPS, "vmulps") X(VMULPD, "vmulpd") X(VDIVPS, "vdivps") X(VDIVPD, "vdivpd") \
  X(VMINPS, "vminps") X(VMINPD, "vminpd") X(VMAXPS, "vmaxps") X(VMAXPD, "vmaxpd") \
  X(VSQRTPS, "vsqrtps") X(VSQRTPD, "vsqrtpd") X(VADDSS, "vaddss") X(VADDSD, "vaddsd") \
  X(VSUBSS, "vsubss") X(VSUBSD, "vsubsd") X(VMULSS, "vmulss") X(VMULSD, "vmulsd") \
  X(VDIVSS, "vdivss") X(VDIVSD, "vdivsd") X(VMINSS, "vminss") X(VMINSD, "vminsd") \
  X(VMAXSS, "vmaxss") X(VMAXSD, "vmaxsd") X(VSQRTSS, "vsqrtss") X(VSQRTSD, "vsqrtsd") \
  X(VANDPS, "vandps") X(VANDNPS, "vandnps") X(VORPS, "vorps") X(VXORPS, "vxorps") \
  X(VANDPD, "vandpd") X(VXORPD, "vxorpd") X(VFMADD132PS, "vfmadd132ps") \
  X(VFMADD213PS, "vfmadd213ps") X(VFMADD231PS, "vfmadd231ps") \
  X(VFMADD132PD, "vfmadd132pd") X(VFMADD213PD, "vfmadd213pd") \
  X(VFMADD231PD, "vfmadd231pd") X(VFMADD132SS, "vfmadd132ss") \
  X(VFMADD213SS, "vfmadd213ss") X(VFMADD231SS, "vfmadd231ss") \
  X(VFMADD132SD, "vfmadd132sd") X(VFMADD213SD, "vfmadd213sd") \
  X(VFMADD231SD, "vfmadd231sd") X(VFNMADD231PS, "vfnmadd231ps") \
  X(VFNMADD231PD, "vfnmadd231pd") X(VBROADCASTSS, "vbroadcastss") \
  X(VBROADCASTSD, "vbroadcastsd") X(VPBROADCASTD, "vpbroadcastd") \
  X(VPBROADCASTQ, "vpbroadcastq") X(VPERM2F128, "vperm2f128") X(VPERMPS, "vpermps") \
  X(VPERMD, "vpermd") X(VEXTRACTF128, "vextractf128") X(VINSERTF128, "vinsertf128") \
  X(VSHUFPS, "vshufps") X(VUNPCKLPS, "vunpcklps") X(VUNPCKHPS, "vunpckhps") \
  X(VMOVHLPS, "vmovhlps") X(VPSHUFD, "vpshufd") X(VBLENDVPS, "vblendvps") \
  X(VCMPPS, "vcmpps") X(VCMPPD, "vcmppd") X(VPCMPEQD, "vpcmpeqd") \
  X(VPCMPGTD, "vpcmpgtd") X(VPADDD, "vpaddd") X(VPADDQ, "vpaddq") X(VPSUBD, "vpsubd") \
  X(VPSUBQ, "vpsubq") X(VPMULLD, "vpmulld") X(VPAND, "vpand") X(VPANDN, "vpandn") \
  X(VPOR, "vpor") X(VPXOR, "vpxor") X(VPSLLD, "vpslld") X(VPSRLD, "vpsrld") \
  X(VPSRAD, "vpsrad") X(VPSLLQ, "vpsllq") X(VPSRLQ, "vpsrlq") X(VPSLLVD, "vpsllvd") \
  X(VPSRLVD, "vpsrlvd") X(VPSRAVD, "vpsravd") X(VCVTDQ2PS, "vcvtdq2ps") \
  X(VCVTPS2DQ, "vcvtps2dq") X(VCVTTPS2DQ, "vcvttps2dq") X(VCVTPS2PD, "vcvtps2pd") \
  X(VCVTPD2PS, "vcvtpd2ps") X(VCVTPH2PS, "vcvtph2ps") X(VCVTPS2PH, "vcvtps2ph") \
  X(VCVTSI2SS, "vcvtsi2ss") X(VCVTSI2SD, "vcvtsi2sd") X(VCVTSS2SD, "vcvtss2sd") \
  X(VCVTSD2SS, "vcvtsd2ss") X(VCVTTSS2SI, "vcvttss2si") X(VCVTTSD2SI, "vcvttsd2si") \
  X(VMOVMSKPS, "vmovmskps") X(VROUNDPS, "vroundps") X(VROUNDSS, "vroundss") X(VMASKMOVPS, "vmaskmovps") \
  X(VZEROUPPER, "vzeroupper") \
  /* AVX-512 only */ \
  X(VMOVDQU32, "vmovdqu32") X(VMOVDQU64, "vmovdqu64") X(VMOVDQA32, "vmovdqa32") \
  X(VMOVDQA64, "vmovdqa64") X(KMOVW, "kmovw") X(KMOVB, "kmovb") X(KMOVD, "kmovd") \
  X(KMOVQ, "kmovq") X(KORTESTW, "kortestw") X(KORTESTB, "kortestb") \
  X(KORTESTD, "kortestd") X(KORTESTQ, "kortestq") X(VPMOVM2D, "vpmovm2d") X(VPTERNLOGD, "vpternlogd") \
  X(VPTERNLOGQ, "vpternlogq") X(VPERMT2PS, "vpermt2ps") \
  X(VCVTNE2PS2BF16, "vcvtne2ps2bf16") X(VEXTRACTF32X4, "vextractf32x4") \
  X(VEXTRACTF64X4, "vextractf64x4") X(VINSERTF32X4, "vinsertf32x4") \
  X(VINSERTF64X4, "vinsertf64x4") \
  X(VPANDD, "vpandd") X(VPANDQ, "vpandq") X(VPANDND, "vpandnd") X(VPORD, "vpord") \
  X(VPORQ, "vporq") X(VPXORD, "vpxord") X(VPXORQ, "vpxorq") X(VBLENDMPS, "vblendmps") \
  X(VRNDSCALEPS, "vrndscaleps") X(VSCALEFPS, "vscalefps") X(KANDW, "kandw") X(KORW, "korw") X(KXNORW, "kxnorw") \
  X(KXORW, "kxorw") X(KNOTW, "knotw") \

typedef enum X86Mnemonic {
#define X86_MNEMONIC_ENUM(id, name) X86_##id,
  X86_MNEMONICS(X86_MNEMONIC_ENUM)
#undef X86_MNEMONIC_ENUM
  X86_MNEMONIC_COUNT
} X86Mnemonic;

const char *x86_mnemonic_name(X86Mnemonic m);   /* Intel spelling: "movzx" */

/* Condition codes, numbered as the encoding numbers them. */
typedef enum X86Cond {
  X86_CC_O, X86_CC_NO, X86_CC_B, X86_CC_AE, X86_CC_E, X86_CC_NE, X86_CC_BE, X86_CC_A,
  X86_CC_S, X86_CC_NS, X86_CC_P, X86_CC_NP, X86_CC_L, X86_CC_GE, X86_CC_LE, X86_CC_G,
} X86Cond;
static inline X86Mnemonic x86_jcc(X86Cond cc) { return (X86Mnemonic)(X86_JO + cc); }
static inline X86Mnemonic x86_setcc(X86Cond cc) { return (X86Mnemonic)(X86_SETO + cc); }
static inline X86Mnemonic x86_cmovcc(X86Cond cc) { return (X86Mnemonic)(X86_CMOVO + cc); }

/* ------------------------------------------------------------- operands */
typedef int X86Label;   /* an index into the buffer's labels */

typedef enum X86OperandKind {
  X86_OPERAND_NONE, X86_OPERAND_REG, X86_OPERAND_MEM, X86_OPERAND_IMM, X86_OPERAND_LABEL,
} X86OperandKind;

/* A memory operand: [base + index*scale + disp], or [rip + disp], or
 * [rip + label] for data placed in the code (constant pools). size is the
 * number of bytes accessed, Intel's "m32" is size 4; with broadcast (EVEX
 * {1toN}) size is the one element that is read. */
typedef struct X86Mem {
  X86Reg base;          /* a 64-bit GPR, X86_RIP, or X86_NOREG */
  X86Reg index;         /* a 64-bit GPR other than rsp, or X86_NOREG */
  uint8_t scale;        /* 1, 2, 4 or 8 */
  bool broadcast;
  uint16_t size;
  int32_t disp;
  X86Label label;       /* with base X86_RIP: the target, or -1 for rip+disp */
} X86Mem;

typedef struct X86Operand {
  X86OperandKind kind;
  X86Reg reg;
  uint8_t mask;         /* EVEX opmask k1..k7 on a destination; 0 = none */
  bool zeroing;         /* EVEX {z}: masked-off lanes become zero */
  X86Mem mem;
  int64_t imm;
  X86Label label;       /* jump or call target */
} X86Operand;

static inline X86Operand x86_reg(X86Reg r) {
  X86Operand o = {0}; o.kind = X86_OPERAND_REG; o.reg = r; return o;
}
static inline X86Operand x86_imm(int64_t value) {
  X86Operand o = {0}; o.kind = X86_OPERAND_IMM; o.imm = value; return o;
}
static inline X86Operand x86_rel(X86Label target) {
  X86Operand o = {0}; o.kind = X86_OPERAND_LABEL; o.label = target; return o;
}
static inline X86Operand x86_mem_index(int size, X86Reg base, X86Reg index, int scale,
                                       int32_t disp) {
  X86Operand o = {0};
  o.kind = X86_OPERAND_MEM;
  o.mem.size = (uint16_t)size; o.mem.base = base; o.mem.index = index;
  o.mem.scale = (uint8_t)(index ? scale : 1); o.mem.disp = disp; o.mem.label = -1;
  return o;
}
static inline X86Operand x86_mem(int size, X86Reg base, int32_t disp) {
  return x86_mem_index(size, base, X86_NOREG, 1, disp);
}
static inline X86Operand x86_mem_rip(int size, int32_t disp) {
  return x86_mem_index(size, X86_RIP, X86_NOREG, 1, disp);
}
static inline X86Operand x86_mem_label(int size, X86Label label) {
  X86Operand o = x86_mem_rip(size, 0); o.mem.label = label; return o;
}
/* EVEX embedded broadcast: mem names one element, read into every lane. */
static inline X86Operand x86_broadcast(X86Operand mem) {
  mem.mem.broadcast = true; return mem;
}
/* EVEX masking of a destination: merge keeps masked-off lanes, zero clears. */
static inline X86Operand x86_merge_masked(X86Operand dest, X86Reg k) {
  dest.mask = (uint8_t)x86_reg_number(k); dest.zeroing = false; return dest;
}
static inline X86Operand x86_zero_masked(X86Operand dest, X86Reg k) {
  dest.mask = (uint8_t)x86_reg_number(k); dest.zeroing = true; return dest;
}

/* ------------------------------------------------------------ x86_buffer.c
 * The code buffer: bytes that grow as instructions are emitted, labels and
 * their fix-ups, alignment padding, and (when enabled) the listing. */
typedef struct X86Fixup {
  size_t at;            /* offset of the displacement field */
  size_t end;           /* offset the displacement counts from (next instruction) */
  uint8_t width;        /* 1 (rel8) or 4 (rel32) */
  X86Label label;
} X86Fixup;

typedef struct X86Instr {
  X86Mnemonic mnemonic;
  int count;
  X86Operand operands[4];
} X86Instr;

typedef struct X86ListingLine {
  size_t offset, length;
  X86Instr instr;
  int broadcast_lanes;  /* N of a {1toN} operand, from the encoding row */
  const char *note;     /* an owned comment line instead of an instruction, or NULL */
} X86ListingLine;

typedef struct X86Buffer {
  uint8_t *code;
  size_t size, capacity;
  int64_t *label_offsets;        /* -1 while unbound */
  int label_count;
  size_t label_capacity;
  X86Fixup *fixups;
  size_t fixup_count, fixup_capacity;
  bool listing_enabled;
  X86ListingLine *listing;
  size_t listing_count, listing_capacity;
  bool failed;                   /* the first error is kept in error */
  char error[256];
} X86Buffer;

void x86_buffer_init(X86Buffer *cb);
void x86_buffer_free(X86Buffer *cb);
void x86_buffer_enable_listing(X86Buffer *cb);
/* Resolves every fix-up; false (and st filled in) when a label is unbound,
 * a rel8 target is out of range, or an earlier emit failed. */
bool x86_buffer_finish(X86Buffer *cb, Status *st);

X86Label x86_label_new(X86Buffer *cb);
void x86_label_bind(X86Buffer *cb, X86Label label);      /* at the current offset */
int64_t x86_label_offset(const X86Buffer *cb, X86Label label);  /* -1 if unbound */

/* Pads to a multiple of alignment (a power of two) with the multi-byte NOPs
 * GNU as uses for .p2align in code: 11-byte NOPs, then one shorter NOP. */
void x86_align(X86Buffer *cb, size_t alignment);
void x86_emit_nops(X86Buffer *cb, size_t count);
void x86_emit_bytes(X86Buffer *cb, const void *bytes, size_t count);  /* raw data */

/* ------------------------------------------------------------- x86_emit.c */
bool x86_emit_instr(X86Buffer *cb, const X86Instr *instr);
bool x86_emit_operands(X86Buffer *cb, X86Mnemonic m, int count, const X86Operand *operands);
#define x86_emit(cb, mnemonic, ...)                                               \
  x86_emit_operands((cb), (mnemonic),                                             \
                    (int)(sizeof((X86Operand[]){__VA_ARGS__}) / sizeof(X86Operand)), \
                    (X86Operand[]){__VA_ARGS__})
static inline bool x86_emit0(X86Buffer *cb, X86Mnemonic m) {
  return x86_emit_operands(cb, m, 0, NULL);
}

/* ----------------------------------------------------------- x86_listing.c
 * The listing: each instruction in AT&T syntax, spelled as `objdump -d`
 * spells it (the tests check every swept encoding against objdump 2.40).
 * Where objdump adds what the buffer cannot know, the listing leaves it
 * out: a jump or call target prints as its offset in hex ("jne    1f"),
 * without objdump's " <symbol+0x1f>"; a RIP-relative operand prints
 * without objdump's trailing "# address" comment. Padding NOPs print as
 * objdump names them ("data16 cs nopw 0x0(%rax,%rax,1)"). */
void x86_listing_note(X86Buffer *cb, const char *fmt, ...);   /* a comment line */
/* Writes instruction i's text ("vaddps %ymm2,%ymm1,%ymm0") into out. */
void x86_listing_text(const X86Buffer *cb, size_t i, char *out, size_t out_size);
void x86_instr_att_text(const X86Instr *instr, int64_t target, char *out, size_t out_size);
/* Prints the listing like objdump -d: "  1f:\t48 01 d8\tadd    %rbx,%rax". */
void x86_listing_print(const X86Buffer *cb, FILE *out);

#endif
