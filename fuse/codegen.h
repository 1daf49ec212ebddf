/*
 * codegen.h (private to fuse/): CUDA C for a program, the fused kernel or one
 * unfused op's kernel, with what a launch needs.
 */
#ifndef FUSESCAN_CODEGEN_H
#define FUSESCAN_CODEGEN_H

#include "prog.h"

enum { FS_KERNEL_MAX_PARAMS = 32 };

struct fs_kernel {
	char *source;                 /* a complete NVRTC translation unit; kernel fs_k */
	uint32_t n_params;            /* pointer parameters, in order */
	int32_t value[FS_KERNEL_MAX_PARAMS]; /* the value each one holds */
	uint8_t write[FS_KERNEL_MAX_PARAMS];
	uint8_t row;                  /* one block per row (reductions) or a grid-stride loop */
	int64_t grid, block;
	int64_t bytes;                /* buffers read and written: the kernel's minimum traffic */
};

/* Values an unfused execution keeps in buffers: inputs and every op that
 * launches a kernel in eager PyTorch (views and dropout do not). */
int fs_codegen_buffered(const struct prog *p, int32_t v);

/* The fused kernel (only < 0) or the kernel of op `only`; `emulate`: the
 * fused kernel rounds every op's result to its dumped dtype, as eager does
 * (triage). 0, or -1 with the reason in why. */
int fs_codegen(const struct prog *p, int32_t only, int emulate, struct fs_kernel *k, char *why, size_t n);
void fs_kernel_release(struct fs_kernel *k);

#endif
