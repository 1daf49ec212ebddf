/*
 * numerics.c: the CPU executions of a region and the verdict (see
 * fusescan/numerics.h). Every value is a contiguous float64 array in the
 * node's dumped shape, bound to concrete sizes; an execution mode decides
 * where values are rounded to a narrower dtype.
 */
#include "fusescan/numerics.h"

#include "fusescan/mine.h"
#include "codegen.h"
#include "buckets.h"
#include "gemm.h"
#include "gpu.h"
#include "half.h"
#include "prog.h"
#include "rand.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FS_SQRT1_2 0.70710678118654752440
#define fs_exp exp
#define fs_tanh tanh
#define fs_quot(a, b) ((a) / (b))
#define fs_rsqrt(a) (1 / sqrt(a))
enum { FS_CPU_ELEMS = 1 << 25 }; /* the CPU executions' values where a GPU will check larger ones (a few seconds) */
#define FS_SEM(id, key, kind, nt, flags, expr)              \
	static double sem_##id(double a, double b, double c) \
	{                                                  \
		(void)a, (void)b, (void)c;                 \
		return (double)(expr);                     \
	}
#include "sem.def"
#undef FS_SEM
#define FS_SEM(id, key, kind, nt, flags, expr) {key, kind, nt, flags, sem_##id, #expr},
static const struct sem sems[] = {
#include "sem.def"
};
#undef FS_SEM

static double gelu_tanh(double a)
{
	return 0.5 * a * (1.0 + tanh(0.79788456080286535588 * (a + 0.044715 * a * a * a)));
}

/* ---- rounding -------------------------------------------------------------------- */

static double round_to(double v, uint8_t dt)
{
	switch (dt) {
	case FS_DT_F32:
		return (float)v;
	case FS_DT_BF16:
		return fs_bf16_value(fs_bf16_bits(v));
	case FS_DT_F16:
		return fs_f16_value(fs_f16_bits(v));
	case FS_DT_BOOL:
		return v != 0;
	case FS_DT_I64:
	case FS_DT_I32:
	case FS_DT_I16:
	case FS_DT_I8:
	case FS_DT_U8:
		return trunc(v);
	default:
		return v;
	}
}

static int is_float(uint8_t dt)
{
	return dt == FS_DT_F64 || dt == FS_DT_F32 || dt == FS_DT_F16 || dt == FS_DT_BF16;
}

/* ---- tensors -------------------------------------------------------------------------- */

/* Elements of a shape; -1 past `cap`. */
static int64_t numel(const int64_t *shape, uint8_t rank, int64_t cap)
{
	int64_t n = 1;
	for (uint8_t i = 0; i < rank; i++)
		if (__builtin_mul_overflow(n, shape[i], &n) || n > cap)
			return -1;
	return n;
}

static void unravel(int64_t i, const int64_t *shape, uint8_t rank, int64_t *idx)
{
	for (int k = rank - 1; k >= 0; k--) {
		idx[k] = shape[k] ? i % shape[k] : 0;
		i = shape[k] ? i / shape[k] : 0;
	}
}

/* Element of t at an output index of rank `orank`, broadcasting t (right-aligned). */
static double bcast(const struct ten *t, const int64_t *oidx, uint8_t orank)
{
	int64_t off = 0;
	for (uint8_t k = 0; k < t->rank; k++) {
		int64_t i = oidx[orank - t->rank + k];
		off = off * t->shape[k] + (t->shape[k] == 1 ? 0 : i);
	}
	return t->d[off];
}

/* ---- the program: region nodes with bound shapes ---------------------------------------- */

static int bound_type(const struct prog *p, const struct fs_type *t, struct ten *out)
{
	const struct fs_shape *sh = &p->s->types.shapes[t->shape];
	memset(out, 0, sizeof(*out));
	out->dtype = t->dtype;
	if (sh->kind == FS_SHAPE_SCALAR)
		return out->n = 1, 0;
	if (sh->kind != FS_SHAPE_DIMS || sh->rank > MAX_RANK)
		return -1;
	out->rank = (uint8_t)sh->rank;
	for (uint32_t i = 0; i < sh->rank; i++) {
		const struct fs_dim *dim = &p->s->types.dims[sh->dims + i];
		if (fs_dim_eval(&p->s->types, dim, p->bind, p->n_bind, &out->shape[i]) || out->shape[i] < 0)
			return -1;
		out->sym[i] = dim->expr >= 0 ? sh->dims + i + 1 : 0;
	}
	out->n = numel(out->shape, out->rank, (int64_t)1 << 40); /* beyond any GPU's memory */
	return out->n < 0 ? -1 : 0;
}

static const struct sem *sem_by_key(const char *key)
{
	for (size_t i = 0; i < sizeof(sems) / sizeof(sems[0]); i++)
		if (!strcmp(sems[i].key, key))
			return &sems[i];
	return NULL;
}

/* max / min over a dim: a tuple (values, indices) */
static int tuple_reduction(const struct fs_scan *s, const struct fs_node *x)
{
	const char *key = fs_scan_str(s, s->ops[x->op].key);
	return x->kind == FS_NODE_CALL && x->n_out == 2 && (!strcmp(key, "max") || !strcmp(key, "min"));
}

/* a node's semantics: its op's row of the table; max / min over a dim (a
 * tuple) the values' reduction, amax / amin, whose getitem 0 reads them */
static const struct sem *sem_of(const struct fs_scan *s, const struct fs_node *x)
{
	const char *key = fs_scan_str(s, s->ops[x->op].key);
	return tuple_reduction(s, x) ? sem_by_key(!strcmp(key, "max") ? "amax" : "amin") : sem_by_key(key);
}

static int32_t value_of(struct prog *p, uint32_t node, const struct fs_type *t)
{
	for (uint32_t i = 0; i < p->n_ops; i++)
		if (p->ops[i].node == node)
			return (int32_t)(p->n_in + i);
	for (uint32_t i = 0; i < p->n_in; i++)
		if (p->in_node[i] == node)
			return (int32_t)i;
	if (p->n_ops)
		return -1; /* inputs are all known before the first op: values would shift */
	p->in = fs_xrealloc(p->in, (p->n_in + 1) * sizeof(*p->in));
	p->in_node = fs_xrealloc(p->in_node, (p->n_in + 1) * sizeof(uint32_t));
	const struct fs_node *x = &p->g->nodes[node];
	const struct fs_type *tt = x->kind == FS_NODE_CALL && x->n_out == 1 ? &p->g->types[x->out] : t;
	if (bound_type(p, tt, &p->in[p->n_in]) && bound_type(p, t, &p->in[p->n_in]))
		return -1;
	p->in_node[p->n_in] = node;
	return (int32_t)p->n_in++;
}

/* Integer literals of a list argument (or one int) into op->ints. */
static int ints_of(const struct fs_graph *g, uint32_t a, struct op *op)
{
	const struct fs_arg *x = &g->args[a];
	if (x->kind == FS_ARG_INT) {
		op->ints[op->n_ints++] = x->i;
		return 0;
	}
	if (x->kind != FS_ARG_LIST && x->kind != FS_ARG_TUPLE)
		return -1;
	for (uint32_t c = a + 1; c < a + x->span; c += g->args[c].span) {
		if (g->args[c].kind != FS_ARG_INT || op->n_ints >= MAX_RANK)
			return -1;
		op->ints[op->n_ints++] = g->args[c].i;
	}
	return 0;
}

static const char *fail_at(struct prog *p, uint32_t node, const char *why, char *buf, size_t n)
{
	snprintf(buf, n, "%%%s (%s): %s", fs_scan_str(p->s, p->g->nodes[node].name),
		 fs_scan_str(p->s, p->s->ops[p->g->nodes[node].op].target), why);
	return buf;
}

/* A positional argument of a node. */
struct parg {
	uint32_t a;       /* index into g->args */
	int32_t value;    /* a value (input or op), else -1 */
	double lit;       /* a number (NAN for None and others) */
	uint8_t none;
	uint8_t sym;      /* a SymInt (a size computed in the graph) */
};

/* A tensor value, not a SymInt / Python number the graph computes. Names in
 * a list print bare, without their type: the node's own type says. */
static int tensor_arg(const struct fs_graph *g, uint32_t a)
{
	if (g->args[a].kind != FS_ARG_NODE)
		return 0;
	const struct fs_node *x = &g->nodes[g->args[a].node];
	uint8_t dt = x->kind == FS_NODE_EXTERN || !x->n_out ? g->args[a].type.dtype : g->types[x->out].dtype;
	return fs_dtype_size((enum fs_dtype)dt) > 0;
}

static double number(const struct fs_arg *y)
{
	return y->kind == FS_ARG_INT || y->kind == FS_ARG_BOOL ? (double)y->i : y->kind == FS_ARG_FLOAT ? y->f : NAN;
}

/* An elementwise op's literal operand k that the dump leaves out or gives
 * as None: the schema's default (torch.export omits a trailing positional
 * argument at its default); NAN where there is none. */
static double default_literal(const char *key, uint32_t k)
{
	if (!strcmp(key, "clamp")) /* clamp(x, min = None, max = None) */
		return k == 1 ? -INFINITY : INFINITY;
	if (!strcmp(key, "softplus")) /* softplus(x, beta = 1, threshold = 20) */
		return k == 1 ? 1 : 20;
	if (!strcmp(key, "hardtanh")) /* hardtanh(x, min_val = -1, max_val = 1) */
		return k == 1 ? -1 : 1;
	if (!strcmp(key, "leaky_relu")) /* leaky_relu(x, negative_slope = 0.01) */
		return 0.01;
	return NAN;
}

/* The non-operand arguments of each kind (dims, bounds, pads, repeats) into
 * op->ints / eps, and the operands of those that take lists or optional
 * tensors. NULL, or why the node cannot be executed. */
typedef const char *arg_rule(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n);

static const char *args_reduction(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	const struct fs_graph *g = p->g;
	if (np > 1 && ints_of(g, pa[1].a, op))
		return fail_at(p, node, "reduction dims are not integers", buf, n);
	if (op->sem->kind == RED && np > 2 && g->args[pa[2].a].kind == FS_ARG_BOOL)
		op->keepdim = (uint8_t)g->args[pa[2].a].i;
	return NULL;
}

static const char *args_permute(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	const struct fs_graph *g = p->g;
	if ((np > 1 && ints_of(g, pa[1].a, op)) || (np > 2 && ints_of(g, pa[2].a, op)))
		return fail_at(p, node, "dims are not integers", buf, n);
	/* two dims read as transpose(a, b): permute([0, 1]) of a matrix is transpose(0, 0) */
	if (!strcmp(op->sem->key, "permute") && op->n_ints == 2 && (op->ints[0] == 0 || op->ints[0] == -2))
		op->ints[1] = op->ints[0];
	return NULL;
}

/* slice(x, dim = 0, start = 0, end = MAX, step = 1) */
static const char *args_slice(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	const struct fs_graph *g = p->g;
	op->n_ints = 4;
	op->ints[0] = 0, op->ints[1] = 0, op->ints[2] = INT64_MAX, op->ints[3] = 1;
	for (uint32_t k = 1; k < np && k < 5; k++)
		if (g->args[pa[k].a].kind == FS_ARG_INT)
			op->ints[k - 1] = g->args[pa[k].a].i;
		else if (pa[k].sym && k == 3)
			op->ints[2] = INT64_MAX; /* a size as the end: the output shape bounds it */
		else if (!pa[k].none)
			return fail_at(p, node, "slice bounds are not integers", buf, n);
	return NULL;
}

/* cat([a, b, ...], dim = 0); stack the same along a new dim */
static const char *args_cat(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	const struct fs_graph *g = p->g;
	if (!np || (g->args[pa[0].a].kind != FS_ARG_LIST && g->args[pa[0].a].kind != FS_ARG_TUPLE))
		return fail_at(p, node, "cat without a list", buf, n);
	for (uint32_t c = pa[0].a + 1; c < pa[0].a + g->args[pa[0].a].span; c += g->args[c].span) {
		int32_t v = tensor_arg(g, c) ? value_of(p, g->args[c].node, &g->args[c].type) : -1;
		if (v < 0 || op->n_src >= MAX_ARGS)
			return fail_at(p, node, "cat of something else than values", buf, n);
		op->src[op->n_src++] = v;
	}
	op->ints[op->n_ints++] = np > 1 && g->args[pa[1].a].kind == FS_ARG_INT ? g->args[pa[1].a].i : 0;
	return NULL;
}

