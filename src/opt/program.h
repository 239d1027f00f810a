/* The program stage: what a module is to a backend, made once for every
 * target (XLA's thunk sequence, in C).
 *
 * After buffer assignment, program_build walks the scheduled entry and
 * every computation it runs as a program of its own (while condition and
 * body, conditional branches, call, a fusion run as a call, map, scan) and
 * makes, for each:
 *   - bindings: the buffer plan's slots turned into storage a target can
 *     address (one per slot, same index, aliases resolved), then one per
 *     constant a kernel holds, its bytes in the layout the kernel reads;
 *   - steps, in schedule order, each naming the bindings it reads and
 *     writes: a lowered kernel, a product with its epilogue kernel, a
 *     routine, a copy, a while, a conditional, a call (programs of their
 *     own nested in the step);
 *   - result copies: the result leaves the plan did not place in the
 *     result buffer.
 * Every kernel is lowered here, once (src/opt/lower.c); a backend compiles
 * what it finds. What the stage cannot make (a packed layout, a kernel the
 * lowering refuses) and what no target runs (a copy into another layout, a
 * malformed conditional: program_refusal.c) is recorded on the binding or
 * step with the reason, and
 * backend_compile (src/runtime/backend_compile.c) refuses it with that
 * reason before any target compiles a step.
 *
 * requires: scheduled, buffer plan of the entry. The program refers to the
 * module's instructions and shapes: it lives no longer than the module.
 * Printed by print_program (--dump: module_NNNN.NAME.program.txt). */
#ifndef AXLE_OPT_PROGRAM_H
#define AXLE_OPT_PROGRAM_H

#include "ir/kernel/kernel.h"
#include "opt/opt.h"

typedef enum BindingKind {
  BINDING_NONE,       /* no storage (tokens, empty arrays, alias slots) */
  BINDING_PARAMETER,  /* argument `number`'s leaf, at `leaf` of the parameter leaves
                         counted depth first across all parameters; with `layout`,
                         copied into that layout at `offset` of the temporary block */
  BINDING_CONSTANT,   /* data, bytes long, in the layout its reader wants */
  BINDING_TEMP,       /* the temporary block at offset */
  BINDING_OUTPUT,     /* leaf `leaf` of the result */
} BindingKind;

typedef struct ProgramBinding {
  BindingKind kind;
  int64_t number, leaf, offset;
  void *data;                 /* BINDING_CONSTANT: owned by whoever holds the binding */
  /* The storage's size: a constant's, how many bytes data holds; a plan
   * slot's, the slot's size (0 for a tuple). */
  int64_t bytes;
  const Shape *layout;
  const Shape *shape;         /* the value's shape and layout (NULL for none) */
  /* Where it comes from, for dumps: the instruction and its leaf (a
   * kernel's constant: the kernel's instruction, leaf -1). */
  const Instruction *inst;
  int64_t inst_leaf;
  /* Non-NULL: the storage no target can address yet (a packed layout),
   * which a target refuses with this reason at the slot's instruction. */
  const char *unsupported;
} ProgramBinding;

typedef enum ProgramStepKind {
  PROGRAM_STEP_KERNEL,        /* one lowered kernel: a loop, reduce or row kernel */
  PROGRAM_STEP_PRODUCT,       /* a dot or convolution, with (in a fusion) its epilogue kernel */
  PROGRAM_STEP_ROUTINE,       /* an op a target runs through a routine of its own (sort, fft, ...) */
  PROGRAM_STEP_COPY,          /* leaves copied from operands (forwards, one-device collectives) */
  PROGRAM_STEP_WHILE,         /* called[0] the condition, called[1] the body */
  PROGRAM_STEP_CONDITIONAL,   /* called[k] branch k */
  PROGRAM_STEP_CALL,          /* called[0] (a call, an async-start, a fusion no kernel computes) */
  PROGRAM_STEP_COLLECTIVE,    /* a collective in a run over several devices: an exchange */
} ProgramStepKind;

/* A kernel input that is the product an epilogue reads: no binding of the
 * program holds it (the target places it). */
