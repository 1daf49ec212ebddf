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

int64_t fs_bucket_round(int64_t tokens)
{
	int64_t b = 1;
	while (b < tokens)
		b *= 2;
	return b;
}

/* o's buckets, or powers of two from 1 up to tokens' own bucket */
static uint32_t bucket_list(const struct fs_site_opts *o, int64_t *out)
{
	uint32_t n = 0;
	if (o->n_buckets) {
		for (uint32_t i = 0; i < o->n_buckets && n < FS_MAX_BUCKETS; i++)
			out[n++] = o->buckets[i];
		return n;
	}
	for (int64_t b = 1, top = fs_bucket_round(o->tokens); n < FS_MAX_BUCKETS && b <= top; b *= 2)
		out[n++] = b;
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

/* A bucket from its GPU run g: the tactic chosen, the fused plan (its
 * products, then the kernel, or the variant chosen) and the unfused chain
 * timed side by side, and whether every plan it would use passes (cpu: the
 * CPU's failed check at this size, or NULL). */
static void from_run(const struct prog *q, const struct fs_gpu_result *g, const struct fs_rule *rule, const struct fs_check *cpu,
		     struct fs_bucket_run *b)
{
	b->tuned = 1;
	b->variant = g->variant, b->algos = g->algos;
	if (g->chosen >= 0) {
		b->t = g->tactics[g->chosen].t;
		snprintf(b->tactic, sizeof(b->tactic), "%s", g->tactics[g->chosen].rec.name);
	} else
		snprintf(b->tactic, sizeof(b->tactic), "%s", fs_gemm_any(q) && !g->n_tactics ? "products" : "fallback");
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
	struct fs_check c;
	fs_verdict_check(rule, &g->unfused, &g->fused, &c);
	const char *bad = cpu ? cpu->why : c.verdict == FS_VERDICT_FAIL ? c.why : NULL;
	b->passed = !bad && !g->plan_failed[0];
	if (bad)
		snprintf(b->error, sizeof(b->error), "its chosen plan: %.230s", bad);
	else if (g->plan_failed[0])
		snprintf(b->error, sizeof(b->error), "%.250s", g->plan_failed);
	b->slower = b->passed && b->speedup_hi < 1.0;
}

/* One bucket: its kernels run and checked, the fused one tuned. */
static void tune(const struct prog *q, const struct fs_site *site, const struct fs_site_opts *o, uint64_t seed,
		 const struct fs_rule *rule, struct fs_bucket_run *b)
{
	char key[20], bucket[64];
	fs_codegen_tuning_key(q, site->nodes, site->n_nodes, b->tokens, key, sizeof(key), bucket, sizeof(bucket));
	b->graph_calls = fs_buckets_graph_calls(q);
	struct fs_gpu_opts go = {.execute = 1, .compile = 1, .reps = o->reps ? o->reps : 50, .cache = o->cache,
				 .kernel_key = key[0] ? key : NULL, .bucket = bucket,
				 .check = fs_verdict_check_tactic, .ctx = (void *)rule, .seed = seed,
				 .graph_calls = b->graph_calls, .progress = o->progress};
	struct fs_gpu_result *g = fs_xcalloc(1, sizeof(*g));
	fs_gpu_run(q, &go, g);
	if (!g->ran) {
		snprintf(b->error, sizeof(b->error), "%.250s", g->error[0] ? g->error : g->skipped);
		b->run_failed = g->error[0] != '\0';
	} else
		from_run(q, g, rule, NULL, b);
	b->seconds = g->seconds;
	fs_gpu_release(g);
	free(g);
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
	else {
		struct fs_diags d; /* no heuristic kernel is the bucket's error, its result */
		fs_diags_init(&d);
		if (fs_codegen(&e.kq, -1, FS_GEN_KERNEL, &fs_tactic_eager, &k, &d) == 0) {
			b->t = k.tactic;
			fs_tactic_name(&k.tactic, k.row, b->tactic, sizeof(b->tactic));
			fs_kernel_release(&k);
		} else if (!b->error[0])
			snprintf(b->error, sizeof(b->error), "%.250s", fs_diags_last(&d));
		fs_diags_release(&d);
	}
	fs_emit_op_release(&e);
}

/* The site bound at bucket i's tokens into q[i], or p where they are the
 * run's own; NULL (error said in b) where it cannot be bound. */
static const struct prog *bind_bucket(const struct prog *p, const struct fs_site *site, int64_t run_tokens, struct prog *q,
				      struct fs_bucket_run *b)
{
	if (b->tokens == run_tokens)
		return p;
	struct fs_diags d;
	*q = (struct prog){.s = p->s, .g = p->g, .gelu_tanh = p->gelu_tanh};
	fs_diags_init(&d);
	int bad = fs_prog_build(q, site->nodes, site->n_nodes, b->tokens, &d);
	if (bad)
		snprintf(b->error, sizeof(b->error), "%.250s", d.n ? d.v[0].message : "cannot bind the region");
	fs_diags_release(&d);
	return bad ? NULL : q;
}

void fs_buckets_run(const struct prog *p, const struct fs_site *site, const struct fs_site_opts *o, uint64_t seed,
		    struct fs_site_result *r, struct fs_bucket_set *set)
{
	int64_t list[FS_MAX_BUCKETS];
	uint32_t nb = bucket_list(o, list);
	const struct fs_check *cpu = r->cpu.ran && r->cpu.check.verdict == FS_VERDICT_FAIL ? &r->cpu.check : NULL;
	set->q = fs_xcalloc(nb, sizeof(*set->q));
	set->nb = nb;
	for (uint32_t i = 0; i < nb; i++) {
		struct fs_bucket_run *b = &r->buckets.v[r->buckets.n++];
		memset(b, 0, sizeof(*b));
		b->tokens = list[i];
		const struct prog *q = bind_bucket(p, site, o->tokens, &set->q[i], b);
		if (!q)
			continue;
		if (r->gpu.ran && q == p) { /* the run's own size: what the run tuned */
			b->graph_calls = fs_buckets_graph_calls(q);
			from_run(q, &r->gpu, &r->rule, cpu, b);
			b->seconds = r->gpu.seconds;
		} else if (r->gpu.ran)
			tune(q, site, o, seed, &r->rule, b);
		if (!b->tuned)
			heuristic(q, b);
		if (b->tuned ? b->passed : !b->error[0]) /* else the token counts go to the next bucket */
			set->eb[set->ne++] = (struct fs_emit_bucket){q, b->tokens, b->t, b->tuned, b->ms, b->variant, b->slower, &b->algos};
	}
}

void fs_bucket_set_release(struct fs_bucket_set *set)
{
	for (uint32_t i = 0; i < set->nb; i++)
		fs_prog_free(&set->q[i]);
	free(set->q);
	memset(set, 0, sizeof(*set));
}
