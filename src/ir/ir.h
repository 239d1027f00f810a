/* axle's intermediate representation: the table of contents of src/ir.
 *
 * An HLO module is a set of computations; a computation is a list of
 * instructions in an order where operands come before their users; the last
 * word of a computation is its root. Everything a module holds lives in the
 * module's arena and is freed at once by module_free (constant literals,
 * which are malloc'd, sit in the module's list of literals and are freed
 * there too, whether or not their instruction is still in the graph).
 *
 * Each section below lists what one file of src/ir exports.
 */
#ifndef AXLE_IR_H
#define AXLE_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include "opcode.h"

enum { AXLE_MAX_RANK = 16 };

/* ---------------------------------------------------------------- arena.c
 * A bump allocator. Memory is zeroed and 16-byte aligned; freed all at once. */
typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
  ArenaBlock *head;
} Arena;

void *arena_alloc(Arena *arena, size_t size);        /* zeroed; never NULL */
char *arena_strdup(Arena *arena, const char *s);
char *arena_strndup(Arena *arena, const char *s, size_t n);
void *arena_memdup(Arena *arena, const void *p, size_t size);
void arena_free_all(Arena *arena);

/* -------------------------------------------------------------- memory.c
 * Every allocation of the library: mem_calloc (zeroed), mem_malloc,
 * mem_realloc, mem_strdup; free with mem_free, never free (the scope would
 * free the block again if it unwound). None returns NULL (the mem_try_*
 * ones do, for a caller that names what failed). Out of memory unwinds to
 * the innermost MemScope of the thread, which frees every block allocated since
 * it began (and unmaps tracked code pages) and lands in its setjmp with
 * `needed` set; with no scope, the message is printed and the process exits
 * (only the tools run so). The pattern, in a function that returns:
 *
 *   MemScope scope;
 *   mem_scope_begin(&scope);
 *   if (setjmp(scope.unwind) != 0) return report(scope.needed);
 *   ... work ...
 *   mem_scope_end(&scope);   // what was allocated now belongs to the caller
 *
 * A variable assigned between setjmp and the jump and read after it must be
 * volatile. Never leave a scope's function while it is open, and never
 * unwind past a held lock: take the lock inside a nested scope that unlocks
 * and calls mem_scope_rethrow. */
typedef struct MemEntry {
  void *block;
  size_t mapped;                   /* a code mapping's size; 0 for a heap block */
  void (*release)(void *block);    /* an object that frees itself (a thread pool) */
} MemEntry;

enum { MEM_WHAT_SIZE = 96, MEM_SCOPE_FIRST_ENTRIES = 16 };

typedef struct MemScope {
  jmp_buf unwind;
  MemEntry *entries;       /* an open-addressed set of what was allocated */
  size_t cap, count;
  /* The set's first table, in the scope itself: a scope that keeps a few
   * blocks (a run borrowing the GEMM's workspace) allocates nothing. */
  MemEntry first[MEM_SCOPE_FIRST_ENTRIES];
  size_t needed;           /* after an unwind: the bytes asked for (SIZE_MAX: overflow) */
  char what[MEM_WHAT_SIZE];  /* and for what, when known ("f32[300000,250000]") */
  bool keeping;            /* an unwind keeps the blocks (their owners may point to them) */
  struct MemScope *outer;
} MemScope;

void mem_scope_begin(MemScope *s);
void mem_scope_end(MemScope *s);
/* A scope for a call that grows an object made before it (the public
 * builder): an unwind frees nothing, because the object may already point
 * to what was allocated; the object must be marked broken instead. */
void mem_scope_begin_keeping(MemScope *s);
_Noreturn void mem_scope_rethrow(MemScope *s);   /* after an unwind: unwind the next scope */
_Noreturn void mem_fail(size_t count, size_t size);
_Noreturn void mem_fail_for(const char *what, size_t bytes);
/* NULL when memory runs out, for a caller that names what failed. */
void *mem_try_calloc(size_t count, size_t size);
void *mem_try_aligned_alloc(size_t alignment, size_t size);
/* Zeroed memory for an array's elements, aligned to ARRAY_ALIGNMENT bytes
 * (a cache line, one AVX-512 vector); NULL when out of memory. Arrays the
 * library allocates all start on a line, so generated code runs at one
 * speed whatever the allocator would have given. */
enum { ARRAY_ALIGNMENT = 64 };
void *mem_try_array_calloc(size_t bytes);
/* The same, not zeroed: for an array whose every byte is written next. */
void *mem_try_array_alloc(size_t bytes);
void *mem_calloc(size_t count, size_t size);
void *mem_malloc(size_t size);
void *mem_realloc(void *p, size_t size);
char *mem_strdup(const char *s);
void mem_free(void *p);
/* Kept like a block, released on unwind by munmap or by its own function;
 * mem_untrack when it is freed the normal way. */
void mem_track_mapping(void *base, size_t size);
void mem_track_object(void *object, void (*release)(void *object));
void mem_untrack(void *block);
/* A block from malloc (read while a FILE was open), kept from now on as if
 * from mem_malloc. Returns it. */
void *mem_adopt(void *block);
/* For tests: the allocation after the next `allocations` ones fails (0: the
 * next one); -1 turns it off. Returns how many were left of the last count
 * (-1 once a failure was injected), which counts a run's allocations. */
long mem_fail_after(long allocations);
/* Blocks taken from the system allocator so far, by every thread: the
 * mem_* allocations and the memory scopes' own sets (tests: a run after
 * the first allocates nothing). */
long mem_allocation_count(void);

/* --------------------------------------------------------------- status.c
 * Errors are values. A fallible function takes a Status * and returns false
 * (or NULL) after filling it in. The message carries no "error:" prefix;
 * status_format adds it, with FILE:LINE:COL when a location is known, and
 * the offending source line with a caret under the column when one was kept. */
typedef enum StatusCode {
  STATUS_OK = 0,
  STATUS_PARSE_ERROR,    /* malformed text */
  STATUS_VERIFY_ERROR,   /* well-formed but wrong shapes or attributes */
  STATUS_UNSUPPORTED,    /* valid HLO that axle does not handle */
  STATUS_INPUT_ERROR,    /* wrong arguments given at run time */
  STATUS_RUNTIME_ERROR,  /* failure while running */
  STATUS_OUT_OF_MEMORY,
} StatusCode;

