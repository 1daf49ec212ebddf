/*
 * gpu.c: the generated kernels on the GPU (see gpu.h).
 */
#include "memplan.h"
#include "gpu_run.h"
#include "rand.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CU_ATTR_L2 = 38, CU_OUT_OF_MEMORY = 2 /* CUDA_ERROR_OUT_OF_MEMORY */ };



static int run_unfused(struct run *R, uint32_t copy)
{
	for (uint32_t i = 1; i < R->n; i++)
		if (fs_gpu_launch(R, &R->l[i], copy, UNFUSED_BUFS))
			return -1;
	return 0;
}

static int run_unfused_seq(struct run *R, const void *none, uint32_t r)
{
	(void)none;
	return run_unfused(R, r % R->rotate);
}

/* A launch of kernel k generated in mode, k moved into it. */
static void take(struct launch *L, struct fs_kernel *k, enum fs_gen mode)
{
	memset(L, 0, sizeof(*L));
	L->ref = (uint8_t)fs_gen_reference(mode), L->store = mode == FS_GEN_REF_STORE;
	L->k = *k;
	memset(k, 0, sizeof(*k));
}

/* The fused kernel under tactic t (NULL: the fallback; index64: for any
 * size) generated in mode (kernels.c) into L: 0, or -1 with why in g->error. */
static int generate(struct run *R, struct launch *L, const struct fs_tactic *t, enum fs_gen mode, int index64)
{
	struct fs_kernel k;
	struct fs_diags d;
	fs_diags_init(&d);
	int rc = fs_kernels_fused(&R->ks, t, mode, index64, &k, &d);
	if (rc)
		snprintf(R->g->error, sizeof(R->g->error), "%s", fs_diags_last(&d));
	fs_diags_release(&d);
	take(L, &k, mode);
	return rc;
}

/* generate(), then compiled and loaded */
static int prepare(struct run *R, struct launch *L, const struct fs_tactic *t, enum fs_gen mode, int index64, int fmad)
{
	if (generate(R, L, t, mode, index64))
		return -1;
	return fs_gpu_build(R, L->k.source, fmad, 1, 1, &L->module, "fs_k", &L->fn);
}

/* The fused kernel under each tactic of list (mode), generated into L[i],
 * compiled all at once (fs_cuda_compile_all) and, with `load`, loaded; a
 * tactic that fails says why in failed[i] (its L[i] then holds no module).
 * The number that failed. */
static uint32_t prepare_tactics(struct run *R, struct launch *L, const struct fs_tactic *list, uint32_t n, enum fs_gen mode,
				int load, char (*failed)[192])
{
	struct fs_compile *jobs = fs_xcalloc(n ? n : 1, sizeof(*jobs));
	uint32_t *of = fs_xcalloc(n ? n : 1, sizeof(*of)), m = 0, bad = 0;
	for (uint32_t i = 0; i < n; i++) {
		failed[i][0] = '\0';
		if (generate(R, &L[i], &list[i], mode, 0))
			snprintf(failed[i], sizeof(failed[i]), "%.190s", R->g->error);
		else
			of[m] = i, jobs[m++].source = L[i].k.source;
	}
	fs_cuda_compile_all(&R->c, jobs, m, R->g->arch, 1);
	for (uint32_t j = 0; j < m; j++) {
		uint32_t i = of[j];
		if (!jobs[j].cubin)
			snprintf(failed[i], sizeof(failed[i]), "%.190s", jobs[j].err);
		else {
			R->g->compiled++;
			if (load && fs_gpu_load_cubin(R, jobs[j].cubin, &L[i].module, "fs_k", &L[i].fn))
				snprintf(failed[i], sizeof(failed[i]), "%.190s", R->g->error);
		}
		free(jobs[j].cubin);
	}
	for (uint32_t i = 0; i < n; i++)
		bad += failed[i][0] != '\0';
	free(of);
	R->g->error[0] = '\0';
	free(jobs);
	return bad;
}

static void unload(struct run *R, struct launch *L)
{
	if (L->module && R->c.driver)
		R->c.cuModuleUnload(L->module);
	if (L->lt.desc)
		fs_lt_plan_release(&R->lt, &L->lt);
	fs_kernel_release(&L->k);
	L->module = L->fn = NULL;
}

static void tactic_name(const struct run *R, const struct fs_tactic *t, char *out, size_t n)
{
	fs_tactic_name(t, R->g->row, out, n);
}

/* The eligible tactics of g->tactics[0..n) by median, the fastest first,
 * at most cap of them into idx; with near, only those whose median is not
 * told apart from the fastest's (their 95% intervals overlap). How many. */
static uint32_t fastest(const struct fs_gpu_result *g, uint32_t n, int near, uint32_t *idx, uint32_t cap)
{
	int32_t best = -1;
	for (uint32_t i = 0; i < n; i++)
		if (!g->tactics[i].rec.failed[0] && (best < 0 || g->tactics[i].rec.ms < g->tactics[best].rec.ms))
			best = (int32_t)i;
	uint32_t k = 0;
	for (uint32_t i = 0; best >= 0 && i < n; i++) {
		const struct fs_tactic_run *t = &g->tactics[i];
		if (t->rec.failed[0] || (near && t->rec.ms > g->tactics[best].rec.ms + g->tactics[best].rec.ci + t->rec.ci))
			continue;
		uint32_t at = k < cap ? k++ : cap; /* insertion by median; the slowest falls off */
		while (at > 0 && g->tactics[idx[at - 1]].rec.ms > t->rec.ms) {
			if (at < cap)
				idx[at] = idx[at - 1];
			at--;
		}
		if (at < cap)
			idx[at] = i;
	}
	return k;
}

