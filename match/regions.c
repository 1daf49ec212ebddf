/*
 * regions.c: maximal fusible regions of one graph (called by mine.c).
 *
 * 1. Roles: math (elementwise, cast, fusible reductions, norm composites),
 *    copies (cat, clone, contiguous), index-only views, anchors (the rest).
 * 2. Grouping, consumers first (reverse file order): a math / copy / view
 *    node joins the region of its consumers when every real consumer is in
 *    that one region and it is not a graph output. So an intermediate never
 *    has a consumer outside its region (side-effect-only users do not count),
 *    the region stays acyclic, and views between fused ops are absorbed.
 * 3. Motif split: where a catalog chain sits inside a larger region (RoPE
 *    followed by the attention's cast and scale in a decomposed graph), it is
 *    carved out and the rest re-split into connected parts, so counts do not
 *    depend on the export flavour. A chain is never carved out of a larger
 *    normalisation: when a reduction outside it is used on its own source
 *    (x - mean(x) of a hand-written LayerNorm) and feeds the chain's
 *    reduction, the region stays whole and is named whole.
 * 4. A canonical signature per region (see region_signature).
 */
#include "mine_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- roles and layout ------------------------------------------------------- */

static uint8_t role_of(const struct fs_scan *s, const struct fs_node *n)
{
	if (n->kind != FS_NODE_CALL || (n->flags & FS_NODE_SIDE_EFFECT))
		return ROLE_NONE;
	const struct fs_op *op = &s->ops[n->op];
	switch (op->cls) {
	case FS_OPC_ELEMENTWISE:
	case FS_OPC_CAST:
	case FS_OPC_NORM:
		return ROLE_MATH;
	case FS_OPC_REDUCTION:
		return (op->flags & FS_OPF_NOFUSE) ? ROLE_ANCHOR : ROLE_MATH;
	case FS_OPC_VIEW:
		return (op->flags & FS_OPF_INDEX_ONLY) ? ROLE_VIEW : ROLE_COPY;
	default:
		return ROLE_ANCHOR;
	}
}

/* slice(x, dim, 0, INT64_MAX) selects everything. */
static int full_slice(const struct fs_graph *g, const struct fs_node *n)
{
	const struct fs_arg *st = fs_mine_arg(g, n, 2), *en = fs_mine_arg(g, n, 3);
	return st && en && st->kind == FS_ARG_INT && st->i == 0 && en->kind == FS_ARG_INT &&
	       en->i == INT64_MAX;
}

static int same_shape(const struct fs_graph *g, uint32_t a, uint32_t b)
{
	return g->types[g->nodes[a].out].shape == g->types[g->nodes[b].out].shape;
}

/* Reshaping in to out only splits dims (each of in's is the product of
 * consecutive dims of out, or the same dim): a view whatever the strides. */
static int splits_only(const struct ctx *c, uint32_t in, uint32_t out)
{
	const struct fs_types *T = &c->s->types;
	const struct fs_shape *a = &T->shapes[c->g->types[c->g->nodes[in].out].shape];
	const struct fs_shape *b = &T->shapes[c->g->types[c->g->nodes[out].out].shape];
	if (a->kind != FS_SHAPE_DIMS || b->kind != FS_SHAPE_DIMS)
		return 0;
	uint32_t j = 0;
	for (uint32_t i = 0; i < a->rank; i++) {
		const struct fs_dim *da = &T->dims[a->dims + i];
		if (j < b->rank && T->dims[b->dims + j].text == da->text) {
			j++;
			continue;
		}
		if (da->expr != FS_DIM_CONST || da->value < 1)
			return 0;
		int64_t prod = 1;
		while (j < b->rank && prod < da->value && T->dims[b->dims + j].expr == FS_DIM_CONST && T->dims[b->dims + j].value >= 1)
			prod *= T->dims[b->dims + j++].value;
		if (prod != da->value)
			return 0;
	}
	while (j < b->rank && T->dims[b->dims + j].expr == FS_DIM_CONST && T->dims[b->dims + j].value == 1)
		j++;
	return j == b->rank;
}

/* Whether a view's output is still laid out contiguously (a reshape of a
 * non-contiguous value copies; a contiguous() of a contiguous one is free). */
static uint8_t view_contig(const struct ctx *c, uint32_t i)
{
	const struct fs_node *n = &c->g->nodes[i];
	uint32_t in = fs_mine_first_input(c->g, n);
	uint8_t base = in == UINT32_MAX ? 1 : c->contig[in];
	const struct fs_scan *s = c->s;
	if (fs_mine_op_is(s, n->op, "transpose") || fs_mine_op_is(s, n->op, "permute") || fs_mine_op_is(s, n->op, "t") ||
	    fs_mine_op_is(s, n->op, "movedim") || fs_mine_op_is(s, n->op, "as_strided"))
		return 0;
	if (fs_mine_op_is(s, n->op, "expand") || fs_mine_op_is(s, n->op, "expand_as"))
		return in != UINT32_MAX && same_shape(c->g, in, i) ? base : 0;
	if (fs_mine_op_is(s, n->op, "slice") || fs_mine_op_is(s, n->op, "narrow") || fs_mine_op_is(s, n->op, "select")) {
		const struct fs_arg *d = fs_mine_arg(c->g, n, 1);
		int dim0 = d && d->kind == FS_ARG_INT && d->i == 0;
		return (dim0 || (fs_mine_op_is(s, n->op, "slice") && full_slice(c->g, n))) ? base : 0;
	}
	if (fs_mine_op_is(s, n->op, "reshape")) /* a view as it is (same shape, split dims), else contiguous (a copy if it must) */
		return in != UINT32_MAX && (same_shape(c->g, in, i) || splits_only(c, in, i)) ? base : 1;
	return base;
}

