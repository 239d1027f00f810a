/* Out of memory unwinds (see ir.h, "memory.c").
 *
 * No function in axle checks for a failed allocation: mem_calloc and its
 * kin never return NULL. When the system has no memory left they jump back
 * to the innermost MemScope of the thread (each public API call opens one),
 * which has kept every block allocated since it began in a set; those
 * blocks are freed, and the API call returns AXLE_ERROR_OUT_OF_MEMORY with
 * the size that was asked for. The blocks that a successful scope leaves
 * behind become its caller's (the enclosing scope's, or nobody's: owned by
 * whatever points to them). So an allocation failure costs nothing on the
 * success path but a hash-set insert, and needs no error path through the
 * hundreds of functions between the API and the allocator.
 *
 * The set is open-addressed with linear probing; a removal shifts the
 * following entries back, so there are no tombstones. Code mappings (JIT
 * pages) are kept the same way, with their size, and unmapped on unwind.
 *
 * Without a scope (the tools call the library's internals directly) the
 * message is printed and the process ends with exit status 1: a tool is
 * its own host. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ir.h"

static _Thread_local MemScope *current_scope;

/* Blocks taken from the system allocator (mem_allocation_count). */
static atomic_long allocation_count;

/* Allocations left before an injected failure (mem_fail_after); -1: none. */
static atomic_long failure_countdown = -1;

