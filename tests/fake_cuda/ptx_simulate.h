/* A small SIMT simulator for the PTX kernels axle writes, so that tests
 * can run whole kernels (loops, branches, warp shuffles, shared memory,
 * barriers) on the host and compare them with the kernel interpreter
 * without a GPU.
 *
 * One block at a time: every thread has its own registers and program
 * counter and runs until it meets a synchronizing instruction
 * (shfl.sync, bar.sync) or returns; a warp's shuffle completes when all
 * its lanes wait at it, a barrier when every thread of the block does (a
 * kernel that breaks those rules fails with "deadlock"). Global memory is
 * host memory: a load or store outside the buffers the test registered
 * fails the run instead of touching anything. It knows the instructions
 * the emitter writes for pred, 8- to 64-bit integer and f32/f64 kernels,
 * and f16/bf16 to and from f32; anything else (f16 arithmetic, ...) gives
 * "unsupported", which a test counts apart from a failure. Float arithmetic is the host's IEEE
 * arithmetic, which .rn is.
 *
 * The rules it follows quote the PTX ISA (9.0) at the code (here and in
 * ptx_simulate_ops.h). The thread model: bar.sync with no count is "all
 * threads in the CTA participate in the barrier", and a barrier in code
 * that threads of the block reach differently is "undefined" (PTX ISA,
 * bar/barrier), so here every thread must reach the same barrier or the
 * run fails with "deadlock"; the ISA lets exited threads skip a barrier or
 * a shuffle, which this simulator (stricter) does not. */
#ifndef AXLE_TESTS_PTX_SIMULATE_H
#define AXLE_TESTS_PTX_SIMULATE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PTXS_CLASSES = 6, PTXS_MAX_OPERANDS = 9, PTXS_MAX_PARAMS = 64, PTXS_MAX_BUFFERS = 64, PTXS_MAX_SHARED = 16 };

/* Register classes as the builder names them, longest prefix first. */
static const char *const ptxs_prefixes[PTXS_CLASSES] = {"%rd", "%fd", "%p", "%h", "%r", "%f"};

typedef enum PtxsOperandKind {
  PTXS_REG, PTXS_IMM, PTXS_SPECIAL, PTXS_VECTOR, PTXS_MEM_REG, PTXS_MEM_PARAM, PTXS_MEM_SHARED, PTXS_SHARED,
  PTXS_LABEL,
  PTXS_PARAM_ADDRESS,       /* a by-value parameter's name: the host address of its bytes */
  PTXS_TENSOR               /* [%rd, {coords}]: a tensor map's address register and coordinates */
} PtxsOperandKind;

typedef struct PtxsOperand {
  PtxsOperandKind kind;
  int cls, index;           /* a register; PTXS_MEM_REG: the address register */
  uint64_t bits;            /* an immediate; PTXS_SPECIAL: 0 tid, 1 ntid, 2 ctaid, 3 nctaid */
  int64_t offset;           /* memory: + offset */
  int symbol;               /* parameter, shared array or label number */
  int count;                /* PTXS_VECTOR: registers in vector[]; PTXS_TENSOR: coordinates */
  int vector[4][2];         /* PTXS_VECTOR: (class, index) each */
  int wide;                 /* a vector of more than 4: its (class, index) pairs start at
                               PtxsKernel.wide[2 * wide] */
} PtxsOperand;

typedef struct PtxsInst {
  char op[96];
  int guard_cls, guard_index;  /* -1: none */
  bool guard_negated;
  int count;
  PtxsOperand operands[PTXS_MAX_OPERANDS];
} PtxsInst;

typedef struct PtxsBuffer {
  char *base;
  size_t bytes;
} PtxsBuffer;

typedef struct PtxsKernel {
  int count, capacity;
  PtxsInst *insts;
  int param_count;
  char params[PTXS_MAX_PARAMS][64];
  int param_bytes[PTXS_MAX_PARAMS];   /* 0: a .u64; else a by-value .b8 array (a tensor map) */
  int *wide, wide_count;              /* the registers of vectors of more than 4 */
  int reg_counts[PTXS_CLASSES];
  int shared_count;
  char shared_names[PTXS_MAX_SHARED][64];
  int64_t shared_offsets[PTXS_MAX_SHARED], shared_bytes;
  int64_t dynamic_shared_at;          /* where dynamic shared memory starts (0: none declared) */
  int global_count;                 /* module-level .global arrays (math tables) */
  char global_names[4][64];
  PtxsBuffer globals[4];
  int label_count;
  char labels[256][32];
  int label_targets[256];
  char error[256];
} PtxsKernel;

