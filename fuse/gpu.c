/*
 * gpu.c: the generated kernels on the GPU (see gpu.h).
 */
#include "gpu.h"

#include "codegen.h"
#include "cuda.h"
#include "gemm.h"
#include "gemm_gen.h"
#include "rand.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CU_ATTR_L2 = 38 };

/* a generated kernel, or (gc set) a cuBLASLt product */
struct launch {
	struct fs_kernel k;
	void *module, *fn;
	uint8_t ref;                    /* a reference kernel: reads given values in double */
	uint8_t store;                  /* the reference storing its outputs (into refbuf) */
	const struct fs_gemm_call *gc;
	struct fs_lt_plan lt;
	uint32_t slot;                  /* a fused plan's product: its index (concatenated buffers) */
	int64_t bytes;
};

/* where a kernel's region values live: the unfused run's buffers (inputs
 * rotated), the fused kernel's outputs, or the CPU reference's outputs */
enum where { UNFUSED_BUFS, FUSED_BUFS, CPU_REF_BUFS };

struct run {
	const struct prog *p;
	struct prog q;             /* p, reading its products' outputs as given (gemm.h); p itself without products */
	struct prog qs;            /* q writing only the later products' operands: the reference that stores them */
	const struct fs_gpu_opts *o;
	struct fs_cuda c;
	struct launch *l;          /* [0] fused (the chosen tactic), then the unfused kernels in order */
	uint32_t n;
	struct launch ref, ref64;  /* the float64 reference kernel; the same reading double results */
	fs_devptr *dev;            /* unfused: per value; inputs: rotate copies each */
	fs_devptr *fused_out;      /* per value: the fused kernel's outputs */
	fs_devptr *cpu_ref;        /* per value: the CPU reference's outputs, as double */
	fs_devptr stats;           /* struct fs_stats of kernels/fused.cuh */
	void *stream;              /* every launch and timing event */
	uint32_t rotate;
	struct fs_gpu_result *g;
	/* matrix products (gemm.h): the plan, cuBLASLt, the fused plan's products
	 * (variant 0, before the fused kernel) and its cuBLASLt-epilogue variant 1 */
	int gemm, kernel;          /* the region holds products; the fused plan has a generated kernel */
	struct fs_gemm_plan gp;
	struct fs_lt lt;
	struct launch gl[FS_GEMM_MAX], absorbed;
	fs_devptr *wcat, *bcat;    /* per fused product and input copy: concatenated weights, biases */
	fs_devptr catout[FS_GEMM_MAX];
	fs_devptr *refbuf;         /* per value: a product's float64 reference */
	struct launch refg[FS_GEMM_MAX], cmp[FS_GEMM_MAX], cmp64[FS_GEMM_MAX]; /* per product */
	struct launch store;       /* the reference of what the later products read (FS_GEN_REF_STORE) */
	/* the generated GEMM (gemm_gen.h), variant 2: per tactic its module and
	 * the weight it reads on each input copy, the tactic run */
	int has_gen;
	struct fs_gemm_gen gen;
	struct launch epi;         /* its epilogue (FS_GEN_EPILOGUE): the parameters it takes */
	void *gen_module[FS_GEMM_GEN_TACTICS], *gen_fn[FS_GEMM_GEN_TACTICS];
	fs_devptr *gw;             /* [tactic * rotate + copy]; nm 1: the product's own weight (not owned) */
	uint32_t gen_tactic;
	char gen_why[160];         /* why there is none */
};

