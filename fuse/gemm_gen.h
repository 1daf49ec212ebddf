/*
 * gemm_gen.h (private to fuse/): the generated GEMM of a region: its one
 * product (or a concatenated group of two, SwiGLU's gate / up) computed on
 * Hopper's tensor cores (kernels/gemm_sm90.cuh: TMA loads, wgmma, a
 * persistent warp-specialised kernel, clusters sharing the weight's tile)
 * or, on any GPU from sm_80 on, with mma.sync (kernels/gemm_mma.cuh),
 * the region's epilogue generated from the op table (codegen.h,
 * FS_GEN_EPILOGUE) applied to the accumulators, so the product's output
 * never reaches memory. gpu.c times it as the fused plan's third variant,
 * beside cuBLASLt + the fused kernel and cuBLASLt's own epilogue.
 *
 *   struct fs_gemm_gen g;
 *   if (fs_gemm_gen_plan(q, &plan, &g, &d) == 0 && fs_gemm_gen_epilogue(q, &g, &epilogue_kernel, ...) == 0)
 *   char *src = fs_gemm_gen_source(&epilogue_kernel, &fs_gemm_gen_tactics[t], g.nm);
 *   fs_gemm_gen_launch(&cuda, fn, &g, &fs_gemm_gen_tactics[t], a, w, args, n_args, stream, err, sizeof(err));
 */
#ifndef FUSESCAN_GEMM_GEN_H
#define FUSESCAN_GEMM_GEN_H

#include "codegen.h"
#include "gemm.h"

/* A tile shape and schedule. sm_90a (kernels/gemm_sm90.cuh): FS_MB 64-row
 * blocks by FS_CONS consumer warpgroups of FS_WN columns, FS_STAGES
 * buffers, FS_CLUSTER blocks sharing the weight's tile, FS_GROUP_M tile rows
 * per group of the walk. Portable (mma.sync, kernels/gemm_mma.cuh, sm_80
 * on): FS_MB x FS_CONS warps of 64 rows x FS_WN columns, FS_STAGES buffers. */
struct fs_gemm_gen_tactic {
	uint8_t mb, cons, stages, cluster, group_m;
	uint16_t wn;
	uint8_t portable;
};
enum { FS_GEMM_GEN_TACTICS = 6 };
extern const struct fs_gemm_gen_tactic fs_gemm_gen_tactics[FS_GEMM_GEN_TACTICS];

struct fs_gemm_gen {
	uint32_t call;       /* the fused plan's product it computes (gemm.h) */
	uint32_t nm;         /* its products: 1, or a group's 2 (interleaved in the weight, see fs_gemm_gen_row) */
	int32_t product[2];  /* their values */
	int32_t weight[2];   /* their weights' values */
	int64_t M, K, Nm;    /* rows, depth, each product's columns */
	int8_t *member;      /* per value: which product it is, -1 none (struct prog's member) */
};

/* Whether the fused plan (pl, of q: the region reading its products as
 * given) can run as one generated GEMM: its one product before the kernel
 * is a linear's bf16 form without bias, one product or a group of two of
 * the same width, and the kernel writes only values of the products' shape.
 * 0 with g filled, or -1 with why in d. */
int fs_gemm_gen_plan(const struct prog *q, const struct fs_gemm_plan *pl, struct fs_gemm_gen *g, struct fs_diags *d);
void fs_gemm_gen_release(struct fs_gemm_gen *g);
/* The epilogue of q's generated GEMM g (q->member set to g's): a kernel
 * generated with FS_GEN_EPILOGUE, each thread two columns of a row.
 * 0, or -1 with why in d. */
int fs_gemm_gen_epilogue(struct prog *q, const struct fs_gemm_gen *g, struct fs_kernel *k, struct fs_diags *d);
/* The kernel fs_gemm under tactic t: the epilogue (a kernel generated with
 * FS_GEN_EPILOGUE), then kernels/gemm_sm90.cuh. Owned by the caller. */
char *fs_gemm_gen_source(const struct fs_kernel *epi, const struct fs_gemm_gen_tactic *t, uint32_t nm);
/* The weight the kernel reads under t: its rows, and where column x of
 * product m lies (the products interleaved in blocks of FS_WN / nm rows,
 * each block padded, so that each consumer's columns hold all of them). */
int64_t fs_gemm_gen_rows(const struct fs_gemm_gen *g, const struct fs_gemm_gen_tactic *t);
int64_t fs_gemm_gen_row(const struct fs_gemm_gen *g, const struct fs_gemm_gen_tactic *t, uint32_t m, int64_t x);
/* The rows of each member in one block of the interleaved weight (G in
 * fs_gemm_gen_row). */
int64_t fs_gemm_gen_member_rows(const struct fs_gemm_gen *g, const struct fs_gemm_gen_tactic *t);
/* Its launch: a block's tile (bm rows of A by bn rows of the weight), its
 * threads, and the blocks of a cluster (1: no cluster). */
struct fs_gemm_gen_shape {
	int bm, bn, threads, cluster;
};
struct fs_gemm_gen_shape fs_gemm_gen_shape(const struct fs_gemm_gen_tactic *t);
/* Its shared memory, bytes (the launcher sets the function's limit to it). */
int fs_gemm_gen_smem(const struct fs_gemm_gen_tactic *t);
/* Whether a device of compute capability major.minor runs tactic t. */
int fs_gemm_gen_runs_on(const struct fs_gemm_gen_tactic *t, int major, int minor);
/* Enqueues fs_gemm (fn, compiled from t's source) on A (M x K) and the
 * weight w (fs_gemm_gen_rows x K), then the epilogue's own arguments. */
int fs_gemm_gen_launch(struct fs_cuda *c, void *fn, const struct fs_gemm_gen *g, const struct fs_gemm_gen_tactic *t, fs_devptr a,
		       fs_devptr w, void *const *epi_args, uint32_t n_epi, void *stream, char *err, size_t n);
/* "(sm_90a) 128x256, cluster 2, 4 stages", "(mma.sync) 128x128, 3 stages" */
void fs_gemm_gen_name(const struct fs_gemm_gen_tactic *t, char *out, size_t n);

#endif
