/* The compile cache (executable.h): a program that compiles the same module
 * twice pays once. The key is the module's printed text plus the options
 * that change what is compiled; two modules that print alike compute alike,
 * whoever built them and however the text was spaced. */
#include <stdlib.h>
#include <string.h>

#include "runtime/executable.h"

static uint64_t key_hash(const char *key) {
  uint64_t h = 1469598103934665603ull;  /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)key; *p; p++) h = (h ^ *p) * 1099511628211ull;
  return h;
}

static char *cache_key_create(const Module *m, const ExecutableOptions *o, const Backend *be) {
  StrBuf sb = {0};
  print_module(&sb, m);
  bool optimize = o->optimize >= 0 ? o->optimize != 0 : be->optimizes;
  strbuf_printf(&sb, "\n-- backend=%s optimize=%d no_fusion=%d verify_each_pass=%d "
                     "max_temp_bytes=%lld fold_limit=%lld threads=%d gpu_no_wgmma=%d devices=%d cpu_level=%d "
                     "listings=%d gpu_target=%.16s compile_only=%d\n",
                be->name, optimize, o->opt.no_fusion, o->opt.verify_each_pass,
                (long long)o->opt.max_temp_bytes, (long long)o->opt.fold_limit, o->threads, o->opt.gpu_no_wgmma,
                o->devices, o->cpu_level, o->listings, o->gpu_target, o->compile_only);
  return sb.data;
}

/* Under the lock. */
static CompileCacheEntry *cache_find(CompileCache *cache, const char *key, uint64_t hash) {
  for (int i = 0; i < cache->count; i++) {
    CompileCacheEntry *e = &cache->entries[i];
    if (e->hash == hash && strcmp(e->key, key) == 0) return e;
  }
  return NULL;
}

/* Under the lock; takes key and one reference to exe. */
static void cache_insert(CompileCache *cache, char *key, uint64_t hash, Executable *exe) {
  CompileCacheEntry *slot = &cache->entries[cache->count];
  if (cache->count == COMPILE_CACHE_CAPACITY) {
    slot = &cache->entries[0];
    for (int i = 1; i < cache->count; i++)
      if (cache->entries[i].last_use < slot->last_use) slot = &cache->entries[i];
    mem_free(slot->key);
    executable_free(slot->executable);
  } else {
    cache->count++;
  }
  *slot = (CompileCacheEntry){.key = key, .hash = hash, .executable = exe, .last_use = ++cache->clock};
}

Executable *compile_cache_get(CompileCache *cache, const Module *m, const ExecutableOptions *o,
                              bool *hit, Status *st) {
  if (hit) *hit = false;
  const Backend *be = backend_get(o->backend, st);
  if (!be) return NULL;
  if (o->opt.dump_dir[0] || o->opt.stats) return executable_compile(m, o, st);
  char *key = cache_key_create(m, o, be);
  uint64_t hash = key_hash(key);
  pthread_mutex_lock(&cache->lock);
  CompileCacheEntry *found = cache_find(cache, key, hash);
  if (found) {
    found->last_use = ++cache->clock;
    cache->hits++;
    Executable *exe = executable_share(found->executable);
    pthread_mutex_unlock(&cache->lock);
    mem_free(key);
    if (hit) *hit = true;
    return exe;
  }
  pthread_mutex_unlock(&cache->lock);
  /* Compiled outside the lock: another thread may compile the same module
   * meanwhile; the first to finish is cached, the other kept by its caller. */
  Executable *exe = executable_compile(m, o, st);
  if (!exe) {
    mem_free(key);
    return NULL;
  }
  /* The last step of the caller's memory scope that allocates (ir.h): from
   * here the cache points to exe, so an unwind must not free it. */
  pthread_mutex_lock(&cache->lock);
  cache->misses++;
  if (cache_find(cache, key, hash)) mem_free(key);
  else cache_insert(cache, key, hash, executable_share(exe));
  pthread_mutex_unlock(&cache->lock);
  return exe;
}

void compile_cache_clear(CompileCache *cache) {
  pthread_mutex_lock(&cache->lock);
  for (int i = 0; i < cache->count; i++) {
    mem_free(cache->entries[i].key);
    executable_free(cache->entries[i].executable);
  }
  cache->count = 0;
  pthread_mutex_unlock(&cache->lock);
}
