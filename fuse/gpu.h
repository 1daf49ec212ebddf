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
#include "fusescan/site_types.h"
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
	const struct fs_progress *progress; /* the phases as they begin (fs_site_opts), or NULL */
};

enum { FS_GRAPH_INSTANCES = 8 };
#define FS_GRAPH_BYTES 3e9

/* The calls a timed CUDA graph holds for kernels moving `bytes` a call:
 * FS_GRAPH_CALLS under FS_GRAPH_CALL_BYTES (50 us at 3 TB/s), else as many
 * as move FS_GRAPH_BYTES (1 ms at 3 TB/s); 1 (launch by launch) where that
 * is a single call. The rule of scripts/bench_torch.py's graphs. */
uint32_t fs_gpu_graph_calls(double bytes);

/* Generates every kernel; compiles them when `compile` (every tactic of the
 * fused kernel included); runs, tunes and times them when `execute` and a GPU
 * is there; with `triage`, also runs the chosen fused kernel compiled with
 * FMA contraction off, and one that rounds every op like eager.
 * g: struct fs_gpu_result (fusescan/site_types.h). 0, or -1 with the reason in g->error. */
int fs_gpu_run(const struct prog *p, const struct fs_gpu_opts *o, struct fs_gpu_result *g);
/* 1 if fs_gpu_run can execute here: NVRTC, the driver and a device load */
int fs_gpu_present(void);
void fs_gpu_release(struct fs_gpu_result *g);

#endif