void fs_mine_roles(struct ctx *c)
{
	const struct fs_graph *g = c->g;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		c->role[i] = role_of(c->s, &g->nodes[i]);
		c->contig[i] = c->role[i] == ROLE_VIEW ? view_contig(c, i) : 1;
	}
}

/* A node launches a kernel when unfused: math and copies (a contiguous() of
 * a contiguous value excepted), and a reshape that has to copy (of a value
 * not contiguous, merging dims). */
int fs_mine_is_kernel(const struct ctx *c, uint32_t i)
{
	const struct fs_node *n = &c->g->nodes[i];
	uint32_t in = fs_mine_first_input(c->g, n);
	int in_contig = in == UINT32_MAX || c->contig[in];
	if (c->role[i] == ROLE_MATH)
		return 1;
	if (c->role[i] == ROLE_COPY)
		return !(fs_mine_op_is(c->s, n->op, "contiguous") && in_contig);
	if (c->role[i] == ROLE_VIEW)
		return fs_mine_op_is(c->s, n->op, "reshape") && !in_contig && !same_shape(c->g, in, i) && !splits_only(c, in, i);
	return 0;
}

uint32_t fs_mine_source(const struct ctx *c, uint32_t node)
{
	while (c->role[node] == ROLE_VIEW && !fs_mine_is_kernel(c, node)) {
		uint32_t in = fs_mine_first_input(c->g, &c->g->nodes[node]);
		if (in == UINT32_MAX)
			break;
		node = in;
	}
	return node;
}

/* ---- region records ------------------------------------------------------------ */

static uint32_t new_region(struct ctx *c, const uint32_t *nodes, uint32_t n)
{
	struct fs_mine *m = c->m;
	FS_GROW(m->regions, m->cap_regions, m->n_regions + 1);
	uint32_t ri = m->n_regions++;
	struct fs_region *r = &m->regions[ri];
	memset(r, 0, sizeof(*r));
	r->entry = -1;
	r->nodes = fs_arena_alloc(&m->arena, n * sizeof(uint32_t));
	memcpy(r->nodes, nodes, n * sizeof(uint32_t));
	qsort(r->nodes, n, sizeof(uint32_t), fs_cmp_u32);
	r->n_nodes = n;
	for (uint32_t i = 0; i < n; i++)
		c->region_of[nodes[i]] = ri;
	return ri;
}

/* Outputs, inputs and counts of a region whose node set is final. */
static void finish_region(struct ctx *c, uint32_t ri)
{
	struct fs_region *r = &c->m->regions[ri];
	const struct fs_graph *g = c->g;
	uint32_t *out = fs_arena_alloc(&c->m->arena, r->n_nodes * sizeof(uint32_t));
	uint32_t *in = NULL, n_in = 0, cap_in = 0;
	r->n_outputs = r->n_kernels = r->n_math = 0;
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		uint32_t i = r->nodes[k];
		const struct fs_node *n = &g->nodes[i];
		int escapes = (n->flags & FS_NODE_OUTPUT) != 0;
		for (uint32_t u = 0; u < n->n_users && !escapes; u++) {
			uint32_t user = g->users[n->users + u];
			escapes = fs_mine_is_real_user(g, user) && c->region_of[user] != ri;
		}
		if (escapes)
			out[r->n_outputs++] = i;
		r->n_kernels += (uint32_t)fs_mine_is_kernel(c, i);
		r->n_math += c->role[i] == ROLE_MATH;
		for (uint32_t a = n->args; a < n->args + n->n_args; a++) {
			if (g->args[a].kind != FS_ARG_NODE || c->region_of[g->args[a].node] == ri)
				continue;
			uint32_t p = g->args[a].node, j = 0;
			while (j < n_in && in[j] != p)
				j++;
			if (j == n_in) {
				FS_GROW(in, cap_in, n_in + 1);
				in[n_in++] = p;
			}
		}
	}
	r->outputs = out;
	r->inputs = fs_arena_alloc(&c->m->arena, (n_in ? n_in : 1) * sizeof(uint32_t));
	if (n_in) {
		qsort(in, n_in, sizeof(uint32_t), fs_cmp_u32);
		memcpy(r->inputs, in, n_in * sizeof(uint32_t));
	}
	r->n_inputs = n_in;
	free(in);
}

/* Keeps a view in region ri only when it sits between two of its kernels: a
 * kernel feeds it (through region views) and it feeds a kernel. Leading and
 * trailing views move no data and belong to neither side; catalog matching
 * sees the views that feed a region through its inputs. */