/* pad(x, pads, mode = "constant", value = None), constant_pad_nd(x, pads, value = 0):
 * pads from the last dim on, (before, after) pairs; the output's shape gives the afters */
static const char *args_pad(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	const struct fs_graph *g = p->g;
	int nd = !strcmp(op->sem->key, "constant_pad_nd");
	const struct fs_arg *l = np > 1 ? &g->args[pa[1].a] : NULL;
	if (!l || (l->kind != FS_ARG_LIST && l->kind != FS_ARG_TUPLE))
		return fail_at(p, node, "a pad without its list of pads", buf, n);
	op->n_ints = op->out.rank;
	uint32_t e = 0;
	for (uint32_t c = pa[1].a + 1; c < pa[1].a + l->span; c += g->args[c].span, e++) {
		if (e / 2 >= op->out.rank)
			return fail_at(p, node, "more pads than dims", buf, n);
		if (e % 2 == 0 && (g->args[c].kind != FS_ARG_INT || g->args[c].i < 0))
			return fail_at(p, node, "a pad before a dim that is not a number at least 0", buf, n);
		if (e % 2 == 0)
			op->ints[op->out.rank - 1 - e / 2] = g->args[c].i;
	}
	const struct fs_arg *mode = !nd && np > 2 ? &g->args[pa[2].a] : NULL;
	if (mode && !(mode->kind == FS_ARG_STR && !strcmp(fs_scan_str(p->s, mode->text), "constant")))
		return fail_at(p, node, "a pad other than constant (reflect, replicate, circular)", buf, n);
	uint32_t at = nd ? 2 : 3;
	op->eps = at < np && !isnan(pa[at].lit) ? pa[at].lit : 0;
	return NULL;
}

/* repeat_interleave(x, repeats, dim, output_size = None): each element `repeats` times along dim */
static const char *args_repeat(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	const struct fs_graph *g = p->g;
	if (np < 3 || g->args[pa[1].a].kind != FS_ARG_INT || g->args[pa[1].a].i < 1 || g->args[pa[2].a].kind != FS_ARG_INT)
		return fail_at(p, node, "repeat_interleave other than a number of repeats along a dim", buf, n);
	op->ints[op->n_ints++] = g->args[pa[2].a].i;
	op->ints[op->n_ints++] = g->args[pa[1].a].i;
	return NULL;
}

/* repeat(x, repeats): the tensor tiled, repeats[k] copies along dim k */
static const char *args_tile(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	if (np < 2 || ints_of(p->g, pa[1].a, op))
		return fail_at(p, node, "repeat without a list of integer repeats", buf, n);
	return NULL;
}

/* tril / triu(x, diagonal = 0) */
static const char *args_tril(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	(void)node, (void)buf, (void)n;
	op->ints[op->n_ints++] = np > 1 && p->g->args[pa[1].a].kind == FS_ARG_INT ? p->g->args[pa[1].a].i : 0;
	return NULL;
}

/* layer_norm(x, normalized_shape, w, b, eps) */
static const char *args_layernorm(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	if (np < 2 || pa[0].value < 0 || ints_of(p->g, pa[1].a, op))
		return fail_at(p, node, "layer_norm without a value and a normalized shape", buf, n);
	op->src[op->n_src++] = pa[0].value;
	for (uint32_t k = 2; k < 4; k++) /* args[0] / args[1]: weight, bias (-1 when None) */
		if (k < np && pa[k].value >= 0) {
			op->args[k - 2] = (struct arg){(int8_t)op->n_src, 0};
			op->src[op->n_src++] = pa[k].value;
		} else
			op->args[k - 2] = (struct arg){-1, k == 2 ? 1.0 : 0.0};
	op->n_args = 2;
	op->eps = np > 4 && !isnan(pa[4].lit) ? pa[4].lit : 1e-5;
	return NULL;
}

/* rms_norm(x, weight, eps) */
static const char *args_rmsnorm(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	if (np < 3 || pa[0].value < 0 || pa[1].value < 0 || isnan(pa[2].lit))
		return fail_at(p, node, "rms norm without a value, a weight and an eps", buf, n);
	op->src[op->n_src++] = pa[0].value;
	op->args[0] = (struct arg){(int8_t)op->n_src, 0};
	op->src[op->n_src++] = pa[1].value;
	op->args[1] = (struct arg){-1, 0.0};
	op->n_args = 2;
	op->n_ints = 1; /* normalise the last dim */
	op->eps = pa[2].lit;
	return NULL;
}

/* linear(x, w[N, K], bias = None); mm / bmm / matmul(a, b); addmm(bias, a, b) */
static const char *args_gemm(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, char *buf, size_t n)
{
	int addmm = !strcmp(op->sem->key, "addmm"), linear = (op->sem->flags & NK_WEIGHT) != 0;
	uint32_t a0 = addmm ? 1 : 0, most = addmm || linear ? 3 : 2;
	if (np < a0 + 2 || pa[a0].value < 0 || pa[a0 + 1].value < 0)
		return fail_at(p, node, "a matrix product without two values", buf, n);
	if (np > most)
		return fail_at(p, node, "a matrix product with arguments beyond its operands and bias (beta, alpha)", buf, n);
	op->src[op->n_src++] = pa[a0].value;
	op->src[op->n_src++] = pa[a0 + 1].value;
	uint32_t b = addmm ? 0 : 2; /* the bias */
	if ((addmm || linear) && b < np && pa[b].value >= 0)
		op->src[op->n_src++] = pa[b].value;
	else if ((addmm || linear) && b < np && !pa[b].none)
		return fail_at(p, node, "a matrix product's bias is neither a value nor None", buf, n);
	op->ints[op->n_ints++] = linear; /* b is [N, K] */
	return NULL;
}

/* kinds whose arguments are their operands alone (elementwise, views, expand) have none */
static arg_rule *const arg_rules[GEMM + 1] = {
	[RED] = args_reduction, [SOFTMAX] = args_reduction, [PERMUTE] = args_permute, [SLICE] = args_slice,
	[CAT] = args_cat,       [STACK] = args_cat,         [PAD] = args_pad,         [REPEAT] = args_repeat,
	[TILE] = args_tile,     [TRIL] = args_tril,         [LAYERNORM] = args_layernorm, [RMSNORM] = args_rmsnorm,
	[GEMM] = args_gemm,
};

/* One region node -> op. NULL, or the reason it cannot be executed. */
static const char *build_op(struct prog *p, uint32_t node, struct op *op, char *buf, size_t n)
{
	const struct fs_graph *g = p->g;
	const struct fs_node *x = &g->nodes[node];
	memset(op, 0, sizeof(*op));
	op->node = node;
	if (x->kind != FS_NODE_CALL || (x->n_out != 1 && !tuple_reduction(p->s, x)))
		return fail_at(p, node, "not a single-output op", buf, n);
	op->sem = sem_of(p->s, x);
	if (op->sem && !strcmp(op->sem->key, "getitem") &&
	    (x->n_args != 2 || g->args[x->args].kind != FS_ARG_NODE || !tuple_reduction(p->s, &g->nodes[g->args[x->args].node]) ||
	     g->args[x->args + 1].kind != FS_ARG_INT || g->args[x->args + 1].i != 0))
		return fail_at(p, node, "an element of a tuple other than the values of a max or min over a dim", buf, n);
	if (!op->sem)
		return fail_at(p, node, "no semantics for this op (fuse/sem.def)", buf, n);
	if (bound_type(p, &g->types[x->out], &op->out))
		return fail_at(p, node, "output shape cannot be bound to sizes", buf, n);
	struct parg pa[MAX_ARGS];
	uint32_t np = 0;
	for (uint32_t a = x->args; a < x->args + x->n_args && np < MAX_ARGS; a += g->args[a].span) {
		const struct fs_arg *y = &g->args[a];
		pa[np] = (struct parg){a, -1, number(y), y->kind == FS_ARG_NONE, y->kind == FS_ARG_NODE && !tensor_arg(g, a)};
		if (tensor_arg(g, a) && (pa[np].value = value_of(p, y->node, &y->type)) < 0)
			return fail_at(p, node, "an input shape cannot be bound to sizes", buf, n);
		np++;
	}
	uint8_t kind = op->sem->kind;
	/* the operands: values become tensor sources, numbers literals */
	uint32_t n_operands = kind == UN || kind == BIN || kind == TER || kind == CMP ? op->sem->n_tensors
			      : kind == LAYERNORM || kind == RMSNORM || kind == CAT || kind == STACK || kind == GEMM ? 0 : 1;
	for (uint32_t k = 0; k < n_operands; k++) {
		double lit = k < np ? pa[k].lit : NAN;
		if (k >= np || pa[k].none)
			lit = default_literal(op->sem->key, k);
		if (k < np && pa[k].value >= 0) {
			op->args[op->n_args++] = (struct arg){(int8_t)op->n_src, 0};
			op->src[op->n_src++] = pa[k].value;
		} else if (!isnan(lit) && (kind == UN || kind == BIN || kind == TER || kind == CMP))
			op->args[op->n_args++] = (struct arg){-1, lit};
		else
			return fail_at(p, node, "an operand is neither a value nor a number", buf, n);
	}
	if (!strcmp(op->sem->key, "bitwise_not") && (!op->n_src || fs_prog_value(p, op->src[0])->dtype != FS_DT_BOOL))
		return fail_at(p, node, "bitwise_not of other than booleans (of integers: ~a)", buf, n);
	if (strstr(fs_scan_str(p->s, p->s->ops[x->op].target), "_mode")) /* div.Tensor_mode: the dump drops rounding_mode= */
		return fail_at(p, node, "a division with a rounding mode the dump does not print", buf, n);
	arg_rule *r = arg_rules[kind];
	return r ? r(p, node, op, pa, np, buf, n) : NULL;
}

/* ---- shape checks: a dump may say anything; execution only reads in bounds -------------- */

/* t broadcasts to out (right-aligned, each dim equal or 1) */
static int broadcasts(const struct ten *t, const struct ten *out)
{
	if (t->rank > out->rank)
		return 0;
	for (uint8_t k = 0; k < t->rank; k++)
		if (t->shape[k] != 1 && t->shape[k] != out->shape[out->rank - t->rank + k])
			return 0;
	return 1;
}

static int same_shape(const struct ten *a, const struct ten *b)
{
	return a->rank == b->rank && !memcmp(a->shape, b->shape, a->rank * sizeof(int64_t));
}

static int dim_ok(int64_t d, uint8_t rank)
{
	d = d < 0 ? d + rank : d;
	return d >= 0 && d < rank;
}

/* The shape rule of each kind: NULL where the output and operands agree,
 * else what contradicts. in: the first operand (NULL for none). */
typedef const char *shape_rule(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out);

static const char *shapes_broadcast(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)in;
	for (uint32_t k = 0; k < op->n_src; k++)
		if (!broadcasts(fs_prog_value(p, op->src[k]), out))
			return "an operand does not broadcast to the output shape";
	return NULL;
}

static const char *shapes_reduction(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)p;
	uint8_t red[MAX_RANK] = {0};
	int64_t kept = 1;
	for (uint32_t k = 0; k < op->n_ints; k++) {
		if (!dim_ok(op->ints[k], in->rank))
			return "a reduction dim is out of range";
		red[fs_dim_at(op->ints[k], in->rank)] = 1;
	}
	for (uint8_t k = 0; k < in->rank; k++)
		kept *= op->n_ints && !red[k] ? in->shape[k] : 1;
	return kept == out->n ? NULL : "the reduction's output shape does not match its input";
}

static const char *shapes_softmax(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)p;
	return same_shape(in, out) && (!op->n_ints || dim_ok(op->ints[0], in->rank)) ? NULL : "softmax changes the shape";
}

static const char *shapes_norm(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	if (!same_shape(in, out) || op->n_ints > in->rank)
		return "the norm changes the shape";
	for (uint32_t k = 0; k < 2; k++)
		if (op->args[k].ten >= 0 && !broadcasts(fs_prog_value(p, op->src[op->args[k].ten]), out))
			return "a norm weight does not broadcast to the output";
	return NULL;
}

