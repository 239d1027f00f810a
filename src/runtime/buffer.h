/* Host buffers: the values an Executable runs on and returns.
 *
 * A buffer is a shape and its data (dense, row-major, as a Literal's), or
 * a tuple of buffers. The public axle_buffer_t is this type, handed out as
 * it is. Device buffers come with the GPU backend; they will be a second
 * kind beside this one, moved by the TransferManager.
 *
 * The one argument check of the runtime lives here: every run, from the C
 * API or axle-run, goes through host_buffer_check_arguments. */
#ifndef AXLE_RUNTIME_BUFFER_H
#define AXLE_RUNTIME_BUFFER_H

#include "axle.h"
#include "ir.h"

typedef struct axle_buffer HostBuffer;

/* A tuple's shape has type TYPE_TUPLE and tuple_count set, tuple_shapes
 * NULL (as a Literal's): its element shapes are elements[i]->shape. */
struct axle_buffer {
  Shape shape;
  void *data;              /* arrays: shape_byte_size(&shape) bytes */
  HostBuffer **elements;   /* tuples: shape.tuple_count buffers, owned */
  /* data or elements lie in this buffer's own block, after it (the
   * constructors below): one allocation a buffer, so that a run returning
   * its result allocates one block per buffer of it. False where they
   * were taken from elsewhere (host_buffer_adopt_literal). */
  bool one_block;
};

/* An array buffer with a copy of data (NULL: zeros). Fails with the bytes
 * it needed when memory runs out. */
HostBuffer *host_buffer_create(const Shape *shape, const void *data, Status *st);
/* A tuple holding deep copies of elements. */
HostBuffer *host_buffer_create_tuple(HostBuffer *const *elements, int count, Status *st);
HostBuffer *host_buffer_clone(const HostBuffer *b, Status *st);
void host_buffer_free(HostBuffer *b);
/* A buffer of shape s (tuples too) whose array leaves' data, depth first,
 * go to leaves[*n...]: where a backend writes its result. Zeroed, or not
 * (zeroed false) where the backend writes every byte of every leaf, as
 * its run into a caller's memory must (axle_executable_run_into). */
HostBuffer *host_buffer_create_leaves(const Shape *s, bool zeroed, void **leaves, int *n, Status *st);

/* Takes lit's storage (no copy) and frees lit. */
HostBuffer *host_buffer_adopt_literal(Literal *lit);
/* A Literal naming b's storage (no copy), for the evaluator and the .npy
 * writer; free it with literal_view_free, never literal_free. */
Literal *host_buffer_view(const HostBuffer *b);
void literal_view_free(Literal *view);

/* "f32[3]" / "(f32[2], (s32[], f32[2]))". */
void host_buffer_shape_print(StrBuf *sb, const HostBuffer *b);

/* Checks one argument per parameter of entry: the count, and for each the
 * element type, dims and tuple structure. The message names the parameter
 * and says what it expected and what it got. */
bool host_buffer_check_arguments(const Computation *entry, HostBuffer *const *args, int arg_count,
                            Status *st);

#endif
