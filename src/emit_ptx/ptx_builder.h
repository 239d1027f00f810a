/* The PTX text builder: what every GPU kernel emitter writes through.
 *
 * axle writes PTX itself (no LLVM, no NVRTC) and the CUDA driver's JIT turns
 * it into machine code at load time. This header is the table of contents of
 * src/emit_ptx's bottom layer:
 *
 *   ptx_builder.c  the target (.version/.target from a compute capability),
 *                  the module text, kernels with typed parameters, typed
 *                  virtual registers declared once their count is known,
 *                  labels, shared memory, and the addressing every kernel
 *                  starts with (parameter loads, the global thread index)
 *   ptx_ops.c      the one table that maps HLO elementwise ops to PTX
 *                  instructions per element type, and the list of math
 *                  functions that need a software sequence (refused today)
 *
 * Instructions are written with ptx_inst and a small format language (below)
 * so that an emitter reads like the PTX it produces:
 *
 *   PtxReg sum = ptx_reg_new(b, PTX_F32);
 *   ptx_inst(b, "add.rn.f32 $r, $r, $r", sum, x, y);   // add.rn.f32 %f3, %f1, %f2;
 */
#ifndef AXLE_EMIT_PTX_PTX_BUILDER_H
#define AXLE_EMIT_PTX_PTX_BUILDER_H

#include <stdarg.h>
#include <stdint.h>

#include "ir.h"

/* ------------------------------------------------------------ the target
 * Chosen from the device's compute capability:
 *   8.x   sm_80, sm_86, sm_87, sm_89 as they are (mma.sync, cp.async)
 *   9.0   sm_90a: the arch-specific target that wgmma and setmaxnreg need;
 *         its PTX runs on Hopper only, which is what it is compiled for
 *   10+   sm_90 (not 'a'): PTX for sm_90 is forward compatible, so the
 *         driver's JIT compiles it for newer GPUs until axle targets them
 * Older GPUs (before Ampere) are refused: axle's kernels assume mma.sync,
 * max.NaN and bf16 conversions. PTX ISA 8.0 (CUDA 12.0) is the first with
 * sm_90a; every ptxas and driver of CUDA 12 or newer reads it. */
typedef struct PtxTarget {
  int sm;                /* 80, 86, 89, 90 ... */
  bool arch_specific;    /* the 'a' suffix: sm_90a */
  int isa_major, isa_minor;
  char name[16];         /* "sm_90a", as .target and ptxas -arch spell it */
} PtxTarget;

bool ptx_target_for_device(int compute_major, int compute_minor, PtxTarget *target, Status *st);
/* A target by the name ptxas -arch takes ("sm_80", "sm_90a"), for PTX
 * written with no device (axle-opt --stage=ptx --target NAME, axle-run
 * --target NAME). */
bool ptx_target_from_name(const char *name, PtxTarget *target, Status *st);
/* Whether a device of that compute capability runs PTX written for target. */
bool ptx_target_runs_on(const PtxTarget *target, int compute_major, int compute_minor);
bool ptx_target_has_wgmma(const PtxTarget *target);

/* ------------------------------------------------------- types, registers
 * PTX instruction types, one row each:
 *   PTX_TYPE(ENUM, suffix, register class, bytes)
 * The register class is the kind of virtual register a value of the type
 * lives in: 8- and 16-bit integers, f16 and bf16 sit in 16-bit %h registers
 * (PTX has no arithmetic on 8-bit registers; ld.u8 widens), predicates in
 * %p. A pred in memory is a byte (PTX cannot load or store .pred). */
typedef enum PtxRegClass {
  PTX_REG_PRED,   /* %p   .pred */
  PTX_REG_B16,    /* %h   .b16  */
  PTX_REG_B32,    /* %r   .b32  */
  PTX_REG_B64,    /* %rd  .b64  */
  PTX_REG_F32,    /* %f   .f32  */
  PTX_REG_F64,    /* %fd  .f64  */
  PTX_REG_CLASS_COUNT
} PtxRegClass;

#define AXLE_PTX_TYPES(PTX_TYPE)               \
  PTX_TYPE(PRED, ".pred", PTX_REG_PRED, 1)     \
  PTX_TYPE(B16,  ".b16",  PTX_REG_B16,  2)     \
  PTX_TYPE(B32,  ".b32",  PTX_REG_B32,  4)     \
  PTX_TYPE(B64,  ".b64",  PTX_REG_B64,  8)     \
  PTX_TYPE(U8,   ".u8",   PTX_REG_B16,  1)     \
  PTX_TYPE(S8,   ".s8",   PTX_REG_B16,  1)     \
  PTX_TYPE(U16,  ".u16",  PTX_REG_B16,  2)     \
  PTX_TYPE(S16,  ".s16",  PTX_REG_B16,  2)     \
  PTX_TYPE(U32,  ".u32",  PTX_REG_B32,  4)     \
  PTX_TYPE(S32,  ".s32",  PTX_REG_B32,  4)     \
  PTX_TYPE(U64,  ".u64",  PTX_REG_B64,  8)     \
  PTX_TYPE(S64,  ".s64",  PTX_REG_B64,  8)     \
  PTX_TYPE(F16,  ".f16",  PTX_REG_B16,  2)     \
  PTX_TYPE(BF16, ".bf16", PTX_REG_B16,  2)     \
  PTX_TYPE(F32,  ".f32",  PTX_REG_F32,  4)     \
  PTX_TYPE(F64,  ".f64",  PTX_REG_F64,  8)

