/*
 * causal.c: attention masks proven causal. An export of a Hugging Face model
 * builds the attention mask out of index arithmetic (aranges, comparisons, a
 * cumsum over position differences, gathers) and hands it to SDPA, which
 * then cannot take its flash path. Where the mask depends on nothing but the
 * sizes and is "key j <= query i" at every element for every size, the
 * attention can drop it and say is_causal=True instead, and the nodes that
 * only built it go too. Called by mine.c after roles, before regions: the
 * nodes it frees are given no role, so no candidate fuses what the rewrite
 * deletes; the attention nodes are reported as causal_mask cleanups.
 *
 * The proof is an abstract interpretation of the mask's cone. An integer
 * tensor's value is an affine function of its element index,
 * c + sum_k a[k] * idx[k]; a boolean one is false or the conjunction of
 * atoms "affine <= 0" (none: true); a float mask is 0 where such a boolean
 * holds and -inf elsewhere. Every op maps these forms exactly or yields
 * "unknown", which refuses the mask: no placeholder, weight or runtime value
 * is assumed anything. A coefficient on a dim of size 1 is dropped (its index
 * is always 0); a symbolic dim may be 1 at runtime too, so a value is
 * broadcast only along dims it does not vary on or that are the result's own.
 * Integers are exact: each node's values must fit its dtype at every size (a
 * dim that carries a coefficient belongs to a materialized tensor, so is
 * below LONGEST). Storage an in-place op writes refuses every view of it.
 * Each node is evaluated once per graph; one mask's cone may hold CONE nodes
 * at most. Linear in the nodes and edges of the cones, and what goes with the
 * masks in one reverse pass over the graph.
 */
#include "mine_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	RANK = 8,   /* tensor rank at most */
	ATOMS = 4,  /* conjuncts of a boolean at most */
	CONE = 512, /* nodes evaluated for one mask at most */
};

/* Elements along a symbolic dim at most: 2^62 bytes could not be allocated. */
static const int64_t LONGEST = INT64_C(1) << 62;

enum vkind { V_UNKNOWN, V_INT, V_BOOL, V_FMASK };

struct aff {
	int64_t c;
	int64_t a[RANK];
};

struct val {
	uint8_t kind;    /* enum vkind */
	uint8_t rank;
	uint8_t n_atoms; /* V_BOOL / V_FMASK: conjuncts (0: true) */
	uint8_t is_false;
	struct aff e;    /* V_INT */
	struct aff atom[ATOMS];
};

struct cm {
	struct ctx *c;
	uint32_t *memo;   /* per node: index into vals + 1, 0 = not evaluated */
	struct val *vals;
	uint32_t n_vals, cap_vals;
	uint32_t budget;  /* nodes the current mask may still evaluate */
	uint32_t *root;   /* per node: the node whose storage it views */
	uint8_t *written; /* per root: an in-place op writes that storage */
};

static int add_ov(int64_t x, int64_t y, int64_t *r)
{
	return __builtin_add_overflow(x, y, r);
}

static int mul_ov(int64_t x, int64_t y, int64_t *r)
{
	return __builtin_mul_overflow(x, y, r);
}

/* ---- shapes ---- */

/* node's dims (rank 0: a scalar, or its shape is not printed) */
static const struct fs_dim *dims_of(const struct cm *m, uint32_t node, uint32_t *rank)
{
	const struct fs_scan *s = m->c->s;
	const struct fs_shape *sh = fs_scan_shape(s, m->c->g->types[m->c->g->nodes[node].out].shape);
	*rank = sh->kind == FS_SHAPE_DIMS ? sh->rank : 0;
	return *rank ? &s->types.dims[sh->dims] : NULL;
}

/* The rank of node's value (a scalar: 0) and which dims are the literal 1;
 * 0 when its shape is not printed or too deep. */
static int shape(const struct cm *m, uint32_t node, uint32_t *rank, uint8_t one[RANK])
{
	enum fs_shape_kind kind = fs_scan_shape(m->c->s, m->c->g->types[m->c->g->nodes[node].out].shape)->kind;
	const struct fs_dim *d = dims_of(m, node, rank);
	if (kind != FS_SHAPE_SCALAR && (kind != FS_SHAPE_DIMS || *rank > RANK))
		return 0;
	for (uint32_t k = 0; k < *rank; k++)
		one[k] = d[k].expr == FS_DIM_CONST && d[k].value == 1;
	return 1;
}

static enum fs_dtype dtype(const struct cm *m, uint32_t node)
{
	return (enum fs_dtype)m->c->g->types[m->c->g->nodes[node].out].dtype;
}

static int is_int_dtype(enum fs_dtype d)
{
	return d == FS_DT_I64 || d == FS_DT_I32 || d == FS_DT_I16 || d == FS_DT_I8 || d == FS_DT_U8;
}

static int is_float_dtype(enum fs_dtype d)
{
	return d == FS_DT_F64 || d == FS_DT_F32 || d == FS_DT_F16 || d == FS_DT_BF16;
}

/* Every value in [lo, hi] is exact in dtype d (no wraparound). */
static int fits(enum fs_dtype d, int64_t lo, int64_t hi)
{
	switch (d) {
	case FS_DT_I64:
		return 1;
	case FS_DT_I32:
		return lo >= INT32_MIN && hi <= INT32_MAX;
	case FS_DT_I16:
		return lo >= INT16_MIN && hi <= INT16_MAX;
	case FS_DT_I8:
		return lo >= INT8_MIN && hi <= INT8_MAX;
	case FS_DT_U8:
		return lo >= 0 && hi <= UINT8_MAX;
	default:
		return 0;
	}
}

/* ---- values ---- */

