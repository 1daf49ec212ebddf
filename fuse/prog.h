/*
 * prog.h (private to fuse/): a fused region as a program of ops on bound
 * shapes (prog.c builds it, layout.c lays it out), shared by the CPU
 * executions (numerics.c) and the CUDA generator
 * (codegen.c). Values are numbered: the region's external inputs first,
 * then its ops in file order.
 */
#ifndef FUSESCAN_PROG_H
#define FUSESCAN_PROG_H

#include "fusescan/graph.h"
#include "fusescan/diag.h"
#include "fusescan/scan.h"
#include "sem.h"

enum { MAX_RANK = 8, MAX_ARGS = 8 };
enum mode { REF, UNFUSED, FUSED, EMULATED };

struct ten {
	uint8_t rank, dtype;
	int64_t shape[MAX_RANK];    /* bound to the program's symbol values */
	uint32_t sym[MAX_RANK];     /* a symbolic dim: its index in the scan's dims + 1; 0 static */
	int64_t n;
	double *d;
	/* an op's output as the kernels lay it out in memory (fs_prog_layout):
	 * dense, dims outermost first in `order`; else (0) row-major */
	uint8_t strided;
	uint8_t order[MAX_RANK];
};

struct arg {
	int8_t ten;   /* index into the node's tensor operands, or -1: a literal */
	double lit;
};

struct op {
	uint32_t node;
	const struct sem *sem;
	struct ten out;
	struct arg args[MAX_ARGS]; /* elementwise operands in order */
	uint32_t n_args;
	int32_t src[MAX_ARGS];     /* tensor operands: value index (inputs first, then ops) */
	uint32_t n_src;
	int64_t ints[MAX_RANK];    /* dims / permutation / slice bounds */
	uint32_t n_ints;
	double eps;                /* a norm's eps; PAD: the value outside its input */
	uint8_t keepdim;
	uint8_t elided;            /* a transpose of an input that matrix products read in place: never computed */
};

struct prog {
	const struct fs_scan *s;
	const struct fs_graph *g;
	struct fs_binding bind[8];
	uint32_t n_bind;
	struct ten *in;      /* external inputs */
	uint32_t *in_node;
	uint32_t n_in;
	struct op *ops;
	uint32_t n_ops;
	uint8_t *is_output;  /* per op */
	/* while the program is built: node -> value, open addressing over node ids (the region's nodes,
	 * `member`, and its inputs), so every lookup is O(1) whatever the region's size */
	uint32_t *map_node;  /* UINT32_MAX: an empty slot */
	int32_t *map_value;  /* -1: none yet */
	uint8_t *map_member;
	uint32_t map_cap;    /* a power of two */
	int gelu_tanh;       /* gelu is the tanh approximation */
	uint8_t index64;     /* generate 64-bit index arithmetic whatever the sizes (a kernel for any size) */
	/* per value, or NULL: computed before the fused kernel (a matrix product,
	 * by cuBLASLt), which reads it from a buffer like an input and does not
	 * write it; the reference kernels read it in double (fuse/gemm.c) */
	uint8_t *given;
	int64_t *pitch;      /* per value, or NULL: a given value's rows lie this many elements apart (0: dense), a slice of
	                        a concatenated product's output */
	int8_t *member;      /* per value, or NULL: the generated GEMM's product it is (fuse/gemm_gen.h), -1 none: its
	                        epilogue (FS_GEN_EPILOGUE) takes it from the accumulators */
	/* planted bugs (debug), applied to the fused side only */
	double plant_eps;    /* eps-like add literals and norm eps become this; 0 = off */
	uint8_t *narrow;     /* per op: computed at this narrow dtype (dropped cast), 0 = off */
};

/* A floating dtype (what the executions round to). */
static inline int fs_dt_is_float(uint8_t dt)
{
	return dt == FS_DT_F64 || dt == FS_DT_F32 || dt == FS_DT_F16 || dt == FS_DT_BF16;
}

/* Value v: an input (v < n_in) or an op's output. */
static inline const struct ten *fs_prog_value(const struct prog *p, int32_t v)
{
	return v < (int32_t)p->n_in ? &p->in[v] : &p->ops[v - p->n_in].out;
}

/* The node value v comes from. */
static inline uint32_t fs_prog_node(const struct prog *p, int32_t v)
{
	return v < (int32_t)p->n_in ? p->in_node[v] : p->ops[v - p->n_in].node;
}

/* A dim index that may count from the end. */
static inline int64_t fs_dim_at(int64_t d, uint8_t rank)
{
	return d < 0 ? d + rank : d;
}

/* A PERMUTE op's permutation: output dim k is input dim perm[k]
 * (transpose(a, b), t(), permute(dims)). 0, or -1 where the op's dims are
 * none of those. */
static inline int fs_op_perm(const struct op *op, uint8_t rank, int64_t perm[MAX_RANK])
{
	for (uint8_t k = 0; k < rank; k++)
		perm[k] = k;
	if (op->n_ints == 2 || (op->n_ints == 0 && rank == 2)) {
		int64_t a = op->n_ints ? fs_dim_at(op->ints[0], rank) : 0, b = op->n_ints ? fs_dim_at(op->ints[1], rank) : 1;
		if (a < 0 || b < 0 || a >= rank || b >= rank)
			return -1;
		perm[a] = b, perm[b] = a;
		return 0;
	}
	if (op->n_ints != rank)
		return -1;
	for (uint8_t k = 0; k < rank; k++) {
		perm[k] = fs_dim_at(op->ints[k], rank);
		if (perm[k] < 0 || perm[k] >= rank)
			return -1;
	}
	return 0;
}

/* Elements of a shape; -1 past `cap`. */
static inline int64_t fs_numel(const int64_t *shape, uint8_t rank, int64_t cap)
{
	int64_t n = 1;
	for (uint8_t i = 0; i < rank; i++)
		if (__builtin_mul_overflow(n, shape[i], &n) || n > cap)
			return -1;
	return n;
}

/* prog.c: the region's nodes (file order) as a program bound at `tokens`
 * (p->s, p->g and p->gelu_tanh set by the caller), without data or
 * layouts. 0, or -1 with the reason in d. */
int fs_prog_bind(struct prog *p, const uint32_t *nodes, uint32_t n, int64_t tokens, struct fs_diags *d);
void fs_prog_free(struct prog *p);
/* prog.c: the semantics of a node's op (sem.def), or NULL; the dump a graph
 * was read from, for diagnostics. */
const char *fs_prog_path(const struct fs_scan *s, const struct fs_graph *g);
/* layout.c: fs_prog_bind, then the op outputs' memory layouts (struct
 * ten's strided, order) as eager PyTorch lays them out, decided as at
 * `tokens` >= 2 (a program bound at 1 token takes those of one bound at 2
 * from the same nodes): the program every other file builds. */
int fs_prog_build(struct prog *p, const uint32_t *nodes, uint32_t n, int64_t tokens, struct fs_diags *d);
/* The n elements of t in row-major order (src) as its memory holds them (dst). */
void fs_ten_to_memory(const struct ten *t, const double *src, double *dst);

#endif