/* The finalists: the eligible tactics whose median is not told apart from
 * the fastest's, at most FS_FINALISTS, the fastest first, are timed again,
 * interleaved over 4x the runs (fewer sides, narrower intervals), and those
 * times replace their first ones. Where a call moves under
 * FS_GRAPH_CALL_BYTES (its graphs hold FS_GRAPH_CALLS calls: every decode
 * size, whose time is its latency), what ran just before moves a
 * kernel's time by up to 9% and reorders tactics 1-3% apart, one way after
 * one kernel and the other way after another,
 * and in serving a kernel never follows its rival tactics. So there they
 * are timed in three companies: among themselves, each after the chain's
 * unfused sequence (eager's kernels), and each after a device-to-device copy
 * of the call's bytes (another op's traffic); and the finalists there are
 * the FS_FINALISTS fastest, told apart or not (a tactic second among
 * themselves can be first after another kernel). *pick: the finalist whose
 * worst ratio to the fastest of a company is the lowest (with one company,
 * the fastest median; the earlier in the list of equal ones), or -1 where
 * none is eligible. 0, or -1 on a CUDA error (g->error). */
static int final_round(struct run *R, struct launch *L, uint32_t n, int32_t *pick)
{
	struct fs_gpu_result *g = R->g;
	int latency = R->calls >= FS_GRAPH_CALLS; /* a call under FS_GRAPH_CALL_BYTES: its time is its latency */
	uint32_t idx[FS_FINALISTS], k = fastest(g, n, !latency, idx, FS_FINALISTS);
	for (uint32_t j = 0; j < k; j++)
		g->tactics[idx[j]].rec.final = 1;
	*pick = k ? (int32_t)idx[0] : -1;
	if (k < 2)
		return 0;
	const void *what[FS_FINALISTS];
	struct timing tm[FS_FINALISTS];
	double worst[FS_FINALISTS] = {0};
	struct copies c = {.n = (size_t)L[idx[0]].k.bytes / 2, .pairs = 1};
	const struct side company[] = {{run_unfused_seq, NULL}, {fs_gpu_run_copy, &c}};
	uint32_t companies = latency ? 3 : 1;
	int rc = 0;
	for (uint32_t j = 0; j < k; j++)
		what[j] = &L[idx[j]];
	if (companies > 1) {
		c.n = c.n < 256 ? 256 : c.n;
		rc = fs_gpu_copies_alloc(R, &c);
	}
	for (uint32_t q = 0; q < companies && !rc; q++) {
		if ((rc = fs_gpu_time_set(R, fs_gpu_run_fused, what, k, 4 * R->o->reps, q ? &company[q - 1] : NULL, tm, NULL)))
			break;
		double low = tm[0].ms;
		for (uint32_t j = 1; j < k; j++)
			low = tm[j].ms < low ? tm[j].ms : low;
		for (uint32_t j = 0; j < k; j++) {
			worst[j] = tm[j].ms / low > worst[j] ? tm[j].ms / low : worst[j];
			if (companies > 1)
				g->tactics[idx[j]].rec.company_ms[q] = tm[j].ms, g->tactics[idx[j]].rec.worst = worst[j];
			if (q == 0) {
				struct fs_tactic_run *t = &g->tactics[idx[j]];
				t->rec.ms = tm[j].ms, t->rec.spread = tm[j].spread, t->rec.ci = tm[j].ci;
			}
		}
	}
	uint32_t p = 0;
	for (uint32_t j = 1; j < k && !rc; j++) {
		double tj = g->tactics[idx[j]].rec.ms, tp = g->tactics[idx[p]].rec.ms;
		if (worst[j] < worst[p] || (worst[j] == worst[p] && (tj < tp || (tj == tp && idx[j] < idx[p]))))
			p = j;
	}
	*pick = (int32_t)idx[p];
	fs_gpu_copies_free(R, &c);
	return rc ? -1 : 0;
}

/* Tactics list[from..n) compiled, each run once and checked, then timed,
 * interleaved with the tactics again[0..n_again) timed before (their
 * times replaced): every tactic of a set timed together, so a drift of the
 * clocks or temperature falls on all alike, not on whichever tactic was
 * compiled last. 0, or -1 on a CUDA error (g->error). */
static int time_tactics(struct run *R, struct launch *L, const struct fs_tactic *list, uint32_t from, uint32_t n,
			const uint32_t *again, uint32_t n_again)
{
	struct fs_gpu_result *g = R->g;
	const struct fs_gpu_opts *o = R->o;
	const void **what = fs_xcalloc(n + n_again, sizeof(*what));
	uint32_t *of = fs_xcalloc(n + n_again, sizeof(*of)), k = 0;
	char (*why)[192] = fs_xcalloc(n - from + 1, sizeof(*why));
	int rc = 0;
	for (uint32_t j = 0; j < n_again; j++)
		what[k] = &L[again[j]], of[k++] = again[j];
	prepare_tactics(R, L + from, list + from, n - from, FS_GEN_EXACT, 1, why);
	for (uint32_t i = from; i < n && !rc; i++) {
		struct fs_tactic_run *tr = &g->tactics[i];
		struct fs_errors e;
		tr->t = list[i];
		tactic_name(R, &tr->t, tr->rec.name, sizeof(tr->rec.name));
		if (why[i - from][0]) {
			snprintf(tr->rec.failed, sizeof(tr->rec.failed), "%s", why[i - from]);
			g->n_failed++;
			unload(R, &L[i]);
			continue;
		}
		/* a launch or memory error here is the context's end: stop */
		rc = fs_gpu_run_once(R, 0, &L[i], &e);
		if (!rc && o->check && o->check(o->ctx, &g->unfused, &e, tr->rec.failed, sizeof(tr->rec.failed)))
			g->n_failed++;
		what[k] = &L[i], of[k++] = i;
	}
	free(why);
	struct timing *tm = fs_xcalloc(k ? k : 1, sizeof(*tm));
	if (!rc && k)
		rc = fs_gpu_time_set(R, fs_gpu_run_fused, what, k, o->reps, NULL, tm, NULL);
	for (uint32_t j = 0; j < k && !rc; j++) {
		struct fs_tactic_run *tr = &g->tactics[of[j]];
		tr->rec.ms = tm[j].ms, tr->rec.spread = tm[j].spread, tr->rec.ci = tm[j].ci;
	}
	free(tm);
	free(what);
	free(of);
	return rc;
}

