/*
 * cublaslt.h (private to fuse/): cuBLASLt loaded at run time (dlopen, like
 * NVRTC in cuda.h), for the matrix products of a region: eager's own GEMMs
 * (the unfused baseline) and the fused plan's (concatenated weights, a
 * cuBLASLt epilogue). Row-major products are described as PyTorch has them;
 * this module turns them into cuBLASLt's column-major layouts.
 *
 *   struct fs_lt lt;
 *   if (fs_lt_open(&lt, &cuda, err, sizeof(err)))  ... err says why (no libcublasLt)
 *   struct fs_lt_mm m = {.dtype = FS_DT_BF16, .M = 16, .N = 6144, .K = 4096, .batch = 1, .b_nk = 1, .ldd = 6144};
 *   struct fs_lt_plan pl;
 *   fs_lt_plan(&lt, &m, &pl, err, sizeof(err));     // pl.n_algos heuristic algorithms
 *   fs_lt_run(&lt, &pl, 0, a, w, 0, 0, d, stream, err, sizeof(err));
 */
#ifndef FUSESCAN_CUBLASLT_H
#define FUSESCAN_CUBLASLT_H

#include "cuda.h"

enum { FS_LT_ALGOS = 8 };

/* epilogues, as cuBLASLt numbers them */
enum fs_lt_epilogue { FS_LT_DEFAULT = 1, FS_LT_RELU = 2, FS_LT_BIAS = 4, FS_LT_GELU = 32 };

/* D[b, m, n] = sum_k A[b, m, k] B(b, k, n) (+ bias[n]) (+ C[b, m, n]), then
 * the epilogue's activation; rows of D `ldd` elements apart. Every matrix
 * is row-major and dense; a batch stride of 0 broadcasts. */
struct fs_lt_mm {
	uint8_t dtype;                 /* A, B, C, D and the bias: bf16, f16 or f32 */
	int64_t M, N, K, batch;
	int64_t stride_a, stride_b, stride_d;
	uint8_t b_nk;                  /* B is stored [N, K] (a linear's weight), else [K, N] */
	uint8_t relu, gelu, bias, add_c; /* the epilogue: activation, bias [N], C (beta = 1, laid out as D) */
	int64_t ldd;
};

struct fs_lt {
	void *lib, *handle;
	struct fs_cuda *c;
	fs_devptr workspace;
	size_t workspace_bytes;
	size_t version;
	int (*cublasLtCreate)(void **);
	int (*cublasLtDestroy)(void *);
	size_t (*cublasLtGetVersion)(void);
	int (*cublasLtMatmulDescCreate)(void **, int, int);
	int (*cublasLtMatmulDescDestroy)(void *);
	int (*cublasLtMatmulDescSetAttribute)(void *, int, const void *, size_t);
	int (*cublasLtMatrixLayoutCreate)(void **, int, uint64_t, uint64_t, int64_t);
	int (*cublasLtMatrixLayoutDestroy)(void *);
	int (*cublasLtMatrixLayoutSetAttribute)(void *, int, const void *, size_t);
	int (*cublasLtMatmulPreferenceCreate)(void **);
	int (*cublasLtMatmulPreferenceDestroy)(void *);
	int (*cublasLtMatmulPreferenceSetAttribute)(void *, int, const void *, size_t);
	int (*cublasLtMatmulAlgoGetHeuristic)(void *, void *, void *, void *, void *, void *, void *, int, void *, int *);
	int (*cublasLtMatmul)(void *, void *, const void *, const void *, void *, const void *, void *, const void *,
			      const void *, void *, void *, void *, const void *, void *, size_t, void *);
	const char *(*cublasLtGetStatusName)(int);
};

/* One product, ready to run: its descriptors and the heuristic's algorithms
 * (each a tactic, timed by the caller); `chosen` the one to run. */
struct fs_lt_plan {
	struct fs_lt_mm mm;
	void *desc, *la, *lb, *lc, *ld;
	uint32_t n_algos, chosen;
	uint64_t algo[FS_LT_ALGOS][8];   /* cublasLtMatmulAlgo_t */
};

/* Loads cuBLASLt and allocates its workspace (c's context current).
 * 0, or -1 with why (the library missing, or a CUDA error) in err. */
int fs_lt_open(struct fs_lt *lt, struct fs_cuda *c, char *err, size_t n);
void fs_lt_close(struct fs_lt *lt);
/* The descriptors of m and up to FS_LT_ALGOS algorithms. 0, or -1 (err). */
int fs_lt_plan(struct fs_lt *lt, const struct fs_lt_mm *m, struct fs_lt_plan *pl, char *err, size_t n);
void fs_lt_plan_release(struct fs_lt *lt, struct fs_lt_plan *pl);
/* Enqueues the product under algorithm `algo` of the plan on `stream`. */
int fs_lt_run(struct fs_lt *lt, const struct fs_lt_plan *pl, uint32_t algo, fs_devptr a, fs_devptr b, fs_devptr bias,
	      fs_devptr cmat, fs_devptr d, void *stream, char *err, size_t n);
/* "cuBLASLt algo 2 (GELU_BIAS)" */
void fs_lt_name(const struct fs_lt_plan *pl, uint32_t algo, char *out, size_t n);

#endif
