/*
 * region.h: the unit tests' region: every call node of a dump text, as one
 * program bound at `tokens` (fuse/prog.h), the scan it reads kept beside it.
 *
 *   struct region r;
 *   region_build(&r, text, 16, 0);   // r.rc: fs_prog_build's
 *   ... r.p ...
 *   region_release(&r);
 */
#ifndef FUSESCAN_TEST_REGION_H
#define FUSESCAN_TEST_REGION_H

#include "../../fuse/prog.h"
#include "fusescan/scan.h"

#include <stdlib.h>
#include <string.h>

struct region {
	struct fs_scan *s;
	struct prog p;
	int rc;
};

static void region_build(struct region *r, const char *text, int64_t tokens, int gelu_tanh)
{
	r->s = fs_scan_new();
	fs_scan_buffer(r->s, "region.txt", text, strlen(text));
	const struct fs_graph *g = r->s->modules[0].graph;
	uint32_t *nodes = calloc(g->n_nodes + 1, sizeof(*nodes)), n = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].kind == FS_NODE_CALL)
			nodes[n++] = i;
	struct fs_diags d;
	fs_diags_init(&d);
	r->p = (struct prog){.s = r->s, .g = g, .gelu_tanh = gelu_tanh};
	r->rc = fs_prog_build(&r->p, nodes, n, tokens, &d);
	fs_diags_release(&d);
	free(nodes);
}

static void region_release(struct region *r)
{
	fs_prog_free(&r->p);
	fs_scan_free(r->s);
}

#endif
