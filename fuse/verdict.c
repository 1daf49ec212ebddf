/*
 * verdict.c: the rule that judges a region's check (verdict.h): a plan's
 * errors against the unfused chain's, the one verdict over every plan the
 * run would use, and a tactic's check by the same rule.
 */
#include "verdict.h"

#include <stdio.h>

void fs_verdict_check(const struct fs_numerics *r, const struct fs_errors *unfused, const struct fs_errors *fused, struct fs_check *c)
{
	double bound = r->k * unfused->max_abs + r->tol;
	c->min_tol = fused->max_abs > r->k * unfused->max_abs ? fused->max_abs - r->k * unfused->max_abs : 0;
	c->verdict = fused->nonfinite || fused->unwritten || fused->max_abs > bound ? FS_VERDICT_FAIL : FS_VERDICT_PASS;
	c->why[0] = '\0';
	if (fused->nonfinite || fused->unwritten)
		snprintf(c->why, sizeof(c->why), "%llu NaN / Inf or unwritten elements in the fused result",
			 (unsigned long long)(fused->nonfinite + fused->unwritten));
	else if (c->verdict == FS_VERDICT_FAIL)
		snprintf(c->why, sizeof(c->why), "fused max abs error %.3g > %.0f x unfused %.3g + %.0e", fused->max_abs, r->k,
			 unfused->max_abs, r->tol);
}

/* The one rule: the verdict is the worst check of every plan the run would
 * use, each failure named once (the first found: the run's own checks, a
 * compile or GPU error, the GPU reference against the CPU's, the plans
 * fs_gpu_run found failing, then each bucket's); where every plan
 * passes, a fused plan slower than the unfused chain at the run's own size
 * (side by side, the speedup's interval wholly below 1) is correct but not
 * profitable. */
void fs_verdict_settle(struct fs_numerics *r)
{
	const struct fs_check *c = r->cpu_ran && r->cpu_check.verdict == FS_VERDICT_FAIL ? &r->cpu_check
				 : r->gpu_ran && r->gpu_check.verdict == FS_VERDICT_FAIL ? &r->gpu_check
											  : NULL;
	r->verdict = FS_VERDICT_FAIL;
	if (c) {
		snprintf(r->why, sizeof(r->why), "%s check: %s", c == &r->cpu_check ? "the CPU" : "the GPU", c->why);
		return;
	}
	if (r->gpu_failed) {
		snprintf(r->why, sizeof(r->why), "the kernels' compile or GPU run failed: %.250s", r->kernel_error);
		return;
	}
	/* the reference kernel is generated like the fused one: the CPU's float64 reference is the independent check of it */
	if (r->ref_checked && (r->ref_vs_cpu.nonfinite || r->ref_vs_cpu.unwritten || r->ref_vs_cpu.nrmse > 1e-9)) {
		snprintf(r->why, sizeof(r->why), "the GPU's float64 reference disagrees with the CPU's (nrmse %.3g, %llu non-finite or unwritten)",
			 r->ref_vs_cpu.nrmse, (unsigned long long)(r->ref_vs_cpu.nonfinite + r->ref_vs_cpu.unwritten));
		return;
	}
	if (r->plan_failed[0]) {
		snprintf(r->why, sizeof(r->why), "%s", r->plan_failed);
		return;
	}
	for (uint32_t i = 0; i < r->n_buckets; i++)
		if ((r->buckets[i].tuned && !r->buckets[i].passed) || r->buckets[i].run_failed) {
			snprintf(r->why, sizeof(r->why), "the bucket of %lld tokens: %.250s", (long long)r->buckets[i].tokens, r->buckets[i].error);
			return;
		}
	r->verdict = FS_VERDICT_PASS;
	r->why[0] = '\0';
	if (r->gpu_ran && r->speedup_hi < 1.0) {
		r->verdict = FS_VERDICT_NOT_PROFITABLE;
		snprintf(r->why, sizeof(r->why), "the fused plan is slower than the unfused chain here: %.4f against %.4f ms, speedup %.3fx "
						 "[%.3f, %.3f]%s",
			 r->fused_ms, r->unfused_ms, r->speedup, r->speedup_lo, r->speedup_hi, r->timed_apart ? " (timed apart)" : "");
	}
}

const char *fs_verdict_name(enum fs_verdict v)
{
	return v == FS_VERDICT_PASS ? "pass" : v == FS_VERDICT_FAIL ? "fail" : "correct, not profitable";
}

const char *fs_triage_name(enum fs_triage t)
{
	return t == FS_TRIAGE_ROUNDING ? "rounding" : t == FS_TRIAGE_BUG ? "bug" : "none";
}

/* a tactic's outputs pass when they would pass the verdict */
int fs_numerics_check_tactic(void *ctx, const struct fs_errors *u, const struct fs_errors *f, char *why, size_t n)
{
	struct fs_check c;
	fs_verdict_check(ctx, u, f, &c);
	if (c.verdict == FS_VERDICT_PASS)
		return 0;
	snprintf(why, n, "%s", c.why);
	return -1;
}