/* The tactics timed and the winner picked (tune's first part): the cached
 * one alone on a hit, else fs_tactics' list, then the variants of the
 * fastest. *best: the finalist picked, or -1 where none passed its check.
 * L holds the tactics' launches. */
static int time_and_pick(struct run *R, struct launch *L, struct fs_tactic *list, const struct fs_tune_key *key, int32_t *best)
{
	struct fs_gpu_result *g = R->g;
	const struct fs_gpu_opts *o = R->o;
	struct fs_tune_entry hit;
	uint32_t n;
	if (o->cache && o->kernel_key && !g->cache_hit && fs_tune_lookup(o->cache, key, &hit) == 0) {
		list[0] = hit.tactic;
		n = 1, g->cache_hit = 1;
	} else {
		g->cache_hit = 0;
		n = fs_tactics(&R->l[0].k, list);
	}
	g->n_failed = 0;
	fs_progress_say(o->progress, "GPU, %s: timing %u tactic%s of the fused kernel%s", o->bucket ? o->bucket : "its size", n,
			n == 1 ? "" : "s", g->cache_hit ? " (the cached one)" : "");
	int rc = time_tactics(R, L, list, 0, n, NULL, 0);
	if (!rc && !g->cache_hit) {
		uint32_t top[FS_VARIED], k = fastest(g, n, 0, top, FS_VARIED), m = n;
		for (uint32_t j = 0; j < k; j++)
			m += fs_tactic_variants(&R->l[0].k, &list[top[j]], list + m);
		rc = time_tactics(R, L, list, n, m, top, k);
		n = m;
	}
	g->n_tactics = n;
	g->kernels += n;
	*best = -1;
	return rc ? rc : final_round(R, L, n, best);
}

/* The emitted op's fallback kernel (no tactic, 64-bit indices: valid for
 * any size, what the op runs where no bucket's kernel fits; fuse/emit.c),
 * run once and checked: a plan that would be used. */
static int check_fallback(struct run *R)
{
	struct fs_errors e;
	struct launch F;
	char why[200];
	int rc = prepare(R, &F, NULL, FS_GEN_KERNEL, 1, 1) || fs_gpu_run_once(R, 0, &F, &e);
	unload(R, &F);
	if (rc)
		return -1;
	if (R->o->check && R->o->check(R->o->ctx, &R->g->unfused, &e, why, sizeof(why)))
		fs_gpu_plan_failed(R, "the emitted op's fallback kernel (any size)", why);
	return 0;
}

/* The tuning's outcome in g: the chosen tactic (best, -1: none passed its
 * check, and the fallback kernel stays: the plan fails, naming the first
 * failure), and the next fastest, a finalist if there is another (their
 * times are comparable). */
static void settle(struct run *R, int32_t best, uint32_t n)
{
	struct fs_gpu_result *g = R->g;
	g->chosen = best;
	for (uint32_t i = 0; best < 0 && i < n; i++)
		if (g->tactics[i].rec.failed[0]) {
			char why[240];
			snprintf(why, sizeof(why), "%s: %s", g->tactics[i].rec.name, g->tactics[i].rec.failed);
			fs_gpu_plan_failed(R, "no tactic of the fused kernel passes its check; the first", why);
			break;
		}
	g->runner_up = -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_tactic_run *t = &g->tactics[i], *u = g->runner_up < 0 ? NULL : &g->tactics[g->runner_up];
		if ((int32_t)i != g->chosen && !t->rec.failed[0] &&
		    (!u || t->rec.final > u->rec.final || (t->rec.final == u->rec.final && t->rec.ms < u->rec.ms)))
			g->runner_up = (int32_t)i;
	}
}

/* The winner of a tuning (not a cache hit) into the tuning cache. */
static void record(struct run *R, const struct fs_tune_key *key, int32_t best, uint32_t n)
{
	const struct fs_gpu_result *g = R->g;
	const struct fs_gpu_opts *o = R->o;
	if (!o->cache || g->cache_hit || best < 0 || !o->kernel_key)
		return;
	const struct fs_tactic_run *w = &g->tactics[best];
	struct fs_tune_entry e = {.key = *key, .tactic = w->t, .ms = w->rec.ms, .spread = w->rec.spread, .timed = n, .failed = g->n_failed};
	snprintf(e.name, sizeof(e.name), "%s", w->rec.name);
	if (g->runner_up >= 0) {
		snprintf(e.runner_up, sizeof(e.runner_up), "%s", g->tactics[g->runner_up].rec.name);
		e.runner_up_ms = g->tactics[g->runner_up].rec.ms;
	}
	fs_tune_record(o->cache, &e);
}

/* Each tactic was timed and checked as its exact-size kernel, what runs at
 * the bucket's own size (codegen.h, FS_GEN_EXACT: static dims take fewer
 * registers, and the fastest tactic differs: a softmax at 16384 tokens, 8
 * slots a thread, took 11.1 ms with run-time dims and 9.1 ms exact, the
 * tuner's timing on an H200, where the run-time-dims tuning had chosen 4
 * slots, 9.4 ms). The chosen tactic's kernel L[best] for any size up to
 * the bucket (with no symbols, the same kernel) replaces the fallback
 * R->l[0]: fs_gpu_run checks it after. 0, or -1 (g->error). */
