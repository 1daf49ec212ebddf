/*
 * gemm_gen.c: the generated GEMM (gemm_gen.h): which regions it takes, its
 * source under a tactic, its weight's layout and its launch (TMA tensor
 * maps, a cluster launch through cuLaunchKernelEx).
 */
#include "gemm_gen.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sm_90a: 128 x 256 and 192 x 192 tiles in clusters of two (prefill), the
 * first alone, and 64-row tiles for a few rows (decode: the weight's
 * stream); portable: 128 x 128 tiles of four warps */
const struct fs_gemm_gen_tactic fs_gemm_gen_tactics[FS_GEMM_GEN_TACTICS] = {
	{2, 2, 4, 2, 8, 128, 0}, {3, 2, 4, 2, 8, 96, 0}, {2, 2, 4, 1, 8, 128, 0}, {1, 1, 5, 1, 8, 256, 0}, {1, 1, 8, 1, 8, 128, 0},
	{2, 2, 3, 1, 1, 64, 1},
};

/* Why q's region runs no generated GEMM, in d: -1. */
static int say(const struct prog *q, struct fs_diags *d, const char *s)
{
	fs_diag_add(d, FS_ERROR, fs_prog_path(q->s, q->g), 0, 0, NULL, 0, "%s", s);
	return -1;
}

int fs_gemm_gen_plan(const struct prog *q, const struct fs_gemm_plan *pl, struct fs_gemm_gen *g, struct fs_diags *d)
{
	memset(g, 0, sizeof(*g));
	uint32_t pre = 0;
	for (uint32_t k = 0; k < pl->n_calls; k++)
		if (!pl->calls[k].post)
			pre++, g->call = k;
	if (pre != 1)
		return say(q, d, "not one product (or concatenated group) before the epilogue");
	const struct fs_gemm_call *c = &pl->calls[g->call];
	const struct fs_lt_mm *m = &c->mm;
	if (m->dtype != FS_DT_BF16 || m->batch != 1 || !m->b_nk || m->bias || m->add_c || m->relu || m->gelu || m->K % 8)
		return say(q, d, "a product other than a bf16 linear without bias (K a multiple of 8)");
	g->nm = c->n_members ? c->n_members : 1;
	if (g->nm > 2 || (g->nm == 2 && c->col[1] * 2 != m->N))
		return say(q, d, "a group of more than two products, or of different widths");
	g->M = m->M, g->K = m->K, g->Nm = m->N / g->nm;
	if (g->Nm % 2 || g->M > 0x7fffffff || m->N > 0x7fffffff)
		return say(q, d, "an odd number of columns");
	for (uint32_t j = 0; j < g->nm; j++) {
		g->product[j] = c->n_members ? c->member[j] : c->out;
		g->weight[j] = c->n_members ? c->member_b[j] : c->b;
	}
	uint32_t nv = q->n_in + q->n_ops;
	for (uint32_t i = 0; i < q->n_ops; i++) {
		const struct ten *t = &q->ops[i].out;
		int32_t v = (int32_t)(q->n_in + i);
		if (q->is_output[i] && !(q->given && q->given[v]) && (!t->rank || t->shape[t->rank - 1] != g->Nm || t->n != g->M * g->Nm))
			return say(q, d, "an epilogue writing a value of another shape than the products'");
	}
	for (uint32_t j = 0; j < g->nm; j++)
		if (q->is_output[g->product[j] - (int32_t)q->n_in])
			return say(q, d, "a product that is itself an output of the region");
	g->member = fs_xmalloc(nv + 1);
	memset(g->member, -1, nv + 1);
	for (uint32_t j = 0; j < g->nm; j++)
		g->member[g->product[j]] = (int8_t)j;
	return 0;
}

int fs_gemm_gen_epilogue(struct prog *q, const struct fs_gemm_gen *g, struct fs_kernel *k, struct fs_diags *d)
{
	static const struct fs_tactic pair = {2, 128, 1, 0, 0, 0}; /* each thread's two accumulators of a row */
	q->member = g->member;
	return fs_codegen(q, -1, FS_GEN_EPILOGUE, &pair, k, d);
}

void fs_gemm_gen_release(struct fs_gemm_gen *g)
{
	free(g->member);
	g->member = NULL;
}

char *fs_gemm_gen_source(const struct fs_kernel *epi, const struct fs_gemm_gen_tactic *t, uint32_t nm)
{
	struct fs_text b = {0};
	fs_text_put(&b, "%s\n#define FS_MB %u\n#define FS_WN %u\n#define FS_CONS %u\n#define FS_STAGES %u\n#define FS_CLUSTER %u\n"
			"#define FS_GROUP_M %u\n#define FS_NM %u\n",
		    epi->source, t->mb, t->wn, t->cons, t->stages, t->cluster, t->group_m, nm);
	fs_text_put(&b, "%s", fs_kernel_file(t->portable ? "gemm_mma.cuh" : "gemm_sm90.cuh"));
	return b.s;
}

int64_t fs_gemm_gen_member_rows(const struct fs_gemm_gen *g, const struct fs_gemm_gen_tactic *t)
{
	return t->wn / g->nm;
}

struct fs_gemm_gen_shape fs_gemm_gen_shape(const struct fs_gemm_gen_tactic *t)
{
	return (struct fs_gemm_gen_shape){64 * t->mb, t->wn * t->cons, t->portable ? 32 * t->mb * t->cons : 128 * (t->cons + 1),
					  t->portable ? 1 : t->cluster};
}

