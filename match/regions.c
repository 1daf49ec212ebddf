/*
 * regions.c: the parts fusible regions are made of (grouping.c groups them,
 * motif.c splits them, attention.c and candidates.c add theirs).
 *
 * 1. Roles: math (elementwise, cast, fusible reductions, norm composites),
 *    copies (cat, clone, contiguous), index-only views, anchors (the rest).
 * 2. Region records: a region's nodes, its views trimmed, its outputs,
 *    inputs and counts.
 * 3. Naming: the catalog entry a region's counted ops name.
 * 4. A canonical signature per region (fs_mine_signature).
 * Every step is linear in the graph's nodes and edges, whatever its shape.
 */
#include "mine_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- roles and layout ------------------------------------------------------- */

static uint8_t role_of(const struct fs_scan *s, const struct fs_graph *g, const struct fs_node *n)
{
	if (n->kind != FS_NODE_CALL || (n->flags & FS_NODE_SIDE_EFFECT))
		return ROLE_NONE;
	if (fs_mine_noop_dropout(s, g, n))
		return ROLE_VIEW; /* passes its input through: a cleanup, never fused into a chain */
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

int fs_mine_noop_dropout(const struct fs_scan *s, const struct fs_graph *g, const struct fs_node *n)
{
	if (!fs_mine_op_is(s, n->op, "dropout") || n->n_top < 2)
		return 0;
	const struct fs_arg *p = fs_mine_arg(g, n, 1), *train = fs_mine_arg(g, n, 2);
	int p_zero = p && ((p->kind == FS_ARG_FLOAT && p->f == 0) || (p->kind == FS_ARG_INT && p->i == 0));
	return p_zero || (train && train->kind == FS_ARG_BOOL && !train->i);
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
	for (uint32_t i = 0; i < g->n_nodes; i++) { /* file order is topological: inputs are known first */
		c->role[i] = role_of(c->s, g, &g->nodes[i]);
		c->contig[i] = c->role[i] == ROLE_VIEW ? view_contig(c, i) : 1;
		uint32_t in = fs_mine_first_input(g, &g->nodes[i]);
		c->src[i] = c->role[i] == ROLE_VIEW && !fs_mine_is_kernel(c, i) && in != UINT32_MAX && in < i ? c->src[in] : i;
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
	return c->src[node];
}

/* ---- region records ------------------------------------------------------------ */

uint32_t fs_mine_new_region(struct ctx *c, const uint32_t *nodes, uint32_t n)
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

uint32_t fs_mine_add_region(struct ctx *c, const uint32_t *nodes, uint32_t n, const uint32_t *inputs,
			    uint32_t n_in, const uint32_t *outputs, uint32_t n_out)
{
	struct fs_mine *m = c->m;
	FS_GROW(m->regions, m->cap_regions, m->n_regions + 1);
	struct fs_region *r = &m->regions[m->n_regions];
	memset(r, 0, sizeof(*r));
	r->entry = -1;
	r->nodes = fs_arena_alloc(&m->arena, (n + n_in + n_out + 1) * sizeof(uint32_t));
	memcpy(r->nodes, nodes, n * sizeof(uint32_t));
	r->n_nodes = n;
	r->inputs = r->nodes + n;
	memcpy(r->inputs, inputs, n_in * sizeof(uint32_t));
	r->n_inputs = n_in;
	r->outputs = r->inputs + n_in;
	memcpy(r->outputs, outputs, n_out * sizeof(uint32_t));
	r->n_outputs = n_out;
	return m->n_regions++;
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
			uint32_t p = g->args[a].node;
			if (g->args[a].kind != FS_ARG_NODE || c->region_of[p] == ri || c->mark[p])
				continue;
			c->mark[p] = 1; /* each input once */
			FS_GROW(in, cap_in, n_in + 1);
			in[n_in++] = p;
		}
	}
	for (uint32_t k = 0; k < n_in; k++)
		c->mark[in[k]] = 0;
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
		mark[i] = 0; /* dropped views' too */
	}
	r->n_nodes = w;
}

void fs_mine_finish_region(struct ctx *c, uint32_t ri)
{
	trim_region(c, ri);
	finish_region(c, ri);
}

/* ---- naming ------------------------------------------------------------------------ */

int fs_mine_counted(const struct ctx *c, uint32_t i)
{
	return c->role[i] == ROLE_MATH || c->role[i] == ROLE_COPY || fs_mine_is_kernel(c, i);
}

/* Adds the key of every view on the chain that feeds `node` from outside
 * (the nearest FEED_HOPS of them: a chain names the views next to it). */
static void feeding_views(const struct ctx *c, uint32_t node, uint32_t *views, uint32_t *nv, uint32_t max)
{
	for (uint32_t hop = 0; hop < FEED_HOPS && c->role[node] == ROLE_VIEW && !fs_mine_is_kernel(c, node) && *nv < max; hop++) {
		views[(*nv)++] = c->s->ops[c->g->nodes[node].op].key;
		uint32_t in = fs_mine_first_input(c->g, &c->g->nodes[node]);
		if (in == UINT32_MAX)
			break;
		node = in;
	}
}

uint32_t fs_mine_keys(const struct ctx *c, const uint32_t *nodes, uint32_t n, uint32_t *keys, uint32_t *views,
		      uint32_t *n_views, uint32_t max)
{
	const struct fs_graph *g = c->g;
	uint32_t k = 0;
	*n_views = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_node *x = &g->nodes[nodes[i]];
		if (fs_mine_counted(c, nodes[i])) {
			if (keys)
				keys[k++] = c->s->ops[x->op].key;
		} else if (*n_views < max)
			views[(*n_views)++] = c->s->ops[x->op].key;
		for (uint32_t a = x->args; a < x->args + x->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE && c->pos[g->args[a].node] == UINT32_MAX)
				feeding_views(c, g->args[a].node, views, n_views, max);
	}
	if (keys)
		qsort(keys, k, sizeof(uint32_t), fs_cmp_u32);
	return k;
}