typedef struct SourceLoc {
  int line, col;   /* 1-based; 0 when unknown */
} SourceLoc;

typedef struct Status {
  StatusCode code;
  char message[1024];
  const char *file;      /* not owned; NULL when unknown */
  SourceLoc loc;
  char source_line[256]; /* the line at loc, for the caret; "" if none */
} Status;

void status_clear(Status *st);
/* Fills st and returns false, so callers can write
 *   return status_error(st, STATUS_PARSE_ERROR, "expected %s", what); */
bool status_error(Status *st, StatusCode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool status_error_at(Status *st, StatusCode code, const char *file,
                     SourceLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* "FILE:LINE:COL: error: MESSAGE\n  source line\n      ^\n" or "error: MESSAGE\n" */
void status_print(const Status *st, FILE *out);
/* Exit code the tools use: 2 for parse/verify/unsupported, 1 otherwise. */
int status_exit_code(const Status *st);

/* A growable string, for the printer and for messages. */
typedef struct StrBuf {
  char *data;
  size_t len, cap;
} StrBuf;
void strbuf_printf(StrBuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void strbuf_free(StrBuf *sb);

/* ---------------------------------------------------------------- types.c
 * Element types, one row each:
 *   TYPE(ENUM, "hlo name", byte size, kind)
 * kind: K_PRED, K_SINT, K_UINT, K_FLOAT, K_COMPLEX.
 * A complex element is two floats of its component type, real part first
 * (as NumPy and XLA store them): c64 is 2 x f32, c128 is 2 x f64.
 * The 8- and 4-bit floats ("minifloats") and the 4- and 2-bit integers take
 * one byte each in a literal; a layout's E(n) packs them in buffers (see
 * shape_buffer_byte_size). Their rules are stated in minifloat.c. */
#define AXLE_ELEMENT_TYPES(TYPE)          \
  TYPE(PRED, "pred", 1, TYPE_KIND_PRED)   \
  TYPE(S8,   "s8",   1, TYPE_KIND_SINT)   \
  TYPE(S16,  "s16",  2, TYPE_KIND_SINT)   \
  TYPE(S32,  "s32",  4, TYPE_KIND_SINT)   \
  TYPE(S64,  "s64",  8, TYPE_KIND_SINT)   \
  TYPE(U8,   "u8",   1, TYPE_KIND_UINT)   \
  TYPE(U16,  "u16",  2, TYPE_KIND_UINT)   \
  TYPE(U32,  "u32",  4, TYPE_KIND_UINT)   \
  TYPE(U64,  "u64",  8, TYPE_KIND_UINT)   \
  TYPE(F16,  "f16",  2, TYPE_KIND_FLOAT)  \
  TYPE(BF16, "bf16", 2, TYPE_KIND_FLOAT)  \
  TYPE(F32,  "f32",  4, TYPE_KIND_FLOAT)  \
  TYPE(F64,  "f64",  8, TYPE_KIND_FLOAT)  \
  TYPE(C64,  "c64",  8, TYPE_KIND_COMPLEX) \
  TYPE(C128, "c128", 16, TYPE_KIND_COMPLEX) \
  TYPE(F8E4M3FN,     "f8e4m3fn",     1, TYPE_KIND_FLOAT) \
  TYPE(F8E5M2,       "f8e5m2",       1, TYPE_KIND_FLOAT) \
  TYPE(F8E4M3FNUZ,   "f8e4m3fnuz",   1, TYPE_KIND_FLOAT) \
  TYPE(F8E5M2FNUZ,   "f8e5m2fnuz",   1, TYPE_KIND_FLOAT) \
  TYPE(F8E4M3B11FNUZ, "f8e4m3b11fnuz", 1, TYPE_KIND_FLOAT) \
  TYPE(F8E4M3,       "f8e4m3",       1, TYPE_KIND_FLOAT) \
  TYPE(F8E3M4,       "f8e3m4",       1, TYPE_KIND_FLOAT) \
  TYPE(F8E8M0FNU,    "f8e8m0fnu",    1, TYPE_KIND_FLOAT) \
  TYPE(F4E2M1FN,     "f4e2m1fn",     1, TYPE_KIND_FLOAT) \
  TYPE(S4,   "s4",   1, TYPE_KIND_SINT)   \
  TYPE(U4,   "u4",   1, TYPE_KIND_UINT)   \
  TYPE(S2,   "s2",   1, TYPE_KIND_SINT)   \
  TYPE(U2,   "u2",   1, TYPE_KIND_UINT)

typedef enum TypeKind {
  TYPE_KIND_PRED, TYPE_KIND_SINT, TYPE_KIND_UINT, TYPE_KIND_FLOAT, TYPE_KIND_COMPLEX
} TypeKind;

typedef enum ElementType {
#define AXLE_TYPE_ENUM(e, name, size, kind) TYPE_##e,
  AXLE_ELEMENT_TYPES(AXLE_TYPE_ENUM)
#undef AXLE_TYPE_ENUM
  TYPE_TOKEN,   /* not an array: token[], the ordering value of side effects (size 0) */
  TYPE_TUPLE,   /* not an element type: marks a tuple shape */
  TYPE_COUNT
} ElementType;

const char *type_name(ElementType t);          /* "f32"; "token", "tuple" for the markers */
bool type_from_name(const char *s, size_t n, ElementType *out);
int type_byte_size(ElementType t);             /* 0 for TYPE_TOKEN and TYPE_TUPLE */
TypeKind type_kind(ElementType t);
bool type_is_float(ElementType t);
bool type_is_integer(ElementType t);           /* signed or unsigned, not pred */
bool type_is_complex(ElementType t);           /* c64, c128 (type_is_float is false) */
/* c64 <-> f32, c128 <-> f64; any other type maps to itself. */
ElementType type_complex_component(ElementType t);
ElementType type_complex_of(ElementType component);
int type_bit_width(ElementType t);             /* pred: 8 (one byte each); s4: 4 */
bool type_is_minifloat(ElementType t);         /* the f8 and f4 types (minifloat.c) */

/* IEEE half and bfloat16, round to nearest even. */
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);
/* f64 to f16 or bf16 with one rounding, to nearest even (IEEE's
 * convertFormat), not the two that going through float would make. */
uint16_t double_to_half(double v);
uint16_t double_to_bf16(double v);
/* f64 to f32 rounded to odd: toward zero, with the lowest bit set when
 * inexact. Rounding that once more to any format at least two bits
 * narrower (f16, bf16, the minifloats) is the one correct rounding. */
float double_to_float_round_to_odd(double v);
/* minifloat.c: the f8 and f4 types (t must be one; bits in the low bits).
 * Every value is exact in float. A double converts with one rounding, to
 * nearest even, and the type's rule for what it cannot hold (types.c). */
float minifloat_to_float(ElementType t, uint8_t bits);
uint8_t double_to_minifloat(ElementType t, double v);
/* The field widths and exponent bias of minifloat t (false for others),
 * for code generators that round in registers. */
bool minifloat_layout(ElementType t, int *exponent_bits, int *mantissa_bits, int *bias);

/* A shape: an array (element type, dimensions, layout) or a tuple of shapes.
 * minor_to_major is always filled for arrays: the default layout
 * {rank-1,...,1,0} when the text gave none (has_layout is then false). */
typedef struct Shape {
  ElementType type;                     /* TYPE_TUPLE for tuples */
  int rank;
  int64_t dims[AXLE_MAX_RANK];
  bool has_layout;
  uint8_t element_size_bits;            /* E(n) in the layout; 0: not packed */
  /* Bit d set: dimension d is bounded dynamic (f32[<=4]): at run time its
   * size is at most dims[d]. Shapes compare and infer by the bounds; a
   * program that holds one is loaded, and refused when compiled
   * (eval_check_supported). It sits in what was padding. With dims[d] ==
   * AXLE_UNBOUNDED_DIM, dimension d is unbounded (f32[?], XLA's
   * kUnboundedSize): no size at all (see shape_has_unbounded_dims). */
  uint16_t dynamic_dims;
  /* int8_t because ranks stay below 16: it keeps Shape (and so every
   * Instruction) 48 bytes smaller. */
  int8_t minor_to_major[AXLE_MAX_RANK];
  int tuple_count;
  struct Shape *tuple_shapes;           /* in an arena, or malloc'd for Literals */
} Shape;

Shape shape_array(ElementType t, int rank, const int64_t *dims); /* default layout */
Shape shape_scalar(ElementType t);
bool shape_is_tuple(const Shape *s);
int64_t shape_element_count(const Shape *s);    /* arrays only; 0 for a token */
int64_t shape_byte_size(const Shape *s);        /* arrays only; a literal's size */
/* Bytes of a buffer in the shape's layout: with E(n), n-bit elements are
 * packed, first element in the low bits, and the last byte padded. */
int64_t shape_buffer_byte_size(const Shape *s);
/* Same type, dims (and tuple structure); layouts are ignored. */
bool shape_equal(const Shape *a, const Shape *b);
/* f32[?]: dims[d] of an unbounded dynamic dimension (dynamic_dims bit d
 * set too). Such a shape has no element count; only the ops whose shape
 * rule passes dimensions through take one (infer_shape), and the optimizer
 * and every backend refuse a module that holds one, located. */
#define AXLE_UNBOUNDED_DIM ((int64_t)-1)
bool shape_dim_is_unbounded(const Shape *s, int d);
/* Whether s, or a leaf of it, has an unbounded dimension. */
bool shape_has_unbounded_dims(const Shape *s);
bool shape_same_dims(const Shape *a, const Shape *b);
/* An array in the layout host buffers and literals hold: {rank-1,...,0},
 * unpacked. False for a tuple. */
bool shape_is_row_major(const Shape *s);
/* Copies an array between row-major order (host buffers, literals) and
 * layout s's physical order; into_layout says which way. */
void shape_relayout_copy(const Shape *s, const void *src, void *dst, bool into_layout);
/* The arrays of a shape, counted through its tuples (1 for an array). */
int shape_leaf_count(const Shape *s);
/* Leaf `leaf` of s, counted depth first as shape_leaf_count counts them
 * (s itself for an array's leaf 0); NULL past the last. */
const Shape *shape_leaf_at(const Shape *s, int leaf);
/* The number of leaves before element k of a tuple shape: the first leaf
 * of element k. */
int shape_element_first_leaf(const Shape *s, int k);
void shape_set_default_layout(Shape *s);
/* "f32[2,3]{1,0}" / "(f32[], s32[4])"; with_layout prints {..} on arrays. */
void shape_print(StrBuf *sb, const Shape *s, bool with_layout);
/* Row-major (logical) strides in elements. */
void shape_strides(const Shape *s, int64_t strides[AXLE_MAX_RANK]);
/* Each dimension's stride in elements in s's layout: minor_to_major[0]
 * varies fastest. */
void shape_layout_strides(const Shape *s, int64_t strides[AXLE_MAX_RANK]);

/* --------------------------------------------------------------- literal.c
 * A value: dense array data in row-major logical order, whatever the shape's
 * layout (layouts matter only to bitcast), or a tuple of literals.
 * Literals are malloc'd and owned by whoever holds them. A tuple literal's
 * shape has tuple_count set and tuple_shapes NULL: its element shapes are
 * elements[i]->shape. */
typedef struct Literal {
  Shape shape;
  void *data;               /* arrays: shape_byte_size bytes */
  struct Literal **elements; /* tuples: shape.tuple_count entries */
} Literal;

Literal *literal_create(const Shape *shape);     /* zero-filled; tuples get zeroed elements */
Literal *literal_create_tuple(Literal **elements, int count); /* takes ownership */
/* Leaf `*leaf` (counting down, depth first through tuples) of lit, or NULL. */
const Literal *literal_leaf(const Literal *lit, int64_t *leaf);
Literal *literal_clone(const Literal *lit);
void literal_free(Literal *lit);
/* Element access by linear row-major index, converting through a wide type. */
double literal_get_f64(const Literal *lit, int64_t index);
int64_t literal_get_s64(const Literal *lit, int64_t index);
uint64_t literal_get_u64(const Literal *lit, int64_t index);
void literal_set_f64(Literal *lit, int64_t index, double v);
void literal_set_s64(Literal *lit, int64_t index, int64_t v);
void literal_set_u64(Literal *lit, int64_t index, uint64_t v);
bool literal_equal(const Literal *a, const Literal *b);   /* bitwise */
/* Complex elements. On c64/c128, literal_get_f64 reads the real part and
 * literal_set_f64 writes a real value (imaginary part 0); these two read
 * and write both parts, and on a real type they read the value with
 * imaginary part 0 and store the real part. */
double _Complex literal_get_complex(const Literal *lit, int64_t index);
void literal_set_complex(Literal *lit, int64_t index, double _Complex v);

/* ------------------------------------------------------- literal_random.c
 * Values drawn from a seed, for inputs a user did not give and constants
 * XLA printed elided: floats uniform in [-1, 1), signed integers in
 * [-8, 8], unsigned in [0, 8] (so indices stay meaningful), pred fair coin
 * flips. Tuples are filled leaf by leaf, depth first. The same state gives
 * the same values on every host. */
uint64_t literal_random_next(uint64_t *state);
void literal_fill_random(Literal *lit, uint64_t *state);

/* ---------------------------------------------------------------- hlo.c
 * The module graph. */
typedef struct Computation Computation;
typedef struct Module Module;
typedef struct Instruction Instruction;

typedef struct IntList {
  int count;
  int64_t *values;
} IntList;

/* One dimension of a window (reduce-window, select-and-scatter, convolution).
 * In text: window={size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}
 * For reduce-window, lhs_dilate is the base dilation and rhs_dilate the
 * window dilation. */
typedef struct WindowDim {
  int64_t size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate;
  bool reversal;
} WindowDim;

typedef struct Window {
  int rank;
  WindowDim dims[AXLE_MAX_RANK];
} Window;

/* dim_labels=b01f_01io->b01f: which dimension of each operand is which. */
typedef struct ConvDims {
  int spatial_count;
  int64_t input_batch, input_feature, input_spatial[AXLE_MAX_RANK];
  int64_t kernel_input_feature, kernel_output_feature, kernel_spatial[AXLE_MAX_RANK];
  int64_t output_batch, output_feature, output_spatial[AXLE_MAX_RANK];
} ConvDims;

/* slice={[start:limit:stride], ...}: one entry per dimension in each list. */
typedef struct SliceDims {
  IntList starts, limits, strides;
} SliceDims;

/* dot, scaled-dot and ragged-dot; the last two lists are ragged-dot's only
 * (lhs_ragged_dims=, rhs_group_dims=). */
/* A dot's algorithm= (XLA's PrecisionConfig.Algorithm): which number
 * formats the product may go through. DOT_ALG_UNSET means the module said
 * nothing; dot_algorithm_names lists the text spellings, in this order. */
typedef enum DotAlgorithm {
  DOT_ALG_UNSET,
  DOT_ALG_ANY_F8_ANY_F8_F32, DOT_ALG_ANY_F8_ANY_F8_F32_FAST_ACCUM,
  DOT_ALG_F16_F16_F16, DOT_ALG_F16_F16_F32, DOT_ALG_BF16_BF16_BF16, DOT_ALG_BF16_BF16_F32,
  DOT_ALG_BF16_BF16_F32_X3, DOT_ALG_BF16_BF16_F32_X6, DOT_ALG_BF16_BF16_F32_X9,
  DOT_ALG_TF32_TF32_F32, DOT_ALG_TF32_TF32_F32_X3, DOT_ALG_F32_F32_F32, DOT_ALG_F64_F64_F64,
  DOT_ALG_COUNT
} DotAlgorithm;
extern const char *const dot_algorithm_names[DOT_ALG_COUNT];

typedef struct DotDims {
  IntList lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  IntList lhs_ragged, rhs_group;
  DotAlgorithm algorithm;          /* algorithm=dot_... */
} DotDims;

typedef struct GatherDims {
  IntList offset_dims, collapsed_slice_dims, start_index_map;
  IntList operand_batching_dims, start_indices_batching_dims;
  int64_t index_vector_dim;
  IntList slice_sizes;
  bool indices_are_sorted;
} GatherDims;

/* replica_groups={{0,1},{2,3}} (or the iota form, expanded): the device ids
 * of every group, flattened, group_size ids to a group (the parser refuses
 * groups of different sizes). No groups: no ids, size 0. */
typedef struct ReplicaGroups {
  IntList ids;          /* the groups' ids, one group after another */
  int64_t group_size;   /* each group's size; 0 when they differ (all-reduce allows it) */
  IntList sizes;        /* then each group's size in turn; else empty */
  /* use_global_device_ids=true (all-reduce, all-gather, reduce-scatter):
   * the ids are flattened device ids (collective_group_mode). Kept here,
   * beside the ids it gives a meaning to, so that Attrs stays small. */
  bool use_global_device_ids;
} ReplicaGroups;

typedef struct ScatterDims {
  IntList update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  IntList input_batching_dims, scatter_indices_batching_dims;
  int64_t index_vector_dim;
  bool indices_are_sorted, unique_indices;
} ScatterDims;

/* padding=lo_hi_interior per dimension, 'x'-separated; lo/hi may be negative. */
typedef struct PadDims {
  int rank;
  int64_t lo[AXLE_MAX_RANK], hi[AXLE_MAX_RANK], interior[AXLE_MAX_RANK];
} PadDims;

/* fft_type=FFT|IFFT|RFFT|IRFFT fft_length={..}: the transform and the
 * lengths of the 1-3 minor-most dimensions it runs over. */
typedef enum FftType { FFT_TYPE_FFT, FFT_TYPE_IFFT, FFT_TYPE_RFFT, FFT_TYPE_IRFFT } FftType;
typedef struct FftDims {
  FftType type;
  IntList length;
} FftDims;

typedef enum CompareDirection { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } CompareDirection;
/* CMP_TYPE_DEFAULT: derived from the operand element type. */
typedef enum CompareType {
  CMP_TYPE_DEFAULT, CMP_TYPE_FLOAT, CMP_TYPE_TOTALORDER, CMP_TYPE_SIGNED, CMP_TYPE_UNSIGNED
} CompareType;

typedef enum FusionKind { FUSION_LOOP, FUSION_INPUT, FUSION_OUTPUT, FUSION_CUSTOM } FusionKind;

typedef enum RngAlgorithm { RNG_DEFAULT, RNG_THREE_FRY, RNG_PHILOX } RngAlgorithm;

/* rng's distribution=: uniform in [a, b) or normal with mean a and
 * standard deviation b. */
typedef enum RngDistribution { RNG_UNIFORM, RNG_NORMAL } RngDistribution;

/* The scalar attributes of topk, scan and the rng ops, out of line because
 * only those opcodes carry them (see Attrs). */
typedef struct ScalarAttrs {
  int64_t k;                       /* topk k= */
  int64_t num_carries;             /* scan num_carries= */
  int64_t delta;                   /* rng-get-and-update-state delta= */
  RngDistribution distribution;    /* rng distribution= */
  bool largest;                    /* topk largest= (the parser's default: true) */
  bool is_reverse;                 /* scan is_reverse= */
} ScalarAttrs;

typedef enum TransposeA { TRANSPOSE_A_NO, TRANSPOSE_A_YES, TRANSPOSE_A_ADJOINT } TransposeA;

/* Every attribute any opcode carries. Each opcode uses the few it needs;
 * the rest stay zero. The HLO attribute name is given beside each. */
typedef struct Attrs {
  int64_t parameter_number;        /* parameter(N) */
  Literal *literal;                /* constant(...) */
  IntList dimensions;              /* dimensions={..}: broadcast, transpose, reduce,
                                      reverse, concatenate, map, sort, all-gather(-start),
                                      reduce-scatter, all-to-all, scan,
                                      get/set-dimension-size (one entry) */
  int64_t iota_dimension;          /* iota_dimension= */
  int64_t tuple_index;             /* index= on get-tuple-element */
  IntList dynamic_slice_sizes;     /* dynamic_slice_sizes={..} */
  /* The structured groups live out of line, in the module's arena, because
   * only a few opcodes carry each: inline, the fixed arrays of window,
   * dim_labels and padding alone made every Instruction ~2.5 KB, and a
   * 200,000-line module took 600 MB. NULL means the attribute was absent;
   * read them through attrs_padding, attrs_window, ... (declared below), which
   * give an absent group as all zero, the value the inline fields held.
   * The parser and builder_add_instruction put them in the module's arena;
   * code that sets one directly must keep it alive as long as the
   * instruction, and must not write through a pointer it did not allocate. */
  const PadDims *padding;          /* padding= on pad */
  const Window *window;            /* window={..} */
  const ConvDims *conv;            /* dim_labels= */
  const SliceDims *slice;          /* slice={[a:b:s], ...} */
  const DotDims *dot;              /* lhs_batch_dims= ... rhs_contracting_dims= */
  const GatherDims *gather;
  const ScatterDims *scatter;
  const FftDims *fft;              /* fft_type= fft_length= */
  const ScalarAttrs *scalars;      /* topk, scan, rng, rng-get-and-update-state */
  int64_t feature_group_count;     /* default 1 */
  int64_t batch_group_count;       /* default 1 */
  /* The enums and bools sit together so that no padding falls between. */
  CompareDirection direction;      /* direction= */
  CompareType compare_type;        /* type= */
  FusionKind fusion_kind;          /* kind= */
  RngAlgorithm rng_algorithm;      /* algorithm= */
  TransposeA transpose_a;          /* triangular-solve */
  bool lower;                      /* cholesky, triangular-solve */
  bool left_side, unit_diagonal;   /* triangular-solve */
  bool is_stable;                  /* sort */
  const char *custom_call_target;  /* custom_call_target= */
  const char *backend_config;      /* custom-call: backend_config= as written, or NULL */
  int64_t exponent_bits, mantissa_bits; /* reduce-precision */
  double epsilon;                  /* batch-norm-* */
  int64_t feature_index;           /* batch-norm-* */
  int64_t channel_id;              /* collectives; 0 when absent */
  IntList source_target_pairs;     /* collective-permute, flattened pairs */
  const ReplicaGroups *replica_groups; /* replica_groups={{0,1},{2,3}} */
} Attrs;

/* Where an instruction came from, as JAX records it:
 *   metadata={op_name="jit(f)/add" source_file="/x.py" source_line=12}
 * Kept through every pass (clones copy it) so that messages, dumps and
 * listings can name the user's line. Strings are as the text wrote them
 * (escapes kept). The other fields XLA prints are read past. */
typedef struct Metadata {
  const char *op_name;             /* NULL when absent */
  const char *source_file;         /* NULL when absent */
  int64_t source_line;             /* 0 when absent */
} Metadata;

/* A module holds one Instruction per HLO line, so its size matters
 * (test_types checks it): the 4-byte fields are paired to leave no padding. */
struct Instruction {
  Opcode opcode;
  int index;                       /* position in parent->instructions */
  const char *name;
  SourceLoc loc;
  Shape shape;
  Instruction **operands;
  /* Called computations, by opcode:
   *   reduce, reduce-window, map, sort, scatter, all-reduce, reduce-scatter,
   *   call: [to_apply]
   *   while: [condition, body]
   *   conditional: the branches in index order ([true, false] for a pred)
   *   select-and-scatter: [select, scatter]
   *   fusion: [calls] */
  Computation **called;
  int operand_count;
  int called_count;
  Computation *parent;
  /* The instructions that read this one, each once even if it reads it
   * twice; kept up to date by every function that edits the graph (see
   * edit.c), in the module's arena. */
  Instruction **users;
  int user_count, user_capacity;
  const Metadata *metadata;        /* NULL when the text gave none; in an arena */
  Attrs attrs;
};

struct Computation {
  const char *name;
  SourceLoc loc;
  Module *module;
  Instruction **instructions;      /* operands before users */
  int instruction_count, instruction_capacity;
  Instruction *root;
  Instruction **parameters;        /* indexed by parameter number */
  int parameter_count, parameter_capacity;
  bool is_entry;
};

/* One entry of the module header's
 *   input_output_alias={ {OUTPUT_INDEX}: (PARAMETER, {PARAMETER_INDEX}, may-alias), ... }
 * The caller donates argument PARAMETER's buffer (the leaf at
 * PARAMETER_INDEX of a tuple argument; {} for an array) to hold the result
 * leaf at OUTPUT_INDEX ({} when the result is an array). Both shapes are
 * equal (the verifier checks). must-alias: the runtime must reuse it;
 * may-alias (the default): it may. */
typedef struct IoAlias {
  IntList output_index;
  int64_t parameter_number;
  IntList parameter_index;
  bool must_alias;
  SourceLoc loc;                   /* of the entry in the text; 0 when built */
} IoAlias;

/* A set of names, open addressing, malloc'd (see module_unique_name). */
typedef struct NameSlot {
  const char *name;                /* in the module's arena; NULL: empty slot */
  int next_suffix;                 /* base.N to try next when name is the base */
} NameSlot;
typedef struct NameSet {
  NameSlot *slots;
  int capacity, count;
} NameSet;

struct Module {
  Arena arena;
  const char *name;
  const char *filename;            /* for messages; may be NULL */
  Computation **computations;      /* callees before callers; entry last */
  int computation_count, computation_capacity;
  Computation *entry;
  NameSet names;                   /* every instruction and computation name */
  Literal **literals;              /* every constant's literal, owned here */
  int literal_count, literal_capacity;
  IoAlias *io_aliases;             /* in the arena; input_output_alias= */
  int io_alias_count;
  int elided_constant_count;       /* constant({...}) filled at random (ParseOptions) */
  /* replica_count= and num_partitions= of the header; 0 when absent, which
   * means 1 (module_replica_count, module_partition_count). */
  int64_t replica_count, partition_count;
};

Module *module_create(const char *name);    /* malloc'd; free with module_free */
int64_t module_replica_count(const Module *m);    /* replica_count=, else 1 */
int64_t module_partition_count(const Module *m);  /* num_partitions=, else 1 */
void module_free(Module *m);
const char *opcode_name(Opcode op);
bool opcode_from_name(const char *s, size_t n, Opcode *out);
int opcode_arity(Opcode op);                /* -1: varies */
/* The properties columns of opcode.h (its header says what each means). */
OpForm opcode_form(Opcode op);
OpCost opcode_cost(Opcode op);
OpIdentity opcode_identity(Opcode op);
bool opcode_is_elementwise(Opcode op);
bool opcode_is_commutative(Opcode op);
bool opcode_is_associative(Opcode op);
bool opcode_has_side_effects(Opcode op);
Computation *module_find_computation(const Module *m, const char *name);
/* "name (op_name at source_file:line)" for messages; parts the metadata
 * lacks are left out, and without metadata it is just the name. */
void instruction_describe(StrBuf *sb, const Instruction *inst);
/* Where a message about inst points: its line in the module text, or for
 * a fusion the optimizer made (no line of its own) the line of the
 * instruction whose value it computes. */
SourceLoc instruction_source_loc(const Instruction *inst);
Instruction *computation_find_instruction(const Computation *c, const char *name);
IntList intlist_copy(Arena *arena, const int64_t *values, int count);
/* The out-of-line attribute groups of Attrs, or a shared all-zero group
 * when the attribute is absent (never NULL). */
const PadDims *attrs_padding(const Attrs *a);
const Window *attrs_window(const Attrs *a);
const ConvDims *attrs_conv(const Attrs *a);
const SliceDims *attrs_slice(const Attrs *a);
const DotDims *attrs_dot(const Attrs *a);
const GatherDims *attrs_gather(const Attrs *a);
const ScatterDims *attrs_scatter(const Attrs *a);
const FftDims *attrs_fft(const Attrs *a);
const ScalarAttrs *attrs_scalars(const Attrs *a);
const ReplicaGroups *attrs_replica_groups(const Attrs *a);

/* ----------------------------------------------------------------- edit.c
 * Editing the graph: what passes use to rewrite a module.
 *
 * Use lists (Instruction.users) are kept up to date incrementally by every
 * function here, by the parser and by the builder, rather than rebuilt on
 * demand: a pass that replaces or removes one instruction then pays for that
 * instruction only, and a pipeline of passes never walks the whole module to
 * learn who reads what. Code that writes Instruction.operands directly
 * breaks them; verify_module checks them.
 *
 * Instruction.index always equals the position. The operands-before-users
 * order is the caller's to keep: adding appends at the end, and
 * instruction_set_operand or computation_move_before may point an
 * instruction at a later one; computation_sort restores the order. */
void instruction_set_operand(Instruction *inst, int i, Instruction *operand);
/* Every user of old reads replacement instead (except replacement itself,
 * so that old may be one of its operands); if old was its computation's
 * root, replacement becomes the root. The caller guarantees compatible shapes. */
void instruction_replace_all_uses(Instruction *old, Instruction *replacement);
void computation_set_root(Computation *c, Instruction *root);
/* inst must have no users, must not be the root nor a parameter (use
 * computation_remove_parameter). Its literal stays in the module's list. */
void computation_remove_instruction(Computation *c, Instruction *inst);
/* Removes many at once in one pass over c (one by one costs a pass each:
 * what DCE wants). Every user of each must be in the set too; none may be
 * the root or a parameter. */
void computation_remove_instructions(Computation *c, Instruction *const *dead, int count);
/* Removes the unused parameter `number` of a non-entry computation and
 * renumbers the later ones; callers fix the call sites. */
void computation_remove_parameter(Computation *c, int number);
/* Topological sort, stable: an order that is already legal is kept, and
 * otherwise each instruction moves only as far as its operands force it.
 * Renumbers index. Fails naming an instruction on a cycle. */
bool computation_sort(Computation *c, Status *st);
/* The same sort; on a cycle returns false with *user and *operand_index
 * naming the operand that closes it (for the parser's located message). */
bool computation_sort_or_find_cycle(Computation *c, Instruction **user, int *operand_index);
/* Callees before callers, entry last, otherwise stable. A cycle of calls is
 * left for verify_module to report. */
void module_sort_computations(Module *m);
/* Creates an instruction WITHOUT shape inference (the shape is given) and
 * appends it at the end of c. The name is made unique from name_base (NULL:
 * the opcode's name). Attribute groups, lists and the shape are copied into
 * the module's arena; a constant's literal passes to the module. A parameter
 * takes the slot c->parameters[attrs->parameter_number]. */
Instruction *computation_add_instruction(Computation *c, Opcode op, Instruction *const *operands,
                                         int operand_count, Computation *const *called,
                                         int called_count, const Attrs *attrs, const Shape *shape,
                                         const char *name_base);
/* Moves inst (already in c) to just before `before`; renumbers. */
void computation_move_before(Computation *c, Instruction *inst, Instruction *before);
/* Same opcode, attributes, shape, called computations and location, with new
 * operands, appended to dst; a constant's literal is cloned. name_base NULL:
 * src's name, made unique. */
Instruction *instruction_clone(Computation *dst, const Instruction *src, Instruction *const *new_operands,
                               const char *name_base);
/* A deep copy of src's instructions as a new non-entry computation of dst
 * (name NULL: src's name, made unique). When dst is src's module the called
 * computations are shared; it is placed before the entry, where no caller
 * exists yet (callers made later are ordered by module_sort_computations). */
Computation *computation_clone(Module *dst, const Computation *src, const char *name);
/* A deep copy: every computation, instruction and literal, with the same names. */
Module *module_clone(const Module *src);
/* A name that no instruction or computation of m has: base itself if free,
 * else base.1, base.2, ... (a trailing ".N" of base is dropped first);
 * registered before return. In m's arena. */
const char *module_unique_name(Module *m, const char *base);
/* Records a name as taken; false if it already was. */
bool module_register_name(Module *m, const char *name);
/* The module takes ownership of a literal (freed by module_free). */
void module_adopt_literal(Module *m, Literal *lit);
/* Removes a computation that no instruction calls. */
void module_remove_computation(Module *m, Computation *c);
/* How many instructions of m call c. */
int computation_caller_count(const Module *m, const Computation *c);
/* Deep equality: every field, the groups through their accessors (absent
 * equals all zero), lists by value, literals bit for bit. */
bool attrs_equal(const Attrs *a, const Attrs *b);
uint64_t attrs_hash(const Attrs *a);              /* equal attrs, equal hashes */
/* What CSE needs: same opcode, shape (layout included), operands and called
 * computations (pointer-equal) and attributes. */
bool instruction_identical(const Instruction *a, const Instruction *b);
/* Same element type, dims, layout and E(n) packing, through tuples. */
bool shape_identical(const Shape *a, const Shape *b);
/* Building blocks for the parser and builder: lists each instruction of c
 * in its operands' use lists (once; for a computation read from text);
 * appends inst at the end of c (index, parent); adds an empty computation
 * (uniquely named) before the entry if the entry is last, else at the end. */
void computation_link_users(Computation *c);
void computation_append_instruction(Computation *c, Instruction *inst);
Computation *module_add_computation(Module *m, const char *name);
/* Copies attrs into arena: groups, lists and the custom-call target (not the literal). */
void attrs_copy_into_arena(Attrs *dst, const Attrs *src, Arena *arena);
/* A copy of metadata (strings included) in arena; NULL stays NULL. */
const Metadata *metadata_copy_into_arena(const Metadata *md, Arena *arena);
/* A shape whose tuple element shapes live in arena. */
Shape shape_copy_into_arena(const Shape *s, Arena *arena);

/* ---------------------------------------------------------------- parse.c
 * HLO text as XLA prints it (both the modern style and the older one with
 * %names, signatures and typed operands). Returns NULL on error with
 * st->file/loc set. The result is verified (verify_module) before return.
 *
 * ParseOptions changes what the parser accepts; parse_module is
 * parse_module_with(NULL options), which takes the defaults (all false). */
typedef struct ParseOptions {
  /* XLA prints large constants elided, as constant({...}). By default they
   * are refused; with this set they are filled with values drawn from
   * elided_seed (literal_fill_random) and counted in
   * Module.elided_constant_count, so a caller can warn that results are
   * not meaningful. */
  bool fill_elided_constants;
  uint64_t elided_seed;
} ParseOptions;

Module *parse_module(const char *text, size_t length, const char *filename, Status *st);
Module *parse_module_file(const char *path, Status *st);   /* path "-": standard input */
Module *parse_module_with(const char *text, size_t length, const char *filename,
                          const ParseOptions *options, Status *st);
Module *parse_module_file_with(const char *path, const ParseOptions *options, Status *st);

/* ---------------------------------------------------------------- print.c
 * Prints in the modern style; parse(print(m)) gives the same module. */
void print_module(StrBuf *sb, const Module *m);
void print_instruction(StrBuf *sb, const Instruction *inst);
void print_literal(StrBuf *sb, const Literal *lit);

/* --------------------------------------------------------------- verify.c
 * Shape inference for every opcode (the one place a shape is computed) and
 * the module verifier. Messages name the instruction. Where the result is
 * not a function of the operands, infer_shape reads it from inst->shape:
 * the dims of broadcast, reshape, bitcast and iota, the target type of
 * convert and bitcast-convert, the element type of dot and convolution,
 * the bits of rng-bit-generator, and all of custom-call.
 * (infer_shape is in shape_inference.c and shape_inference_ops.c.) */
bool infer_shape(const Instruction *inst, Shape *out, Arena *arena, Status *st);
/* ragged-dot: the lhs dims, in order, that index the rows of a
 * group_sizes of rank above 1 ([prefix..., G]); returns their count.
 * (shape_inference_extra.c) */
int ragged_dot_sizes_prefix(const DotDims *dd, int lhs_rank, int64_t prefix[AXLE_MAX_RANK]);
bool verify_module(Module *m, Status *st);

/* -------------------------------------------------------------- builder.c
 * Creating computations and instructions in C. Shapes come from infer_shape;
 * `declared` supplies what operands cannot (broadcast/reshape dims, convert's
 * element type), and infer_shape checks it.
 * Nothing becomes the root implicitly: callers set it with
 * computation_set_root. Arrays grow by doubling, so appending is O(1). A
 * computation is added before the entry (if the entry is last), where its
 * callers can come after it. */
Computation *builder_add_computation(Module *m, const char *name);
Instruction *builder_add_parameter(Computation *c, const Shape *shape, const char *name);
Instruction *builder_add_instruction(Computation *c, Opcode op, Instruction *const *operands,
                                     int operand_count, Computation *const *called,
                                     int called_count, const Attrs *attrs,
                                     const Shape *declared, Status *st);

/* ------------------------------------------------------- numeric_routines.c
 * Shared by the evaluator and the CPU backend's runtime routines. */
/* l (n x n, lower triangular, row-major) with l l^T = a, as XLA's
 * CholeskyExpander computes it; false when a is not positive definite. */
bool linalg_cholesky_factor(const double *a, int64_t n, bool lower, double *l);
/* The complex form: l l^H = a. */
bool linalg_cholesky_factor_complex(const double _Complex *a, int64_t n, bool lower, double _Complex *l);
/* LAPACK getrf in place on an m x n row-major matrix: pivots (1-based)
 * into ipiv, returns info (0, or the first zero pivot's column, 1-based). */
int64_t linalg_lu_factor(double *a, int64_t m, int64_t n, int32_t *ipiv);
/* v rounded to the precision of float type t. */
double float_round_to_type(double v, ElementType t);
/* v converted to integer type t as HLO's convert does: truncated toward
 * zero, saturated, NaN to 0; the result's bits in a uint64_t. */
uint64_t float_convert_to_integer(double v, ElementType t);
/* a + b, held at INT64_MIN or INT64_MAX instead of wrapping: ragged-dot's
 * running sum of group sizes, so that a group 2^63 - 1 long ends past
 * every row rather than before its first. */
int64_t s64_add_saturating(int64_t a, int64_t b);

/* ------------------------------------------------------------- rng_bits.c
 * The bits of rng-bit-generator, shared by the evaluator and the CPU
 * backend. algorithm is RNG_THREE_FRY or RNG_PHILOX (RNG_DEFAULT resolved
 * by the caller); state holds state_count (2, or 3 for Philox) u64 words.
 * Fills bits[] with one value per element of shape (row-major order; the
 * low bits of the element type's width count) and next with the state
 * after them. */
void rng_bits_generate(RngAlgorithm algorithm, const Shape *shape, const uint64_t *state, int state_count,
                       uint64_t *next, uint64_t *bits);
/* Philox-4x32 bits for `count` elements of `width` bits at the 128-bit
 * counter (low, high); returns the number of blocks used. */
uint64_t rng_philox_bits(int64_t count, int width, uint64_t key, uint64_t low, uint64_t high, uint64_t *bits);
/* rng (no state operand): out's elements drawn as the evaluator defines
 * them (uniform in [a, b) or normal), keyed by inst's name; a and b are
 * rank-0 literals of out's type. */
void rng_values_fill(const Instruction *inst, const Literal *a, const Literal *b, Literal *out);
/* Stores the low bits into element i of an array of type t at data. */
void rng_bits_store(void *data, ElementType t, int64_t i, uint64_t bits);

/* ----------------------------------------------------------------- eval*.c
 * The reference evaluator: what every op means. args are borrowed; the
 * result is a new literal owned by the caller. */
Literal *eval_module(const Module *m, Literal *const *args, int arg_count, Status *st);
Literal *eval_computation(const Computation *c, Literal *const *args, int arg_count, Status *st);
/* One instruction on given operand values (borrowed; in operand order), for
 * constant folding. The result is new and owned by the caller. parameter and
 * constant are refused: they have no operands to compute from. */
Literal *eval_instruction(const Instruction *inst, Literal *const *operands, Status *st);
/* Fails (STATUS_UNSUPPORTED, located at the instruction) if the module holds
 * an op the evaluator refuses whatever the inputs: a collective over more
 * than one device ("needs 4 devices; this run has 1"), send, recv, infeed,
 * outfeed, shuffle, and custom-calls other than JAX's LAPACK calls
 * that src/ir/lapack.h runs and the sharding annotations
 * (custom_call_is_identity). Backends call
 * it when compiling, so such a module is a compile error (exit 2) rather
 * than a run-time one. */
bool eval_check_supported(const Module *m, Status *st);
/* Refuses, located, the first instruction with an unbounded dimension
 * (f32[?]): nothing can size it, so the optimizer and the backends refuse
 * such a module before reading it. */
bool module_refuse_unbounded_dims(const Module *m, Status *st);

/* The same check for a run over replica_count x partition_count devices:
 * collectives whose groups fit the run are accepted (collective_check_devices),
 * one that names more devices than the run has is refused. */
bool eval_check_supported_on(const Module *m, int64_t replica_count, int64_t partition_count, Status *st);

/* ------------------------------------------------------- eval_collective.c
 * Collectives across the devices of a run (docs/multi-device.md). XLA's
 * CollectiveOpGroupMode: how replica_groups name devices. */
typedef enum CollectiveGroupMode {
  GROUP_CROSS_REPLICA,                /* no channel_id: replica ids, within a partition */
  GROUP_CROSS_PARTITION,              /* channel_id: partition ids, within a replica */
  GROUP_CROSS_REPLICA_AND_PARTITION,  /* channel_id, use_global_device_ids=false: replicas, every partition */
  GROUP_FLATTENED_ID,                 /* use_global_device_ids=true: replica * partitions + partition */
} CollectiveGroupMode;

/* The device a thread runs as, in a run over several devices. exchange
 * hands this device's operands of collective inst over and returns once
 * every device of the run has reached the same collective, with all[f]
 * the operands of the device of flattened id f (replica * partition_count
 * + partition); they stay valid until this device calls exchange_done. */
typedef struct EvalDevice EvalDevice;
struct EvalDevice {
  int64_t replica, partition;
  int64_t replica_count, partition_count;
  bool (*exchange)(void *run, const EvalDevice *self, const Instruction *inst, Literal *const *operands,
                   Literal *const *const **all, Status *st);
  void (*exchange_done)(void *run, const EvalDevice *self);
  void *run;
};
/* The calling thread's device (NULL: the run has one device). */
void eval_device_set(const EvalDevice *device);
const EvalDevice *eval_device_get(void);
int64_t eval_device_count(void);   /* replicas x partitions of the thread's run; 1 without one */
CollectiveGroupMode collective_group_mode(const Instruction *inst);
/* Whether inst can run over replicas x partitions devices: its groups and
 * pairs name ids the run has, each once, and its shapes fit its group size.
 * Non-collectives pass. */
bool collective_check_devices(const Instruction *inst, int64_t replicas, int64_t partitions, Status *st);
/* The devices inst's collective on device d exchanges with, as flattened
 * ids in group order (a collective-permute's: every id of its row, so
 * that member k is id k), and d's position among them. members holds
 * replica_count * partition_count. Returns the count; 0 with st set when d
 * is in no group. The GPU backend maps each group to an NCCL communicator. */
int64_t collective_participants(const Instruction *inst, const EvalDevice *d, int64_t *members, int64_t *position,
                                Status *st);
/* inst (a collective) on this thread's device, exchanging operands with
 * the other devices of the run. */
Literal *eval_collective_across_devices(const Instruction *inst, Literal *const *operands, Status *st);

/* A custom-call that is its operand on one device: "Sharding" (from
 * jax.lax.with_sharding_constraint), "SPMDFullToShardShape" and
 * "SPMDShardToFullShape" (shard_map). The evaluator returns the operand;
 * the optimizer's simplify replaces the call by it. Its shape must be the
 * operand's (eval_custom_call_supported says so otherwise). */
bool custom_call_is_identity(const Instruction *inst);
/* collective-permute(input, output, input_starts, output_starts): the
 * in-place form (shape_inference_async.c says how it is told apart). */
bool collective_permute_is_in_place(const Instruction *inst);

#endif
