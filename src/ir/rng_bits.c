/* The bits of rng-bit-generator: (new_state, random_bits) from a u64
 * state, bit for bit as XLA computes it. The evaluator (eval_rng.c) and the
 * CPU backend's runtime routine (src/emit_x86/cpu_control.c) both call
 * rng_bits_generate; the GPU's kernels (src/emit_ptx/ptx_rng.c) execute the
 * same RngBitsPlan (rng_bits.h), made here by rng_bits_plan_make.
 *
 * XLA runs this op through its RngBitGeneratorExpander, which builds the
 * generator from xla/hlo/builder/lib/prng.cc; the CPU and GPU compilers pick
 * Philox for algorithm=rng_default. What follows restates those two
 * generators:
 *
 *   rng_three_fry  state u64[2] = [key, counter]. Threefry-2x32, 20 rounds
 *                  (Salmon et al., "Parallel random numbers: as easy as 1,
 *                  2, 3", SC 2011), keyed by the two 32-bit halves of key,
 *                  enciphers the two halves (low first) of counter + i.
 *   rng_philox     state u64[3] = [key, counter_low, counter_high], or u64[2]
 *                  = [key, counter_low] with counter_high = key (XLA reverses
 *                  the state to read the 128-bit counter). Philox-4x32, 10
 *                  rounds, keyed by the halves of key, enciphers the four
 *                  32-bit words (least significant first) of counter + i.
 *
 * How blocks become elements, per output element width:
 *   32 bits  Threefry: the shape is split in two along one dimension (the
 *            first even one, else the first longest); output word 0 fills
 *            the even indices along it, word 1 the odd ones, and block i is
 *            element i of the half shape. Philox: element j is word j % 4 of
 *            block j / 4.
 *   64 bits  Threefry: block i gives element i, word 0 | word 1 << 32.
 *            Philox: element j is block j / 2, words 0,1 or 2,3 (j even/odd).
 *   8/16     the 32-bit elements of the same shape, truncated.
 * The counter then advances by the number of blocks used (a 128-bit add for
 * Philox). Float element types receive the same bits as the unsigned type of
 * their width. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ir/rng_bits.h"

/* ------------------------------------------------------- block ciphers */

static uint32_t rotate_left(uint32_t v, int distance) {
  return (v << distance) | (v >> (32 - distance));
}

/* Threefry-2x32 with 20 rounds: a key injection after every 4 rounds. */
static void threefry2x32(const uint32_t key[2], const uint32_t in[2], uint32_t out[2]) {
  static const int rotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  uint32_t x0 = in[0] + ks[0], x1 = in[1] + ks[1];
  for (int group = 0; group < 5; group++) {
    for (int r = 0; r < 4; r++) {
      x0 += x1;
      x1 = rotate_left(x1, rotations[(group % 2) * 4 + r]);
      x1 ^= x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + (uint32_t)(group + 1);
  }
  out[0] = x0;
  out[1] = x1;
}

/* Philox-4x32 with 10 rounds; the key is bumped by the Weyl constants
 * between rounds. */
static void philox4x32(const uint32_t key_in[2], const uint32_t in[4], uint32_t out[4]) {
  uint32_t key[2] = {key_in[0], key_in[1]};
  uint32_t x[4] = {in[0], in[1], in[2], in[3]};
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u, p1 = (uint64_t)x[2] * 0xCD9E8D57u;
    uint32_t y[4] = {(uint32_t)(p1 >> 32) ^ x[1] ^ key[0], (uint32_t)p1,
                     (uint32_t)(p0 >> 32) ^ x[3] ^ key[1], (uint32_t)p0};
    memcpy(x, y, sizeof x);
    key[0] += 0x9E3779B9u;
    key[1] += 0xBB67AE85u;
  }
  memcpy(out, x, sizeof x);
}

static void split_u64(uint64_t v, uint32_t out[2]) {
  out[0] = (uint32_t)v;
  out[1] = (uint32_t)(v >> 32);
}

/* ----------------------------------------------------------- Threefry */

/* Advances a row-major multi-index over dims. */
static void index_next(int64_t *index, const int64_t *dims, int rank) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++index[d] < dims[d]) return;
    index[d] = 0;
  }
}

static int64_t index_linear(const int64_t *index, const int64_t *strides, int rank) {
  int64_t at = 0;
  for (int d = 0; d < rank; d++) at += index[d] * strides[d];
  return at;
}

