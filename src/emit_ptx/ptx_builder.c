/* The PTX text builder (see ptx_builder.h): the target, the module text,
 * kernels, virtual registers, labels, shared memory, and the small format
 * language that ptx_inst reads. It knows no HLO: emitters above it decide
 * what to write, this file only writes it well-formed and readable. */
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ptx/ptx_builder.h"

/* ---- the target ---- */

bool ptx_target_for_device(int compute_major, int compute_minor, PtxTarget *target, Status *st) {
  memset(target, 0, sizeof *target);
  if (compute_major < 8)
    return status_error(st, STATUS_UNSUPPORTED,
                        "axle's GPU backend needs compute capability 8.0 (Ampere) or newer; "
                        "this device is %d.%d",
                        compute_major, compute_minor);
  target->isa_major = 8;
  target->isa_minor = 0;
  if (compute_major == 8) {
    target->sm = 80 + compute_minor;
  } else if (compute_major == 9) {
    target->sm = 90;
    target->arch_specific = true;
  } else {
    target->sm = 90;   /* forward-compatible PTX; the driver JITs it for the newer GPU */
  }
  snprintf(target->name, sizeof target->name, "sm_%d%s", target->sm, target->arch_specific ? "a" : "");
  return true;
}

/* The targets axle writes, by name: sm_80, sm_86, sm_89 (Ampere, Ada) and
 * sm_90a (Hopper, with wgmma); sm_90 names the forward-compatible PTX the
 * driver would JIT for a newer GPU. */
bool ptx_target_from_name(const char *name, PtxTarget *target, Status *st) {
  static const struct {
    const char *name;
    int major, minor;
  } known[] = {{"sm_80", 8, 0}, {"sm_86", 8, 6}, {"sm_89", 8, 9}, {"sm_90a", 9, 0}, {"sm_90", 10, 0}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(name, known[i].name) == 0) return ptx_target_for_device(known[i].major, known[i].minor, target, st);
  return status_error(st, STATUS_INPUT_ERROR, "unknown GPU target '%s' (sm_80, sm_86, sm_89, sm_90a or sm_90)", name);
}

/* PTX for sm_XY is JIT-compiled by the driver for any GPU of compute
 * capability X.Y or newer; an arch-specific target ('a') for X.Y alone. */
bool ptx_target_runs_on(const PtxTarget *target, int compute_major, int compute_minor) {
  int sm = compute_major * 10 + compute_minor;
  return target->arch_specific ? sm == target->sm : sm >= target->sm;
}

bool ptx_target_has_wgmma(const PtxTarget *target) { return target->sm == 90 && target->arch_specific; }

/* ---- types ---- */

static const struct {
  const char *suffix;
  PtxRegClass cls;
  int bytes;
} ptx_types[PTX_TYPE_COUNT] = {
#define AXLE_PTX_TYPE_ROW(e, suffix, cls, bytes) {suffix, cls, bytes},
    AXLE_PTX_TYPES(AXLE_PTX_TYPE_ROW)
#undef AXLE_PTX_TYPE_ROW
};

const char *ptx_type_suffix(PtxType t) { return ptx_types[t].suffix; }
PtxRegClass ptx_type_reg_class(PtxType t) { return ptx_types[t].cls; }
int ptx_type_byte_size(PtxType t) { return ptx_types[t].bytes; }

bool ptx_type_of_element(ElementType t, PtxType *out) {
  switch (t) {
  case TYPE_PRED: *out = PTX_PRED; return true;
  case TYPE_S8: *out = PTX_S8; return true;
  case TYPE_U8: *out = PTX_U8; return true;
  case TYPE_S16: *out = PTX_S16; return true;
  case TYPE_U16: *out = PTX_U16; return true;
  case TYPE_S32: *out = PTX_S32; return true;
  case TYPE_U32: *out = PTX_U32; return true;
  case TYPE_S64: *out = PTX_S64; return true;
  case TYPE_U64: *out = PTX_U64; return true;
  case TYPE_F16: *out = PTX_F16; return true;
  case TYPE_BF16: *out = PTX_BF16; return true;
  case TYPE_F32: *out = PTX_F32; return true;
  case TYPE_F64: *out = PTX_F64; return true;
  default: return false;
  }
}