/* gcd of |x| and |y|; 0 when it is 2^63 (both -2^63 or 0): no -INT64_MIN */
static int64_t gcd64(int64_t x, int64_t y)
{
	uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x, w = y < 0 ? 0 - (uint64_t)y : (uint64_t)y;
	while (w) {
		uint64_t t = u % w;
		u = w, w = t;
	}
	return u > INT64_MAX ? 0 : (int64_t)u;
}

static int aff_const(const struct aff *e, uint32_t rank)
{
	for (uint32_t k = 0; k < rank; k++)
		if (e->a[k])
			return 0;
	return 1;
}

/* Two affine forms of one rank are the same function. */
static int aff_eq(const struct aff *x, const struct aff *y, uint32_t rank)
{
	if (x->c != y->c)
		return 0;
	for (uint32_t k = 0; k < rank; k++)
		if (x->a[k] != y->a[k])
			return 0;
	return 1;
}

/* An atom e <= 0 divided by its coefficients' gcd (integer points kept):
 * a.x <= -c  <=>  (a/g).x <= floor(-c/g). */
static void atom_reduce(struct aff *e, uint32_t rank)
{
	int64_t g = 0;
	for (uint32_t k = 0; k < rank; k++)
		g = gcd64(g, e->a[k]);
	if (g <= 1)
		return;
	for (uint32_t k = 0; k < rank; k++)
		e->a[k] /= g;
	int64_t q = e->c / g; /* ceil(c / g) = -floor(-c / g) */
	if (e->c % g > 0)
		q++;
	e->c = q;
}

static void make_bool(struct val *v, uint32_t rank, int truth)
{
	memset(v, 0, sizeof(*v));
	v->kind = V_BOOL, v->rank = (uint8_t)rank, v->is_false = !truth;
}

/* Adds atom e <= 0 to the conjunction v; 0 when it holds too many. */
static int conjoin(struct val *v, const struct aff *e0)
{
	struct aff e = *e0;
	atom_reduce(&e, v->rank);
	if (aff_const(&e, v->rank)) {
		if (e.c > 0)
			v->is_false = 1, v->n_atoms = 0;
		return 1;
	}
	if (v->is_false)
		return 1;
	for (uint32_t k = 0; k < v->n_atoms; k++)
		if (aff_eq(&v->atom[k], &e, v->rank))
			return 1;
	if (v->n_atoms == ATOMS)
		return 0;
	v->atom[v->n_atoms++] = e;
	return 1;
}

/* Drops coefficients on dims of size 1 and settles constant atoms. */
static int normalize(struct val *v, const uint8_t one[RANK])
{
	if (v->kind == V_INT) {
		for (uint32_t k = 0; k < v->rank; k++)
			v->e.a[k] = one[k] ? 0 : v->e.a[k];
		return 1;
	}
	if (v->kind != V_BOOL && v->kind != V_FMASK)
		return 0;
	struct val w = *v;
	w.n_atoms = 0;
	for (uint32_t i = 0; i < v->n_atoms; i++) {
		struct aff e = v->atom[i];
		for (uint32_t k = 0; k < v->rank; k++)
			e.a[k] = one[k] ? 0 : e.a[k];
		if (!conjoin(&w, &e))
			return 0;
	}
	*v = w;
	return 1;
}

/* v's coefficients moved to the right of a rank-r value (broadcasting). */
static int align(struct val *v, uint32_t r)
{
	if (v->rank > r)
		return 0;
	uint32_t sh = r - v->rank;
	if (sh) {
		struct aff *es[ATOMS + 1] = {&v->e};
		for (uint32_t i = 0; i < ATOMS; i++)
			es[i + 1] = &v->atom[i];
		for (uint32_t i = 0; i <= ATOMS; i++) {
			memmove(es[i]->a + sh, es[i]->a, v->rank * sizeof(int64_t));
			memset(es[i]->a, 0, sh * sizeof(int64_t));
		}
	}
	v->rank = (uint8_t)r;
	return 1;
}

/* Every affine form of v: f(x) -> f(x with idx[d] -> start + step * idx[d]). */
static int substitute(struct val *v, uint32_t d, int64_t start, int64_t step)
{
	struct aff *es[ATOMS + 1] = {&v->e};
	uint32_t n = 1;
	for (uint32_t i = 0; i < v->n_atoms; i++)
		es[n++] = &v->atom[i];
	for (uint32_t i = 0; i < n; i++) {
		int64_t t;
		if (mul_ov(es[i]->a[d], start, &t) || add_ov(es[i]->c, t, &es[i]->c) || mul_ov(es[i]->a[d], step, &es[i]->a[d]))
			return 0;
	}
	return 1;
}

/* x - y (sign -1) or x + y (sign 1), both V_INT of one rank. */
static int aff_combine(struct aff *r, const struct aff *x, const struct aff *y, int64_t sign, uint32_t rank)
{
	struct aff out = {0}; /* r may be x or y */
	int64_t t;
	if (mul_ov(y->c, sign, &t) || add_ov(x->c, t, &out.c))
		return 0;
	for (uint32_t k = 0; k < rank; k++)
		if (mul_ov(y->a[k], sign, &t) || add_ov(x->a[k], t, &out.a[k]))
			return 0;
	*r = out;
	return 1;
}


static int aff_scale(struct aff *e, int64_t f, uint32_t rank)
{
	if (mul_ov(e->c, f, &e->c))
		return 0;
	for (uint32_t k = 0; k < rank; k++)
		if (mul_ov(e->a[k], f, &e->a[k]))
			return 0;
	return 1;
}

/* The least and the greatest value of e over the elements of a value of
 * these dims; 0 when past int64. */
static int bounds(const struct fs_dim *dims, uint32_t rank, const struct aff *e, int64_t *lo, int64_t *hi)
{
	*lo = *hi = e->c;
	for (uint32_t k = 0; k < rank; k++) {
		int64_t n = dims[k].expr == FS_DIM_CONST ? dims[k].value : LONGEST, t;
		if (!e->a[k] || n <= 1)
			continue;
		if (mul_ov(e->a[k], n - 1, &t) || (t < 0 ? add_ov(*lo, t, lo) : add_ov(*hi, t, hi)))
			return 0;
	}
	return 1;
}