static const char *shapes_view(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)p, (void)op;
	return in->n == out->n ? NULL : "the view changes the number of elements";
}

static const char *shapes_permute(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)p;
	int64_t perm[MAX_RANK];
	uint8_t seen[MAX_RANK] = {0};
	if (in->rank != out->rank)
		return "a permutation changes the rank";
	if (fs_op_perm(op, out->rank, perm))
		return op->n_ints == 2 ? "a transposed dim is out of range" : "not a permutation";
	for (uint8_t k = 0; k < out->rank; k++)
		if (seen[perm[k]]++)
			return "not a permutation";
	for (uint8_t k = 0; k < out->rank; k++)
		if (out->shape[k] != in->shape[perm[k]])
			return "the permuted shape does not match";
	return NULL;
}

static const char *shapes_slice(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)p;
	if (in->rank != out->rank || !dim_ok(op->ints[0], in->rank) || op->ints[3] < 1)
		return "a slice of another rank, dim or step";
	int64_t d = fs_dim_at(op->ints[0], in->rank), len = in->shape[d];
	int64_t start = op->ints[1] < 0 ? op->ints[1] + len : op->ints[1];
	start = start < 0 ? 0 : start > len ? len : start;
	for (uint8_t k = 0; k < in->rank; k++)
		if (k != d && in->shape[k] != out->shape[k])
			return "a slice changes another dim";
	return out->shape[d] == 0 || start + (out->shape[d] - 1) * op->ints[3] < len ? NULL : "the slice reads past its input";
}

static const char *shapes_pad(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)p;
	if (in->rank != out->rank)
		return "a pad of another rank";
	for (uint8_t k = 0; k < in->rank; k++)
		if (op->ints[k] < 0 || out->shape[k] < in->shape[k] + op->ints[k])
			return "the padded shape does not hold its input";
	return NULL;
}

static const char *shapes_tril(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)p, (void)op;
	return in->rank >= 2 && same_shape(in, out) ? NULL : "tril / triu of other than its input's shape (two dims at least)";
}

static const char *shapes_repeat(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)p;
	if (in->rank != out->rank || !dim_ok(op->ints[0], in->rank))
		return "repeat_interleave of another rank or dim";
	int64_t d = fs_dim_at(op->ints[0], in->rank);
	for (uint8_t k = 0; k < in->rank; k++)
		if (out->shape[k] != in->shape[k] * (k == d ? op->ints[1] : 1))
			return "repeat_interleave's output is not its input repeated";
	return NULL;
}

static const char *shapes_tile(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)p;
	if (op->n_ints != in->rank || in->rank != out->rank)
		return "a repeat that adds leading dims (more repeats than the input's dims)";
	for (uint8_t k = 0; k < in->rank; k++)
		if (op->ints[k] < 1 || out->shape[k] != in->shape[k] * op->ints[k])
			return "repeat's output is not its input tiled";
	return NULL;
}

static const char *shapes_stack(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)in;
	if (!dim_ok(op->ints[0], out->rank) || out->shape[fs_dim_at(op->ints[0], out->rank)] != op->n_src)
		return "the stack dim is out of range or not the number of parts";
	int64_t d = fs_dim_at(op->ints[0], out->rank);
	for (uint32_t k = 0; k < op->n_src; k++) {
		const struct ten *t = fs_prog_value(p, op->src[k]);
		if (t->rank + 1 != out->rank)
			return "a stack part of another rank";
		for (uint8_t j = 0; j < t->rank; j++)
			if (t->shape[j] != out->shape[j < d ? j : j + 1])
				return "a stack part differs from the output outside the stack dim";
	}
	return NULL;
}

static const char *shapes_cat(const struct prog *p, const struct op *op, const struct ten *in, const struct ten *out)
{
	(void)in;
	if (!dim_ok(op->ints[0], out->rank))
		return "the cat dim is out of range";
	int64_t d = fs_dim_at(op->ints[0], out->rank), total = 0;
	for (uint32_t k = 0; k < op->n_src; k++) {
		const struct ten *t = fs_prog_value(p, op->src[k]);
		if (t->rank != out->rank)
			return "a cat part of another rank";
		for (uint8_t j = 0; j < t->rank; j++)
			if (j != d && t->shape[j] != out->shape[j])
				return "a cat part differs outside the cat dim";
		total += t->shape[d];
	}
	return total == out->shape[d] ? NULL : "the cat parts do not add up to the output";
}

static const char *shapes_gemm(const struct prog *p, const struct op *op, const struct ten *a, const struct ten *out)
{
	const struct ten *b = fs_prog_value(p, op->src[1]);
	int64_t K = a->rank ? a->shape[a->rank - 1] : 0;
	if (op->ints[0]) { /* linear: x [.., K], w [N, K] -> [.., N] */
		if (!a->rank || b->rank != 2 || b->shape[1] != K || out->rank != a->rank || out->shape[out->rank - 1] != b->shape[0] ||
		    memcmp(out->shape, a->shape, (a->rank - 1) * sizeof(int64_t)))
			return "a linear's shapes do not match (x [.., K], weight [N, K], output [.., N])";
	} else {
		uint8_t r = a->rank > b->rank ? a->rank : b->rank;
		if (a->rank < 2 || b->rank < 2 || out->rank != r || b->shape[b->rank - 2] != K || out->shape[r - 2] != a->shape[a->rank - 2] ||
		    out->shape[r - 1] != b->shape[b->rank - 1])
			return "a matrix product's shapes do not match ([.., M, K] x [.., K, N] -> [.., M, N])";
		for (uint8_t d = 0; d + 2 < r; d++) { /* batch dims broadcast, right-aligned */
			int64_t da = d + a->rank >= r ? a->shape[d + a->rank - r] : 1, db = d + b->rank >= r ? b->shape[d + b->rank - r] : 1;
			if ((da != 1 && da != out->shape[d]) || (db != 1 && db != out->shape[d]))
				return "a matrix product's batch dims do not broadcast to its output";
		}
	}
	if (op->n_src > 2 && !broadcasts(fs_prog_value(p, op->src[2]), out))
		return "a matrix product's bias does not broadcast to its output";
	return NULL;
}

static shape_rule *const shape_rules[] = {
	[UN] = shapes_broadcast,   [BIN] = shapes_broadcast, [TER] = shapes_broadcast,   [CMP] = shapes_broadcast,
	[CAST] = shapes_broadcast, [ID] = shapes_broadcast,  [EXPAND] = shapes_broadcast, [RED] = shapes_reduction,
	[SOFTMAX] = shapes_softmax, [LAYERNORM] = shapes_norm, [RMSNORM] = shapes_norm,   [VIEW] = shapes_view,
	[PERMUTE] = shapes_permute, [SLICE] = shapes_slice,   [PAD] = shapes_pad,         [TRIL] = shapes_tril,
	[REPEAT] = shapes_repeat,  [TILE] = shapes_tile,     [STACK] = shapes_stack,     [CAT] = shapes_cat,
	[GEMM] = shapes_gemm,
};
_Static_assert(sizeof(shape_rules) / sizeof(shape_rules[0]) == GEMM + 1, "a shape rule for every kind");

static const char *check_shapes(const struct prog *p, const struct op *op)
{
	const struct ten *in = op->n_src ? fs_prog_value(p, op->src[0]) : NULL;
	return shape_rules[op->sem->kind](p, op, in, &op->out);
}

/* ---- execution -------------------------------------------------------------------------- */

static void exec_elementwise(const struct op *op, const struct ten *v, struct ten *out, int tanh_gelu)
{
	int64_t idx[MAX_RANK];
	double x[3] = {0, 0, 0};
	int gelu = tanh_gelu && !strcmp(op->sem->key, "gelu"); /* the dump omits approximate= */
	for (int64_t i = 0; i < out->n; i++) {
		unravel(i, out->shape, out->rank, idx);
		for (uint32_t k = 0; k < op->n_args && k < 3; k++)
			x[k] = op->args[k].ten < 0 ? op->args[k].lit : bcast(&v[op->src[op->args[k].ten]], idx, out->rank);
		out->d[i] = gelu ? gelu_tanh(x[0]) : op->sem->f(x[0], x[1], x[2]);
	}
}

/* A matrix product (shapes checked): out[.., m, n] = sum_k a[.., m, k] b[.., k, n]
 * (b[n, k] for a linear, the batch dims broadcast) + bias, accumulated in
 * double; each batch's b (not a linear's, already so) gathered as rows of K
 * first, so every dot product reads two contiguous rows. */
static void exec_gemm(const struct op *op, const struct ten *v, struct ten *out)
{
	const struct ten *a = &v[op->src[0]], *b = &v[op->src[1]];
	uint8_t r = out->rank;
	int64_t K = a->shape[a->rank - 1], N = out->shape[r - 1];
	int64_t M = op->ints[0] ? (N ? out->n / N : 0) : out->shape[r - 2], batches = M && N ? out->n / (M * N) : 0;
	double *bt = op->ints[0] ? NULL : fs_xmalloc((size_t)(N * K > 0 ? N * K : 1) * sizeof(double));
	int64_t idx[MAX_RANK];
	for (int64_t bi = 0; bi < batches; bi++) {
		int64_t ao = 0, bo = 0, as = 1, bs = 1; /* the batch's offsets into a and b */
		unravel(bi * M * N, out->shape, r, idx);
		for (int d = (int)r - 3; d >= 0 && !op->ints[0]; d--) {
			int da = d + a->rank - r, db = d + b->rank - r;
			if (da >= 0)
				ao += (a->shape[da] == 1 ? 0 : idx[d]) * as, as *= a->shape[da];
			if (db >= 0)
				bo += (b->shape[db] == 1 ? 0 : idx[d]) * bs, bs *= b->shape[db];
		}
		const double *A = a->d + ao * M * K, *B = b->d + bo * K * N, *W = op->ints[0] ? B : bt;
		for (int64_t k = 0; k < K && !op->ints[0]; k++)
			for (int64_t j = 0; j < N; j++)
				bt[j * K + k] = B[k * N + j];
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				const double *x = A + i * K, *w = W + j * K;
				double acc = 0;
				for (int64_t k = 0; k < K; k++)
					acc += x[k] * w[k];
				int64_t e = (bi * M + i) * N + j;
				if (op->n_src > 2) {
					unravel(e, out->shape, r, idx);
					acc += bcast(&v[op->src[2]], idx, r);
				}
				out->d[e] = acc;
			}
	}
	free(bt);
}

/* Reductions over ops->ints dims (all when none); the output keeps its dumped
 * shape. acc: the accumulator's dtype (F64: exact; narrow under the planted
 * dropped cast, as a kernel that forgot to widen accumulates). */
static void exec_reduce(const struct op *op, const struct ten *in, struct ten *out, uint8_t acc)
{
	uint8_t red[MAX_RANK] = {0};
	int64_t cnt = 1, idx[MAX_RANK];
	for (uint8_t k = 0; k < in->rank; k++)
		red[k] = op->n_ints == 0;
	for (uint32_t k = 0; k < op->n_ints; k++) {
		int64_t d = fs_dim_at(op->ints[k], in->rank);
		if (d >= 0 && d < in->rank)
			red[d] = 1;
	}
	for (uint8_t k = 0; k < in->rank; k++)
		cnt *= red[k] ? in->shape[k] : 1;
	const char *key = op->sem->key;
	int amax = !strcmp(key, "amax"), amin = !strcmp(key, "amin");
	for (int64_t i = 0; i < out->n; i++)
		out->d[i] = amax ? -INFINITY : amin ? INFINITY : 0.0;
	for (int64_t i = 0; i < in->n; i++) {
		unravel(i, in->shape, in->rank, idx);
		int64_t o = 0;
		for (uint8_t k = 0; k < in->rank; k++) /* kept dims in order; reduced ones drop or are 1 */
			if (!red[k])
				o = o * in->shape[k] + idx[k];
		double a = in->d[i], *r = &out->d[o];
		*r = amax ? (a > *r ? a : *r) : amin ? (a < *r ? a : *r) : round_to(*r + a, acc);
	}
	if (!strcmp(key, "mean"))
		for (int64_t i = 0; i < out->n; i++)
			out->d[i] /= (double)cnt;
}