typedef enum PtxType {
#define AXLE_PTX_TYPE_ENUM(e, suffix, cls, bytes) PTX_##e,
  AXLE_PTX_TYPES(AXLE_PTX_TYPE_ENUM)
#undef AXLE_PTX_TYPE_ENUM
  PTX_TYPE_COUNT
} PtxType;

const char *ptx_type_suffix(PtxType t);      /* ".f32" */
PtxRegClass ptx_type_reg_class(PtxType t);
int ptx_type_byte_size(PtxType t);
/* The PTX type an HLO element type computes in; false for the types the
 * GPU backend does not handle yet (complex, f8/f4, s4/u4/s2/u2). */
bool ptx_type_of_element(ElementType t, PtxType *out);

/* A virtual register: %f3 is {PTX_REG_F32, 3}. ptxas allocates the real
 * registers; the builder only counts how many of each class a kernel used. */
typedef struct PtxReg {
  PtxRegClass cls;
  int index;
} PtxReg;

/* "%f3" into out (size >= 16). */
void ptx_reg_name(PtxReg r, char *out, size_t size);

typedef struct PtxLabel {
  int index;
  const char *hint;   /* a static string naming the place: "tail", "done" */
} PtxLabel;

/* ------------------------------------------------------------ the builder
 * One module under construction. Kernels are built one at a time: begin,
 * parameters and body in any order, end. The body is kept apart until the
 * end because the .reg declarations that open a kernel need the final
 * register counts. Everything is malloc'd and freed by ptx_builder_free. */
typedef struct PtxBuilder {
  PtxTarget target;
  StrBuf module;            /* the finished text: header and ended kernels */
  bool in_kernel;
  char kernel_name[128];
  StrBuf kernel_comment;    /* what the kernel does, above its .entry */
  StrBuf params;            /* ".param .u64 x", comma-separated */
  StrBuf declarations;      /* .shared arrays */
  StrBuf body;
  int max_threads;          /* .maxntid, 0 when not given */
  int reg_count[PTX_REG_CLASS_COUNT];
  int label_count;
  /* Where each ended kernel's text lies in `module`, in the order written:
   * the rest of the text past the header is module-scope declarations
   * (math tables, dynamic shared memory), so a kernel can be written out
   * alone (ptx_builder_kernel_module: the GPU backend's --dump). */
  size_t header_bytes;
  int span_count, span_capacity;
  struct PtxKernelSpan {
    char name[128];
    size_t start, end;
  } *spans;
} PtxBuilder;

/* Writes the module header (.version, .target, .address_size 64). */
void ptx_builder_init(PtxBuilder *b, const PtxTarget *target);
void ptx_builder_free(PtxBuilder *b);
/* The module text so far; valid until the next call on b. */
const char *ptx_builder_text(const PtxBuilder *b);
/* A module of its own for the kernels named entries[0..count), appended to
 * out: the header, every module-scope declaration written before the last
 * of them (a declaration a kernel uses comes before it; one more is
 * harmless), then the kernels in the order written. False when a name is
 * no kernel of b's. */
bool ptx_builder_kernel_module(const PtxBuilder *b, const char *const *entries, int count, StrBuf *out);

/* `what` says what the kernel computes; it becomes the comment above it. */
void ptx_kernel_begin(PtxBuilder *b, const char *name, const char *what);
void ptx_kernel_param(PtxBuilder *b, PtxType type, const char *name);
/* .maxntid: the block size the kernel is written for; lets ptxas budget
 * registers and makes a launch with a bigger block fail loudly. */
void ptx_kernel_set_max_threads(PtxBuilder *b, int threads);
/* A by-value parameter of `bytes` bytes: ".param .align ALIGN .b8 NAME[BYTES]"
 * (a tensor map). */
void ptx_kernel_param_bytes(PtxBuilder *b, const char *name, int bytes, int align);
/* The kernel's dynamic shared memory, sized at launch: an ".extern .shared
 * .align ALIGN .b8 NAME[]" at module scope (ptxas takes it nowhere else),
 * so each kernel names its own. */
