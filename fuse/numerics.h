/*
 * numerics.h (private to fuse/): the CPU stage of a site's check
 * (fusescan/site_types.h): its program executed three ways (four with triage) on
 * the CPU in float64 values, while they fit the budget.
 */
#ifndef FUSESCAN_FUSE_NUMERICS_H
#define FUSESCAN_FUSE_NUMERICS_H

#include "fusescan/site_types.h"
#include "prog.h"

/* the CPU executions' values where a GPU will check larger ones (a few seconds) */
enum { FS_CPU_ELEMS = 1 << 25 };

/* What the CPU stage is asked. */
struct fs_cpu_plan {
	int64_t tokens;         /* said in the progress line */
	uint64_t seed;          /* the random inputs (rand.h), as the GPU draws them */
	int triage;             /* also the execution with per-op rounding emulated */
	int64_t max_bytes;      /* the executions' memory (0: FS_CPU_BYTES) */
	int gpu_will_check;     /* a GPU runs the kernels: values past FS_CPU_ELEMS are left to it */
	const struct fs_rule *rule;
	const struct fs_progress *progress;
};

/* Each execution's values (mode REF, UNFUSED, FUSED, EMULATED), per value of
 * the program; NULL where it did not run. */
struct fs_cpu_values {
	struct ten *v[4];
};

/* Draws p's inputs and runs the executions where they fit (else c->skipped
 * says why), then judges them by pl->rule. 0, or -1 when a view does not
 * fit its input. v is released with fs_numerics_values_release. */
int fs_numerics_cpu(struct prog *p, const struct fs_cpu_plan *pl, struct fs_cpu_result *c, struct fs_cpu_values *v);
void fs_numerics_values_release(const struct prog *p, struct fs_cpu_values *v);

#endif
