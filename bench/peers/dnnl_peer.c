/* make bench's oneDNN peer, called as a C user calls it:
 *
 *   dnnl_peer sgemm M K N RUNS        dnnl_sgemm, row-major f32:
 *                                     prints "dnnl_sgemm MS"
 *   dnnl_peer conv N C H W O RUNS     the convolution primitive, 3x3,
 *                                     stride 1, padding 1, f32, inference:
 *                                     prints "onednn.conv.nchw MS" (plain
 *                                     NCHW/OIHW, the layout axle's module
 *                                     uses) and "onednn.conv.best MS" (the
 *                                     layouts it picks for itself,
 *                                     format_tag any, the inputs already
 *                                     reordered into them)
 *
 * Each figure is the median of RUNS calls after a warm-up. Built by `make
 * bench` only where dnnl.h exists (make bench-deps); the convolution uses
 * oneDNN 2's C API (Debian 12 ships 2.6) and says so on oneDNN 3. */
#include <dnnl.h>
#include <stdbool.h>
#include <string.h>

#include "peer_timing.h"

static const char usage[] = "dnnl_peer sgemm M K N RUNS | dnnl_peer conv N C H W O RUNS";

typedef struct Gemm {
  dnnl_dim_t m, k, n;
  const float *a, *b;
  float *c;
} Gemm;

static void gemm_call(void *ctx) {
  const Gemm *g = ctx;
  dnnl_sgemm('N', 'N', g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n, 0.0f, g->c, g->n);
}

static int run_sgemm(char **argv) {
  Gemm g = {peer_count(argv[0], usage), peer_count(argv[1], usage), peer_count(argv[2], usage), NULL, NULL, NULL};
  int runs = (int)peer_count(argv[3], usage);
  float *a = peer_random_floats((size_t)(g.m * g.k)), *b = peer_random_floats((size_t)(g.k * g.n));
  g.a = a, g.b = b, g.c = peer_random_floats((size_t)(g.m * g.n));
  printf("dnnl_sgemm %.4f\n", peer_median_ms(gemm_call, &g, runs));
  free(a), free(b), free(g.c);
  return 0;
}

#if DNNL_VERSION_MAJOR < 3
#define CHECK(call)                                                          \
  do {                                                                       \
    dnnl_status_t s_ = (call);                                               \
    if (s_ != dnnl_success) {                                                \
      fprintf(stderr, "error: %s failed with oneDNN status %d\n", #call, s_); \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

typedef struct Conv {
  dnnl_primitive_t prim;
  dnnl_stream_t stream;
  dnnl_exec_arg_t args[3];
} Conv;

static void conv_call(void *ctx) {
  Conv *c = ctx;
  CHECK(dnnl_primitive_execute(c->prim, c->stream, 3, c->args));
  CHECK(dnnl_stream_wait(c->stream));
}

/* A memory object in the primitive's chosen layout for what, filled with
 * random values (the layout does not matter to the time). */
static dnnl_memory_t conv_memory(const_dnnl_primitive_desc_t pd, dnnl_query_t what, dnnl_engine_t engine) {
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, what, 0);
  dnnl_memory_t mem;
  CHECK(dnnl_memory_create(&mem, md, engine, DNNL_MEMORY_ALLOCATE));
  void *data;
  CHECK(dnnl_memory_get_data_handle(mem, &data));
  size_t count = dnnl_memory_desc_get_size(md) / sizeof(float);
  float *random = peer_random_floats(count);
  memcpy(data, random, count * sizeof(float));
  free(random);
  return mem;
}

/* The convolution with plain layouts (tags nchw/oihw) or the primitive's
 * own (tag any): median ms. */
static double conv_time(dnnl_engine_t engine, dnnl_stream_t stream, const dnnl_dim_t *shape, bool plain, int runs) {
  dnnl_dim_t n = shape[0], ci = shape[1], h = shape[2], w = shape[3], co = shape[4];
  dnnl_dims_t src_dims = {n, ci, h, w}, weight_dims = {co, ci, 3, 3}, dst_dims = {n, co, h, w};
  dnnl_dims_t strides = {1, 1}, padding = {1, 1};
  dnnl_memory_desc_t src_md, weight_md, dst_md;
  CHECK(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, plain ? dnnl_nchw : dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&weight_md, 4, weight_dims, dnnl_f32, plain ? dnnl_oihw : dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_f32, plain ? dnnl_nchw : dnnl_format_tag_any));
  dnnl_convolution_desc_t desc;
  CHECK(dnnl_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct, &src_md,
                                           &weight_md, NULL, &dst_md, strides, padding, padding));
  dnnl_primitive_desc_t pd;
  CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, engine, NULL));
  Conv c = {.stream = stream};
  CHECK(dnnl_primitive_create(&c.prim, pd));
  c.args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, conv_memory(pd, dnnl_query_src_md, engine)};
  c.args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, conv_memory(pd, dnnl_query_weights_md, engine)};
  c.args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, conv_memory(pd, dnnl_query_dst_md, engine)};
  double ms = peer_median_ms(conv_call, &c, runs);
  for (int i = 0; i < 3; i++) dnnl_memory_destroy(c.args[i].memory);
  dnnl_primitive_destroy(c.prim);
  dnnl_primitive_desc_destroy(pd);
  return ms;
}

static int run_conv(char **argv) {
  dnnl_dim_t shape[5];
  for (int i = 0; i < 5; i++) shape[i] = peer_count(argv[i], usage);
  int runs = (int)peer_count(argv[5], usage);
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  CHECK(dnnl_engine_create(&engine, dnnl_cpu, 0));
  CHECK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
  printf("onednn.conv.nchw %.4f\n", conv_time(engine, stream, shape, true, runs));
  printf("onednn.conv.best %.4f\n", conv_time(engine, stream, shape, false, runs));
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(engine);
  return 0;
}
#else
static int run_conv(char **argv) {
  (void)argv;
  fprintf(stderr, "error: dnnl_peer's convolution is written for oneDNN 2's C API; this is oneDNN %d\n",
          DNNL_VERSION_MAJOR);
  return 1;
}
#endif

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "sgemm") == 0) return run_sgemm(argv + 2);
  if (argc == 8 && strcmp(argv[1], "conv") == 0) return run_conv(argv + 2);
  fprintf(stderr, "usage: %s\n", usage);
  return 2;
}
