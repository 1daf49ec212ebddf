/*
 * verdict.h (private to fuse/): the verdict rule, shared by the check of a
 * site (site.c, numerics.c) and of each tactic and bucket (gpu.c,
 * buckets.c).
 */
#ifndef FUSESCAN_VERDICT_H
#define FUSESCAN_VERDICT_H

#include <stddef.h>

#include "fusescan/site_types.h"

/* One plan's check: fused errors within k x the unfused chain's + tol, no
 * NaN / Inf or unwritten element; c says the verdict, the smallest
 * tolerance that passes and why it fails. */
void fs_verdict_check(const struct fs_rule *rule, const struct fs_errors *unfused, const struct fs_errors *fused, struct fs_check *c);
/* r->verdict and r->why from every check the run made (the worst plan),
 * copied from the first failure's diagnostic (file: the dump's). */
void fs_verdict_settle(struct fs_site_result *r, const char *file);
/* After --emit: an op that could not be emitted makes a verdict that is not
 * a failure `refused`, the reason in r->why (never pass beside it). */
void fs_verdict_emit(struct fs_site_result *r);
/* A tactic's outputs against the unfused chain's, by fs_verdict_check (ctx:
 * the struct fs_rule): 0, or -1 with why (fs_gpu_opts' check). */
int fs_verdict_check_tactic(void *ctx, const struct fs_errors *unfused, const struct fs_errors *fused, char *why, size_t n);

#endif
