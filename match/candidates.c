/*
 * candidates.c: from regions to ranked candidates (called by mine.c).
 * Vertical regions worth fusing are grouped by signature; two passes add
 * what vertical grouping cannot see: a producer whose value feeds a norm and
 * escapes elsewhere (residual add + RMSNorm: a second output), and GEMMs
 * reading one input (QKV, gate/up). Each candidate gets a name (its catalog
 * entry, or kind:ops), a stable id, a cost, risks and a recommendation.
 */
#include "mine_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t h64(uint64_t h, uint64_t v)
{
	return fs_hash_bytes(&v, sizeof(v), h);
}

static uint64_t hkey(const struct ctx *c, uint32_t node, uint64_t h)
{
	const char *k = fs_scan_str(c->s, c->s->ops[c->g->nodes[node].op].key);
	return fs_hash_bytes(k, strlen(k), h);
}

/* Whether a user of `node` (through views) is of class cls. */
static int feeds_class(const struct ctx *c, uint32_t node, enum fs_op_class cls, int depth)
{
	const struct fs_node *n = &c->g->nodes[node];
	for (uint32_t u = 0; u < n->n_users; u++) {
		uint32_t user = c->g->users[n->users + u];
		if (c->s->ops[c->g->nodes[user].op].cls == cls ||
		    (depth < 8 && c->role[user] == ROLE_VIEW && feeds_class(c, user, cls, depth + 1)))
			return 1;
	}
	return 0;
}

/* A GEMM / attention (cls) produces one of the region's inputs or reads one
 * of its outputs, looking through views. */
static int is_anchor_neighbour(const struct ctx *c, const struct fs_region *r, enum fs_op_class cls)
{
	for (uint32_t k = 0; k < r->n_inputs; k++)
		if (c->s->ops[c->g->nodes[fs_mine_source(c, r->inputs[k])].op].cls == cls)
			return 1;
	for (uint32_t k = 0; k < r->n_outputs; k++)
		if (feeds_class(c, r->outputs[k], cls, 0))
			return 1;
	return 0;
}

enum { MAX_REDUCTIONS = 4 }; /* examined per region: keeps normalizes() linear */

/* Whether the region normalises: a value computed from a row reduction
 * (mean, sum, max, ...) meets again what was reduced, or what it was
 * computed from (x * rsqrt(mean(x^2) + eps), x - max(x), e / sum(e)). A
 * reduction that only summarises (any over a mask, a sum that is the
 * region's result) does not. Marks: 1 what a reduction reads, 2 what is
 * computed from it; cleared again (c->mark stays zeroed). */
static int normalizes(struct ctx *c, const struct fs_region *r)
{
	const struct fs_graph *g = c->g;
	int found = 0;
	for (uint32_t k = 0, tried = 0; k < r->n_nodes && tried < MAX_REDUCTIONS && !found; k++) {
		const struct fs_node *red = &g->nodes[r->nodes[k]];
		if (c->s->ops[red->op].cls != FS_OPC_REDUCTION)
			continue;
		tried++;
		for (uint32_t a = red->args; a < red->args + red->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE)
				c->mark[g->args[a].node] = 1;
		for (uint32_t j = k; j-- > 0;) { /* file order: one pass back finds every ancestor */
			const struct fs_node *x = &g->nodes[r->nodes[j]];
			for (uint32_t a = x->args; c->mark[r->nodes[j]] == 1 && a < x->args + x->n_args; a++)
				if (g->args[a].kind == FS_ARG_NODE)
					c->mark[g->args[a].node] = 1;
		}
		c->mark[r->nodes[k]] = 2;
		for (uint32_t j = k + 1; j < r->n_nodes && !found; j++) {
			const struct fs_node *x = &g->nodes[r->nodes[j]];
			int from_red = 0, from_data = 0;
			for (uint32_t a = x->args; a < x->args + x->n_args; a++)
				if (g->args[a].kind == FS_ARG_NODE) {
					from_red |= c->mark[g->args[a].node] == 2;
					from_data |= c->mark[g->args[a].node] == 1;
				}
			found = from_red && from_data;
			if (from_red)
				c->mark[r->nodes[j]] = 2;
		}
		for (uint32_t j = 0; j < r->n_nodes; j++) { /* clear */
			const struct fs_node *x = &g->nodes[r->nodes[j]];
			c->mark[r->nodes[j]] = 0;
			for (uint32_t a = x->args; a < x->args + x->n_args; a++)
				if (g->args[a].kind == FS_ARG_NODE)
					c->mark[g->args[a].node] = 0;
		}
	}
	return found;
}