/* The register classes: prefix and the type of their .reg declaration. */
static const struct {
  const char *prefix, *decl_type;
} ptx_reg_classes[PTX_REG_CLASS_COUNT] = {
    [PTX_REG_PRED] = {"%p", ".pred"}, [PTX_REG_B16] = {"%h", ".b16"}, [PTX_REG_B32] = {"%r", ".b32"},
    [PTX_REG_B64] = {"%rd", ".b64"},  [PTX_REG_F32] = {"%f", ".f32"}, [PTX_REG_F64] = {"%fd", ".f64"},
};

/* ---- the module ---- */

void ptx_builder_init(PtxBuilder *b, const PtxTarget *target) {
  memset(b, 0, sizeof *b);
  b->target = *target;
  strbuf_printf(&b->module,
                "// PTX written by axle for %s.\n"
                ".version %d.%d\n"
                ".target %s\n"
                ".address_size 64\n",
                target->name, target->isa_major, target->isa_minor, target->name);
  b->header_bytes = b->module.len;
}

void ptx_builder_free(PtxBuilder *b) {
  strbuf_free(&b->module);
  strbuf_free(&b->kernel_comment);
  strbuf_free(&b->params);
  strbuf_free(&b->declarations);
  strbuf_free(&b->body);
  mem_free(b->spans);
  memset(b, 0, sizeof *b);
}

const char *ptx_builder_text(const PtxBuilder *b) { return b->module.data ? b->module.data : ""; }

static const struct PtxKernelSpan *span_find(const PtxBuilder *b, const char *entry) {
  for (int i = 0; i < b->span_count; i++)
    if (strcmp(b->spans[i].name, entry) == 0) return &b->spans[i];
  return NULL;
}

static bool span_wanted(const struct PtxKernelSpan *s, const char *const *entries, int count) {
  for (int i = 0; i < count; i++)
    if (strcmp(s->name, entries[i]) == 0) return true;
  return false;
}

bool ptx_builder_kernel_module(const PtxBuilder *b, const char *const *entries, int count, StrBuf *out) {
  size_t last_end = 0;
  for (int i = 0; i < count; i++) {
    const struct PtxKernelSpan *s = span_find(b, entries[i]);
    if (!s) return false;
    if (s->end > last_end) last_end = s->end;
  }
  const char *text = ptx_builder_text(b);
  strbuf_printf(out, "%.*s", (int)b->header_bytes, text);
  /* Walk the text past the header: gaps between kernels are module scope. */
  size_t at = b->header_bytes;
  for (int i = 0; i < b->span_count && at < last_end; i++) {
    const struct PtxKernelSpan *s = &b->spans[i];
    if (s->start > at) strbuf_printf(out, "%.*s", (int)(s->start - at), text + at);
    if (span_wanted(s, entries, count)) strbuf_printf(out, "%.*s", (int)(s->end - s->start), text + s->start);
    at = s->end;
  }
  return true;
}

/* StrBufs are reused kernel after kernel: emptied, not freed. */
static void strbuf_clear(StrBuf *sb) {
  sb->len = 0;
  if (sb->data) sb->data[0] = 0;
}

static const char *strbuf_text(const StrBuf *sb) { return sb->data ? sb->data : ""; }

/* ---- kernels ---- */

void ptx_kernel_begin(PtxBuilder *b, const char *name, const char *what) {
  assert(!b->in_kernel && "ptx_kernel_end the previous kernel first");
  b->in_kernel = true;
  snprintf(b->kernel_name, sizeof b->kernel_name, "%s", name);
  strbuf_clear(&b->kernel_comment);
  strbuf_clear(&b->params);
  strbuf_clear(&b->declarations);
  strbuf_clear(&b->body);
  strbuf_printf(&b->kernel_comment, "%s", what);
  memset(b->reg_count, 0, sizeof b->reg_count);
  b->label_count = 0;
  b->max_threads = 0;
}

void ptx_kernel_param(PtxBuilder *b, PtxType type, const char *name) {
  assert(b->in_kernel && type != PTX_PRED);
  strbuf_printf(&b->params, "%s\n\t.param %s %s", b->params.len ? "," : "", ptx_type_suffix(type), name);
}