int fs_mine_vertical_entry(const struct fs_catalog_entry *e)
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

int fs_mine_may_name(const struct ctx *c, int32_t e, const uint32_t *nodes, uint32_t n)
{
	return fs_mine_confirmed(c, e, nodes, n) &&
	       (c->o->cat->e[e].kind != FS_KIND_LAYOUT || !materialises_broadcast(c, nodes, n));
}

int32_t fs_mine_name(struct ctx *c, const uint32_t *nodes, uint32_t n, uint32_t *keys, uint32_t *views)
{
	uint32_t nv, nk;
	for (uint32_t i = 0; i < n; i++)
		c->pos[nodes[i]] = i;
	nk = fs_mine_keys(c, nodes, n, keys, views, &nv, c->g->n_nodes);
	for (uint32_t i = 0; i < n; i++)
		c->pos[nodes[i]] = UINT32_MAX;
	int32_t e = -1; /* the first entry of this multiset that the nodes confirm */
	while (c->o->cat && (e = fs_catalog_match(c->o->cat, keys, nk, views, nv, (uint32_t)(e + 1))) >= 0)
		if (fs_mine_vertical_entry(&c->o->cat->e[e]) && fs_mine_may_name(c, e, nodes, n))
			return e;
	/* a residual add into a composite norm op (the final LayerNorm, whose sum
	 * has no other reader) is that multi-output chain all the same: with the
	 * norm one op, the add cannot be part of the norm (as in Gemma's 1 + w);
	 * named as the multi-output regions are (candidates.c), by the chain */
	int composite = 0;
	for (uint32_t i = 0; i < n; i++)
		composite |= c->s->ops[c->g->nodes[nodes[i]].op].cls == FS_OPC_NORM;
	e = -1;
	while (composite && c->o->cat && (e = fs_catalog_match(c->o->cat, keys, nk, views, nv, (uint32_t)(e + 1))) >= 0)
		if (c->o->cat->e[e].kind == FS_KIND_MULTI_OUTPUT)
			return e;
	return -1;
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

/* A node of the region being visited: its first two operands in the order
 * they are visited (swapped for a commutative op), then its other node
 * operands from `cursor`; at most 64 of them. */
struct frame {
	uint32_t node, cursor, taken, first[2], n_first;
	uint64_t rec;
};

/* Outside the region a value is numbered when first met; a region node is
 * opened as a frame (with rec its merkle hash) and numbered once its
 * operands are. Returns 1 when it opened a frame, else sets *id. */
static int open_node(struct sigstate *S, uint32_t i, struct frame *f, uint32_t *id)
{
	const struct ctx *c = S->c;
	const struct fs_graph *g = c->g;
	if (S->visit[i] || c->region_of[i] != c->region_of[S->r->nodes[0]]) {
		if (!S->visit[i])
			S->visit[i] = ++S->next_id;
		*id = S->visit[i] - 1;
		return 0;
	}
	const struct fs_node *n = &g->nodes[i];
	*f = (struct frame){i, n->args, 0, {0, 0}, 0, S->merkle[i]};
	/* commutative ops: two plain operands visited in hash order */
	const struct fs_arg *a0 = n->n_top >= 2 ? &g->args[n->args] : NULL;
	const struct fs_arg *a1 = a0 ? &g->args[n->args + a0->span] : NULL;
	if (a0 && (c->s->ops[n->op].flags & FS_OPF_COMMUTATIVE) && a0->kind == FS_ARG_NODE &&
	    a1->kind == FS_ARG_NODE && operand_hash(S, a0) > operand_hash(S, a1))
		*f = (struct frame){i, n->args + 2, 0, {a1->node, a0->node}, 2, S->merkle[i]};
	S->visit[i] = UINT32_MAX; /* in progress (graphs are acyclic) */
	return 1;
}

/* The frame's next operand to visit, or UINT32_MAX. */
static uint32_t next_operand(const struct sigstate *S, struct frame *f)
{
	const struct fs_graph *g = S->c->g;
	const struct fs_node *n = &g->nodes[f->node];
	if (f->taken < f->n_first)
		return f->first[f->taken++];
	while (f->taken < 64 && f->cursor < n->args + n->n_args)
		if (g->args[f->cursor++].kind == FS_ARG_NODE)
			return f->taken++, g->args[f->cursor - 1].node;
	return UINT32_MAX;
}

/* Canonical DFS from an output: numbers nodes and external inputs in an
 * order that depends only on structure, and streams the wiring. Iterative
 * (a chain of a region can be as long as the graph); `st`: a frame per
 * region node. */
static void visit(struct sigstate *S, uint32_t out, struct frame *st)
{
	uint32_t top = 0, id;
	top += (uint32_t)open_node(S, out, &st[top], &id);
	while (top) {
		struct frame *f = &st[top - 1];
		uint32_t y = next_operand(S, f);
		if (y != UINT32_MAX) {
			if (open_node(S, y, &st[top], &id))
				top++;
			else
				f->rec = h64(f->rec, id);
			continue;
		}
		S->visit[f->node] = ++S->next_id;
		S->stream = h64(S->stream, f->rec);
		if (--top)
			st[top - 1].rec = h64(st[top - 1].rec, S->visit[f->node] - 1);
	}
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
	struct frame *st = fs_xmalloc((r->n_nodes + 1) * sizeof(*st));
	for (uint32_t k = 0; k < no; k++)
		visit(&S, outs[k], st);
	free(st);
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
