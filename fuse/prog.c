/*
 * prog.c: a region's nodes as a program of ops on bound shapes (prog.h):
 * the op-semantics table (sem.def), each op's arguments read and its shapes
 * checked against its operands (a dump may say anything: execution only
 * reads in bounds), a shape that stops binding explained (the op table: sem.c). No data, no
 * layouts (layout.c lays a bound program out), no execution (numerics.c).
 */
#include "prog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	out->n = fs_numel(out->shape, out->rank, (int64_t)1 << 40); /* beyond any GPU's memory */
	return out->n < 0 ? -1 : 0;
}

/* node's slot in the map: its own, or the empty one where it would go */
static uint32_t map_slot(const struct prog *p, uint32_t node)
{
	uint32_t m = p->map_cap - 1, i = (node * 2654435761u) & m;
	while (p->map_node[i] != UINT32_MAX && p->map_node[i] != node)
		i = (i + 1) & m;
	return i;
}

/* node's slot, taken if it was empty */
static uint32_t map_put(struct prog *p, uint32_t node)
{
	uint32_t i = map_slot(p, node);
	if (p->map_node[i] == UINT32_MAX)
		p->map_node[i] = node, p->map_value[i] = -1;
	return i;
}

static int in_region(const struct prog *p, uint32_t node)
{
	uint32_t i = map_slot(p, node);
	return p->map_node[i] == node && p->map_member[i];
}

