/* Host buffers and the runtime's one argument check (buffer.h). */
#include <stdlib.h>
#include <string.h>

#include "runtime/buffer.h"

/* The buffer's header, rounded up to a cache line: its data starts there,
 * at ARRAY_ALIGNMENT as every array the library allocates. */
static size_t header_bytes(void) {
  return (sizeof(HostBuffer) + ARRAY_ALIGNMENT - 1) / ARRAY_ALIGNMENT * ARRAY_ALIGNMENT;
}

/* An array buffer: zeroed, or unfilled where every byte of its data is
 * written next (by a copy, or by the program whose result it is). Either
 * way the header and the padding after the data, up to the next line, are
 * zero, as in every buffer the library makes. */
static HostBuffer *array_create(const Shape *shape, const void *data, bool zeroed, Status *st) {
  size_t bytes = (size_t)shape_byte_size(shape);
  HostBuffer *b = NULL;
  if (bytes <= SIZE_MAX - header_bytes())
    b = zeroed ? mem_try_array_calloc(header_bytes() + bytes) : mem_try_array_alloc(header_bytes() + bytes);
  if (!b) {
    StrBuf sb = {0};
    shape_print(&sb, shape, false);
    status_error(st, STATUS_OUT_OF_MEMORY, "out of memory: %s needs %zu bytes",
                 sb.data ? sb.data : "an array", bytes);
    strbuf_free(&sb);
    return NULL;
  }
  if (!zeroed) {
    size_t padded = (header_bytes() + bytes + ARRAY_ALIGNMENT - 1) / ARRAY_ALIGNMENT * ARRAY_ALIGNMENT;
    memset(b, 0, header_bytes());
    memset((char *)b + header_bytes() + bytes, 0, padded - header_bytes() - bytes);
  }
  b->shape = *shape;
  b->data = (char *)b + header_bytes();
  b->one_block = true;
  if (data && bytes) memcpy(b->data, data, bytes);
  return b;
}

HostBuffer *host_buffer_create(const Shape *shape, const void *data, Status *st) {
  return array_create(shape, data, !data, st);
}

