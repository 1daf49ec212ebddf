/*
 * gpu.c: the generated kernels on the GPU (see gpu.h).
 */
#include "gpu.h"

#include "codegen.h"
#include "cuda.h"
#include "half.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { CU_ATTR_L2 = 38 };

/* ---- host <-> device values ----------------------------------------------------------- */

static size_t elem_size(uint8_t dt)
{
	return fs_dtype_size((enum fs_dtype)dt);
}

static void to_device_bytes(const struct ten *t, unsigned char *out)
{
	for (int64_t i = 0; i < t->n; i++) {
		double v = t->d[i];
		switch (t->dtype) {
		case FS_DT_F64: memcpy(out + 8 * i, &v, 8); break;
		case FS_DT_F32: { float f = (float)v; memcpy(out + 4 * i, &f, 4); break; }
		case FS_DT_BF16: { uint16_t h = fs_bf16_bits(v); memcpy(out + 2 * i, &h, 2); break; }
		case FS_DT_F16: { uint16_t h = fs_f16_bits(v); memcpy(out + 2 * i, &h, 2); break; }
		case FS_DT_I64: { int64_t x = (int64_t)v; memcpy(out + 8 * i, &x, 8); break; }
		case FS_DT_I32: { int32_t x = (int32_t)v; memcpy(out + 4 * i, &x, 4); break; }
		default: out[i] = v != 0; break;
		}
	}
}

/* Device bytes -> doubles; a poisoned element (all bits set) reads as NaN. */
static void from_device_bytes(const unsigned char *in, struct ten *t)
{
	for (int64_t i = 0; i < t->n; i++) {
		double v;
		switch (t->dtype) {
		case FS_DT_F64: memcpy(&v, in + 8 * i, 8); break;
		case FS_DT_F32: { float f; memcpy(&f, in + 4 * i, 4); v = f; break; }
		case FS_DT_BF16: { uint16_t h; memcpy(&h, in + 2 * i, 2); v = fs_bf16_value(h); break; }
		case FS_DT_F16: { uint16_t h; memcpy(&h, in + 2 * i, 2); v = fs_f16_value(h); break; }
		case FS_DT_I64: { int64_t x; memcpy(&x, in + 8 * i, 8); v = x == -1 ? NAN : (double)x; break; }
		case FS_DT_I32: { int32_t x; memcpy(&x, in + 4 * i, 4); v = x == -1 ? NAN : (double)x; break; }
		default: v = in[i] == 0xff ? NAN : in[i]; break;
		}
		t->d[i] = v;
	}
}

/* ---- running ---------------------------------------------------------------------------- */

struct launch {
	struct fs_kernel k;
	void *module, *fn;
};

struct run {
	const struct prog *p;
	const struct fs_gpu_opts *o;
	struct fs_cuda c;
	struct launch *l;          /* [0] fused (the chosen tactic), then the unfused kernels in order */
	uint32_t n;
	fs_devptr *dev;            /* unfused: per value; inputs: rotate copies each */
	fs_devptr *fused_out;      /* per value: the fused kernel's outputs */
	uint32_t rotate;
	struct fs_gpu_result *g;
};

