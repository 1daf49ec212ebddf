/*
 * gpu.c: the generated kernels on the GPU (see gpu.h).
 */
#include "gpu.h"

#include "codegen.h"
#include "cuda.h"
#include "half.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	struct fs_cuda c;
	struct launch *l;          /* [0] fused, then the unfused kernels in order */
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

/* median milliseconds of `reps` runs of the fused kernel (which = 0) or the
 * unfused sequence (1), rotating the input copies */
static int time_it(struct run *R, int which, uint32_t reps, double *ms)
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
			rc = which ? run_unfused(R, copy) : launch(R, &R->l[0], copy, 1);
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

static int download(struct run *R, fs_devptr *src, size_t stride, struct ten *out)
{
	const struct prog *p = R->p;
	for (uint32_t i = 0; i < p->n_ops; i++) {
		if (!p->is_output[i])
			continue;
		int32_t v = (int32_t)(p->n_in + i);
		struct ten *t = &out[v];
		*t = p->ops[i].out;
		t->d = fs_xmalloc((size_t)(t->n ? t->n : 1) * sizeof(double));
		unsigned char *h = fs_xmalloc(bytes_of(t) + 1);
		CK(R->c.cuMemcpyDtoH(h, src[(size_t)v * stride], bytes_of(t)));
		from_device_bytes(h, t);
		free(h);
	}
	return 0;
}

static int execute(struct run *R, uint32_t reps)
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
		if (p->is_output[v - p->n_in]) {
			CK(R->c.cuMemAlloc(&R->fused_out[v], nb));
			CK(R->c.cuMemsetD8(R->fused_out[v], 0xff, nb));
		}
	}
	if (run_unfused(R, 0) || launch(R, &R->l[0], 0, 1))
		return -1;
	CK(R->c.cuCtxSynchronize());
	g->unfused = fs_xcalloc(nv + 1, sizeof(struct ten));
	g->fused = fs_xcalloc(nv + 1, sizeof(struct ten));
	if (download(R, R->dev, R->rotate, g->unfused) || download(R, R->fused_out, 1, g->fused))
		return -1;
	g->reps = reps;
	if (time_it(R, 0, reps, &g->fused_ms) || time_it(R, 1, reps, &g->unfused_ms) || copy_bandwidth(R, &g->copy_gbs))
		return -1;
	g->fused_bytes = R->l[0].k.bytes;
	for (uint32_t i = 1; i < R->n; i++)
		g->unfused_bytes += R->l[i].k.bytes;
	g->unfused_launches = R->n - 1;
	g->ran = 1;
	return 0;
}

/* One more fused kernel (FMA contraction off, or eager rounding emulated),
 * run once on copy 0 of the inputs into poisoned outputs, read back. */
static int triage_run(struct run *R, int emulate, struct ten **out)
{
	const struct prog *p = R->p;
	struct launch L = {0};
	char why[256], *cubin = NULL;
	size_t len;
	if (fs_codegen(p, -1, emulate, &L.k, why, sizeof(why))) {
		snprintf(R->g->error, sizeof(R->g->error), "triage kernel: %s", why);
		return -1;
	}
	int rc = fs_cuda_compile(&R->c, L.k.source, R->g->arch, emulate, &cubin, &len, R->g->error, sizeof(R->g->error)) ||
		 fs_cuda_check(&R->c, R->c.cuModuleLoadData(&L.module, cubin), "cuModuleLoadData", R->g->error, sizeof(R->g->error)) ||
		 fs_cuda_check(&R->c, R->c.cuModuleGetFunction(&L.fn, L.module, "fs_k"), "cuModuleGetFunction", R->g->error,
			       sizeof(R->g->error));
	for (uint32_t v = p->n_in; !rc && v < p->n_in + p->n_ops; v++)
		if (R->fused_out[v])
			rc = fs_cuda_check(&R->c, R->c.cuMemsetD8(R->fused_out[v], 0xff, bytes_of(val(p, (int32_t)v))), "cuMemsetD8",
					   R->g->error, sizeof(R->g->error));
	if (!rc)
		rc = launch(R, &L, 0, 1) ||
		     fs_cuda_check(&R->c, R->c.cuCtxSynchronize(), "cuCtxSynchronize", R->g->error, sizeof(R->g->error));
	if (!rc) {
		*out = fs_xcalloc(p->n_in + p->n_ops + 1, sizeof(struct ten));
		rc = download(R, R->fused_out, 1, *out);
	}
	if (L.module)
		R->c.cuModuleUnload(L.module);
	free(cubin);
	fs_kernel_release(&L.k);
	return rc ? -1 : 0;
}