static uint8_t region_kind(struct ctx *c, const struct fs_region *r)
{
	if (r->entry >= 0)
		return (uint8_t)c->o->cat->e[r->entry].kind;
	int reduces = 0;
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		uint8_t cls = c->s->ops[c->g->nodes[r->nodes[k]].op].cls;
		if (cls == FS_OPC_NORM)
			return FS_KIND_NORM;
		reduces |= cls == FS_OPC_REDUCTION;
	}
	if (reduces) /* a chain is a norm only when it normalises */
		return normalizes(c, r) ? FS_KIND_NORM : FS_KIND_REDUCTION;
	int attn = is_anchor_neighbour(c, r, FS_OPC_ATTENTION);
	if (!r->n_math)
		return attn ? FS_KIND_ATTENTION_ADJACENT : FS_KIND_LAYOUT;
	if (attn)
		return FS_KIND_ATTENTION_ADJACENT;
	for (uint32_t k = 0; k < r->n_inputs; k++) {
		uint32_t p = fs_mine_source(c, r->inputs[k]);
		if (c->s->ops[c->g->nodes[p].op].cls == FS_OPC_GEMM)
			return FS_KIND_GEMM_EPILOGUE;
	}
	return FS_KIND_ELEMENTWISE;
}

/* Worth a candidate: a catalog chain, two kernels or more fused, or data
 * movement that a neighbouring GEMM / attention kernel can absorb. */
static int worth_it(const struct ctx *c, const struct fs_region *r)
{
	if (!r->n_nodes || !r->n_kernels)
		return 0;
	if (r->entry >= 0)
		return 1;
	if (r->n_math)
		return r->n_kernels >= 2;
	return is_anchor_neighbour(c, r, FS_OPC_GEMM) || is_anchor_neighbour(c, r, FS_OPC_ATTENTION);
}

/* ---- multi-output: a producer feeding a norm ------------------------------------- */