/* v, the value of node, read as a value of the r dims `to` (right-aligned):
 * each dim v varies on is a literal (one other than 1 is never broadcast) or
 * the result's dim itself, not a symbolic dim that may be 1 and broadcast. */
static int unbroadcast(const struct cm *m, uint32_t node, const struct val *v, const struct fs_dim *to, uint32_t r)
{
	uint32_t rank;
	const struct fs_dim *from = dims_of(m, node, &rank);
	if (rank != v->rank || rank > r)
		return 0;
	for (uint32_t k = 0; k < rank; k++) {
		int varies = v->kind == V_INT && v->e.a[k];
		for (uint32_t i = 0; i < v->n_atoms && v->kind != V_INT; i++)
			varies |= v->atom[i].a[k] != 0;
		if (varies && from[k].expr != FS_DIM_CONST && from[k].text != to[k + r - rank].text)
			return 0;
	}
	return 1;
}

/* ---- evaluation ---- */

static const struct val *eval(struct cm *m, uint32_t node);

/* Argument k of n as a value of rank r: a node's (aligned), or a literal
 * integer / boolean as a constant. */
static int operand(struct cm *m, const struct fs_node *n, uint32_t k, uint32_t r, struct val *v)
{
	const struct fs_arg *a = fs_mine_arg(m->c->g, n, k);
	memset(v, 0, sizeof(*v));
	if (!a)
		return 0;
	if (a->kind == FS_ARG_NODE) {
		uint32_t nr;
		const struct fs_dim *to = dims_of(m, (uint32_t)(n - m->c->g->nodes), &nr);
		*v = *eval(m, a->node);
		return v->kind != V_UNKNOWN && nr == r && unbroadcast(m, a->node, v, to, r) && align(v, r);
	}
	v->rank = (uint8_t)r;
	if (a->kind == FS_ARG_INT) {
		v->kind = V_INT, v->e.c = a->i;
		return 1;
	}
	if (a->kind == FS_ARG_BOOL) {
		make_bool(v, r, a->i != 0);
		return 1;
	}
	return 0;
}

/* An argument n leaves out is its default: an OpOverload's are printed
 * positionally; a Python callable's or a packet's may be keywords, which
 * the dump never prints. */
static int omits_defaults(const struct cm *m, const struct fs_node *n)
{
	return fs_scan_str(m->c->s, m->c->s->ops[n->op].overload)[0] != '\0';
}

/* A literal integer argument (absent or None: dflt); 0 when it is something else. */
static int lit(const struct cm *m, const struct fs_node *n, uint32_t k, int64_t dflt, int64_t *out)
{
	const struct fs_arg *a = fs_mine_arg(m->c->g, n, k);
	if ((!a && omits_defaults(m, n)) || (a && a->kind == FS_ARG_NONE)) {
		*out = dflt;
		return 1;
	}
	if (!a || a->kind != FS_ARG_INT)
		return 0;
	*out = a->i;
	return 1;
}

/* A dim argument normalized against rank r. */
static int dim_arg(const struct cm *m, const struct fs_node *n, uint32_t k, int64_t dflt, uint32_t r, uint32_t *d)
{
	int64_t x;
	if (!lit(m, n, k, dflt, &x) || x < -(int64_t)r || x >= (int64_t)r)
		return 0;
	*d = (uint32_t)(x < 0 ? x + r : x);
	return 1;
}

static int is(const struct cm *m, const struct fs_node *n, const char *key)
{
	return fs_mine_op_is(m->c->s, n->op, key);
}

static int any_of(const struct cm *m, const struct fs_node *n, const char *const *keys)
{
	for (; *keys; keys++)
		if (is(m, n, *keys))
			return 1;
	return 0;
}

static int arange(const struct cm *m, const struct fs_node *n, struct val *v)
{
	const char *ov = fs_scan_str(m->c->s, m->c->s->ops[n->op].overload);
	int64_t start = 0, step = 1;
	if (!strcmp(ov, "start") || !strcmp(ov, "start_step")) {
		if (!lit(m, n, 0, 0, &start) || (!strcmp(ov, "start_step") && !lit(m, n, 2, 1, &step)))
			return 0;
	} else if (strcmp(ov, "default"))
		return 0;
	v->kind = V_INT, v->e.c = start, v->e.a[0] = step;
	return v->rank == 1;
}

/* x + y, x - y (alpha 1), x * literal */
static int arith(struct cm *m, const struct fs_node *n, struct val *v)
{
	struct val x, y;
	int64_t alpha;
	if (!operand(m, n, 0, v->rank, &x) || !operand(m, n, 1, v->rank, &y) || x.kind != V_INT || y.kind != V_INT)
		return 0;
	v->kind = V_INT;
	if (is(m, n, "mul")) {
		if (aff_const(&y.e, v->rank))
			return v->e = x.e, aff_scale(&v->e, y.e.c, v->rank);
		if (aff_const(&x.e, v->rank))
			return v->e = y.e, aff_scale(&v->e, x.e.c, v->rank);
		return 0;
	}
	if (!lit(m, n, 2, 1, &alpha) || alpha != 1)
		return 0;
	return aff_combine(&v->e, &x.e, &y.e, is(m, n, "sub") ? -1 : 1, v->rank);
}

