/* The kernels of the GPU's rng-bit-generator (gpu_rng.c drives them):
 * Threefry-2x32 and Philox-4x32 unrolled into PTX, transcribed from
 * src/ir/rng_bits.c operation for operation (32-bit wrapping adds,
 * rotates as shl/shr/or, 32x32->64 products split in halves), so each element gets the
 * evaluator's bits. Every element is computed by its own thread from its
 * block number alone, so the kernel is a plain grid-stride loop; a second,
 * one-thread kernel writes the advanced state after it (the state may be
 * updated in place, and every thread of the first reads it). */
#include "emit_ptx/ptx_rng.h"
#include "emit_ptx/ptx_sort.h"

static PtxReg u32_new(PtxBuilder *b) { return ptx_reg_new(b, PTX_U32); }

/* x = rotl(x, distance) */
static void rotate_left(PtxBuilder *b, PtxReg x, int distance) {
  PtxReg high = u32_new(b), low = u32_new(b);
  ptx_inst(b, "shl.b32 $r, $r, $d", high, x, distance);
  ptx_inst(b, "shr.b32 $r, $r, $d", low, x, 32 - distance);
  ptx_inst(b, "or.b32 $r, $r, $r", x, high, low);
}

/* Threefry-2x32, 20 rounds, in place on x[0..1] with key k[0..1]. */
static void threefry(PtxBuilder *b, const PtxReg *k, PtxReg *x) {
  static const int rotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  PtxReg ks[3] = {k[0], k[1], u32_new(b)};
  ptx_inst(b, "xor.b32 $r, $r, $r", ks[2], k[0], k[1]);
  ptx_inst(b, "xor.b32 $r, $r, 0x1BD11BDA", ks[2], ks[2]);
  ptx_inst(b, "add.u32 $r, $r, $r", x[0], x[0], ks[0]);
  ptx_inst(b, "add.u32 $r, $r, $r", x[1], x[1], ks[1]);
  for (int group = 0; group < 5; group++) {
    for (int r = 0; r < 4; r++) {
      ptx_inst(b, "add.u32 $r, $r, $r", x[0], x[0], x[1]);
      rotate_left(b, x[1], rotations[(group % 2) * 4 + r]);
      ptx_inst(b, "xor.b32 $r, $r, $r", x[1], x[1], x[0]);
    }
    ptx_inst(b, "add.u32 $r, $r, $r", x[0], x[0], ks[(group + 1) % 3]);
    ptx_inst(b, "add.u32 $r, $r, $r", x[1], x[1], ks[(group + 2) % 3]);
    ptx_inst(b, "add.u32 $r, $r, $d", x[1], x[1], group + 1);
  }
}

/* Philox-4x32, 10 rounds, in place on x[0..3] with key k[0..1] (copied). */
static void philox(PtxBuilder *b, const PtxReg *k_in, PtxReg *x) {
  PtxReg k[2] = {u32_new(b), u32_new(b)};
  ptx_inst(b, "mov.b32 $r, $r", k[0], k_in[0]);
  ptx_inst(b, "mov.b32 $r, $r", k[1], k_in[1]);
  for (int round = 0; round < 10; round++) {
    PtxReg hi0 = u32_new(b), lo0 = u32_new(b), hi1 = u32_new(b), lo1 = u32_new(b);
    PtxReg p0 = ptx_reg_new(b, PTX_U64), p1 = ptx_reg_new(b, PTX_U64);
    ptx_inst(b, "mul.wide.u32 $r, $r, 0xD2511F53", p0, x[0]);
    ptx_inst(b, "mul.wide.u32 $r, $r, 0xCD9E8D57", p1, x[2]);
    ptx_inst(b, "mov.b64 {$r, $r}, $r", lo0, hi0, p0);
    ptx_inst(b, "mov.b64 {$r, $r}, $r", lo1, hi1, p1);
    ptx_inst(b, "xor.b32 $r, $r, $r", hi1, hi1, x[1]);
    ptx_inst(b, "xor.b32 $r, $r, $r", x[0], hi1, k[0]);
    ptx_inst(b, "mov.b32 $r, $r", x[1], lo1);
    ptx_inst(b, "xor.b32 $r, $r, $r", hi0, hi0, x[3]);
    ptx_inst(b, "xor.b32 $r, $r, $r", x[2], hi0, k[1]);
    ptx_inst(b, "mov.b32 $r, $r", x[3], lo0);
    ptx_inst(b, "add.u32 $r, $r, 0x9E3779B9", k[0], k[0]);
    ptx_inst(b, "add.u32 $r, $r, 0xBB67AE85", k[1], k[1]);
  }
}

