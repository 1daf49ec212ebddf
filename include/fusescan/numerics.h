/*
 * numerics.h: does a fused region compute what the unfused ops compute? One
 * instance of a region (its nodes in file order) is executed on concrete
 * shapes three ways from one op-semantics table (fuse/sem.def):
 *
 *   reference  float64 throughout, casts to floating types ignored;
 *   unfused    eager PyTorch: every op's output rounded to its dumped dtype;
 *   fused      fp32 intermediates, rounded only where the region casts and
 *              at its outputs (what a generated kernel computes);
 *
 * on random inputs (never zeros; bool / integer inputs in range), and the
 * errors of both against the reference give a verdict: the fused error may
 * be at most k x the unfused error plus a per-dtype tolerance; NaN / Inf
 * never pass. `triage` reruns the fused execution with per-op rounding
 * emulated and says whether a failure is rounding or a bug.
 *
 * On the CPU while its values fit `max_bytes` (checked before any is
 * allocated); on the GPU (when asked and present) the same three as kernels,
 * the reference one checking the others on the device, so sizes beyond the
 * CPU's budget are checked there alone.
 *
 *   struct fs_numerics_opts o = {.tokens = 16, .seed = 1};
 *   struct fs_numerics r;
 *   if (fs_numerics_run(scan, graph, nodes, n, &o, &r, &diags) == 0)
 *       fs_numerics_print(&r, stdout);
 *   fs_numerics_release(&r);
 */
#ifndef FUSESCAN_NUMERICS_H
#define FUSESCAN_NUMERICS_H

#include "fusescan/diag.h"
#include "fusescan/graph.h"
#include "fusescan/rewrite.h"
#include "fusescan/scan.h"
#include "fusescan/tune.h"

#include <stdio.h>

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

/* The CPU executions' default memory budget (docs/limits.md). */
#define FS_CPU_BYTES ((int64_t)4 << 30)

