/*
 * gpu_launch.c: running a region's kernels and products on the GPU
 * (gpu_run.h): where each value lies, a generated kernel's arguments and
 * launch, a cuBLASLt product's, the generated GEMM's, the fused plan's
 * variants run once and checked against the float64 reference, compiling and
 * loading. Calls nothing else of fuse/gpu*.c.
 */
#include "gpu_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* where value v lies for a run on input copy `copy` of the results in w */
fs_devptr fs_gpu_buffer(const struct run *R, int32_t v, uint32_t copy, enum where w)
{
	if (v < (int32_t)R->p->n_in)
		return R->dev[(size_t)v * R->rotate + copy];
	return w == FUSED_BUFS ? R->fused_out[v] : w == CPU_REF_BUFS ? R->cpu_ref[v] : R->dev[(size_t)v * R->rotate];
}

uint32_t fs_gpu_kernel_args(struct run *R, const struct launch *L, uint32_t copy, enum where w, struct kargs *A)
{
	uint32_t i;
	for (i = 0; i < L->k.n_params; i++) {
		int32_t v = L->k.value[i];
		int given = !L->k.write[i] && R->ks.q.given && R->ks.q.given[v];
		A->ptr[i] = (given && L->ref) || (L->store && L->k.write[i]) ? R->refbuf[v] : fs_gpu_buffer(R, v, copy, w);
		if (given && !L->ref && w == FUSED_BUFS && R->ks.q.pitch[v]) { /* its columns of a concatenated product */
			long long ld;
			fs_gpu_gemm_in_group(R, v, &A->ptr[i], &ld);
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

int fs_gpu_launch(struct run *R, const struct launch *L, uint32_t copy, enum where w)
{
	if (L->gc)
		return fs_gpu_gemm_launch_lt(R, L, copy, w);
	struct kargs A;
	fs_gpu_kernel_args(R, L, copy, w, &A);
	CK(R->c.cuLaunchKernel(L->fn, (unsigned)L->k.grid, 1, 1, (unsigned)L->k.block, 1, 1, 0, R->stream, A.p, NULL));
	return 0;
}

/* Where a fused group's product v lies: its columns of the group's output. */
void fs_gpu_gemm_in_group(const struct run *R, int32_t v, fs_devptr *x, long long *ld)
{
	for (uint32_t k = 0; k < R->ks.gp.n_calls; k++) {
		const struct fs_gemm_call *c = &R->ks.gp.calls[k];
		for (uint32_t j = 0; j < c->n_members; j++)
			if (c->member[j] == v) {
				*x = R->catout[k] + (fs_devptr)c->col[j] * fs_dtype_size((enum fs_dtype)c->mm.dtype);
				*ld = c->mm.N;
			}
	}
}

/* A cuBLASLt product: the concatenated weight and bias of a fused group
 * (b < 0), its output buffer (a group's: one for all of it). */
int fs_gpu_gemm_launch_lt(struct run *R, const struct launch *L, uint32_t copy, enum where w)
{
	const struct fs_gemm_call *c = L->gc;
	int group = c->b < 0;
	fs_devptr a = fs_gpu_buffer(R, c->a, copy, w), b = group ? R->wcat[L->slot * R->rotate + copy] : fs_gpu_buffer(R, c->b, copy, w);
	fs_devptr bias = group ? (c->mm.bias ? R->bcat[L->slot * R->rotate + copy] : 0) : c->bias >= 0 ? fs_gpu_buffer(R, c->bias, copy, w) : 0;
	fs_devptr cm = c->c >= 0 ? fs_gpu_buffer(R, c->c, copy, w) : 0, d = group ? R->catout[L->slot] : fs_gpu_buffer(R, c->out, copy, w);
	return fs_lt_run(&R->lt, &L->lt, L->lt.chosen, a, b, bias, cm, d, R->stream, R->g->error, sizeof(R->g->error));
}

/* The generated GEMM under its tactic on input copy `copy`, writing the fused outputs. */
int fs_gpu_gemm_launch_gen(struct run *R, uint32_t copy)
{
	struct kargs A;
	uint32_t n = fs_gpu_kernel_args(R, &R->epi, copy, FUSED_BUFS, &A), t = R->gen_tactic;
	fs_devptr a = fs_gpu_buffer(R, R->ks.gp.calls[R->ks.gen.call].a, copy, FUSED_BUFS);
	return fs_gemm_gen_launch(&R->c, R->gen_fn[t], &R->ks.gen, &fs_gemm_gen_tactics[t], a, R->gw[t * R->rotate + copy], A.p, n, R->stream,
				  R->g->error, sizeof(R->g->error));
}

/* The products that are region outputs, in `w`, against their float64
 * reference (fs_ref_cmp), added to the statistics. */
int fs_gpu_gemm_compare_products(struct run *R, enum where w)
{
	for (uint32_t k = 0; k < R->ks.gp.n; k++) {
		const struct fs_gemm_call *c = &R->ks.gp.ref[k];
		if (!R->p->is_output[c->op])
			continue;
		fs_devptr ref = R->refbuf[c->out], x = fs_gpu_buffer(R, c->out, 0, w);
		long long rows = c->mm.M * c->mm.batch, cols = c->mm.N, ld = cols;
		if (w == FUSED_BUFS)
			fs_gpu_gemm_in_group(R, c->out, &x, &ld);
		void *args[] = {&ref, &x, &rows, &cols, &ld, &R->stats};
		long long blocks = (rows * cols + 255) / 256;
		blocks = blocks > 4096 ? 4096 : blocks;
		CK(R->c.cuLaunchKernel((w == CPU_REF_BUFS ? &R->cmp64[k] : &R->cmp[k])->fn, (unsigned)blocks, 1, 1, 256, 1, 1, 0, R->stream,
				       args, NULL));
	}
	return 0;
}

/* The fused plan's products before its kernel (post 0) or after it:
 * variant 0's (concatenated groups), or variant 1, the product with
 * cuBLASLt's epilogue (variant 2, the generated GEMM: run_plan). */
int fs_gpu_gemm_run_products(struct run *R, int variant, uint32_t copy, int post)
{
	if (variant)
		return post ? 0 : fs_gpu_launch(R, &R->absorbed, copy, FUSED_BUFS);
	for (uint32_t k = 0; k < R->ks.gp.n_calls; k++)
		if (R->ks.gp.calls[k].post == post && fs_gpu_launch(R, &R->gl[k], copy, FUSED_BUFS))
			return -1;
	return 0;
}

/* The errors of the results in `w` against the float64 reference kernel
 * (and, with products, their reference). */
int fs_gpu_measure(struct run *R, enum where w, struct fs_errors *e)
{
	uint64_t st[6]; /* struct fs_stats */
	double se, sr;
	CK(R->c.cuMemsetD8(R->stats, 0, sizeof(st)));
	if (R->ks.gemm && fs_gpu_gemm_compare_products(R, w))
		return -1;
	if ((!R->ks.gemm || R->ref.fn) && fs_gpu_launch(R, w == CPU_REF_BUFS ? &R->ref64 : &R->ref, 0, w))
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

int fs_gpu_run_fused(struct run *R, const void *L, uint32_t r)
{
	return fs_gpu_launch(R, L, r % R->rotate, FUSED_BUFS);
}

/* cubin loaded as *module, and its function `name` (if any) as *fn: 0, or
 * -1 with the error in g->error */
int fs_gpu_load_cubin(struct run *R, const char *cubin, void **module, const char *name, void **fn)
{
	struct fs_gpu_result *g = R->g;
	return fs_cuda_check(&R->c, R->c.cuModuleLoadData(module, cubin), "cuModuleLoadData", g->error, sizeof(g->error)) ||
			       (name && fs_cuda_check(&R->c, R->c.cuModuleGetFunction(fn, *module, name), "cuModuleGetFunction",
						      g->error, sizeof(g->error)))
		       ? -1
		       : 0;
}

/* Compiles a translation unit (counted in g->compiled when `count`) and,
 * with `load`, loads it as *module and its function `name` as *fn. 0, or
 * -1 with the error in g->error. */
int fs_gpu_build_for(struct run *R, const char *arch, const char *source, int fmad, int count, int load, void **module, const char *name,
		     void **fn)
{
	struct fs_gpu_result *g = R->g;
	char *cubin = NULL;
	size_t len;
	if (fs_cuda_compile(&R->c, source, arch, fmad, &cubin, &len, g->error, sizeof(g->error)))
		return -1;
	g->compiled += count != 0;
	int rc = load && fs_gpu_load_cubin(R, cubin, module, name, fn);
	free(cubin);
	return rc ? -1 : 0;
}

/* compiled for the device's architecture */
int fs_gpu_build(struct run *R, const char *source, int fmad, int count, int load, void **module, const char *name, void **fn)
{
	return fs_gpu_build_for(R, R->g->arch, source, fmad, count, load, module, name, fn);
}

/* The fused plan on input copy `copy`: products, the fused kernel L (NULL:
 * none), the products after it. */
int fs_gpu_run_plan(struct run *R, int variant, const struct launch *L, uint32_t copy)
{
	if (!R->ks.gemm)
		return fs_gpu_launch(R, L, copy, FUSED_BUFS);
	if (variant == 2) /* the generated GEMM, then the products reading what it writes */
		return fs_gpu_gemm_launch_gen(R, copy) || fs_gpu_gemm_run_products(R, 0, copy, 1) ? -1 : 0;
	return fs_gpu_gemm_run_products(R, variant, copy, 0) || (L && fs_gpu_launch(R, L, copy, FUSED_BUFS)) || fs_gpu_gemm_run_products(R, variant, copy, 1) ? -1 : 0;
}

/* The fused plan once, on copy 0 of the inputs, into poisoned outputs,
 * checked against the reference: its products (variant), then the fused
 * kernel L (NULL: none). */
int fs_gpu_run_once(struct run *R, int variant, const struct launch *L, struct fs_errors *e)
{
	const struct prog *p = R->p;
	for (uint32_t v = p->n_in; v < p->n_in + p->n_ops; v++)
		if (R->fused_out[v])
			CK(R->c.cuMemsetD8(R->fused_out[v], 0xff, fs_value_bytes(fs_prog_value(p, (int32_t)v))));
	for (uint32_t k = 0; R->ks.gemm && k < R->ks.gp.n_calls; k++)
		if (R->catout[k])
			CK(R->c.cuMemsetD8(R->catout[k], 0xff, (size_t)(R->ks.gp.calls[k].mm.M * R->ks.gp.calls[k].mm.N) *
								  fs_dtype_size((enum fs_dtype)R->ks.gp.calls[k].mm.dtype)));
	if (fs_gpu_run_plan(R, variant, L, 0))
		return -1;
	CK(R->c.cuCtxSynchronize());
	return fs_gpu_measure(R, FUSED_BUFS, e);
}

void fs_gpu_plan_failed(struct run *R, const char *plan, const char *why)
{
	if (!R->g->plan_failed[0])
		snprintf(R->g->plan_failed, sizeof(R->g->plan_failed), "%.60s: %.190s", plan, why);
}
