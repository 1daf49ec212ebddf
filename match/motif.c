/*
 * motif.c: the motif split of grouping.c (step 2): catalog chains carved out
 * of a larger region, called once per region by fs_mine_regions.
 *
 * Every chain, longest first, is tried at every node of the chain's output
 * op in the region. Its motif there is found among the node's ancestors in
 * the region that lie within the chain's reach (at most its op count of
 * counted ops on the way, and 2 hops an op plus 8), peeled at the input side
 * until the multiset of counted ops is the chain's, or where that gets stuck
 * grown again from the root by longest distance (grow_within). A motif is
 * carved at once; the search goes on over what is left of the region, and
 * the nodes left at the end are split into parts once. Sets are marked per
 * node (c->pos, producers in c->count, ops per key in c->key_n), so a try
 * costs what the motif's reach holds, never the region's size: the passes
 * stay near linear whatever the graph's shape (a chain of thousands of ops,
 * a node with thousands of operands).
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

enum { NONE = UINT32_MAX };

/* A motif being grown at `root` for chain ch in region ri: its nodes in
 * set[0..n) (c->pos[node] its index; a peeled node has NONE there until the
 * set is compacted), with hops from the root and counted ops on the way. */
struct motif {
	struct ctx *c;
	uint32_t ri, root, reach;
	const struct fs_chain *ch;
	uint32_t *set, *hops, *cd, n;
	uint32_t off; /* op keys whose count in the set differs from the chain's */
};

static uint32_t key_of(const struct ctx *c, uint32_t node)
{
	return c->s->ops[c->g->nodes[node].op].key;
}

static int member(const struct motif *M, uint32_t v)
{
	return M->c->pos[v] != NONE;
}

/* key's count in the set changes by d (counted ops only) */
static void count_key(struct motif *M, uint32_t key, int d)
{
	uint32_t *have = M->c->key_n, want = M->c->key_want[key];
	M->off -= have[key] != want;
	have[key] = (uint32_t)((int)have[key] + d);
	M->off += have[key] != want;
}

static int matched(const struct motif *M)
{
	return M->off == 0;
}

static void add(struct motif *M, uint32_t v, uint32_t hops, uint32_t cd)
{
	M->c->pos[v] = M->n;
	M->set[M->n] = v, M->hops[M->n] = hops, M->cd[M->n++] = cd;
	if (fs_mine_counted(M->c, v))
		count_key(M, key_of(M->c, v), 1);
}

/* producers of each node in the set (distinct nodes), in c->count */
static void count_producers(struct motif *M)
{
	const struct fs_graph *g = M->c->g;
	for (uint32_t i = 0; i < M->n; i++) {
		const struct fs_node *x = &g->nodes[M->set[i]];
		for (uint32_t u = 0; u < x->n_users; u++)
			if (member(M, g->users[x->users + u]))
				M->c->count[g->users[x->users + u]]++;
	}
}

static void remove_at(struct motif *M, uint32_t i)
{
	struct ctx *c = M->c;
	uint32_t v = M->set[i];
	const struct fs_node *x = &c->g->nodes[v];
	c->pos[v] = NONE;
	c->count[v] = 0;
	if (fs_mine_counted(c, v))
		count_key(M, key_of(c, v), -1);
	for (uint32_t u = 0; u < x->n_users; u++)
		if (member(M, c->g->users[x->users + u]))
			c->count[c->g->users[x->users + u]]--;
}

static void compact(struct motif *M)
{
	uint32_t w = 0;
	for (uint32_t i = 0; i < M->n; i++)
		if (M->c->pos[M->set[i]] == i) {
			M->c->pos[M->set[i]] = w;
			M->set[w] = M->set[i], M->hops[w] = M->hops[i], M->cd[w++] = M->cd[i];
		}
	M->n = w;
}

/* the set emptied, every mark it left cleared */
static void clear(struct motif *M)
{
	for (uint32_t i = 0; i < M->n; i++)
		if (M->c->pos[M->set[i]] == i) {
			M->c->pos[M->set[i]] = NONE;
			M->c->count[M->set[i]] = 0;
			if (fs_mine_counted(M->c, M->set[i]))
				count_key(M, key_of(M->c, M->set[i]), -1);
		}
	M->n = 0;
}

/* The end of node x's data arguments: a cast reads data from its first
 * argument only (type_as(x, other): other lends its dtype). */