static int install(struct run *R, struct launch *L, int32_t best)
{
	int rc = 0;
	if (best < 0 || !L[best].fn) /* the fallback of fs_gpu_run stays */
		return 0;
	struct launch any = L[best];
	if (R->ks.q.n_bind)
		rc = prepare(R, &any, &R->g->tactics[best].t, FS_GEN_KERNEL, 0, 1);
	else
		memset(&L[best], 0, sizeof(*L));
	if (rc)
		unload(R, &any);
	else {
		unload(R, &R->l[0]);
		R->l[0] = any;
	}
	return rc;
}

/* The tactics (or the cached one) compiled, run, checked and timed in two
 * stages: those of fs_tactics, then the variants of the FS_VARIED fastest
 * (fs_tactic_variants: L2 policies, rows in memory order) timed with them
 * again; then the finalists. The winner becomes R->l[0]. A tactic that
 * fails to compile, or whose result fails the check, is not eligible; a
 * cached one that fails re-tunes; if none is eligible, the fallback stays
 * and the verdict fails, naming the first failure. The emitted op's
 * fallback kernel is checked here too. */
static int tune(struct run *R)
{
	struct fs_gpu_result *g = R->g;
	struct fs_tactic list[FS_MAX_TACTICS];
	struct fs_tune_key key;
	fs_gpu_cache_key(R, &key);
	struct launch *L = fs_xcalloc(FS_MAX_TACTICS, sizeof(*L)); /* kept loaded until one is chosen */
	int32_t best;
	int rc = time_and_pick(R, L, list, &key, &best);
	if (!rc && best < 0 && g->cache_hit) { /* the cached tactic fails its check here: a miss, every tactic again */
		fs_tune_reject(R->o->cache);
		for (uint32_t i = 0; i < g->n_tactics; i++)
			unload(R, &L[i]);
		memset(g->tactics, 0, sizeof(g->tactics));
		rc = time_and_pick(R, L, list, &key, &best);
	}
	uint32_t n = g->n_tactics;
	if (!rc)
		rc = check_fallback(R);
	if (!rc) {
		settle(R, best, n);
		record(R, &key, best, n);
		rc = install(R, L, best);
	}
	for (uint32_t i = 0; i < n; i++)
		unload(R, &L[i]);
	free(L);
	return rc ? -1 : 0;
}

/* The inputs, drawn on the device: copy 0 of each, then the other copies
 * copied from it. */
