/*
 * attention.c: attention cores (called by candidates.c). Between the two
 * matrix products of an attention written out (q k^T, then the weights @ v)
 * lie a softmax and everything around it: scaling, the mask, soft-capping,
 * and, once run_decompositions() has written SDPA out, its guard for fully
 * masked rows (eq -inf, logical_not, any, where). An attention kernel
 * replaces all of it at once (AutoDeploy's attention matching does), so the
 * regions there are merged into one region per core, named by the catalog's
 * attention entries, instead of each being ranked as a fusion of its own.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

enum {
	WALK = 32,   /* nodes a search from the softmax to either product may visit */
	CORE = 256,  /* nodes of one core at most: scores-sized values between two products */
};

static int passable(const struct ctx *c, uint32_t i)
{
	return c->role[i] == ROLE_MATH || c->role[i] == ROLE_VIEW || c->role[i] == ROLE_COPY;
}

static int is_gemm(const struct ctx *c, uint32_t i)
{
	return c->g->nodes[i].kind == FS_NODE_CALL && c->s->ops[c->g->nodes[i].op].cls == FS_OPC_GEMM;
}

static int is_softmax(const struct ctx *c, uint32_t i)
{
	return c->g->nodes[i].kind == FS_NODE_CALL && (c->s->ops[c->g->nodes[i].op].flags & FS_OPF_SOFTMAX);
}

/* The nearest matrix product from `from`, through math and views only:
 * backwards over arguments (q k^T) or forwards over users (@ v). */
static uint32_t nearest_gemm(const struct ctx *c, uint32_t from, int forward)
{
	const struct fs_graph *g = c->g;
	uint32_t queue[WALK], head = 0, n = 0, found = UINT32_MAX;
	queue[n++] = from;
	while (head < n && found == UINT32_MAX) {
		const struct fs_node *x = &g->nodes[queue[head++]];
		uint32_t k = forward ? x->n_users : x->n_args;
		for (uint32_t j = 0; j < k && found == UINT32_MAX; j++) {
			uint32_t y = forward ? g->users[x->users + j] : g->args[x->args + j].node;
			if (!forward && g->args[x->args + j].kind != FS_ARG_NODE)
				continue;
			if (is_gemm(c, y))
				found = y;
			else if (passable(c, y) && n < WALK)
				queue[n++] = y;
		}
	}
	return found;
}

/* The core: what the first product's value reaches before the second one,
 * through math and views, each node claimed by one core only. Its size, or 0
 * when it is larger than CORE. */
static uint32_t core_nodes(const struct ctx *c, uint32_t g1, uint32_t g2, uint8_t *claimed, uint32_t *out)
{
	const struct fs_graph *g = c->g;
	uint32_t n = 0, head = 0;
	out[n++] = g1;
	while (head < n) {
		const struct fs_node *x = &g->nodes[out[head++]];
		for (uint32_t u = 0; u < x->n_users; u++) {
			uint32_t y = g->users[x->users + u];
			if (y >= g2 || claimed[y] || !passable(c, y))
				continue;
			if (n == CORE)
				return 0;
			claimed[y] = 1;
			out[n++] = y;
		}
	}
	memmove(out, out + 1, (n - 1) * sizeof(uint32_t)); /* the product itself is not in it */
	return n - 1;
}