enum { PROGRAM_PRODUCT_INPUT = -2 };

struct Program;

typedef struct ProgramStep {
  ProgramStepKind kind;
  const Instruction *inst;
  /* KERNEL: the kernel; PRODUCT of a fusion: the epilogue, reading the
   * product as its last input. Owned by the program; NULL when not
   * lowered (then `unsupported` says why, for KERNEL and PRODUCT). */
  Kernel *kernel;
  const Instruction *product; /* PRODUCT: the dot or convolution (inst itself when unfused) */
  /* PRODUCT: the bindings of the product's lhs and rhs (-1: not made, see
   * unsupported). In a fusion, an operand computed inside it (a transpose,
   * a scaled weight) is computed first, into a temporary, by a KERNEL step
   * of its own before this one, whose `value` is that instruction. */
  int product_operands[2];
  const Instruction *value;   /* KERNEL: the value inside a product fusion it computes; NULL otherwise */
  char *unsupported;          /* owned; why the kernel (or an applied kernel) is not lowered, or
                                 the step's form no target runs (program_refusal.c) */
  /* ROUTINE: the kernels the routine applies, lowered here too, owned by
   * the program: a sort's comparator and a scatter's update computation
   * (rank 0, applied per element), select-and-scatter's two parts (run in
   * order, src/opt/lower_window.c). NULL when not lowered. */
  int applied_count;
  Kernel *applied[2];
  /* Bindings: a kernel's inputs then outputs (an input the product is
   * PROGRAM_PRODUCT_INPUT); any other step's operand leaves then result
   * leaves. -1: a buffer the plan does not place. */
  int buffer_count;
  int *buffers;
  /* The programs of the computations the step runs as programs. */
  int called_count;
  struct Program **called;
} ProgramStep;

/* A result leaf whose value lives elsewhere: copied in after the steps. */
typedef struct ProgramResultCopy {
  int binding, leaf;
  int64_t bytes;
  const Shape *layout;        /* non-NULL: the source is in this layout */
} ProgramResultCopy;

typedef struct Program {
  const Computation *computation;
  bool called;                /* a called computation: parameters and result are its caller's leaves */
  /* A conditional's branch or a program one runs: a device may take
   * another branch than its peers (a target that exchanges between devices
   * refuses a collective here, which would wait for ever for them). */
  bool in_conditional_branch;
  const BufferPlan *plan;     /* the entry's is the caller's; a called one's is owned_plan */
  BufferPlan *owned_plan;
  /* The temporary block: the plan's, then copies of parameters into the
   * layout their readers want and result leaves written in another layout. */
  int64_t temp_bytes;
  int binding_count;
  ProgramBinding *bindings;
  int step_count;
  ProgramStep *steps;
  int copy_count;
  ProgramResultCopy *copies;
  const char *unsupported;    /* a result leaf no target can return (the root's reason) */
  /* How many kernels program_build lowered (lower_to_kernel and
   * lower_epilogue calls), counted over the nested programs: one per
   * kernel step. Tests read it. */
  int lowered_count;
} Program;

/* Why a target refuses a step: its supports hook's answer (text NULL: no
 * reason given). A reason that names something of this step (a
 * custom-call's target, a convolution plan's words) is made into `made`,
 * and text points at made.message. */
typedef struct StepReason {
  const char *text;
  Status made;
} StepReason;

typedef struct ProgramOptions {
  bool across_devices;        /* collectives exchange between devices: routines, not copies */
} ProgramOptions;

/* The program of the entry of m with its plan. Never fails: what cannot be
 * made is recorded as `unsupported` where it is. */
Program *program_build(const Module *m, const BufferPlan *plan, const ProgramOptions *options);
void program_free(Program *p);
/* The binding of inst's leaf `leaf` in p (aliases followed to the slot
 * that owns the storage); -1 when the plan does not place it. */
int program_binding_of(const Program *p, const Instruction *inst, int leaf);
/* Whether leaf a_leaf of a and leaf b_leaf of b have one storage in p
 * (the plan placed a result over an operand); false where either has
 * none. A target that cannot compute an op in place refuses it so. */
