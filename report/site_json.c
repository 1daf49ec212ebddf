/*
 * site_json.c: --apply's report of one site as a JSON object
 * (fusescan/site.h; docs/schemas/kernel-3.json's "numerics").
 */
#include "fusescan/site.h"

#include <cjson/cJSON.h>

static cJSON *errors_json(const struct fs_errors *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "max_abs", e->max_abs);
	cJSON_AddNumberToObject(o, "max_rel", e->max_rel);
	cJSON_AddNumberToObject(o, "nrmse", e->nrmse);
	cJSON_AddNumberToObject(o, "nonfinite", (double)e->nonfinite);
	cJSON_AddNumberToObject(o, "unwritten", (double)e->unwritten);
	return o;
}

static cJSON *check_json(const struct fs_check *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "verdict", fs_verdict_name(c->verdict));
	cJSON_AddNumberToObject(o, "min_passing_tolerance", c->min_tol);
	cJSON_AddStringToObject(o, "reason", c->why);
	return o;
}

/* The kernels generated and compiled, under "kernels". */
static void kernels_json(const struct fs_site_result *r, cJSON *o)
{
	cJSON *k = cJSON_AddObjectToObject(o, "kernels");
	cJSON_AddNumberToObject(k, "generated", r->gpu.kernels);
	cJSON_AddNumberToObject(k, "compiled", r->gpu.compiled);
	cJSON_AddStringToObject(k, "arch", r->gpu.arch);
	cJSON_AddStringToObject(k, "nvrtc", r->gpu.nvrtc);
	cJSON_AddStringToObject(k, "error", r->gpu.error);
	cJSON_AddNumberToObject(k, "unfused", r->gpu.unfused_kernels);
	cJSON_AddNumberToObject(k, "reference", r->gpu.ref_kernels);
	cJSON_AddNumberToObject(k, "gemm", r->gpu.gemm_kernels);
	if (r->emit.text[0])
		cJSON_AddStringToObject(k, r->emit.failed ? "emit_failed" : "emitted", r->emit.text);
}

/* one row of a tactic table */
static cJSON *tactic_json(const struct fs_tactic_rec *t)
{
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "name", t->name);
	cJSON_AddNumberToObject(q, "median_ms", t->ms);
	cJSON_AddNumberToObject(q, "spread_ms", t->spread);
	cJSON_AddNumberToObject(q, "ci95_ms", t->ci);
	cJSON_AddBoolToObject(q, "final", t->final);
	if (t->worst > 0) {
		cJSON_AddItemToObject(q, "companies_ms", cJSON_CreateDoubleArray(t->company_ms, 3));
		cJSON_AddNumberToObject(q, "worst_ratio", t->worst);
	}
	if (t->failed[0])
		cJSON_AddStringToObject(q, "failed", t->failed);
	return q;
}

/* The buckets, into parent's "buckets". */
static void buckets_json(const struct fs_site_result *r, cJSON *parent)
{
	cJSON *a = cJSON_AddArrayToObject(parent, "buckets");
	for (uint32_t i = 0; i < r->buckets.n; i++) {
		const struct fs_bucket_run *b = &r->buckets.v[i];
		cJSON *q = cJSON_CreateObject();
		cJSON_AddNumberToObject(q, "tokens", (double)b->tokens);
		cJSON_AddStringToObject(q, "tactic", b->tactic);
		cJSON_AddBoolToObject(q, "tuned", b->tuned);
		if (b->tuned) {
			cJSON_AddNumberToObject(q, "graph_calls", b->graph_calls);
			cJSON_AddBoolToObject(q, "cache_hit", b->cache_hit);
			cJSON_AddBoolToObject(q, "passed", b->passed);
			cJSON_AddNumberToObject(q, "variant", b->variant);
			cJSON_AddNumberToObject(q, "median_ms", b->ms);
			cJSON_AddNumberToObject(q, "ci95_ms", b->ci);
			cJSON_AddNumberToObject(q, "unfused_ms", b->unfused_ms);
			cJSON_AddItemToObject(q, "speedup", cJSON_CreateDoubleArray((const double[]){b->speedup, b->speedup_lo, b->speedup_hi}, 3));
			cJSON_AddBoolToObject(q, "profitable", !b->slower);
			cJSON_AddNumberToObject(q, "tactics_timed", b->timed);
			cJSON_AddNumberToObject(q, "tactics_failed", b->failed);
			cJSON_AddNumberToObject(q, "seconds", b->seconds);
			if (b->runner_up[0]) {
				cJSON_AddStringToObject(q, "runner_up", b->runner_up);
				cJSON_AddNumberToObject(q, "runner_up_ms", b->runner_up_ms);
			}
			cJSON_AddNumberToObject(q, "fused_max_abs", b->fused.max_abs);
			cJSON_AddNumberToObject(q, "unfused_max_abs", b->unfused.max_abs);
			cJSON *f = cJSON_AddArrayToObject(q, "finalists");
			for (uint32_t j = 0; j < b->n_finalists; j++)
				cJSON_AddItemToArray(f, tactic_json(&b->finalists[j]));
		}
		if (b->error[0])
			cJSON_AddStringToObject(q, "error", b->error);
		cJSON_AddItemToArray(a, q);
	}
}

