/*
 * mine.c: discovery on one graph, the entry point of match/ (see mine.h):
 * roles -> causal masks -> regions -> candidates -> cleanups, and how often the graph already
 * calls each catalog entry's fused kernels.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

const char *fs_rec_name(enum fs_rec r)
{
	static const char *const names[] = {"use_existing_kernel", "needs_triton_fallback", "defer"};
	return r <= FS_REC_DEFER ? names[r] : "defer";
}

/* Whether key is one of the n ops. */
static int among(uint32_t key, const uint32_t *ops, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if (ops[k] == key)
			return 1;
	return 0;
}

/* Per catalog entry: nodes calling its fused kernels (or a wrapper over
 * them), and nodes calling its reference ops (matched, but unfused). A node
 * counts once, for the first entry listing its op (an RMSNorm kernel also
 * serves the unweighted RMSNorm). */
static void count_fused(struct ctx *c)
{
	const struct fs_catalog *cat = c->o->cat;
	struct fs_mine *m = c->m;
	uint32_t n = cat ? cat->n : 0;
	size_t bytes = (n + 1) * sizeof(uint32_t);
	m->fused = memset(fs_arena_alloc(&m->arena, bytes), 0, bytes);
	m->fused_op = memset(fs_arena_alloc(&m->arena, bytes), 0, bytes);
	m->reference = memset(fs_arena_alloc(&m->arena, bytes), 0, bytes);
	m->reference_op = memset(fs_arena_alloc(&m->arena, bytes), 0, bytes);
	for (uint32_t i = 0; i < c->g->n_nodes; i++) {
		const struct fs_node *x = &c->g->nodes[i];
		if (x->kind != FS_NODE_CALL)
			continue;
		uint32_t key = c->s->ops[x->op].key;
		for (uint32_t e = 0; e < n; e++) {
			const struct fs_catalog_entry *en = &cat->e[e];
			int fused = among(key, en->kernels, en->n_kernels) || among(key, en->wrappers, en->n_wrappers);
			if (!fused && !among(key, en->reference, en->n_reference))
				continue;
			uint32_t *count = fused ? m->fused : m->reference, *op = fused ? m->fused_op : m->reference_op;
			count[e]++;
			op[e] = op[e] ? op[e] : key;
			break;
		}
	}
}

struct fs_mine *fs_mine_graph(const struct fs_scan *s, const struct fs_graph *g,
			      const struct fs_mine_opts *o)
{
	struct fs_mine *m = fs_xcalloc(1, sizeof(*m));
	fs_arena_init(&m->arena);
	m->s = s;
	m->g = g;
	uint32_t n = g->n_nodes + 1, keys = s->strs.n + 1;
	struct ctx c = {.m = m, .s = s, .g = g, .o = o, .role = fs_xcalloc(n, 1), .contig = fs_xcalloc(n, 1),
			.src = fs_xmalloc(n * sizeof(uint32_t)), .region_of = fs_xmalloc(n * sizeof(uint32_t)),
			.merkle = fs_xcalloc(n, sizeof(uint64_t)), .uses = fs_xcalloc(n, sizeof(uint32_t)),
			.visit = fs_xcalloc(n, sizeof(uint32_t)), .mark = fs_xcalloc(n, 1), .pos = fs_xmalloc(n * sizeof(uint32_t)),
			.count = fs_xcalloc(n, sizeof(uint32_t)), .key_n = fs_xcalloc(keys, sizeof(uint32_t)),
			.key_want = fs_xcalloc(keys, sizeof(uint32_t))};
	memset(c.region_of, 0xff, n * sizeof(uint32_t));
	memset(c.pos, 0xff, n * sizeof(uint32_t));
	fs_mine_roles(&c);
	fs_mine_confirm_init(&c);
	fs_mine_causal_masks(&c);
	fs_mine_regions(&c);
	fs_mine_candidates(&c);
	fs_mine_cleanups(&c);
	count_fused(&c);
	fs_mine_confirm_release(&c);
	free(c.role);
	free(c.contig);
	free(c.src);
	free(c.region_of);
	free(c.pos);
	free(c.count);
	free(c.key_n);
	free(c.key_want);
	free(c.merkle);
	free(c.uses);
	free(c.visit);
	free(c.mark);
	return m;
}

void fs_mine_free(struct fs_mine *m)
{
	if (!m)
		return;
	free(m->regions);
	free(m->cands);
	free(m->cleanups);
	fs_arena_release(&m->arena);
	free(m);
}