static int32_t value_of(struct prog *p, uint32_t node, const struct fs_type *t)
{
	uint32_t slot = map_slot(p, node);
	if (p->map_node[slot] == node && p->map_value[slot] >= 0)
		return p->map_value[slot];
	if (p->n_ops)
		return -1; /* inputs are all known before the first op: values would shift */
	p->in = fs_xrealloc(p->in, (p->n_in + 1) * sizeof(*p->in));
	p->in_node = fs_xrealloc(p->in_node, (p->n_in + 1) * sizeof(uint32_t));
	const struct fs_node *x = &p->g->nodes[node];
	const struct fs_type *tt = x->kind == FS_NODE_CALL && x->n_out == 1 ? &p->g->types[x->out] : t;
	if (bound_type(p, tt, &p->in[p->n_in]) && bound_type(p, t, &p->in[p->n_in]))
		return -1;
	p->in_node[p->n_in] = node;
	p->map_value[map_put(p, node)] = (int32_t)p->n_in;
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

/* The one diagnostic of a region node that cannot be executed, at its line: -1. */
static int fail_at(struct prog *p, uint32_t node, const char *why, struct fs_diags *d)
{
	const struct fs_node *x = &p->g->nodes[node];
	fs_diag_add(d, FS_ERROR, fs_prog_path(p->s, p->g), x->line, 1, NULL, 0, "numerics: cannot execute %%%s (%s): %s",
		    fs_scan_str(p->s, x->name), fs_scan_str(p->s, p->s->ops[x->op].target), why);
	return -1;
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
static double default_literal(enum sem_id id, uint32_t k)
{
	switch (id) {
	case SEM_clamp: /* clamp(x, min = None, max = None) */
		return k == 1 ? -INFINITY : INFINITY;
	case SEM_softplus: /* softplus(x, beta = 1, threshold = 20) */
		return k == 1 ? 1 : 20;
	case SEM_hardtanh: /* hardtanh(x, min_val = -1, max_val = 1) */
		return k == 1 ? -1 : 1;
	case SEM_leaky_relu: /* leaky_relu(x, negative_slope = 0.01) */
		return 0.01;
	default:
		return NAN;
	}
}

/* The non-operand arguments of each kind (dims, bounds, pads, repeats) into
 * op->ints / eps, and the operands of those that take lists or optional
 * tensors. 0, or -1 with why the node cannot be executed in d. */
typedef int arg_rule(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d);

static int args_reduction(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
{
	const struct fs_graph *g = p->g;
	if (np > 1 && ints_of(g, pa[1].a, op))
		return fail_at(p, node, "reduction dims are not integers", d);
	if (op->sem->kind == RED && np > 2 && g->args[pa[2].a].kind == FS_ARG_BOOL)
		op->keepdim = (uint8_t)g->args[pa[2].a].i;
	return 0;
}

static int args_permute(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
{
	const struct fs_graph *g = p->g;
	if ((np > 1 && ints_of(g, pa[1].a, op)) || (np > 2 && ints_of(g, pa[2].a, op)))
		return fail_at(p, node, "dims are not integers", d);
	/* two dims read as transpose(a, b): permute([0, 1]) of a matrix is transpose(0, 0) */
	if (op->sem->id == SEM_permute && op->n_ints == 2 && (op->ints[0] == 0 || op->ints[0] == -2))
		op->ints[1] = op->ints[0];
	return 0;
}

/* slice(x, dim = 0, start = 0, end = MAX, step = 1) */
static int args_slice(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
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
			return fail_at(p, node, "slice bounds are not integers", d);
	return 0;
}

/* cat([a, b, ...], dim = 0); stack the same along a new dim */
static int args_cat(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
{
	const struct fs_graph *g = p->g;
	if (!np || (g->args[pa[0].a].kind != FS_ARG_LIST && g->args[pa[0].a].kind != FS_ARG_TUPLE))
		return fail_at(p, node, "cat without a list", d);
	for (uint32_t c = pa[0].a + 1; c < pa[0].a + g->args[pa[0].a].span; c += g->args[c].span) {
		int32_t v = tensor_arg(g, c) ? value_of(p, g->args[c].node, &g->args[c].type) : -1;
		if (v < 0 || op->n_src >= MAX_ARGS)
			return fail_at(p, node, "cat of something else than values", d);
		op->src[op->n_src++] = v;
	}
	op->ints[op->n_ints++] = np > 1 && g->args[pa[1].a].kind == FS_ARG_INT ? g->args[pa[1].a].i : 0;
	return 0;
}

/* pad(x, pads, mode = "constant", value = None), constant_pad_nd(x, pads, value = 0):
 * pads from the last dim on, (before, after) pairs; the output's shape gives the afters */
static int args_pad(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
{
	const struct fs_graph *g = p->g;
	int nd = op->sem->id == SEM_constant_pad_nd;
	const struct fs_arg *l = np > 1 ? &g->args[pa[1].a] : NULL;
	if (!l || (l->kind != FS_ARG_LIST && l->kind != FS_ARG_TUPLE))
		return fail_at(p, node, "a pad without its list of pads", d);
	op->n_ints = op->out.rank;
	uint32_t e = 0;
	for (uint32_t c = pa[1].a + 1; c < pa[1].a + l->span; c += g->args[c].span, e++) {
		if (e / 2 >= op->out.rank)
			return fail_at(p, node, "more pads than dims", d);
		if (e % 2 == 0 && (g->args[c].kind != FS_ARG_INT || g->args[c].i < 0))
			return fail_at(p, node, "a pad before a dim that is not a number at least 0", d);
		if (e % 2 == 0)
			op->ints[op->out.rank - 1 - e / 2] = g->args[c].i;
	}
	const struct fs_arg *mode = !nd && np > 2 ? &g->args[pa[2].a] : NULL;
	if (mode && !(mode->kind == FS_ARG_STR && !strcmp(fs_scan_str(p->s, mode->text), "constant")))
		return fail_at(p, node, "a pad other than constant (reflect, replicate, circular)", d);
	uint32_t at = nd ? 2 : 3;
	op->eps = at < np && !isnan(pa[at].lit) ? pa[at].lit : 0;
	return 0;
}

/* repeat_interleave(x, repeats, dim, output_size = None): each element `repeats` times along dim */
static int args_repeat(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
{
	const struct fs_graph *g = p->g;
	if (np < 3 || g->args[pa[1].a].kind != FS_ARG_INT || g->args[pa[1].a].i < 1 || g->args[pa[2].a].kind != FS_ARG_INT)
		return fail_at(p, node, "repeat_interleave other than a number of repeats along a dim", d);
	op->ints[op->n_ints++] = g->args[pa[2].a].i;
	op->ints[op->n_ints++] = g->args[pa[1].a].i;
	return 0;
}

/* repeat(x, repeats): the tensor tiled, repeats[k] copies along dim k */
static int args_tile(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
{
	if (np < 2 || ints_of(p->g, pa[1].a, op))
		return fail_at(p, node, "repeat without a list of integer repeats", d);
	return 0;
}

/* tril / triu(x, diagonal = 0) */
static int args_tril(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
{
	(void)node, (void)d;
	op->ints[op->n_ints++] = np > 1 && p->g->args[pa[1].a].kind == FS_ARG_INT ? p->g->args[pa[1].a].i : 0;
	return 0;
}

/* layer_norm(x, normalized_shape, w, b, eps) */
static int args_layernorm(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
{
	if (np < 2 || pa[0].value < 0 || ints_of(p->g, pa[1].a, op))
		return fail_at(p, node, "layer_norm without a value and a normalized shape", d);
	op->src[op->n_src++] = pa[0].value;
	for (uint32_t k = 2; k < 4; k++) /* args[0] / args[1]: weight, bias (-1 when None) */
		if (k < np && pa[k].value >= 0) {
			op->args[k - 2] = (struct arg){(int8_t)op->n_src, 0};
			op->src[op->n_src++] = pa[k].value;
		} else
			op->args[k - 2] = (struct arg){-1, k == 2 ? 1.0 : 0.0};
	op->n_args = 2;
	op->eps = np > 4 && !isnan(pa[4].lit) ? pa[4].lit : 1e-5;
	return 0;
}

/* rms_norm(x, weight, eps) */
static int args_rmsnorm(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
{
	if (np < 3 || pa[0].value < 0 || pa[1].value < 0 || isnan(pa[2].lit))
		return fail_at(p, node, "rms norm without a value, a weight and an eps", d);
	op->src[op->n_src++] = pa[0].value;
	op->args[0] = (struct arg){(int8_t)op->n_src, 0};
	op->src[op->n_src++] = pa[1].value;
	op->args[1] = (struct arg){-1, 0.0};
	op->n_args = 2;
	op->n_ints = 1; /* normalise the last dim */
	op->eps = pa[2].lit;
	return 0;
}

/* linear(x, w[N, K], bias = None); mm / bmm / matmul(a, b); addmm(bias, a, b) */
static int args_gemm(struct prog *p, uint32_t node, struct op *op, const struct parg *pa, uint32_t np, struct fs_diags *d)
{
	int addmm = op->sem->id == SEM_addmm, linear = (op->sem->flags & NK_WEIGHT) != 0;
	uint32_t a0 = addmm ? 1 : 0, most = addmm || linear ? 3 : 2;
	if (np < a0 + 2 || pa[a0].value < 0 || pa[a0 + 1].value < 0)
		return fail_at(p, node, "a matrix product without two values", d);
	if (np > most)
		return fail_at(p, node, "a matrix product with arguments beyond its operands and bias (beta, alpha)", d);
	op->src[op->n_src++] = pa[a0].value;
	op->src[op->n_src++] = pa[a0 + 1].value;
	uint32_t b = addmm ? 0 : 2; /* the bias */
	if ((addmm || linear) && b < np && pa[b].value >= 0)
		op->src[op->n_src++] = pa[b].value;
	else if ((addmm || linear) && b < np && !pa[b].none)
		return fail_at(p, node, "a matrix product's bias is neither a value nor None", d);
	op->ints[op->n_ints++] = linear; /* b is [N, K] */
	return 0;
}

/* kinds whose arguments are their operands alone (elementwise, views, expand) have none */
static arg_rule *const arg_rules[GEMM + 1] = {
	[RED] = args_reduction, [SOFTMAX] = args_reduction, [PERMUTE] = args_permute, [SLICE] = args_slice,
	[CAT] = args_cat,       [STACK] = args_cat,         [PAD] = args_pad,         [REPEAT] = args_repeat,
	[TILE] = args_tile,     [TRIL] = args_tril,         [LAYERNORM] = args_layernorm, [RMSNORM] = args_rmsnorm,
	[GEMM] = args_gemm,
};

/* One region node -> op. 0, or -1 with the reason it cannot be executed in d. */
static int build_op(struct prog *p, uint32_t node, struct op *op, struct fs_diags *d)
{
	const struct fs_graph *g = p->g;
	const struct fs_node *x = &g->nodes[node];
	memset(op, 0, sizeof(*op));
	op->node = node;
	if (x->kind != FS_NODE_CALL || (x->n_out != 1 && !fs_sem_tuple_reduction(p->s, x)))
		return fail_at(p, node, "not a single-output op", d);
	op->sem = fs_sem_of(p->s, x);
	if (op->sem && op->sem->id == SEM_getitem &&
	    (x->n_args != 2 || g->args[x->args].kind != FS_ARG_NODE || !fs_sem_tuple_reduction(p->s, &g->nodes[g->args[x->args].node]) ||
	     g->args[x->args + 1].kind != FS_ARG_INT || g->args[x->args + 1].i != 0))
		return fail_at(p, node, "an element of a tuple other than the values of a max or min over a dim", d);
	if (!op->sem)
		return fail_at(p, node, "no semantics for this op (fuse/sem.def)", d);
	if (bound_type(p, &g->types[x->out], &op->out))
		return fail_at(p, node, "output shape cannot be bound to sizes", d);
	struct parg pa[MAX_ARGS];
	uint32_t np = 0;
	for (uint32_t a = x->args; a < x->args + x->n_args && np < MAX_ARGS; a += g->args[a].span) {
		const struct fs_arg *y = &g->args[a];
		pa[np] = (struct parg){a, -1, number(y), y->kind == FS_ARG_NONE, y->kind == FS_ARG_NODE && !tensor_arg(g, a)};
		if (tensor_arg(g, a) && (pa[np].value = value_of(p, y->node, &y->type)) < 0)
			return fail_at(p, node, "an input shape cannot be bound to sizes", d);
		np++;
	}
	uint8_t kind = op->sem->kind;
	/* the operands: values become tensor sources, numbers literals */
	uint32_t n_operands = kind == UN || kind == BIN || kind == TER || kind == CMP ? op->sem->n_tensors
			      : kind == LAYERNORM || kind == RMSNORM || kind == CAT || kind == STACK || kind == GEMM ? 0 : 1;
	for (uint32_t k = 0; k < n_operands; k++) {
		double lit = k < np ? pa[k].lit : NAN;
		if (k >= np || pa[k].none)
			lit = default_literal(op->sem->id, k);
		if (k < np && pa[k].value >= 0) {
			op->args[op->n_args++] = (struct arg){(int8_t)op->n_src, 0};
			op->src[op->n_src++] = pa[k].value;
		} else if (!isnan(lit) && (kind == UN || kind == BIN || kind == TER || kind == CMP))
			op->args[op->n_args++] = (struct arg){-1, lit};
		else
			return fail_at(p, node, "an operand is neither a value nor a number", d);
	}
	if (op->sem->id == SEM_bitwise_not && (!op->n_src || fs_prog_value(p, op->src[0])->dtype != FS_DT_BOOL))
		return fail_at(p, node, "bitwise_not of other than booleans (of integers: ~a)", d);
	if (fs_sem_rounding_div(p->s, x)) /* div.Tensor_mode: the dump drops rounding_mode= */
		return fail_at(p, node, "a division with a rounding mode the dump does not print", d);
	arg_rule *r = arg_rules[kind];
	return r ? r(p, node, op, pa, np, d) : 0;
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

/* The dump a graph was read from, for diagnostics. */
const char *fs_prog_path(const struct fs_scan *s, const struct fs_graph *g)
{
	for (uint32_t i = 0; i < s->n_modules; i++)
		if (s->modules[i].graph == g)
			return s->files[s->modules[i].file].path;
	return "";
}

void fs_prog_free(struct prog *p)
{
	for (uint32_t i = 0; i < p->n_in; i++)
		free(p->in[i].d);
	free(p->in);
	free(p->in_node);
	free(p->ops);
	free(p->is_output);
	free(p->map_node);
	free(p->map_value);
	free(p->map_member);
	p->map_node = NULL, p->map_value = NULL, p->map_member = NULL, p->map_cap = 0;
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

/* "s72=1 s70=2048" (or "these sizes") into buf */
static const char *binding_text(const struct prog *p, char *buf, size_t n)
{
	buf[0] = '\0';
	for (size_t i = 0, b = 0; i < p->n_bind && b < n; i++)
		b += (size_t)snprintf(buf + b, n - b, "%s%s=%lld", i ? " " : "", fs_scan_str(p->s, p->bind[i].sym), (long long)p->bind[i].value);
	return p->n_bind ? buf : "these sizes";
}

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
 * only up to a length, and the error says which: -1. */
static int shape_error(struct prog *p, const uint32_t *nodes, uint32_t n, int64_t tokens, const struct op *op, const char *what,
		       struct fs_diags *d)
{
	char sh[64], bind[128], buf[400];
	size_t bn = sizeof(buf);
	size_t at = (size_t)snprintf(buf, bn, "%s (at ", what);
	at += (size_t)snprintf(buf + at, at < bn ? bn - at : 0, "%s:", binding_text(p, bind, sizeof(bind)));
	for (uint32_t k = 0; k < op->n_src && at < bn; k++)
		at += (size_t)snprintf(buf + at, bn - at, " operand %u %s,", k + 1, shape_text(fs_prog_value(p, op->src[k]), sh, sizeof(sh)));
	if (at < bn)
		at += (size_t)snprintf(buf + at, bn - at, " output %s)", shape_text(&op->out, sh, sizeof(sh)));
	int64_t lo = 0, hi = tokens; /* lo: the largest count known to bind; hi: the smallest known not to */
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;
		struct prog q = {.s = p->s, .g = p->g, .gelu_tanh = p->gelu_tanh};
		struct fs_diags scratch; /* a size that does not bind is the search's step, not an error */
		fs_diags_init(&scratch);
		int bad = prog_build(&q, nodes, n, mid, &scratch, 0);
		fs_prog_free(&q);
		fs_diags_release(&scratch);
		if (bad)
			hi = mid;
		else
			lo = mid;
	}
	if (lo && at < bn)
		snprintf(buf + at, bn - at, "; the region's dumped shapes agree up to %lld tokens: the export fixed a size that holds "
					    "only that far (export again at the length to check, or lower --tokens)",
			 (long long)lo);
	return fail_at(p, op->node, buf, d);
}

/* The one diagnostic of input `in` (of node x) whose dumped type binds to no
 * sizes, saying why: the first dim that does not evaluate or is negative,
 * with the binding; or its rank or its size. -1. */
static int unbound(const struct prog *p, const struct fs_node *x, uint32_t in, const struct fs_type *t, struct fs_diags *d)
{
	const struct fs_types *ty = &p->s->types;
	const struct fs_shape *sh = &ty->shapes[t->shape];
	char why[256], bind[128];
	snprintf(why, sizeof(why), "its shape is not known");
	if (sh->kind == FS_SHAPE_DIMS && sh->rank > MAX_RANK)
		snprintf(why, sizeof(why), "rank %u, more than the %d the kernels take", sh->rank, MAX_RANK);
	else if (sh->kind == FS_SHAPE_DIMS) {
		snprintf(why, sizeof(why), "more than 2^40 elements at %s", binding_text(p, bind, sizeof(bind)));
		for (uint32_t i = 0; i < sh->rank; i++) {
			const struct fs_dim *dim = &ty->dims[sh->dims + i];
			int64_t v;
			int bad = fs_dim_eval(ty, dim, p->bind, p->n_bind, &v);
			if (bad)
				snprintf(why, sizeof(why), "dim %u (%s) does not evaluate at %s", i, fs_scan_str(p->s, dim->text),
					 binding_text(p, bind, sizeof(bind)));
			else if (v < 0)
				snprintf(why, sizeof(why), "dim %u (%s) is %lld at %s", i, fs_scan_str(p->s, dim->text), (long long)v,
					 binding_text(p, bind, sizeof(bind)));
			if (bad || v < 0)
				break;
		}
	}
	fs_diag_add(d, FS_ERROR, fs_prog_path(p->s, p->g), x->line, 1, NULL, 0, "numerics: the shape of input %%%s cannot be bound to sizes: %s",
		    fs_scan_str(p->s, p->g->nodes[in].name), why);
	return -1;
}

/* fs_prog_bind; `explain`: a shape that disagrees says where the region stops binding (shape_error) */
/* The region's external inputs, numbered first (values are numbered inputs,
 * then ops): the top-level operands, and the parts of a cat; sizes inside lists
 * (a view's [sym_size_int, -1]) come from the dumped shapes instead. */
static int bind_inputs(struct prog *p, const uint32_t *nodes, uint32_t n, struct fs_diags *d)
{
	const struct fs_scan *s = p->s;
	const struct fs_graph *g = p->g;
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_node *x = &g->nodes[nodes[i]];
		int cat = fs_sem_is(s, x, SEM_cat);
		for (uint32_t a = x->args; a < x->args + x->n_args; a++) {
			int top = 0;
			for (uint32_t t = x->args; t <= a; t += g->args[t].span)
				top |= t == a;
			int part = cat && a > x->args && g->args[x->args].kind != FS_ARG_NODE && a < x->args + g->args[x->args].span;
			if ((top || part) && tensor_arg(g, a) && !in_region(p, g->args[a].node) &&
			    value_of(p, g->args[a].node, &g->args[a].type) < 0)
				return unbound(p, x, g->args[a].node, &g->args[a].type, d);
		}
	}
	return 0;
}

static int prog_build(struct prog *p, const uint32_t *nodes, uint32_t n, int64_t tokens, struct fs_diags *d, int explain)
{
	const struct fs_scan *s = p->s;
	const struct fs_graph *g = p->g;
	p->n_bind = fs_bind_default(s, g, tokens, p->bind, 8);
	p->ops = fs_xcalloc(n + 1, sizeof(*p->ops));
	p->is_output = fs_xcalloc(n + 1, 1);
	size_t keys = n; /* the region's nodes and at most one input an argument */
	for (uint32_t i = 0; i < n; i++)
		keys += g->nodes[nodes[i]].n_args;
	for (p->map_cap = 16; p->map_cap < 2 * keys; p->map_cap *= 2)
		;
	p->map_node = fs_xmalloc(p->map_cap * sizeof(uint32_t));
	memset(p->map_node, 0xff, p->map_cap * sizeof(uint32_t));
	p->map_value = fs_xmalloc(p->map_cap * sizeof(int32_t));
	p->map_member = fs_xcalloc(p->map_cap, 1);
	for (uint32_t i = 0; i < n; i++)
		p->map_member[map_put(p, nodes[i])] = 1;
	if (bind_inputs(p, nodes, n, d))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		if (build_op(p, nodes[i], &p->ops[p->n_ops], d))
			return -1;
		const char *bad = check_shapes(p, &p->ops[p->n_ops]);
		if (bad)
			return explain ? shape_error(p, nodes, n, tokens, &p->ops[p->n_ops], bad, d) : fail_at(p, nodes[i], bad, d);
		const struct fs_node *x = &g->nodes[nodes[i]];
		p->is_output[p->n_ops] = (x->flags & FS_NODE_OUTPUT) != 0;
		for (uint32_t u = 0; u < x->n_users; u++)
			if (!in_region(p, g->users[x->users + u]) && !(g->nodes[g->users[x->users + u]].flags & FS_NODE_SIDE_EFFECT))
				p->is_output[p->n_ops] = 1;
		p->map_value[map_slot(p, nodes[i])] = (int32_t)(p->n_in + p->n_ops);
		p->n_ops++;
	}
	elide_transposes(p);
	return 0;
}

int fs_prog_bind(struct prog *p, const uint32_t *nodes, uint32_t n, int64_t tokens, struct fs_diags *d)
{
	return prog_build(p, nodes, n, tokens, d, 1);
}

