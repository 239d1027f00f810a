/* NCCL found at run time (see nccl.h for why), and the communicators of one
 * run over several GPUs: one clique per replica group, made once with
 * ncclCommInitAll and kept until the run's executables go.
 *
 * Determinism. NCCL does not promise the same bits whatever its choices:
 * the algorithm (ring, tree, ...), the protocol and the channel count
 * change the order in which a reduction adds. With all three fixed, the
 * order depends only on the clique and the count, so a run repeats its
 * bits. Before the first clique is made, NCCL_ALGO=Ring and
 * NCCL_PROTO=Simple are set when the user has not set them (NCCL reads its
 * environment when a communicator is made); the channel count follows the
 * topology, which a machine keeps (repeatable in practice; NCCL's
 * documentation does not promise it). The order still differs from the CPU
 * backend's group-order fold, so a GPU sum may differ from the CPU's in its
 * last bits. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/nccl.h"

typedef struct NcclClique {
  int count;
  int *ordinals;          /* by rank */
  ncclComm_t *comms;      /* by rank */
} NcclClique;

struct NcclCliques {
  NcclLibrary nccl;
  int clique_count, clique_capacity;
  NcclClique *cliques;
  atomic_bool aborted;       /* set by a failing device's thread, read by the others' */
};

bool nccl_check(const NcclLibrary *nccl, ncclResult_t r, const char *call, Status *st) {
  if (r == ncclSuccess) return true;
  const char *text = nccl->get_error_string ? nccl->get_error_string(r) : NULL;
  return status_error(st, STATUS_RUNTIME_ERROR, "%s failed: NCCL error %d%s%s", call, (int)r, text ? ": " : "",
                      text ? text : "");
}

static bool nccl_library_open(NcclLibrary *n, Status *st) {
  memset(n, 0, sizeof *n);
  const char *path = getenv("AXLE_NCCL_LIBRARY");
  if (!path || !*path) path = "libnccl.so.2";
  n->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!n->library) {
    const char *why = dlerror();
    return status_error(st, STATUS_UNSUPPORTED,
                        "no NCCL library (%s); several GPUs need NVIDIA's libnccl.so.2 (AXLE_NCCL_LIBRARY names another)",
                        why ? why : path);
  }
  /* as for the CUDA driver: memcpy keeps the object-to-function pointer
   * conversion defined in ISO C */
#define AXLE_NCCL_RESOLVE(field, symbol, args)                                                 \
  {                                                                                            \
    void *p = dlsym(n->library, symbol);                                                       \
    if (!p) {                                                                                  \
      dlclose(n->library);                                                                     \
      n->library = NULL;                                                                       \
      return status_error(st, STATUS_UNSUPPORTED, "no NCCL library (%s lacks %s)", path, symbol); \
    }                                                                                          \
    memcpy(&n->field, &p, sizeof p);                                                           \
  }
  AXLE_NCCL_ENTRIES(AXLE_NCCL_RESOLVE)
  AXLE_NCCL_RESOLVE(get_error_string, "ncclGetErrorString", ())
#undef AXLE_NCCL_RESOLVE
  return true;
}

/* The library is opened when the first collective needs it, so that a
 * module without collectives runs on several GPUs without NCCL, and the
 * error of a missing one is located at the collective. */
NcclCliques *nccl_cliques_open(Status *st) {
  (void)st;
  return mem_calloc(1, sizeof(NcclCliques));
}

const NcclLibrary *nccl_cliques_library(const NcclCliques *c) { return &c->nccl; }

static NcclClique *clique_find(NcclCliques *c, const int *ordinals, int count) {
  for (int i = 0; i < c->clique_count; i++) {
    NcclClique *k = &c->cliques[i];
    if (k->count == count && memcmp(k->ordinals, ordinals, (size_t)count * sizeof *ordinals) == 0) return k;
  }
  return NULL;
}

/* A fixed algorithm and protocol, unless the user chose (see the top). */
static void nccl_fix_reduction_order(void) {
  setenv("NCCL_ALGO", "Ring", 0);
  setenv("NCCL_PROTO", "Simple", 0);
}

ncclComm_t nccl_cliques_get(NcclCliques *c, const int *ordinals, int count, int position, Status *st) {
  if (c->aborted) {
    status_error(st, STATUS_RUNTIME_ERROR, "NCCL's communicators were aborted after a device failed");
    return NULL;
  }
  if (!c->nccl.library && !nccl_library_open(&c->nccl, st)) return NULL;
  NcclClique *k = clique_find(c, ordinals, count);
  if (!k) {
    nccl_fix_reduction_order();
    ncclComm_t *comms = mem_calloc((size_t)count, sizeof *comms);
    if (!nccl_check(&c->nccl, c->nccl.comm_init_all(comms, count, ordinals), "ncclCommInitAll", st)) {
      mem_free(comms);
      return NULL;
    }
    if (c->clique_count == c->clique_capacity) {
      c->clique_capacity = c->clique_capacity ? 2 * c->clique_capacity : 8;
      c->cliques = mem_realloc(c->cliques, (size_t)c->clique_capacity * sizeof *c->cliques);
    }
    k = &c->cliques[c->clique_count++];
    *k = (NcclClique){.count = count, .ordinals = mem_calloc((size_t)count, sizeof *ordinals), .comms = comms};
    memcpy(k->ordinals, ordinals, (size_t)count * sizeof *ordinals);
  }
  return k->comms[position];
}

void nccl_cliques_abort(NcclCliques *c) {
  if (!c || atomic_exchange(&c->aborted, true)) return;
  for (int i = 0; i < c->clique_count; i++)
    for (int r = 0; r < c->cliques[i].count; r++) c->nccl.comm_abort(c->cliques[i].comms[r]);
}

bool nccl_cliques_aborted(const NcclCliques *c) { return c && c->aborted; }

void nccl_cliques_free(NcclCliques *c) {
  if (!c) return;
  for (int i = 0; i < c->clique_count; i++) {
    NcclClique *k = &c->cliques[i];
    for (int r = 0; r < k->count && !c->aborted; r++) c->nccl.comm_destroy(k->comms[r]);
    mem_free(k->ordinals);
    mem_free(k->comms);
  }
  mem_free(c->cliques);
  if (c->nccl.library) dlclose(c->nccl.library);
  mem_free(c);
}