int fs_gpu_run(const struct prog *p, int exec, int compile, int triage, uint32_t reps, struct fs_gpu_result *g)
{
	struct run R = {.p = p, .g = g};
	memset(g, 0, sizeof(*g));
	fs_cuda_open(&R.c);
	fs_cuda_arch(&R.c, g->arch, sizeof(g->arch));
	if (R.c.nvrtc)
		snprintf(g->nvrtc, sizeof(g->nvrtc), "NVRTC %d.%d", R.c.nvrtc_major, R.c.nvrtc_minor);
	if (R.c.driver)
		snprintf(g->device, sizeof(g->device), "%.100s (sm_%d%d, %d SMs)", R.c.name, R.c.cc_major, R.c.cc_minor, R.c.sms);
	R.l = fs_xcalloc(p->n_ops + 2, sizeof(*R.l));
	int rc = 0;
	char why[256];
	for (int32_t i = -1; i < (int32_t)p->n_ops; i++) {
		if (i >= 0 && !fs_codegen_buffered(p, (int32_t)p->n_in + i))
			continue; /* a view: no kernel in eager either */
		struct launch *L = &R.l[R.n++];
		g->kernels++;
		if (fs_codegen(p, i, 0, &L->k, why, sizeof(why))) {
			snprintf(g->error, sizeof(g->error), "%s kernel%s%s: %s", i < 0 ? "fused" : "unfused",
				 i < 0 ? "" : " of %", i < 0 ? "" : fs_scan_str(p->s, p->g->nodes[p->ops[i].node].name), why);
			rc = -1;
			break;
		}
		char *cubin;
		size_t len;
		if (!compile)
			continue;
		if (fs_cuda_compile(&R.c, L->k.source, g->arch, 1, &cubin, &len, g->error, sizeof(g->error))) {
			rc = R.c.nvrtc ? -1 : 0; /* no NVRTC: nothing compiled, said in g->nvrtc */
			break;
		}
		g->compiled++;
		if (exec && R.c.driver &&
		    (fs_cuda_check(&R.c, R.c.cuModuleLoadData(&L->module, cubin), "cuModuleLoadData", g->error, sizeof(g->error)) ||
		     fs_cuda_check(&R.c, R.c.cuModuleGetFunction(&L->fn, L->module, "fs_k"), "cuModuleGetFunction", g->error,
				   sizeof(g->error))))
			rc = -1;
		free(cubin);
		if (rc)
			break;
	}
	if (!rc && !compile)
		snprintf(g->skipped, sizeof(g->skipped), "kernels generated only, not compiled");
	else if (!rc && !R.c.nvrtc)
		snprintf(g->skipped, sizeof(g->skipped), "NVRTC not found: kernels not compiled, execution skipped");
	else if (!rc && !R.c.driver)
		snprintf(g->skipped, sizeof(g->skipped), "execution skipped: %.200s", R.c.why_not);
	else if (!rc && !exec)
		snprintf(g->skipped, sizeof(g->skipped), "execution not asked for (--cpu-only)");
	else if (!rc)
		rc = execute(&R, reps);
	if (!rc && g->ran && triage) /* FMA contraction off (compile as emulate = 0), then eager rounding */
		rc = triage_run(&R, 0, &g->no_fma) || triage_run(&R, 1, &g->emulated) ? -1 : 0;
	if (R.c.driver) {
		for (uint32_t v = 0; R.dev && v < (p->n_in + p->n_ops) * R.rotate; v++)
			if (R.dev[v])
				R.c.cuMemFree(R.dev[v]);
		for (uint32_t v = 0; R.fused_out && v < p->n_in + p->n_ops; v++)
			if (R.fused_out[v])
				R.c.cuMemFree(R.fused_out[v]);
		for (uint32_t i = 0; i < R.n; i++)
			if (R.l[i].module)
				R.c.cuModuleUnload(R.l[i].module);
	}
	if (R.n) /* the fused kernel's source goes to the report */
		g->fused_source = R.l[0].k.source, R.l[0].k.source = NULL;
	for (uint32_t i = 0; i < R.n; i++)
		fs_kernel_release(&R.l[i].k);
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
		for (uint32_t v = 0; *sets[k] && v < p->n_in + p->n_ops; v++)
			free((*sets[k])[v].d);
		free(*sets[k]);
		*sets[k] = NULL;
	}
	free(g->fused_source);
	g->fused_source = NULL;
}