static void trim_region(struct ctx *c, uint32_t ri)
{
	struct fs_region *r = &c->m->regions[ri];
	const struct fs_graph *g = c->g;
	uint8_t *mark = c->mark; /* bit 0: fed by a kernel, bit 1: feeds a kernel */
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		uint32_t i = r->nodes[k], in = fs_mine_first_input(g, &g->nodes[i]);
		if (c->role[i] == ROLE_VIEW && !fs_mine_is_kernel(c, i) && in != UINT32_MAX &&
		    c->region_of[in] == ri && (fs_mine_is_kernel(c, in) || (mark[in] & 1)))
			mark[i] |= 1;
	}
	for (uint32_t k = r->n_nodes; k-- > 0;) {
		uint32_t i = r->nodes[k];
		const struct fs_node *x = &g->nodes[i];
		for (uint32_t u = 0; u < x->n_users && c->role[i] == ROLE_VIEW; u++) {
			uint32_t user = g->users[x->users + u];
			if (c->region_of[user] == ri && (fs_mine_is_kernel(c, user) || (mark[user] & 2)))
				mark[i] |= 2;
		}
	}
	uint32_t w = 0;
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		uint32_t i = r->nodes[k];
		if (c->role[i] != ROLE_VIEW || fs_mine_is_kernel(c, i) || mark[i] == 3)
			r->nodes[w++] = i;
		else
			c->region_of[i] = UINT32_MAX;
	}
	for (uint32_t k = 0; k < r->n_nodes; k++)
		mark[r->nodes[k]] = 0;
	for (uint32_t k = w; k < r->n_nodes; k++)
		mark[r->nodes[k]] = 0;
	r->n_nodes = w;
}

/* ---- motif split ------------------------------------------------------------------- */

/* Adds the key of every view on the chain that feeds `node` from outside. */
static void feeding_views(const struct ctx *c, uint32_t node, uint32_t *views, uint32_t *nv, uint32_t max)
{
	while (c->role[node] == ROLE_VIEW && !fs_mine_is_kernel(c, node) && *nv < max) {
		views[(*nv)++] = c->s->ops[c->g->nodes[node].op].key;
		uint32_t in = fs_mine_first_input(c->g, &c->g->nodes[node]);
		if (in == UINT32_MAX)
			break;
		node = in;
	}
}

static int in_set(const uint32_t *v, uint32_t n, uint32_t x)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* Counted by chains: math, copies, and views that copy (a reshape of a
 * strided value). Other views are only checked for presence. */
static int counted(const struct ctx *c, uint32_t i)
{
	return c->role[i] == ROLE_MATH || c->role[i] == ROLE_COPY || fs_mine_is_kernel(c, i);
}

/* Sorted keys of the counted ops of a node set, and the keys of its other
 * views and of the views feeding it (at most `max`). */
static uint32_t region_keys(const struct ctx *c, const uint32_t *nodes, uint32_t n,
			    uint32_t *keys, uint32_t *views, uint32_t *n_views, uint32_t max)
{
	const struct fs_graph *g = c->g;
	uint32_t k = 0;
	*n_views = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_node *x = &g->nodes[nodes[i]];
		if (counted(c, nodes[i]))
			keys[k++] = c->s->ops[x->op].key;
		else if (*n_views < max)
			views[(*n_views)++] = c->s->ops[x->op].key;
		for (uint32_t a = x->args; a < x->args + x->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE && !in_set(nodes, n, g->args[a].node))
				feeding_views(c, g->args[a].node, views, n_views, max);
	}
	qsort(keys, k, sizeof(uint32_t), fs_cmp_u32);
	return k;
}

/* count of key in a sorted multiset */
static uint32_t mcount(const uint32_t *v, uint32_t n, uint32_t key)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		k += v[i] == key;
	return k;
}

static int has_producer_in(const struct ctx *c, uint32_t i, const uint32_t *set, uint32_t n)
{
	const struct fs_node *x = &c->g->nodes[i];
	for (uint32_t a = x->args; a < x->args + x->n_args; a++)
		if (c->g->args[a].kind == FS_ARG_NODE && in_set(set, n, c->g->args[a].node))
			return 1;
	return 0;
}

/* Drops a frontier node (no producer left in the set) whose key is in excess
 * of the chain; 0 if there is none. */
static int peel(const struct ctx *c, const struct fs_chain *ch, uint32_t root, uint32_t *set, uint32_t *n,
		const uint32_t *keys, uint32_t nk)
{
	for (uint32_t i = 0; i < *n; i++) {
		uint32_t x = set[i];
		if (x == root || has_producer_in(c, x, set, *n))
			continue;
		uint32_t key = c->s->ops[c->g->nodes[x].op].key;
		if (counted(c, x) && mcount(keys, nk, key) <= mcount(ch->ops, ch->n_ops, key))
			continue;
		set[i] = set[--*n];
		return 1;
	}
	return 0;
}

/* The end of node x's data arguments: a cast reads data from its first
 * argument only (type_as(x, other): other lends its dtype). */
static uint32_t data_args_end(const struct ctx *c, const struct fs_node *x)
{
	const struct fs_graph *g = c->g;
	return c->s->ops[x->op].cls == FS_OPC_CAST && x->n_args ? x->args + g->args[x->args].span
								 : x->args + x->n_args;
}