#define CK(call)                                                                          \
	do {                                                                              \
		if (fs_cuda_check(&R->c, (call), #call, R->g->error, sizeof(R->g->error))) \
			return -1;                                                        \
	} while (0)

static size_t bytes_of(const struct ten *t)
{
	return (size_t)t->n * fs_dtype_size((enum fs_dtype)t->dtype);
}

/* Where a fused group's product v lies: its columns of the group's output. */
static void in_group(const struct run *R, int32_t v, fs_devptr *x, long long *ld)
{
	for (uint32_t k = 0; k < R->gp.n_calls; k++) {
		const struct fs_gemm_call *c = &R->gp.calls[k];
		for (uint32_t j = 0; j < c->n_members; j++)
			if (c->member[j] == v) {
				*x = R->catout[k] + (fs_devptr)c->col[j] * fs_dtype_size((enum fs_dtype)c->mm.dtype);
				*ld = c->mm.N;
			}
	}
}

/* where value v lies for a run on input copy `copy` of the results in w */
static fs_devptr buffer(const struct run *R, int32_t v, uint32_t copy, enum where w)
{
	if (v < (int32_t)R->p->n_in)
		return R->dev[(size_t)v * R->rotate + copy];
	return w == FUSED_BUFS ? R->fused_out[v] : w == CPU_REF_BUFS ? R->cpu_ref[v] : R->dev[(size_t)v * R->rotate];
}

/* A cuBLASLt product: the concatenated weight and bias of a fused group
 * (b < 0), its output buffer (a group's: one for all of it). */
static int launch_lt(struct run *R, const struct launch *L, uint32_t copy, enum where w)
{
	const struct fs_gemm_call *c = L->gc;
	int group = c->b < 0;
	fs_devptr a = buffer(R, c->a, copy, w), b = group ? R->wcat[L->slot * R->rotate + copy] : buffer(R, c->b, copy, w);
	fs_devptr bias = group ? (c->mm.bias ? R->bcat[L->slot * R->rotate + copy] : 0) : c->bias >= 0 ? buffer(R, c->bias, copy, w) : 0;
	fs_devptr cm = c->c >= 0 ? buffer(R, c->c, copy, w) : 0, d = group ? R->catout[L->slot] : buffer(R, c->out, copy, w);
	return fs_lt_run(&R->lt, &L->lt, L->lt.chosen, a, b, bias, cm, d, R->stream, R->g->error, sizeof(R->g->error));
}

/* A generated kernel's arguments on input copy `copy` of the results in
 * w: its buffers, the symbols' values and magic numbers, (a reference)
 * the statistics; the storage they point into. Returns how many. */
struct kargs {
	void *p[FS_KERNEL_MAX_PARAMS + 2 * FS_KERNEL_MAX_SYMS + 1];
	fs_devptr ptr[FS_KERNEL_MAX_PARAMS];
	long long sym[FS_KERNEL_MAX_SYMS];
	unsigned long long magic[FS_KERNEL_MAX_SYMS];
};

static uint32_t kernel_args(struct run *R, const struct launch *L, uint32_t copy, enum where w, struct kargs *A)
{
	uint32_t i;
	for (i = 0; i < L->k.n_params; i++) {
		int32_t v = L->k.value[i];
		int given = !L->k.write[i] && R->q.given && R->q.given[v];
		A->ptr[i] = (given && L->ref) || (L->store && L->k.write[i]) ? R->refbuf[v] : buffer(R, v, copy, w);
		if (given && !L->ref && w == FUSED_BUFS && R->q.pitch[v]) { /* its columns of a concatenated product */
			long long ld;
			in_group(R, v, &A->ptr[i], &ld);
		}
		A->p[i] = &A->ptr[i];
	}
	for (uint32_t j = 0; j < L->k.n_syms; j++) {
		A->sym[j] = L->k.sym_value[j];
		A->p[i++] = &A->sym[j];
	}
	for (uint32_t j = 0; j < L->k.n_syms; j++) {
		A->magic[j] = fs_div_magic(L->k.sym_value[j]);
		A->p[i++] = &A->magic[j];
	}
	if (L->k.check)
		A->p[i++] = &R->stats;
	return i;
}

static int launch(struct run *R, const struct launch *L, uint32_t copy, enum where w)
{
	if (L->gc)
		return launch_lt(R, L, copy, w);
	struct kargs A;
	kernel_args(R, L, copy, w, &A);
	CK(R->c.cuLaunchKernel(L->fn, (unsigned)L->k.grid, 1, 1, (unsigned)L->k.block, 1, 1, 0, R->stream, A.p, NULL));
	return 0;
}

/* The generated GEMM under its tactic on input copy `copy`, writing the fused outputs. */
static int launch_gen(struct run *R, uint32_t copy)
{
	struct kargs A;
	uint32_t n = kernel_args(R, &R->epi, copy, FUSED_BUFS, &A), t = R->gen_tactic;
	fs_devptr a = buffer(R, R->gp.calls[R->gen.call].a, copy, FUSED_BUFS);
	return fs_gemm_gen_launch(&R->c, R->gen_fn[t], &R->gen, &fs_gemm_gen_tactics[t], a, R->gw[t * R->rotate + copy], A.p, n, R->stream,
				  R->g->error, sizeof(R->g->error));
}

static int run_unfused(struct run *R, uint32_t copy)
{
	for (uint32_t i = 1; i < R->n; i++)
		if (launch(R, &R->l[i], copy, UNFUSED_BUFS))
			return -1;
	return 0;
}

/* The products that are region outputs, in `w`, against their float64
 * reference (fs_ref_cmp), added to the statistics. */
static int compare_products(struct run *R, enum where w)
{
	for (uint32_t k = 0; k < R->gp.n; k++) {
		const struct fs_gemm_call *c = &R->gp.ref[k];
		if (!R->p->is_output[c->op])
			continue;
		fs_devptr ref = R->refbuf[c->out], x = buffer(R, c->out, 0, w);
		long long rows = c->mm.M * c->mm.batch, cols = c->mm.N, ld = cols;
		if (w == FUSED_BUFS)
			in_group(R, c->out, &x, &ld);
		void *args[] = {&ref, &x, &rows, &cols, &ld, &R->stats};
		long long blocks = (rows * cols + 255) / 256;
		blocks = blocks > 4096 ? 4096 : blocks;
		CK(R->c.cuLaunchKernel((w == CPU_REF_BUFS ? &R->cmp64[k] : &R->cmp[k])->fn, (unsigned)blocks, 1, 1, 256, 1, 1, 0, R->stream,
				       args, NULL));
	}
	return 0;
}

/* The errors of the results in `w` against the float64 reference kernel
 * (and, with products, their reference). */
static int measure(struct run *R, enum where w, struct fs_errors *e)
{
	uint64_t st[6]; /* struct fs_stats */
	double se, sr;
	CK(R->c.cuMemsetD8(R->stats, 0, sizeof(st)));
	if (R->gemm && compare_products(R, w))
		return -1;
	if ((!R->gemm || R->ref.fn) && launch(R, w == CPU_REF_BUFS ? &R->ref64 : &R->ref, 0, w))
		return -1;
	CK(R->c.cuMemcpyDtoH(st, R->stats, sizeof(st)));
	memset(e, 0, sizeof(*e));
	memcpy(&e->max_abs, &st[0], 8);
	memcpy(&e->max_rel, &st[1], 8);
	memcpy(&se, &st[2], 8);
	memcpy(&sr, &st[3], 8);
	e->nrmse = sr > 0 ? sqrt(se / sr) : sqrt(se);
	e->unwritten = st[4];
	e->nonfinite = st[5];
	return 0;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

/* one timed run r: the fused kernel, the unfused sequence, or a copy */
typedef int (*run_fn)(struct run *R, const void *what, uint32_t r);

static int run_fused(struct run *R, const void *L, uint32_t r)
{
	return launch(R, L, r % R->rotate, FUSED_BUFS);
}

static int run_unfused_seq(struct run *R, const void *none, uint32_t r)
{
	(void)none;
	return run_unfused(R, r % R->rotate);
}

struct copies {
	fs_devptr src[8], dst[8];
	uint32_t pairs;
	size_t n;
};

static int run_copy(struct run *R, const void *what, uint32_t r)
{
	const struct copies *c = what;
	CK(R->c.cuMemcpyDtoDAsync(c->dst[r % c->pairs], c->src[r % c->pairs], c->n, R->stream));
	return 0;
}

/* One timing: median, p90 - p10 and half the median's 95% interval (ms). */
struct timing {
	double ms, spread, ci;
};

/* Each of what[0..k-1] captured in a CUDA graph of `calls` runs (input
 * copies rotated within it), for timing as serving replays small kernels;
 * NULL where a capture fails (g->error says why). */
static void **capture(struct run *R, run_fn one, const void *const *what, uint32_t k, uint32_t calls)
{
	void **exec = fs_xcalloc(k, sizeof(void *));
	int rc = 0;
	for (uint32_t j = 0; j < k && !rc; j++) {
		void *graph = NULL;
		rc = fs_cuda_check(&R->c, R->c.cuStreamBeginCapture(R->stream, 2 /* relaxed */), "cuStreamBeginCapture", R->g->error,
				   sizeof(R->g->error));
		for (uint32_t c = 0; c < calls && !rc; c++)
			rc = one(R, what[j], c);
		if (fs_cuda_check(&R->c, R->c.cuStreamEndCapture(R->stream, &graph), "cuStreamEndCapture", rc ? NULL : R->g->error,
				  rc ? 0 : sizeof(R->g->error)))
			rc = -1;
		if (!rc)
			rc = fs_cuda_check(&R->c, R->c.cuGraphInstantiate(&exec[j], graph, 0), "cuGraphInstantiate", R->g->error,
					   sizeof(R->g->error));
		if (graph)
			R->c.cuGraphDestroy(graph);
	}
	for (uint32_t j = 0; j < k && rc; j++)
		if (exec[j])
			R->c.cuGraphExecDestroy(exec[j]);
	if (rc) {
		free(exec);
		return NULL;
	}
	return exec;
}

/* Times k things, what[0..k-1], interleaved: each of `reps` rounds (after 5
 * warm-up rounds) runs every one once, in order, on the round's input copy
 * (rotated), so a drift of the device's clocks or temperature falls on all
 * of them alike. Every run sits between two events, all enqueued back to
 * back and read after the last: the GPU never waits for the host between
 * runs, so a run's time is the device's, without the host's launch latency.
 * With o->graph_calls (small shapes, where launching is the cost) a run is
 * the replay of a CUDA graph of that many calls, and a time is per call. */
static int time_set(struct run *R, run_fn one, const void *const *what, uint32_t k, uint32_t reps, struct timing *out)
{
	uint32_t n = (reps + 5) * k, calls = R->o->graph_calls > 1 && one != run_copy ? R->o->graph_calls : 1;
	void **exec = calls > 1 ? capture(R, one, what, k, calls) : NULL;
	if (calls > 1 && !exec)
		return -1;
	void **ev = fs_xcalloc(2 * (size_t)n, sizeof(void *));
	float *t = fs_xmalloc(reps * sizeof(float));
	int rc = 0;
	for (uint32_t i = 0; i < 2 * n && !rc; i++)
		rc = fs_cuda_check(&R->c, R->c.cuEventCreate(&ev[i], 0), "cuEventCreate", R->g->error, sizeof(R->g->error));
	for (uint32_t i = 0; i < n && !rc; i++) {
		rc = fs_cuda_check(&R->c, R->c.cuEventRecord(ev[2 * i], R->stream), "cuEventRecord", R->g->error, sizeof(R->g->error));
		if (!rc && exec)
			rc = fs_cuda_check(&R->c, R->c.cuGraphLaunch(exec[i % k], R->stream), "cuGraphLaunch", R->g->error,
					   sizeof(R->g->error));
		else if (!rc)
			rc = one(R, what[i % k], i / k);
		if (!rc)
			rc = fs_cuda_check(&R->c, R->c.cuEventRecord(ev[2 * i + 1], R->stream), "cuEventRecord", R->g->error,
					   sizeof(R->g->error));
	}
	if (!rc)
		rc = fs_cuda_check(&R->c, R->c.cuEventSynchronize(ev[2 * n - 1]), "cuEventSynchronize", R->g->error, sizeof(R->g->error));
	for (uint32_t j = 0; j < k && !rc; j++) {
		for (uint32_t r = 0; r < reps && !rc; r++) {
			uint32_t i = (r + 5) * k + j;
			rc = fs_cuda_check(&R->c, R->c.cuEventElapsedTime(&t[r], ev[2 * i], ev[2 * i + 1]), "cuEventElapsedTime",
					   R->g->error, sizeof(R->g->error));
			t[r] /= (float)calls;
		}
		if (rc)
			break;
		qsort(t, reps, sizeof(float), cmp_float);
		/* distribution-free 95% interval of the median: ranks n/2 -+ 0.98 sqrt(n) */
		double h = 0.98 * sqrt((double)reps);
		int64_t lo = (int64_t)floor(reps / 2.0 - h), hi = (int64_t)ceil(reps / 2.0 + h);
		lo = lo < 0 ? 0 : lo, hi = hi > (int64_t)reps - 1 ? (int64_t)reps - 1 : hi;
		out[j] = (struct timing){.ms = t[reps / 2],
					 .spread = t[reps * 9 / 10 < reps ? reps * 9 / 10 : reps - 1] - t[reps / 10],
					 .ci = (t[hi] - t[lo]) / 2};
	}
	for (uint32_t i = 0; i < 2 * n; i++)
		if (ev[i])
			R->c.cuEventDestroy(ev[i]);
	for (uint32_t j = 0; exec && j < k; j++)
		R->c.cuGraphExecDestroy(exec[j]);
	free(exec);
	free(ev);
	free(t);
	return rc ? -1 : 0;
}

/* Device-to-device copies of n bytes (2n moved each), timed like the
 * kernels, over enough buffer pairs to exceed twice the L2. */
static int copy_bandwidth(struct run *R, size_t n, int l2, double *gbs)
{
	struct copies c = {.n = n < 256 ? 256 : n};
	size_t pairs = (2 * (size_t)l2 + 2 * c.n - 1) / (2 * c.n);
	c.pairs = pairs < 1 ? 1 : pairs > 8 ? 8 : (uint32_t)pairs;
	struct timing tm = {0};
	const void *what = &c;
	int rc = 0;
	for (uint32_t i = 0; i < c.pairs && !rc; i++)
		rc = fs_cuda_check(&R->c, R->c.cuMemAlloc(&c.src[i], c.n), "cuMemAlloc", R->g->error, sizeof(R->g->error)) ||
		     fs_cuda_check(&R->c, R->c.cuMemAlloc(&c.dst[i], c.n), "cuMemAlloc", R->g->error, sizeof(R->g->error));
	if (!rc)
		rc = time_set(R, run_copy, &what, 1, 20, &tm);
	for (uint32_t i = 0; i < c.pairs; i++) {
		if (c.src[i])
			R->c.cuMemFree(c.src[i]);
		if (c.dst[i])
			R->c.cuMemFree(c.dst[i]);
	}
	*gbs = rc ? 0 : 2.0 * (double)c.n / (tm.ms * 1e-3) / 1e9;
	return rc ? -1 : 0;
}

/* Compiles a translation unit (counted in g->compiled when `count`) and,
 * with `load`, loads it as *module and its function `name` as *fn. 0, or
 * -1 with the error in g->error. */
static int build_for(struct run *R, const char *arch, const char *source, int fmad, int count, int load, void **module, const char *name,
		     void **fn)
{
	struct fs_gpu_result *g = R->g;
	char *cubin = NULL;
	size_t len;
	if (fs_cuda_compile(&R->c, source, arch, fmad, &cubin, &len, g->error, sizeof(g->error)))
		return -1;
	g->compiled += count != 0;
	int rc = load && (fs_cuda_check(&R->c, R->c.cuModuleLoadData(module, cubin), "cuModuleLoadData", g->error, sizeof(g->error)) ||
			  (name && fs_cuda_check(&R->c, R->c.cuModuleGetFunction(fn, *module, name), "cuModuleGetFunction", g->error,
						 sizeof(g->error))));
	free(cubin);
	return rc ? -1 : 0;
}

/* compiled for the device's architecture */
static int build(struct run *R, const char *source, int fmad, int count, int load, void **module, const char *name, void **fn)
{
	return build_for(R, R->g->arch, source, fmad, count, load, module, name, fn);
}

/* Generates (and, with `compile`, compiles and loads) the fused kernel
 * (only < 0) under tactic t, or op `only`'s kernel. */
static int prepare(struct run *R, struct launch *L, int32_t only, const struct fs_tactic *t, enum fs_gen mode, int fmad, int load)
{
	const struct prog *p = mode == FS_GEN_REF_STORE ? &R->qs : &R->q;
	struct fs_gpu_result *g = R->g;
	char why[256];
	memset(L, 0, sizeof(*L));
	L->ref = mode >= FS_GEN_REF, L->store = mode == FS_GEN_REF_STORE;
	if (fs_codegen(p, only, mode, t, &L->k, why, sizeof(why))) {
		snprintf(g->error, sizeof(g->error), "%s kernel%s%s: %s",
			 only >= 0 ? "unfused" : mode >= FS_GEN_REF ? "reference" : "fused", only < 0 ? "" : " of %",
			 only < 0 ? "" : fs_scan_str(p->s, p->g->nodes[p->ops[only].node].name), why);
		return -1;
	}
	return R->o->compile ? build(R, L->k.source, fmad, 1, load, &L->module, "fs_k", &L->fn) : 0;
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

/* The fused plan's products before its kernel (post 0) or after it:
 * variant 0's (concatenated groups), or variant 1, the product with
 * cuBLASLt's epilogue (variant 2, the generated GEMM: run_plan). */
static int run_products(struct run *R, int variant, uint32_t copy, int post)
{
	if (variant)
		return post ? 0 : launch(R, &R->absorbed, copy, FUSED_BUFS);
	for (uint32_t k = 0; k < R->gp.n_calls; k++)
		if (R->gp.calls[k].post == post && launch(R, &R->gl[k], copy, FUSED_BUFS))
			return -1;
	return 0;
}

/* The fused plan on input copy `copy`: products, the fused kernel L (NULL:
 * none), the products after it. */
static int run_plan(struct run *R, int variant, const struct launch *L, uint32_t copy)
{
	if (!R->gemm)
		return launch(R, L, copy, FUSED_BUFS);
	if (variant == 2) /* the generated GEMM, then the products reading what it writes */
		return launch_gen(R, copy) || run_products(R, 0, copy, 1) ? -1 : 0;
	return run_products(R, variant, copy, 0) || (L && launch(R, L, copy, FUSED_BUFS)) || run_products(R, variant, copy, 1) ? -1 : 0;
}

/* The fused plan once, on copy 0 of the inputs, into poisoned outputs,
 * checked against the reference: its products (variant), then the fused
 * kernel L (NULL: none). */
static int run_once(struct run *R, int variant, const struct launch *L, struct fs_errors *e)
{
	const struct prog *p = R->p;
	for (uint32_t v = p->n_in; v < p->n_in + p->n_ops; v++)
		if (R->fused_out[v])
			CK(R->c.cuMemsetD8(R->fused_out[v], 0xff, bytes_of(fs_prog_value(p, (int32_t)v))));
	for (uint32_t k = 0; R->gemm && k < R->gp.n_calls; k++)
		if (R->catout[k])
			CK(R->c.cuMemsetD8(R->catout[k], 0xff, (size_t)(R->gp.calls[k].mm.M * R->gp.calls[k].mm.N) *
								  fs_dtype_size((enum fs_dtype)R->gp.calls[k].mm.dtype)));
	if (run_plan(R, variant, L, 0))
		return -1;
	CK(R->c.cuCtxSynchronize());
	return measure(R, FUSED_BUFS, e);
}

static void tactic_name(const struct run *R, const struct fs_tactic *t, char *out, size_t n)
{
	fs_tactic_name(t, R->g->row, out, n);
}

static void cache_key(const struct run *R, struct fs_tune_key *k)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->kernel, sizeof(k->kernel), "%s", R->o->kernel_key ? R->o->kernel_key : "");
	snprintf(k->bucket, sizeof(k->bucket), "%s", R->o->bucket ? R->o->bucket : "");
	snprintf(k->device, sizeof(k->device), "%s", R->g->device);
	snprintf(k->nvrtc, sizeof(k->nvrtc), "%s", R->g->nvrtc);
	int at = snprintf(k->policy, sizeof(k->policy), "median of %u after 5 warm-up, inputs rotated past 2x L2; %d finalists x %u interleaved",
			  R->o->reps, FS_FINALISTS, 4 * R->o->reps);
	if (R->o->graph_calls > 1 && at > 0 && (size_t)at < sizeof(k->policy))
		snprintf(k->policy + at, sizeof(k->policy) - (size_t)at, "; graphs of %u calls", R->o->graph_calls);
}

/* The finalists: the eligible tactics whose median is not told apart from
 * the fastest's (their 95% intervals overlap), at most FS_FINALISTS, the
 * fastest first. Timed one after another, tactics that differ by less than
 * the device's drift over the tuning can trade places; the finalists are
 * timed again interleaved, each round running each once, over 4x the runs,
 * and those times replace their first ones. A single eligible tactic is the
 * only finalist. 0, or -1 on a CUDA error (g->error). */
static int final_round(struct run *R, struct launch *L, uint32_t n)
{
	struct fs_gpu_result *g = R->g;
	int32_t best = -1;
	for (uint32_t i = 0; i < n; i++)
		if (!g->tactics[i].rec.failed[0] && (best < 0 || g->tactics[i].rec.ms < g->tactics[best].rec.ms))
			best = (int32_t)i;
	if (best < 0)
		return 0;
	uint32_t idx[FS_FINALISTS], k = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_tactic_run *t = &g->tactics[i];
		if (t->rec.failed[0] || t->rec.ms > g->tactics[best].rec.ms + g->tactics[best].rec.ci + t->rec.ci)
			continue;
		uint32_t at = k < FS_FINALISTS ? k++ : FS_FINALISTS; /* insertion by median; the slowest falls off */
		while (at > 0 && g->tactics[idx[at - 1]].rec.ms > t->rec.ms) {
			if (at < FS_FINALISTS)
				idx[at] = idx[at - 1];
			at--;
		}
		if (at < FS_FINALISTS)
			idx[at] = i;
	}
	for (uint32_t j = 0; j < k; j++)
		g->tactics[idx[j]].rec.final = 1;
	if (k < 2)
		return 0;
	const void *what[FS_FINALISTS];
	struct timing tm[FS_FINALISTS];
	for (uint32_t j = 0; j < k; j++)
		what[j] = &L[idx[j]];
	if (time_set(R, run_fused, what, k, 4 * R->o->reps, tm))
		return -1;
	for (uint32_t j = 0; j < k; j++) {
		struct fs_tactic_run *t = &g->tactics[idx[j]];
		t->rec.ms = tm[j].ms, t->rec.spread = tm[j].spread, t->rec.ci = tm[j].ci;
	}
	return 0;
}

/* Every tactic (or the cached one) compiled, run, checked and timed; the
 * winner becomes R->l[0]. A tactic that fails to compile, or whose result
 * fails the check, is not eligible; if none is, the fallback stays (and the
 * verdict will say why). */
static int tune(struct run *R)
{
	struct fs_gpu_result *g = R->g;
	const struct fs_gpu_opts *o = R->o;
	struct fs_tactic list[FS_MAX_TACTICS];
	struct fs_tune_key key;
	struct fs_tune_entry hit;
	uint32_t n;
	cache_key(R, &key);
	if (o->cache && o->kernel_key && !o->retune && fs_tune_lookup(o->cache, &key, &hit) == 0) {
		list[0] = hit.tactic;
		n = 1, g->cache_hit = 1;
	} else {
		if (o->cache && o->retune)
			o->cache->misses++;
		n = fs_tactics(&R->l[0].k, list);
	}
	g->n_tactics = n;
	g->kernels += n;
	struct launch *L = fs_xcalloc(n, sizeof(*L)); /* kept loaded until one is chosen */
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++) {
		struct fs_tactic_run *tr = &g->tactics[i];
		struct fs_errors e;
		tr->t = list[i];
		tactic_name(R, &tr->t, tr->rec.name, sizeof(tr->rec.name));
		if (prepare(R, &L[i], -1, &list[i], FS_GEN_KERNEL, 1, 1)) {
			snprintf(tr->rec.failed, sizeof(tr->rec.failed), "%.190s", g->error);
			g->error[0] = '\0', g->n_failed++;
			unload(R, &L[i]);
			continue;
		}
		/* a launch or memory error here is the context's end: stop */
		struct timing tm = {0};
		const void *what = &L[i];
		rc = run_once(R, 0, &L[i], &e) || time_set(R, run_fused, &what, 1, o->reps, &tm);
		tr->rec.ms = tm.ms, tr->rec.spread = tm.spread, tr->rec.ci = tm.ci;
		if (!rc && o->check && o->check(o->ctx, &g->unfused, &e, tr->rec.failed, sizeof(tr->rec.failed)))
			g->n_failed++;
	}
	if (!rc)
		rc = final_round(R, L, n);
	if (rc) {
		for (uint32_t i = 0; i < n; i++)
			unload(R, &L[i]);
		free(L);
		return -1;
	}
	/* the fastest eligible finalist; among those whose median is not told
	 * apart from its (the two 95% intervals overlap), the earliest in the list */
	int32_t best = -1;
	for (uint32_t i = 0; i < n; i++)
		if (g->tactics[i].rec.final && (best < 0 || g->tactics[i].rec.ms < g->tactics[best].rec.ms))
			best = (int32_t)i;
	g->chosen = best < 0 ? 0 : best;
	for (uint32_t i = 0; best >= 0 && i < n; i++) {
		const struct fs_numerics_tactic *t = &g->tactics[i].rec, *b = &g->tactics[best].rec;
		if (t->final && t->ms <= b->ms + b->ci + t->ci) {
			g->chosen = (int32_t)i;
			break;
		}
	}
	/* the next fastest: a finalist if there is another (their times are comparable) */
	g->runner_up = -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_tactic_run *t = &g->tactics[i], *u = g->runner_up < 0 ? NULL : &g->tactics[g->runner_up];
		if ((int32_t)i != g->chosen && !t->rec.failed[0] &&
		    (!u || t->rec.final > u->rec.final || (t->rec.final == u->rec.final && t->rec.ms < u->rec.ms)))
			g->runner_up = (int32_t)i;
	}
	const struct fs_tactic_run *w = &g->tactics[g->chosen];
	if (o->cache && !g->cache_hit && best >= 0 && o->kernel_key) {
		struct fs_tune_entry e = {.key = key, .tactic = w->t, .ms = w->rec.ms, .spread = w->rec.spread, .timed = n,
					  .failed = g->n_failed};
		snprintf(e.name, sizeof(e.name), "%s", w->rec.name);
		if (g->runner_up >= 0) {
			snprintf(e.runner_up, sizeof(e.runner_up), "%s", g->tactics[g->runner_up].rec.name);
			e.runner_up_ms = g->tactics[g->runner_up].rec.ms;
		}
		fs_tune_record(o->cache, &e);
	}
	if (L[g->chosen].fn) { /* else none compiled: the fallback of fs_gpu_run stays */
		unload(R, &R->l[0]);
		R->l[0] = L[g->chosen];
		memset(&L[g->chosen], 0, sizeof(*L));
	}
	for (uint32_t i = 0; i < n; i++)
		unload(R, &L[i]);
	free(L);
	return 0;
}

