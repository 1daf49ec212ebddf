/*
 * gpu.h (private to fuse/): the generated kernels of a program, compiled with
 * NVRTC and, where a GPU is present, run: the unfused kernels one per op
 * (intermediates in their dumped dtypes), then the fused kernel, on the same
 * inputs (drawn on the device, fuse/rand.h); outputs poisoned first, then
 * checked on the device by the region's float64 reference kernel (which
 * never materialises the reference: any size the GPU holds can be checked);
 * then both timed. Where the CPU computed its float64 reference too, the
 * GPU's is checked against it.
 *
 * The fused kernel is tuned: every tactic (codegen.h) is compiled, run into
 * poisoned outputs, checked, and timed; the fastest that passes wins, ties
 * (medians whose 95% intervals overlap) going to the earlier tactic in
 * fs_tactics' order.
 * With a tuning cache, a hit runs the recorded tactic only (no profiling).
 */
#ifndef FUSESCAN_GPU_H
#define FUSESCAN_GPU_H

#include "codegen.h"
#include "fusescan/numerics.h"
#include "fusescan/tune.h"
#include "prog.h"
#include "text.h" /* fs_progress_say */

struct fs_gpu_opts {
	int execute, compile, triage;
	int compile_all;              /* without execution: every tactic compiled, not one of each kind */
	uint32_t reps;                /* timed runs per kernel */
	uint32_t graph_calls;         /* > 1: a timed run replays a CUDA graph of this many calls (fs_gpu_graph_calls); 1: launch by launch */
	struct fs_tune_cache *cache;  /* NULL: tune every run */
	const char *kernel_key, *bucket; /* the cache key's kernel hash and shape bucket */
	/* judges one tactic's errors against the unfused ones: 0 pass, else why */
	int (*check)(void *ctx, const struct fs_errors *unfused, const struct fs_errors *fused, char *why, size_t n);
	void *ctx;
	uint64_t seed;                /* the random inputs (fuse/rand.h), as the CPU draws them */
	const struct ten *cpu_ref;    /* per value: the CPU's float64 reference outputs, or NULL */
	const struct fs_progress *progress; /* the phases as they begin (fs_numerics_opts), or NULL */
};

/* A tactic and what tuning recorded of it (its name, times, failure), as
 * the report has it. */
struct fs_tactic_run {
	struct fs_tactic t;
	struct fs_numerics_tactic rec;
};

enum { FS_GRAPH_INSTANCES = 8, FS_GRAPH_CALLS = 20 };
#define FS_GRAPH_CALL_BYTES 150e6
#define FS_GRAPH_BYTES 3e9

/* The calls a timed CUDA graph holds for kernels moving `bytes` a call:
 * FS_GRAPH_CALLS under FS_GRAPH_CALL_BYTES (50 us at 3 TB/s), else as many
 * as move FS_GRAPH_BYTES (1 ms at 3 TB/s); 1 (launch by launch) where that
 * is a single call. The rule of scripts/bench_torch.py's graphs. */
uint32_t fs_gpu_graph_calls(double bytes);


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
	int ref_checked;              /* the device reference was checked against cpu_ref: */
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

/* Generates every kernel; compiles them when `compile` (every tactic of the
 * fused kernel included); runs, tunes and times them when `execute` and a GPU
 * is there; with `triage`, also runs the chosen fused kernel compiled with
 * FMA contraction off, and one that rounds every op like eager.
 * 0, or -1 with the reason in g->error. */
int fs_gpu_run(const struct prog *p, const struct fs_gpu_opts *o, struct fs_gpu_result *g);
/* 1 if fs_gpu_run can execute here: NVRTC, the driver and a device load */
int fs_gpu_present(void);
void fs_gpu_release(struct fs_gpu_result *g);

#endif