bool program_shares_storage(const Program *p, const Instruction *a, int a_leaf, const Instruction *b, int b_leaf);
/* The same, or their bytes overlap in the temporary block. */
bool program_storage_overlaps(const Program *p, const Instruction *a, int a_leaf, const Instruction *b, int b_leaf);
/* The called program of step s for computation comp; NULL if s runs none. */
Program *program_step_called(const ProgramStep *s, const Computation *comp);
/* The step kinds' names, as the dump prints them. */
const char *program_step_kind_name(ProgramStepKind kind);
/* Whether a fusion's body holds a dot or a convolution (which no loop
 * kernel computes: such a fusion is a PRODUCT step). */
bool program_fusion_has_product(const Instruction *fusion);
/* The operand of fusion whose bytes its body's value v is, and the shape
 * to read them in (*layout): v a parameter of the body (read in the
 * operand's own shape), or a relabel of one, a bitcast as
 * canonicalize-dots and canonicalize-convolutions write them (read in
 * v's shape). NULL when v is computed inside the fusion. */
const Instruction *program_fused_operand(const Instruction *fusion, const Instruction *v, const Shape **layout);

/* ------------------------------------------------------- program_refusal.c
 * The ops a copy step makes (leaves moved from operands, zeros or a size:
 * the wrappers that only order work, the asynchronous pairs run at once,
 * the size ops on static shapes and, with one device, the collectives),
 * one table that the stage's step kinds and refusals and both targets'
 * copies read. */
typedef enum ProgramCopyForm {
  PROGRAM_COPY_FORWARD,          /* the operands' leaves, in order */
  PROGRAM_COPY_FROM_START,       /* the start's tuple's element `element` (-1: the whole tuple) */
  PROGRAM_COPY_START,            /* (the operands, the operands again, zeros...): a start run at once */
  PROGRAM_COPY_PERMUTE,          /* the operand, or zeros when no pair sends to replica 0 */
  PROGRAM_COPY_DEVICE_ID,        /* zeros: replica 0 of 1 */
  PROGRAM_COPY_DIMENSION_SIZE,   /* the static size, an s32 constant */
  PROGRAM_COPY_DYNAMIC_RESHAPE,  /* operand 0's bytes as they lie */
  PROGRAM_COPY_NOTHING,          /* a token: no storage */
} ProgramCopyForm;

typedef struct ProgramCopyOp {
  Opcode op;
  ProgramCopyForm form;
  int element;                   /* FROM_START: the start's element it takes (-1: all) */
  bool exchanges;                /* across devices a COLLECTIVE step (an exchange), not a copy */
} ProgramCopyOp;

/* op's row of the copy table; NULL when no copy step makes it. */
const ProgramCopyOp *program_copy_op(Opcode op);

/* What no target runs, decided by program_build for every target and
 * recorded as the step's `unsupported` reason; NULL when the form is one
 * every target's walk can take. */
/* A control op's form (a conditional's branch index, a call of one
 * computation, an async-start's tuple) and whether its called
 * computations fit the storage they run on: a while's state, a branch's,
 * a call's (a fusion run as one) and an async-start's operands and
 * result, in shape and layout. */
const char *program_control_refusal(const Instruction *inst);
/* A copy step's: each result leaf whole from an operand leaf of the same
 * shape and layout, zeros or a static size; one replica runs. */
const char *program_copy_refusal(const Instruction *inst);
/* inst's leaves [to_leaf, to_leaf + count) are its operands' leaves from
 * operand `first` on, in order, each in the same shape and layout. */
const char *program_forward_refusal(const Instruction *inst, int first, int to_leaf, int count);
/* A start's result is a tuple (operands, result, context...). */
const char *program_start_form_refusal(const Instruction *inst);

/* ---------------------------------------------------------- program_dump.c
 * The program for a reader: bindings, steps with what they read and write
 * and their kernels' names, called programs nested, the result copies. */
void print_program(StrBuf *sb, const Program *p);
/* module_NNNN.NAME.program.txt */
bool dump_program(OptContext *ctx, const Module *m, Status *st);

#endif