/* The inputs, drawn on the device: copy 0 of each, then the other copies
 * copied from it. */
static int draw_inputs(struct run *R)
{
	const struct prog *p = R->p;
	struct launch F = {0};
	char *src = fs_codegen_fill();
	int rc = build(R, src, 1, 0, 1, &F.module, NULL, NULL);
	free(src);
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
			rc = fs_cuda_check(&R->c, R->c.cuMemcpyDtoD(R->dev[(size_t)v * R->rotate + c], ptr, bytes_of(t)), "cuMemcpyDtoD",
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
		if (!R->q.is_output[i]) /* the region's outputs and what the fused kernel writes for later products */
			continue;
		CK(R->c.cuMemAlloc(&R->cpu_ref[p->n_in + i], (size_t)(t->n ? t->n : 1) * sizeof(double)));
		CK(R->c.cuMemcpyHtoD(R->cpu_ref[p->n_in + i], t->d, (size_t)t->n * sizeof(double)));
	}
	if (measure(R, CPU_REF_BUFS, &R->g->ref_vs_cpu))
		return -1;
	R->g->ref_checked = 1;
	return 0;
}

/* ---- matrix products (gemm.h) ------------------------------------------------------------ */

/* What a product moves: its operands read, its output written. */
static int64_t lt_bytes(const struct fs_gemm_call *c)
{
	const struct fs_lt_mm *m = &c->mm;
	int64_t a = m->M * m->K * (m->stride_a ? m->batch : 1), b = m->K * m->N * (m->stride_b ? m->batch : 1), d = m->M * m->N * m->batch;
	return (a + b + d + (m->bias ? m->N : 0) + (m->add_c ? d : 0)) * (int64_t)fs_dtype_size((enum fs_dtype)m->dtype);
}

