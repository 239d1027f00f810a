/* The HLO opcode table.
 *
 * One row per opcode. Expanded (X-macro) into the Opcode enum, the name
 * strings the parser and printer use, the arity the verifier checks, and the
 * properties that passes, the evaluator and shape inference ask about
 * (read them through the opcode_* functions in ir.h).
 *
 *   OP(ENUM, "spelling", arity, form, cost, flags, identity)
 *
 * ENUM      the C enumerator, OP_ prefixed where it is used
 * spelling  exactly as XLA prints it; the parser matches on it
 * arity     number of operands, or -1 when it varies (tuple, call, sort, ...)
 * form      FORM_UNARY / FORM_BINARY: an elementwise op computed one element at
 *           a time from one or two operands of the result's type; the
 *           evaluator and shape inference treat every such row with one rule.
 *           FORM_OTHER: anything with a rule of its own.
 * cost      what fusion and CSE weigh: COST_CHEAP (an instruction or two per
 *           element, or pure data movement), COST_MATH (a division or a
 *           transcendental function), COST_REDUCE (reads many elements per
 *           output), COST_HEAVY (dot, convolution, gather and the like: never
 *           recomputed per element), COST_CONTROL (calls other computations)
 * flags     F_EW elementwise (output element i depends on input elements i only);
 *           F_COMM commutative; F_ASSOC associative (exactly so for integers;
 *           for floats only up to rounding, which passes must not exploit
 *           without leave); F_SIDE has effects beyond its result, so never
 *           removed, merged or duplicated
 * identity  the element e with op(x, e) = x: ID_ZERO, ID_ONE, ID_ALL_ONES
 *           (true or ~0), ID_LOWEST (-inf or the type's minimum), ID_HIGHEST;
 *           ID_NONE when there is none
 */
#ifndef AXLE_IR_OPCODE_H
#define AXLE_IR_OPCODE_H

