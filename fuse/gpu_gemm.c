/*
 * gpu_gemm.c: a region's matrix products on the GPU (gpu_run.h): eager's
 * cuBLASLt calls, the fused plan's (concatenated weights, cuBLASLt's
 * epilogue), the generated GEMM (gemm_gen.h), their float64 reference, and
 * the fused plan's variants timed side by side.
 */
#include "gpu_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)FS_GEMM_MAX <= (int)FS_MAX_PRODUCTS, "fs_lt_algos holds every product of a plan");

/* What a product moves: its operands read, its output written. */
static int64_t lt_bytes(const struct fs_gemm_call *c)
{
	const struct fs_lt_mm *m = &c->mm;
	int64_t a = m->M * m->K * (m->stride_a ? m->batch : 1), b = m->K * m->N * (m->stride_b ? m->batch : 1), d = m->M * m->N * m->batch;
	return (a + b + d + (m->bias ? m->N : 0) + (m->add_c ? d : 0)) * (int64_t)fs_dtype_size((enum fs_dtype)m->dtype);
}

void fs_gpu_gemm_lt_launch(struct launch *L, const struct fs_gemm_call *c, uint32_t slot)
{
	memset(L, 0, sizeof(*L));
	L->gc = c, L->slot = slot, L->k.bytes = lt_bytes(c);
}

/* The float64 reference kernels of every product (fs_ref_gemm, with the
 * check of its dtype, fs_ref_cmp), and the check of the CPU's reference
 * (kernels.h): compiled, and loaded when `load`. */
int fs_gpu_gemm_prepare_products(struct run *R, int load)
{
	struct fs_gpu_result *g = R->g;
	for (uint32_t k = 0; k < R->ks.gp.n; k++)
		for (int x = 0; x < (R->o->cpu_ref ? 2 : 1); x++) {
			struct launch *L = x ? &R->cmp64[k] : &R->refg[k];
			if (fs_gpu_build(R, R->ks.product_ref[k][x], 1, 1, load, &L->module, x ? "fs_ref_cmp" : "fs_ref_gemm", &L->fn) ||
			    (load && !x && /* the same module checks the product's dtype */
			     fs_cuda_check(&R->c, R->c.cuModuleGetFunction(&R->cmp[k].fn, L->module, "fs_ref_cmp"), "cuModuleGetFunction", g->error,
					   sizeof(g->error))))
				return -1;
		}
	return 0;
}

/* Product k's float64 reference: a product after the fused kernel reads
 * the reference's own double value of its operand. */
static int reference_product(struct run *R, uint32_t k)
{
	const struct fs_gemm_call *c = &R->ks.gp.ref[k];
	const struct fs_lt_mm *m = &c->mm;
	CK(R->c.cuMemAlloc(&R->refbuf[c->out], (size_t)(m->M * m->N * m->batch) * sizeof(double)));
	fs_devptr a = c->post ? R->refbuf[c->a] : fs_gpu_buffer(R, c->a, 0, UNFUSED_BUFS), b = fs_gpu_buffer(R, c->b, 0, UNFUSED_BUFS);
	fs_devptr d = R->refbuf[c->out];
	fs_devptr bias = c->bias >= 0 ? fs_gpu_buffer(R, c->bias, 0, UNFUSED_BUFS) : c->c >= 0 ? fs_gpu_buffer(R, c->c, 0, UNFUSED_BUFS) : 0;
	long long M = m->M, N = m->N, K = m->K, sa = m->stride_a, sb = m->stride_b, bm = m->add_c ? m->N : 0;
	int bnk = m->b_nk;
	void *args[] = {&a, &b, &bias, &d, &M, &N, &K, &sa, &sb, &bm, &bnk};
	CK(R->c.cuLaunchKernel(R->refg[k].fn, (unsigned)((N + 63) / 64), (unsigned)((M + 63) / 64), (unsigned)m->batch, 256, 1, 1, 0, R->stream,
			       args, NULL));
	return 0;
}

/* The products' float64 reference, once, on copy 0 of the inputs: those
 * reading inputs, then the reference of what the fused kernel writes for
 * the later ones (stored in double), then those. */
