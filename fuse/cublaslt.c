/*
 * cublaslt.c: cuBLASLt loaded at run time (see cublaslt.h). A row-major
 * D[M, N] = A[M, K] B is cuBLASLt's column-major D^T = B^T A^T: the weight
 * is cuBLASLt's first operand, the activations its second.
 */
#include "cublaslt.h"

#include "fusescan/base.h"
#include "fusescan/graph.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* cuBLASLt's numbers (cublasLt.h, library_types.h) */
enum {
	COMPUTE_32F = 68,
	R_32F = 0,
	R_16F = 2,
	R_16BF = 14,
	OP_N = 0,
	OP_T = 1,
	DESC_TRANSA = 3,
	DESC_TRANSB = 4,
	DESC_EPILOGUE = 7,
	DESC_BIAS_POINTER = 8,
	LAYOUT_BATCH_COUNT = 5,
	LAYOUT_STRIDED_BATCH_OFFSET = 6,
	PREF_MAX_WORKSPACE_BYTES = 1,
};

/* cublasLtMatmulHeuristicResult_t */
struct heuristic {
	uint64_t algo[8];
	size_t workspace;
	int state;
	float waves;
	int reserved[4];
};

#define SYM(field, name) (lt->field = (__typeof__(lt->field))dlsym(lt->lib, name), lt->field == NULL ? 1 : 0)

static int check(const struct fs_lt *lt, int status, const char *call, char *err, size_t n)
{
	if (status == 0)
		return 0;
	const char *name = lt->cublasLtGetStatusName ? lt->cublasLtGetStatusName(status) : NULL;
	snprintf(err, n, "%s: %s (%d)", call, name ? name : "cuBLASLt error", status);
	return -1;
}

