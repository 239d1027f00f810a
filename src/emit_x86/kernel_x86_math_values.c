/* The math builder's values (kernel_x86_math_builder.h), the bottom file
 * of the math builder: where each value lives. A value is a slot of the
 * kernel's math area (8 bytes in scalar mode, a vector's width in vector
 * mode); in vector mode it may have a register home instead (MathHomes:
 * the dry run records each instance's last use, the real run hands out
 * registers by linear scan). The builder's operations
 * (kernel_x86_math_builder.c) and their vector forms
 * (kernel_x86_math_lanes.c) both make and read values through this file,
 * which calls neither. */
#include "emit_x86/kernel_x86_math_builder.h"

#include <string.h>

void math_builder_begin(MathBuilder *b, KernelX86 *x) {
  b->x = x;
  b->width = 0;
  b->first_slot = 0;
  memset(b->lane_constant, 0, sizeof b->lane_constant);
  b->next_slot = 0;
  b->peak_slots = 0;
  b->homes = NULL;
  b->k1_mask = -1;
  b->compare_mask = -1;
}

void math_builder_begin_lanes(MathBuilder *b, KernelX86 *x, int width) {
  math_builder_begin(b, x);
  b->width = width;
}

/* The math area holds KX_MATH_SLOTS 8-byte slots; a SIMD kernel's holds
 * KX_VECTOR_MATH_SLOTS: vector slots in vector mode, and after them the
 * last KX_MATH_SLOTS for a nested scalar builder. */
enum { VECTOR_AREA_BYTES = 8 * (KX_VECTOR_MATH_SLOTS - KX_MATH_SLOTS) };

static int slot_capacity(const MathBuilder *b) { return b->width ? VECTOR_AREA_BYTES / b->width : KX_MATH_SLOTS; }

void math_builder_begin_nested(MathBuilder *nested, MathBuilder *b) {
  math_builder_begin(nested, b->x);
  nested->first_slot = VECTOR_AREA_BYTES / 8;
}

bool math_builder_end(MathBuilder *b) {
  if (b->x->st->code != STATUS_OK) return false;
  if (b->peak_slots <= slot_capacity(b)) return true;
  return status_error(b->x->st, STATUS_UNSUPPORTED, "kernel %s: a math function needs %d value slots, more than %d",
                      b->x->k->name, b->peak_slots, slot_capacity(b));
}

/* Past the area the slots alias the last one: the program's bits are
 * wrong, but math_builder_end reports it before the code runs. */
X86Operand math_slot_operand(const MathBuilder *b, MathValue v, int size) {
  int home = math_value_register(b, v);
  if (home >= 0 && size == b->width)
    return x86_reg(b->width == 64 ? x86_zmm(home) : b->width == 32 ? x86_ymm(home) : x86_xmm(home));
  int slot = v < slot_capacity(b) ? v : slot_capacity(b) - 1;
  if (b->width) return x86_mem(b->width, X86_RSP, 8 * b->x->math_slot + b->width * slot);
  return x86_mem(size, X86_RSP, 8 * (b->x->math_slot + b->first_slot + slot));
}

/* ---- register homes (MathHomes, kernel_x86_math_builder.h) ---- */

enum { HOME_SLOTS = sizeof ((MathHomes *)0)->slot_instance / sizeof(int) };

static MathHomes *homes_of(const MathBuilder *b, MathValue v) {
  return b->width && b->homes && v >= 0 && v < HOME_SLOTS ? b->homes : NULL;
}

/* Instance n (instance_count before it is made) takes slot v: in the dry
 * run, a last use at its making; in the real run, a free register (those
 * whose owner's last use came before n are free). */