/* Fills bits[] (one u64 per element, 32 significant bits) and returns the
 * number of blocks used. A scalar is the first word of one block. */
static uint64_t threefry_bits32(const RngBitsPlan *p, uint64_t key, uint64_t counter, uint64_t *bits) {
  uint32_t k[2], in[2], out[2];
  split_u64(key, k);
  if (p->rank == 0) {
    split_u64(counter, in);
    threefry2x32(k, in, out);
    bits[0] = out[0];
    return 1;
  }
  int split = p->split;
  int64_t half[AXLE_MAX_RANK], half_strides[AXLE_MAX_RANK], index[AXLE_MAX_RANK] = {0};
  memcpy(half, p->dims, sizeof half);
  half[split] = (p->dims[split] + 1) / 2;
  Shape half_shape = shape_array(TYPE_U32, p->rank, half);
  shape_strides(&half_shape, half_strides);
  for (int64_t at = 0; at < p->count; at++, index_next(index, p->dims, p->rank)) {
    int64_t which = index[split] % 2, saved = index[split];
    index[split] /= 2;
    uint64_t block = (uint64_t)index_linear(index, half_strides, p->rank);
    index[split] = saved;
    split_u64(counter + block, in);
    threefry2x32(k, in, out);
    bits[at] = out[which];
  }
  return (uint64_t)p->blocks;
}

static uint64_t threefry_bits64(int64_t count, uint64_t key, uint64_t counter, uint64_t *bits) {
  uint32_t k[2], in[2], out[2];
  split_u64(key, k);
  for (int64_t i = 0; i < count; i++) {
    split_u64(counter + (uint64_t)i, in);
    threefry2x32(k, in, out);
    bits[i] = (uint64_t)out[0] | (uint64_t)out[1] << 32;
  }
  return (uint64_t)count;
}

/* ------------------------------------------------------------- Philox */

/* One block at the 128-bit counter (low, high) + block. */
static void philox_block(uint64_t key, uint64_t low, uint64_t high, uint64_t block,
                         uint32_t out[4]) {
  uint64_t sum = low + block;
  if (sum < low) high++;
  uint32_t k[2], in[4];
  split_u64(key, k);
  split_u64(sum, in);
  split_u64(high, in + 2);
  philox4x32(k, in, out);
}

/* Fills bits[] and returns the number of blocks used. */
uint64_t rng_philox_bits(int64_t count, int width, uint64_t key, uint64_t low, uint64_t high,
                            uint64_t *bits) {
  int per_block = width == 64 ? 2 : 4;
  uint64_t blocks = (uint64_t)((count + per_block - 1) / per_block);
  uint32_t out[4];
  for (int64_t j = 0; j < count; j++) {
    if (j % per_block == 0) philox_block(key, low, high, (uint64_t)(j / per_block), out);
    int w = (int)(j % per_block);
    bits[j] = width == 64 ? (uint64_t)out[2 * w] | (uint64_t)out[2 * w + 1] << 32 : out[w];
  }
  return blocks;
}

/* ------------------------------------------------------------ the plan */

RngAlgorithm rng_algorithm_resolve(RngAlgorithm algorithm) {
  return algorithm == RNG_DEFAULT ? RNG_PHILOX : algorithm;
}

bool rng_state_length_fits(RngAlgorithm algorithm, int64_t length) {
  return rng_algorithm_resolve(algorithm) == RNG_THREE_FRY ? length == 2 : length == 2 || length == 3;
}

/* The dimension XLA splits in two for 32-bit Threefry output
 * (SplitShapeIntoHalves): the first even one, else the first longest. */
static int threefry_split_dim(const Shape *s) {
  for (int d = 0; d < s->rank; d++)
    if (s->dims[d] % 2 == 0) return d;
  int best = 0;
  for (int d = 1; d < s->rank; d++)
    if (s->dims[d] > s->dims[best]) best = d;
  return best;
}

void rng_bits_plan_make(RngAlgorithm algorithm, const Shape *bits, int state_count, RngBitsPlan *p) {
  *p = (RngBitsPlan){.algorithm = rng_algorithm_resolve(algorithm), .state_count = state_count,
                     .width = type_bit_width(bits->type), .count = shape_element_count(bits), .rank = bits->rank};
  for (int d = 0; d < bits->rank; d++) p->dims[d] = bits->dims[d];
  p->split = bits->rank ? threefry_split_dim(bits) : 0;
  if (p->algorithm == RNG_PHILOX) {
    int per_block = p->width == 64 ? 2 : 4;
    p->blocks = (p->count + per_block - 1) / per_block;
  } else if (p->width == 64 || p->rank == 0) {
    p->blocks = p->width == 64 ? p->count : 1;
  } else {
    /* The half shape's elements. The split dimension may be 0 long (0 is
     * even), so this is a product, never a division by it. */
    p->blocks = 1;
    for (int d = 0; d < p->rank; d++) p->blocks *= d == p->split ? (p->dims[d] + 1) / 2 : p->dims[d];
  }
}

