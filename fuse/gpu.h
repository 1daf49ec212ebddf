/*
 * gpu.h (private to fuse/): the generated kernels of a program, compiled with
 * NVRTC and, where a GPU is present, run: the unfused kernels one per op
 * (intermediates in their dumped dtypes), then the fused kernel, on the same
 * inputs; outputs poisoned first and read back; then both timed.
 */
#ifndef FUSESCAN_GPU_H
#define FUSESCAN_GPU_H

#include "prog.h"

struct fs_gpu_result {
	uint32_t kernels, compiled;   /* generated, compiled */
	char arch[16], nvrtc[32], device[128];
	char error[1024];             /* the first generation / compile / CUDA error */
	int ran;                      /* executed on the GPU */
	char skipped[256];            /* why not, when not */
	struct ten *unfused, *fused;  /* per value (n_in + n_ops); only outputs hold data */
	struct ten *no_fma, *emulated; /* triage runs of the fused kernel, or NULL */
	double fused_ms, unfused_ms;  /* medians */
	int64_t fused_bytes, unfused_bytes;
	double copy_gbs;              /* device-to-device copy bandwidth, measured */
	uint32_t reps, rotate;        /* timed runs; input copies rotated to defeat L2 */
	uint32_t unfused_launches;
	char *fused_source;           /* CUDA C of the fused kernel (owned) */
};

/* Generates every kernel; compiles them when `compile`; runs and times them
 * when `execute` and a GPU is there; with `triage`, also runs the fused kernel
 * compiled with FMA contraction off, and one that rounds every op like eager.
 * 0, or -1 with the reason in g->error. */
int fs_gpu_run(const struct prog *p, int execute, int compile, int triage, uint32_t reps, struct fs_gpu_result *g);
void fs_gpu_release(const struct prog *p, struct fs_gpu_result *g);

#endif
