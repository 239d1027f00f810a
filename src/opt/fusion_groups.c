/* The groups of the fusion pass, and the questions about them that both
 * halves of the pass ask: fusion.c while it decides which instructions
 * fuse, fusion_build.c while it turns each group into a fusion. They live
 * here, below both, so that each half can be read on its own. */
#include <string.h>

#include "opt/fusion_internal.h"

/* ------------------------------------------------------------ small sets */

void fusion_intvec_push(IntVec *v, int x) {
  if (v->count == v->capacity) {
    v->capacity = v->capacity ? 2 * v->capacity : 8;
    v->items = mem_realloc(v->items, sizeof *v->items * (size_t)v->capacity);
  }
  v->items[v->count++] = x;
}

void fusion_intvec_free(IntVec *v) {
  mem_free(v->items);
  *v = (IntVec){0};
}

bool fusion_intvec_contains(const IntVec *v, int x) {
  for (int i = 0; i < v->count; i++)
    if (v->items[i] == x) return true;
  return false;
}

/* ----------------------------------------------------- group membership */

bool fusion_group_contains(const Fuser *f, int group, int inst) {
  return fusion_intvec_contains(&f->groups_of[inst], group);
}

/* The index of inst in the pass's snapshot, or -1 for an instruction made
 * during the pass. */
int fuser_inst_id(const Fuser *f, const Instruction *inst) {
  int i = inst->index;
  return i >= 0 && i < f->n && f->insts[i] == inst ? i : -1;
}

bool fuser_in_candidate_group(const Fuser *f, int g) {
  for (int k = 0; k < f->cand_group_count; k++)
    if (f->cand_groups[k] == g) return true;
  return false;
}

bool fuser_is_output(const Fuser *f, int i) {
  const Instruction *inst = f->insts[i];
  if (inst == f->comp->root) return true;
  for (int k = 0; k < inst->user_count; k++) {
    int u = fuser_inst_id(f, inst->users[k]);
    if (u < 0) return true;
    if (f->groups_of[u].count == 0 && f->cand_mark[u] != f->cand_stamp) return true;
    /* A user also copied into another group reads memory there unless
     * that group computes its own copy of inst. */
    for (int g = 0; g < f->groups_of[u].count; g++) {
      int group = f->groups_of[u].items[g];
      if (!fuser_in_candidate_group(f, group) && !fusion_group_contains(f, group, i)) return true;
    }
  }
  return false;
}

void fuser_mark_group(Fuser *f, int g) {
  f->cand_stamp++;
  f->cand_groups[0] = g;
  f->cand_group_count = 1;
  const IntVec *members = &f->groups[g].members;
  for (int k = 0; k < members->count; k++) f->cand_mark[members->items[k]] = f->cand_stamp;
}
