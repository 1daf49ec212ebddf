/*
 * buckets.c: the fused kernel tuned at every bucket (buckets.h).
 */
#include "buckets.h"

#include "codegen.h"
#include "emit_op.h"
#include "gemm.h"
#include "gpu.h"
#include "verdict.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* o's buckets, or powers of two from 1 up to the first at least `tokens` */
static uint32_t bucket_list(const struct fs_numerics_opts *o, int64_t *out)
{
	uint32_t n = 0;
	if (o->n_buckets) {
		for (uint32_t i = 0; i < o->n_buckets && n < FS_MAX_BUCKETS; i++)
			out[n++] = o->buckets[i];
		return n;
	}
	for (int64_t b = 1; n < FS_MAX_BUCKETS; b *= 2) {
		out[n++] = b;
		if (b >= o->tokens)
			break;
	}
	return n;
}

uint32_t fs_buckets_graph_calls(const struct prog *q)
{
	double bytes = 0;
	for (uint32_t v = 0; v < q->n_in + q->n_ops; v++)
		if (v < q->n_in || q->is_output[v - q->n_in]) {
			const struct ten *t = fs_prog_value(q, (int32_t)v);
			bytes += (double)t->n * (double)fs_dtype_size((enum fs_dtype)t->dtype);
		}
	return fs_gpu_graph_calls(bytes);
}

/* One bucket: its kernels run and checked, the fused one tuned. */
static void tune(const struct prog *q, const uint32_t *nodes, uint32_t n, const struct fs_numerics_opts *o, uint64_t seed,
		 struct fs_numerics *r, struct fs_bucket_run *b)
{
	char key[20], bucket[64];
	fs_codegen_tuning_key(q, nodes, n, b->tokens, key, sizeof(key), bucket, sizeof(bucket));
	b->graph_calls = fs_buckets_graph_calls(q);
	struct fs_gpu_opts go = {.execute = 1, .compile = 1, .reps = o->reps ? o->reps : 50, .cache = o->cache,
				 .kernel_key = key[0] ? key : NULL, .bucket = bucket,
				 .check = fs_numerics_check_tactic, .ctx = r, .seed = seed,
				 .graph_calls = b->graph_calls, .progress = o->progress};
	struct fs_gpu_result *g = fs_xcalloc(1, sizeof(*g));
	fs_gpu_run(q, &go, g);
	b->seconds = g->seconds;
	int products_only = g->ran && fs_gemm_any(q) && !g->n_tactics;
	if (!g->ran) {
		snprintf(b->error, sizeof(b->error), "%.250s", g->error[0] ? g->error : g->skipped);
		b->run_failed = g->error[0] != '\0';
	} else {
		b->tuned = 1;
		b->variant = g->variant, b->algos = g->algos;
		if (g->chosen >= 0) {
			const struct fs_tactic_run *w = &g->tactics[g->chosen];
			b->t = w->t;
			snprintf(b->tactic, sizeof(b->tactic), "%s", w->rec.name);
		} else
			snprintf(b->tactic, sizeof(b->tactic), "%s", products_only ? "products" : "fallback");
		/* the fused plan (its products, then the kernel, or the variant chosen) and the unfused chain side by side */
		b->ms = g->fused_ms, b->ci = g->fused_ci, b->unfused_ms = g->unfused_ms;
		b->speedup = g->speedup, b->speedup_lo = g->speedup_lo, b->speedup_hi = g->speedup_hi;
		if (g->runner_up >= 0) {
			snprintf(b->runner_up, sizeof(b->runner_up), "%s", g->tactics[g->runner_up].rec.name);
			b->runner_up_ms = g->tactics[g->runner_up].rec.ms;
		}
		b->cache_hit = g->cache_hit, b->timed = g->n_tactics, b->failed = g->n_failed;
		b->fused = g->fused, b->unfused = g->unfused;
		for (uint32_t i = 0; i < g->n_tactics && b->n_finalists < FS_FINALISTS; i++)
			if (g->tactics[i].rec.final)
				b->finalists[b->n_finalists++] = g->tactics[i].rec;
		char why[200];
		int ok = fs_numerics_check_tactic(r, &g->unfused, &g->fused, why, sizeof(why)) == 0;
		b->passed = ok && !g->plan_failed[0];
		if (!ok)
			snprintf(b->error, sizeof(b->error), "its chosen plan: %s", why);
		else if (g->plan_failed[0])
			snprintf(b->error, sizeof(b->error), "%s", g->plan_failed);
		b->slower = b->passed && b->speedup_hi < 1.0;
	}
	fs_gpu_release(g);
	free(g);
}