static void split_u64(PtxBuilder *b, PtxReg v, PtxReg *out) {
  out[0] = u32_new(b);
  out[1] = u32_new(b);
  ptx_inst(b, "mov.b64 {$r, $r}, $r", out[0], out[1], v);
}

static PtxReg state_word(PtxBuilder *b, PtxReg state, int word) {
  PtxReg v = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "ld.global.u64 $r, [$r+$d]", v, state, 8 * word);
  return v;
}

/* Threefry's block for element i of a 32-bit output, and which word: the
 * shape split in two along plan->split (even indices word 0). */
static PtxReg threefry_block32(PtxBuilder *b, const RngBitsPlan *p, PtxReg i, PtxReg *which) {
  PtxReg index[AXLE_MAX_RANK], rest = i;
  for (int d = p->rank - 1; d >= 0; d--) {
    PtxReg q;
    ptx_sort_divide(b, rest, p->dims[d], &q, &index[d]);
    rest = q;
  }
  *which = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "and.b64 $r, $r, 1", *which, index[p->split]);
  PtxReg half = ptx_reg_new(b, PTX_U64), block = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "shr.u64 $r, $r, 1", half, index[p->split]);
  index[p->split] = half;
  ptx_inst(b, "mov.u64 $r, 0", block);
  for (int d = 0; d < p->rank; d++) {
    int64_t extent = d == p->split ? (p->dims[d] + 1) / 2 : p->dims[d];
    ptx_inst(b, "mad.lo.u64 $r, $r, $D, $r", block, block, extent, index[d]);
  }
  return block;
}

/* The element's 64 bits (32-bit outputs use the low word). */
static PtxReg threefry_bits(PtxBuilder *b, const RngBitsPlan *p, PtxReg state, PtxReg i) {
  PtxReg key[2], x[2], which = {PTX_REG_B64, -1}, block = i;
  split_u64(b, state_word(b, state, 0), key);
  if (p->width != 64 && p->rank > 0) block = threefry_block32(b, p, i, &which);
  PtxReg counter = ptx_reg_new(b, PTX_U64);
  ptx_inst(b, "add.u64 $r, $r, $r", counter, state_word(b, state, 1), block);
  split_u64(b, counter, x);
  threefry(b, key, x);
  PtxReg bits = ptx_reg_new(b, PTX_U64);
  if (p->width == 64) {
    ptx_inst(b, "mov.b64 $r, {$r, $r}", bits, x[0], x[1]);
  } else {
    PtxReg word = u32_new(b), odd = ptx_reg_new(b, PTX_PRED);
    if (which.index >= 0) ptx_inst(b, "setp.ne.u64 $r, $r, 0", odd, which);
    else ptx_inst(b, "setp.ne.u64 $r, $r, $r", odd, i, i);   /* a scalar: word 0 */
    ptx_inst(b, "selp.b32 $r, $r, $r, $r", word, x[1], x[0], odd);
    ptx_inst(b, "cvt.u64.u32 $r, $r", bits, word);
  }
  return bits;
}

/* Philox: element j is word j % per_block of block j / per_block, at the
 * 128-bit counter (low, high) + block. */