int fs_lt_open(struct fs_lt *lt, struct fs_cuda *c, char *err, size_t n)
{
	static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
					    "/usr/local/cuda/lib64/libcublasLt.so", NULL};
	memset(lt, 0, sizeof(*lt));
	lt->c = c;
	lt->lib = fs_cuda_dlopen_first(names);
	if (!lt->lib) {
		snprintf(err, n, "cuBLASLt not found (libcublasLt.so.13 or .12): matrix products not run on the GPU");
		return -1;
	}
	lt->cublasLtGetStatusName = (__typeof__(lt->cublasLtGetStatusName))dlsym(lt->lib, "cublasLtGetStatusName"); /* optional */
	int missing = SYM(cublasLtCreate, "cublasLtCreate") + SYM(cublasLtDestroy, "cublasLtDestroy") +
		      SYM(cublasLtGetVersion, "cublasLtGetVersion") + SYM(cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate") +
		      SYM(cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy") +
		      SYM(cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute") +
		      SYM(cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate") +
		      SYM(cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy") +
		      SYM(cublasLtMatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute") +
		      SYM(cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate") +
		      SYM(cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy") +
		      SYM(cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute") +
		      SYM(cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic") + SYM(cublasLtMatmul, "cublasLtMatmul");
	if (missing) {
		snprintf(err, n, "cuBLASLt lacks a function fusescan needs (too old?)");
		return -1;
	}
	lt->version = lt->cublasLtGetVersion();
	lt->workspace_bytes = (size_t)32 << 20; /* PyTorch's own for Hopper */
	if (check(lt, lt->cublasLtCreate(&lt->handle), "cublasLtCreate", err, n) ||
	    fs_cuda_check(c, c->cuMemAlloc(&lt->workspace, lt->workspace_bytes), "cuMemAlloc (cuBLASLt workspace)", err, n)) {
		fs_lt_close(lt);
		return -1;
	}
	return 0;
}

void fs_lt_close(struct fs_lt *lt)
{
	if (lt->workspace)
		lt->c->cuMemFree(lt->workspace);
	if (lt->handle)
		lt->cublasLtDestroy(lt->handle);
	lt->workspace = 0, lt->handle = NULL; /* the library stays loaded, as NVRTC does */
}

static int cuda_type(uint8_t dt)
{
	return dt == FS_DT_BF16 ? R_16BF : dt == FS_DT_F16 ? R_16F : dt == FS_DT_F32 ? R_32F : -1;
}

/* A column-major layout of rows x cols, ld apart, with the batch. */
static int layout(struct fs_lt *lt, void **l, int type, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride,
		  char *err, size_t n)
{
	int32_t count = (int32_t)batch;
	return check(lt, lt->cublasLtMatrixLayoutCreate(l, type, (uint64_t)rows, (uint64_t)cols, ld), "cublasLtMatrixLayoutCreate", err,
		     n) ||
	       (batch > 1 && (check(lt, lt->cublasLtMatrixLayoutSetAttribute(*l, LAYOUT_BATCH_COUNT, &count, sizeof(count)),
				    "cublasLtMatrixLayoutSetAttribute", err, n) ||
			      check(lt, lt->cublasLtMatrixLayoutSetAttribute(*l, LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
				    "cublasLtMatrixLayoutSetAttribute", err, n)))
		       ? -1
		       : 0;
}

static uint32_t epilogue_of(const struct fs_lt_mm *m)
{
	uint32_t e = (m->relu ? FS_LT_RELU : m->gelu ? FS_LT_GELU : 0) | (m->bias ? FS_LT_BIAS : 0);
	return e ? e : FS_LT_DEFAULT;
}

static int descriptors(struct fs_lt *lt, const struct fs_lt_mm *m, struct fs_lt_plan *pl, char *err, size_t n)
{
	int type = cuda_type(m->dtype);
	int32_t ta = m->b_nk ? OP_T : OP_N, tb = OP_N;
	uint32_t epi = epilogue_of(m);
	if (type < 0) {
		snprintf(err, n, "cuBLASLt: a matrix product in %s (bf16, f16 and f32 only)", fs_dtype_name((enum fs_dtype)m->dtype));
		return -1;
	}
	if (m->M < 1 || m->N < 1 || m->K < 1 || m->batch < 1 || m->batch > 0x7fffffff || m->ldd < m->N) {
		snprintf(err, n, "cuBLASLt: a matrix product of no elements or an impossible layout");
		return -1;
	}
	return check(lt, lt->cublasLtMatmulDescCreate(&pl->desc, COMPUTE_32F, R_32F), "cublasLtMatmulDescCreate", err, n) ||
			       check(lt, lt->cublasLtMatmulDescSetAttribute(pl->desc, DESC_TRANSA, &ta, sizeof(ta)), "cublasLtMatmulDescSetAttribute",
				     err, n) ||
			       check(lt, lt->cublasLtMatmulDescSetAttribute(pl->desc, DESC_TRANSB, &tb, sizeof(tb)), "cublasLtMatmulDescSetAttribute",
				     err, n) ||
			       check(lt, lt->cublasLtMatmulDescSetAttribute(pl->desc, DESC_EPILOGUE, &epi, sizeof(epi)),
				     "cublasLtMatmulDescSetAttribute", err, n) ||
			       (m->b_nk ? layout(lt, &pl->la, type, m->K, m->N, m->K, m->batch, m->stride_b, err, n)
					: layout(lt, &pl->la, type, m->N, m->K, m->N, m->batch, m->stride_b, err, n)) ||
			       layout(lt, &pl->lb, type, m->K, m->M, m->K, m->batch, m->stride_a, err, n) ||
			       layout(lt, &pl->lc, type, m->N, m->M, m->ldd, m->batch, m->stride_d, err, n) ||
			       layout(lt, &pl->ld, type, m->N, m->M, m->ldd, m->batch, m->stride_d, err, n)
		       ? -1
		       : 0;
}

int fs_lt_plan(struct fs_lt *lt, const struct fs_lt_mm *m, struct fs_lt_plan *pl, char *err, size_t n)
{
	memset(pl, 0, sizeof(*pl));
	pl->mm = *m;
	void *pref = NULL;
	uint64_t ws = lt->workspace_bytes;
	struct heuristic h[FS_LT_ALGOS];
	int got = 0;
	int rc = descriptors(lt, m, pl, err, n) ||
		 check(lt, lt->cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", err, n) ||
		 check(lt, lt->cublasLtMatmulPreferenceSetAttribute(pref, PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
		       "cublasLtMatmulPreferenceSetAttribute", err, n) ||
		 check(lt, lt->cublasLtMatmulAlgoGetHeuristic(lt->handle, pl->desc, pl->la, pl->lb, pl->lc, pl->ld, pref, FS_LT_ALGOS, h, &got),
		       "cublasLtMatmulAlgoGetHeuristic", err, n);
	if (pref)
		lt->cublasLtMatmulPreferenceDestroy(pref);
	for (int i = 0; !rc && i < got; i++)
		if (h[i].state == 0 && h[i].workspace <= lt->workspace_bytes)
			memcpy(pl->algo[pl->n_algos++], h[i].algo, sizeof(h[i].algo));
	if (!rc && !pl->n_algos) {
		snprintf(err, n, "cublasLtMatmulAlgoGetHeuristic: no algorithm for this product");
		rc = -1;
	}
	if (rc)
		fs_lt_plan_release(lt, pl);
	return rc ? -1 : 0;
}

void fs_lt_plan_release(struct fs_lt *lt, struct fs_lt_plan *pl)
{
	void *layouts[] = {pl->la, pl->lb, pl->lc, pl->ld};
	for (int i = 0; i < 4; i++)
		if (layouts[i])
			lt->cublasLtMatrixLayoutDestroy(layouts[i]);
	if (pl->desc)
		lt->cublasLtMatmulDescDestroy(pl->desc);
	memset(pl, 0, sizeof(*pl));
}

int fs_lt_run(struct fs_lt *lt, const struct fs_lt_plan *pl, uint32_t algo, fs_devptr a, fs_devptr b, fs_devptr bias,
	      fs_devptr cmat, fs_devptr d, void *stream, char *err, size_t n)
{
	const float one = 1.0f, zero = 0.0f;
	void *bp = (void *)(uintptr_t)bias;
	if (pl->mm.bias && check(lt, lt->cublasLtMatmulDescSetAttribute(pl->desc, DESC_BIAS_POINTER, &bp, sizeof(bp)),
				 "cublasLtMatmulDescSetAttribute", err, n))
		return -1;
	const void *cp = (const void *)(uintptr_t)(pl->mm.add_c ? cmat : d);
	return check(lt,
		     lt->cublasLtMatmul(lt->handle, pl->desc, &one, (const void *)(uintptr_t)b, pl->la, (const void *)(uintptr_t)a, pl->lb,
					pl->mm.add_c ? &one : &zero, cp, pl->lc, (void *)(uintptr_t)d, pl->ld, pl->algo[algo],
					(void *)(uintptr_t)lt->workspace, lt->workspace_bytes, stream),
		     "cublasLtMatmul", err, n);
}

void fs_lt_name(const struct fs_lt_plan *pl, uint32_t algo, char *out, size_t n)
{
	const struct fs_lt_mm *m = &pl->mm;
	snprintf(out, n, "cuBLASLt heuristic #%u%s%s%s%s", algo + 1, m->bias ? " +bias" : "", m->relu ? " +relu" : "",
		 m->gelu ? " +gelu(tanh)" : "", m->add_c ? " +C" : "");
}
