/*
 * graph.c: what is computed once a graph's nodes are all read: the users of
 * every node in CSR form (a consumer that reads a value twice counts once)
 * and use counts with side-effect-only consumers told apart, which is what
 * fusion legality asks ("is this intermediate used by anything real?").
 */
#include "scan_int.h"

#include <stdlib.h>
#include <string.h>

/* Calls fn(g, user, used) for each distinct node that `user` reads. */
static void for_each_input(struct fs_graph *g, uint32_t user, uint32_t *last,
			   void (*fn)(struct fs_graph *, uint32_t, uint32_t))
{
	const struct fs_node *n = &g->nodes[user];
	for (uint32_t a = n->args; a < n->args + n->n_args; a++) {
		if (g->args[a].kind != FS_ARG_NODE)
			continue;
		uint32_t used = g->args[a].node;
		if (last[used] == user + 1)
			continue;
		last[used] = user + 1;
		fn(g, user, used);
	}
}

static void count_use(struct fs_graph *g, uint32_t user, uint32_t used)
{
	g->nodes[used].n_users++;
	if (!(g->nodes[user].flags & FS_NODE_SIDE_EFFECT))
		g->nodes[used].n_real_users++;
}

static void fill_use(struct fs_graph *g, uint32_t user, uint32_t used)
{
	struct fs_node *u = &g->nodes[used];
	g->users[u->users + u->n_users++] = user;
}

void fs_graph_finish(struct fs_graph *g)
{
	uint32_t *last = fs_xcalloc(g->n_nodes + 1, sizeof(*last));
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].kind == FS_NODE_CALL)
			for_each_input(g, i, last, count_use);
	uint32_t total = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		g->nodes[i].users = total;
		total += g->nodes[i].n_users;
		g->nodes[i].n_users = 0;
	}
	g->users = fs_xmalloc((total ? total : 1) * sizeof(*g->users));
	memset(last, 0, (g->n_nodes + 1) * sizeof(*last));
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].kind == FS_NODE_CALL)
			for_each_input(g, i, last, fill_use);
	free(last);
}

void fs_graph_free(struct fs_graph *g)
{
	if (!g)
		return;
	free(g->nodes);
	free(g->args);
	free(g->types);
	free(g->users);
	free(g->outputs);
	free(g->origin);
	free(g);
}

uint32_t fs_dumpfile_nodes(const struct fs_scan *s, const struct fs_dumpfile *f)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_modules; i++)
		n += s->modules[f->first_module + i].graph->n_calls;
	return n;
}

/* Identical bodies share one graph, so pointer equality is content equality. */
int fs_dumpfiles_identical(const struct fs_scan *s, const struct fs_dumpfile *a,
			   const struct fs_dumpfile *b)
{
	if (a->n_modules != b->n_modules || !a->n_modules || a->n_errors || b->n_errors)
		return 0;
	for (uint32_t i = 0; i < a->n_modules; i++)
		if (s->modules[a->first_module + i].graph != s->modules[b->first_module + i].graph)
			return 0;
	return 1;
}

uint32_t *fs_dumpfile_op_counts(const struct fs_scan *s, const struct fs_dumpfile *f)
{
	uint32_t *h = fs_xcalloc(s->n_ops + 1, sizeof(uint32_t));
	for (uint32_t mi = f->first_module; mi < f->first_module + f->n_modules; mi++) {
		const struct fs_graph *g = s->modules[mi].graph;
		for (uint32_t i = 0; i < g->n_nodes; i++)
			if (g->nodes[i].kind == FS_NODE_CALL)
				h[g->nodes[i].op]++;
	}
	return h;
}
