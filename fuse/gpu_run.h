/*
 * gpu_run.h (private to fuse/gpu*.c): one GPU run of a region (gpu.h) as the
 * gpu files share it: the launches, where values live, the run's state, and
 * the functions each file gives those above it. Calls go one way:
 *   gpu.c         the run: buffers, the generated kernels, tuning, the verdict's measurements
 *   gpu_gemm.c    a region's matrix products: their plans, float64 reference, concatenated
 *                 weights, the generated GEMM, the fused plan's variants timed side by side
 *   gpu_launch.c  launching kernels and products, running a plan once and checking it, compiling
 *   gpu_time.c    timing: interleaved rounds, CUDA graphs, medians, copy bandwidth
 * gpu.c calls the three below it, gpu_gemm.c the two below it; gpu_launch.c and gpu_time.c
 * call neither of the others.
 */
#ifndef FUSESCAN_GPU_RUN_H
#define FUSESCAN_GPU_RUN_H

#include "cuda.h"
#include "gpu.h"
#include "kernels.h"

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
	struct fs_kernels ks;      /* the generated kernels' programs and plans (kernels.h); the kernels move to the launches */
	const struct fs_gpu_opts *o;
	struct fs_cuda c;
	struct launch *l;          /* [0] fused (the chosen tactic), then the unfused kernels in order */
	uint32_t n;
	struct launch ref, ref64;  /* the float64 reference kernel; the same reading double results */
	fs_devptr *dev;            /* unfused: per value; inputs: rotate copies each */
	fs_devptr unfused_block;   /* without products: the unfused values' buffers, planned by lifetime (alloc_unfused) */
	int unfused_gone;          /* unfused_block was freed to fit the fused outputs: the unfused chain runs no more */
	fs_devptr *fused_out;      /* per value: the fused kernel's outputs */
	fs_devptr *cpu_ref;        /* per value: the CPU reference's outputs, as double */
	fs_devptr stats;           /* struct fs_stats of kernels/fused.cuh */
	void *stream;              /* every launch and timing event */
	uint32_t rotate;
	uint32_t calls;            /* a timed CUDA graph's calls (fs_gpu_graph_calls): o->graph_calls, or a
				    * product's own while it is tuned alone (its cache entry is the product's) */
	struct fs_gpu_result *g;
	/* matrix products (gemm.h, their plan in ks): cuBLASLt, the fused plan's products
	 * (variant 0, before the fused kernel) and its cuBLASLt-epilogue variant 1 */
	struct fs_lt lt;
	struct launch gl[FS_GEMM_MAX], absorbed;
	fs_devptr *wcat, *bcat;    /* per fused product and input copy: concatenated weights, biases */
	fs_devptr catout[FS_GEMM_MAX];
	fs_devptr *refbuf;         /* per value: a product's float64 reference */
	struct launch refg[FS_GEMM_MAX], cmp[FS_GEMM_MAX], cmp64[FS_GEMM_MAX]; /* per product */
	struct launch store;       /* the reference of what the later products read (FS_GEN_REF_STORE) */
	/* the generated GEMM (gemm_gen.h, its plan in ks), variant 2: per tactic its
	 * module and the weight it reads on each input copy, the tactic run */
	int has_gen;
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

/* A generated kernel's arguments on input copy `copy` of the results in
 * w: its buffers, the symbols' values and magic numbers, (a reference)
 * the statistics; the storage they point into. Returns how many. */
struct kargs {
	void *p[FS_KERNEL_MAX_PARAMS + 2 * FS_KERNEL_MAX_SYMS + 1];
	fs_devptr ptr[FS_KERNEL_MAX_PARAMS];
	long long sym[FS_KERNEL_MAX_SYMS];
	unsigned long long magic[FS_KERNEL_MAX_SYMS];
};

/* One timing: median, p90 - p10 and half the median's 95% interval (ms). */
struct timing {
	double ms, spread, ci;
};

typedef int (*run_fn)(struct run *R, const void *what, uint32_t r);

/* something to run: a run function and its argument (fs_gpu_time_set's `before`) */
struct side {
	run_fn one;
	const void *what;
};

static inline size_t fs_value_bytes(const struct ten *t)
{
	return (size_t)t->n * fs_dtype_size((enum fs_dtype)t->dtype);
}

/* a buffer's size for t (cuMemAlloc refuses 0 bytes) */
static inline size_t fs_value_alloc_bytes(const struct ten *t)
{
	return fs_value_bytes(t) ? fs_value_bytes(t) : 1;
}

/* device-to-device copies: c->pairs buffer pairs of c->n bytes each */
struct copies {
	fs_devptr src[8], dst[8];
	uint32_t pairs;
	size_t n;
};

/* gpu_time.c (see each one's comment there) */
int fs_gpu_time_set(struct run *R, run_fn one, const void *const *what, uint32_t k, uint32_t reps, const struct side *before,
		    struct timing *out, float *rounds);
void fs_gpu_median_interval(float *x, uint32_t n, double *median, double *lo, double *hi);
int fs_gpu_copies_alloc(struct run *R, struct copies *c);
void fs_gpu_copies_free(struct run *R, struct copies *c);
int fs_gpu_run_copy(struct run *R, const void *what, uint32_t r);
int fs_gpu_copy_bandwidth(struct run *R, size_t n, int l2, double *gbs);
void fs_gpu_cache_key(const struct run *R, struct fs_tune_key *k);

/* gpu_launch.c */
fs_devptr fs_gpu_buffer(const struct run *R, int32_t v, uint32_t copy, enum where w);
uint32_t fs_gpu_kernel_args(struct run *R, const struct launch *L, uint32_t copy, enum where w, struct kargs *A);
int fs_gpu_launch(struct run *R, const struct launch *L, uint32_t copy, enum where w);
void fs_gpu_gemm_in_group(const struct run *R, int32_t v, fs_devptr *x, long long *ld);
int fs_gpu_gemm_launch_lt(struct run *R, const struct launch *L, uint32_t copy, enum where w);
int fs_gpu_gemm_launch_gen(struct run *R, uint32_t copy);
int fs_gpu_gemm_compare_products(struct run *R, enum where w);
int fs_gpu_gemm_run_products(struct run *R, int variant, uint32_t copy, int post);
int fs_gpu_measure(struct run *R, enum where w, struct fs_errors *e);
int fs_gpu_run_fused(struct run *R, const void *L, uint32_t r);
int fs_gpu_load_cubin(struct run *R, const char *cubin, void **module, const char *name, void **fn);
int fs_gpu_build_for(struct run *R, const char *arch, const char *source, int fmad, int count, int load, void **module, const char *name,
		     void **fn);
int fs_gpu_build(struct run *R, const char *source, int fmad, int count, int load, void **module, const char *name, void **fn);
int fs_gpu_run_plan(struct run *R, int variant, const struct launch *L, uint32_t copy);
int fs_gpu_run_once(struct run *R, int variant, const struct launch *L, struct fs_errors *e);
void fs_gpu_plan_failed(struct run *R, const char *plan, const char *why);

/* gpu_gemm.c */
void fs_gpu_gemm_lt_launch(struct launch *L, const struct fs_gemm_call *c, uint32_t slot);
int fs_gpu_gemm_prepare_products(struct run *R, int load);
int fs_gpu_gemm_prepare_gen(struct run *R, int load);
int fs_gpu_gemm_setup_products(struct run *R);
int fs_gpu_gemm_time_variants(struct run *R);

#endif