int64_t fs_gemm_gen_rows(const struct fs_gemm_gen *g, const struct fs_gemm_gen_tactic *t)
{
	if (g->nm == 1)
		return g->Nm; /* the weight itself: the tensor map fills the last tile's missing rows with zeros */
	int64_t G = fs_gemm_gen_member_rows(g, t);
	return (g->Nm + G - 1) / G * G * g->nm;
}

int64_t fs_gemm_gen_row(const struct fs_gemm_gen *g, const struct fs_gemm_gen_tactic *t, uint32_t m, int64_t x)
{
	int64_t G = fs_gemm_gen_member_rows(g, t);
	return x / G * G * g->nm + m * G + x % G;
}

int fs_gemm_gen_smem(const struct fs_gemm_gen_tactic *t)
{
	struct fs_gemm_gen_shape sh = fs_gemm_gen_shape(t);
	int bm = sh.bm, bn = sh.bn;
	if (t->portable) /* rows of 32 elements padded to 40 */
		return t->stages * (bm + bn) * 40 * 2;
	return t->stages * ((bm + bn) * 64 * 2 + 16) + 1024;
}

int fs_gemm_gen_runs_on(const struct fs_gemm_gen_tactic *t, int major, int minor)
{
	return t->portable ? major >= 8 : major == 9 && minor == 0;
}

/* a K-major bf16 matrix of `rows` x K in 128-byte-swizzled boxes of 64 x box_rows */
static int tensor_map(struct fs_cuda *c, void *map, fs_devptr p, int64_t rows, int64_t K, unsigned box_rows, char *err, size_t n)
{
	enum { BF16 = 9, INTERLEAVE_NONE = 0, SWIZZLE_128B = 3, L2_256B = 3, OOB_ZERO = 0 };
	uint64_t dims[2] = {(uint64_t)K, (uint64_t)rows}, strides[1] = {(uint64_t)K * 2};
	unsigned box[2] = {64, box_rows}, es[2] = {1, 1};
	return fs_cuda_check(c, c->cuTensorMapEncodeTiled(map, BF16, 2, (void *)(uintptr_t)p, dims, strides, box, es, INTERLEAVE_NONE,
							  SWIZZLE_128B, L2_256B, OOB_ZERO),
			     "cuTensorMapEncodeTiled", err, n);
}

int fs_gemm_gen_launch(struct fs_cuda *c, void *fn, const struct fs_gemm_gen *g, const struct fs_gemm_gen_tactic *t, fs_devptr a,
		       fs_devptr w, void *const *epi_args, uint32_t n_epi, void *stream, char *err, size_t n)
{
	enum { ATTR_MAX_DYNAMIC_SMEM = 8, LAUNCH_CLUSTER_DIM = 4 };
	struct {
		_Alignas(64) unsigned char b[128];
	} ta, tb;
	struct fs_gemm_gen_shape sh = fs_gemm_gen_shape(t);
	int bm = sh.bm, bn = sh.bn, smem = fs_gemm_gen_smem(t);
	int64_t rows = fs_gemm_gen_rows(g, t);
	int M = (int)g->M, N = (int)rows, K = (int)g->K, Nm = (int)g->Nm;
	void *args[6 + 2 * FS_KERNEL_MAX_PARAMS] = {&ta, &tb, &M, &N, &K, &Nm};
	for (uint32_t i = 0; i < n_epi && i < 2 * FS_KERNEL_MAX_PARAMS; i++)
		args[6 + i] = epi_args[i];
	if (fs_cuda_check(c, c->cuFuncSetAttribute(fn, ATTR_MAX_DYNAMIC_SMEM, smem), "cuFuncSetAttribute", err, n))
		return -1;
	if (t->portable) { /* the operands' addresses; a block per tile */
		args[0] = &a, args[1] = &w;
		int64_t tiles = (g->M + bm - 1) / bm * ((rows + bn - 1) / bn);
		return fs_cuda_check(c, c->cuLaunchKernel(fn, (unsigned)tiles, 1, 1, (unsigned)sh.threads, 1, 1, (unsigned)smem, stream, args, NULL),
				     "cuLaunchKernel", err, n);
	}
	if (tensor_map(c, &ta, a, g->M, g->K, (unsigned)bm, err, n) || tensor_map(c, &tb, w, rows, g->K, (unsigned)(bn / t->cluster), err, n))
		return -1;
	/* one cluster per pair of SMs: a persistent grid */
	int64_t tiles = (g->M + bm * t->cluster - 1) / (bm * t->cluster) * ((rows + bn - 1) / bn) * t->cluster;
	int64_t most = c->sms / t->cluster * t->cluster, grid = tiles < most ? tiles : most;
	struct {
		int id;
		int pad;
		unsigned v[16];
	} attr = {LAUNCH_CLUSTER_DIM, 0, {t->cluster, 1, 1}};
	struct {
		unsigned gx, gy, gz, bx, by, bz, smem;
		void *stream;
		void *attrs;
		unsigned n_attrs;
	} cfg = {(unsigned)grid, 1, 1, (unsigned)sh.threads, 1, 1, (unsigned)smem, stream, &attr, 1};
	return fs_cuda_check(c, c->cuLaunchKernelEx(&cfg, fn, args, NULL), "cuLaunchKernelEx", err, n);
}

void fs_gemm_gen_name(const struct fs_gemm_gen_tactic *t, char *out, size_t n)
{
	struct fs_gemm_gen_shape sh = fs_gemm_gen_shape(t);
	if (t->portable)
		snprintf(out, n, "(mma.sync) %dx%d, %u stages", sh.bm, sh.bn, t->stages);
	else
		snprintf(out, n, "(sm_90a) %dx%d, cluster %u, %u stages", sh.bm, sh.bn, t->cluster, t->stages);
}