/* The tuning of the fused kernel (and its buckets), under gp's "tuning". */
static void tuning_json(const struct fs_site_result *r, cJSON *gp)
{
	cJSON *t = cJSON_AddObjectToObject(gp, "tuning");
	cJSON_AddStringToObject(t, "bucket", r->shape.bucket);
	buckets_json(r, t);
	cJSON_AddBoolToObject(t, "cache_hit", r->gpu.cache_hit);
	cJSON_AddStringToObject(t, "chosen", r->gpu.chosen >= 0 ? r->gpu.tactics[r->gpu.chosen].rec.name : "");
	cJSON_AddStringToObject(t, "runner_up", r->gpu.runner_up >= 0 ? r->gpu.tactics[r->gpu.runner_up].rec.name : "");
	cJSON_AddNumberToObject(t, "failed", r->gpu.n_failed);
	cJSON *tab = cJSON_AddArrayToObject(t, "tactics");
	for (uint32_t i = 0; i < r->gpu.n_tactics; i++)
		cJSON_AddItemToArray(tab, tactic_json(&r->gpu.tactics[i].rec));
}

/* What the GPU ran: errors, times, speedup, tuning, under "gpu". */
static void gpu_json(const struct fs_site_result *r, cJSON *o)
{
	cJSON *gp = cJSON_AddObjectToObject(o, "gpu");
	cJSON_AddBoolToObject(gp, "ran", r->gpu.ran);
	if (!r->gpu.ran) {
		cJSON_AddStringToObject(gp, "skipped", r->gpu.skipped);
		return;
	}
	cJSON_AddStringToObject(gp, "device", r->gpu.device);
	if (r->gpu.gemm[0])
		cJSON_AddStringToObject(gp, "matrix_products", r->gpu.gemm);
	if (r->gpu.ref_checked)
		cJSON_AddItemToObject(gp, "reference_vs_cpu", errors_json(&r->gpu.ref_vs_cpu));
	cJSON_AddItemToObject(gp, "unfused", errors_json(&r->gpu.unfused));
	cJSON_AddItemToObject(gp, "fused", errors_json(&r->gpu.fused));
	cJSON_AddNumberToObject(gp, "fused_ms", r->gpu.fused_ms);
	cJSON_AddNumberToObject(gp, "unfused_ms", r->gpu.unfused_ms);
	cJSON_AddNumberToObject(gp, "fused_ci95_ms", r->gpu.fused_ci);
	cJSON_AddNumberToObject(gp, "unfused_ci95_ms", r->gpu.unfused_ci);
	cJSON_AddItemToObject(gp, "speedup", cJSON_CreateDoubleArray((const double[]){r->gpu.speedup, r->gpu.speedup_lo, r->gpu.speedup_hi}, 3));
	cJSON_AddBoolToObject(gp, "timed_apart", r->gpu.apart);
	if (r->gpu.plan_failed[0])
		cJSON_AddStringToObject(gp, "plan_failed", r->gpu.plan_failed);
	cJSON_AddNumberToObject(gp, "fused_bytes", (double)r->gpu.fused_bytes);
	cJSON_AddNumberToObject(gp, "unfused_bytes", (double)r->gpu.unfused_bytes);
	cJSON_AddNumberToObject(gp, "copy_gbs", r->gpu.copy_gbs);
	cJSON_AddNumberToObject(gp, "copy_same_size_gbs", r->gpu.copy_same_gbs);
	if (r->gpu.flops > 0)
		cJSON_AddNumberToObject(gp, "flops", r->gpu.flops);
	cJSON_AddNumberToObject(gp, "reps", r->gpu.reps);
	cJSON_AddNumberToObject(gp, "input_copies", r->gpu.rotate);
	cJSON_AddNumberToObject(gp, "unfused_launches", r->gpu.unfused_launches);
	tuning_json(r, gp);
	if (r->gpu_check.triaged) {
		cJSON_AddItemToObject(gp, "fused_no_fma", errors_json(&r->gpu.no_fma));
		cJSON_AddItemToObject(gp, "fused_per_op_rounding", errors_json(&r->gpu.emulated));
	}
}

void *fs_site_report_json(const struct fs_site_result *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "device", "cpu");
	cJSON_AddStringToObject(o, "binding", r->shape.binding);
	cJSON_AddStringToObject(o, "shapes", r->shape.shapes);
	cJSON_AddNumberToObject(o, "ops", r->shape.n_ops);
	cJSON_AddNumberToObject(o, "inputs", r->shape.n_inputs);
	cJSON_AddNumberToObject(o, "outputs", r->shape.n_outputs);
	cJSON_AddBoolToObject(o, "cpu_ran", r->cpu.ran);
	if (r->cpu.ran) {
		cJSON_AddItemToObject(o, "unfused", errors_json(&r->cpu.unfused));
		cJSON_AddItemToObject(o, "fused", errors_json(&r->cpu.fused));
	} else
		cJSON_AddStringToObject(o, "cpu_skipped", r->cpu.skipped);
	if (r->triage != FS_TRIAGE_NONE)
		cJSON_AddItemToObject(o, "fused_per_op_rounding", errors_json(&r->cpu.emulated));
	cJSON_AddNumberToObject(o, "k", r->rule.k);
	cJSON_AddNumberToObject(o, "tolerance", r->rule.tol);
	if (r->cpu.ran)
		cJSON_AddItemToObject(o, "cpu_check", check_json(&r->cpu.check));
	if (r->gpu.ran)
		cJSON_AddItemToObject(o, "gpu_check", check_json(&r->gpu_check.check));
	cJSON_AddStringToObject(o, "verdict", fs_verdict_name(r->verdict));
	cJSON_AddStringToObject(o, "reason", r->why);
	cJSON_AddStringToObject(o, "triage", fs_triage_name(r->triage));
	cJSON_AddStringToObject(o, "triage_on", r->gpu_check.triaged ? "gpu" : "cpu");
	kernels_json(r, o);
	gpu_json(r, o);
	if (r->shape.planted[0])
		cJSON_AddStringToObject(o, "planted_bug", r->shape.planted);
	return o;
}
