/*
 * verdict.c: the rule that judges a region's check (verdict.h): a plan's
 * errors against the unfused chain's, the one verdict over every plan the
 * run would use, and a tactic's check by the same rule.
 */
#include "verdict.h"

#include <stdio.h>

void fs_verdict_check(const struct fs_rule *r, const struct fs_errors *unfused, const struct fs_errors *fused, struct fs_check *c)
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
/* The kernels' failure (generation, compile or a GPU run; not a refusal):
 * nothing checked there. */
static int gpu_failed(const struct fs_gpu_result *g)
{
	return g->error[0] && !g->refused;
}

/* The first failing plan's reason, in d (file: the dump's): -1, or 0 where
 * none fails. The run's own checks, a compile or GPU error, the GPU reference
 * against the CPU's, the plans the GPU run found failing, then each bucket's. */
static int failure(const struct fs_site_result *r, const char *file, struct fs_diags *d)
{
	const struct fs_gpu_result *g = &r->gpu;
	const struct fs_check *c = r->cpu.ran && r->cpu.check.verdict == FS_VERDICT_FAIL ? &r->cpu.check
				 : g->ran && r->gpu_check.check.verdict == FS_VERDICT_FAIL ? &r->gpu_check.check
											  : NULL;
	if (c)
		fs_diag_add(d, FS_ERROR, file, 0, 0, NULL, 0, "%s check: %s", c == &r->cpu.check ? "the CPU" : "the GPU", c->why);
	else if (gpu_failed(g))
		fs_diag_add(d, FS_ERROR, file, 0, 0, NULL, 0, "the kernels' compile or GPU run failed: %.250s", g->error);
	/* the reference kernel is generated like the fused one: the CPU's float64 reference is the independent check of it */
	else if (g->ran && g->ref_checked && (g->ref_vs_cpu.nonfinite || g->ref_vs_cpu.unwritten || g->ref_vs_cpu.nrmse > 1e-9))
		fs_diag_add(d, FS_ERROR, file, 0, 0, NULL, 0,
			    "the GPU's float64 reference disagrees with the CPU's (nrmse %.3g, %llu non-finite or unwritten)",
			    g->ref_vs_cpu.nrmse, (unsigned long long)(g->ref_vs_cpu.nonfinite + g->ref_vs_cpu.unwritten));
	else if (g->ran && g->plan_failed[0])
		fs_diag_add(d, FS_ERROR, file, 0, 0, NULL, 0, "%s", g->plan_failed);
	else {
		for (uint32_t i = 0; i < r->buckets.n; i++) {
			const struct fs_bucket_run *b = &r->buckets.v[i];
			if ((b->tuned && !b->passed) || b->run_failed) {
				fs_diag_add(d, FS_ERROR, file, 0, 0, NULL, 0, "the bucket of %lld tokens: %.250s", (long long)b->tokens, b->error);
				return -1;
			}
		}
		return 0;
	}
	return -1;
}

/* The one rule: the verdict is the worst check of every plan the run would
 * use, each failure named once (the first found); where every plan passes, a
 * fused plan slower than the unfused chain at the run's own size (side by
 * side, the speedup's interval wholly below 1) is correct but not
 * profitable. */
void fs_verdict_settle(struct fs_site_result *r, const char *file)
{
	const struct fs_gpu_result *g = &r->gpu;
	struct fs_diags d; /* a failing plan is the verdict's explanation (r->why), no error of the run */
	fs_diags_init(&d);
	int failed = failure(r, file, &d);
	if (failed)
		snprintf(r->why, sizeof(r->why), "%s", fs_diags_last(&d));
	fs_diags_release(&d);
	r->verdict = FS_VERDICT_FAIL;
	if (failed)
		return;
	r->verdict = FS_VERDICT_PASS;
	r->why[0] = '\0';
	if (g->ran && g->speedup_hi < 1.0) {
		r->verdict = FS_VERDICT_NOT_PROFITABLE;
		snprintf(r->why, sizeof(r->why), "the fused plan is slower than the unfused chain here: %.4f against %.4f ms, speedup %.3fx "
						 "[%.3f, %.3f]%s",
			 g->fused_ms, g->unfused_ms, g->speedup, g->speedup_lo, g->speedup_hi, g->apart ? " (timed apart)" : "");
	}
}

void fs_verdict_emit(struct fs_site_result *r)
{
	if (!r->emit.failed || r->verdict == FS_VERDICT_FAIL)
		return;
	r->verdict = FS_VERDICT_REFUSED;
	snprintf(r->why, sizeof(r->why), "the numerics pass, --emit failed: %.250s", r->emit.text);
}

const char *fs_verdict_name(enum fs_verdict v)
{
	static const char *const names[] = {"pass", "fail", "correct, not profitable", "refused"};
	return names[v];
}

const char *fs_triage_name(enum fs_triage t)
{
	return t == FS_TRIAGE_ROUNDING ? "rounding" : t == FS_TRIAGE_BUG ? "bug" : "none";
}

/* a tactic's outputs pass when they would pass the verdict */
int fs_verdict_check_tactic(void *ctx, const struct fs_errors *u, const struct fs_errors *f, char *why, size_t n)
{
	struct fs_check c;
	fs_verdict_check(ctx, u, f, &c);
	if (c.verdict == FS_VERDICT_PASS)
		return 0;
	snprintf(why, n, "%s", c.why);
	return -1;
}