static uint64_t h64(uint64_t h, uint64_t v)
{
	return fs_hash_bytes(&v, sizeof(v), h);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The attention entry whose chain is the core's kernels, else one that
 * named a region of it (the sinks' softmax beside its mask), else the first
 * attention entry without chains (the catalog's name for attention
 * internals no chain names), or -1. */
static int32_t core_entry(const struct ctx *c, const uint32_t *nodes, uint32_t n, const uint32_t *members, uint32_t k)
{
	uint32_t *keys = fs_xmalloc((n + 1) * sizeof(uint32_t)), nk = 0;
	for (uint32_t i = 0; i < n; i++)
		if (fs_mine_is_kernel(c, nodes[i]))
			keys[nk++] = c->s->ops[c->g->nodes[nodes[i]].op].key;
	qsort(keys, nk, sizeof(uint32_t), fs_cmp_u32);
	int32_t e = -1, found = -1;
	while (c->o->cat && found < 0 && (e = fs_catalog_match(c->o->cat, keys, nk, NULL, 0, (uint32_t)(e + 1))) >= 0)
		if (c->o->cat->e[e].kind == FS_KIND_ATTENTION_ADJACENT)
			found = e;
	free(keys);
	for (uint32_t m = 0; c->o->cat && found < 0 && m < k; m++)
		if (c->m->regions[members[m]].entry >= 0 &&
		    c->o->cat->e[c->m->regions[members[m]].entry].kind == FS_KIND_ATTENTION_ADJACENT)
			found = c->m->regions[members[m]].entry;
	for (uint32_t i = 0; c->o->cat && found < 0 && i < c->o->cat->n; i++)
		if (c->o->cat->e[i].kind == FS_KIND_ATTENTION_ADJACENT && !c->o->cat->e[i].n_chains)
			found = (int32_t)i;
	return found;
}

/* One core's regions merged: their nodes, inputs read from outside, values
 * read outside, cost and risks summed. */
static void merge(struct ctx *c, const uint32_t *members, uint32_t k)
{
	const struct fs_graph *g = c->g;
	uint32_t n = 0, n_in = 0, n_out = 0, kernels = 0, math = 0, risks = 0, launches = 0, known = 1;
	int64_t bytes = 0;
	uint64_t *sigs = fs_xmalloc(k * sizeof(uint64_t));
	for (uint32_t m = 0; m < k; m++)
		n += c->m->regions[members[m]].n_nodes + c->m->regions[members[m]].n_inputs +
		     c->m->regions[members[m]].n_outputs;
	uint32_t *nodes = fs_xmalloc(n * sizeof(uint32_t)), *in = fs_xmalloc(n * sizeof(uint32_t)),
		 *out = fs_xmalloc(n * sizeof(uint32_t));
	n = 0;
	for (uint32_t m = 0; m < k; m++) {
		const struct fs_region *r = &c->m->regions[members[m]];
		memcpy(nodes + n, r->nodes, r->n_nodes * sizeof(uint32_t));
		n += r->n_nodes, kernels += r->n_kernels, math += r->n_math, risks |= r->risks;
		bytes = fs_sat_add(bytes, r->bytes_saved), launches += r->launches_saved, known &= r->cost_known;
		sigs[m] = r->sig;
	}
	for (uint32_t m = 0; m < k; m++) {
		const struct fs_region *r = &c->m->regions[members[m]];
		for (uint32_t i = 0; i < r->n_inputs; i++) /* read from outside the merged region */
			if (c->region_of[r->inputs[i]] == UINT32_MAX || !c->m->regions[c->region_of[r->inputs[i]]].absorbed)
				in[n_in++] = r->inputs[i];
		for (uint32_t i = 0; i < r->n_outputs; i++) {
			const struct fs_node *x = &g->nodes[r->outputs[i]];
			int outside = (x->flags & FS_NODE_OUTPUT) != 0;
			for (uint32_t u = 0; u < x->n_users && !outside; u++) {
				uint32_t y = g->users[x->users + u], ry = c->region_of[y];
				outside = fs_mine_is_real_user(g, y) && (ry == UINT32_MAX || !c->m->regions[ry].absorbed);
			}
			if (outside)
				out[n_out++] = r->outputs[i];
		}
	}
	qsort(nodes, n, sizeof(uint32_t), fs_cmp_u32);
	qsort(sigs, k, sizeof(uint64_t), cmp_u64);
	int32_t entry = core_entry(c, nodes, n, members, k);
	/* a core of one region keeps its signature (and its candidate its id);
	 * a named core of several is one recommendation whatever its mask
	 * (sliding-window layers beside full ones: one attention kernel serves both) */
	uint64_t sig = k == 1 ? sigs[0] : h64(0xa77e, entry >= 0 ? (uint64_t)entry : k);
	for (uint32_t m = 0; m < k && entry < 0 && k > 1; m++)
		sig = h64(sig, sigs[m]);
	uint32_t ri = fs_mine_add_region(c, nodes, n, in, n_in, out, n_out); /* may move the regions */
	struct fs_region *r = &c->m->regions[ri];
	r->kind = FS_KIND_ATTENTION_ADJACENT;
	r->entry = entry;
	r->sig = sig;
	r->n_kernels = kernels, r->n_math = math, r->risks = risks;
	r->bytes_saved = bytes, r->launches_saved = launches, r->cost_known = (uint8_t)known;
	free(nodes);
	free(in);
	free(out);
	free(sigs);
}

/* Per softmax with a matrix product on each side: the vertical regions
 * touching its core are absorbed into one merged region (n_vertical: the
 * regions made so far are the vertical ones). */
void fs_mine_attention_cores(struct ctx *c, uint32_t n_vertical)
{
	const struct fs_graph *g = c->g;
	uint8_t *claimed = fs_xcalloc(g->n_nodes + 1, 1);
	uint32_t *core = fs_xmalloc((CORE + 1) * sizeof(uint32_t)), members[CORE];
	for (uint32_t s = 0; s < g->n_nodes; s++) {
		if (claimed[s] || !is_softmax(c, s))
			continue;
		uint32_t g1 = nearest_gemm(c, s, 0), g2 = nearest_gemm(c, s, 1), n, k = 0;
		if (g1 == UINT32_MAX || g2 == UINT32_MAX || !(n = core_nodes(c, g1, g2, claimed, core)))
			continue;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t ri = c->region_of[core[i]];
			if (ri >= n_vertical || c->m->regions[ri].absorbed || !c->m->regions[ri].n_nodes)
				continue;
			c->m->regions[ri].absorbed = 1;
			members[k++] = ri;
		}
		if (k)
			merge(c, members, k);
	}
	free(core);
	free(claimed);
}