/* clang-format off */
#define AXLE_OPCODES(OP) \
  OP(ABS,                    "abs",                       1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(ACOS,                   "acos",                      1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(ACOSH,                  "acosh",                     1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(ADD,                    "add",                       2, FORM_BINARY, COST_CHEAP,   F_EW|F_COMM|F_ASSOC, ID_ZERO) \
  OP(ADD_DEPENDENCY,         "add-dependency",            2, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(AFTER_ALL,              "after-all",                -1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(ALL_GATHER,             "all-gather",               -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(ALL_GATHER_DONE,        "all-gather-done",           1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(ALL_GATHER_START,       "all-gather-start",         -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(ALL_REDUCE,             "all-reduce",               -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(ALL_REDUCE_DONE,        "all-reduce-done",           1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(ALL_REDUCE_START,       "all-reduce-start",         -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(ALL_TO_ALL,             "all-to-all",               -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(AND,                    "and",                       2, FORM_BINARY, COST_CHEAP,   F_EW|F_COMM|F_ASSOC, ID_ALL_ONES) \
  OP(ASIN,                   "asin",                      1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(ASINH,                  "asinh",                     1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(ASYNC_DONE,             "async-done",                1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(ASYNC_START,            "async-start",              -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(ASYNC_UPDATE,           "async-update",             -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(ATAN,                   "atan",                      1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(ATAN2,                  "atan2",                     2, FORM_BINARY, COST_MATH,    F_EW,                ID_NONE) \
  OP(ATANH,                  "atanh",                     1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(BATCH_NORM_GRAD,        "batch-norm-grad",           5, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(BATCH_NORM_INFERENCE,   "batch-norm-inference",      5, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(BATCH_NORM_TRAINING,    "batch-norm-training",       3, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(BITCAST,                "bitcast",                   1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(BITCAST_CONVERT,        "bitcast-convert",           1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(BROADCAST,              "broadcast",                 1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(CALL,                   "call",                     -1, FORM_OTHER,  COST_CONTROL, 0,                   ID_NONE) \
  OP(CBRT,                   "cbrt",                      1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(CEIL,                   "ceil",                      1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(CHOLESKY,               "cholesky",                  1, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(CLAMP,                  "clamp",                     3, FORM_OTHER,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(CLZ,                    "count-leading-zeros",       1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(COLLECTIVE_BROADCAST,   "collective-broadcast",     -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(COLLECTIVE_PERMUTE,     "collective-permute",       -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(COLLECTIVE_PERMUTE_DONE, "collective-permute-done",  1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(COLLECTIVE_PERMUTE_START, "collective-permute-start", -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(COLLECTIVE_REDUCE,      "collective-reduce",        -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(COMPARE,                "compare",                   2, FORM_OTHER,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(COMPLEX,                "complex",                   2, FORM_OTHER,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(CONCATENATE,            "concatenate",              -1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(CONDITIONAL,            "conditional",              -1, FORM_OTHER,  COST_CONTROL, 0,                   ID_NONE) \
  OP(CONSTANT,               "constant",                  0, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(CONVERT,                "convert",                   1, FORM_OTHER,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(CONVOLUTION,            "convolution",               2, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(COPY,                   "copy",                      1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(COPY_DONE,              "copy-done",                 1, FORM_OTHER,  COST_CHEAP,   F_SIDE,              ID_NONE) \
  OP(COPY_START,             "copy-start",                1, FORM_OTHER,  COST_CHEAP,   F_SIDE,              ID_NONE) \
  OP(COSH,                   "cosh",                      1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(COSINE,                 "cosine",                    1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(CUSTOM_CALL,            "custom-call",              -1, FORM_OTHER,  COST_HEAVY,   F_SIDE,              ID_NONE) \
  OP(DIVIDE,                 "divide",                    2, FORM_BINARY, COST_MATH,    F_EW,                ID_NONE) \
  OP(DOMAIN,                 "domain",                    1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(DOT,                    "dot",                       2, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(DYNAMIC_RESHAPE,        "dynamic-reshape",          -1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(DYNAMIC_SLICE,          "dynamic-slice",            -1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(DYNAMIC_UPDATE_SLICE,   "dynamic-update-slice",     -1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(ERF,                    "erf",                       1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(EXPONENTIAL,            "exponential",               1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(EXPONENTIAL_MINUS_ONE,  "exponential-minus-one",     1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(FFT,                    "fft",                       1, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(FLOOR,                  "floor",                     1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(FUSION,                 "fusion",                   -1, FORM_OTHER,  COST_CONTROL, 0,                   ID_NONE) \
  OP(GATHER,                 "gather",                    2, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(GET_DIMENSION_SIZE,     "get-dimension-size",        1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(GET_TUPLE_ELEMENT,      "get-tuple-element",         1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(IMAG,                   "imag",                      1, FORM_OTHER,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(INFEED,                 "infeed",                    1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(IOTA,                   "iota",                      0, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(IS_FINITE,              "is-finite",                 1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(LOG,                    "log",                       1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(LOG_PLUS_ONE,           "log-plus-one",              1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(LOGISTIC,               "logistic",                  1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(MAP,                    "map",                      -1, FORM_OTHER,  COST_CONTROL, 0,                   ID_NONE) \
  OP(MAXIMUM,                "maximum",                   2, FORM_BINARY, COST_CHEAP,   F_EW|F_COMM|F_ASSOC, ID_LOWEST) \
  OP(MINIMUM,                "minimum",                   2, FORM_BINARY, COST_CHEAP,   F_EW|F_COMM|F_ASSOC, ID_HIGHEST) \
  OP(MULHI,                  "mulhi",                     2, FORM_BINARY, COST_CHEAP,   F_EW|F_COMM,         ID_NONE) \
  OP(MULTIPLY,               "multiply",                  2, FORM_BINARY, COST_CHEAP,   F_EW|F_COMM|F_ASSOC, ID_ONE) \
  OP(NEGATE,                 "negate",                    1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(NOT,                    "not",                       1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(OPTIMIZATION_BARRIER,   "opt-barrier",               1, FORM_OTHER,  COST_CHEAP,   F_SIDE,              ID_NONE) \
  OP(OR,                     "or",                        2, FORM_BINARY, COST_CHEAP,   F_EW|F_COMM|F_ASSOC, ID_ZERO) \
  OP(OUTFEED,                "outfeed",                   2, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(PAD,                    "pad",                       2, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(PARAMETER,              "parameter",                 0, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(PARTITION_ID,           "partition-id",              0, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(POPCNT,                 "popcnt",                    1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(POWER,                  "power",                     2, FORM_BINARY, COST_MATH,    F_EW,                ID_NONE) \
  OP(RAGGED_ALL_TO_ALL,      "ragged-all-to-all",         6, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(RAGGED_DOT,             "ragged-dot",                3, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(REAL,                   "real",                      1, FORM_OTHER,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(RECV,                   "recv",                      1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(RECV_DONE,              "recv-done",                 1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(REDUCE,                 "reduce",                   -1, FORM_OTHER,  COST_REDUCE,  0,                   ID_NONE) \
  OP(REDUCE_PRECISION,       "reduce-precision",          1, FORM_OTHER,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(REDUCE_SCATTER,         "reduce-scatter",           -1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(REDUCE_WINDOW,          "reduce-window",            -1, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(REMAINDER,              "remainder",                 2, FORM_BINARY, COST_MATH,    F_EW,                ID_NONE) \
  OP(REPLICA_ID,             "replica-id",                0, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(RESHAPE,                "reshape",                   1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(REVERSE,                "reverse",                   1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(RNG,                    "rng",                      -1, FORM_OTHER,  COST_HEAVY,   F_SIDE,              ID_NONE) \
  OP(RNG_BIT_GENERATOR,      "rng-bit-generator",         1, FORM_OTHER,  COST_HEAVY,   F_SIDE,              ID_NONE) \
  OP(RNG_GET_AND_UPDATE_STATE, "rng-get-and-update-state", 0, FORM_OTHER,  COST_CHEAP,   F_SIDE,              ID_NONE) \
  OP(ROUND_NEAREST_AFZ,      "round-nearest-afz",         1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(ROUND_NEAREST_EVEN,     "round-nearest-even",        1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(RSQRT,                  "rsqrt",                     1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(SCALED_DOT,             "scaled-dot",                4, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(SCAN,                   "scan",                     -1, FORM_OTHER,  COST_CONTROL, 0,                   ID_NONE) \
  OP(SCATTER,                "scatter",                  -1, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(SELECT,                 "select",                    3, FORM_OTHER,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(SELECT_AND_SCATTER,     "select-and-scatter",        3, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(SEND,                   "send",                      2, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(SEND_DONE,              "send-done",                 1, FORM_OTHER,  COST_CONTROL, F_SIDE,              ID_NONE) \
  OP(SET_DIMENSION_SIZE,     "set-dimension-size",        2, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(SHIFT_LEFT,             "shift-left",                2, FORM_BINARY, COST_CHEAP,   F_EW,                ID_NONE) \
  OP(SHIFT_RIGHT_ARITHMETIC, "shift-right-arithmetic",    2, FORM_BINARY, COST_CHEAP,   F_EW,                ID_NONE) \
  OP(SHIFT_RIGHT_LOGICAL,    "shift-right-logical",       2, FORM_BINARY, COST_CHEAP,   F_EW,                ID_NONE) \
  OP(SHUFFLE,                "shuffle",                   1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(SIGN,                   "sign",                      1, FORM_UNARY,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(SINE,                   "sine",                      1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(SINH,                   "sinh",                      1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(SLICE,                  "slice",                     1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(SORT,                   "sort",                     -1, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(SQRT,                   "sqrt",                      1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(STOCHASTIC_CONVERT,     "stochastic-convert",        2, FORM_OTHER,  COST_CHEAP,   F_EW,                ID_NONE) \
  OP(SUBTRACT,               "subtract",                  2, FORM_BINARY, COST_CHEAP,   F_EW,                ID_NONE) \
  OP(TAN,                    "tan",                       1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(TANH,                   "tanh",                      1, FORM_UNARY,  COST_MATH,    F_EW,                ID_NONE) \
  OP(TOPK,                   "topk",                      1, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(TRANSPOSE,              "transpose",                 1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(TRIANGULAR_SOLVE,       "triangular-solve",          2, FORM_OTHER,  COST_HEAVY,   0,                   ID_NONE) \
  OP(TUPLE,                  "tuple",                    -1, FORM_OTHER,  COST_CHEAP,   0,                   ID_NONE) \
  OP(WHILE,                  "while",                     1, FORM_OTHER,  COST_CONTROL, 0,                   ID_NONE) \
  OP(XOR,                    "xor",                       2, FORM_BINARY, COST_CHEAP,   F_EW|F_COMM|F_ASSOC, ID_ZERO)

/* clang-format on */

typedef enum OpForm { FORM_UNARY, FORM_BINARY, FORM_OTHER } OpForm;
typedef enum OpCost { COST_CHEAP, COST_MATH, COST_REDUCE, COST_HEAVY, COST_CONTROL } OpCost;
enum { F_EW = 1, F_COMM = 2, F_ASSOC = 4, F_SIDE = 8 };
typedef enum OpIdentity { ID_NONE, ID_ZERO, ID_ONE, ID_ALL_ONES, ID_LOWEST, ID_HIGHEST } OpIdentity;

typedef enum Opcode {
#define AXLE_OPCODE_ENUM(e, name, arity, form, cost, flags, identity) OP_##e,
  AXLE_OPCODES(AXLE_OPCODE_ENUM)
#undef AXLE_OPCODE_ENUM
  OP_COUNT
} Opcode;

/* Keep in step with the table: a new row must be counted here too, so that
 * every table indexed by opcode (evaluator, printer, ...) is revisited. */
#define AXLE_OPCODE_COUNT 136

#endif