/* The bucket of the run's own token count: what the run tuned. */
static void from_main(const struct prog *q, const struct fs_numerics *r, struct fs_bucket_run *b)
{
	const struct fs_numerics_tactic *w = r->chosen >= 0 ? &r->tactics[r->chosen] : NULL;
	b->tuned = 1;
	b->graph_calls = fs_buckets_graph_calls(q);
	b->t = r->chosen_tactic;
	snprintf(b->tactic, sizeof(b->tactic), "%s", w ? w->name : r->n_tactics ? "fallback" : "products");
	b->ms = r->fused_ms, b->ci = r->fused_ci, b->unfused_ms = r->unfused_ms;
	b->speedup = r->speedup, b->speedup_lo = r->speedup_lo, b->speedup_hi = r->speedup_hi;
	b->variant = r->variant, b->algos = r->algos, b->seconds = r->gpu_seconds;
	if (r->runner_up >= 0) {
		memcpy(b->runner_up, r->tactics[r->runner_up].name, sizeof(b->runner_up));
		b->runner_up_ms = r->tactics[r->runner_up].ms;
	}
	b->cache_hit = r->cache_hit, b->timed = r->n_tactics, b->failed = r->n_failed;
	b->fused = r->gpu_fused, b->unfused = r->gpu_unfused;
	for (uint32_t i = 0; i < r->n_tactics && b->n_finalists < FS_FINALISTS; i++)
		if (r->tactics[i].final)
			b->finalists[b->n_finalists++] = r->tactics[i];
	const struct fs_check *c = r->cpu_ran && r->cpu_check.verdict == FS_VERDICT_FAIL ? &r->cpu_check
				 : r->gpu_check.verdict == FS_VERDICT_FAIL ? &r->gpu_check
									     : NULL;
	b->passed = !c && !r->plan_failed[0];
	if (c)
		snprintf(b->error, sizeof(b->error), "its chosen plan: %.230s", c->why);
	else if (r->plan_failed[0])
		snprintf(b->error, sizeof(b->error), "%.250s", r->plan_failed);
	b->slower = b->passed && b->speedup_hi < 1.0;
}

/* An untuned bucket: the heuristic tactic (vectors as eager's kernels) of
 * the fused kernel (of a region with matrix products: the one beside them,
 * as --emit writes it). */
static void heuristic(const struct prog *q, struct fs_bucket_run *b)
{
	struct fs_emit_op e;
	struct fs_kernel k;
	char why[256];
	if (fs_emit_op_init(&e, q, why, sizeof(why))) {
		if (!b->error[0])
			snprintf(b->error, sizeof(b->error), "%.250s", why);
		return;
	}
	if (!e.kernel)
		snprintf(b->tactic, sizeof(b->tactic), "products");
	else if (fs_codegen(&e.kq, -1, FS_GEN_KERNEL, &fs_tactic_eager, &k, why, sizeof(why)) == 0) {
		b->t = k.tactic;
		fs_tactic_name(&k.tactic, k.row, b->tactic, sizeof(b->tactic));
		fs_kernel_release(&k);
	} else if (!b->error[0])
		snprintf(b->error, sizeof(b->error), "%.250s", why);
	fs_emit_op_release(&e);
}

