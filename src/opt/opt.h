/* The optimizer: the table of contents of src/opt.
 *
 * optimize_module (pipeline.c) runs every pass in a fixed order, as plain
 * calls a reader can follow:
 *
 *   expand-batch-norm → inline-map
 *   simplify → fold-constants → cse → dce        (repeated while they change things)
 *   fusion → cse → dce
 *   schedule → buffer-assignment
 *
 * Each pass is one file and says at its top what it requires and what it
 * leaves broken or rebuilt. A pass returns whether it changed the module;
 * the driver times it, runs the verifier after it when asked
 * (--verify_each_pass, and always in tests), and dumps the module after it
 * when asked (--dump_passes), so a reader can watch the module change.
 *
 * Each section below lists what one file of src/opt exports.
 */
#ifndef AXLE_OPT_OPT_H
#define AXLE_OPT_OPT_H

#include "ir.h"

/* ------------------------------------------------------------ options.c
 * What the optimizer is asked to do. Filled from defaults, then from the
 * environment variable AXLE_FLAGS (XLA_FLAGS style, space separated), then
 * from a tool's own options:
 *   --dump_to=DIR          write dumps (see dump.c) into DIR
 *   --dump_passes          also one file per pass that changed something
 *   --verify_each_pass     run the verifier after every pass that changed something
 *   --max_temp_bytes=N     fail at compile time when temporaries need more than N bytes
 *   --fold_limit=N         do not fold constants with more than N elements
 *   --stats                print what each pass did and how long it took
 *   --no_fusion            skip fusion (to see what it does by its absence)
 */
typedef struct OptOptions {
  char dump_dir[1024];         /* "": no dumps */
  bool dump_passes;
  bool verify_each_pass;
  bool stats;
  bool no_fusion;
  int64_t max_temp_bytes;      /* 0: no limit */
  int64_t fold_limit;          /* elements; default 65536 */
  bool gpu_no_wgmma;           /* the GPU backend: sm_90a GEMMs on mma.sync, not wgmma */
} OptOptions;

void opt_options_default(OptOptions *o);
/* The flags above as the tools' --help lists them: name (with '-'),
 * the value's placeholder (NULL for a switch) and one line of help. The
 * table ends with a NULL name. */
typedef struct OptFlagHelp {
  const char *name, *value, *help;
} OptFlagHelp;
extern const OptFlagHelp opt_flag_help[];

/* A command-line argument split as the tools read it: its name into
 * name[cap] ("--dump-to": a long name's '_' read as '-', so both spellings
 * are one flag), and the value after '=' returned (NULL when there is none). */
const char *opt_flag_split(const char *arg, char *name, size_t cap);
/* One flag, as above ("--dump_to=DIR" or "--dump-to=DIR": '-' and '_'
 * are the same in a name). Unknown flags are errors that name the flag. */
bool opt_options_parse_flag(OptOptions *o, const char *flag, Status *st);
/* Every flag of a space-separated list (NULL or empty: nothing changes);
 * source names the list in errors ("AXLE_FLAGS"). */
bool opt_options_parse_flags(OptOptions *o, const char *flags, const char *source, Status *st);
/* Every flag in AXLE_FLAGS (absent or empty: nothing changes). */
bool opt_options_from_env(OptOptions *o, Status *st);

/* ------------------------------------------------------------- pipeline.c
 * The state of one optimizer run: the options, what each pass did and how
 * long it took, and the results later stages consume (the buffer plan). */
enum { OPT_MAX_PASS_RUNS = 64 };

typedef struct PassRun {
  const char *pass;            /* short name: "simplify", "fusion", ... */
  double ms;
  bool changed;
} PassRun;

typedef struct BufferPlan BufferPlan;

typedef struct OptContext {
  OptOptions options;
  int module_id;               /* the NNNN of dump file names */
  int dump_sequence;           /* per-pass dump counter */
  PassRun runs[OPT_MAX_PASS_RUNS];
  int run_count;
  /* Lines for --stats that say what a pass chose not to do and why
   * ("fold-constants: kept multiply.3 (10000000 elements > limit 65536)"). */
  StrBuf notes;
  /* Set by buffer-assignment; owned by the context. */
  BufferPlan *plan;
  /* Counted before the passes run, for --stats. */
  int instructions_before;
  int64_t temp_bytes_before;
} OptContext;