static int reference_products(struct run *R)
{
	const struct prog *p = R->p;
	for (uint32_t k = 0; k < R->ks.gp.n; k++)
		if (!R->ks.gp.ref[k].post && reference_product(R, k))
			return -1;
	if (R->store.fn) {
		for (uint32_t v = p->n_in; v < p->n_in + p->n_ops; v++)
			if (R->ks.gp.kernel_out[v])
				CK(R->c.cuMemAlloc(&R->refbuf[v], (size_t)fs_prog_value(p, (int32_t)v)->n * sizeof(double)));
		if (fs_gpu_launch(R, &R->store, 0, UNFUSED_BUFS))
			return -1;
	}
	for (uint32_t k = 0; k < R->ks.gp.n; k++)
		if (R->ks.gp.ref[k].post && reference_product(R, k))
			return -1;
	CK(R->c.cuCtxSynchronize());
	return 0;
}

/* A fused group's concatenated weight (and bias), built once per input copy
 * as AutoDeploy's fuse_gemms does at load time, and its output buffer. */
static int concatenate(struct run *R, uint32_t k)
{
	const struct fs_gemm_call *c = &R->ks.gp.calls[k];
	size_t es = fs_dtype_size((enum fs_dtype)c->mm.dtype), K = (size_t)c->mm.K;
	CK(R->c.cuMemAlloc(&R->catout[k], (size_t)(c->mm.M * c->mm.N) * es));
	for (uint32_t r = 0; r < R->rotate; r++) {
		fs_devptr *w = &R->wcat[k * R->rotate + r], *b = &R->bcat[k * R->rotate + r];
		CK(R->c.cuMemAlloc(w, (size_t)c->mm.N * K * es));
		if (c->mm.bias)
			CK(R->c.cuMemAlloc(b, (size_t)c->mm.N * es));
		for (uint32_t j = 0; j < c->n_members; j++) {
			size_t n = (size_t)((j + 1 < c->n_members ? c->col[j + 1] : c->mm.N) - c->col[j]), at = (size_t)c->col[j];
			CK(R->c.cuMemcpyDtoD(*w + at * K * es, fs_gpu_buffer(R, c->member_b[j], r, UNFUSED_BUFS), n * K * es));
			if (c->mm.bias)
				CK(R->c.cuMemcpyDtoD(*b + at * es, fs_gpu_buffer(R, c->member_bias[j], r, UNFUSED_BUFS), n * es));
		}
	}
	return 0;
}

/* A product's tuning-cache key: its exact description (cuBLASLt's
 * heuristic list depends on every size), cuBLASLt's version for the
 * compiler's. */
/* A product's tuning-cache key: the hash of its description (then of
 * `more`, if any), its rows as the bucket. */
static void product_key(const struct run *R, const char *desc, const char *more, int64_t M, struct fs_tune_key *k)
{
	uint64_t h = fs_hash_bytes(desc, strlen(desc), 0x6c74);
	fs_gpu_cache_key(R, k);
	if (more)
		h = fs_hash_bytes(more, strlen(more), h);
	snprintf(k->kernel, sizeof(k->kernel), "%016llx", (unsigned long long)h);
	snprintf(k->bucket, sizeof(k->bucket), "M=%lld", (long long)M);
}

static void lt_key(const struct run *R, const struct fs_lt_mm *m, struct fs_tune_key *k)
{
	char d[320];
	snprintf(d, sizeof(d), "cuBLASLt dt%u M%lld N%lld K%lld b%lld sa%lld sb%lld sd%lld nk%u relu%u gelu%u bias%u c%u ld%lld", m->dtype,
		 (long long)m->M, (long long)m->N, (long long)m->K, (long long)m->batch, (long long)m->stride_a, (long long)m->stride_b,
		 (long long)m->stride_d, m->b_nk, m->relu, m->gelu, m->bias, m->add_c, (long long)m->ldd);
	product_key(R, d, NULL, m->M, k);
	snprintf(k->nvrtc, sizeof(k->nvrtc), "cuBLASLt %zu", R->lt.version);
}