/* softmax / log_softmax along one dim, layer_norm over the trailing dims. */
static void exec_rows(const struct op *op, const struct ten *v, struct ten *out)
{
	const struct ten *in = &v[op->src[0]];
	int norm = op->sem->kind == LAYERNORM || op->sem->kind == RMSNORM;
	int64_t d = norm ? in->rank - (int64_t)op->n_ints : fs_dim_at(op->n_ints ? op->ints[0] : -1, in->rank);
	int64_t inner = 1, len = 1, outer = 1;
	for (int64_t k = 0; k < in->rank; k++)
		*(k < d ? &outer : norm || k == d ? &len : &inner) *= in->shape[k];
	int logsm = (op->sem->flags & LOG_OUT) != 0;
	int64_t idx[MAX_RANK];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < inner; j++) {
			const double *x = in->d + o * len * inner + j;
			double *y = out->d + o * len * inner + j;
			if (op->sem->kind == SOFTMAX) {
				double mx = -INFINITY, sum = 0;
				for (int64_t t = 0; t < len; t++)
					mx = x[t * inner] > mx ? x[t * inner] : mx;
				for (int64_t t = 0; t < len; t++)
					sum += exp(x[t * inner] - mx);
				for (int64_t t = 0; t < len; t++)
					y[t * inner] = logsm ? x[t * inner] - mx - log(sum) : exp(x[t * inner] - mx) / sum;
				continue;
			}
			double mean = 0, var = 0;
			for (int64_t t = 0; t < len && op->sem->kind == LAYERNORM; t++)
				mean += x[t];
			mean /= (double)len;
			for (int64_t t = 0; t < len; t++)
				var += (x[t] - mean) * (x[t] - mean);
			double rs = 1.0 / sqrt(var / (double)len + op->eps);
			for (int64_t t = 0; t < len; t++) {
				unravel(o * len + t, out->shape, out->rank, idx);
				double w = op->args[0].ten < 0 ? op->args[0].lit : bcast(&v[op->src[op->args[0].ten]], idx, out->rank);
				double b = op->args[1].ten < 0 ? op->args[1].lit : bcast(&v[op->src[op->args[1].ten]], idx, out->rank);
				y[t] = (x[t] - mean) * rs * w + b;
			}
		}
}

/* Views and data movement: each output element read from its source element. */
static int exec_move(const struct op *op, const struct ten *v, struct ten *out)
{
	const struct ten *in = &v[op->src[0]];
	int64_t idx[MAX_RANK], src[MAX_RANK];
	uint8_t kind = op->sem->kind;
	if (kind == VIEW) {
		if (in->n != out->n)
			return -1;
		memcpy(out->d, in->d, (size_t)out->n * sizeof(double));
		return 0;
	}
	int64_t perm[MAX_RANK];
	if (kind == PERMUTE && fs_op_perm(op, out->rank, perm))
		return -1;
	int64_t sd = kind == SLICE || kind == CAT || kind == STACK || kind == REPEAT ? fs_dim_at(op->ints[0], out->rank) : 0;
	if ((kind == SLICE || kind == CAT || kind == STACK || kind == REPEAT) && (sd < 0 || sd >= out->rank))
		return -1;
	int64_t start = 0;
	if (kind == SLICE) {
		int64_t len = in->shape[sd];
		start = op->ints[1] < 0 ? op->ints[1] + len : op->ints[1];
		start = start < 0 ? 0 : start > len ? len : start;
	}
	for (int64_t i = 0; i < out->n; i++) {
		unravel(i, out->shape, out->rank, idx);
		const struct ten *t = in;
		memcpy(src, idx, sizeof(idx));
		if (kind == EXPAND || kind == ID || kind == CAST) {
			out->d[i] = bcast(in, idx, out->rank);
			continue;
		}
		if (kind == TRIL) { /* tril keeps j - i <= diagonal, triu j - i >= diagonal */
			int64_t above = idx[out->rank - 1] - idx[out->rank - 2] - op->ints[0];
			out->d[i] = (strcmp(op->sem->key, "triu") ? above <= 0 : above >= 0) ? in->d[i] : 0;
			continue;
		}
		if (kind == PAD) {
			int inside = 1;
			for (uint8_t k = 0; k < out->rank; k++) {
				src[k] = idx[k] - op->ints[k];
				inside &= src[k] >= 0 && src[k] < in->shape[k];
			}
			if (!inside) {
				out->d[i] = op->eps;
				continue;
			}
		}
		if (kind == PERMUTE)
			for (int64_t k = 0; k < out->rank; k++)
				src[perm[k]] = idx[k];
		else if (kind == SLICE)
			src[sd] = start + idx[sd] * op->ints[3];
		else if (kind == REPEAT)
			src[sd] = idx[sd] / op->ints[1];
		else if (kind == TILE)
			for (uint8_t k = 0; k < out->rank; k++)
				src[k] = idx[k] % in->shape[k];
		else if (kind == STACK) { /* part idx[sd], the other dims in order */
			t = &v[op->src[idx[sd]]];
			for (int64_t k = sd; k + 1 < out->rank; k++)
				src[k] = idx[k + 1];
		} else if (kind == CAT) { /* find the part holding idx[sd] */
			int64_t at = idx[sd];
			uint32_t part = 0;
			while (part + 1 < op->n_src && at >= v[op->src[part]].shape[sd])
				at -= v[op->src[part++]].shape[sd];
			t = &v[op->src[part]];
			src[sd] = at;
		}
		int64_t off = 0;
		for (uint8_t k = 0; k < t->rank; k++)
			off = off * t->shape[k] + src[k];
		out->d[i] = t->d[off];
	}
	return 0;
}

/* Where each op's result is rounded in each mode (see numerics.h). The planted
 * dropped cast: the region's first widening cast becomes a no-op and the ops
 * after it, up to the next cast, compute at the narrow dtype. */
static uint8_t round_dtype(const struct prog *p, uint32_t i, enum mode m, const uint8_t *narrow)
{
	const struct op *op = &p->ops[i];
	uint8_t dt = op->out.dtype;
	if (!is_float(dt) || m == UNFUSED)
		return dt;
	if (m == REF)
		return FS_DT_F64;
	if (narrow[i])
		return narrow[i];
	if (m == EMULATED || op->sem->kind == CAST || p->is_output[i])
		return dt;
	return dt == FS_DT_F64 ? FS_DT_F64 : FS_DT_F32;
}

static void plan_plants(const struct prog *p, const struct fs_numerics_opts *o, uint8_t *narrow, int32_t *dropped)
{
	*dropped = -1;
	if (!o->plant_drop_cast)
		return;
	for (uint32_t i = 0; i < p->n_ops && *dropped < 0; i++) {
		const struct op *op = &p->ops[i];
		const struct ten *in = op->n_src ? (op->src[0] < (int32_t)p->n_in ? &p->in[op->src[0]] : &p->ops[op->src[0] - p->n_in].out) : NULL;
		if (op->sem->kind == CAST && in && fs_dtype_size(op->out.dtype) > fs_dtype_size(in->dtype) && is_float(in->dtype))
			*dropped = (int32_t)i, narrow[i] = in->dtype;
	}
	for (uint32_t i = *dropped < 0 ? p->n_ops : (uint32_t)*dropped + 1; i < p->n_ops; i++) {
		const struct op *op = &p->ops[i];
		if (op->sem->kind == CAST)
			continue;
		for (uint32_t k = 0; k < op->n_src; k++)
			if (op->src[k] >= (int32_t)p->n_in && narrow[op->src[k] - p->n_in])
				narrow[i] = narrow[op->src[k] - p->n_in];
	}
}

static int run_mode(const struct prog *p, enum mode m, const struct fs_numerics_opts *o, const uint8_t *narrow,
		    struct ten *vals)
{
	for (uint32_t i = 0; i < p->n_ops; i++) {
		const struct op *op = &p->ops[i];
		struct ten *out = &vals[p->n_in + i];
		*out = op->out;
		if (op->elided)
			continue;
		out->d = fs_xmalloc((size_t)(out->n ? out->n : 1) * sizeof(double));
		for (int64_t e = 0; e < out->n; e++)
			out->d[e] = NAN; /* poison: every element must be written */
		struct op planted = *op;
		int plant = m == FUSED || m == EMULATED;
		if (plant && o->plant_eps > 0 && !strcmp(op->sem->key, "add"))
			for (uint32_t k = 0; k < planted.n_args; k++)
				if (planted.args[k].ten < 0 && planted.args[k].lit > 0 && planted.args[k].lit < 1e-2)
					planted.args[k].lit = o->plant_eps;
		if (plant && o->plant_eps > 0 && (op->sem->kind == LAYERNORM || op->sem->kind == RMSNORM))
			planted.eps = o->plant_eps;
		switch (op->sem->kind) {
		case UN:
		case BIN:
		case TER:
		case CMP:
			exec_elementwise(&planted, vals, out, o->gelu_tanh);
			break;
		case RED:
			exec_reduce(&planted, &vals[op->src[0]], out, plant && narrow[i] ? narrow[i] : FS_DT_F64);
			break;
		case SOFTMAX:
		case LAYERNORM:
		case RMSNORM:
			exec_rows(&planted, vals, out);
			break;
		case GEMM:
			exec_gemm(&planted, vals, out);
			break;
		default: /* CAST, ID, VIEW, EXPAND, PERMUTE, SLICE, CAT, STACK, PAD, TRIL, REPEAT, TILE */
			if (exec_move(&planted, vals, out))
				return -1;
		}
		uint8_t dt = round_dtype(p, i, m, narrow); /* a dropped cast rounds to its narrow input: a no-op */
		for (int64_t e = 0; e < out->n; e++)
			out->d[e] = round_to(out->d[e], dt);
	}
	return 0;
}

/* ---- inputs, errors, verdict ---------------------------------------------------------- */

/* Input `index` as the GPU draws it (rand.h). */
static void fill_random(struct ten *t, uint64_t seed, uint32_t index)
{
	uint64_t stream = fs_rand_stream(seed, index);
	enum fs_rand_kind kind = fs_rand_kind_of(t->dtype);
	for (int64_t i = 0; i < t->n; i++)
		t->d[i] = round_to(fs_rand(stream, i, kind), t->dtype);
}

static void errors_of(const struct prog *p, const struct ten *got, const struct ten *ref, struct fs_errors *e)
{
	double se = 0, sr = 0;
	memset(e, 0, sizeof(*e));
	for (uint32_t i = 0; i < p->n_ops; i++) {
		if (!p->is_output[i])
			continue;
		const struct ten *a = &got[p->n_in + i], *r = &ref[p->n_in + i];
		for (int64_t k = 0; k < a->n; k++) {
			double x = a->d[k], y = r->d[k];
			if (isnan(x) && !isnan(y)) {
				e->unwritten++; /* poison left (or a NaN computed where the reference has a number) */
				e->nonfinite++;
				continue;
			}
			if (!isfinite(x)) {
				e->nonfinite += isfinite(y) != 0;
				continue;
			}
			double d = fabs(x - y), rel = d / (fabs(y) > 1e-6 ? fabs(y) : 1e-6);
			e->max_abs = d > e->max_abs ? d : e->max_abs;
			e->max_rel = rel > e->max_rel ? rel : e->max_rel;
			se += d * d, sr += y * y;
		}
	}
	e->nrmse = sr > 0 ? sqrt(se / sr) : sqrt(se);
}

/* fused <= k x unfused + tol on max abs error; NaN, Inf or unwritten never pass */
static void check(const struct fs_numerics *r, const struct fs_errors *unfused, const struct fs_errors *fused, struct fs_check *c)
{
	double bound = r->k * unfused->max_abs + r->tol;
	c->min_tol = fused->max_abs > r->k * unfused->max_abs ? fused->max_abs - r->k * unfused->max_abs : 0;
	c->verdict = fused->nonfinite || fused->unwritten || fused->max_abs > bound ? FS_VERDICT_FAIL : FS_VERDICT_PASS;
	c->why[0] = '\0';
	if (fused->nonfinite || fused->unwritten)
		snprintf(c->why, sizeof(c->why), "%llu NaN / Inf or unwritten elements in the fused result",
			 (unsigned long long)(fused->nonfinite + fused->unwritten));
	else if (c->verdict == FS_VERDICT_FAIL)
		snprintf(c->why, sizeof(c->why), "fused max abs error %.3g > %.0f x unfused %.3g + %.0e", fused->max_abs, r->k,
			 unfused->max_abs, r->tol);
}