static uint32_t data_args_end(const struct ctx *c, const struct fs_node *x)
{
	const struct fs_graph *g = c->g;
	return c->s->ops[x->op].cls == FS_OPC_CAST && x->n_args ? x->args + g->args[x->args].span
								 : x->args + x->n_args;
}

/* The root's ancestors in the region within the chain's reach, nearest
 * first (breadth first): through every argument, or (data) a cast's first. */
static void search(struct motif *M, int data)
{
	const struct ctx *c = M->c;
	const struct fs_graph *g = c->g;
	add(M, M->root, 0, (uint32_t)fs_mine_counted(c, M->root));
	for (uint32_t w = 0; w < M->n; w++) {
		const struct fs_node *x = &g->nodes[M->set[w]];
		uint32_t end = data ? data_args_end(c, x) : x->args + x->n_args, hops = M->hops[w] + 1, cd = M->cd[w];
		for (uint32_t a = x->args; hops <= M->reach && a < end; a++) {
			uint32_t p = g->args[a].node;
			if (g->args[a].kind == FS_ARG_NODE && c->region_of[p] == M->ri && !member(M, p) &&
			    cd + (uint32_t)fs_mine_counted(c, p) <= M->ch->n_ops)
				add(M, p, hops, cd + (uint32_t)fs_mine_counted(c, p));
		}
	}
}

/* Peels the set at its input side, farthest first: a node no node of the
 * set feeds, a view or an op whose kind the set holds more of than the
 * chain, until the counted ops are the chain's. Whether they are. */
static int peel(struct motif *M)
{
	struct ctx *c = M->c;
	for (int progress = 1; !matched(M) && progress;) {
		progress = 0;
		for (uint32_t i = M->n; i-- > 0 && !matched(M);) {
			uint32_t v = M->set[i];
			if (c->pos[v] != i || v == M->root || c->count[v])
				continue;
			if (fs_mine_counted(c, v) && c->key_n[key_of(c, v)] <= c->key_want[key_of(c, v)])
				continue;
			remove_at(M, i);
			progress = 1;
		}
		compact(M);
	}
	return matched(M);
}

static int by_dist(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b; /* {dist, node} */
	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1] ? -1 : x[1] < y[1]);
}

/* The chain as the ops nearest the root: the root's ancestors ranked by their
 * longest distance from it (an op that an interior op also reads by a longer
 * way, as the residual sum under a norm's statistics, is further upstream), a
 * counted op taken only while the chain has room for its kind (views pass),
 * then the views left at the input side dropped. For regions whose input
 * side holds ops of the chain's kinds (a state-space scan's muls before a
 * gated norm), where peeling from the input side never gets past them.
 * `rank`: scratch for 2 x the set. */
static void grow_within(struct motif *M, uint32_t *rank)
{
	struct ctx *c = M->c;
	const struct fs_graph *g = c->g;
	clear(M);
	search(M, 1);
	uint32_t n = M->n;
	for (uint32_t i = 0; i < n; i++) /* longest distance, users first: file order is topological */
		rank[2 * i] = M->set[i] == M->root ? 0 : NONE, rank[2 * i + 1] = M->set[i];
	qsort(rank, n, 2 * sizeof(uint32_t), by_dist); /* the root first, then by node, last first */
	for (uint32_t i = 0; i < n; i++)
		M->hops[c->pos[rank[2 * i + 1]]] = rank[2 * i];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = rank[2 * i + 1], d = M->hops[c->pos[v]];
		const struct fs_node *x = &g->nodes[v];
		for (uint32_t a = x->args; d != NONE && a < data_args_end(c, x); a++)
			if (g->args[a].kind == FS_ARG_NODE && member(M, g->args[a].node)) {
				uint32_t *dp = &M->hops[c->pos[g->args[a].node]];
				*dp = *dp == NONE || *dp < d + 1 ? d + 1 : *dp;
			}
	}
	for (uint32_t i = 0; i < n; i++)
		rank[2 * i] = M->hops[i], rank[2 * i + 1] = M->set[i];
	qsort(rank, n, 2 * sizeof(uint32_t), by_dist);
	clear(M);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = rank[2 * i + 1];
		if (!fs_mine_counted(c, v) || c->key_n[key_of(c, v)] < c->key_want[key_of(c, v)])
			add(M, v, rank[2 * i], 0);
	}
	count_producers(M);
	for (int dropped = 1; dropped;) { /* views left at the input side */
		dropped = 0;
		for (uint32_t i = M->n; i-- > 0;)
			if (c->pos[M->set[i]] == i && M->set[i] != M->root && !fs_mine_counted(c, M->set[i]) && !c->count[M->set[i]])
				remove_at(M, i), dropped = 1;
		compact(M);
	}
}

