/* What simplify.c (the rewrite rules on one instruction and the driver) and
 * simplify_control.c (the rules on calls, conditionals and while loops)
 * share. Not part of src/opt's interface: opt.h lists the pass itself. */
#ifndef AXLE_OPT_SIMPLIFY_INTERNAL_H
#define AXLE_OPT_SIMPLIFY_INTERNAL_H

#include "opt/opt.h"

/* A rewrite rule: returns the instruction that should replace inst (an
 * existing one, or one it appended to inst's computation), or NULL when the
 * rule does not apply. It never edits inst's users itself; the driver
 * redirects them and sorts the computation afterwards. */
typedef Instruction *RewriteRule(Instruction *inst);

/* Same type, dims and layout, packing included (tuples element by
 * element). An instruction is only ever replaced by one with an identical
 * shape, so that a layout a user depends on (bitcast reads bytes in layout
 * order) stays the same. */

/* simplify_control.c */
RewriteRule simplify_rule_call_inline;
RewriteRule simplify_rule_conditional_known_branch;
/* While loops are rewritten whole (a new loop replaces the old); returns
 * whether anything changed in c. */
bool computation_simplify_loops(Computation *c);

#endif
