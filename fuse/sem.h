/*
 * sem.h (private to fuse/): what an op a fusible region can hold computes,
 * one row of sem.def per canonical op key. fs_sem_of turns a node's op key
 * into its row: the one place fuse/ reads an op key's text (and, for the
 * three questions of spelling below, an op's name).
 */
#ifndef FUSESCAN_SEM_H
#define FUSESCAN_SEM_H

#include "fusescan/graph.h"
#include "fusescan/scan.h"

enum sem_kind { UN, BIN, TER, CMP, CAST, ID, RED, SOFTMAX, LAYERNORM, RMSNORM, VIEW, EXPAND, PERMUTE, SLICE, CAT, STACK, PAD, TRIL, REPEAT, TILE, GEMM };
/* sem.def's identifier column: an op's meaning by id (SEM_add, SEM_gelu, ...).
 * fs_sem_of turns a node's op key into its row once; past it, fuse/ asks
 * the id, the kind or a flag, never the key's text. */
enum sem_id {
#define FS_SEM(id, key, kind, nt, flags, expr) SEM_##id,
#include "sem.def"
#undef FS_SEM
	SEM_COUNT
};

/* sem.def's flags column */
enum sem_flag { EXP_TANH = 1 << 0, LOG_OUT = 1 << 1, NK_WEIGHT = 1 << 2 };

struct sem {
	const char *key;
	uint8_t kind, n_tensors, flags;
	double (*f)(double a, double b, double c); /* the CPU executions */
	const char *expr;                            /* the same, for generated CUDA */
	enum sem_id id;
};

/* A node's semantics: its op's row of the table; max / min over a dim (a
 * tuple of values and indices) the values' reduction, amax / amin, whose
 * getitem 0 reads them. NULL for an op without semantics. */
const struct sem *fs_sem_of(const struct fs_scan *s, const struct fs_node *x);
/* Whether the node is max / min over a dim: a tuple (values, indices). */
int fs_sem_tuple_reduction(const struct fs_scan *s, const struct fs_node *x);
/* Whether the node calls the op of this row. */
int fs_sem_is(const struct fs_scan *s, const struct fs_node *x, enum sem_id id);

/* Of an op's spelling: a division with a rounding mode (div.Tensor_mode,
 * whose rounding_mode= the dump does not print); a copy whose dtype is
 * written as dtype= (_to_copy, or an overload dtype_layout); a getitem of
 * any namespace (written operator.getitem). */
int fs_sem_rounding_div(const struct fs_scan *s, const struct fs_node *x);
int fs_sem_copy_with_dtype(const struct fs_scan *s, const struct fs_node *x);
int fs_sem_getitem_call(const struct fs_scan *s, const struct fs_node *x);

#endif