/* The chain's views are in the motif or feed it, and no op of it but the
 * root is read outside it (nor is a graph output). */
static int sound(const struct motif *M, uint32_t *views, uint32_t max)
{
	const struct ctx *c = M->c;
	const struct fs_graph *g = c->g;
	uint32_t nv;
	fs_mine_keys(c, M->set, M->n, NULL, views, &nv, max);
	if (!fs_u32_has_all(M->ch->views, M->ch->n_views, views, nv))
		return 0;
	for (uint32_t i = 0; i < M->n; i++) {
		const struct fs_node *x = &g->nodes[M->set[i]];
		if (M->set[i] == M->root)
			continue;
		if (x->flags & FS_NODE_OUTPUT)
			return 0;
		for (uint32_t u = 0; u < x->n_users; u++)
			if (fs_mine_is_real_user(g, g->users[x->users + u]) && !member(M, g->users[x->users + u]))
				return 0;
	}
	return 1;
}

/* The chain ending at M->root: its node count (the set holds the motif), or
 * 0 when the chain is not exactly there, or an op of it is read outside it.
 * `scratch`: 2 x the graph's nodes. */
static uint32_t grow_motif(struct motif *M, uint32_t *scratch)
{
	search(M, 0);
	count_producers(M);
	for (int within = 0; !peel(M);) {
		if (within++)
			return 0;
		grow_within(M, scratch);
	}
	return sound(M, scratch, M->c->g->n_nodes) ? M->n : 0;
}

static int is_reduction(const struct ctx *c, uint32_t node)
{
	uint8_t cls = c->s->ops[c->g->nodes[node].op].cls;
	return cls == FS_OPC_REDUCTION || cls == FS_OPC_NORM;
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
 * motif's reduction within the chain's reach (a hand-written LayerNorm
 * around an RMSNorm-shaped tail, a softmax after a max taken with attention
 * sinks). Such a motif is not carved out. Reductions that merely produce the
 * motif's input (an MoE's sum of experts, a state-space scan) do not count.
 * `stack`: 2 x the graph's nodes. */