static int draw_inputs(struct run *R)
{
	const struct prog *p = R->p;
	struct launch F = {0};
	int rc = fs_gpu_build(R, R->ks.fill, 1, 0, 1, &F.module, NULL, NULL);
	for (uint32_t v = 0; v < p->n_in && !rc; v++) {
		const struct ten *t = &p->in[v];
		char name[32];
		snprintf(name, sizeof(name), "fs_fill_%s", fs_dt_suffix(t->dtype));
		fs_devptr ptr = R->dev[(size_t)v * R->rotate];
		long long n = t->n;
		unsigned long long stream = fs_rand_stream(R->o->seed, v);
		int kind = (int)fs_rand_kind_of(t->dtype);
		void *args[] = {&ptr, &n, &stream, &kind};
		int64_t grid = (t->n + 255) / 256;
		grid = grid < 1 ? 1 : grid > 65536 ? 65536 : grid;
		rc = fs_cuda_check(&R->c, R->c.cuModuleGetFunction(&F.fn, F.module, name), "cuModuleGetFunction", R->g->error,
				   sizeof(R->g->error)) ||
		     fs_cuda_check(&R->c, R->c.cuLaunchKernel(F.fn, (unsigned)grid, 1, 1, 256, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel",
				   R->g->error, sizeof(R->g->error));
		for (uint32_t c = 1; c < R->rotate && !rc; c++)
			rc = fs_cuda_check(&R->c, R->c.cuMemcpyDtoD(R->dev[(size_t)v * R->rotate + c], ptr, fs_value_bytes(t)), "cuMemcpyDtoD",
					   R->g->error, sizeof(R->g->error));
	}
	if (!rc)
		rc = fs_cuda_check(&R->c, R->c.cuCtxSynchronize(), "cuCtxSynchronize", R->g->error, sizeof(R->g->error));
	if (F.module)
		R->c.cuModuleUnload(F.module);
	return rc ? -1 : 0;
}

/* The device reference against the CPU's, where the CPU computed one. */
static int check_reference(struct run *R)
{
	const struct prog *p = R->p;
	uint32_t nv = p->n_in + p->n_ops;
	R->cpu_ref = fs_xcalloc(nv + 1, sizeof(fs_devptr));
	for (uint32_t i = 0; i < p->n_ops; i++) {
		const struct ten *t = &R->o->cpu_ref[p->n_in + i];
		if (!R->ks.q.is_output[i]) /* the region's outputs and what the fused kernel writes for later products */
			continue;
		CK(R->c.cuMemAlloc(&R->cpu_ref[p->n_in + i], (size_t)(t->n ? t->n : 1) * sizeof(double)));
		double *mem = NULL; /* a strided output: the values in the layout the kernels write it in */
		if (p->ops[i].out.strided) {
			mem = fs_xmalloc((size_t)(t->n ? t->n : 1) * sizeof(double));
			fs_ten_to_memory(&p->ops[i].out, t->d, mem);
		}
		int bad = fs_cuda_check(&R->c, R->c.cuMemcpyHtoD(R->cpu_ref[p->n_in + i], mem ? mem : t->d, (size_t)t->n * sizeof(double)),
					"cuMemcpyHtoD", R->g->error, sizeof(R->g->error));
		free(mem);
		if (bad)
			return -1;
	}
	if (fs_gpu_measure(R, CPU_REF_BUFS, &R->g->ref_vs_cpu))
		return -1;
	R->g->ref_checked = 1;
	return 0;
}

/* ---- a run: its buffers, its kernels run, checked and timed, then released ----------------- */

/* The unfused run's buffers of the values its kernels write (inputs
 * apart). With matrix products, one each (their comparisons read the
 * operands after the run); else one allocation planned by lifetime (memplan.h):
 * a value shares bytes with those no launch sees alive beside it, as
 * eager's intermediates share the caching allocator's blocks. Poisoned. */
static int alloc_unfused(struct run *R)
{
	const struct prog *p = R->p;
	uint32_t nv = p->n_in + p->n_ops;
	if (R->ks.gemm) {
		for (uint32_t v = p->n_in; v < nv; v++) {
			size_t nb = fs_value_alloc_bytes(fs_prog_value(p, (int32_t)v));
			if (fs_codegen_buffered(p, (int32_t)v)) {
				CK(R->c.cuMemAlloc(&R->dev[(size_t)v * R->rotate], nb));
				CK(R->c.cuMemsetD8(R->dev[(size_t)v * R->rotate], 0xff, nb));
			}
		}
		return 0;
	}
	struct fs_memplan_item *it = fs_xcalloc(nv + 1, sizeof(*it));
	for (uint32_t v = p->n_in; v < nv; v++) {
		it[v].first = UINT32_MAX;
		it[v].last = R->ks.q.is_output[v - p->n_in] ? UINT32_MAX - 1 : 0; /* an output is compared after the run */
	}
	for (uint32_t i = 1; i < R->n; i++) /* R->l[1..n): the unfused kernels in order */
		for (uint32_t j = 0; j < R->l[i].k.n_params; j++) {
			int32_t v = R->l[i].k.value[j];
			if (v < (int32_t)p->n_in)
				continue;
			if (R->l[i].k.write[j])
				it[v].first = i < it[v].first ? i : it[v].first;
			it[v].last = i > it[v].last ? i : it[v].last;
		}
	struct fs_memplan_item *items = fs_xcalloc(nv + 1, sizeof(*items));
	uint32_t *of = fs_xcalloc(nv + 1, sizeof(*of)), m = 0; /* items[k] is value of[k]'s */
	for (uint32_t v = p->n_in; v < nv; v++)
		if (fs_codegen_buffered(p, (int32_t)v)) { /* a view has no buffer; every other value its launch */
			it[v].first = it[v].first == UINT32_MAX ? 0 : it[v].first;
			it[v].bytes = fs_value_alloc_bytes(fs_prog_value(p, (int32_t)v));
			of[m] = v, items[m++] = it[v];
		}
	size_t size = fs_memplan_offsets(items, m, 256);
	int rc = 0;
	if (size) {
		rc = fs_cuda_check(&R->c, R->c.cuMemAlloc(&R->unfused_block, size), "cuMemAlloc (the unfused chain's buffers)", R->g->error,
				   sizeof(R->g->error)) ||
		     fs_cuda_check(&R->c, R->c.cuMemsetD8(R->unfused_block, 0xff, size), "cuMemsetD8", R->g->error, sizeof(R->g->error));
		for (uint32_t k = 0; k < m && !rc; k++)
			R->dev[(size_t)of[k] * R->rotate] = R->unfused_block + items[k].offset;
	}
	free(of);
	free(items);
	free(it);
	return rc ? -1 : 0;
}

/* The fused kernel's outputs, allocated once the unfused run is measured
 * and timed. Where they do not fit beside the unfused chain's block (a
 * softmax of 16384 tokens on an 80 GB card) and no timing needs the chain
 * again (its graphs hold fewer than FS_GRAPH_CALLS calls: no company), the
 * block goes first. */
static int alloc_fused(struct run *R)
{
	const struct prog *p = R->p;
	for (uint32_t v = p->n_in; v < p->n_in + p->n_ops; v++) {
		if (!(R->ks.q.is_output[v - p->n_in] || (R->ks.q.given && R->ks.q.given[v])) || (R->ks.q.pitch && R->ks.q.pitch[v]))
			continue;
		size_t nb = fs_value_alloc_bytes(fs_prog_value(p, (int32_t)v));
		int e = R->c.cuMemAlloc(&R->fused_out[v], nb);
		if (e == CU_OUT_OF_MEMORY && R->unfused_block && R->calls < FS_GRAPH_CALLS) {
			R->c.cuMemFree(R->unfused_block);
			R->unfused_block = 0, R->unfused_gone = 1;
			for (uint32_t u = p->n_in; u < p->n_in + p->n_ops; u++)
				R->dev[(size_t)u * R->rotate] = 0;
			e = R->c.cuMemAlloc(&R->fused_out[v], nb);
		}
		CK(e);
	}
	return 0;
}

/* one side of the final comparison: the fused plan, or (NULL) the unfused chain */
struct plan_side {
	int variant;
	const struct launch *L;
};

static int run_side(struct run *R, const void *what, uint32_t r)
{
	const struct plan_side *s = what;
	return s ? fs_gpu_run_plan(R, s->variant, s->L, r % R->rotate) : run_unfused(R, r % R->rotate);
}


/* The fused plan against the unfused chain, side by side: one interleaved
 * set of both, and the speedup as the median of the rounds' ratios
 * (unfused / fused, each round's pair run back to back) with its 95%
 * interval. Timed minutes apart instead, at the two ends of a tuning, one
 * product read 0.79 ms and then 0.88 ms: a heavy GEMM's clocks fall as the
 * device heats, and a comparison across that drift calls a fusion slower (or
 * faster) than it is. Where the unfused chain's buffers had to go to make room
 * for the fused outputs (alloc_fused), its own earlier time stands and the
 * interval combines the two medians' (apart). */
static int compare(struct run *R, const struct timing *unfused_alone)
{
	struct fs_gpu_result *g = R->g;
	struct plan_side fused = {g->variant, R->ks.kernel && g->variant == 0 ? &R->l[0] : NULL};
	uint32_t reps = R->o->reps;
	struct timing tm[2] = {{0, 0, 0}, {0, 0, 0}};
	float *rounds = fs_xmalloc(2 * (size_t)reps * sizeof(float));
	const void *what[2] = {&fused, NULL};
	g->apart = R->unfused_gone;
	int rc = fs_gpu_time_set(R, run_side, what, g->apart ? 1 : 2, reps, NULL, tm, rounds);
	if (!rc && g->apart) {
		tm[1] = *unfused_alone;
		double f = tm[0].ms, u = tm[1].ms;
		g->speedup = u / f;
		g->speedup_lo = (u - tm[1].ci) / (f + tm[0].ci);
		g->speedup_hi = f > tm[0].ci ? (u + tm[1].ci) / (f - tm[0].ci) : HUGE_VAL;
	} else if (!rc) {
		for (uint32_t r = 0; r < reps; r++)
			rounds[r] = rounds[reps + r] / rounds[r];
		fs_gpu_median_interval(rounds, reps, &g->speedup, &g->speedup_lo, &g->speedup_hi);
	}
	free(rounds);
	g->fused_ms = tm[0].ms, g->fused_ci = tm[0].ci;
	g->unfused_ms = tm[1].ms, g->unfused_ci = tm[1].ci;
	return rc ? -1 : 0;
}

static int execute(struct run *R)
{
	const struct prog *p = R->p;
	struct fs_gpu_result *g = R->g;
	uint32_t nv = p->n_in + p->n_ops;
	size_t in_bytes = 0;
	int l2 = 0;
	CK(R->c.cuDeviceGetAttribute(&l2, CU_ATTR_L2, R->c.device));
	CK(R->c.cuStreamCreate(&R->stream, 0));
	/* the copy bandwidth first, while the memory is free: of 1 GiB, and of the
	 * fused kernel's own traffic (a small kernel's ramp and tail cost a copy too) */
	if (fs_gpu_copy_bandwidth(R, (size_t)1 << 30, l2, &g->copy_gbs) ||
	    (!R->ks.gemm && fs_gpu_copy_bandwidth(R, (size_t)(R->l[0].k.bytes / 2), l2, &g->copy_same_gbs)))
		return -1;
	for (uint32_t i = 0; i < p->n_in; i++)
		in_bytes += fs_value_bytes(&p->in[i]);
	size_t want = 2 * (size_t)l2; /* rotate input copies until they exceed twice L2 */
	R->rotate = in_bytes ? (uint32_t)((want + in_bytes - 1) / in_bytes) : 1;
	R->rotate = R->rotate < 1 ? 1 : R->rotate > 8 ? 8 : R->rotate;
	g->rotate = R->rotate;
	R->dev = fs_xcalloc((size_t)nv * R->rotate + 1, sizeof(fs_devptr));
	R->fused_out = fs_xcalloc(nv + 1, sizeof(fs_devptr));
	CK(R->c.cuMemAlloc(&R->stats, 64));
	for (uint32_t v = 0; v < p->n_in; v++)
		for (uint32_t c = 0; c < R->rotate; c++)
			CK(R->c.cuMemAlloc(&R->dev[(size_t)v * R->rotate + c], fs_value_alloc_bytes(&p->in[v])));
	if (alloc_unfused(R))
		return -1;
	R->refbuf = fs_xcalloc(nv + 1, sizeof(fs_devptr));
	int skip = draw_inputs(R) ? -1 : R->ks.gemm ? fs_gpu_gemm_setup_products(R) : 0;
	if (skip)
		return skip < 0 ? -1 : 0;
	if (run_unfused(R, 0))
		return -1;
	CK(R->c.cuCtxSynchronize());
	g->reps = R->o->reps;
	struct timing tu;
	const void *none = NULL;
	if (fs_gpu_measure(R, UNFUSED_BUFS, &g->unfused) || (R->o->cpu_ref && check_reference(R)) ||
	    fs_gpu_time_set(R, run_unfused_seq, &none, 1, R->o->reps, NULL, &tu, NULL) || alloc_fused(R))
		return -1;
	if ((R->ks.kernel && tune(R)) || (R->ks.gemm && fs_gpu_gemm_time_variants(R)) ||
	    fs_gpu_run_once(R, g->variant, R->ks.kernel && !g->variant ? &R->l[0] : NULL, &g->fused) || compare(R, &tu))
		return -1;
	for (uint32_t k = 0; k < R->ks.gp.n; k++)
		g->flops += 2.0 * (double)(R->ks.gp.ref[k].mm.M * R->ks.gp.ref[k].mm.N * R->ks.gp.ref[k].mm.batch) * (double)R->ks.gp.ref[k].mm.K;
	g->fused_bytes = g->variant == 1 ? R->absorbed.k.bytes : g->variant == 2 ? R->epi.k.bytes : R->ks.kernel ? R->l[0].k.bytes : 0;
	for (uint32_t k = 0; g->variant != 1 && k < R->ks.gp.n_calls; k++) /* the generated GEMM: its operands, not its product's output */
		g->fused_bytes += g->variant == 2 && k == R->ks.gen.call ? R->gl[k].k.bytes - R->ks.gp.calls[k].mm.M * R->ks.gp.calls[k].mm.N * 2 : R->gl[k].k.bytes;
	for (uint32_t i = 1; i < R->n; i++)
		g->unfused_bytes += R->l[i].k.bytes;
	g->unfused_launches = R->n - 1;
	g->ran = 1;
	return 0;
}

/* The chosen fused kernel again, compiled with FMA contraction off (mode
 * KERNEL, fmad 0) or rounding every op like eager (EMULATE), run once, checked. */
static int triage_run(struct run *R, enum fs_gen mode, struct fs_errors *e)
{
	struct launch L;
	int rc = prepare(R, &L, &R->l[0].k.tactic, mode, 0, mode == FS_GEN_EMULATE) || fs_gpu_run_once(R, 0, &L, e);
	unload(R, &L);
	return rc ? -1 : 0;
}

int fs_gpu_present(void)
{
	struct fs_cuda c;
	fs_cuda_open(&c);
	int yes = c.nvrtc && c.driver;
	fs_cuda_close(&c);
	return yes;
}

/* The generated set's kernels into the run's launches, its counts and (a
 * refusal) its reason, the last error of d, into g. */
static void adopt(struct run *R, int refused, const struct fs_diags *d)
{
	struct fs_kernels *ks = &R->ks;
	struct fs_gpu_result *g = R->g;
	R->n = ks->n;
	for (uint32_t i = 0; i < ks->n; i++)
		if (ks->l[i].gc)
			fs_gpu_gemm_lt_launch(&R->l[i], ks->l[i].gc, 0);
		else
			take(&R->l[i], &ks->l[i].k, FS_GEN_KERNEL);
	take(&R->store, &ks->store, FS_GEN_REF_STORE);
	take(&R->ref, &ks->ref, FS_GEN_REF);
	take(&R->ref64, &ks->ref64, FS_GEN_REF_F64);
	take(&R->epi, &ks->epi, FS_GEN_EPILOGUE);
	g->kernels = ks->kernels, g->unfused_kernels = ks->unfused_kernels, g->ref_kernels = ks->ref_kernels;
	g->refused = refused;
	if (refused)
		snprintf(g->error, sizeof(g->error), "%s", fs_diags_last(d));
}

/* The generated kernels of every plan compiled (loaded where exec): the
 * fused kernel and one per unfused op, the products' references and the
 * generated GEMM, the references. 0, or -1 with g->error. */
static int compile_set(struct run *R, int exec)
{
	int rc = 0;
	for (uint32_t i = 0; i < R->n && !rc; i++)
		if (R->l[i].k.source) /* not a product, nor the fused slot of products alone */
			rc = fs_gpu_build(R, R->l[i].k.source, 1, 1, exec, &R->l[i].module, "fs_k", &R->l[i].fn);
	if (R->ks.gemm && !rc)
		rc = fs_gpu_gemm_prepare_products(R, exec);
	if (R->ks.gemm && R->ks.kernel && !rc)
		rc = fs_gpu_gemm_prepare_gen(R, exec);
	struct launch *refs[] = {&R->store, &R->ref, &R->ref64};
	for (uint32_t k = 0; k < 3 && !rc; k++)
		if (refs[k]->k.source)
			rc = fs_gpu_build(R, refs[k]->k.source, 1, 1, exec, &refs[k]->module, "fs_k", &refs[k]->fn);
	return rc;
}

/* The tactics a GPU would time compiled, with no GPU to run them
 * (fs_kernels_tactics: one of each kind, or with compile_all every one).
 * 0, or -1 with g->error. */
static int compile_tactics(struct run *R)
{
	const struct fs_gpu_opts *o = R->o;
	struct fs_gpu_result *g = R->g;
	int rc = 0;
	struct fs_tactic list[FS_MAX_TACTICS];
	uint32_t n = fs_kernels_tactics(&R->l[0].k, o->compile_all, list);
	n--; /* the first is R->l[0] */
	fs_progress_say(o->progress, "compiling %u more tactics of the fused kernel", n);
	struct launch *L = fs_xcalloc(n ? n : 1, sizeof(*L));
	char (*why)[192] = fs_xcalloc(n ? n : 1, sizeof(*why));
	g->kernels += n;
	if (prepare_tactics(R, L, list + 1, n, FS_GEN_KERNEL, 0, why)) {
		for (uint32_t i = 0; i < n && !rc; i++)
			if (why[i][0])
				snprintf(g->error, sizeof(g->error), "%s", why[i]), rc = -1;
	}
	for (uint32_t i = 0; i < n; i++)
		unload(R, &L[i]);
	free(L);
	free(why);
	return rc;
}

/* What the run allocated on the device. */
static void release_device(struct run *R)
{
	const struct prog *p = R->p;
	for (uint32_t v = 0; R->dev && v < (R->unfused_block ? p->n_in : p->n_in + p->n_ops) * R->rotate; v++)
		if (R->dev[v])
			R->c.cuMemFree(R->dev[v]);
	if (R->unfused_block)
		R->c.cuMemFree(R->unfused_block);
	for (uint32_t v = 0; v < p->n_in + p->n_ops; v++) {
		if (R->fused_out && R->fused_out[v])
			R->c.cuMemFree(R->fused_out[v]);
		if (R->cpu_ref && R->cpu_ref[v])
			R->c.cuMemFree(R->cpu_ref[v]);
	}
	for (uint32_t v = 0; R->refbuf && v < p->n_in + p->n_ops; v++)
		if (R->refbuf[v])
			R->c.cuMemFree(R->refbuf[v]);
	for (uint32_t k = 0; k < R->ks.gp.n_calls; k++) {
		if (R->catout[k])
			R->c.cuMemFree(R->catout[k]);
		for (uint32_t r = 0; R->wcat && r < R->rotate; r++) {
			if (R->wcat[k * R->rotate + r])
				R->c.cuMemFree(R->wcat[k * R->rotate + r]);
			if (R->bcat[k * R->rotate + r])
				R->c.cuMemFree(R->bcat[k * R->rotate + r]);
		}
	}
	for (uint32_t i = 0; R->gw && R->ks.gen.nm == 2 && i < FS_GEMM_GEN_TACTICS * R->rotate; i++)
		if (R->gw[i])
			R->c.cuMemFree(R->gw[i]);
	for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS; t++)
		if (R->gen_module[t])
			R->c.cuModuleUnload(R->gen_module[t]);
	if (R->stats)
		R->c.cuMemFree(R->stats);
	if (R->stream)
		R->c.cuStreamDestroy(R->stream);
}