/* A pass: returns true when it changed the module. A pass that fails (only
 * buffer assignment can, on --max_temp_bytes) fills st and sets *failed. */
typedef bool PassFn(Module *m, OptContext *ctx, bool *failed, Status *st);

void opt_context_init(OptContext *ctx, const OptOptions *options);
void opt_context_free(OptContext *ctx);
/* Runs the whole pipeline on m (edited in place). */
bool optimize_module(Module *m, OptContext *ctx, Status *st);
/* "--stats": instructions, fusions and kernels, temporary bytes before and
 * after, per-pass time, then the notes and the five largest live buffers. */
void print_opt_stats(StrBuf *sb, const Module *m, const OptContext *ctx);
/* Instructions in every computation that is not a fusion body. */
int opt_count_instructions(const Module *m);
int opt_count_fusions(const Module *m);
/* What a backend launches: fusions plus unfused ops that do work (not
 * parameter, constant, tuple, get-tuple-element or bitcast). */
int opt_count_kernels(const Module *m);
/* The flops of the module's dots and convolutions (2 per multiply-add),
 * each instruction counted once: what --time divides by to give GFLOP/s. */
int64_t opt_count_matmul_flops(const Module *m);

/* ---------------------------------------------------------------- dump.c
 * XLA-style dumps into options.dump_dir, all sorting in pass order:
 *   module_NNNN.NAME.before_optimizations.txt
 *   module_NNNN.NAME.NNNN.PASS.after.txt        (--dump_passes; changed passes only)
 *   module_NNNN.NAME.after_optimizations.txt
 *   module_NNNN.NAME.after_optimizations.dot    (Graphviz; a cluster per fusion)
 *   module_NNNN.NAME.buffer-assignment.txt
 *   module_NNNN.NAME.kernels.txt                (the kernel IR of each kernel)
 *   module_NNNN.NAME.program.txt                (the program stage, program.h; dump_program)
 * The .txt files other than kernels.txt are HLO text that axle parses back. */
bool dump_module_text(OptContext *ctx, const Module *m, const char *suffix, Status *st);
bool dump_module_dot(OptContext *ctx, const Module *m, Status *st);
bool dump_buffer_assignment(OptContext *ctx, const Module *m, Status *st);
bool dump_module_kernels(OptContext *ctx, const Module *m, Status *st);
void print_module_kernels(StrBuf *sb, const Module *m);
/* Writes a Graphviz graph of the entry computation; fusions become clusters
 * holding their fused computations' instructions. */
void print_module_dot(StrBuf *sb, const Module *m);

/* ------------------------------------------------------------- the passes
 * One file each; the short name (used in flags and dump names) is in quotes. */
PassFn unpack_layouts;           /* unpack_layouts.c  "unpack-layouts" */
PassFn insert_layout_copies;     /* layout_copies.c   "layout-copies" */
PassFn expand_batch_norm;        /* expand_batch_norm.c "expand-batch-norm" */
PassFn inline_map;               /* inline_map.c      "inline-map" */
PassFn simplify_module;          /* simplify.c        "simplify" */
PassFn fold_constants;           /* constant_folding.c "fold-constants" */
PassFn eliminate_common_subexpressions; /* cse.c     "cse" */
PassFn eliminate_dead_code;      /* dce.c             "dce" */
PassFn canonicalize_dots;        /* canonicalize_dots.c "canonicalize-dots" */
PassFn canonicalize_convolutions; /* canonicalize_convolutions.c "canonicalize-convolutions" */
PassFn fuse_module;              /* fusion.c          "fusion" */
PassFn schedule_module;          /* schedule.c        "schedule" */
PassFn assign_buffers;           /* buffer_assignment.c "buffer-assignment" */

/* ---------------------------------------------------- canonicalize_dots.c
 * The relabels both canonicalize passes read operands through. */
/* x's shape read in `order` (dim i is x's dim order[i]) over x's own bytes. */
Shape relabel_shape(const Shape *x, const int64_t *order);
/* x read in `order` as a bitcast of x's own bytes, placed before `before`
 * (x itself, or the bitcast's source, when nothing is to relabel). */
Instruction *relabel_instruction(Computation *c, Instruction *before, Instruction *x, const int64_t *order);

/* ------------------------------------------------------------------ dce.c
 * Whether an instruction has effects beyond its result: its opcode has
 * (F_SIDE), or a computation it calls holds such an instruction. The
 * cleanup passes never remove, merge, fold or move one. */