static int tail_of_norm(const struct motif *M, uint32_t *stack)
{
	const struct ctx *c = M->c;
	const struct fs_graph *g = c->g;
	uint8_t *seen = c->mark; /* zeroed again below */
	uint32_t n = 0, found = 0;
	for (uint32_t i = 0; i < M->n; i++)
		if (is_reduction(c, M->set[i]))
			stack[2 * n] = M->set[i], stack[2 * n++ + 1] = 0, seen[M->set[i]] = 1;
	for (uint32_t w = 0; w < n && !found; w++) { /* breadth first, up to the reach */
		const struct fs_node *x = &g->nodes[stack[2 * w]];
		for (uint32_t a = x->args; stack[2 * w + 1] < M->reach && a < x->args + x->n_args && !found; a++) {
			uint32_t p = g->args[a].node;
			if (g->args[a].kind != FS_ARG_NODE || c->region_of[p] != M->ri || seen[p])
				continue;
			seen[p] = 1;
			stack[2 * n] = p, stack[2 * n++ + 1] = stack[2 * w + 1] + 1;
			found = is_reduction(c, p) && !member(M, p) && centres(c, M->ri, p);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		seen[stack[2 * i]] = 0;
	return (int)found;
}

/* ---- splitting ------------------------------------------------------------------------- */

/* Motif crossings below each node of region ri and of the motifs carved
 * from it ([m0, m1)), in c->count: an edge into a motif from outside it
 * counts one. Nodes of a part that all sit at one level can never feed a
 * motif that feeds the part (that path would cross one more), so parts of
 * one level keep the regions acyclic. With one motif: its ancestors, and the
 * rest. */
static void levels(struct ctx *c, const uint32_t *nodes, uint32_t n, uint32_t ri, uint32_t m0, uint32_t m1)
{
	const struct fs_graph *g = c->g;
	for (uint32_t k = n; k-- > 0;) { /* users first: file order is topological */
		uint32_t v = nodes[k], lv = 0;
		const struct fs_node *x = &g->nodes[v];
		for (uint32_t u = 0; u < x->n_users; u++) {
			uint32_t user = g->users[x->users + u], r = c->region_of[user];
			if (r != ri && (r < m0 || r >= m1))
				continue;
			uint32_t l = c->count[user] + (r != c->region_of[v] && r != ri);
			lv = l > lv ? l : lv;
		}
		c->count[v] = lv;
	}
}

/* y joins the part being gathered when it is left in region ri at level lv */
static void gather(struct ctx *c, uint32_t y, uint32_t ri, uint32_t lv, uint32_t *queue, uint32_t *nq)
{
	if (c->region_of[y] == ri && !c->mark[y] && c->count[y] == lv)
		c->mark[y] = 1, queue[(*nq)++] = y;
}

/* The nodes left in region ri, split into connected parts of one level
 * each, every part a region. `queue`: the graph's nodes. */
static void split_rest(struct ctx *c, const uint32_t *nodes, uint32_t n, uint32_t ri, uint32_t m0, uint32_t m1, uint32_t *queue)
{
	const struct fs_graph *g = c->g;
	levels(c, nodes, n, ri, m0, m1);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nq = 0, lv = c->count[nodes[i]];
		gather(c, nodes[i], ri, lv, queue, &nq);
		for (uint32_t q = 0; q < nq; q++) { /* through operands and users */
			const struct fs_node *x = &g->nodes[queue[q]];
			for (uint32_t a = x->args; a < x->args + x->n_args; a++)
				if (g->args[a].kind == FS_ARG_NODE)
					gather(c, g->args[a].node, ri, lv, queue, &nq);
			for (uint32_t u = 0; u < x->n_users; u++)
				gather(c, g->users[x->users + u], ri, lv, queue, &nq);
		}
		for (uint32_t q = 0; q < nq; q++) /* the part's region now tells it apart; trimming wants the marks clear */
			c->mark[queue[q]] = 0;
		if (nq)
			fs_mine_finish_region(c, fs_mine_new_region(c, queue, nq));
	}
	for (uint32_t i = 0; i < n; i++)
		c->count[nodes[i]] = 0;
}

/* ---- the search -------------------------------------------------------------------------- */

/* y, a neighbour of the part being gathered: joins it when left in region
 * ri; *touch gets 1 when y lies in a motif carved by this search (region m0
 * or later) */
static int join(struct ctx *c, uint32_t y, uint32_t ri, uint32_t m0, uint32_t *part, uint32_t *n, uint32_t cap, int *touch)
{
	uint32_t r = c->region_of[y];
	*touch |= r != NONE && r >= m0;
	if (r != ri || c->mark[y])
		return 0;
	if (*n == cap)
		return -1;
	c->mark[y] = 1, part[(*n)++] = y;
	return 0;
}

/* The nodes left in region ri that root connects to, where they are few (at
 * most cap) and none of them both feeds and reads a motif carved by this
 * search (so they could be one part): their count in part, else 0. */
static uint32_t small_part(struct ctx *c, uint32_t ri, uint32_t root, uint32_t m0, uint32_t *part, uint32_t cap)
{
	const struct fs_graph *g = c->g;
	uint32_t n = 0;
	int reads = 0, feeds = 0, over = 0;
	c->mark[root] = 1, part[n++] = root;
	for (uint32_t q = 0; q < n && !over; q++) {
		const struct fs_node *x = &g->nodes[part[q]];
		for (uint32_t a = x->args; a < x->args + x->n_args && !over; a++)
			over = g->args[a].kind == FS_ARG_NODE && join(c, g->args[a].node, ri, m0, part, &n, cap, &reads);
		for (uint32_t u = 0; u < x->n_users && !over; u++)
			over = join(c, g->users[x->users + u], ri, m0, part, &n, cap, &feeds);
	}
	for (uint32_t i = 0; i < n; i++)
		c->mark[part[i]] = 0;
	return over || (reads && feeds) ? 0 : n;
}

/* Carves a motif, or the small part of the region left around it when
 * that is named as a whole (a part of its own would be: the rest of a
 * region a longer chain was carved from). */
static void carve(struct ctx *c, uint32_t ri, uint32_t m0, const uint32_t *motif, uint32_t mn, int32_t e, uint32_t cap,
		  uint32_t *scratch)
{
	uint32_t N = c->g->n_nodes, *part = scratch + N, np = c->m->n_regions > m0 ? small_part(c, ri, motif[0], m0, part, cap) : 0;
	int32_t pe = np ? fs_mine_name(c, part, np, scratch + 2 * N, scratch + 4 * N) : -1;
	if (pe >= 0)
		motif = part, mn = np, e = pe;
	uint32_t mi = fs_mine_new_region(c, motif, mn); /* the regions may move */
	c->m->regions[mi].entry = e;
}

/* Tries chain ch of entry e at each of its roots left in region ri; carves
 * every motif found. `scratch`: 5 x the graph's nodes. */
static void try_chain(struct ctx *c, uint32_t ri, const uint32_t *nodes, uint32_t n, int32_t e, const struct fs_chain *ch,
		      uint32_t m0, uint32_t cap, uint32_t *scratch)
{
	uint32_t N = c->g->n_nodes;
	for (uint32_t k = 0; k < ch->n_ops; k++)
		c->key_want[ch->ops[k]]++;
	struct motif M = {c, ri, 0, 2 * ch->n_ops + 8, ch, scratch, scratch + N, scratch + 2 * N, 0, 0};
	for (uint32_t k = 0; k < ch->n_ops; k++)
		M.off += k == 0 || ch->ops[k] != ch->ops[k - 1]; /* ops are sorted */
	for (uint32_t i = 0; i < n; i++) {
		if (c->region_of[nodes[i]] != ri || key_of(c, nodes[i]) != ch->root)
			continue;
		M.root = nodes[i];
		uint32_t mn = grow_motif(&M, scratch + 3 * N);
		if (mn && mn < n && !tail_of_norm(&M, scratch + 3 * N) && fs_mine_may_name(c, e, M.set, mn)) {
			uint32_t *motif = scratch + 3 * N;
			memcpy(motif, M.set, mn * sizeof(uint32_t)); /* the root first */
			clear(&M);
			carve(c, ri, m0, motif, mn, e, cap, scratch);
		}
		clear(&M);
	}
	for (uint32_t k = 0; k < ch->n_ops; k++)
		c->key_want[ch->ops[k]] = 0;
}

/* Whether region ri holds each op of ch at least as often (else no motif of
 * it can be there): per op key, in c->key_n, counted once per region. */
static int could_hold(const struct ctx *c, const struct fs_chain *ch)
{
	for (uint32_t k = 0; k < ch->n_ops; k++) {
		uint32_t need = 1;
		while (k + 1 < ch->n_ops && ch->ops[k + 1] == ch->ops[k])
			k++, need++;
		if (c->key_n[ch->ops[k]] < need)
			return 0;
	}
	return 1;
}

int fs_mine_split_motifs(struct ctx *c, uint32_t ri, uint32_t *scratch)
{
	const struct fs_catalog *cat = c->o->cat;
	uint32_t n = c->m->regions[ri].n_nodes, *nodes = c->m->regions[ri].nodes, longest = 0;
	uint32_t m0 = c->m->n_regions;
	for (uint32_t e = 0; cat && e < cat->n; e++)
		for (uint32_t k = 0; k < cat->e[e].n_chains; k++)
			longest = cat->e[e].chains[k].n_ops > longest ? cat->e[e].chains[k].n_ops : longest;
	for (uint32_t len = longest; len > 0; len--)
		for (uint32_t e = 0; e < cat->n; e++)
			for (uint32_t k = 0; fs_mine_vertical_entry(&cat->e[e]) && k < cat->e[e].n_chains; k++) {
				const struct fs_chain *ch = &cat->e[e].chains[k];
				if (ch->n_ops != len)
					continue;
				for (uint32_t i = 0; i < n; i++) /* the ops the region still holds */
					c->key_n[key_of(c, nodes[i])] += c->region_of[nodes[i]] == ri && fs_mine_counted(c, nodes[i]);
				int could = could_hold(c, ch);
				for (uint32_t i = 0; i < n; i++)
					c->key_n[key_of(c, nodes[i])] = 0;
				if (could)
					try_chain(c, ri, nodes, n, (int32_t)e, ch, m0, 4 * longest + 16 < n ? 4 * longest + 16 : n, scratch);
			}
	uint32_t m1 = c->m->n_regions;
	if (m1 == m0)
		return 0;
	split_rest(c, nodes, n, ri, m0, m1, scratch);
	c->m->regions[ri].n_nodes = 0; /* dissolved */
	for (uint32_t mi = m0; mi < m1; mi++)
		fs_mine_finish_region(c, mi);
	return 1;
}