/* One product timed under each of cuBLASLt's heuristic algorithms, the
 * fastest chosen and kept in the tuning cache (a hit times none); said in
 * g->gemm. */
static int time_product(struct run *R, struct launch *L, const char *what)
{
	struct timing tm[FS_LT_ALGOS] = {{0, 0, 0}};
	const void *one = L;
	struct fs_tune_key key;
	struct fs_tune_entry hit;
	size_t at = strlen(R->g->gemm);
	lt_key(R, &L->lt.mm, &key);
	if (R->o->cache && fs_tune_lookup(R->o->cache, &key, &hit) == 0) {
		if (hit.tactic.per <= L->lt.n_algos) {
			L->lt.chosen = hit.tactic.per - 1u;
			snprintf(R->g->gemm + at, sizeof(R->g->gemm) - at, "; %s: heuristic #%u of %u (tuning cache hit)", what,
				 L->lt.chosen + 1, L->lt.n_algos);
			return 0;
		}
		fs_tune_reject(R->o->cache); /* an algorithm cuBLASLt no longer offers: timed again */
	}
	uint32_t win = 0;
	for (uint32_t a = 0; a < L->lt.n_algos; a++) {
		L->lt.chosen = a;
		if (fs_gpu_time_set(R, fs_gpu_run_fused, &one, 1, R->o->reps, NULL, &tm[a], NULL))
			return -1;
		win = tm[a].ms < tm[win].ms ? a : win;
	}
	L->lt.chosen = win;
	snprintf(R->g->gemm + at, sizeof(R->g->gemm) - at, "; %s: heuristic #%u of %u, %.4f ms (#1 %.4f)", what, win + 1, L->lt.n_algos,
		 tm[win].ms, tm[0].ms);
	if (R->o->cache) {
		struct fs_tune_entry e = {.key = key, .tactic = {.vec = 1, .threads = 1, .per = (uint16_t)(win + 1)}, .ms = tm[win].ms,
					  .spread = tm[win].spread,
					  .timed = L->lt.n_algos};
		snprintf(e.name, sizeof(e.name), "heuristic #%u", win + 1);
		fs_tune_record(R->o->cache, &e);
	}
	return 0;
}

/* A product's timings in graphs of its own calls (fs_gpu_graph_calls of
 * what it moves), not the region's: one product tuned in two regions
 * (gate / up alone, then the MLP) keeps one cache entry. */
static uint32_t own_calls(struct run *R, const struct fs_gemm_call *c)
{
	uint32_t calls = R->calls;
	R->calls = fs_gpu_graph_calls((double)lt_bytes(c));
	return calls;
}

static int tune_product(struct run *R, struct launch *L, const char *what)
{
	uint32_t calls = own_calls(R, L->gc);
	int rc = time_product(R, L, what);
	R->calls = calls;
	return rc;
}

/* The weight each tactic of the generated GEMM reads, on every input copy:
 * one product's own, or a group's interleaved (fs_gemm_gen_row), built once
 * like the concatenated weights. */
static int gen_weights(struct run *R)
{
	const struct fs_gemm_gen *gg = &R->ks.gen;
	size_t K = (size_t)gg->K;
	R->gw = fs_xcalloc((size_t)FS_GEMM_GEN_TACTICS * R->rotate + 1, sizeof(fs_devptr));
	for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS; t++)
		for (uint32_t r = 0; r < R->rotate && R->gen_fn[t]; r++) {
			fs_devptr *w = &R->gw[t * R->rotate + r];
			if (gg->nm == 1) {
				*w = fs_gpu_buffer(R, gg->weight[0], r, UNFUSED_BUFS);
				continue;
			}
			const struct fs_gemm_gen_tactic *tc = &fs_gemm_gen_tactics[t];
			int64_t G = tc->wn / gg->nm, rows = fs_gemm_gen_rows(gg, tc);
			CK(R->c.cuMemAlloc(w, (size_t)rows * K * 2));
			CK(R->c.cuMemsetD8(*w, 0, (size_t)rows * K * 2));
			for (int64_t x = 0; x < gg->Nm; x += G)
				for (uint32_t m = 0; m < gg->nm; m++) {
					size_t n = (size_t)(gg->Nm - x < G ? gg->Nm - x : G);
					CK(R->c.cuMemcpyDtoD(*w + (fs_devptr)fs_gemm_gen_row(gg, tc, m, x) * K * 2,
							     fs_gpu_buffer(R, gg->weight[m], r, UNFUSED_BUFS) + (fs_devptr)x * K * 2, n * K * 2));
				}
		}
	return 0;
}