bool instruction_has_effects(const Instruction *inst);

/* ------------------------------------------------- buffer_assignment.c
 * The memory plan of a computation (the entry's is the one kept in
 * ctx->plan), in the order schedule left it; positions are indices into
 * the instruction list. Every array leaf an instruction produces gets a
 * slot: parameters and results live in the caller's buffers, constants in
 * the executable, bitcast / get-tuple-element / tuple name storage others
 * own, and every other value sits at a fixed offset of one temporary
 * block, shared with values whose lifetimes do not overlap. An elementwise
 * result (or a fusion whose result element i reads only element i of that
 * operand) may take the slot of an operand that dies at it (in place).
 * input_output_alias is honoured where it is legal: the result is written
 * straight into the donated argument's buffer.
 * Computations that while/conditional/call run are not placed in the
 * entry's block: each gets a block of its own (buffer_plan_create on it)
 * while it runs, and the pass records the largest such need in
 * called_temp_bytes, so the module's whole temporary memory is known:
 * temp_bytes + called_temp_bytes. (The interpreter still allocates each
 * value itself; the plan is what the native backends use.) */
typedef enum BufferKind {
  BUFFER_PARAMETER,   /* the caller's argument */
  BUFFER_CONSTANT,    /* lives in the executable */
  BUFFER_OUTPUT,      /* part of the result, in the caller's result buffer */
  BUFFER_TEMP,        /* in the temporary block at offset */
  BUFFER_ALIAS,       /* no storage of its own (bitcast, get-tuple-element, tuple) */
} BufferKind;

typedef struct BufferSlot {
  const Instruction *inst;     /* what produced it (a fusion, a dot, ...) */
  int output_index;            /* leaf of a tuple-shaped result, depth first; 0 for arrays */
  const Shape *shape;          /* the leaf's array shape (inside inst->shape) */
  BufferKind kind;
  int64_t offset;              /* BUFFER_TEMP: offset in the temporary block; else -1 */
  int64_t size;                /* bytes */
  int live_from, live_to;      /* schedule positions, inclusive */
  /* In-place update: the slot it took over (an operand's storage that dies here). */
  const Instruction *shares_with;
  int shares_with_index;
  /* BUFFER_ALIAS: the slot whose storage it names. */
  const Instruction *source;
  int source_index;
  /* BUFFER_PARAMETER: the argument's number. BUFFER_OUTPUT: the argument
   * whose donated buffer it is written into (input_output_alias), else -1. */
  int64_t parameter_number;
} BufferSlot;

struct BufferPlan {
  const Computation *computation;
  int64_t temp_bytes;          /* size of the one temporary block */
  int64_t naive_temp_bytes;    /* every temporary in its own buffer */
  /* Set by assign_buffers for the entry: the most that the computations it
   * runs (loop bodies, branches, calls; nested ones included) need on top
   * of temp_bytes while they run. */
  int64_t called_temp_bytes;
  int peak_position;           /* where the live temporaries are largest */
  int64_t peak_live_bytes;     /* their sum there (without fragmentation) */
  int slot_count;
  BufferSlot *slots;           /* malloc'd; by position, then leaf */
};

enum { BUFFER_ALIGNMENT = 64 };

/* Plans c in its current order (the entry also honours the module's
 * input_output_alias). Never fails: every module has a plan. */
BufferPlan *buffer_plan_create(const Computation *c);
void buffer_plan_free(BufferPlan *plan);
/* The slot of instruction inst's leaf output_index, or NULL. */
const BufferSlot *buffer_plan_find(const BufferPlan *plan, const Instruction *inst,
                                   int output_index);
/* Temporary bytes of the entry if every temporary had its own buffer (for
 * --stats' "before" figure); usable before buffer assignment runs. */
int64_t buffer_plan_naive_temp_bytes(const Module *m);
/* The buffer-assignment dump: the module as HLO text that axle parses
 * back, each entry instruction preceded by a comment giving its slots:
 *   / * slot: offset=128 size=4096 live=[3,7] kind=temp * /  */
void print_buffer_plan(StrBuf *sb, const Module *m, const BufferPlan *plan);
/* The `count` largest temporaries live at the peak, with the instruction
 * (and its source_file:line) that made each, one per line. */
void print_largest_buffers(StrBuf *sb, const BufferPlan *plan, int count);

#endif
