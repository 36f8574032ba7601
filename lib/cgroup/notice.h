/* What kern tells the user about caps (isolation.md §7.4, §7.7): the
 * --require-limits refusal and the `kern: warning:` notices. */
#ifndef KERN_CG_NOTICE_H
#define KERN_CG_NOTICE_H

#include "cgroup/box.h"

/* The refusal line of isolation.md §7.4 and its hint. */
void cg_refuse_uncapped(void);
/* The notices for a box just created (callers skip this under
 * --allow-uncapped; warning() itself honours KERN_QUIET). */
void cg_notices(const struct cg_box *cg, const struct cg_limits *req);

#endif