/* The generated GEMM's kernel under every tactic (kernels.h), compiled for
 * sm_90a (and loaded when `load`); has_gen stays 0, with why, where the
 * region or the machine does not allow it. */
int fs_gpu_gemm_prepare_gen(struct run *R, int load)
{
	struct fs_gpu_result *g = R->g;
	if (R->ks.gen_planned && load && (R->c.cc_major < 8 || !R->c.cuTensorMapEncodeTiled)) {
		snprintf(R->gen_why, sizeof(R->gen_why), "it needs sm_80 or later and a driver with cuTensorMapEncodeTiled");
		return 0;
	}
	if (!R->epi.k.source) {
		snprintf(R->gen_why, sizeof(R->gen_why), "%s", R->ks.gen_why);
		return 0;
	}
	R->has_gen = 1;
	/* each tactic the device runs; without one, the first of each kind (TMA + wgmma for sm_90a,
	 * the portable mma.sync), or with compile_all each */
	uint8_t kinds = 0;
	for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS; t++) {
		const struct fs_gemm_gen_tactic *tc = &fs_gemm_gen_tactics[t];
		if (load && !fs_gemm_gen_runs_on(tc, R->c.cc_major, R->c.cc_minor))
			continue;
		if (!load && !R->o->compile_all && (kinds & (1u << tc->portable)))
			continue;
		kinds |= (uint8_t)(1u << tc->portable);
		g->kernels++, g->gemm_kernels++;
		if (fs_gpu_build_for(R, tc->portable ? g->arch : "sm_90a", R->ks.gen_source[t], 1, 1, load, &R->gen_module[t], "fs_gemm",
				     &R->gen_fn[t]))
			return -1;
	}
	return 0;
}

/* cuBLASLt loaded, every product planned, the fused groups' weights
 * concatenated, the float64 reference computed. 0, 1 when cuBLASLt is
 * missing (said in g->skipped), or -1. */
int fs_gpu_gemm_setup_products(struct run *R)
{
	struct fs_gpu_result *g = R->g;
	char why[200];
	if (fs_lt_open(&R->lt, &R->c, why, sizeof(why))) {
		snprintf(g->skipped, sizeof(g->skipped), "execution skipped: %.200s", why);
		return 1;
	}
	snprintf(g->gemm, sizeof(g->gemm), "cuBLASLt %zu", R->lt.version);
	for (uint32_t i = 1; i < R->n; i++)
		if (R->l[i].gc && fs_lt_plan(&R->lt, &R->l[i].gc->mm, &R->l[i].lt, g->error, sizeof(g->error)))
			return -1;
	R->wcat = fs_xcalloc((size_t)R->ks.gp.n_calls * R->rotate + 1, sizeof(fs_devptr));
	R->bcat = fs_xcalloc((size_t)R->ks.gp.n_calls * R->rotate + 1, sizeof(fs_devptr));
	for (uint32_t k = 0; k < R->ks.gp.n_calls; k++) {
		fs_gpu_gemm_lt_launch(&R->gl[k], &R->ks.gp.calls[k], k);
		if (fs_lt_plan(&R->lt, &R->ks.gp.calls[k].mm, &R->gl[k].lt, g->error, sizeof(g->error)) ||
		    (R->ks.gp.calls[k].n_members && concatenate(R, k)))
			return -1;
	}
	if (R->ks.gp.absorbs) {
		fs_gpu_gemm_lt_launch(&R->absorbed, &R->ks.gp.absorbed, 0);
		if (fs_lt_plan(&R->lt, &R->ks.gp.absorbed.mm, &R->absorbed.lt, g->error, sizeof(g->error)))
			return -1;
	}
	if (R->has_gen && gen_weights(R))
		return -1;
	return reference_products(R);
}

