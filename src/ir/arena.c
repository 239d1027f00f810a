/* A bump allocator for everything one module holds. Blocks are chained and
 * freed together; a large request gets a block of its own. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

enum { ARENA_BLOCK_SIZE = 64 * 1024, ARENA_ALIGN = 16 };

struct ArenaBlock {
  ArenaBlock *next;
  size_t used, cap;
  _Alignas(16) unsigned char bytes[];
};

void *arena_alloc(Arena *arena, size_t size) {
  size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (size == 0) size = ARENA_ALIGN;
  ArenaBlock *b = arena->head;
  if (!b || b->cap - b->used < size) {
    size_t cap = size > ARENA_BLOCK_SIZE ? size : ARENA_BLOCK_SIZE;
    b = malloc(sizeof(ArenaBlock) + cap);
    if (!b) {
      /* Out of memory in the compiler itself: there is no sensible recovery
       * that keeps every caller simple, so stop with a message. */
      fputs("error: out of memory\n", stderr);
      exit(1);
    }
    b->used = 0;
    b->cap = cap;
    b->next = arena->head;
    arena->head = b;
  }
  void *p = b->bytes + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

char *arena_strndup(Arena *arena, const char *s, size_t n) {
  char *p = arena_alloc(arena, n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *arena_strdup(Arena *arena, const char *s) {
  return arena_strndup(arena, s, strlen(s));
}

void *arena_memdup(Arena *arena, const void *p, size_t size) {
  void *q = arena_alloc(arena, size);
  if (size) memcpy(q, p, size);
  return q;
}

/* The message says how much was asked for: a module too large for the
 * machine is the usual cause, and the number tells the user so. */
static void exit_out_of_memory(size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size)
    fprintf(stderr, "error: out of memory: needs %zu x %zu bytes\n", count, size);
  else
    fprintf(stderr, "error: out of memory: needs %zu bytes\n", count * size);
  exit(1);
}

void *calloc_or_exit(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) exit_out_of_memory(count, size);
  return p;
}

void *realloc_or_exit(void *p, size_t size) {
  void *q = realloc(p, size ? size : 1);
  if (!q) exit_out_of_memory(1, size);
  return q;
}

void *array_calloc(size_t bytes) {
  /* C11's aligned_alloc wants a size that is a multiple of the alignment. */
  if (bytes > SIZE_MAX - ARRAY_ALIGNMENT) return NULL;
  size_t rounded = bytes ? (bytes + ARRAY_ALIGNMENT - 1) / ARRAY_ALIGNMENT * ARRAY_ALIGNMENT : ARRAY_ALIGNMENT;
  void *p = aligned_alloc(ARRAY_ALIGNMENT, rounded);
  if (p) memset(p, 0, rounded);
  return p;
}

void arena_free_all(Arena *arena) {
  ArenaBlock *b = arena->head;
  while (b) {
    ArenaBlock *next = b->next;
    free(b);
    b = next;
  }
  arena->head = NULL;
}