/* The one rule: the verdict is the worst check of every plan the run would
 * use, each failure named once (the first found: the run's own checks, a
 * compile or GPU error, the GPU reference against the CPU's, the plans
 * fs_gpu_run found failing, then each bucket's); where every plan
 * passes, a fused plan slower than the unfused chain at the run's own size
 * (side by side, the speedup's interval wholly below 1) is correct but not
 * profitable. */
static void settle(struct fs_numerics *r)
{
	const struct fs_check *c = r->cpu_ran && r->cpu_check.verdict == FS_VERDICT_FAIL ? &r->cpu_check
				 : r->gpu_ran && r->gpu_check.verdict == FS_VERDICT_FAIL ? &r->gpu_check
											  : NULL;
	r->verdict = FS_VERDICT_FAIL;
	if (c) {
		snprintf(r->why, sizeof(r->why), "%s check: %s", c == &r->cpu_check ? "the CPU" : "the GPU", c->why);
		return;
	}
	if (r->gpu_failed) {
		snprintf(r->why, sizeof(r->why), "the kernels' compile or GPU run failed: %.250s", r->kernel_error);
		return;
	}
	/* the reference kernel is generated like the fused one: the CPU's float64 reference is the independent check of it */
	if (r->ref_checked && (r->ref_vs_cpu.nonfinite || r->ref_vs_cpu.unwritten || r->ref_vs_cpu.nrmse > 1e-9)) {
		snprintf(r->why, sizeof(r->why), "the GPU's float64 reference disagrees with the CPU's (nrmse %.3g, %llu non-finite or unwritten)",
			 r->ref_vs_cpu.nrmse, (unsigned long long)(r->ref_vs_cpu.nonfinite + r->ref_vs_cpu.unwritten));
		return;
	}
	if (r->plan_failed[0]) {
		snprintf(r->why, sizeof(r->why), "%s", r->plan_failed);
		return;
	}
	for (uint32_t i = 0; i < r->n_buckets; i++)
		if ((r->buckets[i].tuned && !r->buckets[i].passed) || r->buckets[i].run_failed) {
			snprintf(r->why, sizeof(r->why), "the bucket of %lld tokens: %.250s", (long long)r->buckets[i].tokens, r->buckets[i].error);
			return;
		}
	r->verdict = FS_VERDICT_PASS;
	r->why[0] = '\0';
	if (r->gpu_ran && r->speedup_hi < 1.0) {
		r->verdict = FS_VERDICT_NOT_PROFITABLE;
		snprintf(r->why, sizeof(r->why), "the fused plan is slower than the unfused chain here: %.4f against %.4f ms, speedup %.3fx "
						 "[%.3f, %.3f]%s",
			 r->fused_ms, r->unfused_ms, r->speedup, r->speedup_lo, r->speedup_hi, r->timed_apart ? " (timed apart)" : "");
	}
}

const char *fs_verdict_name(enum fs_verdict v)
{
	return v == FS_VERDICT_PASS ? "pass" : v == FS_VERDICT_FAIL ? "fail" : "correct, not profitable";
}

const char *fs_triage_name(enum fs_triage t)
{
	return t == FS_TRIAGE_ROUNDING ? "rounding" : t == FS_TRIAGE_BUG ? "bug" : "none";
}

static void describe(const struct prog *p, struct fs_numerics *r)
{
	size_t k = 0;
	char buf[64];
	int arrow = 0;
	for (uint32_t i = 0; i < p->n_in + p->n_ops && k < sizeof(r->shapes); i++) {
		const struct ten *t = i < p->n_in ? &p->in[i] : &p->ops[i - p->n_in].out;
		if (i >= p->n_in && !p->is_output[i - p->n_in])
			continue;
		size_t b = 0;
		buf[0] = '\0';
		for (uint8_t d = 0; d < t->rank && b < sizeof(buf); d++)
			b += (size_t)snprintf(buf + b, sizeof(buf) - b, "%s%lld", d ? "x" : "", (long long)t->shape[d]);
		uint32_t node = i < p->n_in ? p->in_node[i] : p->ops[i - p->n_in].node;
		const char *dt = fs_dtype_name((enum fs_dtype)t->dtype);
		const char *sep = i >= p->n_in && !arrow ? " -> " : i ? ", " : "";
		arrow |= i >= p->n_in;
		k += (size_t)snprintf(r->shapes + k, sizeof(r->shapes) - k, "%s%%%s %s %s", sep,
				      fs_scan_str(p->s, p->g->nodes[node].name), t->rank ? buf : "scalar",
				      strncmp(dt, "torch.", 6) ? dt : dt + 6);
	}
	k = 0;
	for (uint32_t i = 0; i < p->n_bind && k < sizeof(r->binding); i++)
		k += (size_t)snprintf(r->binding + k, sizeof(r->binding) - k, "%s%s=%lld", i ? " " : "",
				      fs_scan_str(p->s, p->bind[i].sym), (long long)p->bind[i].value);
}

/* The dump a graph was read from, for diagnostics. */
static const char *path_of(const struct fs_scan *s, const struct fs_graph *g)
{
	for (uint32_t i = 0; i < s->n_modules; i++)
		if (s->modules[i].graph == g)
			return s->files[s->modules[i].file].path;
	return "";
}

static int in_set(const uint32_t *v, uint32_t n, uint32_t x)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* a tactic's outputs pass when they would pass the verdict */
_Static_assert(sizeof(((struct fs_numerics *)0)->tactics) / sizeof(struct fs_numerics_tactic) == FS_MAX_TACTICS,
	       "one tactic table size");

int fs_numerics_check_tactic(void *ctx, const struct fs_errors *u, const struct fs_errors *f, char *why, size_t n)
{
	struct fs_check c;
	check(ctx, u, f, &c);
	if (c.verdict == FS_VERDICT_PASS)
		return 0;
	snprintf(why, n, "%s", c.why);
	return -1;
}

/* The generated kernels: compiled always, run (and the fused one tuned) on
 * the GPU when asked and there is one; the verdict then rests on the GPU
 * results of the chosen tactic. */
static void gpu(const struct prog *p, const struct fs_numerics_opts *o, uint64_t seed, const struct ten *ref, const char *key,
		struct fs_numerics *r)
{
	struct fs_gpu_result *g = fs_xcalloc(1, sizeof(*g));
	struct fs_gpu_opts go = {.execute = o->gpu, .compile = !o->generate_only, .compile_all = o->compile_all, .triage = o->triage,
				 .reps = o->reps ? o->reps : 50, .cache = o->cache, .retune = o->retune,
				 .kernel_key = key[0] ? key : NULL, .bucket = r->bucket, .check = fs_numerics_check_tactic, .ctx = r,
				 .seed = seed, .cpu_ref = ref,
				 .graph_calls = fs_buckets_graph_calls(p), .progress = o->progress};
	fs_gpu_run(p, &go, g);
	r->gpu_seconds = g->seconds;
	r->kernels = g->kernels, r->compiled = g->compiled, r->ref_kernels = g->ref_kernels, r->gemm_kernels = g->gemm_kernels;
	snprintf(r->arch, sizeof(r->arch), "%s", g->arch);
	snprintf(r->nvrtc, sizeof(r->nvrtc), "%s", g->nvrtc);
	snprintf(r->device, sizeof(r->device), "%s", g->device);
	snprintf(r->kernel_error, sizeof(r->kernel_error), "%s", g->error);
	r->refused = g->refused;
	r->gpu_failed = g->error[0] && !g->refused;
	snprintf(r->gpu_skipped, sizeof(r->gpu_skipped), "%s", g->skipped);
	snprintf(r->gemm, sizeof(r->gemm), "%s", g->gemm);
	r->flops = g->flops;
	r->fused_source = g->fused_source, g->fused_source = NULL;
	r->n_tactics = g->n_tactics, r->n_failed = g->n_failed, r->unfused_kernels = g->unfused_kernels;
	r->chosen = g->chosen, r->runner_up = g->runner_up, r->cache_hit = g->cache_hit, r->variant = g->variant;
	for (uint32_t i = 0; i < g->n_tactics; i++)
		r->tactics[i] = g->tactics[i].rec;
	if (g->chosen >= 0)
		r->chosen_tactic = g->tactics[g->chosen].t;
	if (g->ran) {
		r->gpu_ran = 1;
		r->gpu_unfused = g->unfused, r->gpu_fused = g->fused;
		r->ref_checked = g->ref_checked, r->ref_vs_cpu = g->ref_vs_cpu;
		r->fused_ms = g->fused_ms, r->unfused_ms = g->unfused_ms, r->copy_gbs = g->copy_gbs, r->copy_same_gbs = g->copy_same_gbs;
		r->fused_ci = g->fused_ci, r->unfused_ci = g->unfused_ci, r->timed_apart = g->apart;
		r->speedup = g->speedup, r->speedup_lo = g->speedup_lo, r->speedup_hi = g->speedup_hi;
		snprintf(r->plan_failed, sizeof(r->plan_failed), "%s", g->plan_failed);
		r->fused_bytes = g->fused_bytes, r->unfused_bytes = g->unfused_bytes;
		r->reps = g->reps, r->rotate = g->rotate, r->unfused_launches = g->unfused_launches;
		check(r, &r->gpu_unfused, &r->gpu_fused, &r->gpu_check);
		if (g->triaged) {
			/* on the generated kernel itself: a failure that vanishes with FMA
			 * contraction off or with eager rounding is rounding, else a bug */
			r->gpu_no_fma = g->no_fma, r->gpu_emulated = g->emulated;
			double bound = r->k * r->gpu_unfused.max_abs + r->tol;
			int passes = (!r->gpu_no_fma.nonfinite && r->gpu_no_fma.max_abs <= bound) ||
				     (!r->gpu_emulated.nonfinite && r->gpu_emulated.max_abs <= bound);
			r->gpu_triaged = 1;
			r->cpu_triage = r->triage;
			r->triage = r->gpu_check.verdict == FS_VERDICT_PASS ? FS_TRIAGE_NONE : passes ? FS_TRIAGE_ROUNDING : FS_TRIAGE_BUG;
		}
	}
	fs_gpu_release(g);
	free(g);
}

static void release(struct prog *p, struct ten *vals[4])
{
	for (int m = 0; m < 4; m++) {
		for (uint32_t i = 0; vals[m] && i < p->n_ops; i++)
			free(vals[m][p->n_in + i].d);
		free(vals[m]);
	}
	for (uint32_t i = 0; i < p->n_in; i++)
		free(p->in[i].d);
	free(p->in);
	free(p->in_node);
	free(p->ops);
	free(p->is_output);
}

void fs_prog_free(struct prog *p)
{
	struct ten *none[4] = {NULL, NULL, NULL, NULL};
	release(p, none);
}

/* A transpose of a matrix input that only 2-D matrix products read, as their
 * second operand (the decomposed graph's mm(x, t(w))), is read in place: the
 * product takes the input as linear's [N, K] weight and the transpose is
 * never computed, so a region's weights count once against the CPU budget. */
static void elide_transposes(struct prog *p)
{
	for (uint32_t i = 0; i < p->n_ops; i++) {
		struct op *t = &p->ops[i];
		int32_t v = (int32_t)(p->n_in + i), in = t->n_src ? t->src[0] : -1;
		if (t->sem->kind != PERMUTE || p->is_output[i] || in < 0 || in >= (int32_t)p->n_in || p->in[in].rank != 2 ||
		    (t->n_ints == 2 && fs_dim_at(t->ints[0], 2) == fs_dim_at(t->ints[1], 2)) || (t->n_ints != 0 && t->n_ints != 2))
			continue;
		int only = 1, any = 0;
		for (uint32_t j = i + 1; j < p->n_ops && only; j++) {
			const struct op *u = &p->ops[j];
			for (uint32_t s = 0; s < u->n_src && only; s++)
				if (u->src[s] == v) {
					only = u->sem->kind == GEMM && s == 1 && !u->ints[0] && u->out.rank == 2 &&
					       fs_prog_value(p, u->src[0])->rank == 2;
					any = 1;
				}
		}
		if (!only || !any)
			continue;
		for (uint32_t j = i + 1; j < p->n_ops; j++)
			if (p->ops[j].sem->kind == GEMM && p->ops[j].src[1] == v)
				p->ops[j].src[1] = in, p->ops[j].ints[0] = 1;
		t->elided = 1;
	}
}