#define CK(call)                                                                          \
	do {                                                                              \
		if (fs_cuda_check(&R->c, (call), #call, R->g->error, sizeof(R->g->error))) \
			return -1;                                                        \
	} while (0)

static size_t bytes_of(const struct ten *t)
{
	return (size_t)t->n * elem_size(t->dtype);
}

static const struct ten *val(const struct prog *p, int32_t v)
{
	return v < (int32_t)p->n_in ? &p->in[v] : &p->ops[v - p->n_in].out;
}

static int launch(struct run *R, const struct launch *L, uint32_t copy, int fused)
{
	void *args[FS_KERNEL_MAX_PARAMS];
	fs_devptr ptr[FS_KERNEL_MAX_PARAMS];
	for (uint32_t i = 0; i < L->k.n_params; i++) {
		int32_t v = L->k.value[i];
		if (v < (int32_t)R->p->n_in)
			ptr[i] = R->dev[(size_t)v * R->rotate + copy];
		else if (fused)
			ptr[i] = R->fused_out[v];
		else
			ptr[i] = R->dev[(size_t)v * R->rotate];
		args[i] = &ptr[i];
	}
	CK(R->c.cuLaunchKernel(L->fn, (unsigned)L->k.grid, 1, 1, (unsigned)L->k.block, 1, 1, 0, NULL, args, NULL));
	return 0;
}

static int run_unfused(struct run *R, uint32_t copy)
{
	for (uint32_t i = 1; i < R->n; i++)
		if (launch(R, &R->l[i], copy, 0))
			return -1;
	return 0;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

/* median and p90 - p10 milliseconds of `reps` runs of a fused kernel, or of
 * the unfused sequence (L NULL), rotating the input copies */
static int time_it(struct run *R, const struct launch *L, uint32_t reps, double *ms, double *spread)
{
	void *start, *stop;
	CK(R->c.cuEventCreate(&start, 0));
	CK(R->c.cuEventCreate(&stop, 0));
	float *t = fs_xmalloc(reps * sizeof(float));
	int rc = 0;
	for (uint32_t r = 0; r < reps + 5 && !rc; r++) { /* 5 warm-up runs */
		uint32_t copy = r % R->rotate;
		rc = fs_cuda_check(&R->c, R->c.cuEventRecord(start, NULL), "cuEventRecord", R->g->error, sizeof(R->g->error));
		if (!rc)
			rc = L ? launch(R, L, copy, 1) : run_unfused(R, copy);
		if (!rc)
			rc = fs_cuda_check(&R->c, R->c.cuEventRecord(stop, NULL), "cuEventRecord", R->g->error, sizeof(R->g->error)) ||
			     fs_cuda_check(&R->c, R->c.cuEventSynchronize(stop), "cuEventSynchronize", R->g->error, sizeof(R->g->error));
		float e = 0;
		if (!rc)
			rc = fs_cuda_check(&R->c, R->c.cuEventElapsedTime(&e, start, stop), "cuEventElapsedTime", R->g->error,
					   sizeof(R->g->error));
		if (r >= 5)
			t[r - 5] = e;
	}
	if (!rc) {
		qsort(t, reps, sizeof(float), cmp_float);
		*ms = t[reps / 2];
		if (spread)
			*spread = t[reps * 9 / 10 < reps ? reps * 9 / 10 : reps - 1] - t[reps / 10];
	}
	free(t);
	R->c.cuEventDestroy(start);
	R->c.cuEventDestroy(stop);
	return rc ? -1 : 0;
}

/* device-to-device copy of 1 GiB: 2 GiB moved */
static int copy_bandwidth(struct run *R, double *gbs)
{
	size_t n = (size_t)1 << 30;
	fs_devptr a, b;
	CK(R->c.cuMemAlloc(&a, n));
	if (fs_cuda_check(&R->c, R->c.cuMemAlloc(&b, n), "cuMemAlloc", R->g->error, sizeof(R->g->error))) {
		R->c.cuMemFree(a);
		return -1;
	}
	void *start, *stop;
	float best = 0, e;
	int rc = fs_cuda_check(&R->c, R->c.cuEventCreate(&start, 0), "cuEventCreate", R->g->error, sizeof(R->g->error)) ||
		 fs_cuda_check(&R->c, R->c.cuEventCreate(&stop, 0), "cuEventCreate", R->g->error, sizeof(R->g->error));
	float t[12];
	for (int r = 0; r < 12 && !rc; r++) {
		rc = fs_cuda_check(&R->c, R->c.cuEventRecord(start, NULL), "cuEventRecord", R->g->error, sizeof(R->g->error)) ||
		     fs_cuda_check(&R->c, R->c.cuMemcpyDtoD(b, a, n), "cuMemcpyDtoD", R->g->error, sizeof(R->g->error)) ||
		     fs_cuda_check(&R->c, R->c.cuEventRecord(stop, NULL), "cuEventRecord", R->g->error, sizeof(R->g->error)) ||
		     fs_cuda_check(&R->c, R->c.cuEventSynchronize(stop), "cuEventSynchronize", R->g->error, sizeof(R->g->error)) ||
		     fs_cuda_check(&R->c, R->c.cuEventElapsedTime(&e, start, stop), "cuEventElapsedTime", R->g->error,
				   sizeof(R->g->error));
		t[r] = e;
	}
	if (!rc) {
		qsort(t + 2, 10, sizeof(float), cmp_float);
		best = t[2 + 5];
		*gbs = 2.0 * (double)n / (best * 1e-3) / 1e9;
		R->c.cuEventDestroy(start);
		R->c.cuEventDestroy(stop);
	}
	R->c.cuMemFree(a);
	R->c.cuMemFree(b);
	return rc ? -1 : 0;
}

static void free_outputs(const struct prog *p, struct ten *set)
{
	for (uint32_t v = 0; set && v < p->n_in + p->n_ops; v++)
		free(set[v].d);
	free(set);
}

/* the outputs in src (per value, `stride` copies each) read back into a new set */
static int download(struct run *R, fs_devptr *src, size_t stride, struct ten **set)
{
	const struct prog *p = R->p;
	struct ten *out = *set = fs_xcalloc(p->n_in + p->n_ops + 1, sizeof(struct ten));
	for (uint32_t i = 0; i < p->n_ops; i++) {
		if (!p->is_output[i])
			continue;
		int32_t v = (int32_t)(p->n_in + i);
		struct ten *t = &out[v];
		*t = p->ops[i].out;
		t->d = fs_xmalloc((size_t)(t->n ? t->n : 1) * sizeof(double));
		unsigned char *h = fs_xmalloc(bytes_of(t) + 1);
		int rc = fs_cuda_check(&R->c, R->c.cuMemcpyDtoH(h, src[(size_t)v * stride], bytes_of(t)), "cuMemcpyDtoH",
				       R->g->error, sizeof(R->g->error));
		if (!rc)
			from_device_bytes(h, t);
		free(h);
		if (rc)
			return -1;
	}
	return 0;
}

/* Generates (and, with `compile`, compiles and loads) the fused kernel
 * (only < 0) under tactic t, or op `only`'s kernel. */
static int prepare(struct run *R, struct launch *L, int32_t only, const struct fs_tactic *t, int emulate, int fmad, int load)
{
	const struct prog *p = R->p;
	struct fs_gpu_result *g = R->g;
	char why[256], *cubin = NULL;
	size_t len;
	memset(L, 0, sizeof(*L));
	if (fs_codegen(p, only, emulate, t, &L->k, why, sizeof(why))) {
		snprintf(g->error, sizeof(g->error), "%s kernel%s%s: %s", only < 0 ? "fused" : "unfused", only < 0 ? "" : " of %",
			 only < 0 ? "" : fs_scan_str(p->s, p->g->nodes[p->ops[only].node].name), why);
		return -1;
	}
	if (!R->o->compile)
		return 0;
	if (fs_cuda_compile(&R->c, L->k.source, g->arch, fmad, &cubin, &len, g->error, sizeof(g->error)))
		return -1;
	g->compiled++;
	int rc = load && (fs_cuda_check(&R->c, R->c.cuModuleLoadData(&L->module, cubin), "cuModuleLoadData", g->error, sizeof(g->error)) ||
			  fs_cuda_check(&R->c, R->c.cuModuleGetFunction(&L->fn, L->module, "fs_k"), "cuModuleGetFunction", g->error,
					sizeof(g->error)));
	free(cubin);
	return rc ? -1 : 0;
}

static void unload(struct run *R, struct launch *L)
{
	if (L->module && R->c.driver)
		R->c.cuModuleUnload(L->module);
	fs_kernel_release(&L->k);
	L->module = L->fn = NULL;
}

/* The fused kernel L once, on copy 0 of the inputs, into poisoned outputs, read back. */
static int run_once(struct run *R, const struct launch *L, struct ten **out)
{
	const struct prog *p = R->p;
	for (uint32_t v = p->n_in; v < p->n_in + p->n_ops; v++)
		if (R->fused_out[v])
			CK(R->c.cuMemsetD8(R->fused_out[v], 0xff, bytes_of(val(p, (int32_t)v))));
	if (launch(R, L, 0, 1))
		return -1;
	CK(R->c.cuCtxSynchronize());
	return download(R, R->fused_out, 1, out);
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
	snprintf(k->policy, sizeof(k->policy), "median of %u after 5 warm-up, inputs rotated past 2x L2", R->o->reps);
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
		list[0] = (struct fs_tactic){hit.vec, hit.threads, hit.per};
		n = 1, g->cache_hit = 1;
	} else {
		if (o->cache && o->retune)
			o->cache->misses++;
		n = fs_tactics(&R->l[0].k, list);
	}
	g->n_tactics = n;
	g->kernels += n;
	for (uint32_t i = 0; i < n; i++) {
		struct fs_tactic_run *tr = &g->tactics[i];
		struct launch L;
		struct ten *out = NULL;
		tr->t = list[i];
		if (prepare(R, &L, -1, &list[i], 0, 1, 1)) {
			snprintf(tr->failed, sizeof(tr->failed), "%.190s", g->error);
			g->error[0] = '\0', g->n_failed++;
			unload(R, &L);
			continue;
		}
		/* a launch or memory error here is the context's end: stop */
		if (run_once(R, &L, &out) || time_it(R, &L, o->reps, &tr->ms, &tr->spread)) {
			free_outputs(R->p, out);
			unload(R, &L);
			return -1;
		}
		if (o->check && o->check(o->ctx, g->unfused, out, tr->failed, sizeof(tr->failed)))
			g->n_failed++;
		free_outputs(R->p, out);
		unload(R, &L);
	}
	/* the fastest eligible; within 2% of it, the earliest in the list */
	int32_t best = -1;
	for (uint32_t i = 0; i < n; i++)
		if (!g->tactics[i].failed[0] && (best < 0 || g->tactics[i].ms < g->tactics[best].ms))
			best = (int32_t)i;
	g->chosen = best < 0 ? 0 : best;
	for (uint32_t i = 0; best >= 0 && i < n; i++)
		if (!g->tactics[i].failed[0] && g->tactics[i].ms <= g->tactics[best].ms * 1.02) {
			g->chosen = (int32_t)i;
			break;
		}
	g->runner_up = -1;
	for (uint32_t i = 0; i < n; i++)
		if ((int32_t)i != g->chosen && !g->tactics[i].failed[0] &&
		    (g->runner_up < 0 || g->tactics[i].ms < g->tactics[g->runner_up].ms))
			g->runner_up = (int32_t)i;
	const struct fs_tactic_run *w = &g->tactics[g->chosen];
	if (o->cache && !g->cache_hit && best >= 0 && o->kernel_key) {
		struct fs_tune_entry e = {.key = key, .vec = w->t.vec, .threads = w->t.threads, .per = w->t.per,
					  .ms = w->ms, .spread = w->spread, .timed = n, .failed = g->n_failed};
		tactic_name(R, &w->t, e.name, sizeof(e.name));
		if (g->runner_up >= 0) {
			tactic_name(R, &g->tactics[g->runner_up].t, e.runner_up, sizeof(e.runner_up));
			e.runner_up_ms = g->tactics[g->runner_up].ms;
		}
		fs_tune_record(o->cache, &e);
	}
	unload(R, &R->l[0]);
	return prepare(R, &R->l[0], -1, &w->t, 0, 1, 1);
}

static int execute(struct run *R)
{
	const struct prog *p = R->p;
	struct fs_gpu_result *g = R->g;
	uint32_t nv = p->n_in + p->n_ops;
	size_t in_bytes = 0;
	int l2 = 0;
	CK(R->c.cuDeviceGetAttribute(&l2, CU_ATTR_L2, R->c.device));
	for (uint32_t i = 0; i < p->n_in; i++)
		in_bytes += bytes_of(&p->in[i]);
	size_t want = 2 * (size_t)l2; /* rotate input copies until they exceed twice L2 */
	R->rotate = in_bytes ? (uint32_t)((want + in_bytes - 1) / in_bytes) : 1;
	R->rotate = R->rotate < 1 ? 1 : R->rotate > 8 ? 8 : R->rotate;
	g->rotate = R->rotate;
	R->dev = fs_xcalloc((size_t)nv * R->rotate + 1, sizeof(fs_devptr));
	R->fused_out = fs_xcalloc(nv + 1, sizeof(fs_devptr));
	for (uint32_t v = 0; v < nv; v++) {
		const struct ten *t = val(p, (int32_t)v);
		size_t nb = bytes_of(t) ? bytes_of(t) : 1;
		if (v < p->n_in) {
			unsigned char *h = fs_xmalloc(nb);
			to_device_bytes(t, h);
			for (uint32_t c = 0; c < R->rotate; c++) {
				CK(R->c.cuMemAlloc(&R->dev[(size_t)v * R->rotate + c], nb));
				CK(R->c.cuMemcpyHtoD(R->dev[(size_t)v * R->rotate + c], h, bytes_of(t)));
			}
			free(h);
			continue;
		}
		if (fs_codegen_buffered(p, (int32_t)v)) {
			CK(R->c.cuMemAlloc(&R->dev[(size_t)v * R->rotate], nb));
			CK(R->c.cuMemsetD8(R->dev[(size_t)v * R->rotate], 0xff, nb)); /* poison */
		}
		if (p->is_output[v - p->n_in])
			CK(R->c.cuMemAlloc(&R->fused_out[v], nb));
	}
	if (run_unfused(R, 0))
		return -1;
	CK(R->c.cuCtxSynchronize());
	if (download(R, R->dev, R->rotate, &g->unfused) || tune(R) || run_once(R, &R->l[0], &g->fused))
		return -1;
	g->reps = R->o->reps;
	g->fused_ms = g->tactics[g->chosen].ms;
	if (time_it(R, NULL, R->o->reps, &g->unfused_ms, NULL) || copy_bandwidth(R, &g->copy_gbs))
		return -1;
	g->fused_bytes = R->l[0].k.bytes;
	for (uint32_t i = 1; i < R->n; i++)
		g->unfused_bytes += R->l[i].k.bytes;
	g->unfused_launches = R->n - 1;
	g->ran = 1;
	return 0;
}

/* The chosen fused kernel again, compiled with FMA contraction off (emulate
 * 0) or rounding every op like eager (emulate 1), run once, read back. */
static int triage_run(struct run *R, int emulate, struct ten **out)
{
	struct launch L;
	int rc = prepare(R, &L, -1, &R->l[0].k.tactic, emulate, emulate, 1) || run_once(R, &L, out);
	unload(R, &L);
	return rc ? -1 : 0;
}

/* ---- ahead-of-time kernels (--emit) ------------------------------------------------------- */

static cJSON *shape_json(const struct ten *t)
{
	cJSON *a = cJSON_CreateArray();
	for (uint8_t d = 0; d < t->rank; d++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)t->shape[d]));
	return a;
}