/* Comparisons of two integers (or of two constant booleans). */
static int compare(struct cm *m, const struct fs_node *n, struct val *v)
{
	struct val x, y;
	if (!operand(m, n, 0, v->rank, &x) || !operand(m, n, 1, v->rank, &y))
		return 0;
	make_bool(v, v->rank, 1);
	int eq = is(m, n, "eq"), ne = is(m, n, "ne");
	if (x.kind == V_BOOL && y.kind == V_BOOL && (eq || ne) && !x.n_atoms && !y.n_atoms) {
		v->is_false = (x.is_false == y.is_false) != eq;
		return 1;
	}
	struct aff d = {0};
	if (x.kind != V_INT || y.kind != V_INT || !aff_combine(&d, &x.e, &y.e, -1, v->rank))
		return 0;
	/* both sides are compared in a common dtype, a literal in the tensor's
	 * own (uint8 0 > -1 is 0 > 255): each side exact in every side's dtype */
	uint32_t r;
	const struct fs_dim *dims = dims_of(m, (uint32_t)(n - m->c->g->nodes), &r);
	for (uint32_t k = 0; k < 2; k++) {
		const struct fs_arg *a = fs_mine_arg(m->c->g, n, k);
		int64_t lo, hi, lo2, hi2;
		if (a->kind != FS_ARG_NODE)
			continue;
		if (!bounds(dims, r, &x.e, &lo, &hi) || !bounds(dims, r, &y.e, &lo2, &hi2) ||
		    !fits(dtype(m, a->node), lo, hi) || !fits(dtype(m, a->node), lo2, hi2))
			return 0;
	}
	if (eq || ne) {
		if (!aff_const(&d, v->rank))
			return 0;
		v->is_false = (d.c == 0) != eq;
		return 1;
	}
	if (is(m, n, "ge") || is(m, n, "gt")) /* x >= y: y - x <= 0 */
		if (!aff_scale(&d, -1, v->rank))
			return 0;
	if ((is(m, n, "lt") || is(m, n, "gt")) && add_ov(d.c, 1, &d.c)) /* integers: x < y <=> x - y + 1 <= 0 */
		return 0;
	return conjoin(v, &d);
}

static int negate(const struct val *x, struct val *v)
{
	make_bool(v, x->rank, x->is_false);
	if (x->is_false || !x->n_atoms)
		return 1;
	if (x->n_atoms != 1)
		return 0;
	struct aff e = x->atom[0]; /* not (e <= 0) <=> -e + 1 <= 0 */
	return aff_scale(&e, -1, x->rank) && !add_ov(e.c, 1, &e.c) && conjoin(v, &e);
}

static int logic(struct cm *m, const struct fs_node *n, struct val *v)
{
	static const char *const ands[] = {"__and__", "bitwise_and", "logical_and", NULL};
	struct val x, y;
	if (!operand(m, n, 0, v->rank, &x) || x.kind != V_BOOL)
		return 0;
	if (is(m, n, "logical_not") || is(m, n, "bitwise_not"))
		return negate(&x, v);
	if (!operand(m, n, 1, v->rank, &y) || y.kind != V_BOOL)
		return 0;
	if (any_of(m, n, ands)) {
		*v = x;
		for (uint32_t i = 0; i < y.n_atoms; i++)
			if (!conjoin(v, &y.atom[i]))
				return 0;
		v->is_false |= y.is_false;
		return 1;
	}
	/* or: only with a constant side */
	if ((!x.is_false && !x.n_atoms) || y.is_false)
		return *v = x, 1;
	if ((!y.is_false && !y.n_atoms) || x.is_false)
		return *v = y, 1;
	return 0;
}

/* The value of argument k of n, a node of rank r exactly (no broadcasting). */
static int node_operand(struct cm *m, const struct fs_node *n, uint32_t k, uint32_t r, struct val *v)
{
	const struct fs_arg *a = fs_mine_arg(m->c->g, n, k);
	if (!a || a->kind != FS_ARG_NODE)
		return 0;
	*v = *eval(m, a->node);
	return v->kind != V_UNKNOWN && v->rank == r;
}

/* Same values: casts within a kind, copies, views that keep the shape, an
 * expand (broadcasting), and any view of a constant. */
static int same(struct cm *m, const struct fs_node *n, uint32_t node, struct val *v)
{
	static const char *const copies[] = {"cast", "clone", "alias", "detach", "lift_fresh_copy", "contiguous", NULL};
	const struct fs_graph *g = m->c->g;
	const struct fs_arg *a = fs_mine_arg(g, n, 0);
	uint8_t rank = v->rank;
	struct val x;
	if (!a || a->kind != FS_ARG_NODE)
		return 0;
	if (!is(m, n, "cast") && dtype(m, a->node) != dtype(m, node))
		return 0; /* view.dtype reinterprets the bytes */
	if (is(m, n, "expand")) {
		if (!operand(m, n, 0, rank, &x))
			return 0;
	} else {
		x = *eval(m, a->node);
		if (x.kind == V_UNKNOWN)
			return 0;
		int constant = x.kind == V_INT ? aff_const(&x.e, x.rank) : (x.kind == V_BOOL && !x.n_atoms);
		int keeps = g->types[g->nodes[a->node].out].shape == g->types[n->out].shape;
		if (!keeps && (!constant || any_of(m, n, copies)))
			return 0;
		if (!keeps) { /* a reshape of a constant */
			x.rank = rank;
			memset(x.e.a, 0, sizeof(x.e.a));
		}
	}
	enum fs_dtype to = dtype(m, node);
	if ((x.kind == V_INT && is_int_dtype(to)) || (x.kind == V_BOOL && to == FS_DT_BOOL) ||
	    (x.kind == V_FMASK && is_float_dtype(to)))
		return *v = x, 1;
	if (x.kind == V_INT && to == FS_DT_BOOL && aff_const(&x.e, rank))
		return make_bool(v, rank, x.e.c != 0), 1;
	if (x.kind == V_BOOL && is_int_dtype(to) && !x.n_atoms) {
		memset(v, 0, sizeof(*v));
		v->kind = V_INT, v->rank = rank, v->e.c = !x.is_false;
		return 1;
	}
	return 0;
}

