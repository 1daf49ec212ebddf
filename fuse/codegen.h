/*
 * codegen.h (private to fuse/): CUDA C for a program, the fused kernel or one
 * unfused op's kernel, under a tactic, with what a launch needs.
 */
#ifndef FUSESCAN_CODEGEN_H
#define FUSESCAN_CODEGEN_H

#include "prog.h"

enum { FS_KERNEL_MAX_PARAMS = 32, FS_MAX_TACTICS = 48 };

/* How a kernel maps work to threads. Row kernels (reductions): `threads`
 * per row, `per` rows per block; elementwise kernels: blocks of `threads`,
 * `per` vector groups per thread. Both: `vec` consecutive elements of the
 * last dim per access (16 bytes for 8 bf16). */
struct fs_tactic {
	uint16_t vec, threads, per;
};

struct fs_kernel {
	char *source;                 /* a complete NVRTC translation unit; kernel fs_k */
	uint32_t n_params;            /* pointer parameters, in order */
	int32_t value[FS_KERNEL_MAX_PARAMS]; /* the value each one holds */
	uint8_t write[FS_KERNEL_MAX_PARAMS];
	uint8_t row;                  /* row kernel (reductions) or elementwise */
	int64_t cols;                 /* row length, or the smallest last dim written */
	int64_t work;                 /* rows, or output elements */
	struct fs_tactic tactic;
	int64_t grid, block;
	int64_t bytes;                /* buffers read and written: the kernel's minimum traffic */
};

/* Values an unfused execution keeps in buffers: inputs and every op that
 * launches a kernel in eager PyTorch (views and dropout do not). */
int fs_codegen_buffered(const struct prog *p, int32_t v);

/* The fused kernel (only < 0) or the kernel of op `only`, under tactic t
 * (NULL: the fallback, valid for any shape; &fs_tactic_eager: eager's); `emulate`: the fused kernel
 * rounds every op's result to its dumped dtype, as eager does (triage).
 * 0, or -1 with the reason in why (a tactic the shapes do not allow
 * included). */
int fs_codegen(const struct prog *p, int32_t only, int emulate, const struct fs_tactic *t, struct fs_kernel *k,
	       char *why, size_t n);
void fs_kernel_release(struct fs_kernel *k);

/* The tactics worth timing for a kernel generated with the fallback (k),
 * the fallback first. Returns how many. */
uint32_t fs_tactics(const struct fs_kernel *k, struct fs_tactic *out);
/* For unfused kernels: vectorised as eager's own kernels are (16-byte
 * accesses), or the fallback where the shapes do not allow it; fs_codegen
 * picks it from the shapes. */
extern const struct fs_tactic fs_tactic_eager;
/* "v8 t128 r2" */
void fs_tactic_name(const struct fs_tactic *t, int row, char *out, size_t n);

#endif