static size_t slot_of(const void *p, size_t cap) {
  uintptr_t h = (uintptr_t)p >> 4;
  h ^= h >> 17;
  h *= (uintptr_t)0x9e3779b97f4a7c15u;
  return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* Frees the set's table unless it is the scope's own first one. */
static void set_table_free(MemScope *s) {
  if (s->entries != s->first) free(s->entries);
}

/* Room for one more entry; false when the set itself cannot grow. The
 * first table is the scope's own (MemScope.first), zeroed only when a
 * block is first kept, so an empty scope costs nothing. */
static bool set_reserve(MemScope *s) {
  if ((s->count + 1) * 4 <= s->cap * 3) return true;
  if (!s->cap) {
    memset(s->first, 0, sizeof s->first);
    s->entries = s->first;
    s->cap = MEM_SCOPE_FIRST_ENTRIES;
    return true;
  }
  size_t cap = 2 * s->cap;
  MemEntry *grown = calloc(cap, sizeof *grown);
  if (!grown) return false;
  atomic_fetch_add_explicit(&allocation_count, 1, memory_order_relaxed);
  for (size_t i = 0; i < s->cap; i++) {
    if (!s->entries[i].block) continue;
    size_t j = slot_of(s->entries[i].block, cap);
    while (grown[j].block) j = (j + 1) & (cap - 1);
    grown[j] = s->entries[i];
  }
  set_table_free(s);
  s->entries = grown;
  s->cap = cap;
  return true;
}

static void set_insert(MemScope *s, MemEntry e) {
  size_t i = slot_of(e.block, s->cap);
  while (s->entries[i].block) i = (i + 1) & (s->cap - 1);
  s->entries[i] = e;
  s->count++;
}

/* Removes block from s; false when s does not hold it. */
static bool set_remove(MemScope *s, const void *block) {
  if (!s->cap) return false;
  size_t mask = s->cap - 1, i = slot_of(block, s->cap);
  while (s->entries[i].block != block) {
    if (!s->entries[i].block) return false;
    i = (i + 1) & mask;
  }
  /* Backward shift: move up each later entry of the run whose home slot
   * does not lie between the hole and it. */
  for (size_t j = (i + 1) & mask; s->entries[j].block; j = (j + 1) & mask) {
    size_t home = slot_of(s->entries[j].block, s->cap);
    bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    s->entries[i] = s->entries[j];
    i = j;
  }
  s->entries[i] = (MemEntry){0};
  s->count--;
  return true;
}

static void release(const MemEntry *e) {
  if (e->release) e->release(e->block);
  else if (e->mapped) munmap(e->block, e->mapped);
  else free(e->block);
}

static void scope_release_all(MemScope *s) {
  for (size_t i = 0; i < s->cap; i++)
    if (s->entries[i].block) release(&s->entries[i]);
  set_table_free(s);
  s->entries = NULL;
  s->cap = s->count = 0;
}

/* Hands what s holds to the scope around it (or to nobody). When the outer
 * set cannot grow: a closing scope frees what it holds and unwinds the
 * outer one; an unwinding keeping scope leaves the rest to its owners. */
static void hand_over(MemScope *s, bool unwinding) {
  MemScope *outer = s->outer;
  for (size_t i = 0; outer && i < s->cap; i++) {
    if (!s->entries[i].block) continue;
    if (!set_reserve(outer)) {
      if (unwinding) break;
      current_scope = outer;
      scope_release_all(s);
      mem_fail(1, sizeof(MemEntry));
    }
    set_insert(outer, s->entries[i]);
    s->entries[i] = (MemEntry){0};
  }
  set_table_free(s);
  s->entries = NULL;
  s->cap = s->count = 0;
}

void mem_scope_begin(MemScope *s) {
  s->entries = NULL;
  s->cap = s->count = 0;
  s->needed = 0;
  s->what[0] = '\0';
  s->keeping = false;
  s->outer = current_scope;
  current_scope = s;
}

void mem_scope_begin_keeping(MemScope *s) {
  mem_scope_begin(s);
  s->keeping = true;
}

void mem_scope_end(MemScope *s) {
  current_scope = s->outer;
  hand_over(s, false);
}


/* Unwinds the innermost scope (or ends a tool) with what was asked for:
 * `needed` bytes (SIZE_MAX: a size that overflows) for `what`, when known. */
static _Noreturn void fail(const char *what, size_t needed) {
  MemScope *s = current_scope;
  if (!s) {
    fprintf(stderr, "error: out of memory: %s%s", what, *what ? " " : "");
    if (needed == SIZE_MAX) fprintf(stderr, "needs more bytes than a size_t holds\n");
    else fprintf(stderr, "needs %zu bytes\n", needed);
    exit(1);
  }
  s->needed = needed;
  snprintf(s->what, sizeof s->what, "%s", what);
  current_scope = s->outer;
  if (s->keeping) hand_over(s, true);
  else scope_release_all(s);
  longjmp(s->unwind, 1);
}

_Noreturn void mem_fail(size_t count, size_t size) {
  fail("", size != 0 && count > SIZE_MAX / size ? SIZE_MAX : count * size);
}

_Noreturn void mem_fail_for(const char *what, size_t bytes) { fail(what, bytes); }

_Noreturn void mem_scope_rethrow(MemScope *s) { fail(s->what, s->needed); }

long mem_allocation_count(void) { return atomic_load_explicit(&allocation_count, memory_order_relaxed); }

long mem_fail_after(long allocations) { return atomic_exchange(&failure_countdown, allocations); }

/* True when the test hook says this allocation is to fail. */
static bool injected_failure(void) {
  if (atomic_load_explicit(&failure_countdown, memory_order_relaxed) < 0) return false;
  return atomic_fetch_sub(&failure_countdown, 1) == 0;
}

/* p (NULL or just taken from the system allocator), counted. */
static void *counted(void *p) {
  if (p) atomic_fetch_add_explicit(&allocation_count, 1, memory_order_relaxed);
  return p;
}

/* Keeps block (just allocated, not NULL) in the current scope, or frees it
 * and unwinds when the scope's set cannot grow. */
static void *keep(MemEntry e) {
  MemScope *s = current_scope;
  if (!s) return e.block;
  if (!set_reserve(s)) {
    release(&e);
    mem_fail(1, sizeof(MemEntry));
  }
  set_insert(s, e);
  return e.block;
}

/* Forgets block in whichever scope of this thread holds it. */
static void forget(const void *block) {
  if (!block) return;
  for (MemScope *s = current_scope; s; s = s->outer)
    if (set_remove(s, block)) return;
}

void *mem_try_calloc(size_t count, size_t size) {
  void *p = counted(injected_failure() ? NULL : calloc(count ? count : 1, size ? size : 1));
  return p ? keep((MemEntry){.block = p}) : NULL;
}

void *mem_calloc(size_t count, size_t size) {
  void *p = mem_try_calloc(count, size);
  if (!p) mem_fail(count, size);
  return p;
}

void *mem_malloc(size_t size) {
  void *p = counted(injected_failure() ? NULL : malloc(size ? size : 1));
  if (!p) mem_fail(1, size);
  return keep((MemEntry){.block = p});
}

void *mem_realloc(void *p, size_t size) {
  if (!p) return mem_malloc(size);
  /* A block from before the current scope stays its owner's; one from
   * inside moves in its scope's set to its new address. */
  MemScope *holder = current_scope;
  while (holder && !set_remove(holder, p)) holder = holder->outer;
  void *q = counted(injected_failure() ? NULL : realloc(p, size ? size : 1));
  if (holder) set_insert(holder, (MemEntry){.block = q ? q : p});  /* the slot just freed keeps the room */
  if (!q) mem_fail(1, size);  /* p is still allocated, and freed by the unwind */
  return q;
}

void *mem_try_aligned_alloc(size_t alignment, size_t size) {
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  if (rounded < size) return NULL;
  void *p = counted(injected_failure() ? NULL : aligned_alloc(alignment, rounded ? rounded : alignment));
  return p ? keep((MemEntry){.block = p}) : NULL;
}

void *mem_try_array_alloc(size_t bytes) { return mem_try_aligned_alloc(ARRAY_ALIGNMENT, bytes ? bytes : 1); }

void *mem_try_array_calloc(size_t bytes) {
  void *p = mem_try_array_alloc(bytes);
  if (p) memset(p, 0, bytes ? (bytes + ARRAY_ALIGNMENT - 1) / ARRAY_ALIGNMENT * ARRAY_ALIGNMENT : ARRAY_ALIGNMENT);
  return p;
}

char *mem_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(mem_malloc(n), s, n);
}

void mem_free(void *p) {
  if (!p) return;
  forget(p);
  free(p);
}

void mem_track_mapping(void *base, size_t size) { keep((MemEntry){.block = base, .mapped = size}); }
void mem_track_object(void *object, void (*release)(void *object)) {
  keep((MemEntry){.block = object, .release = release});
}
void mem_untrack(void *block) { forget(block); }
void *mem_adopt(void *block) { return block ? keep((MemEntry){.block = block}) : NULL; }