void ptx_dynamic_shared_declare(PtxBuilder *b, const char *name, int align);
void ptx_kernel_end(PtxBuilder *b);
/* Drops the kernel being built (an emitter that met something it refuses
 * part-way); the module keeps only the kernels ended before it. */
void ptx_kernel_abandon(PtxBuilder *b);

PtxReg ptx_reg_new(PtxBuilder *b, PtxType type);
/* The PTX spelling of a double's bits ("0d" and 16 hex digits), exact. */
void ptx_f64_text(double v, char *text, size_t size);
/* A new f64 register holding v (mov.b64 of its exact bits). */
PtxReg ptx_f64_constant(PtxBuilder *b, double v);
PtxLabel ptx_label_new(PtxBuilder *b, const char *hint);
void ptx_label_place(PtxBuilder *b, PtxLabel label);
/* ".shared .align ALIGN TYPE NAME[COUNT]" at the top of the kernel. */
void ptx_shared_declare(PtxBuilder *b, const char *name, PtxType type, int count, int align);

/* One instruction; the builder adds the indentation and the ';'.
 * Format: text is copied as is (so %tid.x, [addr] and {a, b} stay PTX);
 *   $r  a PtxReg          $s  a const char *      $d  an int
 *   $D  an int64_t        $l  a PtxLabel           $$  a '$'
 * A predicate guard is written in the text: ptx_inst(b, "@$r bra $l", p, l). */
void ptx_inst(PtxBuilder *b, const char *format, ...);
/* A new register of type t = OP a (, c (, e)): "add.rn.f32", x, y. */
PtxReg ptx_op1(PtxBuilder *b, PtxType t, const char *op, PtxReg a);
PtxReg ptx_op2(PtxBuilder *b, PtxType t, const char *op, PtxReg a, PtxReg c);
PtxReg ptx_op3(PtxBuilder *b, PtxType t, const char *op, PtxReg a, PtxReg c, PtxReg e);
void ptx_inst_v(PtxBuilder *b, const char *format, va_list args);
/* A comment line in the body: say what the next block does. */
void ptx_comment(PtxBuilder *b, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* The addressing every kernel starts with. */
/* ld.param of a scalar parameter. */
PtxReg ptx_param_load(PtxBuilder *b, PtxType type, const char *name);
/* ld.param.u64 of a pointer parameter, converted to a global address. */
PtxReg ptx_param_load_global_pointer(PtxBuilder *b, const char *name);
/* ctaid.x * ntid.x + tid.x, widened to 64 bits before the multiply so that
 * index spaces past 2^32 elements do not wrap. */
PtxReg ptx_global_thread_index(PtxBuilder *b);
/* base + index * element_bytes, all 64-bit. */
PtxReg ptx_element_address(PtxBuilder *b, PtxReg base, PtxReg index, int element_bytes);

/* ------------------------------------------------------------- ptx_ops.c
 * HLO elementwise ops as PTX instructions. `type` is the operands' element
 * type (for select, that of the two values chosen between; for convert, the
 * source's); `result_type` matters for convert only (compare and
 * is-finite give pred, the others the operand type). The destination must
 * be a fresh register: some sequences read an operand after writing it. */
typedef struct PtxElementwise {
  Opcode op;
  ElementType type;
  ElementType result_type;        /* convert */
  CompareDirection direction;     /* compare */
  CompareType compare_type;       /* compare; TOTALORDER is not supported yet */
} PtxElementwise;

/* Fails with STATUS_UNSUPPORTED, saying why, when the op has no PTX on the
 * target for the type (a math function that needs a software sequence,
 * bf16 arithmetic before sm_90, 8-bit integers...). Nothing is emitted then. */
bool ptx_emit_elementwise(PtxBuilder *b, const PtxElementwise *e, PtxReg dst, const PtxReg *operands,
                          Status *st);
/* True for the ops that need a software sequence on the GPU (exp, log,
 * tanh ...): PTX has only .approx instructions for them, without the range
 * handling that accuracy to a few ulp needs. */
bool ptx_op_needs_math_sequence(Opcode op);

/* ------------------------------------------------------------ ptx_math.c
 * The f32 math functions (exp, expm1, log, log1p, tanh, logistic, erf,
 * sin, cos, tan, atan2, pow, cbrt, rsqrt and their compositions) as inline
 * PTX: the algorithms of src/ir/kernel/math_algorithms*.c on PTX
 * primitives. False (nothing emitted) for other ops. */
bool ptx_math_emit(PtxBuilder *b, Opcode op, PtxReg dst, const PtxReg *operands);
/* The same for f64. */
bool ptx_math_f64_emit(PtxBuilder *b, Opcode op, PtxReg dst, const PtxReg *operands);

#endif
