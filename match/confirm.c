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

/* Variant v's matches, merged with its pattern's other variants as `fusescan
 * match` counts them (once, at the pattern's first variant); all[] holds them. */
static void match_variants(const struct ctx *c, const struct fs_patlib *lib, uint32_t v, struct fs_matches *all,
			   uint8_t *done)
{
	if (done[v])
		return;
	uint32_t *group = fs_xmalloc(lib->n * sizeof(uint32_t)), n = 0;
	for (uint32_t i = v; i < lib->n; i++)
		if (!strcmp(lib->v[i].name, lib->v[v].name)) {
			fs_match_pattern(&lib->v[i], c->s, c->g, &all[i]);
			done[i] = 1;
			group[n++] = i;
		}
	fs_matches_merge_variants(lib, group, n, c->g->n_nodes, all);
	free(group);
}

static void add_confirm(struct ctx *c, int32_t e, uint32_t i, const struct fs_pattern *p, const struct fs_matches *m)
{
	c->confirm = fs_xrealloc(c->confirm, (c->n_confirm + 1) * sizeof(*c->confirm));
	struct fs_confirm *f = &c->confirm[c->n_confirm++];
	f->entry = e;
	f->pattern = i;
	f->match_of = fs_xmalloc((c->g->n_nodes + 1) * sizeof(uint32_t));
	memset(f->match_of, 0xff, (c->g->n_nodes + 1) * sizeof(uint32_t));
	f->n_matches = m->n;
	f->stamp = fs_xcalloc(m->n + 1, sizeof(uint32_t));
	f->stamp_now = 0;
	f->crossing = fs_xcalloc(m->n + 1, 1);
	for (uint32_t k = 0; k < m->n; k++)
		for (uint32_t pn = 0, from = NONE; pn < p->n_nodes; pn++) {
			uint32_t v = m->v[k].bind[pn];
			if (p->nodes[pn].kind == FS_PN_INPUT || v == NONE)
				continue;
			f->match_of[v] = k;
			if (c->g->origin) { /* an inlined graph: which module the node came from */
				f->crossing[k] |= from != NONE && c->g->origin[v] != from;
				from = c->g->origin[v];
			}
		}
}

void fs_mine_confirm_init(struct ctx *c)
{
	const struct fs_catalog *cat = c->o->cat;
	const struct fs_patlib *lib = cat ? cat->confirm : NULL;
	c->n_confirm = 0;
	c->confirm = NULL;
	if (!lib || !lib->n)
		return;
	struct fs_matches *all = fs_xcalloc(lib->n, sizeof(*all));
	uint8_t *done = fs_xcalloc(lib->n, 1);
	for (uint32_t i = 0; i < lib->n; i++) {
		const struct fs_pattern *p = &lib->v[i];
		int32_t e = p->catalog ? entry_named(cat, p->catalog) : -1;
		if (e < 0)
			continue;
		match_variants(c, lib, i, all, done);
		add_confirm(c, e, i, p, &all[i]);
	}
	for (uint32_t i = 0; i < lib->n; i++)
		if (done[i])
			fs_matches_release(&all[i]);
	free(all);
	free(done);
}

void fs_mine_confirm_release(struct ctx *c)
{
	for (uint32_t i = 0; i < c->n_confirm; i++) {
		free(c->confirm[i].match_of);
		free(c->confirm[i].stamp);
		free(c->confirm[i].crossing);
	}
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

int fs_mine_confirmed_any(const struct ctx *c, int32_t entry, const uint32_t *nodes, uint32_t n)
{
	int has_pattern = 0;
	for (uint32_t i = 0; i < c->n_confirm; i++) {
		if (c->confirm[i].entry != entry)
			continue;
		has_pattern = 1;
		for (uint32_t k = 0; k < n; k++)
			if (counts(c, nodes[k], 0) && c->confirm[i].match_of[nodes[k]] != NONE)
				return 1;
	}
	return !has_pattern;
}

/* Distinct matches of f in k's instances that lie in one module; those that
 * cross a module boundary (an inlined graph) added to *crossing. */
static uint32_t matches_in(const struct ctx *c, struct fs_confirm *f, const struct fs_candidate *k, uint32_t *crossing)
{
	uint32_t found = 0, now = ++f->stamp_now;
	for (uint32_t i = 0; i < k->n_instances; i++) {
		const struct fs_region *r = &c->m->regions[k->instances[i]];
		for (uint32_t j = 0; j < r->n_nodes; j++) {
			uint32_t id = f->match_of[r->nodes[j]];
			if (id != NONE && f->stamp[id] != now) {
				f->stamp[id] = now;
				*(f->crossing[id] ? crossing : &found) += 1;
			}
		}
	}
	return found;
}

/* Every variant of the pattern counts under its name (one library entry a
 * variant): the matches of all of them. */
void fs_mine_pattern_count(struct ctx *c, struct fs_candidate *k)
{
	const struct fs_patlib *lib = c->o->cat ? c->o->cat->confirm : NULL;
	const char *name = NULL;
	k->pattern = -1;
	k->pattern_matches = k->pattern_crossing = 0;
	for (uint32_t i = 0; lib && i < c->n_confirm && k->entry >= 0; i++) {
		struct fs_confirm *f = &c->confirm[i];
		if (f->entry != k->entry || (name && strcmp(lib->v[f->pattern].name, name)))
			continue;
		if (!name) {
			name = lib->v[f->pattern].name;
			k->pattern = (int32_t)f->pattern;
		}
		k->pattern_matches += matches_in(c, f, k, &k->pattern_crossing);
	}
}