/* new_ones, zeros, full, ...: a constant of the node's dtype */
static int creation(const struct cm *m, const struct fs_node *n, uint32_t node, struct val *v)
{
	const struct fs_arg *a = NULL;
	int64_t value = 0;
	if (is(m, n, "new_ones") || is(m, n, "ones") || is(m, n, "ones_like"))
		value = 1;
	else if (is(m, n, "full") || is(m, n, "new_full") || is(m, n, "full_like")) {
		a = fs_mine_arg(m->c->g, n, 1);
		if (!a || (a->kind != FS_ARG_INT && a->kind != FS_ARG_BOOL))
			return 0;
		value = a->i;
	}
	enum fs_dtype d = dtype(m, node);
	if (d == FS_DT_BOOL)
		return make_bool(v, v->rank, value != 0), 1;
	if (!is_int_dtype(d))
		return 0;
	v->kind = V_INT, v->e.c = value;
	return 1;
}

static int unsqueeze(struct cm *m, const struct fs_node *n, struct val *v)
{
	uint32_t d;
	if (!v->rank || !dim_arg(m, n, 1, 0, v->rank, &d))
		return 0;
	struct val x;
	if (!node_operand(m, n, 0, v->rank - 1, &x))
		return 0;
	struct aff *es[ATOMS + 1] = {&x.e};
	for (uint32_t i = 0; i < ATOMS; i++)
		es[i + 1] = &x.atom[i];
	for (uint32_t i = 0; i <= ATOMS; i++) {
		memmove(es[i]->a + d + 1, es[i]->a + d, (v->rank - 1 - d) * sizeof(int64_t));
		es[i]->a[d] = 0;
	}
	x.rank = v->rank;
	return *v = x, 1;
}

static int slice(struct cm *m, const struct fs_node *n, struct val *v)
{
	uint32_t d;
	int64_t start, step;
	struct val x;
	if (!dim_arg(m, n, 1, 0, v->rank, &d) || !lit(m, n, 2, 0, &start) || start < 0 || !lit(m, n, 4, 1, &step) ||
	    step < 1 || !node_operand(m, n, 0, v->rank, &x) || !substitute(&x, d, start, step))
		return 0;
	return *v = x, 1;
}

/* diff(x, 1, dim, prepend): x[k] - x[k-1], x[-1] = prepend; constant when x
 * is affine along dim and prepend continues it. */
static int diff(struct cm *m, const struct fs_node *n, struct val *v)
{
	uint32_t d;
	int64_t order;
	struct val x, p;
	const struct fs_arg *app = fs_mine_arg(m->c->g, n, 4), *pre = fs_mine_arg(m->c->g, n, 3);
	if (!lit(m, n, 1, 1, &order) || order != 1 || !dim_arg(m, n, 2, -1, v->rank, &d) || (!app && !omits_defaults(m, n)) ||
	    (app && app->kind != FS_ARG_NONE) || !node_operand(m, n, 0, v->rank, &x) || x.kind != V_INT)
		return 0;
	if (pre && pre->kind != FS_ARG_NONE) {
		struct aff want = x.e;
		uint32_t pr;
		uint8_t one[RANK];
		/* one element along dim: a longer prepend's own differences come first */
		if (!node_operand(m, n, 3, v->rank, &p) || p.kind != V_INT || !shape(m, pre->node, &pr, one) || !one[d] ||
		    __builtin_sub_overflow(want.c, x.e.a[d], &want.c))
			return 0;
		want.a[d] = 0, p.e.a[d] = 0;
		if (!aff_eq(&want, &p.e, v->rank))
			return 0;
	}
	memset(&v->e, 0, sizeof(v->e));
	v->kind = V_INT, v->e.c = x.e.a[d];
	return 1;
}

/* cat's pieces along d: each one's affine value, its offset and size along d (-1: symbolic) */
struct cat_pieces {
	uint32_t n;
	struct aff v[8]; /* the pieces' values (forms only: evaluation recurses from here) */
	int64_t offset[8], size[8];
};

/* The pieces of cat's list: affine integer tensors of the result's rank; only the
 * last may have a symbolic size along d. */
static int cat_pieces_read(struct cm *m, const struct fs_arg *list, uint32_t d, uint32_t rank, struct cat_pieces *p)
{
	const struct fs_graph *g = m->c->g;
	uint32_t first = (uint32_t)(list - g->args) + 1, end = first + list->span - 1;
	p->n = 0;
	for (uint32_t a = first; a < end; a += g->args[a].span) {
		uint32_t r, k = p->n;
		uint8_t one[RANK];
		if (g->args[a].kind != FS_ARG_NODE || k == 8 || !shape(m, g->args[a].node, &r, one) || r != rank)
			return 0;
		const struct val *pv = eval(m, g->args[a].node);
		if (pv->kind != V_INT)
			return 0;
		p->v[k] = pv->e;
		const struct fs_dim *dd = &dims_of(m, g->args[a].node, &r)[d];
		p->size[k] = dd->expr == FS_DIM_CONST ? dd->value : -1;
		p->offset[k] = k ? p->offset[k - 1] + p->size[k - 1] : 0;
		if (p->size[k] < 0 && a + g->args[a].span < end)
			return 0; /* a piece of symbolic size before the last */
		if (p->size[k] > FS_MAX_DIM)
			return 0;
		p->n++;
	}
	return 1;
}

/* The one slope along d of every piece longer than 1 (all of size 1: the step
 * between the first two); *base is the first piece with that slope. */
static int cat_slope(const struct cat_pieces *p, uint32_t d, struct aff *base)
{
	int64_t slope = 0;
	int have = 0;
	for (uint32_t i = 0; i < p->n; i++)
		if (p->size[i] != 1) {
			if (have && p->v[i].a[d] != slope)
				return 0;
			slope = p->v[i].a[d], have = 1;
		}
	if (!have && p->n >= 2 && __builtin_sub_overflow(p->v[1].c, p->v[0].c, &slope)) /* all of size 1 */
		return 0;
	*base = p->v[0];
	base->a[d] = slope;
	return 1;
}

