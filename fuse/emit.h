/*
 * emit.h (private to fuse/): `--emit DIR`, the fused kernel for deployment.
 * One translation unit holds the chosen tactic of every bucket (kernels
 * that come out the same are written once) and the fallback, valid for any
 * size; it is compiled to one PTX. Beside it the descriptor (format
 * fusescan.kernel/3: the symbols and the input dim each is read from, the
 * inputs and outputs with symbolic shapes, per kernel its entry point,
 * requirements and launch shape as formulas of the symbols, per bucket its
 * kernel and plan) and NAME.py, a module registering the kernel as the
 * PyTorch custom op fusescan::NAME (kernels/torch_op.py). Where a bucket's
 * fused plan is the generated GEMM (gemm_gen.h), each tactic the buckets
 * chose is a PTX of its own, NAME.gT.ptx, and the descriptor's
 * "generated" says how to launch it.
 *
 *   struct fs_emit_bucket b[] = {{&p1, 1, tactic1, 1, 0.002}, ...};
 *   fs_emit(&base, b, n, &opts, &gpu, &e);   // opts.emit_dir; e.text, e.failed
 *
 * With opts.emit_sites the descriptor also names the sites the op replaces
 * (`sites`: each one's inputs in the op's order, outputs and nodes) and the
 * graph they are in, so a model's graph can be rewritten from it.
 */
#ifndef FUSESCAN_EMIT_H
#define FUSESCAN_EMIT_H

#include "fusescan/site_types.h"
#include "prog.h"

struct fs_emit_bucket {
	const struct prog *p;   /* the region bound at this bucket */
	int64_t tokens;
	struct fs_tactic t;     /* its tactic (tuned, or the heuristic one) */
	int tuned;
	double ms;
	int variant;            /* a region with matrix products: its fused plan there (fs_gpu_result.variant) */
	int slower;             /* the fused plan was timed slower there: the op runs it (it is correct), profitable: false */
	const struct fs_lt_algos *algos; /* the cuBLASLt algorithms tuned there (version 0 or NULL: none) */
};

/* The op a region (bound at some size) would be emitted as, as a key: a
 * hash of what every site sharing one op has alike (its kernel and its
 * products, names aside). 0, or -1 (no op: key ""). */
int fs_emit_key(const struct prog *p, char key[20]);

/* Writes DIR/NAME.cu, .ptx, .json and .py; r->text says what, or why not
 * (r->failed). base: the region at the run's own sizes; gpu: its GPU run
 * (the device and NVRTC it was tuned with). */
void fs_emit(const struct prog *base, const struct fs_emit_bucket *b, uint32_t n, const struct fs_site_opts *o,
	     const struct fs_gpu_result *gpu, struct fs_emit_result *r);

#endif