void ptx_kernel_param_bytes(PtxBuilder *b, const char *name, int bytes, int align) {
  assert(b->in_kernel && bytes > 0);
  strbuf_printf(&b->params, "%s\n\t.param .align %d .b8 %s[%d]", b->params.len ? "," : "", align, name, bytes);
}

void ptx_dynamic_shared_declare(PtxBuilder *b, const char *name, int align) {
  assert(b->in_kernel);
  strbuf_printf(&b->module, ".extern .shared .align %d .b8 %s[];\n", align, name);
}

void ptx_kernel_set_max_threads(PtxBuilder *b, int threads) {
  assert(b->in_kernel && threads > 0);
  b->max_threads = threads;
}

/* Writes the kernel out: comment, .entry with its parameters, the .reg
 * declarations (%f<5> declares %f0 .. %f4), shared arrays, then the body. */
void ptx_kernel_end(PtxBuilder *b) {
  assert(b->in_kernel);
  StrBuf *m = &b->module;
  if (b->span_count == b->span_capacity) {
    b->span_capacity = b->span_capacity ? 2 * b->span_capacity : 16;
    b->spans = mem_realloc(b->spans, (size_t)b->span_capacity * sizeof *b->spans);
  }
  struct PtxKernelSpan *span = &b->spans[b->span_count++];
  snprintf(span->name, sizeof span->name, "%s", b->kernel_name);
  span->start = m->len;
  strbuf_printf(m, "\n// %s\n.visible .entry %s(%s\n)\n", strbuf_text(&b->kernel_comment), b->kernel_name,
                strbuf_text(&b->params));
  if (b->max_threads) strbuf_printf(m, ".maxntid %d, 1, 1\n", b->max_threads);
  strbuf_printf(m, "{\n");
  for (int c = 0; c < PTX_REG_CLASS_COUNT; c++)
    if (b->reg_count[c])
      strbuf_printf(m, "\t.reg %s %s<%d>;\n", ptx_reg_classes[c].decl_type, ptx_reg_classes[c].prefix,
                    b->reg_count[c]);
  strbuf_printf(m, "%s\n%s}\n", strbuf_text(&b->declarations), strbuf_text(&b->body));
  span->end = m->len;
  b->in_kernel = false;
}

void ptx_kernel_abandon(PtxBuilder *b) {
  assert(b->in_kernel);
  b->in_kernel = false;
}

PtxReg ptx_reg_new(PtxBuilder *b, PtxType type) {
  assert(b->in_kernel);
  PtxRegClass cls = ptx_type_reg_class(type);
  return (PtxReg){cls, b->reg_count[cls]++};
}

void ptx_f64_text(double v, char *text, size_t size) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  snprintf(text, size, "0d%016llX", (unsigned long long)bits);
}

PtxReg ptx_f64_constant(PtxBuilder *b, double v) {
  char text[24];
  ptx_f64_text(v, text, sizeof text);
  PtxReg d = ptx_reg_new(b, PTX_F64);
  ptx_inst(b, "mov.b64 $r, $s", d, text);
  return d;
}

PtxLabel ptx_label_new(PtxBuilder *b, const char *hint) {
  assert(b->in_kernel);
  return (PtxLabel){b->label_count++, hint};
}

void ptx_label_place(PtxBuilder *b, PtxLabel label) {
  strbuf_printf(&b->body, "$L%d_%s:\n", label.index, label.hint);
}

void ptx_shared_declare(PtxBuilder *b, const char *name, PtxType type, int count, int align) {
  assert(b->in_kernel && count > 0 && type != PTX_PRED);
  strbuf_printf(&b->declarations, "\t.shared .align %d %s %s[%d];\n", align, ptx_type_suffix(type), name, count);
}

/* ---- instructions ---- */

void ptx_reg_name(PtxReg r, char *out, size_t size) {
  snprintf(out, size, "%s%d", ptx_reg_classes[r.cls].prefix, r.index);
}

static void reg_print(StrBuf *sb, PtxReg r) {
  char name[16];
  ptx_reg_name(r, name, sizeof name);
  strbuf_printf(sb, "%s", name);
}