static int ptxs_class_of(const char *s, int *length) {
  for (int i = 0; i < PTXS_CLASSES; i++) {
    size_t n = strlen(ptxs_prefixes[i]);
    if (strncmp(s, ptxs_prefixes[i], n) == 0 && s[n] >= '0' && s[n] <= '9') {
      *length = (int)n;
      return i;
    }
  }
  return -1;
}

static char *ptxs_trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
  return s;
}

static int ptxs_label(PtxsKernel *k, const char *name) {
  for (int i = 0; i < k->label_count; i++)
    if (!strcmp(k->labels[i], name)) return i;
  if (k->label_count == 256) return -1;
  snprintf(k->labels[k->label_count], sizeof k->labels[0], "%s", name);
  k->label_targets[k->label_count] = -1;
  return k->label_count++;
}

/* {%r1, %r2, ...}: up to 4 in vector[]; a longer one (wgmma's sums) in
 * k->wide, its first 4 in vector[] too. */
static bool ptxs_vector_parse(PtxsKernel *k, char *text, PtxsOperand *o) {
  int n;
  o->kind = PTXS_VECTOR;
  o->wide = k->wide_count;
  char *rest = NULL;  /* strtok_r: devices of a run over several GPUs simulate on their own threads */
  for (char *part = strtok_r(text + 1, ",}", &rest); part; part = strtok_r(NULL, ",}", &rest)) {
    char *r = ptxs_trim(part);
    if (!*r) continue;
    int cls = ptxs_class_of(r, &n), index = atoi(r + n);
    if (cls < 0) return false;
    if (o->count < 4) o->vector[o->count][0] = cls, o->vector[o->count][1] = index;
    k->wide = realloc(k->wide, (size_t)(k->wide_count + 1) * 2 * sizeof *k->wide);
    k->wide[2 * k->wide_count] = cls, k->wide[2 * k->wide_count + 1] = index;
    k->wide_count++;
    o->count++;
  }
  if (o->count <= 4) k->wide_count = o->wide;  /* short: vector[] holds it */
  return o->count > 0;
}

/* [%rdN, {%r1, %r2, %r3}]: cp.async.bulk.tensor's tensor map and coordinates. */
static bool ptxs_tensor_parse(PtxsKernel *k, char *text, PtxsOperand *o) {
  int n;
  char *comma = strchr(text, ','), *brace = strchr(text, '{');
  if (!comma || !brace) return false;
  *comma = 0;
  o->cls = ptxs_class_of(ptxs_trim(text + 1), &n);
  o->index = atoi(ptxs_trim(text + 1) + n);
  char *close = strchr(brace, '}');
  if (o->cls < 0 || !close) return false;
  close[1] = 0;
  PtxsOperand coords;
  memset(&coords, 0, sizeof coords);
  if (!ptxs_vector_parse(k, brace, &coords) || coords.count > 4) return false;
  o->kind = PTXS_TENSOR;
  o->count = coords.count;
  memcpy(o->vector, coords.vector, sizeof o->vector);
  return true;
}