static void lt_launch(struct launch *L, const struct fs_gemm_call *c, uint32_t slot)
{
	memset(L, 0, sizeof(*L));
	L->gc = c, L->slot = slot, L->k.bytes = lt_bytes(c);
}

/* The float64 reference kernels of every product (fs_ref_gemm, with the
 * check of its dtype, fs_ref_cmp), and the check of the CPU's reference;
 * compiled when asked, loaded when `load`. */
static int prepare_products(struct run *R, int load)
{
	struct fs_gpu_result *g = R->g;
	for (uint32_t k = 0; k < R->gp.n; k++)
		for (int x = 0; x < (R->o->cpu_ref ? 2 : 1); x++) {
			const struct fs_gemm_call *c = &R->gp.ref[k];
			struct launch *L = x ? &R->cmp64[k] : &R->refg[k];
			char *src = fs_gemm_ref_source(R->p, c, x ? FS_DT_F64 : fs_prog_value(R->p, c->out)->dtype);
			g->kernels++, g->ref_kernels++;
			int rc = R->o->compile && build(R, src, 1, 1, load, &L->module, x ? "fs_ref_cmp" : "fs_ref_gemm", &L->fn);
			free(src);
			if (rc || (R->o->compile && load && !x && /* the same module checks the product's dtype */
				   fs_cuda_check(&R->c, R->c.cuModuleGetFunction(&R->cmp[k].fn, L->module, "fs_ref_cmp"), "cuModuleGetFunction",
						 g->error, sizeof(g->error))))
				return -1;
		}
	return 0;
}