static int32_t fused_norm_entry(const struct ctx *c, uint32_t node)
{
	const struct fs_catalog *cat = c->o->cat;
	uint32_t key = c->s->ops[c->g->nodes[node].op].key;
	for (uint32_t e = 0; cat && e < cat->n; e++)
		if (cat->e[e].kind == FS_KIND_NORM) {
			for (uint32_t k = 0; k < cat->e[e].n_kernels; k++)
				if (cat->e[e].kernels[k] == key)
					return (int32_t)e;
			for (uint32_t k = 0; k < cat->e[e].n_reference; k++)
				if (cat->e[e].reference[k] == key)
					return (int32_t)e;
		}
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* x.to(its own dtype), which returns x: one export flavour prints it (a
 * residual kept in float32, cast to float32 again), the other drops it; the
 * multi-output chains are named without it. */
static int noop_cast(const struct ctx *c, uint32_t i)
{
	const struct fs_graph *g = c->g;
	const struct fs_node *n = &g->nodes[i];
	uint32_t src = fs_mine_first_input(g, n);
	if (strcmp(fs_scan_str(c->s, c->s->ops[n->op].name), "to") || src == UINT32_MAX)
		return 0;
	uint8_t in = g->types[g->nodes[src].out].dtype, out = g->types[n->out].dtype;
	return in == out && in != FS_DT_UNKNOWN && in != FS_DT_OTHER;
}

/* alone (1 or 2 nodes): P is only the residual add that ends a region of
 * another kind (an MoE block's combine: sum over the experts, cast, add),
 * with the cast after it (alone[1]) when the region took that too. */
static int32_t multi_output(struct ctx *c, uint32_t pi, uint32_t o, uint32_t user, const uint32_t *alone, uint32_t n_alone)
{
	/* copy what is needed: fs_mine_add_region may move the region array */
	struct fs_region P = c->m->regions[pi];
	uint32_t alone_in[2], n_alone_in = 0;
	if (n_alone) {
		const struct fs_node *x = &c->g->nodes[alone[0]];
		for (uint32_t a = x->args; a < x->args + x->n_args && n_alone_in < 2; a++)
			if (c->g->args[a].kind == FS_ARG_NODE)
				alone_in[n_alone_in++] = c->g->args[a].node;
		P.nodes = (uint32_t *)alone, P.n_nodes = n_alone, P.inputs = alone_in, P.n_inputs = n_alone_in;
		P.sig = h64(hkey(c, alone[0], 0x616c6e), n_alone), P.n_kernels = n_alone, P.n_math = n_alone;
	}
	uint32_t ni = c->region_of[user];
	struct fs_region N;
	memset(&N, 0, sizeof(N));
	if (ni != UINT32_MAX)
		N = c->m->regions[ni];
	int has_n = ni != UINT32_MAX;
	uint32_t n = P.n_nodes + (has_n ? N.n_nodes : 1);
	uint32_t *nodes = fs_xmalloc(n * sizeof(uint32_t)), k = 0, ins[2] = {0, 0}, n_in = 0;
	uint32_t *keys = fs_xmalloc(n * sizeof(uint32_t)), nk = 0;
	uint64_t sig = h64(P.sig, has_n ? N.sig : hkey(c, user, 7));
	for (uint32_t i = 0; i < P.n_nodes; i++)
		nodes[k++] = P.nodes[i];
	for (uint32_t i = 0; has_n && i < N.n_nodes; i++)
		nodes[k++] = N.nodes[i];
	if (!has_n)
		nodes[k++] = user;
	qsort(nodes, k, sizeof(uint32_t), fs_cmp_u32);
	for (uint32_t i = 0; i < k; i++)
		if (c->role[nodes[i]] != ROLE_VIEW && !noop_cast(c, nodes[i]))
			keys[nk++] = c->s->ops[c->g->nodes[nodes[i]].op].key;
	qsort(keys, nk, sizeof(uint32_t), fs_cmp_u32);
	for (uint32_t i = 0; i < P.n_inputs && n_in < 2; i++)
		ins[n_in++] = P.inputs[i];
	uint32_t outs[2] = {o, has_n ? N.outputs[0] : user};
	int64_t b = fs_type_bytes(c->s, &c->g->types[c->g->nodes[o].out], c->o->bind, c->o->n_bind);
	uint32_t ri = fs_mine_add_region(c, nodes, k, ins, n_in, outs, 2);
	struct fs_region *r = &c->m->regions[ri];
	r->sig = h64(sig, 0x3417);
	r->kind = FS_KIND_MULTI_OUTPUT;
	/* named by a multi-output entry only: an add and a norm together have
	 * the ops of other norms (Gemma's 1 + w); and, as every name, only where
	 * the entry's pattern counts it */
	r->entry = -1;
	int32_t e = -1;
	while (c->o->cat && r->entry < 0 && (e = fs_catalog_match(c->o->cat, keys, nk, NULL, 0, (uint32_t)(e + 1))) >= 0)
		if (c->o->cat->e[e].kind == FS_KIND_MULTI_OUTPUT && fs_mine_may_name(c, e, nodes, k))
			r->entry = e;
	r->n_kernels = P.n_kernels + (has_n ? N.n_kernels : 1);
	r->n_math = P.n_math + (has_n ? N.n_math : 1);
	r->bytes_saved = b < 0 ? 0 : b;
	r->cost_known = b >= 0;
	r->launches_saved = 1;
	r->risks = FS_RISK_MULTI_OUTPUT | FS_RISK_NUMERICS | (P.risks & FS_RISK_DYNAMIC);
	int32_t named = r->entry;
	free(nodes);
	free(keys);
	return named;
}

/* Whether a path leaves `from` through a node outside both regions and comes
 * back into region ni (or to node `target` when ni is none): fusing P and N
 * would then make a cycle. DAG in file order: nothing past `limit` matters. */
static int comes_back(const struct ctx *c, uint32_t from, uint32_t pi, uint32_t ni, uint32_t target,
		      uint32_t limit)
{
	const struct fs_graph *g = c->g;
	uint32_t *stack = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t)), n = 0;
	uint8_t *seen = fs_xcalloc(g->n_nodes + 1, 1);
	int found = 0;
	stack[n++] = from;
	while (n && !found) {
		const struct fs_node *x = &g->nodes[stack[--n]];
		for (uint32_t u = 0; u < x->n_users && !found; u++) {
			uint32_t y = g->users[x->users + u];
			int in_p = c->region_of[y] == pi, in_n = ni != UINT32_MAX ? c->region_of[y] == ni : y == target;
			if (y > limit || seen[y] || in_p)
				continue;
			if (in_n) {
				found = x != &g->nodes[from];
				continue;
			}
			seen[y] = 1;
			stack[n++] = y;
		}
	}
	free(stack);
	free(seen);
	return found;
}