static bool ptxs_operand_parse(PtxsKernel *k, char *text, PtxsOperand *o) {
  text = ptxs_trim(text);
  memset(o, 0, sizeof *o);
  int n;
  if (text[0] == '{') return ptxs_vector_parse(k, text, o);
  if (!strcmp(text, "_")) return o->kind = PTXS_IMM, true;  /* a sink: never read */
  if (text[0] == '[' && strchr(text, '{')) return ptxs_tensor_parse(k, text, o);
  if (text[0] == '[') {
    char inner[64];
    snprintf(inner, sizeof inner, "%s", text + 1);
    char *close = strchr(inner, ']');
    if (close) *close = 0;
    char *plus = strchr(inner, '+');
    if (plus) o->offset = strtoll(plus + 1, NULL, 10), *plus = 0;
    if (inner[0] == '%') {
      o->kind = PTXS_MEM_REG;
      o->cls = ptxs_class_of(inner, &n);
      o->index = atoi(inner + n);
      return o->cls >= 0;
    }
    for (int i = 0; i < k->param_count; i++)
      if (!strcmp(inner, k->params[i])) return o->kind = PTXS_MEM_PARAM, o->symbol = i, true;
    for (int i = 0; i < k->shared_count; i++)
      if (!strcmp(inner, k->shared_names[i])) return o->kind = PTXS_MEM_SHARED, o->symbol = i, true;
    return false;
  }
  if (text[0] == '%') {
    static const char *const specials[] = {"%tid.x", "%ntid.x", "%ctaid.x", "%nctaid.x"};
    for (int i = 0; i < 4; i++)
      if (!strcmp(text, specials[i])) return o->kind = PTXS_SPECIAL, o->bits = (uint64_t)i, true;
    o->kind = PTXS_REG;
    o->cls = ptxs_class_of(text, &n);
    o->index = atoi(text + n);
    return o->cls >= 0 && o->index < k->reg_counts[o->cls];
  }
  if (text[0] == '$') {
    o->kind = PTXS_LABEL;
    o->symbol = ptxs_label(k, text);
    return o->symbol >= 0;
  }
  o->kind = PTXS_IMM;
  if (text[0] == '0' && (text[1] == 'f' || text[1] == 'd')) return o->bits = strtoull(text + 2, NULL, 16), true;
  if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) return o->bits = strtoull(text + 2, NULL, 16), true;
  if ((text[0] >= '0' && text[0] <= '9') || text[0] == '-') return o->bits = (uint64_t)strtoll(text, NULL, 10), true;
  for (int i = 0; i < k->global_count; i++)
    if (!strcmp(text, k->global_names[i])) return o->bits = (uint64_t)(uintptr_t)k->globals[i].base, true;
  for (int i = 0; i < k->shared_count; i++)
    if (!strcmp(text, k->shared_names[i])) return o->kind = PTXS_SHARED, o->symbol = i, true;
  for (int i = 0; i < k->param_count; i++)
    if (!strcmp(text, k->params[i]) && k->param_bytes[i]) return o->kind = PTXS_PARAM_ADDRESS, o->symbol = i, true;
  return false;
}

/* The declarations a kernel opens with: parameters, registers, shared. */
static bool ptxs_declaration_parse(PtxsKernel *k, char *t) {
  char name[64];
  int count, align;
  if (sscanf(t, ".param .u64 %63[a-zA-Z0-9_]", name) == 1 && k->param_count < PTXS_MAX_PARAMS) {
    snprintf(k->params[k->param_count++], sizeof k->params[0], "%s", name);
    return true;
  }
  if (sscanf(t, ".param .align %d .b8 %63[a-zA-Z0-9_][%d]", &align, name, &count) == 3 &&
      k->param_count < PTXS_MAX_PARAMS) {
    k->param_bytes[k->param_count] = count;
    snprintf(k->params[k->param_count++], sizeof k->params[0], "%s", name);
    return true;
  }
  if (!strncmp(t, ".reg ", 5)) {
    char *reg = strchr(t, '%'), *angle = strchr(t, '<');
    int length, cls = reg ? ptxs_class_of(reg, &length) : -1;
    if (cls < 0 && reg) {
      /* "%f<103>": the class prefix is followed by '<', not a digit */
      for (int i = 0; i < PTXS_CLASSES; i++)
        if (!strncmp(reg, ptxs_prefixes[i], strlen(ptxs_prefixes[i])) && reg[strlen(ptxs_prefixes[i])] == '<') cls = i;
    }
    if (cls < 0 || !angle) return false;
    k->reg_counts[cls] = atoi(angle + 1);
    return true;
  }
  char type[16];
  if (sscanf(t, ".shared .align %d .%15[a-z0-9] %63[a-zA-Z0-9_][%d]", &align, type, name, &count) == 4 &&
      k->shared_count < PTXS_MAX_SHARED) {
    int size = strstr(type, "64") ? 8 : strstr(type, "16") ? 2 : strstr(type, "8") ? 1 : 4;
    k->shared_bytes = (k->shared_bytes + align - 1) / align * align;
    snprintf(k->shared_names[k->shared_count], sizeof k->shared_names[0], "%s", name);
    k->shared_offsets[k->shared_count++] = k->shared_bytes;
    k->shared_bytes += (int64_t)size * count;
    return true;
  }
  return !strncmp(t, ".maxntid", 8) || !strncmp(t, ".visible", 8) || !strncmp(t, ".entry", 6) || t[0] == ')' ||
         t[0] == '{' || t[0] == '(';
}