/* cat along d of affine pieces that continue one affine function: every
 * piece before the last has a literal size along d. */
static int cat(struct cm *m, const struct fs_node *n, struct val *v)
{
	const struct fs_arg *list = fs_mine_arg(m->c->g, n, 0);
	uint32_t d;
	struct cat_pieces p;
	struct aff base;
	if (!list || list->kind != FS_ARG_LIST || list->span < 2 || !dim_arg(m, n, 1, 0, v->rank, &d) ||
	    !cat_pieces_read(m, list, d, v->rank, &p) || !cat_slope(&p, d, &base))
		return 0;
	for (uint32_t i = 0; i < p.n; i++) { /* piece i is base shifted by its offset along d */
		struct aff want = base;
		int64_t t;
		if (mul_ov(base.a[d], p.offset[i], &t) || add_ov(base.c, t, &want.c))
			return 0;
		struct aff got = p.v[i];
		want.a[d] = 0, got.a[d] = 0;
		if (!aff_eq(&want, &got, v->rank))
			return 0;
	}
	v->kind = V_INT, v->e = base;
	return 1;
}

static int cumsum(struct cm *m, const struct fs_node *n, struct val *v)
{
	uint32_t d;
	struct val x;
	int64_t c;
	if (!dim_arg(m, n, 1, 0, v->rank, &d) || !node_operand(m, n, 0, v->rank, &x))
		return 0;
	if (x.kind == V_INT && aff_const(&x.e, x.rank))
		c = x.e.c;
	else if (x.kind == V_BOOL && !x.n_atoms)
		c = !x.is_false;
	else
		return 0;
	memset(&v->e, 0, sizeof(v->e));
	v->kind = V_INT, v->e.c = c, v->e.a[d] = c; /* c * (idx + 1) */
	return 1;
}

/* x[i0, i1, ...]: the leading dims of x indexed by broadcast integer
 * tensors; the result's leading dims are theirs, then x's remaining dims. */
static int gather(struct cm *m, const struct fs_node *n, struct val *v)
{
	const struct fs_graph *g = m->c->g;
	const struct fs_arg *x0 = fs_mine_arg(g, n, 0), *list = fs_mine_arg(g, n, 1);
	uint32_t xr, lead, k = 0;
	uint8_t one[RANK];
	if (!x0 || x0->kind != FS_ARG_NODE || !list || list->kind != FS_ARG_LIST || !shape(m, x0->node, &xr, one))
		return 0;
	struct val x = *eval(m, x0->node);
	if (x.kind != V_INT && x.kind != V_BOOL)
		return 0;
	uint32_t first = (uint32_t)(list - g->args) + 1, end = first + list->span - 1;
	for (uint32_t a = first; a < end; a += g->args[a].span)
		k++;
	if (!k || k > xr || v->rank < xr - k)
		return 0;
	lead = v->rank - (xr - k);
	int constant = x.kind == V_INT ? aff_const(&x.e, xr) : !x.n_atoms;
	if (x.kind == V_BOOL && !constant)
		return 0;
	struct aff r = {0};
	r.c = x.e.c;
	uint32_t j = 0, nr;
	const struct fs_dim *to = dims_of(m, (uint32_t)(n - g->nodes), &nr);
	for (uint32_t a = first; a < end; a += g->args[a].span, j++) {
		if (g->args[a].kind != FS_ARG_NODE)
			return 0;
		uint32_t tn = g->args[a].node, tr;
		const struct fs_dim *td = dims_of(m, tn, &tr);
		struct val t = *eval(m, tn);
		int64_t lo, hi;
		/* long or int indices (a uint8 one is a mask), broadcast as their
		 * own dims; a negative one counts from the end where x varies */
		if (t.kind != V_INT || (dtype(m, tn) != FS_DT_I64 && dtype(m, tn) != FS_DT_I32) || nr != v->rank ||
		    !unbroadcast(m, tn, &t, to, lead) || (!constant && x.e.a[j] && (!bounds(td, tr, &t.e, &lo, &hi) || lo < 0)) ||
		    !align(&t, lead))
			return 0;
		if (!constant) { /* r += x.a[j] * t */
			struct aff s = t.e;
			if (!aff_scale(&s, x.e.a[j], lead) || !aff_combine(&r, &r, &s, 1, lead))
				return 0;
		}
	}
	for (uint32_t q = k; q < xr; q++)
		r.a[lead + q - k] = constant ? 0 : x.e.a[q];
	if (x.kind == V_BOOL)
		return make_bool(v, v->rank, !x.is_false), 1;
	v->kind = V_INT, v->e = r;
	return 1;
}

/* where(cond, 0, -inf) / where(cond, -inf, 0): an additive float mask */
static int where(struct cm *m, const struct fs_node *n, uint32_t node, struct val *v)
{
	const struct fs_arg *a = fs_mine_arg(m->c->g, n, 1), *b = fs_mine_arg(m->c->g, n, 2);
	struct val cond;
	if (!is_float_dtype(dtype(m, node)) || !a || !b || !operand(m, n, 0, v->rank, &cond) || cond.kind != V_BOOL)
		return 0;
	int a0 = (a->kind == FS_ARG_FLOAT && a->f == 0) || (a->kind == FS_ARG_INT && a->i == 0);
	int b0 = (b->kind == FS_ARG_FLOAT && b->f == 0) || (b->kind == FS_ARG_INT && b->i == 0);
	int ainf = a->kind == FS_ARG_FLOAT && isinf(a->f) && a->f < 0, binf = b->kind == FS_ARG_FLOAT && isinf(b->f) && b->f < 0;
	if (a0 && binf)
		*v = cond;
	else if (ainf && b0) {
		if (!negate(&cond, v))
			return 0;
	} else
		return 0;
	v->kind = V_FMASK;
	return 1;
}