void ptx_inst_v(PtxBuilder *b, const char *format, va_list args) {
  StrBuf *sb = &b->body;
  strbuf_printf(sb, "\t");
  for (const char *p = format; *p; p++) {
    if (*p != '$') {
      strbuf_printf(sb, "%c", *p);
      continue;
    }
    switch (*++p) {
    case 'r': reg_print(sb, va_arg(args, PtxReg)); break;
    case 's': strbuf_printf(sb, "%s", va_arg(args, const char *)); break;
    case 'd': strbuf_printf(sb, "%d", va_arg(args, int)); break;
    case 'D': strbuf_printf(sb, "%" PRId64, va_arg(args, int64_t)); break;
    case 'l': {
      PtxLabel l = va_arg(args, PtxLabel);
      strbuf_printf(sb, "$L%d_%s", l.index, l.hint);
      break;
    }
    case '$': strbuf_printf(sb, "$"); break;
    default: assert(!"ptx_inst: unknown $ directive"); return;
    }
  }
  strbuf_printf(sb, ";\n");
}

void ptx_inst(PtxBuilder *b, const char *format, ...) {
  assert(b->in_kernel);
  va_list args;
  va_start(args, format);
  ptx_inst_v(b, format, args);
  va_end(args);
}

void ptx_comment(PtxBuilder *b, const char *format, ...) {
  assert(b->in_kernel);
  char text[512];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  strbuf_printf(&b->body, "\t// %s\n", text);
}

/* ---- addressing ---- */

PtxReg ptx_param_load(PtxBuilder *b, PtxType type, const char *name) {
  PtxReg r = ptx_reg_new(b, type);
  ptx_inst(b, "ld.param$s $r, [$s]", ptx_type_suffix(type), r, name);
  return r;
}

/* A kernel parameter holds a generic address; cvta.to.global turns it into
 * a global-space one, which ld.global/st.global need. */
PtxReg ptx_param_load_global_pointer(PtxBuilder *b, const char *name) {
  PtxReg generic = ptx_param_load(b, PTX_U64, name);
  PtxReg global = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "cvta.to.global.u64 $r, $r", global, generic);
  return global;
}

PtxReg ptx_global_thread_index(PtxBuilder *b) {
  PtxReg block = ptx_reg_new(b, PTX_U32), threads = ptx_reg_new(b, PTX_U32), thread = ptx_reg_new(b, PTX_U32);
  PtxReg first = ptx_reg_new(b, PTX_U64), thread64 = ptx_reg_new(b, PTX_U64), index = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mov.u32 $r, %ctaid.x", block);
  ptx_inst(b, "mov.u32 $r, %ntid.x", threads);
  ptx_inst(b, "mov.u32 $r, %tid.x", thread);
  ptx_inst(b, "mul.wide.u32 $r, $r, $r", first, block, threads);
  ptx_inst(b, "cvt.u64.u32 $r, $r", thread64, thread);
  ptx_inst(b, "add.s64 $r, $r, $r", index, first, thread64);
  return index;
}

PtxReg ptx_element_address(PtxBuilder *b, PtxReg base, PtxReg index, int element_bytes) {
  PtxReg address = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "mad.lo.s64 $r, $r, $d, $r", address, index, element_bytes, base);
  return address;
}

PtxReg ptx_op1(PtxBuilder *b, PtxType t, const char *op, PtxReg a) {
  PtxReg d = ptx_reg_new(b, t);
  ptx_inst(b, "$s $r, $r", op, d, a);
  return d;
}

PtxReg ptx_op2(PtxBuilder *b, PtxType t, const char *op, PtxReg a, PtxReg c) {
  PtxReg d = ptx_reg_new(b, t);
  ptx_inst(b, "$s $r, $r, $r", op, d, a, c);
  return d;
}

PtxReg ptx_op3(PtxBuilder *b, PtxType t, const char *op, PtxReg a, PtxReg c, PtxReg e) {
  PtxReg d = ptx_reg_new(b, t);
  ptx_inst(b, "$s $r, $r, $r, $r", op, d, a, c, e);
  return d;
}