static int run_variant(struct run *R, const void *what, uint32_t r)
{
	int variant = *(const int *)what;
	return fs_gpu_run_plan(R, variant, !variant && R->ks.kernel ? &R->l[0] : NULL, r % R->rotate);
}

/* The generated GEMM alone under tactic *what, or (-1) the plain product
 * of the same shape by cuBLASLt (its fused plan's product). */
static int run_gen(struct run *R, const void *what, uint32_t r)
{
	int t = *(const int *)what;
	if (t < 0)
		return fs_gpu_launch(R, &R->gl[R->ks.gen.call], r % R->rotate, FUSED_BUFS);
	R->gen_tactic = (uint32_t)t;
	return fs_gpu_gemm_launch_gen(R, r % R->rotate);
}

/* The generated GEMM's tuning-cache key: the product's sizes, the tactics
 * (a recorded one is an index into them), the epilogue's source; NVRTC's
 * version. */
static void gen_key(const struct run *R, struct fs_tune_key *k)
{
	const struct fs_gemm_gen *gg = &R->ks.gen;
	char d[1024];
	size_t at = (size_t)snprintf(d, sizeof(d), "generated GEMM M%lld N%lld K%lld nm%u", (long long)gg->M, (long long)gg->Nm,
				     (long long)gg->K, gg->nm);
	for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS && at + 64 < sizeof(d); t++) {
		d[at++] = ';';
		fs_gemm_gen_name(&fs_gemm_gen_tactics[t], d + at, sizeof(d) - at);
		at += strlen(d + at);
	}
	product_key(R, d, R->epi.k.source, gg->M, k);
}

/* The generated GEMM's tactics timed side by side with cuBLASLt's plain
 * product of the same shape, each checked; the fastest that passes is kept
 * (gen_tactic), in the tuning cache too, said in g->gemm with its rate and
 * its share of cuBLASLt's, the others after it. A cache hit times the
 * recorded tactic alone beside the plain product. has_gen cleared where
 * none passes. */
