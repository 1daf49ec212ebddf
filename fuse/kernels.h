/*
 * kernels.h (private to fuse/): every kernel a region's plans run, generated
 * with no compiler and no device: the fused kernel (the fallback, valid for
 * any size), one kernel per unfused op (a matrix product: the cuBLASLt call
 * eager makes), the float64 references, and with matrix products their
 * plan (gemm.h), their reference kernels and the generated GEMM (gemm_gen.h).
 * discover asks it whether the generator takes a region
 * (fs_site_generates); gpu.c compiles, runs and times what it generates,
 * and asks it for the fused kernel under each tactic it tunes.
 *
 *   struct fs_kernels ks;
 *   struct fs_kernels_opts o = {.cpu_ref = 1};
 *   if (fs_kernels_generate(p, &o, &ks, &d)) ... fs_diags_last(&d) (the generator refuses the region)
 *   fs_kernels_release(&ks);
 */
#ifndef FUSESCAN_KERNELS_H
#define FUSESCAN_KERNELS_H

#include "codegen.h"
#include "gemm.h"
#include "gemm_gen.h"
#include "prog.h"

struct fs_kernels_opts {
	int cpu_ref;  /* the CPU computes a float64 reference too: the kernels that read it as well */
	int compile;  /* the sources only a compiler needs besides: the generated GEMM's tactics, the input fill */
};

/* A kernel of the set: generated (k.source), or (gc set) a matrix product
 * cuBLASLt runs. */
struct fs_kernels_item {
	struct fs_kernel k;
	const struct fs_gemm_call *gc;
};

struct fs_kernels {
	struct prog q;              /* p, reading its products' outputs as given (gemm.h); p itself without products */
	struct prog qs;             /* q writing only the later products' operands: the reference that stores them */
	int gemm, kernel;           /* the region holds products; the fused plan has a generated kernel */
	struct fs_gemm_plan gp;
	struct fs_kernels_item *l;  /* [0] the fused kernel (none without `kernel`), then one per op that launches, in order */
	uint32_t n;
	struct fs_kernel ref, ref64; /* the float64 reference kernel; the same reading the CPU's reference (cpu_ref) */
	struct fs_kernel store;     /* the reference of what the later products read (FS_GEN_REF_STORE), or none */
	char *product_ref[FS_GEMM_MAX][2]; /* per product: its float64 reference (fs_ref_gemm), with cpu_ref the same in double */
	int gen_planned;            /* the fused plan runs as a generated GEMM (gen), its epilogue in epi where generated */
	struct fs_gemm_gen gen;
	struct fs_kernel epi;
	char *gen_source[FS_GEMM_GEN_TACTICS]; /* with compile: fs_gemm under each tactic */
	char gen_why[160];          /* why there is no generated GEMM */
	char *fill;                 /* with compile: the module drawing the inputs (fs_codegen_fill) */
	uint32_t kernels, unfused_kernels, ref_kernels; /* generated */
};

/* The set of p's kernels (p outlives ks): 0, or -1 with why in d where the
 * generator or the products' plan does not take the region (what was
 * generated before the refusal stays, to be released). */
int fs_kernels_generate(const struct prog *p, const struct fs_kernels_opts *o, struct fs_kernels *ks, struct fs_diags *d);
void fs_kernels_release(struct fs_kernels *ks);
/* The fused kernel under tactic t (NULL: the fallback) in mode, with 64-bit
 * indices where index64 (valid for any size): 0, or -1 with why in d. */
int fs_kernels_fused(const struct fs_kernels *ks, const struct fs_tactic *t, enum fs_gen mode, int index64, struct fs_kernel *k,
		     struct fs_diags *d);
/* The tactics of the fused kernel (its fallback generated as `fallback`) a
 * compile with no GPU to run them covers, the fallback's first: one of each
 * kind (the first vectorised one and its variants: each L2 policy, rows in
 * memory order; the first with fast math), or with `all` every one of
 * fs_tactics' and those variants. How many. */
uint32_t fs_kernels_tactics(const struct fs_kernel *fallback, int all, struct fs_tactic list[FS_MAX_TACTICS]);

#endif