static int by_dist(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b; /* {dist, node} */
	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1] ? -1 : x[1] < y[1]);
}

/* The chain as the ops nearest the root: the root's ancestors in region ri
 * ranked by their longest distance from it (an op that an interior op also
 * reads by a longer way, as the residual sum under a norm's statistics, is
 * further upstream), a counted op taken only while the chain has room for
 * its kind (views pass), then the views left at the input side dropped. For
 * regions whose input side holds ops of the chain's kinds (a state-space
 * scan's muls before a gated norm), where peeling from the input side never
 * gets past them. `rank` is scratch for 2 x the region's size. */
static uint32_t grow_within(const struct ctx *c, uint32_t ri, const struct fs_chain *ch, uint32_t root, uint32_t *set,
			    uint32_t *rank)
{
	const struct fs_graph *g = c->g;
	uint32_t n = 0, m = 0;
	set[n++] = root;
	for (uint32_t w = 0; w < n; w++) {
		const struct fs_node *x = &g->nodes[set[w]];
		for (uint32_t a = x->args; a < data_args_end(c, x); a++)
			if (g->args[a].kind == FS_ARG_NODE && c->region_of[g->args[a].node] == ri && !in_set(set, n, g->args[a].node))
				set[n++] = g->args[a].node;
	}
	qsort(set, n, sizeof(uint32_t), fs_cmp_u32); /* file order is topological: the root last */
	for (uint32_t i = 0; i < n; i++)
		rank[2 * i] = i + 1 == n ? 0 : UINT32_MAX, rank[2 * i + 1] = set[i];
	for (uint32_t i = n; i-- > 0;) { /* longest distance from the root, users first */
		const struct fs_node *x = &g->nodes[set[i]];
		for (uint32_t a = x->args; rank[2 * i] != UINT32_MAX && a < data_args_end(c, x); a++)
			for (uint32_t k = 0; g->args[a].kind == FS_ARG_NODE && k < i; k++)
				if (set[k] == g->args[a].node && (rank[2 * k] == UINT32_MAX || rank[2 * k] < rank[2 * i] + 1))
					rank[2 * k] = rank[2 * i] + 1;
	}
	qsort(rank, n, 2 * sizeof(uint32_t), by_dist);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = rank[2 * i + 1], have = 0;
		if (counted(c, p)) {
			uint32_t key = c->s->ops[g->nodes[p].op].key;
			for (uint32_t k = 0; k < m; k++)
				have += counted(c, set[k]) && c->s->ops[g->nodes[set[k]].op].key == key;
			if (have >= mcount(ch->ops, ch->n_ops, key))
				continue;
		}
		set[m++] = p;
	}
	for (int dropped = 1; dropped;) {
		dropped = 0;
		for (uint32_t i = 0; i < m; i++)
			if (set[i] != root && !counted(c, set[i]) && !has_producer_in(c, set[i], set, m)) {
				set[i--] = set[--m];
				dropped = 1;
			}
	}
	return m;
}

/* The chain ending at `root` inside region ri: the root's ancestors in the
 * region, peeled at the input side until the multiset matches (where that
 * gets stuck, grown again by grow_within). Returns the
 * size of the motif in set[] (0 if it is not exactly the chain, or an
 * intermediate would be read outside it). `keys`/`views` are scratch. */
static uint32_t grow_motif(const struct ctx *c, uint32_t ri, const struct fs_chain *ch, uint32_t root,
			   uint32_t *set, uint32_t *keys, uint32_t *views)
{
	const struct fs_graph *g = c->g;
	uint32_t n = 0, nk, nv;
	set[n++] = root;
	for (uint32_t w = 0; w < n; w++) {
		const struct fs_node *x = &g->nodes[set[w]];
		for (uint32_t a = x->args; a < x->args + x->n_args; a++) {
			uint32_t p = g->args[a].node;
			if (g->args[a].kind == FS_ARG_NODE && c->region_of[p] == ri && !in_set(set, n, p))
				set[n++] = p;
		}
	}
	for (int within = 0;;) {
		nk = region_keys(c, set, n, keys, views, &nv, g->n_nodes);
		if (nk == ch->n_ops && !memcmp(keys, ch->ops, nk * sizeof(uint32_t)))
			break;
		if (peel(c, ch, root, set, &n, keys, nk))
			continue;

		if (within++)
			return 0;
		n = grow_within(c, ri, ch, root, set, keys);
	}
	for (uint32_t i = 0; i < ch->n_views; i++)
		if (!in_set(views, nv, ch->views[i]))
			return 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_node *x = &g->nodes[set[i]];
		if (set[i] == root)
			continue;
		if (x->flags & FS_NODE_OUTPUT)
			return 0;
		for (uint32_t u = 0; u < x->n_users; u++) {
			uint32_t user = g->users[x->users + u];
			if (fs_mine_is_real_user(g, user) && !in_set(set, n, user))
				return 0;
		}
	}
	return n;
}

/* Splits the nodes left over by a motif into connected parts, each a region.
 * Ancestors of the motif and the other nodes never share a part: a part
 * holding both could feed the motif and read it, a cycle. */