static int prog_build(struct prog *p, const uint32_t *nodes, uint32_t n, int64_t tokens, struct fs_diags *d, int explain);

/* "1x32x64x128" (or "scalar") into buf */
static const char *shape_text(const struct ten *t, char *buf, size_t n)
{
	size_t at = 0;
	buf[0] = '\0';
	for (uint8_t k = 0; k < t->rank && at < n; k++)
		at += (size_t)snprintf(buf + at, n - at, "%s%lld", k ? "x" : "", (long long)t->shape[k]);
	return t->rank ? buf : "scalar";
}

/* An op whose dumped shapes disagree at this binding: the shapes bound, the
 * binding, and the largest token count (below `tokens`) at which every op of
 * the region agrees, found by bisection: an export traced at a short
 * sequence bakes in sizes (a chunked scan's number of chunks: 1) that hold
 * only up to a length, and the error says which. */
static void shape_error(struct prog *p, const uint32_t *nodes, uint32_t n, int64_t tokens, const struct op *op, const char *what,
			char *buf, size_t bn)
{
	char sh[64], bind[128];
	size_t at = (size_t)snprintf(buf, bn, "%s (at ", what);
	bind[0] = '\0';
	for (size_t i = 0, b = 0; i < p->n_bind && b < sizeof(bind); i++)
		b += (size_t)snprintf(bind + b, sizeof(bind) - b, "%s%s=%lld", i ? " " : "", fs_scan_str(p->s, p->bind[i].sym),
				      (long long)p->bind[i].value);
	at += (size_t)snprintf(buf + at, at < bn ? bn - at : 0, "%s:", p->n_bind ? bind : "these sizes");
	for (uint32_t k = 0; k < op->n_src && at < bn; k++)
		at += (size_t)snprintf(buf + at, bn - at, " operand %u %s,", k + 1, shape_text(fs_prog_value(p, op->src[k]), sh, sizeof(sh)));
	if (at < bn)
		at += (size_t)snprintf(buf + at, bn - at, " output %s)", shape_text(&op->out, sh, sizeof(sh)));
	int64_t lo = 0, hi = tokens; /* lo: the largest count known to bind; hi: the smallest known not to */
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;
		struct prog q = {.s = p->s, .g = p->g, .gelu_tanh = p->gelu_tanh};
		struct fs_diags d;
		fs_diags_init(&d);
		int bad = prog_build(&q, nodes, n, mid, &d, 0);
		fs_prog_free(&q);
		fs_diags_release(&d);
		if (bad)
			hi = mid;
		else
			lo = mid;
	}
	if (lo && at < bn)
		snprintf(buf + at, bn - at, "; the region's dumped shapes agree up to %lld tokens: the export fixed a size that holds "
					    "only that far (export again at the length to check, or lower --tokens)",
			 (long long)lo);
}

/* fs_prog_build; `explain`: a shape that disagrees says where the region stops binding (shape_error) */
static int prog_build(struct prog *p, const uint32_t *nodes, uint32_t n, int64_t tokens, struct fs_diags *d, int explain)
{
	const struct fs_scan *s = p->s;
	const struct fs_graph *g = p->g;
	char why[512];
	p->n_bind = fs_bind_default(s, g, tokens, p->bind, 8);
	p->ops = fs_xcalloc(n + 1, sizeof(*p->ops));
	p->is_output = fs_xcalloc(n + 1, 1);
	/* external inputs first (values are numbered inputs, then ops): the
	 * top-level operands, and the parts of a cat; sizes inside lists (a
	 * view's [sym_size_int, -1]) come from the dumped shapes instead */
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_node *x = &g->nodes[nodes[i]];
		int cat = !strcmp(fs_scan_str(s, s->ops[x->op].key), "cat");
		for (uint32_t a = x->args; a < x->args + x->n_args; a++) {
			int top = 0;
			for (uint32_t t = x->args; t <= a; t += g->args[t].span)
				top |= t == a;
			int part = cat && a > x->args && g->args[x->args].kind != FS_ARG_NODE && a < x->args + g->args[x->args].span;
			if ((top || part) && tensor_arg(g, a) && !in_set(nodes, n, g->args[a].node) &&
			    value_of(p, g->args[a].node, &g->args[a].type) < 0) {
				fs_diag_add(d, FS_ERROR, path_of(s, g), x->line, 1, NULL, 0,
					    "numerics: the shape of input %%%s cannot be bound to sizes",
					    fs_scan_str(s, g->nodes[g->args[a].node].name));
				return -1;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		const char *err = build_op(p, nodes[i], &p->ops[p->n_ops], why, sizeof(why));
		const char *bad = err ? NULL : check_shapes(p, &p->ops[p->n_ops]);
		char full[400];
		if (bad && explain)
			shape_error(p, nodes, n, tokens, &p->ops[p->n_ops], bad, full, sizeof(full));
		if (bad)
			err = fail_at(p, nodes[i], explain ? full : bad, why, sizeof(why));
		if (err) {
			fs_diag_add(d, FS_ERROR, path_of(s, g), g->nodes[nodes[i]].line, 1, NULL, 0,
				    "numerics: cannot execute %s", err);
			return -1;
		}
		const struct fs_node *x = &g->nodes[nodes[i]];
		p->is_output[p->n_ops] = (x->flags & FS_NODE_OUTPUT) != 0;
		for (uint32_t u = 0; u < x->n_users; u++)
			if (!in_set(nodes, n, g->users[x->users + u]) && !(g->nodes[g->users[x->users + u]].flags & FS_NODE_SIDE_EFFECT))
				p->is_output[p->n_ops] = 1;
		p->n_ops++;
	}
	elide_transposes(p);
	fs_prog_layout(p, nodes, n, tokens);
	return 0;
}

int fs_prog_build(struct prog *p, const uint32_t *nodes, uint32_t n, int64_t tokens, struct fs_diags *d)
{
	return prog_build(p, nodes, n, tokens, d, 1);
}

/* The tuning cache's kernel key: a hash of the fallback fused kernel
 * generated at the bucket b, so every token count of a bucket shares one
 * entry. */
void fs_prog_tuning_key(const struct prog *p, const uint32_t *nodes, uint32_t n, int64_t b, char *key, size_t kn,
			char *bucket, size_t bn)
{
	snprintf(bucket, bn, "tokens<=%lld", (long long)b);
	struct prog q = {.s = p->s, .g = p->g, .gelu_tanh = p->gelu_tanh};
	struct fs_diags d;
	struct fs_kernel k;
	char why[256];
	fs_diags_init(&d);
	key[0] = '\0';
	if (fs_prog_build(&q, nodes, n, b, &d) == 0 && fs_codegen(&q, -1, 0, NULL, &k, why, sizeof(why)) == 0) {
		snprintf(key, kn, "%016llx", (unsigned long long)fs_hash_bytes(k.source, strlen(k.source), 0x74756e65ull));
		fs_kernel_release(&k);
	}
	fs_prog_free(&q);
	fs_diags_release(&d);
}

int fs_numerics_is_view(const struct fs_scan *s, const struct fs_graph *g, uint32_t node)
{
	const struct fs_node *x = &g->nodes[node];
	const struct sem *m = x->kind == FS_NODE_CALL ? sem_of(s, x) : NULL;
	return m && (m->kind == PERMUTE || m->kind == SLICE || !strcmp(m->key, "unsqueeze") || !strcmp(m->key, "squeeze"));
}

int fs_numerics_kernel_key(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, int gelu_tanh,
			   int64_t tokens, char key[20])
{
	struct prog p = {.s = s, .g = g, .gelu_tanh = gelu_tanh};
	struct fs_diags d;
	char bucket[64];
	fs_diags_init(&d);
	key[0] = '\0';
	if (fs_prog_build(&p, nodes, n, tokens, &d) == 0)
		fs_prog_tuning_key(&p, nodes, n, tokens, key, 20, bucket, sizeof(bucket));
	fs_prog_free(&p);
	fs_diags_release(&d);
	return key[0] ? 0 : -1;
}

/* --emit, once the verdict is in: nothing where it fails (an op whose plans
 * fail their checks is never written), else every bucket's plan. */
static void emit(const struct prog *p, const struct fs_bucket_set *set, const struct fs_numerics_opts *o, struct fs_numerics *r)
{
	if (r->verdict == FS_VERDICT_FAIL)
		snprintf(r->emitted, sizeof(r->emitted), "nothing (the verdict fails)");
	else if (set->ne) {
		fs_progress_say(o->progress, "--emit: compiling the op's kernels for %u bucket%s", set->ne, set->ne == 1 ? "" : "s");
		fs_emit(p, set->eb, set->ne, o, r);
	} else {
		const struct fs_bucket_run *b = r->n_buckets ? &r->buckets[r->n_buckets - 1] : NULL;
		snprintf(r->emitted, sizeof(r->emitted), "no bucket has a kernel%s%.900s%s", b && b->error[0] ? " (" : "",
			 b ? b->error : "", b && b->error[0] ? ")" : "");
		r->emit_failed = 1;
	}
}

/* What the CPU executions allocate, in bytes (run_mode, exec_gemm): every
 * input, each execution's op outputs, and the largest matrix product's
 * gathered operand; *elems: the values' elements. */
static int64_t cpu_bytes(const struct prog *p, const struct fs_numerics_opts *o, int64_t *elems)
{
	int64_t in = 0, ops = 0, scratch = 0;
	for (uint32_t v = 0; v < p->n_in; v++)
		in = fs_sat_add(in, p->in[v].n);
	for (uint32_t i = 0; i < p->n_ops; i++) {
		const struct op *op = &p->ops[i];
		ops = fs_sat_add(ops, op->elided ? 0 : op->out.n);
		if (op->sem->kind == GEMM && !op->ints[0]) {
			const struct ten *a = fs_prog_value(p, op->src[0]);
			int64_t k = a->rank ? a->shape[a->rank - 1] : 1, nn = op->out.rank ? op->out.shape[op->out.rank - 1] : 1;
			scratch = fs_sat_mul(k, nn) > scratch ? fs_sat_mul(k, nn) : scratch;
		}
	}
	*elems = fs_sat_add(in, ops);
	int64_t modes = o->triage ? 4 : 3; /* reference, unfused, fused, and emulated with --triage */
	return fs_sat_mul((int64_t)sizeof(double), fs_sat_add(fs_sat_add(in, fs_sat_mul(modes, ops)), scratch));
}

int fs_numerics_run(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n,
		    const struct fs_numerics_opts *o, struct fs_numerics *r, struct fs_diags *d)
{
	struct prog p = {.s = s, .g = g, .gelu_tanh = o->gelu_tanh};
	struct ten *vals[4] = {NULL, NULL, NULL, NULL};
	memset(r, 0, sizeof(*r));
	if (fs_prog_build(&p, nodes, n, o->tokens, d)) {
		release(&p, vals);
		return -1;
	}
	int64_t elems = 0, bytes = cpu_bytes(&p, o, &elems), budget = o->max_bytes > 0 ? o->max_bytes : FS_CPU_BYTES;
	r->out_dtype = FS_DT_F64;
	for (uint32_t i = 0; i < p.n_ops; i++)
		if (p.is_output[i]) {
			r->n_outputs++;
			r->out_elems += (uint64_t)p.ops[i].out.n;
			if (is_float(p.ops[i].out.dtype) && fs_dtype_size(p.ops[i].out.dtype) < fs_dtype_size(r->out_dtype))
				r->out_dtype = p.ops[i].out.dtype;
		}
	r->n_ops = p.n_ops;
	r->n_inputs = p.n_in;
	r->k = r->out_dtype == FS_DT_BF16 || r->out_dtype == FS_DT_F16 ? 3.0 : 2.0;
	r->tol = 1e-5;
	uint64_t seed = o->seed ? o->seed : 0x9e3779b97f4a7c15ull;
	uint8_t *narrow = fs_xcalloc(p.n_ops + 1, 1);
	int32_t dropped;
	plan_plants(&p, o, narrow, &dropped);
	p.narrow = narrow;
	p.plant_eps = o->plant_eps;
	if (dropped >= 0)
		snprintf(r->planted, sizeof(r->planted), "dropped cast %%%s (and what follows computed narrow)",
			 fs_scan_str(s, g->nodes[p.ops[dropped].node].name));
	else if (o->plant_drop_cast)
		snprintf(r->planted, sizeof(r->planted), "dropped cast: the region has no widening cast");
	if (o->plant_eps > 0)
		snprintf(r->planted, sizeof(r->planted), "eps replaced by %g", o->plant_eps);
	/* the CPU executions, where the values and the matrix products' multiply-adds
	 * (a few seconds' worth in double) fit the budget; else the GPU alone */
	int64_t macs = 0, mac_budget = (int64_t)1 << 32;
	for (uint32_t i = 0; i < p.n_ops; i++)
		if (p.ops[i].sem->kind == GEMM) {
			const struct ten *a = fs_prog_value(&p, p.ops[i].src[0]);
			macs += p.ops[i].out.n * (a->rank ? a->shape[a->rank - 1] : 1);
		}
	/* past a few seconds' worth of values the CPU runs only where no GPU
	 * will: its float64 reference checks such sizes in a fraction of the
	 * CPU's minutes */
	int gpu_checks = elems > FS_CPU_ELEMS && o->gpu && !o->generate_only && fs_gpu_present();
	r->cpu_ran = !gpu_checks && bytes <= budget && macs <= mac_budget;
	int over_memory = !gpu_checks && bytes > budget; /* --cpu-memory would let them run */
	if (gpu_checks)
		snprintf(r->cpu_skipped, sizeof(r->cpu_skipped),
			 "the region holds %lld elements at these sizes, more than the CPU executions' %lld where a GPU checks them",
			 (long long)elems, (long long)FS_CPU_ELEMS);
	else if (over_memory)
		snprintf(r->cpu_skipped, sizeof(r->cpu_skipped),
			 "the region holds %lld elements at these sizes, %lld MiB in the CPU executions, more than their %lld MiB "
			 "(--cpu-memory)", (long long)elems, (long long)(bytes >> 20), (long long)(budget >> 20));
	else if (!r->cpu_ran)
		snprintf(r->cpu_skipped, sizeof(r->cpu_skipped),
			 "the region's matrix products take %lld multiply-adds at these sizes, more than the CPU executions' %lld",
			 (long long)macs, (long long)mac_budget);
	for (uint32_t i = 0; r->cpu_ran && i < p.n_in; i++) {
		p.in[i].d = fs_xmalloc((size_t)(p.in[i].n ? p.in[i].n : 1) * sizeof(double));
		fill_random(&p.in[i], seed, i);
	}
	int rc = 0;
	if (r->cpu_ran)
		fs_progress_say(o->progress, "CPU check (float64 reference, %lld tokens, %lld values)", (long long)o->tokens, (long long)elems);
	for (int m = 0; r->cpu_ran && m < 4 && !rc; m++) {
		if (m == EMULATED && !o->triage)
			break;
		vals[m] = fs_xcalloc(p.n_in + p.n_ops + 1, sizeof(struct ten));
		memcpy(vals[m], p.in, p.n_in * sizeof(struct ten));
		rc = run_mode(&p, (enum mode)m, o, narrow, vals[m]);
	}
	if (rc) {
		free(narrow);
		fs_diag_add(d, FS_ERROR, path_of(s, g), 0, 0, NULL, 0, "numerics: a view does not fit its input");
		release(&p, vals);
		return -1;
	}
	if (r->cpu_ran) {
		errors_of(&p, vals[UNFUSED], vals[REF], &r->unfused);
		errors_of(&p, vals[FUSED], vals[REF], &r->fused);
		check(r, &r->unfused, &r->fused, &r->cpu_check);
	}
	if (r->cpu_ran && o->triage) {
		errors_of(&p, vals[EMULATED], vals[REF], &r->emulated);
		/* the failure vanishes once every op rounds like eager: rounding; else a bug */
		r->triage = r->cpu_check.verdict == FS_VERDICT_PASS ? FS_TRIAGE_NONE
			  : !r->emulated.nonfinite && r->emulated.max_abs <= r->k * r->unfused.max_abs + r->tol ? FS_TRIAGE_ROUNDING
												      : FS_TRIAGE_BUG;
	}
	describe(&p, r);
	char key[20];
	int64_t b = 1; /* the main run's bucket: tokens rounded up to a power of two */
	while (b < o->tokens)
		b *= 2;
	fs_prog_tuning_key(&p, nodes, n, b, key, sizeof(key), r->bucket, sizeof(r->bucket));
	gpu(&p, o, seed, vals[REF], key, r);
	if (r->refused) { /* no kernel fusescan can generate: nothing to check, emit or tune */
		fs_diag_add(d, FS_ERROR, path_of(s, g), g->nodes[nodes[0]].line, 1, NULL, 0, "numerics: the generator does not take this region: %s",
			    r->kernel_error);
		free(narrow);
		release(&p, vals);
		fs_numerics_release(r);
		return -1;
	}
	if (!r->cpu_ran && !r->gpu_ran) { /* nothing checked: nothing tuned, settled or emitted */
		fs_diag_add(d, FS_ERROR, path_of(s, g), g->nodes[nodes[0]].line, 1, NULL, 0,
			    "numerics: %s, and the GPU did not run (%s): lower --tokens%s", r->cpu_skipped,
			    r->gpu_skipped[0] ? r->gpu_skipped : r->kernel_error, over_memory ? " or raise --cpu-memory" : "");
		free(narrow);
		release(&p, vals);
		fs_numerics_release(r);
		return -1;
	}
	/* tuned per bucket (a region with matrix products: for --emit alone, each bucket times its products too) */
	struct fs_bucket_set set = {0};
	if (!o->generate_only && (o->emit_dir || (r->gpu_ran && !fs_gemm_any(&p))))
		fs_buckets_run(&p, nodes, n, o, seed, r, &set);
	settle(r);
	if (o->emit_dir && !o->generate_only)
		emit(&p, &set, o, r);
	fs_bucket_set_release(&set);
	free(narrow);
	release(&p, vals);
	return 0;
}

void fs_numerics_release(struct fs_numerics *r)
{
	free(r->fused_source);
	r->fused_source = NULL;
}

/* the last line: the one verdict (settle) */
static void print_verdict(const struct fs_numerics *r, FILE *out)
{
	fprintf(out, "  verdict: %s%s%s\n", fs_verdict_name(r->verdict), r->why[0] ? ": " : "", r->why);
}

/* The CPU executions' errors, check and triage. */
static void print_cpu(const struct fs_numerics *r, FILE *out)
{
	fprintf(out, "numerics (CPU, float64 reference; %s):\n  %s\n", r->binding, r->shapes);
	if (r->planted[0])
		fprintf(out, "  planted bug (debug): %s\n", r->planted);
	if (!r->cpu_ran)
		fprintf(out, "  CPU executions skipped: %s\n", r->cpu_skipped);
	const struct {
		const char *name;
		const struct fs_errors *e;
	} rows[] = {{"unfused (eager rounding)", &r->unfused}, {"fused (fp32 inside)", &r->fused},
		    {"fused, per-op rounding", &r->emulated}};
	if (r->cpu_ran)
		fprintf(out, "  %-26s %11s %11s %11s %9s\n", "execution", "max abs", "max rel", "nrmse", "non-fin.");
	for (int i = 0; r->cpu_ran && i < (r->triage != FS_TRIAGE_NONE || r->emulated.max_abs > 0 ? 3 : 2); i++)
		fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", rows[i].name, rows[i].e->max_abs, rows[i].e->max_rel,
			rows[i].e->nrmse, (unsigned long long)rows[i].e->nonfinite);
	if (r->cpu_ran)
		fprintf(out, "  CPU check: %s (fused <= %.0f x unfused + %.0e; minimum tolerance that passes: %.3e)%s%s\n",
			fs_verdict_name(r->cpu_check.verdict), r->k, r->tol, r->cpu_check.min_tol, r->cpu_check.why[0] ? ": " : "",
			r->cpu_check.why);
	enum fs_triage cpu = r->gpu_triaged ? r->cpu_triage : r->triage;
	if (cpu != FS_TRIAGE_NONE)
		fprintf(out, "  triage (CPU): %s (%s)\n", fs_triage_name(cpu),
			cpu == FS_TRIAGE_ROUNDING ? "the difference vanishes when every op rounds like eager"
						  : "the difference stays when every op rounds like eager");
}