static int time_gen(struct run *R)
{
	static const int ids[FS_GEMM_GEN_TACTICS + 1] = {-1, 0, 1, 2, 3, 4, 5};
	const void *what[FS_GEMM_GEN_TACTICS + 1] = {&ids[0]};
	struct fs_gpu_result *g = R->g;
	struct timing tm[FS_GEMM_GEN_TACTICS + 1];
	struct fs_tune_key key;
	struct fs_tune_entry hit;
	uint32_t k = 1;
	gen_key(R, &key);
	int found = R->o->cache && fs_tune_lookup(R->o->cache, &key, &hit) == 0;
	int cached = found && hit.tactic.per >= 1 && hit.tactic.per <= FS_GEMM_GEN_TACTICS && R->gen_fn[hit.tactic.per - 1];
	if (found && !cached)
		fs_tune_reject(R->o->cache); /* a tactic not compiled here: every tactic timed */
	for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS; t++)
		if (R->gen_fn[t] && (!cached || t + 1 == hit.tactic.per))
			what[k++] = &ids[t + 1];
	if (fs_gpu_time_set(R, run_gen, what, k, R->o->reps, NULL, tm, NULL))
		return -1;
	/* every tactic checked; the fastest that passes is chosen */
	int ok[FS_GEMM_GEN_TACTICS + 1] = {0}, best = -1;
	char why[FS_GEMM_GEN_TACTICS + 1][200];
	for (uint32_t i = 1; i < k; i++) {
		struct fs_errors e = {0};
		why[i][0] = '\0';
		R->gen_tactic = (uint32_t)*(const int *)what[i];
		if (fs_gpu_run_once(R, 2, NULL, &e))
			return -1;
		ok[i] = !(R->o->check && R->o->check(R->o->ctx, &g->unfused, &e, why[i], sizeof(why[i])));
		if (ok[i] && (best < 0 || tm[i].ms < tm[best].ms))
			best = (int)i;
	}
	const struct fs_lt_mm *m = &R->ks.gp.calls[R->ks.gen.call].mm;
	double flop = 2.0 * (double)m->M * (double)m->N * (double)m->K;
	size_t at = strlen(g->gemm);
	char name[64];
	if (best > 0) {
		int t = *(const int *)what[best];
		R->gen_tactic = (uint32_t)t;
		fs_gemm_gen_name(&fs_gemm_gen_tactics[t], name, sizeof(name));
		at += (size_t)snprintf(g->gemm + at, at < sizeof(g->gemm) ? sizeof(g->gemm) - at : 0,
				       "; generated GEMM %s: %.4f ms, %.0f TFLOP/s, %.3f of cuBLASLt's plain product (%.4f ms)%s", name,
				       tm[best].ms, flop / tm[best].ms / 1e9, tm[0].ms / tm[best].ms, tm[0].ms, cached ? " (tuning cache hit)" : "");
		if (R->o->cache && !cached) {
			struct fs_tune_entry en = {.key = key, .tactic = {.vec = 2, .threads = 1, .per = (uint16_t)(t + 1)}, .ms = tm[best].ms,
						   .spread = tm[best].spread, .timed = k - 1};
			for (uint32_t i = 1; i < k; i++)
				en.failed += !ok[i];
			snprintf(en.name, sizeof(en.name), "%.31s", name);
			fs_tune_record(R->o->cache, &en);
		}
	}
	for (uint32_t i = 1, first = 1; i < k; i++) {
		if ((int)i == best)
			continue;
		fs_gemm_gen_name(&fs_gemm_gen_tactics[*(const int *)what[i]], name, sizeof(name));
		at += (size_t)snprintf(g->gemm + at, at < sizeof(g->gemm) ? sizeof(g->gemm) - at : 0, "%s%s %.4f ms%s%.60s",
				       first ? "; the generated GEMM's other tactics: " : ", ", name, tm[i].ms, ok[i] ? "" : " failed: ", why[i]);
		first = 0;
	}
	if (best > 0)
		return 0;
	if (cached)
		fs_tune_reject(R->o->cache); /* the cached tactic fails its check: not used */
	R->has_gen = 0;
	snprintf(R->gen_why, sizeof(R->gen_why), "no tactic passed the check");
	return 0;
}

static int tune_gen(struct run *R)
{
	uint32_t calls = own_calls(R, &R->ks.gp.calls[R->ks.gen.call]);
	int rc = time_gen(R);
	R->calls = calls;
	return rc;
}

/* Variant v of the fused plan run once into poisoned outputs and checked:
 * 1 where it passes, else 0 with why. -1 on a CUDA error. */
static int variant_passes(struct run *R, int v, char *why, size_t n)
{
	struct fs_errors e = {0};
	why[0] = '\0';
	if (fs_gpu_run_once(R, v, v == 0 && R->ks.kernel ? &R->l[0] : NULL, &e))
		return -1;
	return !(R->o->check && R->o->check(R->o->ctx, &R->g->unfused, &e, why, n));
}

/* The fused plan's variants timed side by side (interleaved): the products
 * then the generated kernel, the product with cuBLASLt's epilogue, and the
 * generated GEMM with the epilogue inside; each checked, and the fastest
 * that passes is the fused plan. Where the third is chosen, the emitted op
 * runs it where it can and the first where it cannot (a device without
 * sm_90a for its tactic, an operand TMA cannot read), so the first must
 * pass too. */