/* Product k's float64 reference: a product after the fused kernel reads
 * the reference's own double value of its operand. */
static int reference_product(struct run *R, uint32_t k)
{
	const struct fs_gemm_call *c = &R->gp.ref[k];
	const struct fs_lt_mm *m = &c->mm;
	CK(R->c.cuMemAlloc(&R->refbuf[c->out], (size_t)(m->M * m->N * m->batch) * sizeof(double)));
	fs_devptr a = c->post ? R->refbuf[c->a] : buffer(R, c->a, 0, UNFUSED_BUFS), b = buffer(R, c->b, 0, UNFUSED_BUFS);
	fs_devptr d = R->refbuf[c->out];
	fs_devptr bias = c->bias >= 0 ? buffer(R, c->bias, 0, UNFUSED_BUFS) : c->c >= 0 ? buffer(R, c->c, 0, UNFUSED_BUFS) : 0;
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
	for (uint32_t k = 0; k < R->gp.n; k++)
		if (!R->gp.ref[k].post && reference_product(R, k))
			return -1;
	if (R->store.fn) {
		for (uint32_t v = p->n_in; v < p->n_in + p->n_ops; v++)
			if (R->gp.kernel_out[v])
				CK(R->c.cuMemAlloc(&R->refbuf[v], (size_t)fs_prog_value(p, (int32_t)v)->n * sizeof(double)));
		if (launch(R, &R->store, 0, UNFUSED_BUFS))
			return -1;
	}
	for (uint32_t k = 0; k < R->gp.n; k++)
		if (R->gp.ref[k].post && reference_product(R, k))
			return -1;
	CK(R->c.cuCtxSynchronize());
	return 0;
}

/* A fused group's concatenated weight (and bias), built once per input copy
 * as AutoDeploy's fuse_gemms does at load time, and its output buffer. */
static int concatenate(struct run *R, uint32_t k)
{
	const struct fs_gemm_call *c = &R->gp.calls[k];
	size_t es = fs_dtype_size((enum fs_dtype)c->mm.dtype), K = (size_t)c->mm.K;
	CK(R->c.cuMemAlloc(&R->catout[k], (size_t)(c->mm.M * c->mm.N) * es));
	for (uint32_t r = 0; r < R->rotate; r++) {
		fs_devptr *w = &R->wcat[k * R->rotate + r], *b = &R->bcat[k * R->rotate + r];
		CK(R->c.cuMemAlloc(w, (size_t)c->mm.N * K * es));
		if (c->mm.bias)
			CK(R->c.cuMemAlloc(b, (size_t)c->mm.N * es));
		for (uint32_t j = 0; j < c->n_members; j++) {
			size_t n = (size_t)((j + 1 < c->n_members ? c->col[j + 1] : c->mm.N) - c->col[j]), at = (size_t)c->col[j];
			CK(R->c.cuMemcpyDtoD(*w + at * K * es, buffer(R, c->member_b[j], r, UNFUSED_BUFS), n * K * es));
			if (c->mm.bias)
				CK(R->c.cuMemcpyDtoD(*b + at * es, buffer(R, c->member_bias[j], r, UNFUSED_BUFS), n * es));
		}
	}
	return 0;
}

/* A product's tuning-cache key: its exact description (cuBLASLt's
 * heuristic list depends on every size), cuBLASLt's version for the
 * compiler's. */
static void lt_key(const struct run *R, const struct fs_lt_mm *m, struct fs_tune_key *k)
{
	char d[320];
	cache_key(R, k);
	int n = snprintf(d, sizeof(d), "cuBLASLt dt%u M%lld N%lld K%lld b%lld sa%lld sb%lld sd%lld nk%u relu%u gelu%u bias%u c%u ld%lld",
			 m->dtype, (long long)m->M, (long long)m->N, (long long)m->K, (long long)m->batch, (long long)m->stride_a,
			 (long long)m->stride_b, (long long)m->stride_d, m->b_nk, m->relu, m->gelu, m->bias, m->add_c, (long long)m->ldd);
	snprintf(k->kernel, sizeof(k->kernel), "%016llx", (unsigned long long)fs_hash_bytes(d, (size_t)n, 0x6c74));
	snprintf(k->bucket, sizeof(k->bucket), "M=%lld", (long long)m->M);
	snprintf(k->nvrtc, sizeof(k->nvrtc), "cuBLASLt %zu", R->lt.version);
}

/* One product timed under each of cuBLASLt's heuristic algorithms, the
 * fastest chosen and kept in the tuning cache (a hit times none); said in
 * g->gemm. */