/* Splits operands at top-level commas (not inside {} or []). */
static int ptxs_split(char *s, char **parts, int most) {
  int n = 0, depth = 0;
  char *start = s;
  for (char *p = s;; p++) {
    if (*p == '{' || *p == '[') depth++;
    if (*p == '}' || *p == ']') depth--;
    if ((*p == ',' && depth == 0) || !*p) {
      bool end = !*p;
      *p = 0;
      if (n < most) parts[n++] = start;
      if (end) break;
      start = p + 1;
    }
  }
  return n;
}

static bool ptxs_instruction_parse(PtxsKernel *k, char *t) {
  if (k->count == k->capacity) {
    k->capacity = k->capacity ? 2 * k->capacity : 256;
    k->insts = realloc(k->insts, (size_t)k->capacity * sizeof *k->insts);
  }
  PtxsInst *in = &k->insts[k->count];
  memset(in, 0, sizeof *in);
  in->guard_cls = -1;
  if (t[0] == '@') {
    int n;
    in->guard_negated = t[1] == '!';
    char *r = t + 1 + in->guard_negated;
    in->guard_cls = ptxs_class_of(r, &n);
    in->guard_index = atoi(r + n);
    t = strchr(t, ' ');
    if (!t || in->guard_cls < 0) return false;
    t = ptxs_trim(t);
  }
  char *space = strchr(t, ' ');
  if (space) *space = 0;
  snprintf(in->op, sizeof in->op, "%.95s", t);
  if (space) {
    char *parts[PTXS_MAX_OPERANDS];
    int n = ptxs_split(space + 1, parts, PTXS_MAX_OPERANDS);
    for (int i = 0; i < n; i++)
      if (!ptxs_operand_parse(k, parts[i], &in->operands[in->count++])) {
        snprintf(k->error, sizeof k->error, "cannot read operand '%.60s' of %s", ptxs_trim(parts[i]), in->op);
        return false;
      }
  }
  k->count++;
  return true;
}

/* The module's ".global .align A .u32 NAME[N] = {v, v, ...};" arrays. */
static bool ptxs_globals_parse(PtxsKernel *k, const char *text, const char *entry) {
  for (const char *g = strstr(text, ".global "); g && g < entry; g = strstr(g + 1, ".global ")) {
    char name[64];
    int align, count;
    if (sscanf(g, ".global .align %d .u32 %63[a-zA-Z0-9_][%d]", &align, name, &count) != 3 || k->global_count == 4)
      return snprintf(k->error, sizeof k->error, "cannot read a .global"), false;
    uint32_t *data = calloc((size_t)count + 1, sizeof *data);
    const char *p = strchr(g, '{');
    for (int i = 0; p && i < count; i++) {
      char *end;
      data[i] = (uint32_t)strtoul(p + 1, &end, 10);
      p = strchr(end, ',');
    }
    snprintf(k->global_names[k->global_count], sizeof k->global_names[0], "%s", name);
    k->globals[k->global_count++] = (PtxsBuffer){(char *)data, (size_t)count * sizeof *data};
  }
  return true;
}

/* The module's ".extern .shared .align A .b8 NAME[];": dynamic shared
 * memory, sized at launch. Every such array starts where the kernel's
 * static shared memory ends (the ISA is silent on where; the emitter
 * addresses dynamic shared memory only through the extern's name, so no
 * kernel depends on it). */
static void ptxs_dynamic_shared_parse(PtxsKernel *k, const char *text, const char *entry) {
  for (const char *e = strstr(text, ".extern .shared "); e && e < entry; e = strstr(e + 1, ".extern .shared ")) {
    char name[64];
    int align;
    if (sscanf(e, ".extern .shared .align %d .b8 %63[a-zA-Z0-9_][]", &align, name) != 2 ||
        k->shared_count == PTXS_MAX_SHARED)
      continue;
    snprintf(k->shared_names[k->shared_count], sizeof k->shared_names[0], "%s", name);
    k->shared_offsets[k->shared_count++] = -align;  /* placed once the static arrays are known */
  }
}

static void ptxs_dynamic_shared_place(PtxsKernel *k) {
  for (int i = 0; i < k->shared_count; i++) {
    if (k->shared_offsets[i] >= 0) continue;
    int64_t align = -k->shared_offsets[i], at = (k->shared_bytes + align - 1) / align * align;
    if (k->dynamic_shared_at < at) k->dynamic_shared_at = at;
  }
  for (int i = 0; i < k->shared_count; i++)
    if (k->shared_offsets[i] < 0) k->shared_offsets[i] = k->dynamic_shared_at;
}

