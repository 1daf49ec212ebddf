/*
 * gemm.h (private to fuse/): a region's matrix products on the GPU, as
 * gpu.c runs them. Each product of the program becomes a cuBLASLt call
 * (cublaslt.h) once its operands are resolved through views to buffers:
 * eager's GEMMs for the unfused baseline; for the fused plan, products that
 * read one input run as one product on their concatenated weights
 * (AutoDeploy's fuse_gemms; the fused kernel reads each one's columns of
 * the output); a product reading what the fused kernel computes (the SwiGLU
 * MLP's down projection) runs after it, the kernel writing its operand; and a product whose
 * whole epilogue cuBLASLt has (bias, relu, gelu-tanh, a residual add as
 * C with beta 1) can run with it as a second variant. The float64 reference
 * computes each product with a kernel of kernels/gemm_ref.cuh.
 *
 *   struct fs_gemm_plan pl;
 *   if (fs_gemm_plan(p, &pl, &d) == 0) ... pl.calls, pl.given
 *   fs_gemm_plan_release(&pl);
 */
#ifndef FUSESCAN_GEMM_H
#define FUSESCAN_GEMM_H

#include "cublaslt.h"
#include "prog.h"

enum { FS_GEMM_MAX = 16, FS_GEMM_GROUP = 8 };

/* One cuBLASLt product and the values it reads and writes. */
struct fs_gemm_call {
	struct fs_lt_mm mm;
	int32_t a, b, bias, c;          /* operand buffers (values), -1 none; b -1: the concatenated weight */
	int32_t out;                    /* the value it writes (a group: -1, see members) */
	int32_t op;                     /* the program's op (a group: its first) */
	uint8_t post;                   /* after the fused kernel: a reads what the kernel writes */
	uint32_t n_members;             /* a concatenated group: its products' outputs and first columns */
	int32_t member[FS_GEMM_GROUP], member_b[FS_GEMM_GROUP], member_bias[FS_GEMM_GROUP];
	int64_t col[FS_GEMM_GROUP];
};

struct fs_gemm_plan {
	struct fs_gemm_call unfused[FS_GEMM_MAX];  /* per product, as eager runs it (operands: any buffer) */
	struct fs_gemm_call ref[FS_GEMM_MAX];      /* per product, operands read from the region's inputs */
	uint32_t n;
	struct fs_gemm_call calls[FS_GEMM_MAX];    /* the fused plan's products, then its kernel */
	uint32_t n_calls;
	uint8_t *given;                            /* per value: the fused kernel reads it (the products' outputs) */
	int64_t *pitch;                            /* per value: a concatenated group's member, its rows this far apart */
	uint8_t *kernel_out;                       /* per value: the fused kernel writes it (a later product's operand) */
	int absorbs;                               /* the second variant: `absorbed` alone, epilogue inside */
	struct fs_gemm_call absorbed;
	char epilogue[64];                         /* that epilogue, in words */
};

/* Whether the program holds a matrix product. */
int fs_gemm_any(const struct prog *p);
/* The plan of p's products: 0, or -1 with why in d, at the product's line
 * (a product cuBLASLt cannot take: operands that are no buffer's layout,
 * mixed dtypes). */
int fs_gemm_plan(const struct prog *p, struct fs_gemm_plan *pl, struct fs_diags *d);
void fs_gemm_plan_release(struct fs_gemm_plan *pl);
/* The fused kernel's program beside the plan's products: p reading the
 * products' outputs as given (a concatenated group's at its pitch) and
 * writing, besides p's outputs, the operands of the products after it.
 * Whether it has anything to compute (1), or the products are all (0);
 * q->is_output is the caller's to free. */
int fs_gemm_kernel_prog(const struct prog *p, const struct fs_gemm_plan *pl, struct prog *q);
/* The float64 reference kernels of product c (fs_ref_gemm) and the check
 * of a result of dtype x against it (fs_ref_cmp): a translation unit owned
 * by the caller. */
char *fs_gemm_ref_source(const struct prog *p, const struct fs_gemm_call *c, uint8_t x);

#endif