static int tune_product(struct run *R, struct launch *L, const char *what)
{
	struct timing tm[FS_LT_ALGOS] = {{0, 0, 0}};
	const void *one = L;
	struct fs_tune_key key;
	struct fs_tune_entry hit;
	size_t at = strlen(R->g->gemm);
	lt_key(R, &L->lt.mm, &key);
	if (R->o->cache && !R->o->retune && fs_tune_lookup(R->o->cache, &key, &hit) == 0 && hit.tactic.per <= L->lt.n_algos) {
		L->lt.chosen = hit.tactic.per - 1u;
		snprintf(R->g->gemm + at, sizeof(R->g->gemm) - at, "; %s: heuristic #%u of %u (tuning cache hit)", what, L->lt.chosen + 1,
			 L->lt.n_algos);
		return 0;
	}
	uint32_t win = 0;
	for (uint32_t a = 0; a < L->lt.n_algos; a++) {
		L->lt.chosen = a;
		if (time_set(R, run_fused, &one, 1, R->o->reps, &tm[a]))
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

/* The weight each tactic of the generated GEMM reads, on every input copy:
 * one product's own, or a group's interleaved (fs_gemm_gen_row), built once
 * like the concatenated weights. */
static int gen_weights(struct run *R)
{
	const struct fs_gemm_gen *gg = &R->gen;
	size_t K = (size_t)gg->K;
	R->gw = fs_xcalloc((size_t)FS_GEMM_GEN_TACTICS * R->rotate + 1, sizeof(fs_devptr));
	for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS; t++)
		for (uint32_t r = 0; r < R->rotate && R->gen_fn[t]; r++) {
			fs_devptr *w = &R->gw[t * R->rotate + r];
			if (gg->nm == 1) {
				*w = buffer(R, gg->weight[0], r, UNFUSED_BUFS);
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
							     buffer(R, gg->weight[m], r, UNFUSED_BUFS) + (fs_devptr)x * K * 2, n * K * 2));
				}
		}
	return 0;
}

/* The generated GEMM's epilogue and its kernel under every tactic, compiled
 * for sm_90a (and loaded when `load`); has_gen stays 0, with why, where the
 * region or the machine does not allow it. */
static int prepare_gen(struct run *R, int load)
{
	struct fs_gpu_result *g = R->g;
	static const struct fs_tactic pair = {2, 128, 1, 0, 0};
	char why[160];
	if (fs_gemm_gen_plan(&R->q, &R->gp, &R->gen, why, sizeof(why))) {
		snprintf(R->gen_why, sizeof(R->gen_why), "%s", why);
		return 0;
	}
	if (load && (R->c.cc_major != 9 || !R->c.cuTensorMapEncodeTiled)) {
		snprintf(R->gen_why, sizeof(R->gen_why), "it needs sm_90 (wgmma, TMA) and a driver with cuTensorMapEncodeTiled");
		return 0;
	}
	R->q.member = R->gen.member;
	memset(&R->epi, 0, sizeof(R->epi));
	if (fs_codegen(&R->q, -1, FS_GEN_EPILOGUE, &pair, &R->epi.k, why, sizeof(why))) {
		snprintf(R->gen_why, sizeof(R->gen_why), "its epilogue: %.140s", why);
		return 0;
	}
	R->has_gen = 1;
	for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS && R->o->compile; t++) {
		char *src = fs_gemm_gen_source(&R->epi.k, &fs_gemm_gen_tactics[t], R->gen.nm);
		g->kernels++, g->gemm_kernels++;
		int rc = build_for(R, "sm_90a", src, 1, 1, load, &R->gen_module[t], "fs_gemm", &R->gen_fn[t]);
		free(src);
		if (rc)
			return -1;
	}
	return 0;
}

/* cuBLASLt loaded, every product planned, the fused groups' weights
 * concatenated, the float64 reference computed. 0, 1 when cuBLASLt is
 * missing (said in g->skipped), or -1. */
static int setup_products(struct run *R)
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
	R->wcat = fs_xcalloc((size_t)R->gp.n_calls * R->rotate + 1, sizeof(fs_devptr));
	R->bcat = fs_xcalloc((size_t)R->gp.n_calls * R->rotate + 1, sizeof(fs_devptr));
	for (uint32_t k = 0; k < R->gp.n_calls; k++) {
		lt_launch(&R->gl[k], &R->gp.calls[k], k);
		if (fs_lt_plan(&R->lt, &R->gp.calls[k].mm, &R->gl[k].lt, g->error, sizeof(g->error)) ||
		    (R->gp.calls[k].n_members && concatenate(R, k)))
			return -1;
	}
	if (R->gp.absorbs) {
		lt_launch(&R->absorbed, &R->gp.absorbed, 0);
		if (fs_lt_plan(&R->lt, &R->gp.absorbed.mm, &R->absorbed.lt, g->error, sizeof(g->error)))
			return -1;
	}
	if (R->has_gen && gen_weights(R))
		return -1;
	return reference_products(R);
}

static int run_variant(struct run *R, const void *what, uint32_t r)
{
	int variant = *(const int *)what;
	return run_plan(R, variant, !variant && R->kernel ? &R->l[0] : NULL, r % R->rotate);
}

/* The generated GEMM alone under tactic *what, or (-1) the plain product
 * of the same shape by cuBLASLt (its fused plan's product). */
static int run_gen(struct run *R, const void *what, uint32_t r)
{
	int t = *(const int *)what;
	if (t < 0)
		return launch(R, &R->gl[R->gen.call], r % R->rotate, FUSED_BUFS);
	R->gen_tactic = (uint32_t)t;
	return launch_gen(R, r % R->rotate);
}

/* The generated GEMM's tactics timed side by side with cuBLASLt's plain
 * product of the same shape; the fastest that passes the check is kept
 * (gen_tactic), said in g->gemm with its rate and its share of cuBLASLt's.
 * has_gen cleared where none passes. */
static int tune_gen(struct run *R)
{
	static const int ids[FS_GEMM_GEN_TACTICS + 1] = {-1, 0, 1, 2, 3, 4};
	const void *what[FS_GEMM_GEN_TACTICS + 1] = {&ids[0]};
	struct fs_gpu_result *g = R->g;
	struct timing tm[FS_GEMM_GEN_TACTICS + 1];
	uint32_t k = 1;
	for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS; t++)
		if (R->gen_fn[t])
			what[k++] = &ids[t + 1];
	if (time_set(R, run_gen, what, k, R->o->reps, tm))
		return -1;
	uint32_t order[FS_GEMM_GEN_TACTICS];
	for (uint32_t i = 1; i < k; i++) { /* fastest first */
		uint32_t at = i - 1;
		for (; at && tm[order[at - 1]].ms > tm[i].ms; at--)
			order[at] = order[at - 1];
		order[at] = i;
	}
	const struct fs_lt_mm *m = &R->gp.calls[R->gen.call].mm;
	double flop = 2.0 * (double)m->M * (double)m->N * (double)m->K;
	size_t at = strlen(g->gemm);
	for (uint32_t i = 0; i + 1 < k; i++) {
		struct fs_errors e = {0};
		char why[200] = "", name[64];
		int t = *(const int *)what[order[i]];
		R->gen_tactic = (uint32_t)t;
		if (run_once(R, 2, NULL, &e))
			return -1;
		int ok = !(R->o->check && R->o->check(R->o->ctx, &g->unfused, &e, why, sizeof(why)));
		double ms = tm[order[i]].ms;
		fs_gemm_gen_name(&fs_gemm_gen_tactics[t], name, sizeof(name));
		at += (size_t)snprintf(g->gemm + at, at < sizeof(g->gemm) ? sizeof(g->gemm) - at : 0,
				       "; generated GEMM (sm_90a) %s: %.4f ms, %.0f TFLOP/s, %.3f of cuBLASLt's plain product (%.4f ms)%s%.120s", name,
				       ms, flop / ms / 1e9, tm[0].ms / ms, tm[0].ms, ok ? "" : ", failed: ", why);
		if (ok)
			return 0;
	}
	R->has_gen = 0;
	snprintf(R->gen_why, sizeof(R->gen_why), "no tactic passed the check");
	return 0;
}