/* Everything the run allocated, on the device and here (the fused
 * kernel's source taken for the report first). */
static void release_run(struct run *R)
{
	if (R->c.driver)
		release_device(R);
	for (uint32_t i = 0; i < R->n; i++)
		unload(R, &R->l[i]);
	unload(R, &R->ref);
	unload(R, &R->ref64);
	for (uint32_t k = 0; k < FS_GEMM_MAX; k++) {
		unload(R, &R->gl[k]);
		unload(R, &R->refg[k]);
		unload(R, &R->cmp64[k]);
	}
	unload(R, &R->absorbed);
	unload(R, &R->store);
	unload(R, &R->epi);
	free(R->gw);
	if (R->lt.handle)
		fs_lt_close(&R->lt);
	fs_kernels_release(&R->ks);
	free(R->refbuf);
	free(R->wcat);
	free(R->bcat);
	free(R->dev);
	free(R->fused_out);
	free(R->cpu_ref);
	free(R->l);
}


/* CUDA opened where o asks to compile or execute (generation alone needs
 * neither NVRTC nor the driver), the machine said in g; the run's options:
 * o, compiling only where NVRTC is there (*local). */
static void open_cuda(struct run *R, const struct fs_gpu_opts *o, struct fs_gpu_opts *local)
{
	struct fs_gpu_result *g = R->g;
	if (o->compile || o->execute)
		fs_cuda_open(&R->c);
	fs_cuda_arch(&R->c, g->arch, sizeof(g->arch));
	if (R->c.nvrtc)
		snprintf(g->nvrtc, sizeof(g->nvrtc), "NVRTC %d.%d", R->c.nvrtc_major, R->c.nvrtc_minor);
	if (R->c.driver)
		snprintf(g->device, sizeof(g->device), "%.100s (sm_%d%d, %d SMs)", R->c.name, R->c.cc_major, R->c.cc_minor, R->c.sms);
	*local = *o;
	local->compile = o->compile && R->c.nvrtc; /* no NVRTC: generated only, said in g->skipped */
	R->o = local;
	R->calls = local->graph_calls;
}

