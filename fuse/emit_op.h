/*
 * emit_op.h (private to fuse/): the tensors of the op `--emit` writes
 * (emit.h), and what it runs besides its kernel.
 *
 * A region without matrix products is its fused kernel: the op's inputs are
 * what the kernel reads, its outputs what it writes. A region with products
 * (gemm.h) runs them as the fused plan does, through PyTorch's own GEMMs
 * (cuBLAS / cuBLASLt, which fusescan times): products reading one input as
 * one product on their weights concatenated (built once per weight set),
 * then the kernel reading their outputs, then the products reading what it
 * writes; or, where cuBLASLt has the region's whole epilogue, that one
 * product with it (`epilogue`); or, where fusescan chose it, the generated
 * GEMM with the kernel's work inside (emit.c). Its inputs are the region's inputs, its
 * outputs the region's, except that outputs which are columns of a
 * concatenated product's output are returned as that output, once (`views`
 * says whose columns: a custom op's outputs may not alias each other).
 *
 *   struct fs_emit_op e;
 *   if (fs_emit_op_init(&e, p, why, sizeof(why)) == 0) {
 *           ... e.kernel: codegen of &e.kq ...
 *           fs_emit_op_json(&e, &k, j, &sig, why, sizeof(why));
 *           fs_emit_op_release(&e);
 *   }
 */
#ifndef FUSESCAN_EMIT_OP_H
#define FUSESCAN_EMIT_OP_H

#include "codegen.h"
#include "gemm.h"
#include "text.h"

#include <cjson/cJSON.h>

struct fs_emit_op {
	const struct prog *p;
	int gemm, kernel;          /* p has matrix products; a fused kernel runs */
	struct fs_gemm_plan pl;    /* the products' plan (gemm) */
	struct prog kq;            /* the fused kernel's program: p, or p beside its products */
	char (*name)[96];          /* a Python name per value of p, then per product of the plan */
};

/* The module's signature: `a: torch.Tensor, ...`, `a, ...`, the return type, the inputs in words. */
struct fs_emit_sig {
	struct fs_text sig, args, ret, doc;
};

/* How the op gets each symbol of its program (its kernels take every one):
 * read off an input's dim that is exactly it (DIM); solved from an input's
 * dim linear in it, once the symbols that dim also reads are known, `step`
 * the order (SOLVE: sym = (size - f(0)) / (f(1) - f(0)), f the dim's
 * formula); its bound value, where no shape of the op reads it (UNUSED);
 * 1, where the op's shapes read it only through its product with symbol
 * `into` (a batch of 1 flattened into the tokens: 32*s70*s72), which then
 * carries the product (FOLDED); NONE: none of these. */
enum fs_emit_sym_how { FS_SYM_NONE, FS_SYM_DIM, FS_SYM_SOLVE, FS_SYM_UNUSED, FS_SYM_FOLDED };
struct fs_emit_sym {
	uint8_t how;
	uint32_t input;  /* DIM, SOLVE: the op's input (index into its inputs) */
	uint8_t dim;     /* and its dim */
	int64_t value;   /* UNUSED, FOLDED: the value the op gives it */
	uint32_t into;   /* FOLDED: the symbol carrying the product */
	uint32_t step;   /* SOLVE: its place in the order the op solves them */
};

int fs_emit_op_init(struct fs_emit_op *e, const struct prog *p, char *why, size_t n);
void fs_emit_op_release(struct fs_emit_op *e);
/* The op's inputs (values of p, at most FS_KERNEL_MAX_PARAMS) and outputs
 * (what the region's users read, in order); k: the fused kernel (NULL: none). */
uint32_t fs_emit_op_inputs(const struct fs_emit_op *e, const struct fs_kernel *k, int32_t *v);
uint32_t fs_emit_op_outputs(const struct fs_emit_op *e, const struct fs_kernel *k, int32_t *v);
/* out[b]: how the op gets symbol b of e->p's bindings; in: its inputs (fs_emit_op_inputs). */
void fs_emit_op_symbols(const struct fs_emit_op *e, const int32_t *in, uint32_t n_in, struct fs_emit_sym *out);
/* The descriptor's "symbols", "tokens", "inputs", "outputs", "views",
 * "buffers", "args" (k's buffers, each a tensor and an element offset),
 * "products" and "epilogue" in j, and the module's signature. 0, or -1 with why. */
int fs_emit_op_json(const struct fs_emit_op *e, const struct fs_kernel *k, cJSON *j, struct fs_emit_sig *s, char *why, size_t n);
/* A kernel's buffers as the op passes them: each a tensor of the op and an
 * element offset into it (a group member: its column of the group's output). */
cJSON *fs_emit_op_args(const struct fs_emit_op *e, const struct fs_kernel *k);

#endif
