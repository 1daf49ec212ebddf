/*
 * grouping.c: the maximal fusible regions of one graph (called by mine.c),
 * over the roles and region records of regions.c.
 *
 * 1. Grouping, consumers first (reverse file order): a math / copy / view
 *    node joins the region of its consumers when every real consumer is in
 *    that one region and it is not a graph output. So an intermediate never
 *    has a consumer outside its region (side-effect-only users do not count),
 *    the region stays acyclic, and views between fused ops are absorbed.
 * 2. Motif split (motif.c): where a catalog chain sits inside a larger
 *    region (RoPE followed by the attention's cast and scale in a decomposed
 *    graph), it is carved out and the rest re-split into connected parts, so
 *    counts do not depend on the export flavour. A chain is never carved out
 *    of a larger normalisation: when a reduction outside it is used on its
 *    own source (x - mean(x) of a hand-written LayerNorm) and feeds the
 *    chain's reduction, the region stays whole and is named whole.
 * Linear in the graph's nodes and edges, whatever its shape.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

static void name_region(struct ctx *c, struct fs_region *r, uint32_t *keys, uint32_t *views)
{
	if (r->entry < 0)
		r->entry = fs_mine_name(c, r->nodes, r->n_nodes, keys, views);
}

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
		fs_mine_finish_region(c, fs_mine_new_region(c, order + count[k], count[k + 1] - count[k]));
	}
	free(fill);
	free(order);
	free(count);
	free(group);

	uint32_t *scratch = fs_xmalloc((5 * n + 1) * sizeof(uint32_t)); /* fs_mine_split_motifs' */
	for (uint32_t ri = 0, grouped = c->m->n_regions; ri < grouped; ri++) { /* a split's regions are searched */
		struct fs_region *r = &c->m->regions[ri];
		if (r->n_nodes < 2 || r->n_kernels < 2)
			continue;
		name_region(c, r, scratch, scratch + n);
		if (c->m->regions[ri].entry < 0)
			fs_mine_split_motifs(c, ri, scratch);
	}
	for (uint32_t ri = 0; ri < c->m->n_regions; ri++) {
		struct fs_region *r = &c->m->regions[ri];
		if (r->n_nodes && r->entry < 0)
			name_region(c, r, scratch, scratch + n);
	}
	free(scratch);
}
