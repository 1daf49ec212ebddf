/*
 * prog.h (private to fuse/): a fused region as a program of ops on bound
 * shapes, shared by the CPU executions (numerics.c) and the CUDA generator
 * (codegen.c). Values are numbered: the region's external inputs first,
 * then its ops in file order.
 */
#ifndef FUSESCAN_PROG_H
#define FUSESCAN_PROG_H

#include "fusescan/graph.h"
#include "fusescan/scan.h"

enum { MAX_RANK = 8, MAX_ARGS = 8 };
enum sem_kind { UN, BIN, TER, CMP, CAST, ID, RED, SOFTMAX, LAYERNORM, RMSNORM, VIEW, EXPAND, PERMUTE, SLICE, CAT };
enum mode { REF, UNFUSED, FUSED, EMULATED };

struct sem {
	const char *key;
	uint8_t kind, n_tensors;
	double (*f)(double a, double b, double c); /* the CPU executions */
	const char *expr;                            /* the same, for generated CUDA */
};

struct ten {
	uint8_t rank, dtype;
	int64_t shape[MAX_RANK];
	int64_t n;
	double *d;
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
	double eps;
	uint8_t keepdim;
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
	int gelu_tanh;       /* gelu is the tanh approximation */
	/* planted bugs (debug), applied to the fused side only */
	double plant_eps;    /* eps-like add literals and norm eps become this; 0 = off */
	uint8_t *narrow;     /* per op: computed at this narrow dtype (dropped cast), 0 = off */
};

#endif