static int emit_file(struct run *R, const char *dir, const char *name, const char *ext, const char *data)
{
	char path[1000];
	snprintf(path, sizeof(path), "%.900s/%s.%s", dir, name, ext);
	if (fs_write_file_atomic(path, data, strlen(data)) == 0)
		return 0;
	snprintf(R->g->emitted, sizeof(R->g->emitted), "cannot write %s: %s", path, strerror(errno));
	R->g->emit_failed = 1;
	return -1;
}

/* NAME.cu, NAME.ptx and NAME.json for the chosen kernel; NAME from a hash of
 * the region's kernel and the tactic */
static void emit(struct run *R)
{
	const struct prog *p = R->p;
	struct fs_gpu_result *g = R->g;
	const struct fs_kernel *k = &R->l[0].k;
	const char *dir = R->o->emit_dir;
	char varch[24], why[1024], *ptx = NULL, tname[32], name[40];
	size_t len;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		snprintf(g->emitted, sizeof(g->emitted), "cannot create %s: %s", dir, strerror(errno));
		g->emit_failed = 1;
		return;
	}
	snprintf(varch, sizeof(varch), "compute_%s", g->arch + 3);
	if (fs_cuda_compile(&R->c, k->source, varch, 1, &ptx, &len, why, sizeof(why))) {
		snprintf(g->emitted, sizeof(g->emitted), "no PTX: %.1000s", why);
		g->emit_failed = 1;
		return;
	}
	tactic_name(R, &k->tactic, tname, sizeof(tname));
	uint64_t h = fs_hash_bytes(tname, strlen(tname), fs_hash_bytes(k->source, strlen(k->source), 0x656d6974ull));
	snprintf(name, sizeof(name), "fs_%016llx", (unsigned long long)h);
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "format", "fusescan.kernel/1");
	cJSON_AddStringToObject(j, "name", name);
	cJSON_AddStringToObject(j, "entry", "fs_k");
	char file[64];
	snprintf(file, sizeof(file), "%s.cu", name);
	cJSON_AddStringToObject(j, "source", file);
	snprintf(file, sizeof(file), "%s.ptx", name);
	cJSON_AddStringToObject(j, "ptx", file);
	cJSON_AddStringToObject(j, "ptx_arch", varch);
	cJSON_AddStringToObject(j, "nvrtc", g->nvrtc);
	cJSON_AddStringToObject(j, "tuned_on", g->ran ? g->device : "");
	cJSON *t = cJSON_AddObjectToObject(j, "tactic");
	cJSON_AddStringToObject(t, "name", tname);
	cJSON_AddStringToObject(t, "kind", k->row ? "row" : "elementwise");
	cJSON_AddNumberToObject(t, "vec", k->tactic.vec);
	cJSON_AddNumberToObject(t, "threads", k->tactic.threads);
	cJSON_AddNumberToObject(t, k->row ? "rows_per_block" : "groups_per_thread", k->tactic.per);
	cJSON *l = cJSON_AddObjectToObject(j, "launch");
	cJSON *grid = cJSON_AddArrayToObject(l, "grid"), *block = cJSON_AddArrayToObject(l, "block");
	int64_t gb[2][3] = {{k->grid, 1, 1}, {k->block, 1, 1}};
	for (int d = 0; d < 3; d++) {
		cJSON_AddItemToArray(grid, cJSON_CreateNumber((double)gb[0][d]));
		cJSON_AddItemToArray(block, cJSON_CreateNumber((double)gb[1][d]));
	}
	cJSON_AddNumberToObject(l, "shared_bytes", 0);
	cJSON *params = cJSON_AddArrayToObject(j, "params");
	for (uint32_t i = 0; i < k->n_params; i++) {
		int32_t v = k->value[i];
		uint32_t node = v < (int32_t)p->n_in ? p->in_node[v] : p->ops[v - p->n_in].node;
		const struct ten *tv = val(p, v);
		cJSON *q = cJSON_CreateObject();
		cJSON_AddStringToObject(q, "role", k->write[i] ? "output" : "input");
		cJSON_AddStringToObject(q, "node", fs_scan_str(p->s, p->g->nodes[node].name));
		cJSON_AddItemToObject(q, "shape", shape_json(tv));
		cJSON_AddStringToObject(q, "dtype", fs_dtype_name((enum fs_dtype)tv->dtype));
		cJSON_AddItemToArray(params, q);
	}
	cJSON *tab = cJSON_AddArrayToObject(j, "tactics");
	for (uint32_t i = 0; i < g->n_tactics; i++) {
		const struct fs_tactic_run *tr = &g->tactics[i];
		cJSON *q = cJSON_CreateObject();
		tactic_name(R, &tr->t, tname, sizeof(tname));
		cJSON_AddStringToObject(q, "name", tname);
		cJSON_AddNumberToObject(q, "median_ms", tr->ms);
		cJSON_AddNumberToObject(q, "spread_ms", tr->spread);
		if (tr->failed[0])
			cJSON_AddStringToObject(q, "failed", tr->failed);
		cJSON_AddBoolToObject(q, "chosen", (int32_t)i == g->chosen);
		cJSON_AddItemToArray(tab, q);
	}
	char *json = cJSON_Print(j);
	size_t jl = strlen(json);
	json = fs_xrealloc(json, jl + 2);
	json[jl] = '\n', json[jl + 1] = '\0';
	if (!emit_file(R, dir, name, "cu", k->source) && !emit_file(R, dir, name, "ptx", ptx) && !emit_file(R, dir, name, "json", json))
		snprintf(g->emitted, sizeof(g->emitted), "%s/%s.cu, .ptx, .json", dir, name);
	free(json);
	cJSON_Delete(j);
	free(ptx);
}