struct fs_numerics_opts {
	int64_t tokens;      /* sequence length bound for the run (batch 1) */
	uint64_t seed;       /* random inputs */
	int gelu_tanh;       /* gelu is the tanh approximation (the dump omits approximate=) */
	int triage;          /* also run with per-op rounding emulated */
	double plant_eps;    /* debug: replace every eps-like add literal (< 1e-2) by this; 0 = off */
	int plant_drop_cast; /* debug: skip the region's first widening cast */
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


/* The tuner's finalists: the tactics timed again in its final round (fuse/gpu.c). */
enum { FS_FINALISTS = 8 };

/* One tactic of the fused kernel, as the tuner saw it. */
struct fs_numerics_tactic {
	char name[32];           /* "v8 t128 r1": vec, threads per row / block, rows per block / groups per thread;
	                            "... fast": fast math */
	double ms, spread, ci;   /* median, p90 - p10, half the median's 95% interval */
	char failed[200];        /* why it was not eligible, or "" */
	int final;               /* a finalist: ms, spread and ci from the interleaved final round */
	double company_ms[3];    /* a finalist timed in companies (fuse/gpu.c, final_round): its median among the
	                            finalists, after the unfused chain, after a copy; 0 where not timed so */
	double worst;            /* there: its highest ratio to a company's fastest (the lowest wins) */
};

/* Errors of one execution against the reference, over every output element. */
struct fs_errors {
	double max_abs, max_rel, nrmse;
	uint64_t nonfinite;      /* NaN / Inf elements */
	uint64_t unwritten;      /* elements still holding the poison value */
};

enum { FS_MAX_BUCKETS = 24 };

/* The cuBLASLt algorithms a region's fused plan was tuned to run: each
 * product's before and after the kernel (in the plan's order) and the
 * product with cuBLASLt's epilogue; valid for this cuBLASLt version, on the
 * device tuned on; and where the generated GEMM was chosen, its tactic. The
 * emitted op runs them (kernels/torch_op.py). */
enum { FS_MAX_PRODUCTS = 16 };
struct fs_lt_algos {
	uint64_t version;        /* cublasLtGetVersion(); 0: none tuned */
	uint32_t n;              /* products */
	uint64_t algo[FS_MAX_PRODUCTS][8]; /* cublasLtMatmulAlgo_t each */
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
	int variant;             /* a region with matrix products: its fused plan (fs_numerics.variant) */
	struct fs_lt_algos algos; /* and the cuBLASLt algorithms its products were tuned to */
	double speedup, speedup_lo, speedup_hi; /* unfused / fused timed side by side, and its 95% interval */
	int slower;              /* the fused plan is slower here (speedup interval wholly below 1): not profitable at this
	                            size (the emitted op still runs it, correct; its descriptor says profitable: false) */
	int run_failed;          /* its GPU run ended on an error (error says which): a plan that could not be checked */
	char error[256];         /* why the bucket could not be tuned, or which plan fails its check and why */
	double seconds;          /* wall time of its tuning (compiling, checking, timing) */
	struct fs_numerics_tactic finalists[FS_FINALISTS]; /* its tuning's final round (a cache hit: the cached tactic alone, met in no company) */
	uint32_t n_finalists;
};

/* A check passes or fails; the verdict of a run is the worst check of every
 * plan it would use, and where all pass, whether the fusion pays. */
enum fs_verdict { FS_VERDICT_PASS, FS_VERDICT_FAIL, FS_VERDICT_NOT_PROFITABLE };

/* One check: the fused execution's errors against fused <= k x unfused + tol. */
struct fs_check {
	enum fs_verdict verdict; /* pass or fail */
	double min_tol;          /* the least tolerance that passes */
	char why[256];           /* a failure's reason */
};
enum fs_triage { FS_TRIAGE_NONE, FS_TRIAGE_ROUNDING, FS_TRIAGE_BUG };

struct fs_numerics {
	char shapes[512];        /* "x: 1x16x4096 bf16, w: 4096 bf16 -> out: 1x16x4096 bf16" */
	char binding[128];       /* "s72=1 s70=16" */
	uint32_t n_ops, n_inputs, n_outputs;
	uint64_t out_elems;
	uint8_t out_dtype;       /* the lowest-precision output dtype: picks k and the tolerance */
	int cpu_ran;             /* the CPU executions ran (else cpu_skipped says why) */
	double gpu_seconds;      /* wall time of the GPU side at the run's own size (compiling, checking, tuning) */
	char cpu_skipped[160];
	struct fs_errors unfused, fused, emulated;
	double k, tol;           /* a check's bound: fused.max_abs <= k * unfused.max_abs + tol */
	struct fs_check cpu_check, gpu_check; /* the CPU executions', the GPU plan's at the run's own size */
	/* the verdict: the worst of every plan the run would use (both checks, plan_failed, every bucket's plans);
	 * where all pass and the fused plan is slower than the unfused chain at the run's own size, not profitable */
	enum fs_verdict verdict;
	char why[300];           /* which plan fails and why, or why it does not pay */
	enum fs_triage triage;   /* on the GPU kernels when they ran with --triage, else on the CPU */
	enum fs_triage cpu_triage;
	char planted[96];        /* the planted bug, if any */
	/* the generated kernels: the fused one and one per unfused op */
	char *fused_source;      /* CUDA C of the fused kernel (owned) */
	uint32_t kernels, compiled, unfused_kernels, ref_kernels, gemm_kernels;
	char arch[16], nvrtc[32], device[128];
	char kernel_error[1024]; /* the first generation / compile / CUDA error */
	int refused;             /* the generator does not take the region (kernel_error says why) */
	char gpu_skipped[256];   /* why the kernels did not run, when they did not */
	/* on the GPU: errors of both against the float64 reference (a kernel on
	 * the GPU), and timing */
	int gpu_ran;
	struct fs_errors gpu_unfused, gpu_fused;
	int ref_checked;         /* the GPU's reference against the CPU's (outputs of the CPU reference
	                            read as the result under test): */
	struct fs_errors ref_vs_cpu;
	int gpu_triaged;         /* the triage below ran on the GPU kernels */
	struct fs_errors gpu_no_fma, gpu_emulated;
	double fused_ms, unfused_ms, copy_gbs, copy_same_gbs; /* copies of 1 GiB and of the fused kernel's traffic */
	double fused_ci, unfused_ci, speedup, speedup_lo, speedup_hi; /* side by side (fuse/gpu.h) */
	int timed_apart;         /* the two timed one after the other (their buffers do not fit together) */
	char plan_failed[256];   /* another plan the run would use that fails its check (the emitted op's, the fallback) */
	int gpu_failed;          /* the kernels' compile or GPU run ended on an error (kernel_error): nothing checked there */
	int64_t fused_bytes, unfused_bytes;
	double flops;            /* its products' floating-point operations */
	char gemm[1024];         /* a region with matrix products: cuBLASLt, its algorithms, the fused plan's variants */
	uint32_t reps, rotate, unfused_launches;
	/* tuning of the fused kernel (tactics compiled; timed on the GPU) */
	char bucket[64];         /* the tuning cache's shape bucket */
	struct fs_numerics_tactic tactics[256];
	uint32_t n_tactics, n_failed;
	int32_t chosen, runner_up; /* indexes into tactics, -1 none */
	int variant;             /* matrix products: 0 the products then the fused kernel (or the products alone), 1 a
				  * product with cuBLASLt's epilogue, 2 the generated GEMM with the epilogue inside */
	struct fs_lt_algos algos; /* matrix products: the cuBLASLt algorithms tuned */
	struct fs_tactic chosen_tactic;
	int cache_hit;
	struct fs_bucket_run buckets[FS_MAX_BUCKETS]; /* tuned per bucket (fuse/buckets.c) */
	uint32_t n_buckets;
	char emitted[1100];      /* what --emit wrote, or why not */
	char emitted_name[40];   /* the op --emit wrote (fs_...), or "" */
	int emit_failed;
};

/* The most nodes a region may hold: its kernel is generated (recursively along
 * its chains, a few KiB of stack an op), compiled and executed as one (real
 * chains hold a few dozen; the fixtures' largest under 60). */
enum { FS_MAX_SITE_NODES = 256 };

/* 0, or -1 with the reason in d (an op without semantics, a shape that cannot
 * be bound, ...). */
int fs_numerics_run(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n,
		    const struct fs_numerics_opts *o, struct fs_numerics *r, struct fs_diags *d);
/* Whether the node is a view the kernels compute as index math that keeps
 * every dim of its input (transpose, permute, slice, unsqueeze, squeeze):
 * a region can read its input instead, every symbol still readable. */
int fs_numerics_is_view(const struct fs_scan *s, const struct fs_graph *g, uint32_t node);
/* The region's fused kernel at `tokens` as a key (a hash of its generated
 * source, 16 hex digits; of a region with matrix products, of the op --emit
 * writes for it): regions with one key run one kernel. 0, or -1 when no
 * kernel can be generated (then key is ""). nodes in file order. */
int fs_numerics_kernel_key(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, int gelu_tanh,
			   int64_t tokens, char key[20]);
/* Whether the generator takes the region at `tokens`: every kernel --apply would compile
 * generated, none compiled or run. 0 (it does, or the region's shapes do not bind at
 * `tokens`: nothing said), or -1 with why. nodes in file order. */
int fs_numerics_generates(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, int gelu_tanh,
			  int64_t tokens, char *why, size_t wn);
void fs_numerics_print(const struct fs_numerics *r, FILE *out);
void fs_numerics_release(struct fs_numerics *r);
/* A cJSON object (cJSON *), owned by the caller. */
void *fs_numerics_json(const struct fs_numerics *r);
const char *fs_verdict_name(enum fs_verdict v);
const char *fs_triage_name(enum fs_triage t);

#endif