/* The value of node n by its op's rule (a dispatch on the op key); 0 where no rule
 * proves one. */
static int op_value(struct cm *m, const struct fs_node *n, uint32_t node, struct val *v)
{
	static const char *const same_keys[] = {"cast", "clone", "alias", "detach", "lift_fresh_copy", "contiguous",
						"expand", "view", "reshape", "_unsafe_view", "squeeze", NULL};
	static const char *const logic_keys[] = {"__and__", "bitwise_and", "logical_and", "__or__", "bitwise_or",
						 "logical_or", "logical_not", "bitwise_not", NULL};
	static const char *const cmp_keys[] = {"eq", "ne", "lt", "le", "gt", "ge", NULL};
	static const char *const make_keys[] = {"new_ones", "new_zeros", "ones", "zeros", "ones_like", "zeros_like",
						"full", "new_full", "full_like", NULL};
	if (is(m, n, "arange"))
		return is_int_dtype(dtype(m, node)) && arange(m, n, v);
	if (is(m, n, "add") || is(m, n, "sub") || is(m, n, "mul"))
		return is_int_dtype(dtype(m, node)) && arith(m, n, v);
	if (any_of(m, n, cmp_keys))
		return compare(m, n, v);
	if (any_of(m, n, logic_keys))
		return logic(m, n, v);
	if (any_of(m, n, make_keys))
		return creation(m, n, node, v);
	if (is(m, n, "unsqueeze"))
		return unsqueeze(m, n, v);
	if (is(m, n, "slice"))
		return slice(m, n, v);
	if (any_of(m, n, same_keys))
		return same(m, n, node, v);
	if (is(m, n, "diff"))
		return diff(m, n, v);
	if (is(m, n, "cat"))
		return is_int_dtype(dtype(m, node)) && cat(m, n, v);
	if (is(m, n, "cumsum"))
		return is_int_dtype(dtype(m, node)) && cumsum(m, n, v);
	if (is(m, n, "index"))
		return gather(m, n, v);
	if (is(m, n, "where"))
		return where(m, n, node, v);
	return 0;
}

/* node's value, V_UNKNOWN unless its op's rule proves one that its dtype holds */
static void compute(struct cm *m, uint32_t node, struct val *v)
{
	const struct fs_node *n = &m->c->g->nodes[node];
	uint32_t rank;
	uint8_t one[RANK];
	memset(v, 0, sizeof(*v));
	if (n->kind != FS_NODE_CALL || n->n_out != 1 || !shape(m, node, &rank, one) || m->written[m->root[node]])
		return;
	v->rank = (uint8_t)rank;
	int ok = op_value(m, n, node, v);
	int64_t lo, hi;
	uint32_t r;
	const struct fs_dim *dims = dims_of(m, node, &r);
	if (!ok || !normalize(v, one) || (v->kind == V_BOOL && dtype(m, node) != FS_DT_BOOL) ||
	    (v->kind == V_INT && (!bounds(dims, r, &v->e, &lo, &hi) || !fits(dtype(m, node), lo, hi)))) {
		memset(v, 0, sizeof(*v));
		v->kind = V_UNKNOWN;
	}
}

static const struct val *eval(struct cm *m, uint32_t node)
{
	static const struct val unknown;
	if (m->memo[node])
		return &m->vals[m->memo[node] - 1];
	if (!m->budget)
		return &unknown; /* not memoized: another mask may still prove it */
	m->budget--;
	struct val v;
	compute(m, node, &v);
	FS_GROW(m->vals, m->cap_vals, m->n_vals + 1);
	m->vals[m->n_vals++] = v;
	m->memo[node] = m->n_vals;
	return &m->vals[m->n_vals - 1];
}

/* ---- the masks ---- */

/* The attention node reads a mask as argument 3 and is not causal already:
 * (q, k, v, attn_mask, dropout_p, is_causal, ...) by the op table. */
static uint32_t mask_of(const struct cm *m, uint32_t i)
{
	const struct fs_graph *g = m->c->g;
	const struct fs_node *n = &g->nodes[i];
	if (n->kind != FS_NODE_CALL || !(m->c->s->ops[n->op].flags & FS_OPF_SDPA_ARGS))
		return UINT32_MAX;
	const struct fs_arg *mask = fs_mine_arg(g, n, 3), *causal = fs_mine_arg(g, n, 5);
	if (!mask || mask->kind != FS_ARG_NODE)
		return UINT32_MAX;
	if (causal ? !(causal->kind == FS_ARG_BOOL && !causal->i) : !omits_defaults(m, n))
		return UINT32_MAX;
	for (uint32_t k = 0; k < n->n_top; k++) { /* the mask is no other operand */
		const struct fs_arg *a = fs_mine_arg(g, n, k);
		if (k != 3 && a->kind == FS_ARG_NODE && a->node == mask->node)
			return UINT32_MAX;
	}
	return mask->node;
}

/* The mask's last two dims are the query's and the key's lengths: one
 * that may be 1 at runtime would be broadcast over the queries or keys. */
static int mask_fits(const struct cm *m, uint32_t i, uint32_t mask)
{
	const struct fs_graph *g = m->c->g;
	const struct fs_arg *q = fs_mine_arg(g, &g->nodes[i], 0), *k = fs_mine_arg(g, &g->nodes[i], 1);
	uint32_t mr, qr, kr;
	const struct fs_dim *md = dims_of(m, mask, &mr);
	if (!q || !k || q->kind != FS_ARG_NODE || k->kind != FS_ARG_NODE || mr < 2)
		return 0;
	const struct fs_dim *qd = dims_of(m, q->node, &qr), *kd = dims_of(m, k->node, &kr);
	return qr >= 2 && kr >= 2 && md[mr - 2].text == qd[qr - 2].text && md[mr - 1].text == kd[kr - 2].text;
}