int fs_gpu_gemm_time_variants(struct run *R)
{
	static const int which[3] = {0, 1, 2};
	const void *what[3];
	int var[3];
	struct fs_gpu_result *g = R->g;
	struct timing tm[3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
	char why[3][200] = {"", "", ""};
	int ok[3] = {0, 0, 0};
	for (uint32_t i = 0; i < R->ks.gp.n_calls; i++)
		if (tune_product(R, &R->gl[i], R->ks.gp.calls[i].n_members ? "concatenated product" : "product"))
			return -1;
	if (R->ks.gp.absorbs && tune_product(R, &R->absorbed, "product with its epilogue"))
		return -1;
	if ((ok[0] = variant_passes(R, 0, why[0], sizeof(why[0]))) < 0 ||
	    (R->ks.gp.absorbs && (ok[1] = variant_passes(R, 1, why[1], sizeof(why[1]))) < 0))
		return -1;
	if (R->has_gen && tune_gen(R))
		return -1;
	ok[2] = R->has_gen; /* only a tactic that passed is kept */
	uint32_t k = 0;
	var[k++] = 0;
	if (R->ks.gp.absorbs)
		var[k++] = 1;
	if (R->has_gen)
		var[k++] = 2;
	for (uint32_t i = 0; i < k; i++)
		what[i] = &which[var[i]];
	if (fs_gpu_time_set(R, run_variant, what, k, R->o->reps, NULL, tm, NULL))
		return -1;
	int best = -1;
	for (uint32_t i = 0; i < k; i++)
		if (ok[var[i]] && (best < 0 || tm[i].ms < tm[best].ms))
			best = (int)i;
	g->variant = best < 0 ? 0 : var[best]; /* none passes: the first, whose failure the verdict reports */
	g->algos.version = R->lt.version, g->algos.n = R->ks.gp.n_calls;
	for (uint32_t i = 0; i < R->ks.gp.n_calls && i < FS_MAX_PRODUCTS; i++)
		memcpy(g->algos.algo[i], R->gl[i].lt.algo[R->gl[i].lt.chosen], sizeof(g->algos.algo[i]));
	if ((g->algos.has_epilogue = (uint8_t)R->ks.gp.absorbs))
		memcpy(g->algos.epilogue, R->absorbed.lt.algo[R->absorbed.lt.chosen], sizeof(g->algos.epilogue));
	g->algos.gen = g->variant == 2 ? (uint8_t)(R->gen_tactic + 1) : 0;
	if (g->variant == 2 && !ok[0])
		fs_gpu_plan_failed(R, "the emitted op's plan (the products + the fused kernel)", why[0]);
	size_t at = strlen(g->gemm);
	at += (size_t)snprintf(g->gemm + at, sizeof(g->gemm) - at, "; fused plan: %u product%s%s %.4f ms%s%s", R->ks.gp.n_calls,
			       R->ks.gp.n_calls == 1 ? "" : "s", R->ks.kernel ? " + the fused kernel" : "", tm[0].ms, ok[0] ? "" : ", failed: ",
			       why[0]);
	for (uint32_t i = 1; i < k && at < sizeof(g->gemm); i++) {
		if (var[i] == 1)
			at += (size_t)snprintf(g->gemm + at, sizeof(g->gemm) - at, ", against cuBLASLt's epilogue (%s) %.4f ms%s%s", R->ks.gp.epilogue,
					       tm[i].ms, ok[1] ? "" : ", failed: ", why[1]);
		else
			at += (size_t)snprintf(g->gemm + at, sizeof(g->gemm) - at, ", against the generated GEMM %.4f ms", tm[i].ms);
	}
	if (at < sizeof(g->gemm) && best < 0)
		snprintf(g->gemm + at, sizeof(g->gemm) - at, ": none passes its check");
	else if (at < sizeof(g->gemm) && g->variant)
		snprintf(g->gemm + at, sizeof(g->gemm) - at, ": %s chosen", g->variant == 1 ? "the cuBLASLt epilogue" : "the generated GEMM");
	else if (at < sizeof(g->gemm))
		snprintf(g->gemm + at, sizeof(g->gemm) - at, ": the product%s %s chosen", R->ks.gp.n_calls == 1 ? "" : "s",
			 R->ks.kernel ? "+ the fused kernel" : "alone");
	if (!R->has_gen && R->gen_why[0] && R->ks.kernel) {
		at = strlen(g->gemm);
		snprintf(g->gemm + at, sizeof(g->gemm) - at, "; no generated GEMM: %s", R->gen_why);
	}
	return 0;
}