/* What was generated and compiled. */
static void print_kernels(const struct fs_numerics *r, FILE *out)
{
	uint32_t fused = r->gpu_ran ? r->n_tactics : r->kernels - r->unfused_kernels - r->ref_kernels - r->gemm_kernels;
	char gemm[64] = "";
	if (r->gemm_kernels)
		snprintf(gemm, sizeof(gemm), ", the GEMM with its epilogue under %u", r->gemm_kernels);
	fprintf(out, "  kernels: %u generated (fused under %u tactic%s%s, %u unfused, %u float64 reference), %u compiled for %s with %s%s%s\n",
		r->kernels, fused, fused == 1 ? "" : "s", gemm, r->unfused_kernels, r->ref_kernels, r->compiled, r->arch,
		r->nvrtc[0] ? r->nvrtc : "no NVRTC", r->kernel_error[0] ? "; error: " : "", r->kernel_error);
}

/* The tuning: the tactic chosen and how, the finalists, each failure. */
static void print_tuning(const struct fs_numerics *r, FILE *out)
{
	if (!r->n_tactics)
		return;
	if (r->chosen < 0)
		fprintf(out, "  tuning: %u tactic%s timed, none passed its check: the fallback kernel (any size) runs\n", r->n_tactics,
			r->n_tactics == 1 ? "" : "s");
	else if (r->cache_hit)
		fprintf(out, "  tuning: cache hit (%s, bucket %s): no tactic profiled\n", r->tactics[r->chosen].name, r->bucket);
	else {
		uint32_t fin = 0;
		for (uint32_t i = 0; i < r->n_tactics; i++)
			fin += r->tactics[i].final != 0;
		fprintf(out,
			"  tuning: %u tactics timed, %u failed, %u finalist%s timed again interleaved;"
			" chosen %s %.4f ms (+-%.4f, p90-p10 %.4f)",
			r->n_tactics, r->n_failed, fin, fin == 1 ? "" : "s", r->tactics[r->chosen].name, r->tactics[r->chosen].ms, r->tactics[r->chosen].ci,
			r->tactics[r->chosen].spread);
		if (r->runner_up >= 0)
			fprintf(out, ", runner-up %s %.4f ms", r->tactics[r->runner_up].name, r->tactics[r->runner_up].ms);
		fprintf(out, "\n");
		for (uint32_t i = 0; i < r->n_tactics; i++)
			if (r->tactics[i].worst > 0)
				fprintf(out, "    %-22s finalist: %.4f ms among the finalists, %.4f after the unfused chain, %.4f after a copy;"
					     " worst ratio to a company's fastest %.3f\n", r->tactics[i].name, r->tactics[i].company_ms[0],
					r->tactics[i].company_ms[1], r->tactics[i].company_ms[2], r->tactics[i].worst);
	}
	for (uint32_t i = 0; i < r->n_tactics; i++)
		if (r->tactics[i].failed[0])
			fprintf(out, "    %-16s failed: %s\n", r->tactics[i].name, r->tactics[i].failed);
}