/* Whether user (reading o, or `from`, the value o passes through) is a norm
 * region or a fused norm op that P's output feeds without a cycle; if so,
 * the multi-output region of P and it is made. */
static int norm_user(struct ctx *c, uint32_t pi, uint32_t o, uint32_t from, uint32_t user, const uint32_t *alone,
		     uint32_t n_alone, int norm_kind)
{
	uint32_t ni = c->region_of[user];
	/* a norm chain, or a fused norm op (in a region of its own when
	 * it is an aten composite such as layer_norm) */
	const struct fs_region *N = ni != UINT32_MAX && !c->m->regions[ni].absorbed ? &c->m->regions[ni] : NULL;
	if (ni != UINT32_MAX && !N)
		return 0;
	int norm = N && N->n_nodes > 1 ? N->kind == FS_KIND_NORM && worth_it(c, N) : fused_norm_entry(c, user) >= 0;
	uint32_t last = ni != UINT32_MAX ? c->m->regions[ni].nodes[c->m->regions[ni].n_nodes - 1] : user;
	if (!norm || comes_back(c, from, pi, ni, user, last))
		return 0;
	if (norm_kind)
		multi_output(c, pi, o, user, alone, n_alone);
	else if (multi_output(c, pi, o, user, NULL, 0) < 0 && n_alone && n_alone < c->m->regions[pi].n_nodes)
		multi_output(c, pi, o, user, alone, n_alone);
	return 1;
}

/* P: a math region with one output that escapes to a norm region (or a fused
 * norm op) and elsewhere. */
static void find_multi_outputs(struct ctx *c, uint32_t n_vertical)
{
	const struct fs_graph *g = c->g;
	for (uint32_t pi = 0; pi < n_vertical; pi++) {
		const struct fs_region *P = &c->m->regions[pi];
		if (!P->n_nodes || !P->n_math || P->n_outputs != 1 || P->absorbed)
			continue;
		uint32_t o = P->outputs[0];
		/* the residual add P ends with (and the cast after it, if P took that
		 * too): a norm region feeds another norm as itself only through it,
		 * and a region whose whole chain names nothing (MiniMax's scaled
		 * residual, mul mul add) still holds that add + norm fusion */
		uint32_t alone[2], n_alone = 0, in = fs_mine_first_input(g, &g->nodes[o]);
		if (fs_mine_op_is(c->s, g->nodes[o].op, "add"))
			alone[n_alone++] = o;
		else if (fs_mine_op_is(c->s, g->nodes[o].op, "cast") && in != UINT32_MAX && fs_mine_op_is(c->s, g->nodes[in].op, "add") &&
			 c->region_of[in] == pi)
			alone[n_alone++] = in, alone[n_alone++] = o;
		int norm_kind = P->kind == FS_KIND_NORM;
		if (norm_kind && !n_alone)
			continue;
		const struct fs_node *n = &g->nodes[o];
		int done = 0;
		for (uint32_t u = 0; u < n->n_users && !done; u++) {
			uint32_t user = g->users[n->users + u];
			const struct fs_node *y = &g->nodes[user];
			if (!fs_mine_noop_dropout(c->s, g, y)) {
				done = norm_user(c, pi, o, o, user, alone, n_alone, norm_kind);
				continue;
			}
			/* a dropout at inference passes the sum on: its readers are the sum's */
			for (uint32_t v = 0; v < y->n_users && !done; v++)
				done = norm_user(c, pi, o, user, g->users[y->users + v], alone, n_alone, norm_kind);
		}
	}
}

/* ---- horizontal: GEMMs sharing an input ---------------------------------------------------- */

static uint32_t view_root(const struct ctx *c, uint32_t i)
{
	while (c->role[i] == ROLE_VIEW) {
		const struct fs_node *n = &c->g->nodes[i];
		if (!n->n_args || c->g->args[n->args].kind != FS_ARG_NODE)
			break;
		i = c->g->args[n->args].node;
	}
	return i;
}

/* A GEMM that takes its bias first (addmm / baddbmm / addmv, as linear
 * decomposes): its activation is the second operand, its weight the third. */
static uint32_t bias_first(const struct ctx *c, const struct fs_node *n)
{
	return fs_mine_op_is(c->s, n->op, "addmm") || fs_mine_op_is(c->s, n->op, "baddbmm") || fs_mine_op_is(c->s, n->op, "addmv");
}

