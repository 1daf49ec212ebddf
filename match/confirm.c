/*
 * confirm.c: structural confirmation of catalog names (called by regions.c,
 * set up by mine.c). A catalog chain is a multiset of ops, so two different
 * computations with the same ops look alike: an RMSNorm followed by a
 * residual add and a cast has the ops of Gemma's (1 + w) RMSNorm. Where the
 * pattern library has a pattern declaring `catalog <entry>`, that pattern
 * says what the entry computes: a region (or a motif carved out of one) is
 * named by the entry only when one match of such a pattern covers every op
 * of the region that computes something (views and casts aside: they move
 * or round data, and patterns leave them optional). Entries without such a
 * pattern are named by their multiset alone. Each pattern is matched once
 * per graph; a per-node match id answers each question in O(region).
 */
#include "mine_int.h"
#include "fusescan/pattern.h"

#include <stdlib.h>
#include <string.h>

enum { NONE = UINT32_MAX };

static int32_t entry_named(const struct fs_catalog *cat, const char *name)
{
	for (uint32_t e = 0; e < cat->n; e++)
		if (!strcmp(cat->e[e].name, name))
			return (int32_t)e;
	return -1;
}

void fs_mine_confirm_init(struct ctx *c)
{
	const struct fs_catalog *cat = c->o->cat;
	const struct fs_patlib *lib = cat ? cat->confirm : NULL;
	c->n_confirm = 0;
	c->confirm = NULL;
	for (uint32_t i = 0; lib && i < lib->n; i++) {
		const struct fs_pattern *p = &lib->v[i];
		int32_t e = p->catalog ? entry_named(cat, p->catalog) : -1;
		if (e < 0)
			continue;
		c->confirm = fs_xrealloc(c->confirm, (c->n_confirm + 1) * sizeof(*c->confirm));
		struct fs_confirm *f = &c->confirm[c->n_confirm++];
		f->entry = e;
		f->match_of = fs_xmalloc((c->g->n_nodes + 1) * sizeof(uint32_t));
		memset(f->match_of, 0xff, (c->g->n_nodes + 1) * sizeof(uint32_t));
		struct fs_matches m;
		fs_match_pattern(p, c->s, c->g, &m);
		for (uint32_t k = 0; k < m.n; k++)
			for (uint32_t pn = 0; pn < p->n_nodes; pn++)
				if (p->nodes[pn].kind != FS_PN_INPUT && m.v[k].bind[pn] != NONE)
					f->match_of[m.v[k].bind[pn]] = k;
		fs_matches_release(&m);
	}
}

void fs_mine_confirm_release(struct ctx *c)
{
	for (uint32_t i = 0; i < c->n_confirm; i++)
		free(c->confirm[i].match_of);
	free(c->confirm);
	c->confirm = NULL;
	c->n_confirm = 0;
}

/* Whether node i computes something a pattern must account for (all count
 * in a region of views and casts alone, as repeat_kv's copying reshape). */
static int counts(const struct ctx *c, uint32_t i, int all)
{
	return all || (c->role[i] != ROLE_VIEW && c->s->ops[c->g->nodes[i].op].cls != FS_OPC_CAST);
}

/* The match of f covering every counted node, or NONE. */
static uint32_t covering(const struct ctx *c, const struct fs_confirm *f, const uint32_t *nodes, uint32_t n, int all)
{
	uint32_t id = NONE;
	for (uint32_t k = 0; k < n; k++) {
		if (!counts(c, nodes[k], all))
			continue;
		if (id == NONE)
			id = f->match_of[nodes[k]];
		if (id == NONE || f->match_of[nodes[k]] != id)
			return NONE;
	}
	return id;
}

int fs_mine_confirmed(const struct ctx *c, int32_t entry, const uint32_t *nodes, uint32_t n)
{
	int has_pattern = 0, all = 1;
	for (uint32_t k = 0; k < n && all; k++)
		all = !counts(c, nodes[k], 0);
	for (uint32_t i = 0; i < c->n_confirm; i++) {
		if (c->confirm[i].entry != entry)
			continue;
		has_pattern = 1;
		if (covering(c, &c->confirm[i], nodes, n, all) != NONE)
			return 1;
	}
	return !has_pattern;
}
