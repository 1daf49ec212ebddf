/*
 * site_types.h: the types of a site's check (fusescan/site.h): what it is
 * asked, and its result, stage by stage, each part filled by its own stage
 * of fuse/ and printed by report/site_text.c and site_json.c.
 */
#ifndef FUSESCAN_SITE_TYPES_H
#define FUSESCAN_SITE_TYPES_H

#include "fusescan/rewrite.h" /* struct fs_site */
#include "fusescan/tune.h"    /* struct fs_tactic, fs_tune_cache */

#include <stdint.h>

/* What an emitted op replaces, written into its descriptor: the sites by
 * node name, each site's kernel the same as the one of the site run. */
struct fs_emit_sites {
	const char *candidate;          /* the candidate or pattern name */
	const char *dump, *stage, *transform; /* the graph the sites are in */
	const struct fs_site *v;
	uint32_t n;
};

/* A long run's phases as each begins, one line apiece ("CPU check (float64
 * reference, 16 tokens)"), said through say(ctx, line): the caller decides
 * whether and where they are shown. */
struct fs_progress {
	void (*say)(void *ctx, const char *line);
	void *ctx;
};

/* --apply's token count unless --tokens says otherwise; discover asks the
 * generator at the same size. */
enum { FS_APPLY_TOKENS = 16 };

/* The CPU executions' default memory budget (docs/limits.md). */
#define FS_CPU_BYTES ((int64_t)4 << 30)

/* How a site's program is read: the GELU's form, and the planted bugs
 * (debug) it carries on its fused side. */
struct fs_site_form {
	int gelu_tanh;       /* gelu is the tanh approximation (the dump omits approximate=) */
	double plant_eps;    /* debug: replace every eps-like add literal (< 1e-2) by this; 0 = off */
	int plant_drop_cast; /* debug: skip the region's first widening cast */
};

/* What a site's check runs. */
struct fs_site_opts {
	int64_t tokens;      /* sequence length bound for the run (batch 1) */
	uint64_t seed;       /* random inputs */
	int triage;          /* also run with per-op rounding emulated */
	int64_t max_bytes;   /* the CPU executions' memory: the values of every execution and a matrix product's
			      * scratch, in bytes (0: FS_CPU_BYTES); past 2^25 elements they run only where no GPU
			      * will (its float64 reference checks those); larger runs on the GPU only */
	int gpu;             /* run the generated kernels on the GPU when there is one */
	int generate_only;   /* generate the kernels, do not compile them (fuzzing) */
	int compile_all;     /* with no GPU to run them: compile every tactic a GPU would time, not one of each
			      * kind (the exhaustive compile check) */
	uint32_t reps;       /* timed runs on the GPU (0: 50) */
	struct fs_tune_cache *cache; /* tuned tactics, or NULL: tune every run */
	const char *emit_dir; /* write the kernel for deployment here (fuse/emit.h), or NULL */
	const struct fs_emit_sites *emit_sites; /* with emit_dir: the sites the op replaces, or NULL */
	const int64_t *buckets; /* token counts the fused kernel is tuned at (0 of them: powers of two up to tokens) */
	uint32_t n_buckets;
	const struct fs_progress *progress; /* the run's phases as they begin, or NULL */
};


/* The buckets are timed as replays of CUDA graphs of FS_GRAPH_CALLS calls,
 * of fewer where a call moves over FS_GRAPH_CALL_BYTES (fuse/gpu.h). */
enum { FS_GRAPH_CALLS = 20 };
#define FS_GRAPH_CALL_BYTES 150e6

/* The tuner's finalists: the tactics timed again in its final round (fuse/gpu.c). */
enum { FS_FINALISTS = 8 };
/* The most tactics a fused kernel is tuned over (fuse/codegen.h, fs_tactics). */
enum { FS_MAX_TACTICS = 256 };

/* One tactic of the fused kernel, as the tuner saw it. */
struct fs_tactic_rec {
	char name[32];           /* "v8 t128 r1": vec, threads per row / block, rows per block / groups per thread;
	                            "... fast": fast math */
	double ms, spread, ci;   /* median, p90 - p10, half the median's 95% interval */
	char failed[200];        /* why it was not eligible, or "" */
	int final;               /* a finalist: ms, spread and ci from the interleaved final round */
	double company_ms[3];    /* a finalist timed in companies (fuse/gpu.c, final_round): its median among the
	                            finalists, after the unfused chain, after a copy; 0 where not timed so */
	double worst;            /* there: its highest ratio to a company's fastest (the lowest wins) */
};

/* A tactic and what tuning recorded of it. */
struct fs_tactic_run {
	struct fs_tactic t;
	struct fs_tactic_rec rec;
};

