/* The code buffer: growing bytes, labels with fix-ups, NOP padding.
 *
 * A jump or a RIP-relative operand whose target is a label records a fix-up
 * (where its displacement field is, where the displacement counts from, and
 * how wide the field is); x86_buffer_finish fills them all in once every
 * label is bound. Everything the buffer owns is freed by x86_buffer_free. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "x86_encode_internal.h"

void x86_buffer_init(X86Buffer *cb) { memset(cb, 0, sizeof *cb); }

void x86_buffer_free(X86Buffer *cb) {
  mem_free(cb->code);
  mem_free(cb->label_offsets);
  mem_free(cb->fixups);
  for (size_t i = 0; i < cb->listing_count; i++) mem_free((char *)cb->listing[i].note);
  mem_free(cb->listing);
  memset(cb, 0, sizeof *cb);
}

void x86_buffer_enable_listing(X86Buffer *cb) { cb->listing_enabled = true; }

bool x86_buffer_fail(X86Buffer *cb, const char *fmt, ...) {
  if (!cb->failed) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cb->error, sizeof cb->error, fmt, ap);
    va_end(ap);
    cb->failed = true;
  }
  return false;
}

/* Grows *data so that it holds at least need elements of elem_size bytes. */
static bool grow(X86Buffer *cb, void **data, size_t *capacity, size_t need, size_t elem_size) {
  if (need <= *capacity) return true;
  size_t cap = *capacity ? *capacity : 16;
  while (cap < need) cap *= 2;
  void *p = mem_realloc(*data, cap * elem_size);
  if (!p) return x86_buffer_fail(cb, "out of memory growing the code buffer");
  *data = p;
  *capacity = cap;
  return true;
}

void x86_buffer_put(X86Buffer *cb, const uint8_t *bytes, size_t count) {
  if (!grow(cb, (void **)&cb->code, &cb->capacity, cb->size + count, 1)) return;
  memcpy(cb->code + cb->size, bytes, count);
  cb->size += count;
}

void x86_emit_bytes(X86Buffer *cb, const void *bytes, size_t count) {
  x86_buffer_put(cb, bytes, count);
}

void x86_buffer_add_fixup(X86Buffer *cb, X86Fixup fixup) {
  if (!grow(cb, (void **)&cb->fixups, &cb->fixup_capacity, cb->fixup_count + 1,
            sizeof *cb->fixups))
    return;
  cb->fixups[cb->fixup_count++] = fixup;
}

void x86_buffer_record(X86Buffer *cb, const X86Instr *instr, size_t offset, int broadcast_lanes) {
  if (!cb->listing_enabled) return;
  if (!grow(cb, (void **)&cb->listing, &cb->listing_capacity, cb->listing_count + 1,
            sizeof *cb->listing))
    return;
  X86ListingLine *line = &cb->listing[cb->listing_count++];
  memset(line, 0, sizeof *line);
  line->offset = offset;
  line->length = cb->size - offset;
  if (instr) line->instr = *instr;
  line->broadcast_lanes = broadcast_lanes;
}

void x86_listing_note(X86Buffer *cb, const char *fmt, ...) {
  if (!cb->listing_enabled) return;
  char text[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  size_t before = cb->listing_count;
  x86_buffer_record(cb, NULL, cb->size, 0);
  if (cb->listing_count == before) return;
  char *copy = mem_malloc(strlen(text) + 1);
  if (!copy) { x86_buffer_fail(cb, "out of memory in the listing"); return; }
  strcpy(copy, text);
  cb->listing[before].note = copy;
}

X86Label x86_label_new(X86Buffer *cb) {
  if (!grow(cb, (void **)&cb->label_offsets, &cb->label_capacity, (size_t)cb->label_count + 1,
            sizeof *cb->label_offsets))
    return -1;
  cb->label_offsets[cb->label_count] = -1;
  return cb->label_count++;
}

void x86_label_bind(X86Buffer *cb, X86Label label) {
  if (label < 0 || label >= cb->label_count) {
    x86_buffer_fail(cb, "binding label %d, which was never made", label);
    return;
  }
  if (cb->label_offsets[label] >= 0) {
    x86_buffer_fail(cb, "label %d is bound twice", label);
    return;
  }
  cb->label_offsets[label] = (int64_t)cb->size;
}

int64_t x86_label_offset(const X86Buffer *cb, X86Label label) {
  if (label < 0 || label >= cb->label_count) return -1;
  return cb->label_offsets[label];
}

bool x86_buffer_finish(X86Buffer *cb, Status *st) {
  for (size_t i = 0; i < cb->fixup_count && !cb->failed; i++) {
    const X86Fixup *f = &cb->fixups[i];
    int64_t target = x86_label_offset(cb, f->label);
    if (target < 0) {
      x86_buffer_fail(cb, "label %d is used but never bound", f->label);
      break;
    }
    int64_t rel = target - (int64_t)f->end;
    if (f->width == 1) {
      if (rel < -128 || rel > 127) {
        x86_buffer_fail(cb, "label %d is %lld bytes away, out of rel8 reach", f->label,
                        (long long)rel);
        break;
      }
      cb->code[f->at] = (uint8_t)(int8_t)rel;
    } else {
      uint32_t v = (uint32_t)(int32_t)rel;
      for (int b = 0; b < 4; b++) cb->code[f->at + (size_t)b] = (uint8_t)(v >> (8 * b));
    }
  }
  if (cb->failed) return status_error(st, STATUS_UNSUPPORTED, "x86 encoder: %s", cb->error);
  return true;
}

/* The NOPs GNU as pads code with (its "alt" patterns for 64-bit mode),
 * indexed by length: nop, xchg %ax,%ax, then nopl/nopw with ever longer
 * addressing forms, up to 11 bytes with redundant 66 and cs prefixes. */
static const uint8_t nop_patterns[12][11] = {
  {0},
  {0x90},
  {0x66, 0x90},
  {0x0f, 0x1f, 0x00},
  {0x0f, 0x1f, 0x40, 0x00},
  {0x0f, 0x1f, 0x44, 0x00, 0x00},
  {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
  {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
  {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
  {0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
  {0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
  {0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
};

void x86_emit_nops(X86Buffer *cb, size_t count) {
  while (count > 0) {
    size_t n = count > 11 ? 11 : count;
    size_t offset = cb->size;
    x86_buffer_put(cb, nop_patterns[n], n);
    X86Instr nop = {.mnemonic = X86_NOP, .count = 0};
    x86_buffer_record(cb, &nop, offset, 0);
    count -= n;
  }
}

void x86_align(X86Buffer *cb, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    x86_buffer_fail(cb, "alignment %zu is not a power of two", alignment);
    return;
  }
  x86_emit_nops(cb, (alignment - cb->size % alignment) % alignment);
}
