/* What fusion.c (deciding which instructions fuse) and fusion_build.c
 * (turning each decision into a fused computation and a fusion
 * instruction) share: the groups of one computation, and the questions
 * about them (fusion_groups.c).
 *
 * A group is the set of instructions that will become one fusion. An
 * instruction may belong to several groups when it is cheap enough to be
 * computed again in each (a broadcast read by two kernels); such a
 * duplicated instruction is never also written to memory. An instruction
 * in exactly one group is written to memory (is an output of the group)
 * when something outside that group reads it.
 */
#ifndef AXLE_OPT_FUSION_INTERNAL_H
#define AXLE_OPT_FUSION_INTERNAL_H

#include "opt/opt.h"

typedef struct IntVec {
  int *items;
  int count, capacity;
} IntVec;

typedef struct FusionGroup {
  IntVec members;        /* instruction indices, ascending */
  bool merged;           /* merged into another group: empty, ignored */
} FusionGroup;

/* The groups of one computation. Instructions are named by their index at
 * the start of the pass (insts[i]); fusion_build.c only appends until it
 * removes the fused originals at the very end, so the indices hold. */
typedef struct Fuser {
  Module *module;
  Computation *comp;
  int n;                 /* instructions when the pass started */
  Instruction **insts;   /* a copy of comp->instructions[0..n) */
  IntVec *groups_of;     /* per instruction: the groups holding it */
  FusionGroup *groups;
  int group_count, group_capacity;
  /* Scratch, indexed by instruction: stamps say "in the current candidate"
   * or "visited" without clearing an array per question. */
  int *cand_mark, cand_stamp;
  int cand_groups[2], cand_group_count;  /* the groups the candidate unites */
  int *seen_mark, seen_stamp;
  int *group_seen, group_seen_stamp;
  unsigned char *late, *replicated;
  unsigned char *copy_depth;  /* per instruction: 0, or how deep a chain of copies it ends */
  int64_t work_left;     /* see FUSION_WORK_PER_INSTRUCTION */
  int *stack;
} Fuser;

void fusion_intvec_push(IntVec *v, int x);
void fusion_intvec_free(IntVec *v);
bool fusion_intvec_contains(const IntVec *v, int x);
/* The index of inst in the pass's snapshot, or -1 for an instruction made
 * during the pass. */
int fuser_inst_id(const Fuser *f, const Instruction *inst);
bool fusion_group_contains(const Fuser *f, int group, int inst);
/* True when group g is one of the groups the current candidate unites. */
bool fuser_in_candidate_group(const Fuser *f, int g);
/* True when inst is read from memory by someone the current candidate
 * (the instructions with cand_mark == cand_stamp, made of the groups in
 * cand_groups) does not cover: it is then an output of the fusion the
 * candidate becomes. */
bool fuser_is_output(const Fuser *f, int inst);
/* Marks the members of group g as the current candidate. */
void fuser_mark_group(Fuser *f, int g);

/* fusion_build.c: replaces every live group of f by a fusion instruction
 * and removes the originals; returns how many fusions it made. */
int fusion_groups_build(Fuser *f);

#endif