static void homes_make(MathBuilder *b, MathValue v, bool may_have_register) {
  MathHomes *h = b->homes;
  if (!b->width || !h) return;
  if (v < 0 || v >= HOME_SLOTS) {
    h->needs_memory = true; /* past the table: keep every value in its slot */
    return;
  }
  int n = h->instance_count++;
  if (n >= h->instance_capacity) {
    int capacity = h->instance_capacity ? 2 * h->instance_capacity : 64;
    h->last_use = mem_realloc(h->last_use, (size_t)capacity * sizeof *h->last_use);
    h->home = mem_realloc(h->home, (size_t)capacity * sizeof *h->home);
    h->instance_capacity = capacity;
  }
  h->slot_instance[v] = n;
  if (!h->assigning) {
    h->last_use[n] = n + 1;
    h->home[n] = -1;
    return;
  }
  h->home[n] = -1;
  for (int r = 0; r < h->register_count; r++)
    if (h->owner[r] >= 0 && h->last_use[h->owner[r]] <= n) h->owner[r] = -1;
  for (int r = 0; r < h->register_count && may_have_register; r++) {
    if (h->owner[r] >= 0) continue;
    h->owner[r] = n;
    h->home[n] = h->registers[r];
    return;
  }
}

int math_value_register(const MathBuilder *b, MathValue v) {
  MathHomes *h = homes_of(b, v);
  if (!h) return -1;
  int n = h->slot_instance[v];
  if (n < 0 || n >= h->instance_count) return -1;
  if (!h->assigning) {
    if (h->last_use[n] < h->instance_count) h->last_use[n] = h->instance_count;
    return -1;
  }
  return h->home[n];
}

/* The real run: v has a register and the op being built (whose result
 * was made last) is its last use. */
bool math_value_dies_here(const MathBuilder *b, MathValue v) {
  MathHomes *h = homes_of(b, v);
  if (!h || !h->assigning) return false;
  int n = h->slot_instance[v];
  return n >= 0 && n < h->instance_count && h->home[n] >= 0 && h->last_use[n] == h->instance_count;
}

/* The real run: nothing reads v after the op that made it. */
bool math_value_unread(const MathBuilder *b, MathValue v) {
  MathHomes *h = homes_of(b, v);
  if (!h || !h->assigning) return false;
  int n = h->slot_instance[v];
  return n >= 0 && n < h->instance_count && h->last_use[n] == n + 1;
}

/* The position of register r among the homes' registers (owner's index). */
static int home_index(const MathHomes *h, int r) {
  int i = 0;
  while (i < h->register_count - 1 && h->registers[i] != r) i++;
  return i;
}

/* Result v (made last) takes the register of `from`, which dies at this
 * op (math_value_dies_here), so the op can write it in place; v's own
 * register, if it had one, is free again. Returns the register. */
int math_value_take_register(MathBuilder *b, MathValue v, MathValue from) {
  MathHomes *h = b->homes;
  int to = h->slot_instance[v], r = h->home[h->slot_instance[from]];
  if (h->home[to] >= 0) h->owner[home_index(h, h->home[to])] = -1;
  h->home[to] = (int8_t)r;
  h->owner[home_index(h, r)] = to;
  return r;
}

void math_value_renew(MathBuilder *b, MathValue v) {
  if (v == b->k1_mask) b->k1_mask = -1;
  if (v == b->compare_mask) b->compare_mask = -1;
  homes_make(b, v, true);
}

static MathValue value_new(MathBuilder *b, bool may_have_register) {
  if (b->next_slot + 1 > b->peak_slots) b->peak_slots = b->next_slot + 1;
  if (b->next_slot == b->k1_mask) b->k1_mask = -1; /* a new value in the mask's slot */
  if (b->next_slot == b->compare_mask) b->compare_mask = -1;
  homes_make(b, b->next_slot, may_have_register);
  return b->next_slot++;
}

MathValue math_value_new(MathBuilder *b) { return value_new(b, true); }
MathValue math_value_new_in_slot(MathBuilder *b) { return value_new(b, false); }

int math_scope_begin(const MathBuilder *b) { return b->next_slot; }