static void ptxs_free(PtxsKernel *k) {
  for (int i = 0; i < k->global_count; i++) free(k->globals[i].base);
  free(k->wide);
  free(k->insts);
}

/* Reads .entry `name` of the module text (NULL: the first entry). */
static bool ptxs_parse_entry(PtxsKernel *k, const char *text, const char *name) {
  memset(k, 0, sizeof *k);
  const char *entry = strstr(text, ".entry ");
  if (name) {
    char pattern[300];
    snprintf(pattern, sizeof pattern, ".entry %s(", name);
    entry = strstr(text, pattern);
  }
  if (entry && !ptxs_globals_parse(k, text, entry)) return false;
  if (!entry) return snprintf(k->error, sizeof k->error, "no .entry"), false;
  ptxs_dynamic_shared_parse(k, text, entry);
  bool in_body = false;
  for (const char *line = entry; line && *line;) {
    const char *end = strchr(line, '\n');
    char buffer[1024];
    snprintf(buffer, sizeof buffer, "%.*s", (int)(end ? end - line : (long)strlen(line)), line);
    line = end ? end + 1 : NULL;
    char *t = ptxs_trim(buffer);
    char *comment = strstr(t, "//");
    if (comment) *comment = 0;
    t = ptxs_trim(t);
    if (!*t) continue;
    if (!strcmp(t, "}")) break;
    size_t n = strlen(t);
    if (t[0] == '$' && t[n - 1] == ':') {
      t[n - 1] = 0;
      int label = ptxs_label(k, t);
      if (label < 0) return false;
      k->label_targets[label] = k->count;
      continue;
    }
    if (t[n - 1] == ';') t[n - 1] = 0;
    if (!strcmp(t, "{")) {
      in_body = true;
      continue;
    }
    if (t[0] == '.' || !in_body) {
      if (!ptxs_declaration_parse(k, t)) return snprintf(k->error, sizeof k->error, "cannot read '%.80s'", t), false;
      continue;
    }
    if (!ptxs_instruction_parse(k, t)) {
      if (!k->error[0]) snprintf(k->error, sizeof k->error, "cannot read '%.80s'", t);
      return false;
    }
  }
  for (int i = 0; i < k->label_count; i++)
    if (k->label_targets[i] < 0) return snprintf(k->error, sizeof k->error, "label %s not placed", k->labels[i]), false;
  ptxs_dynamic_shared_place(k);
  return true;
}

/* ---- running ---- */

typedef struct PtxsThread {
  uint64_t *regs[PTXS_CLASSES];
  int pc;
  enum { PTXS_RUNNING, PTXS_AT_SHUFFLE, PTXS_AT_BARRIER, PTXS_AT_MBARRIER, PTXS_DONE } state;
} PtxsThread;

typedef struct PtxsRun {
  const PtxsKernel *k;
  uint64_t params[PTXS_MAX_PARAMS];
  PtxsBuffer buffers[PTXS_MAX_BUFFERS];
  int buffer_count;
  unsigned block, threads, blocks;
  char *shared;
  int64_t shared_limit;      /* static shared memory, then the launch's dynamic bytes */
  unsigned dynamic_shared;   /* the launch's dynamic shared bytes */
  PtxsThread *thread;
  char error[256];
  bool unsupported;   /* the error is an instruction the simulator does not know */
} PtxsRun;

static bool ptxs_fail(PtxsRun *r, bool unsupported, const char *what, const char *op) {
  snprintf(r->error, sizeof r->error, "%s %s", what, op);
  r->unsupported = unsupported;
  return false;
}

/* The type named by one of an op's parts ("f32", "u64" ...): its width in
 * bits and kind ('f' float, 's' signed, 'u' unsigned or bits, 'p' pred). */
static bool ptxs_type(const char *part, int *bits, char *kind) {
  static const struct { const char *name; int bits; char kind; } types[] = {
      {"f32", 32, 'f'}, {"f64", 64, 'f'}, {"s32", 32, 's'}, {"u32", 32, 'u'}, {"b32", 32, 'u'}, {"s64", 64, 's'},
      {"u64", 64, 'u'}, {"b64", 64, 'u'}, {"pred", 1, 'p'}, {"s16", 16, 's'}, {"u16", 16, 'u'}, {"b16", 16, 'u'},
      {"s8", 8, 's'},   {"u8", 8, 'u'},   {"f16", 16, 'h'}, {"bf16", 16, 'h'}};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (!strcmp(part, types[i].name)) return *bits = types[i].bits, *kind = types[i].kind, true;
  return false;
}

