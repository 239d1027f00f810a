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
  if (size > SIZE_MAX / 2) mem_fail(1, size);
  size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (size == 0) size = ARENA_ALIGN;
  ArenaBlock *b = arena->head;
  if (!b || b->cap - b->used < size) {
    size_t cap = size > ARENA_BLOCK_SIZE ? size : ARENA_BLOCK_SIZE;
    b = mem_malloc(sizeof(ArenaBlock) + cap);
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

void arena_free_all(Arena *arena) {
  ArenaBlock *b = arena->head;
  while (b) {
    ArenaBlock *next = b->next;
    mem_free(b);
    b = next;
  }
  arena->head = NULL;
}