static HostBuffer *tuple_shell_create(int count, Status *st) {
  size_t bytes = sizeof(HostBuffer) + ((size_t)count + 1) * sizeof(HostBuffer *);
  HostBuffer *b = mem_try_calloc(1, bytes);
  if (!b) {
    status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  b->elements = (HostBuffer **)(b + 1);
  b->one_block = true;
  b->shape.type = TYPE_TUPLE;
  b->shape.tuple_count = count;
  return b;
}

HostBuffer *host_buffer_create_tuple(HostBuffer *const *elements, int count, Status *st) {
  HostBuffer *b = tuple_shell_create(count, st);
  for (int i = 0; b && i < count; i++) {
    b->elements[i] = host_buffer_clone(elements[i], st);
    if (!b->elements[i]) {
      host_buffer_free(b);
      b = NULL;
    }
  }
  return b;
}

HostBuffer *host_buffer_clone(const HostBuffer *b, Status *st) {
  if (shape_is_tuple(&b->shape))
    return host_buffer_create_tuple(b->elements, b->shape.tuple_count, st);
  return host_buffer_create(&b->shape, b->data, st);
}

void host_buffer_free(HostBuffer *b) {
  if (!b) return;
  if (b->elements)
    for (int i = 0; i < b->shape.tuple_count; i++) host_buffer_free(b->elements[i]);
  if (!b->one_block) {
    mem_free(b->elements);
    mem_free(b->data);
  }
  mem_free(b);
}

HostBuffer *host_buffer_adopt_literal(Literal *lit) {
  HostBuffer *b = mem_calloc(1, sizeof *b);
  b->shape = lit->shape;
  if (shape_is_tuple(&lit->shape)) {
    b->shape.tuple_shapes = NULL;
    b->elements = mem_calloc((size_t)lit->shape.tuple_count + 1, sizeof *b->elements);
    for (int i = 0; i < lit->shape.tuple_count; i++)
      b->elements[i] = host_buffer_adopt_literal(lit->elements[i]);
    mem_free(lit->elements);
  } else {
    b->data = lit->data;
  }
  mem_free(lit);
  return b;
}

Literal *host_buffer_view(const HostBuffer *b) {
  Literal *view = mem_calloc(1, sizeof *view);
  view->shape = b->shape;
  if (shape_is_tuple(&b->shape)) {
    view->elements = mem_calloc((size_t)b->shape.tuple_count + 1, sizeof *view->elements);
    for (int i = 0; i < b->shape.tuple_count; i++) view->elements[i] = host_buffer_view(b->elements[i]);
  } else {
    view->data = b->data;
  }
  return view;
}

void literal_view_free(Literal *view) {
  if (!view) return;
  if (view->elements) {
    for (int i = 0; i < view->shape.tuple_count; i++) literal_view_free(view->elements[i]);
    mem_free(view->elements);
  }
  mem_free(view);
}

void host_buffer_shape_print(StrBuf *sb, const HostBuffer *b) {
  if (!shape_is_tuple(&b->shape)) {
    shape_print(sb, &b->shape, false);
    return;
  }
  strbuf_printf(sb, "(");
  for (int i = 0; i < b->shape.tuple_count; i++) {
    if (i) strbuf_printf(sb, ", ");
    host_buffer_shape_print(sb, b->elements[i]);
  }
  strbuf_printf(sb, ")");
}

/* Whether a buffer fits a parameter shape: element type and dims of every
 * array, and for tuples the same structure (layouts are the module's). */
static bool buffer_fits(const Shape *want, const HostBuffer *got) {
  if (!got || shape_is_tuple(want) != shape_is_tuple(&got->shape)) return false;
  if (!shape_is_tuple(want)) return shape_equal(want, &got->shape);
  if (got->shape.tuple_count != want->tuple_count) return false;
  for (int i = 0; i < want->tuple_count; i++)
    if (!buffer_fits(&want->tuple_shapes[i], got->elements[i])) return false;
  return true;
}

bool host_buffer_check_arguments(const Computation *entry, HostBuffer *const *args, int arg_count,
                            Status *st) {
  if (arg_count != entry->parameter_count)
    return status_error(st, STATUS_INPUT_ERROR, "the entry computation takes %d parameter%s, got %d",
                        entry->parameter_count, entry->parameter_count == 1 ? "" : "s", arg_count);
  for (int i = 0; i < arg_count; i++) {
    const Instruction *p = entry->parameters[i];
    if (!args[i]) return status_error(st, STATUS_INPUT_ERROR, "parameter %d (%s) was given no value", i, p->name);
    if (buffer_fits(&p->shape, args[i])) continue;
    StrBuf want = {0}, got = {0};
    shape_print(&want, &p->shape, false);
    host_buffer_shape_print(&got, args[i]);
    status_error(st, STATUS_INPUT_ERROR, "parameter %d (%s) expects %s, got %s", i, p->name,
                 want.data ? want.data : "?", got.data ? got.data : "?");
    strbuf_free(&want);
    strbuf_free(&got);
    return false;
  }
  return true;
}

/* A buffer of shape s, zeroed or unfilled; its array leaves' data, depth
 * first, go to leaves[*n...]. */
HostBuffer *host_buffer_create_leaves(const Shape *s, bool zeroed, void **leaves, int *n, Status *st) {
  if (!shape_is_tuple(s)) {
    HostBuffer *b = array_create(s, NULL, zeroed, st);
    if (b) leaves[(*n)++] = b->data;
    return b;
  }
  HostBuffer *t = tuple_shell_create(s->tuple_count, st);
  if (!t) return NULL;
  for (int i = 0; i < s->tuple_count; i++) {
    t->elements[i] = host_buffer_create_leaves(&s->tuple_shapes[i], zeroed, leaves, n, st);
    if (!t->elements[i]) {
      host_buffer_free(t);
      return NULL;
    }
  }
  return t;
}