static uint64_t ptxs_mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
static int64_t ptxs_signed(uint64_t v, int bits) {
  return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}
static double ptxs_float(uint64_t v, int bits) {
  if (bits == 64) {
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
  }
  uint32_t b = (uint32_t)v;
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}
static uint64_t ptxs_float_bits(double x, int bits) {
  if (bits == 64) {
    uint64_t v;
    memcpy(&v, &x, sizeof v);
    return v;
  }
  float f = (float)x;
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

static uint64_t ptxs_read(PtxsRun *r, PtxsThread *t, const PtxsOperand *o) {
  switch (o->kind) {
  case PTXS_REG: return t->regs[o->cls][o->index];
  case PTXS_SPECIAL: {
    /* %tid.x "thread identifier within a CTA", %ntid.x the CTA's size,
     * %ctaid.x "CTA identifier within a grid", %nctaid.x the grid's size
     * (PTX ISA, Special Registers); one-dimensional launches only */
    unsigned index = (unsigned)(t - r->thread);
    uint64_t v[] = {index, r->threads, r->block, r->blocks};
    return v[o->bits];
  }
  case PTXS_SHARED: return (uint64_t)r->k->shared_offsets[o->symbol];
  case PTXS_PARAM_ADDRESS: return r->params[o->symbol];
  default: return o->bits;
  }
}

/* The host address of a global access, checked against the buffers. */
static void *ptxs_global(PtxsRun *r, uint64_t address, size_t bytes) {
  for (int i = 0; i < r->buffer_count + r->k->global_count; i++) {
    const PtxsBuffer *b = i < r->buffer_count ? &r->buffers[i] : &r->k->globals[i - r->buffer_count];
    uintptr_t base = (uintptr_t)b->base;
    if (address >= base && address + bytes <= base + b->bytes) return (void *)(uintptr_t)address;
  }
  return NULL;
}

#include "ptx_simulate_ops.h"

/* Runs thread t until it waits, returns or fails. */
static bool ptxs_thread_run(PtxsRun *r, PtxsThread *t) {
  for (int steps = 0; t->state == PTXS_RUNNING; steps++) {
    if (steps > 50000000) return ptxs_fail(r, false, "runaway loop at", "");
    if (t->pc >= r->k->count) return ptxs_fail(r, false, "ran off the end", "");
    const PtxsInst *in = &r->k->insts[t->pc];
    if (in->guard_cls >= 0 && (t->regs[in->guard_cls][in->guard_index] != 0) == in->guard_negated) {
      t->pc++;
      continue;
    }
    if (!ptxs_step(r, t, in)) return false;
  }
  return true;
}

static inline bool ptxs_parse(PtxsKernel *k, const char *text) { return ptxs_parse_entry(k, text, NULL); }

/* shfl.sync.{down,bfly}.b32 d, a, b, c, membermask, when every lane of the
 * warp waits at it, as the PTX ISA's shfl.sync semantics give it:
 *   "maxLane = (lane[4:0] & segmask[4:0]) | (cval[4:0] & ~segmask[4:0])"
 *   ".down: j = lane + bval; pval = (j <= maxLane)"
 *   ".bfly: j = lane ^ bval; pval = (j <= maxLane)"
 *   "if (!pval) j = lane;  // copy from own lane"
 * with bval = b[4:0], cval = c[4:0], segmask = c[12:8]. A lane outside
 * the block is "inactive": "results are undefined if a thread sources a
 * register from an inactive thread or a thread that is not in membermask",
 * and "The behavior of shfl.sync is undefined if the executing thread is
 * not in the membermask", so both fail the run. */
static bool ptxs_shuffle(PtxsRun *r, unsigned first, unsigned lanes) {
  const PtxsInst *in = &r->k->insts[r->thread[first].pc];
  if (!strncmp(in->op, "mma.", 4)) return ptxs_mma_sync(r, first, lanes);
  bool bfly = strstr(in->op, ".bfly") != NULL;
  if (!bfly && !strstr(in->op, ".down")) return ptxs_fail(r, true, "unsupported", in->op);
  uint64_t values[32];
  for (unsigned l = 0; l < lanes; l++) values[l] = ptxs_read(r, &r->thread[first + l], &in->operands[1]);
  for (unsigned l = 0; l < lanes; l++) {
    PtxsThread *t = &r->thread[first + l];
    unsigned b = (unsigned)ptxs_read(r, t, &in->operands[2]) & 31, c = (unsigned)ptxs_read(r, t, &in->operands[3]);
    unsigned members = in->count > 4 ? (unsigned)ptxs_read(r, t, &in->operands[4]) : 0xffffffffu;
    unsigned segmask = (c >> 8) & 31, max_lane = (l & segmask) | (c & 31 & ~segmask);
    unsigned source = bfly ? l ^ b : l + b;
    if (source > max_lane) source = l;
    if (!(members >> l & 1)) return ptxs_fail(r, false, "a lane outside shfl.sync's membermask executes", in->op);
    if (source >= lanes || !(members >> source & 1))
      return ptxs_fail(r, false, "shfl.sync reads a lane that is inactive or outside its membermask in", in->op);
    uint64_t v = values[source];
    t->regs[in->operands[0].cls][in->operands[0].index] = v & 0xffffffffu;
    t->state = PTXS_RUNNING;
    t->pc++;
  }
  return true;
}

/* One block to the end. */
static bool ptxs_block_run(PtxsRun *r) {
  for (;;) {
    for (unsigned i = 0; i < r->threads; i++)
      if (!ptxs_thread_run(r, &r->thread[i])) return false;
    unsigned done = 0, at_barrier = 0;
    bool moved = false;
    for (unsigned w = 0; w * 32 < r->threads; w++) {
      unsigned first = w * 32, lanes = r->threads - first < 32 ? r->threads - first : 32, waiting = 0;
      for (unsigned l = 0; l < lanes; l++)
        waiting += r->thread[first + l].state == PTXS_AT_SHUFFLE && r->thread[first + l].pc == r->thread[first].pc;
      if (waiting == lanes) {
        if (!ptxs_shuffle(r, first, lanes)) return false;
        moved = true;
      }
    }
    for (unsigned i = 0; i < r->threads; i++)  /* a wait whose phase has completed goes on */
      if (r->thread[i].state == PTXS_AT_MBARRIER && ptxs_mbarrier_phase_done(r, &r->thread[i]))
        r->thread[i].state = PTXS_RUNNING, moved = true;
    for (unsigned i = 0; i < r->threads; i++)
      done += r->thread[i].state == PTXS_DONE, at_barrier += r->thread[i].state == PTXS_AT_BARRIER;
    if (done == r->threads) return true;
    if (at_barrier == r->threads) {
      for (unsigned i = 0; i < r->threads; i++) r->thread[i].state = PTXS_RUNNING, r->thread[i].pc++;
      moved = true;
    }
    if (!moved) return ptxs_fail(r, false, "deadlock: threads wait at different synchronizations", "");
  }
}

/* Runs the grid, block after block. */
static bool ptxs_run(PtxsRun *r, unsigned blocks, unsigned threads) {
  const PtxsKernel *k = r->k;
  r->blocks = blocks;
  r->threads = threads;
  r->thread = calloc(threads, sizeof *r->thread);
  r->shared_limit = (k->dynamic_shared_at ? k->dynamic_shared_at : k->shared_bytes) + r->dynamic_shared;
  if (r->shared_limit < k->shared_bytes) r->shared_limit = k->shared_bytes;
  r->shared = calloc((size_t)r->shared_limit + 8, 1);
  for (unsigned i = 0; i < threads; i++)
    for (int c = 0; c < PTXS_CLASSES; c++) r->thread[i].regs[c] = calloc((size_t)k->reg_counts[c] + 1, sizeof(uint64_t));
  bool ok = true;
  for (unsigned b = 0; ok && b < blocks; b++) {
    r->block = b;
    for (unsigned i = 0; i < threads; i++) r->thread[i].pc = 0, r->thread[i].state = PTXS_RUNNING;
    ok = ptxs_block_run(r);
  }
  for (unsigned i = 0; i < threads; i++)
    for (int c = 0; c < PTXS_CLASSES; c++) free(r->thread[i].regs[c]);
  free(r->thread);
  free(r->shared);
  return ok;
}

#endif