/* Once the kernels are compiled: why they do not run (g->skipped), or
 * their run, then with o->triage the chosen fused kernel compiled with FMA
 * contraction off, and rounding every op like eager. */
static int run_or_skip(struct run *R, const struct fs_gpu_opts *o)
{
	struct fs_gpu_result *g = R->g;
	int rc = 0;
	if (!o->compile)
		snprintf(g->skipped, sizeof(g->skipped), "kernels generated only, not compiled");
	else if (!R->c.nvrtc)
		snprintf(g->skipped, sizeof(g->skipped), "NVRTC not found: kernels not compiled, execution skipped");
	else if (!R->c.driver)
		snprintf(g->skipped, sizeof(g->skipped), "execution skipped: %.200s", R->c.why_not);
	else if (!o->execute)
		snprintf(g->skipped, sizeof(g->skipped), "execution not asked for (--cpu-only)");
	else
		rc = execute(R);
	if (!rc && g->ran && o->triage && R->ks.kernel && !g->variant) {
		rc = triage_run(R, FS_GEN_KERNEL, &g->no_fma) || triage_run(R, FS_GEN_EMULATE, &g->emulated) ? -1 : 0;
		g->triaged = !rc;
	}
	return rc;
}

int fs_gpu_run(const struct prog *p, const struct fs_gpu_opts *o, struct fs_gpu_result *g)
{
	struct run R = {.p = p, .g = g};
	struct fs_gpu_opts local;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(g, 0, sizeof(*g));
	g->chosen = g->runner_up = -1;
	open_cuda(&R, o, &local);
	int exec = local.compile && o->execute && R.c.driver;
	fs_progress_say(o->progress, "%s: %s", o->bucket ? o->bucket : "kernels",
			!local.compile ? "generating the kernels (no NVRTC to compile them)"
			: exec ? "compiling the kernels (NVRTC), running and checking them on the GPU"
			       : "compiling the kernels (NVRTC), not running them");
	R.l = fs_xcalloc(p->n_ops + 2, sizeof(*R.l));
	struct fs_kernels_opts ko = {.cpu_ref = o->cpu_ref != NULL, .compile = local.compile};
	struct fs_diags d; /* a refusal is the result's (g->error), not a fault of the command */
	fs_diags_init(&d);
	int rc = fs_kernels_generate(p, &ko, &R.ks, &d);
	adopt(&R, rc != 0, &d);
	fs_diags_release(&d);
	g->row = R.l[0].k.row;
	if (!rc && local.compile)
		rc = compile_set(&R, exec);
	if (!rc && local.compile && !exec && R.ks.kernel)
		rc = compile_tactics(&R);
	if (!rc)
		rc = run_or_skip(&R, o);
	if (R.n) /* the fused kernel's source goes to the report */
		g->fused_source = R.l[0].k.source, R.l[0].k.source = NULL;
	release_run(&R);
	fs_cuda_close(&R.c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	g->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	return rc;
}

void fs_gpu_release(struct fs_gpu_result *g)
{
	free(g->fused_source);
	g->fused_source = NULL;
}