static PtxReg philox_bits(PtxBuilder *b, const RngBitsPlan *p, PtxReg state, PtxReg j) {
  int per_block = p->width == 64 ? 2 : 4;
  PtxReg key[2], x[4], block, w;
  split_u64(b, state_word(b, state, 0), key);
  PtxReg low = state_word(b, state, 1), high = state_word(b, state, p->state_count == 3 ? 2 : 0);
  ptx_sort_divide(b, j, per_block, &block, &w);
  PtxReg sum = ptx_reg_new(b, PTX_U64), carry = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "add.u64 $r, $r, $r", sum, low, block);
  ptx_inst(b, "setp.lt.u64 $r, $r, $r", carry, sum, low);
  ptx_inst(b, "@$r add.u64 $r, $r, 1", carry, high, high);
  split_u64(b, sum, x);
  split_u64(b, high, x + 2);
  philox(b, key, x);
  PtxReg bits = ptx_reg_new(b, PTX_U64), p1 = ptx_reg_new(b, PTX_PRED);
  if (p->width == 64) {
    PtxReg lo = u32_new(b), hi = u32_new(b);
    ptx_inst(b, "setp.ne.u64 $r, $r, 0", p1, w);
    ptx_inst(b, "selp.b32 $r, $r, $r, $r", lo, x[2], x[0], p1);
    ptx_inst(b, "selp.b32 $r, $r, $r, $r", hi, x[3], x[1], p1);
    ptx_inst(b, "mov.b64 $r, {$r, $r}", bits, lo, hi);
  } else {
    PtxReg word = u32_new(b);
    ptx_inst(b, "mov.b32 $r, $r", word, x[0]);
    for (int k = 1; k < 4; k++) {
      ptx_inst(b, "setp.eq.u64 $r, $r, $d", p1, w, k);
      ptx_inst(b, "@$r mov.b32 $r, $r", p1, word, x[k]);
    }
    ptx_inst(b, "cvt.u64.u32 $r, $r", bits, word);
  }
  return bits;
}

/* The low `bytes` of bits stored at address. */
static void bits_store(PtxBuilder *b, int bytes, PtxReg address, PtxReg bits) {
  if (bytes == 8) {
    ptx_inst(b, "st.global.u64 [$r], $r", address, bits);
    return;
  }
  PtxReg word = u32_new(b);
  ptx_inst(b, "cvt.u32.u64 $r, $r", word, bits);
  if (bytes == 4) {
    ptx_inst(b, "st.global.u32 [$r], $r", address, word);
    return;
  }
  PtxReg half = ptx_reg_new(b, PTX_U16);
  ptx_inst(b, "cvt.u16.u32 $r, $r", half, word);
  ptx_inst(b, bytes == 2 ? "st.global.u16 [$r], $r" : "st.global.u8 [$r], $r", address, half);
}

void ptx_rng_emit_bits(PtxBuilder *b, const char *name, const RngBitsPlan *p) {
  ptx_kernel_begin(b, name, p->algorithm == RNG_THREE_FRY ? "rng-bit-generator: Threefry-2x32 bits"
                                                          : "rng-bit-generator: Philox-4x32 bits");
  ptx_kernel_param(b, PTX_U64, "state");
  ptx_kernel_param(b, PTX_U64, "bits");
  ptx_kernel_set_max_threads(b, 256);
  PtxReg state = ptx_param_load_global_pointer(b, "state"), out = ptx_param_load_global_pointer(b, "bits");
  PtxSortLoop l = ptx_sort_loop_open(b, p->count);
  PtxReg bits = p->algorithm == RNG_THREE_FRY ? threefry_bits(b, p, state, l.i) : philox_bits(b, p, state, l.i);
  bits_store(b, p->width / 8, ptx_element_address(b, out, l.i, p->width / 8), bits);
  ptx_sort_loop_close(b, &l);
  ptx_kernel_end(b);
}

void ptx_rng_emit_state(PtxBuilder *b, const char *name, const RngBitsPlan *p) {
  ptx_kernel_begin(b, name, "rng-bit-generator: the state advanced by the blocks used");
  ptx_kernel_param(b, PTX_U64, "state");
  ptx_kernel_param(b, PTX_U64, "next");
  ptx_kernel_set_max_threads(b, 1);
  PtxReg state = ptx_param_load_global_pointer(b, "state"), next = ptx_param_load_global_pointer(b, "next");
  PtxReg words[3];
  for (int w = 0; w < p->state_count; w++) words[w] = state_word(b, state, w);
  PtxReg low = ptx_reg_new(b, PTX_U64), carry = ptx_reg_new(b, PTX_PRED);
  ptx_inst(b, "add.u64 $r, $r, $D", low, words[1], p->blocks);
  ptx_inst(b, "setp.lt.u64 $r, $r, $r", carry, low, words[1]);
  if (p->state_count == 3 && p->algorithm == RNG_PHILOX) ptx_inst(b, "@$r add.u64 $r, $r, 1", carry, words[2], words[2]);
  words[1] = low;
  for (int w = 0; w < p->state_count; w++) ptx_inst(b, "st.global.u64 [$r+$d], $r", next, 8 * w, words[w]);
  ptx_inst(b, "ret");
  ptx_kernel_end(b);
}