/* The fused plan's variants timed side by side (interleaved): the products
 * then the generated kernel, the product with cuBLASLt's epilogue, and the
 * generated GEMM with the epilogue inside; the fastest that passes the
 * check is the fused plan. */
static int time_variants(struct run *R)
{
	static const int which[3] = {0, 1, 2};
	const void *what[3];
	int var[3];
	struct fs_gpu_result *g = R->g;
	struct timing tm[3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
	struct fs_errors e = {0};
	char why[200] = "";
	for (uint32_t i = 0; i < R->gp.n_calls; i++)
		if (tune_product(R, &R->gl[i], R->gp.calls[i].n_members ? "concatenated product" : "product"))
			return -1;
	if (R->gp.absorbs && (tune_product(R, &R->absorbed, "product with its epilogue") || run_once(R, 1, NULL, &e)))
		return -1;
	int ok1 = R->gp.absorbs && !(R->o->check && R->o->check(R->o->ctx, &g->unfused, &e, why, sizeof(why)));
	if (R->has_gen && tune_gen(R))
		return -1;
	uint32_t k = 0;
	var[k++] = 0;
	if (R->gp.absorbs)
		var[k++] = 1;
	if (R->has_gen)
		var[k++] = 2;
	for (uint32_t i = 0; i < k; i++)
		what[i] = &which[var[i]];
	if (time_set(R, run_variant, what, k, R->o->reps, tm))
		return -1;
	uint32_t best = 0;
	for (uint32_t i = 1; i < k; i++)
		if ((var[i] != 1 || ok1) && tm[i].ms < tm[best].ms)
			best = i;
	g->variant = var[best];
	g->fused_ms = tm[best].ms;
	size_t at = strlen(g->gemm);
	at += (size_t)snprintf(g->gemm + at, sizeof(g->gemm) - at, "; fused plan: %u product%s%s %.4f ms", R->gp.n_calls,
			       R->gp.n_calls == 1 ? "" : "s", R->kernel ? " + the fused kernel" : "", tm[0].ms);
	for (uint32_t i = 1; i < k && at < sizeof(g->gemm); i++) {
		if (var[i] == 1)
			at += (size_t)snprintf(g->gemm + at, sizeof(g->gemm) - at, ", against cuBLASLt's epilogue (%s) %.4f ms%s%s", R->gp.epilogue,
					       tm[i].ms, ok1 ? "" : ", failed: ", why);
		else
			at += (size_t)snprintf(g->gemm + at, sizeof(g->gemm) - at, ", against the generated GEMM %.4f ms", tm[i].ms);
	}
	if (at < sizeof(g->gemm))
		snprintf(g->gemm + at, sizeof(g->gemm) - at, ": %s chosen",
			 g->variant == 1 ? "the cuBLASLt epilogue" : g->variant == 2 ? "the generated GEMM" : "the generated kernel");
	if (!R->has_gen && R->gen_why[0] && R->kernel) {
		at = strlen(g->gemm);
		snprintf(g->gemm + at, sizeof(g->gemm) - at, "; no generated GEMM: %s", R->gen_why);
	}
	return 0;
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
	if (copy_bandwidth(R, (size_t)1 << 30, l2, &g->copy_gbs) ||
	    (!R->gemm && copy_bandwidth(R, (size_t)(R->l[0].k.bytes / 2), l2, &g->copy_same_gbs)))
		return -1;
	for (uint32_t i = 0; i < p->n_in; i++)
		in_bytes += bytes_of(&p->in[i]);
	size_t want = 2 * (size_t)l2; /* rotate input copies until they exceed twice L2 */
	R->rotate = in_bytes ? (uint32_t)((want + in_bytes - 1) / in_bytes) : 1;
	R->rotate = R->rotate < 1 ? 1 : R->rotate > 8 ? 8 : R->rotate;
	g->rotate = R->rotate;
	R->dev = fs_xcalloc((size_t)nv * R->rotate + 1, sizeof(fs_devptr));
	R->fused_out = fs_xcalloc(nv + 1, sizeof(fs_devptr));
	CK(R->c.cuMemAlloc(&R->stats, 64));
	for (uint32_t v = 0; v < nv; v++) {
		const struct ten *t = fs_prog_value(p, (int32_t)v);
		size_t nb = bytes_of(t) ? bytes_of(t) : 1;
		if (v < p->n_in) {
			for (uint32_t c = 0; c < R->rotate; c++)
				CK(R->c.cuMemAlloc(&R->dev[(size_t)v * R->rotate + c], nb));
			continue;
		}
		if (fs_codegen_buffered(p, (int32_t)v)) {
			CK(R->c.cuMemAlloc(&R->dev[(size_t)v * R->rotate], nb));
			CK(R->c.cuMemsetD8(R->dev[(size_t)v * R->rotate], 0xff, nb)); /* poison */
		}
		if ((R->q.is_output[v - p->n_in] || (R->q.given && R->q.given[v])) && !(R->q.pitch && R->q.pitch[v]))
			CK(R->c.cuMemAlloc(&R->fused_out[v], nb));
	}
	R->refbuf = fs_xcalloc(nv + 1, sizeof(fs_devptr));
	int skip = draw_inputs(R) ? -1 : R->gemm ? setup_products(R) : 0;
	if (skip)
		return skip < 0 ? -1 : 0;
	if (run_unfused(R, 0))
		return -1;
	CK(R->c.cuCtxSynchronize());
	g->reps = R->o->reps;
	if (measure(R, UNFUSED_BUFS, &g->unfused) || (R->o->cpu_ref && check_reference(R)) || (R->kernel && tune(R)) ||
	    (R->gemm && time_variants(R)) ||
	    run_once(R, g->variant, R->kernel && !g->variant ? &R->l[0] : NULL, &g->fused))
		return -1;
	if (!R->gemm)
		g->fused_ms = g->tactics[g->chosen].rec.ms;
	struct timing tu;
	const void *none = NULL;
	if (time_set(R, run_unfused_seq, &none, 1, R->o->reps, &tu))
		return -1;
	g->unfused_ms = tu.ms;
	for (uint32_t k = 0; k < R->gp.n; k++)
		g->flops += 2.0 * (double)(R->gp.ref[k].mm.M * R->gp.ref[k].mm.N * R->gp.ref[k].mm.batch) * (double)R->gp.ref[k].mm.K;
	g->fused_bytes = g->variant == 1 ? R->absorbed.k.bytes : g->variant == 2 ? R->epi.k.bytes : R->kernel ? R->l[0].k.bytes : 0;
	for (uint32_t k = 0; g->variant != 1 && k < R->gp.n_calls; k++) /* the generated GEMM: its operands, not its product's output */
		g->fused_bytes += g->variant == 2 && k == R->gen.call ? R->gl[k].k.bytes - R->gp.calls[k].mm.M * R->gp.calls[k].mm.N * 2 : R->gl[k].k.bytes;
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
	int rc = prepare(R, &L, -1, &R->l[0].k.tactic, mode, mode == FS_GEN_EMULATE, 1) || run_once(R, 0, &L, e);
	unload(R, &L);
	return rc ? -1 : 0;
}

int fs_gpu_run(const struct prog *p, const struct fs_gpu_opts *o, struct fs_gpu_result *g)
{
	struct run R = {.p = p, .q = *p, .o = o, .g = g, .kernel = 1};
	memset(g, 0, sizeof(*g));
	g->chosen = g->runner_up = -1;
	fs_cuda_open(&R.c);
	fs_cuda_arch(&R.c, g->arch, sizeof(g->arch));
	if (R.c.nvrtc)
		snprintf(g->nvrtc, sizeof(g->nvrtc), "NVRTC %d.%d", R.c.nvrtc_major, R.c.nvrtc_minor);
	if (R.c.driver)
		snprintf(g->device, sizeof(g->device), "%.100s (sm_%d%d, %d SMs)", R.c.name, R.c.cc_major, R.c.cc_minor, R.c.sms);
	struct fs_gpu_opts local = *o;
	local.compile = o->compile && R.c.nvrtc; /* no NVRTC: generated only, said in g->skipped */
	R.o = &local;
	int exec = local.compile && o->execute && R.c.driver;
	R.l = fs_xcalloc(p->n_ops + 2, sizeof(*R.l));
	int rc = 0;
	if (fs_gemm_any(p)) { /* the products by cuBLASLt, read by the fused kernel as given */
		R.gemm = 1;
		rc = fs_gemm_plan(p, &R.gp, g->error, sizeof(g->error));
		R.q.given = R.gp.given, R.q.pitch = R.gp.pitch;
		R.q.is_output = fs_xcalloc(p->n_ops + 1, 1), R.qs = R.q, R.qs.is_output = fs_xcalloc(p->n_ops + 1, 1);
		R.kernel = 0;
		for (uint32_t i = 0; i < p->n_ops && !rc; i++) {
			uint8_t later = R.gp.kernel_out[p->n_in + i]; /* a later product's operand: the kernel writes it */
			R.q.is_output[i] = p->is_output[i] || later, R.qs.is_output[i] = later;
			R.kernel |= R.q.is_output[i] && !R.gp.given[p->n_in + i];
		}
	}
	for (int32_t i = -1, k = 0; i < (int32_t)p->n_ops && !rc; i++) {
		if (i >= 0 && !fs_codegen_buffered(p, (int32_t)p->n_in + i))
			continue; /* a view: no kernel in eager either */
		struct launch *L = &R.l[R.n++];
		if (i >= 0 && p->ops[i].sem->kind == GEMM) {
			lt_launch(L, &R.gp.unfused[k++], 0); /* as eager: cuBLASLt's first heuristic algorithm */
			continue;
		}
		if (i < 0 && !R.kernel)
			continue; /* only products: no fused kernel */
		g->kernels++;
		g->unfused_kernels += i >= 0;
		rc = prepare(&R, L, i, i >= 0 ? &fs_tactic_eager : NULL, FS_GEN_KERNEL, 1, exec);
	}
	if (R.gemm && !rc)
		rc = prepare_products(&R, exec);
	if (R.gemm && R.kernel && !rc)
		rc = prepare_gen(&R, exec);
	for (uint32_t i = 0; R.gemm && !rc && i < R.gp.n; i++)
		if (R.gp.ref[i].post) { /* the reference of the later products' operands, stored */
			g->kernels++, g->ref_kernels++;
			rc = prepare(&R, &R.store, -1, &fs_tactic_eager, FS_GEN_REF_STORE, 1, exec);
			break;
		}
	/* the float64 reference, and the same reading the CPU reference's values */
	for (int k = 0; k < (o->cpu_ref ? 2 : 1) && !rc && R.kernel; k++) {
		g->kernels++, g->ref_kernels++;
		rc = prepare(&R, k ? &R.ref64 : &R.ref, -1, &fs_tactic_eager, k ? FS_GEN_REF_F64 : FS_GEN_REF, 1, exec);
	}
	g->row = R.l[0].k.row;
	if (!rc && local.compile && !exec && R.kernel) { /* every tactic compiles (what a GPU would time) */
		struct fs_tactic list[FS_MAX_TACTICS];
		uint32_t n = fs_tactics(&R.l[0].k, list);
		for (uint32_t i = 1; i < n && !rc; i++) {
			struct launch L;
			g->kernels++;
			rc = prepare(&R, &L, -1, &list[i], FS_GEN_KERNEL, 1, 0);
			unload(&R, &L);
		}
	}
	if (!rc && !o->compile)
		snprintf(g->skipped, sizeof(g->skipped), "kernels generated only, not compiled");
	else if (!rc && !R.c.nvrtc)
		snprintf(g->skipped, sizeof(g->skipped), "NVRTC not found: kernels not compiled, execution skipped");
	else if (!rc && !R.c.driver)
		snprintf(g->skipped, sizeof(g->skipped), "execution skipped: %.200s", R.c.why_not);
	else if (!rc && !o->execute)
		snprintf(g->skipped, sizeof(g->skipped), "execution not asked for (--cpu-only)");
	else if (!rc)
		rc = execute(&R);
	if (!rc && g->ran && o->triage && R.kernel && !g->variant) { /* FMA contraction off, then eager rounding */
		rc = triage_run(&R, FS_GEN_KERNEL, &g->no_fma) || triage_run(&R, FS_GEN_EMULATE, &g->emulated) ? -1 : 0;
		g->triaged = !rc;
	}
	if (R.c.driver) {
		for (uint32_t v = 0; R.dev && v < (p->n_in + p->n_ops) * R.rotate; v++)
			if (R.dev[v])
				R.c.cuMemFree(R.dev[v]);
		for (uint32_t v = 0; v < p->n_in + p->n_ops; v++) {
			if (R.fused_out && R.fused_out[v])
				R.c.cuMemFree(R.fused_out[v]);
			if (R.cpu_ref && R.cpu_ref[v])
				R.c.cuMemFree(R.cpu_ref[v]);
		}
		for (uint32_t v = 0; R.refbuf && v < p->n_in + p->n_ops; v++)
			if (R.refbuf[v])
				R.c.cuMemFree(R.refbuf[v]);
		for (uint32_t k = 0; k < R.gp.n_calls; k++) {
			if (R.catout[k])
				R.c.cuMemFree(R.catout[k]);
			for (uint32_t r = 0; R.wcat && r < R.rotate; r++) {
				if (R.wcat[k * R.rotate + r])
					R.c.cuMemFree(R.wcat[k * R.rotate + r]);
				if (R.bcat[k * R.rotate + r])
					R.c.cuMemFree(R.bcat[k * R.rotate + r]);
			}
		}
		for (uint32_t i = 0; R.gw && R.gen.nm == 2 && i < FS_GEMM_GEN_TACTICS * R.rotate; i++)
			if (R.gw[i])
				R.c.cuMemFree(R.gw[i]);
		for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS; t++)
			if (R.gen_module[t])
				R.c.cuModuleUnload(R.gen_module[t]);
		if (R.stats)
			R.c.cuMemFree(R.stats);
		if (R.stream)
			R.c.cuStreamDestroy(R.stream);
	}
	if (R.n) /* the fused kernel's source goes to the report */
		g->fused_source = R.l[0].k.source, R.l[0].k.source = NULL;
	for (uint32_t i = 0; i < R.n; i++)
		unload(&R, &R.l[i]);
	unload(&R, &R.ref);
	unload(&R, &R.ref64);
	for (uint32_t k = 0; k < FS_GEMM_MAX; k++) {
		unload(&R, &R.gl[k]);
		unload(&R, &R.refg[k]);
		unload(&R, &R.cmp64[k]);
	}
	unload(&R, &R.absorbed);
	unload(&R, &R.store);
	unload(&R, &R.epi);
	fs_gemm_gen_release(&R.gen);
	free(R.gw);
	if (R.gemm) {
		free(R.q.is_output);
		free(R.qs.is_output);
	}
	if (R.lt.handle)
		fs_lt_close(&R.lt);
	fs_gemm_plan_release(&R.gp);
	free(R.refbuf);
	free(R.wcat);
	free(R.bcat);
	free(R.dev);
	free(R.fused_out);
	free(R.cpu_ref);
	free(R.l);
	fs_cuda_close(&R.c);
	return rc;
}

void fs_gpu_release(struct fs_gpu_result *g)
{
	free(g->fused_source);
	g->fused_source = NULL;
}