static uint64_t weight_class(const struct ctx *c, const struct fs_node *n)
{
	const struct fs_graph *g = c->g;
	const struct fs_arg *w = fs_mine_arg(g, n, bias_first(c, n) + 1);
	if (!w || w->kind != FS_ARG_NODE)
		return 0;
	const struct fs_type *t = &g->types[g->nodes[view_root(c, w->node)].out];
	return h64(t->dtype, c->s->types.shapes[t->shape].rank);
}

/* A horizontal region: k members reading one value s0 once instead of k
 * times, in one launch instead of k. */
static struct fs_region *add_shared_read(struct ctx *c, const uint32_t *nodes, uint32_t n, uint32_t s0,
					 const uint32_t *outs, uint32_t n_out, uint32_t k, uint64_t sig, uint8_t kind)
{
	const struct fs_graph *g = c->g;
	int64_t b = fs_type_bytes(c->s, &g->types[g->nodes[s0].out], c->o->bind, c->o->n_bind);
	uint32_t ri = fs_mine_add_region(c, nodes, n, &s0, 1, outs, n_out); /* may move the regions */
	struct fs_region *r = &c->m->regions[ri];
	r->sig = sig;
	r->kind = kind;
	r->bytes_saved = b < 0 ? 0 : fs_sat_mul(b, k - 1);
	r->cost_known = b >= 0;
	r->launches_saved = k - 1;
	return r;
}

/* GEMMs grouped by the value they read: (source, node) pairs sorted, so the
 * groups come out in file order of their first GEMM at n log n cost. */
struct src_node {
	uint32_t src, node;
};

static int src_node_cmp(const void *a, const void *b)
{
	const struct src_node *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static void find_parallel_gemms(struct ctx *c)
{
	const struct fs_graph *g = c->g;
	uint32_t n = g->n_nodes, ng = 0, *members = fs_xmalloc((n ? n : 1) * sizeof(uint32_t));
	struct src_node *v = fs_xmalloc((n ? n : 1) * sizeof(*v));
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_node *x = &g->nodes[i];
		const struct fs_arg *in = x->kind == FS_NODE_CALL && c->s->ops[x->op].cls == FS_OPC_GEMM ? fs_mine_arg(g, x, bias_first(c, x)) : NULL;
		if (in && in->kind == FS_ARG_NODE)
			v[ng++] = (struct src_node){view_root(c, in->node), i};
	}
	if (ng)
		qsort(v, ng, sizeof(*v), src_node_cmp);
	/* groups in file order of their first member: (node, index in v) sorted */
	struct src_node *first = fs_xmalloc((ng + 1) * sizeof(*first));
	uint32_t nfirst = 0;
	for (uint32_t i = 0; i < ng; i++)
		if (!i || v[i].src != v[i - 1].src)
			first[nfirst++] = (struct src_node){v[i].node, i};
	qsort(first, nfirst, sizeof(*first), src_node_cmp);
	int32_t entry = -1;
	for (uint32_t e = 0; c->o->cat && e < c->o->cat->n; e++)
		if (c->o->cat->e[e].kind == FS_KIND_HORIZONTAL_GEMM)
			entry = (int32_t)e;
	for (uint32_t f = 0; f < nfirst; f++) {
		uint32_t i = first[f].node, k = 0, s0 = v[i].src;
		uint64_t sig = hkey(c, v[i].node, 0x6e33);
		for (uint32_t j = i; j < ng && v[j].src == s0; j++) {
			members[k++] = v[j].node;
			sig = h64(sig, weight_class(c, &g->nodes[v[j].node]));
		}
		if (k < 2)
			continue;
		sig = h64(sig, k);
		struct fs_region *r = add_shared_read(c, members, k, s0, members, k, k, sig, FS_KIND_HORIZONTAL_GEMM);
		r->entry = entry >= 0 && fs_mine_confirmed_any(c, entry, members, k) ? entry : -1;
		r->n_kernels = k;
		r->risks = c->s->types.shapes[g->types[g->nodes[s0].out].shape].symbolic ? FS_RISK_DYNAMIC : 0;
	}
	free(first);
	free(members);
	free(v);
}

/* ---- horizontal: sibling elementwise chains sharing an input ------------------------------- */

enum { MAX_SIBLINGS = 8 };