void fs_buckets_run(const struct prog *p, const uint32_t *nodes, uint32_t n, const struct fs_numerics_opts *o, uint64_t seed,
		    struct fs_numerics *r, struct fs_bucket_set *set)
{
	int64_t list[FS_MAX_BUCKETS];
	uint32_t nb = bucket_list(o, list);
	struct prog *q = set->q = fs_xcalloc(nb, sizeof(*q));
	struct fs_emit_bucket *eb = set->eb;
	uint32_t ne = 0;
	set->nb = nb;
	for (uint32_t i = 0; i < nb; i++) {
		struct fs_bucket_run *b = &r->buckets[r->n_buckets++];
		struct fs_diags d;
		memset(b, 0, sizeof(*b));
		b->tokens = list[i];
		q[i] = (struct prog){.s = p->s, .g = p->g, .gelu_tanh = p->gelu_tanh};
		fs_diags_init(&d);
		if (fs_prog_build(&q[i], nodes, n, list[i], &d)) {
			snprintf(b->error, sizeof(b->error), "%.250s", d.n ? d.v[0].message : "cannot bind the region");
			fs_diags_release(&d);
			continue;
		}
		fs_diags_release(&d);
		if (r->gpu_ran && b->tokens == o->tokens)
			from_main(&q[i], r, b);
		else if (r->gpu_ran)
			tune(&q[i], nodes, n, o, seed, r, b);
		if (!b->tuned)
			heuristic(&q[i], b);
		if (b->tuned ? b->passed : !b->error[0]) /* else the token counts go to the next bucket */
			eb[ne++] = (struct fs_emit_bucket){&q[i], b->tokens, b->t, b->tuned, b->ms, b->variant, b->slower, &b->algos};
	}
	set->ne = ne;
}

void fs_bucket_set_release(struct fs_bucket_set *set)
{
	for (uint32_t i = 0; i < set->nb; i++)
		fs_prog_free(&set->q[i]);
	free(set->q);
	memset(set, 0, sizeof(*set));
}

void fs_buckets_print(const struct fs_numerics *r, FILE *out)
{
	uint32_t tuned = 0;
	for (uint32_t i = 0; i < r->n_buckets; i++)
		tuned += r->buckets[i].tuned;
	if (!tuned)
		return;
	fprintf(out, "  tuned per bucket (a token count takes the smallest bucket at least as large; timed as CUDA graphs "
		     "of %d calls, of fewer where a call moves over %.0f MB: graphs of N):\n",
		FS_GRAPH_CALLS, FS_GRAPH_CALL_BYTES / 1e6);
	fprintf(out, "    %8s  %-18s %10s %10s %10s %22s %7s  %s\n", "tokens", "tactic", "fused ms", "+-", "unfused ms",
		"speedup [95% interval]", "tuning", "");
	for (uint32_t i = 0; i < r->n_buckets; i++) {
		const struct fs_bucket_run *b = &r->buckets[i];
		if (!b->tuned) {
			fprintf(out, "    %8lld  not tuned: %s\n", (long long)b->tokens, b->error);
			continue;
		}
		char graphs[32] = "";
		if (b->graph_calls > 1)
			snprintf(graphs, sizeof(graphs), "graphs of %u ", b->graph_calls);
		char sp[40];
		snprintf(sp, sizeof(sp), "%.3fx [%.3f, %.3f]", b->speedup, b->speedup_lo, b->speedup_hi);
		fprintf(out, "    %8lld  %-18s %10.4f %10.4f %10.4f %22s %6.1fs  %s%s%s%s%s%s\n", (long long)b->tokens, b->tactic, b->ms,
			b->ci, b->unfused_ms, sp, b->seconds, graphs,
			b->variant == 1 ? "cuBLASLt's epilogue chosen " : b->variant == 2 ? "the generated GEMM chosen " : "",
			b->cache_hit ? "cache hit " : "", b->slower ? "fused plan slower here (profitable: false) " : "",
			b->passed ? "" : "FAILS: ", b->passed ? "" : b->error);
	}
}

void fs_buckets_json(const struct fs_numerics *r, void *parent)
{
	cJSON *a = cJSON_AddArrayToObject(parent, "buckets");
	for (uint32_t i = 0; i < r->n_buckets; i++) {
		const struct fs_bucket_run *b = &r->buckets[i];
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
				cJSON_AddItemToArray(f, fs_tactic_json(&b->finalists[j]));
		}
		if (b->error[0])
			cJSON_AddStringToObject(q, "error", b->error);
		cJSON_AddItemToArray(a, q);
	}
}

/* one row of numerics.json's tactic table (buckets.h) */
void *fs_tactic_json(const struct fs_numerics_tactic *t)
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