/* Errors of one execution against the reference, over every output element. */
struct fs_errors {
	double max_abs, max_rel, nrmse;
	uint64_t nonfinite;      /* NaN / Inf elements */
	uint64_t unwritten;      /* elements still holding the poison value */
};

enum { FS_MAX_BUCKETS = 24 };

/* The cuBLASLt algorithms a region's fused plan was tuned to run, as opaque
 * words (fuse/cublaslt.c reads them): each product's before and after the
 * kernel (in the plan's order) and the product with cuBLASLt's epilogue;
 * valid for this cuBLASLt version, on the device tuned on; and where the
 * generated GEMM was chosen, its tactic. The emitted op runs them
 * (kernels/torch_op.py). */
enum { FS_MAX_PRODUCTS = 16 };
struct fs_lt_algos {
	uint64_t version;        /* cublasLtGetVersion(); 0: none tuned */
	uint32_t n;              /* products */
	uint64_t algo[FS_MAX_PRODUCTS][8];
	uint8_t has_epilogue;
	uint64_t epilogue[8];
	uint8_t gen;             /* the generated GEMM chosen: its tactic + 1 (fs_gemm_gen_tactics); 0 not chosen */
};

/* The fused kernel at one bucket (a token count), tuned on the GPU or,
 * without one, the heuristic tactic. */
struct fs_bucket_run {
	int64_t tokens;
	int tuned;               /* tuned on the GPU */
	uint32_t graph_calls;    /* timed as replays of CUDA graphs of this many calls; 1: launch by launch */
	int cache_hit;
	struct fs_tactic t;
	char tactic[32], runner_up[32];
	double ms, ci, runner_up_ms, unfused_ms; /* per call */
	uint32_t timed, failed;  /* tactics timed; not eligible */
	struct fs_errors fused, unfused; /* the chosen tactic's and the unfused kernels' errors, on the device */
	int passed;              /* every plan the bucket would use passes its check (the chosen one, the emitted op's, the
	                            fallback kernel) */
	int variant;             /* a region with matrix products: its fused plan (fs_gpu_result.variant) */
	struct fs_lt_algos algos; /* and the cuBLASLt algorithms its products were tuned to */
	double speedup, speedup_lo, speedup_hi; /* unfused / fused timed side by side, and its 95% interval */
	int slower;              /* the fused plan is slower here (speedup interval wholly below 1): not profitable at this
	                            size (the emitted op still runs it, correct; its descriptor says profitable: false) */
	int run_failed;          /* its GPU run ended on an error (error says which): a plan that could not be checked */
	char error[256];         /* why the bucket could not be tuned, or which plan fails its check and why */
	double seconds;          /* wall time of its tuning (compiling, checking, timing) */
	struct fs_tactic_rec finalists[FS_FINALISTS]; /* its tuning's final round (a cache hit: the cached tactic alone, met in no company) */
	uint32_t n_finalists;
};

/* A check passes or fails; the verdict of a run is the worst check of every
 * plan it would use, and where all pass, whether the fusion pays. */
/* REFUSED: every check passes, but an output the run was asked for (--emit) could not be written */
enum fs_verdict { FS_VERDICT_PASS, FS_VERDICT_FAIL, FS_VERDICT_NOT_PROFITABLE, FS_VERDICT_REFUSED };

/* One check: the fused execution's errors against fused <= k x unfused + tol. */
struct fs_check {
	enum fs_verdict verdict; /* pass or fail */
	double min_tol;          /* the least tolerance that passes */
	char why[256];           /* a failure's reason */
};
enum fs_triage { FS_TRIAGE_NONE, FS_TRIAGE_ROUNDING, FS_TRIAGE_BUG };

/* The check's bound: fused.max_abs <= k * unfused.max_abs + tol (k from the
 * lowest-precision output dtype). */
struct fs_rule {
	double k, tol;
};

/* The site at the run's own sizes (fuse/site.c). */
struct fs_site_shape {
	char shapes[512];        /* "x: 1x16x4096 bf16, w: 4096 bf16 -> out: 1x16x4096 bf16" */
	char binding[128];       /* "s72=1 s70=16" */
	uint32_t n_ops, n_inputs, n_outputs;
	uint64_t out_elems;
	uint8_t out_dtype;       /* the lowest-precision output dtype: picks the rule */
	char bucket[64];         /* the tuning cache's shape bucket */
	char planted[96];        /* the planted bug, if any */
};

/* The CPU executions (fuse/numerics.c). */
struct fs_cpu_result {
	int ran;                 /* else skipped says why */
	int over_memory;         /* skipped for the memory budget: --cpu-memory would let them run */
	char skipped[160];
	struct fs_errors unfused, fused, emulated;
	struct fs_check check;
	enum fs_triage triage;   /* with --triage: the failure vanishes with per-op rounding (rounding) or not (a bug) */
};

/* The generated kernels: generated, compiled and, where a GPU is present,
 * run, tuned and timed (fuse/gpu.c). */