static void split_rest(struct ctx *c, const uint32_t *motif, uint32_t nm, const uint32_t *rest,
		       uint32_t n, uint32_t *queue)
{
	const struct fs_graph *g = c->g;
	const uint32_t LEFT = UINT32_MAX - 1, TAKEN = UINT32_MAX - 2;
	uint8_t *up = c->mark; /* 1: an ancestor of the motif */
	for (uint32_t i = 0; i < n; i++)
		c->region_of[rest[i]] = LEFT;
	uint32_t nq = 0;
	for (uint32_t i = 0; i < nm; i++)
		queue[nq++] = motif[i];
	for (uint32_t q = 0; q < nq; q++) {
		const struct fs_node *x = &g->nodes[queue[q]];
		for (uint32_t a = x->args; a < x->args + x->n_args; a++) {
			uint32_t p = g->args[a].node;
			if (g->args[a].kind == FS_ARG_NODE && c->region_of[p] == LEFT && !up[p]) {
				up[p] = 1;
				queue[nq++] = p;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		if (c->region_of[rest[i]] != LEFT)
			continue;
		uint32_t q = 0;
		nq = 0;
		queue[nq++] = rest[i];
		c->region_of[rest[i]] = TAKEN;
		while (q < nq) {
			uint32_t xi = queue[q++];
			const struct fs_node *x = &g->nodes[xi];
			for (uint32_t a = x->args; a < x->args + x->n_args; a++) {
				uint32_t y = g->args[a].node;
				if (g->args[a].kind == FS_ARG_NODE && c->region_of[y] == LEFT && up[y] == up[xi]) {
					c->region_of[y] = TAKEN;
					queue[nq++] = y;
				}
			}
			for (uint32_t u = 0; u < x->n_users; u++) {
				uint32_t y = g->users[x->users + u];
				if (c->region_of[y] == LEFT && up[y] == up[xi]) {
					c->region_of[y] = TAKEN;
					queue[nq++] = y;
				}
			}
		}
		uint32_t ri = new_region(c, queue, nq);
		trim_region(c, ri);
		finish_region(c, ri);
	}
	for (uint32_t i = 0; i < n; i++)
		up[rest[i]] = 0;
}

static int is_reduction(const struct ctx *c, uint32_t node)
{
	uint8_t cls = c->s->ops[c->g->nodes[node].op].cls;
	return cls == FS_OPC_REDUCTION || cls == FS_OPC_NORM;
}

/* Walks back from the motif's reductions through the region's nodes:
 * whether it meets `target`. */
static int walk_back(const struct ctx *c, uint32_t ri, const uint32_t *motif, uint32_t nm, uint32_t target,
		     uint32_t *stack)
{
	const struct fs_graph *g = c->g;
	uint8_t *seen = c->mark; /* zeroed again below */
	uint32_t n = 0, n_seen = 0, found = 0;
	for (uint32_t i = 0; i < nm; i++)
		if (is_reduction(c, motif[i]))
			stack[n++] = motif[i];
	while (n && !found) {
		const struct fs_node *x = &g->nodes[stack[--n]];
		for (uint32_t a = x->args; a < x->args + x->n_args && !found; a++) {
			uint32_t p = g->args[a].node;
			if (g->args[a].kind != FS_ARG_NODE || c->region_of[p] != ri || seen[p])
				continue;
			seen[p] = 1;
			stack[g->n_nodes + n_seen++] = p;
			found = p == target;
			stack[n++] = p;
		}
	}
	for (uint32_t i = 0; i < n_seen; i++)
		seen[stack[g->n_nodes + i]] = 0;
	return (int)found;
}

/* Whether a user of reduction r, in region ri, also reads r's own input:
 * x - mean(x), x - max(x), x / sum(x), the statistic used on its source. */
static int centres(const struct ctx *c, uint32_t ri, uint32_t r)
{
	const struct fs_graph *g = c->g;
	const struct fs_node *x = &g->nodes[r];
	if (!x->n_args || g->args[x->args].kind != FS_ARG_NODE)
		return 0;
	uint32_t in = g->args[x->args].node;
	for (uint32_t u = 0; u < x->n_users; u++) {
		uint32_t user = g->users[x->users + u];
		const struct fs_node *y = &g->nodes[user];
		for (uint32_t a = y->args; c->region_of[user] == ri && a < y->args + y->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE && g->args[a].node == in)
				return 1;
	}
	return 0;
}

/* Whether the motif is the tail of a larger normalisation: a reduction R
 * outside it, used on its own source (x - mean(x): centring), feeds the
 * motif's reduction (a hand-written LayerNorm around an RMSNorm-shaped tail,
 * a softmax after a max taken with attention sinks). Such a motif is not
 * carved out. Reductions that merely produce the motif's input (an MoE's
 * sum of experts, a state-space scan) do not count. */
static int tail_of_norm(const struct ctx *c, uint32_t ri, const uint32_t *nodes, uint32_t n,
			const uint32_t *motif, uint32_t nm, uint32_t *stack)
{
	for (uint32_t i = 0; i < n; i++)
		if (is_reduction(c, nodes[i]) && !in_set(motif, nm, nodes[i]) && centres(c, ri, nodes[i]) &&
		    walk_back(c, ri, motif, nm, nodes[i], stack))
			return 1;
	return 0;
}

/* Entries that name vertical regions: multi-output and horizontal entries are
 * for the passes that build those candidates. */
static int vertical_entry(const struct fs_catalog_entry *e)
{
	return e->kind != FS_KIND_MULTI_OUTPUT && e->kind != FS_KIND_HORIZONTAL_GEMM;
}

/* A copy of an expanded view materialises a broadcast (matmul's operands
 * once decomposed, even where the expand keeps the shape; GQA's repeated
 * k / v): no layout change a kernel could write directly, so no layout
 * entry names it. */
static int materialises_broadcast(const struct ctx *c, const uint32_t *nodes, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) /* each node, and the views it reads */
		for (uint32_t x = nodes[i], hop = 0; hop < 8; hop++) {
			if (fs_mine_op_is(c->s, c->g->nodes[x].op, "expand"))
				return 1;
			uint32_t in = fs_mine_first_input(c->g, &c->g->nodes[x]);
			if (in == UINT32_MAX || c->role[in] != ROLE_VIEW)
				break;
			x = in;
		}
	return 0;
}

/* Catalog entry e may name these nodes: a library pattern for it covers
 * them (where it has one), and a layout entry is no broadcast's copy. */
static int may_name(const struct ctx *c, int32_t e, const uint32_t *nodes, uint32_t n)
{
	return fs_mine_confirmed(c, e, nodes, n) &&
	       (c->o->cat->e[e].kind != FS_KIND_LAYOUT || !materialises_broadcast(c, nodes, n));
}

/* Tries the catalog chains on region ri, longest first (Gemma's RMSNorm
 * holds the plain RMSNorm chain, soft-capped attention the plain softmax
 * one); returns 1 if it was split. */
static int split_motif(struct ctx *c, uint32_t ri, uint32_t *scratch)
{
	const struct fs_catalog *cat = c->o->cat;
	uint32_t N = c->g->n_nodes, longest = 0;
	/* keys and views: N each (grow_within takes both as its 2 N of scratch); rest: 2 N */
	uint32_t *set = scratch, *keys = scratch + N, *views = scratch + 2 * N, *rest = scratch + 3 * N;
	uint32_t n = c->m->regions[ri].n_nodes, *nodes = c->m->regions[ri].nodes;
	for (uint32_t e = 0; cat && e < cat->n; e++)
		for (uint32_t k = 0; k < cat->e[e].n_chains; k++)
			if (cat->e[e].chains[k].n_ops > longest)
				longest = cat->e[e].chains[k].n_ops;
	for (uint32_t len = longest; len > 0; len--)
	for (uint32_t e = 0; e < cat->n; e++)
		for (uint32_t k = 0; vertical_entry(&cat->e[e]) && k < cat->e[e].n_chains; k++) {
			const struct fs_chain *ch = &cat->e[e].chains[k];
			for (uint32_t i = 0; ch->n_ops == len && i < n; i++) {
				if (c->s->ops[c->g->nodes[nodes[i]].op].key != ch->root)
					continue;
				uint32_t mn = grow_motif(c, ri, ch, nodes[i], set, keys, views);
				if (!mn || mn == n || tail_of_norm(c, ri, nodes, n, set, mn, rest) ||
				    !may_name(c, (int32_t)e, set, mn))
					continue;
				uint32_t nr = 0;
				for (uint32_t j = 0; j < n; j++)
					if (!in_set(set, mn, nodes[j]))
						rest[nr++] = nodes[j];
				uint32_t mi = new_region(c, set, mn);
				c->m->regions[ri].n_nodes = 0; /* dissolved */
				split_rest(c, set, mn, rest, nr, keys);
				trim_region(c, mi);
				finish_region(c, mi);
				c->m->regions[mi].entry = (int32_t)e;
				return 1;
			}
		}
	return 0;
}

static void name_region(struct ctx *c, struct fs_region *r, uint32_t *keys, uint32_t *views)
{
	uint32_t nv, nk = region_keys(c, r->nodes, r->n_nodes, keys, views, &nv, c->g->n_nodes);
	int32_t e = -1; /* the first entry of this multiset that the region confirms */
	while (c->o->cat && r->entry < 0 && (e = fs_catalog_match(c->o->cat, keys, nk, views, nv, (uint32_t)(e + 1))) >= 0)
		if (vertical_entry(&c->o->cat->e[e]) && may_name(c, e, r->nodes, r->n_nodes))
			r->entry = e;
	/* a residual add into a composite norm op (the final LayerNorm, whose sum
	 * has no other reader) is that multi-output chain all the same: with the
	 * norm one op, the add cannot be part of the norm (as in Gemma's 1 + w);
	 * named as the multi-output regions are (candidates.c), by the chain */
	int composite = 0;
	for (uint32_t i = 0; i < r->n_nodes; i++)
		composite |= c->s->ops[c->g->nodes[r->nodes[i]].op].cls == FS_OPC_NORM;
	e = -1;
	while (composite && c->o->cat && r->entry < 0 && (e = fs_catalog_match(c->o->cat, keys, nk, views, nv, (uint32_t)(e + 1))) >= 0)
		if (c->o->cat->e[e].kind == FS_KIND_MULTI_OUTPUT)
			r->entry = e;
}

/* ---- grouping -------------------------------------------------------------------------- */

void fs_mine_regions(struct ctx *c)
{
	const struct fs_graph *g = c->g;
	uint32_t n = g->n_nodes, n_groups = 0;
	uint32_t *group = fs_xmalloc((n ? n : 1) * sizeof(uint32_t));
	for (uint32_t i = n; i-- > 0;) {
		group[i] = UINT32_MAX;
		uint8_t role = c->role[i];
		if (role != ROLE_MATH && role != ROLE_COPY && role != ROLE_VIEW)
			continue;
		const struct fs_node *x = &g->nodes[i];
		uint32_t R = UINT32_MAX;
		int ok = !(x->flags & FS_NODE_OUTPUT) && x->n_real_users > 0;
		for (uint32_t u = 0; u < x->n_users && ok; u++) {
			uint32_t user = g->users[x->users + u];
			if (!fs_mine_is_real_user(g, user))
				continue;
			ok = group[user] != UINT32_MAX && (R == UINT32_MAX || R == group[user]);
			R = group[user];
		}
		group[i] = ok ? R : n_groups++;
	}
	/* bucket the nodes of each group, in file order */
	uint32_t *count = fs_xcalloc(n_groups + 1, sizeof(uint32_t));
	uint32_t *order = fs_xmalloc((n ? n : 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		if (group[i] != UINT32_MAX)
			count[group[i] + 1]++;
	for (uint32_t k = 0; k < n_groups; k++)
		count[k + 1] += count[k];
	uint32_t *fill = fs_xmalloc((n_groups + 1) * sizeof(uint32_t));
	memcpy(fill, count, (n_groups + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		if (group[i] != UINT32_MAX)
			order[fill[group[i]]++] = i;
	for (uint32_t k = 0; k < n_groups; k++) {
		uint32_t ri = new_region(c, order + count[k], count[k + 1] - count[k]);
		trim_region(c, ri);
		finish_region(c, ri);
	}
	free(fill);
	free(order);
	free(count);
	free(group);

	uint32_t *scratch = fs_xmalloc((5 * n + 1) * sizeof(uint32_t)); /* split_motif: 3 n, then 2 n */
	for (uint32_t ri = 0; ri < c->m->n_regions; ri++) { /* grows as regions split */
		struct fs_region *r = &c->m->regions[ri];
		if (r->n_nodes < 2 || r->n_kernels < 2)
			continue;
		name_region(c, r, scratch, scratch + n);
		if (c->m->regions[ri].entry < 0)
			split_motif(c, ri, scratch);
	}
	for (uint32_t ri = 0; ri < c->m->n_regions; ri++) {
		struct fs_region *r = &c->m->regions[ri];
		if (r->n_nodes && r->entry < 0)
			name_region(c, r, scratch, scratch + n);
	}
	free(scratch);
}

/* ---- signature ------------------------------------------------------------------------------ */

static uint64_t h64(uint64_t h, uint64_t v)
{
	return fs_hash_bytes(&v, sizeof(v), h);
}

static uint64_t hstr(uint64_t h, const char *s)
{
	return fs_hash_bytes(s, strlen(s), h);
}

/* Rank, and per dim: '1', constant 'C', symbolic 'S'. */
static uint64_t shape_class(const struct fs_scan *s, const struct fs_type *t, uint64_t h)
{
	const struct fs_shape *sh = &s->types.shapes[t->shape];
	char buf[72];
	uint32_t k = 0;
	buf[k++] = sh->kind == FS_SHAPE_DIMS ? 'd' : sh->kind == FS_SHAPE_SCALAR ? 's' : '?';
	for (uint32_t i = 0; i < sh->rank && k < sizeof(buf) - 1; i++) {
		const struct fs_dim *d = &s->types.dims[sh->dims + i];
		buf[k++] = d->expr != FS_DIM_CONST ? 'S' : d->value == 1 ? '1' : 'C';
	}
	buf[k] = '\0';
	return h64(hstr(h, buf), t->dtype);
}

/* Literal classes: eps-like constants abstracted, exponents and dims kept. */
static uint64_t literal_hash(const struct fs_scan *s, const struct fs_arg *a, uint64_t h)
{
	h = h64(h, a->kind);
	switch (a->kind) {
	case FS_ARG_INT:
	case FS_ARG_BOOL:
		return h64(h, (uint64_t)a->i);
	case FS_ARG_FLOAT:
		if (a->f != 0 && fabs(a->f) < 1e-3)
			return hstr(h, "eps");
		return hstr(h, fs_scan_str(s, a->text));
	case FS_ARG_DTYPE:
		return h64(h, a->type.dtype);
	case FS_ARG_STR:
		return hstr(h, fs_scan_str(s, a->text));
	default:
		return h;
	}
}

struct sigstate {
	const struct ctx *c;
	const struct fs_region *r;
	uint64_t *merkle;      /* per graph node (region nodes only valid) */
	uint32_t *uses;        /* per graph node: reads from inside the region */
	uint32_t *visit;       /* per graph node: canonical id + 1 */
	uint32_t next_id;
	uint64_t stream;
};

static uint64_t operand_hash(struct sigstate *S, const struct fs_arg *a)
{
	const struct ctx *c = S->c;
	if (a->kind == FS_ARG_NODE) {
		uint32_t p = a->node;
		if (c->region_of[p] == c->region_of[S->r->nodes[0]])
			return S->merkle[p];
		const struct fs_node *x = &c->g->nodes[p];
		return h64(shape_class(c->s, &c->g->types[x->out], 0x5eed), S->uses[p]);
	}
	return literal_hash(c->s, a, 0x11);
}

/* Hashes of each top-level argument (lists folded), commutative pair sorted. */
static uint32_t arg_hashes(struct sigstate *S, const struct fs_node *n, uint64_t *out, uint32_t max)
{
	const struct fs_graph *g = S->c->g;
	uint32_t k = 0;
	for (uint32_t a = n->args; a < n->args + n->n_args && k < max; a += g->args[a].span) {
		uint64_t h = operand_hash(S, &g->args[a]);
		for (uint32_t b = a + 1; b < a + g->args[a].span; b++)
			h = h64(h, operand_hash(S, &g->args[b]));
		out[k++] = h;
	}
	if (k >= 2 && (S->c->s->ops[n->op].flags & FS_OPF_COMMUTATIVE) && out[0] > out[1]) {
		uint64_t t = out[0];
		out[0] = out[1];
		out[1] = t;
	}
	return k;
}

static void merkle_node(struct sigstate *S, uint32_t i)
{
	const struct ctx *c = S->c;
	const struct fs_node *n = &c->g->nodes[i];
	uint64_t h = hstr(0x9e37, fs_scan_str(c->s, c->s->ops[n->op].key));
	for (uint16_t k = 0; k < n->n_out; k++)
		h = shape_class(c->s, &c->g->types[n->out + k], h);
	uint64_t ah[64];
	uint32_t na = arg_hashes(S, n, ah, 64);
	for (uint32_t k = 0; k < na; k++)
		h = h64(h, ah[k]);
	S->merkle[i] = h64(h, S->uses[i]);
}

/* Canonical DFS from the outputs: numbers nodes and external inputs in an
 * order that depends only on structure, and streams the wiring. */
static uint32_t visit(struct sigstate *S, uint32_t i)
{
	const struct ctx *c = S->c;
	if (S->visit[i])
		return S->visit[i] - 1;
	if (c->region_of[i] != c->region_of[S->r->nodes[0]]) {
		S->visit[i] = ++S->next_id;
		return S->visit[i] - 1;
	}
	const struct fs_node *n = &c->g->nodes[i];
	const struct fs_graph *g = c->g;
	uint32_t child[64], nc = 0;
	for (uint32_t a = n->args; a < n->args + n->n_args && nc < 64; a++)
		if (g->args[a].kind == FS_ARG_NODE)
			child[nc++] = g->args[a].node;
	/* commutative ops: two plain operands visited in hash order */
	const struct fs_arg *a0 = n->n_top >= 2 ? &g->args[n->args] : NULL;
	const struct fs_arg *a1 = a0 ? &g->args[n->args + a0->span] : NULL;
	if (a0 && (c->s->ops[n->op].flags & FS_OPF_COMMUTATIVE) && a0->kind == FS_ARG_NODE &&
	    a1->kind == FS_ARG_NODE && operand_hash(S, a0) > operand_hash(S, a1)) {
		uint32_t t = child[0];
		child[0] = child[1];
		child[1] = t;
	}
	S->visit[i] = UINT32_MAX; /* in progress (graphs are acyclic) */
	uint64_t rec = S->merkle[i];
	for (uint32_t k = 0; k < nc; k++)
		rec = h64(rec, visit(S, child[k]));
	S->visit[i] = ++S->next_id;
	S->stream = h64(S->stream, rec);
	return S->visit[i] - 1;
}

uint64_t fs_mine_signature(const struct ctx *c, const struct fs_region *r)
{
	struct sigstate S = {c, r, c->merkle, c->uses, c->visit, 0, 0xc0ffee};
	const struct fs_graph *g = c->g;
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		const struct fs_node *x = &g->nodes[r->nodes[k]];
		for (uint32_t a = x->args; a < x->args + x->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE)
				S.uses[g->args[a].node]++;
	}
	for (uint32_t k = 0; k < r->n_nodes; k++) /* file order is topological */
		merkle_node(&S, r->nodes[k]);
	uint32_t outs[64], no = 0;
	for (uint32_t k = 0; k < r->n_outputs && no < 64; k++) { /* by merkle hash, then order */
		uint32_t x = r->outputs[k], j = no++;
		while (j > 0 && S.merkle[outs[j - 1]] > S.merkle[x])
			outs[j] = outs[j - 1], j--;
		outs[j] = x;
	}
	for (uint32_t k = 0; k < no; k++)
		visit(&S, outs[k]);
	uint64_t sig = h64(S.stream, r->n_nodes);
	/* leave the scratch clean for the next region */
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		const struct fs_node *x = &g->nodes[r->nodes[k]];
		S.merkle[r->nodes[k]] = 0;
		S.visit[r->nodes[k]] = 0;
		for (uint32_t a = x->args; a < x->args + x->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE)
				S.uses[g->args[a].node] = S.visit[g->args[a].node] = 0;
	}
	return sig;
}