/* The GPU executions' errors against the float64 reference, check and triage. */
static void print_gpu_check(const struct fs_numerics *r, FILE *out)
{
	fprintf(out, "  GPU %s, float64 reference on the GPU", r->device);
	if (r->ref_checked)
		fprintf(out, " (against the CPU's: max abs %.2e, max rel %.2e, %llu non-finite)", r->ref_vs_cpu.max_abs,
			r->ref_vs_cpu.max_rel, (unsigned long long)(r->ref_vs_cpu.nonfinite + r->ref_vs_cpu.unwritten));
	else
		fprintf(out, " (no CPU reference at these sizes)");
	fprintf(out, ":\n");
	fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "unfused kernels", r->gpu_unfused.max_abs, r->gpu_unfused.max_rel,
		r->gpu_unfused.nrmse, (unsigned long long)(r->gpu_unfused.nonfinite + r->gpu_unfused.unwritten));
	fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "fused kernel", r->gpu_fused.max_abs, r->gpu_fused.max_rel,
		r->gpu_fused.nrmse, (unsigned long long)(r->gpu_fused.nonfinite + r->gpu_fused.unwritten));
	if (r->gpu_triaged) {
		fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "fused, FMA contraction off", r->gpu_no_fma.max_abs,
			r->gpu_no_fma.max_rel, r->gpu_no_fma.nrmse, (unsigned long long)r->gpu_no_fma.nonfinite);
		fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "fused, per-op rounding", r->gpu_emulated.max_abs,
			r->gpu_emulated.max_rel, r->gpu_emulated.nrmse, (unsigned long long)r->gpu_emulated.nonfinite);
	}
	fprintf(out, "  GPU check: %s (minimum tolerance that passes: %.3e)%s%s\n", fs_verdict_name(r->gpu_check.verdict),
		r->gpu_check.min_tol, r->gpu_check.why[0] ? ": " : "", r->gpu_check.why);
	if (r->gpu_triaged && r->triage != FS_TRIAGE_NONE)
		fprintf(out, "  triage (GPU): %s (%s)\n", fs_triage_name(r->triage),
			r->triage == FS_TRIAGE_ROUNDING ? "the kernel passes with FMA contraction off or eager rounding"
							: "the kernel fails with FMA contraction off and with eager rounding");
}

/* Fused against unfused, side by side. */
static void print_time(const struct fs_numerics *r, FILE *out)
{
	double fg = (double)r->fused_bytes / (r->fused_ms * 1e-3) / 1e9, ug = (double)r->unfused_bytes / (r->unfused_ms * 1e-3) / 1e9;
	fprintf(out, "  time (median of %u, %u input copies rotated, %s): fused %.4f ms (+-%.4f), ", r->reps, r->rotate,
		r->timed_apart ? "timed apart: both do not fit the device at once" : "fused and unfused side by side", r->fused_ms,
		r->fused_ci);
	if (r->flops > 0) /* matrix products: their rate, not a copy's */
		fprintf(out, "%.1f TFLOP/s, %.0f GB/s; unfused %.4f ms (+-%.4f, %u launches), %.1f TFLOP/s", r->flops / (r->fused_ms * 1e-3) / 1e12,
			fg, r->unfused_ms, r->unfused_ci, r->unfused_launches, r->flops / (r->unfused_ms * 1e-3) / 1e12);
	else
		fprintf(out, "%.0f GB/s, %.0f%% of copy %.0f GB/s (%.0f%% of a copy of the same bytes, %.0f GB/s); unfused %.4f ms (+-%.4f, "
			     "%u kernels), %.0f GB/s",
			fg, 100 * fg / r->copy_gbs, r->copy_gbs, 100 * fg / r->copy_same_gbs, r->copy_same_gbs, r->unfused_ms, r->unfused_ci,
			r->unfused_launches, ug);
	fprintf(out, "; speedup %.3fx [%.3f, %.3f]\n", r->speedup, r->speedup_lo, r->speedup_hi);
}

void fs_numerics_print(const struct fs_numerics *r, FILE *out)
{
	print_cpu(r, out);
	print_kernels(r, out);
	if (r->emitted[0])
		fprintf(out, "  %s: %s\n", r->emit_failed ? "emit failed" : "emitted", r->emitted);
	if (!r->gpu_ran) {
		fprintf(out, "  GPU: %s\n", r->gpu_skipped[0] ? r->gpu_skipped : "not run (see the error above)");
		print_verdict(r, out);
		return;
	}
	if (r->gemm[0])
		fprintf(out, "  matrix products: %s\n", r->gemm);
	print_tuning(r, out);
	print_gpu_check(r, out);
	print_time(r, out);
	fs_buckets_print(r, out);
	print_verdict(r, out);
}

/* one row of numerics.json's tactic table (buckets.h) */
void *fs_numerics_tactic_json(const struct fs_numerics_tactic *t)
{
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "name", t->name);
	cJSON_AddNumberToObject(q, "median_ms", t->ms);
	cJSON_AddNumberToObject(q, "spread_ms", t->spread);
	cJSON_AddNumberToObject(q, "ci95_ms", t->ci);
	cJSON_AddBoolToObject(q, "final", t->final);
	if (t->worst > 0) {
		cJSON_AddItemToObject(q, "companies_ms", cJSON_CreateDoubleArray(t->company_ms, 3));
		cJSON_AddNumberToObject(q, "worst_ratio", t->worst);
	}
	if (t->failed[0])
		cJSON_AddStringToObject(q, "failed", t->failed);
	return q;
}

static cJSON *errors_json(const struct fs_errors *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "max_abs", e->max_abs);
	cJSON_AddNumberToObject(o, "max_rel", e->max_rel);
	cJSON_AddNumberToObject(o, "nrmse", e->nrmse);
	cJSON_AddNumberToObject(o, "nonfinite", (double)e->nonfinite);
	cJSON_AddNumberToObject(o, "unwritten", (double)e->unwritten);
	return o;
}

static cJSON *check_json(const struct fs_check *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "verdict", fs_verdict_name(c->verdict));
	cJSON_AddNumberToObject(o, "min_passing_tolerance", c->min_tol);
	cJSON_AddStringToObject(o, "reason", c->why);
	return o;
}

/* The kernels generated and compiled, under "kernels". */
static void kernels_json(const struct fs_numerics *r, cJSON *o)
{
	cJSON *k = cJSON_AddObjectToObject(o, "kernels");
	cJSON_AddNumberToObject(k, "generated", r->kernels);
	cJSON_AddNumberToObject(k, "compiled", r->compiled);
	cJSON_AddStringToObject(k, "arch", r->arch);
	cJSON_AddStringToObject(k, "nvrtc", r->nvrtc);
	cJSON_AddStringToObject(k, "error", r->kernel_error);
	cJSON_AddNumberToObject(k, "unfused", r->unfused_kernels);
	cJSON_AddNumberToObject(k, "reference", r->ref_kernels);
	cJSON_AddNumberToObject(k, "gemm", r->gemm_kernels);
	if (r->emitted[0])
		cJSON_AddStringToObject(k, "emitted", r->emitted);
}

/* The tuning of the fused kernel (and its buckets), under gp's "tuning". */
static void tuning_json(const struct fs_numerics *r, cJSON *gp)
{
	cJSON *t = cJSON_AddObjectToObject(gp, "tuning");
	cJSON_AddStringToObject(t, "bucket", r->bucket);
	fs_buckets_json(r, t);
	cJSON_AddBoolToObject(t, "cache_hit", r->cache_hit);
	cJSON_AddStringToObject(t, "chosen", r->chosen >= 0 ? r->tactics[r->chosen].name : "");
	cJSON_AddStringToObject(t, "runner_up", r->runner_up >= 0 ? r->tactics[r->runner_up].name : "");
	cJSON_AddNumberToObject(t, "failed", r->n_failed);
	cJSON *tab = cJSON_AddArrayToObject(t, "tactics");
	for (uint32_t i = 0; i < r->n_tactics; i++)
		cJSON_AddItemToArray(tab, fs_numerics_tactic_json(&r->tactics[i]));
}

/* What the GPU ran: errors, times, speedup, tuning, under "gpu". */
static void gpu_json(const struct fs_numerics *r, cJSON *o)
{
	cJSON *gp = cJSON_AddObjectToObject(o, "gpu");
	cJSON_AddBoolToObject(gp, "ran", r->gpu_ran);
	if (!r->gpu_ran) {
		cJSON_AddStringToObject(gp, "skipped", r->gpu_skipped);
		return;
	}
	cJSON_AddStringToObject(gp, "device", r->device);
	if (r->gemm[0])
		cJSON_AddStringToObject(gp, "matrix_products", r->gemm);
	if (r->ref_checked)
		cJSON_AddItemToObject(gp, "reference_vs_cpu", errors_json(&r->ref_vs_cpu));
	cJSON_AddItemToObject(gp, "unfused", errors_json(&r->gpu_unfused));
	cJSON_AddItemToObject(gp, "fused", errors_json(&r->gpu_fused));
	cJSON_AddNumberToObject(gp, "fused_ms", r->fused_ms);
	cJSON_AddNumberToObject(gp, "unfused_ms", r->unfused_ms);
	cJSON_AddNumberToObject(gp, "fused_ci95_ms", r->fused_ci);
	cJSON_AddNumberToObject(gp, "unfused_ci95_ms", r->unfused_ci);
	cJSON_AddItemToObject(gp, "speedup", cJSON_CreateDoubleArray((const double[]){r->speedup, r->speedup_lo, r->speedup_hi}, 3));
	cJSON_AddBoolToObject(gp, "timed_apart", r->timed_apart);
	if (r->plan_failed[0])
		cJSON_AddStringToObject(gp, "plan_failed", r->plan_failed);
	cJSON_AddNumberToObject(gp, "fused_bytes", (double)r->fused_bytes);
	cJSON_AddNumberToObject(gp, "unfused_bytes", (double)r->unfused_bytes);
	cJSON_AddNumberToObject(gp, "copy_gbs", r->copy_gbs);
	cJSON_AddNumberToObject(gp, "copy_same_size_gbs", r->copy_same_gbs);
	if (r->flops > 0)
		cJSON_AddNumberToObject(gp, "flops", r->flops);
	cJSON_AddNumberToObject(gp, "reps", r->reps);
	cJSON_AddNumberToObject(gp, "input_copies", r->rotate);
	cJSON_AddNumberToObject(gp, "unfused_launches", r->unfused_launches);
	tuning_json(r, gp);
	if (r->gpu_triaged) {
		cJSON_AddItemToObject(gp, "fused_no_fma", errors_json(&r->gpu_no_fma));
		cJSON_AddItemToObject(gp, "fused_per_op_rounding", errors_json(&r->gpu_emulated));
	}
}

void *fs_numerics_json(const struct fs_numerics *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "device", "cpu");
	cJSON_AddStringToObject(o, "binding", r->binding);
	cJSON_AddStringToObject(o, "shapes", r->shapes);
	cJSON_AddNumberToObject(o, "ops", r->n_ops);
	cJSON_AddNumberToObject(o, "inputs", r->n_inputs);
	cJSON_AddNumberToObject(o, "outputs", r->n_outputs);
	cJSON_AddBoolToObject(o, "cpu_ran", r->cpu_ran);
	if (r->cpu_ran) {
		cJSON_AddItemToObject(o, "unfused", errors_json(&r->unfused));
		cJSON_AddItemToObject(o, "fused", errors_json(&r->fused));
	} else
		cJSON_AddStringToObject(o, "cpu_skipped", r->cpu_skipped);
	if (r->triage != FS_TRIAGE_NONE)
		cJSON_AddItemToObject(o, "fused_per_op_rounding", errors_json(&r->emulated));
	cJSON_AddNumberToObject(o, "k", r->k);
	cJSON_AddNumberToObject(o, "tolerance", r->tol);
	if (r->cpu_ran)
		cJSON_AddItemToObject(o, "cpu_check", check_json(&r->cpu_check));
	if (r->gpu_ran)
		cJSON_AddItemToObject(o, "gpu_check", check_json(&r->gpu_check));
	cJSON_AddStringToObject(o, "verdict", fs_verdict_name(r->verdict));
	cJSON_AddStringToObject(o, "reason", r->why);
	cJSON_AddStringToObject(o, "triage", fs_triage_name(r->triage));
	cJSON_AddStringToObject(o, "triage_on", r->gpu_triaged ? "gpu" : "cpu");
	kernels_json(r, o);
	gpu_json(r, o);
	if (r->planted[0])
		cJSON_AddStringToObject(o, "planted_bug", r->planted);
	return o;
}