int fs_gpu_run(const struct prog *p, const struct fs_gpu_opts *o, struct fs_gpu_result *g)
{
	struct run R = {.p = p, .o = o, .g = g};
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
	for (int32_t i = -1; i < (int32_t)p->n_ops && !rc; i++) {
		if (i >= 0 && !fs_codegen_buffered(p, (int32_t)p->n_in + i))
			continue; /* a view: no kernel in eager either */
		struct launch *L = &R.l[R.n++];
		g->kernels++;
		g->unfused_kernels += i >= 0;
		rc = prepare(&R, L, i, i >= 0 ? &fs_tactic_eager : NULL, 0, 1, exec);
	}
	g->row = R.l[0].k.row;
	if (!rc && local.compile && !exec) { /* every tactic compiles (what a GPU would time) */
		struct fs_tactic list[FS_MAX_TACTICS];
		uint32_t n = fs_tactics(&R.l[0].k, list);
		for (uint32_t i = 1; i < n && !rc; i++) {
			struct launch L;
			g->kernels++;
			rc = prepare(&R, &L, -1, &list[i], 0, 1, 0);
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
	if (!rc && g->ran && o->triage) /* FMA contraction off, then eager rounding */
		rc = triage_run(&R, 0, &g->no_fma) || triage_run(&R, 1, &g->emulated) ? -1 : 0;
	if (!rc && o->emit_dir && local.compile)
		emit(&R);
	else if (!rc && o->emit_dir) {
		snprintf(g->emitted, sizeof(g->emitted), "nothing compiled (NVRTC not found)");
		g->emit_failed = 1;
	}
	if (R.c.driver) {
		for (uint32_t v = 0; R.dev && v < (p->n_in + p->n_ops) * R.rotate; v++)
			if (R.dev[v])
				R.c.cuMemFree(R.dev[v]);
		for (uint32_t v = 0; R.fused_out && v < p->n_in + p->n_ops; v++)
			if (R.fused_out[v])
				R.c.cuMemFree(R.fused_out[v]);
	}
	if (R.n) /* the fused kernel's source goes to the report */
		g->fused_source = R.l[0].k.source, R.l[0].k.source = NULL;
	for (uint32_t i = 0; i < R.n; i++)
		unload(&R, &R.l[i]);
	free(R.dev);
	free(R.fused_out);
	free(R.l);
	fs_cuda_close(&R.c);
	return rc;
}

void fs_gpu_release(const struct prog *p, struct fs_gpu_result *g)
{
	struct ten **sets[4] = {&g->unfused, &g->fused, &g->no_fma, &g->emulated};
	for (int k = 0; k < 4; k++) {
		free_outputs(p, *sets[k]);
		*sets[k] = NULL;
	}
	free(g->fused_source);
	g->fused_source = NULL;
}