/* ------------------------------------------------------------- the op */

void rng_bits_generate(RngAlgorithm algorithm, const Shape *shape, const uint64_t *state, int state_count,
                       uint64_t *next, uint64_t *bits) {
  RngBitsPlan plan;
  rng_bits_plan_make(algorithm, shape, state_count, &plan);
  memcpy(next, state, sizeof *state * (size_t)state_count);
  if (plan.algorithm == RNG_THREE_FRY) {
    next[1] = state[1] + (plan.width == 64 ? threefry_bits64(plan.count, state[0], state[1], bits)
                                           : threefry_bits32(&plan, state[0], state[1], bits));
    return;
  }
  bool long_state = state_count == 3;
  uint64_t low = state[1], high = long_state ? state[2] : state[0];
  uint64_t blocks = rng_philox_bits(plan.count, plan.width, state[0], low, high, bits);
  next[1] = low + blocks;
  if (long_state) next[2] = high + (next[1] < low);
}

/* Integers truncate; floats take the bits of the unsigned type of their width. */
void rng_bits_store(void *data, ElementType t, int64_t i, uint64_t bits) {
  int size = type_byte_size(t);
  char *at = (char *)data + i * size;
  uint8_t b8 = (uint8_t)bits;
  uint16_t b16 = (uint16_t)bits;
  uint32_t b32 = (uint32_t)bits;
  switch (size) {
  case 1: memcpy(at, &b8, 1); break;
  case 2: memcpy(at, &b16, 2); break;
  case 4: memcpy(at, &b32, 4); break;
  default: memcpy(at, &bits, 8); break;
  }
}

/* ---- rng: the legacy op without a state operand ----
 *
 * XLA draws rng from a generator seeded once per module. axle keys Philox
 * with a fixed seed mixed with the instruction's name, so that a run is
 * reproducible and two rng instructions draw different numbers; the
 * evaluator and the CPU backend call this one function, so they agree. */
enum { RNG_LEGACY_SEED = 0x2545F4914F6CDD1Dull & 0x7fffffff };

static uint64_t rng_name_hash(const char *name) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (const char *p = name ? name : ""; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return h;
}

/* A double uniform in [0, 1) from 53 random bits. */
static double unit_interval(uint64_t bits) { return (double)(bits >> 11) * 0x1p-53; }

void rng_values_fill(const Instruction *inst, const Literal *a_lit, const Literal *b_lit, Literal *out) {
  const ScalarAttrs *sa = attrs_scalars(&inst->attrs);
  ElementType t = out->shape.type;
  int64_t count = shape_element_count(&out->shape);
  uint64_t *bits = mem_calloc((size_t)(2 * count + 1), sizeof *bits);
  rng_philox_bits(2 * count, 64, RNG_LEGACY_SEED ^ rng_name_hash(inst->name), 0, 0, bits);
  for (int64_t i = 0; i < count; i++) {
    if (!type_is_float(t)) {
      int64_t a = literal_get_s64(a_lit, 0), b = literal_get_s64(b_lit, 0);
      uint64_t span = b > a ? (uint64_t)b - (uint64_t)a : 0;
      literal_set_s64(out, i, span ? (int64_t)((uint64_t)a + bits[2 * i] % span) : a);
      continue;
    }
    double a = literal_get_f64(a_lit, 0), b = literal_get_f64(b_lit, 0), v;
    if (sa->distribution == RNG_NORMAL) {
      double u1 = 1.0 - unit_interval(bits[2 * i]), u2 = unit_interval(bits[2 * i + 1]);
      v = a + b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    } else {
      v = b > a ? a + (b - a) * unit_interval(bits[2 * i]) : a;
    }
    literal_set_f64(out, i, v);
    /* rounding to a narrower type can reach b; [a, b) stays half-open */
    if (sa->distribution == RNG_UNIFORM && b > a && literal_get_f64(out, i) >= b) literal_set_f64(out, i, a);
  }
  mem_free(bits);
}