/* A chain that is a candidate itself (two kernels or more), unnamed and elementwise. */
static int sibling_kind(const struct ctx *c, const struct fs_region *r)
{
	return r->n_nodes && r->n_math && r->entry < 0 && !r->absorbed && worth_it(c, r) &&
	       (r->kind == FS_KIND_ELEMENTWISE || r->kind == FS_KIND_GEMM_EPILOGUE || r->kind == FS_KIND_ATTENTION_ADJACENT);
}

/* Whether a path leads from region a's nodes to region b (file order is
 * topological: nothing past b's last node matters). */
static int reaches(const struct ctx *c, uint32_t a, uint32_t b, uint8_t *seen, uint32_t *stack)
{
	const struct fs_graph *g = c->g;
	const struct fs_region *A = &c->m->regions[a], *B = &c->m->regions[b];
	uint32_t limit = B->nodes[B->n_nodes - 1], n = 0, n_seen = 0, found = 0;
	for (uint32_t i = 0; i < A->n_nodes; i++)
		stack[n++] = A->nodes[i];
	while (n && !found) {
		const struct fs_node *x = &g->nodes[stack[--n]];
		for (uint32_t u = 0; u < x->n_users && !found; u++) {
			uint32_t y = g->users[x->users + u];
			if (y > limit || seen[y] || c->region_of[y] == a)
				continue;
			found = c->region_of[y] == b;
			seen[y] = 1;
			stack[n++] = y;
			stack[g->n_nodes + n_seen++] = y; /* to clear */
		}
	}
	for (uint32_t i = 0; i < n_seen; i++)
		seen[stack[g->n_nodes + i]] = 0;
	return (int)found;
}

struct src_region {
	uint32_t src, first, region; /* first: the region's first node (file order) */
};