struct fs_gpu_result {
	uint32_t kernels, compiled;   /* generated, compiled (every tactic counted) */
	uint32_t unfused_kernels, ref_kernels, gemm_kernels; /* gemm: the generated GEMM under each tactic */
	char arch[16], nvrtc[32], device[128];
	char error[1024];             /* the first generation / compile / CUDA error */
	int refused;                  /* the region is beyond what the generator or the product plan takes (error says
				       * why), found before any kernel compiled: nothing to check */
	int ran;                      /* executed on the GPU */
	char skipped[256];            /* why not, when not */
	struct fs_errors unfused, fused; /* against the float64 reference, on the device */
	int triaged;
	struct fs_errors no_fma, emulated; /* triage runs of the chosen fused kernel */
	int ref_checked;              /* the device reference was checked against the CPU's: */
	struct fs_errors ref_vs_cpu;
	/* the final comparison: the fused plan and the unfused chain timed side
	 * by side, interleaved round by round (apart, one after the other, only
	 * where their buffers do not fit the device together) */
	double fused_ms, unfused_ms;  /* medians */
	double fused_ci, unfused_ci;  /* half their 95% intervals */
	double speedup, speedup_lo, speedup_hi; /* unfused / fused: the median of the rounds' ratios and its 95% interval */
	int apart;                    /* timed apart: the interval is the two medians' intervals combined */
	/* the first plan that would be used (the emitted op's own, the fallback
	 * kernel for any size) that fails its check, and why, or "" */
	char plan_failed[256];
	double seconds;               /* wall time of the whole run (compiling, checking, tuning, timing) */
	int64_t fused_bytes, unfused_bytes;
	double copy_gbs;              /* device-to-device copy bandwidth, measured on 1 GiB */
	double copy_same_gbs;         /* the same, copying the fused kernel's traffic (half each way) */
	uint32_t reps, rotate;        /* timed runs; input copies rotated to defeat L2 */
	uint32_t unfused_launches;
	char *fused_source;           /* CUDA C of the chosen fused kernel (owned) */
	/* tuning */
	uint8_t row;                  /* the fused kernel is a row kernel */
	struct fs_tactic_run tactics[FS_MAX_TACTICS];
	uint32_t n_tactics, n_failed;
	int32_t chosen, runner_up;    /* indexes into tactics, -1 none */
	int cache_hit;                /* the tactic came from the tuning cache */
	/* a region with matrix products (fuse/gemm.h) */
	int variant;                  /* the fused plan: 0 products + the fused kernel, 1 a product with cuBLASLt's epilogue,
				       * 2 the generated GEMM with the epilogue inside */
	struct fs_lt_algos algos;     /* the cuBLASLt algorithms of the fused plan's products, as tuned */
	double flops;                 /* the products' floating-point operations */
	char gemm[1024];              /* cuBLASLt's version, the algorithms chosen, the variants' times */
};

/* The GPU's checks of the site at its own size (fuse/site.c). */
struct fs_gpu_check {
	struct fs_check check;   /* the chosen fused kernel against the unfused kernels */
	int triaged;             /* --triage ran on the generated kernels: */
	enum fs_triage triage;   /* a failure that vanishes with FMA contraction off or eager rounding is rounding */
};

/* The fused kernel tuned at every bucket (fuse/buckets.c). */
struct fs_bucket_runs {
	struct fs_bucket_run v[FS_MAX_BUCKETS];
	uint32_t n;
};

/* What --emit wrote (fuse/emit.c). */
struct fs_emit_result {
	char text[1100];         /* what, or why not */
	char name[40];           /* the op written (fs_...), or "" */
	int failed;
};

/* A site's run: each stage's own part, and the verdict: the worst of every
 * plan the run would use (both checks, the plans the GPU found failing, every
 * bucket's plans); where all pass and the fused plan is slower than the
 * unfused chain at the run's own size, not profitable. */
struct fs_site_result {
	struct fs_site_shape shape;
	struct fs_rule rule;
	struct fs_cpu_result cpu;
	struct fs_gpu_result gpu;
	struct fs_gpu_check gpu_check;
	struct fs_bucket_runs buckets;
	struct fs_emit_result emit;
	enum fs_verdict verdict;
	char why[300];           /* which plan fails and why, or why it does not pay */
	enum fs_triage triage;   /* on the GPU kernels when they were triaged, else the CPU's */
};

/* The most nodes a region may hold: its kernel is generated (recursively along
 * its chains, a few KiB of stack an op), compiled and executed as one (real
 * chains hold a few dozen; the fixtures' largest under 60). */
enum { FS_MAX_SITE_NODES = 256 };

const char *fs_verdict_name(enum fs_verdict v);
const char *fs_triage_name(enum fs_triage t);

#endif