/* How many leading tensor arguments op writes in place: PyTorch's trailing
 * '_' writes its first (add_, copy_, index_put_), AutoDeploy's _inplace ops
 * any of theirs. Every later reader of them, and of each view of their
 * storage, sees other values. */
static uint32_t in_place(const struct fs_scan *s, uint32_t op)
{
	const char *name = fs_scan_str(s, s->ops[op].name);
	size_t len = strlen(name);
	if (len >= 8 && !strcmp(name + len - 8, "_inplace"))
		return UINT32_MAX;
	return len >= 2 && name[len - 1] == '_' && name[len - 2] != '_';
}

/* An op whose result may share its first argument's storage: a view, a cast
 * or contiguous (which may return the input), an in-place op, and any op
 * the table does not know (aten.diagonal is a view too). */
static int may_alias(const struct fs_scan *s, uint32_t op)
{
	const struct fs_op *o = &s->ops[op];
	return !o->known || (o->flags & FS_OPF_INDEX_ONLY) || o->cls == FS_OPC_CAST || fs_mine_op_is(s, op, "contiguous") ||
	       in_place(s, op);
}

/* m->root and m->written (args precede their readers: one pass). */
static void find_writes(struct cm *m)
{
	const struct fs_scan *s = m->c->s;
	const struct fs_graph *g = m->c->g;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct fs_node *n = &g->nodes[i];
		uint32_t in = n->kind == FS_NODE_CALL ? fs_mine_first_input(g, n) : UINT32_MAX;
		m->root[i] = in == UINT32_MAX || !may_alias(s, n->op) ? i : in < i ? m->root[in] : in;
		uint32_t w = n->kind == FS_NODE_CALL ? in_place(s, n->op) : 0;
		for (uint32_t k = 0; k < n->n_args && w; k++) {
			const struct fs_arg *a = &g->args[n->args + k];
			if (a->kind == FS_ARG_NODE)
				m->written[a->node < i ? m->root[a->node] : a->node] = 1, w--;
		}
	}
}

/* Exactly "idx[r-1] <= idx[r-2]": key j at most query i. */
static int causal(const struct val *v)
{
	if ((v->kind != V_BOOL && v->kind != V_FMASK) || v->is_false || v->n_atoms != 1 || v->rank < 2)
		return 0;
	struct aff want = {0};
	want.a[v->rank - 1] = 1, want.a[v->rank - 2] = -1;
	return aff_eq(&want, &v->atom[0], v->rank);
}

/* Every attention whose mask is exactly causal: rewritten[i] = its mask + 1, a cleanup
 * each; returns how many. */
static uint32_t find_causal(struct cm *m, uint32_t *rewritten)
{
	struct ctx *c = m->c;
	uint32_t n_rewritten = 0;
	for (uint32_t i = 0; i < c->g->n_nodes; i++) {
		uint32_t mask = mask_of(m, i);
		if (mask == UINT32_MAX)
			continue;
		m->budget = CONE;
		if (!causal(eval(m, mask)) || !mask_fits(m, i, mask))
			continue;
		rewritten[i] = mask + 1, n_rewritten++;
		struct fs_mine *mine = c->m;
		FS_GROW(mine->cleanups, mine->cap_cleanups, mine->n_cleanups + 1);
		mine->cleanups[mine->n_cleanups++] = (struct fs_cleanup){FS_CLEAN_CAUSAL_MASK, i, mask};
	}
	return n_rewritten;
}

/* What goes with the masks: walking back from them in reverse file order
 * (readers before what they read), a node goes when every reader goes,
 * is an assert (a side effect that writes nothing: copy_ keeps it), or
 * is a rewritten attention reading it as its mask only; what a node that
 * goes reads is looked at in turn (any argument, evaluated or not). */
static void free_mask_producers(struct ctx *c, const uint32_t *rewritten)
{
	const struct fs_graph *g = c->g;
	uint8_t *upstream = fs_xcalloc(g->n_nodes + 1, 1), *freed = fs_xcalloc(g->n_nodes + 1, 1);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (rewritten[i])
			upstream[rewritten[i] - 1] = 1;
	for (uint32_t x = g->n_nodes; x-- > 0;) {
		const struct fs_node *nx = &g->nodes[x];
		if (!upstream[x] || nx->kind != FS_NODE_CALL || (nx->flags & (FS_NODE_OUTPUT | FS_NODE_SIDE_EFFECT)))
			continue;
		int goes = nx->n_real_users > 0;
		for (uint32_t u = 0; u < nx->n_users && goes; u++) {
			uint32_t y = g->users[nx->users + u];
			goes = freed[y] || (!fs_mine_is_real_user(g, y) && !in_place(c->s, g->nodes[y].op)) || rewritten[y] == x + 1;
		}
		if (!goes)
			continue;
		freed[x] = 1, c->role[x] = ROLE_NONE, c->m->n_freed++;
		for (uint32_t k = nx->args; k < nx->args + nx->n_args; k++)
			if (g->args[k].kind == FS_ARG_NODE && g->args[k].node < x)
				upstream[g->args[k].node] = 1;
	}
	free(upstream);
	free(freed);
}

void fs_mine_causal_masks(struct ctx *c)
{
	const struct fs_graph *g = c->g;
	struct cm m = {.c = c, .memo = fs_xcalloc(g->n_nodes + 1, sizeof(uint32_t)),
		       .root = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t)), .written = fs_xcalloc(g->n_nodes + 1, 1)};
	uint32_t *rewritten = fs_xcalloc(g->n_nodes + 1, sizeof(uint32_t)); /* per attention: its mask + 1 */
	find_writes(&m);
	if (find_causal(&m, rewritten))
		free_mask_producers(c, rewritten);
	free(rewritten);
	free(m.vals);
	free(m.memo);
	free(m.root);
	free(m.written);
}