static int src_cmp(const void *a, const void *b)
{
	const struct src_region *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Unnamed elementwise chains that read one computed value and do not depend
 * on each other (RoPE's cos and sin of one angle table, say): one kernel can
 * read the value once and write every chain's output. Chains join in file
 * order; one that depends on a member is left out. */
static void find_siblings(struct ctx *c, uint32_t n_vertical)
{
	const struct fs_graph *g = c->g;
	struct src_region *v = NULL;
	uint32_t nv = 0, cap = 0;
	for (uint32_t ri = 0; ri < n_vertical; ri++) {
		const struct fs_region *r = &c->m->regions[ri];
		for (uint32_t i = 0; sibling_kind(c, r) && i < r->n_inputs; i++) {
			uint32_t s0 = view_root(c, r->inputs[i]);
			if (g->nodes[s0].kind != FS_NODE_CALL)
				continue; /* weights and graph inputs: nothing computed to share */
			FS_GROW(v, cap, nv + 1);
			v[nv++] = (struct src_region){s0, r->nodes[0], ri};
		}
	}
	if (nv)
		qsort(v, nv, sizeof(*v), src_cmp);
	uint8_t *seen = fs_xcalloc(g->n_nodes + 1, 1), *grouped = fs_xcalloc(n_vertical + 1, 1);
	uint32_t *stack = fs_xmalloc((2 * g->n_nodes + 1) * sizeof(uint32_t));
	for (uint32_t i = 0, j; i < nv; i = j) {
		uint32_t members[MAX_SIBLINGS], k = 0;
		for (j = i; j < nv && v[j].src == v[i].src; j++) {
			/* a chain joins one group: the first value it shares */
			int ok = k < MAX_SIBLINGS && !grouped[v[j].region] && (!k || members[k - 1] != v[j].region);
			for (uint32_t m = 0; ok && m < k; m++)
				ok = !reaches(c, members[m], v[j].region, seen, stack) &&
				     !reaches(c, v[j].region, members[m], seen, stack);
			if (ok)
				members[k++] = v[j].region;
		}
		if (k < 2)
			continue;
		for (uint32_t m = 0; m < k; m++)
			grouped[members[m]] = 1;
		uint32_t n_nodes = 0, n_out = 0, s0 = v[i].src;
		uint64_t sig = h64(hkey(c, s0, 0x51b1), k);
		uint64_t msig[MAX_SIBLINGS];
		for (uint32_t m = 0; m < k; m++) {
			n_nodes += c->m->regions[members[m]].n_nodes;
			n_out += c->m->regions[members[m]].n_outputs;
			msig[m] = c->m->regions[members[m]].sig;
		}
		qsort(msig, k, sizeof(uint64_t), cmp_u64);
		for (uint32_t m = 0; m < k; m++)
			sig = h64(sig, msig[m]);
		uint32_t *nodes = fs_xmalloc(n_nodes * sizeof(uint32_t)), *outs = fs_xmalloc(n_out * sizeof(uint32_t));
		uint32_t nn = 0, no = 0, kernels = 0, math = 0, risks = 0;
		for (uint32_t m = 0; m < k; m++) {
			const struct fs_region *r = &c->m->regions[members[m]];
			memcpy(nodes + nn, r->nodes, r->n_nodes * sizeof(uint32_t));
			memcpy(outs + no, r->outputs, r->n_outputs * sizeof(uint32_t));
			nn += r->n_nodes, no += r->n_outputs, kernels += r->n_kernels, math += r->n_math;
			risks |= r->risks;
		}
		qsort(nodes, nn, sizeof(uint32_t), fs_cmp_u32);
		struct fs_region *r = add_shared_read(c, nodes, nn, s0, outs, no, k, sig, FS_KIND_HORIZONTAL_ELEMENTWISE);
		r->n_kernels = kernels;
		r->n_math = math;
		r->risks = risks | FS_RISK_MULTI_OUTPUT;
		free(nodes);
		free(outs);
	}
	free(stack);
	free(grouped);
	free(seen);
	free(v);
}

/* ---- grouping into candidates -------------------------------------------------------------- */

struct keyed {
	uint64_t sig;
	uint32_t first;   /* first node, for file order inside a group */
	uint32_t region;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->sig != y->sig)
		return x->sig < y->sig ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* entry name, or kind:op-op-... from the first instance's kernels */
static void name_candidate(const struct ctx *c, struct fs_candidate *k, const struct fs_region *r)
{
	if (r->entry >= 0) {
		snprintf(k->name, sizeof(k->name), "%s", c->o->cat->e[r->entry].name);
		return;
	}
	size_t len = (size_t)snprintf(k->name, sizeof(k->name), "%s:", fs_kind_name((enum fs_kind)r->kind));
	uint32_t seen[6], ns = 0;
	for (uint32_t i = 0; i < r->n_nodes && ns < 6 && len < sizeof(k->name); i++) {
		uint32_t node = r->nodes[i];
		if (r->kind != FS_KIND_HORIZONTAL_GEMM && !fs_mine_is_kernel(c, node))
			continue;
		uint32_t key = c->s->ops[c->g->nodes[node].op].key, j = 0;
		while (j < ns && seen[j] != key)
			j++;
		if (j < ns)
			continue;
		seen[ns++] = key;
		len += (size_t)snprintf(k->name + len, sizeof(k->name) - len, "%s%s", ns > 1 ? "-" : "",
					fs_scan_str(c->s, key));
	}
}

/* Instances that share a computed input with exactly one other instance:
 * q and k RoPE chains of one layer reading the same cos / sin, say. */
static uint32_t count_pairs(const struct ctx *c, const struct fs_candidate *k)
{
	uint8_t *holders = c->mark; /* per node, saturating at 3; zeroed again below */
	for (uint32_t i = 0; i < k->n_instances; i++) {
		const struct fs_region *b = &c->m->regions[k->instances[i]];
		for (uint32_t y = 0; y < b->n_inputs; y++)
			if (holders[b->inputs[y]] < 3)
				holders[b->inputs[y]]++;
	}
	uint32_t shared = 0;
	for (uint32_t i = 0; i < k->n_instances; i++) {
		const struct fs_region *a = &c->m->regions[k->instances[i]];
		int found = 0;
		for (uint32_t x = 0; x < a->n_inputs && !found; x++)
			found = c->g->nodes[a->inputs[x]].kind == FS_NODE_CALL && holders[a->inputs[x]] == 2;
		shared += (uint32_t)found;
	}
	for (uint32_t i = 0; i < k->n_instances; i++) {
		const struct fs_region *b = &c->m->regions[k->instances[i]];
		for (uint32_t y = 0; y < b->n_inputs; y++)
			holders[b->inputs[y]] = 0;
	}
	return shared / 2;
}

static enum fs_rec recommend(const struct ctx *c, struct fs_candidate *k)
{
	uint32_t wrapper, pick = k->entry >= 0 ? fs_catalog_pick(c->o->cat, &c->o->cat->e[k->entry], &wrapper) : 0;
	if (pick) { /* with a tree: only what it registers */
		const struct fs_catalog_entry *e = &c->o->cat->e[k->entry];
		for (uint32_t i = 0; i < e->n_subsumed; i++)
			k->absorbed |= e->subsumed[i] == pick;
		return FS_REC_USE_EXISTING;
	}
	if (k->kind == FS_KIND_HORIZONTAL_GEMM || k->kind == FS_KIND_LAYOUT)
		return FS_REC_DEFER; /* needs a change inside a GEMM / attention kernel */
	if (k->cost_known && k->bytes_total < (1 << 20))
		return FS_REC_DEFER; /* under a MiB per forward pass: not worth a kernel */
	return FS_REC_NEEDS_TRITON;
}

static void make_candidate(struct ctx *c, const struct keyed *v, uint32_t n)
{
	struct fs_mine *m = c->m;
	FS_GROW(m->cands, m->cap_cands, m->n_cands + 1);
	struct fs_candidate *k = &m->cands[m->n_cands++];
	memset(k, 0, sizeof(*k));
	const struct fs_region *r0 = &m->regions[v[0].region];
	k->sig = v[0].sig;
	k->kind = r0->kind;
	k->entry = r0->entry;
	k->instances = fs_arena_alloc(&m->arena, n * sizeof(uint32_t));
	k->n_instances = n;
	k->cost_known = 1;
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_region *r = &m->regions[v[i].region];
		k->instances[i] = v[i].region;
		k->bytes_total = fs_sat_add(k->bytes_total, r->bytes_saved);
		k->launches_total += r->launches_saved;
		k->risks |= r->risks;
		k->cost_known &= r->cost_known;
	}
	k->bytes_per_instance = k->bytes_total == INT64_MAX ? INT64_MAX : k->bytes_total / n; /* saturated stays so */
	k->launches_per_instance = r0->launches_saved;
	name_candidate(c, k, r0);
	snprintf(k->id, sizeof(k->id), "%s-%08x", k->name, (uint32_t)(k->sig >> 32));
	for (char *p = k->id; *p; p++)
		if (*p == ':')
			*p = '.';
	k->pairs = count_pairs(c, k);
	fs_mine_pattern_count(c, k);
	k->rec = recommend(c, k);
}

/* Fusions first, by bytes then launches; chains an attention kernel absorbs
 * with the ops around them (its internals, the GQA copy) after them, as
 * one recommendation each rather than a fusion of their own. */
static int rank_cmp(const void *a, const void *b)
{
	const struct fs_candidate *x = a, *y = b;
	if (x->absorbed != y->absorbed)
		return x->absorbed ? 1 : -1;
	if (x->bytes_total != y->bytes_total)
		return x->bytes_total > y->bytes_total ? -1 : 1;
	if (x->launches_total != y->launches_total)
		return x->launches_total > y->launches_total ? -1 : 1;
	int s = strcmp(x->name, y->name);
	return s ? s : strcmp(x->id, y->id);
}

void fs_mine_candidates(struct ctx *c)
{
	struct fs_mine *m = c->m;
	uint32_t n_vertical = m->n_regions;
	for (uint32_t i = 0; i < n_vertical; i++) {
		struct fs_region *r = &m->regions[i];
		if (!r->n_nodes)
			continue;
		r->kind = region_kind(c, r);
		fs_mine_region_cost(c, r);
		r->sig = fs_mine_signature(c, r);
	}
	fs_mine_attention_cores(c, n_vertical);
	find_multi_outputs(c, n_vertical);
	find_parallel_gemms(c);
	find_siblings(c, n_vertical);
	struct keyed *v = fs_xmalloc((m->n_regions + 1) * sizeof(*v));
	uint32_t nv = 0;
	for (uint32_t i = 0; i < m->n_regions; i++) {
		const struct fs_region *r = &m->regions[i];
		/* none of its values is read (a rotary table a 2-layer hybrid never
		 * uses): dead in the export, nothing to save by fusing it */
		if ((i < n_vertical && (!worth_it(c, r) || r->absorbed)) || !r->n_outputs)
			continue;
		v[nv++] = (struct keyed){r->sig, r->nodes[0], i};
	}
	qsort(v, nv, sizeof(*v), keyed_cmp);
	for (uint32_t i = 0, j; i < nv; i = j) {
		for (j = i + 1; j < nv && v[j].sig == v[i].sig; j++)
			;
		make_candidate(c, v + i, j - i);
	}
	free(v);
	if (m->n_cands)
		qsort(m->cands, m->n_cands, sizeof(*m->cands), rank_cmp);
}
